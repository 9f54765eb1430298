/* Reference expressions: a recursive-descent parser to a node array, a forward tape over the
 * nodes (each node's buffer sized by its broadcast shape) and a reverse pass that accumulates
 * adjoints. The grammar, the derivative conventions and the magnitude bounds are documented in
 * expr.h. Nothing here recurses except the parser, whose depth is bounded (OGX_MAX_DEPTH). */
#include "custom/expr.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Node kinds: leaves, binary (broadcasting), unary, reductions; the ranges matter (IS_*).
enum {
    N_NUM,
    N_VAR,
    N_ADD,
    N_SUB,
    N_MUL,
    N_DIV,
    N_POW,
    N_MIN,
    N_MAX,
    N_NEG,
    N_EXP,
    N_LOG,
    N_SQRT,
    N_ABS,
    N_TANH,
    N_SIGMOID,
    N_SOFTPLUS,
    N_ERF,
    N_RELU,
    N_SUM,
    N_MEAN
};
#define IS_BINARY(op) ((op) >= N_ADD && (op) <= N_MAX)
#define IS_UNARY(op) ((op) >= N_NEG && (op) <= N_RELU)
#define IS_REDUCE(op) ((op) == N_SUM || (op) == N_MEAN)

static const struct {
    const char *name;
    int op, nargs; // nargs -1: a reduction (a value, then optional dims)
} FUNCS[] = {
    {"exp", N_EXP, 1},   {"log", N_LOG, 1},         {"sqrt", N_SQRT, 1},         {"abs", N_ABS, 1},
    {"tanh", N_TANH, 1}, {"sigmoid", N_SIGMOID, 1}, {"softplus", N_SOFTPLUS, 1}, {"erf", N_ERF, 1},
    {"relu", N_RELU, 1}, {"min", N_MIN, 2},         {"max", N_MAX, 2},           {"pow", N_POW, 2},
    {"sum", N_SUM, -1},  {"mean", N_MEAN, -1},
};
#define NFUNCS ((int)(sizeof FUNCS / sizeof FUNCS[0]))
#define MAX_TEXT (1 << 20) // keeps every position an int

typedef struct {
    int op;
    int a, b;   // operands (-1: none), always earlier nodes: index order is a topological order
    int var;    // N_VAR
    double num; // N_NUM
    int nred;   // reductions: the dims as written (0: every dim)
    int red[OG_MAX_DIMS];
    int pos, end; // source span, for messages
} node;

struct ogx_expr {
    node *n;
    int nn, cap, root;
    int nvars;
    unsigned uses;
    int varnode[OGX_MAX_VARS]; // each used variable has one node, so its adjoint is the gradient
    char *text;
    char *names[OGX_MAX_VARS];
};

__attribute__((format(printf, 3, 4))) static bool fail(char *err, size_t errsize, const char *fmt,
                                                       ...) {
    if (err && errsize) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errsize, fmt, ap);
        va_end(ap);
    }
    return false;
}

/// 'source text' of a node, shortened, for messages.
static const char *quote(const ogx_expr *e, const node *n, char *buf, size_t size) {
    int len = n->end - n->pos;
    if (len > 60)
        snprintf(buf, size, "'%.57s...'", e->text + n->pos);
    else
        snprintf(buf, size, "'%.*s'", len, e->text + n->pos);
    return buf;
}

static const char *shape_str(const ogc_shape *s, char *buf, size_t size) {
    size_t k = (size_t)snprintf(buf, size, "[");
    for (int d = 0; d < s->ndim && k < size; d++)
        k += (size_t)snprintf(buf + k, size - k, d ? ",%lld" : "%lld", (long long)s->dims[d]);
    if (k < size) snprintf(buf + k, size - k, "]");
    return buf;
}

/* ---------------------------------------------------------------------------------------------
 * Parser */

typedef struct {
    ogx_expr *e;
    const char *s;
    int p, depth;
    char *err;
    size_t errsize;
} parser;

__attribute__((format(printf, 3, 4))) static int perr(parser *P, int pos, const char *fmt, ...) {
    if (P->err && P->errsize) {
        int k = snprintf(P->err, P->errsize, "at column %d: ", pos + 1);
        if (k >= 0 && (size_t)k < P->errsize) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(P->err + k, P->errsize - (size_t)k, fmt, ap);
            va_end(ap);
        }
    }
    return -1;
}

static void skip(parser *P) {
    while (isspace((unsigned char)P->s[P->p])) P->p++;
}

static int ident_len(const char *s) {
    int n = 0;
    if (isalpha((unsigned char)s[0]) || s[0] == '_')
        while (isalnum((unsigned char)s[n]) || s[n] == '_') n++;
    return n;
}

/// The token at P->p, for "found ..." in messages.
static const char *tok(const parser *P, char *buf, size_t size) {
    const char *s = P->s + P->p;
    int n = ident_len(s);
    if (!*s) return "the end of the input";
    if (!n && (isdigit((unsigned char)*s) || *s == '.')) {
        char *end;
        (void)strtod(s, &end);
        n = (int)(end - s);
    }
    if (n)
        snprintf(buf, size, "'%.*s'", n > 40 ? 40 : n, s);
    else if (isprint((unsigned char)*s))
        snprintf(buf, size, "'%c'", *s);
    else
        snprintf(buf, size, "byte 0x%02x", (unsigned char)*s);
    return buf;
}

static int mk(parser *P, int op, int a, int b, int pos) {
    ogx_expr *e = P->e;
    if (e->nn == e->cap) {
        int cap = e->cap ? 2 * e->cap : 16;
        node *n = realloc(e->n, (size_t)cap * sizeof *n);
        if (!n) return perr(P, pos, "out of memory");
        e->n = n;
        e->cap = cap;
    }
    e->n[e->nn] = (node){.op = op, .a = a, .b = b, .var = -1, .pos = pos, .end = P->p};
    return e->nn++;
}

static int parse_expr(parser *P);
static int parse_unary(parser *P);

/// One integer dim of sum/mean: an optional '-' and digits, then ',' or ')'.
static int parse_dim(parser *P, const char *fname, int *out) {
    const char *s = P->s;
    char tb[64];
    int start = P->p, q = start + (s[start] == '-');
    long v = 0;
    while (isdigit((unsigned char)s[q])) {
        if (v < 1000000) v = v * 10 + (s[q] - '0'); // saturates: only range matters
        q++;
    }
    int r = q;
    while (isspace((unsigned char)s[r])) r++;
    if (q == start + (s[start] == '-') || (s[r] != ',' && s[r] != ')'))
        return perr(P, start, "the dims of %s must be integer constants, found %s", fname,
                    tok(P, tb, sizeof tb));
    if (s[start] == '-') v = -v;
    if (v < -OG_MAX_DIMS || v >= OG_MAX_DIMS)
        return perr(P, start, "dim %.*s of %s is out of range (values have at most %d dims)",
                    q - start, s + start, fname, OG_MAX_DIMS);
    P->p = q;
    *out = (int)v;
    return 0;
}

static int parse_call(parser *P, int start, int len) {
    const char *s = P->s;
    char tb[64];
    int f = -1;
    for (int i = 0; i < NFUNCS; i++)
        if ((int)strlen(FUNCS[i].name) == len && !memcmp(FUNCS[i].name, s + start, (size_t)len))
            f = i;
    if (f < 0)
        return perr(P, start,
                    "unknown function '%.*s' (functions: exp log sqrt abs tanh sigmoid softplus "
                    "erf relu min max pow sum mean)",
                    len > 40 ? 40 : len, s + start);
    const char *name = FUNCS[f].name;
    int op = FUNCS[f].op, want = FUNCS[f].nargs;
    int args[2] = {-1, -1}, nargs = 0, red[OG_MAX_DIMS], nred = 0;
    P->p++; // '('
    skip(P);
    if (s[P->p] != ')') {
        for (;;) {
            skip(P);
            if (want < 0 && nargs == 1) { // a reduction's dims
                int d = 0, at = P->p;
                if (parse_dim(P, name, &d) < 0) return -1;
                for (int k = 0; k < nred; k++)
                    if (red[k] == d) return perr(P, at, "%s lists dim %d twice", name, d);
                if (nred == OG_MAX_DIMS)
                    return perr(P, at, "%s lists more than %d dims", name, OG_MAX_DIMS);
                red[nred++] = d;
            } else {
                int a = parse_expr(P);
                if (a < 0) return -1;
                if (nargs < 2) args[nargs] = a;
                nargs++;
            }
            skip(P);
            if (s[P->p] != ',') break;
            P->p++;
        }
    }
    if (s[P->p] != ')')
        return perr(P, P->p, "expected ',' or ')' in the call of %s at column %d, found %s", name,
                    start + 1, tok(P, tb, sizeof tb));
    P->p++;
    if (want < 0 && nargs != 1)
        return perr(P, start, "%s takes a value and optional integer dims, got no value", name);
    if (want > 0 && nargs != want)
        return perr(P, start, "%s takes %d argument%s, got %d", name, want, want == 1 ? "" : "s",
                    nargs);
    int i = mk(P, op, args[0], args[1], start);
    if (i >= 0) {
        P->e->n[i].nred = nred;
        memcpy(P->e->n[i].red, red, sizeof red);
    }
    return i;
}

static int parse_var(parser *P, int start, int len) {
    ogx_expr *e = P->e;
    for (int k = 0; k < e->nvars; k++) {
        if ((int)strlen(e->names[k]) != len || memcmp(e->names[k], P->s + start, (size_t)len))
            continue;
        if (e->varnode[k] < 0) {
            int i = mk(P, N_VAR, -1, -1, start);
            if (i < 0) return -1;
            e->n[i].var = k;
            e->n[i].end = start + len;
            e->varnode[k] = i;
            e->uses |= 1u << k;
        }
        return e->varnode[k];
    }
    char list[256] = "no variables";
    size_t n = 0;
    for (int k = 0; k < e->nvars && n < sizeof list; k++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s",
                              k ? ", " : "variables: ", e->names[k]);
    return perr(P, start, "unknown variable '%.*s' (%s)", len > 40 ? 40 : len, P->s + start, list);
}

static int parse_primary(parser *P) {
    const char *s = P->s;
    char tb[64];
    skip(P);
    int start = P->p;
    unsigned char c = (unsigned char)s[start];
    if (isdigit(c) || (c == '.' && isdigit((unsigned char)s[start + 1]))) {
        char *end;
        double v = strtod(s + start, &end);
        P->p = (int)(end - s);
        if (!isfinite(v))
            return perr(P, start, "number '%.*s' is out of range", P->p - start, s + start);
        int i = mk(P, N_NUM, -1, -1, start);
        if (i >= 0) P->e->n[i].num = v;
        return i;
    }
    if (c == '(') {
        P->p++;
        int r = parse_expr(P);
        if (r < 0) return -1;
        skip(P);
        if (s[P->p] != ')')
            return perr(P, P->p, "expected ')' to close the '(' at column %d, found %s", start + 1,
                        tok(P, tb, sizeof tb));
        P->p++;
        return r;
    }
    int len = ident_len(s + start);
    if (len) {
        P->p = start + len;
        skip(P);
        if (s[P->p] == '(') return parse_call(P, start, len);
        return parse_var(P, start, len);
    }
    return perr(P, start, "expected a value, found %s", tok(P, tb, sizeof tb));
}

static int parse_power(parser *P) {
    skip(P);
    int start = P->p, l = parse_primary(P);
    if (l < 0) return -1;
    skip(P);
    if (P->s[P->p] != '^') return l;
    P->p++;
    int r = parse_unary(P); // right-associative, and 2^-1 works
    return r < 0 ? -1 : mk(P, N_POW, l, r, start);
}

/// Every recursion of the grammar passes through here, so this bounds the parser's stack.
static int parse_unary(parser *P) {
    skip(P);
    int start = P->p, r;
    if (++P->depth > OGX_MAX_DEPTH)
        return perr(P, start, "nesting deeper than %d levels", OGX_MAX_DEPTH);
    if (P->s[start] == '-') {
        P->p++;
        r = parse_unary(P);
        if (r >= 0) r = mk(P, N_NEG, r, -1, start);
    } else {
        r = parse_power(P);
    }
    P->depth--;
    return r;
}

static int parse_binary_chain(parser *P, bool additive) {
    skip(P);
    int start = P->p;
    int l = additive ? parse_binary_chain(P, false) : parse_unary(P);
    for (;;) {
        if (l < 0) return -1;
        skip(P);
        char c = P->s[P->p];
        if (!c || !strchr(additive ? "+-" : "*/", c)) return l;
        int op = additive ? (c == '+' ? N_ADD : N_SUB) : (c == '*' ? N_MUL : N_DIV);
        P->p++;
        int r = additive ? parse_binary_chain(P, false) : parse_unary(P);
        l = r < 0 ? -1 : mk(P, op, l, r, start);
    }
}

static int parse_expr(parser *P) { return parse_binary_chain(P, true); }

void ogx_free(ogx_expr *e) {
    if (!e) return;
    for (int k = 0; k < e->nvars; k++) free(e->names[k]);
    free(e->text);
    free(e->n);
    free(e);
}

ogx_expr *ogx_parse(const char *text, int nvars, const char *const *names, char *err,
                    size_t errsize) {
    if (!text) return fail(err, errsize, "no expression"), NULL;
    if (nvars < 0 || nvars > OGX_MAX_VARS || (nvars && !names))
        return fail(err, errsize, "%d variables: 0 to %d with names", nvars, OGX_MAX_VARS), NULL;
    size_t len = strlen(text);
    if (len > MAX_TEXT)
        return fail(err, errsize, "expression longer than %d bytes", MAX_TEXT), NULL;
    for (int k = 0; k < nvars; k++) {
        if (!names[k] || !*names[k]) return fail(err, errsize, "variable %d has no name", k), NULL;
        for (int j = 0; j < k; j++)
            if (!strcmp(names[j], names[k]))
                return fail(err, errsize, "variable name '%s' given twice", names[k]), NULL;
    }
    ogx_expr *e = calloc(1, sizeof *e);
    if (!e || !(e->text = malloc(len + 1))) {
        free(e);
        return fail(err, errsize, "out of memory"), NULL;
    }
    memcpy(e->text, text, len + 1);
    for (int k = 0; k < OGX_MAX_VARS; k++) e->varnode[k] = -1;
    for (; e->nvars < nvars; e->nvars++) {
        size_t n = strlen(names[e->nvars]) + 1;
        if (!(e->names[e->nvars] = malloc(n))) {
            ogx_free(e);
            return fail(err, errsize, "out of memory"), NULL;
        }
        memcpy(e->names[e->nvars], names[e->nvars], n);
    }
    parser P = {.e = e, .s = e->text, .err = err, .errsize = errsize};
    char tb[64];
    int r = parse_expr(&P);
    if (r >= 0) {
        skip(&P);
        if (P.s[P.p] == ')')
            r = perr(&P, P.p, "unmatched ')'");
        else if (P.s[P.p])
            r = perr(&P, P.p, "unexpected %s (expected an operator or the end of the input)",
                     tok(&P, tb, sizeof tb));
    }
    if (r < 0) {
        ogx_free(e);
        return NULL;
    }
    e->root = r; // the last node made: parents are made after their operands
    return e;
}

unsigned ogx_uses(const ogx_expr *e) { return e ? e->uses : 0; }

/* ---------------------------------------------------------------------------------------------
 * Shapes */

/// The element count, when the shape holds at most OGX_MAX_ELEMENTS elements counting every
/// dim as at least 1 (so that no stride of the shape can overflow, even beside a 0 dim).
static bool count_ok(const ogc_shape *s, int64_t *numel) {
    int64_t bound = 1, n = 1;
    for (int d = 0; d < s->ndim; d++) {
        int64_t v = s->dims[d] > 1 ? s->dims[d] : 1;
        if (v > OGX_MAX_ELEMENTS / bound) return false;
        bound *= v;
        n *= s->dims[d];
    }
    *numel = n;
    return true;
}

static bool broadcast(const ogc_shape *a, const ogc_shape *b, ogc_shape *o) {
    o->ndim = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int i = 1; i <= o->ndim; i++) { // from the right
        int64_t da = i <= a->ndim ? a->dims[a->ndim - i] : 1;
        int64_t db = i <= b->ndim ? b->dims[b->ndim - i] : 1;
        if (da != db && da != 1 && db != 1) return false;
        o->dims[o->ndim - i] = da == 1 ? db : da;
    }
    return true;
}

/// The dims a reduction node removes from its rank-`rank` operand.
static bool red_mask(const ogx_expr *e, const node *n, int rank, bool *mask, char *err, size_t es) {
    const char *f = n->op == N_SUM ? "sum" : "mean";
    char q[80];
    for (int d = 0; d < OG_MAX_DIMS; d++) mask[d] = n->nred == 0 && d < rank;
    for (int k = 0; k < n->nred; k++) {
        int d = n->red[k], r = d < 0 ? d + rank : d;
        if (r < 0 || r >= rank)
            return fail(err, es, "%s over dim %d of a rank-%d value in %s", f, d, rank,
                        quote(e, n, q, sizeof q));
        for (int j = 0; mask[r] && j < k; j++)
            if ((n->red[j] < 0 ? n->red[j] + rank : n->red[j]) == r)
                return fail(err, es,
                            "%s over dim %d twice (dims %d and %d of a rank-%d value) in %s", f, r,
                            n->red[j], d, rank, quote(e, n, q, sizeof q));
        mask[r] = true;
    }
    return true;
}

static bool var_shape_ok(const ogx_expr *e, const ogc_shape *v, int k, int64_t *numel, char *err,
                         size_t es) {
    char sb[200];
    if (v->ndim < 0 || v->ndim > OG_MAX_DIMS)
        return fail(err, es, "variable '%s' has rank %d (at most %d)", e->names[k], v->ndim,
                    OG_MAX_DIMS);
    for (int d = 0; d < v->ndim; d++)
        if (v->dims[d] < 0)
            return fail(err, es, "variable '%s' has a negative dim: %s", e->names[k],
                        shape_str(v, sb, sizeof sb));
    if (!count_ok(v, numel))
        return fail(err, es, "variable '%s' %s has more than 2^31 elements", e->names[k],
                    shape_str(v, sb, sizeof sb));
    return true;
}

/// Every node's shape and element count.
static bool infer(const ogx_expr *e, const ogc_shape *vs, ogc_shape *sh, int64_t *cnt, char *err,
                  size_t es) {
    char q[80], s1[200], s2[200];
    for (int i = 0; i <= e->root; i++) {
        const node *n = &e->n[i];
        ogc_shape *o = &sh[i];
        if (n->op == N_NUM) {
            o->ndim = 0;
        } else if (n->op == N_VAR) {
            if (!var_shape_ok(e, &vs[n->var], n->var, &cnt[i], err, es)) return false;
            *o = vs[n->var];
        } else if (IS_UNARY(n->op)) {
            *o = sh[n->a];
        } else if (IS_BINARY(n->op)) {
            if (!broadcast(&sh[n->a], &sh[n->b], o))
                return fail(err, es, "cannot broadcast %s with %s in %s",
                            shape_str(&sh[n->a], s1, sizeof s1),
                            shape_str(&sh[n->b], s2, sizeof s2), quote(e, n, q, sizeof q));
        } else {
            bool mask[OG_MAX_DIMS];
            if (!red_mask(e, n, sh[n->a].ndim, mask, err, es)) return false;
            o->ndim = 0;
            for (int d = 0; d < sh[n->a].ndim; d++)
                if (!mask[d]) o->dims[o->ndim++] = sh[n->a].dims[d];
        }
        if (!count_ok(o, &cnt[i]))
            return fail(err, es, "%s would have more than 2^31 elements: %s",
                        quote(e, n, q, sizeof q), shape_str(o, s1, sizeof s1));
    }
    return true;
}

bool ogx_shape(const ogx_expr *e, const ogc_shape *var_shapes, ogc_shape *out, char *err,
               size_t errsize) {
    if (!e || (!var_shapes && e->uses) || !out) return fail(err, errsize, "null argument");
    int nn = e->root + 1;
    ogc_shape *sh = malloc((size_t)nn * sizeof *sh);
    int64_t *cnt = malloc((size_t)nn * sizeof *cnt);
    bool ok = sh && cnt ? infer(e, var_shapes, sh, cnt, err, errsize)
                        : fail(err, errsize, "out of memory");
    if (ok) *out = sh[e->root];
    free(sh);
    free(cnt);
    return ok;
}

/* ---------------------------------------------------------------------------------------------
 * Elementwise math: values, derivatives, magnitudes */

static double sigm(double x) { // never exp of a large positive number
    if (x >= 0) return 1 / (1 + exp(-x));
    double t = exp(x);
    return t / (1 + t);
}

static double unary(int op, double x) {
    switch (op) {
    case N_NEG:
        return -x;
    case N_EXP:
        return exp(x);
    case N_LOG:
        return log(x);
    case N_SQRT:
        return sqrt(x);
    case N_ABS:
        return fabs(x);
    case N_TANH:
        return tanh(x);
    case N_SIGMOID:
        return sigm(x);
    case N_SOFTPLUS:
        return log1p(exp(-fabs(x))) + (x > 0 ? x : 0);
    case N_ERF:
        return erf(x);
    default: // N_RELU
        return x > 0 ? x : 0;
    }
}

/// f'(x) and f''(x) given y = f(x); f'' only feeds the magnitude bound of the gradient.
static void unary_d(int op, double x, double y, double *d1, double *d2) {
    const double two_over_sqrt_pi = 1.1283791670955126;
    double t;
    switch (op) {
    case N_NEG:
        *d1 = -1, *d2 = 0;
        break;
    case N_EXP:
        *d1 = y, *d2 = y;
        break;
    case N_LOG:
        *d1 = 1 / x, *d2 = -1 / (x * x);
        break;
    case N_SQRT:
        *d1 = 0.5 / y, *d2 = -0.25 / (x * y);
        break;
    case N_ABS:
        *d1 = x > 0 ? 1 : x < 0 ? -1 : 0, *d2 = 0;
        break;
    case N_TANH: // 1 / cosh^2: no cancellation in 1 - y^2 for large |x|
        t = cosh(x), *d1 = 1 / (t * t), *d2 = -2 * y * *d1;
        break;
    case N_SIGMOID:
        *d1 = sigm(x) * sigm(-x), *d2 = *d1 * (1 - 2 * y);
        break;
    case N_SOFTPLUS:
        *d1 = sigm(x), *d2 = sigm(x) * sigm(-x);
        break;
    case N_ERF:
        *d1 = two_over_sqrt_pi * exp(-x * x), *d2 = -2 * x * *d1;
        break;
    default: // N_RELU
        *d1 = x > 0, *d2 = 0;
        break;
    }
}

/// min/max: whether the second operand is selected (ties and NaN in a: the first).
static bool second(int op, double a, double b) {
    return op == N_MIN ? !(a <= b || isnan(a)) : !(a >= b || isnan(a));
}

static double binary(int op, double a, double b) {
    switch (op) {
    case N_ADD:
        return a + b;
    case N_SUB:
        return a - b;
    case N_MUL:
        return a * b;
    case N_DIV:
        return a / b;
    case N_POW:
        return pow(a, b);
    default: // N_MIN, N_MAX
        return second(op, a, b) ? b : a;
    }
}

static void binary_d(int op, double a, double b, double y, double *pa, double *pb) {
    switch (op) {
    case N_ADD:
        *pa = 1, *pb = 1;
        break;
    case N_SUB:
        *pa = 1, *pb = -1;
        break;
    case N_MUL:
        *pa = b, *pb = a;
        break;
    case N_DIV:
        *pa = 1 / b, *pb = -y / b;
        break;
    case N_POW: // see expr.h: no b-partial for a <= 0
        *pa = b == 0 ? 0 : b * pow(a, b - 1);
        *pb = a > 0 ? y * log(a) : 0;
        break;
    default: // N_MIN, N_MAX
        *pa = !second(op, a, b), *pb = second(op, a, b);
        break;
    }
}

/// The part of a magnitude bound that cancelled: m(a) - |a| (>= 0; 0 for NaN).
static double excess(double m, double v) {
    double d = m - fabs(v);
    return d > 0 ? d : 0;
}

/// base + |slope| * ex, without 0 * inf when nothing cancelled.
static double addx(double base, double slope, double ex) {
    return ex > 0 ? base + fabs(slope) * ex : base;
}

static double binary_mag(int op, double a, double b, double y, double ma, double mb) {
    double pa, pb;
    switch (op) {
    case N_ADD:
    case N_SUB:
        return ma + mb;
    case N_MUL:
        return ma * mb;
    case N_MIN:
    case N_MAX:
        return second(op, a, b) ? mb : ma;
    default: // N_DIV, N_POW: first-order propagation of what cancelled in the operands
        binary_d(op, a, b, y, &pa, &pb);
        return addx(addx(fabs(y), pa, excess(ma, a)), pb, excess(mb, b));
    }
}

/// Magnitudes of the local partials pa, pb (the partial's value plus what cancelled in it).
static void binary_pmag(int op, double a, double b, double ma, double mb, double pa, double pb,
                        double *qa, double *qb) {
    switch (op) {
    case N_MUL:
        *qa = mb, *qb = ma;
        break;
    case N_DIV: // from |pa| and |pb| themselves, so that rounding never puts a bound below them
        *qa = addx(fabs(pa), 1 / (b * b), excess(mb, b));
        *qb = addx(addx(fabs(pb), 1 / (b * b), excess(ma, a)), 2 * pb / b, excess(mb, b));
        break;
    default: // exact for + - min max; first order for pow
        *qa = fabs(pa), *qb = fabs(pb);
        break;
    }
}

/* ---------------------------------------------------------------------------------------------
 * Broadcast iteration: walks a shape row-major, tracking the offsets of two operands whose
 * strides are 0 on the dims they broadcast over (or that a reduction removed). */

typedef struct {
    int nd;
    int64_t dim[OG_MAX_DIMS], idx[OG_MAX_DIMS], st[2][OG_MAX_DIMS], off[2];
} iter;

static void strides(const ogc_shape *full, const ogc_shape *op, int64_t *st) {
    int64_t s = 1;
    for (int d = full->ndim - 1, k = op->ndim - 1; d >= 0; d--, k--) {
        st[d] = k >= 0 && op->dims[k] != 1 ? s : 0;
        if (k >= 0) s *= op->dims[k];
    }
}

static void it_init(iter *it, const ogc_shape *full, const ogc_shape *a, const ogc_shape *b) {
    memset(it, 0, sizeof *it);
    it->nd = full->ndim;
    memcpy(it->dim, full->dims, sizeof it->dim);
    strides(full, a, it->st[0]);
    if (b) strides(full, b, it->st[1]);
}

static void it_next(iter *it) {
    for (int d = it->nd - 1; d >= 0; d--) {
        it->off[0] += it->st[0][d];
        it->off[1] += it->st[1][d];
        if (++it->idx[d] < it->dim[d]) return;
        it->off[0] -= it->st[0][d] * it->dim[d];
        it->off[1] -= it->st[1][d] * it->dim[d];
        it->idx[d] = 0;
    }
}

/// A reduction's output seen with the operand's rank (reduced dims kept as 1) and the count
/// of values summed into each output element.
static double keepdims(const ogx_expr *e, const node *n, const ogc_shape *in, ogc_shape *kd) {
    bool mask[OG_MAX_DIMS];
    (void)red_mask(e, n, in->ndim, mask, NULL, 0); // validated by infer
    double count = 1;
    *kd = *in;
    for (int d = 0; d < in->ndim; d++)
        if (mask[d]) count *= (double)in->dims[d], kd->dims[d] = 1;
    return count;
}

/// Terms, clamped into int64 (they are products of extents, possibly astronomically many).
static int64_t clamp_terms(double t) { return t >= 9.0e18 ? INT64_MAX : (int64_t)t; }

/* ---------------------------------------------------------------------------------------------
 * Forward tape */

typedef struct {
    int nn;
    ogc_shape *sh;
    int64_t *cnt;
    const double **v;  // values: the caller's data for variables, else buf
    double **buf, **m; // owned values, magnitudes (m[i] NULL when not wanted)
    double *ft;        // values summed into one element, forward
} tape;

static void tape_free(tape *t) {
    for (int i = 0; i < t->nn; i++) {
        if (t->buf) free(t->buf[i]);
        if (t->m) free(t->m[i]);
    }
    free(t->sh), free(t->cnt), free(t->v), free(t->buf), free(t->m), free(t->ft);
}

static double *alloc(int64_t n) { return calloc(n > 0 ? (size_t)n : 1, sizeof(double)); }

/// Bookkeeping bytes per node: the forward tape's arrays, and the reverse pass's.
#define TAPE_NODE_BYTES                                                                            \
    (sizeof(ogc_shape) + sizeof(int64_t) + 3 * sizeof(double *) + sizeof(double))
#define GRAD_NODE_BYTES (2 * sizeof(double *) + sizeof(double))

/// Whether one evaluation stays within OGX_MAX_BYTES, known from the shapes before any buffer is
/// allocated, so that an expression whose intermediates would exhaust memory (an outer product by
/// broadcasting, many large terms) fails at once with a message instead of an abort or an OOM
/// kill. Counts what forward() and ogx_grad() allocate: the parse tree, the bookkeeping, and per
/// node buffers of max(count, 1) doubles: its value (a variable's is the caller's), its magnitude
/// bound (mags), and for gradients its adjoint and the adjoint's bound (mags). No overflow: a
/// count is at most OGX_MAX_ELEMENTS = 2^31 and there are at most MAX_TEXT + 1 = 2^20 + 1 nodes,
/// so the total stays below 2^57.
static bool within_cap(const ogx_expr *e, const tape *t, bool mags, bool grad, char *err,
                       size_t es) {
    int64_t per_node = (int64_t)(TAPE_NODE_BYTES + (grad ? GRAD_NODE_BYTES : 0));
    int64_t total =
        (int64_t)e->cap * (int64_t)sizeof(node) + (int64_t)strlen(e->text) + 1 + t->nn * per_node;
    int big = 0; // the largest intermediate, for the message
    for (int i = 0; i < t->nn; i++) {
        int64_t bufs = (e->n[i].op != N_VAR) + mags + (grad ? 1 + mags : 0);
        total += bufs * (t->cnt[i] > 1 ? t->cnt[i] : 1) * (int64_t)sizeof(double);
        if (t->cnt[i] > t->cnt[big]) big = i;
    }
    if (total <= OGX_MAX_BYTES) return true;
    char q[80], qb[80], sb[200];
    return fail(err, es,
                "%s needs %lld bytes (%.1f GiB) for its intermediate values%s, over the cap of "
                "%lld bytes (%.0f GiB) per evaluation (OGX_MAX_BYTES); its largest value is %s, "
                "%s",
                quote(e, &e->n[e->root], q, sizeof q), (long long)total, (double)total / (1 << 30),
                grad ? " and gradients" : "", (long long)OGX_MAX_BYTES,
                (double)OGX_MAX_BYTES / (1 << 30), quote(e, &e->n[big], qb, sizeof qb),
                shape_str(&t->sh[big], sb, sizeof sb));
}

/// The forward tape; grad: the reverse pass follows (its buffers count against the cap too).
static bool forward(const ogx_expr *e, const ogc_shape *vs, const double *const *vars, bool mags,
                    bool grad, tape *t, char *err, size_t es) {
    int nn = t->nn = e->root + 1;
    t->sh = malloc((size_t)nn * sizeof *t->sh);
    t->cnt = malloc((size_t)nn * sizeof *t->cnt);
    t->v = calloc((size_t)nn, sizeof *t->v);
    t->buf = calloc((size_t)nn, sizeof *t->buf);
    t->m = calloc((size_t)nn, sizeof *t->m);
    t->ft = calloc((size_t)nn, sizeof *t->ft);
    if (!t->sh || !t->cnt || !t->v || !t->buf || !t->m || !t->ft)
        return fail(err, es, "out of memory");
    if (!infer(e, vs, t->sh, t->cnt, err, es) || !within_cap(e, t, mags, grad, err, es))
        return false;
    for (int i = 0; i < nn; i++) {
        const node *n = &e->n[i];
        int64_t c = t->cnt[i];
        if (n->op == N_VAR && !vars[n->var])
            return fail(err, es, "no data for variable '%s'", e->names[n->var]);
        double *y = n->op == N_VAR ? NULL : (t->buf[i] = alloc(c));
        double *my = mags ? (t->m[i] = alloc(c)) : NULL;
        if ((n->op != N_VAR && !y) || (mags && !my)) return fail(err, es, "out of memory");
        const double *A = n->a >= 0 ? t->v[n->a] : NULL, *B = n->b >= 0 ? t->v[n->b] : NULL;
        const double *MA = n->a >= 0 ? t->m[n->a] : NULL, *MB = n->b >= 0 ? t->m[n->b] : NULL;
        t->v[i] = y;
        t->ft[i] = n->a >= 0 ? t->ft[n->a] : 1;
        if (n->b >= 0 && t->ft[n->b] > t->ft[i]) t->ft[i] = t->ft[n->b];
        if (n->op == N_NUM) {
            y[0] = n->num;
            if (my) my[0] = fabs(n->num);
        } else if (n->op == N_VAR) {
            t->v[i] = vars[n->var];
            for (int64_t j = 0; my && j < c; j++) my[j] = fabs(t->v[i][j]);
        } else if (IS_UNARY(n->op)) {
            for (int64_t j = 0; j < c; j++) {
                y[j] = unary(n->op, A[j]);
                if (!my) continue;
                double d1, d2, ex = excess(MA[j], A[j]);
                if (n->op == N_NEG || n->op == N_ABS)
                    my[j] = MA[j]; // = |y| + 1 * ex
                else if (ex > 0)
                    unary_d(n->op, A[j], y[j], &d1, &d2), my[j] = addx(fabs(y[j]), d1, ex);
                else
                    my[j] = fabs(y[j]);
            }
        } else if (IS_BINARY(n->op)) {
            iter it;
            it_init(&it, &t->sh[i], &t->sh[n->a], &t->sh[n->b]);
            for (int64_t j = 0; j < c; j++, it_next(&it)) {
                double a = A[it.off[0]], b = B[it.off[1]];
                y[j] = binary(n->op, a, b);
                if (my) my[j] = binary_mag(n->op, a, b, y[j], MA[it.off[0]], MB[it.off[1]]);
            }
        } else { // reductions: out[o(j)] += in[j] over the operand
            ogc_shape kd;
            double count = keepdims(e, n, &t->sh[n->a], &kd);
            iter it;
            it_init(&it, &t->sh[n->a], &kd, NULL);
            for (int64_t j = 0; j < t->cnt[n->a]; j++, it_next(&it)) {
                y[it.off[0]] += A[j];
                if (my) my[it.off[0]] += MA[j];
            }
            for (int64_t j = 0; n->op == N_MEAN && j < c; j++) {
                y[j] /= count; // count 0: NaN, as NumPy's mean of nothing
                if (my) my[j] /= count;
            }
            t->ft[i] *= count > 1 ? count : 1;
        }
    }
    return true;
}

static bool args_ok(const ogx_expr *e, const ogc_shape *vs, const double *const *vars,
                    const void *buf, char *err, size_t es) {
    if (!e || !buf || (e->uses && (!vs || !vars))) return fail(err, es, "null argument");
    return true;
}

bool ogx_eval(const ogx_expr *e, const ogc_shape *var_shapes, const double *const *vars,
              double *out, double *mag, int64_t *terms, char *err, size_t errsize) {
    if (!args_ok(e, var_shapes, vars, out, err, errsize)) return false;
    tape t = {0};
    bool ok = forward(e, var_shapes, vars, mag != NULL, false, &t, err, errsize);
    if (ok) {
        int r = e->root;
        memcpy(out, t.v[r], (size_t)t.cnt[r] * sizeof *out);
        if (mag) memcpy(mag, t.m[r], (size_t)t.cnt[r] * sizeof *mag);
        if (terms) *terms = clamp_terms(t.ft[r]);
    }
    tape_free(&t);
    return ok;
}

/* ---------------------------------------------------------------------------------------------
 * Reverse pass */

/// How many elements of `full` read one element of its broadcast operand `op`.
static double fan(const ogc_shape *full, const ogc_shape *op) {
    double f = 1;
    for (int i = 1; i <= full->ndim; i++)
        if (i > op->ndim || op->dims[op->ndim - i] == 1) f *= (double)full->dims[full->ndim - i];
    return f;
}

bool ogx_grad(const ogx_expr *e, const ogc_shape *var_shapes, const double *const *vars,
              const double *dout, double *const *grads, double *const *gmag, int64_t *gterms,
              char *err, size_t errsize) {
    if (!args_ok(e, var_shapes, vars, dout, err, errsize)) return false;
    bool mags = false;
    for (int k = 0; k < e->nvars; k++) {
        int64_t c = 0;
        bool want = grads && grads[k];
        if (want && !var_shapes) return fail(err, errsize, "null argument");
        if (want && !var_shape_ok(e, &var_shapes[k], k, &c, err, errsize)) return false;
        mags |= want && gmag && gmag[k];
    }
    tape t = {0};
    double **g = NULL, **gm = NULL, *tn = NULL;
    bool ok = forward(e, var_shapes, vars, mags, true, &t, err, errsize);
    int nn = t.nn;
    if (ok) {
        g = calloc((size_t)nn, sizeof *g);
        gm = calloc((size_t)nn, sizeof *gm);
        tn = calloc((size_t)nn, sizeof *tn);
        ok = g && gm && tn;
        for (int i = 0; ok && i < nn; i++) {
            ok = (g[i] = alloc(t.cnt[i])) != NULL;
            if (ok && mags) ok = (gm[i] = alloc(t.cnt[i])) != NULL;
        }
        if (!ok) fail(err, errsize, "out of memory");
    }
    if (ok) {
        int r = e->root;
        memcpy(g[r], dout, (size_t)t.cnt[r] * sizeof *dout);
        for (int64_t j = 0; mags && j < t.cnt[r]; j++) gm[r][j] = fabs(dout[j]);
        tn[r] = 1;
    }
    for (int i = nn - 1; ok && i >= 0; i--) { // operands have lower indices than their users
        const node *n = &e->n[i];
        if (n->op == N_NUM || n->op == N_VAR) continue;
        const double *Y = t.v[i], *A = t.v[n->a], *G = g[i], *GM = gm[i];
        const double *MA = t.m[n->a];
        double *GA = g[n->a], *GMA = gm[n->a];
        if (IS_UNARY(n->op)) {
            for (int64_t j = 0; j < t.cnt[i]; j++) {
                double d1, d2;
                unary_d(n->op, A[j], Y[j], &d1, &d2);
                GA[j] += G[j] * d1;
                if (mags) GMA[j] += GM[j] * addx(fabs(d1), d2, excess(MA[j], A[j]));
            }
            tn[n->a] += tn[i];
        } else if (IS_BINARY(n->op)) {
            const double *B = t.v[n->b], *MB = t.m[n->b];
            double *GB = g[n->b], *GMB = gm[n->b];
            bool select = n->op == N_MIN || n->op == N_MAX; // no 0 * inf into the other one
            iter it;
            it_init(&it, &t.sh[i], &t.sh[n->a], &t.sh[n->b]);
            for (int64_t j = 0; j < t.cnt[i]; j++, it_next(&it)) {
                int64_t oa = it.off[0], ob = it.off[1];
                double pa, pb, qa, qb;
                binary_d(n->op, A[oa], B[ob], Y[j], &pa, &pb);
                if (!select || pa != 0) GA[oa] += G[j] * pa;
                if (!select || pb != 0) GB[ob] += G[j] * pb;
                if (!mags) continue;
                binary_pmag(n->op, A[oa], B[ob], MA[oa], MB[ob], pa, pb, &qa, &qb);
                if (!select || pa != 0) GMA[oa] += GM[j] * qa;
                if (!select || pb != 0) GMB[ob] += GM[j] * qb;
            }
            tn[n->a] += tn[i] * fan(&t.sh[i], &t.sh[n->a]);
            tn[n->b] += tn[i] * fan(&t.sh[i], &t.sh[n->b]);
        } else { // reductions hand each operand element its output element's adjoint
            ogc_shape kd;
            double count = keepdims(e, n, &t.sh[n->a], &kd),
                   scale = n->op == N_MEAN ? 1 / count : 1;
            iter it;
            it_init(&it, &t.sh[n->a], &kd, NULL);
            for (int64_t j = 0; j < t.cnt[n->a]; j++, it_next(&it)) {
                GA[j] += G[it.off[0]] * scale;
                if (mags) GMA[j] += GM[it.off[0]] * scale;
            }
            tn[n->a] += tn[i];
        }
    }
    for (int k = 0; ok && k < e->nvars; k++) {
        int vn = e->varnode[k];
        if (gterms) gterms[k] = vn >= 0 ? clamp_terms(tn[vn]) : 0;
        if (!grads || !grads[k]) continue;
        int64_t c = 0;
        (void)count_ok(&var_shapes[k], &c); // validated above
        if (vn >= 0)
            memcpy(grads[k], g[vn], (size_t)c * sizeof(double));
        else
            memset(grads[k], 0, (size_t)c * sizeof(double));
        if (gmag && gmag[k]) {
            if (vn >= 0)
                memcpy(gmag[k], gm[vn], (size_t)c * sizeof(double));
            else
                memset(gmag[k], 0, (size_t)c * sizeof(double));
        }
    }
    for (int i = 0; i < nn; i++) {
        if (g) free(g[i]);
        if (gm) free(gm[i]);
    }
    free(g), free(gm), free(tn);
    tape_free(&t);
    return ok;
}
