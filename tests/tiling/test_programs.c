/* Step programs (engine/program.h), white-box: programs built here and run through phase 2.
 *  - a MAP into a workspace temporary, then a REDUCE of the temporary, then a MAP of the
 *    temporary into a second output: the values, and the workspace = temporaries + the largest
 *    step's scratch;
 *  - REDUCE with sum, mean, max and min along every subset of dims of a rank-3 tensor, against
 *    float64 (max / min exact, NaN propagating), 1 vs 3 threads and every ISA the CPU has bitwise
 *    equal;
 *  - a step naming a slot outside the program is refused at publish time (an internal error with
 *    a message), never run;
 *  - ROWS: a row kernel with a row-invariant input (a weight [R]) and per-row statistics written
 *    into a [rows] and a keepdim [.., 1] tensor, along the last and a middle axis. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_reduce_sum.h"
#include "engine/program.h"
#include "ops/math/mul/mul_kernel.h"
#include "ops/ops.h"
#include "test.h"
#include "testutil.h"

// Runs a built program as an aclnnReduceSum executor (any operator's phase 2 runs a program; the
// descriptor only has to match).
static aclnnStatus run_prog(og_prog *p) {
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus st = og_prog_publish(p, &ws, &e);
    if (st != ACLNN_SUCCESS) return st;
    return test_run(st, ws, e, aclnnReduceSum, NULL);
}

static void test_temporaries(void) {
    enum { R = 37, C = 300 };
    int64_t dims[2] = {R, C}, cdims[1] = {C};
    float *x = test_dev_alloc(R * C * 4), *sum = test_dev_alloc(C * 4),
          *y = test_dev_alloc(R * C * 4);
    test_rng r;
    test_rng_seed(&r, 3);
    test_fill(x, 0, R * C, ACL_FLOAT, &r, -2, 2);
    aclTensor *tx = test_tensor(dims, 2, ACL_FLOAT, x), *ts = test_tensor(cdims, 1, ACL_FLOAT, sum),
              *ty = test_tensor(dims, 2, ACL_FLOAT, y);
    const aclTensor *io[3] = {tx, ts, ty};
    og_prog p;
    og_prog_init(&p, &og_op_ReduceSum, 1, 2, io);
    const aclTensor *tmp;
    int t = og_prog_temp(&p, ACL_FLOAT, 2, dims, &tmp);
    CHECK_EQ(t, 3);
    og_muls_params three = {3.0f, 3.0};
    // tmp = 3 x;  sum = sum over rows of tmp;  y = 3 tmp (= 9 x)
    og_ew_op m1 = {.op = &og_op_ReduceSum,
                   .kernels = og_muls_kernels,
                   .nin = 1,
                   .in = {tx},
                   .nout = 1,
                   .out = {tmp},
                   .slots = true,
                   .in_slot = {0},
                   .out_slot = {t},
                   .params = &three,
                   .params_size = sizeof three,
                   .compute_dtype = ACL_FLOAT};
    og_prog_map(&p, &m1);
    og_reduce_op red = {
        .nin = 1, .in = {tmp}, .in_slot = {t}, .out = ts, .out_slot = 1, .round_in = ACL_FLOAT};
    og_reduce_to_shape(&red, dims, 2, ts);
    og_prog_reduce(&p, &red);
    og_ew_op m2 = m1;
    m2.in[0] = tmp, m2.in_slot[0] = t, m2.out[0] = ty, m2.out_slot[0] = 2;
    og_prog_map(&p, &m2);
    uint64_t temp_bytes = (uint64_t)R * C * 4;
    CHECK(p.temp_bytes >= temp_bytes);
    CHECK_EQ(run_prog(&p), ACLNN_SUCCESS);
    for (int j = 0; j < C; j++) {
        double s = 0;
        for (int i = 0; i < R; i++) s += 3.0 * x[i * C + j];
        CHECK(fabs(sum[j] - s) <= 1e-5 * (1 + fabs(s)));
    }
    for (int i = 0; i < R * C; i++) CHECK(y[i] == (float)((float)(3.0f * x[i]) * 3.0f));
    aclDestroyTensor(tx), aclDestroyTensor(ts), aclDestroyTensor(ty);
    aclrtFree(x), aclrtFree(sum), aclrtFree(y);
}

static void test_slot_out_of_range(void) {
    int64_t dims[1] = {8};
    float a[8] = {0}, b[8] = {0};
    aclTensor *ta = test_tensor(dims, 1, ACL_FLOAT, a), *tb = test_tensor(dims, 1, ACL_FLOAT, b);
    const aclTensor *io[2] = {ta, tb};
    og_prog p;
    og_prog_init(&p, &og_op_ReduceSum, 1, 1, io);
    og_muls_params two = {2.0f, 2.0};
    og_ew_op m = {.op = &og_op_ReduceSum,
                  .kernels = og_muls_kernels,
                  .nin = 1,
                  .in = {ta},
                  .nout = 1,
                  .out = {tb},
                  .slots = true,
                  .in_slot = {0},
                  .out_slot = {5},
                  .params = &two,
                  .params_size = sizeof two,
                  .compute_dtype = ACL_FLOAT};
    og_prog_map(&p, &m);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(og_prog_publish(&p, &ws, &e), ACLNN_ERR_INNER);
    CHECK_MSG("a step names a slot outside the program");
    CHECK(e == NULL);
    aclDestroyTensor(ta), aclDestroyTensor(tb);
}

// ---- reductions of every kind ---------------------------------------------------------------

// Reduces x [A,B,C] over `mask` with `kind` into out (keepdim, contiguous).
static aclnnStatus reduce(og_reduce_kind kind, const int64_t *dims, unsigned mask, float *x,
                          float *out) {
    int64_t odims[3];
    for (int d = 0; d < 3; d++) odims[d] = (mask >> d) & 1u ? 1 : dims[d];
    aclTensor *tx = test_tensor(dims, 3, ACL_FLOAT, x), *to = test_tensor(odims, 3, ACL_FLOAT, out);
    const aclTensor *io[2] = {tx, to};
    og_prog p;
    og_prog_init(&p, &og_op_ReduceSum, 1, 1, io);
    og_reduce_op r = {.kind = kind,
                      .nin = 1,
                      .in = {tx},
                      .in_slot = {0},
                      .out = to,
                      .out_slot = 1,
                      .round_in = ACL_FLOAT};
    og_reduce_to_shape(&r, dims, 3, to);
    og_prog_reduce(&p, &r);
    aclnnStatus st = run_prog(&p);
    aclDestroyTensor(tx), aclDestroyTensor(to);
    return st;
}

static void test_reduce_kinds(void) {
    const int64_t shapes[][3] = {{3, 5, 7}, {2, 300, 70}, {1, 1, 70001}, {64, 1, 33}, {0, 4, 5}};
    const og_reduce_kind kinds[] = {OG_RED_SUM, OG_RED_MEAN, OG_RED_MAX, OG_RED_MIN};
    test_rng r;
    test_rng_seed(&r, 11);
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
        const int64_t *dims = shapes[si];
        int64_t n = dims[0] * dims[1] * dims[2];
        // outputs can outnumber inputs when a reduced dim is empty: room for every keepdim shape
        size_t cap = (size_t)((dims[0] + 1) * (dims[1] + 1) * (dims[2] + 1));
        float *x = test_dev_alloc((size_t)n * 4 + 4), *out = test_dev_alloc(cap * 4),
              *out2 = test_dev_alloc(cap * 4);
        test_fill(x, 0, n, ACL_FLOAT, &r, -100, 100);
        if (n > 10) x[n / 3] = NAN; // propagates through every kind
        double *acc = malloc(cap * sizeof(double));
        int64_t *cnt = malloc(cap * sizeof(int64_t));
        for (unsigned mask = 1; mask < 8; mask++)
            for (size_t k = 0; k < 4; k++) {
                og_reduce_kind kind = kinds[k];
                opgrad_set_num_threads(1);
                opgrad_set_max_isa(OPGRAD_ISA_SCALAR);
                CHECK_EQ(reduce(kind, dims, mask, x, out), ACLNN_SUCCESS);
                int64_t keep[3], m = 1;
                for (int d = 0; d < 3; d++) keep[d] = (mask >> d) & 1u ? 1 : dims[d], m *= keep[d];
                // float64: one pass over the input, folding each value into its output
                double start = kind == OG_RED_MAX ? -INFINITY : kind == OG_RED_MIN ? INFINITY : 0;
                for (int64_t o = 0; o < m; o++) acc[o] = start, cnt[o] = 0;
                for (int64_t i = 0; i < n; i++) {
                    int64_t ii[3] = {i / (dims[1] * dims[2]), i / dims[2] % dims[1], i % dims[2]};
                    int64_t o = 0;
                    for (int d = 0; d < 3; d++) o = o * keep[d] + ((mask >> d) & 1u ? 0 : ii[d]);
                    double v = x[i], a = acc[o];
                    acc[o] = isnan(a) || isnan(v) ? NAN
                             : kind == OG_RED_MAX ? fmax(a, v)
                             : kind == OG_RED_MIN ? fmin(a, v)
                                                  : a + v;
                    cnt[o]++;
                }
                int64_t bad = 0;
                for (int64_t o = 0; o < m; o++) {
                    double want = kind == OG_RED_MEAN ? acc[o] / (double)cnt[o] : acc[o];
                    bool ok = isnan(want) ? isnan(out[o])
                              : kind >= OG_RED_MAX
                                  ? out[o] == (float)want
                                  : fabs(out[o] - want) <= 1e-5 * (100.0 * (double)cnt[o] + 1);
                    bad += !ok;
                }
                CHECKF(bad == 0, "shape %zu mask %u kind %zu: %lld wrong", si, mask, k,
                       (long long)bad);
                // 3 threads and the best ISA: the same bits
                opgrad_set_num_threads(3);
                opgrad_set_max_isa((opgrad_isa)(OPGRAD_ISA_COUNT - 1));
                CHECK_EQ(reduce(kind, dims, mask, x, out2), ACLNN_SUCCESS);
                CHECKF(memcmp(out, out2, (size_t)m * 4) == 0, "shape %zu mask %u kind %zu differs",
                       si, mask, k);
            }
        free(acc), free(cnt);
        aclrtFree(x), aclrtFree(out), aclrtFree(out2);
    }
    opgrad_set_num_threads(2);
}

// ---- the row engine: invariant inputs and statistics ----------------------------------------

// out = x * w (w a row-invariant [R]); stats = {row sum, row max} (plain scalar code: one build).
static void scale_row(size_t n, const float *const *in, float *const *out, const void *p,
                      float *stats) {
    (void)p;
    float s = 0, m = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        out[0][i] = in[0][i] * in[1][i];
        s += in[0][i];
        m = in[0][i] > m ? in[0][i] : m;
    }
    stats[0] = s, stats[1] = m;
}
static const og_row_fn scale_row_kernels[OPGRAD_ISA_COUNT] = {scale_row, scale_row, scale_row,
                                                              scale_row, scale_row, scale_row};

static void check_rows(int axis) {
    enum { A = 3, B = 5, C = 7 };
    int64_t dims[3] = {A, B, C}, R = dims[axis];
    int64_t wdims[3] = {1, 1, 1}, sd_keep[3] = {A, B, C}, sd_flat[2];
    wdims[axis] = R;
    sd_keep[axis] = 1;
    for (int d = 0, k = 0; d < 3; d++)
        if (d != axis) sd_flat[k++] = dims[d];
    float x[A * B * C], y[A * B * C], w[7], s1[A * B * C], s2[A * B * C];
    for (int i = 0; i < A * B * C; i++) x[i] = (float)((i * 37) % 23) - 11.0f;
    for (int j = 0; j < R; j++) w[j] = 0.5f + (float)j;
    aclTensor *tx = test_tensor(dims, 3, ACL_FLOAT, x), *tw = test_tensor(wdims, 3, ACL_FLOAT, w),
              *ty = test_tensor(dims, 3, ACL_FLOAT, y),
              *t1 = test_tensor(sd_flat, 2, ACL_FLOAT, s1),
              *t2 = test_tensor(sd_keep, 3, ACL_FLOAT, s2);
    const aclTensor *io[5] = {tx, tw, ty, t1, t2};
    og_prog p;
    og_prog_init(&p, &og_op_ReduceSum, 2, 3, io);
    og_rows_op rows = {.kernels = scale_row_kernels,
                       .nin = 2,
                       .nout = 1,
                       .nstats = 2,
                       .in = {tx, tw},
                       .in_slot = {0, 1},
                       .out = {ty},
                       .out_slot = {2},
                       .stats = {t1, t2},
                       .stats_slot = {3, 4},
                       .ndim = 3,
                       .axis = axis,
                       .compute_dtype = ACL_FLOAT};
    for (int d = 0; d < 3; d++) rows.dims[d] = dims[d];
    og_prog_rows(&p, &rows);
    CHECK_EQ(run_prog(&p), ACLNN_SUCCESS);
    int64_t inner = 1;
    for (int d = axis + 1; d < 3; d++) inner *= dims[d];
    for (int64_t row = 0; row < A * B * C / R; row++) {
        int64_t o = row / inner, i = row % inner, base = o * R * inner + i;
        float s = 0, m = -INFINITY;
        for (int64_t j = 0; j < R; j++) {
            float xv = x[base + j * inner];
            CHECK(y[base + j * inner] == xv * w[j]);
            s += xv, m = xv > m ? xv : m;
        }
        CHECKF(s1[row] == s && s2[row] == m, "axis %d row %lld: stats %g %g, want %g %g", axis,
               (long long)row, s1[row], s2[row], s, m);
    }
    aclTensor *all[] = {tx, tw, ty, t1, t2};
    for (int k = 0; k < 5; k++) aclDestroyTensor(all[k]);
}

static void test_rows_stats(void) {
    for (int axis = 0; axis < 3; axis++) check_rows(axis);
}

int main(void) {
    aclInit(NULL);
    RUN(test_temporaries);
    RUN(test_slot_out_of_range);
    RUN(test_reduce_kinds);
    RUN(test_rows_stats);
    return test_summary();
}
