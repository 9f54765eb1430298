#include "ops/matmul/matmul_common.h"

#include "runtime/error.h"
#include "tensor/dtype.h"
#include "tensor/tensor.h"

enum { KEEP_DTYPE, ALLOW_FP32_DOWN_PRECISION, USE_FP16, USE_HF32, USE_FP32_ADD };

aclnnStatus og_mm_check_cube_math(const og_opdesc *op, int8_t cubeMathType) {
    if (cubeMathType >= KEEP_DTYPE && cubeMathType <= USE_FP32_ADD) return ACLNN_SUCCESS;
    return og_fail(ACLNN_ERR_PARAM_INVALID,
                   "%sGetWorkspaceSize: cubeMathType = %d is not one of 0 (KEEP_DTYPE), 1 "
                   "(ALLOW_FP32_DOWN_PRECISION), 2 (USE_FP16), 3 (USE_HF32), 4 (USE_FP32_ADD)",
                   op->name, (int)cubeMathType);
}

aclDataType og_mm_round_ab(int8_t cubeMathType, aclDataType promoted) {
    return cubeMathType == USE_FP16 && promoted == ACL_FLOAT ? ACL_FLOAT16 : ACL_FLOAT;
}

og_gemm_mat og_mm_mat(const aclTensor *t, int slot, int nbatch, int row_dim, int col_dim) {
    og_gemm_mat m = {.present = true, .slot = slot, .dtype = t->dtype};
    int nb = t->ndim - (row_dim >= 0) - (col_dim >= 0); // t's batch dims: 0 .. nb-1
    for (int i = 0; i < nbatch; i++) {
        int j = i - (nbatch - nb);
        m.bstride[i] = j < 0 || t->dims[j] == 1 ? 0 : t->strides[j];
    }
    m.rs = row_dim < 0 || t->dims[row_dim] == 1 ? 0 : t->strides[row_dim];
    m.cs = col_dim < 0 || t->dims[col_dim] == 1 ? 0 : t->strides[col_dim];
    return m;
}

int64_t og_mm_numel(const int64_t *dims, int n) {
    int64_t p = 1;
    for (int d = 0; d < n; d++) p *= dims[d];
    return p;
}

// The same elements at the same addresses (an output may then be its own addend).
static bool same_layout(const aclTensor *a, const aclTensor *b) {
    if (og_tensor_first(a) != og_tensor_first(b) || a->dtype != b->dtype || a->ndim != b->ndim)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->dims[d] != b->dims[d] || (a->dims[d] > 1 && a->strides[d] != b->strides[d]))
            return false;
    return true;
}

aclnnStatus og_mm_check_memory(const og_opdesc *op, int nin, const aclTensor *const *in,
                               const char *const *in_names, unsigned inplace_ok, int nout,
                               const aclTensor *const *out, const char *const *out_names) {
    for (int k = 0; k < nin + nout; k++) {
        const aclTensor *t = k < nin ? in[k] : out[k - nin];
        if (t && t->numel > 0 && !t->data)
            return og_fail(ACLNN_ERR_PARAM_NULLPTR,
                           "%sGetWorkspaceSize: %s has no data (NULL address)", op->name,
                           k < nin ? in_names[k] : out_names[k - nin]);
    }
    for (int j = 0; j < nout; j++) {
        const aclTensor *o = out[j];
        if (!o || o->numel == 0) continue;
        int bad_dim = og_tensor_self_overlap_dim(o);
        if (bad_dim >= 0)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: %s dim %d (size %lld, stride %lld) makes several "
                           "elements share one memory location, which an output may not do",
                           op->name, out_names[j], bad_dim, (long long)o->dims[bad_dim],
                           (long long)o->strides[bad_dim]);
        for (int k = 0; k < nin; k++) {
            const aclTensor *t = in[k];
            if (!t || !og_tensors_overlap(o, t)) continue;
            if ((inplace_ok >> k & 1u) && same_layout(o, t)) continue;
            if (inplace_ok >> k & 1u)
                return og_fail(ACLNN_ERR_PARAM_INVALID,
                               "%sGetWorkspaceSize: %s overlaps %s with a different layout: an "
                               "output may share memory with %s only element for element",
                               op->name, out_names[j], in_names[k], in_names[k]);
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: %s overlaps %s: the matrix product reads %s while "
                           "it writes %s, so they must not share memory",
                           op->name, out_names[j], in_names[k], in_names[k], out_names[j]);
        }
        for (int i = 0; i < j; i++)
            if (out[i] && og_tensors_overlap(o, out[i]))
                return og_fail(ACLNN_ERR_PARAM_INVALID,
                               "%sGetWorkspaceSize: %s and %s share memory: each output needs "
                               "its own",
                               op->name, out_names[j], out_names[i]);
    }
    return ACLNN_SUCCESS;
}
