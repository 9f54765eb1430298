/* Kernel-level tests of the piecewise family: Relu / ThresholdBackward, LeakyRelu /
 * LeakyReluBackward, Hardswish / HardswishBackward, Elu / EluBackward (src/ops/activation/{relu,
 * leaky_relu,hardswish,elu}). Each kernel runs with several attribute sets ("cases"):
 *
 *  - the per-ISA symbols are what the dispatch tables hold;
 *  - direct calls on every ISA of this CPU at sizes 0..49 and around the engine's real tile widths
 *    (asked from og_ew_make_plan), with guard canaries around every output, inputs in exact-size
 *    allocations (ASan sees any over-read), every ISA bitwise equal to the scalar build;
 *  - in place: an output aliasing any input gives the out-of-place bits;
 *  - special values: NaN, +-inf, +-0 (the sign of zero as documented), subnormals, the joins of
 *    Hardswish at +-3, ELU's saturated-attribute path;
 *  - fp32 accuracy against the float64 references (check/ref_piecewise.h) over random bit
 *    patterns, a grid over [-20, 20], log-uniform small values, the subnormal-result window of
 *    ELU and every float near Hardswish's joins: max ulp per case printed, bound 1 ulp;
 *  - the public API at the same sizes in fp32/fp16/bf16, 1 and 3 threads, in place and with the
 *    output aliasing an input: the direct kernel's bits, rounded to the dtype;
 *  - fp16 and bf16 exhaustive: all 65,536 encodings of x through the public API, backward at five
 *    gradOutput values: within 1 ulp of the exact value (max printed), every ISA bitwise equal;
 *  - L1-resident throughput of each kernel in TSC cycles per element (printed, not judged).
 * OPGRAD_TEST_QUICK=1 shrinks the random fp32 sample (the bounds never change). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_elu.h"
#include "aclnnop/aclnn_elu_backward.h"
#include "aclnnop/aclnn_hardswish.h"
#include "aclnnop/aclnn_hardswish_backward.h"
#include "aclnnop/aclnn_leaky_relu.h"
#include "aclnnop/aclnn_leaky_relu_backward.h"
#include "aclnnop/aclnn_relu.h"
#include "aclnnop/aclnn_threshold_backward.h"
#include "check/ref_piecewise.h"
#include "engine/elementwise.h"
#include "opgrad/opgrad.h"
#include "ops/activation/elu/elu_kernel.h"
#include "ops/activation/hardswish/hardswish_kernel.h"
#include "ops/activation/leaky_relu/leaky_relu_kernel.h"
#include "ops/activation/relu/relu_kernel.h"
#include "tensor/dtype.h"
#include "test.h"
#include "testutil.h"

static const char *isa_name(int isa) { return opgrad_isa_name((opgrad_isa)isa); }

// ---------------------------------------------------------------------------------------------
// The cases: a kernel, its attributes, its reference

typedef enum {
    F_RELU,
    F_THRESH,
    F_LEAKY_F,
    F_LEAKY_B,
    F_HS_F,
    F_HS_B,
    F_ELU_F,
    F_ELU_B,
    F_ELU_BR
} fam;

typedef struct kcase {
    const char *name;
    fam f;
    float a[3]; // threshold | negativeSlope | alpha, scale, inputScale
    const og_ew_compute_fn *table;
    int nin; // 1: in = {x}; 2: in = {g, x}
    union {
        og_threshold_params th;
        og_leaky_relu_params lr;
        og_elu_params elu;
    } p;
} kcase;

static kcase CASES[] = {
    {.name = "relu", .f = F_RELU, .a = {0}},
    {.name = "threshold_bwd(0)", .f = F_THRESH, .a = {0.0f}},
    {.name = "threshold_bwd(0.5)", .f = F_THRESH, .a = {0.5f}},
    {.name = "threshold_bwd(-1.25)", .f = F_THRESH, .a = {-1.25f}},
    {.name = "leaky_relu(0.01)", .f = F_LEAKY_F, .a = {0.01f}},
    {.name = "leaky_relu(-0.25)", .f = F_LEAKY_F, .a = {-0.25f}},
    {.name = "leaky_relu_bwd(0.01)", .f = F_LEAKY_B, .a = {0.01f}},
    {.name = "leaky_relu_bwd(-0.25)", .f = F_LEAKY_B, .a = {-0.25f}},
    {.name = "hardswish", .f = F_HS_F, .a = {0}},
    {.name = "hardswish_bwd", .f = F_HS_B, .a = {0}},
    {.name = "elu(1,1,1)", .f = F_ELU_F, .a = {1.0f, 1.0f, 1.0f}},
    {.name = "elu(selu)", .f = F_ELU_F, .a = {1.6732632423543772f, 1.0507009873554805f, 1.0f}},
    {.name = "elu(2,0.75,0.5)", .f = F_ELU_F, .a = {2.0f, 0.75f, 0.5f}},
    {.name = "elu(1,1,-1.5)", .f = F_ELU_F, .a = {1.0f, 1.0f, -1.5f}},
    {.name = "elu(inf,2,1)",
     .f = F_ELU_F,
     .a = {INFINITY, 2.0f, 1.0f}}, // saturated: (x > 0 ? x : -alpha) * scale
    {.name = "elu_bwd(1,1,1)", .f = F_ELU_B, .a = {1.0f, 1.0f, 1.0f}},
    {.name = "elu_bwd(selu)", .f = F_ELU_B, .a = {1.6732632423543772f, 1.0507009873554805f, 1.0f}},
    {.name = "elu_bwd(2,0.75,0.5)", .f = F_ELU_B, .a = {2.0f, 0.75f, 0.5f}},
    {.name = "elu_bwd(1,1,-1.5)", .f = F_ELU_B, .a = {1.0f, 1.0f, -1.5f}},
    {.name = "elu_bwd_res(1,1,1)", .f = F_ELU_BR, .a = {1.0f, 1.0f, 1.0f}},
    {.name = "elu_bwd_res(1.25,1,0.8)", .f = F_ELU_BR, .a = {1.25f, 1.0f, 0.8f}},
};
enum { NCASES = sizeof CASES / sizeof CASES[0] };

static void init_cases(void) {
    for (int c = 0; c < NCASES; c++) {
        kcase *k = &CASES[c];
        memset(&k->p, 0, sizeof k->p);
        k->nin = 2;
        switch (k->f) {
        case F_RELU:
            k->table = og_relu_fwd_kernels, k->nin = 1;
            break;
        case F_THRESH:
            k->table = og_threshold_bwd_kernels, k->p.th.threshold = k->a[0];
            break;
        case F_LEAKY_F:
            k->table = og_leaky_relu_fwd_kernels, k->nin = 1, k->p.lr.slope = k->a[0];
            break;
        case F_LEAKY_B:
            k->table = og_leaky_relu_bwd_kernels, k->p.lr.slope = k->a[0];
            break;
        case F_HS_F:
            k->table = og_hardswish_fwd_kernels, k->nin = 1;
            break;
        case F_HS_B:
            k->table = og_hardswish_bwd_kernels;
            break;
        case F_ELU_F:
            k->table = og_elu_fwd_kernels, k->nin = 1;
            break;
        case F_ELU_B:
            k->table = og_elu_bwd_kernels;
            break;
        case F_ELU_BR:
            k->table = og_elu_bwd_result_kernels;
            break;
        }
        if (k->f >= F_ELU_F) k->p.elu = og_elu_make_params(k->a[0], k->a[1], k->a[2]);
    }
}

static bool is_saturated(const kcase *k) { return k->f == F_ELU_F && k->p.elu.saturate; }

// The exact value of case k at (g, x) (g unused by forwards).
static double ref_of(const kcase *k, double g, double x) {
    const float *a = k->a;
    switch (k->f) {
    case F_RELU:
        return og_ref_relu(x);
    case F_THRESH:
        return og_ref_threshold_grad(g, x, a[0]);
    case F_LEAKY_F:
        return og_ref_leaky_relu(x, a[0]);
    case F_LEAKY_B:
        return og_ref_leaky_relu_grad(g, x, a[0]);
    case F_HS_F:
        return og_ref_hardswish(x);
    case F_HS_B:
        return g * og_ref_hardswish_grad(x);
    case F_ELU_F:
        if (is_saturated(k)) return x > 0 || isnan(x) ? (double)a[1] * x : (double)(-a[0] * a[1]);
        return og_ref_elu(x, a[0], a[1], a[2]);
    case F_ELU_B:
        return g * og_ref_elu_grad(x, a[0], a[1], a[2]);
    case F_ELU_BR:
        return g * og_ref_elu_grad_result(x, a[0], a[1], a[2]);
    }
    return NAN;
}

// Error of got against the exact ref in ulps of dt; a ref beyond the dt's range must give the
// dtype's rounding of it exactly (inf or the largest finite value).
static double err_ulps(aclDataType dt, double got, double ref) {
    if (!isnan(ref) && !isinf(ref)) {
        double r = test_round_to(dt, ref);
        if (isinf(r)) return got == r ? 0.0 : INFINITY;
    }
    return test_ulp_error(dt, got, ref);
}

static void call_kernel(const kcase *k, int isa, size_t n, const float *g, const float *x,
                        float *out) {
    const float *in[2];
    if (k->nin == 1)
        in[0] = x;
    else
        in[0] = g, in[1] = x;
    float *o[1] = {out};
    k->table[isa](n, in, o, &k->p);
}

static void test_kernel_tables(void) {
    const og_ew_compute_fn expect[][OPGRAD_ISA_COUNT] = {
        {og_relu_fwd__scalar, og_relu_fwd__avx2, og_relu_fwd__avx512},
        {og_threshold_bwd__scalar, og_threshold_bwd__avx2, og_threshold_bwd__avx512},
        {og_leaky_relu_fwd__scalar, og_leaky_relu_fwd__avx2, og_leaky_relu_fwd__avx512},
        {og_leaky_relu_bwd__scalar, og_leaky_relu_bwd__avx2, og_leaky_relu_bwd__avx512},
        {og_hardswish_fwd__scalar, og_hardswish_fwd__avx2, og_hardswish_fwd__avx512},
        {og_hardswish_bwd__scalar, og_hardswish_bwd__avx2, og_hardswish_bwd__avx512},
        {og_elu_fwd__scalar, og_elu_fwd__avx2, og_elu_fwd__avx512},
        {og_elu_bwd__scalar, og_elu_bwd__avx2, og_elu_bwd__avx512},
        {og_elu_bwd_result__scalar, og_elu_bwd_result__avx2, og_elu_bwd_result__avx512},
    };
    const og_ew_compute_fn *tables[] = {
        og_relu_fwd_kernels,       og_threshold_bwd_kernels, og_leaky_relu_fwd_kernels,
        og_leaky_relu_bwd_kernels, og_hardswish_fwd_kernels, og_hardswish_bwd_kernels,
        og_elu_fwd_kernels,        og_elu_bwd_kernels,       og_elu_bwd_result_kernels};
    for (size_t t = 0; t < sizeof tables / sizeof *tables; t++)
        for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++)
            CHECKF(tables[t][isa] == expect[t][og_isa_build((opgrad_isa)isa)], "table %zu entry %d",
                   t, isa);
    printf("  cpu isa: %s\n", isa_name((int)opgrad_cpu_isa()));
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++)
        if (!test_isa_available(isa))
            printf("  note: ISA %s not supported by this CPU, skipped\n", isa_name(isa));
}

// ---------------------------------------------------------------------------------------------
// Guarded buffers, sizes

static int64_t engine_tile(int nin, aclDataType dt) {
    static char dummy[64];
    int64_t dims[1] = {1 << 20};
    og_ew_op op = {.kernels = og_relu_fwd_kernels, .nin = nin, .nout = 1, .compute_dtype = dt};
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
    for (size_t s = 0; s <= 49; s++) sizes[n++] = s;
    aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16};
    for (int d = 0; d < 2; d++)
        for (int nin = 1; nin <= 2; nin++) {
            int64_t t = engine_tile(nin, dts[d]);
            int64_t around[] = {t - 17, t - 1, t, t + 1, t + 15, 2 * t - 1, 2 * t + 1, 3 * t + 7};
            for (size_t a = 0; a < sizeof around / sizeof *around; a++) {
                bool dup = false;
                for (int j = 0; j < n; j++) dup |= sizes[j] == (size_t)around[a];
                if (!dup && around[a] >= 0 && n < cap) sizes[n++] = (size_t)around[a];
            }
        }
    return n;
}

// Inputs from a seed: x mixes special values, random bit patterns and a grid over [-8, 8]; g is
// moderate (|g| < 4) or one of a few fixed values.
static const float SPECIALS[] = {0.0f,   -0.0f,   INFINITY, -INFINITY, NAN,       -NAN,
                                 1e-40f, -1e-40f, FLT_MAX,  -FLT_MAX,  FLT_MIN,   -FLT_MIN,
                                 3.0f,   -3.0f,   -1.5f,    2.999999f, -3.00001f, 0.5f,
                                 -1.25f, -95.0f,  -104.0f,  -17.0f,    -1e-3f,    1.0f,
                                 -1.0f,  88.0f,   -88.0f,   1e-7f,     -1e-7f,    60000.0f};
enum { NSPECIALS = sizeof SPECIALS / sizeof SPECIALS[0] };

static void fill_inputs(size_t n, float *g, float *x, uint64_t seed) {
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
            x[i] = (float)test_rng_uniform(&r, -8, 8);
            break;
        }
        g[i] = (u >> 40) % 3 == 0 ? (float)test_rng_uniform(&r, -4, 4)
                                  : ((u >> 44) & 1 ? 1.0f : -0.75f);
    }
}

// ---------------------------------------------------------------------------------------------
// Direct calls: sizes and canaries, ISAs bitwise equal, accuracy at every size

typedef struct acc {
    double max_ulp;
    float worst_x, worst_g;
    long viol;
} acc;

static void judge(const kcase *k, size_t n, const float *g, const float *x, const float *out,
                  acc *a, const char *what) {
    for (size_t i = 0; i < n; i++) {
        double ref = ref_of(k, g[i], x[i]);
        double e = err_ulps(ACL_FLOAT, out[i], ref);
        if (e > a->max_ulp) a->max_ulp = e, a->worst_x = x[i], a->worst_g = g[i];
        if (!(e <= 1.0) && a->viol++ < 5)
            fprintf(stderr, "    %s %s: x=%a g=%a got=%a want=%a (%.3g ulp)\n", what, k->name, x[i],
                    g[i], out[i], ref, e);
    }
}

static void test_kernel_sizes(void) {
    size_t sizes[256];
    int ns = size_list(sizes, 256);
    long bad = 0;
    acc a = {0};
    for (int s = 0; s < ns; s++) {
        size_t n = sizes[s], bytes = (n ? n : 1) * 4;
        float *g = malloc(bytes), *x = malloc(bytes), *ref = malloc(bytes);
        fill_inputs(n, g, x, 1000 + n);
        for (int c = 0; c < NCASES; c++) {
            const kcase *k = &CASES[c];
            // exact-size copies of the inputs: an over-read shows up under ASan
            float *tg = malloc(bytes), *tx = malloc(bytes);
            memcpy(tg, g, n * 4), memcpy(tx, x, n * 4);
            call_kernel(k, OPGRAD_ISA_SCALAR, n, tg, tx, ref);
            judge(k, n, g, x, ref, &a, "scalar");
            for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
                if (!test_isa_available(isa)) continue;
                gbuf o = gbuf_new(n, 4);
                call_kernel(k, isa, n, tg, tx, o.data);
                if (!gbuf_guards_ok(&o) && bad++ < 5)
                    fprintf(stderr, "    %s/%s n=%zu wrote outside its output\n", k->name,
                            isa_name(isa), n);
                if (memcmp(o.data, ref, n * 4) && bad++ < 5)
                    fprintf(stderr, "    %s/%s n=%zu differs from the scalar build\n", k->name,
                            isa_name(isa), n);
                if ((memcmp(tg, g, n * 4) || memcmp(tx, x, n * 4)) && bad++ < 5)
                    fprintf(stderr, "    %s/%s n=%zu modified an input\n", k->name, isa_name(isa),
                            n);
                free(o.raw);
            }
            free(tg), free(tx);
        }
        free(g), free(x), free(ref);
    }
    CHECKF(bad == 0, "%ld size/canary/identity failures", bad);
    CHECKF(a.viol == 0, "%ld accuracy violations", a.viol);
    printf("  %d sizes (0..49 and around the tile widths) x %d cases x ISAs\n", ns, NCASES);
}

static void test_kernel_inplace(void) {
    const size_t ns[] = {1, 7, 15, 16, 17, 33, 100, 1023};
    long bad = 0;
    for (size_t si = 0; si < sizeof ns / sizeof *ns; si++) {
        size_t n = ns[si], bytes = n * 4;
        float *g = malloc(bytes), *x = malloc(bytes), *want = malloc(bytes), *cg = malloc(bytes),
              *cx = malloc(bytes);
        fill_inputs(n, g, x, 77 + n);
        for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
            if (!test_isa_available(isa)) continue;
            for (int c = 0; c < NCASES; c++) {
                const kcase *k = &CASES[c];
                call_kernel(k, isa, n, g, x, want);
                for (int j = 0; j < k->nin; j++) { // out aliases input j
                    memcpy(cg, g, bytes), memcpy(cx, x, bytes);
                    float *alias = k->nin == 1 || j == 1 ? cx : cg;
                    call_kernel(k, isa, n, cg, cx, alias);
                    if (memcmp(alias, want, bytes) && bad++ < 5)
                        fprintf(stderr, "    %s/%s n=%zu: out == in%d differs\n", k->name,
                                isa_name(isa), n, j);
                }
            }
        }
        free(g), free(x), free(want), free(cg), free(cx);
    }
    CHECKF(bad == 0, "%ld in-place mismatches", bad);
}

// ---------------------------------------------------------------------------------------------
// Special values, on every ISA

static float run1(const kcase *k, int isa, float g, float x) {
    float out[1];
    call_kernel(k, isa, 1, &g, &x, out);
    return out[0];
}

static const kcase *find_case(const char *name) {
    for (int c = 0; c < NCASES; c++)
        if (!strcmp(CASES[c].name, name)) return &CASES[c];
    abort();
}

#define SAME_BITS(a, b) (test_f2u(a) == test_f2u(b))
#define EXPECT1(case_name, g, x, want)                                                             \
    do {                                                                                           \
        float got_ = run1(find_case(case_name), isa, (g), (x));                                    \
        float want_ = (want);                                                                      \
        CHECKF(SAME_BITS(got_, want_) || (isnan(got_) && isnan(want_)),                            \
               "%s %s(g=%a, x=%a) = %a, want %a", isa_name(isa), case_name, (double)(g),           \
               (double)(x), got_, want_);                                                          \
    } while (0)

static void test_special_values(void) {
    const float inf = INFINITY, nan = NAN, sub = 0x1p-140f;
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!test_isa_available(isa)) continue;
        // relu: clamp_min(x, 0): NaN and -0 pass through
        EXPECT1("relu", 0, nan, nan);
        EXPECT1("relu", 0, -0.0f, -0.0f);
        EXPECT1("relu", 0, 0.0f, 0.0f);
        EXPECT1("relu", 0, -inf, 0.0f);
        EXPECT1("relu", 0, inf, inf);
        EXPECT1("relu", 0, sub, sub);
        EXPECT1("relu", 0, -sub, 0.0f);
        EXPECT1("relu", 0, -FLT_MAX, 0.0f);
        float q = run1(find_case("relu"), isa, 0, test_u2f(0x7fc12345u)); // NaN payload kept
        CHECKF(test_f2u(q) == 0x7fc12345u, "%s relu(NaN payload) = %08x", isa_name(isa),
               test_f2u(q));
        // threshold: x > threshold ? g : 0, literally
        EXPECT1("threshold_bwd(0)", 2.5f, nan, 0.0f);
        EXPECT1("threshold_bwd(0)", nan, 1.0f, nan);
        EXPECT1("threshold_bwd(0)", nan, -1.0f, 0.0f);
        EXPECT1("threshold_bwd(0)", -0.0f, 1.0f, -0.0f);
        EXPECT1("threshold_bwd(0)", 3.0f, -0.0f, 0.0f);
        EXPECT1("threshold_bwd(0)", 3.0f, sub, 3.0f);
        EXPECT1("threshold_bwd(0)", inf, inf, inf);
        EXPECT1("threshold_bwd(0)", inf, -inf, 0.0f);
        EXPECT1("threshold_bwd(0.5)", 7.0f, 0.5f, 0.0f);
        EXPECT1("threshold_bwd(0.5)", 7.0f, 0x1.000002p-1f, 7.0f);
        EXPECT1("threshold_bwd(-1.25)", 7.0f, -1.0f, 7.0f);
        EXPECT1("threshold_bwd(-1.25)", 7.0f, -1.25f, 0.0f);
        // leaky relu: x > 0 ? x : x * slope
        EXPECT1("leaky_relu(0.01)", 0, -0.0f, -0.0f);
        EXPECT1("leaky_relu(-0.25)", 0, -0.0f, 0.0f);
        EXPECT1("leaky_relu(0.01)", 0, nan, nan);
        EXPECT1("leaky_relu(0.01)", 0, -inf, -inf);
        EXPECT1("leaky_relu(-0.25)", 0, -inf, inf);
        EXPECT1("leaky_relu(0.01)", 0, inf, inf);
        EXPECT1("leaky_relu(-0.25)", 0, -8.0f, 2.0f);
        EXPECT1("leaky_relu(0.01)", 0, -sub, -sub * 0.01f);
        EXPECT1("leaky_relu_bwd(0.01)", 2.0f, nan, 2.0f * 0.01f);
        EXPECT1("leaky_relu_bwd(0.01)", nan, 1.0f, nan);
        EXPECT1("leaky_relu_bwd(-0.25)", 4.0f, -0.0f, -1.0f);
        EXPECT1("leaky_relu_bwd(-0.25)", 4.0f, sub, 4.0f);
        // hardswish: the mathematical limits; -0 below -3 (PyTorch's sign), the joins
        EXPECT1("hardswish", 0, inf, inf);
        EXPECT1("hardswish", 0, -inf, -0.0f);
        EXPECT1("hardswish", 0, FLT_MAX, FLT_MAX);
        EXPECT1("hardswish", 0, -FLT_MAX, -0.0f);
        EXPECT1("hardswish", 0, -5.0f, -0.0f);
        EXPECT1("hardswish", 0, -3.0f, -0.0f);
        EXPECT1("hardswish", 0, 3.0f, 3.0f);
        EXPECT1("hardswish", 0, 0.0f, 0.0f);
        EXPECT1("hardswish", 0, -0.0f, -0.0f);
        EXPECT1("hardswish", 0, nan, nan);
        EXPECT1("hardswish", 0, -1.5f, -0.375f);
        EXPECT1("hardswish", 0, 0x1p-148f, 0x1p-149f); // subnormal result
        EXPECT1("hardswish_bwd", 2.0f, -3.0f, -1.0f);  // factor -0.5 at the join
        EXPECT1("hardswish_bwd", 2.0f, 3.0f, 3.0f);    // factor 1.5 at the join
        EXPECT1("hardswish_bwd", 2.0f, -3.00001f, 0.0f);
        EXPECT1("hardswish_bwd", 2.0f, 3.00001f, 2.0f);
        EXPECT1("hardswish_bwd", 2.0f, -1.5f, 0.0f);
        EXPECT1("hardswish_bwd", 6.0f, 0.0f, 3.0f);
        EXPECT1("hardswish_bwd", 2.0f, -inf, 0.0f);
        EXPECT1("hardswish_bwd", 2.0f, inf, 2.0f);
        EXPECT1("hardswish_bwd", 2.0f, nan, nan);
        EXPECT1("hardswish_bwd", nan, 1.0f, nan);
        EXPECT1("hardswish_bwd", FLT_MAX, 2.5f, FLT_MAX * (8.0f / 6.0f)); // inf
        // elu: expm1 keeps the sign of zero; limits
        EXPECT1("elu(1,1,1)", 0, -0.0f, -0.0f);
        EXPECT1("elu(1,1,1)", 0, 0.0f, 0.0f);
        EXPECT1("elu(1,1,1)", 0, -inf, -1.0f);
        EXPECT1("elu(1,1,1)", 0, inf, inf);
        EXPECT1("elu(1,1,1)", 0, nan, nan);
        EXPECT1("elu(1,1,1)", 0, -sub, -sub);
        EXPECT1("elu(2,0.75,0.5)", 0, -inf, -1.5f);
        EXPECT1("elu(1,1,-1.5)", 0, -inf, inf);
        EXPECT1("elu(1,1,-1.5)", 0, -0.0f, 0.0f); // (-0 * -1.5) * 1 = +0
        EXPECT1("elu(1,1,-1.5)", 0, -100.0f, inf);
        EXPECT1("elu(inf,2,1)", 0, -1.0f, -inf);
        EXPECT1("elu(inf,2,1)", 0, -0.0f, -inf);
        EXPECT1("elu(inf,2,1)", 0, 1.5f, 3.0f);
        EXPECT1("elu(inf,2,1)", 0, nan, nan);
        EXPECT1("elu_bwd(1,1,1)", 3.0f, -inf, 0.0f);
        EXPECT1("elu_bwd(1,1,1)", inf, -inf, nan); // elu'(-inf) is exactly 0
        EXPECT1("elu_bwd(1,1,1)", 3.0f, inf, 3.0f);
        EXPECT1("elu_bwd(1,1,1)", 3.0f, nan, nan);
        EXPECT1("elu_bwd(1,1,1)", nan, -1.0f, nan);
        EXPECT1("elu_bwd(1,1,1)", 3.0f, -0.0f, 3.0f);
        EXPECT1("elu_bwd(1,1,1)", inf, -1.0f, inf); // the fast path's pair: no inf - inf
        EXPECT1("elu_bwd(1,1,1)", -inf, -3.0f, -inf);
        EXPECT1("elu_bwd(1,1,1)", -0.0f, -1.0f, -0.0f); // the sign of g e^x
        EXPECT1("elu_bwd(selu)", -0.0f, -0.3f, -0.0f);
        EXPECT1("elu_bwd(2,0.75,0.5)", inf, -2.0f, inf);
        EXPECT1("elu(1,1,1)", 0, -0x1p-120f, -0x1p-120f); // tiny u: the double form
        EXPECT1("elu_bwd(1,1,1)", 3.0f, -200.0f, 0.0f);
        EXPECT1("elu_bwd(1,1,1)", 1.0f, -100.0f, 27 * 0x1p-149f); // e^-100 = 26.55 x 2^-149
        EXPECT1("elu_bwd(1,1,-1.5)", 1.0f, -100.0f, -inf);
        EXPECT1("elu_bwd_res(1,1,1)", 2.0f, -1.0f, 0.0f);
        EXPECT1("elu_bwd_res(1,1,1)", 2.0f, -0.5f, 1.0f);
        EXPECT1("elu_bwd_res(1,1,1)", 2.0f, 0.25f, 2.0f);
        EXPECT1("elu_bwd_res(1,1,1)", 2.0f, nan, nan);
    }
}

// ---------------------------------------------------------------------------------------------
// fp32 accuracy sample

static acc g_fp32[NCASES][OPGRAD_ISA_COUNT];
static long g_fp32_mismatch;

static void fp32_chunk(size_t n, const float *g, const float *x) {
    float *out[OPGRAD_ISA_COUNT];
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) out[isa] = malloc(n * 4);
    for (int c = 0; c < NCASES; c++) {
        const kcase *k = &CASES[c];
        for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
            if (!test_isa_available(isa)) continue;
            call_kernel(k, isa, n, g, x, out[isa]);
            if (isa == 0)
                judge(k, n, g, x, out[0], &g_fp32[c][0], "fp32");
            else if (memcmp(out[isa], out[0], n * 4))
                g_fp32_mismatch++;
        }
    }
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) free(out[isa]);
}

static void test_fp32_sample(void) {
    bool quick = test_quick_mode();
    size_t n_rand = quick ? (size_t)1 << 14 : (size_t)1 << 18, n_grid = quick ? 1 << 13 : 1 << 16;
    const size_t CH = 1 << 15;
    float *x = malloc(CH * 4), *g = malloc(CH * 4);
    test_rng r;
    test_rng_seed(&r, 20251129);
    static const float gset[] = {1.0f, -0.75f, 3.5f, 0x1p-10f, 1e30f, -1e-30f};
    // windows of consecutive floats: Hardswish's joins and the zero of its slope
    static const float win[][2] = {{-3.0004f, -2.9996f}, {2.9996f, 3.0004f}, {-1.5001f, -1.4999f}};
    size_t m = 0, total = 0;
    // phases: random bits; grid [-20, 20]; log-uniform |x| in [2^-30, 2^7]; grid [-110, -85]
    // (subnormal ELU gradients); the windows; the specials
    for (int ph = 0; ph < 8; ph++) {
        size_t count = ph == 0 ? n_rand : ph <= 3 ? n_grid : ph <= 6 ? 0 : NSPECIALS;
        uint32_t lo = 0, hi = 0;
        if (ph >= 4 && ph <= 6) {
            float a = win[ph - 4][0], b = win[ph - 4][1];
            // consecutive floats from a to b (same sign)
            lo = test_f2u(fabsf(a) < fabsf(b) ? a : b), hi = test_f2u(fabsf(a) < fabsf(b) ? b : a);
            count = hi - lo + 1;
        }
        for (size_t i = 0; i < count; i++) {
            float xv;
            switch (ph) {
            case 0:
                xv = test_u2f((uint32_t)(test_rng_next(&r) >> 32));
                break;
            case 1:
                xv = (float)(-20.0 + 40.0 * (double)i / (double)n_grid);
                break;
            case 2: {
                uint64_t u = test_rng_next(&r);
                xv = ldexpf(1.0f + (float)(u >> 41) * 0x1p-23f, -30 + (int)(u % 38));
                if (u & (1ull << 20)) xv = -xv;
                break;
            }
            case 3:
                xv = (float)(-110.0 + 25.0 * (double)i / (double)n_grid);
                break;
            case 7:
                xv = SPECIALS[i];
                break;
            default:
                xv = test_u2f(lo + (uint32_t)i);
                break;
            }
            x[m] = xv;
            uint64_t u = test_rng_next(&r);
            g[m] = u % 7 == 6 ? (float)test_rng_uniform(&r, -8, 8) : gset[u % 6];
            if (++m == CH || (ph == 7 && i == count - 1)) {
                fp32_chunk(m, g, x);
                total += m;
                m = 0;
            }
        }
    }
    printf("  fp32: %zu inputs (random bit patterns, grids over [-20, 20] and [-110, -85], "
           "log-uniform |x| in [2^-30, 2^7], every float near -3, 3 and -1.5, specials);\n"
           "  g in {1, -0.75, 3.5, 2^-10, 1e30, -1e-30, U(-8, 8)}\n",
           total);
    printf("    %-24s %9s  %s\n", "case", "max ulp", "at (x, g)");
    for (int c = 0; c < NCASES; c++) {
        acc *a = &g_fp32[c][0];
        printf("    %-24s %10.7f  (%a, %a)\n", CASES[c].name, a->max_ulp, a->worst_x, a->worst_g);
        CHECKF(a->viol == 0, "%s: %ld inputs beyond 1 ulp", CASES[c].name, a->viol);
    }
    CHECKF(g_fp32_mismatch == 0, "%ld chunks where an ISA differs from the scalar build",
           g_fp32_mismatch);
    free(x), free(g);
}

// ---------------------------------------------------------------------------------------------
// The public API

static aclScalar *fscalar(float v) { return aclCreateScalar(&v, ACL_FLOAT); }

// Runs case k through its aclnn entry points: out = op(g, x) (g unused by forwards).
static aclnnStatus api_call(const kcase *k, aclTensor *g, aclTensor *x, aclTensor *out) {
    aclnnStatus st = ACLNN_ERR_INNER;
    aclScalar *s0 = fscalar(k->a[0]), *s1 = fscalar(k->a[1]), *s2 = fscalar(k->a[2]);
    switch (k->f) {
    case F_RELU:
        OP_RUN(st, aclnnReluGetWorkspaceSize(x, out, &ws_, &ex_), aclnnRelu);
        break;
    case F_THRESH:
        OP_RUN(st, aclnnThresholdBackwardGetWorkspaceSize(g, x, s0, out, &ws_, &ex_),
               aclnnThresholdBackward);
        break;
    case F_LEAKY_F:
        OP_RUN(st, aclnnLeakyReluGetWorkspaceSize(x, s0, out, &ws_, &ex_), aclnnLeakyRelu);
        break;
    case F_LEAKY_B:
        OP_RUN(st, aclnnLeakyReluBackwardGetWorkspaceSize(g, x, s0, false, out, &ws_, &ex_),
               aclnnLeakyReluBackward);
        break;
    case F_HS_F:
        OP_RUN(st, aclnnHardswishGetWorkspaceSize(x, out, &ws_, &ex_), aclnnHardswish);
        break;
    case F_HS_B:
        OP_RUN(st, aclnnHardswishBackwardGetWorkspaceSize(g, x, out, &ws_, &ex_),
               aclnnHardswishBackward);
        break;
    case F_ELU_F:
        OP_RUN(st, aclnnEluGetWorkspaceSize(x, s0, s1, s2, out, &ws_, &ex_), aclnnElu);
        break;
    case F_ELU_B:
    case F_ELU_BR:
        OP_RUN(
            st,
            aclnnEluBackwardGetWorkspaceSize(g, s0, s1, s2, k->f == F_ELU_BR, x, out, &ws_, &ex_),
            aclnnEluBackward);
        break;
    }
    aclDestroyScalar(s0), aclDestroyScalar(s1), aclDestroyScalar(s2);
    return st;
}

// The in-place forward (aclnnInplace*), where there is one.
static aclnnStatus api_inplace(const kcase *k, aclTensor *x) {
    aclnnStatus st = ACLNN_ERR_INNER;
    aclScalar *s0 = fscalar(k->a[0]), *s1 = fscalar(k->a[1]), *s2 = fscalar(k->a[2]);
    switch (k->f) {
    case F_RELU:
        OP_RUN(st, aclnnInplaceReluGetWorkspaceSize(x, &ws_, &ex_), aclnnInplaceRelu);
        break;
    case F_LEAKY_F:
        OP_RUN(st, aclnnInplaceLeakyReluGetWorkspaceSize(x, s0, &ws_, &ex_), aclnnInplaceLeakyRelu);
        break;
    case F_HS_F:
        OP_RUN(st, aclnnInplaceHardswishGetWorkspaceSize(x, &ws_, &ex_), aclnnInplaceHardswish);
        break;
    case F_ELU_F:
        OP_RUN(st, aclnnInplaceEluGetWorkspaceSize(x, s0, s1, s2, &ws_, &ex_), aclnnInplaceElu);
        break;
    default:
        st = ACLNN_SUCCESS;
        break;
    }
    aclDestroyScalar(s0), aclDestroyScalar(s1), aclDestroyScalar(s2);
    return st;
}

static bool same_value(aclDataType dt, const void *base, int64_t i, double want) {
    double got = test_load(base, i, dt);
    if (isnan(want)) return isnan(got);
    return got == want && signbit(got) == signbit(want);
}

// API results at the sizes around the tiles, every dtype, ISA and 1 or 3 threads: the direct
// scalar kernel's fp32 result at the dtype's inputs, rounded to the dtype; guards intact; the
// in-place forms and outputs aliasing an input give the same bits.
static void test_api_sizes(void) {
    size_t sizes[256];
    int ns = size_list(sizes, 256);
    static const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    static const int threads[] = {1, 3};
    int saved_threads = opgrad_get_num_threads();
    long bad = 0;
    for (int s = 0; s < ns; s++) {
        size_t n = sizes[s];
        if (n == 0) continue; // empty tensors: the API tests
        float *g = malloc(n * 4), *x = malloc(n * 4), *gq = malloc(n * 4), *xq = malloc(n * 4),
              *e = malloc(n * 4);
        double *want = malloc(n * sizeof *want);
        fill_inputs(n, g, x, 5000 + n);
        for (int di = 0; di < 3; di++) {
            aclDataType dt = dts[di];
            size_t es = dt == ACL_FLOAT ? 4 : 2;
            gbuf bg = gbuf_new(n, es), bx = gbuf_new(n, es), bo = gbuf_new(n, es),
                 bt = gbuf_new(n, es);
            for (size_t i = 0; i < n; i++) {
                test_store(bg.data, (int64_t)i, dt, g[i]);
                test_store(bx.data, (int64_t)i, dt, x[i]);
                gq[i] = (float)test_load(bg.data, (int64_t)i, dt);
                xq[i] = (float)test_load(bx.data, (int64_t)i, dt);
            }
            int64_t dims[1] = {(int64_t)n};
            aclTensor *tg = test_tensor(dims, 1, dt, bg.data),
                      *tx = test_tensor(dims, 1, dt, bx.data);
            aclTensor *to = test_tensor(dims, 1, dt, bo.data),
                      *tt = test_tensor(dims, 1, dt, bt.data);
            for (int c = 0; c < NCASES; c++) {
                const kcase *k = &CASES[c];
                call_kernel(k, OPGRAD_ISA_SCALAR, n, gq, xq, e);
                for (size_t i = 0; i < n; i++) want[i] = test_round_to(dt, e[i]);
                for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
                    if (!test_isa_available(isa)) continue;
                    opgrad_set_max_isa((opgrad_isa)isa);
                    for (int th = 0; th < 2; th++) {
                        opgrad_set_num_threads(threads[th]);
                        long nb = 0;
                        CHECK_EQ(api_call(k, tg, tx, to), ACLNN_SUCCESS);
                        for (size_t i = 0; i < n; i++)
                            nb += !same_value(dt, bo.data, (int64_t)i, want[i]);
                        // in place: the forward's Inplace form; the output on an input's memory
                        memcpy(bt.data, bx.data, n * es);
                        if (k->nin == 1) {
                            CHECK_EQ(api_inplace(k, tt), ACLNN_SUCCESS);
                            for (size_t i = 0; i < n; i++)
                                nb += !same_value(dt, bt.data, (int64_t)i, want[i]);
                        }
                        memcpy(bt.data, bx.data, n * es);
                        CHECK_EQ(api_call(k, tg, tt, tt), ACLNN_SUCCESS);
                        for (size_t i = 0; i < n; i++)
                            nb += !same_value(dt, bt.data, (int64_t)i, want[i]);
                        if (k->nin == 2) {
                            memcpy(bt.data, bg.data, n * es);
                            CHECK_EQ(api_call(k, tt, tx, tt), ACLNN_SUCCESS);
                            for (size_t i = 0; i < n; i++)
                                nb += !same_value(dt, bt.data, (int64_t)i, want[i]);
                        }
                        gbuf *all[] = {&bg, &bx, &bo, &bt};
                        for (int q = 0; q < 4; q++) nb += !gbuf_guards_ok(all[q]);
                        if (nb && bad < 5)
                            fprintf(stderr, "    %s %s %s threads=%d n=%zu: %ld mismatches\n",
                                    k->name, og_dtype_name(dt), isa_name(isa), threads[th], n, nb);
                        bad += nb;
                    }
                }
            }
            aclDestroyTensor(tg), aclDestroyTensor(tx), aclDestroyTensor(to), aclDestroyTensor(tt);
            free(bg.raw), free(bx.raw), free(bo.raw), free(bt.raw);
        }
        free(g), free(x), free(gq), free(xq), free(e), free(want);
    }
    opgrad_set_num_threads(saved_threads);
    opgrad_set_max_isa(OPGRAD_ISA_COUNT - 1);
    CHECKF(bad == 0, "%ld API results differ from the direct kernels", bad);
    printf("  %d sizes x 3 dtypes x %d cases x ISAs x {1, 3} threads, in place and aliased\n", ns,
           NCASES);
}

// ---------------------------------------------------------------------------------------------
// fp16 / bf16 exhaustive through the public API

enum { NX = 65536, NG = 5 };
static double g_max16[2][NCASES];

static void exhaustive16(aclDataType dt, int row) {
    double gvals[NG] = {1.0, -0.75, 3.5, 0x1p-10, dt == ACL_FLOAT16 ? 1000.0 : 1e30};
    size_t total = (size_t)NX * NG;
    uint16_t *xs = malloc(total * 2), *gs = malloc(total * 2), *out = malloc(total * 2),
             *first = malloc(total * 2);
    double *gv = malloc(total * sizeof *gv), *xv = malloc(total * sizeof *xv);
    for (int j = 0; j < NG; j++)
        for (int i = 0; i < NX; i++) {
            size_t q = (size_t)j * NX + (size_t)i;
            xs[q] = (uint16_t)i;
            test_store(gs, (int64_t)q, dt, gvals[j]);
            gv[q] = test_load(gs, (int64_t)q, dt); // the grad actually stored (1e30 rounds in bf16)
            xv[q] = test_load(xs, (int64_t)q, dt);
        }
    int64_t dims[2] = {NG, NX};
    aclTensor *tx = test_tensor(dims, 2, dt, xs), *tg = test_tensor(dims, 2, dt, gs),
              *to = test_tensor(dims, 2, dt, out);
    long viol = 0, mism = 0;
    for (int c = 0; c < NCASES; c++) {
        const kcase *k = &CASES[c];
        size_t n = k->nin == 1 ? NX : total; // a forward sees the first row
        int64_t d1[1] = {NX};
        aclTensor *tx1 = test_tensor(d1, 1, dt, xs), *to1 = test_tensor(d1, 1, dt, out);
        double worst = 0;
        bool have_first = false;
        for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
            if (!test_isa_available(isa)) continue;
            opgrad_set_max_isa((opgrad_isa)isa);
            aclnnStatus st = k->nin == 1 ? api_call(k, NULL, tx1, to1) : api_call(k, tg, tx, to);
            CHECK_EQ(st, ACLNN_SUCCESS);
            if (!have_first) {
                for (size_t q = 0; q < n; q++) {
                    double ref = ref_of(k, gv[q], xv[q]);
                    double e = err_ulps(dt, test_load(out, (int64_t)q, dt), ref);
                    worst = fmax(worst, e);
                    if (!(e <= 1.0) && viol++ < 5)
                        fprintf(stderr, "    %s %s: x=%a g=%a got=%a want=%a (%.3g ulp)\n",
                                og_dtype_name(dt), k->name, xv[q], gv[q],
                                test_load(out, (int64_t)q, dt), ref, e);
                }
                memcpy(first, out, n * 2);
                have_first = true;
            } else if (memcmp(first, out, n * 2)) {
                if (mism++ < 5)
                    fprintf(stderr, "    %s %s: %s differs from the scalar build\n",
                            og_dtype_name(dt), k->name, isa_name(isa));
            }
        }
        g_max16[row][c] = worst;
        aclDestroyTensor(tx1), aclDestroyTensor(to1);
    }
    opgrad_set_max_isa(OPGRAD_ISA_COUNT - 1);
    CHECKF(viol == 0, "%s: %ld results beyond 1 ulp", og_dtype_name(dt), viol);
    CHECKF(mism == 0, "%s: %ld ISA mismatches", og_dtype_name(dt), mism);
    aclDestroyTensor(tx), aclDestroyTensor(tg), aclDestroyTensor(to);
    free(xs), free(gs), free(out), free(first), free(gv), free(xv);
}

static void test_fp16_exhaustive(void) { exhaustive16(ACL_FLOAT16, 0); }
static void test_bf16_exhaustive(void) { exhaustive16(ACL_BF16, 1); }

// ---------------------------------------------------------------------------------------------
// Throughput in L1: TSC cycles per element of each kernel, n = 2048 (8 KiB per operand)

static void test_l1_throughput(void) {
    enum { N = 2048, REPS = 400 };
    float *g = aligned_alloc(64, N * 4), *x = aligned_alloc(64, N * 4),
          *o = aligned_alloc(64, N * 4);
    test_rng r;
    test_rng_seed(&r, 5);
    for (int i = 0; i < N; i++)
        g[i] = (float)test_rng_uniform(&r, -2, 2), x[i] = (float)test_rng_uniform(&r, -6, 6);
    printf("  TSC cycles / element, n = %d in L1 (min of 5 runs of %d calls)\n", N, REPS);
    printf("    %-24s", "case");
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++)
        if (test_isa_available(isa)) printf(" %8s", isa_name(isa));
    printf("\n");
    for (int c = 0; c < NCASES; c++) {
        const kcase *k = &CASES[c];
        printf("    %-24s", k->name);
        for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
            if (!test_isa_available(isa)) continue;
            double best = INFINITY;
            for (int run = 0; run < 5; run++) {
                uint64_t t0 = __rdtsc();
                for (int rep = 0; rep < REPS; rep++) call_kernel(k, isa, N, g, x, o);
                uint64_t t1 = __rdtsc();
                best = fmin(best, (double)(t1 - t0) / ((double)N * REPS));
            }
            printf(" %8.3f", best);
        }
        printf("\n");
    }
    free(g), free(x), free(o);
}

static void print_table(void) {
    printf("\nmax error (ulps of the dtype) against float64, fp32 sample / fp16 and bf16 "
           "exhaustive:\n");
    printf("  %-24s %10s %10s %10s\n", "case", "fp32", "fp16", "bf16");
    for (int c = 0; c < NCASES; c++)
        printf("  %-24s %10.7f %10.7f %10.7f\n", CASES[c].name, g_fp32[c][0].max_ulp, g_max16[0][c],
               g_max16[1][c]);
}

int main(void) {
    init_cases();
    RUN(test_kernel_tables);
    RUN(test_kernel_sizes);
    RUN(test_kernel_inplace);
    RUN(test_special_values);
    RUN(test_fp32_sample);
    RUN(test_api_sizes);
    RUN(test_fp16_exhaustive);
    RUN(test_bf16_exhaustive);
    RUN(test_l1_throughput);
    print_table();
    return test_summary();
}
