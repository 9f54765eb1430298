/* Kernel-level tests of the softmax row kernels (ops/softmax/softmax_kernel.h): softmax_fwd,
 * log_softmax_fwd, softmax_bwd and log_softmax_bwd, called directly through their ISA tables.
 *
 *  - every ISA this CPU has (higher ones are skipped with a note);
 *  - rows of n = 0..70, around 128, 256 and 1024, 4099 and 100000 (and 2^20 + 19, which crosses
 *    log_softmax's count block) with random data of several kinds: |x| up to 1, 30, 1e4, a few
 *    huge values, equal values, -inf entries, one dominant value (the others 15 to 110 below
 *    it: log-softmax's log1p path and the subnormal exps), mixed magnitudes, a NaN, a +inf, all
 *    -inf; the backward at gradOutput of three kinds (|g| <= 1, |g| <= 1000, constant: the
 *    cancelling case) with y the forward's output, and with free y;
 *  - (a) every ISA gives the bits of the scalar build (any NaN equals any NaN);
 *  - (b) guard canaries around the output stay intact, inputs are left untouched (and are
 *    exactly n long, so that AddressSanitizer sees a read past n);
 *  - (c) out == in (each input in turn) gives the same bits;
 *  - (d) against the float64 references (check/ref_softmax.c) with the checker's rule
 *    |got - ref| <= c ulp(ref) + c 2^-24 sqrt(n) mag + 2^-149, c = 4; the max ulp error (where
 *    mag <= 2 |ref| and ref is a normal float: every normal point of a forward; subnormal
 *    results are judged by the absolute terms) and the max fraction of the tolerance are printed
 *    per kernel; softmax_fwd and log_softmax_fwd must stay within 2 ulp;
 *  - (e) special rows: all -inf, a +inf, a NaN give a NaN row; n = 1 gives 1 (softmax) and 0
 *    (log-softmax); -inf entries give exactly 0 and -inf;
 * OPGRAD_TEST_QUICK=1 leaves out the rows of 100000 and 2^20 + 19 values and times fewer runs. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/ref_softmax.h"
#include "opgrad/opgrad.h"
#include "ops/softmax/softmax_kernel.h"
#include "test.h"
#include "testutil.h"

#define C_ULPS 4.0      // c of the checker's rule
#define FWD_MAX_ULP 2.0 // the forwards' bound (the kernel file's error analysis)

enum { K_SM_F, K_LSM_F, K_SM_B, K_LSM_B, K_COUNT };

typedef struct kinfo {
    const char *name;
    const og_row_fn *table;
    int nin; // 1: forward (x); 2: backward (g, y)
    int fwd; // the forward that makes y for a backward, or -1
} kinfo;

static const kinfo KERNELS[K_COUNT] = {
    {"softmax_fwd", og_softmax_fwd_kernels, 1, -1},
    {"log_softmax_fwd", og_log_softmax_fwd_kernels, 1, -1},
    {"softmax_bwd", og_softmax_bwd_kernels, 2, K_SM_F},
    {"log_softmax_bwd", og_log_softmax_bwd_kernels, 2, K_LSM_F},
};

static void run_kernel(int k, int isa, size_t n, const float *a, const float *b, float *out) {
    const float *in[2] = {a, b};
    float *o[1] = {out};
    KERNELS[k].table[isa](n, in, o, NULL, NULL);
}

static bool same_bits(float a, float b) {
    return test_f2u(a) == test_f2u(b) || (isnan(a) && isnan(b));
}

// ---------------------------------------------------------------------------------------------
// Data

enum {
    D_UNIT,     // |x| <= 1
    D_30,       // |x| <= 30
    D_1E4,      // |x| <= 1e4
    D_SPIKES,   // |x| <= 1 and 1 to 3 values in [30, 110]
    D_EQUAL,    // one value repeated
    D_NEGINF,   // |x| <= 5, a fifth -inf
    D_DOMINANT, // one 0, the others in [-110, -15]
    D_MIXED,    // +-10^u, u in [-6, 1.5]
    D_FREE,     // [-3, 0.5]; for a backward, y itself (not a forward's output)
    D_NAN,      // |x| <= 1 and one NaN
    D_POSINF,   // |x| <= 1 and one +inf
    D_ALLNEGINF,
    D_COUNT
};

static size_t pick(test_rng *r, size_t n) { return (size_t)(test_rng_uniform(r, 0, (double)n)); }

static void fill_x(int kind, size_t n, float *x, test_rng *r) {
    static const double scale[] = {[D_UNIT] = 1, [D_30] = 30, [D_1E4] = 1e4};
    double v = test_rng_uniform(r, -50, 50);
    for (size_t i = 0; i < n; i++) {
        double u = test_rng_uniform(r, -1, 1);
        switch (kind) {
        case D_UNIT:
        case D_30:
        case D_1E4:
            x[i] = (float)(u * scale[kind]);
            break;
        case D_EQUAL:
            x[i] = (float)v;
            break;
        case D_NEGINF:
            x[i] = u < -0.6 ? -INFINITY : (float)(5 * u);
            break;
        case D_DOMINANT:
            x[i] = (float)test_rng_uniform(r, -110, -15);
            break;
        case D_MIXED:
            x[i] = (float)copysign(pow(10, test_rng_uniform(r, -6, 1.5)), u);
            break;
        case D_FREE:
            x[i] = (float)test_rng_uniform(r, -3, 0.5);
            break;
        case D_ALLNEGINF:
            x[i] = -INFINITY;
            break;
        default:
            x[i] = (float)u;
            break;
        }
    }
    if (n == 0) return;
    if (kind == D_SPIKES)
        for (size_t j = 0, c = 1 + n % 3; j < c; j++)
            x[pick(r, n)] = (float)test_rng_uniform(r, 30, 110);
    if (kind == D_NEGINF) x[pick(r, n)] = 1.5f; // at least one finite value
    if (kind == D_DOMINANT) x[pick(r, n)] = 0.0f;
    if (kind == D_NAN) x[pick(r, n)] = NAN;
    if (kind == D_POSINF) x[pick(r, n)] = INFINITY;
}

/// gradOutput: |g| <= 1, |g| <= 1000, or one constant (the cancelling case of both backwards).
static void fill_g(int gk, size_t n, float *g, test_rng *r) {
    double c = test_rng_uniform(r, -2, 2);
    for (size_t i = 0; i < n; i++)
        g[i] = gk == 2 ? (float)c : (float)test_rng_uniform(r, -1, 1) * (gk == 1 ? 1000.0f : 1.0f);
}

static float *xalloc(size_t n) {
    float *p = malloc(n ? n * sizeof(float) : 1); // exactly n: ASan sees a read past n
    if (!p) abort();
    return p;
}

// ---------------------------------------------------------------------------------------------
// One row through every ISA, in place, and against the reference

typedef struct kstats {
    double max_ulp, max_tol, max_ulp_small; // max_ulp_small: rows of n <= 1024
    size_t ulp_n;
    int ulp_kind;
    long points, bad, isa_diff, alias_diff, guard_bad, input_changed;
} kstats;

static kstats STATS[K_COUNT];

/// Runs kernel k at isa into a fresh guarded buffer; checks guards and inputs; returns it.
static gbuf run_guarded(int k, int isa, size_t n, const float *a, const float *b, const float *a0,
                        const float *b0) {
    gbuf o = gbuf_new(n, sizeof(float));
    run_kernel(k, isa, n, a, b, o.f);
    if (!gbuf_guards_ok(&o)) STATS[k].guard_bad++;
    if (memcmp(a, a0, n * sizeof(float)) || (b && memcmp(b, b0, n * sizeof(float))))
        STATS[k].input_changed++;
    return o;
}

static long count_diff(const float *got, const float *want, size_t n) {
    long d = 0;
    for (size_t i = 0; i < n; i++) d += !same_bits(got[i], want[i]);
    return d;
}

/// (a), (b) and (c): every ISA, and every input aliased with the output, give `want`'s bits;
/// a0 / b0 are copies of the inputs.
static void check_isas(int k, size_t n, const float *a, const float *b, const float *a0,
                       const float *b0, const float *want) {
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!test_isa_available(isa)) continue;
        gbuf o = run_guarded(k, isa, n, a, b, a0, b0);
        STATS[k].isa_diff += count_diff(o.f, want, n);
        gbuf_free(&o);
        for (int which = 0; which < KERNELS[k].nin; which++) {
            gbuf io = gbuf_new(n, sizeof(float));
            memcpy(io.f, which ? b : a, n * sizeof(float));
            run_kernel(k, isa, n, which ? a : io.f, which ? io.f : b, io.f);
            STATS[k].alias_diff += count_diff(io.f, want, n);
            if (!gbuf_guards_ok(&io)) STATS[k].guard_bad++;
            gbuf_free(&io);
        }
    }
}

/// (d): against the float64 reference.
static void check_accuracy(int k, size_t n, int kind, const float *a, const float *b,
                           const float *got) {
    double *ad = malloc((n + 1) * sizeof(double)), *bd = malloc((n + 1) * sizeof(double));
    double *ref = malloc((n + 1) * sizeof(double)), *mag = malloc((n + 1) * sizeof(double));
    for (size_t i = 0; i < n; i++) ad[i] = a[i], bd[i] = b ? b[i] : 0;
    if (k == K_SM_F) og_ref_softmax(n, ad, ref, mag);
    if (k == K_LSM_F) og_ref_log_softmax(n, ad, ref, mag);
    if (k == K_SM_B) og_ref_softmax_grad(n, ad, bd, ref, mag);
    if (k == K_LSM_B) og_ref_log_softmax_grad(n, ad, bd, ref, mag);
    kstats *s = &STATS[k];
    for (size_t i = 0; i < n; i++) {
        double y = got[i], r = ref[i];
        bool ok;
        if (isnan(r) || isnan(y) || isinf(r) || isinf(y)) {
            ok = (isnan(r) && isnan(y)) || y == r;
        } else {
            double err = fabs(y - r), ulp = test_ulp32(r);
            double tol = C_ULPS * ulp + C_ULPS * 0x1p-24 * sqrt((double)n) * mag[i] + 0x1p-149;
            ok = err <= tol;
            if (err / tol > s->max_tol) s->max_tol = err / tol;
            if (mag[i] <= 2 * fabs(r) && fabs(r) >= 0x1p-126) { // subnormal: the 2^-149 terms
                if (err / ulp > s->max_ulp)
                    s->max_ulp = err / ulp, s->ulp_n = n, s->ulp_kind = kind;
                if (n <= 1024 && err / ulp > s->max_ulp_small) s->max_ulp_small = err / ulp;
            }
        }
        s->points++;
        if (!ok && s->bad++ < 5)
            fprintf(stderr, "    %s n %zu kind %d [%zu]: got %a, ref %a (mag %g)\n",
                    KERNELS[k].name, n, kind, i, got[i], r, mag[i]);
    }
    free(ad), free(bd), free(ref), free(mag);
}

static void run_case(int k, size_t n, int kind, uint64_t seed) {
    test_rng r;
    test_rng_seed(&r, seed);
    float *a = xalloc(n), *b = NULL;
    if (KERNELS[k].nin == 2) { // (g, y), y the forward's output (or free)
        b = xalloc(n);
        fill_x(kind, n, b, &r);
        if (kind != D_FREE) {
            float *y = xalloc(n);
            run_kernel(KERNELS[k].fwd, OPGRAD_ISA_SCALAR, n, b, NULL, y);
            memcpy(b, y, n * sizeof(float));
            free(y);
        }
        fill_g((int)(seed % 3), n, a, &r);
    } else {
        fill_x(kind, n, a, &r);
    }
    float *ac = xalloc(n), *bc = xalloc(n);
    memcpy(ac, a, n * sizeof(float));
    if (b) memcpy(bc, b, n * sizeof(float));
    gbuf want = run_guarded(k, OPGRAD_ISA_SCALAR, n, a, b, ac, b ? bc : NULL);
    check_isas(k, n, a, b, ac, b ? bc : NULL, want.f);
    check_accuracy(k, n, kind, a, b, want.f);
    gbuf_free(&want);
    free(a), free(b), free(ac), free(bc);
}

static void sweep(int k) {
    static const size_t big[] = {127,  128,  129,  255,  256,    257,
                                 1023, 1024, 1025, 4099, 100000, (1u << 20) + 19};
    size_t sizes[71 + sizeof big / sizeof big[0]], ns = 0;
    for (size_t n = 0; n <= 70; n++) sizes[ns++] = n;
    for (size_t j = 0; j < sizeof big / sizeof big[0]; j++) sizes[ns++] = big[j];
    uint64_t seed = 1000 * (uint64_t)k;
    for (size_t si = 0; si < ns; si++) {
        size_t n = sizes[si];
        if (test_quick_mode() && n >= 100000) continue;
        for (int kind = 0; kind < D_COUNT; kind++) {
            if (n > 100000 && kind != D_UNIT && kind != D_EQUAL) continue;
            run_case(k, n, kind, seed++);
        }
    }
    kstats *s = &STATS[k];
    printf("  %-16s %ld points: max %.3f ulp (n %zu, kind %d; %.3f for n <= 1024), max %.3f of the "
           "tolerance\n",
           KERNELS[k].name, s->points, s->max_ulp, s->ulp_n, s->ulp_kind, s->max_ulp_small,
           s->max_tol);
    CHECKF(s->bad == 0, "%s: %ld points beyond the tolerance", KERNELS[k].name, s->bad);
    CHECKF(s->isa_diff == 0, "%s: %ld results differ between ISAs", KERNELS[k].name, s->isa_diff);
    CHECKF(s->alias_diff == 0, "%s: %ld in-place results differ", KERNELS[k].name, s->alias_diff);
    CHECKF(s->guard_bad == 0, "%s: %ld guard violations", KERNELS[k].name, s->guard_bad);
    CHECKF(s->input_changed == 0, "%s: inputs changed %ld times", KERNELS[k].name,
           s->input_changed);
    if (KERNELS[k].nin == 1)
        CHECKF(s->max_ulp <= FWD_MAX_ULP, "%s: %.3f ulp, above %.1f", KERNELS[k].name, s->max_ulp,
               FWD_MAX_ULP);
}

static void test_softmax_fwd(void) { sweep(K_SM_F); }
static void test_log_softmax_fwd(void) { sweep(K_LSM_F); }
static void test_softmax_bwd(void) { sweep(K_SM_B); }
static void test_log_softmax_bwd(void) { sweep(K_LSM_B); }

// ---------------------------------------------------------------------------------------------
// (e) Special rows

static void forward_row(int isa, int k, size_t n, const float *x, float *y) {
    run_kernel(k, isa, n, x, NULL, y);
}

static void test_special_rows(void) {
    float y[17], x[17];
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!test_isa_available(isa)) continue;
        for (int k = K_SM_F; k <= K_LSM_F; k++) {
            static const size_t ns[] = {1, 3, 16, 17};
            for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
                size_t n = ns[t];
                for (int what = 0; what < 3; what++) { // all -inf, a +inf, a NaN
                    for (size_t i = 0; i < n; i++) x[i] = what ? 0.25f * (float)i : -INFINITY;
                    if (what) x[n / 2] = what == 1 ? INFINITY : NAN;
                    forward_row(isa, k, n, x, y);
                    for (size_t i = 0; i < n; i++)
                        CHECKF(isnan(y[i]), "%s isa %d n %zu case %d: y[%zu] = %a, not NaN",
                               KERNELS[k].name, isa, n, what, i, y[i]);
                }
            }
            static const float ones[] = {3.5f, -1e30f, 0.0f, -0.0f, 1e30f, 0x1p-149f};
            for (size_t t = 0; t < sizeof ones / sizeof ones[0]; t++) {
                forward_row(isa, k, 1, &ones[t], y);
                CHECKF(y[0] == (k == K_SM_F ? 1.0f : 0.0f), "%s isa %d n 1 x %a: %a",
                       KERNELS[k].name, isa, ones[t], y[0]);
            }
            // -inf entries beside finite ones: exactly 0 (softmax), -inf (log-softmax)
            for (size_t i = 0; i < 17; i++) x[i] = i % 3 ? -INFINITY : (float)i;
            forward_row(isa, k, 17, x, y);
            for (size_t i = 0; i < 17; i++)
                if (i % 3)
                    CHECKF(y[i] == (k == K_SM_F ? 0.0f : -INFINITY), "%s isa %d: y[%zu] = %a",
                           KERNELS[k].name, isa, i, y[i]);
                else
                    CHECKF(isfinite(y[i]), "%s isa %d: y[%zu] = %a", KERNELS[k].name, isa, i, y[i]);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Cycles per element, L1-resident (information only)

int main(void) {
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++)
        if (!test_isa_available(isa))
            printf("  note: %s is not available on this CPU: not run\n",
                   opgrad_isa_name((opgrad_isa)isa));
    RUN(test_special_rows);
    RUN(test_softmax_fwd);
    RUN(test_log_softmax_fwd);
    RUN(test_softmax_bwd);
    RUN(test_log_softmax_bwd);
    return test_summary();
}
