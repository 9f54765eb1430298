/* Loss kernels: fp32 compute functions for the elementwise engine (reduction none, and every
 * backward) and maps of the reduction engine (mean, sum), one build per ISA.
 *
 * Inputs, in order: the backward's gradient g first, then self x, target t, and, where the
 * flags say so, weight w and posWeight pw (every operand already broadcast by the engine).
 *   og_mse_fwd   (x, t)            (x - t)^2
 *   og_mse_bwd   (g, x, t)         2 s g (x - t)
 *   og_l1_fwd    (x, t)            |x - t|
 *   og_l1_bwd    (g, x, t)         s g sign(x - t)                  (0 at x = t)
 *   og_sl1_fwd   (x, t)            |d| < beta ? d^2 / (2 beta) : |d| - beta / 2
 *   og_sl1_bwd   (g, x, t)         s g (|d| < beta ? d / beta : sign d)
 *   og_bce_fwd   (x, t[, w])       -w (t max(log x, -100) + (1 - t) max(log(1 - x), -100))
 *   og_bce_bwd   (g, x, t[, w])    s g w (x - t) / max(x (1 - x), 1e-12)
 *   og_bcel_fwd  (x, t[, w][, pw]) w ((1 - t) x + lw (log1p(e^-|x|) + max(-x, 0))),
 *                                  lw = 1 + (pw - 1) t (1 without pw)
 *   og_bcel_bwd  (g, x, t[, w][, pw])  s g w (lw sigmoid(x) - pw t)  (sigmoid(x) - t without pw)
 * s is the backward's scale: 1, or 1/N for the mean reduction. Each kernel also has a float64
 * form (og_<name>_kernels64, the same formulas in double with libm). */
#ifndef OG_LOSS_KERNEL_H
#define OG_LOSS_KERNEL_H

#include <stdint.h>

#include "engine/elementwise.h"

#define OG_LOSS_W 1  // a weight operand follows the target
#define OG_LOSS_PW 2 // a posWeight operand follows (the weight, if any)

typedef struct og_loss_params {
    float scale; // backward: 1, or 1/N for the mean reduction
    float beta;  // SmoothL1's threshold (>= 0)
    int32_t flags;
    double scale64, beta64; // the same for the float64 kernels
} og_loss_params;

OG_EW_DECLARE_KERNEL3(mse_fwd)
OG_EW_DECLARE_KERNEL3(mse_bwd)
OG_EW_DECLARE_KERNEL3(l1_fwd)
OG_EW_DECLARE_KERNEL3(l1_bwd)
OG_EW_DECLARE_KERNEL3(sl1_fwd)
OG_EW_DECLARE_KERNEL3(sl1_bwd)
OG_EW_DECLARE_KERNEL3(bce_fwd)
OG_EW_DECLARE_KERNEL3(bce_bwd)
OG_EW_DECLARE_KERNEL3(bcel_fwd)
OG_EW_DECLARE_KERNEL3(bcel_bwd)

#endif
