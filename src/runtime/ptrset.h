/* A thread-safe set of live pointers (allocations, streams, executors), so that the runtime can
 * refuse a foreign or stale handle with a clear status instead of dereferencing it. */
#ifndef OG_PTRSET_H
#define OG_PTRSET_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct og_ptrset {
    pthread_mutex_t lock;
    uintptr_t *keys; // open addressing; 0 = empty, 1 = deleted
    uintptr_t *values;
    size_t capacity; // power of two
    size_t used;     // live + deleted slots
    size_t live;
} og_ptrset;

#define OG_PTRSET_INIT                                                                             \
    { PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0, 0, 0 }

/// Adds p with a value; returns false when out of memory.
bool og_ptrset_add(og_ptrset *set, const void *p, uintptr_t value);
/// Removes p; returns true and its value (if value != NULL) when it was present.
bool og_ptrset_remove(og_ptrset *set, const void *p, uintptr_t *value);
/// Looks p up without removing it.
bool og_ptrset_find(og_ptrset *set, const void *p, uintptr_t *value);
/// Looks p up and, when it is present, calls fn(p) before the set's lock is released: a reference
/// that fn takes is ordered before any og_ptrset_remove of p, so the remover (who then drops the
/// registry's reference) cannot free p between the lookup and the caller's use. fn must not call
/// into the set.
bool og_ptrset_find_ref(og_ptrset *set, const void *p, void (*fn)(void *p));
/// Calls fn(p, ctx) for every member, under the set's lock (fn must not call into the set).
void og_ptrset_each(og_ptrset *set, void (*fn)(void *p, void *ctx), void *ctx);

#endif
