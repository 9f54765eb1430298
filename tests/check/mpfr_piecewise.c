/* O3 for the piecewise family, against MPFR at 256 bits. ELU's transcendental part (expm1
 * forward, exp backward): the float64 references of check/ref_piecewise.h, and the fp32 kernels
 * (scalar build; every ISA is bitwise identical) against the same MPFR values, in ulps.
 * The references are a libm expm1/exp and two or three multiplications: within 4 ulps of double.
 * The kernels evaluate the x <= 0 pieces in float with float-float pairs (double only for rare
 * lanes, see elu_kernel_simd.c): one final rounding of a value within ~2^-26 relative, so
 * <= 0.75 ulp (the registry's bound is 1 ulp; measured: 0.61). Points: grids over
 * [-30, 0] and [-1e-3, 0], log-uniform |x| in [2^-40, 2^6], the subnormal-result range
 * [-104, -87] of the backward, for the attribute sets of the checker's ELU entries.
 * Hardswish and Hardsigmoid, forward and backward: the fp32 kernels correctly rounded (see
 * test_hard_kernels_against_mpfr). */
#include <math.h>
#include <mpfr.h>

#include "check/ref_piecewise.h"
#include "ops/activation/elu/elu_kernel.h"
#include "ops/activation/hardsigmoid/hardsigmoid_kernel.h"
#include "ops/activation/hardswish/hardswish_kernel.h"
#include "test.h"
#include "testutil.h"

enum { PREC = 256, NPTS = 40000 };

typedef struct attrs {
    float alpha, scale, input_scale;
} attrs;

static const attrs SETS[] = {
    {1.0f, 1.0f, 1.0f},
    {1.6732632423543772f, 1.0507009873554805f, 1.0f},
    {2.0f, 0.75f, 0.5f},
    {1.25f, 1.0f, 0.8f},
};
enum { NSETS = sizeof SETS / sizeof SETS[0] };

// elu(x) and elu'(x) (from the input) in MPFR, rounded to double.
static void mp_elu(double xd, attrs a, double *y, double *dy) {
    mpfr_t x, u, e, c;
    mpfr_inits2(PREC, x, u, e, c, (mpfr_ptr)0);
    mpfr_set_d(x, xd, MPFR_RNDN);
    if (xd > 0) {
        mpfr_mul_d(e, x, a.scale, MPFR_RNDN);
        *y = mpfr_get_d(e, MPFR_RNDN);
        *dy = a.scale;
    } else {
        mpfr_mul_d(u, x, a.input_scale, MPFR_RNDN); // exact at 256 bits
        mpfr_set_d(c, a.alpha, MPFR_RNDN);
        mpfr_mul_d(c, c, a.scale, MPFR_RNDN); // alpha scale
        mpfr_expm1(e, u, MPFR_RNDN);
        mpfr_mul(e, e, c, MPFR_RNDN);
        *y = mpfr_get_d(e, MPFR_RNDN);
        mpfr_exp(e, u, MPFR_RNDN);
        mpfr_mul(e, e, c, MPFR_RNDN);
        mpfr_mul_d(e, e, a.input_scale, MPFR_RNDN);
        *dy = mpfr_get_d(e, MPFR_RNDN);
    }
    mpfr_clears(x, u, e, c, (mpfr_ptr)0);
}

static double ulps64(double got, double want) {
    if (got == want) return 0;
    int e;
    frexp(want, &e);
    return fabs(got - want) / ldexp(1.0, (want == 0 || e - 1 < -1022 ? -1022 : e - 1) - 52);
}

static float xs[NPTS];

static void make_points(void) {
    test_rng r;
    test_rng_seed(&r, 7);
    for (int i = 0; i < NPTS; i++) {
        double x;
        switch (i % 4) {
        case 0:
            x = -30.0 * (i / 4) / (NPTS / 4);
            break;
        case 1:
            x = -1e-3 * test_rng_uniform(&r, 0, 1);
            break;
        case 2:
            x = -ldexp(test_rng_uniform(&r, 1, 2), -40 + (int)(test_rng_next(&r) % 46));
            break;
        default:
            x = test_rng_uniform(&r, -104, -87);
            break;
        }
        xs[i] = (float)x;
    }
}

static void test_references_match_mpfr(void) {
    double wy = 0, wd = 0;
    for (int s = 0; s < NSETS; s++)
        for (int i = 0; i < NPTS; i += 4) {
            double x = xs[i], y, dy;
            mp_elu(x, SETS[s], &y, &dy);
            double ry = og_ref_elu(x, SETS[s].alpha, SETS[s].scale, SETS[s].input_scale);
            double rd = og_ref_elu_grad(x, SETS[s].alpha, SETS[s].scale, SETS[s].input_scale);
            double uy = ulps64(ry, y), ud = ulps64(rd, dy);
            wy = fmax(wy, uy), wd = fmax(wd, ud);
            CHECKF(uy <= 4, "elu(%.17g) set %d: %.3g ulps from MPFR", x, s, uy);
            CHECKF(ud <= 4, "elu'(%.17g) set %d: %.3g ulps from MPFR", x, s, ud);
        }
    printf("  float64 references vs MPFR-256: elu %.2f ulp, elu' %.2f ulp\n", wy, wd);
}

static void test_fp32_kernels_against_mpfr(void) {
    static float g[NPTS], y[NPTS], d[NPTS];
    for (int i = 0; i < NPTS; i++) g[i] = 1.0f;
    double wy = 0, wd = 0;
    for (int s = 0; s < NSETS; s++) {
        og_elu_params p = og_elu_make_params(SETS[s].alpha, SETS[s].scale, SETS[s].input_scale);
        const float *in1[1] = {xs}, *in2[2] = {g, xs};
        float *o1[1] = {y}, *o2[1] = {d};
        og_elu_fwd__scalar(NPTS, in1, o1, &p);
        og_elu_bwd__scalar(NPTS, in2, o2, &p);
        for (int i = 0; i < NPTS; i++) {
            double my, md;
            mp_elu(xs[i], SETS[s], &my, &md);
            double uy = test_ulp_error(ACL_FLOAT, y[i], my),
                   ud = test_ulp_error(ACL_FLOAT, d[i], md);
            wy = fmax(wy, uy), wd = fmax(wd, ud);
            CHECKF(uy <= 0.75, "elu(%a) set %d = %a: %.6f ulp", xs[i], s, y[i], uy);
            CHECKF(ud <= 0.75, "elu'(%a) set %d = %a: %.6f ulp", xs[i], s, d[i], ud);
        }
    }
    printf(
        "  fp32 kernels vs MPFR-256 (%d points x %d attribute sets): elu %.6f ulp, elu' %.6f ulp\n",
        NPTS, NSETS, wy, wd);
}

/* ---- Hardswish and Hardsigmoid: rational middle pieces, evaluated in float pairs
 * (hardswish_kernel_simd.c, hardsigmoid_kernel_simd.c). Exact values from MPFR: x (x + 3) / 6,
 * g (2x + 3) / 6, (x + 3) / 6, g / 6, rounded once to double (the float rounding of that double
 * is the correctly rounded float except within 2^-29 ulp of a midpoint: the bounds below leave
 * 2^-20). Points: x over [-3.5, 3.5] by a grid, near the zero of the backward (-1.5) and the joins,
 * log-uniform |x| in [2^-40, 2]; |g| log-uniform in [2^-90, 2^90] and, for the backward's rare
 * lanes, in [2^-149, 2^-100], with +-0 and +-inf. */
enum { HPTS = 200000 };

static void hard_points(float *x, float *g) {
    test_rng r;
    test_rng_seed(&r, 11);
    for (int i = 0; i < HPTS; i++) {
        double sign = test_rng_next(&r) & 1 ? -1 : 1, v;
        switch (i % 5) {
        case 0:
            v = -3.5 + 7.0 * i / HPTS;
            break;
        case 1:
            v = -1.5 + test_rng_uniform(&r, -1e-3, 1e-3);
            break;
        case 2:
            v = sign * (3 + test_rng_uniform(&r, -1e-3, 1e-3));
            break;
        case 3:
            v = sign * ldexp(test_rng_uniform(&r, 1, 2), -40 + (int)(test_rng_next(&r) % 41));
            break;
        default:
            v = test_rng_uniform(&r, -3, 3);
            break;
        }
        x[i] = (float)v;
        int e = i % 64 == 63 ? -149 + (int)(test_rng_next(&r) % 50)
                             : -90 + (int)(test_rng_next(&r) % 181);
        g[i] = (float)(sign * ldexp(test_rng_uniform(&r, 1, 2), e));
        if (i % 97 == 0) g[i] = (float)(sign * (i % 194 == 0 ? 0.0 : INFINITY));
    }
}

// a (b x + c) / 6 (MPFR's infinities and signed zeros: inf * 0 is NaN): (x + 3) / 6 is a = 1,
// b = 1, c = 3; x (x + 3) / 6 is a = x; g (2x + 3) / 6 is a = g, b = 2; g / 6 is b = 0, c = 1.
static double mp_hard(double a, double b, double x, double c) {
    mpfr_t t;
    mpfr_init2(t, PREC);
    mpfr_set_d(t, x, MPFR_RNDN);
    mpfr_mul_d(t, t, b, MPFR_RNDN);
    mpfr_add_d(t, t, c, MPFR_RNDN);
    mpfr_mul_d(t, t, a, MPFR_RNDN);
    mpfr_div_ui(t, t, 6, MPFR_RNDN);
    double v = mpfr_get_d(t, MPFR_RNDN);
    mpfr_clear(t);
    return v;
}

static void test_hard_kernels_against_mpfr(void) {
    static float x[HPTS], g[HPTS], y[4][HPTS];
    hard_points(x, g);
    const float *in1[1] = {x}, *in2[2] = {g, x};
    float *o[4] = {y[0], y[1], y[2], y[3]};
    og_hardswish_fwd__scalar(HPTS, in1, &o[0], NULL);
    og_hardswish_bwd__scalar(HPTS, in2, &o[1], NULL);
    og_hardsigmoid_fwd__scalar(HPTS, in1, &o[2], NULL);
    og_hardsigmoid_bwd__scalar(HPTS, in2, &o[3], NULL);
    static const char *const names[4] = {"hardswish", "hardswish'", "hardsigmoid", "hardsigmoid'"};
    const double cr = 0.5 + 0x1p-20; // correctly rounded
    double worst[4] = {0}, worst_tiny = 0;
    int misrounded[4] = {0};
    for (int i = 0; i < HPTS; i++) {
        double xv = x[i], gv = g[i], want[4];
        bool mid_open = xv > -3 && xv < 3;
        want[0] = xv > 3 ? xv : xv < -3 ? -0.0 : mp_hard(xv, 1, xv, 3);
        want[1] = xv > 3 ? gv : xv < -3 ? 0.0 : mp_hard(gv, 2, xv, 3);
        want[2] = xv > 3 ? 1.0 : xv < -3 ? 0.0 : mp_hard(1, 1, xv, 3);
        want[3] = mid_open ? mp_hard(gv, 0, 0, 1) : 0.0;
        for (int k = 0; k < 4; k++) {
            double u = test_ulp_error(ACL_FLOAT, y[k][i], want[k]);
            // the backward's float pair loses its tail below 2^-100 (the double form covers
            // |g| < 2^-100 only): one ulp there
            bool tiny = k == 1 && fabs(want[k]) < 0x1p-100;
            if (tiny)
                worst_tiny = fmax(worst_tiny, u);
            else
                worst[k] = fmax(worst[k], u);
            misrounded[k] += u > 0.5 + 0x1p-29;
            CHECKF(u <= (tiny ? 1.0 : cr), "%s(g %a, x %a) = %a: %.6f ulp from %a", names[k], g[i],
                   x[i], y[k][i], u, want[k]);
        }
    }
    printf("  fp32 kernels vs MPFR-256 (%d points): hardswish %.6f, hardswish' %.6f (%.6f below "
           "2^-100), hardsigmoid %.6f, hardsigmoid' %.6f ulp; beyond half an ulp: %d, %d, %d, %d\n",
           HPTS, worst[0], worst[1], worst_tiny, worst[2], worst[3], misrounded[0], misrounded[1],
           misrounded[2], misrounded[3]);
}

int main(void) {
    make_points();
    RUN(test_references_match_mpfr);
    RUN(test_fp32_kernels_against_mpfr);
    RUN(test_hard_kernels_against_mpfr);
    return test_summary();
}
