/* Phase-1 helpers shared by the sigmoid family's API files (sigmoid, tanh, silu, gelu,
 * softplus): dtype checks that name the dtypes aclnn accepts but opgrad does not implement,
 * scalar attributes, and the two planning shapes (unary forward, binary backward) on the
 * elementwise engine. Every check returns the aclnn status with a message naming the function,
 * the argument and the rule. Host code only. */
#ifndef OG_ACT_PLAN_H
#define OG_ACT_PLAN_H

#include <float.h>
#include <math.h>

#include "engine/elementwise.h"
#include "engine/executor.h"
#include "ops/op_checks.h"
#include "runtime/error.h"
#include "tensor/dtype.h"

#define ACT_TRY(expr)                                                                              \
    do {                                                                                           \
        aclnnStatus st_ = (expr);                                                                  \
        if (st_ != ACLNN_SUCCESS) return st_;                                                      \
    } while (0)

/// Dtypes the aclnn documentation lists beyond float32/float16/bfloat16 (messages only).
#define ACT_DTS_DOUBLE (OG_DT(ACL_DOUBLE))
#define ACT_DTS_DOUBLE_COMPLEX (OG_DT(ACL_DOUBLE) | OG_DT(ACL_COMPLEX64) | OG_DT(ACL_COMPLEX128))
#define ACT_DTS_INTEGRAL                                                                           \
    (OG_DT(ACL_INT8) | OG_DT(ACL_INT16) | OG_DT(ACL_INT32) | OG_DT(ACL_INT64) | OG_DT(ACL_UINT8) | \
     OG_DT(ACL_BOOL))

/// A tensor argument: dtype float32/float16/bfloat16 and rank 0..8 (161002). A dtype the aclnn
/// operator accepts on Ascend (`aclnn_dtypes`) but opgrad does not implement gets a message
/// saying so.
static inline aclnnStatus act_check_tensor(const char *op, const char *name, const aclTensor *t,
                                           unsigned long long aclnn_dtypes) {
    if (t && (int)t->dtype >= 0 && (int)t->dtype < 64 && !(OG_DTS_FLOATING & OG_DT(t->dtype)) &&
        (aclnn_dtypes & OG_DT(t->dtype)))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has dtype %s, which %s accepts on Ascend; opgrad "
                       "supports float32, float16 and bfloat16 only",
                       op, name, og_dtype_name(t->dtype), op);
    return og_check_tensor(op, name, t, OG_DTS_FLOATING, 0);
}

/// A scalar attribute (non-NULL is checked by the caller with the tensors): any real dtype, as
/// aclnn's ToFloat (complex or other: 161002); *value = its value rounded to float (overflow
/// to +-inf).
static inline aclnnStatus act_scalar_float(const char *op, const char *name, const aclScalar *s,
                                           float *value) {
    const unsigned long long real = OG_DTS_FLOATING | OG_DT(ACL_DOUBLE) | ACT_DTS_INTEGRAL |
                                    OG_DT(ACL_UINT16) | OG_DT(ACL_UINT32) | OG_DT(ACL_UINT64);
    if ((int)s->dtype < 0 || (int)s->dtype >= 64 || !(real & OG_DT(s->dtype)))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has dtype %s; a real (floating, integer or bool) "
                       "scalar is required",
                       op, name, og_dtype_name(s->dtype));
    double d = og_scalar_as_double(s);
    if (isnan(d) || fabs(d) <= FLT_MAX)
        *value = (float)d;
    else if (fabs(d) >= 0x1.ffffffp127)
        *value = (float)copysign(INFINITY, d);
    else
        *value = (float)copysign(FLT_MAX, d);
    return ACLNN_SUCCESS;
}

/// Unary forward (kernels16: the fused 16-bit kernels, or NULL): out has self's dtype and shape,
/// 0..8 dims, any strides; empty is a no-op. The caller has checked the out-pointers and every
/// pointer argument for NULL.
static inline aclnnStatus act_plan_unary(const char *op, const og_ew_compute_fn *kernels,
                                         const og_ew_compute16_fn (*kernels16)[2],
                                         const char *self_name, const aclTensor *self,
                                         const char *out_name, aclTensor *out,
                                         unsigned long long aclnn_dtypes, const void *params,
                                         size_t params_size, uint64_t *workspaceSize,
                                         aclOpExecutor **executor) {
    ACT_TRY(act_check_tensor(op, self_name, self, aclnn_dtypes));
    ACT_TRY(act_check_tensor(op, out_name, out, aclnn_dtypes));
    ACT_TRY(og_check_same_dtype(op, self_name, self, out_name, out));
    ACT_TRY(og_check_same_shape(op, self_name, self, out_name, out));
    og_ew_op ew = {.op = op,
                   .kernels = kernels,
                   .kernels16 = kernels16,
                   .nin = 1,
                   .in = {self},
                   .nout = 1,
                   .out = {out},
                   .names = {self_name, out_name},
                   .params = params,
                   .params_size = params_size,
                   .compute_dtype = self->dtype};
    return og_ew_plan_op(&ew, workspaceSize, executor);
}

/// Binary backward (gradOutput, self or output) -> gradInput. The inputs promote (PyTorch
/// rules) to float32/float16/bfloat16 and the result must be castable to gradInput's dtype;
/// with `broadcast` they broadcast (NumPy rules) and gradInput has the broadcast shape, without
/// it all three shapes are equal. 0..8 dims, any strides; empty is a no-op.
static inline aclnnStatus act_plan_binary(const char *op, const og_ew_compute_fn *kernels,
                                          const og_ew_compute16_fn (*kernels16)[2],
                                          const char *const names[3], const aclTensor *grad,
                                          const aclTensor *x, const aclTensor *gradInput,
                                          bool broadcast, unsigned long long aclnn_dtypes,
                                          const void *params, size_t params_size,
                                          uint64_t *workspaceSize, aclOpExecutor **executor) {
    const aclTensor *ins[2] = {grad, x};
    ACT_TRY(act_check_tensor(op, names[0], grad, aclnn_dtypes));
    ACT_TRY(act_check_tensor(op, names[1], x, aclnn_dtypes));
    ACT_TRY(act_check_tensor(op, names[2], gradInput, aclnn_dtypes));
    aclDataType promoted;
    ACT_TRY(og_check_promotion(op, 2, names, ins, OG_DTS_FLOATING, names[2], gradInput, &promoted));
    if (broadcast) {
        ACT_TRY(og_check_broadcast_to(op, 2, names, ins, names[2], gradInput));
    } else {
        ACT_TRY(og_check_same_shape(op, names[1], x, names[0], grad));
        ACT_TRY(og_check_same_shape(op, names[1], x, names[2], gradInput));
    }
    og_ew_op ew = {.op = op,
                   .kernels = kernels,
                   .kernels16 = kernels16,
                   .nin = 2,
                   .in = {grad, x},
                   .nout = 1,
                   .out = {gradInput},
                   .names = {names[0], names[1], names[2]},
                   .params = params,
                   .params_size = params_size,
                   .compute_dtype = promoted};
    return og_ew_plan_op(&ew, workspaceSize, executor);
}

/// The whole phase 1 of a unary forward without attributes: out-pointers (161001), NULL
/// tensors (161001), then act_plan_unary.
static inline aclnnStatus act_unary_api(const char *op, const og_ew_compute_fn *kernels,
                                        const og_ew_compute16_fn (*kernels16)[2],
                                        const char *self_name, const aclTensor *self,
                                        const char *out_name, aclTensor *out,
                                        unsigned long long aclnn_dtypes, uint64_t *workspaceSize,
                                        aclOpExecutor **executor) {
    ACT_TRY(og_check_out_ptrs(op, workspaceSize, executor));
    const char *names[2] = {self_name, out_name};
    const void *ptrs[2] = {self, out};
    ACT_TRY(og_check_not_null(op, 2, names, ptrs));
    return act_plan_unary(op, kernels, kernels16, self_name, self, out_name, out, aclnn_dtypes,
                          NULL, 0, workspaceSize, executor);
}

/// The whole phase 1 of a broadcasting binary backward without attributes.
static inline aclnnStatus act_binary_api(const char *op, const og_ew_compute_fn *kernels,
                                         const og_ew_compute16_fn (*kernels16)[2],
                                         const char *const names[3], const aclTensor *grad,
                                         const aclTensor *x, const aclTensor *gradInput,
                                         unsigned long long aclnn_dtypes, uint64_t *workspaceSize,
                                         aclOpExecutor **executor) {
    ACT_TRY(og_check_out_ptrs(op, workspaceSize, executor));
    const void *ptrs[3] = {grad, x, gradInput};
    ACT_TRY(og_check_not_null(op, 3, names, ptrs));
    return act_plan_binary(op, kernels, kernels16, names, grad, x, gradInput, true, aclnn_dtypes,
                           NULL, 0, workspaceSize, executor);
}

#endif
