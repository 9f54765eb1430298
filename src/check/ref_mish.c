#include <math.h>

#include "check/reference.h"

double og_ref_softplus(double x) {
    if (isnan(x)) return x;
    return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

double og_ref_sigmoid(double x) {
    if (isnan(x)) return x;
    return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
}

double og_ref_mish_tanhx(double x) { return tanh(og_ref_softplus(x)); }

double og_ref_mish(double x) {
    if (isinf(x)) return x > 0 ? x : -0.0;
    return x * og_ref_mish_tanhx(x);
}

// 1 - tanh(s)^2 = sech(s)^2, evaluated without cancellation.
static double sech2(double s) {
    double c = cosh(s);
    return 1.0 / (c * c);
}

double og_ref_mish_grad(double x) {
    if (isnan(x)) return x;
    if (isinf(x)) return x > 0 ? 1.0 : 0.0;
    double sp = og_ref_softplus(x);
    return tanh(sp) + x * og_ref_sigmoid(x) * sech2(sp);
}

double og_ref_mish_grad_tanhx(double g, double x, double t) {
    if (isnan(x) || isnan(t) || isnan(g)) return NAN;
    double one_minus_t2 = (1.0 - t) * (1.0 + t);
    double x_sig = isinf(x) ? (x > 0 ? x : 0.0) : x * og_ref_sigmoid(x);
    double corr = one_minus_t2 == 0.0 ? 0.0 : x_sig * one_minus_t2;
    return g * (t + corr);
}
