/* The HTML report of `opgrad check --html` (report_html.h). The summary and the failures are
 * plain HTML; the cases and the plot samples are one embedded JSON object that the inline
 * script (report_html_assets.c) turns into the filterable table and the SVG plots. */
#include "check/report_html.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opgrad/opgrad.h"
#include "tensor/dtype.h"

#define MAX_CASE_SAMPLES 64 // failing or mistrusted cases that keep their own samples

typedef struct html_row {
    int op, dtype, isa, layout; // indices into the name tables
    ogc_status status;
    int64_t compared;
    double m[7]; // max_abs, max_rel, max_ulp, mean_ulp, bias_ulp, mere, mare
    char *diagnosis, *repro;
} html_row;

typedef struct html_plot {
    int op, dtype;
    ogc_samples s;
} html_plot;

typedef struct html_case {
    int row;
    ogc_samples s;
} html_case;

typedef struct name_table {
    char **name;
    int n, cap;
} name_table;

struct ogc_html {
    FILE *f;
    char *path;
    name_table ops, dtypes, isas, layouts;
    html_row *rows;
    int nrows, caprows;
    html_plot *plots;
    int nplots, capplots;
    html_case *cases;
    int ncases;
    bool oom;
};

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

// Grows *p (elements of `size` bytes, *cap of them) to hold n; false when out of memory.
static bool reserve(void **p, int *cap, int n, size_t size) {
    if (n <= *cap) return true;
    int c = *cap ? *cap * 2 : 64;
    while (c < n) c *= 2;
    void *q = realloc(*p, (size_t)c * size);
    if (!q) return false;
    *p = q;
    *cap = c;
    return true;
}

// The index of `name` in t, added if new; -1 when out of memory.
static int intern(name_table *t, const char *name) {
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->name[i], name)) return i;
    void *p = t->name;
    if (!reserve(&p, &t->cap, t->n + 1, sizeof *t->name)) return -1;
    t->name = p;
    if (!(t->name[t->n] = dup_str(name))) return -1;
    return t->n++;
}

static void free_table(name_table *t) {
    for (int i = 0; i < t->n; i++) free(t->name[i]);
    free(t->name);
}

ogc_html *ogc_html_open(const char *path, char *err, size_t errsize) {
    ogc_html *h = calloc(1, sizeof *h);
    if (!h || !(h->path = dup_str(path))) {
        snprintf(err, errsize, "out of memory");
        if (h) free(h);
        return NULL;
    }
    if (!(h->f = fopen(path, "w"))) {
        snprintf(err, errsize, "cannot write %s: %s", path, strerror(errno));
        free(h->path);
        free(h);
        return NULL;
    }
    return h;
}

static const char *dtype_label(const ogc_report *r) {
    return r->isa < 0 ? "f64-ref" : og_dtype_name(r->dtype);
}

static bool has_samples(const ogc_series *s) {
    int64_t total = 0;
    for (int b = 0; b < OGC_HIST_BINS; b++) total += s->hist[b];
    return total > 0 || s->n > 0;
}

void ogc_html_add(ogc_html *h, const ogc_report *r, const ogc_samples *s) {
    if (!h || h->oom) return;
    void *p = h->rows;
    if (!reserve(&p, &h->caprows, h->nrows + 1, sizeof *h->rows)) {
        h->oom = true;
        return;
    }
    h->rows = p;
    html_row *row = &h->rows[h->nrows];
    memset(row, 0, sizeof *row);
    row->op = intern(&h->ops, r->op);
    row->dtype = intern(&h->dtypes, dtype_label(r));
    row->isa = intern(&h->isas, r->isa < 0 ? "-" : opgrad_isa_name((opgrad_isa)r->isa));
    row->layout = intern(&h->layouts, r->layout);
    row->status = r->status;
    row->compared = r->compared;
    const double m[7] = {r->max_abs,  r->max_rel, r->max_ulp, r->mean_ulp,
                         r->bias_ulp, r->mere,    r->mare};
    memcpy(row->m, m, sizeof m);
    if (r->diagnosis[0]) {
        row->diagnosis = dup_str(r->diagnosis);
        row->repro = dup_str(r->repro);
        if (!row->diagnosis || !row->repro) h->oom = true;
    }
    if (row->op < 0 || row->dtype < 0 || row->isa < 0 || row->layout < 0) h->oom = true;
    if (h->oom) {
        free(row->diagnosis), free(row->repro);
        return;
    }
    h->nrows++;
    if (!s || (!has_samples(&s->fwd) && !has_samples(&s->bwd))) return;
    // pooled per (operator, dtype) for the operator's plots
    int k = 0;
    while (k < h->nplots && (h->plots[k].op != row->op || h->plots[k].dtype != row->dtype)) k++;
    if (k == h->nplots) {
        p = h->plots;
        if (!reserve(&p, &h->capplots, h->nplots + 1, sizeof *h->plots)) {
            h->oom = true;
            return;
        }
        h->plots = p;
        memset(&h->plots[k], 0, sizeof h->plots[k]);
        h->plots[k].op = row->op, h->plots[k].dtype = row->dtype;
        h->nplots++;
    }
    ogc_series_merge(&h->plots[k].s.fwd, &s->fwd);
    ogc_series_merge(&h->plots[k].s.bwd, &s->bwd);
    // a failing or mistrusted case keeps its own
    if ((r->status == OGC_FAIL || r->status == OGC_MISTRUSTED) && h->ncases < MAX_CASE_SAMPLES) {
        if (!h->cases && !(h->cases = calloc(MAX_CASE_SAMPLES, sizeof *h->cases))) {
            h->oom = true;
            return;
        }
        h->cases[h->ncases].row = h->nrows - 1;
        h->cases[h->ncases++].s = *s;
    }
}

void ogc_html_discard(ogc_html *h) {
    if (!h) return;
    if (h->f) fclose(h->f);
    for (int i = 0; i < h->nrows; i++) free(h->rows[i].diagnosis), free(h->rows[i].repro);
    free(h->rows);
    free(h->plots);
    free(h->cases);
    free_table(&h->ops), free_table(&h->dtypes), free_table(&h->isas), free_table(&h->layouts);
    free(h->path);
    free(h);
}

// ---------------------------------------------------------------------------------------------
// Writing

static void html_text(FILE *f, const char *s) {
    for (; s && *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&#39;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

// A JSON string; <, > and & escaped too, so that nothing in it can close the <script> element.
static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fputc('\\', f), fputc(c, f);
        else if (c < 0x20 || c == '<' || c == '>' || c == '&')
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

// A number in JSON: %.*g, with 1e999 for an infinity (JSON.parse reads it as Infinity) and null
// for NaN.
static void json_num(FILE *f, double v, int digits) {
    if (isnan(v))
        fputs("null", f);
    else if (isinf(v))
        fputs(v > 0 ? "1e999" : "-1e999", f);
    else
        fprintf(f, "%.*g", digits, v == 0 ? 0.0 : v); // no "-0"
}

static void json_names(FILE *f, const char *key, const name_table *t) {
    fprintf(f, ",\n\"%s\":[", key);
    for (int i = 0; i < t->n; i++) {
        if (i) fputc(',', f);
        json_string(f, t->name[i]);
    }
    fputc(']', f);
}

static void json_series(FILE *f, const ogc_series *s) {
    if (!has_samples(s)) {
        fputs("null", f);
        return;
    }
    fprintf(f, "{\"xi\":%d,\"hist\":[", s->x_is_index ? 1 : 0);
    for (int b = 0; b < OGC_HIST_BINS; b++)
        fprintf(f, "%s%lld", b ? "," : "", (long long)s->hist[b]);
    fputs("],\"pts\":[", f);
    for (int i = 0; i < s->n; i++) {
        if (i) fputc(',', f);
        // x, the ulp error, and its share of the tolerance as a class: 0 within half of it, 1
        // within it, 2 beyond it
        json_num(f, s->p[i].x, 4);
        fputc(',', f);
        json_num(f, s->p[i].ulp, 3);
        fputs(s->p[i].ratio > 1 ? ",2" : s->p[i].ratio > 0.5f ? ",1" : ",0", f);
    }
    fputs("]}", f);
}

static void write_data(FILE *f, const ogc_html *h, const ogc_html_info *info) {
    fputs("{\"version\":", f);
    json_string(f, info && info->version ? info->version : "");
    fprintf(f, ",\"seed\":%llu,\"mode\":", info ? (unsigned long long)info->seed : 0ull);
    json_string(f, info && info->mode ? info->mode : "");
    fputs(",\"statuses\":[\"PASS\",\"FAIL\",\"MISTRUSTED\",\"SKIPPED\"]", f);
    fputs(",\n\"columns\":[\"op\",\"dtype\",\"isa\",\"layout\",\"status\",\"compared\",\"max_abs\","
          "\"max_rel\",\"max_ulp\",\"mean_ulp\",\"bias_ulp\",\"mere\",\"mare\",\"diagnosis\","
          "\"repro\"]",
          f);
    json_names(f, "ops", &h->ops);
    json_names(f, "dtypes", &h->dtypes);
    json_names(f, "isas", &h->isas);
    json_names(f, "layouts", &h->layouts);
    // what each operator runs and its fp32 bound (registered operators)
    fputs(",\n\"opinfo\":[", f);
    for (int i = 0; i < h->ops.n; i++) {
        const ogc_op *op = ogc_registry_find(h->ops.name[i]);
        fputs(i ? ",\n" : "", f);
        if (!op) {
            fputs("null", f);
            continue;
        }
        fputs("{\"api\":", f);
        json_string(f, op->api ? op->api : "");
        fputs(",\"fp32_ulps\":", f);
        json_num(f, op->fp32_ulps, 4);
        fputc('}', f);
    }
    fputs("],\n\"rows\":[", f);
    for (int i = 0; i < h->nrows; i++) {
        const html_row *r = &h->rows[i];
        fprintf(f, "%s[%d,%d,%d,%d,%d,%lld", i ? ",\n" : "\n", r->op, r->dtype, r->isa, r->layout,
                (int)r->status, (long long)r->compared);
        for (int k = 0; k < 7; k++) fputc(',', f), json_num(f, r->m[k], 4);
        if (r->diagnosis) {
            fputc(',', f), json_string(f, r->diagnosis);
            fputc(',', f), json_string(f, r->repro);
        }
        fputc(']', f);
    }
    fputs("],\n\"plots\":[", f);
    for (int i = 0; i < h->nplots; i++) {
        fprintf(f, "%s{\"op\":%d,\"dtype\":%d,\"fwd\":", i ? ",\n" : "\n", h->plots[i].op,
                h->plots[i].dtype);
        json_series(f, &h->plots[i].s.fwd);
        fputs(",\"bwd\":", f);
        json_series(f, &h->plots[i].s.bwd);
        fputc('}', f);
    }
    fputs("],\n\"cases\":[", f);
    for (int i = 0; i < h->ncases; i++) {
        fprintf(f, "%s{\"row\":%d,\"fwd\":", i ? ",\n" : "\n", h->cases[i].row);
        json_series(f, &h->cases[i].s.fwd);
        fputs(",\"bwd\":", f);
        json_series(f, &h->cases[i].s.bwd);
        fputc('}', f);
    }
    fputs("]}", f);
}

static void meta_row(FILE *f, const char *key, const char *value) {
    if (!value) return;
    fprintf(f, "<div class=\"kv%s\"><span class=\"k\">%s</span> <code>",
            strcmp(key, "command") && strcmp(key, "ISA levels run") ? "" : " wide", key);
    html_text(f, value);
    fputs("</code></div>\n", f);
}

static void write_summary(FILE *f, const ogc_html *h, const ogc_html_info *info) {
    int counts[4] = {0};
    for (int i = 0; i < h->nrows; i++) counts[h->rows[i].status]++;
    const char *verdict = counts[OGC_FAIL]         ? "FAILED"
                          : counts[OGC_MISTRUSTED] ? "PASSED with mistrusted cases"
                                                   : "PASSED";
    const char *cls = counts[OGC_FAIL] ? "FAIL" : counts[OGC_MISTRUSTED] ? "MISTRUSTED" : "PASS";
    fprintf(f,
            "<header>\n<h1>opgrad check report</h1>\n"
            "<p class=\"verdict %s\" id=\"verdict\">%s</p>\n<p class=\"counts\" id=\"counts\">"
            "<span class=\"st PASS\">%d passed</span> <span class=\"st FAIL\">%d failed</span> "
            "<span class=\"st MISTRUSTED\">%d mistrusted</span> "
            "<span class=\"st SKIPPED\">%d skipped</span> <span>%d cases",
            cls, verdict, counts[OGC_PASS], counts[OGC_FAIL], counts[OGC_MISTRUSTED],
            counts[OGC_SKIPPED], h->nrows);
    if (info) fprintf(f, " in %.1f s", info->seconds);
    fputs("</span></p>\n<div class=\"meta\" id=\"meta\">\n", f);
    char buf[128];
    if (info) {
        meta_row(f, "version", info->version ? info->version : NULL);
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)info->seed);
        meta_row(f, "seed", buf);
        meta_row(f, "mode", info->mode);
        meta_row(f, "machine ISA", info->cpu_isa);
        meta_row(f, "ISA levels run", info->isas);
        if (info->threads > 0) {
            snprintf(buf, sizeof buf, "%d", info->threads);
            meta_row(f, "threads", buf);
        }
        snprintf(buf, sizeof buf, "%.1f s", info->seconds);
        meta_row(f, "time", buf);
        meta_row(f, "command", info->command);
    }
    time_t now = time(NULL);
    struct tm *tm = gmtime(&now);
    if (tm && strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", tm)) meta_row(f, "generated", buf);
    snprintf(buf, sizeof buf, "%d", h->ops.n);
    meta_row(f, "operators", buf);
    fputs("</div>\n", f);
    fputs("<nav><a href=\"#failures\">failures</a> <a href=\"#cases\">cases</a> "
          "<a href=\"#plots\">error plots</a></nav>\n</header>\n",
          f);
}

static void write_failures(FILE *f, const ogc_html *h) {
    int n = 0;
    for (int i = 0; i < h->nrows; i++)
        n += h->rows[i].status == OGC_FAIL || h->rows[i].status == OGC_MISTRUSTED;
    fprintf(f, "<section id=\"failures\">\n<h2>Failures and mistrusted cases (%d)</h2>\n", n);
    if (n == 0) fputs("<p class=\"none\">None: every case passed or was skipped.</p>\n", f);
    for (int i = 0; i < h->nrows; i++) {
        const html_row *r = &h->rows[i];
        if (r->status != OGC_FAIL && r->status != OGC_MISTRUSTED) continue;
        const char *st = ogc_status_name(r->status);
        fprintf(f, "<div class=\"failure\" id=\"case-%d\">\n<h3><span class=\"st %s\">%s</span> ",
                i, st, st);
        html_text(f, h->ops.name[r->op]);
        fputc(' ', f), html_text(f, h->dtypes.name[r->dtype]);
        fputc(' ', f), html_text(f, h->isas.name[r->isa]);
        fputc(' ', f), html_text(f, h->layouts.name[r->layout]);
        fputs("</h3>\n<p class=\"diag\">", f);
        html_text(f, r->diagnosis ? r->diagnosis : "(no diagnosis)");
        fputs("</p>\n<p class=\"repro-label\">reproduce:</p><pre class=\"repro\">", f);
        html_text(f, r->repro ? r->repro : "");
        fprintf(f, "</pre>\n<div class=\"caseplots\" data-row=\"%d\"></div>\n</div>\n", i);
    }
    fputs("</section>\n", f);
}

int ogc_html_finish(ogc_html *h, const ogc_html_info *info, char *err, size_t errsize) {
    if (!h) return snprintf(err, errsize, "no report"), -1;
    if (h->oom) {
        snprintf(err, errsize, "out of memory while collecting the report for %s", h->path);
        ogc_html_discard(h);
        return -1;
    }
    FILE *f = h->f;
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>opgrad check report</title>\n<style>\n",
          f);
    fputs(ogc_html_css, f);
    fputs("</style>\n</head>\n<body>\n", f);
    write_summary(f, h, info);
    write_failures(f, h);
    fputs("<section id=\"cases\">\n<h2>Cases</h2>\n<div class=\"filters\" id=\"filters\"></div>\n"
          "<p class=\"shown\" id=\"shown\"></p>\n<table class=\"cases\" id=\"cases-table\">"
          "<thead></thead><tbody></tbody></table>\n<div class=\"pager\" id=\"pager\"></div>\n"
          "<noscript><p>The table of cases and the error plots are drawn by the page's inline "
          "script; the summary and the failures above are plain HTML.</p></noscript>\n"
          "</section>\n<section id=\"plots\">\n<h2>Error plots</h2>\n<p class=\"help\">Per "
          "operator and dtype, pooled over the ISA levels and layouts: the error of the forward "
          "output and of the gradients in ulps of the dtype against the input value x (a sample "
          "of at most 128 points: evenly spaced elements, which on the sweep layout cover the "
          "tested range, and the largest errors, colored by their share of the element's "
          "tolerance: <span class=\"dot ok\"></span> within half the tolerance, <span "
          "class=\"dot near\"></span> within it, <span class=\"dot bad\"></span> beyond it), "
          "and the histogram of the errors of every compared element. Errors of 0 are drawn "
          "below the axis; the x axis switches to a symmetric log scale when |x| spans decades."
          "</p>\n"
          "<div id=\"plot-list\"></div>\n</section>\n"
          "<script type=\"application/json\" id=\"opgrad-data\">",
          f);
    write_data(f, h, info);
    fputs("</script>\n<script>\n", f);
    fputs(ogc_html_js, f);
    fputs("</script>\n</body>\n</html>\n", f);
    bool bad = ferror(f) != 0;
    h->f = NULL;
    if (fclose(f) != 0) bad = true;
    if (bad) snprintf(err, errsize, "cannot write %s: %s", h->path, strerror(errno));
    ogc_html_discard(h);
    return bad ? -1 : 0;
}
