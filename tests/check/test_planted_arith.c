/* Planted bugs in the arith family: each broken operator is a real registry entry (add, mul,
 * reduce_sum*, fused_add_scale*) running through the public aclnn API, with one classic mistake of
 * reductions and broadcast gradients added around it. The checker must catch each one with the
 * right diagnosis, and the unbroken entry must pass the very same case (so the failure comes from
 * the planted bug). A catch table is printed at the end. */
#include <math.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_mul.h"
#include "check/check.h"
#include "check/compare.h"
#include "opgrad/opgrad.h"
#include "tensor/dtype.h"
#include "test.h"

static const ogc_op *entry(const char *name) {
    const ogc_op *op = ogc_registry_find(name);
    if (!op) {
        fprintf(stderr, "no registry entry '%s'\n", name);
        abort();
    }
    return op;
}

static int64_t numel(const ogc_result *r) {
    int64_t n = 1;
    for (int d = 0; d < r->ndim; d++) n *= r->dims[d];
    return n;
}

// Element i (row-major) of a tensor with any strides.
static double tensor_elem(const aclTensor *t, int64_t i) {
    int64_t pos = t->offset;
    for (int d = t->ndim - 1; d >= 0; d--) {
        pos += i % t->dims[d] * t->strides[d];
        i /= t->dims[d];
    }
    return ogc_load(t->data, pos, t->dtype);
}

// out (a result, reshaped to grad_output's shape) = grad_output * t, through aclnnMul.
static int mul_into(ogc_call *c, const aclTensor *t, ogc_result *out) {
    out->ndim = c->grad_out->ndim;
    for (int d = 0; d < out->ndim; d++) out->dims[d] = c->grad_out->dims[d];
    aclTensor *o = ogc_result_tensor(out);
    uint64_t ws;
    aclOpExecutor *ex;
    int st = aclnnMulGetWorkspaceSize(c->grad_out, t, o, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnMul);
    aclDestroyTensor(o);
    return st;
}

// ---- fused_add_scale

// grad_bias left as g * scale in x's shape: the sum over the rows is forgotten.
static int fas_bias_unreduced(ogc_call *c) {
    int st = entry("fused_add_scale")->backward(c);
    return st ? st : mul_into(c, c->in[2], &c->results[1]);
}

// grad_scale (one element) left as g * (x + bias) in x's shape.
static int fas_scale_unreduced(ogc_call *c) {
    int st = entry("fused_add_scale1")->backward(c);
    if (st) return st;
    ogc_result *r = &c->results[2];
    r->ndim = c->grad_out->ndim;
    for (int d = 0; d < r->ndim; d++) r->dims[d] = c->grad_out->dims[d];
    int64_t cdim = c->in[1]->dims[0];
    for (int64_t i = 0; i < numel(r); i++)
        ogc_store(r->data, i, r->dtype,
                  ogc_load(c->grad_out->data, i, c->grad_out->dtype) *
                      (tensor_elem(c->in[0], i) + tensor_elem(c->in[1], i % cdim)));
    return 0;
}

// Only two of the three gradients come back.
static int fas_two_grads(ogc_call *c) {
    int st = entry("fused_add_scale")->backward(c);
    c->nresults = 2;
    return st;
}

// grad_scale = sum of g * x: the bias is forgotten inside the product.
static int fas_scale_without_bias(ogc_call *c) {
    int st = entry("fused_add_scale")->backward(c);
    if (st) return st;
    ogc_result *r = &c->results[2];
    int64_t cdim = r->dims[0], rows = c->grad_out->numel / (cdim ? cdim : 1);
    for (int64_t j = 0; j < cdim; j++) {
        double s = 0;
        for (int64_t i = 0; i < rows; i++)
            s += ogc_load(c->grad_out->data, i * cdim + j, c->grad_out->dtype) *
                 tensor_elem(c->in[0], i * cdim + j);
        ogc_store(r->data, j, r->dtype, s);
    }
    return 0;
}

// ---- add / mul

// grad_other = sum(g): alpha forgotten.
static int add_no_alpha(ogc_call *c) {
    int st = entry("add")->backward(c);
    if (st) return st;
    double alpha = c->op->attrs[0];
    ogc_result *r = &c->results[1];
    for (int64_t i = 0; i < numel(r); i++)
        ogc_store(r->data, i, r->dtype, ogc_load(r->data, i, r->dtype) / alpha);
    return 0;
}

// grad_self = sum(g * self) and grad_other = sum(g * other): the factors swapped.
static int mul_swapped(ogc_call *c) {
    aclTensor *self = c->in[0];
    c->in[0] = c->in[1];
    c->in[1] = self;
    int st = entry("mul")->backward(c);
    c->in[1] = c->in[0];
    c->in[0] = self;
    return st;
}

// ---- reduce_sum

// The backward returns grad_output as it came: not broadcast back over the summed dim.
static int rs_unexpanded(ogc_call *c) {
    ogc_result *r = &c->results[0];
    r->ndim = c->grad_out->ndim;
    for (int d = 0; d < r->ndim; d++) r->dims[d] = c->grad_out->dims[d];
    for (int64_t i = 0; i < numel(r); i++)
        ogc_store(r->data, i, r->dtype, ogc_load(c->grad_out->data, i, c->grad_out->dtype));
    return 0;
}

// A sum that depends on the thread count (its last bit flips with one thread).
static int rs_thread_dependent(ogc_call *c) {
    int st = entry("reduce_sum_all")->forward(c);
    if (st || opgrad_get_num_threads() != 1) return st;
    ogc_result *y = &c->results[0];
    if (y->dtype == ACL_FLOAT) {
        float v = ((float *)y->data)[0];
        ((float *)y->data)[0] = nextafterf(v, INFINITY);
    }
    return 0;
}

// Accumulates in the output dtype (fp16 partial sums), as a kernel without an fp32 accumulator.
static int rs_accumulates_in_dtype(ogc_call *c) {
    ogc_result *y = &c->results[0];
    const aclTensor *x = c->in[0];
    float acc = 0;
    for (int64_t i = 0; i < x->numel; i++) {
        acc += (float)tensor_elem(x, i);
        if (y->dtype == ACL_FLOAT16) acc = og_f16_to_f32(og_f32_to_f16(acc));
    }
    ogc_store(y->data, 0, y->dtype, acc);
    return 0;
}

// Sums over dim 0 where the entry says dim -1: the output has the wrong shape.
static int rs_wrong_dim(ogc_call *c) {
    ogc_op op = *entry("reduce_sum_keep0");
    ogc_call call = *c;
    call.op = &op;
    static const double dims0[] = {0, 1, 0}; // dims [0], no keepDims
    op.attrs = dims0;
    ogc_result *y = &c->results[0];
    y->ndim = 1;
    y->dims[0] = c->in[0]->dims[1];
    return op.forward(&call);
}

// ---- the catch table

typedef struct planted {
    const char *bug;
    const char *entry;          // the registry entry it breaks
    int (*forward)(ogc_call *); // replacement, or NULL
    int (*backward)(ogc_call *);
    aclDataType dtype;
    const char *layout;
    const char *expect; // substring of the diagnosis
} planted;

static int caught, planted_total;

static void expect_caught(const planted *p) {
    ogc_options opt = {.mode = OGC_MODE_FAST, .seed = 7};
    ogc_op op = *entry(p->entry);
    if (p->forward) op.forward = p->forward;
    if (p->backward) op.backward = p->backward;
    ogc_report rep;
    ogc_status st = ogc_check_case(&op, p->dtype, p->layout, &opt, &rep);
    bool ok = st == OGC_FAIL && strstr(rep.diagnosis, p->expect) != NULL;
    caught += ok;
    planted_total++;
    printf("  %-44s %-9s %-10s %-5s %s\n", p->bug, og_dtype_name(p->dtype), p->layout,
           ok ? "yes" : "NO", rep.diagnosis);
    CHECKF(ok, "%s: status %s, diagnosis \"%s\", expected one containing \"%s\"", p->bug,
           ogc_status_name(st), rep.diagnosis, p->expect);
    // the unbroken entry passes the same case
    ogc_status twin = ogc_check_case(entry(p->entry), p->dtype, p->layout, &opt, &rep);
    CHECKF(twin == OGC_PASS, "%s: the correct %s gives %s: %s", p->bug, p->entry,
           ogc_status_name(twin), rep.diagnosis);
}

static void test_planted_arith_bugs_are_caught(void) {
    opgrad_set_num_threads(2); // so that "1 thread" differs from the default
    const planted cases[] = {
        {"fused_add_scale: grad_bias not reduced", "fused_add_scale", NULL, fas_bias_unreduced,
         ACL_FLOAT, "contiguous",
         "grad of input 1 ('bias') has shape [5,7], input is [7]: missing reduction over dim 0"},
        {"fused_add_scale: [1] grad_scale not reduced", "fused_add_scale1", NULL,
         fas_scale_unreduced, ACL_FLOAT, "contiguous",
         "grad of input 2 ('scale') has shape [5,7], input is [1]: missing reduction over dims "
         "0,1"},
        {"fused_add_scale: 2 of 3 gradients", "fused_add_scale", NULL, fas_two_grads, ACL_FLOAT16,
         "contiguous", "backward returned 2 gradients, the op has 3 differentiable inputs"},
        {"fused_add_scale: grad_scale forgets the bias", "fused_add_scale", NULL,
         fas_scale_without_bias, ACL_FLOAT, "contiguous",
         "gradient of 'scale' differs from the float64 reference"},
        {"add: alpha missing from grad_other", "add", NULL, add_no_alpha, ACL_FLOAT, "bcast1",
         "gradient of 'other' is off by a constant factor 0.666667"},
        {"mul: factors swapped in grad_self", "mul", NULL, mul_swapped, ACL_BF16, "bcast0",
         "gradient of 'self' differs from the float64 reference"},
        {"reduce_sum: grad_output not broadcast back", "reduce_sum", NULL, rs_unexpanded, ACL_FLOAT,
         "contiguous",
         "grad of input 0 ('self') has shape [5], input is [5,7]: it has the forward output's "
         "shape"},
        {"reduce_sum: result depends on the threads", "reduce_sum_all", rs_thread_dependent, NULL,
         ACL_FLOAT, "contiguous", "forward depends on the thread count"},
        {"reduce_sum: accumulates in float16", "reduce_sum_all", rs_accumulates_in_dtype, NULL,
         ACL_FLOAT16, "large", "forward output differs from the float64 reference"},
        {"reduce_sum: sums the wrong dim", "reduce_sum", rs_wrong_dim, NULL, ACL_FLOAT,
         "contiguous", "declared output shape [5], kernel wrote [7]"},
    };
    printf("  %-44s %-9s %-10s %-5s %s\n", "planted bug", "dtype", "layout", "caught", "diagnosis");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) expect_caught(&cases[i]);
    printf("  caught %d of %d planted bugs\n", caught, planted_total);
}

// The float16 accumulation bug is invisible on short sums: it is the reduction length that
// exposes it, and the float32 path (no rounding) passes.
static void test_fp16_accumulation_needs_long_sums(void) {
    ogc_op op = *entry("reduce_sum_all");
    op.forward = rs_accumulates_in_dtype;
    ogc_options opt = {.mode = OGC_MODE_FAST, .seed = 7};
    ogc_report rep;
    CHECK_EQ(ogc_check_case(&op, ACL_FLOAT16, "large", &opt, &rep), OGC_FAIL);
    CHECK_EQ(ogc_check_case(&op, ACL_FLOAT, "contiguous", &opt, &rep), OGC_PASS);
}

// The shape hook and tensor-level references: layouts that do not fit an entry are skipped with
// the "layout does not apply" diagnosis (which `opgrad check` leaves out), not failed.
static void test_layouts_that_do_not_apply(void) {
    ogc_options opt = {.mode = OGC_MODE_FAST, .seed = 1};
    ogc_report rep;
    CHECK_EQ(ogc_check_case(entry("fused_add_scale"), ACL_FLOAT, "scalar", &opt, &rep),
             OGC_SKIPPED);
    CHECK(strncmp(rep.diagnosis, "layout does not apply", 21) == 0);
    CHECK_EQ(ogc_check_case(entry("fused_add_scale1"), ACL_FLOAT, "empty", &opt, &rep),
             OGC_SKIPPED);
    CHECK_EQ(ogc_check_case(entry("fused_add_scale"), ACL_FLOAT, "empty", &opt, &rep), OGC_PASS);
    CHECK_EQ(ogc_check_case(entry("reduce_sum_outer"), ACL_FLOAT, "large", &opt, &rep),
             OGC_SKIPPED);
    CHECK_EQ(ogc_check_formula(entry("reduce_sum_outer"), "large", &opt, &rep), OGC_SKIPPED);
    CHECK_EQ(ogc_check_case(entry("reduce_sum"), ACL_BF16, "bcast0", &opt, &rep), OGC_SKIPPED);
    CHECK_EQ(ogc_check_formula(entry("reduce_sum_all"), "rank8", &opt, &rep), OGC_PASS);
}

int main(void) {
    RUN(test_planted_arith_bugs_are_caught);
    RUN(test_fp16_accumulation_needs_long_sums);
    RUN(test_layouts_that_do_not_apply);
    return test_summary();
}
