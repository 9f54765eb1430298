/* aclnnSigmoid, aclnnInplaceSigmoid, aclnnSigmoidBackward: argument checks and plans on the
 * elementwise engine (kernels: sigmoid_kernel_simd.c). */
#include "aclnnop/aclnn_sigmoid.h"
#include "aclnnop/aclnn_sigmoid_backward.h"
#include "ops/activation/sigmoid/act_plan.h"
#include "ops/activation/sigmoid/sigmoid_kernel.h"

OG_EW_DEFINE_KERNEL3_TABLES(sigmoid_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(sigmoid_bwd);

static const char OP_SIGMOID[] = "aclnnSigmoid";
static const char OP_INPLACE_SIGMOID[] = "aclnnInplaceSigmoid";
static const char OP_SIGMOID_BACKWARD[] = "aclnnSigmoidBackward";

aclnnStatus aclnnSigmoidGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                         uint64_t *workspaceSize, aclOpExecutor **executor) {
    return act_unary_api(OP_SIGMOID, og_sigmoid_fwd_kernels, og_sigmoid_fwd_kernels16, "self", self,
                         "out", out, 0, workspaceSize, executor);
}

aclnnStatus aclnnSigmoid(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                         aclrtStream stream) {
    return og_executor_launch(OP_SIGMOID, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnInplaceSigmoidGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
                                                aclOpExecutor **executor) {
    return act_unary_api(OP_INPLACE_SIGMOID, og_sigmoid_fwd_kernels, og_sigmoid_fwd_kernels16,
                         "selfRef", selfRef, "selfRef", selfRef, ACT_DTS_DOUBLE_COMPLEX,
                         workspaceSize, executor);
}

aclnnStatus aclnnInplaceSigmoid(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream) {
    return og_executor_launch(OP_INPLACE_SIGMOID, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnSigmoidBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                 const aclTensor *output, aclTensor *gradInput,
                                                 uint64_t *workspaceSize,
                                                 aclOpExecutor **executor) {
    static const char *const names[3] = {"gradOutput", "output", "gradInput"};
    return act_binary_api(OP_SIGMOID_BACKWARD, og_sigmoid_bwd_kernels, og_sigmoid_bwd_kernels16,
                          names, gradOutput, output, gradInput, ACT_DTS_DOUBLE_COMPLEX,
                          workspaceSize, executor);
}

aclnnStatus aclnnSigmoidBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                 aclrtStream stream) {
    return og_executor_launch(OP_SIGMOID_BACKWARD, workspace, workspaceSize, executor, stream);
}
