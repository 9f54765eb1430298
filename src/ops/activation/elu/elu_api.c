/* aclnnElu, aclnnInplaceElu and aclnnEluBackward: argument checks and plans on the elementwise
 * engine. Signatures and rules from ops-nn activation/elu/op_api/aclnn_elu.{h,cpp} and
 * activation/elu_grad_v2/op_api/aclnn_elu_backward.{h,cpp} (hicann/ops-nn). */
#include "aclnnop/aclnn_elu.h"
#include "aclnnop/aclnn_elu_backward.h"
#include "ops/activation/elu/elu_kernel.h"
#include "ops/common/checks.h"

OG_EW_DEFINE_KERNEL3_TABLES(elu_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(elu_bwd);
OG_EW_DEFINE_KERNEL3_TABLES(elu_bwd_result);

static aclnnStatus elu_attrs(const og_opdesc *op, const aclScalar *alpha, const aclScalar *scale,
                             const aclScalar *inputScale, float v[3]) {
    OG_TRY(og_check_scalar(op, "alpha", alpha, &v[0]));
    OG_TRY(og_check_scalar(op, "scale", scale, &v[1]));
    return og_check_scalar(op, "inputScale", inputScale, &v[2]);
}

static aclnnStatus plan_elu(const og_opdesc *op, const char *self_name, const aclTensor *self,
                            const aclScalar *alpha, const aclScalar *scale,
                            const aclScalar *inputScale, const char *out_name, const aclTensor *out,
                            uint64_t *workspaceSize, aclOpExecutor **executor) {
    const char *names[5] = {self_name, "alpha", "scale", "inputScale", out_name};
    const void *ptrs[5] = {self, alpha, scale, inputScale, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 5, names, ptrs));
    float v[3] = {0, 0, 0};
    OG_TRY(elu_attrs(op, alpha, scale, inputScale, v));
    og_elu_params p = og_elu_make_params(v[0], v[1], v[2]);
    const char *tnames[2] = {self_name, out_name};
    const aclTensor *outs[1] = {out};
    return og_plan_forward(op, OG_EW_KERNEL_HEAVY(elu_fwd), self, 1, outs, tnames, OG_OUT_CASTABLE,
                           &p, sizeof p, workspaceSize, executor);
}

aclnnStatus aclnnEluGetWorkspaceSize(const aclTensor *self, const aclScalar *alpha,
                                     const aclScalar *scale, const aclScalar *inputScale,
                                     aclTensor *out, uint64_t *workspaceSize,
                                     aclOpExecutor **executor) {
    return plan_elu(&og_op_Elu, "self", self, alpha, scale, inputScale, "out", out, workspaceSize,
                    executor);
}

aclnnStatus aclnnInplaceEluGetWorkspaceSize(aclTensor *selfRef, const aclScalar *alpha,
                                            const aclScalar *scale, const aclScalar *inputScale,
                                            uint64_t *workspaceSize, aclOpExecutor **executor) {
    return plan_elu(&og_op_InplaceElu, "selfRef", selfRef, alpha, scale, inputScale, "selfRef",
                    selfRef, workspaceSize, executor);
}

aclnnStatus aclnnEluBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclScalar *alpha,
                                             const aclScalar *scale, const aclScalar *inputScale,
                                             bool isResult, const aclTensor *selfOrResult,
                                             aclTensor *gradInput, uint64_t *workspaceSize,
                                             aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_EluBackward;
    const char *pnames[6] = {"gradOutput", "alpha",        "scale",
                             "inputScale", "selfOrResult", "gradInput"};
    const void *ptrs[6] = {gradOutput, alpha, scale, inputScale, selfOrResult, gradInput};
    OG_TRY(og_check_args(op, workspaceSize, executor, 6, pnames, ptrs));
    float v[3] = {0, 0, 0};
    OG_TRY(elu_attrs(op, alpha, scale, inputScale, v));
    if (isResult && v[0] < 0)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: isResult is true but alpha is %g: the backward from "
                       "the result needs alpha >= 0 (call the out-of-place forward instead)",
                       op->name, (double)v[0]);
    og_elu_params p = og_elu_make_params(v[0], v[1], v[2]);
    static const char *const names[3] = {"gradOutput", "selfOrResult", "gradInput"};
    const aclTensor *ins[2] = {gradOutput, selfOrResult};
    return og_plan_backward(op, isResult ? OG_EW_KERNEL(elu_bwd_result) : OG_EW_KERNEL(elu_bwd), 2,
                            ins, gradInput, names, 0, OG_OUT_CASTABLE, &p, sizeof p, workspaceSize,
                            executor);
}
