/* The process-wide worker pool that runs the "cores" of an operator plan. */
#ifndef OG_POOL_H
#define OG_POOL_H

/// Runs fn(ctx, core) for core in [0, ncores) on the pool and the calling thread, and returns when
/// all have finished. If the pool is busy (another stream's operator is running) the calling
/// thread runs every core itself: results never depend on which thread ran a core.
void og_parallel_for(int ncores, void (*fn)(void *ctx, int core), void *ctx);

/// Threads an operator may use (>= 1).
int og_num_threads(void);

#endif
