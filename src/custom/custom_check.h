/* `opgrad check --custom SPEC`: the custom-operator checker (docs/custom-ops.md).
 *
 * For every dtype and size binding of the spec it runs, in the order that localises a failure:
 *   load      the library (absolute path, symbols), once;
 *   forward   the forward kernel alone, in a child process, against the reference;
 *   wiring    the gradient declarations, with opgrad's identity backward in place of the kernel;
 *   backward  the backward kernel, in a child process: count, shapes and dtypes of the
 *             gradients, values against the reference's exact gradient and against finite
 *             differences of the forward kernel, coverage, B(0) = 0;
 *   backward dout=<dtype>  the same with the output gradient in each claimed mixed dtype.
 * A stage is skipped when an earlier one failed for the same case. */
#ifndef OG_CUSTOM_CHECK_H
#define OG_CUSTOM_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "check/check.h"

typedef struct ogcc_options {
    uint64_t seed;
    const char *library; // overrides the spec's "library" (must still be absolute)
    bool in_process;     // run kernels in this process (debugging; a crash ends the check)
    int timeout_s;       // per kernel call (default 20)
} ogcc_options;

/// One row of the report; `layout` holds "stage binding", e.g. "backward N=8,C=16".
typedef struct ogcc_row {
    ogc_report r;
    char label[96];
} ogcc_row;

typedef void (*ogcc_sink)(const ogcc_row *row, void *user);

/// Runs the check; every row goes to sink as it is decided. Returns the number of FAIL rows
/// (a spec or load error is one FAIL row).
int ogcc_check(const char *spec_path, const ogcc_options *opt, ogcc_sink sink, void *user);

#endif
