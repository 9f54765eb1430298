/* Kernel-level tests of the sigmoid family (sigmoid, tanh, silu, gelu tanh/erf, softplus), the
 * compute functions called directly and through the public aclnn API with the ISA selected by
 * opgrad_set_max_isa.
 *
 *  - every ISA this CPU has (higher ones are skipped with a note);
 *  - sizes 0..49 and around the engine's real tile widths (from og_ew_make_plan), with guard
 *    canaries around every output, inputs left untouched, and in-place calls (out == in);
 *  - special values and mathematical limits (+-0, +-inf, NaN, subnormals);
 *  - fp32: a large sample (random bit patterns over all exponents, a dense grid over [-30, 30],
 *    every fp32 value in windows around the roots of the derivatives and the tanh switch) at
 *    several gradOutput values, against the float64 references with the checker's rule
 *    |err| <= c ulp + c 2^-24 M + 2^-149 (c the operator's fp32 bound, M the magnitude of the
 *    terms of a cancelling sum); the max ulp (where M <= 2 |f|) and the max err / (2^-24 M) per
 *    kernel and ISA are printed; all ISAs bitwise identical; the API gives the kernel's bits;
 *  - large gradOutput where the derivative is far below the normal range;
 *  - fp16 / bf16: all 65,536 encodings of x (of y for the backward from the output) through
 *    every operator's public API, at five gradOutput values: within 1 ulp of the exact float64
 *    value, on every ISA, bitwise identical across ISAs; a table is printed;
 *  - the public API at the sizes around the tiles, 1 and 3 threads, fp32 / fp16 / bf16: the
 *    direct kernel's result rounded to the dtype, canaries intact, in-place variants;
 *  - cycles per element of every kernel with L1-resident data (information only).
 * OPGRAD_TEST_QUICK=1 shrinks the random fp32 sample, runs each API size with one thread count
 * (alternating) and times 3 runs (sizes only; the bounds never change). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_gelu.h"
#include "aclnnop/aclnn_gelu_backward.h"
#include "aclnnop/aclnn_gelu_backward_v2.h"
#include "aclnnop/aclnn_gelu_v2.h"
#include "aclnnop/aclnn_sigmoid.h"
#include "aclnnop/aclnn_sigmoid_backward.h"
#include "aclnnop/aclnn_silu.h"
#include "aclnnop/aclnn_silu_backward.h"
#include "aclnnop/aclnn_softplus.h"
#include "aclnnop/aclnn_softplus_backward.h"
#include "aclnnop/aclnn_tanh.h"
#include "aclnnop/aclnn_tanh_backward.h"
#include "check/ref_activation.h"
#include "engine/elementwise.h"
#include "opgrad/opgrad.h"
#include "ops/activation/gelu/gelu_kernel.h"
#include "ops/activation/sigmoid/sigmoid_kernel.h"
#include "ops/activation/silu/silu_kernel.h"
#include "ops/activation/softplus/softplus_kernel.h"
#include "ops/activation/tanh/tanh_kernel.h"
#include "tensor/dtype.h"
#include "test.h"
#include "testutil.h"

// ---------------------------------------------------------------------------------------------
// Helpers

static const char *isa_name(int isa) { return opgrad_isa_name((opgrad_isa)isa); }

// ---------------------------------------------------------------------------------------------
// The kernels under test

enum {
    K_SIG_F,
    K_SIG_B,
    K_TANH_F,
    K_TANH_B,
    K_SILU_F,
    K_SILU_B,
    K_GT_F,
    K_GT_B,
    K_GE_F,
    K_GE_B,
    K_SP_F,
    K_SP_B,
    K_SPO_F,
    K_SPO_B,
    K_COUNT
};

static const og_softplus_params SP_DEFAULT = {1.0f, 20.0f}; // PyTorch's defaults
static const og_softplus_params SP_ODD = {0.7f, 12.0f};     // beta not a power of two

typedef struct kinfo {
    const char *name;
    const og_ew_compute_fn *table;
    int nin;          // 1: forward (x); 2: backward (g, x) or (g, y)
    bool from_output; // backward whose second input is the forward's output
    const og_softplus_params *params;
    double bound; // c of the checker's rule (the registry's fp32_ulps), and
                  // the max ulp allowed where M <= 2 |f|
    int fwd;      // the forward kernel of a backward (to make y), or -1
} kinfo;

static const kinfo KERNELS[K_COUNT] = {
    {"sigmoid_fwd", og_sigmoid_fwd_kernels, 1, false, NULL, 3, -1},
    {"sigmoid_bwd", og_sigmoid_bwd_kernels, 2, true, NULL, 3, K_SIG_F},
    {"tanh_fwd", og_tanh_fwd_kernels, 1, false, NULL, 2, -1},
    {"tanh_bwd", og_tanh_bwd_kernels, 2, true, NULL, 2, K_TANH_F},
    {"silu_fwd", og_silu_fwd_kernels, 1, false, NULL, 3.5, -1},
    {"silu_bwd", og_silu_bwd_kernels, 2, false, NULL, 3.5, -1},
    {"gelu_tanh_fwd", og_gelu_tanh_fwd_kernels, 1, false, NULL, 4, -1},
    {"gelu_tanh_bwd", og_gelu_tanh_bwd_kernels, 2, false, NULL, 4, -1},
    {"gelu_erf_fwd", og_gelu_erf_fwd_kernels, 1, false, NULL, 4, -1},
    {"gelu_erf_bwd", og_gelu_erf_bwd_kernels, 2, false, NULL, 4, -1},
    {"softplus_fwd", og_softplus_fwd_kernels, 1, false, &SP_DEFAULT, 3, -1},
    {"softplus_bwd", og_softplus_bwd_kernels, 2, false, &SP_DEFAULT, 3, -1},
    {"softplus_fwd(b=0.7)", og_softplus_fwd_kernels, 1, false, &SP_ODD, 3, -1},
    {"softplus_bwd(b=0.7)", og_softplus_bwd_kernels, 2, false, &SP_ODD, 3, -1},
};

static void run_kernel(int k, int isa, size_t n, const float *const *in, float *const *out) {
    KERNELS[k].table[isa](n, in, out, KERNELS[k].params);
}

/// The exact value (float64 reference) of kernel k at (g, x) (x is y for the backward from the
/// output); *mag = the magnitude bound M (>= |ref|).
static double ref_eval(int k, double g, double x, double *mag) {
    double m = 0, r;
    const og_softplus_params *p = KERNELS[k].params;
    switch (k) {
    case K_SIG_F:
        r = og_ref_act_sigmoid(x);
        break;
    case K_SIG_B:
        r = isinf(x) ? g * -INFINITY : g * og_ref_act_sigmoid_grad_from_output(x);
        break;
    case K_TANH_F:
        r = og_ref_act_tanh(x);
        break;
    case K_TANH_B:
        r = g * og_ref_act_tanh_grad_from_output(x);
        break;
    case K_SILU_F:
        r = og_ref_silu(x);
        break;
    case K_SILU_B:
        r = g * og_ref_silu_grad(x, &m), m *= fabs(g);
        break;
    case K_GT_F:
        r = og_ref_gelu_tanh(x);
        break;
    case K_GT_B:
        r = g * og_ref_gelu_tanh_grad(x, &m), m *= fabs(g);
        break;
    case K_GE_F:
        r = og_ref_gelu_erf(x);
        break;
    case K_GE_B:
        r = g * og_ref_gelu_erf_grad(x, &m), m *= fabs(g);
        break;
    case K_SP_F:
    case K_SPO_F:
        r = og_ref_softplus_bt(x, p->beta, p->threshold);
        break;
    default:
        r = g * og_ref_softplus_bt_grad(x, p->beta, p->threshold);
        break;
    }
    *mag = isfinite(m) && m > fabs(r) ? m : fabs(r);
    return r;
}

typedef struct verdict {
    double ulp;  // fp32 ulps at the reference
    double mrel; // |err| / (2^-24 M + 2^-149)
    bool cond;   // M <= 2 |ref|: the ulp figure is meaningful
    bool ok;
} verdict;

// The checker's rule: |got - ref| <= c ulp(ref) + c 2^-24 M + 2^-149; NaN and inf must match.
static verdict judge(int k, double g, double x, float got) {
    verdict v = {0};
    double mag, ref = ref_eval(k, g, x, &mag);
    v.ulp = test_ulp_error(ACL_FLOAT, got, ref);
    v.cond = mag <= 2 * fabs(ref) || !isfinite(ref);
    double rf = test_round_to(ACL_FLOAT, ref); // beyond the float range: must be that infinity
    if (isinf(rf) && isfinite(ref)) {
        v.ok = got == rf;
        v.ulp = v.mrel = v.ok ? 0 : INFINITY;
        return v;
    }
    if (isnan(ref) || isnan(got) || isinf(ref) || isinf(got)) {
        v.ok = v.ulp == 0;
        v.mrel = v.ok ? 0 : INFINITY;
        return v;
    }
    double err = fabs(got - ref), c = KERNELS[k].bound;
    v.mrel = err / (0x1p-24 * mag + 0x1p-149);
    v.ok = err <= c * test_ulp32(ref) + c * 0x1p-24 * mag + 0x1p-149;
    return v;
}

// ---------------------------------------------------------------------------------------------
// Guarded buffers (tests/common): a sentinel pattern on both sides of the data

// Tile width the engine really uses for nin inputs, one output, dtype dt (asked from the planner).
static int64_t engine_tile(int nin, aclDataType dt) {
    static char dummy[64];
    int64_t dims[1] = {1 << 20};
    og_ew_op op = {.kernels = og_silu_fwd_kernels, .nin = nin, .nout = 1, .compute_dtype = dt};
    aclTensor *ts[3];
    for (int k = 0; k < nin + 1; k++) {
        ts[k] = test_tensor(dims, 1, dt, dummy);
        if (k < nin)
            op.in[k] = ts[k];
        else
            op.out[0] = ts[k];
    }
    og_ew_plan plan;
    og_ew_make_plan(&op, 1, 0, &plan);
    for (int k = 0; k < nin + 1; k++) aclDestroyTensor(ts[k]);
    return plan.tiling.tile_elems;
}

static int size_list(size_t *sizes, int cap) {
    int n = 0;
    for (size_t s = 0; s <= 3 * 16 + 1; s++) sizes[n++] = s;
    aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16};
    for (int d = 0; d < 2; d++)
        for (int nin = 1; nin <= 2; nin++) {
            int64_t t = engine_tile(nin, dts[d]);
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

// ---------------------------------------------------------------------------------------------
// Inputs

static const float SPECIALS[] = {
    0.0f,        -0.0f,   INFINITY, -INFINITY, NAN,      -NAN,     1e-40f,   -1e-40f, 0x1p-149f,
    -0x1p-149f,  FLT_MAX, -FLT_MAX, FLT_MIN,   -FLT_MIN, -0.7518f, -1.2785f, 0.625f,  -0.625f,
    0.62499994f, -87.3f,  -88.7f,   -103.9f,   -104.0f,  -150.0f,  88.8f,    20.0f,   -20.0f,
    -10.5f,      -13.5f,  -14.3f,   9.01f,     16.7f,    1.0f,     -1.0f,    28.6f,   17.2f};
enum { NSPECIALS = sizeof SPECIALS / sizeof SPECIALS[0] };

// x: specials, random bit patterns, uniform in [-20, 20]; g in [-4, 4]; for a backward from
// the output, the second input is y = forward(x) (a realistic output) except for one in eight
// elements, which keep an arbitrary value (the formula holds for any y).
static void fill_inputs(int k, size_t n, float *g, float *x, uint64_t seed) {
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
    if (KERNELS[k].from_output && n) {
        float *y = malloc(n * 4);
        const float *in[1] = {x};
        float *out[1] = {y};
        run_kernel(KERNELS[k].fwd, OPGRAD_ISA_SCALAR, n, in, out);
        for (size_t i = 0; i < n; i++)
            if (i % 8 != 7) x[i] = y[i];
        free(y);
    }
}

static long judge_all(int k, size_t n, const float *g, const float *x, const float *out,
                      const char *what) {
    long bad = 0;
    for (size_t i = 0; i < n; i++) {
        double gv = KERNELS[k].nin == 2 ? g[i] : 1.0;
        verdict v = judge(k, gv, x[i], out[i]);
        if (!v.ok && bad++ < 5)
            fprintf(stderr, "    %s %s: i=%zu x=%a g=%a got=%a (%.2f ulp, %.2f x 2^-24 M)\n", what,
                    KERNELS[k].name, i, x[i], gv, out[i], v.ulp, v.mrel);
    }
    return bad;
}

// ---------------------------------------------------------------------------------------------
// Tables, sizes, canaries, in place

static void test_kernel_tables(void) {
    const og_ew_compute_fn expect[][OPGRAD_ISA_COUNT] = {
        {og_sigmoid_fwd__scalar, og_sigmoid_fwd__avx2, og_sigmoid_fwd__avx512},
        {og_sigmoid_bwd__scalar, og_sigmoid_bwd__avx2, og_sigmoid_bwd__avx512},
        {og_tanh_fwd__scalar, og_tanh_fwd__avx2, og_tanh_fwd__avx512},
        {og_tanh_bwd__scalar, og_tanh_bwd__avx2, og_tanh_bwd__avx512},
        {og_silu_fwd__scalar, og_silu_fwd__avx2, og_silu_fwd__avx512},
        {og_silu_bwd__scalar, og_silu_bwd__avx2, og_silu_bwd__avx512},
        {og_gelu_tanh_fwd__scalar, og_gelu_tanh_fwd__avx2, og_gelu_tanh_fwd__avx512},
        {og_gelu_tanh_bwd__scalar, og_gelu_tanh_bwd__avx2, og_gelu_tanh_bwd__avx512},
        {og_gelu_erf_fwd__scalar, og_gelu_erf_fwd__avx2, og_gelu_erf_fwd__avx512},
        {og_gelu_erf_bwd__scalar, og_gelu_erf_bwd__avx2, og_gelu_erf_bwd__avx512},
        {og_softplus_fwd__scalar, og_softplus_fwd__avx2, og_softplus_fwd__avx512},
        {og_softplus_bwd__scalar, og_softplus_bwd__avx2, og_softplus_bwd__avx512},
        {og_softplus_fwd__scalar, og_softplus_fwd__avx2, og_softplus_fwd__avx512},
        {og_softplus_bwd__scalar, og_softplus_bwd__avx2, og_softplus_bwd__avx512},
    };
    for (int k = 0; k < K_COUNT; k++)
        for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++)
            CHECKF(KERNELS[k].table[isa] == expect[k][og_isa_build((opgrad_isa)isa)],
                   "%s table entry %d", KERNELS[k].name, isa);
    printf("  cpu isa: %s\n", isa_name(opgrad_cpu_isa()));
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++)
        if (!test_isa_available(isa))
            printf("  note: ISA %s not supported by this CPU, skipped\n", isa_name(isa));
}

static void test_kernel_sizes(void) {
    size_t sizes[256];
    int ns = size_list(sizes, 256);
    size_t maxn = 1;
    for (int s = 0; s < ns; s++) maxn = sizes[s] > maxn ? sizes[s] : maxn;
    float *g = malloc(maxn * 4), *x = malloc(maxn * 4), *ref = malloc(maxn * 4);
    long violations = 0;
    for (int s = 0; s < ns; s++) {
        size_t n = sizes[s];
        for (int k = 0; k < K_COUNT; k++) {
            fill_inputs(k, n, g, x, 1000 + n * 31 + (size_t)k);
            int nin = KERNELS[k].nin;
            // inputs at the end of exact-size allocations: an over-read shows under ASan
            float *tight[2] = {0};
            const float *src[2] = {nin == 2 ? g : x, x}, *tin[2];
            for (int j = 0; j < nin; j++) {
                tight[j] = malloc((n ? n : 1) * 4);
                memcpy(tight[j], src[j], n * 4);
                tin[j] = tight[j];
            }
            float *o[1] = {ref};
            run_kernel(k, OPGRAD_ISA_SCALAR, n, tin, o);
            violations += judge_all(k, n, g, x, ref, "scalar");
            for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
                if (!test_isa_available(isa)) continue;
                gbuf out = gbuf_new(n, 4);
                float *oo[1] = {out.data};
                run_kernel(k, isa, n, tin, oo);
                CHECKF(gbuf_guards_ok(&out), "%s/%s n=%zu wrote outside its output",
                       KERNELS[k].name, isa_name(isa), n);
                CHECKF(memcmp(out.data, ref, n * 4) == 0,
                       "%s/%s n=%zu differs from the scalar build", KERNELS[k].name, isa_name(isa),
                       n);
                for (int j = 0; j < nin; j++)
                    CHECKF(memcmp(tight[j], src[j], n * 4) == 0, "%s/%s n=%zu modified input %d",
                           KERNELS[k].name, isa_name(isa), n, j);
                gbuf_free(&out);
            }
            for (int j = 0; j < nin; j++) free(tight[j]);
        }
    }
    CHECKF(violations == 0, "%ld accuracy violations", violations);
    printf("  %d sizes (0..49 and around the tile widths) x %d kernels x ISAs\n", ns, K_COUNT);
    free(g), free(x), free(ref);
}

// out == in[j]: every aliasing an elementwise kernel allows gives the out-of-place result.
static void test_kernel_inplace(void) {
    const size_t ns[] = {0, 1, 7, 15, 16, 17, 31, 33, 100, 1023};
    for (size_t si = 0; si < sizeof ns / sizeof *ns; si++) {
        size_t n = ns[si], bytes = (n ? n : 1) * 4;
        float *g = malloc(bytes), *x = malloc(bytes), *expect = malloc(bytes);
        for (int k = 0; k < K_COUNT; k++) {
            fill_inputs(k, n, g, x, 77 + n + (size_t)k);
            int nin = KERNELS[k].nin;
            const float *src[2] = {nin == 2 ? g : x, x};
            for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
                if (!test_isa_available(isa)) continue;
                float *eo[1] = {expect};
                run_kernel(k, isa, n, src, eo);
                for (int j = 0; j < nin; j++) {
                    float *copy[2];
                    const float *in[2];
                    for (int m = 0; m < nin; m++) {
                        copy[m] = malloc(bytes);
                        memcpy(copy[m], src[m], n * 4);
                        in[m] = copy[m];
                    }
                    float *out[1] = {copy[j]};
                    run_kernel(k, isa, n, in, out);
                    CHECKF(memcmp(copy[j], expect, n * 4) == 0, "%s/%s n=%zu out==in%d",
                           KERNELS[k].name, isa_name(isa), n, j);
                    for (int m = 0; m < nin; m++) free(copy[m]);
                }
            }
        }
        free(g), free(x), free(expect);
    }
}

// ---------------------------------------------------------------------------------------------
// Special values (direct calls, every ISA)

static float run1(int k, int isa, float g, float x) {
    float ig[1] = {g}, ix[1] = {x}, o[1];
    const float *in[2];
    if (KERNELS[k].nin == 1)
        in[0] = ix;
    else
        in[0] = ig, in[1] = ix;
    float *out[1] = {o};
    run_kernel(k, isa, 1, in, out);
    return o[0];
}

static bool same_bits(float a, float b) {
    return (isnan(a) && isnan(b)) || test_f2u(a) == test_f2u(b);
}

static void test_special_values(void) {
    typedef struct {
        int k;
        float g, x, want;
        bool any_zero_sign;
    } expect_t;
    const float ln2 = 0.69314718f;
    const expect_t cases[] = {
        // forward limits and signed zeros
        {K_SIG_F, 0, INFINITY, 1.0f, false},
        {K_SIG_F, 0, -INFINITY, 0.0f, false},
        {K_SIG_F, 0, 0.0f, 0.5f, false},
        {K_SIG_F, 0, -0.0f, 0.5f, false},
        {K_SIG_F, 0, 200.0f, 1.0f, false},
        {K_SIG_F, 0, -200.0f, 0.0f, false},
        {K_TANH_F, 0, INFINITY, 1.0f, false},
        {K_TANH_F, 0, -INFINITY, -1.0f, false},
        {K_TANH_F, 0, 0.0f, 0.0f, false},
        {K_TANH_F, 0, -0.0f, -0.0f, false},
        {K_TANH_F, 0, 0x1p-149f, 0x1p-149f, false},
        {K_TANH_F, 0, -1e-40f, -1e-40f, false},
        {K_TANH_F, 0, 1e-30f, 1e-30f, false},
        {K_TANH_F, 0, 10.0f, 1.0f, false},
        {K_SILU_F, 0, INFINITY, INFINITY, false},
        {K_SILU_F, 0, -INFINITY, -0.0f, false},
        {K_SILU_F, 0, 0.0f, 0.0f, false},
        {K_SILU_F, 0, -0.0f, -0.0f, false},
        {K_SILU_F, 0, FLT_MAX, FLT_MAX, false},
        {K_SILU_F, 0, -FLT_MAX, -0.0f, false},
        {K_GT_F, 0, INFINITY, INFINITY, false},
        {K_GT_F, 0, -INFINITY, -0.0f, false},
        {K_GT_F, 0, 0.0f, 0.0f, false},
        {K_GT_F, 0, -0.0f, -0.0f, false},
        {K_GT_F, 0, FLT_MAX, FLT_MAX, false},
        {K_GT_F, 0, -FLT_MAX, -0.0f, false},
        {K_GE_F, 0, INFINITY, INFINITY, false},
        {K_GE_F, 0, -INFINITY, -0.0f, false},
        {K_GE_F, 0, 0.0f, 0.0f, false},
        {K_GE_F, 0, -0.0f, -0.0f, false},
        {K_GE_F, 0, FLT_MAX, FLT_MAX, false},
        {K_GE_F, 0, -FLT_MAX, -0.0f, false},
        {K_SP_F, 0, INFINITY, INFINITY, false},
        {K_SP_F, 0, -INFINITY, 0.0f, false},
        {K_SP_F, 0, 0.0f, ln2, false},
        {K_SP_F, 0, 25.0f, 25.0f, false},
        {K_SPO_F, 0, INFINITY, INFINITY, false},
        {K_SPO_F, 0, -INFINITY, 0.0f, false},
        {K_SPO_F, 0, -FLT_MAX, 0.0f, false},
        // backward limits
        {K_SILU_B, 1.5f, INFINITY, 1.5f, false},
        {K_SILU_B, 1.5f, -INFINITY, 0.0f, true},
        {K_SILU_B, 2.0f, 0.0f, 1.0f, false},
        {K_SILU_B, 1.5f, FLT_MAX, 1.5f, false},
        {K_GT_B, 1.5f, INFINITY, 1.5f, false},
        {K_GT_B, 1.5f, -INFINITY, 0.0f, true},
        {K_GT_B, 2.0f, 0.0f, 1.0f, false},
        {K_GT_B, -3.0f, -FLT_MAX, 0.0f, true},
        {K_GE_B, 1.5f, INFINITY, 1.5f, false},
        {K_GE_B, 1.5f, -INFINITY, 0.0f, true},
        {K_GE_B, 2.0f, 0.0f, 1.0f, false},
        {K_GE_B, -3.0f, -FLT_MAX, 0.0f, true},
        {K_SP_B, 1.5f, INFINITY, 1.5f, false},
        {K_SP_B, 1.5f, -INFINITY, 0.0f, true},
        {K_SP_B, 2.0f, 0.0f, 1.0f, false},
        {K_SP_B, 1.5f, 25.0f, 1.5f, false},
        {K_SPO_B, 1.5f, INFINITY, 1.5f, false},
        {K_SPO_B, 1.5f, -INFINITY, 0.0f, true},
        {K_SIG_B, 3.0f, 0.0f, 0.0f, true},
        {K_SIG_B, 3.0f, 1.0f, 0.0f, true},
        {K_SIG_B, 3.0f, 0.5f, 0.75f, false},
        {K_SIG_B, 3.0f, INFINITY, -INFINITY, false},
        {K_TANH_B, 3.0f, 1.0f, 0.0f, true},
        {K_TANH_B, 3.0f, -1.0f, 0.0f, true},
        {K_TANH_B, 3.0f, 0.0f, 3.0f, false},
        {K_TANH_B, 3.0f, INFINITY, -INFINITY, false},
        // gradOutput +-inf and -0 through the fast paths: the sign and infinity of the product
        {K_SILU_B, INFINITY, -1.0f, INFINITY, false},
        {K_SILU_B, -INFINITY, -0.3f, -INFINITY, false},
        {K_SILU_B, -0.0f, -1.0f, -0.0f, false},
        {K_SILU_B, -0.0f, -3.0f, 0.0f, false},
        {K_SILU_B, -0.0f, 2.0f, -0.0f, false},
        {K_SP_B, INFINITY, -1.0f, INFINITY, false},
        {K_SP_B, -INFINITY, -3.0f, -INFINITY, false},
        {K_SP_B, -0.0f, -1.0f, -0.0f, false},
        {K_SP_B, -0.0f, 2.0f, -0.0f, false},
        {K_SPO_B, INFINITY, -10.0f, INFINITY, false},
        {K_SPO_B, -0.0f, -0.3f, -0.0f, false},
        // huge gradOutput where the derivative is exactly 0 or 1 in the limit
        {K_SILU_B, FLT_MAX, -INFINITY, 0.0f, true},
        {K_GE_B, FLT_MAX, -INFINITY, 0.0f, true},
        {K_SILU_B, FLT_MAX, INFINITY, FLT_MAX, false},
        {K_SP_B, FLT_MAX, -INFINITY, 0.0f, true},
    };
    long bad = 0;
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!test_isa_available(isa)) continue;
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
            const expect_t *e = &cases[c];
            float got = run1(e->k, isa, e->g, e->x);
            bool ok = e->any_zero_sign ? got == 0.0f : same_bits(got, e->want);
            if (!ok && bad++ < 12)
                fprintf(stderr, "    %s %s(g=%a, x=%a) = %a, want %a\n", isa_name(isa),
                        KERNELS[e->k].name, e->g, e->x, got, e->want);
        }
        // NaN propagates from every input
        static const float nans[] = {NAN, -NAN};
        for (int k = 0; k < K_COUNT; k++)
            for (int q = 0; q < 2; q++) {
                bool ok = isnan(run1(k, isa, 1.0f, nans[q]));
                if (KERNELS[k].nin == 2) ok &= isnan(run1(k, isa, nans[q], 0.5f));
                if (!ok && bad++ < 12)
                    fprintf(stderr, "    %s %s: NaN lost\n", isa_name(isa), KERNELS[k].name);
            }
        // accuracy (the checker's rule) at every special value, several g
        static const float gs[] = {1.0f, -0.75f, 3.5f, 0x1p-10f};
        for (int k = 0; k < K_COUNT; k++)
            for (int i = 0; i < NSPECIALS; i++)
                for (size_t gi = 0; gi < sizeof gs / sizeof *gs; gi++) {
                    float x = SPECIALS[i], g = KERNELS[k].nin == 2 ? gs[gi] : 1.0f;
                    float got = run1(k, isa, g, x);
                    verdict v = judge(k, g, x, got);
                    if (!v.ok && bad++ < 12)
                        fprintf(stderr, "    %s %s(g=%a, x=%a) = %a: %.2f ulp, %.2f x 2^-24 M\n",
                                isa_name(isa), KERNELS[k].name, g, x, got, v.ulp, v.mrel);
                }
    }
    CHECKF(bad == 0, "%ld special-value violations", bad);
}

// Where the derivative is far below the normal range (x e^x, e^(-x^2/2), sigmoid(beta x) tails),
// g * f'(x) may still be a normal float for a large g: the product must be accurate.
static void test_large_grad_tiny_derivative(void) {
    static const float xs[] = {-9.0f,   -10.5f,  -11.0f,  -12.0f,  -13.0f,  -14.0f,  -14.5f,
                               -15.0f,  -16.0f,  -18.0f,  -19.5f,  -60.0f,  -87.0f,  -88.0f,
                               -90.0f,  -95.0f,  -100.0f, -103.9f, -104.5f, -120.0f, -150.0f,
                               -159.0f, -161.0f, -165.0f, -180.0f, -199.0f, -201.0f};
    static const float gs[] = {0x1p20f, 1e30f, -1e30f, 0x1p100f, FLT_MAX};
    static const int ks[] = {K_SILU_B, K_GT_B, K_GE_B, K_SP_B, K_SPO_B, K_SIG_F,
                             K_SILU_F, K_GT_F, K_GE_F, K_SP_F, K_SPO_F};
    long bad = 0;
    double worst = 0;
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!test_isa_available(isa)) continue;
        for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++)
            for (size_t i = 0; i < sizeof xs / sizeof *xs; i++)
                for (size_t gi = 0; gi < sizeof gs / sizeof *gs; gi++) {
                    int k = ks[ki];
                    float x = xs[i], g = KERNELS[k].nin == 2 ? gs[gi] : 1.0f;
                    float got = run1(k, isa, g, x);
                    verdict v = judge(k, g, x, got);
                    worst = fmax(worst, v.ulp);
                    if (!v.ok && bad++ < 8)
                        fprintf(stderr, "    %s %s(g=%a, x=%a) = %a: %.2f ulp\n", isa_name(isa),
                                KERNELS[k].name, g, x, got, v.ulp);
                }
    }
    printf("  max ulp of g f'(x) (and f(x)) in the deep negative tails, g up to FLT_MAX: %.3f\n",
           worst);
    CHECKF(bad == 0, "%ld violations", bad);
}

// ---------------------------------------------------------------------------------------------
// fp32: large sample against the float64 references, bitwise identity across ISAs

typedef struct acc_stats {
    double ulp, mrel, worst_x, worst_g, mrel_x;
    long viol, mismatch, api_mismatch;
} acc_stats;
static acc_stats g_fp32[K_COUNT][OPGRAD_ISA_COUNT];

// The API runs of kernel k on fp32 tensors (x, and g for a backward); NULL if not an API path.
static aclnnStatus api_run_f32(int k, aclTensor *tg, aclTensor *tx, aclTensor *to);

static void fp32_chunk(int k, size_t n, const float *g, const float *x, bool api) {
    float *out[OPGRAD_ISA_COUNT] = {0};
    float *apibuf = malloc(n * 4);
    const float *in[2] = {KERNELS[k].nin == 2 ? g : x, x};
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!test_isa_available(isa)) continue;
        out[isa] = malloc(n * 4);
        float *o[1] = {out[isa]};
        run_kernel(k, isa, n, in, o);
        if (api) { // the public API with this ISA selected gives the same bits
            opgrad_set_max_isa((opgrad_isa)isa);
            int64_t dims[1] = {(int64_t)n};
            aclTensor *tx = test_tensor(dims, 1, ACL_FLOAT, (void *)x);
            aclTensor *tg = test_tensor(dims, 1, ACL_FLOAT, (void *)g);
            aclTensor *ta = test_tensor(dims, 1, ACL_FLOAT, apibuf);
            CHECK_EQ(api_run_f32(k, tg, tx, ta), ACLNN_SUCCESS);
            if (memcmp(apibuf, out[isa], n * 4)) g_fp32[k][isa].api_mismatch++;
            aclDestroyTensor(tx), aclDestroyTensor(tg), aclDestroyTensor(ta);
        }
    }
    opgrad_set_max_isa(OPGRAD_ISA_COUNT - 1);
    for (size_t i = 0; i < n; i++) {
        double gv = KERNELS[k].nin == 2 ? g[i] : 1.0;
        verdict v = judge(k, gv, x[i], out[0][i]);
        for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
            if (!test_isa_available(isa)) continue;
            acc_stats *s = &g_fp32[k][isa];
            if (test_f2u(out[isa][i]) != test_f2u(out[0][i]) && s->mismatch++ < 3)
                fprintf(stderr, "    %s %s differs from scalar at x=%a g=%a\n", KERNELS[k].name,
                        isa_name(isa), x[i], gv);
            if (v.cond && v.ulp > s->ulp && isfinite(v.ulp))
                s->ulp = v.ulp, s->worst_x = x[i], s->worst_g = gv;
            if (v.mrel > s->mrel && isfinite(v.mrel)) s->mrel = v.mrel, s->mrel_x = x[i];
            if (!v.ok && s->viol++ < 5 && isa == 0)
                fprintf(stderr, "    %s x=%a g=%a: got %a (%.2f ulp, %.2f x 2^-24 M)\n",
                        KERNELS[k].name, x[i], gv, out[0][i], v.ulp, v.mrel);
        }
    }
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) free(out[isa]);
    free(apibuf);
}

static void test_fp32_sample(void) {
    bool quick = test_quick_mode();
    size_t n_rand = quick ? (size_t)1 << 15 : (size_t)1 << 20;
    size_t n_grid = quick ? (size_t)1 << 15 : (size_t)1 << 20;
    uint32_t step = quick ? 64 : 1;
    // windows of consecutive fp32 values: the roots of gelu' (-0.7518) and silu' (-1.2785), the
    // tanh switch (0.625), the cancellation side of the gelu_erf tail (-0.55 .. -0.45)
    static const float windows[][2] = {
        {-0.74f, -0.765f}, {-1.27f, -1.29f}, {0.62f, 0.63f}, {-0.45f, -0.55f}};
    enum { NWIN = sizeof windows / sizeof windows[0] };
    static const float gset[] = {1.0f, -0.75f, 3.5f, 0x1p-10f};
    const size_t CH = 1 << 16;
    float *x = malloc(CH * 4), *g = malloc(CH * 4), *y = malloc(CH * 4);
    memset(g_fp32, 0, sizeof g_fp32);
    size_t total = 0;
    for (int k = 0; k < K_COUNT; k++) {
        test_rng r;
        test_rng_seed(&r, 20240611 + (uint64_t)k);
        size_t m = 0;
        total = 0;
        for (int phase = 0; phase < 3 + NWIN; phase++) {
            bool win = phase >= 2 && phase < 2 + NWIN, last = phase == 2 + NWIN;
            uint32_t wlo = win ? test_f2u(windows[phase - 2][0]) : 0,
                     whi = win ? test_f2u(windows[phase - 2][1]) : 0;
            size_t count = phase == 0   ? n_rand
                           : phase == 1 ? n_grid
                           : win        ? (whi - wlo) / step + 1
                                        : NSPECIALS;
            for (size_t i = 0; i < count; i++) {
                float xv;
                if (phase == 0)
                    xv = test_u2f((uint32_t)(test_rng_next(&r) >> 32));
                else if (phase == 1)
                    xv = (float)(-30.0 + 60.0 * (double)i / (double)n_grid);
                else if (win)
                    xv = test_u2f(wlo + (uint32_t)i * step);
                else
                    xv = SPECIALS[i];
                x[m] = xv;
                g[m] = (total + m) % 5 == 4 ? (float)test_rng_uniform(&r, -8, 8)
                                            : gset[(total + m) % 5];
                if (++m == CH || (last && i == count - 1)) {
                    if (KERNELS[k].from_output) { // y = forward(x), as the backward receives it
                        const float *in[1] = {x};
                        float *o[1] = {y};
                        run_kernel(KERNELS[k].fwd, OPGRAD_ISA_SCALAR, m, in, o);
                        memcpy(x, y, m * 4);
                    }
                    fp32_chunk(k, m, g, x, total == 0);
                    total += m;
                    m = 0;
                }
            }
        }
    }
    printf("  fp32: %zu inputs per kernel (%zu random bit patterns, %zu grid points in [-30, 30], "
           "windows of consecutive values around -0.7518, -1.2785, 0.625, -0.5%s; specials);\n"
           "  backward from the output: y = forward(x) at the same x\n",
           total, n_rand, n_grid, step == 1 ? "" : " (every 64th)");
    printf("    %-20s %-7s %9s %12s   %s\n", "kernel", "isa", "max ulp", "max err/2^-24M",
           "worst (x, g)");
    for (int k = 0; k < K_COUNT; k++)
        for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
            if (!test_isa_available(isa)) continue;
            acc_stats *s = &g_fp32[k][isa];
            printf("    %-20s %-7s %9.3f %12.3f   ulp at (%a, %g), M-ratio at %a\n",
                   KERNELS[k].name, isa_name(isa), s->ulp, s->mrel, s->worst_x, s->worst_g,
                   s->mrel_x);
            CHECKF(s->viol == 0, "%s/%s: %ld accuracy violations", KERNELS[k].name, isa_name(isa),
                   s->viol);
            CHECKF(s->ulp <= KERNELS[k].bound, "%s/%s: %.3f ulp where well conditioned, above %g",
                   KERNELS[k].name, isa_name(isa), s->ulp, KERNELS[k].bound);
            CHECKF(s->mismatch == 0, "%s/%s: %ld results differ from the scalar build",
                   KERNELS[k].name, isa_name(isa), s->mismatch);
            CHECKF(s->api_mismatch == 0, "%s/%s: the API differs from the direct kernel",
                   KERNELS[k].name, isa_name(isa));
        }
    printf("    (max ulp over inputs where M <= 2|f| (well conditioned); err/2^-24M everywhere)\n");
    free(x), free(g), free(y);
}

// ---------------------------------------------------------------------------------------------
// The public API for kernel k

static aclScalar *sp_beta(int k) {
    float b = KERNELS[k].params->beta;
    return aclCreateScalar(&b, ACL_FLOAT);
}
static aclScalar *sp_threshold(int k) {
    float t = KERNELS[k].params->threshold;
    return aclCreateScalar(&t, ACL_FLOAT);
}

// Runs kernel k's operator through the API: forward(x -> out) or backward(g, x -> out).
static aclnnStatus api_run(int k, aclTensor *tg, aclTensor *tx, aclTensor *to) {
    aclnnStatus st = ACLNN_ERR_INNER;
    static char none[] = "none";
    aclScalar *b = NULL, *t = NULL;
    if (KERNELS[k].params) b = sp_beta(k), t = sp_threshold(k);
    switch (k) {
    case K_SIG_F:
        OP_RUN(st, aclnnSigmoidGetWorkspaceSize(tx, to, &ws_, &ex_), aclnnSigmoid);
        break;
    case K_SIG_B:
        OP_RUN(st, aclnnSigmoidBackwardGetWorkspaceSize(tg, tx, to, &ws_, &ex_),
               aclnnSigmoidBackward);
        break;
    case K_TANH_F:
        OP_RUN(st, aclnnTanhGetWorkspaceSize(tx, to, &ws_, &ex_), aclnnTanh);
        break;
    case K_TANH_B:
        OP_RUN(st, aclnnTanhBackwardGetWorkspaceSize(tg, tx, to, &ws_, &ex_), aclnnTanhBackward);
        break;
    case K_SILU_F:
        OP_RUN(st, aclnnSiluGetWorkspaceSize(tx, to, &ws_, &ex_), aclnnSilu);
        break;
    case K_SILU_B:
        OP_RUN(st, aclnnSiluBackwardGetWorkspaceSize(tg, tx, to, &ws_, &ex_), aclnnSiluBackward);
        break;
    case K_GT_F:
        OP_RUN(st, aclnnGeluGetWorkspaceSize(tx, to, &ws_, &ex_), aclnnGelu);
        break;
    case K_GT_B:
        OP_RUN(st, aclnnGeluBackwardGetWorkspaceSize(tg, tx, to, &ws_, &ex_), aclnnGeluBackward);
        break;
    case K_GE_F:
        OP_RUN(st, aclnnGeluV2GetWorkspaceSize(tx, 0, to, &ws_, &ex_), aclnnGeluV2);
        break;
    case K_GE_B:
        OP_RUN(st, aclnnGeluBackwardV2GetWorkspaceSize(tg, tx, none, to, &ws_, &ex_),
               aclnnGeluBackwardV2);
        break;
    case K_SP_F:
    case K_SPO_F:
        OP_RUN(st, aclnnSoftplusGetWorkspaceSize(tx, b, t, to, &ws_, &ex_), aclnnSoftplus);
        break;
    default:
        OP_RUN(st, aclnnSoftplusBackwardGetWorkspaceSize(tg, tx, b, t, to, &ws_, &ex_),
               aclnnSoftplusBackward);
        break;
    }
    if (b) aclDestroyScalar(b), aclDestroyScalar(t);
    return st;
}

static aclnnStatus api_run_f32(int k, aclTensor *tg, aclTensor *tx, aclTensor *to) {
    return api_run(k, tg, tx, to);
}

// The variants that must give the same bits as kernel k's operator: GeluV2(1) and
// GeluBackwardV2("tanh") as Gelu / GeluBackward, the in-place forwards as the out-of-place ones.
// Returns the number of variants run (0..1); *out gets the variant's result.
static int api_variant(int k, aclTensor *tg, aclTensor *tx, aclTensor *to, void *to_data,
                       const void *x_data, size_t bytes, aclnnStatus *st) {
    static char tanh_str[] = "tanh";
    switch (k) {
    case K_GT_F:
        OP_RUN(*st, aclnnGeluV2GetWorkspaceSize(tx, 1, to, &ws_, &ex_), aclnnGeluV2);
        return 1;
    case K_GT_B:
        OP_RUN(*st, aclnnGeluBackwardV2GetWorkspaceSize(tg, tx, tanh_str, to, &ws_, &ex_),
               aclnnGeluBackwardV2);
        return 1;
    case K_SIG_F:
    case K_TANH_F:
        memcpy(to_data, x_data, bytes);
        if (k == K_SIG_F)
            OP_RUN(*st, aclnnInplaceSigmoidGetWorkspaceSize(to, &ws_, &ex_), aclnnInplaceSigmoid);
        else
            OP_RUN(*st, aclnnInplaceTanhGetWorkspaceSize(to, &ws_, &ex_), aclnnInplaceTanh);
        return 1;
    default:
        return 0;
    }
}

// ---------------------------------------------------------------------------------------------
// fp16 / bf16: every encoding through the public API, per ISA

enum { NX = 65536, NG = 5 };
static double g_max16[2][K_COUNT];
static long g_viol16[2][K_COUNT];

// ulps of dt between got and the exact ref; a result that overflows must be the same infinity
static double err16(aclDataType dt, double got, double ref) {
    if (isinf(got) && isfinite(ref)) return test_round_to(dt, ref) == got ? 0 : INFINITY;
    return test_ulp_error(dt, got, ref);
}

static void exhaustive16(aclDataType dt, int row) {
    const double gvals[NG] = {1.0, -0.75, 3.5, 0x1p-10, dt == ACL_FLOAT16 ? 1000.0 : 1e30};
    size_t nb = (size_t)NX * NG;
    uint16_t *x5 = malloc(nb * 2), *g5 = malloc(nb * 2), *out = malloc(nb * 2),
             *alt = malloc(nb * 2);
    uint16_t *first[K_COUNT] = {0};
    double *gv = malloc(NG * sizeof *gv);
    uint16_t gb[NG];
    for (int j = 0; j < NG; j++) {
        test_store(gb, j, dt, gvals[j]);
        gv[j] = test_load(gb, j, dt); // the grad value actually stored (1e30 rounds in bf16)
    }
    for (int j = 0; j < NG; j++)
        for (int i = 0; i < NX; i++)
            x5[(size_t)j * NX + i] = (uint16_t)i, g5[(size_t)j * NX + i] = gb[j];
    int64_t d1[1] = {NX}, d2[2] = {NG, NX};
    int first_isa = -1;
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!test_isa_available(isa)) continue;
        opgrad_set_max_isa((opgrad_isa)isa);
        if (first_isa < 0) first_isa = isa;
        for (int k = 0; k < K_COUNT; k++) {
            bool bwd = KERNELS[k].nin == 2;
            size_t n = bwd ? nb : NX;
            aclTensor *tx = bwd ? test_tensor(d2, 2, dt, x5) : test_tensor(d1, 1, dt, x5);
            aclTensor *tg = test_tensor(d2, 2, dt, g5);
            aclTensor *to = bwd ? test_tensor(d2, 2, dt, out) : test_tensor(d1, 1, dt, out);
            aclTensor *ta = bwd ? test_tensor(d2, 2, dt, alt) : test_tensor(d1, 1, dt, alt);
            CHECK_EQ(api_run(k, tg, tx, to), ACLNN_SUCCESS);
            aclnnStatus st = ACLNN_SUCCESS;
            if (api_variant(k, tg, tx, ta, alt, x5, n * 2, &st)) {
                CHECK_EQ(st, ACLNN_SUCCESS);
                CHECKF(memcmp(alt, out, n * 2) == 0, "%s %s: the variant of %s gives other bits",
                       og_dtype_name(dt), isa_name(isa), KERNELS[k].name);
            }
            for (size_t i = 0; i < n; i++) {
                double xv = test_load(x5, (int64_t)i, dt), gval = bwd ? gv[i / NX] : 1.0, mag;
                double ref = ref_eval(k, gval, xv, &mag);
                double e = err16(dt, test_load(out, (int64_t)i, dt), ref);
                if (e > g_max16[row][k]) g_max16[row][k] = e;
                if (e > 1 && g_viol16[row][k]++ < 4)
                    fprintf(stderr, "    %s %s %s x=%a g=%g: got %a, exact %.9g (%.2f ulp)\n",
                            og_dtype_name(dt), isa_name(isa), KERNELS[k].name, xv, gval,
                            test_load(out, (int64_t)i, dt), ref, e);
            }
            if (isa == first_isa) {
                first[k] = malloc(n * 2);
                memcpy(first[k], out, n * 2);
            } else {
                CHECKF(memcmp(first[k], out, n * 2) == 0, "%s: %s %s differs bitwise from %s",
                       og_dtype_name(dt), KERNELS[k].name, isa_name(isa), isa_name(first_isa));
            }
            aclDestroyTensor(tx), aclDestroyTensor(tg), aclDestroyTensor(to), aclDestroyTensor(ta);
        }
    }
    // gradOutput broadcast from [5, 1] gives the same bits as the full [5, 65536] one
    {
        int64_t dg[2] = {NG, 1};
        aclTensor *tgb = test_tensor(dg, 2, dt, gb), *tx = test_tensor(d1, 1, dt, x5);
        aclTensor *to = test_tensor(d2, 2, dt, out);
        static const int ks[] = {K_SILU_B, K_GT_B, K_GE_B, K_SIG_B, K_TANH_B};
        for (size_t q = 0; q < sizeof ks / sizeof *ks; q++) {
            CHECK_EQ(api_run(ks[q], tgb, tx, to), ACLNN_SUCCESS);
            CHECKF(memcmp(out, first[ks[q]], nb * 2) == 0,
                   "%s %s: broadcast gradOutput gives other bits", og_dtype_name(dt),
                   KERNELS[ks[q]].name);
        }
        aclDestroyTensor(tgb), aclDestroyTensor(tx), aclDestroyTensor(to);
    }
    opgrad_set_max_isa(OPGRAD_ISA_COUNT - 1);
    for (int k = 0; k < K_COUNT; k++) {
        CHECKF(g_viol16[row][k] == 0, "%s %s: %ld results more than 1 ulp from float64",
               og_dtype_name(dt), KERNELS[k].name, g_viol16[row][k]);
        free(first[k]);
    }
    free(x5), free(g5), free(out), free(alt), free(gv);
}

static void test_fp16_exhaustive(void) { exhaustive16(ACL_FLOAT16, 0); }
static void test_bf16_exhaustive(void) { exhaustive16(ACL_BF16, 1); }

// ---------------------------------------------------------------------------------------------
// Public API at the sizes around the tiles: fp32 / fp16 / bf16, threads, canaries

static bool same_value(aclDataType dt, const void *base, int64_t i, double want) {
    double got = test_load(base, i, dt);
    if (isnan(want)) return isnan(got);
    return got == want && signbit(got) == signbit(want);
}

static void test_api_sizes(void) {
    size_t sizes[256];
    int ns = size_list(sizes, 256);
    static const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    static const int threads[] = {1, 3};
    int saved_threads = opgrad_get_num_threads();
    bool quick = test_quick_mode();
    long bad = 0, guard_bad = 0;
    for (int s = 0; s < ns; s++) {
        size_t n = sizes[s];
        if (n == 0) continue; // empty tensors: the API tests
        float *g = malloc(n * 4), *x = malloc(n * 4), *gq = malloc(n * 4), *xq = malloc(n * 4);
        float *expect = malloc(n * 4);
        for (int k = 0; k < K_COUNT; k++) {
            fill_inputs(k, n, g, x, 5000 + n * 17 + (size_t)k);
            for (int di = 0; di < 3; di++) {
                aclDataType dt = dts[di];
                size_t es = dt == ACL_FLOAT ? 4 : 2;
                gbuf bg = gbuf_new(n, es), bx = gbuf_new(n, es), bo = gbuf_new(n, es),
                     ba = gbuf_new(n, es);
                for (size_t i = 0; i < n; i++) {
                    test_store(bg.data, (int64_t)i, dt, g[i]);
                    test_store(bx.data, (int64_t)i, dt, x[i]);
                    gq[i] = (float)test_load(bg.data, (int64_t)i, dt);
                    xq[i] = (float)test_load(bx.data, (int64_t)i, dt);
                }
                const float *in[2] = {KERNELS[k].nin == 2 ? gq : xq, xq};
                float *o[1] = {expect};
                run_kernel(k, OPGRAD_ISA_SCALAR, n, in, o);
                int64_t dims[1] = {(int64_t)n};
                aclTensor *tg = test_tensor(dims, 1, dt, bg.data),
                          *tx = test_tensor(dims, 1, dt, bx.data);
                aclTensor *to = test_tensor(dims, 1, dt, bo.data),
                          *ta = test_tensor(dims, 1, dt, ba.data);
                for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
                    if (!test_isa_available(isa)) continue;
                    opgrad_set_max_isa((opgrad_isa)isa);
                    for (int th = 0; th < 2; th++) {
                        if (quick && th != s % 2) continue; // quick: one thread count per size
                        opgrad_set_num_threads(threads[th]);
                        CHECK_EQ(api_run(k, tg, tx, to), ACLNN_SUCCESS);
                        aclnnStatus st = ACLNN_SUCCESS;
                        int nv = api_variant(k, tg, tx, ta, ba.data, bx.data, n * es, &st);
                        long nbad = 0;
                        for (size_t i = 0; i < n; i++) {
                            double want = test_round_to(dt, expect[i]);
                            bool ok = same_value(dt, bo.data, (int64_t)i, want) &&
                                      (!nv || same_value(dt, ba.data, (int64_t)i, want));
                            if (!ok && nbad++ < 3)
                                fprintf(stderr,
                                        "    %s %s %s threads=%d n=%zu i=%zu: got %a (variant %a), "
                                        "want %a\n",
                                        KERNELS[k].name, og_dtype_name(dt), isa_name(isa),
                                        threads[th], n, i, test_load(bo.data, (int64_t)i, dt),
                                        test_load(ba.data, (int64_t)i, dt), want);
                        }
                        bad += nbad;
                        gbuf *all[] = {&bg, &bx, &bo, &ba};
                        for (int q = 0; q < 4; q++)
                            if (!gbuf_guards_ok(all[q]) && guard_bad++ < 5)
                                fprintf(stderr, "    %s %s n=%zu: buffer %d guard overwritten\n",
                                        KERNELS[k].name, og_dtype_name(dt), n, q);
                    }
                }
                // gradInput over gradOutput's memory (in place, element for element)
                if (KERNELS[k].nin == 2) {
                    memcpy(ba.data, bg.data, n * es);
                    CHECK_EQ(api_run(k, ta, tx, ta), ACLNN_SUCCESS);
                    for (size_t i = 0; i < n; i++)
                        bad += !same_value(dt, ba.data, (int64_t)i, test_round_to(dt, expect[i]));
                }
                aclDestroyTensor(tg), aclDestroyTensor(tx), aclDestroyTensor(to),
                    aclDestroyTensor(ta);
                gbuf_free(&bg), gbuf_free(&bx), gbuf_free(&bo), gbuf_free(&ba);
            }
        }
        free(g), free(x), free(gq), free(xq), free(expect);
    }
    opgrad_set_num_threads(saved_threads);
    opgrad_set_max_isa(OPGRAD_ISA_COUNT - 1);
    CHECKF(bad == 0, "%ld API results differ from the direct kernels", bad);
    CHECKF(guard_bad == 0, "%ld guard violations", guard_bad);
}

// ---------------------------------------------------------------------------------------------
// Cycles per element, L1-resident (information only)

static void test_cycles_per_element(void) {
    enum { N = 2048 };
    const int REPS = test_quick_mode() ? 3 : 200;
    float *g = aligned_alloc(64, N * 4), *x = aligned_alloc(64, N * 4),
          *o = aligned_alloc(64, N * 4);
    test_rng r;
    test_rng_seed(&r, 99);
    for (int i = 0; i < N; i++)
        x[i] = (float)test_rng_uniform(&r, -8, 8), g[i] = (float)test_rng_uniform(&r, -2, 2);
    printf("  TSC cycles per element, n = %d fp32 values in L1, best of %d runs (one thread):\n", N,
           REPS);
    printf("    %-20s", "kernel");
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) printf(" %8s", isa_name(isa));
    printf("\n");
    for (int k = 0; k < K_COUNT; k++) {
        printf("    %-20s", KERNELS[k].name);
        const float *in[2] = {KERNELS[k].nin == 2 ? g : x, x};
        float *out[1] = {o};
        for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
            if (!test_isa_available(isa)) {
                printf(" %8s", "-");
                continue;
            }
            uint64_t best = UINT64_MAX;
            for (int rep = 0; rep < REPS; rep++) {
                uint64_t t0 = __rdtsc();
                run_kernel(k, isa, N, in, out);
                uint64_t t1 = __rdtsc();
                if (t1 - t0 < best) best = t1 - t0;
            }
            printf(" %8.2f", (double)best / N);
        }
        printf("\n");
    }
    free(g), free(x), free(o);
}

static void print_table(void) {
    printf("\nmax error in ulps of the output dtype against the exact float64 value\n");
    printf("  %-20s %10s %10s %10s %10s\n", "kernel", "fp32", "fp32 M", "fp16", "bf16");
    for (int k = 0; k < K_COUNT; k++) {
        double u = 0, m = 0;
        for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++)
            if (test_isa_available(isa))
                u = fmax(u, g_fp32[k][isa].ulp), m = fmax(m, g_fp32[k][isa].mrel);
        printf("  %-20s %10.3f %10.3f %10.3f %10.3f\n", KERNELS[k].name, u, m, g_max16[0][k],
               g_max16[1][k]);
    }
    printf("  (fp32: random sample, max ulp where M <= 2|f|, 'M': max err / 2^-24 M everywhere;\n"
           "   fp16/bf16: exhaustive over x (y), 5 gradOutput values, every ISA)\n");
}

int main(void) {
    RUN(test_kernel_tables);
    RUN(test_kernel_sizes);
    RUN(test_kernel_inplace);
    RUN(test_special_values);
    RUN(test_large_grad_tiny_derivative);
    RUN(test_fp32_sample);
    RUN(test_fp16_exhaustive);
    RUN(test_bf16_exhaustive);
    RUN(test_api_sizes);
    RUN(test_cycles_per_element);
    print_table();
    return test_summary();
}
