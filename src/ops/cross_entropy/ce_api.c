/* aclnnCrossEntropyLoss, aclnnCrossEntropyLossGrad, aclnnNLLLoss, aclnnNLLLossBackward: argument
 * checks and programs on the row engine (kernels: ce_kernel_simd.c). Rules from ops-nn
 * loss/cross_entropy_loss(_grad) and loss/nll_loss(_grad) (docs and op_api).
 *
 * Programs (N rows of C classes; "tview" is the target seen as an fp32 view, ce_kernel.h):
 *   CrossEntropyLoss  ROWS ce_fwd [N, C] -> logProbOut, per-row l_n and w[t_n]; then "none":
 *                     l_n is lossOut itself; "sum": REDUCE l -> lossOut; "mean": REDUCE l, REDUCE
 *                     w, ROWS ce_scalar (divide) -> lossOut.
 *   CrossEntropyLossGrad  coef (the incoming gradient per row, fp32): "none" ROWS ce_scalar
 *                     (copy) of gradLoss [N]; "sum" the same of the 0-d gradLoss; "mean" ROWS
 *                     ce_wt -> w[t_n], REDUCE -> W, ROWS ce_scalar (gradLoss / W); then ROWS
 *                     ce_bwd [N, C] -> out.
 *   NLLLoss / NLLLossBackward: the same with nll_fwd / nll_bwd (no log-softmax).
 * Every sum is the REDUCE engine's fixed order: the same bits on any thread count.
 *
 * float64 (an opgrad extension: ops-nn lists no DOUBLE): when any floating operand is DOUBLE the
 * whole program is: the float64 row kernels, DOUBLE temporaries (so the REDUCE sums in double),
 * every operand converted to double and every output rounded once; the target is then passed
 * as the integer tensor itself (target_view).
 *
 * Statuses: NULLs 161001 (reductionOptional too: a NULL string is refused, not read as "mean");
 * everything else 161002: dtypes, shapes, a reduction string or labelSmoothing out of range, the
 * unsupported zloss. ops-nn reports CrossEntropyLoss's shape, reduction and labelSmoothing errors
 * from its tiling as 561002; here they are phase-1 checks, and every phase-1 failure of the
 * library is 161001 or 161002 (the contract tests/fuzz/fuzz_api.c holds every operator to). */
#include <string.h>

#include "aclnnop/aclnn_cross_entropy_loss.h"
#include "aclnnop/aclnn_cross_entropy_loss_grad.h"
#include "aclnnop/aclnn_nll_loss.h"
#include "aclnnop/aclnn_nll_loss2d.h"
#include "aclnnop/aclnn_nll_loss2d_backward.h"
#include "aclnnop/aclnn_nll_loss_backward.h"
#include "engine/program.h"
#include "ops/common/checks.h"
#include "ops/cross_entropy/ce_kernel.h"

enum { RED_NONE, RED_MEAN, RED_SUM };

// "none" / "mean" / "sum", else 161002 (NULL was refused before).
static aclnnStatus reduction_of(const og_opdesc *op, const char *s, int *red) {
    if (!strcmp(s, "mean"))
        *red = RED_MEAN;
    else if (!strcmp(s, "sum"))
        *red = RED_SUM;
    else if (!strcmp(s, "none"))
        *red = RED_NONE;
    else
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: reductionOptional is \"%s\"; supported: \"none\", "
                       "\"mean\", \"sum\"",
                       op->name, s);
    return ACLNN_SUCCESS;
}

static bool is_int_dtype(aclDataType dt, bool int32_ok) {
    return dt == ACL_INT64 || (int32_ok && dt == ACL_INT32);
}

// target: a live integer tensor ([N], or 0-d when n0d), INT64 (or INT32 when int32_ok).
static aclnnStatus check_target(const og_opdesc *op, const aclTensor *t, int64_t n, bool n0d,
                                bool int32_ok, aclnnStatus shape_status) {
    if (!is_int_dtype(t->dtype, int32_ok))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: target has dtype %s; supported: %s", op->name,
                       og_dtype_name(t->dtype), int32_ok ? "INT64, INT32" : "INT64");
    bool ok = n0d ? t->ndim == 0 : (t->ndim == 1 && t->dims[0] == n);
    if (!ok)
        return og_fail(shape_status,
                       "%sGetWorkspaceSize: target has rank %d (size %lld); it must be %s",
                       op->name, t->ndim, (long long)(t->ndim >= 1 ? t->dims[0] : 1),
                       n0d ? "0-d for a 1-d self" : "[N], N the rows of the input");
    return og_check_fits_block(op, "target", t);
}

// The index space of an operator: [N, C] or [N, C, H, W] (NLLLoss2d), the class axis 1; the
// rows are the other dims, in order.
typedef struct ce_space {
    int ndim, nrow;
    int64_t dims[4], rdims[3];
} ce_space;

static ce_space space_of(int ndim, const int64_t *dims) {
    ce_space s = {.ndim = ndim};
    for (int d = 0; d < ndim; d++) {
        s.dims[d] = dims[d];
        if (d != 1) s.rdims[s.nrow++] = dims[d];
    }
    return s;
}

// A view of dtype `dt` over the space, axis stride 1, `rs` (in elements of dt) over the row dims:
// what the row kernels read the first element (or, fp32, one or two words) of per row
// (ce_kernel.h).
static aclTensor axis_view(const ce_space *s, const int64_t *rs, aclDataType dt) {
    aclTensor v = {.dtype = dt, .format = ACL_FORMAT_ND, .ndim = s->ndim, .numel = 1};
    for (int d = 0, k = 0; d < s->ndim; d++) {
        v.dims[d] = s->dims[d];
        v.strides[d] = d == 1 ? 1 : rs[k++];
        v.numel *= s->dims[d];
    }
    return v;
}

// The weight [C] along the class axis (right-aligned broadcasting would lay it along W).
static aclTensor weight_view(const aclTensor *w, const ce_space *s) {
    aclTensor v = *w;
    v.ndim = s->ndim;
    for (int d = 0; d < s->ndim; d++) {
        v.dims[d] = d == 1 ? w->dims[0] : 1;
        v.strides[d] = d == 1 ? w->strides[0] : 0;
    }
    return v;
}

// The target tensor (its row dims, or 0-d for one row) as such a view: fp32 words, or for a
// float64 program (`wide` DOUBLE) the integer elements themselves, which the row engine hands to
// the kernel as int64 bits (a float view would be converted to double).
static aclTensor target_view(const aclTensor *t, const ce_space *s, aclDataType wide) {
    bool f64 = wide == ACL_DOUBLE;
    int64_t words = f64 ? 1 : (int64_t)aclDataTypeSize(t->dtype) / 4, rs[3] = {0, 0, 0};
    // (a dim of size 1 may have any stride: it is never stepped over)
    for (int k = 0; k < s->nrow; k++)
        rs[k] = t->ndim == s->nrow && t->dims[k] != 1 ? t->strides[k] * words : 0;
    return axis_view(s, rs, f64 ? t->dtype : ACL_FLOAT);
}

// The backward's coefficient temporary (of dtype `wide`): one per row (row-major) or one for all.
static aclTensor coef_view(const ce_space *s, bool per_row, aclDataType wide) {
    int64_t rs[3] = {0, 0, 0}, st = 1;
    for (int k = s->nrow - 1; k >= 0 && per_row; k--) rs[k] = st, st *= s->rdims[k];
    return axis_view(s, rs, wide);
}

// A sum of every element of a temporary into one element.
static void sum_step(og_prog *p, const aclTensor *in, int in_slot, const aclTensor *out,
                     int out_slot) {
    og_reduce_op r = {.kind = OG_RED_SUM,
                      .nin = 1,
                      .in = {in},
                      .in_slot = {in_slot},
                      .ndim = in->ndim,
                      .reduce_mask = (1u << in->ndim) - 1,
                      .out = out,
                      .out_slot = out_slot,
                      .round_in = ACL_FLOAT};
    for (int d = 0; d < in->ndim; d++) r.dims[d] = in->dims[d];
    og_prog_reduce(p, &r);
}

// stats[0] = a (copy) or a / b (div) per element of a, into `out` (a's shape, or one element):
// a row step whose rows are a's elements (a trailing axis of 1); b has one element.
static void scalar_step(og_prog *p, const aclTensor *a, int a_slot, const aclTensor *b, int b_slot,
                        const aclTensor *out, int out_slot, aclDataType wide) {
    bool one = a->numel == 1;
    int nd = one ? 2 : a->ndim + 1;
    aclTensor av = {.dtype = a->dtype, .format = ACL_FORMAT_ND, .ndim = nd, .numel = a->numel};
    aclTensor bv = {
        .dtype = b ? b->dtype : a->dtype, .format = ACL_FORMAT_ND, .ndim = nd, .numel = 1};
    og_rows_op r = {.kernels = og_ce_scalar_kernels,
                    .kernels64 = og_ce_scalar_kernels64,
                    .nin = b ? 2 : 1,
                    .in = {&av, &bv},
                    .in_slot = {a_slot, b_slot},
                    .nstats = 1,
                    .stats = {out},
                    .stats_slot = {out_slot},
                    .ndim = nd,
                    .axis = nd - 1,
                    .compute_dtype = wide};
    for (int d = 0; d < nd; d++) {
        bool last = d == nd - 1;
        av.dims[d] = one || last ? 1 : a->dims[d];
        av.strides[d] = one ? 0 : last ? 1 : a->strides[d];
        bv.dims[d] = 1, bv.strides[d] = 0;
        r.dims[d] = av.dims[d];
    }
    og_ce_params prm = {.div = b != NULL};
    r.params = &prm, r.params_size = sizeof prm;
    og_prog_rows(p, &r);
}

// The weight: NULL, or a live [C] tensor of dtype `want` (FLOAT, or self's for NLL) or `alt`
// (CrossEntropyLoss: DOUBLE too, which makes the program float64).
static aclnnStatus check_weight(const og_opdesc *op, const char *name, const aclTensor *w,
                                int64_t c, aclDataType want, aclDataType alt) {
    if (!w) return ACLNN_SUCCESS;
    OG_TRY(og_check_tensor_of(op, name, w, 0, OG_DTS_FLOATING64));
    if (w->dtype != want && w->dtype != alt)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has dtype %s; it must be %s%s%s", op->name, name,
                       og_dtype_name(w->dtype), og_dtype_name(want), alt != want ? " or " : "",
                       alt != want ? og_dtype_name(alt) : "");
    if (w->ndim != 1 || w->dims[0] != c)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s must be [C] = [%lld] (one weight per class)",
                       op->name, name, (long long)c);
    return ACLNN_SUCCESS;
}

// An output that holds one element per row ([N]) or one element ([1] or 0-d when zero_d_ok).
static aclnnStatus check_loss_shape(const og_opdesc *op, const char *name, const aclTensor *t,
                                    bool per_row, int64_t n, bool zero_d_ok, bool one_d_ok) {
    bool ok = per_row
                  ? (t->ndim == 1 && t->dims[0] == n)
                  : ((zero_d_ok && t->ndim == 0) || (one_d_ok && t->ndim == 1 && t->dims[0] == 1));
    if (!ok)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%sGetWorkspaceSize: %s has rank %d; it must be %s",
                       op->name, name, t->ndim,
                       per_row ? "[N] for reduction none"
                       : zero_d_ok
                           ? (one_d_ok ? "[1] or 0-d for a reduced loss" : "0-d for a reduced loss")
                           : "[1] for a reduced loss");
    return ACLNN_SUCCESS;
}

// The program's computation dtype: DOUBLE when any of its floating operands is (NULLs skipped).
static aclDataType wide_of(int n, const aclTensor *const *ts) {
    for (int k = 0; k < n; k++)
        if (ts[k] && ts[k]->dtype == ACL_DOUBLE) return ACL_DOUBLE;
    return ACL_FLOAT;
}

static aclnnStatus check_smoothing(const og_opdesc *op, double ls) {
    if (!(ls >= 0.0 && ls <= 1.0))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: labelSmoothing is %g; it must be in [0, 1]", op->name,
                       ls);
    return ACLNN_SUCCESS;
}

// ---------------------------------------------------------------------------------------------
// CrossEntropyLoss

aclnnStatus aclnnCrossEntropyLossGetWorkspaceSize(
    const aclTensor *input, const aclTensor *target, const aclTensor *weightOptional,
    char *reductionOptional, int64_t ignoreIndex, double labelSmoothing,
    double lseSquareScaleForZloss, bool returnZloss, const aclTensor *lossOut,
    const aclTensor *logProbOut, const aclTensor *zlossOut, const aclTensor *lseForZlossOut,
    uint64_t *workspaceSize, aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_CrossEntropyLoss;
    static const char *const names[7] = {"input",      "target",   "reductionOptional", "lossOut",
                                         "logProbOut", "zlossOut", "lseForZlossOut"};
    const void *ptrs[7] = {input,      target,   reductionOptional, lossOut,
                           logProbOut, zlossOut, lseForZlossOut};
    OG_TRY(og_check_args(op, workspaceSize, executor, 7, names, ptrs));
    static const char *const tnames[6] = {"input",      "target",   "lossOut",
                                          "logProbOut", "zlossOut", "lseForZlossOut"};
    const aclTensor *all[6] = {input, target, lossOut, logProbOut, zlossOut, lseForZlossOut};
    OG_TRY(og_check_live_tensors(op, 6, tnames, all));
    OG_TRY(og_check_tensor_of(op, "input", input, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "lossOut", lossOut, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "logProbOut", logProbOut, 0, OG_DTS_FLOATING64));
    if (input->ndim != 2 || input->dims[1] <= 0)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: input must be [N, C] with C > 0 (rank %d given)",
                       op->name, input->ndim);
    int64_t n = input->dims[0], c = input->dims[1];
    OG_TRY(check_target(op, target, n, false, true, ACLNN_ERR_PARAM_INVALID));
    OG_TRY(check_weight(op, "weightOptional", weightOptional, c, ACL_FLOAT, ACL_DOUBLE));
    int red = RED_MEAN;
    OG_TRY(reduction_of(op, reductionOptional, &red));
    OG_TRY(check_smoothing(op, labelSmoothing));
    if (lseSquareScaleForZloss != 0.0 || returnZloss)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: the zloss is not supported (lseSquareScaleForZloss "
                       "must be 0 and returnZloss false; zlossOut and lseForZlossOut are not "
                       "written)",
                       op->name);
    OG_TRY(og_check_same_shape(op, "input", input, "logProbOut", logProbOut));
    OG_TRY(check_loss_shape(op, "lossOut", lossOut, red == RED_NONE, n, false, true));
    // the executor's slots: input, target, [weightOptional], lossOut, logProbOut (the zloss
    // tensors are never touched)
    int nin = weightOptional ? 3 : 2;
    const aclTensor *io[5] = {input, target, weightOptional, lossOut, logProbOut};
    const char *io_names[5] = {"input", "target", "weightOptional", "lossOut", "logProbOut"};
    if (!weightOptional)
        for (int k = 2; k < 4; k++) io[k] = io[k + 1], io_names[k] = io_names[k + 1];
    OG_TRY(og_check_io_memory(op, nin, io, 2, io + nin, io_names));

    og_prog p;
    og_prog_init(&p, op, nin, 2, io);
    int s_loss = nin, s_lp = nin + 1;
    aclDataType wide =
        wide_of(4, (const aclTensor *const[]){input, weightOptional, lossOut, logProbOut});
    og_ce_params prm = {.ignore = ignoreIndex,
                        .keep = (float)(1.0 - labelSmoothing),
                        .smooth = (float)(labelSmoothing / (double)c),
                        .keep64 = 1.0 - labelSmoothing,
                        .smooth64 = labelSmoothing / (double)c,
                        .tkind = target->dtype == ACL_INT64 ? OG_CE_T_INT64 : OG_CE_T_INT32,
                        .weighted = weightOptional != NULL};
    ce_space sp = space_of(2, (const int64_t[]){n, c});
    aclTensor tv = target_view(target, &sp, wide);
    og_rows_op r = {.kernels = og_ce_fwd_kernels,
                    .kernels64 = og_ce_fwd_kernels64,
                    .nin = nin,
                    .in = {input, &tv, weightOptional},
                    .in_slot = {0, 1, 2},
                    .nout = 1,
                    .out = {logProbOut},
                    .out_slot = {s_lp},
                    .ndim = 2,
                    .dims = {n, c},
                    .axis = 1,
                    .params = &prm,
                    .params_size = sizeof prm,
                    .prefetch = true,
                    .compute_dtype = wide};
    int64_t dn[1] = {n}, d1[1] = {1};
    if (red == RED_NONE) {
        r.nstats = 1, r.stats[0] = lossOut, r.stats_slot[0] = s_loss;
        og_prog_rows(&p, &r);
        return og_prog_publish(&p, workspaceSize, executor);
    }
    const aclTensor *lt, *wt, *ls, *ws;
    int s_lt = og_prog_temp(&p, wide, 1, dn, &lt);
    int s_wt = og_prog_temp(&p, wide, 1, dn, &wt);
    if (s_lt < 0 || s_wt < 0) return og_prog_publish(&p, workspaceSize, executor);
    r.nstats = 2, r.stats[0] = lt, r.stats[1] = wt, r.stats_slot[0] = s_lt, r.stats_slot[1] = s_wt;
    og_prog_rows(&p, &r);
    if (red == RED_SUM) {
        sum_step(&p, lt, s_lt, lossOut, s_loss);
    } else {
        int s_ls = og_prog_temp(&p, wide, 1, d1, &ls);
        int s_ws = og_prog_temp(&p, wide, 1, d1, &ws);
        if (s_ls < 0 || s_ws < 0) return og_prog_publish(&p, workspaceSize, executor);
        sum_step(&p, lt, s_lt, ls, s_ls);
        sum_step(&p, wt, s_wt, ws, s_ws);
        scalar_step(&p, ls, s_ls, ws, s_ws, lossOut, s_loss, wide);
    }
    return og_prog_publish(&p, workspaceSize, executor);
}

// ---------------------------------------------------------------------------------------------
// The backwards share the coefficient steps: coef = g_n (none), g (sum), g / W (mean), W the
// sum of w[t_n] over the rows not ignored (computed here for CrossEntropyLossGrad, given as
// totalWeight to NLLLossBackward). Returns the coef slot and its view for the main step.
static int coef_steps(og_prog *p, int red, const aclTensor *g, int s_g, const aclTensor *w_total,
                      int s_w_total, const ce_space *sp, aclDataType wide, aclTensor *view) {
    const aclTensor *coef;
    static const int64_t one[1] = {1};
    bool per_row = red == RED_NONE;
    int s_coef = og_prog_temp(p, wide, per_row ? sp->nrow : 1, per_row ? sp->rdims : one, &coef);
    if (s_coef < 0) return -1;
    if (red == RED_MEAN)
        scalar_step(p, g, s_g, w_total, s_w_total, coef, s_coef, wide);
    else
        scalar_step(p, g, s_g, NULL, 0, coef, s_coef, wide);
    *view = coef_view(sp, per_row, wide);
    return s_coef;
}

aclnnStatus aclnnCrossEntropyLossGradGetWorkspaceSize(
    const aclTensor *gradLoss, const aclTensor *logProb, const aclTensor *target,
    const aclTensor *weightOptional, const aclTensor *gradZlossOptional,
    const aclTensor *lseForZlossOptional, char *reductionOptional, int64_t ignoreIndex,
    double labelSmoothing, double lseSquareScaleForZloss, const aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_CrossEntropyLossGrad;
    static const char *const names[5] = {"gradLoss", "logProb", "target", "reductionOptional",
                                         "out"};
    const void *ptrs[5] = {gradLoss, logProb, target, reductionOptional, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 5, names, ptrs));
    static const char *const tnames[4] = {"gradLoss", "logProb", "target", "out"};
    const aclTensor *all[4] = {gradLoss, logProb, target, out};
    OG_TRY(og_check_live_tensors(op, 4, tnames, all));
    OG_TRY(og_check_tensor_of(op, "gradLoss", gradLoss, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "logProb", logProb, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "out", out, 0, OG_DTS_FLOATING64));
    if (logProb->ndim != 2 || logProb->dims[1] <= 0)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: logProb must be [N, C] with C > 0 (rank %d given)",
                       op->name, logProb->ndim);
    int64_t n = logProb->dims[0], c = logProb->dims[1];
    OG_TRY(check_target(op, target, n, false, false, ACLNN_ERR_PARAM_INVALID));
    OG_TRY(check_weight(op, "weightOptional", weightOptional, c, ACL_FLOAT, ACL_DOUBLE));
    int red = RED_MEAN;
    OG_TRY(reduction_of(op, reductionOptional, &red));
    OG_TRY(check_smoothing(op, labelSmoothing));
    if (gradZlossOptional || lseForZlossOptional || lseSquareScaleForZloss != 0.0)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: the zloss is not supported (gradZlossOptional and "
                       "lseForZlossOptional must be NULL, lseSquareScaleForZloss 0)",
                       op->name);
    OG_TRY(check_loss_shape(op, "gradLoss", gradLoss, red == RED_NONE, n, true, false));
    OG_TRY(og_check_same_shape(op, "logProb", logProb, "out", out));
    int nin = weightOptional ? 4 : 3;
    const aclTensor *io[5] = {gradLoss, logProb, target, weightOptional, out};
    const char *io_names[5] = {"gradLoss", "logProb", "target", "weightOptional", "out"};
    if (!weightOptional) io[3] = out, io_names[3] = "out";
    OG_TRY(og_check_io_memory(op, nin, io, 1, io + nin, io_names));

    og_prog p;
    og_prog_init(&p, op, nin, 1, io);
    int s_out = nin;
    aclDataType wide =
        wide_of(4, (const aclTensor *const[]){gradLoss, logProb, weightOptional, out});
    og_ce_params prm = {.ignore = ignoreIndex,
                        .keep = (float)(1.0 - labelSmoothing),
                        .smooth = (float)(labelSmoothing / (double)c),
                        .keep64 = 1.0 - labelSmoothing,
                        .smooth64 = labelSmoothing / (double)c,
                        .tkind = OG_CE_T_INT64,
                        .weighted = weightOptional != NULL};
    ce_space sp = space_of(2, (const int64_t[]){n, c});
    aclTensor tv = target_view(target, &sp, wide), cv;
    const aclTensor *w_total = NULL;
    int s_w_total = -1;
    if (red == RED_MEAN) { // W = sum of w[t_n]: per-row weights, then their fixed-order sum
        const aclTensor *wt;
        int64_t dn[1] = {n}, d1[1] = {1};
        int s_wt = og_prog_temp(&p, wide, 1, dn, &wt);
        s_w_total = og_prog_temp(&p, wide, 1, d1, &w_total);
        if (s_wt < 0 || s_w_total < 0) return og_prog_publish(&p, workspaceSize, executor);
        og_rows_op rw = {.kernels = og_ce_wt_kernels,
                         .kernels64 = og_ce_wt_kernels64,
                         .nin = weightOptional ? 2 : 1,
                         .in = {&tv, weightOptional},
                         .in_slot = {2, 3},
                         .nstats = 1,
                         .stats = {wt},
                         .stats_slot = {s_wt},
                         .ndim = 2,
                         .dims = {n, c},
                         .axis = 1,
                         .params = &prm,
                         .params_size = sizeof prm,
                         .compute_dtype = wide};
        og_prog_rows(&p, &rw);
        sum_step(&p, wt, s_wt, w_total, s_w_total);
    }
    int s_coef = coef_steps(&p, red, gradLoss, 0, w_total, s_w_total, &sp, wide, &cv);
    if (s_coef < 0) return og_prog_publish(&p, workspaceSize, executor);
    og_rows_op r = {.kernels = og_ce_bwd_kernels,
                    .kernels64 = og_ce_bwd_kernels64,
                    .nin = nin,
                    .in = {logProb, &tv, &cv, weightOptional},
                    .in_slot = {1, 2, s_coef, 3},
                    .nout = 1,
                    .out = {out},
                    .out_slot = {s_out},
                    .ndim = 2,
                    .dims = {n, c},
                    .axis = 1,
                    .params = &prm,
                    .params_size = sizeof prm,
                    .compute_dtype = wide};
    og_prog_rows(&p, &r);
    return og_prog_publish(&p, workspaceSize, executor);
}

// ---------------------------------------------------------------------------------------------
// NLLLoss, NLLLoss2d and their backwards

static aclnnStatus nll_reduction(const og_opdesc *op, int64_t reduction, int *red) {
    if (reduction < 0 || reduction > 2)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: reduction is %lld; supported: 0 (none), 1 (mean), "
                       "2 (sum)",
                       op->name, (long long)reduction);
    *red = reduction == 0 ? RED_NONE : reduction == 1 ? RED_MEAN : RED_SUM;
    return ACLNN_SUCCESS;
}

// self [N, C] or [C] (NLLLoss), [N, C, H, W] (NLLLoss2d), and a target of its row dims (0-d for
// [C]), INT64 or INT32: the index space (a [C] self is one row: [1, C]).
static aclnnStatus nll_shapes(const og_opdesc *op, const aclTensor *self, const aclTensor *target,
                              bool two_d, ce_space *sp) {
    bool ok = two_d ? self->ndim == 4 : (self->ndim == 1 || self->ndim == 2);
    if (!ok)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: self has rank %d; it must be %s", op->name, self->ndim,
                       two_d ? "[N, C, H, W]" : "[N, C] or [C]");
    int64_t c = self->dims[self->ndim == 1 ? 0 : 1];
    if (c <= 0)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%sGetWorkspaceSize: self has C = 0 classes",
                       op->name);
    *sp = self->ndim == 1 ? space_of(2, (const int64_t[]){1, c}) : space_of(self->ndim, self->dims);
    if (!is_int_dtype(target->dtype, true))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: target has dtype %s; supported: INT64, INT32", op->name,
                       og_dtype_name(target->dtype));
    ok = target->ndim == (self->ndim == 1 ? 0 : sp->nrow);
    for (int k = 0; ok && k < target->ndim; k++) ok = target->dims[k] == sp->rdims[k];
    if (!ok)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: target has rank %d; it must be self's shape without "
                       "the class dim 1 (%s)",
                       op->name, target->ndim,
                       two_d             ? "[N, H, W]"
                       : self->ndim == 1 ? "0-d for a [C] self"
                                         : "[N]");
    return og_check_fits_block(op, "target", target);
}

static bool same_dims(const aclTensor *a, const aclTensor *b) {
    if (a->ndim != b->ndim) return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

// A per-row output ([N] or [N, H, W]: the target's shape) or one element ([1] or 0-d).
static aclnnStatus nll_out_shape(const og_opdesc *op, const char *name, const aclTensor *t,
                                 bool per_row, const aclTensor *target) {
    bool ok = per_row ? same_dims(t, target) : t->numel == 1 && t->ndim <= 1;
    if (!ok)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%sGetWorkspaceSize: %s has rank %d; it must be %s",
                       op->name, name, t->ndim,
                       per_row ? "the target's shape for reduction none" : "[1] (or 0-d)");
    return ACLNN_SUCCESS;
}

static aclnnStatus nll_forward(const og_opdesc *op, bool two_d, const aclTensor *self,
                               const aclTensor *target, const aclTensor *weight, int64_t reduction,
                               int64_t ignoreIndex, aclTensor *out, aclTensor *totalWeightOut,
                               uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char *const names[5] = {"self", "target", "weight", "out", "totalWeightOut"};
    const void *ptrs[5] = {self, target, weight, out, totalWeightOut};
    OG_TRY(og_check_args(op, workspaceSize, executor, 5, names, ptrs));
    const aclTensor *io[5] = {self, target, weight, out, totalWeightOut};
    OG_TRY(og_check_live_tensors(op, 5, names, io));
    OG_TRY(og_check_tensor_of(op, "self", self, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "out", out, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "totalWeightOut", totalWeightOut, 0, OG_DTS_FLOATING64));
    ce_space sp;
    OG_TRY(nll_shapes(op, self, target, two_d, &sp));
    OG_TRY(check_weight(op, "weight", weight, sp.dims[1], self->dtype, self->dtype));
    int red = RED_MEAN;
    OG_TRY(nll_reduction(op, reduction, &red));
    bool per_row = red == RED_NONE && self->ndim >= 2;
    OG_TRY(nll_out_shape(op, "out", out, per_row, target));
    OG_TRY(nll_out_shape(op, "totalWeightOut", totalWeightOut, false, target));
    OG_TRY(og_check_io_memory(op, 3, io, 2, io + 3, names));

    og_prog p;
    og_prog_init(&p, op, 3, 2, io);
    aclDataType wide = wide_of(4, (const aclTensor *const[]){self, weight, out, totalWeightOut});
    og_ce_params prm = {.ignore = ignoreIndex,
                        .keep = 1.0f,
                        .keep64 = 1.0,
                        .tkind = target->dtype == ACL_INT64 ? OG_CE_T_INT64 : OG_CE_T_INT32,
                        .weighted = 1};
    aclTensor tv = target_view(target, &sp, wide), wv = weight_view(weight, &sp);
    const aclTensor *lt, *wt, *ls, *ws;
    static const int64_t d1[1] = {1};
    int s_lt = og_prog_temp(&p, wide, sp.nrow, sp.rdims, &lt);
    int s_wt = og_prog_temp(&p, wide, sp.nrow, sp.rdims, &wt);
    if (s_lt < 0 || s_wt < 0) return og_prog_publish(&p, workspaceSize, executor);
    og_rows_op r = {.kernels = og_nll_fwd_kernels,
                    .kernels64 = og_nll_fwd_kernels64,
                    .nin = 3,
                    .in = {self, &tv, &wv},
                    .in_slot = {0, 1, 2},
                    .nstats = 2,
                    .stats = {per_row ? out : lt, wt},
                    .stats_slot = {per_row ? 3 : s_lt, s_wt},
                    .ndim = sp.ndim,
                    .axis = 1,
                    .params = &prm,
                    .params_size = sizeof prm,
                    .compute_dtype = wide};
    for (int d = 0; d < sp.ndim; d++) r.dims[d] = sp.dims[d];
    og_prog_rows(&p, &r);
    sum_step(&p, wt, s_wt, totalWeightOut, 4);
    if (!per_row) {
        if (red != RED_MEAN) { // sum, or none of a 1-d self (one row: its sum)
            sum_step(&p, lt, s_lt, out, 3);
        } else {
            int s_ls = og_prog_temp(&p, wide, 1, d1, &ls);
            int s_ws = og_prog_temp(&p, wide, 1, d1, &ws);
            if (s_ls < 0 || s_ws < 0) return og_prog_publish(&p, workspaceSize, executor);
            sum_step(&p, lt, s_lt, ls, s_ls);
            sum_step(&p, wt, s_wt, ws, s_ws);
            scalar_step(&p, ls, s_ls, ws, s_ws, out, 3, wide);
        }
    }
    return og_prog_publish(&p, workspaceSize, executor);
}

static aclnnStatus nll_backward(const og_opdesc *op, bool two_d, const aclTensor *gradOutput,
                                const aclTensor *self, const aclTensor *target,
                                const aclTensor *weight, int64_t reduction, int64_t ignoreIndex,
                                const aclTensor *totalWeight, aclTensor *out,
                                uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char *const names[6] = {"gradOutput", "self",        "target",
                                         "weight",     "totalWeight", "out"};
    const void *ptrs[6] = {gradOutput, self, target, weight, totalWeight, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 6, names, ptrs));
    const aclTensor *io[6] = {gradOutput, self, target, weight, totalWeight, out};
    OG_TRY(og_check_live_tensors(op, 6, names, io));
    OG_TRY(og_check_tensor_of(op, "gradOutput", gradOutput, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "self", self, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "totalWeight", totalWeight, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "out", out, 0, OG_DTS_FLOATING64));
    ce_space sp;
    OG_TRY(nll_shapes(op, self, target, two_d, &sp));
    OG_TRY(check_weight(op, "weight", weight, sp.dims[1], self->dtype, self->dtype));
    int red = RED_MEAN;
    OG_TRY(nll_reduction(op, reduction, &red));
    bool per_row = red == RED_NONE && self->ndim >= 2;
    OG_TRY(nll_out_shape(op, "gradOutput", gradOutput, per_row, target));
    OG_TRY(nll_out_shape(op, "totalWeight", totalWeight, false, target));
    OG_TRY(og_check_same_shape(op, "self", self, "out", out));
    OG_TRY(og_check_io_memory(op, 5, io, 1, io + 5, names));

    og_prog p;
    og_prog_init(&p, op, 5, 1, io);
    aclDataType wide =
        wide_of(5, (const aclTensor *const[]){gradOutput, self, weight, totalWeight, out});
    og_ce_params prm = {.ignore = ignoreIndex,
                        .keep = 1.0f,
                        .keep64 = 1.0,
                        .tkind = target->dtype == ACL_INT64 ? OG_CE_T_INT64 : OG_CE_T_INT32,
                        .weighted = 1};
    aclTensor tv = target_view(target, &sp, wide), wv = weight_view(weight, &sp), cv;
    // a 1-d self with reduction none is one row: its gradient is the one element's
    int s_coef = coef_steps(&p,
                            per_row           ? RED_NONE
                            : red == RED_NONE ? RED_SUM
                                              : red,
                            gradOutput, 0, totalWeight, 4, &sp, wide, &cv);
    if (s_coef < 0) return og_prog_publish(&p, workspaceSize, executor);
    og_rows_op r = {.kernels = og_nll_bwd_kernels,
                    .kernels64 = og_nll_bwd_kernels64,
                    .nin = 3,
                    .in = {&tv, &cv, &wv},
                    .in_slot = {2, s_coef, 3},
                    .nout = 1,
                    .out = {out},
                    .out_slot = {5},
                    .ndim = sp.ndim,
                    .axis = 1,
                    .params = &prm,
                    .params_size = sizeof prm,
                    .compute_dtype = wide};
    for (int d = 0; d < sp.ndim; d++) r.dims[d] = sp.dims[d];
    og_prog_rows(&p, &r);
    return og_prog_publish(&p, workspaceSize, executor);
}

aclnnStatus aclnnNLLLossGetWorkspaceSize(const aclTensor *self, const aclTensor *target,
                                         const aclTensor *weight, int64_t reduction,
                                         int64_t ignoreIndex, aclTensor *out,
                                         aclTensor *totalWeightOut, uint64_t *workspaceSize,
                                         aclOpExecutor **executor) {
    return nll_forward(&og_op_NLLLoss, false, self, target, weight, reduction, ignoreIndex, out,
                       totalWeightOut, workspaceSize, executor);
}

aclnnStatus aclnnNLLLoss2dGetWorkspaceSize(const aclTensor *self, const aclTensor *target,
                                           const aclTensor *weight, int64_t reduction,
                                           int64_t ignoreIndex, aclTensor *out,
                                           aclTensor *totalWeightOut, uint64_t *workspaceSize,
                                           aclOpExecutor **executor) {
    return nll_forward(&og_op_NLLLoss2d, true, self, target, weight, reduction, ignoreIndex, out,
                       totalWeightOut, workspaceSize, executor);
}

aclnnStatus aclnnNLLLossBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                 const aclTensor *target, const aclTensor *weight,
                                                 int64_t reduction, int64_t ignoreIndex,
                                                 const aclTensor *totalWeight, aclTensor *out,
                                                 uint64_t *workspaceSize,
                                                 aclOpExecutor **executor) {
    return nll_backward(&og_op_NLLLossBackward, false, gradOutput, self, target, weight, reduction,
                        ignoreIndex, totalWeight, out, workspaceSize, executor);
}

aclnnStatus aclnnNLLLoss2dBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                   const aclTensor *self, const aclTensor *target,
                                                   const aclTensor *weight, int64_t reduction,
                                                   int64_t ignoreIndex, aclTensor *totalWeight,
                                                   aclTensor *out, uint64_t *workspaceSize,
                                                   aclOpExecutor **executor) {
    return nll_backward(&og_op_NLLLoss2dBackward, true, gradOutput, self, target, weight, reduction,
                        ignoreIndex, totalWeight, out, workspaceSize, executor);
}
