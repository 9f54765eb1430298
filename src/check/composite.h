/* Helpers of the checker's composite backwards: what a framework's autograd does with public
 * aclnn calls (NULL stream, a fresh workspace per call) to form a gradient that no single
 * operator returns, e.g. a broadcast input's gradient summed down to its shape. */
#ifndef OG_CHECK_COMPOSITE_H
#define OG_CHECK_COMPOSITE_H

#include <stdint.h>

#include "acl/acl.h"
#include "check/check.h"

/// A contiguous temporary tensor and its buffer.
typedef struct ogc_tmp {
    void *data;
    aclTensor *t;
} ogc_tmp;

/// A zeroed contiguous temporary of `dims` and dtype dt (t NULL when out of memory).
ogc_tmp ogc_tmp_new(const int64_t *dims, int nd, aclDataType dt);
void ogc_tmp_free(ogc_tmp *r);
/// A contiguous view of another shape (same element count) over a contiguous tensor's data.
aclTensor *ogc_reshaped(const aclTensor *t, const int64_t *dims, int nd);
/// out = factor * x (aclnnMuls with an fp32 scalar; rounds once to out's dtype).
int ogc_muls(const aclTensor *x, double factor, aclTensor *out);
/// dst = factor * (src summed down to dst's shape): the dims where dst (right-aligned) is missing
/// or 1 and src is not are summed by aclnnReduceSum into fp32 (keepDims), and aclnnMuls rounds
/// factor * sum once into dst's dtype.
int ogc_sum_to(const aclTensor *src, double factor, ogc_result *dst);

#endif
