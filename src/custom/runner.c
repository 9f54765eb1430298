/* Custom-kernel runner (runner.h). */
#define _GNU_SOURCE // MAP_ANONYMOUS, pipe2, close_range
#include "custom/runner.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "custom/spec.h"
#include "runtime/custom_lib.h"

#define CANARY 0xCD

enum { PHASE_START, PHASE_LOADING, PHASE_CALLING };

// What the child reports, in shared memory (so it survives the child's death).
typedef struct ogr_header {
    int rc;            // the kernel's return value
    int done;          // the child got to the end (rc or load_failed valid)
    int phase;         // how far it got: a death while PHASE_LOADING is a constructor's doing
    int load_failed;   // opgrad_custom_open or a symbol lookup failed: message says why
    long base_rss_kib; // the child's peak resident set when it started (ru_maxrss)
    char message[512];
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

void ogr_size_str(uint64_t bytes, char *buf, size_t size) {
    static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 4) v /= 1024, u++;
    snprintf(buf, size, u ? "%.3g %s" : "%.0f %s", v, unit[u]);
}

// ---------------------------------------------------------------------------------------------
// The job a child runs

typedef struct job {
    ogr_call *c;                // a kernel call (NULL: only load the library)
    const char *symbol;         // ... of this symbol
    opgrad_aot_fn fn;           // ... or of this function (no library needed)
    void *extra;                // fn's extra argument
    const char *const *symbols; // load only: symbols that must exist
    int nsymbols;
} job;

// Runs the job, in the child or (in-process mode) here; the outcome goes to h.
static void do_job(ogr_header *h, const ogr_env *env, const job *j) {
    ogr_call *c = j->c;
    h->message[0] = 0;
    if (j->fn) {
        h->phase = PHASE_CALLING;
        h->rc = j->fn(c->n, c->params, c->ndims, c->shapes, c->dtypes, NULL, j->extra);
        h->done = 1;
        return;
    }
    opgrad_custom_lib *lib = env->lib;
    if (env->isolate) {
        h->phase = PHASE_LOADING; // constructors run in here
        if (og_custom_open_direct(env->library, &lib) != ACLNN_SUCCESS) {
            snprintf(h->message, sizeof h->message, "%s", aclGetRecentErrMsg());
            h->load_failed = h->done = 1;
            return;
        }
    }
    for (int i = 0; i < j->nsymbols; i++)
        if (opgrad_custom_has_symbol(lib, j->symbols[i]) != ACLNN_SUCCESS) {
            snprintf(h->message, sizeof h->message, "%s", aclGetRecentErrMsg());
            h->load_failed = h->done = 1;
            return;
        }
    if (c) {
        h->phase = PHASE_CALLING;
        int rc = 0;
        aclnnStatus s = og_custom_call_rc(lib, j->symbol, c->n, c->params, c->ndims, c->shapes,
                                          c->dtypes, 0, &rc);
        h->rc = rc;
        if (s != ACLNN_SUCCESS && rc == 0) {
            // the kernel was not reached: a missing symbol, a failed reload
            snprintf(h->message, sizeof h->message, "%s", aclGetRecentErrMsg());
            h->load_failed = 1;
        }
    }
    h->done = 1;
    // isolated: the library stays loaded; the child ends with _exit and runs no destructor
}

// ---------------------------------------------------------------------------------------------
// The child process

// The process's address space in bytes (/proc/self/statm), 0 if unknown.
static uint64_t vm_size(void) {
    char buf[128] = "";
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    return strtoull(buf, NULL, 10) * (uint64_t)sysconf(_SC_PAGESIZE);
}

static void close_from(int first) {
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)first, ~0u, 0u) == 0) return;
#endif
    long max = sysconf(_SC_OPEN_MAX);
    for (int fd = first; fd < (max > 0 && max < 65536 ? max : 65536); fd++) close(fd);
}

static _Noreturn void child_main(ogr_header *h, const ogr_env *env, const job *j, int out_fd,
                                 pid_t parent) {
    // a group of its own, so the parent can end it with everything it forked (kill(-pid)); out
    // of the terminal's group, a Ctrl-C reaches only the checker: die with it
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != parent) _exit(127); // the checker ended before the line above
    // stdin from /dev/null; stdout and stderr into the parent's pipe; no other inherited file
    // (the report, a JSON file) for the kernel to write into
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0 && null != 0) dup2(null, 0);
    dup2(out_fd, 1);
    dup2(out_fd, 2);
    close_from(3);
    // as on a terminal: a line printed just before a crash still arrives
    setvbuf(stdout, NULL, _IOLBF, 0);
    setvbuf(stderr, NULL, _IONBF, 0);
    // default dispositions and no blocked signals, so a crash is a crash
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGPIPE, SIGTERM};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal(sigs[i], SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) h->base_rss_kib = ru.ru_maxrss;
    if (env->max_memory) {
        // on top of what the checker's image already takes (a sanitizer's shadow is terabytes)
        uint64_t lim = vm_size() + env->max_memory;
        struct rlimit rl = {(rlim_t)lim, (rlim_t)lim};
        setrlimit(RLIMIT_AS, &rl);
    }
    do_job(h, env, j);
    fflush(stdout);
    fflush(stderr);
    _exit(0);
}

// ---------------------------------------------------------------------------------------------
// The parent: output, the wait, and the clean-up

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// Keeps the first OGR_OUTPUT_MAX bytes (control characters but newline and tab replaced, so the
// output cannot move the cursor or end a line of the report early) and counts them all.
static void keep_output(ogr_outcome *o, const char *buf, size_t n) {
    size_t len = strlen(o->output);
    for (size_t i = 0; i < n && len < OGR_OUTPUT_MAX; i++) {
        unsigned char ch = (unsigned char)buf[i];
        o->output[len++] = (ch < 0x20 && ch != '\n' && ch != '\t') || ch == 0x7f ? '?' : (char)ch;
    }
    o->output[len] = 0;
    o->output_bytes += n;
}

// Reads what the pipe holds now (at most `budget` bytes); false at end of file or an error.
static bool drain(int fd, ogr_outcome *o, size_t budget) {
    char buf[4096];
    while (budget > 0) {
        ssize_t n = read(fd, buf, sizeof buf < budget ? sizeof buf : budget);
        if (n > 0) {
            keep_output(o, buf, (size_t)n);
            budget -= (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
        }
    }
    return true;
}

// The parent pid and start time (clock ticks after boot) of a process, from /proc/<pid>/stat.
static bool proc_stat(pid_t pid, pid_t *ppid, unsigned long long *start) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return false;
    buf[n] = 0;
    char *p = strrchr(buf, ')'); // the command name may hold spaces and parentheses
    if (!p) return false;
    // after ")": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime
    // stime cutime cstime priority nice threads itrealvalue starttime
    int pp = 0;
    unsigned long long st = 0;
    if (sscanf(p + 1,
               " %*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d "
               "%*d %llu",
               &pp, &st) != 2)
        return false;
    *ppid = pp, *start = st;
    return true;
}

// Kills the processes the checker adopted as a subreaper: descendants of a kernel call that
// outlived their parents, including those that left the call's process group with setsid().
// Only children started at or after the call's child (`since`), so a host program's own
// children are left alone. Each kill may orphan more (adopted in turn): a few rounds.
static void kill_adopted(unsigned long long since) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    // no children at all (the usual case): nothing to scan /proc for
    if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 && errno == ECHILD) return;
    pid_t self = getpid();
    for (int round = 0; round < 16; round++) {
        DIR *d = opendir("/proc");
        if (!d) return;
        int killed = 0;
        for (struct dirent *e; (e = readdir(d));) {
            if (!isdigit((unsigned char)e->d_name[0])) continue;
            pid_t pid = (pid_t)atoi(e->d_name), ppid;
            unsigned long long start;
            if (pid == self || !proc_stat(pid, &ppid, &start) || ppid != self || start < since)
                continue;
            kill(pid, SIGKILL);
            while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
            }
            killed++;
        }
        closedir(d);
        if (!killed) return;
    }
}

static void make_subreaper(void) {
    static bool done;
    if (!done) prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    done = true;
}

// Runs the job in a child under env's limits and fills o from h and the child's fate.
static void run_isolated(ogr_header *h, const ogr_env *env, const job *j, ogr_outcome *o) {
    make_subreaper();
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        o->not_run = true;
        snprintf(o->message, sizeof o->message, "cannot make a pipe: %s", strerror(errno));
        return;
    }
    fflush(stdout);
    fflush(stderr);
    double t0 = now_s();
    pid_t self = getpid(), pid = fork();
    if (pid < 0) {
        o->not_run = true;
        snprintf(o->message, sizeof o->message, "fork failed: %s", strerror(errno));
        close(fds[0]), close(fds[1]);
        return;
    }
    if (pid == 0) {
        close(fds[0]);
        child_main(h, env, j, fds[1], self);
    }
    close(fds[1]);
    setpgid(pid, pid); // also here: the group exists before either side goes on
    int rd = fds[0];
    fcntl(rd, F_SETFL, fcntl(rd, F_GETFL) | O_NONBLOCK);
    // Wait for the child's exit, not for the end of its output: a grandchild may hold the pipe
    // open for ever. WNOWAIT leaves the child a zombie, so its pid (= the group's id) cannot be
    // reused before the group is killed below. A pidfd (Linux 5.3) wakes the wait when the child
    // ends; without one, 1 ms naps.
    int pidfd = -1;
#ifdef SYS_pidfd_open
    pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
    for (;;) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        int r = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT);
        if (r == 0 && si.si_pid == pid) break;
        if (r < 0 && errno != EINTR) break;
        double left = t0 + env->timeout_s - now_s();
        if (left <= 0) {
            o->timed_out = true;
            break;
        }
        struct pollfd pfd[2] = {{.fd = rd, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
        double nap = pidfd >= 0 ? (left < 0.25 ? left : 0.25) : (left < 0.001 ? left : 0.001);
        struct timespec ts = {(time_t)nap, (long)((nap - (double)(time_t)nap) * 1e9)};
        // a negative fd is skipped by poll: the pipe after its end of file, a missing pidfd
        if (ppoll(pfd, 2, &ts, NULL) > 0 && pfd[0].revents && !drain(rd, o, 1 << 20))
            close(rd), rd = -1; // every writer closed it: only the pidfd or naps from now on
    }
    if (pidfd >= 0) close(pidfd);
    unsigned long long since = 0;
    pid_t ppid;
    proc_stat(pid, &ppid, &since);
    kill(-pid, SIGKILL); // the group: the child if it hangs, and what it forked
    kill(pid, SIGKILL);
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
    }
    kill_adopted(since);
    if (rd >= 0) drain(rd, o, 1 << 20), close(rd);

    o->in_load = h->phase == PHASE_LOADING;
    if (o->timed_out) return;
    if (WIFSIGNALED(status)) {
        o->signal = WTERMSIG(status);
    } else if (!h->done) {
        o->lost = true;
        o->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    } else {
        o->rc = h->rc;
        o->load_failed = h->load_failed;
        snprintf(o->message, sizeof o->message, "%s", h->message);
    }
    long grew = ru.ru_maxrss - h->base_rss_kib;
    o->mem_grew = h->base_rss_kib > 0 && grew > 0 ? (uint64_t)grew * 1024 : 0;
    // a kernel that hits RLIMIT_AS gets NULL from malloc (and crashes, aborts or gives up) after
    // filling most of the limit: a failure with half the limit in use is reported as the limit's
    bool failed = o->signal || o->lost || (o->rc != 0 && !o->load_failed);
    o->memory = env->max_memory && failed && o->mem_grew * 2 >= env->max_memory;
}

static void run_job(ogr_header *h, const ogr_env *env, const job *j, ogr_outcome *out) {
    memset(out, 0, sizeof *out);
    out->timeout_s = env->timeout_s;
    out->max_memory = env->isolate ? env->max_memory : 0;
    memset(h, 0, sizeof *h);
    if (env->isolate) {
        run_isolated(h, env, j, out);
        return;
    }
    do_job(h, env, j);
    out->rc = h->rc;
    out->load_failed = h->load_failed;
    snprintf(out->message, sizeof out->message, "%s", h->message);
}

void ogr_run(ogr_call *c, const ogr_env *env, const char *symbol, opgrad_aot_fn fn, void *extra,
             ogr_outcome *out) {
    job j = {.c = c, .symbol = symbol, .fn = fn, .extra = extra};
    run_job(c->header, env, &j, out);
}

void ogr_load(const ogr_env *env, const char *const *symbols, int n, ogr_outcome *out) {
    job j = {.symbols = symbols, .nsymbols = n};
    ogr_header *h =
        mmap(NULL, sizeof *h, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (h == MAP_FAILED) {
        memset(out, 0, sizeof *out);
        out->not_run = true;
        snprintf(out->message, sizeof out->message, "mmap failed: %s", strerror(errno));
        return;
    }
    run_job(h, env, &j, out);
    munmap(h, sizeof *h);
}

static const char *signal_name(int s) {
    return s == SIGSEGV   ? "SIGSEGV"
           : s == SIGBUS  ? "SIGBUS"
           : s == SIGFPE  ? "SIGFPE"
           : s == SIGABRT ? "SIGABRT"
           : s == SIGILL  ? "SIGILL"
           : s == SIGKILL ? "SIGKILL"
           : s == SIGPIPE ? "SIGPIPE"
                          : "a signal";
}

void ogr_outcome_str(const ogr_outcome *o, char *buf, size_t size) {
    char how[200] = "", lim[32];
    const char *loading = o->in_load ? " while the library was loading" : "";
    if (o->signal)
        snprintf(how, sizeof how, "crashed with %s (%s)%s", signal_name(o->signal),
                 strsignal(o->signal),
                 o->in_load ? " while the library was loading (in a "
                              "constructor)"
                            : "");
    else if (o->lost && o->in_load)
        snprintf(how, sizeof how,
                 "ended the process (exit status %d) while the library was loading: a "
                 "constructor in it calls exit()",
                 o->exit_status);
    else if (o->lost)
        snprintf(how, sizeof how, "ended the process (exit status %d) instead of returning",
                 o->exit_status);
    else if (o->rc != 0 && !o->load_failed)
        snprintf(how, sizeof how, "returned %d", o->rc);
    if (o->not_run) {
        snprintf(buf, size, "could not be run: %s", o->message);
    } else if (o->timed_out) {
        snprintf(buf, size, "did not %s within %g s%s", o->in_load ? "finish loading" : "return",
                 o->timeout_s,
                 o->in_load ? ": a constructor in the library never returns?" : " (hung?)");
    } else if (o->load_failed) {
        snprintf(buf, size, "could not be loaded%s: %s", loading, o->message);
    } else if (o->memory) {
        char grew[32];
        ogr_size_str(o->max_memory, lim, sizeof lim);
        ogr_size_str(o->mem_grew, grew, sizeof grew);
        snprintf(buf, size,
                 "exceeded the memory limit (--max-memory %s): it held %s more than at its "
                 "start, then %s",
                 lim, grew, how);
    } else if (how[0] && (o->signal || o->lost) && o->max_memory) {
        ogr_size_str(o->max_memory, lim, sizeof lim);
        snprintf(buf, size,
                 "%s (under --max-memory %s; a single allocation above the limit fails at once, "
                 "and a kernel that does not check for NULL crashes like this)",
                 how, lim);
    } else {
        snprintf(buf, size, "%s", how);
    }
}
