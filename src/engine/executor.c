#include "engine/executor.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "opgrad/custom_op.h"
#include "opgrad/opgrad.h"
#include "runtime/error.h"
#include "runtime/ptrset.h"
#include "runtime/stream.h"
#include "tensor/tensor.h"

static og_ptrset live_executors = OG_PTRSET_INIT;

// Addresses of recently consumed single-use executors, only to tell "consumed" apart from
// "unknown" in messages. Bounded FIFO; an address is forgotten when a new executor reuses it.
enum { CONSUMED_MEMORY = 4096 };
static og_ptrset consumed_executors = OG_PTRSET_INIT;
static struct {
    pthread_mutex_t lock;
    const void *ring[CONSUMED_MEMORY];
    size_t next;
} consumed_fifo = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void remember_consumed(const aclOpExecutor *e) {
    pthread_mutex_lock(&consumed_fifo.lock);
    const void *old = consumed_fifo.ring[consumed_fifo.next];
    if (old) og_ptrset_remove(&consumed_executors, old, NULL);
    consumed_fifo.ring[consumed_fifo.next] = e;
    consumed_fifo.next = (consumed_fifo.next + 1) % CONSUMED_MEMORY;
    og_ptrset_add(&consumed_executors, e, (uintptr_t)e->op);
    pthread_mutex_unlock(&consumed_fifo.lock);
}

aclOpExecutor *og_executor_new(const char *op, size_t plan_size) {
    size_t head = (sizeof(aclOpExecutor) + 63) / 64 * 64;
    aclOpExecutor *e = NULL;
    if (posix_memalign((void **)&e, 64, head + plan_size) != 0) {
        og_set_error("%sGetWorkspaceSize: out of memory creating the executor", op);
        return NULL;
    }
    *e = (aclOpExecutor){.op = op};
    atomic_init(&e->refs, 1);
    // The gradient monitor watches every backward operator's outputs (decided once per
    // executor; no record, no logging when the allocation fails).
    if (opgrad_debug_grads_enabled() && strstr(op, "Backward"))
        e->grads = calloc(1, sizeof *e->grads);
    e->plan = (char *)e + head;
    for (size_t i = 0; i < plan_size; i++) ((char *)e->plan)[i] = 0;
    return e;
}

void og_executor_bind(aclOpExecutor *e, int slot, const aclTensor *t) {
    e->io_base[slot] = t->data;
    e->io_offset[slot] = t->offset * (int64_t)aclDataTypeSize(t->dtype);
    if (e->grads) {
        og_exec_view *v = &e->grads->view[slot];
        v->bound = t->ndim <= OG_EXEC_VIEW_MAX_DIMS;
        v->dtype = t->dtype;
        v->ndim = t->ndim;
        for (int d = 0; d < t->ndim && d < OG_EXEC_VIEW_MAX_DIMS; d++) {
            v->dims[d] = t->dims[d];
            v->strides[d] = t->strides[d];
        }
    }
}

static void destroy(aclOpExecutor *e) {
    free(e->grads);
    free(e);
}

// The gradient names of the backward operators whose outputs are not called gradInput (the
// names of their aclnn signatures).
static const struct {
    const char *op;
    const char *names[3];
} grad_names[] = {
    {"aclnnFusedAddScaleBackward", {"gradX", "gradBias", "gradScale"}},
    {"aclnnHardswishBackward", {"out"}},
    {"aclnnLeakyReluBackward", {"out"}},
    {"aclnnThresholdBackward", {"out"}},
};

static const char *grad_name(const char *op, int k) {
    for (size_t i = 0; i < sizeof grad_names / sizeof grad_names[0]; i++)
        if (strcmp(op, grad_names[i].op) == 0)
            return k < 3 && grad_names[i].names[k] ? grad_names[i].names[k] : "out";
    return k == 0 ? "gradInput" : "out";
}

// Logs each output of a watched executor that has just run (the addresses of this launch).
static void log_grads(const aclOpExecutor *e) {
    for (int k = 0; k < e->noutputs; k++) {
        int slot = e->ninputs + k;
        if (slot < 0 || slot >= OG_EXEC_MAX_IO) break;
        const og_exec_view *v = &e->grads->view[slot];
        if (!v->bound) continue;
        og_grads_log_view(e->op, k, grad_name(e->op, k), v->dtype, v->ndim, v->dims, v->strides,
                          og_executor_addr(e, slot));
    }
}

aclnnStatus og_executor_publish(aclOpExecutor *e, uint64_t *workspaceSize,
                                aclOpExecutor **executor) {
    if (!og_ptrset_add(&live_executors, e, 0)) {
        const char *op = e->op;
        destroy(e);
        return og_fail(ACLNN_ERR_INNER_CREATE_EXECUTOR, "%sGetWorkspaceSize: out of memory", op);
    }
    // A recycled address is a new executor, not a consumed one.
    og_ptrset_remove(&consumed_executors, e, NULL);
    *workspaceSize = e->workspace_size;
    *executor = e;
    return ACLNN_SUCCESS;
}

void og_executor_discard(aclOpExecutor *e) { destroy(e); }

static void release_ref(aclOpExecutor *e) {
    if (atomic_fetch_sub(&e->refs, 1) == 1) destroy(e);
}

aclnnStatus og_check_out_ptrs(const char *op, uint64_t *workspaceSize, aclOpExecutor **executor) {
    if (!workspaceSize)
        return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%sGetWorkspaceSize: workspaceSize is NULL", op);
    if (!executor)
        return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%sGetWorkspaceSize: executor is NULL", op);
    return ACLNN_SUCCESS;
}

// A queued run. It keeps a copy of the executor's addresses as they were at phase 2, so that
// re-pointing a repeatable executor (aclSetInput/OutputTensorAddr) affects later launches only.
typedef struct launch {
    aclOpExecutor *e;
    aclOpExecutor at_launch;
    void *workspace;
} launch;

static int run_launch(void *arg) {
    launch *l = arg;
    int st = l->at_launch.run ? l->at_launch.run(&l->at_launch, l->workspace) : ACLNN_SUCCESS;
    if (l->at_launch.grads && st == ACLNN_SUCCESS) log_grads(&l->at_launch);
    return st;
}

static void free_launch(void *arg) {
    launch *l = arg;
    release_ref(l->e);
    free(l);
}

aclnnStatus og_executor_launch(const char *op, void *workspace, uint64_t workspaceSize,
                               aclOpExecutor *e, aclrtStream stream) {
    if (!e) return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: executor is NULL", op);
    uintptr_t consumed_by = 0;
    if (!og_ptrset_find(&live_executors, e, NULL)) {
        if (og_ptrset_find(&consumed_executors, e, &consumed_by))
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%s: executor %p was already consumed by an earlier %s call (executors "
                           "are single-use unless aclSetAclOpExecutorRepeatable was called)",
                           op, (void *)e, (const char *)consumed_by);
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: executor %p is not a live executor (destroyed, or not returned by a "
                       "GetWorkspaceSize call)",
                       op, (void *)e);
    }
    if (e->op != op)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: executor was planned by %sGetWorkspaceSize; run it with %s", op, e->op,
                       e->op);
    if (workspaceSize < e->workspace_size)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: workspaceSize %llu is smaller than the %llu bytes phase 1 asked for",
                       op, (unsigned long long)workspaceSize,
                       (unsigned long long)e->workspace_size);
    if (e->workspace_size > 0 && !workspace)
        return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: workspace is NULL but %llu bytes are needed",
                       op, (unsigned long long)e->workspace_size);
    // Refuse a dead stream before consuming the executor, so the caller can retry.
    if (!og_stream_is_live(stream))
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: stream %p is not a live stream", op, stream);
    launch *l = malloc(sizeof *l);
    if (!l) return og_fail(ACLNN_ERR_INNER, "%s: out of memory", op);
    l->e = e;
    l->workspace = workspace;
    memcpy(&l->at_launch, e, sizeof *e); // the plan itself is immutable after phase 1
    if (!e->repeatable) {
        // Consume now, so a second phase-2 call is refused even before the first has run. The
        // owner's reference passes to the queued run.
        if (!og_ptrset_remove(&live_executors, e, NULL)) {
            free(l);
            return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: executor %p was consumed concurrently", op,
                           (void *)e);
        }
        remember_consumed(e);
    } else {
        atomic_fetch_add(&e->refs, 1);
    }
    return og_stream_submit(stream, op, run_launch, free_launch, l, ACLNN_ERR_PARAM_INVALID);
}

aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor) {
    if (!executor)
        return og_fail(ACLNN_ERR_INNER_NULLPTR, "aclSetAclOpExecutorRepeatable: executor is NULL");
    if (!og_ptrset_find(&live_executors, executor, NULL))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "aclSetAclOpExecutorRepeatable: executor %p is not a live executor",
                       (void *)executor);
    executor->repeatable = true;
    return ACLNN_SUCCESS;
}

aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor) {
    if (!executor)
        return og_fail(ACLNN_ERR_PARAM_NULLPTR, "aclDestroyAclOpExecutor: executor is NULL");
    if (!og_ptrset_remove(&live_executors, executor, NULL))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "aclDestroyAclOpExecutor: executor %p is not a live executor (consumed by "
                       "phase 2, or destroyed already)",
                       (void *)executor);
    release_ref(executor); // queued runs keep it alive until they finish
    return ACLNN_SUCCESS;
}

static aclnnStatus set_addr(const char *fn, aclOpExecutor *e, size_t index, bool output,
                            aclTensor *tensor, void *addr) {
    if (!e) return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: executor is NULL", fn);
    if (!og_ptrset_find(&live_executors, e, NULL))
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: executor %p is not a live executor", fn,
                       (void *)e);
    size_t count = output ? (size_t)e->noutputs : (size_t)e->ninputs;
    if (index >= count)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: index %zu is out of range (%s has %zu %s)", fn,
                       index, e->op, count, output ? "outputs" : "inputs");
    int slot = (int)index + (output ? e->ninputs : 0);
    e->io_base[slot] = addr;
    if (tensor) tensor->data = addr;
    return ACLNN_SUCCESS;
}

aclnnStatus aclSetInputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor,
                                  void *addr) {
    return set_addr("aclSetInputTensorAddr", executor, index, false, tensor, addr);
}

aclnnStatus aclSetOutputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor,
                                   void *addr) {
    return set_addr("aclSetOutputTensorAddr", executor, index, true, tensor, addr);
}

aclnnStatus opgrad_executor_run(aclOpExecutor *executor, void *const *addrs, size_t naddrs,
                                void *workspace, uint64_t workspaceSize, aclrtStream stream) {
    static const char fn[] = "opgrad_executor_run";
    aclOpExecutor *e = executor;
    if (!e) return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: executor is NULL", fn);
    if (!og_ptrset_find(&live_executors, e, NULL)) {
        uintptr_t consumed_by = 0;
        if (og_ptrset_find(&consumed_executors, e, &consumed_by))
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%s: executor %p was already consumed by an earlier %s call", fn,
                           (void *)e, (const char *)consumed_by);
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: executor %p is not a live executor (destroyed, or not returned by a "
                       "GetWorkspaceSize call)",
                       fn, (void *)e);
    }
    // Single-use executors are refused before anything changes: re-pointing one and consuming
    // it in the same call has no use, and refusing keeps it runnable by its own aclnnXxx.
    if (!e->repeatable)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: executor %p (planned by %sGetWorkspaceSize) is single-use; call "
                       "aclSetAclOpExecutorRepeatable first, or run it with %s",
                       fn, (void *)e, e->op, e->op);
    size_t slots = (size_t)e->ninputs + (size_t)e->noutputs;
    if (naddrs > slots)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: naddrs %zu is larger than the %zu io slots of the %s executor (%d "
                       "inputs + %d outputs)",
                       fn, naddrs, slots, e->op, e->ninputs, e->noutputs);
    if (naddrs > 0 && !addrs)
        return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: addrs is NULL but naddrs is %zu", fn, naddrs);
    // Re-point, run, and on failure put the old addresses back (a queued run has its own copy
    // of the addresses, taken at launch, so restoring never affects it).
    void *saved[OG_EXEC_MAX_IO];
    bool moved = false;
    for (size_t i = 0; i < naddrs; i++) {
        void *a = addrs[i];
        if (a && a != e->io_base[i]) {
            if (!moved) memcpy(saved, e->io_base, sizeof saved);
            moved = true;
            e->io_base[i] = a;
        }
    }
    aclnnStatus st = og_executor_launch(e->op, workspace, workspaceSize, e, stream);
    if (st != ACLNN_SUCCESS && moved) memcpy(e->io_base, saved, sizeof saved);
    return st;
}
