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
    double timeout_s;    // per kernel call and per library load, in seconds (<= 0: 20)
    uint64_t max_memory; // bytes a kernel's child may add to its address space (0: no limit)
} ogcc_options;

#define OGCC_OUTPUT_MAX 1024 // bytes of kernel output kept per row

/// One row of the report; `layout` holds "stage binding", e.g. "backward N=8,C=16".
typedef struct ogcc_row {
    ogc_report r;
    char label[96];
    /// What the kernels wrote to stdout and stderr while this row's stage ran (child processes
    /// only): the first bytes, control characters replaced by '?'; output_bytes counts them all.
    char output[OGCC_OUTPUT_MAX + 1];
    uint64_t output_bytes;
} ogcc_row;

typedef void (*ogcc_sink)(const ogcc_row *row, void *user);

/// Runs the check; every row goes to sink as it is decided. Returns the number of FAIL rows
/// (a spec or load error is one FAIL row).
int ogcc_check(const char *spec_path, const ogcc_options *opt, ogcc_sink sink, void *user);

/// --timeout: a number of seconds, finite, > 0 and at most a day ("20", "0.5", "1e-1"); false
/// for anything else ("0", "-1", "abc", "1s", "", "nan").
bool ogcc_parse_seconds(const char *s, double *seconds);
/// --max-memory: a size in bytes with an optional binary suffix K, M, G or T (KiB, MiB, GiB,
/// TiB; "k"/"KB"/"KiB" spellings too): "512M", "4G", "1.5G", "1048576"; at least 1 MiB; false
/// for anything else.
bool ogcc_parse_size(const char *s, uint64_t *bytes);

#endif
