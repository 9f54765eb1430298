/* bench_mish - throughput of aclnnMish / aclnnMishBackward against a same-process bandwidth probe.
 *
 * For every (n, dtype, op, threads) configuration:
 *   - inputs are aclrtMalloc'ed and filled with uniform values in [-6, 6], the output is touched;
 *   - the executor is planned once and made repeatable (aclSetAclOpExecutorRepeatable); a "call"
 *     is one phase-2 launch on the NULL stream (synchronous), or with --stream one launch on an
 *     aclrtStream, the rep ending with aclrtSynchronizeStream;
 *   - calls are grouped in reps that last >= --min-ms; after a warm-up rep, --reps timed reps of
 *     the op alternate (in rotating order) with reps of two bandwidth probes that move the same
 *     bytes over the same buffers on the same number of threads: normal stores and
 *     non-temporal (NT) stores. Forward is compared with read-1-write-1 (y = f(x)), backward
 *     with read-2-write-1 (dx = f(dy, x));
 *   - GB/s counts the ideal traffic: forward 2 n es (read x, write y), backward 3 n es (read dy,
 *     read x, write dx), es = element size of the dtype; "frac" is the median over reps of
 *     (op GB/s) / (probe GB/s) of the adjacent reps;
 *   - CPU time used by other processes during the timed reps is read from /proc/stat; above
 *     --max-foreign CPUs the timed reps are repeated (--retries) and the quietest attempt kept;
 *   - the output is checked afterwards against a float64 evaluation at ~4k sampled indices.
 * Run with --help for the options. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_mish.h"
#include "aclnnop/aclnn_mish_backward.h"
#include "bwprobe.h"
#include "opgrad/opgrad.h"

enum { MAX_LIST = 16, MAX_REPS = 101, CHECK_SAMPLES = 4096 };

typedef struct dtype_info {
    const char *name;
    aclDataType acl;
    size_t size;
    double rtol, atol; // tolerance of the sampled float64 check
} dtype_info;

static const dtype_info DTYPES[] = {
    {"fp32", ACL_FLOAT, 4, 1e-5, 1e-5},
    {"bf16", ACL_BF16, 2, 1.0 / 128, 1e-5},
    {"fp16", ACL_FLOAT16, 2, 1.0 / 1024, 1e-5},
};
enum { NDTYPES = sizeof DTYPES / sizeof DTYPES[0] };

typedef enum { OP_FWD = 0, OP_BWD = 1 } op_kind;
static const char *const OP_NAMES[] = {"mish_fwd", "mish_bwd"};

typedef struct options {
    int64_t sizes[MAX_LIST];
    int nsizes;
    int dtypes[MAX_LIST];
    int ndtypes;
    int threads[MAX_LIST];
    int nthreads;
    bool ops[2];
    int reps;
    double min_ms;
    int retries;
    double max_foreign;
    const char *csv;
    int isa_cap; // -1: library default
    probe_isa probe;
    bool use_stream;
    bool check;
} options;

typedef struct result {
    op_kind op;
    const dtype_info *dt;
    int64_t n;
    int threads;
    long calls_per_rep;
    double s_med, s_min, s_max; // seconds per call
    double gbs;                 // op, from the median time
    double probe_gbs[2];        // [normal, NT], medians
    double frac[2];             // median of paired ratios
    double plan_us;             // GetWorkspaceSize + destroy
    double foreign, steal;      // CPUs used by other processes / stolen, during the timed reps
    int attempts;
    uint64_t workspace;
    int check_bad; // -1: not checked
    double check_maxrel;
} result;

// ------------------------------------------------------------------------------------------
// time, load, statistics

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double process_cpu_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct load_mark {
    double wall, own, busy, steal;
    bool ok;
} load_mark;

static load_mark load_now(void) {
    load_mark m = {now_s(), process_cpu_s(), 0, 0, false};
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return m;
    unsigned long long v[8] = {0};
    if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
               &v[5], &v[6], &v[7]) == 8) {
        double tick = (double)sysconf(_SC_CLK_TCK);
        m.busy = (double)(v[0] + v[1] + v[2] + v[5] + v[6]) / tick; // user nice system irq softirq
        m.steal = (double)v[7] / tick;
        m.ok = true;
    }
    fclose(f);
    return m;
}

// Average CPUs used by other processes (and stolen by the host) between two marks.
static void load_between(load_mark a, load_mark b, double *foreign, double *steal) {
    double wall = b.wall - a.wall;
    if (!a.ok || !b.ok || wall <= 0) {
        *foreign = *steal = -1;
        return;
    }
    double f = ((b.busy - a.busy) - (b.own - a.own)) / wall;
    *foreign = f > 0 ? f : 0;
    *steal = (b.steal - a.steal) / wall;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n) {
    double s[MAX_REPS];
    memcpy(s, v, (size_t)n * sizeof *v);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

static double min_of(const double *v, int n) {
    double m = v[0];
    for (int i = 1; i < n; i++) m = v[i] < m ? v[i] : m;
    return m;
}

static double max_of(const double *v, int n) {
    double m = v[0];
    for (int i = 1; i < n; i++) m = v[i] > m ? v[i] : m;
    return m;
}

// ------------------------------------------------------------------------------------------
// data: fill, decode, float64 reference

static uint16_t f32_to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); // quiet NaN
    u += 0x7fffu + ((u >> 16) & 1u);                                          // nearest even
    return (uint16_t)(u >> 16);
}

static float bf16_to_f32(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// Uniform values in [-6, 6], stored in the dtype.
static void fill_uniform(void *buf, const dtype_info *dt, int64_t n, uint64_t seed) {
    uint64_t s = seed;
    for (int64_t i = 0; i < n; i++) {
        float v = -6.0f + 12.0f * (float)(splitmix64(&s) >> 40) * 0x1p-24f;
        switch (dt->acl) {
        case ACL_BF16:
            ((uint16_t *)buf)[i] = f32_to_bf16(v);
            break;
        case ACL_FLOAT16:
            ((uint16_t *)buf)[i] = aclFloatToFloat16(v);
            break;
        default:
            ((float *)buf)[i] = v;
            break;
        }
    }
}

static double load_elem(const void *buf, const dtype_info *dt, int64_t i) {
    switch (dt->acl) {
    case ACL_BF16:
        return bf16_to_f32(((const uint16_t *)buf)[i]);
    case ACL_FLOAT16:
        return aclFloat16ToFloat(((const uint16_t *)buf)[i]);
    default:
        return ((const float *)buf)[i];
    }
}

static double softplus64(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }
static double mish64(double x) { return x * tanh(softplus64(x)); }
static double mish_grad64(double x) {
    double t = tanh(softplus64(x)), sig = 1.0 / (1.0 + exp(-x));
    return t + x * sig * (1.0 - t * t);
}

// Compares ~CHECK_SAMPLES outputs with float64; returns the number out of tolerance.
static int check_output(op_kind op, const dtype_info *dt, int64_t n, const void *x, const void *g,
                        const void *out, double *maxrel) {
    int bad = 0;
    *maxrel = 0;
    int64_t samples = n < CHECK_SAMPLES ? n : CHECK_SAMPLES;
    for (int64_t k = 0; k < samples; k++) {
        int64_t i = samples > 1 ? k * (n - 1) / (samples - 1) : 0; // first and last included
        double xv = load_elem(x, dt, i);
        double ref = op == OP_FWD ? mish64(xv) : load_elem(g, dt, i) * mish_grad64(xv);
        double got = load_elem(out, dt, i);
        double err = fabs(got - ref);
        if (!(err <= dt->rtol * fabs(ref) + dt->atol)) bad++;
        double rel = err / (fabs(ref) > 1e-3 ? fabs(ref) : 1e-3);
        if (!(rel <= *maxrel)) *maxrel = rel;
    }
    return bad;
}

// ------------------------------------------------------------------------------------------
// the operator under test

typedef struct bench_op {
    op_kind op;
    aclTensor *x, *g, *out;
    aclOpExecutor *exec;
    void *workspace;
    uint64_t workspace_size;
    aclrtStream stream;
} bench_op;

static void die_acl(const char *what, int status) {
    fprintf(stderr, "bench_mish: %s failed (%d): %s\n", what, status, aclGetRecentErrMsg());
    exit(2);
}

static aclnnStatus plan_op(bench_op *b, uint64_t *ws, aclOpExecutor **e) {
    return b->op == OP_FWD ? aclnnMishGetWorkspaceSize(b->x, b->out, ws, e)
                           : aclnnMishBackwardGetWorkspaceSize(b->g, b->x, b->out, ws, e);
}

__attribute__((noinline)) static void run_calls(bench_op *b, long calls) {
    for (long i = 0; i < calls; i++) {
        aclnnStatus st =
            b->op == OP_FWD
                ? aclnnMish(b->workspace, b->workspace_size, b->exec, b->stream)
                : aclnnMishBackward(b->workspace, b->workspace_size, b->exec, b->stream);
        if (st != ACLNN_SUCCESS) die_acl(OP_NAMES[b->op], st);
    }
    if (b->stream) {
        aclError st = aclrtSynchronizeStream(b->stream);
        if (st != ACL_SUCCESS) die_acl("aclrtSynchronizeStream", st);
    }
}

// ------------------------------------------------------------------------------------------
// one configuration

typedef struct buffers {
    void *x, *g, *out;
} buffers;

typedef struct probe_args {
    probe_pool *pool;
    probe_kind kind;
    const void *a, *b;
    void *c;
    size_t bytes;
} probe_args;

// What one timed block runs: `count` calls of the op, or `count` passes of a probe.
typedef struct runner {
    int which; // 0: the op, 1: probe with normal stores, 2: probe with NT stores
    bench_op *op;
    const probe_args *probe;
} runner;

/* Runs and times one block. */
__attribute__((noinline)) static double timed_block(const runner *r, long count) {
    double t0 = now_s();
    if (r->which == 0)
        run_calls(r->op, count);
    else
        probe_run(r->probe->pool, r->probe->kind, r->which == 2, r->probe->a, r->probe->b,
                  r->probe->c, r->probe->bytes, count);
    return now_s() - t0;
}

static result run_config(const options *o, op_kind op, const dtype_info *dt, int64_t n, int threads,
                         const buffers *buf, probe_pool *pool) {
    result r = {.op = op, .dt = dt, .n = n, .threads = threads, .check_bad = -1};
    if (opgrad_set_num_threads(threads) != 0) die_acl("opgrad_set_num_threads", -1);

    bench_op b = {.op = op};
    int64_t shape[1] = {n}, strides[1] = {1};
    b.x = aclCreateTensor(shape, 1, dt->acl, strides, 0, ACL_FORMAT_ND, shape, 1, buf->x);
    b.g = aclCreateTensor(shape, 1, dt->acl, strides, 0, ACL_FORMAT_ND, shape, 1, buf->g);
    b.out = aclCreateTensor(shape, 1, dt->acl, strides, 0, ACL_FORMAT_ND, shape, 1, buf->out);
    if (!b.x || !b.g || !b.out) die_acl("aclCreateTensor", -1);

    // Phase 1 cost (plan + destroy), then the executor used for timing.
    int nplans = 200;
    double t0 = now_s();
    for (int i = 0; i < nplans; i++) {
        uint64_t ws;
        aclOpExecutor *e;
        aclnnStatus st = plan_op(&b, &ws, &e);
        if (st != ACLNN_SUCCESS) die_acl("GetWorkspaceSize", st);
        aclDestroyAclOpExecutor(e);
    }
    r.plan_us = (now_s() - t0) / nplans * 1e6;
    aclnnStatus st = plan_op(&b, &b.workspace_size, &b.exec);
    if (st != ACLNN_SUCCESS) die_acl("GetWorkspaceSize", st);
    st = aclSetAclOpExecutorRepeatable(b.exec);
    if (st != ACLNN_SUCCESS) die_acl("aclSetAclOpExecutorRepeatable", st);
    r.workspace = b.workspace_size;
    if (b.workspace_size > 0) {
        aclError e = aclrtMalloc(&b.workspace, b.workspace_size, ACL_MEM_MALLOC_HUGE_FIRST);
        if (e != ACL_SUCCESS) die_acl("aclrtMalloc(workspace)", e);
        memset(b.workspace, 0, b.workspace_size);
    }
    if (o->use_stream) {
        aclError e = aclrtCreateStream(&b.stream);
        if (e != ACL_SUCCESS) die_acl("aclrtCreateStream", e);
    }

    size_t es = dt->size;
    double op_bytes = (double)n * (double)es * (op == OP_FWD ? 2 : 3);
    probe_args pa = {pool,
                     op == OP_FWD ? PROBE_RD1WR1 : PROBE_RD2WR1,
                     op == OP_FWD ? buf->x : buf->g,
                     buf->x,
                     buf->out,
                     (size_t)n * es};

    runner run[3] = {{0, &b, &pa}, {1, &b, &pa}, {2, &b, &pa}};
    long count[3]; // calls (op) or passes (probes) per block: a block lasts >= min_ms
    double min_s = o->min_ms * 1e-3;
    for (int k = 0; k < 3; k++) {
        timed_block(&run[k], 1); // warm-up call
        long c = 1;
        for (;;) {
            double elapsed = timed_block(&run[k], c);
            if (elapsed >= min_s || c >= (1L << 24)) break;
            double f = elapsed > 0 ? min_s * 1.15 / elapsed : 100;
            c = f > 100 ? c * 100 : (long)ceil((double)c * (f > 1.01 ? f : 2));
        }
        count[k] = c;
    }
    for (int k = 0; k < 3; k++) timed_block(&run[k], count[k]); // warm-up block of each
    r.calls_per_rep = count[0];

    int reps = o->reps;
    double best_foreign = INFINITY;
    for (int attempt = 0; attempt <= o->retries; attempt++) {
        double op_s[MAX_REPS], pr_gbs[2][MAX_REPS], ratio[2][MAX_REPS];
        load_mark m0 = load_now();
        for (int rep = 0; rep < reps; rep++) {
            for (int k = 0; k < 3; k++) {
                int which = (k + rep) % 3; // rotate the order: op, probe normal, probe NT
                double per = timed_block(&run[which], count[which]) / (double)count[which];
                if (which == 0)
                    op_s[rep] = per;
                else
                    pr_gbs[which - 1][rep] = op_bytes / per / 1e9;
            }
            double op_gbs = op_bytes / op_s[rep] / 1e9;
            for (int p = 0; p < 2; p++) ratio[p][rep] = op_gbs / pr_gbs[p][rep];
        }
        load_mark m1 = load_now();
        double foreign, steal;
        load_between(m0, m1, &foreign, &steal);
        if (attempt == 0 || foreign < best_foreign) {
            best_foreign = foreign;
            r.foreign = foreign;
            r.steal = steal;
            r.attempts = attempt + 1;
            r.s_med = median(op_s, reps);
            r.s_min = min_of(op_s, reps);
            r.s_max = max_of(op_s, reps);
            r.gbs = op_bytes / r.s_med / 1e9;
            for (int p = 0; p < 2; p++) {
                r.probe_gbs[p] = median(pr_gbs[p], reps);
                r.frac[p] = median(ratio[p], reps);
            }
        }
        // /proc/stat counts 10 ms ticks: too coarse to judge windows much shorter than 0.2 s.
        if (foreign < 0 || foreign <= o->max_foreign || m1.wall - m0.wall < 0.2) break;
        if (attempt < o->retries)
            fprintf(stderr, "# %s %s n=%lld t=%d: foreign load %.2f CPU, repeating\n", OP_NAMES[op],
                    dt->name, (long long)n, threads, foreign);
    }

    if (o->check) {
        timed_block(&run[0], 1); // the probes overwrote the output
        r.check_bad = check_output(op, dt, n, buf->x, buf->g, buf->out, &r.check_maxrel);
    }

    if (b.stream) aclrtDestroyStream(b.stream);
    aclDestroyAclOpExecutor(b.exec);
    if (b.workspace) aclrtFree(b.workspace);
    aclDestroyTensor(b.x);
    aclDestroyTensor(b.g);
    aclDestroyTensor(b.out);
    return r;
}

// ------------------------------------------------------------------------------------------
// output

static void size_label(int64_t n, char *s, size_t cap) {
    int k = 0;
    while (k < 62 && ((int64_t)1 << k) < n) k++;
    if (((int64_t)1 << k) == n)
        snprintf(s, cap, "2^%d", k);
    else
        snprintf(s, cap, "%lld", (long long)n);
}

static void print_header(void) {
    printf("%-9s %-5s %5s %3s %10s %21s %7s %8s %8s %6s %6s %7s %7s %5s\n", "op", "dtype", "n",
           "thr", "ms/call", "[min - max]", "GB/s", "probe", "probeNT", "frac", "fracNT", "plan_us",
           "foreign", "check");
    printf("%-9s %-5s %5s %3s %10s %21s %7s %8s %8s %6s %6s %7s %7s %5s\n", "", "", "", "", "", "",
           "", "GB/s", "GB/s", "", "", "", "CPU", "");
}

static void print_row(const result *r) {
    char nl[32], range[48], chk[16];
    size_label(r->n, nl, sizeof nl);
    snprintf(range, sizeof range, "[%.4g - %.4g]", r->s_min * 1e3, r->s_max * 1e3);
    if (r->check_bad < 0)
        snprintf(chk, sizeof chk, "-");
    else if (r->check_bad == 0)
        snprintf(chk, sizeof chk, "ok");
    else
        snprintf(chk, sizeof chk, "BAD%d", r->check_bad);
    printf("%-9s %-5s %5s %3d %10.4g %21s %7.2f %8.2f %8.2f %6.3f %6.3f %7.2f %7.2f %5s\n",
           OP_NAMES[r->op], r->dt->name, nl, r->threads, r->s_med * 1e3, range, r->gbs,
           r->probe_gbs[0], r->probe_gbs[1], r->frac[0], r->frac[1], r->plan_us, r->foreign, chk);
    fflush(stdout);
}

static void csv_header(FILE *f) {
    fprintf(f, "op,dtype,n,threads,isa,probe_isa,ms_med,ms_min,ms_max,calls_per_rep,gbs,"
               "probe_gbs,probe_nt_gbs,frac,frac_nt,plan_us,workspace_bytes,foreign_cpu,steal_cpu,"
               "attempts,check_bad,check_maxrel\n");
}

static void csv_row(FILE *f, const result *r) {
    fprintf(f,
            "%s,%s,%lld,%d,%s,%s,%.6g,%.6g,%.6g,%ld,%.4f,%.4f,%.4f,%.4f,%.4f,%.3f,%llu,%.3f,%.3f,%"
            "d,%d,%.3g\n",
            OP_NAMES[r->op], r->dt->name, (long long)r->n, r->threads,
            opgrad_isa_name(opgrad_active_isa()), probe_isa_name(probe_set_isa(PROBE_ISA_AUTO)),
            r->s_med * 1e3, r->s_min * 1e3, r->s_max * 1e3, r->calls_per_rep, r->gbs,
            r->probe_gbs[0], r->probe_gbs[1], r->frac[0], r->frac[1], r->plan_us,
            (unsigned long long)r->workspace, r->foreign, r->steal, r->attempts, r->check_bad,
            r->check_maxrel);
    fflush(f);
}

static void cpu_model(char *s, size_t cap) {
    snprintf(s, cap, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *p = strchr(line, ':');
            if (p) {
                p++;
                while (*p == ' ') p++;
                p[strcspn(p, "\n")] = 0;
                snprintf(s, cap, "%s", p);
            }
            break;
        }
    }
    fclose(f);
}

// ------------------------------------------------------------------------------------------
// options

static void usage(FILE *f) {
    fprintf(f,
            "usage: bench_mish [options]\n"
            "  --quick            CI smoke: sizes 16,20, reps 3, min-ms 5, no retries (explicit\n"
            "                     options win)\n"
            "  --sizes=LIST       log2 of the element counts (<= 40) or element counts "
            "(default 16,20,24,26)\n"
            "  --dtypes=LIST      fp32,bf16,fp16 (default all)\n"
            "  --threads=LIST     thread counts (default 1,2)\n"
            "  --ops=LIST         fwd,bwd (default both)\n"
            "  --reps=N           timed reps per measurement (default 7, max %d)\n"
            "  --min-ms=X         minimum duration of one rep in ms (default 20)\n"
            "  --retries=N        repeats when other processes were busy (default 2)\n"
            "  --max-foreign=X    CPUs of foreign load tolerated (default 0.15)\n"
            "  --csv=FILE         also write the results as CSV\n"
            "  --isa=NAME         cap opgrad's kernels: scalar|avx2|avx512\n"
            "  --probe-isa=NAME   probe vector width: c|sse2|avx2|avx512 (default: widest)\n"
            "  --stream           launch on an aclrtStream (+ synchronize per rep) instead of\n"
            "                     the NULL (synchronous) stream\n"
            "  --no-check         skip the float64 output check\n",
            MAX_REPS);
}

static int parse_list(const char *s, char items[][32], int cap) {
    int n = 0;
    while (*s && n < cap) {
        size_t len = strcspn(s, ",");
        if (len > 0 && len < 32) {
            memcpy(items[n], s, len);
            items[n][len] = 0;
            n++;
        }
        s += len;
        if (*s == ',') s++;
    }
    return n;
}

static bool parse_options(int argc, char **argv, options *o) {
    *o = (options){.sizes = {16, 20, 24, 26},
                   .nsizes = 4,
                   .dtypes = {0, 1, 2},
                   .ndtypes = 3,
                   .threads = {1, 2},
                   .nthreads = 2,
                   .ops = {true, true},
                   .reps = 7,
                   .min_ms = 20,
                   .retries = 2,
                   .max_foreign = 0.15,
                   .isa_cap = -1,
                   .probe = PROBE_ISA_AUTO,
                   .check = true};
    for (int i = 0; i < o->nsizes; i++) o->sizes[i] = (int64_t)1 << o->sizes[i];
    for (int i = 1; i < argc; i++) // --quick sets defaults; explicit options win wherever they are
        if (!strcmp(argv[i], "--quick")) {
            o->sizes[0] = 1 << 16, o->sizes[1] = 1 << 20, o->nsizes = 2;
            o->reps = 3, o->min_ms = 5, o->retries = 0;
        }
    for (int i = 1; i < argc; i++) {
        char name[64];
        const char *arg = argv[i], *val = NULL;
        if (strncmp(arg, "--", 2) != 0) goto bad;
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        if (len >= sizeof name) goto bad;
        memcpy(name, arg, len);
        name[len] = 0;
        bool flag = !strcmp(name, "--quick") || !strcmp(name, "--stream") ||
                    !strcmp(name, "--no-check") || !strcmp(name, "--help");
        if (!flag) {
            if (eq)
                val = eq + 1;
            else if (i + 1 < argc)
                val = argv[++i];
            else
                goto bad;
        }
        char items[MAX_LIST][32];
        if (!strcmp(name, "--help")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(name, "--quick")) {
            // applied above
        } else if (!strcmp(name, "--stream")) {
            o->use_stream = true;
        } else if (!strcmp(name, "--no-check")) {
            o->check = false;
        } else if (!strcmp(name, "--sizes")) {
            o->nsizes = parse_list(val, items, MAX_LIST);
            for (int k = 0; k < o->nsizes; k++) {
                long long v = atoll(items[k]);
                if (v <= 0) goto bad;
                o->sizes[k] = v <= 40 ? (int64_t)1 << v : (int64_t)v;
            }
            if (o->nsizes == 0) goto bad;
        } else if (!strcmp(name, "--dtypes")) {
            int m = parse_list(val, items, MAX_LIST);
            o->ndtypes = 0;
            for (int k = 0; k < m; k++) {
                int d = -1;
                for (int j = 0; j < NDTYPES; j++)
                    if (!strcmp(items[k], DTYPES[j].name)) d = j;
                if (d < 0) goto bad;
                o->dtypes[o->ndtypes++] = d;
            }
            if (o->ndtypes == 0) goto bad;
        } else if (!strcmp(name, "--threads")) {
            o->nthreads = parse_list(val, items, MAX_LIST);
            for (int k = 0; k < o->nthreads; k++)
                if ((o->threads[k] = atoi(items[k])) < 1) goto bad;
            if (o->nthreads == 0) goto bad;
        } else if (!strcmp(name, "--ops")) {
            int m = parse_list(val, items, MAX_LIST);
            o->ops[0] = o->ops[1] = false;
            for (int k = 0; k < m; k++) {
                if (!strcmp(items[k], "fwd"))
                    o->ops[OP_FWD] = true;
                else if (!strcmp(items[k], "bwd"))
                    o->ops[OP_BWD] = true;
                else
                    goto bad;
            }
        } else if (!strcmp(name, "--reps")) {
            o->reps = atoi(val);
            if (o->reps < 1 || o->reps > MAX_REPS) goto bad;
        } else if (!strcmp(name, "--min-ms")) {
            o->min_ms = atof(val);
            if (!(o->min_ms >= 0)) goto bad;
        } else if (!strcmp(name, "--retries")) {
            o->retries = atoi(val);
            if (o->retries < 0) goto bad;
        } else if (!strcmp(name, "--max-foreign")) {
            o->max_foreign = atof(val);
        } else if (!strcmp(name, "--csv")) {
            o->csv = val;
        } else if (!strcmp(name, "--isa")) {
            if (!strcmp(val, "scalar"))
                o->isa_cap = OPGRAD_ISA_SCALAR;
            else if (!strcmp(val, "avx2"))
                o->isa_cap = OPGRAD_ISA_AVX2;
            else if (!strcmp(val, "avx512"))
                o->isa_cap = OPGRAD_ISA_AVX512;
            else
                goto bad;
        } else if (!strcmp(name, "--probe-isa")) {
            if (!strcmp(val, "c"))
                o->probe = PROBE_ISA_C;
            else if (!strcmp(val, "sse2"))
                o->probe = PROBE_ISA_SSE2;
            else if (!strcmp(val, "avx2"))
                o->probe = PROBE_ISA_AVX2;
            else if (!strcmp(val, "avx512"))
                o->probe = PROBE_ISA_AVX512;
            else
                goto bad;
        } else {
            goto bad;
        }
        continue;
    bad:
        fprintf(stderr, "bench_mish: bad argument '%s'\n", argv[i]);
        usage(stderr);
        return false;
    }
    return true;
}

// ------------------------------------------------------------------------------------------

int main(int argc, char **argv) {
    options o;
    if (!parse_options(argc, argv, &o)) return 2;
    aclError e = aclInit(NULL);
    if (e != ACL_SUCCESS) die_acl("aclInit", e);
    if ((e = aclrtSetDevice(0)) != ACL_SUCCESS) die_acl("aclrtSetDevice", e);
    if (o.isa_cap >= 0) opgrad_set_max_isa((opgrad_isa)o.isa_cap);
    probe_isa pisa = probe_set_isa(o.probe);

    FILE *csv = NULL;
    if (o.csv) {
        csv = fopen(o.csv, "w");
        if (!csv) {
            perror(o.csv);
            return 2;
        }
        csv_header(csv);
    }

    char model[256];
    cpu_model(model, sizeof model);
    const char *ntb = getenv("OPGRAD_NT_BYTES");
    printf("# bench_mish: opgrad %s, kernels %s (cpu %s), probe %s, %ld online CPUs: %s\n",
           opgrad_version(), opgrad_isa_name(opgrad_active_isa()),
           opgrad_isa_name(opgrad_cpu_isa()), probe_isa_name(pisa), sysconf(_SC_NPROCESSORS_ONLN),
           model);
    printf("# reps %d x >= %.0f ms, %s stream, NT CopyOut above %s bytes of output; "
           "frac = op GB/s / probe GB/s (median of adjacent pairs); probe = same buffers, same "
           "bytes, %s; GB/s counts fwd 2*n*es, bwd 3*n*es\n",
           o.reps, o.min_ms, o.use_stream ? "an aclrtStream" : "the NULL (synchronous)",
           ntb ? ntb : "16777216 (default)", "fwd rd1wr1 / bwd rd2wr1");
    print_header();

    result all[4 * MAX_LIST * MAX_LIST];
    int nres = 0;
    probe_pool *pools[MAX_LIST] = {0};
    for (int ti = 0; ti < o.nthreads; ti++) {
        pools[ti] = probe_pool_create(o.threads[ti]);
        if (!pools[ti]) {
            fprintf(stderr, "bench_mish: cannot start %d probe threads\n", o.threads[ti]);
            return 2;
        }
    }

    int failures = 0;
    for (int si = 0; si < o.nsizes; si++) {
        int64_t n = o.sizes[si];
        for (int di = 0; di < o.ndtypes; di++) {
            const dtype_info *dt = &DTYPES[o.dtypes[di]];
            size_t bytes = (size_t)n * dt->size;
            buffers buf = {0};
            if (aclrtMalloc(&buf.x, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
                aclrtMalloc(&buf.g, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
                aclrtMalloc(&buf.out, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
                die_acl("aclrtMalloc", -1);
            fill_uniform(buf.x, dt, n, 0x1234u + (uint64_t)n);
            fill_uniform(buf.g, dt, n, 0x9876u + (uint64_t)n);
            memset(buf.out, 0, bytes); // touch every output page before timing
            for (int op = 0; op < 2; op++) {
                if (!o.ops[op]) continue;
                for (int ti = 0; ti < o.nthreads; ti++) {
                    result r = run_config(&o, (op_kind)op, dt, n, o.threads[ti], &buf, pools[ti]);
                    print_row(&r);
                    if (csv) csv_row(csv, &r);
                    if (r.check_bad > 0) failures++;
                    if (nres < (int)(sizeof all / sizeof all[0])) all[nres++] = r;
                }
            }
            aclrtFree(buf.x);
            aclrtFree(buf.g);
            aclrtFree(buf.out);
        }
    }
    for (int ti = 0; ti < o.nthreads; ti++) probe_pool_destroy(pools[ti]);

    // Summary: the bandwidth target at DRAM sizes (>= 2^24 elements), fp32, 2 threads.
    bool any = false;
    for (int i = 0; i < nres; i++) {
        const result *r = &all[i];
        if (r->n < ((int64_t)1 << 24) || r->dt->acl != ACL_FLOAT || r->threads != 2) continue;
        if (!any) printf("\n# target: >= 0.85 of the faster probe at n >= 2^24, fp32, 2 threads\n");
        any = true;
        char nl[32];
        size_label(r->n, nl, sizeof nl);
        double worst = r->frac[0] < r->frac[1] ? r->frac[0] : r->frac[1];
        printf("#   %s fp32 n=%s: frac %.3f (normal-store probe), %.3f (NT probe) -> %s\n",
               OP_NAMES[r->op], nl, r->frac[0], r->frac[1], worst >= 0.85 ? "MET" : "not met");
    }
    if (failures) printf("# %d configuration(s) FAILED the float64 output check\n", failures);
    if (csv) fclose(csv);
    aclrtResetDevice(0);
    aclFinalize();
    return failures ? 1 : 0;
}
