/* One planted bug per diagnosis of the checker that test_planted_bugs.c does not already name:
 * 16-bit rounding (truncation, and a wrong rounding direction), the in-place form (wrong values,
 * writes outside its view, an error status), thread-count dependence and non-determinism of
 * forward and backward, a backward that does not scale with grad_output, a gradient that is not
 * 0 for grad_output = 0, error statuses and result counts; and the ordering rule: a specific
 * cause found late outranks a generic symptom found early. Each bug is planted around the real
 * mish or leaky_relu operators, so everything else about the case is right. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_leaky_relu.h"
#include "aclnnop/aclnn_mish.h"
#include "check/check.h"
#include "check/compare.h"
#include "check/reference.h"
#include "opgrad/opgrad.h"
#include "tensor/dtype.h"
#include "test.h"

static const ogc_op *mish(void) { return ogc_registry_find("mish"); }

static int64_t numel(const ogc_result *r) {
    int64_t n = 1;
    for (int d = 0; d < r->ndim; d++) n *= r->dims[d];
    return n;
}

// Element i of a contiguous input tensor (the layouts used here have contiguous inputs).
static double input_elem(const aclTensor *t, int64_t i) {
    return ogc_load(t->data, t->offset + i, t->dtype);
}

// ---- 16-bit rounding

// bf16 of f rounded toward zero (truncated) or toward +infinity.
static uint16_t bf16_truncated(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t)(u >> 16);
}
static uint16_t bf16_up(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    bool inexact = (u & 0xffffu) != 0;
    uint16_t h = (uint16_t)(u >> 16);
    return inexact && f > 0 ? (uint16_t)(h + 1) : h; // up: away from zero above 0, toward below
}

// mish in fp32 (the float64 reference rounded to fp32), stored with a planted bf16 rounding
static int forward_bf16_truncates(ogc_call *c) {
    ogc_result *y = &c->results[0];
    for (int64_t i = 0; i < numel(y); i++)
        ((uint16_t *)y->data)[i] = bf16_truncated((float)og_ref_mish(input_elem(c->in[0], i)));
    return 0;
}
static int forward_bf16_rounds_up(ogc_call *c) {
    ogc_result *y = &c->results[0];
    for (int64_t i = 0; i < numel(y); i++)
        ((uint16_t *)y->data)[i] = bf16_up((float)og_ref_mish(input_elem(c->in[0], i)));
    return 0;
}

// ---- in-place forms

// A leaky_relu whose in-place form takes the default slope instead of the attribute.
static int leaky_inplace_default_slope(ogc_call *c) {
    float slope = 0.01f;
    aclScalar *s = aclCreateScalar(&slope, ACL_FLOAT);
    uint64_t ws;
    aclOpExecutor *ex;
    int st = aclnnInplaceLeakyReluGetWorkspaceSize(c->in[0], s, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnInplaceLeakyRelu);
    aclDestroyScalar(s);
    return st;
}

// The real in-place mish, then a write to the storage element before the view (the "offset"
// layout starts 3 elements in).
static int mish_inplace_writes_before(ogc_call *c) {
    uint64_t ws;
    aclOpExecutor *ex;
    int st = aclnnInplaceMishGetWorkspaceSize(c->in[0], &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnInplaceMish);
    if (c->in[0]->offset > 0) ogc_store(c->in[0]->data, c->in[0]->offset - 1, c->dtype, 1.0);
    return st;
}

static int mish_inplace_refuses(ogc_call *c) {
    (void)c;
    return ACLNN_ERR_PARAM_INVALID;
}

// ---- determinism

// The real forward, with its last element one ulp off when run on one thread.
static int forward_thread_dependent(ogc_call *c) {
    int st = mish()->forward(c);
    ogc_result *y = &c->results[0];
    int64_t n = numel(y);
    if (n > 0 && opgrad_get_num_threads() == 1) ((uint32_t *)y->data)[n - 1] ^= 1u;
    return st;
}

// The real backward, with its last element one ulp off on every other call.
static int backward_flips_every_other_call(ogc_call *c) {
    static unsigned calls;
    int st = mish()->backward(c);
    ogc_result *r = &c->results[0];
    int64_t n = numel(r);
    if (n > 0 && calls++ % 2) ((uint32_t *)r->data)[n - 1] ^= 1u;
    return st;
}

// ---- linearity in grad_output

// mish'(x) g with g clamped to [-2, 2]: right for the checker's grad_output (|g| <= 2), wrong for
// 2 g.
static int backward_clamps_grad(ogc_call *c) {
    ogc_result *r = &c->results[0];
    for (int64_t i = 0; i < numel(r); i++) {
        double g = ogc_load(c->grad_out->data, i, c->grad_out->dtype);
        g = fmin(fmax(g, -2), 2);
        ogc_store(r->data, i, r->dtype, g * og_ref_mish_grad(input_elem(c->in[0], i)));
    }
    return 0;
}

// The real backward plus a term that does not scale with grad_output (too small to show in the
// values).
static int backward_adds_constant(ogc_call *c) {
    int st = mish()->backward(c);
    ogc_result *r = &c->results[0];
    for (int64_t i = 0; i < numel(r); i++)
        ogc_store(r->data, i, r->dtype, ogc_load(r->data, i, r->dtype) + 1e-30);
    return st;
}

// ---- ordering: a stale value at every tile edge

// The real backward, except that the last element of each 4096-element tile is the value the
// previous call computed there (0 on the first call): the gradient is wrong at the tile edges
// and B(2g) != 2 B(g) there. The named cause (the tile edges) must win over linearity, which the
// case finds first.
static int backward_stale_tile_edge(ogc_call *c) {
    static float stash[1 << 17];
    int st = mish()->backward(c);
    ogc_result *r = &c->results[0];
    int64_t n = numel(r);
    for (int64_t i = 4095; i < n && i < (int64_t)(sizeof stash / sizeof *stash); i += 4096) {
        float now = ((float *)r->data)[i];
        ((float *)r->data)[i] = stash[i];
        stash[i] = now;
    }
    return st;
}

// ---- statuses and counts

static int forward_fails(ogc_call *c) {
    (void)c;
    return ACLNN_ERR_PARAM_INVALID;
}
static int backward_fails(ogc_call *c) {
    (void)c;
    return ACLNN_ERR_INNER;
}
static int forward_two_results(ogc_call *c) {
    int st = mish()->forward(c);
    c->nresults = 2;
    return st;
}

// ---------------------------------------------------------------------------------------------

typedef struct planted {
    const char *bug;
    ogc_op op;
    aclDataType dtype;
    const char *layout;
    const char *expect;     // substring of the diagnosis
    const char *not_expect; // a substring it must not contain (NULL: none)
} planted;

static ogc_op with(const ogc_op *base, int (*fwd)(ogc_call *), int (*bwd)(ogc_call *),
                   int (*inplace)(ogc_call *)) {
    ogc_op op = *base;
    if (fwd) op.forward = fwd;
    if (bwd) op.backward = bwd;
    if (inplace) op.forward_inplace = inplace;
    return op;
}

static void expect_diagnosis(const planted *p) {
    ogc_options opt = {.mode = OGC_MODE_FAST, .seed = 5};
    ogc_report rep;
    ogc_status st = ogc_check_case(&p->op, p->dtype, p->layout, &opt, &rep);
    bool ok = st == OGC_FAIL && strstr(rep.diagnosis, p->expect) &&
              !(p->not_expect && strstr(rep.diagnosis, p->not_expect));
    printf("  %-36s %-8s %-10s %-4s %s\n", p->bug, og_dtype_name(p->dtype), p->layout,
           ok ? "yes" : "NO", rep.diagnosis);
    CHECKF(ok, "%s: status %s, diagnosis \"%s\", expected one containing \"%s\"%s%s", p->bug,
           ogc_status_name(st), rep.diagnosis, p->expect, p->not_expect ? " and not " : "",
           p->not_expect ? p->not_expect : "");
}

static void test_each_diagnosis(void) {
    const ogc_op *m = mish(), *leaky = ogc_registry_find("leaky_neg");
    const planted cases[] = {
        {"bf16 store truncates", with(m, forward_bf16_truncates, NULL, NULL), ACL_BF16, "sweep",
         "truncates instead of rounding to nearest even", NULL},
        {"bf16 store rounds up", with(m, forward_bf16_rounds_up, NULL, NULL), ACL_BF16, "sweep",
         "rounds up (toward +infinity) instead of to nearest even", NULL},
        {"in-place form ignores its attribute",
         with(leaky, NULL, NULL, leaky_inplace_default_slope), ACL_FLOAT, "strided",
         "in-place form: output", NULL},
        {"in-place form writes outside its view", with(m, NULL, NULL, mish_inplace_writes_before),
         ACL_FLOAT, "offset", "in-place form writes outside its tensor's view", NULL},
        {"in-place form fails", with(m, NULL, NULL, mish_inplace_refuses), ACL_FLOAT, "contiguous",
         "in-place form returned status 161002", NULL},
        {"forward depends on the thread count", with(m, forward_thread_dependent, NULL, NULL),
         ACL_FLOAT, "large", "forward depends on the thread count", NULL},
        {"backward not deterministic", with(m, NULL, backward_flips_every_other_call, NULL),
         ACL_FLOAT, "contiguous", "backward is not deterministic", NULL},
        {"backward saturates grad_output", with(m, NULL, backward_clamps_grad, NULL), ACL_FLOAT,
         "contiguous", "backward does not scale with grad_output", NULL},
        {"backward adds a constant", with(m, NULL, backward_adds_constant, NULL), ACL_FLOAT,
         "contiguous", "with grad_output = 0", NULL},
        {"stale value at tile edges", with(m, NULL, backward_stale_tile_edge, NULL), ACL_FLOAT,
         "large", "only at every 4096-th element from 4095", "does not scale"},
        {"forward fails", with(m, forward_fails, NULL, NULL), ACL_FLOAT, "contiguous",
         "forward returned status 161002", NULL},
        {"backward fails", with(m, NULL, backward_fails, NULL), ACL_FLOAT, "contiguous",
         "backward returned status 561000", NULL},
        {"forward returns two results", with(m, forward_two_results, NULL, NULL), ACL_FLOAT,
         "contiguous", "forward returned 2 result(s), the op declares 1", NULL},
    };
    printf("  %-36s %-8s %-10s %-4s %s\n", "planted bug", "dtype", "layout", "ok", "diagnosis");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) expect_diagnosis(&cases[i]);
}

// The report carries the ISA level the kernels ran at, and the reproducer names it.
static void test_report_names_the_isa(void) {
    ogc_options opt = {.mode = OGC_MODE_FAST, .seed = 1};
    ogc_report rep;
    opgrad_isa top = opgrad_active_isa();
    opgrad_set_max_isa(OPGRAD_ISA_SCALAR);
    CHECK_EQ(ogc_check_case(mish(), ACL_FLOAT, "contiguous", &opt, &rep), OGC_PASS);
    CHECK_EQ(rep.isa, OPGRAD_ISA_SCALAR);
    CHECK(strstr(rep.repro, "--isa scalar") != NULL);
    opgrad_set_max_isa(top);
    CHECK_EQ(ogc_check_formula(mish(), "contiguous", &opt, &rep), OGC_PASS);
    CHECK_EQ(rep.isa, -1);
    CHECK(strstr(rep.repro, "--isa") == NULL);
}

// Correctly rounded 16-bit results have a mean signed error near 0; truncated ones are biased
// toward zero, and the report says by how much.
static void test_bias_is_reported(void) {
    ogc_options opt = {.mode = OGC_MODE_FAST, .seed = 5};
    ogc_report rep;
    CHECK_EQ(ogc_check_case(mish(), ACL_BF16, "sweep", &opt, &rep), OGC_PASS);
    CHECKF(fabs(rep.bias_ulp) < 0.1, "bias %.3f", rep.bias_ulp);
    ogc_op trunc = with(mish(), forward_bf16_truncates, NULL, NULL);
    CHECK_EQ(ogc_check_case(&trunc, ACL_BF16, "sweep", &opt, &rep), OGC_FAIL);
    CHECKF(rep.bias_ulp < -0.1, "bias %.3f", rep.bias_ulp);
}

int main(void) {
    RUN(test_each_diagnosis);
    RUN(test_report_names_the_isa);
    RUN(test_bias_is_reported);
    return test_summary();
}
