/* aclOpExecutor: the plan made by phase 1 and run by phase 2.
 *
 * An executor records the operator that planned it, the workspace it needs, the storage
 * addresses of its inputs and outputs (slots: inputs first, then outputs, in the order of the
 * phase-1 signature) and an operator-specific plan. Phase 2 validates it and queues it on the
 * stream. Single-use executors are consumed by phase 2 (aclnn semantics); repeatable ones live
 * until aclDestroyAclOpExecutor.
 *
 * Gradient monitor: when OPGRAD_DEBUG_GRADS is on (src/runtime/grad_monitor.c) and the operator's
 * name contains "Backward", og_executor_new gives the executor a record of the views bound to its
 * io slots (dtype, shape, element strides); after every successful run, synchronous or on a
 * stream's dispatcher thread, each output is logged as one gradient. When the monitor is off the
 * record is NULL and a run costs one branch more. */
#ifndef OG_EXECUTOR_H
#define OG_EXECUTOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aclnn/aclnn_base.h"

#define OG_EXEC_MAX_IO 8
#define OG_EXEC_VIEW_MAX_DIMS 8

/// A bound view as the gradient monitor reads it (strides in elements).
typedef struct og_exec_view {
    bool bound;
    aclDataType dtype;
    int ndim;
    int64_t dims[OG_EXEC_VIEW_MAX_DIMS];
    int64_t strides[OG_EXEC_VIEW_MAX_DIMS];
} og_exec_view;

/// The views of every io slot of a watched (backward) executor.
typedef struct og_exec_grads {
    og_exec_view view[OG_EXEC_MAX_IO];
} og_exec_grads;

struct aclOpExecutor {
    const char *op;          // e.g. "aclnnMish": phase 2 must be the same operator
    uint64_t workspace_size; // bytes phase 2 must be given
    bool repeatable;
    atomic_int refs; // owner + queued runs
    int ninputs, noutputs;
    void *io_base[OG_EXEC_MAX_IO];     // storage base address per slot
    int64_t io_offset[OG_EXEC_MAX_IO]; // byte offset of the view's first element
    /// Runs the plan; NULL for a no-op (empty tensors). Must not fail for planned inputs except
    /// through its return status.
    aclnnStatus (*run)(const aclOpExecutor *e, void *workspace);
    void *plan;           // operator data, allocated together with the executor
    og_exec_grads *grads; // gradient monitor: views of the slots, or NULL (not watched)
};

/// Allocates an executor (plus plan_size bytes of zeroed plan) for operator `op`; NULL and a
/// message on failure.
aclOpExecutor *og_executor_new(const char *op, size_t plan_size);
/// Binds io slot `slot` to a tensor's data (storage base + view offset); a watched executor also
/// records the view (dtype, dims, strides) for the gradient monitor.
void og_executor_bind(aclOpExecutor *e, int slot, const aclTensor *t);
/// Makes the executor visible to phase 2 and returns it through *executor (phase 1's last step).
aclnnStatus og_executor_publish(aclOpExecutor *e, uint64_t *workspaceSize,
                                aclOpExecutor **executor);
/// Frees an executor that was never published (phase 1 failing late).
void og_executor_discard(aclOpExecutor *e);

/// Address of the first view element bound to io slot `slot`.
static inline char *og_executor_addr(const aclOpExecutor *e, int slot) {
    return (char *)e->io_base[slot] + e->io_offset[slot];
}

/// Phase 2 for every operator: checks the executor (live, planned by `op`, not consumed), the
/// workspace (size and pointer) and the stream, then runs it now (NULL stream) or queues it.
aclnnStatus og_executor_launch(const char *op, void *workspace, uint64_t workspaceSize,
                               aclOpExecutor *executor, aclrtStream stream);

/// The gradient monitor's entry for a strided view (src/runtime/grad_monitor.c): one line for the
/// gradient of `ndim` dims with element `strides` whose first element is at `first`, when the
/// monitor is on. fp32/fp16/bf16/fp64 are summarized; other dtypes log the shape only.
void og_grads_log_view(const char *op, int index, const char *name, aclDataType dtype, int ndim,
                       const int64_t *dims, const int64_t *strides, const void *first);

/// The common phase-1 prologue: both out-pointers must be non-NULL.
aclnnStatus og_check_out_ptrs(const char *op, uint64_t *workspaceSize, aclOpExecutor **executor);

#endif
