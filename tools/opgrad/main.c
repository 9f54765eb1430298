/* The `opgrad` command.
 *
 *   opgrad check [--op NAME...] [--dtype LIST] [--layout LIST] [--isa LIST] [--mode full|fast]
 *                [--seed N] [--json FILE] [--html FILE] [--list]
 *                      the gradient-consistency checker over the registered operators (check.h),
 *                      at every ISA level the CPU has unless --isa says otherwise; --html writes
 *                      the self-contained HTML report (check/report_html.h)
 *   opgrad check --custom SPEC.json [...]
 *                      the custom-operator checker (custom/custom_check.h, docs/custom-ops.md)
 *   opgrad info        version, CPU ISA, active ISA, threads
 *   opgrad selfcheck   Mish / MishBackward through the public aclnn API, on every ISA this CPU
 *                      has and in fp32 / fp16 / bf16, against the float64 references; prints the
 *                      max error in ulps and exits non-zero when a bound is exceeded. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_mish.h"
#include "aclnnop/aclnn_mish_backward.h"
#include "check/check.h"
#include "check/compare.h"
#include "check/reference.h"
#include "check/report_html.h"
#include "custom/custom_check.h"
#include "opgrad/opgrad.h"
#include "tensor/dtype.h"

static int cmd_info(void) {
    printf("opgrad %s\n", opgrad_version());
    printf("cpu isa:    %s\n", opgrad_isa_name(opgrad_cpu_isa()));
    printf("active isa: %s (cap with OPGRAD_ISA=scalar|avx2|avx512|avx512bf16|avx512fp16|amx)\n",
           opgrad_isa_name(opgrad_active_isa()));
    printf("threads:    %d (OPGRAD_NUM_THREADS)\n", opgrad_get_num_threads());
    printf("winograd:   %s (OPGRAD_WINOGRAD=0 turns it off)\n",
           opgrad_get_winograd() ? "on" : "off");
    printf("convolution algorithms, picked per shape when an executor is planned (each executor's\n"
           "choice: opgrad_executor_algorithm()):\n"
           "  direct depthwise     groups = input channels, 1-D or 2-D\n"
           "  winograd F(4x4,3x3)  3x3 stride 1 dilation 1 fp32, 8+ channels per group, 64+ tiles\n"
           "                       (the forward and gradInput), unless switched off\n"
           "  GEMM + col2im        gradInput (transposed: the output) at stride > 1 or with\n"
           "                       fewer than 8 input channels per group\n"
           "  GEMM (1x1)           1x1 stride 1 unpadded, 96+ positions: plain matrices\n"
           "  implicit GEMM        the rest (im2col packed on the fly, no buffer; images\n"
           "                       folded into one product below 96 positions)\n");
    return 0;
}

enum { N = 4096 };

// ulps of dt between got and the exact value ref.
static double ulps(aclDataType dt, double got, double ref) {
    if (isnan(ref) || isnan(got)) return isnan(ref) && isnan(got) ? 0 : INFINITY;
    if (isinf(ref) || isinf(got)) return got == ref ? 0 : INFINITY;
    int mant = dt == ACL_FLOAT16 ? 10 : dt == ACL_BF16 ? 7 : 23;
    int emin = dt == ACL_FLOAT16 ? -14 : -126, e;
    frexp(ref, &e);
    int ex = ref == 0 || e - 1 < emin ? emin : e - 1;
    return fabs(got - ref) / ldexp(1.0, ex - mant);
}

typedef struct result {
    double fwd, bwd;
    int status;
} result;

static result run_case(opgrad_isa isa, aclDataType dt) {
    static float xs[N * 2], gs[N * 2], ys[N * 2], ds[N * 2]; // storage for any dtype
    result r = {0, 0, 0};
    opgrad_set_max_isa(isa);
    // x: a dense grid over [-20, 20] plus special values; grad: varied signs and scales.
    static const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, 1e-30, -1e-30, -90, 90};
    for (int i = 0; i < N; i++) {
        double x = i < 8 ? specials[i] : -20.0 + 40.0 * i / N;
        ogc_store(xs, i, dt, x);
        ogc_store(gs, i, dt, (i % 7 - 3) * 0.75);
    }
    int64_t shape[1] = {N};
    aclTensor *x = aclCreateTensor(shape, 1, dt, NULL, 0, ACL_FORMAT_ND, shape, 1, xs);
    aclTensor *g = aclCreateTensor(shape, 1, dt, NULL, 0, ACL_FORMAT_ND, shape, 1, gs);
    aclTensor *y = aclCreateTensor(shape, 1, dt, NULL, 0, ACL_FORMAT_ND, shape, 1, ys);
    aclTensor *d = aclCreateTensor(shape, 1, dt, NULL, 0, ACL_FORMAT_ND, shape, 1, ds);
    uint64_t ws;
    aclOpExecutor *ex;
    void *work = NULL;
    r.status = aclnnMishGetWorkspaceSize(x, y, &ws, &ex);
    if (!r.status && ws) r.status = aclrtMalloc(&work, ws, ACL_MEM_MALLOC_HUGE_FIRST);
    if (!r.status) r.status = aclnnMish(work, ws, ex, NULL);
    if (work) aclrtFree(work), work = NULL;
    if (!r.status) r.status = aclnnMishBackwardGetWorkspaceSize(g, x, d, &ws, &ex);
    if (!r.status && ws) r.status = aclrtMalloc(&work, ws, ACL_MEM_MALLOC_HUGE_FIRST);
    if (!r.status) r.status = aclnnMishBackward(work, ws, ex, NULL);
    if (work) aclrtFree(work);
    for (int i = 0; !r.status && i < N; i++) {
        double xv = ogc_load(xs, i, dt), gv = ogc_load(gs, i, dt);
        double uf = ulps(dt, ogc_load(ys, i, dt), og_ref_mish(xv));
        double ref_b = gv * og_ref_mish_grad(xv);
        // Near the root of mish' (x ~ -1.19) fp32 errors are measured against the magnitude of
        // the terms that cancel there, in ulps of that magnitude.
        double mag = fabs(gv) * (fabs(og_ref_mish_tanhx(xv)) + fabs(xv) * og_ref_sigmoid(xv));
        double ub = ulps(dt, ogc_load(ds, i, dt), ref_b);
        if (dt == ACL_FLOAT && xv > -1.4 && xv < -1.0)
            ub = fmin(ub, ulps(dt, ogc_load(ds, i, dt) - ref_b + mag, mag));
        if (uf > r.fwd) r.fwd = uf;
        if (ub > r.bwd) r.bwd = ub;
    }
    aclDestroyTensor(x);
    aclDestroyTensor(g);
    aclDestroyTensor(y);
    aclDestroyTensor(d);
    return r;
}

static int cmd_selfcheck(void) {
    static const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    int failures = 0;
    opgrad_isa cap = opgrad_active_isa();
    printf("%-8s %-9s %-14s %-14s %s\n", "isa", "dtype", "mish max ulp", "grad max ulp", "status");
    for (int isa = OPGRAD_ISA_SCALAR; isa <= (int)cap; isa++) {
        for (int k = 0; k < 3; k++) {
            result r = run_case((opgrad_isa)isa, dts[k]);
            // Bounds: fp32 kernels are within a few ulp; 16-bit results are correctly rounded
            // fp32 values, so within 1 ulp of the exact result.
            double bound = dts[k] == ACL_FLOAT ? 8.0 : 1.0;
            bool ok = r.status == 0 && r.fwd <= bound && r.bwd <= bound;
            failures += !ok;
            printf("%-8s %-9s %-14.3f %-14.3f %s%s%s\n", opgrad_isa_name((opgrad_isa)isa),
                   og_dtype_name(dts[k]), r.fwd, r.bwd, ok ? "PASS" : "FAIL", r.status ? ": " : "",
                   r.status ? aclGetRecentErrMsg() : "");
        }
    }
    opgrad_set_max_isa(cap);
    printf(failures ? "selfcheck: %d FAILED\n" : "selfcheck: all passed\n", failures);
    return failures ? 1 : 0;
}

static void usage(void) {
    fprintf(stderr,
            "usage: opgrad check [--op NAME...] [--dtype LIST] [--layout LIST] [--isa LIST]\n"
            "                    [--mode full|fast] [--seed N] [--json FILE] [--html FILE]\n"
            "                    [--list]\n"
            "           --dtype LIST  float32, float16, bfloat16, float64 (the float64 kernels,\n"
            "                       where an operator has them), formula (the float64 reference\n"
            "                       formulas against finite differences); default all five\n"
            "           --isa LIST  ISA levels to run the kernels at (default all: every level\n"
            "                       this CPU has, up to OPGRAD_ISA; e.g. --isa scalar,avx2)\n"
            "           --html FILE a self-contained HTML report: summary, filterable table,\n"
            "                       failures with reproducers, per-operator error plots\n"
            "       opgrad check --custom SPEC.json [--library /ABS/lib.so] [--seed N]\n"
            "                    [--json FILE] [--in-process] [--timeout SECONDS]\n"
            "                    [--max-memory SIZE]\n"
            "           --timeout SECONDS  limit per kernel call and library load (default 20;\n"
            "                              a number > 0, fractions allowed: 0.5)\n"
            "           --max-memory SIZE  memory a kernel may add (RLIMIT_AS of its child):\n"
            "                              bytes or K, M, G, T (512M, 4G); default no limit\n"
            "       opgrad info\n"
            "       opgrad selfcheck\n");
}

// ---------------------------------------------------------------------------------------------
// opgrad check

typedef struct name_list {
    const char *items[64];
    int n;
} name_list;

// Adds the comma-separated names of `arg`; returns false when there are too many.
static bool add_names(name_list *l, char *arg) {
    for (char *tok = strtok(arg, ","); tok; tok = strtok(NULL, ",")) {
        if (l->n == 64) return false;
        l->items[l->n++] = tok;
    }
    return true;
}

// --dtype formula: the O1 check of the float64 reference formulas (no kernel runs); float64 is the
// float64 kernels' rows.
#define DT_FORMULA ((aclDataType)-2)

static bool parse_dtype(const char *s, aclDataType *dt) {
    if (!strcmp(s, "float32") || !strcmp(s, "fp32") || !strcmp(s, "f32"))
        *dt = ACL_FLOAT;
    else if (!strcmp(s, "float16") || !strcmp(s, "fp16") || !strcmp(s, "f16"))
        *dt = ACL_FLOAT16;
    else if (!strcmp(s, "bfloat16") || !strcmp(s, "bf16"))
        *dt = ACL_BF16;
    else if (!strcmp(s, "float64") || !strcmp(s, "fp64") || !strcmp(s, "f64"))
        *dt = ACL_DOUBLE;
    else if (!strcmp(s, "formula") || !strcmp(s, "f64-ref"))
        *dt = DT_FORMULA;
    else
        return false;
    return true;
}

static bool wanted(const name_list *l, const char *name) {
    if (l->n == 0) return true;
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->items[i], name)) return true;
    return false;
}

static void print_row(const ogc_report *r) {
    const char *dt = r->isa < 0 ? "f64-ref" : og_dtype_name(r->dtype);
    printf("%-12s %-9s %-10s %-11s %-10s %9.3g %9.3g %9.3g %8.3f %+8.3f %9.3g %9.3g\n", r->op, dt,
           r->isa < 0 ? "-" : opgrad_isa_name((opgrad_isa)r->isa), r->layout,
           ogc_status_name(r->status), r->max_abs, r->max_rel, r->max_ulp, r->mean_ulp, r->bias_ulp,
           r->mere, r->mare);
}

// --isa: comma-separated ISA names, or "all" (every level the CPU has, up to OPGRAD_ISA's cap).
static bool parse_isas(char *arg, bool *want, bool *all) {
    for (char *tok = strtok(arg, ","); tok; tok = strtok(NULL, ",")) {
        bool known = !strcmp(tok, "all");
        *all |= known;
        for (int i = 0; i < OPGRAD_ISA_COUNT; i++)
            if (!strcmp(tok, opgrad_isa_name((opgrad_isa)i))) want[i] = known = true;
        if (!known) {
            fprintf(stderr, "opgrad check: unknown --isa '%s' (all", tok);
            for (int i = 0; i < OPGRAD_ISA_COUNT; i++)
                fprintf(stderr, ", %s", opgrad_isa_name((opgrad_isa)i));
            fprintf(stderr, ")\n");
            return false;
        }
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// opgrad check --custom

typedef struct custom_sink {
    FILE *json;
    int counts[4];
    ogcc_row failures[32];
    int nfail;
} custom_sink;

// A JSON string: every byte that needs it escaped (the texts hold user-chosen names and paths,
// and kernel output).
static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

// A JSON number: NaN and infinities are not JSON numbers.
static void json_number(FILE *f, const char *key, double v) {
    fprintf(f, ",\"%s\":", key);
    if (isfinite(v))
        fprintf(f, "%.6g", v);
    else
        fputs("null", f);
}

// One row of --json: the fields of the operator checker's rows, plus the kernel output.
static void custom_row_json(FILE *f, const ogcc_row *row) {
    const ogc_report *r = &row->r;
    fputs("{\"op\":", f);
    json_string(f, r->op);
    fprintf(f, ",\"dtype\":\"%s\",\"layout\":",
            r->dtype == ACL_DOUBLE ? "float64" : og_dtype_name(r->dtype));
    json_string(f, row->label);
    fprintf(f, ",\"seed\":%llu,\"status\":\"%s\",\"compared\":%lld", (unsigned long long)r->seed,
            ogc_status_name(r->status), (long long)r->compared);
    json_number(f, "max_abs", r->max_abs);
    json_number(f, "max_rel", r->max_rel);
    json_number(f, "max_ulp", r->max_ulp);
    json_number(f, "mean_ulp", r->mean_ulp);
    json_number(f, "mere", r->mere);
    json_number(f, "mare", r->mare);
    fputs(",\"diagnosis\":", f);
    json_string(f, r->diagnosis);
    fputs(",\"repro\":", f);
    json_string(f, r->repro);
    fputs(",\"kernel_output\":", f);
    json_string(f, row->output);
    fprintf(f, ",\"kernel_output_bytes\":%llu}", (unsigned long long)row->output_bytes);
}

// What the kernels printed during a row's stage, under the row: at most 8 lines of 160
// characters, each behind "| ", so no kernel line can pass for a line of the report.
static void print_kernel_output(const ogcc_row *row) {
    if (!row->output_bytes) return;
    const char *p = row->output;
    int lines = 0;
    while (*p && lines < 8) {
        size_t len = strcspn(p, "\n");
        printf("          | %.*s%s\n", (int)(len < 160 ? len : 160), p, len > 160 ? "..." : "");
        p += len + (p[len] == '\n');
        lines++;
    }
    size_t shown = (size_t)(p - row->output);
    if (shown < row->output_bytes)
        printf("          | (kernel output: %llu bytes in all, the first %zu shown)\n",
               (unsigned long long)row->output_bytes, shown);
}

static void custom_row(const ogcc_row *row, void *user) {
    custom_sink *cs = user;
    const ogc_report *r = &row->r;
    cs->counts[r->status]++;
    bool dtype_known = strcmp(row->label, "spec") && strcmp(row->label, "load");
    printf("%-9s %-34s %-10s %9.3g %9.3g  %s\n",
           dtype_known ? (r->dtype == ACL_DOUBLE ? "float64" : og_dtype_name(r->dtype)) : "-",
           row->label, ogc_status_name(r->status), r->max_ulp, r->mere,
           r->status == OGC_PASS ? r->diagnosis : "");
    if (r->status == OGC_FAIL || r->status == OGC_MISTRUSTED) {
        printf("          -> %s\n", r->diagnosis);
        if (cs->nfail < 32) cs->failures[cs->nfail++] = *row;
    }
    print_kernel_output(row);
    fflush(stdout);
    if (cs->json) {
        fprintf(cs->json, "%s  ",
                cs->counts[0] + cs->counts[1] + cs->counts[2] + cs->counts[3] > 1 ? ",\n" : "");
        custom_row_json(cs->json, row);
    }
}

// A usage error of --custom: the option, the rule and what was given; exit status 2.
static int custom_usage_error(const char *fmt, const char *arg)
    __attribute__((format(printf, 1, 0)));
static int custom_usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "opgrad check --custom: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    usage();
    return 2;
}

static int cmd_check_custom(int argc, char **argv) {
    ogcc_options opt = {.seed = 1, .timeout_s = 20};
    const char *spec = NULL, *json_path = NULL;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        static const char *const with_value[] = {"--custom", "--library", "--seed",
                                                 "--json",   "--timeout", "--max-memory"};
        for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; k++)
            if (!strcmp(a, with_value[k]) && !has_value)
                return custom_usage_error("%s needs a value", a);
        if (!strcmp(a, "--custom"))
            spec = argv[++i];
        else if (!strcmp(a, "--library"))
            opt.library = argv[++i];
        else if (!strcmp(a, "--seed"))
            opt.seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(a, "--json"))
            json_path = argv[++i];
        else if (!strcmp(a, "--in-process"))
            opt.in_process = true;
        else if (!strcmp(a, "--timeout")) {
            if (!ogcc_parse_seconds(argv[++i], &opt.timeout_s))
                return custom_usage_error("--timeout takes a number of seconds greater than 0 "
                                          "and at most 86400, such as 20 or 0.5; not '%s'",
                                          argv[i]);
        } else if (!strcmp(a, "--max-memory")) {
            if (!ogcc_parse_size(argv[++i], &opt.max_memory))
                return custom_usage_error("--max-memory takes a size of at least 1M: bytes, or a "
                                          "number with K, M, G or T (binary units), such as 512M "
                                          "or 4G; not '%s'",
                                          argv[i]);
        } else
            return custom_usage_error("unknown option '%s'", a);
    }
    if (!spec) return custom_usage_error("%s", "no SPEC.json: give --custom SPEC.json");
    if (opt.in_process && opt.max_memory)
        return custom_usage_error("%s", "--max-memory limits the kernels' child processes; it "
                                        "cannot be combined with --in-process");
    custom_sink cs = {0};
    if (json_path && !(cs.json = fopen(json_path, "w")))
        return fprintf(stderr, "opgrad check: cannot write %s\n", json_path), 2;
    if (cs.json) fprintf(cs.json, "[\n");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char limits[96] = "";
    if (!opt.in_process && opt.max_memory)
        snprintf(limits, sizeof limits, " (timeout %g s, memory limit %.4g MiB)", opt.timeout_s,
                 (double)opt.max_memory / 0x1p20);
    else if (!opt.in_process)
        snprintf(limits, sizeof limits, " (timeout %g s)", opt.timeout_s);
    printf("opgrad check --custom %s: seed %llu, kernels %s%s\n\n", spec,
           (unsigned long long)opt.seed, opt.in_process ? "in this process" : "in child processes",
           limits);
    printf("%-9s %-34s %-10s %9s %9s  %s\n", "dtype", "stage", "status", "max_ulp", "MERE", "note");
    int fails = ogcc_check(spec, &opt, custom_row, &cs);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (cs.json) fprintf(cs.json, "\n]\n"), fclose(cs.json);
    if (cs.nfail) {
        printf("\nFailures:\n");
        for (int i = 0; i < cs.nfail; i++)
            printf("  %s %s %s: %s\n", ogc_status_name(cs.failures[i].r.status),
                   og_dtype_name(cs.failures[i].r.dtype), cs.failures[i].label,
                   cs.failures[i].r.diagnosis);
    }
    printf("\n%d passed, %d failed, %d mistrusted, %d skipped in %.1f s\n", cs.counts[OGC_PASS],
           cs.counts[OGC_FAIL], cs.counts[OGC_MISTRUSTED], cs.counts[OGC_SKIPPED],
           (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    return fails ? 1 : 0;
}

// Writes the --html report with the run's summary; 0, or 2 (with the reason on stderr).
static int write_html(ogc_html *html, const char *path, const char *command, const ogc_options *opt,
                      const int *isas, int nisa, double seconds) {
    char isa_list[160] = "", err[512];
    for (int i = 0; i < nisa; i++)
        snprintf(isa_list + strlen(isa_list), sizeof isa_list - strlen(isa_list), "%s%s",
                 i ? ", " : "", opgrad_isa_name((opgrad_isa)isas[i]));
    ogc_html_info info = {.version = opgrad_version(),
                          .cpu_isa = opgrad_isa_name(opgrad_cpu_isa()),
                          .isas = isa_list,
                          .mode = opt->mode == OGC_MODE_FULL ? "full" : "fast",
                          .command = command,
                          .seed = opt->seed,
                          .threads = opgrad_get_num_threads(),
                          .seconds = seconds};
    if (ogc_html_finish(html, &info, err, sizeof err) != 0)
        return fprintf(stderr, "opgrad check: --html: %s\n", err), 2;
    printf("HTML report: %s\n", path);
    return 0;
}

static int cmd_check(int argc, char **argv) {
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--custom")) return cmd_check_custom(argc, argv);
    name_list ops = {0}, dtypes = {0}, layouts = {0};
    ogc_options opt = {.mode = OGC_MODE_FAST, .seed = 1};
    char command[1024] = "opgrad"; // for the HTML report (before strtok cuts the lists)
    for (int i = 1; i < argc; i++)
        snprintf(command + strlen(command), sizeof command - strlen(command), " %s", argv[i]);
    bool want_isa[OPGRAD_ISA_COUNT] = {0}, all_isas = true;
    const char *json_path = NULL, *html_path = NULL;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (!strcmp(a, "--list")) {
            // name, what it runs, and the rule its results are held to
            for (int k = 0; k < ogc_registry_count(); k++) {
                const ogc_op *op = ogc_registry_get(k);
                int rf = op->fwd_roundings16 > 0 ? op->fwd_roundings16 : 1;
                int rb = op->bwd_roundings16 > 0 ? op->bwd_roundings16 : 1;
                printf("%-17s %s%s\n%17s   rule: fp32 within %g ulp; 16-bit ", op->name, op->api,
                       op->forward_inplace ? " (+ in-place form)" : "", "", op->fp32_ulps);
                if (rf == 1 && rb == 1)
                    printf("correctly rounded from fp32\n");
                else
                    printf("rounded %d (forward) / %d (backward) times from fp32\n", rf, rb);
            }
            return 0;
        } else if (!strcmp(a, "--op") && has_value) {
            while (i + 1 < argc && argv[i + 1][0] != '-')
                if (!add_names(&ops, argv[++i])) return 2;
        } else if (!strcmp(a, "--dtype") && has_value) {
            if (!add_names(&dtypes, argv[++i])) return 2;
        } else if (!strcmp(a, "--layout") && has_value) {
            if (!add_names(&layouts, argv[++i])) return 2;
        } else if (!strcmp(a, "--isa") && has_value) {
            all_isas = false;
            if (!parse_isas(argv[++i], want_isa, &all_isas)) return 2;
        } else if (!strcmp(a, "--mode") && has_value) {
            a = argv[++i];
            if (!strcmp(a, "full"))
                opt.mode = OGC_MODE_FULL;
            else if (!strcmp(a, "fast"))
                opt.mode = OGC_MODE_FAST;
            else
                return fprintf(stderr, "opgrad check: --mode is full or fast, not '%s'\n", a), 2;
        } else if (!strcmp(a, "--seed") && has_value) {
            opt.seed = strtoull(argv[++i], NULL, 0);
        } else if (!strcmp(a, "--json") && has_value) {
            json_path = argv[++i];
        } else if (!strcmp(a, "--html") && has_value) {
            html_path = argv[++i];
            if (!html_path[0])
                return fprintf(stderr, "opgrad check: --html needs a file name\n"), 2;
        } else if (!strcmp(a, "--html")) {
            return fprintf(stderr, "opgrad check: --html needs a file name\n"), 2;
        } else {
            usage();
            return 2;
        }
    }
    for (int i = 0; i < ops.n; i++)
        if (!ogc_registry_find(ops.items[i]))
            return fprintf(stderr, "opgrad check: no operator '%s' (see opgrad check --list)\n",
                           ops.items[i]),
                   2;
    aclDataType dts[8];
    int ndt = 0;
    if (dtypes.n == 0) {
        dts[ndt++] = DT_FORMULA, dts[ndt++] = ACL_FLOAT, dts[ndt++] = ACL_FLOAT16,
        dts[ndt++] = ACL_BF16, dts[ndt++] = ACL_DOUBLE;
    }
    for (int i = 0; i < dtypes.n && ndt < 8; i++)
        if (!parse_dtype(dtypes.items[i], &dts[ndt++]))
            return fprintf(stderr,
                           "opgrad check: unknown dtype '%s' (float32, float16, bfloat16, float64, "
                           "formula)\n",
                           dtypes.items[i]),
                   2;
    for (int i = 0; i < layouts.n; i++) {
        bool known = false;
        for (int k = 0; k < ogc_layout_count(); k++)
            known |= !strcmp(ogc_layout_name(k), layouts.items[i]);
        if (!known)
            return fprintf(stderr, "opgrad check: unknown layout '%s'\n", layouts.items[i]), 2;
    }
    // The ISA levels: by default every level this CPU runs, up to the cap (OPGRAD_ISA), so that
    // a bug in any dispatch path fails the default run.
    opgrad_isa top = opgrad_active_isa();
    int isas[OPGRAD_ISA_COUNT], nisa = 0;
    for (int i = 0; i <= (int)top; i++)
        if (all_isas || want_isa[i]) isas[nisa++] = i;
    for (int i = (int)top + 1; i < OPGRAD_ISA_COUNT; i++)
        if (want_isa[i])
            return fprintf(stderr, "opgrad check: --isa %s: this CPU (or OPGRAD_ISA) stops at %s\n",
                           opgrad_isa_name((opgrad_isa)i), opgrad_isa_name(top)),
                   2;
    if (nisa == 0) return fprintf(stderr, "opgrad check: no ISA level to run\n"), 2;
    // the HTML report: its file is created now, so that a bad path fails before any case runs;
    // the checker records per-element error samples only for it
    ogc_html *html = NULL;
    ogc_samples *samples = NULL;
    if (html_path) {
        char err[512];
        if (!(html = ogc_html_open(html_path, err, sizeof err)))
            return fprintf(stderr, "opgrad check: --html: %s\n", err), 2;
        if (!(samples = calloc(1, sizeof *samples))) {
            ogc_html_discard(html);
            return fprintf(stderr, "opgrad check: --html: out of memory\n"), 2;
        }
        opt.samples = samples;
    }
    FILE *json = NULL;
    if (json_path && !(json = fopen(json_path, "w"))) {
        ogc_html_discard(html);
        free(samples);
        return fprintf(stderr, "opgrad check: cannot write %s\n", json_path), 2;
    }

    int total = 0;
    for (int o = 0; o < ogc_registry_count(); o++)
        if (wanted(&ops, ogc_registry_get(o)->name))
            for (int d = 0; d < ndt; d++)
                total += (dts[d] == DT_FORMULA ? 1 : nisa) * ogc_layout_count();
    bool tty = isatty(2);
    int done = 0, counts[4] = {0};
    ogc_report *failures = calloc((size_t)total + 1, sizeof *failures);
    int nfail = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    printf("opgrad check: seed %llu, mode %s, isa", (unsigned long long)opt.seed,
           opt.mode == OGC_MODE_FULL ? "full" : "fast");
    for (int i = 0; i < nisa; i++)
        printf("%s %s", i ? "," : "", opgrad_isa_name((opgrad_isa)isas[i]));
    printf(", %d thread(s)\n\n", opgrad_get_num_threads());
    printf("%-12s %-9s %-10s %-11s %-10s %9s %9s %9s %8s %8s %9s %9s\n", "op", "dtype", "isa",
           "layout", "status", "max_abs", "max_rel", "max_ulp", "mean_ulp", "bias_ulp", "MERE",
           "MARE");
    if (json) fprintf(json, "[\n");
    bool first_json = true;
    for (int o = 0; o < ogc_registry_count(); o++) {
        const ogc_op *op = ogc_registry_get(o);
        if (!wanted(&ops, op->name)) continue;
        int fail_by_dtype[8] = {0}, fail_by_isa[OPGRAD_ISA_COUNT] = {0};
        for (int d = 0; d < ndt; d++) {
            bool formula = dts[d] == DT_FORMULA;
            for (int v = 0; v < (formula ? 1 : nisa); v++) {
                if (!formula) opgrad_set_max_isa((opgrad_isa)isas[v]);
                for (int l = 0; l < ogc_layout_count(); l++) {
                    const char *layout = ogc_layout_name(l);
                    done++;
                    if (!wanted(&layouts, layout)) continue;
                    if (tty)
                        fprintf(stderr, "\r[%d/%d] %s %s %s %s ...\033[K", done, total, op->name,
                                formula ? "f64-ref" : og_dtype_name(dts[d]),
                                formula ? "-" : opgrad_isa_name((opgrad_isa)isas[v]), layout);
                    ogc_report r;
                    if (formula)
                        ogc_check_formula(op, layout, &opt, &r);
                    else
                        ogc_check_case(op, dts[d], layout, &opt, &r);
                    if (tty) fprintf(stderr, "\r\033[K");
                    if (r.status == OGC_SKIPPED &&
                        (!strncmp(r.diagnosis, "layout does not apply", 21) ||
                         !strncmp(r.diagnosis, "forward-only", 12)))
                        continue; // e.g. broadcast layouts of a one-input operator
                    counts[r.status]++;
                    if (html) ogc_html_add(html, &r, samples);
                    if (r.status == OGC_SKIPPED) continue;
                    print_row(&r);
                    if (r.status == OGC_FAIL || r.status == OGC_MISTRUSTED) failures[nfail++] = r;
                    if (r.status == OGC_FAIL) {
                        fail_by_dtype[d]++;
                        if (!formula) fail_by_isa[isas[v]]++;
                    }
                    if (json) {
                        fprintf(json, "%s  ", first_json ? "" : ",\n");
                        ogc_report_json(json, &r);
                        first_json = false;
                    }
                }
            }
        }
        opgrad_set_max_isa(top);
        // Where an operator fails in one dtype or at one ISA level only, say so: the cause is in
        // that path (a conversion, one ISA's kernel), not in the formula.
        int failing = 0, which = -1;
        for (int d = 0; d < ndt; d++)
            if (fail_by_dtype[d]) failing++, which = d;
        if (failing == 1 && ndt > 1)
            printf("%-12s note: fails only in %s; the other dtypes pass\n", op->name,
                   dts[which] == DT_FORMULA ? "the float64 formula check"
                                            : og_dtype_name(dts[which]));
        failing = 0;
        for (int v = 0; v < nisa; v++)
            if (fail_by_isa[isas[v]]) failing++, which = isas[v];
        if (failing == 1 && nisa > 1)
            printf("%-12s note: fails only at isa %s; the other ISA levels pass\n", op->name,
                   opgrad_isa_name((opgrad_isa)which));
    }
    if (json) fprintf(json, "\n]\n"), fclose(json);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (nfail) {
        printf("\nFailures and mistrusted cases:\n");
        for (int i = 0; i < nfail; i++)
            printf("  %s %s %s %s %s: %s\n    reproduce: %s\n", ogc_status_name(failures[i].status),
                   failures[i].op,
                   failures[i].isa < 0 ? "f64-ref" : og_dtype_name(failures[i].dtype),
                   failures[i].isa < 0 ? "-" : opgrad_isa_name((opgrad_isa)failures[i].isa),
                   failures[i].layout, failures[i].diagnosis, failures[i].repro);
    }
    double seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("\n%d passed, %d failed, %d mistrusted, %d skipped in %.1f s\n", counts[OGC_PASS],
           counts[OGC_FAIL], counts[OGC_MISTRUSTED], counts[OGC_SKIPPED], seconds);
    free(failures);
    free(samples);
    if (html && write_html(html, html_path, command, &opt, isas, nisa, seconds) != 0) return 2;
    return counts[OGC_FAIL] ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage();
        return 2;
    }
    if (!strcmp(argv[1], "check")) return cmd_check(argc, argv);
    if (!strcmp(argv[1], "info")) return cmd_info();
    if (!strcmp(argv[1], "selfcheck")) return cmd_selfcheck();
    usage();
    return 2;
}
