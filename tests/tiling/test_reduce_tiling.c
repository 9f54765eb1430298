/* Tiling-level tests of the reduction planner (og_reduce_make_plan, pure: no data touched).
 *
 * Over many shapes x summed-dim sets x strides x thread counts:
 *  - the output index space is cut into units that cover every output exactly once;
 *  - the summands of every output are cut into blocks that cover [0, K) exactly once;
 *  - the cores of each pass take contiguous, ordered, balanced (sizes differ by at most one)
 *    ranges of items, never more cores than threads or items;
 *  - so every (output, summand) pair is reduced exactly once (checked element by element);
 *  - the split into (unit, block) items happens only with several threads and few units, and
 *    then the combine pass covers every unit once;
 *  - coalescing, the strip/lane choice, the in-place (direct) reads and the workspace size;
 *  - og_reduce_to_shape (NumPy reduce-to-shape). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "engine/reduce.h"
#include "test.h"
#include "testutil.h"

static char dummy[64];

// A tensor of dims over dummy data, stored in the dim order `perm` (NULL: row-major).
static aclTensor *tensor(const int64_t *dims, int nd, aclDataType dt, const int *perm) {
    int64_t strides[OG_MAX_DIMS] = {0}, acc = 1;
    for (int i = nd - 1; i >= 0; i--) {
        int d = perm ? perm[i] : i;
        strides[d] = acc;
        acc *= dims[d] > 0 ? dims[d] : 1;
    }
    int64_t sd[1] = {acc};
    return aclCreateTensor(dims, (uint64_t)nd, dt, strides, 0, ACL_FORMAT_ND, sd, 1, dummy);
}

// The plan of summing x (dims, stored in order perm) over mask into a row-major output.
static og_reduce_plan plan_for(const int64_t *dims, int nd, unsigned mask, aclDataType dt,
                               const int *perm, int cores, bool map) {
    int64_t od[OG_MAX_DIMS];
    int no = 0;
    for (int d = 0; d < nd; d++)
        if (!((mask >> d) & 1u)) od[no++] = dims[d];
    aclTensor *x = tensor(dims, nd, dt, perm), *out = tensor(od, no, ACL_FLOAT, NULL);
    og_reduce_op r = {.nin = 1,
                      .in = {x},
                      .ndim = nd,
                      .reduce_mask = mask,
                      .out = out,
                      .out_slot = 1,
                      .round_in = ACL_FLOAT};
    static const og_ew_compute_fn fake_map[OPGRAD_ISA_COUNT];
    if (map) r.map = fake_map;
    for (int d = 0, o = 0; d < nd; d++) {
        r.dims[d] = dims[d];
        r.out_dim[d] = (mask >> d) & 1u ? -1 : o++;
    }
    og_reduce_plan p;
    og_reduce_make_plan(&r, cores, &p);
    aclDestroyTensor(x);
    aclDestroyTensor(out);
    return p;
}

static long g_plans;

// Every property of one plan; returns the number of violations (printing the first).
static int check_plan(const og_reduce_plan *p, int64_t M, int64_t K, int cores, const char *what) {
    int bad = 0;
#define PROP(cond)                                                                                 \
    do {                                                                                           \
        if (!(cond) && bad++ == 0)                                                                 \
            fprintf(stderr,                                                                        \
                    "    %s (cores %d): M=%lld K=%lld units=%lld nblocks=%lld split=%d "           \
                    "core_num=%d: violated %s\n",                                                  \
                    what, cores, (long long)p->M, (long long)p->K, (long long)p->units,            \
                    (long long)p->nblocks, p->split_blocks, p->core_num, #cond);                   \
    } while (0)
    g_plans++;
    PROP(p->M == M);
    PROP(p->K == K);
    if (M == 0) {
        PROP(p->core_num == 0 && p->workspace == 0);
        return bad;
    }
    // units cover the outputs exactly once, in order
    int64_t next = 0;
    for (int64_t u = 0; u < p->units; u++) {
        int64_t first, count;
        og_reduce_unit_outputs(p, u, &first, &count);
        PROP(first == next && count >= 1 &&
             count <= (p->direct ? OG_RED_STRIP : OG_RED_STRIP_WIDE));
        next = first + count;
    }
    PROP(next == M);
    // blocks cover the summands exactly once
    next = 0;
    for (int64_t b = 0; b < p->nblocks; b++) {
        int64_t r0, n;
        og_reduce_block_range(p, b, &r0, &n);
        PROP(r0 == next && n >= 1 && n <= (int64_t)OG_RED_BLOCK * OG_RED_CHUNK);
        next = r0 + n;
    }
    PROP(next == K);
    PROP(p->nchunks == (K + OG_RED_CHUNK - 1) / OG_RED_CHUNK);
    // blocks of OG_RED_BLOCK chunks, or one power-of-two block cut into equal power-of-two shares
    // (the same pairwise tree) for fewer strips than cores
    PROP(p->block_chunks == OG_RED_BLOCK ||
         (p->split_blocks && p->strips && p->nblocks * p->block_chunks == p->nchunks &&
          (p->nchunks & (p->nchunks - 1)) == 0 && (p->nblocks & (p->nblocks - 1)) == 0 &&
          p->units < cores));
    // pass 1: contiguous ordered balanced ranges over the items
    PROP(p->items == (p->split_blocks ? p->units * p->nblocks : p->units));
    // a large job: up to OG_CORES_PER_THREAD ranges per thread, each reading >= OG_MIN_CORE_BYTES
    int64_t read_bytes = 0, per_thread = 1;
    for (int k = 0; k < p->nin; k++) read_bytes += (int64_t)aclDataTypeSize(p->in_dtype[k]);
    while (cores > 1 && per_thread < OG_CORES_PER_THREAD &&
           M * K * read_bytes >= (int64_t)cores * (per_thread + 1) * OG_MIN_CORE_BYTES)
        per_thread++;
    int64_t want = (int64_t)cores * per_thread;
    PROP(p->core_num >= 1 && p->core_num <= p->items);
    PROP(p->core_num == (p->items < want ? p->items : want));
    PROP(p->slots == (p->core_num < cores ? p->core_num : cores));
    int64_t lo = INT64_MAX, hi = 0;
    next = 0;
    for (int c = 0; c < p->core_num; c++) {
        int64_t s, n;
        og_reduce_core_range(p, 1, c, &s, &n);
        PROP(s == next);
        next = s + n;
        lo = n < lo ? n : lo;
        hi = n > hi ? n : hi;
    }
    PROP(next == p->items && hi - lo <= 1 && lo >= 1);
    // the block split: only with several threads, several blocks and few units; then the combine
    // pass covers every unit
    if (p->split_blocks) {
        PROP(cores > 1 && p->nblocks > 1 && p->units < 4 * (int64_t)cores);
        PROP(p->combine_cores >= 1 && p->combine_cores <= cores && p->combine_cores <= p->units);
        next = 0;
        for (int c = 0; c < p->combine_cores; c++) {
            int64_t s, n;
            og_reduce_core_range(p, 2, c, &s, &n);
            PROP(s == next && n >= 1);
            next = s + n;
        }
        PROP(next == p->units);
        PROP(p->workspace >= p->partial_offset + p->items * p->strip * 4);
    } else {
        PROP(!(cores > 1 && K > 0 && p->nblocks > 1 && p->units < 4 * (int64_t)cores));
    }
    PROP(p->partial_offset >= p->slots * p->core_bytes && p->core_bytes % 64 == 0);
    PROP(p->partial_offset >= p->combine_cores * p->core_bytes);
    PROP(p->workspace >= p->partial_offset);
    // every (output, summand) pair exactly once (small cases element by element)
    if (M * K <= 200000) {
        unsigned char *seen = calloc((size_t)(M * K) + 1, 1);
        for (int c = 0; c < p->core_num; c++) {
            int64_t s, n;
            og_reduce_core_range(p, 1, c, &s, &n);
            for (int64_t it = s; it < s + n; it++) {
                int64_t u = p->split_blocks ? it / p->nblocks : it;
                int64_t b0 = p->split_blocks ? it % p->nblocks : 0;
                int64_t b1 = p->split_blocks ? b0 + 1 : p->nblocks;
                int64_t first, count;
                og_reduce_unit_outputs(p, u, &first, &count);
                for (int64_t b = b0; b < b1; b++) {
                    int64_t r0, nr;
                    og_reduce_block_range(p, b, &r0, &nr);
                    for (int64_t o = first; o < first + count; o++)
                        for (int64_t r = r0; r < r0 + nr; r++) seen[o * K + r]++;
                }
            }
        }
        int64_t wrong = 0;
        for (int64_t i = 0; i < M * K; i++) wrong += seen[i] != 1;
        PROP(wrong == 0);
        free(seen);
    }
#undef PROP
    return bad;
}

static void test_plans_cover_everything_once(void) {
    const int64_t shapes[][4] = {
        {1, 1, 1, 1},     {5, 7, 1, 1},      {3, 300, 1, 1},   {300, 3, 1, 1},   {1000, 65, 1, 1},
        {4, 33, 20, 1},   {2, 3, 4, 5},      {70000, 1, 1, 1}, {2, 40000, 1, 1}, {40000, 2, 1, 1},
        {17, 64, 3, 1},   {1, 1, 100000, 3}, {0, 5, 1, 1},     {5, 0, 3, 1},     {64, 65, 1, 1},
        {3, 16385, 1, 1}, {9, 70, 1, 1},     {6, 1, 80, 1},    {2048, 64, 1, 1}, {1500, 90, 1, 1},
    };
    const int core_counts[] = {1, 2, 3, 4, 7, 8, 13, 64};
    long violations = 0;
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
        int nd = 4;
        const int64_t *dims = shapes[si];
        for (unsigned mask = 1; mask < 16; mask++) {
            int64_t M = 1, K = 1;
            for (int d = 0; d < nd; d++) {
                if ((mask >> d) & 1u)
                    K *= dims[d];
                else
                    M *= dims[d];
            }
            const int rev[4] = {3, 2, 1, 0}, mid[4] = {0, 2, 1, 3};
            for (int layout = 0; layout < 3; layout++)
                for (int dti = 0; dti < 2; dti++)
                    for (size_t ci = 0; ci < sizeof core_counts / sizeof *core_counts; ci++) {
                        const int *perm = layout == 0 ? NULL : layout == 1 ? rev : mid;
                        og_reduce_plan p = plan_for(dims, nd, mask, dti ? ACL_FLOAT16 : ACL_FLOAT,
                                                    perm, core_counts[ci], false);
                        char what[96];
                        snprintf(what, sizeof what, "shape %zu mask %u layout %d dtype %d", si,
                                 mask, layout, dti);
                        violations += check_plan(&p, M, K, core_counts[ci], what);
                    }
        }
    }
    CHECKF(violations == 0, "%ld plans violate a property", violations);
    printf(
        "  %ld plans: units x blocks cover every (output, summand) exactly once, cores balanced\n",
        g_plans);
}

static void test_coalescing_and_strategy(void) {
    // [4,5,6] row-major: summing {1,2} is one contiguous run of 30 per output, read in place
    int64_t d3[3] = {4, 5, 6};
    og_reduce_plan p = plan_for(d3, 3, 6u, ACL_FLOAT, NULL, 2, false);
    CHECK_EQ(p.nred, 1);
    CHECK_EQ(p.red[0], 30);
    CHECK_EQ(p.nkept, 1);
    CHECK(!p.strips);
    CHECK(p.direct);
    // summing {0}: 30 contiguous outputs per summand row: strips, in place
    p = plan_for(d3, 3, 1u, ACL_FLOAT, NULL, 2, false);
    CHECK_EQ(p.nkept, 1);
    CHECK_EQ(p.kept[0], 30);
    CHECK(p.strips);
    CHECK_EQ(p.W, 30);
    CHECK_EQ(p.strip, 30);
    CHECK(p.direct);
    // float16, or a map: gathered, not in place
    p = plan_for(d3, 3, 1u, ACL_FLOAT16, NULL, 2, false);
    CHECK(p.strips && !p.direct);
    p = plan_for(d3, 3, 6u, ACL_FLOAT, NULL, 2, true);
    CHECK(!p.direct);
    // summing {1} keeps dims 0 and 2 apart (not adjacent in memory)
    p = plan_for(d3, 3, 2u, ACL_FLOAT, NULL, 2, false);
    CHECK_EQ(p.nkept, 2);
    CHECK_EQ(p.nred, 1);
    CHECK(!p.strips); // inner kept extent 6 < 8: one output per unit
    // transposed storage: summing logical dim 0, which is contiguous in memory: lanes, in place
    int64_t d2[2] = {300, 40};
    const int rev[2] = {1, 0};
    p = plan_for(d2, 2, 1u, ACL_FLOAT, rev, 2, false);
    CHECK(!p.strips);
    CHECK(p.direct);
    // wide rows: strips of OG_RED_STRIP and a narrower last strip; gathered rows get wider strips
    int64_t w[2] = {10, 2 * OG_RED_STRIP + 22};
    p = plan_for(w, 2, 1u, ACL_FLOAT, NULL, 2, false);
    CHECK(p.strips);
    CHECK_EQ(p.strip, OG_RED_STRIP);
    CHECK_EQ(p.strips_per_row, 3);
    CHECK_EQ(p.units, 3);
    int64_t wide[2] = {10, 2 * OG_RED_STRIP_WIDE + 476};
    p = plan_for(wide, 2, 1u, ACL_FLOAT16, NULL, 2, false);
    CHECK_EQ(p.strip, OG_RED_STRIP_WIDE);
    CHECK_EQ(p.strips_per_row, 3);
    // few outputs, long sums: the block split with several threads only
    int64_t lng[2] = {3, 100000};
    p = plan_for(lng, 2, 2u, ACL_FLOAT, NULL, 4, false);
    CHECK(p.split_blocks);
    CHECK_EQ(p.items, 3 * p.nblocks);
    p = plan_for(lng, 2, 2u, ACL_FLOAT, NULL, 1, false);
    CHECK(!p.split_blocks);
    // many outputs: units split
    int64_t many[2] = {10000, 100000};
    p = plan_for(many, 2, 2u, ACL_FLOAT, NULL, 4, false);
    CHECK(!p.split_blocks);
    CHECK_EQ(p.core_num, 4 * OG_CORES_PER_THREAD); // 4 GB read: 8 ranges per thread
    CHECK_EQ(p.slots, 4);
    // fewer strips than cores over a power-of-two chunk count (4096 rows: 16 chunks): the rows
    // are cut into equal shares, one per core, each still whole strips; 12 chunks: narrower strips
    int64_t cols[2] = {4096, 300}, cols12[2] = {3000, 300};
    p = plan_for(cols, 2, 1u, ACL_FLOAT, NULL, 2, true);
    CHECK(p.split_blocks);
    CHECK_EQ(p.nblocks, 2);
    CHECK_EQ(p.block_chunks, 8);
    CHECK_EQ(p.strip, 300);
    CHECK_EQ(p.items, 2);
    p = plan_for(cols, 2, 1u, ACL_FLOAT, NULL, 4, true);
    CHECK_EQ(p.nblocks, 4);
    CHECK_EQ(p.block_chunks, 4);
    p = plan_for(cols, 2, 1u, ACL_FLOAT, NULL, 1, true);
    CHECK(!p.split_blocks);
    CHECK_EQ(p.nblocks, 1);
    p = plan_for(cols, 2, 1u, ACL_DOUBLE, NULL, 2, true); // float64: its own loop, no blocks
    CHECK(p.f64 && !p.split_blocks);
    CHECK_EQ(p.nblocks, 1);
    CHECK_EQ(p.block_chunks, OG_RED_BLOCK);
    p = plan_for(cols12, 2, 1u, ACL_FLOAT, NULL, 2, true);
    CHECK(!p.split_blocks);
    CHECK_EQ(p.nblocks, 1);
    CHECK_EQ(p.strip, 160);
    CHECK_EQ(p.units, 2);
    // nothing summed (a copy through the engine), and a 0-d input
    p = plan_for(d3, 3, 0u, ACL_FLOAT, NULL, 2, false);
    CHECK_EQ(p.K, 1);
    CHECK_EQ(p.nred, 0);
    CHECK(p.strips);
    p = plan_for(d3, 0, 0u, ACL_FLOAT, NULL, 2, false);
    CHECK_EQ(p.M, 1);
    CHECK_EQ(p.K, 1);
    // a sum over an empty dim: K = 0, outputs exist (they become +0)
    int64_t e[2] = {0, 5};
    p = plan_for(e, 2, 1u, ACL_FLOAT, NULL, 2, false);
    CHECK_EQ(p.K, 0);
    CHECK_EQ(p.M, 5);
    CHECK(p.core_num >= 1);
}

static void test_reduce_to_shape(void) {
    int64_t from[3] = {4, 5, 6};
    struct {
        int nd;
        int64_t dims[3];
        unsigned mask;
        int out_dim[3];
    } cases[] = {
        {1, {6}, 3u, {-1, -1, 0}},     {2, {5, 1}, 5u, {-1, 0, -1}},
        {3, {4, 5, 6}, 0u, {0, 1, 2}}, {3, {1, 5, 1}, 5u, {-1, 1, -1}},
        {0, {0}, 7u, {-1, -1, -1}},    {1, {1}, 7u, {-1, -1, -1}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        aclTensor *to = tensor(cases[i].dims, cases[i].nd, ACL_FLOAT, NULL);
        og_reduce_op r = {0};
        og_reduce_to_shape(&r, from, 3, to);
        CHECKF(r.reduce_mask == cases[i].mask, "case %zu: mask %u, want %u", i, r.reduce_mask,
               cases[i].mask);
        for (int d = 0; d < 3; d++)
            if (!((r.reduce_mask >> d) & 1u))
                CHECKF(r.out_dim[d] == cases[i].out_dim[d], "case %zu dim %d", i, d);
        CHECK_EQ(r.ndim, 3);
        aclDestroyTensor(to);
    }
}

int main(void) {
    RUN(test_plans_cover_everything_once);
    RUN(test_coalescing_and_strategy);
    RUN(test_reduce_to_shape);
    return test_summary();
}
