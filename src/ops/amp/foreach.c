/* The foreach operators: one walk over every tensor of a list, in one CUSTOM step.
 *
 *   aclnnForeachMulScalar(V2), aclnnForeachDivScalar(V2)   out[i] = x[i] * s, x[i] / s
 *   aclnnForeachNonFiniteCheckAndUnscale                   g[i] *= invScale in place; foundInf
 *                                                          = 1 if some g[i] held an inf or NaN
 *   aclnnForeachNorm                                       out[i] = ||x[i]||_p
 *
 * Host tiling: each tensor is cut into units of FE_UNIT elements (row-major over its view), and
 * the units of all tensors are numbered in list order, so that a list of many small tensors and
 * one of a few large ones both spread over every thread in one parallel loop. A unit runs
 * CopyIn (any dtype and strides into an fp32 tile of FE_TILE) -> Compute (foreach_simd.c) ->
 * CopyOut, tile after tile: one pass over memory. What a unit finds (a non-finite flag, a norm
 * partial in double) goes to its own workspace cell, and the cells are combined in unit order
 * after the loop: the results do not depend on the thread count. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_foreach_div_scalar.h"
#include "aclnnop/aclnn_foreach_div_scalar_v2.h"
#include "aclnnop/aclnn_foreach_mul_scalar.h"
#include "aclnnop/aclnn_foreach_mul_scalar_v2.h"
#include "aclnnop/aclnn_foreach_non_finite_check_and_unscale.h"
#include "aclnnop/aclnn_foreach_norm.h"
#include "engine/blocking.h"
#include "engine/convert.h"
#include "engine/isa_table.h"
#include "engine/program.h"
#include "ops/amp/foreach_kernel.h"
#include "ops/common/checks.h"
#include "ops/common/view_index.h"
#include "runtime/cpu.h"
#include "runtime/pool.h"

const og_fe_map_fn og_fe_map_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_fe_map);
const og_fe_norm_fn og_fe_norm_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_fe_norm);

enum { FE_TILE = 1024, FE_UNIT = OG_BLOCK_FOREACH_UNIT };
_Static_assert(FE_UNIT % FE_TILE == 0, "a unit is whole tiles");

typedef struct fe_item {
    og_view in, out; // the norm's out is its one element
    int in_slot, out_slot;
    int64_t numel, first_unit;
} fe_item;

typedef enum { FE_MAP, FE_NORM } fe_mode;

typedef struct fe_plan {
    fe_mode mode;
    og_fe_map_kind map;
    og_fe_norm_kind norm;
    double p; // the norm's order; general_p: (sum |x|^p)^(1/p) in double
    bool general_p;
    opgrad_isa isa;
    int threads;
    int scalar_slot; // the scalar tensor's slot, or -1: `scalar`
    aclDataType scalar_dtype;
    float scalar;
    int flag_slot; // the unscale's foundInf (fp32), or -1
    int n;
    int64_t nunits;
    uint64_t tiles_offset; // scratch: [nunits cells of 8 bytes][threads tiles of FE_TILE fp32]
    fe_item items[];
} fe_plan;

typedef struct fe_ctx {
    const fe_plan *p;
    const aclOpExecutor *e;
    const og_convert_table *cv;
    double *cells;
    float *tiles;
    float s;
} fe_ctx;

// Row-major elements [i0, i0 + n) of a view, as runs along its last dim.
static void fe_copy(const og_convert_table *cv, const og_view *v, char *base, int64_t i0, int64_t n,
                    float *tile, bool store) {
    int64_t inner = v->ndim ? v->dims[v->ndim - 1] : 1;
    int64_t step = v->ndim ? v->strides[v->ndim - 1] : 1;
    if (v->contiguous) inner = n, step = 1;
    for (int64_t i = i0; i < i0 + n;) {
        int64_t len = inner - (v->contiguous ? 0 : i % inner);
        if (len > i0 + n - i) len = i0 + n - i;
        char *at = base + og_view_offset(v, i) * v->esize;
        if (store)
            og_store_run(cv, at, v->dtype, step, tile + (i - i0), len, false);
        else
            og_load_run(cv, at, v->dtype, step, tile + (i - i0), len);
        i += len;
    }
}

// The item holding unit u: the last whose first unit is <= u (empty items own no unit).
static const fe_item *fe_find(const fe_plan *p, int64_t u) {
    int lo = 0, hi = p->n - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (p->items[mid].first_unit <= u)
            lo = mid;
        else
            hi = mid - 1;
    }
    return &p->items[lo];
}

static double norm_start(og_fe_norm_kind k) { return k == OG_FE_MIN ? INFINITY : 0.0; }

static void fe_unit(void *vctx, int unit, int slot) {
    const fe_ctx *c = vctx;
    const fe_plan *p = c->p;
    const fe_item *it = fe_find(p, unit);
    int64_t e0 = (unit - it->first_unit) * FE_UNIT, e1 = e0 + FE_UNIT;
    if (e1 > it->numel) e1 = it->numel;
    float *tile = c->tiles + (size_t)slot * FE_TILE;
    char *in = og_executor_addr(c->e, it->in_slot);
    char *out = p->mode == FE_MAP ? og_executor_addr(c->e, it->out_slot) : NULL;
    double cell = p->mode == FE_NORM ? norm_start(p->norm) : 0;
    bool bad = false;
    // fp32 updated in place (the unscale's usual case): the kernel runs on the tensor itself
    if (p->mode == FE_MAP && in == out && it->in.dtype == ACL_FLOAT && it->in.contiguous &&
        it->out.contiguous) {
        bool bad = og_fe_map_kernels[p->isa]((float *)in + e0, (size_t)(e1 - e0), c->s, p->map);
        c->cells[unit] = (double)bad;
        return;
    }
    for (int64_t t = e0; t < e1; t += FE_TILE) {
        int64_t n = e1 - t < FE_TILE ? e1 - t : FE_TILE;
        fe_copy(c->cv, &it->in, in, t, n, tile, false);
        if (p->mode == FE_MAP) {
            bad |= og_fe_map_kernels[p->isa](tile, (size_t)n, c->s, p->map);
            fe_copy(c->cv, &it->out, out, t, n, tile, true);
        } else if (p->general_p) {
            for (int64_t i = 0; i < n; i++) cell += pow(fabs((double)tile[i]), p->p);
        } else {
            og_fe_norm_kernels[p->isa](tile, (size_t)n, p->norm, &cell);
        }
    }
    c->cells[unit] = p->mode == FE_NORM ? cell : (double)bad;
}

static void fe_run(const aclOpExecutor *e, const void *params, char *scratch) {
    const fe_plan *p = params;
    fe_ctx c = {.p = p,
                .e = e,
                .cv = &og_convert[p->isa],
                .cells = (double *)scratch,
                .tiles = (float *)(scratch + p->tiles_offset),
                .s = p->scalar};
    if (p->scalar_slot >= 0)
        c.s = og_load_elem(og_executor_addr(e, p->scalar_slot), p->scalar_dtype);
    og_parallel_for((int)p->nunits, p->threads, fe_unit, &c);
    if (p->mode == FE_MAP) {
        bool bad = false;
        for (int64_t u = 0; u < p->nunits; u++) bad |= c.cells[u] != 0;
        if (bad && p->flag_slot >= 0)
            og_store_elem(og_executor_addr(e, p->flag_slot), ACL_FLOAT, 1);
        return;
    }
    for (int i = 0; i < p->n; i++) { // each tensor's partials in unit order
        const fe_item *it = &p->items[i];
        int64_t units = (it->numel + FE_UNIT - 1) / FE_UNIT;
        double r = norm_start(p->norm);
        for (int64_t u = it->first_unit; u < it->first_unit + units; u++) {
            double v = c.cells[u];
            if (p->norm == OG_FE_MAX || p->norm == OG_FE_MIN)
                r = r != r || v != v ? NAN : p->norm == OG_FE_MAX ? fmax(r, v) : fmin(r, v);
            else
                r += v;
        }
        if (p->general_p)
            r = pow(r, 1 / p->p);
        else if (p->norm == OG_FE_L2)
            r = sqrt(r);
        og_store_elem(og_executor_addr(e, it->out_slot), it->out.dtype, (float)r);
    }
}

// ---- phase 1 -------------------------------------------------------------------------------

// A list operator's tensors: the inputs, then the outputs (a list's tensors in list order), with
// their names ("x[3]") for the memory rules and the messages.
typedef struct fe_io {
    int nin, nout, cap;
    const aclTensor **t;
    char (*names)[40];
} fe_io;

// Appends t (named name[index], or name when index < 0) as an input, or as an output (after
// every input).
static bool fe_io_add(fe_io *io, const aclTensor *t, const char *name, int index, bool as_out) {
    if (io->nin + io->nout == io->cap) {
        int cap = io->cap ? 2 * io->cap : 16;
        const aclTensor **nt = realloc(io->t, (size_t)cap * sizeof *nt);
        if (nt) io->t = nt;
        char(*nn)[40] = realloc(io->names, (size_t)cap * sizeof *nn);
        if (nn) io->names = nn;
        if (!nt || !nn) return false;
        io->cap = cap;
    }
    int k = io->nin + io->nout;
    io->t[k] = t;
    if (index >= 0)
        snprintf(io->names[k], sizeof io->names[k], "%s[%d]", name, index);
    else
        snprintf(io->names[k], sizeof io->names[k], "%s", name);
    if (as_out)
        io->nout++;
    else
        io->nin++;
    return true;
}

static void fe_io_free(fe_io *io) {
    free(io->t);
    free(io->names);
}

#define FE_FLOATS (OG_DT(ACL_FLOAT) | OG_DT(ACL_FLOAT16) | OG_DT(ACL_BF16))

static aclnnStatus fe_fail_dtype(const og_opdesc *op, const char *what, aclDataType dt,
                                 const char *rule) {
    return og_fail(ACLNN_ERR_PARAM_INVALID, "%sGetWorkspaceSize: %s has dtype %s; %s", op->name,
                   what, og_dtype_name(dt), rule);
}

// List x: every tensor float32, float16 or bfloat16, all of one dtype (*dt; ACL_DT_UNDEFINED
// for an empty list), rank <= 8; its tensors join io as inputs (outputs when as_out).
static aclnnStatus fe_list(const og_opdesc *op, const char *name, const aclTensorList *l, fe_io *io,
                           bool as_out, aclDataType *dt) {
    uint64_t n = 0;
    OG_TRY(og_check_tensor_list(op, name, l, &n));
    if (n > INT_MAX / 4)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has %llu tensors; at most %d", op->name, name,
                       (unsigned long long)n, INT_MAX / 4);
    *dt = ACL_DT_UNDEFINED;
    for (uint64_t k = 0; k < n; k++) {
        const aclTensor *t = l->tensors[k];
        char what[48];
        snprintf(what, sizeof what, "%s[%llu]", name, (unsigned long long)k);
        if ((unsigned)t->dtype >= 64 || !(FE_FLOATS & OG_DT(t->dtype)))
            return fe_fail_dtype(op, what, t->dtype, "supported: float32, float16, bfloat16");
        if (k > 0 && t->dtype != *dt)
            return fe_fail_dtype(op, what, t->dtype, "every tensor of the list has one dtype");
        if (t->ndim > OG_MAX_DIMS)
            return og_fail(ACLNN_ERR_PARAM_INVALID, "%sGetWorkspaceSize: %s has rank %d; at most 8",
                           op->name, what, t->ndim);
        *dt = t->dtype;
        if (!fe_io_add(io, t, name, (int)k, as_out))
            return og_fail(ACLNN_ERR_INNER_CREATE_EXECUTOR, "%sGetWorkspaceSize: out of memory",
                           op->name);
    }
    return ACLNN_SUCCESS;
}

// A one-element tensor (foundInf, invScale, a scalar tensor) of a dtype in `dtypes`.
static aclnnStatus fe_one(const og_opdesc *op, const char *name, const aclTensor *t,
                          unsigned long long dtypes, const char *dtype_rule) {
    char fn[96];
    snprintf(fn, sizeof fn, "%sGetWorkspaceSize", op->name);
    OG_TRY(og_check_live(fn, name, t, OG_OBJ_TENSOR));
    OG_TRY(og_check_fits_block(op, name, t));
    if ((unsigned)t->dtype >= 64 || !(dtypes & OG_DT(t->dtype)))
        return fe_fail_dtype(op, name, t->dtype, dtype_rule);
    if (t->numel != 1 || t->ndim > OG_MAX_DIMS)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has %lld elements; it must hold exactly one",
                       op->name, name, (long long)t->numel);
    return ACLNN_SUCCESS;
}

// out[i] has x[i]'s shape (same_shape) or one element, and x's dtype.
static aclnnStatus fe_pair_outputs(const og_opdesc *op, const fe_io *io, int first_out,
                                   bool same_shape) {
    int n = io->nout < io->nin ? io->nout : io->nin;
    for (int k = 0; k < n; k++) {
        const aclTensor *x = io->t[k], *o = io->t[first_out + k];
        if (o->dtype != x->dtype)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: %s has dtype %s; it must be %s's, %s", op->name,
                           io->names[first_out + k], og_dtype_name(o->dtype), io->names[k],
                           og_dtype_name(x->dtype));
        bool ok = same_shape ? o->ndim == x->ndim : o->numel == 1;
        for (int d = 0; same_shape && ok && d < x->ndim; d++) ok = o->dims[d] == x->dims[d];
        if (!ok) {
            char a[128], b[128];
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           same_shape ? "%sGetWorkspaceSize: %s has shape %s; it must be %s's, %s"
                                      : "%sGetWorkspaceSize: %s has shape %s; it must hold one "
                                        "element (the norm of %s, shape %s)",
                           op->name, io->names[first_out + k],
                           og_shape_str(o->dims, o->ndim, a, sizeof a), io->names[k],
                           og_shape_str(x->dims, x->ndim, b, sizeof b));
        }
    }
    return ACLNN_SUCCESS;
}

// Builds the one-step program over io (inputs first: x[0..n) in slots 0..n-1; outputs after
// the inputs, out[k] of x[k] at slot out_base + k) and publishes it.
static aclnnStatus fe_publish(const og_opdesc *op, fe_io *io, int n, int out_base, fe_plan *tmpl,
                              uint64_t *workspaceSize, aclOpExecutor **executor) {
    size_t bytes = sizeof(fe_plan) + (size_t)n * sizeof(fe_item);
    fe_plan *p = calloc(1, bytes);
    int *slots = malloc((size_t)(io->nin + io->nout + 1) * sizeof *slots);
    if (!p || !slots) {
        free(p), free(slots);
        return og_fail(ACLNN_ERR_INNER_CREATE_EXECUTOR, "%sGetWorkspaceSize: out of memory",
                       op->name);
    }
    *p = *tmpl;
    p->n = n;
    p->isa = og_isa();
    p->threads = og_num_threads();
    int64_t units = 0;
    for (int k = 0; k < n; k++) {
        fe_item *it = &p->items[k];
        if (io->t[k]->numel > 0) { // (an empty tensor's dims may have no product in int64)
            og_view_of(&it->in, io->t[k]);
            og_view_of(&it->out, io->t[out_base + k]);
        } else if (io->t[out_base + k]->numel > 0) { // the norm of an empty tensor: out's element
            og_view_of(&it->out, io->t[out_base + k]);
        }
        it->in_slot = k, it->out_slot = out_base + k;
        it->numel = io->t[k]->numel;
        it->first_unit = units;
        units += (it->numel + FE_UNIT - 1) / FE_UNIT;
    }
    p->nunits = units;
    aclnnStatus st = ACLNN_SUCCESS;
    if (units > INT_MAX)
        st = og_fail(ACLNN_ERR_PARAM_INVALID,
                     "%sGetWorkspaceSize: the lists hold %lld elements; "
                     "at most %lld",
                     op->name, (long long)(units * FE_UNIT), (long long)INT_MAX * FE_UNIT);
    og_prog g;
    og_prog_init(&g, op, io->nin, io->nout, io->t);
    if (st == ACLNN_SUCCESS && (units > 0 || (p->mode == FE_NORM && n > 0))) { // (an empty
        // tensor's norm is written too)
        p->tiles_offset = (uint64_t)units * sizeof(double);
        for (int k = 0; k < io->nin + io->nout; k++) slots[k] = k;
        og_prog_custom(&g, fe_run, p, bytes, slots, io->nin + io->nout,
                       p->tiles_offset + (uint64_t)p->threads * FE_TILE * sizeof(float));
    }
    free(p), free(slots);
    if (st != ACLNN_SUCCESS) {
        og_prog_discard(&g);
        return st;
    }
    return og_prog_publish(&g, workspaceSize, executor);
}

// The memory rules of og_check_io_memory over the tensors that hold elements (an empty one has
// nothing to overlap, and may have no address).
static aclnnStatus fe_check_memory(const og_opdesc *op, fe_io *io) {
    int total = io->nin + io->nout, nin = 0, n = 0;
    const char **nm = malloc((size_t)(total + 1) * sizeof *nm);
    const aclTensor **ts = malloc((size_t)(total + 1) * sizeof *ts);
    aclnnStatus st = ACLNN_SUCCESS;
    if (!nm || !ts)
        st =
            og_fail(ACLNN_ERR_INNER_CREATE_EXECUTOR, "%sGetWorkspaceSize: out of memory", op->name);
    for (int k = 0; st == ACLNN_SUCCESS && k < total; k++) {
        if (io->t[k]->numel == 0) continue;
        nm[n] = io->names[k], ts[n++] = io->t[k];
        nin += k < io->nin;
    }
    if (st == ACLNN_SUCCESS) st = og_check_io_memory(op, nin, ts, n - nin, ts + nin, nm);
    free(nm), free(ts);
    return st;
}

// ForeachMulScalar(V2) / ForeachDivScalar(V2): x and out lists, the scalar a tensor (V1) or an
// aclScalar (V2).
static aclnnStatus fe_binary(const og_opdesc *op, og_fe_map_kind kind, const aclTensorList *x,
                             const aclTensor *scalar_t, const aclScalar *scalar_s,
                             const aclTensorList *out, uint64_t *workspaceSize,
                             aclOpExecutor **executor) {
    const char *names[] = {"x", "scalar", "out"};
    const void *ptrs[] = {x, scalar_t ? (const void *)scalar_t : (const void *)scalar_s, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 3, names, ptrs));
    fe_io io = {0};
    aclDataType xdt, odt;
    fe_plan tmpl = {.mode = FE_MAP, .map = kind, .scalar_slot = -1, .flag_slot = -1};
    aclnnStatus st = fe_list(op, "x", x, &io, false, &xdt);
    if (st == ACLNN_SUCCESS && scalar_t) {
        // the scalar tensor: x's dtype, or float32 (bfloat16 x takes float32 only, as upstream)
        unsigned long long ok = OG_DT(ACL_FLOAT) | (xdt == ACL_FLOAT16 ? OG_DT(ACL_FLOAT16) : 0);
        st = fe_one(op, "scalar", scalar_t, ok,
                    xdt == ACL_FLOAT16 ? "it must be float16 or float32" : "it must be float32");
        if (st == ACLNN_SUCCESS) // (read only once the handle is known to be a live tensor)
            tmpl.scalar_slot = io.nin, tmpl.scalar_dtype = scalar_t->dtype;
        if (st == ACLNN_SUCCESS && !fe_io_add(&io, scalar_t, "scalar", -1, false))
            st = og_fail(ACLNN_ERR_INNER_CREATE_EXECUTOR, "%sGetWorkspaceSize: out of memory",
                         op->name);
    }
    if (st == ACLNN_SUCCESS && scalar_s)
        st = og_check_scalar_of(op, "scalar", scalar_s,
                                OG_DT(ACL_FLOAT) | OG_DT(ACL_FLOAT16) | OG_DT(ACL_BF16) |
                                    OG_DT(ACL_DOUBLE) | OG_DT(ACL_INT64) | OG_DT(ACL_INT32),
                                &tmpl.scalar);
    int n = io.nin - (scalar_t != NULL), out_base = io.nin;
    if (st == ACLNN_SUCCESS) st = fe_list(op, "out", out, &io, true, &odt);
    if (st == ACLNN_SUCCESS && io.nout != n)
        st = og_fail(ACLNN_ERR_PARAM_INVALID,
                     "%sGetWorkspaceSize: out has %d tensors and x %d; one output per input",
                     op->name, io.nout, n);
    if (st == ACLNN_SUCCESS) st = fe_pair_outputs(op, &io, out_base, true);
    if (st == ACLNN_SUCCESS) st = fe_check_memory(op, &io);
    if (st == ACLNN_SUCCESS) st = fe_publish(op, &io, n, out_base, &tmpl, workspaceSize, executor);
    fe_io_free(&io);
    return st;
}

aclnnStatus aclnnForeachMulScalarGetWorkspaceSize(const aclTensorList *x, const aclTensor *scalar,
                                                  aclTensorList *out, uint64_t *workspaceSize,
                                                  aclOpExecutor **executor) {
    return fe_binary(&og_op_ForeachMulScalar, OG_FE_MUL, x, scalar, NULL, out, workspaceSize,
                     executor);
}

aclnnStatus aclnnForeachMulScalarV2GetWorkspaceSize(const aclTensorList *x, const aclScalar *scalar,
                                                    aclTensorList *out, uint64_t *workspaceSize,
                                                    aclOpExecutor **executor) {
    return fe_binary(&og_op_ForeachMulScalarV2, OG_FE_MUL, x, NULL, scalar, out, workspaceSize,
                     executor);
}

aclnnStatus aclnnForeachDivScalarGetWorkspaceSize(const aclTensorList *x, const aclTensor *scalar,
                                                  aclTensorList *out, uint64_t *workspaceSize,
                                                  aclOpExecutor **executor) {
    return fe_binary(&og_op_ForeachDivScalar, OG_FE_DIV, x, scalar, NULL, out, workspaceSize,
                     executor);
}

aclnnStatus aclnnForeachDivScalarV2GetWorkspaceSize(const aclTensorList *x, const aclScalar *scalar,
                                                    aclTensorList *out, uint64_t *workspaceSize,
                                                    aclOpExecutor **executor) {
    return fe_binary(&og_op_ForeachDivScalarV2, OG_FE_DIV, x, NULL, scalar, out, workspaceSize,
                     executor);
}

aclnnStatus aclnnForeachNonFiniteCheckAndUnscaleGetWorkspaceSize(const aclTensorList *scaledGrads,
                                                                 const aclTensor *foundInf,
                                                                 const aclTensor *invScale,
                                                                 uint64_t *workspaceSize,
                                                                 aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_ForeachNonFiniteCheckAndUnscale;
    const char *names[] = {"scaledGrads", "foundInf", "invScale"};
    const void *ptrs[] = {scaledGrads, foundInf, invScale};
    OG_TRY(og_check_args(op, workspaceSize, executor, 3, names, ptrs));
    fe_io io = {0};
    aclDataType dt;
    fe_plan tmpl = {.mode = FE_MAP, .map = OG_FE_UNSCALE, .scalar_dtype = ACL_FLOAT};
    aclnnStatus st = fe_list(op, "scaledGrads", scaledGrads, &io, false, &dt);
    int n = io.nin;
    if (st == ACLNN_SUCCESS)
        st = fe_one(op, "foundInf", foundInf, OG_DT(ACL_FLOAT), "it must be float32");
    if (st == ACLNN_SUCCESS)
        st = fe_one(op, "invScale", invScale, OG_DT(ACL_FLOAT), "it must be float32");
    // slots: grads, foundInf, invScale | grads (updated), foundInf (updated)
    if (st == ACLNN_SUCCESS && (!fe_io_add(&io, foundInf, "foundInf", -1, false) ||
                                !fe_io_add(&io, invScale, "invScale", -1, false)))
        st =
            og_fail(ACLNN_ERR_INNER_CREATE_EXECUTOR, "%sGetWorkspaceSize: out of memory", op->name);
    if (st == ACLNN_SUCCESS) st = fe_list(op, "scaledGrads", scaledGrads, &io, true, &dt);
    if (st == ACLNN_SUCCESS && !fe_io_add(&io, foundInf, "foundInf", -1, true))
        st =
            og_fail(ACLNN_ERR_INNER_CREATE_EXECUTOR, "%sGetWorkspaceSize: out of memory", op->name);
    if (st == ACLNN_SUCCESS) st = fe_check_memory(op, &io);
    tmpl.scalar_slot = n + 1;
    tmpl.flag_slot = io.nin + n;
    if (st == ACLNN_SUCCESS) st = fe_publish(op, &io, n, io.nin, &tmpl, workspaceSize, executor);
    fe_io_free(&io);
    return st;
}

aclnnStatus aclnnForeachNormGetWorkspaceSize(const aclTensorList *x, const aclScalar *scalar,
                                             const aclTensorList *out, uint64_t *workspaceSize,
                                             aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_ForeachNorm;
    const char *names[] = {"x", "scalar", "out"};
    const void *ptrs[] = {x, scalar, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 3, names, ptrs));
    fe_io io = {0};
    aclDataType xdt, odt;
    float order = 0;
    fe_plan tmpl = {.mode = FE_NORM, .scalar_slot = -1, .flag_slot = -1};
    aclnnStatus st = fe_list(op, "x", x, &io, false, &xdt);
    int n = io.nin;
    if (st == ACLNN_SUCCESS)
        st = og_check_scalar_of(op, "scalar", scalar,
                                OG_DT(ACL_FLOAT) | OG_DT(ACL_DOUBLE) | OG_DT(ACL_INT64), &order);
    if (st == ACLNN_SUCCESS && order != order)
        st = og_fail(ACLNN_ERR_PARAM_INVALID,
                     "%sGetWorkspaceSize: scalar (the norm's order) is NaN", op->name);
    if (st == ACLNN_SUCCESS) st = fe_list(op, "out", out, &io, true, &odt);
    if (st == ACLNN_SUCCESS && io.nout != n)
        st = og_fail(ACLNN_ERR_PARAM_INVALID,
                     "%sGetWorkspaceSize: out has %d tensors and x %d; one norm per tensor",
                     op->name, io.nout, n);
    if (st == ACLNN_SUCCESS) st = fe_pair_outputs(op, &io, n, false);
    if (st == ACLNN_SUCCESS) st = fe_check_memory(op, &io);
    tmpl.p = order;
    tmpl.norm = order == INFINITY    ? OG_FE_MAX
                : order == -INFINITY ? OG_FE_MIN
                : order == 0         ? OG_FE_L0
                : order == 1         ? OG_FE_L1
                                     : OG_FE_L2;
    tmpl.general_p = isfinite(order) && order != 0 && order != 1 && order != 2;
    if (st == ACLNN_SUCCESS) st = fe_publish(op, &io, n, n, &tmpl, workspaceSize, executor);
    fe_io_free(&io);
    return st;
}
