/* aclnnFusedMatmul (ops-nn matmul/fused_mat_mul, aclnn_fused_matmul.cpp) and its backward
 * aclnnFusedMatmulBackward (opgrad extension): argument checks, the forward as one GEMM step with
 * its epilogue, the backward as a program of GEMM and REDUCE steps (docs/ops/matmul.md). float64
 * (an opgrad extension: ops-nn lists no DOUBLE) runs the same steps on the GEMM engine's float64
 * loop, its temporaries in double. */
#include <stdio.h>
#include <string.h>

#include "aclnnop/aclnn_fused_matmul.h"
#include "aclnnop/aclnn_fused_matmul_backward.h"
#include "ops/activation/gelu/gelu_kernel.h"
#include "ops/activation/relu/relu_kernel.h"
#include "ops/math/mul/mul_kernel.h"
#include "ops/matmul/matmul_common.h"
#include "runtime/error.h"
#include "tensor/dtype.h"
#include "tensor/tensor.h"

typedef enum { FM_NONE, FM_16CAST32, FM_ADD, FM_MUL, FM_GELU_ERF, FM_GELU_TANH, FM_RELU } fm_type;

static const char *const FM_NAMES[] = {"",         "16cast32",  "add", "mul",
                                       "gelu_erf", "gelu_tanh", "relu"};

static bool is_gelu(fm_type t) { return t == FM_GELU_ERF || t == FM_GELU_TANH; }
static bool is_16bit(aclDataType dt) { return dt == ACL_FLOAT16 || dt == ACL_BF16; }

// What the checks established.
typedef struct fm_info {
    fm_type type;
    aclDataType promoted;
    aclDataType acc; // the temporaries' dtype: float64 for a float64 product, else float32
    int nbatch;      // y's batch dims (its dims but the last two)
    int64_t batch[OG_MAX_DIMS];
    int64_t M, N, K;
    int yndim;
    int64_t ydims[OG_MAX_DIMS];
} fm_info;

static aclnnStatus check_shape_is(const og_opdesc *op, const char *name, const aclTensor *t,
                                  const char *what, const int64_t *dims, int ndim) {
    bool same = t->ndim == ndim;
    for (int d = 0; same && d < ndim; d++) same = t->dims[d] == dims[d];
    if (same) return ACLNN_SUCCESS;
    char s1[160], s2[160];
    return og_fail(ACLNN_ERR_PARAM_INVALID,
                   "%sGetWorkspaceSize: %s has shape %s but %s has shape %s", op->name, name,
                   og_shape_str(t->dims, t->ndim, s1, sizeof s1), what,
                   og_shape_str(dims, ndim, s2, sizeof s2));
}

// The forward's arguments (the NULLs checked by the caller): x1 [..., M, K] @ x2 [..., K, N] with
// broadcast batch dims, bias [N] or [1,N] (optional; refused with 161001 for the gelus), x3 with
// y's last two dims and batch dims that broadcast to y's (required for add / mul), the dtype rules
// of ops-nn, and yname (y, or the backward's gradY) of the product's shape.
static aclnnStatus check_forward(const og_opdesc *op, const aclTensor *x1, const aclTensor *x2,
                                 const aclTensor *bias, const aclTensor *x3,
                                 const char *fusedOpType, int8_t cubeMathType, const char *yname,
                                 const aclTensor *y, bool y_is_out, fm_info *s) {
    OG_TRY(og_check_tensor_of(op, "x1", x1, 2, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "x2", x2, 2, OG_DTS_FLOATING64));
    if (bias) OG_TRY(og_check_tensor_of(op, "bias", bias, 1, OG_DTS_FLOATING64));
    if (x3) OG_TRY(og_check_tensor_of(op, "x3", x3, 2, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, yname, y, 0, OG_DTS_FLOATING64));
    int t = 0;
    while (t < (int)(sizeof FM_NAMES / sizeof *FM_NAMES) && strcmp(fusedOpType, FM_NAMES[t])) t++;
    if (t == (int)(sizeof FM_NAMES / sizeof *FM_NAMES))
        return og_fail(
            ACLNN_ERR_PARAM_INVALID,
            "%sGetWorkspaceSize: fusedOpType \"%.40s\" is not one of \"\", \"16cast32\", "
            "\"add\", \"mul\", \"gelu_erf\", \"gelu_tanh\", \"relu\"",
            op->name, fusedOpType);
    s->type = (fm_type)t;
    if (is_gelu(s->type) && bias)
        return og_fail(ACLNN_ERR_PARAM_NULLPTR,
                       "%sGetWorkspaceSize: bias must be NULL for fusedOpType \"%s\" (the gelus "
                       "take no bias)",
                       op->name, fusedOpType);
    if ((s->type == FM_ADD || s->type == FM_MUL) && !x3)
        return og_fail(ACLNN_ERR_PARAM_NULLPTR,
                       "%sGetWorkspaceSize: x3 is NULL; fusedOpType \"%s\" needs it", op->name,
                       fusedOpType);
    OG_TRY(og_mm_check_cube_math(op, cubeMathType));
    s->promoted = og_promote(x1->dtype, x2->dtype);
    s->acc = s->promoted == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT;
    // the gelus take float64 too (opgrad's extension for gradient checks); "16cast32" writes
    // float32
    if ((is_gelu(s->type) && !is_16bit(s->promoted) && s->promoted != ACL_DOUBLE) ||
        (s->type == FM_16CAST32 && !is_16bit(s->promoted)))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: fusedOpType \"%s\" takes float16 or bfloat16 x1 and x2 "
                       "(ops-nn's rule%s), but they are %s and %s",
                       op->name, fusedOpType,
                       is_gelu(s->type) ? "; float64 too, as opgrad's extension" : "",
                       og_dtype_name(x1->dtype), og_dtype_name(x2->dtype));
    if (!is_gelu(s->type) && s->type != FM_16CAST32 && s->promoted == ACL_FLOAT &&
        cubeMathType != 3)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: fusedOpType \"%s\" takes float32 inputs only with "
                       "cubeMathType 3 (USE_HF32) (ops-nn's rule); cubeMathType is %d",
                       op->name, fusedOpType, (int)cubeMathType);
    if (y_is_out) {
        if (s->type == FM_16CAST32 && y->dtype != ACL_FLOAT)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: y has dtype %s; fusedOpType \"16cast32\" writes "
                           "float32",
                           op->name, og_dtype_name(y->dtype));
        OG_TRY(og_check_castable(op, s->promoted, "y", y));
    }
    // shapes
    char s1[160], s2[160];
    int r1 = x1->ndim, r2 = x2->ndim;
    s->M = x1->dims[r1 - 2], s->K = x1->dims[r1 - 1], s->N = x2->dims[r2 - 1];
    if (x2->dims[r2 - 2] != s->K)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: x1 %s and x2 %s do not multiply: x1's last dim (%lld) "
                       "must equal x2's second-to-last dim (%lld)",
                       op->name, og_shape_str(x1->dims, r1, s1, sizeof s1),
                       og_shape_str(x2->dims, r2, s2, sizeof s2), (long long)s->K,
                       (long long)x2->dims[r2 - 2]);
    int bad;
    if (!og_broadcast_shapes(x1->dims, r1 - 2, x2->dims, r2 - 2, s->batch, &s->nbatch, &bad))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: the batch dims (all but the last two) of x1 %s and x2 "
                       "%s do not broadcast (batch dim %d differs and neither is 1)",
                       op->name, og_shape_str(x1->dims, r1, s1, sizeof s1),
                       og_shape_str(x2->dims, r2, s2, sizeof s2), bad);
    s->yndim = s->nbatch + 2;
    memcpy(s->ydims, s->batch, sizeof(int64_t) * (size_t)s->nbatch);
    s->ydims[s->nbatch] = s->M, s->ydims[s->nbatch + 1] = s->N;
    char what[400];
    snprintf(what, sizeof what, "x1 %s @ x2 %s", og_shape_str(x1->dims, r1, s1, sizeof s1),
             og_shape_str(x2->dims, r2, s2, sizeof s2));
    OG_TRY(check_shape_is(op, yname, y, what, s->ydims, s->yndim));
    if (bias) {
        bool ok = (bias->ndim == 1 && bias->dims[0] == s->N) ||
                  (bias->ndim == 2 && bias->dims[0] == 1 && bias->dims[1] == s->N);
        if (!ok)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: bias has shape %s; it must be [%lld] or [1,%lld] "
                           "(N = %lld, the columns of x2)",
                           op->name, og_shape_str(bias->dims, bias->ndim, s1, sizeof s1),
                           (long long)s->N, (long long)s->N, (long long)s->N);
    }
    if (x3 && (s->type == FM_ADD || s->type == FM_MUL)) {
        int r3 = x3->ndim;
        bool ok = r3 <= s->yndim && x3->dims[r3 - 2] == s->M && x3->dims[r3 - 1] == s->N;
        for (int d = 0; ok && d < r3 - 2; d++) {
            int64_t yd = s->batch[s->nbatch - (r3 - 2) + d];
            ok = x3->dims[d] == 1 || x3->dims[d] == yd;
        }
        if (!ok)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: x3 has shape %s but y is %s: x3 must have y's last "
                           "two dims and batch dims of 1 or y's",
                           op->name, og_shape_str(x3->dims, r3, s1, sizeof s1),
                           og_shape_str(s->ydims, s->yndim, s2, sizeof s2));
    }
    return ACLNN_SUCCESS;
}

// The GEMM z = x1 @ x2 (+ bias) over y's batch (slots: x1, x2, bias), its epilogue left NONE.
static og_gemm_op product(const fm_info *s, const aclTensor *x1, int x1_slot, const aclTensor *x2,
                          int x2_slot, const aclTensor *bias, int bias_slot, int8_t cubeMathType) {
    og_gemm_op g = {.nbatch = s->nbatch,
                    .M = s->M,
                    .N = s->N,
                    .K = s->K,
                    .alpha = 1,
                    .round_ab = og_mm_round_ab(cubeMathType, s->promoted),
                    .f64 = s->promoted == ACL_DOUBLE,
                    .epi = OG_GEMM_EPI_NONE};
    memcpy(g.batch, s->batch, sizeof(int64_t) * (size_t)s->nbatch);
    g.a = og_mm_mat(x1, x1_slot, s->nbatch, x1->ndim - 2, x1->ndim - 1);
    g.b = og_mm_mat(x2, x2_slot, s->nbatch, x2->ndim - 2, x2->ndim - 1);
    if (bias) {
        g.d = og_mm_mat(bias, bias_slot, s->nbatch, bias->ndim == 2 ? 0 : -1, bias->ndim - 1);
        g.beta = 1;
    }
    return g;
}

// A tensor of y's layout [batch..., rows, cols] as an operand over y's batch.
static og_gemm_mat mat_of(const aclTensor *t, int slot, const fm_info *s) {
    return og_mm_mat(t, slot, s->nbatch, t->ndim - 2, t->ndim - 1);
}

aclnnStatus aclnnFusedMatmulGetWorkspaceSize(const aclTensor *x1, const aclTensor *x2,
                                             const aclTensor *bias, const aclTensor *x3,
                                             const char *fusedOpType, int8_t cubeMathType,
                                             const aclTensor *y, uint64_t *workspaceSize,
                                             aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_FusedMatmul;
    static const char *const names[] = {"x1", "x2", "fusedOpType", "y"};
    const void *ptrs[4] = {x1, x2, fusedOpType, y};
    OG_TRY(og_check_args(op, workspaceSize, executor, 4, names, ptrs));
    fm_info s;
    OG_TRY(check_forward(op, x1, x2, bias, x3, fusedOpType, cubeMathType, "y", y, true, &s));
    bool uses_x3 = s.type == FM_ADD || s.type == FM_MUL;
    const aclTensor *io[5] = {x1, x2, bias, x3, y};
    og_prog p;
    og_prog_init(&p, op, 4, 1, io);
    if (y->numel > 0) {
        static const char *const in_names[4] = {"x1", "x2", "bias", "x3"};
        const aclTensor *ins[4] = {x1, x2, bias, uses_x3 ? x3 : NULL};
        OG_TRY(og_mm_check_memory(op, 4, ins, in_names, 0, 1, &y, &names[3]));
        og_gemm_op g = product(&s, x1, 0, x2, 1, bias, 2, cubeMathType);
        g.c = mat_of(y, 4, &s);
        switch (s.type) {
        case FM_NONE:
        case FM_16CAST32:
            break;
        case FM_RELU:
            g.epi = OG_GEMM_EPI_ACT, g.act_kernels = og_relu_fwd_kernels;
            g.act_kernels64 = og_relu_fwd_kernels64;
            break;
        case FM_GELU_ERF:
            g.epi = OG_GEMM_EPI_ACT, g.act_kernels = og_gelu_erf_fwd_kernels;
            g.act_kernels64 = og_gelu_erf_fwd_kernels64;
            break;
        case FM_GELU_TANH:
            g.epi = OG_GEMM_EPI_ACT, g.act_kernels = og_gelu_tanh_fwd_kernels;
            g.act_kernels64 = og_gelu_tanh_fwd_kernels64;
            break;
        case FM_ADD:
        case FM_MUL:
            g.epi = s.type == FM_ADD ? OG_GEMM_EPI_ADD : OG_GEMM_EPI_MUL;
            g.e = mat_of(x3, 3, &s);
            break;
        }
        og_prog_gemm(&p, &g);
    }
    return og_prog_publish(&p, workspaceSize, executor);
}

// A reduction of `in` (slot in_slot, of y's shape) down to `out`'s shape.
static void reduce_to(og_prog *p, const fm_info *s, const aclTensor *in, int in_slot,
                      const aclTensor *out, int out_slot) {
    og_reduce_op r = {.nin = 1,
                      .in = {in},
                      .in_slot = {in_slot},
                      .out = out,
                      .out_slot = out_slot,
                      .round_in = ACL_FLOAT};
    og_reduce_to_shape(&r, s->ydims, s->yndim, out);
    og_prog_reduce(p, &r);
}

// Does t's batch cover y's (no batch dim of y broadcasts t)?
static bool covers_batch(const aclTensor *t, const fm_info *s) {
    return og_mm_numel(t->dims, t->ndim - 2) == og_mm_numel(s->batch, s->nbatch);
}

// g (a product over all of s's batch dims, rows x cols each) into an fp32 (float64) temporary,
// then a REDUCE step sums it over the batch dims that broadcast `out` (slot out_slot) and rounds
// once to out's dtype. False when the temporary could not be added (the builder has failed).
static bool gemm_batch_summed(og_prog *p, const fm_info *s, og_gemm_op *g, int64_t rows,
                              int64_t cols, const aclTensor *out, int out_slot) {
    const aclTensor *t;
    int64_t dims[OG_MAX_DIMS];
    memcpy(dims, s->batch, sizeof(int64_t) * (size_t)s->nbatch);
    dims[s->nbatch] = rows, dims[s->nbatch + 1] = cols;
    int ts = og_prog_temp(p, s->acc, s->yndim, dims, &t);
    if (ts < 0) return false;
    g->c = mat_of(t, ts, s);
    if (t->numel > 0) og_prog_gemm(p, g);
    og_reduce_op r = {.nin = 1,
                      .in = {t},
                      .in_slot = {ts},
                      .out = out,
                      .out_slot = out_slot,
                      .round_in = ACL_FLOAT};
    og_reduce_to_shape(&r, dims, s->yndim, out);
    og_prog_reduce(p, &r);
    return true;
}

// The rows of t (dim row_dim, after t's batch dims) and its batch dims as one index: true when
// their strides nest (size-1 dims aside), with *rs its stride.
static bool fold_rows(const aclTensor *t, int row_dim, int64_t *rs) {
    int64_t expected = -1;
    *rs = 0;
    for (int d = row_dim; d >= 0; d--) {
        if (t->dims[d] == 1) continue;
        if (expected < 0)
            *rs = t->strides[d];
        else if (t->strides[d] != expected)
            return false;
        expected = t->strides[d] * t->dims[d];
    }
    return true;
}

aclnnStatus aclnnFusedMatmulBackwardGetWorkspaceSize(const aclTensor *gradY, const aclTensor *x1,
                                                     const aclTensor *x2, const aclTensor *bias,
                                                     const aclTensor *x3, const char *fusedOpType,
                                                     int8_t cubeMathType, aclTensor *gradX1,
                                                     aclTensor *gradX2, aclTensor *gradBias,
                                                     aclTensor *gradX3, uint64_t *workspaceSize,
                                                     aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_FusedMatmulBackward;
    static const char *const names[] = {"gradY", "x1", "x2", "fusedOpType"};
    const void *ptrs[4] = {gradY, x1, x2, fusedOpType};
    OG_TRY(og_check_args(op, workspaceSize, executor, 4, names, ptrs));
    static const char *const in_names[5] = {"gradY", "x1", "x2", "bias", "x3"};
    static const char *const out_names[4] = {"gradX1", "gradX2", "gradBias", "gradX3"};
    const aclTensor *ins[5] = {gradY, x1, x2, bias, x3};
    const aclTensor *outs[4] = {gradX1, gradX2, gradBias, gradX3};
    // every tensor given is a live one before any rule that involves several arguments
    for (int k = 0; k < 4; k++)
        if (outs[k]) OG_TRY(og_check_tensor_of(op, out_names[k], outs[k], 0, OG_DTS_FLOATING64));
    fm_info s;
    OG_TRY(
        check_forward(op, x1, x2, bias, x3, fusedOpType, cubeMathType, "gradY", gradY, false, &s));
    bool uses_x3 = s.type == FM_ADD || s.type == FM_MUL;
    for (int k = 0; k < 4; k++) {
        if (!outs[k]) continue;
        const aclTensor *of = ins[1 + k];
        if (!of || (k == 3 && !uses_x3))
            return og_fail(
                ACLNN_ERR_PARAM_INVALID, "%sGetWorkspaceSize: %s is given but %s: it must be NULL",
                op->name, out_names[k],
                of ? "fusedOpType does not use x3" : (k == 2 ? "bias is NULL" : "x3 is NULL"));
        OG_TRY(check_shape_is(op, out_names[k], outs[k], in_names[1 + k], of->dims, of->ndim));
    }
    const aclTensor *read[5] = {gradY, x1, x2, bias, uses_x3 ? x3 : NULL};
    OG_TRY(og_mm_check_memory(op, 5, read, in_names, 0, 4, outs, out_names));

    const aclTensor *io[9] = {gradY, x1, x2, bias, x3, gradX1, gradX2, gradBias, gradX3};
    og_prog p;
    og_prog_init(&p, op, 5, 4, io);
    bool want[4];
    for (int k = 0; k < 4; k++) want[k] = outs[k] && outs[k]->numel > 0;
    bool need_dz = want[0] || want[1] || want[2];
    const aclTensor *dz = gradY; // dL/dz, z = x1 @ x2 + bias
    int dz_slot = 0;
    og_gemm_op z = product(&s, x1, 1, x2, 2, bias, 3, cubeMathType);
    bool y_nonempty = gradY->numel > 0;
    // (1) dZ: gradY itself, or formed in the epilogue of the product that recomputes z
    if (s.type == FM_RELU || is_gelu(s.type)) {
        if (need_dz) {
            dz_slot = og_prog_temp(&p, s.acc, s.yndim, s.ydims, &dz);
            if (dz_slot < 0) return og_prog_publish(&p, workspaceSize, executor);
            z.epi = OG_GEMM_EPI_ACT_GRAD;
            z.e = mat_of(gradY, 0, &s);
            z.c = mat_of(dz, dz_slot, &s);
            if (s.type == FM_RELU) {
                og_threshold_params th = {0}; // relu'(z) = z > 0
                z.act_kernels = og_threshold_bwd_kernels;
                z.act_kernels64 = og_threshold_bwd_kernels64;
                memcpy(z.act_params, &th, sizeof th);
            } else if (s.type == FM_GELU_ERF) {
                z.act_kernels = og_gelu_erf_bwd_kernels;
                z.act_kernels64 = og_gelu_erf_bwd_kernels64;
            } else {
                z.act_kernels = og_gelu_tanh_bwd_kernels;
                z.act_kernels64 = og_gelu_tanh_bwd_kernels64;
            }
            if (y_nonempty) og_prog_gemm(&p, &z);
        }
    } else if (s.type == FM_MUL && (need_dz || want[3])) {
        // dZ = gradY * x3; gradX3 = gradY * z, summed to x3's shape
        dz_slot = og_prog_temp(&p, s.acc, s.yndim, s.ydims, &dz);
        if (dz_slot < 0) return og_prog_publish(&p, workspaceSize, executor);
        if (want[3]) {
            z.epi = OG_GEMM_EPI_MUL_GRAD;
            z.e = mat_of(gradY, 0, &s);
            z.f = mat_of(x3, 4, &s);
            z.c = mat_of(dz, dz_slot, &s);
            const aclTensor *t3 = gradX3;
            int t3_slot = 8;
            bool direct = covers_batch(x3, &s);
            if (!direct) t3_slot = og_prog_temp(&p, s.acc, s.yndim, s.ydims, &t3);
            if (t3_slot < 0) return og_prog_publish(&p, workspaceSize, executor);
            z.c2 = mat_of(t3, t3_slot, &s);
            if (y_nonempty) og_prog_gemm(&p, &z);
            if (!direct) reduce_to(&p, &s, t3, t3_slot, gradX3, 8);
        } else if (y_nonempty) { // z is not needed: one elementwise product
            og_ew_op m = {.op = op,
                          .kernels = og_mul_kernels,
                          .kernels64 = og_mul_kernels64,
                          .nin = 2,
                          .in = {gradY, x3},
                          .nout = 1,
                          .out = {dz},
                          .names = {"gradY", "x3", "dZ"},
                          .slots = true,
                          .in_slot = {0, 4},
                          .out_slot = {dz_slot},
                          .compute_dtype = s.acc};
            og_prog_map(&p, &m);
        }
    } else if (s.type == FM_ADD && want[3]) {
        reduce_to(&p, &s, gradY, 0, gradX3, 8); // gradX3 = gradY summed to x3's shape
    }
    // (2) gradX1 = dZ @ x2^T, summed over the batch dims that broadcast x1
    if (want[0]) {
        og_gemm_op g = {.nbatch = s.nbatch,
                        .M = s.M,
                        .N = s.K,
                        .K = s.N,
                        .alpha = 1,
                        .round_ab = z.round_ab,
                        .f64 = z.f64,
                        .epi = OG_GEMM_EPI_NONE};
        memcpy(g.batch, s.batch, sizeof(int64_t) * (size_t)s.nbatch);
        g.a = mat_of(dz, dz_slot, &s);
        g.b = og_mm_transposed(mat_of(x2, 2, &s));
        if (covers_batch(x1, &s)) {
            g.c = mat_of(gradX1, 5, &s);
            og_prog_gemm(&p, &g);
        } else if (!gemm_batch_summed(&p, &s, &g, s.M, s.K, gradX1, 5)) {
            return og_prog_publish(&p, workspaceSize, executor);
        }
    }
    // (3) gradX2 = x1^T @ dZ, summed over the batch dims that broadcast x2: when x2 has no batch
    // of its own and x1 and dZ fold their batch into their rows, one product sums it (the batch
    // joins the reduction dim)
    if (want[1]) {
        og_gemm_op g = {.nbatch = s.nbatch,
                        .M = s.K,
                        .N = s.N,
                        .K = s.M,
                        .alpha = 1,
                        .round_ab = z.round_ab,
                        .f64 = z.f64,
                        .epi = OG_GEMM_EPI_NONE};
        memcpy(g.batch, s.batch, sizeof(int64_t) * (size_t)s.nbatch);
        g.a = og_mm_transposed(mat_of(x1, 1, &s));
        g.b = mat_of(dz, dz_slot, &s);
        int64_t rs1, rsz;
        if (covers_batch(x2, &s)) {
            g.c = mat_of(gradX2, 6, &s);
            og_prog_gemm(&p, &g);
        } else if (og_mm_numel(x2->dims, x2->ndim - 2) == 1 && fold_rows(x1, x1->ndim - 2, &rs1) &&
                   fold_rows(dz, dz->ndim - 2, &rsz)) {
            g.nbatch = 0;
            g.K = s.M * og_mm_numel(s.batch, s.nbatch);
            g.a = og_mm_transposed(og_mm_mat(x1, 1, 0, x1->ndim - 2, x1->ndim - 1));
            g.a.cs = rs1;
            g.b = og_mm_mat(dz, dz_slot, 0, dz->ndim - 2, dz->ndim - 1);
            g.b.rs = rsz;
            g.c = og_mm_mat(gradX2, 6, 0, x2->ndim - 2, x2->ndim - 1);
            og_prog_gemm(&p, &g);
        } else if (!gemm_batch_summed(&p, &s, &g, s.K, s.N, gradX2, 6)) {
            return og_prog_publish(&p, workspaceSize, executor);
        }
    }
    // (4) gradBias = dZ summed over the rows and the batch
    if (want[2]) reduce_to(&p, &s, dz, dz_slot, gradBias, 7);
    return og_prog_publish(&p, workspaceSize, executor);
}
