/* aclnnSigmoid, aclnnInplaceSigmoid, aclnnSigmoidBackward: argument checks and plans on the
 * elementwise engine (kernels: sigmoid_kernel_simd.c). */
#include "aclnnop/aclnn_sigmoid.h"
#include "aclnnop/aclnn_sigmoid_backward.h"
#include "ops/activation/act_api.h"
#include "ops/activation/sigmoid/sigmoid_kernel.h"

OG_EW_DEFINE_KERNEL3_TABLES(sigmoid_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(sigmoid_bwd);

aclnnStatus aclnnSigmoidGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                         uint64_t *workspaceSize, aclOpExecutor **executor) {
    // ops-nn: an integer or bool self is cast to out's (floating) dtype; a floating one is
    // computed in its own dtype and cast to out's
    return og_act_unary(&og_op_Sigmoid, OG_EW_KERNEL_HEAVY(sigmoid_fwd), "self", self, "out", out,
                        OG_OUT_FLOAT_FROM_ANY, workspaceSize, executor);
}

aclnnStatus aclnnInplaceSigmoidGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
                                                aclOpExecutor **executor) {
    return og_act_unary(&og_op_InplaceSigmoid, OG_EW_KERNEL_HEAVY(sigmoid_fwd), "selfRef", selfRef,
                        "selfRef", selfRef, OG_OUT_SAME_DTYPE, workspaceSize, executor);
}

aclnnStatus aclnnSigmoidBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                 const aclTensor *output, aclTensor *gradInput,
                                                 uint64_t *workspaceSize,
                                                 aclOpExecutor **executor) {
    static const char *const names[3] = {"gradOutput", "output", "gradInput"};
    return og_act_grad(&og_op_SigmoidBackward, OG_EW_KERNEL(sigmoid_bwd), names, gradOutput, output,
                       gradInput, 0, workspaceSize, executor);
}
