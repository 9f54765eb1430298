/* Fresh output memory: the framework case.
 *
 * Frameworks allocate a new output for almost every operator call, and a large allocation is a
 * fresh mmap whose pages are not yet mapped: the kernel's first store to each 4 KiB page faults,
 * and the kernel zeroes the page. On the 2-vCPU VMs of bench/ that costs 25-35 ms for a 64 MiB
 * output, six times the 4-6 ms of the operator itself, and non-temporal stores into such pages
 * cost more still. So at launch, before the program runs, every dense output of
 * `prefault_out_bytes` and more (engine/blocking.h; OPGRAD_PREFAULT_BYTES, default 4 MiB, 0 turns
 * it off) whose pages are not all resident (mincore) is
 *   1. advised as transparent huge pages (MADV_HUGEPAGE) on the 2 MiB-aligned blocks inside it,
 *      unless OPGRAD_HUGEPAGES=0: one fault per 2 MiB instead of 512, and a cheaper zeroing;
 *   2. populated for writing (MADV_POPULATE_WRITE, Linux >= 5.14) across the worker threads,
 *      each taking a run of whole 2 MiB blocks,
 * and the program then writes into mapped pages (non-temporal stores included). Neither call
 * changes the bytes of the range, and both only cover whole pages inside the output, which the
 * operator overwrites. Outputs whose pages are all resident (a reused buffer) cost one mincore
 * scan and nothing else. Kernels without MADV_POPULATE_WRITE skip step 2 (the operator's stores
 * fault the pages in, huge where the advice took). */
#ifndef OG_PREFAULT_H
#define OG_PREFAULT_H

#include <stdint.h>

#include "aclnn/aclnn_base.h"

/// Prepares the output slots of executor `e` (its launch copy) that phase 1 found dense and at
/// least the gate large (og_io.prefault_bytes), as described above.
void og_prefault_outputs(const aclOpExecutor *e);

/// Prepares one range of `bytes` bytes at `addr`, whatever its size (exposed for bench/ and the
/// tests); returns the number of bytes populated (0 when its pages were all resident, it holds
/// no whole page, or the kernel cannot populate).
int64_t og_prefault_range(void *addr, int64_t bytes);

#endif
