/* The depthwise convolution's CUSTOM steps (conv_dw.h): planes in and out of fp32 buffers, the
 * per-ISA plane kernels of conv_dw_simd.c in between. */
#include "ops/conv/conv_dw.h"

#include <string.h>

#include "engine/convert.h"
#include "engine/isa_table.h"
#include "runtime/cpu.h"
#include "runtime/pool.h"
#include "tensor/dtype.h"

static const og_dw_fwd_fn fwd_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_conv_dw_fwd);
static const og_dw_data_fn data_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_conv_dw_data);
static const og_dw_weight_fn weight_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_conv_dw_weight);

// The padded plane buffer's extent along one dim: the reach of the windows, or the input plane
// placed after the leading padding, whichever is larger.
static int64_t padded_extent(const og_conv_geom *g, int j) {
    int64_t reach = (g->out[j] - 1) * g->s[j] + (g->k[j] - 1) * g->d[j] + 1;
    return reach > g->pad[j] + g->in[j] ? reach : g->pad[j] + g->in[j];
}

bool og_conv_dw_eligible(const og_conv_geom *g) {
    int64_t plane; // (huge strides or padding around a small plane: the GEMM takes it)
    return g->ci_g == 1 && g->in[0] == 1 && g->out[0] == 1 && g->k[0] == 1 && g->G > 1 &&
           !__builtin_mul_overflow(padded_extent(g, 1), padded_extent(g, 2), &plane) &&
           plane <= (int64_t)1 << 26;
}

enum { DW_FWD, DW_DATA, DW_WEIGHT };

typedef struct dw_params {
    int kind;
    og_conv_geom g;
    og_dw_plane pl;
    int64_t pad_h, pad_w; // leading padding
    int64_t bh, bw;       // the padded buffer (data: at least the cropped input)
    og_conv_tensor t[4];  // kind-specific: fwd {x, w, bias, y}, data {y, w, bias, x},
                          // weight {x, y, dw}
    bool has_bias;
    aclDataType round;
    opgrad_isa isa;
    int threads;            // at most, each with slot_floats of scratch
    int64_t slot_floats;    // scratch per thread
    const aclOpExecutor *e; // (phase 2)
    char *scratch;
} dw_params;

static int64_t align16(int64_t n) { return (n + 15) / 16 * 16; }

static void round_buf(const dw_params *q, float *v, int64_t n) {
    if (q->round != ACL_FLOAT) og_round_through(&og_convert[q->isa], v, n, q->round);
}

// Plane (n, c) of a canonical tensor t (its D dim has extent 1) as fp32 rows into dst (row
// stride ld, at row r0, column c0).
static void load_plane(const dw_params *q, const og_conv_tensor *t, int64_t n, int64_t c,
                       float *dst, int64_t ld, int64_t r0, int64_t c0) {
    const char *base = og_executor_addr(q->e, t->slot);
    const int64_t esz = (int64_t)aclDataTypeSize(t->dtype);
    for (int64_t h = 0; h < t->dims[3]; h++)
        og_load_run(&og_convert[q->isa],
                    base + (n * t->strides[0] + c * t->strides[1] + h * t->strides[3]) * esz,
                    t->dtype, t->strides[4], dst + (r0 + h) * ld + c0, t->dims[4]);
}

static void store_plane(const dw_params *q, const og_conv_tensor *t, int64_t n, int64_t c,
                        const float *src, int64_t ld, int64_t r0, int64_t c0) {
    char *base = og_executor_addr(q->e, t->slot);
    const int64_t esz = (int64_t)aclDataTypeSize(t->dtype);
    for (int64_t h = 0; h < t->dims[3]; h++)
        og_store_run(&og_convert[q->isa],
                     base + (n * t->strides[0] + c * t->strides[1] + h * t->strides[3]) * esz,
                     t->dtype, t->strides[4], src + (r0 + h) * ld + c0, t->dims[4], false);
}

// The filter of output channel co (its KS taps) as fp32.
static void load_filter(const dw_params *q, const og_conv_tensor *w, int64_t co, float *dst) {
    const char *base = og_executor_addr(q->e, w->slot);
    const int64_t esz = (int64_t)aclDataTypeSize(w->dtype);
    for (int64_t kh = 0; kh < q->pl.kh; kh++)
        og_load_run(&og_convert[q->isa], base + (co * w->strides[0] + kh * w->strides[3]) * esz,
                    w->dtype, w->strides[4], dst + kh * q->pl.kw, q->pl.kw);
    round_buf(q, dst, q->pl.kh * q->pl.kw);
}

static float bias_of(const dw_params *q, const og_conv_tensor *b, int64_t c) {
    if (!q->has_bias) return 0.0f;
    const char *base = og_executor_addr(q->e, b->slot);
    return og_load_elem(base + c * b->strides[1] * (int64_t)aclDataTypeSize(b->dtype), b->dtype);
}

static void add_bias(float *v, int64_t n, float b) {
    for (int64_t i = 0; i < n; i++) v[i] += b;
}

static void dw_unit(void *ctx, int unit, int slot) {
    const dw_params *q = ctx;
    const og_conv_geom *g = &q->g;
    const int64_t mult = g->co_g, KS = q->pl.kh * q->pl.kw, P = q->pl.oh * q->pl.ow;
    float *buf = (float *)q->scratch + slot * q->slot_floats;
    float *pad = buf, *plane = pad + align16(q->bh * q->bw), *w = plane + align16(P);
    float *lanes = w + align16(KS);
    if (q->kind == DW_FWD) { // unit (n, c): input plane c, output planes c * mult + m
        int64_t n = unit / g->G, c = unit % g->G;
        memset(pad, 0, (size_t)(q->bh * q->bw) * sizeof *pad);
        load_plane(q, &q->t[0], n, c, pad, q->bw, q->pad_h, q->pad_w);
        round_buf(q, pad, q->bh * q->bw);
        for (int64_t m = 0; m < mult; m++) {
            int64_t co = c * mult + m;
            load_filter(q, &q->t[1], co, w);
            fwd_kernels[q->isa](&q->pl, pad, w, plane);
            if (q->has_bias) add_bias(plane, P, bias_of(q, &q->t[2], co));
            store_plane(q, &q->t[3], n, co, plane, q->pl.ow, 0, 0);
        }
    } else if (q->kind == DW_DATA) { // unit (n, c): output planes c * mult + m into plane c
        int64_t n = unit / g->G, c = unit % g->G;
        memset(pad, 0, (size_t)(q->bh * q->bw) * sizeof *pad);
        for (int64_t m = 0; m < mult; m++) {
            int64_t co = c * mult + m;
            load_plane(q, &q->t[0], n, co, plane, q->pl.ow, 0, 0);
            round_buf(q, plane, P);
            load_filter(q, &q->t[1], co, w);
            data_kernels[q->isa](&q->pl, plane, w, pad);
        }
        const og_conv_tensor *x = &q->t[3];
        if (q->has_bias) {
            float b = bias_of(q, &q->t[2], c);
            for (int64_t h = 0; h < x->dims[3]; h++)
                add_bias(pad + (q->pad_h + h) * q->bw + q->pad_w, x->dims[4], b);
        }
        store_plane(q, x, n, c, pad, q->bw, q->pad_h, q->pad_w);
    } else { // unit co = c * mult + m: its filter, over every n
        int64_t co = unit, c = co / mult;
        memset(lanes, 0, (size_t)(KS * OG_DW_LANES) * sizeof *lanes);
        for (int64_t n = 0; n < g->N; n++) {
            memset(pad, 0, (size_t)(q->bh * q->bw) * sizeof *pad);
            load_plane(q, &q->t[0], n, c, pad, q->bw, q->pad_h, q->pad_w);
            round_buf(q, pad, q->bh * q->bw);
            load_plane(q, &q->t[1], n, co, plane, q->pl.ow, 0, 0);
            round_buf(q, plane, P);
            weight_kernels[q->isa](&q->pl, plane, pad, lanes);
        }
        for (int64_t t = 0; t < KS; t++) { // the lanes' fixed tree: 16 -> 8 -> 4 -> 2 -> 1
            float *l = lanes + t * OG_DW_LANES;
            for (int w2 = OG_DW_LANES / 2; w2 >= 1; w2 /= 2)
                for (int i = 0; i < w2; i++) l[i] += l[i + w2];
            w[t] = l[0];
        }
        const og_conv_tensor *dw = &q->t[2];
        char *base = og_executor_addr(q->e, dw->slot);
        const int64_t esz = (int64_t)aclDataTypeSize(dw->dtype);
        for (int64_t kh = 0; kh < q->pl.kh; kh++)
            og_store_run(&og_convert[q->isa],
                         base + (co * dw->strides[0] + kh * dw->strides[3]) * esz, dw->dtype,
                         dw->strides[4], w + kh * q->pl.kw, q->pl.kw, false);
    }
}

static void dw_run(const aclOpExecutor *e, const void *params, char *scratch) {
    dw_params q = *(const dw_params *)params;
    q.e = e, q.scratch = scratch;
    int units = (int)(q.kind == DW_WEIGHT ? q.g.G * q.g.co_g : q.g.N * q.g.G);
    og_parallel_for(units, q.threads, dw_unit, &q);
}

static void dw_step(og_prog *p, int kind, const og_conv_geom *g, const og_conv_tensor *t, int nt,
                    bool has_bias, aclDataType round) {
    dw_params q;
    memset(&q, 0, sizeof q);
    q.kind = kind, q.g = *g, q.has_bias = has_bias, q.round = round, q.isa = og_isa();
    q.pl = (og_dw_plane){.oh = g->out[1],
                         .ow = g->out[2],
                         .kh = g->k[1],
                         .kw = g->k[2],
                         .sh = g->s[1],
                         .sw = g->s[2],
                         .dh = g->d[1],
                         .dw = g->d[2]};
    q.pl.xh = (g->out[1] - 1) * g->s[1] + (g->k[1] - 1) * g->d[1] + 1;
    q.pl.xw = (g->out[2] - 1) * g->s[2] + (g->k[2] - 1) * g->d[2] + 1;
    q.pad_h = g->pad[1], q.pad_w = g->pad[2];
    // the buffer holds the padded reach and the input plane at (pad_h, pad_w)
    q.bh = padded_extent(g, 1), q.bw = padded_extent(g, 2);
    q.pl.xw = q.bw; // the kernels' row stride
    for (int k = 0; k < nt; k++) q.t[k] = t[k];
    const int64_t KS = q.pl.kh * q.pl.kw;
    q.slot_floats =
        align16(q.bh * q.bw) + align16(q.pl.oh * q.pl.ow) + align16(KS) + KS * OG_DW_LANES;
    int slots[4], ns = 0;
    for (int k = 0; k < nt; k++)
        if (k != 2 || kind == DW_WEIGHT || has_bias) slots[ns++] = t[k].slot;
    q.threads = og_num_threads();
    uint64_t scratch = (uint64_t)q.threads * (uint64_t)q.slot_floats * sizeof(float);
    og_prog_custom(p, dw_run, &q, sizeof q, slots, ns, scratch);
}

void og_conv_dw_forward(og_prog *p, const og_conv_geom *g, const og_conv_tensor *x,
                        const og_conv_tensor *w, const og_conv_tensor *bias,
                        const og_conv_tensor *y, aclDataType round_ab) {
    og_conv_tensor t[4] = {*x, *w, bias ? *bias : *w, *y};
    dw_step(p, DW_FWD, g, t, 4, bias != NULL, round_ab);
}

void og_conv_dw_data(og_prog *p, const og_conv_geom *g, const og_conv_tensor *y,
                     const og_conv_tensor *w, const og_conv_tensor *bias, const og_conv_tensor *x,
                     aclDataType round_ab) {
    og_conv_tensor t[4] = {*y, *w, bias ? *bias : *w, *x};
    dw_step(p, DW_DATA, g, t, 4, bias != NULL, round_ab);
}

void og_conv_dw_weight(og_prog *p, const og_conv_geom *g, const og_conv_tensor *x,
                       const og_conv_tensor *y, const og_conv_tensor *dw, aclDataType round_ab) {
    og_conv_tensor t[3] = {*x, *y, *dw};
    dw_step(p, DW_WEIGHT, g, t, 3, false, round_ab);
}
