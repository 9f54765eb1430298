/* aclnnAdd, aclnnAdds, aclnnInplaceAdd, aclnnInplaceAdds: argument checks and plans on the
 * elementwise engine (ops-math math/add). */
#include "aclnnop/aclnn_add.h"
#include "ops/math/add/add_kernel.h"
#include "ops/math/math_checks.h"
#include "runtime/error.h"
#include "tensor/dtype.h"

OG_EW_DEFINE_KERNEL3_TABLES(add);
OG_EW_DEFINE_KERNEL3_TABLES(adds);

static const char OP_ADD[] = "aclnnAdd";
static const char OP_ADDS[] = "aclnnAdds";
static const char OP_INPLACE_ADD[] = "aclnnInplaceAdd";
static const char OP_INPLACE_ADDS[] = "aclnnInplaceAdds";

// self + alpha * other (tensors). names = {self, other, alpha, out}; for the inplace form out is
// self, and its shape must be the broadcast shape.
static aclnnStatus plan_add(const char *op, const aclTensor *self, const aclTensor *other,
                            const aclScalar *alpha, const aclTensor *out, const char *const *names,
                            uint64_t *workspaceSize, aclOpExecutor **executor) {
    OG_TRY(og_check_out_ptrs(op, workspaceSize, executor));
    const void *ptrs[4] = {self, other, alpha, out};
    OG_TRY(og_check_not_null(op, 4, names, ptrs));
    OG_TRY(og_math_check_tensor(op, names[0], self, 0));
    OG_TRY(og_math_check_tensor(op, names[1], other, 0));
    OG_TRY(og_math_check_tensor(op, names[3], out, 0));
    const aclTensor *ins[2] = {self, other};
    aclDataType promoted;
    OG_TRY(og_check_promotion(op, 2, names, ins, OG_DTS_FLOATING, names[3], out, &promoted));
    OG_TRY(og_math_check_scalar(op, names[2], alpha, promoted));
    OG_TRY(og_check_broadcast_to(op, 2, names, ins, names[3], out));
    og_add_params params = {.alpha = (float)og_scalar_as_double(alpha)};
    og_ew_op ew = {.op = op,
                   .kernels = og_add_kernels,
                   .kernels16 = og_add_kernels16,
                   .nin = 2,
                   .in = {self, other},
                   .nout = 1,
                   .out = {out},
                   .names = {names[0], names[1], names[3]},
                   .params = &params,
                   .params_size = sizeof params,
                   .compute_dtype = promoted};
    return og_ew_plan_op(&ew, workspaceSize, executor);
}

// self + alpha * other (scalar): computed in self's dtype, other rounded to it.
static aclnnStatus plan_adds(const char *op, const aclTensor *self, const aclScalar *other,
                             const aclScalar *alpha, const aclTensor *out, const char *const *names,
                             uint64_t *workspaceSize, aclOpExecutor **executor) {
    OG_TRY(og_check_out_ptrs(op, workspaceSize, executor));
    const void *ptrs[4] = {self, other, alpha, out};
    OG_TRY(og_check_not_null(op, 4, names, ptrs));
    OG_TRY(og_math_check_tensor(op, names[0], self, 0));
    OG_TRY(og_math_check_tensor(op, names[3], out, 0));
    aclDataType promoted = self->dtype;
    OG_TRY(og_math_check_scalar(op, names[1], other, promoted));
    OG_TRY(og_math_check_scalar(op, names[2], alpha, promoted));
    if (!og_can_cast(promoted, out->dtype))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: the result dtype %s cannot be cast to %s dtype %s", op,
                       og_dtype_name(promoted), names[3], og_dtype_name(out->dtype));
    OG_TRY(og_check_same_shape(op, names[0], self, names[3], out));
    og_add_params params = {.alpha = (float)og_scalar_as_double(alpha),
                            .other = og_math_scalar_in(other, promoted)};
    og_ew_op ew = {.op = op,
                   .kernels = og_adds_kernels,
                   .kernels16 = og_adds_kernels16,
                   .nin = 1,
                   .in = {self},
                   .nout = 1,
                   .out = {out},
                   .names = {names[0], names[3]},
                   .params = &params,
                   .params_size = sizeof params,
                   .compute_dtype = promoted};
    return og_ew_plan_op(&ew, workspaceSize, executor);
}

aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
                                     const aclScalar *alpha, aclTensor *out,
                                     uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char *const names[] = {"self", "other", "alpha", "out"};
    return plan_add(OP_ADD, self, other, alpha, out, names, workspaceSize, executor);
}

aclnnStatus aclnnAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                     aclrtStream stream) {
    return og_executor_launch(OP_ADD, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnAddsGetWorkspaceSize(const aclTensor *self, const aclScalar *other,
                                      const aclScalar *alpha, aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char *const names[] = {"self", "other", "alpha", "out"};
    return plan_adds(OP_ADDS, self, other, alpha, out, names, workspaceSize, executor);
}

aclnnStatus aclnnAdds(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                      aclrtStream stream) {
    return og_executor_launch(OP_ADDS, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnInplaceAddGetWorkspaceSize(const aclTensor *selfRef, const aclTensor *other,
                                            const aclScalar *alpha, uint64_t *workspaceSize,
                                            aclOpExecutor **executor) {
    static const char *const names[] = {"selfRef", "other", "alpha", "selfRef"};
    return plan_add(OP_INPLACE_ADD, selfRef, other, alpha, selfRef, names, workspaceSize, executor);
}

aclnnStatus aclnnInplaceAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                            aclrtStream stream) {
    return og_executor_launch(OP_INPLACE_ADD, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnInplaceAddsGetWorkspaceSize(const aclTensor *selfRef, const aclScalar *other,
                                             const aclScalar *alpha, uint64_t *workspaceSize,
                                             aclOpExecutor **executor) {
    static const char *const names[] = {"selfRef", "other", "alpha", "selfRef"};
    return plan_adds(OP_INPLACE_ADDS, selfRef, other, alpha, selfRef, names, workspaceSize,
                     executor);
}

aclnnStatus aclnnInplaceAdds(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                             aclrtStream stream) {
    return og_executor_launch(OP_INPLACE_ADDS, workspace, workspaceSize, executor, stream);
}
