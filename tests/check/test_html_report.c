/* The HTML report (src/check/report_html.h) through its C API: the error samples the checker
 * records (bounded, deterministic, the worst kept), and a report with a planted failure (mish
 * whose backward has the wrong sign), a mistrusted and a skipped case, a passing twin and a
 * synthetic row with hostile text and non-finite metrics: well formed, self-contained, every
 * row present, the failure's diagnosis and reproducer and its own plot data, markup in a
 * diagnosis escaped.
 *
 *   test_html_report [OUT.html]   also keeps the report there (tests/html/run.sh loads it in a
 *                                  headless browser) */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check/check.h"
#include "check/compare.h"
#include "check/report_html.h"
#include "html_verify.h"
#include "tensor/dtype.h"
#include "test.h"

static const char *keep_path;

static void test_hist_bins(void) {
    CHECK_EQ(ogc_hist_bin(0), 0);
    CHECK_EQ(ogc_hist_bin(0x1p-10), 1);
    CHECK_EQ(ogc_hist_bin(0x1p-4), 2);
    CHECK_EQ(ogc_hist_bin(0.2), 3);
    CHECK_EQ(ogc_hist_bin(0.5), 5);
    CHECK_EQ(ogc_hist_bin(1), 6);
    CHECK_EQ(ogc_hist_bin(1023), 15);
    CHECK_EQ(ogc_hist_bin(1024), 16);
    CHECK_EQ(ogc_hist_bin(INFINITY), 16);
    CHECK_EQ(ogc_hist_bin(NAN), 16);
}

// A series records every element in its histogram and keeps a bounded sample sorted by x with
// the largest errors in it; merging is deterministic.
static void test_series_bounded(void) {
    enum { N = 5000 };
    float *got = malloc(N * sizeof *got);
    double *ref = malloc(N * sizeof *ref), *x = malloc(N * sizeof *x);
    for (int i = 0; i < N; i++) {
        x[i] = -10 + 20.0 * i / N;
        ref[i] = sin(x[i]);
        got[i] = (float)ref[i];
    }
    got[1234] = (float)(ref[1234] * 1.01); // a large error at one element
    ogc_series a = {0}, b = {0};
    ogc_series_record(&a, ogc_rule_of(4), ACL_FLOAT, got, ref, NULL, 1, N, x);
    ogc_series_record(&b, ogc_rule_of(4), ACL_FLOAT, got, ref, NULL, 1, N, x);
    int64_t total = 0;
    for (int k = 0; k < OGC_HIST_BINS; k++) total += a.hist[k];
    CHECK_EQ(total, N);
    CHECK(a.n > 0 && a.n <= OGC_SAMPLE_MAX);
    CHECK(!a.x_is_index);
    CHECK(!memcmp(&a, &b, sizeof a)); // deterministic
    bool sorted = true, worst = false;
    for (int i = 0; i < a.n; i++) {
        if (i) sorted &= a.p[i - 1].x <= a.p[i].x;
        if (a.p[i].x == x[1234]) worst = a.p[i].ratio > 1 && a.p[i].ulp > 1e4;
    }
    CHECK(sorted);
    CHECKF(worst, "the element with the large error is not in the sample");
    // merging many cases stays bounded and keeps the worst
    for (int k = 0; k < 20; k++) ogc_series_merge(&b, &a);
    CHECK(b.n <= OGC_SAMPLE_MAX);
    bool kept = false;
    for (int i = 0; i < b.n; i++) kept |= b.p[i].x == x[1234];
    CHECK(kept);
    // points at indices give way to points at input values
    ogc_series c = {0};
    ogc_series_record(&c, ogc_rule_of(4), ACL_FLOAT, got, ref, NULL, 1, 10, NULL);
    CHECK(c.x_is_index && c.n == 10);
    ogc_series_merge(&c, &a);
    CHECK(!c.x_is_index);
    free(got), free(ref), free(x);
}

// ---- mish with the sign of its gradient planted wrong

static const ogc_op *mish(void) { return ogc_registry_find("mish"); }

static int mish_backward_negated(ogc_call *c) {
    int st = mish()->backward(c);
    for (int j = 0; st == 0 && j < c->nresults; j++) {
        ogc_result *r = &c->results[j];
        int64_t n = 1;
        for (int d = 0; d < r->ndim; d++) n *= r->dims[d];
        for (int64_t i = 0; i < n; i++)
            ogc_store(r->data, i, r->dtype, -ogc_load(r->data, i, r->dtype));
    }
    return st;
}

static int zero_forward(ogc_call *c) {
    ogc_result *y = &c->results[0];
    int64_t n = 1;
    for (int d = 0; d < y->ndim; d++) n *= y->dims[d];
    for (int64_t i = 0; i < n; i++) ogc_store(y->data, i, y->dtype, 0);
    return 0;
}
static int zero_backward(ogc_call *c) {
    memset(c->results[0].data, 0, c->results[0].capacity);
    return 0;
}
static double zero_ref(const ogc_op *op, const double *x, double *saved) {
    (void)op, (void)x, (void)saved;
    return 0;
}
static void zero_ref_backward(const ogc_op *op, const double *x, const double *saved, double gy,
                              double *gx, double *mag) {
    (void)op, (void)x, (void)saved, (void)gy;
    gx[0] = 0, mag[0] = 0;
}

static void test_report_with_planted_failure(void) {
    char path[256], err[512];
    if (keep_path)
        snprintf(path, sizeof path, "%s", keep_path);
    else
        snprintf(path, sizeof path, "/tmp/opgrad_test_html_%d.html", (int)getpid());
    // a path that cannot be written is refused up front, with the reason
    CHECK(ogc_html_open("/nonexistent-dir/sub/report.html", err, sizeof err) == NULL);
    CHECKF(strstr(err, "cannot write") != NULL, "message: %s", err);

    ogc_html *h = ogc_html_open(path, err, sizeof err);
    CHECKF(h != NULL, "%s", err);
    if (!h) return;
    ogc_samples *smp = calloc(1, sizeof *smp);
    ogc_options opt = {.mode = OGC_MODE_FAST, .seed = 7, .samples = smp};
    ogc_op bad = *mish();
    bad.name = "mish_sign_bug";
    bad.forward_inplace = NULL;
    bad.backward = mish_backward_negated;
    ogc_op zero = {.name = "always_zero",
                   .api = "plain C (test)",
                   .nin = 1,
                   .in = {{"x", true}},
                   .dtypes = 1ull << ACL_FLOAT,
                   .lo = -4,
                   .hi = 4,
                   .fp32_ulps = 2,
                   .ref_forward = zero_ref,
                   .ref_backward = zero_ref_backward,
                   .forward = zero_forward,
                   .backward = zero_backward};
    const char *layouts[] = {"contiguous", "sweep"};
    int nfail = 0, rows = 0;
    char diag[512] = "", repro[256] = "";
    for (int l = 0; l < 2; l++) {
        ogc_report r;
        ogc_check_case(mish(), ACL_FLOAT, layouts[l], &opt, &r);
        CHECK_EQ(r.status, OGC_PASS);
        ogc_html_add(h, &r, smp), rows++;
        CHECK(smp->fwd.n > 0 && smp->bwd.n > 0);
        ogc_check_case(&bad, ACL_FLOAT, layouts[l], &opt, &r);
        CHECK_EQ(r.status, OGC_FAIL);
        nfail += r.status == OGC_FAIL;
        if (!diag[0])
            snprintf(diag, sizeof diag, "%s", r.diagnosis),
                snprintf(repro, sizeof repro, "%s", r.repro);
        ogc_html_add(h, &r, smp), rows++;
    }
    ogc_report r;
    ogc_check_formula(mish(), "contiguous", &opt, &r); // no kernel ran: no samples
    CHECK(smp->fwd.n == 0 && smp->bwd.n == 0);
    ogc_html_add(h, &r, smp), rows++;
    ogc_check_case(mish(), ACL_INT32, "contiguous", &opt, &r); // SKIPPED: dtype not supported
    CHECK_EQ(r.status, OGC_SKIPPED);
    ogc_html_add(h, &r, smp), rows++;
    ogc_check_case(&zero, ACL_FLOAT, "contiguous", &opt, &r);
    CHECK_EQ(r.status, OGC_MISTRUSTED);
    ogc_html_add(h, &r, smp), rows++;
    // synthetic: markup and quotes in the diagnosis, non-finite metrics
    ogc_report syn = {.op = "synthetic<op>",
                      .dtype = ACL_BF16,
                      .layout = "strided",
                      .isa = 0,
                      .status = OGC_FAIL,
                      .max_abs = INFINITY,
                      .max_rel = NAN,
                      .max_ulp = INFINITY,
                      .compared = 3};
    snprintf(syn.diagnosis, sizeof syn.diagnosis,
             "gradient is \"wrong\" & <script>alert('x')</script> at element 2");
    snprintf(syn.repro, sizeof syn.repro, "opgrad check --op 'synthetic<op>' --dtype bfloat16");
    ogc_html_add(h, &syn, NULL), rows++;
    free(smp);
    ogc_html_info info = {.version = "test",
                          .cpu_isa = "scalar",
                          .isas = "scalar",
                          .mode = "fast",
                          .command = "test_html_report",
                          .seed = 7,
                          .threads = 1,
                          .seconds = 0.5};
    CHECKF(ogc_html_finish(h, &info, err, sizeof err) == 0, "%s", err);

    html_report rep;
    bool ok = html_report_load(&rep, path);
    CHECKF(ok, "%s", rep.error);
    if (ok) {
        CHECK_EQ(rep.rows, rows);
        CHECK_EQ(rep.counts[OGC_PASS], 3);
        CHECK_EQ(rep.counts[OGC_FAIL], nfail + 1);
        CHECK_EQ(rep.counts[OGC_MISTRUSTED], 1);
        CHECK_EQ(rep.counts[OGC_SKIPPED], 1);
        CHECK(html_find_row(&rep, "mish_sign_bug", "float32",
                            rep.rows
                                ? hj_get(rep.data, "isas")
                                      ->item[(int)hj_get(rep.data, "rows")->item[1]->item[2]->num]
                                      ->str
                                : "",
                            "sweep", "FAIL") >= 0);
        CHECK(html_find_row(&rep, "mish", "f64-ref", "-", "contiguous", "PASS") >= 0);
        CHECK(html_find_row(&rep, "synthetic<op>", "bfloat16", "scalar", "strided", "FAIL") >= 0);
        // the failure section: diagnosis and reproducer, escaped; one block per failure
        char *d = html_escaped(diag), *p = html_escaped(repro);
        CHECKF(strstr(rep.text, d) != NULL, "diagnosis '%s' not in the report", diag);
        CHECKF(strstr(rep.text, p) != NULL, "reproducer '%s' not in the report", repro);
        CHECK(strstr(diag, "sign") != NULL);
        free(d), free(p);
        int blocks = 0;
        for (const char *q = rep.text; (q = strstr(q, "<div class=\"failure\"")); q++) blocks++;
        CHECK_EQ(blocks, nfail + 2);
        CHECK(strstr(rep.text, "<script>alert") == NULL);
        CHECK(strstr(rep.text, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;") != NULL);
        CHECK(strstr(rep.text, "1e999") != NULL); // infinity, which JSON.parse reads back
        // plots: mish and the planted bug at float32 (the synthetic row has none); each failing
        // case with samples keeps its own, with points beyond the tolerance
        CHECK_EQ(rep.plots, 3);
        CHECK(rep.points > 100);
        CHECK_EQ(rep.cases, nfail + 1);
        const hj *cases = hj_get(rep.data, "cases");
        bool red = false;
        for (int i = 0; cases && i < cases->n; i++) {
            const hj *pts = hj_get(hj_get(cases->item[i], "bwd"), "pts");
            for (int k = 2; pts && k < pts->n; k += 3) red |= pts->item[k]->num > 1;
        }
        CHECK(red);
    }
    html_report_free(&rep);
    if (!keep_path) remove(path);
}

int main(int argc, char **argv) {
    if (argc > 1) keep_path = argv[1];
    RUN(test_hist_bins);
    RUN(test_series_bounded);
    RUN(test_report_with_planted_failure);
    return test_summary();
}
