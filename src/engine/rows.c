/* The row engine (see rows.h). */
#include "engine/rows.h"

#include <stdlib.h>
#include <string.h>

#include "engine/blocking.h"
#include "engine/convert.h"
#include "engine/tiling.h"
#include "runtime/pool.h"
#include "tensor/dtype.h"

static int64_t align64(int64_t bytes) { return (bytes + 63) / 64 * 64; }

// Stride of t along dim d of the shape (right-aligned; 0 where t broadcasts).
static int64_t bcast_stride(const aclTensor *t, int ndim, const int64_t *dims, int d) {
    int td = t->ndim - ndim + d;
    return (td < 0 || t->dims[td] == 1 || dims[d] == 1) ? 0 : t->strides[td];
}

// The strides of every operand over the row dims (all dims but the axis), coalesced: size-1 dims
// dropped, neighbours merged where that is one progression for every operand.
static void plan_row_dims(const og_rows_op *op, og_rows_plan *p, og_rows_operand **ops,
                          const aclTensor **ts, int nops) {
    p->nrdims = 0;
    p->rows = 1;
    for (int d = 0; d < op->ndim; d++) {
        if (d == op->axis) continue;
        int64_t size = op->dims[d];
        p->rows *= size;
        if (size == 1) continue;
        int64_t st[OG_ROWS_MAX_IN + OG_ROWS_MAX_OUT + OG_ROWS_MAX_STATS];
        for (int k = 0; k < nops; k++) st[k] = bcast_stride(ts[k], op->ndim, op->dims, d);
        bool merge = p->nrdims > 0 && size > 0 && p->rdims[p->nrdims - 1] > 0;
        for (int k = 0; k < nops && merge; k++)
            merge = ops[k]->strides[p->nrdims - 1] == st[k] * size;
        int at = merge ? p->nrdims - 1 : p->nrdims++;
        p->rdims[at] = merge ? p->rdims[at] * size : size;
        for (int k = 0; k < nops; k++) ops[k]->strides[at] = st[k];
    }
}

// Stats tensors have one element per row: their strides over the row dims are those of a
// row-major array of `rows` elements laid out as the tensor says. They are given the shape's
// strides with the axis as a size-1 dim (keepdim) or removed; both number the rows alike.
static void stats_strides(const og_rows_op *op, const aclTensor *t, int64_t *st) {
    // walk t's dims from the right, skipping the axis position when t keeps it as 1
    int td = t->ndim - 1;
    for (int d = op->ndim - 1; d >= 0; d--) {
        if (d == op->axis) {
            if (t->ndim == op->ndim && td >= 0) td--; // keepdim: t has a 1 there
            st[d] = 0;
            continue;
        }
        st[d] = td >= 0 && t->dims[td] != 1 ? t->strides[td] : 0;
        td--;
    }
}

void og_rows_make_plan(const og_rows_op *op, int max_cores, opgrad_isa isa, og_rows_plan *p) {
    memset(p, 0, sizeof *p);
    p->nin = op->nin, p->nout = op->nout, p->nstats = op->nstats;
    p->R = op->ndim > 0 ? op->dims[op->axis] : 1;
    og_rows_operand *ops[OG_ROWS_MAX_IN + OG_ROWS_MAX_OUT + OG_ROWS_MAX_STATS];
    const aclTensor *ts[OG_ROWS_MAX_IN + OG_ROWS_MAX_OUT + OG_ROWS_MAX_STATS];
    int nops = 0;
    for (int k = 0; k < op->nin; k++) ops[nops] = &p->in[k], ts[nops++] = op->in[k];
    for (int k = 0; k < op->nout; k++) ops[nops] = &p->out[k], ts[nops++] = op->out[k];
    // stats do not take part in the coalescing: a shadow tensor with full-rank strides stands in
    aclTensor shadow[OG_ROWS_MAX_STATS];
    for (int k = 0; k < op->nstats; k++) {
        shadow[k] = (aclTensor){.dtype = op->stats[k]->dtype, .ndim = op->ndim};
        stats_strides(op, op->stats[k], shadow[k].strides);
        for (int d = 0; d < op->ndim; d++)
            shadow[k].dims[d] = d == op->axis ? 1 : (shadow[k].strides[d] ? op->dims[d] : 1);
        ops[nops] = &p->stats[k], ts[nops++] = &shadow[k];
    }
    plan_row_dims(op, p, ops, ts, nops);
    int ins = op->nin, outs = op->nin + op->nout;
    // Inputs far beyond the caches, for a kernel that asks: each row's inputs are prefetched one
    // row ahead (fp32 softmax rows of 1024 at 2^24 elements: 5-17% faster, bf16 level; at 2^20,
    // in L3, up to 15% slower, so not there; prefetching the outputs for writing did not pay).
    int64_t in_bytes = 0;
    for (int k = 0; k < op->nin; k++)
        in_bytes += op->in[k]->numel * (int64_t)aclDataTypeSize(op->in[k]->dtype);
    p->prefetch = op->prefetch && in_bytes >= og_size_gates_get().row_prefetch_bytes;
    int64_t bytes_per_row = 0;
    for (int k = 0; k < nops; k++) {
        og_rows_operand *o = ops[k];
        o->dtype = ts[k]->dtype;
        o->slot = k < ins    ? op->in_slot[k]
                  : k < outs ? op->out_slot[k - ins]
                             : op->stats_slot[k - outs];
        o->axis_stride =
            op->ndim > 0 && k < outs ? bcast_stride(ts[k], op->ndim, op->dims, op->axis) : 1;
        if (p->R == 1) o->axis_stride = 1; // one element: any stride reads it
        o->invariant = true;
        for (int d = 0; d < p->nrdims; d++) o->invariant = o->invariant && o->strides[d] == 0;
        // an input or output of another dtype than a 16-bit compute dtype is rounded through it
        // (aclnn casts the inputs to it and the result from it)
        o->round_via = ACL_FLOAT;
        if (k < outs && o->dtype != op->compute_dtype &&
            (op->compute_dtype == ACL_FLOAT16 || op->compute_dtype == ACL_BF16))
            o->round_via = op->compute_dtype;
        o->direct =
            k < outs && o->dtype == ACL_FLOAT && o->axis_stride == 1 && o->round_via == ACL_FLOAT;
        if (k < outs) bytes_per_row += p->R * (int64_t)aclDataTypeSize(o->dtype);
    }
    // 16-bit rows computed in place: every row operand contiguous along the axis and of the 16-bit
    // compute dtype (an invariant input too), so that nothing else is rounded. The kernel widens
    // on load and rounds on store: the bits of CopyIn -> fp32 kernel -> CopyOut, without the
    // passes through row buffers. OPGRAD_FUSED16=0 turns it off, as for the elementwise engine.
    const char *fused_env = getenv("OPGRAD_FUSED16");
    p->fused16 = op->kernels16 && op->nacc == 0 && !(fused_env && !strcmp(fused_env, "0")) &&
                 (op->compute_dtype == ACL_BF16 || op->compute_dtype == ACL_FLOAT16);
    for (int k = 0; k < outs && p->fused16; k++)
        p->fused16 = ops[k]->dtype == op->compute_dtype && ops[k]->axis_stride == 1;
    p->kernel16 = p->fused16 ? op->kernels16[isa][op->compute_dtype == ACL_BF16 ? 0 : 1] : NULL;
    // Ranges of rows, as the elementwise tiling cuts elements: up to OG_CORES_PER_THREAD per
    // thread while each still moves OG_MIN_CORE_BYTES.
    int cores = max_cores > 0 ? max_cores : 1;
    int64_t ranges = cores;
    if (cores > 1) {
        int64_t per_thread = p->rows * bytes_per_row / ((int64_t)cores * OG_MIN_CORE_BYTES);
        if (per_thread > OG_CORES_PER_THREAD) per_thread = OG_CORES_PER_THREAD;
        if (per_thread > 1) ranges = cores * per_thread;
    }
    // Light fp32 rows streaming from L3 on a CPU that halves 512-bit operations: 256-bit kernels
    // (the elementwise engine's ymm_stream, engine/elementwise.h).
    p->ymm_stream = op->light && op->compute_dtype == ACL_FLOAT && op->nacc == 0 &&
                    og_ymm_stream(p->rows * bytes_per_row / cores);
    if (p->ymm_stream && isa > OPGRAD_ISA_AVX2) isa = OPGRAD_ISA_AVX2;
    p->nacc = op->nacc;
    p->stats_in = op->stats_in;
    for (int k = 0; k < op->nacc; k++) p->acc_slot[k] = op->acc_slot[k];
    // with accumulators a range is whole groups of rows
    int64_t units = p->rows;
    if (op->nacc > 0) p->groups = og_rows_groups(p->rows), units = p->groups;
    p->core_num = (int)(units < ranges ? units : ranges);
    p->slots = p->core_num < cores ? p->core_num : cores;
    int buffered = 0;
    for (int k = 0; k < outs; k++) buffered += !ops[k]->direct;
    if (p->fused16) buffered = 1; // the kernel's scratch row
    p->slot_bytes = buffered * align64(p->R * 4) + align64(OG_ROWS_MAX_STATS * 4);
    p->f64 = op->compute_dtype == ACL_DOUBLE;
    if (p->f64) { // every row operand buffered in double, the stats too
        p->fused16 = false;
        p->kernel16 = NULL;
        p->slot_bytes = outs * align64(p->R * 8) + align64(OG_ROWS_MAX_STATS * 8);
        p->kernel64 = op->kernels64 ? op->kernels64[isa] : NULL;
        p->acc_kernel64 = op->nacc > 0 ? op->acc_kernels64[isa] : NULL;
    }
    if (p->R == 0 || p->rows == 0) p->core_num = p->slots = 0, p->slot_bytes = 0;
    p->isa = isa;
    p->kernel = op->kernels ? op->kernels[isa] : NULL;
    p->acc_kernel = op->nacc > 0 ? op->acc_kernels[isa] : NULL;
    if (op->params_size) memcpy(p->params, op->params, op->params_size);
}

void og_rows_core_range(const og_rows_plan *p, int core, int64_t *start, int64_t *count) {
    int64_t units = p->nacc > 0 ? p->groups : p->rows;
    int64_t base = units / p->core_num, extra = units % p->core_num;
    *start = core * base + (core < extra ? core : extra);
    *count = base + (core < extra ? 1 : 0);
    if (p->nacc > 0) { // groups -> rows
        int64_t end = (*start + *count) * OG_ROWS_GROUP;
        *start *= OG_ROWS_GROUP;
        *count = (end < p->rows ? end : p->rows) - *start;
    }
}

typedef struct rows_ctx {
    const aclOpExecutor *e;
    const og_rows_plan *p;
    char *scratch;
} rows_ctx;

// Element offsets of row r for every operand (an odometer would save the divisions; a row is
// R elements of work, so they do not show).
static void row_offsets(const og_rows_plan *p, int64_t r, const og_rows_operand *const *ops,
                        int nops, int64_t *off) {
    for (int k = 0; k < nops; k++) off[k] = 0;
    for (int d = p->nrdims - 1; d >= 0; d--) {
        int64_t i = r % p->rdims[d];
        r /= p->rdims[d];
        for (int k = 0; k < nops; k++) off[k] += i * ops[k]->strides[d];
    }
}

// Software prefetch of a contiguous run into the caches, at most OG_ROWS_PREFETCH_BYTES of it
// (a longer row streams through the hardware prefetcher within the row).
enum { OG_ROWS_PREFETCH_BYTES = 16384 };
static inline void prefetch_run(const char *p, int64_t bytes) {
    if (bytes > OG_ROWS_PREFETCH_BYTES) bytes = OG_ROWS_PREFETCH_BYTES;
    for (int64_t b = 0; b < bytes; b += 64) __builtin_prefetch(p + b, 0, 3);
}

// The per-row statistics from their tensors (stats_in).
static void load_stats(const og_rows_plan *p, const og_rows_operand *const *ops, char *const *base,
                       const int64_t *off, int nrow_ops, float *stats) {
    for (int k = 0; k < p->nstats; k++) {
        const og_rows_operand *o = ops[nrow_ops + k];
        size_t es = aclDataTypeSize(o->dtype);
        stats[k] = og_load_elem(base[nrow_ops + k] + off[nrow_ops + k] * (int64_t)es, o->dtype);
    }
}

// The per-row statistics into their tensors.
static void store_stats(const og_rows_plan *p, const og_rows_operand *const *ops, char *const *base,
                        const int64_t *off, int nrow_ops, const float *stats) {
    if (p->stats_in) return;
    for (int k = 0; k < p->nstats; k++) {
        const og_rows_operand *o = ops[nrow_ops + k];
        size_t es = aclDataTypeSize(o->dtype);
        og_store_elem(base[nrow_ops + k] + off[nrow_ops + k] * (int64_t)es, o->dtype, stats[k]);
    }
}

static void run_range(void *arg, int core, int slot) {
    const rows_ctx *c = arg;
    const og_rows_plan *p = c->p;
    const og_convert_table *cv = &og_convert[p->isa];
    enum { MAXOPS = OG_ROWS_MAX_IN + OG_ROWS_MAX_OUT + OG_ROWS_MAX_STATS };
    const og_rows_operand *ops[MAXOPS];
    char *base[MAXOPS];
    float *buf[OG_ROWS_MAX_IN + OG_ROWS_MAX_OUT];
    int nops = 0;
    for (int k = 0; k < p->nin; k++) ops[nops++] = &p->in[k];
    for (int k = 0; k < p->nout; k++) ops[nops++] = &p->out[k];
    for (int k = 0; k < p->nstats; k++) ops[nops++] = &p->stats[k];
    int nrow_ops = p->nin + p->nout;
    char *at = c->scratch + (int64_t)slot * p->slot_bytes;
    float *row_scratch = NULL; // fused16: the kernel's fp32 row
    if (p->fused16) row_scratch = (float *)at, at += align64(p->R * 4);
    for (int k = 0; k < nrow_ops; k++) {
        base[k] = og_executor_addr(c->e, ops[k]->slot);
        buf[k] = NULL;
        if (!ops[k]->direct && !p->fused16) buf[k] = (float *)at, at += align64(p->R * 4);
    }
    for (int k = nrow_ops; k < nops; k++) base[k] = og_executor_addr(c->e, ops[k]->slot);
    float *stats = (float *)at;
    float *acc_base[OG_ROWS_MAX_ACC], *acc[OG_ROWS_MAX_ACC];
    for (int k = 0; k < p->nacc; k++) acc_base[k] = (float *)og_executor_addr(c->e, p->acc_slot[k]);
    int64_t start, count, off[MAXOPS];
    og_rows_core_range(p, core, &start, &count);
    const float *in[OG_ROWS_MAX_IN];
    float *out[OG_ROWS_MAX_OUT];
    int64_t next[MAXOPS];
    if (count > 0) row_offsets(p, start, ops, nops, next);
    for (int64_t r = start; r < start + count; r++) {
        memcpy(off, next, sizeof(int64_t) * (size_t)nops);
        if (r + 1 < start + count) {
            row_offsets(p, r + 1, ops, nops, next);
            // The next row's inputs are fetched while this row computes: a row's first pass
            // would otherwise wait for memory with nothing else to do.
            for (int k = 0; p->prefetch && k < p->nin; k++)
                if (!ops[k]->invariant && ops[k]->axis_stride == 1)
                    prefetch_run(base[k] + next[k] * (int64_t)aclDataTypeSize(ops[k]->dtype),
                                 p->R * (int64_t)aclDataTypeSize(ops[k]->dtype));
        }
        if (p->stats_in) load_stats(p, ops, base, off, nrow_ops, stats);
        if (p->nacc > 0) { // the group's partial rows, zeroed as the group starts
            int64_t g = r / OG_ROWS_GROUP;
            for (int k = 0; k < p->nacc; k++) {
                acc[k] = acc_base[k] + g * p->R;
                if (r % OG_ROWS_GROUP == 0) memset(acc[k], 0, sizeof(float) * (size_t)p->R);
            }
        }
        if (p->fused16) {
            const uint16_t *in16[OG_ROWS_MAX_IN];
            uint16_t *out16[OG_ROWS_MAX_OUT];
            for (int k = 0; k < p->nin; k++) in16[k] = (const uint16_t *)base[k] + off[k];
            for (int k = 0; k < p->nout; k++)
                out16[k] = (uint16_t *)base[p->nin + k] + off[p->nin + k];
            p->kernel16((size_t)p->R, in16, out16, row_scratch, p->params, stats);
            store_stats(p, ops, base, off, nrow_ops, stats);
            continue;
        }
        for (int k = 0; k < p->nin; k++) { // CopyIn (an invariant row only once per range)
            const og_rows_operand *o = ops[k];
            size_t es = aclDataTypeSize(o->dtype);
            if (o->direct)
                in[k] = (const float *)base[k] + off[k];
            else if (!o->invariant || r == start) {
                og_load_run(cv, base[k] + off[k] * (int64_t)es, o->dtype, o->axis_stride, buf[k],
                            p->R);
                if (o->round_via != ACL_FLOAT) og_round_through(cv, buf[k], p->R, o->round_via);
            }
            if (!o->direct) in[k] = buf[k];
        }
        for (int k = 0; k < p->nout; k++) {
            const og_rows_operand *o = ops[p->nin + k];
            out[k] = o->direct ? (float *)base[p->nin + k] + off[p->nin + k] : buf[p->nin + k];
        }
        if (p->nacc > 0)
            p->acc_kernel((size_t)p->R, in, out, p->params, stats, acc);
        else
            p->kernel((size_t)p->R, in, out, p->params, stats);
        for (int k = 0; k < p->nout; k++) { // CopyOut
            const og_rows_operand *o = ops[p->nin + k];
            if (o->round_via != ACL_FLOAT) og_round_through(cv, out[k], p->R, o->round_via);
            if (o->direct) continue;
            size_t es = aclDataTypeSize(o->dtype);
            og_store_run(cv, base[p->nin + k] + off[p->nin + k] * (int64_t)es, o->dtype,
                         o->axis_stride, out[k], p->R, false);
        }
        store_stats(p, ops, base, off, nrow_ops, stats);
    }
}

// An integer input of a float64 row (a class index: ce_kernel.h) is no value to compute with: the
// kernel gets the row's first element as the int64 bits of buf[0], never converted to double
// (which would round indices past 2^53), and reads them back with memcpy.
static void load_index64(const char *src, aclDataType dt, double *buf) {
    int64_t v;
    if (dt == ACL_INT64) {
        memcpy(&v, src, sizeof v);
    } else {
        int32_t v32;
        memcpy(&v32, src, sizeof v32);
        v = v32;
    }
    memcpy(buf, &v, sizeof v);
}

// The float64 form of run_range: per row, CopyIn into double rows, kernel64, CopyOut.
static void run_range64(void *arg, int core, int slot) {
    const rows_ctx *c = arg;
    const og_rows_plan *p = c->p;
    enum { MAXOPS = OG_ROWS_MAX_IN + OG_ROWS_MAX_OUT + OG_ROWS_MAX_STATS };
    const og_rows_operand *ops[MAXOPS];
    char *base[MAXOPS];
    double *buf[OG_ROWS_MAX_IN + OG_ROWS_MAX_OUT];
    int nops = 0;
    for (int k = 0; k < p->nin; k++) ops[nops++] = &p->in[k];
    for (int k = 0; k < p->nout; k++) ops[nops++] = &p->out[k];
    for (int k = 0; k < p->nstats; k++) ops[nops++] = &p->stats[k];
    int nrow_ops = p->nin + p->nout;
    char *at = c->scratch + (int64_t)slot * p->slot_bytes;
    for (int k = 0; k < nops; k++) base[k] = og_executor_addr(c->e, ops[k]->slot);
    for (int k = 0; k < nrow_ops; k++) buf[k] = (double *)at, at += align64(p->R * 8);
    double *stats = (double *)at;
    double *acc_base[OG_ROWS_MAX_ACC], *acc[OG_ROWS_MAX_ACC];
    for (int k = 0; k < p->nacc; k++)
        acc_base[k] = (double *)og_executor_addr(c->e, p->acc_slot[k]);
    int64_t start, count, off[MAXOPS];
    og_rows_core_range(p, core, &start, &count);
    for (int64_t r = start; r < start + count; r++) {
        row_offsets(p, r, ops, nops, off);
        for (int k = 0; k < p->nacc; k++) { // the group's rows, zeroed as the group starts
            acc[k] = acc_base[k] + r / OG_ROWS_GROUP * p->R;
            if (r % OG_ROWS_GROUP == 0) memset(acc[k], 0, sizeof(double) * (size_t)p->R);
        }
        char *addr[MAXOPS];
        for (int k = 0; k < nops; k++)
            addr[k] = base[k] + off[k] * (int64_t)aclDataTypeSize(ops[k]->dtype);
        for (int k = 0; p->stats_in && k < p->nstats; k++)
            og_load_run64(addr[nrow_ops + k], ops[nrow_ops + k]->dtype, 1, &stats[k], 1);
        for (int k = 0; k < p->nin; k++)
            if (ops[k]->dtype == ACL_INT64 || ops[k]->dtype == ACL_INT32)
                load_index64(addr[k], ops[k]->dtype, buf[k]);
            else
                og_load_run64(addr[k], ops[k]->dtype, ops[k]->axis_stride, buf[k], p->R);
        if (p->nacc > 0)
            p->acc_kernel64((size_t)p->R, (const double *const *)buf, buf + p->nin, p->params,
                            stats, acc);
        else
            p->kernel64((size_t)p->R, (const double *const *)buf, buf + p->nin, p->params, stats);
        for (int k = p->nin; k < nrow_ops; k++)
            og_store_run64(addr[k], ops[k]->dtype, ops[k]->axis_stride, buf[k], p->R);
        for (int k = 0; !p->stats_in && k < p->nstats; k++)
            og_store_run64(addr[nrow_ops + k], ops[nrow_ops + k]->dtype, 1, &stats[k], 1);
    }
}

void og_rows_run(const aclOpExecutor *e, const og_rows_plan *p, char *scratch) {
    if (p->core_num == 0) return;
    rows_ctx ctx = {e, p, scratch};
    og_parallel_for(p->core_num, p->slots, p->f64 ? run_range64 : run_range, &ctx);
}
