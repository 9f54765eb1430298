/* Float64 references of the matmul family (Matmul, Mm, BatchMatMul, Addmm, Baddbmm,
 * FusedMatmul), written apart from the kernels: plain double arithmetic, sums in double in k
 * order. Shapes follow torch.matmul: a 1-D first operand is a row [1, K] and a 1-D second operand
 * a column [K, 1] (that dim is dropped from the product's shape); the dims before the last two
 * are batch dims and broadcast (NumPy rules, right-aligned). Arrays are row-major over each
 * operand's own shape; a product is row-major over (batch..., M, N), which is the order of the
 * output's elements whatever dims a 1-D operand drops. */
#ifndef OG_REF_MATMUL_H
#define OG_REF_MATMUL_H

#include <stdbool.h>
#include <stdint.h>

#include "check/check.h"

/// The geometry of a (batched) matrix product A @ B.
typedef struct og_ref_mm {
    int nb;                     // batch dims of the product
    int64_t batch[OG_MAX_DIMS]; // their sizes
    int64_t nbatch, M, N, K;    // batches (their product), rows, columns, summed length
    int64_t astep[OG_MAX_DIMS]; // per batch dim: elements between A's matrices (0: broadcast)
    int64_t bstep[OG_MAX_DIMS]; // the same for B
    int64_t anumel, bnumel;     // elements of A and B
    int64_t abatches, bbatches; // matrices in A and in B
} og_ref_mm;

/// The product of A (shape a) and B (shape b) as torch.matmul forms it: fills *g and the
/// product's shape; false when the shapes do not multiply (a 0-d operand, K or a batch dim
/// that disagrees).
bool og_ref_mm_shapes(const ogc_shape *a, const ogc_shape *b, og_ref_mm *g, ogc_shape *out);
/// c = A @ B over (batch, M, N); mag (may be NULL) = the sum of |a_k b_k| per element.
void og_ref_mm_forward(const og_ref_mm *g, const double *a, const double *b, double *c,
                       double *mag);
/// dA = gy @ B^T summed over the batches A is broadcast along (A's shape); mag likewise with
/// |.|. Writes every element of da and mag (may be NULL).
void og_ref_mm_grad_a(const og_ref_mm *g, const double *gy, const double *b, double *da,
                      double *mag);
/// dB = A^T @ gy summed over the batches B is broadcast along (B's shape); mag likewise.
void og_ref_mm_grad_b(const og_ref_mm *g, const double *a, const double *gy, double *db,
                      double *mag);
/// Values summed into one element of dA (N times the batches per A matrix) and of dB.
int64_t og_ref_mm_terms_a(const og_ref_mm *g);
int64_t og_ref_mm_terms_b(const og_ref_mm *g);

#endif
