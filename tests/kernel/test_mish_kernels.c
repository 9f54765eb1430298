/* Kernel-level tests of the Mish compute functions (og_mish_{fwd,fwd_tanhx,bwd,bwd_tanhx}__isa),
 * called directly and through the public aclnn API with the ISA selected by opgrad_set_max_isa.
 *
 *  - every ISA this CPU has (higher ones are skipped with a note);
 *  - sizes 0..49 and around the engine's real tile widths (taken from og_ew_make_plan), with
 *    guard canaries around every output and in-place (out == in) calls;
 *  - special values and mathematical limits;
 *  - fp32: a large random sample (random bit patterns over all exponents, a dense grid over
 *    [-20, 20], every fp32 value near the root of mish') against the float64 references:
 *    forward <= 5 ulp; backward <= 5 ulp except for x in [-1.4, -1.0], where the error must stay
 *    below 8 * 2^-24 * |g| * M with M = |t| + |x sigmoid(x) (1 - t^2)| (cancellation-aware);
 *    the tanhx backward (t + x sigmoid(x) (1 - t^2) with the caller's t cancels over a wider
 *    range) must meet either bound anywhere; all ISAs bitwise identical; the public API gives
 *    the direct kernel's bits;
 *  - large gradOutput values where mish'(x) is subnormal in fp32 (x < -87);
 *  - fp16 / bf16: all 65,536 encodings of x through aclnnMish / aclnnMishBackward and the
 *    tanhx pair, at several gradOutput values: within 1 ulp of the exact float64 value (the
 *    tanhx backward: of the exact value for the stored t). A table of the max errors per
 *    dtype x direction x ISA is printed at the end.
 * OPGRAD_TEST_QUICK=1 shrinks the random fp32 sample (sizes only; the bounds never change). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_mish.h"
#include "aclnnop/aclnn_mish_backward.h"
#include "check/reference.h"
#include "engine/elementwise.h"
#include "opgrad/opgrad.h"
#include "ops/activation/mish/mish_kernel.h"
#include "tensor/dtype.h"
#include "test.h"
#include "testutil.h"

// ---------------------------------------------------------------------------------------------
// Helpers

static void note_skipped_isas(const char *test) {
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++)
        if (!test_isa_available(isa))
            printf("  note: %s: ISA %s not supported by this CPU, skipped\n", test,
                   opgrad_isa_name((opgrad_isa)isa));
}

enum { K_FWD, K_FWD_T, K_BWD, K_BWD_T, K_COUNT };
typedef struct kernel_info {
    const char *name;
    const og_ew_compute_fn *table;
    int nin, nout;
} kernel_info;
static const kernel_info KERNELS[K_COUNT] = {
    {"mish_fwd", og_mish_fwd_kernels, 1, 1},
    {"mish_fwd_tanhx", og_mish_fwd_tanhx_kernels, 1, 2},
    {"mish_bwd", og_mish_bwd_kernels, 2, 1},
    {"mish_bwd_tanhx", og_mish_bwd_tanhx_kernels, 3, 1},
};

// The per-ISA symbols must be what the dispatch tables hold.
static void test_kernel_tables(void) {
    const og_ew_compute_fn expect[K_COUNT][OPGRAD_ISA_COUNT] = {
        {og_mish_fwd__scalar, og_mish_fwd__avx2, og_mish_fwd__avx512},
        {og_mish_fwd_tanhx__scalar, og_mish_fwd_tanhx__avx2, og_mish_fwd_tanhx__avx512},
        {og_mish_bwd__scalar, og_mish_bwd__avx2, og_mish_bwd__avx512},
        {og_mish_bwd_tanhx__scalar, og_mish_bwd_tanhx__avx2, og_mish_bwd_tanhx__avx512},
    };
    for (int k = 0; k < K_COUNT; k++)
        for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++)
            CHECKF(KERNELS[k].table[isa] == expect[k][og_isa_build((opgrad_isa)isa)],
                   "%s table entry %d", KERNELS[k].name, isa);
    // opgrad_set_max_isa selects min(cpu, cap).
    opgrad_isa cpu = opgrad_cpu_isa();
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        opgrad_isa got = opgrad_set_max_isa((opgrad_isa)isa);
        opgrad_isa want = (opgrad_isa)(isa < (int)cpu ? isa : (int)cpu);
        CHECK_EQ(got, want);
        CHECK_EQ(opgrad_active_isa(), want);
    }
    opgrad_set_max_isa(OPGRAD_ISA_COUNT - 1);
    printf("  cpu isa: %s\n", opgrad_isa_name(cpu));
    note_skipped_isas("kernels");
}

// Guarded buffers (tests/common): a sentinel pattern on both sides of the data
// Tile width the engine really uses for an op with nin inputs and nout outputs of dtype dt:
// asked from the planner itself (og_ew_make_plan), never hard-coded.
static int64_t engine_tile(int nin, int nout, aclDataType dt) {
    static char dummy[64];
    int64_t dims[1] = {1 << 20};
    og_ew_op op = {.kernels = og_mish_fwd_kernels, .nin = nin, .nout = nout, .compute_dtype = dt};
    aclTensor *ts[OG_EW_MAX_IN + OG_EW_MAX_OUT];
    for (int k = 0; k < nin + nout; k++) {
        ts[k] = test_tensor(dims, 1, dt, dummy);
        if (k < nin)
            op.in[k] = ts[k];
        else
            op.out[k - nin] = ts[k];
    }
    og_ew_plan plan;
    og_ew_make_plan(&op, 1, 0, &plan);
    for (int k = 0; k < nin + nout; k++) aclDestroyTensor(ts[k]);
    return plan.tiling.tile_elems;
}

static int size_list(size_t *sizes, int cap) {
    int n = 0;
    for (size_t s = 0; s <= 3 * 16 + 1; s++) sizes[n++] = s;
    aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16};
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < K_COUNT; k++) {
            int64_t t = engine_tile(KERNELS[k].nin, KERNELS[k].nout, dts[d]);
            int64_t around[] = {t - 17, t - 16, t - 1,     t,     t + 1,     t + 15,
                                t + 16, t + 17, 2 * t - 1, 2 * t, 2 * t + 1, 3 * t + 7};
            for (size_t a = 0; a < sizeof around / sizeof *around; a++) {
                bool dup = false;
                for (int j = 0; j < n; j++) dup |= sizes[j] == (size_t)around[a];
                if (!dup && around[a] >= 0 && n < cap) sizes[n++] = (size_t)around[a];
            }
        }
    return n;
}

static void test_engine_tiles(void) {
    printf("  engine tile widths (elements), from og_ew_make_plan:\n");
    aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    for (int k = 0; k < K_COUNT; k++) {
        printf("    %-16s", KERNELS[k].name);
        for (int d = 0; d < 3; d++) {
            int64_t t = engine_tile(KERNELS[k].nin, KERNELS[k].nout, dts[d]);
            printf(" %s=%lld", og_dtype_name(dts[d]), (long long)t);
            CHECK(t > 0);
            // the fp32 tile buffers of every operand fit the 32 KiB L1 budget
            CHECKF(t * 4 * (KERNELS[k].nin + KERNELS[k].nout) <= 32 * 1024, "tile %lld",
                   (long long)t);
            CHECK(t % (dts[d] == ACL_FLOAT ? 16 : 32) == 0);
        }
        printf("\n");
    }
}

// Fills inputs for kernel k (n elements) from a seed: x mixes a grid over [-20, 20], random
// bit patterns and special values; g varied; t (bwd_tanhx) = the scalar forward's t of x.
static const float SPECIALS[] = {0.0f,    -0.0f,   INFINITY, -INFINITY, NAN,      -NAN,   1e-40f,
                                 -1e-40f, FLT_MAX, -FLT_MAX, FLT_MIN,   -FLT_MIN, -1.19f, -87.3f,
                                 -103.9f, -150.0f, 88.7f,    20.0f,     -20.0f,   1.0f,   -1.0f};
enum { NSPECIALS = sizeof SPECIALS / sizeof SPECIALS[0] };

static void fill_inputs(size_t n, float *g, float *x, float *t, uint64_t seed) {
    test_rng r;
    test_rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++) {
        uint64_t u = test_rng_next(&r);
        switch (u % 4) {
        case 0:
            x[i] = SPECIALS[(u >> 8) % NSPECIALS];
            break;
        case 1:
            x[i] = test_u2f((uint32_t)(u >> 32));
            break;
        default:
            x[i] = (float)test_rng_uniform(&r, -20, 20);
            break;
        }
        if (g) g[i] = (float)test_rng_uniform(&r, -4, 4);
    }
    if (t) {
        float *y = malloc((n ? n : 1) * sizeof *y);
        const float *in[1] = {x};
        float *out[2] = {y, t};
        og_mish_fwd_tanhx__scalar(n, in, out, NULL);
        free(y);
    }
}

// ---------------------------------------------------------------------------------------------
// Accuracy judgement against the float64 references

#define FWD_ULP_BOUND 5.0
#define BWD_ULP_BOUND 5.0
#define ROOT_LO -1.4
#define ROOT_HI -1.0
#define ROOT_ABS_FACTOR 8.0 // |err| <= 8 * 2^-24 * |g| * M near the root

// Magnitude of the terms that cancel in t + x sigmoid(x) (1 - t^2).
static double grad_magnitude(double x, double t) {
    if (!isfinite(x)) return 1.0;
    return fabs(t) + fabs(x * og_ref_sigmoid(x) * (1.0 - t * t));
}

typedef struct bwd_verdict {
    double ulp;     // ulps of fp32 against the exact value
    bool root;      // judged by the absolute bound
    double abs_rel; // |err| / (2^-24 |g| M) (root region)
    bool ok;
} bwd_verdict;

// MishBackward (tanhx = false): <= 5 ulp, except for x in [-1.4, -1.0] where the absolute bound
// applies instead. The tanhx branch (tanhx = true) evaluates t + x sigmoid(x) (1 - t^2) with the
// caller's t, a sum that cancels over a wider range (x in about [-2, -0.9]) and that no
// evaluation order can avoid: there the result must satisfy either bound, anywhere.
static bwd_verdict judge_bwd(double g, double x, double t, double ref, double got, bool tanhx) {
    bwd_verdict v = {0};
    v.ulp = test_ulp_error(ACL_FLOAT, got, ref);
    v.root = x >= ROOT_LO && x <= ROOT_HI;
    if (isfinite(ref) && isfinite(got)) {
        double scale = 0x1p-24 * fabs(g) * grad_magnitude(x, t);
        double err = fabs(got - ref);
        v.abs_rel = scale > 0 ? err / scale : (err == 0 ? 0 : INFINITY);
    }
    if (tanhx)
        v.ok = v.ulp <= BWD_ULP_BOUND || v.abs_rel <= ROOT_ABS_FACTOR;
    else if (v.root && isfinite(ref) && isfinite(got))
        v.ok = v.abs_rel <= ROOT_ABS_FACTOR;
    else
        v.ok = v.ulp <= BWD_ULP_BOUND;
    return v;
}

// Checks one kernel's outputs on n elements against the references; returns violations and
// prints the first few.
static long judge_outputs(int k, size_t n, const float *g, const float *x, const float *t,
                          float *const *out, const char *what) {
    long bad = 0;
    for (size_t i = 0; i < n; i++) {
        double xv = x[i];
        bool ok = true;
        double ref = 0, got = 0;
        switch (k) {
        case K_FWD:
        case K_FWD_T:
            ref = og_ref_mish(xv), got = out[0][i];
            ok = test_ulp_error(ACL_FLOAT, got, ref) <= FWD_ULP_BOUND;
            if (k == K_FWD_T && ok) {
                ref = og_ref_mish_tanhx(xv), got = out[1][i];
                ok = test_ulp_error(ACL_FLOAT, got, ref) <= FWD_ULP_BOUND;
            }
            break;
        case K_BWD:
            ref = (double)g[i] * og_ref_mish_grad(xv), got = out[0][i];
            ok = judge_bwd(g[i], xv, og_ref_mish_tanhx(xv), ref, got, false).ok;
            break;
        case K_BWD_T:
            ref = og_ref_mish_grad_tanhx(g[i], xv, t[i]), got = out[0][i];
            ok = judge_bwd(g[i], xv, t[i], ref, got, true).ok;
            break;
        }
        if (!ok && bad++ < 5)
            fprintf(stderr, "    %s %s: i=%zu x=%a g=%a got=%a ref=%a\n", what, KERNELS[k].name, i,
                    x[i], g ? g[i] : 1.0f, got, ref);
    }
    return bad;
}

// ---------------------------------------------------------------------------------------------
// Direct kernel calls: sizes, canaries, bitwise identity, in place

// Runs kernel k of `isa` on fresh guarded outputs; in[] as given; returns guard status.
static bool call_guarded(int k, int isa, size_t n, const float *const *in, gbuf *outs) {
    float *out[2];
    for (int o = 0; o < KERNELS[k].nout; o++) {
        outs[o] = gbuf_new(n, 4);
        out[o] = outs[o].data;
    }
    KERNELS[k].table[isa](n, in, out, NULL);
    bool ok = true;
    for (int o = 0; o < KERNELS[k].nout; o++) ok &= gbuf_guards_ok(&outs[o]);
    return ok;
}

static void test_kernel_sizes(void) {
    size_t sizes[512];
    int ns = size_list(sizes, 512);
    size_t maxn = 0;
    for (int s = 0; s < ns; s++) maxn = sizes[s] > maxn ? sizes[s] : maxn;
    float *g = malloc(maxn * 4), *x = malloc(maxn * 4), *t = malloc(maxn * 4);
    float *ref[2] = {malloc(maxn * 4), malloc(maxn * 4)};
    long violations = 0;
    for (int s = 0; s < ns; s++) {
        size_t n = sizes[s];
        fill_inputs(n, g, x, t, 1000 + n);
        for (int k = 0; k < K_COUNT; k++) {
            const float *in[3];
            if (k == K_FWD || k == K_FWD_T)
                in[0] = x;
            else
                in[0] = g, in[1] = x, in[2] = t;
            // Inputs sit inside guarded buffers too, so an over-read of one element shows
            // up under AddressSanitizer (the guards are inside the allocation, so copy the
            // inputs to the end of an exact-size allocation instead).
            float *tight[3] = {0};
            const float *tin[3];
            for (int j = 0; j < KERNELS[k].nin; j++) {
                tight[j] = malloc((n ? n : 1) * 4);
                memcpy(tight[j], in[j], n * 4);
                tin[j] = tight[j];
            }
            KERNELS[k].table[OPGRAD_ISA_SCALAR](n, tin, ref, NULL);
            violations += judge_outputs(k, n, g, x, t, ref, "scalar");
            for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
                if (!test_isa_available(isa)) continue;
                gbuf outs[2];
                bool guards = call_guarded(k, isa, n, tin, outs);
                CHECKF(guards, "%s/%s n=%zu wrote outside its output", KERNELS[k].name,
                       opgrad_isa_name((opgrad_isa)isa), n);
                for (int o = 0; o < KERNELS[k].nout; o++) {
                    CHECKF(memcmp(outs[o].data, ref[o], n * 4) == 0,
                           "%s/%s n=%zu output %d differs from the scalar build", KERNELS[k].name,
                           opgrad_isa_name((opgrad_isa)isa), n, o);
                    gbuf_free(&outs[o]);
                }
                // inputs untouched
                for (int j = 0; j < KERNELS[k].nin; j++)
                    CHECKF(memcmp(tight[j], in[j], n * 4) == 0, "%s/%s n=%zu modified input %d",
                           KERNELS[k].name, opgrad_isa_name((opgrad_isa)isa), n, j);
            }
            for (int j = 0; j < KERNELS[k].nin; j++) free(tight[j]);
        }
    }
    CHECKF(violations == 0, "%ld accuracy violations", violations);
    printf("  %d sizes (0..49 and around the tile widths) x %d kernels x ISAs\n", ns, K_COUNT);
    free(g), free(x), free(t), free(ref[0]), free(ref[1]);
}

// out == in: every aliasing an elementwise kernel allows gives the out-of-place result.
static void test_kernel_inplace(void) {
    const size_t ns[] = {0, 1, 7, 15, 16, 17, 31, 33, 100, 1023};
    for (size_t si = 0; si < sizeof ns / sizeof *ns; si++) {
        size_t n = ns[si], bytes = (n ? n : 1) * 4;
        float *g = malloc(bytes), *x = malloc(bytes), *t = malloc(bytes);
        float *e0 = malloc(bytes), *e1 = malloc(bytes);
        fill_inputs(n, g, x, t, 77 + n);
        for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
            if (!test_isa_available(isa)) continue;
            const char *in_name = opgrad_isa_name((opgrad_isa)isa);
            for (int k = 0; k < K_COUNT; k++) {
                int nin = KERNELS[k].nin, nout = KERNELS[k].nout;
                const float *src[3] = {k <= K_FWD_T ? x : g, x, t};
                const float *in0[3] = {src[0], src[1], src[2]};
                float *eo[2] = {e0, e1};
                KERNELS[k].table[isa](n, in0, eo, NULL);
                // alias output o with input j
                for (int o = 0; o < nout; o++)
                    for (int j = 0; j < nin; j++) {
                        float *copy[3];
                        const float *in[3];
                        for (int m = 0; m < nin; m++) {
                            copy[m] = malloc(bytes);
                            memcpy(copy[m], src[m], n * 4);
                            in[m] = copy[m];
                        }
                        float *other = malloc(bytes);
                        float *out[2];
                        out[o] = copy[j];
                        out[1 - o] = other;
                        KERNELS[k].table[isa](n, in, out, NULL);
                        CHECKF(memcmp(out[o], eo[o], n * 4) == 0, "%s/%s n=%zu out%d==in%d",
                               KERNELS[k].name, in_name, n, o, j);
                        if (nout == 2)
                            CHECKF(memcmp(out[1 - o], eo[1 - o], n * 4) == 0,
                                   "%s/%s n=%zu out%d==in%d (other output)", KERNELS[k].name,
                                   in_name, n, o, j);
                        for (int m = 0; m < nin; m++) free(copy[m]);
                        free(other);
                    }
            }
        }
        free(g), free(x), free(t), free(e0), free(e1);
    }
}

// ---------------------------------------------------------------------------------------------
// Special values and limits (direct calls, every ISA)

static float run1(int k, int isa, float g, float x, float t, float *t_out) {
    float in_g[1] = {g}, in_x[1] = {x}, in_t[1] = {t}, o0[1], o1[1];
    const float *in[3];
    if (k <= K_FWD_T)
        in[0] = in_x;
    else
        in[0] = in_g, in[1] = in_x, in[2] = in_t;
    float *out[2] = {o0, o1};
    KERNELS[k].table[isa](1, in, out, NULL);
    if (t_out) *t_out = o1[0];
    return o0[0];
}

static void test_special_values(void) {
    static const float xs[] = {0.0f,
                               -0.0f,
                               0x1p-149f,
                               -0x1p-149f,
                               0x1p-140f,
                               -0x1p-127f,
                               0x1.fffffcp-127f,
                               -0x1.fffffcp-127f,
                               FLT_MIN,
                               -FLT_MIN,
                               1e-30f,
                               -1e-30f,
                               FLT_MAX,
                               -FLT_MAX,
                               -87.3f,
                               -87.33654f,
                               -87.5f,
                               -88.0f,
                               -88.72283f,
                               -89.0f,
                               -95.0f,
                               -100.0f,
                               -103.0f,
                               -103.27893f,
                               -103.9f,
                               -104.0f,
                               -110.0f,
                               -150.0f,
                               -159.9f,
                               -160.0f,
                               -160.1f,
                               -200.0f,
                               -1e10f,
                               88.0f,
                               88.7f,
                               88.72284f,
                               89.0f,
                               100.0f,
                               1e10f,
                               8.0f,
                               9.0f,
                               15.0f,
                               16.0f,
                               17.0f,
                               -1.1f,
                               -1.15f,
                               -1.19f,
                               -1.1923f,
                               -1.19229f,
                               -1.2f,
                               -1.25f,
                               -1.3f,
                               -1.4f,
                               -1.0f,
                               1.0f,
                               -0.5f,
                               0.5f};
    static const float gs[] = {1.0f, -0.75f, 3.5f, 0x1p-10f};
    long bad = 0;
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!test_isa_available(isa)) continue;
        const char *in_name = opgrad_isa_name((opgrad_isa)isa);
        // limits and NaN
        float t;
        float y = run1(K_FWD, isa, 0, -INFINITY, 0, NULL);
        CHECKF(y == 0.0f, "%s mish(-inf) = %a", in_name, y);
        y = run1(K_FWD, isa, 0, INFINITY, 0, NULL);
        CHECKF(y == INFINITY, "%s mish(+inf) = %a", in_name, y);
        y = run1(K_FWD_T, isa, 0, -INFINITY, 0, &t);
        CHECKF(y == 0.0f && t == 0.0f, "%s mish_tanhx(-inf) = %a, t = %a", in_name, y, t);
        float t_minf = t;
        y = run1(K_FWD_T, isa, 0, INFINITY, 0, &t);
        CHECKF(y == INFINITY && t == 1.0f, "%s mish_tanhx(+inf) = %a, t = %a", in_name, y, t);
        float t_pinf = t;
        for (size_t gi = 0; gi < sizeof gs / sizeof *gs; gi++) {
            float g = gs[gi];
            float d = run1(K_BWD, isa, g, -INFINITY, 0, NULL);
            CHECKF(d == 0.0f, "%s g*mish'(-inf) = %a (g=%a)", in_name, d, g);
            d = run1(K_BWD, isa, g, INFINITY, 0, NULL);
            CHECKF(d == g, "%s g*mish'(+inf) = %a (g=%a)", in_name, d, g);
            d = run1(K_BWD_T, isa, g, -INFINITY, t_minf, NULL);
            CHECKF(d == 0.0f, "%s tanhx g*mish'(-inf) = %a (g=%a)", in_name, d, g);
            d = run1(K_BWD_T, isa, g, INFINITY, t_pinf, NULL);
            CHECKF(d == g, "%s tanhx g*mish'(+inf) = %a (g=%a)", in_name, d, g);
        }
        // signed zeros: mish(+-0) = +-0, mish'(+-0) = tanh(ln 2)
        y = run1(K_FWD, isa, 0, 0.0f, 0, NULL);
        CHECKF(y == 0 && !signbit(y), "%s mish(+0) = %a", in_name, y);
        y = run1(K_FWD, isa, 0, -0.0f, 0, NULL);
        CHECKF(y == 0 && signbit(y), "%s mish(-0) = %a", in_name, y);
        // NaN propagates from every input
        static const float nans[] = {NAN, -NAN};
        for (int q = 0; q < 2; q++) {
            float nan = nans[q];
            CHECK(isnan(run1(K_FWD, isa, 0, nan, 0, NULL)));
            CHECK(isnan(run1(K_FWD_T, isa, 0, nan, 0, &t)) && isnan(t));
            CHECK(isnan(run1(K_BWD, isa, 1.0f, nan, 0, NULL)));
            CHECK(isnan(run1(K_BWD, isa, nan, 1.0f, 0, NULL)));
            CHECK(isnan(run1(K_BWD_T, isa, 1.0f, nan, 0.5f, NULL)));
            CHECK(isnan(run1(K_BWD_T, isa, nan, 1.0f, 0.5f, NULL)));
            CHECK(isnan(run1(K_BWD_T, isa, 1.0f, 1.0f, nan, NULL)));
        }
        // accuracy at the special points, g in a moderate range
        for (size_t i = 0; i < sizeof xs / sizeof *xs; i++)
            for (int sgn = 0; sgn < 2; sgn++) {
                float x = sgn ? -xs[i] : xs[i];
                float yv = run1(K_FWD, isa, 0, x, 0, NULL);
                double uf = test_ulp_error(ACL_FLOAT, yv, og_ref_mish(x));
                float y2 = run1(K_FWD_T, isa, 0, x, 0, &t);
                double ut = test_ulp_error(ACL_FLOAT, t, og_ref_mish_tanhx(x));
                bool ok =
                    uf <= FWD_ULP_BOUND && ut <= FWD_ULP_BOUND && test_f2u(y2) == test_f2u(yv);
                if (!ok && bad++ < 10)
                    fprintf(stderr, "    %s x=%a: mish=%a (%.2f ulp) t=%a (%.2f ulp) y_tanhx=%a\n",
                            in_name, x, yv, uf, t, ut, y2);
                for (size_t gi = 0; gi < sizeof gs / sizeof *gs; gi++) {
                    float g = gs[gi];
                    float d = run1(K_BWD, isa, g, x, 0, NULL);
                    bwd_verdict v = judge_bwd(g, x, og_ref_mish_tanhx(x),
                                              (double)g * og_ref_mish_grad(x), d, false);
                    float dt = run1(K_BWD_T, isa, g, x, t, NULL);
                    bwd_verdict vt = judge_bwd(g, x, t, og_ref_mish_grad_tanhx(g, x, t), dt, true);
                    if ((!v.ok || !vt.ok) && bad++ < 10)
                        fprintf(stderr,
                                "    %s x=%a g=%a: bwd=%a (%.2f ulp, root %d, %.2f) "
                                "bwd_tanhx=%a (%.2f ulp, %.2f)\n",
                                in_name, x, g, d, v.ulp, v.root, v.abs_rel, dt, vt.ulp, vt.abs_rel);
                }
            }
    }
    CHECKF(bad == 0, "%ld special-value violations", bad);
}

// Near the exp underflow, mish'(x) is a subnormal fp32 number while g * mish'(x) may be a
// normal one for a large g: the product must still be within the fp32 bound of the exact value.
static void test_large_grad_tiny_derivative(void) {
    static const float xs[] = {-87.0f,  -88.0f,  -90.0f,  -95.0f,  -100.0f, -102.0f,
                               -103.0f, -103.9f, -104.5f, -105.0f, -120.0f, -150.0f,
                               -159.0f, -161.0f, -165.0f, -180.0f};
    static const float gs[] = {0x1p20f, 1e30f, -1e30f, 0x1p100f};
    long bad = 0;
    double worst = 0;
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!test_isa_available(isa)) continue;
        for (size_t i = 0; i < sizeof xs / sizeof *xs; i++)
            for (size_t gi = 0; gi < sizeof gs / sizeof *gs; gi++) {
                float x = xs[i], g = gs[gi], t;
                run1(K_FWD_T, isa, 0, x, 0, &t);
                float d = run1(K_BWD, isa, g, x, 0, NULL);
                double ref = (double)g * og_ref_mish_grad(x);
                double u = test_ulp_error(ACL_FLOAT, d, ref);
                float dt = run1(K_BWD_T, isa, g, x, t, NULL);
                double reft = og_ref_mish_grad_tanhx(g, x, t);
                double ut = test_ulp_error(ACL_FLOAT, dt, reft);
                worst = fmax(worst, fmax(u, ut));
                if ((u > BWD_ULP_BOUND || ut > BWD_ULP_BOUND) && bad++ < 8)
                    fprintf(stderr,
                            "    %s x=%a g=%a: bwd=%a ref=%a (%.1f ulp); bwd_tanhx=%a ref=%a (%.1f "
                            "ulp)\n",
                            opgrad_isa_name((opgrad_isa)isa), x, g, d, ref, u, dt, reft, ut);
            }
    }
    printf("  max ulp of g*mish'(x) with large g, x in [-180, -87]: %g\n", worst);
    CHECKF(bad == 0, "%ld violations (bound %.0f ulp)", bad, BWD_ULP_BOUND);
}

// ---------------------------------------------------------------------------------------------
// fp32: large sample against the float64 references, bitwise identity across ISAs

typedef struct acc_stats {
    double fwd, t, bwd, bwd_root_ulp, bwd_root_abs, bwdt, bwdt_root_ulp, bwdt_abs;
    double bwd_worst_x, bwd_worst_g, bwdt_worst_x, bwd_g1, bwd_g1_x;
    long viol, mismatch, api_mismatch;
} acc_stats;

static acc_stats g_fp32_stats[OPGRAD_ISA_COUNT];

static void fp32_chunk(size_t n, const float *x, const float *g, acc_stats *st) {
    // outputs per ISA
    float *y[OPGRAD_ISA_COUNT], *yt[OPGRAD_ISA_COUNT], *t[OPGRAD_ISA_COUNT], *d[OPGRAD_ISA_COUNT],
        *dt[OPGRAD_ISA_COUNT];
    float *api = malloc(n * 4);
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!test_isa_available(isa)) continue;
        y[isa] = malloc(n * 4), yt[isa] = malloc(n * 4), t[isa] = malloc(n * 4);
        d[isa] = malloc(n * 4), dt[isa] = malloc(n * 4);
        const float *in1[1] = {x};
        float *o1[1] = {y[isa]};
        og_mish_fwd_kernels[isa](n, in1, o1, NULL);
        float *o2[2] = {yt[isa], t[isa]};
        og_mish_fwd_tanhx_kernels[isa](n, in1, o2, NULL);
        const float *in2[2] = {g, x};
        float *o3[1] = {d[isa]};
        og_mish_bwd_kernels[isa](n, in2, o3, NULL);
        const float *in3[3] = {g, x, t[OPGRAD_ISA_SCALAR]};
        float *o4[1] = {dt[isa]};
        og_mish_bwd_tanhx_kernels[isa](n, in3, o4, NULL);

        // The public API with this ISA selected gives the same bits.
        opgrad_set_max_isa((opgrad_isa)isa);
        int64_t dims[1] = {(int64_t)n};
        aclTensor *tx = test_tensor(dims, 1, ACL_FLOAT, (void *)x);
        aclTensor *tg = test_tensor(dims, 1, ACL_FLOAT, (void *)g);
        aclTensor *ta = test_tensor(dims, 1, ACL_FLOAT, api);
        aclnnStatus s;
        OP_RUN(s, aclnnMishGetWorkspaceSize(tx, ta, &ws_, &ex_), aclnnMish);
        CHECK_EQ(s, ACLNN_SUCCESS);
        if (memcmp(api, y[isa], n * 4)) st[isa].api_mismatch++;
        OP_RUN(s, aclnnMishBackwardGetWorkspaceSize(tg, tx, ta, &ws_, &ex_), aclnnMishBackward);
        CHECK_EQ(s, ACLNN_SUCCESS);
        if (memcmp(api, d[isa], n * 4)) st[isa].api_mismatch++;
        aclDestroyTensor(tx), aclDestroyTensor(tg), aclDestroyTensor(ta);
    }
    opgrad_set_max_isa(OPGRAD_ISA_COUNT - 1);
    const float *ts = t[OPGRAD_ISA_SCALAR];
    for (size_t i = 0; i < n; i++) {
        double xv = x[i], gv = g[i];
        double ry = og_ref_mish(xv), rt = og_ref_mish_tanhx(xv);
        double rd = gv * og_ref_mish_grad(xv), rdt = og_ref_mish_grad_tanhx(gv, xv, ts[i]);
        for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
            if (!test_isa_available(isa)) continue;
            acc_stats *s = &st[isa];
            if (test_f2u(y[isa][i]) != test_f2u(y[0][i]) ||
                test_f2u(t[isa][i]) != test_f2u(t[0][i]) ||
                test_f2u(d[isa][i]) != test_f2u(d[0][i]) ||
                test_f2u(dt[isa][i]) != test_f2u(dt[0][i]) ||
                test_f2u(yt[isa][i]) != test_f2u(y[0][i])) {
                if (s->mismatch++ < 5)
                    fprintf(
                        stderr,
                        "    %s differs from scalar (or fwd_tanhx's y from fwd's) at x=%a g=%a\n",
                        opgrad_isa_name((opgrad_isa)isa), x[i], g[i]);
            }
            double uf = test_ulp_error(ACL_FLOAT, y[isa][i], ry);
            double ut = test_ulp_error(ACL_FLOAT, t[isa][i], rt);
            s->fwd = fmax(s->fwd, uf);
            s->t = fmax(s->t, ut);
            bool ok = uf <= FWD_ULP_BOUND && ut <= FWD_ULP_BOUND;
            bwd_verdict v = judge_bwd(gv, xv, rt, rd, d[isa][i], false);
            bwd_verdict vt = judge_bwd(gv, xv, ts[i], rdt, dt[isa][i], true);
            if (v.root) {
                s->bwd_root_ulp = fmax(s->bwd_root_ulp, v.ulp);
                s->bwd_root_abs = fmax(s->bwd_root_abs, v.abs_rel);
                s->bwdt_root_ulp = fmax(s->bwdt_root_ulp, vt.ulp);
            } else {
                if (v.ulp > s->bwd) s->bwd = v.ulp, s->bwd_worst_x = xv, s->bwd_worst_g = gv;
                if (gv == 1.0 && v.ulp > s->bwd_g1) s->bwd_g1 = v.ulp, s->bwd_g1_x = xv;
                if (vt.ulp > s->bwdt) s->bwdt = vt.ulp, s->bwdt_worst_x = xv;
            }
            if (vt.ulp > BWD_ULP_BOUND) s->bwdt_abs = fmax(s->bwdt_abs, vt.abs_rel);
            ok = ok && v.ok && vt.ok;
            if (!ok && s->viol++ < 8)
                fprintf(stderr,
                        "    %s x=%a g=%a: y=%a(%.2fu) t=%a(%.2fu) d=%a ref=%a (%.2fu) dt=%a "
                        "ref=%a (%.2fu)\n",
                        opgrad_isa_name((opgrad_isa)isa), x[i], g[i], y[isa][i], uf, t[isa][i], ut,
                        d[isa][i], rd, v.ulp, dt[isa][i], rdt, vt.ulp);
        }
    }
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!test_isa_available(isa)) continue;
        free(y[isa]), free(yt[isa]), free(t[isa]), free(d[isa]), free(dt[isa]);
    }
    free(api);
}

static void test_fp32_sample(void) {
    bool quick = test_quick_mode();
    size_t n_rand = quick ? (size_t)1 << 17 : (size_t)1 << 22;
    size_t n_grid = quick ? (size_t)1 << 15 : (size_t)1 << 21;
    uint32_t step = quick ? 64 : 1; // every fp32 value of the windows below (or every 64th)
    // Windows of consecutive fp32 values: the root of mish' and both edges of the [-1.4, -1.0]
    // exemption, where the cancellation is strongest outside it.
    static const float windows[][2] = {{-1.15f, -1.23f}, {-0.97f, -1.0f}, {-1.4f, -1.43f}};
    enum { NWIN = sizeof windows / sizeof windows[0] };
    const size_t CH = 65536;
    float *x = malloc(CH * 4), *g = malloc(CH * 4);
    memset(g_fp32_stats, 0, sizeof g_fp32_stats);
    test_rng r;
    test_rng_seed(&r, 20240611);
    static const float gset[] = {1.0f, -0.75f, 3.5f, 0x1p-10f};
    size_t m = 0, total = 0, n_win = 0;
    // phase 0: random bit patterns; 1: grid over [-20, 20]; 2..2+NWIN-1: the windows; last: the
    // special values
    for (int phase = 0; phase < 3 + NWIN; phase++) {
        bool win = phase >= 2 && phase < 2 + NWIN, last = phase == 2 + NWIN;
        uint32_t wlo = win ? test_f2u(windows[phase - 2][0]) : 0,
                 whi = win ? test_f2u(windows[phase - 2][1]) : 0;
        size_t count = phase == 0   ? n_rand
                       : phase == 1 ? n_grid
                       : win        ? (whi - wlo) / step + 1
                                    : NSPECIALS;
        if (win) n_win += count;
        for (size_t i = 0; i < count; i++) {
            float xv;
            if (phase == 0)
                xv = test_u2f((uint32_t)(test_rng_next(&r) >> 32));
            else if (phase == 1)
                xv = (float)(-20.0 + 40.0 * (double)i / (double)n_grid);
            else if (win)
                xv = test_u2f(wlo + (uint32_t)i * step);
            else
                xv = SPECIALS[i];
            x[m] = xv;
            g[m] =
                (total + m) % 5 == 4 ? (float)test_rng_uniform(&r, -8, 8) : gset[(total + m) % 5];
            if (++m == CH || (last && i == count - 1)) {
                fp32_chunk(m, x, g, g_fp32_stats);
                total += m;
                m = 0;
            }
        }
    }
    printf(
        "  fp32: %zu inputs (%zu random bit patterns, %zu grid points in [-20, 20], %zu values in "
        "windows of consecutive fp32 values: [-1.23, -1.15], [-1.0, -0.97], [-1.43, -1.4]%s; "
        "specials)\n",
        total, n_rand, n_grid, n_win, step == 1 ? "" : " (every 64th)");
    printf("    %-7s %8s %8s %8s %10s %14s %10s %10s %14s\n", "isa", "fwd", "tanhx", "bwd",
           "bwd@root", "bwd@root abs", "bwdT", "bwdT@root", "bwdT>5u abs");
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!test_isa_available(isa)) continue;
        acc_stats *s = &g_fp32_stats[isa];
        printf("    %-7s %8.3f %8.3f %8.3f %10.3g %14.3f %10.3f %10.3g %14.3f\n",
               opgrad_isa_name((opgrad_isa)isa), s->fwd, s->t, s->bwd, s->bwd_root_ulp,
               s->bwd_root_abs, s->bwdt, s->bwdt_root_ulp, s->bwdt_abs);
        printf("            worst bwd outside [-1.4, -1.0]: x=%a g=%a; with g = 1 (mish' alone): "
               "%.3f ulp "
               "at x=%a; worst bwdT: x=%a\n",
               s->bwd_worst_x, s->bwd_worst_g, s->bwd_g1, s->bwd_g1_x, s->bwdt_worst_x);
        CHECKF(s->viol == 0, "%s: %ld accuracy violations", opgrad_isa_name((opgrad_isa)isa),
               s->viol);
        CHECKF(s->mismatch == 0, "%s: %ld inputs not bitwise identical to the scalar build",
               opgrad_isa_name((opgrad_isa)isa), s->mismatch);
        CHECKF(s->api_mismatch == 0, "%s: %ld API runs differ from the direct kernel",
               opgrad_isa_name((opgrad_isa)isa), s->api_mismatch);
    }
    printf("    (ulp = max error in fp32 ulps; 'abs' = max |err| / (2^-24 |g| M), bound %.0f;\n"
           "     bwdT>5u abs: that ratio over the tanhx-branch results beyond 5 ulp)\n",
           ROOT_ABS_FACTOR);
    free(x), free(g);
}

// ---------------------------------------------------------------------------------------------
// Public API: fp32 / fp16 / bf16 at the sizes around the tiles, threads, canaries, in place

typedef struct api_bufs {
    gbuf g, x, t, y, y2, tt, d, dt;
} api_bufs;

static double expect16(aclDataType dt, float v) { return test_round_to(dt, (double)v); }

static bool same_value(aclDataType dt, const void *base, int64_t i, double want) {
    double got = test_load(base, i, dt);
    if (isnan(want)) return isnan(got);
    return got == want && signbit(got) == signbit(want);
}

static void test_api_sizes(void) {
    size_t sizes[512];
    int ns = size_list(sizes, 512);
    static const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    static const int threads[] = {1, 3};
    int saved_threads = opgrad_get_num_threads();
    long bad = 0, guard_bad = 0;
    for (int s = 0; s < ns; s++) {
        size_t n = sizes[s];
        if (n == 0) continue; // empty tensors: covered by the API tests
        size_t bytes = n * 4;
        float *g = malloc(bytes), *x = malloc(bytes), *unused = malloc(bytes);
        fill_inputs(n, g, x, NULL, 5000 + n);
        for (int di = 0; di < 3; di++) {
            aclDataType dt = dts[di];
            size_t es = dt == ACL_FLOAT ? 4 : 2;
            // Inputs in dt; the float values the kernel sees.
            float *gx = malloc(bytes), *xx = malloc(bytes);
            api_bufs b = {gbuf_new(n, es), gbuf_new(n, es), gbuf_new(n, es), gbuf_new(n, es),
                          gbuf_new(n, es), gbuf_new(n, es), gbuf_new(n, es), gbuf_new(n, es)};
            for (size_t i = 0; i < n; i++) {
                test_store(b.g.data, (int64_t)i, dt, g[i]);
                test_store(b.x.data, (int64_t)i, dt, x[i]);
                gx[i] = (float)test_load(b.g.data, (int64_t)i, dt);
                xx[i] = (float)test_load(b.x.data, (int64_t)i, dt);
            }
            // expected fp32 results (scalar build), then rounded to dt
            float *ey = malloc(bytes), *et = malloc(bytes), *ed = malloc(bytes),
                  *edt = malloc(bytes);
            float *et16 = malloc(bytes);
            {
                const float *in1[1] = {xx};
                float *o1[1] = {ey};
                og_mish_fwd__scalar(n, in1, o1, NULL);
                float *o2[2] = {unused, et};
                og_mish_fwd_tanhx__scalar(n, in1, o2, NULL);
                for (size_t i = 0; i < n; i++)
                    et16[i] = dt == ACL_FLOAT ? et[i] : (float)expect16(dt, et[i]);
                const float *in2[2] = {gx, xx};
                float *o3[1] = {ed};
                og_mish_bwd__scalar(n, in2, o3, NULL);
                const float *in3[3] = {gx, xx, et16};
                float *o4[1] = {edt};
                og_mish_bwd_tanhx__scalar(n, in3, o4, NULL);
            }
            int64_t dims[1] = {(int64_t)n};
            aclTensor *tg = test_tensor(dims, 1, dt, b.g.data),
                      *tx = test_tensor(dims, 1, dt, b.x.data);
            aclTensor *ty = test_tensor(dims, 1, dt, b.y.data),
                      *ty2 = test_tensor(dims, 1, dt, b.y2.data);
            aclTensor *ttt = test_tensor(dims, 1, dt, b.tt.data),
                      *td = test_tensor(dims, 1, dt, b.d.data);
            aclTensor *tdt = test_tensor(dims, 1, dt, b.dt.data);
            for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
                if (!test_isa_available(isa)) continue;
                opgrad_set_max_isa((opgrad_isa)isa);
                for (int th = 0; th < 2; th++) {
                    opgrad_set_num_threads(threads[th]);
                    aclnnStatus st;
                    OP_RUN(st, aclnnMishGetWorkspaceSize(tx, ty, &ws_, &ex_), aclnnMish);
                    CHECK_EQ(st, ACLNN_SUCCESS);
                    OP_RUN(st, aclnnMishWithTanhxGetWorkspaceSize(tx, ty2, ttt, &ws_, &ex_),
                           aclnnMishWithTanhx);
                    CHECK_EQ(st, ACLNN_SUCCESS);
                    OP_RUN(st, aclnnMishBackwardGetWorkspaceSize(tg, tx, td, &ws_, &ex_),
                           aclnnMishBackward);
                    CHECK_EQ(st, ACLNN_SUCCESS);
                    OP_RUN(st,
                           aclnnMishBackwardWithTanhxGetWorkspaceSize(tg, tx, ttt, tdt, &ws_, &ex_),
                           aclnnMishBackwardWithTanhx);
                    CHECK_EQ(st, ACLNN_SUCCESS);
                    long nb = 0;
                    for (size_t i = 0; i < n; i++) {
                        int64_t ii = (int64_t)i;
                        bool ok = same_value(dt, b.y.data, ii, expect16(dt, ey[i])) &&
                                  same_value(dt, b.y2.data, ii, expect16(dt, ey[i])) &&
                                  same_value(dt, b.tt.data, ii, expect16(dt, et[i])) &&
                                  same_value(dt, b.d.data, ii, expect16(dt, ed[i])) &&
                                  same_value(dt, b.dt.data, ii, expect16(dt, edt[i]));
                        if (!ok && nb++ < 3)
                            fprintf(
                                stderr,
                                "    %s %s threads=%d n=%zu i=%zu x=%a: y=%a/%a t=%a d=%a dt=%a "
                                "expected %a %a %a %a\n",
                                og_dtype_name(dt), opgrad_isa_name((opgrad_isa)isa), threads[th], n,
                                i, xx[i], test_load(b.y.data, ii, dt), test_load(b.y2.data, ii, dt),
                                test_load(b.tt.data, ii, dt), test_load(b.d.data, ii, dt),
                                test_load(b.dt.data, ii, dt), expect16(dt, ey[i]),
                                expect16(dt, et[i]), expect16(dt, ed[i]), expect16(dt, edt[i]));
                    }
                    bad += nb;
                    gbuf *all[] = {&b.g, &b.x, &b.t, &b.y, &b.y2, &b.tt, &b.d, &b.dt};
                    for (int q = 0; q < 8; q++)
                        if (!gbuf_guards_ok(all[q]) && guard_bad++ < 5)
                            fprintf(stderr,
                                    "    %s %s threads=%d n=%zu: buffer %d guard overwritten\n",
                                    og_dtype_name(dt), opgrad_isa_name((opgrad_isa)isa),
                                    threads[th], n, q);

                    // In place: aclnnInplaceMish, and gradInput sharing gradOutput's / self's /
                    // tanhx's memory element for element.
                    memcpy(b.t.data, b.x.data, n * es);
                    aclTensor *tin = test_tensor(dims, 1, dt, b.t.data);
                    OP_RUN(st, aclnnInplaceMishGetWorkspaceSize(tin, &ws_, &ex_), aclnnInplaceMish);
                    CHECK_EQ(st, ACLNN_SUCCESS);
                    long ni = 0;
                    for (size_t i = 0; i < n; i++)
                        ni += !same_value(dt, b.t.data, (int64_t)i, expect16(dt, ey[i]));
                    for (int alias = 0; alias < 2; alias++) {
                        memcpy(b.t.data, alias ? b.x.data : b.g.data, n * es);
                        aclTensor *ta = test_tensor(dims, 1, dt, b.t.data);
                        OP_RUN(st,
                               alias ? aclnnMishBackwardGetWorkspaceSize(tg, ta, ta, &ws_, &ex_)
                                     : aclnnMishBackwardGetWorkspaceSize(ta, tx, ta, &ws_, &ex_),
                               aclnnMishBackward);
                        CHECK_EQ(st, ACLNN_SUCCESS);
                        for (size_t i = 0; i < n; i++)
                            ni += !same_value(dt, b.t.data, (int64_t)i, expect16(dt, ed[i]));
                        aclDestroyTensor(ta);
                    }
                    memcpy(b.t.data, b.tt.data, n * es);
                    OP_RUN(st,
                           aclnnMishBackwardWithTanhxGetWorkspaceSize(tg, tx, tin, tin, &ws_, &ex_),
                           aclnnMishBackwardWithTanhx);
                    CHECK_EQ(st, ACLNN_SUCCESS);
                    for (size_t i = 0; i < n; i++)
                        ni += !same_value(dt, b.t.data, (int64_t)i, expect16(dt, edt[i]));
                    aclDestroyTensor(tin);
                    if (ni && bad < 100)
                        fprintf(stderr, "    %s %s threads=%d n=%zu: %ld in-place mismatches\n",
                                og_dtype_name(dt), opgrad_isa_name((opgrad_isa)isa), threads[th], n,
                                ni);
                    bad += ni;
                    if (!gbuf_guards_ok(&b.t) && guard_bad++ < 5)
                        fprintf(stderr, "    %s %s n=%zu: in-place guard overwritten\n",
                                og_dtype_name(dt), opgrad_isa_name((opgrad_isa)isa), n);
                }
            }
            aclDestroyTensor(tg), aclDestroyTensor(tx), aclDestroyTensor(ty), aclDestroyTensor(ty2);
            aclDestroyTensor(ttt), aclDestroyTensor(td), aclDestroyTensor(tdt);
            gbuf *all[] = {&b.g, &b.x, &b.t, &b.y, &b.y2, &b.tt, &b.d, &b.dt};
            for (int q = 0; q < 8; q++) gbuf_free(all[q]);
            free(gx), free(xx), free(ey), free(et), free(ed), free(edt), free(et16);
        }
        free(g), free(x), free(unused);
    }
    opgrad_set_num_threads(saved_threads);
    opgrad_set_max_isa(OPGRAD_ISA_COUNT - 1);
    CHECKF(bad == 0, "%ld API results differ from the direct kernels", bad);
    CHECKF(guard_bad == 0, "%ld guard violations", guard_bad);
}

// ---------------------------------------------------------------------------------------------
// fp16 / bf16: every encoding of x through the public API, per ISA

enum { NX = 65536, NG = 5 };

typedef struct ulp_row {
    double fwd, t, bwd, bwdt, bwdt_exact, bwd_small, bwdt_small;
    long viol;
} ulp_row;
static ulp_row g_rows16[2][OPGRAD_ISA_COUNT];

static void exhaustive16(aclDataType dt, int row) {
    double gvals[NG] = {1.0, -0.75, 3.5, 0x1p-10, dt == ACL_FLOAT16 ? 1000.0 : 1e30};
    uint16_t *xs = malloc(NX * 2), *x5 = malloc(NX * NG * 2), *g5 = malloc(NX * NG * 2);
    uint16_t *y = malloc(NX * 2), *y2 = malloc(NX * 2), *t = malloc(NX * 2),
             *t5 = malloc(NX * NG * 2);
    uint16_t *d = malloc(NX * NG * 2), *dtx = malloc(NX * NG * 2), *db = malloc(NX * NG * 2);
    uint16_t *gb = malloc(NG * 2);
    uint16_t *prev_y = malloc(NX * 2), *prev_t = malloc(NX * 2), *prev_d = malloc(NX * NG * 2),
             *prev_dt = malloc(NX * NG * 2);
    double *gv = malloc(NG * sizeof *gv);
    for (int j = 0; j < NG; j++) {
        test_store(gb, j, dt, gvals[j]);
        gv[j] = test_load(gb, j, dt); // the grad value actually stored (1e30 is rounded in bf16)
    }
    for (int i = 0; i < NX; i++) xs[i] = (uint16_t)i;
    for (int j = 0; j < NG; j++)
        for (int i = 0; i < NX; i++) x5[j * NX + i] = (uint16_t)i, g5[j * NX + i] = gb[j];
    double *ry = malloc(NX * sizeof *ry), *rt = malloc(NX * sizeof *rt),
           *rg = malloc(NX * sizeof *rg);
    for (int i = 0; i < NX; i++) {
        double xv = test_load(xs, i, dt);
        ry[i] = og_ref_mish(xv), rt[i] = og_ref_mish_tanhx(xv), rg[i] = og_ref_mish_grad(xv);
    }
    int64_t d1[1] = {NX}, d2[2] = {NG, NX}, dg[2] = {NG, 1};
    aclTensor *tx = test_tensor(d1, 1, dt, xs), *ty = test_tensor(d1, 1, dt, y),
              *ty2 = test_tensor(d1, 1, dt, y2), *tt = test_tensor(d1, 1, dt, t);
    aclTensor *tx5 = test_tensor(d2, 2, dt, x5), *tg5 = test_tensor(d2, 2, dt, g5),
              *tt5 = test_tensor(d2, 2, dt, t5), *td = test_tensor(d2, 2, dt, d),
              *tdt = test_tensor(d2, 2, dt, dtx), *tdb = test_tensor(d2, 2, dt, db);
    aclTensor *tgb = test_tensor(dg, 2, dt, gb);
    int first = -1;
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!test_isa_available(isa)) continue;
        ulp_row *r = &g_rows16[row][isa];
        memset(r, 0, sizeof *r);
        opgrad_set_max_isa((opgrad_isa)isa);
        aclnnStatus st;
        OP_RUN(st, aclnnMishGetWorkspaceSize(tx, ty, &ws_, &ex_), aclnnMish);
        CHECK_EQ(st, ACLNN_SUCCESS);
        OP_RUN(st, aclnnMishWithTanhxGetWorkspaceSize(tx, ty2, tt, &ws_, &ex_), aclnnMishWithTanhx);
        CHECK_EQ(st, ACLNN_SUCCESS);
        for (int j = 0; j < NG; j++) memcpy(t5 + j * NX, t, NX * 2);
        OP_RUN(st, aclnnMishBackwardGetWorkspaceSize(tg5, tx5, td, &ws_, &ex_), aclnnMishBackward);
        CHECK_EQ(st, ACLNN_SUCCESS);
        OP_RUN(st, aclnnMishBackwardWithTanhxGetWorkspaceSize(tg5, tx5, tt5, tdt, &ws_, &ex_),
               aclnnMishBackwardWithTanhx);
        CHECK_EQ(st, ACLNN_SUCCESS);
        // the same backward with gradOutput broadcast from [5, 1]: same bits
        OP_RUN(st, aclnnMishBackwardGetWorkspaceSize(tgb, tx, tdb, &ws_, &ex_), aclnnMishBackward);
        CHECK_EQ(st, ACLNN_SUCCESS);
        CHECKF(memcmp(db, d, NX * NG * 2) == 0, "%s %s: broadcast gradOutput gives other bits",
               og_dtype_name(dt), opgrad_isa_name((opgrad_isa)isa));
        CHECKF(memcmp(y, y2, NX * 2) == 0, "%s %s: aclnnMishWithTanhx's out differs from aclnnMish",
               og_dtype_name(dt), opgrad_isa_name((opgrad_isa)isa));
        for (int i = 0; i < NX; i++) {
            double xv = test_load(xs, i, dt);
            double uf = test_ulp_error(dt, test_load(y, i, dt), ry[i]);
            double ut = test_ulp_error(dt, test_load(t, i, dt), rt[i]);
            r->fwd = fmax(r->fwd, uf), r->t = fmax(r->t, ut);
            if ((uf > 1 || ut > 1) && r->viol++ < 6)
                fprintf(
                    stderr,
                    "    %s %s x=%a: mish=%a ref=%.9g (%.2f ulp), tanhx=%a ref=%.9g (%.2f ulp)\n",
                    og_dtype_name(dt), opgrad_isa_name((opgrad_isa)isa), xv, test_load(y, i, dt),
                    ry[i], uf, test_load(t, i, dt), rt[i], ut);
            double tv = test_load(t, i, dt);
            for (int j = 0; j < NG; j++) {
                int64_t k = (int64_t)j * NX + i;
                double ref = gv[j] * rg[i];
                double ub = test_ulp_error(dt, test_load(d, k, dt), ref);
                double reft = og_ref_mish_grad_tanhx(gv[j], xv, tv);
                double ubt = test_ulp_error(dt, test_load(dtx, k, dt), reft);
                double ube = test_ulp_error(dt, test_load(dtx, k, dt), ref);
                r->bwd = fmax(r->bwd, ub), r->bwdt = fmax(r->bwdt, ubt);
                r->bwdt_exact = fmax(r->bwdt_exact, ube);
                if (j < NG - 1)
                    r->bwd_small = fmax(r->bwd_small, ub), r->bwdt_small = fmax(r->bwdt_small, ubt);
                if ((ub > 1 || ubt > 1) && r->viol++ < 6)
                    fprintf(stderr,
                            "    %s %s x=%a g=%g: bwd=%a ref=%.9g (%.2f ulp); bwd_tanhx(t=%a)=%a "
                            "ref=%.9g (%.2f ulp)\n",
                            og_dtype_name(dt), opgrad_isa_name((opgrad_isa)isa), xv, gv[j],
                            test_load(d, k, dt), ref, ub, tv, test_load(dtx, k, dt), reft, ubt);
            }
        }
        CHECKF(r->viol == 0, "%s %s: %ld results more than 1 ulp from float64", og_dtype_name(dt),
               opgrad_isa_name((opgrad_isa)isa), r->viol);
        if (first < 0) {
            first = isa;
            memcpy(prev_y, y, NX * 2), memcpy(prev_t, t, NX * 2);
            memcpy(prev_d, d, NX * NG * 2), memcpy(prev_dt, dtx, NX * NG * 2);
        } else {
            CHECKF(memcmp(prev_y, y, NX * 2) == 0 && memcmp(prev_t, t, NX * 2) == 0 &&
                       memcmp(prev_d, d, NX * NG * 2) == 0 &&
                       memcmp(prev_dt, dtx, NX * NG * 2) == 0,
                   "%s: %s results differ bitwise from %s", og_dtype_name(dt),
                   opgrad_isa_name((opgrad_isa)isa), opgrad_isa_name((opgrad_isa)first));
        }
    }
    opgrad_set_max_isa(OPGRAD_ISA_COUNT - 1);
    aclTensor *all[] = {tx, ty, ty2, tt, tx5, tg5, tt5, td, tdt, tdb, tgb};
    for (size_t q = 0; q < sizeof all / sizeof *all; q++) aclDestroyTensor(all[q]);
    free(xs), free(x5), free(g5), free(y), free(y2), free(t), free(t5), free(d), free(dtx),
        free(db);
    free(gb), free(prev_y), free(prev_t), free(prev_d), free(prev_dt), free(gv), free(ry), free(rt),
        free(rg);
}

static void test_fp16_exhaustive(void) { exhaustive16(ACL_FLOAT16, 0); }
static void test_bf16_exhaustive(void) { exhaustive16(ACL_BF16, 1); }

static void print_table(void) {
    printf("\nmax error in ulps of the output dtype against the exact float64 value\n");
    printf("  %-8s %-7s %9s %9s %9s %11s %11s   %s\n", "dtype", "isa", "forward", "tanhx",
           "backward", "bwd_tanhx", "bwdT-exact", "note");
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!test_isa_available(isa)) continue;
        acc_stats *s = &g_fp32_stats[isa];
        printf("  %-8s %-7s %9.3f %9.3f %9.3f %11.3f %11s   x in [-1.4,-1]: bwd %.3g ulp = %.2f x "
               "2^-24|g|M, bwd_tanhx %.3g ulp; bwd_tanhx > 5 ulp: %.2f x 2^-24|g|M\n",
               "float32", opgrad_isa_name((opgrad_isa)isa), s->fwd, s->t, s->bwd, s->bwdt, "-",
               s->bwd_root_ulp, s->bwd_root_abs, s->bwdt_root_ulp, s->bwdt_abs);
    }
    const char *names[2] = {"float16", "bfloat16"};
    for (int row = 0; row < 2; row++)
        for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
            if (!test_isa_available(isa)) continue;
            ulp_row *r = &g_rows16[row][isa];
            printf(
                "  %-8s %-7s %9.3f %9.3f %9.3f %11.3f %11.3f   exhaustive x, 5 grads; without the "
                "large grad: bwd %.3f, bwd_tanhx %.3f\n",
                names[row], opgrad_isa_name((opgrad_isa)isa), r->fwd, r->t, r->bwd, r->bwdt,
                r->bwdt_exact, r->bwd_small, r->bwdt_small);
        }
    printf(
        "  (bwd_tanhx: against g (t + x sig(x) (1 - t^2)) with the stored t; bwdT-exact: the same\n"
        "   output against the exact g mish'(x), for information: t is rounded to the dtype)\n");
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++)
        if (!test_isa_available(isa))
            printf("  %-7s: not supported by this CPU, skipped\n",
                   opgrad_isa_name((opgrad_isa)isa));
}

int main(void) {
    RUN(test_kernel_tables);
    RUN(test_engine_tiles);
    RUN(test_kernel_sizes);
    RUN(test_kernel_inplace);
    RUN(test_special_values);
    RUN(test_large_grad_tiny_derivative);
    RUN(test_fp32_sample);
    RUN(test_api_sizes);
    RUN(test_fp16_exhaustive);
    RUN(test_bf16_exhaustive);
    print_table();
    return test_summary();
}
