/* aclnnHardswish, aclnnInplaceHardswish and aclnnHardswishBackward: argument checks and plans on
 * the elementwise engine. Rules from ops-nn
 * activation/hard_swish/op_host/op_api/aclnn_hardswish.cpp and
 * activation/hard_swish_grad/op_api/aclnn_hardswish_backward.cpp. */
#include "aclnnop/aclnn_hardswish.h"
#include "aclnnop/aclnn_hardswish_backward.h"
#include "ops/activation/act_api.h"
#include "ops/activation/hardswish/hardswish_kernel.h"

OG_EW_DEFINE_KERNEL3_TABLES(hardswish_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(hardswish_bwd);

aclnnStatus aclnnHardswishGetWorkspaceSize(const aclTensor *self, const aclTensor *out,
                                           uint64_t *workspaceSize, aclOpExecutor **executor) {
    return og_act_unary(&og_op_Hardswish, OG_EW_KERNEL(hardswish_fwd), "self", self, "out", out,
                        OG_OUT_CASTABLE, workspaceSize, executor);
}

aclnnStatus aclnnInplaceHardswishGetWorkspaceSize(const aclTensor *self, uint64_t *workspaceSize,
                                                  aclOpExecutor **executor) {
    return og_act_unary(&og_op_InplaceHardswish, OG_EW_KERNEL(hardswish_fwd), "self", self, "self",
                        self, OG_OUT_CASTABLE, workspaceSize, executor);
}

aclnnStatus aclnnHardswishBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                   const aclTensor *self, aclTensor *out,
                                                   uint64_t *workspaceSize,
                                                   aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_HardswishBackward;
    static const char *const names[3] = {"gradOutput", "self", "out"};
    const void *ptrs[3] = {gradOutput, self, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 3, names, ptrs));
    const aclTensor *ins[2] = {gradOutput, self};
    return og_plan_backward(op, OG_EW_KERNEL(hardswish_bwd), 2, ins, out, names, 0,
                            OG_OUT_SAME_DTYPE, NULL, 0, workspaceSize, executor);
}
