/* Shared phase-1 helpers of BatchNorm and GroupNorm (host code). */
#ifndef OG_BATCH_NORM_COMMON_H
#define OG_BATCH_NORM_COMMON_H

#include "engine/program.h"
#include "ops/batch_norm/batch_norm_kernel.h"
#include "ops/batch_norm/batch_norm_rows.h"
#include "ops/ops.h"

/// A descriptor of t's first dim as [d0, 1, ..., 1] of `rank` dims (a per-channel vector
/// broadcast over the dims after the channel); the same data and offset.
aclTensor og_bn_view(const aclTensor *t, int rank);
/// A MAP step in fp32 (each output rounded once to its dtype); in float64 (k64) when some
/// operand is DOUBLE (a float64 operation's temporaries are).
void og_bn_map(og_prog *p, const og_ew_compute_fn *k, const og_ew_compute64_fn *k64, int nin,
               const aclTensor *const *in, const int *in_slot, int nout,
               const aclTensor *const *out, const int *out_slot, const og_bn_params *params);
/// A REDUCE step summing (or averaging) `in` (or map(in...), map64 in float64) over the index
/// space `dims` (ndim dims) down to out's shape (NumPy broadcasting); the reduction engine sums
/// in double when some input is DOUBLE.
void og_bn_reduce(og_prog *p, og_reduce_kind kind, const og_ew_compute_fn *map,
                  const og_ew_compute64_fn *map64, int nin, const aclTensor *const *in,
                  const int *in_slot, const int64_t *dims, int ndim, const aclTensor *out,
                  int out_slot);
/// A ROWS step of the row engine along the last of `ndim` dims (out NULL: none; stats read
/// before the kernel with stats_in, written after it otherwise); float64 (k64) when some operand
/// is DOUBLE (a float64 operation's temporaries are), as og_bn_map; the 16-bit entry points k16
/// (optional) when every row operand is of one 16-bit dtype.
void og_bn_rows(og_prog *p, const og_row_fn *k, const og_row16_fn (*k16)[2], const og_row64_fn *k64,
                const int64_t *dims, int ndim, int nin, const aclTensor *const *in,
                const int *in_slot, const aclTensor *out, int out_slot, int nstats,
                const aclTensor *const *st, const int *st_slot, bool stats_in,
                const og_bn_row_params *prm);
/// The float64 rule (opgrad's extension; ops-nn lists no DOUBLE here): a DOUBLE x makes the call
/// float64 (the other tensors of any floating dtype, promoted); another tensor t[k] may be DOUBLE
/// only with a DOUBLE x (161002 naming it otherwise).
aclnnStatus og_bn_check_f64(const og_opdesc *op, const char *x_name, const aclTensor *x, int n,
                            const char *const *names, const aclTensor *const *t);
/// A float64 backward's gradient: dy itself when DOUBLE; else a MAP widening it (exactly) into a
/// contiguous DOUBLE temporary of its shape, returned with *slot set to it, so that the sums over
/// dy alone are taken in double too (the reduction engine sums in double for a DOUBLE input).
const aclTensor *og_bn_widen(og_prog *p, const aclTensor *dy, int *slot);
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
