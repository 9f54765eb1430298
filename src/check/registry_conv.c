/* Registry entries of the 'conv' family: aclnnConvolution + aclnnConvolutionBackward.
 *
 * Each entry is one geometry (the conv_case table): 1-, 2- and 3-D, transposed or not, chosen so
 * that the boundary cases of a backward are hit on shapes small enough for a full-Jacobian finite
 * difference: strides 2 and 3 over inputs they do not divide, padding beyond the kernel's reach
 * (outputs that see only padding), asymmetric [begin, end] padding, dilation, groups and
 * depthwise, outputPadding, 1x1, no bias. The layouts map to the case's shapes ("contiguous",
 * "strided", "offset", "mixed"), no input channels ("empty": input and weight empty, the output
 * the bias), or a larger geometry of the same attributes
 * ("large", "wide": several GEMM blocks, K slices and N chunks under the checker's tiny block
 * sizes). The masked entries compute only some gradients (outputMask from the differentiable
 * inputs).
 *
 * References (float64), written from the definitions and not from the kernels' GEMM form: the
 * forward convolution gathers y[n, co, o] = b[co] + sum_{ci, t} w[co, ci, t] x[n, ci, o*s - p +
 * t*d]; the transposed one scatters every x[n, ci, i] w[ci, co, t] to y[n, co, i*s - p + t*d]. The
 * backward accumulates the same products' partial derivatives. mag = the sum of |terms|, terms =
 * their count (compare.h: c ulp(ref) + c 2^-24 sqrt(terms) mag, the fp32 GEMM's bound).
 * cubeMathType 2 (USE_FP16) rounds fp32 operands through fp16: the reference rounds x, w (and for
 * the gradients gradOutput) the same way. The sums are compensated (ogc_ksum) for the float64
 * rows, whose kernels take the GEMM's float64 loop (no Winograd, no direct depthwise kernel). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_convolution.h"
#include "aclnnop/aclnn_convolution_backward.h"
#include "check/check.h"
#include "check/check_internal.h"
#include "check/compare.h"
#include "check/registry.h"
#include "tensor/dtype.h"

typedef struct conv_case {
    int nsp;
    bool transposed;
    int64_t groups, cin, cout, n;
    int64_t in[3], k[3], s[3], pl[3], ph[3], d[3], op[3];
    int64_t big_in[3], big_cin, big_cout; // the "large" / "wide" geometry
    int8_t cube;
    bool bias;
    bool wino; // 3x3 stride 1, >= 8 channels per group: Winograd runs (fp32, switch on)
} conv_case;

// clang-format off
static const conv_case cases[] = {
    // 0: 3x3 stride 1, padding 1
    {2, false, 1, 3, 4, 2, {6, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0}, {13, 11}, 5, 7, 0, true, false},
    // 1: 3x3 stride 2 over 7x8 (odd: the last row and column reach past the input)
    {2, false, 1, 2, 3, 2, {7, 8}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, {0}, {15, 12}, 6, 5, 0, true, false},
    // 2: 2x3 stride 3, padding beyond the kernel's reach, asymmetric [top, bottom, left, right]
    {2, false, 1, 2, 3, 1, {5, 7}, {2, 3}, {3, 3}, {3, 1}, {2, 4}, {1, 1}, {0}, {11, 14}, 5, 6, 0, true, false},
    // 3: dilation 2, padding 2
    {2, false, 1, 2, 3, 2, {7, 6}, {3, 2}, {1, 2}, {2, 1}, {2, 1}, {2, 3}, {0}, {12, 13}, 4, 5, 0, true, false},
    // 4: groups 2
    {2, false, 2, 4, 6, 2, {5, 6}, {3, 3}, {1, 2}, {1, 1}, {1, 1}, {1, 1}, {0}, {10, 11}, 6, 10, 0, true, false},
    // 5: depthwise (groups = channels), multiplier 2
    {2, false, 3, 3, 6, 2, {6, 5}, {3, 3}, {2, 1}, {1, 1}, {1, 1}, {1, 1}, {0}, {13, 9}, 6, 12, 0, true, false},
    // 6: 1-D, stride 2, [left, right] padding
    {1, false, 1, 3, 2, 2, {9}, {3}, {2}, {0}, {2}, {1}, {0}, {67}, 7, 5, 0, true, false},
    // 7: 3-D, stride (1, 2, 1)
    {3, false, 1, 2, 3, 1, {4, 5, 4}, {2, 2, 2}, {1, 2, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0}, {6, 7, 5}, 3, 5, 0, true, false},
    // 8: 1x1 (pointwise), no bias; large / wide: 110 positions, the plain-matrix products
    {2, false, 1, 5, 3, 2, {4, 5}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, {0}, {11, 10}, 9, 7, 0, false, false},
    // 9: transposed 3x3 stride 2, padding 1, outputPadding 1
    {2, true, 1, 3, 2, 2, {4, 5}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {7, 6}, 5, 4, 0, true, false},
    // 10: transposed, groups 2, stride 3, dilation 2, outputPadding (2, 1)
    {2, true, 2, 4, 2, 1, {3, 4}, {2, 3}, {3, 2}, {1, 0}, {1, 0}, {2, 2}, {2, 1}, {6, 5}, 6, 4, 0, true, false},
    // 11: transposed 1-D, 3-D
    {1, true, 1, 3, 2, 2, {6}, {4}, {3}, {2}, {2}, {1}, {1}, {29}, 5, 6, 0, true, false},
    {3, true, 1, 2, 2, 1, {3, 2, 3}, {2, 2, 2}, {2, 1, 2}, {1, 0, 1}, {1, 0, 1}, {1, 1, 1}, {1, 0, 0}, {4, 4, 5}, 3, 4, 0, true, false},
    // 13: fp32 with cubeMathType 2 (USE_FP16)
    {2, false, 1, 3, 4, 2, {6, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0}, {11, 10}, 5, 6, 2, true, false},
    // 14: depthwise 1-D, stride 2, dilation 2, [left, right] padding (the direct kernel)
    {1, false, 4, 4, 4, 2, {11}, {3}, {2}, {1}, {3}, {2}, {0}, {70}, 8, 8, 0, true, false},
    // 15: depthwise transposed 2-D (weight [C, 1, k]), stride 2, outputPadding 1
    {2, true, 3, 3, 3, 2, {4, 5}, {3, 2}, {2, 2}, {1, 0}, {1, 0}, {1, 1}, {1, 1}, {9, 8}, 6, 6, 0, true, false},
    // 16: Winograd F(4x4, 3x3): groups 2 of 8 channels, 13x15 (tiles cropped at both edges), 64 tiles
    {2, false, 2, 16, 16, 4, {13, 15}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0}, {17, 15}, 16, 18, 0, true, true},
    // 17: Winograd as the transposed convolution (the data product), padding 0 (2 in the transform)
    {2, true, 1, 8, 10, 8, {10, 11}, {3, 3}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, {0, 0}, {11, 9}, 9, 8, 0, true, true},
    // 18: 5x5 stride 1 with 9 input channels: gradInput by the stride gather (8+ channels)
    {2, false, 1, 9, 4, 2, {6, 7}, {5, 5}, {1, 1}, {2, 2}, {2, 2}, {1, 1}, {0}, {11, 9}, 10, 5, 0, true, false},
};
// clang-format on

enum { A_CASE, A_UNUSED }; // attrs: {case, 0}
static const conv_case *case_of(const ogc_op *op) { return &cases[(int)op->attrs[A_CASE]]; }

typedef struct geom {
    int nsp;
    bool transposed;
    int64_t N, G, cin, cout, cin_g, cout_g;
    int64_t in[3], out[3], k[3], s[3], p[3], d[3];
} geom;

static bool big(const char *layout) { return !strcmp(layout, "large") || !strcmp(layout, "wide"); }

// The geometry of a case at a layout's size (spatial dims canonical: leading ones of extent 1).
static geom geom_of(const conv_case *c, const ogc_shape *x) {
    geom g = {.nsp = c->nsp, .transposed = c->transposed, .G = c->groups};
    g.N = x->dims[0], g.cin = x->dims[1];
    for (int j = 0; j < 3; j++) g.in[j] = g.out[j] = g.k[j] = g.s[j] = g.d[j] = 1, g.p[j] = 0;
    return g;
}

static void fill_geom(const conv_case *c, const ogc_shape *x, const ogc_shape *w, geom *g) {
    *g = geom_of(c, x);
    int off = 3 - c->nsp;
    g->cout = c->transposed ? w->dims[1] * c->groups : w->dims[0];
    g->cin_g = g->cin / g->G, g->cout_g = g->cout / g->G;
    for (int d = 0; d < c->nsp; d++) {
        int64_t in = x->dims[2 + d], k = w->dims[2 + d];
        g->in[off + d] = in, g->k[off + d] = k, g->s[off + d] = c->s[d];
        g->p[off + d] = c->pl[d], g->d[off + d] = c->d[d];
        int64_t o =
            c->transposed
                ? (in - 1) * c->s[d] - c->pl[d] - c->ph[d] + c->d[d] * (k - 1) + c->op[d] + 1
                : (in + c->pl[d] + c->ph[d] - c->d[d] * (k - 1) - 1) / c->s[d] + 1;
        g->out[off + d] = o;
    }
}

static bool conv_shapes(const ogc_op *op, const char *layout, ogc_shape *in, ogc_shape *out) {
    const conv_case *c = case_of(op);
    static const char *const ok[] = {"contiguous", "strided", "offset", "mixed",
                                     "empty",      "large",   "wide"};
    bool any = false;
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) any |= !strcmp(layout, ok[i]);
    if (!any || (!strcmp(layout, "empty") && !c->bias)) return false; // (empty: all zero)
    bool b = big(layout);
    int64_t cin = b ? c->big_cin : c->cin, cout = b ? c->big_cout : c->cout;
    if (!strcmp(layout, "empty")) cin = 0; // no input channels: the output is the bias
    ogc_shape x = {.ndim = c->nsp + 2, .dims = {c->n, cin}};
    ogc_shape w = {.ndim = c->nsp + 2};
    w.dims[0] = c->transposed ? cin : cout;
    w.dims[1] = c->transposed ? cout / c->groups : cin / c->groups;
    for (int d = 0; d < c->nsp; d++)
        x.dims[2 + d] = b ? c->big_in[d] : c->in[d], w.dims[2 + d] = c->k[d];
    geom g;
    fill_geom(c, &x, &w, &g);
    *out = (ogc_shape){.ndim = x.ndim, .dims = {x.dims[0], g.cout}};
    for (int d = 0; d < c->nsp; d++) out->dims[2 + d] = g.out[3 - c->nsp + d];
    in[0] = x, in[1] = w;
    if (c->bias) in[2] = (ogc_shape){.ndim = 1, .dims = {g.cout}};
    return true;
}

// ---------------------------------------------------------------------------------------------
// Float64 references

static bool all_f32(const double *v, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if ((double)(float)v[i] != v[i]) return false;
    return true;
}

// cubeMathType 2's fp16 rounding of the operands when the products run in fp32 (`on`: the case
// has cubeMathType 2 and every operand is fp32 numbers). The fp32 / 16-bit kernel checks' data
// are; a float64 row's data (even with a narrower gradOutput: the products then run in float64,
// which ignores cubeMathType) and the formula check's points and perturbations are not (the
// rounding's steps have no derivative to compare), as in registry_matmul.c.
static double *rounded16(bool on, const double *v, int64_t n) {
    double *r = malloc(sizeof *r * (size_t)(n > 0 ? n : 1));
    for (int64_t i = 0; i < n; i++) r[i] = on ? og_f16_to_f32(og_f32_to_f16((float)v[i])) : v[i];
    return r;
}

// Calls f(ctx, xi, wi, yi) for every product term x[xi] * w[wi] of output y[yi].
typedef void (*term_fn)(void *ctx, int64_t xi, int64_t wi, int64_t yi);

static void each_term(const geom *g, term_fn f, void *ctx) {
    const int64_t KS = g->k[0] * g->k[1] * g->k[2];
    const int64_t I = g->in[0] * g->in[1] * g->in[2], O = g->out[0] * g->out[1] * g->out[2];
    // the gather (forward) walks the output positions, the scatter (transposed) the inputs
    const int64_t *walk = g->transposed ? g->in : g->out, *hit = g->transposed ? g->out : g->in;
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t grp = 0; grp < g->G; grp++)
            for (int64_t ci = 0; ci < g->cin_g; ci++)
                for (int64_t co = 0; co < g->cout_g; co++)
                    for (int64_t t = 0; t < KS; t++) {
                        int64_t kk[3] = {t / (g->k[1] * g->k[2]), t / g->k[2] % g->k[1],
                                         t % g->k[2]};
                        int64_t cx = grp * g->cin_g + ci, cy = grp * g->cout_g + co;
                        // weight [cout, cin_g, k] or, transposed, [cin, cout_g, k]
                        int64_t wi = g->transposed ? (cx * g->cout_g + co) * KS + t
                                                   : (cy * g->cin_g + ci) * KS + t;
                        int64_t xb = (n * g->cin + cx) * I, yb = (n * g->cout + cy) * O;
                        for (int64_t a = 0; a < walk[0]; a++) {
                            int64_t pa = a * g->s[0] - g->p[0] + kk[0] * g->d[0];
                            if (pa < 0 || pa >= hit[0]) continue;
                            for (int64_t b = 0; b < walk[1]; b++) {
                                int64_t pb = b * g->s[1] - g->p[1] + kk[1] * g->d[1];
                                if (pb < 0 || pb >= hit[1]) continue;
                                for (int64_t c = 0; c < walk[2]; c++) {
                                    int64_t pc = c * g->s[2] - g->p[2] + kk[2] * g->d[2];
                                    if (pc < 0 || pc >= hit[2]) continue;
                                    int64_t wpos = (a * walk[1] + b) * walk[2] + c;
                                    int64_t hpos = (pa * hit[1] + pb) * hit[2] + pc;
                                    if (g->transposed) // x at wpos scatters to y at hpos
                                        f(ctx, xb + wpos, wi, yb + hpos);
                                    else // y at wpos gathers x at hpos
                                        f(ctx, xb + hpos, wi, yb + wpos);
                                }
                            }
                        }
                    }
}

// The magnitude of Winograd F(4x4, 3x3)'s computation of dst from src (2-D, stride 1): every
// intermediate sum with its terms made non-negative, |A^T| (sum_i (|G| |k_oi| |G^T|) .
// (|B^T| |d_i| |B|)) |A| per 4x4 tile, to which each stage's rounding error is proportional.
// dst[N, G * cd, DH, DW](h, w) reads src[N, G * cs, SH, SW](h - ph + a, w - pw + b) through the
// tap k(o, i, a, b) (o: dst channel, i: src channel within the group). Adds into mag.
typedef struct wino_prod {
    const geom *g;
    int64_t cs, cd, SH, SW, DH, DW, ph, pw;
    const double *src, *w;
    double (*k)(const struct wino_prod *q, int64_t o, int64_t i, int a, int b);
} wino_prod;

static void wino_mag(const wino_prod *q, double *mag) {
    static const double Bt[6][6] = {{4, 0, 5, 0, 1, 0}, {0, 4, 4, 1, 1, 0}, {0, 4, 4, 1, 1, 0},
                                    {0, 2, 1, 2, 1, 0}, {0, 2, 1, 2, 1, 0}, {0, 4, 0, 5, 0, 1}};
    static const double Gm[6][3] = {{0.25, 0, 0},
                                    {1.0 / 6, 1.0 / 6, 1.0 / 6},
                                    {1.0 / 6, 1.0 / 6, 1.0 / 6},
                                    {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                    {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                    {0, 0, 1}}; // |B^T|, |G|, |A^T|
    static const double At[4][6] = {
        {1, 1, 1, 1, 1, 0}, {0, 1, 1, 2, 2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, 1, 8, 8, 1}};
    const geom *g = q->g;
    const int64_t CD = g->G * q->cd;
    // |G| |k| |G^T| of every filter (dst channel o, src channel i in its group), once
    double(*U)[36] = malloc(sizeof *U * (size_t)(CD * q->cs + 1));
    double(*V)[36] = malloc(sizeof *V * (size_t)(q->cs + 1));
    for (int64_t o = 0; o < CD; o++)
        for (int64_t i = 0; i < q->cs; i++) {
            double kk[3][3], u[6][3];
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++) kk[a][b] = fabs(q->k(q, o, i, a, b));
            for (int r = 0; r < 6; r++)
                for (int b = 0; b < 3; b++)
                    u[r][b] = Gm[r][0] * kk[0][b] + Gm[r][1] * kk[1][b] + Gm[r][2] * kk[2][b];
            for (int r = 0; r < 6; r++)
                for (int c = 0; c < 6; c++)
                    U[o * q->cs + i][r * 6 + c] =
                        u[r][0] * Gm[c][0] + u[r][1] * Gm[c][1] + u[r][2] * Gm[c][2];
        }
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t grp = 0; grp < g->G; grp++)
            for (int64_t h0 = 0; h0 < q->DH; h0 += 4)
                for (int64_t w0 = 0; w0 < q->DW; w0 += 4) {
                    for (int64_t i = 0; i < q->cs; i++) { // |B^T| |d_i| |B| of the tile's patches
                        double d[6][6], t[6][6];
                        int64_t at = ((n * g->G + grp) * q->cs + i) * q->SH * q->SW;
                        for (int r = 0; r < 6; r++)
                            for (int c = 0; c < 6; c++) {
                                int64_t h = h0 - q->ph + r, w = w0 - q->pw + c;
                                bool in = h >= 0 && h < q->SH && w >= 0 && w < q->SW;
                                d[r][c] = in ? fabs(q->src[at + h * q->SW + w]) : 0;
                            }
                        for (int r = 0; r < 6; r++)
                            for (int c = 0; c < 6; c++) {
                                t[r][c] = 0;
                                for (int j = 0; j < 6; j++) t[r][c] += Bt[r][j] * d[j][c];
                            }
                        for (int r = 0; r < 6; r++)
                            for (int c = 0; c < 6; c++) {
                                double v = 0;
                                for (int j = 0; j < 6; j++) v += t[r][j] * Bt[c][j];
                                V[i][r * 6 + c] = v;
                            }
                    }
                    for (int64_t o = grp * q->cd; o < (grp + 1) * q->cd; o++) {
                        double M[36] = {0};
                        for (int64_t i = 0; i < q->cs; i++)
                            for (int x = 0; x < 36; x++) M[x] += U[o * q->cs + i][x] * V[i][x];
                        for (int r = 0; r < 4; r++)
                            for (int c = 0; c < 4; c++) {
                                if (h0 + r >= q->DH || w0 + c >= q->DW) continue;
                                double v = 0;
                                for (int a = 0; a < 6; a++)
                                    for (int b = 0; b < 6; b++)
                                        v += At[r][a] * M[a * 6 + b] * At[c][b];
                                mag[((n * CD + o) * q->DH + h0 + r) * q->DW + w0 + c] += v;
                            }
                    }
                }
    free(U);
    free(V);
}

// The four products' taps. Weight [cout, cin_g, 3, 3], or transposed [cin, cout_g, 3, 3].
static double tap_fwd(const wino_prod *q, int64_t o, int64_t i, int a, int b) {
    return q->w[((o * q->g->cin_g + i) * 3 + a) * 3 + b]; // y from x
}
static double tap_data(const wino_prod *q, int64_t o, int64_t i, int a, int b) {
    int64_t grp = o / q->g->cin_g; // dx from dy: flipped, transposed
    return q
        ->w[(((grp * q->g->cout_g + i) * q->g->cin_g + o % q->g->cin_g) * 3 + 2 - a) * 3 + 2 - b];
}
static double tap_t_fwd(const wino_prod *q, int64_t o, int64_t i, int a, int b) {
    int64_t grp = o / q->g->cout_g; // transposed y from x: flipped, transposed
    return q
        ->w[(((grp * q->g->cin_g + i) * q->g->cout_g + o % q->g->cout_g) * 3 + 2 - a) * 3 + 2 - b];
}
static double tap_t_data(const wino_prod *q, int64_t o, int64_t i, int a, int b) {
    return q->w[((o * q->g->cout_g + i) * 3 + a) * 3 + b]; // transposed dx from dy
}

// The Winograd product from the x-space (to_y) or to it, with its taps.
static wino_prod wino_of(const geom *g, bool to_y, const double *src, const double *w) {
    wino_prod q = {.g = g, .src = src, .w = w};
    bool direct = to_y != g->transposed; // the direct convolution's forward product
    q.cs = to_y ? g->cin_g : g->cout_g, q.cd = to_y ? g->cout_g : g->cin_g;
    q.SH = to_y ? g->in[1] : g->out[1], q.SW = to_y ? g->in[2] : g->out[2];
    q.DH = to_y ? g->out[1] : g->in[1], q.DW = to_y ? g->out[2] : g->in[2];
    q.ph = direct ? g->p[1] : 2 - g->p[1], q.pw = direct ? g->p[2] : 2 - g->p[2];
    q.k = g->transposed ? (to_y ? tap_t_fwd : tap_t_data) : (to_y ? tap_fwd : tap_data);
    return q;
}

// (the sums compensated: the float64 rows' reference stays far more accurate than the kernel)
typedef struct fwd_ctx {
    const double *x, *w;
    ogc_ksum *y;
    double *mag;
    int64_t *count;
} fwd_ctx;

static void fwd_term(void *p, int64_t xi, int64_t wi, int64_t yi) {
    fwd_ctx *c = p;
    double t = c->x[xi] * c->w[wi];
    ogc_ksum_add(&c->y[yi], t);
    c->mag[yi] += fabs(t);
    c->count[yi]++;
}

static void conv_ref_forward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                             const ogc_shape *out, double *y, double *const *saved, double *mag,
                             int64_t *terms) {
    (void)saved;
    const conv_case *c = case_of(op);
    geom g;
    fill_geom(c, &in[0], &in[1], &g);
    int64_t ny = ogc_numel(out), nx = ogc_numel(&in[0]), nw = ogc_numel(&in[1]);
    bool r16 = c->cube == 2 && all_f32(x[0], nx) && all_f32(x[1], nw);
    double *xr = rounded16(r16, x[0], nx), *wr = rounded16(r16, x[1], nw);
    int64_t *count = calloc((size_t)(ny > 0 ? ny : 1), sizeof *count);
    ogc_ksum *sum = calloc((size_t)(ny > 0 ? ny : 1), sizeof *sum);
    int64_t O = ny / (g.N * g.cout > 0 ? g.N * g.cout : 1);
    for (int64_t i = 0; i < ny; i++) {
        double b = c->bias ? x[2][i / O % g.cout] : 0;
        sum[i].s = b, mag[i] = fabs(b);
    }
    fwd_ctx ctx = {xr, wr, sum, mag, count};
    each_term(&g, fwd_term, &ctx);
    for (int64_t i = 0; i < ny; i++) y[i] = ogc_ksum_value(&sum[i]);
    free(sum);
    if (c->wino) { // the transforms' magnitudes instead of the direct sum's
        for (int64_t i = 0; i < ny; i++) mag[i] = c->bias ? fabs(x[2][i / O % g.cout]) : 0;
        wino_prod q = wino_of(&g, true, xr, wr);
        wino_mag(&q, mag);
    }
    *terms = 1;
    for (int64_t i = 0; i < ny; i++)
        if (count[i] + 1 > *terms) *terms = count[i] + 1;
    free(count);
    free(xr);
    free(wr);
}

typedef struct bwd_ctx {
    const double *x, *w, *gy;
    ogc_ksum *gx, *gw;
    double *mx, *mw;
    int64_t *cx, *cw;
} bwd_ctx;

static void bwd_term(void *p, int64_t xi, int64_t wi, int64_t yi) {
    bwd_ctx *c = p;
    double a = c->gy[yi] * c->w[wi], b = c->gy[yi] * c->x[xi];
    ogc_ksum_add(&c->gx[xi], a), c->mx[xi] += fabs(a), c->cx[xi]++;
    ogc_ksum_add(&c->gw[wi], b), c->mw[wi] += fabs(b), c->cw[wi]++;
}

static void conv_ref_backward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                              const ogc_shape *out, const double *const *saved, const double *gy,
                              double *const *gx, double *const *mag, int64_t *terms) {
    (void)saved;
    const conv_case *c = case_of(op);
    geom g;
    fill_geom(c, &in[0], &in[1], &g);
    int64_t ny = ogc_numel(out), nx = ogc_numel(&in[0]), nw = ogc_numel(&in[1]);
    bool r16 = c->cube == 2 && all_f32(x[0], nx) && all_f32(x[1], nw) && all_f32(gy, ny);
    double *xr = rounded16(r16, x[0], nx), *wr = rounded16(r16, x[1], nw),
           *gr = rounded16(r16, gy, ny);
    ogc_ksum *sx = calloc((size_t)(nx > 0 ? nx : 1), sizeof *sx);
    ogc_ksum *sw = calloc((size_t)(nw > 0 ? nw : 1), sizeof *sw);
    double *mx = calloc((size_t)(nx > 0 ? nx : 1), sizeof *mx);
    double *mw = calloc((size_t)(nw > 0 ? nw : 1), sizeof *mw);
    int64_t *cx = calloc((size_t)(nx > 0 ? nx : 1), sizeof *cx);
    int64_t *cw = calloc((size_t)(nw > 0 ? nw : 1), sizeof *cw);
    bwd_ctx ctx = {xr, wr, gr, sx, sw, mx, mw, cx, cw};
    each_term(&g, bwd_term, &ctx);
    if (c->wino && gx[0]) { // gradInput through Winograd: the transforms' magnitudes
        memset(mx, 0, sizeof *mx * (size_t)nx);
        wino_prod q = wino_of(&g, false, gr, wr);
        wino_mag(&q, mx);
    }
    const int64_t *pcount[2] = {cx, cw};
    const ogc_ksum *pg[2] = {sx, sw};
    const double *pm[2] = {mx, mw};
    int64_t n[2] = {nx, nw};
    for (int k = 0; k < 2; k++) {
        if (!gx[k]) continue;
        terms[k] = 1;
        for (int64_t i = 0; i < n[k]; i++) {
            gx[k][i] = ogc_ksum_value(&pg[k][i]), mag[k][i] = pm[k][i];
            if (pcount[k][i] > terms[k]) terms[k] = pcount[k][i];
        }
    }
    if (c->bias && gx[2]) { // gradBias: gradOutput (unrounded: a sum, no product) per channel
        int64_t O = ny / (g.N * g.cout > 0 ? g.N * g.cout : 1);
        ogc_ksum *sb = calloc((size_t)(g.cout > 0 ? g.cout : 1), sizeof *sb);
        for (int64_t i = 0; i < ny; i++) {
            ogc_ksum_add(&sb[i / O % g.cout], gy[i]);
            mag[2][i / O % g.cout] += fabs(gy[i]);
        }
        for (int64_t i = 0; i < g.cout; i++) gx[2][i] = ogc_ksum_value(&sb[i]);
        free(sb);
        terms[2] = g.N * O > 0 ? g.N * O : 1;
    }
    free(xr), free(wr), free(gr), free(sx), free(sw), free(mx), free(mw), free(cx), free(cw);
}

// ---------------------------------------------------------------------------------------------
// Entry points

typedef struct arrays {
    aclIntArray *stride, *padding, *dilation, *out_pad;
} arrays;

static arrays make_arrays(const conv_case *c) {
    int64_t pad[6];
    int np = c->nsp;
    bool pairs = (c->nsp <= 2 && !c->transposed) || (c->nsp == 2 && c->transposed);
    bool asym = false;
    for (int d = 0; d < c->nsp; d++) asym |= c->pl[d] != c->ph[d];
    if (asym && pairs) {
        for (int d = 0; d < c->nsp; d++) pad[2 * d] = c->pl[d], pad[2 * d + 1] = c->ph[d];
        np = 2 * c->nsp;
    } else {
        for (int d = 0; d < c->nsp; d++) pad[d] = c->pl[d];
    }
    return (arrays){aclCreateIntArray(c->s, (uint64_t)c->nsp), aclCreateIntArray(pad, (uint64_t)np),
                    aclCreateIntArray(c->d, (uint64_t)c->nsp),
                    aclCreateIntArray(c->op, (uint64_t)c->nsp)};
}

static void free_arrays(arrays *a) {
    aclDestroyIntArray(a->stride);
    aclDestroyIntArray(a->padding);
    aclDestroyIntArray(a->dilation);
    aclDestroyIntArray(a->out_pad);
}

static int conv_forward(ogc_call *call) {
    const conv_case *c = case_of(call->op);
    arrays a = make_arrays(c);
    aclTensor *out = ogc_result_tensor(&call->results[0]);
    uint64_t ws;
    aclOpExecutor *ex;
    int st = aclnnConvolutionGetWorkspaceSize(
        call->in[0], call->in[1], c->bias ? call->in[2] : NULL, a.stride, a.padding, a.dilation,
        c->transposed, a.out_pad, c->groups, out, c->cube, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnConvolution);
    aclDestroyTensor(out);
    free_arrays(&a);
    return st;
}

static int conv_backward(ogc_call *call) {
    const ogc_op *op = call->op;
    const conv_case *c = case_of(op);
    arrays a = make_arrays(c);
    bool mask[3] = {false, false, false};
    aclTensor *g[3] = {NULL, NULL, NULL};
    int r = 0;
    for (int k = 0; k < op->nin; k++)
        if (op->in[k].differentiable) mask[k] = true, g[k] = ogc_result_tensor(&call->results[r++]);
    aclBoolArray *m = aclCreateBoolArray(mask, 3);
    int64_t cout = call->grad_out->dims[1];
    aclIntArray *bias_sizes = aclCreateIntArray(&cout, 1);
    uint64_t ws;
    aclOpExecutor *ex;
    int st = aclnnConvolutionBackwardGetWorkspaceSize(
        call->grad_out, call->in[0], call->in[1], c->bias ? bias_sizes : NULL, a.stride, a.padding,
        a.dilation, c->transposed, a.out_pad, (int)c->groups, m, c->cube, g[0], g[1], g[2], &ws,
        &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnConvolutionBackward);
    for (int k = 0; k < 3; k++)
        if (g[k]) aclDestroyTensor(g[k]);
    aclDestroyBoolArray(m);
    aclDestroyIntArray(bias_sizes);
    free_arrays(&a);
    return st;
}

// ---------------------------------------------------------------------------------------------

#define API "aclnnConvolution + aclnnConvolutionBackward"
static const double attrs[][2] = {{0, 0},  {1, 0},  {2, 0},  {3, 0},  {4, 0},  {5, 0},  {6, 0},
                                  {7, 0},  {8, 0},  {9, 0},  {10, 0}, {11, 0}, {12, 0}, {13, 0},
                                  {14, 0}, {15, 0}, {16, 0}, {17, 0}, {18, 0}};

#define CONV_ENTRY(NAME, CASE, DTYPES, NIN, X, W, B)                                               \
    {                                                                                              \
        .name = NAME, .api = API, .nin = NIN, .in = {{"input", X}, {"weight", W}, {"bias", B}},    \
        .attrs = attrs[CASE], .dtypes = DTYPES, .lo = -2, .hi = 2, .fp32_ulps = 4,                 \
        .forward = conv_forward, .backward = conv_backward, .shapes = conv_shapes,                 \
        .ref_forward_tensor = conv_ref_forward, .ref_backward_tensor = conv_ref_backward,          \
    }

static const ogc_op conv_ops[] = {
    CONV_ENTRY("conv2d", 0, OG_DTS_FLOATING64, 3, true, true, true),
    CONV_ENTRY("conv2d_stride2", 1, OG_DTS_FLOATING64, 3, true, true, true),
    CONV_ENTRY("conv2d_stride3_pad", 2, OG_DTS_FLOATING64, 3, true, true, true),
    CONV_ENTRY("conv2d_dilation", 3, OG_DTS_FLOATING64, 3, true, true, true),
    CONV_ENTRY("conv2d_groups", 4, OG_DTS_FLOATING64, 3, true, true, true),
    CONV_ENTRY("conv2d_depthwise", 5, OG_DTS_FLOATING64, 3, true, true, true),
    CONV_ENTRY("conv1d", 6, OG_DTS_FLOATING64, 3, true, true, true),
    CONV_ENTRY("conv3d", 7, OG_DTS_FLOATING64, 3, true, true, true),
    CONV_ENTRY("conv2d_1x1_nobias", 8, OG_DTS_FLOATING64, 2, true, true, false),
    CONV_ENTRY("conv_transpose2d", 9, OG_DTS_FLOATING64, 3, true, true, true),
    CONV_ENTRY("conv_transpose2d_groups", 10, OG_DTS_FLOATING64, 3, true, true, true),
    CONV_ENTRY("conv_transpose1d", 11, OG_DTS_FLOATING64, 3, true, true, true),
    CONV_ENTRY("conv_transpose3d", 12, OG_DTS_FLOATING64, 3, true, true, true),
    CONV_ENTRY("conv2d_cube2", 13, OG_DT(ACL_FLOAT) | OG_DT(ACL_DOUBLE), 3, true, true, true),
    CONV_ENTRY("conv1d_depthwise", 14, OG_DTS_FLOATING64, 3, true, true, true),
    CONV_ENTRY("conv_transpose2d_depthwise", 15, OG_DTS_FLOATING64, 3, true, true, true),
    CONV_ENTRY("conv2d_winograd", 16, OG_DT(ACL_FLOAT) | OG_DT(ACL_DOUBLE), 3, true, true, true),
    CONV_ENTRY("conv_transpose2d_winograd", 17, OG_DT(ACL_FLOAT) | OG_DT(ACL_DOUBLE), 3, true, true,
               true),
    CONV_ENTRY("conv2d_5x5_gather", 18, OG_DTS_FLOATING64, 3, true, true, true),
    CONV_ENTRY("conv2d_mask_input", 1, OG_DTS_FLOATING64, 3, true, false, false),
    CONV_ENTRY("conv2d_mask_weight_bias", 2, OG_DTS_FLOATING64, 3, false, true, true),
};

OGC_DEFINE_FAMILY(conv, conv_ops)
