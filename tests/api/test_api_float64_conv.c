/* float64 convolution through the aclnn API (aclnnConvolution, aclnnConvolutionBackward; the
 * GEMM engine's float64 loop, docs/ops/conv.md). What the checker's float64 rows do not see:
 *  - exact results on geometries whose fp32 / 16-bit products take another algorithm (Winograd,
 *    the direct depthwise kernel, col2im at stride 2, the per-image 1x1 weight product, images
 *    folded): inputs 1 + a 2^-40 with small integer weights and gradients make every product and
 *    sum exact in double (and far from exact in fp32), so each result must equal an integer
 *    reference bit for bit; the executors name a GEMM algorithm;
 *  - a channels-last float64 input equal to the contiguous result bit for bit;
 *  - promotion: a float32 input with a float64 weight computes in float64, rounded once into a
 *    float32 output; cubeMathType 2 changes nothing in float64;
 *  - float32 operands into float64 outputs: the fp32 algorithms' results, widened exactly;
 *  - gradBias of a float32 gradOutput with float64 input and weight sums in double (values that
 *    cancel 2^24 against 1 would lose the ones in fp32);
 *  - the refusal of a float64 bias with float32 operands, naming bias. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_convolution.h"
#include "aclnnop/aclnn_convolution_backward.h"
#include "opgrad/opgrad.h"
#include "test.h"
#include "testutil.h"

// A 2-D convolution (spatial dims h, w) and its attributes.
typedef struct geo {
    bool transposed;
    int64_t N, cin, cout, G, H, W, kh, kw, s, p, d, op;
} geo;

static int64_t out_size(const geo *g, int64_t in, int64_t k) {
    return g->transposed ? (in - 1) * g->s - 2 * g->p + g->d * (k - 1) + g->op + 1
                         : (in + 2 * g->p - g->d * (k - 1) - 1) / g->s + 1;
}

// Exact sums in units of 2^-40: x_i = X[i] 2^-40, w, gy integers (dy = DY 2^-40 for gradInput).
// f(xi, wi, yi) for every term x[xi] w[wi] of y[yi] (the forward's gather; the transposed
// convolution's scatter), as in the checker's reference.
typedef void (*term_fn)(void *ctx, int64_t xi, int64_t wi, int64_t yi);

static void each_term(const geo *g, term_fn f, void *ctx) {
    const int64_t OH = out_size(g, g->H, g->kh), OW = out_size(g, g->W, g->kw);
    const int64_t cig = g->cin / g->G, cog = g->cout / g->G;
    // walk: the positions whose taps are summed (out-space forward, in-space transposed)
    const int64_t WH = g->transposed ? g->H : OH, WW = g->transposed ? g->W : OW;
    const int64_t HH = g->transposed ? OH : g->H, HW = g->transposed ? OW : g->W;
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t gr = 0; gr < g->G; gr++)
            for (int64_t ci = 0; ci < cig; ci++)
                for (int64_t co = 0; co < cog; co++)
                    for (int64_t a = 0; a < g->kh; a++)
                        for (int64_t b = 0; b < g->kw; b++) {
                            int64_t cx = gr * cig + ci, cy = gr * cog + co;
                            int64_t wi = g->transposed ? ((cx * cog + co) * g->kh + a) * g->kw + b
                                                       : ((cy * cig + ci) * g->kh + a) * g->kw + b;
                            for (int64_t u = 0; u < WH; u++)
                                for (int64_t v = 0; v < WW; v++) {
                                    int64_t pu = u * g->s - g->p + a * g->d;
                                    int64_t pv = v * g->s - g->p + b * g->d;
                                    if (pu < 0 || pu >= HH || pv < 0 || pv >= HW) continue;
                                    int64_t walk = (u * WW + v), hit = (pu * HW + pv);
                                    int64_t xpos = g->transposed ? walk : hit;
                                    int64_t ypos = g->transposed ? hit : walk;
                                    f(ctx, (n * g->cin + cx) * g->H * g->W + xpos, wi,
                                      (n * g->cout + cy) * OH * OW + ypos);
                                }
                        }
}

typedef struct sums {
    const int64_t *x, *w, *gy, *dy;
    int64_t *y, *gw, *dx;
} sums;

// y and gradWeight (of gy); gradInput of dy
static void term(void *p, int64_t xi, int64_t wi, int64_t yi) {
    sums *s = p;
    s->y[yi] += s->x[xi] * s->w[wi];
    s->gw[wi] += s->gy[yi] * s->x[xi];
    s->dx[xi] += s->dy[yi] * s->w[wi];
}

static aclIntArray *arr2(int64_t v) { return aclCreateIntArray((int64_t[]){v, v}, 2); }

static bool gemm_named(const aclOpExecutor *ex) {
    const char *a = opgrad_executor_algorithm(ex);
    bool ok = strstr(a, "GEMM") && !strstr(a, "col2im") && !strstr(a, "winograd") &&
              !strstr(a, "depthwise");
    if (!ok) fprintf(stderr, "    algorithm: %s\n", a);
    return ok;
}

// The forward (with bias), the backward's gradWeight and gradBias, and gradInput on its own
// (another gradOutput), against the exact sums; x_strides: the input's strides (NULL:
// contiguous).
static void check_exact(const geo *g, const int64_t *x_strides) {
    const int64_t OH = out_size(g, g->H, g->kh), OW = out_size(g, g->W, g->kw);
    const int64_t nx = g->N * g->cin * g->H * g->W, ny = g->N * g->cout * OH * OW;
    const int64_t w0 = g->transposed ? g->cin : g->cout,
                  w1 = g->transposed ? g->cout / g->G : g->cin / g->G;
    const int64_t nw = w0 * w1 * g->kh * g->kw;
    int64_t *xi = calloc((size_t)nx, 8), *wi = calloc((size_t)nw, 8), *gi = calloc((size_t)ny, 8);
    int64_t *dyi = calloc((size_t)ny, 8), *yi = calloc((size_t)ny, 8);
    int64_t *gwi = calloc((size_t)nw, 8), *dxi = calloc((size_t)nx, 8);
    const double u = 0x1p-40;
    double *x = test_dev_alloc((size_t)nx * 8), *w = test_dev_alloc((size_t)nw * 8);
    double *b = test_dev_alloc((size_t)g->cout * 8), *y = test_dev_alloc((size_t)ny * 8);
    double *gy = test_dev_alloc((size_t)ny * 8), *dy = test_dev_alloc((size_t)ny * 8);
    double *gx = test_dev_alloc((size_t)nx * 8), *gw = test_dev_alloc((size_t)nw * 8);
    double *gb = test_dev_alloc((size_t)g->cout * 8);
    test_rng r;
    test_rng_seed(&r, 64);
    for (int64_t i = 0; i < nx; i++) xi[i] = ((int64_t)1 << 40) + (int64_t)(test_rng_next(&r) % 8);
    for (int64_t i = 0; i < nw; i++) wi[i] = (int64_t)(test_rng_next(&r) % 5) - 2;
    for (int64_t i = 0; i < ny; i++) {
        gi[i] = (int64_t)(test_rng_next(&r) % 5) - 2;
        dyi[i] = gi[i] * ((int64_t)1 << 40) + (int64_t)(test_rng_next(&r) % 8);
    }
    sums s = {xi, wi, gi, dyi, yi, gwi, dxi};
    each_term(g, term, &s);
    // the input, in x_strides' layout when given
    int64_t xd[4] = {g->N, g->cin, g->H, g->W}, wd[4] = {w0, w1, g->kh, g->kw};
    int64_t yd[4] = {g->N, g->cout, OH, OW}, bd[1] = {g->cout};
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t c = 0; c < g->cin; c++)
            for (int64_t h = 0; h < g->H; h++)
                for (int64_t v = 0; v < g->W; v++) {
                    int64_t i = ((n * g->cin + c) * g->H + h) * g->W + v;
                    int64_t at = x_strides ? n * x_strides[0] + c * x_strides[1] +
                                                 h * x_strides[2] + v * x_strides[3]
                                           : i;
                    x[at] = (double)xi[i] * u;
                }
    for (int64_t i = 0; i < nw; i++) w[i] = (double)wi[i];
    for (int64_t i = 0; i < g->cout; i++) b[i] = (double)(i % 3) - 1 + 0.5 * u;
    for (int64_t i = 0; i < ny; i++) gy[i] = (double)gi[i], dy[i] = (double)dyi[i] * u;
    int64_t storage = nx;
    aclTensor *tx =
        x_strides ? aclCreateTensor(xd, 4, ACL_DOUBLE, x_strides, 0, ACL_FORMAT_ND, &storage, 1, x)
                  : test_tensor(xd, 4, ACL_DOUBLE, x);
    aclTensor *tw = test_tensor(wd, 4, ACL_DOUBLE, w), *tb = test_tensor(bd, 1, ACL_DOUBLE, b);
    aclTensor *ty = test_tensor(yd, 4, ACL_DOUBLE, y), *tgy = test_tensor(yd, 4, ACL_DOUBLE, gy);
    aclTensor *tdy = test_tensor(yd, 4, ACL_DOUBLE, dy), *tgx = test_tensor(xd, 4, ACL_DOUBLE, gx);
    aclTensor *tgw = test_tensor(wd, 4, ACL_DOUBLE, gw), *tgb = test_tensor(bd, 1, ACL_DOUBLE, gb);
    aclIntArray *st = arr2(g->s), *pd = arr2(g->p), *dl = arr2(g->d), *op = arr2(g->op);
    uint64_t ws;
    aclOpExecutor *ex;
    aclnnStatus p1 = aclnnConvolutionGetWorkspaceSize(tx, tw, tb, st, pd, dl, g->transposed, op,
                                                      g->G, ty, 0, &ws, &ex);
    CHECK_EQ(p1, ACLNN_SUCCESS);
    if (p1 == ACLNN_SUCCESS) CHECK(gemm_named(ex));
    CHECK_EQ(test_run(p1, ws, ex, aclnnConvolution, NULL), ACLNN_SUCCESS);
    int64_t bad = 0;
    for (int64_t i = 0; i < ny; i++) {
        double want = (double)yi[i] * u + b[i / (OH * OW) % g->cout];
        if (y[i] != want && bad++ < 3)
            fprintf(stderr, "    y[%lld] %.17g want %.17g\n", (long long)i, y[i], want);
    }
    CHECKF(bad == 0, "forward: %lld of %lld elements inexact", (long long)bad, (long long)ny);
    bool m2[3] = {false, true, true}, m1[3] = {true, false, false};
    aclBoolArray *mask2 = aclCreateBoolArray(m2, 3), *mask1 = aclCreateBoolArray(m1, 3);
    p1 = aclnnConvolutionBackwardGetWorkspaceSize(tgy, tx, tw, NULL, st, pd, dl, g->transposed, op,
                                                  (int)g->G, mask2, 0, NULL, tgw, tgb, &ws, &ex);
    CHECK_EQ(p1, ACLNN_SUCCESS);
    if (p1 == ACLNN_SUCCESS) CHECK(gemm_named(ex));
    CHECK_EQ(test_run(p1, ws, ex, aclnnConvolutionBackward, NULL), ACLNN_SUCCESS);
    bad = 0;
    for (int64_t i = 0; i < nw; i++)
        if (gw[i] != (double)gwi[i] * u && bad++ < 3)
            fprintf(stderr, "    gw[%lld] %.17g want %.17g\n", (long long)i, gw[i],
                    (double)gwi[i] * u);
    CHECKF(bad == 0, "gradWeight: %lld of %lld elements inexact", (long long)bad, (long long)nw);
    for (int64_t c = 0; c < g->cout; c++) {
        int64_t sum = 0;
        for (int64_t n = 0; n < g->N; n++)
            for (int64_t i = 0; i < OH * OW; i++) sum += gi[(n * g->cout + c) * OH * OW + i];
        CHECKF(gb[c] == (double)sum, "gradBias[%lld] %.17g want %lld", (long long)c, gb[c],
               (long long)sum);
    }
    p1 = aclnnConvolutionBackwardGetWorkspaceSize(tdy, tx, tw, NULL, st, pd, dl, g->transposed, op,
                                                  (int)g->G, mask1, 0, tgx, NULL, NULL, &ws, &ex);
    CHECK_EQ(p1, ACLNN_SUCCESS);
    if (p1 == ACLNN_SUCCESS) CHECK(gemm_named(ex));
    CHECK_EQ(test_run(p1, ws, ex, aclnnConvolutionBackward, NULL), ACLNN_SUCCESS);
    bad = 0;
    for (int64_t i = 0; i < nx; i++)
        if (gx[i] != (double)dxi[i] * u && bad++ < 3)
            fprintf(stderr, "    gx[%lld] %.17g want %.17g\n", (long long)i, gx[i],
                    (double)dxi[i] * u);
    CHECKF(bad == 0, "gradInput: %lld of %lld elements inexact", (long long)bad, (long long)nx);
    aclDestroyBoolArray(mask1), aclDestroyBoolArray(mask2);
    aclDestroyIntArray(st), aclDestroyIntArray(pd), aclDestroyIntArray(dl), aclDestroyIntArray(op);
    aclTensor *ts[] = {tx, tw, tb, ty, tgy, tdy, tgx, tgw, tgb};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) aclDestroyTensor(ts[i]);
    void *ds[] = {x, w, b, y, gy, dy, gx, gw, gb};
    for (size_t i = 0; i < sizeof ds / sizeof *ds; i++) aclrtFree(ds[i]);
    free(xi), free(wi), free(gi), free(dyi), free(yi), free(gwi), free(dxi);
}

static void test_exact_on_every_fp32_path(void) {
    static const geo cases[] = {
        // Winograd's geometry in fp32 (3x3 stride 1, 8 channels, 64 tiles of 4x4)
        {false, 4, 8, 8, 1, 16, 16, 3, 3, 1, 1, 1, 0},
        // direct depthwise (groups = channels, multiplier 2), stride 2
        {false, 2, 4, 8, 4, 9, 8, 3, 3, 2, 1, 1, 0},
        // transposed stride 2: its forward is the data product, col2im in fp32
        {true, 2, 3, 4, 1, 5, 6, 3, 3, 2, 1, 1, 1},
        // 1x1 over 120 positions: the per-image fp32 weight product
        {false, 2, 5, 3, 1, 12, 10, 1, 1, 1, 0, 1, 0},
        // 5x5 planes, 3 images: the images folded into one product; dilation 2
        {false, 3, 4, 6, 2, 7, 7, 3, 3, 1, 2, 2, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_exact(&cases[i], NULL);
    // the Winograd geometry with a channels-last input: the same exact results
    const geo *g = &cases[0];
    int64_t cl[4] = {g->H * g->W * g->cin, 1, g->W * g->cin, g->cin};
    check_exact(g, cl);
}

// float32 input, float64 weight: the products in float64, rounded once into a float32 output
// (the same call into a float64 output, then rounded, gives the same bits); cubeMathType 2
// (USE_FP16) rounds nothing in float64.
static void test_promotion_and_cube_math(void) {
    int64_t xd[3] = {2, 3, 9}, wd[3] = {4, 3, 3}, yd[3] = {2, 4, 7};
    float *x = test_dev_alloc(54 * 4), *y32 = test_dev_alloc(56 * 4);
    double *w = test_dev_alloc(36 * 8), *y64 = test_dev_alloc(56 * 8), *yc = test_dev_alloc(56 * 8);
    for (int i = 0; i < 54; i++) x[i] = 1.0f + (float)i / 1024;
    for (int i = 0; i < 36; i++) w[i] = sqrt(i + 2.0) - 3; // (no fp32 / fp16 number)
    aclTensor *tx = test_tensor(xd, 3, ACL_FLOAT, x), *tw = test_tensor(wd, 3, ACL_DOUBLE, w);
    aclTensor *t32 = test_tensor(yd, 3, ACL_FLOAT, y32), *t64 = test_tensor(yd, 3, ACL_DOUBLE, y64);
    aclTensor *tc = test_tensor(yd, 3, ACL_DOUBLE, yc);
    int64_t one = 1, zero = 0;
    aclIntArray *s = aclCreateIntArray(&one, 1), *p = aclCreateIntArray(&zero, 1);
    aclIntArray *d = aclCreateIntArray(&one, 1);
    aclnnStatus st;
    OP_RUN(
        st,
        aclnnConvolutionGetWorkspaceSize(tx, tw, NULL, s, p, d, false, NULL, 1, t64, 0, &ws_, &ex_),
        aclnnConvolution);
    CHECK_EQ(st, ACLNN_SUCCESS);
    OP_RUN(
        st,
        aclnnConvolutionGetWorkspaceSize(tx, tw, NULL, s, p, d, false, NULL, 1, t32, 0, &ws_, &ex_),
        aclnnConvolution);
    CHECK_EQ(st, ACLNN_SUCCESS);
    OP_RUN(
        st,
        aclnnConvolutionGetWorkspaceSize(tx, tw, NULL, s, p, d, false, NULL, 1, tc, 2, &ws_, &ex_),
        aclnnConvolution);
    CHECK_EQ(st, ACLNN_SUCCESS);
    for (int i = 0; i < 56; i++) {
        int n = i / 28, co = i / 7 % 4, o = i % 7;
        double want = 0, mag = 0;
        for (int ci = 0; ci < 3; ci++)
            for (int t = 0; t < 3; t++) {
                double v = (double)x[(n * 3 + ci) * 9 + o + t] * w[(co * 3 + ci) * 3 + t];
                want += v, mag += fabs(v);
            }
        CHECKF(fabs(y64[i] - want) <= 0x1p-50 * mag, "y[%d] %.17g want %.17g", i, y64[i], want);
        CHECKF(y32[i] == (float)y64[i], "float32 output %d: %.9g, want %.9g (one rounding)", i,
               (double)y32[i], (double)(float)y64[i]);
        CHECKF(yc[i] == y64[i], "cubeMathType 2, element %d: %.17g, want %.17g", i, yc[i], y64[i]);
    }
    aclTensor *ts[] = {tx, tw, t32, t64, tc};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) aclDestroyTensor(ts[i]);
    aclDestroyIntArray(s), aclDestroyIntArray(p), aclDestroyIntArray(d);
    aclrtFree(x), aclrtFree(y32), aclrtFree(w), aclrtFree(y64), aclrtFree(yc);
}

// gradBias of a float32 gradOutput, float64 input and weight: summed in double (the float32
// gradOutput widened first). Per channel 2^24, 1, 1, -2^24, 1 in each of 2 images: 6; a float32
// running sum rounds 2^24 + 1 to 2^24 and gives 1.
static void test_bias_grad_sums_in_double(void) {
    int64_t xd[3] = {2, 2, 5}, wd[3] = {2, 2, 1}, yd[3] = {2, 2, 5}, bd[1] = {2};
    double *x = test_dev_alloc(20 * 8), *w = test_dev_alloc(4 * 8), *gb = test_dev_alloc(2 * 8);
    float *gy = test_dev_alloc(20 * 4), *gb32 = test_dev_alloc(2 * 4);
    static const float pattern[5] = {16777216.0f, 1, 1, -16777216.0f, 1};
    for (int i = 0; i < 20; i++) x[i] = i, gy[i] = pattern[i % 5];
    for (int i = 0; i < 4; i++) w[i] = 1;
    aclTensor *tx = test_tensor(xd, 3, ACL_DOUBLE, x), *tw = test_tensor(wd, 3, ACL_DOUBLE, w);
    aclTensor *tgy = test_tensor(yd, 3, ACL_FLOAT, gy), *tgb = test_tensor(bd, 1, ACL_DOUBLE, gb);
    aclTensor *tgb32 = test_tensor(bd, 1, ACL_FLOAT, gb32);
    int64_t one = 1, zero = 0;
    aclIntArray *s = aclCreateIntArray(&one, 1), *p = aclCreateIntArray(&zero, 1);
    aclIntArray *d = aclCreateIntArray(&one, 1), *bs = aclCreateIntArray((int64_t[]){2}, 1);
    bool m[3] = {false, false, true};
    aclBoolArray *mask = aclCreateBoolArray(m, 3);
    aclnnStatus st;
    for (int k = 0; k < 2; k++) { // into a float64 gradBias, then a float32 one (6 is exact)
        OP_RUN(st,
               aclnnConvolutionBackwardGetWorkspaceSize(tgy, tx, tw, bs, s, p, d, false, NULL, 1,
                                                        mask, 0, NULL, NULL, k ? tgb32 : tgb, &ws_,
                                                        &ex_),
               aclnnConvolutionBackward);
        CHECK_EQ(st, ACLNN_SUCCESS);
    }
    CHECKF(gb[0] == 6 && gb[1] == 6, "gradBias %.17g %.17g, want 6", gb[0], gb[1]);
    CHECKF(gb32[0] == 6 && gb32[1] == 6, "float32 gradBias %g %g, want 6", (double)gb32[0],
           (double)gb32[1]);
    aclTensor *ts[] = {tx, tw, tgy, tgb, tgb32};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) aclDestroyTensor(ts[i]);
    aclDestroyIntArray(s), aclDestroyIntArray(p), aclDestroyIntArray(d), aclDestroyIntArray(bs);
    aclDestroyBoolArray(mask);
    aclrtFree(x), aclrtFree(w), aclrtFree(gb), aclrtFree(gy), aclrtFree(gb32);
}

// float32 operands into float64 outputs: the fp32 / 16-bit algorithms (the direct depthwise
// kernel, col2im, images folded, the per-image 1x1 weight product) computed as for a float32
// output, widened exactly: the same values as the float32 outputs.
static void test_float32_into_float64_outputs(void) {
    static const geo cases[] = {
        {false, 2, 4, 8, 4, 9, 8, 3, 3, 2, 1, 1, 0},   // depthwise
        {true, 2, 3, 4, 1, 5, 6, 3, 3, 2, 1, 1, 1},    // col2im (the transposed forward)
        {false, 3, 4, 6, 2, 7, 7, 3, 3, 1, 2, 2, 0},   // folded
        {false, 2, 5, 3, 1, 12, 10, 1, 1, 1, 0, 1, 0}, // 1x1 weight product per image
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const geo *g = &cases[c];
        const int64_t OH = out_size(g, g->H, g->kh), OW = out_size(g, g->W, g->kw);
        int64_t w0 = g->transposed ? g->cin : g->cout;
        int64_t w1 = g->transposed ? g->cout / g->G : g->cin / g->G;
        int64_t xd[4] = {g->N, g->cin, g->H, g->W}, wd[4] = {w0, w1, g->kh, g->kw};
        int64_t yd[4] = {g->N, g->cout, OH, OW};
        int64_t n[3] = {g->N * g->cin * g->H * g->W, w0 * w1 * g->kh * g->kw,
                        g->N * g->cout * OH * OW}; // x, w, y
        float *in[3];
        void *out[2][3]; // [float32, float64][y, gradInput, gradWeight]
        test_rng r;
        test_rng_seed(&r, 7 + c);
        for (int k = 0; k < 3; k++) {
            in[k] = test_dev_alloc((size_t)n[k] * 4);
            test_fill(in[k], 0, n[k], ACL_FLOAT, &r, -2, 2);
        }
        const int64_t osz[3] = {n[2], n[0], n[1]}, *odims[3] = {yd, xd, wd};
        aclTensor *tin[3] = {test_tensor(xd, 4, ACL_FLOAT, in[0]),
                             test_tensor(wd, 4, ACL_FLOAT, in[1]),
                             test_tensor(yd, 4, ACL_FLOAT, in[2])}; // (gradOutput)
        aclTensor *tout[2][3];
        for (int dt = 0; dt < 2; dt++)
            for (int k = 0; k < 3; k++) {
                out[dt][k] = test_dev_alloc((size_t)osz[k] * 8);
                tout[dt][k] = test_tensor(odims[k], 4, dt ? ACL_DOUBLE : ACL_FLOAT, out[dt][k]);
            }
        aclIntArray *st = arr2(g->s), *pd = arr2(g->p), *dl = arr2(g->d), *op = arr2(g->op);
        bool m[3] = {true, true, false};
        aclBoolArray *mask = aclCreateBoolArray(m, 3);
        for (int dt = 0; dt < 2; dt++) {
            aclnnStatus s1, s2;
            OP_RUN(s1,
                   aclnnConvolutionGetWorkspaceSize(tin[0], tin[1], NULL, st, pd, dl, g->transposed,
                                                    op, g->G, tout[dt][0], 0, &ws_, &ex_),
                   aclnnConvolution);
            OP_RUN(s2,
                   aclnnConvolutionBackwardGetWorkspaceSize(
                       tin[2], tin[0], tin[1], NULL, st, pd, dl, g->transposed, op, (int)g->G, mask,
                       0, tout[dt][1], tout[dt][2], NULL, &ws_, &ex_),
                   aclnnConvolutionBackward);
            CHECK_EQ(s1, ACLNN_SUCCESS);
            CHECK_EQ(s2, ACLNN_SUCCESS);
        }
        for (int k = 0; k < 3; k++) {
            int64_t bad = 0;
            for (int64_t i = 0; i < osz[k]; i++)
                bad += ((double *)out[1][k])[i] != (double)((float *)out[0][k])[i];
            CHECKF(bad == 0, "case %zu result %d: %lld of %lld differ", c, k, (long long)bad,
                   (long long)osz[k]);
        }
        aclDestroyBoolArray(mask);
        aclDestroyIntArray(st), aclDestroyIntArray(pd), aclDestroyIntArray(dl);
        aclDestroyIntArray(op);
        for (int k = 0; k < 3; k++) {
            aclDestroyTensor(tin[k]), aclrtFree(in[k]);
            for (int dt = 0; dt < 2; dt++) aclDestroyTensor(tout[dt][k]), aclrtFree(out[dt][k]);
        }
    }
}

// A float64 bias with float32 input and weight: refused, naming bias (the fp32 products read
// their addend in fp32).
static void test_float64_bias_needs_float64_operands(void) {
    int64_t xd[3] = {1, 1, 3}, wd[3] = {1, 1, 1}, bd[1] = {1};
    float *buf = test_dev_alloc(64 * 4);
    double *b = test_dev_alloc(8);
    aclTensor *tx = test_tensor(xd, 3, ACL_FLOAT, buf),
              *tw = test_tensor(wd, 3, ACL_FLOAT, buf + 8);
    aclTensor *ty = test_tensor(xd, 3, ACL_FLOAT, buf + 16),
              *tb = test_tensor(bd, 1, ACL_DOUBLE, b);
    int64_t one = 1, zero = 0;
    aclIntArray *s = aclCreateIntArray(&one, 1), *p = aclCreateIntArray(&zero, 1);
    aclIntArray *d = aclCreateIntArray(&one, 1);
    uint64_t ws;
    aclOpExecutor *ex;
    CHECK_EQ(aclnnConvolutionGetWorkspaceSize(tx, tw, tb, s, p, d, false, NULL, 1, ty, 0, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("bias is DOUBLE but input and weight promote to");
    aclDestroyTensor(tx), aclDestroyTensor(tw), aclDestroyTensor(ty), aclDestroyTensor(tb);
    aclDestroyIntArray(s), aclDestroyIntArray(p), aclDestroyIntArray(d);
    aclrtFree(buf), aclrtFree(b);
}

int main(void) {
    RUN(test_exact_on_every_fp32_path);
    RUN(test_promotion_and_cube_math);
    RUN(test_bias_grad_sums_in_double);
    RUN(test_float32_into_float64_outputs);
    RUN(test_float64_bias_needs_float64_operands);
    return test_summary();
}
