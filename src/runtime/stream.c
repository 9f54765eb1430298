#include "runtime/stream.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "runtime/error.h"
#include "runtime/ptrset.h"

typedef struct task {
    struct task *next;
    og_task_fn run;
    og_task_free_fn release;
    void *arg;
} task;

// Lifetime: a stream is freed when its last reference goes. The registry holds one from
// aclrtCreateStream until aclrtDestroyStream removes the stream (that reference passes to the
// destroyer); every call that uses a stream handle takes one more for its duration, found and
// taken under the registry's lock (acquire), so a concurrent destroy can never free the stream
// between the lookup and the use. Destroy marks the stream dying (later submits are refused),
// waits for the work already accepted, stops and joins the dispatcher, and drops its reference.
typedef struct og_stream {
    pthread_mutex_t lock;
    pthread_cond_t work_ready; // dispatcher waits for work or shutdown
    pthread_cond_t idle;       // synchronizers wait for an empty queue
    task *head, *tail;
    bool running;  // dispatcher is executing a task
    bool dying;    // aclrtDestroyStream has begun: submits are refused
    bool shutdown; // the dispatcher exits once the queue is empty
    int first_error;
    char first_error_msg[512];
    pthread_t dispatcher;
    atomic_int refs;                 // the registry's (until destroyed) + one per call in progress
    struct og_stream *finalize_next; // og_streams_wait_all's list (under its lock)
} og_stream;

static og_ptrset live_streams = OG_PTRSET_INIT;

// The stream whose dispatcher is this thread (NULL on other threads): a task that waits for its
// own stream would wait for itself, so such calls are refused.
static _Thread_local og_stream *running_on;

static void take_ref(void *p) { atomic_fetch_add(&((og_stream *)p)->refs, 1); }

// The live stream behind a handle, with a reference the caller must release; NULL when the handle
// is not a live stream (never dereferenced then).
static og_stream *acquire(aclrtStream stream) {
    return og_ptrset_find_ref(&live_streams, stream, take_ref) ? stream : NULL;
}

static void release(og_stream *s) {
    if (atomic_fetch_sub(&s->refs, 1) != 1) return;
    pthread_cond_destroy(&s->work_ready);
    pthread_cond_destroy(&s->idle);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

static void *dispatch_loop(void *arg) {
    og_stream *s = arg;
    running_on = s;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (!s->head && !s->shutdown) pthread_cond_wait(&s->work_ready, &s->lock);
        if (!s->head) break; // shutdown with an empty queue
        task *t = s->head;
        s->head = t->next;
        if (!s->head) s->tail = NULL;
        s->running = true;
        pthread_mutex_unlock(&s->lock);

        int status = t->run(t->arg);
        if (t->release) t->release(t->arg);
        free(t);

        pthread_mutex_lock(&s->lock);
        s->running = false;
        if (status != 0 && s->first_error == 0) {
            s->first_error = status;
            snprintf(s->first_error_msg, sizeof s->first_error_msg, "%s", aclGetRecentErrMsg());
        }
        if (!s->head) pthread_cond_broadcast(&s->idle);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

aclError aclrtCreateStream(aclrtStream *stream) {
    if (!stream) return og_fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateStream: stream is NULL");
    *stream = NULL;
    og_stream *s = calloc(1, sizeof *s);
    if (!s) return og_fail(ACL_ERROR_BAD_ALLOC, "aclrtCreateStream: out of memory");
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->work_ready, NULL);
    pthread_cond_init(&s->idle, NULL);
    atomic_init(&s->refs, 1); // the registry's
    if (pthread_create(&s->dispatcher, NULL, dispatch_loop, s) != 0) {
        release(s);
        return og_fail(ACL_ERROR_RT_FAILURE, "aclrtCreateStream: cannot start a dispatcher thread");
    }
    if (!og_ptrset_add(&live_streams, s, 0)) {
        pthread_mutex_lock(&s->lock);
        s->shutdown = true;
        pthread_cond_signal(&s->work_ready);
        pthread_mutex_unlock(&s->lock);
        pthread_join(s->dispatcher, NULL);
        release(s);
        return og_fail(ACL_ERROR_BAD_ALLOC, "aclrtCreateStream: out of memory");
    }
    *stream = s;
    return ACL_SUCCESS;
}

// Waits until the queue is empty and the dispatcher idle. With take_error, returns and clears the
// first error of that work, copying its message into this thread's aclGetRecentErrMsg.
static int wait_idle(og_stream *s, bool take_error) {
    pthread_mutex_lock(&s->lock);
    while (s->head || s->running) pthread_cond_wait(&s->idle, &s->lock);
    int err = 0;
    if (take_error) {
        err = s->first_error;
        if (err) og_set_error("%s", s->first_error_msg);
        s->first_error = 0;
    }
    pthread_mutex_unlock(&s->lock);
    return err;
}

// The calls below that wait for a stream refuse to do so from a task running on it: the task
// would wait for itself.
static aclError refuse_own_stream(const char *fn, og_stream *s) {
    aclError st = og_fail(
        ACL_ERROR_INVALID_PARAM,
        "%s: called from a task running on stream %p, which would wait for itself", fn, (void *)s);
    release(s);
    return st;
}

aclError aclrtSynchronizeStream(aclrtStream stream) {
    if (!stream) return ACL_SUCCESS; // the default stream runs synchronously
    og_stream *s = acquire(stream);
    if (!s)
        return og_fail(ACL_ERROR_INVALID_PARAM,
                       "aclrtSynchronizeStream: stream %p is not a live stream", stream);
    if (s == running_on) return refuse_own_stream("aclrtSynchronizeStream", s);
    // On a stream being destroyed this returns once the work accepted before the destroy has run.
    int err = wait_idle(s, true);
    release(s);
    return err;
}

aclError aclrtDestroyStream(aclrtStream stream) {
    if (!stream) return og_fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyStream: stream is NULL");
    og_stream *s = acquire(stream);
    if (s && s == running_on) return refuse_own_stream("aclrtDestroyStream", s);
    // Of concurrent destroys only the one that removes the stream goes on; it inherits the
    // registry's reference.
    if (!s || !og_ptrset_remove(&live_streams, s, NULL)) {
        if (s) release(s);
        return og_fail(ACL_ERROR_INVALID_PARAM,
                       "aclrtDestroyStream: stream %p is not a live stream (destroyed already, or "
                       "being destroyed)",
                       stream);
    }
    pthread_mutex_lock(&s->lock);
    s->dying = true; // submits are refused from here on, so the queue only shrinks
    pthread_mutex_unlock(&s->lock);
    // Work accepted before still runs, as on a device. Its first error is left for a concurrent
    // aclrtSynchronizeStream.
    wait_idle(s, false);
    pthread_mutex_lock(&s->lock);
    s->shutdown = true;
    pthread_cond_signal(&s->work_ready);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->dispatcher, NULL);
    release(s); // the registry's
    release(s); // ours; the last holder (perhaps a synchronizer still returning) frees
    return ACL_SUCCESS;
}

static void collect(void *p, void *ctx) {
    og_stream *s = p, **list = ctx;
    take_ref(s);
    s->finalize_next = *list;
    *list = s;
}

void og_streams_wait_all(void) {
    static pthread_mutex_t one_at_a_time = PTHREAD_MUTEX_INITIALIZER; // guards finalize_next
    pthread_mutex_lock(&one_at_a_time);
    og_stream *list = NULL;
    og_ptrset_each(&live_streams, collect, &list);
    while (list) {
        og_stream *s = list;
        list = s->finalize_next;
        wait_idle(s, false); // errors stay for the stream's own aclrtSynchronizeStream
        release(s);
    }
    pthread_mutex_unlock(&one_at_a_time);
}

bool og_stream_in_task(void) { return running_on != NULL; }

bool og_stream_is_live(aclrtStream stream) {
    return !stream || og_ptrset_find(&live_streams, stream, NULL);
}

int og_stream_submit(aclrtStream stream, const char *fn, og_task_fn run,
                     og_task_free_fn release_arg, void *arg, int bad_stream_status) {
    if (!stream) {
        int status = run(arg);
        if (release_arg) release_arg(arg);
        return status;
    }
    task *t = malloc(sizeof *t);
    if (!t) {
        if (release_arg) release_arg(arg);
        return og_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory queueing work", fn);
    }
    *t = (task){NULL, run, release_arg, arg};
    og_stream *s = acquire(stream);
    bool found = s != NULL, queued = false;
    if (found) {
        pthread_mutex_lock(&s->lock);
        if (!s->dying) {
            if (s->tail)
                s->tail->next = t;
            else
                s->head = t;
            s->tail = t;
            pthread_cond_signal(&s->work_ready);
            queued = true;
        }
        pthread_mutex_unlock(&s->lock);
        release(s);
    }
    if (queued) return 0;
    free(t);
    if (release_arg) release_arg(arg);
    return og_fail(bad_stream_status, "%s: stream %p is not a live stream%s", fn, stream,
                   found ? " (it is being destroyed)" : "");
}
