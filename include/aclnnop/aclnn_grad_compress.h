/* aclnnop/aclnn_grad_compress.h - gradient compression for data-parallel training.
 *
 * AN OPGRAD EXTENSION: these operators do not exist in CANN / ops-nn. They follow the aclnn
 * conventions (two-phase call, aclnnStatus, aclGetRecentErrMsg on bad input) so that a training
 * loop calls them like any other aclnn operator. docs/ops/compress.md has the full definitions.
 *
 * Every compressor works on y = x + residual (fp32; x FLOAT, FLOAT16 or BFLOAT16, residual FLOAT
 * of x's shape, optional: NULL = no error feedback, y = x) and, when a residual is given, writes
 * back what it did not send (error feedback): residual <- y - sent.
 *
 * aclnnGradCompressCast: out (FLOAT16 or BFLOAT16, x's shape) = y rounded to nearest even, or
 *   with stochastic = true rounded up (away from zero) with probability
 *   (|y| - |lo|) / (|hi| - |lo|) between the two neighbours lo, hi of y in out's format. The
 *   random number of element i is a function of (seed, offset + i) alone (SplitMix64 finaliser),
 *   the same on any thread count. residual <- y - out, exact in fp32 while out is finite.
 * aclnnGradCompressTopK: k = valuesOut's element count (0 <= k <= x's). The k elements of
 *   largest |y| (ties: the lower index first; NaN counts as larger than inf), in increasing index
 *   order: valuesOut (1-D [k], FLOAT, FLOAT16 or BFLOAT16) their y, indicesOut (1-D [k], INT64)
 *   their flat indices. residual <- y with the sent entries zeroed (exact).
 * aclnnGradDecompressTopK: out (any shape, n elements, floating) = 0, then
 *   out[indices[j]] += values[j] for j = 0, 1, ... in order (fp32 sums, rounded once): the
 *   concatenated (values, indices) of several workers sum. values and indices 1-D of one length;
 *   an index outside [0, n) is skipped.
 * aclnnGradCompressSign: scaleOut (FLOAT, one element) = mean |y| (fixed-order sum in double);
 *   bitsOut (UINT8, 1-D, ceil(n / 8) bytes): bit i (byte i / 8, least significant first) is 1
 *   where y >= 0 (+0 and -0 included), 0 where y < 0 or NaN; bits past n are 0.
 *   residual <- y - (bit ? scale : -scale) (one fp32 rounding).
 * aclnnGradDecompressSign: W workers' messages: bits (UINT8, 1-D, W * ceil(n / 8) bytes, worker w
 *   at byte w * ceil(n / 8)), scale (FLOAT, 1-D [W]); out (n elements, floating) = the sum over
 *   w = 0 .. W-1 in order of (bit ? scale[w] : -scale[w]) (fp32, rounded once).
 * aclnnGradOrthonormalize: PowerSGD's step on P (FLOAT, 2-D [n, r], any strides, in place):
 * modified Gram-Schmidt of its columns in order (dot products and norms summed in double, updates
 * in fp32); a column whose remaining norm is <= eps (>= 0) becomes 0.
 *
 * All of them: any strides, empty tensors are a no-op (scaleOut = 0), results bitwise independent
 * of the thread count and the ISA level. */
#ifndef OPGRAD_ACLNN_GRAD_COMPRESS_H
#define OPGRAD_ACLNN_GRAD_COMPRESS_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnGradCompressCastGetWorkspaceSize(const aclTensor *x,
                                                            aclTensor *residualRef, bool stochastic,
                                                            int64_t seed, int64_t offset,
                                                            aclTensor *out, uint64_t *workspaceSize,
                                                            aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnGradCompressCast(void *workspace, uint64_t workspaceSize,
                                            aclOpExecutor *executor, aclrtStream stream);

ACLNN_API aclnnStatus aclnnGradCompressTopKGetWorkspaceSize(
    const aclTensor *x, aclTensor *residualRef, aclTensor *valuesOut, aclTensor *indicesOut,
    uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnGradCompressTopK(void *workspace, uint64_t workspaceSize,
                                            aclOpExecutor *executor, aclrtStream stream);

ACLNN_API aclnnStatus aclnnGradDecompressTopKGetWorkspaceSize(const aclTensor *values,
                                                              const aclTensor *indices,
                                                              aclTensor *out,
                                                              uint64_t *workspaceSize,
                                                              aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnGradDecompressTopK(void *workspace, uint64_t workspaceSize,
                                              aclOpExecutor *executor, aclrtStream stream);

ACLNN_API aclnnStatus aclnnGradCompressSignGetWorkspaceSize(const aclTensor *x,
                                                            aclTensor *residualRef,
                                                            aclTensor *bitsOut, aclTensor *scaleOut,
                                                            uint64_t *workspaceSize,
                                                            aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnGradCompressSign(void *workspace, uint64_t workspaceSize,
                                            aclOpExecutor *executor, aclrtStream stream);

ACLNN_API aclnnStatus aclnnGradDecompressSignGetWorkspaceSize(const aclTensor *bits,
                                                              const aclTensor *scale,
                                                              aclTensor *out,
                                                              uint64_t *workspaceSize,
                                                              aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnGradDecompressSign(void *workspace, uint64_t workspaceSize,
                                              aclOpExecutor *executor, aclrtStream stream);

ACLNN_API aclnnStatus aclnnGradOrthonormalizeGetWorkspaceSize(aclTensor *pRef, double eps,
                                                              uint64_t *workspaceSize,
                                                              aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnGradOrthonormalize(void *workspace, uint64_t workspaceSize,
                                              aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
