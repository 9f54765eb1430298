/* The machine probe's inner loops (engine/probe.h), compiled per ISA like every kernel. */
#include "engine/probe.h"

#include "engine/simd/vec.h"

// Twelve independent FMA chains: more than latency x throughput (4 x 2) on current cores, so
// the loop runs at the FMA units' issue rate. Returns the FLOPs done (2 per lane and FMA).
double OG_FN(og_probe_fma)(int64_t iters, float seed) {
    vf a[12], m = vset(0.999999f), c = vset(1e-7f);
    for (int k = 0; k < 12; k++) a[k] = vset(seed + (float)k);
    for (int64_t i = 0; i < iters; i++)
        for (int k = 0; k < 12; k++) a[k] = vfma(a[k], m, c);
    vf s = a[0];
    for (int k = 1; k < 12; k++) s = vadd(s, a[k]);
    float out[VLEN];
    vstore(out, s);
    volatile float sink = out[0]; // the chains must not be optimised away
    (void)sink;
    return 2.0 * 12 * VLEN * (double)iters;
}

// c = a + b over n floats (n a multiple of VLEN): two streams read, one written, normal stores.
void OG_FN(og_probe_triad)(float *c, const float *a, const float *b, int64_t n) {
    for (int64_t i = 0; i + VLEN <= n; i += VLEN) vstore(c + i, vadd(vload(a + i), vload(b + i)));
}
