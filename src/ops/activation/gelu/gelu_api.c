/* aclnnGelu, aclnnGeluBackward (the tanh approximation), aclnnGeluV2, aclnnGeluBackwardV2
 * (approximate "none" = exact erf form, or "tanh"): argument checks and plans on the
 * elementwise engine (kernels: gelu_kernel_simd.c). */
#include <string.h>

#include "aclnnop/aclnn_gelu.h"
#include "aclnnop/aclnn_gelu_backward.h"
#include "aclnnop/aclnn_gelu_backward_v2.h"
#include "aclnnop/aclnn_gelu_v2.h"
#include "ops/activation/gelu/gelu_kernel.h"
#include "ops/activation/sigmoid/act_plan.h"

OG_EW_DEFINE_KERNEL3_TABLES(gelu_tanh_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(gelu_tanh_bwd);
OG_EW_DEFINE_KERNEL3_TABLES(gelu_erf_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(gelu_erf_bwd);

static const char OP_GELU[] = "aclnnGelu";
static const char OP_GELU_BACKWARD[] = "aclnnGeluBackward";
static const char OP_GELU_V2[] = "aclnnGeluV2";
static const char OP_GELU_BACKWARD_V2[] = "aclnnGeluBackwardV2";

aclnnStatus aclnnGeluGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor) {
    return act_unary_api(OP_GELU, og_gelu_tanh_fwd_kernels, og_gelu_tanh_fwd_kernels16, "self",
                         self, "out", out, 0, workspaceSize, executor);
}

aclnnStatus aclnnGelu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                      aclrtStream stream) {
    return og_executor_launch(OP_GELU, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnGeluBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                              const aclTensor *gradInput, uint64_t *workspaceSize,
                                              aclOpExecutor **executor) {
    static const char *const names[3] = {"gradOutput", "self", "gradInput"};
    return act_binary_api(OP_GELU_BACKWARD, og_gelu_tanh_bwd_kernels, og_gelu_tanh_bwd_kernels16,
                          names, gradOutput, self, gradInput, 0, workspaceSize, executor);
}

aclnnStatus aclnnGeluBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                              aclrtStream stream) {
    return og_executor_launch(OP_GELU_BACKWARD, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnGeluV2GetWorkspaceSize(const aclTensor *x, int64_t approximate, aclTensor *y,
                                        uint64_t *workspaceSize, aclOpExecutor **executor) {
    ACT_TRY(og_check_out_ptrs(OP_GELU_V2, workspaceSize, executor));
    static const char *const names[2] = {"x", "y"};
    const void *ptrs[2] = {x, y};
    ACT_TRY(og_check_not_null(OP_GELU_V2, 2, names, ptrs));
    if (approximate != 0 && approximate != 1)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: approximate is %lld; it must be 0 (none: the erf form) "
                       "or 1 (tanh)",
                       OP_GELU_V2, (long long)approximate);
    return act_plan_unary(OP_GELU_V2,
                          approximate ? og_gelu_tanh_fwd_kernels : og_gelu_erf_fwd_kernels,
                          approximate ? og_gelu_tanh_fwd_kernels16 : og_gelu_erf_fwd_kernels16, "x",
                          x, "y", y, 0, NULL, 0, workspaceSize, executor);
}

aclnnStatus aclnnGeluV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                        aclrtStream stream) {
    return og_executor_launch(OP_GELU_V2, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnGeluBackwardV2GetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                char *approximate, aclTensor *gradInput,
                                                uint64_t *workspaceSize, aclOpExecutor **executor) {
    ACT_TRY(og_check_out_ptrs(OP_GELU_BACKWARD_V2, workspaceSize, executor));
    static const char *const all[4] = {"gradOutput", "self", "approximate", "gradInput"};
    const void *ptrs[4] = {gradOutput, self, approximate, gradInput};
    ACT_TRY(og_check_not_null(OP_GELU_BACKWARD_V2, 4, all, ptrs));
    bool none = !strcmp(approximate, "none"), tanh_form = !strcmp(approximate, "tanh");
    if (!none && !tanh_form)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: approximate is \"%.32s\"; it must be \"none\" or "
                       "\"tanh\"",
                       OP_GELU_BACKWARD_V2, approximate);
    static const char *const names[3] = {"gradOutput", "self", "gradInput"};
    return act_plan_binary(
        OP_GELU_BACKWARD_V2, tanh_form ? og_gelu_tanh_bwd_kernels : og_gelu_erf_bwd_kernels,
        tanh_form ? og_gelu_tanh_bwd_kernels16 : og_gelu_erf_bwd_kernels16, names, gradOutput, self,
        gradInput, true, 0, NULL, 0, workspaceSize, executor);
}

aclnnStatus aclnnGeluBackwardV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream) {
    return og_executor_launch(OP_GELU_BACKWARD_V2, workspace, workspaceSize, executor, stream);
}
