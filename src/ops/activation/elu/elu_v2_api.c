/* aclnnEluV2: ops-nn's experimental elu_v2 (experimental/activation/elu_v2, docs and op_api):
 * aclnnElu's formula and parameters, with out of self's dtype and shape exactly (no cast on the
 * way out). The Elu forward kernels run it. */
#include "aclnnop/aclnn_elu_v2.h"
#include "ops/activation/elu/elu_kernel.h"
#include "ops/common/checks.h"

aclnnStatus aclnnEluV2GetWorkspaceSize(const aclTensor *self, const aclScalar *alpha,
                                       const aclScalar *scale, const aclScalar *inputScale,
                                       aclTensor *out, uint64_t *workspaceSize,
                                       aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_EluV2;
    static const char *const names[5] = {"self", "alpha", "scale", "inputScale", "out"};
    const void *ptrs[5] = {self, alpha, scale, inputScale, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 5, names, ptrs));
    float v[3] = {0, 0, 0};
    OG_TRY(og_check_scalar(op, "alpha", alpha, &v[0]));
    OG_TRY(og_check_scalar(op, "scale", scale, &v[1]));
    OG_TRY(og_check_scalar(op, "inputScale", inputScale, &v[2]));
    og_elu_params p = og_elu_make_params(v[0], v[1], v[2]);
    static const char *const tnames[2] = {"self", "out"};
    const aclTensor *outs[1] = {out};
    return og_plan_forward(op, OG_EW_KERNEL_HEAVY(elu_fwd), self, 1, outs, tnames,
                           OG_OUT_SAME_DTYPE, &p, sizeof p, workspaceSize, executor);
}
