/* aclnnHardswish, aclnnInplaceHardswish and aclnnHardswishBackward: argument checks and plans on
 * the elementwise engine. Rules from ops-nn
 * activation/hard_swish/op_host/op_api/aclnn_hardswish.cpp and
 * activation/hard_swish_grad/op_api/aclnn_hardswish_backward.cpp. */
#include "aclnnop/aclnn_hardswish.h"
#include "aclnnop/aclnn_hardswish_backward.h"
#include "ops/activation/hardswish/hardswish_kernel.h"
#include "ops/activation/relu/pw_api.h"

OG_EW_DEFINE_KERNEL3_TABLES(hardswish_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(hardswish_bwd);

static const char OP_HARDSWISH[] = "aclnnHardswish";
static const char OP_INPLACE_HARDSWISH[] = "aclnnInplaceHardswish";
static const char OP_HARDSWISH_BACKWARD[] = "aclnnHardswishBackward";

static aclnnStatus plan_hardswish(const char *op, const char *self_name, const aclTensor *self,
                                  const char *out_name, const aclTensor *out,
                                  uint64_t *workspaceSize, aclOpExecutor **executor) {
    PW_TRY(og_check_out_ptrs(op, workspaceSize, executor));
    const char *names[2] = {self_name, out_name};
    const void *ptrs[2] = {self, out};
    PW_TRY(og_check_not_null(op, 2, names, ptrs));
    return pw_plan_unary(op, og_hardswish_fwd_kernels, og_hardswish_fwd_kernels16, self_name, self,
                         out_name, out, 0, PW_OUT_CASTABLE, NULL, 0, workspaceSize, executor);
}

aclnnStatus aclnnHardswishGetWorkspaceSize(const aclTensor *self, const aclTensor *out,
                                           uint64_t *workspaceSize, aclOpExecutor **executor) {
    return plan_hardswish(OP_HARDSWISH, "self", self, "out", out, workspaceSize, executor);
}

aclnnStatus aclnnHardswish(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                           aclrtStream stream) {
    return og_executor_launch(OP_HARDSWISH, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnInplaceHardswishGetWorkspaceSize(const aclTensor *self, uint64_t *workspaceSize,
                                                  aclOpExecutor **executor) {
    return plan_hardswish(OP_INPLACE_HARDSWISH, "self", self, "self", self, workspaceSize,
                          executor);
}

aclnnStatus aclnnInplaceHardswish(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                  aclrtStream stream) {
    return og_executor_launch(OP_INPLACE_HARDSWISH, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnHardswishBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                   const aclTensor *self, aclTensor *out,
                                                   uint64_t *workspaceSize,
                                                   aclOpExecutor **executor) {
    const char *op = OP_HARDSWISH_BACKWARD;
    PW_TRY(og_check_out_ptrs(op, workspaceSize, executor));
    static const char *const names[3] = {"gradOutput", "self", "out"};
    const void *ptrs[3] = {gradOutput, self, out};
    PW_TRY(og_check_not_null(op, 3, names, ptrs));
    return pw_plan_binary(op, og_hardswish_bwd_kernels, og_hardswish_bwd_kernels16, names,
                          gradOutput, self, out, 0, false, PW_OUT_SAME_DTYPE, NULL, 0,
                          workspaceSize, executor);
}

aclnnStatus aclnnHardswishBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                   aclrtStream stream) {
    return og_executor_launch(OP_HARDSWISH_BACKWARD, workspace, workspaceSize, executor, stream);
}
