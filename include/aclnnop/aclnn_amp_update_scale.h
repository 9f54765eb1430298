/* aclnnop/aclnn_amp_update_scale.h - aclnnAmpUpdateScale: the dynamic loss scale's update
 * (ops-math), out of place: foundInf != 0                scale * backoffFactor, tracker 0
 *   growthTracker + 1 == interval scale * growthFactor when that is finite in the scale's dtype
 *                                (else the scale unchanged), tracker 0
 *   otherwise                    the scale unchanged, tracker + 1
 * currentScale, foundInf, updatedScale: float32, float16 or bfloat16, one dtype, one element
 * ([1]); growthTracker, updatedGrowthTracker: int32 [1]; growthInterval in [1, 2^31 - 1]
 * (561002 otherwise, as for a shape that is not [1]). */
#ifndef OPGRAD_ACLNN_AMP_UPDATE_SCALE_H
#define OPGRAD_ACLNN_AMP_UPDATE_SCALE_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnAmpUpdateScaleGetWorkspaceSize(
    const aclTensor *currentScale, const aclTensor *growthTracker, const aclTensor *foundInf,
    double growthFactor, double backoffFactor, int64_t growthInterval,
    const aclTensor *updatedScale, const aclTensor *updatedGrowthTracker, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnAmpUpdateScale(void *workspace, uint64_t workspaceSize,
                                          aclOpExecutor *executor, const aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
