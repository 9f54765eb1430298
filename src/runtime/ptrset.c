#include "runtime/ptrset.h"

#include <stdlib.h>

enum { EMPTY = 0, DELETED = 1 };

static size_t slot_of(uintptr_t key, size_t capacity) {
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 20) & (capacity - 1);
}

static bool grow(og_ptrset *set) {
    size_t capacity = set->capacity ? set->capacity * 2 : 64;
    if (set->live * 4 < set->capacity) capacity = set->capacity; // mostly tombstones: rehash only
    uintptr_t *keys = calloc(capacity, sizeof *keys);
    uintptr_t *values = calloc(capacity, sizeof *values);
    if (!keys || !values) {
        free(keys);
        free(values);
        return false;
    }
    for (size_t i = 0; i < set->capacity; i++) {
        uintptr_t k = set->keys[i];
        if (k == EMPTY || k == DELETED) continue;
        size_t s = slot_of(k, capacity);
        while (keys[s] != EMPTY) s = (s + 1) & (capacity - 1);
        keys[s] = k;
        values[s] = set->values[i];
    }
    free(set->keys);
    free(set->values);
    set->keys = keys;
    set->values = values;
    set->capacity = capacity;
    set->used = set->live;
    return true;
}

// Returns the slot holding key, or SIZE_MAX. Caller holds the lock.
static size_t locate(const og_ptrset *set, uintptr_t key) {
    if (!set->capacity) return SIZE_MAX;
    size_t s = slot_of(key, set->capacity);
    for (size_t probes = 0; probes < set->capacity; probes++) {
        if (set->keys[s] == EMPTY) return SIZE_MAX;
        if (set->keys[s] == key) return s;
        s = (s + 1) & (set->capacity - 1);
    }
    return SIZE_MAX;
}

bool og_ptrset_add(og_ptrset *set, const void *p, uintptr_t value) {
    uintptr_t key = (uintptr_t)p;
    bool ok = true;
    pthread_mutex_lock(&set->lock);
    size_t s = locate(set, key);
    if (s != SIZE_MAX) {
        set->values[s] = value;
    } else {
        if ((set->used + 1) * 2 > set->capacity) ok = grow(set);
        if (ok) {
            s = slot_of(key, set->capacity);
            while (set->keys[s] != EMPTY && set->keys[s] != DELETED)
                s = (s + 1) & (set->capacity - 1);
            if (set->keys[s] == EMPTY) set->used++;
            set->keys[s] = key;
            set->values[s] = value;
            set->live++;
        }
    }
    pthread_mutex_unlock(&set->lock);
    return ok;
}

bool og_ptrset_remove(og_ptrset *set, const void *p, uintptr_t *value) {
    pthread_mutex_lock(&set->lock);
    size_t s = locate(set, (uintptr_t)p);
    if (s != SIZE_MAX) {
        if (value) *value = set->values[s];
        set->keys[s] = DELETED;
        set->live--;
    }
    pthread_mutex_unlock(&set->lock);
    return s != SIZE_MAX;
}

bool og_ptrset_find(og_ptrset *set, const void *p, uintptr_t *value) {
    pthread_mutex_lock(&set->lock);
    size_t s = locate(set, (uintptr_t)p);
    if (s != SIZE_MAX && value) *value = set->values[s];
    pthread_mutex_unlock(&set->lock);
    return s != SIZE_MAX;
}

bool og_ptrset_find_ref(og_ptrset *set, const void *p, void (*fn)(void *p)) {
    pthread_mutex_lock(&set->lock);
    size_t s = locate(set, (uintptr_t)p);
    if (s != SIZE_MAX) fn((void *)p);
    pthread_mutex_unlock(&set->lock);
    return s != SIZE_MAX;
}

void og_ptrset_each(og_ptrset *set, void (*fn)(void *p, void *ctx), void *ctx) {
    pthread_mutex_lock(&set->lock);
    for (size_t i = 0; i < set->capacity; i++)
        if (set->keys[i] != EMPTY && set->keys[i] != DELETED) fn((void *)set->keys[i], ctx);
    pthread_mutex_unlock(&set->lock);
}
