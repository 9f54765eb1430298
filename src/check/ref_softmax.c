/* Float64 references of softmax and log-softmax (see ref_softmax.h). */
#include "check/ref_softmax.h"

#include <math.h>

/// The max of the row and its first index; false (and a NaN row written to y and mag) where the
/// result is NaN: a NaN or a +inf in x, or every value -inf.
static int row_max(size_t n, const double *x, double *y, double *mag, long double *m, size_t *k) {
    int nan_row = 0;
    *m = -INFINITY;
    *k = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i]) || x[i] == INFINITY) nan_row = 1;
        if (x[i] > *m) *m = x[i], *k = i;
    }
    if (*m == -INFINITY) nan_row = 1;
    if (nan_row)
        for (size_t i = 0; i < n; i++) y[i] = mag[i] = NAN;
    return !nan_row;
}

void og_ref_softmax(size_t n, const double *x, double *y, double *mag) {
    long double m, s = 0;
    size_t k;
    if (!row_max(n, x, y, mag, &m, &k)) return;
    for (size_t j = 0; j < n; j++) s += expl((long double)x[j] - m); // -inf: 0
    for (size_t i = 0; i < n; i++) y[i] = mag[i] = (double)(expl((long double)x[i] - m) / s);
}

void og_ref_log_softmax(size_t n, const double *x, double *y, double *mag) {
    long double m, r = 0;
    size_t k;
    if (!row_max(n, x, y, mag, &m, &k)) return;
    for (size_t j = 0; j < n; j++)
        if (j != k) r += expl((long double)x[j] - m);
    long double lse = log1pl(r); // log S, S = 1 + r: no absolute error of 1 ulp of 1
    for (size_t i = 0; i < n; i++) {
        long double d = (long double)x[i] - m;
        y[i] = (double)(d - lse);
        mag[i] = (double)(fabsl(d) + lse);
    }
}

void og_ref_softmax_grad(size_t n, const double *g, const double *y, double *dx, double *mag) {
    long double dot = 0, abs_dot = 0;
    for (size_t j = 0; j < n; j++) {
        long double p = (long double)g[j] * y[j];
        dot += p;
        abs_dot += fabsl(p);
    }
    for (size_t i = 0; i < n; i++) {
        dx[i] = (double)((long double)y[i] * ((long double)g[i] - dot));
        mag[i] = (double)(fabsl((long double)y[i]) * (fabsl((long double)g[i]) + abs_dot));
    }
}

void og_ref_log_softmax_grad(size_t n, const double *g, const double *y, double *dx, double *mag) {
    long double sg = 0, abs_sg = 0;
    for (size_t j = 0; j < n; j++) {
        sg += g[j];
        abs_sg += fabsl((long double)g[j]);
    }
    for (size_t i = 0; i < n; i++) {
        long double e = expl((long double)y[i]);
        dx[i] = (double)((long double)g[i] - e * sg);
        mag[i] = (double)(fabsl((long double)g[i]) + e * abs_sg);
    }
}
