/* Phase-1 helpers shared by the piecewise family's API files (relu, leaky_relu, hardswish, elu):
 * dtype checks that name the dtypes aclnn accepts but opgrad does not implement, scalar
 * attributes, and the two planning shapes (unary forward, binary backward) on the elementwise
 * engine. Every check returns the aclnn status with a message naming the function, the argument
 * and the rule (runtime/error.h). Host code only. */
#ifndef OG_PW_API_H
#define OG_PW_API_H

#include <float.h>
#include <math.h>

#include "engine/elementwise.h"
#include "engine/executor.h"
#include "ops/op_checks.h"
#include "runtime/error.h"
#include "tensor/dtype.h"

#define PW_TRY(expr)                                                                               \
    do {                                                                                           \
        aclnnStatus st_ = (expr);                                                                  \
        if (st_ != ACLNN_SUCCESS) return st_;                                                      \
    } while (0)

/// Every real dtype a scalar attribute can have (aclnn's ToFloat converts them; complex cannot be
/// cast to FLOAT).
#define PW_DTS_REAL_SCALAR                                                                         \
    (OG_DT(ACL_FLOAT) | OG_DT(ACL_FLOAT16) | OG_DT(ACL_BF16) | OG_DT(ACL_DOUBLE) |                 \
     OG_DT(ACL_INT8) | OG_DT(ACL_INT16) | OG_DT(ACL_INT32) | OG_DT(ACL_INT64) | OG_DT(ACL_UINT8) | \
     OG_DT(ACL_UINT16) | OG_DT(ACL_UINT32) | OG_DT(ACL_UINT64) | OG_DT(ACL_BOOL))

/// A tensor argument: dtype float32/float16/bfloat16 and rank 0..8 (161002). A dtype the aclnn
/// operator accepts on Ascend (`aclnn_dtypes`) but opgrad does not implement gets a message
/// saying so.
static inline aclnnStatus pw_check_tensor(const char *op, const char *name, const aclTensor *t,
                                          unsigned long long aclnn_dtypes) {
    if (t && (int)t->dtype >= 0 && (int)t->dtype < 64 && !(OG_DTS_FLOATING & OG_DT(t->dtype)) &&
        (aclnn_dtypes & OG_DT(t->dtype)))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has dtype %s, which %s accepts on Ascend but "
                       "opgrad does not implement; opgrad supports float32, float16 and bfloat16",
                       op, name, og_dtype_name(t->dtype), op);
    return og_check_tensor(op, name, t, OG_DTS_FLOATING, 0);
}

/// A double converted to float with IEEE rounding (overflow to +-inf), without relying on the
/// out-of-range conversion.
static inline float pw_to_float(double d) {
    if (isnan(d) || fabs(d) <= FLT_MAX) return (float)d;
    if (fabs(d) >= 0x1.ffffffp127) return (float)copysign(INFINITY, d);
    return (float)copysign(FLT_MAX, d);
}

/// A scalar attribute: non-NULL (161001, checked by the caller with the tensors), dtype in
/// `dtypes` (161002); *value = its value converted to float, as aclnn's ToFloat.
static inline aclnnStatus pw_scalar_float(const char *op, const char *name, const aclScalar *s,
                                          unsigned long long dtypes, float *value) {
    if (!s) return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%sGetWorkspaceSize: %s is NULL", op, name);
    if ((int)s->dtype < 0 || (int)s->dtype >= 64 || !(dtypes & OG_DT(s->dtype)))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has dtype %s, which cannot be converted to float32",
                       op, name, og_dtype_name(s->dtype));
    *value = pw_to_float(og_scalar_as_double(s));
    return ACLNN_SUCCESS;
}

typedef enum {
    PW_OUT_SAME_DTYPE, // the output has the input's dtype (Relu, ThresholdBackward, ...)
    PW_OUT_CASTABLE,   // the output has any dtype the result can be cast to (float -> float)
} pw_out_rule;

/// Forward y = f(self) (kernels16: the fused 16-bit kernels, or NULL): dtype checks, `out` with
/// self's shape and a dtype per `rule`; the result is computed in self's dtype and cast to out's.
/// Null pointers are checked by the caller.
static inline aclnnStatus pw_plan_unary(const char *op, const og_ew_compute_fn *kernels,
                                        const og_ew_compute16_fn (*kernels16)[2],
                                        const char *self_name, const aclTensor *self,
                                        const char *out_name, const aclTensor *out,
                                        unsigned long long aclnn_dtypes, pw_out_rule rule,
                                        const void *params, size_t params_size,
                                        uint64_t *workspaceSize, aclOpExecutor **executor) {
    PW_TRY(pw_check_tensor(op, self_name, self, aclnn_dtypes));
    PW_TRY(pw_check_tensor(op, out_name, out, aclnn_dtypes));
    if (rule == PW_OUT_SAME_DTYPE) PW_TRY(og_check_same_dtype(op, self_name, self, out_name, out));
    PW_TRY(og_check_same_shape(op, self_name, self, out_name, out));
    og_ew_op ew = {.op = op,
                   .kernels = kernels,
                   .kernels16 = kernels16,
                   .nin = 1,
                   .in = {self},
                   .nout = 1,
                   .out = {out},
                   .params = params,
                   .params_size = params_size,
                   .compute_dtype = self->dtype};
    ew.names[0] = self_name;
    ew.names[1] = out_name;
    return og_ew_plan_op(&ew, workspaceSize, executor);
}

/// Backward dx = f(gradOutput, self): dtype checks, promotion of the two inputs (PyTorch rules;
/// ops-nn's backward kernels other than LeakyReluBackward want equal dtypes, opgrad promotes as
/// its Mish backward does, so that mixed-precision gradients work); shapes broadcast
/// (`broadcast`) or must be equal; `out` gets the broadcast shape and, per `rule`, self's dtype
/// or any dtype the promoted type casts to. Null pointers are checked by the caller.
static inline aclnnStatus pw_plan_binary(const char *op, const og_ew_compute_fn *kernels,
                                         const og_ew_compute16_fn (*kernels16)[2],
                                         const char *const names[3], const aclTensor *grad,
                                         const aclTensor *self, const aclTensor *out,
                                         unsigned long long aclnn_dtypes, bool broadcast,
                                         pw_out_rule rule, const void *params, size_t params_size,
                                         uint64_t *workspaceSize, aclOpExecutor **executor) {
    const aclTensor *ins[2] = {grad, self};
    PW_TRY(pw_check_tensor(op, names[0], grad, aclnn_dtypes));
    PW_TRY(pw_check_tensor(op, names[1], self, aclnn_dtypes));
    PW_TRY(pw_check_tensor(op, names[2], out, aclnn_dtypes));
    aclDataType promoted;
    PW_TRY(og_check_promotion(op, 2, names, ins, OG_DTS_FLOATING, names[2], out, &promoted));
    if (rule == PW_OUT_SAME_DTYPE) PW_TRY(og_check_same_dtype(op, names[1], self, names[2], out));
    if (broadcast) {
        PW_TRY(og_check_broadcast_to(op, 2, names, ins, names[2], out));
    } else {
        PW_TRY(og_check_same_shape(op, names[0], grad, names[1], self));
        PW_TRY(og_check_same_shape(op, names[1], self, names[2], out));
    }
    og_ew_op ew = {.op = op,
                   .kernels = kernels,
                   .kernels16 = kernels16,
                   .nin = 2,
                   .in = {grad, self},
                   .nout = 1,
                   .out = {out},
                   .params = params,
                   .params_size = params_size,
                   .compute_dtype = promoted};
    for (int k = 0; k < 3; k++) ew.names[k] = names[k];
    return og_ew_plan_op(&ew, workspaceSize, executor);
}

#endif
