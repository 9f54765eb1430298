/* opgrad/custom_op.h - the custom-operator ABI, and opgrad's loader for it.
 *
 * A custom operator is a shared library (plain C is enough) exporting two functions with
 * MindSpore's "aot" signature, so that the same .so plugs unchanged into
 *   MindSpore  ops.Custom(func="/abs/lib.so:Name", func_type="aot", bprop=...),
 *   PyTorch    opgrad.torch.load_custom(spec),
 *   opgrad     opgrad_custom_call() below, and `opgrad check --custom spec.json`.
 *
 * Forward  Name(nparam, params, ndims, shapes, dtypes, stream, extra)
 *   params   the inputs x_1..x_n, then the outputs y_1..y_m (then MindSpore workspaces, which
 *            have no ndims/shapes/dtypes entries): nparam = n + m (+ workspaces)
 *   ndims[i], shapes[i][d]   rank and dims of params[i]; every tensor is dense row-major
 *   dtypes[i]  "float32", "float16", "bfloat16", "float64", "int32", ... (MindSpore spelling)
 *   stream   NULL on the CPU
 *   extra    MindSpore's C++ AotExtra object or NULL: plain-C kernels must ignore it
 *   return   0 on success, anything else is an error (MindSpore raises, opgrad reports it)
 *
 * Backward (the bprop convention): the same signature, with
 *   params   x_1..x_n, y_1..y_m, dy_1..dy_m, then the outputs dx_1..dx_n
 *   so nparam = 2n + 2m. Exactly one gradient per forward input, each with that input's shape
 *   and dtype: a gradient of a broadcast input (a bias [C] added to x [N,C]) must be summed over
 *   the broadcast dims. dy may arrive in another floating dtype than y (mixed precision) when
 *   the operator's spec claims it.
 *
 * The JSON spec that describes an operator to opgrad is documented in docs/custom-ops.md. */
#ifndef OPGRAD_CUSTOM_OP_H
#define OPGRAD_CUSTOM_OP_H

#include <stdint.h>
#include <string.h>

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OPGRAD_API __attribute__((visibility("default")))

/// The aot kernel signature (forward and backward).
typedef int (*opgrad_aot_fn)(int nparam, void **params, int *ndims, int64_t **shapes,
                             const char **dtypes, void *stream, void *extra);

/// Elements of a dense tensor of rank ndim (1 for rank 0).
static inline int64_t opgrad_aot_numel(int ndim, const int64_t *shape) {
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    return n;
}

/// True when dtypes[i] names `want` ("float32", ...). MindSpore also spells float32 "float".
static inline int opgrad_aot_dtype_is(const char *dtype, const char *want) {
    if (!dtype || !want) return 0;
    if (strcmp(dtype, want) == 0) return 1;
    return strcmp(want, "float32") == 0 && strcmp(dtype, "float") == 0;
}

/* ---- loading custom operators into opgrad (libopgrad) ---------------------------------------
 * A library is opened by absolute path only: a relative path would resolve against whatever
 * directory the process happens to run in. opgrad loads a private copy of the file, and before
 * every call compares the file's identity (device, inode, size, mtime) with the loaded one: a
 * library rebuilt since it was loaded is reloaded, never used stale. */

typedef struct opgrad_custom_lib opgrad_custom_lib;

/// Opens the library at the absolute path `path`. ACLNN_ERR_PARAM_NULLPTR /
/// ACLNN_ERR_PARAM_INVALID (relative path, missing file, dlopen error) with a message.
OPGRAD_API aclnnStatus opgrad_custom_open(const char *path, opgrad_custom_lib **lib);
/// ACLNN_SUCCESS when `symbol` exists (after reloading a rebuilt file), else
/// ACLNN_ERR_PARAM_INVALID naming the symbol and the library.
OPGRAD_API aclnnStatus opgrad_custom_has_symbol(opgrad_custom_lib *lib, const char *symbol);
/// Calls `symbol` with the aot arguments (stream and extra NULL), reloading a rebuilt library
/// first. `ngrads` > 0 marks a backward whose last ngrads params are gradients: with
/// OPGRAD_DEBUG_GRADS=1 they are logged (see opgrad_debug_grads_log). A non-zero kernel return
/// gives ACLNN_ERR_INNER with a message holding the code.
OPGRAD_API aclnnStatus opgrad_custom_call(opgrad_custom_lib *lib, const char *symbol, int nparam,
                                          void **params, int *ndims, int64_t **shapes,
                                          const char **dtypes, int ngrads);
/// opgrad_custom_call with checks, to name a kernel's mistake inside a training job
/// (opgrad.mindspore.custom(spec, debug=True) uses it). The last `noutputs` params are the
/// outputs (of a backward: the gradients, the last `ngrads` of them, logged by the monitor):
/// the kernel writes them into opgrad's own buffers of exactly the shapes given, poisoned and
/// followed by canary bytes (as many as the call's largest param, at least 4 KiB); they are
/// copied to params only when the call passes. ACLNN_ERR_PARAM_INVALID, with a message naming
/// the param (`names`, one per param, may be NULL), its declared shape and what happened, when
/// the kernel wrote past an output (with how many elements it wrote and which param has that
/// many: "a gradient of a broadcast input must be summed ..."), wrote into an input, or left
/// floating output elements unwritten; ACLNN_ERR_INNER for a nonzero return. A write further
/// than the canary zone is not caught (`opgrad check --custom` isolates the kernel for that).
OPGRAD_API aclnnStatus opgrad_custom_call_guarded(opgrad_custom_lib *lib, const char *symbol,
                                                  int nparam, void **params, int *ndims,
                                                  int64_t **shapes, const char **dtypes,
                                                  int noutputs, int ngrads,
                                                  const char *const *names);
/// Names for the gradient monitor's lines of the backward `symbol`: the operator's name (NULL:
/// the symbol) and one name per gradient, in order (the spec's input names); without them the
/// lines read "<symbol> grad[k] grad<k>". Copies the strings; ngrads 0 forgets the names.
OPGRAD_API aclnnStatus opgrad_custom_set_grad_names(opgrad_custom_lib *lib, const char *symbol,
                                                    const char *op, int ngrads,
                                                    const char *const *names);
/// How many times the library has been (re)loaded: 1 after open, +1 per reload.
OPGRAD_API int opgrad_custom_load_count(const opgrad_custom_lib *lib);
/// The path of the private copy now loaded (for diagnostics).
OPGRAD_API const char *opgrad_custom_loaded_path(const opgrad_custom_lib *lib);
OPGRAD_API void opgrad_custom_close(opgrad_custom_lib *lib);

/// 1 when libopgrad reads MindSpore's operator attributes from the aot `extra` argument (its
/// opgrad_* entry points: Softplus beta, LeakyRelu negativeSlope, LayerNorm eps, ...; docs/aot.md),
/// 0 when it was built without a C++ compiler (the entry points then use the defaults).
OPGRAD_API int opgrad_aot_attributes_supported(void);

/* ---- the gradient monitor -------------------------------------------------------------------
 * With OPGRAD_DEBUG_GRADS=1 in the environment, every backward that runs through opgrad
 * (built-in aclnn backward operators, custom backward kernels called through opgrad, from C,
 * PyTorch or MindSpore) logs one line per gradient to stderr (or to the file named by
 * OPGRAD_DEBUG_GRADS_FILE): operator, gradient index and name, shape, dtype, sum, min, max, L2
 * norm and the NaN / Inf counts. */

/// Non-zero when the monitor is on.
OPGRAD_API int opgrad_debug_grads_enabled(void);
/// Logs one dense gradient tensor (dtype in the aot spelling) when the monitor is on.
OPGRAD_API void opgrad_debug_grads_log(const char *op, int index, const char *name,
                                       const char *dtype, int ndim, const int64_t *shape,
                                       const void *data);

#ifdef __cplusplus
}
#endif
#endif
