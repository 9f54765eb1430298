/* Kernel-level tests of the CopyIn / CopyOut conversions (engine/convert.h, og_convert[isa]):
 *  - f16 -> f32 and bf16 -> f32 exact for all 65,536 encodings (against independent ldexp-based
 *    decoders), NaN stays NaN with its payload;
 *  - f32 -> f16 and f32 -> bf16 round to nearest even (against test_round_to, which rounds the
 *    double straight to the format): every 16-bit value, every midpoint between neighbours and
 *    the fp32 values next to it, overflow and underflow boundaries, subnormals, NaNs, random bit
 *    patterns;
 *  - f32 copy bitwise;
 *  - with and without `stream` (non-temporal stores), many lengths, destination offsets across a
 *    64-byte line (in steps of the element size: a 16-bit store to an odd address is not a
 *    valid C access), guard canaries around every destination;
 *  - all ISAs (and the vector body vs the scalar tail of one ISA) give the same bits.
 * OPGRAD_TEST_QUICK=1 shrinks the random samples (sizes only; the checks never change). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_mish_backward.h"
#include "engine/convert.h"
#include "engine/isa_table.h"
#include "opgrad/opgrad.h"
#include "test.h"
#include "testutil.h"

static const char *isa_name(int isa) { return opgrad_isa_name((opgrad_isa)isa); }

static void note_skipped(void) {
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++)
        if (!test_isa_available(isa))
            printf("  note: ISA %s not supported by this CPU, skipped\n", isa_name(isa));
}

// Independent decoders (no library code): sign, exponent, mantissa -> double.
static double dec_f16(uint16_t h) {
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double s = (h & 0x8000) ? -1.0 : 1.0;
    if (e == 0x1f) return m ? NAN : s * INFINITY;
    if (e == 0) return s * ldexp(m, -24);
    return s * ldexp(1024 + m, e - 25);
}
static double dec_bf16(uint16_t b) {
    int e = (b >> 7) & 0xff, m = b & 0x7f;
    double s = (b & 0x8000) ? -1.0 : 1.0;
    if (e == 0xff) return m ? NAN : s * INFINITY;
    if (e == 0) return s * ldexp(m, -133);
    return s * ldexp(128 + m, e - 134);
}
static bool is_nan16(aclDataType dt, uint16_t h) {
    return dt == ACL_FLOAT16 ? ((h & 0x7c00) == 0x7c00 && (h & 0x3ff))
                             : ((h & 0x7f80) == 0x7f80 && (h & 0x7f));
}

// Widening: exact value; NaN: NaN with the same sign and the same payload bits (the quiet bit
// may be set on the way: IEEE conversions quiet signalling NaNs).
static bool widen_ok(aclDataType dt, uint16_t h, float got) {
    uint32_t g = test_f2u(got);
    if (is_nan16(dt, h)) {
        if (!isnan(got) || (g >> 31) != (uint32_t)(h >> 15)) return false;
        uint32_t quiet = 0x00400000u;
        uint32_t want =
            dt == ACL_FLOAT16 ? ((uint32_t)(h & 0x3ff) << 13) : ((uint32_t)(h & 0x7f) << 16);
        return ((g & 0x007fffffu) | quiet) == (want | quiet);
    }
    double v = dt == ACL_FLOAT16 ? dec_f16(h) : dec_bf16(h);
    return g == test_f2u((float)v); // (float)v is exact; the sign of zero is kept
}

// Narrowing: round to nearest even (test_round_to rounds the double directly), overflow to
// inf, sign kept (also for zero results); NaN stays NaN.
static bool narrow_ok(aclDataType dt, float in, uint16_t got) {
    if (isnan(in)) return is_nan16(dt, got);
    if (is_nan16(dt, got)) return false;
    double want = test_round_to(dt, in);
    double have = dt == ACL_FLOAT16 ? dec_f16(got) : dec_bf16(got);
    return have == want && signbit(have) == signbit(want);
}

// ---------------------------------------------------------------------------------------------

typedef void (*widen_fn)(const uint16_t *, float *, size_t);
typedef void (*narrow_fn)(const float *, uint16_t *, size_t, bool);

static widen_fn widen_of(int isa, aclDataType dt) {
    return dt == ACL_FLOAT16 ? og_convert[isa].f16_to_f32 : og_convert[isa].bf16_to_f32;
}
static narrow_fn narrow_of(int isa, aclDataType dt) {
    return dt == ACL_FLOAT16 ? og_convert[isa].f32_to_f16 : og_convert[isa].f32_to_bf16;
}

static void test_tables(void) {
    const og_convert_table expect[OPGRAD_ISA_COUNT] = {
        {og_cvt_f16_to_f32__scalar, og_cvt_bf16_to_f32__scalar, og_cvt_f32_to_f16__scalar,
         og_cvt_f32_to_bf16__scalar, og_copy_f32__scalar},
        {og_cvt_f16_to_f32__avx2, og_cvt_bf16_to_f32__avx2, og_cvt_f32_to_f16__avx2,
         og_cvt_f32_to_bf16__avx2, og_copy_f32__avx2},
        {og_cvt_f16_to_f32__avx512, og_cvt_bf16_to_f32__avx512, og_cvt_f32_to_f16__avx512,
         og_cvt_f32_to_bf16__avx512, og_copy_f32__avx512},
    };
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        // from AVX512-BF16 up the bf16 CopyOut is the vcvtne2ps2bf16 variant
        og_convert_table want = expect[og_isa_build((opgrad_isa)isa)];
        if (isa >= OPGRAD_ISA_AVX512_BF16) want.f32_to_bf16 = og_cvt_f32_to_bf16i__avx512;
        CHECKF(memcmp(&og_convert[isa], &want, sizeof want) == 0, "og_convert[%s]", isa_name(isa));
    }
    note_skipped();
}

// All 65,536 encodings in one call (vector body + tail), then every window of up to 40
// elements around the interesting encodings at every start (tails of every length).
static void widen_exhaustive(aclDataType dt) {
    enum { N = 65536 };
    uint16_t *src = malloc(N * 2);
    float *dst = malloc(N * 4);
    for (int i = 0; i < N; i++) src[i] = (uint16_t)i;
    uint16_t starts[] = {0,          1,          0x03f0,     0x3bf8,     0x7bf0, 0x7c00 - 5,
                         0x7df0,     0x7e00 - 3, 0x7f70,     0x7f80 - 5, 0x7fb8, 0x7ff0,
                         0x8000 - 3, 0xfbf0,     0xfc00 - 5, 0xff75,     0xffd0};
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!test_isa_available(isa)) continue;
        widen_fn f = widen_of(isa, dt);
        memset(dst, 0, N * 4);
        f(src, dst, N);
        long bad = 0;
        for (int i = 0; i < N; i++)
            if (!widen_ok(dt, src[i], dst[i]) && bad++ < 5)
                fprintf(stderr, "    %s %s: %04x -> %08x\n", isa_name(isa),
                        dt == ACL_FLOAT16 ? "f16" : "bf16", src[i], test_f2u(dst[i]));
        CHECKF(bad == 0, "%s: %ld wrong conversions of all encodings", isa_name(isa), bad);
        // windows, guarded
        for (size_t s = 0; s < sizeof starts / sizeof *starts; s++)
            for (size_t len = 0; len <= 40; len++) {
                size_t st = starts[s];
                if (st + len > N) continue;
                float buf[64 + 40 + 64];
                for (int k = 0; k < 168; k++) buf[k] = test_u2f(0x7fa5c3e1u);
                f(src + st, buf + 64, len);
                for (size_t k = 0; k < len; k++)
                    if (!widen_ok(dt, src[st + k], buf[64 + k]) && bad++ < 10)
                        fprintf(stderr, "    %s window %zu+%zu: %04x -> %08x\n", isa_name(isa), st,
                                len, src[st + k], test_f2u(buf[64 + k]));
                for (int k = 0; k < 168; k++)
                    if ((k < 64 || k >= 64 + (int)len) && test_f2u(buf[k]) != 0x7fa5c3e1u) bad++;
            }
        CHECKF(bad == 0, "%s: %ld wrong conversions or canary hits in windows", isa_name(isa), bad);
    }
    free(src), free(dst);
}
static void test_f16_to_f32_exhaustive(void) { widen_exhaustive(ACL_FLOAT16); }
static void test_bf16_to_f32_exhaustive(void) { widen_exhaustive(ACL_BF16); }

// fp32 inputs for the narrowing tests.
static size_t narrow_inputs(aclDataType dt, float **out) {
    bool quick = test_quick_mode();
    size_t nrand = quick ? (size_t)1 << 16 : (size_t)1 << 20;
    size_t cap = 65536 * 6 + nrand + 256, n = 0;
    float *v = malloc(cap * sizeof *v);
    for (uint32_t h = 0; h < 65536; h++) {
        uint16_t e = (uint16_t)h;
        double a = dt == ACL_FLOAT16 ? dec_f16(e) : dec_bf16(e);
        if (isnan(a)) continue;
        v[n++] = (float)a; // exact
        if (isinf(a)) continue;
        // the midpoint to the next encoding away from zero, and its fp32 neighbours
        uint16_t next = (uint16_t)(e + 1);
        double b = dt == ACL_FLOAT16 ? dec_f16(next) : dec_bf16(next);
        if (isnan(b)) continue;
        if (isinf(b)) // the overflow threshold: max + half an ulp of the top binade
            b = a + (a - (dt == ACL_FLOAT16 ? dec_f16((uint16_t)(e - 1))
                                            : dec_bf16((uint16_t)(e - 1))));
        float mid = (float)((a + b) / 2); // exact: 12 (9) significant bits
        v[n++] = mid;
        v[n++] = nextafterf(mid, 0.0f);
        v[n++] = nextafterf(mid, mid > 0 ? INFINITY : -INFINITY);
    }
    static const uint32_t specials[] = {0x7f800001u,
                                        0x7f802000u,
                                        0x7fbfffffu,
                                        0x7fc00000u,
                                        0x7fc00001u,
                                        0xffc00000u,
                                        0xff800001u,
                                        0x7f801fffu,
                                        0x7fffe000u,
                                        0x7f800000u,
                                        0xff800000u,
                                        0x7f7fffffu,
                                        0xff7fffffu,
                                        0x00000001u,
                                        0x80000001u,
                                        0x007fffffu,
                                        0x00800000u,
                                        0x80800000u,
                                        0x33000000u /* 2^-25 */,
                                        0x33000001u,
                                        0x32ffffffu,
                                        0x33400000u /* 1.5 * 2^-25 */,
                                        0x33c00000u /* 1.5 * 2^-24 */,
                                        0x387fc000u,
                                        0x387fe000u,
                                        0x38800000u,
                                        0x477fe000u /* 65504 */,
                                        0x477fefffu,
                                        0x477ff000u,
                                        0x477ff001u,
                                        0x47800000u,
                                        0x7f7f7fffu,
                                        0x7f7f8000u,
                                        0x7f7f8001u,
                                        0x7f7fc000u,
                                        0x00008000u,
                                        0x00018000u,
                                        0x00010000u,
                                        0x3f808000u,
                                        0x3f818000u,
                                        0x3f808001u,
                                        0x3f807fffu};
    for (size_t i = 0; i < sizeof specials / sizeof *specials; i++) {
        v[n++] = test_u2f(specials[i]);
        v[n++] = test_u2f(specials[i] ^ 0x80000000u);
    }
    test_rng r;
    test_rng_seed(&r, dt == ACL_FLOAT16 ? 16 : 8);
    for (size_t i = 0; i < nrand; i++) {
        uint32_t u = (uint32_t)(test_rng_next(&r) >> 32);
        if (dt == ACL_FLOAT16 && (i & 1)) // half of them in or near the fp16 range
            u = (u & 0x81ffffffu) | ((uint32_t)(0x66 + (u >> 25) % 0x20) << 23);
        v[n++] = test_u2f(u);
    }
    *out = v;
    return n;
}

static void narrow_all(aclDataType dt) {
    float *in;
    size_t n = narrow_inputs(dt, &in);
    uint16_t *out = malloc(n * 2);
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!test_isa_available(isa)) continue;
        for (int stream = 0; stream < 2; stream++) {
            memset(out, 0xa5, n * 2);
            narrow_of(isa, dt)(in, out, n, stream);
            long bad = 0;
            for (size_t i = 0; i < n; i++)
                if (!narrow_ok(dt, in[i], out[i]) && bad++ < 6)
                    fprintf(stderr, "    %s stream=%d: %a (%08x) -> %04x, expected %a\n",
                            isa_name(isa), stream, in[i], test_f2u(in[i]), out[i],
                            test_round_to(dt, in[i]));
            CHECKF(bad == 0, "%s stream=%d: %ld of %zu conversions wrong", isa_name(isa), stream,
                   bad, n);
        }
    }
    printf("  %zu fp32 inputs\n", n);
    free(in), free(out);
}
static void test_f32_to_f16_rne(void) { narrow_all(ACL_FLOAT16); }
static void test_f32_to_bf16_rne(void) { narrow_all(ACL_BF16); }

// Lengths x destination offsets x stream, with canaries around the destination.
static const size_t LENGTHS[] = {0,  1,  2,  3,  5,  7,  8,  9,  15,  16,  17,  23,  24,   31,
                                 32, 33, 47, 48, 63, 64, 65, 70, 127, 128, 129, 200, 1000, 4099};
enum { NLEN = sizeof LENGTHS / sizeof LENGTHS[0], MAXLEN = 4099, CANARY = 256 };
static const unsigned char CANARY_BYTE = 0xa5;

static bool canaries_ok(const unsigned char *base, size_t before, size_t payload, size_t total) {
    for (size_t i = 0; i < total; i++)
        if ((i < before || i >= before + payload) && base[i] != CANARY_BYTE) return false;
    return true;
}

static void test_lengths_offsets_canaries(void) {
    float *in;
    size_t n = narrow_inputs(ACL_FLOAT16, &in);
    // A source spanning NaNs, ties, subnormals, overflow and ordinary values.
    float *src = malloc((MAXLEN + 16) * sizeof *src);
    test_rng r;
    test_rng_seed(&r, 99);
    for (size_t i = 0; i < MAXLEN + 16; i++) src[i] = in[test_rng_next(&r) % n];
    size_t total = CANARY + MAXLEN * 4 + 64 + CANARY;
    unsigned char *buf = aligned_alloc(64, (total + 63) / 64 * 64);
    long bad = 0, canary_bad = 0;
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!test_isa_available(isa)) continue;
        for (int stream = 0; stream < 2; stream++)
            for (size_t li = 0; li < NLEN; li++) {
                size_t len = LENGTHS[li];
                for (size_t off = 0; off < 64; off += 2) {
                    const float *s = src + (len * 7 + off) % 13; // varied source alignment too
                    for (int kind = 0; kind < 3; kind++) {
                        if (kind == 2 && off % 4) continue; // fp32 destinations: 4-byte steps
                        memset(buf, CANARY_BYTE, total);
                        unsigned char *dst = buf + CANARY + off;
                        size_t es = kind == 2 ? 4 : 2;
                        if (kind == 0)
                            og_convert[isa].f32_to_f16(s, (uint16_t *)dst, len, stream);
                        else if (kind == 1)
                            og_convert[isa].f32_to_bf16(s, (uint16_t *)dst, len, stream);
                        else
                            og_convert[isa].f32_copy(s, (float *)dst, len, stream);
                        for (size_t i = 0; i < len; i++) {
                            bool ok;
                            if (kind == 2) {
                                float got;
                                memcpy(&got, dst + 4 * i, 4);
                                ok = test_f2u(got) == test_f2u(s[i]);
                            } else {
                                uint16_t got;
                                memcpy(&got, dst + 2 * i, 2);
                                ok = narrow_ok(kind == 0 ? ACL_FLOAT16 : ACL_BF16, s[i], got);
                            }
                            if (!ok && bad++ < 6)
                                fprintf(stderr,
                                        "    %s stream=%d kind=%d len=%zu off=%zu i=%zu: wrong\n",
                                        isa_name(isa), stream, kind, len, off, i);
                        }
                        if (!canaries_ok(buf, CANARY + off, len * es, total) && canary_bad++ < 6)
                            fprintf(
                                stderr,
                                "    %s stream=%d kind=%d len=%zu off=%zu: canary overwritten\n",
                                isa_name(isa), stream, kind, len, off);
                    }
                }
            }
    }
    CHECKF(bad == 0, "%ld wrong elements", bad);
    CHECKF(canary_bad == 0, "%ld canary violations", canary_bad);
    // widening into misaligned destinations too
    uint16_t *h = malloc((MAXLEN + 16) * 2);
    for (size_t i = 0; i < MAXLEN + 16; i++) h[i] = (uint16_t)(test_rng_next(&r) >> 48);
    long wbad = 0;
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!test_isa_available(isa)) continue;
        for (int d = 0; d < 2; d++) {
            aclDataType dt = d ? ACL_BF16 : ACL_FLOAT16;
            for (size_t li = 0; li < NLEN; li++)
                for (size_t off = 0; off < 64; off += 4) {
                    size_t len = LENGTHS[li];
                    const uint16_t *s = h + (len + off) % 11;
                    memset(buf, CANARY_BYTE, total);
                    unsigned char *dst = buf + CANARY + off;
                    widen_of(isa, dt)(s, (float *)dst, len);
                    for (size_t i = 0; i < len; i++) {
                        float got;
                        memcpy(&got, dst + 4 * i, 4);
                        wbad += !widen_ok(dt, s[i], got);
                    }
                    wbad += !canaries_ok(buf, CANARY + off, len * 4, total);
                }
        }
    }
    CHECKF(wbad == 0, "%ld wrong widening results or canary violations", wbad);
    free(in), free(src), free(buf), free(h);
}

// Every ISA, and the vector body vs the scalar tail of one ISA, produce the same bits for the
// same input (the engine's results must not depend on the ISA or on a value's position).
static void test_cross_isa_bitwise(void) {
    enum { N = 65536 };
    uint16_t *src = malloc(N * 2);
    float *ref = malloc(N * 4), *got = malloc(N * 4);
    for (int i = 0; i < N; i++) src[i] = (uint16_t)i;
    for (int d = 0; d < 2; d++) {
        aclDataType dt = d ? ACL_BF16 : ACL_FLOAT16;
        const char *nm = d ? "bf16->f32" : "f16->f32";
        // reference: element by element (the scalar path of every ISA)
        for (int i = 0; i < N; i++) widen_of(OPGRAD_ISA_SCALAR, dt)(src + i, ref + i, 1);
        for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
            if (!test_isa_available(isa)) continue;
            long diff = 0;
            widen_of(isa, dt)(src, got, N); // vector body
            for (int i = 0; i < N; i++)
                if (test_f2u(got[i]) != test_f2u(ref[i]) && diff++ < 3)
                    fprintf(stderr, "    %s %s: %04x -> %08x in a full vector, %08x alone\n", nm,
                            isa_name(isa), src[i], test_f2u(got[i]), test_f2u(ref[i]));
            CHECKF(diff == 0,
                   "%s %s: %ld encodings convert to other bits than one at a time "
                   "(scalar)",
                   nm, isa_name(isa), diff);
        }
    }
    // narrowing
    float *in;
    size_t n = narrow_inputs(ACL_FLOAT16, &in);
    uint16_t *o_ref = malloc(n * 2), *o = malloc(n * 2);
    for (int d = 0; d < 2; d++) {
        aclDataType dt = d ? ACL_BF16 : ACL_FLOAT16;
        for (size_t i = 0; i < n; i++)
            narrow_of(OPGRAD_ISA_SCALAR, dt)(in + i, o_ref + i, 1, false);
        for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
            if (!test_isa_available(isa)) continue;
            for (int stream = 0; stream < 2; stream++) {
                narrow_of(isa, dt)(in, o, n, stream);
                long diff = 0;
                for (size_t i = 0; i < n; i++)
                    if (o[i] != o_ref[i] && diff++ < 3)
                        fprintf(stderr, "    f32->%s %s: %08x -> %04x, scalar %04x\n",
                                d ? "bf16" : "f16", isa_name(isa), test_f2u(in[i]), o[i], o_ref[i]);
                CHECKF(diff == 0, "f32->%s %s stream=%d: %ld differences from the scalar build",
                       d ? "bf16" : "f16", isa_name(isa), stream, diff);
            }
        }
    }
    free(src), free(ref), free(got), free(in), free(o_ref), free(o);
}

// The engine consequence of the above: an fp16 self promoted with fp32 gradOutput (and tanhx)
// gives an fp32 gradInput; a NaN self must come out with the same bits whatever the ISA and
// wherever it sits (vector body or tail). MishBackward passes the NaN through a multiplication
// (which quiets it); the tanhx branch returns self's NaN as loaded.
static void test_nan_bits_through_api(void) {
    enum { N = 69 };
    uint16_t x[N];
    float g[N], t[N], out[2][OPGRAD_ISA_COUNT][N];
    for (int i = 0; i < N; i++) {
        x[i] = (uint16_t)(i % 2 ? 0x7c01 + i : 0x7e00 + i); // signalling and quiet NaNs
        g[i] = 1.0f;
        t[i] = 0.5f;
    }
    int64_t dims[1] = {N};
    aclTensor *tg = test_tensor(dims, 1, ACL_FLOAT, g), *tx = test_tensor(dims, 1, ACL_FLOAT16, x);
    aclTensor *tt = test_tensor(dims, 1, ACL_FLOAT, t);
    int first = -1;
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!test_isa_available(isa)) continue;
        opgrad_set_max_isa((opgrad_isa)isa);
        for (int op = 0; op < 2; op++) {
            aclTensor *to = test_tensor(dims, 1, ACL_FLOAT, out[op][isa]);
            uint64_t ws = 0;
            aclOpExecutor *ex = NULL;
            aclnnStatus st;
            if (op == 0) {
                st = aclnnMishBackwardGetWorkspaceSize(tg, tx, to, &ws, &ex);
                st = test_run(st, ws, ex, aclnnMishBackward, NULL);
            } else {
                st = aclnnMishBackwardWithTanhxGetWorkspaceSize(tg, tx, tt, to, &ws, &ex);
                st = test_run(st, ws, ex, aclnnMishBackwardWithTanhx, NULL);
            }
            CHECKF(st == ACLNN_SUCCESS, "%s: %s", isa_name(isa), aclGetRecentErrMsg());
            for (int i = 0; i < N; i++) CHECK(isnan(out[op][isa][i]));
            aclDestroyTensor(to);
            long diff = 0;
            if (first >= 0)
                for (int i = 0; i < N; i++)
                    if (test_f2u(out[op][isa][i]) != test_f2u(out[op][first][i]) && diff++ < 3)
                        fprintf(stderr, "    %s self=%04x (i=%d): %s gives %08x, %s gives %08x\n",
                                op ? "aclnnMishBackwardWithTanhx" : "aclnnMishBackward", x[i], i,
                                isa_name(isa), test_f2u(out[op][isa][i]), isa_name(first),
                                test_f2u(out[op][first][i]));
            CHECKF(diff == 0, "%s %s: %ld NaN results differ bitwise from %s",
                   op ? "aclnnMishBackwardWithTanhx" : "aclnnMishBackward", isa_name(isa), diff,
                   isa_name(first));
        }
        if (first < 0) first = isa;
    }
    opgrad_set_max_isa(OPGRAD_ISA_COUNT - 1);
    aclDestroyTensor(tg), aclDestroyTensor(tx), aclDestroyTensor(tt);
}

int main(void) {
    RUN(test_tables);
    RUN(test_f16_to_f32_exhaustive);
    RUN(test_bf16_to_f32_exhaustive);
    RUN(test_f32_to_f16_rne);
    RUN(test_f32_to_bf16_rne);
    RUN(test_lengths_offsets_canaries);
    RUN(test_cross_isa_bitwise);
    RUN(test_nan_bits_through_api);
    return test_summary();
}
