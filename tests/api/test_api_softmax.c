/* The Softmax family through the public API: aclnnSoftmax, aclnnSoftmaxBackward, aclnnLogSoftmax,
 * aclnnLogSoftmaxBackward.
 *  - every status path: NULLs (161001), dtypes, dim out of range (0-d counts as rank 1), shapes,
 *    rank 9, overlapping outputs (161002), with the argument named in the message; empty tensors;
 *  - values against float64 along every dim of a rank-3 tensor, in fp32 / fp16 / bf16, with
 *    strided (transposed) and offset views, in place (out == self), and 1 vs 2 threads bitwise;
 *  - ops-nn's dtype rules: Softmax computes in self's dtype and casts to out's; LogSoftmax casts
 *    self to out's dtype first; the backwards promote a mixed-precision gradient;
 *  - rows of large magnitude (no overflow: 1e4 + small spread), NaN / -inf / +inf rows, a row
 *    of one element, and one long row (100,003 elements, past any buffer the engine keeps);
 *  - fused 16-bit rows equal the buffered path bit for bit, on every ISA level; rows prefetched
 *    (inputs of 16 MiB and more) equal rows that are not. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_logsoftmax.h"
#include "aclnnop/aclnn_logsoftmax_backward.h"
#include "aclnnop/aclnn_softmax.h"
#include "aclnnop/aclnn_softmax_backward.h"
#include "opgrad/opgrad.h"
#include "tensor/dtype.h"
#include "test.h"
#include "testutil.h"

typedef aclnnStatus (*fwd_p1)(const aclTensor *, int64_t, aclTensor *, uint64_t *,
                              aclOpExecutor **);
typedef aclnnStatus (*bwd_p1)(const aclTensor *, const aclTensor *, int64_t, aclTensor *,
                              uint64_t *, aclOpExecutor **);

// ---- float64 references along one axis of a row-major shape ------------------------------------

typedef struct shape3 {
    int ndim;
    int64_t dims[3];
} shape3;

static int64_t numel(const shape3 *s) {
    int64_t n = 1;
    for (int d = 0; d < s->ndim; d++) n *= s->dims[d];
    return n;
}

// y = softmax / log_softmax of x along axis (row-major, contiguous doubles).
static void ref_fwd(bool log, const shape3 *s, int axis, const double *x, double *y) {
    int64_t outer = 1, R = s->ndim ? s->dims[axis] : 1, inner = 1;
    for (int d = 0; d < s->ndim; d++) {
        if (d < axis) outer *= s->dims[d];
        if (d > axis) inner *= s->dims[d];
    }
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const double *xr = x + o * R * inner + i;
            double *yr = y + o * R * inner + i;
            double m = -INFINITY, sum = 0;
            for (int64_t j = 0; j < R; j++) m = fmax(m, xr[j * inner]);
            for (int64_t j = 0; j < R; j++) sum += exp(xr[j * inner] - m);
            for (int64_t j = 0; j < R; j++)
                yr[j * inner] =
                    log ? xr[j * inner] - m - log1p(sum - 1) : exp(xr[j * inner] - m) / sum;
        }
}

// dx of the backward from the forward's output y (softmax, or log-softmax).
static void ref_bwd(bool log, const shape3 *s, int axis, const double *g, const double *y,
                    double *dx) {
    int64_t outer = 1, R = s->ndim ? s->dims[axis] : 1, inner = 1;
    for (int d = 0; d < s->ndim; d++) {
        if (d < axis) outer *= s->dims[d];
        if (d > axis) inner *= s->dims[d];
    }
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t b = o * R * inner + i;
            double acc = 0;
            for (int64_t j = 0; j < R; j++)
                acc += log ? g[b + j * inner] : g[b + j * inner] * y[b + j * inner];
            for (int64_t j = 0; j < R; j++) {
                int64_t k = b + j * inner;
                dx[k] = log ? g[k] - exp(y[k]) * acc : y[k] * (g[k] - acc);
            }
        }
}

// ---- status paths -----------------------------------------------------------------------------

static void test_statuses(void) {
    int64_t d23[] = {2, 3}, d32[] = {3, 2};
    float a[6] = {0}, b[6] = {0}, c[6] = {0};
    int32_t ints[6] = {0};
    aclTensor *x = test_tensor(d23, 2, ACL_FLOAT, a), *y = test_tensor(d23, 2, ACL_FLOAT, b);
    aclTensor *z = test_tensor(d32, 2, ACL_FLOAT, c), *xi = test_tensor(d23, 2, ACL_INT32, ints);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnSoftmaxGetWorkspaceSize(NULL, 1, y, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("self is NULL");
    CHECK_EQ(aclnnSoftmaxGetWorkspaceSize(x, 1, NULL, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_EQ(aclnnSoftmaxGetWorkspaceSize(x, 1, y, NULL, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("workspaceSize");
    CHECK_EQ(aclnnLogSoftmaxGetWorkspaceSize(x, 1, y, &ws, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("executor");
    CHECK_EQ(aclnnSoftmaxGetWorkspaceSize(x, 2, y, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("dim = 2 is out of range: the tensor has rank 2, so dim must be in [-2, 1]");
    CHECK_EQ(aclnnLogSoftmaxGetWorkspaceSize(x, -3, y, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("dim = -3");
    CHECK_EQ(aclnnSoftmaxGetWorkspaceSize(x, 1, z, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("self has shape [2,3] but out has shape [3,2]");
    CHECK_EQ(aclnnSoftmaxGetWorkspaceSize(xi, 1, y, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("self has dtype int32");
    CHECK_EQ(aclnnSoftmaxBackwardGetWorkspaceSize(x, NULL, 1, y, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("output is NULL");
    CHECK_EQ(aclnnSoftmaxBackwardGetWorkspaceSize(x, y, 1, z, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("gradOutput has shape [2,3] but out has shape [3,2]");
    CHECK_EQ(aclnnLogSoftmaxBackwardGetWorkspaceSize(x, y, 7, y, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("dim = 7");
    CHECK_EQ(aclnnLogSoftmaxBackwardGetWorkspaceSize(xi, y, 0, z, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("gradOutput has dtype int32");
    // 0-d: dim 0 and -1 are valid (rank 1), 1 is not; one element gives 1 (softmax) and 0 (log)
    float s0 = 5.0f, s1 = -1.0f;
    aclTensor *t0 = test_tensor(NULL, 0, ACL_FLOAT, &s0),
              *t1 = test_tensor(NULL, 0, ACL_FLOAT, &s1);
    CHECK_EQ(aclnnSoftmaxGetWorkspaceSize(t0, 1, t1, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    aclnnStatus st;
    OP_RUN(st, aclnnSoftmaxGetWorkspaceSize(t0, -1, t1, &ws_, &ex_), aclnnSoftmax);
    CHECK_EQ(st, ACLNN_SUCCESS);
    CHECK(s1 == 1.0f);
    OP_RUN(st, aclnnLogSoftmaxGetWorkspaceSize(t0, 0, t1, &ws_, &ex_), aclnnLogSoftmax);
    CHECK_EQ(st, ACLNN_SUCCESS);
    CHECK(s1 == 0.0f);
    // rank 9
    int64_t d9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 2};
    aclTensor *r9 = test_tensor(d9, 9, ACL_FLOAT, a), *o9 = test_tensor(d9, 9, ACL_FLOAT, b);
    CHECK_EQ(aclnnSoftmaxGetWorkspaceSize(r9, 0, o9, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("rank 9");
    // an output overlapping the input with another layout
    int64_t strides[2] = {1, 2};
    aclTensor *xt =
        aclCreateTensor(d23, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, (int64_t[]){6}, 1, a);
    CHECK_EQ(aclnnSoftmaxGetWorkspaceSize(x, 1, xt, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("overlaps");
    // empty tensors: ops-nn accepts Softmax and the backwards before any other check
    int64_t d03[] = {0, 3};
    aclTensor *emp = test_tensor(d03, 2, ACL_FLOAT, a), *empi = test_tensor(d03, 2, ACL_INT32, a);
    OP_RUN(st, aclnnSoftmaxGetWorkspaceSize(emp, 9, empi, &ws_, &ex_), aclnnSoftmax);
    CHECK_EQ(st, ACLNN_SUCCESS);
    OP_RUN(st, aclnnLogSoftmaxBackwardGetWorkspaceSize(emp, emp, 1, emp, &ws_, &ex_),
           aclnnLogSoftmaxBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    CHECK_EQ(aclnnLogSoftmaxGetWorkspaceSize(emp, 2, emp, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    // ... but not past opgrad's own memory rule: an out larger than its aclrtMalloc block (the
    // fuzzer found the shortcut skipping it)
    void *small = test_dev_alloc(16);
    int64_t d46[] = {4, 6};
    aclTensor *big = test_tensor(d46, 2, ACL_FLOAT, small);
    CHECK_EQ(aclnnSoftmaxGetWorkspaceSize(emp, 1, big, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("aclrtMalloc block of 16 bytes");
    CHECK_EQ(aclnnSoftmaxBackwardGetWorkspaceSize(emp, emp, 1, big, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    aclDestroyTensor(big);
    aclrtFree(small);
    aclTensor *all[] = {x, y, z, xi, t0, t1, r9, o9, xt, emp, empi};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) aclDestroyTensor(all[i]);
}

// ---- values
// --------------------------------------------------------------------------------------

// A tensor of shape s whose storage is a padded, transposed or plain layout of the values.
typedef enum { PLAIN, TRANSPOSED, PADDED } layout;

typedef struct view {
    void *storage;
    aclTensor *t;
    int64_t strides[3], offset;
} view;

static view make_view(const shape3 *s, aclDataType dt, layout l, const double *vals) {
    view v = {0};
    int nd = s->ndim;
    int64_t acc = 1;
    for (int d = nd - 1; d >= 0; d--) v.strides[d] = acc, acc *= s->dims[d];
    if (l == TRANSPOSED && nd >= 2) { // the last two dims swapped in memory
        v.strides[nd - 1] = s->dims[nd - 2];
        v.strides[nd - 2] = 1;
        if (nd == 3) v.strides[0] = s->dims[1] * s->dims[2];
    } else if (l == PADDED && nd >= 2) {
        v.offset = 5;
        v.strides[nd - 1] = 1;
        v.strides[nd - 2] = s->dims[nd - 1] + 3;
        if (nd == 3) v.strides[0] = v.strides[1] * s->dims[1];
    }
    int64_t extent = v.offset + 1;
    for (int d = 0; d < nd; d++) extent += v.strides[d] * (s->dims[d] - 1);
    v.storage = test_dev_alloc((size_t)extent * aclDataTypeSize(dt));
    int64_t idx[3] = {0};
    for (int64_t i = 0; i < numel(s); i++) {
        int64_t pos = v.offset;
        for (int d = 0; d < nd; d++) pos += idx[d] * v.strides[d];
        test_store(v.storage, pos, dt, vals ? vals[i] : 0);
        for (int d = nd - 1; d >= 0 && ++idx[d] == s->dims[d]; d--) idx[d] = 0;
    }
    int64_t sd[1] = {extent};
    v.t = aclCreateTensor(s->dims, (uint64_t)nd, dt, v.strides, v.offset, ACL_FORMAT_ND, sd, 1,
                          v.storage);
    return v;
}

// The values of a view in row-major order.
static void read_view(const shape3 *s, aclDataType dt, const view *v, double *out) {
    int64_t idx[3] = {0};
    for (int64_t i = 0; i < numel(s); i++) {
        int64_t pos = v->offset;
        for (int d = 0; d < s->ndim; d++) pos += idx[d] * v->strides[d];
        out[i] = test_load(v->storage, pos, dt);
        for (int d = s->ndim - 1; d >= 0 && ++idx[d] == s->dims[d]; d--) idx[d] = 0;
    }
}

static void free_view(view *v) {
    aclDestroyTensor(v->t);
    aclrtFree(v->storage);
}

// One ulp of dtype dt at v (the subnormal spacing below its normal range).
static double ulp_of(aclDataType dt, double v) {
    int p = dt == ACL_FLOAT ? 24 : dt == ACL_FLOAT16 ? 11 : 8;
    int emin = dt == ACL_FLOAT16 ? -14 : -126, e;
    frexp(v, &e);
    return ldexp(1.0, (v == 0 || e - 1 < emin ? emin : e - 1) - (p - 1));
}

// The checker's rule: |got - ref| <= c ulp(ref) + c u sqrt(R) mag, c = 4 for fp32 (the kernels'
// bound) and 1 for 16-bit results (rounded once), u the dtype's unit roundoff.
static bool close_to(aclDataType dt, double got, double ref, double mag, int64_t R) {
    if (isnan(ref)) return isnan(got);
    double c = dt == ACL_FLOAT ? 4 : 1, u = ulp_of(dt, 1.0) / 2;
    return fabs(got - ref) <= c * ulp_of(dt, ref) + c * u * sqrt((double)R) * mag;
}

static void check_case(bool log, const shape3 *s, int axis, aclDataType dt, layout l, int threads) {
    int64_t n = numel(s), R = s->dims[axis];
    double *x = malloc((size_t)n * 8), *g = malloc((size_t)n * 8), *y = malloc((size_t)n * 8);
    double *ref = malloc((size_t)n * 8), *got = malloc((size_t)n * 8), *dx = malloc((size_t)n * 8);
    test_rng r;
    test_rng_seed(&r, 1234 + (uint64_t)axis * 7 + (uint64_t)dt + (uint64_t)l * 31);
    for (int64_t i = 0; i < n; i++) {
        x[i] = test_round_to(dt, test_rng_uniform(&r, -6, 6));
        g[i] = test_round_to(dt, test_rng_uniform(&r, -2, 2));
    }
    opgrad_set_num_threads(threads);
    view vx = make_view(s, dt, l, x), vy = make_view(s, dt, PLAIN, NULL);
    aclnnStatus st;
    if (log)
        OP_RUN(st, aclnnLogSoftmaxGetWorkspaceSize(vx.t, axis, vy.t, &ws_, &ex_), aclnnLogSoftmax);
    else
        OP_RUN(st, aclnnSoftmaxGetWorkspaceSize(vx.t, axis, vy.t, &ws_, &ex_), aclnnSoftmax);
    CHECK_EQ(st, ACLNN_SUCCESS);
    read_view(s, dt, &vy, y);
    ref_fwd(log, s, axis, x, ref);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad += !close_to(dt, y[i], ref[i], log ? fabs(x[i]) + 10 : fabs(ref[i]), R);
    CHECKF(bad == 0, "%s fwd %s axis %d layout %d: %lld bad", log ? "log_softmax" : "softmax",
           aclDataTypeSize(dt) == 4 ? "fp32" : "16-bit", axis, (int)l, (long long)bad);
    // backward from the kernel's own output, against float64 at the same values
    view vg = make_view(s, dt, l, g), vdx = make_view(s, dt, PADDED, NULL);
    if (log)
        OP_RUN(
            st,
            aclnnLogSoftmaxBackwardGetWorkspaceSize(vg.t, vy.t, axis - s->ndim, vdx.t, &ws_, &ex_),
            aclnnLogSoftmaxBackward);
    else
        OP_RUN(st, aclnnSoftmaxBackwardGetWorkspaceSize(vg.t, vy.t, axis, vdx.t, &ws_, &ex_),
               aclnnSoftmaxBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    read_view(s, dt, &vdx, got);
    ref_bwd(log, s, axis, g, y, dx);
    bad = 0;
    for (int64_t i = 0; i < n; i++) bad += !close_to(dt, got[i], dx[i], 2 * (fabs(g[i]) + 2), R);
    CHECKF(bad == 0, "%s bwd axis %d layout %d: %lld bad", log ? "log_softmax" : "softmax", axis,
           (int)l, (long long)bad);
    free_view(&vx), free_view(&vy), free_view(&vg), free_view(&vdx);
    free(x), free(g), free(y), free(ref), free(got), free(dx);
}

static void test_values(void) {
    shape3 s = {3, {3, 37, 70}};
    aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    for (int log = 0; log < 2; log++)
        for (int axis = 0; axis < 3; axis++)
            for (int d = 0; d < 3; d++)
                for (int l = 0; l < 3; l++) check_case(log, &s, axis, dts[d], (layout)l, 2);
    // more rows than ranges per thread, 2.4 MiB (fp32) and 1.2 MiB (16-bit) per tensor
    shape3 big = {3, {16, 129, 300}};
    for (int log = 0; log < 2; log++)
        for (int axis = 1; axis < 3; axis++)
            for (int d = 0; d < 3; d++) check_case(log, &big, axis, dts[d], PLAIN, 2);
    opgrad_set_num_threads(2);
}

// 1 and 2 threads, several ranges per thread: the same bits.
static void test_threads_bitwise(void) {
    int64_t dims[2] = {257, 1031};
    int64_t n = dims[0] * dims[1];
    float *x = test_dev_alloc((size_t)n * 4), *y1 = test_dev_alloc((size_t)n * 4),
          *y2 = test_dev_alloc((size_t)n * 4);
    test_rng r;
    test_rng_seed(&r, 9);
    test_fill(x, 0, n, ACL_FLOAT, &r, -30, 30);
    aclTensor *tx = test_tensor(dims, 2, ACL_FLOAT, x);
    float *outs[2] = {y1, y2};
    for (int k = 0; k < 2; k++) {
        opgrad_set_num_threads(k + 1);
        aclTensor *ty = test_tensor(dims, 2, ACL_FLOAT, outs[k]);
        aclnnStatus st;
        OP_RUN(st, aclnnLogSoftmaxGetWorkspaceSize(tx, 1, ty, &ws_, &ex_), aclnnLogSoftmax);
        CHECK_EQ(st, ACLNN_SUCCESS);
        aclDestroyTensor(ty);
    }
    CHECK(memcmp(y1, y2, (size_t)n * 4) == 0);
    opgrad_set_num_threads(2);
    aclDestroyTensor(tx);
    aclrtFree(x), aclrtFree(y1), aclrtFree(y2);
}

// out == self (in place), and the dtype rules of ops-nn.
static void test_inplace_and_dtypes(void) {
    int64_t dims[2] = {4, 9};
    float x[36], y[36];
    for (int i = 0; i < 36; i++) x[i] = y[i] = (float)((i * 7) % 11) - 5.0f;
    aclTensor *tx = test_tensor(dims, 2, ACL_FLOAT, x), *ty = test_tensor(dims, 2, ACL_FLOAT, y);
    aclnnStatus st;
    OP_RUN(st, aclnnSoftmaxGetWorkspaceSize(tx, 1, ty, &ws_, &ex_), aclnnSoftmax);
    OP_RUN(st, aclnnSoftmaxGetWorkspaceSize(tx, 1, tx, &ws_, &ex_), aclnnSoftmax);
    CHECK_EQ(st, ACLNN_SUCCESS);
    CHECK(memcmp(x, y, sizeof x) == 0);
    // Softmax: fp16 self, fp32 out: the result is rounded to fp16, then widened
    uint16_t h[36];
    float out32[36];
    for (int i = 0; i < 36; i++) h[i] = og_f32_to_f16((float)(i % 13) * 0.37f - 2.0f);
    aclTensor *th = test_tensor(dims, 2, ACL_FLOAT16, h),
              *to = test_tensor(dims, 2, ACL_FLOAT, out32);
    OP_RUN(st, aclnnSoftmaxGetWorkspaceSize(th, 1, to, &ws_, &ex_), aclnnSoftmax);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int i = 0; i < 36; i++) CHECK(out32[i] == (float)test_round_to(ACL_FLOAT16, out32[i]));
    // LogSoftmax: fp32 self, fp16 out: self is cast to fp16 first (ops-nn), so an input whose
    // fp16 rounding changes the result gives the fp16 computation's value
    float xs[2] = {0.0f, 1.0f + 0x1p-20f};
    uint16_t o16[2];
    int64_t d2[1] = {2};
    aclTensor *tx2 = test_tensor(d2, 1, ACL_FLOAT, xs), *to2 = test_tensor(d2, 1, ACL_FLOAT16, o16);
    OP_RUN(st, aclnnLogSoftmaxGetWorkspaceSize(tx2, 0, to2, &ws_, &ex_), aclnnLogSoftmax);
    CHECK_EQ(st, ACLNN_SUCCESS);
    double want = test_round_to(ACL_FLOAT16, 0.0 - 1.0 - log1p(exp(-1.0)));
    CHECK(test_load(o16, 0, ACL_FLOAT16) == want);
    // a backward with an fp32 gradient of a bf16 output: promoted to fp32
    uint16_t yb[36];
    float g[36], dxo[36];
    for (int i = 0; i < 36; i++) yb[i] = 0x3d80, g[i] = (float)i; // y = 1/16
    aclTensor *tyb = test_tensor(dims, 2, ACL_BF16, yb), *tg = test_tensor(dims, 2, ACL_FLOAT, g),
              *tdx = test_tensor(dims, 2, ACL_FLOAT, dxo);
    OP_RUN(st, aclnnSoftmaxBackwardGetWorkspaceSize(tg, tyb, 1, tdx, &ws_, &ex_),
           aclnnSoftmaxBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int row = 0; row < 4; row++) {
        double dot = 0;
        for (int j = 0; j < 9; j++) dot += g[row * 9 + j] / 16.0;
        for (int j = 0; j < 9; j++) {
            double want_dx = (g[row * 9 + j] - dot) / 16.0;
            CHECK(fabs(dxo[row * 9 + j] - want_dx) <= 1e-6 * (1 + fabs(want_dx)));
        }
    }
    aclTensor *all[] = {tx, ty, th, to, tx2, to2, tyb, tg, tdx};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) aclDestroyTensor(all[i]);
}

// Large magnitudes, NaN / inf rows, one long row.
static void test_special_rows(void) {
    int64_t dims[2] = {5, 4};
    float x[20] = {1e4f,      1e4f + 1,  1e4f + 2,  1e4f - 3,  // large: no overflow
                   1.0f,      NAN,       2.0f,      3.0f,      // NaN row
                   -INFINITY, -INFINITY, -INFINITY, -INFINITY, // all -inf: NaN
                   1.0f,      INFINITY,  2.0f,      3.0f,      // +inf: NaN
                   -INFINITY, 0.0f,      -INFINITY, 1.0f};     // some -inf: exact zeros
    float y[20];
    aclTensor *tx = test_tensor(dims, 2, ACL_FLOAT, x), *ty = test_tensor(dims, 2, ACL_FLOAT, y);
    aclnnStatus st;
    OP_RUN(st, aclnnSoftmaxGetWorkspaceSize(tx, 1, ty, &ws_, &ex_), aclnnSoftmax);
    CHECK_EQ(st, ACLNN_SUCCESS);
    double e[4] = {exp(-2.0), exp(-1.0), 1.0, exp(-5.0)}, s = e[0] + e[1] + e[2] + e[3];
    for (int j = 0; j < 4; j++) CHECK(test_ulp_error(ACL_FLOAT, y[j], e[j] / s) <= 2);
    for (int j = 4; j < 16; j++) CHECK(isnan(y[j]));
    CHECK(y[16] == 0.0f && y[18] == 0.0f);
    CHECK(test_ulp_error(ACL_FLOAT, y[19], 1 / (1 + exp(-1.0))) <= 2);
    OP_RUN(st, aclnnLogSoftmaxGetWorkspaceSize(tx, 1, ty, &ws_, &ex_), aclnnLogSoftmax);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int j = 0; j < 4; j++) CHECK(test_ulp_error(ACL_FLOAT, y[j], log(e[j] / s)) <= 2);
    CHECK(y[16] == -INFINITY && y[18] == -INFINITY);
    // one long row (100,003 fp32 values) along dim 0 of a column vector: strided rows
    int64_t n = 100003, dl[2] = {100003, 1};
    float *lx = test_dev_alloc((size_t)n * 4), *ly = test_dev_alloc((size_t)n * 4);
    test_rng r;
    test_rng_seed(&r, 77);
    test_fill(lx, 0, n, ACL_FLOAT, &r, -3, 3);
    aclTensor *tlx = test_tensor(dl, 2, ACL_FLOAT, lx), *tly = test_tensor(dl, 2, ACL_FLOAT, ly);
    OP_RUN(st, aclnnSoftmaxGetWorkspaceSize(tlx, 0, tly, &ws_, &ex_), aclnnSoftmax);
    CHECK_EQ(st, ACLNN_SUCCESS);
    double m = -INFINITY, sum = 0, worst = 0;
    for (int64_t i = 0; i < n; i++) m = fmax(m, lx[i]);
    for (int64_t i = 0; i < n; i++) sum += exp((double)lx[i] - m);
    for (int64_t i = 0; i < n; i++)
        worst = fmax(worst, test_ulp_error(ACL_FLOAT, ly[i], exp((double)lx[i] - m) / sum));
    CHECKF(worst <= 4, "long row: %.2f ulp", worst);
    aclDestroyTensor(tx), aclDestroyTensor(ty), aclDestroyTensor(tlx), aclDestroyTensor(tly);
    aclrtFree(lx), aclrtFree(ly);
}

// Inputs of 16 MiB (the row-prefetch size gate, engine/blocking.h) and more: the engine prefetches
// each row's inputs a row ahead for the forwards. Rows are independent, so the whole tensor gives
// the bits of its two halves run apart (8 MiB each: no prefetching).
static void test_prefetched_rows(void) {
    int64_t dims[2] = {4096, 1024}, half[2] = {2048, 1024};
    int64_t n = dims[0] * dims[1];
    float *x = test_dev_alloc((size_t)n * 4);
    float *whole = test_dev_alloc((size_t)n * 4), *parts = test_dev_alloc((size_t)n * 4);
    test_rng r;
    test_rng_seed(&r, 31);
    test_fill(x, 0, n, ACL_FLOAT, &r, -8, 8);
    aclnnStatus st;
    for (int part = -1; part < 2; part++) { // -1: the whole tensor
        int64_t off = part < 0 ? 0 : part * n / 2;
        const int64_t *d = part < 0 ? dims : half;
        float *dst = part < 0 ? whole : parts;
        aclTensor *tx = test_tensor(d, 2, ACL_FLOAT, x + off),
                  *ty = test_tensor(d, 2, ACL_FLOAT, dst + off);
        OP_RUN(st, aclnnSoftmaxGetWorkspaceSize(tx, -1, ty, &ws_, &ex_), aclnnSoftmax);
        CHECK_EQ(st, ACLNN_SUCCESS);
        aclDestroyTensor(tx), aclDestroyTensor(ty);
    }
    CHECK(memcmp(whole, parts, (size_t)n * 4) == 0);
    aclrtFree(x), aclrtFree(whole), aclrtFree(parts);
}

// SoftmaxBackward's 256-bit kernels, which the engine takes for fp32 rows streaming from L3 on a
// CPU that halves 512-bit operations (OPGRAD_YMM_STREAM_BYTES, engine/rows.h; 1 byte here:
// always), give the bits of the default plan, rows of the vector and group widths and not.
static void test_ymm_stream_rows(void) {
    static const int64_t widths[] = {1000, 1024, 17};
    for (int w = 0; w < 3; w++) {
        int64_t dims[2] = {64, widths[w]}, n = 64 * widths[w];
        float *g = test_dev_alloc((size_t)n * 4), *y = test_dev_alloc((size_t)n * 4);
        float *dx[2] = {test_dev_alloc((size_t)n * 4), test_dev_alloc((size_t)n * 4)};
        test_rng r;
        test_rng_seed(&r, 37);
        test_fill(g, 0, n, ACL_FLOAT, &r, -4, 4);
        test_fill(y, 0, n, ACL_FLOAT, &r, 0, 0.1);
        aclTensor *tg = test_tensor(dims, 2, ACL_FLOAT, g),
                  *ty = test_tensor(dims, 2, ACL_FLOAT, y);
        for (int k = 0; k < 2; k++) {
            setenv("OPGRAD_YMM_STREAM_BYTES", k == 0 ? "0" : "1", 1);
            aclTensor *tdx = test_tensor(dims, 2, ACL_FLOAT, dx[k]);
            aclnnStatus st;
            OP_RUN(st, aclnnSoftmaxBackwardGetWorkspaceSize(tg, ty, -1, tdx, &ws_, &ex_),
                   aclnnSoftmaxBackward);
            CHECK_EQ(st, ACLNN_SUCCESS);
            aclDestroyTensor(tdx);
        }
        unsetenv("OPGRAD_YMM_STREAM_BYTES");
        CHECKF(memcmp(dx[0], dx[1], (size_t)n * 4) == 0, "rows of %lld", (long long)widths[w]);
        aclDestroyTensor(tg), aclDestroyTensor(ty);
        aclrtFree(g), aclrtFree(y), aclrtFree(dx[0]), aclrtFree(dx[1]);
    }
}

// The fused 16-bit rows (every operand bf16 / fp16 and contiguous along the axis: the kernel
// widens on load and rounds on store) give exactly the bits of the buffered path (CopyIn, the
// fp32 kernel, CopyOut; OPGRAD_FUSED16=0; a NaN only as a NaN), at every row length around the
// vector, group and step widths, with special values, in place, on every ISA level this CPU has.
static void run_all4(aclTensor *tx, aclTensor *tg, aclTensor *const *outs, aclTensor *tin) {
    aclnnStatus st;
    OP_RUN(st, aclnnSoftmaxGetWorkspaceSize(tx, -1, outs[0], &ws_, &ex_), aclnnSoftmax);
    CHECK_EQ(st, ACLNN_SUCCESS);
    OP_RUN(st, aclnnLogSoftmaxGetWorkspaceSize(tx, -1, outs[1], &ws_, &ex_), aclnnLogSoftmax);
    CHECK_EQ(st, ACLNN_SUCCESS);
    OP_RUN(st, aclnnSoftmaxBackwardGetWorkspaceSize(tg, outs[0], -1, outs[2], &ws_, &ex_),
           aclnnSoftmaxBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    OP_RUN(st, aclnnLogSoftmaxBackwardGetWorkspaceSize(tg, outs[1], -1, outs[3], &ws_, &ex_),
           aclnnLogSoftmaxBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    OP_RUN(st, aclnnSoftmaxGetWorkspaceSize(tin, -1, tin, &ws_, &ex_), aclnnSoftmax); // in place
    CHECK_EQ(st, ACLNN_SUCCESS);
}

// Bits equal, or both NaN: which NaN an operation propagates (its sign, its payload) depends on
// the operand order the compiler picks for a commutative add (IEEE 754 leaves it open), and clang
// picks differently in the fp32 and 16-bit instantiations of a kernel.
static int64_t differing16(const uint16_t *a, const uint16_t *b, int64_t n, aclDataType dt) {
    int mant = dt == ACL_BF16 ? 7 : 10;
    uint16_t exp_mask = (uint16_t)(0x7fff & ~((1u << mant) - 1)),
             mant_mask = (uint16_t)((1u << mant) - 1);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        bool nan_a = (a[i] & exp_mask) == exp_mask && (a[i] & mant_mask);
        bool nan_b = (b[i] & exp_mask) == exp_mask && (b[i] & mant_mask);
        bad += a[i] != b[i] && !(nan_a && nan_b);
    }
    return bad;
}

static void test_fused16_bitwise(void) {
    static const int64_t lens[] = {1,  2,  7,  8,  15, 16,  17,  31,  32,
                                   33, 47, 63, 64, 65, 100, 257, 1031};
    static const aclDataType dts[] = {ACL_BF16, ACL_FLOAT16};
    static const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 60000.0f, -90.0f};
    enum { ROWS = 5 };
    for (int level = 0; level <= (int)opgrad_cpu_isa(); level++) {
        opgrad_set_max_isa((opgrad_isa)level);
        for (int d = 0; d < 2; d++)
            for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
                int64_t R = lens[li], n = ROWS * R, dims[2] = {ROWS, R};
                size_t bytes = (size_t)n * 2;
                uint16_t *x = test_dev_alloc(bytes), *g = test_dev_alloc(bytes);
                test_rng r;
                test_rng_seed(&r, 500 + (uint64_t)R);
                test_fill(x, 0, n, dts[d], &r, -12, 12);
                test_fill(g, 0, n, dts[d], &r, -3, 3);
                // row 1 holds special values (NaN / inf rows, -inf lanes, large spread)
                for (int64_t j = 0; j < R && R > 1; j += 3)
                    x[R + j] = dts[d] == ACL_BF16 ? og_f32_to_bf16(specials[j % 7])
                                                  : og_f32_to_f16(specials[j % 7]);
                uint16_t *res[2][5];
                for (int pass = 0; pass < 2; pass++) { // 0: buffered, 1: fused
                    if (pass == 0)
                        setenv("OPGRAD_FUSED16", "0", 1);
                    else
                        unsetenv("OPGRAD_FUSED16");
                    aclTensor *tx = test_tensor(dims, 2, dts[d], x),
                              *tg = test_tensor(dims, 2, dts[d], g);
                    aclTensor *to[4];
                    for (int k = 0; k < 5; k++) res[pass][k] = test_dev_alloc(bytes);
                    memcpy(res[pass][4], x, bytes);
                    for (int k = 0; k < 4; k++) to[k] = test_tensor(dims, 2, dts[d], res[pass][k]);
                    aclTensor *tin = test_tensor(dims, 2, dts[d], res[pass][4]);
                    run_all4(tx, tg, to, tin);
                    aclDestroyTensor(tx), aclDestroyTensor(tg), aclDestroyTensor(tin);
                    for (int k = 0; k < 4; k++) aclDestroyTensor(to[k]);
                }
                static const char *const what[5] = {"softmax", "log_softmax", "softmax_bwd",
                                                    "log_softmax_bwd", "softmax in place"};
                for (int k = 0; k < 5; k++)
                    CHECKF(differing16(res[0][k], res[1][k], n, dts[d]) == 0,
                           "%s %s R=%lld level %s: fused differs from buffered", what[k],
                           dts[d] == ACL_BF16 ? "bf16" : "fp16", (long long)R,
                           opgrad_isa_name((opgrad_isa)level));
                for (int pass = 0; pass < 2; pass++)
                    for (int k = 0; k < 5; k++) aclrtFree(res[pass][k]);
                aclrtFree(x), aclrtFree(g);
            }
    }
    opgrad_set_max_isa((opgrad_isa)(OPGRAD_ISA_COUNT - 1));
}

int main(void) {
    aclInit(NULL);
    RUN(test_statuses);
    RUN(test_values);
    RUN(test_threads_bitwise);
    RUN(test_inplace_and_dtypes);
    RUN(test_special_rows);
    RUN(test_prefetched_rows);
    RUN(test_ymm_stream_rows);
    RUN(test_fused16_bitwise);
    return test_summary();
}
