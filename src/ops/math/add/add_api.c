/* aclnnAdd, aclnnAdds, aclnnInplaceAdd, aclnnInplaceAdds: argument checks and plans on the
 * elementwise engine (ops-math math/add). */
#include "aclnnop/aclnn_add.h"
#include "ops/common/checks.h"
#include "ops/math/add/add_kernel.h"

OG_EW_DEFINE_KERNEL3_TABLES(add);
OG_EW_DEFINE_KERNEL3_TABLES(adds);

// self + alpha * other (tensors). names = {self, other, alpha, out}; for the inplace form out is
// self, and its shape must be the broadcast shape.
static aclnnStatus plan_add(const og_opdesc *op, const aclTensor *self, const aclTensor *other,
                            const aclScalar *alpha, const aclTensor *out, const char *const *names,
                            uint64_t *workspaceSize, aclOpExecutor **executor) {
    const void *ptrs[4] = {self, other, alpha, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 4, names, ptrs));
    OG_TRY(og_check_tensor_of(op, names[0], self, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, names[1], other, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, names[3], out, 0, OG_DTS_FLOATING64));
    const aclTensor *ins[2] = {self, other};
    aclDataType promoted;
    OG_TRY(og_check_promotion(op, 2, names, ins, names[3], out, &promoted));
    og_add_params params = {0};
    OG_TRY(og_check_scalar(op, names[2], alpha, &params.alpha));
    params.alpha64 = og_scalar_as_double(alpha);
    OG_TRY(og_check_broadcast_to(op, 2, names, ins, names[3], out));
    og_ew_op ew = {.op = op,
                   .kernels = og_add_kernels,
                   .kernels16 = og_add_kernels16,
                   .kernels64 = og_add_kernels64,
                   .kernels_nt = og_add_nt_kernels,
                   .light = true,
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
static aclnnStatus plan_adds(const og_opdesc *op, const aclTensor *self, const aclScalar *other,
                             const aclScalar *alpha, const aclTensor *out, const char *const *names,
                             uint64_t *workspaceSize, aclOpExecutor **executor) {
    const void *ptrs[4] = {self, other, alpha, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 4, names, ptrs));
    OG_TRY(og_check_tensor_of(op, names[0], self, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, names[3], out, 0, OG_DTS_FLOATING64));
    aclDataType promoted = self->dtype;
    og_add_params params = {0};
    OG_TRY(og_check_scalar(op, names[1], other, NULL));
    OG_TRY(og_check_scalar(op, names[2], alpha, &params.alpha));
    OG_TRY(og_check_castable(op, promoted, names[3], out));
    OG_TRY(og_check_same_shape(op, names[0], self, names[3], out));
    params.other = og_scalar_in(other, promoted);
    params.alpha64 = og_scalar_as_double(alpha);
    params.other64 = og_scalar_as_double(other);
    og_ew_op ew = {.op = op,
                   .kernels = og_adds_kernels,
                   .kernels16 = og_adds_kernels16,
                   .kernels64 = og_adds_kernels64,
                   .kernels_nt = og_adds_nt_kernels,
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
    return plan_add(&og_op_Add, self, other, alpha, out, names, workspaceSize, executor);
}

aclnnStatus aclnnAddsGetWorkspaceSize(const aclTensor *self, const aclScalar *other,
                                      const aclScalar *alpha, aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char *const names[] = {"self", "other", "alpha", "out"};
    return plan_adds(&og_op_Adds, self, other, alpha, out, names, workspaceSize, executor);
}

aclnnStatus aclnnInplaceAddGetWorkspaceSize(const aclTensor *selfRef, const aclTensor *other,
                                            const aclScalar *alpha, uint64_t *workspaceSize,
                                            aclOpExecutor **executor) {
    static const char *const names[] = {"selfRef", "other", "alpha", "selfRef"};
    return plan_add(&og_op_InplaceAdd, selfRef, other, alpha, selfRef, names, workspaceSize,
                    executor);
}

aclnnStatus aclnnInplaceAddsGetWorkspaceSize(const aclTensor *selfRef, const aclScalar *other,
                                             const aclScalar *alpha, uint64_t *workspaceSize,
                                             aclOpExecutor **executor) {
    static const char *const names[] = {"selfRef", "other", "alpha", "selfRef"};
    return plan_adds(&og_op_InplaceAdds, selfRef, other, alpha, selfRef, names, workspaceSize,
                     executor);
}
