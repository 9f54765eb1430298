/* The float64 side of dropout's checks: the mask bit of one element from the documented
 * definition (docs/ops/dropout.md), written apart from the kernels (dropout_simd.c) in plain
 * scalar C: Philox4x32-10 over explicit 4-word counters and 2-word keys, as published (Salmon et
 * al., SC 2011; Random123's known-answer vectors are checked in tests/api/test_api_dropout.c). */
#ifndef OG_REF_DROPOUT_H
#define OG_REF_DROPOUT_H

#include <stdbool.h>
#include <stdint.h>

/// Philox4x32-10: out = the block function of counter ctr under key.
void og_ref_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

/// Whether aclnnDropout(p, train = true, seed, offset) keeps element i (0 < p < 1): the word
/// i mod 4 of the block at counter (offset + floor(i / 4)) mod 2^64 under key seed, as a uniform
/// u = floor(word / 2^8) / 2^24 in [0, 1), below 1 - p.
bool og_ref_dropout_keep(int64_t seed, int64_t offset, double p, uint64_t i);

#endif
