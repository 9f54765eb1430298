/* Shared phase-1 helpers of BatchNorm and GroupNorm (host code). */
#ifndef OG_BATCH_NORM_COMMON_H
#define OG_BATCH_NORM_COMMON_H

#include "engine/program.h"
#include "ops/batch_norm/batch_norm_kernel.h"
#include "ops/ops.h"

/// A descriptor of t's first dim as [d0, 1, ..., 1] of `rank` dims (a per-channel vector
/// broadcast over the dims after the channel); the same data and offset.
aclTensor og_bn_view(const aclTensor *t, int rank);
/// A MAP step in fp32 (each output rounded once to its dtype).
void og_bn_map(og_prog *p, const og_ew_compute_fn *k, int nin, const aclTensor *const *in,
               const int *in_slot, int nout, const aclTensor *const *out, const int *out_slot,
               const og_bn_params *params);
/// A REDUCE step summing (or averaging) `in` (or map(in...)) over the index space `dims` (ndim
/// dims) down to out's shape (NumPy broadcasting).
void og_bn_reduce(og_prog *p, og_reduce_kind kind, const og_ew_compute_fn *map, int nin,
                  const aclTensor *const *in, const int *in_slot, const int64_t *dims, int ndim,
                  const aclTensor *out, int out_slot);
/// t is a tensor of shape [c] (161002 naming it and `what` it holds otherwise).
aclnnStatus og_bn_check_vector(const og_opdesc *op, const char *name, const aclTensor *t, int64_t c,
                               const char *what);
/// outputMask: a live aclBoolArray of 3 entries, copied to m.
aclnnStatus og_bn_check_mask(const og_opdesc *op, const aclBoolArray *mask, bool m[3]);
/// og_check_io_memory over the tensors given (NULL entries skipped; at most 8 of each).
aclnnStatus og_bn_check_memory(const og_opdesc *op, int nin, const aclTensor *const *in,
                               const char *const *in_names, int nout, const aclTensor *const *out,
                               const char *const *out_names);

#endif
