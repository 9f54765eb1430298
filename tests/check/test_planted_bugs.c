/* The checker must catch deliberately broken operators with the right diagnosis, and pass the
 * correct twins of the same operators. Each broken operator is a real one (mish through the
 * aclnn API, or a plain-C elementwise multiply) with one classic mistake planted. A catch table
 * is printed at the end. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "check/compare.h"
#include "check/reference.h"
#include "tensor/dtype.h"
#include "test.h"

static const ogc_op *mish(void) { return ogc_registry_find("mish"); }

// ---- element access on the checker's tensors and results

static int64_t result_numel(const ogc_result *r) {
    int64_t n = 1;
    for (int d = 0; d < r->ndim; d++) n *= r->dims[d];
    return n;
}

// Element `flat` (row-major over out_dims) of tensor t broadcast to out_dims.
static double read_bcast(const aclTensor *t, const int64_t *out_dims, int out_ndim, int64_t flat) {
    int64_t pos = t->offset;
    for (int d = out_ndim - 1; d >= 0; d--) {
        int64_t i = flat % out_dims[d];
        flat /= out_dims[d];
        int td = t->ndim - out_ndim + d;
        if (td >= 0 && t->dims[td] != 1) pos += i * t->strides[td];
    }
    return ogc_load(t->data, pos, t->dtype);
}

// ---- a plain-C multiply y = a * b with broadcasting, correct and broken variants

static double mul_ref_forward(const ogc_op *op, const double *x, double *saved) {
    (void)op, (void)saved;
    return x[0] * x[1];
}
static void mul_ref_backward(const ogc_op *op, const double *x, const double *saved, double gy,
                             double *gx, double *mag) {
    (void)op, (void)saved;
    gx[0] = gy * x[1];
    gx[1] = gy * x[0];
    mag[0] = fabs(gx[0]);
    mag[1] = fabs(gx[1]);
}

static int mul_forward(ogc_call *c) {
    ogc_result *y = &c->results[0];
    for (int64_t i = 0; i < result_numel(y); i++)
        ogc_store(y->data, i, y->dtype,
                  read_bcast(c->in[0], y->dims, y->ndim, i) *
                      read_bcast(c->in[1], y->dims, y->ndim, i));
    return 0;
}

// The bug switches of the multiply's backward.
enum { MUL_OK, MUL_UNREDUCED, MUL_ONE_GRAD, MUL_UNWIRED };
static int mul_bug;

static int mul_backward(ogc_call *c) {
    const aclTensor *g = c->grad_out;
    int nd = g->ndim;
    const int64_t *od = g->dims;
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= od[d];
    for (int k = 0; k < 2; k++) {
        ogc_result *r = &c->results[k];
        if (mul_bug == MUL_UNREDUCED && k == 1) { // gradient left in the output's shape
            r->ndim = nd;
            for (int d = 0; d < nd; d++) r->dims[d] = od[d];
        }
        memset(r->data, 0, r->capacity);
        if (mul_bug == MUL_UNWIRED && k == 1) continue; // never written
        int64_t rn = result_numel(r);
        double *acc = calloc((size_t)rn + 1, sizeof *acc);
        if (!acc) return 1;
        for (int64_t i = 0; i < n; i++) {
            // index of the output element in r's shape (r broadcasts to the output)
            int64_t flat = i, pos = 0, stride = 1;
            for (int d = nd - 1; d >= 0; d--) {
                int64_t idx = flat % od[d];
                flat /= od[d];
                int rd = r->ndim - nd + d;
                if (rd >= 0) {
                    if (r->dims[rd] != 1) pos += idx * stride;
                    stride *= r->dims[rd];
                }
            }
            double gv = ogc_load(g->data, g->offset + i, g->dtype);
            acc[pos] += gv * read_bcast(c->in[1 - k], od, nd, i);
        }
        for (int64_t j = 0; j < rn; j++) ogc_store(r->data, j, r->dtype, acc[j]);
        free(acc);
    }
    if (mul_bug == MUL_ONE_GRAD) c->nresults = 1;
    return 0;
}

static ogc_op mul_op(const char *name) {
    ogc_op op = {
        .name = name,
        .api = "plain C (test)",
        .nin = 2,
        .in = {{"a", true}, {"b", true}},
        .dtypes = 1ull << ACL_FLOAT,
        .lo = -4,
        .hi = 4,
        .fp32_ulps = 2,
        .ref_forward = mul_ref_forward,
        .ref_backward = mul_ref_backward,
        .forward = mul_forward,
        .backward = mul_backward,
    };
    return op;
}

// ---- y = 3 x whose backward forgets the 3

static double scale3_ref_forward(const ogc_op *op, const double *x, double *saved) {
    (void)op, (void)saved;
    return 3 * x[0];
}
static void scale3_ref_backward(const ogc_op *op, const double *x, const double *saved, double gy,
                                double *gx, double *mag) {
    (void)op, (void)x, (void)saved;
    gx[0] = 3 * gy;
    mag[0] = fabs(gx[0]);
}
static int scale3_forward(ogc_call *c) {
    ogc_result *y = &c->results[0];
    for (int64_t i = 0; i < result_numel(y); i++)
        ogc_store(y->data, i, y->dtype, 3 * read_bcast(c->in[0], y->dims, y->ndim, i));
    return 0;
}
static int scale3_backward_missing_factor(ogc_call *c) {
    ogc_result *r = &c->results[0];
    for (int64_t i = 0; i < result_numel(r); i++)
        ogc_store(r->data, i, r->dtype, ogc_load(c->grad_out->data, i, c->grad_out->dtype));
    return 0;
}

// ---- mish through the real API, with mistakes added around it

static int negate_after(ogc_call *c) {
    int st = mish()->backward(c);
    ogc_result *r = &c->results[0];
    for (int64_t i = 0; i < result_numel(r); i++)
        ogc_store(r->data, i, r->dtype, -ogc_load(r->data, i, r->dtype));
    return st;
}

static int ignore_grad_output(ogc_call *c) { // computes mish'(x), as if grad_output were 1
    ogc_result *r = &c->results[0];
    for (int64_t i = 0; i < result_numel(r); i++)
        ogc_store(r->data, i, r->dtype,
                  og_ref_mish_grad(read_bcast(c->in[0], r->dims, r->ndim, i)));
    return 0;
}

static int forward_writes_fp32(ogc_call *c) { // an fp16 operator that stores fp32 results
    ogc_result *y = &c->results[0];
    for (int64_t i = 0; i < result_numel(y); i++)
        ((float *)y->data)[i] = (float)og_ref_mish(read_bcast(c->in[0], y->dims, y->ndim, i));
    y->dtype = ACL_FLOAT;
    return 0;
}

static int forward_flattens(ogc_call *c) { // writes a 1-d output instead of the declared shape
    int st = mish()->forward(c);
    ogc_result *y = &c->results[0];
    int64_t n = result_numel(y);
    y->ndim = 1;
    y->dims[0] = n;
    return st;
}

// An off-by-one at the engine's 4096-element tiles: the last element of each full tile takes
// its neighbour's value.
static int forward_tile_off_by_one(ogc_call *c) {
    int st = mish()->forward(c);
    ogc_result *y = &c->results[0];
    int64_t n = result_numel(y);
    for (int64_t end = 4096; end < n; end += 4096)
        ogc_store(y->data, end - 1, y->dtype, ogc_load(y->data, end, y->dtype));
    return st;
}

// Right in fp32 and bf16; the fp16 path rounds its result to bf16 precision.
static int backward_fp16_bug(ogc_call *c) {
    int st = mish()->backward(c);
    ogc_result *r = &c->results[0];
    if (r->dtype == ACL_FLOAT16)
        for (int64_t i = 0; i < result_numel(r); i++)
            ogc_store(r->data, i, r->dtype,
                      og_bf16_to_f32(og_f32_to_bf16((float)ogc_load(r->data, i, r->dtype))));
    return st;
}

// Under mixed precision (fp32 grad_output for an fp16 input) the gradient is written in
// grad_output's dtype instead of the input's.
static int backward_follows_grad_dtype(ogc_call *c) {
    ogc_result *r = &c->results[0];
    r->dtype = c->grad_out->dtype;
    for (int64_t i = 0; i < result_numel(r); i++)
        ogc_store(r->data, i, r->dtype,
                  ogc_load(c->grad_out->data, i, c->grad_out->dtype) *
                      og_ref_mish_grad(read_bcast(c->in[0], r->dims, r->ndim, i)));
    return 0;
}

// ---- the catch table

typedef struct planted {
    const char *bug;
    ogc_op op;
    int mul_bug;
    aclDataType dtype;
    const char *layout;
    const char *expect; // substring of the diagnosis
} planted;

static int caught, planted_total;

static void expect_caught(const planted *p) {
    ogc_options opt = {.mode = OGC_MODE_FAST, .seed = 7};
    ogc_report rep;
    mul_bug = p->mul_bug;
    ogc_status st = ogc_check_case(&p->op, p->dtype, p->layout, &opt, &rep);
    bool ok = st == OGC_FAIL && strstr(rep.diagnosis, p->expect) != NULL;
    caught += ok;
    planted_total++;
    printf("  %-34s %-9s %-10s %-5s %s\n", p->bug, og_dtype_name(p->dtype), p->layout,
           ok ? "yes" : "NO", rep.diagnosis);
    CHECKF(ok, "%s: status %s, diagnosis \"%s\", expected one containing \"%s\"", p->bug,
           ogc_status_name(st), rep.diagnosis, p->expect);
    mul_bug = MUL_OK;
}

static ogc_op broken_mish(int (*fwd)(ogc_call *), int (*bwd)(ogc_call *)) {
    ogc_op op = *mish();
    if (fwd) op.forward = fwd;
    if (bwd) op.backward = bwd;
    return op;
}

static void test_planted_bugs_are_caught(void) {
    ogc_op scale3 = {
        .name = "scale3",
        .api = "plain C (test)",
        .nin = 1,
        .in = {{"x", true}},
        .dtypes = 1ull << ACL_FLOAT,
        .lo = -4,
        .hi = 4,
        .fp32_ulps = 2,
        .ref_forward = scale3_ref_forward,
        .ref_backward = scale3_ref_backward,
        .forward = scale3_forward,
        .backward = scale3_backward_missing_factor,
    };
    const planted cases[] = {
        {"sign flip", broken_mish(NULL, negate_after), 0, ACL_FLOAT, "contiguous", "wrong sign"},
        {"missing factor", scale3, 0, ACL_FLOAT, "contiguous", "constant factor 0.333333"},
        {"missing broadcast reduction", mul_op("mul"), MUL_UNREDUCED, ACL_FLOAT, "bcast1",
         "grad of input 1 ('b') has shape [5,7], input is [7]: missing reduction over dim 0"},
        {"wrong gradient count", mul_op("mul"), MUL_ONE_GRAD, ACL_FLOAT, "contiguous",
         "backward returned 1 gradient, the op has 2 differentiable inputs"},
        {"wrong output dtype", broken_mish(forward_writes_fp32, NULL), 0, ACL_FLOAT16, "contiguous",
         "declared output dtype float16, kernel wrote float32"},
        {"wrong output shape", broken_mish(forward_flattens, NULL), 0, ACL_FLOAT, "contiguous",
         "declared output shape [5,7], kernel wrote [35]"},
        {"ignores grad_output", broken_mish(NULL, ignore_grad_output), 0, ACL_FLOAT, "contiguous",
         "backward ignores grad_output"},
        {"one input never wired", mul_op("mul"), MUL_UNWIRED, ACL_FLOAT, "contiguous",
         "input 'b' is not wired"},
        {"off-by-one at a tile boundary", broken_mish(forward_tile_off_by_one, NULL), 0, ACL_FLOAT,
         "large", "only at every 4096-th element from 4095"},
        {"off-by-one at one tile boundary", broken_mish(forward_tile_off_by_one, NULL), 0,
         ACL_FLOAT, "sweep", "only at element 4095 of 4101, on a 64-element block boundary"},
        {"gradient dtype follows grad_output", broken_mish(NULL, backward_follows_grad_dtype), 0,
         ACL_FLOAT16, "mixed",
         "has dtype float32, input is float16: it follows grad_output's dtype"},
        {"wrong only in the fp16 path", broken_mish(NULL, backward_fp16_bug), 0, ACL_FLOAT16,
         "contiguous", "gradient of 'self' differs from the float64 reference"},
    };
    printf("  %-34s %-9s %-10s %-5s %s\n", "planted bug", "dtype", "layout", "caught", "diagnosis");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) expect_caught(&cases[i]);
    printf("  caught %d of %d planted bugs\n", caught, planted_total);
}

// The fp16-only bug passes in fp32 and bf16: the failure really is confined to one dtype.
static void test_fp16_bug_is_confined(void) {
    ogc_op op = broken_mish(NULL, backward_fp16_bug);
    ogc_options opt = {.mode = OGC_MODE_FAST, .seed = 7};
    ogc_report rep;
    CHECK_EQ(ogc_check_case(&op, ACL_FLOAT, "contiguous", &opt, &rep), OGC_PASS);
    CHECK_EQ(ogc_check_case(&op, ACL_BF16, "contiguous", &opt, &rep), OGC_PASS);
    CHECK_EQ(ogc_check_case(&op, ACL_FLOAT16, "contiguous", &opt, &rep), OGC_FAIL);
}

// The correct twins pass on every layout, so the failures above come from the planted bugs.
static void test_correct_twins_pass(void) {
    ogc_op mul = mul_op("mul");
    ogc_options opt = {.mode = OGC_MODE_FULL, .seed = 11};
    for (int l = 0; l < ogc_layout_count(); l++) {
        const char *layout = ogc_layout_name(l);
        ogc_report rep;
        ogc_status st = ogc_check_case(&mul, ACL_FLOAT, layout, &opt, &rep);
        CHECKF(st == OGC_PASS || st == OGC_SKIPPED, "mul %s: %s: %s", layout, ogc_status_name(st),
               rep.diagnosis);
        st = ogc_check_formula(&mul, layout, &opt, &rep);
        CHECKF(st == OGC_PASS || st == OGC_SKIPPED, "mul formula %s: %s: %s", layout,
               ogc_status_name(st), rep.diagnosis);
    }
}

// A wrong float64 reference (the formula itself) is caught by O1 finite differences.
static void scale3_wrong_ref_backward(const ogc_op *op, const double *x, const double *saved,
                                      double gy, double *gx, double *mag) {
    (void)op, (void)x, (void)saved;
    gx[0] = 2 * gy;
    mag[0] = fabs(gx[0]);
}

static void test_wrong_formula_is_caught(void) {
    ogc_op op = {
        .name = "scale3",
        .nin = 1,
        .in = {{"x", true}},
        .dtypes = 1ull << ACL_FLOAT,
        .lo = -4,
        .hi = 4,
        .fp32_ulps = 2,
        .ref_forward = scale3_ref_forward,
        .ref_backward = scale3_wrong_ref_backward,
    };
    ogc_options opt = {.mode = OGC_MODE_FULL, .seed = 3};
    ogc_report rep;
    CHECK_EQ(ogc_check_formula(&op, "contiguous", &opt, &rep), OGC_FAIL);
    CHECK(strstr(rep.diagnosis, "disagrees with finite differences") != NULL);
    opt.mode = OGC_MODE_FAST;
    CHECK_EQ(ogc_check_formula(&op, "contiguous", &opt, &rep), OGC_FAIL);
}

// Test data that never reaches an input is MISTRUSTED, not PASS.
static void zero_ref_backward(const ogc_op *op, const double *x, const double *saved, double gy,
                              double *gx, double *mag) {
    (void)op, (void)x, (void)saved, (void)gy;
    gx[0] = 0;
    mag[0] = 0;
}
static double zero_ref_forward(const ogc_op *op, const double *x, double *saved) {
    (void)op, (void)x, (void)saved;
    return 0;
}
static int zero_forward(ogc_call *c) {
    memset(c->results[0].data, 0, c->results[0].capacity);
    return 0;
}
static int zero_backward(ogc_call *c) {
    memset(c->results[0].data, 0, c->results[0].capacity);
    return 0;
}

static void test_degenerate_data_is_mistrusted(void) {
    ogc_op op = {
        .name = "zero",
        .nin = 1,
        .in = {{"x", true}},
        .dtypes = 1ull << ACL_FLOAT,
        .lo = -4,
        .hi = 4,
        .fp32_ulps = 2,
        .ref_forward = zero_ref_forward,
        .ref_backward = zero_ref_backward,
        .forward = zero_forward,
        .backward = zero_backward,
    };
    ogc_options opt = {.mode = OGC_MODE_FAST, .seed = 3};
    ogc_report rep;
    CHECK_EQ(ogc_check_case(&op, ACL_FLOAT, "contiguous", &opt, &rep), OGC_MISTRUSTED);
    CHECK(strstr(rep.diagnosis, "mostly zero") != NULL ||
          strstr(rep.diagnosis, "never exercised") != NULL);
}

int main(void) {
    RUN(test_planted_bugs_are_caught);
    RUN(test_fp16_bug_is_confined);
    RUN(test_correct_twins_pass);
    RUN(test_wrong_formula_is_caught);
    RUN(test_degenerate_data_is_mistrusted);
    return test_summary();
}
