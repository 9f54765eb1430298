/* Custom-kernel runner (runner.h). */
#define _DEFAULT_SOURCE // MAP_ANONYMOUS
#include "custom/runner.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "custom/spec.h"

#define CANARY 0xCD

typedef struct ogr_header {
    int rc;
    int done;
    char message[256];
} ogr_header;

static size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

bool ogr_alloc(ogr_call *c, int n, const aclDataType *dtypes, const ogc_shape *shapes,
               size_t tail) {
    memset(c, 0, sizeof *c);
    if (n < 0 || n > OGR_MAX_PARAMS) return false;
    long page = sysconf(_SC_PAGESIZE);
    size_t total = align64(sizeof(ogr_header));
    for (int i = 0; i < n; i++) {
        size_t es = aclDataTypeSize(dtypes[i]);
        int64_t numel = 1;
        for (int d = 0; d < shapes[i].ndim; d++) numel *= shapes[i].dims[d];
        if (numel < 0 || (uint64_t)numel > (1ull << 30)) return false;
        c->p[i] = (ogr_param){
            .dtype = dtypes[i], .shape = shapes[i], .bytes = (size_t)numel * es, .tail = tail};
        total += align64(c->p[i].bytes + tail);
    }
    total = (total + (size_t)page - 1) / (size_t)page * (size_t)page;
    // one more page, inaccessible: a runaway write past the last canary zone faults
    c->map_size = total + (size_t)page;
    c->map = mmap(NULL, c->map_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (c->map == MAP_FAILED) {
        c->map = NULL;
        return false;
    }
    mprotect((char *)c->map + total, (size_t)page, PROT_NONE);
    c->header = c->map;
    size_t off = align64(sizeof(ogr_header));
    c->n = n;
    for (int i = 0; i < n; i++) {
        // the last param ends right at the guard page's canary zone, so its overrun is measured
        c->p[i].data = (char *)c->map + off;
        off += align64(c->p[i].bytes + tail);
        c->params[i] = c->p[i].data;
        c->ndims[i] = c->p[i].shape.ndim;
        c->shapes[i] = c->p[i].shape.dims;
        c->dtypes[i] = ogs_dtype_str(dtypes[i]);
        ogr_poison(c, i, 0);
    }
    return true;
}

void ogr_free(ogr_call *c) {
    if (c->map) munmap(c->map, c->map_size);
    c->map = NULL;
}

void ogr_poison(ogr_call *c, int i, unsigned char byte) {
    memset(c->p[i].data, byte, c->p[i].bytes);
    memset((char *)c->p[i].data + c->p[i].bytes, CANARY, c->p[i].tail);
}

size_t ogr_overrun(const ogr_call *c, int i) {
    const unsigned char *t = (const unsigned char *)c->p[i].data + c->p[i].bytes;
    size_t last = c->p[i].tail;
    while (last > 0 && t[last - 1] == CANARY) last--;
    return last;
}

static void call(ogr_call *c, opgrad_custom_lib *lib, const char *symbol, opgrad_aot_fn fn,
                 void *extra) {
    ogr_header *h = c->header;
    h->message[0] = 0;
    if (lib) {
        aclnnStatus s =
            opgrad_custom_call(lib, symbol, c->n, c->params, c->ndims, c->shapes, c->dtypes, 0);
        if (s != ACLNN_SUCCESS) {
            // the kernel's own return code is in the message; keep the text
            snprintf(h->message, sizeof h->message, "%s", aclGetRecentErrMsg());
            h->rc = s == ACLNN_ERR_INNER ? -1 : (int)s;
        } else {
            h->rc = 0;
        }
    } else {
        h->rc = fn(c->n, c->params, c->ndims, c->shapes, c->dtypes, NULL, extra);
    }
    h->done = 1;
}

void ogr_run(ogr_call *c, opgrad_custom_lib *lib, const char *symbol, opgrad_aot_fn fn, void *extra,
             bool isolate, int timeout_s, ogr_outcome *out) {
    memset(out, 0, sizeof *out);
    c->header->done = 0;
    if (!isolate) {
        call(c, lib, symbol, fn, extra);
        out->rc = c->header->rc;
        snprintf(out->message, sizeof out->message, "%s", c->header->message);
        return;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        out->lost = true;
        snprintf(out->message, sizeof out->message, "fork failed: %s", strerror(errno));
        return;
    }
    if (pid == 0) {
        // the child: default signal dispositions so a crash is a crash, then the kernel
        signal(SIGSEGV, SIG_DFL), signal(SIGBUS, SIG_DFL), signal(SIGFPE, SIG_DFL);
        signal(SIGILL, SIG_DFL), signal(SIGABRT, SIG_DFL);
        call(c, lib, symbol, fn, extra);
        _exit(0);
    }
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int status = 0;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) {
            out->lost = true;
            snprintf(out->message, sizeof out->message, "waitpid failed: %s", strerror(errno));
            return;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec >= timeout_s) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            out->timed_out = true;
            return;
        }
        struct timespec nap = {0, 200000};
        nanosleep(&nap, NULL);
    }
    if (WIFSIGNALED(status)) {
        out->signal = WTERMSIG(status);
        return;
    }
    if (!c->header->done) {
        out->lost = true;
        snprintf(out->message, sizeof out->message,
                 "the kernel ended the process (exit status %d) instead of returning",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return;
    }
    out->rc = c->header->rc;
    snprintf(out->message, sizeof out->message, "%s", c->header->message);
}

void ogr_outcome_str(const ogr_outcome *o, char *buf, size_t size) {
    if (o->signal)
        snprintf(buf, size, "crashed with %s (%s)",
                 o->signal == SIGSEGV   ? "SIGSEGV"
                 : o->signal == SIGBUS  ? "SIGBUS"
                 : o->signal == SIGFPE  ? "SIGFPE"
                 : o->signal == SIGABRT ? "SIGABRT"
                 : o->signal == SIGILL  ? "SIGILL"
                                        : "a signal",
                 strsignal(o->signal));
    else if (o->timed_out)
        snprintf(buf, size, "did not return within the time limit (hung?)");
    else if (o->lost)
        snprintf(buf, size, "%s", o->message);
    else if (o->rc != 0)
        snprintf(buf, size, "returned %d%s%s", o->rc, o->message[0] ? ": " : "", o->message);
    else if (size)
        buf[0] = 0;
}
