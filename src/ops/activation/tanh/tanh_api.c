/* aclnnTanh, aclnnInplaceTanh, aclnnTanhBackward: argument checks and plans on the elementwise
 * engine (kernels: tanh_kernel_simd.c). */
#include "aclnnop/aclnn_tanh.h"
#include "aclnnop/aclnn_tanh_backward.h"
#include "ops/activation/sigmoid/act_plan.h"
#include "ops/activation/tanh/tanh_kernel.h"

OG_EW_DEFINE_KERNEL3_TABLES(tanh_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(tanh_bwd);

static const char OP_TANH[] = "aclnnTanh";
static const char OP_INPLACE_TANH[] = "aclnnInplaceTanh";
static const char OP_TANH_BACKWARD[] = "aclnnTanhBackward";

aclnnStatus aclnnTanhGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor) {
    return act_unary_api(OP_TANH, og_tanh_fwd_kernels, og_tanh_fwd_kernels16, "self", self, "out",
                         out, ACT_DTS_INTEGRAL, workspaceSize, executor);
}

aclnnStatus aclnnTanh(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                      aclrtStream stream) {
    return og_executor_launch(OP_TANH, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnInplaceTanhGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
                                             aclOpExecutor **executor) {
    return act_unary_api(OP_INPLACE_TANH, og_tanh_fwd_kernels, og_tanh_fwd_kernels16, "selfRef",
                         selfRef, "selfRef", selfRef, 0, workspaceSize, executor);
}

aclnnStatus aclnnInplaceTanh(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                             aclrtStream stream) {
    return og_executor_launch(OP_INPLACE_TANH, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnTanhBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *output,
                                              aclTensor *gradInput, uint64_t *workspaceSize,
                                              aclOpExecutor **executor) {
    static const char *const names[3] = {"gradOutput", "output", "gradInput"};
    return act_binary_api(OP_TANH_BACKWARD, og_tanh_bwd_kernels, og_tanh_bwd_kernels16, names,
                          gradOutput, output, gradInput, ACT_DTS_DOUBLE, workspaceSize, executor);
}

aclnnStatus aclnnTanhBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                              aclrtStream stream) {
    return og_executor_launch(OP_TANH_BACKWARD, workspace, workspaceSize, executor, stream);
}
