/* MindSpore "aot" entry points of the normalization and GLU operators (docs/aot.md, "Norms and
 * GLUs"), written by hand like the matmul family's (aot_matmul.c): the operators are NOAOT in
 * src/ops/ops.inc because the generic entries cannot build their arrays (normalizedShape,
 * outputMask), their saved statistics are extra outputs an aot forward does not return, and their
 * backwards take those statistics, which the bprop convention (inputs, y, dy) does not carry.
 * So each backward recomputes them with its forward operator into temporaries. Everything else
 * (nparam, NULL, dtype and rank checks, the contiguous wrapping, the y / dy / gradient shape and
 * dtype checks, the messages) is aot_internal.h's shared marshalling.
 *
 *   opgrad_LayerNorm          x, gamma, beta, y           last dim, eps 1e-5 (torch / nn.LayerNorm)
 *   opgrad_LayerNormBackward  x, gamma, beta, y, dy, dx, dgamma, dbeta
 *   opgrad_RmsNorm            x, gamma, y                 last dim, eps 1e-6
 *   opgrad_RmsNormBackward    x, gamma, y, dy, dx, dgamma
 *   opgrad_SwiGlu             x, y                        dim -1: y = silu(A) * B
 *   opgrad_SwiGluBackward     x, y, dy, dx
 *   opgrad_GeGlu              x, y                        dim -1, erf form: y = A * gelu(B)
 *   opgrad_GeGluBackward      x, y, dy, dx
 *
 * The backwards recompute, with the forward operator on the same x (so bitwise the statistics the
 * forward had): LayerNorm's mean and rstd (fp32 [rows..., 1]) and RmsNorm's rstd (fp32) with a
 * discarded y temporary; GeGlu's outGelu (x's dtype, y's shape, as the forward saves it). The
 * backward operators then run once: aclnnLayerNormBackward with outputMask {1,1,1},
 * aclnnRmsNormGrad (its dgamma is fp32: written directly into a float32 dgamma, else into an fp32
 * temporary rounded once to gamma's dtype), aclnnSwiGluGrad, aclnnGeGluBackward.
 * y is passed to the backwards by the bprop convention and not read. BatchNorm and GroupNorm have
 * no entry points (docs/aot.md says why).
 *
 * Attributes (MindSpore's `extra`, aot_extra.h; set the same ones on the forward and the backward
 * Custom): the norms' `eps` (or `epsilon`, MindSpore's name), the GLUs' `dim` (the split dim,
 * default -1) and GeGlu's `approximate` (0 or "none": erf, 1 or "tanh"). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_geglu.h"
#include "aclnnop/aclnn_geglu_backward.h"
#include "aclnnop/aclnn_layer_norm.h"
#include "aclnnop/aclnn_layer_norm_backward.h"
#include "aclnnop/aclnn_rms_norm.h"
#include "aclnnop/aclnn_rms_norm_grad.h"
#include "aclnnop/aclnn_swi_glu.h"
#include "aclnnop/aclnn_swi_glu_grad.h"
#include "aot/aot_internal.h"
#include "opgrad/custom_op.h"
#include "runtime/error.h"
#include "tensor/dtype.h"
#include "tensor/tensor.h"

#define LAYER_NORM_EPS 1e-5 // torch.nn.LayerNorm's and MindSpore's nn.LayerNorm default
#define RMS_NORM_EPS 1e-6   // aclnnRmsNorm's documented default, MindSpore's ops.rms_norm
#define GEGLU_ERF 0         // aclnnGeGlu's approximate: 0 the erf form (torch's "none")
#define GLU_DIM (-1)

// The norms' eps: the attribute `eps` or `epsilon`, else def; it must be > 0.
static aclnnStatus norm_eps(const aot_entry *d, double def, double *eps) {
    const char *names[2] = {"eps", "epsilon"};
    *eps = def;
    for (int k = 0; k < 2; k++) {
        bool found;
        aclnnStatus st = og_aot_attr_number(d, names[k], false, eps, &found);
        if (st != ACLNN_SUCCESS) return st;
        if (!found) continue;
        if (!(*eps > 0))
            return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: attribute '%s' is %g; it must be > 0",
                           d->name, names[k], *eps);
        break;
    }
    return ACLNN_SUCCESS;
}

// The GLUs' split dim (attribute `dim`, default -1), checked against x's rank and made >= 0.
static aclnnStatus glu_dim(const aot_entry *d, const aclTensor *x, int *dim) {
    double v = GLU_DIM;
    bool found;
    aclnnStatus st = og_aot_attr_number(d, "dim", true, &v, &found);
    if (st != ACLNN_SUCCESS) return st;
    if (x->ndim > 0 && (v < -x->ndim || v >= x->ndim))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: attribute 'dim' is %lld; x (params[0]) has %d dims, so it must be in "
                       "[%d, %d]",
                       d->name, (long long)v, x->ndim, -x->ndim, x->ndim - 1);
    *dim = (int)v < 0 ? (int)v + x->ndim : (int)v;
    return ACLNN_SUCCESS;
}

// GeGlu's approximate: 0 / "none" (erf, the default) or 1 / "tanh".
static aclnnStatus geglu_approximate(const aot_entry *d, int64_t *approx) {
    char s[16];
    bool found;
    double v = GEGLU_ERF;
    aclnnStatus st = og_aot_attr_string(d, "approximate", s, sizeof s, &found);
    if (st != ACLNN_SUCCESS) { // not a string: a number
        st = og_aot_attr_number(d, "approximate", true, &v, &found);
        if (st != ACLNN_SUCCESS) return st;
    } else if (found) {
        if (strcmp(s, "none") && strcmp(s, "tanh"))
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%s: attribute 'approximate' is \"%s\"; it is \"none\" (erf) or "
                           "\"tanh\" (or 0 / 1)",
                           d->name, s);
        v = strcmp(s, "tanh") ? 0 : 1;
    }
    if (v != 0 && v != 1)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: attribute 'approximate' is %g; it is 0 (erf, \"none\") or 1 (\"tanh\")",
                       d->name, v);
    *approx = (int64_t)v;
    return ACLNN_SUCCESS;
}

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        st = (expr);                                                                               \
        if (st != ACLNN_SUCCESS) goto done;                                                        \
    } while (0)

/* ---- the temporaries of one call ------------------------------------------------------------- */

enum { MAX_TEMPS = 4 };

typedef struct scratch {
    const aot_entry *d;
    aclTensor views[MAX_TEMPS]; // registered while the call runs (the operators take live objects)
    void *temps[MAX_TEMPS];
    int ntemps;
} scratch;

static void scratch_release(scratch *s) {
    for (int i = 0; i < s->ntemps; i++) {
        og_object_unregister(&s->views[i]);
        aclrtFree(s->temps[i]);
    }
}

// The dtype of the statistics (mean, rstd) and of RmsNormGrad's dgamma: FLOAT as ops-nn makes
// them, DOUBLE for a float64 x (opgrad's float64 extension keeps them in double).
static aclDataType stat_dtype(const aclTensor *x) {
    return x->dtype == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT;
}

// A dense temporary of `ndim` dims and dtype dt (aclrtMalloc, freed by scratch_release).
static aclnnStatus temp(scratch *s, aclTensor **out, const int64_t *dims, int ndim,
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
    aclTensor *t = &s->views[s->ntemps];
    s->temps[s->ntemps++] = p;
    aclnnStatus st = og_aot_init_dense(s->d, t, dims, ndim, dt, p);
    *out = t;
    return st;
}

/* ---- shapes ------------------------------------------------------------------------------------
 */

// The norms: x [..., C] (1 to 8 dims), each weight (t[1..nw]) [C]; y has x's shape.
static aclnnStatus norm_shape(const aot_entry *d, const aclTensor *t, int nw) {
    const aclTensor *x = &t[0];
    char s1[160], s2[160];
    if (x->ndim == 0)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: x (params[0]) is 0-d; x is [..., C] with 1 to %d dims, normalized over "
                       "its last dim",
                       d->name, OG_MAX_DIMS);
    int64_t C = x->dims[x->ndim - 1];
    og_shape_str(x->dims, x->ndim, s1, sizeof s1);
    for (int i = 1; i <= nw; i++)
        if (t[i].ndim != 1 || t[i].dims[0] != C)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%s: %s (params[%d]) has shape %s; it must be [%lld] (x %s is "
                           "normalized over its last dim)",
                           d->name, d->in[i], i, og_shape_str(t[i].dims, t[i].ndim, s2, sizeof s2),
                           (long long)C, s1);
    return og_aot_check_outputs(d, t, x->dims, x->ndim, "the shape of x");
}

// The rows' statistics: x's shape with its last dim 1 (the forwards' [A..., 1] layout).
static void stat_dims(const aclTensor *x, int64_t *dims) {
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->ndim);
    dims[x->ndim - 1] = 1;
}

// The GLUs: x [..., 2H, ...] (1 to 8 dims, 2H at the split dim, *dim: the attribute `dim`,
// default -1, made >= 0), y the same with H there.
static aclnnStatus glu_shape(const aot_entry *d, const aclTensor *t, int *dim) {
    const aclTensor *x = &t[0];
    char s1[160], rule[400];
    if (x->ndim == 0)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: x (params[0]) is 0-d; x is [..., 2H] with 1 to %d dims, split in two "
                       "halves along its last dim (or the attribute dim)",
                       d->name, OG_MAX_DIMS);
    aclnnStatus st = glu_dim(d, x, dim);
    if (st != ACLNN_SUCCESS) return st;
    og_shape_str(x->dims, x->ndim, s1, sizeof s1);
    int64_t n = x->dims[*dim];
    char which[32] = "last dim"; // the default split dim keeps its plain name
    if (*dim != x->ndim - 1) snprintf(which, sizeof which, "dim %d", *dim);
    if (n % 2 != 0)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: x (params[0]) %s has an odd %s (%lld); it is split in two halves",
                       d->name, s1, which, (long long)n);
    int64_t want[OG_MAX_DIMS];
    memcpy(want, x->dims, sizeof(int64_t) * (size_t)x->ndim);
    want[*dim] = n / 2;
    snprintf(rule, sizeof rule, "x %s with its %s halved", s1, which);
    return og_aot_check_outputs(d, t, want, x->ndim, rule);
}

/* ---- LayerNorm --------------------------------------------------------------------------------
 */

// aclnnLayerNorm over x's last dim; mean and rstd may be NULL (the forward).
static aclnnStatus layer_norm(const aot_entry *d, const aclTensor *x, const aclTensor *gamma,
                              const aclTensor *beta, aclTensor *y, aclTensor *mean,
                              aclTensor *rstd) {
    int64_t C = x->dims[x->ndim - 1];
    aclIntArray shape = {.size = 1, .values = &C};
    if (!og_object_register(&shape, OG_OBJ_INT_ARRAY))
        return og_fail(ACLNN_ERR_INNER, "%s: out of memory registering an array", d->name);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    double eps;
    aclnnStatus st = norm_eps(d, LAYER_NORM_EPS, &eps);
    if (st == ACLNN_SUCCESS) {
        st = aclnnLayerNormGetWorkspaceSize(x, &shape, gamma, beta, eps, y, mean, rstd, &ws, &ex);
        st = og_aot_finish(d, st, ws, ex, aclnnLayerNorm);
    }
    og_object_unregister(&shape);
    return st;
}

// t: x, gamma, beta, y.
static aclnnStatus layer_norm_fwd(const aot_entry *d, aclTensor *t) {
    aclnnStatus st = norm_shape(d, t, 2);
    return st == ACLNN_SUCCESS ? layer_norm(d, &t[0], &t[1], &t[2], &t[3], NULL, NULL) : st;
}

// t: x, gamma, beta, y, dy, dx, dgamma, dbeta. mean and rstd recomputed (fp32), then one
// aclnnLayerNormBackward with every gradient.
static aclnnStatus layer_norm_bwd(const aot_entry *d, aclTensor *t) {
    aclnnStatus st = norm_shape(d, t, 2);
    if (st != ACLNN_SUCCESS) return st;
    scratch sc = {.d = d};
    const aclTensor *x = &t[0];
    aclTensor *y, *mean, *rstd;
    int64_t sd[OG_MAX_DIMS], C = x->dims[x->ndim - 1];
    stat_dims(x, sd);
    bool mask_v[3] = {true, true, true};
    aclIntArray shape = {.size = 1, .values = &C};
    aclBoolArray mask = {.size = 3, .values = mask_v};
    bool reg_shape = og_object_register(&shape, OG_OBJ_INT_ARRAY);
    bool reg_mask = og_object_register(&mask, OG_OBJ_BOOL_ARRAY);
    if (!reg_shape || !reg_mask) {
        st = og_fail(ACLNN_ERR_INNER, "%s: out of memory registering an array", d->name);
        goto done;
    }
    TRY(temp(&sc, &y, x->dims, x->ndim, x->dtype));
    TRY(temp(&sc, &mean, sd, x->ndim, stat_dtype(x)));
    TRY(temp(&sc, &rstd, sd, x->ndim, stat_dtype(x)));
    TRY(layer_norm(d, x, &t[1], &t[2], y, mean, rstd));
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    st = aclnnLayerNormBackwardGetWorkspaceSize(&t[4], x, &shape, mean, rstd, &t[1], &t[2], &mask,
                                                &t[5], &t[6], &t[7], &ws, &ex);
    st = og_aot_finish(d, st, ws, ex, aclnnLayerNormBackward);
done:
    if (reg_shape) og_object_unregister(&shape);
    if (reg_mask) og_object_unregister(&mask);
    scratch_release(&sc);
    return st;
}

/* ---- RmsNorm ----------------------------------------------------------------------------------
 */

static aclnnStatus rms_norm(const aot_entry *d, const aclTensor *x, const aclTensor *gamma,
                            aclTensor *y, aclTensor *rstd) {
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    double eps;
    aclnnStatus st = norm_eps(d, RMS_NORM_EPS, &eps);
    if (st != ACLNN_SUCCESS) return st;
    st = aclnnRmsNormGetWorkspaceSize(x, gamma, eps, y, rstd, &ws, &ex);
    return og_aot_finish(d, st, ws, ex, aclnnRmsNorm);
}

// t: x, gamma, y. aclnnRmsNorm's rstdOut is required: an fp32 (float64) temporary.
static aclnnStatus rms_norm_fwd(const aot_entry *d, aclTensor *t) {
    aclnnStatus st = norm_shape(d, t, 1);
    if (st != ACLNN_SUCCESS) return st;
    scratch sc = {.d = d};
    aclTensor *rstd;
    int64_t sd[OG_MAX_DIMS];
    stat_dims(&t[0], sd);
    TRY(temp(&sc, &rstd, sd, t[0].ndim, stat_dtype(&t[0])));
    TRY(rms_norm(d, &t[0], &t[1], &t[2], rstd));
done:
    scratch_release(&sc);
    return st;
}

// t: x, gamma, y, dy, dx, dgamma. rstd recomputed; aclnnRmsNormGrad's dgamma is fp32 (float64).
static aclnnStatus rms_norm_bwd(const aot_entry *d, aclTensor *t) {
    aclnnStatus st = norm_shape(d, t, 1);
    if (st != ACLNN_SUCCESS) return st;
    scratch sc = {.d = d};
    const aclTensor *x = &t[0];
    aclTensor *y, *rstd, *dgamma = &t[5];
    int64_t sd[OG_MAX_DIMS];
    stat_dims(x, sd);
    TRY(temp(&sc, &y, x->dims, x->ndim, x->dtype));
    TRY(temp(&sc, &rstd, sd, x->ndim, stat_dtype(x)));
    TRY(rms_norm(d, x, &t[1], y, rstd));
    if (t[5].dtype != stat_dtype(x)) TRY(temp(&sc, &dgamma, t[5].dims, t[5].ndim, stat_dtype(x)));
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    st = aclnnRmsNormGradGetWorkspaceSize(&t[3], x, rstd, &t[1], &t[4], dgamma, &ws, &ex);
    TRY(og_aot_finish(d, st, ws, ex, aclnnRmsNormGrad));
    if (dgamma != &t[5]) TRY(og_aot_reduce_to(d, dgamma, &t[5])); // rounded once (RNE)
done:
    scratch_release(&sc);
    return st;
}

/* ---- SwiGlu, GeGlu ----------------------------------------------------------------------------
 */

// t: x, y.
static aclnnStatus swiglu_fwd(const aot_entry *d, aclTensor *t) {
    int dim;
    aclnnStatus st = glu_shape(d, t, &dim);
    if (st != ACLNN_SUCCESS) return st;
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    st = aclnnSwiGluGetWorkspaceSize(&t[0], dim, &t[1], &ws, &ex);
    return og_aot_finish(d, st, ws, ex, aclnnSwiGlu);
}

// t: x, y, dy, dx.
static aclnnStatus swiglu_bwd(const aot_entry *d, aclTensor *t) {
    int dim;
    aclnnStatus st = glu_shape(d, t, &dim);
    if (st != ACLNN_SUCCESS) return st;
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    st = aclnnSwiGluGradGetWorkspaceSize(&t[2], &t[0], dim, &t[3], &ws, &ex);
    return og_aot_finish(d, st, ws, ex, aclnnSwiGluGrad);
}

static aclnnStatus geglu(const aot_entry *d, const aclTensor *x, int dim, int64_t approx,
                         aclTensor *y, aclTensor *gelu) {
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnGeGluGetWorkspaceSize(x, dim, approx, y, gelu, &ws, &ex);
    return og_aot_finish(d, st, ws, ex, aclnnGeGlu);
}

// t: x, y. outGelu (required by aclnnGeGlu) goes to a temporary.
static aclnnStatus geglu_fwd(const aot_entry *d, aclTensor *t) {
    int dim;
    int64_t approx;
    aclnnStatus st = glu_shape(d, t, &dim);
    if (st == ACLNN_SUCCESS) st = geglu_approximate(d, &approx);
    if (st != ACLNN_SUCCESS) return st;
    scratch sc = {.d = d};
    aclTensor *gelu;
    TRY(temp(&sc, &gelu, t[1].dims, t[1].ndim, t[0].dtype));
    TRY(geglu(d, &t[0], dim, approx, &t[1], gelu));
done:
    scratch_release(&sc);
    return st;
}

// t: x, y, dy, dx. outGelu recomputed by aclnnGeGlu (in x's dtype, as the forward saves it).
static aclnnStatus geglu_bwd(const aot_entry *d, aclTensor *t) {
    int dim;
    int64_t approx;
    aclnnStatus st = glu_shape(d, t, &dim);
    if (st == ACLNN_SUCCESS) st = geglu_approximate(d, &approx);
    if (st != ACLNN_SUCCESS) return st;
    scratch sc = {.d = d};
    aclTensor *y, *gelu;
    TRY(temp(&sc, &y, t[1].dims, t[1].ndim, t[0].dtype));
    TRY(temp(&sc, &gelu, t[1].dims, t[1].ndim, t[0].dtype));
    TRY(geglu(d, &t[0], dim, approx, y, gelu));
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    st = aclnnGeGluBackwardGetWorkspaceSize(&t[2], &t[0], gelu, dim, approx, &t[3], &ws, &ex);
    TRY(og_aot_finish(d, st, ws, ex, aclnnGeGluBackward));
done:
    scratch_release(&sc);
    return st;
}

/* ---- the exported entry points ----------------------------------------------------------------
 */

#define LN_INPUTS                                                                                  \
    { "x", "gamma", "beta" }
#define RMS_INPUTS                                                                                 \
    { "x", "gamma" }
#define GLU_INPUTS                                                                                 \
    { "x" }

OG_AOT_ENTRY(opgrad_LayerNorm, LN_INPUTS, 3, false, layer_norm_fwd)
OG_AOT_ENTRY(opgrad_LayerNormBackward, LN_INPUTS, 3, true, layer_norm_bwd)
OG_AOT_ENTRY(opgrad_RmsNorm, RMS_INPUTS, 2, false, rms_norm_fwd)
OG_AOT_ENTRY(opgrad_RmsNormBackward, RMS_INPUTS, 2, true, rms_norm_bwd)
OG_AOT_ENTRY(opgrad_SwiGlu, GLU_INPUTS, 1, false, swiglu_fwd)
OG_AOT_ENTRY(opgrad_SwiGluBackward, GLU_INPUTS, 1, true, swiglu_bwd)
OG_AOT_ENTRY(opgrad_GeGlu, GLU_INPUTS, 1, false, geglu_fwd)
OG_AOT_ENTRY(opgrad_GeGluBackward, GLU_INPUTS, 1, true, geglu_bwd)
