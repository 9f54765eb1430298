#include "engine/elementwise.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/blocking.h"
#include "engine/convert.h"
#include "engine/program.h"
#include "runtime/cpu.h"
#include "runtime/error.h"
#include "runtime/pool.h"
#include "tensor/dtype.h"

enum {
    BLOCK_BYTES = 64, // every core starts on a cache-line multiple
};

int64_t og_ew_nt_threshold(void) { return og_size_gates_get().nt_out_bytes; }

// True when an operand with these strides over the plan's dims is laid out as the output space.
static bool linear_over(const og_ew_plan *plan, const int64_t *strides) {
    int64_t expect = 1;
    for (int d = plan->ndim - 1; d >= 0; d--) {
        if (strides[d] != expect) return false;
        expect *= plan->dims[d];
    }
    return true;
}

// True when an operand with these strides can be read in place one innermost run at a time: unit
// stride along runs long enough that a call per run costs little.
static bool rowwise_over(const og_ew_plan *plan, const int64_t *strides) {
    return strides[plan->ndim - 1] == 1 && plan->dims[plan->ndim - 1] >= OG_BLOCK_EW_ROWWISE_MIN;
}

// True when an operand with these strides is one value for every element of the output space.
static bool splat_over(const og_ew_plan *plan, const int64_t *strides) {
    for (int d = 0; d < plan->ndim; d++)
        if (strides[d] != 0) return false;
    return true;
}

// Strides of tensor t over the output shape (right-aligned), 0 where t broadcasts.
static void strides_over(const aclTensor *t, const int64_t *dims, int ndim, int64_t *strides) {
    for (int d = 0; d < ndim; d++) {
        int td = t->ndim - ndim + d;
        strides[d] = (td < 0 || t->dims[td] == 1 || dims[d] == 1) ? 0 : t->strides[td];
    }
}

void og_ew_make_plan(const og_ew_op *op, int max_cores, int64_t nt_threshold_bytes,
                     og_ew_plan *plan) {
    memset(plan, 0, sizeof *plan);
    const aclTensor *shape = op->out[0];
    int nops = op->nin + op->nout;
    const aclTensor *tensors[OG_EW_MAX_IN + OG_EW_MAX_OUT];
    og_ew_operand *operands[OG_EW_MAX_IN + OG_EW_MAX_OUT];
    for (int k = 0; k < op->nin; k++) tensors[k] = op->in[k], operands[k] = &plan->in[k];
    for (int k = 0; k < op->nout; k++)
        tensors[op->nin + k] = op->out[k], operands[op->nin + k] = &plan->out[k];

    // Full-rank strides; the dims in the order of the first output's strides, largest first
    // (stable: a contiguous output keeps the logical order), so that an output in another dense
    // layout (channels-last, transposed) is walked in memory order; then drop size-1 dims and
    // merge dims that are contiguous for everyone. A map's elements are independent, so the order
    // changes no result.
    int64_t st[OG_EW_MAX_IN + OG_EW_MAX_OUT][OG_MAX_DIMS];
    for (int k = 0; k < nops; k++) strides_over(tensors[k], shape->dims, shape->ndim, st[k]);
    int order[OG_MAX_DIMS];
    const int64_t *ost = st[op->nin];
    for (int d = 0; d < shape->ndim; d++) {
        int j = d;
        for (; j > 0 && ost[order[j - 1]] < ost[d]; j--) order[j] = order[j - 1];
        order[j] = d;
    }
    int ndim = 0;
    for (int i = 0; i < shape->ndim; i++) {
        int d = order[i];
        if (shape->dims[d] == 1) continue;
        // the previous plan dim ends where this one starts, for every operand: one dim
        bool merge = ndim > 0;
        for (int k = 0; k < nops && merge; k++)
            merge = operands[k]->strides[ndim - 1] == st[k][d] * shape->dims[d];
        if (merge) {
            plan->dims[ndim - 1] *= shape->dims[d];
            for (int k = 0; k < nops; k++) operands[k]->strides[ndim - 1] = st[k][d];
        } else {
            plan->dims[ndim] = shape->dims[d];
            for (int k = 0; k < nops; k++) operands[k]->strides[ndim] = st[k][d];
            ndim++;
        }
    }
    if (ndim == 0) { // a single element
        ndim = 1;
        plan->dims[0] = 1;
        for (int k = 0; k < nops; k++) operands[k]->strides[0] = 1;
    }
    plan->ndim = ndim;
    plan->nin = op->nin;
    plan->nout = op->nout;

    int64_t total = 1;
    for (int d = 0; d < ndim; d++) total *= plan->dims[d];
    size_t out_bytes = (size_t)total * aclDataTypeSize(op->out[0]->dtype);
    plan->f64 = op->compute_dtype == ACL_DOUBLE;
    // Non-temporal stores pay for memory-bound maps (no read for ownership: fp32 Add 2^24 one
    // thread 11.5 -> 8.4 ms). A compute-bound one hides that read under its arithmetic, and
    // streaming made the transcendental forwards slower (fp32 2^24 one thread: Sigmoid 1.18x,
    // SiLU 1.14x, Mish 1.12x the time; ELU, whose stream goes through a buffer, 1.46x).
    plan->stream_out = !plan->f64 && !op->compute_bound && nt_threshold_bytes > 0 &&
                       (int64_t)out_bytes >= nt_threshold_bytes;
    plan->rowwise = false;

    // The fused 16-bit path: the op has kernels for it, every operand has one 16-bit dtype that
    // is the compute dtype or is computed in fp32 (either way each result is the fp32 body's value
    // rounded once, as the buffered path rounds it), and each is linear, or an input that can be
    // read in place one innermost run at a time (rowwise: a bias or scale broadcast over the rows),
    // or one value for the whole output (splat: a 0-d gradOutput, a scalar tensor).
    const char *fused_env = getenv("OPGRAD_FUSED16"); // "0": always the buffered path
    plan->dtype16 = op->out[0]->dtype;
    plan->fused16 = op->kernels16 && !(fused_env && !strcmp(fused_env, "0")) &&
                    (plan->dtype16 == ACL_BF16 || plan->dtype16 == ACL_FLOAT16) &&
                    (op->compute_dtype == plan->dtype16 || op->compute_dtype == ACL_FLOAT);
    for (int k = 0; k < nops && plan->fused16; k++)
        plan->fused16 = tensors[k]->dtype == plan->dtype16 &&
                        (linear_over(plan, operands[k]->strides) ||
                         (k < op->nin && (rowwise_over(plan, operands[k]->strides) ||
                                          splat_over(plan, operands[k]->strides))));
    // Past the NT size, an operation with non-temporal fp32 kernels writes linear fp32 outputs in
    // place with them, each vector streamed as it is computed; otherwise the result goes through a
    // buffer that CopyOut streams.
    plan->nt_in_place = plan->stream_out && op->kernels_nt && op->compute_dtype == ACL_FLOAT;
    for (int k = 0; k < op->nout && plan->nt_in_place; k++)
        plan->nt_in_place =
            linear_over(plan, plan->out[k].strides) && op->out[k]->dtype == ACL_FLOAT;
    int buffered = 0;
    size_t min_elem = 4;
    int64_t bytes_per_elem = 0;
    for (int k = 0; k < nops; k++) {
        og_ew_operand *o = operands[k];
        o->dtype = tensors[k]->dtype;
        o->slot = k;
        o->offset = k < op->nin ? op->in_offset[k] : op->out_offset[k - op->nin];
        o->linear = linear_over(plan, o->strides);
        bool is_out = k >= op->nin;
        // An output of another dtype than a 16-bit compute dtype takes the result rounded to the
        // compute dtype first; so does an integer input (aclnn casts it to the compute dtype).
        o->round_via = ACL_FLOAT;
        if ((is_out || !og_dtype_is_floating(o->dtype)) && o->dtype != op->compute_dtype &&
            (op->compute_dtype == ACL_FLOAT16 || op->compute_dtype == ACL_BF16))
            o->round_via = op->compute_dtype;
        aclDataType buffer_dtype = plan->f64 ? ACL_DOUBLE : ACL_FLOAT;
        o->direct = o->linear && o->dtype == buffer_dtype && o->round_via == ACL_FLOAT &&
                    !(is_out && plan->stream_out && !plan->nt_in_place);
        o->rowwise = !is_out && !o->linear && !plan->f64 &&
                     (o->dtype == ACL_FLOAT || plan->fused16) && rowwise_over(plan, o->strides);
        plan->rowwise = plan->rowwise || o->rowwise;
        o->splat = !is_out && !o->linear && !plan->f64 && splat_over(plan, o->strides);
        if (!o->direct && !o->rowwise && !plan->fused16) buffered++;
        if (aclDataTypeSize(o->dtype) < min_elem) min_elem = aclDataTypeSize(o->dtype);
        bytes_per_elem += (int64_t)aclDataTypeSize(o->dtype);
    }
    plan->tiling = og_tiling_plan((og_tiling_request){
        .total = total,
        .max_cores = max_cores,
        // no buffers (every operand fp32 in place): the tile only sizes the split between cores
        // (run_core computes a core's whole range in one call)
        .cache_budget = buffered ? OG_EW_TILE_BUDGET : 2 * OG_EW_TILE_BUDGET,
        .buffered_operands = buffered,
        .operands = nops,
        .block = BLOCK_BYTES / (int64_t)min_elem,
        .bytes_per_elem = bytes_per_elem,
        .buffer_elem = plan->f64 ? 8 : 4,
    });
    int64_t thread_bytes = total / (max_cores > 0 ? max_cores : 1) * bytes_per_elem;
    plan->stream_in = thread_bytes >= og_size_gates_get().stream_in_bytes;
    plan->ymm_stream = op->light && !plan->fused16 && !plan->f64 && !plan->stream_out &&
                       og_ymm_stream(thread_bytes);
    if (op->params_size) memcpy(plan->params, op->params, op->params_size);
}

// The runs along the innermost dim that n elements of the output index space from `start` form
// in a non-linear operand: an odometer over the plan's dims, shared by the fp32 and float64 walks.
typedef struct run_cursor {
    int64_t idx[OG_MAX_DIMS];
    int64_t offset; // element offset of the next run's first element
    int64_t left;   // elements still to visit
} run_cursor;

static void cursor_init(run_cursor *c, const og_ew_plan *p, const og_ew_operand *o, int64_t start,
                        int64_t n) {
    int64_t rem = start;
    c->offset = 0;
    c->left = n;
    for (int d = p->ndim - 1; d >= 0; d--) {
        c->idx[d] = rem % p->dims[d];
        rem /= p->dims[d];
        c->offset += c->idx[d] * o->strides[d];
    }
}

// The next run's length (0 when done); its elements are o->strides[last] apart from c->offset.
static inline int64_t cursor_run(const run_cursor *c, const og_ew_plan *p) {
    int64_t run = p->dims[p->ndim - 1] - c->idx[p->ndim - 1];
    return run < c->left ? run : c->left;
}

static inline void cursor_next(run_cursor *c, const og_ew_plan *p, const og_ew_operand *o,
                               int64_t run) {
    int last = p->ndim - 1;
    c->left -= run;
    c->idx[last] += run;
    c->offset += run * o->strides[last];
    for (int d = last; d > 0 && c->idx[d] == p->dims[d]; d--) { // carry
        c->offset -= c->idx[d] * o->strides[d];
        c->idx[d] = 0;
        c->idx[d - 1]++;
        c->offset += o->strides[d - 1];
    }
}

// Walks the n elements of the output index space starting at `start`, as runs along the
// innermost dim, calling load_run/store_run for operand o. buf holds n fp32 values.
static void walk(const og_ew_plan *p, const og_convert_table *cv, const og_ew_operand *o,
                 char *base, int64_t start, int64_t n, float *buf, bool store) {
    int64_t es = (int64_t)aclDataTypeSize(o->dtype);
    if (o->linear) {
        if (store)
            og_store_run(cv, base + start * es, o->dtype, 1, buf, n, p->stream_out);
        else
            og_load_run(cv, base + start * es, o->dtype, 1, buf, n);
        return;
    }
    int64_t stride = o->strides[p->ndim - 1];
    run_cursor c;
    cursor_init(&c, p, o, start, n);
    for (int64_t run; (run = cursor_run(&c, p)) > 0; buf += run, cursor_next(&c, p, o, run)) {
        if (store)
            og_store_run(cv, base + c.offset * es, o->dtype, stride, buf, run, false);
        else
            og_load_run(cv, base + c.offset * es, o->dtype, stride, buf, run);
    }
}

enum {
    COPYIN_STEP = 256, // linear 16-bit inputs are converted side by side in steps of this many
    // With non-temporal stores a tile is computed and stored in steps of this many elements, so
    // that the stores stream out while the next loads are in flight: computing a whole 1360-
    // element fp32 tile before storing it made Add 2^24 on one thread 1.27x slower than a loop
    // that loads, adds and streams in turn (Zen 3; 128 elements: 1.2x slower).
    STREAM_OUT_STEP = 128,
    // The fused 16-bit path reads a splat input from a run of this many copies of its value (on
    // the stack, per input), one kernel call per run.
    SPLAT_RUN = 1024,
};

typedef struct ew_run_ctx {
    const aclOpExecutor *e;
    const og_ew_plan *p;
    char *scratch;
} ew_run_ctx;

// n elements of a linear operand from element `at` on, converted into buf (an fp32 operand that
// is used in place never comes here).
static inline void load_linear(const og_convert_table *cv, aclDataType dt, const char *base,
                               int64_t at, float *buf, int64_t n) {
    if (dt == ACL_BF16)
        cv->bf16_to_f32((const uint16_t *)base + at, buf, (size_t)n);
    else if (dt == ACL_FLOAT16)
        cv->f16_to_f32((const uint16_t *)base + at, buf, (size_t)n);
    else if (dt == ACL_FLOAT)
        memcpy(buf, (const float *)base + at, (size_t)n * sizeof(float));
    else // an integer or bool input of a promoting operator (or float64)
        og_load_run(cv, base + at * (int64_t)aclDataTypeSize(dt), dt, 1, buf, n);
}

static inline void store_linear(const og_convert_table *cv, aclDataType dt, char *base, int64_t at,
                                const float *buf, int64_t n, bool stream) {
    if (dt == ACL_BF16)
        cv->f32_to_bf16(buf, (uint16_t *)base + at, (size_t)n, stream);
    else if (dt == ACL_FLOAT16)
        cv->f32_to_f16(buf, (uint16_t *)base + at, (size_t)n, stream);
    else if (dt == ACL_DOUBLE) // an fp32 result into a float64 output
        og_store_run(cv, base + at * 8, dt, 1, buf, n, false);
    else
        cv->f32_copy(buf, (float *)base + at, (size_t)n, stream);
}

// The element offset in operand o of element (row, col) of the coalesced [rows, W] index space.
static int64_t rowwise_offset(const og_ew_plan *p, const og_ew_operand *o, int64_t row,
                              int64_t col) {
    int64_t offset = col, rem = row;
    for (int d = p->ndim - 2; d >= 0; d--) {
        offset += rem % p->dims[d] * o->strides[d];
        rem /= p->dims[d];
    }
    return offset;
}

// Compute over the tile [s, s + n), one innermost run at a time: a rowwise input is read in place
// at its run's address; every other operand is at its tile position + j (in place or in its
// buffer).
static void compute_runs(const og_ew_plan *p, const og_ew_operand *const *ops, char *const *base,
                         const float *const *in, float *const *out, int64_t s, int64_t n) {
    int64_t w = p->dims[p->ndim - 1], row = s / w, col = s % w;
    const float *rin[OG_EW_MAX_IN];
    float *rout[OG_EW_MAX_OUT];
    for (int64_t j = 0; j < n; row++, col = 0) {
        int64_t len = w - col < n - j ? w - col : n - j;
        for (int k = 0; k < p->nin; k++)
            rin[k] = ops[k]->rowwise ? (const float *)base[k] + rowwise_offset(p, ops[k], row, col)
                                     : in[k] + j;
        for (int k = 0; k < p->nout; k++) rout[k] = out[k] + j;
        p->compute((size_t)len, rin, rout, p->params);
        j += len;
    }
}

// ---- 16-bit lookup tables
// A compute-bound map of one 16-bit input to one 16-bit output has at most 65,536 results: the
// fused kernel's own, computed once per process (kernel, parameters) into a table, then read per
// element. The same bits by construction, at 0.25-0.35 ns per element against 0.75 for the bf16
// erf-GELU kernel (Zen 4, one thread, 2^16-2^24). Below LUT16_MIN elements the kernel runs (the
// table's 128 KiB would cost more to bring in than it saves); at most LUT16_SLOTS tables (4 MiB).
enum { LUT16_MIN = 16384, LUT16_SLOTS = 32, LUT16_SIZE = 65536 };
typedef struct lut16_entry {
    og_ew_compute16_fn fn; // per ISA and dtype
    unsigned char params[OG_EW_MAX_PARAMS];
    uint16_t *table;
} lut16_entry;
static lut16_entry lut16_cache[LUT16_SLOTS];
static int lut16_count;
static pthread_mutex_t lut16_lock = PTHREAD_MUTEX_INITIALIZER;

// The table of fn with these parameters (plan->params), made on first use; NULL when the cache is
// full or memory is short (the kernel then runs).
static const uint16_t *lut16_for(og_ew_compute16_fn fn, const unsigned char *params) {
    const uint16_t *found = NULL;
    pthread_mutex_lock(&lut16_lock);
    for (int i = 0; i < lut16_count && !found; i++)
        if (lut16_cache[i].fn == fn && !memcmp(lut16_cache[i].params, params, OG_EW_MAX_PARAMS))
            found = lut16_cache[i].table;
    if (!found && lut16_count < LUT16_SLOTS) {
        uint16_t *enc = malloc(LUT16_SIZE * sizeof *enc),
                 *table = malloc(LUT16_SIZE * sizeof *table);
        if (enc && table) {
            for (int i = 0; i < LUT16_SIZE; i++) enc[i] = (uint16_t)i;
            const uint16_t *in[1] = {enc};
            uint16_t *out[1] = {table};
            fn(LUT16_SIZE, in, out, params, false);
            lut16_entry *e = &lut16_cache[lut16_count++];
            e->fn = fn;
            memcpy(e->params, params, OG_EW_MAX_PARAMS);
            e->table = table;
            found = table;
        } else {
            free(table);
        }
        free(enc);
    }
    pthread_mutex_unlock(&lut16_lock);
    return found;
}

// y[i] = table[x[i]]; y may alias x (each group is read before it is written).
static void lut16_map(const uint16_t *table, const uint16_t *x, uint16_t *y, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        uint16_t a = table[x[i]], b = table[x[i + 1]], c = table[x[i + 2]], d = table[x[i + 3]];
        y[i] = a, y[i + 1] = b, y[i + 2] = c, y[i + 3] = d;
    }
    for (; i < n; i++) y[i] = table[x[i]];
}

// A tile is CopyIn -> Compute -> CopyOut, so a converted input stream would be read only in its
// CopyIn phase. When the operands do not fit in L2 (stream_in), the next tile of each linear
// 16-bit input is prefetched (into L2) before this tile's Compute, which keeps reads in flight
// while it computes and writes, and those inputs are converted side by side (COPYIN_STEP elements
// of each in turn), not one whole stream after the other. Both change only when bytes are read.
// fp32 inputs used in place are read by Compute itself, all streams at once.
static void run_core(void *arg, int core, int slot) {
    const ew_run_ctx *c = arg;
    const og_ew_plan *p = c->p;
    const og_convert_table *cv = &og_convert[p->isa];
    int64_t start, count;
    og_tiling_core_range(&p->tiling, core, &start, &count);
    if (p->fused16) { // straight on the 16-bit data: one call on the whole range, or one per
                      // innermost run when an input is rowwise, or per SPLAT_RUN elements when
                      // an input is one value (read from a run of that value)
        const uint16_t *in0[OG_EW_MAX_IN], *in16[OG_EW_MAX_IN];
        uint16_t *out0[OG_EW_MAX_OUT], *out16[OG_EW_MAX_OUT];
        uint16_t splat_runs[OG_EW_MAX_IN][SPLAT_RUN];
        int64_t cap = INT64_MAX;
        for (int k = 0; k < p->nin; k++) {
            in0[k] = (const uint16_t *)og_executor_addr(c->e, p->in[k].slot) + p->in[k].offset;
            if (!p->in[k].splat) continue;
            for (int i = 0; i < SPLAT_RUN; i++) splat_runs[k][i] = in0[k][0];
            in0[k] = splat_runs[k];
            cap = SPLAT_RUN;
        }
        for (int k = 0; k < p->nout; k++)
            out0[k] = (uint16_t *)og_executor_addr(c->e, p->out[k].slot) + p->out[k].offset;
        if (p->lut16) {
            lut16_map(p->lut16, in0[0] + start, out0[0] + start, count);
            return;
        }
        int64_t w = p->rowwise ? p->dims[p->ndim - 1] : INT64_MAX, row = start / w, col = start % w;
        for (int64_t j = 0; j < count;) {
            int64_t len = w - col < count - j ? w - col : count - j;
            len = len < cap ? len : cap;
            for (int k = 0; k < p->nin; k++)
                in16[k] = p->in[k].splat
                              ? in0[k]
                              : in0[k] + (p->in[k].rowwise ? rowwise_offset(p, &p->in[k], row, col)
                                                           : start + j);
            for (int k = 0; k < p->nout; k++) out16[k] = out0[k] + start + j;
            p->compute16((size_t)len, in16, out16, p->params, p->stream_out);
            j += len;
            if ((col += len) == w) row++, col = 0;
        }
        if (p->stream_out) og_stream_fence();
        return;
    }
    int64_t tile = p->tiling.tile_elems, end = start + count;
    int64_t per_buffer = (tile * 4 + 63) / 64 * 64;
    char *scratch = p->tiling.buffer_bytes ? c->scratch + (int64_t)slot * p->tiling.buffer_bytes
                                           : NULL; // (no pointer arithmetic on a NULL workspace)
    // Per operand, once per launch: its address and, when it is not used in place, its buffer.
    int nops = p->nin + p->nout, nconv = 0;
    const og_ew_operand *ops[OG_EW_MAX_IN + OG_EW_MAX_OUT];
    char *base[OG_EW_MAX_IN + OG_EW_MAX_OUT];
    float *bufs[OG_EW_MAX_IN + OG_EW_MAX_OUT];
    int conv[OG_EW_MAX_IN]; // the linear inputs that are converted (16-bit)
    int b = 0;
    for (int k = 0; k < nops; k++) {
        ops[k] = k < p->nin ? &p->in[k] : &p->out[k - p->nin];
        base[k] = og_executor_addr(c->e, ops[k]->slot) +
                  ops[k]->offset * (int64_t)aclDataTypeSize(ops[k]->dtype);
        bufs[k] =
            ops[k]->direct || ops[k]->rowwise ? NULL : (float *)(scratch + (b++) * per_buffer);
        if (k < p->nin && ops[k]->linear && !ops[k]->direct) conv[nconv++] = k;
    }
    for (int k = 0; k < p->nin; k++) // CopyIn of a splat input, once: its buffer is a tile of it
        if (ops[k]->splat) {
            int64_t n = count < tile ? count : tile;
            walk(p, cv, ops[k], base[k], start, n, bufs[k], false);
            if (ops[k]->round_via != ACL_FLOAT) og_round_through(cv, bufs[k], n, ops[k]->round_via);
        }
    // Every operand in place (no buffers): the tile is only how much one Compute call does, so
    // the core's whole range is one call (fp32 Add 2^16, one thread, same process as a plain
    // AVX-512 loop: 1.11 -> 1.01x its time; 2^20 168-170 -> 166 us)
    if (b == 0 && !p->rowwise && count > 0) tile = count;
    const float *in[OG_EW_MAX_IN];
    float *out[OG_EW_MAX_OUT];
    int64_t step = p->stream_in ? COPYIN_STEP : tile;
    int64_t out_step = p->stream_out && !p->nt_in_place ? STREAM_OUT_STEP : tile;
    for (int64_t s = start; s < end; s += tile) {
        int64_t n = end - s < tile ? end - s : tile;
        for (int64_t j = 0; j < n; j += step) { // CopyIn: linear 16-bit inputs
            int64_t m = n - j < step ? n - j : step;
            for (int i = 0; i < nconv; i++)
                load_linear(cv, ops[conv[i]]->dtype, base[conv[i]], s + j, bufs[conv[i]] + j, m);
        }
        for (int k = 0; k < p->nin; k++) { // CopyIn: the others
            const og_ew_operand *o = ops[k];
            if (o->direct)
                in[k] = (const float *)base[k] + s;
            else if (o->rowwise)
                in[k] = NULL; // addressed per run (compute_runs)
            else if (!o->linear && !o->splat)
                walk(p, cv, o, base[k], s, n, bufs[k], false);
            if (!o->direct && !o->rowwise) in[k] = bufs[k];
        }
        for (int k = 0; k < p->nin; k++)
            if (ops[k]->round_via != ACL_FLOAT && !ops[k]->splat)
                og_round_through(cv, bufs[k], n, ops[k]->round_via);
        for (int k = 0; k < p->nout; k++)
            out[k] = ops[p->nin + k]->direct ? (float *)base[p->nin + k] + s : bufs[p->nin + k];
        if (p->stream_in && s + tile < end) // the next tile of the converted inputs, into L2
            for (int i = 0; i < nconv; i++) {
                int64_t es = (int64_t)aclDataTypeSize(ops[conv[i]]->dtype);
                const char *from = base[conv[i]] + (s + tile) * es;
                int64_t bytes = (end - s - tile < tile ? end - s - tile : tile) * es;
                for (int64_t at = 0; at < bytes; at += 64) __builtin_prefetch(from + at, 0, 1);
            }
        for (int64_t j = 0; j < n; j += out_step) { // Compute -> CopyOut
            int64_t m = n - j < out_step ? n - j : out_step;
            const float *in_j[OG_EW_MAX_IN];
            float *out_j[OG_EW_MAX_OUT];
            for (int k = 0; k < p->nin; k++) in_j[k] = in[k] ? in[k] + j : NULL;
            for (int k = 0; k < p->nout; k++) out_j[k] = out[k] + j;
            if (p->rowwise)
                compute_runs(p, ops, base, in_j, out_j, s + j, m);
            else
                p->compute((size_t)m, in_j, out_j, p->params);
            for (int k = 0; k < p->nout; k++) {
                const og_ew_operand *o = ops[p->nin + k];
                if (o->round_via != ACL_FLOAT) og_round_through(cv, out_j[k], m, o->round_via);
                if (o->direct) continue;
                if (o->linear)
                    store_linear(cv, o->dtype, base[p->nin + k], s + j, out_j[k], m, p->stream_out);
                else
                    walk(p, cv, o, base[p->nin + k], s + j, m, out_j[k], true);
            }
        }
    }
    if (p->stream_out) og_stream_fence(); // the non-temporal stores are seen before we return
}

// walk() for float64 buffers.
static void walk64(const og_ew_plan *p, const og_ew_operand *o, char *base, int64_t start,
                   int64_t n, double *buf, bool store) {
    int64_t es = (int64_t)aclDataTypeSize(o->dtype);
    if (o->linear) {
        if (store)
            og_store_run64(base + start * es, o->dtype, 1, buf, n);
        else
            og_load_run64(base + start * es, o->dtype, 1, buf, n);
        return;
    }
    int64_t stride = o->strides[p->ndim - 1];
    run_cursor c;
    cursor_init(&c, p, o, start, n);
    for (int64_t run; (run = cursor_run(&c, p)) > 0; buf += run, cursor_next(&c, p, o, run)) {
        if (store)
            og_store_run64(base + c.offset * es, o->dtype, stride, buf, run);
        else
            og_load_run64(base + c.offset * es, o->dtype, stride, buf, run);
    }
}

// The float64 form of run_core: CopyIn (gather / convert into float64 buffers) -> compute64 ->
// CopyOut, per tile; linear float64 operands are used in place.
static void run_core64(void *arg, int core, int slot) {
    const ew_run_ctx *c = arg;
    const og_ew_plan *p = c->p;
    int64_t start, count;
    og_tiling_core_range(&p->tiling, core, &start, &count);
    int64_t tile = p->tiling.tile_elems, end = start + count;
    int64_t per_buffer = (tile * 8 + 63) / 64 * 64;
    char *scratch =
        p->tiling.buffer_bytes ? c->scratch + (int64_t)slot * p->tiling.buffer_bytes : NULL;
    int nops = p->nin + p->nout, b = 0;
    const og_ew_operand *ops[OG_EW_MAX_IN + OG_EW_MAX_OUT];
    char *base[OG_EW_MAX_IN + OG_EW_MAX_OUT];
    double *bufs[OG_EW_MAX_IN + OG_EW_MAX_OUT];
    for (int k = 0; k < nops; k++) {
        ops[k] = k < p->nin ? &p->in[k] : &p->out[k - p->nin];
        base[k] = og_executor_addr(c->e, ops[k]->slot) +
                  ops[k]->offset * (int64_t)aclDataTypeSize(ops[k]->dtype);
        bufs[k] = ops[k]->direct ? NULL : (double *)(scratch + (b++) * per_buffer);
    }
    const double *in[OG_EW_MAX_IN];
    double *out[OG_EW_MAX_OUT];
    for (int64_t s = start; s < end; s += tile) {
        int64_t n = end - s < tile ? end - s : tile;
        for (int k = 0; k < p->nin; k++) {
            if (ops[k]->direct) {
                in[k] = (const double *)base[k] + s;
                continue;
            }
            walk64(p, ops[k], base[k], s, n, bufs[k], false);
            in[k] = bufs[k];
        }
        for (int k = 0; k < p->nout; k++)
            out[k] = ops[p->nin + k]->direct ? (double *)base[p->nin + k] + s : bufs[p->nin + k];
        p->compute64((size_t)n, in, out, p->params);
        for (int k = 0; k < p->nout; k++)
            if (!ops[p->nin + k]->direct)
                walk64(p, ops[p->nin + k], base[p->nin + k], s, n, out[k], true);
    }
}

void og_ew_run(const aclOpExecutor *e, const og_ew_plan *p, char *scratch) {
    ew_run_ctx ctx = {e, p, scratch};
    og_parallel_for(p->tiling.core_num, p->tiling.slots, p->f64 ? run_core64 : run_core, &ctx);
}

void og_ew_prepare(const og_ew_op *op, og_ew_plan *p) {
    og_ew_make_plan(op, og_num_threads(), og_ew_nt_threshold(), p);
    p->isa = og_isa();
    if (p->ymm_stream && p->isa > OPGRAD_ISA_AVX2) p->isa = OPGRAD_ISA_AVX2;
    p->compute = op->kernels[p->isa];
    if (p->nt_in_place) p->compute = op->kernels_nt[p->isa];
    if (p->f64) p->compute64 = op->kernels64[p->isa];
    if (p->fused16) p->compute16 = op->kernels16[p->isa][p->dtype16 == ACL_BF16 ? 0 : 1];
    const char *lut_env = getenv("OPGRAD_LUT16"); // "0": never a table
    if (p->fused16 && op->compute_bound && p->nin == 1 && p->nout == 1 && !p->stream_out &&
        p->in[0].linear && p->tiling.total >= LUT16_MIN && !(lut_env && !strcmp(lut_env, "0")))
        p->lut16 = lut16_for(p->compute16, p->params);
    if (op->slots) {
        for (int k = 0; k < op->nin; k++) p->in[k].slot = op->in_slot[k];
        for (int k = 0; k < op->nout; k++) p->out[k].slot = op->out_slot[k];
    }
}

aclnnStatus og_ew_plan_op(const og_ew_op *op, uint64_t *workspaceSize, aclOpExecutor **executor) {
    const aclTensor *io[OG_EW_MAX_IN + OG_EW_MAX_OUT];
    for (int k = 0; k < op->nin; k++) io[k] = op->in[k];
    for (int k = 0; k < op->nout; k++) io[op->nin + k] = op->out[k];
    og_prog p;
    og_prog_init(&p, op->op, op->nin, op->nout, io);
    if (op->out[0]->numel > 0) { // empty tensors: success, no workspace, no work
        aclnnStatus st = og_check_io_memory(op->op, op->nin, op->in, op->nout, op->out, op->names);
        if (st != ACLNN_SUCCESS) return st;
        og_prog_map(&p, op);
    }
    return og_prog_publish(&p, workspaceSize, executor);
}
