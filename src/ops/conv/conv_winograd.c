/* Winograd F(4x4, 3x3) (conv_winograd.h): the three transforms as CUSTOM steps around one GEMM
 * step. A product maps src [N, G * cin, SH, SW] to dst [N, G * cout, DH, DW]:
 *   dst[n, o, h, w] = sum_{i, kh, kw} k(o, i, kh, kw) * src[n, i, h - pad_h + kh, w - pad_w + kw]
 * with k the weight (the forward) or the weight flipped and transposed (the data product, whose
 * src is gradOutput and pad 2 - the forward's padding). */
#include "ops/conv/conv_winograd.h"

#include <stdlib.h>
#include <string.h>

#include "engine/isa_table.h"
#include "opgrad/opgrad.h"
#include "runtime/cpu.h"
#include "runtime/pool.h"

typedef void (*wino_fn)(const float *, float *);
static const wino_fn input_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_wino_input);
static const wino_fn output_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_wino_output);

static int winograd_switch = -1; // -1: from OPGRAD_WINOGRAD (default on)

int opgrad_set_winograd(int on) {
    int prev = opgrad_get_winograd();
    winograd_switch = on ? 1 : 0;
    return prev;
}

int opgrad_get_winograd(void) {
    if (winograd_switch >= 0) return winograd_switch;
    const char *e = getenv("OPGRAD_WINOGRAD");
    return !(e && e[0] == '0');
}

bool og_conv_wino_eligible(const og_conv_geom *g, aclDataType src_dt, aclDataType w_dt,
                           aclDataType dst_dt, aclDataType round_ab) {
    return opgrad_get_winograd() && g->in[0] == 1 && g->out[0] == 1 && g->k[0] == 1 &&
           g->k[1] == 3 && g->k[2] == 3 && g->s[1] == 1 && g->s[2] == 1 && g->d[1] == 1 &&
           g->d[2] == 1 && src_dt == ACL_FLOAT && w_dt == ACL_FLOAT && dst_dt == ACL_FLOAT &&
           round_ab == ACL_FLOAT && g->ci_g >= 8 && g->co_g >= 8 &&
           // enough 4x4 tiles: with few (ResNet's 7x7 layers: 32 at a batch of 8) the per-call
           // kernel transform and the 36 thin products lose to the implicit GEMM (2x, measured)
           g->N * ((g->out[1] + 3) / 4) * ((g->out[2] + 3) / 4) >= 64;
}

typedef struct wino_params {
    int64_t N, G, cin, cout; // channels per group: src, dst
    int64_t SH, SW, DH, DW;  // spatial extents
    int64_t pad_h, pad_w;    // dst (h, w) reads src from (h - pad_h, w - pad_w)
    int64_t th, tw, T;       // tiles: rows, columns, all (N * th * tw)
    bool flip;               // the data product: k(o, i, t) = w(i, o, 8 - t)
    og_conv_tensor src, dst, w, bias;
    bool has_bias;
    int u_slot, v_slot, m_slot; // [36, G, cout, cin], [36, G, cin, T], [36, G, cout, T]
    opgrad_isa isa;
    int threads;
    const aclOpExecutor *e; // (phase 2)
} wino_params;

static const float *fptr(const wino_params *q, int slot) {
    return (const float *)og_executor_addr(q->e, slot);
}

// U[xi, g, o, i] = (G k G^T)[xi] in double, rounded once. Unit: one (g, o); the input
// channels in blocks of 32, innermost (the loops vectorize, the stores are runs along i).
static void weight_unit(void *ctx, int unit, int slot) {
    (void)slot;
    const wino_params *q = ctx;
    enum { IB = 32 };
    const int64_t g = unit / q->cout, o = unit % q->cout;
    const float *w = fptr(q, q->w.slot);
    float *U = (float *)fptr(q, q->u_slot);
    const int64_t *ws = q->w.strides, plane = q->G * q->cout * q->cin;
    const double c6 = 1.0 / 6, c12 = 1.0 / 12, c24 = 1.0 / 24;
    double k[3][3][IB], t[6][3][IB], u[IB];
    for (int64_t i0 = 0; i0 < q->cin; i0 += IB) {
        const int64_t ni = q->cin - i0 < IB ? q->cin - i0 : IB;
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                for (int64_t j = 0; j < ni; j++) {
                    int64_t i =
                        i0 + j; // forward: w[g*cout+o, i, a, b]; data: w[g*cin+i, o, 2-a, 2-b]
                    int64_t off =
                        q->flip ? (g * q->cin + i) * ws[0] + o * ws[1] + (2 - a) * ws[3] +
                                      (2 - b) * ws[4]
                                : (g * q->cout + o) * ws[0] + i * ws[1] + a * ws[3] + b * ws[4];
                    k[a][b][j] = w[off];
                }
        // t = G k (rows of G: 1/4 (1,0,0), -1/6 (1,1,1), -1/6 (1,-1,1), (1/24, 1/12, 1/6),
        // (1/24, -1/12, 1/6), (0,0,1)), then U = t G^T the same way along the columns
        for (int b = 0; b < 3; b++)
            for (int64_t j = 0; j < ni; j++) {
                double k0 = k[0][b][j], k1 = k[1][b][j], k2 = k[2][b][j];
                t[0][b][j] = 0.25 * k0;
                t[1][b][j] = -c6 * (k0 + k1 + k2);
                t[2][b][j] = -c6 * (k0 - k1 + k2);
                t[3][b][j] = c24 * k0 + c12 * k1 + c6 * k2;
                t[4][b][j] = c24 * k0 - c12 * k1 + c6 * k2;
                t[5][b][j] = k2;
            }
        for (int r = 0; r < 6; r++)
            for (int c = 0; c < 6; c++) {
                for (int64_t j = 0; j < ni; j++) {
                    double t0 = t[r][0][j], t1 = t[r][1][j], t2 = t[r][2][j];
                    double v = c == 0   ? 0.25 * t0
                               : c == 1 ? -c6 * (t0 + t1 + t2)
                               : c == 2 ? -c6 * (t0 - t1 + t2)
                               : c == 3 ? c24 * t0 + c12 * t1 + c6 * t2
                               : c == 4 ? c24 * t0 - c12 * t1 + c6 * t2
                                        : t2;
                    u[j] = v;
                }
                float *dst = U + (r * 6 + c) * plane + (g * q->cout + o) * q->cin + i0;
                for (int64_t j = 0; j < ni; j++) dst[j] = (float)u[j];
            }
    }
}

// The tiles of one tile row (n, th) are consecutive in T: t = (n * th + r) * tw + c.

// V[xi, g, i, t] = (B^T d B)[xi] of the 6x6 src patches of one tile row, 8 tiles at a time: the
// 6 src rows under 8 tiles are one run of 34 columns each, copied (zero outside src) into lines,
// from which the patches are dealt out. Unit: (g, i, n, tile row).
static void input_unit(void *ctx, int unit, int slot) {
    (void)slot;
    const wino_params *q = ctx;
    const int64_t rows = q->N * q->th, gi = unit / rows, nr = unit % rows;
    const int64_t g = gi / q->cin, i = gi % q->cin, n = nr / q->th, h0 = nr % q->th * 4;
    const float *src = fptr(q, q->src.slot);
    float *V = (float *)fptr(q, q->v_slot);
    const int64_t *ss = q->src.strides, plane = q->G * q->cin * q->T;
    const float *sp = src + n * ss[0] + (g * q->cin + i) * ss[1];
    enum { SPAN = 4 * OG_WINO_LANES + 2 };
    _Alignas(64) float line[6][SPAN], patch[36 * OG_WINO_LANES], v[36 * OG_WINO_LANES];
    for (int64_t c0 = 0; c0 < q->tw; c0 += OG_WINO_LANES) {
        const int64_t nl = q->tw - c0 < OG_WINO_LANES ? q->tw - c0 : OG_WINO_LANES;
        const int64_t x0 = c0 * 4 - q->pad_w; // src column of line[.][0]
        int64_t lo = x0 < 0 ? -x0 : 0, hi = q->SW - x0 < SPAN ? q->SW - x0 : SPAN;
        if (hi < lo) hi = lo;
        for (int r = 0; r < 6; r++) {
            int64_t h = h0 - q->pad_h + r;
            if (h < 0 || h >= q->SH) {
                memset(line[r], 0, sizeof line[r]);
                continue;
            }
            for (int64_t c = 0; c < lo; c++) line[r][c] = 0;
            const float *row = sp + h * ss[3] + x0 * ss[4];
            if (ss[4] == 1)
                memcpy(line[r] + lo, row + lo, (size_t)(hi - lo) * sizeof(float));
            else
                for (int64_t c = lo; c < hi; c++) line[r][c] = row[c * ss[4]];
            for (int64_t c = hi; c < SPAN; c++) line[r][c] = 0;
        }
        for (int r = 0; r < 6; r++)
            for (int c = 0; c < 6; c++)
                for (int l = 0; l < OG_WINO_LANES; l++)
                    patch[(r * 6 + c) * OG_WINO_LANES + l] = line[r][4 * l + c];
        input_kernels[q->isa](patch, v);
        float *dst = V + (g * q->cin + i) * q->T + nr * q->tw + c0;
        if (nl == OG_WINO_LANES) // (a constant size: inlined 32-byte moves)
            for (int xi = 0; xi < 36; xi++)
                memcpy(dst + xi * plane, v + xi * OG_WINO_LANES, OG_WINO_LANES * sizeof(float));
        else
            for (int xi = 0; xi < 36; xi++)
                memcpy(dst + xi * plane, v + xi * OG_WINO_LANES, (size_t)nl * sizeof(float));
    }
}

// dst tiles = A^T M A (+ bias), cropped, for one tile row, 8 tiles at a time: each of the 4 dst
// rows gets one run of up to 32 columns. Unit: (g, o, n, tile row).
static void output_unit(void *ctx, int unit, int slot) {
    (void)slot;
    const wino_params *q = ctx;
    const int64_t rows = q->N * q->th, go = unit / rows, nr = unit % rows;
    const int64_t g = go / q->cout, o = go % q->cout, n = nr / q->th, h0 = nr % q->th * 4;
    const float *M = fptr(q, q->m_slot);
    float *dst = (float *)fptr(q, q->dst.slot);
    const int64_t *ds = q->dst.strides, plane = q->G * q->cout * q->T;
    float b = 0;
    if (q->has_bias) b = fptr(q, q->bias.slot)[(g * q->cout + o) * q->bias.strides[1]];
    float *dp = dst + n * ds[0] + (g * q->cout + o) * ds[1];
    _Alignas(64) float m[36 * OG_WINO_LANES], y[16 * OG_WINO_LANES], line[4 * OG_WINO_LANES];
    for (int64_t c0 = 0; c0 < q->tw; c0 += OG_WINO_LANES) {
        const int64_t nl = q->tw - c0 < OG_WINO_LANES ? q->tw - c0 : OG_WINO_LANES;
        const float *src = M + (g * q->cout + o) * q->T + nr * q->tw + c0;
        if (nl == OG_WINO_LANES) // (a constant size: inlined 32-byte moves)
            for (int xi = 0; xi < 36; xi++)
                memcpy(m + xi * OG_WINO_LANES, src + xi * plane, OG_WINO_LANES * sizeof(float));
        else
            for (int xi = 0; xi < 36; xi++) {
                memcpy(m + xi * OG_WINO_LANES, src + xi * plane, (size_t)nl * sizeof(float));
                for (int64_t l = nl; l < OG_WINO_LANES; l++) m[xi * OG_WINO_LANES + l] = 0;
            }
        output_kernels[q->isa](m, y);
        const int64_t w0 = c0 * 4, nw = q->DW - w0 < 4 * nl ? q->DW - w0 : 4 * nl;
        for (int r = 0; r < 4 && h0 + r < q->DH; r++) {
            for (int c = 0; c < 4; c++)
                for (int l = 0; l < OG_WINO_LANES; l++)
                    line[4 * l + c] = y[(r * 4 + c) * OG_WINO_LANES + l] + b;
            float *row = dp + (h0 + r) * ds[3] + w0 * ds[4];
            if (ds[4] == 1 && nw == 4 * OG_WINO_LANES)
                memcpy(row, line, sizeof line);
            else if (ds[4] == 1)
                memcpy(row, line, (size_t)nw * sizeof(float));
            else
                for (int64_t c = 0; c < nw; c++) row[c * ds[4]] = line[c];
        }
    }
}

typedef enum { WEIGHT, INPUT, OUTPUT } stage;
typedef struct stage_params {
    wino_params q;
    stage s;
} stage_params;

static void stage_run(const aclOpExecutor *e, const void *params, char *scratch) {
    (void)scratch;
    stage_params sp = *(const stage_params *)params;
    sp.q.e = e;
    const wino_params *q = &sp.q;
    const int64_t rows = q->N * q->th;
    if (sp.s == WEIGHT)
        og_parallel_for((int)(q->G * q->cout), q->threads, weight_unit, &sp.q);
    else if (sp.s == INPUT)
        og_parallel_for((int)(q->G * q->cin * rows), q->threads, input_unit, &sp.q);
    else
        og_parallel_for((int)(q->G * q->cout * rows), q->threads, output_unit, &sp.q);
}

static void wino_steps(og_prog *p, wino_params *q) {
    q->th = (q->DH + 3) / 4, q->tw = (q->DW + 3) / 4, q->T = q->N * q->th * q->tw;
    q->isa = og_isa(), q->threads = og_num_threads();
    const aclTensor *t;
    q->u_slot = og_prog_temp(p, ACL_FLOAT, 4, (const int64_t[]){36, q->G, q->cout, q->cin}, &t);
    q->v_slot = og_prog_temp(p, ACL_FLOAT, 4, (const int64_t[]){36, q->G, q->cin, q->T}, &t);
    q->m_slot = og_prog_temp(p, ACL_FLOAT, 4, (const int64_t[]){36, q->G, q->cout, q->T}, &t);
    if (q->u_slot < 0 || q->v_slot < 0 || q->m_slot < 0) return; // publish reports it
    stage_params sp = {.q = *q, .s = WEIGHT};
    og_prog_custom(p, stage_run, &sp, sizeof sp, (const int[]){q->w.slot, q->u_slot}, 2, 0);
    sp.s = INPUT;
    og_prog_custom(p, stage_run, &sp, sizeof sp, (const int[]){q->src.slot, q->v_slot}, 2, 0);
    og_gemm_op op = {.nbatch = 1,
                     .batch = {36 * q->G},
                     .M = q->cout,
                     .N = q->T,
                     .K = q->cin,
                     .alpha = 1,
                     .beta = 0,
                     .round_ab = ACL_FLOAT,
                     .epi = OG_GEMM_EPI_NONE};
    op.a = (og_gemm_mat){.present = true,
                         .slot = q->u_slot,
                         .dtype = ACL_FLOAT,
                         .rs = q->cin,
                         .cs = 1,
                         .bstride = {q->cout * q->cin}};
    op.b = (og_gemm_mat){.present = true,
                         .slot = q->v_slot,
                         .dtype = ACL_FLOAT,
                         .rs = q->T,
                         .cs = 1,
                         .bstride = {q->cin * q->T}};
    op.c = (og_gemm_mat){.present = true,
                         .slot = q->m_slot,
                         .dtype = ACL_FLOAT,
                         .rs = q->T,
                         .cs = 1,
                         .bstride = {q->cout * q->T}};
    og_prog_gemm(p, &op);
    sp.s = OUTPUT;
    int slots[3] = {q->m_slot, q->dst.slot, q->has_bias ? q->bias.slot : q->m_slot};
    og_prog_custom(p, stage_run, &sp, sizeof sp, slots, 3, 0);
}

void og_conv_wino_forward(og_prog *p, const og_conv_geom *g, const og_conv_tensor *x,
                          const og_conv_tensor *w, const og_conv_tensor *bias,
                          const og_conv_tensor *y) {
    wino_params q = {.N = g->N,
                     .G = g->G,
                     .cin = g->ci_g,
                     .cout = g->co_g,
                     .SH = g->in[1],
                     .SW = g->in[2],
                     .DH = g->out[1],
                     .DW = g->out[2],
                     .pad_h = g->pad[1],
                     .pad_w = g->pad[2],
                     .src = *x,
                     .dst = *y,
                     .w = *w,
                     .has_bias = bias != NULL};
    if (bias) q.bias = *bias;
    wino_steps(p, &q);
}

void og_conv_wino_data(og_prog *p, const og_conv_geom *g, const og_conv_tensor *y,
                       const og_conv_tensor *w, const og_conv_tensor *bias,
                       const og_conv_tensor *x) {
    // x[h] = sum_t w[t] y[h + pad - t] = sum_t' w[2 - t'] y[h - (2 - pad) + t']
    wino_params q = {.N = g->N,
                     .G = g->G,
                     .cin = g->co_g,
                     .cout = g->ci_g,
                     .SH = g->out[1],
                     .SW = g->out[2],
                     .DH = g->in[1],
                     .DW = g->in[2],
                     .pad_h = 2 - g->pad[1],
                     .pad_w = 2 - g->pad[2],
                     .flip = true,
                     .src = *y,
                     .dst = *x,
                     .w = *w,
                     .has_bias = bias != NULL};
    if (bias) q.bias = *bias;
    wino_steps(p, &q);
}
