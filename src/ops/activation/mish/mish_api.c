/* aclnnMish, aclnnInplaceMish, aclnnMishBackward and the opgrad extensions aclnnMishWithTanhx /
 * aclnnMishBackwardWithTanhx: argument checks and plans on the elementwise engine. */
#include "aclnnop/aclnn_mish.h"
#include "aclnnop/aclnn_mish_backward.h"
#include "ops/activation/mish/mish_kernel.h"
#include "ops/op_checks.h"

OG_EW_DEFINE_KERNEL3_TABLES(mish_fwd);
OG_EW_DEFINE_KERNEL_TABLE(mish_fwd_tanhx);
OG_EW_DEFINE_KERNEL3_TABLES(mish_bwd);
OG_EW_DEFINE_KERNEL_TABLE(mish_bwd_tanhx);

static const char OP_MISH[] = "aclnnMish";
static const char OP_INPLACE_MISH[] = "aclnnInplaceMish";
static const char OP_MISH_TANHX[] = "aclnnMishWithTanhx";
static const char OP_MISH_BACKWARD[] = "aclnnMishBackward";
static const char OP_MISH_BACKWARD_TANHX[] = "aclnnMishBackwardWithTanhx";

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        aclnnStatus st_ = (expr);                                                                  \
        if (st_ != ACLNN_SUCCESS) return st_;                                                      \
    } while (0)

// Forward family: every output has self's dtype and shape.
static aclnnStatus plan_forward(const char *op, const og_ew_compute_fn *kernels,
                                const og_ew_compute16_fn (*kernels16)[2], const aclTensor *self,
                                int nout, aclTensor *const *outs, const char *const *names,
                                uint64_t *workspaceSize, aclOpExecutor **executor) {
    TRY(og_check_out_ptrs(op, workspaceSize, executor));
    const void *ptrs[3] = {self, outs[0], nout > 1 ? outs[1] : NULL};
    TRY(og_check_not_null(op, 1 + nout, names, ptrs));
    TRY(og_check_tensor(op, names[0], self, OG_DTS_FLOATING, 0));
    og_ew_op ew = {.op = op,
                   .kernels = kernels,
                   .kernels16 = kernels16,
                   .nin = 1,
                   .in = {self},
                   .nout = nout,
                   .compute_dtype = self->dtype};
    ew.names[0] = names[0];
    for (int k = 0; k < nout; k++) {
        TRY(og_check_tensor(op, names[1 + k], outs[k], OG_DTS_FLOATING, 0));
        TRY(og_check_same_dtype(op, names[0], self, names[1 + k], outs[k]));
        TRY(og_check_same_shape(op, names[0], self, names[1 + k], outs[k]));
        ew.out[k] = outs[k];
        ew.names[1 + k] = names[1 + k];
    }
    return og_ew_plan_op(&ew, workspaceSize, executor);
}

aclnnStatus aclnnMishGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char *const names[] = {"self", "out"};
    return plan_forward(OP_MISH, og_mish_fwd_kernels, og_mish_fwd_kernels16, self, 1, &out, names,
                        workspaceSize, executor);
}

aclnnStatus aclnnMish(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                      aclrtStream stream) {
    return og_executor_launch(OP_MISH, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnInplaceMishGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize,
                                             aclOpExecutor **executor) {
    static const char *const names[] = {"selfRef", "selfRef"};
    return plan_forward(OP_INPLACE_MISH, og_mish_fwd_kernels, og_mish_fwd_kernels16, selfRef, 1,
                        &selfRef, names, workspaceSize, executor);
}

aclnnStatus aclnnInplaceMish(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                             aclrtStream stream) {
    return og_executor_launch(OP_INPLACE_MISH, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnMishWithTanhxGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                               aclTensor *tanhxOut, uint64_t *workspaceSize,
                                               aclOpExecutor **executor) {
    static const char *const names[] = {"self", "out", "tanhxOut"};
    aclTensor *outs[2] = {out, tanhxOut};
    return plan_forward(OP_MISH_TANHX, og_mish_fwd_tanhx_kernels, NULL, self, 2, outs, names,
                        workspaceSize, executor);
}

aclnnStatus aclnnMishWithTanhx(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                               aclrtStream stream) {
    return og_executor_launch(OP_MISH_TANHX, workspace, workspaceSize, executor, stream);
}

// Backward family: the inputs broadcast and promote together; gradInput has the broadcast shape
// and a dtype the promoted type casts to.
static aclnnStatus plan_backward(const char *op, const og_ew_compute_fn *kernels,
                                 const og_ew_compute16_fn (*kernels16)[2], int nin,
                                 const aclTensor *const *ins, aclTensor *gradInput,
                                 const char *const *names, uint64_t *workspaceSize,
                                 aclOpExecutor **executor) {
    TRY(og_check_out_ptrs(op, workspaceSize, executor));
    const void *ptrs[4] = {ins[0], ins[1], nin > 2 ? ins[2] : NULL, NULL};
    ptrs[nin] = gradInput;
    TRY(og_check_not_null(op, nin + 1, names, ptrs));
    for (int k = 0; k < nin; k++) TRY(og_check_tensor(op, names[k], ins[k], OG_DTS_FLOATING, 0));
    TRY(og_check_tensor(op, names[nin], gradInput, OG_DTS_FLOATING, 0));
    aclDataType promoted;
    TRY(og_check_promotion(op, nin, names, ins, OG_DTS_FLOATING, names[nin], gradInput, &promoted));
    TRY(og_check_broadcast_to(op, nin, names, ins, names[nin], gradInput));
    og_ew_op ew = {.op = op,
                   .kernels = kernels,
                   .kernels16 = kernels16,
                   .nin = nin,
                   .nout = 1,
                   .out = {gradInput},
                   .compute_dtype = promoted};
    for (int k = 0; k < nin; k++) ew.in[k] = ins[k], ew.names[k] = names[k];
    ew.names[nin] = names[nin];
    return og_ew_plan_op(&ew, workspaceSize, executor);
}

aclnnStatus aclnnMishBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                              aclTensor *gradInput, uint64_t *workspaceSize,
                                              aclOpExecutor **executor) {
    static const char *const names[] = {"gradOutput", "self", "gradInput"};
    const aclTensor *ins[2] = {gradOutput, self};
    return plan_backward(OP_MISH_BACKWARD, og_mish_bwd_kernels, og_mish_bwd_kernels16, 2, ins,
                         gradInput, names, workspaceSize, executor);
}

aclnnStatus aclnnMishBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                              aclrtStream stream) {
    return og_executor_launch(OP_MISH_BACKWARD, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnMishBackwardWithTanhxGetWorkspaceSize(const aclTensor *gradOutput,
                                                       const aclTensor *self,
                                                       const aclTensor *tanhx, aclTensor *gradInput,
                                                       uint64_t *workspaceSize,
                                                       aclOpExecutor **executor) {
    static const char *const names[] = {"gradOutput", "self", "tanhx", "gradInput"};
    const aclTensor *ins[3] = {gradOutput, self, tanhx};
    return plan_backward(OP_MISH_BACKWARD_TANHX, og_mish_bwd_tanhx_kernels, NULL, 3, ins, gradInput,
                         names, workspaceSize, executor);
}

aclnnStatus aclnnMishBackwardWithTanhx(void *workspace, uint64_t workspaceSize,
                                       aclOpExecutor *executor, aclrtStream stream) {
    return og_executor_launch(OP_MISH_BACKWARD_TANHX, workspace, workspaceSize, executor, stream);
}
