/* Float64 reference implementations of the operators' math, written apart from the kernels:
 * plain double arithmetic and libm double functions only (no float-typed helper anywhere), so
 * they can judge the fp32/fp16/bf16 kernels. Special values follow the mathematical limits. */
#ifndef OG_REFERENCE_H
#define OG_REFERENCE_H

/// softplus(x) = log(1 + e^x), overflow-free.
double og_ref_softplus(double x);
/// sigmoid(x) = 1 / (1 + e^-x), overflow-free.
double og_ref_sigmoid(double x);
/// tanh(softplus(x)).
double og_ref_mish_tanhx(double x);
/// mish(x) = x tanh(softplus(x)); mish(-inf) = -0, mish(+inf) = +inf.
double og_ref_mish(double x);
/// d mish / dx = t + x sigmoid(x) (1 - t^2); 0 at -inf, 1 at +inf.
double og_ref_mish_grad(double x);
/// The tanhx branch of MishGrad with a given t: g (t + x sigmoid(x) (1 - t^2)); a zero
/// (1 - t^2) zeroes the correction term even for infinite x.
double og_ref_mish_grad_tanhx(double g, double x, double t);

#endif
