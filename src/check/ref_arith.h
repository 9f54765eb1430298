/* Float64 references of the arith family (Add, Mul, ReduceSum, FusedAddScale), written apart
 * from the kernels: plain double arithmetic, summation in double in index order. */
#ifndef OG_REF_ARITH_H
#define OG_REF_ARITH_H

#include "check/check.h"

/// self + alpha * other.
double og_ref_add(double self, double other, double alpha);
/// self * other.
double og_ref_mul(double self, double other);
/// (x + bias) * scale.
double og_ref_fused_add_scale(double x, double bias, double scale);

/// The dims of `in` that `dims` (n entries, negative counting from the end; n = 0: all dims)
/// selects, as a bit mask; false when a dim is out of range or repeated (aclnn's 161002). A 0-d
/// input has rank 1 for this purpose (dims 0 and -1 are valid and sum nothing).
bool og_ref_reduce_mask(const ogc_shape *in, const int64_t *dims, int n, unsigned *mask);
/// The shape ReduceSum gives: summed dims dropped, or kept with size 1 (keepdim).
ogc_shape og_ref_reduce_shape(const ogc_shape *in, unsigned mask, bool keepdim);
/// y[o] = sum of x over the summed dims (in double, in index order), abs[o] = the sum of |x|.
/// y and abs are row-major over the kept dims (the same order with or without keepdim).
void og_ref_reduce_sum(const ogc_shape *in, const double *x, unsigned mask, double *y, double *abs);
/// The gradient of that sum: gx[i] = gy[o(i)], grad_output broadcast back over the summed dims.
void og_ref_reduce_sum_grad(const ogc_shape *in, unsigned mask, const double *gy, double *gx);

#endif
