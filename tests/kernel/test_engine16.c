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
 *    non-temporal CopyOut, and sizes past OG_EW_STREAM_IN_BYTES per core, where linear inputs are
 *    converted side by side and prefetched) give the exactly rounded fp32 result on every ISA and
 *    thread count;
 *  - the fused 16-bit path (every operand contiguous and of one 16-bit dtype: widen, compute,
 *    round in registers, vec16.h) gives bitwise what the buffered path gives for the same values
 *    in strided tensors (a NaN for a NaN: with two NaN operands the compiler may order a
 *    commutative operation either way, which picks the payload), for every operator that has it,
 * over every 16-bit encoding (NaN, inf, subnormals, -0), on every ISA, with and without
 * non-temporal stores, at odd lengths and offsets. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_gelu.h"
#include "aclnnop/aclnn_gelu_backward.h"
#include "aclnnop/aclnn_gelu_backward_v2.h"
#include "aclnnop/aclnn_gelu_v2.h"
#include "aclnnop/aclnn_hardswish.h"
#include "aclnnop/aclnn_hardswish_backward.h"
#include "aclnnop/aclnn_leaky_relu.h"
#include "aclnnop/aclnn_leaky_relu_backward.h"
#include "aclnnop/aclnn_mish.h"
#include "aclnnop/aclnn_mish_backward.h"
#include "aclnnop/aclnn_mul.h"
#include "aclnnop/aclnn_reduce_sum.h"
#include "aclnnop/aclnn_relu.h"
#include "aclnnop/aclnn_sigmoid.h"
#include "aclnnop/aclnn_sigmoid_backward.h"
#include "aclnnop/aclnn_silu.h"
#include "aclnnop/aclnn_silu_backward.h"
#include "aclnnop/aclnn_tanh.h"
#include "aclnnop/aclnn_tanh_backward.h"
#include "aclnnop/aclnn_threshold_backward.h"
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
    ew_case(ACL_BF16, ACL_BF16, ACL_BF16, 37, 300, true, false, &runs, &bad);  // broadcast row
    ew_case(ACL_BF16, ACL_BF16, ACL_FLOAT, 9, 1001, false, true, &runs, &bad); // fp32 out
    ew_case(ACL_BF16, ACL_FLOAT, ACL_FLOAT, 5, 2000, false, false, &runs,
            &bad); // mixed, in place fp32
    ew_case(ACL_FLOAT16, ACL_BF16, ACL_BF16, 3, 1500, true, true, &runs,
            &bad); // fp32 rounded to bf16
    ew_case(ACL_BF16, ACL_BF16, ACL_FLOAT16, 7, 777, false, false, &runs,
            &bad); // bf16 result -> fp16
    // more than OG_EW_STREAM_IN_BYTES per core on 1-3 threads: inputs converted side by side,
    // next tiles prefetched
    ew_case(ACL_BF16, ACL_BF16, ACL_BF16, 1, (3 << 20) + 77, false, false, &runs, &bad);
    ew_case(ACL_BF16, ACL_FLOAT, ACL_FLOAT, 2, (1 << 20) + 5, false, true, &runs, &bad);
    CHECKF(bad == 0, "%ld wrong elements", bad);
    printf("  %ld elementwise runs on 16-bit operands: exact on every ISA and thread count\n",
           runs);
}

// ---------------------------------------------------------------------------------------------
// The fused 16-bit path against the buffered one

enum { FUSED_OPS = 22 };
static const char *const FUSED_NAMES[FUSED_OPS] = {"Add",
                                                   "Adds(other 0.75, alpha -2)",
                                                   "Mul",
                                                   "Muls(1.5)",
                                                   "Relu",
                                                   "ThresholdBackward(0.5)",
                                                   "LeakyRelu(0.01)",
                                                   "LeakyReluBackward(0.2)",
                                                   "Hardswish",
                                                   "HardswishBackward",
                                                   "Sigmoid",
                                                   "SigmoidBackward",
                                                   "Tanh",
                                                   "TanhBackward",
                                                   "Silu",
                                                   "SiluBackward",
                                                   "Mish",
                                                   "MishBackward",
                                                   "Gelu",
                                                   "GeluBackward",
                                                   "GeluV2(none)",
                                                   "GeluBackwardV2(none)"};

// Runs fused op k on (a, b) -> o; a, b and o are views of one dtype and shape.
static aclnnStatus run_fused_op(int k, const aclTensor *a, const aclTensor *b, aclTensor *o) {
    float one = 1.0f, two = -2.0f, oth = 0.75f, m = 1.5f, th = 0.5f, sl = 0.01f, sl2 = 0.2f;
    aclScalar *s1 = aclCreateScalar(k == 1 ? (void *)&two : (void *)&one, ACL_FLOAT);
    aclScalar *s2 = aclCreateScalar(k == 1   ? &oth
                                    : k == 3 ? &m
                                    : k == 5 ? &th
                                    : k == 6 ? &sl
                                             : &sl2,
                                    ACL_FLOAT);
    aclnnStatus st = ACLNN_ERR_INNER;
    switch (k) {
    case 0:
        OP_RUN(st, aclnnAddGetWorkspaceSize(a, b, s1, o, &ws_, &ex_), aclnnAdd);
        break;
    case 1:
        OP_RUN(st, aclnnAddsGetWorkspaceSize(a, s2, s1, o, &ws_, &ex_), aclnnAdds);
        break;
    case 2:
        OP_RUN(st, aclnnMulGetWorkspaceSize(a, b, o, &ws_, &ex_), aclnnMul);
        break;
    case 3:
        OP_RUN(st, aclnnMulsGetWorkspaceSize(a, s2, o, &ws_, &ex_), aclnnMuls);
        break;
    case 4:
        OP_RUN(st, aclnnReluGetWorkspaceSize(a, o, &ws_, &ex_), aclnnRelu);
        break;
    case 5:
        OP_RUN(st, aclnnThresholdBackwardGetWorkspaceSize(b, a, s2, o, &ws_, &ex_),
               aclnnThresholdBackward);
        break;
    case 6:
        OP_RUN(st, aclnnLeakyReluGetWorkspaceSize(a, s2, o, &ws_, &ex_), aclnnLeakyRelu);
        break;
    case 7:
        OP_RUN(st, aclnnLeakyReluBackwardGetWorkspaceSize(b, a, s2, false, o, &ws_, &ex_),
               aclnnLeakyReluBackward);
        break;
    case 8:
        OP_RUN(st, aclnnHardswishGetWorkspaceSize(a, o, &ws_, &ex_), aclnnHardswish);
        break;
    case 9:
        OP_RUN(st, aclnnHardswishBackwardGetWorkspaceSize(b, a, o, &ws_, &ex_),
               aclnnHardswishBackward);
        break;
    case 10:
        OP_RUN(st, aclnnSigmoidGetWorkspaceSize(a, o, &ws_, &ex_), aclnnSigmoid);
        break;
    case 11:
        OP_RUN(st, aclnnSigmoidBackwardGetWorkspaceSize(b, a, o, &ws_, &ex_), aclnnSigmoidBackward);
        break;
    case 12:
        OP_RUN(st, aclnnTanhGetWorkspaceSize(a, o, &ws_, &ex_), aclnnTanh);
        break;
    case 13:
        OP_RUN(st, aclnnTanhBackwardGetWorkspaceSize(b, a, o, &ws_, &ex_), aclnnTanhBackward);
        break;
    case 14:
        OP_RUN(st, aclnnSiluGetWorkspaceSize(a, o, &ws_, &ex_), aclnnSilu);
        break;
    case 15:
        OP_RUN(st, aclnnSiluBackwardGetWorkspaceSize(b, a, o, &ws_, &ex_), aclnnSiluBackward);
        break;
    case 16:
        OP_RUN(st, aclnnMishGetWorkspaceSize(a, o, &ws_, &ex_), aclnnMish);
        break;
    case 17:
        OP_RUN(st, aclnnMishBackwardGetWorkspaceSize(b, a, o, &ws_, &ex_), aclnnMishBackward);
        break;
    case 18:
        OP_RUN(st, aclnnGeluGetWorkspaceSize(a, o, &ws_, &ex_), aclnnGelu);
        break;
    case 19:
        OP_RUN(st, aclnnGeluBackwardGetWorkspaceSize(b, a, o, &ws_, &ex_), aclnnGeluBackward);
        break;
    case 20:
        OP_RUN(st, aclnnGeluV2GetWorkspaceSize(a, 0, o, &ws_, &ex_), aclnnGeluV2);
        break;
    case 21: {
        char none[] = "none";
        OP_RUN(st, aclnnGeluBackwardV2GetWorkspaceSize(b, a, none, o, &ws_, &ex_),
               aclnnGeluBackwardV2);
        break;
    }
    }
    aclDestroyScalar(s1);
    aclDestroyScalar(s2);
    return st;
}

static void test_fused16_matches_buffered(void) {
    // every encoding as x, random encodings as the second operand; the contiguous tensors start
    // one element into their buffers (not 32-byte aligned, so non-temporal stores are skipped
    // there) or at the start (aligned)
    const int64_t n = 65536 + 45;
    uint16_t *x = malloc((size_t)(n + 1) * 2), *y = malloc((size_t)(n + 1) * 2);
    uint16_t *xs = malloc((size_t)(n + 1) * 4), *ys = malloc((size_t)(n + 1) * 4);
    uint16_t *of = malloc((size_t)(n + 1) * 2), *ob = malloc((size_t)n * 4);
    test_rng r;
    test_rng_seed(&r, 16);
    long runs = 0, bad = 0;
    for (int di = 0; di < 2; di++) {
        aclDataType dt = di ? ACL_FLOAT16 : ACL_BF16;
        for (int64_t i = 0; i <= n; i++) {
            x[i] = (uint16_t)(i * 40503u);
            y[i] = (uint16_t)test_rng_next(&r);
        }
        for (int64_t i = 0; i <= n; i++) xs[2 * i] = x[i], ys[2 * i] = y[i]; // strided copies
        for (int shift = 0; shift < 2; shift++) {
            int64_t d[1] = {n - shift}, st2[1] = {2}, sd[1] = {2 * n};
            aclTensor *ta = test_tensor(d, 1, dt, x + shift),
                      *tb = test_tensor(d, 1, dt, y + shift);
            aclTensor *to = test_tensor(d, 1, dt, of + shift);
            aclTensor *sa = aclCreateTensor(d, 1, dt, st2, 0, ACL_FORMAT_ND, sd, 1, xs + 2 * shift);
            aclTensor *sb = aclCreateTensor(d, 1, dt, st2, 0, ACL_FORMAT_ND, sd, 1, ys + 2 * shift);
            aclTensor *so = aclCreateTensor(d, 1, dt, st2, 0, ACL_FORMAT_ND, sd, 1, ob);
            { // the contiguous plan is the fused one: it needs no tile buffers
                uint64_t wf = 1, wb = 0;
                aclOpExecutor *ef = NULL, *eb = NULL;
                CHECK_EQ(aclnnMulGetWorkspaceSize(ta, tb, to, &wf, &ef), ACLNN_SUCCESS);
                CHECK_EQ(aclnnMulGetWorkspaceSize(sa, sb, so, &wb, &eb), ACLNN_SUCCESS);
                CHECK(wf == 0 && wb > 0);
                aclDestroyAclOpExecutor(ef), aclDestroyAclOpExecutor(eb);
            }
            for (int k = 0; k < FUSED_OPS; k++)
                for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
                    if (!test_isa_available(isa)) continue;
                    opgrad_set_max_isa((opgrad_isa)isa);
                    for (int nt = 0; nt < 2; nt++) {
                        if (nt) setenv("OPGRAD_NT_BYTES", "1", 1);
                        memset(of, 0xcd, (size_t)(n + 1) * 2);
                        memset(ob, 0xcd, (size_t)n * 4);
                        CHECK_EQ(run_fused_op(k, ta, tb, to), ACLNN_SUCCESS);
                        CHECK_EQ(run_fused_op(k, sa, sb, so), ACLNN_SUCCESS);
                        if (nt) unsetenv("OPGRAD_NT_BYTES");
                        long wrong = 0;
                        for (int64_t i = 0; i < n - shift; i++)
                            if (of[shift + i] != ob[2 * i] &&
                                !(isnan(widen(dt, of[shift + i])) && isnan(widen(dt, ob[2 * i]))) &&
                                wrong++ < 2)
                                fprintf(stderr,
                                        "    %s %s %s nt=%d shift=%d: [%lld] x=0x%04x y=0x%04x: "
                                        "fused 0x%04x, buffered 0x%04x\n",
                                        FUSED_NAMES[k], og_dtype_name(dt), isa_name(isa), nt, shift,
                                        (long long)i, x[shift + i], y[shift + i], of[shift + i],
                                        ob[2 * i]);
                        if (shift && of[0] != 0xcdcd) wrong++; // nothing before the tensor
                        bad += wrong;
                        runs++;
                    }
                }
            aclDestroyTensor(ta), aclDestroyTensor(tb), aclDestroyTensor(to);
            aclDestroyTensor(sa), aclDestroyTensor(sb), aclDestroyTensor(so);
        }
    }
    opgrad_set_max_isa(OPGRAD_ISA_COUNT - 1);
    CHECKF(bad == 0, "%ld elements where the fused path differs", bad);
    printf("  %ld runs of %d operators: fused 16-bit = buffered, bitwise, over every encoding\n",
           runs, FUSED_OPS);
    free(x), free(y), free(xs), free(ys), free(of), free(ob);
}

int main(void) {
    aclInit(NULL);
    RUN(test_narrow_special_lanes);
    RUN(test_reduce16_kernels);
    RUN(test_reduce_sum16);
    RUN(test_elementwise16);
    RUN(test_fused16_matches_buffered);
    aclFinalize();
    return test_summary();
}
