/* The operator profiler (opgrad_profile_start / opgrad_profile_stop, runtime/profile.h).
 *
 *  - start / stop statuses: a second start, a NULL or empty path, a stop without a start;
 *  - every launch between start and stop is one trace event, on the calling thread and on a
 *    stream's dispatcher thread, with the operator's name, its io dtypes and shapes (inputs ->
 *    outputs), the bytes of its views, a plan time, and GEMM FLOPs for a matrix product;
 *  - launches before start or after stop are not recorded, and an executor planned before start
 *    is recorded without the facts of its phase 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_matmul.h"
#include "aclnnop/aclnn_mish.h"
#include "opgrad/opgrad.h"
#include "test.h"
#include "testutil.h"

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
    if (s) s[n] = 0;
    fclose(f);
    return s;
}

static int count(const char *s, const char *needle) {
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

static aclnnStatus run_add(aclTensor *x, aclTensor *out, aclScalar *alpha, aclrtStream stream) {
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus st = aclnnAddGetWorkspaceSize(x, x, alpha, out, &ws, &e);
    if (st != ACLNN_SUCCESS) return st;
    return aclnnAdd(NULL, 0, e, stream);
}

static void statuses(void) {
    CHECK_EQ(opgrad_profile_stop(), -1); // not recording
    CHECK_EQ(opgrad_profile_start(NULL), -1);
    CHECK_EQ(opgrad_profile_start(""), -1);
    char path[] = "/tmp/opgrad_profile_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    CHECK_EQ(opgrad_profile_start(path), 0);
    CHECK_EQ(opgrad_profile_start(path), -1); // one recording at a time
    CHECK_EQ(opgrad_profile_stop(), 0);       // no launches: an empty trace
    char *s = slurp(path);
    CHECK(s && strstr(s, "\"traceEvents\": ["));
    free(s);
    remove(path);
}

static void events(void) {
    int64_t d[1] = {1000}, a[2] = {8, 16}, b[2] = {16, 4}, c[2] = {8, 4};
    float one = 1.0f;
    void *bx = test_dev_alloc(4000), *bo = test_dev_alloc(4000);
    void *ba = test_dev_alloc(8 * 16 * 4), *bb = test_dev_alloc(16 * 4 * 4),
         *bc = test_dev_alloc(8 * 4 * 4);
    aclTensor *x = test_tensor(d, 1, ACL_FLOAT, bx), *out = test_tensor(d, 1, ACL_FLOAT, bo);
    aclTensor *ta = test_tensor(a, 2, ACL_FLOAT, ba), *tb = test_tensor(b, 2, ACL_FLOAT, bb);
    aclTensor *tc = test_tensor(c, 2, ACL_FLOAT, bc);
    aclScalar *alpha = aclCreateScalar(&one, ACL_FLOAT);
    aclrtStream stream = NULL;
    CHECK_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);

    CHECK_EQ(run_add(x, out, alpha, NULL), ACLNN_SUCCESS); // before start: not recorded
    // an executor planned before start, run after it: recorded without its phase-1 facts
    uint64_t ws = 0;
    aclOpExecutor *early = NULL;
    CHECK_EQ(aclnnMishGetWorkspaceSize(x, out, &ws, &early), ACLNN_SUCCESS);

    char path[] = "/tmp/opgrad_profile_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    CHECK_EQ(opgrad_profile_start(path), 0);
    CHECK_EQ(run_add(x, out, alpha, NULL), ACLNN_SUCCESS);
    CHECK_EQ(run_add(x, out, alpha, stream), ACLNN_SUCCESS); // on the dispatcher thread
    CHECK_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    CHECK_EQ(aclnnMish(NULL, 0, early, NULL), ACLNN_SUCCESS);
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnMatmulGetWorkspaceSize(ta, tb, tc, 0, &ws, &e), ACLNN_SUCCESS);
    void *w = ws ? test_dev_alloc(ws) : NULL;
    CHECK_EQ(aclnnMatmul(w, ws, e, NULL), ACLNN_SUCCESS);
    CHECK_EQ(opgrad_profile_stop(), 4);
    CHECK_EQ(run_add(x, out, alpha, NULL), ACLNN_SUCCESS); // after stop: not recorded

    char *s = slurp(path);
    CHECK(s != NULL);
    if (s) {
        CHECK_EQ(count(s, "\"ph\": \"X\""), 4);
        CHECK_EQ(count(s, "\"name\": \"aclnnAdd\""), 2);
        CHECK_EQ(count(s, "\"io\": \"float32[1000], float32[1000] -> float32[1000]\""), 2);
        CHECK_EQ(count(s, "\"bytes\": 12000"), 2);
        CHECK_EQ(count(s, "\"name\": \"aclnnMish\""), 1);
        CHECK_EQ(count(s, "\"io\""), 3);          // not the Mish planned before start
        CHECK_EQ(count(s, "\"flops\": 1024"), 1); // 2 * 8 * 4 * 16
        CHECK_EQ(count(s, "\"plan_us\""), 3);
        CHECK(strstr(s, "float32[8,16], float32[16,4] -> float32[8,4]") != NULL);
        // the machine probe, and each rate as a fraction of it
        const char *gbps = strstr(s, "\"probe_GB/s\": "),
                   *gflops = strstr(s, "\"probe_GFLOP/s\": ");
        CHECK(gbps && gflops);
        if (gbps && gflops) {
            double bw = strtod(gbps + strlen("\"probe_GB/s\": "), NULL);
            double peak = strtod(gflops + strlen("\"probe_GFLOP/s\": "), NULL);
            CHECKF(bw > 0.1 && bw < 1e5, "probed bandwidth %g GB/s", bw);
            CHECKF(peak > 0.1 && peak < 1e7, "probed FMA peak %g GFLOP/s", peak);
        }
        CHECK_EQ(count(s, "\"bw_fraction\""), 3);   // the launches planned while recording
        CHECK_EQ(count(s, "\"peak_fraction\""), 1); // the matmul's
        free(s);
    }
    remove(path);
    if (w) aclrtFree(w);
    CHECK_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
    aclDestroyTensor(x), aclDestroyTensor(out), aclDestroyTensor(ta), aclDestroyTensor(tb);
    aclDestroyTensor(tc), aclDestroyScalar(alpha);
    aclrtFree(bx), aclrtFree(bo), aclrtFree(ba), aclrtFree(bb), aclrtFree(bc);
}

int main(void) {
    RUN(statuses);
    RUN(events);
    return test_summary();
}
