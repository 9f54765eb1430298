/* Registry entries of the 'amp' family: forward-only entries (ogc_op.backward NULL; an optimizer
 * step's helpers have no gradient of their own).
 *
 *   foreach_mul_scalar, foreach_div_scalar        x * s, x / s with s a one-element tensor (input
 * 1) foreach_mul_scalar_v2, foreach_div_scalar_v2  the same with s an aclScalar (attrs[0])
 *   foreach_unscale                               aclnnForeachNonFiniteCheckAndUnscale: x * inv
 *                                                 (input 1), foundInf (a saved result, broadcast)
 *                                                 stays 0 on finite data
 *   foreach_norm_l2, _l1, _inf, _p3               ||x_k||_p of each piece, attrs[0] = p
 *   amp_update_scale_count, _grow, _backoff,      aclnnAmpUpdateScale on a drawn scale, attrs =
 *   _overflow                                     {growth, backoff, interval, tracker, foundInf};
 *                                                 the tracker after the step is a saved result
 *
 * Every foreach entry runs the operator on a list: the case's input split along dim 0 into up to
 * three pieces (views of its storage, so each layout's strides reach the kernels), the outputs the
 * matching pieces of the result. The in-place unscale runs on a copy (the checker reruns the
 * forward): aclnnForeachMulScalarV2 by 1 copies the input exactly. The float64 references follow
 * the documented formulas (docs/ops/amp.md), not the kernels. */
#include <math.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_amp_update_scale.h"
#include "aclnnop/aclnn_foreach_div_scalar.h"
#include "aclnnop/aclnn_foreach_div_scalar_v2.h"
#include "aclnnop/aclnn_foreach_mul_scalar.h"
#include "aclnnop/aclnn_foreach_mul_scalar_v2.h"
#include "aclnnop/aclnn_foreach_non_finite_check_and_unscale.h"
#include "aclnnop/aclnn_foreach_norm.h"
#include "check/check.h"
#include "check/registry.h"
#include "engine/convert.h"
#include "tensor/dtype.h"

enum { MAX_PIECES = 3 };

// Rows [row[k], row[k + 1]) of dim 0 make piece k (a 0-d tensor or fewer than 2 rows: one).
static int pieces_of(const ogc_shape *s, int64_t *row) {
    int64_t rows = s->ndim ? s->dims[0] : 1;
    int n = rows < 2 ? 1 : rows < MAX_PIECES ? (int)rows : MAX_PIECES;
    for (int k = 0; k <= n; k++) row[k] = rows * k / n;
    return n;
}

static ogc_shape shape_of(const aclTensor *t) {
    ogc_shape s = {.ndim = t->ndim};
    for (int d = 0; d < t->ndim; d++) s.dims[d] = t->dims[d];
    return s;
}

// A view of rows [r0, r1) of t over t's storage.
static aclTensor *piece(const aclTensor *t, int64_t r0, int64_t r1) {
    int64_t dims[OG_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++) dims[d] = t->dims[d];
    int64_t offset = t->offset;
    if (t->ndim) dims[0] = r1 - r0, offset += r0 * t->strides[0];
    return aclCreateTensor(dims, (uint64_t)t->ndim, t->dtype, t->strides, offset, ACL_FORMAT_ND,
                           t->storage_dims, (uint64_t)t->storage_ndim, t->data);
}

// The list of t's pieces (or, with one_each, one element k of t for piece k: the norms).
static aclTensorList *list_of(const aclTensor *t, const int64_t *row, int n, bool one_each) {
    const aclTensor *ts[MAX_PIECES];
    for (int k = 0; k < n; k++)
        ts[k] = one_each ? piece(t, k, k + 1) : piece(t, row[k], row[k + 1]);
    return aclCreateTensorList(ts, (uint64_t)n);
}

// The scalar input is drawn from the domain like x and used as SHIFT + the drawn value: never 0
// (a product of zeros says little, a division by ~0 nothing), of either sign of x.
#define SHIFT 8.0

// The one-element input k as a float32 tensor (upstream takes a float32 scalar tensor with any
// list dtype, and only float32 for invScale); release it with free_f32.
static aclTensor *as_f32(const aclTensor *t, double shift) {
    float v = (float)shift +
              og_load_elem((const char *)t->data + t->offset * (int64_t)aclDataTypeSize(t->dtype),
                           t->dtype);
    void *buf = NULL;
    aclrtMalloc(&buf, sizeof v, ACL_MEM_MALLOC_HUGE_FIRST);
    memcpy(buf, &v, sizeof v);
    int64_t one = 1;
    return aclCreateTensor(&one, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, &one, 1, buf);
}

static void free_f32(aclTensor *t) {
    void *buf = t->data;
    aclDestroyTensor(t);
    aclrtFree(buf);
}

typedef aclnnStatus (*phase2_fn)(void *, uint64_t, aclOpExecutor *, aclrtStream);

static int finish(aclnnStatus st, uint64_t ws, aclOpExecutor *e, phase2_fn run) {
    return st != ACLNN_SUCCESS ? (int)st : ogc_launch(ws, e, run);
}

// ---- foreach x * s, x / s -------------------------------------------------------------------

typedef enum { K_MUL, K_DIV, K_MUL2, K_DIV2, K_UNSCALE } map_kind;

static map_kind kind_of(const ogc_op *op) { return (map_kind)(int)op->attrs[1]; }

static bool map_shapes(const ogc_op *op, const char *layout, ogc_shape *in, ogc_shape *out) {
    if (!strncmp(layout, "bcast", 5) || !strcmp(layout, "mixed")) return false; // no broadcast
    in[0] = *out;
    if (op->nin > 1) in[1] = (ogc_shape){.ndim = 1, .dims = {1}};
    return true;
}

static double map_ref(const ogc_op *op, const double *x, double *saved) {
    switch (kind_of(op)) {
    case K_MUL:
        return x[0] * (SHIFT + x[1]);
    case K_DIV:
        return x[0] / (SHIFT + x[1]);
    case K_MUL2:
        return x[0] * op->attrs[0];
    case K_DIV2:
        return x[0] / op->attrs[0];
    case K_UNSCALE:
        saved[0] = 0; // finite data: foundInf stays as the caller set it (0)
        return x[0] * x[1];
    }
    return 0;
}

static aclnnStatus run_map(map_kind k, aclTensorList *x, const aclTensor *s_t, double s,
                           aclTensorList *out) {
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclScalar *sc = NULL;
    float f = (float)s;
    aclnnStatus st;
    switch (k) {
    case K_MUL:
        st = aclnnForeachMulScalarGetWorkspaceSize(x, s_t, out, &ws, &e);
        return finish(st, ws, e, aclnnForeachMulScalar);
    case K_DIV:
        st = aclnnForeachDivScalarGetWorkspaceSize(x, s_t, out, &ws, &e);
        return finish(st, ws, e, aclnnForeachDivScalar);
    case K_MUL2:
    case K_DIV2:
        sc = aclCreateScalar(&f, ACL_FLOAT);
        if (k == K_MUL2) {
            st = aclnnForeachMulScalarV2GetWorkspaceSize(x, sc, out, &ws, &e);
            st = finish(st, ws, e, aclnnForeachMulScalarV2);
        } else {
            st = aclnnForeachDivScalarV2GetWorkspaceSize(x, sc, out, &ws, &e);
            st = finish(st, ws, e, aclnnForeachDivScalarV2);
        }
        aclDestroyScalar(sc);
        return st;
    default:
        return ACLNN_ERR_INNER;
    }
}

static int map_forward(ogc_call *c) {
    int64_t row[MAX_PIECES + 1];
    ogc_shape s = shape_of(c->in[0]);
    int n = pieces_of(&s, row);
    aclTensor *out = ogc_result_tensor(&c->results[0]);
    aclTensorList *xl = list_of(c->in[0], row, n, false), *ol = list_of(out, row, n, false);
    map_kind k = kind_of(c->op);
    aclTensor *s32 = c->op->nin > 1 ? as_f32(c->in[1], k == K_UNSCALE ? 0 : SHIFT) : NULL;
    int st;
    if (k != K_UNSCALE) {
        st = run_map(k, xl, s32, c->op->attrs[0], ol);
    } else { // on a copy of x (the result), foundInf (saved) zeroed first, as the caller does
        st = run_map(K_MUL2, xl, NULL, 1.0, ol);
        float zero = 0, flag = -1;
        void *found = NULL;
        aclrtMalloc(&found, sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST);
        memcpy(found, &zero, sizeof zero);
        int64_t one = 1;
        aclTensor *ft = aclCreateTensor(&one, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, &one, 1, found);
        uint64_t ws = 0;
        aclOpExecutor *e = NULL;
        if (st == 0) {
            aclnnStatus s1 =
                aclnnForeachNonFiniteCheckAndUnscaleGetWorkspaceSize(ol, ft, s32, &ws, &e);
            st = finish(s1, ws, e, aclnnForeachNonFiniteCheckAndUnscale);
        }
        memcpy(&flag, found, sizeof flag);
        const ogc_result *r = &c->results[1];
        int64_t m = 1;
        for (int d = 0; d < r->ndim; d++) m *= r->dims[d];
        int es = (int)aclDataTypeSize(r->dtype);
        for (int64_t i = 0; i < m; i++) og_store_elem((char *)r->data + i * es, r->dtype, flag);
        aclDestroyTensor(ft);
        aclrtFree(found);
    }
    if (s32) free_f32(s32);
    aclDestroyTensorList(xl);
    aclDestroyTensorList(ol);
    aclDestroyTensor(out);
    return st;
}

// ---- foreach norm ---------------------------------------------------------------------------

static bool norm_shapes(const ogc_op *op, const char *layout, ogc_shape *in, ogc_shape *out) {
    (void)op;
    if (!strncmp(layout, "bcast", 5) || !strcmp(layout, "mixed")) return false;
    int64_t row[MAX_PIECES + 1];
    *out = (ogc_shape){.ndim = 1, .dims = {pieces_of(&in[0], row)}};
    return true;
}

static void norm_ref(const ogc_op *op, const ogc_shape *in, const double *const *x,
                     const ogc_shape *out, double *y, double *const *saved, double *mag,
                     int64_t *terms) {
    (void)saved;
    double p = op->attrs[0];
    int64_t row[MAX_PIECES + 1], per_row = 1, most = 1;
    pieces_of(&in[0], row);
    for (int d = 1; d < in[0].ndim; d++) per_row *= in[0].dims[d];
    for (int64_t k = 0; k < out->dims[0]; k++) {
        double acc = 0;
        int64_t i0 = row[k] * per_row, i1 = row[k + 1] * per_row;
        if (in[0].ndim == 0) i0 = 0, i1 = 1;
        for (int64_t i = i0; i < i1; i++) {
            double a = fabs(x[0][i]);
            acc = isinf(p) ? fmax(acc, a) : acc + pow(a, p);
        }
        y[k] = isinf(p) ? acc : pow(acc, 1 / p);
        mag[k] = y[k];
        if (i1 - i0 > most) most = i1 - i0;
    }
    *terms = most;
}

static int norm_forward(ogc_call *c) {
    int64_t row[MAX_PIECES + 1];
    ogc_shape s = shape_of(c->in[0]);
    int n = pieces_of(&s, row);
    aclTensor *out = ogc_result_tensor(&c->results[0]);
    aclTensorList *xl = list_of(c->in[0], row, n, false), *ol = list_of(out, row, n, true);
    double p = c->op->attrs[0];
    aclScalar *order = aclCreateScalar(&p, ACL_DOUBLE);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus st = aclnnForeachNormGetWorkspaceSize(xl, order, ol, &ws, &e);
    int r = finish(st, ws, e, aclnnForeachNorm);
    aclDestroyScalar(order);
    aclDestroyTensorList(xl);
    aclDestroyTensorList(ol);
    aclDestroyTensor(out);
    return r;
}

// ---- AmpUpdateScale -------------------------------------------------------------------------

// attrs: growth, backoff, interval, tracker before, foundInf
static bool amp_shapes(const ogc_op *op, const char *layout, ogc_shape *in, ogc_shape *out) {
    (void)op;
    if (strcmp(layout, "contiguous")) return false; // every tensor is [1]
    in[0] = *out = (ogc_shape){.ndim = 1, .dims = {1}};
    return true;
}

static double amp_ref(const ogc_op *op, const double *x, double *saved) {
    const double *a = op->attrs;
    if (a[4] != 0) return saved[0] = 0, x[0] * a[1];
    if (a[3] + 1 == a[2]) {
        double grown = x[0] * a[0];
        saved[0] = 0;
        return grown <= 65504 ? grown : x[0]; // the entries keep growth finite or beyond fp32's
    }
    saved[0] = a[3] + 1;
    return x[0];
}

static int amp_forward(ogc_call *c) {
    const double *a = c->op->attrs;
    int64_t one = 1;
    void *buf[3] = {0};
    for (int k = 0; k < 3; k++) aclrtMalloc(&buf[k], 8, ACL_MEM_MALLOC_HUGE_FIRST);
    int32_t tracker = (int32_t)a[3];
    memcpy(buf[0], &tracker, sizeof tracker);
    og_store_elem(buf[1], c->dtype, (float)a[4]);
    aclTensor *tr = aclCreateTensor(&one, 1, ACL_INT32, NULL, 0, ACL_FORMAT_ND, &one, 1, buf[0]);
    aclTensor *found = aclCreateTensor(&one, 1, c->dtype, NULL, 0, ACL_FORMAT_ND, &one, 1, buf[1]);
    aclTensor *tr_out =
        aclCreateTensor(&one, 1, ACL_INT32, NULL, 0, ACL_FORMAT_ND, &one, 1, buf[2]);
    aclTensor *scale_out = ogc_result_tensor(&c->results[0]);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus st = aclnnAmpUpdateScaleGetWorkspaceSize(c->in[0], tr, found, a[0], a[1],
                                                         (int64_t)a[2], scale_out, tr_out, &ws, &e);
    int r = finish(st, ws, e, aclnnAmpUpdateScale);
    memcpy(&tracker, buf[2], sizeof tracker);
    og_store_elem(c->results[1].data, c->results[1].dtype, (float)tracker);
    aclDestroyTensor(tr), aclDestroyTensor(found), aclDestroyTensor(tr_out);
    aclDestroyTensor(scale_out);
    for (int k = 0; k < 3; k++) aclrtFree(buf[k]);
    return r;
}

// ---- the entries ----------------------------------------------------------------------------

#define FLOATS (OG_DT(ACL_FLOAT) | OG_DT(ACL_FLOAT16) | OG_DT(ACL_BF16))

static const double a_mul[] = {0, K_MUL}, a_div[] = {0, K_DIV}, a_mul2[] = {-1.75, K_MUL2},
                    a_div2[] = {3.0, K_DIV2}, a_unscale[] = {0, K_UNSCALE};
static const double a_l2[] = {2}, a_l1[] = {1}, a_inf[] = {INFINITY}, a_p3[] = {3};
static const double a_count[] = {2, 0.5, 2000, 7, 0}, a_grow[] = {2, 0.5, 8, 7, 0},
                    a_backoff[] = {2, 0.5, 8, 7, 1}, a_overflow[] = {1e38, 0.5, 8, 7, 0};

#define MAP_ENTRY(NAME, API, ATTRS, NIN)                                                           \
    {                                                                                              \
        .name = NAME, .api = API, .nin = NIN, .in = {{"x", false}, {"scalar", false}},             \
        .attrs = ATTRS, .dtypes = FLOATS, .lo = -4, .hi = 4, .fp32_ulps = 1, .shapes = map_shapes, \
        .ref_forward = map_ref, .forward = map_forward                                             \
    }
#define NORM_ENTRY(NAME, ATTRS, LO, HI)                                                            \
    {                                                                                              \
        .name = NAME, .api = "aclnnForeachNorm", .nin = 1, .in = {{"x", false}}, .attrs = ATTRS,   \
        .dtypes = FLOATS, .lo = LO, .hi = HI, .fp32_ulps = 2, .shapes = norm_shapes,               \
        .ref_forward_tensor = norm_ref, .forward = norm_forward                                    \
    }
#define AMP_ENTRY(NAME, ATTRS, LO, HI)                                                             \
    {                                                                                              \
        .name = NAME, .api = "aclnnAmpUpdateScale", .nin = 1, .in = {{"currentScale", false}},     \
        .nsaved = 1, .saved_names = {"updatedGrowthTracker"}, .attrs = ATTRS, .dtypes = FLOATS,    \
        .lo = LO, .hi = HI, .fp32_ulps = 1, .zero_trust = 1, .shapes = amp_shapes,                 \
        .ref_forward = amp_ref, .forward = amp_forward                                             \
    }

static const ogc_op amp_ops[] = {
    MAP_ENTRY("foreach_mul_scalar", "aclnnForeachMulScalar", a_mul, 2),
    MAP_ENTRY("foreach_div_scalar", "aclnnForeachDivScalar", a_div, 2),
    MAP_ENTRY("foreach_mul_scalar_v2", "aclnnForeachMulScalarV2", a_mul2, 1),
    MAP_ENTRY("foreach_div_scalar_v2", "aclnnForeachDivScalarV2", a_div2, 1),
    {.name = "foreach_unscale",
     .api = "aclnnForeachNonFiniteCheckAndUnscale",
     .nin = 2,
     .in = {{"scaledGrads", false}, {"invScale", false}},
     .nsaved = 1,
     .saved_names = {"foundInf"},
     .attrs = a_unscale,
     .dtypes = FLOATS,
     .lo = -4,
     .hi = 4,
     .fp32_ulps = 1,
     .zero_trust = 1,
     .shapes = map_shapes,
     .ref_forward = map_ref,
     .forward = map_forward},
    NORM_ENTRY("foreach_norm_l2", a_l2, -4, 4),
    NORM_ENTRY("foreach_norm_l1", a_l1, -1,
               1) /* the large layout's sums stay below fp16's 65504 */,
    NORM_ENTRY("foreach_norm_inf", a_inf, -4, 4),
    NORM_ENTRY("foreach_norm_p3", a_p3, -4, 4),
    AMP_ENTRY("amp_update_scale_count", a_count, 1, 4096),
    AMP_ENTRY("amp_update_scale_grow", a_grow, 1, 4096),
    AMP_ENTRY("amp_update_scale_backoff", a_backoff, 1, 4096),
    AMP_ENTRY("amp_update_scale_overflow", a_overflow, 10, 100),
};

OGC_DEFINE_FAMILY(amp, amp_ops)
