/* Float64 references of the piecewise family (Relu/ThresholdBackward, LeakyRelu, Hardswish,
 * Hardsigmoid, Elu), written apart from the kernels: plain double arithmetic and libm double
 * functions only. Each follows the aclnn formula as documented; attributes are passed as the float
 * values the kernels receive. Special values: NaN inputs give NaN where the formula's arithmetic
 * reaches them, and the comparisons decide exactly as written (a NaN compares false). */
#ifndef OG_REF_PIECEWISE_H
#define OG_REF_PIECEWISE_H

/// relu(x) = x > 0 ? x : 0 (NaN -> NaN).
double og_ref_relu(double x);
/// ThresholdBackward: x > threshold ? g : 0.
double og_ref_threshold_grad(double g, double x, double threshold);
/// leaky_relu(x) = x > 0 ? x : slope x.
double og_ref_leaky_relu(double x, double slope);
/// LeakyReluBackward: x > 0 ? g : g slope.
double og_ref_leaky_relu_grad(double g, double x, double slope);
/// hardswish(x) = x >= 3 ? x : x <= -3 ? 0 : x (x + 3) / 6.
double og_ref_hardswish(double x);
/// d hardswish / dx as aclnn defines it: 0 (x < -3), x / 3 + 1/2 (-3 <= x <= 3), 1 (x > 3).
double og_ref_hardswish_grad(double x);
/// hardsigmoid(x) = x >= 3 ? 1 : x <= -3 ? 0 : (x + 3) / 6.
double og_ref_hardsigmoid(double x);
/// d hardsigmoid / dx as aclnn and PyTorch define it: 1/6 for -3 < x < 3, else 0 (NaN too).
double og_ref_hardsigmoid_grad(double x);
/// elu(x) = x > 0 ? scale x : alpha scale expm1(x inputScale).
double og_ref_elu(double x, double alpha, double scale, double input_scale);
/// d elu / dx from the input: x > 0 ? scale : inputScale alpha scale exp(x inputScale).
double og_ref_elu_grad(double x, double alpha, double scale, double input_scale);
/// d elu / dx from the result y = elu(x): y > 0 ? scale : inputScale (y + alpha scale).
double og_ref_elu_grad_result(double y, double alpha, double scale, double input_scale);

#endif
