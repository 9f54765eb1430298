/* CPU feature detection (CPUID + XGETBV) and the ISA cap. */
#ifndef OG_CPU_H
#define OG_CPU_H

#include "opgrad/opgrad.h"

/// The ISA kernels planned now will use: min(what the CPU and OS support, cap).
opgrad_isa og_isa(void);

#endif
