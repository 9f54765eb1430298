/* aclnnMish, aclnnInplaceMish, aclnnMishBackward and the opgrad extensions aclnnMishWithTanhx /
 * aclnnMishBackwardWithTanhx: argument checks and plans on the elementwise engine. */
#include "aclnnop/aclnn_mish.h"
#include "aclnnop/aclnn_mish_backward.h"
#include "ops/activation/mish/mish_kernel.h"
#include "ops/common/checks.h"

OG_EW_DEFINE_KERNEL3_TABLES(mish_fwd);
OG_EW_DEFINE_KERNEL_TABLE(mish_fwd_tanhx);
OG_EW_DEFINE_KERNEL64_TABLE(mish_fwd_tanhx);
OG_EW_DEFINE_KERNEL3_TABLES(mish_bwd);
OG_EW_DEFINE_KERNEL_TABLE(mish_bwd_tanhx);
OG_EW_DEFINE_KERNEL64_TABLE(mish_bwd_tanhx);

// Forward family: every output has self's dtype and shape. names: self, then the outputs.
static aclnnStatus plan_forward(const og_opdesc *op, og_ew_kernel k, const aclTensor *self,
                                int nout, const aclTensor *const *outs, const char *const *names,
                                uint64_t *workspaceSize, aclOpExecutor **executor) {
    const void *ptrs[3] = {self, outs[0], nout > 1 ? outs[1] : NULL};
    OG_TRY(og_check_args(op, workspaceSize, executor, 1 + nout, names, ptrs));
    return og_plan_forward(op, k, self, nout, outs, names, OG_OUT_SAME_DTYPE, NULL, 0,
                           workspaceSize, executor);
}

aclnnStatus aclnnMishGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char *const names[] = {"self", "out"};
    const aclTensor *outs[1] = {out};
    return plan_forward(&og_op_Mish, OG_EW_KERNEL_HEAVY(mish_fwd), self, 1, outs, names,
                        workspaceSize, executor);
}

aclnnStatus aclnnInplaceMishGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
                                             aclOpExecutor **executor) {
    static const char *const names[] = {"selfRef", "selfRef"};
    const aclTensor *outs[1] = {selfRef};
    return plan_forward(&og_op_InplaceMish, OG_EW_KERNEL_HEAVY(mish_fwd), selfRef, 1, outs, names,
                        workspaceSize, executor);
}

aclnnStatus aclnnMishWithTanhxGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                               aclTensor *tanhxOut, uint64_t *workspaceSize,
                                               aclOpExecutor **executor) {
    static const char *const names[] = {"self", "out", "tanhxOut"};
    const aclTensor *outs[2] = {out, tanhxOut};
    return plan_forward(&og_op_MishWithTanhx, OG_EW_KERNEL_F64_HEAVY(mish_fwd_tanhx), self, 2, outs,
                        names, workspaceSize, executor);
}

// Backward family: the inputs broadcast and promote together; gradInput has the broadcast shape
// and a dtype the promoted type casts to.
static aclnnStatus plan_backward(const og_opdesc *op, og_ew_kernel k, int nin,
                                 const aclTensor *const *ins, const aclTensor *gradInput,
                                 const char *const *names, uint64_t *workspaceSize,
                                 aclOpExecutor **executor) {
    const void *ptrs[4] = {ins[0], ins[1], nin > 2 ? ins[2] : NULL, NULL};
    ptrs[nin] = gradInput;
    OG_TRY(og_check_args(op, workspaceSize, executor, nin + 1, names, ptrs));
    return og_plan_backward(op, k, nin, ins, gradInput, names, OG_BWD_BROADCAST, OG_OUT_CASTABLE,
                            NULL, 0, workspaceSize, executor);
}

aclnnStatus aclnnMishBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                              aclTensor *gradInput, uint64_t *workspaceSize,
                                              aclOpExecutor **executor) {
    static const char *const names[] = {"gradOutput", "self", "gradInput"};
    const aclTensor *ins[2] = {gradOutput, self};
    return plan_backward(&og_op_MishBackward, OG_EW_KERNEL(mish_bwd), 2, ins, gradInput, names,
                         workspaceSize, executor);
}

aclnnStatus aclnnMishBackwardWithTanhxGetWorkspaceSize(const aclTensor *gradOutput,
                                                       const aclTensor *self,
                                                       const aclTensor *tanhx, aclTensor *gradInput,
                                                       uint64_t *workspaceSize,
                                                       aclOpExecutor **executor) {
    static const char *const names[] = {"gradOutput", "self", "tanhx", "gradInput"};
    const aclTensor *ins[3] = {gradOutput, self, tanhx};
    return plan_backward(&og_op_MishBackwardWithTanhx, OG_EW_KERNEL_F64(mish_bwd_tanhx), 3, ins,
                         gradInput, names, workspaceSize, executor);
}
