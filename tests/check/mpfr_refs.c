/* O3: the float64 references of the transcendental operators, spot-checked against MPFR at 256
 * bits, and the fp32 kernels measured against the same MPFR values (max ulp per function).
 * mish and tanh(softplus) must be within 8 ulps. mish' = t + x sig(x) (1 - t^2) cancels around
 * its zero (x ~ -1.1924), where any evaluation's error grows by M / |mish'| with
 * M = |t| + |x sig(x) (1 - t^2)|: there it is judged against M (error <= c 2^-p M), and ulps are
 * reported (and bounded) where the sum is well conditioned (M <= 4 |mish'|). */
#include <math.h>
#include <mpfr.h>
#include <string.h>

#include "check/reference.h"
#include "ops/activation/mish/mish_kernel.h"
#include "test.h"
#include "testutil.h"

enum { PREC = 256 };

typedef struct mp_mish {
    double y, t, dy, mag; // mish, tanh(softplus), mish', |t| + |x sig (1 - t^2)|
} mp_mish;

static mp_mish mp_eval(double xd) {
    mpfr_t x, e, sp, t, sig, one, tmp, y, dy, corr;
    mpfr_inits2(PREC, x, e, sp, t, sig, one, tmp, y, dy, corr, (mpfr_ptr)0);
    mpfr_set_d(x, xd, MPFR_RNDN);
    mpfr_set_ui(one, 1, MPFR_RNDN);
    mpfr_exp(e, x, MPFR_RNDN);
    mpfr_log1p(sp, e, MPFR_RNDN); // softplus
    mpfr_tanh(t, sp, MPFR_RNDN);
    mpfr_mul(y, x, t, MPFR_RNDN);
    mpfr_add(tmp, one, e, MPFR_RNDN); // sigmoid = e / (1 + e)
    mpfr_div(sig, e, tmp, MPFR_RNDN);
    mpfr_sqr(tmp, t, MPFR_RNDN);
    mpfr_sub(tmp, one, tmp, MPFR_RNDN); // 1 - t^2
    mpfr_mul(corr, x, sig, MPFR_RNDN);
    mpfr_mul(corr, corr, tmp, MPFR_RNDN);
    mpfr_add(dy, t, corr, MPFR_RNDN);
    mp_mish r = {mpfr_get_d(y, MPFR_RNDN), mpfr_get_d(t, MPFR_RNDN), mpfr_get_d(dy, MPFR_RNDN),
                 fabs(mpfr_get_d(t, MPFR_RNDN)) + fabs(mpfr_get_d(corr, MPFR_RNDN))};
    mpfr_clears(x, e, sp, t, sig, one, tmp, y, dy, corr, (mpfr_ptr)0);
    return r;
}

static double ulps64(double got, double want) {
    if (got == want) return 0;
    int e;
    frexp(want, &e);
    return fabs(got - want) / ldexp(1.0, (want == 0 || e - 1 < -1022 ? -1022 : e - 1) - 52);
}

#define NPTS 20000

static double xs[NPTS];

static void make_points(void) {
    test_rng r;
    test_rng_seed(&r, 2024);
    for (int i = 0; i < NPTS; i++) {
        if (i < NPTS / 2)
            xs[i] = -30.0 + 60.0 * i / (NPTS / 2); // grid over [-30, 30]
        else if (i < NPTS * 3 / 4)
            xs[i] = test_rng_uniform(&r, -1.3, -1.1); // around the root
        else
            xs[i] = test_rng_uniform(&r, -100, 100);
    }
}

static void test_references_match_mpfr(void) {
    double worst_y = 0, worst_t = 0, worst_dy = 0, worst_dy_mag = 0;
    for (int i = 0; i < NPTS; i++) {
        double x = xs[i];
        mp_mish m = mp_eval(x);
        double uy = ulps64(og_ref_mish(x), m.y), ut = ulps64(og_ref_mish_tanhx(x), m.t);
        double dy = og_ref_mish_grad(x), udy = ulps64(dy, m.dy);
        double mag_err = fabs(dy - m.dy) / (m.mag * 0x1p-52);
        worst_y = fmax(worst_y, uy);
        worst_t = fmax(worst_t, ut);
        bool conditioned = m.mag <= 4 * fabs(m.dy);
        if (conditioned) worst_dy = fmax(worst_dy, udy);
        worst_dy_mag = fmax(worst_dy_mag, mag_err);
        CHECKF(uy <= 8, "mish(%.17g): %.3g ulps from MPFR", x, uy);
        CHECKF(ut <= 8, "tanh(softplus(%.17g)): %.3g ulps from MPFR", x, ut);
        // a few libm calls of <= 1 ulp each, amplified up to 4x where M <= 4 |mish'|
        CHECKF(!conditioned || udy <= 16, "mish'(%.17g): %.3g ulps from MPFR", x, udy);
        CHECKF(mag_err <= 8, "mish'(%.17g): error %.3g x 2^-52 of the term magnitude", x, mag_err);
    }
    printf("  float64 references vs MPFR-256 (%d points): mish %.2f ulp, tanh(softplus) %.2f ulp, "
           "mish' %.2f ulp where M <= 4|mish'| (everywhere: <= %.2f x 2^-52 M)\n",
           NPTS, worst_y, worst_t, worst_dy, worst_dy_mag);
}

// The fp32 kernels (every ISA is bitwise identical; the scalar build is measured) against MPFR.
static void test_fp32_kernels_against_mpfr(void) {
    static float x[NPTS], g[NPTS], y[NPTS], t[NPTS], d[NPTS];
    for (int i = 0; i < NPTS; i++) x[i] = (float)xs[i], g[i] = 1.0f;
    const float *in1[1] = {x}, *in2[2] = {g, x};
    float *out_yt[2] = {y, t}, *out_d[1] = {d};
    og_mish_fwd_tanhx__scalar(NPTS, in1, out_yt, NULL);
    og_mish_bwd__scalar(NPTS, in2, out_d, NULL);
    double wy = 0, wt = 0, wd = 0, wm = 0;
    for (int i = 0; i < NPTS; i++) {
        mp_mish m = mp_eval(x[i]);
        wy = fmax(wy, test_ulp_error(ACL_FLOAT, y[i], m.y));
        wt = fmax(wt, test_ulp_error(ACL_FLOAT, t[i], m.t));
        if (m.mag <= 4 * fabs(m.dy)) wd = fmax(wd, test_ulp_error(ACL_FLOAT, d[i], m.dy));
        // plus the spacing of fp32 subnormals: a subnormal result cannot be closer than that
        wm = fmax(wm, fabs(d[i] - m.dy) / (m.mag * 0x1p-24 + 0x1p-149));
    }
    printf("  fp32 kernels vs MPFR-256: mish %.2f ulp, tanhx %.2f ulp, mish' %.2f ulp where "
           "M <= 4|mish'| (everywhere: <= %.2f x (2^-24 M + 2^-149))\n",
           wy, wt, wd, wm);
    CHECK(wy <= 4);
    CHECK(wt <= 4);
    CHECK(wd <= 4);
    CHECK(wm <= 4);
}

// The float64 kernels (OG_EW_KERNEL64; every ISA build bitwise equal to the scalar one) against
// MPFR, with the bounds of the references above: mish and tanhx within 8 ulps, mish' within 16
// ulps where M <= 4 |mish'| and 8 x 2^-52 M everywhere; the backward from the caller's t within
// 16 x 2^-52 M.
static void test_f64_kernels_against_mpfr(void) {
    static double g[NPTS], y[NPTS], t[NPTS], d[NPTS], dt[NPTS], v[NPTS];
    for (int i = 0; i < NPTS; i++) g[i] = 1.0;
    const double *in1[1] = {xs}, *in2[2] = {g, xs}, *in3[3] = {g, xs, t};
    double *out_yt[2] = {y, t}, *out_d[1] = {d}, *out_dt[1] = {dt}, *out_v[1] = {v};
    og_mish_fwd_tanhx_f64__scalar(NPTS, in1, out_yt, NULL);
    og_mish_bwd_f64__scalar(NPTS, in2, out_d, NULL);
    og_mish_bwd_tanhx_f64__scalar(NPTS, in3, out_dt, NULL);
    if (test_isa_available(OPGRAD_ISA_AVX512)) {
        og_mish_bwd_f64__avx512(NPTS, in2, out_v, NULL);
        CHECK(!memcmp(v, d, sizeof v));
    }
    double wy = 0, wt = 0, wd = 0, wm = 0, wdt = 0;
    for (int i = 0; i < NPTS; i++) {
        mp_mish m = mp_eval(xs[i]);
        wy = fmax(wy, ulps64(y[i], m.y));
        wt = fmax(wt, ulps64(t[i], m.t));
        if (m.mag <= 4 * fabs(m.dy)) wd = fmax(wd, ulps64(d[i], m.dy));
        wm = fmax(wm, fabs(d[i] - m.dy) / (m.mag * 0x1p-52 + 0x1p-1074));
        wdt = fmax(wdt, fabs(dt[i] - m.dy) / (m.mag * 0x1p-52 + 0x1p-1074));
    }
    printf("  float64 kernels vs MPFR-256: mish %.2f ulp, tanhx %.2f ulp, mish' %.2f ulp where "
           "M <= 4|mish'| (everywhere: <= %.2f x 2^-52 M; from the caller's t: %.2f)\n",
           wy, wt, wd, wm, wdt);
    CHECK(wy <= 8);
    CHECK(wt <= 8);
    CHECK(wd <= 16);
    CHECK(wm <= 8);
    // (t carries its own ~3 ulps, which reach mish' through 1 - t^2 times 2 |x sig t|)
    CHECK(wdt <= 16);
}

int main(void) {
    make_points();
    RUN(test_references_match_mpfr);
    RUN(test_fp32_kernels_against_mpfr);
    RUN(test_f64_kernels_against_mpfr);
    return test_summary();
}
