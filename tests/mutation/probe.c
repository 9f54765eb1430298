/* Differential probe for the mutation harness (tests/mutation/run.py --probe).
 *
 * Not a test: it calls the operators over inputs and layouts that `opgrad check` does not all
 * reach today (every ISA level the CPU has, 1 and 2 threads, reductions over several 16384-term
 * blocks, multi-range tilings, 16 MiB outputs written non-temporally, streamed 16-bit CopyIn,
 * wide rows, transposed 16-bit views, broadcasts of size-1 dims, mixed-dtype gradients, every
 * in-place entry point, non-default attributes) and prints one line per call: a label and an
 * FNV-1a hash of the output's whole storage (padding included, prefilled with a fixed pattern).
 *
 * The harness runs it on the unmutated library and on each mutant: a line that differs proves
 * that the mutant changes results (it is not an equivalent mutant), whatever the checker says.
 * Inputs are drawn from a fixed xorshift stream, so the output is a pure function of the library.
 *
 * Build: cc -O1 -std=c11 -Iinclude probe.c <build>/libopgrad.a -lm -lpthread -ldl */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_elu.h"
#include "aclnnop/aclnn_elu_backward.h"
#include "aclnnop/aclnn_fused_add_scale.h"
#include "aclnnop/aclnn_fused_add_scale_backward.h"
#include "aclnnop/aclnn_gelu.h"
#include "aclnnop/aclnn_gelu_backward.h"
#include "aclnnop/aclnn_gelu_backward_v2.h"
#include "aclnnop/aclnn_gelu_v2.h"
#include "aclnnop/aclnn_hardsigmoid.h"
#include "aclnnop/aclnn_hardsigmoid_backward.h"
#include "aclnnop/aclnn_hardswish.h"
#include "aclnnop/aclnn_hardswish_backward.h"
#include "aclnnop/aclnn_leaky_relu.h"
#include "aclnnop/aclnn_leaky_relu_backward.h"
#include "aclnnop/aclnn_logsoftmax.h"
#include "aclnnop/aclnn_logsoftmax_backward.h"
#include "aclnnop/aclnn_mish.h"
#include "aclnnop/aclnn_mish_backward.h"
#include "aclnnop/aclnn_mul.h"
#include "aclnnop/aclnn_reduce_sum.h"
#include "aclnnop/aclnn_relu.h"
#include "aclnnop/aclnn_sigmoid.h"
#include "aclnnop/aclnn_sigmoid_backward.h"
#include "aclnnop/aclnn_silu.h"
#include "aclnnop/aclnn_silu_backward.h"
#include "aclnnop/aclnn_softmax.h"
#include "aclnnop/aclnn_softmax_backward.h"
#include "aclnnop/aclnn_softplus.h"
#include "aclnnop/aclnn_softplus_backward.h"
#include "aclnnop/aclnn_tanh.h"
#include "aclnnop/aclnn_tanh_backward.h"
#include "aclnnop/aclnn_threshold_backward.h"
#include "opgrad/opgrad.h"

// ---------------------------------------------------------------------------------------------
// Tensors over malloc'd storage

typedef struct T {
    aclTensor *t;
    unsigned char *base; // storage
    size_t bytes;
    aclDataType dt;
    int64_t storage; // elements
} T;

static size_t esize(aclDataType dt) { return dt == ACL_FLOAT ? 4 : 2; }

static uint16_t to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static void put(T *a, int64_t i, float v) {
    if (a->dt == ACL_FLOAT)
        memcpy(a->base + i * 4, &v, 4);
    else {
        uint16_t h = a->dt == ACL_BF16 ? to_bf16(v) : aclFloatToFloat16(v);
        memcpy(a->base + i * 2, &h, 2);
    }
}

/// A view of `nd` dims over `storage` elements (strides NULL: contiguous; storage 0: exactly the
/// contiguous size), offset 0. The storage is prefilled with 0xA5 bytes.
static T mk(aclDataType dt, int nd, const int64_t *dims, const int64_t *strides, int64_t storage) {
    T a = {.dt = dt};
    int64_t st[8], n = 1;
    for (int d = nd - 1; d >= 0; d--) st[d] = n, n *= dims[d];
    if (strides) memcpy(st, strides, sizeof(int64_t) * (size_t)nd);
    a.storage = storage > 0 ? storage : n;
    a.bytes = (size_t)a.storage * esize(dt);
    a.base = malloc(a.bytes + 64);
    memset(a.base, 0xA5, a.bytes + 64);
    int64_t sdims[1] = {a.storage};
    a.t = aclCreateTensor(dims, (uint64_t)nd, dt, st, 0, ACL_FORMAT_ND, sdims, 1, a.base);
    if (!a.t) printf("aclCreateTensor failed: %s\n", aclGetRecentErrMsg());
    return a;
}

static void drop(T *a) {
    if (a->t) aclDestroyTensor(a->t);
    free(a->base);
    a->t = NULL, a->base = NULL;
}

static uint64_t rng_state;
static double urand(void) {
    uint64_t x = rng_state;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    rng_state = x;
    return (double)(x >> 11) * 0x1p-53;
}

/// Every storage element: uniform in [lo, hi], with one in 16 drawn from [3 lo, 3 hi] (tails).
static void fill(T *a, uint64_t seed, double lo, double hi) {
    rng_state = 0x9E3779B97F4A7C15ull ^ (seed * 0x2545F4914F6CDD1Dull);
    for (int k = 0; k < 8; k++) urand();
    for (int64_t i = 0; i < a->storage; i++) {
        double u = urand(), w = urand() < 1.0 / 16 ? 3.0 : 1.0;
        put(a, i, (float)(w * (lo + (hi - lo) * u)));
    }
}

static uint64_t fnv(const unsigned char *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static char prefix[64]; // "isa/threads"

static void emit(const char *label, const T *a) {
    printf("%s %s %016llx\n", prefix, label, (unsigned long long)fnv(a->base, a->bytes));
}

static aclScalar *fscalar(float v) { return aclCreateScalar(&v, ACL_FLOAT); }

static const char *dtn(aclDataType dt) {
    return dt == ACL_FLOAT ? "f32" : dt == ACL_BF16 ? "bf16" : "f16";
}

// Two-phase call, synchronous (NULL stream); prints a failed status (which also differs).
typedef aclnnStatus (*phase2_fn)(void *, uint64_t, aclOpExecutor *, aclrtStream);
static void launch(const char *what, aclnnStatus st, uint64_t ws, aclOpExecutor *ex, phase2_fn f) {
    if (st != 0) {
        printf("%s %s phase1-status %d\n", prefix, what, (int)st);
        return;
    }
    void *w = ws ? aligned_alloc(64, (ws + 63) / 64 * 64) : NULL;
    st = f(w, ws, ex, NULL);
    free(w);
    if (st != 0) printf("%s %s phase2-status %d\n", prefix, what, (int)st);
}
#define RUN(what, OP, ...)                                                                         \
    do {                                                                                           \
        uint64_t ws_ = 0;                                                                          \
        aclOpExecutor *ex_ = NULL;                                                                 \
        aclnnStatus s_ = OP##GetWorkspaceSize(__VA_ARGS__, &ws_, &ex_);                            \
        launch(what, s_, ws_, ex_, OP);                                                            \
    } while (0)

// ---------------------------------------------------------------------------------------------
// Elementwise operators: forward, backward (from the input or the output), in-place

enum {
    MISH,
    GELU,
    GELU_ERF,
    GELU_TANH,
    SILU,
    SIGMOID,
    TANH,
    SOFTPLUS,
    SOFTPLUS1,
    RELU,
    LEAKY,
    LEAKY_NEG,
    HARDSWISH,
    HARDSIGMOID,
    ELU,
    ELU_SCALED,
    ELU_SELU,
    NUNARY
};
static const char *const unary_names[NUNARY] = {
    "mish",      "gelu",        "gelu_erf",  "gelu_tanh",  "silu",    "sigmoid",
    "tanh",      "softplus",    "softplus1", "relu",       "leaky",   "leaky_neg",
    "hardswish", "hardsigmoid", "elu",       "elu_scaled", "elu_selu"};
static const double unary_range[NUNARY] = {12, 10, 10, 10, 12, 12, 8, 12, 24,
                                           8,  8,  8,  5,  4,  8,  8, 8};

static void elu_attrs(int op, float *alpha, float *scale, float *is) {
    *alpha = 1, *scale = 1, *is = 1;
    if (op == ELU_SCALED) *alpha = 2, *scale = 0.75f, *is = 0.5f;
    if (op == ELU_SELU) *alpha = 1.6732632f, *scale = 1.0507010f;
}

static void forward(int op, const T *x, T *y) {
    const char *w = unary_names[op];
    aclScalar *s1 = NULL, *s2 = NULL, *s3 = NULL;
    float a, b, c;
    switch (op) {
    case MISH:
        RUN(w, aclnnMish, x->t, y->t);
        break;
    case GELU:
        RUN(w, aclnnGelu, x->t, y->t);
        break;
    case GELU_ERF:
        RUN(w, aclnnGeluV2, x->t, 0, y->t);
        break;
    case GELU_TANH:
        RUN(w, aclnnGeluV2, x->t, 1, y->t);
        break;
    case SILU:
        RUN(w, aclnnSilu, x->t, y->t);
        break;
    case SIGMOID:
        RUN(w, aclnnSigmoid, x->t, y->t);
        break;
    case TANH:
        RUN(w, aclnnTanh, x->t, y->t);
        break;
    case SOFTPLUS:
    case SOFTPLUS1:
        s1 = fscalar(op == SOFTPLUS ? 1.5f : 1.0f), s2 = fscalar(op == SOFTPLUS ? 12.0f : 20.0f);
        RUN(w, aclnnSoftplus, x->t, s1, s2, y->t);
        break;
    case RELU:
        RUN(w, aclnnRelu, x->t, y->t);
        break;
    case LEAKY:
    case LEAKY_NEG:
        s1 = fscalar(op == LEAKY ? 0.01f : -0.25f);
        RUN(w, aclnnLeakyRelu, x->t, s1, y->t);
        break;
    case HARDSWISH:
        RUN(w, aclnnHardswish, x->t, y->t);
        break;
    case HARDSIGMOID:
        RUN(w, aclnnHardsigmoid, x->t, y->t);
        break;
    default:
        elu_attrs(op, &a, &b, &c);
        s1 = fscalar(a), s2 = fscalar(b), s3 = fscalar(c);
        RUN(w, aclnnElu, x->t, s1, s2, s3, y->t);
        break;
    }
    if (s1) aclDestroyScalar(s1);
    if (s2) aclDestroyScalar(s2);
    if (s3) aclDestroyScalar(s3);
}

/// gradInput from (g, x) and the forward's output y (sigmoid, tanh, and the *_out variants).
static void backward(int op, const T *g, const T *x, const T *y, bool from_result, T *dx) {
    const char *w = unary_names[op];
    aclScalar *s1 = NULL, *s2 = NULL, *s3 = NULL;
    float a, b, c;
    switch (op) {
    case MISH:
        RUN(w, aclnnMishBackward, g->t, x->t, dx->t);
        break;
    case GELU:
        RUN(w, aclnnGeluBackward, g->t, x->t, dx->t);
        break;
    case GELU_ERF:
        RUN(w, aclnnGeluBackwardV2, g->t, x->t, (char *)"none", dx->t);
        break;
    case GELU_TANH:
        RUN(w, aclnnGeluBackwardV2, g->t, x->t, (char *)"tanh", dx->t);
        break;
    case SILU:
        RUN(w, aclnnSiluBackward, g->t, x->t, dx->t);
        break;
    case SIGMOID:
        RUN(w, aclnnSigmoidBackward, g->t, y->t, dx->t);
        break;
    case TANH:
        RUN(w, aclnnTanhBackward, g->t, y->t, dx->t);
        break;
    case SOFTPLUS:
    case SOFTPLUS1:
        s1 = fscalar(op == SOFTPLUS ? 1.5f : 1.0f), s2 = fscalar(op == SOFTPLUS ? 12.0f : 20.0f);
        RUN(w, aclnnSoftplusBackward, g->t, x->t, s1, s2, dx->t);
        break;
    case RELU:
        s1 = fscalar(0.0f);
        RUN(w, aclnnThresholdBackward, g->t, from_result ? y->t : x->t, s1, dx->t);
        break;
    case LEAKY:
    case LEAKY_NEG:
        // from the result only with a non-negative slope
        s1 = fscalar(op == LEAKY ? 0.01f : -0.25f);
        RUN(w, aclnnLeakyReluBackward, g->t, (from_result && op == LEAKY) ? y->t : x->t, s1,
            from_result && op == LEAKY, dx->t);
        break;
    case HARDSWISH:
        RUN(w, aclnnHardswishBackward, g->t, x->t, dx->t);
        break;
    case HARDSIGMOID:
        RUN(w, aclnnHardsigmoidBackward, g->t, x->t, dx->t);
        break;
    default:
        elu_attrs(op, &a, &b, &c);
        s1 = fscalar(a), s2 = fscalar(b), s3 = fscalar(c);
        RUN(w, aclnnEluBackward, g->t, s1, s2, s3, from_result, from_result ? y->t : x->t, dx->t);
        break;
    }
    if (s1) aclDestroyScalar(s1);
    if (s2) aclDestroyScalar(s2);
    if (s3) aclDestroyScalar(s3);
}

/// The in-place form, where the operator has one (returns false if not).
static bool inplace(int op, T *x) {
    const char *w = unary_names[op];
    aclScalar *s1 = NULL, *s2 = NULL, *s3 = NULL;
    float a, b, c;
    bool has = true;
    switch (op) {
    case MISH:
        RUN(w, aclnnInplaceMish, x->t);
        break;
    case SIGMOID:
        RUN(w, aclnnInplaceSigmoid, x->t);
        break;
    case TANH:
        RUN(w, aclnnInplaceTanh, x->t);
        break;
    case RELU:
        RUN(w, aclnnInplaceRelu, x->t);
        break;
    case LEAKY:
    case LEAKY_NEG:
        s1 = fscalar(op == LEAKY ? 0.01f : -0.25f);
        RUN(w, aclnnInplaceLeakyRelu, x->t, s1);
        break;
    case HARDSWISH:
        RUN(w, aclnnInplaceHardswish, x->t);
        break;
    case HARDSIGMOID:
        RUN(w, aclnnInplaceHardsigmoid, x->t);
        break;
    case ELU:
    case ELU_SCALED:
    case ELU_SELU:
        elu_attrs(op, &a, &b, &c);
        s1 = fscalar(a), s2 = fscalar(b), s3 = fscalar(c);
        RUN(w, aclnnInplaceElu, x->t, s1, s2, s3);
        break;
    default:
        has = false;
        break;
    }
    if (s1) aclDestroyScalar(s1);
    if (s2) aclDestroyScalar(s2);
    if (s3) aclDestroyScalar(s3);
    return has;
}

static const aclDataType dts[3] = {ACL_FLOAT, ACL_BF16, ACL_FLOAT16};

/// One shape of the elementwise sweep: `n` elements as a vector, or a transposed r x c view.
static void unary_case(int op, aclDataType dt, const char *tag, int nd, const int64_t *dims,
                       const int64_t *tstrides, int64_t storage, uint64_t seed) {
    char label[128];
    double r = unary_range[op];
    T x = mk(dt, nd, dims, tstrides, storage), y = mk(dt, nd, dims, NULL, 0);
    T g = mk(dt, nd, dims, NULL, 0), dx = mk(dt, nd, dims, NULL, 0);
    fill(&x, seed, -r, r);
    fill(&g, seed + 1, -2, 2);
    forward(op, &x, &y);
    snprintf(label, sizeof label, "%s.fwd %s %s", unary_names[op], dtn(dt), tag);
    emit(label, &y);
    backward(op, &g, &x, &y, false, &dx);
    snprintf(label, sizeof label, "%s.bwd %s %s", unary_names[op], dtn(dt), tag);
    emit(label, &dx);
    if (op == RELU || op == LEAKY || op == ELU || op == ELU_SCALED || op == SIGMOID || op == TANH) {
        memset(dx.base, 0xA5, dx.bytes);
        backward(op, &g, &x, &y, true, &dx);
        snprintf(label, sizeof label, "%s.bwd_result %s %s", unary_names[op], dtn(dt), tag);
        emit(label, &dx);
    }
    if (!tstrides && inplace(op, &x)) {
        snprintf(label, sizeof label, "%s.inplace %s %s", unary_names[op], dtn(dt), tag);
        emit(label, &x);
    }
    drop(&x), drop(&y), drop(&g), drop(&dx);
}

/// Mixed-dtype gradients: grad_output fp32 for a 16-bit x, and bf16 for an fp32 x.
static void mixed_case(int op, uint64_t seed) {
    static const int64_t dims[2] = {13, 67};
    const aclDataType pairs[3][2] = {
        {ACL_FLOAT, ACL_BF16}, {ACL_FLOAT, ACL_FLOAT16}, {ACL_BF16, ACL_FLOAT}};
    for (int k = 0; k < 3; k++) {
        char label[128];
        double r = unary_range[op];
        T x = mk(pairs[k][1], 2, dims, NULL, 0), y = mk(pairs[k][1], 2, dims, NULL, 0);
        T g = mk(pairs[k][0], 2, dims, NULL, 0), dx = mk(pairs[k][1], 2, dims, NULL, 0);
        fill(&x, seed, -r, r);
        fill(&g, seed + 1, -2, 2);
        forward(op, &x, &y);
        backward(op, &g, &x, &y, false, &dx);
        snprintf(label, sizeof label, "%s.bwd g=%s x=%s", unary_names[op], dtn(pairs[k][0]),
                 dtn(pairs[k][1]));
        emit(label, &dx);
        drop(&x), drop(&y), drop(&g), drop(&dx);
    }
}

// ---------------------------------------------------------------------------------------------
// Arithmetic: Add / Mul (broadcast [C] and [1, C]), the scalar and in-place forms, FusedAddScale

static void arith_cases(aclDataType dt, int64_t rows, int64_t cols, const char *tag,
                        uint64_t seed) {
    char label[128];
    const int64_t full[2] = {rows, cols}, row[1] = {cols}, row2[2] = {1, cols};
    T a = mk(dt, 2, full, NULL, 0), b = mk(dt, 1, row, NULL, 0), b2 = mk(dt, 2, row2, NULL, 0);
    T out = mk(dt, 2, full, NULL, 0), c = mk(dt, 2, full, NULL, 0);
    fill(&a, seed, -4, 4), fill(&b, seed + 1, -4, 4), fill(&b2, seed + 2, -4, 4);
    fill(&c, seed + 3, -4, 4);
    aclScalar *alpha = fscalar(1.5f), *other = fscalar(0.7f), *one = fscalar(1.0f);
#define EMIT_OUT(name)                                                                             \
    snprintf(label, sizeof label, "%s %s %s", name, dtn(dt), tag), emit(label, &out),              \
        memset(out.base, 0xA5, out.bytes)
    RUN("add", aclnnAdd, a.t, b.t, alpha, out.t);
    EMIT_OUT("add.bcast");
    RUN("add", aclnnAdd, a.t, b2.t, alpha, out.t);
    EMIT_OUT("add.bcast1");
    RUN("add", aclnnAdd, a.t, c.t, one, out.t);
    EMIT_OUT("add.alpha1");
    RUN("adds", aclnnAdds, a.t, other, alpha, out.t);
    EMIT_OUT("adds");
    RUN("mul", aclnnMul, a.t, b.t, out.t);
    EMIT_OUT("mul.bcast");
    RUN("mul", aclnnMul, a.t, b2.t, out.t);
    EMIT_OUT("mul.bcast1");
    RUN("muls", aclnnMuls, a.t, other, out.t);
    EMIT_OUT("muls");
    // in place, on copies of a
    memcpy(out.base, a.base, a.bytes);
    RUN("inplace_add", aclnnInplaceAdd, out.t, b.t, alpha);
    EMIT_OUT("add.inplace");
    memcpy(out.base, a.base, a.bytes);
    RUN("inplace_adds", aclnnInplaceAdds, out.t, other, alpha);
    EMIT_OUT("adds.inplace");
    memcpy(out.base, a.base, a.bytes);
    RUN("inplace_mul", aclnnInplaceMul, out.t, b.t);
    EMIT_OUT("mul.inplace");
    memcpy(out.base, a.base, a.bytes);
    RUN("inplace_muls", aclnnInplaceMuls, out.t, other);
    EMIT_OUT("muls.inplace");
    // FusedAddScale with a per-channel scale [C] and a one-element scale [1]
    for (int per_channel = 0; per_channel < 2; per_channel++) {
        const int64_t one1[1] = {1};
        T scale = per_channel ? mk(dt, 1, row, NULL, 0) : mk(dt, 1, one1, NULL, 0);
        fill(&scale, seed + 4, 0.5, 2);
        T gx = mk(dt, 2, full, NULL, 0), gb = mk(dt, 1, row, NULL, 0);
        T gs = per_channel ? mk(dt, 1, row, NULL, 0) : mk(dt, 1, one1, NULL, 0);
        const char *sfx = per_channel ? "scaleC" : "scale1";
        RUN("fas", aclnnFusedAddScale, a.t, b.t, scale.t, out.t);
        snprintf(label, sizeof label, "fas.fwd.%s %s %s", sfx, dtn(dt), tag);
        emit(label, &out);
        RUN("fas_bwd", aclnnFusedAddScaleBackward, c.t, a.t, b.t, scale.t, gx.t, gb.t, gs.t);
        snprintf(label, sizeof label, "fas.gradX.%s %s %s", sfx, dtn(dt), tag);
        emit(label, &gx);
        snprintf(label, sizeof label, "fas.gradBias.%s %s %s", sfx, dtn(dt), tag);
        emit(label, &gb);
        snprintf(label, sizeof label, "fas.gradScale.%s %s %s", sfx, dtn(dt), tag);
        emit(label, &gs);
        drop(&scale), drop(&gx), drop(&gb), drop(&gs);
    }
#undef EMIT_OUT
    aclDestroyScalar(alpha), aclDestroyScalar(other), aclDestroyScalar(one);
    drop(&a), drop(&b), drop(&b2), drop(&out), drop(&c);
}

// ---------------------------------------------------------------------------------------------
// ReduceSum: long sums (several 16384-term blocks: split across threads when there are few
// outputs), strips, keepDims, and output dtypes other than the input's

static void reduce_case(aclDataType in_dt, aclDataType out_dt, int nd, const int64_t *dims,
                        int ndims, const int64_t *rdims, bool keep, const char *tag,
                        uint64_t seed) {
    char label[160];
    int64_t odims[8];
    int ond = 0;
    unsigned mask = 0;
    for (int i = 0; i < ndims; i++) mask |= 1u << (rdims[i] < 0 ? rdims[i] + nd : rdims[i]);
    if (ndims == 0) mask = (1u << nd) - 1;
    for (int d = 0; d < nd; d++) {
        if ((mask >> d) & 1u) {
            if (keep) odims[ond++] = 1;
        } else
            odims[ond++] = dims[d];
    }
    T x = mk(in_dt, nd, dims, NULL, 0), y = mk(out_dt, ond, odims, NULL, 0);
    fill(&x, seed, -1, 1.25);
    aclIntArray *arr = aclCreateIntArray(rdims, (uint64_t)ndims);
    RUN("reduce_sum", aclnnReduceSum, x.t, arr, keep, out_dt, y.t);
    aclDestroyIntArray(arr);
    snprintf(label, sizeof label, "reduce_sum %s->%s %s", dtn(in_dt), dtn(out_dt), tag);
    emit(label, &y);
    drop(&x), drop(&y);
}

static void reduce_cases(uint64_t seed) {
    static const int64_t all_dims[1] = {0};
    static const int64_t last[1] = {-1}, first[1] = {0};
    const int64_t v[1] = {200003};       // 13 blocks of 16384 terms, one output
    const int64_t few[2] = {3, 70001};   // 3 outputs of 5 blocks each (split blocks)
    const int64_t tall[2] = {70001, 24}; // columns: strips of rows
    const int64_t small[2] = {37, 29};
    for (int k = 0; k < 3; k++) {
        aclDataType dt = dts[k];
        reduce_case(dt, dt, 1, v, 0, all_dims, false, "long.all", seed + 1);
        reduce_case(dt, ACL_FLOAT, 1, v, 0, all_dims, false, "long.all", seed + 1);
        reduce_case(dt, dt, 2, few, 1, last, false, "few.last", seed + 2);
        reduce_case(dt, dt, 2, tall, 1, first, true, "tall.first.keep", seed + 3);
        reduce_case(dt, dt, 2, small, 1, first, false, "small.first", seed + 4);
        reduce_case(dt, dt, 2, small, 1, last, true, "small.last.keep", seed + 5);
        reduce_case(dt, dt, 2, small, 0, all_dims, true, "small.all.keep", seed + 6);
    }
    reduce_case(ACL_FLOAT, ACL_BF16, 2, few, 1, last, false, "few.last", seed + 7);
}

// ---------------------------------------------------------------------------------------------
// Softmax / LogSoftmax: either dim, wide rows, 16-bit rows, mixed-dtype gradients

static void softmax_case(aclDataType dt, aclDataType gdt, int64_t rows, int64_t cols, int64_t dim,
                         const char *tag, uint64_t seed) {
    char label[160];
    const int64_t dims[2] = {rows, cols};
    T x = mk(dt, 2, dims, NULL, 0), y = mk(dt, 2, dims, NULL, 0);
    T g = mk(gdt, 2, dims, NULL, 0), dx = mk(dt, 2, dims, NULL, 0);
    fill(&x, seed, -6, 6), fill(&g, seed + 1, -1, 1);
    for (int log = 0; log < 2; log++) {
        const char *name = log ? "log_softmax" : "softmax";
        memset(y.base, 0xA5, y.bytes), memset(dx.base, 0xA5, dx.bytes);
        if (log)
            RUN(name, aclnnLogSoftmax, x.t, dim, y.t);
        else
            RUN(name, aclnnSoftmax, x.t, dim, y.t);
        snprintf(label, sizeof label, "%s.fwd %s %s", name, dtn(dt), tag);
        if (gdt == dt) emit(label, &y);
        if (log)
            RUN(name, aclnnLogSoftmaxBackward, g.t, y.t, dim, dx.t);
        else
            RUN(name, aclnnSoftmaxBackward, g.t, y.t, dim, dx.t);
        snprintf(label, sizeof label, "%s.bwd %s g=%s %s", name, dtn(dt), dtn(gdt), tag);
        emit(label, &dx);
    }
    drop(&x), drop(&y), drop(&g), drop(&dx);
}

// ---------------------------------------------------------------------------------------------

static void pass(uint64_t seed) {
    const int64_t vec[1] = {1003}, big[1] = {300007};
    const int64_t tr_dims[2] = {37, 29}, tr_strides[2] = {1, 37}; // a transposed 29 x 37 storage
    const int64_t sq[2] = {29, 37}, sq_strides[2] = {1, 29};      // the other way round
    for (int op = 0; op < NUNARY; op++)
        for (int k = 0; k < 3; k++) {
            unary_case(op, dts[k], "vec", 1, vec, NULL, 0, seed + (uint64_t)op * 7);
            unary_case(op, dts[k], "tr", 2, tr_dims, tr_strides, 29 * 37, seed + (uint64_t)op * 7);
            unary_case(op, dts[k], "tr2", 2, sq, sq_strides, 29 * 37, seed + (uint64_t)op * 7);
            if (op == MISH || op == SOFTPLUS || op == RELU || op == ELU_SCALED)
                unary_case(op, dts[k], "big", 1, big, NULL, 0, seed + (uint64_t)op * 7 + 3);
        }
    for (int op = 0; op < NUNARY; op++) mixed_case(op, seed + 100 + (uint64_t)op);
    for (int k = 0; k < 3; k++) {
        arith_cases(dts[k], 37, 29, "37x29", seed + 200);
        arith_cases(dts[k], 4099, 77, "4099x77", seed + 201);
    }
    reduce_cases(seed + 300);
    for (int k = 0; k < 3; k++) {
        softmax_case(dts[k], dts[k], 37, 29, -1, "37x29.last", seed + 400);
        softmax_case(dts[k], dts[k], 37, 29, 0, "37x29.first", seed + 401);
        softmax_case(dts[k], dts[k], 5, 5003, -1, "5x5003.last", seed + 402);
        softmax_case(dts[k], dts[k], 4099, 33, -1, "4099x33.last", seed + 403);
    }
    softmax_case(ACL_BF16, ACL_FLOAT, 37, 29, -1, "37x29.last", seed + 404);
    softmax_case(ACL_FLOAT16, ACL_FLOAT, 37, 29, -1, "37x29.last", seed + 405);
    softmax_case(ACL_FLOAT, ACL_BF16, 37, 29, -1, "37x29.last", seed + 406);
}

/// Outputs of 16 MiB and more (non-temporal stores) and streamed 16-bit CopyIn: once per pass.
static void huge(uint64_t seed) {
    const int64_t n[1] = {(int64_t)4 << 20 | 5};
    T x = mk(ACL_FLOAT, 1, n, NULL, 0), y = mk(ACL_FLOAT, 1, n, NULL, 0);
    fill(&x, seed, -8, 8);
    forward(RELU, &x, &y);
    emit("relu.fwd f32 huge", &y);
    memset(y.base, 0xA5, y.bytes);
    forward(SOFTPLUS, &x, &y);
    emit("softplus.fwd f32 huge", &y);
    drop(&x), drop(&y);
    x = mk(ACL_BF16, 1, n, NULL, 0), y = mk(ACL_BF16, 1, n, NULL, 0);
    fill(&x, seed + 1, -8, 8);
    forward(SOFTPLUS, &x, &y);
    emit("softplus.fwd bf16 huge", &y);
    memset(y.base, 0xA5, y.bytes);
    forward(MISH, &x, &y);
    emit("mish.fwd bf16 huge", &y);
    drop(&x), drop(&y);
}

int main(int argc, char **argv) {
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
    if (aclInit(NULL) != 0) {
        printf("aclInit failed\n");
        return 2;
    }
    opgrad_isa cpu = opgrad_cpu_isa();
    static const int threads[2] = {1, 2};
    for (int isa = 0; isa <= (int)cpu; isa++) {
        opgrad_set_max_isa((opgrad_isa)isa);
        for (int t = 0; t < 2; t++) {
            opgrad_set_num_threads(threads[t]);
            snprintf(prefix, sizeof prefix, "%s/%dt", opgrad_isa_name((opgrad_isa)isa), threads[t]);
            pass(seed);
            if (threads[t] > 1) huge(seed);
        }
    }
    aclFinalize();
    return 0;
}
