/* The pointwise losses and their backwards: aclnnMseLoss, aclnnL1Loss, aclnnSmoothL1Loss,
 * aclnnBinaryCrossEntropy, aclnnBinaryCrossEntropyWithLogits (+ Backward). One phase 1 for all:
 * argument checks, then
 *   reduction none:       one MAP (the loss kernel over the broadcast operands);
 *   reduction mean / sum: one REDUCE whose map is the loss kernel (the engine's fixed summation
 *                         order: the same bits on any thread count and ISA; a mean divides the
 *                         fp32 sum by N once; over nothing it is NaN, a sum 0). BCE with logits
 *                         with both weight and posWeight has four operands, one more than a
 *                         reduction maps: its losses go through an fp32 temporary first;
 *   backward:             one MAP of (gradOutput, self, target[, weight][, posWeight]) with the
 *                         scale 1/N for mean (gradOutput broadcast, usually 0-D); BCE with logits
 *                         with both weights (five operands) first forms gradOutput * weight in an
 *                         fp32 temporary.
 * Kernels: loss_kernel_simd.c. */
#include <math.h>

#include "aclnnop/aclnn_binary_cross_entropy.h"
#include "aclnnop/aclnn_binary_cross_entropy_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_backward.h"
#include "aclnnop/aclnn_l1_loss.h"
#include "aclnnop/aclnn_l1_loss_backward.h"
#include "aclnnop/aclnn_mse_loss.h"
#include "aclnnop/aclnn_mse_loss_backward.h"
#include "aclnnop/aclnn_smooth_l1_loss.h"
#include "aclnnop/aclnn_smooth_l1_loss_backward.h"
#include "engine/program.h"
#include "engine/reduce.h"
#include "ops/common/checks.h"
#include "ops/loss/loss_kernel.h"
#include "ops/math/mul/mul_kernel.h"

OG_EW_DEFINE_KERNEL3_TABLES(mse_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(mse_bwd);
OG_EW_DEFINE_KERNEL3_TABLES(l1_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(l1_bwd);
OG_EW_DEFINE_KERNEL3_TABLES(sl1_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(sl1_bwd);
OG_EW_DEFINE_KERNEL3_TABLES(bce_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(bce_bwd);
OG_EW_DEFINE_KERNEL3_TABLES(bcel_fwd);
OG_EW_DEFINE_KERNEL3_TABLES(bcel_bwd);

typedef enum { LOSS_MSE, LOSS_L1, LOSS_SL1, LOSS_BCE, LOSS_BCEL } loss_kind;

/// One call of a loss or its backward, after the NULL checks.
typedef struct loss_args {
    const og_opdesc *op;
    loss_kind kind;
    bool backward;
    // operands in kernel order: [gradOutput,] self, target[, weight][, posWeight]
    int nin;
    const aclTensor *in[5];
    const char *names[6]; // the inputs', then the output's
    const aclTensor *out;
    // executor io slots: one per parameter, an optional tensor not given included (NULL there),
    // as every operator with optional tensors numbers them; slot[k] is in[k]'s
    int nparam;
    const aclTensor *io[7];
    int slot[5];
    int64_t reduction;
    og_loss_params params;
} loss_args;

// Each kernel's fp32, fused 16-bit, float64 and non-temporal fp32 entry points (OG_EW_KERNEL3_FN)
#define LOSS_KERNEL(name)                                                                          \
    {                                                                                              \
        og_##name##_kernels, og_##name##_kernels16, og_##name##_kernels64, og_##name##_nt_kernels, \
            false, false                                                                           \
    }
static const og_ew_kernel FWD[] = {LOSS_KERNEL(mse_fwd), LOSS_KERNEL(l1_fwd), LOSS_KERNEL(sl1_fwd),
                                   LOSS_KERNEL(bce_fwd), LOSS_KERNEL(bcel_fwd)};
static const og_ew_kernel BWD[] = {LOSS_KERNEL(mse_bwd), LOSS_KERNEL(l1_bwd), LOSS_KERNEL(sl1_bwd),
                                   LOSS_KERNEL(bce_bwd), LOSS_KERNEL(bcel_bwd)};

// NumPy broadcast of tensors [0, n) into dims / *nd; false (and the message) when they do not.
static aclnnStatus broadcast(const loss_args *a, int first, int n, int64_t *dims, int *nd) {
    *nd = 0;
    char s1[160], s2[160];
    for (int k = first; k < first + n; k++) {
        int64_t next[OG_MAX_DIMS];
        int nn, bad;
        const aclTensor *t = a->in[k];
        if (!og_broadcast_shapes(dims, *nd, t->dims, t->ndim, next, &nn, &bad))
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: %s %s does not broadcast with %s (dim %d differs "
                           "and neither is 1)",
                           a->op->name, a->names[k], og_shape_str(t->dims, t->ndim, s1, sizeof s1),
                           og_shape_str(dims, *nd, s2, sizeof s2), bad);
        for (int d = 0; d < nn; d++) dims[d] = next[d];
        *nd = nn;
    }
    return ACLNN_SUCCESS;
}

static int64_t numel_of(const int64_t *dims, int nd) {
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= dims[d];
    return n;
}

// The BCE forms: each operand but self broadcasts to self's shape (a target of another shape,
// where the rule is "same shape", is caught by the caller).
static aclnnStatus broadcasts_to_self(const loss_args *a, int k, const aclTensor *self) {
    int64_t out[OG_MAX_DIMS];
    int nn, bad;
    const aclTensor *t = a->in[k];
    bool ok = og_broadcast_shapes(self->dims, self->ndim, t->dims, t->ndim, out, &nn, &bad) &&
              nn == self->ndim;
    for (int d = 0; ok && d < nn; d++) ok = out[d] == self->dims[d];
    if (ok) return ACLNN_SUCCESS;
    char s1[160], s2[160];
    return og_fail(ACLNN_ERR_PARAM_INVALID,
                   "%sGetWorkspaceSize: %s %s cannot be broadcast to self's shape %s", a->op->name,
                   a->names[k], og_shape_str(t->dims, t->ndim, s1, sizeof s1),
                   og_shape_str(self->dims, self->ndim, s2, sizeof s2));
}

// Checks every tensor, the reduction and beta, the shapes; returns the promoted dtype and the
// shape the losses are formed over (the broadcast of the operands without gradOutput) in
// dims / *nd.
static aclnnStatus check(loss_args *a, aclDataType *promoted, int64_t *dims, int *nd) {
    const og_opdesc *op = a->op;
    for (int k = 0; k < a->nin; k++)
        OG_TRY(og_check_tensor_of(op, a->names[k], a->in[k], 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, a->names[a->nin], a->out, 0, OG_DTS_FLOATING64));
    if (a->reduction < 0 || a->reduction > 2)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: reduction is %lld; it must be 0 (none), 1 (mean) or "
                       "2 (sum)",
                       op->name, (long long)a->reduction);
    if (a->kind == LOSS_SL1 && !(a->params.beta >= 0.0f))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: beta is %g; it must be >= 0 (0 gives the L1 loss)",
                       op->name, (double)a->params.beta);
    int g = a->backward ? 1 : 0; // index of self
    const aclTensor *self = a->in[g];
    if (a->kind == LOSS_BCE || a->kind == LOSS_BCEL) {
        // the forwards take a target of self's shape; the backwards let gradOutput, the weights
        // (and BCE's target) broadcast to it
        bool same_target = !a->backward || a->kind == LOSS_BCEL;
        if (same_target) OG_TRY(og_check_same_shape(op, "self", self, "target", a->in[g + 1]));
        for (int k = 0; k < a->nin; k++)
            if (k != g) OG_TRY(broadcasts_to_self(a, k, self));
    }
    OG_TRY(broadcast(a, g, a->nin - g, dims, nd));
    OG_TRY(og_check_promotion(op, a->nin, a->names, a->in, a->names[a->nin], a->out, promoted));
    if (a->backward || a->reduction == 0)
        return og_check_broadcast_to(op, a->nin, a->names, a->in, a->names[a->nin], a->out);
    // mean / sum: MseLoss and L1Loss take a 0-D out only; the others' docs give [1], and a 0-D
    // out (PyTorch's) is taken as well
    bool one_d = a->kind == LOSS_SL1 || a->kind == LOSS_BCE || a->kind == LOSS_BCEL;
    if (a->out->ndim == 0 || (one_d && a->out->ndim == 1 && a->out->dims[0] == 1))
        return ACLNN_SUCCESS;
    char s[160];
    return og_fail(ACLNN_ERR_PARAM_INVALID,
                   "%sGetWorkspaceSize: %s has shape %s but reduction %lld (%s) gives one value: "
                   "%s must be 0-D%s",
                   op->name, a->names[a->nin],
                   og_shape_str(a->out->dims, a->out->ndim, s, sizeof s), (long long)a->reduction,
                   a->reduction == 1 ? "mean" : "sum", a->names[a->nin], one_d ? " or [1]" : "");
}

// The loss kernels read at most four operands (BCE with logits with both weights folds gradOutput
// and weight into one first, see plan_backward).
#define LOSS_KERNEL_MAX_IN 4

static og_ew_op ew_of(const loss_args *a, og_ew_kernel k, aclDataType promoted) {
    og_ew_op ew = {.op = a->op,
                   .kernels = k.fp32,
                   .kernels16 = k.fused16,
                   .kernels64 = k.fp64,
                   .kernels_nt = k.fp32_nt,
                   .nin = a->nin,
                   .nout = 1,
                   .out = {a->out},
                   .slots = true,
                   .out_slot = {a->nparam},
                   .params = &a->params,
                   .params_size = sizeof a->params,
                   .compute_dtype = promoted};
    // (five operands: the caller rebuilds the list, see plan_backward)
    for (int k = 0; k < a->nin && k < LOSS_KERNEL_MAX_IN; k++)
        ew.in[k] = a->in[k], ew.in_slot[k] = a->slot[k];
    for (int k = 0; k <= a->nin; k++) ew.names[k] = a->names[k];
    return ew;
}

// The sum (or mean) of every element of the shape dims into the one-element out.
static og_reduce_op sum_all(const loss_args *a, const int64_t *dims, int nd) {
    og_reduce_op r = {.kind = a->reduction == 1 ? OG_RED_MEAN : OG_RED_SUM,
                      .params = &a->params,
                      .params_size = sizeof a->params,
                      .ndim = nd,
                      .reduce_mask = (1u << nd) - 1u,
                      .out = a->out,
                      .out_slot = a->nparam,
                      .round_in = ACL_FLOAT};
    for (int d = 0; d < nd; d++) r.dims[d] = dims[d];
    return r;
}

// Data addresses and overlaps of the tensors that are read or written: an empty tensor never
// is, but a reduced loss of empty inputs still writes its one element (0, or NaN for a mean).
static aclnnStatus check_memory(const loss_args *a) {
    if (a->out->numel == 0) return ACLNN_SUCCESS;
    const aclTensor *in[5];
    const char *names[6];
    int n = 0;
    for (int k = 0; k < a->nin; k++)
        if (a->in[k]->numel > 0) in[n] = a->in[k], names[n++] = a->names[k];
    names[n] = a->names[a->nin];
    return og_check_io_memory(a->op, n, in, 1, &a->out, names);
}

static aclnnStatus plan_forward(loss_args *a, uint64_t *workspaceSize, aclOpExecutor **executor) {
    aclDataType promoted;
    int64_t dims[OG_MAX_DIMS];
    int nd;
    OG_TRY(check(a, &promoted, dims, &nd));
    OG_TRY(check_memory(a));
    og_ew_kernel k = FWD[a->kind];
    og_prog p;
    og_prog_init(&p, a->op, a->nparam, 1, a->io);
    if (a->out->numel == 0) return og_prog_publish(&p, workspaceSize, executor);
    if (a->reduction == 0) {
        og_ew_op ew = ew_of(a, k, promoted);
        og_prog_map(&p, &ew);
        return og_prog_publish(&p, workspaceSize, executor);
    }
    og_reduce_op r = sum_all(a, dims, nd);
    if (a->nin <= OG_RED_MAX_IN) {
        r.nin = a->nin;
        r.map = k.fp32;
        r.map16 = k.fused16;
        r.map64 = k.fp64;
        for (int j = 0; j < a->nin; j++) r.in[j] = a->in[j], r.in_slot[j] = a->slot[j];
        og_prog_reduce(&p, &r);
        return og_prog_publish(&p, workspaceSize, executor);
    }
    // four operands: the losses into an fp32 (float64) temporary, then its sum
    aclDataType wide = promoted == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT;
    const aclTensor *tmp;
    int slot = og_prog_temp(&p, wide, nd, dims, &tmp);
    og_ew_op ew = ew_of(a, k, wide);
    ew.out[0] = tmp;
    ew.out_slot[0] = slot;
    og_prog_map(&p, &ew);
    r.nin = 1;
    r.in[0] = tmp;
    r.in_slot[0] = slot;
    r.params = NULL;
    r.params_size = 0;
    og_prog_reduce(&p, &r);
    return og_prog_publish(&p, workspaceSize, executor);
}

static aclnnStatus plan_backward(loss_args *a, uint64_t *workspaceSize, aclOpExecutor **executor) {
    aclDataType promoted;
    int64_t dims[OG_MAX_DIMS];
    int nd;
    OG_TRY(check(a, &promoted, dims, &nd));
    OG_TRY(check_memory(a));
    // mean: the N the forward divided by (the losses' count, gradOutput not counted)
    a->params.scale = a->reduction == 1 ? 1.0f / (float)numel_of(dims, nd) : 1.0f;
    a->params.scale64 = a->reduction == 1 ? 1.0 / (double)numel_of(dims, nd) : 1.0;
    og_ew_kernel k = BWD[a->kind];
    og_prog p;
    og_prog_init(&p, a->op, a->nparam, 1, a->io);
    if (a->out->numel == 0) return og_prog_publish(&p, workspaceSize, executor);
    if (a->nin <= LOSS_KERNEL_MAX_IN) {
        og_ew_op ew = ew_of(a, k, promoted);
        og_prog_map(&p, &ew);
        return og_prog_publish(&p, workspaceSize, executor);
    }
    // BCE with logits with both weights (five operands): gradOutput * weight into an fp32
    // (float64) temporary of the output's shape, then the kernel with posWeight only
    aclDataType wide = promoted == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT;
    const aclTensor *tmp;
    int slot = og_prog_temp(&p, wide, a->out->ndim, a->out->dims, &tmp);
    og_ew_op gw = {.op = a->op,
                   .kernels = og_mul_kernels,
                   .kernels64 = og_mul_kernels64,
                   .nin = 2,
                   .in = {a->in[0], a->in[3]},
                   .nout = 1,
                   .out = {tmp},
                   .names = {a->names[0], a->names[3], "gradOutput * weight"},
                   .slots = true,
                   .in_slot = {a->slot[0], a->slot[3]},
                   .out_slot = {slot},
                   .compute_dtype = wide};
    og_prog_map(&p, &gw);
    a->params.flags = OG_LOSS_PW;
    og_ew_op ew = ew_of(a, k, promoted);
    ew.nin = 4;
    ew.in[0] = tmp;
    ew.in[3] = a->in[4];
    ew.names[3] = a->names[4];
    ew.names[4] = a->names[5];
    ew.in_slot[0] = slot, ew.in_slot[3] = a->slot[4];
    og_prog_map(&p, &ew);
    return og_prog_publish(&p, workspaceSize, executor);
}

// Fills the operands: [grad,] self, target, then the optional weights that are there.
static aclnnStatus start(loss_args *a, const og_opdesc *op, loss_kind kind, const aclTensor *grad,
                         const char *grad_name, const aclTensor *self, const aclTensor *target,
                         const aclTensor *weight, const char *weight_name, bool has_pos_weight,
                         const aclTensor *posWeight, int64_t reduction, float beta,
                         const aclTensor *out, const char *out_name, uint64_t *workspaceSize,
                         aclOpExecutor **executor) {
    *a = (loss_args){.op = op, .kind = kind, .backward = grad_name != NULL};
    const char *names[4];
    const void *ptrs[4];
    int n = 0;
    if (grad_name) names[n] = grad_name, ptrs[n++] = grad;
    names[n] = "self", ptrs[n++] = self;
    names[n] = "target", ptrs[n++] = target;
    names[n] = out_name, ptrs[n++] = out;
    OG_TRY(og_check_args(op, workspaceSize, executor, n, names, ptrs));
    // every parameter has a slot: [gradOutput,] self, target[, weight][, posWeight]
    const aclTensor *params[5];
    const char *pnames[5];
    int np = 0;
    if (grad_name) pnames[np] = grad_name, params[np++] = grad;
    pnames[np] = "self", params[np++] = self;
    pnames[np] = "target", params[np++] = target;
    if (weight_name) pnames[np] = weight_name, params[np++] = weight;
    if (has_pos_weight) pnames[np] = "posWeightOptional", params[np++] = posWeight;
    for (int j = 0; j < np; j++) {
        a->io[j] = params[j];
        if (!params[j]) continue;
        a->names[a->nin] = pnames[j];
        a->slot[a->nin] = j;
        a->in[a->nin++] = params[j];
    }
    a->nparam = np;
    a->io[np] = out;
    if (weight) a->params.flags |= OG_LOSS_W;
    if (posWeight) a->params.flags |= OG_LOSS_PW;
    a->names[a->nin] = out_name;
    a->out = out;
    a->reduction = reduction;
    a->params.scale = 1.0f;
    a->params.beta = beta;
    a->params.scale64 = 1.0;
    a->params.beta64 = beta;
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnMseLossGetWorkspaceSize(const aclTensor *self, const aclTensor *target,
                                         int64_t reduction, aclTensor *out, uint64_t *workspaceSize,
                                         aclOpExecutor **executor) {
    loss_args a;
    OG_TRY(start(&a, &og_op_MseLoss, LOSS_MSE, NULL, NULL, self, target, NULL, NULL, false, NULL,
                 reduction, 0, out, "out", workspaceSize, executor));
    return plan_forward(&a, workspaceSize, executor);
}

aclnnStatus aclnnMseLossBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                 const aclTensor *target, int64_t reduction,
                                                 aclTensor *out, uint64_t *workspaceSize,
                                                 aclOpExecutor **executor) {
    loss_args a;
    OG_TRY(start(&a, &og_op_MseLossBackward, LOSS_MSE, gradOutput, "gradOutput", self, target, NULL,
                 NULL, false, NULL, reduction, 0, out, "out", workspaceSize, executor));
    return plan_backward(&a, workspaceSize, executor);
}

aclnnStatus aclnnL1LossGetWorkspaceSize(const aclTensor *self, const aclTensor *target,
                                        int64_t reduction, aclTensor *out, uint64_t *workspaceSize,
                                        aclOpExecutor **executor) {
    loss_args a;
    OG_TRY(start(&a, &og_op_L1Loss, LOSS_L1, NULL, NULL, self, target, NULL, NULL, false, NULL,
                 reduction, 0, out, "out", workspaceSize, executor));
    return plan_forward(&a, workspaceSize, executor);
}

aclnnStatus aclnnL1LossBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                const aclTensor *target, int64_t reduction,
                                                aclTensor *gradInput, uint64_t *workspaceSize,
                                                aclOpExecutor **executor) {
    loss_args a;
    OG_TRY(start(&a, &og_op_L1LossBackward, LOSS_L1, gradOutput, "gradOutput", self, target, NULL,
                 NULL, false, NULL, reduction, 0, gradInput, "gradInput", workspaceSize, executor));
    return plan_backward(&a, workspaceSize, executor);
}

aclnnStatus aclnnSmoothL1LossGetWorkspaceSize(const aclTensor *self, const aclTensor *target,
                                              int64_t reduction, float beta, aclTensor *result,
                                              uint64_t *workspaceSize, aclOpExecutor **executor) {
    loss_args a;
    OG_TRY(start(&a, &og_op_SmoothL1Loss, LOSS_SL1, NULL, NULL, self, target, NULL, NULL, false,
                 NULL, reduction, beta, result, "result", workspaceSize, executor));
    return plan_forward(&a, workspaceSize, executor);
}

aclnnStatus aclnnSmoothL1LossBackwardGetWorkspaceSize(
    const aclTensor *gradOut, const aclTensor *self, const aclTensor *target, int64_t reduction,
    float beta, aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor) {
    loss_args a;
    OG_TRY(start(&a, &og_op_SmoothL1LossBackward, LOSS_SL1, gradOut, "gradOut", self, target, NULL,
                 NULL, false, NULL, reduction, beta, gradInput, "gradInput", workspaceSize,
                 executor));
    return plan_backward(&a, workspaceSize, executor);
}

aclnnStatus aclnnBinaryCrossEntropyGetWorkspaceSize(const aclTensor *self, const aclTensor *target,
                                                    const aclTensor *weight, int64_t reduction,
                                                    aclTensor *out, uint64_t *workspaceSize,
                                                    aclOpExecutor **executor) {
    loss_args a;
    OG_TRY(start(&a, &og_op_BinaryCrossEntropy, LOSS_BCE, NULL, NULL, self, target, weight,
                 "weight", false, NULL, reduction, 0, out, "out", workspaceSize, executor));
    return plan_forward(&a, workspaceSize, executor);
}

aclnnStatus aclnnBinaryCrossEntropyBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target,
    const aclTensor *weightOptional, int64_t reduction, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
    loss_args a;
    OG_TRY(start(&a, &og_op_BinaryCrossEntropyBackward, LOSS_BCE, gradOutput, "gradOutput", self,
                 target, weightOptional, "weightOptional", false, NULL, reduction, 0, out, "out",
                 workspaceSize, executor));
    return plan_backward(&a, workspaceSize, executor);
}

aclnnStatus aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(
    const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional,
    const aclTensor *posWeightOptional, int64_t reduction, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
    loss_args a;
    OG_TRY(start(&a, &og_op_BinaryCrossEntropyWithLogits, LOSS_BCEL, NULL, NULL, self, target,
                 weightOptional, "weightOptional", true, posWeightOptional, reduction, 0, out,
                 "out", workspaceSize, executor));
    return plan_forward(&a, workspaceSize, executor);
}

aclnnStatus aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target,
    const aclTensor *weightOptional, const aclTensor *posWeightOptional, int64_t reduction,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor) {
    loss_args a;
    OG_TRY(start(&a, &og_op_BinaryCrossEntropyWithLogitsBackward, LOSS_BCEL, gradOutput,
                 "gradOutput", self, target, weightOptional, "weightOptional", true,
                 posWeightOptional, reduction, 0, out, "out", workspaceSize, executor));
    return plan_backward(&a, workspaceSize, executor);
}
