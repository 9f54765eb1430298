#include "runtime/cpu.h"

#include <cpuid.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static opgrad_isa cpu_isa_level = OPGRAD_ISA_SCALAR;
static bool cpu_avx512bf16;
static atomic_int isa_cap = OPGRAD_ISA_COUNT - 1;
static pthread_once_t detect_once = PTHREAD_ONCE_INIT;

static uint64_t read_xcr0(void) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

static opgrad_isa parse_isa(const char *s, opgrad_isa fallback) {
    if (!s) return fallback;
    if (!strcmp(s, "scalar")) return OPGRAD_ISA_SCALAR;
    if (!strcmp(s, "avx2")) return OPGRAD_ISA_AVX2;
    if (!strcmp(s, "avx512")) return OPGRAD_ISA_AVX512;
    return fallback;
}

static void detect(void) {
    unsigned a, b, c, d;
    opgrad_isa level = OPGRAD_ISA_SCALAR;
    if (__get_cpuid(1, &a, &b, &c, &d)) {
        bool osxsave = c & bit_OSXSAVE, fma = c & bit_FMA, f16c = c & bit_F16C, avx = c & bit_AVX;
        uint64_t xcr0 = osxsave ? read_xcr0() : 0;
        bool ymm_saved = (xcr0 & 0x6) == 0x6;   // SSE + AVX state
        bool zmm_saved = (xcr0 & 0xe6) == 0xe6; // + opmask, ZMM_Hi256, Hi16_ZMM
        if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
            bool avx2 = b & bit_AVX2;
            bool avx512 =
                (b & bit_AVX512F) && (b & bit_AVX512BW) && (b & bit_AVX512DQ) && (b & bit_AVX512VL);
            if (avx && avx2 && fma && f16c && ymm_saved) level = OPGRAD_ISA_AVX2;
            if (level == OPGRAD_ISA_AVX2 && avx512 && zmm_saved) level = OPGRAD_ISA_AVX512;
        }
        if (level == OPGRAD_ISA_AVX512 && __get_cpuid_count(7, 1, &a, &b, &c, &d))
            cpu_avx512bf16 = a & (1u << 5);
    }
    cpu_isa_level = level;
    atomic_store(&isa_cap, parse_isa(getenv("OPGRAD_ISA"), OPGRAD_ISA_COUNT - 1));
}

opgrad_isa opgrad_cpu_isa(void) {
    pthread_once(&detect_once, detect);
    return cpu_isa_level;
}

bool og_cpu_avx512bf16(void) {
    pthread_once(&detect_once, detect);
    return cpu_avx512bf16;
}

opgrad_isa og_isa(void) {
    opgrad_isa cpu = opgrad_cpu_isa();
    opgrad_isa cap = (opgrad_isa)atomic_load(&isa_cap);
    return cap < cpu ? cap : cpu;
}

opgrad_isa opgrad_set_max_isa(opgrad_isa cap) {
    pthread_once(&detect_once, detect);
    if ((int)cap < OPGRAD_ISA_SCALAR) cap = OPGRAD_ISA_SCALAR;
    if ((int)cap >= OPGRAD_ISA_COUNT) cap = OPGRAD_ISA_COUNT - 1;
    atomic_store(&isa_cap, cap);
    return og_isa();
}

opgrad_isa opgrad_active_isa(void) { return og_isa(); }

const char *opgrad_isa_name(opgrad_isa isa) {
    switch (isa) {
    case OPGRAD_ISA_SCALAR:
        return "scalar";
    case OPGRAD_ISA_AVX2:
        return "avx2";
    case OPGRAD_ISA_AVX512:
        return "avx512";
    default:
        return "unknown";
    }
}

const char *opgrad_version(void) { return OPGRAD_VERSION_STRING; }
