/* aclnnRelu, aclnnInplaceRelu and aclnnThresholdBackward (relu's backward: there is no
 * aclnnReluBackward in ops-nn): argument checks and plans on the elementwise engine.
 * Rules from ops-nn activation/relu/op_api/aclnn_relu.cpp and
 * activation/threshold_grad_v2_d/op_api/aclnn_threshold_backward.cpp; integer tensors (INT8,
 * UINT8, INT32, INT64) take the exact integer step of relu_int.c. */
#include "aclnnop/aclnn_relu.h"
#include "aclnnop/aclnn_threshold_backward.h"
#include "ops/activation/act_api.h"
#include "ops/activation/relu/relu_int.h"
#include "ops/activation/relu/relu_kernel.h"

OG_EW_DEFINE_KERNEL3_TABLES(relu_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(threshold_bwd);

static bool is_int(const aclTensor *t) {
    return og_check_live("", "", t, OG_OBJ_TENSOR) == ACLNN_SUCCESS &&
           !og_dtype_is_floating(t->dtype);
}

static aclnnStatus plan_relu(const og_opdesc *op, const char *self_name, const aclTensor *self,
                             const char *out_name, const aclTensor *out, uint64_t *workspaceSize,
                             aclOpExecutor **executor) {
    if (!is_int(self))
        return og_act_unary(op, OG_EW_KERNEL(relu_fwd), self_name, self, out_name, out,
                            OG_OUT_SAME_DTYPE, workspaceSize, executor);
    const char *names[2] = {self_name, out_name};
    const void *ptrs[2] = {self, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 2, names, ptrs));
    const unsigned long long dts = OG_DTS_FLOATING | OG_RELU_INT_DTYPES;
    OG_TRY(og_check_tensor_of(op, self_name, self, 0, dts));
    OG_TRY(og_check_tensor_of(op, out_name, out, 0, dts));
    OG_TRY(og_check_same_dtype(op, self_name, self, out_name, out));
    OG_TRY(og_check_same_shape(op, self_name, self, out_name, out));
    const aclTensor *io[2] = {self, out};
    return og_plan_threshold_int(op, 1, io, names, 0.0f, workspaceSize, executor);
}

aclnnStatus aclnnReluGetWorkspaceSize(const aclTensor *self, const aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor) {
    return plan_relu(&og_op_Relu, "self", self, "out", out, workspaceSize, executor);
}

aclnnStatus aclnnInplaceReluGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
                                             aclOpExecutor **executor) {
    return plan_relu(&og_op_InplaceRelu, "selfRef", selfRef, "selfRef", selfRef, workspaceSize,
                     executor);
}

aclnnStatus aclnnThresholdBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                   const aclTensor *self,
                                                   const aclScalar *threshold, aclTensor *out,
                                                   uint64_t *workspaceSize,
                                                   aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_ThresholdBackward;
    static const char *const names[4] = {"gradOutput", "self", "out", "threshold"};
    const void *ptrs[4] = {gradOutput, self, out, threshold};
    OG_TRY(og_check_args(op, workspaceSize, executor, 4, names, ptrs));
    og_threshold_params p = {0};
    OG_TRY(og_check_scalar(op, "threshold", threshold, &p.threshold));
    p.threshold64 = og_scalar_as_double(threshold);
    const aclTensor *ins[2] = {gradOutput, self};
    if (is_int(gradOutput) || is_int(self)) { // ops-nn: the three of one dtype
        const unsigned long long dts = OG_DTS_FLOATING | OG_RELU_INT_DTYPES;
        const aclTensor *io[3] = {gradOutput, self, out};
        static const char *const tnames[3] = {"gradOutput", "self", "out"};
        for (int k = 0; k < 3; k++) OG_TRY(og_check_tensor_of(op, tnames[k], io[k], 0, dts));
        OG_TRY(og_check_same_dtype(op, "gradOutput", gradOutput, "self", self));
        OG_TRY(og_check_same_dtype(op, "self", self, "out", out));
        OG_TRY(og_check_broadcast_to(op, 2, tnames, ins, "out", out));
        return og_plan_threshold_int(op, 2, io, tnames, p.threshold, workspaceSize, executor);
    }
    return og_plan_backward(op, OG_EW_KERNEL_LIGHT(threshold_bwd), 2, ins, out, names,
                            OG_BWD_BROADCAST, OG_OUT_SAME_DTYPE, &p, sizeof p, workspaceSize,
                            executor);
}
