#include "ops/common/checks.h"

#include <float.h>
#include <math.h>
#include <stdio.h>

#include "runtime/memory.h"
#include "runtime/profile.h"

// The dtypes aclnn's operators know besides the ones opgrad computes: a message says so.
static bool aclnn_knows(aclDataType dt) {
    switch (dt) {
    case ACL_DOUBLE:
    case ACL_INT8:
    case ACL_INT16:
    case ACL_INT32:
    case ACL_INT64:
    case ACL_UINT8:
    case ACL_BOOL:
    case ACL_COMPLEX64:
    case ACL_COMPLEX128:
        return true;
    default:
        return false;
    }
}

static bool floating(aclDataType dt) {
    return dt == ACL_FLOAT || dt == ACL_FLOAT16 || dt == ACL_BF16;
}

// "float32, float16 and bfloat16" for the dtypes of a mask: the floating ones first, in that
// order (then float64), then the others by their enum value.
static const char *dtype_list(unsigned long long dtypes, char *buf, int size) {
    int n = 0, left = __builtin_popcountll(dtypes);
    static const int first[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE};
    int order[64], count = 0;
    for (int i = 0; i < 4; i++) order[count++] = first[i];
    for (int dt = 0; dt < 64; dt++)
        if (dt != ACL_FLOAT && dt != ACL_FLOAT16 && dt != ACL_BF16 && dt != ACL_DOUBLE)
            order[count++] = dt;
    buf[0] = 0;
    for (int i = 0; i < count && n < size; i++)
        if (dtypes & OG_DT(order[i])) {
            int dt = order[i];
            const char *sep = n == 0 ? "" : left == 1 ? " and " : ", ";
            n += snprintf(buf + n, (size_t)(size - n), "%s%s", sep, og_dtype_name((aclDataType)dt));
            left--;
        }
    return buf;
}

static bool in_mask(aclDataType dt, unsigned long long dtypes) {
    return (int)dt >= 0 && (int)dt < 64 && (dtypes & OG_DT(dt));
}

// A tensor of a dtype outside `dtypes`, the ones opgrad computes for this argument.
static aclnnStatus dtypes_fail(const og_opdesc *op, const char *name, aclDataType dt,
                               unsigned long long dtypes) {
    char list[256];
    return og_fail(
        ACLNN_ERR_PARAM_INVALID, "%sGetWorkspaceSize: %s has dtype %s; opgrad supports %s%s",
        op->name, name, og_dtype_name(dt), dtype_list(dtypes, list, sizeof list),
        // (a hint for the float-only operators: aclnn takes more dtypes for many of them)
        (dtypes == OG_DTS_FLOATING || dtypes == OG_DTS_FLOATING64) && aclnn_knows(dt)
            ? " (aclnn also accepts this dtype; opgrad does not implement it)"
            : "");
}

static aclnnStatus dtype_fail(const og_opdesc *op, const char *name, aclDataType dt) {
    return dtypes_fail(op, name, dt, OG_DTS_FLOATING);
}

aclnnStatus og_check_args(const og_opdesc *op, uint64_t *workspaceSize, aclOpExecutor **executor,
                          int n, const char *const *names, const void *const *ptrs) {
    if (og_profile_on()) og_profile_phase1_begin(op); // the plan time includes the checks
    if (!workspaceSize)
        return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%sGetWorkspaceSize: workspaceSize is NULL",
                       op->name);
    if (!executor)
        return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%sGetWorkspaceSize: executor is NULL", op->name);
    for (int k = 0; k < n; k++)
        if (!ptrs[k])
            return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%sGetWorkspaceSize: %s is NULL", op->name,
                           names[k]);
    return ACLNN_SUCCESS;
}

aclnnStatus og_check_tensor_list(const og_opdesc *op, const char *name, const aclTensorList *list,
                                 uint64_t *size) {
    char fn[96], entry[96];
    snprintf(fn, sizeof fn, "%sGetWorkspaceSize", op->name);
    OG_TRY(og_check_live(fn, name, list, OG_OBJ_TENSOR_LIST));
    for (uint64_t k = 0; k < list->size; k++) {
        snprintf(entry, sizeof entry, "%s[%llu]", name, (unsigned long long)k);
        OG_TRY(og_check_live(fn, entry, list->tensors[k], OG_OBJ_TENSOR));
        OG_TRY(og_check_fits_block(op, entry, list->tensors[k]));
    }
    *size = list->size;
    return ACLNN_SUCCESS;
}

aclnnStatus og_check_live_tensors(const og_opdesc *op, int n, const char *const *names,
                                  const aclTensor *const *tensors) {
    char fn[96];
    snprintf(fn, sizeof fn, "%sGetWorkspaceSize", op->name);
    for (int k = 0; k < n; k++) {
        OG_TRY(og_check_live(fn, names[k], tensors[k], OG_OBJ_TENSOR));
        OG_TRY(og_check_fits_block(op, names[k], tensors[k]));
    }
    return ACLNN_SUCCESS;
}

aclnnStatus og_check_tensor(const og_opdesc *op, const char *name, const aclTensor *t,
                            int min_rank) {
    char fn[96];
    snprintf(fn, sizeof fn, "%sGetWorkspaceSize", op->name);
    OG_TRY(og_check_live(fn, name, t, OG_OBJ_TENSOR));
    if (!floating(t->dtype)) return dtype_fail(op, name, t->dtype);
    if (t->ndim > OG_MAX_DIMS || t->ndim < min_rank)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has rank %d; supported: %d to %d dims", op->name,
                       name, t->ndim, min_rank, OG_MAX_DIMS);
    return og_check_fits_block(op, name, t);
}

aclnnStatus og_check_tensor_of(const og_opdesc *op, const char *name, const aclTensor *t,
                               int min_rank, unsigned long long dtypes) {
    char fn[96];
    snprintf(fn, sizeof fn, "%sGetWorkspaceSize", op->name);
    OG_TRY(og_check_live(fn, name, t, OG_OBJ_TENSOR));
    if (!in_mask(t->dtype, dtypes)) return dtypes_fail(op, name, t->dtype, dtypes);
    if (t->ndim > OG_MAX_DIMS || t->ndim < min_rank)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has rank %d; supported: %d to %d dims", op->name,
                       name, t->ndim, min_rank, OG_MAX_DIMS);
    return og_check_fits_block(op, name, t);
}

aclnnStatus og_check_fits_block(const og_opdesc *op, const char *name, const aclTensor *t) {
    // The allocator knows blocks by their start; a view at an interior address is not checked.
    size_t block;
    int64_t end = og_tensor_end_bytes(t);
    if (end > 0 && og_mem_block_size(t->data, &block) && (uint64_t)end > block)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s reaches %lld bytes past its data address, but that "
                       "address is an aclrtMalloc block of %zu bytes",
                       op->name, name, (long long)end, block);
    return ACLNN_SUCCESS;
}

aclnnStatus og_check_dtype_arg(const og_opdesc *op, const char *name, aclDataType dt) {
    return floating(dt) ? ACLNN_SUCCESS : dtype_fail(op, name, dt);
}

aclnnStatus og_check_same_shape(const og_opdesc *op, const char *name_a, const aclTensor *a,
                                const char *name_b, const aclTensor *b) {
    bool same = a->ndim == b->ndim;
    for (int d = 0; same && d < a->ndim; d++) same = a->dims[d] == b->dims[d];
    if (same) return ACLNN_SUCCESS;
    char sa[160], sb[160];
    return og_fail(ACLNN_ERR_PARAM_INVALID,
                   "%sGetWorkspaceSize: %s has shape %s but %s has shape %s; they must be equal",
                   op->name, name_a, og_shape_str(a->dims, a->ndim, sa, sizeof sa), name_b,
                   og_shape_str(b->dims, b->ndim, sb, sizeof sb));
}

aclnnStatus og_check_same_dtype(const og_opdesc *op, const char *name_a, const aclTensor *a,
                                const char *name_b, const aclTensor *b) {
    if (a->dtype == b->dtype) return ACLNN_SUCCESS;
    return og_fail(ACLNN_ERR_PARAM_INVALID,
                   "%sGetWorkspaceSize: %s has dtype %s but %s has dtype %s; they must be equal",
                   op->name, name_a, og_dtype_name(a->dtype), name_b, og_dtype_name(b->dtype));
}

aclnnStatus og_check_broadcast_to(const og_opdesc *op, int n, const char *const *names,
                                  const aclTensor *const *inputs, const char *out_name,
                                  const aclTensor *out) {
    int64_t shape[OG_MAX_DIMS];
    int ndim = 0;
    char s1[160], s2[160];
    for (int k = 0; k < n; k++) {
        int64_t next[OG_MAX_DIMS];
        int nnext, bad;
        if (!og_broadcast_shapes(shape, ndim, inputs[k]->dims, inputs[k]->ndim, next, &nnext, &bad))
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: %s %s does not broadcast with %s (dim %d differs "
                           "and neither is 1)",
                           op->name, names[k],
                           og_shape_str(inputs[k]->dims, inputs[k]->ndim, s1, sizeof s1),
                           og_shape_str(shape, ndim, s2, sizeof s2), bad);
        for (int d = 0; d < nnext; d++) shape[d] = next[d];
        ndim = nnext;
    }
    bool same = out->ndim == ndim;
    for (int d = 0; same && d < ndim; d++) same = out->dims[d] == shape[d];
    if (!same)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has shape %s but the inputs broadcast to %s",
                       op->name, out_name, og_shape_str(out->dims, out->ndim, s1, sizeof s1),
                       og_shape_str(shape, ndim, s2, sizeof s2));
    return ACLNN_SUCCESS;
}

aclnnStatus og_check_castable(const og_opdesc *op, aclDataType from, const char *out_name,
                              const aclTensor *out) {
    if (og_can_cast(from, out->dtype)) return ACLNN_SUCCESS;
    return og_fail(ACLNN_ERR_PARAM_INVALID,
                   "%sGetWorkspaceSize: the result dtype %s cannot be cast to %s dtype %s",
                   op->name, og_dtype_name(from), out_name, og_dtype_name(out->dtype));
}

aclnnStatus og_check_promotion(const og_opdesc *op, int n, const char *const *names,
                               const aclTensor *const *inputs, const char *out_name,
                               const aclTensor *out, aclDataType *promoted) {
    aclDataType p = inputs[0]->dtype;
    for (int k = 1; k < n; k++) {
        aclDataType q = og_promote(p, inputs[k]->dtype);
        if (q == ACL_DT_UNDEFINED)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: %s dtype %s cannot be promoted with %s", op->name,
                           names[k], og_dtype_name(inputs[k]->dtype), og_dtype_name(p));
        p = q;
    }
    // (float64 only reaches here from an operator that took a float64 input: it has kernels)
    if (!og_dtype_is_floating(p))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: the inputs promote to %s; opgrad supports float32, "
                       "float16 and bfloat16 (and float64 where an operator has float64 kernels)",
                       op->name, og_dtype_name(p));
    OG_TRY(og_check_castable(op, p, out_name, out));
    *promoted = p;
    return ACLNN_SUCCESS;
}

// aclnn's ToFloat: IEEE rounding to float; out of range goes to +-inf (or FLT_MAX where rounding
// says so), without relying on C's undefined out-of-range conversion.
static float to_float(double d) {
    if (isnan(d) || fabs(d) <= FLT_MAX) return (float)d;
    if (fabs(d) >= 0x1.ffffffp127) return (float)copysign(INFINITY, d);
    return (float)copysign(FLT_MAX, d);
}

aclnnStatus og_check_scalar(const og_opdesc *op, const char *name, const aclScalar *s,
                            float *value) {
    char fn[96];
    snprintf(fn, sizeof fn, "%sGetWorkspaceSize", op->name);
    OG_TRY(og_check_live(fn, name, s, OG_OBJ_SCALAR));
    bool real = og_dtype_is_representable(s->dtype) && s->dtype != ACL_COMPLEX64 &&
                s->dtype != ACL_COMPLEX128;
    if (!real)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has dtype %s; a real (floating, integer or bool) "
                       "scalar is required",
                       op->name, name, og_dtype_name(s->dtype));
    if (value) *value = to_float(og_scalar_as_double(s));
    return ACLNN_SUCCESS;
}

aclnnStatus og_check_scalar_of(const og_opdesc *op, const char *name, const aclScalar *s,
                               unsigned long long dtypes, float *value) {
    OG_TRY(og_check_scalar(op, name, s, value));
    if (in_mask(s->dtype, dtypes)) return ACLNN_SUCCESS;
    char list[256];
    return og_fail(ACLNN_ERR_PARAM_INVALID,
                   "%sGetWorkspaceSize: %s has dtype %s; %s takes a scalar of dtype %s", op->name,
                   name, og_dtype_name(s->dtype), name, dtype_list(dtypes, list, sizeof list));
}

float og_scalar_in(const aclScalar *s, aclDataType dt) {
    float v = to_float(og_scalar_as_double(s));
    if (dt == ACL_FLOAT16) return og_f16_to_f32(og_f32_to_f16(v));
    if (dt == ACL_BF16) return og_bf16_to_f32(og_f32_to_bf16(v));
    return v;
}

aclnnStatus og_check_dim(const og_opdesc *op, const char *name, int64_t dim, int ndim, int *axis) {
    int rank = ndim > 0 ? ndim : 1;
    if (dim < -rank || dim >= rank)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s = %lld is out of range: the tensor has rank %d, so "
                       "%s must be in [%d, %d]",
                       op->name, name, (long long)dim, ndim, name, -rank, rank - 1);
    *axis = (int)(dim < 0 ? dim + rank : dim);
    return ACLNN_SUCCESS;
}

static aclnnStatus check_out_dtype(const og_opdesc *op, og_out_rule rule, const char *in_name,
                                   const aclTensor *in, aclDataType result, const char *out_name,
                                   const aclTensor *out) {
    if (rule == OG_OUT_SAME_DTYPE) return og_check_same_dtype(op, in_name, in, out_name, out);
    return og_check_castable(op, result, out_name, out);
}

aclnnStatus og_plan_forward(const og_opdesc *op, og_ew_kernel k, const aclTensor *self, int nout,
                            const aclTensor *const *outs, const char *const *names,
                            og_out_rule rule, const void *params, size_t params_size,
                            uint64_t *workspaceSize, aclOpExecutor **executor) {
    bool any_self = rule == OG_OUT_FLOAT_FROM_ANY;
    unsigned long long floats = k.fp64 ? OG_DTS_FLOATING64 : OG_DTS_FLOATING;
    OG_TRY(og_check_tensor_of(op, names[0], self, 0, floats | (any_self ? OG_DTS_INTEGRAL : 0)));
    for (int j = 0; j < nout; j++) OG_TRY(og_check_tensor_of(op, names[1 + j], outs[j], 0, floats));
    // an integer self is computed in out's dtype (floating: checked just above)
    aclDataType compute = og_dtype_is_floating(self->dtype) ? self->dtype : outs[0]->dtype;
    og_ew_op ew = {.op = op,
                   .kernels = k.fp32,
                   .kernels16 = k.fused16,
                   .kernels64 = k.fp64,
                   .kernels_nt = k.fp32_nt,
                   .compute_bound = k.compute_bound,
                   .light = k.light,
                   .nin = 1,
                   .in = {self},
                   .nout = nout,
                   .names = {names[0]},
                   .params = params,
                   .params_size = params_size,
                   .compute_dtype = compute};
    for (int j = 0; j < nout; j++) {
        const char *name = names[1 + j];
        OG_TRY(check_out_dtype(op, rule, names[0], self, compute, name, outs[j]));
        OG_TRY(og_check_same_shape(op, names[0], self, name, outs[j]));
        ew.out[j] = outs[j];
        ew.names[1 + j] = name;
    }
    return og_ew_plan_op(&ew, workspaceSize, executor);
}

aclnnStatus og_plan_backward(const og_opdesc *op, og_ew_kernel k, int nin,
                             const aclTensor *const *ins, const aclTensor *out,
                             const char *const *names, unsigned flags, og_out_rule rule,
                             const void *params, size_t params_size, uint64_t *workspaceSize,
                             aclOpExecutor **executor) {
    bool int_self = false;
    unsigned long long floats = k.fp64 ? OG_DTS_FLOATING64 : OG_DTS_FLOATING;
    for (int j = 0; j < nin; j++) {
        bool may_int =
            (flags & OG_BWD_INT_PROMOTE) || ((flags & OG_BWD_INT_SELF_AS_FLOAT) && j == nin - 1);
        OG_TRY(
            og_check_tensor_of(op, names[j], ins[j], 0, floats | (may_int ? OG_DTS_INTEGRAL : 0)));
        int_self = int_self || !og_dtype_is_floating(ins[j]->dtype);
    }
    OG_TRY(og_check_tensor_of(op, names[nin], out, 0, floats));
    aclDataType promoted = ACL_FLOAT;
    if ((flags & OG_BWD_INT_SELF_AS_FLOAT) && int_self) // aclnn casts every input to FLOAT
        OG_TRY(og_check_castable(op, promoted, names[nin], out));
    else
        OG_TRY(og_check_promotion(op, nin, names, ins, names[nin], out, &promoted));
    OG_TRY(check_out_dtype(op, rule, names[1], ins[1], promoted, names[nin], out));
    if (flags & OG_BWD_BROADCAST) {
        OG_TRY(og_check_broadcast_to(op, nin, names, ins, names[nin], out));
    } else {
        for (int j = 0; j + 1 < nin; j++)
            OG_TRY(og_check_same_shape(op, names[j], ins[j], names[j + 1], ins[j + 1]));
        OG_TRY(og_check_same_shape(op, names[nin - 1], ins[nin - 1], names[nin], out));
    }
    og_ew_op ew = {.op = op,
                   .kernels = k.fp32,
                   .kernels16 = k.fused16,
                   .kernels64 = k.fp64,
                   .kernels_nt = k.fp32_nt,
                   .compute_bound = k.compute_bound,
                   .light = k.light,
                   .nin = nin,
                   .nout = 1,
                   .out = {out},
                   .params = params,
                   .params_size = params_size,
                   .compute_dtype = promoted};
    for (int j = 0; j < nin; j++) ew.in[j] = ins[j], ew.names[j] = names[j];
    ew.names[nin] = names[nin];
    return og_ew_plan_op(&ew, workspaceSize, executor);
}
