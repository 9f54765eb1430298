/* The reference expression language (src/custom/expr.h): parse errors, shapes and broadcasting,
 * float64 values of every function, reverse-mode gradients against Richardson-extrapolated
 * central differences, the FusedAddScale gradients exactly, magnitude bounds and terms, size
 * limits, the memory cap of one evaluation and deep nesting. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "custom/expr.h"
#include "test.h"
#include "testutil.h"

// x [3,4], bias [4], scale [1], s 0-d (positive), p [3,1] (positive)
enum { X, BIAS, SCALE, S, P, NV };
static const char *const NAMES[NV] = {"x", "bias", "scale", "s", "p"};
static const ogc_shape SHAPES[NV] = {{2, {3, 4}}, {1, {4}}, {1, {1}}, {0, {0}}, {2, {3, 1}}};

static char err[512];

static int64_t numel(const ogc_shape *s) {
    int64_t n = 1;
    for (int d = 0; d < s->ndim; d++) n *= s->dims[d];
    return n;
}

static bool same_shape(const ogc_shape *a, int ndim, const int64_t *dims) {
    if (a->ndim != ndim) return false;
    for (int d = 0; d < ndim; d++)
        if (a->dims[d] != dims[d]) return false;
    return true;
}

static void check_parse_error(const char *text, const char *needle) {
    err[0] = 0;
    ogx_expr *e = ogx_parse(text, NV, NAMES, err, sizeof err);
    CHECKF(e == NULL && strstr(err, needle) != NULL, "'%s': got %s, message \"%s\" lacks \"%s\"",
           text, e ? "an expression" : "NULL", err, needle);
    ogx_free(e);
}

static void test_parse_errors(void) {
    check_parse_error("x + bais", "at column 5: unknown variable 'bais' (variables: x, bias, "
                                  "scale, s, p)");
    check_parse_error("x + tnah(x)", "at column 5: unknown function 'tnah'");
    check_parse_error("(x + 1", "at column 7: expected ')' to close the '(' at column 1");
    check_parse_error("exp(x", "expected ',' or ')' in the call of exp");
    check_parse_error("x + 1)", "at column 6: unmatched ')'");
    check_parse_error("x y", "at column 3: unexpected 'y'");
    check_parse_error("2x", "at column 2: unexpected 'x'");
    check_parse_error("x # 2", "unexpected '#'");
    check_parse_error("", "at column 1: expected a value, found the end of the input");
    check_parse_error("x +", "expected a value, found the end of the input");
    check_parse_error("x * * 2", "at column 5: expected a value, found '*'");
    check_parse_error("+x", "expected a value, found '+'");
    check_parse_error("()", "expected a value, found ')'");
    check_parse_error("1e999 * x", "number '1e999' is out of range");
    check_parse_error("exp(x, bias)", "at column 1: exp takes 1 argument, got 2");
    check_parse_error("exp()", "exp takes 1 argument, got 0");
    check_parse_error("min(x)", "min takes 2 arguments, got 1");
    check_parse_error("pow(x, 1, 2)", "pow takes 2 arguments, got 3");
    check_parse_error("sum()", "sum takes a value and optional integer dims, got no value");
    check_parse_error("sum(x, 1.5)", "at column 8: the dims of sum must be integer constants, "
                                     "found '1.5'");
    check_parse_error("mean(x, bias)", "the dims of mean must be integer constants, found 'bias'");
    check_parse_error("sum(x, 1 + 1)", "must be integer constants");
    check_parse_error("sum(x, )", "must be integer constants");
    check_parse_error("sum(x, 8)", "dim 8 of sum is out of range");
    check_parse_error("sum(x, -9)", "dim -9 of sum is out of range");
    check_parse_error("sum(x, 99999999999999999999)", "out of range");
    check_parse_error("sum(x, 0, 0)", "sum lists dim 0 twice");
    check_parse_error("x ^ ", "expected a value");

    // no message buffer: still refused, nothing written
    CHECK(ogx_parse("(", NV, NAMES, NULL, 0) == NULL);
    CHECK(ogx_parse(NULL, NV, NAMES, err, sizeof err) == NULL);
    // a tiny buffer is truncated, not overrun
    char small[8] = "xxxxxxx";
    CHECK(ogx_parse("x +", NV, NAMES, small, 4) == NULL);
    CHECK(strlen(small) == 3 && small[4] == 'x');
    // bad variable lists
    const char *const dup[] = {"x", "x"};
    CHECK(ogx_parse("x", 2, dup, err, sizeof err) == NULL);
    CHECKF(strstr(err, "'x' given twice") != NULL, "%s", err);
    CHECK(ogx_parse("x", 33, NAMES, err, sizeof err) == NULL);
    CHECK(ogx_parse("x", -1, NAMES, err, sizeof err) == NULL);
    CHECK(ogx_parse("x", 1, NULL, err, sizeof err) == NULL);
}

static void test_parse_ok_and_uses(void) {
    static const struct {
        const char *text;
        unsigned uses;
    } ok[] = {
        {"(x + bias) * scale", 7},
        {"1e-3 * x + .5 - 2.", 1},
        {"-x ^ 2", 1},
        {"2 ^ 3 ^ 2", 0},
        {"x ^ -1", 1},
        {"  p\t*\ns  ", 24},
        {"sum(x, 0, -1)", 1},
        {"mean( x , -2 )", 1},
        {"pow(bias, scale)", 6},
        {"min(x, max(s, p))", 25},
        {"sum(x)", 1},
        {"0x1p-2 * x", 1},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        ogx_expr *e = ogx_parse(ok[i].text, NV, NAMES, err, sizeof err);
        CHECKF(e != NULL, "'%s': %s", ok[i].text, err);
        if (e) CHECKF(ogx_uses(e) == ok[i].uses, "'%s' uses %#x", ok[i].text, ogx_uses(e));
        ogx_free(e);
    }
    ogx_free(NULL);
    // a variable named like a function is a variable unless called
    const char *const fn[] = {"exp", "sum"};
    ogx_expr *e = ogx_parse("exp(exp) + sum", 2, fn, err, sizeof err);
    CHECKF(e && ogx_uses(e) == 3, "%s", err);
    ogx_free(e);
}

/// Evaluates text over 0-d variables (NAMES, with values v[]): the single result.
static double eval0(const char *text, const double *v) {
    ogc_shape sh[NV] = {{0, {0}}, {0, {0}}, {0, {0}}, {0, {0}}, {0, {0}}};
    const double *vars[NV] = {&v[0], &v[1], &v[2], &v[3], &v[4]};
    double out = NAN, mag = NAN;
    ogx_expr *e = ogx_parse(text, NV, NAMES, err, sizeof err);
    CHECKF(e != NULL, "'%s': %s", text, err);
    if (!e) return NAN;
    ogc_shape o;
    CHECK(ogx_shape(e, sh, &o, err, sizeof err) && o.ndim == 0);
    CHECKF(ogx_eval(e, sh, vars, &out, &mag, NULL, err, sizeof err), "%s", err);
    CHECKF(mag >= fabs(out) || isnan(out), "'%s': magnitude %g below |%g|", text, mag, out);
    ogx_free(e);
    return out;
}

static void check_close(const char *text, double x, double want) {
    double v[NV] = {x, 0, 0, 0, 0};
    double got = eval0(text, v);
    CHECKF(got == want || fabs(got - want) <= 2.5e-16 * fabs(want),
           "%s at x=%.17g: %.17g, want %.17g", text, x, got, want);
}

static void test_values_of_every_function(void) {
    // hand-computed (40-digit mpmath, rounded to float64)
    static const double pts[3] = {-1.5, 0.25, 3};
    static const struct {
        const char *text;
        double want[3];
    } f[] = {
        {"exp(x)", {0.22313016014842982, 1.2840254166877414, 20.085536923187668}},
        {"tanh(x)", {-0.9051482536448664, 0.24491866240370913, 0.9950547536867305}},
        {"sigmoid(x)", {0.18242552380635635, 0.5621765008857981, 0.9525741268224333}},
        {"softplus(x)", {0.2014132779827524, 0.8259394198788436, 3.048587351573742}},
        {"erf(x)", {-0.9661051464753108, 0.27632639016823696, 0.9999779095030014}},
        {"abs(x)", {1.5, 0.25, 3}},
        {"relu(x)", {0, 0.25, 3}},
        {"-x", {1.5, -0.25, -3}},
        {"x ^ 2", {2.25, 0.0625, 9}},
        {"pow(x, 3)", {-3.375, 0.015625, 27}},
        {"min(x, 0.25)", {-1.5, 0.25, 0.25}},
        {"max(x, 0.25)", {0.25, 0.25, 3}},
        {"(x + 1) * 2 - x / 4", {-0.625, 2.4375, 7.25}},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        for (int j = 0; j < 3; j++) check_close(f[i].text, pts[j], f[i].want[j]);
    static const double lp[3] = {0.25, 3, 7.5};
    static const double logs[3] = {-1.3862943611198906, 1.0986122886681098, 2.0149030205422647};
    static const double sqrts[3] = {0.5, 1.7320508075688772, 2.7386127875258306};
    for (int j = 0; j < 3; j++) {
        check_close("log(x)", lp[j], logs[j]);
        check_close("sqrt(x)", lp[j], sqrts[j]);
    }
    check_close("x ^ 0.5", 2, 1.4142135623730951);
    check_close("x ^ -2.5", 1.5, 0.36288736930121157);
    // precedence and associativity
    check_close("-x ^ 2", 3, -9);
    check_close("2 ^ 3 ^ x", 2, 512);
    check_close("2 ^ -x", 1, 0.5);
    check_close("1 - x - 1", 3, -3);
    check_close("8 / x / 2", 2, 2);
    check_close("--x", 3, 3);
    check_close("1e-3 * x", 4, 0.004);
    // stable at the extremes: no overflow, no NaN
    check_close("softplus(x)", 800, 800);
    check_close("softplus(x)", -800, 0);
    check_close("softplus(x)", -40, 4.248354255291589e-18);
    check_close("sigmoid(x)", -800, 0);
    check_close("sigmoid(x)", 800, 1);
    check_close("sigmoid(x)", -40, 4.248354255291589e-18);
}

static void check_shape(const char *text, const ogc_shape *vs, int ndim, const int64_t *dims) {
    ogx_expr *e = ogx_parse(text, NV, NAMES, err, sizeof err);
    CHECKF(e != NULL, "'%s': %s", text, err);
    if (!e) return;
    ogc_shape o;
    bool ok = ogx_shape(e, vs, &o, err, sizeof err);
    CHECKF(ok && same_shape(&o, ndim, dims), "'%s': %s", text, ok ? "wrong shape" : err);
    ogx_free(e);
}

static void check_shape_error(const char *text, const ogc_shape *vs, const char *needle) {
    ogx_expr *e = ogx_parse(text, NV, NAMES, err, sizeof err);
    CHECKF(e != NULL, "'%s': %s", text, err);
    if (!e) return;
    ogc_shape o;
    err[0] = 0;
    bool ok = ogx_shape(e, vs, &o, err, sizeof err);
    CHECKF(!ok && strstr(err, needle), "'%s': message \"%s\" lacks \"%s\"", text, err, needle);
    // evaluation refuses the same way, before touching any data
    double out[4];
    const double *vars[NV] = {0};
    CHECK(!ogx_eval(e, vs, vars, out, NULL, NULL, err, sizeof err) && strstr(err, needle));
    ogx_free(e);
}

static void test_shapes_and_broadcast_errors(void) {
    check_shape("(x + bias) * scale", SHAPES, 2, (int64_t[]){3, 4});
    check_shape("sum(x, 0)", SHAPES, 1, (int64_t[]){4});
    check_shape("sum(x, -1)", SHAPES, 1, (int64_t[]){3});
    check_shape("mean(x, 1, 0)", SHAPES, 0, NULL);
    check_shape("sum(x)", SHAPES, 0, NULL);
    check_shape("s * 2", SHAPES, 0, NULL);
    check_shape("x * p", SHAPES, 2, (int64_t[]){3, 4});
    check_shape("mean(x, -1) * p", SHAPES, 2, (int64_t[]){3, 3});
    check_shape("scale + s", SHAPES, 1, (int64_t[]){1});
    check_shape("sum(s)", SHAPES, 0, NULL);
    ogc_shape v[NV] = {{2, {5, 7}}, {1, {6}}, {3, {2, 1, 4}}, {2, {3, 1}}, {4, {1, 1, 1, 1}}};
    check_shape("s * scale", v, 3, (int64_t[]){2, 3, 4});
    check_shape("p + x", v, 4, (int64_t[]){1, 1, 5, 7});
    check_shape("sum(scale, 1)", v, 2, (int64_t[]){2, 4});
    check_shape("sum(p, 0, 1, 2, 3)", v, 0, NULL);
    check_shape_error("x + bias", v, "cannot broadcast [5,7] with [6] in 'x + bias'");
    check_shape_error("exp(s * scale) + x", v, "cannot broadcast [2,3,4] with [5,7]");
    check_shape_error("sum(x, 2)", v, "sum over dim 2 of a rank-2 value in 'sum(x, 2)'");
    check_shape_error("mean(x, -3)", v, "mean over dim -3 of a rank-2 value");
    check_shape_error("sum(x, 0, -2)", v, "sum over dim 0 twice (dims 0 and -2 of a rank-2");
    check_shape_error("sum(sum(x), 0)", v, "sum over dim 0 of a rank-0 value");
    // bad variable shapes
    ogc_shape bad[NV] = {{9, {1}}, {1, {4}}, {1, {1}}, {0, {0}}, {2, {3, 1}}};
    check_shape_error("x", bad, "variable 'x' has rank 9");
    bad[X] = (ogc_shape){2, {3, -1}};
    check_shape_error("x * 2", bad, "variable 'x' has a negative dim: [3,-1]");
    // an unused variable's shape does not matter
    bad[X] = (ogc_shape){-5, {0}};
    check_shape("bias", bad, 1, (int64_t[]){4});
}

static void test_size_limits(void) {
    ogc_shape v[NV] = {{2, {1 << 16, 1 << 16}},
                       {1, {1 << 16}},
                       {2, {1 << 16, 1}},
                       {0, {0}},
                       {2, {1 << 16, 1 << 15}}};
    check_shape_error("x", v, "variable 'x' [65536,65536] has more than 2^31 elements");
    check_shape("p", v, 2, (int64_t[]){1 << 16, 1 << 15}); // exactly 2^31: accepted
    check_shape_error("scale * bias", v, "'scale * bias' would have more than 2^31 elements");
    // extents whose product overflows int64, even next to a 0 dim
    v[X] = (ogc_shape){3, {INT64_MAX, INT64_MAX, 0}};
    check_shape_error("x", v, "more than 2^31 elements");
    v[X] = (ogc_shape){2, {(int64_t)1 << 40, 0}};
    check_shape_error("sum(x, 1)", v, "more than 2^31 elements");
}

/// One evaluation's intermediates are capped at OGX_MAX_BYTES (1 GiB), checked from the shapes
/// before anything is allocated: an outer product by broadcasting, a sum of many large terms and
/// a gradient over the cap are refused with a message naming the expression and the cap. The
/// inputs are real buffers of their shapes (never touched: the refusal comes first).
static void test_memory_cap(void) {
    CHECK_EQ(OGX_MAX_BYTES, (int64_t)1 << 30);
    // p [2^15, 1] * bias [2^15]: 256 KiB of inputs, a [2^15, 2^15] product of 8 GiB
    ogc_shape sh[NV] = {{2, {8192, 1024}}, {1, {1 << 15}}, {1, {1}}, {0, {0}}, {2, {1 << 15, 1}}};
    double *pv = calloc(1 << 15, sizeof(double)), *bv = calloc(1 << 15, sizeof(double)), out[4];
    const double *vars[NV] = {NULL, bv, NULL, NULL, pv};
    ogx_expr *e = ogx_parse("p * bias", NV, NAMES, err, sizeof err);
    ogc_shape o;
    CHECK(e && ogx_shape(e, sh, &o, err, sizeof err)); // within OGX_MAX_ELEMENTS
    err[0] = 0;
    CHECK(e && !ogx_eval(e, sh, vars, out, NULL, NULL, err, sizeof err));
    CHECKF(strstr(err, "'p * bias' needs 8589") &&
               strstr(err, "(8.0 GiB) for its intermediate values, over the cap of 1073741824 "
                           "bytes (1 GiB) per evaluation (OGX_MAX_BYTES); its largest value is "
                           "'p * bias', [32768,32768]"),
           "%s", err);
    ogx_free(e);
    // x [8192, 1024] is 64 MiB: 20 terms of it need 19 sums, 1.2 GiB together
    size_t n = (size_t)8192 * 1024;
    double *xv = calloc(n, sizeof(double)), *xo = calloc(n, sizeof(double));
    vars[X] = xv;
    char text[128] = "x";
    for (int i = 1; i < 20; i++) strcat(text, " + x");
    e = ogx_parse(text, NV, NAMES, err, sizeof err);
    err[0] = 0;
    CHECK(e && xv && xo && !ogx_eval(e, sh, vars, xo, NULL, NULL, err, sizeof err));
    CHECKF(strstr(err, "'x + x + x + x + x + x + x + x + x + x + x + x + x + x + x...' needs ") &&
               strstr(err, "(1.2 GiB) for its intermediate values, over the cap") &&
               strstr(err, "its largest value is 'x', [8192,1024]"),
           "%s", err);
    ogx_free(e);
    // a gradient counts the adjoints too: 'x * 2 + x' at x [8192, 2048] (128 MiB) evaluates in
    // 5 buffers (with magnitudes) but differentiates in 11, 1.4 GiB
    sh[X] = (ogc_shape){2, {8192, 2048}};
    double *gx = calloc(2 * n, sizeof(double)), *gm = calloc(2 * n, sizeof(double));
    double *xv2 = calloc(2 * n, sizeof(double)), *dout = calloc(2 * n, sizeof(double));
    double *grads[NV] = {gx}, *gmag[NV] = {gm};
    vars[X] = xv2;
    e = ogx_parse("x * 2 + x", NV, NAMES, err, sizeof err);
    err[0] = 0;
    CHECK(e && gx && gm && xv2 && dout &&
          !ogx_grad(e, sh, vars, dout, grads, gmag, NULL, err, sizeof err));
    CHECKF(strstr(err, "'x * 2 + x' needs ") &&
               strstr(err, "(1.4 GiB) for its intermediate values and gradients, over the cap of "
                           "1073741824 bytes (1 GiB)"),
           "%s", err);
    ogx_free(e);
    free(pv), free(bv), free(xv), free(xo), free(gx), free(gm), free(xv2), free(dout);
}

/// Every element of every used variable: the gradient against central differences of
/// L = sum(dout * out), Richardson-extrapolated; magnitude bounds hold everywhere.
static double check_gradient(const char *text, uint64_t seed) {
    ogx_expr *e = ogx_parse(text, NV, NAMES, err, sizeof err);
    CHECKF(e != NULL, "'%s': %s", text, err);
    if (!e) return INFINITY;
    test_rng rng;
    test_rng_seed(&rng, seed);
    double data[NV][12], grad[NV][12], gmag[NV][12];
    const double *vars[NV];
    double *grads[NV], *gmags[NV];
    for (int k = 0; k < NV; k++) {
        for (int64_t j = 0; j < numel(&SHAPES[k]); j++) {
            double u = test_rng_uniform(&rng, 0.2, 2); // away from the kinks at 0
            data[k][j] = k == S || k == P ? test_rng_uniform(&rng, 0.5, 2)
                                          : (test_rng_uniform(&rng, 0, 1) < 0.5 ? -u : u);
        }
        vars[k] = data[k], grads[k] = grad[k], gmags[k] = gmag[k];
    }
    ogc_shape o;
    CHECKF(ogx_shape(e, SHAPES, &o, err, sizeof err), "'%s': %s", text, err);
    int64_t n = numel(&o);
    double *dout = malloc((size_t)n * sizeof *dout), *out = malloc((size_t)n * sizeof *out);
    double *mag = malloc((size_t)n * sizeof *mag), *out2 = malloc((size_t)n * sizeof *out2);
    for (int64_t j = 0; j < n; j++) dout[j] = test_rng_uniform(&rng, -1, 1);
    int64_t gterms[NV];
    bool ok = ogx_eval(e, SHAPES, vars, out, mag, NULL, err, sizeof err) &&
              ogx_grad(e, SHAPES, vars, dout, grads, gmags, gterms, err, sizeof err);
    CHECKF(ok, "'%s': %s", text, err);
    for (int64_t j = 0; ok && j < n; j++)
        CHECKF(mag[j] >= fabs(out[j]), "'%s': mag[%lld] = %g < |%g|", text, (long long)j, mag[j],
               out[j]);
    double worst = 0;
    for (int k = 0; ok && k < NV; k++) {
        for (int64_t j = 0; j < numel(&SHAPES[k]); j++) {
            if (!(ogx_uses(e) >> k & 1)) {
                CHECK(grad[k][j] == 0 && gmag[k][j] == 0 && gterms[k] == 0);
                continue;
            }
            double x0 = data[k][j], h = 1e-3 * (fabs(x0) > 1 ? fabs(x0) : 1), d[2];
            for (int r = 0; r < 2; r++, h /= 2) {
                // L(+h) - L(-h) as sum(dout * (out+ - out-)): elements the step does not reach
                // cancel exactly, so the rounding is that of the reached elements, not of L
                data[k][j] = x0 + h;
                ok &= ogx_eval(e, SHAPES, vars, out, NULL, NULL, err, sizeof err);
                data[k][j] = x0 - h;
                ok &= ogx_eval(e, SHAPES, vars, out2, NULL, NULL, err, sizeof err);
                d[r] = 0;
                for (int64_t i = 0; i < n; i++) d[r] += dout[i] * (out[i] - out2[i]);
                d[r] /= 2 * h;
            }
            data[k][j] = x0;
            double fd = (4 * d[1] - d[0]) / 3, g = grad[k][j];
            double rel = fabs(g - fd) / fmax(fabs(g), 1e-3); // absolute below 1e-3
            if (rel > worst) worst = rel;
            CHECKF(rel < 1e-8, "'%s' d/d%s[%lld]: %.17g, differences %.17g (rel %.2g)", text,
                   NAMES[k], (long long)j, g, fd, rel);
            CHECKF(gmag[k][j] >= fabs(g), "'%s' d/d%s[%lld]: gmag %g < |%g|", text, NAMES[k],
                   (long long)j, gmag[k][j], g);
            CHECK(gterms[k] >= 1);
        }
    }
    CHECK(ok);
    free(dout), free(out), free(out2), free(mag);
    ogx_free(e);
    return worst;
}

static const char *const GRADIENT_EXPRS[] = {
    "(x + bias) * scale",
    "x - bias / p",
    "-x * s",
    "x / (p + bias * bias)",
    "p ^ x",
    "pow(p, bias)",
    "x ^ 3",
    "pow(x, 2) - x ^ -2",
    "s ^ scale",
    "p ^ 0.5 * s ^ -1.5",
    "2 ^ bias ^ 2",
    "exp(x * scale)",
    "log(p * s) * x",
    "sqrt(p + x * x)",
    "abs(x) * bias",
    "tanh(x + bias)",
    "sigmoid(3 * x - bias)",
    "softplus(x - bias) * scale",
    "erf(x * bias)",
    "relu(x) * scale + relu(bias)",
    "min(x, bias)",
    "max(x, scale) * min(p, s)",
    "max(bias, x)",
    "sum(x * bias)",
    "sum(x, 0) * bias",
    "mean(x, -1) * p",
    "sum(exp(x), 0, 1) * s",
    "mean(x * scale) + s",
    "sum(sum(x, 1) * p)",
    "mean(x, 0) - sum(x, -2)",
    "x * x + x",
    "sum(x * x, -1) / sum(p, 1)",
    "softplus(x * 20) - x",
    "sigmoid(bias * 10) * s",
    "x",
    "exp(-x ^ 2) * tanh(p) / (1 + s)",
    "mean(x)",
};

static void test_gradients_against_differences(void) {
    double worst = 0;
    for (size_t i = 0; i < sizeof GRADIENT_EXPRS / sizeof GRADIENT_EXPRS[0]; i++)
        for (uint64_t seed = 1; seed <= 3; seed++)
            worst = fmax(worst, check_gradient(GRADIENT_EXPRS[i], seed * 7919 + i));
    printf("  %zu expressions x 3 points: worst relative error %.2g\n",
           sizeof GRADIENT_EXPRS / sizeof GRADIENT_EXPRS[0], worst);
}

static void test_derivative_conventions(void) {
    // abs'(0) = 0, relu'(0) = 0, min/max ties go to the first operand, pow's b-partial at a <= 0
    const char *const nm[] = {"a", "b"};
    ogc_shape sh[2] = {{0, {0}}, {0, {0}}};
    static const struct {
        const char *text;
        double a, b, ga, gb;
    } c[] = {
        {"abs(a)", 0, 0, 0, 0},
        {"relu(a)", 0, 0, 0, 0},
        {"min(a, b)", 1, 1, 1, 0},
        {"max(a, b)", 1, 1, 1, 0},
        {"min(b, a)", 1, 1, 0, 1},
        {"min(a, b)", 2, 1, 0, 1},
        {"max(a, b)", 2, 1, 1, 0},
        {"a ^ b", -2, 2, -4, 0},
        {"a ^ b", 0, 2, 0, 0},
        {"a ^ b", 2, 0, 0, 0.6931471805599453},
        {"softplus(a)", 0, 0, 0.5, 0},
        {"sqrt(a)", 4, 0, 0.25, 0},
        {"erf(a)", 0, 0, 1.1283791670955126, 0},
        {"sigmoid(a) + tanh(b)", 800, -800, 0, 0},
        {"sigmoid(a)", -800, 0, 0, 0},
        {"a / b", 3, 2, 0.5, -0.75},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        ogx_expr *e = ogx_parse(c[i].text, 2, nm, err, sizeof err);
        CHECKF(e != NULL, "%s", err);
        if (!e) continue;
        const double *vars[2] = {&c[i].a, &c[i].b};
        double one = 1, ga = NAN, gb = NAN;
        double *grads[2] = {&ga, &gb};
        CHECKF(ogx_grad(e, sh, vars, &one, grads, NULL, NULL, err, sizeof err), "%s", err);
        CHECKF(ga == c[i].ga && gb == c[i].gb, "%s at (%g, %g): (%.17g, %.17g), want (%g, %g)",
               c[i].text, c[i].a, c[i].b, ga, gb, c[i].ga, c[i].gb);
        ogx_free(e);
    }
}

static void test_fused_add_scale_exact(void) {
    enum { N = 5, C = 37 };
    ogc_shape sh[3] = {{2, {N, C}}, {1, {C}}, {1, {1}}};
    double x[N * C], bias[C], scale = -1.37, dout[N * C], out[N * C], mag[N * C];
    test_rng rng;
    test_rng_seed(&rng, 42);
    for (int i = 0; i < N * C; i++) x[i] = test_rng_uniform(&rng, -2, 2);
    for (int i = 0; i < C; i++) bias[i] = test_rng_uniform(&rng, -2, 2);
    for (int i = 0; i < N * C; i++) dout[i] = test_rng_uniform(&rng, -1, 1);
    ogx_expr *e = ogx_parse("(x + bias) * scale", 3, NAMES, err, sizeof err);
    CHECKF(e != NULL, "%s", err);
    if (!e) return;
    const double *vars[3] = {x, bias, &scale};
    double gx[N * C], gb[C], gs, mx[N * C], mb[C], ms;
    double *grads[3] = {gx, gb, &gs}, *gmag[3] = {mx, mb, &ms};
    int64_t terms = -1, gterms[3] = {-1, -1, -1};
    CHECK(ogx_eval(e, sh, vars, out, mag, &terms, err, sizeof err));
    CHECK(ogx_grad(e, sh, vars, dout, grads, gmag, gterms, err, sizeof err));
    CHECK_EQ(terms, 1);
    CHECK_EQ(gterms[0], 1);
    CHECK_EQ(gterms[1], N);
    CHECK_EQ(gterms[2], N * C);
    double want_s = 0, want_ms = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < C; j++) {
            double y = (x[i * C + j] + bias[j]) * scale;
            CHECK(out[i * C + j] == y);
            CHECK(mag[i * C + j] == (fabs(x[i * C + j]) + fabs(bias[j])) * fabs(scale));
            CHECK(gx[i * C + j] == dout[i * C + j] * scale);
            CHECK(mx[i * C + j] == fabs(dout[i * C + j]) * fabs(scale));
            want_s += dout[i * C + j] * (x[i * C + j] + bias[j]);
            want_ms += fabs(dout[i * C + j]) * (fabs(x[i * C + j]) + fabs(bias[j]));
        }
    for (int j = 0; j < C; j++) {
        double want = 0, wm = 0;
        for (int i = 0; i < N; i++)
            want += dout[i * C + j] * scale, wm += fabs(dout[i * C + j] * scale);
        CHECKF(gb[j] == want, "dbias[%d] = %.17g, want %.17g", j, gb[j], want);
        CHECK(mb[j] == wm);
    }
    CHECKF(gs == want_s, "dscale = %.17g, want %.17g", gs, want_s);
    CHECK(ms == want_ms);
    // grads[k] == NULL skips a variable; gterms still covers it
    double gb2[C];
    double *only_bias[3] = {NULL, gb2, NULL};
    gterms[2] = -1;
    CHECK(ogx_grad(e, sh, vars, dout, only_bias, NULL, gterms, err, sizeof err));
    CHECK(memcmp(gb2, gb, sizeof gb) == 0);
    CHECK_EQ(gterms[2], N * C);
    ogx_free(e);
}

static void check_terms(const char *text, int64_t want, const int64_t *want_g) {
    ogx_expr *e = ogx_parse(text, NV, NAMES, err, sizeof err);
    CHECKF(e != NULL, "%s", err);
    if (!e) return;
    double d[NV][12] = {{0}}, out[16], dout[16], g[NV][12];
    for (int i = 0; i < 16; i++) dout[i] = 1;
    const double *vars[NV] = {d[0], d[1], d[2], d[3], d[4]};
    double *grads[NV] = {g[0], g[1], g[2], g[3], g[4]};
    int64_t terms = -1, gterms[NV];
    CHECK(ogx_eval(e, SHAPES, vars, out, NULL, &terms, err, sizeof err));
    CHECK(ogx_grad(e, SHAPES, vars, dout, grads, NULL, gterms, err, sizeof err));
    CHECKF(terms == want, "'%s': %lld terms, want %lld", text, (long long)terms, (long long)want);
    for (int k = 0; k < NV; k++)
        CHECKF(gterms[k] == want_g[k], "'%s': d/d%s has %lld terms, want %lld", text, NAMES[k],
               (long long)gterms[k], (long long)want_g[k]);
    ogx_free(e);
}

static void test_terms(void) {
    check_terms("x", 1, (int64_t[]){1, 0, 0, 0, 0});
    check_terms("sum(x, 0)", 3, (int64_t[]){1, 0, 0, 0, 0});
    check_terms("sum(x)", 12, (int64_t[]){1, 0, 0, 0, 0});
    check_terms("mean(sum(x, 1))", 12, (int64_t[]){1, 0, 0, 0, 0});
    check_terms("sum(x, 0) * bias + s", 3, (int64_t[]){1, 1, 0, 4, 0});
    check_terms("x * bias * p", 1, (int64_t[]){1, 3, 0, 0, 4});
    check_terms("x + x * scale + s", 1, (int64_t[]){2, 0, 12, 12, 0});
}

static void test_magnitudes(void) {
    const char *const nm[] = {"a", "b"};
    ogc_shape sh[2] = {{0, {0}}, {0, {0}}};
    double a = 1.25, b = 1.0, out, mag;
    const double *vars[2] = {&a, &b};
    ogx_expr *e = ogx_parse("a - b", 2, nm, err, sizeof err);
    CHECK(e && ogx_eval(e, sh, vars, &out, &mag, NULL, err, sizeof err) && mag == 2.25);
    ogx_free(e);
    // no cancellation in the argument: exactly |f(a)|
    e = ogx_parse("exp(a * b)", 2, nm, err, sizeof err);
    CHECK(e && ogx_eval(e, sh, vars, &out, &mag, NULL, err, sizeof err) && mag == exp(1.25));
    ogx_free(e);
    // cancellation inside the argument propagates: |f(a)| + |f'(a)| (m(a) - |a|)
    e = ogx_parse("exp(a - b)", 2, nm, err, sizeof err);
    CHECK(e && ogx_eval(e, sh, vars, &out, &mag, NULL, err, sizeof err));
    CHECKF(fabs(mag - exp(0.25) * 3) < 1e-15, "%.17g", mag);
    ogx_free(e);
    e = ogx_parse("sum(a - b) / (a - b) + abs(a - b)", 2, nm, err, sizeof err);
    CHECK(e && ogx_eval(e, sh, vars, &out, &mag, NULL, err, sizeof err));
    CHECKF(out == 1.25 && mag >= 9 + 2.25, "%g %g", out, mag);
    ogx_free(e);
    // bounds hold on random points over every gradient expression (checked in check_gradient)
}

/// Depth beyond OGX_MAX_DEPTH is refused with a message, never a crash; a long flat chain is
/// fine (nothing but the parser recurses).
static void test_deep_nesting(void) {
    enum { DEEP = 10000 };
    char *t = malloc(6 * DEEP + 16);
    static const char *const open[] = {"(", "-", "exp(", "x^", "sum("};
    static const char *const close[] = {")", "", ")", "", ")"};
    for (int f = 0; f < 5; f++) {
        size_t n = 0;
        for (int i = 0; i < DEEP; i++) n += (size_t)sprintf(t + n, "%s", open[f]);
        n += (size_t)sprintf(t + n, "x");
        for (int i = 0; i < DEEP; i++) n += (size_t)sprintf(t + n, "%s", close[f]);
        err[0] = 0;
        ogx_expr *e = ogx_parse(t, NV, NAMES, err, sizeof err);
        CHECKF(e == NULL && strstr(err, "nesting deeper than 200 levels"), "'%s...': %s", open[f],
               err);
        ogx_free(e);
    }
    // 150 levels are fine
    size_t n = 0;
    for (int i = 0; i < 150; i++) t[n++] = '(';
    t[n++] = 'x';
    for (int i = 0; i < 150; i++) t[n++] = ')';
    t[n] = 0;
    ogx_expr *e = ogx_parse(t, NV, NAMES, err, sizeof err);
    CHECKF(e != NULL, "%s", err);
    ogx_free(e);
    // a flat chain of DEEP terms: value, gradient and terms
    n = 0;
    for (int i = 0; i < DEEP; i++) n += (size_t)sprintf(t + n, i ? "+s" : "s");
    e = ogx_parse(t, NV, NAMES, err, sizeof err);
    CHECKF(e != NULL, "%s", err);
    double sv = 0.5, out = 0, one = 1, g = 0;
    const double *vars[NV] = {NULL, NULL, NULL, &sv, NULL};
    double *grads[NV] = {NULL, NULL, NULL, &g, NULL};
    int64_t gterms[NV];
    CHECK(e && ogx_eval(e, SHAPES, vars, &out, NULL, NULL, err, sizeof err) && out == DEEP * 0.5);
    CHECK(e && ogx_grad(e, SHAPES, vars, &one, grads, NULL, gterms, err, sizeof err) && g == DEEP);
    CHECK_EQ(gterms[S], DEEP);
    ogx_free(e);
    free(t);
}

static void test_eval_errors_and_edges(void) {
    ogx_expr *e = ogx_parse("x * bias", NV, NAMES, err, sizeof err);
    CHECK(e != NULL);
    double x[12] = {0}, out[12], dout[12] = {0};
    const double *vars[NV] = {x, NULL, NULL, NULL, NULL};
    CHECK(!ogx_eval(e, SHAPES, vars, out, NULL, NULL, err, sizeof err));
    CHECKF(strstr(err, "no data for variable 'bias'"), "%s", err);
    double *grads[NV] = {0};
    CHECK(!ogx_grad(e, SHAPES, vars, dout, grads, NULL, NULL, err, sizeof err));
    CHECK(!ogx_eval(e, SHAPES, NULL, out, NULL, NULL, err, sizeof err));
    ogx_free(e);
    // a constant expression needs no variables; 0-d result
    e = ogx_parse("2 * 3 + 1", 0, NULL, err, sizeof err);
    double o = 0, m = 0;
    int64_t terms = 0;
    CHECK(e && ogx_eval(e, NULL, NULL, &o, &m, &terms, err, sizeof err) && o == 7 && m == 7);
    CHECK_EQ(terms, 1);
    ogx_free(e);
    // empty values: sum over an empty dim is 0
    ogc_shape sh[NV] = {{2, {0, 4}}, {1, {4}}, {1, {1}}, {0, {0}}, {2, {3, 1}}};
    double bias[4] = {1, 2, 3, 4}, gx[1], gbias[4];
    const double *v2[NV] = {x, bias, NULL, NULL, NULL};
    double *g2[NV] = {gx, gbias, NULL, NULL, NULL};
    e = ogx_parse("sum(x * 2, 0) + bias", NV, NAMES, err, sizeof err);
    CHECK(e && ogx_eval(e, sh, v2, out, NULL, NULL, err, sizeof err));
    CHECK(out[0] == 1 && out[3] == 4);
    double d4[4] = {1, 1, 1, 1};
    CHECK(e && ogx_grad(e, sh, v2, d4, g2, NULL, NULL, err, sizeof err) && gbias[2] == 1);
    ogx_free(e);
}

int main(void) {
    RUN(test_parse_errors);
    RUN(test_parse_ok_and_uses);
    RUN(test_values_of_every_function);
    RUN(test_shapes_and_broadcast_errors);
    RUN(test_size_limits);
    RUN(test_memory_cap);
    RUN(test_gradients_against_differences);
    RUN(test_derivative_conventions);
    RUN(test_fused_add_scale_exact);
    RUN(test_terms);
    RUN(test_magnitudes);
    RUN(test_deep_nesting);
    RUN(test_eval_errors_and_edges);
    return test_summary();
}
