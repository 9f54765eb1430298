/* aclnnGelu, aclnnGeluBackward (the tanh approximation), aclnnGeluV2, aclnnGeluBackwardV2
 * (approximate "none" = exact erf form, or "tanh"): argument checks and plans on the
 * elementwise engine (kernels: gelu_kernel_simd.c). */
#include <string.h>

#include "aclnnop/aclnn_gelu.h"
#include "aclnnop/aclnn_gelu_backward.h"
#include "aclnnop/aclnn_gelu_backward_v2.h"
#include "aclnnop/aclnn_gelu_v2.h"
#include "ops/activation/act_api.h"
#include "ops/activation/gelu/gelu_kernel.h"

OG_EW_DEFINE_KERNEL3_TABLES(gelu_tanh_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(gelu_tanh_bwd);
OG_EW_DEFINE_KERNEL3_TABLES(gelu_erf_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(gelu_erf_bwd);

aclnnStatus aclnnGeluGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor) {
    return og_act_unary(&og_op_Gelu, OG_EW_KERNEL_HEAVY(gelu_tanh_fwd), "self", self, "out", out,
                        OG_OUT_SAME_DTYPE, workspaceSize, executor);
}

aclnnStatus aclnnGeluBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                              const aclTensor *gradInput, uint64_t *workspaceSize,
                                              aclOpExecutor **executor) {
    static const char *const names[3] = {"gradOutput", "self", "gradInput"};
    return og_act_grad(&og_op_GeluBackward, OG_EW_KERNEL(gelu_tanh_bwd), names, gradOutput, self,
                       gradInput, OG_BWD_INT_PROMOTE, workspaceSize, executor);
}

aclnnStatus aclnnGeluV2GetWorkspaceSize(const aclTensor *x, int64_t approximate, aclTensor *y,
                                        uint64_t *workspaceSize, aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_GeluV2;
    static const char *const names[2] = {"x", "y"};
    const void *ptrs[2] = {x, y};
    OG_TRY(og_check_args(op, workspaceSize, executor, 2, names, ptrs));
    if (approximate != 0 && approximate != 1)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: approximate is %lld; it must be 0 (none: the erf form) "
                       "or 1 (tanh)",
                       op->name, (long long)approximate);
    const aclTensor *outs[1] = {y};
    return og_plan_forward(
        op, approximate ? OG_EW_KERNEL_HEAVY(gelu_tanh_fwd) : OG_EW_KERNEL_HEAVY(gelu_erf_fwd), x,
        1, outs, names, OG_OUT_SAME_DTYPE, NULL, 0, workspaceSize, executor);
}

aclnnStatus aclnnGeluBackwardV2GetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                char *approximate, aclTensor *gradInput,
                                                uint64_t *workspaceSize, aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_GeluBackwardV2;
    static const char *const all[4] = {"gradOutput", "self", "approximate", "gradInput"};
    const void *ptrs[4] = {gradOutput, self, approximate, gradInput};
    OG_TRY(og_check_args(op, workspaceSize, executor, 4, all, ptrs));
    bool none = !strcmp(approximate, "none"), tanh_form = !strcmp(approximate, "tanh");
    if (!none && !tanh_form)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: approximate is \"%.32s\"; it must be \"none\" or "
                       "\"tanh\"",
                       op->name, approximate);
    static const char *const names[3] = {"gradOutput", "self", "gradInput"};
    const aclTensor *ins[2] = {gradOutput, self};
    return og_plan_backward(op,
                            tanh_form ? OG_EW_KERNEL(gelu_tanh_bwd) : OG_EW_KERNEL(gelu_erf_bwd), 2,
                            ins, gradInput, names, OG_BWD_BROADCAST | OG_BWD_INT_PROMOTE,
                            OG_OUT_CASTABLE, NULL, 0, workspaceSize, executor);
}
