/* The fresh-output path (engine/prefault.h).
 *
 *  - og_prefault_range populates exactly the whole pages inside a fresh range (mincore), changes
 *    no byte, and does nothing on a range that is resident;
 *  - phase 1 marks an output for it only when the view is dense and at least the gate large
 *    (og_io.prefault_bytes, read white-box), and the gate follows og_size_gates;
 *  - operators writing into fresh mmap'ed memory (dense fp32 and bf16, a view that starts inside
 *    a page, a strided view, a launch on a stream) give the bits they give into reused memory,
 *    and write nothing outside their output. */
#undef _POSIX_C_SOURCE
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_gelu.h"
#include "engine/blocking.h"
#include "engine/executor.h"
#include "engine/prefault.h"
#include "opgrad/opgrad.h"
#include "test.h"
#include "testutil.h"

enum { MIB = 1 << 20 };

static size_t page(void) { return (size_t)sysconf(_SC_PAGESIZE); }

static unsigned char *fresh_map(size_t bytes) {
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

// Resident pages of [p, p + bytes) (p page-aligned).
static size_t resident_pages(const unsigned char *p, size_t bytes) {
    size_t n = bytes / page(), count = 0;
    unsigned char *vec = malloc(n);
    if (!vec || mincore((void *)p, n * page(), vec) != 0) {
        free(vec);
        return (size_t)-1;
    }
    for (size_t i = 0; i < n; i++) count += vec[i] & 1;
    free(vec);
    return count;
}

static void range_populates_whole_pages_inside(void) {
    size_t bytes = 10 * MIB;
    unsigned char *map = fresh_map(bytes);
    CHECK(map != NULL);
    if (!map) return;
    CHECK_EQ(resident_pages(map, bytes), 0);
    // [map + 100, map + 100 + 6 MiB): its first and last pages are partial
    int64_t got = og_prefault_range(map + 100, 6 * MIB);
    size_t inside = 6 * MIB / page() - 1; // whole pages inside the range
    if (got == 0) {
        printf("  (this kernel cannot populate: MADV_POPULATE_WRITE refused)\n");
    } else {
        CHECK_EQ(got, (int64_t)(inside * page()));
        CHECK_EQ(resident_pages(map + page(), inside * page()), inside);
    }
    CHECK_EQ(resident_pages(map, page()), 0); // the partial pages stay untouched
    CHECK_EQ(resident_pages(map + 6 * MIB, bytes - 6 * MIB), 0);
    size_t nonzero = 0;
    for (size_t i = 0; i < bytes; i += 64) nonzero += map[i] != 0; // no byte changed
    CHECK_EQ(nonzero, 0);
    CHECK_EQ(og_prefault_range(map + 100, 6 * MIB), 0); // now resident: nothing to do
    munmap(map, bytes);
}

static void range_resident_is_left_alone(void) {
    size_t bytes = 8 * MIB;
    unsigned char *buf = malloc(bytes);
    CHECK(buf != NULL);
    if (!buf) return;
    for (size_t i = 0; i < bytes; i++) buf[i] = (unsigned char)(i * 131 + 7);
    CHECK_EQ(og_prefault_range(buf, (int64_t)bytes), 0);
    size_t changed = 0;
    for (size_t i = 0; i < bytes; i++) changed += buf[i] != (unsigned char)(i * 131 + 7);
    CHECK_EQ(changed, 0);
    CHECK_EQ(og_prefault_range(NULL, (int64_t)bytes), 0);
    CHECK_EQ(og_prefault_range(buf, 0), 0);
    CHECK_EQ(og_prefault_range(buf + 1, 100), 0); // no whole page
    free(buf);
}

// Plans y = x + y2 with `out` as the output; returns the executor (NULL on failure).
static aclOpExecutor *plan_add(aclTensor *x, aclTensor *out, uint64_t *ws) {
    float one = 1.0f;
    aclScalar *alpha = aclCreateScalar(&one, ACL_FLOAT);
    aclOpExecutor *e = NULL;
    aclnnStatus st = aclnnAddGetWorkspaceSize(x, x, alpha, out, ws, &e);
    aclDestroyScalar(alpha);
    return st == ACLNN_SUCCESS ? e : NULL;
}

static aclTensor *view(const int64_t *dims, const int64_t *strides, int ndim, aclDataType dt,
                       int64_t offset, const int64_t *storage, int sdim, void *data) {
    return aclCreateTensor(dims, (uint64_t)ndim, dt, strides, offset, ACL_FORMAT_ND, storage,
                           (uint64_t)sdim, data);
}

static int64_t planned_prefault(aclTensor *x, aclTensor *out) {
    uint64_t ws = 0;
    aclOpExecutor *e = plan_add(x, out, &ws);
    CHECK(e != NULL);
    if (!e) return -1;
    int64_t bytes = e->io[e->ninputs].prefault_bytes;
    aclDestroyAclOpExecutor(e);
    return bytes;
}

static void plan_marks_dense_large_outputs(void) {
    int64_t rows = 2048, cols = 1024; // 8 MiB of fp32
    float *xd = calloc((size_t)(rows * cols), 4), *od = calloc((size_t)(rows * cols * 2), 4);
    CHECK(xd && od);
    if (!xd || !od) return;
    int64_t dims[2] = {rows, cols}, tdims[2] = {cols, rows};
    aclTensor *x = test_tensor(dims, 2, ACL_FLOAT, xd);
    aclTensor *dense = test_tensor(dims, 2, ACL_FLOAT, od);
    CHECK_EQ(planned_prefault(x, dense), rows * cols * 4);
    // the same bytes as a transposed view: dense, so prepared too
    int64_t tstr[2] = {1, cols}, tstore[2] = {rows, cols};
    aclTensor *xt = view(tdims, tstr, 2, ACL_FLOAT, 0, tstore, 2, xd);
    aclTensor *outt = view(tdims, tstr, 2, ACL_FLOAT, 0, tstore, 2, od);
    CHECK_EQ(planned_prefault(xt, outt), rows * cols * 4);
    // every other element: not dense, never prepared (its gaps are not the operator's to touch)
    int64_t sstr[2] = {2 * cols, 2}, sstore[2] = {rows, 2 * cols};
    aclTensor *strided = view(dims, sstr, 2, ACL_FLOAT, 0, sstore, 2, od);
    CHECK_EQ(planned_prefault(x, strided), 0);
    // below the gate (1 MiB): not prepared; with the gate lowered to 1 byte: prepared
    int64_t sdims[2] = {256, 1024};
    aclTensor *xs = test_tensor(sdims, 2, ACL_FLOAT, xd),
              *small = test_tensor(sdims, 2, ACL_FLOAT, od);
    CHECK_EQ(planned_prefault(xs, small), 0);
    og_size_gates gates = og_size_gates_get();
    og_size_gates low = gates, off = gates;
    low.prefault_out_bytes = 1;
    off.prefault_out_bytes = 0;
    og_size_gates_set(&low);
    CHECK_EQ(planned_prefault(xs, small), 256 * 1024 * 4);
    og_size_gates_set(&off);
    CHECK_EQ(planned_prefault(x, dense), 0);
    og_size_gates_set(NULL);
    CHECK_EQ(og_size_gates_get().prefault_out_bytes, gates.prefault_out_bytes);
    aclTensor *all[] = {x, dense, xt, outt, strided, xs, small};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) aclDestroyTensor(all[i]);
    free(xd);
    free(od);
}

// Runs GELU (tanh) from x into `out` on `stream` (NULL: synchronous).
static aclnnStatus gelu_into(aclTensor *x, aclTensor *out, aclrtStream stream) {
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus st = aclnnGeluGetWorkspaceSize(x, out, &ws, &e);
    if (st != ACLNN_SUCCESS) return st;
    void *w = ws ? malloc(ws) : NULL;
    st = aclnnGelu(w, ws, e, stream);
    if (st == ACLNN_SUCCESS && stream) st = (aclnnStatus)aclrtSynchronizeStream(stream);
    free(w);
    return st;
}

// x (n elements of dt) through GELU into a reused buffer and into a fresh mapping at byte
// `lead` (a view starting inside a page), `stride` elements apart; the two must agree bitwise
// and the mapping must hold nothing else.
static void fresh_matches_reused(aclDataType dt, int64_t n, int64_t stride, int64_t lead,
                                 aclrtStream stream) {
    int64_t es = (int64_t)aclDataTypeSize(dt), span = (n - 1) * stride + 1;
    size_t map_bytes =
        (size_t)((lead + span * es + (int64_t)page() - 1) / (int64_t)page()) * page();
    void *xd = malloc((size_t)(n * es)), *ref = malloc((size_t)(n * es));
    unsigned char *map = fresh_map(map_bytes);
    CHECK(xd && ref && map);
    if (!xd || !ref || !map) return;
    test_rng r;
    test_rng_seed(&r, 7);
    test_fill(xd, 0, n, dt, &r, -6, 6);
    int64_t dims[1] = {n}, str[1] = {stride}, store[1] = {lead / es + span};
    aclTensor *x = test_tensor(dims, 1, dt, xd), *reused = test_tensor(dims, 1, dt, ref);
    CHECK_EQ(gelu_into(x, reused, NULL), ACLNN_SUCCESS);
    CHECK_EQ(lead % es, 0);
    aclTensor *fresh = view(dims, str, 1, dt, lead / es, store, 1, map);
    CHECK_EQ(gelu_into(x, fresh, stream), ACLNN_SUCCESS);
    int64_t differ = 0, stray = 0;
    for (int64_t i = 0; i < n; i++)
        differ += memcmp((char *)ref + i * es, map + lead + i * stride * es, (size_t)es) != 0;
    for (int64_t b = 0; b < (int64_t)map_bytes; b++) { // outside the view's elements: zero
        int64_t at = b - lead;
        bool element = at >= 0 && at / es % stride == 0 && at / es / stride < n;
        stray += !element && map[b] != 0;
    }
    CHECKF(differ == 0, "%lld of %lld elements differ (dtype %d, stride %lld)", (long long)differ,
           (long long)n, (int)dt, (long long)stride);
    CHECK_EQ(stray, 0);
    aclDestroyTensor(x);
    aclDestroyTensor(reused);
    aclDestroyTensor(fresh);
    munmap(map, map_bytes);
    free(xd);
    free(ref);
}

static void operators_into_fresh_memory(void) {
    int64_t n = 3 * MIB + 777; // 12 MiB of fp32: above the gate, several huge pages
    fresh_matches_reused(ACL_FLOAT, n, 1, 0, NULL);
    fresh_matches_reused(ACL_FLOAT, n, 1, 1000, NULL); // starts inside a page
    fresh_matches_reused(ACL_BF16, n, 1, 2 * 333, NULL);
    fresh_matches_reused(ACL_FLOAT, n / 2, 2, 0, NULL); // strided: not prepared, still right
    aclrtStream s = NULL;
    CHECK_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    fresh_matches_reused(ACL_FLOAT, n, 1, 4, s); // prepared on the stream's thread
    aclrtDestroyStream(s);
    for (int threads = 1; threads <= 3; threads++) { // parts of 1, 2 and 3 threads
        opgrad_set_num_threads(threads);
        fresh_matches_reused(ACL_FLOAT, n, 1, 64, NULL);
    }
    opgrad_set_num_threads(0);
}

int main(void) {
    aclInit(NULL);
    RUN(range_populates_whole_pages_inside);
    RUN(range_resident_is_left_alone);
    RUN(plan_marks_dense_large_outputs);
    RUN(operators_into_fresh_memory);
    aclFinalize();
    return test_summary();
}
