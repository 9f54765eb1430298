/* aclnnLeakyRelu, aclnnInplaceLeakyRelu and aclnnLeakyReluBackward: argument checks and plans on
 * the elementwise engine. Rules from ops-nn activation/leaky_relu/op_api/aclnn_leaky_relu.cpp and
 * activation/leaky_relu_grad/op_api/aclnn_leaky_relu_backward.cpp. */
#include "aclnnop/aclnn_leaky_relu.h"
#include "aclnnop/aclnn_leaky_relu_backward.h"
#include "ops/activation/leaky_relu/leaky_relu_kernel.h"
#include "ops/common/checks.h"

OG_EW_DEFINE_KERNEL3_TABLES(leaky_relu_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(leaky_relu_bwd);

// negativeSlope dtypes ops-nn's backward accepts (no UINT16 / UINT32 / UINT64)
#define LEAKY_BWD_SCALAR_DTS                                                                       \
    (OG_DTS_FLOATING | OG_DT(ACL_DOUBLE) | OG_DT(ACL_INT8) | OG_DT(ACL_INT16) | OG_DT(ACL_INT32) | \
     OG_DT(ACL_INT64) | OG_DT(ACL_UINT8) | OG_DT(ACL_BOOL))

static aclnnStatus plan_leaky(const og_opdesc *op, const char *self_name, const aclTensor *self,
                              const aclScalar *negativeSlope, const char *out_name,
                              const aclTensor *out, uint64_t *workspaceSize,
                              aclOpExecutor **executor) {
    const char *names[3] = {self_name, "negativeSlope", out_name};
    const void *ptrs[3] = {self, negativeSlope, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 3, names, ptrs));
    og_leaky_relu_params p = {0};
    OG_TRY(og_check_scalar(op, "negativeSlope", negativeSlope, &p.slope));
    p.slope64 = og_scalar_as_double(negativeSlope);
    const char *tnames[2] = {self_name, out_name};
    const aclTensor *outs[1] = {out};
    return og_plan_forward(op, OG_EW_KERNEL(leaky_relu_fwd), self, 1, outs, tnames, OG_OUT_CASTABLE,
                           &p, sizeof p, workspaceSize, executor);
}

aclnnStatus aclnnLeakyReluGetWorkspaceSize(const aclTensor *self, const aclScalar *negativeSlope,
                                           aclTensor *out, uint64_t *workspaceSize,
                                           aclOpExecutor **executor) {
    return plan_leaky(&og_op_LeakyRelu, "self", self, negativeSlope, "out", out, workspaceSize,
                      executor);
}

aclnnStatus aclnnInplaceLeakyReluGetWorkspaceSize(aclTensor *selfRef,
                                                  const aclScalar *negativeSlope,
                                                  uint64_t *workspaceSize,
                                                  aclOpExecutor **executor) {
    return plan_leaky(&og_op_InplaceLeakyRelu, "selfRef", selfRef, negativeSlope, "selfRef",
                      selfRef, workspaceSize, executor);
}

aclnnStatus aclnnLeakyReluBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclScalar *negativeSlope,
    bool selfIsResult, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_LeakyReluBackward;
    static const char *const names[4] = {"gradOutput", "self", "out", "negativeSlope"};
    const void *ptrs[4] = {gradOutput, self, out, negativeSlope};
    OG_TRY(og_check_args(op, workspaceSize, executor, 4, names, ptrs));
    og_leaky_relu_params p = {0};
    OG_TRY(og_check_scalar_of(op, "negativeSlope", negativeSlope, LEAKY_BWD_SCALAR_DTS, &p.slope));
    double slope = og_scalar_as_double(negativeSlope);
    p.slope64 = slope;
    if (selfIsResult && slope < 0.0)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: selfIsResult is true but negativeSlope is %g: the "
                       "backward from the result needs negativeSlope >= 0 (call the out-of-place "
                       "forward instead)",
                       op->name, slope);
    const aclTensor *ins[2] = {gradOutput, self};
    return og_plan_backward(op, OG_EW_KERNEL_LIGHT(leaky_relu_bwd), 2, ins, out, names,
                            OG_BWD_BROADCAST, OG_OUT_CASTABLE, &p, sizeof p, workspaceSize,
                            executor);
}
