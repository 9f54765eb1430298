/* The custom-operator checker on the FusedAddScale example and its broken variants
 * (tests/custom/kernels/broken_fused_add_scale.c): the correct operator passes every stage, and
 * each broken variant is caught in the right stage with its named diagnosis. Also: the spec
 * reader's messages, the loader (absolute paths only, missing symbols, reload after a rebuild). */
#define _DEFAULT_SOURCE // mkdtemp
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl/acl.h"
#include "custom/custom_check.h"
#include "custom/spec.h"
#include "opgrad/custom_op.h"
#include "test.h"

static char dir[256];

typedef struct rows {
    int n, fails, passes, skipped;
    ogcc_row r[256];
} rows;

static void collect(const ogcc_row *row, void *user) {
    rows *rs = user;
    if (rs->n < 256) rs->r[rs->n++] = *row;
    rs->fails += row->r.status == OGC_FAIL;
    rs->passes += row->r.status == OGC_PASS;
    rs->skipped += row->r.status == OGC_SKIPPED;
}

// Writes a spec (printf-style JSON) to dir/name.json and returns its path.
static const char *write_spec(const char *name, const char *fmt, ...) {
    static char path[512];
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    FILE *f = fopen(path, "w");
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fclose(f);
    return path;
}

// The example's spec with the given library, symbols, output shape and gradients declaration.
static const char *fas_spec(const char *name, const char *lib, const char *fwd, const char *bwd,
                            const char *out_shape, const char *extra) {
    return write_spec(
        name,
        "{\"name\": \"%s\", \"library\": \"%s\", \"forward\": \"%s\", \"backward\": \"%s\",\n"
        " \"dtypes\": [\"float32\", \"float64\"],\n"
        " \"inputs\": [{\"name\": \"x\", \"shape\": [\"N\", \"C\"]}, {\"name\": \"bias\", "
        "\"shape\": [\"C\"]},\n"
        "            {\"name\": \"scale\", \"shape\": [1], \"domain\": [0.5, 2]}],\n"
        " \"outputs\": [{\"name\": \"y\", \"shape\": %s}],\n"
        " \"sizes\": [{\"N\": 8, \"C\": 16}, {\"N\": 5, \"C\": 37}],\n"
        " \"reference\": \"(x + bias) * scale\"%s}\n",
        name, lib, fwd, bwd, out_shape, extra);
}

static rows run_check(const char *spec) {
    static rows rs;
    memset(&rs, 0, sizeof rs);
    ogcc_options opt = {.seed = 3, .timeout_s = 20};
    ogcc_check(spec, &opt, collect, &rs);
    return rs;
}

// Some FAIL row whose stage starts with `stage` and whose diagnosis contains `needle`.
static void expect_fail(const rows *rs, const char *stage, const char *needle) {
    for (int i = 0; i < rs->n; i++)
        if (rs->r[i].r.status == OGC_FAIL && !strncmp(rs->r[i].label, stage, strlen(stage)) &&
            strstr(rs->r[i].r.diagnosis, needle))
            return;
    CHECKF(0, "no FAIL in stage '%s' with \"%s\"; rows:", stage, needle);
    for (int i = 0; i < rs->n; i++)
        fprintf(stderr, "    %s %s: %s\n", ogc_status_name(rs->r[i].r.status), rs->r[i].label,
                rs->r[i].r.diagnosis);
}

static void test_correct_operator_passes(void) {
    rows rs = run_check(
        fas_spec("ok", BROKEN_LIB, "FusedAddScale", "FusedAddScaleGrad", "[\"N\", \"C\"]", ""));
    CHECK_EQ(rs.fails, 0);
    // load + (forward, wiring, backward) x 2 dtypes x 2 sizes
    CHECK_EQ(rs.passes, 1 + 3 * 2 * 2);
    for (int i = 0; i < rs.n && rs.fails; i++)
        fprintf(stderr, "    %s: %s\n", rs.r[i].label, rs.r[i].r.diagnosis);
}

static void test_unreduced_broadcast_gradient(void) {
    rows rs = run_check(fas_spec("noreduce", BROKEN_LIB, "FusedAddScale",
                                 "FusedAddScaleGrad_NoReduce", "[\"N\", \"C\"]", ""));
    expect_fail(&rs, "backward",
                "gradient of 'bias' has 128 elements, input has 16: reduce over dim 0");
}

static void test_declared_unreduced_gradient(void) {
    // the framework-side mistake: bprop declares dbias with the output's shape
    rows rs = run_check(fas_spec("declared", BROKEN_LIB, "FusedAddScale", "FusedAddScaleGrad",
                                 "[\"N\", \"C\"]",
                                 ", \"gradients\": [{\"shape\": \"x\"}, {\"shape\": [\"N\", "
                                 "\"C\"]}, {\"shape\": \"scale\"}]"));
    expect_fail(&rs, "wiring",
                "gradient of 'bias' has 128 elements, input has 16: reduce over dim 0");
    CHECK(rs.skipped > 0); // the real backward is not run on a broken declaration
}

static void test_two_of_three_gradients(void) {
    rows rs = run_check(fas_spec("twoofthree", BROKEN_LIB, "FusedAddScale",
                                 "FusedAddScaleGrad_TwoOfThree", "[\"N\", \"C\"]", ""));
    expect_fail(&rs, "backward",
                "the backward returned 2 of 3 gradients: gradient of 'scale' was never written");
}

static void test_declared_gradient_count(void) {
    rows rs = run_check(fas_spec("count", BROKEN_LIB, "FusedAddScale", "FusedAddScaleGrad",
                                 "[\"N\", \"C\"]",
                                 ", \"gradients\": [{\"shape\": \"x\"}, {\"shape\": \"bias\"}]"));
    expect_fail(&rs, "wiring",
                "the backward declares 2 gradients, the operator has 3 inputs, none for 'scale'");
}

static void test_out_shape_declared_wrong(void) {
    rows rs = run_check(
        fas_spec("outshape", BROKEN_LIB, "FusedAddScale", "FusedAddScaleGrad", "[\"N\"]", ""));
    expect_fail(&rs, "forward",
                "the forward wrote past output 'y': declared [8] (8 elements of float32), writes "
                "reached element 127");
}

static void test_fp16_into_fp32_output(void) {
    rows rs = run_check(fas_spec("fp16out", BROKEN_LIB, "FusedAddScale_Fp16Out",
                                 "FusedAddScaleGrad", "[\"N\", \"C\"]", ""));
    expect_fail(&rs, "forward",
                "output 'y' is declared float32 but the kernel wrote 2-byte values");
}

static void test_fp16_gradient(void) {
    rows rs = run_check(fas_spec("fp16grad", BROKEN_LIB, "FusedAddScale",
                                 "FusedAddScaleGrad_Fp16Grad", "[\"N\", \"C\"]", ""));
    expect_fail(&rs, "backward", "gradient of 'x' is float32 but the kernel wrote 2-byte values");
}

static void test_crash_on_tail(void) {
    rows rs = run_check(fas_spec("crash", BROKEN_LIB, "FusedAddScale_CrashTail",
                                 "FusedAddScaleGrad", "[\"N\", \"C\"]", ""));
    // C = 16 runs; C = 37 crashes, is reported with its saved inputs, and the checker goes on
    expect_fail(&rs, "forward N=5,C=37", "the forward kernel crashed with SIGSEGV");
    expect_fail(&rs, "forward N=5,C=37", "Inputs saved in ");
    int passes_c16 = 0;
    for (int i = 0; i < rs.n; i++)
        passes_c16 += rs.r[i].r.status == OGC_PASS && strstr(rs.r[i].label, "C=16");
    CHECK_EQ(passes_c16, 3 * 2);
}

static void test_abort_in_backward(void) {
    rows rs = run_check(fas_spec("abort", BROKEN_LIB, "FusedAddScale", "FusedAddScaleGrad_Aborts",
                                 "[\"N\", \"C\"]", ""));
    expect_fail(&rs, "backward", "the backward kernel crashed with SIGABRT");
}

static void test_sign_flip(void) {
    rows rs = run_check(fas_spec("sign", BROKEN_LIB, "FusedAddScale", "FusedAddScaleGrad_SignFlip",
                                 "[\"N\", \"C\"]", ""));
    expect_fail(&rs, "backward", "gradient of 'x' has the wrong sign");
}

static void test_mean_instead_of_sum(void) {
    rows rs = run_check(fas_spec("mean", BROKEN_LIB, "FusedAddScale", "FusedAddScaleGrad_MeanBias",
                                 "[\"N\", \"C\"]", ""));
    expect_fail(&rs, "backward N=8", "gradient of 'bias' is off by a constant factor 0.125");
    expect_fail(&rs, "backward N=8", "a mean where the broadcast reduction needs a sum?");
}

static void test_finite_differences_without_reference(void) {
    // no reference expression: the sign flip is still caught, by finite differences of the
    // float64 forward kernel
    const char *spec =
        write_spec("fdonly",
                   "{\"name\": \"fdonly\", \"library\": \"%s\", \"forward\": \"FusedAddScale\",\n"
                   " \"backward\": \"FusedAddScaleGrad_SignFlip\", \"dtypes\": [\"float64\"],\n"
                   " \"inputs\": [{\"name\": \"x\", \"shape\": [4, 3]}, {\"name\": \"bias\", "
                   "\"shape\": [3]},\n"
                   "            {\"name\": \"scale\", \"shape\": [1]}],\n"
                   " \"outputs\": [{\"name\": \"y\", \"shape\": [4, 3]}]}\n",
                   BROKEN_LIB);
    rows rs = run_check(spec);
    expect_fail(
        &rs, "backward",
        "gradient of 'x' disagrees with finite differences of the forward kernel (float64)");
    expect_fail(&rs, "backward", "the sign is flipped");
}

static void test_b0_offset(void) {
    rows rs = run_check(fas_spec("offset", BROKEN_LIB, "FusedAddScale", "FusedAddScaleGrad_Offset",
                                 "[\"N\", \"C\"]", ""));
    expect_fail(&rs, "backward",
                "with dout = 0 the gradient of 'scale' is 1e-09 at element 0, not 0");
}

static void test_relative_path_refused(void) {
    rows rs = run_check(fas_spec("relative", "build/libfused_add_scale.so", "FusedAddScale",
                                 "FusedAddScaleGrad", "[\"N\", \"C\"]", ""));
    expect_fail(&rs, "load",
                "library path 'build/libfused_add_scale.so' is relative: give an absolute path");
    opgrad_custom_lib *lib = (opgrad_custom_lib *)1;
    CHECK_EQ(opgrad_custom_open("libm.so.6", &lib), ACLNN_ERR_PARAM_INVALID);
    CHECK(lib == NULL);
    CHECK_MSG("is relative; give an absolute path");
}

static void test_missing_symbol_and_file(void) {
    rows rs = run_check(fas_spec("nosym", BROKEN_LIB, "FusedAddScale", "FusedAddScaleGradient",
                                 "[\"N\", \"C\"]", ""));
    expect_fail(&rs, "load", "symbol 'FusedAddScaleGradient' not found");
    rows rs2 =
        run_check(fas_spec("nofile", "/nonexistent/libx.so", "F", "G", "[\"N\", \"C\"]", ""));
    expect_fail(&rs2, "load", "cannot open library '/nonexistent/libx.so'");
}

static void test_spec_errors(void) {
    char err[512];
    ogs_spec s;
    CHECK(!ogs_parse("{\"name\": \"a\",}", "t.json", &s, err, sizeof err));
    CHECKF(strstr(err, "t.json: not valid JSON: line 1, column 14: trailing comma before '}'"),
           "%s", err);
    CHECK(!ogs_parse("{\"name\": \"a\", \"library\": \"/x\", \"forward\": \"f\", \"inputs\": "
                     "[{\"name\": \"x\", \"shape\": [\"N\"]}], \"outputs\": [{\"name\": \"y\", "
                     "\"shape\": \"x\"}], \"sizes\": [{\"M\": 3}]}",
                     "t.json", &s, err, sizeof err));
    CHECKF(strstr(err, "\"sizes\"[0] does not bind the dim 'N'"), "%s", err);
    CHECK(!ogs_parse("{\"name\": \"a\", \"library\": \"/x\", \"forward\": \"f\", \"inputs\": "
                     "[{\"name\": \"x\", \"shape\": [2]}], \"outputs\": [{\"name\": \"y\", "
                     "\"shape\": \"z\"}]}",
                     "t.json", &s, err, sizeof err));
    CHECKF(strstr(err, "\"shape\": \"z\" names no input"), "%s", err);
    CHECK(!ogs_parse("{\"name\": \"a\", \"library\": \"/x\", \"forwrd\": \"f\"}", "t.json", &s, err,
                     sizeof err));
    CHECKF(strstr(err, "\"forward\" is required"), "%s", err);
    CHECK(!ogs_parse("{\"name\": \"a\", \"library\": \"/x\", \"forward\": \"f\", \"inputs\": "
                     "[{\"name\": \"x\", \"shape\": [2]}], \"outputs\": [{\"name\": \"y\", "
                     "\"shape\": [2]}], \"dtypes\": [\"int8\"]}",
                     "t.json", &s, err, sizeof err));
    CHECKF(strstr(err, "\"dtypes\"[0] must be float32, float16, bfloat16 or float64"), "%s", err);
    CHECK(!ogs_parse("{\"name\": \"a\", \"library\": \"/x\", \"forward\": \"f\", \"inputs\": "
                     "[{\"name\": \"x\", \"shape\": [2]}], \"outputs\": [{\"name\": \"y\", "
                     "\"shape\": [2]}], \"refrence\": \"x\"}",
                     "t.json", &s, err, sizeof err));
    CHECKF(strstr(err, "unknown key \"refrence\" (a typo?)"), "%s", err);
    // deep nesting is refused, not a stack overflow
    char deep[4096];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = 0;
    CHECK(!ogs_parse(deep, "t.json", &s, err, sizeof err));
    CHECKF(strstr(err, "nested deeper than"), "%s", err);
    rows rs =
        run_check(write_spec("badref",
                             "{\"name\": \"r\", \"library\": \"%s\", \"forward\": "
                             "\"FusedAddScale\", \"inputs\": [{\"name\": \"x\", \"shape\": [2]}], "
                             "\"outputs\": [{\"name\": \"y\", \"shape\": [2]}], "
                             "\"reference\": \"tnah(x)\"}",
                             BROKEN_LIB));
    expect_fail(&rs, "load", "\"reference\": ");
}

static void copy_file(const char *from, const char *to) {
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    char buf[8192];
    size_t n;
    while (in && out && (n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
    if (in) fclose(in);
    if (out) fclose(out);
}

static float call_fill(opgrad_custom_lib *lib) {
    float v = 0;
    void *params[1] = {&v};
    int ndims[1] = {0};
    int64_t *shapes[1] = {NULL};
    const char *dtypes[1] = {"float32"};
    CHECK_EQ(opgrad_custom_call(lib, "Fill", 1, params, ndims, shapes, dtypes, 0), ACLNN_SUCCESS);
    return v;
}

static void test_reload_after_rebuild(void) {
    char path[300];
    snprintf(path, sizeof path, "%s/libfill.so", dir);
    copy_file(RELOAD_LIB_1, path);
    opgrad_custom_lib *lib = NULL;
    CHECK_EQ(opgrad_custom_open(path, &lib), ACLNN_SUCCESS);
    if (!lib) return;
    CHECK(call_fill(lib) == 1.0f);
    CHECK(call_fill(lib) == 1.0f);
    CHECK_EQ(opgrad_custom_load_count(lib), 1);
    // "rebuild": a new file at the same path (as a linker writes it)
    char tmp[320];
    snprintf(tmp, sizeof tmp, "%s.new", path);
    copy_file(RELOAD_LIB_2, tmp);
    CHECK(rename(tmp, path) == 0);
    CHECK(call_fill(lib) == 2.0f);
    CHECK_EQ(opgrad_custom_load_count(lib), 2);
    // rewritten in place (same inode): size or mtime changes, reloaded again
    usleep(20000);
    copy_file(RELOAD_LIB_1, path);
    CHECK(call_fill(lib) == 1.0f);
    CHECK_EQ(opgrad_custom_load_count(lib), 3);
    // errors carry messages
    float v;
    void *params[1] = {&v};
    int ndims[1] = {0};
    int64_t *shapes[1] = {NULL};
    const char *dtypes[1] = {"float32"};
    CHECK_EQ(opgrad_custom_call(lib, "Nope", 1, params, ndims, shapes, dtypes, 0),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("symbol 'Nope' not found");
    CHECK_EQ(opgrad_custom_call(lib, "Fill", 2, params, ndims, shapes, dtypes, 0), ACLNN_ERR_INNER);
    CHECK_MSG("'Fill' in ");
    CHECK_MSG("returned 1");
    CHECK_EQ(opgrad_custom_call(lib, "Fill", 1, NULL, ndims, shapes, dtypes, 0),
             ACLNN_ERR_PARAM_NULLPTR);
    unlink(path);
    CHECK_EQ(opgrad_custom_call(lib, "Fill", 1, params, ndims, shapes, dtypes, 0),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("disappeared since it was loaded");
    opgrad_custom_close(lib);
}

int main(void) {
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/opgrad-test-custom-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
    setenv("TMPDIR", dir, 1); // crash reports save their inputs under TMPDIR: keep them here
    RUN(test_correct_operator_passes);
    RUN(test_unreduced_broadcast_gradient);
    RUN(test_declared_unreduced_gradient);
    RUN(test_two_of_three_gradients);
    RUN(test_declared_gradient_count);
    RUN(test_out_shape_declared_wrong);
    RUN(test_fp16_into_fp32_output);
    RUN(test_fp16_gradient);
    RUN(test_crash_on_tail);
    RUN(test_abort_in_backward);
    RUN(test_sign_flip);
    RUN(test_mean_instead_of_sum);
    RUN(test_finite_differences_without_reference);
    RUN(test_b0_offset);
    RUN(test_relative_path_refused);
    RUN(test_missing_symbol_and_file);
    RUN(test_spec_errors);
    RUN(test_reload_after_rebuild);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return test_summary();
}
