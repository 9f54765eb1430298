/* Internal to src/aot: what the generated entry points (aot_builtins.c) share with the
 * hand-written ones (aot_matmul.c). An entry point is described by an aot_entry (its name, its
 * inputs' names, forward or backward); its params follow docs/aot.md's layout: the inputs, y,
 * and for a backward dy then one gradient per input. Every function here reports a failure as an
 * aclnn status with a message for aclGetRecentErrMsg that starts with the entry point's name. */
#ifndef OG_AOT_INTERNAL_H
#define OG_AOT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "acl/acl.h"
#include "engine/opdesc.h"
#include "tensor/tensor.h"

#define AOT_MAX_IN 4
#define AOT_MAX_PARAMS (2 * AOT_MAX_IN + 2)

/* ---- an entry point: a forward operator, or its backward ---------------------------------------
 */

typedef struct aot_entry {
    char name[64];        // "opgrad_MishBackward"
    const og_opdesc *fwd; // the forward operator (NULL for a hand-written entry)
    const og_opdesc *bwd; // its backward operator (backward entries), NULL if composite
    bool backward;
    int nin;                 // forward inputs
    char in[AOT_MAX_IN][48]; // their names
    void *extra;             // the call's `extra`: MindSpore's AotExtra (attributes) or NULL
} aot_entry;

/// Params of the entry point: nin + 1 (forward) or 2 nin + 2 (backward).
int og_aot_nparams(const aot_entry *d);
/// Name of param i in the entry point's layout ("x", "y", "dy", "dx", ...).
const char *og_aot_param_name(const aot_entry *d, int i, char *buf, size_t cap);
bool og_aot_same_shape(const aclTensor *a, const aclTensor *b);

/// Prefixes the recent aclnn message with the entry point's name after a failed aclnn call.
aclnnStatus og_aot_fail_from_aclnn(const aot_entry *d, aclnnStatus st);
/// Phase 2 of an executor planned with status st: workspace, synchronous run, cleanup.
aclnnStatus og_aot_finish(const aot_entry *d, aclnnStatus st, uint64_t ws, aclOpExecutor *ex,
                          og_phase2_fn exec);
/// A contiguous tensor of `ndim` dims over data (not owned), in t on the caller's stack: it is
/// registered (the operators take live objects only) until the caller's og_object_unregister.
aclnnStatus og_aot_init_dense(const aot_entry *d, aclTensor *t, const int64_t *dims, int ndim,
                              aclDataType dt, void *data);
/// Sums src (the forward output's shape) down to dst's shape (an input that broadcast to it) with
/// aclnnReduceSum over the broadcast dims, in dst's dtype (rounded once); without broadcast dims
/// a copy, converted to dst's dtype (rounding to nearest even). dst is dense.
aclnnStatus og_aot_reduce_to(const aot_entry *d, const aclTensor *src, aclTensor *dst);

/// Checks nparam and the arrays, then wraps params[0..nparam) as dense tensors t[i] (dtype,
/// rank, dims and NULL checks). The caller unregisters t[0..og_aot_nparams(d)) whatever the
/// result.
aclnnStatus og_aot_wrap_params(const aot_entry *d, int nparam, void **params, int *ndims,
                               int64_t **shapes, const char **dtypes, aclTensor *t);
/// y (t[nin]) has the shape want (the forward output's, by `rule`, which the message quotes);
/// a backward's dy has y's shape and each gradient its input's shape and dtype.
aclnnStatus og_aot_check_outputs(const aot_entry *d, const aclTensor *t, const int64_t *want,
                                 int nwant, const char *rule);
/// The gradients of a backward (t in its layout) through the gradient monitor, under the entry
/// point's name.
void og_aot_log_grads(const aot_entry *d, const aclTensor *t);
/// rc, after printing its message to stderr when it is not 0 (a framework sees only the code).
int og_aot_reported(int rc);

/// Attribute `name` of the call (MindSpore's `extra`, aot_extra.h), looked up as spelt and in
/// snake_case (negativeSlope: negative_slope). ACLNN_SUCCESS with *found false when it is not
/// set (keep the default), or true and *v; ACLNN_ERR_PARAM_INVALID, naming the entry point and
/// the attribute, when it is set but not a finite number, or (integral) not an integer.
aclnnStatus og_aot_attr_number(const aot_entry *d, const char *name, bool integral, double *v,
                               bool *found);
/// The same for a string attribute (a number is refused), into out[cap].
aclnnStatus og_aot_attr_string(const aot_entry *d, const char *name, char *out, size_t cap,
                               bool *found);

/// A hand-written entry point's body over its wrapped parameters.
typedef aclnnStatus (*og_aot_body)(const aot_entry *d, aclTensor *t);
/// What every hand-written entry point does: wraps the parameters, runs body, unregisters them
/// and reports the status.
int og_aot_run(const aot_entry *d, og_aot_body body, int nparam, void **params, int *ndims,
               int64_t **shapes, const char **dtypes);
/// Defines the exported entry point `sym` (MindSpore's aot signature) running body with the
/// input names `inputs` (a braced list), nin_ inputs, as a forward or a backward.
#define OG_AOT_ENTRY(sym, inputs, nin_, backward_, body)                                           \
    OPGRAD_API int sym(int nparam, void **params, int *ndims, int64_t **shapes,                    \
                       const char **dtypes, void *stream, void *extra) {                           \
        aot_entry d = {                                                                            \
            .name = #sym, .backward = backward_, .nin = nin_, .in = inputs, .extra = extra};       \
        (void)stream; /* NULL on the CPU; the call is synchronous in any case */                   \
        return og_aot_run(&d, body, nparam, params, ndims, shapes, dtypes);                        \
    }

#endif
