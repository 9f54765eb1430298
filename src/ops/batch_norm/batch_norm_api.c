/* aclnnBatchNorm and aclnnBatchNormBackward: argument checks and step programs.
 *
 * Per channel c, over the K = N * spatial values of the channel:
 *   forward (training)  REDUCE mean; REDUCE mean of (x - mean)^2 (two passes: the centred sum of
 *                       squares does not cancel as E[x^2] - mean^2 would); small MAPs over [C]
 *                       for invstd, weight * invstd, the saved statistics and the running
 *                       statistics; one MAP y = (x - mean) * (weight * invstd) + bias.
 *   forward (eval)      the same final MAP with runningMean and 1 / sqrt(runningVar + eps).
 *   backward (training) REDUCE sum(dy), REDUCE sum(dy * (x - mean)); dx is affine in dy and x per
 *                       channel: dx = a dy + b (x - mean) + c with a = w invstd,
 *                       b = -a invstd^2 sum(dy (x - mean)) / K, c = -a sum(dy) / K (a MAP over [C]
 *                       makes them), then one MAP over the data.
 *   backward (eval)     dx = dy * (w invstd); the sums for gradWeight / gradBias as above.
 * Every sum is the reduction engine's (fp32, fixed order): the results do not depend on the thread
 * count or the ISA. */
#include <stdio.h>
#include <string.h>

#include "aclnnop/aclnn_batch_norm.h"
#include "aclnnop/aclnn_batch_norm_backward.h"
#include "engine/program.h"
#include "engine/reduce.h"
#include "ops/batch_norm/batch_norm_common.h"
#include "ops/batch_norm/batch_norm_kernel.h"
#include "ops/common/checks.h"
#include "ops/math/mul/mul_kernel.h"
#include "runtime/error.h"
#include "tensor/dtype.h"

OG_EW_DEFINE_KERNEL_TABLE(bn_sqdev);
OG_EW_DEFINE_KERNEL_TABLE(bn_dymul);
OG_EW_DEFINE_KERNEL_TABLE(bn_norm);
OG_EW_DEFINE_KERNEL_TABLE(bn_norm_nob);
OG_EW_DEFINE_KERNEL_TABLE(bn_dx);

aclTensor og_bn_view(const aclTensor *t, int rank) {
    aclTensor v = *t;
    int64_t c = t->ndim ? t->dims[0] : 1, s = t->ndim ? t->strides[0] : 1;
    v.ndim = rank;
    for (int d = 0; d < rank; d++) v.dims[d] = 1, v.strides[d] = 1;
    v.dims[0] = c, v.strides[0] = s;
    return v;
}

void og_bn_map(og_prog *p, const og_ew_compute_fn *k, int nin, const aclTensor *const *in,
               const int *in_slot, int nout, const aclTensor *const *out, const int *out_slot,
               const og_bn_params *params) {
    og_ew_op m = {.op = p->op,
                  .kernels = k,
                  .nin = nin,
                  .nout = nout,
                  .slots = true,
                  .compute_dtype = ACL_FLOAT,
                  .params = params,
                  .params_size = params ? sizeof *params : 0};
    for (int i = 0; i < nin; i++) m.in[i] = in[i], m.in_slot[i] = in_slot[i], m.names[i] = "in";
    for (int i = 0; i < nout; i++)
        m.out[i] = out[i], m.out_slot[i] = out_slot[i], m.names[nin + i] = "out";
    og_prog_map(p, &m);
}

void og_bn_reduce(og_prog *p, og_reduce_kind kind, const og_ew_compute_fn *map, int nin,
                  const aclTensor *const *in, const int *in_slot, const int64_t *dims, int ndim,
                  const aclTensor *out, int out_slot) {
    og_reduce_op r = {.kind = kind,
                      .nin = nin,
                      .map = map,
                      .out = out,
                      .out_slot = out_slot,
                      .round_in = ACL_FLOAT};
    for (int i = 0; i < nin; i++) r.in[i] = in[i], r.in_slot[i] = in_slot[i];
    og_reduce_to_shape(&r, dims, ndim, out);
    og_prog_reduce(p, &r);
}

aclnnStatus og_bn_check_vector(const og_opdesc *op, const char *name, const aclTensor *t, int64_t c,
                               const char *what) {
    OG_TRY(og_check_tensor(op, name, t, 0));
    if (t->ndim != 1 || t->dims[0] != c) {
        char a[160];
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has shape %s; it must be [%lld] (%s)", op->name,
                       name, og_shape_str(t->dims, t->ndim, a, sizeof a), (long long)c, what);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus og_bn_check_mask(const og_opdesc *op, const aclBoolArray *mask, bool m[3]) {
    char fn[96];
    snprintf(fn, sizeof fn, "%sGetWorkspaceSize", op->name);
    OG_TRY(og_check_live(fn, "outputMask", mask, OG_OBJ_BOOL_ARRAY));
    if (mask->size != 3)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: outputMask has %llu entries; it must have 3 (the input's, the "
                       "weight's and the bias' gradient)",
                       fn, (unsigned long long)mask->size);
    for (int k = 0; k < 3; k++) m[k] = mask->values[k];
    return ACLNN_SUCCESS;
}

// The memory rules over the tensors given (NULL ones skipped): inputs, then outputs.
aclnnStatus og_bn_check_memory(const og_opdesc *op, int nin, const aclTensor *const *in,
                               const char *const *in_names, int nout, const aclTensor *const *out,
                               const char *const *out_names) {
    const aclTensor *ti[8], *to[8];
    const char *names[16];
    int ni = 0, no = 0;
    for (int k = 0; k < nin; k++)
        if (in[k]) ti[ni] = in[k], names[ni++] = in_names[k];
    for (int k = 0; k < nout; k++)
        if (out[k]) to[no] = out[k], names[ni + no++] = out_names[k];
    return og_check_io_memory(op, ni, ti, no, to, names);
}

// The channel axis: dim 1, or the last dim of an NHWC / NDHWC tensor.
static int channel_axis(const aclTensor *t) {
    bool last = (t->format == ACL_FORMAT_NHWC && t->ndim == 4) ||
                (t->format == ACL_FORMAT_NDHWC && t->ndim == 5);
    return last ? t->ndim - 1 : 1;
}

// Tensors of the data's shape must agree on where the channels are (their formats).
static aclnnStatus check_same_layout(const og_opdesc *op, const char *name_a, const aclTensor *a,
                                     const char *name_b, const aclTensor *b) {
    if (channel_axis(a) == channel_axis(b)) return ACLNN_SUCCESS;
    return og_fail(ACLNN_ERR_PARAM_INVALID,
                   "%sGetWorkspaceSize: %s has its channels in dim %d (format %d) but %s in dim "
                   "%d (format %d): their formats must agree",
                   op->name, name_a, channel_axis(a), (int)a->format, name_b, channel_axis(b),
                   (int)b->format);
}

aclnnStatus aclnnBatchNormGetWorkspaceSize(const aclTensor *input, const aclTensor *weight,
                                           const aclTensor *bias, aclTensor *runningMean,
                                           aclTensor *runningVar, bool training, double momentum,
                                           double eps, aclTensor *output, aclTensor *saveMean,
                                           aclTensor *saveInvstd, uint64_t *workspaceSize,
                                           aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_BatchNorm;
    static const char *const names[] = {"input", "output", "saveMean", "saveInvstd"};
    const void *ptrs[4] = {input, output, saveMean, saveInvstd};
    OG_TRY(og_check_args(op, workspaceSize, executor, 4, names, ptrs));
    OG_TRY(og_check_tensor(op, "input", input, 2));
    OG_TRY(og_check_tensor(op, "output", output, 2));
    OG_TRY(og_check_same_shape(op, "input", input, "output", output));
    OG_TRY(check_same_layout(op, "input", input, "output", output));
    int ca = channel_axis(input);
    int64_t C = input->dims[ca];
    const char *per_channel = "one value per channel of input";
    if (weight) OG_TRY(og_bn_check_vector(op, "weight", weight, C, per_channel));
    if (bias) OG_TRY(og_bn_check_vector(op, "bias", bias, C, per_channel));
    if (runningMean) OG_TRY(og_bn_check_vector(op, "runningMean", runningMean, C, per_channel));
    if (runningVar) OG_TRY(og_bn_check_vector(op, "runningVar", runningVar, C, per_channel));
    if (training) {
        OG_TRY(og_bn_check_vector(op, "saveMean", saveMean, C, per_channel));
        OG_TRY(og_bn_check_vector(op, "saveInvstd", saveInvstd, C, per_channel));
    } else {
        // not written in eval mode: only checked to be tensors
        OG_TRY(og_check_tensor(op, "saveMean", saveMean, 0));
        OG_TRY(og_check_tensor(op, "saveInvstd", saveInvstd, 0));
        if (!runningMean || !runningVar)
            return og_fail(ACLNN_ERR_PARAM_NULLPTR,
                           "%sGetWorkspaceSize: %s is NULL: with training false the input is "
                           "normalised with runningMean and runningVar, which are required",
                           op->name, runningMean ? "runningVar" : "runningMean");
    }
    {
        const aclTensor *in[] = {input, weight, bias, runningMean, runningVar};
        static const char *const in_names[] = {"input", "weight", "bias", "runningMean",
                                               "runningVar"};
        const aclTensor *out[] = {output, training ? saveMean : NULL, training ? saveInvstd : NULL,
                                  training ? runningMean : NULL, training ? runningVar : NULL};
        static const char *const out_names[] = {"output", "saveMean", "saveInvstd", "runningMean",
                                                "runningVar"};
        OG_TRY(og_bn_check_memory(op, 5, in, in_names, 5, out, out_names));
    }

    // slots: 0 input, 1 weight, 2 bias, 3 runningMean, 4 runningVar (inputs); 5 output,
    // 6 saveMean, 7 saveInvstd, 8 runningMean, 9 runningVar (outputs)
    // (eval neither writes the saved statistics nor updates the running ones: unbound)
    const aclTensor *io[10] = {input,
                               weight,
                               bias,
                               runningMean,
                               runningVar,
                               output,
                               training ? saveMean : NULL,
                               training ? saveInvstd : NULL,
                               training ? runningMean : NULL,
                               training ? runningVar : NULL};
    og_prog p;
    og_prog_init(&p, op, 5, 5, io);
    if (input->numel == 0) return og_prog_publish(&p, workspaceSize, executor);
    int rank = input->ndim - ca; // [C, 1, ...]: broadcasts over the dims after the channel
    int64_t K = input->numel / C;
    og_bn_params prm = {.eps = eps, .momentum = momentum, .factor = 1.0, .inv_k = 1.0 / (double)K};

    const aclTensor *mean_t = NULL, *var_t = NULL, *rstd_t = NULL, *scale_t = NULL;
    int mean_s, var_s = -1, rstd_s, scale_s;
    if (training) {
        mean_s = og_prog_temp(&p, ACL_FLOAT, 1, &C, &mean_t);
        var_s = og_prog_temp(&p, ACL_FLOAT, 1, &C, &var_t);
        if (p.status != ACLNN_SUCCESS) return og_prog_publish(&p, workspaceSize, executor);
        aclTensor mv = og_bn_view(mean_t, rank), vv = og_bn_view(var_t, rank);
        og_bn_reduce(&p, OG_RED_MEAN, NULL, 1, (const aclTensor *[]){input}, (int[]){0},
                     input->dims, input->ndim, &mv, mean_s);
        og_bn_reduce(&p, OG_RED_MEAN, og_bn_sqdev_kernels, 2, (const aclTensor *[]){input, &mv},
                     (int[]){0, mean_s}, input->dims, input->ndim, &vv, var_s);
    } else {
        mean_t = runningMean, mean_s = 3;
    }
    rstd_s = og_prog_temp(&p, ACL_FLOAT, 1, &C, &rstd_t);
    if (p.status != ACLNN_SUCCESS) return og_prog_publish(&p, workspaceSize, executor);
    og_bn_map(&p, og_bn_rstd_kernels, 1, (const aclTensor *[]){training ? var_t : runningVar},
              (int[]){training ? var_s : 4}, 1, &rstd_t, &rstd_s, &prm);
    scale_t = rstd_t, scale_s = rstd_s;
    if (weight) {
        scale_s = og_prog_temp(&p, ACL_FLOAT, 1, &C, &scale_t);
        if (p.status != ACLNN_SUCCESS) return og_prog_publish(&p, workspaceSize, executor);
        og_bn_map(&p, og_mul_kernels, 2, (const aclTensor *[]){rstd_t, weight}, (int[]){rstd_s, 1},
                  1, &scale_t, &scale_s, NULL);
    }
    aclTensor mv = og_bn_view(mean_t, rank), sv = og_bn_view(scale_t, rank);
    if (bias) {
        aclTensor bv = og_bn_view(bias, rank);
        og_bn_map(&p, og_bn_norm_kernels, 4, (const aclTensor *[]){input, &mv, &sv, &bv},
                  (int[]){0, mean_s, scale_s, 2}, 1, (const aclTensor *[]){output}, (int[]){5},
                  NULL);
    } else {
        og_bn_map(&p, og_bn_norm_nob_kernels, 3, (const aclTensor *[]){input, &mv, &sv},
                  (int[]){0, mean_s, scale_s}, 1, (const aclTensor *[]){output}, (int[]){5}, NULL);
    }
    if (training) {
        og_bn_map(&p, og_bn_copy_kernels, 1, &mean_t, &mean_s, 1, (const aclTensor *[]){saveMean},
                  (int[]){6}, NULL);
        og_bn_map(&p, og_bn_copy_kernels, 1, &rstd_t, &rstd_s, 1, (const aclTensor *[]){saveInvstd},
                  (int[]){7}, NULL);
        // PyTorch's running statistics: the mean, and the unbiased variance K/(K-1) var
        if (runningMean)
            og_bn_map(&p, og_bn_running_kernels, 2, (const aclTensor *[]){runningMean, mean_t},
                      (int[]){3, mean_s}, 1, (const aclTensor *[]){runningMean}, (int[]){8}, &prm);
        if (runningVar) {
            og_bn_params pv = prm;
            pv.factor = (double)K / (double)(K - 1);
            og_bn_map(&p, og_bn_running_kernels, 2, (const aclTensor *[]){runningVar, var_t},
                      (int[]){4, var_s}, 1, (const aclTensor *[]){runningVar}, (int[]){9}, &pv);
        }
    }
    return og_prog_publish(&p, workspaceSize, executor);
}

aclnnStatus aclnnBatchNormBackwardGetWorkspaceSize(
    const aclTensor *gradOut, const aclTensor *input, const aclTensor *weight,
    const aclTensor *runningMean, const aclTensor *runningVar, const aclTensor *saveMean,
    const aclTensor *saveInvstd, bool training, double eps, const aclBoolArray *outputMask,
    aclTensor *gradInput, aclTensor *gradWeight, aclTensor *gradBias, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_BatchNormBackward;
    static const char *const names[] = {"gradOut", "input", "saveMean", "saveInvstd", "outputMask"};
    const void *ptrs[5] = {gradOut, input, saveMean, saveInvstd, outputMask};
    OG_TRY(og_check_args(op, workspaceSize, executor, 5, names, ptrs));
    OG_TRY(og_check_tensor(op, "gradOut", gradOut, 2));
    OG_TRY(og_check_tensor(op, "input", input, 2));
    OG_TRY(og_check_same_shape(op, "gradOut", gradOut, "input", input));
    bool m[3];
    OG_TRY(og_bn_check_mask(op, outputMask, m));
    OG_TRY(check_same_layout(op, "gradOut", gradOut, "input", input));
    int ca = channel_axis(input);
    int64_t C = input->dims[ca];
    const char *per_channel = "one value per channel of input";
    if (weight) OG_TRY(og_bn_check_vector(op, "weight", weight, C, per_channel));
    if (runningMean) OG_TRY(og_bn_check_vector(op, "runningMean", runningMean, C, per_channel));
    if (runningVar) OG_TRY(og_bn_check_vector(op, "runningVar", runningVar, C, per_channel));
    if (training) {
        OG_TRY(og_bn_check_vector(op, "saveMean", saveMean, C, per_channel));
        OG_TRY(og_bn_check_vector(op, "saveInvstd", saveInvstd, C, per_channel));
    } else {
        OG_TRY(og_check_tensor(op, "saveMean", saveMean, 0));
        OG_TRY(og_check_tensor(op, "saveInvstd", saveInvstd, 0));
        if (!runningMean || !runningVar)
            return og_fail(ACLNN_ERR_PARAM_NULLPTR,
                           "%sGetWorkspaceSize: %s is NULL: with training false the gradients "
                           "use runningMean and runningVar, which are required",
                           op->name, runningMean ? "runningVar" : "runningMean");
    }
    static const char *const out_names[] = {"gradInput", "gradWeight", "gradBias"};
    aclTensor *outs[3] = {gradInput, gradWeight, gradBias};
    for (int k = 0; k < 3; k++) {
        if (!m[k]) continue;
        if (!outs[k])
            return og_fail(ACLNN_ERR_PARAM_NULLPTR,
                           "%sGetWorkspaceSize: %s is NULL but outputMask[%d] is true", op->name,
                           out_names[k], k);
        if (k == 0) {
            OG_TRY(og_check_tensor(op, "gradInput", gradInput, 2));
            OG_TRY(og_check_same_shape(op, "input", input, "gradInput", gradInput));
            OG_TRY(check_same_layout(op, "input", input, "gradInput", gradInput));
        } else {
            OG_TRY(og_bn_check_vector(op, out_names[k], outs[k], C, per_channel));
        }
    }
    // unselected outputs are not written, but a tensor given is still checked to be one
    for (int k = 0; k < 3; k++)
        if (!m[k] && outs[k]) OG_TRY(og_check_tensor(op, out_names[k], outs[k], 0));
    {
        // only what the mode reads: the running statistics in eval, the saved ones in training
        const aclTensor *in[] = {gradOut,
                                 input,
                                 weight,
                                 training ? NULL : runningMean,
                                 training ? NULL : runningVar,
                                 training ? saveMean : NULL,
                                 training ? saveInvstd : NULL};
        static const char *const in_names[] = {"gradOut",    "input",    "weight",    "runningMean",
                                               "runningVar", "saveMean", "saveInvstd"};
        const aclTensor *out[3];
        for (int k = 0; k < 3; k++) out[k] = m[k] ? outs[k] : NULL;
        OG_TRY(og_bn_check_memory(op, 7, in, in_names, 3, out, out_names));
    }

    // slots: 0 gradOut, 1 input, 2 weight, 3 runningMean, 4 runningVar, 5 saveMean,
    // 6 saveInvstd (inputs); 7 gradInput, 8 gradWeight, 9 gradBias (outputs)
    const aclTensor *io[10] = {gradOut,
                               input,
                               weight,
                               training ? NULL : runningMean,
                               training ? NULL : runningVar,
                               training ? saveMean : NULL,
                               training ? saveInvstd : NULL,
                               m[0] ? gradInput : NULL,
                               m[1] ? gradWeight : NULL,
                               m[2] ? gradBias : NULL};
    og_prog p;
    og_prog_init(&p, op, 7, 3, io);
    if (C == 0 || !(m[0] || m[1] || m[2])) return og_prog_publish(&p, workspaceSize, executor);
    int rank = input->ndim - ca;
    int64_t K = input->numel / C;
    og_bn_params prm = {.eps = eps, .inv_k = K ? 1.0 / (double)K : 0.0};

    const aclTensor *mean_t = training ? saveMean : runningMean;
    int mean_s = training ? 5 : 3;
    const aclTensor *rstd_t = saveInvstd;
    int rstd_s = 6;
    if (!training && (m[0] || m[1])) {
        rstd_s = og_prog_temp(&p, ACL_FLOAT, 1, &C, &rstd_t);
        if (p.status != ACLNN_SUCCESS) return og_prog_publish(&p, workspaceSize, executor);
        og_bn_map(&p, og_bn_rstd_kernels, 1, &runningVar, (int[]){4}, 1, &rstd_t, &rstd_s, &prm);
    }
    aclTensor mv = og_bn_view(mean_t, rank);
    // the per-channel sums: sum(dy) and sum(dy (x - mean))
    bool need_sdy = m[2] || (m[0] && training), need_sdx = m[1] || (m[0] && training);
    const aclTensor *sdy_t = NULL, *sdx_t = NULL;
    int sdy_s = -1, sdx_s = -1;
    if (need_sdy) sdy_s = og_prog_temp(&p, ACL_FLOAT, 1, &C, &sdy_t);
    if (need_sdx) sdx_s = og_prog_temp(&p, ACL_FLOAT, 1, &C, &sdx_t);
    if (p.status != ACLNN_SUCCESS) return og_prog_publish(&p, workspaceSize, executor);
    if (need_sdy) {
        aclTensor v = og_bn_view(sdy_t, rank);
        og_bn_reduce(&p, OG_RED_SUM, NULL, 1, &gradOut, (int[]){0}, input->dims, input->ndim, &v,
                     sdy_s);
    }
    if (need_sdx) {
        aclTensor v = og_bn_view(sdx_t, rank);
        og_bn_reduce(&p, OG_RED_SUM, og_bn_dymul_kernels, 3,
                     (const aclTensor *[]){gradOut, input, &mv}, (int[]){0, 1, mean_s}, input->dims,
                     input->ndim, &v, sdx_s);
    }
    if (m[1])
        og_bn_map(&p, og_mul_kernels, 2, (const aclTensor *[]){sdx_t, rstd_t},
                  (int[]){sdx_s, rstd_s}, 1, (const aclTensor *[]){gradWeight}, (int[]){8}, NULL);
    if (m[2])
        og_bn_map(&p, og_bn_copy_kernels, 1, &sdy_t, &sdy_s, 1, (const aclTensor *[]){gradBias},
                  (int[]){9}, NULL);
    if (m[0] && input->numel > 0) {
        // a = weight * invstd (invstd itself without a weight)
        const aclTensor *a_t = rstd_t;
        int a_s = rstd_s;
        if (weight) {
            a_s = og_prog_temp(&p, ACL_FLOAT, 1, &C, &a_t);
            if (p.status != ACLNN_SUCCESS) return og_prog_publish(&p, workspaceSize, executor);
            og_bn_map(&p, og_mul_kernels, 2, (const aclTensor *[]){rstd_t, weight},
                      (int[]){rstd_s, 2}, 1, &a_t, &a_s, NULL);
        }
        aclTensor av = og_bn_view(a_t, rank);
        if (training) {
            const aclTensor *b_t, *c_t;
            int b_s = og_prog_temp(&p, ACL_FLOAT, 1, &C, &b_t);
            int c_s = og_prog_temp(&p, ACL_FLOAT, 1, &C, &c_t);
            if (p.status != ACLNN_SUCCESS) return og_prog_publish(&p, workspaceSize, executor);
            og_bn_map(&p, og_bn_bc_kernels, 4, (const aclTensor *[]){a_t, rstd_t, sdy_t, sdx_t},
                      (int[]){a_s, rstd_s, sdy_s, sdx_s}, 2, (const aclTensor *[]){b_t, c_t},
                      (int[]){b_s, c_s}, &prm);
            aclTensor bv = og_bn_view(b_t, rank), cv = og_bn_view(c_t, rank);
            og_bn_map(&p, og_bn_dx_kernels, 6,
                      (const aclTensor *[]){gradOut, input, &mv, &av, &bv, &cv},
                      (int[]){0, 1, mean_s, a_s, b_s, c_s}, 1, (const aclTensor *[]){gradInput},
                      (int[]){7}, NULL);
        } else {
            og_bn_map(&p, og_mul_kernels, 2, (const aclTensor *[]){gradOut, &av}, (int[]){0, a_s},
                      1, (const aclTensor *[]){gradInput}, (int[]){7}, NULL);
        }
    }
    return og_prog_publish(&p, workspaceSize, executor);
}
