/* A convolution's three products (conv.h): the choice among the algorithms (the direct
 * depthwise kernel, conv_dw.c; Winograd, conv_winograd.c; here: GEMM + col2im, the 1x1 products,
 * the implicit GEMM, with images folded into one product where planes are small) and the GEMM
 * steps with the generated operands they pack from: the im2col matrix of X, the stride gather of
 * Y, the weight read transposed, Y read transposed. A generator writes one row run of its matrix;
 * runs follow the innermost spatial dim, so a stride-1 run is one contiguous (converting) load
 * and the padding is zeros written around it. */
#include <string.h>

#include "engine/convert.h"
#include "ops/conv/conv.h"
#include "ops/conv/conv_dw.h"
#include "ops/conv/conv_winograd.h"
#include "ops/norm/norm_kernel.h"
#include "runtime/cpu.h"
#include "runtime/pool.h"
#include "tensor/dtype.h"

og_conv_tensor og_conv_tensor_of(const aclTensor *t, int slot) {
    og_conv_tensor c = {.slot = slot, .dtype = t->dtype};
    for (int d = 0; d < 5; d++) c.dims[d] = 1, c.strides[d] = 0;
    if (t->ndim == 1) { // a bias: channels only
        c.dims[1] = t->dims[0], c.strides[1] = t->strides[0];
        return c;
    }
    int nsp = t->ndim - 2;
    c.dims[0] = t->dims[0], c.strides[0] = t->strides[0];
    c.dims[1] = t->dims[1], c.strides[1] = t->strides[1];
    for (int j = 0; j < nsp; j++)
        c.dims[5 - nsp + j] = t->dims[2 + j], c.strides[5 - nsp + j] = t->strides[2 + j];
    return c;
}

// What the generators of one GEMM step read (og_gemm_op.gen_params).
typedef struct gen_params {
    og_conv_geom g;
    aclDataType adt, bdt; // the A and B tensors' dtypes
    int64_t as[5], bs[5]; // their strides (canonical 5-D, elements)
    int64_t aesz, besz;   // element sizes
    bool a_wcontig;       // A is the weight and its (t) dims are one contiguous run
} gen_params;
_Static_assert(sizeof(gen_params) <= OG_GEMM_GEN_PARAMS, "gen_params fits the GEMM op");

// A generator writes its row into `out` as fp32 (cv: the fp32 engine's conversions) or, cv NULL,
// as double (the GEMM's float64 loop, og_gemm_op.f64); at: the index of the first value.
static void put_zero(const og_convert_table *cv, void *out, int64_t at, int64_t n) {
    if (cv)
        memset((float *)out + at, 0, (size_t)n * sizeof(float));
    else
        memset((double *)out + at, 0, (size_t)n * sizeof(double));
}

static void put_run(const og_convert_table *cv, const char *src, aclDataType dt, int64_t stride,
                    void *out, int64_t at, int64_t n) {
    if (cv)
        og_load_run(cv, src, dt, stride, (float *)out + at, n);
    else
        og_load_run64(src, dt, stride, (double *)out + at, n);
}

static void put_elem(const og_convert_table *cv, const char *src, aclDataType dt, void *out,
                     int64_t at) {
    if (cv)
        ((float *)out)[at] = og_load_elem(src, dt);
    else
        og_load_run64(src, dt, 0, (double *)out + at, 1);
}

// name_f32 (og_gemm_gen_fn) and name_f64 (og_gemm_gen64_fn) of the generator name(..., cv, out).
#define GEN_PAIR(name)                                                                             \
    static void name##_f32(const void *params, const og_convert_table *cv, const char *base,       \
                           int64_t row, int64_t col, int64_t n, float *out) {                      \
        name(params, cv, base, row, col, n, out);                                                  \
    }                                                                                              \
    static void name##_f64(const void *params, const char *base, int64_t row, int64_t col,         \
                           int64_t n, double *out) {                                               \
        name(params, NULL, base, row, col, n, out);                                                \
    }

// Kernel offset t = (kd, kh, kw) of the flat index within KS.
static void split_k(const og_conv_geom *g, int64_t t, int64_t kk[3]) {
    kk[2] = t % g->k[2];
    kk[1] = t / g->k[2] % g->k[1];
    kk[0] = t / (g->k[2] * g->k[1]);
}

// col(X): row r = (ci, t), column c = (n, od, oh, ow) (n > 0 where the columns run over the
// batch: the weight product, a folded forward) = X[n, ci, od*s - pad + kd*d, ...], zero outside X.
static void run_im2col(const gen_params *q, const og_convert_table *cv, const char *base,
                       aclDataType dt, const int64_t *xs, int64_t esz, int64_t row, int64_t col,
                       int64_t n, void *out) {
    const og_conv_geom *g = &q->g;
    int64_t kk[3];
    split_k(g, row % g->KS, kk);
    const char *xc = base + row / g->KS * xs[1] * esz;
    const int64_t OW = g->out[2], OHW = g->out[1] * OW;
    for (int64_t c = col, end = col + n; c < end;) {
        int64_t nn = c / g->O, rem = c % g->O;
        int64_t od = rem / OHW, oh = rem / OW % g->out[1], ow = rem % OW;
        int64_t run = OW - ow < end - c ? OW - ow : end - c;
        const int64_t o = c - col;
        c += run;
        int64_t id = od * g->s[0] - g->pad[0] + kk[0] * g->d[0];
        int64_t ih = oh * g->s[1] - g->pad[1] + kk[1] * g->d[1];
        if (id < 0 || id >= g->in[0] || ih < 0 || ih >= g->in[1]) {
            put_zero(cv, out, o, run);
            continue;
        }
        // iw = iw0 + j * s for j < run; valid for j in [lo, hi)
        const int64_t s = g->s[2], W = g->in[2];
        int64_t iw0 = ow * s - g->pad[2] + kk[2] * g->d[2];
        int64_t lo = iw0 >= 0 ? 0 : (-iw0 + s - 1) / s;
        int64_t hi = iw0 >= W ? 0 : (W - 1 - iw0) / s + 1;
        if (hi > run) hi = run;
        if (lo > hi) lo = hi;
        put_zero(cv, out, o, lo);
        if (hi > lo)
            put_run(cv, xc + (nn * xs[0] + id * xs[2] + ih * xs[3] + (iw0 + lo * s) * xs[4]) * esz,
                    dt, s * xs[4], out, o + lo, hi - lo);
        put_zero(cv, out, o + hi, run - hi);
    }
}

static void gen_im2col_a(const void *params, const og_convert_table *cv, const char *base,
                         int64_t row, int64_t col, int64_t n, void *out) {
    const gen_params *q = params;
    run_im2col(q, cv, base, q->adt, q->as, q->aesz, row, col, n, out);
}
GEN_PAIR(gen_im2col_a)

static void gen_im2col_b(const void *params, const og_convert_table *cv, const char *base,
                         int64_t row, int64_t col, int64_t n, void *out) {
    const gen_params *q = params;
    run_im2col(q, cv, base, q->bdt, q->bs, q->besz, row, col, n, out);
}
GEN_PAIR(gen_im2col_b)

// gather(Y): row r = (co, t), column c = (id, ih, iw) = Y[co, (id + pad - kd*d) / s, ...] where
// each division is exact and lands in Y, else zero.
static void gen_gather_b(const void *params, const og_convert_table *cv, const char *base,
                         int64_t row, int64_t col, int64_t n, void *out) {
    const gen_params *q = params;
    const og_conv_geom *g = &q->g;
    const int64_t *ys = q->bs, esz = q->besz;
    int64_t kk[3];
    split_k(g, row % g->KS, kk);
    const char *yc = base + row / g->KS * ys[1] * esz;
    const int64_t IW = g->in[2], IHW = g->in[1] * IW, s = g->s[2];
    for (int64_t c = col, end = col + n; c < end;) {
        // (nn > 0: images folded into the columns, see fold_images)
        int64_t nn = c / g->I, id = c % g->I / IHW, ih = c / IW % g->in[1], iw = c % IW;
        int64_t run = IW - iw < end - c ? IW - iw : end - c;
        const int64_t o = c - col;
        c += run;
        int64_t td = id + g->pad[0] - kk[0] * g->d[0], th = ih + g->pad[1] - kk[1] * g->d[1];
        if (td < 0 || td % g->s[0] || td / g->s[0] >= g->out[0] || th < 0 || th % g->s[1] ||
            th / g->s[1] >= g->out[1]) {
            put_zero(cv, out, o, run);
            continue;
        }
        const char *yrow = yc + (nn * ys[0] + td / g->s[0] * ys[2] + th / g->s[1] * ys[3]) * esz;
        // tw = tw0 + j; j contributes when tw >= 0, s | tw and tw / s < OW
        int64_t tw0 = iw + g->pad[2] - kk[2] * g->d[2];
        int64_t j = tw0 >= 0 ? (s - tw0 % s) % s : -tw0; // first j with s | tw, tw >= 0
        int64_t cnt = 0;
        if (j < run) {
            int64_t ow0 = (tw0 + j) / s, last = (run - 1 - j) / s + 1; // js: j, j + s, ...
            cnt = g->out[2] - ow0 < last ? g->out[2] - ow0 : last;
            if (cnt < 0) cnt = 0;
            if (s == 1) {
                put_zero(cv, out, o, j);
                if (cnt) put_run(cv, yrow + ow0 * ys[4] * esz, q->bdt, ys[4], out, o + j, cnt);
                put_zero(cv, out, o + j + cnt, run - j - cnt);
                continue;
            }
            put_zero(cv, out, o, run);
            if (!cv) { // (float64: one element at a time)
                for (int64_t m = 0; m < cnt; m++)
                    put_elem(cv, yrow + (ow0 + m) * ys[4] * esz, q->bdt, out, o + j + m * s);
                continue;
            }
            float v[64], *of = (float *)out + o;
            for (int64_t m = 0; m < cnt; m += 64) {
                int64_t len = cnt - m < 64 ? cnt - m : 64;
                og_load_run(cv, yrow + (ow0 + m) * ys[4] * esz, q->bdt, ys[4], v, len);
                for (int64_t i = 0; i < len; i++) of[j + (m + i) * s] = v[i];
            }
            continue;
        }
        put_zero(cv, out, o, run);
    }
}
GEN_PAIR(gen_gather_b)

// W as the forward's A when its (ci, t) dims are no single stride: row co, column (ci, t).
static void gen_weight_a(const void *params, const og_convert_table *cv, const char *base,
                         int64_t row, int64_t col, int64_t n, void *out) {
    const gen_params *q = params;
    const og_conv_geom *g = &q->g;
    int64_t kk[3];
    for (int64_t j = 0; j < n; j++) {
        int64_t c = col + j;
        split_k(g, c % g->KS, kk);
        int64_t off = row * q->as[0] + c / g->KS * q->as[1] + kk[0] * q->as[2] + kk[1] * q->as[3] +
                      kk[2] * q->as[4];
        put_elem(cv, base + off * q->aesz, q->adt, out, j);
    }
}
GEN_PAIR(gen_weight_a)

// W^T as the data product's A: row ci, column (co, t) = W[co, ci, t].
static void gen_weight_t_a(const void *params, const og_convert_table *cv, const char *base,
                           int64_t row, int64_t col, int64_t n, void *out) {
    const gen_params *q = params;
    const og_conv_geom *g = &q->g;
    int64_t kk[3];
    for (int64_t c = col, end = col + n; c < end;) {
        int64_t co = c / g->KS, t = c % g->KS;
        int64_t run = g->KS - t < end - c ? g->KS - t : end - c;
        const char *wc = base + (co * q->as[0] + row * q->as[1]) * q->aesz;
        if (q->a_wcontig) {
            put_run(cv, wc + t * q->as[4] * q->aesz, q->adt, q->as[4], out, c - col, run);
        } else {
            for (int64_t j = 0; j < run; j++) {
                split_k(g, t + j, kk);
                put_elem(cv,
                         wc + (kk[0] * q->as[2] + kk[1] * q->as[3] + kk[2] * q->as[4]) * q->aesz,
                         q->adt, out, c - col + j);
            }
        }
        c += run;
    }
}
GEN_PAIR(gen_weight_t_a)

// Y^T as the weight product's B: row (n, o), column co = Y[n, co, o].
static void gen_yt_b(const void *params, const og_convert_table *cv, const char *base, int64_t row,
                     int64_t col, int64_t n, void *out) {
    const gen_params *q = params;
    const og_conv_geom *g = &q->g;
    int64_t nn = row / g->O, o = row % g->O, OW = g->out[2], OHW = g->out[1] * OW;
    int64_t off = nn * q->bs[0] + o / OHW * q->bs[2] + o / OW % g->out[1] * q->bs[3] +
                  o % OW * q->bs[4] + col * q->bs[1];
    put_run(cv, base + off * q->besz, q->bdt, q->bs[1], out, 0, n);
}
GEN_PAIR(gen_yt_b)

// ---------------------------------------------------------------------------------------------
// The steps

// Whether dims [from, 5) of t step as one (size-1 dims ignored); *stride: that step.
static bool merged(const og_conv_tensor *t, int from, int64_t *stride) {
    int64_t expect = -1;
    *stride = 1;
    for (int d = 4; d >= from; d--) {
        if (t->dims[d] == 1) continue;
        if (expect < 0)
            *stride = t->strides[d];
        else if (t->strides[d] != expect)
            return false;
        expect = t->strides[d] * t->dims[d];
    }
    return true;
}

// The GEMM's C for output t: t itself when dims [from, 5) are one progression, else a contiguous
// temporary of t's dtype and shape, which `finish` copies into t after the step.
typedef struct out_view {
    og_conv_tensor t;
    int64_t stride; // of the merged dims
    int user_slot;  // the output's slot, -1 when C is t itself
    const aclTensor *tmp;
} out_view;

static out_view out_begin(og_prog *p, const og_conv_tensor *t, int from) {
    out_view v = {.t = *t, .user_slot = -1};
    if (merged(t, from, &v.stride)) return v;
    const aclTensor *u = p->io[t->slot];
    int slot = og_prog_temp(p, t->dtype, u->ndim, u->dims, &v.tmp);
    if (slot < 0) return v; // the builder has failed; publish reports it
    v.user_slot = t->slot;
    v.t = og_conv_tensor_of(v.tmp, slot);
    merged(&v.t, from, &v.stride);
    return v;
}

static void out_finish(og_prog *p, const out_view *v) {
    if (v->user_slot < 0) return;
    og_ew_op m = {.op = p->op,
                  .kernels = og_norm_copy_kernels,
                  .kernels64 = og_norm_copy_kernels64,
                  .nin = 1,
                  .nout = 1,
                  .in = {v->tmp},
                  .out = {p->io[v->user_slot]},
                  .names = {"tmp", "out"},
                  .slots = true,
                  .in_slot = {v->t.slot},
                  .out_slot = {v->user_slot},
                  .compute_dtype = v->t.dtype};
    og_prog_map(p, &m);
}

// t as a generated operand: gen for op's fp32 engine, gen64 for its float64 loop (op->f64).
static og_gemm_mat gen_mat(const og_gemm_op *op, const og_conv_tensor *t, og_gemm_gen_fn gen,
                           og_gemm_gen64_fn gen64) {
    og_gemm_mat m = {.present = true, .slot = t->slot, .dtype = t->dtype};
    if (op->f64)
        m.gen64 = gen64;
    else
        m.gen = gen;
    return m;
}
#define GEN_MAT(op, t, name) gen_mat(op, t, name##_f32, name##_f64)

static void set_a(gen_params *q, const og_conv_tensor *t) {
    q->adt = t->dtype, q->aesz = (int64_t)aclDataTypeSize(t->dtype);
    memcpy(q->as, t->strides, sizeof q->as);
}

static void set_b(gen_params *q, const og_conv_tensor *t) {
    q->bdt = t->dtype, q->besz = (int64_t)aclDataTypeSize(t->dtype);
    memcpy(q->bs, t->strides, sizeof q->bs);
}

static og_gemm_op step_op(const og_conv_geom *g, aclDataType round_ab, gen_params *q) {
    const bool f64 = round_ab == ACL_DOUBLE;
    og_gemm_op op = {.alpha = 1,
                     .beta = 0,
                     .round_ab = f64 ? ACL_FLOAT : round_ab,
                     .f64 = f64,
                     .epi = OG_GEMM_EPI_NONE};
    memset(q, 0, sizeof *q);
    q->g = *g;
    return op;
}

// bias [G * rows_g] as the epilogue's addend D of C [rows, cols] per group.
static void set_bias(og_gemm_op *op, const og_conv_tensor *bias, int64_t rows_g) {
    if (!bias) return;
    int64_t bs = bias->strides[1];
    op->d = (og_gemm_mat){.present = true, .slot = bias->slot, .dtype = bias->dtype, .rs = bs};
    op->d.bstride[op->nbatch - 1] = rows_g * bs;
    op->beta = 1;
}

// Few positions per image (ResNet's 7x7 layers): a product per image would be a few NR panels
// wide, the last one mostly padding. Instead the images' columns go side by side, one product
// per group over N x positions, into a temporary [G, rows, N, positions] of the output's dtype,
// which a copy then lays out as [N, G * rows, positions] (exact: the same sums, the same bits).
#define FOLD_MAX_COLS 96

static bool fold_images(const og_conv_geom *g, int64_t cols) {
    return g->N > 1 && cols < FOLD_MAX_COLS;
}

// The temporary's slot (-1 when the builder has failed).
static int fold_begin(og_prog *p, const og_conv_geom *g, const og_conv_tensor *t, int64_t rows,
                      int64_t cols) {
    const aclTensor *tmp;
    return og_prog_temp(p, t->dtype, 4, (const int64_t[]){g->G, rows, g->N, cols}, &tmp);
}

static void fold_finish(og_prog *p, const og_conv_geom *g, int tmp_slot, const og_conv_tensor *t,
                        int64_t cols) {
    if (tmp_slot < 0) return;
    const aclTensor *u = p->io[t->slot];
    aclTensor v = *u; // the temporary seen with the output's dims: channel c at c * N * cols
    v.offset = 0, v.data = NULL;
    int64_t st = 1;
    for (int d = u->ndim - 1; d >= 2; d--) v.strides[d] = st, st *= u->dims[d];
    v.strides[0] = cols, v.strides[1] = g->N * cols;
    og_ew_op m = {.op = p->op,
                  .kernels = og_norm_copy_kernels,
                  .kernels64 = og_norm_copy_kernels64,
                  .nin = 1,
                  .nout = 1,
                  .in = {&v},
                  .out = {u},
                  .names = {"tmp", "out"},
                  .slots = true,
                  .in_slot = {tmp_slot},
                  .out_slot = {t->slot},
                  .compute_dtype = t->dtype};
    og_prog_map(p, &m);
}

// The C of a product whose rows are an output's channels within a group (rows of them) and
// whose columns its positions (cols per image): the output itself per (image, group), or, folded,
// a temporary per group with the images side by side. Sets op's batch dims, N and c; returns the
// temporary's slot (-1 when not folded).
static int plan_out(og_prog *p, const og_conv_geom *g, og_gemm_op *op, const og_conv_tensor *t,
                    int64_t rows, int64_t cols, bool fold, out_view *c) {
    *c = (out_view){.user_slot = -1};
    if (fold) {
        int tmp = fold_begin(p, g, t, rows, cols);
        op->nbatch = 1, op->batch[0] = g->G;
        op->N = g->N * cols;
        op->c =
            (og_gemm_mat){.present = true, .slot = tmp, .dtype = t->dtype, .rs = op->N, .cs = 1};
        op->c.bstride[0] = rows * op->N;
        return tmp;
    }
    *c = out_begin(p, t, 2);
    op->nbatch = 2, op->batch[0] = g->N, op->batch[1] = g->G;
    op->N = cols;
    op->c = (og_gemm_mat){.present = true,
                          .slot = c->t.slot,
                          .dtype = c->t.dtype,
                          .rs = c->t.strides[1],
                          .cs = c->stride};
    op->c.bstride[0] = c->t.strides[0], op->c.bstride[1] = rows * c->t.strides[1];
    return -1;
}

// ---------------------------------------------------------------------------------------------
// 1x1 convolutions (stride 1, no padding) over planes of 96+ positions: every operand is a plain
// strided matrix per image, packed by the engine's own fast paths instead of a generator.

static bool pointwise(const og_conv_geom *g, const og_conv_tensor *a, const og_conv_tensor *b,
                      const og_conv_tensor *c) {
    int64_t st;
    bool ok = g->KS == 1 && g->O == g->I && g->O >= FOLD_MAX_COLS;
    for (int j = 0; j < 3 && ok; j++) ok = g->s[j] == 1 && g->pad[j] == 0;
    return ok && merged(a, 2, &st) && merged(b, 2, &st) && merged(c, 2, &st);
}

// A channels x positions matrix of image batch 0 of t (rows the channels).
static og_gemm_mat plane_mat(const og_conv_tensor *t, int64_t rows_g, int gb) {
    int64_t st;
    merged(t, 2, &st);
    og_gemm_mat m = {
        .present = true, .slot = t->slot, .dtype = t->dtype, .rs = t->strides[1], .cs = st};
    if (gb > 0) m.bstride[0] = t->strides[0];
    m.bstride[gb] = rows_g * t->strides[1];
    return m;
}

// dW^T[ci, co] = sum over n of X[n] (ci x O) @ Y[n]^T (O x co): one product per image in n
// order, each adding into an fp32 accumulator (dW itself when it is fp32, else a temporary
// rounded into dW once at the end), so the sums run over whole planes with no generator.
static void weight_pointwise(og_prog *p, const og_conv_geom *g, const og_conv_tensor *x,
                             const og_conv_tensor *y, const og_conv_tensor *dw,
                             aclDataType round_ab) {
    og_conv_tensor acc = *dw;
    int64_t st;
    const aclTensor *tmp = NULL;
    if (dw->dtype != ACL_FLOAT || !merged(dw, 1, &st)) {
        const aclTensor *u = p->io[dw->slot];
        int slot = og_prog_temp(p, ACL_FLOAT, u->ndim, u->dims, &tmp);
        if (slot < 0) return; // the builder has failed; publish reports it
        acc = og_conv_tensor_of(tmp, slot);
    }
    // The transposed operand (positions x channels) packs column by column, the other row by
    // row, cheaply: the one with more channels goes first (A) and the product is dW or dW^T.
    const bool t = g->ci_g >= g->co_g; // dW^T = X[n] @ Y[n]^T, else dW = Y[n] @ X[n]^T
    const og_conv_tensor *ta = t ? x : y, *tb = t ? y : x;
    const int64_t ra = t ? g->ci_g : g->co_g, rb = t ? g->co_g : g->ci_g;
    for (int64_t n = 0; n < g->N; n++) {
        og_gemm_op op = {.nbatch = 1,
                         .batch = {g->G},
                         .M = ra,
                         .N = rb,
                         .K = g->O,
                         .alpha = 1,
                         .beta = n > 0,
                         .round_ab = round_ab,
                         .epi = OG_GEMM_EPI_NONE};
        op.a = plane_mat(ta, ra, 0);
        op.a.offset = n * ta->strides[0];
        og_gemm_mat bt = plane_mat(tb, rb, 0); // transposed: rows the positions
        op.b = (og_gemm_mat){.present = true,
                             .slot = tb->slot,
                             .dtype = tb->dtype,
                             .rs = bt.cs,
                             .cs = bt.rs,
                             .bstride = {bt.bstride[0]},
                             .offset = n * tb->strides[0]};
        op.c = (og_gemm_mat){.present = true,
                             .slot = acc.slot,
                             .dtype = ACL_FLOAT,
                             .rs = acc.strides[t ? 1 : 0],
                             .cs = acc.strides[t ? 0 : 1],
                             .bstride = {g->co_g * acc.strides[0]}};
        if (n > 0) op.d = op.c; // (the engine allows D = C: each element read, then written)
        og_prog_gemm(p, &op);
    }
    if (tmp) {
        og_ew_op m = {.op = p->op,
                      .kernels = og_norm_copy_kernels,
                      .nin = 1,
                      .nout = 1,
                      .in = {tmp},
                      .out = {p->io[dw->slot]},
                      .names = {"acc", "gradWeight"},
                      .slots = true,
                      .in_slot = {acc.slot},
                      .out_slot = {dw->slot},
                      .compute_dtype = ACL_FLOAT};
        og_prog_map(p, &m);
    }
}

const char *og_conv_forward(og_prog *p, const og_conv_geom *g, const og_conv_tensor *x,
                            const og_conv_tensor *w, const og_conv_tensor *bias,
                            const og_conv_tensor *y, aclDataType round_ab) {
    // The depthwise and Winograd kernels are fp32 / 16-bit only: float64 (round_ab ACL_DOUBLE,
    // which Winograd refuses) takes the GEMM's float64 loop, as in the other two products.
    const bool f64 = round_ab == ACL_DOUBLE;
    if (!f64 && og_conv_dw_eligible(g)) {
        og_conv_dw_forward(p, g, x, w, bias, y, round_ab);
        return "direct depthwise";
    }
    if (og_conv_wino_eligible(g, x->dtype, w->dtype, y->dtype, round_ab)) {
        og_conv_wino_forward(p, g, x, w, bias, y);
        return "winograd F(4x4,3x3)";
    }
    gen_params q;
    og_gemm_op op = step_op(g, round_ab, &q);
    const bool fold = fold_images(g, g->O);
    out_view c;
    int tmp = plan_out(p, g, &op, y, g->co_g, g->O, fold, &c);
    const int gb = op.nbatch - 1; // the group's batch dim
    op.M = g->co_g, op.K = g->ci_g * g->KS;
    int64_t wst;
    if (merged(w, 1, &wst)) {
        op.a = (og_gemm_mat){
            .present = true, .slot = w->slot, .dtype = w->dtype, .rs = w->strides[0], .cs = wst};
    } else {
        op.a = GEN_MAT(&op, w, gen_weight_a);
        set_a(&q, w);
    }
    op.a.bstride[gb] = g->co_g * w->strides[0];
    const bool plain = !fold && pointwise(g, x, y, y);
    if (plain) {
        op.b = plane_mat(x, g->ci_g, gb);
    } else {
        op.b = GEN_MAT(&op, x, gen_im2col_b);
        set_b(&q, x);
        if (!fold) op.b.bstride[0] = x->strides[0]; // (folded: the generator steps the images)
        op.b.bstride[gb] = g->ci_g * x->strides[1];
    }
    set_bias(&op, bias, g->co_g);
    memcpy(op.gen_params, &q, sizeof q);
    og_prog_gemm(p, &op);
    if (fold) {
        fold_finish(p, g, tmp, y, g->O);
        return "implicit GEMM, images folded";
    }
    out_finish(p, &c);
    return plain ? "GEMM (1x1)" : "implicit GEMM";
}

// ---------------------------------------------------------------------------------------------
// The data product at stride > 1: most of the stride gather's rows would be zeros (3 of 4 at
// stride 2), so instead col[(ci, t), o] = sum_co W[co, ci, t] Y[co, o] (a GEMM with no zeros)
// for a chunk of images into a temporary, then col2im: X[ci, i] = the sum over the taps t, in
// order, of col[(ci, t), o] with i = o*s - pad + t*d (a CUSTOM step; one unit per plane).

#define COL_BUDGET ((int64_t)32 << 20) // bytes of col per chunk of images (at least one image)

typedef struct col2im_params {
    og_conv_geom g;
    int64_t n0, count; // the chunk of images
    int col_slot;      // [count, G, ci_g * KS, O] fp32
    og_conv_tensor x, bias;
    bool has_bias;
    opgrad_isa isa;
    int threads;
    const aclOpExecutor *e; // (phase 2)
    char *scratch;
} col2im_params;

static void col2im_unit(void *ctx, int unit, int slot) {
    const col2im_params *q = ctx;
    const og_conv_geom *g = &q->g;
    const int64_t nn = unit / (g->G * g->ci_g), c = unit % (g->G * g->ci_g); // c: X's channel
    float *buf = (float *)q->scratch + (int64_t)slot * ((g->I + 15) / 16 * 16);
    const float *col = (const float *)og_executor_addr(q->e, q->col_slot) +
                       (nn * g->G * g->ci_g + c) * g->KS * g->O;
    memset(buf, 0, (size_t)g->I * sizeof *buf);
    for (int64_t t = 0; t < g->KS; t++) {
        int64_t kk[3];
        split_k(g, t, kk);
        const float *cr = col + t * g->O;
        const int64_t s = g->s[2], W = g->in[2];
        for (int64_t od = 0; od < g->out[0]; od++) {
            int64_t id = od * g->s[0] - g->pad[0] + kk[0] * g->d[0];
            if (id < 0 || id >= g->in[0]) continue;
            for (int64_t oh = 0; oh < g->out[1]; oh++) {
                int64_t ih = oh * g->s[1] - g->pad[1] + kk[1] * g->d[1];
                if (ih < 0 || ih >= g->in[1]) continue;
                int64_t iw0 = -g->pad[2] + kk[2] * g->d[2];
                int64_t lo = iw0 >= 0 ? 0 : (-iw0 + s - 1) / s;
                int64_t hi = iw0 >= W ? 0 : (W - 1 - iw0) / s + 1;
                if (hi > g->out[2]) hi = g->out[2];
                const int64_t at = (id * g->in[1] + ih) * W + iw0; // + ow * s: in the row
                const float *src = cr + (od * g->out[1] + oh) * g->out[2];
                for (int64_t ow = lo; ow < hi; ow++) buf[at + ow * s] += src[ow];
            }
        }
    }
    if (q->has_bias) {
        float b = og_load_elem(og_executor_addr(q->e, q->bias.slot) +
                                   c * q->bias.strides[1] * (int64_t)aclDataTypeSize(q->bias.dtype),
                               q->bias.dtype);
        for (int64_t i = 0; i < g->I; i++) buf[i] += b;
    }
    char *base = og_executor_addr(q->e, q->x.slot);
    const int64_t esz = (int64_t)aclDataTypeSize(q->x.dtype), *xs = q->x.strides;
    for (int64_t id = 0; id < g->in[0]; id++)
        for (int64_t ih = 0; ih < g->in[1]; ih++)
            og_store_run(&og_convert[q->isa],
                         base + ((q->n0 + nn) * xs[0] + c * xs[1] + id * xs[2] + ih * xs[3]) * esz,
                         q->x.dtype, xs[4], buf + (id * g->in[1] + ih) * g->in[2], g->in[2], false);
}

static void col2im_run(const aclOpExecutor *e, const void *params, char *scratch) {
    col2im_params q = *(const col2im_params *)params;
    q.e = e, q.scratch = scratch;
    og_parallel_for((int)(q.count * q.g.G * q.g.ci_g), q.threads, col2im_unit, &q);
}

// A generic strided operand: row r, column c of a tensor whose rows are dims [0, split) and
// columns dims [split, 5) of the canonical form, read one element at a time (layouts whose dims
// do not merge).
static void gen_any(const gen_params *q, const og_convert_table *cv, const char *base, bool is_a,
                    int64_t row, int64_t col, int64_t n, float *out) {
    (void)cv;
    const int64_t *st = is_a ? q->as : q->bs, esz = is_a ? q->aesz : q->besz;
    const aclDataType dt = is_a ? q->adt : q->bdt;
    const og_conv_geom *g = &q->g;
    int64_t kk[3];
    for (int64_t j = 0; j < n; j++) {
        int64_t c = col + j, off;
        if (is_a) { // W as [(ci, t), co]
            split_k(g, row % g->KS, kk);
            off = c * st[0] + row / g->KS * st[1] + kk[0] * st[2] + kk[1] * st[3] + kk[2] * st[4];
        } else { // Y as [co, o]
            int64_t OW = g->out[2], OHW = g->out[1] * OW;
            off = row * st[1] + c / OHW * st[2] + c / OW % g->out[1] * st[3] + c % OW * st[4];
        }
        out[j] = og_load_elem(base + off * esz, dt);
    }
}

static void gen_wcol_a(const void *params, const og_convert_table *cv, const char *base,
                       int64_t row, int64_t col, int64_t n, float *out) {
    gen_any(params, cv, base, true, row, col, n, out);
}

static void gen_y_b(const void *params, const og_convert_table *cv, const char *base, int64_t row,
                    int64_t col, int64_t n, float *out) {
    gen_any(params, cv, base, false, row, col, n, out);
}

static void data_col2im(og_prog *p, const og_conv_geom *g, const og_conv_tensor *y,
                        const og_conv_tensor *w, const og_conv_tensor *bias,
                        const og_conv_tensor *x, aclDataType round_ab) {
    const int64_t M = g->ci_g * g->KS, per_image = g->G * M * g->O * 4;
    // (the checker's tiny GEMM pack budget makes chunks of one image: every chunk path runs)
    int64_t budget =
        og_gemm_blocking_get().pack_budget > 0 ? og_gemm_blocking_get().pack_budget : COL_BUDGET;
    int64_t count = per_image > 0 ? budget / per_image : g->N;
    if (count < 1) count = 1;
    if (count > g->N) count = g->N;
    const aclTensor *tmp;
    int col = og_prog_temp(p, ACL_FLOAT, 4, (const int64_t[]){count, g->G, M, g->O}, &tmp);
    if (col < 0) return; // the builder has failed; publish reports it
    for (int64_t n0 = 0; n0 < g->N; n0 += count) {
        int64_t cnt = g->N - n0 < count ? g->N - n0 : count;
        gen_params q;
        og_gemm_op op = step_op(g, round_ab, &q);
        op.nbatch = 2, op.batch[0] = cnt, op.batch[1] = g->G;
        op.M = M, op.N = g->O, op.K = g->co_g;
        int64_t st;
        if (merged(w, 1, &st)) {
            op.a = (og_gemm_mat){
                .present = true, .slot = w->slot, .dtype = w->dtype, .rs = st, .cs = w->strides[0]};
        } else {
            op.a = gen_mat(&op, w, gen_wcol_a, NULL); // (fp32 only)
            set_a(&q, w);
        }
        op.a.bstride[1] = g->co_g * w->strides[0];
        if (merged(y, 2, &st)) {
            op.b = (og_gemm_mat){
                .present = true, .slot = y->slot, .dtype = y->dtype, .rs = y->strides[1], .cs = st};
        } else {
            op.b = gen_mat(&op, y, gen_y_b, NULL);
            set_b(&q, y);
        }
        op.b.bstride[0] = y->strides[0], op.b.bstride[1] = g->co_g * y->strides[1];
        op.b.offset = n0 * y->strides[0];
        op.c = (og_gemm_mat){.present = true, .slot = col, .dtype = ACL_FLOAT, .rs = g->O, .cs = 1};
        op.c.bstride[0] = g->G * M * g->O, op.c.bstride[1] = M * g->O;
        memcpy(op.gen_params, &q, sizeof q);
        og_prog_gemm(p, &op);
        col2im_params c = {.g = *g,
                           .n0 = n0,
                           .col_slot = col,
                           .x = *x,
                           .has_bias = bias != NULL,
                           .isa = og_isa(),
                           .threads = og_num_threads()};
        c.count = cnt;
        if (bias) c.bias = *bias;
        int slots[3] = {col, x->slot, bias ? bias->slot : col};
        uint64_t scratch = (uint64_t)c.threads * (uint64_t)((g->I + 15) / 16 * 16) * 4;
        og_prog_custom(p, col2im_run, &c, sizeof c, slots, 3, scratch);
    }
}

const char *og_conv_data(og_prog *p, const og_conv_geom *g, const og_conv_tensor *y,
                         const og_conv_tensor *w, const og_conv_tensor *bias,
                         const og_conv_tensor *x, aclDataType round_ab) {
    const bool f64 = round_ab == ACL_DOUBLE;
    if (!f64 && og_conv_dw_eligible(g)) {
        og_conv_dw_data(p, g, y, w, bias, x, round_ab);
        return "direct depthwise";
    }
    if (og_conv_wino_eligible(g, y->dtype, w->dtype, x->dtype, round_ab)) {
        og_conv_wino_data(p, g, y, w, bias, x);
        return "winograd F(4x4,3x3)";
    }
    // (few input channels, e.g. an RGB image's 3: the gather's product would be ci_g rows deep,
    // its packed operand used ci_g times; col's is ci_g * KS rows). float64 gathers at any
    // stride: col2im sums in fp32.
    if (!f64 && (g->s[0] * g->s[1] * g->s[2] > 1 || g->ci_g < 8)) {
        data_col2im(p, g, y, w, bias, x, round_ab);
        return "GEMM + col2im";
    }
    gen_params q;
    og_gemm_op op = step_op(g, round_ab, &q);
    if (pointwise(g, y, y, x)) { // dX[n] = W^T (ci x co) @ Y[n]: plain matrices
        out_view c;
        plan_out(p, g, &op, x, g->ci_g, g->I, false, &c);
        op.M = g->ci_g, op.K = g->co_g;
        op.a = (og_gemm_mat){.present = true,
                             .slot = w->slot,
                             .dtype = w->dtype,
                             .rs = w->strides[1],
                             .cs = w->strides[0]};
        op.a.bstride[1] = g->co_g * w->strides[0];
        op.b = plane_mat(y, g->co_g, 1);
        set_bias(&op, bias, g->ci_g);
        og_prog_gemm(p, &op);
        out_finish(p, &c);
        return "GEMM (1x1)";
    }
    const bool fold = fold_images(g, g->I);
    out_view c;
    int tmp = plan_out(p, g, &op, x, g->ci_g, g->I, fold, &c);
    const int gb = op.nbatch - 1; // the group's batch dim
    op.M = g->ci_g, op.K = g->co_g * g->KS;
    int64_t wst;
    q.a_wcontig = merged(w, 2, &wst);
    op.a = GEN_MAT(&op, w, gen_weight_t_a);
    set_a(&q, w);
    if (q.a_wcontig) q.as[4] = wst; // the t dims as one run of stride wst
    op.a.bstride[gb] = g->co_g * w->strides[0];
    op.b = GEN_MAT(&op, y, gen_gather_b);
    set_b(&q, y);
    if (!fold) op.b.bstride[0] = y->strides[0]; // (folded: the generator steps the images)
    op.b.bstride[gb] = g->co_g * y->strides[1];
    set_bias(&op, bias, g->ci_g);
    memcpy(op.gen_params, &q, sizeof q);
    og_prog_gemm(p, &op);
    if (fold) {
        fold_finish(p, g, tmp, x, g->I);
        return "implicit GEMM, images folded";
    }
    out_finish(p, &c);
    return "implicit GEMM";
}

const char *og_conv_weight(og_prog *p, const og_conv_geom *g, const og_conv_tensor *x,
                           const og_conv_tensor *y, const og_conv_tensor *dw,
                           aclDataType round_ab) {
    const bool f64 = round_ab == ACL_DOUBLE;
    if (!f64 && og_conv_dw_eligible(g)) {
        og_conv_dw_weight(p, g, x, y, dw, round_ab);
        return "direct depthwise";
    }
    // (float64: the implicit GEMM below sums all N x O positions in one order; weight_pointwise
    // accumulates in fp32)
    if (!f64 && pointwise(g, x, y, y)) {
        weight_pointwise(p, g, x, y, dw, round_ab);
        return "GEMM per image (1x1)";
    }
    gen_params q;
    og_gemm_op op = step_op(g, round_ab, &q);
    out_view c = out_begin(p, dw, 1);
    op.nbatch = 1, op.batch[0] = g->G;
    op.M = g->ci_g * g->KS, op.N = g->co_g, op.K = g->N * g->O;
    op.a = GEN_MAT(&op, x, gen_im2col_a);
    set_a(&q, x);
    op.a.bstride[0] = g->ci_g * x->strides[1];
    op.b = GEN_MAT(&op, y, gen_yt_b);
    set_b(&q, y);
    op.b.bstride[0] = g->co_g * y->strides[1];
    op.c = (og_gemm_mat){.present = true,
                         .slot = c.t.slot,
                         .dtype = c.t.dtype,
                         .rs = c.stride,
                         .cs = c.t.strides[0]};
    op.c.bstride[0] = g->co_g * c.t.strides[0];
    memcpy(op.gen_params, &q, sizeof q);
    og_prog_gemm(p, &op);
    out_finish(p, &c);
    return "implicit GEMM";
}
