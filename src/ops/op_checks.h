/* Phase-1 argument checks shared by operators. Each returns ACLNN_SUCCESS or the aclnn status,
 * with a message naming the operator, the argument and the rule. */
#ifndef OG_OP_CHECKS_H
#define OG_OP_CHECKS_H

#include <stdbool.h>

#include "tensor/tensor.h"

/// Dtype sets (bit masks over aclDataType values < 64).
#define OG_DT(x) (1ull << (x))
#define OG_DTS_FLOATING (OG_DT(ACL_FLOAT) | OG_DT(ACL_FLOAT16) | OG_DT(ACL_BF16))

/// Every pointer non-NULL (161001), checked before anything else as aclnn does.
aclnnStatus og_check_not_null(const char *op, int n, const char *const *names,
                              const void *const *ptrs);
/// Non-NULL (161001); dtype in `dtypes` (161002); rank in [min_rank, 8] (161002).
aclnnStatus og_check_tensor(const char *op, const char *name, const aclTensor *t,
                            unsigned long long dtypes, int min_rank);
/// Same shape (161002).
aclnnStatus og_check_same_shape(const char *op, const char *name_a, const aclTensor *a,
                                const char *name_b, const aclTensor *b);
/// Same dtype (161002).
aclnnStatus og_check_same_dtype(const char *op, const char *name_a, const aclTensor *a,
                                const char *name_b, const aclTensor *b);
/// The inputs broadcast together and `out` has exactly the broadcast shape (161002).
aclnnStatus og_check_broadcast_to(const char *op, int n, const char *const *names,
                                  const aclTensor *const *inputs, const char *out_name,
                                  const aclTensor *out);
/// Promotes the inputs' dtypes (161002 when there is no common type) into *promoted, which must
/// be in `dtypes`; out's dtype must be castable from it (161002).
aclnnStatus og_check_promotion(const char *op, int n, const char *const *names,
                               const aclTensor *const *inputs, unsigned long long dtypes,
                               const char *out_name, const aclTensor *out, aclDataType *promoted);

#endif
