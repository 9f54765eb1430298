/* BatchNorm / GroupNorm per-element kernels, written once against vec.h and compiled per ISA
 * (see batch_norm_kernel.h). The scalar build uses fmaf, so every build rounds the same. */
#include "engine/simd/map64.h"
#include "engine/simd/vec.h"
#include "ops/batch_norm/batch_norm_kernel.h"

void OG_FN(og_bn_sqdev)(size_t n, const float *const *in, float *const *out, const void *p) {
    (void)p;
    OG_EW_LOOP(n, 2, in, 1, out, {
        vf d = vsub(vload(ins[0]), vload(ins[1]));
        vstore(outs[0], vmul(d, d));
    });
}

void OG_FN(og_bn_dymul)(size_t n, const float *const *in, float *const *out, const void *p) {
    (void)p;
    OG_EW_LOOP(n, 3, in, 1, out,
               { vstore(outs[0], vmul(vload(ins[0]), vsub(vload(ins[1]), vload(ins[2])))); });
}

void OG_FN(og_bn_norm)(size_t n, const float *const *in, float *const *out, const void *p) {
    (void)p;
    OG_EW_LOOP(n, 4, in, 1, out, {
        vf d = vsub(vload(ins[0]), vload(ins[1]));
        vstore(outs[0], vfma(d, vload(ins[2]), vload(ins[3])));
    });
}

void OG_FN(og_bn_norm_nob)(size_t n, const float *const *in, float *const *out, const void *p) {
    (void)p;
    OG_EW_LOOP(n, 3, in, 1, out,
               { vstore(outs[0], vmul(vsub(vload(ins[0]), vload(ins[1])), vload(ins[2]))); });
}

// Six inputs: more than OG_EW_LOOP takes, so the loop is written out; the tail is the same
// arithmetic one element at a time (fmaf rounds as the vector fma does).
void OG_FN(og_bn_dx)(size_t n, const float *const *in, float *const *out, const void *p) {
    (void)p;
    const float *dy = in[0], *x = in[1], *m = in[2], *a = in[3], *b = in[4], *c = in[5];
    float *dx = out[0];
    size_t i = 0;
    for (; i + VLEN <= n; i += VLEN) {
        vf inner = vfma(vload(b + i), vsub(vload(x + i), vload(m + i)), vload(c + i));
        vstore(dx + i, vfma(vload(a + i), vload(dy + i), inner));
    }
    for (; i < n; i++) dx[i] = fmaf(a[i], dy[i], fmaf(b[i], x[i] - m[i], c[i]));
}

// float64 twins: the same operations in double, fma where the fp32 kernels fuse (one rounding
// each, the same bits on every ISA: fma is correctly rounded wherever the compiler emits it).
OG_EW_KERNEL64(og_bn_sqdev, void, {
    double d = X64(0) - X64(1);
    Y64(0) = d * d;
})
OG_EW_KERNEL64(og_bn_dymul, void, { Y64(0) = X64(0) * (X64(1) - X64(2)); })
OG_EW_KERNEL64(og_bn_norm, void, { Y64(0) = fma(X64(0) - X64(1), X64(2), X64(3)); })
OG_EW_KERNEL64(og_bn_norm_nob, void, { Y64(0) = (X64(0) - X64(1)) * X64(2); })
OG_EW_KERNEL64(og_bn_dx, void,
               { Y64(0) = fma(X64(3), X64(0), fma(X64(4), X64(1) - X64(2), X64(5))); })
