/* Streams: in-order asynchronous work queues, each served by its own dispatcher thread. */
#ifndef OG_STREAM_H
#define OG_STREAM_H

#include <stdbool.h>

#include "acl/acl_rt.h"

/// A unit of queued work: returns 0 or an error status (aclnn or acl code).
typedef int (*og_task_fn)(void *arg);
typedef void (*og_task_free_fn)(void *arg);

/// True for NULL (the synchronous stream) and for streams that exist.
bool og_stream_is_live(aclrtStream stream);

/// Queues run(arg) on `stream` and returns at once, or runs it now when stream is NULL (then its
/// status is returned). `release(arg)` is called after the run (may be NULL). An unknown stream
/// is refused with `bad_stream_status`, and release(arg) is still called.
int og_stream_submit(aclrtStream stream, const char *fn, og_task_fn run, og_task_free_fn release,
                     void *arg, int bad_stream_status);

#endif
