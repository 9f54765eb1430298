/* aclnnHardsigmoid, aclnnInplaceHardsigmoid and aclnnHardsigmoidBackward: argument checks and
 * plans on the elementwise engine. Rules from ops-nn
 * activation/hard_sigmoid/op_api/aclnn_hardsigmoid.cpp (out has self's dtype and shape) and
 * activation/hard_sigmoid_grad/op_api/aclnn_hardsigmoid_backward.cpp (gradOutput, self and out
 * of one shape; gradOutput and self promote, out castable from the result). */
#include "aclnnop/aclnn_hardsigmoid.h"
#include "aclnnop/aclnn_hardsigmoid_backward.h"
#include "ops/activation/act_api.h"
#include "ops/activation/hardsigmoid/hardsigmoid_kernel.h"

OG_EW_DEFINE_KERNEL3_TABLES(hardsigmoid_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(hardsigmoid_bwd);

aclnnStatus aclnnHardsigmoidGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                             uint64_t *workspaceSize, aclOpExecutor **executor) {
    return og_act_unary(&og_op_Hardsigmoid, OG_EW_KERNEL(hardsigmoid_fwd), "self", self, "out", out,
                        OG_OUT_SAME_DTYPE, workspaceSize, executor);
}

aclnnStatus aclnnInplaceHardsigmoidGetWorkspaceSize(const aclTensor *self, uint64_t *workspaceSize,
                                                    aclOpExecutor **executor) {
    return og_act_unary(&og_op_InplaceHardsigmoid, OG_EW_KERNEL(hardsigmoid_fwd), "self", self,
                        "self", self, OG_OUT_SAME_DTYPE, workspaceSize, executor);
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
    return og_plan_backward(op, OG_EW_KERNEL(hardsigmoid_bwd), 2, ins, out, names, 0,
                            OG_OUT_CASTABLE, NULL, 0, workspaceSize, executor);
}
