/* API-level tests of the ACL runtime subset: init/finalize pairing, the single device, the
 * allocators (alignment, padding, refusal of foreign / interior / double frees without a
 * crash), copies and memset, fp16 <-> fp32 conversion (exhaustive round trip, ties to even,
 * agreement with an exact double-based rounding), data-type sizes and opgrad's own controls. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
#include "opgrad/opgrad.h"
#include "test.h"
#include "testutil.h"

/* ---- lifecycle and device ------------------------------------------------------------------- */

static void test_init_finalize_pairing(void) {
    CHECK_EQ(aclInit(NULL), ACL_SUCCESS);
    CHECK_EQ(aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE);
    CHECK_MSG("aclInit");
    CHECK_EQ(aclFinalize(), ACL_SUCCESS);
    CHECK_EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
    CHECK_MSG("aclFinalize");
    CHECK_EQ(aclnnInit(NULL), ACLNN_SUCCESS);
    CHECK_EQ(aclnnFinalize(), ACLNN_SUCCESS);
}

static void test_device(void) {
    uint32_t count = 0;
    CHECK_EQ(aclrtGetDeviceCount(&count), ACL_SUCCESS);
    CHECK_EQ(count, 1);
    CHECK(aclrtGetDeviceCount(NULL) != ACL_SUCCESS);
    CHECK_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    CHECK(aclrtSetDevice(1) != ACL_SUCCESS);
    CHECK_MSG("deviceId");
    CHECK(aclrtSetDevice(-1) != ACL_SUCCESS);
    CHECK(aclrtResetDevice(1) != ACL_SUCCESS);
    CHECK_EQ(aclrtResetDevice(0), ACL_SUCCESS);
    const char *soc = aclrtGetSocName();
    CHECK(soc != NULL && soc[0] != '\0');
}

/* ---- memory --------------------------------------------------------------------------------- */

static void test_malloc_alignment_and_padding(void) {
    const size_t sizes[] = {1, 3, 31, 32, 33, 63, 64, 65, 1000, 4096, 1 << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        void *p = NULL;
        CHECK_EQ(aclrtMalloc(&p, sizes[k], ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        CHECKF(p && (uintptr_t)p % 64 == 0, "size %zu: %p is not 64-byte aligned", sizes[k], p);
        // blocks are padded by 32 bytes (ASan reports the write if they are not)
        if (p) memset(p, 0x5a, sizes[k] + 32);
        CHECK_EQ(aclrtFree(p), ACL_SUCCESS);
        void *h = NULL;
        CHECK_EQ(aclrtMallocHost(&h, sizes[k]), ACL_SUCCESS);
        if (h) memset(h, 0x5a, sizes[k]);
        CHECK_EQ(aclrtFreeHost(h), ACL_SUCCESS);
    }
}

static void test_malloc_bad_arguments(void) {
    void *p = (void *)0x1;
    CHECK(aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS);
    CHECK_MSG("size");
    CHECK(aclrtMalloc(NULL, 16, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS);
    CHECK(aclrtMallocHost(&p, 0) != ACL_SUCCESS);
    CHECK(aclrtMalloc(&p, SIZE_MAX, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS);
}

static void test_free_foreign_pointers_refused(void) {
    int local = 0;
    CHECK_EQ(aclrtFree(&local), ACL_ERROR_INVALID_PARAM); // stack
    CHECK_MSG("aclrtFree");
    void *m = malloc(64);
    CHECK_EQ(aclrtFree(m), ACL_ERROR_INVALID_PARAM); // malloc'd elsewhere
    free(m);                                         // still ours to free: not freed above
    void *p = NULL;
    CHECK_EQ(aclrtMalloc(&p, 256, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    CHECK_EQ(aclrtFree((char *)p + 16), ACL_ERROR_INVALID_PARAM); // interior
    CHECK_EQ(aclrtFree(p), ACL_SUCCESS);
    CHECK_EQ(aclrtFree(p), ACL_ERROR_INVALID_PARAM); // double free
    CHECK_EQ(aclrtFree(NULL), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtFreeHost(&local), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtFreeHost(NULL), ACL_ERROR_INVALID_PARAM);
}

static void test_free_with_the_wrong_partner(void) {
    void *d = NULL, *h = NULL;
    CHECK_EQ(aclrtMalloc(&d, 128, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    CHECK_EQ(aclrtMallocHost(&h, 128), ACL_SUCCESS);
    CHECK_EQ(aclrtFreeHost(d), ACL_ERROR_INVALID_PARAM);
    CHECK_MSG("aclrtFree");
    CHECK_EQ(aclrtFree(h), ACL_ERROR_INVALID_PARAM);
    CHECK_MSG("aclrtFreeHost");
    // neither was released by the refused calls
    CHECK_EQ(aclrtFree(d), ACL_SUCCESS);
    CHECK_EQ(aclrtFreeHost(h), ACL_SUCCESS);
}

static void test_memcpy_and_memset(void) {
    unsigned char src[100], dst[100];
    for (int i = 0; i < 100; i++) src[i] = (unsigned char)(i * 7 + 1);
    memset(dst, 0, sizeof dst);
    CHECK_EQ(aclrtMemcpy(dst, 100, src, 100, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    CHECK(memcmp(dst, src, 100) == 0);
    memset(dst, 0, sizeof dst);
    CHECK_EQ(aclrtMemcpy(dst, 50, src, 51, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_INVALID_PARAM);
    CHECK_MSG("destMax");
    CHECK(dst[0] == 0); // nothing copied
    CHECK_EQ(aclrtMemcpy(dst, 50, src, 50, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);
    CHECK(memcmp(dst, src, 50) == 0 && dst[50] == 0);
    CHECK_EQ(aclrtMemcpy(NULL, 10, src, 10, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtMemcpy(dst, 10, NULL, 10, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtMemcpy(dst, 10, src, 10, (aclrtMemcpyKind)99), ACL_ERROR_INVALID_PARAM);
    // memset
    CHECK_EQ(aclrtMemset(dst, 100, 0xab, 60), ACL_SUCCESS);
    int ok = 1;
    for (int i = 0; i < 60; i++) ok &= dst[i] == 0xab;
    CHECK(ok);
    CHECK(dst[60] == 0 && dst[59] == 0xab); // untouched beyond count
    CHECK_EQ(aclrtMemset(dst, 10, 0, 11), ACL_ERROR_INVALID_PARAM);
    CHECK(dst[0] == 0xab);
    CHECK_EQ(aclrtMemset(NULL, 10, 0, 1), ACL_ERROR_INVALID_PARAM);
    // async copy on the NULL stream is synchronous
    memset(dst, 0, sizeof dst);
    CHECK_EQ(aclrtMemcpyAsync(dst, 100, src, 100, ACL_MEMCPY_HOST_TO_DEVICE, NULL), ACL_SUCCESS);
    CHECK(memcmp(dst, src, 100) == 0);
    CHECK_EQ(aclrtMemcpyAsync(dst, 10, src, 20, ACL_MEMCPY_HOST_TO_DEVICE, NULL),
             ACL_ERROR_INVALID_PARAM);
}

/* ---- fp16 ------------------------------------------------------------------------------------ */

// binary16 decoded from its fields with double arithmetic only.
static double half_value(uint16_t h) {
    int sign = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return sign ? -v : v;
}

static void test_float16_round_trip_all_values(void) {
    int64_t bad_value = 0, bad_trip = 0, bad_nan = 0;
    for (uint32_t i = 0; i < 65536; i++) {
        uint16_t h = (uint16_t)i;
        float f = aclFloat16ToFloat(h);
        double want = half_value(h);
        int is_nan = ((h >> 10) & 0x1f) == 31 && (h & 0x3ff);
        if (is_nan) {
            uint16_t back = aclFloatToFloat16(f);
            if (!isnan(f) || ((back >> 10) & 0x1f) != 31 || !(back & 0x3ff) ||
                (back >> 15) != (h >> 15))
                bad_nan++;
            continue;
        }
        if ((double)f != want || !signbit(f) != !signbit(want)) bad_value++;
        if (aclFloatToFloat16(f) != h) bad_trip++;
    }
    CHECKF(bad_value == 0, "%lld halves decode to the wrong float", (long long)bad_value);
    CHECKF(bad_trip == 0, "%lld halves do not round-trip", (long long)bad_trip);
    CHECKF(bad_nan == 0, "%lld NaNs do not stay NaN", (long long)bad_nan);
}

static void test_float16_ties_to_even(void) {
    CHECK_EQ(aclFloatToFloat16(1.0f + 0x1p-11f), 0x3c00);            // tie, even is 1.0
    CHECK_EQ(aclFloatToFloat16(1.0f + 3 * 0x1p-11f), 0x3c02);        // tie, even is up
    CHECK_EQ(aclFloatToFloat16(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01); // just above the tie
    CHECK_EQ(aclFloatToFloat16(2049.0f), 0x6800);                    // 2048
    CHECK_EQ(aclFloatToFloat16(2051.0f), 0x6802);                    // 2052
    CHECK_EQ(aclFloatToFloat16(-2051.0f), 0xe802);
    CHECK_EQ(aclFloatToFloat16(0x1p-25f), 0x0000); // half the least subnormal
    CHECK_EQ(aclFloatToFloat16(-0x1p-25f), 0x8000);
    CHECK_EQ(aclFloatToFloat16(3 * 0x1p-25f), 0x0002); // 1.5 subnormal ulps: to 2
    CHECK_EQ(aclFloatToFloat16(0x1p-25f + 0x1p-40f), 0x0001);
    CHECK_EQ(aclFloatToFloat16(65504.0f), 0x7bff); // largest finite
    CHECK_EQ(aclFloatToFloat16(65519.99f), 0x7bff);
    CHECK_EQ(aclFloatToFloat16(65520.0f), 0x7c00); // tie to even: overflow
    CHECK_EQ(aclFloatToFloat16(-1e10f), 0xfc00);
    CHECK_EQ(aclFloatToFloat16(INFINITY), 0x7c00);
    CHECK_EQ(aclFloatToFloat16(-0.0f), 0x8000);
    CHECK_EQ(aclFloatToFloat16(0x1p-14f - 0x1p-25f), 0x0400); // rounds up to the least normal
}

static void test_float16_matches_exact_rounding(void) {
    // random fp32 bit patterns across the whole range vs. rounding the (exact) double value
    test_rng r;
    test_rng_seed(&r, 7);
    int64_t bad = 0;
    for (int i = 0; i < 400000; i++) {
        uint32_t u = (uint32_t)test_rng_next(&r);
        if (i & 1) { // half of them in and around fp16's range: exponents 2^-27 .. 2^18
            uint32_t e = 100 + (uint32_t)(test_rng_next(&r) % 46);
            u = (u & 0x807fffffu) | (e << 23);
        }
        float f;
        memcpy(&f, &u, sizeof f);
        if (isnan(f)) continue;
        double want = test_round_to(ACL_FLOAT16, f);
        double got = aclFloat16ToFloat(aclFloatToFloat16(f));
        if (got != want || (want == 0 && !signbit(got) != !signbit(f))) {
            if (bad < 5) fprintf(stderr, "    %a -> %a, want %a\n", f, got, want);
            bad++;
        }
    }
    CHECKF(bad == 0, "%lld of 400000 conversions are not round-to-nearest-even", (long long)bad);
}

static void test_data_type_size(void) {
    CHECK_EQ(aclDataTypeSize(ACL_FLOAT), 4);
    CHECK_EQ(aclDataTypeSize(ACL_FLOAT16), 2);
    CHECK_EQ(aclDataTypeSize(ACL_BF16), 2);
    CHECK_EQ(aclDataTypeSize(ACL_DOUBLE), 8);
    CHECK_EQ(aclDataTypeSize(ACL_INT8), 1);
    CHECK_EQ(aclDataTypeSize(ACL_UINT8), 1);
    CHECK_EQ(aclDataTypeSize(ACL_INT16), 2);
    CHECK_EQ(aclDataTypeSize(ACL_INT32), 4);
    CHECK_EQ(aclDataTypeSize(ACL_INT64), 8);
    CHECK_EQ(aclDataTypeSize(ACL_UINT64), 8);
    CHECK_EQ(aclDataTypeSize(ACL_BOOL), 1);
    CHECK_EQ(aclDataTypeSize(ACL_COMPLEX64), 8);
    CHECK_EQ(aclDataTypeSize(ACL_COMPLEX128), 16);
    CHECK_EQ(aclDataTypeSize(ACL_FLOAT8_E4M3FN), 1);
    // sub-byte and unknown types
    CHECK_EQ(aclDataTypeSize(ACL_INT4), 0);
    CHECK_EQ(aclDataTypeSize(ACL_UINT1), 0);
    CHECK_EQ(aclDataTypeSize(ACL_FLOAT4_E2M1), 0);
    CHECK_EQ(aclDataTypeSize(ACL_DT_UNDEFINED), 0);
    CHECK_EQ(aclDataTypeSize((aclDataType)1234), 0);
}

/* ---- opgrad controls ------------------------------------------------------------------------ */

static void test_opgrad_controls(void) {
    CHECK(strcmp(opgrad_version(), OPGRAD_VERSION_STRING) == 0);
    int before = opgrad_get_num_threads();
    CHECK(before >= 1);
    CHECK_EQ(opgrad_set_num_threads(0), -1);
    CHECK_EQ(opgrad_set_num_threads(-4), -1);
    CHECK_EQ(opgrad_get_num_threads(), before);
    CHECK_EQ(opgrad_set_num_threads(3), 0);
    CHECK_EQ(opgrad_get_num_threads(), 3);
    CHECK_EQ(opgrad_set_num_threads(before), 0);
    opgrad_isa cpu = opgrad_cpu_isa();
    CHECK(cpu >= OPGRAD_ISA_SCALAR && cpu < OPGRAD_ISA_COUNT);
    CHECK_EQ(opgrad_set_max_isa(OPGRAD_ISA_SCALAR), OPGRAD_ISA_SCALAR);
    CHECK_EQ(opgrad_active_isa(), OPGRAD_ISA_SCALAR);
    CHECK_EQ(opgrad_set_max_isa(OPGRAD_ISA_AVX512),
             cpu < OPGRAD_ISA_AVX512 ? cpu : OPGRAD_ISA_AVX512);
    CHECK_EQ(opgrad_set_max_isa(OPGRAD_ISA_COUNT - 1), cpu);
    CHECK_EQ(opgrad_set_max_isa((opgrad_isa)99), cpu); // clamped
    CHECK_EQ(opgrad_active_isa(), cpu);
    CHECK(strcmp(opgrad_isa_name(OPGRAD_ISA_SCALAR), "scalar") == 0);
    CHECK(strcmp(opgrad_isa_name(OPGRAD_ISA_AVX2), "avx2") == 0);
    CHECK(strcmp(opgrad_isa_name(OPGRAD_ISA_AVX512), "avx512") == 0);
    CHECK(strcmp(opgrad_isa_name(OPGRAD_ISA_AVX512_BF16), "avx512bf16") == 0);
    CHECK(strcmp(opgrad_isa_name(OPGRAD_ISA_AVX512_FP16), "avx512fp16") == 0);
    CHECK(strcmp(opgrad_isa_name(OPGRAD_ISA_AMX), "amx") == 0);
    CHECK(strcmp(opgrad_isa_name((opgrad_isa)-1), "unknown") == 0);
}

int main(void) {
    RUN(test_init_finalize_pairing);
    RUN(test_device);
    RUN(test_malloc_alignment_and_padding);
    RUN(test_malloc_bad_arguments);
    RUN(test_free_foreign_pointers_refused);
    RUN(test_free_with_the_wrong_partner);
    RUN(test_memcpy_and_memset);
    RUN(test_float16_round_trip_all_values);
    RUN(test_float16_ties_to_even);
    RUN(test_float16_matches_exact_rounding);
    RUN(test_data_type_size);
    RUN(test_opgrad_controls);
    return test_summary();
}
