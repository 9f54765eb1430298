/* CPU feature detection (CPUID + XGETBV, once per process) and the ISA cap. */
#ifndef OG_CPU_H
#define OG_CPU_H

#include <stdbool.h>

#include "opgrad/opgrad.h"

/// The ISA kernels planned now will use: min(what the CPU and OS support, cap). Phase 1 reads it
/// once and keeps it in the plan; kernels never ask for a CPU feature themselves.
opgrad_isa og_isa(void);

/// Whether the CPU runs each 512-bit operation as two 256-bit halves (AMD family 19h with
/// AVX-512: Zen 4). There, a few operations per element on operands that stream from L3 run
/// faster in 256-bit registers (og_size_gates.ymm_stream_bytes).
bool og_cpu_halves_512(void);

#endif
