/* FusedAddScale: y = (x + bias) * scale, a custom operator in MindSpore's aot ABI.
 *
 *   x [N, C], bias [C] (broadcast over rows), scale [1]  ->  y [N, C]
 *
 * Backward (bprop convention: x, bias, scale, y, dy, then dx, dbias, dscale):
 *   dx     = dy * scale                     [N, C]
 *   dbias  = sum over rows of dy * scale    [C]   (bias was broadcast over dim 0: reduce it)
 *   dscale = sum of dy * (x + bias)         [1]   (scale was broadcast over everything)
 *
 * Plain C, no dependency but the header's typedef: build with
 *   gcc -O2 -shared -fPIC -I<opgrad>/include fused_add_scale.c -o libfused_add_scale.so
 * dtypes: float32, float16, bfloat16, float64; dy may arrive in another of them (mixed
 * precision). Sums are accumulated in double, so the result is exact up to one rounding. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "opgrad/custom_op.h"

#define EXPORT __attribute__((visibility("default")))

typedef enum { F32, F16, BF16, F64, UNSUPPORTED } kind;

static kind kind_of(const char *dtype) {
    if (opgrad_aot_dtype_is(dtype, "float32")) return F32;
    if (opgrad_aot_dtype_is(dtype, "float16")) return F16;
    if (opgrad_aot_dtype_is(dtype, "bfloat16")) return BF16;
    if (opgrad_aot_dtype_is(dtype, "float64")) return F64;
    return UNSUPPORTED;
}

static float bits_to_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t float_to_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static double half_to_double(uint16_t h) {
    int e = h >> 10 & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return h >> 15 ? -v : v;
}

// Round to nearest even, through float (exact: every half is a float, and rounding a double to
// float first then to half could double-round, so round the double directly).
static uint16_t double_to_half(double v) {
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    double a = fabs(v);
    if (isnan(v)) return 0x7e00;
    if (a >= 65520.0) return sign | 0x7c00; // rounds to infinity
    int e;
    frexp(a, &e);                           // a = f * 2^e, f in [0.5, 1)
    int shift = e - 1 < -14 ? -24 : e - 11; // spacing of halfs at a: 2^shift
    double q = nearbyint(ldexp(a, -shift)); // round to nearest even in the current mode
    double r = ldexp(q, shift);
    if (r >= 65520.0) return sign | 0x7c00;
    if (r < 0x1p-14) return sign | (uint16_t)ldexp(r, 24); // subnormal (or zero)
    int re;
    frexp(r, &re);
    return sign | (uint16_t)((re - 1 + 15) << 10) | (uint16_t)(ldexp(r, 11 - re) - 1024);
}

static double load(const void *p, int64_t i, kind k) {
    switch (k) {
    case F32:
        return ((const float *)p)[i];
    case F16:
        return half_to_double(((const uint16_t *)p)[i]);
    case BF16:
        return bits_to_float((uint32_t)((const uint16_t *)p)[i] << 16);
    default:
        return ((const double *)p)[i];
    }
}

static void store(void *p, int64_t i, kind k, double v) {
    switch (k) {
    case F32:
        ((float *)p)[i] = (float)v;
        break;
    case F16:
        ((uint16_t *)p)[i] = double_to_half(v);
        break;
    case BF16: {
        uint32_t u = float_to_bits((float)v); // bf16 from float: round to nearest even
        if ((u & 0x7fffffff) > 0x7f800000)
            ((uint16_t *)p)[i] = (uint16_t)(u >> 16 | 0x40);
        else
            ((uint16_t *)p)[i] = (uint16_t)((u + 0x7fff + (u >> 16 & 1)) >> 16);
        break;
    }
    default:
        ((double *)p)[i] = v;
        break;
    }
}

// Shapes as documented: x [N, C] (or any rank: rows = all but the last dim), bias [C], scale [1].
static int shapes_ok(const int *ndims, int64_t **shapes, int64_t *rows, int64_t *cols) {
    int nd = ndims[0];
    if (nd < 1 || ndims[1] != 1 || shapes[1][0] != shapes[0][nd - 1]) return 0;
    if (opgrad_aot_numel(ndims[2], shapes[2]) != 1) return 0;
    *cols = shapes[0][nd - 1];
    *rows = *cols ? opgrad_aot_numel(nd, shapes[0]) / *cols : 0;
    return 1;
}

EXPORT int FusedAddScale(int nparam, void **params, int *ndims, int64_t **shapes,
                         const char **dtypes, void *stream, void *extra) {
    (void)stream, (void)extra;
    if (nparam != 4) return 1;
    int64_t rows, cols;
    if (!shapes_ok(ndims, shapes, &rows, &cols)) return 2;
    kind kx = kind_of(dtypes[0]), kb = kind_of(dtypes[1]), ks = kind_of(dtypes[2]),
         ky = kind_of(dtypes[3]);
    if (kx == UNSUPPORTED || kb == UNSUPPORTED || ks == UNSUPPORTED || ky == UNSUPPORTED) return 3;
    double scale = load(params[2], 0, ks);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            int64_t i = r * cols + c;
            store(params[3], i, ky, (load(params[0], i, kx) + load(params[1], c, kb)) * scale);
        }
    return 0;
}

EXPORT int FusedAddScaleGrad(int nparam, void **params, int *ndims, int64_t **shapes,
                             const char **dtypes, void *stream, void *extra) {
    (void)stream, (void)extra;
    if (nparam != 8) return 1; // x, bias, scale, y, dy, dx, dbias, dscale
    int64_t rows, cols;
    if (!shapes_ok(ndims, shapes, &rows, &cols)) return 2;
    kind k[8];
    for (int i = 0; i < 8; i++)
        if ((k[i] = kind_of(dtypes[i])) == UNSUPPORTED) return 3;
    double scale = load(params[2], 0, k[2]), dscale = 0;
    for (int64_t c = 0; c < cols; c++) {
        double bias = load(params[1], c, k[1]), dbias = 0;
        for (int64_t r = 0; r < rows; r++) {
            int64_t i = r * cols + c;
            double dy = load(params[4], i, k[4]);
            store(params[5], i, k[5], dy * scale);
            dbias += dy;
            dscale += dy * (load(params[0], i, k[0]) + bias);
        }
        store(params[6], c, k[6], dbias * scale);
    }
    store(params[7], 0, k[7], dscale);
    return 0;
}
