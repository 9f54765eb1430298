/* Gradient compression (an opgrad extension, include/aclnnop/aclnn_grad_compress.h): fp16/bf16
 * cast with optional stochastic rounding, top-k and sign (1-bit) with error feedback, and their
 * decompression.
 *
 * Each operator is one or more CUSTOM steps (engine/program.h): no engine writes packed bits,
 * selects the k largest values or scatters. The work is split into fixed chunks of OG_CMP_CHUNK
 * elements, never into per-thread shares, and whatever is summed across chunks is summed in chunk
 * order after the parallel pass (or is an integer count), so results do not depend on the thread
 * count. Values are computed in fp32 (16-bit inputs widened exactly) and rounded once on the way
 * out.
 *
 * Top-k selects by threshold, O(n): the key of an element is the bit pattern of |y| as an
 * unsigned integer (monotonic in |y| for non-negative floats, NaN above inf); two histogram
 * passes over 16 and 15 key bits find the k-th largest key T exactly, then a counting pass
 * and a writing pass send every key > T and the first (in index order) keys == T. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "aclnnop/aclnn_grad_compress.h"
#include "engine/convert.h"
#include "engine/program.h"
#include "ops/common/checks.h"
#include "ops/common/view_index.h"
#include "runtime/cpu.h"
#include "runtime/pool.h"
#include "tensor/dtype.h"

// Elements per parallel unit; a multiple of 8 so that a unit's sign bits fill whole bytes.
#define OG_CMP_CHUNK 16384
_Static_assert(OG_CMP_CHUNK % 8 == 0, "a chunk's sign bits fill whole bytes");

static int64_t chunks_of(int64_t n) { return (n + OG_CMP_CHUNK - 1) / OG_CMP_CHUNK; }

// ---- element access ------------------------------------------------------------------------
static void load_f32(const og_convert_table *cv, const og_view *v, const char *base, int64_t i0,
                     int64_t n, float *dst) {
    if (v->contiguous) {
        og_load_run(cv, base + i0 * v->esize, v->dtype, 1, dst, n);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        dst[i] = og_load_elem(base + og_view_offset(v, i0 + i) * v->esize, v->dtype);
}

static void store_f32(const og_convert_table *cv, const og_view *v, char *base, int64_t i0,
                      int64_t n, const float *src) {
    if (v->contiguous) {
        og_store_run(cv, base + i0 * v->esize, v->dtype, 1, src, n, false);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        og_store_elem(base + og_view_offset(v, i0 + i) * v->esize, v->dtype, src[i]);
}

// The chunk's y = x + residual (fp32) into y; has_r false: y = x.
static void load_y(const og_convert_table *cv, const og_view *x, const char *xb, const og_view *r,
                   const char *rb, bool has_r, int64_t i0, int64_t n, float *y, float *tmp) {
    load_f32(cv, x, xb, i0, n, y);
    if (!has_r) return;
    load_f32(cv, r, rb, i0, n, tmp);
    for (int64_t i = 0; i < n; i++) y[i] += tmp[i];
}

// ---- shared argument checks ---------------------------------------------------------------
static aclnnStatus fail_arg(const og_opdesc *op, const char *name, const char *rule,
                            const aclTensor *t) {
    return og_fail(ACLNN_ERR_PARAM_INVALID, "%sGetWorkspaceSize: %s (dtype %s, %lld elements) %s",
                   op->name, name, og_dtype_name(t->dtype), (long long)t->numel, rule);
}

// A live tensor of dtype dt (ACL_DT_UNDEFINED: int32 or int64), rank 1 .. max_rank, that fits its
// block, with `numel` elements (numel < 0: any).
static aclnnStatus check_typed(const og_opdesc *op, const char *name, const aclTensor *t,
                               aclDataType dt, int max_rank, int64_t numel) {
    char fn[96];
    snprintf(fn, sizeof fn, "%sGetWorkspaceSize", op->name);
    OG_TRY(og_check_live(fn, name, t, OG_OBJ_TENSOR));
    if (t->dtype != dt)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: %s has dtype %s; it must be %s", fn, name,
                       og_dtype_name(t->dtype), og_dtype_name(dt));
    if (t->ndim < 1 || t->ndim > max_rank)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: %s has rank %d; supported: 1 to %d dims", fn,
                       name, t->ndim, max_rank);
    if (numel >= 0 && t->numel != numel)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: %s has %lld elements; it must have %lld", fn,
                       name, (long long)t->numel, (long long)numel);
    return og_check_fits_block(op, name, t);
}

// At most INT_MAX chunks (og_parallel_for counts units in an int): past 3.5e13 elements, which
// only a stride-0 view reaches.
static aclnnStatus check_size(const og_opdesc *op, const char *name, const aclTensor *t) {
    if (t->numel / OG_CMP_CHUNK < INT_MAX) return ACLNN_SUCCESS;
    return fail_arg(op, name, "has too many elements for one call", t);
}

// x (floating) and the optional residual (FLOAT, x's shape).
static aclnnStatus check_x_residual(const og_opdesc *op, const aclTensor *x, const aclTensor *r) {
    OG_TRY(og_check_tensor(op, "x", x, 0));
    OG_TRY(check_size(op, "x", x));
    if (!r) return ACLNN_SUCCESS;
    OG_TRY(og_check_tensor(op, "residualRef", r, 0));
    if (r->dtype != ACL_FLOAT)
        return fail_arg(op, "residualRef", "must be float32 (the error-feedback residual)", r);
    return og_check_same_shape(op, "x", x, "residualRef", r);
}

// The memory rules (og_check_io_memory) for x | residualRef (optional), out1, out2 (optional).
static aclnnStatus check_io(const og_opdesc *op, const aclTensor *x, const aclTensor *r,
                            const aclTensor *o1, const aclTensor *o2, const char *n1,
                            const char *n2) {
    const aclTensor *outs[3];
    const char *names[4] = {"x"};
    int k = 0;
    if (r) outs[k] = r, names[1 + k++] = "residualRef";
    outs[k] = o1, names[1 + k++] = n1;
    if (o2) outs[k] = o2, names[1 + k++] = n2;
    const aclTensor *in[] = {x};
    return og_check_io_memory(op, 1, in, k, outs, names);
}

// =============================================================================================
// aclnnGradCompressCast
typedef struct cast_plan {
    og_view x, r, out;
    int x_slot, r_slot, out_slot;
    bool has_r, stochastic, bf16;
    int64_t n;
    uint64_t key, offset; // key = the mixed seed
    opgrad_isa isa;
    int threads;
} cast_plan;

typedef struct cast_ctx {
    const cast_plan *p;
    const char *x;
    char *r, *out, *scratch;
} cast_ctx;

// SplitMix64's finaliser: a bijective mix of 64 bits.
static inline uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline float half_f32(uint16_t h, bool bf16) {
    return bf16 ? og_bf16_to_f32(h) : og_f16_to_f32(h);
}

// y rounded to the 16-bit format: nearest even, or stochastically with u in [0, 1) (24 bits).
// The two neighbours lo <= |y| < hi differ by one in their magnitude bits (sign-magnitude
// formats); |y| - |lo| and |hi| - |lo| (a power of two) are exact in fp32, so the probability of
// hi is exactly the fraction of the gap y covers.
static inline uint16_t round16(float y, bool bf16, bool stochastic, float u) {
    uint16_t h = bf16 ? og_f32_to_bf16(y) : og_f32_to_f16(y);
    if (!stochastic || isnan(y) || isinf(y)) return h;
    float hf = half_f32(h, bf16);
    if (hf == y) return h;
    uint16_t lo = fabsf(hf) > fabsf(y) ? (uint16_t)(h - 1) : h; // toward zero
    uint16_t hi = (uint16_t)(lo + 1);                           // away from zero (may be inf)
    float lof = fabsf(half_f32(lo, bf16)), hif = fabsf(half_f32(hi, bf16));
    float frac = (fabsf(y) - lof) / (hif - lof); // hi = inf: 0, never rounds up to inf
    return u < frac ? hi : lo;
}

static void cast_unit(void *vctx, int core, int slot) {
    const cast_ctx *c = vctx;
    const cast_plan *p = c->p;
    const og_convert_table *cv = &og_convert[p->isa];
    int64_t i0 = (int64_t)core * OG_CMP_CHUNK, n = p->n - i0;
    if (n > OG_CMP_CHUNK) n = OG_CMP_CHUNK;
    float *y = (float *)(c->scratch + (uint64_t)slot * 3 * OG_CMP_CHUNK * sizeof(float));
    float *t = y + OG_CMP_CHUNK;
    uint16_t *h = (uint16_t *)(t + OG_CMP_CHUNK);
    load_y(cv, &p->x, c->x, &p->r, c->r, p->has_r, i0, n, y, t);
    aclDataType dt = p->bf16 ? ACL_BF16 : ACL_FLOAT16;
    if (!p->stochastic) {
        // round to nearest even and back through the ISA's vector conversions
        og_store_run(cv, (char *)h, dt, 1, y, n, false);
        og_load_run(cv, (const char *)h, dt, 1, t, n);
        for (int64_t i = 0; i < n; i++) t[i] = y[i] - t[i]; // exact while h is finite
    } else {
        for (int64_t i = 0; i < n; i++) {
            float u = (float)(mix64(p->key + p->offset + (uint64_t)(i0 + i)) >> 40) * 0x1p-24f;
            h[i] = round16(y[i], p->bf16, true, u);
            t[i] = y[i] - half_f32(h[i], p->bf16); // the residual, exact while h is finite
        }
    }
    if (p->out.contiguous)
        memcpy(c->out + i0 * 2, h, (size_t)n * 2);
    else
        for (int64_t i = 0; i < n; i++)
            memcpy(c->out + og_view_offset(&p->out, i0 + i) * 2, &h[i], 2);
    if (p->has_r) store_f32(cv, &p->r, c->r, i0, n, t);
}

static void cast_run(const aclOpExecutor *e, const void *params, char *scratch) {
    const cast_plan *p = params;
    cast_ctx c = {p, og_executor_addr(e, p->x_slot),
                  p->has_r ? og_executor_addr(e, p->r_slot) : NULL,
                  og_executor_addr(e, p->out_slot), scratch};
    og_parallel_for((int)chunks_of(p->n), p->threads, cast_unit, &c);
}

aclnnStatus aclnnGradCompressCastGetWorkspaceSize(const aclTensor *x, aclTensor *residualRef,
                                                  bool stochastic, int64_t seed, int64_t offset,
                                                  aclTensor *out, uint64_t *workspaceSize,
                                                  aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_GradCompressCast;
    const char *names[] = {"x", "out"};
    const void *ptrs[] = {x, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 2, names, ptrs));
    OG_TRY(check_x_residual(op, x, residualRef));
    OG_TRY(og_check_tensor(op, "out", out, 0));
    if (out->dtype != ACL_FLOAT16 && out->dtype != ACL_BF16)
        return fail_arg(op, "out", "must be float16 or bfloat16 (the compressed format)", out);
    OG_TRY(og_check_same_shape(op, "x", x, "out", out));
    OG_TRY(check_io(op, x, residualRef, out, NULL, "out", NULL));
    cast_plan d;
    memset(&d, 0, sizeof d);
    og_view_of(&d.x, x);
    og_view_of(&d.out, out);
    if (residualRef) og_view_of(&d.r, residualRef);
    // slots as for every operator: inputs x, residualRef; outputs residualRef, out (a residual
    // not given keeps its two slots; it is read and written through its output slot)
    d.x_slot = 0, d.r_slot = 2, d.out_slot = 3;
    d.has_r = residualRef != NULL;
    d.stochastic = stochastic;
    d.bf16 = out->dtype == ACL_BF16;
    d.n = x->numel;
    d.key = mix64((uint64_t)seed ^ 0x9E3779B97F4A7C15ull);
    d.offset = (uint64_t)offset;
    const aclTensor *io[] = {x, residualRef, residualRef, out};
    og_prog p;
    og_prog_init(&p, op, 2, 2, io);
    if (d.n > 0) {
        d.isa = og_isa();
        d.threads = og_num_threads();
        int slots[] = {d.x_slot, d.out_slot, residualRef ? d.r_slot : d.out_slot};
        og_prog_custom(&p, cast_run, &d, sizeof d, slots, 3,
                       (uint64_t)d.threads * 3 * OG_CMP_CHUNK * sizeof(float));
    }
    return og_prog_publish(&p, workspaceSize, executor);
}

// =============================================================================================
// aclnnGradCompressTopK
#define TOPK_BINS 65536 // 16 key bits in the first pass, the other 15 in the second

typedef struct topk_plan {
    og_view x, r, vals, idx;
    int x_slot, r_slot, vals_slot, idx_slot;
    bool has_r;
    int64_t n, k;
    opgrad_isa isa;
    int threads;
    uint64_t y_bytes, tmp_bytes, hist_bytes; // scratch: y [n], per-slot tmp, per-slot histograms
} topk_plan;

typedef struct topk_ctx {
    const topk_plan *p;
    const char *x;
    char *r, *vals, *idx;
    float *y, *tmp;
    int64_t *hist;  // [threads][TOPK_BINS]
    int64_t *count; // [chunks][2]: keys > T, keys == T; then output offset, ties to take
    int level;      // histogram pass 0, 1
    uint32_t prefix, thr;
} topk_ctx;

static inline uint32_t key_of(float v) {
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u & 0x7FFFFFFFu; // |v|: its bits order like its value, NaN above inf
}

// The histogram of one level's key bits over the keys matching the prefix of the levels above.
static void topk_hist(const topk_ctx *c, int64_t i0, int64_t n, int64_t *h) {
    const float *y = c->y + i0;
    if (c->level == 0) {
        for (int64_t i = 0; i < n; i++) h[key_of(y[i]) >> 15]++;
    } else {
        for (int64_t i = 0; i < n; i++) {
            uint32_t k = key_of(y[i]);
            if (k >> 15 == c->prefix) h[k & 0x7FFF]++;
        }
    }
}

static void topk_pass_unit(void *vctx, int core, int slot) {
    const topk_ctx *c = vctx;
    const topk_plan *p = c->p;
    int64_t i0 = (int64_t)core * OG_CMP_CHUNK, n = p->n - i0;
    if (n > OG_CMP_CHUNK) n = OG_CMP_CHUNK;
    if (c->level == 0) // the first pass also forms y
        load_y(&og_convert[p->isa], &p->x, c->x, &p->r, c->r, p->has_r, i0, n, c->y + i0,
               c->tmp + (int64_t)slot * OG_CMP_CHUNK);
    topk_hist(c, i0, n, c->hist + (int64_t)slot * TOPK_BINS);
}

static void topk_count_unit(void *vctx, int core, int slot) {
    (void)slot;
    const topk_ctx *c = vctx;
    int64_t i0 = (int64_t)core * OG_CMP_CHUNK, n = c->p->n - i0, gt = 0, eq = 0;
    if (n > OG_CMP_CHUNK) n = OG_CMP_CHUNK;
    for (int64_t i = 0; i < n; i++) {
        uint32_t k = key_of(c->y[i0 + i]);
        gt += k > c->thr, eq += k == c->thr;
    }
    c->count[2 * core] = gt, c->count[2 * core + 1] = eq;
}

static void topk_write_unit(void *vctx, int core, int slot) {
    (void)slot;
    const topk_ctx *c = vctx;
    const topk_plan *p = c->p;
    int64_t i0 = (int64_t)core * OG_CMP_CHUNK, n = p->n - i0;
    if (n > OG_CMP_CHUNK) n = OG_CMP_CHUNK;
    int64_t at = c->count[2 * core], ties = c->count[2 * core + 1];
    float *y = c->y + i0;
    if (p->k > 0)
        for (int64_t i = 0; i < n; i++) {
            uint32_t k = key_of(y[i]);
            if (k < c->thr || (k == c->thr && ties-- <= 0)) continue;
            og_store_elem(c->vals + og_view_offset(&p->vals, at) * p->vals.esize, p->vals.dtype,
                          y[i]);
            int64_t ix = i0 + i;
            memcpy(c->idx + og_view_offset(&p->idx, at) * 8, &ix, 8);
            at++;
            y[i] = 0; // sent: the residual keeps nothing of it
        }
    if (p->has_r) store_f32(&og_convert[p->isa], &p->r, c->r, i0, n, y);
}

// The bin holding the k-th largest key of histogram h (k 1-based); k becomes its rank in the bin.
static int topk_pick(const int64_t *h, int nbins, int64_t *k) {
    for (int b = nbins - 1; b > 0; b--) {
        if (*k <= h[b]) return b;
        *k -= h[b];
    }
    return 0;
}

static void topk_run(const aclOpExecutor *e, const void *params, char *scratch) {
    const topk_plan *p = params;
    int64_t chunks = chunks_of(p->n);
    topk_ctx c = {.p = p,
                  .x = og_executor_addr(e, p->x_slot),
                  .r = p->has_r ? og_executor_addr(e, p->r_slot) : NULL,
                  .vals = og_executor_addr(e, p->vals_slot),
                  .idx = og_executor_addr(e, p->idx_slot),
                  .y = (float *)scratch,
                  .tmp = (float *)(scratch + p->y_bytes),
                  .hist = (int64_t *)(scratch + p->y_bytes + p->tmp_bytes),
                  .count = (int64_t *)(scratch + p->y_bytes + p->tmp_bytes + p->hist_bytes)};
    // two histogram levels narrow the k-th largest key down to one value T (integer counts:
    // their sum over the threads' histograms does not depend on the split)
    int64_t rank = p->k, *h = c.hist; // the threads' histograms summed into the first
    uint32_t key = 0;
    for (int level = 0; level < 2; level++) {
        c.level = level;
        c.prefix = key;
        memset(c.hist, 0, (size_t)p->threads * TOPK_BINS * sizeof(int64_t));
        og_parallel_for((int)chunks, p->threads, topk_pass_unit, &c);
        int nbins = level == 0 ? TOPK_BINS : 32768;
        for (int s = 1; s < p->threads; s++)
            for (int b = 0; b < nbins; b++) h[b] += c.hist[(int64_t)s * TOPK_BINS + b];
        if (p->k == 0) break; // nothing to send: y is formed, the residual is y
        key = (key << (level == 0 ? 0 : 15)) | (uint32_t)topk_pick(h, nbins, &rank);
    }
    c.thr = key;
    if (p->k > 0) {
        // every key > T is sent, and the first `rank` keys == T in index order
        og_parallel_for((int)chunks, p->threads, topk_count_unit, &c);
        int64_t at = 0, ties = rank;
        for (int64_t ch = 0; ch < chunks; ch++) {
            int64_t gt = c.count[2 * ch], eq = c.count[2 * ch + 1];
            int64_t take = eq < ties ? eq : ties;
            c.count[2 * ch] = at, c.count[2 * ch + 1] = take;
            at += gt + take, ties -= take;
        }
    }
    og_parallel_for((int)chunks, p->threads, topk_write_unit, &c);
}

aclnnStatus aclnnGradCompressTopKGetWorkspaceSize(const aclTensor *x, aclTensor *residualRef,
                                                  aclTensor *valuesOut, aclTensor *indicesOut,
                                                  uint64_t *workspaceSize,
                                                  aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_GradCompressTopK;
    const char *names[] = {"x", "valuesOut", "indicesOut"};
    const void *ptrs[] = {x, valuesOut, indicesOut};
    OG_TRY(og_check_args(op, workspaceSize, executor, 3, names, ptrs));
    OG_TRY(check_x_residual(op, x, residualRef));
    OG_TRY(og_check_tensor(op, "valuesOut", valuesOut, 1));
    if (valuesOut->ndim != 1) return fail_arg(op, "valuesOut", "must be 1-D [k]", valuesOut);
    if (valuesOut->numel > x->numel)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: valuesOut asks for k = %lld elements; x has only %lld",
                       op->name, (long long)valuesOut->numel, (long long)x->numel);
    OG_TRY(check_typed(op, "indicesOut", indicesOut, ACL_INT64, 1, valuesOut->numel));
    OG_TRY(check_io(op, x, residualRef, valuesOut, indicesOut, "valuesOut", "indicesOut"));
    topk_plan d;
    memset(&d, 0, sizeof d);
    og_view_of(&d.x, x);
    og_view_of(&d.vals, valuesOut);
    og_view_of(&d.idx, indicesOut);
    if (residualRef) og_view_of(&d.r, residualRef);
    d.has_r = residualRef != NULL;
    // slots: inputs x, residualRef; outputs residualRef, valuesOut, indicesOut (the residual is
    // read and written through its output slot)
    d.x_slot = 0, d.r_slot = 2, d.vals_slot = 3, d.idx_slot = 4;
    d.n = x->numel, d.k = valuesOut->numel;
    const aclTensor *io[] = {x, residualRef, residualRef, valuesOut, indicesOut};
    og_prog p;
    og_prog_init(&p, op, 2, 3, io);
    if (d.n > 0) {
        d.isa = og_isa();
        int64_t chunks = chunks_of(d.n);
        // no more threads than chunks: each thread's histogram is zeroed on every pass
        d.threads = og_num_threads() < chunks ? og_num_threads() : (int)chunks;
        d.y_bytes = ((uint64_t)d.n * sizeof(float) + 63) / 64 * 64;
        d.tmp_bytes = (uint64_t)d.threads * OG_CMP_CHUNK * sizeof(float);
        d.hist_bytes = (uint64_t)d.threads * TOPK_BINS * sizeof(int64_t);
        uint64_t scratch = d.y_bytes + d.tmp_bytes + d.hist_bytes + (uint64_t)chunks * 16;
        int slots[] = {d.x_slot, d.vals_slot, d.idx_slot, d.has_r ? d.r_slot : d.x_slot};
        og_prog_custom(&p, topk_run, &d, sizeof d, slots, 4, scratch);
        og_prog_note(&p, "threshold selection (2 histogram passes)");
    }
    return og_prog_publish(&p, workspaceSize, executor);
}

// =============================================================================================
// aclnnGradDecompressTopK
typedef struct detopk_plan {
    og_view vals, idx, out;
    int64_t m, n;
    opgrad_isa isa;
    int threads;
} detopk_plan;

typedef struct detopk_ctx {
    const detopk_plan *p;
    char *out;
    const float *acc;
} detopk_ctx;

static void detopk_store_unit(void *vctx, int core, int slot) {
    (void)slot;
    const detopk_ctx *c = vctx;
    int64_t i0 = (int64_t)core * OG_CMP_CHUNK, n = c->p->n - i0;
    if (n > OG_CMP_CHUNK) n = OG_CMP_CHUNK;
    store_f32(&og_convert[c->p->isa], &c->p->out, c->out, i0, n, c->acc + i0);
}

static void detopk_run(const aclOpExecutor *e, const void *params, char *scratch) {
    const detopk_plan *p = params;
    const char *vals = og_executor_addr(e, 0), *idx = og_executor_addr(e, 1);
    float *acc = (float *)scratch;
    memset(acc, 0, (size_t)p->n * sizeof(float));
    // one thread, in j order: duplicates (several workers' entries) sum in a fixed order
    for (int64_t j = 0; j < p->m; j++) {
        int64_t ix = og_view_index(&p->idx, idx, j);
        if (ix < 0 || ix >= p->n) continue;
        acc[ix] += og_load_elem(vals + og_view_offset(&p->vals, j) * p->vals.esize, p->vals.dtype);
    }
    detopk_ctx c = {p, og_executor_addr(e, 2), acc};
    og_parallel_for((int)chunks_of(p->n), p->threads, detopk_store_unit, &c);
}

aclnnStatus aclnnGradDecompressTopKGetWorkspaceSize(const aclTensor *values,
                                                    const aclTensor *indices, aclTensor *out,
                                                    uint64_t *workspaceSize,
                                                    aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_GradDecompressTopK;
    const char *names[] = {"values", "indices", "out"};
    const void *ptrs[] = {values, indices, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 3, names, ptrs));
    OG_TRY(og_check_tensor(op, "values", values, 1));
    if (values->ndim != 1) return fail_arg(op, "values", "must be 1-D", values);
    char fn[96];
    snprintf(fn, sizeof fn, "%sGetWorkspaceSize", op->name);
    OG_TRY(og_check_live(fn, "indices", indices, OG_OBJ_TENSOR));
    OG_TRY(check_typed(op, "indices", indices, indices->dtype == ACL_INT32 ? ACL_INT32 : ACL_INT64,
                       1, values->numel));
    OG_TRY(og_check_tensor(op, "out", out, 0));
    OG_TRY(check_size(op, "out", out));
    const aclTensor *in[] = {values, indices}, *outs[] = {out};
    OG_TRY(og_check_io_memory(op, 2, in, 1, outs, names));
    detopk_plan d;
    memset(&d, 0, sizeof d);
    og_view_of(&d.vals, values);
    og_view_of(&d.idx, indices);
    og_view_of(&d.out, out);
    d.m = values->numel, d.n = out->numel;
    const aclTensor *io[] = {values, indices, out};
    og_prog p;
    og_prog_init(&p, op, 2, 1, io);
    if (d.n > 0) {
        d.isa = og_isa();
        d.threads = og_num_threads();
        int slots[] = {0, 1, 2};
        og_prog_custom(&p, detopk_run, &d, sizeof d, slots, 3, (uint64_t)d.n * sizeof(float));
    }
    return og_prog_publish(&p, workspaceSize, executor);
}

// =============================================================================================
// aclnnGradCompressSign
typedef struct sign_plan {
    og_view x, r, bits;
    int x_slot, r_slot, bits_slot, scale_slot;
    bool has_r;
    int64_t n;
    opgrad_isa isa;
    int threads;
    uint64_t slot_bytes;
} sign_plan;

typedef struct sign_ctx {
    const sign_plan *p;
    const char *x;
    char *r, *bits, *scratch;
    double *sums; // [chunks]
    float scale;
} sign_ctx;

static void sign_sum_unit(void *vctx, int core, int slot) {
    const sign_ctx *c = vctx;
    const sign_plan *p = c->p;
    int64_t i0 = (int64_t)core * OG_CMP_CHUNK, n = p->n - i0;
    if (n > OG_CMP_CHUNK) n = OG_CMP_CHUNK;
    float *y = (float *)(c->scratch + (uint64_t)slot * p->slot_bytes), *t = y + OG_CMP_CHUNK;
    load_y(&og_convert[p->isa], &p->x, c->x, &p->r, c->r, p->has_r, i0, n, y, t);
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += fabs((double)y[i]);
    c->sums[core] = s;
}

static void sign_write_unit(void *vctx, int core, int slot) {
    const sign_ctx *c = vctx;
    const sign_plan *p = c->p;
    int64_t i0 = (int64_t)core * OG_CMP_CHUNK, n = p->n - i0;
    if (n > OG_CMP_CHUNK) n = OG_CMP_CHUNK;
    float *y = (float *)(c->scratch + (uint64_t)slot * p->slot_bytes), *t = y + OG_CMP_CHUNK;
    uint8_t *b = (uint8_t *)(t + OG_CMP_CHUNK);
    load_y(&og_convert[p->isa], &p->x, c->x, &p->r, c->r, p->has_r, i0, n, y, t);
    int64_t nb = (n + 7) / 8;
    const float s = c->scale;
    // whole bytes eight lanes at a time, then the tail (the compiler vectorises both loops)
    int64_t full = n / 8;
    for (int64_t q = 0; q < full; q++) {
        unsigned v = 0;
        for (int j = 0; j < 8; j++) v |= (unsigned)(y[8 * q + j] >= 0) << j;
        b[q] = (uint8_t)v;
    }
    if (full < nb) {
        unsigned v = 0;
        for (int64_t i = 8 * full; i < n; i++) v |= (unsigned)(y[i] >= 0) << (i % 8);
        b[full] = (uint8_t)v;
    }
    for (int64_t i = 0; i < n; i++) t[i] = y[i] - (y[i] >= 0 ? s : -s);
    if (p->bits.contiguous)
        memcpy(c->bits + i0 / 8, b, (size_t)nb);
    else
        for (int64_t j = 0; j < nb; j++) c->bits[og_view_offset(&p->bits, i0 / 8 + j)] = (char)b[j];
    if (p->has_r) store_f32(&og_convert[p->isa], &p->r, c->r, i0, n, t);
}

static void sign_run(const aclOpExecutor *e, const void *params, char *scratch) {
    const sign_plan *p = params;
    int64_t chunks = chunks_of(p->n);
    sign_ctx c = {p,
                  og_executor_addr(e, p->x_slot),
                  p->has_r ? og_executor_addr(e, p->r_slot) : NULL,
                  og_executor_addr(e, p->bits_slot),
                  scratch,
                  (double *)(scratch + (uint64_t)p->threads * p->slot_bytes),
                  0};
    og_parallel_for((int)chunks, p->threads, sign_sum_unit, &c);
    double s = 0; // chunk sums added in chunk order: the same on any thread count
    for (int64_t ch = 0; ch < chunks; ch++) s += c.sums[ch];
    c.scale = (float)(s / (double)p->n);
    memcpy(og_executor_addr(e, p->scale_slot), &c.scale, sizeof c.scale);
    og_parallel_for((int)chunks, p->threads, sign_write_unit, &c);
}

static void sign_scale_zero(const aclOpExecutor *e, const void *params, char *scratch) {
    (void)scratch;
    const sign_plan *p = params;
    float zero = 0;
    memcpy(og_executor_addr(e, p->scale_slot), &zero, sizeof zero);
}

aclnnStatus aclnnGradCompressSignGetWorkspaceSize(const aclTensor *x, aclTensor *residualRef,
                                                  aclTensor *bitsOut, aclTensor *scaleOut,
                                                  uint64_t *workspaceSize,
                                                  aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_GradCompressSign;
    const char *names[] = {"x", "bitsOut", "scaleOut"};
    const void *ptrs[] = {x, bitsOut, scaleOut};
    OG_TRY(og_check_args(op, workspaceSize, executor, 3, names, ptrs));
    OG_TRY(check_x_residual(op, x, residualRef));
    OG_TRY(check_typed(op, "bitsOut", bitsOut, ACL_UINT8, 1, (x->numel + 7) / 8));
    OG_TRY(og_check_tensor(op, "scaleOut", scaleOut, 0));
    if (scaleOut->dtype != ACL_FLOAT || scaleOut->numel != 1)
        return fail_arg(op, "scaleOut", "must be float32 with one element", scaleOut);
    OG_TRY(check_io(op, x, residualRef, bitsOut, scaleOut, "bitsOut", "scaleOut"));
    sign_plan d;
    memset(&d, 0, sizeof d);
    og_view_of(&d.x, x);
    og_view_of(&d.bits, bitsOut);
    if (residualRef) og_view_of(&d.r, residualRef);
    d.has_r = residualRef != NULL;
    // slots: inputs x, residualRef; outputs residualRef, bitsOut, scaleOut (the residual is read
    // and written through its output slot)
    d.x_slot = 0, d.r_slot = 2, d.bits_slot = 3, d.scale_slot = 4;
    d.n = x->numel;
    const aclTensor *io[] = {x, residualRef, residualRef, bitsOut, scaleOut};
    og_prog p;
    og_prog_init(&p, op, 2, 3, io);
    int slots[] = {d.x_slot, d.bits_slot, d.scale_slot, d.has_r ? d.r_slot : d.x_slot};
    d.isa = og_isa();
    d.threads = og_num_threads();
    if (d.n > 0) {
        d.slot_bytes = 2 * OG_CMP_CHUNK * sizeof(float) + OG_CMP_CHUNK / 8;
        d.slot_bytes = (d.slot_bytes + 63) / 64 * 64;
        uint64_t scratch = (uint64_t)d.threads * d.slot_bytes + (uint64_t)chunks_of(d.n) * 8;
        og_prog_custom(&p, sign_run, &d, sizeof d, slots, 4, scratch);
    } else {
        og_prog_custom(&p, sign_scale_zero, &d, sizeof d, slots, 4, 0);
    }
    return og_prog_publish(&p, workspaceSize, executor);
}

// =============================================================================================
// aclnnGradDecompressSign
typedef struct design_plan {
    og_view bits, scale, out;
    int64_t n, w, nbytes; // nbytes: one worker's message, ceil(n / 8)
    opgrad_isa isa;
    int threads;
} design_plan;

typedef struct design_ctx {
    const design_plan *p;
    const char *bits, *scale;
    char *out, *scratch;
} design_ctx;

static void design_unit(void *vctx, int core, int slot) {
    const design_ctx *c = vctx;
    const design_plan *p = c->p;
    int64_t i0 = (int64_t)core * OG_CMP_CHUNK, n = p->n - i0;
    if (n > OG_CMP_CHUNK) n = OG_CMP_CHUNK;
    float *acc = (float *)(c->scratch + (uint64_t)slot * OG_CMP_CHUNK * sizeof(float));
    memset(acc, 0, (size_t)n * sizeof(float));
    for (int64_t w = 0; w < p->w; w++) { // workers in order: a fixed summation order
        float s =
            og_load_elem(c->scale + og_view_offset(&p->scale, w) * p->scale.esize, p->scale.dtype);
        int64_t b0 = w * p->nbytes + i0 / 8;
        for (int64_t i = 0; i < n; i++) {
            uint8_t byte = (uint8_t)c->bits[og_view_offset(&p->bits, b0 + i / 8)];
            acc[i] += (byte >> (i % 8)) & 1 ? s : -s;
        }
    }
    store_f32(&og_convert[p->isa], &p->out, c->out, i0, n, acc);
}

static void design_run(const aclOpExecutor *e, const void *params, char *scratch) {
    const design_plan *p = params;
    design_ctx c = {p, og_executor_addr(e, 0), og_executor_addr(e, 1), og_executor_addr(e, 2),
                    scratch};
    og_parallel_for((int)chunks_of(p->n), p->threads, design_unit, &c);
}

aclnnStatus aclnnGradDecompressSignGetWorkspaceSize(const aclTensor *bits, const aclTensor *scale,
                                                    aclTensor *out, uint64_t *workspaceSize,
                                                    aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_GradDecompressSign;
    const char *names[] = {"bits", "scale", "out"};
    const void *ptrs[] = {bits, scale, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 3, names, ptrs));
    OG_TRY(og_check_tensor(op, "scale", scale, 1));
    if (scale->dtype != ACL_FLOAT || scale->ndim != 1 || scale->numel < 1)
        return fail_arg(op, "scale", "must be float32, 1-D [W] with W >= 1 (one per worker)",
                        scale);
    OG_TRY(og_check_tensor(op, "out", out, 0));
    OG_TRY(check_size(op, "out", out));
    int64_t nbytes = (out->numel + 7) / 8;
    if (nbytes > 0 && scale->numel > INT64_MAX / nbytes)
        return fail_arg(op, "scale", "times ceil(out's elements / 8) overflows int64", scale);
    OG_TRY(check_typed(op, "bits", bits, ACL_UINT8, 1, scale->numel * nbytes));
    const aclTensor *in[] = {bits, scale}, *outs[] = {out};
    OG_TRY(og_check_io_memory(op, 2, in, 1, outs, names));
    design_plan d;
    memset(&d, 0, sizeof d);
    og_view_of(&d.bits, bits);
    og_view_of(&d.scale, scale);
    og_view_of(&d.out, out);
    d.n = out->numel, d.w = scale->numel, d.nbytes = nbytes;
    const aclTensor *io[] = {bits, scale, out};
    og_prog p;
    og_prog_init(&p, op, 2, 1, io);
    if (d.n > 0) {
        d.isa = og_isa();
        d.threads = og_num_threads();
        int slots[] = {0, 1, 2};
        og_prog_custom(&p, design_run, &d, sizeof d, slots, 3,
                       (uint64_t)d.threads * OG_CMP_CHUNK * sizeof(float));
    }
    return og_prog_publish(&p, workspaceSize, executor);
}

// =============================================================================================
// aclnnGradOrthonormalize (PowerSGD's P)
typedef struct orth_plan {
    og_view p;
    int64_t n, r;
    double eps;
    opgrad_isa isa;
} orth_plan;

// Modified Gram-Schmidt on the columns of a column-major copy (column j at c + j n): dot
// products and norms summed in double in index order, updates in fp32. One thread: r is small
// and the order of every sum is then fixed.
static void orth_run(const aclOpExecutor *e, const void *params, char *scratch) {
    const orth_plan *p = params;
    char *base = og_executor_addr(e, 1);
    float *c = (float *)scratch;
    int64_t n = p->n, r = p->r;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < r; j++)
            c[j * n + i] = og_load_elem(base + og_view_offset(&p->p, i * r + j) * 4, ACL_FLOAT);
    for (int64_t j = 0; j < r; j++) {
        float *cj = c + j * n;
        for (int64_t i = 0; i < j; i++) {
            const float *ci = c + i * n;
            double d = 0;
            for (int64_t k = 0; k < n; k++) d += (double)ci[k] * cj[k];
            const float df = (float)d;
            for (int64_t k = 0; k < n; k++) cj[k] -= df * ci[k];
        }
        double s = 0;
        for (int64_t k = 0; k < n; k++) s += (double)cj[k] * cj[k];
        double norm = sqrt(s);
        // a column (numerically) in the span of the previous ones: 0, not amplified noise
        const float inv = norm > p->eps ? (float)(1.0 / norm) : 0.0f;
        for (int64_t k = 0; k < n; k++) cj[k] *= inv;
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < r; j++)
            og_store_elem(base + og_view_offset(&p->p, i * r + j) * 4, ACL_FLOAT, c[j * n + i]);
}

aclnnStatus aclnnGradOrthonormalizeGetWorkspaceSize(aclTensor *pRef, double eps,
                                                    uint64_t *workspaceSize,
                                                    aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_GradOrthonormalize;
    const char *names[] = {"pRef"};
    const void *ptrs[] = {pRef};
    OG_TRY(og_check_args(op, workspaceSize, executor, 1, names, ptrs));
    OG_TRY(og_check_tensor(op, "pRef", pRef, 2));
    if (pRef->dtype != ACL_FLOAT || pRef->ndim != 2)
        return fail_arg(op, "pRef", "must be float32 and 2-D [n, r] (columns orthonormalised)",
                        pRef);
    OG_TRY(check_size(op, "pRef", pRef));
    // more than n columns in R^n cannot be orthonormal (PowerSGD's rank r <= min(n, m)); the
    // rule also bounds the O(n r^2) single-threaded cost by O(numel^1.5)
    if (pRef->numel > 0 && pRef->dims[1] > pRef->dims[0])
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: pRef is [%lld, %lld]; its columns r must be at most "
                       "its rows n",
                       op->name, (long long)pRef->dims[0], (long long)pRef->dims[1]);
    if (!(eps >= 0) || !isfinite(eps))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: eps is %g; it must be finite and >= 0", op->name, eps);
    const aclTensor *outs[] = {pRef};
    OG_TRY(og_check_io_memory(op, 0, NULL, 1, outs, names));
    orth_plan d;
    memset(&d, 0, sizeof d);
    og_view_of(&d.p, pRef);
    d.n = pRef->dims[0], d.r = pRef->dims[1], d.eps = eps;
    const aclTensor *io[] = {pRef, pRef}; // in place: input and output slot, written through the
    og_prog p;                            // output's
    og_prog_init(&p, op, 1, 1, io);
    if (pRef->numel > 0) {
        int slots[] = {1};
        og_prog_custom(&p, orth_run, &d, sizeof d, slots, 1, (uint64_t)pRef->numel * 4);
    }
    return og_prog_publish(&p, workspaceSize, executor);
}
