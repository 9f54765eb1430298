/* Winograd F(4x4, 3x3) for 3x3 stride-1 fp32 convolutions (forward, and the data product as a
 * forward convolution of gradOutput with the flipped, transposed kernel): per group,
 *   U[xi] = G w G^T          (6x6 per filter, in double, rounded once)     [36, G, co, ci]
 *   V[xi] = B^T d B          (6x6 per 4x4 output tile and input channel)   [36, G, ci, T]
 *   M[xi] = U[xi] @ V[xi]    36 GEMMs (the GEMM engine)                    [36, G, co, T]
 *   y     = A^T M A          (4x4 per tile, cropped, + bias)
 * 36 products per 16 outputs instead of 144: 4x fewer flops, at the price of the transforms'
 * error (measured by the checker's conv*_winograd entries, bounded through the transforms'
 * magnitudes: docs/ops/conv.md). OPGRAD_WINOGRAD=0 (or opgrad_set_winograd(0)) turns it off. */
#ifndef OG_OPS_CONV_WINOGRAD_H
#define OG_OPS_CONV_WINOGRAD_H

#include <stdbool.h>

#include "engine/program.h"
#include "ops/conv/conv.h"

#define OG_WINO_LANES 8 // tiles transformed at once

void og_wino_input__scalar(const float *patch, float *v);
void og_wino_input__avx2(const float *patch, float *v);
void og_wino_input__avx512(const float *patch, float *v);
void og_wino_output__scalar(const float *m, float *y);
void og_wino_output__avx2(const float *m, float *y);
void og_wino_output__avx512(const float *m, float *y);

/// Whether Winograd takes a product from src (spatial extents src) to dst of the direct
/// convolution g's kind: 3x3, stride 1, dilation 1, 2-D, fp32 tensors, no fp16 rounding,
/// enough channels, and the switch on.
bool og_conv_wino_eligible(const og_conv_geom *g, aclDataType src_dt, aclDataType w_dt,
                           aclDataType dst_dt, aclDataType round_ab);
/// y = conv(x, w) + bias (og_conv_forward's arguments).
void og_conv_wino_forward(og_prog *p, const og_conv_geom *g, const og_conv_tensor *x,
                          const og_conv_tensor *w, const og_conv_tensor *bias,
                          const og_conv_tensor *y);
/// x = conv^T(y, w) + bias (og_conv_data's arguments), stride 1.
void og_conv_wino_data(og_prog *p, const og_conv_geom *g, const og_conv_tensor *y,
                       const og_conv_tensor *w, const og_conv_tensor *bias,
                       const og_conv_tensor *x);

#endif
