/* Float64 references of the sigmoid family (sigmoid, tanh, silu, gelu in both forms, softplus),
 * written apart from the kernels: plain double arithmetic and libm double functions only, in
 * overflow-free forms, with the mathematical limits at +-inf and NaN propagated. Each gradient
 * function also returns a magnitude bound *mag: the same sum with every term made
 * non-negative, the scale against which a cancelling sum (near a root of the derivative) is
 * judged. */
#ifndef OG_REF_ACTIVATION_H
#define OG_REF_ACTIVATION_H

/// sigmoid(x) = 1 / (1 + e^-x).
double og_ref_act_sigmoid(double x);
/// d sigmoid / dx from the output y: y (1 - y).
double og_ref_act_sigmoid_grad_from_output(double y);

/// tanh(x).
double og_ref_act_tanh(double x);
/// d tanh / dx from the output y: 1 - y^2 = (1 - y)(1 + y).
double og_ref_act_tanh_grad_from_output(double y);

/// silu(x) = x sigmoid(x); silu(-inf) = -0.
double og_ref_silu(double x);
/// silu'(x) = sigmoid(x) + x sigmoid(x) (1 - sigmoid(x)); mag = |first| + |second|.
double og_ref_silu_grad(double x, double *mag);

/// The tanh approximation: x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
double og_ref_gelu_tanh(double x);
/// Its derivative: (1 + tanh u)/2 + x/2 sech^2(u) u'; mag = |first| + |second|.
double og_ref_gelu_tanh_grad(double x, double *mag);

/// The exact form: x Phi(x) = x/2 erfc(-x / sqrt 2).
double og_ref_gelu_erf(double x);
/// Its derivative: Phi(x) + x phi(x); mag = Phi(x) + |x phi(x)|.
double og_ref_gelu_erf_grad(double x, double *mag);

/// softplus with beta and threshold (PyTorch / ops-nn): log1p(e^(beta x)) / beta if
/// beta x <= threshold, else x.
double og_ref_softplus_bt(double x, double beta, double threshold);
/// Its derivative: sigmoid(beta x) if beta x <= threshold, else 1.
double og_ref_softplus_bt_grad(double x, double beta, double threshold);

#endif
