#include "runtime/stream.h"

#include <pthread.h>
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

typedef struct og_stream {
    pthread_mutex_t lock;
    pthread_cond_t work_ready; // dispatcher waits for work or shutdown
    pthread_cond_t idle;       // synchronizers wait for an empty queue
    task *head, *tail;
    bool running; // dispatcher is executing a task
    bool shutdown;
    int first_error;
    char first_error_msg[512];
    pthread_t dispatcher;
} og_stream;

static og_ptrset live_streams = OG_PTRSET_INIT;

static void *dispatch_loop(void *arg) {
    og_stream *s = arg;
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
    if (pthread_create(&s->dispatcher, NULL, dispatch_loop, s) != 0) {
        free(s);
        return og_fail(ACL_ERROR_RT_FAILURE, "aclrtCreateStream: cannot start a dispatcher thread");
    }
    if (!og_ptrset_add(&live_streams, s, 0)) {
        pthread_mutex_lock(&s->lock);
        s->shutdown = true;
        pthread_cond_signal(&s->work_ready);
        pthread_mutex_unlock(&s->lock);
        pthread_join(s->dispatcher, NULL);
        free(s);
        return og_fail(ACL_ERROR_BAD_ALLOC, "aclrtCreateStream: out of memory");
    }
    *stream = s;
    return ACL_SUCCESS;
}

// Waits for the queue to drain; returns and clears the first error, copying its message into the
// calling thread's aclGetRecentErrMsg.
static int drain(og_stream *s) {
    pthread_mutex_lock(&s->lock);
    while (s->head || s->running) pthread_cond_wait(&s->idle, &s->lock);
    int err = s->first_error;
    if (err) og_set_error("%s", s->first_error_msg);
    s->first_error = 0;
    pthread_mutex_unlock(&s->lock);
    return err;
}

aclError aclrtSynchronizeStream(aclrtStream stream) {
    if (!stream) return ACL_SUCCESS; // the default stream runs synchronously
    if (!og_ptrset_find(&live_streams, stream, NULL))
        return og_fail(ACL_ERROR_INVALID_PARAM,
                       "aclrtSynchronizeStream: stream %p is not a live stream", stream);
    return drain(stream);
}

aclError aclrtDestroyStream(aclrtStream stream) {
    if (!stream) return og_fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyStream: stream is NULL");
    if (!og_ptrset_remove(&live_streams, stream, NULL))
        return og_fail(ACL_ERROR_INVALID_PARAM,
                       "aclrtDestroyStream: stream %p is not a live stream (destroyed twice?)",
                       stream);
    og_stream *s = stream;
    drain(s); // queued work still runs, as on a device
    pthread_mutex_lock(&s->lock);
    s->shutdown = true;
    pthread_cond_signal(&s->work_ready);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->dispatcher, NULL);
    pthread_cond_destroy(&s->work_ready);
    pthread_cond_destroy(&s->idle);
    pthread_mutex_destroy(&s->lock);
    free(s);
    return ACL_SUCCESS;
}

bool og_stream_is_live(aclrtStream stream) {
    return !stream || og_ptrset_find(&live_streams, stream, NULL);
}

int og_stream_submit(aclrtStream stream, const char *fn, og_task_fn run, og_task_free_fn release,
                     void *arg, int bad_stream_status) {
    if (!stream) {
        int status = run(arg);
        if (release) release(arg);
        return status;
    }
    task *t = malloc(sizeof *t);
    if (!t || !og_ptrset_find(&live_streams, stream, NULL)) {
        if (release) release(arg);
        if (!t) return og_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory queueing work", fn);
        free(t);
        return og_fail(bad_stream_status, "%s: stream %p is not a live stream", fn, stream);
    }
    *t = (task){NULL, run, release, arg};
    og_stream *s = stream;
    pthread_mutex_lock(&s->lock);
    if (s->tail)
        s->tail->next = t;
    else
        s->head = t;
    s->tail = t;
    pthread_cond_signal(&s->work_ready);
    pthread_mutex_unlock(&s->lock);
    return 0;
}
