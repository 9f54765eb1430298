/* The custom-operator checker on the FusedAddScale example and its broken variants
 * (tests/custom/kernels/broken_fused_add_scale.c): the correct operator passes every stage, and
 * each broken variant is caught in the right stage with its named diagnosis. Also: the spec
 * reader's messages, the loader (absolute paths only, missing symbols, reload after a rebuild),
 * the gradient monitor's names, and hostile kernels (tests/custom/kernels/ctor_*.c,
 * hostile_kernels.c) through the checker and through the opgrad command: constructors that exit
 * or never return, output spam, a memory hog, leftover processes, sub-second timeouts, and the
 * command line's validation of --timeout and --max-memory. */
#define _DEFAULT_SOURCE // mkdtemp
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acl/acl.h"
#include "custom/custom_check.h"
#include "custom/json.h"
#include "custom/spec.h"
#include "opgrad/custom_op.h"
#include "runtime/custom_lib.h"
#include "test.h"

static char dir[256];
static char grads_log[300]; // OPGRAD_DEBUG_GRADS_FILE

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

// The rows of one check, in a static buffer (by value, each test's copy on the stack made
// main's inlined frame 15 MiB under clang's ASan: a stack overflow).
static const rows *run_check_with(const char *spec, double timeout_s, uint64_t max_memory) {
    static rows buffer;
    memset(&buffer, 0, sizeof buffer);
    ogcc_options opt = {.seed = 3, .timeout_s = timeout_s, .max_memory = max_memory};
    ogcc_check(spec, &opt, collect, &buffer);
    return &buffer;
}

static const rows *run_check(const char *spec) { return run_check_with(spec, 20, 0); }

// A forward-only FusedAddScale spec (float32, one size): for kernels whose forward misbehaves.
static const char *forward_spec(const char *name, const char *lib, const char *fwd) {
    return write_spec(
        name,
        "{\"name\": \"%s\", \"library\": \"%s\", \"forward\": \"%s\",\n"
        " \"inputs\": [{\"name\": \"x\", \"shape\": [\"N\", \"C\"]}, "
        "{\"name\": \"bias\", \"shape\": [\"C\"]},\n"
        "            {\"name\": \"scale\", \"shape\": [1]}],\n"
        " \"outputs\": [{\"name\": \"y\", \"shape\": [\"N\", \"C\"]}],\n"
        " \"sizes\": [{\"N\": 4, \"C\": 5}], \"reference\": \"(x + bias) * scale\"}\n",
        name, lib, fwd);
}

static void print_rows(const rows *rs) {
    for (int i = 0; i < rs->n; i++)
        fprintf(stderr, "    %s %s: %s\n", ogc_status_name(rs->r[i].r.status), rs->r[i].label,
                rs->r[i].r.diagnosis);
}

// Some FAIL row whose stage starts with `stage` and whose diagnosis contains `needle`.
static void expect_fail(const rows *rs, const char *stage, const char *needle) {
    for (int i = 0; i < rs->n; i++)
        if (rs->r[i].r.status == OGC_FAIL && !strncmp(rs->r[i].label, stage, strlen(stage)) &&
            strstr(rs->r[i].r.diagnosis, needle))
            return;
    CHECKF(0, "no FAIL in stage '%s' with \"%s\"; rows:", stage, needle);
    print_rows(rs);
}

// No row's diagnosis contains `needle`.
static void expect_nowhere(const rows *rs, const char *needle) {
    for (int i = 0; i < rs->n; i++)
        CHECKF(!strstr(rs->r[i].r.diagnosis, needle), "row %s says \"%s\": %s", rs->r[i].label,
               needle, rs->r[i].r.diagnosis);
}

static void test_correct_operator_passes(void) {
    const rows *rs = run_check(
        fas_spec("ok", BROKEN_LIB, "FusedAddScale", "FusedAddScaleGrad", "[\"N\", \"C\"]", ""));
    CHECK_EQ(rs->fails, 0);
    // load + (forward, wiring, backward) x 2 dtypes x 2 sizes
    CHECK_EQ(rs->passes, 1 + 3 * 2 * 2);
    for (int i = 0; i < rs->n && rs->fails; i++)
        fprintf(stderr, "    %s: %s\n", rs->r[i].label, rs->r[i].r.diagnosis);
}

static void test_unreduced_broadcast_gradient(void) {
    const rows *rs = run_check(fas_spec("noreduce", BROKEN_LIB, "FusedAddScale",
                                        "FusedAddScaleGrad_NoReduce", "[\"N\", \"C\"]", ""));
    expect_fail(rs, "backward",
                "gradient of 'bias' has 128 elements, input has 16: reduce over dim 0");
}

static void test_declared_unreduced_gradient(void) {
    // the framework-side mistake: bprop declares dbias with the output's shape
    const rows *rs = run_check(fas_spec("declared", BROKEN_LIB, "FusedAddScale",
                                        "FusedAddScaleGrad", "[\"N\", \"C\"]",
                                        ", \"gradients\": [{\"shape\": \"x\"}, {\"shape\": [\"N\", "
                                        "\"C\"]}, {\"shape\": \"scale\"}]"));
    expect_fail(rs, "wiring",
                "gradient of 'bias' has 128 elements, input has 16: reduce over dim 0");
    CHECK(rs->skipped > 0); // the real backward is not run on a broken declaration
}

static void test_two_of_three_gradients(void) {
    const rows *rs = run_check(fas_spec("twoofthree", BROKEN_LIB, "FusedAddScale",
                                        "FusedAddScaleGrad_TwoOfThree", "[\"N\", \"C\"]", ""));
    expect_fail(rs, "backward",
                "the backward returned 2 of 3 gradients: gradient of 'scale' was never written");
}

static void test_declared_gradient_count(void) {
    const rows *rs = run_check(
        fas_spec("count", BROKEN_LIB, "FusedAddScale", "FusedAddScaleGrad", "[\"N\", \"C\"]",
                 ", \"gradients\": [{\"shape\": \"x\"}, {\"shape\": \"bias\"}]"));
    expect_fail(rs, "wiring",
                "the backward declares 2 gradients, the operator has 3 inputs, none for 'scale'");
}

static void test_out_shape_declared_wrong(void) {
    const rows *rs = run_check(
        fas_spec("outshape", BROKEN_LIB, "FusedAddScale", "FusedAddScaleGrad", "[\"N\"]", ""));
    expect_fail(rs, "forward",
                "the forward wrote past output 'y': declared [8] (8 elements of float32), writes "
                "reached element 127");
}

static void test_fp16_into_fp32_output(void) {
    const rows *rs = run_check(fas_spec("fp16out", BROKEN_LIB, "FusedAddScale_Fp16Out",
                                        "FusedAddScaleGrad", "[\"N\", \"C\"]", ""));
    expect_fail(rs, "forward", "output 'y' is declared float32 but the kernel wrote 2-byte values");
}

static void test_fp16_gradient(void) {
    const rows *rs = run_check(fas_spec("fp16grad", BROKEN_LIB, "FusedAddScale",
                                        "FusedAddScaleGrad_Fp16Grad", "[\"N\", \"C\"]", ""));
    expect_fail(rs, "backward", "gradient of 'x' is float32 but the kernel wrote 2-byte values");
}

static void test_crash_on_tail(void) {
    const rows *rs = run_check(fas_spec("crash", BROKEN_LIB, "FusedAddScale_CrashTail",
                                        "FusedAddScaleGrad", "[\"N\", \"C\"]", ""));
    // C = 16 runs; C = 37 crashes, is reported with its saved inputs, and the checker goes on
    expect_fail(rs, "forward N=5,C=37", "the forward kernel crashed with SIGSEGV");
    expect_fail(rs, "forward N=5,C=37", "Inputs saved in ");
    int passes_c16 = 0;
    for (int i = 0; i < rs->n; i++)
        passes_c16 += rs->r[i].r.status == OGC_PASS && strstr(rs->r[i].label, "C=16");
    CHECK_EQ(passes_c16, 3 * 2);
}

static void test_abort_in_backward(void) {
    const rows *rs = run_check(fas_spec("abort", BROKEN_LIB, "FusedAddScale",
                                        "FusedAddScaleGrad_Aborts", "[\"N\", \"C\"]", ""));
    expect_fail(rs, "backward", "the backward kernel crashed with SIGABRT");
}

static void test_sign_flip(void) {
    const rows *rs = run_check(fas_spec("sign", BROKEN_LIB, "FusedAddScale",
                                        "FusedAddScaleGrad_SignFlip", "[\"N\", \"C\"]", ""));
    expect_fail(rs, "backward", "gradient of 'x' has the wrong sign");
}

static void test_mean_instead_of_sum(void) {
    const rows *rs = run_check(fas_spec("mean", BROKEN_LIB, "FusedAddScale",
                                        "FusedAddScaleGrad_MeanBias", "[\"N\", \"C\"]", ""));
    expect_fail(rs, "backward N=8", "gradient of 'bias' is off by a constant factor 0.125");
    expect_fail(rs, "backward N=8", "a mean where the broadcast reduction needs a sum?");
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
    const rows *rs = run_check(spec);
    expect_fail(
        rs, "backward",
        "gradient of 'x' disagrees with finite differences of the forward kernel (float64)");
    expect_fail(rs, "backward", "the sign is flipped");
}

static void test_b0_offset(void) {
    const rows *rs = run_check(fas_spec("offset", BROKEN_LIB, "FusedAddScale",
                                        "FusedAddScaleGrad_Offset", "[\"N\", \"C\"]", ""));
    expect_fail(rs, "backward",
                "with dout = 0 the gradient of 'scale' is 1e-09 at element 0, not 0");
}

static void test_relative_path_refused(void) {
    const rows *rs = run_check(fas_spec("relative", "build/libfused_add_scale.so", "FusedAddScale",
                                        "FusedAddScaleGrad", "[\"N\", \"C\"]", ""));
    expect_fail(rs, "load",
                "library path 'build/libfused_add_scale.so' is relative: give an absolute path");
    opgrad_custom_lib *lib = (opgrad_custom_lib *)1;
    CHECK_EQ(opgrad_custom_open("libm.so.6", &lib), ACLNN_ERR_PARAM_INVALID);
    CHECK(lib == NULL);
    CHECK_MSG("is relative; give an absolute path");
}

static void test_missing_symbol_and_file(void) {
    const rows *rs = run_check(fas_spec("nosym", BROKEN_LIB, "FusedAddScale",
                                        "FusedAddScaleGradient", "[\"N\", \"C\"]", ""));
    expect_fail(rs, "load", "symbol 'FusedAddScaleGradient' not found");
    const rows *rs2 =
        run_check(fas_spec("nofile", "/nonexistent/libx.so", "F", "G", "[\"N\", \"C\"]", ""));
    expect_fail(rs2, "load", "cannot open library '/nonexistent/libx.so'");
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
    CHECKF(strstr(err, "unknown key \"forwrd\" in the spec (did you mean \"forward\"?)"), "%s",
           err);
    CHECK(!ogs_parse("{\"name\": \"a\", \"library\": \"/x\", \"forward\": \"f\", \"inputs\": "
                     "[{\"name\": \"x\", \"shape\": [2]}], \"outputs\": [{\"name\": \"y\", "
                     "\"shape\": [2]}], \"dtypes\": [\"int8\"]}",
                     "t.json", &s, err, sizeof err));
    CHECKF(strstr(err, "\"dtypes\"[0] must be float32, float16, bfloat16 or float64"), "%s", err);
    CHECK(!ogs_parse("{\"name\": \"a\", \"library\": \"/x\", \"forward\": \"f\", \"inputs\": "
                     "[{\"name\": \"x\", \"shape\": [2]}], \"outputs\": [{\"name\": \"y\", "
                     "\"shape\": [2]}], \"refrence\": \"x\"}",
                     "t.json", &s, err, sizeof err));
    CHECKF(strstr(err, "unknown key \"refrence\" in the spec (did you mean \"reference\"?)"), "%s",
           err);
    // deep nesting is refused, not a stack overflow
    char deep[4096];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = 0;
    CHECK(!ogs_parse(deep, "t.json", &s, err, sizeof err));
    CHECKF(strstr(err, "nested deeper than"), "%s", err);
    const rows *rs =
        run_check(write_spec("badref",
                             "{\"name\": \"r\", \"library\": \"%s\", \"forward\": "
                             "\"FusedAddScale\", \"inputs\": [{\"name\": \"x\", \"shape\": [2]}], "
                             "\"outputs\": [{\"name\": \"y\", \"shape\": [2]}], "
                             "\"reference\": \"tnah(x)\"}",
                             BROKEN_LIB));
    expect_fail(rs, "load", "\"reference\": ");
}

// A misspelt key is the error, named with the closest known key, at every level of the spec;
// before, "libary" was ignored and the message was that "library" is required.
static void test_unknown_spec_keys(void) {
    char err[512];
    ogs_spec s;
    CHECK(!ogs_parse("{\"name\": \"a\", \"libary\": \"/x\", \"forward\": \"f\", \"inputs\": "
                     "[{\"name\": \"x\", \"shape\": [2]}], \"outputs\": [{\"name\": \"y\", "
                     "\"shape\": [2]}]}",
                     "t.json", &s, err, sizeof err));
    CHECKF(strstr(err, "t.json: line 1: unknown key \"libary\" in the spec (did you mean "
                       "\"library\"?); the keys there are: name, library,"),
           "%s", err);
    CHECK(!ogs_parse("{\"name\": \"a\", \"library\": \"/x\", \"forward\": \"f\", \"inputs\": "
                     "[{\"name\": \"x\", \"shpae\": [2]}], \"outputs\": [{\"name\": \"y\", "
                     "\"shape\": [2]}]}",
                     "t.json", &s, err, sizeof err));
    CHECKF(strstr(err, "unknown key \"shpae\" in \"inputs\"[0] (did you mean \"shape\"?)"), "%s",
           err);
    CHECK(!ogs_parse("{\"name\": \"a\", \"library\": \"/x\", \"forward\": \"f\", \"inputs\": "
                     "[{\"name\": \"x\", \"shape\": [2]}], \"outputs\": [{\"name\": \"y\", "
                     "\"shape\": [2], \"dtpye\": \"float32\"}]}",
                     "t.json", &s, err, sizeof err));
    CHECKF(strstr(err, "unknown key \"dtpye\" in \"outputs\"[0] (did you mean \"dtype\"?)"), "%s",
           err);
    CHECK(!ogs_parse("{\"name\": \"a\", \"library\": \"/x\", \"forward\": \"f\", \"inputs\": "
                     "[{\"name\": \"x\", \"shape\": [2]}], \"outputs\": [{\"name\": \"y\", "
                     "\"shape\": [2]}], \"gradients\": [{\"shape\": \"x\", \"label\": 1}]}",
                     "t.json", &s, err, sizeof err));
    CHECKF(
        strstr(err, "unknown key \"label\" in \"gradients\"[0]; the keys there are: shape, dtype"),
        "%s", err);
    // far from every known key: no suggestion
    CHECK(!ogs_parse("{\"name\": \"a\", \"zzzzzzzz\": 1}", "t.json", &s, err, sizeof err));
    CHECKF(strstr(err, "unknown key \"zzzzzzzz\" in the spec; the keys") && !strstr(err, "mean"),
           "%s", err);
    // through the checker: a spec row
    const rows *rs =
        run_check(write_spec("libary",
                             "{\"name\": \"a\", \"libary\": \"%s\", \"forward\": \"F\", "
                             "\"inputs\": [{\"name\": \"x\", \"shape\": [2]}], "
                             "\"outputs\": [{\"name\": \"y\", \"shape\": [2]}]}",
                             BROKEN_LIB));
    expect_fail(rs, "spec", "unknown key \"libary\" in the spec (did you mean \"library\"?)");
}

// A backward that refuses its parameter count: the kernel's own code (not -1 and a second
// code), the nparam it was called with and what the spec implies for each param.
static void test_nonzero_return_names_the_call(void) {
    const rows *rs = run_check(fas_spec("nparam", BROKEN_LIB, "FusedAddScale",
                                        "FusedAddScaleGrad_Nparam7", "[\"N\", \"C\"]", ""));
    expect_fail(rs, "backward N=8,C=16",
                "the backward kernel returned 1 (nonzero: it failed). It was called with nparam = "
                "8, as the spec implies for MindSpore's aot bprop ABI (inputs, outputs, output "
                "gradients, then one gradient per input: 2*3 + 2*1): x float32 [8,16], bias "
                "float32 [16], scale float32 [1], y float32 [8,16], dy float32 [8,16], dx float32 "
                "[8,16], dbias float32 [16], dscale float32 [1]");
    expect_nowhere(rs, "returned -1");
    // a forward that refuses: the forward ABI
    const rows *rs2 = run_check(forward_spec("fwdrefuses", BROKEN_LIB, "FusedAddScaleGrad"));
    expect_fail(rs2, "forward",
                "the forward kernel returned 1 (nonzero: it failed). It was called with nparam = "
                "4, as the spec implies for MindSpore's aot ABI (3 inputs, then 1 output): x "
                "float32 [4,5], bias float32 [5], scale float32 [1], y float32 [4,5]");
}

// An output declared twice its real size: the declared and the reference's shape, not "2-byte
// values" (the byte pattern is the same: the first half written).
static void test_output_declared_twice_its_size(void) {
    const rows *rs = run_check(fas_spec("twice", BROKEN_LIB, "FusedAddScale", "FusedAddScaleGrad",
                                        "[\"N\", \"C\", 2]", ""));
    expect_fail(rs, "forward N=8,C=16",
                "output 'y' is declared [8,16,2] (256 elements) but the reference gives [8,16] "
                "(128 elements); the kernel wrote only the first 128 (half: the declared size is "
                "twice the real one)");
    expect_nowhere(rs, "2-byte");
}

static void test_zero_gradient(void) {
    const rows *rs = run_check(fas_spec("zero", BROKEN_LIB, "FusedAddScale",
                                        "FusedAddScaleGrad_ZeroDx", "[\"N\", \"C\"]", ""));
    expect_fail(rs, "backward", "gradient of 'x' is identically zero (all 128 elements are 0");
    expect_nowhere(rs, "constant factor 0 ");
}

static void test_sign_flip_one_element(void) {
    const rows *rs = run_check(fas_spec("sign1", BROKEN_LIB, "FusedAddScale",
                                        "FusedAddScaleGrad_SignFlipScale", "[\"N\", \"C\"]", ""));
    expect_fail(rs, "backward",
                "gradient of 'scale' has the wrong sign: sign flipped (it is -1 x the reference; "
                "first: got ");
    expect_nowhere(rs, "only at element");
}

static void test_forward_exits_wording(void) {
    const rows *rs = run_check(forward_spec("exits", BROKEN_LIB, "FusedAddScale_Exits"));
    expect_fail(rs, "forward",
                "the forward kernel ended the process (exit status 3) instead of returning");
    expect_nowhere(rs, "the kernel ended");
}

// The library's constructor calls exit(3): loaded in a child, reported, and the check goes on
// to its end (before, the checker itself exited with status 3, with no report).
static void test_constructor_exits(void) {
    const rows *rs = run_check(forward_spec("ctorexit", CTOR_EXIT_LIB, "Forward"));
    expect_fail(rs, "load",
                "libctor_exit.so ended the process (exit status 3) while the library was loading: "
                "a constructor in it calls exit()");
    CHECK_EQ(rs->n, 1);
}

// The constructor never returns: the load ends at the timeout (before, the checker hung).
static void test_constructor_loops(void) {
    const rows *rs = run_check_with(forward_spec("ctorloop", CTOR_LOOP_LIB, "Forward"), 0.5, 0);
    expect_fail(rs, "load",
                "did not finish loading within 0.5 s: a constructor in the library never "
                "returns?");
}

// Sub-second timeouts on a monotonic clock: 300 ms calls pass with 1 s (before, a call
// straddling a whole-second boundary was killed), a 2 s call is hung with 0.5 s (before, 0.5
// was not expressible and meant 20 s).
static void test_subsecond_timeouts(void) {
    const rows *rs =
        run_check_with(forward_spec("sleep300", HOSTILE_LIB, "FusedAddScale_Sleep300ms"), 1, 0);
    CHECK_EQ(rs->fails, 0);
    CHECK_EQ(rs->passes, 2); // load, forward
    if (rs->fails) print_rows(rs);
    const rows *rs2 =
        run_check_with(forward_spec("sleep2s", HOSTILE_LIB, "FusedAddScale_Sleep2s"), 0.5, 0);
    expect_fail(rs2, "forward", "the forward kernel did not return within 0.5 s (hung?)");
}

// A kernel that allocates without bound under --max-memory 256M is reported as exceeding the
// limit (before there was no limit: it took 4 GiB and passed).
static void test_memory_limit(void) {
    const rows *rs =
        run_check_with(forward_spec("hog", HOSTILE_LIB, "FusedAddScale_Hog"), 20, 256 << 20);
    expect_fail(rs, "forward",
                "the forward kernel exceeded the memory limit (--max-memory 256 MiB)");
}

// Processes a kernel leaves behind, in its process group or out of it (setsid), are ended with
// the call (before, they outlived the checker).
static void test_leftover_processes_killed(void) {
    char pidfile[300];
    snprintf(pidfile, sizeof pidfile, "%s/pids.txt", dir);
    setenv("OPGRAD_TEST_PIDFILE", pidfile, 1);
    const rows *rs = run_check(forward_spec("spawn", HOSTILE_LIB, "FusedAddScale_Spawn"));
    unsetenv("OPGRAD_TEST_PIDFILE");
    CHECK_EQ(rs->fails, 0);
    FILE *f = fopen(pidfile, "r");
    CHECK(f != NULL);
    int pid, n = 0;
    while (f && fscanf(f, "%d", &pid) == 1) {
        n++;
        errno = 0;
        int alive = kill(pid, 0) == 0;
        CHECKF(!alive && errno == ESRCH, "process %d left by the kernel is still there", pid);
        if (alive) kill(pid, SIGKILL);
    }
    if (f) fclose(f);
    CHECK_EQ(n, 4); // two calls (the forward runs twice), two processes each
}

// Runs the opgrad command with `args` (shell words), stdout and stderr into files; returns its
// exit status.
static int run_cli(const char *args, const char *out, const char *err) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' check %s > '%s' 2> '%s'", OPGRAD_CLI, args, out, err);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *read_all(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return calloc(1, 1);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = calloc((size_t)n + 1, 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) s[0] = 0;
    fclose(f);
    return s;
}

// A kernel printing thousands of lines, a fake summary line and terminal escapes: the report
// shows a few lines of it per row behind "| ", its last line is the real summary, and the JSON
// report stays valid with the output in "kernel_output" (before, all of it went into the report).
static void test_kernel_output_contained(void) {
    char args[1024], out[300], err[300], json[300];
    snprintf(out, sizeof out, "%s/spam.out", dir);
    snprintf(err, sizeof err, "%s/spam.err", dir);
    snprintf(json, sizeof json, "%s/spam-report.json", dir);
    const char *spec = forward_spec("spam", HOSTILE_LIB, "FusedAddScale_Spam");
    snprintf(args, sizeof args, "--custom '%s' --json '%s'", spec, json);
    CHECK_EQ(run_cli(args, out, err), 0);
    char *text = read_all(out);
    int lines = 0, summaries = 0;
    const char *last = text;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        lines++;
        int a, b;
        if (sscanf(line, "%d passed, %d failed", &a, &b) == 2) summaries++;
        if (*line) last = line;
        CHECKF(!strchr(line, '\033') && !strchr(line, '\r'), "control character in \"%s\"", line);
    }
    CHECKF(lines < 60, "the report has %d lines", lines);
    CHECK_EQ(summaries, 1);
    CHECKF(!strncmp(last, "2 passed, 0 failed", 18), "last line \"%s\"", last);
    free(text);
    text = read_all(out);
    CHECKF(strstr(text, "          | kernel debug line 0: all good\n"), "%s", text);
    CHECKF(strstr(text, "          | (kernel output: "), "%s", text);
    CHECKF(strstr(text, "bytes in all, the first"), "%s", text);
    free(text);
    char *js = read_all(json), jerr[256];
    ogj_doc *doc = ogj_parse(js, jerr, sizeof jerr);
    CHECKF(doc != NULL, "the JSON report does not parse: %s", jerr);
    if (doc) {
        const ogj_value *root = ogj_root(doc);
        CHECK(root->type == OGJ_ARRAY && root->count == 2);
        const ogj_value *o = root->count == 2 ? ogj_get(root->items[1], "kernel_output") : NULL;
        CHECK(o && o->type == OGJ_STRING && strstr(o->string, "kernel debug line 0: all good"));
        ogj_free(doc);
    }
    free(js);
}

// The command line: --timeout and --max-memory are validated (exit status 2, a message naming
// the option and the rule) and both are in the usage text; a library whose constructor exits
// still gets a report with its summary.
static void test_cli_options(void) {
    char args[1024], out[300], err[300];
    snprintf(out, sizeof out, "%s/cli.out", dir);
    snprintf(err, sizeof err, "%s/cli.err", dir);
    const char *spec = forward_spec("cli", HOSTILE_LIB, "FusedAddScale_Sleep300ms");
    static const char *const bad_timeouts[] = {"0", "-1", "abc", "''", "1s", "nan", "inf", "0x10"};
    for (size_t i = 0; i < sizeof bad_timeouts / sizeof bad_timeouts[0]; i++) {
        snprintf(args, sizeof args, "--custom '%s' --timeout %s", spec, bad_timeouts[i]);
        CHECKF(run_cli(args, out, err) == 2, "--timeout %s", bad_timeouts[i]);
        char *e = read_all(err);
        CHECKF(strstr(e, "--timeout takes a number of seconds greater than 0"), "%s", e);
        CHECKF(strstr(e, "[--timeout SECONDS]") && strstr(e, "[--max-memory SIZE]"), "%s", e);
        free(e);
    }
    static const char *const bad_sizes[] = {"abc", "0", "12Q", "-5M", "1K", "''"};
    for (size_t i = 0; i < sizeof bad_sizes / sizeof bad_sizes[0]; i++) {
        snprintf(args, sizeof args, "--custom '%s' --max-memory %s", spec, bad_sizes[i]);
        CHECKF(run_cli(args, out, err) == 2, "--max-memory %s", bad_sizes[i]);
        char *e = read_all(err);
        CHECKF(strstr(e, "--max-memory takes a size of at least 1M"), "%s", e);
        free(e);
    }
    snprintf(args, sizeof args, "--custom '%s' --timeout", spec);
    CHECK_EQ(run_cli(args, out, err), 2);
    char *e = read_all(err);
    CHECKF(strstr(e, "--timeout needs a value"), "%s", e);
    free(e);
    snprintf(args, sizeof args, "--custom '%s' --in-process --max-memory 1G", spec);
    CHECK_EQ(run_cli(args, out, err), 2);
    // accepted values
    snprintf(args, sizeof args, "--custom '%s' --timeout 1.5 --max-memory 1G", spec);
    CHECK_EQ(run_cli(args, out, err), 0);
    char *o = read_all(out);
    CHECKF(strstr(o, "(timeout 1.5 s, memory limit 1024 MiB)"), "%s", o);
    free(o);
    // a constructor that exits: the report and its summary are still written
    snprintf(args, sizeof args, "--custom '%s'", forward_spec("cliexit", CTOR_EXIT_LIB, "Forward"));
    CHECK_EQ(run_cli(args, out, err), 1);
    o = read_all(out);
    CHECKF(strstr(o, "a constructor in it calls exit()") && strstr(o, "\n0 passed, 1 failed"), "%s",
           o);
    free(o);
    // the parsers themselves
    double t;
    uint64_t b;
    CHECK(ogcc_parse_seconds("0.5", &t) && t == 0.5);
    CHECK(ogcc_parse_seconds("20", &t) && t == 20);
    CHECK(!ogcc_parse_seconds(" 1", &t) && !ogcc_parse_seconds("1e9", &t));
    CHECK(ogcc_parse_size("512M", &b) && b == 512ull << 20);
    CHECK(ogcc_parse_size("4G", &b) && b == 4ull << 30);
    CHECK(ogcc_parse_size("1.5GiB", &b) && b == 3ull << 29);
    CHECK(ogcc_parse_size("1048576", &b) && b == 1ull << 20);
    CHECK(ogcc_parse_size("2048k", &b) && b == 2ull << 20);
    CHECK(!ogcc_parse_size("1048575", &b) && !ogcc_parse_size("4GB!", &b));
}

// The gradient monitor names a custom backward's gradients after the spec when an adapter
// gives the names (opgrad.torch.load_custom; before, always grad0, grad1, ...).
static void test_grad_monitor_names(void) {
    const char *log = grads_log;
    opgrad_custom_lib *lib = NULL;
    CHECK_EQ(opgrad_custom_open(BROKEN_LIB, &lib), ACLNN_SUCCESS);
    if (!lib) return;
    float x[2] = {1, 2}, b[2] = {3, 4}, sc[1] = {2}, y[2], dy[2] = {1, 1}, dx[2], db[2], ds[1];
    void *params[8] = {x, b, sc, y, dy, dx, db, ds};
    int64_t s2[1] = {2}, s1[1] = {1};
    int64_t *shapes[8] = {s2, s2, s1, s2, s2, s2, s2, s1};
    int ndims[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    const char *dtypes[8] = {"float32", "float32", "float32", "float32",
                             "float32", "float32", "float32", "float32"};
    // without names: grad<k> and the symbol, as before
    CHECK_EQ(opgrad_custom_call(lib, "FusedAddScaleGrad", 8, params, ndims, shapes, dtypes, 3),
             ACLNN_SUCCESS);
    const char *names[3] = {"x", "bias", "scale"};
    CHECK_EQ(opgrad_custom_set_grad_names(lib, "FusedAddScaleGrad", "FusedAddScale", 3, names),
             ACLNN_SUCCESS);
    CHECK_EQ(opgrad_custom_call(lib, "FusedAddScaleGrad", 8, params, ndims, shapes, dtypes, 3),
             ACLNN_SUCCESS);
    const char *bad[1] = {""};
    CHECK_EQ(opgrad_custom_set_grad_names(lib, "FusedAddScaleGrad", NULL, 1, bad),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("names[0] is empty");
    opgrad_custom_close(lib);
    char *text = read_all(log);
    CHECKF(strstr(text, "opgrad-grads: FusedAddScaleGrad grad[0] grad0 float32 [2]"), "%s", text);
    CHECKF(strstr(text, "opgrad-grads: FusedAddScale grad[0] x float32 [2]"), "%s", text);
    CHECKF(strstr(text, "opgrad-grads: FusedAddScale grad[1] bias float32 [2]"), "%s", text);
    CHECKF(strstr(text, "opgrad-grads: FusedAddScale grad[2] scale float32 [1]"), "%s", text);
    free(text);
}

// opgrad_custom_call_guarded (opgrad.mindspore.custom's debug mode): a correct backward passes
// and its gradients reach the caller; an unreduced bias gradient, a gradient never written and a
// write into an input are each named, and the caller's buffers stay untouched.
static void test_guarded_call(void) {
    opgrad_custom_lib *lib = NULL;
    CHECK_EQ(opgrad_custom_open(BROKEN_LIB, &lib), ACLNN_SUCCESS);
    if (!lib) return;
    enum { R = 4, C = 2 };
    float x[R * C], b[C] = {0.5f, -1}, sc[1] = {2}, y[R * C], dy[R * C];
    for (int i = 0; i < R * C; i++) x[i] = (float)i - 3, dy[i] = 1 + 0.25f * (float)i;
    // the caller's gradient buffers, each followed by sentinels the kernel must never reach
    float dx[R * C + 8], db[C + 8], ds[1 + 8];
    int64_t sx[2] = {R, C}, sb[1] = {C}, s1[1] = {1};
    int64_t *shapes[8] = {sx, sb, s1, sx, sx, sx, sb, s1};
    int ndims[8] = {2, 1, 1, 2, 2, 2, 1, 1};
    const char *dtypes[8] = {"float32", "float32", "float32", "float32",
                             "float32", "float32", "float32", "float32"};
    const char *names[8] = {"x", "bias", "scale", "y", "dy", "dx", "dbias", "dscale"};
    void *params[8] = {x, b, sc, y, dy, dx, db, ds};
    const char *syms[4] = {"FusedAddScaleGrad", "FusedAddScaleGrad_NoReduce",
                           "FusedAddScaleGrad_TwoOfThree", "FusedAddScaleGrad_WritesInput"};
    for (int k = 0; k < 4; k++) {
        for (int i = 0; i < R * C + 8; i++) dx[i] = 777;
        for (int i = 0; i < C + 8; i++) db[i] = 777;
        for (int i = 0; i < 9; i++) ds[i] = 777;
        float x0[R * C];
        memcpy(x0, x, sizeof x);
        aclnnStatus st =
            opgrad_custom_call_guarded(lib, syms[k], 8, params, ndims, shapes, dtypes, 3, 3, names);
        const char *msg = aclGetRecentErrMsg();
        if (k == 0) {
            CHECKF(st == ACLNN_SUCCESS, "%s: %d %s", syms[k], (int)st, msg);
            double dbs[C] = {0}, dss = 0;
            int bad = 0;
            for (int i = 0; i < R * C; i++) {
                bad += dx[i] != dy[i] * sc[0];
                dbs[i % C] += (double)dy[i] * sc[0];
                dss += (double)dy[i] * ((double)x[i] + b[i % C]);
            }
            for (int c = 0; c < C; c++) bad += fabs(db[c] - dbs[c]) > 1e-5 * fabs(dbs[c]);
            bad += fabs(ds[0] - dss) > 1e-5 * fabs(dss);
            CHECKF(bad == 0, "the guarded call's gradients: %d wrong", bad);
        } else {
            CHECKF(st == ACLNN_ERR_PARAM_INVALID, "%s: status %d", syms[k], (int)st);
            CHECK_MSG(syms[k]);
            if (k == 1) { // [R, C] written into the declared [C]: named with the reduction
                CHECK_MSG("wrote past the end of 'dbias' (params[6])");
                CHECK_MSG("summed over the broadcast dims");
            }
            if (k == 2) CHECK_MSG("'dscale' (params[7])");
            if (k == 2) CHECK_MSG("unwritten");
            if (k == 3) CHECK_MSG("wrote into its input 'dy' (params[4])");
            int touched = 0; // nothing reaches the caller when a check fails
            for (int i = 0; i < R * C; i++) touched += dx[i] != 777;
            for (int i = 0; i < C; i++) touched += db[i] != 777;
            touched += ds[0] != 777;
            CHECKF(touched == 0, "%s: %d gradient elements copied out after a failed check",
                   syms[k], touched);
        }
        int past = 0;
        for (int i = R * C; i < R * C + 8; i++) past += dx[i] != 777;
        for (int i = C; i < C + 8; i++) past += db[i] != 777;
        for (int i = 1; i < 9; i++) past += ds[i] != 777;
        CHECKF(past == 0, "%s: %d sentinels past the caller's buffers overwritten", syms[k], past);
        memcpy(x, x0, sizeof x);
        for (int i = 0; i < R * C; i++) dy[i] = 1 + 0.25f * (float)i; // (WritesInput's doubling)
    }
    CHECK_EQ(opgrad_custom_call_guarded(lib, "FusedAddScaleGrad", 8, params, ndims, shapes, dtypes,
                                        9, 3, names),
             ACLNN_ERR_PARAM_INVALID); // more outputs than params
    opgrad_custom_close(lib);
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

// With arguments, only the tests named (a hostile kernel can be looked at on its own).
static int nselected;
static char **selected;
static bool wanted(const char *name) {
    for (int i = 0; i < nselected; i++)
        if (!strcmp(selected[i], name)) return true;
    return nselected == 0;
}
#define RUN_SELECTED(fn)                                                                           \
    do {                                                                                           \
        if (wanted(#fn)) RUN(fn);                                                                  \
    } while (0)

int main(int argc, char **argv) {
    nselected = argc - 1, selected = argv + 1;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/opgrad-test-custom-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
    setenv("TMPDIR", dir, 1); // crash reports save their inputs under TMPDIR: keep them here
    // the gradient monitor, into a file (read once, at its first use: set before any test)
    snprintf(grads_log, sizeof grads_log, "%s/grads.log", dir);
    setenv("OPGRAD_DEBUG_GRADS", "1", 1);
    setenv("OPGRAD_DEBUG_GRADS_FILE", grads_log, 1);
    RUN_SELECTED(test_correct_operator_passes);
    RUN_SELECTED(test_unreduced_broadcast_gradient);
    RUN_SELECTED(test_declared_unreduced_gradient);
    RUN_SELECTED(test_two_of_three_gradients);
    RUN_SELECTED(test_declared_gradient_count);
    RUN_SELECTED(test_out_shape_declared_wrong);
    RUN_SELECTED(test_fp16_into_fp32_output);
    RUN_SELECTED(test_fp16_gradient);
    RUN_SELECTED(test_crash_on_tail);
    RUN_SELECTED(test_abort_in_backward);
    RUN_SELECTED(test_sign_flip);
    RUN_SELECTED(test_mean_instead_of_sum);
    RUN_SELECTED(test_finite_differences_without_reference);
    RUN_SELECTED(test_b0_offset);
    RUN_SELECTED(test_relative_path_refused);
    RUN_SELECTED(test_missing_symbol_and_file);
    RUN_SELECTED(test_spec_errors);
    RUN_SELECTED(test_reload_after_rebuild);
    RUN_SELECTED(test_unknown_spec_keys);
    RUN_SELECTED(test_nonzero_return_names_the_call);
    RUN_SELECTED(test_output_declared_twice_its_size);
    RUN_SELECTED(test_zero_gradient);
    RUN_SELECTED(test_sign_flip_one_element);
    RUN_SELECTED(test_forward_exits_wording);
    RUN_SELECTED(test_constructor_exits);
    RUN_SELECTED(test_constructor_loops);
    RUN_SELECTED(test_subsecond_timeouts);
    RUN_SELECTED(test_memory_limit);
    RUN_SELECTED(test_leftover_processes_killed);
    RUN_SELECTED(test_kernel_output_contained);
    RUN_SELECTED(test_cli_options);
    RUN_SELECTED(test_grad_monitor_names);
    RUN_SELECTED(test_guarded_call);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return test_summary();
}
