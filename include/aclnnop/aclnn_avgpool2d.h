/* aclnnop/aclnn_avgpool2d.h - 2-D average pooling.
 *
 * self: [N, C, H, W] or [C, H, W], FLOAT, FLOAT16 or BFLOAT16, any strides; kernelSize 1 or 2
 * entries > 0; strides 0 (= kernelSize), 1 or 2 entries > 0; paddings 1 or 2 entries in
 * [0, kernelSize / 2] (zeros); out: self's dtype, [N, C, Hout, Wout] with
 * Hout = floor_or_ceil((H + 2 pad - k) / s) + 1, less one in ceil mode when the last window would
 * start at or past H + pad. The divisor is divisorOverride when nonzero, else the window's size
 * clipped to [-pad, H + pad) with countIncludePad or to the input without (PyTorch's rule).
 * cubeMathType 0-3 is accepted; the CPU always computes in fp32. docs/ops/pool.md. */
#ifndef OPGRAD_ACLNN_AVGPOOL2D_H
#define OPGRAD_ACLNN_AVGPOOL2D_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnAvgPool2dGetWorkspaceSize(
    const aclTensor *self, const aclIntArray *kernelSize, const aclIntArray *strides,
    const aclIntArray *paddings, const bool ceilMode, const bool countIncludePad,
    const int64_t divisorOverride, const int8_t cubeMathType, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnAvgPool2d(void *workspace, uint64_t workspaceSize,
                                     aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
