/* Softmax and log-softmax row kernels, written once against vec.h and compiled per ISA.
 *
 * Bitwise identity across ISAs. Every operation is an IEEE operation of vec.h (fma written out,
 * -ffp-contract=off), and every sum is taken in one fixed order whatever VLEN is: 16 lanes,
 * element i added to lane i % 16 (a group of 16 elements is one AVX-512 vector, two AVX2 vectors
 * or 16 scalars), partial sums flushed to double lanes after a fixed number of groups counted
 * from the row's start, a tail padded to a whole group with values that add exact zeros, then
 * the lanes by the tree ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)) + (the same over
 * l8..l15). The max needs no order (it is exact; -0 is turned into +0). Passes run on whole
 * vectors in place and on the tail through a padded stack copy, so nothing is read or written
 * past n, and out may alias in (every pass reads element i before it writes element i).
 *
 * softmax_fwd (3 passes: max; exp + store + sum; scale):
 *   m = max x (a NaN is dropped from m, then gives a NaN e, so the whole row is NaN).
 *   x - m = d + lo exactly (TwoSum), and e = e^(d + lo) with lo added to the reduced argument
 *   (as og_vexp_split2 does): rounding x - m would cost |x - m| 2^-24 relative, 40 ulp at
 *   x - m = -80. e is stored into y; s = sum e: float lanes over 2 groups, then double lanes
 *   (a float sum adds up to k 2^-24 over k terms per lane: 10 ulp at n = 100000; double lanes
 *   for every value cost a third of the pass; 2 groups keep 1.8 ulp, 4 groups gave 2.1, 8 gave
 *   4.0 on the tests' rows). y = e / s by a corrected product (softmax_scale): within 0.5 ulp of
 *   e / s, as a division would be. Error: e within 1 ulp (its rounding and the polynomial's),
 *   s within ~2^-24 relative, the quotient 0.5 ulp: measured max 1.81 ulp.
 *   Special rows: a +inf gives inf - inf = NaN, all -inf gives -inf - -inf = NaN, n = 1 gives 1.
 * log_softmax_fwd (3 passes: max; exp + sum; y):
 *   y = (x - m) - L with L = log(s), both terms <= 0: no cancellation, |y| = |x - m| + L.
 *   L is formed once per row from the sum split at the top: c = the number of x == m (each has
 *   e = 1 exactly) and r = the sum of every other e (as softmax's s), L = log1p((c - 1) + r) in
 *   double (the one libm call, the same on every ISA). A row with one dominant value has
 *   s = 1 + r with r tiny: log(s) would lose r (a float s rounds it away: y = 0 where it is -r;
 *   a double s keeps r only to 2^-53 absolute), log1p(r) keeps r's relative error.
 *   L = hi + lo as a float pair, and y = (d - hi) + (lo_x - lo) with d + lo_x = x - m exactly
 *   (TwoSum again). Error: L within ~1.4 2^-24 L (the e's, relative to r; log1p adds 2^-52),
 *   d - hi rounded (0.5 ulp of y, as |d - hi| ~ |y|), lo_x - lo (tiny) within 2^-24 of itself,
 *   the final sum 0.5 ulp: within 1 ulp + 1.4 2^-24 L <= 2.4 ulp of y (L <= |y|); measured
 *   max 1.38 ulp. x = -inf (or x - m overflowing) gives d = -inf and lo_x = NaN: lo_x is clamped
 *   to -FLT_MAX, so y = -inf (NaN in a NaN row, where L is NaN).
 * softmax_bwd (2 passes): dot = sum g y, fma into float lanes over 16 groups, then double
 *   lanes (see BWD_G), the tree; dx = y (g - dot). Error: dot within ~16 2^-24 sum |g y|, then
 *   2 roundings: within the checker's |y| (|g| + sum |g y|) bound at any n.
 * log_softmax_bwd (2 passes): sg = sum g (as dot); dx = fma(-e^y, sg, g): one rounding after
 *   the exp's 1 ulp. y may be anything (the rare path handles y > 0, -inf, NaN).
 *
 * The exp: for arguments in [-87, 0] the fast path of exp_step (e = p 2^n a normal float, n by
 * a magic-number rounding, p by vmath.h's polynomial). Lanes below -87 or NaN are rare: below
 * -104 e^v rounds to 0 (and is set to 0 without computing it, which also keeps subnormal
 * operands, a microcode assist each, out of rows with a large spread); in [-104, -87)
 * og_vexp_split2 / og_vexp_value, which rounds a subnormal result once. The choice is per lane,
 * from the lane's own value, so it is the same on every ISA. The exps of a step (2 groups, 1 on
 * the scalar build) are computed side by side: the polynomial is a chain of dependent fmas.
 *
 * Element types. The passes that read or write a row's values are written once
 * (softmax_rows.inc) and instantiated for fp32 and for bf16 / fp16 rows, which widen each vector
 * on load (exact) and round each result once on store. Everything between is the same fp32
 * arithmetic in the same order, so a 16-bit kernel gives the bits of the fp32 kernel between a
 * CopyIn and a CopyOut, without the row buffers. Softmax's e^(x - m) goes to an fp32 scratch row
 * (its own output for fp32): rounding it to 16 bits before the scaling would round twice. */
#include <float.h>

#include "engine/blocking.h"
#include "engine/simd/map64.h"
#include "engine/simd/vec16.h"
#include "engine/simd/vmath.h"
#include "ops/softmax/softmax_kernel.h"

#define LANES 16
#define NV (LANES / VLEN) // vectors per group of 16 elements

// The step functions below work on arrays of vectors: inlined, the arrays live in registers
// (clang does not inline a step called twice by itself, and ran 1.5 times slower).
#define STEP_INLINE inline __attribute__((always_inline))

// The magic number of the fast exp: fma(v, log2 e, MAGIC) = MAGIC + n rounds v / ln2 to the
// integer n once, and its bits shifted left by 23 are those of 2^n (vbits_shl23).
#define MAGIC (0x1.8p23f + 127.0f)
#define LOG2E 1.44269504088896341f
#define EXP_UNDER (-104.0f) // e^v < 2^-150 below: rounds to 0

// ---------------------------------------------------------------------------------------------
// Horizontal steps: stores of double vectors, and the fixed 16-lane tree.

/// The VLEN doubles of a, in lane order (vec.h's vd is its low half then its high half).
static inline void vdstore(double *p, vd a) { memcpy(p, &a, sizeof a); }
_Static_assert(sizeof(vd) == VLEN * sizeof(double), "vd is VLEN doubles");

static inline float tree16f(const float *l) {
    float s0 = l[0] + l[1], s1 = l[2] + l[3], s2 = l[4] + l[5], s3 = l[6] + l[7];
    float s4 = l[8] + l[9], s5 = l[10] + l[11], s6 = l[12] + l[13], s7 = l[14] + l[15];
    return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
}

static inline double tree16d(const double *l) {
    double s0 = l[0] + l[1], s1 = l[2] + l[3], s2 = l[4] + l[5], s3 = l[6] + l[7];
    double s4 = l[8] + l[9], s5 = l[10] + l[11], s6 = l[12] + l[13], s7 = l[14] + l[15];
    return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
}

static inline float sum_lanes_f(const vf *acc) {
    float l[LANES];
    for (int j = 0; j < NV; j++) vstore(l + j * VLEN, acc[j]);
    return tree16f(l);
}

static inline double sum_lanes_d(const vd *acc) {
    double l[LANES];
    for (int j = 0; j < NV; j++) vdstore(l + j * VLEN, acc[j]);
    return tree16d(l);
}

// ---------------------------------------------------------------------------------------------
// The row max (softmax_rows.inc) is exact, so any number of accumulators and any order give the
// same value.
#define MAXV (VLEN == 1 ? 16 : 64 / VLEN) // accumulators (independent chains)

// ---------------------------------------------------------------------------------------------
// e^(x - m)

/// x - m = d + lo exactly (TwoSum of x and nm = -m); lo is NaN where d is infinite.
static inline vf two_diff(vf x, vf nm, vf *lo) {
    vf d = vadd(x, nm);
    vf bb = vsub(d, x);
    *lo = vadd(vsub(x, vsub(d, bb)), vsub(nm, bb));
    return d;
}

/// e^(d + lo) for the rare lanes of exp_step (d < -87 or NaN), the others keep e.
static vf rare_exp2(vf d, vf lo, vf e, vm rare) {
    vm under = vlt(d, vset(EXP_UNDER)); // -inf too
    e = vsel(under, vset(0.0f), e);
    vm mid = vmandnot(under, rare); // [-104, -87) or NaN
    if (vany(mid)) {
        vf zero = vset(0.0f);
        vf g = og_vexp_value(og_vexp_split2(vsel(mid, d, zero), vsel(mid, lo, zero)));
        e = vsel(mid, g, e);
    }
    return e;
}

// The exps of a row run a step of STEP elements at a time (SV vectors side by side: the
// polynomial is a chain of dependent fmas, and independent chains in program order let the core
// overlap them); a step is one or two groups of 16, the same lanes on every ISA.
#define STEP (VLEN == 1 ? LANES : 2 * LANES)
#define SV (STEP / VLEN)

/// e[u] = e^(x - m) for the SV vectors x[u], and d[u] = x - m rounded.
static STEP_INLINE void exp_vecs(const vf *x, vf nm, vf *e, vf *d) {
    vf lo[SV], v[SV], kt[SV], t[SV];
    for (int u = 0; u < SV; u++) d[u] = two_diff(x[u], nm, &lo[u]);
    for (int u = 0; u < SV; u++) v[u] = vmax(d[u], vset(OG_VEXP_NORMAL_MIN)); // NaN: -87
    for (int u = 0; u < SV; u++) kt[u] = vfma(v[u], vset(LOG2E), vset(MAGIC));
    for (int u = 0; u < SV; u++) t[u] = vadd(og_vexp_r(v[u], vsub(kt[u], vset(MAGIC))), lo[u]);
    for (int u = 0; u < SV; u++) e[u] = vmul(og_vexp_poly(t[u]), vbits_shl23(kt[u]));
    vm any = vne(v[0], d[0]);
    for (int u = 1; u < SV; u++) any = vmor(any, vne(v[u], d[u]));
    if (vany(any))
        for (int u = 0; u < SV; u++) {
            vm rare = vne(v[u], d[u]); // d < -87 or NaN
            if (vany(rare)) e[u] = rare_exp2(d[u], lo[u], e[u], rare);
        }
}

// ---------------------------------------------------------------------------------------------
// Pass 2 of the forwards: e into y and its sum (softmax), or the split sum (log-softmax).

// Sums of e: each lane adds SUM_G of its values in float (a short sum of non-negative terms:
// at most SUM_G - 1 roundings, relative), then adds that partial sum to its double accumulator:
// the error of a long row stays that of the short float sums (widening every value would cost a
// third of the pass). The flushes come after every SUM_G groups of 16 from the row's start (a
// multiple of the groups of a step), and after the last group, on every ISA. Padding adds exact
// zeros, so it never changes a partial sum.
#define SUM_G 2
_Static_assert(SUM_G % (STEP / LANES) == 0, "flushes fall between steps");

static inline void flush(vd *acc, vf *part) {
    for (int j = 0; j < NV; j++) acc[j] = vdadd(acc[j], vwiden(part[j]));
    for (int j = 0; j < NV; j++) part[j] = vset(0.0f);
}

/// y = e^(x - m) for the SV vectors x[u] (STEP values at y), summed into part.
static STEP_INLINE void store_vecs(const vf *x, float *y, vf nm, vf *part) {
    vf e[SV], d[SV];
    exp_vecs(x, nm, e, d);
    for (int u = 0; u < SV; u++) {
        vstore(y + u * VLEN, e[u]);
        part[u % NV] = vadd(part[u % NV], e[u]);
    }
}

typedef struct split_sum {
    double rest;  // sum of e over the x != m
    double count; // the number of x == m (e = 1 exactly)
} split_sum;

// Counts are float lanes, flushed every BLOCK elements so that they stay exact integers.
#define BLOCK ((size_t)1 << 20)

typedef struct split_acc {
    vd acc[NV];
    vf part[NV], cnt[NV];
} split_acc;

static STEP_INLINE void split_vecs(const vf *x, vf nm, split_acc *a) {
    vf zero = vset(0.0f), e[SV], d[SV];
    exp_vecs(x, nm, e, d);
    for (int u = 0; u < SV; u++) {
        vm top = veq(d[u], zero); // x == m: d = x - m rounds to 0 only then
        a->part[u % NV] = vadd(a->part[u % NV], vsel(top, zero, e[u]));
        a->cnt[u % NV] = vadd(a->cnt[u % NV], vsel(top, vset(1.0f), zero));
    }
}

// ---------------------------------------------------------------------------------------------
// Elementwise passes: full vectors in place, the tail through zero-padded copies.

/// The constants of a row's elementwise pass.
typedef struct row_k {
    vf a, b, c;
} row_k;

/// dst[i] = OP(a[i], b[i], k) over the row (OP on vectors; dst may alias a or b). LDA / LDB load a
/// vector, LDA1 / LDB1 one value as a float; STD / STD1 store a vector / one float.
#define ROW_EW_LOOP(n, a, LDA, LDA1, b, LDB, LDB1, dst, STD, STD1, OP, k)                          \
    do {                                                                                           \
        size_t i_ = 0;                                                                             \
        for (; i_ + VLEN <= (n); i_ += VLEN) STD((dst) + i_, OP(LDA((a) + i_), LDB((b) + i_), k)); \
        if (i_ < (n)) {                                                                            \
            size_t rest_ = (n)-i_;                                                                 \
            float ta_[VLEN] = {0}, tb_[VLEN] = {0}, ty_[VLEN];                                     \
            for (size_t j_ = 0; j_ < rest_; j_++)                                                  \
                ta_[j_] = LDA1((a) + i_ + j_), tb_[j_] = LDB1((b) + i_ + j_);                      \
            vstore(ty_, OP(vload(ta_), vload(tb_), k));                                            \
            for (size_t j_ = 0; j_ < rest_; j_++) STD1((dst) + i_ + j_, ty_[j_]);                  \
        }                                                                                          \
    } while (0)

// ---------------------------------------------------------------------------------------------
// The elementwise operations of the kernels' last passes

// k: s = a + b (a float pair), c = 1 / s rounded. q = e c is within about 1 ulp of e / s; the
// residual e - q s is exact to 2^-24 of itself (fma), and q + residual c rounds once: within
// 0.5 ulp of e / s (plus 2^-47 relative), as a division by s would be, without its latency.
static inline vf softmax_scale(vf e, vf unused, const row_k *k) {
    (void)unused;
    vf q = vmul(e, k->c);
    vf r = vfnmadd(q, k->b, vfnmadd(q, k->a, e));
    return vfma(r, k->c, q);
}

// k: -m, and L = hi + lo.
static inline vf log_softmax_y(vf x, vf unused, const row_k *k) {
    (void)unused;
    vf lx, d = two_diff(x, k->a, &lx);
    lx = vmax(lx, vset(-FLT_MAX)); // NaN where d = -inf: then y = -inf (or NaN: a NaN row)
    return vadd(vsub(d, k->b), vsub(lx, k->c));
}

// The backwards' sums: float lanes (fma for the dot), each lane's partial sum of BWD_G values
// added to a double accumulator, flushed after every BWD_G groups from the row's start. A float
// sum of k same-sign values (a constant g) errs by up to k 2^-24 of it, and the checker allows
// 4 sqrt(n) 2^-24: flushing keeps the error at BWD_G 2^-24 whatever n (a plain float sum of
// a constant g over 100000 values used 0.82 of the tolerance).
#define BWD_G 16
_Static_assert(BWD_G *LANES <= OG_BLOCK_MAX_ROW_STEP, "declare the step in engine/blocking.h");
_Static_assert(MAXV *VLEN <= OG_BLOCK_MAX_ROW_STEP && VLEN <= OG_BLOCK_MAX_VLEN,
               "declare the step in engine/blocking.h");

// k: dot.
static inline vf softmax_dx(vf g, vf y, const row_k *k) { return vmul(y, vsub(g, k->a)); }

/// e^y for the rare lanes of exp_any_vecs (y outside [-87, 0], or NaN): 0 below -104 (e^y
/// rounds to 0), og_vexp_split elsewhere (y clamped to 100: e^y is inf from 88.8).
static vf exp_any_rare(vf y, vf e, vm rare) {
    vf zero = vset(0.0f);
    vm under = vlt(y, vset(EXP_UNDER));
    e = vsel(under, zero, e);
    vm mid = vmandnot(under, rare); // [-104, -87), > 0 or NaN
    if (vany(mid)) {
        vf a = vmin(vset(100.0f), vsel(mid, y, zero)); // NaN stays NaN
        e = vsel(mid, og_vexp_value(og_vexp_split(a)), e);
    }
    return e;
}

/// e[u] = e^y for the SV vectors y[u], any y: the fast exp on [-87, 0], side by side.
static STEP_INLINE void exp_any_vecs(const vf *yv, vf *e) {
    vf v[SV], kt[SV];
    for (int u = 0; u < SV; u++) // NaN: -87 (then rare)
        v[u] = vmax(vmin(yv[u], vset(0.0f)), vset(OG_VEXP_NORMAL_MIN));
    for (int u = 0; u < SV; u++) kt[u] = vfma(v[u], vset(LOG2E), vset(MAGIC));
    for (int u = 0; u < SV; u++)
        e[u] = vmul(og_vexp_poly(og_vexp_r(v[u], vsub(kt[u], vset(MAGIC)))), vbits_shl23(kt[u]));
    vm any = vne(v[0], yv[0]);
    for (int u = 1; u < SV; u++) any = vmor(any, vne(v[u], yv[u]));
    if (vany(any))
        for (int u = 0; u < SV; u++) {
            vm rare = vne(v[u], yv[u]);
            if (vany(rare)) e[u] = exp_any_rare(yv[u], e[u], rare);
        }
}

// ---------------------------------------------------------------------------------------------
// The passes over a row's values and the kernels, per element type (softmax_rows.inc,
// engine/simd/per_type.inc).

// (LD_F32 / LD1_F32 read the fp32 scratch row of every instance)
#define LD_F32(p) vload(p)
#define LD1_F32(p) (*(p))
#define OG_PER_TYPE_INC "ops/softmax/softmax_rows.inc"
#include "engine/simd/per_type.inc"

// ---------------------------------------------------------------------------------------------
// Entry points

/// og_<name> (fp32 rows) and og_<name>_bf16 / _f16 over rows_<name>_<type>(n, in, out, scratch).
#define ROW_KERNELS(name)                                                                          \
    void OG_FN(og_##name)(size_t n, const float *const *in, float *const *out, const void *params, \
                          float *stats) {                                                          \
        (void)params, (void)stats;                                                                 \
        if (n > 0) name##_f32(n, in, out, out[0]);                                                 \
    }                                                                                              \
    void OG_FN(og_##name##_bf16)(size_t n, const uint16_t *const *in, uint16_t *const *out,        \
                                 float *scratch, const void *params, float *stats) {               \
        (void)params, (void)stats;                                                                 \
        if (n > 0) name##_bf16(n, in, out, scratch);                                               \
    }                                                                                              \
    void OG_FN(og_##name##_f16)(size_t n, const uint16_t *const *in, uint16_t *const *out,         \
                                float *scratch, const void *params, float *stats) {                \
        (void)params, (void)stats;                                                                 \
        if (n > 0) name##_f16(n, in, out, scratch);                                                \
    }

ROW_KERNELS(softmax_fwd)
ROW_KERNELS(log_softmax_fwd)
ROW_KERNELS(softmax_bwd)
ROW_KERNELS(log_softmax_bwd)

// ---- float64 rows: the same formulas in double with compensated sums. A row with a NaN or a
// +inf, or with every value -inf, gives a NaN row (forward), as the float kernels do.
// The max m (NaN for a row with a NaN) and the index of its first occurrence.
static double row_max64(size_t n, const double *x, size_t *at) {
    double m = -INFINITY;
    *at = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i])) return x[i];
        if (x[i] > m) m = x[i], *at = i;
    }
    return m;
}

// sum_j e^(x_j - m) - 1: the max's own term (exactly 1) left out, so that log of the sum is
// log1p of it, with no cancellation where the max dominates; NaN for the rows the header sends
// to NaN
static double row_expsum_m1_64(size_t n, const double *x, double *m) {
    size_t at;
    *m = row_max64(n, x, &at);
    if (isnan(*m) || isinf(*m)) return NAN;
    og_ksum s = {0, 0};
    for (size_t i = 0; i < n; i++)
        if (i != at) og_ksum_add(&s, exp(x[i] - *m));
    return og_ksum_value(&s);
}

void OG_FN(og_softmax_fwd_f64)(size_t n, const double *const *in, double *const *out,
                               const void *params, double *stats) {
    (void)params, (void)stats;
    double m, s = 1 + row_expsum_m1_64(n, in[0], &m);
    for (size_t i = 0; i < n; i++) out[0][i] = isnan(s) ? s : exp(in[0][i] - m) / s;
}

void OG_FN(og_log_softmax_fwd_f64)(size_t n, const double *const *in, double *const *out,
                                   const void *params, double *stats) {
    (void)params, (void)stats;
    double m, ls = log1p(row_expsum_m1_64(n, in[0], &m));
    for (size_t i = 0; i < n; i++) out[0][i] = isnan(ls) ? ls : (in[0][i] - m) - ls;
}

void OG_FN(og_softmax_bwd_f64)(size_t n, const double *const *in, double *const *out,
                               const void *params, double *stats) {
    (void)params, (void)stats;
    og_ksum d = {0, 0};
    for (size_t i = 0; i < n; i++) og_ksum_add(&d, in[0][i] * in[1][i]);
    double dot = og_ksum_value(&d);
    for (size_t i = 0; i < n; i++) out[0][i] = in[1][i] * (in[0][i] - dot);
}

void OG_FN(og_log_softmax_bwd_f64)(size_t n, const double *const *in, double *const *out,
                                   const void *params, double *stats) {
    (void)params, (void)stats;
    og_ksum g = {0, 0};
    for (size_t i = 0; i < n; i++) og_ksum_add(&g, in[0][i]);
    double sum = og_ksum_value(&g);
    for (size_t i = 0; i < n; i++) out[0][i] = in[0][i] - exp(in[1][i]) * sum;
}
