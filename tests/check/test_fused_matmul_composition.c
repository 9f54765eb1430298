/* The fused backward equals the composition of the unfused operators.
 *
 * aclnnFusedMatmulBackward forms dZ = dL/dz in the epilogue of the product that
 * recomputes z = x1 @ x2 + bias, and sums the gradients of broadcast operands
 * in its own way (a product over the folded batch, or a temporary and a REDUCE
 * step). This test computes the same gradients the way a framework composes
 * them from public unfused operators and requires the two to agree within the
 * fp32 bound of the operators (compare.h):
 *
 *   z      = aclnnMatmul(x1, x2) into fp32 (the unrounded accumulator), + bias
 * (aclnnInplaceAdd) dZ     = aclnnThresholdBackward(gradY, z, 0) relu
 *            aclnnGeluBackwardV2(gradY, z, "none" / "tanh")  gelu_erf /
 * gelu_tanh aclnnMul(gradY, x3)                             mul gradY "", add,
 * 16cast32 gradX1 = aclnnMatmul(dZ, x2^T view), gradX2 = aclnnMatmul(x1^T view,
 * dZ), in fp32, summed to the operand's shape by aclnnReduceSum (fp32) and
 * rounded once by aclnnMuls(1) gradBias = aclnnReduceSum(dZ) over every dim but
 * the last; gradX3 = gradY (add) or aclnnMul(gradY, z) (mul), summed to x3's
 * shape
 *
 * for every fusedOpType, every dtype it takes (FLOAT with cubeMathType 3 as
 * upstream requires, FLOAT16, BFLOAT16 with 0), several shapes (plain, a Linear
 * layer's shared x2, a shared x1, a batch of 4 x 3 with broadcasts on both
 * sides, a transposed x1 view) and every ISA level of the CPU. Bound per
 * element: both sides are the same sums in fp32 in other orders, so they differ
 * by at most 2 b, b = 4 (ulp_f32(v) + 2^-24 sqrt(terms) mag) with mag the sum
 * of |terms| (for the gelus |gradY| 0.8 sqrt(K) |z|-magnitude more per dZ:
 * act'(z) at an fp32 z), plus one spacing of a 16-bit result (each side is
 * rounded once). A mismatch prints the gradient, element, values and bound. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_fused_matmul_backward.h"
#include "aclnnop/aclnn_gelu_backward_v2.h"
#include "aclnnop/aclnn_matmul.h"
#include "aclnnop/aclnn_mul.h"
#include "aclnnop/aclnn_reduce_sum.h"
#include "aclnnop/aclnn_threshold_backward.h"
#include "opgrad/opgrad.h"
#include "test.h"
#include "testutil.h"

enum { F_NONE, F_RELU, F_GELU_ERF, F_GELU_TANH, F_ADD, F_MUL, F_16CAST32, NTYPES };
static const char *const type_names[NTYPES] = {"",    "relu", "gelu_erf", "gelu_tanh",
                                               "add", "mul",  "16cast32"};

// A dense tensor that owns its buffer.
typedef struct dense {
    int nd;
    int64_t dims[8];
    int64_t n;
    aclDataType dt;
    void *data;
    aclTensor *t;
} dense;

static dense dense_new(int nd, const int64_t *dims, aclDataType dt) {
    dense d = {.nd = nd, .dt = dt, .n = 1};
    for (int i = 0; i < nd; i++) d.dims[i] = dims[i], d.n *= dims[i];
    d.data = calloc((size_t)d.n + 16, 4);
    d.t = test_tensor(d.dims, nd, dt, d.data);
    return d;
}

static void dense_free(dense *d) {
    if (d->t) aclDestroyTensor(d->t);
    free(d->data);
    memset(d, 0, sizeof *d);
}

static double at(const dense *d, int64_t i) { return test_load(d->data, i, d->dt); }

// d viewed with another shape (same elements, contiguous).
static aclTensor *reshape(const dense *d, int nd, const int64_t *dims) {
    return test_tensor(dims, nd, d->dt, d->data);
}

// d with its last two dims swapped (a transposed view: strides swapped, no
// copy).
static aclTensor *transposed(const dense *d) {
    int64_t dims[8], st[8], acc = 1;
    for (int i = d->nd - 1; i >= 0; i--) st[i] = acc, acc *= d->dims[i];
    for (int i = 0; i < d->nd; i++) dims[i] = d->dims[i];
    int a = d->nd - 2, b = d->nd - 1;
    int64_t t = dims[a];
    dims[a] = dims[b], dims[b] = t;
    t = st[a], st[a] = st[b], st[b] = t;
    return aclCreateTensor(dims, (uint64_t)d->nd, d->dt, st, 0, ACL_FORMAT_ND, &d->n, 1, d->data);
}

#define RUN_OP(phase1, phase2)                                                                     \
    do {                                                                                           \
        aclnnStatus st_;                                                                           \
        OP_RUN(st_, phase1, phase2);                                                               \
        if (st_ != ACLNN_SUCCESS) ok = false;                                                      \
    } while (0)

// dst (dims of `to`) = src (fp32) summed over the dims `to` broadcasts along,
// rounded once to dst's dtype: aclnnReduceSum (fp32, keepDims) then
// aclnnMuls(1).
static bool sum_to(const dense *src, dense *dst, int to_nd, const int64_t *to) {
    bool ok = true;
    int64_t dims[8], keep[8];
    int nr = 0;
    for (int d = 0; d < src->nd; d++) {
        int td = to_nd - src->nd + d;
        bool summed = td < 0 || (to[td] == 1 && src->dims[d] != 1);
        if (summed) dims[nr++] = d;
        keep[d] = summed ? 1 : src->dims[d];
    }
    float one = 1;
    aclScalar *s1 = aclCreateScalar(&one, ACL_FLOAT);
    aclTensor *out = reshape(dst, src->nd, keep);
    if (nr == 0) {
        RUN_OP(aclnnMulsGetWorkspaceSize(src->t, s1, out, &ws_, &ex_), aclnnMuls);
    } else {
        dense sum = dense_new(src->nd, keep, ACL_FLOAT);
        aclIntArray *a = aclCreateIntArray(dims, (uint64_t)nr);
        RUN_OP(aclnnReduceSumGetWorkspaceSize(src->t, a, true, ACL_FLOAT, sum.t, &ws_, &ex_),
               aclnnReduceSum);
        RUN_OP(aclnnMulsGetWorkspaceSize(sum.t, s1, out, &ws_, &ex_), aclnnMuls);
        aclDestroyIntArray(a);
        dense_free(&sum);
    }
    aclDestroyTensor(out);
    aclDestroyScalar(s1);
    return ok;
}

typedef struct shape_case {
    const char *name;
    int n1;
    int64_t x1[4];
    int n2;
    int64_t x2[4];
    int n3;
    int64_t x3[4]; // x3 (add / mul): y's last two dims, or y's shape
    bool x1_transposed;
} shape_case;

static const shape_case shapes[] = {
    {"plain", 2, {5, 7}, 2, {7, 6}, 2, {5, 6}, false},
    {"linear", 3, {3, 5, 7}, 2, {7, 6}, 2, {5, 6}, false},                // x2 shared: folded
    {"x1-shared", 2, {9, 13}, 3, {3, 13, 11}, 3, {3, 9, 11}, false},      // gradX1
                                                                          // summed
    {"batch", 4, {4, 1, 9, 13}, 3, {3, 13, 11}, 4, {4, 3, 9, 11}, false}, // both broadcast
    {"transposed", 3, {2, 37, 71}, 2, {71, 53}, 2, {37, 53}, true},       // x1 a view
};

// The spacing of a 16-bit dtype's values at v (0 for FLOAT: an fp32 result is
// not rounded again).
static double spacing16(aclDataType dt, double v) {
    if (dt == ACL_FLOAT) return 0;
    int e;
    frexp(v, &e); // v = f 2^e, f in [0.5, 1)
    e -= 1;
    int emin = dt == ACL_FLOAT16 ? -14 : -126, mant = dt == ACL_FLOAT16 ? 10 : 7;
    return ldexp(1.0, (e < emin ? emin : e) - mant);
}

// The element-by-element comparison of one gradient; mag: the magnitude bound
// per element, terms: values summed into one element.
static bool agree(const char *what, const char *ctx, const dense *fused, const dense *comp,
                  const double *mag, int64_t terms) {
    int64_t bad = 0, equal = 0;
    double worst = 0;
    for (int64_t i = 0; i < fused->n; i++) {
        double f = at(fused, i), c = at(comp, i);
        if (f == c) {
            equal++;
            continue;
        }
        double b = 4 * (test_ulp32(c) + 0x1p-24 * sqrt((double)(terms > 1 ? terms : 1)) * mag[i]);
        double tol = 2 * b + spacing16(fused->dt, fabs(c) + 2 * b);
        worst = fmax(worst, fabs(f - c) / tol);
        if (!(fabs(f - c) <= tol)) {
            if (bad < 5)
                fprintf(stderr,
                        "    MISMATCH %s %s element %lld: fused %.9g, composed %.9g, "
                        "|diff| %.3g > "
                        "bound %.3g\n",
                        ctx, what, (long long)i, f, c, fabs(f - c), tol);
            bad++;
        }
    }
    CHECKF(bad == 0,
           "%s %s: the fused gradient differs from the composition at %lld of %lld "
           "elements",
           ctx, what, (long long)bad, (long long)fused->n);
    if (getenv("OPGRAD_TEST_VERBOSE"))
        printf("    %-40s %-8s %lld of %lld bitwise equal, worst %.3g of the bound\n", ctx, what,
               (long long)equal, (long long)fused->n, worst);
    return bad == 0;
}

static double rand_in(test_rng *r, aclDataType dt) {
    return test_round_to(dt, test_rng_uniform(r, -2, 2));
}

static void fill(dense *d, test_rng *r) {
    for (int64_t i = 0; i < d->n; i++) test_store(d->data, i, d->dt, rand_in(r, d->dt));
}

// One (type, dtype, shape) case at the ISA level in effect.
static void one_case(int type, aclDataType dt, const shape_case *sc, test_rng *r) {
    char ctx[160];
    snprintf(ctx, sizeof ctx, "%s/%s/%s/%s", type_names[type][0] ? type_names[type] : "\"\"",
             dt == ACL_FLOAT     ? "fp32"
             : dt == ACL_FLOAT16 ? "fp16"
                                 : "bf16",
             sc->name, opgrad_isa_name(opgrad_active_isa()));
    bool ok = true, gelu = type == F_GELU_ERF || type == F_GELU_TANH;
    bool has_bias = !gelu, has_x3 = type == F_ADD || type == F_MUL;
    int8_t cube = dt == ACL_FLOAT ? 3 : 0;
    aclDataType ydt = type == F_16CAST32 ? ACL_FLOAT : dt;
    // shapes: y = batch + [M, N]
    int64_t M = sc->x1[sc->n1 - 2], K = sc->x1[sc->n1 - 1], N = sc->x2[sc->n2 - 1];
    int nb = (sc->n1 > sc->n2 ? sc->n1 : sc->n2) - 2, ynd = nb + 2;
    int64_t ydims[8];
    for (int d = 0; d < nb; d++) {
        int d1 = d - (nb - (sc->n1 - 2)), d2 = d - (nb - (sc->n2 - 2));
        int64_t s1 = d1 >= 0 ? sc->x1[d1] : 1, s2 = d2 >= 0 ? sc->x2[d2] : 1;
        ydims[d] = s1 > s2 ? s1 : s2;
    }
    ydims[nb] = M, ydims[nb + 1] = N;
    // x1 is stored transposed for the transposed case (the tensor is a view of
    // it)
    int64_t x1store[4];
    memcpy(x1store, sc->x1, sizeof x1store);
    if (sc->x1_transposed) x1store[sc->n1 - 2] = K, x1store[sc->n1 - 1] = M;
    dense x1s = dense_new(sc->n1, x1store, dt), x2 = dense_new(sc->n2, sc->x2, dt);
    dense bias = {0}, x3 = {0}, gy = dense_new(ynd, ydims, ydt);
    fill(&x1s, r), fill(&x2, r), fill(&gy, r);
    aclTensor *x1 = sc->x1_transposed ? transposed(&x1s) : x1s.t;
    if (has_bias) bias = dense_new(1, &N, dt), fill(&bias, r);
    if (has_x3) x3 = dense_new(sc->n3, sc->x3, dt), fill(&x3, r);
    // the fused backward
    dense gx1 = dense_new(sc->n1, sc->x1, dt), gx2 = dense_new(sc->n2, sc->x2, dt);
    dense gb = has_bias ? dense_new(1, &N, dt) : (dense){0};
    dense g3 = has_x3 ? dense_new(sc->n3, sc->x3, dt) : (dense){0};
    RUN_OP(aclnnFusedMatmulBackwardGetWorkspaceSize(gy.t, x1, x2.t, bias.t, x3.t, type_names[type],
                                                    cube, gx1.t, gx2.t, gb.t, g3.t, &ws_, &ex_),
           aclnnFusedMatmulBackward);
    // the composition
    dense z = dense_new(ynd, ydims, ACL_FLOAT), gy32 = dense_new(ynd, ydims, ACL_FLOAT);
    dense dz = dense_new(ynd, ydims, ACL_FLOAT);
    float one = 1, zero = 0;
    aclScalar *s1 = aclCreateScalar(&one, ACL_FLOAT), *s0 = aclCreateScalar(&zero, ACL_FLOAT);
    RUN_OP(aclnnMatmulGetWorkspaceSize(x1, x2.t, z.t, cube, &ws_, &ex_), aclnnMatmul);
    if (has_bias)
        RUN_OP(aclnnInplaceAddGetWorkspaceSize(z.t, bias.t, s1, &ws_, &ex_), aclnnInplaceAdd);
    RUN_OP(aclnnMulsGetWorkspaceSize(gy.t, s1, gy32.t, &ws_, &ex_), aclnnMuls);
    if (type == F_RELU) {
        RUN_OP(aclnnThresholdBackwardGetWorkspaceSize(gy32.t, z.t, s0, dz.t, &ws_, &ex_),
               aclnnThresholdBackward);
    } else if (gelu) {
        char *approx = type == F_GELU_ERF ? "none" : "tanh";
        RUN_OP(aclnnGeluBackwardV2GetWorkspaceSize(gy32.t, z.t, approx, dz.t, &ws_, &ex_),
               aclnnGeluBackwardV2);
    } else if (type == F_MUL) {
        RUN_OP(aclnnMulGetWorkspaceSize(gy32.t, x3.t, dz.t, &ws_, &ex_), aclnnMul);
    } else {
        RUN_OP(aclnnMulsGetWorkspaceSize(gy32.t, s1, dz.t, &ws_, &ex_), aclnnMuls);
    }
    int64_t f1[8], f2[8];
    memcpy(f1, ydims, sizeof f1), memcpy(f2, ydims, sizeof f2);
    f1[nb + 1] = K;
    f2[nb] = K;
    dense p1 = dense_new(ynd, f1, ACL_FLOAT), p2 = dense_new(ynd, f2, ACL_FLOAT);
    aclTensor *x2t = transposed(&x2), *x1t;
    if (sc->x1_transposed) { // the transpose of a transposed view: the stored
                             // matrix itself
        x1t = x1s.t;
    } else {
        x1t = transposed(&x1s);
    }
    RUN_OP(aclnnMatmulGetWorkspaceSize(dz.t, x2t, p1.t, cube, &ws_, &ex_), aclnnMatmul);
    RUN_OP(aclnnMatmulGetWorkspaceSize(x1t, dz.t, p2.t, cube, &ws_, &ex_), aclnnMatmul);
    dense cx1 = dense_new(sc->n1, sc->x1, dt), cx2 = dense_new(sc->n2, sc->x2, dt);
    ok &= sum_to(&p1, &cx1, sc->n1, sc->x1);
    ok &= sum_to(&p2, &cx2, sc->n2, sc->x2);
    dense cb = {0}, c3 = {0}, t3 = {0};
    if (has_bias) cb = dense_new(1, &N, dt), ok &= sum_to(&dz, &cb, 1, &N);
    if (has_x3) {
        c3 = dense_new(sc->n3, sc->x3, dt);
        t3 = dense_new(ynd, ydims, ACL_FLOAT);
        if (type == F_MUL)
            RUN_OP(aclnnMulGetWorkspaceSize(gy32.t, z.t, t3.t, &ws_, &ex_), aclnnMul);
        else
            RUN_OP(aclnnMulsGetWorkspaceSize(gy32.t, s1, t3.t, &ws_, &ex_), aclnnMuls);
        ok &= sum_to(&t3, &c3, sc->n3, sc->x3);
    }
    CHECKF(ok, "%s: an operator failed", ctx);
    if (ok) {
        // magnitudes in double from the composition's own values: |z| terms, then
        // |dZ| with the gelus' sensitivity to an fp32 z
        int64_t ny = gy.n, nbatch = ny / (M * N);
        double *zmag = calloc((size_t)ny + 1, 8), *dzm = calloc((size_t)ny + 1, 8);
        // element (b, m, k) of x1 and (b, k, n) of x2 by broadcast over y's batch
        int64_t b1 = 1, b2 = 1;
        for (int d = 0; d < sc->n1 - 2; d++) b1 *= sc->x1[d];
        for (int d = 0; d < sc->n2 - 2; d++) b2 *= sc->x2[d];
        double *X1 = malloc(sizeof(double) * (size_t)(b1 * M * K + 1));
        for (int64_t i = 0; i < b1 * M * K; i++) { // row-major over x1's logical shape
            int64_t bb = i / (M * K), m = i / K % M, k = i % K;
            X1[i] = sc->x1_transposed ? at(&x1s, bb * M * K + k * M + m) : at(&x1s, i);
        }
        // batch index of y -> batch index of x1 / x2 (right-aligned broadcast)
        int64_t *i1 = malloc(sizeof(int64_t) * (size_t)nbatch),
                *i2 = malloc(sizeof(int64_t) * (size_t)nbatch);
        for (int64_t bi = 0; bi < nbatch; bi++) {
            int64_t rem = bi, o1 = 0, o2 = 0, m1 = 1, m2 = 1;
            for (int d = nb - 1; d >= 0; d--) {
                int64_t idx = rem % ydims[d];
                rem /= ydims[d];
                int d1 = d - (nb - (sc->n1 - 2)), d2 = d - (nb - (sc->n2 - 2));
                if (d1 >= 0) o1 += (sc->x1[d1] == 1 ? 0 : idx) * m1, m1 *= sc->x1[d1];
                if (d2 >= 0) o2 += (sc->x2[d2] == 1 ? 0 : idx) * m2, m2 *= sc->x2[d2];
            }
            i1[bi] = o1, i2[bi] = o2;
        }
        double sk = sqrt((double)K);
        for (int64_t bi = 0; bi < nbatch; bi++)
            for (int64_t m = 0; m < M; m++)
                for (int64_t n = 0; n < N; n++) {
                    double s = has_bias ? fabs(at(&bias, n)) : 0;
                    for (int64_t k = 0; k < K; k++)
                        s += fabs(X1[(i1[bi] * M + m) * K + k]) *
                             fabs(at(&x2, (i2[bi] * K + k) * N + n));
                    int64_t i = (bi * M + m) * N + n;
                    zmag[i] = s;
                    dzm[i] = fabs(at(&dz, i)) + (gelu ? fabs(at(&gy32, i)) * 0.8 * sk * s : 0);
                }
        // gradX1 magnitude: sum over y's batches mapping to it and n of dzm |x2|
        double *m1 = calloc((size_t)gx1.n + 1, 8), *m2 = calloc((size_t)gx2.n + 1, 8);
        for (int64_t bi = 0; bi < nbatch; bi++)
            for (int64_t m = 0; m < M; m++)
                for (int64_t k = 0; k < K; k++)
                    for (int64_t n = 0; n < N; n++) {
                        double d = dzm[(bi * M + m) * N + n];
                        m1[(i1[bi] * M + m) * K + k] += d * fabs(at(&x2, (i2[bi] * K + k) * N + n));
                        m2[(i2[bi] * K + k) * N + n] += d * fabs(X1[(i1[bi] * M + m) * K + k]);
                    }
        agree("gradX1", ctx, &gx1, &cx1, m1, N * (nbatch / b1));
        agree("gradX2", ctx, &gx2, &cx2, m2, M * (nbatch / b2));
        if (has_bias) {
            double *mb = calloc((size_t)N + 1, 8);
            for (int64_t i = 0; i < ny; i++) mb[i % N] += dzm[i];
            agree("gradBias", ctx, &gb, &cb, mb, ny / N);
            free(mb);
        }
        if (has_x3) {
            double *m3 = calloc((size_t)g3.n + 1, 8);
            for (int64_t i = 0; i < ny; i++)
                m3[i % g3.n] += fabs(at(&gy32, i)) * (type == F_MUL ? sk * zmag[i] : 1);
            agree("gradX3", ctx, &g3, &c3, m3, ny / g3.n);
            free(m3);
        }
        free(m1), free(m2), free(zmag), free(dzm), free(X1), free(i1), free(i2);
    }
    aclDestroyScalar(s1), aclDestroyScalar(s0);
    aclDestroyTensor(x2t);
    if (!sc->x1_transposed) aclDestroyTensor(x1t);
    if (sc->x1_transposed) aclDestroyTensor(x1);
    dense *all[] = {&x1s,  &x2, &bias, &x3, &gy,  &gx1, &gx2, &gb, &g3, &z,
                    &gy32, &dz, &p1,   &p2, &cx1, &cx2, &cb,  &c3, &t3};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (all[i]->data) dense_free(all[i]);
}

static void test_fused_backward_is_the_composition(void) {
    opgrad_isa top = opgrad_active_isa();
    test_rng r;
    test_rng_seed(&r, 20261202);
    int cases = 0;
    for (int isa = OPGRAD_ISA_SCALAR; isa <= (int)top; isa++) {
        if (!test_isa_available(isa)) continue;
        opgrad_set_max_isa((opgrad_isa)isa);
        for (int type = 0; type < NTYPES; type++) {
            static const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
            for (int d = 0; d < 3; d++) {
                bool fp32_ok = type == F_NONE || type == F_RELU || type == F_ADD || type == F_MUL;
                if (dts[d] == ACL_FLOAT && !fp32_ok) continue; // upstream: 16-bit inputs only
                for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++, cases++)
                    one_case(type, dts[d], &shapes[s], &r);
            }
        }
    }
    opgrad_set_max_isa(top);
    printf("    %d cases: every fusedOpType, dtype, shape and ISA level\n", cases);
}

int main(void) {
    RUN(test_fused_backward_is_the_composition);
    return test_summary();
}
