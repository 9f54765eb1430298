/* aclnnSwiGlu, aclnnSwiGluGrad, aclnnGeGlu, aclnnGeGluV3, aclnnGeGluBackward: argument checks and
 * programs. Rules from ops-nn activation/swi_glu, swi_glu_grad, ge_glu_v2 and ge_glu_grad_v2
 * (docs and op_api).
 *
 * x is split into halves along dim, and each operator is one MAP step over the half shape, with
 * no workspace temporaries. A MAP operand is a view of its io slot from an element offset
 * (og_ew_op.in_offset / out_offset), so x's two halves are two inputs (x's slot and strides, the
 * half shape, offsets 0 and h * stride[dim]) and the backward writes gradInput's two halves as
 * two outputs the same way:
 *   forward:  A, B -> out (SwiGlu);  L, G -> out, outGelu (GeGlu: G = B, L = A, swapped for
 *             activateLeft by swapping the offsets);
 *   backward: A, B, dy -> dA, dB;  L, G, gradOutput, gelu -> dL, dG (halves of gradInput).
 * All data one dtype (ops-nn's rule); the kernels (glu_kernel.h) compute in fp32 and every result
 * is rounded once (by the engine's CopyOut, or the fused 16-bit kernels when every operand is
 * linear). fp32 traffic: the forward reads 2n and writes n (GeGlu: 2n), the ideal. gradInput
 * may be x itself (same layout); a partial overlap is rejected (og_check_io_memory). */
#include "aclnnop/aclnn_geglu.h"
#include "aclnnop/aclnn_geglu_backward.h"
#include "aclnnop/aclnn_swi_glu.h"
#include "aclnnop/aclnn_swi_glu_grad.h"
#include "engine/program.h"
#include "ops/common/checks.h"
#include "ops/glu/glu_kernel.h"

#define GLU_TABLES(name)                                                                           \
    OG_EW_DEFINE_KERNEL_TABLE(name);                                                               \
    OG_EW_DEFINE_KERNEL64_TABLE(name);                                                             \
    const og_ew_compute16_fn og_##name##_kernels16[OPGRAD_ISA_COUNT][2] = {                        \
        [OPGRAD_ISA_SCALAR] = {og_##name##_bf16__scalar, og_##name##_f16__scalar},                 \
        [OPGRAD_ISA_AVX2] = {og_##name##_bf16__avx2, og_##name##_f16__avx2},                       \
        [OPGRAD_ISA_AVX512] = {og_##name##_bf16__avx512, og_##name##_f16__avx512},                 \
        [OPGRAD_ISA_AVX512_BF16] = {og_##name##_bf16__avx512, og_##name##_f16__avx512},            \
        [OPGRAD_ISA_AVX512_FP16] = {og_##name##_bf16__avx512, og_##name##_f16__avx512},            \
        [OPGRAD_ISA_AMX] = {og_##name##_bf16__avx512, og_##name##_f16__avx512}};

GLU_TABLES(swiglu_fwd)
GLU_TABLES(swiglu_bwd)
GLU_TABLES(geglu_fwd)
GLU_TABLES(geglu_bwd)

// `half` has x's rank and shape but for dim, where it has half of x's (even) extent.
static aclnnStatus check_half(const og_opdesc *op, const char *x_name, const aclTensor *x, int axis,
                              const char *name, const aclTensor *half) {
    char xs[128], hs[128];
    bool ok = half->ndim == x->ndim;
    for (int d = 0; ok && d < x->ndim; d++)
        ok = half->dims[d] == (d == axis ? x->dims[d] / 2 : x->dims[d]);
    if (ok) return ACLNN_SUCCESS;
    return og_fail(ACLNN_ERR_PARAM_INVALID,
                   "%sGetWorkspaceSize: %s has shape %s but must have %s's shape %s with dim %d "
                   "halved",
                   op->name, name, og_shape_str(half->dims, half->ndim, hs, sizeof hs), x_name,
                   og_shape_str(x->dims, x->ndim, xs, sizeof xs), axis);
}

// x: a float tensor of rank >= 1 whose extent along dim is even; *axis = dim normalized.
static aclnnStatus check_split(const og_opdesc *op, const char *x_name, const aclTensor *x,
                               int64_t dim, int *axis) {
    OG_TRY(og_check_tensor_of(op, x_name, x, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_dim(op, "dim", dim, x->ndim, axis));
    if (x->dims[*axis] % 2 != 0)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has extent %lld along dim %lld, which must be even "
                       "(it is split into two halves)",
                       op->name, x_name, (long long)x->dims[*axis], (long long)dim);
    return ACLNN_SUCCESS;
}

static aclnnStatus check_approximate(const og_opdesc *op, int64_t approximate) {
    if (approximate == 0 || approximate == 1) return ACLNN_SUCCESS;
    return og_fail(ACLNN_ERR_PARAM_INVALID,
                   "%sGetWorkspaceSize: approximate = %lld must be 0 (none: the erf form) or 1 "
                   "(tanh)",
                   op->name, (long long)approximate);
}

// Half k (0: first, 1: second) of t along axis, as a MAP operand: the view's shape and *offset,
// in elements from t's first element (its io slot's address).
static aclTensor half_view(const aclTensor *t, int axis, int k, int64_t *offset) {
    aclTensor v = *t;
    v.dims[axis] /= 2;
    v.numel /= 2;
    *offset = k ? v.dims[axis] * t->strides[axis] : 0;
    return v;
}

// The MAP step of a GLU operator: x's halves (in the order `order` gives: 0 first, 1 second) are
// inputs 0 and 1 (slot x_slot), then nhalf half-size inputs; outputs are nout half-size tensors,
// or (split_out) the two halves of out[0] in the order `order` gives.
typedef struct glu_map {
    const og_ew_compute_fn *kernels;
    const og_ew_compute16_fn (*kernels16)[2];
    const og_ew_compute64_fn *kernels64;
    const og_glu_params *params;
    const aclTensor *x;
    int x_slot, axis, order[2];
    int nhalf;
    const aclTensor *half[2];
    int half_slot[2];
    int nout;
    bool split_out;
    const aclTensor *out[2];
    int out_slot[2];
} glu_map;

static aclnnStatus plan_map(const og_opdesc *op, const glu_map *g, int nin, int nio,
                            const aclTensor *const *io, const char *const *names,
                            uint64_t *workspaceSize, aclOpExecutor **executor) {
    og_prog p;
    og_prog_init(&p, op, nin, nio - nin, io);
    if (g->x->numel > 0) {
        og_ew_op m = {.op = op,
                      .kernels = g->kernels,
                      .kernels16 = g->kernels16,
                      .kernels64 = g->kernels64,
                      .nin = 2 + g->nhalf,
                      .nout = g->split_out ? 2 : g->nout,
                      .slots = true,
                      .params = g->params,
                      .params_size = sizeof *g->params,
                      .compute_dtype = g->x->dtype};
        aclTensor xh[2], oh[2];
        for (int k = 0; k < 2; k++) {
            xh[k] = half_view(g->x, g->axis, g->order[k], &m.in_offset[k]);
            m.in[k] = &xh[k];
            m.in_slot[k] = g->x_slot;
            m.names[k] = names[g->x_slot];
        }
        for (int k = 0; k < g->nhalf; k++) {
            m.in[2 + k] = g->half[k];
            m.in_slot[2 + k] = g->half_slot[k];
            m.names[2 + k] = names[g->half_slot[k]];
        }
        for (int k = 0; k < m.nout; k++) {
            if (g->split_out) {
                oh[k] = half_view(g->out[0], g->axis, g->order[k], &m.out_offset[k]);
                m.out[k] = &oh[k];
            } else {
                m.out[k] = g->out[k];
            }
            m.out_slot[k] = g->out_slot[g->split_out ? 0 : k];
            m.names[m.nin + k] = names[m.out_slot[k]];
        }
        og_prog_map(&p, &m);
    }
    return og_prog_publish(&p, workspaceSize, executor);
}

// Forward: x -> nout outputs (out, then outGelu), after the argument checks. lin_first: x's
// first half is the linear operand (in 0), else the second.
static aclnnStatus plan_forward(const og_opdesc *op, const og_ew_compute_fn *kernels,
                                const og_ew_compute16_fn (*kernels16)[2],
                                const og_ew_compute64_fn *kernels64, const og_glu_params *params,
                                bool lin_first, const aclTensor *x, int axis, int nout,
                                const aclTensor *const *outs, const char *const *names,
                                uint64_t *workspaceSize, aclOpExecutor **executor) {
    const aclTensor *io[3] = {x, outs[0], nout > 1 ? outs[1] : NULL};
    OG_TRY(og_check_io_memory(op, 1, io, nout, outs, names));
    glu_map g = {.kernels = kernels,
                 .kernels16 = kernels16,
                 .kernels64 = kernels64,
                 .params = params,
                 .x = x,
                 .x_slot = 0,
                 .axis = axis,
                 .order = {lin_first ? 0 : 1, lin_first ? 1 : 0},
                 .nout = nout,
                 .out = {outs[0], nout > 1 ? outs[1] : NULL},
                 .out_slot = {1, 2}};
    return plan_map(op, &g, 1, 1 + nout, io, names, workspaceSize, executor);
}

// Backward: (nhalf half-size inputs: dy, then gelu) and x -> gradInput. io is in the signature's
// order: dy, x, [gelu], gradInput; half_slot[k] is the slot of half input k. lin_first as for
// the forward: the output halves follow the same order as x's.
static aclnnStatus plan_backward(const og_opdesc *op, const og_ew_compute_fn *kernels,
                                 const og_ew_compute16_fn (*kernels16)[2],
                                 const og_ew_compute64_fn *kernels64, const og_glu_params *params,
                                 bool lin_first, int nhalf, const aclTensor *const *half,
                                 const int *half_slot, const aclTensor *x, int x_slot,
                                 const aclTensor *gradInput, int axis, const aclTensor *const *io,
                                 const char *const *names, uint64_t *workspaceSize,
                                 aclOpExecutor **executor) {
    int nin = nhalf + 1;
    const aclTensor *outs[1] = {gradInput};
    OG_TRY(og_check_io_memory(op, nin, io, 1, outs, names));
    glu_map g = {.kernels = kernels,
                 .kernels16 = kernels16,
                 .kernels64 = kernels64,
                 .params = params,
                 .x = x,
                 .x_slot = x_slot,
                 .axis = axis,
                 .order = {lin_first ? 0 : 1, lin_first ? 1 : 0},
                 .nhalf = nhalf,
                 .half = {half[0], nhalf > 1 ? half[1] : NULL},
                 .half_slot = {half_slot[0], nhalf > 1 ? half_slot[1] : 0},
                 .nout = 1,
                 .split_out = true,
                 .out = {gradInput},
                 .out_slot = {nin}};
    return plan_map(op, &g, nin, nin + 1, io, names, workspaceSize, executor);
}

aclnnStatus aclnnSwiGluGetWorkspaceSize(const aclTensor *x, int64_t dim, const aclTensor *out,
                                        uint64_t *workspaceSize, aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_SwiGlu;
    static const char *const names[2] = {"x", "out"};
    const void *ptrs[2] = {x, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 2, names, ptrs));
    const aclTensor *io[2] = {x, out};
    OG_TRY(og_check_live_tensors(op, 2, names, io));
    int axis;
    OG_TRY(check_split(op, "x", x, dim, &axis));
    OG_TRY(og_check_tensor_of(op, "out", out, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_same_dtype(op, "x", x, "out", out));
    OG_TRY(check_half(op, "x", x, axis, "out", out));
    static const og_glu_params params = {0};
    const aclTensor *outs[1] = {out};
    return plan_forward(op, og_swiglu_fwd_kernels, og_swiglu_fwd_kernels16, og_swiglu_fwd_kernels64,
                        &params, true, x, axis, 1, outs, names, workspaceSize, executor);
}

aclnnStatus aclnnSwiGluGradGetWorkspaceSize(const aclTensor *yGrad, const aclTensor *x, int64_t dim,
                                            const aclTensor *out, uint64_t *workspaceSize,
                                            aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_SwiGluGrad;
    static const char *const names[3] = {"yGrad", "x", "out"};
    const void *ptrs[3] = {yGrad, x, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 3, names, ptrs));
    const aclTensor *io[3] = {yGrad, x, out};
    OG_TRY(og_check_live_tensors(op, 3, names, io));
    int axis;
    OG_TRY(check_split(op, "x", x, dim, &axis));
    OG_TRY(og_check_tensor_of(op, "yGrad", yGrad, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "out", out, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_same_dtype(op, "x", x, "yGrad", yGrad));
    OG_TRY(og_check_same_dtype(op, "x", x, "out", out));
    OG_TRY(check_half(op, "x", x, axis, "yGrad", yGrad));
    OG_TRY(og_check_same_shape(op, "x", x, "out", out));
    static const og_glu_params params = {0};
    const aclTensor *half[1] = {yGrad};
    static const int half_slot[1] = {0};
    return plan_backward(op, og_swiglu_bwd_kernels, og_swiglu_bwd_kernels16,
                         og_swiglu_bwd_kernels64, &params, true, 1, half, half_slot, x, 1, out,
                         axis, io, names, workspaceSize, executor);
}

static aclnnStatus geglu(const og_opdesc *op, const aclTensor *self, int64_t dim,
                         int64_t approximate, bool activateLeft, aclTensor *out, aclTensor *outGelu,
                         uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char *const names[3] = {"self", "out", "outGelu"};
    const void *ptrs[3] = {self, out, outGelu};
    OG_TRY(og_check_args(op, workspaceSize, executor, 3, names, ptrs));
    const aclTensor *io[3] = {self, out, outGelu};
    OG_TRY(og_check_live_tensors(op, 3, names, io));
    int axis;
    OG_TRY(check_split(op, "self", self, dim, &axis));
    OG_TRY(og_check_tensor_of(op, "out", out, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "outGelu", outGelu, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_same_dtype(op, "self", self, "out", out));
    OG_TRY(og_check_same_dtype(op, "self", self, "outGelu", outGelu));
    OG_TRY(check_half(op, "self", self, axis, "out", out));
    OG_TRY(check_half(op, "self", self, axis, "outGelu", outGelu));
    OG_TRY(check_approximate(op, approximate));
    // the same layout passes og_check_io_memory (in place), but two results cannot share memory
    if (og_tensors_overlap(out, outGelu))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: out and outGelu overlap in memory; they are two "
                       "different results",
                       op->name);
    og_glu_params params = {(int)approximate};
    const aclTensor *outs[2] = {out, outGelu};
    return plan_forward(op, og_geglu_fwd_kernels, og_geglu_fwd_kernels16, og_geglu_fwd_kernels64,
                        &params, !activateLeft, self, axis, 2, outs, names, workspaceSize,
                        executor);
}

aclnnStatus aclnnGeGluGetWorkspaceSize(const aclTensor *self, int64_t dim, int64_t approximate,
                                       aclTensor *out, aclTensor *outGelu, uint64_t *workspaceSize,
                                       aclOpExecutor **executor) {
    return geglu(&og_op_GeGlu, self, dim, approximate, false, out, outGelu, workspaceSize,
                 executor);
}

aclnnStatus aclnnGeGluV3GetWorkspaceSize(const aclTensor *self, int64_t dim, int64_t approximate,
                                         bool activateLeft, aclTensor *out, aclTensor *outGelu,
                                         uint64_t *workspaceSize, aclOpExecutor **executor) {
    return geglu(&og_op_GeGluV3, self, dim, approximate, activateLeft, out, outGelu, workspaceSize,
                 executor);
}

static aclnnStatus geglu_backward(const og_opdesc *op, const aclTensor *gradOutput,
                                  const aclTensor *self, const aclTensor *gelu, int64_t dim,
                                  int64_t approximate, bool activateLeft, aclTensor *gradInput,
                                  uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char *const names[4] = {"gradOutput", "self", "gelu", "gradInput"};
    const void *ptrs[4] = {gradOutput, self, gelu, gradInput};
    OG_TRY(og_check_args(op, workspaceSize, executor, 4, names, ptrs));
    const aclTensor *io[4] = {gradOutput, self, gelu, gradInput};
    OG_TRY(og_check_live_tensors(op, 4, names, io));
    int axis;
    OG_TRY(check_split(op, "self", self, dim, &axis));
    OG_TRY(og_check_tensor_of(op, "gradOutput", gradOutput, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "gelu", gelu, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "gradInput", gradInput, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_same_dtype(op, "self", self, "gradOutput", gradOutput));
    OG_TRY(og_check_same_dtype(op, "self", self, "gelu", gelu));
    OG_TRY(og_check_same_dtype(op, "self", self, "gradInput", gradInput));
    OG_TRY(check_half(op, "self", self, axis, "gradOutput", gradOutput));
    OG_TRY(check_half(op, "self", self, axis, "gelu", gelu));
    OG_TRY(og_check_same_shape(op, "self", self, "gradInput", gradInput));
    OG_TRY(check_approximate(op, approximate));
    og_glu_params params = {(int)approximate};
    const aclTensor *half[2] = {gradOutput, gelu};
    static const int half_slot[2] = {0, 2};
    return plan_backward(op, og_geglu_bwd_kernels, og_geglu_bwd_kernels16, og_geglu_bwd_kernels64,
                         &params, !activateLeft, 2, half, half_slot, self, 1, gradInput, axis, io,
                         names, workspaceSize, executor);
}

aclnnStatus aclnnGeGluBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                               const aclTensor *gelu, int64_t dim,
                                               int64_t approximate, aclTensor *gradInput,
                                               uint64_t *workspaceSize, aclOpExecutor **executor) {
    return geglu_backward(&og_op_GeGluBackward, gradOutput, self, gelu, dim, approximate, false,
                          gradInput, workspaceSize, executor);
}

aclnnStatus aclnnGeGluV3BackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                 const aclTensor *gelu, int64_t dim,
                                                 int64_t approximate, bool activateLeft,
                                                 aclTensor *gradInput, uint64_t *workspaceSize,
                                                 aclOpExecutor **executor) {
    return geglu_backward(&og_op_GeGluV3Backward, gradOutput, self, gelu, dim, approximate,
                          activateLeft, gradInput, workspaceSize, executor);
}
