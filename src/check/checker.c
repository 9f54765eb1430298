/* The checker's core: test points, kernel runs, comparisons, diagnoses (see check.h). */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "check/check_internal.h"
#include "check/compare.h"
#include "check/rng.h"
#include "engine/blocking.h"
#include "engine/gemm.h"
#include "opgrad/opgrad.h"
#include "tensor/dtype.h"

const char *ogc_status_name(ogc_status s) {
    static const char *const names[] = {"PASS", "FAIL", "MISTRUSTED", "SKIPPED"};
    return names[s];
}

// ---------------------------------------------------------------------------------------------
// Case seeds

// Each case has its own stream, so any case reproduces alone from (seed, op, dtype, layout).
static uint64_t case_seed(uint64_t seed, const char *op, int dtype, const char *layout) {
    uint64_t h = seed ^ 0xcbf29ce484222325ull;
    for (const char *p = op; *p; p++) h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    h = (h ^ (uint64_t)(dtype + 1)) * 0x100000001b3ull;
    for (const char *p = layout; *p; p++) h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    return h;
}

// Test values: small integers, fractions, x10 scales and the domain's edges, kept a margin away
// from the operator's non-differentiable points.
static double test_point(const ogc_op *op, og_rng *r) {
    double lo = op->lo, hi = op->hi, x;
    for (int tries = 0;; tries++) {
        if (op->nspecials && og_rng_next(r) % 8 == 0) {
            x = op->specials[og_rng_next(r) % (uint64_t)op->nspecials];
            if (x >= lo && x <= hi) return x;
        }
        switch (og_rng_next(r) % 6) {
        case 0:
            x = (double)((int64_t)(og_rng_next(r) % 7) - 3);
            break;
        case 1:
            x = og_rng_uniform(r, -1, 1);
            break;
        case 2:
            x = og_rng_uniform(r, -1, 1) * 10;
            break;
        case 3:
            x = og_rng_uniform(r, -6, 6);
            break;
        case 4:
            x = og_rng_uniform(r, fmax(lo, -30), fmin(hi, 30));
            break;
        default:
            x = og_rng_uniform(r, 0.9, 1.0) * (og_rng_next(r) & 1 ? fmin(hi, 1e4) : fmax(lo, -1e4));
            break;
        }
        if (x < lo) x = lo;
        if (x > hi) x = hi;
        bool near = false;
        for (int k = 0; k < op->nkinks; k++)
            near |= fabs(x - op->kinks[k]) < 1e-2 * fmax(1.0, fabs(op->kinks[k]));
        if (!near || tries > 100) return x;
    }
}

// x moved out of the margin the test points keep around the operator's kinks (and into the domain).
static double off_kinks(const ogc_op *op, double x) {
    for (int k = 0; k < op->nkinks; k++) {
        double c = op->kinks[k], margin = 1e-2 * fmax(1.0, fabs(c));
        if (fabs(x - c) < margin) x = x < c ? c - margin : c + margin;
    }
    return fmin(fmax(x, op->lo), op->hi);
}

// The "sweep" layout's values: the operator's special regions densely, not left to the seed.
// A quarter each: around 0 (log-spaced magnitudes 2^-24 .. 8, both signs: polynomial ranges and
// cancellation), around every kink, special and region edge (+-1 linearly, and +-2^-6 of it
// finely), the declared regions (else the domain within +-30), the domain within +-100.
static void sweep_values(const ogc_op *op, int64_t n, double *x) {
    int64_t q = n / 4, i = 0;
    for (; i < q; i++) {
        double t = (double)(i / 2) / (double)(q / 2 > 0 ? q / 2 : 1);
        x[i] = off_kinks(op, (i & 1 ? -1 : 1) * exp2(-24 + 27 * t));
    }
    double centers[64];
    int nc = 0;
    for (int k = 0; k < op->nkinks && nc < 64; k++) centers[nc++] = op->kinks[k];
    for (int k = 0; k < op->nspecials && nc < 64; k++) centers[nc++] = op->specials[k];
    for (int k = 0; k < 2 * op->nregions && nc < 64; k++) centers[nc++] = op->regions[k];
    for (int64_t j = 0; i < 2 * q; i++, j++) {
        if (nc == 0) {
            x[i] = off_kinks(op, -1 + 2 * (double)j / (double)q);
            continue;
        }
        double c = centers[j % nc], t = (double)(j / nc) / (double)(q / nc > 1 ? q / nc - 1 : 1);
        double w = (j / nc) % 2 ? 1.0 : 0x1p-6 * fmax(1.0, fabs(c));
        x[i] = off_kinks(op, c - w + 2 * w * t);
    }
    for (int64_t j = 0; i < 3 * q; i++, j++) {
        double t = (double)j / (double)(q > 1 ? q - 1 : 1);
        if (op->nregions) {
            int r = (int)(j % op->nregions);
            double a = op->regions[2 * r], b = op->regions[2 * r + 1];
            t = (double)(j / op->nregions) /
                (double)(q / op->nregions > 1 ? q / op->nregions - 1 : 1);
            x[i] = off_kinks(op, a + (b - a) * t);
        } else {
            double a = fmax(op->lo, -30), b = fmin(op->hi, 30);
            x[i] = off_kinks(op, a + (b - a) * t);
        }
    }
    for (int64_t j = 0; i < n; i++, j++) {
        double a = fmax(op->lo, -100), b = fmin(op->hi, 100);
        x[i] = off_kinks(op, a + (b - a) * (double)j / (double)(n - 3 * q > 1 ? n - 3 * q - 1 : 1));
    }
}

// The inputs of a case (input-shaped, row-major): test points from the case's stream (on the
// engine-sized layouts with two reduction blocks set to cancel, see below), or for the sweep
// layout the sweep's values (input 0 in order, the others permuted by the stream).
static void draw_inputs(const ogc_op *op, const ogc_layout *l, og_rng *r, double *const *x) {
    for (int k = 0; k < op->nin; k++) {
        int64_t nk = ogc_numel(&l->in[k]);
        if (l->engine && op->lo < 0 && op->hi > 0) {
            // engine-sized: test points, but the first reduction block near the top of the
            // domain and the third near its bottom. Their sums cancel, so a sum over the tensor
            // keeps or loses the low bits of the blocks between and after them depending on the
            // order it adds the block sums in: a changed order shows in the bits (sums of values
            // of one binade are mostly exact whatever their order).
            double top = fmin(op->hi, 4), bottom = fmax(op->lo, -4);
            for (int64_t i = 0; i < nk; i++) {
                int64_t block = i / OG_BLOCK_REDUCE_TERMS;
                x[k][i] = block == 0   ? og_rng_uniform(r, top / 2, top)
                          : block == 2 ? og_rng_uniform(r, bottom, bottom / 2)
                                       : test_point(op, r);
                x[k][i] = off_kinks(op, x[k][i]);
            }
            continue;
        }
        if (!l->sweep) {
            for (int64_t i = 0; i < nk; i++) x[k][i] = test_point(op, r);
            continue;
        }
        sweep_values(op, nk, x[k]);
        for (int64_t i = nk - 1; k > 0 && i > 0; i--) {
            int64_t j = (int64_t)(og_rng_next(r) % (uint64_t)(i + 1));
            double t = x[k][i];
            x[k][i] = x[k][j], x[k][j] = t;
        }
    }
}

// An input laid out as its view says; `values` (row-major, logical order) are quantized to dt
// in place, so they hold exactly what the kernel sees.
typedef struct input {
    void *storage;
    aclTensor *tensor;
    int64_t strides[OG_MAX_DIMS], offset, extent; // the view, in elements of the storage
} input;

// The storage position of each logical element of `in` (shape s), row-major.
static void view_positions(const input *in, const ogc_shape *s, int64_t *pos) {
    int64_t idx[OG_MAX_DIMS] = {0}, n = ogc_numel(s);
    for (int64_t i = 0; i < n; i++) {
        int64_t p = in->offset;
        for (int d = 0; d < s->ndim; d++) p += idx[d] * in->strides[d];
        pos[i] = p;
        for (int d = s->ndim - 1; d >= 0 && ++idx[d] == s->dims[d]; d--) idx[d] = 0;
    }
}

static bool make_input(aclDataType dt, const ogc_shape *s, ogc_view view, double *values,
                       input *in) {
    int nd = s->ndim;
    int64_t strides[OG_MAX_DIMS], offset = 0, n = ogc_numel(s);
    int64_t acc = 1;
    for (int d = nd - 1; d >= 0; d--) strides[d] = acc, acc *= s->dims[d];
    if (view == OGC_VIEW_TRANSPOSED && nd >= 2) {
        // memory holds the shape with its last two dims swapped, row-major
        int64_t sp[OG_MAX_DIMS], p[OG_MAX_DIMS];
        for (int d = 0; d < nd; d++) p[d] = s->dims[d];
        p[nd - 2] = s->dims[nd - 1];
        p[nd - 1] = s->dims[nd - 2];
        int64_t a = 1;
        for (int d = nd - 1; d >= 0; d--) sp[d] = a, a *= p[d];
        for (int d = 0; d < nd; d++) strides[d] = sp[d];
        strides[nd - 2] = sp[nd - 1];
        strides[nd - 1] = sp[nd - 2];
    } else if (view == OGC_VIEW_PADDED && nd >= 1) {
        offset = 3;
        strides[nd - 1] = 1;
        if (nd >= 2) strides[nd - 2] = s->dims[nd - 1] + 2;
        for (int d = nd - 3; d >= 0; d--) strides[d] = strides[d + 1] * s->dims[d + 1];
    }
    int64_t extent = offset + 1;
    for (int d = 0; d < nd; d++) extent += strides[d] * (s->dims[d] > 0 ? s->dims[d] - 1 : 0);
    size_t es = aclDataTypeSize(dt);
    in->storage = calloc((size_t)extent + 16, es);
    if (!in->storage) return false;
    int64_t idx[OG_MAX_DIMS] = {0};
    for (int64_t i = 0; i < n; i++) {
        int64_t pos = offset;
        for (int d = 0; d < nd; d++) pos += idx[d] * strides[d];
        ogc_store(in->storage, pos, dt, values[i]);
        values[i] = ogc_load(in->storage, pos, dt);
        for (int d = nd - 1; d >= 0 && ++idx[d] == s->dims[d]; d--) idx[d] = 0;
    }
    memcpy(in->strides, strides, sizeof strides);
    in->offset = offset;
    in->extent = extent;
    int64_t storage_dims[1] = {extent};
    in->tensor = aclCreateTensor(s->dims, (uint64_t)nd, dt, strides, offset, ACL_FORMAT_ND,
                                 storage_dims, 1, in->storage);
    return in->tensor != NULL;
}

static void free_input(input *in) {
    aclDestroyTensor(in->tensor);
    free(in->storage);
    in->tensor = NULL;
    in->storage = NULL;
}

// ---------------------------------------------------------------------------------------------
// Float64 references over broadcast shapes

typedef struct refs {
    int64_t n;      // output elements
    double *y;      // output
    double *ymag;   // tensor-level forwards: magnitude bound per output element
    int64_t yterms; // values summed into one output element (1: elementwise)
    double *saved[OGC_MAX_SAVED];
    double *gx[OGC_MAX_IN];    // input-shaped gradients (reduced over broadcast dims)
    double *mag[OGC_MAX_IN];   // magnitude bounds, input-shaped
    int64_t terms[OGC_MAX_IN]; // output elements summed into one gradient element
} refs;

static void refs_free(refs *r) {
    free(r->y);
    free(r->ymag);
    for (int k = 0; k < OGC_MAX_SAVED; k++) free(r->saved[k]);
    for (int k = 0; k < OGC_MAX_IN; k++) free(r->gx[k]), free(r->mag[k]);
    memset(r, 0, sizeof *r);
}

// Tensors the backward receives as saved: the declared ones, or the output itself.
static int nsaved_of(const ogc_op *op) { return op->backward_uses_output ? 1 : op->nsaved; }

// Forward references at the inputs x[k] (input-shaped, row-major).
static void ref_forward_all(const ogc_op *op, const ogc_layout *l, double *const *x, refs *r) {
    int64_t n = ogc_numel(&l->out), st[OGC_MAX_IN][OG_MAX_DIMS], idx[OG_MAX_DIMS] = {0};
    r->n = n;
    r->y = calloc((size_t)n + 1, sizeof(double));
    for (int s = 0; s < nsaved_of(op); s++) r->saved[s] = calloc((size_t)n + 1, sizeof(double));
    r->yterms = 1;
    if (op->ref_forward_tensor) { // not elementwise: the operator's own tensor-level reference
        r->ymag = calloc((size_t)n + 1, sizeof(double));
        op->ref_forward_tensor(op, l->in, (const double *const *)x, &l->out, r->y, r->saved,
                               r->ymag, &r->yterms);
        if (op->backward_uses_output)
            for (int64_t i = 0; i < n; i++) r->saved[0][i] = r->y[i];
        for (int64_t i = 0; i < n; i++)
            if (r->ymag[i] == 0) r->ymag[i] = fabs(r->y[i]);
        return;
    }
    for (int k = 0; k < op->nin; k++) ogc_broadcast_strides(&l->in[k], &l->out, st[k]);
    for (int64_t i = 0; i < n; i++) {
        double xe[OGC_MAX_IN], saved[OGC_MAX_SAVED] = {0};
        for (int k = 0; k < op->nin; k++) {
            int64_t pos = 0;
            for (int d = 0; d < l->out.ndim; d++) pos += idx[d] * st[k][d];
            xe[k] = x[k][pos];
        }
        r->y[i] = op->ref_forward(op, xe, saved);
        for (int s = 0; s < op->nsaved; s++) r->saved[s][i] = saved[s];
        if (op->backward_uses_output) r->saved[0][i] = r->y[i];
        for (int d = l->out.ndim - 1; d >= 0 && ++idx[d] == l->out.dims[d]; d--) idx[d] = 0;
    }
}

// Backward references: gx[k] = sum over the output elements that read x[k][j] of the per-element
// partials, for dL/dy = gy and saved values `saved` (output-shaped; NULL when none).
static void ref_backward_all(const ogc_op *op, const ogc_layout *l, double *const *x,
                             double *const *saved, const double *gy, refs *r) {
    int64_t n = ogc_numel(&l->out), st[OGC_MAX_IN][OG_MAX_DIMS], idx[OG_MAX_DIMS] = {0};
    for (int k = 0; k < op->nin; k++) {
        int64_t nk = ogc_numel(&l->in[k]);
        free(r->gx[k]);
        free(r->mag[k]);
        r->gx[k] = calloc((size_t)nk + 1, sizeof(double));
        r->mag[k] = calloc((size_t)nk + 1, sizeof(double));
        r->terms[k] = nk > 0 ? n / nk : 0;
        ogc_broadcast_strides(&l->in[k], &l->out, st[k]);
    }
    if (op->ref_backward_tensor) { // not elementwise: the operator's own tensor-level reference
        op->ref_backward_tensor(op, l->in, (const double *const *)x, &l->out,
                                (const double *const *)saved, gy, r->gx, r->mag, r->terms);
        for (int k = 0; k < op->nin; k++)
            for (int64_t i = 0; i < ogc_numel(&l->in[k]); i++)
                if (r->mag[k][i] == 0) r->mag[k][i] = fabs(r->gx[k][i]);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        double xe[OGC_MAX_IN], se[OGC_MAX_SAVED] = {0}, g[OGC_MAX_IN] = {0}, m[OGC_MAX_IN] = {0};
        int64_t pos[OGC_MAX_IN];
        for (int k = 0; k < op->nin; k++) {
            pos[k] = 0;
            for (int d = 0; d < l->out.ndim; d++) pos[k] += idx[d] * st[k][d];
            xe[k] = x[k][pos[k]];
        }
        for (int s = 0; s < nsaved_of(op); s++) se[s] = saved ? saved[s][i] : 0;
        op->ref_backward(op, xe, se, gy[i], g, m);
        for (int k = 0; k < op->nin; k++) {
            r->gx[k][pos[k]] += g[k];
            r->mag[k][pos[k]] += m[k] != 0 ? fabs(m[k]) : fabs(g[k]);
        }
        for (int d = l->out.ndim - 1; d >= 0 && ++idx[d] == l->out.dims[d]; d--) idx[d] = 0;
    }
}

// ---------------------------------------------------------------------------------------------
// Results (what the kernels write)

static ogc_shape result_shape(const ogc_result *r) {
    ogc_shape s = {.ndim = r->ndim};
    for (int d = 0; d < r->ndim; d++) s.dims[d] = r->dims[d];
    return s;
}

static int64_t result_numel(const ogc_result *r) {
    int64_t n = 1;
    for (int d = 0; d < r->ndim; d++) n *= r->dims[d];
    return n;
}

aclTensor *ogc_result_tensor(const ogc_result *r) {
    return aclCreateTensor(r->dims, (uint64_t)r->ndim, r->dtype, NULL, 0, ACL_FORMAT_ND, r->dims,
                           (uint64_t)r->ndim, r->data);
}

// ---------------------------------------------------------------------------------------------
// One case

// Everything one case's stages share. The stages run in order (see ogc_check_case); each one
// reads what the earlier ones left here, and case_free releases all of it whatever stage the
// case stopped at.
typedef struct case_state {
    const ogc_op *op;
    aclDataType dt;
    aclDataType out_dt;  // dtype of the output: dt, or FLOAT (ogc_op.fp32_output)
    aclDataType grad_dt; // dtype of grad_output
    ogc_layout l;
    int64_t n;  // output elements
    og_rng rng; // the case's own stream: the inputs first, then grad_output
    input in[OGC_MAX_IN];
    double *xq[OGC_MAX_IN]; // quantized inputs, row-major
    ogc_result fwd[1 + OGC_MAX_SAVED];
    int nfwd;
    ogc_result bwd[OGC_MAX_RESULTS];
    int nbwd;
    int ndiff;
    size_t capacity;
    void *buffers;                     // all result buffers
    void *snap_buf;                    // the forward's re-runs, then `first`
    ogc_result first[OGC_MAX_RESULTS]; // the first backward's gradients (for B(2g), determinism)
    double *gy;                        // dL/dy, quantized to grad_dt
    double *gy2;                       // 2 gy, then 0
    refs ref;
    ogc_stats s;                       // error statistics over every comparison of the case
    aclTensor *saved_t[OGC_MAX_SAVED]; // what the backward gets as saved
    double *saved_q[OGC_MAX_SAVED];    // ... and its values, for the reference backward
    ogc_samples *samples;              // per-element errors for the HTML report, or NULL
} case_state;

// How specific a diagnosis is. A case keeps the most specific one its stages find (the first
// among equals), so that a named cause found late (a wrong sign, a rounding, the elements at a
// tile edge) is not hidden by a symptom found early (B(2g) != 2 B(g), thread dependence).
enum {
    RANK_TRUST = 1,       // MISTRUSTED: the data says little
    RANK_DETERMINISM = 2, // two runs or two thread counts differ
    RANK_LINEARITY = 3,   // B(2g) != 2 B(g)
    RANK_MISMATCH = 4,    // values differ from the reference, no pattern named
    RANK_SPECIFIC = 5,    // values differ with a named pattern (sign, factor, rounding, where)
    RANK_IGNORES = 6,     // the backward ignores grad_output
    RANK_CONTRACT = 7,    // status, result count, shape, dtype (the case stops there)
};

static void report_fail(ogc_report *rep, ogc_status st, int rank, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void report_fail(ogc_report *rep, ogc_status st, int rank, const char *fmt, ...) {
    if (rep->status == OGC_FAIL && (st != OGC_FAIL || rank <= rep->diagnosis_rank)) return;
    if (rep->status == OGC_MISTRUSTED && st == OGC_MISTRUSTED) return;
    rep->status = st;
    rep->diagnosis_rank = rank;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rep->diagnosis, sizeof rep->diagnosis, fmt, ap);
    va_end(ap);
}

static void declare(ogc_result *r, const ogc_shape *s, aclDataType dt, void *data, size_t cap) {
    r->dtype = dt;
    r->ndim = s->ndim;
    for (int d = 0; d < s->ndim; d++) r->dims[d] = s->dims[d];
    r->data = data;
    r->capacity = cap;
    memset(data, 0, cap);
}

// One backward run for dL/dy = gy into cs->bwd; returns the operator's status.
static int run_backward(case_state *cs, const double *gy) {
    const ogc_op *op = cs->op;
    int64_t n = ogc_numel(&cs->l.out);
    void *gbuf = calloc((size_t)n + 16, aclDataTypeSize(cs->grad_dt));
    for (int64_t i = 0; i < n; i++) ogc_store(gbuf, i, cs->grad_dt, gy[i]);
    ogc_result tmp;
    declare(&tmp, &cs->l.out, cs->grad_dt, gbuf, 0);
    aclTensor *gt = ogc_result_tensor(&tmp);
    int j = 0;
    for (int k = 0; k < op->nin; k++) {
        if (!op->in[k].differentiable) continue;
        declare(&cs->bwd[j], &cs->l.in[k], cs->dt,
                (char *)cs->buffers + (size_t)(1 + OGC_MAX_SAVED + j) * cs->capacity, cs->capacity);
        j++;
    }
    ogc_call call = {.op = op, .dtype = cs->dt, .grad_out = gt, .results = cs->bwd, .nresults = j};
    for (int k = 0; k < op->nin; k++) call.in[k] = cs->in[k].tensor;
    for (int s = 0; s < nsaved_of(op); s++) call.saved[s] = cs->saved_t[s];
    int st = op->backward(&call);
    cs->nbwd = call.nresults;
    aclDestroyTensor(gt);
    free(gbuf);
    return st;
}

static bool results_equal(const ogc_result *a, const ogc_result *b, int n) {
    for (int j = 0; j < n; j++) {
        size_t bytes = (size_t)result_numel(&a[j]) * aclDataTypeSize(a[j].dtype);
        if (memcmp(a[j].data, b[j].data, bytes)) return false;
    }
    return true;
}

static void snapshot(const ogc_result *src, int n, ogc_result *dst, void *storage, size_t cap) {
    for (int j = 0; j < n; j++) {
        dst[j] = src[j];
        dst[j].data = (char *)storage + (size_t)j * cap;
        memcpy(dst[j].data, src[j].data, cap);
    }
}

// The case's layout: the named one for the operator's input count, then the operator's shape
// hook. When either does not apply the case is SKIPPED, with a diagnosis starting "layout does
// not apply" (which `opgrad check` leaves out of its table).
static bool case_layout(const ogc_op *op, const char *layout, ogc_layout *l, ogc_report *rep) {
    if (!ogc_layout_build(layout, op->nin, l)) {
        rep->status = OGC_SKIPPED;
        snprintf(rep->diagnosis, sizeof rep->diagnosis, "layout does not apply to %d input(s)",
                 op->nin);
        return false;
    }
    if (op->shapes && !op->shapes(op, layout, l->in, &l->out)) {
        rep->status = OGC_SKIPPED;
        snprintf(rep->diagnosis, sizeof rep->diagnosis, "layout does not apply to %s", op->name);
        return false;
    }
    return true;
}

static void fill_repro(ogc_report *rep, const ogc_options *opt) {
    char isa[40] = "";
    if (rep->isa >= 0) snprintf(isa, sizeof isa, " --isa %s", opgrad_isa_name(rep->isa));
    snprintf(rep->repro, sizeof rep->repro,
             "opgrad check --op %s --dtype %s --layout %s%s --seed %llu --mode %s", rep->op,
             rep->isa < 0 ? "formula" : og_dtype_name(rep->dtype), rep->layout, isa,
             (unsigned long long)opt->seed, opt->mode == OGC_MODE_FULL ? "full" : "fast");
}

static void finish_stats(ogc_report *rep, const ogc_stats *s) {
    rep->compared = s->compared;
    rep->max_abs = s->max_abs;
    rep->max_rel = s->max_rel;
    rep->max_ulp = s->max_ulp;
    rep->mean_ulp = s->compared ? s->sum_ulp / (double)s->compared : 0;
    rep->mere = s->compared ? s->sum_re / (double)s->compared : 0;
    rep->mare = s->max_re;
    rep->bias_ulp = s->compared ? s->sum_sulp / (double)s->compared : 0;
}

static int64_t count_zeros(const void *data, aclDataType dt, int64_t n) {
    int64_t z = 0;
    for (int64_t i = 0; i < n; i++) z += ogc_load(data, i, dt) == 0;
    return z;
}

// v rounded to dt, as make_input stores it.
static double quantize(aclDataType dt, double v) {
    double buf[1];
    ogc_store(buf, 0, dt, v);
    return ogc_load(buf, 0, dt);
}

// A forward-only entry (an optimizer step, a compressor): no input is differentiable, and only
// the forward stages apply.
static bool forward_only(const ogc_op *op) {
    for (int k = 0; k < op->nin; k++)
        if (op->in[k].differentiable) return false;
    return true;
}

// Does the float64 reference backward (dL/dy = 1) give every differentiable input a non-zero
// gradient somewhere?
static bool exercises_every_input(const ogc_op *op, const ogc_layout *l, double *const *x) {
    int64_t n = ogc_numel(&l->out);
    if (n == 0 || forward_only(op)) return true;
    refs r = {0};
    ref_forward_all(op, l, x, &r);
    double *ones = malloc((size_t)n * sizeof *ones);
    for (int64_t i = 0; i < n; i++) ones[i] = 1;
    ref_backward_all(op, l, x, r.saved, ones, &r);
    bool all = true;
    for (int k = 0; k < op->nin; k++) { // (an empty input, e.g. K = 0 of a product, has no say)
        if (!op->in[k].differentiable || ogc_numel(&l->in[k]) == 0) continue;
        bool any = false;
        for (int64_t i = 0; i < ogc_numel(&l->in[k]) && !any; i++) any = r.gx[k][i] != 0;
        all &= any;
    }
    free(ones);
    refs_free(&r);
    return all;
}

static void add_stats(ogc_stats *s, const ogc_stats *part) {
    s->compared += part->compared, s->sum_ulp += part->sum_ulp, s->sum_re += part->sum_re;
    s->sum_sulp += part->sum_sulp;
    s->max_abs = fmax(s->max_abs, part->max_abs), s->max_rel = fmax(s->max_rel, part->max_rel);
    s->max_ulp = fmax(s->max_ulp, part->max_ulp), s->max_re = fmax(s->max_re, part->max_re);
}

// Whether the case applies at all: the layout (with the operator's shape hook) and the dtype.
// A case that does not is SKIPPED before anything is allocated.
static bool case_applies(case_state *cs, const char *layout, ogc_report *rep) {
    const ogc_op *op = cs->op;
    aclDataType dt = cs->dt;
    if (!case_layout(op, layout, &cs->l, rep)) return false;
    if ((int)dt < 0 || (int)dt >= 64 || !(op->dtypes & (1ull << dt))) {
        rep->status = OGC_SKIPPED;
        snprintf(rep->diagnosis, sizeof rep->diagnosis, "%s does not support %s", op->name,
                 og_dtype_name(dt));
        return false;
    }
    return true;
}

// Seeds the case's stream and allocates the buffers every stage uses.
static void case_alloc(case_state *cs, uint64_t seed, const char *layout) {
    const ogc_op *op = cs->op;
    aclDataType dt = cs->dt;
    // mixed precision: a 16-bit forward gets an fp32 grad_output, an fp32 one a bf16 grad_output
    cs->out_dt = op->fp32_output ? ACL_FLOAT : dt;
    cs->grad_dt = !cs->l.mixed ? cs->out_dt : cs->out_dt == ACL_FLOAT ? ACL_BF16 : ACL_FLOAT;
    og_rng_seed(&cs->rng, case_seed(seed, op->name, dt, layout));
    int64_t n = ogc_numel(&cs->l.out), maxn = n;
    for (int k = 0; k < op->nin; k++)
        maxn = maxn > ogc_numel(&cs->l.in[k]) ? maxn : ogc_numel(&cs->l.in[k]);
    cs->n = n;
    cs->capacity = (size_t)(maxn + 16) * 8;
    cs->buffers = calloc(1 + OGC_MAX_SAVED + OGC_MAX_RESULTS, cs->capacity);
    cs->snap_buf = calloc(OGC_MAX_RESULTS, cs->capacity);
    cs->gy = calloc((size_t)n + 1, sizeof(double));
    cs->gy2 = calloc((size_t)n + 1, sizeof(double));
    for (int k = 0; k < op->nin; k++)
        cs->xq[k] = calloc((size_t)ogc_numel(&cs->l.in[k]) + 1, sizeof(double));
}

static void case_free(case_state *cs) {
    const ogc_op *op = cs->op;
    for (int si = 0; si < nsaved_of(op); si++)
        aclDestroyTensor(cs->saved_t[si]), free(cs->saved_q[si]);
    for (int k = 0; k < op->nin; k++) free_input(&cs->in[k]), free(cs->xq[k]);
    refs_free(&cs->ref);
    free(cs->gy);
    free(cs->gy2);
    free(cs->snap_buf);
    free(cs->buffers);
}

// ---- Stages. Each returns whether the case goes on to the next one; a stage that finds a
// failure reports it (report_fail keeps the most specific diagnosis).

// Do the inputs keep the operator's margin from its non-differentiable points
// (ogc_op.clear_of_kinks)?
static bool clear_of_kinks(const ogc_op *op, const ogc_layout *l, double *const *x) {
    return !op->clear_of_kinks || op->clear_of_kinks(op, l->in, (const double *const *)x);
}

// Draws the inputs from the case's stream, quantizes them to the dtype and lays them out.
static bool stage_inputs(case_state *cs, ogc_report *rep) {
    const ogc_op *op = cs->op;
    // Data whose reference gradient is identically 0 for a differentiable input (one element of
    // relu at x < 0) proves nothing about it: redraw (up to 32 times) from the case's own stream
    // (so the case still reproduces from its seed; data that exercises every input at the first
    // draw, as for every smooth operator, is unchanged). Engine-sized data always does.
    for (int attempt = 0; attempt < 32; attempt++) {
        draw_inputs(op, &cs->l, &cs->rng, cs->xq);
        for (int k = 0; k < op->nin; k++)
            for (int64_t i = 0; i < ogc_numel(&cs->l.in[k]); i++)
                cs->xq[k][i] = quantize(cs->dt, cs->xq[k][i]);
        if ((cs->l.engine || cs->l.sweep || exercises_every_input(op, &cs->l, cs->xq)) &&
            clear_of_kinks(op, &cs->l, cs->xq))
            break;
    }
    for (int k = 0; k < op->nin; k++) {
        if (!make_input(cs->dt, &cs->l.in[k], cs->l.view[k], cs->xq[k], &cs->in[k]))
            report_fail(rep, OGC_FAIL, RANK_CONTRACT, "internal: cannot build input %d: %s", k,
                        aclGetRecentErrMsg());
    }
    return rep->status != OGC_FAIL;
}

// The HTML report's samples of the forward output (check.h: ogc_samples), against input 0 at
// each element: broadcast for elementwise operators, the element itself for a tensor-level one
// whose output is input 0's shape, else the element's index.
static void record_forward(case_state *cs, ogc_rule rule, const void *got, const double *want,
                           const double *mag) {
    const ogc_op *op = cs->op;
    int64_t n = cs->n;
    double *x = NULL;
    if (!op->ref_forward_tensor && op->nin > 0 && (x = malloc(((size_t)n + 1) * sizeof *x))) {
        int64_t st[OG_MAX_DIMS], idx[OG_MAX_DIMS] = {0};
        ogc_broadcast_strides(&cs->l.in[0], &cs->l.out, st);
        for (int64_t i = 0; i < n; i++) {
            int64_t pos = 0;
            for (int d = 0; d < cs->l.out.ndim; d++) pos += idx[d] * st[d];
            x[i] = cs->xq[0][pos];
            for (int d = cs->l.out.ndim - 1; d >= 0 && ++idx[d] == cs->l.out.dims[d]; d--)
                idx[d] = 0;
        }
    }
    const double *xs = x;
    if (!x && op->nin > 0 && ogc_shape_equal(&cs->l.in[0], &cs->l.out)) xs = cs->xq[0];
    ogc_series_record(&cs->samples->fwd, rule, cs->out_dt, got, want, mag, cs->ref.yterms, n, xs);
    free(x);
}

// Runs the forward; its status, result count, and every result's dtype and shape.
static bool stage_forward_contract(case_state *cs, ogc_report *rep) {
    const ogc_op *op = cs->op;
    aclDataType dt = cs->out_dt;
    cs->nfwd = 1 + op->nsaved;
    for (int j = 0; j < cs->nfwd; j++)
        declare(&cs->fwd[j], &cs->l.out, dt, (char *)cs->buffers + (size_t)j * cs->capacity,
                cs->capacity);
    ogc_call call = {.op = op, .dtype = dt, .results = cs->fwd, .nresults = cs->nfwd};
    for (int k = 0; k < op->nin; k++) call.in[k] = cs->in[k].tensor;
    int st = op->forward(&call);
    if (st != 0) {
        report_fail(rep, OGC_FAIL, RANK_CONTRACT, "forward returned status %d: %s", st,
                    aclGetRecentErrMsg());
        return false;
    }
    if (call.nresults != cs->nfwd) {
        report_fail(rep, OGC_FAIL, RANK_CONTRACT,
                    "forward returned %d result(s), the op declares %d", call.nresults, cs->nfwd);
        return false;
    }
    for (int j = 0; j < cs->nfwd; j++) {
        const char *what = j == 0 ? "output" : op->saved_names[j - 1];
        char a[128], b[128];
        if (cs->fwd[j].dtype != dt) {
            report_fail(rep, OGC_FAIL, RANK_CONTRACT, "declared %s dtype %s, kernel wrote %s", what,
                        og_dtype_name(dt), og_dtype_name(cs->fwd[j].dtype));
            return false;
        }
        ogc_shape got = result_shape(&cs->fwd[j]);
        if (!ogc_shape_equal(&got, &cs->l.out)) {
            report_fail(rep, OGC_FAIL, RANK_CONTRACT, "declared %s shape %s, kernel wrote %s", what,
                        og_shape_str(cs->l.out.dims, cs->l.out.ndim, a, sizeof a),
                        og_shape_str(cs->fwd[j].dims, cs->fwd[j].ndim, b, sizeof b));
            return false;
        }
    }
    return true;
}

// The rules an operator's results are judged by (check.h: fwd_roundings16, bwd_roundings16).
static ogc_rule fwd_rule(const ogc_op *op) {
    return (ogc_rule){.fp32_ulps = op->fp32_ulps,
                      .roundings16 = op->fwd_roundings16 > 0 ? op->fwd_roundings16 : 1,
                      .fp64_ulps = op->fp64_ulps > 0 ? op->fp64_ulps : OGC_FP64_ULPS};
}
static ogc_rule bwd_rule(const ogc_op *op) {
    return (ogc_rule){.fp32_ulps = op->fp32_ulps,
                      .roundings16 = op->bwd_roundings16 > 0 ? op->bwd_roundings16 : 1,
                      .fp64_ulps = op->fp64_ulps > 0 ? op->fp64_ulps : OGC_FP64_ULPS};
}

// A failed comparison of `what` reported with its named diagnosis (and the prefix, if any).
static void report_mismatch(ogc_report *rep, const char *prefix, const char *what,
                            const ogc_stats *st, ogc_rule rule, aclDataType dt, const void *got,
                            const double *want, const double *mag, int64_t terms, int64_t n) {
    char msg[400];
    double alpha = ogc_factor_fit(rule, dt, got, want, mag, terms, n, st);
    bool named = ogc_describe_mismatch(msg, sizeof msg, what, st, alpha, n, dt, rule);
    report_fail(rep, OGC_FAIL, named ? RANK_SPECIFIC : RANK_MISMATCH, "%s%s", prefix, msg);
}

// The output and saved tensors against the reference at the quantized inputs, and the share of
// zeros in the output. A mismatch does not stop the case: the backward is still checked.
static bool stage_forward_values(case_state *cs, ogc_report *rep) {
    const ogc_op *op = cs->op;
    aclDataType dt = cs->out_dt;
    int64_t n = cs->n;
    ref_forward_all(op, &cs->l, cs->xq, &cs->ref);
    for (int j = 0; j < cs->nfwd; j++) {
        ogc_stats fs = {0};
        const double *want = j == 0 ? cs->ref.y : cs->ref.saved[j - 1];
        const double *fmag = j == 0 ? cs->ref.ymag : NULL;
        int64_t fterms = j == 0 ? cs->ref.yterms : 1;
        ogc_compare(fwd_rule(op), dt, cs->fwd[j].data, want, fmag, fterms, n, &fs);
        add_stats(&cs->s, &fs);
        if (j == 0 && cs->samples) record_forward(cs, fwd_rule(op), cs->fwd[0].data, want, fmag);
        if (fs.bad) {
            char what[64];
            snprintf(what, sizeof what, "forward %s", j == 0 ? "output" : op->saved_names[j - 1]);
            report_mismatch(rep, "", what, &fs, fwd_rule(op), dt, cs->fwd[j].data, want, fmag,
                            fterms, n);
        }
    }
    if (n >= 16 &&
        count_zeros(cs->fwd[0].data, dt, n) > (op->zero_trust > 0 ? op->zero_trust : 0.65) * n)
        report_fail(rep, OGC_MISTRUSTED, RANK_TRUST,
                    "forward output is mostly zero (%lld of %lld): the test data says little",
                    (long long)count_zeros(cs->fwd[0].data, dt, n), (long long)n);
    return true;
}

// The thread counts results are compared on, besides the default: 1, and on engine-sized layouts
// (whose tilings cut the work into several ranges) every count up to OG_BLOCK_CHECK_THREADS.
static int other_thread_counts(const case_state *cs, int *counts) {
    int threads = opgrad_get_num_threads(), n = 0;
    int most = cs->l.engine ? OG_BLOCK_CHECK_THREADS : 1;
    for (int t = 1; t <= most; t++)
        if (t != threads) counts[n++] = t;
    return n;
}

// A rerun of `what` that differed from the first run: at the same thread count (other = 0), or at
// `other` threads against the default `threads`.
static void report_nondeterminism(ogc_report *rep, const char *what, int other, int threads) {
    if (other == 0)
        report_fail(rep, OGC_FAIL, RANK_DETERMINISM,
                    "%s is not deterministic: two runs on the same data differ", what);
    else
        report_fail(rep, OGC_FAIL, RANK_DETERMINISM,
                    "%s depends on the thread count: %d thread%s differ%s from %d", what, other,
                    other == 1 ? "" : "s", other == 1 ? "s" : "", threads);
}

// The forward again: twice, then at the other thread counts, bitwise equal to the first run (a
// reduction must sum in a fixed order). Skipped after a failure; never stops the case.
static bool stage_forward_determinism(case_state *cs, ogc_report *rep) {
    const ogc_op *op = cs->op;
    if (rep->status == OGC_FAIL || cs->n == 0) return true;
    ogc_result again[1 + OGC_MAX_SAVED];
    int threads = opgrad_get_num_threads(), counts[OG_BLOCK_CHECK_THREADS + 1];
    int runs = 1 + other_thread_counts(cs, counts);
    for (int pass = 0; pass < runs && rep->status != OGC_FAIL; pass++) {
        if (pass > 0) opgrad_set_num_threads(counts[pass - 1]);
        for (int j = 0; j < cs->nfwd; j++)
            declare(&again[j], &cs->l.out, cs->out_dt,
                    (char *)cs->snap_buf + (size_t)j * cs->capacity, cs->capacity);
        ogc_call call = {.op = op, .dtype = cs->dt, .results = again, .nresults = cs->nfwd};
        for (int k = 0; k < op->nin; k++) call.in[k] = cs->in[k].tensor;
        if (op->forward(&call) == 0 && call.nresults == cs->nfwd &&
            !results_equal(cs->fwd, again, cs->nfwd))
            report_nondeterminism(rep, "forward", pass == 0 ? 0 : counts[pass - 1], threads);
    }
    opgrad_set_num_threads(threads);
    return true;
}

// The in-place form (aclnnInplaceXxx) on a fresh copy of input 0 in the case's own view (strided,
// padded, offset): the values read back through the view against the reference output, and every
// storage element outside the view unchanged. Only where input 0 has the output's shape.
static bool stage_inplace(case_state *cs, ogc_report *rep) {
    const ogc_op *op = cs->op;
    if (!op->forward_inplace || !ogc_shape_equal(&cs->l.in[0], &cs->l.out)) return true;
    int64_t n = cs->n;
    size_t es = aclDataTypeSize(cs->dt);
    double *values = malloc(((size_t)n + 1) * sizeof *values);
    int64_t *pos = malloc(((size_t)n + 1) * sizeof *pos);
    input self = {0};
    unsigned char *before = NULL;
    if (values) memcpy(values, cs->xq[0], (size_t)n * sizeof *values);
    if (!values || !pos || !make_input(cs->dt, &cs->l.in[0], cs->l.view[0], values, &self) ||
        !(before = malloc((size_t)self.extent * es + 1))) {
        report_fail(rep, OGC_FAIL, RANK_CONTRACT, "internal: cannot build the in-place input");
        goto done;
    }
    memcpy(before, self.storage, (size_t)self.extent * es);
    ogc_call call = {.op = op, .dtype = cs->dt};
    for (int k = 0; k < op->nin; k++) call.in[k] = k == 0 ? self.tensor : cs->in[k].tensor;
    int st = op->forward_inplace(&call);
    if (st != 0) {
        report_fail(rep, OGC_FAIL, RANK_CONTRACT, "in-place form returned status %d: %s", st,
                    aclGetRecentErrMsg());
    } else {
        // the view's elements, gathered dense; then everything else must be as it was
        view_positions(&self, &cs->l.in[0], pos);
        unsigned char *got = malloc((size_t)n * es + 1);
        for (int64_t i = 0; got && i < n; i++) {
            memcpy(got + (size_t)i * es, (unsigned char *)self.storage + (size_t)pos[i] * es, es);
            memcpy(before + (size_t)pos[i] * es, got + (size_t)i * es, es);
        }
        ogc_stats is = {0};
        if (got)
            ogc_compare(fwd_rule(op), cs->dt, got, cs->ref.y, cs->ref.ymag, cs->ref.yterms, n, &is);
        add_stats(&cs->s, &is);
        if (!got)
            report_fail(rep, OGC_FAIL, RANK_CONTRACT, "internal: out of memory (in-place form)");
        else if (is.bad)
            report_mismatch(rep, "in-place form: ", "output", &is, fwd_rule(op), cs->dt, got,
                            cs->ref.y, cs->ref.ymag, cs->ref.yterms, n);
        else if (memcmp(before, self.storage, (size_t)self.extent * es))
            report_fail(rep, OGC_FAIL, RANK_SPECIFIC,
                        "in-place form writes outside its tensor's view (storage elements that "
                        "are not part of the %s view changed)",
                        cs->l.name);
        free(got);
    }
done:
    free(before);
    if (self.storage) free_input(&self);
    free(values);
    free(pos);
    return true;
}

// What the backward gets: the saved tensors (and their values for the reference) and a random
// grad_output. The draws continue the case's stream after the inputs' draws.
static bool stage_backward_inputs(case_state *cs, ogc_report *rep) {
    (void)rep;
    const ogc_op *op = cs->op;
    int64_t n = cs->n;
    for (int si = 0; si < nsaved_of(op); si++) {
        const ogc_result *src = op->backward_uses_output ? &cs->fwd[0] : &cs->fwd[1 + si];
        cs->saved_t[si] = ogc_result_tensor(src);
        cs->saved_q[si] = calloc((size_t)n + 1, sizeof(double));
        for (int64_t i = 0; i < n; i++) cs->saved_q[si][i] = ogc_load(src->data, i, src->dtype);
    }
    og_rng *r = &cs->rng;
    for (int64_t i = 0; i < n; i++) {
        // non-zero dL/dy (B(0) is checked on its own): +-1, +-2 and values in +-[0.25, 2]
        double mag =
            og_rng_next(r) % 4 == 0 ? (double)(1 + og_rng_next(r) % 2) : og_rng_uniform(r, 0.25, 2);
        double g = og_rng_next(r) & 1 ? mag : -mag;
        // quantize dL/dy to the dtype: the reference must see what the kernel sees
        float f = (float)g;
        cs->gy[i] = cs->grad_dt == ACL_DOUBLE    ? g
                    : cs->grad_dt == ACL_FLOAT16 ? og_f16_to_f32(og_f32_to_f16(f))
                    : cs->grad_dt == ACL_BF16    ? og_bf16_to_f32(og_f32_to_bf16(f))
                                                 : f;
    }
    return true;
}

// Runs the backward; its status, the gradient count, and every gradient's shape (with the
// missing-reduction diagnosis) and dtype. Keeps the gradients in `first` for later stages.
static bool stage_backward_contract(case_state *cs, ogc_report *rep) {
    const ogc_op *op = cs->op;
    aclDataType dt = cs->dt;
    cs->ndiff = 0;
    for (int k = 0; k < op->nin; k++) cs->ndiff += op->in[k].differentiable;
    int st = run_backward(cs, cs->gy);
    if (st != 0) {
        report_fail(rep, OGC_FAIL, RANK_CONTRACT, "backward returned status %d: %s", st,
                    aclGetRecentErrMsg());
        return false;
    }
    if (cs->nbwd != cs->ndiff) {
        report_fail(rep, OGC_FAIL, RANK_CONTRACT,
                    "backward returned %d gradient%s, the op has %d differentiable input%s",
                    cs->nbwd, cs->nbwd == 1 ? "" : "s", cs->ndiff, cs->ndiff == 1 ? "" : "s");
        return false;
    }
    for (int k = 0, j = 0; k < op->nin; k++) {
        if (!op->in[k].differentiable) continue;
        ogc_result *g = &cs->bwd[j++];
        ogc_shape got = result_shape(g);
        if (!ogc_shape_equal(&got, &cs->l.in[k])) {
            char msg[400];
            ogc_shape_diagnosis(msg, sizeof msg, op->in[k].name, k, &got, &cs->l.in[k], &cs->l.out);
            report_fail(rep, OGC_FAIL, RANK_CONTRACT, "%s", msg);
            return false;
        }
        if (g->dtype != dt) {
            report_fail(rep, OGC_FAIL, RANK_CONTRACT,
                        "grad of input %d ('%s') has dtype %s, input is %s%s", k, op->in[k].name,
                        og_dtype_name(g->dtype), og_dtype_name(dt),
                        g->dtype == cs->grad_dt && cs->grad_dt != dt
                            ? ": it follows grad_output's dtype instead of the input's"
                            : "");
            return false;
        }
    }
    snapshot(cs->bwd, cs->nbwd, cs->first, cs->snap_buf, cs->capacity);
    return true;
}

// The first element of gradient j that is not twice `first` (beyond rounding), or -1.
static int64_t not_doubled(const case_state *cs, int j) {
    aclDataType dt = cs->dt;
    int64_t nj = result_numel(&cs->bwd[j]);
    for (int64_t i = 0; i < nj; i++) {
        double a = ogc_load(cs->bwd[j].data, i, dt), b = 2 * ogc_load(cs->first[j].data, i, dt);
        if (a != b && !(fabs(a - b) <= ogc_tolerance(cs->op->fp32_ulps, dt, b, fabs(b), 1)) &&
            !(isnan(a) && isnan(b)))
            return i;
    }
    return -1;
}

// B(2g) = 2 B(g) (scaling by 2 is exact in binary floating point): a backward that ignores
// grad_output is named as such; one that merely does not scale gives way to a named mismatch of
// the values (a wrong stride or a skipped tile breaks both). Leaves `first` in the results.
static bool stage_linearity(case_state *cs, ogc_report *rep) {
    if (cs->n == 0) return true;
    for (int64_t i = 0; i < cs->n; i++) cs->gy2[i] = 2 * cs->gy[i];
    if (run_backward(cs, cs->gy2) == 0) {
        bool unchanged = results_equal(cs->bwd, cs->first, cs->nbwd);
        for (int j = 0; j < cs->nbwd; j++) {
            int64_t i = not_doubled(cs, j);
            if (i < 0) continue;
            if (unchanged)
                report_fail(rep, OGC_FAIL, RANK_IGNORES,
                            "backward ignores grad_output: doubling grad_output leaves every "
                            "gradient unchanged");
            else
                report_fail(rep, OGC_FAIL, RANK_LINEARITY,
                            "backward does not scale with grad_output: B(2g) != 2 B(g) at element "
                            "%lld of gradient %d (%.9g vs %.9g)",
                            (long long)i, j, ogc_load(cs->bwd[j].data, i, cs->dt),
                            2 * ogc_load(cs->first[j].data, i, cs->dt));
            break;
        }
    }
    for (int j = 0; j < cs->nbwd; j++) memcpy(cs->bwd[j].data, cs->first[j].data, cs->capacity);
    return true;
}

// Gradient g of input k against the reference: a mismatch (named when the gradient is all 0),
// else coverage and trust (an input the data never exercises, a mostly-zero gradient).
static void check_gradient(case_state *cs, ogc_report *rep, int k, const ogc_result *g) {
    const ogc_op *op = cs->op;
    const refs *ref = &cs->ref;
    aclDataType dt = cs->dt;
    const char *name = op->in[k].name;
    int64_t nk = ogc_numel(&cs->l.in[k]);
    ogc_stats gs = {0};
    ogc_compare(bwd_rule(op), dt, g->data, ref->gx[k], ref->mag[k], ref->terms[k], nk, &gs);
    add_stats(&cs->s, &gs);
    if (cs->samples)
        ogc_series_record(&cs->samples->bwd, bwd_rule(op), dt, g->data, ref->gx[k], ref->mag[k],
                          ref->terms[k], nk, cs->xq[k]);
    bool ref_zero = true, got_zero = true;
    for (int64_t i = 0; i < nk; i++) {
        ref_zero &= ref->gx[k][i] == 0;
        got_zero &= ogc_load(g->data, i, dt) == 0;
    }
    if (gs.bad && got_zero) {
        report_fail(rep, OGC_FAIL, RANK_SPECIFIC,
                    "gradient of '%s' is identically 0 but the reference is not: input '%s' is "
                    "not wired into the backward",
                    name, name);
    } else if (gs.bad) {
        char what[64];
        snprintf(what, sizeof what, "gradient of '%s'", name);
        report_mismatch(rep, "", what, &gs, bwd_rule(op), dt, g->data, ref->gx[k], ref->mag[k],
                        ref->terms[k], nk);
    } else if (nk > 0 && ref_zero) {
        report_fail(rep, OGC_MISTRUSTED, RANK_TRUST,
                    "input '%s' is never exercised by the test data (its gradient is 0 everywhere)",
                    name);
    } else if (nk >= 16 &&
               count_zeros(g->data, dt, nk) > (op->zero_trust > 0 ? op->zero_trust : 0.65) * nk) {
        report_fail(rep, OGC_MISTRUSTED, RANK_TRUST,
                    "gradient of '%s' is mostly zero (%lld of %lld)", name,
                    (long long)count_zeros(g->data, dt, nk), (long long)nk);
    }
}

// Every gradient against the reference (reduced over broadcast dims) at the quantized inputs and
// saved values, with coverage and trust. The later stages need a non-empty output.
static bool stage_backward_values(case_state *cs, ogc_report *rep) {
    const ogc_op *op = cs->op;
    ref_backward_all(op, &cs->l, cs->xq, cs->saved_q, cs->gy, &cs->ref);
    for (int k = 0, j = 0; k < op->nin; k++) {
        if (!op->in[k].differentiable) continue;
        check_gradient(cs, rep, k, &cs->bwd[j++]);
    }
    return cs->n != 0;
}

// B(0) = 0: with grad_output = 0 every gradient is exactly 0.
static bool stage_zero_grad(case_state *cs, ogc_report *rep) {
    memset(cs->gy2, 0, (size_t)cs->n * sizeof *cs->gy2);
    if (run_backward(cs, cs->gy2) != 0) return true;
    bool found = false;
    for (int j = 0; j < cs->nbwd && !found; j++) {
        int64_t nj = result_numel(&cs->bwd[j]);
        for (int64_t i = 0; i < nj && !found; i++)
            if (ogc_load(cs->bwd[j].data, i, cs->dt) != 0) {
                report_fail(rep, OGC_FAIL, RANK_SPECIFIC,
                            "backward is not linear in grad_output: with grad_output = 0 gradient "
                            "%d is %.9g at element %lld, not 0 (a term that does not scale with "
                            "grad_output, or a value left from an earlier call)",
                            j, ogc_load(cs->bwd[j].data, i, cs->dt), (long long)i);
                found = true;
            }
    }
    return true;
}

// The backward again: twice, then at the other thread counts, bitwise equal to `first`.
static bool stage_backward_determinism(case_state *cs, ogc_report *rep) {
    if (rep->status == OGC_FAIL) return true;
    int threads = opgrad_get_num_threads(), counts[OG_BLOCK_CHECK_THREADS + 1];
    int runs = 1 + other_thread_counts(cs, counts);
    for (int pass = 0; pass < runs && rep->status != OGC_FAIL; pass++) {
        if (pass > 0) opgrad_set_num_threads(counts[pass - 1]);
        if (run_backward(cs, cs->gy) == 0 && !results_equal(cs->bwd, cs->first, cs->nbwd))
            report_nondeterminism(rep, "backward", pass == 0 ? 0 : counts[pass - 1], threads);
    }
    opgrad_set_num_threads(threads);
    return true;
}

typedef bool (*case_stage)(case_state *cs, ogc_report *rep);

// The stages of a case, in the order docs/architecture.md gives; the case stops at the first that
// returns false.
static const case_stage case_stages[] = {
    stage_inputs,               // draw, quantize and lay out the inputs
    stage_forward_contract,     // forward status, result count, dtypes, shapes
    stage_forward_values,       // forward against the reference; mostly-zero output
    stage_forward_determinism,  // forward twice, and at other thread counts
    stage_inplace,              // the in-place form, on input 0's own view
    stage_backward_inputs,      // saved tensors, grad_output
    stage_backward_contract,    // backward status, gradient count, shapes, dtypes
    stage_linearity,            // B(2g) = 2 B(g)
    stage_backward_values,      // gradients against the reference; coverage and trust
    stage_zero_grad,            // B(0) = 0
    stage_backward_determinism, // backward twice, and at other thread counts
};

ogc_status ogc_check_case(const ogc_op *op, aclDataType dt, const char *layout,
                          const ogc_options *opt, ogc_report *rep) {
    memset(rep, 0, sizeof *rep);
    rep->op = op->name;
    rep->dtype = dt;
    rep->layout = layout;
    rep->seed = opt->seed;
    rep->status = OGC_PASS;
    rep->isa = (int)opgrad_active_isa();
    fill_repro(rep, opt);
    if (opt->samples) memset(opt->samples, 0, sizeof *opt->samples);
    case_state cs = {.op = op, .dt = dt, .samples = opt->samples};
    if (!case_applies(&cs, layout, rep)) return rep->status;
    case_alloc(&cs, opt->seed, layout);
    og_size_gates gates = og_size_gates_get();
    og_gemm_blocking blocking = og_gemm_blocking_get();
    if (cs.l.gated) og_size_gates_set(&(og_size_gates){1, 1, 1, 1, 1});
    if (cs.l.engine) og_gemm_blocking_set(&cs.l.gemm); // tiny GEMM blocks (engine/blocking.h)
    for (size_t i = 0; i < sizeof case_stages / sizeof *case_stages; i++) {
        if (forward_only(op) && case_stages[i] == stage_backward_inputs) break;
        if (!case_stages[i](&cs, rep)) break;
    }
    if (cs.l.gated) og_size_gates_set(&gates);
    if (cs.l.engine) og_gemm_blocking_set(&blocking);
    finish_stats(rep, &cs.s);
    case_free(&cs);
    return rep->status;
}

// ---------------------------------------------------------------------------------------------
// O1: the formula, in float64

// L(x) = sum_i w_i y_i(x) for the inputs x (input-shaped arrays).
static double loss(const ogc_op *op, const ogc_layout *l, double *const *x, const double *w) {
    refs r = {0};
    ref_forward_all(op, l, x, &r);
    double L = 0;
    for (int64_t i = 0; i < r.n; i++) L += w[i] * r.y[i];
    refs_free(&r);
    return L;
}

// Directional derivative of L along delta (on input k) by central differences with one
// Richardson step; *err gets the extrapolation's error estimate.
static double fd_directional(const ogc_op *op, const ogc_layout *l, double *const *x, int k,
                             const double *delta, const double *w, double *err) {
    int64_t nk = ogc_numel(&l->in[k]);
    double *orig = malloc(((size_t)nk + 1) * sizeof(double));
    memcpy(orig, x[k], (size_t)nk * sizeof(double));
    double h = cbrt(DBL_EPSILON), d[2];
    for (int step = 0; step < 2; step++, h /= 2) {
        for (int64_t i = 0; i < nk; i++) x[k][i] = orig[i] + h * delta[i];
        double plus = loss(op, l, x, w);
        for (int64_t i = 0; i < nk; i++) x[k][i] = orig[i] - h * delta[i];
        double minus = loss(op, l, x, w);
        d[step] = (plus - minus) / (2 * h);
    }
    memcpy(x[k], orig, (size_t)nk * sizeof(double));
    free(orig);
    double rich = (4 * d[1] - d[0]) / 3;
    *err = fabs(rich - d[1]);
    return rich;
}

ogc_status ogc_check_formula(const ogc_op *op, const char *layout, const ogc_options *opt,
                             ogc_report *rep) {
    memset(rep, 0, sizeof *rep);
    rep->op = op->name;
    rep->dtype = ACL_DOUBLE;
    rep->layout = layout;
    rep->seed = opt->seed;
    rep->status = OGC_PASS;
    rep->isa = -1;
    fill_repro(rep, opt);
    if (opt->samples) memset(opt->samples, 0, sizeof *opt->samples); // no kernel ran
    if (forward_only(op)) { // nothing differentiable: no backward formula to check
        rep->status = OGC_SKIPPED;
        snprintf(rep->diagnosis, sizeof rep->diagnosis,
                 "forward-only entry: no backward formula to check");
        return rep->status;
    }
    ogc_layout l;
    if (!case_layout(op, layout, &l, rep)) return rep->status;
    if (l.engine) { // engine-sized shapes test the kernels; the formula is the same on small ones
        rep->status = OGC_SKIPPED;
        snprintf(rep->diagnosis, sizeof rep->diagnosis,
                 "layout does not apply to the float64 formula check (engine-sized)");
        return rep->status;
    }
    og_rng r;
    og_rng_seed(&r, case_seed(opt->seed, op->name, ACL_DOUBLE, layout));
    int64_t n = ogc_numel(&l.out);
    double *x[OGC_MAX_IN] = {0};
    for (int k = 0; k < op->nin; k++)
        x[k] = calloc((size_t)ogc_numel(&l.in[k]) + 1, sizeof(double));
    draw_inputs(op, &l, &r, x);
    for (int attempt = 1; attempt < 32 && !clear_of_kinks(op, &l, x); attempt++)
        draw_inputs(op, &l, &r, x);
    double *w = calloc((size_t)n + 1, sizeof(double));
    for (int64_t i = 0; i < n; i++) w[i] = og_rng_uniform(&r, -1, 1);
    refs ref = {0};
    ref_forward_all(op, &l, x, &ref);
    ref_backward_all(op, &l, x, ref.saved, w, &ref);
    double worst = 0;
    for (int k = 0; k < op->nin && rep->status == OGC_PASS; k++) {
        if (!op->in[k].differentiable) continue;
        int64_t nk = ogc_numel(&l.in[k]);
        if (nk == 0) continue;
        bool full = opt->mode == OGC_MODE_FULL && nk <= 64;
        int probes = full ? (int)nk : 4;
        double *delta = calloc((size_t)nk + 1, sizeof(double));
        for (int p = 0; p < probes && rep->status == OGC_PASS; p++) {
            double analytic = 0;
            for (int64_t i = 0; i < nk; i++) {
                double scale = fmax(1.0, fabs(x[k][i]));
                delta[i] = full ? (i == p ? scale : 0) : ((og_rng_next(&r) & 1) ? scale : -scale);
                analytic += ref.gx[k][i] * delta[i];
            }
            double err, fd = fd_directional(op, &l, x, k, delta, w, &err);
            // rounding in L: |w y| per output element, or for tensor-level forwards the
            // magnitude of the terms each output sums (cancellation), sqrt(terms) of them
            double size = 0;
            for (int64_t i = 0; i < n; i++)
                size += ref.ymag ? fabs(w[i]) * ref.ymag[i] : fabs(w[i] * ref.y[i]);
            size *= sqrt((double)(ref.yterms > 1 ? ref.yterms : 1));
            double tol = 10 * err + 1e-9 * fmax(1.0, fabs(analytic)) +
                         8 * DBL_EPSILON * size / cbrt(DBL_EPSILON);
            double diff = fabs(fd - analytic);
            rep->compared++;
            worst = fmax(worst, diff / fmax(tol, DBL_MIN));
            rep->max_abs = fmax(rep->max_abs, diff);
            if (analytic != 0) rep->max_rel = fmax(rep->max_rel, diff / fabs(analytic));
            if (!(diff <= tol))
                report_fail(rep, OGC_FAIL, RANK_CONTRACT,
                            "reference backward of '%s' disagrees with finite differences of the "
                            "reference forward (%s %d: analytic %.12g, finite differences %.12g, "
                            "tolerance %.3g)",
                            op->in[k].name, full ? "element" : "projection", p, analytic, fd, tol);
        }
        free(delta);
    }
    refs_free(&ref);
    for (int k = 0; k < op->nin; k++) free(x[k]);
    free(w);
    return rep->status;
}

void ogc_report_json(FILE *f, const ogc_report *r) {
    fprintf(
        f,
        "{\"op\":\"%s\",\"dtype\":\"%s\",\"isa\":\"%s\",\"layout\":\"%s\",\"seed\":%llu,"
        "\"status\":\"%s\",\"compared\":%lld,\"max_abs\":%.6g,\"max_rel\":%.6g,\"max_ulp\":%.6g,"
        "\"mean_ulp\":%.6g,\"bias_ulp\":%.6g,\"mere\":%.6g,\"mare\":%.6g,\"diagnosis\":\"",
        r->op, r->isa < 0 ? "float64-formula" : og_dtype_name(r->dtype),
        r->isa < 0 ? "-" : opgrad_isa_name((opgrad_isa)r->isa), r->layout,
        (unsigned long long)r->seed, ogc_status_name(r->status), (long long)r->compared, r->max_abs,
        r->max_rel, r->max_ulp, r->mean_ulp, r->bias_ulp, r->mere, r->mare);
    for (const char *p = r->diagnosis; *p; p++) {
        if (*p == '"' || *p == '\\') fputc('\\', f);
        fputc(*p, f);
    }
    fprintf(f, "\",\"repro\":\"%s\"}", r->repro);
}
