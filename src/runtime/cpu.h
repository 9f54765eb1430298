/* CPU feature detection (CPUID + XGETBV) and the ISA cap. */
#ifndef OG_CPU_H
#define OG_CPU_H

#include <stdbool.h>

#include "opgrad/opgrad.h"

/// The ISA kernels planned now will use: min(what the CPU and OS support, cap).
opgrad_isa og_isa(void);

/// The CPU has AVX512-BF16 (vcvtne2ps2bf16 and friends) along with the AVX-512 level.
bool og_cpu_avx512bf16(void);

#endif
