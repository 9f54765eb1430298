/* aclnnGroupNorm and aclnnGroupNormBackward: argument checks and step programs.
 *
 * self [N, C, *] is described to the engines as [N, G, C/G, *] (the channel dim split in two, a
 * view of the same memory), so that a group's statistics are a reduction over the dims after G:
 *   forward   REDUCE mean and REDUCE mean of (x - mean)^2 per (n, g) (two passes); MAPs over
 *             [N, G] for rstd and the saved statistics, a = rstd * gamma over [N, G, C/G]; one
 *             MAP y = (x - mean) * a + beta.
 *   backward  REDUCE per (n, c) over HxW: t = sum(dy (x - mean)), db = sum(dy); gradGamma =
 *             sum over n of t * rstd, gradBeta = sum over n of db; per (n, g) m1 = sum_c gamma db,
 *             m2 = sum_c gamma t; dx = a dy + b (x - mean) + c with a = rstd gamma,
 *             b = -rstd^3 m2 / M, c = -rstd m1 / M (M = C/G * HxW), one MAP over the data.
 * Contiguous rows (each (n, c) a run of HxW >= 8 values with stride 1: rows_view) take the row
 * engine with BatchNorm's row kernels instead, two passes over the data each way:
 *   forward   ROWS mean_r, M2_r per (n, c) (one read of x); ROWS per (n, g) over its C/G row
 *             statistics: Chan's update in double; the MAPs above; ROWS y = (x - mean) a + beta.
 *   backward  ROWS per (n, c): db = sum dy, s2 = sum dy (x - x0), x0 (one read of dy and x);
 *             MAP t = s2 + (x0 - mean) db; the sums and MAPs above; ROWS dx.
 * All sums are the reduction or row engine's: fixed order, independent of threads and ISA.
 * float64 (a DOUBLE self / input; opgrad's extension): the same steps on the engines' float64
 * paths with DOUBLE temporaries (without rows, a narrower gradOut widened into one first). */
#include <string.h>

#include "aclnnop/aclnn_group_norm.h"
#include "aclnnop/aclnn_group_norm_backward.h"
#include "engine/program.h"
#include "engine/reduce.h"
#include "ops/batch_norm/batch_norm_common.h"
#include "ops/batch_norm/batch_norm_kernel.h"
#include "ops/common/checks.h"
#include "ops/math/mul/mul_kernel.h"
#include "runtime/error.h"
#include "tensor/dtype.h"

// The spatial dims of t that are not 1 (the view leaves those out: rank 8 fits).
static int spatial_dims(const aclTensor *t) {
    int n = 0;
    for (int d = 2; d < t->ndim; d++) n += t->dims[d] != 1;
    return n;
}

// t [N, C, s...] as [N, G, C/G, s...] without the spatial dims of size 1 (all the tensors of one
// call have one shape, so their views have one shape too).
static aclTensor split_view(const aclTensor *t, int64_t G) {
    aclTensor v = *t;
    int64_t C = t->dims[1], cs = t->strides[1];
    v.dims[0] = t->dims[0], v.strides[0] = t->strides[0];
    v.dims[1] = G, v.strides[1] = cs * (C / G);
    v.dims[2] = C / G, v.strides[2] = cs;
    v.ndim = 3;
    for (int d = 2; d < t->ndim; d++)
        if (t->dims[d] != 1) v.dims[v.ndim] = t->dims[d], v.strides[v.ndim++] = t->strides[d];
    return v;
}

// t [N, C, spatial...] as rows (n, g, c') of S = HxW values, [N, G, C/G, S], when the spatial
// dims of more than one element are one progression of stride 1 (a contiguous tensor's are) and
// S >= 8 (BatchNorm's rule: shorter rows are mostly per-row overhead): the row engine's view.
static bool rows_view(const aclTensor *t, int64_t G, aclTensor *v) {
    int64_t S = 1, next = 1;
    for (int d = t->ndim - 1; d >= 2; d--) {
        if (t->dims[d] == 1) continue;
        if (t->strides[d] != next) return false;
        next = t->strides[d] * t->dims[d];
        S *= t->dims[d];
    }
    if (S < 8) return false;
    *v = split_view(t, G);
    v->ndim = 4;
    v->dims[3] = S, v->strides[3] = 1;
    return true;
}

// t [a, b(, c)] as [a, b(, c), 1, ...] of `rank` dims.
static aclTensor stat_view(const aclTensor *t, int rank) {
    aclTensor v = *t;
    v.ndim = rank;
    for (int d = t->ndim; d < rank; d++) v.dims[d] = 1, v.strides[d] = 1;
    return v;
}

// gamma [C] as [G, C/G, 1, ...] of `rank` dims.
static aclTensor gamma_view(const aclTensor *t, int64_t G, int rank) {
    aclTensor v = *t;
    int64_t C = t->dims[0], s = t->strides[0];
    v.ndim = rank;
    for (int d = 0; d < rank; d++) v.dims[d] = 1, v.strides[d] = 1;
    v.dims[0] = G, v.strides[0] = s * (C / G);
    v.dims[1] = C / G, v.strides[1] = s;
    return v;
}

// self's shape against N, C, HxW, group: 161002 naming the rule.
static aclnnStatus check_dims(const og_opdesc *op, const char *name, const aclTensor *x, int64_t N,
                              int64_t C, int64_t HxW, int64_t group) {
    char a[160];
    og_shape_str(x->dims, x->ndim, a, sizeof a);
    int64_t hw = 1;
    bool over = false; // (an empty tensor's other dims may multiply past int64)
    for (int d = 2; d < x->ndim; d++) over |= __builtin_mul_overflow(hw, x->dims[d], &hw);
    if (x->dims[0] != N || x->dims[1] != C || over || hw != HxW)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has shape %s, which does not match N = %lld, "
                       "C = %lld, HxW = %lld ([N, C, *] with HxW the product of the dims after C)",
                       op->name, name, a, (long long)N, (long long)C, (long long)HxW);
    if (group <= 0 || C % group != 0)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: group is %lld; it must be positive and divide C = %lld",
                       op->name, (long long)group, (long long)C);
    if (3 + spatial_dims(x) > OG_MAX_DIMS) // [N, G, C/G, spatial...]
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s %s has 6 spatial dims of more than one element; "
                       "supported: at most 5 (HxW is their product: merge them)",
                       op->name, name, a);
    return ACLNN_SUCCESS;
}

static aclnnStatus check_stat(const og_opdesc *op, const char *name, const aclTensor *t, int64_t N,
                              int64_t group) {
    OG_TRY(og_check_tensor_of(op, name, t, 0, OG_DTS_FLOATING64));
    if (t->ndim != 2 || t->dims[0] != N || t->dims[1] != group) {
        char a[160];
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has shape %s; it must be [N, group] = [%lld, %lld]",
                       op->name, name, og_shape_str(t->dims, t->ndim, a, sizeof a), (long long)N,
                       (long long)group);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnGroupNormGetWorkspaceSize(const aclTensor *self, const aclTensor *gamma,
                                           const aclTensor *beta, int64_t N, int64_t C, int64_t HxW,
                                           int64_t group, double eps, aclTensor *out,
                                           aclTensor *meanOut, aclTensor *rstdOut,
                                           uint64_t *workspaceSize, aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_GroupNorm;
    static const char *const names[] = {"self", "out", "meanOut", "rstdOut"};
    const void *ptrs[4] = {self, out, meanOut, rstdOut};
    OG_TRY(og_check_args(op, workspaceSize, executor, 4, names, ptrs));
    OG_TRY(og_check_tensor_of(op, "self", self, 2, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "out", out, 2, OG_DTS_FLOATING64));
    OG_TRY(check_dims(op, "self", self, N, C, HxW, group));
    OG_TRY(og_check_same_shape(op, "self", self, "out", out));
    const char *per_channel = "one value per channel of self";
    if (gamma) OG_TRY(og_bn_check_vector(op, "gamma", gamma, C, per_channel));
    if (beta) OG_TRY(og_bn_check_vector(op, "beta", beta, C, per_channel));
    OG_TRY(check_stat(op, "meanOut", meanOut, N, group));
    OG_TRY(check_stat(op, "rstdOut", rstdOut, N, group));
    {
        static const char *const f_names[] = {"gamma", "beta", "out", "meanOut", "rstdOut"};
        const aclTensor *f[] = {gamma, beta, out, meanOut, rstdOut};
        OG_TRY(og_bn_check_f64(op, "self", self, 5, f_names, f));
    }
    {
        const aclTensor *in[] = {self, gamma, beta};
        static const char *const in_names[] = {"self", "gamma", "beta"};
        const aclTensor *o[] = {out, meanOut, rstdOut};
        OG_TRY(og_bn_check_memory(op, 3, in, in_names, 3, o, names + 1));
    }
    // slots: 0 self, 1 gamma, 2 beta; 3 out, 4 meanOut, 5 rstdOut
    const aclTensor *io[6] = {self, gamma, beta, out, meanOut, rstdOut};
    og_prog p;
    og_prog_init(&p, op, 3, 3, io);
    if (self->numel == 0) return og_prog_publish(&p, workspaceSize, executor);
    int64_t G = group, M = C / G * HxW;
    og_bn_params prm = {.eps = eps, .inv_k = 1.0 / (double)M};
    aclDataType tdt = self->dtype == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT; // the temporaries
    int rank = 3 + spatial_dims(self);
    aclTensor xv = split_view(self, G), ov = split_view(out, G);
    int64_t ng[2] = {N, G}, ngc[3] = {N, G, C / G};
    const aclTensor *mean_t, *var_t, *rstd_t, *a_t;
    int mean_s = og_prog_temp(&p, tdt, 2, ng, &mean_t);
    int var_s = og_prog_temp(&p, tdt, 2, ng, &var_t);
    int rstd_s = og_prog_temp(&p, tdt, 2, ng, &rstd_t);
    if (p.status != ACLNN_SUCCESS) return og_prog_publish(&p, workspaceSize, executor);
    aclTensor mv = stat_view(mean_t, rank), vv = stat_view(var_t, rank), xr, yr;
    bool rows = rows_view(self, G, &xr) && rows_view(out, G, &yr);
    if (rows) {
        // per row (n, c): mean_r and M2_r, one read of x; then per group, over its C/G rows in
        // increasing c: Chan's update in double (BatchNorm's kernels, combined per (n, g))
        const aclTensor *rm_t, *rq_t;
        int rm_s = og_prog_temp(&p, tdt, 3, ngc, &rm_t);
        int rq_s = og_prog_temp(&p, tdt, 3, ngc, &rq_t);
        if (p.status != ACLNN_SUCCESS) return og_prog_publish(&p, workspaceSize, executor);
        og_bn_rows(&p, og_bn_row_stat_kernels, og_bn_row_stat_kernels16, og_bn_row_stat_kernels64,
                   xr.dims, 4, 1, (const aclTensor *[]){&xr}, (int[]){0}, NULL, -1, 2,
                   (const aclTensor *[]){rm_t, rq_t}, (int[]){rm_s, rq_s}, false, NULL);
        og_bn_row_params rp = {.S = (double)xr.dims[3]};
        og_bn_rows(&p, og_bn_row_chan_kernels, NULL, og_bn_row_chan_kernels64, ngc, 3, 2,
                   (const aclTensor *[]){rm_t, rq_t}, (int[]){rm_s, rq_s}, NULL, -1, 2,
                   (const aclTensor *[]){mean_t, var_t}, (int[]){mean_s, var_s}, false, &rp);
    } else {
        og_bn_reduce(&p, OG_RED_MEAN, NULL, NULL, 1, (const aclTensor *[]){&xv}, (int[]){0},
                     xv.dims, xv.ndim, &mv, mean_s);
        og_bn_reduce(&p, OG_RED_MEAN, og_bn_sqdev_kernels, og_bn_sqdev_kernels64, 2,
                     (const aclTensor *[]){&xv, &mv}, (int[]){0, mean_s}, xv.dims, xv.ndim, &vv,
                     var_s);
    }
    og_bn_map(&p, og_bn_rstd_kernels, og_bn_rstd_kernels64, 1, &var_t, &var_s, 1, &rstd_t, &rstd_s,
              &prm);
    og_bn_map(&p, og_bn_copy_kernels, og_bn_copy_kernels64, 1, &mean_t, &mean_s, 1,
              (const aclTensor *[]){meanOut}, (int[]){4}, NULL);
    og_bn_map(&p, og_bn_copy_kernels, og_bn_copy_kernels64, 1, &rstd_t, &rstd_s, 1,
              (const aclTensor *[]){rstdOut}, (int[]){5}, NULL);
    aclTensor av;
    int a_s = rstd_s;
    if (gamma) {
        a_s = og_prog_temp(&p, tdt, 3, ngc, &a_t);
        if (p.status != ACLNN_SUCCESS) return og_prog_publish(&p, workspaceSize, executor);
        aclTensor r3 = stat_view(rstd_t, 3), g2 = gamma_view(gamma, G, 2);
        og_bn_map(&p, og_mul_kernels, og_mul_kernels64, 2, (const aclTensor *[]){&r3, &g2},
                  (int[]){rstd_s, 1}, 1, &a_t, &a_s, NULL);
        av = stat_view(a_t, rank); // [N, G, C/G] -> [N, G, C/G, 1, ...]
    } else {
        av = stat_view(rstd_t, rank);
    }
    if (rows) {
        // y = (x - mean) a (+ beta): mean [N, G, 1], a [N, G, C/G] (rstd [N, G, 1] without
        // gamma) and beta [G, C/G] are per-row statistics of the [N, G, C/G, S] view
        aclTensor ms = stat_view(mean_t, 3), as = gamma ? *a_t : stat_view(rstd_t, 3);
        aclTensor bs = beta ? gamma_view(beta, G, 2) : ms;
        og_bn_row_params rp = {.has_shift = beta != NULL};
        og_bn_rows(&p, og_bn_row_norm_kernels, og_bn_row_norm_kernels16, og_bn_row_norm_kernels64,
                   xr.dims, 4, 1, (const aclTensor *[]){&xr}, (int[]){0}, &yr, 3, beta ? 3 : 2,
                   (const aclTensor *[]){&ms, &as, &bs}, (int[]){mean_s, a_s, 2}, true, &rp);
    } else if (beta) {
        aclTensor bv = gamma_view(beta, G, rank - 1);
        og_bn_map(&p, og_bn_norm_kernels, og_bn_norm_kernels64, 4,
                  (const aclTensor *[]){&xv, &mv, &av, &bv}, (int[]){0, mean_s, a_s, 2}, 1,
                  (const aclTensor *[]){&ov}, (int[]){3}, NULL);
    } else {
        og_bn_map(&p, og_bn_norm_nob_kernels, og_bn_norm_nob_kernels64, 3,
                  (const aclTensor *[]){&xv, &mv, &av}, (int[]){0, mean_s, a_s}, 1,
                  (const aclTensor *[]){&ov}, (int[]){3}, NULL);
    }
    return og_prog_publish(&p, workspaceSize, executor);
}

aclnnStatus aclnnGroupNormBackwardGetWorkspaceSize(
    const aclTensor *gradOut, const aclTensor *input, const aclTensor *mean, const aclTensor *rstd,
    const aclTensor *gamma, int64_t N, int64_t C, int64_t HxW, int64_t group,
    const aclBoolArray *outputMask, aclTensor *gradInput, aclTensor *gradGammaOut,
    aclTensor *gradBetaOut, uint64_t *workspaceSize, aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_GroupNormBackward;
    static const char *const names[] = {"gradOut", "input", "mean", "rstd", "outputMask"};
    const void *ptrs[5] = {gradOut, input, mean, rstd, outputMask};
    OG_TRY(og_check_args(op, workspaceSize, executor, 5, names, ptrs));
    OG_TRY(og_check_tensor_of(op, "gradOut", gradOut, 2, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "input", input, 2, OG_DTS_FLOATING64));
    OG_TRY(check_dims(op, "input", input, N, C, HxW, group));
    OG_TRY(og_check_same_shape(op, "gradOut", gradOut, "input", input));
    OG_TRY(check_stat(op, "mean", mean, N, group));
    OG_TRY(check_stat(op, "rstd", rstd, N, group));
    const char *per_channel = "one value per channel of input";
    if (gamma) OG_TRY(og_bn_check_vector(op, "gamma", gamma, C, per_channel));
    bool m[3];
    OG_TRY(og_bn_check_mask(op, outputMask, m));
    static const char *const out_names[] = {"gradInput", "gradGammaOut", "gradBetaOut"};
    aclTensor *outs[3] = {gradInput, gradGammaOut, gradBetaOut};
    for (int k = 0; k < 3; k++) {
        if (!m[k]) {
            if (outs[k])
                OG_TRY(og_check_tensor_of(op, out_names[k], outs[k], 0, OG_DTS_FLOATING64));
            continue;
        }
        if (!outs[k])
            return og_fail(ACLNN_ERR_PARAM_NULLPTR,
                           "%sGetWorkspaceSize: %s is NULL but outputMask[%d] is true", op->name,
                           out_names[k], k);
        if (k == 0) {
            OG_TRY(og_check_tensor_of(op, "gradInput", gradInput, 2, OG_DTS_FLOATING64));
            OG_TRY(og_check_same_shape(op, "input", input, "gradInput", gradInput));
        } else {
            OG_TRY(og_bn_check_vector(op, out_names[k], outs[k], C, per_channel));
        }
    }
    {
        static const char *const f_names[] = {"gradOut",   "mean",         "rstd",       "gamma",
                                              "gradInput", "gradGammaOut", "gradBetaOut"};
        const aclTensor *f[] = {gradOut, mean, rstd, gamma, gradInput, gradGammaOut, gradBetaOut};
        OG_TRY(og_bn_check_f64(op, "input", input, 7, f_names, f));
    }
    {
        const aclTensor *in[] = {gradOut, input, mean, rstd, gamma};
        static const char *const in_names[] = {"gradOut", "input", "mean", "rstd", "gamma"};
        const aclTensor *o[3];
        for (int k = 0; k < 3; k++) o[k] = m[k] ? outs[k] : NULL;
        OG_TRY(og_bn_check_memory(op, 5, in, in_names, 3, o, out_names));
    }
    // slots: 0 gradOut, 1 input, 2 mean, 3 rstd, 4 gamma; 5 gradInput, 6 gradGamma, 7 gradBeta
    const aclTensor *io[8] = {gradOut,
                              input,
                              mean,
                              rstd,
                              gamma,
                              m[0] ? gradInput : NULL,
                              m[1] ? gradGammaOut : NULL,
                              m[2] ? gradBetaOut : NULL};
    og_prog p;
    og_prog_init(&p, op, 5, 3, io);
    if (C == 0 || !(m[0] || m[1] || m[2])) return og_prog_publish(&p, workspaceSize, executor);
    int64_t G = group, M = C / G * HxW;
    og_bn_params prm = {.inv_k = M ? 1.0 / (double)M : 0.0};
    aclDataType tdt = input->dtype == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT; // the temporaries
    int rank = 3 + spatial_dims(input);
    // contiguous rows (n, c) of HxW >= 8 values: the row engine (rows_view)
    aclTensor dyr, xr, dxr;
    bool rows = input->numel > 0 && rows_view(gradOut, G, &dyr) && rows_view(input, G, &xr) &&
                (!m[0] || rows_view(gradInput, G, &dxr));
    int dy_s = 0; // (float64 without rows: a narrower dy widened first)
    const aclTensor *dy = tdt == ACL_DOUBLE && !rows ? og_bn_widen(&p, gradOut, &dy_s) : gradOut;
    if (p.status != ACLNN_SUCCESS) return og_prog_publish(&p, workspaceSize, executor);
    aclTensor dyv = split_view(dy, G), xv = split_view(input, G);
    aclTensor mv = stat_view(mean, rank), rv3 = stat_view(rstd, 3);
    int64_t ng[2] = {N, G}, ngc[3] = {N, G, C / G};
    // per (n, c): t = sum(dy (x - mean)), db = sum(dy)
    bool need_t = m[1] || m[0], need_db = m[2] || m[0];
    if (rows && (need_t || need_db)) need_t = need_db = true; // one pass makes both
    const aclTensor *t_t = NULL, *db_t = NULL;
    int t_s = -1, db_s = -1;
    if (need_t) t_s = og_prog_temp(&p, tdt, 3, ngc, &t_t);
    if (need_db) db_s = og_prog_temp(&p, tdt, 3, ngc, &db_t);
    if (p.status != ACLNN_SUCCESS) return og_prog_publish(&p, workspaceSize, executor);
    aclTensor tv, dbv;
    if (rows && need_t) {
        // per row (n, c): s1 = sum dy (db itself), s2 = sum dy (x - x0) and x0 (the row's first
        // x), one read of dy and x; then t = s2 + (x0 - mean) s1 per (n, c) (one fma)
        const aclTensor *s2_t, *x0_t;
        int s2_s = og_prog_temp(&p, tdt, 3, ngc, &s2_t);
        int x0_s = og_prog_temp(&p, tdt, 3, ngc, &x0_t);
        if (p.status != ACLNN_SUCCESS) return og_prog_publish(&p, workspaceSize, executor);
        og_bn_rows(&p, og_bn_row_dsum_kernels, og_bn_row_dsum_kernels16, og_bn_row_dsum_kernels64,
                   xr.dims, 4, 2, (const aclTensor *[]){&dyr, &xr}, (int[]){0, 1}, NULL, -1, 3,
                   (const aclTensor *[]){db_t, s2_t, x0_t}, (int[]){db_s, s2_s, x0_s}, false, NULL);
        aclTensor m3 = stat_view(mean, 3);
        og_bn_map(&p, og_bn_norm_kernels, og_bn_norm_kernels64, 4,
                  (const aclTensor *[]){x0_t, &m3, db_t, s2_t}, (int[]){x0_s, 2, db_s, s2_s}, 1,
                  &t_t, &t_s, NULL);
    } else if (need_t) {
        tv = stat_view(t_t, rank);
        og_bn_reduce(&p, OG_RED_SUM, og_bn_dymul_kernels, og_bn_dymul_kernels64, 3,
                     (const aclTensor *[]){&dyv, &xv, &mv}, (int[]){dy_s, 1, 2}, xv.dims, xv.ndim,
                     &tv, t_s);
    }
    if (need_db && !rows) {
        dbv = stat_view(db_t, rank);
        og_bn_reduce(&p, OG_RED_SUM, NULL, NULL, 1, (const aclTensor *[]){&dyv}, (int[]){dy_s},
                     xv.dims, xv.ndim, &dbv, db_s);
    }
    if (m[1]) {
        aclTensor gg = gamma_view(gradGammaOut, G, 2);
        og_bn_reduce(&p, OG_RED_SUM, og_mul_kernels, og_mul_kernels64, 2,
                     (const aclTensor *[]){t_t, &rv3}, (int[]){t_s, 3}, t_t->dims, t_t->ndim, &gg,
                     6);
    }
    if (m[2]) {
        aclTensor gb = gamma_view(gradBetaOut, G, 2);
        og_bn_reduce(&p, OG_RED_SUM, NULL, NULL, 1, &db_t, &db_s, db_t->dims, db_t->ndim, &gb, 7);
    }
    if (m[0] && input->numel > 0) {
        // m1 = sum_c gamma db, m2 = sum_c gamma t per (n, g)
        const aclTensor *m1_t, *m2_t, *b_t, *c_t, *a_t;
        int m1_s = og_prog_temp(&p, tdt, 2, ng, &m1_t);
        int m2_s = og_prog_temp(&p, tdt, 2, ng, &m2_t);
        int b_s = og_prog_temp(&p, tdt, 2, ng, &b_t);
        int c_s = og_prog_temp(&p, tdt, 2, ng, &c_t);
        if (p.status != ACLNN_SUCCESS) return og_prog_publish(&p, workspaceSize, executor);
        aclTensor m1v = stat_view(m1_t, 3), m2v = stat_view(m2_t, 3);
        aclTensor g2 = gamma ? gamma_view(gamma, G, 2) : (aclTensor){0};
        if (gamma) {
            og_bn_reduce(&p, OG_RED_SUM, og_mul_kernels, og_mul_kernels64, 2,
                         (const aclTensor *[]){db_t, &g2}, (int[]){db_s, 4}, db_t->dims, db_t->ndim,
                         &m1v, m1_s);
            og_bn_reduce(&p, OG_RED_SUM, og_mul_kernels, og_mul_kernels64, 2,
                         (const aclTensor *[]){t_t, &g2}, (int[]){t_s, 4}, t_t->dims, t_t->ndim,
                         &m2v, m2_s);
        } else {
            og_bn_reduce(&p, OG_RED_SUM, NULL, NULL, 1, &db_t, &db_s, db_t->dims, db_t->ndim, &m1v,
                         m1_s);
            og_bn_reduce(&p, OG_RED_SUM, NULL, NULL, 1, &t_t, &t_s, t_t->dims, t_t->ndim, &m2v,
                         m2_s);
        }
        // b = -rstd^3 m2 / M, c = -rstd m1 / M (og_bn_bc with a = rstd)
        og_bn_map(&p, og_bn_bc_kernels, og_bn_bc_kernels64, 4,
                  (const aclTensor *[]){rstd, rstd, m1_t, m2_t}, (int[]){3, 3, m1_s, m2_s}, 2,
                  (const aclTensor *[]){b_t, c_t}, (int[]){b_s, c_s}, &prm);
        aclTensor av;
        int a_s = 3;
        if (gamma) {
            a_s = og_prog_temp(&p, tdt, 3, ngc, &a_t);
            if (p.status != ACLNN_SUCCESS) return og_prog_publish(&p, workspaceSize, executor);
            og_bn_map(&p, og_mul_kernels, og_mul_kernels64, 2, (const aclTensor *[]){&rv3, &g2},
                      (int[]){3, 4}, 1, &a_t, &a_s, NULL);
            av = stat_view(a_t, rank);
        } else {
            av = stat_view(rstd, rank);
        }
        if (rows) {
            // dx = a dy + (b (x - mean) + c): per-row statistics of the [N, G, C/G, S] view
            aclTensor ms = stat_view(mean, 3), as = gamma ? *a_t : stat_view(rstd, 3);
            aclTensor bs = stat_view(b_t, 3), cs = stat_view(c_t, 3);
            og_bn_rows(&p, og_bn_row_dx_kernels, og_bn_row_dx_kernels16, og_bn_row_dx_kernels64,
                       xr.dims, 4, 2, (const aclTensor *[]){&dyr, &xr}, (int[]){0, 1}, &dxr, 5, 4,
                       (const aclTensor *[]){&ms, &as, &bs, &cs}, (int[]){2, a_s, b_s, c_s}, true,
                       NULL);
            return og_prog_publish(&p, workspaceSize, executor);
        }
        aclTensor bv = stat_view(b_t, rank), cv = stat_view(c_t, rank);
        aclTensor gv = split_view(gradInput, G);
        og_bn_map(&p, og_bn_dx_kernels, og_bn_dx_kernels64, 6,
                  (const aclTensor *[]){&dyv, &xv, &mv, &av, &bv, &cv},
                  (int[]){dy_s, 1, 2, a_s, b_s, c_s}, 1, (const aclTensor *[]){&gv}, (int[]){5},
                  NULL);
    }
    return og_prog_publish(&p, workspaceSize, executor);
}
