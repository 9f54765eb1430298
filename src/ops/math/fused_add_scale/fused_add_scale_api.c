/* aclnnFusedAddScale and aclnnFusedAddScaleBackward (opgrad extension): argument checks, the
 * forward on the elementwise engine, the backward as three reductions on the reduction engine. */
#include "aclnnop/aclnn_fused_add_scale.h"
#include "aclnnop/aclnn_fused_add_scale_backward.h"
#include "engine/reduce.h"
#include "ops/common/checks.h"
#include "ops/math/fused_add_scale/fused_add_scale_kernel.h"
#include "ops/math/mul/mul_kernel.h"
#include "runtime/error.h"
#include "tensor/dtype.h"

OG_EW_DEFINE_KERNEL3_TABLES(fused_add_scale);

// x [..., C] (rank >= 1), bias [C], scale one element (rank <= 1) or [C].
static aclnnStatus check_operands(const og_opdesc *op, const aclTensor *x, const aclTensor *bias,
                                  const aclTensor *scale) {
    OG_TRY(og_check_tensor_of(op, "x", x, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "bias", bias, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "scale", scale, 0, OG_DTS_FLOATING64));
    int64_t c = x->dims[x->ndim - 1];
    char a[160], b[160];
    if (bias->ndim != 1 || bias->dims[0] != c)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: bias has shape %s but x %s has C = %lld channels (its "
                       "last dim): bias must be [%lld]",
                       op->name, og_shape_str(bias->dims, bias->ndim, a, sizeof a),
                       og_shape_str(x->dims, x->ndim, b, sizeof b), (long long)c, (long long)c);
    bool one = scale->ndim <= 1 && scale->numel == 1;
    bool per_channel = scale->ndim == 1 && scale->dims[0] == c;
    if (!one && !per_channel)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: scale has shape %s; it must have one element ([1]) or "
                       "one per channel ([%lld])",
                       op->name, og_shape_str(scale->dims, scale->ndim, a, sizeof a), (long long)c);
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnFusedAddScaleGetWorkspaceSize(const aclTensor *x, const aclTensor *bias,
                                               const aclTensor *scale, aclTensor *out,
                                               uint64_t *workspaceSize, aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_FusedAddScale;
    static const char *const names[] = {"x", "bias", "scale", "out"};
    const void *ptrs[4] = {x, bias, scale, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 4, names, ptrs));
    OG_TRY(check_operands(op, x, bias, scale));
    OG_TRY(og_check_tensor_of(op, "out", out, 0, OG_DTS_FLOATING64));
    const aclTensor *ins[3] = {x, bias, scale};
    aclDataType promoted;
    OG_TRY(og_check_promotion(op, 3, names, ins, "out", out, &promoted));
    OG_TRY(og_check_same_shape(op, "x", x, "out", out));
    og_ew_op ew = {.op = op,
                   .kernels = og_fused_add_scale_kernels,
                   .kernels16 = og_fused_add_scale_kernels16,
                   .kernels64 = og_fused_add_scale_kernels64,
                   .kernels_nt = og_fused_add_scale_nt_kernels,
                   .nin = 3,
                   .in = {x, bias, scale},
                   .nout = 1,
                   .out = {out},
                   .names = {names[0], names[1], names[2], names[3]},
                   .compute_dtype = promoted};
    return og_ew_plan_op(&ew, workspaceSize, executor);
}

aclnnStatus aclnnFusedAddScaleBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                       const aclTensor *x, const aclTensor *bias,
                                                       const aclTensor *scale, aclTensor *gradX,
                                                       aclTensor *gradBias, aclTensor *gradScale,
                                                       uint64_t *workspaceSize,
                                                       aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_FusedAddScaleBackward;
    static const char *const names[] = {"gradOutput", "x",        "bias",     "scale",
                                        "gradX",      "gradBias", "gradScale"};
    const aclTensor *io[7] = {gradOutput, x, bias, scale, gradX, gradBias, gradScale};
    const void *ptrs[7];
    for (int k = 0; k < 7; k++) ptrs[k] = io[k];
    OG_TRY(og_check_args(op, workspaceSize, executor, 7, names, ptrs));
    OG_TRY(og_check_tensor_of(op, "gradOutput", gradOutput, 0, OG_DTS_FLOATING64));
    OG_TRY(check_operands(op, x, bias, scale));
    OG_TRY(og_check_same_shape(op, "gradOutput", gradOutput, "x", x));
    aclDataType promoted;
    for (int k = 4; k < 7; k++) {
        OG_TRY(og_check_tensor_of(op, names[k], io[k], 0, OG_DTS_FLOATING64));
        OG_TRY(og_check_promotion(op, 4, names, io, names[k], io[k], &promoted));
        OG_TRY(og_check_same_shape(op, names[k - 3], io[k - 3], names[k], io[k]));
    }
    og_reduce_op r[3];
    // gradX = g * scale (nothing summed)
    r[0] = (og_reduce_op){.nin = 2,
                          .in = {gradOutput, scale},
                          .in_slot = {0, 3},
                          .map = og_mul_kernels,
                          .map16 = og_mul_kernels16,
                          .map64 = og_mul_kernels64,
                          .map_nt = og_mul_nt_kernels,
                          .out = gradX,
                          .out_slot = 4,
                          .round_in = ACL_FLOAT};
    og_reduce_to_shape(&r[0], x->dims, x->ndim, gradX);
    // gradBias = sum over the rows of g * scale. An fp32 gradX holds exactly those products once
    // the first plan has run, so the sum reads them instead of forming them again.
    r[1] = r[0];
    if (gradX->dtype == ACL_FLOAT)
        r[1] = (og_reduce_op){.nin = 1, .in = {gradX}, .in_slot = {4}, .round_in = ACL_FLOAT};
    r[1].out = gradBias, r[1].out_slot = 5;
    og_reduce_to_shape(&r[1], x->dims, x->ndim, gradBias);
    // gradScale = sum of g * (x + bias), down to scale's shape
    r[2] = (og_reduce_op){.nin = 3,
                          .in = {x, bias, gradOutput},
                          .in_slot = {1, 2, 0},
                          .map = og_fused_add_scale_kernels,
                          .map64 = og_fused_add_scale_kernels64,
                          .out = gradScale,
                          .out_slot = 6,
                          .round_in = ACL_FLOAT};
    og_reduce_to_shape(&r[2], x->dims, x->ndim, gradScale);
    return og_reduce_plan_op(op, 3, r, 7, 4, io, workspaceSize, executor);
}
