/* Philox4x32-10 and dropout's keep rule, from their definitions (ref_dropout.h). */
#include "check/ref_dropout.h"

// The published constants: multipliers and the Weyl key increments.
static const uint32_t mult[2] = {0xD2511F53u, 0xCD9E8D57u};
static const uint32_t weyl[2] = {0x9E3779B9u, 0xBB67AE85u};

void og_ref_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
    uint32_t x[4] = {ctr[0], ctr[1], ctr[2], ctr[3]};
    for (uint32_t round = 0; round < 10; round++) {
        // round r uses the key advanced r times by the Weyl sequence
        uint32_t k0 = key[0] + round * weyl[0], k1 = key[1] + round * weyl[1];
        uint64_t prod0 = (uint64_t)mult[0] * (uint64_t)x[0];
        uint64_t prod1 = (uint64_t)mult[1] * (uint64_t)x[2];
        uint32_t y[4];
        y[0] = (uint32_t)(prod1 >> 32) ^ x[1] ^ k0;
        y[1] = (uint32_t)(prod1 & 0xFFFFFFFFu);
        y[2] = (uint32_t)(prod0 >> 32) ^ x[3] ^ k1;
        y[3] = (uint32_t)(prod0 & 0xFFFFFFFFu);
        for (int k = 0; k < 4; k++) x[k] = y[k];
    }
    for (int k = 0; k < 4; k++) out[k] = x[k];
}

bool og_ref_dropout_keep(int64_t seed, int64_t offset, double p, uint64_t i) {
    uint64_t block = (uint64_t)offset + i / 4;
    uint32_t ctr[4] = {(uint32_t)(block & 0xFFFFFFFFu), (uint32_t)(block >> 32), 0, 0};
    uint32_t key[2] = {(uint32_t)((uint64_t)seed & 0xFFFFFFFFu), (uint32_t)((uint64_t)seed >> 32)};
    uint32_t w[4];
    og_ref_philox4x32_10(ctr, key, w);
    double u = (double)(w[i % 4] >> 8) / 16777216.0;
    return u < 1.0 - p;
}
