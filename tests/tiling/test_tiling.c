/* Tiling-level tests: the pure host planners.
 *
 *  og_tiling_plan / og_tiling_core_range over many totals, core counts, block sizes, operand
 *  counts and cache budgets: exact coverage of [0, total) by contiguous, ordered core ranges,
 *  block-aligned core starts, balanced block counts (big cores first), one core when a tile
 *  holds everything, tile size and workspace formula.
 *
 *  og_ew_make_plan over aclTensors with dummy data: dim coalescing, broadcast strides, linear /
 *  direct / buffered operands per dtype, the non-temporal threshold, the rounding of outputs
 *  through the promoted dtype, and the workspace that phase 1 reports. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_elu.h"
#include "aclnnop/aclnn_leaky_relu.h"
#include "aclnnop/aclnn_mish.h"
#include "aclnnop/aclnn_mish_backward.h"
#include "engine/blocking.h"
#include "engine/elementwise.h"
#include "engine/rows.h"
#include "engine/tiling.h"
#include "opgrad/opgrad.h"
#include "ops/activation/mish/mish_kernel.h"
#include "ops/softmax/softmax_kernel.h"
#include "runtime/cpu.h"
#include "tensor/dtype.h"
#include "test.h"
#include "testutil.h"

// ---------------------------------------------------------------------------------------------
// og_tiling_plan

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Checks every property of one plan; returns the number of failed properties (and prints the
// first few, with the request).
static long g_plans_checked;

static int check_plan(og_tiling_request q, bool mark_elements) {
    og_tiling t = og_tiling_plan(q);
    g_plans_checked++;
    int bad = 0;
#define PROP(cond)                                                                                 \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            if (bad++ == 0)                                                                        \
                fprintf(                                                                           \
                    stderr,                                                                        \
                    "    total=%lld max_cores=%d budget=%lld buffered=%d operands=%d block=%lld: " \
                    "core_num=%d big=%d small_blocks=%lld tile=%lld buffer_bytes=%lld\n",          \
                    (long long)q.total, q.max_cores, (long long)q.cache_budget,                    \
                    q.buffered_operands, q.operands, (long long)q.block, t.core_num,               \
                    t.big_core_num, (long long)t.small_core_blocks, (long long)t.tile_elems,       \
                    (long long)t.buffer_bytes);                                                    \
            fprintf(stderr, "      violated: %s\n", #cond);                                        \
        }                                                                                          \
    } while (0)
    PROP(t.total == q.total);
    PROP(t.block == q.block);
    // tile: a positive multiple of block; the fp32 buffers of all operands fit the budget
    // (unless even one block does not fit, then exactly one block)
    PROP(t.tile_elems > 0 && t.tile_elems % q.block == 0);
    int64_t per_op = 4 * (int64_t)q.operands;
    if (q.cache_budget >= per_op * q.block) {
        PROP(t.tile_elems * per_op <= q.cache_budget);
        PROP((t.tile_elems + q.block) * per_op > q.cache_budget); // the largest such tile
    } else {
        PROP(t.tile_elems == q.block);
    }
    if (q.total == 0) {
        PROP(t.core_num == 0);
        return bad;
    }
    int64_t blocks = ceil_div(q.total, q.block);
    PROP(t.core_num >= 1);
    PROP(t.core_num <= blocks);
    // ops-nn: all cores (threads); a large job: up to OG_CORES_PER_THREAD ranges per thread, each
    // moving at least OG_MIN_CORE_BYTES (up to the rounding of blocks)
    int64_t threads = q.max_cores > 0 ? q.max_cores : 1;
    int64_t per_thread = 1;
    if (q.total > t.tile_elems && q.bytes_per_elem > 0 && threads > 1) { // one thread: one range
        while (per_thread < OG_CORES_PER_THREAD &&
               q.total * q.bytes_per_elem >= threads * (per_thread + 1) * OG_MIN_CORE_BYTES)
            per_thread++;
    }
    int64_t want = q.total <= t.tile_elems ? 1 : threads * per_thread;
    PROP(t.core_num == (want < blocks ? want : blocks));
    PROP(t.slots == (t.core_num < threads ? t.core_num : threads));
    PROP(t.big_core_num >= 0 && t.big_core_num < t.core_num);
    PROP(t.small_core_blocks * t.core_num + t.big_core_num == blocks);
    // workspace per slot: one 64-byte-rounded fp32 tile buffer per buffered operand
    PROP(t.buffer_bytes == (t.tile_elems * 4 + 63) / 64 * 64 * q.buffered_operands);
    PROP(t.buffer_bytes % 64 == 0);
    // ranges: contiguous from 0 to total, in core order, block-aligned starts, balanced
    int64_t next = 0, min_blocks = INT64_MAX, max_blocks = 0;
    for (int c = 0; c < t.core_num; c++) {
        int64_t s = -1, n = -1;
        og_tiling_core_range(&t, c, &s, &n);
        PROP(s == next);
        PROP(n > 0);
        PROP(s % q.block == 0);
        PROP(s + n <= q.total);
        int64_t nb = ceil_div(n, q.block);
        if (c < t.big_core_num)
            PROP(nb == t.small_core_blocks + 1);
        else if (c < t.core_num - 1 || q.total % q.block == 0)
            PROP(nb == t.small_core_blocks);
        if (c < t.core_num - 1) PROP(n % q.block == 0); // only the last core ends mid-block
        min_blocks = nb < min_blocks ? nb : min_blocks;
        max_blocks = nb > max_blocks ? nb : max_blocks;
        next = s + n;
        if (bad) break;
    }
    PROP(next == q.total);
    PROP(max_blocks - min_blocks <= 1);
    if (mark_elements && bad == 0) { // literally: every element exactly once
        unsigned char *seen = calloc((size_t)q.total, 1);
        for (int c = 0; c < t.core_num; c++) {
            int64_t s, n;
            og_tiling_core_range(&t, c, &s, &n);
            for (int64_t i = s; i < s + n; i++) seen[i]++;
        }
        int64_t wrong = 0;
        for (int64_t i = 0; i < q.total; i++) wrong += seen[i] != 1;
        PROP(wrong == 0);
        free(seen);
    }
#undef PROP
    return bad;
}

static int totals_list(int64_t *out, int cap) {
    int n = 0;
    int64_t base[] = {0,
                      1,
                      2,
                      3,
                      5,
                      7,
                      13,
                      15,
                      16,
                      17,
                      31,
                      32,
                      33,
                      63,
                      64,
                      65,
                      97,
                      127,
                      128,
                      129,
                      1000,
                      1009,
                      2039,
                      2048,
                      2720,
                      2730,
                      4093,
                      4095,
                      4096,
                      4097,
                      6151,
                      8191,
                      8192,
                      8193,
                      10007,
                      65521,
                      65536,
                      65537,
                      104729,
                      999983,
                      1000000,
                      1048573,
                      1048576,
                      1048577,
                      16777213,
                      16777216,
                      16777217,
                      (1 << 26) - 1,
                      1 << 26,
                      (1 << 26) + 1,
                      (1 << 26) + 3};
    for (size_t i = 0; i < sizeof base / sizeof *base && n < cap; i++) out[n++] = base[i];
    for (int k = 2; k <= 26 && n + 2 < cap; k++) {
        out[n++] = ((int64_t)1 << k) - 1;
        out[n++] = ((int64_t)1 << k) + 1;
    }
    return n;
}

static void test_tiling_plans(void) {
    int64_t totals[256];
    int nt = totals_list(totals, 256);
    static const int cores[] = {1, 2, 3, 5, 7, 8, 64};
    static const int64_t blocks[] = {16, 32, 64};
    static const int64_t budgets[] = {32 * 1024, 48 * 1024, 1 << 20, 4096, 1000, 100};
    long failures = 0;
    g_plans_checked = 0;
    for (int ti = 0; ti < nt; ti++)
        for (size_t ci = 0; ci < sizeof cores / sizeof *cores; ci++)
            for (size_t bi = 0; bi < sizeof blocks / sizeof *blocks; bi++)
                for (int ops = 2; ops <= 4; ops++)
                    for (int buffered = 0; buffered <= ops; buffered++)
                        for (size_t gi = 0; gi < sizeof budgets / sizeof *budgets; gi++) {
                            og_tiling_request q = {.total = totals[ti],
                                                   .max_cores = cores[ci],
                                                   .cache_budget = budgets[gi],
                                                   .buffered_operands = buffered,
                                                   .operands = ops,
                                                   .block = blocks[bi],
                                                   // no range cutting, 2-byte and 4-byte operands
                                                   .bytes_per_elem = (gi % 3) * 2 * ops};
                            // each tile boundary +-1 as well
                            int64_t tile = og_tiling_plan(q).tile_elems;
                            int64_t variants[] = {
                                totals[ti],     tile - 1,          tile,
                                tile + 1,       tile - blocks[bi], tile + blocks[bi] - 1,
                                blocks[bi] - 1, blocks[bi] + 1,    cores[ci] * tile + 1};
                            for (size_t vi = 0; vi < (ti == 0 ? 9u : 1u); vi++) {
                                q.total = variants[vi];
                                if (q.total < 0) continue;
                                failures += check_plan(q, q.total <= 200000) != 0;
                                if (failures > 20) goto done;
                            }
                        }
done:
    printf("  %ld plans checked\n", g_plans_checked);
    CHECKF(failures == 0, "%ld plans violate a property", failures);
}

// The total <= tile rule, and what happens just past it, for the engine's real budget.
static void test_tiling_single_core_rule(void) {
    for (int ops = 2; ops <= 4; ops++) {
        og_tiling_request q = {.total = 1,
                               .max_cores = 8,
                               .cache_budget = 32 * 1024,
                               .buffered_operands = ops,
                               .operands = ops,
                               .block = 16};
        int64_t tile = og_tiling_plan(q).tile_elems;
        CHECK_EQ(tile, 32 * 1024 / (4 * ops) / 16 * 16);
        q.total = tile;
        og_tiling t = og_tiling_plan(q);
        CHECK_EQ(t.core_num, 1);
        int64_t s, n;
        og_tiling_core_range(&t, 0, &s, &n);
        CHECK_EQ(s, 0);
        CHECK_EQ(n, tile);
        q.total = tile + 1;
        t = og_tiling_plan(q);
        CHECK_EQ(t.core_num, 8);
        CHECK_EQ(t.small_core_blocks * 8 + t.big_core_num, ceil_div(tile + 1, 16));
    }
    // max_cores < 1 is treated as one core
    og_tiling t = og_tiling_plan((og_tiling_request){.total = 100000,
                                                     .max_cores = 0,
                                                     .cache_budget = 32768,
                                                     .buffered_operands = 2,
                                                     .operands = 2,
                                                     .block = 16});
    CHECK_EQ(t.core_num, 1);
}

// ---------------------------------------------------------------------------------------------
// og_ew_make_plan

static char g_dummy[1 << 16]; // non-NULL data for the tensors (never read by the planner)

static aclTensor *mk(aclDataType dt, int ndim, const int64_t *dims, const int64_t *strides) {
    int64_t storage = 1;
    if (strides) {
        int64_t last = 0;
        for (int d = 0; d < ndim; d++) last += strides[d] * (dims[d] - 1);
        storage = last + 1;
    } else {
        for (int d = 0; d < ndim; d++) storage *= dims[d];
    }
    aclTensor *t =
        aclCreateTensor(dims, (uint64_t)ndim, dt, strides, 0, ACL_FORMAT_ND, &storage, 1, g_dummy);
    if (!t) fprintf(stderr, "aclCreateTensor failed: %s\n", aclGetRecentErrMsg());
    return t;
}

typedef struct opspec {
    int nin, nout;
    const aclTensor *in[4];
    const aclTensor *out[2];
    aclDataType compute;
    const og_ew_compute16_fn (*kernels16)[2]; // NULL: no fused 16-bit path
    const og_ew_compute_fn *kernels_nt;       // NULL: no non-temporal fp32 kernels
    bool compute_bound;
    bool light;
} opspec;

static og_ew_plan plan_of(opspec s, int max_cores, int64_t nt) {
    og_ew_op op = {.kernels = og_mish_bwd_kernels,
                   .kernels16 = s.kernels16,
                   .kernels_nt = s.kernels_nt,
                   .compute_bound = s.compute_bound,
                   .light = s.light,
                   .nin = s.nin,
                   .nout = s.nout,
                   .compute_dtype = s.compute};
    for (int k = 0; k < s.nin; k++) op.in[k] = s.in[k];
    for (int k = 0; k < s.nout; k++) op.out[k] = s.out[k];
    og_ew_plan p;
    memset(&p, 0xcd, sizeof p); // the planner must fill everything it reports
    og_ew_make_plan(&op, max_cores, nt, &p);
    return p;
}

static void check_tiling_of(const og_ew_plan *p, int operands, int buffered, int64_t block) {
    CHECK_EQ(p->tiling.block, block);
    int64_t budget =
        buffered ? OG_EW_TILE_BUDGET : 2 * OG_EW_TILE_BUDGET; // no buffers: longer tiles
    int64_t tile = (budget / (4 * operands)) / block * block;
    CHECK_EQ(p->tiling.tile_elems, tile);
    CHECK_EQ(p->tiling.buffer_bytes, (tile * 4 + 63) / 64 * 64 * buffered);
    int64_t total = 1;
    for (int d = 0; d < p->ndim; d++) total *= p->dims[d];
    CHECK_EQ(p->tiling.total, total);
}

static void test_plan_contiguous_coalesces(void) {
    static const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    int64_t dims[4] = {2, 3, 4, 5};
    for (int d = 0; d < 3; d++) {
        aclDataType dt = dts[d];
        aclTensor *g = mk(dt, 4, dims, NULL), *x = mk(dt, 4, dims, NULL),
                  *t = mk(dt, 4, dims, NULL);
        aclTensor *o = mk(dt, 4, dims, NULL);
        bool f32 = dt == ACL_FLOAT;
        // backward (2 inputs) and the tanhx branch (3 inputs)
        for (int nin = 2; nin <= 3; nin++) {
            opspec s = {.nin = nin, .nout = 1, .in = {g, x, t}, .out = {o}, .compute = dt};
            og_ew_plan p = plan_of(s, 4, 0);
            CHECK_EQ(p.ndim, 1);
            CHECK_EQ(p.dims[0], 120);
            CHECK_EQ(p.nin, nin);
            CHECK_EQ(p.nout, 1);
            CHECK(!p.stream_out);
            for (int k = 0; k < nin; k++) {
                CHECK(p.in[k].linear);
                CHECK_EQ(p.in[k].strides[0], 1);
                CHECK_EQ(p.in[k].dtype, dt);
                CHECK_EQ(p.in[k].slot, k);
                CHECKF(p.in[k].direct == f32, "%s input %d direct=%d", og_dtype_name(dt), k,
                       p.in[k].direct);
            }
            CHECK(p.out[0].linear);
            CHECK_EQ(p.out[0].slot, nin);
            CHECK_EQ(p.out[0].round_via, ACL_FLOAT);
            CHECKF(p.out[0].direct == f32, "%s output direct=%d", og_dtype_name(dt),
                   p.out[0].direct);
            check_tiling_of(&p, nin + 1, f32 ? 0 : nin + 1, f32 ? 16 : 32);
            // 120 elements fit one tile
            CHECK_EQ(p.tiling.core_num, 1);
        }
        // forward, with and without tanhx
        for (int nout = 1; nout <= 2; nout++) {
            opspec s = {.nin = 1, .nout = nout, .in = {x}, .out = {o, t}, .compute = dt};
            og_ew_plan p = plan_of(s, 4, 0);
            CHECK_EQ(p.ndim, 1);
            CHECK_EQ(p.dims[0], 120);
            for (int k = 0; k < nout; k++) CHECK(p.out[k].linear && p.out[k].direct == f32);
            check_tiling_of(&p, 1 + nout, f32 ? 0 : 1 + nout, f32 ? 16 : 32);
        }
        aclDestroyTensor(g), aclDestroyTensor(x), aclDestroyTensor(t), aclDestroyTensor(o);
    }
}

static void test_plan_size1_dims_dropped(void) {
    int64_t dims[6] = {1, 7, 1, 1, 9, 1};
    aclTensor *x = mk(ACL_FLOAT, 6, dims, NULL), *o = mk(ACL_FLOAT, 6, dims, NULL);
    opspec s = {.nin = 1, .nout = 1, .in = {x}, .out = {o}, .compute = ACL_FLOAT};
    og_ew_plan p = plan_of(s, 2, 0);
    CHECK_EQ(p.ndim, 1);
    CHECK_EQ(p.dims[0], 63);
    CHECK(p.in[0].linear && p.out[0].linear);
    // a single element (every dim 1, and rank 0)
    int64_t ones[3] = {1, 1, 1};
    aclTensor *x1 = mk(ACL_FLOAT, 3, ones, NULL), *o1 = mk(ACL_FLOAT, 3, ones, NULL);
    s = (opspec){.nin = 1, .nout = 1, .in = {x1}, .out = {o1}, .compute = ACL_FLOAT};
    p = plan_of(s, 2, 0);
    CHECK_EQ(p.ndim, 1);
    CHECK_EQ(p.dims[0], 1);
    CHECK(p.in[0].linear && p.in[0].direct);
    CHECK_EQ(p.tiling.total, 1);
    CHECK_EQ(p.tiling.core_num, 1);
    aclTensor *x0 = mk(ACL_FLOAT, 0, NULL, NULL), *o0 = mk(ACL_FLOAT, 0, NULL, NULL);
    s = (opspec){.nin = 1, .nout = 1, .in = {x0}, .out = {o0}, .compute = ACL_FLOAT};
    p = plan_of(s, 2, 0);
    CHECK_EQ(p.ndim, 1);
    CHECK_EQ(p.dims[0], 1);
    CHECK_EQ(p.tiling.total, 1);
    aclDestroyTensor(x), aclDestroyTensor(o), aclDestroyTensor(x1), aclDestroyTensor(o1);
    aclDestroyTensor(x0), aclDestroyTensor(o0);
}

static void test_plan_broadcast(void) {
    static const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    for (int d = 0; d < 3; d++) {
        aclDataType dt = dts[d];
        int64_t od[3] = {4, 6, 5}, rowd[1] = {5}, cold[3] = {4, 1, 1}, midd[3] = {1, 6, 1};
        aclTensor *o = mk(dt, 3, od, NULL), *g = mk(dt, 3, od, NULL);
        aclTensor *row = mk(dt, 1, rowd, NULL), *col = mk(dt, 3, cold, NULL),
                  *mid = mk(dt, 3, midd, NULL);
        // x = [5] broadcast over [4,6,5]: leading dims merge (stride 0 for x), last dim stride 1
        opspec s = {.nin = 2, .nout = 1, .in = {g, row}, .out = {o}, .compute = dt};
        og_ew_plan p = plan_of(s, 3, 0);
        CHECK_EQ(p.ndim, 2);
        CHECK_EQ(p.dims[0], 24);
        CHECK_EQ(p.dims[1], 5);
        CHECK_EQ(p.in[0].strides[0], 5);
        CHECK_EQ(p.in[0].strides[1], 1);
        CHECK(p.in[0].linear);
        CHECK_EQ(p.in[0].direct, dt == ACL_FLOAT);
        CHECK_EQ(p.in[1].strides[0], 0);
        CHECK_EQ(p.in[1].strides[1], 1);
        CHECK(!p.in[1].linear && !p.in[1].direct);
        CHECK(p.out[0].linear);
        check_tiling_of(&p, 3, dt == ACL_FLOAT ? 1 : 3, dt == ACL_FLOAT ? 16 : 32);
        // gradOutput [4,1,1] over [4,6,5]: stride 0 on the (merged) inner dims
        s = (opspec){.nin = 2, .nout = 1, .in = {col, g}, .out = {o}, .compute = dt};
        p = plan_of(s, 3, 0);
        CHECK_EQ(p.ndim, 2);
        CHECK_EQ(p.dims[0], 4);
        CHECK_EQ(p.dims[1], 30);
        CHECK_EQ(p.in[0].strides[0], 1);
        CHECK_EQ(p.in[0].strides[1], 0);
        CHECK(!p.in[0].linear);
        CHECK(p.in[1].linear);
        // [1,6,1] over [4,6,5]: three dims, stride 0 outside and inside
        s = (opspec){.nin = 3, .nout = 1, .in = {g, mid, g}, .out = {o}, .compute = dt};
        p = plan_of(s, 3, 0);
        CHECK_EQ(p.ndim, 3);
        CHECK_EQ(p.in[1].strides[0], 0);
        CHECK_EQ(p.in[1].strides[1], 1);
        CHECK_EQ(p.in[1].strides[2], 0);
        CHECK(!p.in[1].linear && !p.in[1].direct);
        CHECK(p.in[0].linear && p.in[2].linear);
        check_tiling_of(&p, 4, dt == ACL_FLOAT ? 1 : 4, dt == ACL_FLOAT ? 16 : 32);
        CHECK(!p.in[1].splat);
        // a 0-d gradOutput (after a mean loss) and a [1,1,1] one: one value, a splat input; with
        // fused 16-bit kernels a 16-bit plan runs on the data (no tile buffer), an fp32 one keeps
        // a buffer, filled once per launch
        aclTensor *zero_d = mk(dt, 0, NULL, NULL), *ones = mk(dt, 3, (int64_t[3]){1, 1, 1}, NULL);
        for (int v = 0; v < 2; v++) {
            s = (opspec){.nin = 2,
                         .nout = 1,
                         .in = {v ? ones : zero_d, g},
                         .out = {o},
                         .compute = dt,
                         .kernels16 = og_mish_bwd_kernels16};
            p = plan_of(s, 3, 0);
            CHECK_EQ(p.ndim, 1);
            CHECK_EQ(p.dims[0], 120);
            CHECK_EQ(p.in[0].strides[0], 0);
            CHECK(p.in[0].splat && !p.in[0].linear && !p.in[0].rowwise && !p.in[0].direct);
            CHECK(!p.in[1].splat && !p.out[0].splat);
            CHECK_EQ(p.fused16, dt != ACL_FLOAT);
            CHECK_EQ(p.tiling.buffer_bytes == 0, dt != ACL_FLOAT);
        }
        // a row and a column are not one value
        s = (opspec){.nin = 2, .nout = 1, .in = {row, col}, .out = {o}, .compute = dt};
        p = plan_of(s, 3, 0);
        CHECK(!p.in[0].splat && !p.in[1].splat);
        aclDestroyTensor(o), aclDestroyTensor(g), aclDestroyTensor(row), aclDestroyTensor(col);
        aclDestroyTensor(mid), aclDestroyTensor(zero_d), aclDestroyTensor(ones);
    }
}

static void test_plan_transposed_not_linear(void) {
    int64_t dims[2] = {8, 12}, tstr[2] = {1, 8}, padded[2] = {16, 1};
    for (int d = 0; d < 2; d++) {
        aclDataType dt = d ? ACL_FLOAT16 : ACL_FLOAT;
        aclTensor *o = mk(dt, 2, dims, NULL), *g = mk(dt, 2, dims, NULL);
        aclTensor *xt = mk(dt, 2, dims, tstr), *xp = mk(dt, 2, dims, padded);
        opspec s = {.nin = 2, .nout = 1, .in = {g, xt}, .out = {o}, .compute = dt};
        og_ew_plan p = plan_of(s, 2, 0);
        CHECK_EQ(p.ndim, 2);
        CHECK(!p.in[1].linear);
        CHECK(!p.in[1].direct); // even in fp32: it needs a gather into a buffer
        CHECK_EQ(p.in[1].strides[0], 1);
        CHECK_EQ(p.in[1].strides[1], 8);
        CHECK(p.in[0].linear && p.out[0].linear);
        CHECK_EQ(p.in[0].direct, dt == ACL_FLOAT);
        check_tiling_of(&p, 3, dt == ACL_FLOAT ? 1 : 3, dt == ACL_FLOAT ? 16 : 32);
        // rows padded to 16: not linear either; the output transposed (dense): the plan walks
        // it in memory order (dims [12, 8]), so it is linear and the contiguous g is not
        s = (opspec){.nin = 2, .nout = 1, .in = {g, xp}, .out = {xt}, .compute = dt};
        p = plan_of(s, 2, 0);
        CHECK_EQ(p.ndim, 2);
        CHECK_EQ(p.dims[0], 12);
        CHECK(!p.in[1].linear && !p.in[1].direct);
        CHECK_EQ(p.in[1].strides[0], 1);
        CHECK_EQ(p.in[1].strides[1], 16);
        CHECK(!p.in[0].linear);
        CHECK_EQ(p.in[0].strides[0], 1);
        CHECK_EQ(p.in[0].strides[1], 12);
        CHECK(p.out[0].linear);
        CHECK_EQ(p.out[0].direct, dt == ACL_FLOAT);
        aclDestroyTensor(o), aclDestroyTensor(g), aclDestroyTensor(xt), aclDestroyTensor(xp);
    }
}

// An NCHW-shaped view in channels-last layout: the plan follows the output's memory order, so
// channels-last in and out is one linear dim (read and written in place in fp32), and a
// contiguous input against a channels-last output is the one gathered.
static void test_plan_channels_last(void) {
    int64_t dims[4] = {2, 3, 4, 5}, cl[4] = {60, 1, 15, 3};
    for (int d = 0; d < 2; d++) {
        aclDataType dt = d ? ACL_BF16 : ACL_FLOAT;
        aclTensor *x = mk(dt, 4, dims, cl), *y = mk(dt, 4, dims, cl), *c = mk(dt, 4, dims, NULL);
        opspec s = {.nin = 1, .nout = 1, .in = {x}, .out = {y}, .compute = dt};
        og_ew_plan p = plan_of(s, 2, 0);
        CHECK_EQ(p.ndim, 1);
        CHECK_EQ(p.dims[0], 120);
        CHECK(p.in[0].linear && p.out[0].linear);
        CHECK_EQ(p.in[0].direct, dt == ACL_FLOAT);
        s = (opspec){.nin = 2, .nout = 1, .in = {x, c}, .out = {y}, .compute = dt};
        p = plan_of(s, 2, 0);
        CHECK(p.in[0].linear && p.out[0].linear && !p.in[1].linear);
        CHECK_EQ(p.in[1].strides[p.ndim - 1], 20); // C is innermost: stride H * W in NCHW
        aclDestroyTensor(x), aclDestroyTensor(y), aclDestroyTensor(c);
    }
}

static void test_plan_mixed_dtypes(void) {
    int64_t dims[1] = {1000};
    aclTensor *g32 = mk(ACL_FLOAT, 1, dims, NULL), *x16 = mk(ACL_FLOAT16, 1, dims, NULL);
    aclTensor *o32 = mk(ACL_FLOAT, 1, dims, NULL), *o16 = mk(ACL_FLOAT16, 1, dims, NULL);
    aclTensor *xb = mk(ACL_BF16, 1, dims, NULL);
    // fp32 gradOutput, fp16 self -> fp32 compute, fp32 gradInput: g and out direct, x buffered;
    // the block follows the smallest element (fp16: 32)
    opspec s = {.nin = 2, .nout = 1, .in = {g32, x16}, .out = {o32}, .compute = ACL_FLOAT};
    og_ew_plan p = plan_of(s, 2, 0);
    CHECK(p.in[0].direct && !p.in[1].direct && p.out[0].direct);
    CHECK_EQ(p.out[0].round_via, ACL_FLOAT);
    check_tiling_of(&p, 3, 1, 32);
    // fp16 inputs, fp32 gradInput: the result is rounded through fp16 first, so the output is
    // buffered even though it is linear fp32
    s = (opspec){.nin = 2, .nout = 1, .in = {x16, x16}, .out = {o32}, .compute = ACL_FLOAT16};
    p = plan_of(s, 2, 0);
    CHECK_EQ(p.out[0].round_via, ACL_FLOAT16);
    CHECK(p.out[0].linear && !p.out[0].direct);
    check_tiling_of(&p, 3, 3, 32);
    s = (opspec){.nin = 2, .nout = 1, .in = {xb, xb}, .out = {o32}, .compute = ACL_BF16};
    p = plan_of(s, 2, 0);
    CHECK_EQ(p.out[0].round_via, ACL_BF16);
    CHECK(!p.out[0].direct);
    // fp32 compute, fp16 output: stored rounding only (no round_via)
    s = (opspec){.nin = 2, .nout = 1, .in = {g32, g32}, .out = {o16}, .compute = ACL_FLOAT};
    p = plan_of(s, 2, 0);
    CHECK_EQ(p.out[0].round_via, ACL_FLOAT);
    CHECK(p.in[0].direct && p.in[1].direct && !p.out[0].direct);
    check_tiling_of(&p, 3, 1, 32);
    aclDestroyTensor(g32), aclDestroyTensor(x16), aclDestroyTensor(o32), aclDestroyTensor(o16);
    aclDestroyTensor(xb);
}

// The non-temporal threshold: stream_out from out_bytes >= threshold (0 = off); an fp32 output
// then goes through a buffer (CopyOut streams it), inputs stay direct; unless the operation has
// non-temporal fp32 kernels, which then write the output in place (nt_in_place). A compute-bound
// operation never streams.
static void test_plan_nt_threshold(void) {
    static const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    int64_t n = 1 << 20;
    int64_t dims[1] = {n};
    for (int d = 0; d < 3; d++) {
        aclDataType dt = dts[d];
        int64_t bytes = n * (dt == ACL_FLOAT ? 4 : 2);
        aclTensor *g = mk(dt, 1, dims, NULL), *x = mk(dt, 1, dims, NULL),
                  *t = mk(dt, 1, dims, NULL);
        aclTensor *o = mk(dt, 1, dims, NULL);
        for (int nin = 2; nin <= 3; nin++)
            for (int with_nt = 0; with_nt <= 1; with_nt++) {
                opspec s = {.nin = nin,
                            .nout = 1,
                            .in = {g, x, t},
                            .out = {o},
                            .compute = dt,
                            .kernels_nt = with_nt ? og_mish_bwd_nt_kernels : NULL};
                int64_t thresholds[] = {0, bytes - 1, bytes, bytes + 1, -5};
                for (int k = 0; k < 5; k++) {
                    og_ew_plan p = plan_of(s, 7, thresholds[k]);
                    bool stream = thresholds[k] > 0 && bytes >= thresholds[k];
                    CHECKF(p.stream_out == stream, "%s threshold %lld: stream_out=%d",
                           og_dtype_name(dt), (long long)thresholds[k], p.stream_out);
                    bool in_place = stream && with_nt && dt == ACL_FLOAT;
                    CHECK_EQ(p.nt_in_place, in_place);
                    CHECK(p.out[0].linear);
                    CHECK_EQ(p.out[0].direct, dt == ACL_FLOAT && (!stream || in_place));
                    for (int i = 0; i < nin; i++) CHECK_EQ(p.in[i].direct, dt == ACL_FLOAT);
                    int buffered = dt == ACL_FLOAT ? (stream && !in_place ? 1 : 0) : nin + 1;
                    check_tiling_of(&p, nin + 1, buffered, dt == ACL_FLOAT ? 16 : 32);
                    CHECK_EQ(p.tiling.slots, 7); // 7 threads, each with a few ranges
                    CHECK(p.tiling.core_num > 7 && p.tiling.core_num % 7 == 0);
                }
            }
        aclDestroyTensor(g), aclDestroyTensor(x), aclDestroyTensor(t), aclDestroyTensor(o);
    }
    // a strided fp32 output past the threshold is written through a buffer even with NT kernels
    int64_t dims2[2] = {1024, 1024}, strides2[2] = {1040, 1}; // padded rows
    aclTensor *a = mk(ACL_FLOAT, 2, dims2, NULL), *b = mk(ACL_FLOAT, 2, dims2, NULL);
    aclTensor *ot = mk(ACL_FLOAT, 2, dims2, strides2);
    opspec s2 = {.nin = 2,
                 .nout = 1,
                 .in = {a, b},
                 .out = {ot},
                 .compute = ACL_FLOAT,
                 .kernels_nt = og_mish_bwd_nt_kernels};
    og_ew_plan p2 = plan_of(s2, 2, 1 << 20);
    CHECK(p2.stream_out && !p2.nt_in_place && !p2.out[0].direct);
    // a compute-bound operation never streams: its output is written in place with normal stores
    s2.out[0] = a, s2.compute_bound = true;
    for (int with_nt = 0; with_nt <= 1; with_nt++) {
        s2.kernels_nt = with_nt ? og_mish_bwd_nt_kernels : NULL;
        og_ew_plan p3 = plan_of(s2, 2, 1);
        CHECK(!p3.stream_out && !p3.nt_in_place && p3.out[0].direct);
    }
    aclDestroyTensor(a), aclDestroyTensor(b), aclDestroyTensor(ot);
    // the default threshold is 16 MiB (unless OPGRAD_NT_BYTES is set)
    if (!getenv("OPGRAD_NT_BYTES")) CHECK_EQ(og_ew_nt_threshold(), 16 << 20);
}

// Which operators are compute-bound is the operators' choice: with every output past the NT size
// (OPGRAD_NT_BYTES=1), ELU (no non-temporal kernel, compute-bound) still writes its fp32 output in
// place (workspace 0); LeakyRelu (memory-bound, non-temporal kernel) streams it in place too, and
// Mish's backward through a buffer when the output is strided.
static void test_plan_compute_bound_ops(void) {
    enum { N = 1 << 16 };
    float *x = calloc(N, 4), *y = calloc(2 * N, 4);
    int64_t d[1] = {N}, st2[1] = {2}, sd[1] = {2 * N};
    aclTensor *tx = mk(ACL_FLOAT, 1, d, NULL), *ty = mk(ACL_FLOAT, 1, d, NULL);
    aclTensor *ts = aclCreateTensor(d, 1, ACL_FLOAT, st2, 0, ACL_FORMAT_ND, sd, 1, y);
    float one = 1.0f;
    aclScalar *a = aclCreateScalar(&one, ACL_FLOAT);
    setenv("OPGRAD_NT_BYTES", "1", 1);
    uint64_t ws[3] = {7, 7, 0};
    aclOpExecutor *ex[3] = {0};
    CHECK_EQ(aclnnEluGetWorkspaceSize(tx, a, a, a, ty, &ws[0], &ex[0]), ACLNN_SUCCESS);
    CHECK_EQ(aclnnLeakyReluGetWorkspaceSize(tx, a, ty, &ws[1], &ex[1]), ACLNN_SUCCESS);
    CHECK_EQ(aclnnMishBackwardGetWorkspaceSize(tx, tx, ts, &ws[2], &ex[2]), ACLNN_SUCCESS);
    unsetenv("OPGRAD_NT_BYTES");
    CHECKF(ws[0] == 0 && ws[1] == 0 && ws[2] > 0,
           "workspaces: Elu %llu, LeakyRelu %llu, "
           "MishBackward into a strided output %llu",
           (unsigned long long)ws[0], (unsigned long long)ws[1], (unsigned long long)ws[2]);
    for (int k = 0; k < 3; k++) aclDestroyAclOpExecutor(ex[k]);
    aclDestroyScalar(a);
    aclDestroyTensor(tx), aclDestroyTensor(ty), aclDestroyTensor(ts);
    free(x), free(y);
}

// A compute-bound unary map on 16-bit data of at least 16384 elements reads its results from a
// table of the fused kernel's 65,536 results (og_ew_prepare), made once and shared by later plans;
// not below that size, not for two inputs, not for a map that is not compute-bound, not in fp32,
// not with OPGRAD_LUT16=0 or OPGRAD_FUSED16=0.
static og_ew_plan prepared(aclDataType dt, int64_t n, int nin, bool compute_bound) {
    int64_t d[1] = {n};
    aclTensor *a = mk(dt, 1, d, NULL), *b = mk(dt, 1, d, NULL), *o = mk(dt, 1, d, NULL);
    og_ew_op op = {.kernels = nin == 1 ? og_mish_fwd_kernels : og_mish_bwd_kernels,
                   .kernels16 = nin == 1 ? og_mish_fwd_kernels16 : og_mish_bwd_kernels16,
                   .compute_bound = compute_bound,
                   .nin = nin,
                   .nout = 1,
                   .in = {a, b},
                   .out = {o},
                   .compute_dtype = dt};
    og_ew_plan p;
    og_ew_prepare(&op, &p);
    aclDestroyTensor(a), aclDestroyTensor(b), aclDestroyTensor(o);
    return p;
}

static void test_plan_lut16(void) {
    static const aclDataType dts[] = {ACL_BF16, ACL_FLOAT16};
    for (int d = 0; d < 2; d++) {
        og_ew_plan p = prepared(dts[d], 16384, 1, true);
        CHECK(p.fused16 && p.lut16 != NULL);
        if (!p.lut16) continue;
        // the table is the kernel's result for every encoding, bit for bit
        uint16_t *enc = malloc(65536 * 2), *want = malloc(65536 * 2);
        for (int i = 0; i < 65536; i++) enc[i] = (uint16_t)i;
        const uint16_t *in[1] = {enc};
        uint16_t *out[1] = {want};
        p.compute16(65536, in, out, p.params, false);
        CHECK(memcmp(want, p.lut16, 65536 * 2) == 0);
        free(enc), free(want);
        CHECK(prepared(dts[d], 1 << 20, 1, true).lut16 == p.lut16); // made once
        CHECK(prepared(dts[d], 16383, 1, true).lut16 == NULL);
        CHECK(prepared(dts[d], 16384, 2, true).lut16 == NULL);
        CHECK(prepared(dts[d], 16384, 1, false).lut16 == NULL);
        setenv("OPGRAD_LUT16", "0", 1);
        CHECK(prepared(dts[d], 16384, 1, true).lut16 == NULL);
        unsetenv("OPGRAD_LUT16");
        setenv("OPGRAD_FUSED16", "0", 1);
        CHECK(prepared(dts[d], 16384, 1, true).lut16 == NULL);
        unsetenv("OPGRAD_FUSED16");
    }
    CHECK(prepared(ACL_FLOAT, 16384, 1, true).lut16 == NULL);
}

// A light fp32 map takes the 256-bit kernels from og_size_gates' ymm_stream_bytes of operands per
// thread (set where the CPU halves 512-bit operations): og_ew_prepare plans it at the AVX2 level
// at most. Not below the gate, not with the gate 0, not past the NT size, not for a map that is
// not light, not in bf16 / fp16 (fused 16-bit kernels) or float64.
static void test_plan_ymm_stream(void) {
    og_size_gates saved = og_size_gates_get(), gates = saved;
    int64_t n = 3 << 16, dims[1] = {n};
    for (int d = 0; d < 3; d++) {
        aclDataType dt = d == 0 ? ACL_FLOAT : d == 1 ? ACL_BF16 : ACL_DOUBLE;
        aclTensor *a = mk(dt, 1, dims, NULL), *b = mk(dt, 1, dims, NULL),
                  *o = mk(dt, 1, dims, NULL);
        for (int light = 0; light <= 1; light++)
            for (int cores = 1; cores <= 3; cores++) {
                int64_t per_thread = n / cores * 3 * (int64_t)aclDataTypeSize(dt); // a, b, o
                int64_t gate_at[] = {0, per_thread, per_thread + 1, 1};
                for (int k = 0; k < 4; k++) {
                    gates.ymm_stream_bytes = gate_at[k];
                    og_size_gates_set(&gates);
                    opspec s = {.nin = 2,
                                .nout = 1,
                                .in = {a, b},
                                .out = {o},
                                .compute = dt,
                                .kernels16 = og_mish_bwd_kernels16,
                                .light = light};
                    bool want =
                        light && dt == ACL_FLOAT && gate_at[k] > 0 && per_thread >= gate_at[k];
                    CHECKF(plan_of(s, cores, 0).ymm_stream == want,
                           "%s light %d, %d cores, gate %lld", og_dtype_name(dt), light, cores,
                           (long long)gate_at[k]);
                    if (want) CHECK(!plan_of(s, cores, n * 4).ymm_stream); // past the NT size
                }
            }
        aclDestroyTensor(a), aclDestroyTensor(b), aclDestroyTensor(o);
    }
    // og_ew_prepare: the AVX2 kernels (or the level below, where the cap is lower)
    aclTensor *a = mk(ACL_FLOAT, 1, dims, NULL), *o = mk(ACL_FLOAT, 1, dims, NULL);
    og_ew_op op = {.kernels = og_mish_bwd_kernels,
                   .light = true,
                   .nin = 2,
                   .nout = 1,
                   .in = {a, a},
                   .out = {o},
                   .compute_dtype = ACL_FLOAT};
    for (int k = 0; k < 2; k++) {
        gates.ymm_stream_bytes = k == 0 ? 1 : 0;
        og_size_gates_set(&gates);
        og_ew_plan p;
        og_ew_prepare(&op, &p);
        opgrad_isa want = og_isa() > OPGRAD_ISA_AVX2 && k == 0 ? OPGRAD_ISA_AVX2 : og_isa();
        CHECK_EQ(p.ymm_stream, k == 0);
        CHECK_EQ(p.isa, want);
        CHECK(p.compute == og_mish_bwd_kernels[want]);
    }
    og_size_gates_set(&saved);
    aclDestroyTensor(a), aclDestroyTensor(o);
}

// The row engine's form (SoftmaxBackward): a light fp32 row kernel past ymm_stream_bytes per
// thread is planned at the AVX2 level at most; not a kernel that is not light, not bf16 rows.
static void test_rows_ymm_stream(void) {
    og_size_gates saved = og_size_gates_get(), gates = saved;
    int64_t dims[2] = {96, 1000}, per_thread = 96 * 1000 * 3 * 4; // g, y, dx at one thread
    for (int d = 0; d < 2; d++) {
        aclDataType dt = d == 0 ? ACL_FLOAT : ACL_BF16;
        aclTensor *g = mk(dt, 2, dims, NULL), *y = mk(dt, 2, dims, NULL),
                  *o = mk(dt, 2, dims, NULL);
        for (int light = 0; light <= 1; light++)
            for (int cores = 1; cores <= 2; cores++)
                for (int k = 0; k < 3; k++) {
                    int64_t gate = k == 0   ? 0
                                   : k == 1 ? per_thread / cores
                                            : per_thread / cores + 1;
                    gates.ymm_stream_bytes = gate;
                    og_size_gates_set(&gates);
                    og_rows_op op = {.kernels = og_softmax_bwd_kernels,
                                     .kernels16 = og_softmax_bwd_kernels16,
                                     .nin = 2,
                                     .nout = 1,
                                     .in = {g, y},
                                     .out = {o},
                                     .in_slot = {0, 1},
                                     .out_slot = {2},
                                     .ndim = 2,
                                     .dims = {96, 1000},
                                     .axis = 1,
                                     .light = light,
                                     .compute_dtype = dt};
                    og_rows_plan p;
                    og_rows_make_plan(&op, cores, OPGRAD_ISA_AVX512, &p);
                    bool want = light && dt == ACL_FLOAT && k == 1;
                    CHECKF(p.ymm_stream == want, "%s light %d, %d cores, gate %lld",
                           og_dtype_name(dt), light, cores, (long long)gate);
                    CHECK_EQ(p.isa, want ? OPGRAD_ISA_AVX2 : OPGRAD_ISA_AVX512);
                    CHECK(p.kernel == og_softmax_bwd_kernels[p.isa]);
                }
        aclDestroyTensor(g), aclDestroyTensor(y), aclDestroyTensor(o);
    }
    og_size_gates_set(&saved);
}

// Phase 1 reports slots * buffer_bytes as the workspace (per thread = buffer_bytes).
static void test_plan_workspace_through_api(void) {
    static const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    static const int64_t sizes[] = {1, 100, 2720, 2721, 4096, 4097, 100000, 5000000};
    int saved = opgrad_get_num_threads();
    float *buf = calloc(5000000, 4 * 4 + 8); // 4 distinct fp32 tensors + a spare (dummy data)
    char *base = (char *)buf;
    size_t slice = 5000000 * 4 + 64;
    for (int th = 1; th <= 5; th += 2) {
        opgrad_set_num_threads(th);
        for (int d = 0; d < 3; d++)
            for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
                aclDataType dt = dts[d];
                int64_t dims[1] = {sizes[si]};
                aclTensor *g = test_tensor(dims, 1, dt, base),
                          *x = test_tensor(dims, 1, dt, base + slice);
                aclTensor *t = test_tensor(dims, 1, dt, base + 2 * slice),
                          *o = test_tensor(dims, 1, dt, base + 3 * slice);
                for (int nin = 1; nin <= 3; nin++) {
                    uint64_t ws = 0;
                    aclOpExecutor *ex = NULL;
                    aclnnStatus st;
                    opspec s;
                    if (nin == 1) {
                        st = aclnnMishGetWorkspaceSize(x, o, &ws, &ex);
                        s = (opspec){.nin = 1, .nout = 1, .in = {x}, .out = {o}, .compute = dt};
                    } else if (nin == 2) {
                        st = aclnnMishBackwardGetWorkspaceSize(g, x, o, &ws, &ex);
                        s = (opspec){.nin = 2, .nout = 1, .in = {g, x}, .out = {o}, .compute = dt};
                    } else {
                        st = aclnnMishBackwardWithTanhxGetWorkspaceSize(g, x, t, o, &ws, &ex);
                        s = (opspec){
                            .nin = 3, .nout = 1, .in = {g, x, t}, .out = {o}, .compute = dt};
                    }
                    CHECKF(st == ACLNN_SUCCESS, "%s", aclGetRecentErrMsg());
                    // Mish and MishBackward have fused 16-bit kernels (no tile buffers)
                    s.kernels16 = nin == 1   ? og_mish_fwd_kernels16
                                  : nin == 2 ? og_mish_bwd_kernels16
                                             : NULL;
                    // and non-temporal fp32 ones (fp32 past the NT size: no tile buffer either)
                    s.kernels_nt = nin == 1   ? og_mish_fwd_nt_kernels
                                   : nin == 2 ? og_mish_bwd_nt_kernels
                                              : NULL;
                    og_ew_plan p = plan_of(s, opgrad_get_num_threads(), og_ew_nt_threshold());
                    CHECK_EQ(p.fused16, dt != ACL_FLOAT && nin < 3);
                    CHECK(!p.fused16 || p.tiling.buffer_bytes == 0);
                    CHECKF(ws == (uint64_t)p.tiling.slots * (uint64_t)p.tiling.buffer_bytes,
                           "%s nin=%d n=%lld threads=%d: workspace %llu, plan %d slots x %lld",
                           og_dtype_name(dt), nin, (long long)sizes[si], th, (unsigned long long)ws,
                           p.tiling.slots, (long long)p.tiling.buffer_bytes);
                    CHECK(p.tiling.slots <= th && p.tiling.core_num >= p.tiling.slots);
                    if (st == ACLNN_SUCCESS) CHECK_EQ(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
                }
                aclDestroyTensor(g), aclDestroyTensor(x), aclDestroyTensor(t), aclDestroyTensor(o);
            }
    }
    opgrad_set_num_threads(saved);
    free(buf);
}

int main(void) {
    RUN(test_tiling_plans);
    RUN(test_tiling_single_core_rule);
    RUN(test_plan_contiguous_coalesces);
    RUN(test_plan_size1_dims_dropped);
    RUN(test_plan_broadcast);
    RUN(test_plan_transposed_not_linear);
    RUN(test_plan_channels_last);
    RUN(test_plan_mixed_dtypes);
    RUN(test_plan_nt_threshold);
    RUN(test_plan_compute_bound_ops);
    RUN(test_plan_lut16);
    RUN(test_plan_ymm_stream);
    RUN(test_rows_ymm_stream);
    RUN(test_plan_workspace_through_api);
    return test_summary();
}
