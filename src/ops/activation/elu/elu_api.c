/* aclnnElu, aclnnInplaceElu and aclnnEluBackward: argument checks and plans on the elementwise
 * engine. Signatures and rules from ops-nn activation/elu/op_api/aclnn_elu.{h,cpp} and
 * activation/elu_grad_v2/op_api/aclnn_elu_backward.{h,cpp} (hicann/ops-nn). */
#include "aclnnop/aclnn_elu.h"
#include "aclnnop/aclnn_elu_backward.h"
#include "ops/activation/elu/elu_kernel.h"
#include "ops/activation/relu/pw_api.h"

OG_EW_DEFINE_KERNEL_TABLE(elu_fwd);
OG_EW_DEFINE_KERNEL_TABLE(elu_bwd);
OG_EW_DEFINE_KERNEL_TABLE(elu_bwd_result);

static const char OP_ELU[] = "aclnnElu";
static const char OP_INPLACE_ELU[] = "aclnnInplaceElu";
static const char OP_ELU_BACKWARD[] = "aclnnEluBackward";

// aclnn's Elu also lists DOUBLE; opgrad implements the dtypes it computes in fp32.
#define ELU_ACLNN_EXTRA OG_DT(ACL_DOUBLE)
// "a dtype that can be cast to FLOAT": every real dtype
#define ELU_SCALAR_DTS PW_DTS_REAL_SCALAR

static aclnnStatus elu_attrs(const char *op, const aclScalar *alpha, const aclScalar *scale,
                             const aclScalar *inputScale, float v[3]) {
    PW_TRY(pw_scalar_float(op, "alpha", alpha, ELU_SCALAR_DTS, &v[0]));
    PW_TRY(pw_scalar_float(op, "scale", scale, ELU_SCALAR_DTS, &v[1]));
    PW_TRY(pw_scalar_float(op, "inputScale", inputScale, ELU_SCALAR_DTS, &v[2]));
    return ACLNN_SUCCESS;
}

static aclnnStatus plan_elu(const char *op, const char *self_name, const aclTensor *self,
                            const aclScalar *alpha, const aclScalar *scale,
                            const aclScalar *inputScale, const char *out_name, const aclTensor *out,
                            uint64_t *workspaceSize, aclOpExecutor **executor) {
    PW_TRY(og_check_out_ptrs(op, workspaceSize, executor));
    const char *names[5] = {self_name, "alpha", "scale", "inputScale", out_name};
    const void *ptrs[5] = {self, alpha, scale, inputScale, out};
    PW_TRY(og_check_not_null(op, 5, names, ptrs));
    float v[3] = {0, 0, 0};
    PW_TRY(elu_attrs(op, alpha, scale, inputScale, v));
    og_elu_params p = og_elu_make_params(v[0], v[1], v[2]);
    return pw_plan_unary(op, og_elu_fwd_kernels, NULL, self_name, self, out_name, out,
                         ELU_ACLNN_EXTRA, PW_OUT_CASTABLE, &p, sizeof p, workspaceSize, executor);
}

aclnnStatus aclnnEluGetWorkspaceSize(const aclTensor *self, const aclScalar *alpha,
                                     const aclScalar *scale, const aclScalar *inputScale,
                                     aclTensor *out, uint64_t *workspaceSize,
                                     aclOpExecutor **executor) {
    return plan_elu(OP_ELU, "self", self, alpha, scale, inputScale, "out", out, workspaceSize,
                    executor);
}

aclnnStatus aclnnElu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                     aclrtStream stream) {
    return og_executor_launch(OP_ELU, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnInplaceEluGetWorkspaceSize(aclTensor *selfRef, const aclScalar *alpha,
                                            const aclScalar *scale, const aclScalar *inputScale,
                                            uint64_t *workspaceSize, aclOpExecutor **executor) {
    return plan_elu(OP_INPLACE_ELU, "selfRef", selfRef, alpha, scale, inputScale, "selfRef",
                    selfRef, workspaceSize, executor);
}

aclnnStatus aclnnInplaceElu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                            aclrtStream stream) {
    return og_executor_launch(OP_INPLACE_ELU, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnEluBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclScalar *alpha,
                                             const aclScalar *scale, const aclScalar *inputScale,
                                             bool isResult, const aclTensor *selfOrResult,
                                             aclTensor *gradInput, uint64_t *workspaceSize,
                                             aclOpExecutor **executor) {
    const char *op = OP_ELU_BACKWARD;
    PW_TRY(og_check_out_ptrs(op, workspaceSize, executor));
    const char *pnames[6] = {"gradOutput", "alpha",        "scale",
                             "inputScale", "selfOrResult", "gradInput"};
    const void *ptrs[6] = {gradOutput, alpha, scale, inputScale, selfOrResult, gradInput};
    PW_TRY(og_check_not_null(op, 6, pnames, ptrs));
    float v[3] = {0, 0, 0};
    PW_TRY(elu_attrs(op, alpha, scale, inputScale, v));
    if (isResult && v[0] < 0)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: isResult is true but alpha is %g: the backward from "
                       "the result needs alpha >= 0 (call the out-of-place forward instead)",
                       op, (double)v[0]);
    og_elu_params p = og_elu_make_params(v[0], v[1], v[2]);
    static const char *const names[3] = {"gradOutput", "selfOrResult", "gradInput"};
    return pw_plan_binary(op, isResult ? og_elu_bwd_result_kernels : og_elu_bwd_kernels, NULL,
                          names, gradOutput, selfOrResult, gradInput, 0, false, PW_OUT_CASTABLE, &p,
                          sizeof p, workspaceSize, executor);
}

aclnnStatus aclnnEluBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                             aclrtStream stream) {
    return og_executor_launch(OP_ELU_BACKWARD, workspace, workspaceSize, executor, stream);
}
