/* aclnnRelu, aclnnInplaceRelu and aclnnThresholdBackward (relu's backward: there is no
 * aclnnReluBackward in ops-nn): argument checks and plans on the elementwise engine.
 * Rules from ops-nn activation/relu/op_api/aclnn_relu.cpp and
 * activation/threshold_grad_v2_d/op_api/aclnn_threshold_backward.cpp. */
#include "aclnnop/aclnn_relu.h"
#include "aclnnop/aclnn_threshold_backward.h"
#include "ops/activation/relu/pw_api.h"
#include "ops/activation/relu/relu_kernel.h"

OG_EW_DEFINE_KERNEL3_TABLES(relu_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(threshold_bwd);

static const char OP_RELU[] = "aclnnRelu";
static const char OP_INPLACE_RELU[] = "aclnnInplaceRelu";
static const char OP_THRESHOLD_BACKWARD[] = "aclnnThresholdBackward";

// aclnn's Relu also takes INT8, INT32, INT64 (and UINT8 in place); ThresholdBackward INT8,
// INT32, INT64, UINT8. opgrad implements the floating dtypes only.
#define RELU_ACLNN_INT (OG_DT(ACL_INT8) | OG_DT(ACL_INT32) | OG_DT(ACL_INT64))
#define INPLACE_RELU_ACLNN_INT (RELU_ACLNN_INT | OG_DT(ACL_UINT8))
#define THRESHOLD_ACLNN_INT (RELU_ACLNN_INT | OG_DT(ACL_UINT8))

static aclnnStatus plan_relu(const char *op, const char *self_name, const aclTensor *self,
                             const char *out_name, const aclTensor *out,
                             unsigned long long aclnn_ints, uint64_t *workspaceSize,
                             aclOpExecutor **executor) {
    PW_TRY(og_check_out_ptrs(op, workspaceSize, executor));
    const char *names[2] = {self_name, out_name};
    const void *ptrs[2] = {self, out};
    PW_TRY(og_check_not_null(op, 2, names, ptrs));
    return pw_plan_unary(op, og_relu_fwd_kernels, og_relu_fwd_kernels16, self_name, self, out_name,
                         out, aclnn_ints, PW_OUT_SAME_DTYPE, NULL, 0, workspaceSize, executor);
}

aclnnStatus aclnnReluGetWorkspaceSize(const aclTensor *self, const aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor) {
    return plan_relu(OP_RELU, "self", self, "out", out, RELU_ACLNN_INT, workspaceSize, executor);
}

aclnnStatus aclnnRelu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                      aclrtStream stream) {
    return og_executor_launch(OP_RELU, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnInplaceReluGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
                                             aclOpExecutor **executor) {
    return plan_relu(OP_INPLACE_RELU, "selfRef", selfRef, "selfRef", selfRef,
                     INPLACE_RELU_ACLNN_INT, workspaceSize, executor);
}

aclnnStatus aclnnInplaceRelu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                             aclrtStream stream) {
    return og_executor_launch(OP_INPLACE_RELU, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnThresholdBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                   const aclTensor *self,
                                                   const aclScalar *threshold, aclTensor *out,
                                                   uint64_t *workspaceSize,
                                                   aclOpExecutor **executor) {
    const char *op = OP_THRESHOLD_BACKWARD;
    PW_TRY(og_check_out_ptrs(op, workspaceSize, executor));
    static const char *const names[4] = {"gradOutput", "self", "out", "threshold"};
    const void *ptrs[4] = {gradOutput, self, out, threshold};
    PW_TRY(og_check_not_null(op, 4, names, ptrs));
    og_threshold_params p = {0};
    PW_TRY(pw_scalar_float(op, "threshold", threshold, PW_DTS_REAL_SCALAR, &p.threshold));
    return pw_plan_binary(op, og_threshold_bwd_kernels, og_threshold_bwd_kernels16, names,
                          gradOutput, self, out, THRESHOLD_ACLNN_INT, true, PW_OUT_SAME_DTYPE, &p,
                          sizeof p, workspaceSize, executor);
}

aclnnStatus aclnnThresholdBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                   aclrtStream stream) {
    return og_executor_launch(OP_THRESHOLD_BACKWARD, workspace, workspaceSize, executor, stream);
}
