/* The engine's 16-bit paths (bf16 / fp16 read or written without going through scalar code):
 *  - f32 -> bf16 / fp16 CopyOut with a special value (subnormal, zero, inf, NaN, a tie, an
 *    overflow) in every lane of otherwise normal vectors: the AVX-512 build rounds whole vectors
 *    with the AVX512-BF16 instruction where the CPU has it and takes the integer path for vectors
 *    with a subnormal lane; every ISA must give og_f32_to_bf16's bits, with and without
 *    non-temporal stores, at every destination offset, canaries intact;
 *  - the reduction kernels over 16-bit values (rows_bf16/f16, chunks_bf16/f16) are bitwise the
 *    fp32 kernels run on the widened values, on every ISA;
 *  - ReduceSum of a bf16/fp16 tensor (read in place, widened in registers) equals ReduceSum of
 *    the same values widened to fp32, bitwise, for every thread count and ISA; with a 16-bit
 *    output it is that sum rounded once;
 *  - elementwise ops on 16-bit operands (tile and step boundaries, broadcast and mixed dtypes,
 *    non-temporal CopyOut, and sizes past the stream-in size gate (4 MiB) per core, where linear
 * inputs are converted side by side and prefetched) give the exactly rounded fp32 result on every
 * ISA and thread count. The fused 16-bit path of every operator against its buffered path
 * (OPGRAD_FUSED16=0) is in test_elementwise, derived from the operator list. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_mul.h"
#include "aclnnop/aclnn_reduce_sum.h"
#include "engine/blocking.h"
#include "engine/convert.h"
#include "engine/reduce.h"
#include "opgrad/opgrad.h"
#include "tensor/dtype.h"
#include "test.h"
#include "testutil.h"

static const char *isa_name(int isa) { return opgrad_isa_name((opgrad_isa)isa); }

static float widen(aclDataType dt, uint16_t h) {
    return dt == ACL_BF16 ? og_bf16_to_f32(h) : og_f16_to_f32(h);
}
static uint16_t narrow(aclDataType dt, float f) {
    return dt == ACL_BF16 ? og_f32_to_bf16(f) : og_f32_to_f16(f);
}

// A random 16-bit value of dt that is finite (sums stay comparable bit for bit).
static uint16_t rand16(test_rng *r, aclDataType dt, double lo, double hi) {
    return narrow(dt, (float)test_rng_uniform(r, lo, hi));
}

// ---------------------------------------------------------------------------------------------
// CopyOut: one special lane in a vector of normal values

static void test_narrow_special_lanes(void) {
    const float specials[] = {0x1p-149f,
                              -0x1p-149f,
                              0x1.fffffcp-127f,
                              0x1p-130f,
                              -0x1.8p-140f,
                              0.0f,
                              -0.0f,
                              INFINITY,
                              -INFINITY,
                              NAN,
                              -NAN,
                              test_u2f(0x7f800001u),
                              test_u2f(0xff800001u),
                              test_u2f(0x7fffffffu),
                              test_u2f(0x7fc00000u),
                              test_u2f(0x3f808000u) /* tie, even */,
                              test_u2f(0x3f818000u) /* tie, odd */,
                              test_u2f(0x3f80ffffu),
                              0x1.fffffep127f,
                              test_u2f(0x7f7f8000u) /* bf16 overflow tie */,
                              65520.0f,
                              65504.0f,
                              0x1p-24f,
                              0x1p-25f,
                              0x1.8p-25f,
                              0x1p-126f};
    enum { NS = sizeof specials / sizeof *specials, LEN = 32 * 8 + 21, OFF = 40 };
    test_rng r;
    test_rng_seed(&r, 16);
    float *src = malloc(LEN * sizeof(float));
    uint16_t *want = malloc(LEN * 2);
    long bad = 0, runs = 0;
    for (int dti = 0; dti < 2; dti++) {
        aclDataType dt = dti ? ACL_FLOAT16 : ACL_BF16;
        for (int s = 0; s < NS; s++)
            for (int lane = 0; lane < 32; lane += 3) {
                for (int i = 0; i < LEN; i++) src[i] = (float)test_rng_uniform(&r, -300.0, 300.0);
                for (int i = lane; i < LEN; i += 32 + (s & 1)) src[i] = specials[s];
                for (int i = 0; i < LEN; i++) want[i] = narrow(dt, src[i]);
                for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
                    if (!test_isa_available(isa)) continue;
                    for (int stream = 0; stream < 2; stream++)
                        for (int off = 0; off < 32; off += 7) {
                            uint16_t buf[OFF + LEN + OFF];
                            for (int i = 0; i < OFF + LEN + OFF; i++) buf[i] = 0xa5c3;
                            int len = LEN - off;
                            if (dt == ACL_BF16)
                                og_convert[isa].f32_to_bf16(src + off, buf + OFF, (size_t)len,
                                                            stream);
                            else
                                og_convert[isa].f32_to_f16(src + off, buf + OFF, (size_t)len,
                                                           stream);
                            og_stream_fence();
                            runs++;
                            for (int i = 0; i < len; i++)
                                if (buf[OFF + i] != want[off + i] && bad++ < 10)
                                    fprintf(
                                        stderr,
                                        "    %s %s stream=%d off=%d: %08x -> %04x, expected %04x\n",
                                        isa_name(isa), og_dtype_name(dt), stream, off,
                                        test_f2u(src[off + i]), buf[OFF + i], want[off + i]);
                            for (int i = 0; i < OFF; i++)
                                if (buf[i] != 0xa5c3 || buf[OFF + len + i] != 0xa5c3) bad++;
                        }
                }
            }
    }
    CHECKF(bad == 0, "%ld wrong conversions or canary hits", bad);
    printf("  %ld conversions of vectors with one special lane: every ISA = og_f32_to_bf16/f16\n",
           runs);
    free(src), free(want);
}

// ---------------------------------------------------------------------------------------------
// Reduction kernels over 16-bit values

static void test_reduce16_kernels(void) {
    enum { N = 64 * 256 + 77 };
    test_rng r;
    test_rng_seed(&r, 17);
    uint16_t *x16 = malloc(N * 2);
    float *x32 = malloc(N * 4);
    long runs = 0;
    for (int dti = 0; dti < 2; dti++) {
        aclDataType dt = dti ? ACL_FLOAT16 : ACL_BF16;
        for (int i = 0; i < N; i++)
            x16[i] = rand16(&r, dt, -1000.0, 1000.0), x32[i] = widen(dt, x16[i]);
        for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
            if (!test_isa_available(isa)) continue;
            const og_reduce_kernels *k = &og_reduce_kernel_table[isa];
            void (*chunks16)(const uint16_t *, size_t, float *) =
                dti ? k->chunks_f16 : k->chunks_bf16;
            void (*rows16)(const uint16_t *const *, size_t, size_t, float *) =
                dti ? k->rows_f16 : k->rows_bf16;
            const size_t cn[] = {0,   1,    15,   16,   17,           255,   256,
                                 257, 1000, 1024, 1025, 4 * 256 + 17, 16384, N - 5};
            for (size_t a = 0; a < sizeof cn / sizeof *cn; a++) {
                size_t n = cn[a], nc = (n + 255) / 256;
                for (size_t at = 0; at < 3; at++) { // unaligned starts too
                    gbuf s16 = gbuf_new(nc, 4), s32 = gbuf_new(nc, 4), ssc = gbuf_new(nc, 4);
                    chunks16(x16 + at, n, s16.f);
                    k->chunks(x32 + at, n, s32.f);
                    og_reduce_kernel_table[OPGRAD_ISA_SCALAR].chunks(x32 + at, n, ssc.f);
                    CHECKF(gbuf_guards_ok(&s16) && memcmp(s16.f, s32.f, nc * 4) == 0 &&
                               memcmp(s16.f, ssc.f, nc * 4) == 0,
                           "chunks_%s/%s n=%zu at=%zu", og_dtype_name(dt), isa_name(isa), n, at);
                    gbuf_free(&s16), gbuf_free(&s32), gbuf_free(&ssc);
                    runs++;
                }
            }
            const size_t rn[] = {1, 2, 15, 16, 17, 100, 256};
            const size_t rw[] = {1, 7, 16, 33, 64, 65, 130, 512};
            for (size_t a = 0; a < sizeof rn / sizeof *rn; a++)
                for (size_t b = 0; b < sizeof rw / sizeof *rw; b++) {
                    size_t n = rn[a], w = rw[b];
                    const uint16_t *r16[256];
                    const float *r32[256];
                    for (size_t i = 0; i < n; i++) {
                        size_t o = (i * 61 + 3) % (N - w);
                        r16[i] = x16 + o, r32[i] = x32 + o;
                    }
                    gbuf a16 = gbuf_new(16 * w, 4), a32 = gbuf_new(16 * w, 4);
                    for (size_t i = 0; i < 16 * w; i++)
                        a16.f[i] = a32.f[i] = (float)i * 0.125f - 3.0f;
                    rows16(r16, n, w, a16.f);
                    k->rows(r32, n, w, a32.f);
                    CHECKF(gbuf_guards_ok(&a16) && memcmp(a16.f, a32.f, 16 * w * 4) == 0,
                           "rows_%s/%s n=%zu w=%zu", og_dtype_name(dt), isa_name(isa), n, w);
                    gbuf_free(&a16), gbuf_free(&a32);
                    runs++;
                }
        }
    }
    printf("  %ld chunk/row kernel runs: 16-bit kernels = fp32 kernels on the widened values\n",
           runs);
    free(x16), free(x32);
}

// ---------------------------------------------------------------------------------------------
// ReduceSum of 16-bit tensors

static aclnnStatus reduce_sum(const aclTensor *x, const int64_t *rdims, int nr, aclDataType dt,
                              const aclTensor *out) {
    aclIntArray *a = aclCreateIntArray(rdims, (uint64_t)nr);
    aclnnStatus st;
    OP_RUN(st, aclnnReduceSumGetWorkspaceSize(x, a, false, dt, (aclTensor *)out, &ws_, &ex_),
           aclnnReduceSum);
    aclDestroyIntArray(a);
    return st;
}

typedef struct rcase {
    int nd;
    int64_t dims[4];
    int nr;
    int64_t rdims[3];
    bool transposed; // 2-D only: x is stored column-major (a strided view)
} rcase;

static void test_reduce_sum16(void) {
    const rcase cases[] = {
        {2, {7, 1000}, 1, {1}, false},  // lanes in place, a partial chunk
        {2, {3, 20000}, 1, {1}, false}, // two blocks, few outputs: blocks split across cores
        {1, {70001}, 1, {0}, false},    // one output, five blocks
        {2, {300, 24}, 1, {0}, false},  // strips in place, narrow rows
        {2, {40, 1030}, 1, {0}, false}, // strips in place, wider than one strip
        {3, {5, 33, 70}, 2, {0, 1}, false},  {2, {50, 1}, 1, {1}, false}, // one summand per output
        {2, {17, 300}, 1, {1}, true}, // strided: gathered, not in place
        {3, {2, 3, 4100}, 2, {0, 2}, false}, {2, {4, 16384 * 2 + 256 * 3 + 5}, 1, {1}, false},
    };
    test_rng r;
    test_rng_seed(&r, 18);
    long runs = 0;
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
        const rcase *c = &cases[ci];
        int64_t n = 1, m = 1, odims[4];
        int ond = 0;
        for (int d = 0; d < c->nd; d++) {
            n *= c->dims[d];
            bool red = false;
            for (int j = 0; j < c->nr; j++) red |= c->rdims[j] == d;
            if (!red) m *= c->dims[d], odims[ond++] = c->dims[d];
        }
        int64_t strides[4], storage = n;
        if (c->transposed)
            strides[0] = 1, strides[1] = c->dims[0];
        else {
            strides[c->nd - 1] = 1;
            for (int d = c->nd - 2; d >= 0; d--) strides[d] = strides[d + 1] * c->dims[d + 1];
        }
        for (int dti = 0; dti < 2; dti++) {
            aclDataType dt = dti ? ACL_FLOAT16 : ACL_BF16;
            uint16_t *x16 = malloc((size_t)n * 2), *o16 = malloc((size_t)m * 2);
            float *x32 = malloc((size_t)n * 4), *ref = malloc((size_t)m * 4),
                  *got = malloc((size_t)m * 4);
            for (int64_t i = 0; i < n; i++)
                x16[i] = rand16(&r, dt, -8.0, 8.0), x32[i] = widen(dt, x16[i]);
            aclTensor *t16 = aclCreateTensor(c->dims, (uint64_t)c->nd, dt, strides, 0,
                                             ACL_FORMAT_ND, &storage, 1, x16);
            aclTensor *t32 = aclCreateTensor(c->dims, (uint64_t)c->nd, ACL_FLOAT, strides, 0,
                                             ACL_FORMAT_ND, &storage, 1, x32);
            aclTensor *to = test_tensor(odims, ond, ACL_FLOAT, got),
                      *tr = test_tensor(odims, ond, ACL_FLOAT, ref);
            aclTensor *to16 = test_tensor(odims, ond, dt, o16);
            opgrad_set_num_threads(1);
            opgrad_set_max_isa(OPGRAD_ISA_SCALAR);
            CHECK_EQ(reduce_sum(t32, c->rdims, c->nr, ACL_FLOAT, tr), ACLNN_SUCCESS);
            for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
                if (!test_isa_available(isa)) continue;
                opgrad_set_max_isa((opgrad_isa)isa);
                for (int th = 1; th <= 3; th++) {
                    opgrad_set_num_threads(th);
                    memset(got, 0xcd, (size_t)m * 4);
                    CHECK_EQ(reduce_sum(t16, c->rdims, c->nr, ACL_FLOAT, to), ACLNN_SUCCESS);
                    CHECKF(memcmp(got, ref, (size_t)m * 4) == 0,
                           "case %zu %s %s threads %d: fp32 sum differs", ci, og_dtype_name(dt),
                           isa_name(isa), th);
                    CHECK_EQ(reduce_sum(t16, c->rdims, c->nr, dt, to16), ACLNN_SUCCESS);
                    long bad = 0;
                    for (int64_t i = 0; i < m; i++) bad += o16[i] != narrow(dt, ref[i]);
                    CHECKF(bad == 0,
                           "case %zu %s %s threads %d: %ld outputs not the fp32 sum rounded once",
                           ci, og_dtype_name(dt), isa_name(isa), th, bad);
                    runs++;
                }
            }
            opgrad_set_max_isa(OPGRAD_ISA_COUNT - 1);
            opgrad_set_num_threads(2);
            aclDestroyTensor(t16), aclDestroyTensor(t32), aclDestroyTensor(to),
                aclDestroyTensor(tr);
            aclDestroyTensor(to16);
            free(x16), free(o16), free(x32), free(ref), free(got);
        }
    }
    printf("  %ld ReduceSum runs: 16-bit inputs = the fp32 sum of the widened values, every ISA "
           "and thread count\n",
           runs);
}

// ---------------------------------------------------------------------------------------------
// Elementwise ops on 16-bit operands

// out = a + b (or a * b) over n elements; a is [n] or broadcast from [w] (n = rows * w).
static void ew_case(aclDataType da, aclDataType db, aclDataType dout, int64_t rows, int64_t w,
                    bool bcast_b, bool mul, long *runs, long *bad_total) {
    int64_t n = rows * w, nb = bcast_b ? w : n;
    test_rng r;
    test_rng_seed(&r, (uint64_t)(n * 7 + w + da * 3 + db * 5 + dout * 11 + mul));
    size_t ea = aclDataTypeSize(da), eb = aclDataTypeSize(db), eo = aclDataTypeSize(dout);
    char *a = malloc((size_t)n * ea), *b = malloc((size_t)nb * eb), *o = malloc((size_t)n * eo);
    float *want = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) test_store(a, i, da, test_rng_uniform(&r, -50.0, 50.0));
    for (int64_t i = 0; i < nb; i++) test_store(b, i, db, test_rng_uniform(&r, -50.0, 50.0));
    // promoted dtype: the same 16-bit type, else fp32
    aclDataType pt = da == db ? da : ACL_FLOAT;
    for (int64_t i = 0; i < n; i++) {
        float x = (float)test_load(a, i, da), y = (float)test_load(b, bcast_b ? i % w : i, db);
        float v = mul ? x * y : x + y;
        if (pt != ACL_FLOAT) v = widen(pt, narrow(pt, v));
        want[i] = v;
    }
    int64_t d2[2] = {rows, w}, d1[1] = {w};
    aclTensor *ta = test_tensor(d2, 2, da, a);
    aclTensor *tb = bcast_b ? test_tensor(d1, 1, db, b) : test_tensor(d2, 2, db, b);
    aclTensor *to = test_tensor(d2, 2, dout, o);
    float one = 1.0f;
    aclScalar *alpha = aclCreateScalar(&one, ACL_FLOAT);
    for (int nt = 0; nt < 2; nt++) {
        if (nt) setenv("OPGRAD_NT_BYTES", "1", 1); // non-temporal CopyOut
        for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
            if (!test_isa_available(isa)) continue;
            opgrad_set_max_isa((opgrad_isa)isa);
            for (int th = 1; th <= 3; th++) {
                opgrad_set_num_threads(th);
                memset(o, 0xcd, (size_t)n * eo);
                aclnnStatus st;
                if (mul)
                    OP_RUN(st, aclnnMulGetWorkspaceSize(ta, tb, to, &ws_, &ex_), aclnnMul);
                else
                    OP_RUN(st, aclnnAddGetWorkspaceSize(ta, tb, alpha, to, &ws_, &ex_), aclnnAdd);
                CHECK_EQ(st, ACLNN_SUCCESS);
                long bad = 0;
                for (int64_t i = 0; i < n; i++) {
                    double g = test_load(o, i, dout), e = test_round_to(dout, want[i]);
                    if (g != e && bad++ < 3)
                        fprintf(stderr,
                                "    %s %s%s%s->%s [%lld,%lld]%s nt=%d threads=%d: [%lld] = %g, "
                                "expected %g\n",
                                isa_name(isa), og_dtype_name(da), mul ? "*" : "+",
                                og_dtype_name(db), og_dtype_name(dout), (long long)rows,
                                (long long)w, bcast_b ? " bcast" : "", nt, th, (long long)i, g, e);
                }
                *bad_total += bad;
                (*runs)++;
            }
        }
        if (nt) unsetenv("OPGRAD_NT_BYTES");
    }
    opgrad_set_max_isa(OPGRAD_ISA_COUNT - 1);
    opgrad_set_num_threads(2);
    aclDestroyScalar(alpha);
    aclDestroyTensor(ta), aclDestroyTensor(tb), aclDestroyTensor(to);
    free(a), free(b), free(o), free(want);
}

static void test_elementwise16(void) {
    // lengths around COPYIN_STEP (256), bf16 tiles of 3 operands (1344 with the 16 KiB budget),
    // 2-thread splits, and odd tails
    const int64_t ns[] = {1, 31, 32, 33, 255, 256, 257, 1343, 1344, 1345, 2688, 2689, 5000, 12289};
    long runs = 0, bad = 0;
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
        ew_case(ACL_BF16, ACL_BF16, ACL_BF16, 1, ns[i], false, false, &runs, &bad);
        ew_case(ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT16, 1, ns[i], false, true, &runs, &bad);
    }
    ew_case(ACL_BF16, ACL_BF16, ACL_BF16, 37, 300, true, false, &runs, &bad); // broadcast row
    ew_case(ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT16, 50, 131, true, true, &runs, &bad); // row, fused
    ew_case(ACL_BF16, ACL_BF16, ACL_BF16, 300, 100, true, true, &runs, &bad); // short row, buffered
    ew_case(ACL_BF16, ACL_BF16, ACL_FLOAT, 9, 1001, false, true, &runs, &bad); // fp32 out
    ew_case(ACL_BF16, ACL_FLOAT, ACL_FLOAT, 5, 2000, false, false, &runs,
            &bad); // mixed, in place fp32
    ew_case(ACL_FLOAT16, ACL_BF16, ACL_BF16, 3, 1500, true, true, &runs,
            &bad); // fp32 rounded to bf16
    ew_case(ACL_BF16, ACL_BF16, ACL_FLOAT16, 7, 777, false, false, &runs,
            &bad); // bf16 result -> fp16
    // more than the stream-in size gate (4 MiB) per core on 1-3 threads: inputs converted side by
    // side, next tiles prefetched
    ew_case(ACL_BF16, ACL_BF16, ACL_BF16, 1, (3 << 20) + 77, false, false, &runs, &bad);
    ew_case(ACL_BF16, ACL_FLOAT, ACL_FLOAT, 2, (1 << 20) + 5, false, true, &runs, &bad);
    CHECKF(bad == 0, "%ld wrong elements", bad);
    printf("  %ld elementwise runs on 16-bit operands: exact on every ISA and thread count\n",
           runs);
}

// ---------------------------------------------------------------------------------------------
// The fused 16-bit loop's own rounding (AVX2 bf16 splits 16 values into even and odd elements and
// joins them when it stores): a * b with a special product (NaN with a payload, inf * 0, overflow,
// a subnormal, a tie of either parity, signed zeros) at every position of a 16-element group,
// among normal products, equals og_f32_to_bf16 / og_f32_to_f16 of the fp32 product, on every ISA,
// with and without non-temporal stores, from aligned and odd output addresses.

static void test_fused16_special_lanes(void) {
    // pairs (a, b) as fp32 values exactly representable in bf16 and fp16 where it matters
    const float pa[] = {NAN,   INFINITY, 3.0e38f, 1.0e-20f, 1.0078125f, 1.0234375f,
                        -0.0f, 0.0f,     -2.0f,   65504.0f, 0x1p-14f,   0x1.02p0f};
    const float pb[] = {1.0f, 0.0f,  3.0e38f,  -1.0e-20f, 1.0078125f, 1.0078125f,
                        5.0f, -3.0f, INFINITY, 2.0f,      0x1p-11f,   0x1.01p0f};
    enum { NS = sizeof pa / sizeof *pa, N = 16 * 3 + 5, PAD = 16 };
    long runs = 0, bad = 0;
    for (int dti = 0; dti < 2; dti++) {
        aclDataType dt = dti ? ACL_FLOAT16 : ACL_BF16;
        uint16_t *a = malloc(2 * (N + PAD)), *b = malloc(2 * (N + PAD)), *o = malloc(2 * (N + PAD));
        for (int sp = 0; sp < NS; sp++)
            for (int pos = 0; pos < 16; pos++) {
                for (int i = 0; i < N; i++) { // normal products elsewhere
                    a[i] = narrow(dt, 1.0f + (float)i / 64.0f);
                    b[i] = narrow(dt, 1.5f - (float)i / 128.0f);
                }
                for (int i = pos; i < N; i += 16)
                    a[i] = narrow(dt, pa[sp]), b[i] = narrow(dt, pb[sp]);
                if (sp == 0) a[pos] = dti ? 0x7e05 : 0x7f85; // a quiet NaN with a payload
                if (sp == 0 && pos + 16 < N) a[pos + 16] = dti ? 0xfc21 : 0xff91; // signalling
                for (int nt = 0; nt < 2; nt++) {
                    if (nt) setenv("OPGRAD_NT_BYTES", "1", 1);
                    for (int off = 0; off < 2; off++) { // output from an odd element on
                        int64_t d[1] = {N - off};
                        aclTensor *ta = test_tensor(d, 1, dt, a + off),
                                  *tb = test_tensor(d, 1, dt, b + off),
                                  *to = test_tensor(d, 1, dt, o + off);
                        for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
                            if (!test_isa_available(isa)) continue;
                            opgrad_set_max_isa((opgrad_isa)isa);
                            memset(o, 0xcd, 2 * (N + PAD));
                            aclnnStatus st;
                            OP_RUN(st, aclnnMulGetWorkspaceSize(ta, tb, to, &ws_, &ex_), aclnnMul);
                            CHECK_EQ(st, ACLNN_SUCCESS);
                            for (int i = off; i < N; i++) {
                                uint16_t want = narrow(dt, widen(dt, a[i]) * widen(dt, b[i]));
                                if (o[i] != want && bad++ < 5)
                                    fprintf(stderr,
                                            "    %s %s special %d at %d, nt=%d off=%d: [%d] = "
                                            "0x%04x, expected 0x%04x\n",
                                            isa_name(isa), og_dtype_name(dt), sp, pos, nt, off, i,
                                            o[i], want);
                            }
                            CHECKF(o[N] == 0xcdcd && (off == 0 || o[0] == 0xcdcd),
                                   "%s write outside the output", isa_name(isa));
                            runs++;
                        }
                        aclDestroyTensor(ta), aclDestroyTensor(tb), aclDestroyTensor(to);
                    }
                    if (nt) unsetenv("OPGRAD_NT_BYTES");
                }
            }
        free(a), free(b), free(o);
    }
    opgrad_set_max_isa(OPGRAD_ISA_COUNT - 1);
    CHECKF(bad == 0, "%ld wrong elements", bad);
    printf("  %ld fused 16-bit runs with special products: og_f32_to_bf16 / _f16's bits\n", runs);
}

// ---------------------------------------------------------------------------------------------
// The fused 16-bit path is planned where it applies (test_elementwise compares it with the
// buffered path of every operator): contiguous operands of one 16-bit dtype need no tile buffers,
// nor does a row broadcast over the outer dims when it is at least OG_BLOCK_EW_ROWWISE_MIN long
// (read in place, one call per row); strided ones, shorter rows, or OPGRAD_FUSED16=0 do.

static void test_fused16_planned(void) {
    enum { N = 4099 };
    uint16_t *a = calloc(2 * N, 2), *b = calloc(2 * N, 2), *o = calloc(2 * N, 2);
    for (int dti = 0; dti < 2; dti++) {
        aclDataType dt = dti ? ACL_FLOAT16 : ACL_BF16;
        int64_t d[1] = {N}, st2[1] = {2}, sd[1] = {2 * N};
        aclTensor *ta = test_tensor(d, 1, dt, a), *tb = test_tensor(d, 1, dt, b),
                  *to = test_tensor(d, 1, dt, o);
        aclTensor *sa = aclCreateTensor(d, 1, dt, st2, 0, ACL_FORMAT_ND, sd, 1, a);
        uint64_t ws[3] = {1, 0, 0};
        aclOpExecutor *ex[3] = {0};
        CHECK_EQ(aclnnMulGetWorkspaceSize(ta, tb, to, &ws[0], &ex[0]), ACLNN_SUCCESS);
        CHECK_EQ(aclnnMulGetWorkspaceSize(sa, tb, to, &ws[1], &ex[1]), ACLNN_SUCCESS);
        setenv("OPGRAD_FUSED16", "0", 1);
        CHECK_EQ(aclnnMulGetWorkspaceSize(ta, tb, to, &ws[2], &ex[2]), ACLNN_SUCCESS);
        unsetenv("OPGRAD_FUSED16");
        CHECKF(ws[0] == 0 && ws[1] > 0 && ws[2] > 0,
               "%s Mul workspace: contiguous %llu, strided %llu, OPGRAD_FUSED16=0 %llu",
               og_dtype_name(dt), (unsigned long long)ws[0], (unsigned long long)ws[1],
               (unsigned long long)ws[2]);
        for (int k = 0; k < 3; k++) aclDestroyAclOpExecutor(ex[k]);
        // Muls computes bf16 in fp32 (as ops-math does): with bf16 operands that is still the
        // fused path (each result rounded once either way)
        float two = 2.5f;
        aclScalar *s = aclCreateScalar(&two, ACL_FLOAT);
        uint64_t wsm = 12345;
        aclOpExecutor *em = NULL;
        CHECK_EQ(aclnnMulsGetWorkspaceSize(ta, s, to, &wsm, &em), ACLNN_SUCCESS);
        CHECKF(wsm == 0, "%s Muls workspace %llu", og_dtype_name(dt), (unsigned long long)wsm);
        aclDestroyAclOpExecutor(em);
        aclDestroyScalar(s);
        // [R, W] * [W]: a wide row is read in place, a short one goes through a buffer
        for (int wide = 0; wide < 2; wide++) {
            int64_t w = wide ? OG_BLOCK_EW_ROWWISE_MIN : OG_BLOCK_EW_ROWWISE_MIN - 1;
            int64_t d2[2] = {N / w, w}, d1[1] = {w};
            aclTensor *x2 = test_tensor(d2, 2, dt, a), *row = test_tensor(d1, 1, dt, b),
                      *o2 = test_tensor(d2, 2, dt, o);
            uint64_t wsb = 12345;
            aclOpExecutor *eb = NULL;
            CHECK_EQ(aclnnMulGetWorkspaceSize(x2, row, o2, &wsb, &eb), ACLNN_SUCCESS);
            CHECKF((wsb == 0) == (wide == 1), "%s Mul [%lld, %lld] * [%lld]: workspace %llu",
                   og_dtype_name(dt), (long long)d2[0], (long long)w, (long long)w,
                   (unsigned long long)wsb);
            aclDestroyAclOpExecutor(eb);
            aclDestroyTensor(x2), aclDestroyTensor(row), aclDestroyTensor(o2);
        }
        aclDestroyTensor(ta), aclDestroyTensor(tb), aclDestroyTensor(to), aclDestroyTensor(sa);
    }
    free(a), free(b), free(o);
}

int main(void) {
    aclInit(NULL);
    RUN(test_narrow_special_lanes);
    RUN(test_reduce16_kernels);
    RUN(test_reduce_sum16);
    RUN(test_elementwise16);
    RUN(test_fused16_special_lanes);
    RUN(test_fused16_planned);
    aclFinalize();
    return test_summary();
}
