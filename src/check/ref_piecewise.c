/* Float64 references of the piecewise family (see ref_piecewise.h). */
#include "check/ref_piecewise.h"

#include <math.h>

double og_ref_relu(double x) {
    if (isnan(x)) return x;
    return x > 0 ? x : 0.0;
}

double og_ref_threshold_grad(double g, double x, double threshold) {
    return x > threshold ? g : 0.0;
}

double og_ref_leaky_relu(double x, double slope) { return x > 0 ? x : slope * x; }

double og_ref_leaky_relu_grad(double g, double x, double slope) { return x > 0 ? g : g * slope; }

double og_ref_hardswish(double x) {
    if (isnan(x)) return x;
    if (x >= 3) return x;
    if (x <= -3) return 0.0;
    return x * (x + 3) / 6;
}

double og_ref_hardswish_grad(double x) {
    if (isnan(x)) return x;
    if (x < -3) return 0.0;
    if (x > 3) return 1.0;
    return (2 * x + 3) / 6; // = x / 3 + 1/2, exactly 0 at x = -1.5
}

double og_ref_hardsigmoid(double x) {
    if (isnan(x)) return x;
    if (x >= 3) return 1.0;
    if (x <= -3) return 0.0;
    return (x + 3) / 6;
}

double og_ref_hardsigmoid_grad(double x) { return x > -3 && x < 3 ? 1.0 / 6 : 0.0; }

double og_ref_elu(double x, double alpha, double scale, double input_scale) {
    if (x > 0) return scale * x;
    return alpha * scale * expm1(x * input_scale);
}

double og_ref_elu_grad(double x, double alpha, double scale, double input_scale) {
    if (x > 0) return scale;
    return input_scale * alpha * scale * exp(x * input_scale);
}

double og_ref_elu_grad_result(double y, double alpha, double scale, double input_scale) {
    if (y > 0) return scale;
    return input_scale * (y + alpha * scale);
}
