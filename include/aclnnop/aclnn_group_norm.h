/* aclnnop/aclnn_group_norm.h - GroupNorm (ops-nn norm/group_norm).
 *
 * self [N, C, *] with HxW = the product of the spatial dims; the C channels form `group` groups
 * of C / group channels. Per (n, g), over the C/group * HxW values:
 *   meanOut[n, g] = mean, rstdOut[n, g] = 1 / sqrt(var + eps) (var biased),
 *   out = (self - mean) * rstd * gamma[c] + beta[c]   (gamma NULL = 1, beta NULL = 0).
 * meanOut / rstdOut are [N, group]. Statistics in fp32 (deterministic). */
#ifndef OPGRAD_ACLNN_GROUP_NORM_H
#define OPGRAD_ACLNN_GROUP_NORM_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnGroupNormGetWorkspaceSize(const aclTensor *self, const aclTensor *gamma,
                                                     const aclTensor *beta, int64_t N, int64_t C,
                                                     int64_t HxW, int64_t group, double eps,
                                                     aclTensor *out, aclTensor *meanOut,
                                                     aclTensor *rstdOut, uint64_t *workspaceSize,
                                                     aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnGroupNorm(void *workspace, uint64_t workspaceSize,
                                     aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
