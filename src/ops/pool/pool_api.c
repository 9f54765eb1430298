/* The pooling family: aclnnMaxPool2dWithIndices, aclnnAvgPool2d, aclnnAdaptiveAvgPool2d and their
 * backwards.
 *
 * None of them is elementwise, a reduction along whole dims or a row kernel, so each is one CUSTOM
 * step (engine/program.h) over [N, C, H, W] / [C, H, W] tensors seen as N * C planes. Planes are
 * independent and each is computed whole by one thread, so the bits never depend on the thread
 * count or on how planes are grouped into units:
 *   forwards   per output row, the window's taps in window order (row-major), each tap a loop over
 *              the output columns whose tap lands inside the input (padding never enters a sum or
 *              a max, and the inner loop has no branch on the edge): sums in window order;
 *   backwards  per plane, a serial scatter into an fp32 plane in a fixed order (output order; for
 *              the average pools, within one output row the taps left to right), then the plane
 *              is stored in gradInput's dtype and strides: windows that overlap add up in an order
 *              fixed by the shape alone.
 * fp32 planes whose rows are contiguous are read in place; others are converted into an fp32 plane
 * per thread first (16-bit inputs are computed in fp32 and rounded once on the way out).
 * float64 tensors (an opgrad extension) run the same steps in double (pool_plane.inc is compiled
 * once per compute type): the same taps in the same orders, float64 planes read in place, an
 * adaptive window summed in order with compensation (Neumaier), so that a large window stays
 * accurate to about one rounding.
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
const og_pool_max64_fn og_pool_max64_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_pool_max64);
const og_pool_sum64_fn og_pool_sum64_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_pool_sum64);
const og_pool_add64_fn og_pool_add64_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_pool_add64);
const og_pool_run64_fn og_pool_run64_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_pool_run64);

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
    bool f64;            // float64 tensors: computed in double (pool_plane.inc's f64 functions)
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
    og_pool_max64_fn max64;
    og_pool_sum64_fn sum64;
    og_pool_add64_fn add64;
    og_pool_run64_fn run64;
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

// The divisor of output column ow of a row whose window has hn input rows (hpad with padding),
// as an integer: each compute type converts it exactly.
static int64_t avg_divisor(const pool_plan *p, int64_t hn, int64_t hpad, int64_t ow) {
    if (p->divisor) return p->divisor;
    int64_t a, b, wpad;
    avg_window(ow, p->sw, p->pw, p->kw, p->W, &a, &b, &wpad);
    return p->count_pad ? hpad * wpad : hn * (b - a);
}

// Adaptive windows (PyTorch): [floor(o n / no), ceil((o + 1) n / no)).
static int64_t ad_start(int64_t o, int64_t n, int64_t no) { return o * n / no; }
static int64_t ad_end(int64_t o, int64_t n, int64_t no) { return ((o + 1) * n + no - 1) / no; }

// The sum of an adaptive window, rows [h0, h1) and columns [w0, w1): fp32 in the fixed lanes of
// og_pool_run, one run per row added in order; float64 in order into one compensated sum.
static float window_sum_f32(const pool_ctx *c, const float *x, int64_t ld, int64_t h0, int64_t h1,
                            int64_t w0, int64_t w1) {
    const pool_plan *p = c->p;
    if (w0 == 0 && w1 == p->W && ld == p->W) // whole rows of a dense plane: one run
        return c->run(x + h0 * ld, (h1 - h0) * p->W);
    float s = 0.0f;
    for (int64_t h = h0; h < h1; h++) s += c->run(x + h * ld + w0, w1 - w0);
    return s;
}

static double window_sum_f64(const pool_ctx *c, const double *x, int64_t ld, int64_t h0, int64_t h1,
                             int64_t w0, int64_t w1) {
    og_ksum k = {0, 0};
    for (int64_t h = h0; h < h1; h++) c->run64(x + h * ld + w0, w1 - w0, &k);
    return og_ksum_value(&k);
}

// ---- phase 2 --------------------------------------------------------------------------------

#define T float
#define SFX f32
#define PT_DT ACL_FLOAT
#define PK(k) c->k
#define LOAD_RUN(src, dt, stride, dst, n) og_load_run(c->cv, src, dt, stride, dst, n)
#define STORE_RUN(dst, dt, stride, src, n) og_store_run(c->cv, dst, dt, stride, src, n, false)
#include "ops/pool/pool_plane.inc"

#define T double
#define SFX f64
#define PT_DT ACL_DOUBLE
#define PK(k) c->k##64
// (the float64 conversions take no per-ISA table)
#define LOAD_RUN(src, dt, stride, dst, n) ((void)c, og_load_run64(src, dt, stride, dst, n))
#define STORE_RUN(dst, dt, stride, src, n) ((void)c, og_store_run64(dst, dt, stride, src, n))
#include "ops/pool/pool_plane.inc"

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
        if (P->f64)
            P->backward ? backward_plane_f64(c, p, scratch) : forward_plane_f64(c, p, scratch);
        else
            P->backward ? backward_plane_f32(c, p, scratch) : forward_plane_f32(c, p, scratch);
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
                  .max64 = og_pool_max64_kernels[p->isa],
                  .sum64 = og_pool_sum64_kernels[p->isa],
                  .add64 = og_pool_add64_kernels[p->isa],
                  .run64 = og_pool_run64_kernels[p->isa],
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
    OG_TRY(og_check_tensor_of(op, name, t, 3, OG_DTS_FLOATING64));
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
    P->f64 = self->dtype == ACL_DOUBLE; // every operand has self's dtype
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
        uint64_t cs = P->f64 ? 8 : 4; // the compute type's size
        uint64_t plane = align64u((uint64_t)(P->H * P->W) * cs);
        uint64_t row = align64u((uint64_t)P->Wo * 8);
        uint64_t outp = align64u((uint64_t)(P->Ho * P->Wo) * cs);
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
    OG_TRY(og_check_tensor_of(op, "out", out, 0, OG_DTS_FLOATING64));
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
    OG_TRY(og_check_tensor_of(op, "gradOutput", gradOutput, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_same_dtype(op, "self", self, "gradOutput", gradOutput));
    OG_TRY(check_shape(op, "gradOutput", gradOutput, want, self->ndim, "the forward's output"));
    OG_TRY(check_indices(op, "indices", indices));
    OG_TRY(check_shape(op, "indices", indices, want, self->ndim, "gradOutput's shape"));
    OG_TRY(og_check_tensor_of(op, "gradInput", gradInput, 0, OG_DTS_FLOATING64));
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
    OG_TRY(og_check_tensor_of(op, "out", out, 0, OG_DTS_FLOATING64));
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
    OG_TRY(og_check_tensor_of(op, "gradOutput", gradOutput, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_same_dtype(op, "self", self, "gradOutput", gradOutput));
    OG_TRY(check_shape(op, "gradOutput", gradOutput, want, self->ndim, "the forward's output"));
    OG_TRY(og_check_tensor_of(op, "gradInput", gradInput, 0, OG_DTS_FLOATING64));
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
    OG_TRY(og_check_tensor_of(op, "out", out, 0, OG_DTS_FLOATING64));
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
    OG_TRY(og_check_tensor_of(op, "gradOutput", gradOutput, 0, OG_DTS_FLOATING64));
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
    OG_TRY(og_check_tensor_of(op, "out", out, 0, OG_DTS_FLOATING64));
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
