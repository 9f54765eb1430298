/* xoshiro256** seeded by splitmix64: the one random generator of the checker and the tests
 * (deterministic on every platform, so a printed seed reproduces a case anywhere). */
#ifndef OG_RNG_H
#define OG_RNG_H

#include <stdint.h>

typedef struct og_rng {
    uint64_t s[4];
} og_rng;

static inline uint64_t og_rng_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline void og_rng_seed(og_rng *r, uint64_t seed) {
    for (int i = 0; i < 4; i++) {
        seed += 0x9E3779B97F4A7C15ull;
        uint64_t z = seed;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        r->s[i] = z ^ (z >> 31);
    }
}

static inline uint64_t og_rng_next(og_rng *r) {
    uint64_t *s = r->s, out = og_rng_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = og_rng_rotl(s[3], 45);
    return out;
}

/// Uniform in [lo, hi).
static inline double og_rng_uniform(og_rng *r, double lo, double hi) {
    return lo + (hi - lo) * (double)(og_rng_next(r) >> 11) * 0x1p-53;
}

#endif
