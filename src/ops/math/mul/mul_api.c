/* aclnnMul, aclnnMuls, aclnnInplaceMul, aclnnInplaceMuls: argument checks and plans on the
 * elementwise engine (ops-math math/mul). */
#include "aclnnop/aclnn_mul.h"
#include "ops/common/checks.h"
#include "ops/math/mul/mul_kernel.h"

OG_EW_DEFINE_KERNEL3_TABLES(mul);
OG_EW_DEFINE_KERNEL3_TABLES(muls);

// names = {self, other, out}; for the inplace form out is self (the broadcast shape).
static aclnnStatus plan_mul(const og_opdesc *op, const aclTensor *self, const aclTensor *other,
                            const aclTensor *out, const char *const *names, uint64_t *workspaceSize,
                            aclOpExecutor **executor) {
    const void *ptrs[3] = {self, other, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 3, names, ptrs));
    OG_TRY(og_check_tensor_of(op, names[0], self, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, names[1], other, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, names[2], out, 0, OG_DTS_FLOATING64));
    const aclTensor *ins[2] = {self, other};
    aclDataType promoted;
    OG_TRY(og_check_promotion(op, 2, names, ins, names[2], out, &promoted));
    OG_TRY(og_check_broadcast_to(op, 2, names, ins, names[2], out));
    og_ew_op ew = {.op = op,
                   .kernels = og_mul_kernels,
                   .kernels16 = og_mul_kernels16,
                   .kernels64 = og_mul_kernels64,
                   .kernels_nt = og_mul_nt_kernels,
                   .light = true,
                   .nin = 2,
                   .in = {self, other},
                   .nout = 1,
                   .out = {out},
                   .names = {names[0], names[1], names[2]},
                   .compute_dtype = promoted};
    return og_ew_plan_op(&ew, workspaceSize, executor);
}

// self * other (scalar): computed in self's dtype (bfloat16 in float32, as ops-math does),
// other rounded to it.
static aclnnStatus plan_muls(const og_opdesc *op, const aclTensor *self, const aclScalar *other,
                             const aclTensor *out, const char *const *names,
                             uint64_t *workspaceSize, aclOpExecutor **executor) {
    const void *ptrs[3] = {self, other, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 3, names, ptrs));
    OG_TRY(og_check_tensor_of(op, names[0], self, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, names[2], out, 0, OG_DTS_FLOATING64));
    aclDataType promoted = self->dtype == ACL_BF16 ? ACL_FLOAT : self->dtype;
    OG_TRY(og_check_scalar(op, names[1], other, NULL));
    OG_TRY(og_check_castable(op, promoted, names[2], out));
    OG_TRY(og_check_same_shape(op, names[0], self, names[2], out));
    og_muls_params params = {.other = og_scalar_in(other, promoted),
                             .other64 = og_scalar_as_double(other)};
    og_ew_op ew = {.op = op,
                   .kernels = og_muls_kernels,
                   .kernels16 = og_muls_kernels16,
                   .kernels64 = og_muls_kernels64,
                   .kernels_nt = og_muls_nt_kernels,
                   .nin = 1,
                   .in = {self},
                   .nout = 1,
                   .out = {out},
                   .names = {names[0], names[2]},
                   .params = &params,
                   .params_size = sizeof params,
                   .compute_dtype = promoted};
    return og_ew_plan_op(&ew, workspaceSize, executor);
}

aclnnStatus aclnnMulGetWorkspaceSize(const aclTensor *self, const aclTensor *other, aclTensor *out,
                                     uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char *const names[] = {"self", "other", "out"};
    return plan_mul(&og_op_Mul, self, other, out, names, workspaceSize, executor);
}

aclnnStatus aclnnMulsGetWorkspaceSize(const aclTensor *self, const aclScalar *other, aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char *const names[] = {"self", "other", "out"};
    return plan_muls(&og_op_Muls, self, other, out, names, workspaceSize, executor);
}

aclnnStatus aclnnInplaceMulGetWorkspaceSize(aclTensor *selfRef, const aclTensor *other,
                                            uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char *const names[] = {"selfRef", "other", "selfRef"};
    return plan_mul(&og_op_InplaceMul, selfRef, other, selfRef, names, workspaceSize, executor);
}

aclnnStatus aclnnInplaceMulsGetWorkspaceSize(aclTensor *selfRef, const aclScalar *other,
                                             uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char *const names[] = {"selfRef", "other", "selfRef"};
    return plan_muls(&og_op_InplaceMuls, selfRef, other, selfRef, names, workspaceSize, executor);
}
