/* aclnnSilu, aclnnSiluBackward: argument checks and plans on the elementwise engine (kernels:
 * silu_kernel_simd.c). */
#include "aclnnop/aclnn_silu.h"
#include "aclnnop/aclnn_silu_backward.h"
#include "ops/activation/act_api.h"
#include "ops/activation/silu/silu_kernel.h"

OG_EW_DEFINE_KERNEL3_TABLES(silu_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(silu_bwd);

aclnnStatus aclnnSiluGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor) {
    return og_act_unary(&og_op_Silu, OG_EW_KERNEL_HEAVY(silu_fwd), "self", self, "out", out,
                        OG_OUT_SAME_DTYPE, workspaceSize, executor);
}

aclnnStatus aclnnSiluBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                              aclTensor *gradInput, uint64_t *workspaceSize,
                                              aclOpExecutor **executor) {
    static const char *const names[3] = {"gradOutput", "self", "gradInput"};
    return og_act_grad(&og_op_SiluBackward, OG_EW_KERNEL(silu_bwd), names, gradOutput, self,
                       gradInput, 0, workspaceSize, executor);
}
