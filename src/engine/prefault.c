/* Fresh output memory (engine/prefault.h). */
#undef _POSIX_C_SOURCE
#define _GNU_SOURCE
#include "engine/prefault.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine/executor.h"
#include "runtime/pool.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 // Linux 5.14; older headers lack the name
#endif

enum { HUGE_BYTES = 2 << 20, MINCORE_PAGES = 4096 };

static atomic_bool populate_unsupported; // set by the first EINVAL (kernel before 5.14)
static atomic_int huge_advice = -1;      // OPGRAD_HUGEPAGES, read once (0: no advice)

// True when some page of [lo, hi) (page-aligned) is not resident. Scans in chunks and stops at
// the first one, so a fresh range costs one chunk; an unmapped range reads as resident (nothing
// to do: the operator's checks own that case).
static bool has_fresh_pages(uintptr_t lo, uintptr_t hi, uintptr_t page) {
    unsigned char resident[MINCORE_PAGES];
    for (uintptr_t at = lo; at < hi;) {
        uintptr_t n = (hi - at) / page < MINCORE_PAGES ? (hi - at) / page : MINCORE_PAGES;
        if (mincore((void *)at, n * page, resident) != 0) return false;
        for (uintptr_t i = 0; i < n; i++)
            if (!(resident[i] & 1)) return true;
        at += n * page;
    }
    return false;
}

typedef struct populate_job {
    uintptr_t lo, hi; // page-aligned
    int parts;
} populate_job;

// Boundary k of `parts` equal parts of the range, rounded up to a 2 MiB boundary so that no huge
// page is split between two threads.
static uintptr_t part_boundary(const populate_job *j, int k) {
    if (k >= j->parts) return j->hi;
    uintptr_t at = j->lo + (j->hi - j->lo) / (uintptr_t)j->parts * (uintptr_t)k;
    at = (at + HUGE_BYTES - 1) / HUGE_BYTES * HUGE_BYTES;
    return k == 0 ? j->lo : at < j->hi ? at : j->hi;
}

static void populate_part(void *arg, int core, int slot) {
    (void)slot;
    const populate_job *j = arg;
    uintptr_t from = part_boundary(j, core), to = part_boundary(j, core + 1);
    if (from < to && madvise((void *)from, to - from, MADV_POPULATE_WRITE) != 0 && errno == EINVAL)
        atomic_store(&populate_unsupported, true); // a kernel before 5.14
}

int64_t og_prefault_range(void *addr, int64_t bytes) {
    if (!addr || bytes <= 0) return 0;
    long page_size = sysconf(_SC_PAGESIZE);
    uintptr_t page = page_size > 0 ? (uintptr_t)page_size : 4096;
    uintptr_t lo = ((uintptr_t)addr + page - 1) / page * page;
    uintptr_t hi = ((uintptr_t)addr + (uintptr_t)bytes) / page * page;
    if (hi <= lo || !has_fresh_pages(lo, hi, page)) return 0;
    if (atomic_load(&huge_advice) < 0) {
        const char *env = getenv("OPGRAD_HUGEPAGES");
        atomic_store(&huge_advice, !(env && env[0] == '0'));
    }
    uintptr_t huge_lo = (lo + HUGE_BYTES - 1) / HUGE_BYTES * HUGE_BYTES;
    uintptr_t huge_hi = hi / HUGE_BYTES * HUGE_BYTES;
    if (atomic_load(&huge_advice) && huge_hi > huge_lo)
        (void)madvise((void *)huge_lo, huge_hi - huge_lo, MADV_HUGEPAGE); // advice only
    if (atomic_load(&populate_unsupported)) return 0;
    int threads = og_num_threads();
    uintptr_t blocks = (hi - lo + HUGE_BYTES - 1) / HUGE_BYTES; // parts of 2 MiB at least
    populate_job job = {lo, hi, blocks < (uintptr_t)threads ? (int)blocks : threads};
    og_parallel_for(job.parts, job.parts, populate_part, &job);
    return atomic_load(&populate_unsupported) ? 0 : (int64_t)(hi - lo);
}

void og_prefault_outputs(const aclOpExecutor *e) {
    for (int s = e->ninputs; s < e->ninputs + e->noutputs; s++)
        if (e->io[s].prefault_bytes > 0)
            og_prefault_range(og_executor_addr(e, s), e->io[s].prefault_bytes);
}
