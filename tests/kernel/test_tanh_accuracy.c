/* Exhaustive accuracy of the fp32 tanh forward (og_vtanh in vmath.h, og_tanh_fwd__isa), which
 * is nearly correctly rounded:
 *
 *  - every float x in [2^-12, 9.02] (below, tanh x rounds to x; above, to 1), through the
 *    fastest ISA this CPU has, against the float64 reference (libm tanh, within 2^-52 of the
 *    exact value; tests/check/mpfr_activation.c audits it and the kernel against MPFR): max
 *    error <= TANH_MAX_ULP, mean <= TANH_MEAN_ULP, and at most TANH_MISROUNDED of the results
 *    differ from the correctly rounded value (the exact value is then within 0.005 ulp of a
 *    midpoint);
 *  - x below 2^-12 (every 61st float, and the subnormals) gives x itself, -0 included; x from
 *    9.02 to FLT_MAX (every 61st float) and +-inf give +-1;
 *  - odd symmetry, bit for bit: tanh(-x) = -tanh(x) for every x above;
 *  - every ISA gives the same bits as the fastest one, over a stride of all 2^32 patterns (NaN
 *    patterns included: NaN comes back unchanged).
 * OPGRAD_TEST_QUICK=1 takes every 16th float in the main range and a coarser ISA stride (the
 * bounds never change). The achieved figures are printed. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/ref_activation.h"
#include "opgrad/opgrad.h"
#include "ops/activation/tanh/tanh_kernel.h"
#include "test.h"
#include "testutil.h"

#define TANH_MAX_ULP 0.505   // achieved: 0.5039 (at x = 0x1.61ba54p-3)
#define TANH_MEAN_ULP 0.2505 // achieved: 0.2499 (the ideal is 0.25)
#define TANH_MISROUNDED 1e-4 // achieved: 6.3e-5 of the floats in [2^-12, 9.02]

enum { CH = 1 << 16 };

static void run_tanh(int isa, size_t n, const float *x, float *y) {
    const float *in[1] = {x};
    float *out[1] = {y};
    og_tanh_fwd_kernels[isa](n, in, out, NULL);
}

typedef struct stats {
    double max_ulp, sum_ulp, worst_x;
    long n, misrounded, sym_bad, other_bad;
} stats;

// Runs the fastest ISA over the floats [lo, hi] (positive bit patterns, every stride-th) and over
// their negatives. mode 0: judged against the reference; 1: y must be x; 2: y must be 1.
static void sweep(uint32_t lo, uint32_t hi, uint32_t stride, int mode, stats *s) {
    static float x[CH], nx[CH], y[CH], ny[CH];
    int isa = test_best_isa();
    uint64_t u = lo;
    while (u <= hi) {
        size_t m = 0;
        for (; m < CH && u <= hi; m++, u += stride) x[m] = test_u2f((uint32_t)u), nx[m] = -x[m];
        run_tanh(isa, m, x, y);
        run_tanh(isa, m, nx, ny);
        for (size_t i = 0; i < m; i++) {
            if (test_f2u(ny[i]) != (test_f2u(y[i]) ^ 0x80000000u) && s->sym_bad++ < 3)
                fprintf(stderr, "    tanh(%a) = %a but tanh(%a) = %a\n", x[i], y[i], nx[i], ny[i]);
            if (mode == 1 || mode == 2) {
                float want = mode == 1 ? x[i] : 1.0f;
                if (test_f2u(y[i]) != test_f2u(want) && s->other_bad++ < 3)
                    fprintf(stderr, "    tanh(%a) = %a, want %a\n", x[i], y[i], want);
                continue;
            }
            double r = og_ref_act_tanh(x[i]);
            double e = fabs(y[i] - r) / test_ulp32(r);
            s->n++;
            s->sum_ulp += e;
            if (e > s->max_ulp) s->max_ulp = e, s->worst_x = x[i];
            if (y[i] != (float)r) s->misrounded++;
        }
    }
}

static void test_tanh_exhaustive_fp32(void) {
    bool quick = test_quick_mode();
    const uint32_t lo = test_f2u(0x1p-12f), hi = test_f2u(9.02f);
    stats s = {0};
    sweep(lo, hi, quick ? 16 : 1, 0, &s);
    double mean = s.sum_ulp / (double)s.n, mis = (double)s.misrounded / (double)s.n;
    printf("  tanh fp32, %ld floats in [2^-12, 9.02]%s (%s): max %.4f ulp at %a, mean %.4f, "
           "%.2e not correctly rounded\n",
           s.n, quick ? " (every 16th)" : "", opgrad_isa_name((opgrad_isa)test_best_isa()),
           s.max_ulp, s.worst_x, mean, mis);
    CHECKF(s.max_ulp <= TANH_MAX_ULP, "max %.4f ulp at %a, above %.3f", s.max_ulp, s.worst_x,
           TANH_MAX_ULP);
    CHECKF(mean <= TANH_MEAN_ULP, "mean %.5f ulp, above %.4f", mean, TANH_MEAN_ULP);
    CHECKF(mis <= TANH_MISROUNDED, "%.2e of the results not correctly rounded, above %.0e", mis,
           TANH_MISROUNDED);
    CHECKF(s.sym_bad == 0, "%ld results break tanh(-x) = -tanh(x)", s.sym_bad);
}

// Below 2^-12 tanh x rounds to x (x - x^3/3 is within 2^-25.6 relative of x); from 9.02 (in
// fact 9.0109) it rounds to 1.
static void test_tanh_identity_and_saturation(void) {
    stats s = {0};
    sweep(0, test_f2u(0x1p-12f) - 1, 61, 1, &s);
    sweep(0, 0x00800000u, 1, 1, &s); // every subnormal, +0 and FLT_MIN
    sweep(test_f2u(9.02f), test_f2u(FLT_MAX), 61, 2, &s);
    static const float edge[] = {INFINITY, FLT_MAX, 9.02f, 20.0f, 88.8f, 1e30f};
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++)
        sweep(test_f2u(edge[i]), test_f2u(edge[i]), 1, 2, &s);
    CHECKF(s.other_bad == 0, "%ld results are not x (|x| < 2^-12) or +-1 (|x| >= 9.02)",
           s.other_bad);
    CHECKF(s.sym_bad == 0, "%ld results break tanh(-x) = -tanh(x)", s.sym_bad);
    // where the result leaves 1: the last floats below 1 must come out correctly rounded
    stats t = {0};
    sweep(test_f2u(8.0f), test_f2u(9.02f), 1, 0, &t);
    CHECKF(t.max_ulp <= TANH_MAX_ULP, "[8, 9.02]: max %.4f ulp at %a", t.max_ulp, t.worst_x);
}

// Every ISA gives the fastest one's bits, over a stride of all bit patterns (NaNs included).
static void test_tanh_isas_identical(void) {
    static float x[CH], ref[CH], y[CH];
    uint64_t stride = test_quick_mode() ? 65537 : 1021;
    int best = test_best_isa();
    long diff = 0, nan_bad = 0, n = 0;
    uint64_t u = 0;
    while (u < ((uint64_t)1 << 32)) {
        size_t m = 0;
        for (; m < CH && u < ((uint64_t)1 << 32); m++, u += stride) x[m] = test_u2f((uint32_t)u);
        run_tanh(best, m, x, ref);
        for (size_t i = 0; i < m; i++)
            if (isnan(x[i]) && test_f2u(ref[i]) != test_f2u(x[i]) && nan_bad++ < 3)
                fprintf(stderr, "    tanh(NaN %08x) = %08x\n", test_f2u(x[i]), test_f2u(ref[i]));
        for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
            if (isa == best || !test_isa_available(isa)) continue;
            run_tanh(isa, m, x, y);
            for (size_t i = 0; i < m; i++)
                if (test_f2u(y[i]) != test_f2u(ref[i]) && diff++ < 3)
                    fprintf(stderr, "    %s tanh(%a) = %a, %s gives %a\n",
                            opgrad_isa_name((opgrad_isa)isa), x[i], y[i],
                            opgrad_isa_name((opgrad_isa)best), ref[i]);
        }
        n += (long)m;
    }
    printf("  %ld bit patterns (every %llu-th), every ISA against %s\n", n,
           (unsigned long long)stride, opgrad_isa_name((opgrad_isa)best));
    CHECKF(diff == 0, "%ld results differ between ISAs", diff);
    CHECKF(nan_bad == 0, "%ld NaNs not returned unchanged", nan_bad);
}

int main(void) {
    RUN(test_tanh_exhaustive_fp32);
    RUN(test_tanh_identity_and_saturation);
    RUN(test_tanh_isas_identical);
    return test_summary();
}
