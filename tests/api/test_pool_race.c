/* Regression test for a thread-pool race: a worker that woke late for a finished launch must
 * never run a core of the next launch with the old (dead) context. Back-to-back operators from
 * different stack depths on 2+ threads used to give wrong results within ~1000 launches. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_mish.h"
#include "aclnnop/aclnn_mish_backward.h"
#include "opgrad/opgrad.h"
#include "test.h"
#include "testutil.h"

enum { N = 8192, ITERS = 3000 };

static float x[N], g[N], y[N], dx[N], y_ref[N], dx_ref[N];

static int forward(void) {
    int64_t shape[1] = {N};
    aclTensor *tx = test_tensor(shape, 1, ACL_FLOAT, x), *ty = test_tensor(shape, 1, ACL_FLOAT, y);
    uint64_t ws;
    aclOpExecutor *ex;
    int st = aclnnMishGetWorkspaceSize(tx, ty, &ws, &ex);
    if (!st) st = test_run(st, ws, ex, aclnnMish, NULL);
    aclDestroyTensor(tx);
    aclDestroyTensor(ty);
    return st;
}

// Recurses first, so this launch's context lives at another stack depth than forward()'s.
static int backward(int depth) {
    volatile char pad[256];
    pad[0] = (char)depth;
    if (depth > 0) return backward(depth - 1) + pad[0] * 0;
    int64_t shape[1] = {N};
    aclTensor *tg = test_tensor(shape, 1, ACL_FLOAT, g), *tx = test_tensor(shape, 1, ACL_FLOAT, x);
    aclTensor *td = test_tensor(shape, 1, ACL_FLOAT, dx);
    uint64_t ws;
    aclOpExecutor *ex;
    int st = aclnnMishBackwardGetWorkspaceSize(tg, tx, td, &ws, &ex);
    if (!st) st = test_run(st, ws, ex, aclnnMishBackward, NULL);
    aclDestroyTensor(tg);
    aclDestroyTensor(tx);
    aclDestroyTensor(td);
    return st;
}

static void test_back_to_back_launches(void) {
    for (int i = 0; i < N; i++) x[i] = -6.0f + 12.0f * (float)i / N, g[i] = 1.0f + (float)(i % 5);
    opgrad_set_num_threads(1);
    CHECK_EQ(forward(), 0);
    CHECK_EQ(backward(3), 0);
    memcpy(y_ref, y, sizeof y);
    memcpy(dx_ref, dx, sizeof dx);
    opgrad_set_num_threads(2);
    int wrong = 0;
    for (int it = 0; it < ITERS && !wrong; it++) {
        memset(y, 0, sizeof y);
        memset(dx, 0, sizeof dx);
        CHECK_EQ(forward(), 0);
        CHECK_EQ(backward(it % 7), 0);
        wrong += memcmp(y, y_ref, sizeof y) != 0 || memcmp(dx, dx_ref, sizeof dx) != 0;
    }
    CHECKF(!wrong, "a multi-threaded launch gave different bits than the 1-thread run");
}

int main(void) {
    RUN(test_back_to_back_launches);
    return test_summary();
}
