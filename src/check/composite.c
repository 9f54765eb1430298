/* Helpers of the checker's composite backwards (composite.h). */
#include "check/composite.h"

#include <stdbool.h>
#include <stdlib.h>

#include "aclnnop/aclnn_mul.h"
#include "aclnnop/aclnn_reduce_sum.h"
#include "tensor/tensor.h"

ogc_tmp ogc_tmp_new(const int64_t *dims, int nd, aclDataType dt) {
    ogc_tmp r = {0};
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= dims[d];
    r.data = calloc((size_t)n + 16, aclDataTypeSize(dt));
    if (r.data)
        r.t = aclCreateTensor(dims, (uint64_t)nd, dt, NULL, 0, ACL_FORMAT_ND, dims, (uint64_t)nd,
                              r.data);
    return r;
}

void ogc_tmp_free(ogc_tmp *r) {
    if (r->t) aclDestroyTensor(r->t);
    free(r->data);
    r->t = NULL;
    r->data = NULL;
}

aclTensor *ogc_reshaped(const aclTensor *t, const int64_t *dims, int nd) {
    void *data = NULL;
    aclGetRawTensorAddr(t, &data);
    int64_t offset = 0;
    aclGetViewOffset(t, &offset);
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= dims[d];
    int64_t storage[1] = {offset + n};
    return aclCreateTensor(dims, (uint64_t)nd, t->dtype, NULL, offset, ACL_FORMAT_ND, storage, 1,
                           data);
}

int ogc_muls(const aclTensor *x, double factor, aclTensor *out) {
    float f = (float)factor;
    aclScalar *s = aclCreateScalar(&f, ACL_FLOAT);
    uint64_t ws;
    aclOpExecutor *ex;
    int st = aclnnMulsGetWorkspaceSize(x, s, out, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnMuls);
    aclDestroyScalar(s);
    return st;
}

int ogc_sum_to(const aclTensor *src, double factor, ogc_result *dst) {
    if (dst->dtype == ACL_DOUBLE && src->dtype != ACL_DOUBLE) {
        // a float64 gradient of a narrower dL/dy (the mixed layout): widen it first (exactly),
        // so that the factor and the sums are float64 as the framework's promotion makes them
        ogc_tmp wide = ogc_tmp_new(src->dims, src->ndim, ACL_DOUBLE);
        int st = ogc_muls(src, 1.0, wide.t);
        if (!st) st = ogc_sum_to(wide.t, factor, dst);
        ogc_tmp_free(&wide);
        return st;
    }
    int64_t dims[OG_MAX_DIMS], keep[OG_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < src->ndim; d++) {
        int td = dst->ndim - src->ndim + d;
        bool summed = td < 0 || (dst->dims[td] == 1 && src->dims[d] != 1);
        if (summed) dims[nd++] = d;
        keep[d] = summed ? 1 : src->dims[d];
    }
    aclTensor *out = ogc_result_tensor(dst);
    int st;
    if (nd == 0) { // nothing to sum: the same elements in dst's shape
        aclTensor *view = ogc_reshaped(out, src->dims, src->ndim);
        st = ogc_muls(src, factor, view);
        aclDestroyTensor(view);
    } else {
        // (float64 sums in float64, everything else in fp32)
        aclDataType sum_dt = src->dtype == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT;
        ogc_tmp sum = ogc_tmp_new(keep, src->ndim, sum_dt);
        aclIntArray *a = aclCreateIntArray(dims, (uint64_t)nd);
        uint64_t ws;
        aclOpExecutor *ex;
        st = aclnnReduceSumGetWorkspaceSize(src, a, true, sum_dt, sum.t, &ws, &ex);
        if (!st) st = ogc_launch(ws, ex, aclnnReduceSum);
        if (!st) {
            aclTensor *view = ogc_reshaped(sum.t, dst->dims, dst->ndim);
            st = ogc_muls(view, factor, out);
            aclDestroyTensor(view);
        }
        aclDestroyIntArray(a);
        ogc_tmp_free(&sum);
    }
    aclDestroyTensor(out);
    return st;
}
