/* "Device" and pinned-host memory. Both are host memory on the CPU; each kind is tracked in its
 * own registry so that freeing a pointer the runtime did not hand out (or freeing one twice, or
 * with the wrong function) is refused with a message instead of corrupting the heap. */
#include <stdlib.h>
#include <string.h>

#include "acl/acl_rt.h"
#include "runtime/error.h"
#include "runtime/memory.h"
#include "runtime/ptrset.h"
#include "runtime/stream.h"

enum { ALLOC_ALIGN = 64, ALLOC_PAD = 32 };

static og_ptrset device_blocks = OG_PTRSET_INIT;
static og_ptrset host_blocks = OG_PTRSET_INIT;

static aclError allocate(og_ptrset *set, const char *fn, void **ptr, size_t size) {
    if (!ptr) return og_fail(ACL_ERROR_INVALID_PARAM, "%s: ptr is NULL", fn);
    *ptr = NULL;
    if (size == 0) return og_fail(ACL_ERROR_INVALID_PARAM, "%s: size must be > 0", fn);
    // CANN pads every block by 32 bytes and rounds it to its alignment; kernels may rely on it.
    if (size > SIZE_MAX - 2 * ALLOC_ALIGN)
        return og_fail(ACL_ERROR_BAD_ALLOC, "%s: size %zu overflows", fn, size);
    size_t padded = (size + ALLOC_PAD + ALLOC_ALIGN - 1) / ALLOC_ALIGN * ALLOC_ALIGN;
    void *p = NULL;
    if (posix_memalign(&p, ALLOC_ALIGN, padded) != 0)
        return og_fail(ACL_ERROR_BAD_ALLOC, "%s: cannot allocate %zu bytes", fn, size);
    if (!og_ptrset_add(set, p, size)) {
        free(p);
        return og_fail(ACL_ERROR_BAD_ALLOC, "%s: out of memory for the allocation registry", fn);
    }
    *ptr = p;
    return ACL_SUCCESS;
}

static aclError release(og_ptrset *set, og_ptrset *other, const char *fn, const char *other_fn,
                        void *p) {
    if (!p) return og_fail(ACL_ERROR_INVALID_PARAM, "%s: ptr is NULL", fn);
    if (og_ptrset_remove(set, p, NULL)) {
        free(p);
        return ACL_SUCCESS;
    }
    if (og_ptrset_find(other, p, NULL))
        return og_fail(ACL_ERROR_INVALID_PARAM,
                       "%s: %p was allocated by %s's partner; free it with %s", fn, p, other_fn,
                       other_fn);
    return og_fail(ACL_ERROR_INVALID_PARAM,
                   "%s: %p is not a block returned by the allocator (foreign pointer, interior "
                   "pointer, or already freed)",
                   fn, p);
}

bool og_mem_block_size(const void *p, size_t *size) {
    uintptr_t v;
    if (!og_ptrset_find(&device_blocks, p, &v) && !og_ptrset_find(&host_blocks, p, &v))
        return false;
    *size = (size_t)v;
    return true;
}

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
    (void)policy; // every policy is plain host memory here
    return allocate(&device_blocks, "aclrtMalloc", devPtr, size);
}

aclError aclrtFree(void *devPtr) {
    return release(&device_blocks, &host_blocks, "aclrtFree", "aclrtFreeHost", devPtr);
}

aclError aclrtMallocHost(void **hostPtr, size_t size) {
    return allocate(&host_blocks, "aclrtMallocHost", hostPtr, size);
}

aclError aclrtFreeHost(void *hostPtr) {
    return release(&host_blocks, &device_blocks, "aclrtFreeHost", "aclrtFree", hostPtr);
}

static aclError check_copy(const char *fn, void *dst, size_t destMax, const void *src, size_t count,
                           aclrtMemcpyKind kind) {
    if (!dst) return og_fail(ACL_ERROR_INVALID_PARAM, "%s: dst is NULL", fn);
    if (!src) return og_fail(ACL_ERROR_INVALID_PARAM, "%s: src is NULL", fn);
    if (count > destMax)
        return og_fail(ACL_ERROR_INVALID_PARAM, "%s: count %zu exceeds destMax %zu", fn, count,
                       destMax);
    if ((int)kind < ACL_MEMCPY_HOST_TO_HOST || (int)kind > ACL_MEMCPY_INTER_DEVICE_TO_DEVICE)
        return og_fail(ACL_ERROR_INVALID_PARAM, "%s: kind %d is not an aclrtMemcpyKind", fn,
                       (int)kind);
    return ACL_SUCCESS;
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                     aclrtMemcpyKind kind) {
    aclError err = check_copy("aclrtMemcpy", dst, destMax, src, count, kind);
    if (err) return err;
    memmove(dst, src, count);
    return ACL_SUCCESS;
}

aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count) {
    if (!devPtr) return og_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemset: devPtr is NULL");
    if (count > maxCount)
        return og_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemset: count %zu exceeds maxCount %zu",
                       count, maxCount);
    memset(devPtr, value, count);
    return ACL_SUCCESS;
}

typedef struct memcpy_task {
    void *dst;
    const void *src;
    size_t count;
} memcpy_task;

static int run_memcpy_task(void *arg) {
    memcpy_task *t = arg;
    memmove(t->dst, t->src, t->count);
    return ACL_SUCCESS;
}

aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
                          aclrtMemcpyKind kind, aclrtStream stream) {
    aclError err = check_copy("aclrtMemcpyAsync", dst, destMax, src, count, kind);
    if (err) return err;
    memcpy_task *t = malloc(sizeof *t);
    if (!t) return og_fail(ACL_ERROR_BAD_ALLOC, "aclrtMemcpyAsync: out of memory");
    *t = (memcpy_task){dst, src, count};
    return og_stream_submit(stream, "aclrtMemcpyAsync", run_memcpy_task, free, t,
                            ACL_ERROR_INVALID_PARAM);
}
