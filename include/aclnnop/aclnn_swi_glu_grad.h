/* aclnnop/aclnn_swi_glu_grad.h - SwiGluGrad: the backward of aclnnSwiGlu.
 *
 * out (x's shape) = [yGrad * silu'(A) * B, yGrad * silu(A)] along dim; yGrad has x's shape with
 * dim halved; yGrad, x and out share one dtype (FLOAT, FLOAT16, BFLOAT16).
 */
#ifndef OPGRAD_ACLNN_SWI_GLU_GRAD_H
#define OPGRAD_ACLNN_SWI_GLU_GRAD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnSwiGluGradGetWorkspaceSize(const aclTensor *yGrad, const aclTensor *x,
                                                      int64_t dim, const aclTensor *out,
                                                      uint64_t *workspaceSize,
                                                      aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnSwiGluGrad(void *workspace, uint64_t workspaceSize,
                                      aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
