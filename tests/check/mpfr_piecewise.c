/* O3 for the piecewise family's transcendental part (ELU: expm1 forward, exp backward): the
 * float64 references of check/ref_piecewise.h against MPFR at 256 bits, and the fp32 kernels
 * (scalar build; every ISA is bitwise identical) against the same MPFR values, in ulps.
 * The references are a libm expm1/exp and two or three multiplications: within 4 ulps of double.
 * The kernels evaluate the x <= 0 pieces in float with float-float pairs (double only for rare
 * lanes, see elu_kernel_simd.c): one final rounding of a value within ~2^-26 relative, so
 * <= 0.75 ulp (the registry's bound is 1 ulp; measured: 0.61). Points: grids over
 * [-30, 0] and [-1e-3, 0], log-uniform |x| in [2^-40, 2^6], the subnormal-result range
 * [-104, -87] of the backward, for the attribute sets of the checker's ELU entries. */
#include <math.h>
#include <mpfr.h>

#include "check/ref_piecewise.h"
#include "ops/activation/elu/elu_kernel.h"
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

int main(void) {
    make_points();
    RUN(test_references_match_mpfr);
    RUN(test_fp32_kernels_against_mpfr);
    return test_summary();
}
