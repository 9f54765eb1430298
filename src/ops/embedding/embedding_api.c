/* aclnnEmbedding and aclnnEmbeddingDenseBackward: a row gather and its deterministic scatter-add.
 *
 * Neither is elementwise, a reduction along dims or a row kernel, so each is one CUSTOM step
 * (engine/program.h) over the operator's slots:
 *   Embedding              each position j copies weight row indices[j] into out row j (bytes,
 *                          any dtype); an index outside [0, numEmbeddings) writes a zero row.
 *   EmbeddingDenseBackward a counting sort of the positions by index (one thread: O(N + V)),
 *                          then the rows of out in parallel ranges, each row the fp32 (float64
 *                          for a DOUBLE grad) sum of its positions' grad rows in position order:
 *                          the same bits on any thread count, since no row is split between
 *                          threads.
 * Indices are data: phase 1 cannot see them (and on a stream they may not be written yet), so a
 * bad index is defined behaviour in phase 2, never an access outside a tensor. */
#include <stdio.h>
#include <string.h>

#include "aclnnop/aclnn_embedding.h"
#include "aclnnop/aclnn_embedding_dense_backward.h"
#include "engine/convert.h"
#include "engine/program.h"
#include "ops/common/checks.h"
#include "ops/common/view_index.h"
#include "runtime/cpu.h"
#include "runtime/pool.h"

// Positions (forward) or output rows (backward) per parallel unit: a fixed split, so which
// thread runs a unit never matters.
enum { EMB_UNIT_ROWS = 64 };

// A live tensor of any dtype in `dtypes` (OG_DT mask) and rank in [min_rank, max_rank] that fits
// its block (161002 naming it).
static aclnnStatus check_any(const og_opdesc *op, const char *name, const aclTensor *t,
                             unsigned long long dtypes, const char *dtype_names, int min_rank,
                             int max_rank) {
    char fn[96];
    snprintf(fn, sizeof fn, "%sGetWorkspaceSize", op->name);
    OG_TRY(og_check_live(fn, name, t, OG_OBJ_TENSOR));
    if ((unsigned)t->dtype >= 64 || !(dtypes & OG_DT(t->dtype)))
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: %s has dtype %s; supported: %s", fn, name,
                       og_dtype_name(t->dtype), dtype_names);
    if (t->ndim < min_rank || t->ndim > max_rank)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: %s has rank %d; supported: %d to %d dims", fn,
                       name, t->ndim, min_rank, max_rank);
    return og_check_fits_block(op, name, t);
}

#define INDEX_DTYPES (OG_DT(ACL_INT32) | OG_DT(ACL_INT64))
#define WEIGHT_DTYPES                                                                              \
    (OG_DTS_FLOATING | OG_DT(ACL_DOUBLE) | OG_DT(ACL_INT64) | OG_DT(ACL_INT32) |                   \
     OG_DT(ACL_INT16) | OG_DT(ACL_INT8) | OG_DT(ACL_UINT8) | OG_DT(ACL_BOOL))

// ---- forward ------------------------------------------------------------------------------------

typedef struct emb_fwd {
    og_view weight, indices, out;
    int64_t V, D, N;
    int threads; // phase 1's thread count (an executor runs as it was planned)
} emb_fwd;

typedef struct emb_fwd_ctx {
    const emb_fwd *p;
    const char *w, *idx;
    char *out;
} emb_fwd_ctx;

static void emb_fwd_unit(void *vctx, int core, int slot) {
    (void)slot;
    const emb_fwd_ctx *c = vctx;
    const emb_fwd *p = c->p;
    int es = p->weight.esize;
    int64_t j0 = (int64_t)core * EMB_UNIT_ROWS, j1 = j0 + EMB_UNIT_ROWS;
    if (j1 > p->N) j1 = p->N;
    int64_t ws0 = p->weight.strides[0], ws1 = p->weight.strides[1];
    int64_t os = p->out.strides[p->out.ndim - 1];
    bool rows_dense = ws1 == 1 && (os == 1 || p->D == 1);
    for (int64_t j = j0; j < j1; j++) {
        int64_t r = og_view_index(&p->indices, c->idx, j);
        char *dst = c->out + og_view_offset(&p->out, j * p->D) * es;
        if (r < 0 || r >= p->V) { // defined behaviour for a bad index: a zero row
            for (int64_t d = 0; d < p->D; d++) memset(dst + d * os * es, 0, (size_t)es);
            continue;
        }
        const char *src = c->w + r * ws0 * es;
        if (rows_dense)
            memcpy(dst, src, (size_t)(p->D * es));
        else
            for (int64_t d = 0; d < p->D; d++)
                memcpy(dst + d * os * es, src + d * ws1 * es, (size_t)es);
    }
}

static void emb_fwd_run(const aclOpExecutor *e, const void *params, char *scratch) {
    (void)scratch;
    const emb_fwd *p = params;
    emb_fwd_ctx c = {p, og_executor_addr(e, 0), og_executor_addr(e, 1), og_executor_addr(e, 2)};
    int64_t units = (p->N + EMB_UNIT_ROWS - 1) / EMB_UNIT_ROWS;
    og_parallel_for((int)units, p->threads, emb_fwd_unit, &c);
}

aclnnStatus aclnnEmbeddingGetWorkspaceSize(const aclTensor *weight, const aclTensor *indices,
                                           const aclTensor *out, uint64_t *workspaceSize,
                                           aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_Embedding;
    const char *names[] = {"weight", "indices", "out"};
    const void *ptrs[] = {weight, indices, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 3, names, ptrs));
    const char *wnames =
        "float32, float16, bfloat16, double, int64, int32, int16, int8, uint8, bool";
    OG_TRY(check_any(op, "weight", weight, WEIGHT_DTYPES, wnames, 2, 2));
    OG_TRY(check_any(op, "indices", indices, INDEX_DTYPES, "int32, int64", 0, OG_MAX_DIMS - 1));
    OG_TRY(check_any(op, "out", out, WEIGHT_DTYPES, wnames, 1, OG_MAX_DIMS));
    OG_TRY(og_check_same_dtype(op, "weight", weight, "out", out));
    int64_t want[OG_MAX_DIMS];
    for (int d = 0; d < indices->ndim; d++) want[d] = indices->dims[d];
    want[indices->ndim] = weight->dims[1];
    bool ok = out->ndim == indices->ndim + 1;
    for (int d = 0; ok && d < out->ndim; d++) ok = out->dims[d] == want[d];
    if (!ok) {
        char a[128], b[128];
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: out has shape %s; it must be indices' shape followed "
                       "by weight's row length: %s",
                       op->name, og_shape_str(out->dims, out->ndim, a, sizeof a),
                       og_shape_str(want, indices->ndim + 1, b, sizeof b));
    }
    const aclTensor *in[] = {weight, indices}, *outs[] = {out};
    OG_TRY(og_check_io_memory(op, 2, in, 1, outs, names));
    og_prog p;
    const aclTensor *io[] = {weight, indices, out};
    og_prog_init(&p, op, 2, 1, io);
    if (out->numel > 0) {
        emb_fwd f;
        memset(&f, 0, sizeof f);
        og_view_of(&f.weight, weight);
        og_view_of(&f.indices, indices);
        og_view_of(&f.out, out);
        f.V = weight->dims[0], f.D = weight->dims[1], f.N = indices->numel;
        f.threads = og_num_threads();
        og_prog_custom(&p, emb_fwd_run, &f, sizeof f, (const int[]){0, 1, 2}, 3, 0);
    }
    return og_prog_publish(&p, workspaceSize, executor);
}

// ---- dense backward -----------------------------------------------------------------------------

typedef struct emb_bwd {
    og_view grad, indices, out;
    int64_t V, D, N;
    int64_t padding; // -1: none
    bool scale;
    opgrad_isa isa;
    int threads; // phase 1's thread count: the scratch holds this many pairs of rows
    // workspace: start[V + 2] and pos[N] (int64), then per thread two rows of D (fp32 or float64)
    uint64_t pos_offset, rows_offset, row_bytes;
} emb_bwd;

typedef struct emb_bwd_ctx {
    const emb_bwd *p;
    const og_convert_table *cv;
    const char *grad;
    char *out;
    const int64_t *start, *pos;
    char *rows;
} emb_bwd_ctx;

// One output row in float64 (a DOUBLE grad): the same position order, accumulated in double.
static void emb_bwd_row64(const emb_bwd_ctx *c, int64_t r, double *acc, double *buf) {
    const emb_bwd *p = c->p;
    int64_t b = c->start[r], e = c->start[r + 1];
    int64_t gs = p->grad.strides[p->grad.ndim - 1];
    for (int64_t d = 0; d < p->D; d++) acc[d] = 0.0;
    if (r != p->padding) {
        for (int64_t k = b; k < e; k++) {
            const char *g = c->grad + og_view_offset(&p->grad, c->pos[k] * p->D) * 8;
            og_load_run64(g, ACL_DOUBLE, gs, buf, p->D);
            for (int64_t d = 0; d < p->D; d++) acc[d] += buf[d];
        }
        if (p->scale && e - b > 1)
            for (int64_t d = 0; d < p->D; d++) acc[d] /= (double)(e - b);
    }
    og_store_run64(c->out + r * p->out.strides[0] * 8, ACL_DOUBLE, p->out.strides[1], acc, p->D);
}

static void emb_bwd_unit(void *vctx, int core, int slot) {
    const emb_bwd_ctx *c = vctx;
    const emb_bwd *p = c->p;
    char *row = c->rows + (uint64_t)slot * 2 * p->row_bytes;
    float *acc = (float *)row, *buf = (float *)(row + p->row_bytes);
    int64_t r0 = (int64_t)core * EMB_UNIT_ROWS, r1 = r0 + EMB_UNIT_ROWS;
    if (r1 > p->V) r1 = p->V;
    int ges = p->grad.esize, oes = p->out.esize;
    int64_t gs = p->grad.strides[p->grad.ndim - 1];
    int64_t os0 = p->out.strides[0], os1 = p->out.strides[1];
    for (int64_t r = r0; r < r1; r++) {
        if (p->grad.dtype == ACL_DOUBLE) {
            emb_bwd_row64(c, r, (double *)row, (double *)(row + p->row_bytes));
            continue;
        }
        int64_t b = c->start[r], e = c->start[r + 1];
        for (int64_t d = 0; d < p->D; d++) acc[d] = 0.0f;
        if (r != p->padding) {
            for (int64_t k = b; k < e; k++) { // position order: fixed, whoever runs the row
                const char *g = c->grad + og_view_offset(&p->grad, c->pos[k] * p->D) * ges;
                og_load_run(c->cv, g, p->grad.dtype, gs, buf, p->D);
                for (int64_t d = 0; d < p->D; d++) acc[d] += buf[d];
            }
            if (p->scale && e - b > 1) {
                float n = (float)(e - b);
                for (int64_t d = 0; d < p->D; d++) acc[d] /= n;
            }
        }
        og_store_run(c->cv, c->out + r * os0 * oes, p->out.dtype, os1, acc, p->D, false);
    }
}

static void emb_bwd_run(const aclOpExecutor *e, const void *params, char *scratch) {
    const emb_bwd *p = params;
    int64_t *start = (int64_t *)scratch, *pos = (int64_t *)(scratch + p->pos_offset);
    const char *idx = og_executor_addr(e, 1);
    // Counting sort of the positions by index, stable. With row r's count in start[r + 2], the
    // prefix sum makes start[r + 1] row r's first place; placing each position bumps it, which
    // leaves row r's range at [start[r], start[r + 1]). Out-of-range indices are left out.
    memset(start, 0, (size_t)(p->V + 2) * sizeof *start);
    for (int64_t j = 0; j < p->N; j++) {
        int64_t r = og_view_index(&p->indices, idx, j);
        if (r >= 0 && r < p->V) start[r + 2]++;
    }
    for (int64_t r = 1; r <= p->V + 1; r++) start[r] += start[r - 1];
    for (int64_t j = 0; j < p->N; j++) {
        int64_t r = og_view_index(&p->indices, idx, j);
        if (r >= 0 && r < p->V) pos[start[r + 1]++] = j;
    }
    emb_bwd_ctx c = {
        p,   &og_convert[p->isa],     og_executor_addr(e, 0), og_executor_addr(e, 2), start,
        pos, scratch + p->rows_offset};
    int64_t units = (p->V + EMB_UNIT_ROWS - 1) / EMB_UNIT_ROWS;
    og_parallel_for((int)units, p->threads, emb_bwd_unit, &c);
}

static uint64_t align64u(uint64_t x) { return (x + 63) & ~(uint64_t)63; }

aclnnStatus aclnnEmbeddingDenseBackwardGetWorkspaceSize(
    const aclTensor *grad, const aclTensor *indices, uint64_t numWeights, uint64_t paddingIdx,
    bool scaleGradByFreq, const aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_EmbeddingDenseBackward;
    const char *names[] = {"grad", "indices", "out"};
    const void *ptrs[] = {grad, indices, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 3, names, ptrs));
    OG_TRY(og_check_tensor_of(op, "grad", grad, 1, OG_DTS_FLOATING64));
    OG_TRY(check_any(op, "indices", indices, INDEX_DTYPES,
                     "int32, int64 (aclnn's floating, 8/16-bit and bool indices are not "
                     "implemented)",
                     0, OG_MAX_DIMS));
    OG_TRY(og_check_tensor_of(op, "out", out, 2, OG_DTS_FLOATING64));
    OG_TRY(og_check_same_dtype(op, "grad", grad, "out", out));
    if (numWeights > (uint64_t)INT32_MAX * 64)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: numWeights is %llu; supported: at most %lld", op->name,
                       (unsigned long long)numWeights, (long long)INT32_MAX * 64);
    int64_t D = grad->dims[grad->ndim - 1], rows = 1;
    for (int d = 0; d < grad->ndim - 1; d++) rows *= grad->dims[d];
    if (D != 0 && rows != indices->numel)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: grad has %lld rows (the product of its dims but the "
                       "last) but indices has %lld elements; they must be equal",
                       op->name, (long long)rows, (long long)indices->numel);
    if (out->ndim != 2 || (uint64_t)out->dims[0] != numWeights || out->dims[1] != D) {
        char a[128];
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: out has shape %s; it must be [numWeights, grad's last "
                       "dim] = [%llu,%lld]",
                       op->name, og_shape_str(out->dims, out->ndim, a, sizeof a),
                       (unsigned long long)numWeights, (long long)D);
    }
    const aclTensor *in[] = {grad, indices}, *outs[] = {out};
    OG_TRY(og_check_io_memory(op, 2, in, 1, outs, names));
    og_prog p;
    const aclTensor *io[] = {grad, indices, out};
    og_prog_init(&p, op, 2, 1, io);
    if (out->numel > 0) {
        emb_bwd b;
        memset(&b, 0, sizeof b);
        og_view_of(&b.grad, grad);
        og_view_of(&b.indices, indices);
        og_view_of(&b.out, out);
        b.V = (int64_t)numWeights, b.D = D, b.N = D ? indices->numel : 0;
        int64_t pad = (int64_t)paddingIdx; // aclnn: a negative paddingIdx pads nothing
        b.padding = pad >= 0 && pad < b.V ? pad : -1;
        b.scale = scaleGradByFreq;
        b.isa = og_isa();
        b.pos_offset = align64u((uint64_t)(b.V + 2) * 8);
        b.rows_offset = b.pos_offset + align64u((uint64_t)b.N * 8);
        b.row_bytes = align64u((uint64_t)D * (grad->dtype == ACL_DOUBLE ? 8 : 4));
        b.threads = og_num_threads();
        uint64_t scratch = b.rows_offset + (uint64_t)b.threads * 2 * b.row_bytes;
        og_prog_custom(&p, emb_bwd_run, &b, sizeof b, (const int[]){0, 1, 2}, 3, scratch);
    }
    return og_prog_publish(&p, workspaceSize, executor);
}
