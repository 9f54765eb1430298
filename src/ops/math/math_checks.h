/* Argument checks shared by the arith operators (Add, Mul, ReduceSum, FusedAddScale). */
#ifndef OG_MATH_CHECKS_H
#define OG_MATH_CHECKS_H

#include "ops/op_checks.h"

#define OG_TRY(expr)                                                                               \
    do {                                                                                           \
        aclnnStatus st_ = (expr);                                                                  \
        if (st_ != ACLNN_SUCCESS) return st_;                                                      \
    } while (0)

/// A tensor argument: dtype FLOAT, FLOAT16 or BFLOAT16 (another dtype is 161002, and the message
/// says whether aclnn knows it but opgrad does not implement it); rank in [min_rank, 8].
aclnnStatus og_math_check_tensor(const char *op, const char *name, const aclTensor *t,
                                 int min_rank);
/// A dtype argument (ReduceSum's `dtype`): FLOAT, FLOAT16 or BFLOAT16, else 161002.
aclnnStatus og_math_check_dtype(const char *op, const char *name, aclDataType dt);
/// A scalar whose value the operator uses: a real (non-complex) dtype castable to `to` (161002).
aclnnStatus og_math_check_scalar(const char *op, const char *name, const aclScalar *s,
                                 aclDataType to);
/// The scalar's value as fp32, rounded first to `dt` when that is a 16-bit float type.
float og_math_scalar_in(const aclScalar *s, aclDataType dt);

#endif
