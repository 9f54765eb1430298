/* The amp family through the public API (the checker covers values on its layouts; here what it
 * cannot reach):
 *  - aclnnForeachNonFiniteCheckAndUnscale: an inf, a -inf or a NaN anywhere in any tensor of the
 *    list (first, middle, a SIMD tail, a later unit of a large tensor) sets foundInf to 1 and
 *    still unscales every tensor; finite data leaves foundInf as the caller set it (never reset);
 *    fp16 / bf16 lists;
 *  - foreach walks: a list of 300 tensors of mixed sizes (the step's parameters on the heap), a
 *    2.5M-element tensor over many units, strided views, empty tensors: values against a double
 *    loop, bitwise equal on 1, 2 and 3 threads and every ISA level;
 *  - aclnnForeachNorm: orders 2, 1, +inf, -inf, 0, 3 and 0.5 by hand, NaN propagating, an empty
 *    tensor's norm (order 0 counts a NaN as a non-zero, as PyTorch);
 *  - aclnnAmpUpdateScale: PyTorch's GradScaler sequence (backoff, counting, growth at the
 *    interval, tracker reset), growth that would overflow fp16 kept, NaN foundInf backing off;
 *  - status paths: NULLs, list lengths, dtypes, shapes, growthInterval (561002). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_amp_update_scale.h"
#include "aclnnop/aclnn_foreach_mul_scalar_v2.h"
#include "aclnnop/aclnn_foreach_non_finite_check_and_unscale.h"
#include "aclnnop/aclnn_foreach_norm.h"
#include "opgrad/opgrad.h"
#include "tensor/dtype.h"
#include "test.h"
#include "testutil.h"

static aclnnStatus unscale(aclTensorList *g, aclTensor *found, aclTensor *inv) {
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus st = aclnnForeachNonFiniteCheckAndUnscaleGetWorkspaceSize(g, found, inv, &ws, &e);
    return test_run(st, ws, e, aclnnForeachNonFiniteCheckAndUnscale, NULL);
}

static aclnnStatus norm(aclTensorList *x, double p, aclTensorList *out) {
    aclScalar *s = aclCreateScalar(&p, ACL_DOUBLE);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus st = aclnnForeachNormGetWorkspaceSize(x, s, out, &ws, &e);
    st = test_run(st, ws, e, aclnnForeachNorm, NULL);
    aclDestroyScalar(s);
    return st;
}

static aclnnStatus mul(aclTensorList *x, float s, aclTensorList *out) {
    aclScalar *sc = aclCreateScalar(&s, ACL_FLOAT);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus st = aclnnForeachMulScalarV2GetWorkspaceSize(x, sc, out, &ws, &e);
    st = test_run(st, ws, e, aclnnForeachMulScalarV2, NULL);
    aclDestroyScalar(sc);
    return st;
}

static aclTensor *one_f32(float *v) {
    int64_t one = 1;
    return test_tensor(&one, 1, ACL_FLOAT, v);
}

// A list of n 1-d tensors over consecutive runs of buf (dtype dt), sizes[k] elements each.
static aclTensorList *runs(void *buf, aclDataType dt, const int64_t *sizes, int n) {
    aclTensor **ts = malloc((size_t)n * sizeof *ts);
    char *at = buf;
    for (int k = 0; k < n; k++) {
        ts[k] = test_tensor(&sizes[k], 1, dt, at);
        at += sizes[k] * (int64_t)aclDataTypeSize(dt);
    }
    aclTensorList *l = aclCreateTensorList((const aclTensor *const *)ts, (uint64_t)n);
    free(ts);
    return l;
}

static void test_unscale_finds_every_nonfinite(void) {
    static const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    const int64_t sizes[3] = {5, 37, 70000}; // a SIMD tail; two units of the large one
    const int64_t total = 5 + 37 + 70000;
    const int64_t spots[] = {-1, 0, 4, 5 + 36, 42 + 17, 42 + 40000, total - 1};
    const float bad[] = {INFINITY, -INFINITY, NAN};
    for (int d = 0; d < 3; d++)
        for (size_t s = 0; s < sizeof spots / sizeof *spots; s++)
            for (int b = 0; b < 3; b++) {
                if (spots[s] < 0 && b > 0) continue; // (the finite case once per dtype)
                size_t es = aclDataTypeSize(dts[d]);
                char *buf = malloc((size_t)total * es);
                for (int64_t i = 0; i < total; i++)
                    test_store(buf, i, dts[d], (double)(i % 17) - 8);
                if (spots[s] >= 0) test_store(buf, spots[s], dts[d], bad[b]);
                aclTensorList *l = runs(buf, dts[d], sizes, 3);
                float found = spots[s] < 0 ? 0.25f : 0.0f, inv = 0.5f;
                aclTensor *tf = one_f32(&found), *ti = one_f32(&inv);
                CHECK_EQ(unscale(l, tf, ti), ACLNN_SUCCESS);
                if (spots[s] < 0)
                    CHECKF(found == 0.25f, "%s: finite data changed foundInf to %g",
                           og_dtype_name(dts[d]), found);
                else
                    CHECKF(found == 1.0f, "%s: a non-finite at %lld: foundInf %g",
                           og_dtype_name(dts[d]), (long long)spots[s], found);
                bool ok = true; // every element unscaled, also when one was not finite
                for (int64_t i = 0; i < total && ok; i++) {
                    double want = i == spots[s] ? bad[b] * 0.5 : ((double)(i % 17) - 8) * 0.5;
                    double got = test_load(buf, i, dts[d]);
                    ok = got == want || (want != want && got != got);
                    CHECKF(ok, "%s: element %lld = %g, want %g", og_dtype_name(dts[d]),
                           (long long)i, got, want);
                }
                aclDestroyTensorList(l);
                aclDestroyTensor(tf), aclDestroyTensor(ti);
                free(buf);
            }
}

// x * 3 over 300 tensors of sizes 0..599 (the walk's parameters far beyond a step's 1 KiB) and
// one of 2.5M elements, strided views among them: bitwise equal at every thread count and ISA.
static void test_walks_many_and_large(void) {
    enum { N = 301 };
    int64_t sizes[N], total = 0;
    for (int k = 0; k < N - 1; k++) sizes[k] = (k * 37) % 600, total += sizes[k];
    sizes[N - 1] = 2500000, total += sizes[N - 1];
    float *x = malloc((size_t)total * 4), *y = malloc((size_t)total * 4),
          *first = malloc((size_t)total * 4);
    test_rng r;
    test_rng_seed(&r, 7);
    for (int64_t i = 0; i < total; i++) x[i] = (float)test_rng_uniform(&r, -3, 3);
    aclTensorList *xl = runs(x, ACL_FLOAT, sizes, N), *yl = runs(y, ACL_FLOAT, sizes, N);
    int runs_done = 0;
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!test_isa_available(isa)) continue;
        opgrad_set_max_isa((opgrad_isa)isa);
        for (int t = 1; t <= 3; t++) {
            opgrad_set_num_threads(t);
            memset(y, 0xff, (size_t)total * 4);
            CHECK_EQ(mul(xl, 3.0f, yl), ACLNN_SUCCESS);
            if (runs_done++ == 0) {
                for (int64_t i = 0; i < total; i++)
                    if (y[i] != x[i] * 3.0f) {
                        CHECKF(false, "y[%lld] = %g, want %g", (long long)i, y[i], x[i] * 3.0f);
                        break;
                    }
                memcpy(first, y, (size_t)total * 4);
            } else {
                CHECKF(!memcmp(first, y, (size_t)total * 4), "isa %d, %d threads differ", isa, t);
            }
        }
    }
    opgrad_set_max_isa(OPGRAD_ISA_COUNT - 1);
    opgrad_set_num_threads(0);
    // the norms of the same list: bitwise equal on 1 and 3 threads, and right
    float *n1 = malloc(N * 4), *n3 = malloc(N * 4);
    int64_t ones[N];
    for (int k = 0; k < N; k++) ones[k] = 1;
    aclTensorList *o1 = runs(n1, ACL_FLOAT, ones, N), *o3 = runs(n3, ACL_FLOAT, ones, N);
    opgrad_set_num_threads(1);
    CHECK_EQ(norm(xl, 2, o1), ACLNN_SUCCESS);
    opgrad_set_num_threads(3);
    CHECK_EQ(norm(xl, 2, o3), ACLNN_SUCCESS);
    opgrad_set_num_threads(0);
    CHECK(!memcmp(n1, n3, N * 4));
    int64_t at = 0;
    for (int k = 0; k < N; k++) {
        double s = 0;
        for (int64_t i = 0; i < sizes[k]; i++) s += (double)x[at + i] * x[at + i];
        at += sizes[k];
        CHECKF(fabs(n1[k] - sqrt(s)) <= 2 * test_ulp32(sqrt(s)), "norm %d: %.9g, want %.9g", k,
               n1[k], sqrt(s));
    }
    aclDestroyTensorList(xl), aclDestroyTensorList(yl);
    aclDestroyTensorList(o1), aclDestroyTensorList(o3);
    free(x), free(y), free(first), free(n1), free(n3);
}

static void test_strided_in_place(void) {
    // x: the transpose of a [3, 4] matrix, unscaled in place through its view
    float m[12];
    for (int i = 0; i < 12; i++) m[i] = (float)i;
    int64_t dims[2] = {4, 3}, strides[2] = {1, 4}, storage[2] = {3, 4};
    aclTensor *t = aclCreateTensor(dims, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, storage, 2, m);
    aclTensorList *l = aclCreateTensorList((const aclTensor *const *)&t, 1);
    float found = 0, inv = 0.25f;
    aclTensor *tf = one_f32(&found), *ti = one_f32(&inv);
    CHECK_EQ(unscale(l, tf, ti), ACLNN_SUCCESS);
    for (int i = 0; i < 12; i++) CHECKF(m[i] == i * 0.25f, "m[%d] = %g", i, m[i]);
    CHECK(found == 0);
    aclDestroyTensorList(l), aclDestroyTensor(tf), aclDestroyTensor(ti);
}

static void test_norm_orders(void) {
    float x[5] = {3, -4, 0, 1, -2}, out[3];
    const int64_t sizes[3] = {2, 3, 0}, ones[3] = {1, 1, 1};
    aclTensorList *xl = runs(x, ACL_FLOAT, sizes, 3), *ol = runs(out, ACL_FLOAT, ones, 3);
    struct {
        double p;
        float want[3];
    } cases[] = {
        {2, {5, sqrtf(5), 0}},
        {1, {7, 3, 0}},
        {INFINITY, {4, 2, 0}},
        {-INFINITY, {3, 0, INFINITY}},
        {0, {2, 2, 0}},
        {3, {(float)cbrt(91.0), (float)cbrt(9.0), 0}},
        {0.5, {(float)pow(sqrt(3) + 2, 2), (float)pow(1 + sqrt(2), 2), 0}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        CHECK_EQ(norm(xl, cases[c].p, ol), ACLNN_SUCCESS);
        for (int k = 0; k < 3; k++)
            CHECKF(out[k] == cases[c].want[k], "p = %g, norm %d = %.9g, want %.9g", cases[c].p, k,
                   out[k], cases[c].want[k]);
    }
    x[3] = NAN; // propagates into its tensor's norm; order 0 counts it as a non-zero (PyTorch)
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        CHECK_EQ(norm(xl, cases[c].p, ol), ACLNN_SUCCESS);
        bool second = cases[c].p == 0 ? out[1] == 2 : isnan(out[1]);
        CHECKF(out[0] == cases[c].want[0] && second, "p = %g with a NaN: %g %g", cases[c].p, out[0],
               out[1]);
    }
    aclDestroyTensorList(xl), aclDestroyTensorList(ol);
}

typedef struct scaler {
    aclDataType dt;
    uint16_t scale16, found16, out16;
    float scale, found, out;
    int32_t tracker, out_tracker;
} scaler;

static aclnnStatus update(scaler *s, double growth, double backoff, int64_t interval) {
    int64_t one = 1;
    bool f32 = s->dt == ACL_FLOAT;
    aclTensor *sc = test_tensor(&one, 1, s->dt, f32 ? (void *)&s->scale : &s->scale16);
    aclTensor *fi = test_tensor(&one, 1, s->dt, f32 ? (void *)&s->found : &s->found16);
    aclTensor *os = test_tensor(&one, 1, s->dt, f32 ? (void *)&s->out : &s->out16);
    aclTensor *tr = test_tensor(&one, 1, ACL_INT32, &s->tracker);
    aclTensor *ot = test_tensor(&one, 1, ACL_INT32, &s->out_tracker);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus st =
        aclnnAmpUpdateScaleGetWorkspaceSize(sc, tr, fi, growth, backoff, interval, os, ot, &ws, &e);
    st = test_run(st, ws, e, aclnnAmpUpdateScale, NULL);
    aclDestroyTensor(sc), aclDestroyTensor(fi), aclDestroyTensor(os);
    aclDestroyTensor(tr), aclDestroyTensor(ot);
    return st;
}

static void test_update_scale_sequence(void) {
    // PyTorch's GradScaler with growth 2, backoff 0.5, interval 3 over found = 0 0 1 0 0 0 NaN
    scaler s = {.dt = ACL_FLOAT, .scale = 65536, .tracker = 0};
    const float found[] = {0, 0, 1, 0, 0, 0, NAN};
    const float want_scale[] = {65536, 65536, 32768, 32768, 32768, 65536, 32768};
    const int32_t want_tracker[] = {1, 2, 0, 1, 2, 0, 0};
    for (int i = 0; i < 7; i++) {
        s.found = found[i];
        CHECK_EQ(update(&s, 2, 0.5, 3), ACLNN_SUCCESS);
        CHECKF(s.out == want_scale[i] && s.out_tracker == want_tracker[i],
               "step %d: scale %g tracker %d, want %g %d", i, s.out, s.out_tracker, want_scale[i],
               want_tracker[i]);
        s.scale = s.out, s.tracker = s.out_tracker;
    }
    // fp16: 40000 * 2 overflows fp16: kept, tracker reset; bf16 grows (its range is fp32's)
    scaler h = {.dt = ACL_FLOAT16, .tracker = 2};
    test_store(&h.scale16, 0, ACL_FLOAT16, 40000);
    test_store(&h.found16, 0, ACL_FLOAT16, 0);
    CHECK_EQ(update(&h, 2, 0.5, 3), ACLNN_SUCCESS);
    CHECK(test_load(&h.out16, 0, ACL_FLOAT16) == 40000 && h.out_tracker == 0);
    scaler b = {.dt = ACL_BF16, .tracker = 2};
    test_store(&b.scale16, 0, ACL_BF16, 40000);
    test_store(&b.found16, 0, ACL_BF16, 0);
    CHECK_EQ(update(&b, 2, 0.5, 3), ACLNN_SUCCESS);
    CHECK(test_load(&b.out16, 0, ACL_BF16) == test_round_to(ACL_BF16, 80000) && b.out_tracker == 0);
}

static void test_statuses(void) {
    float a[6] = {0}, found = 0, inv = 1, scale = 1;
    int32_t tracker = 0;
    int64_t d2[1] = {2}, d3[1] = {3}, one = 1, two = 2;
    aclTensor *t2 = test_tensor(d2, 1, ACL_FLOAT, a), *t3 = test_tensor(d3, 1, ACL_FLOAT, a + 2);
    aclTensorList *l2 = aclCreateTensorList((const aclTensor *const *)&t2, 1);
    aclTensorList *l3 = aclCreateTensorList((const aclTensor *const *)&t3, 1);
    aclTensor *tf = one_f32(&found), *ti = one_f32(&inv);
    aclTensor *fi16 = test_tensor(&one, 1, ACL_FLOAT16, &found);
    aclTensor *pair = test_tensor(&two, 1, ACL_FLOAT, a);
    uint64_t ws;
    aclOpExecutor *e;
    CHECK_EQ(aclnnForeachNonFiniteCheckAndUnscaleGetWorkspaceSize(NULL, tf, ti, &ws, &e),
             ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("scaledGrads is NULL");
    CHECK_EQ(aclnnForeachNonFiniteCheckAndUnscaleGetWorkspaceSize(l2, fi16, ti, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("foundInf has dtype float16");
    CHECK_EQ(aclnnForeachNonFiniteCheckAndUnscaleGetWorkspaceSize(l2, tf, pair, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("invScale has 2 elements");
    // two lists of different lengths / shapes
    const aclTensor *both[2] = {test_tensor(d2, 1, ACL_FLOAT, a), test_tensor(d3, 1, ACL_FLOAT, a)};
    aclTensorList *l23 = aclCreateTensorList(both, 2);
    double p = 2;
    aclScalar *ps = aclCreateScalar(&p, ACL_DOUBLE);
    CHECK_EQ(aclnnForeachNormGetWorkspaceSize(l23, ps, l2, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out has 1 tensors and x 2");
    CHECK_EQ(aclnnForeachNormGetWorkspaceSize(l2, ps, l3, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("it must hold one element");
    float f = 2;
    aclScalar *fs = aclCreateScalar(&f, ACL_FLOAT);
    CHECK_EQ(aclnnForeachMulScalarV2GetWorkspaceSize(l2, fs, l3, &ws, &e), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("out[0] has shape [3]; it must be x[0]'s, [2]");
    // AmpUpdateScale: shapes and interval are tiling errors upstream (561002)
    aclTensor *sc = one_f32(&scale), *tr = test_tensor(&one, 1, ACL_INT32, &tracker);
    aclTensor *tr2 = test_tensor(&two, 1, ACL_INT32, a);
    CHECK_EQ(aclnnAmpUpdateScaleGetWorkspaceSize(sc, tr, tf, 2, 0.5, 0, sc, tr, &ws, &e),
             ACLNN_ERR_INNER_TILING_ERROR);
    CHECK_MSG("growthInterval is 0");
    CHECK_EQ(aclnnAmpUpdateScaleGetWorkspaceSize(sc, tr2, tf, 2, 0.5, 10, sc, tr, &ws, &e),
             ACLNN_ERR_INNER_TILING_ERROR);
    CHECK_MSG("growthTracker has shape [2]");
    CHECK_EQ(aclnnAmpUpdateScaleGetWorkspaceSize(sc, tf, tf, 2, 0.5, 10, sc, tr, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("growthTracker has dtype float32; it must be int32");
    CHECK_EQ(aclnnAmpUpdateScaleGetWorkspaceSize(sc, tr, fi16, 2, 0.5, 10, sc, tr, &ws, &e),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("foundInf has dtype float16; it must be currentScale's, float32");
    aclDestroyScalar(ps), aclDestroyScalar(fs);
    aclDestroyTensorList(l23);
    aclDestroyTensorList(l2), aclDestroyTensorList(l3);
    aclDestroyTensor(tf), aclDestroyTensor(ti), aclDestroyTensor(fi16), aclDestroyTensor(pair);
    aclDestroyTensor(sc), aclDestroyTensor(tr), aclDestroyTensor(tr2);
}

int main(void) {
    aclInit(NULL);
    RUN(test_unscale_finds_every_nonfinite);
    RUN(test_walks_many_and_large);
    RUN(test_strided_in_place);
    RUN(test_norm_orders);
    RUN(test_update_scale_sequence);
    RUN(test_statuses);
    return test_summary();
}
