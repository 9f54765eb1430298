/* opgrad/opgrad.h - opgrad's own controls: threads, instruction set, version. */
#ifndef OPGRAD_OPGRAD_H
#define OPGRAD_OPGRAD_H

#ifdef __cplusplus
extern "C" {
#endif

#define OPGRAD_VERSION_STRING "0.1.0"

/// Instruction-set levels of the kernels, in increasing order.
typedef enum {
    OPGRAD_ISA_SCALAR = 0,
    OPGRAD_ISA_AVX2 = 1, /* AVX2 + FMA + F16C */
    OPGRAD_ISA_AVX512 = 2, /* AVX-512 F/BW/DQ/VL */
    OPGRAD_ISA_COUNT
} opgrad_isa;

/// Threads that run one operator (the "cores" of a plan). Default: OPGRAD_NUM_THREADS, or the
/// number of CPUs this process may use. n < 1 is refused (returns -1); returns 0 on success.
__attribute__((visibility("default"))) int opgrad_set_num_threads(int n);
__attribute__((visibility("default"))) int opgrad_get_num_threads(void);

/// Best ISA this CPU and OS support (CPUID + XGETBV).
__attribute__((visibility("default"))) opgrad_isa opgrad_cpu_isa(void);
/// ISA used for executors planned from now on: min(cpu, cap). The cap starts from OPGRAD_ISA
/// (scalar|avx2|avx512) and can be changed here. Returns the ISA now in effect.
__attribute__((visibility("default"))) opgrad_isa opgrad_set_max_isa(opgrad_isa cap);
__attribute__((visibility("default"))) opgrad_isa opgrad_active_isa(void);
__attribute__((visibility("default"))) const char *opgrad_isa_name(opgrad_isa isa);

__attribute__((visibility("default"))) const char *opgrad_version(void);

#ifdef __cplusplus
}
#endif
#endif
