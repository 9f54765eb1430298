/* aclnnSoftplus, aclnnSoftplusBackward: argument checks and plans on the elementwise engine
 * (kernels: softplus_kernel_simd.c). beta and threshold are converted to float (aclnn's
 * ToFloat) and travel in the plan's parameters. */
#include "aclnnop/aclnn_softplus.h"
#include "aclnnop/aclnn_softplus_backward.h"
#include "ops/activation/softplus/softplus_kernel.h"
#include "ops/common/checks.h"

OG_EW_DEFINE_KERNEL3_TABLES(softplus_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(softplus_bwd);

static aclnnStatus read_params(const og_opdesc *op, const aclScalar *beta,
                               const aclScalar *threshold, og_softplus_params *p) {
    OG_TRY(og_check_scalar(op, "beta", beta, &p->beta));
    OG_TRY(og_check_scalar(op, "threshold", threshold, &p->threshold));
    p->beta64 = og_scalar_as_double(beta);
    p->threshold64 = og_scalar_as_double(threshold);
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnSoftplusGetWorkspaceSize(const aclTensor *self, const aclScalar *beta,
                                          const aclScalar *threshold, aclTensor *out,
                                          uint64_t *workspaceSize, aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_Softplus;
    static const char *const names[4] = {"self", "beta", "threshold", "out"};
    const void *ptrs[4] = {self, beta, threshold, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 4, names, ptrs));
    og_softplus_params p;
    OG_TRY(read_params(op, beta, threshold, &p));
    static const char *const tnames[2] = {"self", "out"};
    const aclTensor *outs[1] = {out};
    return og_plan_forward(op, OG_EW_KERNEL_HEAVY(softplus_fwd), self, 1, outs, tnames,
                           OG_OUT_SAME_DTYPE, &p, sizeof p, workspaceSize, executor);
}

aclnnStatus aclnnSoftplusBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                  const aclTensor *self, const aclScalar *beta,
                                                  const aclScalar *threshold, aclTensor *gradInput,
                                                  uint64_t *workspaceSize,
                                                  aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_SoftplusBackward;
    static const char *const all[5] = {"gradOutput", "self", "beta", "threshold", "gradInput"};
    const void *ptrs[5] = {gradOutput, self, beta, threshold, gradInput};
    OG_TRY(og_check_args(op, workspaceSize, executor, 5, all, ptrs));
    og_softplus_params p;
    OG_TRY(read_params(op, beta, threshold, &p));
    static const char *const names[3] = {"gradOutput", "self", "gradInput"};
    const aclTensor *ins[2] = {gradOutput, self};
    return og_plan_backward(op, OG_EW_KERNEL(softplus_bwd), 2, ins, gradInput, names,
                            OG_BWD_INT_SELF_AS_FLOAT, OG_OUT_CASTABLE, &p, sizeof p, workspaceSize,
                            executor);
}
