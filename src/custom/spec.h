/* A custom operator's spec (docs/custom-ops.md), read from JSON and validated up front, so every
 * later stage can trust it: names are unique, dims are bound by every size binding, dtypes are
 * floating, and the counts fit the fixed-size arrays below. */
#ifndef OG_CUSTOM_SPEC_H
#define OG_CUSTOM_SPEC_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "check/check.h"

#define OGS_MAX_IN 8
#define OGS_MAX_OUT 4
#define OGS_MAX_DIMNAMES 8
#define OGS_MAX_SIZES 16
#define OGS_MAX_DTYPES 4
#define OGS_NAME 64

/// A tensor's declaration: each dim is a fixed extent or a dim name bound per size binding.
typedef struct ogs_tensor {
    char name[OGS_NAME];
    int ndim;
    int64_t fixed[OG_MAX_DIMS]; // extent when sym[d] < 0
    int sym[OG_MAX_DIMS];       // index into ogs_spec.dimnames, or -1
    aclDataType dtype;          // ACL_DT_UNDEFINED: the case's dtype
    bool differentiable;
    double lo, hi; // domain of random values (inputs)
} ogs_tensor;

typedef struct ogs_spec {
    char path[PATH_MAX]; // the spec file
    char name[OGS_NAME];
    char library[PATH_MAX];
    char forward[OGS_NAME], backward[OGS_NAME], reference_symbol[OGS_NAME];
    char *reference; // expression text or NULL (owned)
    int ndtypes;
    aclDataType dtypes[OGS_MAX_DTYPES];
    int nin, nout;
    ogs_tensor in[OGS_MAX_IN], out[OGS_MAX_OUT];
    int ngrads;          // declared backward outputs
    bool grads_declared; // false: one per input with its shape and dtype (the default)
    ogs_tensor grads[OGS_MAX_IN];
    int ndimnames;
    char dimnames[OGS_MAX_DIMNAMES][OGS_NAME];
    int nsizes;
    int64_t sizes[OGS_MAX_SIZES][OGS_MAX_DIMNAMES];
    /// dout_dtypes[i][j]: for output dtype dtypes[i], dout may also arrive as dtype j (OG_DT bit)
    unsigned long long dout_dtypes[OGS_MAX_DTYPES];
    double tolerance_ulps; // fp32 tolerance factor (default 16)
} ogs_spec;

/// Reads and validates a spec. false with a message naming the file, the key and the rule.
bool ogs_load(const char *path, ogs_spec *spec, char *err, size_t errsize);
/// Same from JSON text (path only labels messages).
bool ogs_parse(const char *text, const char *path, ogs_spec *spec, char *err, size_t errsize);
void ogs_free(ogs_spec *spec);

/// The concrete shape of a declared tensor under size binding b.
void ogs_shape(const ogs_spec *spec, const ogs_tensor *t, int b, ogc_shape *out);
/// "N=8,C=16" for size binding b ("" without dim names).
void ogs_binding_str(const ogs_spec *spec, int b, char *buf, size_t size);
/// The dtype of a declared tensor in a case of dtype dt.
static inline aclDataType ogs_dtype(const ogs_tensor *t, aclDataType dt) {
    return t->dtype == ACL_DT_UNDEFINED ? dt : t->dtype;
}
/// aot spelling ("float32") of a dtype, and back (accepts "float" for float32).
const char *ogs_dtype_str(aclDataType dt);
bool ogs_dtype_parse(const char *s, aclDataType *dt);

#endif
