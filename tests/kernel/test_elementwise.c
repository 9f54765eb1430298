/* The elementwise kernel harness: one test for every elementwise operator, derived from the
 * operator list (src/ops/ops.inc) and the checker's registry (src/check/registry_*.c). Adding an
 * operator there adds it here; nothing below names an operator except the clearly marked tables
 * of facts the lists cannot hold (VARIANTS, EXACT, SAME, FACTS).
 *
 *   test_elementwise <isa>    isa: scalar | avx2 | avx512 | avx512bf16 | avx512fp16 | amx
 *
 * runs every kernel with opgrad_set_max_isa(<isa>), compares each result with the scalar level's
 * bit for bit and judges it against the float64 references; it exits 77 (CTest: SKIPPED) when
 * this CPU lacks <isa>. Without an argument it runs every level the CPU has.
 *
 * Under test: every registry entry with per-element references (ref_forward) and at most three
 * inputs that its shapes hook (if any) keeps elementwise over one dim (an input may become [1]),
 * and the entries' attribute VARIANTS; each runs through its own entry points (ogc_op.forward /
 * backward over an ogc_call, as src/check/checker.c builds it):
 *
 *  - completeness: every operator of ops.inc appears in some registry entry's `api` string
 *    (Inplace<X> through X's entry); one that does not fails with its name;
 *  - sizes 0..49 and around the engine's tile widths (asked from og_ew_make_plan), fp32 / fp16 /
 *    bf16: inputs in exact-size malloc'd buffers (ASan sees an over-read; aclrtMalloc would pad
 *    the block), guard canaries around every output, inputs unchanged, every output over every
 *    input's memory (and a single gradient over gradOutput, the inputs and the saved tensors), the
 *    forward's Inplace<X> form through its phase-1 thunk with default attributes (against the
 *    entry's bits where its attributes are the defaults, else against X with the defaults);
 *  - fp32 accuracy with the checker's rule |err| <= c ulp + c 2^-24 M + 2^-149 (c = fp32_ulps, M
 *    the reference's magnitude bound): random bit patterns, a grid over the entry's domain, a
 *    log-spaced sweep of |x| in [2^-30, 2^8], every float near its specials and on both sides of
 *    its kinks (KINK_MARGIN ulps away), NaN / inf / +-0 / subnormals alone, paired and as
 *    gradOutput, large gradOutput where the derivative is tiny. A reference beyond the float range
 *    must be that infinity, a NaN only where the reference is NaN;
 *  - fp16 / bf16: all 65,536 encodings of each input (of y for a backward from the output) with
 *    NG gradOutput values and with random encodings of gradOutput and the other inputs, forward and
 *    backward, within the checker's 16-bit bound;
 *  - on every block: the scalar level's bits (see compare_bits for NaNs); 16-bit: the fused path
 *    equals the buffered one (OPGRAD_FUSED16=0, read when a plan is made); non-temporal stores
 *    (OPGRAD_NT_BYTES=1) with inputs from an odd element, outputs aligned or not; 1 and 3 threads
 *    (the plan splits: test_plan_splits); gradOutput broadcast from [1] where the operator takes
 * it;
 *  - EXACT, SAME, FACTS (below): fp32 specifications bit for bit, one kernel behind two names,
 *    exact values at limits, joins and signed zeros, through the list's phase-1 thunks.
 * One line per entry and level gives the max ulp seen (where M <= 2 |ref|); timings are in bench/.
 * OPGRAD_TEST_QUICK=1 shrinks the random fp32 samples and the windows, never a bound. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "check/check.h"
#include "check/compare.h"
#include "engine/elementwise.h"
#include "opgrad/opgrad.h"
#include "ops/ops.h"
#include "tensor/dtype.h"
#include "test.h"
#include "testutil.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof *(a)))

static int g_level; // the ISA level under test
static const char *level_name(int isa) { return opgrad_isa_name((opgrad_isa)isa); }

static const aclDataType DTYPES[3] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
static int dt_index(aclDataType dt) { return dt == ACL_FLOAT ? 0 : dt == ACL_FLOAT16 ? 1 : 2; }
static size_t esize(aclDataType dt) { return dt == ACL_FLOAT ? 4 : 2; }

static void *xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) abort();
    return p;
}

// ---------------------------------------------------------------------------------------------
// FACTS: what the lists cannot hold. Everything else in this file is derived from the operator
// list and the registry.

/// Attribute variants of registry entries: the entry with other attrs (its references and entry
/// points read op->attrs), values the old per-family tests covered that no entry has.
static const struct {
    const char *entry;
    double attrs[3];
} VARIANTS[] = {
    {"elu", {1.0f, 1.0f, -1.5f}}, // negative inputScale: e^(-1.5 x) overflows below x = -59
    {"elu_out", {1.0f, 1.0f, 1.0f}},
    {"add", {1.0}},
    {"add", {-0.75}},
};

/// Operators whose specification is fp32 arithmetic (compiled with -ffp-contract=off): the result
/// is exactly this expression of the inputs x (tensor parameters in order) and the attributes a
/// (attribute parameters in order, as float scalars), rounded once to the dtype; a scalar `other`
/// is first rounded to a 16-bit self's dtype where round_other says so (bit 0: fp16, bit 1: bf16;
/// Muls keeps it in fp32 for bf16, as ops-math does). Registry entries
/// of these operators are judged against their float64 references inside the entry's domain
/// only: outside it the fp32 arithmetic overflows where float64 does not.
typedef float (*exact_fn)(const float *x, const float *a);
static float exact_add(const float *x, const float *a) { return fmaf(a[0], x[1], x[0]); }
static float exact_adds(const float *x, const float *a) { return fmaf(a[1], a[0], x[0]); }
static float exact_mul(const float *x, const float *a) {
    (void)a;
    return x[0] * x[1];
}
static float exact_muls(const float *x, const float *a) { return x[0] * a[0]; }
static float exact_fused_add_scale(const float *x, const float *a) {
    (void)a;
    float s = x[0] + x[1];
    return s * x[2];
}
static const struct {
    const char *op, *attrs;
    exact_fn fn;
    int round_other;
} EXACT[] = {
    {"Add", "", exact_add, 0},
    {"Add", "alpha=-0.75", exact_add, 0},
    {"Add", "alpha=0.1", exact_add, 0},
    {"Adds", "other=-3.25,alpha=1.5", exact_adds, 3},
    {"Adds", "other=0.1,alpha=-0.75", exact_adds, 3},
    {"Mul", "", exact_mul, 0},
    {"Muls", "other=2", exact_muls, 1},
    {"Muls", "other=-0.3", exact_muls, 1},
    {"FusedAddScale", "", exact_fused_add_scale, 0},
};

/// Operators (with attributes) that give the same bits as another: one kernel behind two names.
static const struct {
    const char *a, *a_attrs, *b, *b_attrs;
} SAME[] = {
    {"Gelu", "", "GeluV2", "approximate=1"},
    {"GeluBackward", "", "GeluBackwardV2", "approximate=tanh"},
    {"Mish", "", "MishWithTanhx", ""}, // output 0
};

/// Exact fp32 results at special points: op (as listed in ops.inc), attribute values other than
/// the defaults ("name=value,..."), the tensor inputs in the order of the op's parameters, the
/// result (output 0; OUT1: output 1). ANY_ZERO: a zero of either sign; PAYLOAD: in[0] and the
/// result are the NaN 0x7fc12345.
enum { ANY_ZERO = 1, PAYLOAD = 2, OUT1 = 4 };
#define INF INFINITY
#define SUB 0x1p-140f
typedef struct fact {
    const char *op, *attrs;
    float in[3];
    float want;
    int flags;
} fact;
static const float LN2F = 0.69314718f;
static const fact FACTS[] = {
    // sigmoid, tanh: saturation and the signs of zero and tiny values
    {"Sigmoid", "", {INF}, 1.0f, 0},
    {"Sigmoid", "", {-INF}, 0.0f, 0},
    {"Sigmoid", "", {0.0f}, 0.5f, 0},
    {"Sigmoid", "", {-0.0f}, 0.5f, 0},
    {"Sigmoid", "", {200.0f}, 1.0f, 0},
    {"Sigmoid", "", {-200.0f}, 0.0f, 0},
    {"Tanh", "", {INF}, 1.0f, 0},
    {"Tanh", "", {-INF}, -1.0f, 0},
    {"Tanh", "", {0.0f}, 0.0f, 0},
    {"Tanh", "", {-0.0f}, -0.0f, 0},
    {"Tanh", "", {0x1p-149f}, 0x1p-149f, 0},
    {"Tanh", "", {-1e-40f}, -1e-40f, 0},
    {"Tanh", "", {1e-30f}, 1e-30f, 0},
    {"Tanh", "", {10.0f}, 1.0f, 0},
    {"SigmoidBackward", "", {3.0f, 0.0f}, 0.0f, ANY_ZERO},
    {"SigmoidBackward", "", {3.0f, 1.0f}, 0.0f, ANY_ZERO},
    {"SigmoidBackward", "", {3.0f, 0.5f}, 0.75f, 0},
    {"SigmoidBackward", "", {3.0f, INF}, -INF, 0},
    {"TanhBackward", "", {3.0f, 1.0f}, 0.0f, ANY_ZERO},
    {"TanhBackward", "", {3.0f, -1.0f}, 0.0f, ANY_ZERO},
    {"TanhBackward", "", {3.0f, 0.0f}, 3.0f, 0},
    {"TanhBackward", "", {3.0f, INF}, -INF, 0},
    // silu, gelu (both forms), softplus: limits, -0 at -inf, the largest floats
    {"Silu", "", {INF}, INF, 0},
    {"Silu", "", {0.0f}, 0.0f, 0},
    {"Silu", "", {-INF}, -0.0f, 0},
    {"Silu", "", {-0.0f}, -0.0f, 0},
    {"Silu", "", {FLT_MAX}, FLT_MAX, 0},
    {"Silu", "", {-FLT_MAX}, -0.0f, 0},
    {"Gelu", "", {INF}, INF, 0},
    {"Gelu", "", {0.0f}, 0.0f, 0},
    {"Gelu", "", {-INF}, -0.0f, 0},
    {"Gelu", "", {-0.0f}, -0.0f, 0},
    {"Gelu", "", {FLT_MAX}, FLT_MAX, 0},
    {"Gelu", "", {-FLT_MAX}, -0.0f, 0},
    {"GeluV2", "", {INF}, INF, 0},
    {"GeluV2", "", {0.0f}, 0.0f, 0},
    {"GeluV2", "", {-INF}, -0.0f, 0},
    {"GeluV2", "", {-0.0f}, -0.0f, 0},
    {"GeluV2", "", {FLT_MAX}, FLT_MAX, 0},
    {"GeluV2", "", {-FLT_MAX}, -0.0f, 0},
    {"Softplus", "", {0.0f}, LN2F, 0},
    {"Softplus", "", {25.0f}, 25.0f, 0},
    {"Softplus", "", {INF}, INF, 0},
    {"Softplus", "", {-INF}, 0.0f, 0},
    {"Softplus", "beta=0.7,threshold=12", {INF}, INF, 0},
    {"Softplus", "beta=0.7,threshold=12", {-INF}, 0.0f, 0},
    {"Softplus", "beta=0.7,threshold=12", {-FLT_MAX}, 0.0f, 0},
    {"SiluBackward", "", {1.5f, INF}, 1.5f, 0},
    {"SiluBackward", "", {1.5f, -INF}, 0.0f, ANY_ZERO},
    {"SiluBackward", "", {2.0f, 0.0f}, 1.0f, 0},
    {"SiluBackward", "", {1.5f, FLT_MAX}, 1.5f, 0},
    {"SiluBackward", "", {INF, -1.0f}, INF, 0},
    {"SiluBackward", "", {-INF, -0.3f}, -INF, 0},
    {"SiluBackward", "", {-0.0f, -1.0f}, -0.0f, 0},
    {"SiluBackward", "", {-0.0f, -3.0f}, 0.0f, 0},
    {"SiluBackward", "", {-0.0f, 2.0f}, -0.0f, 0},
    {"SiluBackward", "", {FLT_MAX, -INF}, 0.0f, ANY_ZERO},
    {"SiluBackward", "", {FLT_MAX, INF}, FLT_MAX, 0},
    {"GeluBackward", "", {1.5f, INF}, 1.5f, 0},
    {"GeluBackward", "", {1.5f, -INF}, 0.0f, ANY_ZERO},
    {"GeluBackward", "", {2.0f, 0.0f}, 1.0f, 0},
    {"GeluBackward", "", {-3.0f, -FLT_MAX}, 0.0f, ANY_ZERO},
    {"GeluBackwardV2", "", {1.5f, INF}, 1.5f, 0},
    {"GeluBackwardV2", "", {1.5f, -INF}, 0.0f, ANY_ZERO},
    {"GeluBackwardV2", "", {2.0f, 0.0f}, 1.0f, 0},
    {"GeluBackwardV2", "", {-3.0f, -FLT_MAX}, 0.0f, ANY_ZERO},
    {"GeluBackwardV2", "", {FLT_MAX, -INF}, 0.0f, ANY_ZERO},
    {"SoftplusBackward", "", {1.5f, INF}, 1.5f, 0},
    {"SoftplusBackward", "", {1.5f, -INF}, 0.0f, ANY_ZERO},
    {"SoftplusBackward", "", {2.0f, 0.0f}, 1.0f, 0},
    {"SoftplusBackward", "", {1.5f, 25.0f}, 1.5f, 0},
    {"SoftplusBackward", "", {INF, -1.0f}, INF, 0},
    {"SoftplusBackward", "", {-INF, -3.0f}, -INF, 0},
    {"SoftplusBackward", "", {-0.0f, -1.0f}, -0.0f, 0},
    {"SoftplusBackward", "", {-0.0f, 2.0f}, -0.0f, 0},
    {"SoftplusBackward", "", {FLT_MAX, -INF}, 0.0f, ANY_ZERO},
    {"SoftplusBackward", "beta=0.7,threshold=12", {1.5f, INF}, 1.5f, 0},
    {"SoftplusBackward", "beta=0.7,threshold=12", {1.5f, -INF}, 0.0f, ANY_ZERO},
    {"SoftplusBackward", "beta=0.7,threshold=12", {INF, -10.0f}, INF, 0},
    {"SoftplusBackward", "beta=0.7,threshold=12", {-0.0f, -0.3f}, -0.0f, 0},
    // relu: clamp_min(x, 0): NaN (with its payload) and -0 pass through
    {"Relu", "", {NAN}, NAN, 0},
    {"Relu", "", {-0.0f}, -0.0f, 0},
    {"Relu", "", {0.0f}, 0.0f, 0},
    {"Relu", "", {-INF}, 0.0f, 0},
    {"Relu", "", {INF}, INF, 0},
    {"Relu", "", {-FLT_MAX}, 0.0f, 0},
    {"Relu", "", {SUB}, SUB, 0},
    {"Relu", "", {-SUB}, 0.0f, 0},
    {"Relu", "", {NAN}, NAN, PAYLOAD}, // PAYLOAD: the NaN 0x7fc12345 in, the same bits out
    // threshold: x > threshold ? g : 0, literally
    {"ThresholdBackward", "", {2.5f, NAN}, 0.0f, 0},
    {"ThresholdBackward", "", {NAN, 1.0f}, NAN, 0},
    {"ThresholdBackward", "", {NAN, -1.0f}, 0.0f, 0},
    {"ThresholdBackward", "", {-0.0f, 1.0f}, -0.0f, 0},
    {"ThresholdBackward", "", {3.0f, -0.0f}, 0.0f, 0},
    {"ThresholdBackward", "", {3.0f, SUB}, 3.0f, 0},
    {"ThresholdBackward", "", {INF, INF}, INF, 0},
    {"ThresholdBackward", "", {INF, -INF}, 0.0f, 0},
    {"ThresholdBackward", "threshold=0.5", {7.0f, 0.5f}, 0.0f, 0},
    {"ThresholdBackward", "threshold=0.5", {7.0f, 0x1.000002p-1f}, 7.0f, 0},
    {"ThresholdBackward", "threshold=-1.25", {7.0f, -1.0f}, 7.0f, 0},
    {"ThresholdBackward", "threshold=-1.25", {7.0f, -1.25f}, 0.0f, 0},
    // leaky relu: x > 0 ? x : x slope, the sign of zero included
    {"LeakyRelu", "", {-0.0f}, -0.0f, 0},
    {"LeakyRelu", "", {NAN}, NAN, 0},
    {"LeakyRelu", "", {-INF}, -INF, 0},
    {"LeakyRelu", "", {INF}, INF, 0},
    {"LeakyRelu", "negativeSlope=-0.25", {-0.0f}, 0.0f, 0},
    {"LeakyRelu", "negativeSlope=-0.25", {-INF}, INF, 0},
    {"LeakyRelu", "negativeSlope=-0.25", {-8.0f}, 2.0f, 0},
    {"LeakyRelu", "", {-SUB}, -SUB * 0.01f, 0},
    {"LeakyReluBackward", "", {2.0f, NAN}, 2.0f * 0.01f, 0},
    {"LeakyReluBackward", "", {NAN, 1.0f}, NAN, 0},
    {"LeakyReluBackward", "negativeSlope=-0.25", {4.0f, -0.0f}, -1.0f, 0},
    {"LeakyReluBackward", "negativeSlope=-0.25", {4.0f, SUB}, 4.0f, 0},
    // hardswish: -0 below -3 (PyTorch's sign), the joins, a subnormal result
    {"Hardswish", "", {INF}, INF, 0},
    {"Hardswish", "", {FLT_MAX}, FLT_MAX, 0},
    {"Hardswish", "", {0.0f}, 0.0f, 0},
    {"Hardswish", "", {NAN}, NAN, 0},
    {"Hardswish", "", {-INF}, -0.0f, 0},
    {"Hardswish", "", {-FLT_MAX}, -0.0f, 0},
    {"Hardswish", "", {-5.0f}, -0.0f, 0},
    {"Hardswish", "", {-3.0f}, -0.0f, 0},
    {"Hardswish", "", {3.0f}, 3.0f, 0},
    {"Hardswish", "", {-0.0f}, -0.0f, 0},
    {"Hardswish", "", {-1.5f}, -0.375f, 0},
    {"Hardswish", "", {0x1p-148f}, 0x1p-149f, 0},
    {"HardswishBackward", "", {2.0f, -3.0f}, -1.0f, 0}, // slope -1/2 at the lower join
    {"HardswishBackward", "", {2.0f, 3.0f}, 3.0f, 0},   // slope 3/2 at the upper join
    {"HardswishBackward", "", {2.0f, -3.00001f}, 0.0f, 0},
    {"HardswishBackward", "", {2.0f, 3.00001f}, 2.0f, 0},
    {"HardswishBackward", "", {2.0f, -1.5f}, 0.0f, 0},
    {"HardswishBackward", "", {6.0f, 0.0f}, 3.0f, 0},
    {"HardswishBackward", "", {FLT_MAX, 2.5f}, INF, 0},
    {"HardswishBackward", "", {2.0f, -INF}, 0.0f, 0},
    {"HardswishBackward", "", {2.0f, INF}, 2.0f, 0},
    {"HardswishBackward", "", {2.0f, NAN}, NAN, 0},
    {"HardswishBackward", "", {NAN, 1.0f}, NAN, 0},
    {"HardswishBackward", "", {INF, 0.0f}, INF, 0},     // k = 1/2 exactly: no inf * 0
    {"HardswishBackward", "", {-INF, 1.5f}, -INF, 0},   // k = 1
    {"HardswishBackward", "", {0.0f, -2.0f}, -0.0f, 0}, // +0 times k = -1/6
    {"HardswishBackward", "", {-0.0f, 0.0f}, -0.0f, 0},
    {"HardswishBackward", "", {0x1p-149f, 1.5f}, 0x1p-149f, 0},
    {"HardswishBackward", "", {0x1p-140f, 0.75f}, 0x1.8p-141f, 0}, // k = 3/4, g tiny
    // elu: expm1 keeps the sign of zero; limits; the saturated alpha; inputScale < 0
    {"Elu", "", {-0.0f}, -0.0f, 0},
    {"Elu", "", {0.0f}, 0.0f, 0},
    {"Elu", "", {INF}, INF, 0},
    {"Elu", "", {NAN}, NAN, 0},
    {"Elu", "", {-INF}, -1.0f, 0},
    {"Elu", "", {-SUB}, -SUB, 0},
    {"Elu", "", {-0x1p-120f}, -0x1p-120f, 0},
    {"Elu", "alpha=2,scale=0.75,inputScale=0.5", {-INF}, -1.5f, 0},
    {"Elu", "inputScale=-1.5", {-INF}, INF, 0},
    {"Elu", "inputScale=-1.5", {-0.0f}, 0.0f, 0}, // (-0 x -1.5) x 1 = +0
    {"Elu", "inputScale=-1.5", {-100.0f}, INF, 0},
    {"Elu", "alpha=inf,scale=2", {-1.0f}, -INF, 0}, // saturated: (x > 0 ? x : -alpha) scale
    {"Elu", "alpha=inf,scale=2", {-0.0f}, -INF, 0},
    {"Elu", "alpha=inf,scale=2", {1.5f}, 3.0f, 0},
    {"Elu", "alpha=inf,scale=2", {NAN}, NAN, 0},
    {"EluBackward", "", {3.0f, -INF}, 0.0f, 0},
    {"EluBackward", "", {INF, -INF}, NAN, 0}, // elu'(-inf) is exactly 0
    {"EluBackward", "", {3.0f, -0.0f}, 3.0f, 0},
    {"EluBackward", "", {3.0f, INF}, 3.0f, 0},
    {"EluBackward", "", {3.0f, NAN}, NAN, 0},
    {"EluBackward", "", {NAN, -1.0f}, NAN, 0},
    {"EluBackward", "", {INF, -1.0f}, INF, 0}, // the fast path's pair: no inf - inf
    {"EluBackward", "", {-INF, -3.0f}, -INF, 0},
    {"EluBackward", "", {-0.0f, -1.0f}, -0.0f, 0}, // the sign of g e^x
    {"EluBackward", "alpha=1.6732632423543772,scale=1.0507009873554805", {-0.0f, -0.3f}, -0.0f, 0},
    {"EluBackward", "alpha=2,scale=0.75,inputScale=0.5", {INF, -2.0f}, INF, 0},
    {"EluBackward", "", {3.0f, -200.0f}, 0.0f, 0},
    {"EluBackward", "", {1.0f, -100.0f}, 27 * 0x1p-149f, 0}, // e^-100 = 26.55 x 2^-149
    {"EluBackward", "inputScale=-1.5", {1.0f, -100.0f}, -INF, 0},
    {"EluBackward", "isResult=true", {2.0f, -1.0f}, 0.0f, 0},
    {"EluBackward", "isResult=true", {2.0f, -0.5f}, 1.0f, 0},
    {"EluBackward", "isResult=true", {2.0f, 0.25f}, 2.0f, 0},
    {"EluBackward", "isResult=true", {2.0f, NAN}, NAN, 0},
    // mish: limits of y, t = tanh(softplus(x)) and the gradient (MishWithTanhx: out and tanhx)
    {"Mish", "", {-INF}, 0.0f, ANY_ZERO},
    {"Mish", "", {INF}, INF, 0},
    {"Mish", "", {0.0f}, 0.0f, 0},
    {"Mish", "", {-0.0f}, -0.0f, 0},
    {"MishWithTanhx", "", {-INF}, 0.0f, ANY_ZERO},
    {"MishWithTanhx", "", {-INF}, 0.0f, ANY_ZERO | OUT1},
    {"MishWithTanhx", "", {INF}, INF, 0},
    {"MishWithTanhx", "", {INF}, 1.0f, OUT1},
    {"MishBackward", "", {1.0f, -INF}, 0.0f, ANY_ZERO},
    {"MishBackward", "", {0x1p-10f, INF}, 0x1p-10f, 0},
    {"MishBackward", "", {-0.75f, INF}, -0.75f, 0},
    {"MishBackward", "", {3.5f, -INF}, 0.0f, ANY_ZERO},
    {"MishBackwardWithTanhx", "", {0x1p-10f, INF, 1.0f}, 0x1p-10f, 0},
    {"MishBackwardWithTanhx", "", {3.5f, -INF, 0.0f}, 0.0f, ANY_ZERO},
    {"MishBackwardWithTanhx", "", {-0.75f, INF, 1.0f}, -0.75f, 0},
    {"MishBackwardWithTanhx", "", {1.0f, 1.0f, NAN}, NAN, 0},
};
#undef SUB

// ---------------------------------------------------------------------------------------------
// The entries under test, from the registry

typedef struct acc {
    double max_ulp;   // where M <= 2 |ref|
    double max_ratio; // err / tolerance, everywhere
    int64_t compared, bad;
    int64_t unjudged; // points the references cannot judge (see judge_forward / judge_backward)
} acc;

typedef struct entry {
    ogc_op op; // the registry entry (a copy: a variant replaces attrs)
    char name[96];
    double attrs[3];
    const og_opdesc *fwd;     // the first aclnn operator of op.api
    const og_opdesc *inplace; // Inplace<fwd> in the list, or NULL
    bool attrs_default;       // the entry's attrs are fwd's defaults
    bool grad_bcast;          // the backward is fwd's grad operator: gradOutput may broadcast
    int nfwd;                 // forward results: out + nsaved
    int nsv;                  // saved tensors the backward reads
    int ngrad, gidx[OGC_MAX_IN];
    bool bcast[OGC_MAX_IN]; // input k is [1]
    bool fp32_spec;         // fwd is in EXACT: the references judge the entry's domain only
    acc fa[3], ba[3];       // accuracy per dtype (fp32, fp16, bf16), forward / backward
} entry;

enum { MAX_ENTRIES = 96 };
static entry g_entries[MAX_ENTRIES];
static int g_nentries;

// The i-th aclnn identifier of an api string ("aclnnGeluV2(approximate=0) + ..."), or false.
static bool api_ident(const char *api, int i, char *buf, size_t size) {
    for (const char *p = api; (p = strstr(p, "aclnn")); p++) {
        if (p > api && (p[-1] == '_' || (p[-1] >= 'A' && p[-1] <= 'Z') ||
                        (p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= '0' && p[-1] <= '9')))
            continue;
        size_t len = 0;
        while (p[len] == '_' || (p[len] >= 'A' && p[len] <= 'Z') ||
               (p[len] >= 'a' && p[len] <= 'z') || (p[len] >= '0' && p[len] <= '9'))
            len++;
        if (i-- == 0) {
            snprintf(buf, size, "%.*s", (int)len, p);
            return true;
        }
    }
    return false;
}

static bool is_attr_kind(og_param_kind k) {
    return k == OG_PARAM_SCALAR || k == OG_PARAM_INT || k == OG_PARAM_INT8 || k == OG_PARAM_BOOL ||
           k == OG_PARAM_DOUBLE || k == OG_PARAM_STRING;
}

// The value of a parameter's default or override as a double ("true" = 1).
static double attr_value(const char *s) {
    if (!strcmp(s, "true")) return 1;
    if (!strcmp(s, "false")) return 0;
    return atof(s);
}

// The entry's attributes are its forward's defaults: it has none and the operator takes none, or
// its attrs, in the order of the operator's attribute parameters (as every registry file lists
// them), equal their defaults as the float scalars the entry points pass.
static bool attrs_are_defaults(const ogc_op *op, const og_opdesc *fwd) {
    og_param p;
    int k = 0;
    for (int i = 0; og_opdesc_param(fwd, i, &p); i++) {
        if (!is_attr_kind(p.kind)) continue;
        if (!op->attrs || !p.def[0] || p.kind == OG_PARAM_STRING) return false;
        if ((float)op->attrs[k] != (float)attr_value(p.def)) return false;
        k++;
    }
    return true;
}

// Adds registry entry op (attrs replaced by `attrs` when not NULL) if the harness can run it.
static void add_entry(const ogc_op *op, const double *attrs, int nattrs) {
    if (!op->ref_forward || !op->ref_backward || op->nin < 1 || op->nin > 3 ||
        g_nentries == MAX_ENTRIES)
        return;
    entry *e = &g_entries[g_nentries];
    memset(e, 0, sizeof *e);
    e->op = *op;
    snprintf(e->name, sizeof e->name, "%s", op->name);
    if (attrs) {
        int len = (int)strlen(e->name);
        for (int i = 0; i < nattrs; i++) {
            e->attrs[i] = attrs[i];
            len += snprintf(e->name + len, sizeof e->name - (size_t)len, "%s%g",
                            i ? "," : " (attrs ", attrs[i]);
        }
        snprintf(e->name + len, sizeof e->name - (size_t)len, ")");
        e->op.attrs = e->attrs;
    }
    // shapes: elementwise over one dim; the hook may make an input [1]
    if (op->shapes) {
        ogc_shape in[OGC_MAX_IN], out = {.ndim = 1, .dims = {1000}};
        for (int k = 0; k < op->nin; k++) in[k] = out;
        if (!op->shapes(&e->op, "contiguous", in, &out) || out.ndim != 1 || out.dims[0] != 1000)
            return;
        for (int k = 0; k < op->nin; k++) {
            int64_t n = 1;
            for (int d = 0; d < in[k].ndim; d++) n *= in[k].dims[d];
            if (n != 1 && n != 1000) return;
            e->bcast[k] = n == 1;
        }
    }
    char name[64];
    if (!api_ident(op->api, 0, name, sizeof name) || !(e->fwd = og_op_find(name))) return;
    char inplace[80];
    snprintf(inplace, sizeof inplace, "Inplace%s", e->fwd->name + 5);
    e->inplace = og_op_find(inplace);
    e->attrs_default = attrs_are_defaults(&e->op, e->fwd);
    const og_opdesc *grad = og_op_grad(e->fwd);
    e->grad_bcast = grad && api_ident(op->api, 1, name, sizeof name) && !strcmp(name, grad->name);
    e->nfwd = 1 + op->nsaved;
    e->nsv = op->backward_uses_output ? 1 : op->nsaved;
    for (int k = 0; k < op->nin; k++)
        if (op->in[k].differentiable) e->gidx[e->ngrad++] = k;
    for (int i = 0; i < COUNT(EXACT); i++) e->fp32_spec |= !strcmp(EXACT[i].op, e->fwd->name + 5);
    g_nentries++;
}

static int g_variant_found[COUNT(VARIANTS)];

static void collect_entries(void) {
    for (int i = 0; i < ogc_registry_count(); i++) {
        const ogc_op *op = ogc_registry_get(i);
        add_entry(op, NULL, 0);
        for (int v = 0; v < COUNT(VARIANTS); v++)
            if (!strcmp(VARIANTS[v].entry, op->name)) {
                g_variant_found[v]++;
                int n = 0;
                while (n < 3 && VARIANTS[v].attrs[n] != 0) n++;
                add_entry(op, VARIANTS[v].attrs, n);
            }
    }
}

// ---------------------------------------------------------------------------------------------
// Completeness: every operator of the list is run by some registry entry

static bool api_names(const char *api, const char *aclnn_name) {
    char id[64];
    for (int i = 0; api_ident(api, i, id, sizeof id); i++)
        if (!strcmp(id, aclnn_name)) return true;
    return false;
}

static void test_completeness(void) {
    int covered = 0;
    for (int i = 0; i < og_ops_count; i++) {
        const og_opdesc *op = og_ops[i];
        const og_opdesc *x = op;
        if (!strncmp(op->name, "aclnnInplace", 12)) { // Inplace<X>: covered by X's entry
            char base[64];
            snprintf(base, sizeof base, "%s", op->name + 12);
            const og_opdesc *b = og_op_find(base);
            if (b) x = b;
        }
        bool found = false;
        for (int r = 0; r < ogc_registry_count() && !found; r++)
            found = api_names(ogc_registry_get(r)->api, x->name);
        covered += found;
        CHECKF(found,
               "%s (family %s) is in src/ops/ops.inc but no checker registry entry runs %s: add "
               "an entry to src/check/registry_%s.c",
               op->name, op->family, x->name, op->family);
    }
    printf("  %d of %d operators of the list run by registry entries; %d entries under test here\n",
           covered, og_ops_count, g_nentries);
}

// ---------------------------------------------------------------------------------------------
// Running an entry through its entry points

// A contiguous 1-d tensor of n elements over data.
static aclTensor *vec(void *data, int64_t n, aclDataType dt) {
    static char dummy[64];
    int64_t dims[1] = {n};
    return test_tensor(dims, 1, dt, data ? data : dummy);
}

static ogc_result result_of(void *data, int64_t n, aclDataType dt) {
    ogc_result r = {.dtype = dt, .ndim = 1, .dims = {n}, .data = data};
    r.capacity = (size_t)n * esize(dt);
    return r;
}

/// One call's operands: inputs (n elements, 1 when broadcast), gradOutput (n, or 1 with
/// g_bcast), the saved tensors the backward reads (n), outputs (forward: out and saved;
/// backward: one per gradient, 1 element for a broadcast input).
typedef struct ops_io {
    aclDataType dt;
    int64_t n;
    void *in[OGC_MAX_IN];
    void *g;
    bool g_bcast;
    void *saved[OGC_MAX_SAVED];
    void *out[OGC_MAX_RESULTS];
} ops_io;

static int64_t in_len(const entry *e, int k, int64_t n) { return e->bcast[k] ? 1 : n; }

static int run_entry(const entry *e, bool bwd, const ops_io *io) {
    aclTensor *in[OGC_MAX_IN] = {0}, *saved[OGC_MAX_SAVED] = {0}, *g = NULL;
    ogc_result res[OGC_MAX_RESULTS];
    for (int k = 0; k < e->op.nin; k++) in[k] = vec(io->in[k], in_len(e, k, io->n), io->dt);
    ogc_call c = {.op = &e->op, .dtype = io->dt};
    for (int k = 0; k < e->op.nin; k++) c.in[k] = in[k];
    int nres;
    if (!bwd) {
        nres = e->nfwd;
        for (int r = 0; r < nres; r++) res[r] = result_of(io->out[r], io->n, io->dt);
    } else {
        nres = e->ngrad;
        for (int j = 0; j < nres; j++)
            res[j] = result_of(io->out[j], in_len(e, e->gidx[j], io->n), io->dt);
        g = vec(io->g, io->g_bcast ? 1 : io->n, io->dt);
        c.grad_out = g;
        for (int s = 0; s < e->nsv; s++) c.saved[s] = saved[s] = vec(io->saved[s], io->n, io->dt);
    }
    c.results = res;
    c.nresults = nres;
    int st = bwd ? e->op.backward(&c) : e->op.forward(&c);
    if (st == 0 && c.nresults != nres) st = -1000 - c.nresults;
    for (int k = 0; k < e->op.nin; k++) aclDestroyTensor(in[k]);
    for (int s = 0; s < e->nsv; s++)
        if (saved[s]) aclDestroyTensor(saved[s]);
    if (g) aclDestroyTensor(g);
    return st;
}

// ---------------------------------------------------------------------------------------------
// Any operator of the list through its phase-1 thunk: tensors in parameter order, attributes
// from their defaults or "name=value,..." overrides

static bool override_of(const char *overrides, const char *name, char *val, size_t size) {
    size_t len = strlen(name);
    for (const char *p = overrides; p && *p;) {
        const char *end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        if ((size_t)(end - p) > len && !strncmp(p, name, len) && p[len] == '=') {
            snprintf(val, size, "%.*s", (int)(end - p - (ptrdiff_t)len - 1), p + len + 1);
            return true;
        }
        p = *end ? end + 1 : end;
    }
    return false;
}

/// Runs op with tensors[] for its T/G/Y/R parameters and outs[] for its O parameters, in order.
/// Returns the aclnn status, or -1 (with *why) when an attribute has no value.
static int call_op(const og_opdesc *op, aclTensor *const *tensors, aclTensor *const *outs,
                   const char *overrides, const char **why) {
    og_arg args[16];
    aclScalar *scalars[16];
    char strings[4][48];
    int ns = 0, nstr = 0, ti = 0, oi = 0;
    og_param p;
    int st = 0;
    for (int i = 0; og_opdesc_param(op, i, &p) && i < 16; i++) {
        char val[48] = "";
        if (is_attr_kind(p.kind) && !override_of(overrides, p.name, val, sizeof val)) {
            snprintf(val, sizeof val, "%s", p.def);
            if (val[0] == '"') { // a quoted string default
                memmove(val, val + 1, strlen(val));
                char *q = strchr(val, '"');
                if (q) *q = 0;
            }
            if (!p.def[0]) {
                *why = "an attribute without a default";
                st = -1;
                break;
            }
        }
        switch (p.kind) {
        case OG_PARAM_TENSOR:
        case OG_PARAM_GRAD:
        case OG_PARAM_RESULT:
        case OG_PARAM_REF:
            args[i].t = tensors[ti++];
            break;
        case OG_PARAM_OUT:
            args[i].t = outs[oi++];
            break;
        case OG_PARAM_SCALAR: {
            float f = !strcmp(val, "inf") ? INFINITY : (float)attr_value(val);
            args[i].s = scalars[ns++] = aclCreateScalar(&f, ACL_FLOAT);
            break;
        }
        case OG_PARAM_INT:
            args[i].i = (int64_t)attr_value(val);
            break;
        case OG_PARAM_INT8:
            args[i].i8 = (int8_t)attr_value(val);
            break;
        case OG_PARAM_BOOL:
            args[i].b = attr_value(val) != 0;
            break;
        case OG_PARAM_DOUBLE:
            args[i].d = attr_value(val);
            break;
        case OG_PARAM_STRING:
            snprintf(strings[nstr], sizeof strings[nstr], "%s", val);
            args[i].c = strings[nstr++];
            break;
        default:
            *why = "a parameter kind the harness does not build";
            st = -1;
            break;
        }
        if (st) break;
    }
    if (!st) {
        uint64_t ws = 0;
        aclOpExecutor *ex = NULL;
        aclnnStatus p1 = op->phase1(args, &ws, &ex); // before ws and ex are read
        st = test_run(p1, ws, ex, op->phase2, NULL);
    }
    for (int i = 0; i < ns; i++) aclDestroyScalar(scalars[i]);
    return st;
}

// Tensor (T G Y R) and output (O) parameters of op.
static void op_counts(const og_opdesc *op, int *nt, int *no) {
    og_param p;
    *nt = *no = 0;
    for (int i = 0; og_opdesc_param(op, i, &p); i++) {
        if (p.kind == OG_PARAM_OUT) ++*no;
        if (p.kind == OG_PARAM_TENSOR || p.kind == OG_PARAM_GRAD || p.kind == OG_PARAM_RESULT ||
            p.kind == OG_PARAM_REF)
            ++*nt;
    }
}

// The attribute values of op (overrides, else defaults) in parameter order, as float scalars.
static int attr_values(const og_opdesc *op, const char *overrides, float *a, int cap) {
    og_param p;
    int n = 0;
    for (int i = 0; og_opdesc_param(op, i, &p) && n < cap; i++) {
        if (!is_attr_kind(p.kind)) continue;
        char val[48];
        if (!override_of(overrides, p.name, val, sizeof val))
            snprintf(val, sizeof val, "%s", p.def);
        a[n++] = (float)attr_value(val);
    }
    return n;
}

/// op over n elements of dt: its tensor parameters over ins[], its outputs over outs[], in order.
static int op_run(const og_opdesc *op, const char *attrs, aclDataType dt, int64_t n,
                  void *const *ins, void *const *outs, const char **why) {
    int nt, no;
    op_counts(op, &nt, &no);
    aclTensor *ts[8] = {0}, *os[4] = {0};
    for (int k = 0; k < nt; k++) ts[k] = vec(ins[k], n, dt);
    for (int k = 0; k < no; k++) os[k] = vec(outs[k], n, dt);
    int st = call_op(op, ts, os, attrs, why);
    for (int k = 0; k < nt; k++) aclDestroyTensor(ts[k]);
    for (int k = 0; k < no; k++) aclDestroyTensor(os[k]);
    return st;
}

// ---------------------------------------------------------------------------------------------
// Judging against the references: the checker's rule (ogc_tolerance: c = fp32_ulps for fp32,
// 1 for the rounded 16-bit results), with the limits made exact: a NaN only where the reference
// is NaN, an infinite reference (or one beyond the dtype's range) must be that infinity

static bool judge(acc *a, double c, aclDataType dt, double got, double ref, double mag,
                  int64_t terms, double *ulp_out) {
    bool ok;
    double ulp = 0;
    double m = isfinite(mag) && mag > fabs(ref) ? mag : fabs(ref);
    double tol = isfinite(ref) ? ogc_tolerance(c, dt, ref, m, terms) : 0;
    if (isnan(ref) || isinf(ref)) {
        ok = isnan(ref) ? isnan(got) != 0 : got == ref;
        ulp = ok ? 0 : INFINITY;
    } else if (!isfinite(got)) {
        // an infinity where a value within the tolerance rounds to it (the overflow threshold:
        // the largest finite value plus half an ulp)
        double max = ldexp(2.0 - ldexp(1.0, -ogc_mant_bits(dt) - 1), dt == ACL_FLOAT16 ? 15 : 127);
        ok = isinf(got) && signbit(got) == signbit(ref) && fabs(ref) + tol >= max;
        ulp = ok ? 0 : INFINITY;
    } else {
        double err = fabs(got - ref);
        ok = err <= tol;
        ulp = err / ogc_ulp_of(dt, ref);
        if (m <= 2 * fabs(ref) && terms <= 1) a->max_ulp = fmax(a->max_ulp, ulp);
        a->max_ratio = fmax(a->max_ratio, err / tol);
    }
    a->compared++;
    a->bad += !ok;
    if (ulp_out) *ulp_out = ulp;
    return ok;
}

// ---------------------------------------------------------------------------------------------
// One block of test points through every check

enum {
    B_THREADS = 1,   // 1 vs 3 threads
    B_SHIFT = 2,     // 16-bit: non-temporal stores from an odd address
    B_GBCAST = 4,    // backward: gradOutput broadcast from [1] (g is one value)
    B_ALIAS = 8,     // output over an input's memory; the Inplace form
    B_YGIVEN = 16,   // backward from the output: saved[0] is given (not the forward's)
    B_FWDQUIET = 32, // the forward only makes the saved tensors (an earlier block checked it)
};

/// A block: n points of dtype dt in exact-size buffers (in[k], g, and for B_YGIVEN y).
typedef struct block {
    aclDataType dt;
    int64_t n;
    void *in[OGC_MAX_IN];
    void *g;
    void *y; // B_YGIVEN: the values the backward reads as the forward's output
    int flags;
    const char *what;
} block;

static double ld(const void *p, int64_t i, aclDataType dt) { return test_load(p, i, dt); }

static int64_t g_bit_failures, g_guard_failures;

static unsigned long long bits_of(const void *p, size_t es) {
    uint32_t u = 0;
    memcpy(&u, p, es);
    return u;
}

// Elements where a and b differ. Equal: the same bits; or both NaN, with the same payload where
// exactly one input is NaN and the others are finite. Otherwise the payload is open: an invalid
// operation (inf - inf, 0 inf) makes the default NaN, and with two NaN operands the compiler may
// order a commutative operation either way. The sign of a NaN is never compared (IEEE 754 6.3
// does not interpret it: fnmadd keeps it in hardware, the scalar build's fmaf(-a, b, c) flips it).
// Bit for bit, except NaNs: a NaN from one NaN input at that element (and no inf) must keep the
// input's payload; any other NaN may be any NaN. That includes a reduced output (a gradient of
// a broadcast input), whose elements combine many inputs: where two NaNs meet, x86 keeps the
// first operand's, and C leaves the compiler free to swap an addition's operands (gcc -O2 and
// -O3 differ there), so the payload is not defined by the source.
static int64_t compare_bits(const entry *e, const block *b, bool bwd, const void *x, const void *y,
                            int64_t n, int64_t shift, const char *what, int out_index,
                            bool reduced) {
    aclDataType dt = b->dt;
    size_t es = esize(dt);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const char *p = (const char *)x + (size_t)i * es, *q = (const char *)y + (size_t)i * es;
        if (!memcmp(p, q, es)) continue;
        double u = ld(x, i, dt), v = ld(y, i, dt);
        if (isnan(u) && isnan(v)) {
            int64_t at = i + shift;
            int nans = 0, infs = 0;
            for (int k = 0; k < e->op.nin + bwd; k++) {
                double v = k < e->op.nin ? ld(b->in[k], e->bcast[k] ? 0 : at, dt)
                                         : ld(b->g, (b->flags & B_GBCAST) ? 0 : at, dt);
                nans += isnan(v) != 0, infs += isinf(v) != 0;
            }
            uint32_t pu = 0, qu = 0;
            memcpy(&pu, p, es), memcpy(&qu, q, es);
            uint32_t sign = es == 4 ? 0x80000000u : 0x8000u;
            if (reduced || nans != 1 || infs || (pu & ~sign) == (qu & ~sign)) continue;
        }
        if (bad++ < 3)
            fprintf(
                stderr,
                "    %s %s %s %s %s n=%lld: %s %d differs at [%lld] (x=%a): %a vs %a (bits %0*llx "
                "vs %0*llx)\n",
                e->name, level_name(g_level), og_dtype_name(dt), bwd ? "backward" : "forward",
                b->what, (long long)b->n, what, out_index, (long long)(i + shift),
                ld(b->in[0], e->bcast[0] ? 0 : i + shift, dt), u, v, (int)es * 2, bits_of(p, es),
                (int)es * 2, bits_of(q, es));
    }
    g_bit_failures += bad;
    return bad;
}

/// Guarded outputs: n elements with canaries on both sides (tests/common gbuf).
typedef struct outs {
    gbuf b[OGC_MAX_RESULTS];
    int count;
    int64_t off; // the results start at this element of the buffers
} outs;

static void outs_new(outs *o, const entry *e, bool bwd, int64_t n, aclDataType dt) {
    o->count = bwd ? e->ngrad : e->nfwd;
    o->off = 0;
    for (int r = 0; r < o->count; r++) {
        int64_t len = bwd ? in_len(e, e->gidx[r], n) : n;
        o->b[r] = gbuf_new((size_t)len, esize(dt));
        memset(o->b[r].data, 0xa5, (size_t)len * esize(dt));
    }
}
static void outs_free(outs *o) {
    for (int r = 0; r < o->count; r++) gbuf_free(&o->b[r]);
}

// Runs the entry at `isa` with `threads` on io (outputs into o) and checks status and canaries.
static void run_checked(const entry *e, const block *b, bool bwd, ops_io *io, outs *o, int isa,
                        int threads, const char *what) {
    opgrad_set_max_isa((opgrad_isa)isa);
    int saved_threads = opgrad_get_num_threads();
    if (threads) opgrad_set_num_threads(threads);
    for (int r = 0; r < o->count; r++)
        io->out[r] = (char *)o->b[r].data + (size_t)o->off * esize(b->dt);
    int st = run_entry(e, bwd, io);
    if (threads) opgrad_set_num_threads(saved_threads);
    opgrad_set_max_isa((opgrad_isa)g_level);
    CHECKF(st == 0, "%s %s %s %s %s n=%lld (%s): status %d: %s", e->name, level_name(isa),
           og_dtype_name(b->dt), bwd ? "backward" : "forward", b->what, (long long)b->n, what, st,
           aclGetRecentErrMsg());
    for (int r = 0; r < o->count; r++)
        if (!gbuf_guards_ok(&o->b[r]) && g_guard_failures++ < 5)
            fprintf(stderr, "    %s %s %s %s %s n=%lld (%s): wrote outside output %d\n", e->name,
                    level_name(isa), og_dtype_name(b->dt), bwd ? "backward" : "forward", b->what,
                    (long long)b->n, what, r);
}

static void check_same(const entry *e, const block *b, bool bwd, const outs *want, const outs *got,
                       int64_t shift, const char *what) {
    for (int r = 0; r < want->count; r++) {
        int64_t len = bwd ? in_len(e, e->gidx[r], b->n) : b->n;
        int64_t s = len == b->n ? shift : 0;
        size_t es = esize(b->dt);
        int64_t bad = compare_bits(e, b, bwd, (const char *)want->b[r].data + (size_t)s * es,
                                   (const char *)got->b[r].data + (size_t)got->off * es, len - s, s,
                                   what, r, len != b->n);
        CHECKF(bad == 0, "%s %s %s %s %s n=%lld: %lld elements of result %d differ (%s)", e->name,
               level_name(g_level), og_dtype_name(b->dt), bwd ? "backward" : "forward", b->what,
               (long long)b->n, (long long)bad, r, what);
    }
}

// The forward or backward of block b at the level under test, compared with every variant of
// the same call; returns the results (caller frees) for the references and the backward.
static void run_variants(const entry *e, const block *b, bool bwd, ops_io *io, outs *res,
                         outs *scalar_res) {
    aclDataType dt = b->dt;
    int64_t n = b->n;
    outs o;
    outs_new(res, e, bwd, n, dt);
    run_checked(e, b, bwd, io, res, g_level, (b->flags & B_THREADS) ? 1 : 0, "as is");
    if (b->flags & B_THREADS) { // 3 threads: the plan splits (checked in test_plan_splits)
        outs_new(&o, e, bwd, n, dt);
        run_checked(e, b, bwd, io, &o, g_level, 3, "3 threads");
        check_same(e, b, bwd, res, &o, 0, "3 threads vs 1");
        outs_free(&o);
    }
    if (dt != ACL_FLOAT) { // the buffered path
        setenv("OPGRAD_FUSED16", "0", 1);
        outs_new(&o, e, bwd, n, dt);
        run_checked(e, b, bwd, io, &o, g_level, 0, "OPGRAD_FUSED16=0");
        unsetenv("OPGRAD_FUSED16");
        check_same(e, b, bwd, res, &o, 0, "fused 16-bit path vs buffered (OPGRAD_FUSED16=0)");
        outs_free(&o);
    }
    if ((b->flags & B_SHIFT) && n > 1) { // from element 1: odd address, non-temporal stores
        ops_io sh = *io;
        size_t es = esize(dt);
        sh.n = n - 1;
        for (int k = 0; k < e->op.nin; k++)
            if (!e->bcast[k]) sh.in[k] = (char *)io->in[k] + es;
        if (bwd) {
            if (!io->g_bcast) sh.g = (char *)io->g + es;
            for (int s = 0; s < e->nsv; s++) sh.saved[s] = (char *)io->saved[s] + es;
        }
        // inputs from element 1; outputs aligned (non-temporal stores) or not (plain stores
        // where the fused path cannot stream), fused or buffered
        static const char *const pass_names[] = {
            "inputs from element 1, OPGRAD_NT_BYTES=1",
            "inputs and outputs from element 1, OPGRAD_NT_BYTES=1",
            "inputs from element 1, OPGRAD_NT_BYTES=1, OPGRAD_FUSED16=0"};
        bool reduced = false; // a gradient of a broadcast input: one element, summing the others
        for (int r = 0; bwd && r < e->ngrad; r++) reduced |= e->bcast[e->gidx[r]];
        for (int pass = 0; pass < 3; pass++) {
            if (pass == 1 && reduced) continue;
            setenv("OPGRAD_NT_BYTES", "1", 1);
            if (pass == 2) setenv("OPGRAD_FUSED16", "0", 1);
            outs_new(&o, e, bwd, n, dt);
            o.off = pass == 1;
            run_checked(e, b, bwd, &sh, &o, g_level, 0, pass_names[pass]);
            unsetenv("OPGRAD_NT_BYTES");
            unsetenv("OPGRAD_FUSED16");
            if (!reduced) check_same(e, b, bwd, res, &o, 1, pass_names[pass]);
            outs_free(&o);
        }
    }
    if (bwd && (b->flags & B_GBCAST) && e->grad_bcast) {
        // where the operator takes a broadcast gradOutput (some require self's shape: 161002)
        ops_io gb = *io;
        gb.g_bcast = true;
        outs_new(&o, e, bwd, n, dt);
        for (int r = 0; r < o.count; r++) gb.out[r] = o.b[r].data;
        int st = run_entry(e, true, &gb);
        if (st == ACLNN_ERR_PARAM_INVALID) {
            ((entry *)e)->grad_bcast = false;
            printf("  note: %s: the backward refuses a gradOutput broadcast from [1]\n", e->name);
        } else {
            CHECKF(st == 0, "%s %s: gradOutput broadcast from [1]: status %d: %s", e->name,
                   og_dtype_name(dt), st, aclGetRecentErrMsg());
            check_same(e, b, bwd, res, &o, 0, "gradOutput broadcast from [1] vs full");
        }
        outs_free(&o);
    }
    if (g_level != OPGRAD_ISA_SCALAR) {
        outs_new(scalar_res, e, bwd, n, dt);
        run_checked(e, b, bwd, io, scalar_res, OPGRAD_ISA_SCALAR, 0, "scalar level");
        check_same(e, b, bwd, scalar_res, res, 0, "this level vs the scalar level");
    } else {
        scalar_res->count = 0;
    }
}

// Operand `which` of a call: inputs 0..OGC_MAX_IN-1, then gradOutput, then the saved tensors.
enum { OPD_G = OGC_MAX_IN, OPD_SAVED = OGC_MAX_IN + 1 };
static void **operand(ops_io *io, int which) {
    return which < OPD_G ? &io->in[which] : which == OPD_G ? &io->g : &io->saved[which - OPD_SAVED];
}

// Runs io with output r over a copy of operand `which` (element for element) and compares.
static void alias_run(const entry *e, const block *b, bool bwd, const ops_io *io, const outs *res,
                      int r, int which, const char *what) {
    size_t bytes = (size_t)b->n * esize(b->dt);
    ops_io al = *io;
    void *copy = xmalloc(bytes);
    memcpy(copy, *operand(&al, which), bytes);
    outs o;
    outs_new(&o, e, bwd, b->n, b->dt);
    for (int q = 0; q < o.count; q++) al.out[q] = o.b[q].data;
    al.out[r] = copy;
    *operand(&al, which) = copy;
    int st = run_entry(e, bwd, &al);
    CHECKF(st == 0, "%s %s: result %d over %s: status %d: %s", e->name, og_dtype_name(b->dt), r,
           what, st, aclGetRecentErrMsg());
    memcpy(o.b[r].data, copy, bytes);
    char name[64];
    snprintf(name, sizeof name, "result %d over %s", r, what);
    check_same(e, b, bwd, res, &o, 0, name);
    outs_free(&o);
    free(copy);
}

// Outputs over inputs' memory (element for element: the engine allows it), and the forward's
// Inplace form.
static void check_aliasing(const entry *e, const block *b, bool bwd, const ops_io *io,
                           const outs *res) {
    aclDataType dt = b->dt;
    int64_t n = b->n;
    size_t bytes = (size_t)n * esize(dt);
    if (n == 0) return;
    static const char *const in_names[] = {"input 0", "input 1", "input 2", "input 3"};
    if (!bwd)
        for (int r = 0; r < e->nfwd; r++)
            for (int k = 0; k < e->op.nin; k++)
                if (!e->bcast[k]) alias_run(e, b, false, io, res, r, k, in_names[k]);
    // one gradient: a composite backward reads gradOutput again after its first call
    if (bwd && e->ngrad == 1 && !e->bcast[e->gidx[0]] && !io->g_bcast) {
        alias_run(e, b, true, io, res, 0, OPD_G, "gradOutput");
        for (int k = 0; k < e->op.nin; k++)
            if (!e->bcast[k]) alias_run(e, b, true, io, res, 0, k, in_names[k]);
        for (int q = 0; q < e->nsv; q++) alias_run(e, b, true, io, res, 0, OPD_SAVED + q, "saved");
    }
    if (!bwd && e->inplace && !e->bcast[0]) {
        // Inplace<X>(selfRef, other inputs..., default attributes): X's bits with the entry's
        // attributes when those are X's defaults, else X's own bits through its thunk
        void *self = xmalloc(bytes), *want = NULL;
        memcpy(self, io->in[0], bytes);
        aclTensor *ts[OGC_MAX_IN + 1], *o1[OGC_MAX_RESULTS];
        ts[0] = vec(self, n, dt);
        for (int k = 1; k < e->op.nin; k++) ts[k] = vec(io->in[k], in_len(e, k, n), dt);
        const char *why = "";
        int st = call_op(e->inplace, ts, NULL, "", &why);
        if (st == -1) {
            static const entry *noted; // once per entry, not per block
            if (noted != e) printf("  note: %s: %s not run (%s)\n", e->name, e->inplace->name, why);
            noted = e;
        } else {
            CHECKF(st == 0, "%s %s: %s: status %d: %s", e->name, og_dtype_name(dt),
                   e->inplace->name, st, aclGetRecentErrMsg());
            const void *expect = res->b[0].data;
            const char *against = "the entry's forward";
            if (!e->attrs_default) {
                want = xmalloc(bytes);
                aclTensor *tin[OGC_MAX_IN], *tw = vec(want, n, dt);
                for (int k = 0; k < e->op.nin; k++) tin[k] = vec(io->in[k], in_len(e, k, n), dt);
                o1[0] = tw;
                // a forward with saved outputs would need them here: none has an Inplace form
                int st2 = call_op(e->fwd, tin, o1, "", &why);
                CHECKF(st2 == 0, "%s: %s with default attributes: status %d", e->name, e->fwd->name,
                       st2);
                for (int k = 0; k < e->op.nin; k++) aclDestroyTensor(tin[k]);
                aclDestroyTensor(tw);
                expect = want;
                against = "its operator with default attributes";
            }
            int64_t bad = compare_bits(e, b, false, expect, self, n, 0, e->inplace->name, 0, false);
            CHECKF(bad == 0, "%s %s %s n=%lld: %s differs from %s at %lld elements", e->name,
                   og_dtype_name(dt), b->what, (long long)n, e->inplace->name, against,
                   (long long)bad);
        }
        for (int k = 0; k < e->op.nin; k++) aclDestroyTensor(ts[k]);
        free(self);
        free(want);
    }
}

static int64_t g_print_budget;

// The float64 references judge this point (see EXACT).
static bool modelled(const entry *e, const double *x) {
    for (int k = 0; e->fp32_spec && k < e->op.nin; k++)
        if (!(x[k] >= e->op.lo && x[k] <= e->op.hi)) return false;
    return true;
}

// Judges the forward results against ref_forward.
static void judge_forward(entry *e, const block *b, const outs *res) {
    aclDataType dt = b->dt;
    acc *a = &e->fa[dt_index(dt)];
    double c = e->op.fp32_ulps;
    int64_t bad = 0;
    for (int64_t i = 0; i < b->n; i++) {
        double x[OGC_MAX_IN], saved[OGC_MAX_SAVED] = {0};
        for (int k = 0; k < e->op.nin; k++) x[k] = ld(b->in[k], e->bcast[k] ? 0 : i, dt);
        double y = e->op.ref_forward(&e->op, x, saved);
        bool finite = true;
        for (int k = 0; k < e->op.nin; k++) finite &= isfinite(x[k]) != 0;
        if (!modelled(e, x)) {
            a->unjudged++;
            continue;
        }
        for (int r = 0; r < e->nfwd; r++) {
            double ref = r == 0 ? y : saved[r - 1], got = ld(res->b[r].data, i, dt), u;
            if (isnan(ref) && finite) { // float64 overflowed (0 inf, inf - inf): not judged
                a->unjudged++;
                continue;
            }
            if (!judge(a, c, dt, got, ref, 0, 1, &u)) {
                if (bad++ < 4 && g_print_budget-- > 0)
                    fprintf(stderr,
                            "    %s %s %s forward %s: result %d at x=(%a, %a): got %a, "
                            "reference %.17g (%.3g ulp, bound %g ulp + %g 2^-24 M)\n",
                            e->name, level_name(g_level), og_dtype_name(dt), b->what, r, x[0],
                            e->op.nin > 1 ? x[1] : 0.0, got, ref, u, dt == ACL_FLOAT ? c : 1,
                            dt == ACL_FLOAT ? c : 1);
            }
        }
    }
    CHECKF(bad == 0, "%s %s %s forward (%s): %lld results outside the checker's bound", e->name,
           level_name(g_level), og_dtype_name(dt), b->what, (long long)bad);
}

static void judge_backward(entry *e, const block *b, const ops_io *io, const outs *res) {
    aclDataType dt = b->dt;
    acc *a = &e->ba[dt_index(dt)];
    double c = e->op.fp32_ulps;
    int64_t n = b->n, bad = 0;
    // gradients of broadcast inputs: sums over the n elements (the checker's sqrt(terms) rule)
    double sum[OGC_MAX_IN] = {0}, msum[OGC_MAX_IN] = {0};
    bool any_unmodelled = false;
    for (int64_t i = 0; i < n; i++) {
        double x[OGC_MAX_IN], saved[OGC_MAX_SAVED] = {0}, gx[OGC_MAX_IN] = {0},
                              mag[OGC_MAX_IN] = {0};
        for (int k = 0; k < e->op.nin; k++) x[k] = ld(b->in[k], e->bcast[k] ? 0 : i, dt);
        for (int s = 0; s < e->nsv; s++) saved[s] = ld(io->saved[s], i, dt);
        double gy = ld(io->g, io->g_bcast ? 0 : i, dt);
        bool finite = isfinite(gy) != 0;
        for (int k = 0; k < e->op.nin; k++) finite &= isfinite(x[k]) != 0;
        for (int s = 0; s < e->nsv; s++) finite &= isfinite(saved[s]) != 0;
        // Not judged: points outside an fp32-specified entry's domain (EXACT), and a NaN
        // reference from finite values (float64 overflowed: 0 inf, inf - inf).
        if (!modelled(e, x)) {
            any_unmodelled = true;
            a->unjudged++;
            continue;
        }
        e->op.ref_backward(&e->op, x, saved, gy, gx, mag);
        double d1[OGC_MAX_IN] = {0}, m1[OGC_MAX_IN] = {0};
        if (!isfinite(gy)) e->op.ref_backward(&e->op, x, saved, 1.0, d1, m1);
        for (int j = 0; j < e->ngrad; j++) {
            int k = e->gidx[j];
            if (isnan(gx[k]) && finite) {
                any_unmodelled |= e->bcast[k];
                a->unjudged++;
                continue;
            }
            if (!isfinite(gy) && !e->bcast[k]) {
                // gradOutput inf or NaN: the references multiply g f'; the kernels may select
                // where f' = 0 (PyTorch's where: a zero) and distribute g over the terms of f'
                // (inf - inf: NaN); anything else must be the product
                double got = ld(res->b[j].data, i, dt);
                bool ok = isnan(got) || (d1[k] == 0 && got == 0) || got == gx[k];
                a->compared++;
                if (!ok && bad++ < 4 && g_print_budget-- > 0)
                    fprintf(stderr, "    %s %s %s backward %s: g=%a x=%a: got %a, want %a\n",
                            e->name, level_name(g_level), og_dtype_name(dt), b->what, gy, x[0], got,
                            gx[k]);
                continue;
            }
            double m = mag[k] != 0 ? fabs(mag[k]) : fabs(gx[k]);
            if (e->bcast[k]) {
                sum[j] += gx[k], msum[j] += m;
                continue;
            }
            double got = ld(res->b[j].data, i, dt), u;
            if (!judge(a, c, dt, got, gx[k], m, 1, &u) && bad++ < 4 && g_print_budget-- > 0)
                fprintf(stderr,
                        "    %s %s %s backward %s: gradient %d at x=(%a, %a) y=%a g=%a: got %a, "
                        "reference %.17g (%.3g ulp, M = %g)\n",
                        e->name, level_name(g_level), og_dtype_name(dt), b->what, j, x[0],
                        e->op.nin > 1 ? x[1] : 0.0, e->nsv ? saved[0] : 0.0, gy, got, gx[k], u, m);
        }
    }
    for (int j = 0; j < e->ngrad; j++) {
        if (!e->bcast[e->gidx[j]] || n == 0 || any_unmodelled) continue;
        double got = ld(res->b[j].data, 0, dt), u;
        if (!judge(a, c, dt, got, sum[j], msum[j], n, &u) && bad++ < 4)
            fprintf(stderr, "    %s %s %s backward %s: reduced gradient %d: got %a, ref %.17g\n",
                    e->name, level_name(g_level), og_dtype_name(dt), b->what, j, got, sum[j]);
    }
    CHECKF(bad == 0, "%s %s %s backward (%s): %lld gradients outside the checker's bound", e->name,
           level_name(g_level), og_dtype_name(dt), b->what, (long long)bad);
}

/// Every check on one block: forward, then backward with the saved tensors of the scalar
/// forward (the same for every level), inputs unchanged at the end.
static void check_block(entry *e, const block *b) {
    aclDataType dt = b->dt;
    int64_t n = b->n;
    size_t es = esize(dt);
    void *copy[OGC_MAX_IN + 2] = {0};
    for (int k = 0; k < e->op.nin; k++) {
        size_t bytes = (size_t)in_len(e, k, n) * es;
        copy[k] = xmalloc(bytes);
        memcpy(copy[k], b->in[k], bytes);
    }
    copy[OGC_MAX_IN] = xmalloc((size_t)n * es);
    memcpy(copy[OGC_MAX_IN], b->g, (size_t)n * es);

    // forward
    ops_io io = {.dt = dt, .n = n};
    for (int k = 0; k < e->op.nin; k++) io.in[k] = b->in[k];
    outs fres, fscalar = {.count = 0};
    if (b->flags & B_FWDQUIET) {
        outs_new(&fres, e, false, n, dt);
        run_checked(e, b, false, &io, &fres, g_level, 0, "as is");
    } else {
        run_variants(e, b, false, &io, &fres, &fscalar);
        judge_forward(e, b, &fres);
        if (b->flags & B_ALIAS) check_aliasing(e, b, false, &io, &fres);
    }

    // backward: saved = the scalar forward's results; from the output: y as given, or the
    // forward's y with every 8th element an arbitrary value (the formula holds for any y)
    const outs *src = fscalar.count ? &fscalar : &fres;
    void *saved[OGC_MAX_SAVED] = {0};
    for (int s = 0; s < e->nsv; s++) {
        saved[s] = xmalloc((size_t)n * es);
        if (e->op.backward_uses_output && (b->flags & B_YGIVEN)) {
            memcpy(saved[s], b->y, (size_t)n * es);
        } else {
            memcpy(saved[s], src->b[e->op.backward_uses_output ? 0 : 1 + s].data, (size_t)n * es);
            if (e->op.backward_uses_output && !e->bcast[0])
                for (int64_t i = 7; i < n; i += 8)
                    memcpy((char *)saved[s] + (size_t)i * es, (char *)b->in[0] + (size_t)i * es,
                           es);
        }
        io.saved[s] = saved[s];
    }
    io.g = b->g;
    outs bres, bscalar;
    run_variants(e, b, true, &io, &bres, &bscalar);
    judge_backward(e, b, &io, &bres);
    if (b->flags & B_ALIAS) check_aliasing(e, b, true, &io, &bres);

    for (int k = 0; k < e->op.nin; k++)
        CHECKF(!memcmp(copy[k], b->in[k], (size_t)in_len(e, k, n) * es),
               "%s %s %s n=%lld: input %d was modified", e->name, og_dtype_name(dt), b->what,
               (long long)n, k);
    CHECKF(!memcmp(copy[OGC_MAX_IN], b->g, (size_t)n * es),
           "%s %s %s n=%lld: gradOutput was modified", e->name, og_dtype_name(dt), b->what,
           (long long)n);
    for (int k = 0; k < OGC_MAX_IN + 2; k++) free(copy[k]);
    for (int s = 0; s < e->nsv; s++) free(saved[s]);
    outs_free(&fres), outs_free(&fscalar), outs_free(&bres), outs_free(&bscalar);
}

// ---------------------------------------------------------------------------------------------
// Test points

static const float IEEE[] = {0.0f,
                             -0.0f,
                             INFINITY,
                             -INFINITY,
                             NAN,
                             -NAN,
                             1e-40f,
                             -1e-40f,
                             0x1p-149f,
                             -0x1p-149f,
                             0x1.fffffcp-127f,
                             -0x1.fffffcp-127f,
                             FLT_MIN,
                             -FLT_MIN,
                             FLT_MAX,
                             -FLT_MAX,
                             1.0f,
                             -1.0f,
                             0.5f,
                             -0.5f};
static float ieee_special(int i) {
    if (i == COUNT(IEEE)) return test_u2f(0x7fc12345u);     // a NaN payload
    if (i == COUNT(IEEE) + 1) return test_u2f(0xff800001u); // a signalling NaN
    return IEEE[i];
}
enum { NIEEE = COUNT(IEEE) + 2 };

static const float GSET[] = {1.0f, -0.75f, 3.5f, 0x1p-10f};

// Kinks: the kernels decide the branch on rounded values, the references exactly: test points
// keep this many ulps away on either side (the kink itself stays in).
enum { KINK_MARGIN = 4 };

static float away_from_kinks(const entry *e, float v) {
    for (int k = 0; k < e->op.nkinks; k++) {
        float kink = (float)e->op.kinks[k];
        double d = fabs((double)v - kink), u = test_ulp32(kink);
        if (d > 0 && d <= KINK_MARGIN * u) return kink;
    }
    return v;
}

// A value for the mixed samples: a special (the entry's or IEEE), a random bit pattern, or a
// uniform value of the entry's domain.
static float mixed_value(const entry *e, test_rng *r) {
    uint64_t u = test_rng_next(r);
    float v;
    switch (u % 8) {
    case 0:
        v = ieee_special((int)((u >> 8) % NIEEE));
        break;
    case 1:
        v = e->op.nspecials ? (float)e->op.specials[(u >> 8) % (uint64_t)e->op.nspecials] : 1.0f;
        break;
    case 2:
    case 3:
        v = test_u2f((uint32_t)(u >> 32));
        break;
    default:
        v = (float)test_rng_uniform(r, e->op.lo, e->op.hi);
        break;
    }
    return away_from_kinks(e, v);
}

static float g_value(test_rng *r, int64_t i) {
    return i % 5 == 4 ? (float)test_rng_uniform(r, -8, 8) : GSET[i % 5];
}

/// Points of fp32 values, stored into blocks of dtype dt.
typedef struct points {
    int64_t n, cap;
    float *x[OGC_MAX_IN], *g;
} points;

static void points_init(points *p, int64_t cap) {
    memset(p, 0, sizeof *p);
    p->cap = cap;
    for (int k = 0; k < OGC_MAX_IN; k++) p->x[k] = xmalloc((size_t)cap * 4);
    p->g = xmalloc((size_t)cap * 4);
}
static void points_free(points *p) {
    for (int k = 0; k < OGC_MAX_IN; k++) free(p->x[k]);
    free(p->g);
}

// Runs the points as one block of dtype dt (exact-size buffers) and empties them.
static void flush_points(entry *e, points *p, aclDataType dt, int flags, const char *what) {
    int64_t n = p->n;
    size_t es = esize(dt);
    block b = {.dt = dt, .n = n, .flags = flags, .what = what};
    for (int k = 0; k < e->op.nin; k++) {
        int64_t len = in_len(e, k, n);
        b.in[k] = xmalloc((size_t)len * es);
        for (int64_t i = 0; i < len; i++) test_store(b.in[k], i, dt, p->x[k][i]);
    }
    b.g = xmalloc((size_t)n * es);
    for (int64_t i = 0; i < n; i++) test_store(b.g, i, dt, p->g[i]);
    check_block(e, &b);
    for (int k = 0; k < e->op.nin; k++) free(b.in[k]);
    free(b.g);
    p->n = 0;
}

// Adds one point: x[k] for the inputs listed (nx of them), uniform values of the domain for the
// others; runs full chunks.
static void add_point(entry *e, points *p, test_rng *r, const float *x, int nx, float g,
                      const char *what) {
    for (int k = 0; k < e->op.nin; k++)
        p->x[k][p->n] =
            away_from_kinks(e, k < nx ? x[k] : (float)test_rng_uniform(r, e->op.lo, e->op.hi));
    p->g[p->n] = g;
    if (++p->n == p->cap) flush_points(e, p, ACL_FLOAT, B_THREADS, what);
}

static void add_point1(entry *e, points *p, test_rng *r, float x0, float g, const char *what) {
    add_point(e, p, r, &x0, 1, g, what);
}

// ---------------------------------------------------------------------------------------------
// The tests of one entry

static int64_t engine_tile(int nin, aclDataType dt) {
    static char dummy[64];
    og_ew_op op = {.nin = nin, .nout = 1, .compute_dtype = dt};
    aclTensor *ts[OG_EW_MAX_IN + 1];
    for (int k = 0; k <= nin; k++) {
        ts[k] = vec(dummy, 1 << 20, dt);
        if (k < nin)
            op.in[k] = ts[k];
        else
            op.out[0] = ts[k];
    }
    og_ew_plan plan;
    og_ew_make_plan(&op, 1, 0, &plan);
    for (int k = 0; k <= nin; k++) aclDestroyTensor(ts[k]);
    return plan.tiling.tile_elems;
}

static int64_t g_sizes[256];
static int g_nsizes;

static void make_sizes(void) {
    for (int64_t s = 0; s <= 49; s++) g_sizes[g_nsizes++] = s;
    for (int d = 0; d < 2; d++)
        for (int nin = 1; nin <= 3; nin++) {
            int64_t t = engine_tile(nin, d ? ACL_FLOAT16 : ACL_FLOAT);
            int64_t around[] = {t - 17, t - 16, t - 1,     t,     t + 1,     t + 15,
                                t + 16, t + 17, 2 * t - 1, 2 * t, 2 * t + 1, 3 * t + 7};
            for (int a = 0; a < COUNT(around); a++) {
                bool dup = false;
                for (int j = 0; j < g_nsizes; j++) dup |= g_sizes[j] == around[a];
                if (!dup && around[a] >= 0 && g_nsizes < COUNT(g_sizes))
                    g_sizes[g_nsizes++] = around[a];
            }
        }
}

// Sizes 0..49 and around the tiles, every dtype: canaries, exact-size inputs, aliasing, the
// Inplace form, the fused and buffered paths, the scalar level, the references.
static void entry_sizes(entry *e) {
    points p;
    int64_t maxn = 0;
    for (int s = 0; s < g_nsizes; s++) maxn = g_sizes[s] > maxn ? g_sizes[s] : maxn;
    points_init(&p, maxn + 1);
    for (int s = 0; s < g_nsizes; s++) {
        int64_t n = g_sizes[s];
        test_rng r;
        test_rng_seed(&r, 1000 + (uint64_t)n);
        for (int64_t i = 0; i < n; i++) {
            for (int k = 0; k < e->op.nin; k++) p.x[k][i] = mixed_value(e, &r);
            p.g[i] = g_value(&r, i);
        }
        for (int d = 0; d < 3; d++) {
            p.n = n;
            flush_points(e, &p, DTYPES[d], B_ALIAS | B_SHIFT, "sizes");
        }
    }
    points_free(&p);
}

// fp32: random bit patterns, a grid over the domain, windows around the specials and kinks, the
// IEEE specials (alone and paired, and as gradOutput), large gradOutput in the tails.
static void entry_fp32_sample(entry *e) {
    bool quick = test_quick_mode();
    int64_t n_rand = quick ? 1 << 13 : 1 << 18, n_grid = quick ? 1 << 12 : 1 << 17;
    int64_t n_log = quick ? 1 << 12 : 1 << 17;
    int win = quick ? 32 : 16384;
    points p;
    points_init(&p, 1 << 16);
    test_rng r;
    test_rng_seed(&r, 20240611);
    int64_t i = 0;
    for (int64_t j = 0; j < n_rand; j++, i++) {
        float x[OGC_MAX_IN];
        for (int k = 0; k < e->op.nin; k++) x[k] = test_u2f((uint32_t)(test_rng_next(&r) >> 32));
        add_point(e, &p, &r, x, e->op.nin, g_value(&r, i), "random bits");
    }
    if (p.n) flush_points(e, &p, ACL_FLOAT, 0, "random bits");
    for (int64_t j = 0; j < n_grid; j++, i++)
        add_point1(e, &p, &r,
                   (float)(e->op.lo + (e->op.hi - e->op.lo) * (double)j / (double)n_grid),
                   g_value(&r, i), "domain grid");
    if (p.n) flush_points(e, &p, ACL_FLOAT, 0, "domain grid");
    // |x| log-spaced from 2^-30 to 2^8, both signs: small values, the tails beyond the domain
    for (int64_t j = 0; j < n_log; j++, i++)
        add_point1(e, &p, &r,
                   (float)((j & 1 ? -1 : 1) * exp2(-30 + 38.0 * (double)j / (double)n_log)),
                   g_value(&r, i), "log grid");
    if (p.n) flush_points(e, &p, ACL_FLOAT, 0, "log grid");
    // every float within `win` of each special; both sides of each kink, KINK_MARGIN away
    for (int s = 0; s < e->op.nspecials + e->op.nkinks; s++) {
        bool kink = s >= e->op.nspecials;
        float c = (float)(kink ? e->op.kinks[s - e->op.nspecials] : e->op.specials[s]);
        int from = kink ? KINK_MARGIN + 1 : 0;
        for (int side = -1; side <= 1; side += 2) {
            float v = c;
            for (int w = 0; w < from + win; w++, v = nextafterf(v, side * INFINITY))
                if (w >= from) add_point1(e, &p, &r, v, g_value(&r, i++), "windows");
        }
    }
    if (p.n) flush_points(e, &p, ACL_FLOAT, 0, "windows");
    // IEEE specials: as input 0, as every pair of inputs 0 and 1, as gradOutput
    for (int a = 0; a < NIEEE; a++)
        for (int q = 0; q < 5; q++) add_point1(e, &p, &r, ieee_special(a), g_value(&r, q), "IEEE");
    for (int a = 0; a < NIEEE && e->op.nin >= 2; a++)
        for (int c = 0; c < NIEEE; c++) {
            float x[2] = {ieee_special(a), ieee_special(c)};
            add_point(e, &p, &r, x, 2, GSET[(a + c) % 4], "IEEE");
        }
    for (int a = 0; a < NIEEE; a++)
        for (int q = 0; q < 4; q++) add_point(e, &p, &r, NULL, 0, ieee_special(a), "IEEE");
    if (p.n) flush_points(e, &p, ACL_FLOAT, 0, "IEEE");
    // large gradOutput where the derivative is tiny: |x| from 4 to 256, g up to FLT_MAX
    static const float big_g[] = {0x1p20f, 1e30f, -1e30f, 0x1p100f, FLT_MAX};
    for (int j = 16; j <= 64; j++)
        for (int sgn = -1; sgn <= 1; sgn += 2)
            for (int q = 0; q < COUNT(big_g); q++)
                add_point1(e, &p, &r, (float)(sgn * exp2(j / 8.0)), big_g[q], "large gradOutput");
    if (p.n) flush_points(e, &p, ACL_FLOAT, 0, "large gradOutput");
    points_free(&p);
}

// fp16 / bf16: all 65,536 encodings of each input in turn (the backward from the output: of y),
// rows of NG gradOutput values with the other inputs one value per row, and a row of random
// encodings of gradOutput and of the other inputs (NaN, inf and subnormals among them).
enum { NX = 65536, NG = 5 };
static void entry_exhaustive16(entry *e, aclDataType dt) {
    const double gvals[NG] = {1.0, -0.75, 3.5, 0x1p-10, dt == ACL_FLOAT16 ? 1000.0 : 1e30};
    const double others[NG] = {1.5, -0.3, 1000.0, 3e-5, -7.0};
    size_t es = 2;
    uint16_t *enc = xmalloc(NX * es), *g = xmalloc(NX * es);
    uint16_t *row[OGC_MAX_IN];
    for (int k = 0; k < OGC_MAX_IN; k++) row[k] = xmalloc(NX * es);
    for (int i = 0; i < NX; i++) enc[i] = (uint16_t)i;
    test_rng r;
    test_rng_seed(&r, 16);
    for (int k0 = 0; k0 < e->op.nin; k0++) {
        if (e->bcast[k0]) continue;
        for (int j = 0; j <= NG; j++) {
            bool random_row = j == NG;
            block b = {.dt = dt, .n = NX, .g = g, .y = enc};
            b.what = random_row ? "every encoding, random others" : "every encoding";
            b.flags = B_ALIAS | (random_row ? 0 : B_GBCAST) | (j == 0 ? B_THREADS | B_SHIFT : 0) |
                      (e->op.backward_uses_output ? B_YGIVEN : 0) |
                      (j > 0 && !random_row && e->op.nin == 1 ? B_FWDQUIET : 0);
            for (int i = 0; i < NX; i++)
                if (random_row)
                    g[i] = (uint16_t)(test_rng_next(&r) >> 48);
                else
                    test_store(g, i, dt, gvals[j]);
            for (int k = 0; k < e->op.nin; k++) {
                if (k == k0) {
                    b.in[k] = enc;
                    continue;
                }
                int64_t len = in_len(e, k, NX);
                for (int64_t i = 0; i < len; i++)
                    if (random_row)
                        row[k][i] = (uint16_t)(test_rng_next(&r) >> 48);
                    else
                        test_store(row[k], i, dt, others[(j + k) % NG]);
                b.in[k] = row[k];
            }
            check_block(e, &b);
        }
    }
    for (int k = 0; k < OGC_MAX_IN; k++) free(row[k]);
    free(enc), free(g);
}

// ---------------------------------------------------------------------------------------------
// Facts through the list's phase-1 thunks

static void test_facts(void) {
    int64_t bad = 0, run = 0;
    for (int v = 0; v < COUNT(VARIANTS); v++)
        CHECKF(g_variant_found[v] == 1, "VARIANTS: no registry entry '%s'", VARIANTS[v].entry);
    for (int f = 0; f < COUNT(FACTS); f++) {
        const fact *t = &FACTS[f];
        const og_opdesc *op = og_op_find(t->op);
        CHECKF(op != NULL, "fact %d: operator %s is not in the list", f, t->op);
        if (!op) continue;
        float in[3], out[2] = {0};
        aclTensor *ts[3] = {0}, *os[2];
        int nt = 0, no = 0;
        og_param p;
        for (int i = 0; og_opdesc_param(op, i, &p); i++) {
            if (p.kind == OG_PARAM_OUT) {
                os[no] = vec(&out[no], 1, ACL_FLOAT);
                no++;
            } else if (p.kind == OG_PARAM_TENSOR || p.kind == OG_PARAM_GRAD ||
                       p.kind == OG_PARAM_RESULT || p.kind == OG_PARAM_REF) {
                in[nt] = (t->flags & PAYLOAD) && nt == 0 ? test_u2f(0x7fc12345u) : t->in[nt];
                ts[nt] = vec(&in[nt], 1, ACL_FLOAT);
                nt++;
            }
        }
        const char *why = "";
        int st = call_op(op, ts, os, t->attrs, &why);
        CHECKF(st == 0, "fact %d: %s(%s): status %d %s %s", f, t->op, t->attrs, st, why,
               aclGetRecentErrMsg());
        float got = out[(t->flags & OUT1) ? 1 : 0];
        bool ok = (t->flags & ANY_ZERO)  ? got == 0.0f
                  : (t->flags & PAYLOAD) ? test_f2u(got) == 0x7fc12345u
                  : isnan(t->want)       ? isnan(got)
                                         : test_f2u(got) == test_f2u(t->want);
        if (!ok && bad++ < 20)
            fprintf(stderr, "    %s: %s(%s)(%a, %a, %a) = %a, want %a\n", level_name(g_level),
                    t->op, t->attrs, t->in[0], t->in[1], t->in[2], got, t->want);
        run++;
        for (int k = 0; k < nt; k++) aclDestroyTensor(ts[k]);
        for (int k = 0; k < no; k++) aclDestroyTensor(os[k]);
    }
    CHECKF(bad == 0, "%lld of %lld facts do not hold", (long long)bad, (long long)run);
    printf("  %lld exact facts at %s\n", (long long)run, level_name(g_level));
}

// Operator-level inputs for EXACT and SAME: n elements of dt for each of nt tensors. fp32:
// random bit patterns, IEEE specials and uniform values of [-100, 100]; 16-bit: every encoding in
// tensor k0, random encodings in the others.
static void op_inputs(aclDataType dt, int64_t n, int nt, int k0, void **ins, uint64_t seed) {
    test_rng r;
    test_rng_seed(&r, seed);
    for (int k = 0; k < nt; k++) {
        ins[k] = xmalloc((size_t)n * esize(dt));
        for (int64_t i = 0; i < n; i++) {
            uint64_t u = test_rng_next(&r);
            if (dt != ACL_FLOAT) {
                ((uint16_t *)ins[k])[i] = k == k0 ? (uint16_t)i : (uint16_t)(u >> 48);
                continue;
            }
            float v = u % 4 == 0   ? test_u2f((uint32_t)(u >> 32))
                      : u % 8 == 1 ? ieee_special((int)((u >> 8) % NIEEE))
                                   : (float)test_rng_uniform(&r, -100, 100);
            ((float *)ins[k])[i] = v;
        }
    }
}

// Two NaN results at i may differ (see compare_bits).
static bool nan_open(void *const *ins, int nt, int64_t i, aclDataType dt, const void *a,
                     const void *b) {
    int nans = 0, infs = 0;
    for (int k = 0; k < nt; k++) {
        double v = ld(ins[k], i, dt);
        nans += isnan(v) != 0, infs += isinf(v) != 0;
    }
    size_t es = esize(dt);
    uint32_t pu = 0, qu = 0, sign = es == 4 ? 0x80000000u : 0x8000u;
    memcpy(&pu, (const char *)a + (size_t)i * es, es),
        memcpy(&qu, (const char *)b + (size_t)i * es, es);
    return nans != 1 || infs || (pu & ~sign) == (qu & ~sign);
}

// EXACT: the operator's result is its fp32 expression rounded once, on the fused and the
// buffered path: every 16-bit encoding (and 45 more, a tail), fp32 samples, sizes 1..49.
static void test_exact_ops(void) {
    int64_t runs = 0;
    for (int t = 0; t < COUNT(EXACT); t++) {
        const og_opdesc *op = og_op_find(EXACT[t].op);
        CHECKF(op != NULL, "EXACT: %s is not in the list", EXACT[t].op);
        if (!op) continue;
        int nt, no;
        op_counts(op, &nt, &no);
        float a0[8];
        attr_values(op, EXACT[t].attrs, a0, 8);
        for (int d = 0; d < 3; d++) {
            aclDataType dt = DTYPES[d];
            float a[8];
            memcpy(a, a0, sizeof a);
            if (d && (EXACT[t].round_other >> (d - 1) & 1)) a[0] = (float)test_round_to(dt, a[0]);
            for (int k0 = 0; k0 < nt + 49; k0++)
                for (int fused = 1; fused >= 0; fused--) {
                    // k0 < nt: every encoding in tensor k0 (fp32: one sample); then sizes 1..49
                    int64_t n = k0 >= nt            ? k0 - nt + 1
                                : dt != ACL_FLOAT   ? NX + 45
                                : test_quick_mode() ? 4099
                                                    : NX + 37;
                    if (k0 < nt && k0 > 0 && dt == ACL_FLOAT) continue;
                    void *ins[8], *out = xmalloc((size_t)n * esize(dt));
                    op_inputs(dt, n, nt, k0, ins, 77 + (uint64_t)t * 16 + (uint64_t)k0);
                    if (!fused) setenv("OPGRAD_FUSED16", "0", 1);
                    const char *why = "";
                    int st = op_run(op, EXACT[t].attrs, dt, n, ins, &out, &why);
                    unsetenv("OPGRAD_FUSED16");
                    CHECKF(st == 0, "%s(%s) %s: status %d %s", EXACT[t].op, EXACT[t].attrs,
                           og_dtype_name(dt), st, why);
                    int64_t bad = 0;
                    for (int64_t i = 0; i < n; i++) {
                        float x[8];
                        for (int k = 0; k < nt; k++) x[k] = (float)ld(ins[k], i, dt);
                        double want = test_round_to(dt, EXACT[t].fn(x, a)), got = ld(out, i, dt);
                        if (got == want && signbit(got) == signbit(want)) continue;
                        if (isnan(got) && isnan(want)) continue;
                        if (bad++ < 3)
                            fprintf(
                                stderr, "    %s %s(%s) %s%s: x=(%a, %a): got %a, fp32 gives %a\n",
                                level_name(g_level), EXACT[t].op, EXACT[t].attrs, og_dtype_name(dt),
                                fused ? "" : " buffered", x[0], nt > 1 ? x[1] : 0.0f, got, want);
                    }
                    CHECKF(bad == 0,
                           "%s(%s) %s%s: %lld results are not the fp32 expression "
                           "rounded once",
                           EXACT[t].op, EXACT[t].attrs, og_dtype_name(dt),
                           fused ? "" : " (OPGRAD_FUSED16=0)", (long long)bad);
                    for (int k = 0; k < nt; k++) free(ins[k]);
                    free(out);
                    runs++;
                }
        }
    }
    printf("  %lld runs of %d operators: the fp32 expression rounded once, bit for bit\n",
           (long long)runs, COUNT(EXACT));
}

// SAME: two operators (attributes) of one kernel give the same bits.
static void test_same_ops(void) {
    for (int t = 0; t < COUNT(SAME); t++) {
        const og_opdesc *a = og_op_find(SAME[t].a), *b = og_op_find(SAME[t].b);
        CHECKF(a && b, "SAME: %s or %s is not in the list", SAME[t].a, SAME[t].b);
        if (!a || !b) continue;
        int nt, no, ntb, nob;
        op_counts(a, &nt, &no);
        op_counts(b, &ntb, &nob);
        CHECKF(nt == ntb, "SAME: %s and %s take different tensors", SAME[t].a, SAME[t].b);
        if (nt != ntb) continue;
        for (int d = 0; d < 3; d++) {
            aclDataType dt = DTYPES[d];
            int64_t n = dt == ACL_FLOAT ? (test_quick_mode() ? 4099 : NX + 37) : NX;
            for (int k0 = 0; k0 < (dt == ACL_FLOAT ? 1 : nt); k0++) {
                void *ins[8], *oa[4], *ob[4];
                op_inputs(dt, n, nt, k0, ins, 99 + (uint64_t)t * 16 + (uint64_t)k0);
                for (int k = 0; k < 4; k++)
                    oa[k] = xmalloc((size_t)n * esize(dt)), ob[k] = xmalloc((size_t)n * esize(dt));
                const char *why = "";
                int sa = op_run(a, SAME[t].a_attrs, dt, n, ins, oa, &why);
                int sb = op_run(b, SAME[t].b_attrs, dt, n, ins, ob, &why);
                CHECKF(sa == 0 && sb == 0, "SAME %s / %s %s: status %d / %d %s", SAME[t].a,
                       SAME[t].b, og_dtype_name(dt), sa, sb, why);
                int64_t bad = 0;
                size_t es = esize(dt);
                for (int64_t i = 0; i < n; i++)
                    if (memcmp((char *)oa[0] + (size_t)i * es, (char *)ob[0] + (size_t)i * es,
                               es) &&
                        !(isnan(ld(oa[0], i, dt)) && isnan(ld(ob[0], i, dt)) &&
                          nan_open(ins, nt, i, dt, oa[0], ob[0])) &&
                        bad++ < 3)
                        fprintf(stderr, "    %s %s(%s) vs %s(%s) %s: [%lld] x=%a: %a vs %a\n",
                                level_name(g_level), SAME[t].a, SAME[t].a_attrs, SAME[t].b,
                                SAME[t].b_attrs, og_dtype_name(dt), (long long)i,
                                ld(ins[nt - 1], i, dt), ld(oa[0], i, dt), ld(ob[0], i, dt));
                CHECKF(bad == 0, "%s(%s) and %s(%s) %s: %lld results differ", SAME[t].a,
                       SAME[t].a_attrs, SAME[t].b, SAME[t].b_attrs, og_dtype_name(dt),
                       (long long)bad);
                for (int k = 0; k < nt; k++) free(ins[k]);
                for (int k = 0; k < 4; k++) free(oa[k]), free(ob[k]);
            }
        }
    }
}

// The 3-thread runs split the work: a plan of the exhaustive blocks has several cores.
static void test_plan_splits(void) {
    static char dummy[64];
    og_ew_op op = {.nin = 2, .nout = 1, .compute_dtype = ACL_BF16};
    aclTensor *ts[3];
    for (int k = 0; k < 3; k++) ts[k] = vec(dummy, NX, ACL_BF16);
    op.in[0] = ts[0], op.in[1] = ts[1], op.out[0] = ts[2];
    og_ew_plan plan;
    og_ew_make_plan(&op, 3, 0, &plan);
    CHECKF(plan.tiling.core_num >= 3, "a [%d] bf16 plan on 3 threads has %d cores", NX,
           plan.tiling.core_num);
    for (int k = 0; k < 3; k++) aclDestroyTensor(ts[k]);
    printf("  %d sizes: 0..49 and around the tiles", g_nsizes);
    for (int s = 50; s < g_nsizes; s++) printf(" %lld", (long long)g_sizes[s]);
    printf("\n");
}

static entry *g_current;
static void test_entry(void) {
    entry *e = g_current;
    int64_t guards0 = g_guard_failures;
    g_print_budget = 40;
    entry_sizes(e);
    entry_fp32_sample(e);
    entry_exhaustive16(e, ACL_FLOAT16);
    entry_exhaustive16(e, ACL_BF16);
    CHECKF(g_guard_failures == guards0, "%s: %lld writes outside an output", e->name,
           (long long)(g_guard_failures - guards0));
    int64_t judged = 0, unjudged = 0;
    for (int d = 0; d < 3; d++)
        judged += e->fa[d].compared + e->ba[d].compared,
            unjudged += e->fa[d].unjudged + e->ba[d].unjudged;
    printf("  %-22s %-10s ulp fwd/bwd: fp32 %6.3f %6.3f | fp16 %5.3f %5.3f | bf16 %5.3f %5.3f"
           " (%lld results judged, %lld not)\n",
           e->name, level_name(g_level), e->fa[0].max_ulp, e->ba[0].max_ulp, e->fa[1].max_ulp,
           e->ba[1].max_ulp, e->fa[2].max_ulp, e->ba[2].max_ulp, (long long)judged,
           (long long)unjudged);
}

static void run_named(const char *name, void (*fn)(void)) {
    test_current = name;
    test_checks_failed_in_current = 0;
    fn();
    if (test_checks_failed_in_current) {
        test_failed++;
        printf("FAIL %s\n", name);
    } else {
        test_passed++;
        printf("ok   %s\n", name);
    }
    fflush(stdout);
}

static int run_level(int level) {
    g_level = level;
    opgrad_set_max_isa((opgrad_isa)level);
    printf("level %s (this CPU: %s)\n", level_name(level), level_name((int)opgrad_cpu_isa()));
    if (level == OPGRAD_ISA_SCALAR) run_named("completeness", test_completeness);
    run_named("plan_splits", test_plan_splits);
    run_named("facts", test_facts);
    run_named("exact_ops", test_exact_ops);
    run_named("same_ops", test_same_ops);
    for (int i = 0; i < g_nentries; i++) {
        g_current = &g_entries[i];
        memset(g_current->fa, 0, sizeof g_current->fa);
        memset(g_current->ba, 0, sizeof g_current->ba);
        run_named(g_current->name, test_entry);
    }
    return 0;
}

int main(int argc, char **argv) {
    int level = -1;
    if (argc > 1) {
        for (int i = 0; i < OPGRAD_ISA_COUNT; i++)
            if (!strcmp(argv[1], level_name(i))) level = i;
        if (level < 0) {
            fprintf(stderr, "usage: %s [isa]: unknown level '%s' (scalar, avx2, avx512, ...)\n",
                    argv[0], argv[1]);
            return 2;
        }
        if (level > (int)opgrad_cpu_isa()) {
            printf("SKIPPED: this CPU runs up to %s, not %s\n", level_name((int)opgrad_cpu_isa()),
                   argv[1]);
            return 77;
        }
    }
    collect_entries();
    make_sizes();
    if (level >= 0)
        run_level(level);
    else
        for (int l = 0; l <= (int)opgrad_cpu_isa(); l++) run_level(l);
    opgrad_set_max_isa((opgrad_isa)(OPGRAD_ISA_COUNT - 1));
    return test_summary();
}
