/* aclnnop/aclnn_max_pool2d_with_indices.h - 2-D max pooling with the argmax of each window.
 *
 * self: [N, C, H, W] or [C, H, W], FLOAT, FLOAT16 or BFLOAT16, any strides; kernelSize 1 or 2
 * entries > 0; stride 0 (= kernelSize), 1 or 2 entries > 0; padding 1 or 2 entries in
 * [0, kernelSize / 2] (padded positions are -inf); dilation 1 or 2 entries > 0. out: self's dtype,
 * [N, C, Hout, Wout] with Hout = floor_or_ceil((H + 2 pad - dil (k - 1) - 1) / s) + 1, less one
 * in ceil mode when the last window would start at or past H + pad. indices: INT32 or INT64,
 * out's shape, the flat position h * W + w of the maximum in its input plane (the first maximum in
 * window order; NaN counts as the maximum). docs/ops/pool.md. */
#ifndef OPGRAD_ACLNN_MAX_POOL2D_WITH_INDICES_H
#define OPGRAD_ACLNN_MAX_POOL2D_WITH_INDICES_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnMaxPool2dWithIndicesGetWorkspaceSize(
    const aclTensor *self, const aclIntArray *kernelSize, const aclIntArray *stride,
    const aclIntArray *padding, const aclIntArray *dilation, bool ceilMode, aclTensor *out,
    aclTensor *indices, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnMaxPool2dWithIndices(void *workspace, uint64_t workspaceSize,
                                                aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
