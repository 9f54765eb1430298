/* aclnnRelu, aclnnInplaceRelu and aclnnThresholdBackward (relu's backward: there is no
 * aclnnReluBackward in ops-nn): argument checks and plans on the elementwise engine.
 * Rules from ops-nn activation/relu/op_api/aclnn_relu.cpp and
 * activation/threshold_grad_v2_d/op_api/aclnn_threshold_backward.cpp. */
#include "aclnnop/aclnn_relu.h"
#include "aclnnop/aclnn_threshold_backward.h"
#include "ops/activation/act_api.h"
#include "ops/activation/relu/relu_kernel.h"

OG_EW_DEFINE_KERNEL3_TABLES(relu_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(threshold_bwd);

aclnnStatus aclnnReluGetWorkspaceSize(const aclTensor *self, const aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor) {
    return og_act_unary(&og_op_Relu, OG_EW_KERNEL(relu_fwd), "self", self, "out", out,
                        OG_OUT_SAME_DTYPE, workspaceSize, executor);
}

aclnnStatus aclnnInplaceReluGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
                                             aclOpExecutor **executor) {
    return og_act_unary(&og_op_InplaceRelu, OG_EW_KERNEL(relu_fwd), "selfRef", selfRef, "selfRef",
                        selfRef, OG_OUT_SAME_DTYPE, workspaceSize, executor);
}

aclnnStatus aclnnThresholdBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                   const aclTensor *self,
                                                   const aclScalar *threshold, aclTensor *out,
                                                   uint64_t *workspaceSize,
                                                   aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_ThresholdBackward;
    static const char *const names[4] = {"gradOutput", "self", "out", "threshold"};
    const void *ptrs[4] = {gradOutput, self, out, threshold};
    OG_TRY(og_check_args(op, workspaceSize, executor, 4, names, ptrs));
    og_threshold_params p = {0};
    OG_TRY(og_check_scalar(op, "threshold", threshold, &p.threshold));
    const aclTensor *ins[2] = {gradOutput, self};
    return og_plan_backward(op, OG_EW_KERNEL(threshold_bwd), 2, ins, out, names, true,
                            OG_OUT_SAME_DTYPE, &p, sizeof p, workspaceSize, executor);
}
