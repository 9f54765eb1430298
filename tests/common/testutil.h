/* Helpers shared by the tests: dtype encoding, ULP distances, a seeded RNG, tensor setup. */
#ifndef OG_TESTUTIL_H
#define OG_TESTUTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "aclnn/aclnn_base.h"

#include "check/rng.h"

/// The shared generator (check/rng.h) under the tests' names.
typedef og_rng test_rng;
void test_rng_seed(test_rng *r, uint64_t seed);
uint64_t test_rng_next(test_rng *r);
double test_rng_uniform(test_rng *r, double lo, double hi); // [lo, hi)

/// Encodes a double into storage of dtype (fp32/fp16/bf16, round to nearest even) and back.
void test_store(void *base, int64_t index, aclDataType dt, double v);
double test_load(const void *base, int64_t index, aclDataType dt);
/// The double value rounded to dt (what an exact kernel would store).
double test_round_to(aclDataType dt, double v);

/// Distance between got and the exact value ref, in ulps of dtype dt at ref (subnormal ulps
/// below the normal range). NaN vs NaN and equal infinities are 0; any other mismatch in
/// NaN-ness or infinity is INFINITY.
double test_ulp_error(aclDataType dt, double got, double ref);

/// OPGRAD_TEST_QUICK is set (and not "0"): tests shrink sample sizes, never tolerances.
bool test_quick_mode(void);
/// The bits of a float and back.
uint32_t test_f2u(float f);
float test_u2f(uint32_t u);
/// This CPU runs kernels of that opgrad_isa.
bool test_isa_available(int isa);
/// The best opgrad_isa this CPU runs.
int test_best_isa(void);
/// One fp32 ulp at v (subnormal spacing below 2^-126).
double test_ulp32(double v);

/// Phase 1 then phase 2 (NULL stream, fresh workspace), strictly in that order: `phase1` is an
/// expression using &ws_ and &ex_ (an argument list would leave the order unspecified).
#define OP_RUN(status, phase1, phase2)                                                             \
    do {                                                                                           \
        uint64_t ws_ = 0;                                                                          \
        aclOpExecutor *ex_ = NULL;                                                                 \
        aclnnStatus p1_ = (phase1);                                                                \
        (status) = test_run(p1_, ws_, ex_, (phase2), NULL);                                        \
        if ((status) != ACLNN_SUCCESS)                                                             \
            fprintf(stderr, "    %s: status %d: %s\n", #phase2, (int)(status),                     \
                    aclGetRecentErrMsg());                                                         \
    } while (0)

/// A buffer of n elements of `elem` bytes with 64 elements of a sentinel pattern (a signalling
/// NaN no kernel produces) on both sides, to catch writes outside a kernel's range.
typedef struct gbuf {
    unsigned char *raw;
    void *data;
    float *f; // = data, for fp32 buffers
    size_t elem, n;
} gbuf;
gbuf gbuf_new(size_t n, size_t elem);
bool gbuf_guards_ok(const gbuf *b);
void gbuf_free(gbuf *b);

/// aclrtMalloc'ed, zeroed memory (at least 1 byte); aborts when the allocation fails.
void *test_dev_alloc(size_t bytes);
/// buf[off + i] = uniform(lo, hi) for i in [0, n), stored as dtype dt.
void test_fill(void *buf, int64_t off, int64_t n, aclDataType dt, test_rng *r, double lo,
               double hi);

/// A tensor with its own zeroed storage (test_dev_alloc) of `storage` elements (-1: the dims'
/// element count), strides NULL for contiguous; test_buf_free destroys both.
typedef struct test_buf {
    aclTensor *t;
    void *data;
} test_buf;
test_buf test_buf_new(const int64_t *dims, int nd, aclDataType dt, const int64_t *strides,
                      int64_t storage);
void test_buf_free(test_buf *b);
/// test_buf_free on each of n buffers; TEST_BUFS_FREE(&a, &b, ...) lists them inline.
void test_bufs_free(test_buf *const *bufs, size_t n);
#define TEST_BUFS_FREE(...)                                                                        \
    test_bufs_free((test_buf *const[]){__VA_ARGS__},                                               \
                   sizeof((test_buf *const[]){__VA_ARGS__}) / sizeof(test_buf *))

/// Contiguous tensor over `data` (not owned).
aclTensor *test_tensor(const int64_t *dims, int ndim, aclDataType dt, void *data);

/// Runs phase 1 result + phase 2 synchronously (NULL stream) with a fresh workspace; returns
/// the first non-success status.
typedef aclnnStatus (*test_phase2_fn)(void *, uint64_t, aclOpExecutor *, aclrtStream);
aclnnStatus test_run(aclnnStatus phase1_status, uint64_t ws, aclOpExecutor *exec,
                     test_phase2_fn phase2, aclrtStream stream);

#endif
