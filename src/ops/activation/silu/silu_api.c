/* aclnnSilu, aclnnSiluBackward: argument checks and plans on the elementwise engine (kernels:
 * silu_kernel_simd.c). */
#include "aclnnop/aclnn_silu.h"
#include "aclnnop/aclnn_silu_backward.h"
#include "ops/activation/sigmoid/act_plan.h"
#include "ops/activation/silu/silu_kernel.h"

OG_EW_DEFINE_KERNEL3_TABLES(silu_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(silu_bwd);

static const char OP_SILU[] = "aclnnSilu";
static const char OP_SILU_BACKWARD[] = "aclnnSiluBackward";

aclnnStatus aclnnSiluGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor) {
    return act_unary_api(OP_SILU, og_silu_fwd_kernels, og_silu_fwd_kernels16, "self", self, "out",
                         out, 0, workspaceSize, executor);
}

aclnnStatus aclnnSilu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                      aclrtStream stream) {
    return og_executor_launch(OP_SILU, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnSiluBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                              aclTensor *gradInput, uint64_t *workspaceSize,
                                              aclOpExecutor **executor) {
    static const char *const names[3] = {"gradOutput", "self", "gradInput"};
    return act_binary_api(OP_SILU_BACKWARD, og_silu_bwd_kernels, og_silu_bwd_kernels16, names,
                          gradOutput, self, gradInput, 0, workspaceSize, executor);
}

aclnnStatus aclnnSiluBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                              aclrtStream stream) {
    return og_executor_launch(OP_SILU_BACKWARD, workspace, workspaceSize, executor, stream);
}
