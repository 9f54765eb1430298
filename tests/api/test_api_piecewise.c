/* API-level tests of the piecewise family's two-phase calls: aclnnRelu, aclnnInplaceRelu,
 * aclnnThresholdBackward, aclnnLeakyRelu, aclnnInplaceLeakyRelu, aclnnLeakyReluBackward,
 * aclnnHardswish, aclnnInplaceHardswish, aclnnHardswishBackward, aclnnElu, aclnnInplaceElu,
 * aclnnEluBackward.
 *
 * Every status path of every operator, with the status AND the text of aclGetRecentErrMsg()
 * naming the argument and the rule: NULL tensors, scalars and out-pointers (161001); dtypes
 * (including those aclnn accepts but opgrad does not implement), scalar dtypes, ranks (8 works,
 * 9 is rejected), shapes, broadcasting where ops-nn allows it and its refusal where it does not,
 * promotion and the output-dtype rules, selfIsResult / isResult with a negative attribute
 * (161002). And the valid calls: values (against check/ref_piecewise.h) on strided and offset
 * views, 0-d tensors, empty tensors (workspace 0, phase 2 a no-op), the in-place forms and
 * outputs aliasing an input, scalar attributes of several dtypes, ELU's saturated attributes. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_elu.h"
#include "aclnnop/aclnn_elu_backward.h"
#include "aclnnop/aclnn_hardsigmoid.h"
#include "aclnnop/aclnn_hardsigmoid_backward.h"
#include "aclnnop/aclnn_hardswish.h"
#include "aclnnop/aclnn_hardswish_backward.h"
#include "aclnnop/aclnn_leaky_relu.h"
#include "aclnnop/aclnn_leaky_relu_backward.h"
#include "aclnnop/aclnn_relu.h"
#include "aclnnop/aclnn_threshold_backward.h"
#include "check/ref_piecewise.h"
#include "opgrad/opgrad.h"
#include "test.h"
#include "testutil.h"

/* ---- tensors over their own storage -------------------------------------------------------- */

typedef struct tview {
    aclTensor *t;
    void *buf;
    aclDataType dt;
    int ndim;
    int64_t dims[16], strides[16], offset;
} tview;

// A tensor with explicit strides/offset (NULL: contiguous) over a 1-D storage just big enough.
static tview tv_make(const int64_t *dims, int ndim, aclDataType dt, const int64_t *strides,
                     int64_t offset) {
    tview v = {.dt = dt, .ndim = ndim, .offset = offset};
    int64_t s = 1, maxoff = offset;
    bool empty = false;
    for (int d = ndim - 1; d >= 0; d--) {
        v.dims[d] = dims[d];
        v.strides[d] = strides ? strides[d] : s;
        s *= dims[d] > 0 ? dims[d] : 1;
        empty |= dims[d] == 0;
    }
    if (!empty)
        for (int d = 0; d < ndim; d++) maxoff += v.strides[d] * (dims[d] - 1);
    int64_t storage = maxoff + 1;
    size_t bytes = (size_t)storage * aclDataTypeSize(dt);
    if (aclrtMalloc(&v.buf, bytes ? bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return v;
    memset(v.buf, 0, bytes);
    int64_t sd[1] = {storage};
    v.t = aclCreateTensor(dims, (uint64_t)ndim, dt, v.strides, offset, ACL_FORMAT_ND, sd, 1, v.buf);
    return v;
}

static tview tv(const int64_t *dims, int ndim, aclDataType dt) {
    return tv_make(dims, ndim, dt, NULL, 0);
}

static void tv_free(tview *v) {
    if (v->t) aclDestroyTensor(v->t);
    if (v->buf) aclrtFree(v->buf);
    v->t = NULL, v->buf = NULL;
}

static int64_t tv_numel(const tview *v) {
    int64_t n = 1;
    for (int d = 0; d < v->ndim; d++) n *= v->dims[d];
    return n;
}

// Storage position of logical (row-major) element i.
static int64_t tv_pos(const tview *v, int64_t i) {
    int64_t pos = v->offset;
    for (int d = v->ndim - 1; d >= 0; d--) {
        pos += (i % v->dims[d]) * v->strides[d];
        i /= v->dims[d];
    }
    return pos;
}

static void tv_set(tview *v, int64_t i, double x) { test_store(v->buf, tv_pos(v, i), v->dt, x); }
static double tv_get(const tview *v, int64_t i) { return test_load(v->buf, tv_pos(v, i), v->dt); }

// Fills a view with values from a fixed list (both signs, both sides of +-3, zero).
static const double VALS[] = {-4.5, -3.25, -2.0, -1.5, -0.75, -0.125,
                              0.0,  0.375, 1.0,  2.5,  3.5,   7.0};
enum { NVALS = sizeof VALS / sizeof VALS[0] };
static void tv_fill(tview *v, int salt) {
    for (int64_t i = 0; i < tv_numel(v); i++) tv_set(v, i, VALS[(i * 5 + salt) % NVALS]);
}

static aclScalar *fs(float v) { return aclCreateScalar(&v, ACL_FLOAT); }

/* ---- the operators, uniformly ------------------------------------------------------------- */

typedef enum { K_UNARY, K_INPLACE, K_BINARY } kind;

typedef aclnnStatus (*p1_fn)(const aclTensor *g, const aclTensor *x, const aclTensor *out,
                             aclScalar *const *s, uint64_t *ws, aclOpExecutor **e);

typedef struct apiop {
    const char *name;
    kind k;
    const char *tnames[3]; // tensor arguments: unary {self, out}; in place {selfRef};
                           // binary {gradOutput, self, out}
    int nscalars;
    const char *snames[3];
    float sdefault[3];
    bool broadcast;                 // binary: the inputs broadcast
    bool out_same_dtype;            // out must have self's dtype
    unsigned long long aclnn_extra; // dtypes aclnn accepts that opgrad rejects with a note
    p1_fn p1;
    test_phase2_fn p2;
    double (*ref)(const struct apiop *op, double g, double x);
} apiop;

// (void)a, (void)b, ... for up to three arguments
#define UNUSED_1(a) (void)(a)
#define UNUSED_2(a, b) ((void)(a), (void)(b))
#define UNUSED_3(a, b, c) ((void)(a), (void)(b), (void)(c))
#define UNUSED_PICK(_1, _2, _3, NAME, ...) NAME
#define UNUSED_ARGS(...) UNUSED_PICK(__VA_ARGS__, UNUSED_3, UNUSED_2, UNUSED_1, unused)(__VA_ARGS__)

static aclnnStatus p1_relu(const aclTensor *g, const aclTensor *x, const aclTensor *o,
                           aclScalar *const *s, uint64_t *ws, aclOpExecutor **e) {
    UNUSED_ARGS(g, s);
    return aclnnReluGetWorkspaceSize(x, o, ws, e);
}
static aclnnStatus p1_inplace_relu(const aclTensor *g, const aclTensor *x, const aclTensor *o,
                                   aclScalar *const *s, uint64_t *ws, aclOpExecutor **e) {
    UNUSED_ARGS(g, o, s);
    return aclnnInplaceReluGetWorkspaceSize((aclTensor *)x, ws, e);
}
static aclnnStatus p1_threshold(const aclTensor *g, const aclTensor *x, const aclTensor *o,
                                aclScalar *const *s, uint64_t *ws, aclOpExecutor **e) {
    return aclnnThresholdBackwardGetWorkspaceSize(g, x, s[0], (aclTensor *)o, ws, e);
}
static aclnnStatus p1_leaky(const aclTensor *g, const aclTensor *x, const aclTensor *o,
                            aclScalar *const *s, uint64_t *ws, aclOpExecutor **e) {
    UNUSED_ARGS(g);
    return aclnnLeakyReluGetWorkspaceSize(x, s[0], (aclTensor *)o, ws, e);
}
static aclnnStatus p1_inplace_leaky(const aclTensor *g, const aclTensor *x, const aclTensor *o,
                                    aclScalar *const *s, uint64_t *ws, aclOpExecutor **e) {
    UNUSED_ARGS(g, o);
    return aclnnInplaceLeakyReluGetWorkspaceSize((aclTensor *)x, s[0], ws, e);
}
static aclnnStatus p1_leaky_bwd(const aclTensor *g, const aclTensor *x, const aclTensor *o,
                                aclScalar *const *s, uint64_t *ws, aclOpExecutor **e) {
    return aclnnLeakyReluBackwardGetWorkspaceSize(g, x, s[0], false, (aclTensor *)o, ws, e);
}
static aclnnStatus p1_hardswish(const aclTensor *g, const aclTensor *x, const aclTensor *o,
                                aclScalar *const *s, uint64_t *ws, aclOpExecutor **e) {
    UNUSED_ARGS(g, s);
    return aclnnHardswishGetWorkspaceSize(x, o, ws, e);
}
static aclnnStatus p1_inplace_hardswish(const aclTensor *g, const aclTensor *x, const aclTensor *o,
                                        aclScalar *const *s, uint64_t *ws, aclOpExecutor **e) {
    UNUSED_ARGS(g, o, s);
    return aclnnInplaceHardswishGetWorkspaceSize(x, ws, e);
}
static aclnnStatus p1_hardswish_bwd(const aclTensor *g, const aclTensor *x, const aclTensor *o,
                                    aclScalar *const *s, uint64_t *ws, aclOpExecutor **e) {
    UNUSED_ARGS(s);
    return aclnnHardswishBackwardGetWorkspaceSize(g, x, (aclTensor *)o, ws, e);
}
static aclnnStatus p1_elu(const aclTensor *g, const aclTensor *x, const aclTensor *o,
                          aclScalar *const *s, uint64_t *ws, aclOpExecutor **e) {
    UNUSED_ARGS(g);
    return aclnnEluGetWorkspaceSize(x, s[0], s[1], s[2], (aclTensor *)o, ws, e);
}
static aclnnStatus p1_inplace_elu(const aclTensor *g, const aclTensor *x, const aclTensor *o,
                                  aclScalar *const *s, uint64_t *ws, aclOpExecutor **e) {
    UNUSED_ARGS(g, o);
    return aclnnInplaceEluGetWorkspaceSize((aclTensor *)x, s[0], s[1], s[2], ws, e);
}
static aclnnStatus p1_elu_bwd(const aclTensor *g, const aclTensor *x, const aclTensor *o,
                              aclScalar *const *s, uint64_t *ws, aclOpExecutor **e) {
    return aclnnEluBackwardGetWorkspaceSize(g, s[0], s[1], s[2], false, x, (aclTensor *)o, ws, e);
}

static double r_relu(const apiop *op, double g, double x) {
    UNUSED_ARGS(op, g);
    return og_ref_relu(x);
}
static double r_threshold(const apiop *op, double g, double x) {
    return og_ref_threshold_grad(g, x, op->sdefault[0]);
}
static double r_leaky(const apiop *op, double g, double x) {
    UNUSED_ARGS(g);
    return og_ref_leaky_relu(x, op->sdefault[0]);
}
static double r_leaky_bwd(const apiop *op, double g, double x) {
    return og_ref_leaky_relu_grad(g, x, op->sdefault[0]);
}
static double r_hardswish(const apiop *op, double g, double x) {
    UNUSED_ARGS(op, g);
    return og_ref_hardswish(x);
}
static double r_hardswish_bwd(const apiop *op, double g, double x) {
    UNUSED_ARGS(op);
    return g * og_ref_hardswish_grad(x);
}
static double r_elu(const apiop *op, double g, double x) {
    UNUSED_ARGS(g);
    return og_ref_elu(x, op->sdefault[0], op->sdefault[1], op->sdefault[2]);
}
static double r_elu_bwd(const apiop *op, double g, double x) {
    return g * og_ref_elu_grad(x, op->sdefault[0], op->sdefault[1], op->sdefault[2]);
}

#define DT(x) (1ull << (x))
#define ELU_SCALARS                                                                                \
    3, {"alpha", "scale", "inputScale"}, { 1.5f, 2.0f, 0.5f }

static const apiop OPS[] = {
    {"aclnnRelu",
     K_UNARY,
     {"self", "out"},
     0,
     {0},
     {0},
     false,
     true,
     0,
     p1_relu,
     aclnnRelu,
     r_relu},
    {"aclnnInplaceRelu",
     K_INPLACE,
     {"selfRef"},
     0,
     {0},
     {0},
     false,
     true,
     0,
     p1_inplace_relu,
     aclnnInplaceRelu,
     r_relu},
    {"aclnnThresholdBackward",
     K_BINARY,
     {"gradOutput", "self", "out"},
     1,
     {"threshold"},
     {0.5f},
     true,
     true,
     0,
     p1_threshold,
     aclnnThresholdBackward,
     r_threshold},
    {"aclnnLeakyRelu",
     K_UNARY,
     {"self", "out"},
     1,
     {"negativeSlope"},
     {0.2f},
     false,
     false,
     DT(ACL_DOUBLE),
     p1_leaky,
     aclnnLeakyRelu,
     r_leaky},
    {"aclnnInplaceLeakyRelu",
     K_INPLACE,
     {"selfRef"},
     1,
     {"negativeSlope"},
     {0.2f},
     false,
     true,
     DT(ACL_DOUBLE),
     p1_inplace_leaky,
     aclnnInplaceLeakyRelu,
     r_leaky},
    {"aclnnLeakyReluBackward",
     K_BINARY,
     {"gradOutput", "self", "out"},
     1,
     {"negativeSlope"},
     {0.2f},
     true,
     false,
     DT(ACL_DOUBLE),
     p1_leaky_bwd,
     aclnnLeakyReluBackward,
     r_leaky_bwd},
    {"aclnnHardswish",
     K_UNARY,
     {"self", "out"},
     0,
     {0},
     {0},
     false,
     false,
     0,
     p1_hardswish,
     aclnnHardswish,
     r_hardswish},
    {"aclnnInplaceHardswish",
     K_INPLACE,
     {"self"},
     0,
     {0},
     {0},
     false,
     true,
     0,
     p1_inplace_hardswish,
     aclnnInplaceHardswish,
     r_hardswish},
    {"aclnnHardswishBackward",
     K_BINARY,
     {"gradOutput", "self", "out"},
     0,
     {0},
     {0},
     false,
     true,
     0,
     p1_hardswish_bwd,
     aclnnHardswishBackward,
     r_hardswish_bwd},
    {"aclnnElu",
     K_UNARY,
     {"self", "out"},
     ELU_SCALARS,
     false,
     false,
     DT(ACL_DOUBLE),
     p1_elu,
     aclnnElu,
     r_elu},
    {"aclnnInplaceElu",
     K_INPLACE,
     {"selfRef"},
     ELU_SCALARS,
     false,
     true,
     DT(ACL_DOUBLE),
     p1_inplace_elu,
     aclnnInplaceElu,
     r_elu},
    {"aclnnEluBackward",
     K_BINARY,
     {"gradOutput", "selfOrResult", "gradInput"},
     ELU_SCALARS,
     false,
     false,
     0,
     p1_elu_bwd,
     aclnnEluBackward,
     r_elu_bwd},
};
enum { NOPS = sizeof OPS / sizeof OPS[0] };

static int ntensors(const apiop *op) { return op->k == K_UNARY ? 2 : op->k == K_INPLACE ? 1 : 3; }

// Phase 1 of op with tensors t[] in signature order and its default scalars (or `s`).
static aclnnStatus call1(const apiop *op, tview *const *t, aclScalar *const *s, uint64_t *ws,
                         aclOpExecutor **e) {
    aclScalar *own[3] = {0};
    if (!s) {
        for (int k = 0; k < op->nscalars; k++) own[k] = fs(op->sdefault[k]);
        s = own;
    }
    const aclTensor *g = NULL, *x = NULL, *o = NULL;
    if (op->k == K_UNARY)
        x = t[0] ? t[0]->t : NULL, o = t[1] ? t[1]->t : NULL;
    else if (op->k == K_INPLACE)
        x = t[0] ? t[0]->t : NULL;
    else
        g = t[0] ? t[0]->t : NULL, x = t[1] ? t[1]->t : NULL, o = t[2] ? t[2]->t : NULL;
    aclnnStatus st = op->p1(g, x, o, s, ws, e);
    for (int k = 0; k < op->nscalars; k++) aclDestroyScalar(own[k]);
    return st;
}

// Phase 1 + phase 2.
static aclnnStatus run(const apiop *op, tview *const *t, aclScalar *const *s) {
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus st = call1(op, t, s, &ws, &e);
    if (st != ACLNN_SUCCESS) {
        fprintf(stderr, "    %s: %d %s\n", op->name, (int)st, aclGetRecentErrMsg());
        return st;
    }
    return test_run(st, ws, e, op->p2, NULL);
}

// Tensors for op: shapes of the inputs (in_dims for self / gradOutput's own shape) and output.
typedef struct tset {
    tview v[3];
    tview *p[3];
    int n;
} tset;

#define ts_make(s, op, dims, nd, dt) ts_init(&(s), op, dims, nd, dt)
static void ts_init(tset *s, const apiop *op, const int64_t *dims, int nd, aclDataType dt) {
    memset(s, 0, sizeof *s);
    s->n = ntensors(op);
    for (int k = 0; k < s->n; k++) s->v[k] = tv(dims, nd, dt), s->p[k] = &s->v[k];
}

static void ts_free(tset *s) {
    for (int k = 0; k < s->n; k++) tv_free(&s->v[k]);
}

// The input / output views of a tensor set (in place: both are the one tensor).
static tview *ts_x(const apiop *op, tset *s) { return op->k == K_BINARY ? &s->v[1] : &s->v[0]; }
static tview *ts_g(const apiop *op, tset *s) { return op->k == K_BINARY ? &s->v[0] : NULL; }
static tview *ts_out(const apiop *op, tset *s) {
    return op->k == K_UNARY ? &s->v[1] : op->k == K_INPLACE ? &s->v[0] : &s->v[2];
}

// Checks out against the reference at (g, x) values recorded before the call; 16-bit within
// one ulp, fp32 within one ulp.
static long check_values(const apiop *op, const tview *out, const double *g, const double *x,
                         int64_t n, const char *what) {
    long bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double want = test_round_to(out->dt, op->ref(op, g ? g[i] : 1.0, x[i]));
        double got = tv_get(out, i);
        double e = test_ulp_error(out->dt, got, want);
        if (!(e <= 1.0) && bad++ < 3)
            fprintf(stderr, "    %s %s: element %lld: x=%g g=%g got %.9g want %.9g\n", op->name,
                    what, (long long)i, x[i], g ? g[i] : 1.0, got, want);
    }
    return bad;
}

static const int64_t D23[] = {2, 3};

/* ---- NULL pointers: 161001 ---------------------------------------------------------------- */

static void test_null_tensor_each_argument(void) {
    for (int o = 0; o < NOPS; o++) {
        const apiop *op = &OPS[o];
        for (int arg = 0; arg < ntensors(op); arg++) {
            tset s;
            ts_make(s, op, D23, 2, ACL_FLOAT);
            tview *t[3] = {s.p[0], s.p[1], s.p[2]};
            t[arg] = NULL;
            uint64_t ws = 0;
            aclOpExecutor *e = NULL;
            CHECKF(call1(op, t, NULL, &ws, &e) == ACLNN_ERR_PARAM_NULLPTR, "%s: NULL %s accepted",
                   op->name, op->tnames[arg]);
            CHECK_MSG(op->name);
            CHECK_MSG(op->tnames[arg]);
            CHECK_MSG("NULL");
            ts_free(&s);
        }
    }
}

static void test_null_scalar_each_attribute(void) {
    for (int o = 0; o < NOPS; o++) {
        const apiop *op = &OPS[o];
        for (int a = 0; a < op->nscalars; a++) {
            tset s;
            ts_make(s, op, D23, 2, ACL_FLOAT);
            aclScalar *sc[3] = {0};
            for (int k = 0; k < op->nscalars; k++) sc[k] = k == a ? NULL : fs(op->sdefault[k]);
            uint64_t ws = 0;
            aclOpExecutor *e = NULL;
            CHECKF(call1(op, s.p, sc, &ws, &e) == ACLNN_ERR_PARAM_NULLPTR, "%s: NULL %s accepted",
                   op->name, op->snames[a]);
            CHECK_MSG(op->snames[a]);
            CHECK_MSG("NULL");
            for (int k = 0; k < op->nscalars; k++) aclDestroyScalar(sc[k]);
            ts_free(&s);
        }
    }
}

static void test_null_workspace_size_and_executor(void) {
    for (int o = 0; o < NOPS; o++) {
        const apiop *op = &OPS[o];
        tset s;
        ts_make(s, op, D23, 2, ACL_FLOAT);
        uint64_t ws = 0;
        aclOpExecutor *e = NULL;
        CHECKF(call1(op, s.p, NULL, NULL, &e) == ACLNN_ERR_PARAM_NULLPTR, "%s", op->name);
        CHECK_MSG("workspaceSize");
        CHECKF(call1(op, s.p, NULL, &ws, NULL) == ACLNN_ERR_PARAM_NULLPTR, "%s", op->name);
        CHECK_MSG("executor");
        // and phase 2 with a NULL executor
        CHECKF(op->p2(NULL, 0, NULL, NULL) == ACLNN_ERR_PARAM_NULLPTR, "%s phase 2", op->name);
        CHECK_MSG("executor");
        ts_free(&s);
    }
}

static void test_tensor_without_data(void) {
    for (int o = 0; o < NOPS; o++) {
        const apiop *op = &OPS[o];
        tset s;
        ts_make(s, op, D23, 2, ACL_FLOAT);
        tview *x = ts_x(op, &s);
        aclTensor *keep = x->t;
        x->t = aclCreateTensor(D23, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, D23, 2, NULL);
        uint64_t ws = 0;
        aclOpExecutor *e = NULL;
        CHECKF(call1(op, s.p, NULL, &ws, &e) == ACLNN_ERR_PARAM_NULLPTR, "%s", op->name);
        CHECK_MSG(op->k == K_BINARY ? op->tnames[1] : op->tnames[0]);
        aclDestroyTensor(x->t);
        x->t = keep;
        ts_free(&s);
    }
}

/* ---- dtypes: 161002 ------------------------------------------------------------------------- */

static void test_unsupported_dtype_each_argument(void) {
    // (Relu and ThresholdBackward take INT8 / UINT8 / INT32 / INT64: test_integer_relu)
    const aclDataType bad[] = {ACL_COMPLEX64, ACL_INT16, ACL_BOOL, ACL_UINT16};
    for (int o = 0; o < NOPS; o++) {
        const apiop *op = &OPS[o];
        for (int arg = 0; arg < ntensors(op); arg++)
            for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
                tset s;
                ts_make(s, op, D23, 2, ACL_FLOAT);
                tv_free(&s.v[arg]);
                s.v[arg] = tv(D23, 2, bad[b]);
                uint64_t ws = 0;
                aclOpExecutor *e = NULL;
                CHECKF(call1(op, s.p, NULL, &ws, &e) == ACLNN_ERR_PARAM_INVALID,
                       "%s: %s of dtype %d accepted", op->name, op->tnames[arg], (int)bad[b]);
                CHECK_MSG(op->tnames[arg]);
                CHECK_MSG("dtype");
                CHECK_MSG("opgrad supports float32, float16"); // (then Relu's integers)
                // a dtype aclnn lists for the operator gets a message saying opgrad lacks it
                if (op->aclnn_extra & DT(bad[b])) CHECK_MSG("aclnn also accepts");
                ts_free(&s);
            }
    }
}

/* ---- integer Relu / ThresholdBackward: exact ---------------------------------------------- */

static void iset(tview *v, int64_t i, int64_t x) {
    char *p = (char *)v->buf + tv_pos(v, i) * (int64_t)aclDataTypeSize(v->dt);
    switch (v->dt) {
    case ACL_INT8:
        *(int8_t *)p = (int8_t)x;
        break;
    case ACL_UINT8:
        *(uint8_t *)p = (uint8_t)x;
        break;
    case ACL_INT32:
        *(int32_t *)p = (int32_t)x;
        break;
    default:
        *(int64_t *)p = x;
        break;
    }
}

static int64_t iget(const tview *v, int64_t i) {
    const char *p = (const char *)v->buf + tv_pos(v, i) * (int64_t)aclDataTypeSize(v->dt);
    switch (v->dt) {
    case ACL_INT8:
        return *(const int8_t *)p;
    case ACL_UINT8:
        return *(const uint8_t *)p;
    case ACL_INT32:
        return *(const int32_t *)p;
    default:
        return *(const int64_t *)p;
    }
}

// Values at the ends of each dtype's range (beyond 2^24, where fp32 would round them), zero, +-1.
static int64_t int_value(aclDataType dt, int64_t i) {
    static const int64_t v64[] = {INT64_MIN, -(INT64_C(1) << 62) - 1, -16777217, -2, -1, 0, 1, 2,
                                  16777217,  (INT64_C(1) << 62) + 1,  INT64_MAX, 7};
    int64_t x = v64[i % 12];
    if (dt == ACL_INT8) return x == INT64_MIN ? -128 : x == INT64_MAX ? 127 : (int8_t)(x % 100);
    if (dt == ACL_UINT8) return x < 0 ? (x % 100) + 200 : x == INT64_MAX ? 255 : x % 250;
    if (dt == ACL_INT32)
        return x == INT64_MIN ? INT32_MIN : x == INT64_MAX ? INT32_MAX : (int32_t)(x % 2000000000);
    return x;
}

static void test_integer_relu(void) {
    const aclDataType dts[] = {ACL_INT8, ACL_UINT8, ACL_INT32, ACL_INT64};
    const int64_t d[2] = {3, 4}, tstr[2] = {1, 3}, drow[1] = {4};
    for (int k = 0; k < 4; k++) {
        aclDataType dt = dts[k];
        // Relu over a transposed view, into a contiguous out
        tview x = tv_make(d, 2, dt, tstr, 0), y = tv(d, 2, dt);
        for (int64_t i = 0; i < 12; i++) iset(&x, i, int_value(dt, i));
        aclnnStatus st;
        OP_RUN(st, aclnnReluGetWorkspaceSize(x.t, y.t, &ws_, &ex_), aclnnRelu);
        CHECK_EQ(st, ACLNN_SUCCESS);
        int bad = 0;
        for (int64_t i = 0; i < 12; i++) {
            int64_t v = iget(&x, i);
            bad += iget(&y, i) != (v > 0 ? v : 0);
        }
        CHECKF(bad == 0, "aclnnRelu dtype %d: %d wrong", (int)dt, bad);
        // in place
        OP_RUN(st, aclnnInplaceReluGetWorkspaceSize(x.t, &ws_, &ex_), aclnnInplaceRelu);
        CHECK_EQ(st, ACLNN_SUCCESS);
        bad = 0;
        for (int64_t i = 0; i < 12; i++) bad += iget(&x, i) != iget(&y, i);
        CHECKF(bad == 0, "aclnnInplaceRelu dtype %d: %d wrong", (int)dt, bad);
        // ThresholdBackward: self [4] broadcast against gradOutput [3, 4], several thresholds
        tview g = tv(d, 2, dt), s = tv(drow, 1, dt), o = tv(d, 2, dt);
        for (int64_t i = 0; i < 12; i++) iset(&g, i, int_value(dt, i + 5));
        const int64_t sv[4] = {-1, 0, 1, 2};
        for (int64_t i = 0; i < 4; i++) iset(&s, i, dt == ACL_UINT8 ? sv[i] + 1 : sv[i]);
        const float ths[] = {0.0f, 1.5f, -0.5f, 1.0f, NAN, 1e10f, -1e30f, 1e30f};
        for (int t = 0; t < 8; t++) {
            aclScalar *th = fs(ths[t]);
            OP_RUN(st, aclnnThresholdBackwardGetWorkspaceSize(g.t, s.t, th, o.t, &ws_, &ex_),
                   aclnnThresholdBackward);
            CHECK_EQ(st, ACLNN_SUCCESS);
            bad = 0;
            for (int64_t i = 0; i < 12; i++) {
                double xv = (double)iget(&s, i % 4); // exact for these small self values
                int64_t want = xv > (double)ths[t] ? iget(&g, i) : 0;
                bad += iget(&o, i) != want;
            }
            CHECKF(bad == 0, "aclnnThresholdBackward dtype %d threshold %g: %d wrong", (int)dt,
                   (double)ths[t], bad);
            aclDestroyScalar(th);
        }
        tv_free(&x), tv_free(&y), tv_free(&g), tv_free(&s), tv_free(&o);
    }
    // int64 self next to a large threshold: compared exactly (as fp32 both would round to t)
    {
        const int64_t n2[1] = {2}, t = (INT64_C(1) << 40) - (INT64_C(1) << 16); // a float
        tview g = tv(n2, 1, ACL_INT64), s = tv(n2, 1, ACL_INT64), o = tv(n2, 1, ACL_INT64);
        iset(&g, 0, 5), iset(&g, 1, 6);
        iset(&s, 0, t), iset(&s, 1, t + 1);
        aclScalar *th = fs((float)t);
        aclnnStatus st;
        OP_RUN(st, aclnnThresholdBackwardGetWorkspaceSize(g.t, s.t, th, o.t, &ws_, &ex_),
               aclnnThresholdBackward);
        CHECK_EQ(st, ACLNN_SUCCESS);
        CHECK_EQ(iget(&o, 0), 0);
        CHECK_EQ(iget(&o, 1), 6);
        aclDestroyScalar(th);
        tv_free(&g), tv_free(&s), tv_free(&o);
    }
    // 1 and 2 threads agree over several pool units; dtype rules: 161002 naming the argument
    {
        const int64_t big[1] = {100003};
        tview x = tv(big, 1, ACL_INT32), y1 = tv(big, 1, ACL_INT32), y2 = tv(big, 1, ACL_INT32);
        for (int64_t i = 0; i < big[0]; i++) iset(&x, i, (i * 2654435761u) % 4000001 - 2000000);
        int saved = opgrad_get_num_threads();
        aclnnStatus st;
        opgrad_set_num_threads(1);
        OP_RUN(st, aclnnReluGetWorkspaceSize(x.t, y1.t, &ws_, &ex_), aclnnRelu);
        opgrad_set_num_threads(2);
        OP_RUN(st, aclnnReluGetWorkspaceSize(x.t, y2.t, &ws_, &ex_), aclnnRelu);
        opgrad_set_num_threads(saved);
        CHECK(memcmp(y1.buf, y2.buf, sizeof(int32_t) * (size_t)big[0]) == 0);
        int bad = 0;
        for (int64_t i = 0; i < big[0]; i++)
            bad += iget(&y1, i) != (iget(&x, i) > 0 ? iget(&x, i) : 0);
        CHECKF(bad == 0, "%d wrong", bad);
        tv_free(&x), tv_free(&y1), tv_free(&y2);
    }
    const int64_t d23[2] = {2, 3};
    tview i32 = tv(d23, 2, ACL_INT32), i64 = tv(d23, 2, ACL_INT64), f = tv(d23, 2, ACL_FLOAT),
          i16 = tv(d23, 2, ACL_INT16);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclScalar *zero = fs(0.0f);
    CHECK_EQ(aclnnReluGetWorkspaceSize(i32.t, i64.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("must be equal");
    CHECK_EQ(aclnnReluGetWorkspaceSize(i32.t, f.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out");
    CHECK_EQ(aclnnReluGetWorkspaceSize(i16.t, i16.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("int16");
    CHECK_MSG("opgrad supports float32, float16, bfloat16, int8, int32, uint8 and int64");
    CHECK_EQ(aclnnThresholdBackwardGetWorkspaceSize(i32.t, f.t, zero, f.t, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("gradOutput");
    CHECK_EQ(aclnnThresholdBackwardGetWorkspaceSize(i32.t, i32.t, zero, i64.t, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out");
    aclDestroyScalar(zero);
    tv_free(&i32), tv_free(&i64), tv_free(&f), tv_free(&i16);
}

/* ---- integer Hardsigmoid: INT32 as ops-nn's kernel computes it --------------------------------
 */
// x converted to fp32, x / 6 + 0.5 clamped to [0, 1], truncated: 1 exactly when x >= 3.
static void test_integer_hardsigmoid(void) {
    const int64_t d[2] = {4, 6}, tstr[2] = {1, 4};
    tview x = tv_make(d, 2, ACL_INT32, tstr, 0), y = tv(d, 2, ACL_INT32);
    const int64_t vals[24] = {INT32_MIN, -2147483647, -1000,      -7,        -4, -3, -2, -1,
                              0,         1,           2,          3,         4,  5,  6,  7,
                              100,       16777217,    2147483646, INT32_MAX, -6, 8,  -5, 9};
    for (int64_t i = 0; i < 24; i++) iset(&x, i, vals[i]);
    aclnnStatus st;
    OP_RUN(st, aclnnHardsigmoidGetWorkspaceSize(x.t, y.t, &ws_, &ex_), aclnnHardsigmoid);
    CHECK_EQ(st, ACLNN_SUCCESS);
    int bad = 0;
    for (int64_t i = 0; i < 24; i++) {
        // the fp32 computation of ops-nn's kernel, step by step (no fused multiply-add)
        volatile float xf = (float)iget(&x, i), lin = xf * (1.0f / 6.0f);
        lin = lin + 0.5f;
        float c = lin < 0 ? 0 : lin > 1 ? 1 : lin;
        bad += iget(&y, i) != (int64_t)c;
        bad += iget(&y, i) != (iget(&x, i) >= 3);
    }
    CHECKF(bad == 0, "aclnnHardsigmoid INT32: %d wrong", bad);
    OP_RUN(st, aclnnInplaceHardsigmoidGetWorkspaceSize(x.t, &ws_, &ex_), aclnnInplaceHardsigmoid);
    CHECK_EQ(st, ACLNN_SUCCESS);
    bad = 0;
    for (int64_t i = 0; i < 24; i++) bad += iget(&x, i) != iget(&y, i);
    CHECKF(bad == 0, "aclnnInplaceHardsigmoid INT32: %d wrong", bad);
    // the other integer dtypes are not upstream's; out must have self's dtype
    tview i8 = tv(d, 2, ACL_INT8), f = tv(d, 2, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnHardsigmoidGetWorkspaceSize(i8.t, i8.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("int8");
    CHECK_EQ(aclnnHardsigmoidGetWorkspaceSize(y.t, f.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out");
    tv_free(&x), tv_free(&y), tv_free(&i8), tv_free(&f);
}

// Selects ISA level `isa` when this CPU has it, with n floats of out poisoned (NaN bits) first.
static bool use_isa(int isa, float *out, int n) {
    if (!test_isa_available(isa)) return false;
    opgrad_set_max_isa((opgrad_isa)isa);
    memset(out, 0xff, (size_t)n * sizeof(float));
    return true;
}

/* ---- fp32 Hardsigmoid: (x + 3) / 6 correctly rounded, on every ISA ---------------------------
 */
// The correctly rounded float of (x + 3) / 6 for -3 < x < 3: x + 3 is exact in double (below
// 2^-29 in magnitude the result is 0.5 anyway), the quotient is rounded to double once, and
// only a double that lands exactly on a midpoint between floats needs the sign of the exact
// remainder (fma(d, 6, -s) is the exact 6d - s rounded once, so its sign is exact).
static float hardsigmoid_correctly_rounded(float x) {
    if (fabsf(x) < 0x1p-29f) return 0.5f;
    double s = (double)x + 3.0, d = s / 6.0;
    float f = (float)d, below = nextafterf(f, -INFINITY), above = nextafterf(f, INFINITY);
    double mid_below = ((double)below + f) / 2, mid_above = ((double)above + f) / 2;
    if (d != mid_below && d != mid_above) return f;
    double r = fma(d, 6.0, -s);
    if (r == 0) return f; // an exact tie: the conversion's ties-to-even holds
    if (d == mid_above) return r > 0 ? f : above;
    return r > 0 ? below : f;
}

// Every ISA level must give the correctly rounded quotient in (-3, 3) (a sweep of the 2^31
// floats there with a stride that reaches both ends and the subnormals, the joins' neighbours
// and the exact midpoints x = 3k 2^-24), 1 and +0 from the joins outwards, and NaN for NaN.
static void test_hardsigmoid_forward_correctly_rounded(void) {
    enum { STRIDE = 4093, NSWEEP = 2 * (0x40400000 / STRIDE + 1), NSPECIAL = 18 };
    enum { N = NSWEEP + NSPECIAL };
    const int64_t d[1] = {N};
    tview x = tv(d, 1, ACL_FLOAT), out = tv(d, 1, ACL_FLOAT);
    float *xv = x.buf, *ov = out.buf;
    const float specials[NSPECIAL] = {3.0f,
                                      -3.0f,
                                      nextafterf(3.0f, 0),
                                      nextafterf(-3.0f, 0),
                                      nextafterf(3.0f, 4),
                                      nextafterf(-3.0f, -4),
                                      -3 + 0x1p-22f,
                                      3 * 0x1p-24f,
                                      -9 * 0x1p-24f,
                                      0x1p-149f,
                                      -0.0f,
                                      0x1p-30f,
                                      3.25f,
                                      -3.25f,
                                      INFINITY,
                                      -INFINITY,
                                      1e30f,
                                      NAN};
    int n = 0;
    for (int i = 0; i < NSPECIAL; i++) xv[n++] = specials[i];
    for (uint32_t sign = 0; sign < 2; sign++)
        for (uint32_t b = 0; b < 0x40400000u; b += STRIDE) {
            uint32_t bits = b | sign << 31;
            memcpy(&xv[n++], &bits, 4);
        }
    CHECK(n == N);
    int runs = 0;
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!use_isa(isa, ov, N)) continue;
        aclnnStatus st;
        OP_RUN(st, aclnnHardsigmoidGetWorkspaceSize(x.t, out.t, &ws_, &ex_), aclnnHardsigmoid);
        CHECK_EQ(st, ACLNN_SUCCESS);
        int bad = 0;
        for (int i = 0; i < N; i++) {
            float v = xv[i];
            float want = isnan(v)  ? v
                         : v >= 3  ? 1.0f
                         : v <= -3 ? 0.0f
                                   : hardsigmoid_correctly_rounded(v);
            bool ok = isnan(want) ? isnan(ov[i]) : memcmp(&ov[i], &want, 4) == 0;
            if (!ok && bad++ < 3)
                fprintf(stderr, "    %s: x %a: got %a want %a\n", opgrad_isa_name((opgrad_isa)isa),
                        v, ov[i], want);
        }
        CHECKF(bad == 0, "aclnnHardsigmoid fp32 (%s): %d not (x + 3) / 6 correctly rounded",
               opgrad_isa_name((opgrad_isa)isa), bad);
        runs++;
    }
    opgrad_set_max_isa(OPGRAD_ISA_COUNT);
    CHECK(runs >= 2); // scalar and the machine's own level at least
    tv_free(&x), tv_free(&out);
}

/* ---- fp32 HardsigmoidBackward: g / 6 correctly rounded, on every ISA ------------------------
 */
// The kernel divides in float on AVX2 and scalar and rounds a double product on AVX-512: each
// must give the correctly rounded quotient (C's float division) for any g, subnormal, huge and
// infinite ones included, and +0 where x is outside (-3, 3).
static void test_hardsigmoid_backward_correctly_rounded(void) {
    enum { N = 4099 }; // past a whole number of vectors: the tail too
    const int64_t d[1] = {N};
    tview g = tv(d, 1, ACL_FLOAT), x = tv(d, 1, ACL_FLOAT), out = tv(d, 1, ACL_FLOAT);
    float *gv = g.buf, *xv = x.buf, *ov = out.buf;
    test_rng r;
    test_rng_seed(&r, 66);
    for (int i = 0; i < N; i++) {
        uint32_t bits = (uint32_t)test_rng_next(&r);
        if ((bits & 0x7f800000u) == 0x7f800000u) bits &= ~0x00800000u; // no NaN (nor inf) here
        memcpy(&gv[i], &bits, 4);
        xv[i] = (float)(((int)(test_rng_next(&r) % 1400) - 700) / 100.0); // [-7, 6.99]
    }
    gv[0] = INFINITY, gv[1] = -INFINITY, gv[2] = 0x1p-149f, gv[3] = -0x1.fffffep127f;
    xv[0] = xv[1] = xv[2] = xv[3] = 0.5f;
    int runs = 0;
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!use_isa(isa, ov, N)) continue;
        aclnnStatus st;
        OP_RUN(st, aclnnHardsigmoidBackwardGetWorkspaceSize(g.t, x.t, out.t, &ws_, &ex_),
               aclnnHardsigmoidBackward);
        CHECK_EQ(st, ACLNN_SUCCESS);
        int bad = 0;
        for (int i = 0; i < N; i++) {
            float want = xv[i] > -3.0f && xv[i] < 3.0f ? gv[i] / 6.0f : 0.0f;
            if (memcmp(&ov[i], &want, 4) != 0 && bad++ < 3)
                fprintf(stderr, "    %s: g %a x %g: got %a want %a\n",
                        opgrad_isa_name((opgrad_isa)isa), gv[i], xv[i], ov[i], want);
        }
        CHECKF(bad == 0, "aclnnHardsigmoidBackward fp32 (%s): %d not g / 6 correctly rounded",
               opgrad_isa_name((opgrad_isa)isa), bad);
        runs++;
    }
    opgrad_set_max_isa(OPGRAD_ISA_COUNT);
    CHECK(runs >= 2); // scalar and the machine's own level at least
    tv_free(&g), tv_free(&x), tv_free(&out);
}

static void test_scalar_dtype_not_castable_to_float(void) {
    for (int o = 0; o < NOPS; o++) {
        const apiop *op = &OPS[o];
        for (int a = 0; a < op->nscalars; a++) {
            tset s;
            ts_make(s, op, D23, 2, ACL_FLOAT);
            float cplx[2] = {1.0f, 0.0f};
            aclScalar *sc[3];
            for (int k = 0; k < op->nscalars; k++)
                sc[k] = k == a ? aclCreateScalar(cplx, ACL_COMPLEX64) : fs(op->sdefault[k]);
            CHECK(sc[a] != NULL);
            uint64_t ws = 0;
            aclOpExecutor *e = NULL;
            CHECKF(call1(op, s.p, sc, &ws, &e) == ACLNN_ERR_PARAM_INVALID,
                   "%s: complex %s accepted", op->name, op->snames[a]);
            CHECK_MSG(op->snames[a]);
            CHECK_MSG("complex64");
            for (int k = 0; k < op->nscalars; k++) aclDestroyScalar(sc[k]);
            ts_free(&s);
        }
    }
}

// negativeSlope of LeakyReluBackward: ops-nn's list (no UINT16/UINT32/UINT64)
static void test_leaky_backward_slope_dtype_list(void) {
    const apiop *op = &OPS[5];
    tset s;
    ts_make(s, op, D23, 2, ACL_FLOAT);
    uint16_t u16 = 1;
    aclScalar *bad = aclCreateScalar(&u16, ACL_UINT16);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(call1(op, s.p, &bad, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("negativeSlope");
    CHECK_MSG("uint16");
    aclDestroyScalar(bad);
    int8_t i8 = -1;
    aclScalar *ok = aclCreateScalar(&i8, ACL_INT8);
    tv_fill(&s.v[0], 1), tv_fill(&s.v[1], 2);
    CHECK_EQ(run(op, s.p, &ok), ACLNN_SUCCESS);
    for (int64_t i = 0; i < 6; i++) {
        double g = tv_get(&s.v[0], i), x = tv_get(&s.v[1], i);
        CHECK(tv_get(&s.v[2], i) == (x > 0 ? g : -g));
    }
    aclDestroyScalar(ok);
    ts_free(&s);
}

// Relu and ThresholdBackward: out has self's dtype; LeakyRelu, Hardswish, Elu: out has any
// floating dtype (the result is computed in self's dtype, then cast).
static void test_output_dtype_rules(void) {
    for (int o = 0; o < NOPS; o++) {
        const apiop *op = &OPS[o];
        if (op->k == K_INPLACE) continue;
        tset s;
        ts_make(s, op, D23, 2, ACL_FLOAT16);
        tview *out = ts_out(op, &s);
        tv_free(out);
        *out = tv(D23, 2, ACL_FLOAT);
        for (int k = 0; k < s.n; k++)
            if (&s.v[k] != out) tv_fill(&s.v[k], k);
        uint64_t ws = 0;
        aclOpExecutor *e = NULL;
        aclnnStatus st = call1(op, s.p, NULL, &ws, &e);
        if (op->out_same_dtype) {
            CHECKF(st == ACLNN_ERR_PARAM_INVALID, "%s: float16 self, float32 out accepted",
                   op->name);
            CHECK_MSG(op->k == K_BINARY ? op->tnames[2] : "out");
            CHECK_MSG("dtype");
        } else {
            CHECKF(st == ACLNN_SUCCESS, "%s: float16 -> float32 out refused", op->name);
            CHECK_EQ(test_run(st, ws, e, op->p2, NULL), ACLNN_SUCCESS);
            // computed in float16, then cast: the float32 out holds the float16 result
            for (int64_t i = 0; i < 6; i++) {
                double gv = ts_g(op, &s) ? tv_get(ts_g(op, &s), i) : 1.0;
                double xv = tv_get(ts_x(op, &s), i), got = tv_get(out, i);
                double want = test_round_to(ACL_FLOAT16, op->ref(op, gv, xv));
                CHECKF(test_round_to(ACL_FLOAT16, got) == got, "%s: %g is not a float16 value",
                       op->name, got);
                CHECKF(test_ulp_error(ACL_FLOAT16, got, want) <= 1.0, "%s: x=%g got %g want %g",
                       op->name, xv, got, want);
            }
        }
        ts_free(&s);
    }
}

/* ---- ranks and shapes: 161002 ------------------------------------------------------------- */

static void test_rank9_rejected_rank8_accepted(void) {
    const int64_t d9[9] = {1, 1, 1, 1, 1, 1, 1, 2, 1}, d8[8] = {1, 1, 1, 1, 1, 2, 1, 3};
    for (int o = 0; o < NOPS; o++) {
        const apiop *op = &OPS[o];
        for (int arg = 0; arg < ntensors(op); arg++) {
            tset s;
            ts_make(s, op, d9, 9, ACL_FLOAT);
            for (int k = 0; k < s.n; k++)
                if (k != arg) tv_free(&s.v[k]), s.v[k] = tv(d8, 8, ACL_FLOAT);
            uint64_t ws = 0;
            aclOpExecutor *e = NULL;
            CHECKF(call1(op, s.p, NULL, &ws, &e) == ACLNN_ERR_PARAM_INVALID,
                   "%s: rank-9 %s accepted", op->name, op->tnames[arg]);
            CHECK_MSG(op->tnames[arg]);
            CHECK_MSG("rank 9");
            ts_free(&s);
        }
        tset s;
        ts_make(s, op, d8, 8, ACL_FLOAT);
        for (int k = 0; k < s.n; k++) tv_fill(&s.v[k], k);
        double g[6], x[6];
        for (int64_t i = 0; i < 6; i++) {
            g[i] = ts_g(op, &s) ? tv_get(ts_g(op, &s), i) : 1.0;
            x[i] = tv_get(ts_x(op, &s), i);
        }
        CHECKF(run(op, s.p, NULL) == ACLNN_SUCCESS, "%s: rank 8 refused", op->name);
        CHECK_EQ(check_values(op, ts_out(op, &s), g, x, 6, "rank 8"), 0);
        ts_free(&s);
    }
}

static void test_output_shape_mismatch(void) {
    const int64_t bad[][3] = {{3, 2}, {2, 3, 1}, {6}};
    const int nd[] = {2, 3, 1};
    for (int o = 0; o < NOPS; o++) {
        const apiop *op = &OPS[o];
        if (op->k == K_INPLACE) continue;
        for (int b = 0; b < 3; b++) {
            tset s;
            ts_make(s, op, D23, 2, ACL_FLOAT);
            tview *out = ts_out(op, &s);
            tv_free(out);
            *out = tv(bad[b], nd[b], ACL_FLOAT);
            uint64_t ws = 0;
            aclOpExecutor *e = NULL;
            CHECKF(call1(op, s.p, NULL, &ws, &e) == ACLNN_ERR_PARAM_INVALID,
                   "%s: out shape %d accepted", op->name, b);
            CHECK_MSG(op->tnames[op->k == K_BINARY ? 2 : 1]);
            CHECK_MSG("shape");
            ts_free(&s);
        }
    }
}

// ThresholdBackward and LeakyReluBackward broadcast gradOutput and self (ops-nn's
// OP_CHECK_BROADCAST_AND_INFER_SHAPE); HardswishBackward and EluBackward want equal shapes.
static void test_backward_broadcasting(void) {
    const int64_t row[] = {3}, col[] = {2, 1}, other[] = {4};
    for (int o = 0; o < NOPS; o++) {
        const apiop *op = &OPS[o];
        if (op->k != K_BINARY) continue;
        for (int which = 0; which < 2; which++) { // which input is [3]; the other [2,3]
            tview t0 = tv(which == 0 ? row : D23, which == 0 ? 1 : 2, ACL_FLOAT);
            tview t1 = tv(which == 1 ? row : D23, which == 1 ? 1 : 2, ACL_FLOAT);
            tview out = tv(D23, 2, ACL_FLOAT);
            tv_fill(&t0, 1), tv_fill(&t1, 4);
            tview *t[3] = {&t0, &t1, &out};
            uint64_t ws = 0;
            aclOpExecutor *e = NULL;
            aclnnStatus st = call1(op, t, NULL, &ws, &e);
            if (op->broadcast) {
                CHECKF(st == ACLNN_SUCCESS, "%s: broadcast %d refused: %s", op->name, which,
                       aclGetRecentErrMsg());
                CHECK_EQ(test_run(st, ws, e, op->p2, NULL), ACLNN_SUCCESS);
                double g[6], x[6];
                for (int64_t i = 0; i < 6; i++) {
                    g[i] = tv_get(&t0, which == 0 ? i % 3 : i);
                    x[i] = tv_get(&t1, which == 1 ? i % 3 : i);
                }
                CHECK_EQ(check_values(op, &out, g, x, 6, "broadcast"), 0);
            } else {
                CHECKF(st == ACLNN_ERR_PARAM_INVALID, "%s: broadcast %d accepted", op->name, which);
                CHECK_MSG("shape");
                CHECK_MSG("must be equal");
            }
            tv_free(&t0), tv_free(&t1), tv_free(&out);
        }
        // [2,1] with [3] broadcasts to [2,3] (both inputs expand)
        tview g = tv(col, 2, ACL_FLOAT), x = tv(row, 1, ACL_FLOAT), out = tv(D23, 2, ACL_FLOAT);
        tview *t[3] = {&g, &x, &out};
        uint64_t ws = 0;
        aclOpExecutor *e = NULL;
        CHECKF(call1(op, t, NULL, &ws, &e) ==
                   (op->broadcast ? ACLNN_SUCCESS : ACLNN_ERR_PARAM_INVALID),
               "%s: [2,1] x [3]", op->name);
        if (op->broadcast) CHECK_EQ(test_run(ACLNN_SUCCESS, ws, e, op->p2, NULL), ACLNN_SUCCESS);
        tv_free(&g), tv_free(&x);
        // not broadcastable: [4] with [2,3]
        tview g4 = tv(other, 1, ACL_FLOAT), x23 = tv(D23, 2, ACL_FLOAT);
        tview *t2[3] = {&g4, &x23, &out};
        CHECKF(call1(op, t2, NULL, &ws, &e) == ACLNN_ERR_PARAM_INVALID, "%s: [4] x [2,3]",
               op->name);
        CHECK_MSG(op->broadcast ? "broadcast" : "shape");
        tv_free(&g4), tv_free(&x23), tv_free(&out);
    }
}

// gradOutput and self may differ in floating dtype (ops-nn wants them equal except for
// LeakyReluBackward; opgrad promotes as PyTorch does): the result is computed in the promoted
// type and rounded once to out's dtype.
static void test_backward_promotion(void) {
    const aclDataType pairs[][3] = {{ACL_FLOAT, ACL_FLOAT16, ACL_FLOAT16},
                                    {ACL_BF16, ACL_FLOAT16, ACL_FLOAT16},
                                    {ACL_FLOAT16, ACL_FLOAT, ACL_FLOAT},
                                    {ACL_BF16, ACL_FLOAT, ACL_FLOAT}};
    for (int o = 0; o < NOPS; o++) {
        const apiop *op = &OPS[o];
        if (op->k != K_BINARY) continue;
        for (int p = 0; p < 4; p++) {
            tview g = tv(D23, 2, pairs[p][0]), x = tv(D23, 2, pairs[p][1]),
                  out = tv(D23, 2, pairs[p][2]);
            tv_fill(&g, 3), tv_fill(&x, 7);
            for (int64_t i = 0; i < 6; i++)
                tv_set(&g, i, tv_get(&g, i) * 1.0009765625); // not bf16-exact
            tview *t[3] = {&g, &x, &out};
            CHECKF(run(op, t, NULL) == ACLNN_SUCCESS, "%s: promotion %d refused", op->name, p);
            double gv[6], xv[6];
            for (int64_t i = 0; i < 6; i++) gv[i] = tv_get(&g, i), xv[i] = tv_get(&x, i);
            CHECK_EQ(check_values(op, &out, gv, xv, 6, "promoted"), 0);
            tv_free(&g), tv_free(&x), tv_free(&out);
        }
    }
}

/* ---- attribute rules ---------------------------------------------------------------------- */

static void test_leaky_self_is_result_negative_slope(void) {
    tview g = tv(D23, 2, ACL_FLOAT), y = tv(D23, 2, ACL_FLOAT), out = tv(D23, 2, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclScalar *neg = fs(-0.1f), *zero = fs(0.0f), *mzero = fs(-0.0f);
    CHECK_EQ(aclnnLeakyReluBackwardGetWorkspaceSize(g.t, y.t, neg, true, out.t, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("selfIsResult");
    CHECK_MSG("negativeSlope");
    // without selfIsResult a negative slope is fine; slope 0 and -0 are fine with it
    CHECK_EQ(aclnnLeakyReluBackwardGetWorkspaceSize(g.t, y.t, neg, false, out.t, &ws, &e),
             ACLNN_SUCCESS);
    CHECK_EQ(test_run(ACLNN_SUCCESS, ws, e, aclnnLeakyReluBackward, NULL), ACLNN_SUCCESS);
    tv_fill(&g, 1), tv_fill(&y, 2);
    CHECK_EQ(aclnnLeakyReluBackwardGetWorkspaceSize(g.t, y.t, zero, true, out.t, &ws, &e),
             ACLNN_SUCCESS);
    CHECK_EQ(test_run(ACLNN_SUCCESS, ws, e, aclnnLeakyReluBackward, NULL), ACLNN_SUCCESS);
    for (int64_t i = 0; i < 6; i++)
        CHECK(tv_get(&out, i) == (tv_get(&y, i) > 0 ? tv_get(&g, i) : 0.0));
    CHECK_EQ(aclnnLeakyReluBackwardGetWorkspaceSize(g.t, y.t, mzero, true, out.t, &ws, &e),
             ACLNN_SUCCESS);
    aclDestroyAclOpExecutor(e);
    aclDestroyScalar(neg), aclDestroyScalar(zero), aclDestroyScalar(mzero);
    tv_free(&g), tv_free(&y), tv_free(&out);
}

static void test_elu_is_result_negative_alpha(void) {
    tview g = tv(D23, 2, ACL_FLOAT), y = tv(D23, 2, ACL_FLOAT), out = tv(D23, 2, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclScalar *neg = fs(-1.0f), *one = fs(1.0f), *half = fs(0.5f);
    CHECK_EQ(aclnnEluBackwardGetWorkspaceSize(g.t, neg, one, one, true, y.t, out.t, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("isResult");
    CHECK_MSG("alpha");
    CHECK_EQ(aclnnEluBackwardGetWorkspaceSize(g.t, neg, one, one, false, y.t, out.t, &ws, &e),
             ACLNN_SUCCESS);
    CHECK_EQ(test_run(ACLNN_SUCCESS, ws, e, aclnnEluBackward, NULL), ACLNN_SUCCESS);
    // isResult: g * (y > 0 ? scale : inputScale (y + alpha scale))
    tv_fill(&g, 1), tv_fill(&y, 2);
    for (int64_t i = 0; i < 6; i++) tv_set(&y, i, fmax(tv_get(&y, i), -0.9));
    CHECK_EQ(aclnnEluBackwardGetWorkspaceSize(g.t, one, half, half, true, y.t, out.t, &ws, &e),
             ACLNN_SUCCESS);
    CHECK_EQ(test_run(ACLNN_SUCCESS, ws, e, aclnnEluBackward, NULL), ACLNN_SUCCESS);
    for (int64_t i = 0; i < 6; i++) {
        double gv = tv_get(&g, i), yv = tv_get(&y, i);
        double want = (float)(gv * og_ref_elu_grad_result(yv, 1.0, 0.5, 0.5));
        CHECKF(tv_get(&out, i) == want, "element %lld: %g, want %g", (long long)i, tv_get(&out, i),
               want);
    }
    aclDestroyScalar(neg), aclDestroyScalar(one), aclDestroyScalar(half);
    tv_free(&g), tv_free(&y), tv_free(&out);
}

// Scalars of any real dtype are converted to float (aclnn's ToFloat).
static void test_scalar_attribute_dtypes(void) {
    const int64_t d[] = {4};
    tview g = tv(d, 1, ACL_FLOAT), x = tv(d, 1, ACL_FLOAT), out = tv(d, 1, ACL_FLOAT);
    const double xs[] = {0.5, 1.0, 1.5, 2.5};
    for (int i = 0; i < 4; i++) tv_set(&g, i, 10 + i), tv_set(&x, i, xs[i]);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    // threshold as INT32 1, DOUBLE 1.5, FLOAT16 2, BOOL true (1)
    int32_t i32 = 1;
    double f64 = 1.5;
    uint16_t h = aclFloatToFloat16(2.0f);
    bool b = true;
    aclScalar *th[] = {aclCreateScalar(&i32, ACL_INT32), aclCreateScalar(&f64, ACL_DOUBLE),
                       aclCreateScalar(&h, ACL_FLOAT16), aclCreateScalar(&b, ACL_BOOL)};
    const double thv[] = {1, 1.5, 2, 1};
    for (int k = 0; k < 4; k++) {
        CHECK_EQ(aclnnThresholdBackwardGetWorkspaceSize(g.t, x.t, th[k], out.t, &ws, &e),
                 ACLNN_SUCCESS);
        CHECK_EQ(test_run(ACLNN_SUCCESS, ws, e, aclnnThresholdBackward, NULL), ACLNN_SUCCESS);
        for (int i = 0; i < 4; i++)
            CHECKF(tv_get(&out, i) == (xs[i] > thv[k] ? 10 + i : 0), "threshold %g element %d: %g",
                   thv[k], i, tv_get(&out, i));
        aclDestroyScalar(th[k]);
    }
    // negativeSlope as INT64 -2 and DOUBLE 0.25
    int64_t i64 = -2;
    aclScalar *sl = aclCreateScalar(&i64, ACL_INT64);
    tv_set(&x, 0, -1.5);
    CHECK_EQ(aclnnLeakyReluGetWorkspaceSize(x.t, sl, out.t, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(test_run(ACLNN_SUCCESS, ws, e, aclnnLeakyRelu, NULL), ACLNN_SUCCESS);
    CHECK(tv_get(&out, 0) == 3.0 && tv_get(&out, 1) == 1.0);
    aclDestroyScalar(sl);
    // ELU attributes as INT8 2 (alpha), DOUBLE 0.5 (scale), INT32 1 (inputScale)
    int8_t a8 = 2;
    double sc = 0.5;
    aclScalar *alpha = aclCreateScalar(&a8, ACL_INT8), *scale = aclCreateScalar(&sc, ACL_DOUBLE),
              *is = aclCreateScalar(&i32, ACL_INT32);
    CHECK_EQ(aclnnEluGetWorkspaceSize(x.t, alpha, scale, is, out.t, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(test_run(ACLNN_SUCCESS, ws, e, aclnnElu, NULL), ACLNN_SUCCESS);
    CHECK(tv_get(&out, 0) == (float)(2 * 0.5 * expm1(-1.5)) && tv_get(&out, 1) == 0.5);
    aclDestroyScalar(alpha), aclDestroyScalar(scale), aclDestroyScalar(is);
    tv_free(&g), tv_free(&x), tv_free(&out);
}

// ops-nn computes (self > 0 ? self : -alpha) * scale when alpha or inputScale is inf or NaN.
static void test_elu_saturated_attributes(void) {
    const int64_t d[] = {5};
    tview x = tv(d, 1, ACL_FLOAT), out = tv(d, 1, ACL_FLOAT);
    const double xs[] = {-2.0, -0.0, 0.0, 1.5, NAN};
    for (int i = 0; i < 5; i++) tv_set(&x, i, xs[i]);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    const float alphas[] = {INFINITY, 1.5f, NAN}, iss[] = {1.0f, NAN, 1.0f};
    for (int c = 0; c < 3; c++) {
        aclScalar *a = fs(alphas[c]), *s = fs(2.0f), *is = fs(iss[c]);
        CHECK_EQ(aclnnEluGetWorkspaceSize(x.t, a, s, is, out.t, &ws, &e), ACLNN_SUCCESS);
        CHECK_EQ(test_run(ACLNN_SUCCESS, ws, e, aclnnElu, NULL), ACLNN_SUCCESS);
        double sat = (double)(-alphas[c] * 2.0f);
        for (int i = 0; i < 5; i++) {
            double want = xs[i] > 0 || isnan(xs[i]) ? 2 * xs[i] : sat;
            double got = tv_get(&out, i);
            CHECKF(got == want || (isnan(got) && isnan(want)), "case %d x=%g: %g, want %g", c,
                   xs[i], got, want);
        }
        aclDestroyScalar(a), aclDestroyScalar(s), aclDestroyScalar(is);
    }
    tv_free(&x), tv_free(&out);
}

/* ---- layouts: strided views, 0-d, empty, in place ------------------------------------------ */

// Inputs as transposed views, the output with padded rows and an offset: the same values as
// contiguous.
static void test_strided_and_offset_views(void) {
    const int64_t d[] = {3, 4}, tstr[] = {1, 3}, pstr[] = {6, 1};
    const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    for (int o = 0; o < NOPS; o++) {
        const apiop *op = &OPS[o];
        for (int di = 0; di < 3; di++) {
            tset s = {.n = ntensors(op)};
            for (int k = 0; k < s.n; k++) {
                bool is_out = &s.v[k] == ts_out(op, &s);
                s.v[k] = is_out && op->k != K_INPLACE ? tv_make(d, 2, dts[di], pstr, 5)
                                                      : tv_make(d, 2, dts[di], tstr, 0);
                s.p[k] = &s.v[k];
                if (!is_out || op->k == K_INPLACE) tv_fill(&s.v[k], 3 * k + di);
            }
            double g[12], x[12];
            for (int64_t i = 0; i < 12; i++) {
                g[i] = ts_g(op, &s) ? tv_get(ts_g(op, &s), i) : 1.0;
                x[i] = tv_get(ts_x(op, &s), i);
            }
            CHECKF(run(op, s.p, NULL) == ACLNN_SUCCESS, "%s strided %d", op->name, di);
            CHECK_EQ(check_values(op, ts_out(op, &s), g, x, 12, "strided"), 0);
            ts_free(&s);
        }
    }
}

static void test_zero_dim_tensors(void) {
    for (int o = 0; o < NOPS; o++) {
        const apiop *op = &OPS[o];
        for (int v = 0; v < NVALS; v++) {
            tset s;
            ts_make(s, op, NULL, 0, ACL_FLOAT);
            tview *x = ts_x(op, &s), *g = ts_g(op, &s);
            tv_set(x, 0, VALS[v]);
            if (g) tv_set(g, 0, -1.25);
            double gv = g ? -1.25 : 1.0, xv = VALS[v];
            CHECKF(run(op, s.p, NULL) == ACLNN_SUCCESS, "%s 0-d", op->name);
            CHECK_EQ(check_values(op, ts_out(op, &s), &gv, &xv, 1, "0-d"), 0);
            ts_free(&s);
        }
    }
}

static void test_empty_tensors(void) {
    const int64_t e0[] = {0, 3}, e1[] = {2, 0, 4};
    for (int o = 0; o < NOPS; o++) {
        const apiop *op = &OPS[o];
        for (int c = 0; c < 2; c++) {
            tset s;
            ts_make(s, op, c ? e1 : e0, c ? 3 : 2, c ? ACL_BF16 : ACL_FLOAT);
            uint64_t ws = 7;
            aclOpExecutor *e = NULL;
            CHECKF(call1(op, s.p, NULL, &ws, &e) == ACLNN_SUCCESS, "%s empty", op->name);
            CHECK_EQ(ws, 0);
            CHECK(e != NULL);
            CHECK_EQ(op->p2(NULL, 0, e, NULL), ACLNN_SUCCESS);
            ts_free(&s);
        }
        if (op->k == K_BINARY && op->broadcast) { // [0,3] against [3]
            const int64_t r[] = {3};
            tview g = tv(e0, 2, ACL_FLOAT), x = tv(r, 1, ACL_FLOAT), out = tv(e0, 2, ACL_FLOAT);
            tview *t[3] = {&g, &x, &out};
            CHECK_EQ(run(op, t, NULL), ACLNN_SUCCESS);
            tv_free(&g), tv_free(&x), tv_free(&out);
        }
    }
}

// The in-place forms equal the out-of-place ones; a backward's out may share gradOutput's or
// self's memory element for element.
static void test_in_place(void) {
    const int64_t d[] = {4, 9};
    for (int o = 0; o < NOPS; o++) {
        const apiop *op = &OPS[o];
        for (int alias = 0; alias < (op->k == K_BINARY ? 2 : 1); alias++) {
            tset s;
            ts_make(s, op, d, 2, ACL_FLOAT16);
            for (int k = 0; k < s.n; k++) tv_fill(&s.v[k], k + 1);
            double g[36], x[36];
            for (int64_t i = 0; i < 36; i++) {
                g[i] = ts_g(op, &s) ? tv_get(ts_g(op, &s), i) : 1.0;
                x[i] = tv_get(ts_x(op, &s), i);
            }
            tview *t[3] = {s.p[0], s.p[1], s.p[2]};
            if (op->k == K_BINARY) t[2] = alias ? t[1] : t[0]; // out on self / on gradOutput
            CHECKF(run(op, t, NULL) == ACLNN_SUCCESS, "%s alias %d", op->name, alias);
            const tview *out = op->k == K_BINARY ? t[2] : op->k == K_INPLACE ? t[0] : t[1];
            CHECK_EQ(check_values(op, out, g, x, 36, "in place"), 0);
            ts_free(&s);
        }
    }
    // a self-overlapping output (stride 0) is refused
    tview x = tv(D23, 2, ACL_FLOAT);
    const int64_t st0[] = {0, 1};
    tview out = tv_make(D23, 2, ACL_FLOAT, st0, 0);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnReluGetWorkspaceSize(x.t, out.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out");
    tv_free(&x), tv_free(&out);
}

/* ---- phase 2 ------------------------------------------------------------------------------ */

static void test_executor_of_another_operator(void) {
    for (int o = 0; o < NOPS; o++) {
        const apiop *op = &OPS[o], *other = &OPS[(o + 1) % NOPS];
        tset s;
        ts_make(s, op, D23, 2, ACL_FLOAT);
        uint64_t ws = 0;
        aclOpExecutor *e = NULL;
        CHECK_EQ(call1(op, s.p, NULL, &ws, &e), ACLNN_SUCCESS);
        CHECKF(other->p2(NULL, ws, e, NULL) == ACLNN_ERR_PARAM_INVALID, "%s ran %s's executor",
               other->name, op->name);
        CHECK_MSG(op->name);
        CHECK_EQ(op->p2(NULL, ws, e, NULL), ACLNN_SUCCESS);           // still its own
        CHECK_EQ(op->p2(NULL, ws, e, NULL), ACLNN_ERR_PARAM_INVALID); // consumed
        CHECK_MSG("consumed");
        ts_free(&s);
    }
}

static void test_workspace_too_small(void) {
    const int64_t d[] = {3000};
    for (int o = 0; o < NOPS; o++) {
        const apiop *op = &OPS[o];
        tset s; // strided 16-bit operands use tile buffers (contiguous ones may run fused)
        memset(&s, 0, sizeof s);
        s.n = ntensors(op);
        for (int k = 0; k < s.n; k++)
            s.v[k] = tv_make(d, 1, ACL_FLOAT16, (const int64_t[]){2}, 0), s.p[k] = &s.v[k];
        uint64_t ws = 0;
        aclOpExecutor *e = NULL;
        CHECK_EQ(call1(op, s.p, NULL, &ws, &e), ACLNN_SUCCESS);
        CHECK(ws > 0);
        void *buf = NULL;
        CHECK_EQ(aclrtMalloc(&buf, ws, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        CHECKF(op->p2(buf, ws - 1, e, NULL) == ACLNN_ERR_PARAM_INVALID, "%s", op->name);
        CHECK_MSG("workspace");
        CHECK_EQ(op->p2(buf, ws, e, NULL), ACLNN_SUCCESS);
        aclrtFree(buf);
        ts_free(&s);
    }
}

int main(void) {
    RUN(test_null_tensor_each_argument);
    RUN(test_null_scalar_each_attribute);
    RUN(test_null_workspace_size_and_executor);
    RUN(test_tensor_without_data);
    RUN(test_unsupported_dtype_each_argument);
    RUN(test_scalar_dtype_not_castable_to_float);
    RUN(test_leaky_backward_slope_dtype_list);
    RUN(test_output_dtype_rules);
    RUN(test_rank9_rejected_rank8_accepted);
    RUN(test_output_shape_mismatch);
    RUN(test_backward_broadcasting);
    RUN(test_backward_promotion);
    RUN(test_leaky_self_is_result_negative_slope);
    RUN(test_elu_is_result_negative_alpha);
    RUN(test_scalar_attribute_dtypes);
    RUN(test_elu_saturated_attributes);
    RUN(test_strided_and_offset_views);
    RUN(test_integer_relu);
    RUN(test_integer_hardsigmoid);
    RUN(test_hardsigmoid_forward_correctly_rounded);
    RUN(test_hardsigmoid_backward_correctly_rounded);
    RUN(test_zero_dim_tensors);
    RUN(test_empty_tensors);
    RUN(test_in_place);
    RUN(test_executor_of_another_operator);
    RUN(test_workspace_too_small);
    return test_summary();
}
