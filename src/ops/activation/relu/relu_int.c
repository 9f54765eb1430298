/* Relu and ThresholdBackward on integer tensors (INT8, UINT8, INT32, INT64, as ops-nn accepts
 * them): out = x > threshold ? g : 0, with g = x for Relu. Integers are not routed through the
 * fp32 engine, whose tiles would round values above 2^24: the comparison and the copy are exact.
 * The threshold (a float, aclnn's ToFloat of the scalar) is compared with x over the reals:
 * x > t exactly when x > floor(t), so the kernel compares integers with floor(t), clamped to the
 * dtype's range. (PyTorch converts the threshold to the integer type first, truncating toward
 * zero: the two agree except for a negative non-integer threshold, where x = trunc(t) passes
 * here and not in PyTorch.) A CUSTOM step: broadcast strides, any layout, run on the pool. */
#include "ops/activation/relu/relu_int.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "engine/program.h"
#include "runtime/pool.h"

enum { UNIT_ELEMS = 1 << 15 }; // elements per pool unit

typedef struct int_threshold {
    aclDataType dtype;
    int esize, ndim, nslots, threads;
    int slot[3];                     // g, x, out (g and x the same slot for Relu)
    int64_t dims[OG_MAX_DIMS];       // out's shape
    int64_t strides[3][OG_MAX_DIMS]; // elements; 0 along a broadcast dim
    int64_t total;                   // out's elements
    int64_t limit;                   // x passes when x > limit ...
    bool all;                        // ... or always (a threshold below the int64 range)
    bool one;                        // a passing element writes 1, not g (a step function)
} int_threshold;

typedef struct int_ctx {
    const int_threshold *p;
    char *base[3];
} int_ctx;

#define THRESHOLD_RUN(T)                                                                           \
    do {                                                                                           \
        const T *g_ = (const T *)g, *x_ = (const T *)x;                                            \
        T *o_ = (T *)o;                                                                            \
        for (int64_t i = 0; i < n; i++)                                                            \
            o_[i * so] = all || (int64_t)x_[i * sx] > limit ? (one ? (T)1 : g_[i * sg]) : (T)0;    \
    } while (0)

static void threshold_run(aclDataType dt, const char *g, int64_t sg, const char *x, int64_t sx,
                          char *o, int64_t so, int64_t n, int64_t limit, bool all, bool one) {
    switch (dt) {
    case ACL_INT8:
        THRESHOLD_RUN(int8_t);
        break;
    case ACL_UINT8:
        THRESHOLD_RUN(uint8_t);
        break;
    case ACL_INT32:
        THRESHOLD_RUN(int32_t);
        break;
    default: // ACL_INT64
        THRESHOLD_RUN(int64_t);
        break;
    }
}
#undef THRESHOLD_RUN

static void threshold_unit(void *vctx, int core, int slot) {
    (void)slot;
    const int_ctx *c = vctx;
    const int_threshold *p = c->p;
    int64_t start = (int64_t)core * UNIT_ELEMS, left = p->total - start;
    if (left > UNIT_ELEMS) left = UNIT_ELEMS;
    int last = p->ndim - 1;
    int64_t idx[OG_MAX_DIMS], off[3] = {0, 0, 0}, rem = start;
    for (int d = last; d >= 0; d--) {
        idx[d] = rem % p->dims[d];
        rem /= p->dims[d];
        for (int k = 0; k < 3; k++) off[k] += idx[d] * p->strides[k][d];
    }
    while (left > 0) {
        int64_t n = p->dims[last] - idx[last];
        if (n > left) n = left;
        threshold_run(p->dtype, c->base[0] + off[0] * p->esize, p->strides[0][last],
                      c->base[1] + off[1] * p->esize, p->strides[1][last],
                      c->base[2] + off[2] * p->esize, p->strides[2][last], n, p->limit, p->all,
                      p->one);
        left -= n;
        idx[last] += n;
        for (int k = 0; k < 3; k++) off[k] += n * p->strides[k][last];
        for (int d = last; d > 0 && idx[d] == p->dims[d]; d--) {
            for (int k = 0; k < 3; k++) off[k] += p->strides[k][d - 1] - idx[d] * p->strides[k][d];
            idx[d] = 0;
            idx[d - 1]++;
        }
    }
}

static void threshold_int_run(const aclOpExecutor *e, const void *params, char *scratch) {
    (void)scratch;
    const int_threshold *p = params;
    int_ctx c = {p, {NULL, NULL, NULL}};
    for (int k = 0; k < 3; k++) c.base[k] = og_executor_addr(e, p->slot[k]);
    int64_t units = (p->total + UNIT_ELEMS - 1) / UNIT_ELEMS;
    og_parallel_for((int)units, p->threads, threshold_unit, &c);
}

// t's view strides as seen from out's index space (right-aligned, 0 where t broadcasts).
static void broadcast_strides(const aclTensor *t, const aclTensor *out, int64_t *strides) {
    int shift = out->ndim - t->ndim;
    for (int d = 0; d < out->ndim; d++) {
        int td = d - shift;
        strides[d] = td < 0 || t->dims[td] == 1 ? 0 : t->strides[td];
    }
}

// The integer limit of "x > t" for x of dtype dt: floor(t) clamped to [min - 1, max].
static int64_t threshold_limit(double t, aclDataType dt, bool *all) {
    double lo = dt == ACL_INT8    ? -129.0
                : dt == ACL_UINT8 ? -1.0
                : dt == ACL_INT32 ? -2147483649.0
                                  : -0x1p63;
    double hi = dt == ACL_INT8    ? 127.0
                : dt == ACL_UINT8 ? 255.0
                : dt == ACL_INT32 ? 2147483647.0
                                  : 0x1p63;
    *all = false;
    if (isnan(t)) return INT64_MAX; // nothing is greater than NaN: nothing passes
    double f = floor(t);
    if (f < lo) {
        *all = dt == ACL_INT64; // below INT64_MIN every int64 passes; narrower types use lo
        return (int64_t)lo;
    }
    if (f >= hi) return dt == ACL_INT64 ? INT64_MAX : (int64_t)hi;
    return (int64_t)f;
}

static aclnnStatus plan_int(const og_opdesc *op, int nin, const aclTensor *const *io,
                            const char *const *names, float threshold, bool one,
                            uint64_t *workspaceSize, aclOpExecutor **executor) {
    const aclTensor *out = io[nin];
    OG_TRY(og_check_io_memory(op, nin, io, 1, &out, names));
    og_prog p;
    og_prog_init(&p, op, nin, 1, io);
    if (out->numel > 0) {
        int_threshold t;
        memset(&t, 0, sizeof t);
        t.dtype = out->dtype;
        t.esize = (int)aclDataTypeSize(out->dtype);
        // a rank-0 tensor is one element of a rank-1 space
        t.ndim = out->ndim > 0 ? out->ndim : 1;
        for (int d = 0; d < t.ndim; d++) t.dims[d] = out->ndim > 0 ? out->dims[d] : 1;
        const aclTensor *g = io[0], *x = io[nin - 1];
        if (out->ndim > 0) {
            broadcast_strides(g, out, t.strides[0]);
            broadcast_strides(x, out, t.strides[1]);
            broadcast_strides(out, out, t.strides[2]);
        }
        t.slot[0] = 0, t.slot[1] = nin - 1, t.slot[2] = nin;
        t.total = out->numel;
        t.limit = threshold_limit(threshold, out->dtype, &t.all);
        t.one = one;
        t.threads = og_num_threads();
        int slots[3] = {0, nin - 1, nin};
        og_prog_custom(&p, threshold_int_run, &t, sizeof t, slots, 3, 0);
        og_prog_note(&p, one ? "integer: exact step" : "integer: exact compare and copy");
    }
    return og_prog_publish(&p, workspaceSize, executor);
}

aclnnStatus og_plan_threshold_int(const og_opdesc *op, int nin, const aclTensor *const *io,
                                  const char *const *names, float threshold,
                                  uint64_t *workspaceSize, aclOpExecutor **executor) {
    return plan_int(op, nin, io, names, threshold, false, workspaceSize, executor);
}

aclnnStatus og_plan_step_int(const og_opdesc *op, const aclTensor *const *io,
                             const char *const *names, float threshold, uint64_t *workspaceSize,
                             aclOpExecutor **executor) {
    return plan_int(op, 1, io, names, threshold, true, workspaceSize, executor);
}
