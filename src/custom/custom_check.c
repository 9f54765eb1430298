/* The custom-operator checker (custom_check.h). */
#include "custom/custom_check.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "acl/acl.h"
#include "check/compare.h"
#include "check/rng.h"
#include "custom/expr.h"
#include "custom/runner.h"
#include "custom/spec.h"
#include "tensor/tensor.h"

enum { MAX_IN = OGS_MAX_IN, MAX_OUT = OGS_MAX_OUT };
static const unsigned char POISON[2] = {0xA5, 0x5A};
_Static_assert(OGCC_OUTPUT_MAX == OGR_OUTPUT_MAX, "a row keeps what a call keeps");

typedef struct checker {
    ogs_spec spec;
    const ogcc_options *opt;
    ogr_env env;            // how kernels run (isolated: the library is loaded in each child)
    opgrad_custom_lib *lib; // in-process mode only
    ogx_expr *expr;
    ogcc_sink sink;
    void *user;
    int fails;
    // kernel output since the last row, for the next row
    char output[OGCC_OUTPUT_MAX + 1];
    uint64_t output_bytes;
} checker;

/// One (dtype, size binding) of the spec.
typedef struct kase {
    checker *ck;
    const ogs_spec *s;
    aclDataType dt;
    int b;
    char bind[80];
    ogc_shape in[MAX_IN], out[MAX_OUT], grad[MAX_IN];
    double *x[MAX_IN];     // input values, quantized to their dtype
    void *ybytes[MAX_OUT]; // ... and their bytes, passed to the backward as is
    size_t tail;           // canary bytes after every buffer
    uint64_t seed;
} kase;

static int64_t numel(const ogc_shape *s) {
    int64_t n = 1;
    for (int d = 0; d < s->ndim; d++) n *= s->dims[d];
    return n;
}

static const char *shape_str(const ogc_shape *s, char *buf, int size) {
    return og_shape_str(s->dims, s->ndim, buf, size);
}

static void emit(checker *ck, const kase *k, aclDataType dt, const char *stage, ogc_status st,
                 const ogc_stats *stats, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
static void emit(checker *ck, const kase *k, aclDataType dt, const char *stage, ogc_status st,
                 const ogc_stats *stats, const char *fmt, ...) {
    ogcc_row row;
    memset(&row, 0, sizeof row);
    snprintf(row.label, sizeof row.label, "%s%s%s", stage, k && k->bind[0] ? " " : "",
             k ? k->bind : "");
    row.r.op = ck->spec.name[0] ? ck->spec.name : "custom";
    row.r.dtype = dt;
    row.r.layout = row.label;
    row.r.seed = ck->opt->seed;
    row.r.status = st;
    if (stats && stats->compared) {
        row.r.max_abs = stats->max_abs, row.r.max_rel = stats->max_rel;
        row.r.max_ulp = stats->max_ulp, row.r.mean_ulp = stats->sum_ulp / (double)stats->compared;
        row.r.mere = stats->sum_re / (double)stats->compared, row.r.mare = stats->max_re;
        row.r.compared = stats->compared;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(row.r.diagnosis, sizeof row.r.diagnosis, fmt, ap);
    va_end(ap);
    snprintf(row.r.repro, sizeof row.r.repro, "opgrad check --custom %.200s --seed %llu",
             ck->spec.path, (unsigned long long)ck->opt->seed);
    // the output of the kernel calls this row's stage made
    memcpy(row.output, ck->output, sizeof row.output);
    row.output_bytes = ck->output_bytes;
    ck->output[0] = 0, ck->output_bytes = 0;
    if (st == OGC_FAIL) ck->fails++;
    ck->sink(&row, ck->user);
}

// Adds a call's output to what the next row shows (the first OGCC_OUTPUT_MAX bytes).
static void collect_output(checker *ck, const ogr_outcome *o) {
    size_t len = strlen(ck->output);
    snprintf(ck->output + len, sizeof ck->output - len, "%s", o->output);
    ck->output_bytes += o->output_bytes;
}

// A custom kernel's 16-bit results may be computed in 16-bit: they are held to the 1-ulp rule, not
// to "rounded once from fp32" (the built-in operators' rule).
static ogc_rule custom_rule(const ogs_spec *s) {
    return (ogc_rule){.fp32_ulps = s->tolerance_ulps};
}

// ---------------------------------------------------------------------------------------------
// Kernel calls

static void put_values(ogr_call *c, int i, const double *v) {
    int64_t n = numel(&c->p[i].shape);
    for (int64_t e = 0; e < n; e++) ogc_store(c->p[i].data, e, c->p[i].dtype, v[e]);
}

static void get_values(const ogr_call *c, int i, double *v) {
    int64_t n = numel(&c->p[i].shape);
    for (int64_t e = 0; e < n; e++) v[e] = ogc_load(c->p[i].data, e, c->p[i].dtype);
}

// Saves a crashing call's inputs (raw bytes + a description) for a reproduction outside.
static void save_crash(const kase *k, const ogr_call *c, int ninputs, const char *const *names,
                       char *dir, size_t size) {
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, size, "%s/opgrad-crash-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        snprintf(dir, size, "(could not save the inputs: %s)", strerror(errno));
        return;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/inputs.txt", dir);
    FILE *txt = fopen(path, "w");
    for (int i = 0; i < ninputs; i++) {
        char sh[128];
        snprintf(path, sizeof path, "%s/%s.%s.bin", dir, names[i], ogs_dtype_str(c->p[i].dtype));
        FILE *f = fopen(path, "wb");
        if (f) fwrite(c->p[i].data, 1, c->p[i].bytes, f), fclose(f);
        if (txt)
            fprintf(txt, "%s %s %s %s.%s.bin\n", names[i], ogs_dtype_str(c->p[i].dtype),
                    shape_str(&c->p[i].shape, sh, sizeof sh), names[i],
                    ogs_dtype_str(c->p[i].dtype));
    }
    if (txt)
        fprintf(txt, "op %s, sizes %s, seed %llu\n", k->s->name, k->bind,
                (unsigned long long)k->ck->opt->seed),
            fclose(txt);
}

static void run(kase *k, ogr_call *c, const char *symbol, opgrad_aot_fn fn, void *extra,
                ogr_outcome *o) {
    ogr_run(c, &k->ck->env, symbol, fn, extra, o);
    collect_output(k->ck, o);
}

// How the call was made, for a kernel that returned nonzero: the aot ABI's nparam and every
// param's name, dtype and shape, as the spec implies them (a kernel that checks nparam or a
// shape and refuses must be shown what it was given).
static void abi_str(const kase *k, const ogr_call *c, const char *const *names, char *buf,
                    size_t size) {
    const ogs_spec *s = k->s;
    int len;
    if (c->n == s->nin + s->nout)
        len = snprintf(buf, size,
                       "It was called with nparam = %d, as the spec implies for MindSpore's aot "
                       "ABI (%d inputs, then %d output%s): ",
                       c->n, s->nin, s->nout, s->nout == 1 ? "" : "s");
    else
        len = snprintf(buf, size,
                       "It was called with nparam = %d, as the spec implies for MindSpore's aot "
                       "bprop ABI (inputs, outputs, output gradients, then one gradient per "
                       "input: 2*%d + 2*%d): ",
                       c->n, s->nin, s->nout);
    for (int i = 0; i < c->n && len >= 0 && (size_t)len < size; i++) {
        char sh[128];
        len += snprintf(buf + len, size - (size_t)len, "%s%s %s %s", i ? ", " : "", names[i],
                        ogs_dtype_str(c->p[i].dtype), shape_str(&c->p[i].shape, sh, sizeof sh));
    }
}

// Did the call fail outright? Then emit the row (with saved inputs for a crash) and say so.
// names: every param's name (the first ninputs are the call's inputs).
static bool call_failed(kase *k, ogr_call *c, const ogr_outcome *o, const char *stage,
                        const char *what, int ninputs, const char *const *names) {
    char why[600];
    ogr_outcome_str(o, why, sizeof why);
    if (!why[0]) return false;
    if (o->signal || o->timed_out || o->memory) {
        char dir[4096];
        save_crash(k, c, ninputs, names, dir, sizeof dir);
        emit(k->ck, k, k->dt, stage, OGC_FAIL, NULL,
             "the %s %s; the checker went on. Inputs saved in %s", what, why, dir);
    } else if (o->rc != 0 && !o->lost && !o->load_failed && !o->not_run) {
        char abi[1024];
        abi_str(k, c, names, abi, sizeof abi);
        emit(k->ck, k, k->dt, stage, OGC_FAIL, NULL, "the %s returned %d (nonzero: it failed). %s",
             what, o->rc, abi);
    } else {
        emit(k->ck, k, k->dt, stage, OGC_FAIL, NULL, "the %s %s", what, why);
    }
    return true;
}

// Element e of param i untouched in both runs (still the poison byte of each run)?
static bool unwritten(const unsigned char *run0, const unsigned char *run1, size_t es, int64_t e) {
    for (size_t b = 0; b < es; b++)
        if (run0[e * (int64_t)es + (int64_t)b] != POISON[0] ||
            run1[e * (int64_t)es + (int64_t)b] != POISON[1])
            return false;
    return true;
}

typedef struct written {
    int64_t missing, first_missing;
    bool half_written; // exactly the first half of the bytes written
    size_t overrun;    // canary bytes overwritten
    bool nondeterministic;
    int64_t first_diff;
} written;

// Runs a call twice with different poison in its outputs [first, c->n) and keeps run 0's bytes
// in `keep` (per output). Returns false (row emitted) when a call failed.
static bool run_twice(kase *k, ogr_call *c, int first, const char *symbol, opgrad_aot_fn fn,
                      void *extra, const char *stage, const char *what, const char *const *names,
                      unsigned char **keep, written *w) {
    memset(w, 0, sizeof(written) * (size_t)(c->n - first));
    for (int r = 0; r < 2; r++) {
        for (int i = first; i < c->n; i++) ogr_poison(c, i, POISON[r]);
        ogr_outcome o;
        run(k, c, symbol, fn, extra, &o);
        if (call_failed(k, c, &o, stage, what, first, names)) return false;
        for (int i = first; i < c->n; i++) {
            written *wi = &w[i - first];
            size_t ov = ogr_overrun(c, i);
            if (ov > wi->overrun) wi->overrun = ov;
            if (r == 0) {
                memcpy(keep[i - first], c->p[i].data, c->p[i].bytes);
                continue;
            }
            size_t es = aclDataTypeSize(c->p[i].dtype);
            int64_t n = numel(&c->p[i].shape);
            const unsigned char *a = keep[i - first], *b = c->p[i].data;
            wi->first_missing = wi->first_diff = -1;
            for (int64_t e = 0; e < n; e++) {
                if (unwritten(a, b, es, e)) {
                    if (wi->missing++ == 0) wi->first_missing = e;
                } else if (memcmp(a + e * (int64_t)es, b + e * (int64_t)es, es) != 0) {
                    // NaNs with different payloads are still "the same result"
                    double va = ogc_load(a, e, c->p[i].dtype), vb = ogc_load(b, e, c->p[i].dtype);
                    if (!(isnan(va) && isnan(vb)) && !wi->nondeterministic)
                        wi->nondeterministic = true, wi->first_diff = e;
                }
            }
            // a 2-byte dtype written into a 4-byte output: the first half of the bytes written,
            // the second half untouched
            if (es == 4 && n >= 2) {
                size_t half = c->p[i].bytes / 2;
                bool lo = true, hi = true;
                for (size_t q = 0; q < c->p[i].bytes; q++) {
                    bool untouched = a[q] == POISON[0] && b[q] == POISON[1];
                    if (q < half)
                        lo &= !untouched;
                    else
                        hi &= untouched;
                }
                wi->half_written = lo && hi;
            }
        }
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// Reference

// Reference values of the outputs at the case's inputs: the expression (output 0) or the
// float64 reference symbol (every output). ref[j] NULL: no reference for output j.
static bool reference(kase *k, double **ref, double **mag, int64_t *terms, char *err, size_t size) {
    const ogs_spec *s = k->s;
    checker *ck = k->ck;
    for (int j = 0; j < s->nout; j++) ref[j] = mag[j] = NULL, terms[j] = 1;
    if (ck->expr) {
        ogc_shape rs;
        if (!ogx_shape(ck->expr, k->in, &rs, err, size)) return false;
        if (!ogc_shape_equal(&rs, &k->out[0])) {
            char a[128], b[128];
            snprintf(err, size,
                     "output '%s' is declared %s but the reference expression gives %s: the "
                     "declared out_shape is wrong (or the reference is)",
                     s->out[0].name, shape_str(&k->out[0], a, sizeof a),
                     shape_str(&rs, b, sizeof b));
            return false;
        }
        int64_t n = numel(&rs);
        ref[0] = malloc((size_t)(n ? n : 1) * sizeof(double));
        mag[0] = malloc((size_t)(n ? n : 1) * sizeof(double));
        const double *xs[MAX_IN];
        for (int i = 0; i < s->nin; i++) xs[i] = k->x[i];
        if (!ref[0] || !mag[0]) return snprintf(err, size, "out of memory"), false;
        return ogx_eval(ck->expr, k->in, xs, ref[0], mag[0], &terms[0], err, size);
    }
    if (!s->reference_symbol[0]) return true;
    aclDataType dts[MAX_IN + MAX_OUT];
    ogc_shape shapes[MAX_IN + MAX_OUT];
    for (int i = 0; i < s->nin; i++) dts[i] = ACL_DOUBLE, shapes[i] = k->in[i];
    for (int j = 0; j < s->nout; j++) dts[s->nin + j] = ACL_DOUBLE, shapes[s->nin + j] = k->out[j];
    ogr_call c;
    if (!ogr_alloc(&c, s->nin + s->nout, dts, shapes, k->tail))
        return snprintf(err, size, "out of memory"), false;
    for (int i = 0; i < s->nin; i++) put_values(&c, i, k->x[i]);
    ogr_outcome o;
    run(k, &c, s->reference_symbol, NULL, NULL, &o);
    char why[400];
    ogr_outcome_str(&o, why, sizeof why);
    bool ok = !why[0];
    if (!ok) snprintf(err, size, "the reference symbol '%s' %s", s->reference_symbol, why);
    for (int j = 0; ok && j < s->nout; j++) {
        int64_t n = numel(&k->out[j]);
        ref[j] = malloc((size_t)(n ? n : 1) * sizeof(double));
        if (!ref[j]) {
            ok = false;
            break;
        }
        get_values(&c, s->nin + j, ref[j]);
    }
    ogr_free(&c);
    return ok;
}

// The named diagnosis of a failed comparison of `what` (got: n values of dtype dt against ref),
// before the generic ones of ogc_describe_mismatch: a result that is identically zero, and a
// sign flip, whatever the size (a one-element result has no "pattern" to fit). Returns the
// constant factor the generic diagnosis used (NaN: none), for the mean-instead-of-sum hint.
static double describe_mismatch(const ogs_spec *s, char *msg, size_t size, const char *what,
                                aclDataType dt, const void *got, const double *ref,
                                const double *mag, int64_t terms, int64_t n, ogc_stats *st) {
    bool zero = n > 0;
    int64_t big = 0;
    for (int64_t e = 0; e < n; e++) {
        zero &= ogc_load(got, e, dt) == 0;
        if (fabs(ref[e]) > fabs(ref[big])) big = e;
    }
    if (zero) {
        snprintf(msg, size,
                 "%s is identically zero (all %lld elements are 0; the reference is not: %.9g at "
                 "element %lld): the kernel writes zeros instead of the values, or multiplies by "
                 "a zero",
                 what, (long long)n, ref[big], (long long)big);
        return NAN;
    }
    double *neg = calloc(n > 0 ? (size_t)n : 1, sizeof(double));
    if (neg) {
        for (int64_t e = 0; e < n; e++) neg[e] = -ref[e];
        ogc_stats sn = {0};
        ogc_compare(custom_rule(s), dt, got, neg, mag, terms, n, &sn);
        free(neg);
        if (!sn.bad) {
            char where[64] = "";
            if (n > 1) snprintf(where, sizeof where, " at all %lld elements", (long long)n);
            snprintf(msg, size,
                     "%s has the wrong sign: sign flipped (it is -1 x the reference%s; first: got "
                     "%.9g, want %.9g)",
                     what, where, st->first_got, st->first_want);
            return NAN;
        }
    }
    double alpha = ogc_factor_fit(custom_rule(s), dt, got, ref, mag, terms, n, st);
    ogc_describe_mismatch(msg, size, what, st, alpha, n, dt, custom_rule(s));
    return alpha;
}

// ---------------------------------------------------------------------------------------------
// Stage: forward

// The reference expression's shape for output j when it differs from the declared one: false
// when they agree or nothing says (no expression, or not output 0).
static bool reference_shape_differs(const kase *k, int j, ogc_shape *rs) {
    char err[256];
    return k->ck->expr && j == 0 && ogx_shape(k->ck->expr, k->in, rs, err, sizeof err) &&
           !ogc_shape_equal(rs, &k->out[0]);
}

static void free_list(double **p, int n) {
    for (int i = 0; i < n; i++) free(p[i]), p[i] = NULL;
}

static bool stage_forward(kase *k) {
    const ogs_spec *s = k->s;
    const char *names[MAX_IN + MAX_OUT];
    aclDataType dts[MAX_IN + MAX_OUT];
    ogc_shape shapes[MAX_IN + MAX_OUT];
    for (int i = 0; i < s->nin; i++)
        names[i] = s->in[i].name, dts[i] = ogs_dtype(&s->in[i], k->dt), shapes[i] = k->in[i];
    for (int j = 0; j < s->nout; j++)
        names[s->nin + j] = s->out[j].name, dts[s->nin + j] = ogs_dtype(&s->out[j], k->dt),
                       shapes[s->nin + j] = k->out[j];
    ogr_call c;
    if (!ogr_alloc(&c, s->nin + s->nout, dts, shapes, k->tail)) {
        emit(k->ck, k, k->dt, "forward", OGC_FAIL, NULL, "out of memory laying out the call");
        return false;
    }
    for (int i = 0; i < s->nin; i++) put_values(&c, i, k->x[i]);
    written w[MAX_OUT];
    unsigned char *keep[MAX_OUT];
    for (int j = 0; j < s->nout; j++) keep[j] = k->ybytes[j];
    bool ok = run_twice(k, &c, s->nin, s->forward, NULL, NULL, "forward", "forward kernel", names,
                        keep, w);
    double *ref[MAX_OUT] = {0}, *mag[MAX_OUT] = {0};
    int64_t terms[MAX_OUT];
    char err[512], a[128], b[128];
    ogc_shape rs;
    for (int j = 0; ok && j < s->nout; j++) {
        const ogr_param *p = &c.p[s->nin + j];
        size_t es = aclDataTypeSize(p->dtype);
        int64_t n = numel(&k->out[j]);
        if (w[j].overrun) {
            int64_t wrote = (int64_t)((p->bytes + w[j].overrun + es - 1) / es);
            emit(k->ck, k, k->dt, "forward", OGC_FAIL, NULL,
                 "the forward wrote past output '%s': declared %s (%lld elements of %s), writes "
                 "reached element %lld: the declared out_shape is smaller than what the kernel "
                 "writes",
                 s->out[j].name, shape_str(&k->out[j], a, sizeof a), (long long)n,
                 ogs_dtype_str(p->dtype), (long long)wrote - 1);
            ok = false;
        } else if ((w[j].half_written || w[j].missing) && reference_shape_differs(k, j, &rs)) {
            // only part written, and the reference says the output is smaller: the declaration
            // is wrong, whatever the byte pattern looks like
            emit(k->ck, k, k->dt, "forward", OGC_FAIL, NULL,
                 "output '%s' is declared %s (%lld elements) but the reference gives %s (%lld "
                 "elements); the kernel wrote only the first %lld%s. Declare the shape the kernel "
                 "writes",
                 s->out[j].name, shape_str(&k->out[j], a, sizeof a), (long long)n,
                 shape_str(&rs, b, sizeof b), (long long)numel(&rs),
                 (long long)(w[j].half_written ? n / 2 : n - w[j].missing),
                 numel(&rs) * 2 == n ? " (half: the declared size is twice the real one)" : "");
            ok = false;
        } else if (w[j].half_written) {
            // the same bytes as a declared shape twice the real one; the reference (above), when
            // there is one, tells them apart
            if (k->ck->expr)
                emit(k->ck, k, k->dt, "forward", OGC_FAIL, NULL,
                     "output '%s' is declared %s but the kernel wrote 2-byte values: only the "
                     "first half of its bytes were written (a float16/bfloat16 result stored into "
                     "a float32 output; declare out_dtype as the kernel writes it, or convert)",
                     s->out[j].name, ogs_dtype_str(p->dtype));
            else
                emit(k->ck, k, k->dt, "forward", OGC_FAIL, NULL,
                     "output '%s' is declared %s %s but only the first half of its bytes were "
                     "written: either 2-byte values (a float16/bfloat16 result stored into a "
                     "float32 output) or half as many elements as declared (the declared shape "
                     "is twice the real one); a \"reference\" in the spec tells which",
                     s->out[j].name, ogs_dtype_str(p->dtype), shape_str(&k->out[j], a, sizeof a));
            ok = false;
        } else if (w[j].missing) {
            emit(k->ck, k, k->dt, "forward", OGC_FAIL, NULL,
                 "%lld of %lld elements of output '%s' %s were never written (first: element "
                 "%lld)%s",
                 (long long)w[j].missing, (long long)n, s->out[j].name,
                 shape_str(&k->out[j], a, sizeof a), (long long)w[j].first_missing,
                 w[j].first_missing + w[j].missing == n && w[j].missing < n
                     ? ": the tail is missing (the declared shape is larger than what the kernel "
                       "writes, or a tail loop is missing)"
                     : "");
            ok = false;
        } else if (w[j].nondeterministic) {
            emit(k->ck, k, k->dt, "forward", OGC_FAIL, NULL,
                 "two runs on the same inputs gave different values for output '%s' (first at "
                 "element %lld): the kernel reads uninitialised memory or is nondeterministic",
                 s->out[j].name, (long long)w[j].first_diff);
            ok = false;
        }
    }
    if (ok && !reference(k, ref, mag, terms, err, sizeof err)) {
        emit(k->ck, k, k->dt, "forward", OGC_FAIL, NULL, "%s", err);
        ok = false;
    }
    if (ok) {
        ogc_stats st = {0};
        int compared = 0;
        for (int j = 0; ok && j < s->nout; j++) {
            if (!ref[j]) continue;
            int64_t n = numel(&k->out[j]);
            aclDataType odt = ogs_dtype(&s->out[j], k->dt);
            ogc_stats sj = {0};
            ogc_compare(custom_rule(s), odt, k->ybytes[j], ref[j], mag[j], terms[j], n, &sj);
            compared++;
            if (sj.bad) {
                char what[96], msg[512];
                snprintf(what, sizeof what, "output '%s'", s->out[j].name);
                describe_mismatch(s, msg, sizeof msg, what, odt, k->ybytes[j], ref[j], mag[j],
                                  terms[j], n, &sj);
                emit(k->ck, k, k->dt, "forward", OGC_FAIL, &sj, "%s", msg);
                ok = false;
            }
            st = sj;
        }
        if (ok)
            emit(k->ck, k, k->dt, "forward", OGC_PASS, &st, "%s",
                 compared
                     ? ""
                     : "no reference in the spec: shapes, dtypes and coverage checked, values not");
    }
    free_list(ref, MAX_OUT);
    free_list(mag, MAX_OUT);
    ogr_free(&c);
    return ok;
}

// ---------------------------------------------------------------------------------------------
// Stage: wiring

typedef struct identity_ctx {
    int nin, nout;
} identity_ctx;

// opgrad's identity backward (the gradient of y = x_1 + ... + x_n, broadcast): every gradient is
// dout summed to its input's shape. It runs through the same marshalling as the real backward, so
// a failure after it passes is the kernel's, not the wiring's.
static int identity_backward(int nparam, void **params, int *ndims, int64_t **shapes,
                             const char **dtypes, void *stream, void *extra) {
    (void)stream;
    const identity_ctx *ic = extra;
    if (nparam != 2 * ic->nin + 2 * ic->nout) return 1;
    int dy = ic->nin + ic->nout;
    aclDataType gdt, ddt;
    if (!ogs_dtype_parse(dtypes[dy], &ddt)) return 2;
    ogc_shape ds = {.ndim = ndims[dy]};
    memcpy(ds.dims, shapes[dy], sizeof(int64_t) * (size_t)ds.ndim);
    int64_t nd = numel(&ds);
    for (int k = 0; k < ic->nin; k++) {
        int g = dy + ic->nout + k;
        if (!ogs_dtype_parse(dtypes[g], &gdt)) return 2;
        ogc_shape gs = {.ndim = ndims[g]};
        memcpy(gs.dims, shapes[g], sizeof(int64_t) * (size_t)gs.ndim);
        int64_t ng = numel(&gs);
        double *acc = calloc((size_t)(ng ? ng : 1), sizeof(double));
        if (!acc) return 3;
        int64_t st[OG_MAX_DIMS], idx[OG_MAX_DIMS] = {0};
        ogc_broadcast_strides(&gs, &ds, st); // the gradient indexed over dout's shape
        for (int64_t e = 0; e < nd; e++) {
            int64_t pos = 0;
            for (int d = 0; d < ds.ndim; d++) pos += idx[d] * st[d];
            if (pos < ng) acc[pos] += ogc_load(params[dy], e, ddt);
            for (int d = ds.ndim - 1; d >= 0 && ++idx[d] == ds.dims[d]; d--) idx[d] = 0;
        }
        for (int64_t e = 0; e < ng; e++) ogc_store(params[g], e, gdt, acc[e]);
        free(acc);
    }
    return 0;
}

typedef struct bwd_layout {
    int n;
    const char *names[OGR_MAX_PARAMS];
    char dnames[OGR_MAX_PARAMS][OGS_NAME + 1]; // "dy", "dx": the gradients' names
    aclDataType dts[OGR_MAX_PARAMS];
    ogc_shape shapes[OGR_MAX_PARAMS];
    int first_grad;
} bwd_layout;

// The bprop call: x..., y..., dy..., then the declared gradients.
static void backward_layout(const kase *k, aclDataType dout_dt, bwd_layout *l) {
    const ogs_spec *s = k->s;
    int n = 0;
    for (int i = 0; i < s->nin; i++)
        l->names[n] = s->in[i].name, l->dts[n] = ogs_dtype(&s->in[i], k->dt),
        l->shapes[n++] = k->in[i];
    for (int j = 0; j < s->nout; j++)
        l->names[n] = s->out[j].name, l->dts[n] = ogs_dtype(&s->out[j], k->dt),
        l->shapes[n++] = k->out[j];
    for (int j = 0; j < s->nout; j++) {
        snprintf(l->dnames[n], sizeof l->dnames[n], "d%.*s", OGS_NAME - 1, s->out[j].name);
        l->names[n] = l->dnames[n];
        l->dts[n] = dout_dt != ACL_DT_UNDEFINED ? dout_dt : ogs_dtype(&s->out[j], k->dt);
        l->shapes[n++] = k->out[j];
    }
    l->first_grad = n;
    for (int g = 0; g < s->ngrads; g++) {
        snprintf(l->dnames[n], sizeof l->dnames[n], "d%.*s", OGS_NAME - 1,
                 g < s->nin ? s->in[g].name : "extra");
        l->names[n] = l->dnames[n];
        l->dts[n] = ogs_dtype(&s->grads[g], k->dt), l->shapes[n++] = k->grad[g];
    }
    l->n = n;
}

static void fill_backward_inputs(const kase *k, ogr_call *c, const double *const *dout) {
    const ogs_spec *s = k->s;
    for (int i = 0; i < s->nin; i++) put_values(c, i, k->x[i]);
    for (int j = 0; j < s->nout; j++)
        memcpy(c->p[s->nin + j].data, k->ybytes[j], c->p[s->nin + j].bytes);
    for (int j = 0; j < s->nout; j++) put_values(c, s->nin + s->nout + j, dout[j]);
}

static double *random_values(og_rng *r, int64_t n, aclDataType dt, double lo, double hi) {
    double *v = malloc((size_t)(n ? n : 1) * sizeof(double));
    if (!v) return NULL;
    for (int64_t e = 0; e < n; e++) {
        unsigned char q[8];
        ogc_store(q, 0, dt, og_rng_uniform(r, lo, hi));
        v[e] = ogc_load(q, 0, dt); // what the kernel will see
    }
    return v;
}

// Lays out a backward call (dout in dout_dt), fills its inputs with the case's values, the
// forward's outputs and a random dout, and allocates the per-gradient copies run_twice keeps.
static bool prepare_backward(kase *k, aclDataType dout_dt, uint64_t salt, bwd_layout *l,
                             ogr_call *c, double **dout, unsigned char **keep) {
    const ogs_spec *s = k->s;
    backward_layout(k, dout_dt, l);
    if (!ogr_alloc(c, l->n, l->dts, l->shapes, k->tail)) return false;
    og_rng r;
    og_rng_seed(&r, k->seed ^ salt);
    bool ok = true;
    for (int j = 0; j < s->nout; j++)
        ok &= (dout[j] = random_values(&r, numel(&k->out[j]), l->dts[s->nin + s->nout + j], -1,
                                       1)) != NULL;
    for (int i = 0; i < s->nin; i++)
        ok &= (keep[i] = malloc(c->p[l->first_grad + i].bytes + 1)) != NULL;
    if (ok) {
        fill_backward_inputs(k, c, (const double *const *)dout);
        return true;
    }
    for (int i = 0; i < s->nin; i++) free(keep[i]), keep[i] = NULL;
    free_list(dout, MAX_OUT);
    ogr_free(c);
    return false;
}

static bool stage_wiring(kase *k) {
    const ogs_spec *s = k->s;
    char a[128], b[128], dims[96];
    if (s->ngrads != s->nin) {
        char missing[256] = "";
        size_t len = 0;
        for (int i = s->ngrads; i < s->nin && len < sizeof missing; i++)
            len += (size_t)snprintf(missing + len, sizeof missing - len, "%s'%s'",
                                    i > s->ngrads ? ", " : "", s->in[i].name);
        emit(k->ck, k, k->dt, "wiring", OGC_FAIL, NULL,
             "the backward declares %d gradient%s, the operator has %d inputs%s%s: a bprop returns "
             "exactly one gradient per forward input, in order (a zero tensor for a "
             "non-differentiable one)",
             s->ngrads, s->ngrads == 1 ? "" : "s", s->nin, missing[0] ? ", none for " : "",
             missing);
        return false;
    }
    for (int i = 0; i < s->nin; i++) {
        aclDataType gd = ogs_dtype(&s->grads[i], k->dt), xd = ogs_dtype(&s->in[i], k->dt);
        if (!ogc_shape_equal(&k->grad[i], &k->in[i])) {
            int nd = ogc_unreduced_dims(&k->grad[i], &k->in[i], dims, sizeof dims);
            if (nd > 0)
                emit(k->ck, k, k->dt, "wiring", OGC_FAIL, NULL,
                     "gradient of '%s' has %lld elements, input has %lld: reduce over dim%s %s "
                     "(declared %s, input %s)",
                     s->in[i].name, (long long)numel(&k->grad[i]), (long long)numel(&k->in[i]),
                     nd > 1 ? "s" : "", dims, shape_str(&k->grad[i], a, sizeof a),
                     shape_str(&k->in[i], b, sizeof b));
            else
                emit(k->ck, k, k->dt, "wiring", OGC_FAIL, NULL,
                     "gradient of '%s' is declared %s, input is %s: a gradient has its input's "
                     "shape",
                     s->in[i].name, shape_str(&k->grad[i], a, sizeof a),
                     shape_str(&k->in[i], b, sizeof b));
            return false;
        }
        if (gd != xd) {
            emit(k->ck, k, k->dt, "wiring", OGC_FAIL, NULL,
                 "gradient of '%s' is declared %s, input is %s: a gradient has its input's dtype",
                 s->in[i].name, ogs_dtype_str(gd), ogs_dtype_str(xd));
            return false;
        }
    }
    // the control run: opgrad's identity backward through the same call layout
    bwd_layout l;
    ogr_call c;
    double *dout[MAX_OUT] = {0};
    unsigned char *keep[MAX_IN] = {0};
    written w[MAX_IN];
    if (!prepare_backward(k, ACL_DT_UNDEFINED, 0x1d, &l, &c, dout, keep)) {
        emit(k->ck, k, k->dt, "wiring", OGC_FAIL, NULL, "out of memory laying out the call");
        return false;
    }
    identity_ctx ic = {s->nin, s->nout};
    bool ok = run_twice(k, &c, l.first_grad, NULL, identity_backward, &ic, "wiring",
                        "identity backward", l.names, keep, w);
    for (int i = 0; ok && i < s->nin; i++)
        if (w[i].overrun || w[i].missing) {
            emit(k->ck, k, k->dt, "wiring", OGC_FAIL, NULL,
                 "internal: the identity backward's gradient '%s' was not laid out as declared",
                 s->in[i].name);
            ok = false;
        }
    if (ok)
        emit(k->ck, k, k->dt, "wiring", OGC_PASS, NULL,
             "one gradient per input, shapes and dtypes as declared; identity backward ran");
    for (int i = 0; i < s->nin; i++) free(keep[i]);
    free_list(dout, MAX_OUT);
    ogr_free(&c);
    return ok;
}

// ---------------------------------------------------------------------------------------------
// Stage: backward

// Forward kernel outputs at inputs xs in dtype fdt (for finite differences): fills ys[j].
static bool forward_at(kase *k, aclDataType fdt, double *const *xs, double **ys, char *why,
                       size_t size) {
    const ogs_spec *s = k->s;
    aclDataType dts[MAX_IN + MAX_OUT];
    ogc_shape shapes[MAX_IN + MAX_OUT];
    for (int i = 0; i < s->nin; i++)
        dts[i] = s->in[i].dtype == ACL_DT_UNDEFINED ? fdt : s->in[i].dtype, shapes[i] = k->in[i];
    for (int j = 0; j < s->nout; j++)
        dts[s->nin + j] = s->out[j].dtype == ACL_DT_UNDEFINED ? fdt : s->out[j].dtype,
                     shapes[s->nin + j] = k->out[j];
    ogr_call c;
    if (!ogr_alloc(&c, s->nin + s->nout, dts, shapes, k->tail))
        return snprintf(why, size, "out of memory"), false;
    for (int i = 0; i < s->nin; i++) put_values(&c, i, xs[i]);
    ogr_outcome o;
    run(k, &c, s->forward, NULL, NULL, &o);
    ogr_outcome_str(&o, why, size);
    bool ok = !why[0];
    for (int j = 0; ok && j < s->nout; j++) get_values(&c, s->nin + j, ys[j]);
    ogr_free(&c);
    return ok;
}

// Does the backward's gradient of input i agree with finite differences of the forward kernel?
// v^T J u along a random +-1 direction u on input i, v = dout; central differences with one
// Richardson step, in float64 when the kernel takes it, else float32 (x +- h stays exact).
static bool fd_check(kase *k, int i, double *const *dout, const double *g, char *msg, size_t size,
                     bool *ran) {
    const ogs_spec *s = k->s;
    *ran = false;
    aclDataType fdt = ACL_DT_UNDEFINED;
    for (int d = 0; d < s->ndtypes; d++)
        if (s->dtypes[d] == ACL_DOUBLE) fdt = ACL_DOUBLE;
    if (fdt == ACL_DT_UNDEFINED && k->dt == ACL_FLOAT) fdt = ACL_FLOAT;
    if (fdt == ACL_DT_UNDEFINED || s->in[i].dtype != ACL_DT_UNDEFINED) return true;
    for (int j = 0; j < s->nout; j++)
        if (s->out[j].dtype != ACL_DT_UNDEFINED) return true;
    int64_t ni = numel(&k->in[i]);
    og_rng r;
    og_rng_seed(&r, k->seed ^ (0xfd00u + (unsigned)i));
    double *u = malloc((size_t)(ni ? ni : 1) * sizeof(double));
    double *xs[MAX_IN], *ys[MAX_OUT];
    for (int q = 0; q < s->nin; q++) xs[q] = k->x[q];
    for (int j = 0; j < s->nout; j++)
        ys[j] = malloc((size_t)(numel(&k->out[j]) + 1) * sizeof(double));
    double *xp = malloc((size_t)(ni ? ni : 1) * sizeof(double));
    for (int64_t e = 0; e < ni; e++) u[e] = og_rng_next(&r) & 1 ? 1.0 : -1.0;
    double ad = 0, ad_mag = 0;
    for (int64_t e = 0; e < ni; e++) ad += g[e] * u[e], ad_mag += fabs(g[e]);
    // h: a power of two, so x +- h u is exact in the kernel's dtype for |x| < 2^15 (fp32)
    double h = fdt == ACL_DOUBLE ? 0x1p-12 : 0x1p-7;
    double d[2] = {0, 0}, fmag = 0;
    bool ok = true;
    char why[400] = "";
    for (int step = 0; ok && step < 2; step++) {
        double hs = step ? h / 2 : h, sum = 0;
        for (int sign = -1; ok && sign <= 1; sign += 2) {
            for (int64_t e = 0; e < ni; e++) xp[e] = k->x[i][e] + sign * hs * u[e];
            xs[i] = xp;
            ok = forward_at(k, fdt, xs, ys, why, sizeof why);
            for (int j = 0; ok && j < s->nout; j++)
                for (int64_t e = 0; e < numel(&k->out[j]); e++)
                    sum += sign * dout[j][e] * ys[j][e], fmag += fabs(dout[j][e] * ys[j][e]);
        }
        d[step] = sum / (2 * hs);
    }
    xs[i] = k->x[i];
    if (ok) {
        *ran = true;
        double fd = (4 * d[1] - d[0]) / 3;
        double eps = fdt == ACL_DOUBLE ? 0x1p-52 : 0x1p-24;
        // rounding noise of the forward values, amplified by 1/h; plus a relative slack for the
        // truncation error left after one Richardson step
        double tol = 8 * s->tolerance_ulps * eps * fmag / h + 1e-3 * (ad_mag + fabs(fd)) + 1e-12;
        if (!(fabs(fd - ad) <= tol)) {
            snprintf(msg, size,
                     "gradient of '%s' disagrees with finite differences of the forward kernel "
                     "(%s): along a random direction the backward gives %.6g, the forward's slope "
                     "is %.6g (tolerance %.2g)%s",
                     s->in[i].name, ogs_dtype_str(fdt), ad, fd, tol,
                     fabs(ad + fd) <= tol ? ": the sign is flipped" : "");
            ok = false;
        }
    } else {
        snprintf(msg, size, "finite differences: the forward kernel %s", why);
    }
    free(u);
    free(xp);
    free_list(ys, s->nout);
    return ok;
}

// The unreduced-gradient diagnosis for a write past gradient i's buffer.
static void overrun_diagnosis(const kase *k, int i, size_t wrote, char *msg, size_t size) {
    const ogs_spec *s = k->s;
    char a[128], b[128], dims[96];
    for (int j = 0; j < s->nout; j++) {
        int nd = ogc_unreduced_dims(&k->out[j], &k->in[i], dims, sizeof dims);
        if (nd > 0 && (int64_t)wrote == numel(&k->out[j])) {
            snprintf(
                msg, size,
                "gradient of '%s' has %lld elements, input has %lld: reduce over dim%s %s (the "
                "backward wrote the unreduced %s gradient into the %s buffer)",
                s->in[i].name, (long long)wrote, (long long)numel(&k->in[i]), nd > 1 ? "s" : "",
                dims, shape_str(&k->out[j], a, sizeof a), shape_str(&k->in[i], b, sizeof b));
            return;
        }
    }
    snprintf(msg, size,
             "the backward wrote past gradient '%s' (declared %s, %lld elements): writes reached "
             "element %lld",
             s->in[i].name, shape_str(&k->grad[i], a, sizeof a), (long long)numel(&k->grad[i]),
             (long long)wrote - 1);
}

// What the sub-stages of one backward run share.
typedef struct bwd_state {
    aclDataType dout_dt; // ACL_DT_UNDEFINED: the output's dtype
    char stage[64];      // the rows' label
    bwd_layout l;
    ogr_call c;
    double *dout[MAX_OUT];
    double *gv[MAX_IN];          // the gradients run 0 wrote, as doubles
    unsigned char *keep[MAX_IN]; // ... and their bytes
    written w[MAX_IN];
    ogc_stats st; // the worst comparison against the reference (for the rows)
    int fd_done;  // gradients finite differences confirmed
} bwd_state;

// Gradient i as run_twice saw it: written whole, within its buffer, deterministically. Emits the
// first problem found.
static bool gradient_written(kase *k, bwd_state *b, int i, int complete) {
    const ogs_spec *s = k->s;
    const ogr_param *p = &b->c.p[b->l.first_grad + i];
    const written *w = &b->w[i];
    size_t es = aclDataTypeSize(p->dtype);
    int64_t n = numel(&k->grad[i]);
    char msg[600], a[128];
    if (w->overrun) {
        overrun_diagnosis(k, i, (p->bytes + w->overrun + es - 1) / es, msg, sizeof msg);
        emit(k->ck, k, k->dt, b->stage, OGC_FAIL, NULL, "%s", msg);
    } else if (w->missing == n && n > 0) {
        emit(k->ck, k, k->dt, b->stage, OGC_FAIL, NULL,
             "the backward returned %d of %d gradients: gradient of '%s' was never written "
             "(one gradient per forward input, in order)",
             complete, s->nin, s->in[i].name);
    } else if (w->half_written) {
        emit(k->ck, k, k->dt, b->stage, OGC_FAIL, NULL,
             "gradient of '%s' is %s but the kernel wrote 2-byte values into it (a "
             "float16/bfloat16 gradient where %s was expected)",
             s->in[i].name, ogs_dtype_str(p->dtype), ogs_dtype_str(p->dtype));
    } else if (w->missing) {
        emit(k->ck, k, k->dt, b->stage, OGC_FAIL, NULL,
             "%lld of %lld elements of gradient '%s' %s were never written (first: element "
             "%lld)",
             (long long)w->missing, (long long)n, s->in[i].name,
             shape_str(&k->grad[i], a, sizeof a), (long long)w->first_missing);
    } else if (w->nondeterministic) {
        emit(k->ck, k, k->dt, b->stage, OGC_FAIL, NULL,
             "two runs gave different values for gradient '%s' (first at element %lld): the "
             "backward reads uninitialised memory or is nondeterministic",
             s->in[i].name, (long long)w->first_diff);
    } else {
        return true;
    }
    return false;
}

// Runs the backward twice and checks what came back: every gradient written, within its buffer,
// deterministically. Keeps the gradients (gv) for the value checks.
static bool backward_run(kase *k, bwd_state *b) {
    const ogs_spec *s = k->s;
    bool ok = run_twice(k, &b->c, b->l.first_grad, s->backward, NULL, NULL, b->stage,
                        "backward kernel", b->l.names, b->keep, b->w);
    // counted before any check, for the "returned m of n gradients" diagnosis
    int complete = 0;
    for (int i = 0; ok && i < s->nin; i++) complete += b->w[i].missing == 0;
    for (int i = 0; ok && i < s->nin; i++) {
        const ogr_param *p = &b->c.p[b->l.first_grad + i];
        int64_t n = numel(&k->grad[i]);
        ok = gradient_written(k, b, i, complete);
        b->gv[i] = malloc((size_t)(n ? n : 1) * sizeof(double));
        for (int64_t e = 0; e < n; e++) b->gv[i][e] = ogc_load(b->keep[i], e, p->dtype);
        if (ok && opgrad_debug_grads_enabled())
            opgrad_debug_grads_log(s->name, i, s->in[i].name, ogs_dtype_str(p->dtype),
                                   k->grad[i].ndim, k->grad[i].dims, b->keep[i]);
    }
    return ok;
}

// A gradient off by a factor 1/extent of an output dim: a mean where the broadcast reduction
// needs a sum. Appends the hint to msg.
static void mean_hint(const kase *k, double alpha, char *msg, size_t size) {
    const ogs_spec *s = k->s;
    if (isnan(alpha)) return;
    for (int j = 0; j < s->nout; j++)
        for (int d = 0; d < k->out[j].ndim; d++) {
            double ext = (double)k->out[j].dims[d];
            if (ext > 1 && fabs(alpha * ext - 1) < 1e-3) {
                size_t len = strlen(msg);
                snprintf(msg + len, size - len,
                         "; 1/%g is 1 over the extent of the output's dim %d: a mean where the "
                         "broadcast reduction needs a sum?",
                         ext, d);
                return;
            }
        }
}

// Gradient i against the reference's (gx, mag gm, gt terms); keeps the worst stats in b->st.
static bool gradient_vs_reference(kase *k, bwd_state *b, int i, const double *gx, const double *gm,
                                  int64_t gt) {
    const ogs_spec *s = k->s;
    const ogr_param *p = &b->c.p[b->l.first_grad + i];
    int64_t n = numel(&k->in[i]);
    ogc_stats si = {0};
    bool ok = true;
    ogc_compare(custom_rule(s), p->dtype, b->keep[i], gx, gm, gt, n, &si);
    if (si.bad) {
        char what[96], msg[600];
        snprintf(what, sizeof what, "gradient of '%s'", s->in[i].name);
        double alpha =
            describe_mismatch(s, msg, sizeof msg, what, p->dtype, b->keep[i], gx, gm, gt, n, &si);
        mean_hint(k, alpha, msg, sizeof msg);
        emit(k->ck, k, k->dt, b->stage, OGC_FAIL, &si, "%s", msg);
        ok = false;
    }
    if (si.max_ulp >= b->st.max_ulp) b->st = si;
    return ok;
}

// Every differentiable gradient against the reference expression's exact gradient (when the
// spec has one).
static bool backward_vs_reference(kase *k, bwd_state *b) {
    const ogs_spec *s = k->s;
    if (!k->ck->expr) return true;
    double *gx[MAX_IN] = {0}, *gm[MAX_IN] = {0};
    int64_t gt[MAX_IN] = {0};
    for (int i = 0; i < s->nin; i++) {
        int64_t n = numel(&k->in[i]);
        gx[i] = calloc((size_t)(n ? n : 1), sizeof(double));
        gm[i] = calloc((size_t)(n ? n : 1), sizeof(double));
    }
    const double *xs[MAX_IN];
    for (int i = 0; i < s->nin; i++) xs[i] = k->x[i];
    char err[400];
    bool ok = true;
    if (!ogx_grad(k->ck->expr, k->in, xs, b->dout[0], gx, gm, gt, err, sizeof err)) {
        emit(k->ck, k, k->dt, b->stage, OGC_FAIL, NULL, "reference gradient: %s", err);
        ok = false;
    }
    for (int i = 0; ok && i < s->nin; i++)
        if (s->in[i].differentiable) ok = gradient_vs_reference(k, b, i, gx[i], gm[i], gt[i]);
    free_list(gx, MAX_IN);
    free_list(gm, MAX_IN);
    return ok;
}

// Every differentiable gradient against finite differences of the forward kernel (only with
// dout in the output's dtype).
static bool backward_vs_fd(kase *k, bwd_state *b) {
    const ogs_spec *s = k->s;
    if (b->dout_dt != ACL_DT_UNDEFINED) return true;
    char msg[600];
    for (int i = 0; i < s->nin; i++) {
        if (!s->in[i].differentiable) continue;
        bool ran;
        if (!fd_check(k, i, b->dout, b->gv[i], msg, sizeof msg, &ran)) {
            emit(k->ck, k, k->dt, b->stage, OGC_FAIL, &b->st, "%s", msg);
            return false;
        }
        b->fd_done += ran;
    }
    return true;
}

// Coverage: a differentiable input whose gradient is zero everywhere was not exercised, and
// without a reference nothing confirms that zero.
static bool backward_coverage(kase *k, bwd_state *b) {
    const ogs_spec *s = k->s;
    for (int i = 0; i < s->nin; i++) {
        if (!s->in[i].differentiable || !numel(&k->in[i])) continue;
        bool all_zero = true;
        for (int64_t e = 0; e < numel(&k->in[i]); e++) all_zero &= b->gv[i][e] == 0;
        if (all_zero && !k->ck->expr) {
            emit(k->ck, k, k->dt, b->stage, OGC_MISTRUSTED, &b->st,
                 "gradient of '%s' is zero everywhere and there is no reference to confirm it",
                 s->in[i].name);
            return false;
        }
    }
    return true;
}

// B(0) = 0: with dout = 0 every gradient must be exactly zero (only with dout in the output's
// dtype).
static bool backward_zero_dout(kase *k, bwd_state *b) {
    const ogs_spec *s = k->s;
    ogr_call *c = &b->c;
    if (b->dout_dt != ACL_DT_UNDEFINED) return true;
    for (int j = 0; j < s->nout; j++)
        memset(c->p[s->nin + s->nout + j].data, 0, c->p[s->nin + s->nout + j].bytes);
    for (int i = 0; i < s->nin; i++) ogr_poison(c, b->l.first_grad + i, POISON[0]);
    ogr_outcome o;
    run(k, c, s->backward, NULL, NULL, &o);
    if (call_failed(k, c, &o, b->stage, "backward kernel (dout = 0)", b->l.first_grad, b->l.names))
        return false;
    for (int i = 0; i < s->nin; i++) {
        const ogr_param *p = &c->p[b->l.first_grad + i];
        for (int64_t e = 0; e < numel(&k->grad[i]); e++) {
            double v = ogc_load(p->data, e, p->dtype);
            if (v != 0) {
                emit(k->ck, k, k->dt, b->stage, OGC_FAIL, &b->st,
                     "with dout = 0 the gradient of '%s' is %.6g at element %lld, not 0: the "
                     "backward adds a term that does not scale with dout",
                     s->in[i].name, v, (long long)e);
                return false;
            }
        }
    }
    return true;
}

// One backward run with dout in dtype dout_dt (ACL_DT_UNDEFINED: the output's dtype): the
// sub-stages in order, stopping at the first that fails; one PASS row when all agree.
static bool stage_backward(kase *k, aclDataType dout_dt) {
    const ogs_spec *s = k->s;
    bwd_state b = {.dout_dt = dout_dt};
    if (dout_dt == ACL_DT_UNDEFINED)
        snprintf(b.stage, sizeof b.stage, "backward");
    else
        snprintf(b.stage, sizeof b.stage, "backward dout=%s", ogs_dtype_str(dout_dt));
    if (!prepare_backward(k, dout_dt, 0xb0u ^ (uint64_t)(dout_dt + 2) << 8, &b.l, &b.c, b.dout,
                          b.keep)) {
        emit(k->ck, k, k->dt, b.stage, OGC_FAIL, NULL, "out of memory laying out the call");
        return false;
    }
    bool ok = backward_run(k, &b) && backward_vs_reference(k, &b) && backward_vs_fd(k, &b) &&
              backward_coverage(k, &b) && backward_zero_dout(k, &b);
    if (ok) {
        char note[160];
        snprintf(note, sizeof note, "%s%s",
                 k->ck->expr ? "vs the reference's exact gradient" : "no reference",
                 b.fd_done ? "; finite differences agree" : "");
        emit(k->ck, k, k->dt, b.stage, OGC_PASS, &b.st, "%s", note);
    }
    for (int i = 0; i < s->nin; i++) free(b.keep[i]);
    free_list(b.dout, MAX_OUT);
    free_list(b.gv, MAX_IN);
    ogr_free(&b.c);
    return ok;
}

// ---------------------------------------------------------------------------------------------
// Driver

static bool load(checker *ck) {
    ogs_spec *s = &ck->spec;
    const char *lib = ck->opt->library ? ck->opt->library : s->library;
    if (lib != s->library) snprintf(s->library, sizeof s->library, "%s", lib);
    if (s->library[0] != '/') {
        emit(ck, NULL, ACL_FLOAT, "load", OGC_FAIL, NULL,
             "library path '%s' is relative: give an absolute path. A relative path resolves "
             "against whatever directory the job runs in, so the same spec loads a different "
             "file, or none, depending on where training starts",
             s->library);
        return false;
    }
    const char *syms[3];
    int nsyms = 0;
    if (s->forward[0]) syms[nsyms++] = s->forward;
    if (s->backward[0]) syms[nsyms++] = s->backward;
    if (s->reference_symbol[0]) syms[nsyms++] = s->reference_symbol;
    if (ck->env.isolate) {
        // in a child, under the time and memory limits: the library's constructors are user
        // code, and one that exits, crashes or never returns must not take the checker with it
        ogr_outcome o;
        ogr_load(&ck->env, syms, nsyms, &o);
        collect_output(ck, &o);
        char why[600];
        ogr_outcome_str(&o, why, sizeof why);
        if (o.load_failed) {
            emit(ck, NULL, ACL_FLOAT, "load", OGC_FAIL, NULL, "%s", o.message);
            return false;
        }
        if (why[0]) {
            emit(ck, NULL, ACL_FLOAT, "load", OGC_FAIL, NULL, "the library %s %s", s->library, why);
            return false;
        }
    } else {
        if (opgrad_custom_open(s->library, &ck->lib) != ACLNN_SUCCESS) {
            emit(ck, NULL, ACL_FLOAT, "load", OGC_FAIL, NULL, "%s", aclGetRecentErrMsg());
            return false;
        }
        ck->env.lib = ck->lib;
        for (int i = 0; i < nsyms; i++)
            if (opgrad_custom_has_symbol(ck->lib, syms[i]) != ACLNN_SUCCESS) {
                emit(ck, NULL, ACL_FLOAT, "load", OGC_FAIL, NULL, "%s", aclGetRecentErrMsg());
                return false;
            }
    }
    if (s->reference) {
        const char *names[MAX_IN];
        for (int i = 0; i < s->nin; i++) names[i] = s->in[i].name;
        char err[400];
        ck->expr = ogx_parse(s->reference, s->nin, names, err, sizeof err);
        if (!ck->expr) {
            emit(ck, NULL, ACL_FLOAT, "load", OGC_FAIL, NULL, "\"reference\": %s", err);
            return false;
        }
    }
    emit(ck, NULL, ACL_FLOAT, "load", OGC_PASS, NULL, "%s: %s%s%s%s", s->library, s->forward,
         s->backward[0] ? ", " : "", s->backward, s->backward[0] ? "" : " (no backward)");
    return true;
}

static uint64_t case_seed(uint64_t seed, aclDataType dt, int b) {
    return (seed * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)(dt + 1) << 32) ^ (uint64_t)b;
}

static void run_case(checker *ck, aclDataType dt, int b) {
    const ogs_spec *s = &ck->spec;
    kase k = {.ck = ck, .s = s, .dt = dt, .b = b, .seed = case_seed(ck->opt->seed, dt, b)};
    ogs_binding_str(s, b, k.bind, sizeof k.bind);
    int64_t biggest = 1;
    for (int i = 0; i < s->nin; i++)
        ogs_shape(s, &s->in[i], b, &k.in[i]),
            biggest = numel(&k.in[i]) > biggest ? numel(&k.in[i]) : biggest;
    for (int j = 0; j < s->nout; j++)
        ogs_shape(s, &s->out[j], b, &k.out[j]),
            biggest = numel(&k.out[j]) > biggest ? numel(&k.out[j]) : biggest;
    for (int g = 0; g < s->ngrads; g++)
        ogs_shape(s, &s->grads[g], b, &k.grad[g]),
            biggest = numel(&k.grad[g]) > biggest ? numel(&k.grad[g]) : biggest;
    // room for the largest tensor of the case in every canary zone, in the widest dtype: an
    // unreduced gradient written into a reduced buffer lands there whole and can be measured
    k.tail = (size_t)biggest * 8 + 256;
    og_rng r;
    og_rng_seed(&r, k.seed);
    for (int i = 0; i < s->nin; i++)
        k.x[i] =
            random_values(&r, numel(&k.in[i]), ogs_dtype(&s->in[i], dt), s->in[i].lo, s->in[i].hi);
    for (int j = 0; j < s->nout; j++) {
        int64_t n = numel(&k.out[j]);
        k.ybytes[j] = malloc((size_t)(n ? n : 1) * aclDataTypeSize(ogs_dtype(&s->out[j], dt)));
    }
    bool ok = stage_forward(&k);
    if (!s->backward[0]) {
        // nothing more to check
    } else if (!ok) {
        emit(ck, &k, dt, "backward", OGC_SKIPPED, NULL, "the forward failed: fix it first");
    } else if (stage_wiring(&k)) {
        stage_backward(&k, ACL_DT_UNDEFINED);
        int di = 0;
        while (di < s->ndtypes && s->dtypes[di] != dt) di++;
        for (int g = 0; di < s->ndtypes && g < 64; g++)
            if (s->dout_dtypes[di] >> g & 1 && (aclDataType)g != dt)
                stage_backward(&k, (aclDataType)g);
    } else {
        emit(ck, &k, dt, "backward", OGC_SKIPPED, NULL,
             "the wiring failed: fix the declarations first");
    }
    free_list(k.x, MAX_IN);
    for (int j = 0; j < s->nout; j++) free(k.ybytes[j]);
}

int ogcc_check(const char *spec_path, const ogcc_options *opt, ogcc_sink sink, void *user) {
    checker ck = {.opt = opt, .sink = sink, .user = user};
    ck.env = (ogr_env){.isolate = !opt->in_process,
                       .timeout_s = opt->timeout_s > 0 ? opt->timeout_s : 20,
                       .max_memory = opt->max_memory};
    char err[1024];
    if (!ogs_load(spec_path, &ck.spec, err, sizeof err)) {
        snprintf(ck.spec.path, sizeof ck.spec.path, "%s", spec_path);
        emit(&ck, NULL, ACL_FLOAT, "spec", OGC_FAIL, NULL, "%s", err);
        return ck.fails;
    }
    ck.env.library = ck.spec.library; // load() writes a --library override there
    if (load(&ck)) {
        for (int d = 0; d < ck.spec.ndtypes; d++)
            for (int b = 0; b < ck.spec.nsizes; b++) run_case(&ck, ck.spec.dtypes[d], b);
    }
    ogx_free(ck.expr);
    opgrad_custom_close(ck.lib);
    ogs_free(&ck.spec);
    return ck.fails;
}

bool ogcc_parse_seconds(const char *s, double *seconds) {
    char *end;
    errno = 0;
    if (!s || !(isdigit((unsigned char)s[0]) || s[0] == '.')) return false;
    double v = strtod(s, &end);
    // strtod also takes "inf", "nan" and hex: only a plain finite positive number is a limit
    if (*end || errno || !(v > 0 && v <= 86400) || strpbrk(s, "xXnN")) return false;
    *seconds = v;
    return true;
}

bool ogcc_parse_size(const char *s, uint64_t *bytes) {
    char *end;
    if (!s || !*s || !(isdigit((unsigned char)s[0]) || s[0] == '.')) return false;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || strpbrk(s, "xXnN")) return false;
    static const struct {
        const char *suffix[5];
        double scale;
    } units[] = {{{"", "B"}, 1},
                 {{"K", "k", "KB", "KiB", "kB"}, 0x1p10},
                 {{"M", "m", "MB", "MiB"}, 0x1p20},
                 {{"G", "g", "GB", "GiB"}, 0x1p30},
                 {{"T", "t", "TB", "TiB"}, 0x1p40}};
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++)
        for (int k = 0; k < 5 && units[u].suffix[k]; k++)
            if (!strcmp(end, units[u].suffix[k])) {
                double b = v * units[u].scale;
                // at least 1 MiB (less cannot even load a library), at most 2^60
                if (!(b >= 0x1p20 && b <= 0x1p60)) return false;
                *bytes = (uint64_t)b;
                return true;
            }
    return false;
}
