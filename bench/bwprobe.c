/* Same-process memory-bandwidth probe: see bwprobe.h.
 *
 * The kernels are compiled for several vector widths with __attribute__((target)) and chosen at
 * run time with __builtin_cpu_supports, so this file builds with the project's generic x86-64
 * flags and runs on any x86-64 CPU (the AVX-512 code is only called where the CPU and OS
 * support it). On other architectures only the portable C kernel exists. */
#include "bwprobe.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#if defined(__x86_64__) || defined(__i386__)
#define PROBE_X86 1
#include <immintrin.h>
#else
#define PROBE_X86 0
#endif

#define COMPILER_BARRIER() __asm__ volatile("" ::: "memory")

typedef struct probe_job {
    const unsigned char *a, *b; // b == NULL: rd1wr1
    unsigned char *c;
    size_t len; // bytes of this thread's range
    long reps;
    bool nt;
} probe_job;

typedef void (*probe_fn)(const probe_job *job);

// Bytes before the destination is `align`-aligned, and the end of the whole-block body.
static void split_body(const probe_job *j, size_t align, size_t block, size_t *head, size_t *end) {
    size_t h = (align - (uintptr_t)j->c % align) % align;
    if (h > j->len) h = j->len;
    *head = h;
    *end = h + (j->len - h) / block * block;
}

// Byte-wise edges (only where a range is not a multiple of the vector block).
static void edges(const probe_job *j, size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; i++) j->c[i] = (unsigned char)(j->a[i] + (j->b ? j->b[i] : 1u));
}

// Portable kernel: 32-bit lanes, normal stores only (there is no portable streaming store).
static void kernel_c(const probe_job *j) {
    size_t head, end;
    split_body(j, 4, 4, &head, &end);
    for (long r = 0; r < j->reps; r++) {
        edges(j, 0, head);
        const uint32_t *a = (const uint32_t *)(const void *)(j->a + head);
        uint32_t *c = (uint32_t *)(void *)(j->c + head);
        size_t n = (end - head) / 4;
        if (j->b) {
            const uint32_t *b = (const uint32_t *)(const void *)(j->b + head);
            for (size_t i = 0; i < n; i++) c[i] = a[i] + b[i];
        } else {
            for (size_t i = 0; i < n; i++) c[i] = a[i] + 1u;
        }
        edges(j, end, j->len);
        COMPILER_BARRIER();
    }
}

#if PROBE_X86
/* One kernel per vector width: VT vector type, W bytes per vector, four vectors per step.
 * LOAD is unaligned (sources may be offset from the destination), STORE/STREAM aligned. */
#define PROBE_KERNEL(name, target_isa, VT, W, LOAD, STORE, STREAM, ADD, SET1)                      \
    __attribute__((target(target_isa))) static void name(const probe_job *j) {                     \
        size_t head, end;                                                                          \
        split_body(j, W, 4 * W, &head, &end);                                                      \
        const VT one = SET1(1);                                                                    \
        for (long r = 0; r < j->reps; r++) {                                                       \
            edges(j, 0, head);                                                                     \
            const unsigned char *a = j->a, *b = j->b;                                              \
            unsigned char *c = j->c;                                                               \
            if (b && j->nt) {                                                                      \
                for (size_t i = head; i < end; i += 4 * W)                                         \
                    for (size_t v = 0; v < 4 * W; v += W)                                          \
                        STREAM((VT *)(void *)(c + i + v),                                          \
                               ADD(LOAD((const VT *)(const void *)(a + i + v)),                    \
                                   LOAD((const VT *)(const void *)(b + i + v))));                  \
            } else if (b) {                                                                        \
                for (size_t i = head; i < end; i += 4 * W)                                         \
                    for (size_t v = 0; v < 4 * W; v += W)                                          \
                        STORE((VT *)(void *)(c + i + v),                                           \
                              ADD(LOAD((const VT *)(const void *)(a + i + v)),                     \
                                  LOAD((const VT *)(const void *)(b + i + v))));                   \
            } else if (j->nt) {                                                                    \
                for (size_t i = head; i < end; i += 4 * W)                                         \
                    for (size_t v = 0; v < 4 * W; v += W)                                          \
                        STREAM((VT *)(void *)(c + i + v),                                          \
                               ADD(LOAD((const VT *)(const void *)(a + i + v)), one));             \
            } else {                                                                               \
                for (size_t i = head; i < end; i += 4 * W)                                         \
                    for (size_t v = 0; v < 4 * W; v += W)                                          \
                        STORE((VT *)(void *)(c + i + v),                                           \
                              ADD(LOAD((const VT *)(const void *)(a + i + v)), one));              \
            }                                                                                      \
            edges(j, end, j->len);                                                                 \
            if (j->nt) _mm_sfence();                                                               \
            COMPILER_BARRIER();                                                                    \
        }                                                                                          \
    }

PROBE_KERNEL(kernel_sse2, "sse2", __m128i, 16, _mm_loadu_si128, _mm_store_si128, _mm_stream_si128,
             _mm_add_epi32, _mm_set1_epi32)
PROBE_KERNEL(kernel_avx2, "avx2", __m256i, 32, _mm256_loadu_si256, _mm256_store_si256,
             _mm256_stream_si256, _mm256_add_epi32, _mm256_set1_epi32)
PROBE_KERNEL(kernel_avx512, "avx512f", __m512i, 64, _mm512_loadu_si512, _mm512_store_si512,
             _mm512_stream_si512, _mm512_add_epi32, _mm512_set1_epi32)
#endif

static probe_isa best_isa(void) {
#if PROBE_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return PROBE_ISA_AVX512;
    if (__builtin_cpu_supports("avx2")) return PROBE_ISA_AVX2;
    return PROBE_ISA_SSE2;
#else
    return PROBE_ISA_C;
#endif
}

static probe_isa current_isa = PROBE_ISA_AUTO;

probe_isa probe_set_isa(probe_isa isa) {
    probe_isa best = best_isa();
    current_isa = (isa == PROBE_ISA_AUTO || isa > best) ? best : isa;
    return current_isa;
}

const char *probe_isa_name(probe_isa isa) {
    switch (isa) {
    case PROBE_ISA_C:
        return "c";
    case PROBE_ISA_SSE2:
        return "sse2";
    case PROBE_ISA_AVX2:
        return "avx2";
    case PROBE_ISA_AVX512:
        return "avx512";
    default:
        return "auto";
    }
}

static probe_fn kernel_for(probe_isa isa) {
    switch (isa) {
#if PROBE_X86
    case PROBE_ISA_AVX512:
        return kernel_avx512;
    case PROBE_ISA_AVX2:
        return kernel_avx2;
    case PROBE_ISA_SSE2:
        return kernel_sse2;
#endif
    default:
        return kernel_c;
    }
}

struct probe_pool {
    int nthreads;
    pthread_t *helpers;
    pthread_mutex_t lock;
    pthread_cond_t start, done;
    unsigned long generation;
    int pending;
    bool quit;
    probe_fn fn;
    probe_job *jobs; // [nthreads]
};

typedef struct helper_arg {
    probe_pool *pool;
    int index;
} helper_arg;

static void *helper_main(void *p) {
    helper_arg arg = *(helper_arg *)p;
    free(p);
    probe_pool *pool = arg.pool;
    unsigned long seen = 0;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        while (pool->generation == seen && !pool->quit)
            pthread_cond_wait(&pool->start, &pool->lock);
        if (pool->quit) break;
        seen = pool->generation;
        probe_fn fn = pool->fn;
        pthread_mutex_unlock(&pool->lock);
        fn(&pool->jobs[arg.index]);
        pthread_mutex_lock(&pool->lock);
        if (--pool->pending == 0) pthread_cond_signal(&pool->done);
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

probe_pool *probe_pool_create(int nthreads) {
    if (nthreads < 1) return NULL;
    if (current_isa == PROBE_ISA_AUTO) probe_set_isa(PROBE_ISA_AUTO);
    probe_pool *pool = calloc(1, sizeof *pool);
    if (!pool) return NULL;
    pool->nthreads = nthreads;
    pool->jobs = calloc((size_t)nthreads, sizeof *pool->jobs);
    pool->helpers = calloc((size_t)nthreads, sizeof *pool->helpers);
    if (!pool->jobs || !pool->helpers) {
        free(pool->jobs);
        free(pool->helpers);
        free(pool);
        return NULL;
    }
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->start, NULL);
    pthread_cond_init(&pool->done, NULL);
    for (int t = 1; t < nthreads; t++) {
        helper_arg *arg = malloc(sizeof *arg);
        if (arg) *arg = (helper_arg){pool, t};
        if (!arg || pthread_create(&pool->helpers[t], NULL, helper_main, arg) != 0) {
            free(arg);
            pool->nthreads = t; // destroy joins the helpers started so far
            probe_pool_destroy(pool);
            return NULL;
        }
    }
    return pool;
}

void probe_pool_destroy(probe_pool *pool) {
    if (!pool) return;
    pthread_mutex_lock(&pool->lock);
    pool->quit = true;
    pthread_cond_broadcast(&pool->start);
    pthread_mutex_unlock(&pool->lock);
    for (int t = 1; t < pool->nthreads; t++) pthread_join(pool->helpers[t], NULL);
    pthread_mutex_destroy(&pool->lock);
    pthread_cond_destroy(&pool->start);
    pthread_cond_destroy(&pool->done);
    free(pool->jobs);
    free(pool->helpers);
    free(pool);
}

int probe_pool_threads(const probe_pool *pool) { return pool ? pool->nthreads : 0; }

void probe_run(probe_pool *pool, probe_kind kind, bool nontemporal, const void *a, const void *b,
               void *c, size_t bytes, long reps) {
    int nt = pool->nthreads;
    // Contiguous ranges, each a whole number of cache lines (the last one takes the rest).
    size_t chunk = ((bytes + (size_t)nt - 1) / (size_t)nt + 63) / 64 * 64;
    for (int t = 0; t < nt; t++) {
        size_t lo = (size_t)t * chunk, hi = lo + chunk;
        if (lo > bytes) lo = bytes;
        if (hi > bytes) hi = bytes;
        pool->jobs[t] = (probe_job){
            .a = (const unsigned char *)a + lo,
            .b = kind == PROBE_RD2WR1 ? (const unsigned char *)b + lo : NULL,
            .c = (unsigned char *)c + lo,
            .len = hi - lo,
            .reps = reps,
            .nt = nontemporal,
        };
    }
    probe_fn fn = kernel_for(current_isa);
    if (nt == 1) {
        fn(&pool->jobs[0]);
        return;
    }
    pthread_mutex_lock(&pool->lock);
    pool->fn = fn;
    pool->pending = nt - 1;
    pool->generation++;
    pthread_cond_broadcast(&pool->start);
    pthread_mutex_unlock(&pool->lock);
    fn(&pool->jobs[0]);
    pthread_mutex_lock(&pool->lock);
    while (pool->pending > 0) pthread_cond_wait(&pool->done, &pool->lock);
    pthread_mutex_unlock(&pool->lock);
}
