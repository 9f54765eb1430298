/* The process-wide worker pool that runs the "cores" of an operator plan. */
#ifndef OG_POOL_H
#define OG_POOL_H

/// One unit of a launch: `core` is the unit, `slot` (0 <= slot < nslots) the running thread's
/// index, for per-thread scratch. The caller is slot 0.
typedef void (*og_core_fn)(void *ctx, int core, int slot);

/// Runs fn(ctx, core, slot) for core in [0, ncores) on at most nslots threads (the pool and the
/// calling thread), which claim cores dynamically, and returns when all have finished. If the pool
/// is busy (another stream's operator is running) the calling thread runs every core itself:
/// results never depend on which thread ran a core.
void og_parallel_for(int ncores, int nslots, og_core_fn fn, void *ctx);

/// Threads an operator may use (>= 1).
int og_num_threads(void);

#endif
