/* The GEMM engine's host side: the planner, the packing (CopyIn), the loops around the
 * micro-kernel, the epilogue (CopyOut). See gemm.h. */
#include "engine/gemm.h"

#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "engine/convert.h"
#include "engine/isa_table.h"
#include "runtime/pool.h"
#include "tensor/dtype.h"

#define DECLARE_KERNEL(sfx)                                                                        \
    void og_gemm_ukr__##sfx(int64_t, const float *, const float *, float *, int64_t, bool);        \
    extern const int og_gemm_mr__##sfx, og_gemm_nr__##sfx;
DECLARE_KERNEL(scalar)
DECLARE_KERNEL(avx2)
DECLARE_KERNEL(avx512)

void og_gemm_axpy64__scalar(int64_t, double, const double *, double *);
void og_gemm_axpy64__avx2(int64_t, double, const double *, double *);
void og_gemm_axpy64__avx512(int64_t, double, const double *, double *);

og_gemm_axpy64_fn og_gemm_axpy64_at(opgrad_isa isa) {
    static const og_gemm_axpy64_fn table[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_gemm_axpy64);
    return table[isa];
}

og_gemm_kernel og_gemm_kernel_at(opgrad_isa isa) {
    switch (og_isa_build(isa)) {
    case OPGRAD_ISA_SCALAR:
        return (og_gemm_kernel){og_gemm_ukr__scalar, og_gemm_mr__scalar, og_gemm_nr__scalar};
    case OPGRAD_ISA_AVX2:
        return (og_gemm_kernel){og_gemm_ukr__avx2, og_gemm_mr__avx2, og_gemm_nr__avx2};
    default:
        return (og_gemm_kernel){og_gemm_ukr__avx512, og_gemm_mr__avx512, og_gemm_nr__avx512};
    }
}

// ---------------------------------------------------------------------------------------------
// Block sizes

static og_gemm_blocking blocking_override; // zero fields: from the caches

og_gemm_blocking og_gemm_blocking_get(void) { return blocking_override; }

void og_gemm_blocking_set(const og_gemm_blocking *b) {
    blocking_override = b ? *b : (og_gemm_blocking){0};
}

static int64_t cache_bytes(int name, int64_t fallback) {
    long v = sysconf(name);
    return v > 0 ? v : fallback;
}

static int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
static int64_t clamp64(int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : x > hi ? hi : x; }

// Rows of B one packing unit copies into every panel of the chunk: the rows' lines are read once
// from memory and then from L1 for the next panels, and their pages stay in the TLB (packing one
// panel down all of K instead walked K pages per panel: 37% of a 64 x 4096 x 1024 product).
#define PACK_B_ROWS 64

// The packed B bytes one chunk/group may take: large enough that a square 4096 product packs
// half of B at once (few barriers), small enough to stay a minor part of the workspace.
#define DEFAULT_PACK_BUDGET ((int64_t)32 << 20)

// Block sizes for a kernel with MR x NR tiles. KC: the summation slice (a constant, so that the
// order of the sums does not depend on the machine); a B micro-panel of KC x NR fp32 then fills
// half to all of L1d, the A values and C rows stream past it. MC: an A block (MC x KC) takes half
// of L2. NC: a unit's C tile is MC x NC; 512 columns amortise the A packing (each A block is
// packed once per NC columns) to well under 1% of the flops.
static og_gemm_blocking cache_blocking(int mr, int nr) {
    (void)nr;
    int64_t l2 = cache_bytes(_SC_LEVEL2_CACHE_SIZE, 512 << 10);
    og_gemm_blocking b = {0};
    b.kc = OG_GEMM_KC;
    b.mc = clamp64(l2 / 2 / (b.kc * 4) / mr * mr, mr, 64 * mr);
    b.nc = round_up(512, nr);
    b.pack_budget = DEFAULT_PACK_BUDGET;
    return b;
}

// ---------------------------------------------------------------------------------------------
// Planning

static bool mul_ok(int64_t a, int64_t b, int64_t *r) { return !__builtin_mul_overflow(a, b, r); }

static og_gemm_mat *mat_at(og_gemm_op *op, int k) {
    og_gemm_mat *m[] = {&op->a, &op->b, &op->c, &op->d, &op->e, &op->f, &op->c2};
    return m[k];
}
#define NMATS 7

// Drops batch dims of size 1 and merges neighbours that every operand steps through as one.
static void coalesce_batch(og_gemm_plan *p) {
    og_gemm_op *op = &p->op;
    int nb = 0;
    for (int d = 0; d < op->nbatch; d++) {
        if (op->batch[d] == 1) continue;
        bool merge = nb > 0;
        for (int k = 0; k < NMATS && merge; k++) {
            og_gemm_mat *m = mat_at(op, k);
            if (m->present && m->bstride[nb - 1] != m->bstride[d] * op->batch[d]) merge = false;
        }
        if (merge) {
            p->batch[nb - 1] *= op->batch[d];
            for (int k = 0; k < NMATS; k++)
                mat_at(op, k)->bstride[nb - 1] = mat_at(op, k)->bstride[d];
            continue;
        }
        p->batch[nb] = op->batch[d];
        for (int k = 0; k < NMATS; k++) mat_at(op, k)->bstride[nb] = mat_at(op, k)->bstride[d];
        nb++;
    }
    // A batch over a shared B whose other operands step from one batch to the next as from one
    // block of M rows to the next (x [B,S,K] @ W [K,N], a Linear layer) is one taller product:
    // one set of units over B·S rows instead of small products per batch.
    if (nb == 1 && op->b.bstride[0] == 0 && !op->a.gen && !op->a.gen64) {
        bool fold = true;
        for (int k = 0; k < NMATS && fold; k++) {
            og_gemm_mat *m = mat_at(op, k);
            if (k != 1 && m->present && m->bstride[0] != op->M * m->rs) fold = false;
        }
        if (fold) {
            op->M *= p->batch[0];
            nb = 0;
        }
    }
    p->nbatch = nb;
    p->nbatches = 1;
    for (int d = 0; d < nb; d++) p->nbatches *= p->batch[d];
}

// float64 (see gemm.h): units of rows64 C rows over all batches (at most 4096 units where memory
// allows, at least two per thread where there are rows enough); per thread the unit's A rows (K
// each), running sums and slice sums (N each), a panel of B rows shared by the unit's rows of one
// batch (kp rows: a generated or converted B row is made once per unit, not once per C row) and a
// D, an E and an F row (the epilogue's operands), in double.
#define OG_GEMM_F64_GROUP 16        // C rows per unit at most (unless 4096 units need more)
#define OG_GEMM_F64_ROWS (16 << 20) // bytes of a unit's rows per thread, unless one row is more
#define OG_GEMM_F64_PANEL (4 << 20) // bytes of B panel per thread at most
static bool plan_f64(og_gemm_plan *p, int max_threads) {
    int64_t rows, units, k1 = p->op.K > 0 ? p->op.K : 1, N = p->op.N, per_row, panel, bytes;
    if (!mul_ok(p->nbatches, p->op.M, &rows)) return false;
    og_gemm_blocking want = blocking_override;
    p->kc = want.kc > 0 ? want.kc : OG_GEMM_KC;
    int threads = max_threads < 1 ? 1 : max_threads;
    int64_t nb = N > 0 ? N : 1, group = (rows + 2 * threads - 1) / (2 * threads);
    if (group > OG_GEMM_F64_GROUP) group = OG_GEMM_F64_GROUP;
    if (group < (rows + 4095) / 4096) group = (rows + 4095) / 4096;
    // but a unit's rows (an A row, two sums) within OG_GEMM_F64_ROWS bytes where K or N is long
    int64_t row_bytes = 8 * (k1 + 2 * nb), fit = OG_GEMM_F64_ROWS / (row_bytes > 0 ? row_bytes : 1);
    if (group > fit) group = fit;
    p->rows64 = group > 0 ? group : 1;
    units = (rows + p->rows64 - 1) / p->rows64;
    if (units > INT_MAX) return false;
    p->kp = OG_GEMM_F64_PANEL / 8 / nb;
    if (p->kp > p->kc) p->kp = p->kc;
    if (p->kp < 1) p->kp = 1;
    // per C row: its A row, running sums and slice sums; then the panel and the D, E, F rows
    if (!mul_ok(2 * nb + k1, p->rows64, &per_row) || !mul_ok(p->kp + 3, nb, &panel) ||
        !mul_ok(per_row + panel, 8, &bytes))
        return false;
    double flops = 2.0 * (double)rows * (double)N * (double)k1;
    double thread_flops = want.thread_flops > 0 ? want.thread_flops : 2.5e5;
    if (flops < (double)threads * thread_flops)
        threads = flops / thread_flops > 1 ? (int)(flops / thread_flops) : 1;
    p->slots = units < threads ? (int)units : threads;
    p->mblocks = units;
    p->slot_bytes = round_up(bytes, 64);
    return true;
}

bool og_gemm_make_plan(const og_gemm_op *op, int max_threads, opgrad_isa isa, og_gemm_plan *p) {
    memset(p, 0, sizeof *p);
    p->op = *op;
    coalesce_batch(p);
    p->isa = isa;
    p->kernel = og_gemm_kernel_at(isa);
    if (op->epi == OG_GEMM_EPI_ACT || op->epi == OG_GEMM_EPI_ACT_GRAD) {
        if (op->f64)
            p->act64 = op->act_kernels64[isa];
        else
            p->act = op->act_kernels[isa];
    }
    const int64_t mr = p->kernel.mr, nr = p->kernel.nr, M = p->op.M, N = p->op.N, K = p->op.K;
    if (M <= 0 || N <= 0 || p->nbatches <= 0) return true; // nothing to run
    if (op->f64) {
        p->axpy64 = og_gemm_axpy64_at(isa);
        return plan_f64(p, max_threads);
    }

    og_gemm_blocking bl = cache_blocking((int)mr, (int)nr), want = blocking_override;
    if (want.kc > 0) bl.kc = want.kc;
    if (want.mc > 0) bl.mc = round_up(want.mc, mr);
    if (want.nc > 0) bl.nc = round_up(want.nc, nr);
    if (want.pack_budget > 0) bl.pack_budget = want.pack_budget;
    double thread_flops = want.thread_flops > 0 ? want.thread_flops : 2.5e5;

    p->b_shared = true;
    for (int d = 0; d < p->nbatch; d++)
        if (p->op.b.bstride[d] != 0) p->b_shared = false;
    const int64_t Kp = K > 0 ? K : 1;
    p->kc = bl.kc < Kp ? bl.kc : Kp;
    p->mc = bl.mc < round_up(M, mr) ? bl.mc : round_up(M, mr);
    int64_t npad, panel_bytes, full;
    if (!mul_ok(Kp, nr * 4, &panel_bytes) || !mul_ok(round_up(N, nr) / nr, panel_bytes, &full))
        return false;
    npad = round_up(N, nr);
    // Columns packed at once: all of N when one B fits the budget, else as many panels as fit.
    p->chunk_n =
        full <= bl.pack_budget ? npad : clamp64(bl.pack_budget / panel_bytes, 1, npad / nr) * nr;
    p->nc = bl.nc < p->chunk_n ? bl.nc : p->chunk_n;
    int64_t chunk_bytes = p->chunk_n / nr * panel_bytes;
    p->group = p->b_shared ? p->nbatches : clamp64(bl.pack_budget / chunk_bytes, 1, p->nbatches);
    if (!mul_ok(p->b_shared ? 1 : p->group, chunk_bytes, &p->pack_bytes)) return false;
    // Threads: about a quarter MFLOP of work each at least (a launch costs microseconds; the
    // checker and the tests lower it so that small shapes run on several threads), and enough units
    // to share: narrow the units (down to one NR panel) before the threads idle.
    double flops = 2.0 * (double)M * (double)N * (double)K * (double)p->nbatches;
    int threads = max_threads < 1 ? 1 : max_threads;
    if (flops < (double)threads * thread_flops)
        threads = flops / thread_flops > 1 ? (int)(flops / thread_flops) : 1;
    // Few rows (one MC block) and a B not shared by several batches: every element of B is used
    // by one unit only, so each unit packs its own KC x NC block of B next to its A block and
    // uses it from L2 at once. Packing all of B first would write it to memory and read it back
    // (3x the traffic: 0.55 of the FMA peak at 64 x 4096 x 1024). But those units split the
    // columns only, each packing all of A: with several threads that pays while the ~3 units per
    // thread repack less A (3 t M K) than B's round trip moves (2 K N).
    p->b_local = round_up(M, mr) <= p->mc && !(p->b_shared && p->nbatches > 1) &&
                 (threads == 1 || 3 * (int64_t)threads * M < 2 * N);
    if (p->b_local) {
        p->chunk_n = npad;
        p->group = p->nbatches;
        p->pack_bytes = 0;
        int64_t l2 = cache_bytes(_SC_LEVEL2_CACHE_SIZE, 512 << 10);
        int64_t nc_l2 = clamp64(l2 / 2 / (p->kc * 4) / nr, 1, npad / nr) * nr;
        if (p->nc > nc_l2 && want.nc <= 0) p->nc = nc_l2;
    }

    p->mblocks = (M + p->mc - 1) / p->mc;
    // Rows first: B is packed once for all units, but each unit packs its own A block, so
    // narrower units would pack A more times.
    for (; threads > 1;) {
        p->mblocks = (M + p->mc - 1) / p->mc;
        int64_t units = p->group * p->mblocks * ((p->chunk_n + p->nc - 1) / p->nc);
        if (units >= 3 * (int64_t)threads) break;
        if (p->mc > 4 * mr && !p->b_local) // (a local B stays one row block: columns only)
            p->mc = round_up(p->mc / 2, mr);
        else if (p->nc > nr)
            p->nc = round_up(p->nc / 2, nr);
        else
            break;
    }
    p->mblocks = (M + p->mc - 1) / p->mc;
    // A launch of more than 65535 units runs on the calling thread alone (the pool's runs hold
    // 16-bit unit numbers), so a group of shared-B batches is cut to fit.
    int64_t per_batch = p->mblocks * ((p->chunk_n + p->nc - 1) / p->nc);
    if (per_batch > INT32_MAX) return false;
    int64_t kblocks = (Kp + PACK_B_ROWS - 1) / PACK_B_ROWS; // pack units per batch
    if (kblocks > 0xffff) kblocks = 0xffff; // (more run on one thread: a K of 4M and more)
    int64_t cap = 0xffff / (per_batch > kblocks ? per_batch : kblocks);
    if (p->group > cap) p->group = cap > 1 ? cap : 1;
    int64_t units = p->group * per_batch;
    p->slots = units < threads ? (int)units : threads;

    // Per thread: the A block, the C tile, three epilogue rows, 64-byte aligned each.
    int64_t a_bytes = round_up(p->mc * p->kc * 4, 64), c_bytes = round_up(p->mc * p->nc * 4, 64);
    p->slot_bytes = a_bytes + c_bytes + 3 * round_up(p->nc * 4, 64) +
                    (p->b_local ? round_up(p->kc * p->nc * 4, 64) : 0);
    return true;
}

uint64_t og_gemm_scratch_bytes(const og_gemm_plan *p) {
    if (p->slots == 0) return 0;
    return (uint64_t)p->pack_bytes + (uint64_t)p->slots * (uint64_t)p->slot_bytes;
}

// ---------------------------------------------------------------------------------------------
// CopyIn: packing with conversion

// n contiguous values of dt as fp32 (16-bit values widen exactly).
static void load_line(const og_convert_table *cv, const char *src, aclDataType dt, float *dst,
                      int64_t n) {
    if (dt == ACL_FLOAT16)
        cv->f16_to_f32((const uint16_t *)src, dst, (size_t)n);
    else if (dt == ACL_BF16)
        cv->bf16_to_f32((const uint16_t *)src, dst, (size_t)n);
    else // a plain loop: lines are short (a panel's NR values), a memcpy call would cost more
        for (int64_t i = 0; i < n; i++) dst[i] = ((const float *)src)[i];
}

// dst[r * dr + c * dc] = M[r, c] for r < nrows, c < ncols (M: rows rs, columns cs apart from
// base), rounded through `round` when it is a 16-bit dtype. A matrix with a unit stride is read
// line by line along it with the vector converters; a line whose destination is strided (the
// rows of a row-major A, interleaved into MR-row panels) goes through a small buffer.
static void pack_block(const og_convert_table *cv, const char *base, aclDataType dt, int64_t rs,
                       int64_t cs, int64_t nrows, int64_t ncols, float *dst, int64_t dr, int64_t dc,
                       aclDataType round) {
    const int64_t esz = (int64_t)aclDataTypeSize(dt);
    if (dt == ACL_FLOAT && cs == 1 && dr == 1 && nrows == 4 && dc == 4) {
        // A full AVX2 A panel of a row-major fp32 A: the four rows interleaved directly.
        const float *s0 = (const float *)base, *s1 = s0 + rs, *s2 = s1 + rs, *s3 = s2 + rs;
        for (int64_t c = 0; c < ncols; c++) {
            dst[4 * c] = s0[c];
            dst[4 * c + 1] = s1[c];
            dst[4 * c + 2] = s2[c];
            dst[4 * c + 3] = s3[c];
        }
    } else if (cs == 1 || rs == 1) {
        bool by_row = cs == 1;
        int64_t nlines = by_row ? nrows : ncols, len = by_row ? ncols : nrows;
        int64_t lstride = (by_row ? rs : cs) * esz, dline = by_row ? dr : dc;
        int64_t delem = by_row ? dc : dr;
        float line[256];
        for (int64_t l = 0; l < nlines; l++) {
            const char *src = base + l * lstride;
            float *out = dst + l * dline;
            if (delem == 1) {
                load_line(cv, src, dt, out, len);
                continue;
            }
            for (int64_t c0 = 0; c0 < len; c0 += 256) {
                int64_t n = len - c0 < 256 ? len - c0 : 256;
                load_line(cv, src + c0 * esz, dt, line, n);
                for (int64_t c = 0; c < n; c++) out[(c0 + c) * delem] = line[c];
            }
        }
    } else {
        for (int64_t r = 0; r < nrows; r++)
            for (int64_t c = 0; c < ncols; c++)
                dst[r * dr + c * dc] = og_load_elem(base + (r * rs + c * cs) * esz, dt);
    }
    if (round == ACL_FLOAT16 || round == ACL_BF16)
        for (int64_t r = 0; r < nrows; r++)
            for (int64_t c = 0; c < ncols; c++) {
                float *v = &dst[r * dr + c * dc];
                *v = round == ACL_FLOAT16 ? og_f16_to_f32(og_f32_to_f16(*v))
                                          : og_bf16_to_f32(og_f32_to_bf16(*v));
            }
}

// NR-column panels of B rows: panel q of the `ncols` columns gets rows [0, nrows) at
// dst + q * panel_stride (k-major, NR values per row; columns past ncols zero). Rows outer: each
// row is read front to back once (the hardware prefetcher follows it), converted through a small
// buffer when it is not fp32, and dealt out to the panels; walking down one panel at a time
// instead read every row in NR-wide pieces, a page apart (1 ns per value on Zen3).
static void pack_b_rows(const og_convert_table *cv, const char *base, aclDataType dt, int64_t rs,
                        int64_t cs, int64_t nrows, int64_t ncols, int64_t nr, float *dst,
                        int64_t panel_stride, aclDataType round) {
    const int64_t esz = (int64_t)aclDataTypeSize(dt), npan = (ncols + nr - 1) / nr;
    if (cs != 1 || round == ACL_FLOAT16 || round == ACL_BF16) { // rare layouts: panel by panel
        for (int64_t q = 0; q < npan; q++) {
            int64_t n = ncols - q * nr < nr ? ncols - q * nr : nr;
            float *d = dst + q * panel_stride;
            if (n < nr)
                for (int64_t k = 0; k < nrows; k++) memset(d + k * nr + n, 0, (size_t)(nr - n) * 4);
            pack_block(cv, base + q * nr * cs * esz, dt, rs, cs, nrows, n, d, nr, 1, round);
        }
        return;
    }
    float line[512];
    const int64_t span = 512 / nr * nr; // whole panels per piece of a row
    for (int64_t k = 0; k < nrows; k++) {
        const char *row = base + k * rs * esz;
        for (int64_t c0 = 0; c0 < ncols; c0 += span) {
            int64_t n = ncols - c0 < span ? ncols - c0 : span;
            const float *src = (const float *)(row + c0 * esz);
            if (dt != ACL_FLOAT) {
                load_line(cv, row + c0 * esz, dt, line, n);
                src = line;
            }
            for (int64_t c = 0; c < n; c += nr) {
                float *d = dst + (c0 + c) / nr * panel_stride + k * nr;
                int64_t m = n - c < nr ? n - c : nr;
                for (int64_t j = 0; j < m; j++) d[j] = src[c + j];
                for (int64_t j = m; j < nr; j++) d[j] = 0.0f;
            }
        }
    }
}

// A block of a generated operand: dst[r * dr + c * dc] = row r0 + r, column c0 + c, for
// r < nrows, c < ncols, through a line buffer (rounded through `round` when 16-bit).
static void gen_block(const og_gemm_plan *p, og_gemm_gen_fn gen, const char *base, int64_t r0,
                      int64_t nrows, int64_t c0, int64_t ncols, float *dst, int64_t dr,
                      int64_t dc) {
    const og_convert_table *cv = &og_convert[p->isa];
    float line[256];
    for (int64_t r = 0; r < nrows; r++)
        for (int64_t c = 0; c < ncols; c += 256) {
            int64_t n = ncols - c < 256 ? ncols - c : 256;
            gen(p->op.gen_params, cv, base, r0 + r, c0 + c, n, line);
            if (p->op.round_ab != ACL_FLOAT) og_round_through(cv, line, n, p->op.round_ab);
            float *d = dst + r * dr + c * dc;
            for (int64_t j = 0; j < n; j++) d[j * dc] = line[j];
        }
}

// pack_b_rows for a generated B: rows [k0, k0 + nrows), columns [c0, c0 + ncols) into NR-column
// panels (panel q at dst + q * panel_stride, k-major; columns past ncols zero).
static void gen_b_rows(const og_gemm_plan *p, const char *base, int64_t k0, int64_t nrows,
                       int64_t c0, int64_t ncols, float *dst, int64_t panel_stride) {
    const og_convert_table *cv = &og_convert[p->isa];
    const int64_t nr = p->kernel.nr, span = 512 / nr * nr;
    float line[512];
    for (int64_t k = 0; k < nrows; k++)
        for (int64_t c = 0; c < ncols; c += span) {
            int64_t n = ncols - c < span ? ncols - c : span;
            p->op.b.gen(p->op.gen_params, cv, base, k0 + k, c0 + c, n, line);
            if (p->op.round_ab != ACL_FLOAT) og_round_through(cv, line, n, p->op.round_ab);
            for (int64_t j0 = 0; j0 < n; j0 += nr) {
                float *d = dst + (c + j0) / nr * panel_stride + k * nr;
                int64_t m = n - j0 < nr ? n - j0 : nr;
                for (int64_t j = 0; j < m; j++) d[j] = line[j0 + j];
                for (int64_t j = m; j < nr; j++) d[j] = 0.0f;
            }
        }
}

// ---------------------------------------------------------------------------------------------
// Phase 2

typedef struct run_ctx {
    const og_gemm_plan *p;
    const char *base[NMATS]; // each operand's first element
    char *scratch;
    int64_t n0, cw;    // the chunk of columns
    int64_t b0, count; // the group of batches
    int64_t panels;    // NR panels of the chunk
    int64_t nblocks;   // units across the chunk
} run_ctx;

static const og_gemm_mat *mat_of(const og_gemm_plan *p, int k) {
    return mat_at((og_gemm_op *)&p->op, k);
}

// Byte offset of batch `bi` in operand k.
static int64_t batch_offset(const og_gemm_plan *p, int k, int64_t bi) {
    const og_gemm_mat *m = mat_of(p, k);
    int64_t off = 0;
    for (int d = p->nbatch - 1; d >= 0; d--) {
        off += bi % p->batch[d] * m->bstride[d];
        bi /= p->batch[d];
    }
    return off * (int64_t)aclDataTypeSize(m->dtype);
}

// Element (row, col) of operand k in batch bi.
static const char *elem(const run_ctx *x, int k, int64_t bi, int64_t row, int64_t col) {
    const og_gemm_mat *m = mat_of(x->p, k);
    return x->base[k] + batch_offset(x->p, k, bi) +
           (row * m->rs + col * m->cs) * (int64_t)aclDataTypeSize(m->dtype);
}

enum { MA, MB, MC_, MD, ME, MF, MC2 };

static float *b_panel_area(const run_ctx *x, int64_t g) {
    const og_gemm_plan *p = x->p;
    int64_t Kp = p->op.K > 0 ? p->op.K : 1;
    return (float *)x->scratch + (p->b_shared ? 0 : g) * Kp * (p->chunk_n);
}

// Packs rows [kb * PACK_B_ROWS, +PACK_B_ROWS) of B for batch b0 + unit / kblocks into every
// NR-column panel of the chunk (K x NR each, k-major; the columns past the chunk zero).
static void pack_b_unit(void *ctx, int unit, int slot) {
    (void)slot;
    const run_ctx *x = ctx;
    const og_gemm_plan *p = x->p;
    const og_gemm_mat *b = &p->op.b;
    const int64_t nr = p->kernel.nr, K = p->op.K, kblocks = (K + PACK_B_ROWS - 1) / PACK_B_ROWS;
    int64_t g = unit / kblocks, k0 = unit % kblocks * PACK_B_ROWS;
    int64_t kn = K - k0 < PACK_B_ROWS ? K - k0 : PACK_B_ROWS;
    if (b->gen) {
        gen_b_rows(p, x->base[MB] + batch_offset(p, MB, x->b0 + g), k0, kn, x->n0, x->cw,
                   b_panel_area(x, g) + k0 * nr, K * nr);
        return;
    }
    pack_b_rows(&og_convert[p->isa], elem(x, MB, x->b0 + g, k0, x->n0), b->dtype, b->rs, b->cs, kn,
                x->cw, nr, b_panel_area(x, g) + k0 * nr, K * nr, p->op.round_ab);
}

// One epilogue operand's row (n values from column col) as fp32: in place when it is fp32 and
// contiguous, else converted into buf.
static const float *load_row(const run_ctx *x, int k, int64_t bi, int64_t row, int64_t col,
                             int64_t n, float *buf) {
    const og_gemm_mat *m = mat_of(x->p, k);
    const char *src = elem(x, k, bi, row, col);
    if (m->dtype == ACL_FLOAT && m->cs == 1) return (const float *)src;
    og_load_run(&og_convert[x->p->isa], src, m->dtype, m->cs, buf, n);
    return buf;
}

static void store_row(const run_ctx *x, int k, int64_t bi, int64_t row, int64_t col, int64_t n,
                      const float *z) {
    const og_gemm_mat *m = mat_of(x->p, k);
    og_store_run(&og_convert[x->p->isa], (char *)elem(x, k, bi, row, col), m->dtype, m->cs, z, n,
                 false);
}

// CopyOut of one finished row of the C tile: z (n values) -> epilogue -> C (and C2).
static void epilogue_row(const run_ctx *x, int64_t bi, int64_t row, int64_t col, int64_t n,
                         float *z, float *buf) {
    const og_gemm_op *op = &x->p->op;
    float *bd = buf, *be = buf + round_up(n, 16), *bf = be + round_up(n, 16);
    if (op->alpha != 1.0) {
        float alpha = (float)op->alpha;
        for (int64_t j = 0; j < n; j++) z[j] *= alpha;
    }
    if (op->d.present) {
        const float *d = load_row(x, MD, bi, row, col, n, bd);
        float beta = (float)op->beta;
        if (op->beta == 1.0)
            for (int64_t j = 0; j < n; j++) z[j] += d[j];
        else
            for (int64_t j = 0; j < n; j++) z[j] += beta * d[j];
    }
    const float *e = NULL, *f = NULL;
    if (op->epi != OG_GEMM_EPI_NONE && op->epi != OG_GEMM_EPI_ACT)
        e = load_row(x, ME, bi, row, col, n, be);
    switch (op->epi) {
    case OG_GEMM_EPI_NONE:
        break;
    case OG_GEMM_EPI_ACT: {
        const float *in[1] = {z};
        float *out[1] = {z};
        x->p->act((size_t)n, in, out, op->act_params);
        break;
    }
    case OG_GEMM_EPI_ACT_GRAD: {
        const float *in[2] = {e, z};
        float *out[1] = {z};
        x->p->act((size_t)n, in, out, op->act_params);
        break;
    }
    case OG_GEMM_EPI_ADD:
        for (int64_t j = 0; j < n; j++) z[j] += e[j];
        break;
    case OG_GEMM_EPI_MUL:
        for (int64_t j = 0; j < n; j++) z[j] *= e[j];
        break;
    case OG_GEMM_EPI_MUL_GRAD:
        f = load_row(x, MF, bi, row, col, n, bf);
        if (op->c2.present) {
            for (int64_t j = 0; j < n; j++) bd[j] = e[j] * z[j];
            store_row(x, MC2, bi, row, col, n, bd);
        }
        for (int64_t j = 0; j < n; j++) z[j] = e[j] * f[j];
        break;
    }
    store_row(x, MC_, bi, row, col, n, z);
}

// One unit: the C tile of batch b0 + g, rows [m0, m0 + mc), chunk columns [j0, j0 + nc).
static void compute_unit(void *ctx, int unit, int slot) {
    const run_ctx *x = ctx;
    const og_gemm_plan *p = x->p;
    const og_gemm_op *op = &p->op;
    const int64_t mr = p->kernel.mr, nr = p->kernel.nr, K = op->K;
    int64_t nb = x->nblocks, g = unit / (p->mblocks * nb), rem = unit % (p->mblocks * nb);
    int64_t m0 = rem / nb * p->mc, j0 = rem % nb * p->nc;
    int64_t mcur = op->M - m0 < p->mc ? op->M - m0 : p->mc;
    int64_t ncur = x->cw - j0 < p->nc ? x->cw - j0 : p->nc;
    int64_t mpad = round_up(mcur, mr), npad = round_up(ncur, nr), bi = x->b0 + g;

    char *mine = x->scratch + p->pack_bytes + (int64_t)slot * p->slot_bytes;
    float *apack = (float *)mine;
    float *ctile = (float *)(mine + round_up(p->mc * p->kc * 4, 64));
    float *rows = (float *)((char *)ctile + round_up(p->mc * p->nc * 4, 64));
    float *blocal = (float *)((char *)rows + 3 * round_up(p->nc * 4, 64));
    const float *bpack = p->b_local ? NULL : b_panel_area(x, g) + j0 / nr * K * nr;
    // The C tile is a buffer of its own even for an fp32 C: accumulating in C itself ran 1.2-1.8x
    // slower on Zen3 (its rows are a page apart for N >= 1024: TLB and 4K-aliasing misses).
    const int64_t ldc = npad;

    if (K == 0)
        for (int64_t i = 0; i < mpad; i++) memset(ctile + i * ldc, 0, (size_t)npad * 4);
    for (int64_t pc = 0; pc < K; pc += p->kc) {
        int64_t kcur = K - pc < p->kc ? K - pc : p->kc;
        // CopyIn A: MR-row panels, k-major; rows past M are zero.
        for (int64_t ir = 0; ir < mpad; ir += mr) {
            float *dst = apack + ir * kcur;
            int64_t nrows = mcur - ir < mr ? mcur - ir : mr;
            if (nrows < mr)
                for (int64_t k = 0; k < kcur; k++)
                    memset(dst + k * mr + nrows, 0, (size_t)(mr - nrows) * 4);
            if (op->a.gen)
                gen_block(p, op->a.gen, x->base[MA] + batch_offset(p, MA, bi), m0 + ir, nrows, pc,
                          kcur, dst, 1, mr);
            else
                pack_block(&og_convert[p->isa], elem(x, MA, bi, m0 + ir, pc), op->a.dtype, op->a.rs,
                           op->a.cs, nrows, kcur, dst, 1, mr, op->round_ab);
        }
        // CopyIn of a local B block: the unit's NR-column panels of this K slice.
        if (p->b_local && op->b.gen)
            gen_b_rows(p, x->base[MB] + batch_offset(p, MB, bi), pc, kcur, x->n0 + j0, ncur, blocal,
                       kcur * nr);
        else if (p->b_local)
            pack_b_rows(&og_convert[p->isa], elem(x, MB, bi, pc, x->n0 + j0), op->b.dtype, op->b.rs,
                        op->b.cs, kcur, ncur, nr, blocal, kcur * nr, op->round_ab);
        // Compute: each B micro-panel stays in L1 while the A block streams from L2.
        for (int64_t jr = 0; jr < npad; jr += nr) {
            const float *bp = p->b_local ? blocal + jr * kcur : bpack + jr / nr * K * nr + pc * nr;
            for (int64_t ir = 0; ir < mpad; ir += mr) {
                // The next micro-tile's partial sums were written one KC slice ago and have left
                // L2 (the C tile is larger): fetch them while this one computes.
                if (pc > 0) {
                    float *next = ir + mr < mpad ? ctile + (ir + mr) * ldc + jr
                                                 : ctile + (jr + nr < npad ? jr + nr : 0);
                    for (int64_t i = 0; i < mr; i++)
                        for (int64_t j = 0; j < nr; j += 16)
                            __builtin_prefetch(next + i * ldc + j, 1);
                }
                p->kernel.fn(kcur, apack + ir * kcur, bp, ctile + ir * ldc + jr, ldc, pc > 0);
            }
        }
    }
    for (int64_t i = 0; i < mcur; i++)
        epilogue_row(x, bi, m0 + i, x->n0 + j0, ncur, ctile + i * ldc, rows);
}

// The float64 epilogue of C row `row` of batch bi (all N columns): z the row's double sums;
// buf three rows of N doubles (D, E, F). The same steps as epilogue_row, in double, each output
// rounded once to its dtype.
static void epilogue_row64(const run_ctx *x, int64_t bi, int64_t row, double *z, double *buf) {
    const og_gemm_plan *p = x->p;
    const og_gemm_op *op = &p->op;
    const int64_t N = op->N, nb = N > 0 ? N : 1;
    double *d = buf, *e = buf + nb, *f = e + nb;
    if (op->alpha != 1.0)
        for (int64_t j = 0; j < N; j++) z[j] *= op->alpha;
    if (op->d.present) {
        og_load_run64(elem(x, MD, bi, row, 0), op->d.dtype, op->d.cs, d, N);
        for (int64_t j = 0; j < N; j++) z[j] += op->beta == 1.0 ? d[j] : op->beta * d[j];
    }
    if (op->epi != OG_GEMM_EPI_NONE && op->epi != OG_GEMM_EPI_ACT)
        og_load_run64(elem(x, ME, bi, row, 0), op->e.dtype, op->e.cs, e, N);
    switch (op->epi) {
    case OG_GEMM_EPI_NONE:
        break;
    case OG_GEMM_EPI_ACT: {
        const double *in[1] = {z};
        double *out[1] = {z};
        p->act64((size_t)N, in, out, op->act_params);
        break;
    }
    case OG_GEMM_EPI_ACT_GRAD: {
        const double *in[2] = {e, z};
        double *out[1] = {z};
        p->act64((size_t)N, in, out, op->act_params);
        break;
    }
    case OG_GEMM_EPI_ADD:
        for (int64_t j = 0; j < N; j++) z[j] += e[j];
        break;
    case OG_GEMM_EPI_MUL:
        for (int64_t j = 0; j < N; j++) z[j] *= e[j];
        break;
    case OG_GEMM_EPI_MUL_GRAD: // C2 = E z, C = E F
        og_load_run64(elem(x, MF, bi, row, 0), op->f.dtype, op->f.cs, f, N);
        for (int64_t j = 0; j < N; j++) {
            double c2 = e[j] * z[j];
            z[j] = e[j] * f[j];
            f[j] = c2;
        }
        if (op->c2.present)
            og_store_run64((char *)elem(x, MC2, bi, row, 0), op->c2.dtype, op->c2.cs, f, N);
        break;
    }
    og_store_run64((char *)elem(x, MC_, bi, row, 0), op->c.dtype, op->c.cs, z, N);
}

// float64: rows [unit * rows64, +rows64) of C over all batches (see gemm.h), in groups of the
// same batch. Each row's sums are the same operations in the same order as row by row (slices of
// KC, an fma chain each, the slices added in order); the group only shares each B row: made once
// (generated or converted into the panel, kp rows at a time) for all of the group's rows.
static void compute_rows_f64(void *ctx, int unit, int slot) {
    const run_ctx *x = ctx;
    const og_gemm_plan *p = x->p;
    const og_gemm_op *op = &p->op;
    const int64_t M = op->M, N = op->N, K = op->K, total = p->nbatches * M, G = p->rows64;
    const int64_t ka = K > 0 ? K : 1, nb = N > 0 ? N : 1;
    double *a = (double *)(x->scratch + (int64_t)slot * p->slot_bytes);
    double *acc = a + G * ka, *part = acc + G * nb, *panel = part + G * nb, *d = panel + p->kp * nb;
    const og_gemm_mat *ma = &op->a, *mb = &op->b;
    bool b_direct = mb->dtype == ACL_DOUBLE && mb->cs == 1 && !mb->gen64;
    int64_t r1 = (unit + 1) * G < total ? (unit + 1) * G : total;
    for (int64_t g0 = (int64_t)unit * G, g1; g0 < r1; g0 = g1) {
        int64_t bi = g0 / M, n;
        g1 = (bi + 1) * M < r1 ? (bi + 1) * M : r1; // the group: rows of batch bi
        n = g1 - g0;
        const char *bbase = x->base[MB] + batch_offset(p, MB, bi);
        for (int64_t t = 0; t < n && K > 0; t++) {
            int64_t i = (g0 + t) % M;
            if (ma->gen64)
                ma->gen64(op->gen_params, x->base[MA] + batch_offset(p, MA, bi), i, 0, K,
                          a + t * ka);
            else
                og_load_run64(elem(x, MA, bi, i, 0), ma->dtype, ma->cs, a + t * ka, K);
        }
        for (int64_t j = 0; j < n * N; j++) acc[j] = 0.0;
        for (int64_t k0 = 0; k0 < K; k0 += p->kc) {
            int64_t k1 = K - k0 < p->kc ? K : k0 + p->kc;
            for (int64_t j = 0; j < n * N; j++) part[j] = 0.0;
            for (int64_t s0 = k0, s1; s0 < k1; s0 = s1) {
                s1 = k1 - s0 < p->kp ? k1 : s0 + p->kp;
                for (int64_t k = s0; k < s1 && !b_direct; k++) {
                    if (mb->gen64)
                        mb->gen64(op->gen_params, bbase, k, 0, N, panel + (k - s0) * nb);
                    else
                        og_load_run64(elem(x, MB, bi, k, 0), mb->dtype, mb->cs,
                                      panel + (k - s0) * nb, N);
                }
                for (int64_t t = 0; t < n; t++)
                    for (int64_t k = s0; k < s1; k++) {
                        const double *b = b_direct ? (const double *)elem(x, MB, bi, k, 0)
                                                   : panel + (k - s0) * nb;
                        p->axpy64(N, a[t * ka + k], b, part + t * nb);
                    }
            }
            for (int64_t t = 0; t < n; t++)
                for (int64_t j = 0; j < N; j++)
                    acc[t * nb + j] =
                        k0 == 0 ? part[t * nb + j] : acc[t * nb + j] + part[t * nb + j];
        }
        for (int64_t t = 0; t < n; t++) epilogue_row64(x, bi, (g0 + t) % M, acc + t * nb, d);
    }
}

void og_gemm_run(const aclOpExecutor *e, const og_gemm_plan *p, char *scratch) {
    if (p->slots == 0) return;
    run_ctx x = {.p = p, .scratch = scratch};
    for (int k = 0; k < NMATS; k++) {
        const og_gemm_mat *m = mat_of(p, k);
        x.base[k] = m->present ? og_executor_addr(e, m->slot) +
                                     m->offset * (int64_t)aclDataTypeSize(m->dtype)
                               : NULL;
    }
    if (p->op.f64) {
        og_parallel_for((int)p->mblocks, p->slots, compute_rows_f64, &x);
        return;
    }
    const int64_t nr = p->kernel.nr, N = p->op.N;
    for (x.n0 = 0; x.n0 < N; x.n0 += p->chunk_n) {
        x.cw = N - x.n0 < p->chunk_n ? N - x.n0 : p->chunk_n;
        x.panels = round_up(x.cw, nr) / nr;
        x.nblocks = (x.cw + p->nc - 1) / p->nc;
        for (x.b0 = 0; x.b0 < p->nbatches; x.b0 += p->group) {
            x.count = p->nbatches - x.b0 < p->group ? p->nbatches - x.b0 : p->group;
            if (p->op.K > 0 && !p->b_local)
                og_parallel_for((int)((p->b_shared ? 1 : x.count) *
                                      ((p->op.K + PACK_B_ROWS - 1) / PACK_B_ROWS)),
                                p->slots, pack_b_unit, &x);
            og_parallel_for((int)(x.count * p->mblocks * x.nblocks), p->slots, compute_unit, &x);
        }
    }
}
