/* libFuzzer target: the reference-expression language of custom operators (src/custom/expr.h):
 * parse, shape inference, float64 evaluation with magnitude bounds, reverse-mode gradients.
 *
 * Input: an optional first line declaring the variables, then the expression text, e.g.
 *     x[4,3] bias[3] scale[]
 *     (x + bias) * scale
 * Each declaration is a name and optional [dims] (up to 9, "-" allowed: refused shapes are part
 * of the test); without a declaration line (no newline, or a first line that declares nothing)
 * the whole input is the expression over x[2,3] and y[3]. Variables of up to 4096 elements (and
 * expressions whose operands broadcast to at most 4096) are evaluated, with values drawn from a
 * hash of the input: uniform in [-3, 3], with zeros, signed zeros, huge, tiny, infinite and NaN
 * values mixed in.
 *
 * Checks besides the sanitizers (FUZZ_REQUIRE): a refused expression has a message, safely
 * truncated at every buffer size; ogx_uses names only declared variables; evaluation and
 * gradients succeed whenever ogx_shape does; magnitude bounds are >= |value| (docs); term counts
 * are >= 1 for results and >= 0 for gradients. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "custom/expr.h"
#include "fuzz.h"

enum { MAXV = 8, NAMELEN = 16, MAXNUMEL = 4096 };

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    return 0;
}

typedef struct decl {
    int n;
    char names[MAXV][NAMELEN];
    ogc_shape shapes[MAXV];
    int ndims[MAXV]; // as declared (may exceed OG_MAX_DIMS: then the shape says OG_MAX_DIMS + 1)
} decl;

// Reads "name[d,d] name2 ..." from line[0..len); false when it declares nothing.
static bool read_decl(const char *line, size_t len, decl *d) {
    memset(d, 0, sizeof *d);
    size_t i = 0;
    while (i < len && d->n < MAXV) {
        while (i < len && line[i] == ' ') i++;
        if (i >= len) break;
        char *name = d->names[d->n];
        int nl = 0;
        while (i < len && line[i] != ' ' && line[i] != '[' && nl < NAMELEN - 1)
            name[nl++] = line[i++];
        while (i < len && line[i] != ' ' && line[i] != '[') i++; // a longer name is cut
        ogc_shape *s = &d->shapes[d->n];
        if (i < len && line[i] == '[') {
            i++;
            while (i < len && line[i] != ']') {
                bool neg = line[i] == '-';
                if (neg) i++;
                int64_t v = 0;
                int digits = 0;
                while (i < len && line[i] >= '0' && line[i] <= '9') {
                    if (digits++ < 6) v = v * 10 + (line[i] - '0');
                    i++;
                }
                if (!digits) return false;
                if (s->ndim <= OG_MAX_DIMS) {
                    if (s->ndim < OG_MAX_DIMS) s->dims[s->ndim] = neg ? -v : v;
                    s->ndim++;
                }
                if (i < len && line[i] == ',')
                    i++;
                else if (i < len && line[i] != ']')
                    return false;
            }
            if (i >= len) return false;
            i++;
        }
        if (!nl) return false;
        d->n++;
    }
    return d->n > 0;
}

static uint64_t hash(const uint8_t *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static double value(uint64_t *x) {
    static const double specials[] = {0.0,    -0.0,  1.0,      -1.0,      0.5,    2.0,
                                      1e-300, 1e300, 710.0,    -710.0,    1e-320, -3.0,
                                      40.0,   -40.0, INFINITY, -INFINITY, NAN,    1e154};
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t r = (uint32_t)(*x >> 33);
    if (r % 8 == 0) return specials[(r >> 3) % (sizeof specials / sizeof specials[0])];
    return (double)(r >> 3) / (double)(1u << 28) * 6.0 - 3.0;
}

static int64_t numel_of(const ogc_shape *s) {
    int64_t n = 1;
    for (int d = 0; d < s->ndim; d++) {
        if (s->dims[d] < 0) return -1;
        if (s->dims[d] > MAXNUMEL) return MAXNUMEL + 1;
        n *= s->dims[d];
        if (n > MAXNUMEL) return MAXNUMEL + 1;
    }
    return n;
}

// The product of the right-aligned largest extents of all variables: a bound on every
// intermediate value's size.
static int64_t broadcast_bound(const decl *d) {
    int64_t ext[OG_MAX_DIMS];
    for (int k = 0; k < OG_MAX_DIMS; k++) ext[k] = 1;
    for (int v = 0; v < d->n; v++)
        for (int k = 0; k < d->shapes[v].ndim && k < OG_MAX_DIMS; k++) {
            int64_t e = d->shapes[v].dims[d->shapes[v].ndim - 1 - k];
            if (e > ext[k]) ext[k] = e;
        }
    int64_t n = 1;
    for (int k = 0; k < OG_MAX_DIMS; k++) {
        n *= ext[k] > MAXNUMEL ? MAXNUMEL + 1 : ext[k];
        if (n > MAXNUMEL) return MAXNUMEL + 1;
    }
    return n;
}

static void evaluate(const ogx_expr *e, const decl *d, uint64_t seed) {
    ogc_shape out;
    char err[256];
    if (!ogx_shape(e, d->shapes, &out, err, sizeof err)) {
        FUZZ_REQUIRE(err[0], "ogx_shape failed without a message");
        return;
    }
    FUZZ_REQUIRE(out.ndim >= 0 && out.ndim <= OG_MAX_DIMS, "result rank %d", out.ndim);
    for (int v = 0; v < d->n; v++) {
        if (d->shapes[v].ndim > OG_MAX_DIMS) {
            FUZZ_REQUIRE(!(ogx_uses(e) >> v & 1), "ogx_shape accepted %s of rank %d", d->names[v],
                         d->shapes[v].ndim);
            return;
        }
        int64_t n = numel_of(&d->shapes[v]);
        if (n < 0 || n > MAXNUMEL) return;
    }
    if (broadcast_bound(d) > MAXNUMEL) return;
    int64_t on = numel_of(&out);
    FUZZ_REQUIRE(on >= 0, "result of %lld elements", (long long)on);
    // the operands' broadcast does not bound the result: a reduction's result broadcasts against
    // its operand again (x[55,1,4] - mean(x, 1) is [55,55,4]); evaluated only up to MAXNUMEL
    if (on > MAXNUMEL) return;
    double *vars[MAXV] = {0}, *grads[MAXV] = {0}, *gmag[MAXV] = {0};
    int64_t vn[MAXV], gterms[MAXV];
    unsigned uses = ogx_uses(e);
    uint64_t x = seed;
    for (int v = 0; v < d->n; v++) {
        vn[v] = numel_of(&d->shapes[v]);
        size_t bytes = (size_t)(vn[v] ? vn[v] : 1) * sizeof(double);
        grads[v] = malloc(bytes);
        gmag[v] = malloc(bytes);
        // an unused variable may be NULL (documented)
        if (!(uses >> v & 1) && (x & 1)) continue;
        vars[v] = malloc(bytes);
        for (int64_t i = 0; i < vn[v]; i++) vars[v][i] = value(&x);
    }
    size_t obytes = (size_t)(on ? on : 1) * sizeof(double);
    double *y = malloc(obytes), *mag = malloc(obytes), *dout = malloc(obytes);
    for (int64_t i = 0; i < on; i++) dout[i] = value(&x);
    int64_t terms = -1;
    bool ok = ogx_eval(e, d->shapes, (const double *const *)vars, y, (x & 2) ? NULL : mag, &terms,
                       err, sizeof err);
    FUZZ_REQUIRE(ok, "ogx_eval failed after ogx_shape succeeded: %s", err);
    FUZZ_REQUIRE(terms >= 1, "terms %lld", (long long)terms);
    if (!(x & 2))
        for (int64_t i = 0; i < on; i++)
            FUZZ_REQUIRE(!(mag[i] < fabs(y[i])), "magnitude bound %.17g < |value| %.17g at %lld",
                         mag[i], fabs(y[i]), (long long)i);
    ok = ogx_grad(e, d->shapes, (const double *const *)vars, dout, grads, gmag, gterms, err,
                  sizeof err);
    FUZZ_REQUIRE(ok, "ogx_grad failed after ogx_eval succeeded: %s", err);
    for (int v = 0; v < d->n; v++) {
        FUZZ_REQUIRE(gterms[v] >= 0, "gterms[%d] = %lld", v, (long long)gterms[v]);
        for (int64_t i = 0; i < vn[v]; i++)
            FUZZ_REQUIRE(!(gmag[v][i] < fabs(grads[v][i])),
                         "gradient bound %.17g < |gradient| %.17g of %s at %lld", gmag[v][i],
                         fabs(grads[v][i]), d->names[v], (long long)i);
    }
    for (int v = 0; v < d->n; v++) free(vars[v]), free(grads[v]), free(gmag[v]);
    free(y), free(mag), free(dout);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    decl d;
    const char *expr = text;
    const char *nl = memchr(text, '\n', size);
    if (!nl || !read_decl(text, (size_t)(nl - text), &d)) {
        memset(&d, 0, sizeof d);
        d.n = 2;
        strcpy(d.names[0], "x");
        strcpy(d.names[1], "y");
        d.shapes[0] = (ogc_shape){2, {2, 3}};
        d.shapes[1] = (ogc_shape){1, {3}};
    } else {
        expr = nl + 1;
    }
    const char *names[MAXV];
    for (int v = 0; v < d.n; v++) names[v] = d.names[v];

    char err[256];
    ogx_expr *e = ogx_parse(expr, d.n, names, err, sizeof err);
    if (!e) {
        FUZZ_REQUIRE(memchr(err, '\0', sizeof err) && err[0], "refused without a message");
        char small[9];
        for (size_t n = 0; n < sizeof small; n += 3) {
            memset(small, 'x', sizeof small);
            FUZZ_REQUIRE(!ogx_parse(expr, d.n, names, small, n), "accepted with a smaller buffer");
            FUZZ_REQUIRE(n == 0 || memchr(small, '\0', n), "message of %zu bytes not terminated",
                         n);
            for (size_t i = n; i < sizeof small; i++)
                FUZZ_REQUIRE(small[i] == 'x', "message buffer of %zu bytes overrun", n);
        }
        FUZZ_REQUIRE(!ogx_parse(expr, d.n, names, NULL, 0), "accepted without a message buffer");
    } else {
        unsigned all = d.n >= 32 ? ~0u : (1u << d.n) - 1;
        FUZZ_REQUIRE((ogx_uses(e) & ~all) == 0, "uses %#x of %d variables", ogx_uses(e), d.n);
        evaluate(e, &d, hash(data, size));
        ogx_free(e);
    }
    free(text);
    return 0;
}
