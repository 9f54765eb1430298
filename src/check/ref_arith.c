#include "check/ref_arith.h"

#include <math.h>
#include <string.h>

// (one rounding, as the kernels' fma: exact to float64's last bit even where the sum cancels)
double og_ref_add(double self, double other, double alpha) { return fma(alpha, other, self); }

double og_ref_mul(double self, double other) { return self * other; }

double og_ref_fused_add_scale(double x, double bias, double scale) { return (x + bias) * scale; }

bool og_ref_reduce_mask(const ogc_shape *in, const int64_t *dims, int n, unsigned *mask) {
    int rank = in->ndim > 0 ? in->ndim : 1;
    unsigned m = 0;
    for (int i = 0; i < n; i++) {
        int64_t d = dims[i];
        if (d < -rank || d >= rank) return false;
        int pos = (int)(d < 0 ? d + rank : d);
        if ((m >> pos) & 1u) return false;
        m |= 1u << pos;
    }
    if (n == 0) m = (1u << rank) - 1;
    *mask = in->ndim > 0 ? m : 0;
    return true;
}

ogc_shape og_ref_reduce_shape(const ogc_shape *in, unsigned mask, bool keepdim) {
    ogc_shape out = {0};
    for (int d = 0; d < in->ndim; d++) {
        bool red = (mask >> d) & 1u;
        if (red && !keepdim) continue;
        out.dims[out.ndim++] = red ? 1 : in->dims[d];
    }
    return out;
}

// Flat output index (row-major over the kept dims) of input element i.
static int64_t out_index(const ogc_shape *in, unsigned mask, int64_t i) {
    int64_t o = 0, mul = 1;
    for (int d = in->ndim - 1; d >= 0; d--) {
        int64_t idx = i % in->dims[d];
        i /= in->dims[d];
        if ((mask >> d) & 1u) continue;
        o += idx * mul;
        mul *= in->dims[d];
    }
    return o;
}

static int64_t numel(const ogc_shape *s) {
    int64_t n = 1;
    for (int d = 0; d < s->ndim; d++) n *= s->dims[d];
    return n;
}

void og_ref_reduce_sum(const ogc_shape *in, const double *x, unsigned mask, double *y,
                       double *abs) {
    ogc_shape out = og_ref_reduce_shape(in, mask, false);
    int64_t m = numel(&out), n = numel(in);
    for (int64_t o = 0; o < m; o++) y[o] = 0, abs[o] = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t o = out_index(in, mask, i);
        y[o] += x[i];
        abs[o] += x[i] < 0 ? -x[i] : x[i];
    }
}

void og_ref_reduce_sum_grad(const ogc_shape *in, unsigned mask, const double *gy, double *gx) {
    int64_t n = numel(in);
    for (int64_t i = 0; i < n; i++) gx[i] = gy[out_index(in, mask, i)];
}
