/* Shared by the fuzz targets (tests/fuzz/fuzz_*.c): the libFuzzer entry points, a reader that
 * turns the fuzzer's bytes into choices, and the findings a harness reports itself.
 *
 * Every read past the end of the input returns 0, and 0 is always the plain choice (the default
 * value, the first mode), so a short input is a valid, ordinary call and the seed corpora stay
 * small. */
#ifndef OG_FUZZ_H
#define OG_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// ASan's manual poisoning, when the harness is built with AddressSanitizer (no-op otherwise).
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OG_FUZZ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define OG_FUZZ_ASAN 1
#endif
#ifdef OG_FUZZ_ASAN
#include <sanitizer/asan_interface.h>
#define OG_FUZZ_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define OG_FUZZ_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define OG_FUZZ_POISON(p, n) ((void)(p), (void)(n))
#define OG_FUZZ_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/// A finding of the harness itself (a broken contract, not a sanitizer report): prints and
/// aborts, which libFuzzer records as a crash with the input that caused it.
#define FUZZ_REQUIRE(cond, ...)                                                                    \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FUZZ FINDING %s:%d: ", __FILE__, __LINE__);                           \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

typedef struct fz {
    const uint8_t *p;
    size_t n;
} fz;

static inline uint8_t fz_u8(fz *f) {
    if (!f->n) return 0;
    f->n--;
    return *f->p++;
}
static inline uint16_t fz_u16(fz *f) {
    uint16_t v = fz_u8(f);
    return (uint16_t)(v | fz_u8(f) << 8);
}
static inline uint32_t fz_u32(fz *f) {
    uint32_t v = fz_u16(f);
    return v | (uint32_t)fz_u16(f) << 16;
}
static inline uint64_t fz_u64(fz *f) {
    uint64_t v = fz_u32(f);
    return v | (uint64_t)fz_u32(f) << 32;
}
/// 0 .. n-1 (n >= 1).
static inline int fz_pick(fz *f, int n) { return fz_u8(f) % n; }

#endif
