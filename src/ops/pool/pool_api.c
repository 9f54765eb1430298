/* The pooling family: aclnnMaxPool2dWithIndices, aclnnAvgPool2d, aclnnAdaptiveAvgPool2d and their
 * backwards.
 *
 * None of them is elementwise, a reduction along whole dims or a row kernel, so each is one CUSTOM
 * step (engine/program.h) over [N, C, H, W] / [C, H, W] tensors seen as N * C planes. Planes are
 * independent and each is computed whole by one thread, so the bits never depend on the thread
 * count or on how planes are grouped into units:
 *   forwards   per output row, the window's taps in window order (row-major), each tap a loop over
 *              the output columns whose tap lands inside the input (padding never enters a sum or
 *              a max, and the inner loop has no branch on the edge): fp32 sums in window order;
 *   backwards  per plane, a serial scatter into an fp32 plane in a fixed order (output order; for
 *              the average pools, within one output row the taps left to right), then the plane
 *              is stored in gradInput's dtype and strides: windows that overlap add up in an order
 *              fixed by the shape alone.
 * fp32 planes whose rows are contiguous are read in place; others are converted into an fp32 plane
 * per thread first (16-bit inputs are computed in fp32 and rounded once on the way out).
 *
 * Output sizes (PyTorch's and the aclnn docs' rule): out = floor((in + 2 pad - dil (k - 1) - 1) /
 * s) + 1, or with ceil mode rounded up and then one less when the last window would start at or
 * past in + pad (it would lie in the right padding alone). docs/ops/pool.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "aclnnop/aclnn_adaptive_avg_pool2d.h"
#include "aclnnop/aclnn_adaptive_avg_pool2d_backward.h"
#include "aclnnop/aclnn_avgpool2d.h"
#include "aclnnop/aclnn_avgpool2d_backward.h"
#include "aclnnop/aclnn_max_pool2d_with_indices.h"
#include "aclnnop/aclnn_max_pool2d_with_indices_backward.h"
#include "engine/convert.h"
#include "engine/isa_table.h"
#include "engine/program.h"
#include "ops/common/checks.h"
#include "ops/pool/pool_kernel.h"
#include "runtime/cpu.h"
#include "runtime/pool.h"

enum { POOL_MAX, POOL_AVG, POOL_ADAPTIVE };

const og_pool_max_fn og_pool_max_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_pool_max);
const og_pool_sum_fn og_pool_sum_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_pool_sum);
const og_pool_add_fn og_pool_add_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_pool_add);
const og_pool_run_fn og_pool_run_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_pool_run);
const og_pool_runs_fn og_pool_runs_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_pool_runs);

// Attribute values are at most this (so that products like dil * (k - 1) fit int64 with room).
#define POOL_ATTR_MAX ((int64_t)1 << 31)

// A tensor's planes: plane p is (n, c) = (p / C, p % C); element (h, w) of it at
// n * sn + c * sc + h * sh + w * sw (elements).
typedef struct pool_view {
    aclDataType dt;
    int es;
    int64_t C, sn, sc, sh, sw;
    bool uniform; // plane p at p * sc (one batch, a 3-d tensor, or batches C planes apart)
} pool_view;

static void view_of(pool_view *v, const aclTensor *t) {
    int r = t->ndim;
    v->dt = t->dtype;
    v->es = (int)aclDataTypeSize(t->dtype);
    v->C = t->dims[r - 3];
    v->sn = r == 4 ? t->strides[0] : 0;
    v->sc = t->strides[r - 3];
    v->sh = t->strides[r - 2];
    v->sw = t->strides[r - 1];
    v->uniform = r == 3 || t->dims[0] == 1 || v->sn == v->C * v->sc;
}

static int64_t plane_offset(const pool_view *v, int64_t p) {
    return v->uniform ? p * v->sc : (p / v->C) * v->sn + (p % v->C) * v->sc;
}

// The parameters phase 2 runs with (a copy in the executor).
typedef struct pool_plan {
    int kind;
    bool backward;
    bool count_pad;
    bool idx_out;        // forward max: an indices output
    bool global;         // forward adaptive to 1 x 1, fp32 planes dense and equally spaced
    pool_view a, b, idx; // forward: a = self, b = out; backward: a = gradOutput, b = gradInput
    int slot_a, slot_b, slot_idx;
    int64_t planes, H, W, Ho, Wo;
    int64_t kh, kw, sh, sw, ph, pw, dh, dw, divisor;
    int threads;
    opgrad_isa isa;
    int64_t per_unit, units;
    uint64_t slot_bytes;  // scratch bytes per thread
    uint64_t table_bytes; // adaptive: the window tables, before the threads' scratch
} pool_plan;

typedef struct pool_ctx {
    const pool_plan *p;
    const og_convert_table *cv;
    og_pool_max_fn max;
    og_pool_sum_fn sum;
    og_pool_add_fn add;
    og_pool_run_fn run;
    og_pool_runs_fn runs;
    int64_t *hs, *he, *ws, *we; // adaptive windows: rows [hs[o], he[o]), columns likewise
    const char *a;
    char *b, *idx;
    char *scratch;
} pool_ctx;

static uint64_t align64u(uint64_t x) { return (x + 63) & ~(uint64_t)63; }

// Output columns ow in [*lo, *hi] (empty when *lo > *hi) whose tap at offset `off` (w = ow * s +
// off) lands inside [0, W).
static void tap_range(int64_t off, int64_t s, int64_t W, int64_t Wo, int64_t *lo, int64_t *hi) {
    *lo = off >= 0 ? 0 : (-off + s - 1) / s;
    *hi = W - 1 - off < 0 ? -1 : (W - 1 - off) / s;
    if (*hi > Wo - 1) *hi = Wo - 1;
}

// ---- forward rows ---------------------------------------------------------------------------

static void max_row(const pool_ctx *c, const float *x, int64_t ld, int64_t oh, float *m,
                    int32_t *id) {
    const pool_plan *p = c->p;
    for (int64_t ow = 0; ow < p->Wo; ow++) m[ow] = -INFINITY, id[ow] = -1;
    int64_t h0 = oh * p->sh - p->ph;
    for (int64_t i = 0; i < p->kh; i++) {
        int64_t h = h0 + i * p->dh;
        if (h < 0 || h >= p->H) continue;
        for (int64_t j = 0; j < p->kw; j++) {
            int64_t off = j * p->dw - p->pw, lo, hi;
            tap_range(off, p->sw, p->W, p->Wo, &lo, &hi);
            // PyTorch's rule: the first valid tap to start with, then a strictly larger value or
            // a NaN replaces it (the first maximum in window order; the last NaN)
            if (lo <= hi)
                c->max(x + h * ld + lo * p->sw + off, p->sw, hi - lo + 1,
                       (int32_t)(h * p->W + lo * p->sw + off), m + lo, id + lo);
        }
    }
}

// The window of output row/column o along an axis of size n (avg pool): [*a, *b) clipped to
// the input, and its size clipped to [-pad, n + pad) (countIncludePad's divisor).
static void avg_window(int64_t o, int64_t s, int64_t pad, int64_t k, int64_t n, int64_t *a,
                       int64_t *b, int64_t *padded) {
    int64_t start = o * s - pad, end = start + k;
    if (end > n + pad) end = n + pad;
    *padded = end - start;
    *a = start < 0 ? 0 : start;
    *b = end > n ? n : end;
}

static float avg_divisor(const pool_plan *p, int64_t hn, int64_t hpad, int64_t ow) {
    if (p->divisor) return (float)p->divisor;
    int64_t a, b, wpad;
    avg_window(ow, p->sw, p->pw, p->kw, p->W, &a, &b, &wpad);
    return (float)(p->count_pad ? hpad * wpad : hn * (b - a));
}

static void avg_row(const pool_ctx *c, const float *x, int64_t ld, int64_t oh, float *acc) {
    const pool_plan *p = c->p;
    for (int64_t ow = 0; ow < p->Wo; ow++) acc[ow] = 0.0f;
    int64_t h0, h1, hpad;
    avg_window(oh, p->sh, p->ph, p->kh, p->H, &h0, &h1, &hpad);
    for (int64_t h = h0; h < h1; h++) {
        const float *row = x + h * ld;
        for (int64_t j = 0; j < p->kw; j++) {
            int64_t off = j - p->pw, lo, hi;
            tap_range(off, p->sw, p->W, p->Wo, &lo, &hi);
            if (lo <= hi) c->sum(row + lo * p->sw + off, p->sw, hi - lo + 1, acc + lo);
        }
    }
    for (int64_t ow = 0; ow < p->Wo; ow++) acc[ow] /= avg_divisor(p, h1 - h0, hpad, ow);
}

// Adaptive windows (PyTorch): [floor(o n / no), ceil((o + 1) n / no)).
static int64_t ad_start(int64_t o, int64_t n, int64_t no) { return o * n / no; }
static int64_t ad_end(int64_t o, int64_t n, int64_t no) { return ((o + 1) * n + no - 1) / no; }

static void adaptive_row(const pool_ctx *c, const float *x, int64_t ld, int64_t oh, float *acc) {
    const pool_plan *p = c->p;
    int64_t h0 = c->hs[oh], h1 = c->he[oh];
    for (int64_t ow = 0; ow < p->Wo; ow++) {
        int64_t w0 = c->ws[ow], w1 = c->we[ow];
        float s = 0.0f;
        if (w0 == 0 && w1 == p->W && ld == p->W) // whole rows of a dense plane: one run
            s = c->run(x + h0 * ld, (h1 - h0) * p->W);
        else
            for (int64_t h = h0; h < h1; h++) s += c->run(x + h * ld + w0, w1 - w0);
        // PyTorch divides by the two extents one after the other
        acc[ow] = s / (float)(h1 - h0) / (float)(w1 - w0);
    }
}

// ---- phase 2 --------------------------------------------------------------------------------

// Plane p of view v (at base) as fp32 rows: in place when it is fp32 with contiguous rows (*ld =
// the row stride), else converted into buf (*ld = ncols).
static const float *load_plane(const pool_ctx *c, const pool_view *v, const char *base, int64_t p,
                               int64_t rows, int64_t cols, float *buf, int64_t *ld) {
    const char *first = base + plane_offset(v, p) * v->es;
    if (v->dt == ACL_FLOAT && (v->sw == 1 || cols == 1)) {
        *ld = v->sh;
        return (const float *)first;
    }
    if (v->sw == 1 && v->sh == cols) // a dense plane: one conversion call (small planes)
        og_load_run(c->cv, first, v->dt, 1, buf, rows * cols);
    else
        for (int64_t r = 0; r < rows; r++)
            og_load_run(c->cv, first + r * v->sh * v->es, v->dt, v->sw, buf + r * cols, cols);
    *ld = cols;
    return buf;
}

static void store_row(const pool_ctx *c, const pool_view *v, char *base, int64_t p, int64_t r,
                      const float *src, int64_t n) {
    og_store_run(c->cv, base + (plane_offset(v, p) + r * v->sh) * v->es, v->dt, v->sw, src, n,
                 false);
}

static void forward_plane(const pool_ctx *c, int64_t p, char *scratch) {
    const pool_plan *P = c->p;
    float *xbuf = (float *)scratch;
    float *acc = (float *)(scratch + align64u((uint64_t)(P->H * P->W) * 4));
    int32_t *id = (int32_t *)((char *)acc + align64u((uint64_t)P->Wo * 4));
    int64_t ld;
    const float *x = load_plane(c, &P->a, c->a, p, P->H, P->W, xbuf, &ld);
    // fp32 output rows that are contiguous are computed in place (no copy)
    bool direct = P->b.dt == ACL_FLOAT && (P->b.sw == 1 || P->Wo == 1);
    float *out = direct ? (float *)(c->b + plane_offset(&P->b, p) * 4) : NULL;
    for (int64_t oh = 0; oh < P->Ho; oh++) {
        float *row = direct ? out + oh * P->b.sh : acc;
        if (P->kind == POOL_MAX)
            max_row(c, x, ld, oh, row, id);
        else if (P->kind == POOL_AVG)
            avg_row(c, x, ld, oh, row);
        else
            adaptive_row(c, x, ld, oh, row);
        if (!direct) store_row(c, &P->b, c->b, p, oh, acc, P->Wo);
        if (P->kind != POOL_MAX) continue;
        char *irow = c->idx + (plane_offset(&P->idx, p) + oh * P->idx.sh) * P->idx.es;
        for (int64_t ow = 0; ow < P->Wo; ow++) {
            char *q = irow + ow * P->idx.sw * P->idx.es;
            if (P->idx.dt == ACL_INT32)
                *(int32_t *)q = (int32_t)id[ow];
            else
                *(int64_t *)q = id[ow];
        }
    }
}

static void backward_plane(const pool_ctx *c, int64_t p, char *scratch) {
    const pool_plan *P = c->p;
    float *gi = (float *)scratch;
    float *q = (float *)(scratch + align64u((uint64_t)(P->H * P->W) * 4));
    float *gbuf = (float *)((char *)q + align64u((uint64_t)P->Wo * 4));
    // a dense fp32 gradInput plane is accumulated in place (it overlaps no input)
    bool direct =
        P->b.dt == ACL_FLOAT && (P->b.sw == 1 || P->W == 1) && (P->b.sh == P->W || P->H == 1);
    if (direct) gi = (float *)(c->b + plane_offset(&P->b, p) * 4);
    memset(gi, 0, (size_t)(P->H * P->W) * sizeof *gi);
    int64_t ld;
    const float *g = load_plane(c, &P->a, c->a, p, P->Ho, P->Wo, gbuf, &ld);
    const char *ip = P->kind == POOL_MAX ? c->idx + plane_offset(&P->idx, p) * P->idx.es : NULL;
    int64_t HW = P->H * P->W;
    for (int64_t oh = 0; oh < P->Ho; oh++) {
        const float *grow = g + oh * ld;
        if (P->kind == POOL_MAX) {
            // the scatter to the argmax, in output order; an index outside the plane adds nothing
            bool i32 = P->idx.dt == ACL_INT32;
            const int32_t *r32 = i32 ? (const int32_t *)ip + oh * P->idx.sh : NULL;
            const int64_t *r64 = i32 ? NULL : (const int64_t *)ip + oh * P->idx.sh;
            int64_t is = P->idx.sw;
            for (int64_t ow = 0; ow < P->Wo; ow++) {
                int64_t k = i32 ? r32[ow * is] : r64[ow * is];
                if (k >= 0 && k < HW) gi[k] += grow[ow];
            }
        } else if (P->kind == POOL_AVG) {
            int64_t h0, h1, hpad;
            avg_window(oh, P->sh, P->ph, P->kh, P->H, &h0, &h1, &hpad);
            for (int64_t ow = 0; ow < P->Wo; ow++)
                q[ow] = grow[ow] / avg_divisor(P, h1 - h0, hpad, ow);
            for (int64_t h = h0; h < h1; h++) {
                float *girow = gi + h * P->W;
                for (int64_t j = 0; j < P->kw; j++) {
                    int64_t off = j - P->pw, lo, hi;
                    tap_range(off, P->sw, P->W, P->Wo, &lo, &hi);
                    if (lo <= hi) c->add(girow + lo * P->sw + off, P->sw, hi - lo + 1, q + lo);
                }
            }
        } else {
            int64_t h0 = c->hs[oh], h1 = c->he[oh];
            for (int64_t ow = 0; ow < P->Wo; ow++) {
                int64_t w0 = c->ws[ow], w1 = c->we[ow];
                float d = grow[ow] / (float)(h1 - h0) / (float)(w1 - w0);
                for (int64_t h = h0; h < h1; h++)
                    for (int64_t w = w0; w < w1; w++) gi[h * P->W + w] += d;
            }
        }
    }
    if (direct) return;
    if (P->b.sw == 1 && P->b.sh == P->W) // a dense plane: one conversion call
        store_row(c, &P->b, c->b, p, 0, gi, P->H * P->W);
    else
        for (int64_t h = 0; h < P->H; h++) store_row(c, &P->b, c->b, p, h, gi + h * P->W, P->W);
}

static void pool_unit(void *vctx, int core, int slot) {
    const pool_ctx *c = vctx;
    const pool_plan *P = c->p;
    char *scratch = c->scratch + (uint64_t)slot * P->slot_bytes;
    int64_t p0 = (int64_t)core * P->per_unit, p1 = p0 + P->per_unit;
    if (p1 > P->planes) p1 = P->planes;
    if (P->global) { // adaptive to 1 x 1 of dense fp32 planes: the same sums in one loop
        c->runs((const float *)c->a + p0 * P->a.sc, P->H * P->W, P->a.sc, p1 - p0, (float)P->H,
                (float)P->W, (float *)c->b + p0 * P->b.sc, P->b.sc);
        return;
    }
    for (int64_t p = p0; p < p1; p++) {
        if (P->backward)
            backward_plane(c, p, scratch);
        else
            forward_plane(c, p, scratch);
    }
}

static void pool_run(const aclOpExecutor *e, const void *params, char *scratch) {
    const pool_plan *p = params;
    pool_ctx c = {.p = p,
                  .cv = &og_convert[p->isa],
                  .max = og_pool_max_kernels[p->isa],
                  .sum = og_pool_sum_kernels[p->isa],
                  .add = og_pool_add_kernels[p->isa],
                  .run = og_pool_run_kernels[p->isa],
                  .runs = og_pool_runs_kernels[p->isa],
                  .a = og_executor_addr(e, p->slot_a),
                  .b = og_executor_addr(e, p->slot_b),
                  .idx = p->slot_idx >= 0 ? og_executor_addr(e, p->slot_idx) : NULL,
                  .scratch = scratch + p->table_bytes};
    if (p->kind == POOL_ADAPTIVE) { // the windows once per launch, not per plane
        int64_t *t = (int64_t *)scratch;
        c.hs = t, c.he = t + p->Ho, c.ws = t + 2 * p->Ho, c.we = t + 2 * p->Ho + p->Wo;
        for (int64_t o = 0; o < p->Ho; o++)
            c.hs[o] = ad_start(o, p->H, p->Ho), c.he[o] = ad_end(o, p->H, p->Ho);
        for (int64_t o = 0; o < p->Wo; o++)
            c.ws[o] = ad_start(o, p->W, p->Wo), c.we[o] = ad_end(o, p->W, p->Wo);
    }

    og_parallel_for((int)p->units, p->threads, pool_unit, &c);
}

// ---- phase 1 --------------------------------------------------------------------------------

// An int-array attribute: a live array of a length in [minlen, 2], entries >= lo (and at most
// POOL_ATTR_MAX); *v = its two values (one entry: both; none: dflt).
static aclnnStatus get_pair(const og_opdesc *op, const char *name, const aclIntArray *a, int minlen,
                            int64_t lo, const int64_t *dflt, int64_t *v) {
    char fn[96];
    snprintf(fn, sizeof fn, "%sGetWorkspaceSize", op->name);
    OG_TRY(og_check_live(fn, name, a, OG_OBJ_INT_ARRAY));
    if (a->size < (uint64_t)minlen || a->size > 2)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: %s has %llu entries; it must have %s", fn,
                       name, (unsigned long long)a->size,
                       minlen == 0 ? "0 (the kernel size), 1 or 2" : "1 or 2");
    for (uint64_t i = 0; i < a->size; i++)
        if (a->values[i] < lo || a->values[i] > POOL_ATTR_MAX)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%s: %s[%llu] is %lld; it must be in [%lld, %lld]", fn, name,
                           (unsigned long long)i, (long long)a->values[i], (long long)lo,
                           (long long)POOL_ATTR_MAX);
    if (a->size == 0)
        v[0] = dflt[0], v[1] = dflt[1];
    else
        v[0] = a->values[0], v[1] = a->values[a->size - 1];
    return ACLNN_SUCCESS;
}

// The output extent along one axis, or -1 when no window fits.
static int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t pad, int64_t dil,
                        bool ceil_mode) {
    int64_t span = in + 2 * pad - dil * (k - 1) - 1;
    if (span < 0) return -1;
    int64_t out = (span + (ceil_mode ? s - 1 : 0)) / s + 1;
    // ceil mode: a last window that would start in the right padding is dropped
    if (ceil_mode && (out - 1) * s >= in + pad) out--;
    return out;
}

typedef struct pool_attrs {
    int64_t k[2], s[2], pad[2], dil[2];
    bool ceil_mode;
} pool_attrs;

static aclnnStatus get_attrs(const og_opdesc *op, const char *const *names,
                             const aclIntArray *kernel, const aclIntArray *stride,
                             const aclIntArray *padding, const aclIntArray *dilation,
                             bool ceil_mode, pool_attrs *a) {
    static const int64_t ones[2] = {1, 1};
    OG_TRY(get_pair(op, names[0], kernel, 1, 1, ones, a->k));
    OG_TRY(get_pair(op, names[1], stride, 0, 1, a->k, a->s));
    OG_TRY(get_pair(op, names[2], padding, 1, 0, ones, a->pad));
    if (dilation)
        OG_TRY(get_pair(op, names[3], dilation, 1, 1, ones, a->dil));
    else
        a->dil[0] = a->dil[1] = 1;
    for (int d = 0; d < 2; d++)
        if (a->pad[d] > a->k[d] / 2)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: %s is %lld along %s but kernelSize is %lld; the "
                           "padding must be at most half the kernel size",
                           op->name, names[2], (long long)a->pad[d], d ? "W" : "H",
                           (long long)a->k[d]);
    a->ceil_mode = ceil_mode;
    return ACLNN_SUCCESS;
}

// self: a float tensor of rank 3 or 4 whose C, H, W are non-empty (N may be 0, as in PyTorch).
static aclnnStatus check_input(const og_opdesc *op, const char *name, const aclTensor *t) {
    OG_TRY(og_check_tensor(op, name, t, 3));
    if (t->ndim > 4)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has rank %d; it must be 3 ([C, H, W]) or 4 "
                       "([N, C, H, W])",
                       op->name, name, t->ndim);
    for (int d = t->ndim - 2; d < t->ndim; d++) // keeps the window arithmetic within int64
        if (t->dims[d] > POOL_ATTR_MAX)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: %s has %s %lld; supported: at most %lld", op->name,
                           name, d == t->ndim - 2 ? "height" : "width", (long long)t->dims[d],
                           (long long)POOL_ATTR_MAX);
    for (int d = t->ndim - 3; d < t->ndim; d++)
        if (t->dims[d] == 0) {
            char a[128];
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: %s has shape %s; its C, H and W must be non-zero "
                           "(only N may be 0)",
                           op->name, name, og_shape_str(t->dims, t->ndim, a, sizeof a));
        }
    return ACLNN_SUCCESS;
}

// t has exactly the shape want (of want_nd dims).
static aclnnStatus check_shape(const og_opdesc *op, const char *name, const aclTensor *t,
                               const int64_t *want, int want_nd, const char *why) {
    bool ok = t->ndim == want_nd;
    for (int d = 0; ok && d < want_nd; d++) ok = t->dims[d] == want[d];
    if (ok) return ACLNN_SUCCESS;
    char a[128], b[128];
    return og_fail(ACLNN_ERR_PARAM_INVALID,
                   "%sGetWorkspaceSize: %s has shape %s; it must be %s (%s)", op->name, name,
                   og_shape_str(t->dims, t->ndim, a, sizeof a),
                   og_shape_str(want, want_nd, b, sizeof b), why);
}

// The output shape of self pooled to Ho x Wo.
static void pooled_shape(const aclTensor *self, int64_t Ho, int64_t Wo, int64_t *dims) {
    for (int d = 0; d < self->ndim; d++) dims[d] = self->dims[d];
    dims[self->ndim - 2] = Ho, dims[self->ndim - 1] = Wo;
}

// Ho, Wo of self under the attributes (161002 when no window fits).
static aclnnStatus pooled_size(const og_opdesc *op, const aclTensor *self, const pool_attrs *a,
                               int64_t *HoWo) {
    for (int d = 0; d < 2; d++) {
        int64_t in = self->dims[self->ndim - 2 + d];
        HoWo[d] = out_size(in, a->k[d], a->s[d], a->pad[d], a->dil[d], a->ceil_mode);
        if (HoWo[d] <= 0)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: the output %s would be empty: input %lld, padding "
                           "%lld, dilated kernel %lld",
                           op->name, d ? "width" : "height", (long long)in, (long long)a->pad[d],
                           (long long)(a->dil[d] * (a->k[d] - 1) + 1));
    }
    return ACLNN_SUCCESS;
}

// Outputs may not overlap any input (a window reads neighbours an in-place write would have
// changed), on top of the shared memory rules.
static aclnnStatus check_memory(const og_opdesc *op, int nin, const aclTensor *const *in, int nout,
                                const aclTensor *const *out, const char *const *names) {
    OG_TRY(og_check_io_memory(op, nin, in, nout, out, names));
    for (int o = 0; o < nout; o++)
        for (int i = 0; i < nin; i++)
            if (out[o]->numel > 0 && in[i]->numel > 0 && og_tensors_overlap(out[o], in[i]))
                return og_fail(ACLNN_ERR_PARAM_INVALID,
                               "%sGetWorkspaceSize: %s overlaps %s; pooling cannot run in place",
                               op->name, names[nin + o], names[i]);
    return ACLNN_SUCCESS;
}

static aclnnStatus check_cube_math(const og_opdesc *op, int8_t cubeMathType) {
    if (cubeMathType >= 0 && cubeMathType <= 3) return ACLNN_SUCCESS;
    return og_fail(ACLNN_ERR_PARAM_INVALID,
                   "%sGetWorkspaceSize: cubeMathType = %d is not one of 0 (KEEP_DTYPE), 1 "
                   "(ALLOW_FP32_DOWN_PRECISION), 2 (USE_FP16), 3 (USE_HF32)",
                   op->name, (int)cubeMathType);
}

// Fills the geometry and threading of a plan over self's planes and publishes the program.
static aclnnStatus publish(og_prog *prog, pool_plan *P, const aclTensor *self, int64_t Ho,
                           int64_t Wo, const int *slots, int nslots, uint64_t *workspaceSize,
                           aclOpExecutor **executor) {
    int r = self->ndim;
    P->planes = self->dims[r - 3] * (r == 4 ? self->dims[0] : 1);
    P->H = self->dims[r - 2], P->W = self->dims[r - 1], P->Ho = Ho, P->Wo = Wo;
    if (P->planes > 0) {
        P->threads = og_num_threads();
        P->isa = og_isa();
        // a few units per thread (planes of one unit run on one thread; any grouping gives the
        // same bits, since no plane is split)
        int64_t units = (int64_t)P->threads * 8;
        if (units > P->planes) units = P->planes;
        P->per_unit = (P->planes + units - 1) / units;
        P->units = (P->planes + P->per_unit - 1) / P->per_unit;
        uint64_t plane = align64u((uint64_t)(P->H * P->W) * 4);
        uint64_t row = align64u((uint64_t)P->Wo * 8);
        uint64_t outp = align64u((uint64_t)(P->Ho * P->Wo) * 4);
        P->slot_bytes = P->backward ? plane + row + outp : plane + row + row;
        if (P->kind == POOL_ADAPTIVE) P->table_bytes = align64u((uint64_t)(P->Ho + P->Wo) * 16);
        og_prog_custom(prog, pool_run, P, sizeof *P, slots, nslots,
                       P->table_bytes + P->slot_bytes * (uint64_t)P->threads);
    }
    return og_prog_publish(prog, workspaceSize, executor);
}

// ---- MaxPool2dWithIndices -------------------------------------------------------------------

// Indices are positions in a plane, kept in int32 while computed: planes up to 2^31 - 1 elements.
static aclnnStatus check_plane_int32(const og_opdesc *op, const aclTensor *self) {
    int64_t H = self->dims[self->ndim - 2], W = self->dims[self->ndim - 1];
    if (H <= INT32_MAX / W) return ACLNN_SUCCESS;
    return og_fail(ACLNN_ERR_PARAM_INVALID,
                   "%sGetWorkspaceSize: self's planes have %lld x %lld elements; supported: at "
                   "most 2^31 - 1 per plane",
                   op->name, (long long)H, (long long)W);
}

static const char *const max_attr_names[] = {"kernelSize", "stride", "padding", "dilation"};

static aclnnStatus check_indices(const og_opdesc *op, const char *name, const aclTensor *t) {
    char fn[96];
    snprintf(fn, sizeof fn, "%sGetWorkspaceSize", op->name);
    OG_TRY(og_check_live(fn, name, t, OG_OBJ_TENSOR));
    if (t->dtype != ACL_INT32 && t->dtype != ACL_INT64)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: %s has dtype %s; supported: int32, int64", fn,
                       name, og_dtype_name(t->dtype));
    return og_check_fits_block(op, name, t);
}

aclnnStatus aclnnMaxPool2dWithIndicesGetWorkspaceSize(
    const aclTensor *self, const aclIntArray *kernelSize, const aclIntArray *stride,
    const aclIntArray *padding, const aclIntArray *dilation, bool ceilMode, aclTensor *out,
    aclTensor *indices, uint64_t *workspaceSize, aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_MaxPool2dWithIndices;
    const char *names[] = {"self", "kernelSize", "stride", "padding", "dilation", "out", "indices"};
    const void *ptrs[] = {self, kernelSize, stride, padding, dilation, out, indices};
    OG_TRY(og_check_args(op, workspaceSize, executor, 7, names, ptrs));
    OG_TRY(check_input(op, "self", self));
    pool_attrs a;
    OG_TRY(get_attrs(op, max_attr_names, kernelSize, stride, padding, dilation, ceilMode, &a));
    int64_t HoWo[2], want[4];
    OG_TRY(pooled_size(op, self, &a, HoWo));
    OG_TRY(check_plane_int32(op, self));
    pooled_shape(self, HoWo[0], HoWo[1], want);
    OG_TRY(og_check_tensor(op, "out", out, 0));
    OG_TRY(og_check_same_dtype(op, "self", self, "out", out));
    OG_TRY(check_shape(op, "out", out, want, self->ndim, "self pooled"));
    OG_TRY(check_indices(op, "indices", indices));
    OG_TRY(check_shape(op, "indices", indices, want, self->ndim, "out's shape"));
    const aclTensor *in[] = {self}, *outs[] = {out, indices};
    const char *mnames[] = {"self", "out", "indices"};
    OG_TRY(check_memory(op, 1, in, 2, outs, mnames));
    og_prog prog;
    const aclTensor *io[] = {self, out, indices};
    og_prog_init(&prog, op, 1, 2, io);
    pool_plan P;
    memset(&P, 0, sizeof P);
    P.kind = POOL_MAX, P.idx_out = true;
    view_of(&P.a, self), view_of(&P.b, out), view_of(&P.idx, indices);
    P.slot_a = 0, P.slot_b = 1, P.slot_idx = 2;
    P.kh = a.k[0], P.kw = a.k[1], P.sh = a.s[0], P.sw = a.s[1], P.ph = a.pad[0], P.pw = a.pad[1];
    P.dh = a.dil[0], P.dw = a.dil[1];
    return publish(&prog, &P, self, HoWo[0], HoWo[1], (const int[]){0, 1, 2}, 3, workspaceSize,
                   executor);
}

aclnnStatus aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *indices,
    const aclIntArray *kernelSize, const aclIntArray *stride, const aclIntArray *padding,
    const aclIntArray *dilation, bool ceilMode, aclTensor *gradInput, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_MaxPool2dWithIndicesBackward;
    const char *names[] = {"gradOutput", "self",    "indices",  "kernelSize",
                           "stride",     "padding", "dilation", "gradInput"};
    const void *ptrs[] = {gradOutput, self,    indices,  kernelSize,
                          stride,     padding, dilation, gradInput};
    OG_TRY(og_check_args(op, workspaceSize, executor, 8, names, ptrs));
    OG_TRY(check_input(op, "self", self));
    pool_attrs a;
    OG_TRY(get_attrs(op, max_attr_names, kernelSize, stride, padding, dilation, ceilMode, &a));
    int64_t HoWo[2], want[4];
    OG_TRY(pooled_size(op, self, &a, HoWo));
    pooled_shape(self, HoWo[0], HoWo[1], want);
    OG_TRY(og_check_tensor(op, "gradOutput", gradOutput, 0));
    OG_TRY(og_check_same_dtype(op, "self", self, "gradOutput", gradOutput));
    OG_TRY(check_shape(op, "gradOutput", gradOutput, want, self->ndim, "the forward's output"));
    OG_TRY(check_indices(op, "indices", indices));
    OG_TRY(check_shape(op, "indices", indices, want, self->ndim, "gradOutput's shape"));
    OG_TRY(og_check_tensor(op, "gradInput", gradInput, 0));
    OG_TRY(og_check_same_dtype(op, "self", self, "gradInput", gradInput));
    OG_TRY(check_shape(op, "gradInput", gradInput, self->dims, self->ndim, "self's shape"));
    const aclTensor *in[] = {gradOutput, self, indices}, *outs[] = {gradInput};
    const char *mnames[] = {"gradOutput", "self", "indices", "gradInput"};
    OG_TRY(check_memory(op, 3, in, 1, outs, mnames));
    og_prog prog;
    const aclTensor *io[] = {gradOutput, self, indices, gradInput};
    og_prog_init(&prog, op, 3, 1, io);
    pool_plan P;
    memset(&P, 0, sizeof P);
    P.kind = POOL_MAX, P.backward = true;
    view_of(&P.a, gradOutput), view_of(&P.b, gradInput), view_of(&P.idx, indices);
    P.slot_a = 0, P.slot_b = 3, P.slot_idx = 2;
    P.kh = a.k[0], P.kw = a.k[1], P.sh = a.s[0], P.sw = a.s[1], P.ph = a.pad[0], P.pw = a.pad[1];
    P.dh = a.dil[0], P.dw = a.dil[1];
    return publish(&prog, &P, self, HoWo[0], HoWo[1], (const int[]){0, 2, 3}, 3, workspaceSize,
                   executor);
}

// ---- AvgPool2d ------------------------------------------------------------------------------

static void avg_plan(pool_plan *P, const pool_attrs *a, bool countIncludePad,
                     int64_t divisorOverride) {
    P->kind = POOL_AVG;
    P->kh = a->k[0], P->kw = a->k[1], P->sh = a->s[0], P->sw = a->s[1];
    P->ph = a->pad[0], P->pw = a->pad[1], P->dh = P->dw = 1;
    P->count_pad = countIncludePad, P->divisor = divisorOverride;
    P->slot_idx = -1;
}

aclnnStatus aclnnAvgPool2dGetWorkspaceSize(const aclTensor *self, const aclIntArray *kernelSize,
                                           const aclIntArray *strides, const aclIntArray *paddings,
                                           const bool ceilMode, const bool countIncludePad,
                                           const int64_t divisorOverride, const int8_t cubeMathType,
                                           aclTensor *out, uint64_t *workspaceSize,
                                           aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_AvgPool2d;
    const char *names[] = {"self", "kernelSize", "strides", "paddings", "out"};
    const void *ptrs[] = {self, kernelSize, strides, paddings, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 5, names, ptrs));
    OG_TRY(check_input(op, "self", self));
    static const char *const anames[] = {"kernelSize", "strides", "paddings", ""};
    pool_attrs a;
    OG_TRY(get_attrs(op, anames, kernelSize, strides, paddings, NULL, ceilMode, &a));
    OG_TRY(check_cube_math(op, cubeMathType));
    int64_t HoWo[2], want[4];
    OG_TRY(pooled_size(op, self, &a, HoWo));
    pooled_shape(self, HoWo[0], HoWo[1], want);
    OG_TRY(og_check_tensor(op, "out", out, 0));
    OG_TRY(og_check_same_dtype(op, "self", self, "out", out));
    OG_TRY(check_shape(op, "out", out, want, self->ndim, "self pooled"));
    const aclTensor *in[] = {self}, *outs[] = {out};
    const char *mnames[] = {"self", "out"};
    OG_TRY(check_memory(op, 1, in, 1, outs, mnames));
    og_prog prog;
    const aclTensor *io[] = {self, out};
    og_prog_init(&prog, op, 1, 1, io);
    pool_plan P;
    memset(&P, 0, sizeof P);
    avg_plan(&P, &a, countIncludePad, divisorOverride);
    view_of(&P.a, self), view_of(&P.b, out);
    P.slot_a = 0, P.slot_b = 1;
    return publish(&prog, &P, self, HoWo[0], HoWo[1], (const int[]){0, 1}, 2, workspaceSize,
                   executor);
}

aclnnStatus aclnnAvgPool2dBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclIntArray *kernelSize,
    const aclIntArray *stride, const aclIntArray *padding, bool ceilMode, bool countIncludePad,
    int64_t divisorOverride, int8_t cubeMathType, aclTensor *gradInput, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_AvgPool2dBackward;
    const char *names[] = {"gradOutput", "self", "kernelSize", "stride", "padding", "gradInput"};
    const void *ptrs[] = {gradOutput, self, kernelSize, stride, padding, gradInput};
    OG_TRY(og_check_args(op, workspaceSize, executor, 6, names, ptrs));
    OG_TRY(check_input(op, "self", self));
    static const char *const anames[] = {"kernelSize", "stride", "padding", ""};
    pool_attrs a;
    OG_TRY(get_attrs(op, anames, kernelSize, stride, padding, NULL, ceilMode, &a));
    OG_TRY(check_cube_math(op, cubeMathType));
    int64_t HoWo[2], want[4];
    OG_TRY(pooled_size(op, self, &a, HoWo));
    pooled_shape(self, HoWo[0], HoWo[1], want);
    OG_TRY(og_check_tensor(op, "gradOutput", gradOutput, 0));
    OG_TRY(og_check_same_dtype(op, "self", self, "gradOutput", gradOutput));
    OG_TRY(check_shape(op, "gradOutput", gradOutput, want, self->ndim, "the forward's output"));
    OG_TRY(og_check_tensor(op, "gradInput", gradInput, 0));
    OG_TRY(og_check_same_dtype(op, "self", self, "gradInput", gradInput));
    OG_TRY(check_shape(op, "gradInput", gradInput, self->dims, self->ndim, "self's shape"));
    const aclTensor *in[] = {gradOutput, self}, *outs[] = {gradInput};
    const char *mnames[] = {"gradOutput", "self", "gradInput"};
    OG_TRY(check_memory(op, 2, in, 1, outs, mnames));
    og_prog prog;
    const aclTensor *io[] = {gradOutput, self, gradInput};
    og_prog_init(&prog, op, 2, 1, io);
    pool_plan P;
    memset(&P, 0, sizeof P);
    avg_plan(&P, &a, countIncludePad, divisorOverride);
    P.backward = true;
    view_of(&P.a, gradOutput), view_of(&P.b, gradInput);
    P.slot_a = 0, P.slot_b = 2;
    return publish(&prog, &P, self, HoWo[0], HoWo[1], (const int[]){0, 2}, 2, workspaceSize,
                   executor);
}

// ---- AdaptiveAvgPool2d ----------------------------------------------------------------------

aclnnStatus aclnnAdaptiveAvgPool2dGetWorkspaceSize(const aclTensor *self,
                                                   const aclIntArray *outputSize, aclTensor *out,
                                                   uint64_t *workspaceSize,
                                                   aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_AdaptiveAvgPool2d;
    const char *names[] = {"self", "outputSize", "out"};
    const void *ptrs[] = {self, outputSize, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 3, names, ptrs));
    OG_TRY(check_input(op, "self", self));
    OG_TRY(og_check_live("aclnnAdaptiveAvgPool2dGetWorkspaceSize", "outputSize", outputSize,
                         OG_OBJ_INT_ARRAY));
    if (outputSize->size != 2)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: outputSize has %llu entries; it must have 2 "
                       "([Hout, Wout])",
                       op->name, (unsigned long long)outputSize->size);
    for (int d = 0; d < 2; d++)
        if (outputSize->values[d] < 1 || outputSize->values[d] > POOL_ATTR_MAX)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: outputSize[%d] is %lld; it must be in [1, %lld]",
                           op->name, d, (long long)outputSize->values[d], (long long)POOL_ATTR_MAX);
    int64_t want[4];
    pooled_shape(self, outputSize->values[0], outputSize->values[1], want);
    OG_TRY(og_check_tensor(op, "out", out, 0));
    OG_TRY(og_check_same_dtype(op, "self", self, "out", out));
    OG_TRY(check_shape(op, "out", out, want, self->ndim, "self's N, C with outputSize"));
    const aclTensor *in[] = {self}, *outs[] = {out};
    const char *mnames[] = {"self", "out"};
    OG_TRY(check_memory(op, 1, in, 1, outs, mnames));
    og_prog prog;
    const aclTensor *io[] = {self, out};
    og_prog_init(&prog, op, 1, 1, io);
    pool_plan P;
    memset(&P, 0, sizeof P);
    P.kind = POOL_ADAPTIVE, P.slot_a = 0, P.slot_b = 1, P.slot_idx = -1;
    view_of(&P.a, self), view_of(&P.b, out);
    int r = self->ndim;
    P.global = want[r - 2] == 1 && want[r - 1] == 1 && self->dtype == ACL_FLOAT && P.a.uniform &&
               P.b.uniform && (P.a.sw == 1 || self->dims[r - 1] == 1) &&
               (P.a.sh == self->dims[r - 1] || self->dims[r - 2] == 1);
    return publish(&prog, &P, self, want[self->ndim - 2], want[self->ndim - 1], (const int[]){0, 1},
                   2, workspaceSize, executor);
}

aclnnStatus aclnnAdaptiveAvgPool2dBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                           const aclTensor *self, aclTensor *out,
                                                           uint64_t *workspaceSize,
                                                           aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_AdaptiveAvgPool2dBackward;
    const char *names[] = {"gradOutput", "self", "out"};
    const void *ptrs[] = {gradOutput, self, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 3, names, ptrs));
    OG_TRY(check_input(op, "self", self));
    OG_TRY(og_check_tensor(op, "gradOutput", gradOutput, 0));
    OG_TRY(og_check_same_dtype(op, "self", self, "gradOutput", gradOutput));
    int r = self->ndim;
    if (gradOutput->ndim != r)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: gradOutput has rank %d but self has rank %d; they "
                       "must be equal",
                       op->name, gradOutput->ndim, r);
    int64_t want[4];
    pooled_shape(self, gradOutput->dims[r - 2], gradOutput->dims[r - 1], want);
    OG_TRY(check_shape(op, "gradOutput", gradOutput, want, r, "self's N, C with the output size"));
    for (int d = r - 2; d < r; d++)
        if (gradOutput->dims[d] < 1 || gradOutput->dims[d] > POOL_ATTR_MAX)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: gradOutput's output size %lld is out of range "
                           "[1, %lld]",
                           op->name, (long long)gradOutput->dims[d], (long long)POOL_ATTR_MAX);
    OG_TRY(og_check_tensor(op, "out", out, 0));
    OG_TRY(og_check_same_dtype(op, "self", self, "out", out));
    OG_TRY(check_shape(op, "out", out, self->dims, r, "self's shape"));
    const aclTensor *in[] = {gradOutput, self}, *outs[] = {out};
    const char *mnames[] = {"gradOutput", "self", "out"};
    OG_TRY(check_memory(op, 2, in, 1, outs, mnames));
    og_prog prog;
    const aclTensor *io[] = {gradOutput, self, out};
    og_prog_init(&prog, op, 2, 1, io);
    pool_plan P;
    memset(&P, 0, sizeof P);
    P.kind = POOL_ADAPTIVE, P.backward = true, P.slot_a = 0, P.slot_b = 2, P.slot_idx = -1;
    view_of(&P.a, gradOutput), view_of(&P.b, out);
    return publish(&prog, &P, self, want[r - 2], want[r - 1], (const int[]){0, 2}, 2, workspaceSize,
                   executor);
}
