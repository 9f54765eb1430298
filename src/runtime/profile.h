/* The operator profiler (opgrad_profile_start / opgrad_profile_stop, OPGRAD_PROFILE=path): every
 * phase-2 launch recorded with its operator, io shapes and dtypes, plan time, run time, bytes,
 * GEMM FLOPs, threads and stream; written as Chrome trace-event JSON with a per-operator summary,
 * rates also as fractions of the machine's probed bandwidth and FMA peak (engine/probe.h).
 * When off, a launch costs one relaxed load and a branch (og_profile_on). */
#ifndef OG_PROFILE_H
#define OG_PROFILE_H

#include <stdatomic.h>
#include <stdbool.h>

#include "acl/acl_base.h"

struct aclOpExecutor;
struct aclTensor;

/// What phase 1 knew, kept with the executor while profiling: "float32[4,6] -> float32[4,6]",
/// the bytes of its io views, the FLOPs of its GEMM steps, the plan time.
typedef struct og_profile_note {
    char io[240];
    double bytes, flops, plan_us;
} og_profile_note;

extern atomic_int og_profile_state; // -1: OPGRAD_PROFILE not read yet, 0: off, 1: recording

/// Whether launches are recorded now (reads the environment on the first call).
bool og_profile_on_slow(void);
static inline bool og_profile_on(void) {
    return atomic_load_explicit(&og_profile_state, memory_order_relaxed) != 0 &&
           og_profile_on_slow();
}
/// Microseconds on the monotonic clock.
double og_profile_now_us(void);
/// Phase 1 of `op` starts (its argument checks, og_check_args): stamped per thread, so that the
/// plan time covers the checks too.
void og_profile_phase1_begin(const void *op);
/// When phase 1 of `op` started: the stamp of og_profile_phase1_begin if this thread's last one
/// was `op`'s (it is consumed), else now.
double og_profile_phase1_t0(const void *op);
/// The note of a phase 1 that started at t0_us over io = nin inputs then outputs (NULL entries:
/// optional tensors not given); NULL when out of memory.
og_profile_note *og_profile_note_new(const struct aclTensor *const *io, int nin, int nio,
                                     double flops, double t0_us);
/// Records one launch of executor e that ran from start_us to end_us.
void og_profile_record(const struct aclOpExecutor *e, double start_us, double end_us,
                       aclrtStream stream);

#endif
