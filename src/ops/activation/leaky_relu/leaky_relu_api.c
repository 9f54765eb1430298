/* aclnnLeakyRelu, aclnnInplaceLeakyRelu and aclnnLeakyReluBackward: argument checks and plans on
 * the elementwise engine. Rules from ops-nn activation/leaky_relu/op_api/aclnn_leaky_relu.cpp and
 * activation/leaky_relu_grad/op_api/aclnn_leaky_relu_backward.cpp. */
#include "aclnnop/aclnn_leaky_relu.h"
#include "aclnnop/aclnn_leaky_relu_backward.h"
#include "ops/activation/leaky_relu/leaky_relu_kernel.h"
#include "ops/activation/relu/pw_api.h"

OG_EW_DEFINE_KERNEL3_TABLES(leaky_relu_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(leaky_relu_bwd);

static const char OP_LEAKY_RELU[] = "aclnnLeakyRelu";
static const char OP_INPLACE_LEAKY_RELU[] = "aclnnInplaceLeakyRelu";
static const char OP_LEAKY_RELU_BACKWARD[] = "aclnnLeakyReluBackward";

// aclnn also lists DOUBLE (tensors); opgrad implements the floating dtypes it computes in fp32.
#define LEAKY_ACLNN_EXTRA OG_DT(ACL_DOUBLE)
// negativeSlope dtypes ops-nn's backward accepts
#define LEAKY_BWD_SCALAR_DTS                                                                       \
    (OG_DT(ACL_FLOAT) | OG_DT(ACL_FLOAT16) | OG_DT(ACL_BF16) | OG_DT(ACL_DOUBLE) |                 \
     OG_DT(ACL_INT8) | OG_DT(ACL_INT16) | OG_DT(ACL_INT32) | OG_DT(ACL_INT64) | OG_DT(ACL_UINT8) | \
     OG_DT(ACL_BOOL))

static aclnnStatus plan_leaky(const char *op, const char *self_name, const aclTensor *self,
                              const aclScalar *negativeSlope, const char *out_name,
                              const aclTensor *out, uint64_t *workspaceSize,
                              aclOpExecutor **executor) {
    PW_TRY(og_check_out_ptrs(op, workspaceSize, executor));
    const char *names[3] = {self_name, "negativeSlope", out_name};
    const void *ptrs[3] = {self, negativeSlope, out};
    PW_TRY(og_check_not_null(op, 3, names, ptrs));
    og_leaky_relu_params p = {0};
    PW_TRY(pw_scalar_float(op, "negativeSlope", negativeSlope, PW_DTS_REAL_SCALAR, &p.slope));
    return pw_plan_unary(op, og_leaky_relu_fwd_kernels, og_leaky_relu_fwd_kernels16, self_name,
                         self, out_name, out, LEAKY_ACLNN_EXTRA, PW_OUT_CASTABLE, &p, sizeof p,
                         workspaceSize, executor);
}

aclnnStatus aclnnLeakyReluGetWorkspaceSize(const aclTensor *self, const aclScalar *negativeSlope,
                                           aclTensor *out, uint64_t *workspaceSize,
                                           aclOpExecutor **executor) {
    return plan_leaky(OP_LEAKY_RELU, "self", self, negativeSlope, "out", out, workspaceSize,
                      executor);
}

aclnnStatus aclnnLeakyRelu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                           aclrtStream stream) {
    return og_executor_launch(OP_LEAKY_RELU, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnInplaceLeakyReluGetWorkspaceSize(aclTensor *selfRef,
                                                  const aclScalar *negativeSlope,
                                                  uint64_t *workspaceSize,
                                                  aclOpExecutor **executor) {
    return plan_leaky(OP_INPLACE_LEAKY_RELU, "selfRef", selfRef, negativeSlope, "selfRef", selfRef,
                      workspaceSize, executor);
}

aclnnStatus aclnnInplaceLeakyRelu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                  aclrtStream stream) {
    return og_executor_launch(OP_INPLACE_LEAKY_RELU, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnLeakyReluBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclScalar *negativeSlope,
    bool selfIsResult, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor) {
    const char *op = OP_LEAKY_RELU_BACKWARD;
    PW_TRY(og_check_out_ptrs(op, workspaceSize, executor));
    static const char *const names[4] = {"gradOutput", "self", "out", "negativeSlope"};
    const void *ptrs[4] = {gradOutput, self, out, negativeSlope};
    PW_TRY(og_check_not_null(op, 4, names, ptrs));
    og_leaky_relu_params p = {0};
    PW_TRY(pw_scalar_float(op, "negativeSlope", negativeSlope, LEAKY_BWD_SCALAR_DTS, &p.slope));
    double slope = og_scalar_as_double(negativeSlope);
    if (selfIsResult && slope < 0.0)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: selfIsResult is true but negativeSlope is %g: the "
                       "backward from the result needs negativeSlope >= 0 (call the out-of-place "
                       "forward instead)",
                       op, slope);
    return pw_plan_binary(op, og_leaky_relu_bwd_kernels, og_leaky_relu_bwd_kernels16, names,
                          gradOutput, self, out, LEAKY_ACLNN_EXTRA, true, PW_OUT_CASTABLE, &p,
                          sizeof p, workspaceSize, executor);
}

aclnnStatus aclnnLeakyReluBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                   aclrtStream stream) {
    return og_executor_launch(OP_LEAKY_RELU_BACKWARD, workspace, workspaceSize, executor, stream);
}
