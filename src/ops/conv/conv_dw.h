/* Depthwise convolution (one input channel per group: groups = input channels, any channel
 * multiplier), 1-D and 2-D: a direct kernel instead of the GEMM, whose products would be one
 * input channel deep. Each plane is widened to fp32 into a zero-padded buffer, so the kernels run
 * without bounds checks:
 *   forward  one (n, g): the input plane padded once, the multiplier's output planes from it;
 *   data     one (n, g): every output plane of the group scattered into the padded input-space
 *            plane (fixed order: output channel, row, tap), then cropped;
 *   weight   one group: the 16-lane dot products of gradOutput with the shifted padded input,
 *            over n in order.
 * Units own whole planes or filters: results do not depend on the thread count. */
#ifndef OG_OPS_CONV_DW_H
#define OG_OPS_CONV_DW_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/program.h"
#include "ops/conv/conv.h"

#define OG_DW_LANES 16

/// One plane's geometry: the padded input-space buffer [xh, xw], the output plane [oh, ow].
typedef struct og_dw_plane {
    int64_t xh, xw, oh, ow, kh, kw, sh, sw, dh, dw;
} og_dw_plane;

typedef void (*og_dw_fwd_fn)(const og_dw_plane *g, const float *xp, const float *w, float *y);
typedef void (*og_dw_data_fn)(const og_dw_plane *g, const float *dy, const float *w, float *xp);
typedef void (*og_dw_weight_fn)(const og_dw_plane *g, const float *dy, const float *xp,
                                float *lanes);

#define OG_DW_DECLARE(sfx)                                                                         \
    void og_conv_dw_fwd__##sfx(const og_dw_plane *, const float *, const float *, float *);        \
    void og_conv_dw_data__##sfx(const og_dw_plane *, const float *, const float *, float *);       \
    void og_conv_dw_weight__##sfx(const og_dw_plane *, const float *, const float *, float *);
OG_DW_DECLARE(scalar)
OG_DW_DECLARE(avx2)
OG_DW_DECLARE(avx512)

/// Whether the direct kernel takes the convolution (else the GEMM steps of conv.h).
bool og_conv_dw_eligible(const og_conv_geom *g);
/// The CUSTOM steps, with the arguments of og_conv_forward, og_conv_data and og_conv_weight.
void og_conv_dw_forward(og_prog *p, const og_conv_geom *g, const og_conv_tensor *x,
                        const og_conv_tensor *w, const og_conv_tensor *bias,
                        const og_conv_tensor *y, aclDataType round_ab);
void og_conv_dw_data(og_prog *p, const og_conv_geom *g, const og_conv_tensor *y,
                     const og_conv_tensor *w, const og_conv_tensor *bias, const og_conv_tensor *x,
                     aclDataType round_ab);
void og_conv_dw_weight(og_prog *p, const og_conv_geom *g, const og_conv_tensor *x,
                       const og_conv_tensor *y, const og_conv_tensor *dw, aclDataType round_ab);

#endif
