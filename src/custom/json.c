/* JSON reader (json.h). Values live in an arena owned by the document, so freeing is one walk
 * over a list of blocks. Nesting is limited, so a hostile spec cannot exhaust the stack. */
#include "custom/json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_DEPTH = 64 };

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

static void *arena(parser *ps, size_t size) {
    block *b = malloc(sizeof *b + size);
    if (!b) return NULL;
    b->next = ps->doc->blocks;
    ps->doc->blocks = b;
    return b->data;
}

static void where(const parser *ps, const char *at, int *line, int *col) {
    *line = 1, *col = 1;
    for (const char *q = ps->s; q < at; q++) {
        if (*q == '\n')
            ++*line, *col = 1;
        else
            ++*col;
    }
}

static void fail(parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(parser *ps, const char *fmt, ...) {
    if (ps->failed) return;
    ps->failed = true;
    int line, col;
    where(ps, ps->p, &line, &col);
    int n = snprintf(ps->err, ps->errsize, "line %d, column %d: ", line, col);
    if (n < 0 || (size_t)n >= ps->errsize) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ps->err + n, ps->errsize - (size_t)n, fmt, ap);
    va_end(ap);
}

static void skip_ws(parser *ps) {
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
        ps->line += *ps->p++ == '\n';
}

static int hex4(const char *p) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
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

// At the opening quote. The decoded text is never longer than the source.
static char *parse_string(parser *ps) {
    const char *start = ++ps->p;
    const char *end = start;
    while (*end && *end != '"') end += *end == '\\' && end[1] ? 2 : 1;
    if (!*end) return fail(ps, "unterminated string"), NULL;
    char *out = arena(ps, (size_t)(end - start) + 1), *o = out;
    if (!out) return fail(ps, "out of memory"), NULL;
    while (ps->p < end) {
        unsigned char c = (unsigned char)*ps->p;
        if (c < 0x20) return fail(ps, "control character in a string"), NULL;
        if (c != '\\') {
            *o++ = (char)c, ps->p++;
            continue;
        }
        char e = ps->p[1];
        ps->p += 2;
        switch (e) {
        case '"':
            *o++ = '"';
            break;
        case '\\':
            *o++ = '\\';
            break;
        case '/':
            *o++ = '/';
            break;
        case 'b':
            *o++ = '\b';
            break;
        case 'f':
            *o++ = '\f';
            break;
        case 'n':
            *o++ = '\n';
            break;
        case 'r':
            *o++ = '\r';
            break;
        case 't':
            *o++ = '\t';
            break;
        case 'u': {
            int cp = ps->p + 4 <= end ? hex4(ps->p) : -1;
            if (cp < 0) return fail(ps, "bad \\u escape"), NULL;
            ps->p += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && ps->p + 6 <= end && ps->p[0] == '\\' &&
                ps->p[1] == 'u') {
                int lo = hex4(ps->p + 2);
                if (lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    ps->p += 6;
                }
            }
            o = utf8(o, (unsigned)cp); // a \uXXXX takes 6 source bytes and at most 3 here
            break;
        }
        default:
            ps->p -= 1;
            return fail(ps, "unknown escape '\\%c'", e), NULL;
        }
    }
    *o = 0;
    ps->p = end + 1;
    return out;
}

static ogj_value *parse_value(parser *ps, int depth);

static ogj_value *new_value(parser *ps, ogj_type t) {
    ogj_value *v = arena(ps, sizeof *v);
    if (!v) return fail(ps, "out of memory"), NULL;
    memset(v, 0, sizeof *v);
    v->type = t;
    v->line = ps->line;
    return v;
}

// Arrays and objects: items are collected in a growing heap array, then moved to the arena.
static ogj_value *parse_container(parser *ps, int depth, bool object) {
    ogj_value *v = new_value(ps, object ? OGJ_OBJECT : OGJ_ARRAY);
    if (!v) return NULL;
    char close = object ? '}' : ']';
    ps->p++;
    skip_ws(ps);
    int cap = 0;
    ogj_value **items = NULL;
    char **keys = NULL;
    if (*ps->p == close) {
        ps->p++;
        return v;
    }
    for (;;) {
        skip_ws(ps);
        char *key = NULL;
        if (object) {
            if (*ps->p != '"') {
                fail(ps, "expected a string key");
                break;
            }
            if (!(key = parse_string(ps))) break;
            skip_ws(ps);
            if (*ps->p != ':') {
                fail(ps, "expected ':' after the key \"%s\"", key);
                break;
            }
            ps->p++;
        }
        ogj_value *item = parse_value(ps, depth + 1);
        if (!item) break;
        if (v->count == cap) {
            cap = cap ? 2 * cap : 8;
            ogj_value **ni = realloc(items, (size_t)cap * sizeof *ni);
            char **nk = realloc(keys, (size_t)cap * sizeof *nk);
            if (ni) items = ni;
            if (nk) keys = nk;
            if (!ni || !nk) {
                fail(ps, "out of memory");
                break;
            }
        }
        items[v->count] = item;
        keys[v->count] = key;
        v->count++;
        skip_ws(ps);
        if (*ps->p == ',') {
            ps->p++;
            skip_ws(ps);
            if (*ps->p == close) {
                fail(ps, "trailing comma before '%c'", close);
                break;
            }
            continue;
        }
        if (*ps->p == close) {
            ps->p++;
            break;
        }
        fail(ps, "expected ',' or '%c'", close);
        break;
    }
    if (!ps->failed && v->count) {
        v->items = arena(ps, (size_t)v->count * sizeof *v->items);
        v->keys = object ? arena(ps, (size_t)v->count * sizeof *v->keys) : NULL;
        if (!v->items || (object && !v->keys))
            fail(ps, "out of memory");
        else {
            memcpy(v->items, items, (size_t)v->count * sizeof *items);
            if (object) memcpy(v->keys, keys, (size_t)v->count * sizeof *keys);
        }
    }
    free(items);
    free(keys);
    return ps->failed ? NULL : v;
}

static ogj_value *parse_value(parser *ps, int depth) {
    skip_ws(ps);
    if (depth > MAX_DEPTH) return fail(ps, "nested deeper than %d levels", MAX_DEPTH), NULL;
    char c = *ps->p;
    if (c == '{' || c == '[') return parse_container(ps, depth, c == '{');
    if (c == '"') {
        ogj_value *v = new_value(ps, OGJ_STRING);
        return v && (v->string = parse_string(ps)) ? v : NULL;
    }
    static const struct {
        const char *word;
        ogj_type t;
        bool b;
    } words[] = {{"true", OGJ_BOOL, true}, {"false", OGJ_BOOL, false}, {"null", OGJ_NULL, false}};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        size_t n = strlen(words[i].word);
        if (!strncmp(ps->p, words[i].word, n)) {
            ogj_value *v = new_value(ps, words[i].t);
            if (v) v->boolean = words[i].b;
            ps->p += n;
            return v;
        }
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        // JSON's grammar is a subset of strtod's; check the shape strtod would also accept
        const char *q = ps->p + (c == '-');
        if (!(*q >= '0' && *q <= '9') || (q[0] == '0' && q[1] >= '0' && q[1] <= '9'))
            return fail(ps, "malformed number"), NULL;
        ogj_value *v = new_value(ps, OGJ_NUMBER);
        if (!v) return NULL;
        char *end;
        errno = 0;
        v->number = strtod(ps->p, &end);
        if (end == ps->p || errno == ERANGE)
            return fail(ps, "malformed or out-of-range number"), NULL;
        ps->p = end;
        return v;
    }
    if (!c) return fail(ps, "unexpected end of text"), NULL;
    return fail(ps, "unexpected character '%c'", c), NULL;
}

ogj_doc *ogj_parse(const char *text, char *err, size_t errsize) {
    if (errsize) err[0] = 0;
    ogj_doc *doc = calloc(1, sizeof *doc);
    if (!doc) {
        snprintf(err, errsize, "out of memory");
        return NULL;
    }
    parser ps = {.s = text, .p = text, .doc = doc, .err = err, .errsize = errsize, .line = 1};
    doc->root = parse_value(&ps, 0);
    if (!ps.failed) {
        skip_ws(&ps);
        if (*ps.p) fail(&ps, "unexpected text after the document");
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
