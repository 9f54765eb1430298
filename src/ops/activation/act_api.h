/* Phase 1 of the activation family's plainest shapes, over the common helpers
 * (ops/common/checks.h): a unary forward without attributes, and a broadcasting backward
 * (gradOutput, self or output) -> gradInput. Host code only. */
#ifndef OG_ACT_API_H
#define OG_ACT_API_H

#include "ops/common/checks.h"

/// self -> out (out_name), with `rule` for out's dtype: the whole phase 1.
static inline aclnnStatus og_act_unary(const og_opdesc *op, og_ew_kernel k, const char *self_name,
                                       const aclTensor *self, const char *out_name,
                                       const aclTensor *out, og_out_rule rule,
                                       uint64_t *workspaceSize, aclOpExecutor **executor) {
    const char *names[2] = {self_name, out_name};
    const void *ptrs[2] = {self, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 2, names, ptrs));
    const aclTensor *outs[1] = {out};
    return og_plan_forward(op, k, self, 1, outs, names, rule, NULL, 0, workspaceSize, executor);
}

/// (gradOutput, x) -> gradInput, broadcasting, gradInput castable from the promoted type: the
/// whole phase 1. names: gradOutput, x, gradInput. flags: more of og_plan_backward's options.
static inline aclnnStatus og_act_grad(const og_opdesc *op, og_ew_kernel k,
                                      const char *const names[3], const aclTensor *grad,
                                      const aclTensor *x, const aclTensor *gradInput,
                                      unsigned flags, uint64_t *workspaceSize,
                                      aclOpExecutor **executor) {
    const void *ptrs[3] = {grad, x, gradInput};
    OG_TRY(og_check_args(op, workspaceSize, executor, 3, names, ptrs));
    const aclTensor *ins[2] = {grad, x};
    return og_plan_backward(op, k, 2, ins, gradInput, names, OG_BWD_BROADCAST | flags,
                            OG_OUT_CASTABLE, NULL, 0, workspaceSize, executor);
}

#endif
