#define _DEFAULT_SOURCE // syscall()
#include "runtime/cpu.h"

#include <cpuid.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static opgrad_isa cpu_isa_level = OPGRAD_ISA_SCALAR;
static bool cpu_halves_512;
static atomic_int isa_cap = OPGRAD_ISA_COUNT - 1;
static pthread_once_t detect_once = PTHREAD_ONCE_INIT;

static const char *const ISA_NAMES[OPGRAD_ISA_COUNT] = {
    [OPGRAD_ISA_SCALAR] = "scalar",          [OPGRAD_ISA_AVX2] = "avx2",
    [OPGRAD_ISA_AVX512] = "avx512",          [OPGRAD_ISA_AVX512_BF16] = "avx512bf16",
    [OPGRAD_ISA_AVX512_FP16] = "avx512fp16", [OPGRAD_ISA_AMX] = "amx",
};

static uint64_t read_xcr0(void) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

static opgrad_isa parse_isa(const char *s, opgrad_isa fallback) {
    if (!s) return fallback;
    for (int i = 0; i < OPGRAD_ISA_COUNT; i++)
        if (!strcmp(s, ISA_NAMES[i])) return (opgrad_isa)i;
    return fallback;
}

// Linux keeps the AMX tile data state off until a process asks for it (arch_prctl
// ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA = 18); a kernel or seccomp policy that refuses leaves the
// level at AVX512-FP16.
static bool request_amx_permission(void) {
#if defined(__linux__) && defined(SYS_arch_prctl)
    enum { ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18 };
    return syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
#else
    return false;
#endif
}

// The highest level whose features the CPU (CPUID) and the OS (XCR0: the registers are saved on
// a context switch) both have; levels are cumulative.
static opgrad_isa detect_level(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return OPGRAD_ISA_SCALAR;
    bool osxsave = c & bit_OSXSAVE, fma = c & bit_FMA, f16c = c & bit_F16C, avx = c & bit_AVX;
    uint64_t xcr0 = osxsave ? read_xcr0() : 0;
    bool ymm_saved = (xcr0 & 0x6) == 0x6;           // SSE + AVX state
    bool zmm_saved = (xcr0 & 0xe6) == 0xe6;         // + opmask, ZMM_Hi256, Hi16_ZMM
    bool tiles_saved = (xcr0 & 0x60000) == 0x60000; // XTILECFG + XTILEDATA
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return OPGRAD_ISA_SCALAR;
    unsigned b7 = b, d7 = d;
    bool avx2 = b7 & bit_AVX2;
    bool avx512 =
        (b7 & bit_AVX512F) && (b7 & bit_AVX512BW) && (b7 & bit_AVX512DQ) && (b7 & bit_AVX512VL);
    bool avx512fp16 = d7 & (1u << 23), amx_bf16 = d7 & (1u << 22), amx_tile = d7 & (1u << 24);
    bool avx512bf16 = __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 5));
    if (!(avx && avx2 && fma && f16c && ymm_saved)) return OPGRAD_ISA_SCALAR;
    if (!(avx512 && zmm_saved)) return OPGRAD_ISA_AVX2;
    if (!avx512bf16) return OPGRAD_ISA_AVX512;
    if (!avx512fp16) return OPGRAD_ISA_AVX512_BF16;
    if (!(amx_bf16 && amx_tile && tiles_saved && request_amx_permission()))
        return OPGRAD_ISA_AVX512_FP16;
    return OPGRAD_ISA_AMX;
}

// AMD's family 19h (Zen 3, Zen 4) executes a 512-bit operation as two 256-bit halves; of it
// only Zen 4 has AVX-512. (Family 1Ah, Zen 5, has 512-bit data paths in its desktop parts.)
static bool detect_halves_512(opgrad_isa level) {
    unsigned a, b, c, d;
    if (level < OPGRAD_ISA_AVX512 || !__get_cpuid(0, &a, &b, &c, &d)) return false;
    bool amd = b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163; // "AuthenticAMD"
    if (!amd || !__get_cpuid(1, &a, &b, &c, &d)) return false;
    unsigned family = (a >> 8) & 0xf, ext_family = (a >> 20) & 0xff;
    return family + (family == 0xf ? ext_family : 0) == 0x19;
}

static void detect(void) {
    cpu_isa_level = detect_level();
    cpu_halves_512 = detect_halves_512(cpu_isa_level);
    atomic_store(&isa_cap, parse_isa(getenv("OPGRAD_ISA"), OPGRAD_ISA_COUNT - 1));
}

opgrad_isa opgrad_cpu_isa(void) {
    pthread_once(&detect_once, detect);
    return cpu_isa_level;
}

bool og_cpu_halves_512(void) {
    pthread_once(&detect_once, detect);
    return cpu_halves_512;
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
    return (int)isa >= 0 && isa < OPGRAD_ISA_COUNT ? ISA_NAMES[isa] : "unknown";
}

const char *opgrad_version(void) { return OPGRAD_VERSION_STRING; }
