/* libFuzzer target: the JSON reader of custom-operator specs (src/custom/json.h) and the spec
 * validator on top of it (ogs_parse, src/custom/spec.h), on arbitrary bytes.
 *
 * Besides the sanitizers it checks (FUZZ_REQUIRE):
 *  - a refused document has a message, NUL-terminated within the buffer at every buffer size;
 *  - an accepted document is a well-formed tree (types, counts, keys, lines), ogj_get finds each
 *    key of an object, and the tree written back as JSON parses to an equal tree (round trip);
 *  - an accepted spec respects the limits of ogs_spec, and its reference expression (if any)
 *    goes through the expression parser over the spec's input names. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "custom/expr.h"
#include "custom/json.h"
#include "custom/spec.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    return 0;
}

// ---- tree checks ----

static bool all_finite = true;

static void check_tree(const ogj_value *v, int depth) {
    FUZZ_REQUIRE(v != NULL, "NULL node");
    FUZZ_REQUIRE(depth < 10000, "tree deeper than any document");
    FUZZ_REQUIRE(v->line >= 1, "line %d", v->line);
    FUZZ_REQUIRE(ogj_type_name(v->type) != NULL, "type %d has no name", (int)v->type);
    switch (v->type) {
    case OGJ_NULL:
    case OGJ_BOOL:
        break;
    case OGJ_NUMBER:
        if (!isfinite(v->number)) all_finite = false;
        break;
    case OGJ_STRING:
        FUZZ_REQUIRE(v->string != NULL, "string without text");
        (void)strlen(v->string);
        break;
    case OGJ_ARRAY:
    case OGJ_OBJECT:
        FUZZ_REQUIRE(v->count >= 0 && (v->count == 0 || v->items), "count %d", v->count);
        for (int i = 0; i < v->count; i++) {
            if (v->type == OGJ_OBJECT) {
                FUZZ_REQUIRE(v->keys && v->keys[i], "object key %d missing", i);
                const ogj_value *got = ogj_get(v, v->keys[i]);
                FUZZ_REQUIRE(got != NULL, "ogj_get does not find key \"%s\"", v->keys[i]);
            }
            FUZZ_REQUIRE(v->items[i]->line >= v->line, "item before its container");
            check_tree(v->items[i], depth + 1);
        }
        break;
    default:
        FUZZ_REQUIRE(false, "bad type %d", (int)v->type);
    }
}

// ---- writing a tree back as JSON ----

typedef struct out {
    char *s;
    size_t n, cap;
} out;

static void put(out *o, const char *s, size_t n) {
    if (o->n + n + 1 > o->cap) {
        size_t cap = (o->n + n + 1) * 2;
        char *p = realloc(o->s, cap);
        if (!p) abort();
        o->s = p, o->cap = cap;
    }
    memcpy(o->s + o->n, s, n);
    o->n += n;
    o->s[o->n] = '\0';
}
static void puts_(out *o, const char *s) { put(o, s, strlen(s)); }

static void put_string(out *o, const char *s) {
    puts_(o, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char buf[8];
        if (*p == '"' || *p == '\\') {
            buf[0] = '\\', buf[1] = (char)*p;
            put(o, buf, 2);
        } else if (*p < 0x20) {
            snprintf(buf, sizeof buf, "\\u%04x", *p);
            puts_(o, buf);
        } else {
            put(o, (const char *)p, 1);
        }
    }
    puts_(o, "\"");
}

static void write_json(out *o, const ogj_value *v) {
    char buf[64];
    switch (v->type) {
    case OGJ_NULL:
        puts_(o, "null");
        break;
    case OGJ_BOOL:
        puts_(o, v->boolean ? "true" : "false");
        break;
    case OGJ_NUMBER:
        snprintf(buf, sizeof buf, "%.17g", v->number);
        puts_(o, buf);
        break;
    case OGJ_STRING:
        put_string(o, v->string);
        break;
    case OGJ_ARRAY:
    case OGJ_OBJECT:
        puts_(o, v->type == OGJ_ARRAY ? "[" : "{");
        for (int i = 0; i < v->count; i++) {
            if (i) puts_(o, ",\n");
            if (v->type == OGJ_OBJECT) {
                put_string(o, v->keys[i]);
                puts_(o, ": ");
            }
            write_json(o, v->items[i]);
        }
        puts_(o, v->type == OGJ_ARRAY ? "]" : "}");
        break;
    }
}

static bool same(const ogj_value *a, const ogj_value *b) {
    if (a->type != b->type) return false;
    switch (a->type) {
    case OGJ_NULL:
        return true;
    case OGJ_BOOL:
        return a->boolean == b->boolean;
    case OGJ_NUMBER:
        return a->number == b->number && signbit(a->number) == signbit(b->number);
    case OGJ_STRING:
        return !strcmp(a->string, b->string);
    default:
        if (a->count != b->count) return false;
        for (int i = 0; i < a->count; i++) {
            if (a->type == OGJ_OBJECT && strcmp(a->keys[i], b->keys[i])) return false;
            if (!same(a->items[i], b->items[i])) return false;
        }
        return true;
    }
}

// ---- the spec layer ----

static void check_spec(const char *text) {
    static ogs_spec spec;
    char err[512];
    if (!ogs_parse(text, "fuzz.json", &spec, err, sizeof err)) {
        FUZZ_REQUIRE(memchr(err, '\0', sizeof err) && err[0], "ogs_parse failed without a message");
        return;
    }
    FUZZ_REQUIRE(
        spec.nin >= 0 && spec.nin <= OGS_MAX_IN && spec.nout >= 1 && spec.nout <= OGS_MAX_OUT &&
            spec.ndtypes >= 1 && spec.ndtypes <= OGS_MAX_DTYPES && spec.nsizes >= 0 &&
            spec.nsizes <= OGS_MAX_SIZES && spec.ndimnames >= 0 &&
            spec.ndimnames <= OGS_MAX_DIMNAMES && spec.ngrads >= 0 && spec.ngrads <= OGS_MAX_IN,
        "spec counts out of range: in %d out %d dtypes %d sizes %d dimnames %d grads %d", spec.nin,
        spec.nout, spec.ndtypes, spec.nsizes, spec.ndimnames, spec.ngrads);
    for (int b = 0; b < (spec.nsizes ? spec.nsizes : 1); b++)
        for (int i = 0; i < spec.nin + spec.nout; i++) {
            const ogs_tensor *t = i < spec.nin ? &spec.in[i] : &spec.out[i - spec.nin];
            FUZZ_REQUIRE(t->ndim >= 0 && t->ndim <= OG_MAX_DIMS, "'%s' rank %d", t->name, t->ndim);
            ogc_shape sh;
            ogs_shape(&spec, t, b, &sh);
            for (int d = 0; d < sh.ndim; d++)
                FUZZ_REQUIRE(sh.dims[d] >= 0, "'%s' dim %d is %lld", t->name, d,
                             (long long)sh.dims[d]);
        }
    char bind[256];
    ogs_binding_str(&spec, 0, bind, sizeof bind);
    if (spec.reference) {
        const char *names[OGS_MAX_IN];
        for (int i = 0; i < spec.nin; i++) names[i] = spec.in[i].name;
        ogx_expr *e = ogx_parse(spec.reference, spec.nin, names, err, sizeof err);
        ogx_free(e);
    }
    ogs_free(&spec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    char err[256];
    memset(err, 'x', sizeof err);
    ogj_doc *doc = ogj_parse(text, err, sizeof err);
    if (!doc) {
        FUZZ_REQUIRE(memchr(err, '\0', sizeof err) && err[0], "refused without a message");
        // every buffer size truncates safely (0: nothing written)
        char small[9];
        for (size_t n = 0; n <= sizeof small - 1; n += 4) {
            memset(small, 'x', sizeof small);
            FUZZ_REQUIRE(ogj_parse(text, small, n) == NULL, "accepted with a smaller buffer");
            FUZZ_REQUIRE(n == 0 || memchr(small, '\0', n), "message of %zu bytes not terminated",
                         n);
            for (size_t i = n; i < sizeof small; i++)
                FUZZ_REQUIRE(small[i] == 'x', "message buffer of %zu bytes overrun", n);
        }
    } else {
        const ogj_value *root = ogj_root(doc);
        all_finite = true;
        check_tree(root, 0);
        if (all_finite) {
            out o = {0};
            write_json(&o, root);
            char err2[256];
            ogj_doc *again = ogj_parse(o.s, err2, sizeof err2);
            FUZZ_REQUIRE(again, "the tree written back does not parse: %s\n%s", err2, o.s);
            FUZZ_REQUIRE(same(root, ogj_root(again)), "round trip differs:\n%s", o.s);
            ogj_free(again);
            free(o.s);
        }
        ogj_free(doc);
    }
    check_spec(text);
    free(text);
    return 0;
}
