/* aclnnReduceSum: argument checks and a plan on the reduction engine (ops-math math/reduce_sum). */
#include <stdio.h>

#include "aclnnop/aclnn_reduce_sum.h"
#include "engine/reduce.h"
#include "ops/common/checks.h"
#include "runtime/error.h"
#include "tensor/dtype.h"

aclnnStatus aclnnReduceSumGetWorkspaceSize(const aclTensor *self, const aclIntArray *dims,
                                           bool keepDims, aclDataType dtype, aclTensor *out,
                                           uint64_t *workspaceSize, aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_ReduceSum;
    static const char *const names[] = {"self", "dims", "out"};
    const void *ptrs[3] = {self, dims, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 3, names, ptrs));
    OG_TRY(og_check_tensor_of(op, "self", self, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "out", out, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_live("aclnnReduceSumGetWorkspaceSize", "dims", dims, OG_OBJ_INT_ARRAY));
    if (dtype != ACL_DOUBLE) OG_TRY(og_check_dtype_arg(op, "dtype", dtype));
    if (out->dtype != dtype)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: out has dtype %s but dtype is %s; they must be equal",
                       op->name, og_dtype_name(out->dtype), og_dtype_name(dtype));
    // float64 sums float64 (the engine's double path): no cast on the way in or out
    if ((self->dtype == ACL_DOUBLE) != (dtype == ACL_DOUBLE))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: self has dtype %s and dtype is %s; opgrad sums a "
                       "float64 self into a float64 out only",
                       op->name, og_dtype_name(self->dtype), og_dtype_name(dtype));
    // dims: each in [-rank, rank - 1] (rank = max(self's rank, 1)), none twice; empty = all
    int rank = self->ndim > 0 ? self->ndim : 1;
    unsigned mask = 0;
    for (uint64_t i = 0; i < dims->size; i++) {
        int64_t d = dims->values[i];
        if (d < -rank || d >= rank)
            return og_fail(
                ACLNN_ERR_PARAM_INVALID,
                "%sGetWorkspaceSize: dims[%llu] = %lld is out of range: self has rank %d, "
                "so a dim must be in [%d, %d]",
                op->name, (unsigned long long)i, (long long)d, self->ndim, -rank, rank - 1);
        int pos = (int)(d < 0 ? d + rank : d);
        if ((mask >> pos) & 1u)
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: dim %d appears more than once in dims", op->name,
                           pos);
        mask |= 1u << pos;
    }
    if (dims->size == 0) mask = (1u << rank) - 1;
    // the reduced shape
    int64_t want[OG_MAX_DIMS];
    int nwant = 0;
    int64_t want_numel = 1;
    for (int d = 0; d < self->ndim; d++) {
        bool red = (mask >> d) & 1u;
        if (red && !keepDims) continue;
        want[nwant++] = red ? 1 : self->dims[d];
        want_numel *= red ? 1 : self->dims[d];
    }
    bool same = out->ndim == nwant;
    for (int d = 0; same && d < nwant; d++) same = out->dims[d] == want[d];
    if (!same && !(want_numel == 1 && out->numel == 1)) {
        char a[160], b[160];
        return og_fail(
            ACLNN_ERR_PARAM_INVALID,
            "%sGetWorkspaceSize: out has shape %s but summing self %s over the given dims "
            "%s gives %s",
            op->name, og_shape_str(out->dims, out->ndim, a, sizeof a),
            og_shape_str(self->dims, self->ndim, b, sizeof b),
            keepDims ? "(keepDims)" : "(no keepDims)",
            og_shape_str(want, nwant, (char[160]){0}, 160));
    }
    og_reduce_op r = {.nin = 1,
                      .in = {self},
                      .in_slot = {0},
                      .ndim = self->ndim,
                      .reduce_mask = self->ndim > 0 ? mask : 0,
                      .out = out,
                      .out_slot = 1,
                      .round_in = dtype != ACL_FLOAT && dtype != self->dtype ? dtype : ACL_FLOAT};
    for (int d = 0, od = 0; d < self->ndim; d++) {
        r.dims[d] = self->dims[d];
        bool red = (mask >> d) & 1u;
        r.out_dim[d] = !same ? -1 : red ? (keepDims ? od++ : -1) : od++;
    }
    const aclTensor *io[2] = {self, out};
    return og_reduce_plan_op(op, 1, &r, 2, 1, io, workspaceSize, executor);
}
