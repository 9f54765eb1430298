/* aclnnSoftmax, aclnnSoftmaxBackward, aclnnLogSoftmax, aclnnLogSoftmaxBackward: argument checks
 * and plans on the row engine (kernels: softmax_kernel_simd.c). Rules from ops-nn
 * activation/softmax_v2, softmax_grad, log_softmax_v2 and log_softmax_grad (op_api). */
#include "aclnnop/aclnn_logsoftmax.h"
#include "aclnnop/aclnn_logsoftmax_backward.h"
#include "aclnnop/aclnn_softmax.h"
#include "aclnnop/aclnn_softmax_backward.h"
#include "engine/program.h"
#include "ops/common/checks.h"
#include "ops/softmax/softmax_kernel.h"

// One row step over nin inputs and one output of the same shape, along `axis`, computed in
// `compute` (inputs and output of another dtype are rounded through it).
static aclnnStatus plan_rows(const og_opdesc *op, const og_row_fn *kernels,
                             const og_row16_fn (*kernels16)[2], const og_row64_fn *kernels64,
                             int nin, const aclTensor *const *ins, const aclTensor *out, int axis,
                             aclDataType compute, const char *const *names, uint64_t *workspaceSize,
                             aclOpExecutor **executor) {
    const aclTensor *io[3] = {ins[0], nin > 1 ? ins[1] : out, out};
    og_prog p;
    og_prog_init(&p, op, nin, 1, io);
    if (out->numel > 0) {
        const aclTensor *outs[1] = {out};
        aclnnStatus st = og_check_io_memory(op, nin, ins, 1, outs, names);
        if (st != ACLNN_SUCCESS) return st;
        og_rows_op r = {.kernels = kernels,
                        .kernels16 = kernels16,
                        .kernels64 = kernels64,
                        .nin = nin,
                        .nout = 1,
                        .out = {out},
                        .out_slot = {nin},
                        .ndim = out->ndim,
                        .axis = axis,
                        // the forwards (three passes, exps) have time to prefetch the next row;
                        // the backwards (two light passes) run faster without
                        .prefetch = nin == 1,
                        // SoftmaxBackward's passes take one or two operations per element
                        // (LogSoftmax's backward takes an exp per element)
                        .light = op == &og_op_SoftmaxBackward,
                        .compute_dtype = compute};
        for (int k = 0; k < nin; k++) r.in[k] = ins[k], r.in_slot[k] = k;
        for (int d = 0; d < out->ndim; d++) r.dims[d] = out->dims[d];
        og_prog_rows(&p, &r);
    }
    return og_prog_publish(&p, workspaceSize, executor);
}

// ops-nn accepts an empty tensor before looking at anything else but the NULLs (Softmax and the
// backwards): an executor with nothing to do.
static aclnnStatus empty(const og_opdesc *op, int nin, const aclTensor *const *io,
                         uint64_t *workspaceSize, aclOpExecutor **executor) {
    og_prog p;
    og_prog_init(&p, op, nin, 1, io);
    return og_prog_publish(&p, workspaceSize, executor);
}

// The forwards. Softmax computes in self's dtype (the result is cast to out's); LogSoftmax, as
// ops-nn does, casts self to out's dtype first and computes in it.
static aclnnStatus plan_forward(const og_opdesc *op, const og_row_fn *kernels,
                                const og_row16_fn (*kernels16)[2], const og_row64_fn *kernels64,
                                const aclTensor *self, int64_t dim, const aclTensor *out,
                                bool in_out_dtype, uint64_t *workspaceSize,
                                aclOpExecutor **executor) {
    static const char *const names[2] = {"self", "out"};
    const void *ptrs[2] = {self, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 2, names, ptrs));
    const aclTensor *io[2] = {self, out};
    OG_TRY(og_check_live_tensors(op, 2, names, io));
    if (!in_out_dtype && self->numel == 0) return empty(op, 1, io, workspaceSize, executor);
    OG_TRY(og_check_tensor_of(op, "self", self, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "out", out, 0, OG_DTS_FLOATING64));
    int axis;
    OG_TRY(og_check_dim(op, "dim", dim, self->ndim, &axis));
    OG_TRY(og_check_same_shape(op, "self", self, "out", out));
    aclDataType compute = in_out_dtype ? out->dtype : self->dtype;
    OG_TRY(og_check_castable(op, compute, "out", out));
    const aclTensor *ins[1] = {self};
    return plan_rows(op, kernels, kernels16, kernels64, 1, ins, out, axis, compute, names,
                     workspaceSize, executor);
}

// The backwards, from the forward's output: gradOutput and output promote together (ops-nn
// requires one dtype; a mixed-precision gradient is accepted here), out castable from it.
static aclnnStatus plan_backward(const og_opdesc *op, const og_row_fn *kernels,
                                 const og_row16_fn (*kernels16)[2], const og_row64_fn *kernels64,
                                 const aclTensor *gradOutput, const aclTensor *output, int64_t dim,
                                 const aclTensor *out, uint64_t *workspaceSize,
                                 aclOpExecutor **executor) {
    static const char *const names[3] = {"gradOutput", "output", "out"};
    const void *ptrs[3] = {gradOutput, output, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 3, names, ptrs));
    const aclTensor *ins[2] = {gradOutput, output}, *io[3] = {gradOutput, output, out};
    OG_TRY(og_check_live_tensors(op, 3, names, io));
    if (gradOutput->numel == 0 || output->numel == 0)
        return empty(op, 2, io, workspaceSize, executor);
    OG_TRY(og_check_tensor_of(op, "gradOutput", gradOutput, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "output", output, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "out", out, 0, OG_DTS_FLOATING64));
    aclDataType promoted;
    OG_TRY(og_check_promotion(op, 2, names, ins, "out", out, &promoted));
    int axis;
    OG_TRY(og_check_dim(op, "dim", dim, gradOutput->ndim, &axis));
    OG_TRY(og_check_same_shape(op, "gradOutput", gradOutput, "output", output));
    OG_TRY(og_check_same_shape(op, "gradOutput", gradOutput, "out", out));
    return plan_rows(op, kernels, kernels16, kernels64, 2, ins, out, axis, promoted, names,
                     workspaceSize, executor);
}

aclnnStatus aclnnSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim, aclTensor *out,
                                         uint64_t *workspaceSize, aclOpExecutor **executor) {
    return plan_forward(&og_op_Softmax, og_softmax_fwd_kernels, og_softmax_fwd_kernels16,
                        og_softmax_fwd_kernels64, self, dim, out, false, workspaceSize, executor);
}

aclnnStatus aclnnLogSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim, aclTensor *out,
                                            uint64_t *workspaceSize, aclOpExecutor **executor) {
    return plan_forward(&og_op_LogSoftmax, og_log_softmax_fwd_kernels, og_log_softmax_fwd_kernels16,
                        og_log_softmax_fwd_kernels64, self, dim, out, true, workspaceSize,
                        executor);
}

aclnnStatus aclnnSoftmaxBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                 const aclTensor *output, int64_t dim,
                                                 aclTensor *out, uint64_t *workspaceSize,
                                                 aclOpExecutor **executor) {
    return plan_backward(&og_op_SoftmaxBackward, og_softmax_bwd_kernels, og_softmax_bwd_kernels16,
                         og_softmax_bwd_kernels64, gradOutput, output, dim, out, workspaceSize,
                         executor);
}

aclnnStatus aclnnLogSoftmaxBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                    const aclTensor *output, int64_t dim,
                                                    aclTensor *out, uint64_t *workspaceSize,
                                                    aclOpExecutor **executor) {
    return plan_backward(&og_op_LogSoftmaxBackward, og_log_softmax_bwd_kernels,
                         og_log_softmax_bwd_kernels16, og_log_softmax_bwd_kernels64, gradOutput,
                         output, dim, out, workspaceSize, executor);
}
