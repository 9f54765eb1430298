/* Elu / EluBackward kernels (elu_kernel_simd.c), one build per ISA. With alpha, scale and
 * inputScale the aclScalar attributes (converted to float as aclnn's ToFloat does):
 *
 *   elu_fwd:         in = {x}     out = {y}
 *                    y = x > 0 ? scale x : alpha scale expm1(x inputScale)
 *                    (saturate: alpha or inputScale inf/NaN, as ops-nn's Threshold path:
 *                     y = (x > 0 or NaN) ? scale x : -alpha * scale)
 *   elu_bwd:         in = {g, x}  out = {dx}
 *                    dx = x > 0 ? g scale : g inputScale alpha scale e^(x inputScale)
 *   elu_bwd_result:  in = {g, y}  out = {dx}
 *                    dx = y > 0 ? g scale : g inputScale (y + alpha scale)
 */
#ifndef OG_ELU_KERNEL_H
#define OG_ELU_KERNEL_H

#include <math.h>
#include <stdbool.h>

#include "engine/elementwise.h"

typedef struct og_elu_params {
    double negcoef;     // alpha * scale (exact in double)
    double grad_coef;   // inputScale * alpha * scale (backward, from the input)
    double input_scale; // inputScale
    float scale;        // scale (the x > 0 piece)
    float input_scale_f;
    float saturated; // forward, saturate mode: (-alpha) * scale in float
    int saturate;    // forward: alpha or inputScale is inf or NaN
} og_elu_params;

OG_EW_DECLARE_KERNEL3(elu_fwd)
OG_EW_DECLARE_KERNEL3(elu_bwd)
OG_EW_DECLARE_KERNEL3(elu_bwd_result)

/// Fills the parameters from the attribute values (as floats).
static inline og_elu_params og_elu_make_params(float alpha, float scale, float input_scale) {
    og_elu_params p;
    p.negcoef = (double)alpha * (double)scale;
    p.grad_coef = (double)input_scale * p.negcoef;
    p.input_scale = input_scale;
    p.scale = scale;
    p.input_scale_f = input_scale;
    p.saturated = -alpha * scale;
    p.saturate = isinf(alpha) || isnan(alpha) || isinf(input_scale) || isnan(input_scale);
    return p;
}

#endif
