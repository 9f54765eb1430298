/* The GEMM engine (engine/gemm.h), white-box: plans run on a hand-made executor.
 *
 *  - Determinism as documented: every element of C is bitwise the plain loops' sum: FMA chains
 *    p = fma(a_k, b_k, p) from 0 over slices of K of the plan's kc, the slices added in order,
 *    then the epilogue's fp32 operations, for every ISA level this CPU has, the default block
 *    sizes and tiny ones (every block boundary, N chunks and batch groups crossed), 1, 2 and 3
 *    threads;
 *  - operands of any strides (transposed, broadcast rows, batch broadcast), fp32/bf16/fp16 inputs
 *    and outputs, inputs rounded through fp16 (cubeMathType USE_FP16), K = 0, alpha/beta with an
 *    addend, the ADD / MUL / MUL_GRAD epilogues;
 *  - nothing is written outside C (guard bands around every output). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/executor.h"
#include "engine/gemm.h"
#include "opgrad/opgrad.h"
#include "tensor/dtype.h"
#include "test.h"
#include "testutil.h"

enum { MA, MB, MC, MD, ME, MF, MC2, NMATS };

static bool tight_batch; // the next operands' batches follow each other without a gap

// A matrix operand in its own buffer: logical [nb][rows][cols] with the given strides.
typedef struct mat {
    aclDataType dt;
    int64_t nb, rows, cols; // batch extent as stored (1 = broadcast)
    int64_t bs, rs, cs;     // strides in elements
    int64_t span;           // elements spanned
    gbuf buf;
} mat;

static mat mat_new(aclDataType dt, int64_t nb, int64_t rows, int64_t cols, bool transposed,
                   test_rng *r) {
    mat m = {.dt = dt, .nb = nb, .rows = rows, .cols = cols};
    // Row-major, or column-major ("transposed view"), with one padding element per line so that
    // no stride equals an extent.
    if (transposed)
        m.cs = rows + 1, m.rs = 1;
    else
        m.rs = cols + 1, m.cs = 1;
    // Batches a few elements apart, or back to back (a batch that folds into the rows).
    m.bs =
        (transposed ? (cols ? cols : 1) * m.cs : (rows ? rows : 1) * m.rs) + (tight_batch ? 0 : 3);
    m.span = nb * m.bs + 8;
    m.buf = gbuf_new((size_t)m.span, aclDataTypeSize(dt));
    test_fill(m.buf.data, 0, m.span, dt, r, -2, 2);
    return m;
}

static double get(const mat *m, int64_t b, int64_t i, int64_t j) {
    return test_load(m->buf.data, (m->nb > 1 ? b : 0) * m->bs + i * m->rs + j * m->cs, m->dt);
}

static og_gemm_mat desc(const mat *m, int slot) {
    og_gemm_mat d = {
        .present = true, .slot = slot, .dtype = m->dt, .rs = m->rows > 1 ? m->rs : 0, .cs = m->cs};
    d.bstride[0] = m->nb > 1 ? m->bs : 0;
    return d;
}

static float widen_round(double v, aclDataType round) {
    float f = (float)v;
    if (round == ACL_FLOAT16) f = og_f16_to_f32(og_f32_to_f16(f));
    if (round == ACL_BF16) f = og_bf16_to_f32(og_f32_to_bf16(f));
    return f;
}

static float to_dtype(float v, aclDataType dt) {
    if (dt == ACL_FLOAT16) return og_f16_to_f32(og_f32_to_f16(v));
    if (dt == ACL_BF16) return og_bf16_to_f32(og_f32_to_bf16(v));
    return v;
}

typedef struct gcase {
    int64_t nb, M, N, K;
    aclDataType in_dt, out_dt;
    bool ta, tb;   // transposed views
    bool a_bcast;  // A broadcasts over the batch (stored once)
    bool b_bcast;  // B broadcasts over the batch
    bool bias_row; // D is a bias row [N] (row stride 0) instead of [M,N]
    double alpha, beta;
    og_gemm_epi_kind epi;
    aclDataType round;
    bool tight; // batches back to back: with a shared B the engine folds the batch into M
} gcase;

// Runs the case with the current blocking / ISA / threads; checks C (and C2) bitwise against the
// FMA chain. Returns the number of mismatches.
static int run_case(const gcase *g, uint64_t seed) {
    test_rng r;
    test_rng_seed(&r, seed);
    tight_batch = g->tight;
    mat m[NMATS];
    memset(m, 0, sizeof m);
    m[MA] = mat_new(g->in_dt, g->a_bcast ? 1 : g->nb, g->M, g->K, g->ta, &r);
    m[MB] = mat_new(g->in_dt, g->b_bcast ? 1 : g->nb, g->K, g->N, g->tb, &r);
    m[MC] = mat_new(g->out_dt, g->nb, g->M, g->N, false, &r);
    bool has_d = g->beta != 0, has_e = g->epi != OG_GEMM_EPI_NONE,
         has_f = g->epi == OG_GEMM_EPI_MUL_GRAD;
    if (has_d) m[MD] = mat_new(g->in_dt, g->nb, g->bias_row ? 1 : g->M, g->N, false, &r);
    if (has_e) m[ME] = mat_new(ACL_FLOAT, g->nb, g->M, g->N, true, &r);
    if (has_f) m[MF] = mat_new(ACL_BF16, 1, g->M, g->N, false, &r);
    if (has_f) m[MC2] = mat_new(ACL_FLOAT, g->nb, g->M, g->N, false, &r);
    // Keep a copy of C's initial bytes (everything outside the view must survive).
    size_t cbytes = (size_t)m[MC].span * aclDataTypeSize(g->out_dt);
    unsigned char *c_before = malloc(cbytes);
    memcpy(c_before, m[MC].buf.data, cbytes);

    og_gemm_op op = {.nbatch = 1,
                     .M = g->M,
                     .N = g->N,
                     .K = g->K,
                     .alpha = g->alpha,
                     .beta = g->beta,
                     .round_ab = g->round,
                     .epi = g->epi};
    op.batch[0] = g->nb;
    op.a = desc(&m[MA], MA);
    op.b = desc(&m[MB], MB);
    op.c = desc(&m[MC], MC);
    if (has_d) op.d = desc(&m[MD], MD);
    if (has_e) op.e = desc(&m[ME], ME);
    if (has_f) op.f = desc(&m[MF], MF), op.c2 = desc(&m[MC2], MC2);

    og_gemm_plan plan;
    CHECK(og_gemm_make_plan(&op, opgrad_get_num_threads(), opgrad_active_isa(), &plan));
    og_io io[NMATS];
    for (int k = 0; k < NMATS; k++) io[k] = (og_io){.base = m[k].buf.data};
    aclOpExecutor ex;
    memset(&ex, 0, sizeof ex);
    ex.io = io;
    size_t ws = (size_t)og_gemm_scratch_bytes(&plan);
    char *scratch = malloc(ws + 64);
    og_gemm_run(&ex, &plan, scratch);

    int bad = 0;
    for (int64_t b = 0; b < g->nb; b++)
        for (int64_t i = 0; i < g->M; i++)
            for (int64_t j = 0; j < g->N; j++) {
                // slices of plan.kc: a chain from 0 each, the slices' sums added in order
                float c = 0.0f;
                for (int64_t k0 = 0; k0 < g->K; k0 += plan.kc) {
                    float part = 0.0f;
                    for (int64_t k = k0; k < g->K && k < k0 + plan.kc; k++)
                        part = fmaf(widen_round(get(&m[MA], b, i, k), g->round),
                                    widen_round(get(&m[MB], b, k, j), g->round), part);
                    c = k0 == 0 ? part : c + part;
                }
                if (g->alpha != 1.0) c *= (float)g->alpha;
                if (has_d) {
                    float d = (float)get(&m[MD], b, g->bias_row ? 0 : i, j);
                    c = g->beta == 1.0 ? c + d : c + (float)g->beta * d;
                }
                float e = has_e ? (float)get(&m[ME], b, i, j) : 0, c2 = 0;
                if (g->epi == OG_GEMM_EPI_ADD) c += e;
                if (g->epi == OG_GEMM_EPI_MUL) c *= e;
                if (g->epi == OG_GEMM_EPI_MUL_GRAD) {
                    c2 = e * c;
                    c = e * (float)get(&m[MF], 0, i, j);
                }
                float want = to_dtype(c, g->out_dt), got = (float)get(&m[MC], b, i, j);
                if (test_f2u(want) != test_f2u(got) && !(isnan(want) && isnan(got))) {
                    if (bad < 3)
                        fprintf(stderr, "    [%lld,%lld,%lld] got %.9g want %.9g\n", (long long)b,
                                (long long)i, (long long)j, got, want);
                    bad++;
                }
                if (has_f && test_f2u(c2) != test_f2u((float)get(&m[MC2], b, i, j))) bad++;
            }
    // Outside C's view: unchanged.
    unsigned char *c_after = m[MC].buf.data;
    size_t esz = aclDataTypeSize(g->out_dt);
    for (size_t byte = 0; byte < cbytes; byte++) {
        int64_t e = (int64_t)(byte / esz), b = e / m[MC].bs, in = e % m[MC].bs;
        bool inside = b < g->nb && in / m[MC].rs < g->M && in % m[MC].rs < g->N;
        if (!inside && c_after[byte] != c_before[byte]) {
            bad++;
            break;
        }
    }
    for (int k = 0; k < NMATS; k++)
        if (m[k].buf.data) {
            CHECK(gbuf_guards_ok(&m[k].buf));
            gbuf_free(&m[k].buf);
        }
    free(c_before);
    free(scratch);
    return bad;
}

static const gcase CASES[] = {
    {1, 1, 1, 1, ACL_FLOAT, ACL_FLOAT, false, false, false, false, false, 1, 0, 0, ACL_FLOAT,
     false},
    {1, 67, 131, 259, ACL_FLOAT, ACL_FLOAT, false, false, false, false, false, 1, 0, 0, ACL_FLOAT,
     false},
    {1, 29, 37, 45, ACL_FLOAT, ACL_FLOAT, true, true, false, false, false, 1, 0, 0, ACL_FLOAT,
     false},
    {1, 13, 33, 0, ACL_FLOAT, ACL_BF16, false, false, false, false, false, 1, 0.5, 0, ACL_FLOAT,
     false},
    {3, 17, 21, 40, ACL_BF16, ACL_FLOAT, false, true, false, true, false, 1, 0, 0, ACL_FLOAT,
     false},
    {4, 9, 50, 19, ACL_FLOAT16, ACL_FLOAT16, true, false, true, false, false, 1, 0, 0, ACL_FLOAT,
     false},
    {2, 23, 27, 70, ACL_FLOAT, ACL_FLOAT, false, false, false, false, true, 0.75, 1, 0, ACL_FLOAT,
     false},
    {2, 23, 27, 70, ACL_FLOAT, ACL_BF16, false, true, false, false, false, -2, 0.25, 0, ACL_FLOAT,
     false},
    {1, 31, 18, 33, ACL_FLOAT, ACL_FLOAT, false, false, false, false, false, 1, 0, 0, ACL_FLOAT16,
     false},
    {2, 11, 40, 25, ACL_BF16, ACL_BF16, false, false, false, false, true, 1, 1, OG_GEMM_EPI_ADD,
     ACL_FLOAT, false},
    {1, 11, 40, 25, ACL_FLOAT, ACL_FLOAT, true, false, false, false, false, 1, 0, OG_GEMM_EPI_MUL,
     ACL_FLOAT, false},
    {2, 14, 35, 26, ACL_FLOAT16, ACL_FLOAT, false, false, false, false, true, 1, 1,
     OG_GEMM_EPI_MUL_GRAD, ACL_FLOAT, false},
    {3, 10, 29, 31, ACL_FLOAT, ACL_FLOAT, false, false, false, true, false, 1, 0, 0, ACL_FLOAT,
     true},
    {3, 10, 29, 31, ACL_BF16, ACL_FLOAT, false, false, false, true, false, 1, 0, OG_GEMM_EPI_MUL,
     ACL_FLOAT, true},
};
enum { NCASES = sizeof CASES / sizeof CASES[0] };

// Every case at every ISA level, blocking and thread count.
static void test_gemm_bitwise_fma_chain(void) {
    // thread_flops 1: the small cases run on as many threads as asked
    og_gemm_blocking tiny[] = {
        {0, 0, 0, 0, 1}, {1, 3, 1, 1, 1}, {7, 16, 20, 4096, 1}, {12, 5, 40, 1 << 14, 1}};
    int threads[] = {1, 2, 3}, saved = opgrad_get_num_threads();
    for (int isa = OPGRAD_ISA_SCALAR; isa <= test_best_isa(); isa++) {
        if (!test_isa_available(isa)) continue;
        opgrad_set_max_isa((opgrad_isa)isa);
        for (size_t bl = 0; bl < sizeof tiny / sizeof tiny[0]; bl++) {
            og_gemm_blocking_set(&tiny[bl]);
            for (int t = 0; t < 3; t++) {
                opgrad_set_num_threads(threads[t]);
                for (int c = 0; c < NCASES; c++) {
                    int bad = run_case(&CASES[c], 1000 + (uint64_t)c);
                    CHECKF(bad == 0, "case %d isa %s blocking %zu threads %d: %d mismatches", c,
                           opgrad_isa_name((opgrad_isa)isa), bl, threads[t], bad);
                }
            }
        }
    }
    og_gemm_blocking_set(NULL);
    opgrad_set_max_isa(OPGRAD_ISA_AMX);
    opgrad_set_num_threads(saved);
}

// x [B,S,K] @ W [K,N] with x and C batches back to back is planned as one [B*S,K] product.
static void test_gemm_fold_batch(void) {
    og_gemm_op op = {.nbatch = 1, .M = 10, .N = 29, .K = 31, .alpha = 1};
    op.batch[0] = 3;
    op.a = (og_gemm_mat){.present = true, .slot = 0, .dtype = ACL_FLOAT, .rs = 31, .cs = 1};
    op.a.bstride[0] = 310;
    op.b = (og_gemm_mat){.present = true, .slot = 1, .dtype = ACL_FLOAT, .rs = 29, .cs = 1};
    op.c = (og_gemm_mat){.present = true, .slot = 2, .dtype = ACL_FLOAT, .rs = 29, .cs = 1};
    op.c.bstride[0] = 290;
    og_gemm_plan p;
    CHECK(og_gemm_make_plan(&op, 1, OPGRAD_ISA_SCALAR, &p));
    CHECK(p.nbatch == 0 && p.op.M == 30 && p.nbatches == 1);
    op.c.bstride[0] = 291; // a gap between C's batches: no fold
    CHECK(og_gemm_make_plan(&op, 1, OPGRAD_ISA_SCALAR, &p));
    CHECK(p.nbatch == 1 && p.op.M == 10 && p.nbatches == 3);
}

// A large product at the CPU's block sizes (several KC slices, MC blocks and units): bitwise the
// chain too, on the best ISA and 2 threads.
static void test_gemm_large(void) {
    int saved = opgrad_get_num_threads();
    opgrad_set_num_threads(2);
    gcase g = {.nb = 1,
               .M = 300,
               .N = 700,
               .K = 600,
               .in_dt = ACL_FLOAT,
               .out_dt = ACL_FLOAT,
               .tb = true,
               .alpha = 1,
               .round = ACL_FLOAT};
    if (test_quick_mode()) g.M = 100;
    CHECK_EQ(run_case(&g, 7), 0);
    opgrad_set_num_threads(saved);
}

// The planner's block sizes respect the kernel's tile shape and the cache-derived defaults.
static void test_gemm_plan_blocks(void) {
    og_gemm_op op = {.nbatch = 0, .M = 1000, .N = 1000, .K = 1000, .alpha = 1};
    op.a = (og_gemm_mat){.present = true, .slot = 0, .dtype = ACL_FLOAT, .rs = 1000, .cs = 1};
    op.b = op.a, op.b.slot = 1;
    op.c = op.a, op.c.slot = 2;
    for (int isa = OPGRAD_ISA_SCALAR; isa <= OPGRAD_ISA_AVX512; isa++) {
        og_gemm_plan p;
        CHECK(og_gemm_make_plan(&op, 2, (opgrad_isa)isa, &p));
        CHECK(p.mc % p.kernel.mr == 0 && p.nc % p.kernel.nr == 0 && p.chunk_n % p.kernel.nr == 0);
        CHECK(p.kc >= 1 && p.kc <= 1000 && p.slots == 2);
        CHECK(og_gemm_scratch_bytes(&p) >= (uint64_t)p.pack_bytes);
    }
    // Sizes whose workspace overflows are refused, not wrapped.
    op.N = INT64_MAX / 2;
    op.K = INT64_MAX / 4;
    og_gemm_plan p;
    CHECK(!og_gemm_make_plan(&op, 2, OPGRAD_ISA_SCALAR, &p));
}

int main(void) {
    RUN(test_gemm_plan_blocks);
    RUN(test_gemm_fold_batch);
    RUN(test_gemm_bitwise_fma_chain);
    RUN(test_gemm_large);
    return test_summary();
}
