/* aclnnConvolution and aclnnConvolutionBackward through the public API:
 *  - every status path: NULLs (161001, outputPadding only when transposed, a gradient the mask
 *    asks for), dtypes, ranks, groups, stride / padding / dilation / outputPadding entries and
 *    values, output / bias / gradient shapes, an input smaller than the dilated kernel,
 *    cubeMathType, outputMask's size, biasSizes, an output overlapping an input (161002), each
 *    with the argument named in the message;
 *  - hand-checked values (a 3x3 box over ones, 1x1 with bias, a transposed stride-2 scatter);
 *  - every algorithm (implicit GEMM, col2im at stride > 1, the direct depthwise kernel) against a
 *    float64 loop on shapes large enough for several GEMM blocks, fp32 and bf16, with the
 *    backward's three gradients;
 *  - strided (non-contiguous) inputs and outputs equal the contiguous result bit for bit, 1 and
 *    2 threads give the same bits, an empty batch writes nothing. */
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

typedef struct conv_cfg {
    int nsp;
    bool transposed;
    int64_t groups;
    int64_t s[3], p[3], d[3], op[3];
} conv_cfg;

static aclIntArray *arr(const int64_t *v, int n) { return aclCreateIntArray(v, (uint64_t)n); }

static aclnnStatus fwd(const aclTensor *x, const aclTensor *w, const aclTensor *b,
                       const conv_cfg *c, aclTensor *y, int8_t cube) {
    aclIntArray *s = arr(c->s, c->nsp), *p = arr(c->p, c->nsp), *d = arr(c->d, c->nsp);
    aclIntArray *op = arr(c->op, c->nsp);
    aclnnStatus st;
    OP_RUN(st,
           aclnnConvolutionGetWorkspaceSize(x, w, b, s, p, d, c->transposed, op, c->groups, y, cube,
                                            &ws_, &ex_),
           aclnnConvolution);
    aclDestroyIntArray(s), aclDestroyIntArray(p), aclDestroyIntArray(d), aclDestroyIntArray(op);
    return st;
}

static aclnnStatus bwd(const aclTensor *gy, const aclTensor *x, const aclTensor *w,
                       const conv_cfg *c, aclTensor *gx, aclTensor *gw, aclTensor *gb) {
    aclIntArray *s = arr(c->s, c->nsp), *p = arr(c->p, c->nsp), *d = arr(c->d, c->nsp);
    aclIntArray *op = arr(c->op, c->nsp);
    bool m[3] = {gx != NULL, gw != NULL, gb != NULL};
    aclBoolArray *mask = aclCreateBoolArray(m, 3);
    aclnnStatus st;
    OP_RUN(st,
           aclnnConvolutionBackwardGetWorkspaceSize(gy, x, w, NULL, s, p, d, c->transposed, op,
                                                    (int)c->groups, mask, 0, gx, gw, gb, &ws_,
                                                    &ex_),
           aclnnConvolutionBackward);
    aclDestroyIntArray(s), aclDestroyIntArray(p), aclDestroyIntArray(d), aclDestroyIntArray(op);
    aclDestroyBoolArray(mask);
    return st;
}

static int64_t numel(const int64_t *d, int n) {
    int64_t p = 1;
    for (int i = 0; i < n; i++) p *= d[i];
    return p;
}

// ---- statuses ---------------------------------------------------------------------------------

static void test_statuses(void) {
    float *buf = test_dev_alloc(4096 * 4);
    int64_t xd[4] = {1, 4, 5, 5}, wd[4] = {6, 2, 3, 3}, yd[4] = {1, 6, 5, 5}, bd[1] = {6};
    aclTensor *x = test_tensor(xd, 4, ACL_FLOAT, buf),
              *w = test_tensor(wd, 4, ACL_FLOAT, buf + 200);
    aclTensor *y = test_tensor(yd, 4, ACL_FLOAT, buf + 400),
              *b = test_tensor(bd, 1, ACL_FLOAT, buf + 600);
    const int64_t one[2] = {1, 1}, zero[2] = {0, 0};
    aclIntArray *s = arr(one, 2), *p = arr(one, 2), *d = arr(one, 2), *op = arr(zero, 2);
    uint64_t ws;
    aclOpExecutor *ex;
#define P1(...) aclnnConvolutionGetWorkspaceSize(__VA_ARGS__, &ws, &ex)
    CHECK_EQ(P1(x, w, b, s, p, d, false, op, 2, y, 0), ACLNN_SUCCESS);
    CHECK_EQ(P1(NULL, w, b, s, p, d, false, op, 2, y, 0), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("input");
    CHECK_EQ(P1(x, w, b, NULL, p, d, false, op, 2, y, 0), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("stride");
    CHECK_EQ(P1(x, w, b, s, p, d, false, NULL, 2, y, 0),
             ACLNN_SUCCESS); // ignored when not transposed
    CHECK_EQ(P1(x, w, b, s, p, d, true, NULL, 2, y, 0), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("outputPadding");
    CHECK_EQ(P1(x, w, b, s, p, d, false, op, 3, y, 0), ACLNN_ERR_PARAM_INVALID); // 3 x 2 != 4
    CHECK_MSG("groups");
    CHECK_EQ(P1(x, w, b, s, p, d, false, op, 0, y, 0), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("groups = 0");
    CHECK_EQ(P1(x, w, b, s, p, d, false, op, 2, y, 5), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("cubeMathType");
    {
        const int64_t bad[2] = {1, 0}, neg[2] = {-1, 1}, three[3] = {1, 1, 1};
        aclIntArray *s0 = arr(bad, 2), *pn = arr(neg, 2), *s3 = arr(three, 3);
        CHECK_EQ(P1(x, w, b, s0, p, d, false, op, 2, y, 0), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("stride[1] = 0");
        const int64_t huge[2] = {INT64_MAX, 1};
        aclIntArray *sh = arr(huge, 2);
        CHECK_EQ(P1(x, w, b, sh, p, d, false, op, 2, y, 0), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("it must be in [1, 2147483647]");
        CHECK_EQ(P1(x, w, b, s, sh, d, false, op, 2, y, 0), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("padding[0]");
        aclDestroyIntArray(sh);
        CHECK_EQ(P1(x, w, b, s, pn, d, false, op, 2, y, 0), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("padding[0] = -1");
        CHECK_EQ(P1(x, w, b, s, p, s3, false, op, 2, y, 0), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("dilation has 3 entries");
        CHECK_EQ(P1(x, w, b, s, s3, d, false, op, 2, y, 0), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("padding has 3 entries");
        aclDestroyIntArray(s0), aclDestroyIntArray(pn), aclDestroyIntArray(s3);
    }
    { // [top, bottom, left, right]: 4 entries for 2-D
        const int64_t four[4] = {1, 1, 1, 1};
        aclIntArray *p4 = arr(four, 4);
        CHECK_EQ(P1(x, w, b, s, p4, d, false, op, 2, y, 0), ACLNN_SUCCESS);
        aclDestroyIntArray(p4);
    }
    { // shapes
        int64_t y2d[4] = {1, 6, 4, 5}, b2d[1] = {5}, x3d[3] = {1, 4, 5};
        aclTensor *y2 = test_tensor(y2d, 4, ACL_FLOAT, buf + 400),
                  *b2 = test_tensor(b2d, 1, ACL_FLOAT, buf + 600);
        aclTensor *x3 = test_tensor(x3d, 3, ACL_FLOAT, buf);
        CHECK_EQ(P1(x, w, b, s, p, d, false, op, 2, y2, 0), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("output has shape [1,6,4,5]; it must be [1,6,5,5]");
        CHECK_EQ(P1(x, w, b2, s, p, d, false, op, 2, y, 0), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("bias");
        CHECK_EQ(P1(x3, w, b, s, p, d, false, op, 2, y, 0), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("weight");
        aclDestroyTensor(y2), aclDestroyTensor(b2), aclDestroyTensor(x3);
    }
    { // the input smaller than the dilated kernel: 5 + 0 < 2 * 2 + 1 + ... with dilation 3
        const int64_t three[2] = {3, 3};
        aclIntArray *d3 = arr(three, 2), *p0 = arr(zero, 2);
        CHECK_EQ(P1(x, w, b, s, p0, d3, false, op, 2, y, 0), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("smaller than the dilated kernel");
        aclDestroyIntArray(d3), aclDestroyIntArray(p0);
    }
    { // transposed: outputPadding must be below stride or dilation
        const int64_t two[2] = {2, 2}, opv[2] = {1, 2};
        aclIntArray *s2 = arr(two, 2), *o2 = arr(opv, 2);
        int64_t wtd[4] = {4, 3, 3, 3}, ytd[4] = {1, 6, 10, 11};
        aclTensor *wt = test_tensor(wtd, 4, ACL_FLOAT, buf + 200),
                  *yt = test_tensor(ytd, 4, ACL_FLOAT, buf + 1000);
        CHECK_EQ(P1(x, wt, b, s2, p, d, true, o2, 2, yt, 0), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("outputPadding[1] = 2");
        aclDestroyTensor(wt), aclDestroyTensor(yt);
        aclDestroyIntArray(s2), aclDestroyIntArray(o2);
    }
    { // dtypes, overlap
        int64_t n = 1;
        aclTensor *xi = aclCreateTensor(xd, 4, ACL_INT32, NULL, 0, ACL_FORMAT_NCHW, xd, 4, buf);
        CHECK_EQ(P1(xi, w, b, s, p, d, false, op, 2, y, 0), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("input");
        aclTensor *yo = test_tensor(yd, 4, ACL_FLOAT, buf + 100); // overlaps x
        CHECK_EQ(P1(x, w, b, s, p, d, false, op, 2, yo, 0), ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("overlaps");
        aclDestroyTensor(xi), aclDestroyTensor(yo);
        (void)n;
    }
#undef P1
    { // backward
        bool t3[3] = {true, true, true}, t2[2] = {true, true};
        aclBoolArray *m3 = aclCreateBoolArray(t3, 3), *m2 = aclCreateBoolArray(t2, 2);
        aclTensor *gx = test_tensor(xd, 4, ACL_FLOAT, buf + 1200),
                  *gw = test_tensor(wd, 4, ACL_FLOAT, buf + 1400);
        aclTensor *gb = test_tensor(bd, 1, ACL_FLOAT, buf + 1600);
        int64_t bsz = 6, bad_bsz = 7;
        aclIntArray *bs = arr(&bsz, 1), *bbs = arr(&bad_bsz, 1);
#define P1(...) aclnnConvolutionBackwardGetWorkspaceSize(__VA_ARGS__, &ws, &ex)
        CHECK_EQ(P1(y, x, w, bs, s, p, d, false, op, 2, m3, 0, gx, gw, gb), ACLNN_SUCCESS);
        CHECK_EQ(P1(y, x, w, bs, s, p, d, false, op, 2, m2, 0, gx, gw, gb),
                 ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("outputMask has 2 entries");
        CHECK_EQ(P1(y, x, w, bs, s, p, d, false, op, 2, m3, 0, gx, NULL, gb),
                 ACLNN_ERR_PARAM_NULLPTR);
        CHECK_MSG("gradWeight is NULL but outputMask[1] is true");
        CHECK_EQ(P1(y, x, w, bbs, s, p, d, false, op, 2, m3, 0, gx, gw, gb),
                 ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("biasSizes");
        CHECK_EQ(P1(y, x, w, bs, s, p, d, false, op, 2, m3, 0, gw, gx, gb),
                 ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("gradInput");
        CHECK_EQ(P1(x, x, w, bs, s, p, d, false, op, 2, m3, 0, gx, gw, gb),
                 ACLNN_ERR_PARAM_INVALID);
        CHECK_MSG("gradOutput");
#undef P1
        aclDestroyBoolArray(m3), aclDestroyBoolArray(m2);
        aclDestroyTensor(gx), aclDestroyTensor(gw), aclDestroyTensor(gb);
        aclDestroyIntArray(bs), aclDestroyIntArray(bbs);
    }
    aclDestroyTensor(x), aclDestroyTensor(w), aclDestroyTensor(y), aclDestroyTensor(b);
    aclDestroyIntArray(s), aclDestroyIntArray(p), aclDestroyIntArray(d), aclDestroyIntArray(op);
    aclrtFree(buf);
}

// ---- hand-checked values ----------------------------------------------------------------------

static void test_hand_values(void) {
    float *buf = test_dev_alloc(1024 * 4);
    float *x = buf, *w = buf + 64, *y = buf + 128, *b = buf + 192;
    // a 3x3 box of ones over a 3x3 plane of ones, padding 1: corners 4, edges 6, centre 9 (+0.5)
    for (int i = 0; i < 9; i++) x[i] = 1, w[i] = 1;
    b[0] = 0.5f;
    int64_t xd[4] = {1, 1, 3, 3}, wd[4] = {1, 1, 3, 3}, bd[1] = {1};
    aclTensor *tx = test_tensor(xd, 4, ACL_FLOAT, x), *tw = test_tensor(wd, 4, ACL_FLOAT, w);
    aclTensor *ty = test_tensor(xd, 4, ACL_FLOAT, y), *tb = test_tensor(bd, 1, ACL_FLOAT, b);
    conv_cfg c = {2, false, 1, {1, 1}, {1, 1}, {1, 1}, {0, 0}};
    CHECK_EQ(fwd(tx, tw, tb, &c, ty, 0), ACLNN_SUCCESS);
    const float want[9] = {4.5f, 6.5f, 4.5f, 6.5f, 9.5f, 6.5f, 4.5f, 6.5f, 4.5f};
    for (int i = 0; i < 9; i++) CHECKF(y[i] == want[i], "y[%d] = %g, want %g", i, y[i], want[i]);
    // the transposed convolution of a single 1 at (0, 0) with a 2x2 kernel 1 2 / 3 4, stride 2,
    // over a 2x2 input [1 0; 0 0]: the kernel lands at the top-left of a 4x4 output
    float *xt = buf + 256, *wt = buf + 300, *yt = buf + 320;
    xt[0] = 1, xt[1] = xt[2] = xt[3] = 0;
    for (int i = 0; i < 4; i++) wt[i] = (float)(i + 1);
    int64_t xtd[4] = {1, 1, 2, 2}, wtd[4] = {1, 1, 2, 2}, ytd[4] = {1, 1, 4, 4};
    aclTensor *txt = test_tensor(xtd, 4, ACL_FLOAT, xt), *twt = test_tensor(wtd, 4, ACL_FLOAT, wt);
    aclTensor *tyt = test_tensor(ytd, 4, ACL_FLOAT, yt);
    conv_cfg ct = {2, true, 1, {2, 2}, {0, 0}, {1, 1}, {0, 0}};
    CHECK_EQ(fwd(txt, twt, NULL, &ct, tyt, 0), ACLNN_SUCCESS);
    const float want_t[16] = {1, 2, 0, 0, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 16; i++)
        CHECKF(yt[i] == want_t[i], "yt[%d] = %g, want %g", i, yt[i], want_t[i]);
    aclDestroyTensor(tx), aclDestroyTensor(tw), aclDestroyTensor(ty), aclDestroyTensor(tb);
    aclDestroyTensor(txt), aclDestroyTensor(twt), aclDestroyTensor(tyt);
    aclrtFree(buf);
}

// ---- float64 reference on larger shapes -------------------------------------------------------

typedef struct shapes {
    int64_t N, cin, cout, in[2], k[2];
} shapes;

static void out_dims(const shapes *sh, const conv_cfg *c, int64_t *o) {
    for (int j = 0; j < 2; j++)
        o[j] =
            c->transposed
                ? (sh->in[j] - 1) * c->s[j] - 2 * c->p[j] + c->d[j] * (sh->k[j] - 1) + c->op[j] + 1
                : (sh->in[j] + 2 * c->p[j] - c->d[j] * (sh->k[j] - 1) - 1) / c->s[j] + 1;
}

// Every product term x[xi] * w[wi] of y[yi], as the definitions say (2-D, symmetric padding).
typedef void (*term_fn)(void *ctx, int64_t xi, int64_t wi, int64_t yi);
static void each_term(const shapes *sh, const conv_cfg *c, term_fn f, void *ctx) {
    int64_t o[2];
    out_dims(sh, c, o);
    const int64_t G = c->groups, cig = sh->cin / G, cog = sh->cout / G;
    for (int64_t n = 0; n < sh->N; n++)
        for (int64_t ci = 0; ci < sh->cin; ci++)
            for (int64_t m = 0; m < cog; m++)
                for (int64_t kh = 0; kh < sh->k[0]; kh++)
                    for (int64_t kw = 0; kw < sh->k[1]; kw++)
                        for (int64_t a = 0; a < (c->transposed ? sh->in[0] : o[0]); a++)
                            for (int64_t bb = 0; bb < (c->transposed ? sh->in[1] : o[1]); bb++) {
                                int64_t g = ci / cig, co = g * cog + m;
                                int64_t r = a * c->s[0] - c->p[0] + kh * c->d[0];
                                int64_t q = bb * c->s[1] - c->p[1] + kw * c->d[1];
                                if (c->transposed) { // x at (a, bb) scatters to y at (r, q)
                                    if (r < 0 || r >= o[0] || q < 0 || q >= o[1]) continue;
                                    f(ctx, ((n * sh->cin + ci) * sh->in[0] + a) * sh->in[1] + bb,
                                      ((ci * cog + m) * sh->k[0] + kh) * sh->k[1] + kw,
                                      ((n * sh->cout + co) * o[0] + r) * o[1] + q);
                                } else { // y at (a, bb) gathers x at (r, q)
                                    if (r < 0 || r >= sh->in[0] || q < 0 || q >= sh->in[1])
                                        continue;
                                    f(ctx, ((n * sh->cin + ci) * sh->in[0] + r) * sh->in[1] + q,
                                      ((co * cig + ci % cig) * sh->k[0] + kh) * sh->k[1] + kw,
                                      ((n * sh->cout + co) * o[0] + a) * o[1] + bb);
                                }
                            }
}

typedef struct ref_ctx {
    const double *x, *w, *gy;
    double *y, *ym, *gx, *gxm, *gw, *gwm;
} ref_ctx;

static void ref_term(void *p, int64_t xi, int64_t wi, int64_t yi) {
    ref_ctx *r = p;
    r->y[yi] += r->x[xi] * r->w[wi], r->ym[yi] += fabs(r->x[xi] * r->w[wi]);
    r->gx[xi] += r->gy[yi] * r->w[wi], r->gxm[xi] += fabs(r->gy[yi] * r->w[wi]);
    r->gw[wi] += r->gy[yi] * r->x[xi], r->gwm[wi] += fabs(r->gy[yi] * r->x[xi]);
}

static double *dalloc(int64_t n) { return calloc((size_t)n, sizeof(double)); }

static double tol_scale = 0x1p-20; // compare()'s fp32 bound (test_winograd widens it)

// got (dtype dt) against ref with magnitudes mag: |got - ref| <= 2^-p * (|ref| + 8 mag) where p
// is 24 (fp32, accumulated in fp32: sqrt(K) ulps of mag covers K = 1e4 terms) or 8 (bf16).
static int compare(const char *what, const void *got, aclDataType dt, const double *ref,
                   const double *mag, int64_t n) {
    double eps = dt == ACL_FLOAT ? tol_scale : ldexp(1, -7);
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = test_load(got, i, dt), tol = eps * (fabs(ref[i]) + mag[i]) + 1e-30;
        if (!(fabs(v - ref[i]) <= tol) && bad++ < 3)
            printf("    %s[%lld] = %.9g, reference %.9g (tolerance %.3g)\n", what, (long long)i, v,
                   ref[i], tol);
    }
    return bad;
}

static void check_case(const shapes *sh, const conv_cfg *c, aclDataType dt) {
    int64_t o[2];
    out_dims(sh, c, o);
    int64_t wdim0 = c->transposed ? sh->cin : sh->cout;
    int64_t wdim1 = c->transposed ? sh->cout / c->groups : sh->cin / c->groups;
    int64_t xd[4] = {sh->N, sh->cin, sh->in[0], sh->in[1]},
            wd[4] = {wdim0, wdim1, sh->k[0], sh->k[1]};
    int64_t yd[4] = {sh->N, sh->cout, o[0], o[1]};
    int64_t nx = numel(xd, 4), nw = numel(wd, 4), ny = numel(yd, 4);
    size_t es = dt == ACL_FLOAT ? 4 : 2;
    char *bx = test_dev_alloc((size_t)nx * es), *bw = test_dev_alloc((size_t)nw * es);
    char *by = test_dev_alloc((size_t)ny * es), *bgy = test_dev_alloc((size_t)ny * es);
    char *bgx = test_dev_alloc((size_t)nx * es), *bgw = test_dev_alloc((size_t)nw * es);
    test_rng r;
    test_rng_seed(&r, 7);
    test_fill(bx, 0, nx, dt, &r, -1, 1);
    test_fill(bw, 0, nw, dt, &r, -1, 1);
    test_fill(bgy, 0, ny, dt, &r, -1, 1);
    double *x = dalloc(nx), *w = dalloc(nw), *gy = dalloc(ny);
    for (int64_t i = 0; i < nx; i++) x[i] = test_load(bx, i, dt);
    for (int64_t i = 0; i < nw; i++) w[i] = test_load(bw, i, dt);
    for (int64_t i = 0; i < ny; i++) gy[i] = test_load(bgy, i, dt);
    ref_ctx rc = {x, w, gy, dalloc(ny), dalloc(ny), dalloc(nx), dalloc(nx), dalloc(nw), dalloc(nw)};
    each_term(sh, c, ref_term, &rc);
    aclTensor *tx = test_tensor(xd, 4, dt, bx), *tw = test_tensor(wd, 4, dt, bw);
    aclTensor *ty = test_tensor(yd, 4, dt, by), *tgy = test_tensor(yd, 4, dt, bgy);
    aclTensor *tgx = test_tensor(xd, 4, dt, bgx), *tgw = test_tensor(wd, 4, dt, bgw);
    CHECK_EQ(fwd(tx, tw, NULL, c, ty, 0), ACLNN_SUCCESS);
    CHECK_EQ(bwd(tgy, tx, tw, c, tgx, tgw, NULL), ACLNN_SUCCESS);
    int bad = compare("y", by, dt, rc.y, rc.ym, ny) +
              compare("gradInput", bgx, dt, rc.gx, rc.gxm, nx) +
              compare("gradWeight", bgw, dt, rc.gw, rc.gwm, nw);
    CHECKF(bad == 0,
           "N%lld C%lld->%lld %lldx%lld k%lldx%lld s%lld p%lld d%lld g%lld%s %s: %d wrong",
           (long long)sh->N, (long long)sh->cin, (long long)sh->cout, (long long)sh->in[0],
           (long long)sh->in[1], (long long)sh->k[0], (long long)sh->k[1], (long long)c->s[0],
           (long long)c->p[0], (long long)c->d[0], (long long)c->groups,
           c->transposed ? " transposed" : "", dt == ACL_FLOAT ? "fp32" : "bf16", bad);
    // 1 thread gives the same bits
    char *by1 = test_dev_alloc((size_t)ny * es), *bgw1 = test_dev_alloc((size_t)nw * es);
    aclTensor *ty1 = test_tensor(yd, 4, dt, by1), *tgw1 = test_tensor(wd, 4, dt, bgw1);
    int prev = opgrad_set_num_threads(1);
    CHECK_EQ(fwd(tx, tw, NULL, c, ty1, 0), ACLNN_SUCCESS);
    CHECK_EQ(bwd(tgy, tx, tw, c, NULL, tgw1, NULL), ACLNN_SUCCESS);
    opgrad_set_num_threads(prev);
    CHECK(memcmp(by, by1, (size_t)ny * es) == 0);
    CHECK(memcmp(bgw, bgw1, (size_t)nw * es) == 0);
    aclDestroyTensor(tx), aclDestroyTensor(tw), aclDestroyTensor(ty), aclDestroyTensor(tgy);
    aclDestroyTensor(tgx), aclDestroyTensor(tgw), aclDestroyTensor(ty1), aclDestroyTensor(tgw1);
    aclrtFree(bx), aclrtFree(bw), aclrtFree(by), aclrtFree(bgy), aclrtFree(bgx), aclrtFree(bgw);
    aclrtFree(by1), aclrtFree(bgw1);
    free(x), free(w), free(gy), free(rc.y), free(rc.ym), free(rc.gx), free(rc.gxm), free(rc.gw),
        free(rc.gwm);
}

static void test_reference(void) {
    int prev = opgrad_set_winograd(0); // the GEMM paths' bound (Winograd: test_winograd)
    const struct {
        shapes sh;
        conv_cfg c;
    } cases[] = {
        {{2, 16, 24, {20, 19}, {3, 3}}, {2, false, 1, {1, 1}, {1, 1}, {1, 1}, {0, 0}}}, // GEMM
        {{2, 12, 20, {21, 18}, {3, 3}}, {2, false, 1, {2, 2}, {1, 1}, {1, 1}, {0, 0}}}, // col2im
        {{3, 8, 8, {15, 17}, {3, 3}}, {2, false, 8, {1, 1}, {2, 2}, {2, 2}, {0, 0}}},   // depthwise
        {{2, 6, 12, {9, 11}, {5, 5}}, {2, false, 3, {3, 3}, {2, 2}, {1, 1}, {0, 0}}},   // groups
        {{2, 10, 8, {9, 8}, {3, 3}}, {2, true, 2, {2, 2}, {1, 1}, {1, 1}, {1, 1}}},    // transposed
        {{1, 300, 70, {6, 5}, {1, 1}}, {2, false, 1, {1, 1}, {0, 0}, {1, 1}, {0, 0}}}, // K > KC
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        check_case(&cases[i].sh, &cases[i].c, ACL_FLOAT);
        check_case(&cases[i].sh, &cases[i].c, ACL_BF16);
    }
    opgrad_set_winograd(prev);
}

// The Winograd switch: on by default (OPGRAD_WINOGRAD unset), set and read back; with it on, 3x3
// stride-1 fp32 products with 8+ channels differ from the GEMM path's bits but stay within
// 2^-14 (|ref| + mag) of the float64 reference (a sanity bound: the checker's conv*_winograd
// entries hold the one derived from the transforms' magnitudes); 1 and 2 threads agree bitwise.
static void test_winograd(void) {
    CHECK_EQ(opgrad_get_winograd(),
             getenv("OPGRAD_WINOGRAD") && getenv("OPGRAD_WINOGRAD")[0] == '0' ? 0 : 1);
    int prev = opgrad_set_winograd(1);
    CHECK_EQ(opgrad_get_winograd(), 1);
    CHECK_EQ(opgrad_set_winograd(0), 1);
    CHECK_EQ(opgrad_get_winograd(), 0);
    opgrad_set_winograd(1);
    tol_scale = 0x1p-14;
    const shapes sh[2] = {{3, 16, 24, {20, 19}, {3, 3}}, {6, 10, 8, {13, 12}, {3, 3}}}; // 64+ tiles
    const conv_cfg c[2] = {{2, false, 2, {1, 1}, {1, 1}, {1, 1}, {0, 0}},
                           {2, true, 1, {1, 1}, {0, 0}, {1, 1}, {0, 0}}};
    for (int i = 0; i < 2; i++) check_case(&sh[i], &c[i], ACL_FLOAT);
    tol_scale = 0x1p-20;
    opgrad_set_winograd(prev);
}

// ---- layouts ----------------------------------------------------------------------------------

// A transposed-storage (channels-last-like) input and an output with padded rows give the
// contiguous result's bits; an empty batch succeeds and writes nothing.
static void test_strided_and_empty(void) {
    // (an output plane of 120 >= 96 positions: the per-image product, whose C is the output or,
    // for these padded rows, a temporary copied out)
    const int64_t N = 2, C = 3, H = 12, W = 10, K = 4;
    float *buf = test_dev_alloc(8192 * 4);
    float *xc = buf, *xs = buf + 1024, *w = buf + 2048, *yc = buf + 2400, *ys = buf + 4000;
    test_rng r;
    test_rng_seed(&r, 3);
    test_fill(xc, 0, N * C * H * W, ACL_FLOAT, &r, -1, 1);
    test_fill(w, 0, K * C * 9, ACL_FLOAT, &r, -1, 1);
    // xs: NHWC storage of the same values, viewed as NCHW
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t x = 0; x < W; x++)
                    xs[((n * H + h) * W + x) * C + c] = xc[((n * C + c) * H + h) * W + x];
    int64_t xd[4] = {N, C, H, W}, xst[4] = {H * W * C, 1, W * C, C};
    int64_t wd[4] = {K, C, 3, 3}, yd[4] = {N, K, H, W}, yst[4] = {K * H * 16, H * 16, 16, 1};
    aclTensor *txc = test_tensor(xd, 4, ACL_FLOAT, xc), *tw = test_tensor(wd, 4, ACL_FLOAT, w);
    aclTensor *txs = aclCreateTensor(xd, 4, ACL_FLOAT, xst, 0, ACL_FORMAT_NCHW,
                                     (int64_t[]){N * H * W * C}, 1, xs);
    aclTensor *tyc = test_tensor(yd, 4, ACL_FLOAT, yc);
    aclTensor *tys = aclCreateTensor(yd, 4, ACL_FLOAT, yst, 0, ACL_FORMAT_NCHW,
                                     (int64_t[]){N * K * H * 16}, 1, ys);
    conv_cfg c = {2, false, 1, {1, 1}, {1, 1}, {1, 1}, {0, 0}};
    CHECK_EQ(fwd(txc, tw, NULL, &c, tyc, 0), ACLNN_SUCCESS);
    CHECK_EQ(fwd(txs, tw, NULL, &c, tys, 0), ACLNN_SUCCESS);
    int diff = 0;
    for (int64_t i = 0; i < N * K * H; i++)
        for (int64_t x = 0; x < W; x++) diff += yc[i * W + x] != ys[i * 16 + x];
    CHECK_EQ(diff, 0);
    // empty batch
    int64_t ed[4] = {0, C, H, W}, eyd[4] = {0, K, H, W};
    aclTensor *te = test_tensor(ed, 4, ACL_FLOAT, buf), *tey = test_tensor(eyd, 4, ACL_FLOAT, buf);
    CHECK_EQ(fwd(te, tw, NULL, &c, tey, 0), ACLNN_SUCCESS);
    aclDestroyTensor(txc), aclDestroyTensor(tw), aclDestroyTensor(txs), aclDestroyTensor(tyc);
    aclDestroyTensor(tys), aclDestroyTensor(te), aclDestroyTensor(tey);
    aclrtFree(buf);
}

// Each executor names the algorithm it planned (opgrad_executor_algorithm).
static void test_algorithm_names(void) {
    float *buf = test_dev_alloc(200000 * 4);
    const struct {
        int64_t cin, cout, groups, stride, hw;
        const char *want;
    } cases[] = {
        {16, 16, 1, 1, 24, "winograd F(4x4,3x3)"},
        {8, 8, 8, 1, 16, "direct depthwise"},
        {4, 6, 1, 1, 16, "implicit GEMM"},                  // (few channels: no Winograd)
        {16, 16, 1, 2, 16, "implicit GEMM, images folded"}, // (8 x 8 outputs per image)
    };
    int prev = opgrad_set_winograd(1);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int64_t o = (cases[i].hw + 2 - 3) / cases[i].stride + 1;
        int64_t xd[4] = {2, cases[i].cin, cases[i].hw, cases[i].hw};
        int64_t wd[4] = {cases[i].cout, cases[i].cin / cases[i].groups, 3, 3};
        int64_t yd[4] = {2, cases[i].cout, o, o};
        aclTensor *x = test_tensor(xd, 4, ACL_FLOAT, buf),
                  *w = test_tensor(wd, 4, ACL_FLOAT, buf + 40000);
        aclTensor *y = test_tensor(yd, 4, ACL_FLOAT, buf + 50000),
                  *gx = test_tensor(xd, 4, ACL_FLOAT, buf + 100000);
        const int64_t s2[2] = {cases[i].stride, cases[i].stride}, one[2] = {1, 1}, zero[2] = {0, 0};
        aclIntArray *s = arr(s2, 2), *p = arr(one, 2), *d = arr(one, 2), *op = arr(zero, 2);
        uint64_t ws;
        aclOpExecutor *ex;
        CHECK_EQ(aclnnConvolutionGetWorkspaceSize(x, w, NULL, s, p, d, false, op, cases[i].groups,
                                                  y, 0, &ws, &ex),
                 ACLNN_SUCCESS);
        CHECKF(!strcmp(opgrad_executor_algorithm(ex), cases[i].want),
               "case %zu: \"%s\", want \"%s\"", i, opgrad_executor_algorithm(ex), cases[i].want);
        aclDestroyAclOpExecutor(ex);
        CHECK(!strcmp(opgrad_executor_algorithm(ex), "")); // destroyed: no longer live
        bool m[3] = {true, false, false};
        aclBoolArray *mask = aclCreateBoolArray(m, 3);
        CHECK_EQ(aclnnConvolutionBackwardGetWorkspaceSize(y, x, w, NULL, s, p, d, false, op,
                                                          (int)cases[i].groups, mask, 0, gx, NULL,
                                                          NULL, &ws, &ex),
                 ACLNN_SUCCESS);
        // (stride > 1, or fewer than 8 input channels per group: GEMM + col2im)
        bool col = cases[i].groups != cases[i].cin &&
                   (cases[i].stride > 1 || cases[i].cin / cases[i].groups < 8);
        const char *want_dx = col ? "gradInput: GEMM + col2im" : NULL;
        if (want_dx)
            CHECKF(!strcmp(opgrad_executor_algorithm(ex), want_dx), "case %zu backward: \"%s\"", i,
                   opgrad_executor_algorithm(ex));
        else
            CHECKF(!strncmp(opgrad_executor_algorithm(ex), "gradInput: ", 11) &&
                       !strcmp(opgrad_executor_algorithm(ex) + 11, cases[i].want),
                   "case %zu backward: \"%s\"", i, opgrad_executor_algorithm(ex));
        aclDestroyAclOpExecutor(ex);
        aclDestroyBoolArray(mask);
        aclDestroyTensor(x), aclDestroyTensor(w), aclDestroyTensor(y), aclDestroyTensor(gx);
        aclDestroyIntArray(s), aclDestroyIntArray(p), aclDestroyIntArray(d), aclDestroyIntArray(op);
    }
    CHECK(!strcmp(opgrad_executor_algorithm(NULL), ""));
    opgrad_set_winograd(0);
    {
        int64_t xd[4] = {2, 16, 16, 16}, wd[4] = {16, 16, 3, 3};
        aclTensor *x = test_tensor(xd, 4, ACL_FLOAT, buf),
                  *w = test_tensor(wd, 4, ACL_FLOAT, buf + 40000);
        aclTensor *y = test_tensor(xd, 4, ACL_FLOAT, buf + 50000);
        const int64_t one[2] = {1, 1}, zero[2] = {0, 0};
        aclIntArray *s = arr(one, 2), *p = arr(one, 2), *op = arr(zero, 2);
        uint64_t ws;
        aclOpExecutor *ex;
        CHECK_EQ(
            aclnnConvolutionGetWorkspaceSize(x, w, NULL, s, p, s, false, op, 1, y, 0, &ws, &ex),
            ACLNN_SUCCESS);
        CHECK(!strcmp(opgrad_executor_algorithm(ex), "implicit GEMM")); // switched off
        aclDestroyAclOpExecutor(ex);
        aclDestroyTensor(x), aclDestroyTensor(w), aclDestroyTensor(y);
        aclDestroyIntArray(s), aclDestroyIntArray(p), aclDestroyIntArray(op);
    }
    opgrad_set_winograd(prev);
    aclrtFree(buf);
}

int main(void) {
    aclInit(NULL);
    RUN(test_statuses);
    RUN(test_hand_values);
    RUN(test_reference);
    RUN(test_winograd);
    RUN(test_strided_and_empty);
    RUN(test_algorithm_names);
    return test_summary();
}
