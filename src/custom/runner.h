/* Running a custom kernel the way the checker needs it: every param in one shared mapping with
 * canary zones after each buffer and an inaccessible page at the end, the kernel called in a
 * child process (a crash, a hang, exit(), a memory hog or a kernel that spawns processes is
 * reported, the checker goes on), and helpers to see what the kernel wrote: past the end
 * (canaries) or not at all (poison).
 *
 * The child process (isolated runs):
 *   - loads the library itself, under the time limit: the parent never dlopens user code, so a
 *     constructor that calls exit() or never returns is that child's failure, not the checker's;
 *   - runs in a process group of its own; the whole group is killed when the call ends (timeout
 *     or not), and the checker is a child subreaper (PR_SET_CHILD_SUBREAPER), so a grandchild
 *     that left the group with setsid() is adopted by the checker when its parent dies and
 *     killed too (docs/custom-ops.md says what can still escape);
 *   - writes stdout and stderr into a pipe the parent drains while it waits: the output is
 *     kept (the first OGR_OUTPUT_MAX bytes, control characters replaced) and counted, never
 *     mixed into the checker's own output, and the parent stops reading when the child has
 *     exited, so a grandchild holding the pipe open cannot make it wait;
 *   - has an optional address-space limit (RLIMIT_AS) on what it adds to its own size. */
#ifndef OG_CUSTOM_RUNNER_H
#define OG_CUSTOM_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "check/check.h"
#include "opgrad/custom_op.h"

#define OGR_MAX_PARAMS 24
#define OGR_OUTPUT_MAX 1024 // bytes of a call's stdout + stderr kept for the report

typedef struct ogr_param {
    aclDataType dtype;
    ogc_shape shape;
    void *data;   // in the shared mapping
    size_t bytes; // numel * element size
    size_t tail;  // canary bytes after data
} ogr_param;

typedef struct ogr_call {
    int n;
    ogr_param p[OGR_MAX_PARAMS];
    // what the aot ABI passes, pointing into p[]
    void *params[OGR_MAX_PARAMS];
    int ndims[OGR_MAX_PARAMS];
    int64_t *shapes[OGR_MAX_PARAMS];
    const char *dtypes[OGR_MAX_PARAMS];
    void *map;
    size_t map_size;
    struct ogr_header *header; // the child's report, in the mapping
} ogr_call;

/// Where and how kernels run.
typedef struct ogr_env {
    bool isolate;           // in a child process (else in this one: for a debugger)
    const char *library;    // isolated: the absolute path each child loads
    opgrad_custom_lib *lib; // in this process: the library, loaded by the caller
    double timeout_s;       // isolated: per call, > 0
    uint64_t max_memory;    // isolated: bytes the child may add to its address space; 0: none
} ogr_env;

typedef struct ogr_outcome {
    int rc;              // the kernel's return value
    int signal;          // > 0: the child died from this signal
    bool timed_out;      // killed after the time limit
    bool not_run;        // no child could be started (fork, pipe, mmap failed): see message
    bool lost;           // the child ended without reporting (exit() in the kernel?)
    int exit_status;     // ... with this exit status
    bool in_load;        // the failure happened while the library was loading (constructors)
    bool load_failed;    // the library (or the symbol) could not be loaded: see message
    bool memory;         // failed after using at least half of max_memory: the limit's doing
    uint64_t max_memory; // the limit in force (0: none)
    uint64_t mem_grew;   // bytes the child's resident set grew by (isolated runs)
    double timeout_s;    // the limit in force
    char message[512];   // why the child could not run, or the loader's message
    char output[OGR_OUTPUT_MAX + 1]; // the first bytes of stdout + stderr (sanitised), NUL-ended
    uint64_t output_bytes;           // every byte the call wrote (may exceed what is kept)
} ogr_outcome;

/// Lays out n params (dtypes, shapes) with `tail` canary bytes after each; false on OOM/size.
bool ogr_alloc(ogr_call *c, int n, const aclDataType *dtypes, const ogc_shape *shapes, size_t tail);
void ogr_free(ogr_call *c);
/// Fills param i's data with `byte` and its canary zone with the canary pattern.
void ogr_poison(ogr_call *c, int i, unsigned char byte);

/// Calls `symbol` of the library (or, when fn is given, fn(..., extra): no library needed) on c,
/// as env says.
void ogr_run(ogr_call *c, const ogr_env *env, const char *symbol, opgrad_aot_fn fn, void *extra,
             ogr_outcome *out);
/// Loads the library in a child and looks up the n symbols, under env's limits: a constructor
/// that exits, crashes or hangs is reported in out (isolated envs only).
void ogr_load(const ogr_env *env, const char *const *symbols, int n, ogr_outcome *out);
/// Why a call failed, to follow "the forward kernel ": "crashed with SIGSEGV (Segmentation
/// fault)", "did not return within 20 s (hung?)", "returned 3", "ended the process (exit
/// status 1) instead of returning", "exceeded the memory limit ..."; "" when it succeeded.
void ogr_outcome_str(const ogr_outcome *o, char *buf, size_t size);
/// Bytes of param i's canary zone that were overwritten, counted to the furthest one (0: none).
size_t ogr_overrun(const ogr_call *c, int i);
/// "512 MiB", "1.5 GiB", "300 KiB" (for messages).
void ogr_size_str(uint64_t bytes, char *buf, size_t size);

#endif
