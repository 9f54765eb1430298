/* O3 for the sigmoid family: the float64 references (src/check/ref_activation.c) and the fp32
 * kernels (scalar build; every ISA is bitwise identical, see tests/kernel) against MPFR at 256
 * bits: sigmoid, tanh, silu, gelu (tanh approximation and erf form), softplus (three beta /
 * threshold pairs) and their derivatives.
 *
 *  - references: |ref - mpfr| <= 2^-40 M everywhere (M = the magnitude of the terms of a
 *    cancelling sum, |f| elsewhere): 2^16 times finer than the fp32 resolution they judge. The
 *    max in ulps of double (where M <= 2 |f|) is printed; up to about a thousand double ulps
 *    are expected where an exponent is large (exp and erfc amplify the rounding of their
 *    argument: erfc(z) by 2 z^2, 170 at x = -13), still 2^-42 relative;
 *  - fp32 kernels at float inputs, gradOutput 1, -0.75 and 3.5 for the derivatives: max ulp
 *    where M <= 2 |f| (well conditioned) and max |err| / (2^-24 M + 2^-149) everywhere, printed
 *    as a table; both must stay within the operator's fp32_ulps of the checker registry;
 *  - float64 kernels (the elementwise engine's double path) at the same points, every ISA build
 *    bitwise equal to the scalar one: |err| <= 2^-40 M
 *    as the references (both evaluate the same kind of libm formula in double, so an exponent's
 *    argument rounding is amplified alike), and the max in double ulps where M <= 2 |f| printed;
 *  - tanh, nearly correctly rounded: within 0.505 ulp of MPFR, and the correctly rounded float
 *    at all but 1e-4 of uniform points in [-10, 10] (plus dense windows where it is hardest).
 * Points: a grid over [-30, 30], uniform random over [-120, 60], windows around the roots of the
 * derivatives (gelu' at -0.7518, silu' at -1.2785), the tanh switch at 0.625, the softplus
 * thresholds, and the subnormal tails. */
#include <float.h>
#include <math.h>
#include <mpfr.h>
#include <string.h>

#include "check/ref_activation.h"
#include "ops/activation/gelu/gelu_kernel.h"
#include "ops/activation/sigmoid/sigmoid_kernel.h"
#include "ops/activation/silu/silu_kernel.h"
#include "ops/activation/softplus/softplus_kernel.h"
#include "ops/activation/tanh/tanh_kernel.h"
#include "test.h"
#include "testutil.h"

enum { PREC = 256 };

enum {
    F_SIG,
    F_TANH,
    F_SILU,
    F_DSILU,
    F_GT,
    F_DGT,
    F_GE,
    F_DGE,
    F_SP1,
    F_DSP1,
    F_SP2,
    F_DSP2,
    F_SP3,
    F_DSP3,
    F_COUNT
};

typedef struct fn_info {
    const char *name;
    bool derivative;
    double beta, threshold; // softplus
    double bound;           // the registry's fp32_ulps for the operator
    const og_ew_compute_fn *kernels;
    const og_ew_compute64_fn *kernels64;
} fn_info;

static const fn_info FNS[F_COUNT] = {
    {"sigmoid", false, 0, 0, 3, og_sigmoid_fwd_kernels, og_sigmoid_fwd_kernels64},
    {"tanh", false, 0, 0, 2, og_tanh_fwd_kernels, og_tanh_fwd_kernels64},
    {"silu", false, 0, 0, 3.5, og_silu_fwd_kernels, og_silu_fwd_kernels64},
    {"silu'", true, 0, 0, 3.5, og_silu_bwd_kernels, og_silu_bwd_kernels64},
    {"gelu_tanh", false, 0, 0, 4, og_gelu_tanh_fwd_kernels, og_gelu_tanh_fwd_kernels64},
    {"gelu_tanh'", true, 0, 0, 4, og_gelu_tanh_bwd_kernels, og_gelu_tanh_bwd_kernels64},
    {"gelu_erf", false, 0, 0, 4, og_gelu_erf_fwd_kernels, og_gelu_erf_fwd_kernels64},
    {"gelu_erf'", true, 0, 0, 4, og_gelu_erf_bwd_kernels, og_gelu_erf_bwd_kernels64},
    {"softplus(1,20)", false, 1.0, 20.0, 3, og_softplus_fwd_kernels, og_softplus_fwd_kernels64},
    {"softplus'(1,20)", true, 1.0, 20.0, 3, og_softplus_bwd_kernels, og_softplus_bwd_kernels64},
    {"softplus(1.5,12)", false, 1.5, 12.0, 3, og_softplus_fwd_kernels, og_softplus_fwd_kernels64},
    {"softplus'(1.5,12)", true, 1.5, 12.0, 3, og_softplus_bwd_kernels, og_softplus_bwd_kernels64},
    {"softplus(0.7,5)", false, (double)0.7f, 5.0, 3, og_softplus_fwd_kernels,
     og_softplus_fwd_kernels64},
    {"softplus'(0.7,5)", true, (double)0.7f, 5.0, 3, og_softplus_bwd_kernels,
     og_softplus_bwd_kernels64},
};

// ---- MPFR evaluations: value and magnitude bound

typedef struct mp_val {
    double f, mag;
} mp_val;

static void mp_sigmoid(mpfr_t r, const mpfr_t x) { // 1 / (1 + e^-x)
    mpfr_t t;
    mpfr_init2(t, PREC);
    mpfr_neg(t, x, MPFR_RNDN);
    mpfr_exp(t, t, MPFR_RNDN);
    mpfr_add_ui(t, t, 1, MPFR_RNDN);
    mpfr_ui_div(r, 1, t, MPFR_RNDN);
    mpfr_clear(t);
}

static mp_val mp_eval(int f, double xd) {
    mpfr_t x, a, b, c, u, du;
    mpfr_inits2(PREC, x, a, b, c, u, du, (mpfr_ptr)0);
    mpfr_set_d(x, xd, MPFR_RNDN);
    mp_val v = {0, 0};
    double beta = FNS[f].beta, thr = FNS[f].threshold;
    switch (f) {
    case F_SIG:
        mp_sigmoid(a, x);
        v.f = mpfr_get_d(a, MPFR_RNDN);
        break;
    case F_TANH:
        mpfr_tanh(a, x, MPFR_RNDN);
        v.f = mpfr_get_d(a, MPFR_RNDN);
        break;
    case F_SILU:
        mp_sigmoid(a, x), mpfr_mul(a, a, x, MPFR_RNDN);
        v.f = mpfr_get_d(a, MPFR_RNDN);
        break;
    case F_DSILU: // s + x s (1 - s)
        mp_sigmoid(a, x);
        mpfr_ui_sub(b, 1, a, MPFR_RNDN);
        mpfr_mul(b, b, a, MPFR_RNDN);
        mpfr_mul(b, b, x, MPFR_RNDN);
        mpfr_add(c, a, b, MPFR_RNDN);
        v.f = mpfr_get_d(c, MPFR_RNDN);
        v.mag = mpfr_get_d(a, MPFR_RNDN) + fabs(mpfr_get_d(b, MPFR_RNDN));
        break;
    case F_GT:
    case F_DGT: { // u = sqrt(2/pi) (x + 0.044715 x^3)
        mpfr_t k;
        mpfr_init2(k, PREC);
        mpfr_const_pi(k, MPFR_RNDN);
        mpfr_ui_div(k, 2, k, MPFR_RNDN);
        mpfr_sqrt(k, k, MPFR_RNDN);
        mpfr_set_str(c, "0.044715", 10, MPFR_RNDN);
        mpfr_sqr(a, x, MPFR_RNDN);
        mpfr_mul(b, a, c, MPFR_RNDN); // c x^2
        mpfr_add_ui(b, b, 1, MPFR_RNDN);
        mpfr_mul(u, b, x, MPFR_RNDN);
        mpfr_mul(u, u, k, MPFR_RNDN); // u
        mpfr_mul_ui(b, c, 3, MPFR_RNDN);
        mpfr_mul(b, b, a, MPFR_RNDN);
        mpfr_add_ui(b, b, 1, MPFR_RNDN);
        mpfr_mul(du, b, k, MPFR_RNDN); // u'
        // (1 + tanh u) / 2 = sigmoid(2u) and sech^2 u = 1 / cosh^2 u: no cancellation, even at
        // 256 bits (1 + tanh(-745) is 2e-647)
        mpfr_mul_ui(a, u, 2, MPFR_RNDN);
        mp_sigmoid(b, a);
        if (f == F_GT) {
            mpfr_mul(b, b, x, MPFR_RNDN);
            v.f = mpfr_get_d(b, MPFR_RNDN);
        } else {
            mpfr_cosh(a, u, MPFR_RNDN);
            mpfr_sqr(a, a, MPFR_RNDN);
            mpfr_ui_div(a, 1, a, MPFR_RNDN); // sech^2
            mpfr_mul(a, a, x, MPFR_RNDN);
            mpfr_mul(a, a, du, MPFR_RNDN);
            mpfr_div_ui(a, a, 2, MPFR_RNDN);
            mpfr_add(c, a, b, MPFR_RNDN);
            v.f = mpfr_get_d(c, MPFR_RNDN);
            v.mag = mpfr_get_d(b, MPFR_RNDN) + fabs(mpfr_get_d(a, MPFR_RNDN));
        }
        mpfr_clear(k);
        break;
    }
    case F_GE:
    case F_DGE: // Phi(x) = erfc(-x / sqrt 2) / 2; phi(x) = e^(-x^2/2) / sqrt(2 pi)
        mpfr_sqrt_ui(a, 2, MPFR_RNDN);
        mpfr_div(a, x, a, MPFR_RNDN);
        mpfr_neg(a, a, MPFR_RNDN);
        mpfr_erfc(a, a, MPFR_RNDN);
        mpfr_div_ui(a, a, 2, MPFR_RNDN);
        if (f == F_GE) {
            mpfr_mul(a, a, x, MPFR_RNDN);
            v.f = mpfr_get_d(a, MPFR_RNDN);
        } else {
            mpfr_sqr(b, x, MPFR_RNDN);
            mpfr_div_ui(b, b, 2, MPFR_RNDN);
            mpfr_neg(b, b, MPFR_RNDN);
            mpfr_exp(b, b, MPFR_RNDN);
            mpfr_const_pi(c, MPFR_RNDN);
            mpfr_mul_ui(c, c, 2, MPFR_RNDN);
            mpfr_sqrt(c, c, MPFR_RNDN);
            mpfr_div(b, b, c, MPFR_RNDN);
            mpfr_mul(b, b, x, MPFR_RNDN); // x phi(x)
            mpfr_add(c, a, b, MPFR_RNDN);
            v.f = mpfr_get_d(c, MPFR_RNDN);
            v.mag = mpfr_get_d(a, MPFR_RNDN) + fabs(mpfr_get_d(b, MPFR_RNDN));
        }
        break;
    default: { // softplus: beta x > threshold ? x : log1p(e^(beta x)) / beta; derivative
        mpfr_mul_d(a, x, beta, MPFR_RNDN);
        bool above = mpfr_cmp_d(a, thr) > 0;
        if (!FNS[f].derivative) {
            if (above) {
                mpfr_set(b, x, MPFR_RNDN);
            } else {
                mpfr_exp(b, a, MPFR_RNDN);
                mpfr_log1p(b, b, MPFR_RNDN);
                mpfr_div_d(b, b, beta, MPFR_RNDN);
            }
        } else {
            if (above)
                mpfr_set_ui(b, 1, MPFR_RNDN);
            else
                mp_sigmoid(b, a);
        }
        v.f = mpfr_get_d(b, MPFR_RNDN);
        break;
    }
    }
    if (v.mag < fabs(v.f)) v.mag = fabs(v.f);
    mpfr_clears(x, a, b, c, u, du, (mpfr_ptr)0);
    return v;
}

// ---- the float64 references

static double ref_eval(int f, double x, double *mag) {
    double m = 0, r;
    switch (f) {
    case F_SIG:
        r = og_ref_act_sigmoid(x);
        break;
    case F_TANH:
        r = og_ref_act_tanh(x);
        break;
    case F_SILU:
        r = og_ref_silu(x);
        break;
    case F_DSILU:
        r = og_ref_silu_grad(x, &m);
        break;
    case F_GT:
        r = og_ref_gelu_tanh(x);
        break;
    case F_DGT:
        r = og_ref_gelu_tanh_grad(x, &m);
        break;
    case F_GE:
        r = og_ref_gelu_erf(x);
        break;
    case F_DGE:
        r = og_ref_gelu_erf_grad(x, &m);
        break;
    default:
        r = FNS[f].derivative ? og_ref_softplus_bt_grad(x, FNS[f].beta, FNS[f].threshold)
                              : og_ref_softplus_bt(x, FNS[f].beta, FNS[f].threshold);
        break;
    }
    *mag = m;
    return r;
}

static double ulps64(double got, double want) {
    if (got == want) return 0;
    int e;
    frexp(want, &e);
    return fabs(got - want) / ldexp(1.0, (want == 0 || e - 1 < -1022 ? -1022 : e - 1) - 52);
}

// ---- points

#define NPTS 16000
static float xs[NPTS];

static void make_points(void) {
    test_rng r;
    test_rng_seed(&r, 4242);
    static const double windows[][2] = {{-0.74, -0.765}, {-1.27, -1.29}, {0.62, 0.63},
                                        {7.9, 8.1},      {19.9, 20.1},   {6.9, 7.4}};
    static const double tails[][2] = {{-104, -86}, {-15, -9}, {-70, -55}};
    int n = 0;
    for (int i = 0; i < 5000; i++) xs[n++] = (float)(-30.0 + 60.0 * i / 5000);
    for (int i = 0; i < 4000; i++) xs[n++] = (float)test_rng_uniform(&r, -120, 60);
    for (int w = 0; w < 6; w++)
        for (int i = 0; i < 700; i++)
            xs[n++] = (float)test_rng_uniform(&r, windows[w][1], windows[w][0]);
    for (int t = 0; t < 3; t++)
        for (int i = 0; i < 700; i++)
            xs[n++] = (float)test_rng_uniform(&r, tails[t][0], tails[t][1]);
    while (n < NPTS) xs[n++] = (float)test_rng_uniform(&r, -2, 2);
}

static double g_ref_m[F_COUNT], g_ref_ulp[F_COUNT], g_k_ulp[F_COUNT], g_k_m[F_COUNT];
static mp_val g_mp[F_COUNT][NPTS]; // MPFR values at the points, computed once

static void test_references_match_mpfr(void) {
    for (int f = 0; f < F_COUNT; f++) {
        long bad = 0;
        for (int i = 0; i < NPTS; i++) {
            double x = xs[i], mag;
            mp_val m = g_mp[f][i] = mp_eval(f, x);
            double r = ref_eval(f, x, &mag);
            double merr = fabs(r - m.f) / (m.mag * 0x1p-52 + 0x1p-1074);
            g_ref_m[f] = fmax(g_ref_m[f], merr);
            if (m.mag <= 2 * fabs(m.f)) g_ref_ulp[f] = fmax(g_ref_ulp[f], ulps64(r, m.f));
            if (!(merr <= 0x1p12) && bad++ < 3) // 2^-40 M
                fprintf(stderr, "    %s(%.9g): ref %.17g, mpfr %.17g (%.3g x 2^-52 M)\n",
                        FNS[f].name, x, r, m.f, merr);
        }
        CHECKF(bad == 0, "%s: %ld references further than 2^-40 M from MPFR", FNS[f].name, bad);
    }
}

static void test_fp32_kernels_against_mpfr(void) {
    static float x[NPTS], g[NPTS], out[NPTS];
    static const float gs[] = {1.0f, -0.75f, 3.5f};
    memcpy(x, xs, sizeof x);
    for (int f = 0; f < F_COUNT; f++) {
        og_softplus_params p = {(float)FNS[f].beta, (float)FNS[f].threshold, FNS[f].beta,
                                FNS[f].threshold};
        int ng = FNS[f].derivative ? 3 : 1;
        long bad = 0;
        for (int gi = 0; gi < ng; gi++) {
            for (int i = 0; i < NPTS; i++) g[i] = gs[gi];
            const float *in1[1] = {x}, *in2[2] = {g, x};
            float *o[1] = {out};
            FNS[f].kernels[OPGRAD_ISA_SCALAR](NPTS, FNS[f].derivative ? in2 : in1, o, &p);
            for (int i = 0; i < NPTS; i++) {
                double want = gs[gi] * g_mp[f][i].f, mag = fabs((double)gs[gi]) * g_mp[f][i].mag;
                double err = fabs(out[i] - want), c = FNS[f].bound;
                double ratio = err / (0x1p-24 * mag + 0x1p-149);
                g_k_m[f] = fmax(g_k_m[f], ratio);
                double u = test_ulp_error(ACL_FLOAT, out[i], want);
                if (mag <= 2 * fabs(want)) g_k_ulp[f] = fmax(g_k_ulp[f], u);
                bool ok = err == 0 || err <= c * test_ulp32(want) + c * 0x1p-24 * mag + 0x1p-149;
                if (!ok && bad++ < 3)
                    fprintf(stderr, "    %s(%a) g=%g: %a, mpfr %.9g (%.2f ulp, %.2f x 2^-24 M)\n",
                            FNS[f].name, x[i], gs[gi], out[i], want, u, ratio);
            }
        }
        CHECKF(bad == 0, "%s: %ld fp32 results beyond %g ulp + %g x 2^-24 M", FNS[f].name, bad,
               FNS[f].bound, FNS[f].bound);
        CHECKF(g_k_ulp[f] <= FNS[f].bound,
               "%s: %.3f ulp where well conditioned, above the bound %g", FNS[f].name, g_k_ulp[f],
               FNS[f].bound);
    }
}

// tanh is nearly correctly rounded (vmath.h og_vtanh): against MPFR's correctly rounded float,
// max error <= 0.505 ulp everywhere, and at most 1e-4 of the results at uniform points in
// [-10, 10] differ from it. Points: those uniform ones, every float in [0.1718, 0.1758] (around
// the first switch of the exponent reduction, where the largest errors lie) and in [8.9, 9.02]
// (where tanh leaves 1), and the points above.
static double g_k64_ulp[F_COUNT], g_k64_m[F_COUNT];

static void test_f64_kernels_against_mpfr(void) {
    static double x[NPTS], g[NPTS], out[NPTS];
    static const double gs[] = {1.0, -0.75, 3.5};
    for (int i = 0; i < NPTS; i++) x[i] = xs[i];
    for (int f = 0; f < F_COUNT; f++) {
        og_softplus_params p = {(float)FNS[f].beta, (float)FNS[f].threshold, FNS[f].beta,
                                FNS[f].threshold};
        int ng = FNS[f].derivative ? 3 : 1;
        long bad = 0;
        for (int gi = 0; gi < ng; gi++) {
            for (int i = 0; i < NPTS; i++) g[i] = gs[gi];
            const double *in1[1] = {x}, *in2[2] = {g, x};
            double *o[1] = {out};
            FNS[f].kernels64[OPGRAD_ISA_SCALAR](NPTS, FNS[f].derivative ? in2 : in1, o, &p);
            // the vector builds compute the same doubles, bit for bit
            static double vec[NPTS];
            double *ov[1] = {vec};
            for (int isa = OPGRAD_ISA_AVX2; isa <= OPGRAD_ISA_AVX512; isa++) {
                if (!test_isa_available(isa)) continue;
                FNS[f].kernels64[isa](NPTS, FNS[f].derivative ? in2 : in1, ov, &p);
                CHECKF(!memcmp(vec, out, sizeof vec), "%s: the %s build differs from scalar",
                       FNS[f].name, opgrad_isa_name((opgrad_isa)isa));
            }
            for (int i = 0; i < NPTS; i++) {
                double want = gs[gi] * g_mp[f][i].f, mag = fabs(gs[gi]) * g_mp[f][i].mag;
                double err = fabs(out[i] - want), ratio = err / (mag * 0x1p-52 + 0x1p-1074);
                g_k64_m[f] = fmax(g_k64_m[f], ratio);
                if (mag <= 2 * fabs(want)) g_k64_ulp[f] = fmax(g_k64_ulp[f], ulps64(out[i], want));
                if (!(ratio <= 0x1p12) && bad++ < 3)
                    fprintf(stderr, "    %s(%a) g=%g: %.17g, mpfr %.17g (%.3g x 2^-52 M)\n",
                            FNS[f].name, x[i], gs[gi], out[i], want, ratio);
            }
        }
        CHECKF(bad == 0, "%s: %ld float64 results further than 2^-40 M from MPFR", FNS[f].name,
               bad);
    }
}

static void test_tanh_fp32_near_correctly_rounded(void) {
    enum { NU = 100000 };
    const uint32_t w0 = test_f2u(0.1718f), w1 = test_f2u(0.1758f);
    const uint32_t s0 = test_f2u(8.9f), s1 = test_f2u(9.02f);
    size_t n = NU + (w1 - w0 + 1) + (s1 - s0 + 1) + NPTS;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    test_rng r;
    test_rng_seed(&r, 777);
    size_t m = 0;
    for (int i = 0; i < NU; i++) x[m++] = (float)test_rng_uniform(&r, -10, 10);
    for (uint32_t u = w0; u <= w1; u++) x[m++] = test_u2f(u);
    for (uint32_t u = s0; u <= s1; u++) x[m++] = -test_u2f(u);
    for (int i = 0; i < NPTS; i++) x[m++] = xs[i];
    const float *in[1] = {x};
    float *o[1] = {y};
    og_tanh_fwd_kernels[OPGRAD_ISA_SCALAR](m, in, o, NULL);
    mpfr_t a;
    mpfr_init2(a, 128);
    double max_ulp = 0, sum_u = 0, worst = 0;
    long mis = 0, mis_u = 0;
    for (size_t i = 0; i < m; i++) {
        mpfr_set_flt(a, x[i], MPFR_RNDN);
        mpfr_tanh(a, a, MPFR_RNDN);
        bool cr = test_f2u(y[i]) == test_f2u(mpfr_get_flt(a, MPFR_RNDN));
        double e = fabs(y[i] - mpfr_get_d(a, MPFR_RNDN)) / test_ulp32(mpfr_get_d(a, MPFR_RNDN));
        if (e > max_ulp) max_ulp = e, worst = x[i];
        mis += !cr;
        if (i < NU) sum_u += e, mis_u += !cr;
    }
    mpfr_clear(a);
    printf("  tanh fp32 vs MPFR: max %.4f ulp at %a over %zu points (%ld not correctly rounded); "
           "uniform in [-10, 10]: mean %.4f ulp, %ld of %d not correctly rounded\n",
           max_ulp, worst, m, mis, sum_u / NU, mis_u, NU);
    CHECKF(max_ulp <= 0.505, "tanh: max %.4f ulp at %a, above 0.505", max_ulp, worst);
    CHECKF(mis_u <= NU / 10000, "tanh: %ld of %d results not correctly rounded", mis_u, NU);
    free(x), free(y);
}

static void print_table(void) {
    printf("\n  %d points; MPFR-256 as the exact value\n", NPTS);
    printf("  %-18s %12s %14s   %10s %15s %6s   %10s %14s\n", "function", "f64 ref ulp",
           "f64 ref 2^-52M", "fp32 ulp", "fp32 err/2^-24M", "bound", "f64 kern ulp",
           "f64 kern 2^-52M");
    for (int f = 0; f < F_COUNT; f++)
        printf("  %-18s %12.2f %14.2f   %10.3f %15.3f %6g   %10.2f %14.2f\n", FNS[f].name,
               g_ref_ulp[f], g_ref_m[f], g_k_ulp[f], g_k_m[f], FNS[f].bound, g_k64_ulp[f],
               g_k64_m[f]);
    printf("  (ulp columns: max where M <= 2|f|; M columns: everywhere; derivatives at gradOutput\n"
           "   1, -0.75 and 3.5)\n");
}

int main(void) {
    make_points();
    RUN(test_references_match_mpfr);
    RUN(test_fp32_kernels_against_mpfr);
    RUN(test_f64_kernels_against_mpfr);
    RUN(test_tanh_fp32_near_correctly_rounded);
    print_table();
    return test_summary();
}
