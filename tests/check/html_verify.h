/* Structural checks of an `opgrad check --html` report (src/check/report_html.h), shared by
 * test_html_report.c and the verify_html tool (the CLI tests): the markup is well formed (every
 * element closed, properly nested; script and style as raw text), nothing is fetched (no
 * http:// or https://, no src= or external href=, no url(), no <link>/<img>/<iframe>), the
 * embedded JSON parses, and the row, plot and case arrays it holds are what the page draws. */
#ifndef OG_TEST_HTML_VERIFY_H
#define OG_TEST_HTML_VERIFY_H

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---- a small JSON DOM (enough for the report's data)

typedef enum { HJ_NULL, HJ_BOOL, HJ_NUM, HJ_STR, HJ_ARR, HJ_OBJ } hj_type;

typedef struct hj {
    hj_type type;
    double num;
    char *str;        // HJ_STR (decoded; \u escapes below 0x80 only, others as '?')
    struct hj **item; // HJ_ARR / HJ_OBJ values
    char **key;       // HJ_OBJ keys
    int n;
} hj;

typedef struct hj_parser {
    const char *p, *end;
    bool bad;
} hj_parser;

static void hj_free(hj *v) {
    if (!v) return;
    for (int i = 0; i < v->n; i++) {
        hj_free(v->item[i]);
        if (v->key) free(v->key[i]);
    }
    free(v->item);
    free(v->key);
    free(v->str);
    free(v);
}

static void hj_ws(hj_parser *ps) {
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t'))
        ps->p++;
}

static char *hj_string(hj_parser *ps) {
    if (ps->p >= ps->end || *ps->p != '"') return ps->bad = true, NULL;
    ps->p++;
    size_t cap = 16, n = 0;
    char *s = malloc(cap);
    while (ps->p < ps->end && *ps->p != '"') {
        char c = *ps->p++;
        if ((unsigned char)c < 0x20) ps->bad = true;
        if (c == '\\' && ps->p < ps->end) {
            char e = *ps->p++;
            if (e == 'u') {
                if (ps->end - ps->p < 4) return free(s), ps->bad = true, NULL;
                unsigned v = 0;
                for (int k = 0; k < 4; k++) {
                    char h = *ps->p++;
                    if (!isxdigit((unsigned char)h)) ps->bad = true;
                    v = v * 16 +
                        (unsigned)(isdigit((unsigned char)h) ? h - '0' : (h | 32) - 'a' + 10);
                }
                c = v < 0x80 ? (char)v : '?';
            } else {
                const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
                const char *q = strchr(from, e);
                if (!q || !e) ps->bad = true;
                c = q && e ? to[q - from] : '?';
            }
        }
        if (n + 2 > cap) s = realloc(s, cap *= 2);
        s[n++] = c;
    }
    if (ps->p >= ps->end) return free(s), ps->bad = true, NULL;
    ps->p++;
    s[n] = 0;
    return s;
}

static hj *hj_value(hj_parser *ps, int depth);

static void hj_push(hj *v, hj *item, char *key) {
    v->item = realloc(v->item, (size_t)(v->n + 1) * sizeof *v->item);
    if (v->type == HJ_OBJ) v->key = realloc(v->key, (size_t)(v->n + 1) * sizeof *v->key);
    v->item[v->n] = item;
    if (v->type == HJ_OBJ) v->key[v->n] = key;
    v->n++;
}

static hj *hj_value(hj_parser *ps, int depth) {
    hj_ws(ps);
    if (ps->p >= ps->end || depth > 64) return ps->bad = true, NULL;
    hj *v = calloc(1, sizeof *v);
    char c = *ps->p;
    if (c == '{' || c == '[') {
        v->type = c == '{' ? HJ_OBJ : HJ_ARR;
        ps->p++;
        hj_ws(ps);
        if (ps->p < ps->end && *ps->p == (c == '{' ? '}' : ']')) return ps->p++, v;
        for (;;) {
            char *key = NULL;
            if (v->type == HJ_OBJ) {
                hj_ws(ps);
                key = hj_string(ps);
                hj_ws(ps);
                if (!key || ps->p >= ps->end || *ps->p++ != ':') {
                    free(key);
                    ps->bad = true;
                    return v;
                }
            }
            hj *item = hj_value(ps, depth + 1);
            if (!item) {
                free(key);
                return v;
            }
            hj_push(v, item, key);
            hj_ws(ps);
            if (ps->p < ps->end && *ps->p == ',') {
                ps->p++;
                continue;
            }
            if (ps->p < ps->end && *ps->p == (c == '{' ? '}' : ']')) {
                ps->p++;
                return v;
            }
            ps->bad = true;
            return v;
        }
    }
    if (c == '"') {
        v->type = HJ_STR;
        v->str = hj_string(ps);
        return v;
    }
    static const char *const words[] = {"null", "true", "false"};
    for (int k = 0; k < 3; k++) {
        size_t n = strlen(words[k]);
        if ((size_t)(ps->end - ps->p) >= n && !strncmp(ps->p, words[k], n)) {
            ps->p += n;
            v->type = k == 0 ? HJ_NULL : HJ_BOOL;
            v->num = k == 1;
            return v;
        }
    }
    // a number, by JSON's grammar
    const char *q = ps->p;
    if (q < ps->end && *q == '-') q++;
    if (q >= ps->end || !isdigit((unsigned char)*q)) return ps->bad = true, v;
    if (*q == '0')
        q++;
    else
        while (q < ps->end && isdigit((unsigned char)*q)) q++;
    if (q < ps->end && *q == '.') {
        q++;
        if (q >= ps->end || !isdigit((unsigned char)*q)) ps->bad = true;
        while (q < ps->end && isdigit((unsigned char)*q)) q++;
    }
    if (q < ps->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < ps->end && (*q == '+' || *q == '-')) q++;
        if (q >= ps->end || !isdigit((unsigned char)*q)) ps->bad = true;
        while (q < ps->end && isdigit((unsigned char)*q)) q++;
    }
    char buf[64];
    size_t len = (size_t)(q - ps->p) < sizeof buf - 1 ? (size_t)(q - ps->p) : sizeof buf - 1;
    memcpy(buf, ps->p, len);
    buf[len] = 0;
    v->type = HJ_NUM;
    v->num = strtod(buf, NULL);
    ps->p = q;
    return v;
}

static hj *hj_get(const hj *o, const char *key) {
    if (!o || o->type != HJ_OBJ) return NULL;
    for (int i = 0; i < o->n; i++)
        if (!strcmp(o->key[i], key)) return o->item[i];
    return NULL;
}

// ---- the report

typedef struct html_report {
    char *text;
    size_t len;
    hj *data;      // the embedded JSON object
    int rows;      // cases in data.rows
    int counts[4]; // ... by status (PASS, FAIL, MISTRUSTED, SKIPPED)
    int plots;     // (operator, dtype) entries with samples
    int points;    // sampled points in all plots
    int cases;     // failing cases with their own samples
    char error[512];
} html_report;

static bool hr_fail(html_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool hr_fail(html_report *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
    return false;
}

static char *hr_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap + 1);
    for (size_t got; (got = fread(s + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) s = realloc(s, (cap *= 2) + 1);
    }
    fclose(f);
    s[n] = 0;
    *len = n;
    return s;
}

static bool hr_void_element(const char *name) {
    static const char *const v[] = {"area",  "base", "br",   "col",    "embed", "hr", "img",
                                    "input", "link", "meta", "source", "track", "wbr"};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        if (!strcmp(name, v[i])) return true;
    return false;
}

// Every element closed and properly nested; <script>/<style> content is raw text up to its end
// tag; a '<' in text must start a tag (else it was not escaped).
static bool hr_markup(html_report *r) {
    const char *p = r->text, *end = r->text + r->len;
    char stack[64][16];
    int depth = 0;
    if (strncmp(p, "<!DOCTYPE html>", 15)) return hr_fail(r, "does not start with <!DOCTYPE html>");
    p += 15;
    while (p < end) {
        if (*p == '&') { // a character reference: &name; or &#digits;
            const char *q = p + 1;
            while (q < end && q - p < 12 && (isalnum((unsigned char)*q) || *q == '#')) q++;
            if (q >= end || *q != ';' || q == p + 1)
                return hr_fail(r, "unescaped '&' at offset %ld", (long)(p - r->text));
            p = q + 1;
            continue;
        }
        if (*p != '<') {
            p++;
            continue;
        }
        if (!strncmp(p, "<!--", 4)) {
            const char *q = strstr(p, "-->");
            if (!q) return hr_fail(r, "unterminated comment");
            p = q + 3;
            continue;
        }
        bool closing = p[1] == '/';
        const char *q = p + 1 + closing;
        char name[16];
        int n = 0;
        while (q < end && (isalnum((unsigned char)*q)) && n < 15) name[n++] = (char)*q++;
        name[n] = 0;
        if (n == 0 || (isupper((unsigned char)name[0])))
            return hr_fail(r, "'<' that starts no tag at offset %ld", (long)(p - r->text));
        // the tag's end, past quoted attribute values
        char quote = 0;
        while (q < end && (quote || *q != '>')) {
            if (quote && *q == quote)
                quote = 0;
            else if (!quote && (*q == '"' || *q == '\''))
                quote = *q;
            else if (!quote && *q == '<')
                return hr_fail(r, "'<' inside the <%s> tag", name);
            q++;
        }
        if (q >= end) return hr_fail(r, "unterminated <%s> tag", name);
        if (closing) {
            if (depth == 0 || strcmp(stack[depth - 1], name))
                return hr_fail(r, "</%s> closes <%s> at offset %ld", name,
                               depth ? stack[depth - 1] : "(nothing)", (long)(p - r->text));
            depth--;
            p = q + 1;
            continue;
        }
        p = q + 1;
        if (hr_void_element(name)) continue;
        if (!strcmp(name, "script") || !strcmp(name, "style")) {
            char close[24];
            snprintf(close, sizeof close, "</%s>", name);
            const char *c = strstr(p, close);
            if (!c) return hr_fail(r, "<%s> never closed", name);
            p = c + strlen(close);
            continue;
        }
        if (depth == 64) return hr_fail(r, "elements nested too deep");
        snprintf(stack[depth++], sizeof stack[0], "%s", name);
    }
    if (depth) return hr_fail(r, "<%s> never closed", stack[depth - 1]);
    return true;
}

// Nothing the page would fetch.
static bool hr_self_contained(html_report *r) {
    static const char *const banned[] = {
        "http://", "https://", " src=",  "url(",  "@import", "<link",         "<img",
        "<iframe", "<object",  "<embed", "//cdn", "fetch(",  "XMLHttpRequest"};
    for (size_t i = 0; i < sizeof banned / sizeof *banned; i++)
        if (strstr(r->text, banned[i]))
            return hr_fail(r, "the report contains '%s' (it must fetch nothing)", banned[i]);
    for (const char *p = r->text; (p = strstr(p, "href=")); p += 5)
        if (p[5] != '"' || p[6] != '#') return hr_fail(r, "an href that is not a #fragment");
    return true;
}

static int hr_count_points(const hj *s) {
    const hj *pts = hj_get(s, "pts");
    return pts && pts->type == HJ_ARR ? pts->n / 3 : 0;
}

// Parses and checks the embedded JSON: every row well typed, its name indices in range; every
// plot with a histogram of 17 bins and points in threes.
static bool hr_data(html_report *r) {
    const char *open = "<script type=\"application/json\" id=\"opgrad-data\">";
    const char *a = strstr(r->text, open);
    if (!a) return hr_fail(r, "no embedded data");
    a += strlen(open);
    const char *b = strstr(a, "</script>");
    if (!b) return hr_fail(r, "embedded data not closed");
    hj_parser ps = {a, b, false};
    r->data = hj_value(&ps, 0);
    hj_ws(&ps);
    if (ps.bad || !r->data || ps.p != b || r->data->type != HJ_OBJ)
        return hr_fail(r, "embedded data is not one JSON object (offset %ld)", (long)(ps.p - a));
    const char *tables[] = {"ops", "dtypes", "isas", "layouts", "statuses"};
    int sizes[5];
    for (int t = 0; t < 5; t++) {
        const hj *v = hj_get(r->data, tables[t]);
        if (!v || v->type != HJ_ARR) return hr_fail(r, "data has no %s table", tables[t]);
        sizes[t] = v->n;
    }
    const hj *rows = hj_get(r->data, "rows");
    if (!rows || rows->type != HJ_ARR) return hr_fail(r, "data has no rows");
    for (int i = 0; i < rows->n; i++) {
        const hj *row = rows->item[i];
        if (row->type != HJ_ARR || (row->n != 13 && row->n != 15))
            return hr_fail(r, "row %d: not an array of 13 or 15 values", i);
        for (int k = 0; k < 5; k++)
            if (row->item[k]->type != HJ_NUM || row->item[k]->num < 0 ||
                row->item[k]->num >= sizes[k])
                return hr_fail(r, "row %d: %s index out of range", i, tables[k]);
        for (int k = 5; k < 13; k++)
            if (row->item[k]->type != HJ_NUM && row->item[k]->type != HJ_NULL)
                return hr_fail(r, "row %d: value %d is not a number", i, k);
        for (int k = 13; k < row->n; k++)
            if (row->item[k]->type != HJ_STR) return hr_fail(r, "row %d: text %d", i, k);
        r->counts[(int)row->item[4]->num & 3]++;
    }
    r->rows = rows->n;
    const char *lists[] = {"plots", "cases"};
    for (int l = 0; l < 2; l++) {
        const hj *v = hj_get(r->data, lists[l]);
        if (!v || v->type != HJ_ARR) return hr_fail(r, "data has no %s", lists[l]);
        for (int i = 0; i < v->n; i++) {
            for (int d = 0; d < 2; d++) {
                const hj *s = hj_get(v->item[i], d ? "bwd" : "fwd");
                if (!s) return hr_fail(r, "%s %d: no %s", lists[l], i, d ? "bwd" : "fwd");
                if (s->type == HJ_NULL) continue;
                const hj *hist = hj_get(s, "hist"), *pts = hj_get(s, "pts");
                if (!hist || hist->type != HJ_ARR || hist->n != 17 || !pts || pts->type != HJ_ARR ||
                    pts->n % 3 || pts->n / 3 > 128)
                    return hr_fail(r, "%s %d: malformed series", lists[l], i);
                if (l == 0) r->points += hr_count_points(s);
            }
        }
        if (l == 0) r->plots = v->n;
        if (l == 1) r->cases = v->n;
    }
    return true;
}

/// Loads and checks a report; false with r->error set when something is wrong.
static bool html_report_load(html_report *r, const char *path) {
    memset(r, 0, sizeof *r);
    if (!(r->text = hr_read_file(path, &r->len))) return hr_fail(r, "cannot read %s", path);
    if (r->len < 64 || strcmp(r->text + r->len - 8, "</html>\n"))
        return hr_fail(r, "%s does not end with </html>", path);
    if (!strstr(r->text, "opgrad report: ")) return hr_fail(r, "no page script (title marker)");
    return hr_markup(r) && hr_self_contained(r) && hr_data(r);
}

static void html_report_free(html_report *r) {
    free(r->text);
    hj_free(r->data);
    memset(r, 0, sizeof *r);
}

/// The text as the report's HTML writes it (&, <, >, ", ' escaped).
static char *html_escaped(const char *s) {
    size_t n = 0;
    for (const char *p = s; *p; p++) n += 6;
    char *out = malloc(n + 1), *o = out;
    for (; *s; s++) {
        const char *e = *s == '&'    ? "&amp;"
                        : *s == '<'  ? "&lt;"
                        : *s == '>'  ? "&gt;"
                        : *s == '"'  ? "&quot;"
                        : *s == '\'' ? "&#39;"
                                     : NULL;
        if (e)
            o += sprintf(o, "%s", e);
        else
            *o++ = *s;
    }
    *o = 0;
    return out;
}

/// The row (op, dtype, isa, layout) of data.rows with that status name, or -1.
static int html_find_row(const html_report *r, const char *op, const char *dtype, const char *isa,
                         const char *layout, const char *status) {
    const char *tables[] = {"ops", "dtypes", "isas", "layouts", "statuses"};
    const char *want[] = {op, dtype, isa, layout, status};
    const hj *rows = hj_get(r->data, "rows");
    for (int i = 0; rows && i < rows->n; i++) {
        bool all = true;
        for (int k = 0; k < 5 && all; k++) {
            const hj *t = hj_get(r->data, tables[k]);
            all = !strcmp(t->item[(int)rows->item[i]->item[k]->num]->str, want[k]);
        }
        if (all) return i;
    }
    return -1;
}

#endif
