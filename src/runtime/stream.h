/* Streams: in-order asynchronous work queues, each served by its own dispatcher thread.
 *
 * Lifetime: any thread may destroy a stream while others submit to it or synchronize on it.
 * Calls that find the stream live before the destroy work on it normally (their work runs, their
 * synchronize returns after it); later ones get "not a live stream". A destroyed handle's address
 * may be reused by a later aclrtCreateStream, as with any freed memory. Waiting for one's own
 * stream from a task on it (synchronize, destroy, aclFinalize) is refused. */
#ifndef OG_STREAM_H
#define OG_STREAM_H

#include <stdbool.h>

#include "acl/acl_rt.h"

/// A unit of queued work: returns 0 or an error status (aclnn or acl code).
typedef int (*og_task_fn)(void *arg);
typedef void (*og_task_free_fn)(void *arg);

/// True for NULL (the synchronous stream) and for streams that exist.
bool og_stream_is_live(aclrtStream stream);

/// Waits until every live stream has run the work queued on it so far (aclFinalize). Errors stay
/// for each stream's aclrtSynchronizeStream. Not from a task (og_stream_in_task): it would wait for
/// itself.
void og_streams_wait_all(void);
/// True on a stream's dispatcher thread, i.e. inside a queued task.
bool og_stream_in_task(void);

/// Queues run(arg) on `stream` and returns at once, or runs it now when stream is NULL (then its
/// status is returned). `release(arg)` is called after the run (may be NULL). An unknown stream,
/// or one being destroyed, is refused with `bad_stream_status`, and release(arg) is still called.
int og_stream_submit(aclrtStream stream, const char *fn, og_task_fn run, og_task_free_fn release,
                     void *arg, int bad_stream_status);

#endif
