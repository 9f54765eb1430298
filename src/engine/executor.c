#include "engine/executor.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/blocking.h"
#include "engine/prefault.h"
#include "engine/program.h"
#include "opgrad/custom_op.h"
#include "opgrad/opgrad.h"
#include "runtime/error.h"
#include "runtime/profile.h"
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

// One allocation: the executor, its io slots, the temporaries' offsets and the steps.
aclOpExecutor *og_executor_new(const og_opdesc *op, int nin, int nout, int ntemps, int nsteps) {
    size_t head = (sizeof(aclOpExecutor) + 63) / 64 * 64;
    int nslots = nin + nout + ntemps;
    size_t io_bytes = (size_t)nslots * sizeof(og_io);
    size_t temp_bytes = (size_t)ntemps * sizeof(uint64_t);
    size_t steps_at = (head + io_bytes + temp_bytes + 63) / 64 * 64;
    aclOpExecutor *e = NULL;
    if (nin < 0 || nout < 0 || ntemps < 0 || nsteps < 0 ||
        posix_memalign((void **)&e, 64, steps_at + (size_t)nsteps * sizeof(og_step)) != 0) {
        og_set_error("%sGetWorkspaceSize: out of memory creating the executor", op->name);
        return NULL;
    }
    memset(e, 0, steps_at + (size_t)nsteps * sizeof(og_step)); // steps own nothing yet
    *e = (aclOpExecutor){
        .op = op, .ninputs = nin, .noutputs = nout, .nslots = nslots, .nsteps = nsteps};
    atomic_init(&e->refs, 1);
    e->io = (og_io *)((char *)e + head);
    e->temp_offset = (const uint64_t *)((char *)e->io + io_bytes);
    e->steps = (const og_step *)((char *)e + steps_at);
    // The gradient monitor watches every backward operator's outputs (decided once per
    // executor; no record, no logging when the allocation fails).
    if (opgrad_debug_grads_enabled() && op->kind == OG_OP_BACKWARD && nin + nout > 0)
        e->views = calloc((size_t)(nin + nout), sizeof *e->views);
    return e;
}

og_step *og_executor_steps(aclOpExecutor *e) { return (og_step *)e->steps; }

uint64_t *og_executor_temp_offsets(aclOpExecutor *e) { return (uint64_t *)e->temp_offset; }

// The bytes a view covers when it is dense (its strides are a permutation of a contiguous
// layout's), else 0.
static int64_t dense_bytes(const aclTensor *t) {
    int64_t dims[OG_TENSOR_MAX_DIMS], strides[OG_TENSOR_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < t->ndim; d++) { // the dims of size > 1, by increasing stride
        if (t->dims[d] == 1) continue;
        int at = n++;
        for (; at > 0 && strides[at - 1] > t->strides[d]; at--) {
            dims[at] = dims[at - 1];
            strides[at] = strides[at - 1];
        }
        dims[at] = t->dims[d];
        strides[at] = t->strides[d];
    }
    int64_t expected = 1;
    for (int d = 0; d < n; d++) {
        if (strides[d] != expected) return 0;
        expected *= dims[d];
    }
    return t->numel * (int64_t)aclDataTypeSize(t->dtype);
}

bool og_executor_bind(aclOpExecutor *e, int slot, const aclTensor *t) {
    if (slot < 0 || slot >= e->ninputs + e->noutputs) return false;
    e->io[slot].base = t->data;
    e->io[slot].offset = t->offset * (int64_t)aclDataTypeSize(t->dtype);
    e->io[slot].prefault_bytes = 0;
    if (slot >= e->ninputs && t->numel > 0) { // outputs only; the gate is read at phase 1, never
        int64_t gate = og_size_gates_get().prefault_out_bytes; // at launch
        int64_t bytes = gate > 0 ? dense_bytes(t) : 0;
        if (bytes >= gate) e->io[slot].prefault_bytes = bytes;
    }
    if (e->views) {
        og_exec_view *v = &e->views[slot];
        v->bound = t->ndim <= OG_EXEC_VIEW_MAX_DIMS;
        v->dtype = t->dtype;
        v->ndim = t->ndim;
        for (int d = 0; d < t->ndim && d < OG_EXEC_VIEW_MAX_DIMS; d++) {
            v->dims[d] = t->dims[d];
            v->strides[d] = t->strides[d];
        }
    }
    return true;
}

static void destroy(aclOpExecutor *e) {
    og_prog_free_steps(og_executor_steps(e), e->nsteps);
    free(e->views);
    free(e->profile);
    free(e);
}

// Logs each output of a watched executor that has just run (the addresses of this launch), under
// the name of its parameter in the operator's signature.
static void log_grads(const aclOpExecutor *e) {
    for (int k = 0; k < e->noutputs; k++) {
        int slot = e->ninputs + k;
        const og_exec_view *v = &e->views[slot];
        if (!v->bound) continue;
        char name[48];
        const char *n = og_opdesc_output_name(e->op, k, name, sizeof name);
        og_grads_log_view(e->op->name, k, n ? n : "out", v->dtype, v->ndim, v->dims, v->strides,
                          og_executor_addr(e, slot));
    }
}

aclnnStatus og_executor_publish(aclOpExecutor *e, uint64_t *workspaceSize,
                                aclOpExecutor **executor) {
    if (!og_ptrset_add(&live_executors, e, 0)) {
        const char *op = e->op->name;
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

static void take_ref(void *e) { atomic_fetch_add(&((aclOpExecutor *)e)->refs, 1); }

// Finds a live executor and takes a reference (release_ref) in one step under the registry's lock:
// a concurrent aclDestroyAclOpExecutor or consuming launch then cannot free it while it is used.
static bool hold(aclOpExecutor *e) { return og_ptrset_find_ref(&live_executors, e, take_ref); }

// The message for an executor that hold() did not find.
static void not_live(const char *fn, const aclOpExecutor *e) {
    uintptr_t consumed_by = 0;
    if (og_ptrset_find(&consumed_executors, e, &consumed_by))
        og_set_error("%s: executor %p was already consumed by an earlier %s call (executors are "
                     "single-use unless aclSetAclOpExecutorRepeatable was called)",
                     fn, (const void *)e, ((const og_opdesc *)consumed_by)->name);
    else
        og_set_error("%s: executor %p is not a live executor (destroyed, or not returned by a "
                     "GetWorkspaceSize call)",
                     fn, (const void *)e);
}

// A queued run. It keeps a copy of the executor's io slots as they were at phase 2 (launch.io),
// so that re-pointing a repeatable executor (aclSetInput/OutputTensorAddr) affects later launches
// only; the temporaries' slots point into this launch's workspace. The steps are immutable after
// phase 1 and shared.
typedef struct launch {
    aclOpExecutor *e;
    aclOpExecutor at_launch;
    void *workspace;
    aclrtStream stream; // (the profiler's record)
    og_io io[];         // [nslots]
} launch;

static int run_launch(void *arg) {
    launch *l = arg;
    const aclOpExecutor *e = &l->at_launch;
    bool profiled = og_profile_on(); // off: this branch is the profiler's whole cost
    double t0 = profiled ? og_profile_now_us() : 0;
    og_prefault_outputs(e);
    og_program_run(e, l->workspace);
    if (profiled) og_profile_record(l->e, t0, og_profile_now_us(), l->stream);
    if (e->views) log_grads(e);
    return ACLNN_SUCCESS;
}

static void free_launch(void *arg) {
    launch *l = arg;
    release_ref(l->e);
    free(l);
}

// Checks everything phase 2 checks, consumes a single-use executor, and returns the launch that
// runs it (NULL with the status in *st). The launch owns a reference to the executor.
static launch *prepare_launch(const og_opdesc *op, void *workspace, uint64_t workspaceSize,
                              aclOpExecutor *e, aclrtStream stream, aclnnStatus *st) {
    const char *fn = op->name;
    *st = ACLNN_ERR_PARAM_INVALID;
    if (!hold(e)) {
        not_live(fn, e);
        return NULL;
    }
    launch *l = NULL;
    if (e->op != op) {
        og_set_error("%s: executor was planned by %sGetWorkspaceSize; run it with %s", fn,
                     e->op->name, e->op->name);
    } else if (workspaceSize < e->workspace_size) {
        og_set_error("%s: workspaceSize %llu is smaller than the %llu bytes phase 1 asked for", fn,
                     (unsigned long long)workspaceSize, (unsigned long long)e->workspace_size);
    } else if (e->workspace_size > 0 && !workspace) {
        *st = og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: workspace is NULL but %llu bytes are needed",
                      fn, (unsigned long long)e->workspace_size);
    } else if (!og_stream_is_live(stream)) {
        // Refused before the executor is consumed, so the caller can retry. (A stream destroyed
        // between here and the submit still refuses the launch, which then consumes it.)
        og_set_error("%s: stream %p is not a live stream", fn, stream);
    } else if (!(l = malloc(sizeof *l + (size_t)e->nslots * sizeof(og_io)))) {
        *st = og_fail(ACLNN_ERR_INNER, "%s: out of memory", fn);
    } else if (!e->repeatable && !og_ptrset_remove(&live_executors, e, NULL)) {
        // Consumed now, so a second phase-2 call is refused even before the first has run.
        og_set_error("%s: executor %p was consumed concurrently", fn, (void *)e);
        free(l);
        l = NULL;
    }
    if (!l) {
        release_ref(e);
        return NULL;
    }
    l->e = e; // holds our reference
    l->workspace = workspace;
    l->stream = stream;
    // Field by field, never *e: the reference count is atomic and changes on other threads (the
    // dispatchers releasing earlier launches).
    l->at_launch = (aclOpExecutor){.op = e->op,
                                   .workspace_size = e->workspace_size,
                                   .ninputs = e->ninputs,
                                   .noutputs = e->noutputs,
                                   .nslots = e->nslots,
                                   .io = l->io,
                                   .temp_offset = e->temp_offset,
                                   .scratch_offset = e->scratch_offset,
                                   .nsteps = e->nsteps,
                                   .steps = e->steps,
                                   .views = e->views};
    int nio = e->ninputs + e->noutputs;
    memcpy(l->io, e->io, (size_t)nio * sizeof(og_io));
    // temporaries live in the workspace; a program whose temporaries are all empty asks for
    // none, and NULL plus an offset (even 0) is undefined: they get NULL, never dereferenced
    for (int t = nio; t < e->nslots; t++)
        l->io[t] = (og_io){workspace ? (char *)workspace + e->temp_offset[t - nio] : NULL, 0, 0};
    if (!e->repeatable) {
        remember_consumed(e);
        release_ref(e); // the owner's reference passes to the launch instead (last use of e here)
    }
    *st = ACLNN_SUCCESS;
    return l;
}

aclnnStatus og_executor_launch(const og_opdesc *op, void *workspace, uint64_t workspaceSize,
                               aclOpExecutor *e, aclrtStream stream) {
    if (!e) return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: executor is NULL", op->name);
    aclnnStatus st;
    launch *l = prepare_launch(op, workspace, workspaceSize, e, stream, &st);
    if (!l) return st;
    return og_stream_submit(stream, op->name, run_launch, free_launch, l, ACLNN_ERR_PARAM_INVALID);
}

aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor) {
    static const char fn[] = "aclSetAclOpExecutorRepeatable";
    // a NULL argument is the caller's (161001), as for every other entry point
    if (!executor) return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: executor is NULL", fn);
    if (!hold(executor)) {
        not_live(fn, executor);
        return ACLNN_ERR_PARAM_INVALID;
    }
    executor->repeatable = true;
    release_ref(executor);
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
    if (!hold(e)) {
        not_live(fn, e);
        return ACLNN_ERR_PARAM_INVALID;
    }
    aclnnStatus st = ACLNN_SUCCESS;
    size_t count = output ? (size_t)e->noutputs : (size_t)e->ninputs;
    if (index >= count) {
        st = og_fail(ACLNN_ERR_PARAM_INVALID, "%s: index %zu is out of range (%s has %zu %s)", fn,
                     index, e->op->name, count, output ? "outputs" : "inputs");
    } else {
        e->io[(int)index + (output ? e->ninputs : 0)].base = addr;
        if (tensor) tensor->data = addr;
    }
    release_ref(e);
    return st;
}

aclnnStatus aclSetInputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor,
                                  void *addr) {
    return set_addr("aclSetInputTensorAddr", executor, index, false, tensor, addr);
}

aclnnStatus aclSetOutputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor,
                                   void *addr) {
    return set_addr("aclSetOutputTensorAddr", executor, index, true, tensor, addr);
}

// opgrad_executor_run on an executor the caller holds a reference to.
static aclnnStatus run_repointed(const char *fn, aclOpExecutor *e, void *const *addrs,
                                 size_t naddrs, void *workspace, uint64_t workspaceSize,
                                 aclrtStream stream) {
    // Single-use executors are refused before anything changes: re-pointing one and consuming
    // it in the same call has no use, and refusing keeps it runnable by its own aclnnXxx.
    if (!e->repeatable)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: executor %p (planned by %sGetWorkspaceSize) is single-use; call "
                       "aclSetAclOpExecutorRepeatable first, or run it with %s",
                       fn, (void *)e, e->op->name, e->op->name);
    size_t slots = (size_t)e->ninputs + (size_t)e->noutputs;
    if (naddrs > slots)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: naddrs %zu is larger than the %zu io slots of the %s executor (%d "
                       "inputs + %d outputs)",
                       fn, naddrs, slots, e->op->name, e->ninputs, e->noutputs);
    if (naddrs > 0 && !addrs)
        return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: addrs is NULL but naddrs is %zu", fn, naddrs);
    // Launch with the new addresses, leaving the executor's own ones alone until the launch is
    // accepted: a refused call changes nothing (a queued run has its own copy, taken at launch).
    void *saved_stack[16], **saved = saved_stack;
    if (naddrs > 16 && !(saved = malloc(naddrs * sizeof *saved)))
        return og_fail(ACLNN_ERR_INNER, "%s: out of memory", fn);
    for (size_t i = 0; i < naddrs; i++) {
        saved[i] = e->io[i].base;
        if (addrs[i]) e->io[i].base = addrs[i];
    }
    aclnnStatus st = og_executor_launch(e->op, workspace, workspaceSize, e, stream);
    if (st != ACLNN_SUCCESS)
        for (size_t i = 0; i < naddrs; i++) e->io[i].base = saved[i];
    if (saved != saved_stack) free(saved);
    return st;
}

aclnnStatus opgrad_executor_run(aclOpExecutor *executor, void *const *addrs, size_t naddrs,
                                void *workspace, uint64_t workspaceSize, aclrtStream stream) {
    static const char fn[] = "opgrad_executor_run";
    if (!executor) return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: executor is NULL", fn);
    if (!hold(executor)) {
        not_live(fn, executor);
        return ACLNN_ERR_PARAM_INVALID;
    }
    aclnnStatus st = run_repointed(fn, executor, addrs, naddrs, workspace, workspaceSize, stream);
    release_ref(executor);
    return st;
}

const char *opgrad_executor_algorithm(const aclOpExecutor *executor) {
    // a live executor only: a destroyed one's memory may be gone
    if (!executor || !og_ptrset_find(&live_executors, executor, NULL)) return "";
    return executor->algorithm;
}
