/* API-level tests: every status path of the Mish family's two-phase API, with the status code
 * AND the text of aclGetRecentErrMsg() naming the argument or the rule that was broken.
 * Each test also shows the matching valid call succeeding where that makes the check honest
 * (the failure must come from the one thing the test changed). */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_mish.h"
#include "aclnnop/aclnn_mish_backward.h"
#include "test.h"
#include "testutil.h"

#define UNUSED __attribute__((unused))

/* ---- a tensor over its own "device" storage ---------------------------------------------- */

typedef struct tview {
    aclTensor *t;
    void *buf;
} tview;

// A tensor with explicit strides/offset over a 1-D storage of `storage` elements (0: minimal).
static tview tv_make(const int64_t *dims, int ndim, aclDataType dt, const int64_t *strides,
                     int64_t offset, int64_t storage) {
    tview v = {NULL, NULL};
    int64_t st[32], s = 1, maxoff = offset;
    int empty = 0;
    for (int d = ndim - 1; d >= 0; d--) {
        st[d] = strides ? strides[d] : s;
        s *= dims[d] > 0 ? dims[d] : 1;
        if (dims[d] == 0) empty = 1;
    }
    if (!empty)
        for (int d = 0; d < ndim; d++) maxoff += st[d] * (dims[d] - 1);
    if (storage == 0) storage = maxoff + 1;
    size_t bytes = (size_t)storage * aclDataTypeSize(dt);
    if (aclrtMalloc(&v.buf, bytes ? bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return v;
    memset(v.buf, 0, bytes);
    int64_t sd[1] = {storage};
    v.t = aclCreateTensor(dims, (uint64_t)ndim, dt, st, offset, ACL_FORMAT_ND, sd, 1, v.buf);
    return v;
}

static tview tv(const int64_t *dims, int ndim, aclDataType dt) {
    return tv_make(dims, ndim, dt, NULL, 0, 0);
}

static void tv_free(tview *v) {
    if (v->t) aclDestroyTensor(v->t);
    if (v->buf) aclrtFree(v->buf);
    v->t = NULL;
    v->buf = NULL;
}

/* ---- phase-1 shortcuts ---------------------------------------------------------------------- */

static aclnnStatus mish1(const tview *x, const tview *y, uint64_t *ws, aclOpExecutor **e) {
    return aclnnMishGetWorkspaceSize(x->t, y->t, ws, e);
}
static aclnnStatus bwd1(const tview *g, const tview *x, const tview *gi, uint64_t *ws,
                        aclOpExecutor **e) {
    return aclnnMishBackwardGetWorkspaceSize(g->t, x->t, gi->t, ws, e);
}

static const int64_t D23[] = {2, 3};

/* ---- NULL pointers: 161001 -------------------------------------------------------------- */

static void test_mish_null_self(void) {
    tview y = tv(D23, 2, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnMishGetWorkspaceSize(NULL, y.t, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("self");
    CHECK_MSG("NULL");
    tv_free(&y);
}

static void test_mish_null_out(void) {
    tview x = tv(D23, 2, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnMishGetWorkspaceSize(x.t, NULL, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("out");
    CHECK_MSG("NULL");
    tv_free(&x);
}

static void test_mish_null_workspace_size(void) {
    tview x = tv(D23, 2, ACL_FLOAT), y = tv(D23, 2, ACL_FLOAT);
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnMishGetWorkspaceSize(x.t, y.t, NULL, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("workspaceSize");
    tv_free(&x);
    tv_free(&y);
}

static void test_mish_null_executor_out(void) {
    tview x = tv(D23, 2, ACL_FLOAT), y = tv(D23, 2, ACL_FLOAT);
    uint64_t ws = 0;
    CHECK_EQ(aclnnMishGetWorkspaceSize(x.t, y.t, &ws, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("executor");
    tv_free(&x);
    tv_free(&y);
}

static void test_inplace_mish_null_self_ref(void) {
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnInplaceMishGetWorkspaceSize(NULL, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("selfRef");
    tview x = tv(D23, 2, ACL_FLOAT);
    CHECK_EQ(aclnnInplaceMishGetWorkspaceSize(x.t, NULL, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("workspaceSize");
    CHECK_EQ(aclnnInplaceMishGetWorkspaceSize(x.t, &ws, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("executor");
    tv_free(&x);
}

static void test_mish_with_tanhx_null_tanhx(void) {
    tview x = tv(D23, 2, ACL_FLOAT), y = tv(D23, 2, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnMishWithTanhxGetWorkspaceSize(x.t, y.t, NULL, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("tanhxOut");
    CHECK_EQ(aclnnMishWithTanhxGetWorkspaceSize(x.t, NULL, y.t, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("out");
    tv_free(&x);
    tv_free(&y);
}

static void test_backward_null_grad_output(void) {
    tview x = tv(D23, 2, ACL_FLOAT), gi = tv(D23, 2, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnMishBackwardGetWorkspaceSize(NULL, x.t, gi.t, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("gradOutput");
    CHECK_MSG("NULL");
    tv_free(&x);
    tv_free(&gi);
}

static void test_backward_null_self(void) {
    tview g = tv(D23, 2, ACL_FLOAT), gi = tv(D23, 2, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnMishBackwardGetWorkspaceSize(g.t, NULL, gi.t, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("self");
    tv_free(&g);
    tv_free(&gi);
}

static void test_backward_null_grad_input(void) {
    tview g = tv(D23, 2, ACL_FLOAT), x = tv(D23, 2, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnMishBackwardGetWorkspaceSize(g.t, x.t, NULL, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("gradInput");
    tv_free(&g);
    tv_free(&x);
}

static void test_backward_null_out_pointers(void) {
    tview g = tv(D23, 2, ACL_FLOAT), x = tv(D23, 2, ACL_FLOAT), gi = tv(D23, 2, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(bwd1(&g, &x, &gi, NULL, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("workspaceSize");
    CHECK_EQ(bwd1(&g, &x, &gi, &ws, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("executor");
    tv_free(&g);
    tv_free(&x);
    tv_free(&gi);
}

static void test_backward_with_tanhx_null_tanhx(void) {
    tview g = tv(D23, 2, ACL_FLOAT), x = tv(D23, 2, ACL_FLOAT), gi = tv(D23, 2, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnMishBackwardWithTanhxGetWorkspaceSize(g.t, x.t, NULL, gi.t, &ws, &e),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("tanhx");
    tv_free(&g);
    tv_free(&x);
    tv_free(&gi);
}

// aclnn checks NULL pointers before dtypes: a NULL gradInput wins over a DOUBLE self.
static void test_null_checked_before_dtype(void) {
    tview g = tv(D23, 2, ACL_FLOAT), x = tv(D23, 2, ACL_DOUBLE);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnMishBackwardGetWorkspaceSize(g.t, x.t, NULL, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("gradInput");
    tv_free(&g);
    tv_free(&x);
}

static void test_tensor_data_null(void) {
    // self without data
    aclTensor *x = aclCreateTensor(D23, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, D23, 2, NULL);
    tview y = tv(D23, 2, ACL_FLOAT);
    CHECK(x != NULL);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnMishGetWorkspaceSize(x, y.t, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("self");
    // out without data
    tview xs = tv(D23, 2, ACL_FLOAT);
    aclTensor *o = aclCreateTensor(D23, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, D23, 2, NULL);
    CHECK_EQ(aclnnMishGetWorkspaceSize(xs.t, o, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("out");
    // backward: self without data
    tview g = tv(D23, 2, ACL_FLOAT);
    CHECK_EQ(aclnnMishBackwardGetWorkspaceSize(g.t, x, y.t, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("self");
    aclDestroyTensor(x);
    aclDestroyTensor(o);
    tv_free(&y);
    tv_free(&xs);
    tv_free(&g);
}

/* ---- dtypes, ranks, shapes: 161002 ------------------------------------------------------- */

static void test_mish_dtype_complex(void) {
    tview x = tv(D23, 2, ACL_COMPLEX64), y = tv(D23, 2, ACL_COMPLEX64);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK(x.t && y.t);
    CHECK_EQ(mish1(&x, &y, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("self");
    CHECK_MSG("dtype");
    tv_free(&x);
    tv_free(&y);
}

static void test_mish_dtype_int32(void) {
    tview x = tv(D23, 2, ACL_INT32), y = tv(D23, 2, ACL_INT32);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK(x.t && y.t);
    CHECK_EQ(mish1(&x, &y, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("self");
    CHECK_MSG("dtype");
    CHECK_EQ(aclnnInplaceMishGetWorkspaceSize(x.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("selfRef");
    CHECK_MSG("dtype");
    tv_free(&x);
    tv_free(&y);
}

static void test_backward_dtype_each_argument(void) {
    const aclDataType bad[] = {ACL_COMPLEX64, ACL_INT32};
    const char *names[] = {"gradOutput", "self", "gradInput"};
    for (int b = 0; b < 2; b++) {
        for (int arg = 0; arg < 3; arg++) {
            tview t[3];
            for (int k = 0; k < 3; k++) t[k] = tv(D23, 2, k == arg ? bad[b] : ACL_FLOAT);
            uint64_t ws = 0;
            aclOpExecutor *e = NULL;
            CHECKF(bwd1(&t[0], &t[1], &t[2], &ws, &e) == ACLNN_ERR_PARAM_INVALID,
                   "%s with dtype %d accepted", names[arg], (int)bad[b]);
            CHECK_MSG(names[arg]);
            CHECK_MSG("dtype");
            for (int k = 0; k < 3; k++) tv_free(&t[k]);
        }
    }
    // the tanhx input of the WithTanhx variant
    tview g = tv(D23, 2, ACL_FLOAT), x = tv(D23, 2, ACL_FLOAT), th = tv(D23, 2, ACL_UINT16),
          gi = tv(D23, 2, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnMishBackwardWithTanhxGetWorkspaceSize(g.t, x.t, th.t, gi.t, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("tanhx");
    CHECK_MSG("dtype");
    tv_free(&g);
    tv_free(&x);
    tv_free(&th);
    tv_free(&gi);
}

static void test_rank9_rejected_rank8_accepted(void) {
    const int64_t d9[9] = {1, 1, 1, 1, 1, 1, 1, 2, 1}, d8[8] = {1, 1, 1, 1, 1, 1, 2, 1};
    tview x9 = tv(d9, 9, ACL_FLOAT), y9 = tv(d9, 9, ACL_FLOAT);
    CHECK(x9.t != NULL && y9.t != NULL); // the tensor itself may have up to 32 dims
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(mish1(&x9, &y9, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("rank");
    CHECK_MSG("self");
    tview g9 = tv(d9, 9, ACL_FLOAT);
    CHECK_EQ(bwd1(&g9, &x9, &y9, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("rank");
    // rank 9 on the output only (inputs of rank 8 broadcast to... rank 8, so also a shape error,
    // but the rank rule is checked first)
    tview g8 = tv(d8, 8, ACL_FLOAT), x8 = tv(d8, 8, ACL_FLOAT), y8 = tv(d8, 8, ACL_FLOAT);
    CHECK_EQ(bwd1(&g8, &x8, &y9, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("gradInput");
    // rank 8 works
    CHECK_EQ(mish1(&x8, &y8, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(test_run(ACLNN_SUCCESS, ws, e, aclnnMish, NULL), ACLNN_SUCCESS);
    tv_free(&x9);
    tv_free(&y9);
    tv_free(&g9);
    tv_free(&g8);
    tv_free(&x8);
    tv_free(&y8);
}

static void test_backward_not_broadcastable(void) {
    const int64_t a[] = {2, 3}, b[] = {2, 4}, c[] = {4, 1, 3}, d[] = {2, 2, 3};
    tview g = tv(a, 2, ACL_FLOAT), x = tv(b, 2, ACL_FLOAT), gi = tv(a, 2, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(bwd1(&g, &x, &gi, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("broadcast");
    CHECK_MSG("self");
    // {4,1,3} with {2,2,3}: dim 0 conflicts (4 vs 2)
    tview g2 = tv(c, 3, ACL_FLOAT), x2 = tv(d, 3, ACL_FLOAT), gi2 = tv(d, 3, ACL_FLOAT);
    CHECK_EQ(bwd1(&g2, &x2, &gi2, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("broadcast");
    tv_free(&g);
    tv_free(&x);
    tv_free(&gi);
    tv_free(&g2);
    tv_free(&x2);
    tv_free(&gi2);
}

static void test_backward_grad_input_shape_mismatch(void) {
    const int64_t a[] = {2, 3}, b[] = {1, 3}, big[] = {4, 2, 3}, t[] = {3, 2};
    tview g = tv(a, 2, ACL_FLOAT), x = tv(b, 2, ACL_FLOAT);
    const int64_t *bad[] = {b, big, t};
    const int nd[] = {2, 3, 2};
    for (int k = 0; k < 3; k++) {
        tview gi = tv(bad[k], nd[k], ACL_FLOAT);
        uint64_t ws = 0;
        aclOpExecutor *e = NULL;
        CHECKF(bwd1(&g, &x, &gi, &ws, &e) == ACLNN_ERR_PARAM_INVALID, "gradInput case %d", k);
        CHECK_MSG("gradInput");
        CHECK_MSG("shape");
        tv_free(&gi);
    }
    // the broadcast shape itself is accepted
    tview gi = tv(a, 2, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(bwd1(&g, &x, &gi, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(test_run(ACLNN_SUCCESS, ws, e, aclnnMishBackward, NULL), ACLNN_SUCCESS);
    tv_free(&g);
    tv_free(&x);
    tv_free(&gi);
}

static void test_mish_out_dtype_mismatch(void) {
    tview x = tv(D23, 2, ACL_FLOAT), y16 = tv(D23, 2, ACL_FLOAT16), ybf = tv(D23, 2, ACL_BF16);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(mish1(&x, &y16, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out");
    CHECK_MSG("dtype");
    CHECK_EQ(mish1(&y16, &ybf, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("dtype");
    tview t = tv(D23, 2, ACL_FLOAT16);
    CHECK_EQ(aclnnMishWithTanhxGetWorkspaceSize(x.t, x.t, t.t, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("tanhxOut");
    tv_free(&x);
    tv_free(&y16);
    tv_free(&ybf);
    tv_free(&t);
}

static void test_mish_out_shape_mismatch(void) {
    const int64_t d32[] = {3, 2}, d6[] = {6}, d123[] = {1, 2, 3};
    tview x = tv(D23, 2, ACL_FLOAT);
    const int64_t *bad[] = {d32, d6, d123};
    const int nd[] = {2, 1, 3};
    for (int k = 0; k < 3; k++) {
        tview y = tv(bad[k], nd[k], ACL_FLOAT);
        uint64_t ws = 0;
        aclOpExecutor *e = NULL;
        CHECKF(mish1(&x, &y, &ws, &e) == ACLNN_ERR_PARAM_INVALID, "out shape case %d", k);
        CHECK_MSG("out");
        CHECK_MSG("shape");
        tview t = tv(D23, 2, ACL_FLOAT);
        CHECKF(aclnnMishWithTanhxGetWorkspaceSize(x.t, t.t, y.t, &ws, &e) ==
                   ACLNN_ERR_PARAM_INVALID,
               "tanhxOut shape case %d", k);
        CHECK_MSG("tanhxOut");
        tv_free(&y);
        tv_free(&t);
    }
    tv_free(&x);
}

/* ---- phase 2: workspace and executor ---------------------------------------------------- */

static void test_workspace_too_small_fp16(void) {
    // a strided fp16 input goes through conversion buffers (a contiguous one runs fused)
    const int64_t d[] = {1000}, every_other[] = {2};
    tview x = tv_make(d, 1, ACL_FLOAT16, every_other, 0, 0), y = tv(d, 1, ACL_FLOAT16);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(mish1(&x, &y, &ws, &e), ACLNN_SUCCESS);
    CHECKF(ws > 0, "strided fp16 Mish needs conversion buffers, workspaceSize = %llu",
           (unsigned long long)ws);
    if (ws > 0) {
        void *w = NULL;
        CHECK_EQ(aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        CHECK_EQ(aclnnMish(w, ws - 1, e, NULL), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("workspaceSize");
        aclDestroyAclOpExecutor(e);
        aclrtFree(w);
    }
    tv_free(&x);
    tv_free(&y);
}

static void test_workspace_too_small_broadcast(void) {
    const int64_t a[] = {2, 2, 3, 1}, b[] = {2, 2, 3, 2};
    tview g = tv(a, 4, ACL_FLOAT), x = tv(b, 4, ACL_FLOAT), gi = tv(b, 4, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(bwd1(&g, &x, &gi, &ws, &e), ACLNN_SUCCESS);
    CHECKF(ws > 0, "a broadcast input needs a gather buffer, workspaceSize = %llu",
           (unsigned long long)ws);
    if (ws > 0) {
        void *w = NULL;
        CHECK_EQ(aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        CHECK_EQ(aclnnMishBackward(w, ws - 1, e, NULL), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("workspaceSize");
        CHECK_EQ(aclnnMishBackward(w, 0, e, NULL), ACLNN_ERR_PARAM_INVALID);
        aclDestroyAclOpExecutor(e);
        aclrtFree(w);
    }
    tv_free(&g);
    tv_free(&x);
    tv_free(&gi);
}

static void test_workspace_null_when_needed(void) {
    const int64_t d[] = {1000}, every_other[] = {2};
    tview x = tv_make(d, 1, ACL_BF16, every_other, 0, 0), y = tv(d, 1, ACL_BF16); // buffered
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(mish1(&x, &y, &ws, &e), ACLNN_SUCCESS);
    CHECK(ws > 0);
    CHECK_EQ(aclnnMish(NULL, ws, e, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("workspace");
    aclDestroyAclOpExecutor(e);
    tv_free(&x);
    tv_free(&y);
}

static void test_executor_consumed(void) {
    tview x = tv(D23, 2, ACL_FLOAT), y = tv(D23, 2, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(mish1(&x, &y, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(ws, 0); // contiguous fp32: no buffers
    CHECK_EQ(aclnnMish(NULL, 0, e, NULL), ACLNN_SUCCESS);
    CHECK_EQ(aclnnMish(NULL, 0, e, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("consumed");
    tv_free(&x);
    tv_free(&y);
}

static void test_executor_of_another_operator(void) {
    tview g = tv(D23, 2, ACL_FLOAT), x = tv(D23, 2, ACL_FLOAT), gi = tv(D23, 2, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(bwd1(&g, &x, &gi, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(aclnnMish(NULL, ws, e, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("aclnnMishBackward");
    CHECK_EQ(aclnnInplaceMish(NULL, ws, e, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("aclnnMishBackward");
    CHECK_EQ(aclnnMishBackwardWithTanhx(NULL, ws, e, NULL), ACLNN_ERR_PARAM_INVALID);
    // still usable by its own operator
    CHECK_EQ(aclnnMishBackward(NULL, ws, e, NULL), ACLNN_SUCCESS);
    tv_free(&g);
    tv_free(&x);
    tv_free(&gi);
}

static void test_executor_garbage_pointer(void) {
    // A pointer that never came from phase 1: the runtime must look it up, not dereference it
    // (under ASan a dereference of this 4-byte local reads out of bounds).
    int local = 0;
    aclOpExecutor *fake = (aclOpExecutor *)&local;
    CHECK_EQ(aclnnMish(NULL, 0, fake, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("executor");
    CHECK_EQ(aclnnMishBackward(NULL, 0, fake, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_EQ(aclSetAclOpExecutorRepeatable(fake), ACLNN_ERR_PARAM_INVALID);
    CHECK_EQ(aclDestroyAclOpExecutor(fake), ACLNN_ERR_PARAM_INVALID);
    CHECK_EQ(aclSetInputTensorAddr(fake, 0, NULL, &local), ACLNN_ERR_PARAM_INVALID);
    CHECK(local == 0);
}

static void test_executor_destroyed_pointer(void) {
    tview x = tv(D23, 2, ACL_FLOAT), y = tv(D23, 2, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(mish1(&x, &y, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
    CHECK_EQ(aclnnMish(NULL, ws, e, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("executor");
    tv_free(&x);
    tv_free(&y);
}

static void test_executor_null(void) {
    CHECK_EQ(aclnnMish(NULL, 0, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("executor");
    CHECK_EQ(aclnnMishBackward(NULL, 0, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("executor");
    CHECK_EQ(aclnnInplaceMish(NULL, 0, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_EQ(aclnnMishWithTanhx(NULL, 0, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_EQ(aclnnMishBackwardWithTanhx(NULL, 0, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
}

static void test_repeatable_null(void) {
    CHECK_EQ(aclSetAclOpExecutorRepeatable(NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("executor");
}

static void test_phase2_on_destroyed_stream(void) {
    tview x = tv(D23, 2, ACL_FLOAT), y = tv(D23, 2, ACL_FLOAT);
    aclrtStream s = NULL;
    CHECK_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(mish1(&x, &y, &ws, &e), ACLNN_SUCCESS);
    // a bad argument (161002) or, as CANN reports a failed launch, a runtime error (361001)
    aclnnStatus st = aclnnMish(NULL, ws, e, s);
    CHECKF(st == ACLNN_ERR_PARAM_INVALID || st == ACLNN_ERR_RUNTIME_ERROR, "status %d", (int)st);
    CHECK_MSG("stream");
    aclDestroyAclOpExecutor(e); // whether or not the failed launch consumed it
    tv_free(&x);
    tv_free(&y);
}

/* ---- memory layout rules: 161002 --------------------------------------------------------- */

static void test_output_stride_zero(void) {
    const int64_t d[] = {3, 4}, st[] = {4, 0};
    tview x = tv(d, 2, ACL_FLOAT);
    tview y = tv_make(d, 2, ACL_FLOAT, st, 0, 12);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(mish1(&x, &y, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out");
    CHECK_MSG("stride");
    // the same layout is fine for an input (a broadcast view)
    tview z = tv(d, 2, ACL_FLOAT);
    CHECK_EQ(mish1(&y, &z, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(test_run(ACLNN_SUCCESS, ws, e, aclnnMish, NULL), ACLNN_SUCCESS);
    // gradInput with stride 0
    tview g = tv(d, 2, ACL_FLOAT);
    CHECK_EQ(bwd1(&g, &x, &y, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("gradInput");
    tv_free(&x);
    tv_free(&y);
    tv_free(&z);
    tv_free(&g);
}

// An output whose non-zero strides still map two elements to one address: dims {2,2} with
// strides {1,1} writes elements (0,1) and (1,0) both to storage element 1.
static void test_output_self_overlapping_strides(void) {
    const int64_t d[] = {2, 2}, st[] = {1, 1}, st2[] = {2, 3};
    tview x = tv(d, 2, ACL_FLOAT);
    tview y = tv_make(d, 2, ACL_FLOAT, st, 0, 3);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus s = mish1(&x, &y, &ws, &e);
    CHECKF(s == ACLNN_ERR_PARAM_INVALID,
           "status %d: an output writing one location twice "
           "(dims {2,2}, strides {1,1}) was accepted",
           (int)s);
    if (s == ACLNN_SUCCESS)
        aclDestroyAclOpExecutor(e);
    else
        CHECK_MSG("out");
    // dims {3,2} with strides {2,3} has gaps but no collision (offsets 0,3,2,5,4,7): legal.
    const int64_t d3[] = {3, 2};
    tview x3 = tv(d3, 2, ACL_FLOAT);
    tview y3 = tv_make(d3, 2, ACL_FLOAT, st2, 0, 8);
    CHECK_EQ(mish1(&x3, &y3, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(test_run(ACLNN_SUCCESS, ws, e, aclnnMish, NULL), ACLNN_SUCCESS);
    tv_free(&x);
    tv_free(&y);
    tv_free(&x3);
    tv_free(&y3);
}

static void test_partial_overlap_input_output(void) {
    void *buf = NULL;
    CHECK_EQ(aclrtMalloc(&buf, 16 * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    memset(buf, 0, 16 * sizeof(float));
    const int64_t d[] = {8}, sd[] = {16};
    aclTensor *x = aclCreateTensor(d, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, sd, 1, buf);
    aclTensor *y = aclCreateTensor(d, 1, ACL_FLOAT, NULL, 3, ACL_FORMAT_ND, sd, 1, buf);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnMishGetWorkspaceSize(x, y, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("overlap");
    // backward: gradInput partially over self
    aclTensor *g = aclCreateTensor(d, 1, ACL_FLOAT, NULL, 8, ACL_FORMAT_ND, sd, 1, buf);
    CHECK_EQ(aclnnMishBackwardGetWorkspaceSize(g, x, y, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("overlap");
    // same start but a different layout (reversed stride pattern) is also refused
    const int64_t d2[] = {2, 4}, st_t[] = {1, 2};
    aclTensor *a = aclCreateTensor(d2, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, sd, 1, buf);
    aclTensor *b = aclCreateTensor(d2, 2, ACL_FLOAT, st_t, 0, ACL_FORMAT_ND, sd, 1, buf);
    CHECK_EQ(aclnnMishGetWorkspaceSize(a, b, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("overlap");
    // MishWithTanhx: the two outputs overlap
    aclTensor *c = aclCreateTensor(d, 1, ACL_FLOAT, NULL, 8, ACL_FORMAT_ND, sd, 1, buf);
    CHECK_EQ(aclnnMishWithTanhxGetWorkspaceSize(x, y, c, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("overlap");
    // disjoint halves are fine
    CHECK_EQ(aclnnMishGetWorkspaceSize(x, c, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(test_run(ACLNN_SUCCESS, ws, e, aclnnMish, NULL), ACLNN_SUCCESS);
    aclDestroyTensor(x);
    aclDestroyTensor(y);
    aclDestroyTensor(g);
    aclDestroyTensor(a);
    aclDestroyTensor(b);
    aclDestroyTensor(c);
    aclrtFree(buf);
}

/* ---- the error message itself ------------------------------------------------------------- */

static void *fresh_thread_message(void *arg) {
    (void)arg;
    return (void *)aclGetRecentErrMsg();
}

static void *failing_thread(void *arg) {
    (void)arg;
    CHECK_EQ(aclnnMish(NULL, 0, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
    return NULL;
}

static void test_error_message_is_per_thread(void) {
    // A thread that saw no error reads "".
    pthread_t th;
    void *msg = NULL;
    CHECK_EQ(pthread_create(&th, NULL, fresh_thread_message, NULL), 0);
    pthread_join(th, &msg);
    CHECK(msg != NULL && ((const char *)msg)[0] == '\0');
    // An error in another thread does not replace this thread's message.
    uint64_t ws = 0;
    CHECK_EQ(aclnnMishGetWorkspaceSize(NULL, NULL, &ws, NULL), ACLNN_ERR_PARAM_NULLPTR);
    char before[256];
    snprintf(before, sizeof before, "%s", aclGetRecentErrMsg());
    CHECK_EQ(pthread_create(&th, NULL, failing_thread, NULL), 0);
    pthread_join(th, NULL);
    CHECK(strcmp(before, aclGetRecentErrMsg()) == 0);
    // messages name the function
    CHECK_MSG("aclnnMish");
}

int main(void) {
    RUN(test_mish_null_self);
    RUN(test_mish_null_out);
    RUN(test_mish_null_workspace_size);
    RUN(test_mish_null_executor_out);
    RUN(test_inplace_mish_null_self_ref);
    RUN(test_mish_with_tanhx_null_tanhx);
    RUN(test_backward_null_grad_output);
    RUN(test_backward_null_self);
    RUN(test_backward_null_grad_input);
    RUN(test_backward_null_out_pointers);
    RUN(test_backward_with_tanhx_null_tanhx);
    RUN(test_null_checked_before_dtype);
    RUN(test_tensor_data_null);
    RUN(test_mish_dtype_complex);
    RUN(test_mish_dtype_int32);
    RUN(test_backward_dtype_each_argument);
    RUN(test_rank9_rejected_rank8_accepted);
    RUN(test_backward_not_broadcastable);
    RUN(test_backward_grad_input_shape_mismatch);
    RUN(test_mish_out_dtype_mismatch);
    RUN(test_mish_out_shape_mismatch);
    RUN(test_workspace_too_small_fp16);
    RUN(test_workspace_too_small_broadcast);
    RUN(test_workspace_null_when_needed);
    RUN(test_executor_consumed);
    RUN(test_executor_of_another_operator);
    RUN(test_executor_garbage_pointer);
    RUN(test_executor_destroyed_pointer);
    RUN(test_executor_null);
    RUN(test_repeatable_null);
    RUN(test_phase2_on_destroyed_stream);
    RUN(test_output_stride_zero);
    RUN(test_output_self_overlapping_strides);
    RUN(test_partial_overlap_input_output);
    RUN(test_error_message_is_per_thread);
    return test_summary();
}
