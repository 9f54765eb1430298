/* Float64 references of softmax and log-softmax over one contiguous row of n values, and of their
 * gradients, written apart from the kernels: plain long double arithmetic and libm (expl, log1pl),
 * rounded to double once at the end. Each also writes mag[i], the magnitude bound of the
 * checker's tolerance c ulp(ref) + c 2^-24 sqrt(n) mag (n terms): the same expression with every
 * term made non-negative, so that the rounding errors of an implementation that sums the row in
 * float (about 2^-24 of the sum of the magnitudes of its terms, sqrt(n) for the sum) are within
 * it, and a cancellation is judged against the size of what cancelled.
 *
 * A row with a NaN or a +inf, or with every value -inf, has a NaN result (as in PyTorch: x - max
 * is NaN somewhere, and the sum spreads it). A row of n = 0 values writes nothing. */
#ifndef OG_REF_SOFTMAX_H
#define OG_REF_SOFTMAX_H

#include <stddef.h>

/// y_i = e^(x_i - m) / S, S = sum_j e^(x_j - m), m = max x.
/// mag_i = y_i: every term is non-negative (softmax never cancels).
void og_ref_softmax(size_t n, const double *x, double *y, double *mag);

/// y_i = (x_i - m) - log S, with log S = log1p(sum over j != k of e^(x_j - m)), k the first
/// index of the max (exact even where one value dominates and S = 1 + tiny).
/// mag_i = |x_i - m| + |log S| (= |y_i|: both terms are <= 0). An implementation that takes
/// x - m exactly and log S to ~2^-24 relative is within it; one that rounds S = 1 + tiny to float
/// (log S = 0) is not, and should not be.
void og_ref_log_softmax(size_t n, const double *x, double *y, double *mag);

/// dx_i = y_i (g_i - sum_j g_j y_j), y the softmax output.
/// mag_i = |y_i| (|g_i| + sum_j |g_j y_j|).
void og_ref_softmax_grad(size_t n, const double *g, const double *y, double *dx, double *mag);

/// dx_i = g_i - e^(y_i) sum_j g_j, y the log-softmax output.
/// mag_i = |g_i| + e^(y_i) sum_j |g_j|.
void og_ref_log_softmax_grad(size_t n, const double *g, const double *y, double *dx, double *mag);

#endif
