/* Running a custom kernel the way the checker needs it: every param in one shared mapping with
 * canary zones after each buffer and an inaccessible page at the end, the kernel called in a
 * child process (a crash or a hang is reported, the checker goes on), and helpers to see what
 * the kernel wrote: past the end (canaries) or not at all (poison). */
#ifndef OG_CUSTOM_RUNNER_H
#define OG_CUSTOM_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "check/check.h"
#include "opgrad/custom_op.h"

#define OGR_MAX_PARAMS 24

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

typedef struct ogr_outcome {
    int rc;            // the kernel's return value
    int signal;        // > 0: the child died from this signal
    bool timed_out;    // killed after the time limit
    bool lost;         // the child exited without reporting (called exit()?)
    char message[256]; // aclGetRecentErrMsg of a failed call, or why the child could not run
} ogr_outcome;

/// Lays out n params (dtypes, shapes) with `tail` canary bytes after each; false on OOM/size.
bool ogr_alloc(ogr_call *c, int n, const aclDataType *dtypes, const ogc_shape *shapes, size_t tail);
void ogr_free(ogr_call *c);
/// Fills param i's data with `byte` and its canary zone with the canary pattern.
void ogr_poison(ogr_call *c, int i, unsigned char byte);

/// Calls `symbol` of `lib` (or, when lib is NULL, fn(..., extra)) on c. isolate: in a child
/// process, killed after timeout_s seconds.
void ogr_run(ogr_call *c, opgrad_custom_lib *lib, const char *symbol, opgrad_aot_fn fn, void *extra,
             bool isolate, int timeout_s, ogr_outcome *out);
/// "crashed with SIGSEGV (segmentation fault)", "timed out after 20 s", "returned 3: <msg>", or
/// "" when the call succeeded.
void ogr_outcome_str(const ogr_outcome *o, char *buf, size_t size);
/// Bytes of param i's canary zone that were overwritten, counted to the furthest one (0: none).
size_t ogr_overrun(const ogr_call *c, int i);

#endif
