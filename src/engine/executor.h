/* aclOpExecutor: the plan made by phase 1 and run by phase 2.
 *
 * An executor records the operator that planned it (its og_opdesc), the workspace it needs, its
 * io slots and a step program (engine/program.h). Slots 0 .. nio-1 are the operator's tensors in
 * the order of its phase-1 signature (inputs first, then outputs; an in-place tensor is both);
 * slots nio .. nslots-1 are temporaries, which live in the workspace. Phase 2 validates the
 * executor and queues it on the stream. Single-use executors are consumed by phase 2 (aclnn
 * semantics); repeatable ones live until aclDestroyAclOpExecutor. The memory goes with the last
 * reference: the owner's, one per queued run, and one per API call using the handle, found and
 * taken under the registry's lock so that a concurrent destroy never frees it under the call.
 *
 * Gradient monitor: when OPGRAD_DEBUG_GRADS is on (src/runtime/grad_monitor.c) and the operator
 * is a backward (og_opdesc.kind), og_executor_new gives the executor a record of the views bound
 * to its io slots; after every successful run, synchronous or on a stream's dispatcher thread,
 * each output is logged as one gradient, under the name of its parameter. When the monitor is
 * off the record is NULL and a run costs one branch more. */
#ifndef OG_EXECUTOR_H
#define OG_EXECUTOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aclnn/aclnn_base.h"
#include "engine/opdesc.h"

#define OG_EXEC_VIEW_MAX_DIMS 8

/// Where a slot's data is: storage base address and the view's byte offset; for an output whose
/// view is dense (it covers its byte range exactly) and at least the fresh-output gate large,
/// that range's size, which launches prepare when its pages are fresh (engine/prefault.h).
typedef struct og_io {
    void *base;
    int64_t offset;
    int64_t prefault_bytes;
} og_io;

/// A bound view as the gradient monitor reads it (strides in elements).
typedef struct og_exec_view {
    bool bound;
    aclDataType dtype;
    int ndim;
    int64_t dims[OG_EXEC_VIEW_MAX_DIMS];
    int64_t strides[OG_EXEC_VIEW_MAX_DIMS];
} og_exec_view;

struct og_step;

struct aclOpExecutor {
    const og_opdesc *op;     // phase 2 must be the same operator
    uint64_t workspace_size; // bytes phase 2 must be given
    bool repeatable;
    atomic_int refs;             // owner + queued runs
    int ninputs, noutputs;       // user slots: nio = ninputs + noutputs
    int nslots;                  // nio + temporaries
    og_io *io;                   // [nslots]; temporaries' bases are set per launch
    const uint64_t *temp_offset; // [nslots - nio]: a temporary's byte offset in the workspace
    uint64_t scratch_offset;     // where the steps' own scratch starts in the workspace
    int nsteps;
    const struct og_step *steps;
    og_exec_view *views; // gradient monitor: [nio] bound views, or NULL (not watched)
    char algorithm[160]; // what phase 1 chose, "" if nothing to say (opgrad_executor_algorithm)
    struct og_profile_note *profile; // phase 1's facts while profiling (runtime/profile.h), or NULL
};

/// Allocates an executor for `op` with nin + nout user slots, ntemps temporaries and room for
/// nsteps steps (uninitialised; the program builder fills them); NULL and a message on failure.
aclOpExecutor *og_executor_new(const og_opdesc *op, int nin, int nout, int ntemps, int nsteps);
/// Binds user slot `slot` to a tensor's data (storage base + view offset); a watched executor also
/// records the view for the gradient monitor. Returns false (nothing bound) for a slot outside
/// [0, nio).
bool og_executor_bind(aclOpExecutor *e, int slot, const aclTensor *t);
/// The steps array of an executor made by og_executor_new (writable until it is published).
struct og_step *og_executor_steps(aclOpExecutor *e);
/// The temporaries' offsets (writable until it is published).
uint64_t *og_executor_temp_offsets(aclOpExecutor *e);
/// Makes the executor visible to phase 2 and returns it through *executor (phase 1's last step).
aclnnStatus og_executor_publish(aclOpExecutor *e, uint64_t *workspaceSize,
                                aclOpExecutor **executor);
/// Frees an executor that was never published (phase 1 failing late).
void og_executor_discard(aclOpExecutor *e);

/// Address of the first view element bound to slot `slot` (a program's slots are checked when it
/// is built: 0 <= slot < nslots).
static inline char *og_executor_addr(const aclOpExecutor *e, int slot) {
    return (char *)e->io[slot].base + e->io[slot].offset;
}

/// Phase 2 for every operator: checks the executor (live, planned by `op`, not consumed), the
/// workspace (size and pointer) and the stream, then runs it now (NULL stream) or queues it.
aclnnStatus og_executor_launch(const og_opdesc *op, void *workspace, uint64_t workspaceSize,
                               aclOpExecutor *executor, aclrtStream stream);

/// The gradient monitor's entry for a strided view (src/runtime/grad_monitor.c): one line for the
/// gradient of `ndim` dims with element `strides` whose first element is at `first`, when the
/// monitor is on. fp32/fp16/bf16/fp64 are summarized; other dtypes log the shape only.
void og_grads_log_view(const char *op, int index, const char *name, aclDataType dtype, int ndim,
                       const int64_t *dims, const int64_t *strides, const void *first);

#endif
