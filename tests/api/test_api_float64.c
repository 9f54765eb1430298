/* float64 through the aclnn API: the elementwise activations and arithmetic, and ReduceSum, take
 * float64 tensors (the engines' double paths, engine/elementwise.h and engine/reduce.h), and so do
 * the matmul family (engine/gemm.h). What is
 * tested here is what the checker's float64 rows do not see: promotion with other dtypes, strided
 * and broadcast operands, a float64 result rounded once into a narrower output, double-precision
 * scalar attributes, the summation (of float32 summands into a float64 gradient too), FusedMatmul's
 * float64 gelu (opgrad's extension) and its refusals, dropout's dtype-independent mask and double
 * scale, EmbeddingDenseBackward's double sums, and the refusal by operators without float64
 * kernels. (The kernels' accuracy against the float64 references: `opgrad check --dtype float64`.)
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_addmm.h"
#include "aclnnop/aclnn_dropout.h"
#include "aclnnop/aclnn_dropout_backward.h"
#include "aclnnop/aclnn_embedding_dense_backward.h"
#include "aclnnop/aclnn_fused_matmul.h"
#include "aclnnop/aclnn_fused_matmul_backward.h"
#include "aclnnop/aclnn_grad_compress.h"
#include "aclnnop/aclnn_matmul.h"
#include "aclnnop/aclnn_mish.h"
#include "aclnnop/aclnn_mish_backward.h"
#include "aclnnop/aclnn_mul.h"
#include "aclnnop/aclnn_reduce_sum.h"
#include "aclnnop/aclnn_sigmoid.h"
#include "test.h"
#include "testutil.h"

typedef test_buf buf;

static double *d(const buf *b) { return (double *)b->data; }

// Add(self [2,3] float64, other [3] float32, alpha = 0.1 as a DOUBLE scalar) -> float64: one
// fma in double with alpha at full precision (not 0.1 rounded to float).
static void test_add_promotes_and_broadcasts(void) {
    int64_t d23[2] = {2, 3}, d3[1] = {3};
    buf x = test_buf_new(d23, 2, ACL_DOUBLE, NULL, 6), o = test_buf_new(d3, 1, ACL_FLOAT, NULL, 3),
        y = test_buf_new(d23, 2, ACL_DOUBLE, NULL, 6);
    for (int i = 0; i < 6; i++) d(&x)[i] = 1.0 / (i + 3);
    for (int i = 0; i < 3; i++) ((float *)o.data)[i] = 0.3f * (float)(i + 1);
    double a = 0.1;
    aclScalar *alpha = aclCreateScalar(&a, ACL_DOUBLE);
    aclnnStatus st;
    OP_RUN(st, aclnnAddGetWorkspaceSize(x.t, o.t, alpha, y.t, &ws_, &ex_), aclnnAdd);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int i = 0; i < 6; i++) {
        double want = fma(0.1, (double)((float *)o.data)[i % 3], 1.0 / (i + 3));
        CHECKF(d(&y)[i] == want, "element %d: %.17g, want %.17g", i, d(&y)[i], want);
    }
    aclDestroyScalar(alpha);
    test_buf_free(&x), test_buf_free(&o), test_buf_free(&y);
}

// Mul of a transposed float64 view by a broadcast row; Muls by 0.1 in double.
static void test_mul_strided(void) {
    int64_t d34[2] = {3, 4}, tr[2] = {1, 3}, d4[1] = {4};
    buf x = test_buf_new(d34, 2, ACL_DOUBLE, tr, 12), r = test_buf_new(d4, 1, ACL_DOUBLE, NULL, 4),
        y = test_buf_new(d34, 2, ACL_DOUBLE, NULL, 12);
    for (int i = 0; i < 12; i++) d(&x)[i] = sqrt(i + 1.0);
    for (int i = 0; i < 4; i++) d(&r)[i] = cbrt(i + 2.0);
    aclnnStatus st;
    OP_RUN(st, aclnnMulGetWorkspaceSize(x.t, r.t, y.t, &ws_, &ex_), aclnnMul);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) CHECK(d(&y)[i * 4 + j] == d(&x)[j * 3 + i] * d(&r)[j]);
    double tenth = 0.1;
    aclScalar *s = aclCreateScalar(&tenth, ACL_DOUBLE);
    OP_RUN(st, aclnnMulsGetWorkspaceSize(y.t, s, y.t, &ws_, &ex_), aclnnMuls); // in place
    CHECK_EQ(st, ACLNN_SUCCESS);
    CHECK(d(&y)[5] == d(&x)[1 * 3 + 1] * d(&r)[1] * 0.1);
    aclDestroyScalar(s);
    test_buf_free(&x), test_buf_free(&r), test_buf_free(&y);
}

// A float64 result stored into a float16 output is rounded once: 1 + 2^-11 + 2^-40 lies just
// above the tie between 1 and 1 + 2^-10. Through float32 by nearest it would become the tie
// itself (1 + 2^-11) and then round to even, 1.
static void test_single_rounding_into_fp16(void) {
    int64_t d2[1] = {2};
    buf x = test_buf_new(d2, 1, ACL_DOUBLE, NULL, 2), z = test_buf_new(d2, 1, ACL_DOUBLE, NULL, 2),
        y = test_buf_new(d2, 1, ACL_FLOAT16, NULL, 2);
    d(&x)[0] = 1 + 0x1p-11 + 0x1p-40;
    d(&x)[1] = -(1 + 0x1p-11 - 0x1p-40); // just below the tie in magnitude: -1
    double one = 1;
    aclScalar *alpha = aclCreateScalar(&one, ACL_DOUBLE);
    aclnnStatus st;
    OP_RUN(st, aclnnAddGetWorkspaceSize(x.t, z.t, alpha, y.t, &ws_, &ex_), aclnnAdd);
    CHECK_EQ(st, ACLNN_SUCCESS);
    CHECK(test_load(y.data, 0, ACL_FLOAT16) == 1 + 0x1p-10);
    CHECK(test_load(y.data, 1, ACL_FLOAT16) == -1.0);
    aclDestroyScalar(alpha);
    test_buf_free(&x), test_buf_free(&z), test_buf_free(&y);
}

// Mish and its backward in float64 against long double (the forward has no cancellation: a few
// ulps; the backward's terms t and x sigmoid(x) sech^2 cancel near x = -1.19: bounded by the sum
// of their magnitudes). A float32 gradOutput promotes with a float64 self.
static void test_mish_values(void) {
    enum { N = 2001 };
    int64_t dn[1] = {N};
    buf x = test_buf_new(dn, 1, ACL_DOUBLE, NULL, N), y = test_buf_new(dn, 1, ACL_DOUBLE, NULL, N),
        g = test_buf_new(dn, 1, ACL_FLOAT, NULL, N), dx = test_buf_new(dn, 1, ACL_DOUBLE, NULL, N);
    for (int i = 0; i < N; i++) d(&x)[i] = -30 + 0.03 * i + 1e-7, ((float *)g.data)[i] = 0.75f;
    aclnnStatus st;
    OP_RUN(st, aclnnMishGetWorkspaceSize(x.t, y.t, &ws_, &ex_), aclnnMish);
    CHECK_EQ(st, ACLNN_SUCCESS);
    OP_RUN(st, aclnnMishBackwardGetWorkspaceSize(g.t, x.t, dx.t, &ws_, &ex_), aclnnMishBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    double worst_f = 0, worst_b = 0;
    for (int i = 0; i < N; i++) {
        long double v = d(&x)[i], sp = log1pl(expl(v)), t = tanhl(sp), s = 1 / (1 + expl(-v));
        long double f = v * t, t2 = v * s * (1 - t * t);
        double ef = (double)(fabsl(d(&y)[i] - f) / (0x1p-53L * fabsl(f)));
        double eb = (double)(fabsl(d(&dx)[i] - 0.75L * (t + t2)) /
                             (0x1p-53L * 0.75L * (fabsl(t) + fabsl(t2))));
        worst_f = fmax(worst_f, ef), worst_b = fmax(worst_b, eb);
    }
    CHECKF(worst_f <= 4, "mish: %.2f ulps", worst_f);
    CHECKF(worst_b <= 8, "mish backward: %.2f units of 2^-53 (|t| + |x s sech^2|)", worst_b);
    test_buf_free(&x), test_buf_free(&y), test_buf_free(&g), test_buf_free(&dx);
}

// Sum of float64 data: over dim 0 of a [1000, 3] view with keepDims, and over everything, within
// the engine's bound (256 + log2 chunks) 2^-53 S, S the sum of the magnitudes (the data cancel).
static void test_reduce_sum(void) {
    enum { R = 1000 };
    int64_t dims[2] = {R, 3}, kept[2] = {1, 3}, none[1] = {1};
    buf x = test_buf_new(dims, 2, ACL_DOUBLE, NULL, 3 * R),
        y = test_buf_new(kept, 2, ACL_DOUBLE, NULL, 3),
        all = test_buf_new(none, 0, ACL_DOUBLE, NULL, 1),
        f = test_buf_new(kept, 2, ACL_FLOAT, NULL, 3);
    long double want[3] = {0}, mag[3] = {0}, total = 0, total_mag = 0;
    for (int i = 0; i < 3 * R; i++) {
        d(&x)[i] = sin(i) * exp((i % 17) - 8.0);
        want[i % 3] += d(&x)[i], total += d(&x)[i];
        mag[i % 3] += fabs(d(&x)[i]), total_mag += fabs(d(&x)[i]);
    }
    int64_t d0[1] = {0};
    aclIntArray *dim0 = aclCreateIntArray(d0, 1), *every = aclCreateIntArray(d0, 0);
    aclnnStatus st;
    OP_RUN(st, aclnnReduceSumGetWorkspaceSize(x.t, dim0, true, ACL_DOUBLE, y.t, &ws_, &ex_),
           aclnnReduceSum);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int j = 0; j < 3; j++)
        CHECKF(fabsl(d(&y)[j] - want[j]) <= 258 * 0x1p-53L * mag[j],
               "column %d: %.17g, want %.17Lg", j, d(&y)[j], want[j]);
    OP_RUN(st, aclnnReduceSumGetWorkspaceSize(x.t, every, false, ACL_DOUBLE, all.t, &ws_, &ex_),
           aclnnReduceSum);
    CHECK_EQ(st, ACLNN_SUCCESS);
    CHECK(fabsl(d(&all)[0] - total) <= 260 * 0x1p-53L * total_mag);
    // float64 sums into float64 only
    uint64_t ws;
    aclOpExecutor *e;
    CHECK_EQ(aclnnReduceSumGetWorkspaceSize(x.t, dim0, true, ACL_FLOAT, f.t, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("float64");
    aclDestroyIntArray(dim0), aclDestroyIntArray(every);
    test_buf_free(&x), test_buf_free(&y), test_buf_free(&all), test_buf_free(&f);
}

// Matmul of a float32 [3, 4] by a transposed float64 [2, 4, 5] view (batch broadcast): computed in
// float64; then the in-place Addmm with float64 beta and alpha. Against long double sums.
static void test_matmul_and_addmm(void) {
    int64_t d34[2] = {3, 4}, d245[3] = {2, 4, 5}, tr[3] = {20, 1, 4}, d235[3] = {2, 3, 5};
    int64_t d35[2] = {3, 5}, d45[2] = {4, 5};
    buf a = test_buf_new(d34, 2, ACL_FLOAT, NULL, 12),
        b = test_buf_new(d245, 3, ACL_DOUBLE, tr, 40),
        c = test_buf_new(d235, 3, ACL_DOUBLE, NULL, 30),
        acc = test_buf_new(d35, 2, ACL_DOUBLE, NULL, 15),
        m2 = test_buf_new(d45, 2, ACL_DOUBLE, NULL, 20);
    for (int i = 0; i < 12; i++) ((float *)a.data)[i] = 0.1f * (float)(i - 5);
    for (int i = 0; i < 40; i++) d(&b)[i] = 1.0 / (i + 1);
    for (int i = 0; i < 20; i++) d(&m2)[i] = d(&b)[i];
    for (int i = 0; i < 15; i++) d(&acc)[i] = i / 3.0;
    aclnnStatus st;
    OP_RUN(st, aclnnMatmulGetWorkspaceSize(a.t, b.t, c.t, 0, &ws_, &ex_), aclnnMatmul);
    CHECK_EQ(st, ACLNN_SUCCESS);
    double worst = 0;
    for (int bi = 0; bi < 2; bi++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 5; j++) {
                long double want = 0, mag = 0;
                for (int k = 0; k < 4; k++) { // b[bi, k, j] at bi*20 + k + j*4
                    long double t =
                        (long double)((float *)a.data)[i * 4 + k] * d(&b)[bi * 20 + k + j * 4];
                    want += t, mag += fabsl(t);
                }
                worst = fmax(worst, (double)(fabsl(d(&c)[bi * 15 + i * 5 + j] - want) / mag));
            }
    CHECKF(worst <= 4 * 0x1p-53, "matmul: %.3g of the magnitude", worst);
    double beta = 0.1, alpha = -1.0 / 3;
    aclScalar *sb = aclCreateScalar(&beta, ACL_DOUBLE), *sa = aclCreateScalar(&alpha, ACL_DOUBLE);
    double before[15];
    memcpy(before, acc.data, sizeof before);
    OP_RUN(st, aclnnInplaceAddmmGetWorkspaceSize(acc.t, a.t, m2.t, sb, sa, 0, &ws_, &ex_),
           aclnnInplaceAddmm);
    CHECK_EQ(st, ACLNN_SUCCESS);
    worst = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++) {
            long double p = 0, mag = 0;
            for (int k = 0; k < 4; k++) {
                long double t = (long double)((float *)a.data)[i * 4 + k] * d(&m2)[k * 5 + j];
                p += t, mag += fabsl(t);
            }
            long double want = 0.1L * before[i * 5 + j] - p / 3;
            mag = mag / 3 + 0.1L * fabsl((long double)before[i * 5 + j]);
            worst = fmax(worst, (double)(fabsl(d(&acc)[i * 5 + j] - want) / mag));
        }
    CHECKF(worst <= 8 * 0x1p-53, "addmm: %.3g of the magnitude", worst);
    aclDestroyScalar(sb), aclDestroyScalar(sa);
    test_buf_free(&a), test_buf_free(&b), test_buf_free(&c), test_buf_free(&acc),
        test_buf_free(&m2);
}

// A float64 gradient of float32 summands is summed in double: FusedMatmulBackward's gradBias
// (float64, as its bias) of a float32 gradY [4, 1] = {1, 2^-30, 2^-30, 2^-30} is 1 + 3 * 2^-30,
// exact in double, which every order of float32 additions rounds to 1.
static void test_f64_gradient_of_f32_summands(void) {
    int64_t d41[2] = {4, 1}, d42[2] = {4, 2}, d21[2] = {2, 1}, d1[1] = {1};
    buf g = test_buf_new(d41, 2, ACL_FLOAT, NULL, 4),
        x1 = test_buf_new(d42, 2, ACL_DOUBLE, NULL, 8),
        x2 = test_buf_new(d21, 2, ACL_DOUBLE, NULL, 2),
        bias = test_buf_new(d1, 1, ACL_DOUBLE, NULL, 1),
        gb = test_buf_new(d1, 1, ACL_DOUBLE, NULL, 1);
    const float v[4] = {1.0f, 0x1p-30f, 0x1p-30f, 0x1p-30f};
    memcpy(g.data, v, sizeof v);
    aclnnStatus st;
    OP_RUN(st,
           aclnnFusedMatmulBackwardGetWorkspaceSize(g.t, x1.t, x2.t, bias.t, NULL, "", 0, NULL,
                                                    NULL, gb.t, NULL, &ws_, &ex_),
           aclnnFusedMatmulBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    CHECKF(d(&gb)[0] == 1 + 3 * 0x1p-30, "gradBias %.17g, want 1 + 3 * 2^-30", d(&gb)[0]);
    test_buf_free(&g), test_buf_free(&x1), test_buf_free(&x2), test_buf_free(&bias),
        test_buf_free(&gb);
}

// FusedMatmul in float64 (opgrad's extension: ops-nn lists no DOUBLE): "gelu_erf", which upstream
// takes in 16 bits only, computed in double against long double; "16cast32" (a float32 y from
// 16-bit inputs) refuses float64 inputs by name.
static void test_fused_matmul_gelu(void) {
    int64_t d23[2] = {2, 3}, d34[2] = {3, 4}, d24[2] = {2, 4};
    buf a = test_buf_new(d23, 2, ACL_DOUBLE, NULL, 6),
        b = test_buf_new(d34, 2, ACL_DOUBLE, NULL, 12),
        y = test_buf_new(d24, 2, ACL_DOUBLE, NULL, 8),
        y32 = test_buf_new(d24, 2, ACL_FLOAT, NULL, 8);
    for (int i = 0; i < 6; i++) d(&a)[i] = 0.3 * (i - 2.5);
    for (int i = 0; i < 12; i++) d(&b)[i] = 1.0 / (i + 1) - 0.2;
    aclnnStatus st;
    OP_RUN(st,
           aclnnFusedMatmulGetWorkspaceSize(a.t, b.t, NULL, NULL, "gelu_erf", 0, y.t, &ws_, &ex_),
           aclnnFusedMatmul);
    CHECK_EQ(st, ACLNN_SUCCESS);
    double worst = 0;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++) {
            long double z = 0, mag = 0;
            for (int k = 0; k < 3; k++) {
                long double t = (long double)d(&a)[i * 3 + k] * d(&b)[k * 4 + j];
                z += t, mag += fabsl(t);
            }
            long double want = z / 2 * (1 + erfl(z / sqrtl(2)));
            worst = fmax(worst, (double)(fabsl(d(&y)[i * 4 + j] - want) / (mag + fabsl(want))));
        }
    CHECKF(worst <= 8 * 0x1p-53, "gelu_erf(a @ b): %.3g of the magnitude", worst);
    uint64_t ws;
    aclOpExecutor *e;
    CHECK_EQ(aclnnFusedMatmulGetWorkspaceSize(a.t, b.t, NULL, NULL, "16cast32", 0, y32.t, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("16cast32");
    test_buf_free(&a), test_buf_free(&b), test_buf_free(&y), test_buf_free(&y32);
}

// A float64 sum over an empty dim of a tensor without data (NULL: nothing to read) writes +0
// and never forms an address from the NULL base (UBSan: CI's fuzzer found the float64 path did).
static void test_reduce_sum_over_nothing(void) {
    int64_t dims[2] = {0, 3}, strides[2] = {3, 1}, storage = 0, out_dims[1] = {3}, d0[1] = {0};
    aclTensor *x =
        aclCreateTensor(dims, 2, ACL_DOUBLE, strides, 0, ACL_FORMAT_ND, &storage, 1, NULL);
    buf y = test_buf_new(out_dims, 1, ACL_DOUBLE, NULL, 3);
    for (int j = 0; j < 3; j++) d(&y)[j] = 7.0;
    aclIntArray *dim0 = aclCreateIntArray(d0, 1);
    aclnnStatus st;
    OP_RUN(st, aclnnReduceSumGetWorkspaceSize(x, dim0, false, ACL_DOUBLE, y.t, &ws_, &ex_),
           aclnnReduceSum);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int j = 0; j < 3; j++) CHECK(d(&y)[j] == 0.0 && !signbit(d(&y)[j]));
    aclDestroyIntArray(dim0);
    aclDestroyTensor(x);
    test_buf_free(&y);
}

// In-place on a float64 tensor; an operator without float64 kernels refuses it by name.
static void test_inplace_and_refusal(void) {
    int64_t d4[1] = {4};
    buf x = test_buf_new(d4, 1, ACL_DOUBLE, NULL, 4), y = test_buf_new(d4, 1, ACL_DOUBLE, NULL, 4);
    for (int i = 0; i < 4; i++) d(&x)[i] = i - 40.0; // sigmoid(-40) = 4.2e-18: no float underflow
    aclnnStatus st;
    OP_RUN(st, aclnnInplaceSigmoidGetWorkspaceSize(x.t, &ws_, &ex_), aclnnInplaceSigmoid);
    CHECK_EQ(st, ACLNN_SUCCESS);
    CHECK(fabs(d(&x)[0] - 4.248354255291589e-18) <= 1e-31);
    uint64_t ws;
    aclOpExecutor *e;
    buf res = test_buf_new(d4, 1, ACL_DOUBLE, NULL, 4);
    CHECK_EQ(aclnnGradCompressCastGetWorkspaceSize(x.t, res.t, false, 1, 0, y.t, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("x has dtype float64");
    test_buf_free(&res);
    test_buf_free(&x), test_buf_free(&y);
}

// Dropout of a float64 input: the mask is the float32 draw's (a function of seed, offset and
// element only), kept elements are x * (1 / (1 - p)) in double (not by a float32 scale), and the
// backward multiplies by the double scale it is given; a strided float64 input too.
static void test_dropout(void) {
    enum { N = 300 };
    int64_t dn[1] = {N}, dm[1] = {(N + 127) / 128 * 16};
    buf x = test_buf_new(dn, 1, ACL_DOUBLE, NULL, N), y = test_buf_new(dn, 1, ACL_DOUBLE, NULL, N);
    buf x32 = test_buf_new(dn, 1, ACL_FLOAT, NULL, N),
        y32 = test_buf_new(dn, 1, ACL_FLOAT, NULL, N);
    buf m = test_buf_new(dm, 1, ACL_UINT8, NULL, dm[0]),
        m32 = test_buf_new(dm, 1, ACL_UINT8, NULL, dm[0]);
    for (int i = 0; i < N; i++) d(&x)[i] = 1.0 + i / 7.0, ((float *)x32.data)[i] = 1.0f;
    const double p = 0.3, scale = 1.0 / (1.0 - p);
    aclnnStatus st;
    OP_RUN(st, aclnnDropoutGetWorkspaceSize(x.t, p, true, 9, 2, y.t, m.t, &ws_, &ex_),
           aclnnDropout);
    CHECK_EQ(st, ACLNN_SUCCESS);
    OP_RUN(st, aclnnDropoutGetWorkspaceSize(x32.t, p, true, 9, 2, y32.t, m32.t, &ws_, &ex_),
           aclnnDropout);
    CHECK_EQ(st, ACLNN_SUCCESS);
    CHECK(memcmp(m.data, m32.data, (size_t)dm[0]) == 0);
    int kept = 0, bad = 0;
    for (int i = 0; i < N; i++) {
        bool keep = (((uint8_t *)m.data)[i / 8] >> (i % 8)) & 1;
        kept += keep;
        bad += d(&y)[i] != (keep ? d(&x)[i] * scale : 0.0);
    }
    CHECK_EQ(bad, 0);
    CHECK(kept > N / 2 && kept < N - N / 8);
    // the backward: dx = dy * scale where kept, into a strided float64 output (every other one)
    buf dx = test_buf_new(dn, 1, ACL_DOUBLE, (const int64_t[]){2}, 2 * N);
    OP_RUN(st, aclnnDropoutBackwardGetWorkspaceSize(x.t, m.t, scale, dx.t, &ws_, &ex_),
           aclnnDropoutBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    bad = 0;
    for (int i = 0; i < N; i++) bad += d(&dx)[2 * i] != d(&y)[i];
    CHECK_EQ(bad, 0);
    test_buf_free(&x), test_buf_free(&y), test_buf_free(&x32), test_buf_free(&y32),
        test_buf_free(&m), test_buf_free(&m32), test_buf_free(&dx);
}

// EmbeddingDenseBackward of a float64 gradient sums in double: 1 + 2^-40 added 3 times to one
// row stays exact (a float32 sum would lose the 2^-40), and scaleGradByFreq divides in double.
static void test_embedding_dense_backward(void) {
    int64_t dg[2] = {4, 2}, di[1] = {4}, dw[2] = {3, 2};
    buf g = test_buf_new(dg, 2, ACL_DOUBLE, NULL, 8), w = test_buf_new(dw, 2, ACL_DOUBLE, NULL, 6);
    buf idx = test_buf_new(di, 1, ACL_INT64, NULL, 4);
    const int64_t rows[4] = {2, 0, 2, 2};
    memcpy(idx.data, rows, sizeof rows);
    for (int i = 0; i < 8; i++) d(&g)[i] = 1.0 + ldexp(1.0, -40) * (i + 1);
    for (int freq = 0; freq < 2; freq++) {
        aclnnStatus st;
        OP_RUN(st,
               aclnnEmbeddingDenseBackwardGetWorkspaceSize(g.t, idx.t, 3, (uint64_t)-1, freq != 0,
                                                           w.t, &ws_, &ex_),
               aclnnEmbeddingDenseBackward);
        CHECK_EQ(st, ACLNN_SUCCESS);
        for (int c = 0; c < 2; c++) {
            double sum2 = d(&g)[c] + d(&g)[4 + c] + d(&g)[6 + c]; // exact: 3 + 2^-40 (12 + 3c)
            CHECK_EQ(sum2, 3.0 + ldexp(1.0, -40) * (12 + 3 * c));
            CHECK_EQ(d(&w)[4 + c], freq ? sum2 / 3 : sum2);
            CHECK_EQ(d(&w)[c], d(&g)[2 + c]);
            CHECK_EQ(d(&w)[2 + c], 0.0);
        }
    }
    test_buf_free(&g), test_buf_free(&w), test_buf_free(&idx);
}

int main(void) {
    RUN(test_add_promotes_and_broadcasts);
    RUN(test_mul_strided);
    RUN(test_single_rounding_into_fp16);
    RUN(test_mish_values);
    RUN(test_reduce_sum);
    RUN(test_reduce_sum_over_nothing);
    RUN(test_f64_gradient_of_f32_summands);
    RUN(test_fused_matmul_gelu);
    RUN(test_matmul_and_addmm);
    RUN(test_inplace_and_refusal);
    RUN(test_dropout);
    RUN(test_embedding_dense_backward);
    return test_summary();
}
