/* Depthwise convolution plane kernels (conv_dw.c), plain loops compiled per ISA: the compiler
 * vectorizes them along the output row. Every sum has one order for every ISA: fmaf (no
 * contraction), taps in (kh, kw) order, and the weight gradient's dot products in 16 lanes
 * (lane = ow % 16) combined by one fixed tree. */
#include <math.h>
#include <string.h>

#include "engine/simd/vec.h"
#include "ops/conv/conv_dw.h"

void OG_FN(og_conv_dw_fwd)(const og_dw_plane *g, const float *xp, const float *w, float *y) {
    const int64_t XW = g->xw;
    for (int64_t oh = 0; oh < g->oh; oh++) {
        float *yr = y + oh * g->ow;
        for (int64_t ow = 0; ow < g->ow; ow++) yr[ow] = 0.0f;
        for (int64_t kh = 0; kh < g->kh; kh++) {
            const float *xr = xp + (oh * g->sh + kh * g->dh) * XW;
            for (int64_t kw = 0; kw < g->kw; kw++) {
                const float wv = w[kh * g->kw + kw], *src = xr + kw * g->dw;
                if (g->sw == 1)
                    for (int64_t ow = 0; ow < g->ow; ow++) yr[ow] = fmaf(wv, src[ow], yr[ow]);
                else
                    for (int64_t ow = 0; ow < g->ow; ow++)
                        yr[ow] = fmaf(wv, src[ow * g->sw], yr[ow]);
            }
        }
    }
}

void OG_FN(og_conv_dw_data)(const og_dw_plane *g, const float *dy, const float *w, float *xp) {
    const int64_t XW = g->xw;
    for (int64_t oh = 0; oh < g->oh; oh++) {
        const float *dr = dy + oh * g->ow;
        for (int64_t kh = 0; kh < g->kh; kh++) {
            float *xr = xp + (oh * g->sh + kh * g->dh) * XW;
            for (int64_t kw = 0; kw < g->kw; kw++) {
                const float wv = w[kh * g->kw + kw];
                float *dst = xr + kw * g->dw;
                if (g->sw == 1)
                    for (int64_t ow = 0; ow < g->ow; ow++) dst[ow] = fmaf(wv, dr[ow], dst[ow]);
                else
                    for (int64_t ow = 0; ow < g->ow; ow++)
                        dst[ow * g->sw] = fmaf(wv, dr[ow], dst[ow * g->sw]);
            }
        }
    }
}

void OG_FN(og_conv_dw_weight)(const og_dw_plane *g, const float *dy, const float *xp,
                              float *lanes) {
    const int64_t XW = g->xw, full = g->ow / OG_DW_LANES * OG_DW_LANES, sw = g->sw;
    for (int64_t kh = 0; kh < g->kh; kh++)
        for (int64_t kw = 0; kw < g->kw; kw++) {
            // the lanes in a local array (no aliasing with the planes: it stays in registers)
            float acc[OG_DW_LANES];
            memcpy(acc, lanes + (kh * g->kw + kw) * OG_DW_LANES, sizeof acc);
            for (int64_t oh = 0; oh < g->oh; oh++) {
                const float *restrict dr = dy + oh * g->ow;
                const float *restrict xr = xp + (oh * g->sh + kh * g->dh) * XW + kw * g->dw;
                if (sw == 1) // (a constant stride: the compiler vectorizes the lanes)
                    for (int64_t o0 = 0; o0 < full; o0 += OG_DW_LANES)
                        for (int l = 0; l < OG_DW_LANES; l++)
                            acc[l] = fmaf(dr[o0 + l], xr[o0 + l], acc[l]);
                else
                    for (int64_t o0 = 0; o0 < full; o0 += OG_DW_LANES)
                        for (int l = 0; l < OG_DW_LANES; l++)
                            acc[l] = fmaf(dr[o0 + l], xr[(o0 + l) * sw], acc[l]);
                for (int64_t ow = full; ow < g->ow; ow++)
                    acc[ow - full] = fmaf(dr[ow], xr[ow * sw], acc[ow - full]);
            }
            memcpy(lanes + (kh * g->kw + kw) * OG_DW_LANES, acc, sizeof acc);
        }
}
