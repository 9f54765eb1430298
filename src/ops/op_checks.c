#include "ops/op_checks.h"

#include <stdio.h>

#include "runtime/error.h"
#include "tensor/dtype.h"

static const char *dtype_list(unsigned long long dtypes, char *buf, int size) {
    static const aclDataType order[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16,  ACL_DOUBLE, ACL_INT8,
                                        ACL_INT16, ACL_INT32,   ACL_INT64, ACL_UINT8,  ACL_BOOL};
    int n = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof order / sizeof *order && n < size; i++)
        if (dtypes & OG_DT(order[i]))
            n += snprintf(buf + n, size - n, "%s%s", n ? ", " : "", og_dtype_name(order[i]));
    return buf;
}

static bool dtype_in(aclDataType dt, unsigned long long dtypes) {
    return (int)dt >= 0 && (int)dt < 64 && (dtypes & OG_DT(dt));
}

aclnnStatus og_check_not_null(const char *op, int n, const char *const *names,
                              const void *const *ptrs) {
    for (int k = 0; k < n; k++)
        if (!ptrs[k])
            return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%sGetWorkspaceSize: %s is NULL", op, names[k]);
    return ACLNN_SUCCESS;
}

aclnnStatus og_check_tensor(const char *op, const char *name, const aclTensor *t,
                            unsigned long long dtypes, int min_rank) {
    char list[128];
    if (!t) return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%sGetWorkspaceSize: %s is NULL", op, name);
    if (!dtype_in(t->dtype, dtypes))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has dtype %s; supported: %s", op, name,
                       og_dtype_name(t->dtype), dtype_list(dtypes, list, sizeof list));
    if (t->ndim > OG_MAX_DIMS || t->ndim < min_rank)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has rank %d; supported: %d to %d dims", op, name,
                       t->ndim, min_rank, OG_MAX_DIMS);
    return ACLNN_SUCCESS;
}

aclnnStatus og_check_same_shape(const char *op, const char *name_a, const aclTensor *a,
                                const char *name_b, const aclTensor *b) {
    bool same = a->ndim == b->ndim;
    for (int d = 0; same && d < a->ndim; d++) same = a->dims[d] == b->dims[d];
    if (same) return ACLNN_SUCCESS;
    char sa[160], sb[160];
    return og_fail(ACLNN_ERR_PARAM_INVALID,
                   "%sGetWorkspaceSize: %s has shape %s but %s has shape %s; they must be equal",
                   op, name_a, og_shape_str(a->dims, a->ndim, sa, sizeof sa), name_b,
                   og_shape_str(b->dims, b->ndim, sb, sizeof sb));
}

aclnnStatus og_check_same_dtype(const char *op, const char *name_a, const aclTensor *a,
                                const char *name_b, const aclTensor *b) {
    if (a->dtype == b->dtype) return ACLNN_SUCCESS;
    return og_fail(ACLNN_ERR_PARAM_INVALID,
                   "%sGetWorkspaceSize: %s has dtype %s but %s has dtype %s; they must be equal",
                   op, name_a, og_dtype_name(a->dtype), name_b, og_dtype_name(b->dtype));
}

aclnnStatus og_check_broadcast_to(const char *op, int n, const char *const *names,
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
                           op, names[k],
                           og_shape_str(inputs[k]->dims, inputs[k]->ndim, s1, sizeof s1),
                           og_shape_str(shape, ndim, s2, sizeof s2), bad);
        for (int d = 0; d < nnext; d++) shape[d] = next[d];
        ndim = nnext;
    }
    bool same = out->ndim == ndim;
    for (int d = 0; same && d < ndim; d++) same = out->dims[d] == shape[d];
    if (!same)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has shape %s but the inputs broadcast to %s", op,
                       out_name, og_shape_str(out->dims, out->ndim, s1, sizeof s1),
                       og_shape_str(shape, ndim, s2, sizeof s2));
    return ACLNN_SUCCESS;
}

aclnnStatus og_check_promotion(const char *op, int n, const char *const *names,
                               const aclTensor *const *inputs, unsigned long long dtypes,
                               const char *out_name, const aclTensor *out, aclDataType *promoted) {
    aclDataType p = inputs[0]->dtype;
    for (int k = 1; k < n; k++) {
        aclDataType q = og_promote(p, inputs[k]->dtype);
        if (q == ACL_DT_UNDEFINED)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: %s dtype %s cannot be promoted with %s", op,
                           names[k], og_dtype_name(inputs[k]->dtype), og_dtype_name(p));
        p = q;
    }
    char list[128];
    if (!dtype_in(p, dtypes))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: the inputs promote to %s; supported: %s", op,
                       og_dtype_name(p), dtype_list(dtypes, list, sizeof list));
    if (!og_can_cast(p, out->dtype))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: the result dtype %s cannot be cast to %s dtype %s", op,
                       og_dtype_name(p), out_name, og_dtype_name(out->dtype));
    *promoted = p;
    return ACLNN_SUCCESS;
}
