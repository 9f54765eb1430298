/* aclnnDropout and aclnnDropoutBackward: a counter-based random bit mask and the masked scale.
 *
 * The mask is aclnn's: 1 bit per element, least significant bit first, in UINT8 bytes, its
 * length rounded up to 128 bits (align(numel, 128) / 8 bytes); bits past numel are written 0.
 * Bit i comes from Philox4x32-10 keyed by seed at counter offset + i / 4 (dropout_simd.c has the
 * definition), a function of (seed, offset, i) alone: the same mask on any thread count and ISA.
 *
 * One CUSTOM step (engine/program.h: no engine writes a packed bit mask) over fixed chunks of
 * OG_DROP_CHUNK elements, each chunk's bytes and values in one pass: generate (or read) the
 * chunk's mask bytes, then out = bit ? x * scale : 0 in fp32 (fp32 contiguous tensors in place,
 * others through a per-thread buffer), rounded once to the output's dtype. A float64 input
 * computes in double (an opgrad extension: its scale unrounded, the result rounded once).
 *
 * The aclnn special cases: forward with p = 0 or train = false copies input and leaves maskOut
 * untouched, p = 1 writes zeros and leaves maskOut untouched; backward with scale = 0 writes
 * zeros, scale = 1 copies gradOutput (the mask is not read). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "aclnnop/aclnn_dropout.h"
#include "aclnnop/aclnn_dropout_backward.h"
#include "engine/convert.h"
#include "engine/isa_table.h"
#include "engine/program.h"
#include "ops/common/checks.h"
#include "ops/common/view_index.h"
#include "ops/dropout/dropout_kernel.h"
#include "runtime/cpu.h"
#include "runtime/pool.h"

const og_dropout_bits_fn og_dropout_bits_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_dropout_bits);
const og_dropout_apply_fn og_dropout_apply_kernels[OPGRAD_ISA_COUNT] =
    OG_ISA_TABLE(og_dropout_apply);
const og_dropout_apply64_fn og_dropout_apply64_kernels[OPGRAD_ISA_COUNT] =
    OG_ISA_TABLE(og_dropout_apply64);

// Elements per parallel unit: a multiple of 128 (a unit's mask bytes are whole and its own).
#define OG_DROP_CHUNK 8192
_Static_assert(OG_DROP_CHUNK % 128 == 0, "a chunk's mask bits fill whole bytes");

typedef enum { DROP_MASK, DROP_COPY, DROP_ZERO } drop_mode;

typedef struct drop_plan {
    og_view x, y, mask;
    int x_slot, y_slot, mask_slot;
    int64_t n;
    drop_mode mode;
    bool generate; // forward: write the mask; backward: read it
    uint64_t seed, offset;
    uint32_t K;
    float scale;
    double scale64; // the scale of a float64 input (its computation is in double)
    opgrad_isa isa;
    int threads;         // phase 1's thread count: the scratch has this many slots
    uint64_t slot_bytes; // scratch per thread: mask bytes, then two fp32 (float64) chunks
} drop_plan;

typedef struct drop_ctx {
    const drop_plan *p;
    const og_convert_table *cv;
    const char *x;
    char *y, *mask;
    char *scratch;
} drop_ctx;

static void load_values(const drop_ctx *c, int64_t i0, int64_t n, float *dst) {
    const og_view *v = &c->p->x;
    if (v->contiguous) {
        og_load_run(c->cv, c->x + i0 * v->esize, v->dtype, 1, dst, n);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        dst[i] = og_load_elem(c->x + og_view_offset(v, i0 + i) * v->esize, v->dtype);
}

static void store_values(const drop_ctx *c, int64_t i0, int64_t n, const float *src) {
    const og_view *v = &c->p->y;
    if (v->contiguous) {
        og_store_run(c->cv, c->y + i0 * v->esize, v->dtype, 1, src, n, false);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        og_store_elem(c->y + og_view_offset(v, i0 + i) * v->esize, v->dtype, src[i]);
}

// The values of a float64 input: out = bit ? x * scale : 0 in double, rounded once to out's dtype.
static void drop_values64(const drop_ctx *c, int64_t i0, int64_t n, const uint8_t *bits,
                          double *xb) {
    const drop_plan *p = c->p;
    const og_view *x = &p->x, *y = &p->y;
    if (p->mode == DROP_ZERO)
        memset(xb, 0, (size_t)n * sizeof *xb);
    else if (x->contiguous)
        og_load_run64(c->x + i0 * x->esize, x->dtype, 1, xb, n);
    else
        for (int64_t i = 0; i < n; i++)
            og_load_run64(c->x + og_view_offset(x, i0 + i) * x->esize, x->dtype, 1, xb + i, 1);
    if (p->mode == DROP_MASK)
        og_dropout_apply64_kernels[p->isa](xb, bits, p->scale64, xb, (size_t)n);
    if (y->contiguous)
        og_store_run64(c->y + i0 * y->esize, y->dtype, 1, xb, n);
    else
        for (int64_t i = 0; i < n; i++)
            og_store_run64(c->y + og_view_offset(y, i0 + i) * y->esize, y->dtype, 1, xb + i, 1);
}

static void drop_unit(void *vctx, int core, int slot) {
    const drop_ctx *c = vctx;
    const drop_plan *p = c->p;
    int64_t i0 = (int64_t)core * OG_DROP_CHUNK, n = p->n - i0;
    if (n > OG_DROP_CHUNK) n = OG_DROP_CHUNK;
    char *s = c->scratch + (uint64_t)slot * p->slot_bytes;
    uint8_t *tmpbits = (uint8_t *)s;
    float *xb = (float *)(s + OG_DROP_CHUNK / 8), *yb = xb + OG_DROP_CHUNK;
    // the chunk's mask bytes: 128-bit aligned, so the last chunk ends where the mask does
    int64_t nbytes = (n + 127) / 128 * 16, b0 = i0 / 8;
    const uint8_t *bits = NULL;
    if (p->mode == DROP_MASK) {
        uint8_t *mb = p->mask.contiguous ? (uint8_t *)c->mask + b0 : tmpbits;
        if (p->generate) {
            og_dropout_bits_kernels[p->isa](p->seed, p->offset + (uint64_t)i0 / 4, p->K, mb,
                                            (size_t)nbytes);
            for (int64_t k = n; k < nbytes * 8; k++) // padding bits: 0
                mb[k / 8] &= (uint8_t) ~(1u << (k % 8));
            if (!p->mask.contiguous)
                for (int64_t k = 0; k < nbytes; k++)
                    c->mask[og_view_offset(&p->mask, b0 + k)] = (char)mb[k];
        } else if (!p->mask.contiguous) {
            for (int64_t k = 0; k < nbytes; k++)
                mb[k] = (uint8_t)c->mask[og_view_offset(&p->mask, b0 + k)];
        }
        bits = mb;
    }
    if (p->x.dtype == ACL_DOUBLE) {
        drop_values64(c, i0, n, bits, (double *)(s + OG_DROP_CHUNK / 8));
        return;
    }
    // values: fp32 contiguous tensors in place, the others through xb / yb
    bool x_direct = p->x.dtype == ACL_FLOAT && p->x.contiguous;
    bool round_x = p->y.dtype != p->x.dtype && p->x.dtype != ACL_FLOAT; // aclnn: x's dtype first
    bool y_direct = p->y.dtype == ACL_FLOAT && p->y.contiguous && !round_x;
    const float *xp = x_direct ? (const float *)c->x + i0 : xb;
    float *yp = y_direct ? (float *)c->y + i0 : yb;
    if (p->mode != DROP_ZERO && !x_direct) load_values(c, i0, n, xb);
    if (p->mode == DROP_MASK)
        og_dropout_apply_kernels[p->isa](xp, bits, p->scale, yp, (size_t)n);
    else if (p->mode == DROP_ZERO)
        memset(yp, 0, (size_t)n * sizeof *yp);
    else if (xp != yp)
        memcpy(yp, xp, (size_t)n * sizeof *yp);
    if (!y_direct) {
        if (round_x) og_round_through(c->cv, yp, n, p->x.dtype);
        store_values(c, i0, n, yp);
    }
}

static void drop_run(const aclOpExecutor *e, const void *params, char *scratch) {
    const drop_plan *p = params;
    drop_ctx c = {p,
                  &og_convert[p->isa],
                  og_executor_addr(e, p->x_slot),
                  og_executor_addr(e, p->y_slot),
                  p->mode == DROP_MASK ? og_executor_addr(e, p->mask_slot) : NULL,
                  scratch};
    int64_t units = (p->n + OG_DROP_CHUNK - 1) / OG_DROP_CHUNK;
    og_parallel_for((int)units, p->threads, drop_unit, &c);
}

// The mask: a live UINT8 tensor of rank [1, max_rank] with align(numel, 128) / 8 elements.
static aclnnStatus check_mask(const og_opdesc *op, const char *name, const aclTensor *m,
                              int max_rank, int64_t numel) {
    char fn[96];
    snprintf(fn, sizeof fn, "%sGetWorkspaceSize", op->name);
    OG_TRY(og_check_live(fn, name, m, OG_OBJ_TENSOR));
    if (m->dtype != ACL_UINT8)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: %s has dtype %s; it must be uint8", fn, name,
                       og_dtype_name(m->dtype));
    if (m->ndim < 1 || m->ndim > max_rank)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: %s has rank %d; supported: 1 to %d dims", fn,
                       name, m->ndim, max_rank);
    int64_t want = (numel + 127) / 128 * 16;
    if (m->numel != want)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: %s has %lld elements; it must have align(%lld, 128) / 8 = %lld (one "
                       "bit per element, 128-bit aligned)",
                       fn, name, (long long)m->numel, (long long)numel, (long long)want);
    return og_check_fits_block(op, name, m);
}

static aclnnStatus publish(const og_opdesc *op, const aclTensor *const *io, drop_plan *d,
                           uint64_t *workspaceSize, aclOpExecutor **executor) {
    og_prog p;
    bool forward = op == &og_op_Dropout; // input | out, maskOut; else gradOutput, mask | out
    og_prog_init(&p, op, forward ? 1 : 2, forward ? 2 : 1, io);
    if (d->n > 0) {
        d->isa = og_isa();
        size_t value_bytes = d->x.dtype == ACL_DOUBLE ? sizeof(double) : sizeof(float);
        d->slot_bytes = OG_DROP_CHUNK / 8 + 2 * OG_DROP_CHUNK * (uint64_t)value_bytes;
        d->threads = og_num_threads();
        uint64_t scratch = (uint64_t)d->threads * d->slot_bytes;
        int slots[] = {d->x_slot, d->y_slot, d->mask_slot};
        og_prog_custom(&p, drop_run, d, sizeof *d, slots, 3, scratch);
    }
    return og_prog_publish(&p, workspaceSize, executor);
}

aclnnStatus aclnnDropoutGetWorkspaceSize(const aclTensor *input, double p, bool train, int64_t seed,
                                         int64_t offset, aclTensor *out, aclTensor *maskOut,
                                         uint64_t *workspaceSize, aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_Dropout;
    const char *names[] = {"input", "out", "maskOut"};
    const void *ptrs[] = {input, out, maskOut};
    OG_TRY(og_check_args(op, workspaceSize, executor, 3, names, ptrs));
    OG_TRY(og_check_tensor_of(op, "input", input, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "out", out, 0, OG_DTS_FLOATING64));
    OG_TRY(check_mask(op, "maskOut", maskOut, 1, input->numel));
    OG_TRY(og_check_same_shape(op, "input", input, "out", out));
    OG_TRY(og_check_castable(op, input->dtype, "out", out));
    if (!(p >= 0 && p <= 1))
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%sGetWorkspaceSize: p is %g; it must be in [0, 1]",
                       op->name, p);
    const aclTensor *in[] = {input}, *outs[] = {out, maskOut};
    OG_TRY(og_check_io_memory(op, 1, in, 2, outs, names));
    drop_plan d;
    memset(&d, 0, sizeof d);
    og_view_of(&d.x, input);
    og_view_of(&d.y, out);
    og_view_of(&d.mask, maskOut);
    d.x_slot = 0, d.y_slot = 1, d.mask_slot = 2;
    d.n = input->numel;
    d.mode = p == 0 || !train ? DROP_COPY : p == 1 ? DROP_ZERO : DROP_MASK;
    d.generate = true;
    d.seed = (uint64_t)seed, d.offset = (uint64_t)offset;
    // keep iff the word's top 24 bits, as u = w / 2^24 in [0, 1), are below 1 - p
    d.K = (uint32_t)ceil((1.0 - p) * 16777216.0);
    d.scale64 = 1.0 / (1.0 - p);
    d.scale = (float)d.scale64;
    const aclTensor *io[] = {input, out, maskOut};
    return publish(op, io, &d, workspaceSize, executor);
}

aclnnStatus aclnnDropoutBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *mask,
                                                 double scale, aclTensor *out,
                                                 uint64_t *workspaceSize,
                                                 aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_DropoutBackward;
    const char *names[] = {"gradOutput", "mask", "out"};
    const void *ptrs[] = {gradOutput, mask, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 3, names, ptrs));
    OG_TRY(og_check_tensor_of(op, "gradOutput", gradOutput, 0, OG_DTS_FLOATING64));
    OG_TRY(check_mask(op, "mask", mask, OG_MAX_DIMS, gradOutput->numel));
    OG_TRY(og_check_tensor_of(op, "out", out, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_same_shape(op, "gradOutput", gradOutput, "out", out));
    OG_TRY(og_check_castable(op, gradOutput->dtype, "out", out));
    if (!(scale == 0 || (scale >= 1 && isfinite(scale))))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: scale is %g; it must be 0 or at least 1 (1 / (1 - p) "
                       "for p in [0, 1))",
                       op->name, scale);
    const aclTensor *in[] = {gradOutput, mask}, *outs[] = {out};
    OG_TRY(og_check_io_memory(op, 2, in, 1, outs, names));
    drop_plan d;
    memset(&d, 0, sizeof d);
    og_view_of(&d.x, gradOutput);
    og_view_of(&d.mask, mask);
    og_view_of(&d.y, out);
    d.x_slot = 0, d.mask_slot = 1, d.y_slot = 2;
    d.n = gradOutput->numel;
    d.mode = scale == 0 ? DROP_ZERO : scale == 1 ? DROP_COPY : DROP_MASK;
    d.generate = false;
    d.scale = (float)scale;
    d.scale64 = scale;
    const aclTensor *io[] = {gradOutput, mask, out};
    return publish(op, io, &d, workspaceSize, executor);
}
