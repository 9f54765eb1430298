/* aclnnConvolution and aclnnConvolutionBackward: argument checks and the GEMM steps of conv.h.
 * Rules from ops-nn conv/convolution_forward (aclnn_convolution.cpp) and
 * conv/convolution_backward (docs/aclnnConvolutionBackward.md); where opgrad differs,
 * docs/ops/conv.md says so. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "aclnnop/aclnn_convolution.h"
#include "aclnnop/aclnn_convolution_backward.h"
#include "engine/program.h"
#include "ops/common/checks.h"
#include "ops/conv/conv.h"
#include "ops/matmul/matmul_common.h"
#include "ops/norm/norm_kernel.h"

// stride, dilation and padding at most 2^31 - 1 (upstream's own limit on padding), so that the
// sizes computed from them and the tensors' dims are checked for overflow before they are used.
#define ATTR_MAX ((int64_t)INT32_MAX)

/// The attributes of one call, checked, as the direct convolution's geometry (conv.h).
typedef struct conv_args {
    const char *fn; // "aclnnXxxGetWorkspaceSize"
    int nsp;        // spatial dims: 1, 2 or 3
    bool transposed;
    int64_t groups;
    int64_t stride[3], dilation[3], pad_lo[3], pad_hi[3], out_pad[3];
} conv_args;

static aclnnStatus int_array(const conv_args *a, const char *name, const aclIntArray *v) {
    return og_check_live(a->fn, name, v, OG_OBJ_INT_ARRAY);
}

// stride, padding, dilation, outputPadding (transposed only) against the spatial rank nsp.
static aclnnStatus check_attrs(conv_args *a, const aclIntArray *stride, const aclIntArray *padding,
                               const aclIntArray *dilation, const aclIntArray *outputPadding) {
    OG_TRY(int_array(a, "stride", stride));
    OG_TRY(int_array(a, "padding", padding));
    OG_TRY(int_array(a, "dilation", dilation));
    if (outputPadding) OG_TRY(int_array(a, "outputPadding", outputPadding)); // (a live handle)
    const int n = a->nsp;
    const struct {
        const char *name;
        const aclIntArray *v;
        int64_t *dst;
    } pos[2] = {{"stride", stride, a->stride}, {"dilation", dilation, a->dilation}};
    for (int k = 0; k < 2; k++) {
        if ((int)pos[k].v->size != n)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%s: %s has %llu entries; it must have one per spatial dim (%d)", a->fn,
                           pos[k].name, (unsigned long long)pos[k].v->size, n);
        for (int d = 0; d < n; d++) {
            if (pos[k].v->values[d] <= 0 || pos[k].v->values[d] > ATTR_MAX)
                return og_fail(ACLNN_ERR_PARAM_INVALID,
                               "%s: %s[%d] = %lld; it must be in [1, %lld]", a->fn, pos[k].name, d,
                               (long long)pos[k].v->values[d], (long long)ATTR_MAX);
            pos[k].dst[d] = pos[k].v->values[d];
        }
    }
    // padding: one per spatial dim, or begin/end pairs where upstream takes them (1-D and 2-D
    // convolutions, 2-D transposed: [left, right] and [top, bottom, left, right])
    bool pairs_ok = (n <= 2 && !a->transposed) || (n == 2 && a->transposed);
    int np = (int)padding->size;
    if (np != n && !(pairs_ok && np == 2 * n))
        return og_fail(
            ACLNN_ERR_PARAM_INVALID,
            "%s: padding has %d entries; it must have %d (one per spatial dim)%s", a->fn, np, n,
            pairs_ok ? (n == 1 ? " or 2 ([left, right])" : " or 4 ([top, bottom, left, right])")
                     : "");
    for (int d = 0; d < np; d++)
        if (padding->values[d] < 0 || padding->values[d] > ATTR_MAX)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%s: padding[%d] = %lld; it must be in [0, %lld]", a->fn, d,
                           (long long)padding->values[d], (long long)ATTR_MAX);
    for (int d = 0; d < n; d++) {
        a->pad_lo[d] = padding->values[np == n ? d : 2 * d];
        a->pad_hi[d] = padding->values[np == n ? d : 2 * d + 1];
        a->out_pad[d] = 0;
    }
    if (!a->transposed) return ACLNN_SUCCESS; // outputPadding is ignored
    OG_TRY(int_array(a, "outputPadding", outputPadding));
    if ((int)outputPadding->size != n)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: outputPadding has %llu entries; it must have one per spatial dim (%d)",
                       a->fn, (unsigned long long)outputPadding->size, n);
    for (int d = 0; d < n; d++) {
        int64_t v = outputPadding->values[d];
        if (v < 0 || (v >= a->stride[d] && v >= a->dilation[d]))
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%s: outputPadding[%d] = %lld; it must be 0 or more and less than "
                           "stride[%d] (%lld) or dilation[%d] (%lld)",
                           a->fn, d, (long long)v, d, (long long)a->stride[d], d,
                           (long long)a->dilation[d]);
        a->out_pad[d] = v;
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_rank(const conv_args *a, const char *name, const aclTensor *t, int rank) {
    if (t->ndim == rank) return ACLNN_SUCCESS;
    char s[160];
    return og_fail(ACLNN_ERR_PARAM_INVALID,
                   "%s: %s has shape %s (rank %d); it must have rank %d like input", a->fn, name,
                   og_shape_str(t->dims, t->ndim, s, sizeof s), t->ndim, rank);
}

static aclnnStatus check_shape(const conv_args *a, const char *name, const aclTensor *t,
                               const int64_t *want, int n, const char *why) {
    bool same = t->ndim == n;
    for (int d = 0; same && d < n; d++) same = t->dims[d] == want[d];
    if (same) return ACLNN_SUCCESS;
    char s1[160], s2[160];
    return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: %s has shape %s; it must be %s (%s)", a->fn, name,
                   og_shape_str(t->dims, t->ndim, s1, sizeof s1),
                   og_shape_str(want, n, s2, sizeof s2), why);
}

// input's rank (NCL, NCHW or NCDHW) and weight's; sets the spatial rank.
static aclnnStatus check_ranks(conv_args *a, const aclTensor *input, const aclTensor *weight) {
    char s1[160];
    if (input->ndim < 3 || input->ndim > 5)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: input has shape %s (rank %d); it must have rank 3, 4 or 5 (NCL, NCHW, "
                       "NCDHW)",
                       a->fn, og_shape_str(input->dims, input->ndim, s1, sizeof s1), input->ndim);
    OG_TRY(check_rank(a, "weight", weight, input->ndim));
    a->nsp = input->ndim - 2;
    return ACLNN_SUCCESS;
}

// input, weight (channels, groups; ranks checked) and the geometry; out_shape: the result's
// shape.
static aclnnStatus plan_geometry(conv_args *a, const aclTensor *input, const aclTensor *weight,
                                 og_conv_geom *g, int64_t *out_shape) {
    char s1[160], s2[160];
    if (a->groups < 1 || a->groups > 65535)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: groups = %lld; it must be in [1, 65535]",
                       a->fn, (long long)a->groups);
    const int64_t G = a->groups, C = input->dims[1];
    // weight: [Cout, Cin / G, k...]; transposed: [Cin, Cout / G, k...]
    int64_t wg; // weight's dim 1 x groups (checked: an empty weight's dims may be huge)
    if (__builtin_mul_overflow(weight->dims[1], G, &wg))
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: weight's dim 1 x groups overflows int64",
                       a->fn);
    if (!a->transposed && wg != C)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: weight %s and input %s: groups (%lld) x weight's dim 1 (%lld) must "
                       "equal input's channels (%lld)",
                       a->fn, og_shape_str(weight->dims, weight->ndim, s1, sizeof s1),
                       og_shape_str(input->dims, input->ndim, s2, sizeof s2), (long long)G,
                       (long long)weight->dims[1], (long long)C);
    if (a->transposed && weight->dims[0] != C)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: weight %s and input %s: a transposed convolution's weight dim 0 (%lld) "
                       "must equal input's channels (%lld)",
                       a->fn, og_shape_str(weight->dims, weight->ndim, s1, sizeof s1),
                       og_shape_str(input->dims, input->ndim, s2, sizeof s2),
                       (long long)weight->dims[0], (long long)C);
    if (weight->dims[0] % G)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: weight's dim 0 (%lld) must be a multiple of groups (%lld)", a->fn,
                       (long long)weight->dims[0], (long long)G);
    memset(g, 0, sizeof *g);
    g->N = input->dims[0], g->G = G;
    const int off = 3 - a->nsp;
    for (int j = 0; j < 3; j++) g->k[j] = g->s[j] = g->d[j] = g->in[j] = g->out[j] = 1;
    int64_t cout = a->transposed ? wg : weight->dims[0];
    out_shape[0] = g->N, out_shape[1] = cout;
    for (int d = 0; d < a->nsp; d++) {
        int64_t in = input->dims[2 + d], k = weight->dims[2 + d], s = a->stride[d];
        int64_t dil = a->dilation[d], pads = a->pad_lo[d] + a->pad_hi[d], o;
        if (k < 1)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%s: weight's spatial dim %d is %lld; it must be 1 or more", a->fn, d,
                           (long long)k);
        int64_t reach; // dil * (k - 1) + in + pads + 1, and (in - 1) * s + that (transposed)
        if (__builtin_mul_overflow(dil, k - 1, &reach) ||
            __builtin_add_overflow(reach, in, &reach) ||
            __builtin_add_overflow(reach, pads + 1, &reach) ||
            (a->transposed && in > 0 &&
             (__builtin_mul_overflow(in - 1, s, &o) || __builtin_add_overflow(o, reach, &o))))
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%s: spatial dim %d: the sizes (input %lld, kernel %lld, stride %lld, "
                           "dilation %lld, padding %lld) overflow int64",
                           a->fn, d, (long long)in, (long long)k, (long long)s, (long long)dil,
                           (long long)pads);
        if (a->transposed) {
            o = (in - 1) * s - pads + dil * (k - 1) + a->out_pad[d] + 1;
            if (in > 0 && o < 1)
                return og_fail(ACLNN_ERR_PARAM_INVALID,
                               "%s: spatial dim %d: (%lld - 1) * stride %lld - padding %lld + "
                               "dilation %lld * (kernel %lld - 1) + outputPadding %lld + 1 = %lld; "
                               "the output size must be 1 or more",
                               a->fn, d, (long long)in, (long long)s, (long long)pads,
                               (long long)dil, (long long)k, (long long)a->out_pad[d],
                               (long long)o);
            if (in == 0) o = 0;
        } else {
            int64_t span = dil * (k - 1) + 1;
            if (in + pads < span)
                return og_fail(ACLNN_ERR_PARAM_INVALID,
                               "%s: spatial dim %d: the padded input (%lld + %lld) is smaller than "
                               "the dilated kernel (dilation %lld * (kernel %lld - 1) + 1 = %lld)",
                               a->fn, d, (long long)in, (long long)pads, (long long)dil,
                               (long long)k, (long long)span);
            o = (in + pads - span) / s + 1;
        }
        out_shape[2 + d] = o;
        // the direct convolution runs from the larger space (in-space) to the smaller
        g->in[off + d] = a->transposed ? o : in;
        g->out[off + d] = a->transposed ? in : o;
        g->k[off + d] = k, g->s[off + d] = s, g->d[off + d] = dil, g->pad[off + d] = a->pad_lo[d];
    }
    // direct convolution channels: X has G * ci_g, Y has G * co_g, W [G * co_g, ci_g, k...]
    g->co_g = weight->dims[0] / G;
    g->ci_g = weight->dims[1];
    // (products of the dims of tensors that may be empty: checked)
    if (__builtin_mul_overflow(g->k[0], g->k[1], &g->KS) ||
        __builtin_mul_overflow(g->KS, g->k[2], &g->KS) ||
        __builtin_mul_overflow(g->in[0], g->in[1], &g->I) ||
        __builtin_mul_overflow(g->I, g->in[2], &g->I) ||
        __builtin_mul_overflow(g->out[0], g->out[1], &g->O) ||
        __builtin_mul_overflow(g->O, g->out[2], &g->O))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: the kernel's or a plane's number of positions overflows int64", a->fn);
    return ACLNN_SUCCESS;
}

// float64 is an opgrad extension (docs/ops/conv.md): a float64 bias needs float64 input or
// weight (the fp32 / 16-bit products read their addend in fp32).
static aclnnStatus check_bias_dtype(const conv_args *a, const aclTensor *bias,
                                    aclDataType promoted) {
    if (bias->dtype != ACL_DOUBLE || promoted == ACL_DOUBLE) return ACLNN_SUCCESS;
    return og_fail(ACLNN_ERR_PARAM_INVALID,
                   "%s: bias is DOUBLE but input and weight promote to %s; a float64 bias needs a "
                   "float64 input or weight",
                   a->fn, og_dtype_name(promoted));
}

// The products' round_ab (conv.h): ACL_DOUBLE when the promoted dtype is float64 (cubeMathType
// then changes nothing, as for matmul), else cubeMathType's rounding.
static aclDataType round_of(int8_t cubeMathType, aclDataType promoted) {
    return promoted == ACL_DOUBLE ? ACL_DOUBLE : og_mm_round_ab(cubeMathType, promoted);
}

static aclnnStatus check_cube_math(const conv_args *a, int8_t cubeMathType) {
    if (cubeMathType >= 0 && cubeMathType <= 3) return ACLNN_SUCCESS;
    return og_fail(ACLNN_ERR_PARAM_INVALID,
                   "%s: cubeMathType = %d is not one of 0 (KEEP_DTYPE), 1 "
                   "(ALLOW_FP32_DOWN_PRECISION), 2 (USE_FP16), 3 (USE_HF32)",
                   a->fn, (int)cubeMathType);
}

// Tensors whose every element is the product's (and no input's) memory: a GEMM reads its inputs
// while it writes.
static aclnnStatus check_memory(const og_opdesc *op, int nin, const aclTensor *const *in,
                                const char *const *in_names, int nout, const aclTensor *const *out,
                                const char *const *out_names) {
    return og_mm_check_memory(op, nin, in, in_names, 0, nout, out, out_names);
}

aclnnStatus aclnnConvolutionGetWorkspaceSize(const aclTensor *input, const aclTensor *weight,
                                             const aclTensor *bias, const aclIntArray *stride,
                                             const aclIntArray *padding,
                                             const aclIntArray *dilation, bool transposed,
                                             const aclIntArray *outputPadding, const int64_t groups,
                                             aclTensor *output, int8_t cubeMathType,
                                             uint64_t *workspaceSize, aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_Convolution;
    conv_args a = {
        .fn = "aclnnConvolutionGetWorkspaceSize", .transposed = transposed, .groups = groups};
    static const char *const names[] = {"input",   "weight",   "stride",
                                        "padding", "dilation", "output"};
    const void *ptrs[] = {input, weight, stride, padding, dilation, output};
    OG_TRY(og_check_args(op, workspaceSize, executor, 6, names, ptrs));
    OG_TRY(og_check_tensor_of(op, "input", input, 3, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "weight", weight, 3, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "output", output, 3, OG_DTS_FLOATING64));
    if (bias) OG_TRY(og_check_tensor_of(op, "bias", bias, 1, OG_DTS_FLOATING64));
    const aclTensor *ins[2] = {input, weight};
    aclDataType promoted;
    OG_TRY(og_check_promotion(op, 2, names, ins, "output", output, &promoted));
    if (bias) OG_TRY(check_bias_dtype(&a, bias, promoted));
    OG_TRY(check_cube_math(&a, cubeMathType));
    OG_TRY(check_ranks(&a, input, weight));
    OG_TRY(check_attrs(&a, stride, padding, dilation, outputPadding));
    og_conv_geom g;
    int64_t want[5];
    OG_TRY(plan_geometry(&a, input, weight, &g, want));
    OG_TRY(check_shape(&a, "output", output, want, input->ndim,
                       transposed ? "the transposed convolution's result"
                                  : "the convolution's result"));
    if (bias) {
        OG_TRY(check_shape(&a, "bias", bias, &want[1], 1,
                           transposed ? "weight's dim 1 x groups" : "weight's dim 0"));
    }
    const aclTensor *io[4] = {input, weight, bias, output};
    static const char *const in_names[3] = {"input", "weight", "bias"};
    OG_TRY(check_memory(op, 3, io, in_names, 1, &io[3], &names[5]));
    og_prog p;
    og_prog_init(&p, op, 3, 1, io);
    if (output->numel > 0) {
        og_conv_tensor x = og_conv_tensor_of(input, 0), w = og_conv_tensor_of(weight, 1);
        og_conv_tensor y = og_conv_tensor_of(output, 3), b;
        if (bias) b = og_conv_tensor_of(bias, 2);
        aclDataType round = round_of(cubeMathType, promoted);
        og_prog_note(&p, transposed ? og_conv_data(&p, &g, &x, &w, bias ? &b : NULL, &y, round)
                                    : og_conv_forward(&p, &g, &x, &w, bias ? &b : NULL, &y, round));
    }
    return og_prog_publish(&p, workspaceSize, executor);
}

static aclnnStatus check_mask(const conv_args *a, const aclBoolArray *mask, bool m[3]) {
    OG_TRY(og_check_live(a->fn, "outputMask", mask, OG_OBJ_BOOL_ARRAY));
    if (mask->size != 3)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: outputMask has %llu entries; it must have 3 (gradInput, gradWeight, "
                       "gradBias)",
                       a->fn, (unsigned long long)mask->size);
    for (int k = 0; k < 3; k++) m[k] = mask->values[k];
    return ACLNN_SUCCESS;
}

// gradBias = gradOutput summed over every dim but the channels; in float64 when the promoted
// dtype is (the reduction engine's float64 path takes a float64 input: a narrower gradOutput is
// widened into a temporary first, exactly).
static void bias_grad(og_prog *p, const aclTensor *dy, int dy_slot, const aclTensor *db,
                      int db_slot, aclDataType promoted) {
    if (promoted == ACL_DOUBLE && dy->dtype != ACL_DOUBLE) {
        const aclTensor *wide;
        int slot = og_prog_temp(p, ACL_DOUBLE, dy->ndim, dy->dims, &wide);
        if (slot < 0) return; // the builder has failed; publish reports it
        og_ew_op m = {.op = p->op,
                      .kernels = og_norm_copy_kernels,
                      .kernels64 = og_norm_copy_kernels64,
                      .nin = 1,
                      .nout = 1,
                      .in = {dy},
                      .out = {wide},
                      .names = {"gradOutput", "wide"},
                      .slots = true,
                      .in_slot = {dy_slot},
                      .out_slot = {slot},
                      .compute_dtype = ACL_DOUBLE};
        og_prog_map(p, &m);
        dy = wide, dy_slot = slot;
    }
    og_reduce_op r = {.kind = OG_RED_SUM,
                      .nin = 1,
                      .in = {dy},
                      .in_slot = {dy_slot},
                      .out = db,
                      .out_slot = db_slot,
                      .round_in = ACL_FLOAT,
                      .ndim = dy->ndim};
    for (int d = 0; d < dy->ndim; d++) {
        r.dims[d] = dy->dims[d];
        if (d != 1) r.reduce_mask |= 1u << d;
    }
    r.out_dim[1] = 0;
    og_prog_reduce(p, &r);
}

aclnnStatus aclnnConvolutionBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *input, const aclTensor *weight,
    const aclIntArray *biasSizes, const aclIntArray *stride, const aclIntArray *padding,
    const aclIntArray *dilation, bool transposed, const aclIntArray *outputPadding, int groups,
    const aclBoolArray *outputMask, int8_t cubeMathType, aclTensor *gradInput,
    aclTensor *gradWeight, aclTensor *gradBias, uint64_t *workspaceSize, aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_ConvolutionBackward;
    conv_args a = {.fn = "aclnnConvolutionBackwardGetWorkspaceSize",
                   .transposed = transposed,
                   .groups = groups};
    static const char *const names[] = {"gradOutput", "input",    "weight",    "stride",
                                        "padding",    "dilation", "outputMask"};
    const void *ptrs[] = {gradOutput, input, weight, stride, padding, dilation, outputMask};
    OG_TRY(og_check_args(op, workspaceSize, executor, 7, names, ptrs));
    bool m[3];
    OG_TRY(check_mask(&a, outputMask, m));
    aclTensor *outs[3] = {gradInput, gradWeight, gradBias};
    static const char *const out_names[3] = {"gradInput", "gradWeight", "gradBias"};
    for (int k = 0; k < 3; k++)
        if (m[k] && !outs[k])
            return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL but outputMask[%d] is true",
                           a.fn, out_names[k], k);
    OG_TRY(og_check_tensor_of(op, "gradOutput", gradOutput, 3, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "input", input, 3, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "weight", weight, 3, OG_DTS_FLOATING64));
    for (int k = 0; k < 3; k++)
        if (m[k])
            OG_TRY(
                og_check_tensor_of(op, out_names[k], outs[k], k == 2 ? 1 : 3, OG_DTS_FLOATING64));
    const aclTensor *ins[3] = {gradOutput, input, weight};
    aclDataType promoted;
    OG_TRY(og_check_promotion(op, 3, names, ins, "input", input, &promoted));
    for (int k = 0; k < 3; k++)
        if (m[k]) OG_TRY(og_check_castable(op, promoted, out_names[k], outs[k]));
    OG_TRY(check_cube_math(&a, cubeMathType));
    OG_TRY(check_ranks(&a, input, weight));
    OG_TRY(check_attrs(&a, stride, padding, dilation, outputPadding));
    og_conv_geom g;
    int64_t want[5];
    OG_TRY(plan_geometry(&a, input, weight, &g, want));
    OG_TRY(check_shape(&a, "gradOutput", gradOutput, want, input->ndim,
                       transposed ? "the transposed convolution's result"
                                  : "the convolution's result"));
    if (biasSizes) {
        OG_TRY(og_check_live(a.fn, "biasSizes", biasSizes, OG_OBJ_INT_ARRAY));
        if (biasSizes->size != 1 || biasSizes->values[0] != want[1])
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%s: biasSizes must be [%lld] (the output's channels)", a.fn,
                           (long long)want[1]);
    }
    if (m[0])
        OG_TRY(check_shape(&a, "gradInput", gradInput, input->dims, input->ndim, "input's shape"));
    if (m[1])
        OG_TRY(check_shape(&a, "gradWeight", gradWeight, weight->dims, weight->ndim,
                           "weight's shape"));
    if (m[2]) OG_TRY(check_shape(&a, "gradBias", gradBias, &want[1], 1, "the output's channels"));
    const aclTensor *io[6] = {gradOutput,
                              input,
                              weight,
                              m[0] ? gradInput : NULL,
                              m[1] ? gradWeight : NULL,
                              m[2] ? gradBias : NULL};
    static const char *const in_names[3] = {"gradOutput", "input", "weight"};
    OG_TRY(check_memory(op, 3, io, in_names, 3, &io[3], out_names));
    og_prog p;
    og_prog_init(&p, op, 3, 3, io);
    og_conv_tensor dy = og_conv_tensor_of(gradOutput, 0), x = og_conv_tensor_of(input, 1);
    og_conv_tensor w = og_conv_tensor_of(weight, 2);
    aclDataType round = round_of(cubeMathType, promoted);
    if (m[0] && gradInput->numel > 0) {
        og_conv_tensor dx = og_conv_tensor_of(gradInput, 3);
        // (transposed: gradInput lives in the direct convolution's out-space)
        const char *a = transposed ? og_conv_forward(&p, &g, &dy, &w, NULL, &dx, round)
                                   : og_conv_data(&p, &g, &dy, &w, NULL, &dx, round);
        char note[64];
        snprintf(note, sizeof note, "gradInput: %s", a);
        og_prog_note(&p, note);
    }
    if (m[1] && gradWeight->numel > 0) {
        og_conv_tensor dw = og_conv_tensor_of(gradWeight, 4);
        // (transposed: the direct convolution maps gradOutput's space to input's)
        const char *a = transposed ? og_conv_weight(&p, &g, &dy, &x, &dw, round)
                                   : og_conv_weight(&p, &g, &x, &dy, &dw, round);
        char note[64];
        snprintf(note, sizeof note, "gradWeight: %s", a);
        og_prog_note(&p, note);
    }
    if (m[2] && gradBias->numel > 0) bias_grad(&p, gradOutput, 0, gradBias, 5, promoted);
    return og_prog_publish(&p, workspaceSize, executor);
}
