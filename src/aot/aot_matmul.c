/* MindSpore "aot" entry points of the matmul family (docs/aot.md, "The matmul family"), written
 * by hand: the family is NOAOT in src/ops/ops.inc because its shapes, optional tensors and
 * attributes do not fit aot_builtins.c's generic marshalling, which these entry points reuse
 * (aot_internal.h) for everything else: the nparam and NULL checks, the dtype strings, the
 * contiguous wrapping of the params, the output / gradient shape checks and the messages.
 *
 *   opgrad_Matmul          a, b, y                     y = a @ b (torch.matmul)
 *   opgrad_MatmulBackward  a, b, y, dy, da, db         da = dy @ b^T, db = a^T @ dy
 *   opgrad_Linear[Act]     x, w, b, y                  y = act(x @ w^T + b), w [out, in]
 *   opgrad_Linear[Act]Backward  x, w, b, y, dy, dx, dw, db
 *       Act: none, Relu, Gelu (tanh approximation), GeluErf (exact erf form)
 *
 * Matmul runs aclnnMatmul with cubeMathType 0 (KEEP_DTYPE: exact products, fp32 accumulation).
 * Its backward multiplies transposed views (swapped strides of the last two dims, no copies); a
 * gradient whose operand broadcast over batch dims is formed in an fp32 temporary of the full
 * batch and summed to its shape by aclnnReduceSum in fp32, then rounded once, except db of
 * a b without batch dims, where a's batch folds into the product's reduction dim (one
 * aclnnMatmul, no temporary). 1-D operands follow torch.matmul (a row, a column).
 *
 * Linear runs aclnnFusedMatmul on x folded to [rows, in] and the transposed view [in, out] of w,
 * cubeMathType 3 when x and w promote to float32 (ops-nn allows float32 only there; on the CPU it
 * is exact fp32), else 0; its backward is one aclnnFusedMatmulBackward, gradX2 written into the
 * transposed view of dw. The gelus take no bias in FusedMatmul (ops-nn's rule), so LinearGelu and
 * LinearGeluErf form z = x @ w^T + b in fp32 (fusedOpType "16cast32" for 16-bit inputs, "" for
 * float32) and apply aclnnGeluV2 to it in place, then round once to y's dtype; their backwards
 * recompute z the same way, form dz = aclnnGeluBackwardV2(dy, z) in place and run
 * aclnnFusedMatmulBackward with fusedOpType "" on dz. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_fused_matmul.h"
#include "aclnnop/aclnn_fused_matmul_backward.h"
#include "aclnnop/aclnn_gelu_backward_v2.h"
#include "aclnnop/aclnn_gelu_v2.h"
#include "aclnnop/aclnn_matmul.h"
#include "aot/aot_internal.h"
#include "opgrad/custom_op.h"
#include "runtime/error.h"
#include "tensor/dtype.h"
#include "tensor/tensor.h"

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        st = (expr);                                                                               \
        if (st != ACLNN_SUCCESS) goto done;                                                        \
    } while (0)

/* ---- the views and fp32 temporaries of one call ---------------------------------------------- */

enum { MAX_VIEWS = 12, MAX_TEMPS = 4 };

typedef struct scratch {
    const aot_entry *d;
    aclTensor views[MAX_VIEWS]; // registered while the call runs (the operators take live objects)
    int nviews;
    void *temps[MAX_TEMPS];
    int ntemps;
} scratch;

static void scratch_release(scratch *s) {
    for (int i = 0; i < s->nviews; i++) og_object_unregister(&s->views[i]);
    for (int i = 0; i < s->ntemps; i++) aclrtFree(s->temps[i]);
}

// A view of `ndim` dims with `strides` (NULL: dense) over data.
static aclnnStatus view(scratch *s, aclTensor **out, const int64_t *dims, const int64_t *strides,
                        int ndim, aclDataType dt, void *data) {
    if (s->nviews == MAX_VIEWS) return og_fail(ACLNN_ERR_INNER, "%s: too many views", s->d->name);
    aclTensor *t = &s->views[s->nviews];
    if (!og_object_register(t, OG_OBJ_TENSOR))
        return og_fail(ACLNN_ERR_INNER, "%s: out of memory registering a tensor", s->d->name);
    s->nviews++;
    aclnnStatus st =
        aclInitTensor(t, dims, (uint64_t)ndim, dt, strides, 0, ACL_FORMAT_ND, NULL, 0, data);
    if (st != ACLNN_SUCCESS) return og_aot_fail_from_aclnn(s->d, st);
    *out = t;
    return ACLNN_SUCCESS;
}

// The dense tensor t (a param) seen with other dims of the same element count and order.
static aclnnStatus reshape(scratch *s, aclTensor **out, const aclTensor *t, const int64_t *dims,
                           int ndim) {
    return view(s, out, dims, NULL, ndim, t->dtype, og_tensor_first(t));
}

// t (2 dims or more) with its last two dims swapped: a transposed view, no copy.
static aclnnStatus transposed(scratch *s, aclTensor **out, const aclTensor *t) {
    int n = t->ndim;
    int64_t dims[OG_MAX_DIMS], strides[OG_MAX_DIMS];
    memcpy(dims, t->dims, sizeof(int64_t) * (size_t)n);
    memcpy(strides, t->strides, sizeof(int64_t) * (size_t)n);
    dims[n - 2] = t->dims[n - 1], dims[n - 1] = t->dims[n - 2];
    strides[n - 2] = t->strides[n - 1], strides[n - 1] = t->strides[n - 2];
    return view(s, out, dims, strides, n, t->dtype, og_tensor_first(t));
}

// The dtype of a temporary that accumulates in t's precision: float64 for float64, else float32.
static aclDataType acc_dtype(aclDataType t) { return t == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT; }

// A dense temporary of `ndim` dims, float32 or float64 (aclrtMalloc, freed by scratch_release).
static aclnnStatus temp_acc(scratch *s, aclTensor **out, const int64_t *dims, int ndim,
                            aclDataType dt) {
    int64_t bytes = (int64_t)aclDataTypeSize(dt);
    for (int k = 0; k < ndim; k++)
        if (__builtin_mul_overflow(bytes, dims[k], &bytes)) {
            char b[160];
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%s: a %s temporary of shape %s would not fit in memory", s->d->name,
                           og_dtype_name(dt), og_shape_str(dims, ndim, b, sizeof b));
        }
    if (s->ntemps == MAX_TEMPS)
        return og_fail(ACLNN_ERR_INNER, "%s: too many temporaries", s->d->name);
    void *p = NULL;
    if (aclrtMalloc(&p, bytes ? (size_t)bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
        return og_fail(ACLNN_ERR_INNER, "%s: out of memory allocating a %lld-byte temporary",
                       s->d->name, (long long)bytes);
    s->temps[s->ntemps++] = p;
    return view(s, out, dims, NULL, ndim, dt, p);
}

/* ---- the aclnn calls --------------------------------------------------------------------------
 */

static aclnnStatus matmul(const aot_entry *d, const aclTensor *a, const aclTensor *b,
                          aclTensor *out) {
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnMatmulGetWorkspaceSize(a, b, out, 0, &ws, &ex);
    return og_aot_finish(d, st, ws, ex, aclnnMatmul);
}

static aclnnStatus fused(const aot_entry *d, const aclTensor *x1, const aclTensor *x2,
                         const aclTensor *bias, const char *type, int8_t cube, aclTensor *y) {
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnFusedMatmulGetWorkspaceSize(x1, x2, bias, NULL, type, cube, y, &ws, &ex);
    return og_aot_finish(d, st, ws, ex, aclnnFusedMatmul);
}

static aclnnStatus fused_backward(const aot_entry *d, const aclTensor *dy, const aclTensor *x1,
                                  const aclTensor *x2, const aclTensor *bias, const char *type,
                                  int8_t cube, aclTensor *dx1, aclTensor *dx2, aclTensor *dbias) {
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnFusedMatmulBackwardGetWorkspaceSize(dy, x1, x2, bias, NULL, type, cube,
                                                              dx1, dx2, dbias, NULL, &ws, &ex);
    return og_aot_finish(d, st, ws, ex, aclnnFusedMatmulBackward);
}

static aclnnStatus gelu(const aot_entry *d, const aclTensor *x, int64_t approximate, aclTensor *y) {
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnGeluV2GetWorkspaceSize(x, approximate, y, &ws, &ex);
    return og_aot_finish(d, st, ws, ex, aclnnGeluV2);
}

static aclnnStatus gelu_backward(const aot_entry *d, const aclTensor *dy, const aclTensor *x,
                                 const char *approximate, aclTensor *dx) {
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    char approx[8]; // the signature takes a char * (ops-nn's)
    snprintf(approx, sizeof approx, "%s", approximate);
    aclnnStatus st = aclnnGeluBackwardV2GetWorkspaceSize(dy, x, approx, dx, &ws, &ex);
    return og_aot_finish(d, st, ws, ex, aclnnGeluBackwardV2);
}

/* ---- Matmul -----------------------------------------------------------------------------------
 */

// a [..., M, K] @ b [..., K, N] under torch.matmul's rules: a 1-D a is a row [1,K], a 1-D b a
// column [K,1], that dim dropped from y; the batch dims (all but the last two) broadcast.
typedef struct mm_shape {
    int64_t M, K, N;
    int nbatch;
    int64_t batch[OG_MAX_DIMS];
    int ny;
    int64_t y[OG_MAX_DIMS];
    char rule[400]; // "a [2,3] @ b [3,4] (torch.matmul)", for messages
} mm_shape;

static aclnnStatus matmul_shape(const aot_entry *d, const aclTensor *t, mm_shape *s) {
    const aclTensor *a = &t[0], *b = &t[1];
    char s1[160], s2[160];
    for (int i = 0; i < 2; i++)
        if (t[i].ndim == 0)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%s: %s (params[%d]) is 0-d; torch.matmul takes tensors of 1 to %d dims",
                           d->name, d->in[i], i, OG_MAX_DIMS);
    int an = a->ndim, bn = b->ndim;
    s->M = an >= 2 ? a->dims[an - 2] : 1;
    s->K = a->dims[an - 1];
    s->N = bn >= 2 ? b->dims[bn - 1] : 1;
    int64_t K2 = bn >= 2 ? b->dims[bn - 2] : b->dims[0];
    og_shape_str(a->dims, an, s1, sizeof s1);
    og_shape_str(b->dims, bn, s2, sizeof s2);
    if (s->K != K2)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: a %s and b %s do not multiply: a's last dim (%lld) must equal b's %s "
                       "(%lld)",
                       d->name, s1, s2, (long long)s->K, bn >= 2 ? "second-to-last dim" : "length",
                       (long long)K2);
    int bad;
    if (!og_broadcast_shapes(a->dims, an > 2 ? an - 2 : 0, b->dims, bn > 2 ? bn - 2 : 0, s->batch,
                             &s->nbatch, &bad))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: the batch dims (all but the last two) of a %s and b %s do not "
                       "broadcast (batch dim %d differs and neither is 1)",
                       d->name, s1, s2, bad);
    s->ny = s->nbatch;
    memcpy(s->y, s->batch, sizeof(int64_t) * (size_t)s->nbatch);
    if (an >= 2) s->y[s->ny++] = s->M;
    if (bn >= 2) s->y[s->ny++] = s->N;
    snprintf(s->rule, sizeof s->rule, "a %s @ b %s (torch.matmul)", s1, s2);
    return ACLNN_SUCCESS;
}

// Does g (a gradient as a matrix stack) have the full batch (right-aligned, the extra leading
// batch dims all 1)? Then it receives the product directly, with nothing to sum.
static bool covers_batch(const aclTensor *g, const mm_shape *s) {
    int nb = g->ndim - 2;
    for (int i = 0; i < s->nbatch; i++) {
        int j = i - (s->nbatch - nb);
        if ((j < 0 ? 1 : g->dims[j]) != s->batch[i]) return false;
    }
    return true;
}

// g (a gradient seen as [gbatch..., rows, cols]) = x @ y summed over the batch dims that
// broadcast g's operand: written directly when g has the full batch, else formed in an fp32
// (float64 for a float64 g) temporary [batch..., rows, cols] and summed to g's shape in that
// precision by aclnnReduceSum, then rounded once to g's dtype.
static aclnnStatus grad_product(scratch *sc, const aclTensor *x, const aclTensor *y, aclTensor *g,
                                const mm_shape *s, int64_t rows, int64_t cols) {
    int64_t full[OG_MAX_DIMS];
    int nf = s->nbatch + 2;
    memcpy(full, s->batch, sizeof(int64_t) * (size_t)s->nbatch);
    full[s->nbatch] = rows, full[s->nbatch + 1] = cols;
    aclTensor *out;
    aclnnStatus st;
    if (covers_batch(g, s)) {
        st = reshape(sc, &out, g, full, nf);
        return st == ACLNN_SUCCESS ? matmul(sc->d, x, y, out) : st;
    }
    st = temp_acc(sc, &out, full, nf, acc_dtype(g->dtype));
    if (st == ACLNN_SUCCESS) st = matmul(sc->d, x, y, out);
    if (st != ACLNN_SUCCESS || g->dtype == out->dtype)
        return st == ACLNN_SUCCESS ? og_aot_reduce_to(sc->d, out, g) : st;
    // a 16-bit gradient: aclnnReduceSum would first cast the fp32 products to g's dtype, so the
    // sum goes to an fp32 temporary of g's shape, then is rounded once (og_aot_reduce_to's copy)
    aclTensor *sum;
    st = temp_acc(sc, &sum, g->dims, g->ndim, ACL_FLOAT);
    if (st == ACLNN_SUCCESS) st = og_aot_reduce_to(sc->d, out, sum);
    return st == ACLNN_SUCCESS ? og_aot_reduce_to(sc->d, sum, g) : st;
}

static aclnnStatus matmul_fwd(const aot_entry *d, aclTensor *t, const void *arg) {
    (void)arg;
    mm_shape s;
    aclnnStatus st = matmul_shape(d, t, &s);
    if (st == ACLNN_SUCCESS) st = og_aot_check_outputs(d, t, s.y, s.ny, s.rule);
    return st == ACLNN_SUCCESS ? matmul(d, &t[0], &t[1], &t[2]) : st;
}

// t: a, b, y, dy, da, db. With a2, b2 the operands as matrix stacks (a 1-D a as [1,K], a 1-D b
// as [K,1]) and dy2 = dy as [batch..., M, N]: da = dy2 @ b2^T and db = a2^T @ dy2, each summed
// over the batch dims its operand broadcast along.
static aclnnStatus matmul_bwd(const aot_entry *d, aclTensor *t, const void *arg) {
    (void)arg;
    mm_shape s;
    aclnnStatus st = matmul_shape(d, t, &s);
    if (st == ACLNN_SUCCESS) st = og_aot_check_outputs(d, t, s.y, s.ny, s.rule);
    if (st != ACLNN_SUCCESS) return st;
    scratch sc = {.d = d};
    const aclTensor *a = &t[0], *b = &t[1], *dy = &t[3];
    aclTensor *a2 = &t[0], *b2 = &t[1], *da2 = &t[4], *db2 = &t[5], *dy2, *bT, *aT, *dyf;
    const int64_t row[2] = {1, s.K}, col[2] = {s.K, 1};
    if (a->ndim == 1) {
        TRY(reshape(&sc, &a2, a, row, 2));
        TRY(reshape(&sc, &da2, &t[4], row, 2));
    }
    if (b->ndim == 1) {
        TRY(reshape(&sc, &b2, b, col, 2));
        TRY(reshape(&sc, &db2, &t[5], col, 2));
    }
    int64_t yd[OG_MAX_DIMS];
    memcpy(yd, s.batch, sizeof(int64_t) * (size_t)s.nbatch);
    yd[s.nbatch] = s.M, yd[s.nbatch + 1] = s.N;
    TRY(reshape(&sc, &dy2, dy, yd, s.nbatch + 2));
    // da = dy2 @ b2^T: [batch..., M, N] @ [bbatch..., N, K]
    TRY(transposed(&sc, &bT, b2));
    TRY(grad_product(&sc, dy2, bT, da2, &s, s.M, s.K));
    if (b2->ndim == 2) {
        // b has no batch dims (so a has the full batch): db = a^T @ dy with a's batch and rows
        // folded into one reduction dim of R = batch * M, read in place as [K, R] @ [R, N]
        int64_t R = s.M;
        for (int i = 0; i < s.nbatch; i++) R *= s.batch[i];
        const int64_t ad[2] = {s.K, R}, as[2] = {1, s.K}, fd[2] = {R, s.N};
        TRY(view(&sc, &aT, ad, as, 2, a->dtype, og_tensor_first(a)));
        TRY(reshape(&sc, &dyf, dy, fd, 2));
        TRY(matmul(d, aT, dyf, db2));
    } else {
        // db = a2^T @ dy2: [abatch..., K, M] @ [batch..., M, N]
        TRY(transposed(&sc, &aT, a2));
        TRY(grad_product(&sc, aT, dy2, db2, &s, s.K, s.N));
    }
    og_aot_log_grads(d, t);
done:
    scratch_release(&sc);
    return st;
}

/* ---- Linear -----------------------------------------------------------------------------------
 */

// A Linear entry's epilogue: FusedMatmul's fusedOpType, or a gelu applied after the product.
typedef struct linear_act {
    const char *type; // fusedOpType of the product ("" or "relu"); unused for the gelus
    bool gelu;
    int64_t approximate;     // aclnnGeluV2: 1 tanh, 0 none (erf)
    const char *approx_name; // aclnnGeluBackwardV2: "tanh", "none"
} linear_act;

static const linear_act ACT_NONE = {"", false, 0, NULL};
static const linear_act ACT_RELU = {"relu", false, 0, NULL};
static const linear_act ACT_GELU = {NULL, true, 1, "tanh"};
static const linear_act ACT_GELU_ERF = {NULL, true, 0, "none"};

// x [..., in], w [out, in], b [out] or [1, out]; y [..., out]. rows: x's leading dims as one.
typedef struct lin_shape {
    int64_t rows, in, out;
    int ny;
    int64_t y[OG_MAX_DIMS];
    char rule[400];
} lin_shape;

static aclnnStatus linear_shape(const aot_entry *d, const aclTensor *t, lin_shape *s) {
    const aclTensor *x = &t[0], *w = &t[1], *b = &t[2];
    char s1[160], s2[160];
    if (x->ndim == 0)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: x (params[0]) is 0-d; x is [..., in] with 1 to %d dims", d->name,
                       OG_MAX_DIMS);
    if (w->ndim != 2)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: w (params[1]) has shape %s; it must be [out, in] (2 dims, the layout "
                       "of nn.Dense's weight)",
                       d->name, og_shape_str(w->dims, w->ndim, s1, sizeof s1));
    s->out = w->dims[0], s->in = w->dims[1];
    og_shape_str(x->dims, x->ndim, s1, sizeof s1);
    og_shape_str(w->dims, 2, s2, sizeof s2);
    if (x->dims[x->ndim - 1] != s->in)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: x %s and w %s do not multiply: x's last dim (%lld) must equal w's "
                       "dim 1 (in, %lld)",
                       d->name, s1, s2, (long long)x->dims[x->ndim - 1], (long long)s->in);
    bool bias_ok = (b->ndim == 1 && b->dims[0] == s->out) ||
                   (b->ndim == 2 && b->dims[0] == 1 && b->dims[1] == s->out);
    if (!bias_ok) {
        char s3[160];
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: b (params[2]) has shape %s; it must be [%lld] or [1,%lld] (out, w's "
                       "dim 0)",
                       d->name, og_shape_str(b->dims, b->ndim, s3, sizeof s3), (long long)s->out,
                       (long long)s->out);
    }
    s->rows = 1;
    for (int k = 0; k < x->ndim - 1; k++) s->rows *= x->dims[k]; // a prefix of x's checked numel
    s->ny = x->ndim;
    memcpy(s->y, x->dims, sizeof(int64_t) * (size_t)x->ndim);
    s->y[s->ny - 1] = s->out;
    snprintf(s->rule, sizeof s->rule, "x %s @ w^T + b, w %s", s1, s2);
    return ACLNN_SUCCESS;
}

// What both directions share: the checks, x as [rows, in] (x2) and w^T as a view [in, out] (wT),
// the cubeMathType and the fusedOpType of the plain product for the gelus.
typedef struct lin_call {
    lin_shape s;
    aclTensor *x2, *wT;
    int8_t cube;
    const char *ztype;
    aclDataType zdtype; // z's dtype where it is a temporary: float64 for float64, else float32
} lin_call;

static aclnnStatus linear_prepare(scratch *sc, aclTensor *t, lin_call *c) {
    const aot_entry *d = sc->d;
    aclnnStatus st = linear_shape(d, t, &c->s);
    if (st == ACLNN_SUCCESS) st = og_aot_check_outputs(d, t, c->s.y, c->s.ny, c->s.rule);
    if (st != ACLNN_SUCCESS) return st;
    const int64_t xd[2] = {c->s.rows, c->s.in};
    st = reshape(sc, &c->x2, &t[0], xd, 2);
    if (st == ACLNN_SUCCESS) st = transposed(sc, &c->wT, &t[1]);
    aclDataType pr = og_promote(t[0].dtype, t[1].dtype);
    c->cube = pr == ACL_FLOAT ? 3 : 0; // ops-nn: float32 only with USE_HF32 (exact fp32 on the CPU)
    // z = x @ w^T + b in fp32 (from 16 bits: "16cast32"), in float64 for float64
    c->ztype = pr == ACL_FLOAT || pr == ACL_DOUBLE ? "" : "16cast32";
    c->zdtype = acc_dtype(pr);
    return st;
}

// t: x, w, b, y.
static aclnnStatus linear_fwd(const aot_entry *d, aclTensor *t, const void *arg) {
    const linear_act *act = arg;
    scratch sc = {.d = d};
    lin_call c;
    aclnnStatus st;
    aclTensor *y2, *z;
    TRY(linear_prepare(&sc, t, &c));
    const int64_t yd[2] = {c.s.rows, c.s.out};
    TRY(reshape(&sc, &y2, &t[3], yd, 2));
    if (!act->gelu) {
        TRY(fused(d, c.x2, c.wT, &t[2], act->type, c.cube, y2));
    } else { // gelu(z) on the fp32 (float64) z, in place, then rounded once to y's dtype
        z = y2;
        if (y2->dtype != c.zdtype) TRY(temp_acc(&sc, &z, yd, 2, c.zdtype));
        TRY(fused(d, c.x2, c.wT, &t[2], c.ztype, c.cube, z));
        TRY(gelu(d, z, act->approximate, z));
        if (z != y2) TRY(og_aot_reduce_to(d, z, y2));
    }
done:
    scratch_release(&sc);
    return st;
}

// t: x, w, b, y, dy, dx, dw, db.
static aclnnStatus linear_bwd(const aot_entry *d, aclTensor *t, const void *arg) {
    const linear_act *act = arg;
    scratch sc = {.d = d};
    lin_call c;
    aclnnStatus st;
    aclTensor *dy2, *dx2, *dwT, *z;
    TRY(linear_prepare(&sc, t, &c));
    const int64_t yd[2] = {c.s.rows, c.s.out}, xd[2] = {c.s.rows, c.s.in};
    TRY(reshape(&sc, &dy2, &t[4], yd, 2));
    TRY(reshape(&sc, &dx2, &t[5], xd, 2));
    TRY(transposed(&sc, &dwT, &t[6]));
    if (!act->gelu) {
        TRY(fused_backward(d, dy2, c.x2, c.wT, &t[2], act->type, c.cube, dx2, dwT, &t[7]));
    } else { // z recomputed in fp32 (float64); dz = dy * gelu'(z) in place; then the plain
             // product's grads
        TRY(temp_acc(&sc, &z, yd, 2, c.zdtype));
        TRY(fused(d, c.x2, c.wT, &t[2], c.ztype, c.cube, z));
        TRY(gelu_backward(d, dy2, z, act->approx_name, z));
        TRY(fused_backward(d, z, c.x2, c.wT, &t[2], c.ztype, c.cube, dx2, dwT, &t[7]));
    }
done:
    scratch_release(&sc);
    return st;
}

/* ---- the exported entry points ----------------------------------------------------------------
 */

typedef aclnnStatus (*entry_body)(const aot_entry *d, aclTensor *t, const void *arg);

static int run_entry(const aot_entry *d, entry_body body, const void *arg, int nparam,
                     void **params, int *ndims, int64_t **shapes, const char **dtypes) {
    aclTensor t[AOT_MAX_PARAMS];
    aclnnStatus st = og_aot_wrap_params(d, nparam, params, ndims, shapes, dtypes, t);
    if (st == ACLNN_SUCCESS) st = body(d, t, arg);
    for (int i = 0; i < og_aot_nparams(d); i++) og_object_unregister(&t[i]);
    return og_aot_reported(st);
}

#define MM_ENTRY(sym, inputs, nin_, backward_, body, arg)                                          \
    OPGRAD_API int sym(int nparam, void **params, int *ndims, int64_t **shapes,                    \
                       const char **dtypes, void *stream, void *extra) {                           \
        static const aot_entry d = {                                                               \
            .name = #sym, .backward = backward_, .nin = nin_, .in = inputs};                       \
        (void)stream; /* NULL on the CPU; the call is synchronous in any case */                   \
        (void)extra;  /* MindSpore's C++ AotExtra: not readable from C */                          \
        return run_entry(&d, body, arg, nparam, params, ndims, shapes, dtypes);                    \
    }
#define MM_INPUTS                                                                                  \
    { "a", "b" }
#define LIN_INPUTS                                                                                 \
    { "x", "w", "b" }
#define LINEAR_ENTRIES(Name, act)                                                                  \
    MM_ENTRY(opgrad_##Name, LIN_INPUTS, 3, false, linear_fwd, act)                                 \
    MM_ENTRY(opgrad_##Name##Backward, LIN_INPUTS, 3, true, linear_bwd, act)

MM_ENTRY(opgrad_Matmul, MM_INPUTS, 2, false, matmul_fwd, NULL)
MM_ENTRY(opgrad_MatmulBackward, MM_INPUTS, 2, true, matmul_bwd, NULL)
LINEAR_ENTRIES(Linear, &ACT_NONE)
LINEAR_ENTRIES(LinearRelu, &ACT_RELU)
LINEAR_ENTRIES(LinearGelu, &ACT_GELU)
LINEAR_ENTRIES(LinearGeluErf, &ACT_GELU_ERF)
