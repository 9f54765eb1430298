/* The MindSpore aot entry points of the built-in operators (src/aot/aot_builtins.c, docs/aot.md).
 *
 * - every entry point in float32 (spelled "float32" and "float"), float16, bfloat16 and float64
 * gives bitwise the result of the aclnn call it stands for (forwards: the operator; backwards: the
 *   aclnn backward operator with the bprop params mapped onto it), including 0-d, empty and
 *   mixed-precision dy; standard pairs of the list without a hand-written case get a derived one
 *   (their aclnn operators through the list's thunks, see collect_cases);
 * - Add/Mul backward reduce broadcast gradients to each input's shape: checked against float64
 *   sums of the (dtype-rounded) terms with the reduction engine's error bound;
 * - bad nparam, dtypes, NULL pointers, ranks, dims and shape/dtype mismatches return non-zero
 *   with a message naming the entry point, the param and the rule; a failing aclnn call returns
 *   its status with its message prefixed by the entry point;
 * - the symbols are exported from the shared library: dlopen + dlsym of every entry point, and a
 *   call through dlsym matches the static library bitwise. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_elu.h"
#include "aclnnop/aclnn_elu_backward.h"
#include "aclnnop/aclnn_fused_add_scale.h"
#include "aclnnop/aclnn_fused_add_scale_backward.h"
#include "aclnnop/aclnn_gelu.h"
#include "aclnnop/aclnn_gelu_backward.h"
#include "aclnnop/aclnn_hardswish.h"
#include "aclnnop/aclnn_hardswish_backward.h"
#include "aclnnop/aclnn_leaky_relu.h"
#include "aclnnop/aclnn_leaky_relu_backward.h"
#include "aclnnop/aclnn_logsoftmax.h"
#include "aclnnop/aclnn_logsoftmax_backward.h"
#include "aclnnop/aclnn_mish.h"
#include "aclnnop/aclnn_mish_backward.h"
#include "aclnnop/aclnn_mul.h"
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
#include "aot_args.h"
#include "opgrad/custom_op.h"
#include "ops/ops.h"
#include "test.h"
#include "testutil.h"

// The entry points, from the operator list: opgrad_<Name> and opgrad_<Name>Backward for every
// forward marked AOT (src/ops/ops.inc).
#define OG_AOT_AOT(n) X(n) X(n##Backward)
#define OG_AOT_NOAOT(n)
#define OG_OP(family, Name, kind, grad, aot, params) OG_AOT_##aot(Name)
#define X(n) int opgrad_##n(int, void **, int *, int64_t **, const char **, void *, void *);
#include "ops/ops.inc"
#undef X

/* ---- the reference aclnn calls, over tensors in the entry point's param layout --------------- */

static aclScalar *s_zero, *s_one, *s_twenty, *s_slope;

typedef aclnnStatus (*ref_fn)(aclTensor **t);
#define REF(fn, phase1, phase2)                                                                    \
    static aclnnStatus fn(aclTensor **t) {                                                         \
        aclnnStatus st;                                                                            \
        OP_RUN(st, phase1, phase2);                                                                \
        return st;                                                                                 \
    }
// forward: x, y; backward: x, y, dy, dx
REF(r_mish, aclnnMishGetWorkspaceSize(t[0], t[1], &ws_, &ex_), aclnnMish)
REF(r_mish_b, aclnnMishBackwardGetWorkspaceSize(t[2], t[0], t[3], &ws_, &ex_), aclnnMishBackward)
REF(r_gelu, aclnnGeluGetWorkspaceSize(t[0], t[1], &ws_, &ex_), aclnnGelu)
REF(r_gelu_b, aclnnGeluBackwardGetWorkspaceSize(t[2], t[0], t[3], &ws_, &ex_), aclnnGeluBackward)
REF(r_silu, aclnnSiluGetWorkspaceSize(t[0], t[1], &ws_, &ex_), aclnnSilu)
REF(r_silu_b, aclnnSiluBackwardGetWorkspaceSize(t[2], t[0], t[3], &ws_, &ex_), aclnnSiluBackward)
REF(r_sigmoid, aclnnSigmoidGetWorkspaceSize(t[0], t[1], &ws_, &ex_), aclnnSigmoid)
REF(r_sigmoid_b, aclnnSigmoidBackwardGetWorkspaceSize(t[2], t[1], t[3], &ws_, &ex_),
    aclnnSigmoidBackward)
REF(r_tanh, aclnnTanhGetWorkspaceSize(t[0], t[1], &ws_, &ex_), aclnnTanh)
REF(r_tanh_b, aclnnTanhBackwardGetWorkspaceSize(t[2], t[1], t[3], &ws_, &ex_), aclnnTanhBackward)
REF(r_softplus, aclnnSoftplusGetWorkspaceSize(t[0], s_one, s_twenty, t[1], &ws_, &ex_),
    aclnnSoftplus)
REF(r_softplus_b,
    aclnnSoftplusBackwardGetWorkspaceSize(t[2], t[0], s_one, s_twenty, t[3], &ws_, &ex_),
    aclnnSoftplusBackward)
REF(r_relu, aclnnReluGetWorkspaceSize(t[0], t[1], &ws_, &ex_), aclnnRelu)
REF(r_relu_b, aclnnThresholdBackwardGetWorkspaceSize(t[2], t[0], s_zero, t[3], &ws_, &ex_),
    aclnnThresholdBackward)
REF(r_leaky, aclnnLeakyReluGetWorkspaceSize(t[0], s_slope, t[1], &ws_, &ex_), aclnnLeakyRelu)
REF(r_leaky_b, aclnnLeakyReluBackwardGetWorkspaceSize(t[2], t[0], s_slope, false, t[3], &ws_, &ex_),
    aclnnLeakyReluBackward)
REF(r_hardswish, aclnnHardswishGetWorkspaceSize(t[0], t[1], &ws_, &ex_), aclnnHardswish)
REF(r_hardswish_b, aclnnHardswishBackwardGetWorkspaceSize(t[2], t[0], t[3], &ws_, &ex_),
    aclnnHardswishBackward)
REF(r_elu, aclnnEluGetWorkspaceSize(t[0], s_one, s_one, s_one, t[1], &ws_, &ex_), aclnnElu)
REF(r_softmax, aclnnSoftmaxGetWorkspaceSize(t[0], -1, t[1], &ws_, &ex_), aclnnSoftmax)
REF(r_softmax_b, aclnnSoftmaxBackwardGetWorkspaceSize(t[2], t[1], -1, t[3], &ws_, &ex_),
    aclnnSoftmaxBackward)
REF(r_log_softmax, aclnnLogSoftmaxGetWorkspaceSize(t[0], -1, t[1], &ws_, &ex_), aclnnLogSoftmax)
REF(r_log_softmax_b, aclnnLogSoftmaxBackwardGetWorkspaceSize(t[2], t[1], -1, t[3], &ws_, &ex_),
    aclnnLogSoftmaxBackward)
REF(r_elu_b,
    aclnnEluBackwardGetWorkspaceSize(t[2], s_one, s_one, s_one, false, t[0], t[3], &ws_, &ex_),
    aclnnEluBackward)
// a, b, y; backward: a, b, y, dy, da, db (same shapes: da = dy * 1, db = dy * 1 / dy * b, dy * a)
REF(r_add, aclnnAddGetWorkspaceSize(t[0], t[1], s_one, t[2], &ws_, &ex_), aclnnAdd)
REF(r_mul, aclnnMulGetWorkspaceSize(t[0], t[1], t[2], &ws_, &ex_), aclnnMul)
static aclnnStatus r_add_b(aclTensor **t) {
    aclnnStatus st, st2;
    OP_RUN(st, aclnnMulsGetWorkspaceSize(t[3], s_one, t[4], &ws_, &ex_), aclnnMuls);
    OP_RUN(st2, aclnnMulsGetWorkspaceSize(t[3], s_one, t[5], &ws_, &ex_), aclnnMuls);
    return st ? st : st2;
}
static aclnnStatus r_mul_b(aclTensor **t) {
    aclnnStatus st, st2;
    OP_RUN(st, aclnnMulGetWorkspaceSize(t[3], t[1], t[4], &ws_, &ex_), aclnnMul);
    OP_RUN(st2, aclnnMulGetWorkspaceSize(t[3], t[0], t[5], &ws_, &ex_), aclnnMul);
    return st ? st : st2;
}
// x, bias, scale, y; backward: x, bias, scale, y, dy, dx, dbias, dscale
REF(r_fused, aclnnFusedAddScaleGetWorkspaceSize(t[0], t[1], t[2], t[3], &ws_, &ex_),
    aclnnFusedAddScale)
REF(r_fused_b,
    aclnnFusedAddScaleBackwardGetWorkspaceSize(t[4], t[0], t[1], t[2], t[5], t[6], t[7], &ws_,
                                               &ex_),
    aclnnFusedAddScaleBackward)

typedef enum { K_UNARY, K_BINARY, K_FUSED } kind;

typedef struct acase {
    const char *sym;
    opgrad_aot_fn fn;
    kind k;
    bool backward;
    ref_fn ref;
    ref_fn fwd_ref; // backward: computes y
    // a derived case (ref == NULL): the aclnn operators of a standard list pair, through their
    // phase-1 thunks (derived_call)
    const og_opdesc *op, *fwd_op;
} acase;

#define C1(n, r)                                                                                   \
    { "opgrad_" #n, opgrad_##n, K_UNARY, false, r, NULL, NULL, NULL }
#define B1(n, r, f)                                                                                \
    { "opgrad_" #n, opgrad_##n, K_UNARY, true, r, f, NULL, NULL }
static const acase CASES[] = {
    C1(Mish, r_mish),
    B1(MishBackward, r_mish_b, r_mish),
    C1(Gelu, r_gelu),
    B1(GeluBackward, r_gelu_b, r_gelu),
    C1(Silu, r_silu),
    B1(SiluBackward, r_silu_b, r_silu),
    C1(Sigmoid, r_sigmoid),
    B1(SigmoidBackward, r_sigmoid_b, r_sigmoid),
    C1(Tanh, r_tanh),
    B1(TanhBackward, r_tanh_b, r_tanh),
    C1(Softplus, r_softplus),
    B1(SoftplusBackward, r_softplus_b, r_softplus),
    C1(Relu, r_relu),
    B1(ReluBackward, r_relu_b, r_relu),
    C1(LeakyRelu, r_leaky),
    B1(LeakyReluBackward, r_leaky_b, r_leaky),
    C1(Hardswish, r_hardswish),
    B1(HardswishBackward, r_hardswish_b, r_hardswish),
    C1(Elu, r_elu),
    B1(EluBackward, r_elu_b, r_elu),
    C1(Softmax, r_softmax),
    B1(SoftmaxBackward, r_softmax_b, r_softmax),
    C1(LogSoftmax, r_log_softmax),
    B1(LogSoftmaxBackward, r_log_softmax_b, r_log_softmax),
    {"opgrad_Add", opgrad_Add, K_BINARY, false, r_add, NULL, NULL, NULL},
    {"opgrad_AddBackward", opgrad_AddBackward, K_BINARY, true, r_add_b, r_add, NULL, NULL},
    {"opgrad_Mul", opgrad_Mul, K_BINARY, false, r_mul, NULL, NULL, NULL},
    {"opgrad_MulBackward", opgrad_MulBackward, K_BINARY, true, r_mul_b, r_mul, NULL, NULL},
    {"opgrad_FusedAddScale", opgrad_FusedAddScale, K_FUSED, false, r_fused, NULL, NULL, NULL},
    {"opgrad_FusedAddScaleBackward", opgrad_FusedAddScaleBackward, K_FUSED, true, r_fused_b,
     r_fused, NULL, NULL},
};
enum { NHAND = sizeof CASES / sizeof CASES[0] };

/* ---- derived cases -------------------------------------------------------------------------
 * An AOT forward of the standard unary shape (T(self), attributes with defaults, O(out)) whose
 * backward reads G and T or Y into one O needs no hand-written case: its reference calls the two
 * aclnn operators through their phase-1 thunks, with the tensors mapped by parameter kind
 * (T <- x, Y <- y, G <- dy, O <- y or dx) and the attributes at their list defaults. That
 * mapping is written here apart from src/aot/aot_builtins.c's, which it checks. */

static bool attr_kind(og_param_kind k) {
    return k == OG_PARAM_SCALAR || k == OG_PARAM_INT || k == OG_PARAM_INT8 || k == OG_PARAM_BOOL ||
           k == OG_PARAM_DOUBLE || k == OG_PARAM_STRING;
}

/// Whether op's parameters are only `tensors` kinds (each at most once, O exactly once) and
/// attributes with defaults.
static bool standard_params(const og_opdesc *op, const char *tensors) {
    og_param p;
    int outs = 0;
    for (int i = 0; og_opdesc_param(op, i, &p); i++) {
        if (attr_kind(p.kind)) {
            if (!p.def[0]) return false;
        } else if (p.kind == OG_PARAM_OUT) {
            outs++;
        } else {
            char letter = p.kind == OG_PARAM_TENSOR   ? 'T'
                          : p.kind == OG_PARAM_GRAD   ? 'G'
                          : p.kind == OG_PARAM_RESULT ? 'Y'
                                                      : '?';
            if (!strchr(tensors, letter)) return false;
        }
    }
    return outs == 1;
}

/// The reference of a derived case over t = {x, y} (forward) or {x, y, dy, dx} (backward).
static aclnnStatus derived_call(const og_opdesc *op, aclTensor **t) {
    og_arg args[16];
    aclScalar *scalars[16];
    char strings[4][48];
    int ns = 0, nc = 0;
    bool backward = op->kind == OG_OP_BACKWARD;
    og_param p;
    for (int i = 0; og_opdesc_param(op, i, &p) && i < 16; i++) {
        switch (p.kind) {
        case OG_PARAM_TENSOR:
            args[i].t = t[0];
            break;
        case OG_PARAM_RESULT:
            args[i].t = t[1];
            break;
        case OG_PARAM_GRAD:
            args[i].t = t[2];
            break;
        case OG_PARAM_OUT:
            args[i].t = backward ? t[3] : t[1];
            break;
        case OG_PARAM_SCALAR: { // as the entry points pass attributes: DOUBLE, unrounded
            double v = atof(p.def);
            args[i].s = scalars[ns++] = aclCreateScalar(&v, ACL_DOUBLE);
            break;
        }
        case OG_PARAM_INT:
            args[i].i = atoll(p.def);
            break;
        case OG_PARAM_INT8:
            args[i].i8 = (int8_t)atoi(p.def);
            break;
        case OG_PARAM_BOOL:
            args[i].b = !strcmp(p.def, "true");
            break;
        case OG_PARAM_DOUBLE:
            args[i].d = atof(p.def);
            break;
        case OG_PARAM_STRING: { // a quoted default
            const char *from = p.def[0] == '"' ? p.def + 1 : p.def;
            snprintf(strings[nc], sizeof strings[nc], "%s", from);
            char *q = strchr(strings[nc], '"');
            if (q) *q = 0;
            args[i].c = strings[nc++];
            break;
        }
        default:
            return ACLNN_ERR_INNER; // not a standard pair (derivable() refused it)
        }
    }
    aclnnStatus st;
    OP_RUN(st, op->phase1(args, &ws_, &ex_), op->phase2);
    for (int k = 0; k < ns; k++) aclDestroyScalar(scalars[k]);
    return st;
}

static acase g_cases[64];
static int NCASES;

static const acase *hand_case(const char *sym) {
    for (int c = 0; c < NHAND; c++)
        if (!strcmp(CASES[c].sym, sym)) return &CASES[c];
    return NULL;
}

// The hand-written cases, then a derived pair for every standard AOT forward without one.
static void collect_cases(void) {
    for (int c = 0; c < NHAND; c++) g_cases[NCASES++] = CASES[c];
#pragma push_macro("OG_OP")
#undef OG_OP
#define DERIVE_AOT(n) derive(#n, opgrad_##n, opgrad_##n##Backward);
#define DERIVE_NOAOT(n)
#define OG_OP(family, Name, kind, grad, aot, params) DERIVE_##aot(Name)
#define derive(name, fwd_fn, bwd_fn)                                                               \
    do {                                                                                           \
        const og_opdesc *f = og_op_find(name), *b = f ? og_op_grad(f) : NULL;                      \
        if (hand_case("opgrad_" name) || !b || !standard_params(f, "T") ||                         \
            !standard_params(b, "GTY") || NCASES + 2 > (int)(sizeof g_cases / sizeof *g_cases))    \
            break;                                                                                 \
        g_cases[NCASES++] = (acase){"opgrad_" name, fwd_fn, K_UNARY, false, NULL, NULL, f, NULL};  \
        g_cases[NCASES++] =                                                                        \
            (acase){"opgrad_" name "Backward", bwd_fn, K_UNARY, true, NULL, NULL, b, f};           \
    } while (0);
#include "ops/ops.inc"
#undef derive
#undef DERIVE_AOT
#undef DERIVE_NOAOT
#pragma pop_macro("OG_OP")
}

/* ---- aot argument sets ---------------------------------------------------------------------- */

// Runs ref (or, for a derived case, op through its thunk) over tensors on the same buffers.
static aclnnStatus run_ref(ref_fn ref, const og_opdesc *op, argset *a) {
    aclTensor *t[MAXP];
    for (int i = 0; i < a->n; i++) t[i] = test_tensor(a->dims[i], a->nd[i], a->adt[i], a->p[i]);
    aclnnStatus st = ref ? ref(t) : derived_call(op, t);
    for (int i = 0; i < a->n; i++) aclDestroyTensor(t[i]);
    return st;
}

/* ---- bitwise against aclnn ------------------------------------------------------------------ */

// Builds the params of case c: inputs (shapes by kind), y, and for a backward dy and gradients.
static void build(const acase *c, argset *a, aclDataType dt, const int64_t *xd, int xn,
                  aclDataType dy_dt, uint64_t seed) {
    memset(a, 0, sizeof *a);
    bool alt = (seed & 1) != 0; // float32 spelled "float" on odd seeds
    static const int64_t ab[] = {6, 7}, fx[] = {6, 13}, fb[] = {13}, fs[] = {1};
    int nin = c->k == K_UNARY ? 1 : c->k == K_BINARY ? 2 : 3;
    if (c->k == K_UNARY) {
        aot_arg(a, 0, xd, xn, dt, alt, seed, -5, 5);
        aot_arg(a, 1, xd, xn, dt, alt, seed + 1, 0, 0);
    } else if (c->k == K_BINARY) {
        aot_arg(a, 0, ab, 2, dt, alt, seed, -3, 3);
        aot_arg(a, 1, ab, 2, dt, alt, seed + 1, -3, 3);
        aot_arg(a, 2, ab, 2, dt, alt, seed + 2, 0, 0);
    } else {
        aot_arg(a, 0, fx, 2, dt, alt, seed, -3, 3);
        aot_arg(a, 1, fb, 1, dt, alt, seed + 1, -1, 1);
        aot_arg(a, 2, fs, 1, dt, alt, seed + 2, 0.5, 2);
        aot_arg(a, 3, fx, 2, dt, alt, seed + 3, 0, 0);
    }
    if (!c->backward) return;
    CHECK_EQ(run_ref(c->fwd_ref, c->fwd_op, a), ACLNN_SUCCESS); // y = the forward's output
    aot_arg(a, nin + 1, a->dims[nin], a->nd[nin], dy_dt, alt, seed + 7, -2, 2);
    for (int i = 0; i < nin; i++)
        aot_arg(a, nin + 2 + i, a->dims[i], a->nd[i], dt, alt, seed + 8 + i, 0, 0);
}

static void check_bitwise(const acase *c, aclDataType dt, const int64_t *xd, int xn,
                          aclDataType dy_dt, uint64_t seed) {
    argset a;
    build(c, &a, dt, xd, xn, dy_dt, seed);
    int nin = c->k == K_UNARY ? 1 : c->k == K_BINARY ? 2 : 3;
    int first_out = c->backward ? nin + 2 : nin, nout = a.n - first_out;
    int rc = call(c->fn, &a);
    CHECKF(rc == 0, "%s %s: returned %d: %s", c->sym, dt_str(dt, false), rc, aclGetRecentErrMsg());
    void *saved[MAXP] = {0};
    for (int k = 0; k < nout; k++) {
        int i = first_out + k;
        saved[k] = malloc(bytes_of(&a, i) + 1);
        memcpy(saved[k], a.p[i], bytes_of(&a, i));
        memset(a.p[i], 0x5a, bytes_of(&a, i)); // the reference must write every element
    }
    aclnnStatus st = run_ref(c->ref, c->op, &a);
    CHECKF(st == ACLNN_SUCCESS, "%s reference: %d %s", c->sym, (int)st, aclGetRecentErrMsg());
    for (int k = 0; k < nout; k++) {
        int i = first_out + k;
        CHECKF(memcmp(saved[k], a.p[i], bytes_of(&a, i)) == 0,
               "%s %s (dy %s): output %d differs from the aclnn call", c->sym, dt_str(dt, false),
               dt_str(dy_dt, false), k);
        free(saved[k]);
    }
    args_free(&a);
}

static const aclDataType DTS[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE};
#define NDTS ((int)(sizeof DTS / sizeof DTS[0]))

static void test_every_entry_bitwise(void) {
    static const int64_t x[] = {5, 37};
    for (int c = 0; c < NCASES; c++)
        for (int d = 0; d < NDTS; d++) {
            check_bitwise(&g_cases[c], DTS[d], x, 2, DTS[d], (uint64_t)(100 * c + d));
            check_bitwise(&g_cases[c], DTS[d], x, 2, DTS[d], (uint64_t)(100 * c + d + 51));
        }
}

static void test_zero_dim_empty_and_rank8(void) {
    static const int64_t x0[1] = {0}, xe[] = {0, 3}, x8[] = {2, 1, 2, 1, 3, 1, 2, 2};
    for (int c = 0; c < NCASES; c++) {
        if (g_cases[c].k != K_UNARY) continue;
        check_bitwise(&g_cases[c], ACL_FLOAT, x0, 0, ACL_FLOAT, 7); // 0-d
        check_bitwise(&g_cases[c], ACL_BF16, xe, 2, ACL_BF16, 8);   // empty
        check_bitwise(&g_cases[c], ACL_FLOAT16, x8, 8, ACL_FLOAT16, 9);
    }
}

// dy in another floating dtype than y (mixed precision): the aclnn backward promotes.
static void test_mixed_precision_dy(void) {
    static const int64_t x[] = {4, 9};
    for (int c = 0; c < NCASES; c++) {
        if (!g_cases[c].backward || g_cases[c].k != K_UNARY) continue;
        check_bitwise(&g_cases[c], ACL_FLOAT16, x, 2, ACL_FLOAT, 11);
        check_bitwise(&g_cases[c], ACL_FLOAT, x, 2, ACL_BF16, 12);
    }
}

/* ---- Add/Mul backward: broadcast gradients reduced --------------------------------------- */

static double ulp_of(aclDataType dt, double v) {
    int mant = dt == ACL_FLOAT16 ? 10 : dt == ACL_BF16 ? 7 : dt == ACL_DOUBLE ? 52 : 23;
    int minexp = dt == ACL_FLOAT16 ? -14 : dt == ACL_DOUBLE ? -1022 : -126;
    int e;
    frexp(v, &e);
    int ex = v == 0 ? minexp : e - 1;
    if (ex < minexp) ex = minexp;
    return ldexp(1.0, ex - mant);
}

// Index of y's flat element k in a broadcast input of shape (nd, dims) (NumPy rules).
static int64_t bcast_index(int64_t k, const int64_t *yd, int yn, const int64_t *d, int n) {
    int64_t idx = 0, stride = 1;
    for (int j = yn - 1; j >= 0; j--) {
        int64_t c = k % yd[j];
        k /= yd[j];
        int ij = j - (yn - n);
        if (ij >= 0) {
            if (d[ij] != 1) idx += c * stride;
            stride *= d[ij];
        }
    }
    return idx;
}

static void check_reduced(bool mul, aclDataType dt, const int64_t *ad, int an, const int64_t *bd,
                          int bn, uint64_t seed) {
    int64_t yd[8];
    int yn = an > bn ? an : bn;
    for (int j = 0; j < yn; j++) {
        int ia = j - (yn - an), ib = j - (yn - bn);
        int64_t da = ia >= 0 ? ad[ia] : 1, db = ib >= 0 ? bd[ib] : 1;
        yd[j] = da == 1 ? db : da;
    }
    argset a;
    memset(&a, 0, sizeof a);
    aot_arg(&a, 0, ad, an, dt, false, seed, -3, 3);
    aot_arg(&a, 1, bd, bn, dt, false, seed + 1, -3, 3);
    aot_arg(&a, 2, yd, yn, dt, false, seed + 2, -1, 1);
    aot_arg(&a, 3, yd, yn, dt, false, seed + 3, -2, 2);
    aot_arg(&a, 4, ad, an, dt, false, seed + 4, 9, 9); // prefilled: every element must be written
    aot_arg(&a, 5, bd, bn, dt, false, seed + 5, 9, 9);
    int rc = call(mul ? opgrad_MulBackward : opgrad_AddBackward, &a);
    CHECKF(rc == 0, "%s: %d %s", mul ? "MulBackward" : "AddBackward", rc, aclGetRecentErrMsg());
    int64_t ny = a.numel[3];
    for (int g = 0; g < 2; g++) {
        const int64_t *gd = g ? bd : ad;
        int gn = g ? bn : an;
        int64_t ng = a.numel[4 + g];
        double *sum = calloc((size_t)(ng ? ng : 1), sizeof(double));
        double *abs_sum = calloc((size_t)(ng ? ng : 1), sizeof(double));
        const int64_t *od = g ? ad : bd; // the other input
        int on = g ? an : bn;
        for (int64_t k = 0; k < ny; k++) {
            double term = test_load(a.p[3], k, dt);
            if (mul) // aclnnMul rounds the product to the gradient's dtype
                term = test_round_to(
                    dt, term * test_load(a.p[1 - g], bcast_index(k, yd, yn, od, on), dt));
            int64_t gi = bcast_index(k, yd, yn, gd, gn);
            sum[gi] += term;
            abs_sum[gi] += fabs(term);
        }
        for (int64_t i = 0; i < ng; i++) {
            double got = test_load(a.p[4 + g], i, dt);
            double tol = 30 * compute_u(dt) * abs_sum[i] + ulp_of(dt, sum[i]);
            CHECKF(fabs(got - sum[i]) <= tol,
                   "%s %s grad %d element %lld: %.9g, float64 sum %.9g (tol %.3g)",
                   mul ? "MulBackward" : "AddBackward", dt_str(dt, false), g, (long long)i, got,
                   sum[i], tol);
        }
        free(sum);
        free(abs_sum);
    }
    args_free(&a);
}

static void test_broadcast_gradients_reduced(void) {
    static const int64_t a1[] = {4, 5, 6}, b1[] = {5, 1};
    static const int64_t a2[] = {3, 1}, b2[] = {1, 4};
    static const int64_t a3[1] = {0}, b3[] = {2, 3};
    static const int64_t a4[] = {0, 3}, b4[] = {3};
    static const int64_t a5[] = {64, 300}, b5[] = {300};
    for (int mul = 0; mul < 2; mul++)
        for (int d = 0; d < NDTS; d++) {
            uint64_t s = (uint64_t)(1000 + 10 * mul + d);
            check_reduced(mul, DTS[d], a1, 3, b1, 2, s);
            check_reduced(mul, DTS[d], b1, 2, a1, 3, s + 100); // the other way round
            check_reduced(mul, DTS[d], a2, 2, b2, 2, s + 200);
            check_reduced(mul, DTS[d], a3, 0, b3, 2, s + 300); // 0-d input
            check_reduced(mul, DTS[d], a4, 2, b4, 1, s + 400); // empty: db = 0
            check_reduced(mul, DTS[d], a5, 2, b5, 1, s + 500); // long sums
        }
}

/* ---- errors -----------------------------------------------------------------------------------
 */

static void test_errors(void) {
    static const int64_t x[] = {4, 3}, x2[] = {4, 2}, x9[] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    argset a;
    memset(&a, 0, sizeof a);
    for (int i = 0; i < 4; i++) aot_arg(&a, i, x, 2, ACL_FLOAT, false, (uint64_t)i, -1, 1);
    // nparam
    CHECK_EQ(opgrad_MishBackward(3, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_MishBackward: nparam is 3; it takes 4 params (x, y, dy, dx)");
    CHECK_EQ(opgrad_Mish(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Mish: nparam is 4; it takes 2 params (x, y)");
    CHECK(opgrad_FusedAddScaleBackward(0, NULL, NULL, NULL, NULL, NULL, NULL) != 0);
    CHECK_MSG("(x, bias, scale, y, dy, dx, dbias, dscale)");
    CHECK(opgrad_AddBackward(-1, NULL, NULL, NULL, NULL, NULL, NULL) != 0);
    CHECK_MSG("(x, other, y, dy, dx, dother)");
    // NULL arrays and pointers
    CHECK_EQ(opgrad_Mish(2, NULL, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("opgrad_Mish: params is NULL");
    CHECK_EQ(opgrad_Mish(2, a.p, NULL, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("ndims is NULL");
    CHECK_EQ(opgrad_Mish(2, a.p, a.nd, NULL, a.dt, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("shapes is NULL");
    CHECK_EQ(opgrad_Mish(2, a.p, a.nd, a.sh, NULL, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("dtypes is NULL");
    void *keep = a.p[1];
    a.p[1] = NULL;
    CHECK_EQ(opgrad_Mish(2, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("opgrad_Mish: params[1] (y) is NULL");
    a.p[1] = keep;
    a.dt[2] = NULL;
    CHECK_EQ(opgrad_MishBackward(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("dtypes[2] (dy) is NULL");
    a.dt[2] = "float32";
    a.sh[3] = NULL;
    CHECK_EQ(opgrad_MishBackward(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("shapes[3] (dx, rank 2) is NULL");
    a.sh[3] = a.dims[3];
    // dtypes
    const char *bad[] = {"int32", "complex64", "", "Float32", "bool"};
    for (int k = 0; k < 5; k++) {
        a.dt[0] = bad[k];
        CHECK_EQ(opgrad_Mish(2, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("opgrad_Mish: x (params[0]) has dtype");
        CHECK_MSG(bad[k]);
        CHECK_MSG("float32 (\"float32\" or \"float\"), float16, bfloat16 and float64");
    }
    a.dt[0] = "float32";
    // ranks and dims
    a.nd[0] = 9;
    a.sh[0] = (int64_t *)x9;
    CHECK_EQ(opgrad_Mish(2, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("x (params[0]) has rank 9; 0 to 8 dims are supported");
    a.nd[0] = -1;
    CHECK_EQ(opgrad_Mish(2, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("rank -1");
    a.nd[0] = 2;
    a.sh[0] = a.dims[0];
    a.dims[1][0] = -1;
    CHECK_EQ(opgrad_Mish(2, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("y (params[1]) has dim 0 = -1");
    a.dims[1][0] = 4;
    // shapes: forward output, dy, gradient
    a.sh[1] = (int64_t *)x2;
    CHECK_EQ(opgrad_Mish(2, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Mish: y (params[1]) has shape [4,2] but the forward output has shape [4,3]");
    a.sh[1] = a.dims[1];
    a.sh[2] = (int64_t *)x2;
    CHECK_EQ(opgrad_MishBackward(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("dy (params[2]) has shape [4,2] but y has [4,3]");
    a.sh[2] = a.dims[2];
    a.sh[3] = (int64_t *)x2;
    CHECK_EQ(opgrad_MishBackward(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_MishBackward: dx (params[3]) has shape [4,2] but x has [4,3]: a gradient "
              "has its input's shape");
    a.sh[3] = a.dims[3];
    a.dt[3] = "float16";
    CHECK_EQ(opgrad_MishBackward(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG(
        "dx (params[3]) has dtype float16 but x is float32: a gradient has its input's dtype");
    a.dt[3] = "float32";
    CHECK_EQ(opgrad_MishBackward(4, a.p, a.nd, a.sh, a.dt, NULL, NULL), 0); // all fixed again
    args_free(&a);

    // two inputs that do not broadcast; a broadcast gradient of the wrong shape
    static const int64_t b3[] = {3}, b2[] = {2}, y43[] = {4, 3};
    memset(&a, 0, sizeof a);
    aot_arg(&a, 0, x, 2, ACL_FLOAT, false, 1, -1, 1);
    aot_arg(&a, 1, b2, 1, ACL_FLOAT, false, 2, -1, 1);
    aot_arg(&a, 2, y43, 2, ACL_FLOAT, false, 3, -1, 1);
    CHECK_EQ(call(opgrad_Add, &a), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Add: aclnnAddGetWorkspaceSize: other [2] does not broadcast with [4,3]");
    args_free(&a);
    memset(&a, 0, sizeof a);
    aot_arg(&a, 0, x, 2, ACL_FLOAT, false, 1, -1, 1);
    aot_arg(&a, 1, b3, 1, ACL_FLOAT, false, 2, -1, 1);
    aot_arg(&a, 2, y43, 2, ACL_FLOAT, false, 3, -1, 1);
    aot_arg(&a, 3, y43, 2, ACL_FLOAT, false, 4, -1, 1);
    aot_arg(&a, 4, x, 2, ACL_FLOAT, false, 5, -1, 1);
    aot_arg(&a, 5, y43, 2, ACL_FLOAT, false, 6, -1, 1); // dother in y's shape: not reduced
    CHECK_EQ(call(opgrad_MulBackward, &a), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_MulBackward: dother (params[5]) has shape [4,3] but other has [3]");
    args_free(&a);

    // an aclnn refusal comes back with its status and its message, prefixed
    static const int64_t fx[] = {6, 13}, fb[] = {12}, fs[] = {1};
    memset(&a, 0, sizeof a);
    aot_arg(&a, 0, fx, 2, ACL_FLOAT, false, 1, -1, 1);
    aot_arg(&a, 1, fb, 1, ACL_FLOAT, false, 2, -1, 1);
    aot_arg(&a, 2, fs, 1, ACL_FLOAT, false, 3, -1, 1);
    aot_arg(&a, 3, fx, 2, ACL_FLOAT, false, 4, -1, 1);
    CHECK_EQ(call(opgrad_FusedAddScale, &a), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_FusedAddScale: aclnnFusedAddScaleGetWorkspaceSize: bias has shape [12]");
    args_free(&a);
    // forward dtypes that aclnn refuses: y in float16 from float32 inputs is fine (a cast), but
    // a float32 y of Mish from float16 x is not (Mish's out has self's dtype)
    memset(&a, 0, sizeof a);
    aot_arg(&a, 0, x, 2, ACL_FLOAT16, false, 1, -1, 1);
    aot_arg(&a, 1, x, 2, ACL_FLOAT, false, 2, -1, 1);
    CHECK_EQ(call(opgrad_Mish, &a), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("opgrad_Mish: aclnnMishGetWorkspaceSize:");
    args_free(&a);
}

/* ---- exported from the shared library ---------------------------------------------------------
 */

#ifndef OPGRAD_SHARED_LIB
#error "OPGRAD_SHARED_LIB (the built libopgrad.so) must be defined by tests/CMakeLists.txt"
#endif

// Every entry point the list declares has a case: hand-written above, or derived for a standard
// pair (an AOT operator of another shape needs its reference aclnn call written here).
static void test_every_list_entry_has_a_case(void) {
    static const char *const names[] = {
#define X(n) "opgrad_" #n,
#include "ops/ops.inc"
#undef X
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        bool found = false;
        for (int c = 0; c < NCASES; c++) found = found || !strcmp(g_cases[c].sym, names[i]);
        CHECKF(found, "%s (an AOT operator of src/ops/ops.inc) has no case in this test", names[i]);
    }
    CHECK_EQ(sizeof names / sizeof names[0], NCASES);
}

static void test_exported_from_shared_library(void) {
    void *h = dlopen(OPGRAD_SHARED_LIB, RTLD_NOW | RTLD_LOCAL);
    CHECKF(h != NULL, "dlopen(%s): %s", OPGRAD_SHARED_LIB, dlerror());
    if (!h) return;
    static const char *const names[] = {
#define X(n) "opgrad_" #n,
#include "ops/ops.inc"
#undef X
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        CHECKF(dlsym(h, names[i]) != NULL, "%s is not exported", names[i]);
    CHECK(dlsym(h, "aot_call") == NULL); // internals stay hidden
    CHECK(dlsym(h, "opgrad_debug_grads_log") != NULL && dlsym(h, "opgrad_debug_grads_enabled"));
    // a call through the shared library: bitwise the static library's result
    opgrad_aot_fn mish = NULL, mish_b = NULL;
    void *sym = dlsym(h, "opgrad_Mish");
    memcpy(&mish, &sym, sizeof mish);
    sym = dlsym(h, "opgrad_MishBackward");
    memcpy(&mish_b, &sym, sizeof mish_b);
    const char *(*errmsg)(void) = NULL;
    sym = dlsym(h, "aclGetRecentErrMsg");
    memcpy(&errmsg, &sym, sizeof errmsg);
    CHECK(mish && mish_b && errmsg);
    if (mish && mish_b && errmsg) {
        static const int64_t x[] = {3, 50};
        for (int d = 0; d < NDTS; d++) {
            argset a, b;
            build(&CASES[1], &a, DTS[d], x, 2, DTS[d], 77); // MishBackward params
            build(&CASES[1], &b, DTS[d], x, 2, DTS[d], 77);
            CHECK_EQ(mish_b(a.n, a.p, a.nd, a.sh, a.dt, NULL, NULL), 0);
            CHECK_EQ(call(opgrad_MishBackward, &b), 0);
            CHECK(memcmp(a.p[3], b.p[3], bytes_of(&a, 3)) == 0);
            CHECK_EQ(mish(2, a.p, a.nd, a.sh, a.dt, NULL, NULL), 0); // x -> y
            CHECK_EQ(opgrad_Mish(2, b.p, b.nd, b.sh, b.dt, NULL, NULL), 0);
            CHECK(memcmp(a.p[1], b.p[1], bytes_of(&a, 1)) == 0);
            a.dt[0] = "int8";
            CHECK(mish(2, a.p, a.nd, a.sh, a.dt, NULL, NULL) != 0);
            CHECKF(strstr(errmsg(), "opgrad_Mish: x (params[0]) has dtype \"int8\"") != NULL,
                   "shared library message \"%s\"", errmsg());
            args_free(&a);
            args_free(&b);
        }
    }
    // No dlclose: this second copy of the runtime keeps process-lifetime state (registries,
    // thread-local error buffers) reachable from its globals; unmapping it would turn that state
    // into leaks that LeakSanitizer reports against an unknown module.
}

int main(void) {
    // the attributes as the entry points pass them: DOUBLE scalars (a float64 operation takes
    // slope 0.01 unrounded; an fp32 one rounds it)
    double zero = 0.0, one = 1.0, twenty = 20.0, slope = 0.01;
    s_zero = aclCreateScalar(&zero, ACL_DOUBLE);
    s_one = aclCreateScalar(&one, ACL_DOUBLE);
    s_twenty = aclCreateScalar(&twenty, ACL_DOUBLE);
    s_slope = aclCreateScalar(&slope, ACL_DOUBLE);
    collect_cases();
    RUN(test_every_entry_bitwise);
    RUN(test_zero_dim_empty_and_rank8);
    RUN(test_mixed_precision_dy);
    RUN(test_broadcast_gradients_reduced);
    RUN(test_errors);
    RUN(test_every_list_entry_has_a_case);
    RUN(test_exported_from_shared_library);
    aclDestroyScalar(s_zero);
    aclDestroyScalar(s_one);
    aclDestroyScalar(s_twenty);
    aclDestroyScalar(s_slope);
    return test_summary();
}
