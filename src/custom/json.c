/* JSON reader (json.h). The RFC 8259 grammar is checked here character by character; strtod
 * only converts a number that already matched it (strtod alone would take 0x10, 1., inf...).
 * Values live in an arena owned by the document, so freeing is one walk over a list of blocks.
 * Nesting is limited, so a hostile spec cannot exhaust the stack. */
#include "custom/json.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct block {
    struct block *next;
    max_align_t data[];
} block;

struct ogj_doc {
    block *blocks;
    ogj_value *root;
};

typedef struct parser {
    const char *s, *p;
    ogj_doc *doc;
    char *err;
    size_t errsize;
    bool failed;
    int line; // newlines only occur in whitespace: counted there, so values know their line
} parser;

/// One parsed member of an array or object, with where its key starts (duplicate messages).
typedef struct member {
    ogj_value *item;
    char *key;
    const char *at;
} member;

static const char *const A_VALUE = "a value (object, array, string, number, true, false or null)";

static void *arena(parser *ps, size_t size) {
    block *b = malloc(sizeof *b + size);
    if (!b) return NULL;
    b->next = ps->doc->blocks;
    ps->doc->blocks = b;
    return b->data;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
// ASCII only: the C locale's isalpha could differ under another locale
static bool is_alnum(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

/// Line and column (in characters: UTF-8 continuation bytes do not count) of `at`.
static void where(const parser *ps, const char *at, int *line, int *col) {
    *line = 1, *col = 1;
    for (const char *q = ps->s; q < at; q++) {
        if (*q == '\n')
            ++*line, *col = 1;
        else if (((unsigned char)*q & 0xC0) != 0x80)
            ++*col;
    }
}

/// Records the first error, as "line L, column C: " (the position of `at`) and the message.
static void fail_at(parser *ps, const char *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail_at(parser *ps, const char *at, const char *fmt, ...) {
    if (ps->failed) return;
    ps->failed = true;
    if (!ps->errsize) return;
    int line, col;
    where(ps, at, &line, &col);
    int n = snprintf(ps->err, ps->errsize, "line %d, column %d: ", line, col);
    if (n < 0 || (size_t)n >= ps->errsize) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ps->err + n, ps->errsize - (size_t)n, fmt, ap);
    va_end(ap);
}

/// What is at `at`, for "found ..." in messages: a word (NaN, Infinity, x10), a character, a
/// byte, or the end of the text.
static const char *found(const char *at, char *buf, size_t size) {
    unsigned char c = (unsigned char)*at;
    int n = 0;
    if (!c) return "the end of the text";
    if (is_alnum(*at) && !is_digit(*at))
        while (n < 24 && is_alnum(at[n])) n++;
    if (n > 1)
        snprintf(buf, size, "'%.*s'", n, at);
    else if (c >= 0x20 && c < 0x7F)
        snprintf(buf, size, "'%c'", c);
    else
        snprintf(buf, size, "byte 0x%02x", c);
    return buf;
}

static void skip_ws(parser *ps) {
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
        ps->line += *ps->p++ == '\n';
}

static int hex4(const char *p) {
    int v = 0;
    for (int i = 0; i < 4; i++) { // stops at the first non-hex character, so never passes a NUL
        char c = p[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

static char *utf8(char *o, unsigned cp) {
    if (cp < 0x80)
        *o++ = (char)cp;
    else if (cp < 0x800)
        *o++ = (char)(0xC0 | cp >> 6), *o++ = (char)(0x80 | (cp & 63));
    else if (cp < 0x10000)
        *o++ = (char)(0xE0 | cp >> 12), *o++ = (char)(0x80 | (cp >> 6 & 63)),
        *o++ = (char)(0x80 | (cp & 63));
    else
        *o++ = (char)(0xF0 | cp >> 18), *o++ = (char)(0x80 | (cp >> 12 & 63)),
        *o++ = (char)(0x80 | (cp >> 6 & 63)), *o++ = (char)(0x80 | (cp & 63));
    return o;
}

/// The length of the well-formed UTF-8 sequence at p (p[0] >= 0x80), or 0: RFC 3629's table,
/// which excludes overlong forms, surrogates (ED A0..BF) and code points beyond U+10FFFF. A NUL
/// fails the first check it meets, so this never reads past the text.
static int utf8_len(const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    unsigned char lo = 0x80, hi = 0xBF; // the range of the second byte
    int n;
    if (p[0] >= 0xC2 && p[0] <= 0xDF)
        n = 2;
    else if (p[0] >= 0xE0 && p[0] <= 0xEF)
        n = 3, lo = p[0] == 0xE0 ? 0xA0 : 0x80, hi = p[0] == 0xED ? 0x9F : 0xBF;
    else if (p[0] >= 0xF0 && p[0] <= 0xF4)
        n = 4, lo = p[0] == 0xF0 ? 0x90 : 0x80, hi = p[0] == 0xF4 ? 0x8F : 0xBF;
    else
        return 0;
    if (p[1] < lo || p[1] > hi) return 0;
    for (int i = 2; i < n; i++)
        if ((p[i] & 0xC0) != 0x80) return 0;
    return n;
}

/// One escape at `at` (a backslash) appended at *o; the text after it, or NULL after an error.
static const char *escape(parser *ps, const char *at, char **o) {
    char tb[40];
    const char *simple = strchr("\"\\/bfnrt", at[1]);
    if (at[1] && simple) {
        *(*o)++ = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
        return at + 2;
    }
    if (at[1] != 'u')
        return fail_at(ps, at,
                       "invalid escape: expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX "
                       "after '\\', found %s",
                       found(at + 1, tb, sizeof tb)),
               NULL;
    int cp = hex4(at + 2);
    if (cp < 0) return fail_at(ps, at, "invalid escape: expected 4 hex digits after \\u"), NULL;
    const char *next = at + 6;
    if (cp >= 0xDC00 && cp <= 0xDFFF)
        return fail_at(ps, at,
                       "lone surrogate \\u%04X: expected a high surrogate \\uD800-\\uDBFF "
                       "before it",
                       (unsigned)cp),
               NULL;
    if (cp >= 0xD800 && cp <= 0xDBFF) { // must be followed by its low half
        int lo = next[0] == '\\' && next[1] == 'u' ? hex4(next + 2) : -1;
        if (lo < 0xDC00 || lo > 0xDFFF)
            return fail_at(ps, at,
                           "lone surrogate \\u%04X: expected a low surrogate \\uDC00-\\uDFFF "
                           "after it",
                           (unsigned)cp),
                   NULL;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        next += 6;
    }
    if (!cp)
        return fail_at(ps, at,
                       "\\u0000 is not supported: expected a nonzero code point (strings are "
                       "NUL-terminated here)"),
               NULL;
    *o = utf8(*o, (unsigned)cp); // 6 source bytes give at most 3 here, a pair's 12 give 4
    return next;
}

// At the opening quote. The decoded text is never longer than the source.
static char *parse_string(parser *ps) {
    const char *open = ps->p, *end = open + 1;
    // an upper bound on the decoded length: escapes shrink, UTF-8 is copied as it is
    while (*end && *end != '"') end += *end == '\\' && end[1] ? 2 : 1;
    char *out = arena(ps, (size_t)(end - open)), *o = out;
    if (!out) return fail_at(ps, open, "out of memory"), NULL;
    const char *p = open + 1;
    for (;;) {
        unsigned char c = (unsigned char)*p;
        if (c == '"') break;
        if (!c) {
            int line, col;
            where(ps, open, &line, &col);
            return fail_at(ps, p,
                           "unterminated string (opened at line %d, column %d): expected '\"', "
                           "found the end of the text",
                           line, col),
                   NULL;
        }
        if (c < 0x20)
            return fail_at(ps, p,
                           "control character 0x%02x in a string: expected it escaped (\\n, \\t, "
                           "\\u00%02x...)",
                           c, c),
                   NULL;
        if (c == '\\') {
            if (!(p = escape(ps, p, &o))) return NULL;
        } else if (c < 0x80) {
            *o++ = *p++;
        } else {
            int n = utf8_len(p);
            if (!n) return fail_at(ps, p, "invalid UTF-8 in a string: found byte 0x%02x", c), NULL;
            memcpy(o, p, (size_t)n);
            o += n, p += n;
        }
    }
    *o = 0;
    ps->p = p + 1;
    return out;
}

/// RFC 8259's number, -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?, at p. Returns its
/// end, or NULL with *bad at the first character the grammar refuses and *expected saying what
/// it allows there. A number must not run into letters, digits or '.': 0x10, 01, 1.5.2.
static const char *scan_number(const char *p, const char **bad, const char **expected) {
    const char *more;
    if (*p == '-') p++;
    if (*p == '0') {
        p++;
        more = "'.', 'e', 'E' or the end of the number after a leading 0";
    } else if (*p >= '1' && *p <= '9') {
        while (is_digit(*p)) p++;
        more = "a digit, '.', 'e', 'E' or the end of the number";
    } else {
        return *bad = p, *expected = "a digit after '-'", NULL;
    }
    if (*p == '.') {
        if (!is_digit(*++p)) return *bad = p, *expected = "a digit after '.'", NULL;
        while (is_digit(*p)) p++;
        more = "a digit, 'e', 'E' or the end of the number";
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!is_digit(*p)) return *bad = p, *expected = "a digit in the exponent", NULL;
        while (is_digit(*p)) p++;
        more = "a digit or the end of the number";
    }
    if (is_alnum(*p) || *p == '.') return *bad = p, *expected = more, NULL;
    return p;
}

static ogj_value *new_value(parser *ps, ogj_type t) {
    ogj_value *v = arena(ps, sizeof *v);
    if (!v) return fail_at(ps, ps->p, "out of memory"), NULL;
    memset(v, 0, sizeof *v);
    v->type = t;
    v->line = ps->line;
    return v;
}

static ogj_value *parse_number(parser *ps) {
    const char *start = ps->p, *bad = start, *expected = "a number";
    const char *end = scan_number(start, &bad, &expected);
    char tb[40];
    int len = 0; // the number-like text, for messages
    while (len < 40 && start[len] && (is_alnum(start[len]) || strchr(".+-", start[len]))) len++;
    if (!end)
        return fail_at(ps, bad, "invalid number '%.*s': expected %s, found %s", len, start,
                       expected, found(bad, tb, sizeof tb)),
               NULL;
    ogj_value *v = new_value(ps, OGJ_NUMBER);
    if (!v) return NULL;
    char *stop;
    v->number = strtod(start, &stop);
    // strtod reads the decimal point of the C locale: one that is not '.' would stop early
    if (stop != end)
        return fail_at(ps, start,
                       "cannot convert the number '%.*s' (the C locale's decimal "
                       "point is not '.')",
                       (int)(end - start), start),
               NULL;
    // the grammar has no infinity: inf here is an overflow; an underflow rounds toward 0
    if (isinf(v->number))
        return fail_at(ps, start,
                       "number '%.*s' is out of range: expected a magnitude of at most "
                       "1.7976931348623157e308",
                       (int)(end - start), start),
               NULL;
    ps->p = end;
    return v;
}

static int by_key(const void *a, const void *b) {
    const member *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->at > y->at) - (x->at < y->at);
}

/// Refuses a key given twice in one object, at the earliest repetition in the text. Sorting
/// keeps this O(n log n) for an object of very many keys (mutates the order of m).
static void check_duplicates(parser *ps, member *m, int n) {
    qsort(m, (size_t)n, sizeof *m, by_key);
    const member *dup = NULL;
    for (int i = 1; i < n; i++)
        if (!strcmp(m[i - 1].key, m[i].key) && (!dup || m[i].at < dup->at)) dup = &m[i];
    if (!dup) return;
    int line, col;
    where(ps, dup[-1].at, &line, &col);
    fail_at(ps, dup->at,
            "duplicate key \"%.60s\": expected each key once in an object (first at line %d, "
            "column %d)",
            dup->key, line, col);
}

static ogj_value *parse_value(parser *ps, int depth);

// Arrays and objects: members are collected in a growing heap array, then moved to the arena.
// depth: the arrays and objects around this one.
static ogj_value *parse_container(parser *ps, int depth, bool object) {
    if (depth >= OGJ_MAX_DEPTH)
        return fail_at(ps, ps->p,
                       "arrays and objects nested deeper than %d levels (expected at "
                       "most %d)",
                       OGJ_MAX_DEPTH, OGJ_MAX_DEPTH),
               NULL;
    ogj_value *v = new_value(ps, object ? OGJ_OBJECT : OGJ_ARRAY);
    if (!v) return NULL;
    char close = object ? '}' : ']', tb[40];
    const char *what = object ? "a string key" : A_VALUE;
    ps->p++;
    skip_ws(ps);
    if (*ps->p == close) {
        ps->p++;
        return v;
    }
    int cap = 0;
    member *m = NULL;
    for (;;) {
        member it = {.at = ps->p};
        if (object) {
            if (*ps->p != '"') {
                fail_at(ps, ps->p, "expected a string key, found %s", found(ps->p, tb, sizeof tb));
                break;
            }
            if (!(it.key = parse_string(ps))) break;
            skip_ws(ps);
            if (*ps->p != ':') {
                fail_at(ps, ps->p, "expected ':' after the key \"%.60s\", found %s", it.key,
                        found(ps->p, tb, sizeof tb));
                break;
            }
            ps->p++;
        }
        if (!(it.item = parse_value(ps, depth + 1))) break;
        if (v->count == cap) { // doubling, with count and the byte size far from overflow
            member *nm = NULL;
            if (cap >= 1 << 28)
                fail_at(ps, it.at, "more than %d members in one array or object", 1 << 28);
            else if (!(nm = realloc(m, (size_t)(cap = cap ? 2 * cap : 8) * sizeof *m)))
                fail_at(ps, it.at, "out of memory");
            if (!nm) break;
            m = nm;
        }
        m[v->count++] = it;
        skip_ws(ps);
        if (*ps->p == ',') {
            ps->p++;
            skip_ws(ps);
            if (*ps->p == close) {
                fail_at(ps, ps->p, "trailing comma before '%c': expected %s after ','", close,
                        what);
                break;
            }
            continue;
        }
        if (*ps->p == close) {
            ps->p++;
            break;
        }
        fail_at(ps, ps->p, "expected ',' or '%c' after %s, found %s", close,
                object ? "an object member" : "an array item", found(ps->p, tb, sizeof tb));
        break;
    }
    if (!ps->failed) {
        v->items = arena(ps, (size_t)v->count * sizeof *v->items);
        v->keys = object ? arena(ps, (size_t)v->count * sizeof *v->keys) : NULL;
        if (!v->items || (object && !v->keys)) fail_at(ps, ps->p, "out of memory");
        for (int i = 0; !ps->failed && i < v->count; i++) {
            v->items[i] = m[i].item;
            if (object) v->keys[i] = m[i].key;
        }
        if (object) check_duplicates(ps, m, v->count);
    }
    free(m);
    return ps->failed ? NULL : v;
}

static ogj_value *parse_value(parser *ps, int depth) {
    skip_ws(ps);
    char c = *ps->p, tb[40];
    if (c == '{' || c == '[') return parse_container(ps, depth, c == '{');
    if (c == '"') {
        ogj_value *v = new_value(ps, OGJ_STRING);
        return v && (v->string = parse_string(ps)) ? v : NULL;
    }
    if (c == '-' || is_digit(c)) return parse_number(ps);
    static const struct {
        const char *word;
        ogj_type t;
        bool b;
    } words[] = {{"true", OGJ_BOOL, true}, {"false", OGJ_BOOL, false}, {"null", OGJ_NULL, false}};
    size_t n = 0;
    while (is_alnum(ps->p[n])) n++; // the whole word: "nullx" is not null
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        if (n == strlen(words[i].word) && !memcmp(ps->p, words[i].word, n)) {
            ogj_value *v = new_value(ps, words[i].t);
            if (v) v->boolean = words[i].b;
            ps->p += n;
            return v;
        }
    }
    return fail_at(ps, ps->p, "expected %s, found %s", A_VALUE, found(ps->p, tb, sizeof tb)), NULL;
}

ogj_doc *ogj_parse(const char *text, char *err, size_t errsize) {
    if (errsize) err[0] = 0;
    ogj_doc *doc = text ? calloc(1, sizeof *doc) : NULL;
    if (!doc) {
        if (errsize) snprintf(err, errsize, text ? "out of memory" : "no text");
        return NULL;
    }
    parser ps = {.s = text, .p = text, .doc = doc, .err = err, .errsize = errsize, .line = 1};
    doc->root = parse_value(&ps, 0);
    if (!ps.failed) {
        skip_ws(&ps);
        char tb[40];
        if (*ps.p)
            fail_at(&ps, ps.p, "expected the end of the text after the document, found %s",
                    found(ps.p, tb, sizeof tb));
    }
    if (ps.failed) {
        ogj_free(doc);
        return NULL;
    }
    return doc;
}

void ogj_free(ogj_doc *doc) {
    if (!doc) return;
    for (block *b = doc->blocks, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(doc);
}

const ogj_value *ogj_root(const ogj_doc *doc) { return doc ? doc->root : NULL; }

const ogj_value *ogj_get(const ogj_value *obj, const char *key) {
    if (!obj || obj->type != OGJ_OBJECT) return NULL;
    for (int i = 0; i < obj->count; i++)
        if (!strcmp(obj->keys[i], key)) return obj->items[i];
    return NULL;
}

const char *ogj_type_name(ogj_type t) {
    static const char *const names[] = {"null", "boolean", "number", "string", "array", "object"};
    return names[t];
}
