/* Step programs (see program.h). */
#include "engine/program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cpu.h"
#include "runtime/error.h"
#include "runtime/pool.h"
#include "runtime/profile.h"
#include "tensor/dtype.h"

struct og_prog_tmp {
    aclTensor t; // the temporary's description (data NULL: it lives in the workspace)
    uint64_t offset;
};

static uint64_t align64(uint64_t bytes) { return (bytes + 63) / 64 * 64; }

void og_prog_init(og_prog *p, const og_opdesc *op, int nin, int nout, const aclTensor *const *io) {
    *p = (og_prog){.op = op,
                   .nin = nin,
                   .nout = nout,
                   .io = io,
                   .status = ACLNN_SUCCESS,
                   .t0_us = og_profile_on() ? og_profile_phase1_t0(op) : 0};
}

// The profiler's note of a program about to be published (NULL when not profiling): its io, and
// the FLOPs of its GEMM steps (2 M N K per batch).
static struct og_profile_note *profile_note(const og_prog *p) {
    if (p->t0_us == 0 || !og_profile_on()) return NULL;
    double flops = 0;
    for (int s = 0; s < p->nsteps; s++)
        if (p->steps[s].kind == OG_STEP_GEMM) {
            const og_gemm_plan *g = &p->steps[s].plan.gemm;
            flops += 2.0 * (double)g->op.M * (double)g->op.N * (double)g->op.K *
                     (double)(g->nbatches > 0 ? g->nbatches : 1);
        }
    return og_profile_note_new(p->io, p->nin, p->nin + p->nout, flops, p->t0_us);
}

void og_prog_note(og_prog *p, const char *what) {
    size_t n = strlen(p->algorithm);
    snprintf(p->algorithm + n, sizeof p->algorithm - n, "%s%s", n ? "; " : "", what);
}

static void fail(og_prog *p, aclnnStatus st, const char *what) {
    if (p->status != ACLNN_SUCCESS) return;
    p->status = og_fail(st, "%sGetWorkspaceSize: %s", p->op->name, what);
}

// Room for one more element in a growing array; false (and the builder failed) when out of memory.
static bool grow(og_prog *p, void **items, int count, int *cap, size_t size) {
    if (count < *cap) return true;
    int want = *cap ? 2 * *cap : 4;
    void *bigger = realloc(*items, (size_t)want * size);
    if (!bigger) {
        fail(p, ACLNN_ERR_INNER, "out of memory building the executor's program");
        return false;
    }
    *items = bigger;
    *cap = want;
    return true;
}

int og_prog_temp(og_prog *p, aclDataType dt, int ndim, const int64_t *dims, const aclTensor **t) {
    if (p->status != ACLNN_SUCCESS) return -1;
    if (ndim < 0 || ndim > OG_MAX_DIMS) {
        fail(p, ACLNN_ERR_INNER, "internal: a temporary of more than 8 dims");
        return -1;
    }
    if (!grow(p, (void **)&p->temps, p->ntemps, &p->temps_cap, sizeof *p->temps)) return -1;
    og_prog_tmp *tmp = calloc(1, sizeof *tmp);
    if (!tmp) {
        fail(p, ACLNN_ERR_INNER, "out of memory building the executor's program");
        return -1;
    }
    tmp->t = (aclTensor){.dtype = dt, .format = ACL_FORMAT_ND, .ndim = ndim, .numel = 1};
    for (int d = ndim - 1; d >= 0; d--) {
        tmp->t.dims[d] = dims[d];
        tmp->t.strides[d] = tmp->t.numel;
        tmp->t.numel *= dims[d];
    }
    tmp->offset = p->temp_bytes;
    p->temp_bytes += align64((uint64_t)tmp->t.numel * aclDataTypeSize(dt));
    p->temps[p->ntemps] = tmp;
    *t = &tmp->t;
    return p->nin + p->nout + p->ntemps++;
}

// A new step, or NULL (the builder failed).
static og_step *new_step(og_prog *p, og_step_kind kind) {
    if (p->status != ACLNN_SUCCESS) return NULL;
    if (!grow(p, (void **)&p->steps, p->nsteps, &p->steps_cap, sizeof *p->steps)) return NULL;
    og_step *s = &p->steps[p->nsteps++];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    return s;
}

// Every slot a step names must be a user slot or a temporary of this program.
static bool slots_ok(og_prog *p, const int *slots, int n) {
    int nslots = p->nin + p->nout + p->ntemps;
    for (int k = 0; k < n; k++)
        if (slots[k] < 0 || slots[k] >= nslots) {
            fail(p, ACLNN_ERR_INNER, "internal: a step names a slot outside the program");
            return false;
        }
    return true;
}

static void add_scratch(og_prog *p, og_step *s, uint64_t bytes) {
    s->scratch = align64(bytes);
    if (s->scratch > p->scratch_bytes) p->scratch_bytes = s->scratch;
}

void og_prog_map(og_prog *p, const og_ew_op *op) {
    og_step *s = new_step(p, OG_STEP_MAP);
    if (!s) return;
    og_ew_prepare(op, &s->plan.map);
    int slots[OG_EW_MAX_IN + OG_EW_MAX_OUT], n = 0;
    for (int k = 0; k < op->nin; k++) slots[n++] = s->plan.map.in[k].slot;
    for (int k = 0; k < op->nout; k++) slots[n++] = s->plan.map.out[k].slot;
    if (!slots_ok(p, slots, n)) return;
    add_scratch(p, s,
                (uint64_t)s->plan.map.tiling.slots * (uint64_t)s->plan.map.tiling.buffer_bytes);
}

void og_prog_reduce(og_prog *p, const og_reduce_op *op) {
    og_step *s = new_step(p, OG_STEP_REDUCE);
    if (!s) return;
    og_reduce_prepare(op, &s->plan.reduce);
    int slots[OG_RED_MAX_IN + 1], n = 0;
    for (int k = 0; k < op->nin; k++) slots[n++] = op->in_slot[k];
    slots[n++] = op->out_slot;
    if (!slots_ok(p, slots, n)) return;
    add_scratch(p, s, (uint64_t)s->plan.reduce.workspace);
}

void og_prog_rows(og_prog *p, const og_rows_op *op) {
    og_step *s = new_step(p, OG_STEP_ROWS);
    if (!s) return;
    og_rows_make_plan(op, og_num_threads(), og_isa(), &s->plan.rows);
    int slots[OG_ROWS_MAX_IN + OG_ROWS_MAX_OUT + OG_ROWS_MAX_STATS + OG_ROWS_MAX_ACC], n = 0;
    for (int k = 0; k < op->nin; k++) slots[n++] = op->in_slot[k];
    for (int k = 0; k < op->nout; k++) slots[n++] = op->out_slot[k];
    for (int k = 0; k < op->nstats; k++) slots[n++] = op->stats_slot[k];
    for (int k = 0; k < op->nacc; k++) slots[n++] = op->acc_slot[k];
    if (!slots_ok(p, slots, n)) return;
    add_scratch(p, s, (uint64_t)s->plan.rows.slots * (uint64_t)s->plan.rows.slot_bytes);
}

void og_prog_gemm(og_prog *p, const og_gemm_op *op) {
    og_step *s = new_step(p, OG_STEP_GEMM);
    if (!s) return;
    if (!og_gemm_make_plan(op, og_num_threads(), og_isa(), &s->plan.gemm)) {
        fail(p, ACLNN_ERR_PARAM_INVALID, "the matrix product's workspace would overflow 64 bits");
        return;
    }
    const og_gemm_mat *mats[] = {&op->a, &op->b, &op->c, &op->d, &op->e, &op->f, &op->c2};
    int slots[7], n = 0;
    for (int k = 0; k < 7; k++)
        if (mats[k]->present) slots[n++] = mats[k]->slot;
    if (!slots_ok(p, slots, n)) return;
    add_scratch(p, s, og_gemm_scratch_bytes(&s->plan.gemm));
}

void og_prog_custom(og_prog *p, og_custom_fn fn, const void *params, size_t params_size,
                    const int *slots, int nslots, uint64_t scratch) {
    void *heap = NULL;
    if (params_size > OG_CUSTOM_MAX_PARAMS && !(heap = malloc(params_size))) {
        fail(p, ACLNN_ERR_INNER_CREATE_EXECUTOR, "out of memory for a step's parameters");
        return;
    }
    og_step *s = new_step(p, OG_STEP_CUSTOM);
    if (!s) {
        free(heap);
        return;
    }
    s->plan.custom.run = fn;
    s->plan.custom.heap = heap;
    if (params_size) memcpy(heap ? heap : s->plan.custom.params, params, params_size);
    if (!slots_ok(p, slots, nslots)) return;
    add_scratch(p, s, scratch);
}

void og_prog_free_steps(og_step *steps, int nsteps) {
    for (int s = 0; s < nsteps; s++)
        if (steps[s].kind == OG_STEP_CUSTOM) free(steps[s].plan.custom.heap);
}

void og_prog_discard(og_prog *p) {
    og_prog_free_steps(p->steps, p->nsteps);
    for (int t = 0; t < p->ntemps; t++) free(p->temps[t]);
    free(p->temps);
    free(p->steps);
    p->temps = NULL, p->steps = NULL;
    p->ntemps = p->nsteps = 0;
}

aclnnStatus og_prog_publish(og_prog *p, uint64_t *workspaceSize, aclOpExecutor **executor) {
    if (p->status != ACLNN_SUCCESS) {
        og_prog_discard(p);
        return p->status;
    }
    aclOpExecutor *e = og_executor_new(p->op, p->nin, p->nout, p->ntemps, p->nsteps);
    if (!e) {
        og_prog_discard(p);
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    for (int s = 0; s < p->nin + p->nout; s++)
        if (p->io[s]) og_executor_bind(e, s, p->io[s]);
    if (p->nsteps) memcpy(og_executor_steps(e), p->steps, (size_t)p->nsteps * sizeof *p->steps);
    memcpy(e->algorithm, p->algorithm, sizeof e->algorithm);
    e->profile = profile_note(p);
    uint64_t *offsets = og_executor_temp_offsets(e);
    for (int t = 0; t < p->ntemps; t++) offsets[t] = p->temps[t]->offset;
    e->scratch_offset = p->temp_bytes;
    e->workspace_size = p->nsteps ? p->temp_bytes + p->scratch_bytes : 0;
    p->nsteps = 0; // the executor owns the steps' heap parameters now
    og_prog_discard(p);
    return og_executor_publish(e, workspaceSize, executor);
}

static bool same_layout(const aclTensor *a, const aclTensor *b) {
    if (og_tensor_first(a) != og_tensor_first(b) || a->dtype != b->dtype || a->ndim != b->ndim)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->dims[d] != b->dims[d] || (a->dims[d] > 1 && a->strides[d] != b->strides[d]))
            return false;
    return true;
}

aclnnStatus og_check_io_memory(const og_opdesc *op, int nin, const aclTensor *const *in, int nout,
                               const aclTensor *const *out, const char *const *names) {
    for (int k = 0; k < nin + nout; k++) {
        const aclTensor *t = k < nin ? in[k] : out[k - nin];
        if (!t->data)
            return og_fail(ACLNN_ERR_PARAM_NULLPTR,
                           "%sGetWorkspaceSize: %s has no data (NULL address)", op->name, names[k]);
    }
    for (int j = 0; j < nout; j++) {
        const aclTensor *o = out[j];
        // An output may not write one memory location twice.
        int bad_dim = og_tensor_self_overlap_dim(o);
        if (bad_dim >= 0)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: %s dim %d (size %lld, stride %lld) makes several "
                           "elements share one memory location, which an output may not do",
                           op->name, names[nin + j], bad_dim, (long long)o->dims[bad_dim],
                           (long long)o->strides[bad_dim]);
        for (int k = 0; k < nin + nout; k++) {
            if (k >= nin && k - nin <= j) continue; // itself; earlier outputs checked this one
            const aclTensor *t = k < nin ? in[k] : out[k - nin];
            if (!og_tensors_overlap(o, t)) continue;
            // Two outputs in one place: one would overwrite the other.
            if (k >= nin)
                return og_fail(ACLNN_ERR_PARAM_INVALID,
                               "%sGetWorkspaceSize: %s and %s share memory: each output needs "
                               "its own",
                               op->name, names[nin + j], names[k]);
            if (!same_layout(o, t))
                return og_fail(
                    ACLNN_ERR_PARAM_INVALID,
                    "%sGetWorkspaceSize: %s overlaps %s with a different layout: an "
                    "output may share memory with another tensor only element for element",
                    op->name, names[nin + j], names[k]);
        }
    }
    return ACLNN_SUCCESS;
}

void og_program_run(const aclOpExecutor *e, char *workspace) {
    char *scratch = workspace ? workspace + e->scratch_offset : NULL;
    for (int i = 0; i < e->nsteps; i++) {
        const og_step *s = &e->steps[i];
        switch (s->kind) {
        case OG_STEP_MAP:
            og_ew_run(e, &s->plan.map, scratch);
            break;
        case OG_STEP_REDUCE:
            og_reduce_run(e, &s->plan.reduce, scratch);
            break;
        case OG_STEP_ROWS:
            og_rows_run(e, &s->plan.rows, scratch);
            break;
        case OG_STEP_GEMM:
            og_gemm_run(e, &s->plan.gemm, scratch);
            break;
        case OG_STEP_CUSTOM:
            s->plan.custom.run(e, s->plan.custom.heap ? s->plan.custom.heap : s->plan.custom.params,
                               scratch);
            break;
        }
    }
}
