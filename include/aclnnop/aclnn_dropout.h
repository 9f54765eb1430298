/* aclnnop/aclnn_dropout.h - Dropout: out = input * mask / (1 - p), with a random bit mask.
 *
 * input, out: FLOAT, FLOAT16, BFLOAT16 (computed in fp32, rounded to input's dtype, then cast to
 * out's), the same shape, 0-8 dims, any strides. maskOut: UINT8, 1-D, align(numel, 128) / 8
 * bytes: bit i (byte i / 8, least significant bit first) is 1 where element i is kept; the bits
 * past numel are 0. p in [0, 1]. train = false or p = 0: out = input, maskOut untouched; p = 1:
 * out = 0, maskOut untouched (aclnn's rules).
 *
 * The mask is a function of (seed, offset, i) alone, the same on any thread count and CPU:
 * Philox4x32-10 with key (low, high 32 bits of seed) and counter (low, high 32 bits of
 * offset + i / 4 mod 2^64, 0, 0) gives four 32-bit words; element i takes word i % 4 and is kept
 * iff (word >> 8) < ceil((1 - p) 2^24). docs/ops/dropout.md spells it out. Empty tensors are a
 * no-op. */
#ifndef OPGRAD_ACLNN_DROPOUT_H
#define OPGRAD_ACLNN_DROPOUT_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnDropoutGetWorkspaceSize(const aclTensor *input, double p, bool train,
                                                   int64_t seed, int64_t offset, aclTensor *out,
                                                   aclTensor *maskOut, uint64_t *workspaceSize,
                                                   aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnDropout(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                   aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
