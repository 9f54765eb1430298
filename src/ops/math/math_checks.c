#include "ops/math/math_checks.h"

#include "runtime/error.h"
#include "tensor/dtype.h"

// The dtypes ops-math's Add/Mul/ReduceSum accept on the NPU.
static bool aclnn_knows(aclDataType dt) {
    switch (dt) {
    case ACL_FLOAT:
    case ACL_FLOAT16:
    case ACL_BF16:
    case ACL_DOUBLE:
    case ACL_INT8:
    case ACL_INT16:
    case ACL_INT32:
    case ACL_INT64:
    case ACL_UINT8:
    case ACL_BOOL:
    case ACL_COMPLEX64:
    case ACL_COMPLEX128:
        return true;
    default:
        return false;
    }
}

static aclnnStatus dtype_fail(const char *op, const char *what, const char *name, aclDataType dt) {
    return og_fail(
        ACLNN_ERR_PARAM_INVALID,
        "%sGetWorkspaceSize: %s%s has dtype %s; opgrad supports float32/float16/bfloat16%s", op,
        what, name, og_dtype_name(dt),
        aclnn_knows(dt) ? " (aclnn also accepts this dtype; opgrad does not implement it)" : "");
}

static bool floating(aclDataType dt) {
    return dt == ACL_FLOAT || dt == ACL_FLOAT16 || dt == ACL_BF16;
}

aclnnStatus og_math_check_tensor(const char *op, const char *name, const aclTensor *t,
                                 int min_rank) {
    if (!t) return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%sGetWorkspaceSize: %s is NULL", op, name);
    if (!floating(t->dtype)) return dtype_fail(op, "", name, t->dtype);
    if (t->ndim > OG_MAX_DIMS || t->ndim < min_rank)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has rank %d; supported: %d to %d dims", op, name,
                       t->ndim, min_rank, OG_MAX_DIMS);
    return ACLNN_SUCCESS;
}

aclnnStatus og_math_check_dtype(const char *op, const char *name, aclDataType dt) {
    if (!floating(dt)) return dtype_fail(op, "argument ", name, dt);
    return ACLNN_SUCCESS;
}

aclnnStatus og_math_check_scalar(const char *op, const char *name, const aclScalar *s,
                                 aclDataType to) {
    if (!s) return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%sGetWorkspaceSize: %s is NULL", op, name);
    if (!og_dtype_is_representable(s->dtype) || s->dtype == ACL_COMPLEX64 ||
        s->dtype == ACL_COMPLEX128 || !og_can_cast(s->dtype, to))
        return og_fail(
            ACLNN_ERR_PARAM_INVALID,
            "%sGetWorkspaceSize: %s has dtype %s, which cannot be cast to the computation "
            "dtype %s",
            op, name, og_dtype_name(s->dtype), og_dtype_name(to));
    return ACLNN_SUCCESS;
}

float og_math_scalar_in(const aclScalar *s, aclDataType dt) {
    float v = (float)og_scalar_as_double(s);
    if (dt == ACL_FLOAT16) return og_f16_to_f32(og_f32_to_f16(v));
    if (dt == ACL_BF16) return og_bf16_to_f32(og_f32_to_bf16(v));
    return v;
}
