/* The GLU family through the public API: aclnnSwiGlu, aclnnSwiGluGrad, aclnnGeGlu,
 * aclnnGeGluBackward, aclnnGeGluV3 (+ Backward), and aclnnEluV2.
 *  - status paths: NULLs (161001); dtypes, dim out of range, odd split extent, wrong half
 *    shapes, approximate out of {0, 1} (161002), each with the argument named;
 *  - values against float64 on small hand-checkable cases, along the last dim and dim 0 (the
 *    halves then strided), with a transposed input view, in fp32 and bf16;
 *  - the backward in place (gradInput == x), empty tensors, a repeatable executor re-pointed to
 *    new buffers (opgrad_executor_run), 1 vs 2 threads bitwise;
 *  - 16-bit data: the fused 16-bit kernels equal the buffered path bit for bit, on every ISA
 *    level. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_elu_v2.h"
#include "aclnnop/aclnn_geglu.h"
#include "aclnnop/aclnn_geglu_backward.h"
#include "aclnnop/aclnn_swi_glu.h"
#include "aclnnop/aclnn_swi_glu_grad.h"
#include "opgrad/opgrad.h"
#include "test.h"
#include "testutil.h"

#define PI 3.14159265358979323846

static double silu(double v) { return v / (1 + exp(-v)); }
static double dsilu(double v) {
    double s = 1 / (1 + exp(-v));
    return s * (1 + v * (1 - s));
}
static double gelu_erf(double v) { return 0.5 * v * erfc(-v / sqrt(2)); }
static double gelu_tanh(double v) {
    return 0.5 * v * (1 + tanh(sqrt(2 / PI) * (v + 0.044715 * v * v * v)));
}
static double dgelu_erf(double v) {
    return 0.5 * erfc(-v / sqrt(2)) + v * exp(-v * v / 2) / sqrt(2 * PI);
}

static void test_statuses(void) {
    int64_t d24[] = {2, 4}, d22[] = {2, 2}, d23[] = {2, 3}, d14[] = {1, 4};
    float a[8] = {0}, b[8] = {0}, c[8] = {0}, g[8] = {0};
    uint16_t h16[8] = {0};
    aclTensor *x = test_tensor(d24, 2, ACL_FLOAT, a), *o = test_tensor(d22, 2, ACL_FLOAT, b);
    aclTensor *og = test_tensor(d22, 2, ACL_FLOAT, g), *o14 = test_tensor(d14, 2, ACL_FLOAT, c);
    aclTensor *x23 = test_tensor(d23, 2, ACL_FLOAT, c), *o16 = test_tensor(d22, 2, ACL_BF16, h16);
    aclTensor *dx = test_tensor(d24, 2, ACL_FLOAT, c);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(aclnnSwiGluGetWorkspaceSize(NULL, -1, o, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("x is NULL");
    CHECK_EQ(aclnnSwiGluGetWorkspaceSize(x, -1, NULL, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("out is NULL");
    CHECK_EQ(aclnnSwiGluGetWorkspaceSize(x, 2, o, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("dim = 2 is out of range");
    CHECK_EQ(aclnnSwiGluGetWorkspaceSize(x23, -1, o, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("x has extent 3 along dim -1, which must be even");
    CHECK_EQ(aclnnSwiGluGetWorkspaceSize(x, -1, o14, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out has shape [1,4] but must have x's shape [2,4] with dim 1 halved");
    CHECK_EQ(aclnnSwiGluGetWorkspaceSize(x, -1, o16, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("bfloat16");
    CHECK_EQ(aclnnSwiGluGradGetWorkspaceSize(o, x, -1, NULL, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("out is NULL");
    CHECK_EQ(aclnnSwiGluGradGetWorkspaceSize(o, x, 0, dx, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("yGrad has shape [2,2] but must have x's shape [2,4] with dim 0 halved");
    CHECK_EQ(aclnnSwiGluGradGetWorkspaceSize(o16, x, -1, dx, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("yGrad");
    CHECK_EQ(aclnnGeGluGetWorkspaceSize(x, -1, 2, o, og, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("approximate = 2 must be 0");
    CHECK_EQ(aclnnGeGluGetWorkspaceSize(x, -1, 1, o, NULL, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("outGelu is NULL");
    CHECK_EQ(aclnnGeGluGetWorkspaceSize(x, -1, 1, o, o14, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("outGelu has shape [1,4]");
    CHECK_EQ(aclnnGeGluGetWorkspaceSize(x, -1, 1, o, o, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out and outGelu overlap");
    CHECK_EQ(aclnnGeGluBackwardGetWorkspaceSize(o, x, og, -1, -1, dx, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("approximate = -1");
    CHECK_EQ(aclnnGeGluBackwardGetWorkspaceSize(o, x, o14, -1, 0, dx, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("gelu has shape [1,4]");
    CHECK_EQ(aclnnGeGluBackwardGetWorkspaceSize(o, x, og, -1, 0, o, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("gradInput");
    // 0-d: nothing to split
    float s0 = 1;
    aclTensor *t0 = test_tensor(NULL, 0, ACL_FLOAT, &s0);
    CHECK_EQ(aclnnSwiGluGetWorkspaceSize(t0, 0, t0, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    float one = 1;
    aclScalar *sc = aclCreateScalar(&one, ACL_FLOAT);
    CHECK_EQ(aclnnEluV2GetWorkspaceSize(x, sc, NULL, sc, dx, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("scale is NULL");
    aclTensor *dx16 = test_tensor(d24, 2, ACL_BF16, h16);
    CHECK_EQ(aclnnEluV2GetWorkspaceSize(x, sc, sc, sc, dx16, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    aclDestroyScalar(sc);
    aclTensor *all[] = {x, o, og, o14, x23, o16, dx, t0, dx16};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) aclDestroyTensor(all[i]);
}

// x [R, 2H] (or, dim 0, [2H, C]): every output checked against float64.
static void check_swiglu(int dim, aclDataType dt, bool transposed) {
    enum { R = 3, H = 5 };
    int64_t xd[2], od[2], xs[2];
    if (dim == 0)
        xd[0] = 2 * H, xd[1] = R, od[0] = H, od[1] = R;
    else
        xd[0] = R, xd[1] = 2 * H, od[0] = R, od[1] = H;
    // transposed: the storage is [xd1, xd0] row-major, the view swaps it back
    if (transposed)
        xs[0] = 1, xs[1] = xd[0];
    else
        xs[0] = xd[1], xs[1] = 1;
    int64_t sd[2] = {transposed ? xd[1] : xd[0], transposed ? xd[0] : xd[1]};
    size_t es = aclDataTypeSize(dt);
    void *xb = test_dev_alloc(2 * R * H * es), *ob = test_dev_alloc(R * H * es);
    void *gb = test_dev_alloc(R * H * es), *db = test_dev_alloc(2 * R * H * es);
    double xv[2 * R * H], gv[R * H]; // row-major over the view
    for (int i = 0; i < 2 * R * H; i++) {
        int64_t r = i / xd[1], cidx = i % xd[1];
        xv[i] = test_round_to(dt, -3.0 + 0.37 * i - 0.011 * i * i);
        test_store(xb, r * xs[0] + cidx * xs[1], dt, xv[i]);
    }
    for (int i = 0; i < R * H; i++) {
        gv[i] = test_round_to(dt, 0.5 - 0.13 * i);
        test_store(gb, i, dt, gv[i]);
    }
    aclTensor *x = aclCreateTensor(xd, 2, dt, xs, 0, ACL_FORMAT_ND, sd, 2, xb);
    aclTensor *out = test_tensor(od, 2, dt, ob), *g = test_tensor(od, 2, dt, gb);
    aclTensor *dx = test_tensor(xd, 2, dt, db);
    aclnnStatus st;
    OP_RUN(st, aclnnSwiGluGetWorkspaceSize(x, dim, out, &ws_, &ex_), aclnnSwiGlu);
    CHECK_EQ(st, ACLNN_SUCCESS);
    OP_RUN(st, aclnnSwiGluGradGetWorkspaceSize(g, x, dim, dx, &ws_, &ex_), aclnnSwiGluGrad);
    CHECK_EQ(st, ACLNN_SUCCESS);
    double tol = dt == ACL_FLOAT ? 1e-5 : 1e-2;
    for (int r = 0; r < (dim == 0 ? H : R); r++)
        for (int j = 0; j < (dim == 0 ? R : H); j++) {
            // output element (r, j); A and B elements in the row-major view
            int64_t iy = r * od[1] + j;
            int64_t ia = dim == 0 ? r * xd[1] + j : r * xd[1] + j;
            int64_t ib = dim == 0 ? (r + H) * xd[1] + j : r * xd[1] + j + H;
            double a = xv[ia], b = xv[ib], gy = gv[iy];
            double y = test_load(ob, iy, dt), want = silu(a) * b;
            CHECK(fabs(y - want) <= tol * (1 + fabs(want)));
            double da = test_load(db, ia, dt), dbv = test_load(db, ib, dt);
            CHECK(fabs(da - gy * dsilu(a) * b) <= tol * (1 + fabs(gy * b)));
            CHECK(fabs(dbv - gy * silu(a)) <= tol * (1 + fabs(gy * a)));
        }
    aclDestroyTensor(x), aclDestroyTensor(out), aclDestroyTensor(g), aclDestroyTensor(dx);
    aclrtFree(xb), aclrtFree(ob), aclrtFree(gb), aclrtFree(db);
}

static void test_swiglu_values(void) {
    for (int t = 0; t < 2; t++) {
        check_swiglu(-1, ACL_FLOAT, t);
        check_swiglu(0, ACL_FLOAT, t);
        check_swiglu(1, ACL_BF16, t);
        check_swiglu(0, ACL_FLOAT16, t);
    }
}

// GeGlu on x = [[0, 1, 2, 3]] style rows by hand: out = A gelu(B), outGelu = gelu(B); V3 with
// activateLeft: gelu(A) B. The backward from those.
static void test_geglu_values(void) {
    int64_t xd[] = {2, 4}, hd[] = {2, 2};
    float x[8] = {0.5f, -1.0f, 2.0f, -0.75f, 1.5f, 3.0f, -2.0f, 0.25f};
    float gy[4] = {1.0f, -2.0f, 0.5f, 3.0f};
    for (int approximate = 0; approximate < 2; approximate++)
        for (int left = 0; left < 2; left++) {
            float out[4], gel[4], dx[8];
            aclTensor *tx = test_tensor(xd, 2, ACL_FLOAT, x),
                      *to = test_tensor(hd, 2, ACL_FLOAT, out);
            aclTensor *tg = test_tensor(hd, 2, ACL_FLOAT, gel),
                      *tgy = test_tensor(hd, 2, ACL_FLOAT, gy);
            aclTensor *tdx = test_tensor(xd, 2, ACL_FLOAT, dx);
            aclnnStatus st;
            if (left) {
                OP_RUN(st,
                       aclnnGeGluV3GetWorkspaceSize(tx, 1, approximate, true, to, tg, &ws_, &ex_),
                       aclnnGeGluV3);
                CHECK_EQ(st, ACLNN_SUCCESS);
                OP_RUN(st,
                       aclnnGeGluV3BackwardGetWorkspaceSize(tgy, tx, tg, -1, approximate, true, tdx,
                                                            &ws_, &ex_),
                       aclnnGeGluV3Backward);
            } else {
                OP_RUN(st, aclnnGeGluGetWorkspaceSize(tx, 1, approximate, to, tg, &ws_, &ex_),
                       aclnnGeGlu);
                CHECK_EQ(st, ACLNN_SUCCESS);
                OP_RUN(st,
                       aclnnGeGluBackwardGetWorkspaceSize(tgy, tx, tg, -1, approximate, tdx, &ws_,
                                                          &ex_),
                       aclnnGeGluBackward);
            }
            CHECK_EQ(st, ACLNN_SUCCESS);
            for (int r = 0; r < 2; r++)
                for (int j = 0; j < 2; j++) {
                    int ia = r * 4 + j, ib = ia + 2, iy = r * 2 + j;
                    int ig = left ? ia : ib, il = left ? ib : ia;
                    double gv = approximate ? gelu_tanh(x[ig]) : gelu_erf(x[ig]);
                    CHECK(fabs(gel[iy] - gv) <= 1e-6 * (1 + fabs(gv)));
                    CHECK(fabs(out[iy] - x[il] * gv) <= 1e-6 * (1 + fabs(x[il] * gv)));
                    CHECK(fabs(dx[il] - gy[iy] * gel[iy]) <= 1e-6 * (1 + fabs(gy[iy] * gv)));
                    if (!approximate) {
                        double want = gy[iy] * x[il] * dgelu_erf(x[ig]);
                        CHECK(fabs(dx[ig] - want) <= 1e-5 * (1 + fabs(want)));
                    } else { // central difference of the tanh form
                        double hh = 1e-6, v = x[ig];
                        double d = (gelu_tanh(v + hh) - gelu_tanh(v - hh)) / (2 * hh);
                        CHECK(fabs(dx[ig] - gy[iy] * x[il] * d) <=
                              1e-5 * (1 + fabs(gy[iy] * x[il])));
                    }
                }
            aclDestroyTensor(tx), aclDestroyTensor(to), aclDestroyTensor(tg);
            aclDestroyTensor(tgy), aclDestroyTensor(tdx);
        }
}

// SwiGluGrad with gradInput == x (same layout: accepted), equal to the out-of-place result; empty
// tensors; a repeatable executor re-pointed to other buffers; 1 vs 2 threads bitwise.
static void test_inplace_empty_repeat_threads(void) {
    enum { R = 64, H = 300 };
    int64_t xd[] = {R, 2 * H}, hd[] = {R, H};
    static float x[R * 2 * H], x2[R * 2 * H], g[R * H], dx[R * 2 * H], y1[R * H], y2[R * H];
    test_rng rng;
    test_rng_seed(&rng, 7);
    test_fill(x, 0, R * 2 * H, ACL_FLOAT, &rng, -6, 6);
    test_fill(x2, 0, R * 2 * H, ACL_FLOAT, &rng, -6, 6);
    test_fill(g, 0, R * H, ACL_FLOAT, &rng, -2, 2);
    aclTensor *tx = test_tensor(xd, 2, ACL_FLOAT, x), *tg = test_tensor(hd, 2, ACL_FLOAT, g);
    aclTensor *tdx = test_tensor(xd, 2, ACL_FLOAT, dx);
    aclnnStatus st;
    OP_RUN(st, aclnnSwiGluGradGetWorkspaceSize(tg, tx, 1, tdx, &ws_, &ex_), aclnnSwiGluGrad);
    CHECK_EQ(st, ACLNN_SUCCESS);
    OP_RUN(st, aclnnSwiGluGradGetWorkspaceSize(tg, tx, 1, tx, &ws_, &ex_), aclnnSwiGluGrad);
    CHECK_EQ(st, ACLNN_SUCCESS);
    CHECK(memcmp(x, dx, sizeof dx) == 0);
    // threads: the forward at 1 and 2 threads
    aclTensor *ty = test_tensor(hd, 2, ACL_FLOAT, y1), *tx2 = test_tensor(xd, 2, ACL_FLOAT, x2);
    opgrad_set_num_threads(1);
    OP_RUN(st, aclnnSwiGluGetWorkspaceSize(tx2, -1, ty, &ws_, &ex_), aclnnSwiGlu);
    CHECK_EQ(st, ACLNN_SUCCESS);
    memcpy(y2, y1, sizeof y1);
    opgrad_set_num_threads(2);
    OP_RUN(st, aclnnSwiGluGetWorkspaceSize(tx2, -1, ty, &ws_, &ex_), aclnnSwiGlu);
    CHECK_EQ(st, ACLNN_SUCCESS);
    CHECK(memcmp(y1, y2, sizeof y1) == 0);
    opgrad_set_num_threads(0);
    // repeatable: plan on x, run on x2 (the halves' views follow the new address)
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    static float y3[R * H];
    CHECK_EQ(aclnnSwiGluGetWorkspaceSize(tx, -1, ty, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
    void *wsp = ws ? test_dev_alloc(ws) : NULL;
    void *addrs[2] = {x2, y3};
    CHECK_EQ(opgrad_executor_run(e, addrs, 2, wsp, ws, NULL), ACLNN_SUCCESS);
    CHECK(memcmp(y3, y2, sizeof y3) == 0);
    aclDestroyAclOpExecutor(e);
    if (wsp) aclrtFree(wsp);
    // empty
    int64_t ed[] = {0, 4}, eh[] = {0, 2};
    aclTensor *te = test_tensor(ed, 2, ACL_FLOAT, x), *teh = test_tensor(eh, 2, ACL_FLOAT, y1);
    OP_RUN(st, aclnnSwiGluGetWorkspaceSize(te, -1, teh, &ws_, &ex_), aclnnSwiGlu);
    CHECK_EQ(st, ACLNN_SUCCESS);
    OP_RUN(st, aclnnSwiGluGradGetWorkspaceSize(teh, te, -1, te, &ws_, &ex_), aclnnSwiGluGrad);
    CHECK_EQ(st, ACLNN_SUCCESS);
    aclTensor *all[] = {tx, tg, tdx, ty, tx2, te, teh};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) aclDestroyTensor(all[i]);
}

// All four operators on 16-bit data equal the buffered path (OPGRAD_FUSED16=0: the engine's fp32
// tile buffers, converted on the way in and out) bit for bit, on every ISA level this CPU has.
// Split along dim 0 every operand is linear (the halves are contiguous blocks): the engine's fused
// 16-bit path; along dim -1 the halves are strided: buffered on both runs, still one rounding.
static void run_all16(aclDataType dt, const void *x, const void *g, uint16_t *res, int64_t dim) {
    enum { R = 5, H = 700 }; // a half spans several chunks, with a tail
    int64_t xd[] = {dim == 0 ? 2 * R : R, dim == 0 ? H : 2 * H}, hd[] = {R, H};
    aclTensor *tx = test_tensor(xd, 2, dt, (void *)x), *tg = test_tensor(hd, 2, dt, (void *)g);
    aclTensor *o1 = test_tensor(hd, 2, dt, res), *o2 = test_tensor(xd, 2, dt, res + R * H);
    aclTensor *o3 = test_tensor(hd, 2, dt, res + 3 * R * H);
    aclTensor *o4 = test_tensor(hd, 2, dt, res + 4 * R * H);
    aclTensor *o5 = test_tensor(xd, 2, dt, res + 5 * R * H);
    aclnnStatus st;
    OP_RUN(st, aclnnSwiGluGetWorkspaceSize(tx, dim, o1, &ws_, &ex_), aclnnSwiGlu);
    CHECK_EQ(st, ACLNN_SUCCESS);
    OP_RUN(st, aclnnSwiGluGradGetWorkspaceSize(tg, tx, dim, o2, &ws_, &ex_), aclnnSwiGluGrad);
    CHECK_EQ(st, ACLNN_SUCCESS);
    OP_RUN(st, aclnnGeGluGetWorkspaceSize(tx, dim, 0, o3, o4, &ws_, &ex_), aclnnGeGlu);
    CHECK_EQ(st, ACLNN_SUCCESS);
    OP_RUN(st, aclnnGeGluBackwardGetWorkspaceSize(tg, tx, o4, dim, 1, o5, &ws_, &ex_),
           aclnnGeGluBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    aclTensor *all[] = {tx, tg, o1, o2, o3, o4, o5};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) aclDestroyTensor(all[i]);
}

static void test_fused16_bitwise(void) {
    enum { R = 5, H = 700, NRES = 7 * R * H };
    static uint16_t x[2 * R * H], g[R * H], want[NRES], got[NRES];
    aclDataType dts[2] = {ACL_BF16, ACL_FLOAT16};
    for (int d = 0; d < 2; d++)
        for (int64_t dim = 0; dim >= -1; dim--) {
            test_rng rng;
            test_rng_seed(&rng, 11 + d);
            test_fill(x, 0, 2 * R * H, dts[d], &rng, -8, 8);
            test_fill(g, 0, R * H, dts[d], &rng, -2, 2);
            setenv("OPGRAD_FUSED16", "0", 1);
            opgrad_set_max_isa(OPGRAD_ISA_SCALAR);
            run_all16(dts[d], x, g, want, dim);
            unsetenv("OPGRAD_FUSED16");
            for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
                if (!test_isa_available(isa)) continue;
                opgrad_set_max_isa((opgrad_isa)isa);
                memset(got, 0, sizeof got);
                run_all16(dts[d], x, g, got, dim);
                CHECK(memcmp(got, want, sizeof got) == 0);
            }
            opgrad_set_max_isa((opgrad_isa)(OPGRAD_ISA_COUNT - 1));
        }
}

static void test_elu_v2(void) {
    int64_t d[] = {4};
    float x[4] = {-2, -1, 0, 1}, y[4];
    float alpha = 0.5f, scale = 1.5f, iscale = 2.0f;
    aclScalar *sa = aclCreateScalar(&alpha, ACL_FLOAT), *ss = aclCreateScalar(&scale, ACL_FLOAT);
    aclScalar *si = aclCreateScalar(&iscale, ACL_FLOAT);
    aclTensor *tx = test_tensor(d, 1, ACL_FLOAT, x), *ty = test_tensor(d, 1, ACL_FLOAT, y);
    aclnnStatus st;
    OP_RUN(st, aclnnEluV2GetWorkspaceSize(tx, sa, ss, si, ty, &ws_, &ex_), aclnnEluV2);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int i = 0; i < 4; i++) {
        double want = x[i] > 0 ? 1.5 * x[i] : 1.5 * 0.5 * expm1(2.0 * x[i]);
        CHECK(test_ulp_error(ACL_FLOAT, y[i], want) <= 2);
    }
    aclDestroyScalar(sa), aclDestroyScalar(ss), aclDestroyScalar(si);
    aclDestroyTensor(tx), aclDestroyTensor(ty);
}

int main(void) {
    aclInit(NULL);
    RUN(test_statuses);
    RUN(test_swiglu_values);
    RUN(test_geglu_values);
    RUN(test_inplace_empty_repeat_threads);
    RUN(test_fused16_bitwise);
    RUN(test_elu_v2);
    return test_summary();
}
