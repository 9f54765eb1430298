/* aclnnEmbedding and aclnnEmbeddingDenseBackward through the public API:
 *  - hand-checkable values: the lookup, repeated indices summed, paddingIdx's row zero,
 *    scaleGradByFreq dividing by the index count, (uint64_t)-1 and paddingIdx >= numWeights
 *    padding nothing; int32 and int64 indices; weight of int64 and bool (bytes copied);
 *  - out-of-range indices (negative, >= numEmbeddings): a zero row forward, no contribution and
 *    no count backward, never a read or write outside the tensors (guarded buffers);
 *  - strided weight / out / grad views; a [3, 4] index tensor; 16-bit gradients summed in fp32;
 *  - the backward bitwise equal on 1, 2 and 3 threads and every ISA level (8,000 positions over
 *    50 rows: each row sums many contributions);
 *  - status paths: NULLs, dtypes, shapes, rank, numWeights vs out; empty tensors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_embedding.h"
#include "aclnnop/aclnn_embedding_dense_backward.h"
#include "opgrad/opgrad.h"
#include "tensor/dtype.h"
#include "test.h"
#include "testutil.h"

static aclnnStatus lookup(const aclTensor *w, const aclTensor *idx, const aclTensor *out) {
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnEmbeddingGetWorkspaceSize(w, idx, out, &ws, &ex);
    return test_run(st, ws, ex, aclnnEmbedding, NULL);
}

static aclnnStatus dense_bwd(const aclTensor *g, const aclTensor *idx, uint64_t V, uint64_t pad,
                             bool freq, const aclTensor *out) {
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st =
        aclnnEmbeddingDenseBackwardGetWorkspaceSize(g, idx, V, pad, freq, out, &ws, &ex);
    return test_run(st, ws, ex, aclnnEmbeddingDenseBackward, NULL);
}

static void test_forward_values(void) {
    // weight [4, 3] = 0..11; indices [2, 3] int64 with repeats and out-of-range -1 and 4
    float w[12];
    for (int i = 0; i < 12; i++) w[i] = (float)i;
    int64_t idx[6] = {3, 0, 3, -1, 4, 1}, wd[2] = {4, 3}, id[2] = {2, 3}, od[3] = {2, 3, 3};
    gbuf out = gbuf_new(18, 4);
    aclTensor *tw = test_tensor(wd, 2, ACL_FLOAT, w), *ti = test_tensor(id, 2, ACL_INT64, idx);
    aclTensor *to = test_tensor(od, 3, ACL_FLOAT, out.data);
    for (int i = 0; i < 18; i++) out.f[i] = 99;
    CHECK_EQ(lookup(tw, ti, to), ACLNN_SUCCESS);
    const float want[18] = {9, 10, 11, 0, 1, 2, 9, 10, 11, 0, 0, 0, 0, 0, 0, 3, 4, 5};
    for (int i = 0; i < 18; i++)
        CHECKF(out.f[i] == want[i], "out[%d] = %g, want %g", i, out.f[i], want[i]);
    CHECK(gbuf_guards_ok(&out));
    // int32 indices, a transposed weight view (weight[r][c] at w[c * 4 + r]) and a strided out
    int32_t idx32[3] = {2, 2, 0};
    int64_t i1[1] = {3}, o2[2] = {3, 3}, ws_[2] = {1, 4}, os_[2] = {1, 3};
    aclTensor *tw2 =
        aclCreateTensor(wd, 2, ACL_FLOAT, ws_, 0, ACL_FORMAT_ND, (int64_t[]){3, 4}, 2, w);
    float o[9];
    aclTensor *ti2 = test_tensor(i1, 1, ACL_INT32, idx32);
    aclTensor *to2 = aclCreateTensor(o2, 2, ACL_FLOAT, os_, 0, ACL_FORMAT_ND, o2, 2, o);
    CHECK_EQ(lookup(tw2, ti2, to2), ACLNN_SUCCESS);
    for (int j = 0; j < 3; j++)
        for (int c = 0; c < 3; c++) CHECK(o[c * 3 + j] == w[c * 4 + idx32[j]]);
    // an int64 weight: rows copied bit for bit
    int64_t wi[8] = {INT64_MIN, 1, 2, 3, 4, 5, 6, INT64_MAX}, oi[4], wd2[2] = {4, 2},
            od2[2] = {2, 2};
    int64_t idx2[2] = {3, 0}, i2 = 2;
    aclTensor *twi = test_tensor(wd2, 2, ACL_INT64, wi), *toi = test_tensor(od2, 2, ACL_INT64, oi);
    aclTensor *ti3 = test_tensor(&i2, 1, ACL_INT64, idx2);
    CHECK_EQ(lookup(twi, ti3, toi), ACLNN_SUCCESS);
    CHECK(oi[0] == 6 && oi[1] == INT64_MAX && oi[2] == INT64_MIN && oi[3] == 1);
    aclTensor *all[] = {tw, ti, to, tw2, ti2, to2, twi, toi, ti3};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) aclDestroyTensor(all[k]);
    gbuf_free(&out);
}

static void test_backward_values(void) {
    // 6 positions over 4 rows: 3 three times, 0 once, 1 once, -1 and 7 out of range
    int64_t idx[7] = {3, 0, 3, -1, 7, 1, 3}, n = 7, gd[2] = {7, 2}, od[2] = {4, 2};
    float g[14];
    for (int i = 0; i < 14; i++) g[i] = (float)(i + 1);
    gbuf out = gbuf_new(8, 4);
    aclTensor *tg = test_tensor(gd, 2, ACL_FLOAT, g), *ti = test_tensor(&n, 1, ACL_INT64, idx);
    aclTensor *to = test_tensor(od, 2, ACL_FLOAT, out.data);
    // rows: 0 <- pos 1 (3,4); 1 <- pos 5 (11,12); 2 <- none; 3 <- pos 0,2,6 (1+5+13, 2+6+14)
    const float plain[8] = {3, 4, 11, 12, 0, 0, 19, 22};
    CHECK_EQ(dense_bwd(tg, ti, 4, UINT64_MAX, false, to), ACLNN_SUCCESS);
    for (int i = 0; i < 8; i++)
        CHECKF(out.f[i] == plain[i], "[%d] %g want %g", i, out.f[i], plain[i]);
    CHECK_EQ(dense_bwd(tg, ti, 4, 4, false, to), ACLNN_SUCCESS); // >= numWeights: no padding
    for (int i = 0; i < 8; i++) CHECK(out.f[i] == plain[i]);
    CHECK_EQ(dense_bwd(tg, ti, 4, 3, false, to), ACLNN_SUCCESS);
    for (int i = 0; i < 8; i++) CHECK(out.f[i] == (i >= 6 ? 0 : plain[i]));
    CHECK_EQ(dense_bwd(tg, ti, 4, UINT64_MAX, true, to), ACLNN_SUCCESS);
    const float freq[8] = {3, 4, 11, 12, 0, 0, 19.0f / 3, 22.0f / 3};
    for (int i = 0; i < 8; i++)
        CHECKF(out.f[i] == freq[i], "[%d] %g want %g", i, out.f[i], freq[i]);
    CHECK_EQ(dense_bwd(tg, ti, 4, 0, true, to), ACLNN_SUCCESS);
    for (int i = 0; i < 8; i++) CHECK(out.f[i] == (i < 2 ? 0 : freq[i]));
    CHECK(gbuf_guards_ok(&out));
    // bf16 gradient [7, 2] through a transposed view, summed in fp32, rounded once
    uint16_t gb[14], ob[8];
    for (int i = 0; i < 14; i++) gb[i] = og_f32_to_bf16(1.0f + (float)i / 256.0f);
    int64_t gs[2] = {1, 7};
    aclTensor *tgb =
        aclCreateTensor(gd, 2, ACL_BF16, gs, 0, ACL_FORMAT_ND, (int64_t[]){2, 7}, 2, gb);
    aclTensor *tob = test_tensor(od, 2, ACL_BF16, ob);
    CHECK_EQ(dense_bwd(tgb, ti, 4, UINT64_MAX, false, tob), ACLNN_SUCCESS);
    for (int c = 0; c < 2; c++) {
        float s = 0; // row 3: positions 0, 2, 6; element (j, c) at gb[c * 7 + j]
        s += og_bf16_to_f32(gb[c * 7 + 0]), s += og_bf16_to_f32(gb[c * 7 + 2]);
        s += og_bf16_to_f32(gb[c * 7 + 6]);
        CHECK(ob[6 + c] == og_f32_to_bf16(s));
    }
    aclTensor *all[] = {tg, ti, to, tgb, tob};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) aclDestroyTensor(all[k]);
    gbuf_free(&out);
}

static void test_backward_deterministic(void) {
    const int64_t n = 8000, V = 50, D = 37;
    int64_t *idx = malloc((size_t)n * 8), gd[2] = {n, D}, od[2] = {V, D};
    float *g = malloc((size_t)(n * D) * 4), *first = malloc((size_t)(V * D) * 4),
          *o = malloc((size_t)(V * D) * 4);
    test_rng r;
    test_rng_seed(&r, 3);
    for (int64_t j = 0; j < n; j++) idx[j] = (int64_t)test_rng_uniform(&r, 0, (double)V);
    for (int64_t i = 0; i < n * D; i++) g[i] = (float)test_rng_uniform(&r, -1, 1);
    aclTensor *tg = test_tensor(gd, 2, ACL_FLOAT, g), *ti = test_tensor(&n, 1, ACL_INT64, idx);
    aclTensor *to = test_tensor(od, 2, ACL_FLOAT, o);
    int threads = opgrad_get_num_threads();
    opgrad_isa top = opgrad_set_max_isa(OPGRAD_ISA_AMX);
    bool have = false;
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!test_isa_available(isa)) continue;
        opgrad_set_max_isa((opgrad_isa)isa);
        for (int t = 1; t <= 3; t++) {
            opgrad_set_num_threads(t);
            CHECK_EQ(dense_bwd(tg, ti, (uint64_t)V, 7, true, to), ACLNN_SUCCESS);
            if (!have) {
                memcpy(first, o, (size_t)(V * D) * 4), have = true;
                // against a sum in position order, in fp32
                for (int64_t rr = 0; rr < V; rr++) {
                    int64_t cnt = 0;
                    for (int64_t j = 0; j < n; j++) cnt += idx[j] == rr;
                    for (int64_t d = 0; d < D; d++) {
                        float s = 0;
                        for (int64_t j = 0; j < n; j++)
                            if (idx[j] == rr) s += g[j * D + d];
                        float want = rr == 7 ? 0.0f : cnt > 1 ? s / (float)cnt : s;
                        CHECK(o[rr * D + d] == want);
                    }
                }
            }
            CHECKF(memcmp(first, o, (size_t)(V * D) * 4) == 0, "%s, %d threads differ",
                   opgrad_isa_name((opgrad_isa)isa), t);
        }
    }
    opgrad_set_max_isa(top);
    opgrad_set_num_threads(threads);
    aclDestroyTensor(tg), aclDestroyTensor(ti), aclDestroyTensor(to);
    free(idx), free(g), free(first), free(o);
}

static void test_status_paths(void) {
    int64_t wd[2] = {4, 3}, i1 = 2, od[2] = {2, 3}, bad[2] = {2, 4}, d3[3] = {1, 4, 3};
    float *w = test_dev_alloc(48), *o = test_dev_alloc(48);
    int64_t *idx = test_dev_alloc(32);
    aclTensor *tw = test_tensor(wd, 2, ACL_FLOAT, w), *ti = test_tensor(&i1, 1, ACL_INT64, idx);
    aclTensor *to = test_tensor(od, 2, ACL_FLOAT, o), *tobad = test_tensor(bad, 2, ACL_FLOAT, o);
    aclTensor *tif = test_tensor(&i1, 1, ACL_FLOAT, idx), *toh = test_tensor(od, 2, ACL_FLOAT16, o);
    aclTensor *tw3 = test_tensor(d3, 3, ACL_FLOAT, w), *tgw = test_tensor(od, 2, ACL_FLOAT, w);
    uint64_t ws;
    aclOpExecutor *ex;
    CHECK_EQ(aclnnEmbeddingGetWorkspaceSize(NULL, ti, to, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("weight");
    CHECK_EQ(aclnnEmbeddingGetWorkspaceSize(tw, ti, NULL, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_EQ(aclnnEmbeddingGetWorkspaceSize(tw, tif, to, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("indices has dtype float32");
    CHECK_EQ(aclnnEmbeddingGetWorkspaceSize(tw, ti, tobad, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("[2,3]");
    CHECK_EQ(aclnnEmbeddingGetWorkspaceSize(tw, ti, toh, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    CHECK_EQ(aclnnEmbeddingGetWorkspaceSize(tw3, ti, to, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("rank 3");
    // backward: grad [2, 3], indices [2], out [4, 3]
    CHECK_EQ(aclnnEmbeddingDenseBackwardGetWorkspaceSize(tgw, NULL, 4, 0, false, tw, &ws, &ex),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("indices");
    CHECK_EQ(aclnnEmbeddingDenseBackwardGetWorkspaceSize(tgw, ti, 5, 0, false, tw, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("numWeights");
    CHECK_EQ(aclnnEmbeddingDenseBackwardGetWorkspaceSize(tgw, tif, 4, 0, false, tw, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    int64_t i3 = 3;
    aclTensor *ti3 = test_tensor(&i3, 1, ACL_INT64, idx);
    CHECK_EQ(aclnnEmbeddingDenseBackwardGetWorkspaceSize(tgw, ti3, 4, 0, false, tw, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("rows");
    aclTensor *twh = test_tensor(wd, 2, ACL_FLOAT16, o);
    CHECK_EQ(aclnnEmbeddingDenseBackwardGetWorkspaceSize(tgw, ti, 4, 0, false, twh, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    // empty: no indices -> an empty lookup; a backward of zeros
    int64_t zero = 0, ez[2] = {0, 3};
    aclTensor *tie = test_tensor(&zero, 1, ACL_INT64, idx), *toe = test_tensor(ez, 2, ACL_FLOAT, o);
    CHECK_EQ(lookup(tw, tie, toe), ACLNN_SUCCESS);
    for (int i = 0; i < 12; i++) o[i] = 5;
    aclTensor *tgo = test_tensor(wd, 2, ACL_FLOAT, o);
    CHECK_EQ(dense_bwd(toe, tie, 4, 0, false, tgo), ACLNN_SUCCESS);
    for (int i = 0; i < 12; i++) CHECK(o[i] == 0);
    aclTensor *all[] = {tw, ti, to, tobad, tif, toh, tw3, tgw, ti3, twh, tie, toe, tgo};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) aclDestroyTensor(all[k]);
    aclrtFree(w), aclrtFree(o), aclrtFree(idx);
}

int main(void) {
    RUN(test_forward_values);
    RUN(test_backward_values);
    RUN(test_backward_deterministic);
    RUN(test_status_paths);
    return test_summary();
}
