/* The params of a MindSpore aot call (int nparam, void **params, int *ndims, int64_t **shapes,
 * const char **dtypes) built by the aot tests (tests/api/test_aot_*.c): each param an
 * aclrtMalloc'd buffer of random values, its shape and its MindSpore dtype string. */
#ifndef OG_TEST_AOT_ARGS_H
#define OG_TEST_AOT_ARGS_H

#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "opgrad/custom_op.h"
#include "test.h"
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
    return dt == ACL_FLOAT16  ? "float16"
           : dt == ACL_BF16   ? "bfloat16"
           : dt == ACL_DOUBLE ? "float64"
           : alt              ? "float"
                              : "float32";
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

/// Param i: shape, dtype, data uniform in [lo, hi) (rounded to dt), from seed; float32 is
/// spelled "float" on odd seeds.
static inline void arg(argset *a, int i, const int64_t *dims, int nd, aclDataType dt, uint64_t seed,
                       double lo, double hi) {
    aot_arg(a, i, dims, nd, dt, (seed & 1) != 0, seed, lo, hi);
}

/// Param i as float64 values (malloc'd).
static inline double *values(const argset *a, int i) {
    double *v = malloc(sizeof(double) * (size_t)(a->numel[i] ? a->numel[i] : 1));
    for (int64_t k = 0; k < a->numel[i]; k++) v[k] = test_load(a->p[i], k, a->adt[i]);
    return v;
}

static inline double unit_roundoff(aclDataType dt) {
    return dt == ACL_FLOAT16  ? 0x1p-11
           : dt == ACL_BF16   ? 0x1p-8
           : dt == ACL_DOUBLE ? 0x1p-53
                              : 0x1p-24;
}
static inline double min_subnormal(aclDataType dt) {
    return dt == ACL_FLOAT16  ? 0x1p-24
           : dt == ACL_BF16   ? 0x1p-133
           : dt == ACL_DOUBLE ? 0x1p-1074
                              : 0x1p-149;
}
/// The unit roundoff of the computation for inputs of dtype dt: float64 for float64, else fp32
/// (16-bit operands are computed in fp32).
static inline double compute_u(aclDataType dt) { return dt == ACL_DOUBLE ? 0x1p-53 : 0x1p-24; }
/// The smallest subnormal of that computation.
static inline double compute_tiny(aclDataType dt) {
    return dt == ACL_DOUBLE ? 0x1p-1074 : 0x1p-149;
}

static inline int64_t prod(const int64_t *d, int n) {
    int64_t p = 1;
    for (int i = 0; i < n; i++) p *= d[i];
    return p;
}

/// Each of the n entry points, called with nothing (nparam 0, NULL arrays): a status and a
/// message, no crash.
static inline void aot_check_called_with_nothing(const opgrad_aot_fn *fns, size_t n) {
    for (size_t i = 0; i < n; i++) {
        CHECK_EQ(fns[i](0, NULL, NULL, NULL, NULL, NULL, NULL), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG(": nparam is 0; it takes");
    }
}

/// dlopen of the shared library lib and a check that each of the n names is exported from it;
/// the handle, or NULL when lib does not load. Callers never dlclose it (see
/// test_aot_builtins.c: the second runtime's process-lifetime state).
static inline void *aot_open_exported(const char *lib, const char *const *names, size_t n) {
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    CHECKF(h != NULL, "dlopen(%s): %s", lib, dlerror());
    if (!h) return NULL;
    for (size_t i = 0; i < n; i++)
        CHECKF(dlsym(h, names[i]) != NULL, "%s is not exported", names[i]);
    return h;
}

/// The 8-param backward `name` (in: x, p1, p2, y, dy; out: dx, dp1, dp2, shaped like x, p1, p2),
/// called through the shared library h, gives the same bits as the in-process entry point fn in
/// float32, float16 and bfloat16, and refuses an int8 params[1] with a message containing want.
/// Dims: x (x, 3 dims), p1 (d1, n1 dims), p2 (d2, n2 dims), y and dy (y, 3 dims).
static inline void aot_check_shared_backward(void *h, const char *name, opgrad_aot_fn fn,
                                             const int64_t *x, const int64_t *d1, int n1,
                                             const int64_t *d2, int n2, const int64_t *y,
                                             const char *want) {
    static const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    opgrad_aot_fn shared = NULL;
    void *sym = dlsym(h, name);
    memcpy(&shared, &sym, sizeof shared);
    const char *(*errmsg)(void) = NULL;
    sym = dlsym(h, "aclGetRecentErrMsg");
    memcpy(&errmsg, &sym, sizeof errmsg);
    CHECK(shared && errmsg);
    if (!shared || !errmsg) return;
    for (int d = 0; d < 3; d++) {
        argset s[2];
        for (int k = 0; k < 2; k++) {
            memset(&s[k], 0, sizeof s[k]);
            arg(&s[k], 0, x, 3, dts[d], 1, -1, 1);
            arg(&s[k], 1, d1, n1, dts[d], 2, -1, 1);
            arg(&s[k], 2, d2, n2, dts[d], 3, -1, 1);
            arg(&s[k], 3, y, 3, dts[d], 4, 0, 0);
            arg(&s[k], 4, y, 3, dts[d], 5, -1, 1);
            arg(&s[k], 5, x, 3, dts[d], 6, 0, 0);
            arg(&s[k], 6, d1, n1, dts[d], 7, 0, 0);
            arg(&s[k], 7, d2, n2, dts[d], 8, 0, 0);
        }
        CHECK_EQ(shared(8, s[0].p, s[0].nd, s[0].sh, s[0].dt, NULL, NULL), 0);
        CHECK_EQ(call(fn, &s[1]), 0);
        for (int i = 5; i < 8; i++) CHECK(memcmp(s[0].p[i], s[1].p[i], bytes_of(&s[0], i)) == 0);
        s[0].dt[1] = "int8";
        CHECK(shared(8, s[0].p, s[0].nd, s[0].sh, s[0].dt, NULL, NULL) != 0);
        CHECKF(strstr(errmsg(), want) != NULL, "shared library message \"%s\"", errmsg());
        args_free(&s[0]);
        args_free(&s[1]);
    }
}

#endif
