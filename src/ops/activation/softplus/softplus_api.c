/* aclnnSoftplus, aclnnSoftplusBackward: argument checks and plans on the elementwise engine
 * (kernels: softplus_kernel_simd.c). beta and threshold are converted to float (aclnn's
 * ToFloat) and travel in the plan's parameters. */
#include "aclnnop/aclnn_softplus.h"
#include "aclnnop/aclnn_softplus_backward.h"
#include "ops/activation/sigmoid/act_plan.h"
#include "ops/activation/softplus/softplus_kernel.h"

OG_EW_DEFINE_KERNEL_TABLE(softplus_fwd);
OG_EW_DEFINE_KERNEL_TABLE(softplus_bwd);

static const char OP_SOFTPLUS[] = "aclnnSoftplus";
static const char OP_SOFTPLUS_BACKWARD[] = "aclnnSoftplusBackward";

static aclnnStatus read_params(const char *op, const aclScalar *beta, const aclScalar *threshold,
                               og_softplus_params *p) {
    ACT_TRY(act_scalar_float(op, "beta", beta, &p->beta));
    return act_scalar_float(op, "threshold", threshold, &p->threshold);
}

aclnnStatus aclnnSoftplusGetWorkspaceSize(const aclTensor *self, const aclScalar *beta,
                                          const aclScalar *threshold, aclTensor *out,
                                          uint64_t *workspaceSize, aclOpExecutor **executor) {
    ACT_TRY(og_check_out_ptrs(OP_SOFTPLUS, workspaceSize, executor));
    static const char *const names[4] = {"self", "beta", "threshold", "out"};
    const void *ptrs[4] = {self, beta, threshold, out};
    ACT_TRY(og_check_not_null(OP_SOFTPLUS, 4, names, ptrs));
    og_softplus_params p;
    ACT_TRY(read_params(OP_SOFTPLUS, beta, threshold, &p));
    return act_plan_unary(OP_SOFTPLUS, og_softplus_fwd_kernels, NULL, "self", self, "out", out, 0,
                          &p, sizeof p, workspaceSize, executor);
}

aclnnStatus aclnnSoftplus(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                          aclrtStream stream) {
    return og_executor_launch(OP_SOFTPLUS, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnSoftplusBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                  const aclTensor *self, const aclScalar *beta,
                                                  const aclScalar *threshold, aclTensor *gradInput,
                                                  uint64_t *workspaceSize,
                                                  aclOpExecutor **executor) {
    ACT_TRY(og_check_out_ptrs(OP_SOFTPLUS_BACKWARD, workspaceSize, executor));
    static const char *const all[5] = {"gradOutput", "self", "beta", "threshold", "gradInput"};
    const void *ptrs[5] = {gradOutput, self, beta, threshold, gradInput};
    ACT_TRY(og_check_not_null(OP_SOFTPLUS_BACKWARD, 5, all, ptrs));
    og_softplus_params p;
    ACT_TRY(read_params(OP_SOFTPLUS_BACKWARD, beta, threshold, &p));
    static const char *const names[3] = {"gradOutput", "self", "gradInput"};
    return act_plan_binary(OP_SOFTPLUS_BACKWARD, og_softplus_bwd_kernels, NULL, names, gradOutput,
                           self, gradInput, false, ACT_DTS_DOUBLE | ACT_DTS_INTEGRAL, &p, sizeof p,
                           workspaceSize, executor);
}

aclnnStatus aclnnSoftplusBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                  aclrtStream stream) {
    return og_executor_launch(OP_SOFTPLUS_BACKWARD, workspace, workspaceSize, executor, stream);
}
