/* BatchNorm / GroupNorm per-channel coefficient kernels (see batch_norm_kernel.h): plain C in
 * double, rounded once to fp32, the same function at every ISA level (they see C or N * group
 * values, so vectors would buy nothing, and one function cannot differ across levels). */
#include <math.h>

#include "engine/simd/map64.h"
#include "ops/batch_norm/batch_norm_kernel.h"
#include "ops/batch_norm/batch_norm_rows.h"

static void bn_rstd(size_t n, const float *const *in, float *const *out, const void *p) {
    const og_bn_params *q = p;
    for (size_t i = 0; i < n; i++) out[0][i] = (float)(1.0 / sqrt((double)in[0][i] + q->eps));
}

static void bn_running(size_t n, const float *const *in, float *const *out, const void *p) {
    const og_bn_params *q = p;
    for (size_t i = 0; i < n; i++)
        out[0][i] =
            (float)((1.0 - q->momentum) * in[0][i] + q->momentum * (q->factor * (double)in[1][i]));
}

static void bn_copy(size_t n, const float *const *in, float *const *out, const void *p) {
    (void)p;
    for (size_t i = 0; i < n; i++) out[0][i] = in[0][i];
}

static void bn_bc(size_t n, const float *const *in, float *const *out, const void *p) {
    const og_bn_params *q = p;
    for (size_t i = 0; i < n; i++) {
        double a = in[0][i], r = in[1][i], s1 = in[2][i], s2 = in[3][i];
        out[0][i] = (float)(-a * r * r * s2 * q->inv_k);
        out[1][i] = (float)(-a * s1 * q->inv_k);
    }
}

#define ALL_LEVELS(f)                                                                              \
    {                                                                                              \
        [OPGRAD_ISA_SCALAR] = f, [OPGRAD_ISA_AVX2] = f, [OPGRAD_ISA_AVX512] = f,                   \
        [OPGRAD_ISA_AVX512_BF16] = f, [OPGRAD_ISA_AVX512_FP16] = f, [OPGRAD_ISA_AMX] = f,          \
    }
_Static_assert(OPGRAD_ISA_COUNT == 6, "a new ISA level needs its entry in ALL_LEVELS");

const og_ew_compute_fn og_bn_rstd_kernels[OPGRAD_ISA_COUNT] = ALL_LEVELS(bn_rstd);
const og_ew_compute_fn og_bn_running_kernels[OPGRAD_ISA_COUNT] = ALL_LEVELS(bn_running);
const og_ew_compute_fn og_bn_copy_kernels[OPGRAD_ISA_COUNT] = ALL_LEVELS(bn_copy);
const og_ew_compute_fn og_bn_bc_kernels[OPGRAD_ISA_COUNT] = ALL_LEVELS(bn_bc);

// float64: the same formulas on double operands (nothing rounded but the double arithmetic).
static void bn_rstd64(size_t n, const double *const *in, double *const *out, const void *p) {
    const og_bn_params *q = p;
    for (size_t i = 0; i < n; i++) out[0][i] = 1.0 / sqrt(in[0][i] + q->eps);
}

static void bn_running64(size_t n, const double *const *in, double *const *out, const void *p) {
    const og_bn_params *q = p;
    for (size_t i = 0; i < n; i++)
        out[0][i] = (1.0 - q->momentum) * in[0][i] + q->momentum * (q->factor * in[1][i]);
}

static void bn_copy64(size_t n, const double *const *in, double *const *out, const void *p) {
    (void)p;
    for (size_t i = 0; i < n; i++) out[0][i] = in[0][i];
}

static void bn_bc64(size_t n, const double *const *in, double *const *out, const void *p) {
    const og_bn_params *q = p;
    for (size_t i = 0; i < n; i++) {
        double a = in[0][i], r = in[1][i], s1 = in[2][i], s2 = in[3][i];
        out[0][i] = -a * r * r * s2 * q->inv_k;
        out[1][i] = -a * s1 * q->inv_k;
    }
}

const og_ew_compute64_fn og_bn_rstd_kernels64[OPGRAD_ISA_COUNT] = ALL_LEVELS(bn_rstd64);
const og_ew_compute64_fn og_bn_running_kernels64[OPGRAD_ISA_COUNT] = ALL_LEVELS(bn_running64);
const og_ew_compute64_fn og_bn_copy_kernels64[OPGRAD_ISA_COUNT] = ALL_LEVELS(bn_copy64);
const og_ew_compute64_fn og_bn_bc_kernels64[OPGRAD_ISA_COUNT] = ALL_LEVELS(bn_bc64);

// Per channel: the row statistics (mean_r, M2_r) of its N rows of S values each, combined in
// increasing n by Chan et al.'s pairwise update in double: with (k, mean, M2) so far and a row
// (S, m, q): delta = m - mean, mean += delta S / (k + S), M2 += q + delta^2 k S / (k + S).
// stats = {mean, M2 / (N S)} (the biased variance), each rounded once.
static void bn_row_chan(size_t n, const float *const *in, float *const *out, const void *p,
                        float *stats) {
    (void)out;
    const og_bn_row_params *q = p;
    double k = 0.0, mean = 0.0, m2 = 0.0;
    for (size_t r = 0; r < n; r++) {
        double delta = (double)in[0][r] - mean, k2 = k + q->S;
        mean += delta * (q->S / k2);
        m2 += (double)in[1][r] + delta * delta * (k * q->S / k2);
        k = k2;
    }
    stats[0] = (float)mean;
    stats[1] = (float)(k > 0.0 ? m2 / k : 0.0);
}

// Per channel, in increasing n: sum s1 and sum (s2 + (x0 - mean) s1) in double, rounded once
// (in[3] is the channel's mean, the same value at every position).
static void bn_row_dcomb(size_t n, const float *const *in, float *const *out, const void *p,
                         float *stats) {
    (void)out, (void)p;
    double sdy = 0.0, sdx = 0.0;
    for (size_t r = 0; r < n; r++) {
        double s1 = in[0][r];
        sdy += s1;
        sdx += (double)in[1][r] + ((double)in[2][r] - (double)in[3][r]) * s1;
    }
    stats[0] = (float)sdy;
    stats[1] = (float)sdx;
}

const og_row_fn og_bn_row_chan_kernels[OPGRAD_ISA_COUNT] = ALL_LEVELS(bn_row_chan);
const og_row_fn og_bn_row_dcomb_kernels[OPGRAD_ISA_COUNT] = ALL_LEVELS(bn_row_dcomb);

// float64: Chan's update as bn_row_chan (its M2 compensated), nothing rounded.
static void bn_row_chan64(size_t n, const double *const *in, double *const *out, const void *p,
                          double *stats) {
    (void)out;
    const og_bn_row_params *q = p;
    double k = 0.0, mean = 0.0;
    og_ksum m2 = {0, 0};
    for (size_t r = 0; r < n; r++) {
        double delta = in[0][r] - mean, k2 = k + q->S;
        mean += delta * (q->S / k2);
        og_ksum_add(&m2, in[1][r]);
        og_ksum_add(&m2, delta * delta * (k * q->S / k2));
        k = k2;
    }
    stats[0] = mean;
    stats[1] = k > 0.0 ? og_ksum_value(&m2) / k : 0.0;
}

// float64: bn_row_dcomb's sums, compensated.
static void bn_row_dcomb64(size_t n, const double *const *in, double *const *out, const void *p,
                           double *stats) {
    (void)out, (void)p;
    og_ksum sdy = {0, 0}, sdx = {0, 0};
    for (size_t r = 0; r < n; r++) {
        og_ksum_add(&sdy, in[0][r]);
        og_ksum_add(&sdx, in[1][r]);
        og_ksum_add(&sdx, (in[2][r] - in[3][r]) * in[0][r]);
    }
    stats[0] = og_ksum_value(&sdy);
    stats[1] = og_ksum_value(&sdx);
}

const og_row64_fn og_bn_row_chan_kernels64[OPGRAD_ISA_COUNT] = ALL_LEVELS(bn_row_chan64);
const og_row64_fn og_bn_row_dcomb_kernels64[OPGRAD_ISA_COUNT] = ALL_LEVELS(bn_row_dcomb64);

const og_row_fn og_bn_row_stat_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_bn_row_stat);
const og_row_fn og_bn_row_dsum_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_bn_row_dsum);
const og_row_fn og_bn_row_norm_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_bn_row_norm);
const og_row_fn og_bn_row_dx_kernels[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_bn_row_dx);
const og_row16_fn og_bn_row_stat_kernels16[OPGRAD_ISA_COUNT][2] = OG_ISA_TABLE16(og_bn_row_stat);
const og_row16_fn og_bn_row_dsum_kernels16[OPGRAD_ISA_COUNT][2] = OG_ISA_TABLE16(og_bn_row_dsum);
const og_row16_fn og_bn_row_norm_kernels16[OPGRAD_ISA_COUNT][2] = OG_ISA_TABLE16(og_bn_row_norm);
const og_row16_fn og_bn_row_dx_kernels16[OPGRAD_ISA_COUNT][2] = OG_ISA_TABLE16(og_bn_row_dx);
const og_row64_fn og_bn_row_stat_kernels64[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_bn_row_stat_f64);
const og_row64_fn og_bn_row_dsum_kernels64[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_bn_row_dsum_f64);
const og_row64_fn og_bn_row_norm_kernels64[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_bn_row_norm_f64);
const og_row64_fn og_bn_row_dx_kernels64[OPGRAD_ISA_COUNT] = OG_ISA_TABLE(og_bn_row_dx_f64);
