/* The gradient monitor (include/opgrad/custom_op.h): with OPGRAD_DEBUG_GRADS=1 every backward
 * that runs through opgrad logs one line per gradient, so the operator that poisons the
 * gradients is visible at once.
 *
 *   opgrad-grads: <op> grad[<i>] <name> <dtype> [<d0>,<d1>,...] n=<elements> sum=<s> min=<m>
 *                 max=<M> l2=<norm> nan=<count> inf=<count>              (one line, no wrap)
 *
 * sum, min, max and l2 are over the finite elements only (so one Inf does not hide the scale of
 * the rest); nan and inf count the others. With no finite element, min and max print "nan". The
 * statistics are accumulated in double (fp16/bf16 are decoded exactly with src/tensor/dtype.h);
 * numbers print with %.9g, which round-trips every float32.
 *
 * The environment is read once (pthread_once): OPGRAD_DEBUG_GRADS set and neither empty nor "0"
 * turns the monitor on; OPGRAD_DEBUG_GRADS_FILE names a file the lines are appended to (opened
 * O_APPEND, created 0644), else they go to stderr. Each line is formatted into a private buffer
 * and written with one write(2) under a mutex, so lines from several threads (streams' dispatcher
 * threads, several callers) never interleave; with O_APPEND a line is also written whole when
 * several processes share the file. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/executor.h"
#include "opgrad/custom_op.h"
#include "tensor/dtype.h"

static pthread_once_t monitor_once = PTHREAD_ONCE_INIT;
static int monitor_on;
static int monitor_fd = 2;
static pthread_mutex_t monitor_lock = PTHREAD_MUTEX_INITIALIZER;

static void monitor_init(void) {
    const char *v = getenv("OPGRAD_DEBUG_GRADS");
    if (!v || !*v || strcmp(v, "0") == 0) return;
    const char *path = getenv("OPGRAD_DEBUG_GRADS_FILE");
    if (path && *path) {
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd >= 0) {
            monitor_fd = fd;
        } else {
            char msg[512];
            int n = snprintf(msg, sizeof msg,
                             "opgrad-grads: cannot open OPGRAD_DEBUG_GRADS_FILE=%s (%s); logging "
                             "to stderr\n",
                             path, strerror(errno));
            if (n > 0) {
                ssize_t w = write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
                (void)w;
            }
        }
    }
    monitor_on = 1;
}

OPGRAD_API int opgrad_debug_grads_enabled(void) {
    pthread_once(&monitor_once, monitor_init);
    return monitor_on;
}

static void write_line(const char *buf, size_t len) {
    pthread_mutex_lock(&monitor_lock);
    while (len > 0) {
        ssize_t w = write(monitor_fd, buf, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        buf += w;
        len -= (size_t)w;
    }
    pthread_mutex_unlock(&monitor_lock);
}

typedef struct grad_stats {
    int64_t n, nan, inf;
    double sum, sumsq, min, max, maxabs;
} grad_stats;

static inline void stats_add(grad_stats *s, double v) {
    if (isnan(v)) {
        s->nan++;
    } else if (isinf(v)) {
        s->inf++;
    } else {
        s->sum += v;
        s->sumsq += v * v;
        if (v < s->min) s->min = v;
        if (v > s->max) s->max = v;
        if (fabs(v) > s->maxabs) s->maxabs = fabs(v);
    }
}

static inline double load(const char *p, aclDataType dt) {
    switch (dt) {
    case ACL_FLOAT: {
        float f;
        memcpy(&f, p, sizeof f);
        return f;
    }
    case ACL_DOUBLE: {
        double d;
        memcpy(&d, p, sizeof d);
        return d;
    }
    case ACL_FLOAT16: {
        uint16_t h;
        memcpy(&h, p, sizeof h);
        return og_f16_to_f32(h);
    }
    default: { // ACL_BF16
        uint16_t b;
        memcpy(&b, p, sizeof b);
        return og_bf16_to_f32(b);
    }
    }
}

// Visits every element of the view (ndim dims, element strides) starting at `first`: with
// scale == 0 accumulates the statistics, else only the sum of squares of v / scale.
static void walk(grad_stats *s, aclDataType dt, int ndim, const int64_t *dims,
                 const int64_t *strides, const char *first, double scale) {
    size_t esz = aclDataTypeSize(dt);
    int64_t idx[OG_EXEC_VIEW_MAX_DIMS] = {0};
    int64_t inner = ndim > 0 ? dims[ndim - 1] : 1;
    int64_t inner_stride = ndim > 0 ? strides[ndim - 1] * (int64_t)esz : 0;
    for (;;) {
        int64_t off = 0;
        for (int d = 0; d < ndim - 1; d++) off += idx[d] * strides[d];
        const char *p = first + off * (int64_t)esz;
        for (int64_t i = 0; i < inner; i++, p += inner_stride) {
            double v = load(p, dt);
            if (scale != 0) {
                if (isfinite(v)) s->sumsq += (v / scale) * (v / scale);
            } else {
                stats_add(s, v);
            }
        }
        int d = ndim - 2;
        for (; d >= 0; d--) {
            if (++idx[d] < dims[d]) break;
            idx[d] = 0;
        }
        if (d < 0) break;
    }
}

// The sum of squares of float64 data can overflow although the norm does not: redo it scaled.
static double l2_norm(const grad_stats *s, aclDataType dt, int ndim, const int64_t *dims,
                      const int64_t *strides, const char *first) {
    if (isfinite(s->sumsq)) return sqrt(s->sumsq);
    grad_stats t = {0};
    walk(&t, dt, ndim, dims, strides, first, s->maxabs);
    return s->maxabs * sqrt(t.sumsq);
}

static aclDataType parse_dtype(const char *dtype) {
    if (opgrad_aot_dtype_is(dtype, "float32")) return ACL_FLOAT;
    if (opgrad_aot_dtype_is(dtype, "float16")) return ACL_FLOAT16;
    if (opgrad_aot_dtype_is(dtype, "bfloat16")) return ACL_BF16;
    if (opgrad_aot_dtype_is(dtype, "float64")) return ACL_DOUBLE;
    return ACL_DT_UNDEFINED;
}

// Appends printf output to buf[*len..cap), keeping *len <= cap - 1 on truncation.
static void append(char *buf, size_t cap, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t cap, size_t *len, const char *fmt, ...) {
    if (*len + 1 >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    *len += (size_t)n < cap - *len ? (size_t)n : cap - *len - 1;
}

enum { LINE_CAP = 1024 };

// One line for a gradient printed with shape (ndim, dims) and read through the view (wndim,
// wdims, wstrides) at `first` (dt ACL_DT_UNDEFINED: no statistics).
static void log_common(const char *op, int index, const char *name, const char *dtype_name,
                       aclDataType dt, int ndim, const int64_t *dims, int wndim,
                       const int64_t *wdims, const int64_t *wstrides, const void *first) {
    char line[LINE_CAP];
    size_t len = 0;
    append(line, LINE_CAP, &len, "opgrad-grads: %s grad[%d] %s %s [", op && *op ? op : "?", index,
           name && *name ? name : "-", dtype_name && *dtype_name ? dtype_name : "?");
    int64_t n = 1;
    bool shape_ok = ndim >= 0 && (ndim == 0 || dims);
    if (shape_ok) {
        for (int d = 0; d < ndim; d++) {
            append(line, LINE_CAP, &len, d ? ",%lld" : "%lld", (long long)dims[d]);
            if (dims[d] < 0) shape_ok = false;
            n *= dims[d] > 0 ? dims[d] : 0;
        }
    } else {
        append(line, LINE_CAP, &len, "?");
    }
    append(line, LINE_CAP, &len, "]");
    if (!shape_ok) {
        append(line, LINE_CAP, &len, " (invalid shape: no statistics)\n");
    } else if (dt == ACL_DT_UNDEFINED) {
        append(line, LINE_CAP, &len, " n=%lld (dtype not summarized)\n", (long long)n);
    } else if (n > 0 && !first) {
        append(line, LINE_CAP, &len, " n=%lld (no data: NULL address)\n", (long long)n);
    } else {
        grad_stats s = {.min = INFINITY, .max = -INFINITY};
        if (n > 0) walk(&s, dt, wndim, wdims, wstrides, first, 0);
        double l2 = n > 0 ? l2_norm(&s, dt, wndim, wdims, wstrides, first) : 0.0;
        bool any = s.min <= s.max;
        append(line, LINE_CAP, &len,
               " n=%lld sum=%.9g min=%.9g max=%.9g l2=%.9g nan=%lld inf=%lld\n", (long long)n,
               s.sum, any ? s.min : NAN, any ? s.max : NAN, l2, (long long)s.nan, (long long)s.inf);
    }
    if (len > 0 && line[len - 1] != '\n') line[len - 1] = '\n'; // truncated: still one line
    write_line(line, len);
}

void og_grads_log_view(const char *op, int index, const char *name, aclDataType dtype, int ndim,
                       const int64_t *dims, const int64_t *strides, const void *first) {
    if (!opgrad_debug_grads_enabled()) return;
    bool known =
        (dtype == ACL_FLOAT || dtype == ACL_FLOAT16 || dtype == ACL_BF16 || dtype == ACL_DOUBLE) &&
        ndim <= OG_EXEC_VIEW_MAX_DIMS;
    log_common(op, index, name, og_dtype_name(dtype), known ? dtype : ACL_DT_UNDEFINED, ndim, dims,
               ndim, dims, strides, first);
}

OPGRAD_API void opgrad_debug_grads_log(const char *op, int index, const char *name,
                                       const char *dtype, int ndim, const int64_t *shape,
                                       const void *data) {
    if (!opgrad_debug_grads_enabled()) return;
    // dense row-major: read it as one flat run of n elements
    int64_t n = 1;
    for (int d = 0; d < ndim && shape; d++) n *= shape[d] > 0 ? shape[d] : 0;
    const int64_t flat_stride = 1;
    log_common(op, index, name, dtype, parse_dtype(dtype), ndim, shape, 1, &n, &flat_stride, data);
}
