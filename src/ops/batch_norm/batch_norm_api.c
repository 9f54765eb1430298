/* aclnnBatchNorm and aclnnBatchNormBackward: argument checks and step programs.
 *
 * Per channel c, over the K = N * spatial values of the channel. Rank >= 3 data with a row view
 * (rows_view: rows (n, c) of S values; NCHW and NHWC alike) runs on the row engine:
 *   forward (training)  ROWS over x: per row mean_r and M2_r (x read once); ROWS over the [C, N]
 *                       statistics: Chan's combine in n order -> mean, var; MAPs over [C] for
 *                       invstd, weight * invstd, the saved and the running statistics; ROWS
 *                       y = (x - mean) * (weight * invstd) + bias with the per-channel values as
 *                       row statistics (a MAP where the rows are strided: the same bits).
 *   backward (training) ROWS over dy and x: per row sum dy, sum dy (x - x0), x0; ROWS over [C, N]:
 *                       sum dy and sum dy (x - mean) in n order; dx is affine in dy and x per
 *                       channel: dx = a dy + b (x - mean) + c with a = w invstd,
 *                       b = -a invstd^2 sum(dy (x - mean)) / K, c = -a sum(dy) / K (a MAP over [C]
 *                       makes them), then one ROWS pass (or MAP) over the data.
 *   eval                the final pass with runningMean and 1 / sqrt(runningVar + eps); the
 *                       backward's dx = dy * (w invstd) (a MAP), its sums as in training.
 * Rank 2, S < 8 (and data without a row view): REDUCE steps for the statistics and the sums, MAPs
 * for the data. Every sum has one fixed order (the row kernels', n order, the reduction engine's):
 * the results do not depend on the thread count or the ISA.
 * float64 (a DOUBLE input; opgrad's extension, ops-nn lists no DOUBLE): the same steps on the
 * engines' float64 paths with the kernels' float64 twins (compensated sums) and DOUBLE
 * temporaries (without rows, a narrower gradOut widened into one first): the statistics,
 * coefficients and data passes all in double. */
#include <stdio.h>
#include <string.h>

#include "aclnnop/aclnn_batch_norm.h"
#include "aclnnop/aclnn_batch_norm_backward.h"
#include "engine/program.h"
#include "engine/reduce.h"
#include "ops/batch_norm/batch_norm_common.h"
#include "ops/batch_norm/batch_norm_kernel.h"
#include "ops/batch_norm/batch_norm_rows.h"
#include "ops/common/checks.h"
#include "ops/math/mul/mul_kernel.h"
#include "runtime/error.h"
#include "tensor/dtype.h"

OG_EW_DEFINE_KERNEL_TABLE(bn_sqdev);
OG_EW_DEFINE_KERNEL_TABLE(bn_dymul);
OG_EW_DEFINE_KERNEL_TABLE(bn_norm);
OG_EW_DEFINE_KERNEL_TABLE(bn_norm_nob);
OG_EW_DEFINE_KERNEL_TABLE(bn_dx);
OG_EW_DEFINE_KERNEL64_TABLE(bn_sqdev);
OG_EW_DEFINE_KERNEL64_TABLE(bn_dymul);
OG_EW_DEFINE_KERNEL64_TABLE(bn_norm);
OG_EW_DEFINE_KERNEL64_TABLE(bn_norm_nob);
OG_EW_DEFINE_KERNEL64_TABLE(bn_dx);

aclTensor og_bn_view(const aclTensor *t, int rank) {
    aclTensor v = *t;
    int64_t c = t->ndim ? t->dims[0] : 1, s = t->ndim ? t->strides[0] : 1;
    v.ndim = rank;
    for (int d = 0; d < rank; d++) v.dims[d] = 1, v.strides[d] = 1;
    v.dims[0] = c, v.strides[0] = s;
    return v;
}

void og_bn_map(og_prog *p, const og_ew_compute_fn *k, const og_ew_compute64_fn *k64, int nin,
               const aclTensor *const *in, const int *in_slot, int nout,
               const aclTensor *const *out, const int *out_slot, const og_bn_params *params) {
    bool f64 = false;
    for (int i = 0; i < nin; i++) f64 = f64 || in[i]->dtype == ACL_DOUBLE;
    for (int i = 0; i < nout; i++) f64 = f64 || out[i]->dtype == ACL_DOUBLE;
    og_ew_op m = {.op = p->op,
                  .kernels = k,
                  .kernels64 = k64,
                  .nin = nin,
                  .nout = nout,
                  .slots = true,
                  .compute_dtype = f64 ? ACL_DOUBLE : ACL_FLOAT,
                  .params = params,
                  .params_size = params ? sizeof *params : 0};
    for (int i = 0; i < nin; i++) m.in[i] = in[i], m.in_slot[i] = in_slot[i], m.names[i] = "in";
    for (int i = 0; i < nout; i++)
        m.out[i] = out[i], m.out_slot[i] = out_slot[i], m.names[nin + i] = "out";
    og_prog_map(p, &m);
}

const aclTensor *og_bn_widen(og_prog *p, const aclTensor *dy, int *slot) {
    if (dy->dtype == ACL_DOUBLE) return dy;
    const aclTensor *t;
    int s = og_prog_temp(p, ACL_DOUBLE, dy->ndim, dy->dims, &t);
    if (p->status != ACLNN_SUCCESS) return dy;
    og_bn_map(p, og_bn_copy_kernels, og_bn_copy_kernels64, 1, &dy, slot, 1, &t, &s, NULL);
    *slot = s;
    return t;
}

void og_bn_reduce(og_prog *p, og_reduce_kind kind, const og_ew_compute_fn *map,
                  const og_ew_compute64_fn *map64, int nin, const aclTensor *const *in,
                  const int *in_slot, const int64_t *dims, int ndim, const aclTensor *out,
                  int out_slot) {
    og_reduce_op r = {.kind = kind,
                      .nin = nin,
                      .map = map,
                      .map64 = map64,
                      .out = out,
                      .out_slot = out_slot,
                      .round_in = ACL_FLOAT};
    for (int i = 0; i < nin; i++) r.in[i] = in[i], r.in_slot[i] = in_slot[i];
    og_reduce_to_shape(&r, dims, ndim, out);
    og_prog_reduce(p, &r);
}

// t [N, C, d2, ...] (channels in dim ca: 1, or the last dim of an NHWC / NDHWC tensor) as
// [N, C, S], S = d2 * ..., when the dims other than N and C are one progression (a contiguous
// tensor's are, in either format) and S >= 8: the row view. Every layout that has one runs the same
// steps on the same values, so its results are the same bits.
static bool rows_view(const aclTensor *t, int ca, aclTensor *v) {
    if (t->ndim < 3) return false;
    int64_t S = 1, inner = 0, next = 0;
    for (int d = t->ndim - 1; d >= 1; d--) {
        if (d == ca || t->dims[d] == 1) continue;
        if (inner == 0)
            inner = t->strides[d];
        else if (t->strides[d] != next)
            return false;
        next = t->strides[d] * t->dims[d];
        S *= t->dims[d];
    }
    // short rows are mostly per-row overhead: [4096, 256, 1, 1] ran 50x slower by rows than by
    // the REDUCE path; from 8 values the rows win (a shape rule: every layout decides alike)
    if (S < 8) return false;
    *v = *t;
    v->ndim = 3;
    v->dims[1] = t->dims[ca], v->strides[1] = t->strides[ca];
    v->dims[2] = S, v->strides[2] = inner ? inner : 1;
    return true;
}

// A contiguous [N, C] temporary of per-row statistics as [N, C, 1] (rows (n, c) in row-major
// order: the row pass's statistics) or as [C, N] (a channel's N values as one row).
static aclTensor stat_rows(const aclTensor *t, int64_t N, int64_t C, bool by_channel) {
    aclTensor v = *t;
    v.ndim = by_channel ? 2 : 3;
    if (by_channel) {
        v.dims[0] = C, v.strides[0] = 1, v.dims[1] = N, v.strides[1] = C;
    } else {
        v.dims[0] = N, v.strides[0] = C, v.dims[1] = C, v.strides[1] = 1;
        v.dims[2] = 1, v.strides[2] = 1;
    }
    return v;
}

// A [C] vector as [1, C, 1]: per-row values (stats) of the [N, C, S] view.
static aclTensor chan_stat(const aclTensor *t) {
    aclTensor v = og_bn_view(t, 2);
    v.ndim = 3;
    v.dims[2] = v.dims[1], v.strides[2] = v.strides[1];
    v.dims[1] = v.dims[0], v.strides[1] = v.strides[0];
    v.dims[0] = 1, v.strides[0] = 1;
    return v;
}

void og_bn_rows(og_prog *p, const og_row_fn *k, const og_row16_fn (*k16)[2], const og_row64_fn *k64,
                const int64_t *dims, int ndim, int nin, const aclTensor *const *in,
                const int *in_slot, const aclTensor *out, int out_slot, int nstats,
                const aclTensor *const *st, const int *st_slot, bool stats_in,
                const og_bn_row_params *prm) {
    bool f64 = out && out->dtype == ACL_DOUBLE;
    for (int i = 0; i < nin; i++) f64 = f64 || in[i]->dtype == ACL_DOUBLE;
    for (int i = 0; i < nstats; i++) f64 = f64 || st[i]->dtype == ACL_DOUBLE;
    // rows all of one 16-bit dtype (inputs and output): computed in place by the 16-bit entry
    // points where the rows are contiguous (the bits of widening into fp32 rows and rounding back)
    aclDataType compute = f64 ? ACL_DOUBLE : ACL_FLOAT, d16 = in[0]->dtype;
    bool one16 = k16 && !f64 && (d16 == ACL_BF16 || d16 == ACL_FLOAT16);
    for (int i = 1; i < nin && one16; i++) one16 = in[i]->dtype == d16;
    if (one16 && out) one16 = out->dtype == d16;
    if (one16) compute = d16;
    og_rows_op r = {.kernels = k,
                    .kernels16 = one16 ? k16 : NULL,
                    .kernels64 = k64,
                    .nin = nin,
                    .nout = out ? 1 : 0,
                    .nstats = nstats,
                    .ndim = ndim,
                    .axis = ndim - 1,
                    .params = prm,
                    .params_size = prm ? sizeof *prm : 0,
                    .compute_dtype = compute,
                    .stats_in = stats_in};
    for (int d = 0; d < ndim; d++) r.dims[d] = dims[d];
    for (int i = 0; i < nin; i++) r.in[i] = in[i], r.in_slot[i] = in_slot[i];
    if (out) r.out[0] = out, r.out_slot[0] = out_slot;
    for (int i = 0; i < nstats; i++) r.stats[i] = st[i], r.stats_slot[i] = st_slot[i];
    og_prog_rows(p, &r);
}

aclnnStatus og_bn_check_vector(const og_opdesc *op, const char *name, const aclTensor *t, int64_t c,
                               const char *what) {
    OG_TRY(og_check_tensor_of(op, name, t, 0, OG_DTS_FLOATING64));
    if (t->ndim != 1 || t->dims[0] != c) {
        char a[160];
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has shape %s; it must be [%lld] (%s)", op->name,
                       name, og_shape_str(t->dims, t->ndim, a, sizeof a), (long long)c, what);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus og_bn_check_mask(const og_opdesc *op, const aclBoolArray *mask, bool m[3]) {
    char fn[96];
    snprintf(fn, sizeof fn, "%sGetWorkspaceSize", op->name);
    OG_TRY(og_check_live(fn, "outputMask", mask, OG_OBJ_BOOL_ARRAY));
    if (mask->size != 3)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: outputMask has %llu entries; it must have 3 (the input's, the "
                       "weight's and the bias' gradient)",
                       fn, (unsigned long long)mask->size);
    for (int k = 0; k < 3; k++) m[k] = mask->values[k];
    return ACLNN_SUCCESS;
}

// The memory rules over the tensors given (NULL ones skipped): inputs, then outputs.
aclnnStatus og_bn_check_memory(const og_opdesc *op, int nin, const aclTensor *const *in,
                               const char *const *in_names, int nout, const aclTensor *const *out,
                               const char *const *out_names) {
    const aclTensor *ti[8], *to[8];
    const char *names[16];
    int ni = 0, no = 0;
    for (int k = 0; k < nin; k++)
        if (in[k]) ti[ni] = in[k], names[ni++] = in_names[k];
    for (int k = 0; k < nout; k++)
        if (out[k]) to[no] = out[k], names[ni + no++] = out_names[k];
    return og_check_io_memory(op, ni, ti, no, to, names);
}

aclnnStatus og_bn_check_f64(const og_opdesc *op, const char *x_name, const aclTensor *x, int n,
                            const char *const *names, const aclTensor *const *t) {
    for (int k = 0; k < n && x->dtype != ACL_DOUBLE; k++)
        if (t[k] && t[k]->dtype == ACL_DOUBLE)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: %s has dtype float64 but %s has dtype %s: "
                           "float64 tensors need a float64 %s (opgrad's float64 extension)",
                           op->name, names[k], x_name, og_dtype_name(x->dtype), x_name);
    return ACLNN_SUCCESS;
}

// The channel axis: dim 1, or the last dim of an NHWC / NDHWC tensor.
static int channel_axis(const aclTensor *t) {
    bool last = (t->format == ACL_FORMAT_NHWC && t->ndim == 4) ||
                (t->format == ACL_FORMAT_NDHWC && t->ndim == 5);
    return last ? t->ndim - 1 : 1;
}

// Tensors of the data's shape must agree on where the channels are (their formats).
static aclnnStatus check_same_layout(const og_opdesc *op, const char *name_a, const aclTensor *a,
                                     const char *name_b, const aclTensor *b) {
    if (channel_axis(a) == channel_axis(b)) return ACLNN_SUCCESS;
    return og_fail(ACLNN_ERR_PARAM_INVALID,
                   "%sGetWorkspaceSize: %s has its channels in dim %d (format %d) but %s in dim "
                   "%d (format %d): their formats must agree",
                   op->name, name_a, channel_axis(a), (int)a->format, name_b, channel_axis(b),
                   (int)b->format);
}

// runningMean and runningVar (optional), saveMean and saveInvstd: one value per channel (C);
// in eval mode the save tensors are not used (only checked to be tensors) and both running
// statistics are required, since `uses` (what reads them) needs them.
static aclnnStatus check_stats(const og_opdesc *op, int64_t C, const aclTensor *runningMean,
                               const aclTensor *runningVar, bool training,
                               const aclTensor *saveMean, const aclTensor *saveInvstd,
                               const char *uses) {
    const char *per_channel = "one value per channel of input";
    if (runningMean) OG_TRY(og_bn_check_vector(op, "runningMean", runningMean, C, per_channel));
    if (runningVar) OG_TRY(og_bn_check_vector(op, "runningVar", runningVar, C, per_channel));
    if (training) {
        OG_TRY(og_bn_check_vector(op, "saveMean", saveMean, C, per_channel));
        OG_TRY(og_bn_check_vector(op, "saveInvstd", saveInvstd, C, per_channel));
        return ACLNN_SUCCESS;
    }
    OG_TRY(og_check_tensor_of(op, "saveMean", saveMean, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "saveInvstd", saveInvstd, 0, OG_DTS_FLOATING64));
    if (!runningMean || !runningVar)
        return og_fail(ACLNN_ERR_PARAM_NULLPTR,
                       "%sGetWorkspaceSize: %s is NULL: with training false %s runningMean and "
                       "runningVar, which are required",
                       op->name, runningMean ? "runningVar" : "runningMean", uses);
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnBatchNormGetWorkspaceSize(const aclTensor *input, const aclTensor *weight,
                                           const aclTensor *bias, aclTensor *runningMean,
                                           aclTensor *runningVar, bool training, double momentum,
                                           double eps, aclTensor *output, aclTensor *saveMean,
                                           aclTensor *saveInvstd, uint64_t *workspaceSize,
                                           aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_BatchNorm;
    static const char *const names[] = {"input", "output", "saveMean", "saveInvstd"};
    const void *ptrs[4] = {input, output, saveMean, saveInvstd};
    OG_TRY(og_check_args(op, workspaceSize, executor, 4, names, ptrs));
    OG_TRY(og_check_tensor_of(op, "input", input, 2, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "output", output, 2, OG_DTS_FLOATING64));
    OG_TRY(og_check_same_shape(op, "input", input, "output", output));
    OG_TRY(check_same_layout(op, "input", input, "output", output));
    int ca = channel_axis(input);
    int64_t C = input->dims[ca];
    const char *per_channel = "one value per channel of input";
    if (weight) OG_TRY(og_bn_check_vector(op, "weight", weight, C, per_channel));
    if (bias) OG_TRY(og_bn_check_vector(op, "bias", bias, C, per_channel));
    OG_TRY(check_stats(op, C, runningMean, runningVar, training, saveMean, saveInvstd,
                       "the input is normalised with"));
    {
        static const char *const f_names[] = {"weight", "bias",     "runningMean", "runningVar",
                                              "output", "saveMean", "saveInvstd"};
        const aclTensor *f[] = {weight, bias,     runningMean, runningVar,
                                output, saveMean, saveInvstd};
        OG_TRY(og_bn_check_f64(op, "input", input, 7, f_names, f));
    }
    {
        const aclTensor *in[] = {input, weight, bias, runningMean, runningVar};
        static const char *const in_names[] = {"input", "weight", "bias", "runningMean",
                                               "runningVar"};
        const aclTensor *out[] = {output, training ? saveMean : NULL, training ? saveInvstd : NULL,
                                  training ? runningMean : NULL, training ? runningVar : NULL};
        static const char *const out_names[] = {"output", "saveMean", "saveInvstd", "runningMean",
                                                "runningVar"};
        OG_TRY(og_bn_check_memory(op, 5, in, in_names, 5, out, out_names));
    }

    // slots: 0 input, 1 weight, 2 bias, 3 runningMean, 4 runningVar (inputs); 5 output,
    // 6 saveMean, 7 saveInvstd, 8 runningMean, 9 runningVar (outputs)
    // (eval neither writes the saved statistics nor updates the running ones: unbound)
    const aclTensor *io[10] = {input,
                               weight,
                               bias,
                               runningMean,
                               runningVar,
                               output,
                               training ? saveMean : NULL,
                               training ? saveInvstd : NULL,
                               training ? runningMean : NULL,
                               training ? runningVar : NULL};
    og_prog p;
    og_prog_init(&p, op, 5, 5, io);
    if (input->numel == 0) return og_prog_publish(&p, workspaceSize, executor);
    int rank = input->ndim - ca; // [C, 1, ...]: broadcasts over the dims after the channel
    int64_t K = input->numel / C;
    og_bn_params prm = {.eps = eps, .momentum = momentum, .factor = 1.0, .inv_k = 1.0 / (double)K};
    // data whose dims other than N and C are one progression: rows (n, c) of S values
    aclTensor xv, yv;
    aclDataType tdt = input->dtype == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT; // the temporaries
    bool rows = rows_view(input, ca, &xv) && rows_view(output, ca, &yv);
    int64_t N = input->dims[0];

    const aclTensor *mean_t = NULL, *var_t = NULL, *rstd_t = NULL, *scale_t = NULL;
    int mean_s, var_s = -1, rstd_s, scale_s;
    if (training) {
        mean_s = og_prog_temp(&p, tdt, 1, &C, &mean_t);
        var_s = og_prog_temp(&p, tdt, 1, &C, &var_t);
        if (p.status != ACLNN_SUCCESS) return og_prog_publish(&p, workspaceSize, executor);
        if (rows) {
            // per row (n, c): mean_r and M2_r, one read of x; then per channel, in n order
            const aclTensor *rm_t, *rq_t;
            int64_t nc[2] = {N, C}, cn[2] = {C, N};
            int rm_s = og_prog_temp(&p, tdt, 2, nc, &rm_t);
            int rq_s = og_prog_temp(&p, tdt, 2, nc, &rq_t);
            if (p.status != ACLNN_SUCCESS) return og_prog_publish(&p, workspaceSize, executor);
            aclTensor rm = stat_rows(rm_t, N, C, false), rq = stat_rows(rq_t, N, C, false);
            og_bn_rows(&p, og_bn_row_stat_kernels, og_bn_row_stat_kernels16,
                       og_bn_row_stat_kernels64, xv.dims, 3, 1, (const aclTensor *[]){&xv},
                       (int[]){0}, NULL, -1, 2, (const aclTensor *[]){&rm, &rq},
                       (int[]){rm_s, rq_s}, false, NULL);
            aclTensor rmc = stat_rows(rm_t, N, C, true), rqc = stat_rows(rq_t, N, C, true);
            og_bn_row_params rp = {.S = (double)xv.dims[2]};
            og_bn_rows(&p, og_bn_row_chan_kernels, NULL, og_bn_row_chan_kernels64, cn, 2, 2,
                       (const aclTensor *[]){&rmc, &rqc}, (int[]){rm_s, rq_s}, NULL, -1, 2,
                       (const aclTensor *[]){mean_t, var_t}, (int[]){mean_s, var_s}, false, &rp);
        } else {
            aclTensor mv = og_bn_view(mean_t, rank), vv = og_bn_view(var_t, rank);
            og_bn_reduce(&p, OG_RED_MEAN, NULL, NULL, 1, (const aclTensor *[]){input}, (int[]){0},
                         input->dims, input->ndim, &mv, mean_s);
            og_bn_reduce(&p, OG_RED_MEAN, og_bn_sqdev_kernels, og_bn_sqdev_kernels64, 2,
                         (const aclTensor *[]){input, &mv}, (int[]){0, mean_s}, input->dims,
                         input->ndim, &vv, var_s);
        }
    } else {
        mean_t = runningMean, mean_s = 3;
    }
    rstd_s = og_prog_temp(&p, tdt, 1, &C, &rstd_t);
    if (p.status != ACLNN_SUCCESS) return og_prog_publish(&p, workspaceSize, executor);
    og_bn_map(&p, og_bn_rstd_kernels, og_bn_rstd_kernels64, 1,
              (const aclTensor *[]){training ? var_t : runningVar}, (int[]){training ? var_s : 4},
              1, &rstd_t, &rstd_s, &prm);
    scale_t = rstd_t, scale_s = rstd_s;
    if (weight) {
        scale_s = og_prog_temp(&p, tdt, 1, &C, &scale_t);
        if (p.status != ACLNN_SUCCESS) return og_prog_publish(&p, workspaceSize, executor);
        og_bn_map(&p, og_mul_kernels, og_mul_kernels64, 2, (const aclTensor *[]){rstd_t, weight},
                  (int[]){rstd_s, 1}, 1, &scale_t, &scale_s, NULL);
    }
    aclTensor mv = og_bn_view(mean_t, rank), sv = og_bn_view(scale_t, rank);
    // rows contiguous in memory (NCHW): the row kernel; rows gathered with a stride (NHWC): the
    // map, which is faster there and computes the same bits (the same fma per element)
    if (rows && xv.strides[2] == 1 && yv.strides[2] == 1) {
        // y = (x - mean) scale (+ bias): the per-channel operands are per-row statistics
        aclTensor ms = chan_stat(mean_t), ss = chan_stat(scale_t), bs = bias ? chan_stat(bias) : ms;
        og_bn_row_params rp = {.has_shift = bias != NULL};
        og_bn_rows(&p, og_bn_row_norm_kernels, og_bn_row_norm_kernels16, og_bn_row_norm_kernels64,
                   xv.dims, 3, 1, (const aclTensor *[]){&xv}, (int[]){0}, &yv, 5, bias ? 3 : 2,
                   (const aclTensor *[]){&ms, &ss, &bs}, (int[]){mean_s, scale_s, 2}, true, &rp);
    } else if (bias) {
        aclTensor bv = og_bn_view(bias, rank);
        og_bn_map(&p, og_bn_norm_kernels, og_bn_norm_kernels64, 4,
                  (const aclTensor *[]){input, &mv, &sv, &bv}, (int[]){0, mean_s, scale_s, 2}, 1,
                  (const aclTensor *[]){output}, (int[]){5}, NULL);
    } else {
        og_bn_map(&p, og_bn_norm_nob_kernels, og_bn_norm_nob_kernels64, 3,
                  (const aclTensor *[]){input, &mv, &sv}, (int[]){0, mean_s, scale_s}, 1,
                  (const aclTensor *[]){output}, (int[]){5}, NULL);
    }
    if (training) {
        og_bn_map(&p, og_bn_copy_kernels, og_bn_copy_kernels64, 1, &mean_t, &mean_s, 1,
                  (const aclTensor *[]){saveMean}, (int[]){6}, NULL);
        og_bn_map(&p, og_bn_copy_kernels, og_bn_copy_kernels64, 1, &rstd_t, &rstd_s, 1,
                  (const aclTensor *[]){saveInvstd}, (int[]){7}, NULL);
        // PyTorch's running statistics: the mean, and the unbiased variance K/(K-1) var
        if (runningMean)
            og_bn_map(&p, og_bn_running_kernels, og_bn_running_kernels64, 2,
                      (const aclTensor *[]){runningMean, mean_t}, (int[]){3, mean_s}, 1,
                      (const aclTensor *[]){runningMean}, (int[]){8}, &prm);
        if (runningVar) {
            og_bn_params pv = prm;
            pv.factor = (double)K / (double)(K - 1);
            og_bn_map(&p, og_bn_running_kernels, og_bn_running_kernels64, 2,
                      (const aclTensor *[]){runningVar, var_t}, (int[]){4, var_s}, 1,
                      (const aclTensor *[]){runningVar}, (int[]){9}, &pv);
        }
    }
    return og_prog_publish(&p, workspaceSize, executor);
}

aclnnStatus aclnnBatchNormBackwardGetWorkspaceSize(
    const aclTensor *gradOut, const aclTensor *input, const aclTensor *weight,
    const aclTensor *runningMean, const aclTensor *runningVar, const aclTensor *saveMean,
    const aclTensor *saveInvstd, bool training, double eps, const aclBoolArray *outputMask,
    aclTensor *gradInput, aclTensor *gradWeight, aclTensor *gradBias, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_BatchNormBackward;
    static const char *const names[] = {"gradOut", "input", "saveMean", "saveInvstd", "outputMask"};
    const void *ptrs[5] = {gradOut, input, saveMean, saveInvstd, outputMask};
    OG_TRY(og_check_args(op, workspaceSize, executor, 5, names, ptrs));
    OG_TRY(og_check_tensor_of(op, "gradOut", gradOut, 2, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "input", input, 2, OG_DTS_FLOATING64));
    OG_TRY(og_check_same_shape(op, "gradOut", gradOut, "input", input));
    bool m[3];
    OG_TRY(og_bn_check_mask(op, outputMask, m));
    OG_TRY(check_same_layout(op, "gradOut", gradOut, "input", input));
    int ca = channel_axis(input);
    int64_t C = input->dims[ca];
    const char *per_channel = "one value per channel of input";
    if (weight) OG_TRY(og_bn_check_vector(op, "weight", weight, C, per_channel));
    OG_TRY(check_stats(op, C, runningMean, runningVar, training, saveMean, saveInvstd,
                       "the gradients use"));
    static const char *const out_names[] = {"gradInput", "gradWeight", "gradBias"};
    aclTensor *outs[3] = {gradInput, gradWeight, gradBias};
    for (int k = 0; k < 3; k++) {
        if (!m[k]) continue;
        if (!outs[k])
            return og_fail(ACLNN_ERR_PARAM_NULLPTR,
                           "%sGetWorkspaceSize: %s is NULL but outputMask[%d] is true", op->name,
                           out_names[k], k);
        if (k == 0) {
            OG_TRY(og_check_tensor_of(op, "gradInput", gradInput, 2, OG_DTS_FLOATING64));
            OG_TRY(og_check_same_shape(op, "input", input, "gradInput", gradInput));
            OG_TRY(check_same_layout(op, "input", input, "gradInput", gradInput));
        } else {
            OG_TRY(og_bn_check_vector(op, out_names[k], outs[k], C, per_channel));
        }
    }
    // unselected outputs are not written, but a tensor given is still checked to be one
    for (int k = 0; k < 3; k++)
        if (!m[k] && outs[k])
            OG_TRY(og_check_tensor_of(op, out_names[k], outs[k], 0, OG_DTS_FLOATING64));
    {
        static const char *const f_names[] = {"gradOut",    "weight",     "runningMean",
                                              "runningVar", "saveMean",   "saveInvstd",
                                              "gradInput",  "gradWeight", "gradBias"};
        const aclTensor *f[] = {gradOut,    weight,    runningMean, runningVar, saveMean,
                                saveInvstd, gradInput, gradWeight,  gradBias};
        OG_TRY(og_bn_check_f64(op, "input", input, 9, f_names, f));
    }
    {
        // only what the mode reads: the running statistics in eval, the saved ones in training
        const aclTensor *in[] = {gradOut,
                                 input,
                                 weight,
                                 training ? NULL : runningMean,
                                 training ? NULL : runningVar,
                                 training ? saveMean : NULL,
                                 training ? saveInvstd : NULL};
        static const char *const in_names[] = {"gradOut",    "input",    "weight",    "runningMean",
                                               "runningVar", "saveMean", "saveInvstd"};
        const aclTensor *out[3];
        for (int k = 0; k < 3; k++) out[k] = m[k] ? outs[k] : NULL;
        OG_TRY(og_bn_check_memory(op, 7, in, in_names, 3, out, out_names));
    }

    // slots: 0 gradOut, 1 input, 2 weight, 3 runningMean, 4 runningVar, 5 saveMean,
    // 6 saveInvstd (inputs); 7 gradInput, 8 gradWeight, 9 gradBias (outputs)
    const aclTensor *io[10] = {gradOut,
                               input,
                               weight,
                               training ? NULL : runningMean,
                               training ? NULL : runningVar,
                               training ? saveMean : NULL,
                               training ? saveInvstd : NULL,
                               m[0] ? gradInput : NULL,
                               m[1] ? gradWeight : NULL,
                               m[2] ? gradBias : NULL};
    og_prog p;
    og_prog_init(&p, op, 7, 3, io);
    if (C == 0 || !(m[0] || m[1] || m[2])) return og_prog_publish(&p, workspaceSize, executor);
    int rank = input->ndim - ca;
    int64_t K = input->numel / C;
    og_bn_params prm = {.eps = eps, .inv_k = K ? 1.0 / (double)K : 0.0};
    aclDataType tdt = input->dtype == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT; // the temporaries

    const aclTensor *mean_t = training ? saveMean : runningMean;
    int mean_s = training ? 5 : 3;
    const aclTensor *rstd_t = saveInvstd;
    int rstd_s = 6;
    if (!training && (m[0] || m[1])) {
        rstd_s = og_prog_temp(&p, tdt, 1, &C, &rstd_t);
        if (p.status != ACLNN_SUCCESS) return og_prog_publish(&p, workspaceSize, executor);
        og_bn_map(&p, og_bn_rstd_kernels, og_bn_rstd_kernels64, 1, &runningVar, (int[]){4}, 1,
                  &rstd_t, &rstd_s, &prm);
    }
    aclTensor mv = og_bn_view(mean_t, rank);
    // the per-channel sums: sum(dy) and sum(dy (x - mean))
    bool need_sdy = m[2] || (m[0] && training), need_sdx = m[1] || (m[0] && training);
    // data whose dims other than N and C are one progression: rows (n, c) of S values
    aclTensor dyv, xv, dxv;
    bool rows = input->numel > 0 && rows_view(gradOut, ca, &dyv) && rows_view(input, ca, &xv) &&
                (!m[0] || rows_view(gradInput, ca, &dxv));
    // float64 without rows: a narrower dy widened first, for the REDUCE steps over it alone
    int dy_s = 0;
    const aclTensor *dy = tdt == ACL_DOUBLE && !rows ? og_bn_widen(&p, gradOut, &dy_s) : gradOut;
    if (p.status != ACLNN_SUCCESS) return og_prog_publish(&p, workspaceSize, executor);
    if (rows && (need_sdy || need_sdx)) need_sdy = need_sdx = true; // one pass makes both
    const aclTensor *sdy_t = NULL, *sdx_t = NULL;
    int sdy_s = -1, sdx_s = -1;
    if (need_sdy) sdy_s = og_prog_temp(&p, tdt, 1, &C, &sdy_t);
    if (need_sdx) sdx_s = og_prog_temp(&p, tdt, 1, &C, &sdx_t);
    if (p.status != ACLNN_SUCCESS) return og_prog_publish(&p, workspaceSize, executor);
    if (rows && need_sdy) {
        // per row (n, c): sum dy, sum dy (x - x0) and x0, one read of dy and x; then per
        // channel, in n order: sum dy and sum dy (x - mean)
        const aclTensor *s1_t, *s2_t, *x0_t;
        int64_t N = input->dims[0], nc[2] = {N, C}, cn[2] = {C, N};
        int s1_s = og_prog_temp(&p, tdt, 2, nc, &s1_t);
        int s2_s = og_prog_temp(&p, tdt, 2, nc, &s2_t);
        int x0_s = og_prog_temp(&p, tdt, 2, nc, &x0_t);
        if (p.status != ACLNN_SUCCESS) return og_prog_publish(&p, workspaceSize, executor);
        aclTensor r1 = stat_rows(s1_t, N, C, false), r2 = stat_rows(s2_t, N, C, false),
                  r0 = stat_rows(x0_t, N, C, false);
        og_bn_rows(&p, og_bn_row_dsum_kernels, og_bn_row_dsum_kernels16, og_bn_row_dsum_kernels64,
                   xv.dims, 3, 2, (const aclTensor *[]){&dyv, &xv}, (int[]){0, 1}, NULL, -1, 3,
                   (const aclTensor *[]){&r1, &r2, &r0}, (int[]){s1_s, s2_s, x0_s}, false, NULL);
        aclTensor c1 = stat_rows(s1_t, N, C, true), c2 = stat_rows(s2_t, N, C, true),
                  c0 = stat_rows(x0_t, N, C, true), mc = og_bn_view(mean_t, 2);
        og_bn_rows(&p, og_bn_row_dcomb_kernels, NULL, og_bn_row_dcomb_kernels64, cn, 2, 4,
                   (const aclTensor *[]){&c1, &c2, &c0, &mc}, (int[]){s1_s, s2_s, x0_s, mean_s},
                   NULL, -1, 2, (const aclTensor *[]){sdy_t, sdx_t}, (int[]){sdy_s, sdx_s}, false,
                   NULL);
    } else if (need_sdy) {
        aclTensor v = og_bn_view(sdy_t, rank);
        og_bn_reduce(&p, OG_RED_SUM, NULL, NULL, 1, &dy, &dy_s, input->dims, input->ndim, &v,
                     sdy_s);
    }
    if (need_sdx && !rows) {
        aclTensor v = og_bn_view(sdx_t, rank);
        og_bn_reduce(&p, OG_RED_SUM, og_bn_dymul_kernels, og_bn_dymul_kernels64, 3,
                     (const aclTensor *[]){dy, input, &mv}, (int[]){dy_s, 1, mean_s}, input->dims,
                     input->ndim, &v, sdx_s);
    }
    if (m[1])
        og_bn_map(&p, og_mul_kernels, og_mul_kernels64, 2, (const aclTensor *[]){sdx_t, rstd_t},
                  (int[]){sdx_s, rstd_s}, 1, (const aclTensor *[]){gradWeight}, (int[]){8}, NULL);
    if (m[2])
        og_bn_map(&p, og_bn_copy_kernels, og_bn_copy_kernels64, 1, &sdy_t, &sdy_s, 1,
                  (const aclTensor *[]){gradBias}, (int[]){9}, NULL);
    if (m[0] && input->numel > 0) {
        // a = weight * invstd (invstd itself without a weight)
        const aclTensor *a_t = rstd_t;
        int a_s = rstd_s;
        if (weight) {
            a_s = og_prog_temp(&p, tdt, 1, &C, &a_t);
            if (p.status != ACLNN_SUCCESS) return og_prog_publish(&p, workspaceSize, executor);
            og_bn_map(&p, og_mul_kernels, og_mul_kernels64, 2,
                      (const aclTensor *[]){rstd_t, weight}, (int[]){rstd_s, 2}, 1, &a_t, &a_s,
                      NULL);
        }
        aclTensor av = og_bn_view(a_t, rank);
        if (training) {
            const aclTensor *b_t, *c_t;
            int b_s = og_prog_temp(&p, tdt, 1, &C, &b_t);
            int c_s = og_prog_temp(&p, tdt, 1, &C, &c_t);
            if (p.status != ACLNN_SUCCESS) return og_prog_publish(&p, workspaceSize, executor);
            og_bn_map(&p, og_bn_bc_kernels, og_bn_bc_kernels64, 4,
                      (const aclTensor *[]){a_t, rstd_t, sdy_t, sdx_t},
                      (int[]){a_s, rstd_s, sdy_s, sdx_s}, 2, (const aclTensor *[]){b_t, c_t},
                      (int[]){b_s, c_s}, &prm);
            if (rows && dyv.strides[2] == 1 && xv.strides[2] == 1 && dxv.strides[2] == 1) {
                // dx = a dy + (b (x - mean) + c): the per-channel operands are per-row stats
                aclTensor ms = chan_stat(mean_t), as = chan_stat(a_t), bs = chan_stat(b_t),
                          cs = chan_stat(c_t);
                og_bn_rows(&p, og_bn_row_dx_kernels, og_bn_row_dx_kernels16, og_bn_row_dx_kernels64,
                           xv.dims, 3, 2, (const aclTensor *[]){&dyv, &xv}, (int[]){0, 1}, &dxv, 7,
                           4, (const aclTensor *[]){&ms, &as, &bs, &cs},
                           (int[]){mean_s, a_s, b_s, c_s}, true, NULL);
                return og_prog_publish(&p, workspaceSize, executor);
            }
            aclTensor bv = og_bn_view(b_t, rank), cv = og_bn_view(c_t, rank);
            og_bn_map(&p, og_bn_dx_kernels, og_bn_dx_kernels64, 6,
                      (const aclTensor *[]){dy, input, &mv, &av, &bv, &cv},
                      (int[]){dy_s, 1, mean_s, a_s, b_s, c_s}, 1, (const aclTensor *[]){gradInput},
                      (int[]){7}, NULL);
        } else {
            og_bn_map(&p, og_mul_kernels, og_mul_kernels64, 2, (const aclTensor *[]){dy, &av},
                      (int[]){dy_s, a_s}, 1, (const aclTensor *[]){gradInput}, (int[]){7}, NULL);
        }
    }
    return og_prog_publish(&p, workspaceSize, executor);
}
