/* The params of a MindSpore aot call (int nparam, void **params, int *ndims, int64_t **shapes,
 * const char **dtypes) built by the aot tests (tests/api/test_aot_*.c): each param an
 * aclrtMalloc'd buffer of random values, its shape and its MindSpore dtype string. */
#ifndef OG_TEST_AOT_ARGS_H
#define OG_TEST_AOT_ARGS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "acl/acl.h"
#include "opgrad/custom_op.h"
#include "testutil.h"

enum { MAXP = 8 };

typedef struct argset {
    int n;
    void *p[MAXP];
    int nd[MAXP];
    int64_t *sh[MAXP];
    const char *dt[MAXP];
    int64_t dims[MAXP][8];
    aclDataType adt[MAXP];
    int64_t numel[MAXP];
} argset;

/// MindSpore's name of dt; float32 is also accepted as "float" (alt).
static inline const char *dt_str(aclDataType dt, bool alt) {
    return dt == ACL_FLOAT16 ? "float16" : dt == ACL_BF16 ? "bfloat16" : alt ? "float" : "float32";
}

/// Param i: shape, dtype (spelled the alternative way when alt), data uniform in [lo, hi)
/// (rounded to dt) from seed.
static inline void aot_arg(argset *a, int i, const int64_t *dims, int nd, aclDataType dt, bool alt,
                           uint64_t seed, double lo, double hi) {
    a->nd[i] = nd;
    a->numel[i] = 1;
    for (int d = 0; d < nd; d++) a->dims[i][d] = dims[d], a->numel[i] *= dims[d];
    a->sh[i] = a->dims[i];
    a->adt[i] = dt;
    a->dt[i] = dt_str(dt, alt);
    a->p[i] = test_dev_alloc((size_t)a->numel[i] * aclDataTypeSize(dt));
    test_rng r;
    test_rng_seed(&r, seed);
    for (int64_t k = 0; k < a->numel[i]; k++)
        test_store(a->p[i], k, dt, test_rng_uniform(&r, lo, hi));
    if (i >= a->n) a->n = i + 1;
}

static inline void args_free(argset *a) {
    for (int i = 0; i < a->n; i++)
        if (a->p[i]) aclrtFree(a->p[i]);
    memset(a, 0, sizeof *a);
}

static inline size_t bytes_of(const argset *a, int i) {
    return (size_t)a->numel[i] * aclDataTypeSize(a->adt[i]);
}

/// The aot call with a's params (NULL stream and extra, as MindSpore passes on the CPU).
static inline int call(opgrad_aot_fn fn, argset *a) {
    return fn(a->n, a->p, a->nd, a->sh, a->dt, NULL, NULL);
}

#endif
