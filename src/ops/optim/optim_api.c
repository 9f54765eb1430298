/* aclnnApplyAdamW, aclnnApplyAdamWV2, aclnnFusedAdamw, aclnnFusedSgd: argument checks and plans
 * (ops-nn optim/).
 *
 * Each parameter tensor is one CUSTOM step (engine/program.h: no engine updates several tensors
 * in place from per-launch scalars such as the step counter, gradScale and foundInf, which are
 * read in phase 2). A step splits its elements into fixed chunks of OPT_CHUNK over the threads;
 * each chunk reads every tensor once and writes the updated ones once (fp32 contiguous tensors
 * in place, others widened into per-thread fp32 buffers and rounded once on store), so results
 * do not depend on the thread count.
 *
 * The step counter: t = step + 1 (both upstream kernels add one; the step tensors are never
 * written). The constants lr / (1 - beta1^t), 1 / sqrt(1 - beta2^t) and 1 - lr * weightDecay are
 * computed in double and rounded once to fp32. FusedAdamw skips the update when foundInf is 1
 * (upstream's test: the flag aclnnForeachNonFiniteCheckAndUnscale writes); gradScale divides
 * the gradients. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_apply_adam_w.h"
#include "aclnnop/aclnn_apply_adam_w_v2.h"
#include "aclnnop/aclnn_fused_adamw.h"
#include "aclnnop/aclnn_fused_sgd.h"
#include "engine/convert.h"
#include "engine/isa_table.h"
#include "engine/program.h"
#include "ops/common/checks.h"
#include "ops/common/view_index.h"
#include "ops/optim/optim_kernel.h"
#include "runtime/cpu.h"
#include "runtime/pool.h"

const og_adam_fn og_adam_step_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_adam_step);
const og_sgd_fn og_sgd_step_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_sgd_step);

// Elements per parallel unit: 5 fp32 buffers of it stay in L1/L2 next to the data.
#define OPT_CHUNK 4096
#define OPT_MAXT 5 // tensors one step touches: p, g, m, v, vmax (SGD: p, g, buf)

typedef enum { OPT_ADAM, OPT_SGD } opt_kind;

typedef struct opt_plan {
    opt_kind kind;
    int nt;                 // tensors: Adam p, g, m, v[, vmax]; SGD p, g[, buf]
    og_view view[OPT_MAXT]; // their layouts
    int slot[OPT_MAXT];     // their slots
    bool write[OPT_MAXT];   // written back
    int step_slot;          // Adam: the step tensor (INT64 or FLOAT, element 0)
    aclDataType step_dtype;
    int scale_slot, inf_slot; // gradScale / foundInf (FLOAT, one element), -1 if none
    // ApplyAdamW: its hyperparameters are one-element tensors of var's dtype, read in phase 2:
    // beta1Power, beta2Power (beta^(t-1)), lr, weightDecay, beta1, beta2, eps; -1: none
    int hyper_slot[7];
    aclDataType hyper_dtype;
    double lr, beta1, beta2, weight_decay, eps;
    bool amsgrad, maximize, lerp;
    og_sgd_coef sgd; // SGD: complete but for has_scale / grad_scale (phase 2)
    int64_t n;
    int64_t unit0; // its first parallel unit in the step
    opgrad_isa isa;
    int threads;
} opt_plan;

// One CUSTOM step for every tensor of an operator: the units are the tensors' chunks, in list
// order, so a list of many small tensors costs one dispatch (flexible array: count plans).
typedef struct opt_group {
    int count;
    int64_t units;
    opt_plan t[];
} opt_group;

typedef struct opt_ctx {
    const opt_group *g;
    const aclOpExecutor *e;
    const og_convert_table *cv;
    char *scratch;
    bool has_scale;
    float scale;
} opt_ctx;

static float read_f32(const aclOpExecutor *e, int slot) {
    float f;
    memcpy(&f, og_executor_addr(e, slot), sizeof f);
    return f;
}

// Tensor p's update constants at this launch (its step counter, the hyperparameter tensors).
static void adam_coef(const aclOpExecutor *e, const opt_plan *p, bool has_scale, float scale,
                      og_adam_coef *c) {
    if (p->hyper_slot[0] >= 0) {
        // ApplyAdamW: beta^t = betaPower * beta (the powers hold beta^(t-1))
        double h[7];
        for (int k = 0; k < 7; k++)
            h[k] = og_load_elem(og_executor_addr(e, p->hyper_slot[k]), p->hyper_dtype);
        double lr = h[2], wd = h[3], b1 = h[4], b2 = h[5];
        *c = (og_adam_coef){.grad_scale = 1,
                            .decay = (float)(1 - lr * wd),
                            .beta1 = (float)b1,
                            .one_minus_beta1 = (float)(1 - b1),
                            .beta2 = (float)b2,
                            .one_minus_beta2 = (float)(1 - b2),
                            .step_size = (float)(lr / (1 - h[0] * b1)),
                            .inv_bc2_sqrt = (float)(1 / sqrt(1 - h[1] * b2)),
                            .eps = (float)h[6],
                            .maximize = p->maximize,
                            .amsgrad = p->amsgrad};
        return;
    }
    const char *s = og_executor_addr(e, p->step_slot);
    double step;
    if (p->step_dtype == ACL_INT64) {
        int64_t i;
        memcpy(&i, s, sizeof i);
        step = (double)i;
    } else {
        float f;
        memcpy(&f, s, sizeof f);
        step = f;
    }
    double t = step + 1; // upstream: the kernels count this update
    double bc1 = 1 - pow(p->beta1, t), bc2 = 1 - pow(p->beta2, t);
    *c = (og_adam_coef){.grad_scale = scale,
                        .decay = (float)(1 - p->lr * p->weight_decay),
                        .beta1 = (float)p->beta1,
                        .one_minus_beta1 = (float)(1 - p->beta1),
                        .beta2 = (float)p->beta2,
                        .one_minus_beta2 = (float)(1 - p->beta2),
                        .step_size = (float)(p->lr / bc1),
                        .inv_bc2_sqrt = (float)(1 / sqrt(bc2)),
                        .eps = (float)p->eps,
                        .has_scale = has_scale,
                        .maximize = p->maximize,
                        .amsgrad = p->amsgrad,
                        .lerp = p->lerp};
}

// Whether tensor k is updated in place (fp32, contiguous) rather than through a buffer. The
// kernel writes vmax; ApplyAdamW's maxGradNorm is read-only, so it goes through the buffer.
static bool direct_of(const opt_plan *p, int k) {
    bool readonly_vmax = p->kind == OPT_ADAM && k == 4 && !p->write[k];
    return p->view[k].dtype == ACL_FLOAT && p->view[k].contiguous && !readonly_vmax;
}

static void opt_unit(void *vctx, int core, int slot) {
    const opt_ctx *c = vctx;
    // the tensor whose chunks hold unit `core` (the last with unit0 <= core)
    int lo = 0, hi = c->g->count - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (c->g->t[mid].unit0 <= core)
            lo = mid;
        else
            hi = mid - 1;
    }
    const opt_plan *p = &c->g->t[lo];
    int64_t i0 = (core - p->unit0) * OPT_CHUNK, n = p->n - i0;
    if (n > OPT_CHUNK) n = OPT_CHUNK;
    // (no scratch when every tensor is updated in place)
    float *buf = c->scratch
                     ? (float *)(c->scratch + (uint64_t)slot * OPT_MAXT * OPT_CHUNK * sizeof(float))
                     : NULL;
    float *a[OPT_MAXT] = {0};
    char *base[OPT_MAXT];
    bool direct[OPT_MAXT];
    for (int k = 0; k < p->nt; k++) {
        const og_view *v = &p->view[k];
        base[k] = og_executor_addr(c->e, p->slot[k]);
        direct[k] = direct_of(p, k);
        if (direct[k]) {
            a[k] = (float *)base[k] + i0;
            continue;
        }
        a[k] = buf + (size_t)k * OPT_CHUNK;
        if (v->contiguous)
            og_load_run(c->cv, base[k] + i0 * v->esize, v->dtype, 1, a[k], n);
        else
            for (int64_t i = 0; i < n; i++)
                a[k][i] = og_load_elem(base[k] + og_view_offset(v, i0 + i) * v->esize, v->dtype);
    }
    if (p->kind == OPT_ADAM) {
        og_adam_coef coef;
        adam_coef(c->e, p, c->has_scale, c->scale, &coef);
        og_adam_step_kernels[p->isa](a[0], a[1], a[2], a[3], p->nt > 4 ? a[4] : NULL, (size_t)n,
                                     &coef);
    } else {
        og_sgd_coef coef = p->sgd;
        coef.has_scale = c->has_scale;
        coef.grad_scale = c->scale;
        og_sgd_step_kernels[p->isa](a[0], a[1], p->nt > 2 ? a[2] : NULL, (size_t)n, &coef);
    }
    for (int k = 0; k < p->nt; k++) {
        const og_view *v = &p->view[k];
        if (!p->write[k] || direct[k]) continue; // direct: updated in place
        if (v->contiguous)
            og_store_run(c->cv, base[k] + i0 * v->esize, v->dtype, 1, a[k], n, false);
        else
            for (int64_t i = 0; i < n; i++)
                og_store_elem(base[k] + og_view_offset(v, i0 + i) * v->esize, v->dtype, a[k][i]);
    }
}

static void opt_run(const aclOpExecutor *e, const void *params, char *scratch) {
    const opt_group *g = params;
    const opt_plan *p0 = &g->t[0];
    if (p0->inf_slot >= 0 && read_f32(e, p0->inf_slot) == 1.0f) return; // an overflow: skip
    opt_ctx c = {.g = g, .e = e, .cv = &og_convert[p0->isa], .scratch = scratch};
    c.has_scale = p0->scale_slot >= 0;
    c.scale = c.has_scale ? read_f32(e, p0->scale_slot) : 1.0f;
    og_parallel_for((int)g->units, p0->threads, opt_unit, &c);
}

/// The tensors of one operator call, collected into one step.
typedef struct opt_builder {
    opt_plan *t;
    int count, cap;
    bool failed;
} opt_builder;

/// Adds one tensor (its n elements; slots and views set by the caller); empty ones do nothing.
static void add_step(opt_builder *b, const opt_plan *p) {
    if (p->n == 0 || b->failed) return;
    if (b->count == b->cap) {
        int cap = b->cap ? 2 * b->cap : 8;
        opt_plan *t = realloc(b->t, (size_t)cap * sizeof *t);
        if (!t) {
            b->failed = true;
            return;
        }
        b->t = t, b->cap = cap;
    }
    b->t[b->count++] = *p;
}

/// The step of the collected tensors; frees the builder.
static aclnnStatus flush_steps(og_prog *prog, opt_builder *b) {
    aclnnStatus st = ACLNN_SUCCESS;
    size_t bytes = sizeof(opt_group) + (size_t)b->count * sizeof(opt_plan);
    opt_group *g = b->failed || !b->count ? NULL : malloc(bytes);
    int *slots = g ? malloc((size_t)b->count * (OPT_MAXT + 10) * sizeof *slots) : NULL;
    if (b->failed || (b->count && (!g || !slots))) {
        st = og_fail(ACLNN_ERR_INNER, "%sGetWorkspaceSize: out of memory", prog->op->name);
    } else if (b->count) {
        g->count = b->count;
        int64_t units = 0;
        int ns = 0, threads = og_num_threads();
        bool buffered = false; // some tensor goes through the per-thread fp32 buffers
        opgrad_isa isa = og_isa();
        for (int i = 0; i < b->count; i++) {
            opt_plan *p = &g->t[i];
            *p = b->t[i];
            p->isa = isa, p->threads = threads, p->unit0 = units;
            units += (p->n + OPT_CHUNK - 1) / OPT_CHUNK;
            for (int k = 0; k < p->nt; k++) {
                slots[ns++] = p->slot[k];
                buffered |= !direct_of(p, k);
            }
            if (p->kind == OPT_ADAM && p->hyper_slot[0] < 0) slots[ns++] = p->step_slot;
            if (p->kind == OPT_ADAM && p->hyper_slot[0] >= 0)
                for (int k = 0; k < 7; k++) slots[ns++] = p->hyper_slot[k];
            if (p->scale_slot >= 0) slots[ns++] = p->scale_slot;
            if (p->inf_slot >= 0) slots[ns++] = p->inf_slot;
        }
        g->units = units;
        if (units > 0x7fffffff)
            st = og_fail(ACLNN_ERR_PARAM_INVALID,
                         "%sGetWorkspaceSize: %lld chunks of %d elements; at most 2^31 - 1",
                         prog->op->name, (long long)units, OPT_CHUNK);
        else
            og_prog_custom(prog, opt_run, g, bytes, slots, ns,
                           buffered ? (uint64_t)threads * OPT_MAXT * OPT_CHUNK * sizeof(float) : 0);
    }
    free(g);
    free(slots);
    free(b->t);
    return st;
}

// ---- checks -------------------------------------------------------------------------------

#define FN_BUF 96

// A named tensor of the update: live, FLOAT / FLOAT16 / BFLOAT16, rank 0-8.
static aclnnStatus check_state(const og_opdesc *op, const char *name, const aclTensor *t) {
    return og_check_tensor(op, name, t, 0);
}

// `t` has `ref`'s shape, and dtype `dt` (161002).
static aclnnStatus check_like(const og_opdesc *op, const char *name, const aclTensor *t,
                              const char *ref_name, const aclTensor *ref, aclDataType dt) {
    OG_TRY(og_check_same_shape(op, ref_name, ref, name, t));
    if (t->dtype != dt)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has dtype %s; it must be %s (the dtype of %s)",
                       op->name, name, og_dtype_name(t->dtype), og_dtype_name(dt), ref_name);
    return ACLNN_SUCCESS;
}

// A one-element tensor of one of two dtypes (step: INT64 / FLOAT; gradScale, foundInf: FLOAT);
// with `first` any non-empty tensor, of which element 0 is read (FusedAdamw's stateSteps:
// upstream checks no size there, and its example passes [2,2,2] step tensors).
static aclnnStatus check_one_of(const og_opdesc *op, const char *name, const aclTensor *t,
                                aclDataType a, aclDataType b, bool first) {
    char fn[FN_BUF];
    snprintf(fn, sizeof fn, "%sGetWorkspaceSize", op->name);
    OG_TRY(og_check_live(fn, name, t, OG_OBJ_TENSOR));
    if (t->dtype != a && t->dtype != b)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: %s has dtype %s; it must be %s%s%s", fn, name,
                       og_dtype_name(t->dtype), og_dtype_name(a), a != b ? " or " : "",
                       a != b ? og_dtype_name(b) : "");
    if (!t->data) // read in phase 2
        return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: %s has no data (NULL address)", fn, name);
    if (first ? t->numel < 1 : t->numel != 1)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: %s has %lld elements; it must have %s", fn,
                       name, (long long)t->numel, first ? "at least one" : "exactly one");
    return og_check_fits_block(op, name, t);
}

static aclnnStatus check_one(const og_opdesc *op, const char *name, const aclTensor *t,
                             aclDataType a, aclDataType b) {
    return check_one_of(op, name, t, a, b, false);
}

// The hyperparameters upstream refuses: lr, betas, weightDecay below 0 (161002); they must be
// numbers.
static aclnnStatus check_hyper(const og_opdesc *op, const char *name, double x) {
    if (!(x >= 0) || isinf(x))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s is %g; it must be a finite number >= 0", op->name,
                       name, x);
    return ACLNN_SUCCESS;
}

// Written tensors must not overlap any other tensor of the update (nw written, then nr read).
static aclnnStatus check_memory(const og_opdesc *op, int nr, const aclTensor *const *rd,
                                const char *const *rnames, int nw, const aclTensor *const *wr,
                                const char *const *wnames) {
    const char *names[16]; // nr + nw <= 16
    if (nr + nw > 16) return og_fail(ACLNN_ERR_INNER, "%s: too many tensors", op->name);
    for (int k = 0; k < nr; k++) names[k] = rnames[k];
    for (int k = 0; k < nw; k++) names[nr + k] = wnames[k];
    OG_TRY(og_check_io_memory(op, nr, rd, nw, wr, names));
    for (int j = 0; j < nw; j++)
        for (int k = 0; k < nr + nw; k++) {
            const aclTensor *t = k < nr ? rd[k] : wr[k - nr];
            if (k >= nr && k - nr == j) continue;
            if (og_tensors_overlap(wr[j], t))
                return og_fail(ACLNN_ERR_PARAM_INVALID,
                               "%sGetWorkspaceSize: %s shares memory with %s; an optimizer's "
                               "tensors must be distinct",
                               op->name, wnames[j], names[k]);
        }
    return ACLNN_SUCCESS;
}

// ---- fast paths for long lists ----------------------------------------------------------
// The named checks format a message name per tensor; a list of thousands of tensors checks each
// with these predicates first, and runs the named checks (which then fail with their message)
// only where one says no. Each predicate implies its named checks pass.

static bool is_float_dt(aclDataType dt) {
    return dt == ACL_FLOAT || dt == ACL_FLOAT16 || dt == ACL_BF16;
}

// t (live: og_check_tensor_list) has dtype dt (a float dtype), rank <= 8 and ref's shape.
static bool quick_like(const aclTensor *t, const aclTensor *ref, aclDataType dt) {
    if (t->dtype != dt || !is_float_dt(dt) || t->ndim > OG_MAX_DIMS || t->ndim != ref->ndim)
        return false;
    for (int d = 0; d < t->ndim; d++)
        if (t->dims[d] != ref->dims[d]) return false;
    return true;
}

// Every tensor has data, no written one writes an address twice or overlaps another.
static bool quick_memory(int nr, const aclTensor *const *rd, int nw, const aclTensor *const *wr) {
    for (int k = 0; k < nr + nw; k++)
        if (!(k < nr ? rd[k] : wr[k - nr])->data) return false;
    for (int j = 0; j < nw; j++) {
        if (og_tensor_self_overlap_dim(wr[j]) >= 0) return false;
        for (int k = 0; k < nr + nw; k++) {
            if (k == nr + j) continue;
            if (og_tensors_overlap(wr[j], k < nr ? rd[k] : wr[k - nr])) return false;
        }
    }
    return true;
}

// ---- aclnnApplyAdamWV2 --------------------------------------------------------------------

aclnnStatus aclnnApplyAdamWV2GetWorkspaceSize(aclTensor *varRef, aclTensor *mRef, aclTensor *vRef,
                                              aclTensor *maxGradNormOptionalRef,
                                              const aclTensor *grad, const aclTensor *step,
                                              float lr, float beta1, float beta2, float weightDecay,
                                              float eps, bool amsgrad, bool maximize,
                                              uint64_t *workspaceSize, aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_ApplyAdamWV2;
    aclTensor *vmax = amsgrad ? maxGradNormOptionalRef : NULL; // read only with amsgrad
    {
        const char *names[] = {"varRef", "mRef", "vRef", "grad", "step"};
        const void *ptrs[] = {varRef, mRef, vRef, grad, step};
        OG_TRY(og_check_args(op, workspaceSize, executor, 5, names, ptrs));
        // every handle given is live before any other rule (a destroyed one is 161002 whatever
        // else is wrong), the optional one too, read or not
        char fn[FN_BUF];
        snprintf(fn, sizeof fn, "%sGetWorkspaceSize", op->name);
        for (int k = 0; k < 5; k++) OG_TRY(og_check_live(fn, names[k], ptrs[k], OG_OBJ_TENSOR));
        if (maxGradNormOptionalRef) { // its view fits its block even when it is not read
            OG_TRY(
                og_check_live(fn, "maxGradNormOptionalRef", maxGradNormOptionalRef, OG_OBJ_TENSOR));
            OG_TRY(og_check_fits_block(op, "maxGradNormOptionalRef", maxGradNormOptionalRef));
        }
    }
    OG_TRY(check_state(op, "varRef", varRef));
    OG_TRY(check_state(op, "mRef", mRef));
    OG_TRY(check_state(op, "vRef", vRef));
    OG_TRY(check_state(op, "grad", grad));
    OG_TRY(check_one(op, "step", step, ACL_INT64, ACL_FLOAT));
    // the optional tensor amsgrad requires: 161001 when NULL, after the other tensors' checks (a
    // destroyed handle among them is 161002 whatever else is missing)
    if (amsgrad && !vmax)
        return og_fail(ACLNN_ERR_PARAM_NULLPTR,
                       "%sGetWorkspaceSize: maxGradNormOptionalRef is NULL; amsgrad needs it",
                       op->name);
    if (vmax) OG_TRY(check_state(op, "maxGradNormOptionalRef", vmax));
    // One dtype for all, or (upstream's mixed precision) FLOAT var/m/v with a FLOAT16 / BFLOAT16
    // grad and maxGradNorm.
    aclDataType dt = varRef->dtype, gdt = grad->dtype;
    if (dt != gdt && !(dt == ACL_FLOAT && (gdt == ACL_FLOAT16 || gdt == ACL_BF16)))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: grad has dtype %s and varRef %s; they must be equal, "
                       "or varRef float32 with a float16 / bfloat16 grad",
                       op->name, og_dtype_name(gdt), og_dtype_name(dt));
    OG_TRY(check_like(op, "mRef", mRef, "varRef", varRef, dt));
    OG_TRY(check_like(op, "vRef", vRef, "varRef", varRef, dt));
    OG_TRY(og_check_same_shape(op, "varRef", varRef, "grad", grad));
    if (vmax) OG_TRY(check_like(op, "maxGradNormOptionalRef", vmax, "grad", grad, gdt));
    OG_TRY(check_hyper(op, "lr", lr));
    OG_TRY(check_hyper(op, "beta1", beta1));
    OG_TRY(check_hyper(op, "beta2", beta2));
    OG_TRY(check_hyper(op, "weightDecay", weightDecay));
    if (!isfinite(eps))
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%sGetWorkspaceSize: eps is %g; it must be finite",
                       op->name, (double)eps);
    {
        const aclTensor *rd[] = {grad, step}, *wr[] = {varRef, mRef, vRef, vmax};
        const char *rn[] = {"grad", "step"},
                   *wn[] = {"varRef", "mRef", "vRef", "maxGradNormOptionalRef"};
        if (varRef->numel > 0) // an empty update touches no memory
            OG_TRY(check_memory(op, 2, rd, rn, vmax ? 4 : 3, wr, wn));
    }
    // slots (ops.inc's rule: refs as inputs, then again as outputs): inputs 0 varRef, 1 mRef,
    // 2 vRef, 3 maxGradNormOptionalRef, 4 grad, 5 step; outputs 6 varRef, 7 mRef, 8 vRef,
    // 9 maxGradNormOptionalRef
    const aclTensor *io[] = {varRef, mRef, vRef, vmax, grad, step, varRef, mRef, vRef, vmax};
    og_prog prog;
    og_prog_init(&prog, op, 6, 4, io);
    opt_plan p;
    memset(&p, 0, sizeof p);
    p.kind = OPT_ADAM;
    p.hyper_slot[0] = -1;
    p.nt = vmax ? 5 : 4;
    const aclTensor *ts[] = {varRef, grad, mRef, vRef, vmax};
    const int sl[] = {6, 4, 7, 8, 9};
    for (int k = 0; k < p.nt; k++) {
        og_view_of(&p.view[k], ts[k]);
        p.slot[k] = sl[k];
        p.write[k] = k != 1;
    }
    p.step_slot = 5;
    p.step_dtype = step->dtype;
    p.scale_slot = p.inf_slot = -1;
    p.lr = lr, p.beta1 = beta1, p.beta2 = beta2, p.weight_decay = weightDecay, p.eps = eps;
    p.amsgrad = amsgrad, p.maximize = maximize, p.lerp = true;
    p.n = varRef->numel;
    opt_builder b = {0};
    add_step(&b, &p);
    aclnnStatus st = flush_steps(&prog, &b);
    if (st != ACLNN_SUCCESS) {
        og_prog_discard(&prog);
        return st;
    }
    return og_prog_publish(&prog, workspaceSize, executor);
}

// ---- aclnnApplyAdamW ----------------------------------------------------------------------

aclnnStatus aclnnApplyAdamWGetWorkspaceSize(
    aclTensor *varRef, aclTensor *mRef, aclTensor *vRef, const aclTensor *beta1Power,
    const aclTensor *beta2Power, const aclTensor *lr, const aclTensor *weightDecay,
    const aclTensor *beta1, const aclTensor *beta2, const aclTensor *eps, const aclTensor *grad,
    const aclTensor *maxGradNormOptional, bool amsgrad, bool maximize, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_ApplyAdamW;
    const aclTensor *vmax = amsgrad ? maxGradNormOptional : NULL; // read only with amsgrad
    static const char *const hnames[7] = {"beta1Power", "beta2Power", "lr", "weightDecay",
                                          "beta1",      "beta2",      "eps"};
    const aclTensor *hs[7] = {beta1Power, beta2Power, lr, weightDecay, beta1, beta2, eps};
    {
        const char *names[] = {"varRef",     "mRef", "vRef",        "beta1Power",
                               "beta2Power", "lr",   "weightDecay", "beta1",
                               "beta2",      "eps",  "grad",        "maxGradNormOptional"};
        const void *ptrs[] = {varRef,      mRef,  vRef,  beta1Power, beta2Power, lr,
                              weightDecay, beta1, beta2, eps,        grad,       vmax};
        OG_TRY(og_check_args(op, workspaceSize, executor, 11, names, ptrs));
        // every handle given is live before any other rule (a destroyed one is 161002 whatever
        // else is wrong, e.g. a hyperparameter before it without data), the optional one too
        char fn[FN_BUF];
        snprintf(fn, sizeof fn, "%sGetWorkspaceSize", op->name);
        for (int k = 0; k < 11; k++) OG_TRY(og_check_live(fn, names[k], ptrs[k], OG_OBJ_TENSOR));
        if (maxGradNormOptional)
            OG_TRY(og_check_live(fn, "maxGradNormOptional", maxGradNormOptional, OG_OBJ_TENSOR));
    }
    OG_TRY(check_state(op, "varRef", varRef));
    aclDataType dt = varRef->dtype;
    OG_TRY(check_state(op, "mRef", mRef));
    OG_TRY(check_like(op, "mRef", mRef, "varRef", varRef, dt));
    OG_TRY(check_state(op, "vRef", vRef));
    OG_TRY(check_like(op, "vRef", vRef, "varRef", varRef, dt));
    OG_TRY(check_state(op, "grad", grad));
    OG_TRY(check_like(op, "grad", grad, "varRef", varRef, dt));
    // the hyperparameters: one element each, of var's dtype
    for (int k = 0; k < 7; k++) OG_TRY(check_one(op, hnames[k], hs[k], dt, dt));
    // the optional tensor amsgrad requires: 161001 when NULL, after the other tensors' checks (a
    // destroyed handle among them is 161002 whatever else is missing)
    if (amsgrad && !vmax)
        return og_fail(ACLNN_ERR_PARAM_NULLPTR,
                       "%sGetWorkspaceSize: maxGradNormOptional is NULL; amsgrad needs it",
                       op->name);
    if (vmax) {
        OG_TRY(check_state(op, "maxGradNormOptional", vmax));
        OG_TRY(check_like(op, "maxGradNormOptional", vmax, "varRef", varRef, dt));
    }
    if (!amsgrad && maxGradNormOptional) { // not read, but a live handle whose view fits its block
        char fn[FN_BUF];
        snprintf(fn, sizeof fn, "%sGetWorkspaceSize", op->name);
        OG_TRY(og_check_live(fn, "maxGradNormOptional", maxGradNormOptional, OG_OBJ_TENSOR));
        OG_TRY(og_check_fits_block(op, "maxGradNormOptional", maxGradNormOptional));
    }
    {
        const aclTensor *rd[9] = {grad, vmax ? vmax : grad}, *wr[] = {varRef, mRef, vRef};
        const char *rn[9] = {"grad", vmax ? "maxGradNormOptional" : "grad"};
        for (int k = 0; k < 7; k++) rd[2 + k] = hs[k], rn[2 + k] = hnames[k];
        const char *wn[] = {"varRef", "mRef", "vRef"};
        if (varRef->numel > 0) // an empty update touches no memory
            OG_TRY(check_memory(op, 9, rd, rn, 3, wr, wn));
    }
    // slots (ops.inc's rule): inputs 0 varRef, 1 mRef, 2 vRef, 3-9 the hyperparameters, 10 grad,
    // 11 maxGradNormOptional; outputs 12 varRef, 13 mRef, 14 vRef
    const aclTensor *io[] = {varRef, mRef, vRef, beta1Power, beta2Power, lr,   weightDecay, beta1,
                             beta2,  eps,  grad, vmax,       varRef,     mRef, vRef};
    og_prog prog;
    og_prog_init(&prog, op, 12, 3, io);
    opt_plan p;
    memset(&p, 0, sizeof p);
    p.kind = OPT_ADAM;
    p.nt = vmax ? 5 : 4;
    const int sl[] = {12, 10, 13, 14, 11};
    for (int k = 0; k < p.nt; k++) {
        og_view_of(&p.view[k], io[sl[k]]);
        p.slot[k] = sl[k];
        p.write[k] = k != 1 && k != 4; // maxGradNorm is an input here
    }
    for (int k = 0; k < 7; k++) p.hyper_slot[k] = 3 + k;
    p.hyper_dtype = dt;
    p.scale_slot = p.inf_slot = -1;
    p.amsgrad = amsgrad, p.maximize = maximize;
    p.n = varRef->numel;
    opt_builder b = {0};
    add_step(&b, &p);
    aclnnStatus st = flush_steps(&prog, &b);
    if (st != ACLNN_SUCCESS) {
        og_prog_discard(&prog);
        return st;
    }
    return og_prog_publish(&prog, workspaceSize, executor);
}

// ---- tensor lists -------------------------------------------------------------------------

// A live tensor list of live tensors that fit their blocks; *n its length. Checked without
// formatting a name per entry first (long lists); og_check_tensor_list names the failure.
static aclnnStatus check_list(const og_opdesc *op, const char *name, const aclTensorList *l,
                              uint64_t *n) {
    bool ok = og_object_is_live(l, OG_OBJ_TENSOR_LIST);
    for (uint64_t i = 0; ok && i < l->size; i++)
        ok = og_object_is_live(l->tensors[i], OG_OBJ_TENSOR) &&
             og_check_fits_block(op, name, l->tensors[i]) == ACLNN_SUCCESS;
    if (!ok) return og_check_tensor_list(op, name, l, n);
    *n = l->size;
    return ACLNN_SUCCESS;
}

// Lists of the same length as paramsRef (161002).
static aclnnStatus check_count(const og_opdesc *op, const char *name, uint64_t n, uint64_t want) {
    if (n != want)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has %llu tensors but paramsRef has %llu; the "
                       "lists must have the same length",
                       op->name, name, (unsigned long long)n, (unsigned long long)want);
    return ACLNN_SUCCESS;
}

// An optional one-element FLOAT tensor (gradScale, foundInf): an empty one counts as absent.
static aclnnStatus check_opt_flag(const og_opdesc *op, const char *name, const aclTensor **t) {
    if (!*t) return ACLNN_SUCCESS;
    char fn[FN_BUF];
    snprintf(fn, sizeof fn, "%sGetWorkspaceSize", op->name);
    OG_TRY(og_check_live(fn, name, *t, OG_OBJ_TENSOR));
    if ((*t)->numel == 0) {
        *t = NULL;
        return ACLNN_SUCCESS;
    }
    return check_one(op, name, *t, ACL_FLOAT, ACL_FLOAT);
}

// "name[i]"
static const char *elem_name(char *buf, size_t size, const char *name, uint64_t i) {
    snprintf(buf, size, "%s[%llu]", name, (unsigned long long)i);
    return buf;
}

// ---- aclnnFusedAdamw ----------------------------------------------------------------------

aclnnStatus aclnnFusedAdamwGetWorkspaceSize(
    const aclTensorList *paramsRef, const aclTensorList *grads, const aclTensorList *expAvgsRef,
    const aclTensorList *expAvgSqsRef, const aclTensorList *maxExpAvgSqsRef,
    const aclTensorList *stateSteps, const aclTensor *gradScaleOptional,
    const aclTensor *foundInfOptional, double lr, double beta1, double beta2, double weightDecay,
    double eps, bool amsgrad, bool maximize, uint64_t *workspaceSize, aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_FusedAdamw;
    {
        const char *names[] = {"paramsRef", "grads", "expAvgsRef", "expAvgSqsRef", "stateSteps"};
        const void *ptrs[] = {paramsRef, grads, expAvgsRef, expAvgSqsRef, stateSteps};
        OG_TRY(og_check_args(op, workspaceSize, executor, 5, names, ptrs));
    }
    OG_TRY(check_hyper(op, "lr", lr));
    OG_TRY(check_hyper(op, "beta1", beta1));
    OG_TRY(check_hyper(op, "beta2", beta2));
    OG_TRY(check_hyper(op, "weightDecay", weightDecay));
    if (!isfinite(eps))
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%sGetWorkspaceSize: eps is %g; it must be finite",
                       op->name, eps);
    if (amsgrad && !maxExpAvgSqsRef)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: maxExpAvgSqsRef is NULL; amsgrad needs it", op->name);
    uint64_t n, ng, nm, nv, nx = 0, ns;
    OG_TRY(check_list(op, "paramsRef", paramsRef, &n));
    OG_TRY(check_list(op, "grads", grads, &ng));
    OG_TRY(check_list(op, "expAvgsRef", expAvgsRef, &nm));
    OG_TRY(check_list(op, "expAvgSqsRef", expAvgSqsRef, &nv));
    OG_TRY(check_list(op, "stateSteps", stateSteps, &ns));
    if (maxExpAvgSqsRef) OG_TRY(check_list(op, "maxExpAvgSqsRef", maxExpAvgSqsRef, &nx));
    if (n == 0)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%sGetWorkspaceSize: paramsRef is an empty list",
                       op->name);
    OG_TRY(check_count(op, "grads", ng, n));
    OG_TRY(check_count(op, "expAvgsRef", nm, n));
    OG_TRY(check_count(op, "expAvgSqsRef", nv, n));
    OG_TRY(check_count(op, "stateSteps", ns, n));
    if (maxExpAvgSqsRef) OG_TRY(check_count(op, "maxExpAvgSqsRef", nx, n));
    if (n > (uint64_t)1 << 20)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: paramsRef has %llu tensors; at most 2^20 supported",
                       op->name, (unsigned long long)n);
    // Both handles are judged live before either one's contents: a destroyed foundInf is 161002
    // even when gradScale has no data.
    {
        char fn[FN_BUF];
        snprintf(fn, sizeof fn, "%sGetWorkspaceSize", op->name);
        if (gradScaleOptional)
            OG_TRY(og_check_live(fn, "gradScaleOptional", gradScaleOptional, OG_OBJ_TENSOR));
        if (foundInfOptional)
            OG_TRY(og_check_live(fn, "foundInfOptional", foundInfOptional, OG_OBJ_TENSOR));
    }
    OG_TRY(check_opt_flag(op, "gradScaleOptional", &gradScaleOptional));
    OG_TRY(check_opt_flag(op, "foundInfOptional", &foundInfOptional));
    // one dtype for every params / grads / moments tensor, one for every step
    aclDataType dt = paramsRef->tensors[0]->dtype, sdt = stateSteps->tensors[0]->dtype;
    char nb[5][64];
    for (uint64_t i = 0; i < n; i++) {
        const aclTensor *p = paramsRef->tensors[i], *s = stateSteps->tensors[i];
        bool quick = quick_like(p, p, dt) && quick_like(grads->tensors[i], p, dt) &&
                     quick_like(expAvgsRef->tensors[i], p, dt) &&
                     quick_like(expAvgSqsRef->tensors[i], p, dt) &&
                     (!amsgrad || quick_like(maxExpAvgSqsRef->tensors[i], p, dt)) &&
                     s->dtype == sdt && (sdt == ACL_INT64 || sdt == ACL_FLOAT) && s->numel >= 1;
        if (quick) continue;
        const char *pn = elem_name(nb[0], sizeof nb[0], "paramsRef", i);
        OG_TRY(check_state(op, pn, p));
        if (p->dtype != dt)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: %s has dtype %s but paramsRef[0] %s; every "
                           "tensor of the lists must have one dtype",
                           op->name, pn, og_dtype_name(p->dtype), og_dtype_name(dt));
        const aclTensorList *ls[] = {grads, expAvgsRef, expAvgSqsRef, maxExpAvgSqsRef};
        const char *lnames[] = {"grads", "expAvgsRef", "expAvgSqsRef", "maxExpAvgSqsRef"};
        for (int k = 0; k < 4; k++) {
            if (!ls[k] || (k == 3 && !amsgrad)) continue;
            const char *tn = elem_name(nb[1 + k], sizeof nb[1 + k], lnames[k], i);
            OG_TRY(check_state(op, tn, ls[k]->tensors[i]));
            OG_TRY(check_like(op, tn, ls[k]->tensors[i], pn, p, dt));
        }
        const char *sn = elem_name(nb[1], sizeof nb[1], "stateSteps", i);
        OG_TRY(check_one_of(op, sn, stateSteps->tensors[i], ACL_INT64, ACL_FLOAT, true));
        if (stateSteps->tensors[i]->dtype != sdt)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: %s has dtype %s but stateSteps[0] %s; the steps "
                           "must have one dtype",
                           op->name, sn, og_dtype_name(stateSteps->tensors[i]->dtype),
                           og_dtype_name(sdt));
    }
    // slots (ops.inc's rule: the lists flattened in parameter order as inputs, the ref lists
    // again as outputs), n = paramsRef's length, x = n if maxExpAvgSqsRef is given, else 0:
    //   inputs  paramsRef [0, n), grads [n, 2n), expAvgsRef [2n, 3n), expAvgSqsRef [3n, 4n),
    //           maxExpAvgSqsRef [4n, 4n + x), stateSteps [4n + x, 5n + x), gradScale, foundInf
    //   outputs paramsRef, expAvgsRef, expAvgSqsRef, maxExpAvgSqsRef (the same order, from o0)
    uint64_t x = maxExpAvgSqsRef ? n : 0;
    int nin = (int)(5 * n + x + 2), nout = (int)(3 * n + x), o0 = nin;
    const aclTensor **io = calloc((size_t)(nin + nout), sizeof *io);
    if (!io) return og_fail(ACLNN_ERR_INNER, "%sGetWorkspaceSize: out of memory", op->name);
    for (uint64_t i = 0; i < n; i++) {
        io[i] = io[o0 + i] = paramsRef->tensors[i];
        io[n + i] = grads->tensors[i];
        io[2 * n + i] = io[o0 + n + i] = expAvgsRef->tensors[i];
        io[3 * n + i] = io[o0 + 2 * n + i] = expAvgSqsRef->tensors[i];
        if (x) io[4 * n + i] = io[o0 + 3 * n + i] = maxExpAvgSqsRef->tensors[i];
        io[4 * n + x + i] = stateSteps->tensors[i];
    }
    int scale_slot = (int)(5 * n + x), inf_slot = scale_slot + 1;
    io[scale_slot] = gradScaleOptional;
    io[inf_slot] = foundInfOptional;
    int nx_used = amsgrad ? 1 : 0;
    aclnnStatus st = ACLNN_SUCCESS;
    for (uint64_t i = 0; i < n && st == ACLNN_SUCCESS; i++) {
        const aclTensor *rd[] = {io[n + i], io[4 * n + x + i]},
                        *wr[] = {io[i], io[2 * n + i], io[3 * n + i],
                                 amsgrad ? io[4 * n + i] : NULL};
        // an empty parameter touches no memory (its tensors may have no address; upstream
        // leaves empty tensors out)
        if (io[i]->numel == 0 || quick_memory(2, rd, 3 + nx_used, wr)) continue;
        char rn[2][64], wn[4][64];
        const char *rnp[] = {elem_name(rn[0], 64, "grads", i),
                             elem_name(rn[1], 64, "stateSteps", i)};
        const char *wnp[] = {
            elem_name(wn[0], 64, "paramsRef", i), elem_name(wn[1], 64, "expAvgsRef", i),
            elem_name(wn[2], 64, "expAvgSqsRef", i), elem_name(wn[3], 64, "maxExpAvgSqsRef", i)};
        st = check_memory(op, 2, rd, rnp, 3 + nx_used, wr, wnp);
    }
    if (st != ACLNN_SUCCESS) {
        free(io);
        return st;
    }
    og_prog prog;
    og_prog_init(&prog, op, nin, nout, io);
    opt_builder b = {0};
    for (uint64_t i = 0; i < n; i++) {
        opt_plan p;
        memset(&p, 0, sizeof p);
        p.kind = OPT_ADAM;
        p.hyper_slot[0] = -1;
        p.nt = 4 + nx_used;
        // p, g, m, v, vmax: the written ones through their output slots
        const int sl[] = {(int)(o0 + i), (int)(n + i), (int)(o0 + n + i), (int)(o0 + 2 * n + i),
                          (int)(o0 + 3 * n + i)};
        for (int k = 0; k < p.nt; k++) {
            og_view_of(&p.view[k], io[sl[k]]);
            p.slot[k] = sl[k];
            p.write[k] = k != 1;
        }
        p.step_slot = (int)(4 * n + x + i);
        p.step_dtype = sdt;
        p.scale_slot = gradScaleOptional ? scale_slot : -1;
        p.inf_slot = foundInfOptional ? inf_slot : -1;
        p.lr = lr, p.beta1 = beta1, p.beta2 = beta2, p.weight_decay = weightDecay, p.eps = eps;
        p.amsgrad = amsgrad, p.maximize = maximize, p.lerp = false;
        p.n = io[sl[0]]->numel;
        add_step(&b, &p);
    }
    st = flush_steps(&prog, &b);
    if (st != ACLNN_SUCCESS)
        og_prog_discard(&prog);
    else
        st = og_prog_publish(&prog, workspaceSize, executor);
    free(io);
    return st;
}

// ---- aclnnFusedSgd ------------------------------------------------------------------------

aclnnStatus aclnnFusedSgdGetWorkspaceSize(const aclTensorList *paramsRef,
                                          const aclTensorList *gradsRef,
                                          const aclTensorList *momentumBufferListOptionalRef,
                                          const aclTensor *gradScaleOptional, float weightDecay,
                                          float momentum, float lr, float dampening, bool nesterov,
                                          bool maximize, bool isFirstStep, uint64_t *workspaceSize,
                                          aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_FusedSgd;
    {
        const char *names[] = {"paramsRef", "gradsRef"};
        const void *ptrs[] = {paramsRef, gradsRef};
        OG_TRY(og_check_args(op, workspaceSize, executor, 2, names, ptrs));
    }
    uint64_t n, ng, nb = 0;
    OG_TRY(check_list(op, "paramsRef", paramsRef, &n));
    OG_TRY(check_list(op, "gradsRef", gradsRef, &ng));
    const aclTensorList *bufs = momentumBufferListOptionalRef;
    if (bufs) OG_TRY(check_list(op, "momentumBufferListOptionalRef", bufs, &nb));
    if (bufs && nb == 0) bufs = NULL; // upstream: an empty list is no list
    OG_TRY(check_hyper(op, "weightDecay", weightDecay));
    OG_TRY(check_hyper(op, "momentum", momentum));
    OG_TRY(check_hyper(op, "lr", lr));
    if (!isfinite(dampening))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: dampening is %g; it must be finite", op->name,
                       (double)dampening);
    // upstream's tolerance for "zero": 1e-6
    if (nesterov && (momentum <= 0 || fabsf(dampening) >= 1e-6f))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: nesterov needs momentum > 0 and dampening 0 (momentum "
                       "%g, dampening %g)",
                       op->name, (double)momentum, (double)dampening);
    if (!bufs && momentum >= 1e-6f)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: momentum is %g but momentumBufferListOptionalRef is "
                       "absent; momentum must be 0 without buffers",
                       op->name, (double)momentum);
    if (bufs && momentum < 1e-6f)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: momentum is %g; it must be > 0 with "
                       "momentumBufferListOptionalRef",
                       op->name, (double)momentum);
    if (n == 0)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%sGetWorkspaceSize: paramsRef is an empty list",
                       op->name);
    OG_TRY(check_count(op, "gradsRef", ng, n));
    if (bufs) OG_TRY(check_count(op, "momentumBufferListOptionalRef", nb, n));
    if (n > (uint64_t)1 << 20)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: paramsRef has %llu tensors; at most 2^20 supported",
                       op->name, (unsigned long long)n);
    OG_TRY(check_opt_flag(op, "gradScaleOptional", &gradScaleOptional));
    aclDataType dt = paramsRef->tensors[0]->dtype;
    char nbuf[3][64];
    for (uint64_t i = 0; i < n; i++) {
        const aclTensor *p = paramsRef->tensors[i];
        if (quick_like(p, p, dt) && quick_like(gradsRef->tensors[i], p, dt) &&
            (!bufs || quick_like(bufs->tensors[i], p, dt)))
            continue;
        const char *pn = elem_name(nbuf[0], sizeof nbuf[0], "paramsRef", i);
        OG_TRY(check_state(op, pn, p));
        if (p->dtype != dt)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: %s has dtype %s but paramsRef[0] %s; every "
                           "tensor of the lists must have one dtype",
                           op->name, pn, og_dtype_name(p->dtype), og_dtype_name(dt));
        const char *gn = elem_name(nbuf[1], sizeof nbuf[1], "gradsRef", i);
        OG_TRY(check_state(op, gn, gradsRef->tensors[i]));
        OG_TRY(check_like(op, gn, gradsRef->tensors[i], pn, p, dt));
        if (bufs) {
            const char *bn = elem_name(nbuf[2], sizeof nbuf[2], "momentumBufferListOptionalRef", i);
            OG_TRY(check_state(op, bn, bufs->tensors[i]));
            OG_TRY(check_like(op, bn, bufs->tensors[i], pn, p, dt));
        }
    }
    // slots (ops.inc's rule), n = paramsRef's length, b = n with buffers, else 0:
    //   inputs  paramsRef [0, n), gradsRef [n, 2n), buffers [2n, 2n + b), gradScale
    //   outputs paramsRef, gradsRef, buffers (the same order, from o0)
    int nbuf_used = bufs ? 1 : 0;
    uint64_t b = bufs ? n : 0;
    int nin = (int)(2 * n + b + 1), nout = (int)(2 * n + b), o0 = nin;
    const aclTensor **io = calloc((size_t)(nin + nout), sizeof *io);
    if (!io) return og_fail(ACLNN_ERR_INNER, "%sGetWorkspaceSize: out of memory", op->name);
    for (uint64_t i = 0; i < n; i++) {
        io[i] = io[o0 + i] = paramsRef->tensors[i];
        io[n + i] = io[o0 + n + i] = gradsRef->tensors[i];
        if (bufs) io[2 * n + i] = io[o0 + 2 * n + i] = bufs->tensors[i];
    }
    int scale_slot = (int)(2 * n + b);
    io[scale_slot] = gradScaleOptional;
    aclnnStatus st = ACLNN_SUCCESS;
    for (uint64_t i = 0; i < n && st == ACLNN_SUCCESS; i++) {
        const aclTensor *wr[] = {io[i], io[n + i], bufs ? io[2 * n + i] : NULL};
        // an empty parameter touches no memory (its tensors may have no address)
        if (io[i]->numel == 0 || quick_memory(0, NULL, 2 + nbuf_used, wr)) continue;
        char wn[3][64];
        const char *wnp[] = {elem_name(wn[0], 64, "paramsRef", i),
                             elem_name(wn[1], 64, "gradsRef", i),
                             elem_name(wn[2], 64, "momentumBufferListOptionalRef", i)};
        st = check_memory(op, 0, NULL, NULL, 2 + nbuf_used, wr, wnp);
    }
    if (st != ACLNN_SUCCESS) {
        free(io);
        return st;
    }
    og_prog prog;
    og_prog_init(&prog, op, nin, nout, io);
    opt_builder bld = {0};
    for (uint64_t i = 0; i < n; i++) {
        opt_plan p;
        memset(&p, 0, sizeof p);
        p.kind = OPT_SGD;
        p.hyper_slot[0] = -1;
        p.nt = 2 + nbuf_used;
        const int sl[] = {(int)(o0 + i), (int)(o0 + n + i), (int)(o0 + 2 * n + i)};
        for (int k = 0; k < p.nt; k++) {
            og_view_of(&p.view[k], io[sl[k]]);
            p.slot[k] = sl[k];
            // the gradient is written back only when gradScale rescales it
            p.write[k] = k != 1 || gradScaleOptional != NULL;
        }
        p.scale_slot = gradScaleOptional ? scale_slot : -1;
        p.inf_slot = -1;
        p.sgd = (og_sgd_coef){.weight_decay = weightDecay,
                              .momentum = momentum,
                              .one_minus_dampening = (float)(1 - (double)dampening),
                              .lr = lr,
                              .maximize = maximize,
                              .use_momentum = bufs != NULL,
                              .first_step = isFirstStep,
                              .nesterov = nesterov};
        p.n = io[sl[0]]->numel;
        add_step(&bld, &p);
    }
    st = flush_steps(&prog, &bld);
    if (st != ACLNN_SUCCESS)
        og_prog_discard(&prog);
    else
        st = og_prog_publish(&prog, workspaceSize, executor);
    free(io);
    return st;
}
