/* The gradient monitor (OPGRAD_DEBUG_GRADS, include/opgrad/custom_op.h).
 *
 * The monitor reads its environment once per process, so every scenario runs in a forked child
 * with its own environment and its own log file; the parent never calls opgrad (no threads to
 * lose in fork) and only checks the child's exit status. Each child runs operators, reads the log
 * back and checks every field of every line: operator, index, name, dtype, shape, element count,
 * and sum / min / max / L2 / NaN / Inf against values the test computes from the gradient itself
 * (in double, over the finite elements). Covered: MishBackward and FusedAddScaleBackward (three
 * gradients), fp16/bf16, planted NaN/Inf, strided and offset outputs (the padding never counts),
 * a stream-queued backward (logged on the dispatcher thread), concurrent threads (lines never
 * interleave), repeatable executors, every other built-in backward, forwards (never logged), the
 * aot Add/Mul backward (logged by the entry point), the public dense entry, stderr output, and the
 * monitor off (unset or "0": nothing is written, the file is not even created). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_elu_backward.h"
#include "aclnnop/aclnn_fused_add_scale_backward.h"
#include "aclnnop/aclnn_gelu_backward.h"
#include "aclnnop/aclnn_gelu_backward_v2.h"
#include "aclnnop/aclnn_hardswish_backward.h"
#include "aclnnop/aclnn_leaky_relu_backward.h"
#include "aclnnop/aclnn_mish.h"
#include "aclnnop/aclnn_mish_backward.h"
#include "aclnnop/aclnn_sigmoid_backward.h"
#include "aclnnop/aclnn_silu_backward.h"
#include "aclnnop/aclnn_softplus_backward.h"
#include "aclnnop/aclnn_tanh_backward.h"
#include "aclnnop/aclnn_threshold_backward.h"
#include "opgrad/custom_op.h"
#include "test.h"
#include "testutil.h"

int opgrad_AddBackward(int, void **, int *, int64_t **, const char **, void *, void *);
int opgrad_MulBackward(int, void **, int *, int64_t **, const char **, void *, void *);
int opgrad_MishBackward(int, void **, int *, int64_t **, const char **, void *, void *);

/* ---- the child processes -------------------------------------------------------------------- */

static char g_log[256]; // this scenario's log file

// Runs fn in a child with OPGRAD_DEBUG_GRADS = debug (NULL: unset) and OPGRAD_DEBUG_GRADS_FILE =
// the scenario's fresh log path (use_file) or unset; returns true when the child's checks passed.
static bool in_child(void (*fn)(void), const char *debug, bool use_file) {
    const char *tmp = getenv("TMPDIR");
    snprintf(g_log, sizeof g_log, "%s/opgrad_grads_%ld_%s.log", tmp && *tmp ? tmp : "/tmp",
             (long)getpid(), test_current);
    unlink(g_log);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return false;
    if (pid == 0) {
        if (debug)
            setenv("OPGRAD_DEBUG_GRADS", debug, 1);
        else
            unsetenv("OPGRAD_DEBUG_GRADS");
        if (use_file)
            setenv("OPGRAD_DEBUG_GRADS_FILE", g_log, 1);
        else
            unsetenv("OPGRAD_DEBUG_GRADS_FILE");
        test_checks_failed_in_current = 0;
        fn();
        fflush(stdout);
        fflush(stderr);
        _exit(test_checks_failed_in_current ? 1 : 0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    unlink(g_log);
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok)
        fprintf(stderr, "  child of %s: %s %d\n", test_current,
                WIFEXITED(status) ? "exit status" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    return ok;
}

/* ---- reading the log ------------------------------------------------------------------------ */

enum { MAX_LINES = 512 };

typedef struct logline {
    char op[128], name[64], dtype[32], shape[128];
    int index;
    long long n, nan, inf;
    double sum, min, max, l2;
    bool stats; // the numeric fields were present
} logline;

static char *slurp(const char *path, size_t *len) {
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16;
    char *buf = malloc(cap + 1);
    size_t r;
    while (buf && (r = fread(buf + *len, 1, cap - *len, f)) > 0) {
        *len += r;
        if (*len == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
        }
    }
    fclose(f);
    if (buf) buf[*len] = 0;
    return buf;
}

// Parses every line of the log; each must be complete and well formed (a CHECK otherwise).
static int read_log(const char *path, logline *out, int max) {
    size_t len;
    char *text = slurp(path, &len);
    if (!text) return 0;
    CHECKF(len == 0 || text[len - 1] == '\n', "log does not end with a newline");
    int n = 0;
    for (char *line = text; *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        CHECKF(strncmp(line, "opgrad-grads: ", 14) == 0, "malformed line \"%s\"", line);
        if (n < max) {
            logline *l = &out[n];
            memset(l, 0, sizeof *l);
            int k = sscanf(line,
                           "opgrad-grads: %127s grad[%d] %63s %31s %127s n=%lld sum=%lf min=%lf "
                           "max=%lf l2=%lf nan=%lld inf=%lld",
                           l->op, &l->index, l->name, l->dtype, l->shape, &l->n, &l->sum, &l->min,
                           &l->max, &l->l2, &l->nan, &l->inf);
            CHECKF(k >= 5, "unparsable line \"%s\"", line);
            l->stats = k == 12;
        }
        n++;
        if (!nl) break;
        line = nl + 1;
    }
    free(text);
    return n;
}

/* ---- expected statistics -------------------------------------------------------------------- */

typedef struct stats {
    long long n, nan, inf;
    double sum, sumsq, min, max;
} stats;

static void stats_add(stats *s, double v) {
    s->n++;
    if (isnan(v))
        s->nan++;
    else if (isinf(v))
        s->inf++;
    else {
        s->sum += v;
        s->sumsq += v * v;
        if (v < s->min) s->min = v;
        if (v > s->max) s->max = v;
    }
}

static stats stats_new(void) { return (stats){.min = INFINITY, .max = -INFINITY}; }

// Dense row-major data of n elements.
static stats stats_of(const void *data, int64_t n, aclDataType dt) {
    stats s = stats_new();
    for (int64_t i = 0; i < n; i++) stats_add(&s, test_load(data, i, dt));
    return s;
}

static bool close_to(double got, double want) {
    if (isnan(want)) return isnan(got);
    return fabs(got - want) <= 1e-8 * fmax(1.0, fabs(want));
}

// The line matches: op, index, name, dtype, shape and the statistics.
static void check_line(const logline *l, const char *op, int index, const char *name,
                       const char *dtype, const char *shape, const stats *s) {
    CHECKF(strcmp(l->op, op) == 0, "op \"%s\", expected \"%s\"", l->op, op);
    CHECK_EQ(l->index, index);
    CHECKF(strcmp(l->name, name) == 0, "name \"%s\", expected \"%s\"", l->name, name);
    CHECKF(strcmp(l->dtype, dtype) == 0, "dtype \"%s\", expected \"%s\"", l->dtype, dtype);
    CHECKF(strcmp(l->shape, shape) == 0, "shape \"%s\", expected \"%s\"", l->shape, shape);
    CHECK(l->stats);
    CHECK_EQ(l->n, s->n);
    CHECK_EQ(l->nan, s->nan);
    CHECK_EQ(l->inf, s->inf);
    bool any = s->min <= s->max;
    CHECKF(close_to(l->sum, s->sum), "%s sum %.17g, expected %.17g", name, l->sum, s->sum);
    CHECKF(close_to(l->l2, sqrt(s->sumsq)), "%s l2 %.17g, expected %.17g", name, l->l2,
           sqrt(s->sumsq));
    // min and max are values of the tensor, printed with %.9g: exact for every float32
    CHECKF(any ? (float)l->min == (float)s->min : isnan(l->min), "%s min %.17g, expected %.17g",
           name, l->min, s->min);
    CHECKF(any ? (float)l->max == (float)s->max : isnan(l->max), "%s max %.17g, expected %.17g",
           name, l->max, s->max);
}

/* ---- tensors -------------------------------------------------------------------------------- */

typedef struct buf {
    aclTensor *t;
    void *data;
    aclDataType dt;
    int64_t n;
} buf;

static buf make(const int64_t *dims, int ndim, aclDataType dt, uint64_t seed, double lo,
                double hi) {
    buf b = {NULL, NULL, dt, 1};
    for (int d = 0; d < ndim; d++) b.n *= dims[d];
    aclrtMalloc(&b.data, (size_t)(b.n > 0 ? b.n : 1) * aclDataTypeSize(dt),
                ACL_MEM_MALLOC_HUGE_FIRST);
    test_rng r;
    test_rng_seed(&r, seed);
    for (int64_t i = 0; i < b.n; i++) test_store(b.data, i, dt, test_rng_uniform(&r, lo, hi));
    b.t = test_tensor(dims, ndim, dt, b.data);
    return b;
}

static void drop(buf *b) {
    if (b->t) aclDestroyTensor(b->t);
    if (b->data) aclrtFree(b->data);
}

static const int64_t D816[] = {8, 16};

// aclnnMishBackward over fresh x (seed) and dy, optionally on a stream; returns gradInput.
static buf run_mish_backward(aclDataType dt, uint64_t seed, aclrtStream stream) {
    buf x = make(D816, 2, dt, seed, -4, 4), dy = make(D816, 2, dt, seed + 1, -2, 2);
    buf dx = make(D816, 2, dt, seed + 2, 0, 0);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnMishBackwardGetWorkspaceSize(dy.t, x.t, dx.t, &ws, &ex);
    st = test_run(st, ws, ex, aclnnMishBackward, stream);
    CHECK_EQ(st, ACLNN_SUCCESS);
    drop(&x);
    drop(&dy);
    return dx;
}

/* ---- scenarios (run in the children) -------------------------------------------------------- */

static void c_mish_backward(void) {
    CHECK(opgrad_debug_grads_enabled());
    buf dx = run_mish_backward(ACL_FLOAT, 11, NULL);
    logline l[4];
    int n = read_log(g_log, l, 4);
    CHECK_EQ(n, 1);
    stats s = stats_of(dx.data, dx.n, ACL_FLOAT);
    CHECK(s.nan == 0 && s.inf == 0 && s.min < 0 && s.max > 0);
    if (n >= 1) check_line(&l[0], "aclnnMishBackward", 0, "gradInput", "float32", "[8,16]", &s);
    drop(&dx);
}

static void c_fused_add_scale_backward(void) {
    static const int64_t dx_[] = {5, 7}, dc[] = {7}, ds[] = {1};
    buf g = make(dx_, 2, ACL_FLOAT, 1, -1, 1), x = make(dx_, 2, ACL_FLOAT, 2, -2, 2);
    buf bias = make(dc, 1, ACL_FLOAT, 3, -1, 1), scale = make(ds, 1, ACL_FLOAT, 4, 0.5, 2);
    buf gx = make(dx_, 2, ACL_FLOAT, 5, 0, 0), gb = make(dc, 1, ACL_FLOAT, 6, 0, 0);
    buf gs = make(ds, 1, ACL_FLOAT, 7, 0, 0);
    aclnnStatus st;
    OP_RUN(st,
           aclnnFusedAddScaleBackwardGetWorkspaceSize(g.t, x.t, bias.t, scale.t, gx.t, gb.t, gs.t,
                                                      &ws_, &ex_),
           aclnnFusedAddScaleBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    logline l[8];
    int n = read_log(g_log, l, 8);
    CHECK_EQ(n, 3);
    stats sx = stats_of(gx.data, gx.n, ACL_FLOAT), sb = stats_of(gb.data, gb.n, ACL_FLOAT);
    stats ss = stats_of(gs.data, gs.n, ACL_FLOAT);
    if (n >= 3) {
        check_line(&l[0], "aclnnFusedAddScaleBackward", 0, "gradX", "float32", "[5,7]", &sx);
        check_line(&l[1], "aclnnFusedAddScaleBackward", 1, "gradBias", "float32", "[7]", &sb);
        check_line(&l[2], "aclnnFusedAddScaleBackward", 2, "gradScale", "float32", "[1]", &ss);
    }
    // the values the test computes itself: gradX = g * scale, gradBias = column sums of it
    double sc = test_load(scale.data, 0, ACL_FLOAT), sum = 0;
    for (int i = 0; i < 35; i++) sum += (double)(float)(test_load(g.data, i, ACL_FLOAT) * sc);
    CHECKF(fabs(l[0].sum - sum) <= 1e-6 * fmax(1, fabs(sum)), "gradX sum %.9g vs %.9g", l[0].sum,
           sum);
    buf *all[] = {&g, &x, &bias, &scale, &gx, &gb, &gs};
    for (int k = 0; k < 7; k++) drop(all[k]);
}

static void c_nan_inf(void) {
    // x > 0 (mish' > 0), dy with 3 NaN, 2 +Inf and 1 -Inf planted: gradInput has 3 NaN, 3 Inf
    buf x = make(D816, 2, ACL_FLOAT, 21, 0.5, 3), dy = make(D816, 2, ACL_FLOAT, 22, -2, 2);
    buf dx = make(D816, 2, ACL_FLOAT, 23, 0, 0);
    float *g = dy.data;
    g[0] = NAN, g[17] = NAN, g[127] = NAN, g[5] = INFINITY, g[64] = INFINITY, g[99] = -INFINITY;
    aclnnStatus st;
    OP_RUN(st, aclnnMishBackwardGetWorkspaceSize(dy.t, x.t, dx.t, &ws_, &ex_), aclnnMishBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    logline l[2];
    int n = read_log(g_log, l, 2);
    CHECK_EQ(n, 1);
    stats s = stats_of(dx.data, dx.n, ACL_FLOAT);
    CHECK_EQ(s.nan, 3);
    CHECK_EQ(s.inf, 3);
    if (n >= 1) {
        check_line(&l[0], "aclnnMishBackward", 0, "gradInput", "float32", "[8,16]", &s);
        CHECK(isfinite(l[0].sum) && isfinite(l[0].min) && isfinite(l[0].max));
    }
    drop(&x);
    drop(&dy);
    drop(&dx);
}

static void c_half_dtypes(void) {
    buf a = run_mish_backward(ACL_FLOAT16, 31, NULL);
    buf b = run_mish_backward(ACL_BF16, 41, NULL);
    logline l[4];
    int n = read_log(g_log, l, 4);
    CHECK_EQ(n, 2);
    stats sa = stats_of(a.data, a.n, ACL_FLOAT16), sb = stats_of(b.data, b.n, ACL_BF16);
    if (n >= 2) {
        check_line(&l[0], "aclnnMishBackward", 0, "gradInput", "float16", "[8,16]", &sa);
        check_line(&l[1], "aclnnMishBackward", 0, "gradInput", "bfloat16", "[8,16]", &sb);
    }
    drop(&a);
    drop(&b);
}

// gradInput is a transposed [6,5] view with offset 3 in padded storage filled with 1e6: the
// statistics are the view's, the padding never counts.
static void c_strided_output(void) {
    static const int64_t d65[] = {6, 5};
    buf x = make(d65, 2, ACL_FLOAT, 51, -3, 3), dy = make(d65, 2, ACL_FLOAT, 52, -2, 2);
    float *storage = NULL;
    aclrtMalloc((void **)&storage, 64 * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST);
    for (int i = 0; i < 64; i++) storage[i] = 1e6f;
    const int64_t strides[] = {1, 8}, sd[] = {64};
    aclTensor *out = aclCreateTensor(d65, 2, ACL_FLOAT, strides, 3, ACL_FORMAT_ND, sd, 1, storage);
    aclnnStatus st;
    OP_RUN(st, aclnnMishBackwardGetWorkspaceSize(dy.t, x.t, out, &ws_, &ex_), aclnnMishBackward);
    CHECK_EQ(st, ACLNN_SUCCESS);
    stats s = stats_new();
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 5; j++) stats_add(&s, storage[3 + i * 1 + j * 8]);
    CHECK(s.max < 1e5);
    logline l[2];
    int n = read_log(g_log, l, 2);
    CHECK_EQ(n, 1);
    if (n >= 1) check_line(&l[0], "aclnnMishBackward", 0, "gradInput", "float32", "[6,5]", &s);
    aclDestroyTensor(out);
    aclrtFree(storage);
    drop(&x);
    drop(&dy);
}

static void c_stream(void) {
    aclrtStream stream = NULL;
    CHECK_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
    buf dx = run_mish_backward(ACL_FLOAT, 61, stream); // synchronizes the stream
    logline l[2];
    int n = read_log(g_log, l, 2);
    CHECK_EQ(n, 1);
    stats s = stats_of(dx.data, dx.n, ACL_FLOAT);
    if (n >= 1) check_line(&l[0], "aclnnMishBackward", 0, "gradInput", "float32", "[8,16]", &s);
    aclrtDestroyStream(stream);
    drop(&dx);
}

enum { THREADS = 4, CALLS = 25 };

static void *thread_main(void *arg) {
    uint64_t seed = (uint64_t)(uintptr_t)arg;
    for (int k = 0; k < CALLS; k++) {
        buf dx = run_mish_backward(ACL_FLOAT, seed * 1000 + (uint64_t)k, NULL);
        drop(&dx);
    }
    return NULL;
}

static void c_threads(void) {
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, thread_main, (void *)(uintptr_t)(i + 1));
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    static logline l[MAX_LINES];
    int n = read_log(g_log, l, MAX_LINES); // checks every line is whole
    CHECK_EQ(n, THREADS * CALLS);
    for (int i = 0; i < n && i < MAX_LINES; i++) {
        CHECK(l[i].stats && l[i].n == 128 && strcmp(l[i].op, "aclnnMishBackward") == 0);
    }
}

static void c_repeatable(void) {
    buf x = make(D816, 2, ACL_FLOAT, 71, -2, 2), dy = make(D816, 2, ACL_FLOAT, 72, -2, 2);
    buf dx = make(D816, 2, ACL_FLOAT, 73, 0, 0), dx2 = make(D816, 2, ACL_FLOAT, 74, 0, 0);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    CHECK_EQ(aclnnMishBackwardGetWorkspaceSize(dy.t, x.t, dx.t, &ws, &ex), ACLNN_SUCCESS);
    CHECK_EQ(aclSetAclOpExecutorRepeatable(ex), ACLNN_SUCCESS);
    void *w = NULL;
    if (ws) aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_EQ(aclnnMishBackward(w, ws, ex, NULL), ACLNN_SUCCESS);
    // second run: other grad_output values (x2), into another buffer
    for (int64_t i = 0; i < dy.n; i++) ((float *)dy.data)[i] *= 2;
    CHECK_EQ(aclSetOutputTensorAddr(ex, 0, dx2.t, dx2.data), ACLNN_SUCCESS);
    CHECK_EQ(aclnnMishBackward(w, ws, ex, NULL), ACLNN_SUCCESS);
    CHECK_EQ(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
    if (w) aclrtFree(w);
    logline l[4];
    int n = read_log(g_log, l, 4);
    CHECK_EQ(n, 2);
    stats s1 = stats_of(dx.data, dx.n, ACL_FLOAT), s2 = stats_of(dx2.data, dx2.n, ACL_FLOAT);
    if (n >= 2) {
        check_line(&l[0], "aclnnMishBackward", 0, "gradInput", "float32", "[8,16]", &s1);
        check_line(&l[1], "aclnnMishBackward", 0, "gradInput", "float32", "[8,16]", &s2);
    }
    drop(&x);
    drop(&dy);
    drop(&dx);
    drop(&dx2);
}

// Every other built-in backward logs one line with its name; forwards log nothing.
static void c_every_backward(void) {
    static const int64_t d[] = {3, 4};
    buf g = make(d, 2, ACL_FLOAT, 81, -1, 1), x = make(d, 2, ACL_FLOAT, 82, -2, 2);
    buf y = make(d, 2, ACL_FLOAT, 83, 0.1, 0.9), o = make(d, 2, ACL_FLOAT, 84, 0, 0);
    buf t = make(d, 2, ACL_FLOAT, 85, -0.5, 0.5);
    float one = 1.0f, zero = 0.0f, slope = 0.01f, beta = 1.0f, thr = 20.0f;
    aclScalar *s_one = aclCreateScalar(&one, ACL_FLOAT),
              *s_zero = aclCreateScalar(&zero, ACL_FLOAT);
    aclScalar *s_slope = aclCreateScalar(&slope, ACL_FLOAT),
              *s_beta = aclCreateScalar(&beta, ACL_FLOAT);
    aclScalar *s_thr = aclCreateScalar(&thr, ACL_FLOAT);
    char tanh_[] = "tanh";
    aclnnStatus st;
    OP_RUN(st, aclnnMishGetWorkspaceSize(x.t, o.t, &ws_, &ex_), aclnnMish); // forward: no line
    CHECK_EQ(st, ACLNN_SUCCESS);
    static const char *const expect[][2] = {
        {"aclnnGeluBackward", "gradInput"},         {"aclnnGeluBackwardV2", "gradInput"},
        {"aclnnSiluBackward", "gradInput"},         {"aclnnSigmoidBackward", "gradInput"},
        {"aclnnTanhBackward", "gradInput"},         {"aclnnSoftplusBackward", "gradInput"},
        {"aclnnThresholdBackward", "out"},          {"aclnnLeakyReluBackward", "out"},
        {"aclnnHardswishBackward", "out"},          {"aclnnEluBackward", "gradInput"},
        {"aclnnMishBackwardWithTanhx", "gradInput"}};
    enum { N = sizeof expect / sizeof expect[0] };
    stats s[N];
    int k = 0;
#define STEP(call, exec)                                                                           \
    do {                                                                                           \
        OP_RUN(st, call, exec);                                                                    \
        CHECK_EQ(st, ACLNN_SUCCESS);                                                               \
        s[k++] = stats_of(o.data, o.n, ACL_FLOAT);                                                 \
    } while (0)
    STEP(aclnnGeluBackwardGetWorkspaceSize(g.t, x.t, o.t, &ws_, &ex_), aclnnGeluBackward);
    STEP(aclnnGeluBackwardV2GetWorkspaceSize(g.t, x.t, tanh_, o.t, &ws_, &ex_),
         aclnnGeluBackwardV2);
    STEP(aclnnSiluBackwardGetWorkspaceSize(g.t, x.t, o.t, &ws_, &ex_), aclnnSiluBackward);
    STEP(aclnnSigmoidBackwardGetWorkspaceSize(g.t, y.t, o.t, &ws_, &ex_), aclnnSigmoidBackward);
    STEP(aclnnTanhBackwardGetWorkspaceSize(g.t, y.t, o.t, &ws_, &ex_), aclnnTanhBackward);
    STEP(aclnnSoftplusBackwardGetWorkspaceSize(g.t, x.t, s_beta, s_thr, o.t, &ws_, &ex_),
         aclnnSoftplusBackward);
    STEP(aclnnThresholdBackwardGetWorkspaceSize(g.t, x.t, s_zero, o.t, &ws_, &ex_),
         aclnnThresholdBackward);
    STEP(aclnnLeakyReluBackwardGetWorkspaceSize(g.t, x.t, s_slope, false, o.t, &ws_, &ex_),
         aclnnLeakyReluBackward);
    STEP(aclnnHardswishBackwardGetWorkspaceSize(g.t, x.t, o.t, &ws_, &ex_), aclnnHardswishBackward);
    STEP(aclnnEluBackwardGetWorkspaceSize(g.t, s_one, s_one, s_one, false, x.t, o.t, &ws_, &ex_),
         aclnnEluBackward);
    STEP(aclnnMishBackwardWithTanhxGetWorkspaceSize(g.t, x.t, t.t, o.t, &ws_, &ex_),
         aclnnMishBackwardWithTanhx);
#undef STEP
    logline l[N + 4];
    int n = read_log(g_log, l, N + 4);
    CHECK_EQ(n, N);
    for (int i = 0; i < n && i < N; i++)
        check_line(&l[i], expect[i][0], 0, expect[i][1], "float32", "[3,4]", &s[i]);
    aclDestroyScalar(s_one);
    aclDestroyScalar(s_zero);
    aclDestroyScalar(s_slope);
    aclDestroyScalar(s_beta);
    aclDestroyScalar(s_thr);
    buf *all[] = {&g, &x, &y, &o, &t};
    for (int i = 0; i < 5; i++) drop(all[i]);
}

// The aot entry points: Add/Mul backward log their gradients (under the entry point's name), the
// others through the aclnn backward operator they run.
static void c_aot_backward(void) {
    static const int64_t da[] = {4, 3}, db[] = {3};
    buf a = make(da, 2, ACL_FLOAT, 91, -1, 1), b = make(db, 1, ACL_FLOAT, 92, -1, 1);
    buf y = make(da, 2, ACL_FLOAT, 93, -1, 1), dy = make(da, 2, ACL_FLOAT, 94, -1, 1);
    buf ga = make(da, 2, ACL_FLOAT, 95, 0, 0), gb = make(db, 1, ACL_FLOAT, 96, 0, 0);
    void *params[6] = {a.data, b.data, y.data, dy.data, ga.data, gb.data};
    int ndims[6] = {2, 1, 2, 2, 2, 1};
    int64_t *shapes[6] = {(int64_t *)da, (int64_t *)db, (int64_t *)da,
                          (int64_t *)da, (int64_t *)da, (int64_t *)db};
    const char *dtypes[6] = {"float32", "float32", "float32", "float32", "float32", "float"};
    CHECK_EQ(opgrad_AddBackward(6, params, ndims, shapes, dtypes, NULL, NULL), 0);
    stats add_a = stats_of(ga.data, ga.n, ACL_FLOAT), add_b = stats_of(gb.data, gb.n, ACL_FLOAT);
    CHECK_EQ(opgrad_MulBackward(6, params, ndims, shapes, dtypes, NULL, NULL), 0);
    stats mul_a = stats_of(ga.data, ga.n, ACL_FLOAT), mul_b = stats_of(gb.data, gb.n, ACL_FLOAT);
    // MishBackward: x, y, dy, dx
    void *mp[4] = {a.data, y.data, dy.data, ga.data};
    int mn[4] = {2, 2, 2, 2};
    int64_t *ms[4] = {(int64_t *)da, (int64_t *)da, (int64_t *)da, (int64_t *)da};
    CHECK_EQ(opgrad_MishBackward(4, mp, mn, ms, dtypes, NULL, NULL), 0);
    stats mish = stats_of(ga.data, ga.n, ACL_FLOAT);
    logline l[8];
    int n = read_log(g_log, l, 8);
    CHECK_EQ(n, 5);
    if (n >= 5) {
        check_line(&l[0], "opgrad_AddBackward", 0, "dx", "float32", "[4,3]", &add_a);
        check_line(&l[1], "opgrad_AddBackward", 1, "dother", "float32", "[3]", &add_b);
        check_line(&l[2], "opgrad_MulBackward", 0, "dx", "float32", "[4,3]", &mul_a);
        check_line(&l[3], "opgrad_MulBackward", 1, "dother", "float32", "[3]", &mul_b);
        check_line(&l[4], "aclnnMishBackward", 0, "gradInput", "float32", "[4,3]", &mish);
    }
    buf *all[] = {&a, &b, &y, &dy, &ga, &gb};
    for (int i = 0; i < 6; i++) drop(all[i]);
}

// The public dense entry, as custom backward kernels use it.
static void c_public_entry(void) {
    const float f[] = {1.5f, -2.0f, NAN, 4.0f, INFINITY, -0.25f};
    const double d[] = {1e300, -1e300, 3.0, 1e-300};
    const uint16_t h[] = {0x3c00, 0xc000, 0x7e00, 0x0001}; // fp16: 1, -2, NaN, smallest subnormal
    const uint16_t bf[] = {0x3f80, 0x4040, 0xff80};        // bf16: 1, 3, -Inf
    const float nans[] = {NAN, NAN};
    const int32_t ints[] = {1, 2, 3};
    const int64_t s23[] = {2, 3}, s4[] = {4}, s3[] = {3}, s2[] = {2}, s0[] = {0};
    opgrad_debug_grads_log("MyOpGrad", 0, "dx", "float32", 2, s23, f);
    opgrad_debug_grads_log("MyOpGrad", 1, "dw", "float64", 1, s4, d);
    opgrad_debug_grads_log("MyOpGrad", 2, "db", "float16", 1, s4, h);
    opgrad_debug_grads_log("MyOpGrad", 3, "ds", "bfloat16", 1, s3, bf);
    opgrad_debug_grads_log("MyOpGrad", 4, "dn", "float", 1, s2, nans);
    opgrad_debug_grads_log("MyOpGrad", 5, "di", "int32", 1, s3, ints);
    opgrad_debug_grads_log("MyOpGrad", 6, "de", "float32", 1, s0, NULL);
    opgrad_debug_grads_log("MyOpGrad", 7, "dz", "float32", 0, NULL, f); // 0-d: one element
    opgrad_debug_grads_log(NULL, 8, NULL, NULL, 1, s3, f);              // never crashes
    logline l[12];
    int n = read_log(g_log, l, 12);
    CHECK_EQ(n, 9);
    if (n < 9) return;
    stats s = stats_of(f, 6, ACL_FLOAT);
    check_line(&l[0], "MyOpGrad", 0, "dx", "float32", "[2,3]", &s);
    CHECK(s.nan == 1 && s.inf == 1 && s.min == -2.0 && s.max == 4.0);
    s = stats_of(d, 4, ACL_DOUBLE);
    CHECK_EQ(l[1].n, 4);
    CHECKF(fabs(l[1].l2 / (sqrt(2.0) * 1e300) - 1) < 1e-8, "float64 l2 %.17g (no overflow)",
           l[1].l2);
    CHECKF(close_to(l[1].sum, s.sum), "float64 sum %.17g", l[1].sum);
    s = stats_of(h, 4, ACL_FLOAT16);
    check_line(&l[2], "MyOpGrad", 2, "db", "float16", "[4]", &s);
    CHECK_EQ(l[2].nan, 1);
    s = stats_of(bf, 3, ACL_BF16);
    check_line(&l[3], "MyOpGrad", 3, "ds", "bfloat16", "[3]", &s);
    CHECK_EQ(l[3].inf, 1);
    s = stats_of(nans, 2, ACL_FLOAT);
    check_line(&l[4], "MyOpGrad", 4, "dn", "float", "[2]", &s); // no finite value: min=max=nan
    CHECK(isnan(l[4].min) && isnan(l[4].max) && l[4].sum == 0);
    CHECK(!l[5].stats && strcmp(l[5].dtype, "int32") == 0 && strcmp(l[5].shape, "[3]") == 0);
    s = stats_new();
    check_line(&l[6], "MyOpGrad", 6, "de", "float32", "[0]", &s);
    s = stats_of(f, 1, ACL_FLOAT);
    check_line(&l[7], "MyOpGrad", 7, "dz", "float32", "[]", &s);
    CHECK(strcmp(l[8].op, "?") == 0 && strcmp(l[8].name, "-") == 0 && !l[8].stats);
}

// Without a file the lines go to stderr.
static void c_stderr(void) {
    char path[300];
    snprintf(path, sizeof path, "%s.stderr", g_log);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    int saved = dup(2);
    dup2(fd, 2);
    close(fd);
    buf dx = run_mish_backward(ACL_FLOAT, 101, NULL);
    dup2(saved, 2);
    close(saved);
    logline l[2];
    int n = read_log(path, l, 2);
    CHECK_EQ(n, 1);
    stats s = stats_of(dx.data, dx.n, ACL_FLOAT);
    if (n >= 1) check_line(&l[0], "aclnnMishBackward", 0, "gradInput", "float32", "[8,16]", &s);
    unlink(path);
    drop(&dx);
}

// Monitor off: nothing is written, the file is not even created.
static void c_off(void) {
    CHECK(!opgrad_debug_grads_enabled());
    buf dx = run_mish_backward(ACL_FLOAT, 111, NULL);
    drop(&dx);
    const float f[] = {1, 2};
    const int64_t s2[] = {2};
    opgrad_debug_grads_log("MyOpGrad", 0, "dx", "float32", 1, s2, f);
    static const int64_t da[] = {2}, db[] = {1};
    float a[2] = {1, 2}, b[1] = {3}, y[2], dy[2] = {1, 1}, ga[2], gb[1];
    void *params[6] = {a, b, y, dy, ga, gb};
    int ndims[6] = {1, 1, 1, 1, 1, 1};
    int64_t *shapes[6] = {(int64_t *)da, (int64_t *)db, (int64_t *)da,
                          (int64_t *)da, (int64_t *)da, (int64_t *)db};
    const char *dtypes[6] = {"float32", "float32", "float32", "float32", "float32", "float32"};
    CHECK_EQ(opgrad_AddBackward(6, params, ndims, shapes, dtypes, NULL, NULL), 0);
    CHECK(gb[0] == 2.0f);
    struct stat st;
    CHECKF(stat(g_log, &st) != 0 && errno == ENOENT, "%s exists with the monitor off", g_log);
}

/* ---- the tests (parent) --------------------------------------------------------------------- */

static void test_mish_backward_logged(void) { CHECK(in_child(c_mish_backward, "1", true)); }
static void test_fused_add_scale_backward_logged(void) {
    CHECK(in_child(c_fused_add_scale_backward, "1", true));
}
static void test_nan_inf_counted(void) { CHECK(in_child(c_nan_inf, "1", true)); }
static void test_fp16_bf16(void) { CHECK(in_child(c_half_dtypes, "1", true)); }
static void test_strided_output(void) { CHECK(in_child(c_strided_output, "1", true)); }
static void test_stream_backward_logged(void) { CHECK(in_child(c_stream, "1", true)); }
static void test_threads_never_interleave(void) { CHECK(in_child(c_threads, "1", true)); }
static void test_repeatable_executor(void) { CHECK(in_child(c_repeatable, "1", true)); }
static void test_every_builtin_backward(void) { CHECK(in_child(c_every_backward, "1", true)); }
static void test_aot_backward_logged(void) { CHECK(in_child(c_aot_backward, "1", true)); }
static void test_public_entry(void) { CHECK(in_child(c_public_entry, "1", true)); }
static void test_stderr_without_file(void) { CHECK(in_child(c_stderr, "1", false)); }
static void test_off_when_unset(void) { CHECK(in_child(c_off, NULL, true)); }
static void test_off_when_zero(void) { CHECK(in_child(c_off, "0", true)); }
static void test_off_when_empty(void) { CHECK(in_child(c_off, "", true)); }

int main(void) {
    RUN(test_mish_backward_logged);
    RUN(test_fused_add_scale_backward_logged);
    RUN(test_nan_inf_counted);
    RUN(test_fp16_bf16);
    RUN(test_strided_output);
    RUN(test_stream_backward_logged);
    RUN(test_threads_never_interleave);
    RUN(test_repeatable_executor);
    RUN(test_every_builtin_backward);
    RUN(test_aot_backward_logged);
    RUN(test_public_entry);
    RUN(test_stderr_without_file);
    RUN(test_off_when_unset);
    RUN(test_off_when_zero);
    RUN(test_off_when_empty);
    return test_summary();
}
