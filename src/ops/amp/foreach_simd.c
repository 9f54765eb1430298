/* The foreach tile kernels, compiled once per ISA. Plain loops over fixed lane arrays: the
 * compiler vectorizes them for each build, and the lane order fixes the summation order, so the
 * three builds give the same bits (no -ffast-math reassociation anywhere). */
#include <math.h>

#include "engine/simd/vec.h"
#include "ops/amp/foreach_kernel.h"

enum { LANES = 16 };

bool OG_FN(og_fe_map)(float *x, size_t n, float s, og_fe_map_kind kind) {
    if (kind == OG_FE_DIV) {
        for (size_t i = 0; i < n; i++) x[i] = x[i] / s;
        return false;
    }
    if (kind == OG_FE_MUL) {
        for (size_t i = 0; i < n; i++) x[i] = x[i] * s;
        return false;
    }
    // x * 0 is 0 for a finite x and NaN for an inf or a NaN: the lane sums turn NaN iff one was.
    float probe[LANES] = {0};
    size_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++) {
            probe[l] += x[i + l] * 0.0f;
            x[i + l] = x[i + l] * s;
        }
    bool bad = false;
    for (; i < n; i++) {
        bad |= !isfinite(x[i]);
        x[i] = x[i] * s;
    }
    for (int l = 0; l < LANES; l++) bad |= probe[l] != probe[l];
    return bad;
}

void OG_FN(og_fe_norm)(const float *x, size_t n, og_fe_norm_kind kind, double *acc) {
    double lane[LANES];
    size_t i = 0;
    switch (kind) {
    case OG_FE_L1:
    case OG_FE_L2:
    case OG_FE_L0:
        for (int l = 0; l < LANES; l++) lane[l] = 0;
        for (; i + LANES <= n; i += LANES)
            for (int l = 0; l < LANES; l++) {
                double v = x[i + l];
                lane[l] += kind == OG_FE_L2 ? v * v : kind == OG_FE_L1 ? fabs(v) : (double)(v != 0);
            }
        for (; i < n; i++) {
            double v = x[i];
            lane[0] += kind == OG_FE_L2 ? v * v : kind == OG_FE_L1 ? fabs(v) : (double)(v != 0);
        }
        for (int l = 0; l < LANES; l++) *acc += lane[l];
        return;
    case OG_FE_MAX:
    case OG_FE_MIN: {
        // NaN: a max/min compare drops it, so it is counted apart (v - v is NaN only for NaN and
        // inf; an inf is a regular max).
        float m[LANES], nan[LANES] = {0};
        for (int l = 0; l < LANES; l++) m[l] = kind == OG_FE_MAX ? 0.0f : INFINITY;
        for (; i + LANES <= n; i += LANES)
            for (int l = 0; l < LANES; l++) {
                float a = fabsf(x[i + l]);
                m[l] = kind == OG_FE_MAX ? (a > m[l] ? a : m[l]) : (a < m[l] ? a : m[l]);
                nan[l] += a != a;
            }
        double r = *acc;
        for (; i < n; i++) {
            double a = fabs((double)x[i]);
            if (a != a) r = NAN;
            if (r == r) r = kind == OG_FE_MAX ? fmax(r, a) : fmin(r, a);
        }
        for (int l = 0; l < LANES; l++) {
            if (nan[l] != 0) r = NAN;
            if (r == r) r = kind == OG_FE_MAX ? fmax(r, m[l]) : fmin(r, m[l]);
        }
        *acc = r;
        return;
    }
    }
}
