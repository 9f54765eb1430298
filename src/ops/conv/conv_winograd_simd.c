/* Winograd F(4x4, 3x3) tile transforms (conv_winograd.c), on 8 tiles at once: element [i][l] of
 * a buffer is entry i of tile l, so every loop runs along the 8 tiles and the compiler vectorizes
 * it. Plain adds and multiplies in one fixed order (no contraction): the same bits on every ISA.
 * The matrices are Lavin and Gray's for the points 0, 1, -1, 2, -2 and infinity. */
#include "engine/simd/vec.h"
#include "ops/conv/conv_winograd.h"

#define L OG_WINO_LANES

// t[r][c] = sum_k B^T[r][k] d[k][c] for the 6 x 6 input patch (rows of B^T in closed form).
static inline void bt_rows(const float (*d)[6][L], float (*t)[6][L]) {
    for (int c = 0; c < 6; c++)
        for (int l = 0; l < L; l++) {
            float d0 = d[0][c][l], d1 = d[1][c][l], d2 = d[2][c][l], d3 = d[3][c][l];
            float d4 = d[4][c][l], d5 = d[5][c][l];
            t[0][c][l] = 4.0f * d0 - 5.0f * d2 + d4;
            t[1][c][l] = -4.0f * (d1 + d2) + (d3 + d4);
            t[2][c][l] = 4.0f * (d1 - d2) + (d4 - d3);
            t[3][c][l] = 2.0f * (d3 - d1) + (d4 - d2);
            t[4][c][l] = 2.0f * (d1 - d3) + (d4 - d2);
            t[5][c][l] = 4.0f * d1 - 5.0f * d3 + d5;
        }
}

void OG_FN(og_wino_input)(const float *patch, float *v) {
    const float(*d)[6][L] = (const float(*)[6][L])patch;
    float t[6][6][L], u[6][6][L];
    bt_rows(d, t);
    // u = t B: the same combination along the columns (transpose, combine, transpose back)
    for (int r = 0; r < 6; r++)
        for (int c = 0; c < 6; c++)
            for (int l = 0; l < L; l++) u[c][r][l] = t[r][c][l];
    bt_rows((const float(*)[6][L])u, t);
    float(*out)[L] = (float(*)[L])v; // [36][L], index r * 6 + c = (t B)[r][c]
    for (int r = 0; r < 6; r++)
        for (int c = 0; c < 6; c++)
            for (int l = 0; l < L; l++) out[r * 6 + c][l] = t[c][r][l];
}

// o[r][c] = sum_k A^T[r][k] m[k][c] for the first ncols columns.
static inline void at_rows(const float (*m)[6][L], float (*o)[6][L], int ncols) {
    for (int c = 0; c < ncols; c++)
        for (int l = 0; l < L; l++) {
            float m0 = m[0][c][l], m1 = m[1][c][l], m2 = m[2][c][l], m3 = m[3][c][l];
            float m4 = m[4][c][l], m5 = m[5][c][l];
            float s12 = m1 + m2, d12 = m1 - m2, s34 = m3 + m4, d34 = m3 - m4;
            o[0][c][l] = m0 + s12 + s34;
            o[1][c][l] = d12 + 2.0f * d34;
            o[2][c][l] = s12 + 4.0f * s34;
            o[3][c][l] = d12 + 8.0f * d34 + m5;
        }
}

void OG_FN(og_wino_output)(const float *m36, float *y16) {
    const float(*m)[6][L] = (const float(*)[6][L])m36; // [36][L] as [6][6][L]
    float t[6][6][L], u[6][6][L];
    at_rows(m, t, 6); // rows 0..3 of t
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 6; c++)
            for (int l = 0; l < L; l++) u[c][r][l] = t[r][c][l];
    at_rows((const float(*)[6][L])u, t, 4); // t[c'][r] = (A^T m A)[r][c']
    float(*out)[L] = (float(*)[L])y16;      // [16][L], index r * 4 + c
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++)
            for (int l = 0; l < L; l++) out[r * 4 + c][l] = t[c][r][l];
}
