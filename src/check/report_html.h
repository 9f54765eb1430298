/* The HTML report of `opgrad check --html FILE` (docs/check-report.md): one self-contained file
 * (inline CSS, JavaScript and data; nothing fetched) with the summary, a filterable and sortable
 * table of every case, each failure's diagnosis and reproducer, and per-operator error plots
 * (ulp error against x per dtype, for the forward output and the gradients, and error
 * histograms) drawn as inline SVG from the samples the checker records (check.h: ogc_samples).
 *
 *   ogc_html *h = ogc_html_open(path, err, sizeof err);   // fails early on a bad path
 *   for each case: ogc_check_case(..., &opt with .samples, &r); ogc_html_add(h, &r, samples);
 *   ogc_html_finish(h, &info, err, sizeof err);           // writes, closes, frees */
#ifndef OG_CHECK_REPORT_HTML_H
#define OG_CHECK_REPORT_HTML_H

#include <stddef.h>
#include <stdint.h>

#include "check/check.h"

typedef struct ogc_html ogc_html;

/// What the report's summary says about the run (any string may be NULL: left out).
typedef struct ogc_html_info {
    const char *version; // opgrad's
    const char *cpu_isa; // the machine's best ISA level
    const char *isas;    // the ISA levels the kernels ran at, e.g. "scalar, avx2"
    const char *mode;    // "fast" or "full"
    const char *command; // the command line
    uint64_t seed;
    int threads;
    double seconds; // the run's wall time
} ogc_html_info;

/// Creates `path` (so that a path that cannot be written fails before any case runs). NULL, with
/// the reason in err, when it cannot.
ogc_html *ogc_html_open(const char *path, char *err, size_t errsize);
/// Adds one case: its report and the per-element errors the checker recorded for it (NULL or
/// empty: none, as for the float64 formula check). Samples are pooled per (operator, dtype) for
/// the plots; a failing or mistrusted case keeps its own (the first 64 such cases).
void ogc_html_add(ogc_html *h, const ogc_report *r, const ogc_samples *s);
/// Writes the report, closes the file and frees h. Returns 0, or -1 with the reason in err.
int ogc_html_finish(ogc_html *h, const ogc_html_info *info, char *err, size_t errsize);
/// Frees h without writing a report (the file stays as created: empty).
void ogc_html_discard(ogc_html *h);

/// The page's stylesheet and script (report_html_assets.c).
extern const char ogc_html_css[];
extern const char ogc_html_js[];

#endif
