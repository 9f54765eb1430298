/* Convolution on the GEMM engine (implicit GEMM): the shared geometry and the generated operands.
 *
 * Every convolution, transposed or not, 1-, 2- or 3-D, is described as one "direct" convolution
 * from an in-space tensor X [N, G*ci_g, in...] to an out-space tensor Y [N, G*co_g, out...] with
 * weight W [G*co_g, ci_g, k...]:
 *   Y[n, co, o] = sum_{ci, t} W[co, ci, t] * X[n, ci, o*s - pad + t*d]   (zero outside X)
 * and its three products, each one GEMM step whose im2col matrix is generated while packing:
 *   forward    Y[n,g] (co_g x O)    = W[g] (co_g x ci_g*KS) @ col(X[n,g]) (ci_g*KS x O)
 *   data       X[n,g] (ci_g x I)    = W[g]^T (ci_g x co_g*KS) @ gather(Y[n,g]) (co_g*KS x I)
 *              where gather(Y)[(co,t), i] = Y[co, (i + pad - t*d) / s] when that divides and lies
 *              in Y: every element of X is one dot product (no scatter: deterministic)
 *   weight     dW^T[g] (ci_g*KS x co_g) = col(X[:,g]) (ci_g*KS x N*O) @ Y[:,g]^T (N*O x co_g)
 * (each product may instead take another algorithm: conv_gemm.c picks it per shape and names it
 * for opgrad_executor_algorithm). aclnnConvolution runs `forward` (transposed: `data`, X the
 * input, Y-space the output);
 * aclnnConvolutionBackward runs `data` and `weight` (transposed: `forward` and `weight` with the
 * roles of the tensors exchanged). Spatial dims are always three here (d, h, w): a 1-D or 2-D
 * convolution has extent 1 in the leading ones. */
#ifndef OG_OPS_CONV_H
#define OG_OPS_CONV_H

#include <stdint.h>

#include "engine/gemm.h"
#include "engine/program.h"

typedef struct og_conv_geom {
    int64_t N, G, ci_g, co_g;
    int64_t in[3], out[3];            // spatial extents of X and Y (as stored)
    int64_t k[3], s[3], pad[3], d[3]; // kernel, stride, leading padding, dilation
    int64_t KS, I, O;                 // k, in, out products
} og_conv_geom;

/// A tensor of the convolution in the canonical 5-D form [N, C, D, H, W] (a 1-D or 2-D
/// convolution's tensors get leading spatial dims of extent 1): slot, dtype, dims, strides.
typedef struct og_conv_tensor {
    int slot;
    aclDataType dtype;
    int64_t dims[5], strides[5];
} og_conv_tensor;

/// og_conv_tensor of t (rank 3 to 5) at slot.
og_conv_tensor og_conv_tensor_of(const aclTensor *t, int slot);

/// Appends the steps of each product and returns the name of the algorithm they run (for
/// opgrad_executor_algorithm). round_ab: the cubeMathType's rounding of the operands, or
/// ACL_DOUBLE: computed in float64 (the promoted dtype), by the GEMM's float64 loop.
/// forward: y = conv(x, w) (+ bias [G*co_g], NULL for none); data: x = conv^T(y, w) (+ bias
/// [G*ci_g]); weight: dw = d conv / d w contracted with y (dw has W's shape).
const char *og_conv_forward(og_prog *p, const og_conv_geom *g, const og_conv_tensor *x,
                            const og_conv_tensor *w, const og_conv_tensor *bias,
                            const og_conv_tensor *y, aclDataType round_ab);
const char *og_conv_data(og_prog *p, const og_conv_geom *g, const og_conv_tensor *y,
                         const og_conv_tensor *w, const og_conv_tensor *bias,
                         const og_conv_tensor *x, aclDataType round_ab);
const char *og_conv_weight(og_prog *p, const og_conv_geom *g, const og_conv_tensor *x,
                           const og_conv_tensor *y, const og_conv_tensor *dw, aclDataType round_ab);

#endif
