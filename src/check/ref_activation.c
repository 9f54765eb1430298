/* Float64 references of the sigmoid family (see ref_activation.h). */
#include "check/ref_activation.h"

#include <math.h>

static const double SQRT_2_OVER_PI = 0.79788456080286535588; // sqrt(2 / pi)
static const double GELU_C = 0.044715;
static const double INV_SQRT_2PI = 0.39894228040143267794; // 1 / sqrt(2 pi)
static const double SQRT1_2 = 0.70710678118654752440;      // 1 / sqrt 2

double og_ref_act_sigmoid(double x) {
    if (isnan(x)) return x;
    if (x >= 0) return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}

double og_ref_act_sigmoid_grad_from_output(double y) { return y * (1.0 - y); }

double og_ref_act_tanh(double x) { return tanh(x); }

double og_ref_act_tanh_grad_from_output(double y) { return (1.0 - y) * (1.0 + y); }

double og_ref_silu(double x) {
    if (isinf(x)) return x > 0 ? x : -0.0;
    return x * og_ref_act_sigmoid(x);
}

double og_ref_silu_grad(double x, double *mag) {
    if (isnan(x)) return *mag = x;
    if (isinf(x)) return *mag = x > 0 ? 1.0 : 0.0;
    double s = og_ref_act_sigmoid(x), one_minus_s = og_ref_act_sigmoid(-x); // no cancellation
    double corr = x * s * one_minus_s;
    *mag = s + fabs(corr);
    return s + corr;
}

// 1 + tanh(u) without cancellation for u < 0: 2 e^(2u) / (1 + e^(2u)).
static double one_plus_tanh(double u) {
    if (u >= 0) return 1.0 + tanh(u);
    double e = exp(2.0 * u);
    return 2.0 * e / (1.0 + e);
}

static double gelu_u(double x) { return SQRT_2_OVER_PI * (x + GELU_C * x * x * x); }

double og_ref_gelu_tanh(double x) {
    if (isnan(x)) return x;
    if (isinf(x)) return x > 0 ? x : -0.0;
    return 0.5 * x * one_plus_tanh(gelu_u(x));
}

double og_ref_gelu_tanh_grad(double x, double *mag) {
    if (isnan(x)) return *mag = x;
    if (isinf(x)) return *mag = x > 0 ? 1.0 : 0.0;
    double u = gelu_u(x), du = SQRT_2_OVER_PI * (1.0 + 3.0 * GELU_C * x * x);
    double e = exp(-2.0 * fabs(u)); // sech^2 u = 4 e / (1 + e)^2: no cancellation, no overflow
    double first = 0.5 * one_plus_tanh(u),
           second = 0.5 * x * du * (4.0 * e / ((1.0 + e) * (1.0 + e)));
    *mag = first + fabs(second);
    return first + second;
}

double og_ref_gelu_erf(double x) {
    if (isnan(x)) return x;
    if (isinf(x)) return x > 0 ? x : -0.0;
    return 0.5 * x * erfc(-x * SQRT1_2);
}

double og_ref_gelu_erf_grad(double x, double *mag) {
    if (isnan(x)) return *mag = x;
    if (isinf(x)) return *mag = x > 0 ? 1.0 : 0.0;
    double cdf = 0.5 * erfc(-x * SQRT1_2), xpdf = x * INV_SQRT_2PI * exp(-0.5 * x * x);
    *mag = cdf + fabs(xpdf);
    return cdf + xpdf;
}

double og_ref_softplus_bt(double x, double beta, double threshold) {
    if (isnan(x)) return x;
    double z = beta * x;
    if (z > threshold) return x;
    if (z > 0) return x + log1p(exp(-z)) / beta; // log1p(e^z) = z + log1p(e^-z)
    return log1p(exp(z)) / beta;
}

double og_ref_softplus_bt_grad(double x, double beta, double threshold) {
    if (isnan(x)) return x;
    double z = beta * x;
    if (z > threshold) return 1.0;
    return og_ref_act_sigmoid(z);
}
