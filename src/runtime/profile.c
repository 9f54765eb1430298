/* The operator profiler: events in memory under a mutex (recording is the slow path), written at
 * opgrad_profile_stop (or at exit for OPGRAD_PROFILE) as Chrome trace-event JSON ("X" events:
 * name, start, duration, thread; args: io, bytes, GB/s, GFLOP/s, plan time, threads, stream)
 * plus a per-operator summary on stderr, like torch.profiler's key_averages. */
#define _GNU_SOURCE
#include "runtime/profile.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine/executor.h"
#include "engine/opdesc.h"
#include "engine/probe.h"
#include "opgrad/opgrad.h"
#include "runtime/pool.h"
#include "tensor/dtype.h"
#include "tensor/tensor.h"

atomic_int og_profile_state = -1;

typedef struct event {
    const char *op; // the operator's name (static)
    double start_us, dur_us;
    og_profile_note note; // a copy (the executor may die before the file is written)
    bool has_note;
    long tid;
    int threads;
    const void *stream;
} event;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static event *events;
static size_t nevents, cap;
static char path[1024];
static bool at_exit_registered;

double og_profile_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static void write_at_exit(void) { opgrad_profile_stop(); }

static _Thread_local const void *phase1_op;
static _Thread_local double phase1_t0;

void og_profile_phase1_begin(const void *op) {
    phase1_op = op;
    phase1_t0 = og_profile_now_us();
}

double og_profile_phase1_t0(const void *op) {
    bool mine = phase1_op == op && op;
    phase1_op = NULL;
    return mine ? phase1_t0 : og_profile_now_us();
}

bool og_profile_on_slow(void) {
    int s = atomic_load(&og_profile_state);
    if (s >= 0) return s == 1;
    // first call: OPGRAD_PROFILE=path records the whole process
    const char *env = getenv("OPGRAD_PROFILE");
    if (env && *env) {
        if (opgrad_profile_start(env) == 0) {
            pthread_mutex_lock(&lock);
            if (!at_exit_registered) at_exit_registered = atexit(write_at_exit) == 0;
            pthread_mutex_unlock(&lock);
        }
    } else {
        int expect = -1;
        atomic_compare_exchange_strong(&og_profile_state, &expect, 0);
    }
    return atomic_load(&og_profile_state) == 1;
}

og_profile_note *og_profile_note_new(const struct aclTensor *const *io, int nin, int nio,
                                     double flops, double t0_us) {
    og_profile_note *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    size_t len = 0;
    char shape[160];
    for (int k = 0; k < nio; k++) {
        const aclTensor *t = io[k];
        if (!t) continue;
        n->bytes += (double)t->numel * (double)aclDataTypeSize(t->dtype);
        const char *sep = k == nin && k > 0 ? " -> " : len ? ", " : "";
        int w = snprintf(n->io + len, sizeof n->io - len, "%s%s%s", sep, og_dtype_name(t->dtype),
                         og_shape_str(t->dims, t->ndim, shape, sizeof shape));
        if (w < 0 || (size_t)w >= sizeof n->io - len) break; // cut at the buffer's size
        len += (size_t)w;
    }
    n->flops = flops;
    n->plan_us = og_profile_now_us() - t0_us;
    return n;
}

void og_profile_record(const struct aclOpExecutor *e, double start_us, double end_us,
                       aclrtStream stream) {
    event ev = {.op = e->op->name,
                .start_us = start_us,
                .dur_us = end_us - start_us,
                .tid = (long)syscall(SYS_gettid),
                .threads = og_num_threads(),
                .stream = stream};
    if (e->profile) ev.note = *e->profile, ev.has_note = true;
    pthread_mutex_lock(&lock);
    if (atomic_load(&og_profile_state) == 1) {
        if (nevents == cap) {
            size_t ncap = cap ? 2 * cap : 4096;
            event *grown = realloc(events, ncap * sizeof *grown);
            if (grown) events = grown, cap = ncap;
        }
        if (nevents < cap) events[nevents++] = ev; // (an event is dropped only when memory is)
    }
    pthread_mutex_unlock(&lock);
}

int opgrad_profile_start(const char *file) {
    if (!file || !*file || strlen(file) >= sizeof path) return -1;
    pthread_mutex_lock(&lock);
    int st = -1;
    if (atomic_load(&og_profile_state) != 1) {
        snprintf(path, sizeof path, "%s", file);
        nevents = 0;
        atomic_store(&og_profile_state, 1);
        st = 0;
    }
    pthread_mutex_unlock(&lock);
    return st;
}

// Per-operator totals for the summary, in order of first appearance.
typedef struct total {
    const char *op;
    long calls;
    double us, bytes, flops, plan_us;
    long planned;
} total;

static void summarize(FILE *out, const event *ev, size_t n, const char *file,
                      const og_machine_probe *m) {
    total *t = calloc(n ? n : 1, sizeof *t);
    if (!t) return;
    size_t nt = 0;
    double all = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < nt && strcmp(t[j].op, ev[i].op)) j++;
        if (j == nt) t[nt++].op = ev[i].op;
        t[j].calls++;
        t[j].us += ev[i].dur_us;
        all += ev[i].dur_us;
        if (ev[i].has_note) {
            t[j].bytes += ev[i].note.bytes;
            t[j].flops += ev[i].note.flops;
            t[j].plan_us += ev[i].note.plan_us;
            t[j].planned++;
        }
    }
    fprintf(out, "opgrad profile: %zu launches, %.3f ms in phase 2 (trace: %s)\n", n, all * 1e-3,
            file);
    fprintf(out,
            "machine probe (%s, %d threads): %.1f GB/s (read 2, write 1), %.1f GFLOP/s fp32 FMA; "
            "%%BW and %%peak below are fractions of these\n",
            m->isa, m->threads, m->gbps, m->gflops);
    fprintf(out, "%-34s %8s %11s %10s %9s %6s %9s %6s %9s\n", "operator", "calls", "total ms",
            "mean us", "GB/s", "%BW", "GFLOP/s", "%peak", "plan us");
    for (size_t j = 0; j < nt; j++) {
        char gbs[16] = "-", bw[16] = "-", gfs[16] = "-", pk[16] = "-", plan[16] = "-";
        if (t[j].planned && t[j].us > 0) {
            double rate = t[j].bytes / t[j].us / 1e3;
            snprintf(gbs, sizeof gbs, "%.2f", rate);
            if (m->gbps > 0) snprintf(bw, sizeof bw, "%.0f", 100 * rate / m->gbps);
        }
        if (t[j].flops > 0 && t[j].us > 0) {
            double rate = t[j].flops / t[j].us / 1e3;
            snprintf(gfs, sizeof gfs, "%.2f", rate);
            if (m->gflops > 0) snprintf(pk, sizeof pk, "%.0f", 100 * rate / m->gflops);
        }
        if (t[j].planned) snprintf(plan, sizeof plan, "%.1f", t[j].plan_us / (double)t[j].planned);
        fprintf(out, "%-34s %8ld %11.3f %10.2f %9s %6s %9s %6s %9s\n", t[j].op, t[j].calls,
                t[j].us * 1e-3, t[j].us / (double)t[j].calls, gbs, bw, gfs, pk, plan);
    }
    free(t);
}

long opgrad_profile_stop(void) {
    pthread_mutex_lock(&lock);
    if (atomic_load(&og_profile_state) != 1) {
        pthread_mutex_unlock(&lock);
        return -1;
    }
    atomic_store(&og_profile_state, 0);
    event *ev = events;
    size_t n = nevents;
    events = NULL, nevents = cap = 0;
    char file[sizeof path];
    memcpy(file, path, sizeof file);
    pthread_mutex_unlock(&lock);

    long written = -1;
    og_machine_probe m = og_probe_machine();
    FILE *f = fopen(file, "w");
    if (f) {
        double t0 = n ? ev[0].start_us : 0;
        for (size_t i = 1; i < n; i++)
            if (ev[i].start_us < t0) t0 = ev[i].start_us;
        fprintf(f,
                "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"probe_isa\": \"%s\", "
                "\"probe_threads\": %d, \"probe_GB/s\": %.3f, \"probe_GFLOP/s\": %.3f}, "
                "\"traceEvents\": [\n",
                m.isa, m.threads, m.gbps, m.gflops);
        for (size_t i = 0; i < n; i++) {
            const event *e = &ev[i];
            fprintf(f,
                    "%s{\"name\": \"%s\", \"cat\": \"opgrad\", \"ph\": \"X\", \"ts\": %.3f, "
                    "\"dur\": %.3f, \"pid\": %ld, \"tid\": %ld, \"args\": {\"threads\": %d, "
                    "\"stream\": \"%p\"",
                    i ? ",\n" : "", e->op, e->start_us - t0, e->dur_us, (long)getpid(), e->tid,
                    e->threads, e->stream);
            if (e->has_note) {
                // io holds dtype names, digits, brackets, commas and '>' only: no escaping needed
                fprintf(f, ", \"io\": \"%s\", \"bytes\": %.0f, \"plan_us\": %.3f", e->note.io,
                        e->note.bytes, e->note.plan_us);
                if (e->dur_us > 0) {
                    double rate = e->note.bytes / e->dur_us / 1e3;
                    fprintf(f, ", \"GB/s\": %.3f", rate);
                    if (m.gbps > 0) fprintf(f, ", \"bw_fraction\": %.4f", rate / m.gbps);
                }
                if (e->note.flops > 0 && e->dur_us > 0) {
                    double rate = e->note.flops / e->dur_us / 1e3;
                    fprintf(f, ", \"flops\": %.0f, \"GFLOP/s\": %.3f", e->note.flops, rate);
                    if (m.gflops > 0) fprintf(f, ", \"peak_fraction\": %.4f", rate / m.gflops);
                }
            }
            fprintf(f, "}}");
        }
        fprintf(f, "\n]}\n");
        written = fclose(f) == 0 ? (long)n : -1;
    }
    summarize(stderr, ev, n, file, &m);
    free(ev);
    return written;
}
