/* aclnnLayerNorm, aclnnLayerNormBackward, aclnnRmsNorm, aclnnRmsNormGrad: argument checks and step
 * programs on the row engine (kernels: norm_kernel_simd.c). Rules from ops-nn norm/layer_norm_v4,
 * layer_norm_grad_v3, rms_norm and rms_norm_grad (docs).
 *
 * A tensor [A..., R1..Rj] (j = the normalized rank) is planned as rows [A...] x R = R1 ... Rj: the
 * normalized dims of every operand are coalesced into one row axis when they are one progression
 * in memory (any contiguous tensor, and many views); an operand whose normalized dims are not is
 * gathered into a contiguous temporary by a copy step first (an output: written there, then
 * scattered by a copy step after). Per-row statistics ([A..., 1...], or for a backward's inputs
 * any shape with one element per row) are read and written through the row engine's stats.
 * The backwards accept an incoming gradient of another floating dtype than the input (mixed
 * precision; ops-nn asks for one dtype): it is widened to fp32 like every operand.
 * The weight / bias gradients are the row engine's row-group column accumulators ([groups, R1..Rj]
 * fp32 temporaries) summed over the groups by a REDUCE step (engine/rows.h: fixed order). */
#include <stdio.h>
#include <string.h>

#include "aclnnop/aclnn_add_layer_norm.h"
#include "aclnnop/aclnn_add_layer_norm_grad.h"
#include "aclnnop/aclnn_add_rms_norm.h"
#include "aclnnop/aclnn_layer_norm.h"
#include "aclnnop/aclnn_layer_norm_backward.h"
#include "aclnnop/aclnn_rms_norm.h"
#include "aclnnop/aclnn_rms_norm_grad.h"
#include "engine/program.h"
#include "ops/common/checks.h"
#include "ops/norm/norm_kernel.h"
#include "tensor/dtype.h"

// ---------------------------------------------------------------------------------------------
// Planning helpers

enum { MAX_VIEWS = 16, MAX_PENDING = 4 };

/// A norm program being built: the leading (row) dims, views of the operands, copies to append.
typedef struct norm_build {
    og_prog p;
    int nA;                 // leading dims of the row-shaped operands
    int64_t A[OG_MAX_DIMS]; // their sizes
    int64_t rows, R;        // prod A, prod of the normalized dims
    int nviews;
    aclTensor views[MAX_VIEWS];
    int npending;
    bool f64; // some operand is float64: the float64 rows, copies and temporaries
    int pend_from[MAX_PENDING], pend_to[MAX_PENDING];
    const aclTensor *pend_from_t[MAX_PENDING], *pend_to_t[MAX_PENDING];
} norm_build;

/// *v = t with dims [lead, ndim) merged into one; false when they are not one progression.
static bool merge_view(const aclTensor *t, int lead, aclTensor *v) {
    *v = *t;
    int64_t R = 1, stride = 1, expect = 0;
    bool have = false, ok = true;
    for (int d = t->ndim - 1; d >= lead; d--) {
        R *= t->dims[d];
        if (t->dims[d] == 1) continue;
        if (have && t->strides[d] != expect) ok = false;
        if (!have) stride = t->strides[d], have = true;
        expect = t->strides[d] * t->dims[d];
    }
    v->ndim = lead + 1;
    v->dims[lead] = R;
    v->strides[lead] = stride;
    return ok || R == 0;
}

static bool is_contiguous(const aclTensor *t) {
    int64_t expect = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->dims[d] == 1) continue;
        if (t->strides[d] != expect) return false;
        expect *= t->dims[d];
    }
    return true;
}

static aclTensor *new_view(norm_build *b) {
    if (b->nviews >= MAX_VIEWS) return NULL;
    return &b->views[b->nviews++];
}

/// A contiguous temporary like t, and (input) a copy step t -> temporary now, or (output) one
/// temporary -> t after the row step. Returns the temporary's slot, -1 on failure.
static int copy_through_temp(norm_build *b, const aclTensor *t, int slot, bool output,
                             const aclTensor **tmp) {
    int ts = og_prog_temp(&b->p, t->dtype, t->ndim, t->dims, tmp);
    if (ts < 0) return -1;
    if (output) {
        if (b->npending >= MAX_PENDING) return -1;
        int k = b->npending++;
        b->pend_from[k] = ts, b->pend_to[k] = slot;
        b->pend_from_t[k] = *tmp, b->pend_to_t[k] = t;
        return ts;
    }
    og_ew_op ew = {.op = b->p.op,
                   .kernels = og_norm_copy_kernels,
                   .kernels64 = og_norm_copy_kernels64,
                   .nin = 1,
                   .in = {t},
                   .nout = 1,
                   .out = {*tmp},
                   .names = {"in", "out"},
                   .slots = true,
                   .in_slot = {slot},
                   .out_slot = {ts},
                   .compute_dtype = t->dtype};
    og_prog_map(&b->p, &ew);
    return ts;
}

/// The row-engine view of an operand whose trailing dims from `lead` are the normalized ones
/// (lead = nA for row-shaped tensors, 0 for a weight): *slot is where it is read or written.
static const aclTensor *row_operand(norm_build *b, const aclTensor *t, int slot, int lead,
                                    bool output, int *vslot) {
    aclTensor *v = new_view(b);
    if (!v) return NULL;
    *vslot = slot;
    if (merge_view(t, lead, v)) return v;
    const aclTensor *tmp;
    *vslot = copy_through_temp(b, t, slot, output, &tmp);
    if (*vslot < 0) return NULL;
    merge_view(tmp, lead, v);
    return v;
}

/// The view of a per-row statistic as [A..., 1] (the row engine's keepdim stats): from its own
/// strides when its shape is [A...] or [A..., 1...], else (an input with one element per row) as
/// a row-major array of the rows, gathered first unless contiguous.
static const aclTensor *stat_operand(norm_build *b, const aclTensor *t, int slot, int *vslot) {
    aclTensor *v = new_view(b);
    if (!v) return NULL;
    *vslot = slot;
    bool shaped = t->ndim >= b->nA;
    for (int d = 0; d < t->ndim && shaped; d++)
        shaped = d < b->nA ? t->dims[d] == b->A[d] : t->dims[d] == 1;
    *v = *t;
    if (!shaped) {
        const aclTensor *src = t;
        if (!is_contiguous(t)) {
            *vslot = copy_through_temp(b, t, slot, false, &src);
            if (*vslot < 0) return NULL;
            *v = *src;
        }
        int64_t st = 1;
        for (int d = b->nA - 1; d >= 0; d--) v->strides[d] = st, st *= b->A[d];
    }
    for (int d = 0; d < b->nA; d++) v->dims[d] = b->A[d];
    v->ndim = b->nA + 1;
    v->dims[b->nA] = 1;
    v->strides[b->nA] = 1;
    return v;
}

/// The copies of outputs that were written to temporaries, then the executor.
static aclnnStatus finish(norm_build *b, uint64_t *workspaceSize, aclOpExecutor **executor) {
    for (int k = 0; k < b->npending; k++) {
        og_ew_op ew = {.op = b->p.op,
                       .kernels = og_norm_copy_kernels,
                       .kernels64 = og_norm_copy_kernels64,
                       .nin = 1,
                       .in = {b->pend_from_t[k]},
                       .nout = 1,
                       .out = {b->pend_to_t[k]},
                       .names = {"in", "out"},
                       .slots = true,
                       .in_slot = {b->pend_from[k]},
                       .out_slot = {b->pend_to[k]},
                       .compute_dtype = b->pend_to_t[k]->dtype};
        og_prog_map(&b->p, &ew);
    }
    return og_prog_publish(&b->p, workspaceSize, executor);
}

static void build_init(norm_build *b, const og_opdesc *op, int nin, int nout,
                       const aclTensor *const *io, const aclTensor *x, int nA) {
    memset(b, 0, sizeof *b);
    og_prog_init(&b->p, op, nin, nout, io);
    for (int k = 0; k < nin + nout; k++) b->f64 = b->f64 || (io[k] && io[k]->dtype == ACL_DOUBLE);
    b->nA = nA;
    b->rows = 1, b->R = 1;
    for (int d = 0; d < x->ndim; d++) {
        if (d < nA)
            b->A[d] = x->dims[d], b->rows *= x->dims[d];
        else
            b->R *= x->dims[d];
    }
}

static void rows_shape(const norm_build *b, og_rows_op *r) {
    r->ndim = b->nA + 1;
    for (int d = 0; d < b->nA; d++) r->dims[d] = b->A[d];
    r->dims[b->nA] = b->R;
    r->axis = b->nA;
    // every operand widened to fp32 (float64: to double), each result rounded once
    r->compute_dtype = b->f64 ? ACL_DOUBLE : ACL_FLOAT;
}

/// row_operand appended to r: to its inputs, or to its outputs when `output`; false when no view.
static bool add_row(norm_build *b, og_rows_op *r, const aclTensor *t, int slot, int lead,
                    bool output) {
    int vs;
    const aclTensor *v = row_operand(b, t, slot, lead, output, &vs);
    if (!v) return false;
    if (output)
        r->out[r->nout] = v, r->out_slot[r->nout++] = vs;
    else
        r->in[r->nin] = v, r->in_slot[r->nin++] = vs;
    return true;
}

/// stat_operand appended to r's statistics; false when no view.
static bool add_stat(norm_build *b, og_rows_op *r, const aclTensor *t, int slot) {
    int vs;
    const aclTensor *v = stat_operand(b, t, slot, &vs);
    if (!v) return false;
    r->stats[r->nstats] = v, r->stats_slot[r->nstats++] = vs;
    return true;
}

static aclnnStatus view_failed(norm_build *b) {
    og_prog_discard(&b->p);
    return og_fail(ACLNN_ERR_INNER, "%sGetWorkspaceSize: internal: too many operand views",
                   b->p.op->name);
}

/// A column sum of the accumulator temporary acc [groups, norm dims] into out (a REDUCE step).
static void sum_groups(norm_build *b, const aclTensor *acc, int acc_slot, const aclTensor *out,
                       int out_slot) {
    og_reduce_op r = {.nin = 1,
                      .in = {acc},
                      .in_slot = {acc_slot},
                      .out = out,
                      .out_slot = out_slot,
                      .round_in = ACL_FLOAT};
    og_reduce_to_shape(&r, acc->dims, acc->ndim, out);
    og_prog_reduce(&b->p, &r);
}

/// An fp32 (float64) accumulator temporary [groups, dims of `like`] (the normalized shape).
static int acc_temp(norm_build *b, const int64_t *ndims, int nR, const aclTensor **t) {
    int64_t dims[OG_MAX_DIMS + 1];
    dims[0] = og_rows_groups(b->rows);
    for (int d = 0; d < nR; d++) dims[1 + d] = ndims[d];
    if (nR + 1 > OG_MAX_DIMS) { // all of the normalized dims as one
        dims[1] = b->R;
        nR = 1;
    }
    return og_prog_temp(&b->p, b->f64 ? ACL_DOUBLE : ACL_FLOAT, nR + 1, dims, t);
}

// ---------------------------------------------------------------------------------------------
// Argument checks

static const char *dt_name(aclDataType dt) { return og_dtype_name(dt); }

/// An argument that must be a live object of its kind (og_check_live, named like the others).
static aclnnStatus check_live(const og_opdesc *op, const char *name, const void *p,
                              og_object_kind kind) {
    char fn[128];
    snprintf(fn, sizeof fn, "%sGetWorkspaceSize", op->name);
    return og_check_live(fn, name, p, kind);
}

/// normalizedShape: 1..rank(input) entries, equal to input's trailing dims.
static aclnnStatus check_normalized(const og_opdesc *op, const aclIntArray *ns,
                                    const aclTensor *input, const char *input_name) {
    OG_TRY(check_live(op, "normalizedShape", ns, OG_OBJ_INT_ARRAY));
    if (ns->size < 1 || (int64_t)ns->size > input->ndim)
        return og_fail(
            ACLNN_ERR_PARAM_INVALID,
            "%sGetWorkspaceSize: normalizedShape has %llu entries; it needs 1 to %d (the "
            "rank of %s)",
            op->name, (unsigned long long)ns->size, input->ndim, input_name);
    int nA = input->ndim - (int)ns->size;
    for (int k = 0; k < (int)ns->size; k++)
        if (ns->values[k] != input->dims[nA + k]) {
            char a[160];
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: normalizedShape[%d] = %lld but %s %s has %lld "
                           "there: normalizedShape must equal %s's trailing dims",
                           op->name, k, (long long)ns->values[k], input_name,
                           og_shape_str(input->dims, input->ndim, a, sizeof a),
                           (long long)input->dims[nA + k], input_name);
        }
    return ACLNN_SUCCESS;
}

/// a and b have the same shape.
static bool same_dims(const aclTensor *a, const aclTensor *b) {
    if (a->ndim != b->ndim) return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

// og_check_io_memory over the tensors of io given (NULL entries skipped): io[0, nin) are the
// inputs, io[nin, nin + nout) the outputs, names[k] names io[k].
static aclnnStatus check_memory_given(const og_opdesc *op, int nin, int nout,
                                      const aclTensor *const *io, const char *const *names) {
    const aclTensor *ins[8], *outs[8];
    const char *nm[16];
    int ni = 0, no = 0;
    for (int k = 0; k < nin; k++)
        if (io[k]) nm[ni] = names[k], ins[ni++] = io[k];
    for (int k = nin; k < nin + nout; k++)
        if (io[k]) nm[ni + no] = names[k], outs[no++] = io[k];
    return og_check_io_memory(op, ni, ins, no, outs, nm);
}

/// t has exactly the shape dims[0..n).
static aclnnStatus check_shape(const og_opdesc *op, const char *name, const aclTensor *t,
                               const int64_t *dims, int n, const char *what) {
    bool same = t->ndim == n;
    for (int d = 0; d < n && same; d++) same = t->dims[d] == dims[d];
    if (same) return ACLNN_SUCCESS;
    char a[160], e[160];
    return og_fail(ACLNN_ERR_PARAM_INVALID,
                   "%sGetWorkspaceSize: %s has shape %s but must be %s (%s)", op->name, name,
                   og_shape_str(t->dims, t->ndim, a, sizeof a), og_shape_str(dims, n, e, sizeof e),
                   what);
}

/// t's dtype is `a` or `b`.
static aclnnStatus check_dtype2(const og_opdesc *op, const char *name, const aclTensor *t,
                                aclDataType a, aclDataType b, const char *rule) {
    if (t->dtype == a || t->dtype == b) return ACLNN_SUCCESS;
    return og_fail(ACLNN_ERR_PARAM_INVALID, "%sGetWorkspaceSize: %s has dtype %s; %s", op->name,
                   name, dt_name(t->dtype), rule);
}

/// Statistics and weight gradients that ops-nn makes FLOAT: FLOAT, or float64 for a float64 input
/// (opgrad's float64 extension keeps them in double).
static aclDataType stat_dtype(const aclTensor *x) {
    return x->dtype == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT;
}
#define STAT_RULE "it must be FLOAT (or DOUBLE for a DOUBLE input)"

/// A weight-like tensor (weight, bias, gamma): the normalized shape, input's dtype or FLOAT.
static aclnnStatus check_weight(const og_opdesc *op, const char *name, const aclTensor *w,
                                const aclTensor *input, const int64_t *ndims, int nR) {
    OG_TRY(og_check_tensor_of(op, name, w, 1, OG_DTS_FLOATING64));
    OG_TRY(check_shape(op, name, w, ndims, nR, "the normalized shape"));
    return check_dtype2(op, name, w, input->dtype, ACL_FLOAT,
                        "it must be the input's dtype or FLOAT");
}

/// [A..., 1 x nR]
static void stat_shape(const aclTensor *x, int nA, int64_t *dims) {
    for (int d = 0; d < x->ndim; d++) dims[d] = d < nA ? x->dims[d] : 1;
}

/// A backward's saved statistic: one element per row (any shape with that many elements).
static aclnnStatus check_saved_stat(const og_opdesc *op, const char *name, const aclTensor *t,
                                    int64_t rows) {
    OG_TRY(og_check_tensor_of(op, name, t, 0, OG_DTS_FLOATING64));
    if (t->numel != rows)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has %lld elements but the input has %lld rows (the "
                       "product of its dims before the normalized ones): one per row",
                       op->name, name, (long long)t->numel, (long long)rows);
    return ACLNN_SUCCESS;
}

// ---------------------------------------------------------------------------------------------
// LayerNorm

aclnnStatus aclnnLayerNormGetWorkspaceSize(
    const aclTensor *input, const aclIntArray *normalizedShape, const aclTensor *weightOptional,
    const aclTensor *biasOptional, double eps, aclTensor *out, aclTensor *meanOutOptional,
    aclTensor *rstdOutOptional, uint64_t *workspaceSize, aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_LayerNorm;
    static const char *const req[3] = {"input", "normalizedShape", "out"};
    const void *ptrs[3] = {input, normalizedShape, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 3, req, ptrs));
    OG_TRY(og_check_tensor_of(op, "input", input, 1, OG_DTS_FLOATING64));
    OG_TRY(check_normalized(op, normalizedShape, input, "input"));
    int nR = (int)normalizedShape->size, nA = input->ndim - nR;
    const int64_t *ndims = input->dims + nA;
    if (weightOptional)
        OG_TRY(check_weight(op, "weightOptional", weightOptional, input, ndims, nR));
    if (biasOptional) OG_TRY(check_weight(op, "biasOptional", biasOptional, input, ndims, nR));
    if (weightOptional && biasOptional)
        OG_TRY(og_check_same_dtype(op, "weightOptional", weightOptional, "biasOptional",
                                   biasOptional));
    OG_TRY(og_check_tensor_of(op, "out", out, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_same_shape(op, "input", input, "out", out));
    OG_TRY(og_check_same_dtype(op, "input", input, "out", out));
    int64_t sdims[OG_MAX_DIMS];
    stat_shape(input, nA, sdims);
    const aclTensor *stats_t[2] = {meanOutOptional, rstdOutOptional};
    static const char *const stat_names[2] = {"meanOutOptional", "rstdOutOptional"};
    for (int k = 0; k < 2; k++) {
        if (!stats_t[k]) continue;
        OG_TRY(og_check_tensor_of(op, stat_names[k], stats_t[k], 1, OG_DTS_FLOATING64));
        OG_TRY(check_shape(op, stat_names[k], stats_t[k], sdims, input->ndim,
                           "the input's leading dims, then a 1 per normalized dim"));
        OG_TRY(check_dtype2(op, stat_names[k], stats_t[k], input->dtype, ACL_FLOAT,
                            "it must be the input's dtype or FLOAT"));
    }
    const aclTensor *io[6] = {input, weightOptional,  biasOptional,
                              out,   meanOutOptional, rstdOutOptional};
    static const char *const names[6] = {"input", "weightOptional",  "biasOptional",
                                         "out",   "meanOutOptional", "rstdOutOptional"};
    if (input->numel > 0) OG_TRY(check_memory_given(op, 3, 3, io, names));
    norm_build b;
    build_init(&b, op, 3, 3, io, input, nA);
    if (input->numel == 0) return finish(&b, workspaceSize, executor);
    og_norm_params prm = {.eps = eps,
                          .has_gamma = weightOptional != NULL,
                          .has_beta = biasOptional != NULL,
                          .stats_mode = !meanOutOptional && rstdOutOptional ? 1 : 0};
    og_rows_op r = {.kernels = og_layer_norm_fwd_kernels,
                    .kernels64 = og_layer_norm_fwd_kernels64,
                    .params = &prm,
                    .params_size = sizeof prm,
                    .prefetch = true};
    rows_shape(&b, &r);
    if (!add_row(&b, &r, input, 0, nA, false)) return view_failed(&b);
    for (int k = 1; k < 3; k++) {
        if (!io[k]) continue;
        if (!add_row(&b, &r, io[k], k, 0, false)) return view_failed(&b);
    }
    if (!add_row(&b, &r, out, 3, nA, true)) return view_failed(&b);
    for (int k = 0; k < 2; k++) {
        if (!stats_t[k]) continue;
        if (!add_stat(&b, &r, stats_t[k], 4 + k)) return view_failed(&b);
    }
    og_prog_rows(&b.p, &r);
    return finish(&b, workspaceSize, executor);
}

// ---------------------------------------------------------------------------------------------
// LayerNormBackward

aclnnStatus aclnnLayerNormBackwardGetWorkspaceSize(
    const aclTensor *gradOut, const aclTensor *input, const aclIntArray *normalizedShape,
    const aclTensor *mean, const aclTensor *rstd, const aclTensor *weightOptional,
    const aclTensor *biasOptional, const aclBoolArray *outputMask, aclTensor *gradInputOut,
    aclTensor *gradWeightOut, aclTensor *gradBiasOut, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_LayerNormBackward;
    static const char *const req[6] = {"gradOut", "input", "normalizedShape",
                                       "mean",    "rstd",  "outputMask"};
    const void *ptrs[6] = {gradOut, input, normalizedShape, mean, rstd, outputMask};
    OG_TRY(og_check_args(op, workspaceSize, executor, 6, req, ptrs));
    OG_TRY(check_live(op, "outputMask", outputMask, OG_OBJ_BOOL_ARRAY));
    if (outputMask->size != 3)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: outputMask has %llu entries; it needs 3 (gradInputOut, "
                       "gradWeightOut, gradBiasOut)",
                       op->name, (unsigned long long)outputMask->size);
    aclTensor *outs_t[3] = {gradInputOut, gradWeightOut, gradBiasOut};
    static const char *const out_names[3] = {"gradInputOut", "gradWeightOut", "gradBiasOut"};
    bool want[3];
    for (int k = 0; k < 3; k++) {
        want[k] = outputMask->values[k];
        if (want[k] && !outs_t[k])
            return og_fail(ACLNN_ERR_PARAM_NULLPTR,
                           "%sGetWorkspaceSize: outputMask[%d] is true but %s is NULL", op->name, k,
                           out_names[k]);
    }
    OG_TRY(og_check_tensor_of(op, "gradOut", gradOut, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "input", input, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_same_shape(op, "gradOut", gradOut, "input", input));
    OG_TRY(check_normalized(op, normalizedShape, input, "input"));
    int nR = (int)normalizedShape->size, nA = input->ndim - nR;
    const int64_t *ndims = input->dims + nA;
    int64_t rows = 1;
    for (int d = 0; d < nA; d++) rows *= input->dims[d];
    OG_TRY(check_saved_stat(op, "mean", mean, rows));
    OG_TRY(check_saved_stat(op, "rstd", rstd, rows));
    OG_TRY(og_check_same_dtype(op, "mean", mean, "rstd", rstd));
    OG_TRY(check_dtype2(op, "mean", mean, input->dtype, ACL_FLOAT,
                        "it must be the input's dtype or FLOAT"));
    if (weightOptional)
        OG_TRY(check_weight(op, "weightOptional", weightOptional, input, ndims, nR));
    if (biasOptional) OG_TRY(check_weight(op, "biasOptional", biasOptional, input, ndims, nR));
    aclDataType wdt = weightOptional ? weightOptional->dtype : input->dtype;
    for (int k = 0; k < 3; k++) {
        if (!want[k]) continue;
        OG_TRY(og_check_tensor_of(op, out_names[k], outs_t[k], 1, OG_DTS_FLOATING64));
        if (k == 0) {
            OG_TRY(og_check_same_shape(op, "input", input, out_names[k], outs_t[k]));
            OG_TRY(og_check_same_dtype(op, "input", input, out_names[k], outs_t[k]));
        } else {
            OG_TRY(check_shape(op, out_names[k], outs_t[k], ndims, nR, "normalizedShape"));
            OG_TRY(check_dtype2(op, out_names[k], outs_t[k], wdt, wdt,
                                "it must be the weight's dtype (the input's without a weight)"));
        }
    }
    const aclTensor *io[9] = {gradOut,
                              input,
                              mean,
                              rstd,
                              weightOptional,
                              biasOptional,
                              want[0] ? gradInputOut : NULL,
                              want[1] ? gradWeightOut : NULL,
                              want[2] ? gradBiasOut : NULL};
    static const char *const names[9] = {"gradOut",      "input",          "mean",
                                         "rstd",         "weightOptional", "biasOptional",
                                         "gradInputOut", "gradWeightOut",  "gradBiasOut"};
    if (input->numel > 0 || want[1] || want[2]) OG_TRY(check_memory_given(op, 6, 3, io, names));
    norm_build b;
    build_init(&b, op, 6, 3, io, input, nA);
    if (b.R == 0 || !(want[0] || want[1] || want[2])) return finish(&b, workspaceSize, executor);
    og_norm_params prm = {.has_gamma = weightOptional != NULL,
                          .want_dx = want[0],
                          .want_dgamma = want[1],
                          .want_dbeta = want[2]};
    og_rows_op r = {.kernels = og_layer_norm_bwd_kernels,
                    .kernels64 = og_layer_norm_bwd_kernels64,
                    .acc_kernels = og_layer_norm_bwd_acc_kernels,
                    .acc_kernels64 = og_layer_norm_bwd_acc_kernels64,
                    .params = &prm,
                    .params_size = sizeof prm,
                    .stats_in = true};
    rows_shape(&b, &r);
    const aclTensor *row_ins[3] = {gradOut, input, weightOptional};
    const int row_slots[3] = {0, 1, 4};
    for (int k = 0; k < 3; k++) {
        if (!row_ins[k]) continue;
        if (!add_row(&b, &r, row_ins[k], row_slots[k], k < 2 ? nA : 0, false))
            return view_failed(&b);
    }
    for (int k = 0; k < 2; k++) {
        if (!add_stat(&b, &r, k ? rstd : mean, 2 + k)) return view_failed(&b);
    }
    if (want[0]) {
        if (!add_row(&b, &r, gradInputOut, 6, nA, true)) return view_failed(&b);
    }
    const aclTensor *acc_t[2];
    int acc_for[2];
    for (int k = 1; k < 3; k++) {
        if (!want[k]) continue;
        int s = acc_temp(&b, ndims, nR, &acc_t[r.nacc]);
        if (s < 0) return finish(&b, workspaceSize, executor); // the builder's failure
        acc_for[r.nacc] = k;
        r.acc_slot[r.nacc++] = s;
    }
    if (rows > 0) og_prog_rows(&b.p, &r);
    for (int k = 0; k < r.nacc; k++) // over no rows: +0 sums
        sum_groups(&b, acc_t[k], r.acc_slot[k], outs_t[acc_for[k]], 6 + acc_for[k]);
    return finish(&b, workspaceSize, executor);
}

// ---------------------------------------------------------------------------------------------
// RmsNorm

aclnnStatus aclnnRmsNormGetWorkspaceSize(const aclTensor *x, const aclTensor *gamma, double epsilon,
                                         const aclTensor *yOut, const aclTensor *rstdOut,
                                         uint64_t *workspaceSize, aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_RmsNorm;
    static const char *const names[4] = {"x", "gamma", "yOut", "rstdOut"};
    const aclTensor *io[4] = {x, gamma, yOut, rstdOut};
    const void *ptrs[4] = {x, gamma, yOut, rstdOut};
    OG_TRY(og_check_args(op, workspaceSize, executor, 4, names, ptrs));
    OG_TRY(og_check_tensor_of(op, "x", x, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "gamma", gamma, 1, OG_DTS_FLOATING64));
    if (gamma->ndim > x->ndim)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: gamma has rank %d, more than x's %d: gamma must be x's "
                       "trailing dims",
                       op->name, gamma->ndim, x->ndim);
    int nR = gamma->ndim, nA = x->ndim - nR;
    OG_TRY(check_shape(op, "gamma", gamma, x->dims + nA, nR, "x's trailing dims"));
    OG_TRY(check_dtype2(op, "gamma", gamma, x->dtype, ACL_FLOAT, "it must be x's dtype or FLOAT"));
    OG_TRY(og_check_tensor_of(op, "yOut", yOut, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_same_shape(op, "x", x, "yOut", yOut));
    OG_TRY(og_check_same_dtype(op, "x", x, "yOut", yOut));
    OG_TRY(og_check_tensor_of(op, "rstdOut", rstdOut, 1, OG_DTS_FLOATING64));
    int64_t sdims[OG_MAX_DIMS];
    stat_shape(x, nA, sdims);
    OG_TRY(check_shape(op, "rstdOut", rstdOut, sdims, x->ndim,
                       "x's leading dims, then a 1 per dim of gamma"));
    OG_TRY(check_dtype2(op, "rstdOut", rstdOut, ACL_FLOAT, stat_dtype(x), STAT_RULE));
    if (x->numel > 0) OG_TRY(og_check_io_memory(op, 2, io, 2, io + 2, names));
    norm_build b;
    build_init(&b, op, 2, 2, io, x, nA);
    if (x->numel == 0) return finish(&b, workspaceSize, executor);
    og_norm_params prm = {.eps = epsilon, .has_gamma = 1};
    og_rows_op r = {.kernels = og_rms_norm_fwd_kernels,
                    .kernels64 = og_rms_norm_fwd_kernels64,
                    .params = &prm,
                    .params_size = sizeof prm,
                    .prefetch = true};
    rows_shape(&b, &r);
    if (!add_row(&b, &r, x, 0, nA, false)) return view_failed(&b);
    if (!add_row(&b, &r, gamma, 1, 0, false)) return view_failed(&b);
    if (!add_row(&b, &r, yOut, 2, nA, true)) return view_failed(&b);
    if (!add_stat(&b, &r, rstdOut, 3)) return view_failed(&b);
    og_prog_rows(&b.p, &r);
    return finish(&b, workspaceSize, executor);
}

// ---------------------------------------------------------------------------------------------
// RmsNormGrad

aclnnStatus aclnnRmsNormGradGetWorkspaceSize(const aclTensor *dy, const aclTensor *x,
                                             const aclTensor *rstd, const aclTensor *gamma,
                                             const aclTensor *dxOut, const aclTensor *dgammaOut,
                                             uint64_t *workspaceSize, aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_RmsNormGrad;
    static const char *const names[6] = {"dy", "x", "rstd", "gamma", "dxOut", "dgammaOut"};
    const aclTensor *io[6] = {dy, x, rstd, gamma, dxOut, dgammaOut};
    const void *ptrs[6] = {dy, x, rstd, gamma, dxOut, dgammaOut};
    OG_TRY(og_check_args(op, workspaceSize, executor, 6, names, ptrs));
    OG_TRY(og_check_tensor_of(op, "dy", dy, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "x", x, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_same_shape(op, "dy", dy, "x", x));
    OG_TRY(og_check_tensor_of(op, "gamma", gamma, 1, OG_DTS_FLOATING64));
    if (gamma->ndim > x->ndim)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: gamma has rank %d, more than x's %d: gamma must be x's "
                       "trailing dims",
                       op->name, gamma->ndim, x->ndim);
    int nR = gamma->ndim, nA = x->ndim - nR;
    OG_TRY(check_shape(op, "gamma", gamma, x->dims + nA, nR, "x's trailing dims"));
    OG_TRY(check_dtype2(op, "gamma", gamma, x->dtype, ACL_FLOAT, "it must be x's dtype or FLOAT"));
    int64_t rows = 1;
    for (int d = 0; d < nA; d++) rows *= x->dims[d];
    OG_TRY(check_saved_stat(op, "rstd", rstd, rows));
    OG_TRY(check_dtype2(op, "rstd", rstd, ACL_FLOAT, stat_dtype(x), STAT_RULE));
    OG_TRY(og_check_tensor_of(op, "dxOut", dxOut, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_same_shape(op, "x", x, "dxOut", dxOut));
    OG_TRY(og_check_same_dtype(op, "x", x, "dxOut", dxOut));
    OG_TRY(og_check_tensor_of(op, "dgammaOut", dgammaOut, 1, OG_DTS_FLOATING64));
    OG_TRY(check_shape(op, "dgammaOut", dgammaOut, gamma->dims, nR, "gamma's shape"));
    OG_TRY(check_dtype2(op, "dgammaOut", dgammaOut, ACL_FLOAT, stat_dtype(x), STAT_RULE));
    if (x->numel > 0 || gamma->numel > 0) OG_TRY(og_check_io_memory(op, 4, io, 2, io + 4, names));
    norm_build b;
    build_init(&b, op, 4, 2, io, x, nA);
    if (b.R == 0) return finish(&b, workspaceSize, executor);
    og_norm_params prm = {.has_gamma = 1, .want_dx = 1, .want_dgamma = 1};
    og_rows_op r = {.kernels = og_rms_norm_bwd_kernels,
                    .kernels64 = og_rms_norm_bwd_kernels64,
                    .acc_kernels = og_rms_norm_bwd_acc_kernels,
                    .acc_kernels64 = og_rms_norm_bwd_acc_kernels64,
                    .params = &prm,
                    .params_size = sizeof prm,
                    .stats_in = true};
    rows_shape(&b, &r);
    const aclTensor *row_ins[3] = {dy, x, gamma};
    const int row_slots[3] = {0, 1, 3};
    for (int k = 0; k < 3; k++) {
        if (!add_row(&b, &r, row_ins[k], row_slots[k], k < 2 ? nA : 0, false))
            return view_failed(&b);
    }
    if (!add_stat(&b, &r, rstd, 2)) return view_failed(&b);
    if (!add_row(&b, &r, dxOut, 4, nA, true)) return view_failed(&b);
    const aclTensor *acc;
    int s = acc_temp(&b, gamma->dims, nR, &acc);
    if (s < 0) return finish(&b, workspaceSize, executor);
    r.acc_slot[r.nacc++] = s;
    if (rows > 0) og_prog_rows(&b.p, &r);
    sum_groups(&b, acc, s, dgammaOut, 5);
    return finish(&b, workspaceSize, executor);
}

// ---------------------------------------------------------------------------------------------
// The residual forms: AddLayerNorm, AddRmsNorm (forwards), AddLayerNormGrad

/// x1, x2 (same shape, rank >= gamma's), gamma, and the trailing-dims split; *nA out.
static aclnnStatus check_residual(const og_opdesc *op, const aclTensor *x1, const aclTensor *x2,
                                  const aclTensor *gamma, int *nA) {
    OG_TRY(og_check_tensor_of(op, "x1", x1, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "x2", x2, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_same_shape(op, "x1", x1, "x2", x2));
    OG_TRY(og_check_tensor_of(op, "gamma", gamma, 1, OG_DTS_FLOATING64));
    if (gamma->ndim > x1->ndim)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: gamma has rank %d, more than x1's %d: gamma must be "
                       "x1's trailing dims",
                       op->name, gamma->ndim, x1->ndim);
    *nA = x1->ndim - gamma->ndim;
    OG_TRY(check_shape(op, "gamma", gamma, x1->dims + *nA, gamma->ndim, "x1's trailing dims"));
    return check_dtype2(op, "gamma", gamma, x1->dtype, ACL_FLOAT, "it must be x1's dtype or FLOAT");
}

/// A forward's FLOAT statistic [A..., 1...] at x1's rank.
static aclnnStatus check_stat_out(const og_opdesc *op, const char *name, const aclTensor *t,
                                  const aclTensor *x1, int nA) {
    int64_t sdims[OG_MAX_DIMS];
    stat_shape(x1, nA, sdims);
    OG_TRY(og_check_tensor_of(op, name, t, 1, OG_DTS_FLOATING64));
    OG_TRY(
        check_shape(op, name, t, sdims, x1->ndim, "x1's leading dims, then a 1 per dim of gamma"));
    return check_dtype2(op, name, t, ACL_FLOAT, stat_dtype(x1), STAT_RULE);
}

aclnnStatus aclnnAddLayerNormGetWorkspaceSize(const aclTensor *x1, const aclTensor *x2,
                                              const aclTensor *gamma, const aclTensor *beta,
                                              const aclTensor *biasOptional, double epsilon,
                                              bool additionalOutput, const aclTensor *yOut,
                                              const aclTensor *meanOut, const aclTensor *rstdOut,
                                              const aclTensor *xOut, uint64_t *workspaceSize,
                                              aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_AddLayerNorm;
    static const char *const req[7] = {"x1", "x2", "gamma", "beta", "yOut", "meanOut", "rstdOut"};
    const void *ptrs[7] = {x1, x2, gamma, beta, yOut, meanOut, rstdOut};
    OG_TRY(og_check_args(op, workspaceSize, executor, 7, req, ptrs));
    if (additionalOutput && !xOut)
        return og_fail(ACLNN_ERR_PARAM_NULLPTR,
                       "%sGetWorkspaceSize: additionalOutput is true but xOut is NULL", op->name);
    int nA;
    OG_TRY(check_residual(op, x1, x2, gamma, &nA));
    int nR = gamma->ndim;
    OG_TRY(check_weight(op, "beta", beta, x1, x1->dims + nA, nR));
    if (biasOptional) {
        OG_TRY(og_check_tensor_of(op, "biasOptional", biasOptional, 1, OG_DTS_FLOATING64));
        bool like_gamma = same_dims(biasOptional, gamma);
        bool like_x = same_dims(biasOptional, x1);
        if (!like_gamma && !like_x) {
            char a[160];
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: biasOptional has shape %s; it must be gamma's or "
                           "x1's",
                           op->name,
                           og_shape_str(biasOptional->dims, biasOptional->ndim, a, sizeof a));
        }
    }
    OG_TRY(og_check_tensor_of(op, "yOut", yOut, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_same_shape(op, "x1", x1, "yOut", yOut));
    OG_TRY(og_check_same_dtype(op, "x1", x1, "yOut", yOut));
    OG_TRY(check_stat_out(op, "meanOut", meanOut, x1, nA));
    OG_TRY(check_stat_out(op, "rstdOut", rstdOut, x1, nA));
    const aclTensor *xo = additionalOutput ? xOut : NULL;
    if (xo) {
        OG_TRY(og_check_tensor_of(op, "xOut", xo, 1, OG_DTS_FLOATING64));
        OG_TRY(og_check_same_shape(op, "x1", x1, "xOut", xo));
        OG_TRY(og_check_same_dtype(op, "x1", x1, "xOut", xo));
    }
    const aclTensor *io[9] = {x1, x2, gamma, beta, biasOptional, yOut, meanOut, rstdOut, xo};
    static const char *const names[9] = {"x1",   "x2",      "gamma",   "beta", "biasOptional",
                                         "yOut", "meanOut", "rstdOut", "xOut"};
    if (x1->numel > 0) OG_TRY(check_memory_given(op, 5, 4, io, names));
    norm_build b;
    build_init(&b, op, 5, 4, io, x1, nA);
    if (x1->numel == 0) return finish(&b, workspaceSize, executor);
    og_norm_params prm = {.eps = epsilon,
                          .has_gamma = 1,
                          .has_beta = 1,
                          .add_mode = biasOptional ? 3 : 2,
                          .want_xout = xo != NULL};
    og_rows_op r = {.kernels = og_add_layer_norm_fwd_kernels,
                    .kernels64 = og_add_layer_norm_fwd_kernels64,
                    .params = &prm,
                    .params_size = sizeof prm,
                    .prefetch = true};
    rows_shape(&b, &r);
    const aclTensor *ins[5] = {x1, x2, biasOptional, gamma, beta};
    const int slots[5] = {0, 1, 4, 2, 3};
    for (int k = 0; k < 5; k++) {
        if (!ins[k]) continue;
        int lead = k < 2 || (k == 2 && biasOptional->ndim == x1->ndim && nA > 0) ? nA : 0;
        if (k == 2 && same_dims(biasOptional, gamma)) lead = 0;
        if (!add_row(&b, &r, ins[k], slots[k], lead, false)) return view_failed(&b);
    }
    if (!add_row(&b, &r, yOut, 5, nA, true)) return view_failed(&b);
    if (xo) {
        if (!add_row(&b, &r, xo, 8, nA, true)) return view_failed(&b);
    }
    for (int k = 0; k < 2; k++) {
        if (!add_stat(&b, &r, k ? rstdOut : meanOut, 6 + k)) return view_failed(&b);
    }
    og_prog_rows(&b.p, &r);
    return finish(&b, workspaceSize, executor);
}

aclnnStatus aclnnAddRmsNormGetWorkspaceSize(const aclTensor *x1, const aclTensor *x2,
                                            const aclTensor *gamma, double epsilon, aclTensor *yOut,
                                            aclTensor *rstdOut, aclTensor *xOut,
                                            uint64_t *workspaceSize, aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_AddRmsNorm;
    static const char *const names[6] = {"x1", "x2", "gamma", "yOut", "rstdOut", "xOut"};
    const aclTensor *io[6] = {x1, x2, gamma, yOut, rstdOut, xOut};
    const void *ptrs[6] = {x1, x2, gamma, yOut, rstdOut, xOut};
    OG_TRY(og_check_args(op, workspaceSize, executor, 6, names, ptrs));
    int nA;
    OG_TRY(check_residual(op, x1, x2, gamma, &nA));
    OG_TRY(og_check_tensor_of(op, "yOut", yOut, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_same_shape(op, "x1", x1, "yOut", yOut));
    OG_TRY(og_check_same_dtype(op, "x1", x1, "yOut", yOut));
    OG_TRY(check_stat_out(op, "rstdOut", rstdOut, x1, nA));
    OG_TRY(og_check_tensor_of(op, "xOut", xOut, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_same_shape(op, "x1", x1, "xOut", xOut));
    OG_TRY(og_check_same_dtype(op, "x1", x1, "xOut", xOut));
    if (x1->numel > 0) OG_TRY(og_check_io_memory(op, 3, io, 3, io + 3, names));
    norm_build b;
    build_init(&b, op, 3, 3, io, x1, nA);
    if (x1->numel == 0) return finish(&b, workspaceSize, executor);
    og_norm_params prm = {.eps = epsilon, .has_gamma = 1, .add_mode = 2, .want_xout = 1};
    og_rows_op r = {.kernels = og_add_rms_norm_fwd_kernels,
                    .kernels64 = og_add_rms_norm_fwd_kernels64,
                    .params = &prm,
                    .params_size = sizeof prm,
                    .prefetch = true};
    rows_shape(&b, &r);
    for (int k = 0; k < 3; k++) {
        if (!add_row(&b, &r, io[k], k, k < 2 ? nA : 0, false)) return view_failed(&b);
    }
    const int out_slots[2] = {3, 5};
    const aclTensor *outs[2] = {yOut, xOut};
    for (int k = 0; k < 2; k++) {
        if (!add_row(&b, &r, outs[k], out_slots[k], nA, true)) return view_failed(&b);
    }
    if (!add_stat(&b, &r, rstdOut, 4)) return view_failed(&b);
    og_prog_rows(&b.p, &r);
    return finish(&b, workspaceSize, executor);
}

aclnnStatus aclnnAddLayerNormGradGetWorkspaceSize(
    const aclTensor *dy, const aclTensor *x1, const aclTensor *x2, const aclTensor *rstd,
    const aclTensor *mean, const aclTensor *gamma, const aclTensor *dsumOptional,
    const aclTensor *dxOut, const aclTensor *dgammaOut, const aclTensor *dbetaOut,
    uint64_t *workspaceSize, aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_AddLayerNormGrad;
    static const char *const req[9] = {"dy",    "x1",    "x2",        "rstd",    "mean",
                                       "gamma", "dxOut", "dgammaOut", "dbetaOut"};
    const void *ptrs[9] = {dy, x1, x2, rstd, mean, gamma, dxOut, dgammaOut, dbetaOut};
    OG_TRY(og_check_args(op, workspaceSize, executor, 9, req, ptrs));
    int nA;
    OG_TRY(check_residual(op, x1, x2, gamma, &nA));
    int nR = gamma->ndim;
    OG_TRY(og_check_tensor_of(op, "dy", dy, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_same_shape(op, "dy", dy, "x1", x1));
    int64_t rows = 1;
    for (int d = 0; d < nA; d++) rows *= x1->dims[d];
    OG_TRY(check_saved_stat(op, "rstd", rstd, rows));
    OG_TRY(check_saved_stat(op, "mean", mean, rows));
    OG_TRY(og_check_same_dtype(op, "mean", mean, "rstd", rstd));
    OG_TRY(check_dtype2(op, "rstd", rstd, x1->dtype, ACL_FLOAT, "it must be x1's dtype or FLOAT"));
    if (dsumOptional) {
        OG_TRY(og_check_tensor_of(op, "dsumOptional", dsumOptional, 1, OG_DTS_FLOATING64));
        OG_TRY(og_check_same_shape(op, "dy", dy, "dsumOptional", dsumOptional));
    }
    OG_TRY(og_check_tensor_of(op, "dxOut", dxOut, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_same_shape(op, "x1", x1, "dxOut", dxOut));
    OG_TRY(og_check_same_dtype(op, "x1", x1, "dxOut", dxOut));
    const aclTensor *gouts[2] = {dgammaOut, dbetaOut};
    static const char *const gnames[2] = {"dgammaOut", "dbetaOut"};
    for (int k = 0; k < 2; k++) {
        OG_TRY(og_check_tensor_of(op, gnames[k], gouts[k], 1, OG_DTS_FLOATING64));
        OG_TRY(check_shape(op, gnames[k], gouts[k], gamma->dims, nR, "gamma's shape"));
        OG_TRY(check_dtype2(op, gnames[k], gouts[k], ACL_FLOAT, gamma->dtype,
                            "it must be FLOAT or gamma's dtype"));
    }
    const aclTensor *io[10] = {dy,    x1,           x2,    rstd,      mean,
                               gamma, dsumOptional, dxOut, dgammaOut, dbetaOut};
    static const char *const names[10] = {"dy",        "x1",      "x2",           "rstd",
                                          "mean",      "gamma",   "dsumOptional", "dxOut",
                                          "dgammaOut", "dbetaOut"};
    OG_TRY(check_memory_given(op, 7, 3, io, names)); // the 3 outputs are required
    // The kernel writes x1 + x2 - mean into dxOut's row before it reads dy, and adds dsum last:
    // dxOut may share x1's or x2's memory (read first), not dy's or dsum's.
    const aclTensor *late[2] = {dy, dsumOptional};
    for (int k = 0; k < 2; k++)
        if (late[k] && late[k]->numel > 0 && og_tensors_overlap(dxOut, late[k]))
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: dxOut shares memory with %s, which it may not "
                           "(dxOut is written before %s is read); it may share x1's or x2's",
                           op->name, k ? "dsumOptional" : "dy", k ? "dsumOptional" : "dy");
    norm_build b;
    build_init(&b, op, 7, 3, io, x1, nA);
    if (b.R == 0) return finish(&b, workspaceSize, executor);
    og_norm_params prm = {.has_gamma = 1,
                          .want_dx = 1,
                          .want_dgamma = 1,
                          .want_dbeta = 1,
                          .has_dsum = dsumOptional != NULL};
    og_rows_op r = {.kernels = og_add_layer_norm_bwd_kernels,
                    .kernels64 = og_add_layer_norm_bwd_kernels64,
                    .acc_kernels = og_add_layer_norm_bwd_acc_kernels,
                    .acc_kernels64 = og_add_layer_norm_bwd_acc_kernels64,
                    .params = &prm,
                    .params_size = sizeof prm,
                    .stats_in = true};
    rows_shape(&b, &r);
    const aclTensor *ins[5] = {dy, x1, x2, gamma, dsumOptional};
    const int slots[5] = {0, 1, 2, 5, 6};
    for (int k = 0; k < 5; k++) {
        if (!ins[k]) continue;
        if (!add_row(&b, &r, ins[k], slots[k], k == 3 ? 0 : nA, false)) return view_failed(&b);
    }
    for (int k = 0; k < 2; k++) {
        if (!add_stat(&b, &r, k ? rstd : mean, k ? 3 : 4)) return view_failed(&b);
    }
    if (!add_row(&b, &r, dxOut, 7, nA, true)) return view_failed(&b);
    const aclTensor *acc_t[2];
    for (int k = 0; k < 2; k++) {
        int s = acc_temp(&b, gamma->dims, nR, &acc_t[k]);
        if (s < 0) return finish(&b, workspaceSize, executor);
        r.acc_slot[r.nacc++] = s;
    }
    if (rows > 0) og_prog_rows(&b.p, &r);
    for (int k = 0; k < 2; k++) sum_groups(&b, acc_t[k], r.acc_slot[k], gouts[k], 8 + k);
    return finish(&b, workspaceSize, executor);
}
