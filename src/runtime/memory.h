/* The allocator's own knowledge of its blocks, for the operators' buffer checks. */
#ifndef OG_MEMORY_H
#define OG_MEMORY_H

#include <stdbool.h>
#include <stddef.h>

/// Is p the start of a live aclrtMalloc / aclrtMallocHost block? Then *size = its size in bytes
/// (as requested). Interior and foreign pointers are unknown: false.
bool og_mem_block_size(const void *p, size_t *size);

#endif
