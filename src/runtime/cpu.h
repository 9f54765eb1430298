/* CPU feature detection (CPUID + XGETBV, once per process) and the ISA cap. */
#ifndef OG_CPU_H
#define OG_CPU_H

#include "opgrad/opgrad.h"

/// The ISA kernels planned now will use: min(what the CPU and OS support, cap). Phase 1 reads it
/// once and keeps it in the plan; kernels never ask for a CPU feature themselves.
opgrad_isa og_isa(void);

#endif
