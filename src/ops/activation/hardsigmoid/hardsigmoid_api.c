/* aclnnHardsigmoid, aclnnInplaceHardsigmoid and aclnnHardsigmoidBackward: argument checks and
 * plans on the elementwise engine. Rules from ops-nn
 * activation/hard_sigmoid/op_api/aclnn_hardsigmoid.cpp (out has self's dtype and shape; INT32 too)
 * and activation/hard_sigmoid_grad/op_api/aclnn_hardsigmoid_backward.cpp (gradOutput, self and out
 * of one shape; gradOutput and self promote, out castable from the result). */
#include "aclnnop/aclnn_hardsigmoid.h"
#include "aclnnop/aclnn_hardsigmoid_backward.h"
#include "ops/activation/act_api.h"
#include "ops/activation/hardsigmoid/hardsigmoid_kernel.h"
#include "ops/activation/relu/relu_int.h"

OG_EW_DEFINE_KERNEL3_TABLES(hardsigmoid_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(hardsigmoid_bwd);

// ops-nn also takes INT32 (hard_sigmoid's kernel: x converted to fp32, x / 6 + 0.5 clamped to
// [0, 1], truncated back): 1 exactly when x >= 3, else 0 — planned as the exact integer step.
static aclnnStatus plan_hardsigmoid(const og_opdesc *op, const char *self_name,
                                    const aclTensor *self, const char *out_name,
                                    const aclTensor *out, uint64_t *workspaceSize,
                                    aclOpExecutor **executor) {
    if (og_check_live("", "", self, OG_OBJ_TENSOR) != ACLNN_SUCCESS || self->dtype != ACL_INT32)
        return og_act_unary(op, OG_EW_KERNEL(hardsigmoid_fwd), self_name, self, out_name, out,
                            OG_OUT_SAME_DTYPE, workspaceSize, executor);
    const char *names[2] = {self_name, out_name};
    const void *ptrs[2] = {self, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 2, names, ptrs));
    const unsigned long long dts = OG_DTS_FLOATING | OG_DT(ACL_INT32);
    OG_TRY(og_check_tensor_of(op, self_name, self, 0, dts));
    OG_TRY(og_check_tensor_of(op, out_name, out, 0, dts));
    OG_TRY(og_check_same_dtype(op, self_name, self, out_name, out));
    OG_TRY(og_check_same_shape(op, self_name, self, out_name, out));
    const aclTensor *io[2] = {self, out};
    return og_plan_step_int(op, io, names, 2.5f, workspaceSize, executor); // x > 2.5: x >= 3
}

aclnnStatus aclnnHardsigmoidGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                             uint64_t *workspaceSize, aclOpExecutor **executor) {
    return plan_hardsigmoid(&og_op_Hardsigmoid, "self", self, "out", out, workspaceSize, executor);
}

aclnnStatus aclnnInplaceHardsigmoidGetWorkspaceSize(const aclTensor *self, uint64_t *workspaceSize,
                                                    aclOpExecutor **executor) {
    return plan_hardsigmoid(&og_op_InplaceHardsigmoid, "self", self, "self", self, workspaceSize,
                            executor);
}

aclnnStatus aclnnHardsigmoidBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                     const aclTensor *self, aclTensor *out,
                                                     uint64_t *workspaceSize,
                                                     aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_HardsigmoidBackward;
    static const char *const names[3] = {"gradOutput", "self", "out"};
    const void *ptrs[3] = {gradOutput, self, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 3, names, ptrs));
    const aclTensor *ins[2] = {gradOutput, self};
    return og_plan_backward(op, OG_EW_KERNEL_LIGHT(hardsigmoid_bwd), 2, ins, out, names, 0,
                            OG_OUT_CASTABLE, NULL, 0, workspaceSize, executor);
}
