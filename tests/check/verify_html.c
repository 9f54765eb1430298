/* verify_html REPORT.html [--json CHECK.json] [--min-plots N] [--failures N]
 *
 * Checks an `opgrad check --html` report (html_verify.h: well formed, self-contained, its data
 * parses) and, given the --json output of the same run, that the report has a row for every
 * case the JSON lists (and no other non-skipped case); --min-plots: at least N (operator,
 * dtype) plots with sampled points; --failures: exactly N failing or mistrusted cases, each
 * with its diagnosis and reproducer in the failures section. Exit 0 when all hold, else 1. */
#include "html_verify.h"

static int fail(const char *what) {
    fprintf(stderr, "verify_html: %s\n", what);
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 2) return fail("usage: verify_html REPORT.html [--json F] [--min-plots N]");
    const char *json_path = NULL;
    int min_plots = 0, failures = -1;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--json"))
            json_path = argv[i + 1];
        else if (!strcmp(argv[i], "--min-plots"))
            min_plots = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--failures"))
            failures = atoi(argv[i + 1]);
        else
            return fail("unknown option");
    }
    html_report r;
    if (!html_report_load(&r, argv[1])) return fail(r.error);
    int rc = 0;
    if (json_path) {
        size_t len;
        char *text = hr_read_file(json_path, &len);
        if (!text) return fail("cannot read the --json file");
        hj_parser ps = {text, text + len, false};
        hj *cases = hj_value(&ps, 0);
        if (ps.bad || !cases || cases->type != HJ_ARR)
            return fail("the --json file does not parse");
        for (int i = 0; i < cases->n; i++) {
            const hj *c = cases->item[i];
            const char *dt = hj_get(c, "dtype")->str;
            if (!strcmp(dt, "float64-formula")) dt = "f64-ref";
            if (html_find_row(&r, hj_get(c, "op")->str, dt, hj_get(c, "isa")->str,
                              hj_get(c, "layout")->str, hj_get(c, "status")->str) < 0) {
                fprintf(stderr, "verify_html: no row for %s %s %s %s\n", hj_get(c, "op")->str, dt,
                        hj_get(c, "isa")->str, hj_get(c, "layout")->str);
                rc = 1;
            }
        }
        if (r.rows - r.counts[3] != cases->n) {
            fprintf(stderr, "verify_html: %d non-skipped rows, the JSON has %d cases\n",
                    r.rows - r.counts[3], cases->n);
            rc = 1;
        }
        hj_free(cases);
        free(text);
    }
    if (r.plots < min_plots || (min_plots > 0 && r.points == 0)) {
        fprintf(stderr, "verify_html: %d plots (%d points), want at least %d\n", r.plots, r.points,
                min_plots);
        rc = 1;
    }
    if (failures >= 0) {
        int n = r.counts[1] + r.counts[2], shown = 0;
        for (const char *p = r.text; (p = strstr(p, "<div class=\"failure\"")); p++) shown++;
        if (n != failures || shown != failures) {
            fprintf(stderr, "verify_html: %d failing rows, %d in the failures section, want %d\n",
                    n, shown, failures);
            rc = 1;
        }
        const hj *rows = hj_get(r.data, "rows");
        for (int i = 0; i < rows->n; i++) {
            const hj *row = rows->item[i];
            int st = (int)row->item[4]->num;
            if (st != 1 && st != 2) continue;
            char *diag = row->n == 15 ? html_escaped(row->item[13]->str) : NULL;
            char *repro = row->n == 15 ? html_escaped(row->item[14]->str) : NULL;
            if (!diag || !strstr(r.text, diag) || !strstr(r.text, repro)) {
                fprintf(stderr, "verify_html: row %d: diagnosis or reproducer missing\n", i);
                rc = 1;
            }
            free(diag);
            free(repro);
        }
    }
    printf("verify_html: %s: %zu bytes, %d cases (%d passed, %d failed, %d mistrusted, %d "
           "skipped), %d plots with %d points, %d failing cases with samples: %s\n",
           argv[1], r.len, r.rows, r.counts[0], r.counts[1], r.counts[2], r.counts[3], r.plots,
           r.points, r.cases, rc ? "FAILED" : "ok");
    html_report_free(&r);
    return rc;
}
