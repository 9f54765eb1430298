/* The reduction engine (see reduce.h for the summation order and the threading). */
#include "engine/reduce.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/convert.h"
#include "engine/program.h"
#include "runtime/cpu.h"
#include "runtime/error.h"
#include "runtime/pool.h"
#include "tensor/dtype.h"

#define OG_DECLARE_REDUCE(op, sfx)                                                                 \
    void og_##op##_lanes__##sfx(const float *x, size_t n, float *acc);                             \
    void og_##op##_rows__##sfx(const float *const *rows, size_t n, size_t w, float *acc);          \
    void og_##op##_add__##sfx(const float *a, const float *b, float *dst, size_t w);               \
    void og_##op##_chunks__##sfx(const float *x, size_t n, float *sums);                           \
    void og_##op##_rows_bf16__##sfx(const uint16_t *const *rows, size_t n, size_t w, float *acc);  \
    void og_##op##_rows_f16__##sfx(const uint16_t *const *rows, size_t n, size_t w, float *acc);   \
    void og_##op##_chunks_bf16__##sfx(const uint16_t *x, size_t n, float *sums);                   \
    void og_##op##_chunks_f16__##sfx(const uint16_t *x, size_t n, float *sums);
#define OG_DECLARE_REDUCE_OP(op)                                                                   \
    OG_DECLARE_REDUCE(op, scalar) OG_DECLARE_REDUCE(op, avx2) OG_DECLARE_REDUCE(op, avx512)
OG_DECLARE_REDUCE_OP(red)
OG_DECLARE_REDUCE_OP(redmax)
OG_DECLARE_REDUCE_OP(redmin)

#define REDUCE_ENTRY(op, sfx)                                                                      \
    {                                                                                              \
        og_##op##_lanes__##sfx, og_##op##_rows__##sfx, og_##op##_add__##sfx,                       \
            og_##op##_chunks__##sfx, og_##op##_rows_bf16__##sfx, og_##op##_rows_f16__##sfx,        \
            og_##op##_chunks_bf16__##sfx, og_##op##_chunks_f16__##sfx                              \
    }
// The levels above AVX-512 run its build (engine/isa_table.h).
#define REDUCE_TABLE(op)                                                                           \
    {                                                                                              \
        [OPGRAD_ISA_SCALAR] = REDUCE_ENTRY(op, scalar),                                            \
        [OPGRAD_ISA_AVX2] = REDUCE_ENTRY(op, avx2),                                                \
        [OPGRAD_ISA_AVX512] = REDUCE_ENTRY(op, avx512),                                            \
        [OPGRAD_ISA_AVX512_BF16] = REDUCE_ENTRY(op, avx512),                                       \
        [OPGRAD_ISA_AVX512_FP16] = REDUCE_ENTRY(op, avx512),                                       \
        [OPGRAD_ISA_AMX] = REDUCE_ENTRY(op, avx512),                                               \
    }
const og_reduce_kernels og_reduce_kernel_table[OPGRAD_ISA_COUNT] = REDUCE_TABLE(red);
static const og_reduce_kernels max_kernels[OPGRAD_ISA_COUNT] = REDUCE_TABLE(redmax);
static const og_reduce_kernels min_kernels[OPGRAD_ISA_COUNT] = REDUCE_TABLE(redmin);

const og_reduce_kernels *og_reduce_kernels_of(og_reduce_kind kind, opgrad_isa isa) {
    return kind == OG_RED_MAX   ? &max_kernels[isa]
           : kind == OG_RED_MIN ? &min_kernels[isa]
                                : &og_reduce_kernel_table[isa];
}

// The scalar form of a plan's operation, and its identity (the start of every lane).
static inline float combine(og_reduce_kind kind, float a, float b) {
    switch (kind) {
    case OG_RED_MAX:
        return (a > b || a != a) ? a : b;
    case OG_RED_MIN:
        return (a < b || a != a) ? a : b;
    default:
        return a + b;
    }
}
static inline float identity(og_reduce_kind kind) {
    return kind == OG_RED_MAX ? -INFINITY : kind == OG_RED_MIN ? INFINITY : -0.0f;
}

enum {
    BLOCK_STACK = 8,  // pairwise stack over the 64 chunks of a block: depth <= 7
    STACK_DEPTH = 48, // pairwise stack over blocks: depth <= log2(blocks) + 1
    SHORT_SUMS = 32,  // below this many summands per output, strips even when gathered
};

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t abs64(int64_t x) { return x < 0 ? -x : x; }
static int64_t align64(int64_t bytes) { return (bytes + 63) / 64 * 64; }

// ---------------------------------------------------------------------------------------------
// Planning

// Stride of tensor t over dim d of the shape being reduced (right-aligned; 0 where it broadcasts).
static int64_t bcast_stride(const aclTensor *t, int ndim, const int64_t *dims, int d) {
    int td = t->ndim - ndim + d;
    return (td < 0 || t->dims[td] == 1 || dims[d] == 1) ? 0 : t->strides[td];
}

// The product of n extents: 0 if any is 0 (an empty shape, whose other extents may be huge: their
// product need not fit), else the product, which then fits (it counts elements of a tensor).
static int64_t extent_product(const int64_t *v, int n) {
    int64_t prod = 1;
    for (int d = 0; d < n; d++)
        if (v[d] == 0) return 0;
    for (int d = 0; d < n; d++)
        if (__builtin_mul_overflow(prod, v[d], &prod)) return INT64_MAX;
    return prod;
}

// A float64 reduction: some input is float64, or the output is (a float64 gradient of float32
// values, say) and the map, if any, has its float64 form.
static bool sums_in_f64(const og_reduce_op *op) {
    for (int k = 0; k < op->nin; k++)
        if (op->in[k]->dtype == ACL_DOUBLE) return true;
    return op->out->dtype == ACL_DOUBLE && (!op->map || op->map64);
}

void og_reduce_make_plan(const og_reduce_op *op, int max_cores, og_reduce_plan *p) {
    memset(p, 0, sizeof *p);
    p->kind = op->kind;
    int nin = op->nin;
    p->nin = nin;
    for (int k = 0; k < nin; k++) p->in_dtype[k] = op->in[k]->dtype, p->in_slot[k] = op->in_slot[k];
    p->out_dtype = op->out->dtype;
    p->out_slot = op->out_slot;
    p->round_in = op->round_in;

    // Coalesce: drop size-1 dims; merge a dim into the last one of its kind when that stays one
    // arithmetic progression for every operand (and the output, for kept dims).
    for (int d = 0; d < op->ndim; d++) {
        int64_t size = op->dims[d];
        if (size == 1) continue;
        bool red = (op->reduce_mask >> d) & 1u;
        int64_t st[OG_RED_MAX_IN], ost = 0;
        for (int k = 0; k < nin; k++) st[k] = bcast_stride(op->in[k], op->ndim, op->dims, d);
        if (!red && op->out_dim[d] >= 0 && op->out_dim[d] < op->out->ndim)
            ost = op->out->strides[op->out_dim[d]];
        int *n = red ? &p->nred : &p->nkept;
        int64_t *sizes = red ? p->red : p->kept;
        bool merge = *n > 0 && size > 0 && sizes[*n - 1] > 0;
        for (int k = 0; k < nin && merge; k++) {
            const int64_t *prev = red ? p->red_in[k] : p->kept_in[k];
            int64_t next; // a stride times a size may not fit (a huge-stride view): no merge
            merge = !__builtin_mul_overflow(st[k], size, &next) && prev[*n - 1] == next;
        }
        int64_t next_out;
        if (merge && !red)
            merge =
                !__builtin_mul_overflow(ost, size, &next_out) && p->kept_out[*n - 1] == next_out;
        int64_t merged = 0; // an empty shape's other dims may be huge: their product may not fit
        if (merge && __builtin_mul_overflow(sizes[*n - 1], size, &merged)) merge = false;
        int at = merge ? *n - 1 : (*n)++;
        sizes[at] = merge ? merged : size;
        for (int k = 0; k < nin; k++) (red ? p->red_in[k] : p->kept_in[k])[at] = st[k];
        if (!red) p->kept_out[at] = ost;
    }
    p->M = extent_product(p->kept, p->nkept);
    p->K = extent_product(p->red, p->nred);

    // Units: strips along the innermost kept dim when operand 0 is contiguous there (the
    // summands of neighbouring outputs are neighbours in memory), else one output each.
    if (p->nkept == 0)
        p->strips = false;
    else if (p->nred == 0)
        p->strips = true;
    else {
        // strips when neighbouring outputs are neighbours in memory, or when each output sums so
        // few values that gathering rows across outputs beats per-output overheads
        int64_t k = 1;
        for (int d = 0; d < p->nred; d++) k *= p->red[d];
        p->strips = p->kept[p->nkept - 1] >= 8 &&
                    (abs64(p->kept_in[0][p->nkept - 1]) <= 1 || k < SHORT_SUMS);
    }
    bool in_place =
        nin == 1 && !op->map && p->round_in == ACL_FLOAT &&
        (p->strips ? p->kept_in[0][p->nkept - 1] == 1 : p->nred == 1 && p->red_in[0][0] == 1);
    p->direct = in_place && p->in_dtype[0] == ACL_FLOAT;
    p->direct16 = in_place && (p->in_dtype[0] == ACL_BF16 || p->in_dtype[0] == ACL_FLOAT16);
    if (p->strips) {
        // gathered / mapped rows are produced one at a time: wider strips make each a longer
        // sequential read (in-place rows are read 16 streams at once and need no more)
        int64_t widest = p->direct ? OG_RED_STRIP : OG_RED_STRIP_WIDE;
        p->W = p->kept[p->nkept - 1];
        p->strip = p->W < widest ? p->W : widest;
        p->strips_per_row = p->strip > 0 ? ceil_div(p->W, p->strip) : 0;
        p->units = p->W > 0 ? p->M / p->W * p->strips_per_row : 0;
    } else {
        p->W = 1;
        p->strip = 1;
        p->strips_per_row = 1;
        p->units = p->M;
    }
    p->nchunks = ceil_div(p->K, OG_RED_CHUNK);
    p->nblocks = ceil_div(p->nchunks, OG_RED_BLOCK);

    int cores = max_cores > 0 ? max_cores : 1;
    int64_t read_bytes = 0;
    for (int k = 0; k < nin; k++) read_bytes += (int64_t)aclDataTypeSize(p->in_dtype[k]);
    // Fewer strips than cores and one block per output (K <= 16384: no blocks to split the
    // work by), e.g. the column sums of a [1024, 1024] matrix, one strip of 1024 mapped outputs.
    // When the chunk count is a power of two, the rows are cut instead: into 2, 4, ... blocks of
    // equal power-of-two chunk counts, one per core, whose sums the combine pass adds pairwise:
    // the binary-counter order over 2^k chunks is the balanced tree, and so is a balanced tree
    // over equal balanced subtrees, so the bits are those of one block. Each core then still
    // reads whole rows: narrower strips, the other way, cost a mapped strip 15-40% on one core
    // (FusedAddScaleBackward fp32 [R, 1024] two threads, gradScale by rows instead of by columns:
    // 2^20 1.18-1.21x, 2^22 1.56-1.63x faster; in-place column sums the same either way).
    // Otherwise narrower strips give every core a share; an output's summation order does not
    // depend on the strip it is in, so the bits are again those of any other split.
    int64_t core_read; // the bytes each core would read (a product past int64 is plenty)
    bool core_big = __builtin_mul_overflow(p->M / cores * p->K, read_bytes, &core_read) ||
                    core_read >= OG_MIN_CORE_BYTES;
    p->block_chunks = OG_RED_BLOCK;
    bool few_units =
        p->strips && cores > 1 && p->nblocks == 1 && p->units > 0 && p->units < cores && core_big;
    if (few_units && p->nchunks >= 2 && (p->nchunks & (p->nchunks - 1)) == 0) {
        int64_t parts = 2;
        while (p->units * parts < cores && 2 * parts <= p->nchunks) parts *= 2;
        p->block_chunks = p->nchunks / parts;
        p->nblocks = parts;
    } else if (few_units) {
        int64_t rows = p->M / p->W, per_row = ceil_div(cores, rows);
        int64_t strip = ceil_div(ceil_div(p->W, per_row), OG_RED_LANES) * OG_RED_LANES;
        if (strip < p->strip) {
            p->strip = strip;
            p->strips_per_row = ceil_div(p->W, strip);
            p->units = rows * p->strips_per_row;
        }
    }
    p->split_blocks = cores > 1 && p->K > 0 && p->nblocks > 1 && p->units < 4 * (int64_t)cores;
    p->items = p->split_blocks ? p->units * p->nblocks : p->units;
    // As the elementwise tiling: a large job gets up to OG_CORES_PER_THREAD ranges of items per
    // thread (each reading at least OG_MIN_CORE_BYTES), claimed dynamically; scratch is per thread.
    int64_t ranges = cores;
    if (cores > 1) {
        int64_t per_thread = OG_CORES_PER_THREAD;
        if (p->M / cores < OG_CORES_PER_THREAD * OG_MIN_CORE_BYTES &&
            p->K < OG_CORES_PER_THREAD * OG_MIN_CORE_BYTES) // small enough to multiply
            per_thread = p->M * p->K * read_bytes / (cores * OG_MIN_CORE_BYTES);
        if (per_thread > OG_CORES_PER_THREAD) per_thread = OG_CORES_PER_THREAD;
        if (per_thread > 1) ranges = cores * per_thread;
    }
    p->core_num = (int)(p->items < ranges ? p->items : ranges);
    p->slots = p->core_num < cores ? p->core_num : cores;
    p->combine_cores = p->split_blocks ? (int)(p->units < cores ? p->units : cores) : 0;

    // Per-core workspace: operand buffers, values, row pointers, lane accumulators, two stacks.
    int64_t w = p->strip, gbuf = p->strips ? w : OG_RED_CHUNK;
    p->core_bytes = (int64_t)(nin + 1) * align64(gbuf * 4) + align64(OG_RED_CHUNK * 8) +
                    align64(OG_RED_LANES * w * 4) + align64(BLOCK_STACK * w * 4) +
                    align64(STACK_DEPTH * w * 4);
    p->partial_offset = (p->slots > p->combine_cores ? p->slots : p->combine_cores) * p->core_bytes;
    p->workspace = p->partial_offset + (p->split_blocks ? align64(p->items * w * 4) : 0);
    if (op->params_size) memcpy(p->params, op->params, op->params_size);
    // float64: whole outputs per thread, contiguous ranges of them; per thread a chunk of each
    // input and of the mapped values (sum64_run)
    p->f64 = sums_in_f64(op);
    if (p->f64) {
        p->split_blocks = false;
        p->nblocks = ceil_div(p->nchunks, OG_RED_BLOCK), p->block_chunks = OG_RED_BLOCK;
        p->core_num = (int)(p->M < cores ? p->M : cores);
        p->slots = p->core_num;
        p->combine_cores = 0;
        p->core_bytes = (int64_t)(nin + 1) * OG_RED_CHUNK * 8;
        p->partial_offset = 0;
        p->workspace = p->slots * p->core_bytes;
    }
    if (p->M == 0) p->core_num = 0, p->workspace = 0;
}

static void split_range(int64_t total, int cores, int core, int64_t *start, int64_t *count) {
    int64_t base = total / cores, extra = total % cores;
    *start = core * base + (core < extra ? core : extra);
    *count = base + (core < extra ? 1 : 0);
}

void og_reduce_core_range(const og_reduce_plan *p, int pass, int core, int64_t *start,
                          int64_t *count) {
    if (pass == 1)
        split_range(p->items, p->core_num, core, start, count);
    else
        split_range(p->units, p->combine_cores, core, start, count);
}

void og_reduce_unit_outputs(const og_reduce_plan *p, int64_t u, int64_t *first, int64_t *count) {
    if (!p->strips) {
        *first = u;
        *count = 1;
        return;
    }
    int64_t q = u / p->strips_per_row, j0 = (u % p->strips_per_row) * p->strip;
    *first = q * p->W + j0;
    *count = p->W - j0 < p->strip ? p->W - j0 : p->strip;
}

void og_reduce_block_range(const og_reduce_plan *p, int64_t b, int64_t *r0, int64_t *n) {
    int64_t per = p->block_chunks * OG_RED_CHUNK;
    *r0 = b * per;
    *n = p->K - *r0 < per ? p->K - *r0 : per;
}

void og_reduce_to_shape(og_reduce_op *r, const int64_t *from, int ndim, const aclTensor *to) {
    r->ndim = ndim;
    r->reduce_mask = 0;
    for (int d = 0; d < ndim; d++) {
        r->dims[d] = from[d];
        int td = to->ndim - ndim + d;
        r->out_dim[d] = td;
        if (td < 0 || (to->dims[td] == 1 && from[d] != 1)) {
            r->reduce_mask |= 1u << d;
            r->out_dim[d] = -1;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Running

typedef struct red_ctx {
    const og_reduce_plan *p;
    const aclOpExecutor *e;
    char *workspace; // the step's scratch
    const og_reduce_kernels *k;
    const og_convert_table *cv;
} red_ctx;

typedef struct pstack {
    float *v;
    size_t w;
    og_reduce_kind kind;
    int depth;
    int level[STACK_DEPTH];
} pstack;

// The binary-counter pairwise order: equal levels merge as soon as they meet (earlier operand on
// the left); finishing merges what is left from the top down.
static void ps_push(pstack *s, const float *x, const og_reduce_kernels *k) {
    size_t w = s->w;
    memcpy(s->v + (size_t)s->depth * w, x, w * sizeof(float));
    s->level[s->depth++] = 0;
    while (s->depth >= 2 && s->level[s->depth - 1] == s->level[s->depth - 2]) {
        float *a = s->v + (size_t)(s->depth - 2) * w;
        if (w == 1)
            a[0] = combine(s->kind, a[0], a[1]);
        else
            k->add(a, a + w, a, w);
        s->level[s->depth - 2]++;
        s->depth--;
    }
}

static const float *ps_finish(pstack *s, const og_reduce_kernels *k) {
    size_t w = s->w;
    while (s->depth > 1) {
        float *a = s->v + (size_t)(s->depth - 2) * w;
        if (w == 1)
            a[0] = combine(s->kind, a[0], a[1]);
        else
            k->add(a, a + w, a, w);
        s->depth--;
    }
    return s->v;
}

// The sum of n = 2^k values in the binary-counter order, which for a power of two is the balanced
// tree: in registers (a row of 1024 fp32 is four chunks, and the stack of pairwise() cost 15% of
// such a ReduceSum in cache).
static float tree_sum(const float *v, int64_t n) {
    switch (n) {
    case 1:
        return v[0];
    case 2:
        return v[0] + v[1];
    case 4:
        return (v[0] + v[1]) + (v[2] + v[3]);
    default:
        return tree_sum(v, n / 2) + tree_sum(v + n / 2, n / 2);
    }
}

// The binary-counter pairwise combination of v[0..n) (n <= 64): the same operations as ps_push /
// ps_finish with w = 1, in registers.
static float pairwise(og_reduce_kind kind, const float *v, int64_t n) {
    if (kind != OG_RED_MAX && kind != OG_RED_MIN && n > 0 && !(n & (n - 1))) return tree_sum(v, n);
    float st[BLOCK_STACK];
    int level[BLOCK_STACK], depth = 0;
    for (int64_t i = 0; i < n; i++) {
        st[depth] = v[i];
        level[depth++] = 0;
        while (depth >= 2 && level[depth - 1] == level[depth - 2]) {
            st[depth - 2] = combine(kind, st[depth - 2], st[depth - 1]);
            level[depth - 2]++;
            depth--;
        }
    }
    for (; depth > 1; depth--) st[depth - 2] = combine(kind, st[depth - 2], st[depth - 1]);
    return st[0];
}

typedef struct core_mem {
    float *g[OG_RED_MAX_IN]; // gathered operands
    float *vals;             // summands
    const float **rows;
    const uint16_t **rows16; // the same memory, for 16-bit rows read in place
    float *acc;              // 16 lanes x w
    pstack block, total;
} core_mem;

static core_mem core_memory(const red_ctx *c, int slot) {
    const og_reduce_plan *p = c->p;
    char *at = c->workspace + (int64_t)slot * p->core_bytes;
    int64_t w = p->strip, gbuf = p->strips ? w : OG_RED_CHUNK;
    core_mem m;
    for (int k = 0; k < p->nin; k++) m.g[k] = (float *)at, at += align64(gbuf * 4);
    m.vals = (float *)at, at += align64(gbuf * 4);
    m.rows = (const float **)at;
    m.rows16 = (const uint16_t **)at, at += align64(OG_RED_CHUNK * 8);
    m.acc = (float *)at, at += align64(OG_RED_LANES * w * 4);
    m.block = (pstack){.v = (float *)at, .w = (size_t)w, .kind = p->kind};
    at += align64(BLOCK_STACK * w * 4);
    m.total = (pstack){.v = (float *)at, .w = (size_t)w, .kind = p->kind};
    return m;
}

// Walks the summation index r over the reduced dims, keeping each operand's offset.
typedef struct rwalk {
    int64_t idx[OG_MAX_DIMS];
    int64_t off[OG_RED_MAX_IN];
} rwalk;

static void rw_init(const og_reduce_plan *p, rwalk *w, int64_t r) {
    for (int k = 0; k < p->nin; k++) w->off[k] = 0;
    if (r == 0) { // the common start: no divisions
        for (int d = 0; d < p->nred; d++) w->idx[d] = 0;
        return;
    }
    for (int d = p->nred - 1; d >= 0; d--) {
        w->idx[d] = r % p->red[d];
        r /= p->red[d];
        for (int k = 0; k < p->nin; k++) w->off[k] += w->idx[d] * p->red_in[k][d];
    }
}

// Advances by `step` along the innermost reduced dim (step never crosses more than one carry
// chain: callers step by 1 or by the rest of the innermost run).
static void rw_advance(const og_reduce_plan *p, rwalk *w, int64_t step) {
    int last = p->nred - 1;
    if (last < 0) return;
    w->idx[last] += step;
    for (int k = 0; k < p->nin; k++) w->off[k] += step * p->red_in[k][last];
    for (int d = last; d > 0 && w->idx[d] == p->red[d]; d--) {
        for (int k = 0; k < p->nin; k++)
            w->off[k] += p->red_in[k][d - 1] - w->idx[d] * p->red_in[k][d];
        w->idx[d] = 0;
        w->idx[d - 1]++;
    }
}

static const char *operand_base(const red_ctx *c, int k) {
    return og_executor_addr(c->e, c->p->in_slot[k]);
}

// Where a unit sits: its outputs, each operand's offset (elements) at its first output and
// summand 0, and its first output's offset.
typedef struct unit_pos {
    int64_t first, w;
    int64_t in_off[OG_RED_MAX_IN];
    int64_t out_off;
    int64_t idx[OG_MAX_DIMS]; // kept index of the first output (one-output units)
} unit_pos;

static void unit_position(const og_reduce_plan *p, int64_t u, unit_pos *up) {
    og_reduce_unit_outputs(p, u, &up->first, &up->w);
    int nd = p->strips ? p->nkept - 1 : p->nkept;
    int64_t q = p->strips ? up->first / p->W : up->first;
    for (int k = 0; k < p->nin; k++) up->in_off[k] = 0;
    up->out_off = 0;
    for (int d = nd - 1; d >= 0; d--) {
        int64_t i = q % p->kept[d];
        q /= p->kept[d];
        up->idx[d] = i;
        for (int k = 0; k < p->nin; k++) up->in_off[k] += i * p->kept_in[k][d];
        up->out_off += i * p->kept_out[d];
    }
    if (p->strips) {
        int64_t j0 = up->first % p->W;
        for (int k = 0; k < p->nin; k++) up->in_off[k] += j0 * p->kept_in[k][p->nkept - 1];
        up->out_off += j0 * p->kept_out[p->nkept - 1];
    }
}

// The next one-output unit (an odometer over the kept dims, no divisions).
static void unit_next(const og_reduce_plan *p, unit_pos *up) {
    int last = p->nkept - 1;
    up->first++;
    if (last < 0) return;
    up->idx[last]++;
    for (int k = 0; k < p->nin; k++) up->in_off[k] += p->kept_in[k][last];
    up->out_off += p->kept_out[last];
    for (int d = last; d > 0 && up->idx[d] == p->kept[d]; d--) {
        for (int k = 0; k < p->nin; k++)
            up->in_off[k] += p->kept_in[k][d - 1] - up->idx[d] * p->kept_in[k][d];
        up->out_off += p->kept_out[d - 1] - up->idx[d] * p->kept_out[d];
        up->idx[d] = 0;
        up->idx[d - 1]++;
    }
}

// n values of operand k, `stride` elements apart from element offset off, as fp32: in place when
// they already are (fp32, unit stride), else converted into buf.
static const float *operand_run(const red_ctx *c, int k, int64_t off, int64_t stride, int64_t n,
                                float *buf) {
    const og_reduce_plan *p = c->p;
    if (p->in_dtype[k] == ACL_FLOAT && stride == 1) return (const float *)operand_base(c, k) + off;
    size_t es = aclDataTypeSize(p->in_dtype[k]);
    og_load_run(c->cv, operand_base(c, k) + off * (int64_t)es, p->in_dtype[k], stride, buf, n);
    return buf;
}

// The summands of n consecutive positions whose operands start at offsets off[k] and advance by
// stride[k]: in place when possible (no map, no rounding, fp32 unit stride), else mapped /
// converted / rounded into dst.
static const float *summands_with(const red_ctx *c, core_mem *m, const int64_t *off,
                                  const int64_t *stride, int64_t n, float *dst, int64_t gbuf_at,
                                  const float *const *fixed) {
    const og_reduce_plan *p = c->p;
    const float *ins[OG_RED_MAX_IN];
    for (int k = 0; k < p->nin; k++)
        ins[k] = fixed && fixed[k] ? fixed[k]
                                   : operand_run(c, k, off[k], stride[k], n, m->g[k] + gbuf_at);
    if (!p->map && p->round_in == ACL_FLOAT) return ins[0];
    float *outs[1] = {dst};
    if (p->map)
        p->map((size_t)n, ins, outs, p->params);
    else if (ins[0] != dst)
        memcpy(dst, ins[0], (size_t)n * sizeof(float));
    if (p->round_in != ACL_FLOAT) og_round_through(c->cv, dst, n, p->round_in);
    return dst;
}

static const float *summands(const red_ctx *c, core_mem *m, const int64_t *off,
                             const int64_t *stride, int64_t n, float *dst, int64_t gbuf_at) {
    return summands_with(c, m, off, stride, n, dst, gbuf_at, NULL);
}

// Input k is the same along every reduced dim (e.g. a bias in a map summed over rows).
static bool row_invariant(const og_reduce_plan *p, int k) {
    for (int d = 0; d < p->nred; d++)
        if (p->red_in[k][d] != 0) return false;
    return true;
}

// Summands [r0, r0 + n) of a one-output unit, contiguous (in place when they are one run).
static const float *gather_lanes(const red_ctx *c, core_mem *m, const unit_pos *up, int64_t r0,
                                 int64_t n) {
    const og_reduce_plan *p = c->p;
    rwalk w;
    rw_init(p, &w, r0);
    int last = p->nred - 1;
    int64_t stride[OG_RED_MAX_IN], off[OG_RED_MAX_IN];
    for (int k = 0; k < p->nin; k++) stride[k] = last < 0 ? 1 : p->red_in[k][last];
    for (int64_t done = 0; done < n;) {
        int64_t run = last < 0 ? 1 : p->red[last] - w.idx[last];
        if (run > n - done) run = n - done;
        for (int k = 0; k < p->nin; k++) off[k] = up->in_off[k] + w.off[k];
        const float *v = summands(c, m, off, stride, run, m->vals + done, done);
        if (run == n) return v; // one run: no copy needed
        if (v != m->vals + done) memcpy(m->vals + done, v, (size_t)run * sizeof(float));
        done += run;
        rw_advance(p, &w, run);
    }
    return m->vals;
}

// The 16 lanes of acc (w wide each) combined as a balanced pairwise tree into acc[0..w). Lanes
// from `active` on hold only the identity they started with (-0 for a sum): combining with it
// changes nothing, so those operations are skipped (a chunk of n < 16 summands fills only n lanes).
static void lane_tree(const red_ctx *c, float *acc, size_t w, int active) {
    if (active < OG_RED_LANES) { // only lanes [0, active) were reset and filled
        for (int a = active; a > 1; a = (a + 1) / 2)
            for (int i = 0; i < (a + 1) / 2; i++) {
                float *dst = acc + (size_t)i * w, *l = acc + (size_t)(2 * i) * w, *r = l + w;
                if (2 * i + 1 >= a)
                    memmove(dst, l, w * sizeof(float)); // l o identity = l
                else if (w == 1)
                    dst[0] = combine(c->p->kind, l[0], r[0]);
                else
                    c->k->add(l, r, dst, w);
            }
        return;
    }
    if (w == 1 && c->p->kind == OG_RED_SUM) { // the same adds, in registers
        float t[OG_RED_LANES];
        memcpy(t, acc, sizeof t);
        float s0 = t[0] + t[1], s1 = t[2] + t[3], s2 = t[4] + t[5], s3 = t[6] + t[7];
        float s4 = t[8] + t[9], s5 = t[10] + t[11], s6 = t[12] + t[13], s7 = t[14] + t[15];
        float q0 = s0 + s1, q1 = s2 + s3, q2 = s4 + s5, q3 = s6 + s7;
        acc[0] = (q0 + q1) + (q2 + q3);
        return;
    }
    for (int h = OG_RED_LANES / 2; h >= 1; h /= 2)
        for (int i = 0; i < h; i++) {
            if (w == 1)
                acc[i] = combine(c->p->kind, acc[2 * i], acc[2 * i + 1]);
            else
                c->k->add(acc + 2 * i * w, acc + (2 * i + 1) * w, acc + i * w, w);
        }
}

static void reset_acc(float *acc, size_t count, og_reduce_kind kind) {
    float start = identity(kind);
    for (size_t i = 0; i < count; i++) acc[i] = start;
}

// The sum of chunk [r0, r0 + n) of a unit (w values): in m->acc, or where the one summand is.
static const float *chunk_sum(const red_ctx *c, core_mem *m, const unit_pos *up, int64_t r0,
                              int64_t n) {
    const og_reduce_plan *p = c->p;
    int64_t w = up->w;
    if (n == 1) { // one summand: the lanes and the tree combine it with the identity only
        rwalk rw;
        rw_init(p, &rw, r0);
        int64_t stride[OG_RED_MAX_IN], off[OG_RED_MAX_IN];
        for (int k = 0; k < p->nin; k++) {
            stride[k] = p->strips ? p->kept_in[k][p->nkept - 1] : 1;
            off[k] = up->in_off[k] + rw.off[k];
        }
        return summands(c, m, off, stride, w, m->vals, 0);
    }
    int active = n < OG_RED_LANES ? (int)n : OG_RED_LANES;
    reset_acc(m->acc, (size_t)((p->strips ? active : OG_RED_LANES) * w), p->kind);
    if (!p->strips) {
        c->k->lanes(gather_lanes(c, m, up, r0, n), (size_t)n, m->acc);
    } else {
        int last = p->nkept - 1;
        int64_t stride[OG_RED_MAX_IN], off[OG_RED_MAX_IN];
        for (int k = 0; k < p->nin; k++) stride[k] = p->kept_in[k][last];
        rwalk rw;
        rw_init(p, &rw, r0);
        // row i of the chunk goes to lane i % 16 (n <= 256 rows: one kernel call when in place)
        if (p->direct16) { // 16-bit rows in place, widened by the kernel
            const uint16_t *x = (const uint16_t *)operand_base(c, 0) + up->in_off[0];
            for (int64_t i = 0; i < n; i++, rw_advance(p, &rw, 1)) m->rows16[i] = x + rw.off[0];
            (p->in_dtype[0] == ACL_BF16 ? c->k->rows_bf16 : c->k->rows_f16)(m->rows16, (size_t)n,
                                                                            (size_t)w, m->acc);
        } else if (p->direct) { // fp32 rows in place
            const float *x = (const float *)operand_base(c, 0) + up->in_off[0];
            for (int64_t i = 0; i < n; i++, rw_advance(p, &rw, 1)) m->rows[i] = x + rw.off[0];
            c->k->rows(m->rows, (size_t)n, (size_t)w, m->acc);
        } else {
            // Mapped or converted rows, one at a time, each added into its lane at once: the row
            // stays in L1 between the map and the add (16 rows mapped, then added, went through
            // L2: FusedAddScaleBackward's gradScale, fp32 rows of 1024, 1.04-1.11x faster at
            // 2^18-2^20 elements). Inputs that do not change along the reduced dims are loaded
            // (converted) once, into their own buffers, which the other inputs' rows leave alone.
            const float *fixed[OG_RED_MAX_IN] = {NULL};
            for (int k = 0; k < p->nin; k++)
                if (row_invariant(p, k))
                    fixed[k] = operand_run(c, k, up->in_off[k] + rw.off[k], stride[k], w, m->g[k]);
            for (int64_t i = 0; i < n; i++, rw_advance(p, &rw, 1)) {
                for (int k = 0; k < p->nin; k++) off[k] = up->in_off[k] + rw.off[k];
                const float *row = summands_with(c, m, off, stride, w, m->vals, 0, fixed);
                c->k->rows(&row, 1, (size_t)w, m->acc + (i % OG_RED_LANES) * w);
            }
        }
    }
    lane_tree(c, m->acc, (size_t)w, active);
    return m->acc;
}

// The chunk sums of the n contiguous summands of operand 0 (read in place) from element off.
static void chunk_sums(const red_ctx *c, int64_t off, int64_t n, float *sums) {
    const og_reduce_plan *p = c->p;
    const char *x = operand_base(c, 0);
    if (p->direct)
        c->k->chunks((const float *)x + off, (size_t)n, sums);
    else if (p->in_dtype[0] == ACL_BF16)
        c->k->chunks_bf16((const uint16_t *)x + off, (size_t)n, sums);
    else
        c->k->chunks_f16((const uint16_t *)x + off, (size_t)n, sums);
}

// Block b of a unit: its sum (w values); a block of one chunk is that chunk's sum.
static const float *block_sum(const red_ctx *c, core_mem *m, const unit_pos *up, int64_t b) {
    int64_t rb, nb;
    og_reduce_block_range(c->p, b, &rb, &nb);
    const og_reduce_plan *p = c->p;
    if ((p->direct || p->direct16) && !p->strips) { // contiguous summands: one kernel call
        float sums[OG_RED_BLOCK];
        chunk_sums(c, up->in_off[0] + rb, nb, sums);
        m->acc[0] = pairwise(p->kind, sums, (nb + OG_RED_CHUNK - 1) / OG_RED_CHUNK);
        return m->acc;
    }
    if (nb <= OG_RED_CHUNK) return chunk_sum(c, m, up, rb, nb);
    m->block.depth = 0;
    m->block.w = (size_t)up->w;
    for (int64_t r0 = rb; r0 < rb + nb; r0 += OG_RED_CHUNK) {
        ps_push(&m->block,
                chunk_sum(c, m, up, r0, rb + nb - r0 < OG_RED_CHUNK ? rb + nb - r0 : OG_RED_CHUNK),
                c->k);
    }
    return ps_finish(&m->block, c->k);
}

// Stores the results s[0..w) of w neighbouring outputs along the innermost kept dim from element
// out_off on; a mean divides its sums by K first (once, in fp32, into `scratch`, which holds w
// floats and may be s itself).
static void store_outputs(const red_ctx *c, int64_t out_off, const float *s, int64_t w,
                          float *scratch) {
    const og_reduce_plan *p = c->p;
    size_t es = aclDataTypeSize(p->out_dtype);
    char *at = og_executor_addr(c->e, p->out_slot) + out_off * (int64_t)es;
    if (p->kind == OG_RED_MEAN && p->K > 0) {
        float k = (float)p->K; // exact up to 2^24 summands; the division rounds once
        for (int64_t j = 0; j < w; j++) scratch[j] = s[j] / k;
        s = scratch;
    }
    if (w == 1)
        og_store_elem(at, p->out_dtype, s[0]);
    else
        og_store_run(c->cv, at, p->out_dtype, p->kept_out[p->nkept - 1], s, w, false);
}

// Stores a unit's results (a mean's divided in m->acc when they are not there already).
static void store_unit(const red_ctx *c, core_mem *m, const unit_pos *up, const float *s) {
    store_outputs(c, up->out_off, s, up->w, m->acc);
}

// Whole rows, one output each, that follow each other in memory and hold whole chunks (rows of
// 1024 fp32, say): one kernel call sums up to a block's worth of rows, chunk by chunk, and each
// row's total is the pairwise sum of its own chunks, as block_sum computes it (the same bits).
// At 2^24 fp32 in rows of 1024 one call per row ran 1.5x slower than the kernel alone (Zen 3
// VM, one thread); the batch runs at the kernel's speed.
static bool rows_batched(const og_reduce_plan *p) {
    return (p->direct || p->direct16) && !p->strips && p->nblocks == 1 && p->nkept > 0 &&
           p->K % OG_RED_CHUNK == 0 && p->kept_in[0][p->nkept - 1] == p->K;
}

// Sums and stores up to `left` units from *up on (the batch stays inside the innermost kept
// run, where rows are contiguous); leaves *up at the last one and returns how many it did.
static int64_t run_rows_batch(const red_ctx *c, unit_pos *up, int64_t left) {
    const og_reduce_plan *p = c->p;
    int64_t per_row = p->K / OG_RED_CHUNK, last = p->nkept - 1;
    int64_t n = OG_RED_BLOCK / per_row, in_run = p->kept[last] - up->idx[last];
    if (n > left) n = left;
    if (n > in_run) n = in_run;
    float sums[OG_RED_BLOCK], totals[OG_RED_BLOCK];
    chunk_sums(c, up->in_off[0], n * p->K, sums);
    for (int64_t i = 0; i < n; i++) totals[i] = pairwise(p->kind, sums + i * per_row, per_row);
    store_outputs(c, up->out_off, totals, n, totals); // the n outputs are neighbours in the run
    // up moves to the last of them, inside the run (no carry)
    up->first += n - 1;
    up->idx[last] += n - 1;
    for (int k = 0; k < p->nin; k++) up->in_off[k] += (n - 1) * p->kept_in[k][last];
    up->out_off += (n - 1) * p->kept_out[last];
    return n;
}

static void run_units(void *arg, int core, int slot) {
    const red_ctx *c = arg;
    const og_reduce_plan *p = c->p;
    core_mem m = core_memory(c, slot);
    int64_t start, count;
    og_reduce_core_range(p, 1, core, &start, &count);
    unit_pos up;
    bool batched = rows_batched(p);
    for (int64_t u = start; u < start + count; u++) {
        if (p->strips || u == start)
            unit_position(p, u, &up);
        else
            unit_next(p, &up);
        if (batched) {
            u += run_rows_batch(c, &up, start + count - u) - 1;
            continue;
        }
        if (p->K == 0) { // over nothing: +0 for a sum, NaN for a mean (0 / 0), else the identity
            float v = p->kind == OG_RED_SUM    ? 0.0f
                      : p->kind == OG_RED_MEAN ? NAN
                                               : identity(p->kind);
            for (int64_t j = 0; j < up.w; j++) m.acc[j] = v;
            store_unit(c, &m, &up, m.acc);
            continue;
        }
        if (p->nblocks == 1) { // one block: the total is that block's sum
            store_unit(c, &m, &up, block_sum(c, &m, &up, 0));
            continue;
        }
        m.total.depth = 0;
        m.total.w = (size_t)up.w;
        for (int64_t b = 0; b < p->nblocks; b++) ps_push(&m.total, block_sum(c, &m, &up, b), c->k);
        store_unit(c, &m, &up, ps_finish(&m.total, c->k));
    }
}

static float *partial_at(const red_ctx *c, int64_t item) {
    return (float *)(c->workspace + c->p->partial_offset) + item * c->p->strip;
}

static void run_items(void *arg, int core, int slot) {
    const red_ctx *c = arg;
    const og_reduce_plan *p = c->p;
    core_mem m = core_memory(c, slot);
    int64_t start, count;
    og_reduce_core_range(p, 1, core, &start, &count);
    unit_pos up;
    for (int64_t it = start; it < start + count; it++) {
        unit_position(p, it / p->nblocks, &up);
        memcpy(partial_at(c, it), block_sum(c, &m, &up, it % p->nblocks),
               (size_t)up.w * sizeof(float));
    }
}

static void run_combine(void *arg, int core, int slot) {
    const red_ctx *c = arg;
    const og_reduce_plan *p = c->p;
    core_mem m = core_memory(c, slot);
    int64_t start, count;
    og_reduce_core_range(p, 2, core, &start, &count);
    unit_pos up;
    for (int64_t u = start; u < start + count; u++) {
        unit_position(p, u, &up);
        m.total.depth = 0;
        m.total.w = (size_t)up.w;
        for (int64_t b = 0; b < p->nblocks; b++)
            ps_push(&m.total, partial_at(c, u * p->nblocks + b), c->k);
        store_unit(c, &m, &up, ps_finish(&m.total, c->k));
    }
}

// ---- float64 (see the header): the sum of one output's summands; in[k] is input k's element of
// its first summand, buf holds (nin + 1) chunks of doubles.
static double sum64_one(const og_reduce_plan *p, const char *const *in, double *buf) {
    double part[64], *vals = buf + p->nin * OG_RED_CHUNK;
    const double *x[OG_RED_MAX_IN];
    double *v[1] = {vals};
    int level[64], depth = 0;
    int64_t idx[OG_MAX_DIMS] = {0}, off[OG_RED_MAX_IN] = {0}, es[OG_RED_MAX_IN];
    for (int k = 0; k < p->nin; k++) es[k] = (int64_t)aclDataTypeSize(p->in_dtype[k]);
    for (int64_t r = 0; r < p->K;) {
        int64_t n = p->K - r < OG_RED_CHUNK ? p->K - r : OG_RED_CHUNK;
        // gather the chunk, row-major over the reduced dims: runs along the innermost one
        const int last = p->nred - 1;
        for (int64_t i = 0; i < n;) {
            int64_t run = last < 0 ? n - i : p->red[last] - idx[last];
            if (run > n - i) run = n - i;
            for (int k = 0; k < p->nin; k++)
                og_load_run64(in[k] + off[k] * es[k], p->in_dtype[k],
                              last < 0 ? 1 : p->red_in[k][last], buf + k * OG_RED_CHUNK + i, run);
            i += run;
            if (last < 0) continue;
            for (int k = 0; k < p->nin; k++) off[k] += run * p->red_in[k][last];
            if ((idx[last] += run) < p->red[last]) continue;
            for (int d = last; d >= 0; d--) { // the odometer's carry
                if (d < last) {
                    for (int k = 0; k < p->nin; k++) off[k] += p->red_in[k][d];
                    if (++idx[d] < p->red[d]) break;
                }
                for (int k = 0; k < p->nin; k++) off[k] -= idx[d] * p->red_in[k][d];
                idx[d] = 0;
            }
        }
        for (int k = 0; k < p->nin; k++) x[k] = buf + k * OG_RED_CHUNK;
        if (p->map64)
            p->map64((size_t)n, x, v, p->params);
        else
            memcpy(vals, x[0], (size_t)n * sizeof(double));
        double acc = -0.0; // (an all -0 sum stays -0, as in float)
        for (int64_t i = 0; i < n; i++) acc += vals[i];
        r += n;
        part[depth] = acc, level[depth++] = 0;
        while (depth >= 2 && level[depth - 1] == level[depth - 2])
            part[depth - 2] += part[depth - 1], level[depth - 2]++, depth--;
    }
    double total = depth > 0 ? part[depth - 1] : 0.0;
    for (int i = depth - 2; i >= 0; i--) total = part[i] + total;
    return total;
}

static void sum64_run(void *arg, int core, int slot) {
    const red_ctx *c = arg;
    const og_reduce_plan *p = c->p;
    int64_t start, count;
    split_range(p->M, p->core_num, core, &start, &count);
    double *buf = (double *)(c->workspace + (int64_t)slot * p->core_bytes);
    const char *base[OG_RED_MAX_IN] = {NULL}, *in[OG_RED_MAX_IN] = {NULL};
    // (over nothing, K = 0, the inputs are empty: their addresses may be NULL and are not read)
    for (int k = 0; k < p->nin && p->K > 0; k++) base[k] = og_executor_addr(c->e, p->in_slot[k]);
    char *out = og_executor_addr(c->e, p->out_slot);
    int64_t es = (int64_t)aclDataTypeSize(p->out_dtype);
    for (int64_t o = start; o < start + count; o++) {
        int64_t in_off[OG_RED_MAX_IN] = {0}, out_off = 0, rem = o;
        for (int d = p->nkept - 1; d >= 0; d--) {
            int64_t i = rem % p->kept[d];
            rem /= p->kept[d];
            for (int k = 0; k < p->nin; k++) in_off[k] += i * p->kept_in[k][d];
            out_off += i * p->kept_out[d];
        }
        for (int k = 0; k < p->nin && p->K > 0; k++)
            in[k] = base[k] + in_off[k] * (int64_t)aclDataTypeSize(p->in_dtype[k]);
        double v = sum64_one(p, in, buf);
        if (p->kind == OG_RED_MEAN) v /= (double)p->K; // (0 / 0: NaN over nothing, as in float)
        og_store_run64(out + out_off * es, p->out_dtype, 1, &v, 1);
    }
}

void og_reduce_run(const aclOpExecutor *e, const og_reduce_plan *p, char *scratch) {
    if (p->core_num == 0) return;
    if (p->f64) {
        red_ctx ctx = {p, e, scratch, NULL, NULL};
        og_parallel_for(p->core_num, p->slots, sum64_run, &ctx);
        return;
    }
    red_ctx ctx = {p, e, scratch, og_reduce_kernels_of(p->kind, p->isa), &og_convert[p->isa]};
    if (p->split_blocks) {
        og_parallel_for(p->core_num, p->slots, run_items, &ctx);
        og_parallel_for(p->combine_cores, p->combine_cores, run_combine, &ctx);
    } else {
        og_parallel_for(p->core_num, p->slots, run_units, &ctx);
    }
}

void og_reduce_prepare(const og_reduce_op *op, og_reduce_plan *p) {
    og_reduce_make_plan(op, og_num_threads(), p);
    p->isa = og_isa();
    p->map = op->map ? op->map[p->isa] : NULL;
    p->map64 = op->map64 ? op->map64[p->isa] : NULL;
}

// ---------------------------------------------------------------------------------------------
// Phase 1

// A reduction's memory rules (data pointers, self-overlap, overlap with the others).
static aclnnStatus check_memory(const char *op, const og_reduce_op *r, int nio, int nin_slots,
                                const aclTensor *const *io) {
    if (!r->out->data)
        return og_fail(ACLNN_ERR_PARAM_NULLPTR,
                       "%sGetWorkspaceSize: output %d has no data (NULL address)", op,
                       r->out_slot - nin_slots);
    int64_t k = 1;
    for (int d = 0; d < r->ndim; d++)
        if ((r->reduce_mask >> d) & 1u) k *= r->dims[d];
    for (int j = 0; j < r->nin && k > 0; j++)
        if (!r->in[j]->data)
            return og_fail(ACLNN_ERR_PARAM_NULLPTR,
                           "%sGetWorkspaceSize: input %d has no data (NULL address)", op,
                           r->in_slot[j]);
    int bad = og_tensor_self_overlap_dim(r->out);
    if (bad >= 0)
        return og_fail(
            ACLNN_ERR_PARAM_INVALID,
            "%sGetWorkspaceSize: output %d dim %d (size %lld, stride %lld) makes several "
            "elements share one memory location, which an output may not do",
            op, r->out_slot - nin_slots, bad, (long long)r->out->dims[bad],
            (long long)r->out->strides[bad]);
    for (int s = 0; s < nio; s++) {
        const aclTensor *t = io[s];
        if (!t || s == r->out_slot || t->numel == 0 || !t->data) continue;
        if (s >= nin_slots && s > r->out_slot) continue; // later outputs check against this one
        if (og_tensors_overlap(r->out, t))
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: output %d shares memory with %s %d: a reduction's "
                           "output may not overlap its inputs or another output",
                           op, r->out_slot - nin_slots, s < nin_slots ? "input" : "output",
                           s < nin_slots ? s : s - nin_slots);
    }
    return ACLNN_SUCCESS;
}

// A reduction that sums nothing (K = 1 and no reduced dims) of a map into an output of the full
// shape: the elementwise engine does it in fewer passes (the same values: one fp32 map, rounded
// once to the output dtype).
static bool map_only(const og_reduce_op *r, const og_reduce_plan *p) {
    bool same_shape = r->out->ndim == r->ndim;
    for (int d = 0; d < r->ndim && same_shape; d++) same_shape = r->out->dims[d] == r->dims[d];
    return p->K == 1 && p->nred == 0 && r->map && r->nin <= OG_EW_MAX_IN && same_shape &&
           (r->kind == OG_RED_SUM || r->kind == OG_RED_MEAN || r->kind == OG_RED_MAX ||
            r->kind == OG_RED_MIN);
}

aclnnStatus og_reduce_plan_op(const og_opdesc *op, int nplans, const og_reduce_op *ops, int nio,
                              int nin_slots, const aclTensor *const *io, uint64_t *workspaceSize,
                              aclOpExecutor **executor) {
    og_prog prog;
    og_prog_init(&prog, op, nin_slots, nio - nin_slots, io);
    for (int i = 0; i < nplans; i++) {
        const og_reduce_op *r = &ops[i];
        if (r->out->numel == 0) continue; // nothing to write
        aclnnStatus st = check_memory(op->name, r, nio, nin_slots, io);
        if (st != ACLNN_SUCCESS) {
            og_prog_discard(&prog);
            return st;
        }
        og_reduce_plan probe;
        og_reduce_make_plan(r, 1, &probe);
        if (!map_only(r, &probe)) {
            og_prog_reduce(&prog, r);
            continue;
        }
        bool f64 = sums_in_f64(r);
        // (with map16, operands all of one 16-bit dtype take the fused 16-bit path: the map's
        // fp32 result rounded once, as through fp32)
        og_ew_op ew = {.op = op,
                       .kernels = r->map,
                       .kernels16 = r->map16,
                       .kernels64 = r->map64,
                       .kernels_nt = r->map_nt,
                       .nin = r->nin,
                       .nout = 1,
                       .out = {r->out},
                       .slots = true,
                       .out_slot = {r->out_slot},
                       .params = r->params,
                       .params_size = r->params_size,
                       .compute_dtype = f64 ? ACL_DOUBLE : r->round_in};
        for (int k = 0; k < r->nin; k++) ew.in[k] = r->in[k], ew.in_slot[k] = r->in_slot[k];
        og_prog_map(&prog, &ew);
    }
    return og_prog_publish(&prog, workspaceSize, executor);
}
