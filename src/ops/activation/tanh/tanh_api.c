/* aclnnTanh, aclnnInplaceTanh, aclnnTanhBackward: argument checks and plans on the elementwise
 * engine (kernels: tanh_kernel_simd.c). */
#include "aclnnop/aclnn_tanh.h"
#include "aclnnop/aclnn_tanh_backward.h"
#include "ops/activation/act_api.h"
#include "ops/activation/tanh/tanh_kernel.h"

OG_EW_DEFINE_KERNEL3_TABLES(tanh_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(tanh_bwd);

aclnnStatus aclnnTanhGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor) {
    return og_act_unary(&og_op_Tanh, OG_EW_KERNEL_HEAVY(tanh_fwd), "self", self, "out", out,
                        OG_OUT_SAME_DTYPE, workspaceSize, executor);
}

aclnnStatus aclnnInplaceTanhGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
                                             aclOpExecutor **executor) {
    return og_act_unary(&og_op_InplaceTanh, OG_EW_KERNEL_HEAVY(tanh_fwd), "selfRef", selfRef,
                        "selfRef", selfRef, OG_OUT_SAME_DTYPE, workspaceSize, executor);
}

aclnnStatus aclnnTanhBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *output,
                                              aclTensor *gradInput, uint64_t *workspaceSize,
                                              aclOpExecutor **executor) {
    static const char *const names[3] = {"gradOutput", "output", "gradInput"};
    return og_act_grad(&og_op_TanhBackward, OG_EW_KERNEL(tanh_bwd), names, gradOutput, output,
                       gradInput, 0, workspaceSize, executor);
}
