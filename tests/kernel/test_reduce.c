/* The reduction engine and the reductions built on it (moved from the arith kernel tests when the
 * elementwise kernels went to test_elementwise):
 *
 *  - reduction kernels (lanes, rows, chunks, add) on every ISA bitwise equal to the scalar loops,
 *    with canaries;
 *  - aclnnReduceSum bitwise equal to the documented summation order (16 lanes per 256-summand
 *    chunk, pairwise trees over chunks and blocks, reduce.h), for many shapes, dim sets, strides,
 *    dtypes, on every ISA and with 1, 2 and 3 threads (so: deterministic, ISA-independent);
 *  - exact on integer data whose absolute sum is within 2^24; accurate on random data: error <=
 *    2 * 2^-24 * sqrt(K) * sum|x| (measured ratios printed), and always within the rigorous bound
 *    (depth of the summation tree) * 2^-24 * sum|x|;
 *  - strided outputs: only the output's elements are written;
 *  - FusedAddScaleBackward (its gradients of bias and scale are reductions) against float64.
 * OPGRAD_TEST_QUICK=1 shrinks the largest reductions. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_fused_add_scale_backward.h"
#include "aclnnop/aclnn_reduce_sum.h"
#include "engine/reduce.h"
#include "opgrad/opgrad.h"
#include "tensor/dtype.h"
#include "test.h"
#include "testutil.h"

static const float SPECIALS[] = {0.0f,     -0.0f,   INFINITY, -INFINITY, NAN,
                                 1e-40f,   -1e-40f, FLT_MAX,  -FLT_MAX,  FLT_MIN,
                                 -FLT_MIN, 1.0f,    -1.0f,    0.5f,      3.0f};
enum { NSPECIALS = sizeof SPECIALS / sizeof SPECIALS[0] };

static void fill(float *x, size_t n, uint64_t seed) {
    test_rng r;
    test_rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++) {
        uint64_t u = test_rng_next(&r);
        switch (u % 4) {
        case 0:
            x[i] = SPECIALS[(u >> 8) % NSPECIALS];
            break;
        case 1:
            x[i] = test_u2f((uint32_t)(u >> 32));
            break;
        default:
            x[i] = (float)test_rng_uniform(&r, -100, 100);
            break;
        }
    }
}

// One ulp of dtype dt at v (subnormal spacing below the normal range).
static double ulp_of(aclDataType dt, double v) {
    int mant = dt == ACL_FLOAT16 ? 10
               : dt == ACL_BF16  ? 7
                                 : 23,
        emin = dt == ACL_FLOAT16 ? -14 : -126;
    int e;
    frexp(v, &e);
    int ex = v == 0 || e - 1 < emin ? emin : e - 1;
    return ldexp(1.0, ex - mant);
}

static bool same_bits(float a, float b) { return memcmp(&a, &b, 4) == 0 || (isnan(a) && isnan(b)); }

// ---------------------------------------------------------------------------------------------
// Public API helpers

typedef struct tview {
    aclTensor *t;
    void *buf;
    int64_t storage; // elements
} tview;

// A tensor of `dims` over storage laid out in the dim order `perm` (perm[0] outermost); NULL perm
// = row-major. Optional element padding `pad` after each run of the storage dim at position
// pad_at (nd - 1: after each innermost row; 1: after each outermost slice).
static tview tv_perm_at(const int64_t *dims, int nd, aclDataType dt, const int *perm, int64_t pad,
                        int pad_at) {
    tview v = {0};
    int64_t strides[OG_MAX_DIMS] = {0}, acc = 1;
    int order[OG_MAX_DIMS] = {0};
    for (int d = 0; d < nd; d++) order[d] = perm ? perm[d] : d;
    for (int i = nd - 1; i >= 0; i--) {
        int d = order[i];
        strides[d] = acc;
        acc *= dims[d] + (i == pad_at ? pad : 0);
    }
    v.storage = acc > 0 ? acc : 1;
    v.buf = calloc((size_t)v.storage + 16, aclDataTypeSize(dt));
    int64_t sd[1] = {v.storage};
    v.t = aclCreateTensor(dims, (uint64_t)nd, dt, strides, 0, ACL_FORMAT_ND, sd, 1, v.buf);
    return v;
}

static tview tv_perm(const int64_t *dims, int nd, aclDataType dt, const int *perm, int64_t pad) {
    return tv_perm_at(dims, nd, dt, perm, pad, nd - 1);
}

static tview tv(const int64_t *dims, int nd, aclDataType dt) {
    return tv_perm(dims, nd, dt, NULL, 0);
}

static void tv_free(tview *v) {
    aclDestroyTensor(v->t);
    free(v->buf);
}

// Element i (row-major over the view) of a tensor, as stored.
static int64_t view_pos(const aclTensor *t, int64_t i) {
    int64_t pos = t->offset;
    for (int d = t->ndim - 1; d >= 0; d--) {
        pos += i % t->dims[d] * t->strides[d];
        i /= t->dims[d];
    }
    return pos;
}

static void tv_set(tview *v, int64_t i, double x) {
    test_store(v->buf, view_pos(v->t, i), v->t->dtype, x);
}
static double tv_get(const tview *v, int64_t i) {
    return test_load(v->buf, view_pos(v->t, i), v->t->dtype);
}

// ---------------------------------------------------------------------------------------------
// Reduction kernels

static void test_reduce_kernels(void) {
    const size_t ns[] = {0, 1, 7, 15, 16, 17, 31, 33, 100, 255, 256};
    const size_t ws[] = {1, 2, 7, 15, 16, 17, 31, 33, 64};
    float *x = malloc(256 * 64 * 4);
    fill(x, 256 * 64, 5);
    for (size_t i = 0; i < 256 * 64; i++)
        if (!isfinite(x[i])) x[i] = 1.0f; // keep sums comparable bitwise (NaN payloads aside)
    long runs = 0;
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!test_isa_available(isa)) continue;
        const og_reduce_kernels *k = &og_reduce_kernel_table[isa];
        for (size_t a = 0; a < sizeof ns / sizeof *ns; a++) {
            size_t n = ns[a];
            // lanes: acc[i % 16] += x[i]
            float want[16];
            gbuf acc = gbuf_new(16, 4);
            for (int l = 0; l < 16; l++) want[l] = acc.f[l] = -0.0f + (float)l;
            for (size_t i = 0; i < n; i++) want[i % 16] += x[i];
            k->lanes(x, n, acc.f);
            CHECKF(gbuf_guards_ok(&acc) && memcmp(acc.f, want, sizeof want) == 0, "lanes/%s n=%zu",
                   opgrad_isa_name((opgrad_isa)isa), n);
            free(acc.raw);
            // rows: acc[(i % 16) * w + j] += rows[i][j]
            for (size_t b = 0; b < sizeof ws / sizeof *ws; b++) {
                size_t w = ws[b];
                const float *rows[256];
                for (size_t i = 0; i < n; i++) rows[i] = x + (i * 37) % (256 * 64 - w);
                gbuf racc = gbuf_new(16 * w, 4);
                float rwant[16 * 64]; // w <= 64
                for (size_t i = 0; i < 16 * w; i++) rwant[i] = racc.f[i] = (float)i * 0.25f;
                for (size_t i = 0; i < n; i++)
                    for (size_t j = 0; j < w; j++) rwant[(i % 16) * w + j] += rows[i][j];
                k->rows(rows, n, w, racc.f);
                CHECKF(gbuf_guards_ok(&racc) && memcmp(racc.f, rwant, 16 * w * 4) == 0,
                       "rows/%s n=%zu w=%zu", opgrad_isa_name((opgrad_isa)isa), n, w);
                free(racc.raw);
                runs++;
            }
        }
        // chunks: each chunk's lanes and lane tree, several chunks side by side
        const size_t cn[] = {0, 1, 255, 256, 257, 1000, 1024, 1025, 4 * 256 + 17, 16384};
        for (size_t a = 0; a < sizeof cn / sizeof *cn; a++) {
            size_t n = cn[a], nc = (n + 255) / 256;
            gbuf sums = gbuf_new(nc, 4);
            k->chunks(x, n, sums.f);
            bool ok = gbuf_guards_ok(&sums);
            for (size_t c = 0; c < nc; c++) {
                float lane[16];
                for (int l = 0; l < 16; l++) lane[l] = -0.0f;
                for (size_t i = c * 256; i < n && i < c * 256 + 256; i++)
                    lane[(i - c * 256) % 16] += x[i];
                for (int h = 8; h >= 1; h /= 2)
                    for (int i = 0; i < h; i++) lane[i] = lane[2 * i] + lane[2 * i + 1];
                ok &= same_bits(sums.f[c], lane[0]);
            }
            CHECKF(ok, "chunks/%s n=%zu", opgrad_isa_name((opgrad_isa)isa), n);
            free(sums.raw);
        }
        for (size_t w = 0; w < 70; w++) { // add
            gbuf d = gbuf_new(w, 4);
            k->add(x, x + 100, d.data, w);
            bool ok = gbuf_guards_ok(&d);
            for (size_t j = 0; j < w; j++) ok &= same_bits(d.f[j], x[j] + x[100 + j]);
            CHECKF(ok, "add/%s w=%zu", opgrad_isa_name((opgrad_isa)isa), w);
            free(d.raw);
        }
    }
    free(x);
    printf("  lanes/rows/chunks/add: %ld row-kernel runs, bitwise equal to the scalar loops, "
           "canaries intact\n",
           runs);
}

// ---------------------------------------------------------------------------------------------
// The documented summation order (reduce.h), written out plainly: float operations only.

typedef struct spec_stack {
    float v[64];
    int level[64];
    int depth;
} spec_stack;

static void spec_push(spec_stack *s, float x) {
    s->v[s->depth] = x;
    s->level[s->depth++] = 0;
    while (s->depth >= 2 && s->level[s->depth - 1] == s->level[s->depth - 2]) {
        s->v[s->depth - 2] = s->v[s->depth - 2] + s->v[s->depth - 1];
        s->level[s->depth - 2]++;
        s->depth--;
    }
}

static float spec_finish(spec_stack *s) {
    while (s->depth > 1) {
        s->v[s->depth - 2] = s->v[s->depth - 2] + s->v[s->depth - 1];
        s->depth--;
    }
    return s->v[0];
}

static float spec_sum(const float *v, int64_t k) {
    if (k == 0) return 0.0f;
    spec_stack blocks = {.depth = 0};
    for (int64_t b0 = 0; b0 < k; b0 += 64 * 256) {
        spec_stack chunks = {.depth = 0};
        int64_t bend = b0 + 64 * 256 < k ? b0 + 64 * 256 : k;
        for (int64_t c0 = b0; c0 < bend; c0 += 256) {
            float lane[16];
            for (int l = 0; l < 16; l++) lane[l] = -0.0f;
            int64_t cend = c0 + 256 < bend ? c0 + 256 : bend;
            for (int64_t r = c0; r < cend; r++) lane[(r - c0) % 16] += v[r];
            for (int h = 8; h >= 1; h /= 2)
                for (int i = 0; i < h; i++) lane[i] = lane[2 * i] + lane[2 * i + 1];
            spec_push(&chunks, lane[0]);
        }
        spec_push(&blocks, spec_finish(&chunks));
    }
    return spec_finish(&blocks);
}

// Depth of the summation tree for k summands: the rigorous error bound is depth * 2^-24 * sum|x|.
static int spec_depth(int64_t k) {
    int64_t nchunks = (k + 255) / 256, nblocks = (nchunks + 63) / 64;
    int d = k >= 16 ? 15 : (int)(k > 0 ? k - 1 : 0);
    d += 4;
    int64_t in_block = nchunks < 64 ? nchunks : 64;
    for (int64_t p = 1; p < in_block; p *= 2) d++;
    for (int64_t p = 1; p < nblocks; p *= 2) d++;
    return d;
}

// ---------------------------------------------------------------------------------------------
// ReduceSum through the API against the spec

typedef struct red_case {
    int nd;
    int64_t dims[OG_MAX_DIMS];
    unsigned mask;
} red_case;

// Runs aclnnReduceSum of x over mask (keepDims as given) into a fresh out of dtype `dtype`;
// returns the status and the results (fp64, row-major over the kept dims) in *got.
static aclnnStatus reduce_api(const tview *x, unsigned mask, bool keep, aclDataType dtype,
                              double *got, int64_t out_pad) {
    const aclTensor *t = x->t;
    int64_t rd[OG_MAX_DIMS], od[OG_MAX_DIMS];
    int nr = 0, no = 0;
    for (int d = 0; d < t->ndim; d++) {
        if ((mask >> d) & 1u) rd[nr++] = d;
        if (!((mask >> d) & 1u))
            od[no++] = t->dims[d];
        else if (keep)
            od[no++] = 1;
    }
    if (nr == 0) { // dims [] would sum every dim; name them instead
        for (int d = 0; d < t->ndim; d++) rd[nr++] = d;
    }
    tview out = tv_perm(od, no, dtype, NULL, out_pad);
    // sentinel everywhere: the gaps of a padded output must stay untouched
    memset(out.buf, 0x5a, (size_t)(out.storage + 16) * aclDataTypeSize(dtype));
    aclIntArray *a = aclCreateIntArray(rd, (uint64_t)nr);
    aclnnStatus st;
    OP_RUN(st, aclnnReduceSumGetWorkspaceSize(t, a, keep, dtype, out.t, &ws_, &ex_),
           aclnnReduceSum);
    int64_t m = out.t->numel;
    for (int64_t o = 0; o < m; o++) got[o] = tv_get(&out, o);
    // gaps untouched
    if (st == ACLNN_SUCCESS) {
        unsigned char *marks = calloc((size_t)out.storage + 16, 1);
        for (int64_t o = 0; o < m; o++) marks[view_pos(out.t, o)] = 1;
        size_t es = aclDataTypeSize(dtype);
        long touched = 0;
        for (int64_t p = 0; p < out.storage + 16; p++)
            if (!marks[p])
                for (size_t b = 0; b < es; b++)
                    touched += ((unsigned char *)out.buf)[(size_t)p * es + b] != 0x5a;
        CHECKF(touched == 0, "ReduceSum wrote %ld bytes outside the output's elements", touched);
        free(marks);
    }
    aclDestroyIntArray(a);
    tv_free(&out);
    return st;
}

// Expected results by the spec: for each output (row-major over kept dims) gather the summands in
// row-major order over the summed dims from xv (row-major over dims), each as fp32 (rounded
// through `round_in` when that is a 16-bit type).
static void spec_reduce(const red_case *c, const double *xv, aclDataType round_in, float *want,
                        double *exact, double *absum) {
    int64_t n = 1, m = 1;
    for (int d = 0; d < c->nd; d++) {
        n *= c->dims[d];
        if (!((c->mask >> d) & 1u)) m *= c->dims[d];
    }
    // one pass over x in row-major order: the summands of each output arrive in row-major order
    // over the summed dims; bucket them per output (counting sort keeps that order)
    int64_t *owner = malloc((size_t)(n + 1) * sizeof *owner),
            *start = calloc((size_t)m + 2, sizeof *start);
    float *all = malloc((size_t)(n + 1) * 4), *sorted = malloc((size_t)(n + 1) * 4);
    for (int64_t o = 0; o < m; o++) exact[o] = 0, absum[o] = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t q = i, o = 0, mul = 1;
        for (int d = c->nd - 1; d >= 0; d--) {
            int64_t idx = q % c->dims[d];
            q /= c->dims[d];
            if (!((c->mask >> d) & 1u)) o += idx * mul, mul *= c->dims[d];
        }
        float f = (float)xv[i];
        if (round_in != ACL_FLOAT) f = (float)test_round_to(round_in, f);
        all[i] = f;
        owner[i] = o;
        start[o + 1]++;
        exact[o] += f;
        absum[o] += fabs(f);
    }
    for (int64_t o = 0; o < m; o++) start[o + 1] += start[o];
    int64_t *fill_at = malloc((size_t)(m + 1) * sizeof *fill_at);
    for (int64_t o = 0; o < m; o++) fill_at[o] = start[o];
    for (int64_t i = 0; i < n; i++) sorted[fill_at[owner[i]]++] = all[i];
    for (int64_t o = 0; o < m; o++) want[o] = spec_sum(sorted + start[o], start[o + 1] - start[o]);
    free(owner), free(start), free(all), free(sorted), free(fill_at);
}

static void fill_values(double *xv, int64_t n, uint64_t seed, int kind) {
    test_rng r;
    test_rng_seed(&r, seed);
    for (int64_t i = 0; i < n; i++) {
        switch (kind) {
        case 0:
            xv[i] = test_rng_uniform(&r, -1, 1) * exp2((double)(int)(test_rng_next(&r) % 12) - 6);
            break;
        case 1:
            xv[i] = (double)((int64_t)(test_rng_next(&r) % 7) - 3);
            break; // integers
        default:
            xv[i] = test_rng_uniform(&r, 0, 1);
            break; // no cancellation
        }
    }
}

// The shapes: around the lane, chunk, block and strip widths, summed dims inner/outer/mixed.
static const red_case CASES[] = {
    {1, {1}, 1},          {1, {17}, 1},        {1, {256}, 1},         {1, {257}, 1},
    {1, {16385}, 1},      {2, {5, 7}, 1},      {2, {5, 7}, 2},        {2, {5, 7}, 3},
    {2, {3, 300}, 2},     {2, {300, 3}, 1},    {2, {1000, 65}, 1},    {2, {513, 130}, 1},
    {2, {70, 9}, 1},      {2, {9, 70}, 2},     {3, {4, 33, 20}, 5},   {3, {4, 33, 20}, 2},
    {3, {6, 1, 80}, 5},   {3, {2, 5, 3}, 7},   {4, {3, 4, 5, 6}, 10}, {4, {3, 4, 5, 6}, 5},
    {2, {40000, 2}, 1},   {2, {2, 40000}, 2},  {3, {6, 1, 80}, 2},    {2, {0, 5}, 1},
    {2, {9, 65}, 1},      {2, {3, 513}, 1},    {2, {4, 0}, 2},        {0, {0}, 0},
    {2, {17, 64}, 1},     {2, {100, 7}, 2},    {2, {130, 256}, 2},    {3, {2, 70, 512}, 4},
    {3, {3, 5, 1024}, 4}, {2, {2000, 300}, 1}, // (the last: one strip per thread from 2 on)
};
enum { NCASES = sizeof CASES / sizeof *CASES };

static void test_reduce_matches_spec(void) {
    const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    long checked = 0;
    for (int ci = 0; ci < NCASES; ci++) {
        const red_case *c = &CASES[ci];
        int64_t n = 1, m = 1;
        for (int d = 0; d < c->nd; d++) {
            n *= c->dims[d];
            if (!((c->mask >> d) & 1u)) m *= c->dims[d];
        }
        double *xv = malloc((size_t)(n + 1) * sizeof *xv);
        double *got = malloc((size_t)(m + 1) * sizeof *got), *exact = malloc((size_t)(m + 1) * 8),
               *absum = malloc((size_t)(m + 1) * 8);
        float *want = malloc((size_t)(m + 1) * 4);
        fill_values(xv, n, 1000 + (uint64_t)ci, 0);
        for (int di = 0; di < 3; di++) {
            aclDataType dt = dts[di];
            // layouts: row-major, dims reversed in memory, padded rows, and (3 dims and more)
            // contiguous rows with a gap after each outermost slice
            int rev[OG_MAX_DIMS];
            for (int d = 0; d < c->nd; d++) rev[d] = c->nd - 1 - d;
            for (int layout = 0; layout < (c->nd >= 3 ? 4 : 3); layout++) {
                tview x = tv_perm_at(c->dims, c->nd, dt, layout == 1 ? rev : NULL,
                                     layout >= 2 ? 3 : 0, layout == 3 ? 1 : c->nd - 1);
                for (int64_t i = 0; i < n; i++) tv_set(&x, i, xv[i]);
                double *q = malloc((size_t)(n + 1) * 8);
                for (int64_t i = 0; i < n; i++) q[i] = tv_get(&x, i); // as stored
                // out dtype: the input's, and float32 (a 16-bit self summed in dtype float32)
                for (int od = 0; od < 2; od++) {
                    aclDataType out_dt = od ? ACL_FLOAT : dt;
                    if (od && dt == ACL_FLOAT) out_dt = ACL_FLOAT16; // fp32 self cast to fp16 first
                    spec_reduce(c, q, out_dt != ACL_FLOAT && out_dt != dt ? out_dt : ACL_FLOAT,
                                want, exact, absum);
                    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
                        if (!test_isa_available(isa)) continue;
                        opgrad_set_max_isa((opgrad_isa)isa);
                        for (int threads = 1; threads <= 3; threads++) {
                            if (isa != OPGRAD_ISA_AVX2 && isa < (int)opgrad_cpu_isa() &&
                                threads != 2)
                                continue;
                            opgrad_set_num_threads(threads);
                            aclnnStatus st = reduce_api(&x, c->mask, (ci + layout) % 2 == 0, out_dt,
                                                        got, (ci + od) % 3 == 0 ? 2 : 0);
                            CHECKF(st == ACLNN_SUCCESS, "case %d: status %d", ci, (int)st);
                            long bad = 0;
                            for (int64_t o = 0; o < m && st == ACLNN_SUCCESS; o++) {
                                double w = test_round_to(out_dt, want[o]);
                                if (!(got[o] == w || (isnan(got[o]) && isnan(w))) && bad++ < 3)
                                    fprintf(stderr,
                                            "    case %d %s->%s layout %d %s %d thr: out %lld got "
                                            "%a want %a\n",
                                            ci, og_dtype_name(dt), og_dtype_name(out_dt), layout,
                                            opgrad_isa_name((opgrad_isa)isa), threads, (long long)o,
                                            got[o], w);
                            }
                            CHECKF(bad == 0,
                                   "case %d %s->%s layout %d: %ld outputs differ from the spec", ci,
                                   og_dtype_name(dt), og_dtype_name(out_dt), layout, bad);
                            checked++;
                        }
                    }
                }
                free(q);
                tv_free(&x);
            }
        }
        free(xv), free(got), free(exact), free(absum), free(want);
    }
    opgrad_set_max_isa(OPGRAD_ISA_COUNT);
    opgrad_set_num_threads(2);
    printf("  %d shapes x 3 dtypes x 3-4 layouts x 2 out dtypes x ISAs x threads: %ld runs bitwise "
           "equal "
           "to the documented order\n",
           NCASES, checked);
}

// Random shapes, summed-dim sets, storage orders, dtypes, keepDims and thread counts: always the
// documented order, bit for bit.
static void test_reduce_fuzz(void) {
    test_rng r;
    test_rng_seed(&r, 2024);
    int runs = test_quick_mode() ? 150 : 600;
    long bad_cases = 0;
    for (int it = 0; it < runs; it++) {
        red_case c = {.nd = (int)(test_rng_next(&r) % 5)};
        int64_t n = 1, m = 1;
        for (int d = 0; d < c.nd; d++) {
            uint64_t u = test_rng_next(&r) % 16;
            c.dims[d] = u < 2    ? (int64_t)u
                        : u < 12 ? 1 + (int64_t)(test_rng_next(&r) % 24)
                                 : 1 + (int64_t)(test_rng_next(&r) % 700);
            n *= c.dims[d];
        }
        if (n > 300000) continue;
        c.mask = c.nd ? (unsigned)(test_rng_next(&r) % ((1u << c.nd) - 1)) + 1 : 0;
        for (int d = 0; d < c.nd; d++)
            if (!((c.mask >> d) & 1u)) m *= c.dims[d];
        int perm[OG_MAX_DIMS];
        for (int d = 0; d < c.nd; d++) perm[d] = d;
        for (int d = c.nd - 1; d > 0; d--) { // a random storage order
            int j = (int)(test_rng_next(&r) % (uint64_t)(d + 1)), t = perm[d];
            perm[d] = perm[j];
            perm[j] = t;
        }
        aclDataType dt = (aclDataType[]){ACL_FLOAT, ACL_FLOAT16, ACL_BF16}[test_rng_next(&r) % 3];
        aclDataType out_dt = test_rng_next(&r) % 3 ? dt : ACL_FLOAT;
        tview x = tv_perm(c.dims, c.nd, dt, perm, (int64_t)(test_rng_next(&r) % 3));
        double *xv = malloc((size_t)(n + 1) * 8), *got = malloc((size_t)(m + 1) * 8),
               *exact = malloc((size_t)(m + 1) * 8), *absum = malloc((size_t)(m + 1) * 8);
        float *want = malloc((size_t)(m + 1) * 4);
        fill_values(xv, n, 9000 + (uint64_t)it, (int)(test_rng_next(&r) % 3));
        for (int64_t i = 0; i < n; i++) tv_set(&x, i, xv[i]), xv[i] = tv_get(&x, i);
        spec_reduce(&c, xv, out_dt != ACL_FLOAT && out_dt != dt ? out_dt : ACL_FLOAT, want, exact,
                    absum);
        opgrad_set_num_threads(1 + (int)(test_rng_next(&r) % 3));
        aclnnStatus st = reduce_api(&x, c.mask, test_rng_next(&r) & 1, out_dt, got,
                                    (int64_t)(test_rng_next(&r) % 2));
        long bad = st != ACLNN_SUCCESS;
        for (int64_t o = 0; o < m && !bad; o++) {
            double w = test_round_to(out_dt, want[o]);
            bad += !(got[o] == w || (isnan(got[o]) && isnan(w)));
        }
        if (bad && bad_cases++ < 3) {
            fprintf(stderr, "    fuzz %d: rank %d dims", it, c.nd);
            for (int d = 0; d < c.nd; d++) fprintf(stderr, " %lld", (long long)c.dims[d]);
            fprintf(stderr, " mask %u %s -> %s: status %d\n", c.mask, og_dtype_name(dt),
                    og_dtype_name(out_dt), (int)st);
        }
        free(xv), free(got), free(exact), free(absum), free(want);
        tv_free(&x);
    }
    opgrad_set_num_threads(2);
    CHECKF(bad_cases == 0, "%ld random cases differ from the documented order", bad_cases);
    printf("  %d random reductions: all equal to the documented order\n", runs);
}

// Large sums: the block split across threads (few outputs, many summands) and exactness /
// accuracy / determinism on long reductions.
static void test_reduce_long_sums(void) {
    int64_t big = test_quick_mode() ? (1 << 18) + 77 : (1 << 21) + 77;
    const struct {
        int nd;
        int64_t dims[2];
        unsigned mask;
    } shapes[] = {
        {1, {big}, 1}, {2, {3, big / 3}, 2}, {2, {big / 3, 3}, 1}, {2, {big / 64, 64}, 1}};
    double worst_sqrt = 0, worst_depth = 0;
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
        red_case c = {shapes[si].nd, {shapes[si].dims[0], shapes[si].dims[1]}, shapes[si].mask};
        int64_t n = 1, m = 1, k = 1;
        for (int d = 0; d < c.nd; d++) {
            n *= c.dims[d];
            if ((c.mask >> d) & 1u)
                k *= c.dims[d];
            else
                m *= c.dims[d];
        }
        double *xv = malloc((size_t)n * 8), *got[3], *exact = malloc((size_t)m * 8),
               *absum = malloc((size_t)m * 8);
        float *want = malloc((size_t)m * 4);
        for (int kind = 0; kind < 3; kind++) {
            fill_values(xv, n, 77 + si * 3 + (uint64_t)kind, kind);
            tview x = tv(c.dims, c.nd, ACL_FLOAT);
            for (int64_t i = 0; i < n; i++) ((float *)x.buf)[i] = (float)xv[i];
            for (int64_t i = 0; i < n; i++) xv[i] = ((float *)x.buf)[i];
            spec_reduce(&c, xv, ACL_FLOAT, want, exact, absum);
            for (int t = 0; t < 3; t++) {
                got[t] = malloc((size_t)m * 8);
                opgrad_set_num_threads(t + 1);
                CHECK_EQ(reduce_api(&x, c.mask, false, ACL_FLOAT, got[t], 0), ACLNN_SUCCESS);
            }
            opgrad_set_num_threads(2);
            for (int64_t o = 0; o < m; o++) {
                CHECKF(memcmp(&got[0][o], &got[1][o], 8) == 0 &&
                           memcmp(&got[0][o], &got[2][o], 8) == 0,
                       "shape %zu kind %d output %lld: 1/2/3 threads differ", si, kind,
                       (long long)o);
                CHECKF(got[0][o] == (double)want[o], "shape %zu kind %d output %lld: not the spec",
                       si, kind, (long long)o);
                double err = fabs(got[0][o] - exact[o]);
                if (kind == 1) { // integers, |sum| <= 3 * 2^21 < 2^24 in absolute value
                    CHECKF(err == 0, "shape %zu: integer sum off by %g", si, err);
                    continue;
                }
                double u = 0x1p-24;
                double rigorous = spec_depth(k) * u * absum[o] * 1.001; // first order + slack
                double statistical = 2 * u * sqrt((double)k) * absum[o];
                CHECKF(err <= rigorous, "shape %zu kind %d: err %g above the tree bound %g", si,
                       kind, err, rigorous);
                CHECKF(err <= statistical,
                       "shape %zu kind %d: err %g above 2 u sqrt(K) sum|x| = %g", si, kind, err,
                       statistical);
                worst_sqrt = fmax(worst_sqrt, err / (u * sqrt((double)k) * absum[o]));
                worst_depth = fmax(worst_depth, err / (u * absum[o]));
            }
            for (int t = 0; t < 3; t++) free(got[t]);
            tv_free(&x);
        }
        free(xv), free(exact), free(absum), free(want);
    }
    printf("  long sums up to K = %lld: 1/2/3 threads bitwise equal, integers exact; "
           "max err / (u sqrt(K) sum|x|) = %.3g, max err / (u sum|x|) = %.3g\n",
           (long long)big, worst_sqrt, worst_depth);
}

// Random data against float64 over many lengths: the sqrt(K) bound and the measured ratios.
static void test_reduce_accuracy(void) {
    const int64_t ks[] = {2, 10, 16, 100, 255, 1000, 4096, 16384, 65536, 300000};
    printf("  %-8s %-14s %-14s %-10s\n", "K", "err/(u S)", "err/(u sqrtK S)", "depth");
    for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
        int64_t k = ks[ki], m = k <= 1000 ? 64 : 4;
        red_case c = {2, {m, k}, 2};
        double *xv = malloc((size_t)(m * k) * 8), *got = malloc((size_t)m * 8),
               *exact = malloc((size_t)m * 8), *absum = malloc((size_t)m * 8);
        float *want = malloc((size_t)m * 4);
        double r1 = 0, r2 = 0;
        for (int kind = 0; kind < 3; kind += 2) {
            fill_values(xv, m * k, 500 + (uint64_t)ki + (uint64_t)kind, kind);
            tview x = tv(c.dims, 2, ACL_FLOAT);
            for (int64_t i = 0; i < m * k; i++)
                ((float *)x.buf)[i] = (float)xv[i], xv[i] = (float)xv[i];
            spec_reduce(&c, xv, ACL_FLOAT, want, exact, absum);
            CHECK_EQ(reduce_api(&x, c.mask, true, ACL_FLOAT, got, 0), ACLNN_SUCCESS);
            for (int64_t o = 0; o < m; o++) {
                double err = fabs(got[o] - exact[o]), u = 0x1p-24;
                CHECKF(err <= 2 * u * sqrt((double)k) * absum[o] + 0.5 * u * fabs(exact[o]),
                       "K=%lld: err %g", (long long)k, err);
                r1 = fmax(r1, err / (u * absum[o]));
                r2 = fmax(r2, err / (u * sqrt((double)k) * absum[o]));
            }
            tv_free(&x);
        }
        printf("  %-8lld %-14.3g %-14.3g %-10d\n", (long long)k, r1, r2, spec_depth(k));
        free(xv), free(got), free(exact), free(absum), free(want);
    }
}

// ---------------------------------------------------------------------------------------------
// FusedAddScaleBackward against float64

static void test_fused_backward(void) {
    const int64_t shapes[][2] = {{5, 7}, {1000, 3}, {3, 1000}, {64, 64}, {1, 1}, {4097, 17}};
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++)
        for (int per_channel = 0; per_channel < 2; per_channel++)
            for (int di = 0; di < 3; di++) {
                aclDataType dt = di == 0 ? ACL_FLOAT : di == 1 ? ACL_FLOAT16 : ACL_BF16;
                int64_t n = shapes[si][0], c = shapes[si][1];
                int64_t xd[2] = {n, c}, cd[1] = {c}, sd[1] = {per_channel ? c : 1};
                tview g = tv(xd, 2, dt), x = tv(xd, 2, dt), b = tv(cd, 1, dt), s = tv(sd, 1, dt);
                tview gx = tv(xd, 2, dt), gb = tv(cd, 1, dt), gs = tv(sd, 1, dt);
                test_rng r;
                test_rng_seed(&r, 9 + si);
                for (int64_t i = 0; i < n * c; i++)
                    tv_set(&g, i, test_rng_uniform(&r, -2, 2)),
                        tv_set(&x, i, test_rng_uniform(&r, -5, 5));
                for (int64_t j = 0; j < c; j++) tv_set(&b, j, test_rng_uniform(&r, -5, 5));
                for (int64_t j = 0; j < sd[0]; j++) tv_set(&s, j, test_rng_uniform(&r, 0.5, 2));
                aclnnStatus st;
                OP_RUN(st,
                       aclnnFusedAddScaleBackwardGetWorkspaceSize(g.t, x.t, b.t, s.t, gx.t, gb.t,
                                                                  gs.t, &ws_, &ex_),
                       aclnnFusedAddScaleBackward);
                CHECK_EQ(st, ACLNN_SUCCESS);
                double *rb = calloc((size_t)c, 8), *rs = calloc((size_t)c, 8),
                       *mb = calloc((size_t)c, 8), *ms = calloc((size_t)c, 8);
                long bad = 0;
                for (int64_t i = 0; i < n * c; i++) {
                    int64_t j = i % c, sj = per_channel ? j : 0;
                    double gv = tv_get(&g, i), xv = tv_get(&x, i), bv = tv_get(&b, j),
                           sv = tv_get(&s, sj);
                    bad += !(test_ulp_error(dt, tv_get(&gx, i), gv * sv) <= 0.5); // one rounding
                    rb[j] += gv * sv, mb[j] += fabs(gv * sv);
                    rs[sj] += gv * (xv + bv), ms[sj] += fabs(gv) * (fabs(xv) + fabs(bv));
                }
                // the summation tree's bound (+1 for the product, +2 for (x + b) * g) in fp32, then
                // half an ulp of the gradient's dtype
                int64_t k_s = per_channel ? n : n * c;
                for (int64_t j = 0; j < c; j++)
                    bad += !(fabs(tv_get(&gb, j) - rb[j]) <=
                             (spec_depth(n) + 1) * 0x1p-24 * mb[j] + 0.5 * ulp_of(dt, rb[j]));
                for (int64_t j = 0; j < sd[0]; j++)
                    bad += !(fabs(tv_get(&gs, j) - rs[j]) <=
                             (spec_depth(k_s) + 2) * 0x1p-24 * ms[j] + 0.5 * ulp_of(dt, rs[j]));
                CHECKF(bad == 0, "FusedAddScaleBackward [%lld,%lld] %s scale %s: %ld results off",
                       (long long)n, (long long)c, og_dtype_name(dt), per_channel ? "[C]" : "[1]",
                       bad);
                free(rb), free(rs), free(mb), free(ms);
                tv_free(&g), tv_free(&x), tv_free(&b), tv_free(&s), tv_free(&gx), tv_free(&gb),
                    tv_free(&gs);
            }
    printf("  FusedAddScaleBackward: 6 shapes x scale [1]/[C] x 3 dtypes within the bounds\n");
}

// Column sums with fewer strips than threads: FusedAddScaleBackward [2000, 300] has one mapped
// strip of 300 outputs over 8 chunks of rows, which 2 and 3 threads cut into row shares; every
// output is the same bits on 1, 2 and 3 threads (the shares combine in the one-thread order), and
// with non-temporal stores for every output (OPGRAD_NT_BYTES=1: gradX in place by the map's NT
// kernels).
static void test_fused_backward_threads(void) {
    const int64_t n = 2000, c = 300, xd[2] = {n, c}, cd[1] = {c};
    for (int di = 0; di < 2; di++) {
        aclDataType dt = di == 0 ? ACL_FLOAT : ACL_BF16;
        tview g = tv(xd, 2, dt), x = tv(xd, 2, dt), b = tv(cd, 1, dt), s = tv(cd, 1, dt);
        tview out[4][3];
        test_rng r;
        test_rng_seed(&r, 31);
        for (int64_t i = 0; i < n * c; i++)
            tv_set(&g, i, test_rng_uniform(&r, -2, 2)), tv_set(&x, i, test_rng_uniform(&r, -5, 5));
        for (int64_t j = 0; j < c; j++)
            tv_set(&b, j, test_rng_uniform(&r, -5, 5)), tv_set(&s, j, test_rng_uniform(&r, 0.5, 2));
        for (int t = 0; t < 4; t++) { // 1, 2, 3 threads; 2 threads with NT stores
            out[t][0] = tv(xd, 2, dt), out[t][1] = tv(cd, 1, dt), out[t][2] = tv(cd, 1, dt);
            opgrad_set_num_threads(t < 3 ? t + 1 : 2);
            if (t == 3) setenv("OPGRAD_NT_BYTES", "1", 1);
            aclnnStatus st;
            OP_RUN(st,
                   aclnnFusedAddScaleBackwardGetWorkspaceSize(g.t, x.t, b.t, s.t, out[t][0].t,
                                                              out[t][1].t, out[t][2].t, &ws_, &ex_),
                   aclnnFusedAddScaleBackward);
            unsetenv("OPGRAD_NT_BYTES");
            CHECK_EQ(st, ACLNN_SUCCESS);
        }
        long bad = 0;
        for (int t = 1; t < 4; t++)
            for (int k = 0; k < 3; k++)
                bad += memcmp(out[t][k].buf, out[0][k].buf,
                              (size_t)(k == 0 ? n * c : c) * aclDataTypeSize(dt)) != 0;
        CHECKF(bad == 0,
               "FusedAddScaleBackward [2000,300] %s: %ld outputs differ between 1, 2 "
               "and 3 threads (or with NT stores)",
               og_dtype_name(dt), bad);
        for (int t = 0; t < 4; t++)
            for (int k = 0; k < 3; k++) tv_free(&out[t][k]);
        tv_free(&g), tv_free(&x), tv_free(&b), tv_free(&s);
    }
    opgrad_set_num_threads(2);
}

int main(void) {
    printf("  cpu isa: %s\n", opgrad_isa_name(opgrad_cpu_isa()));
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++)
        if (!test_isa_available(isa))
            printf("  note: ISA %s not supported by this CPU, skipped\n",
                   opgrad_isa_name((opgrad_isa)isa));
    RUN(test_reduce_kernels);
    RUN(test_reduce_matches_spec);
    RUN(test_reduce_fuzz);
    RUN(test_reduce_long_sums);
    RUN(test_reduce_accuracy);
    RUN(test_fused_backward);
    RUN(test_fused_backward_threads);
    return test_summary();
}
