/* Sigmoid kernels: fp32 compute functions for the elementwise engine, one build per ISA.
 *
 *   sigmoid_fwd:  in = {x}      out = {y}    y = 1 / (1 + e^-x)
 *   sigmoid_bwd:  in = {g, y}   out = {dx}   dx = g * y * (1 - y), from the forward's output y
 */
#ifndef OG_SIGMOID_KERNEL_H
#define OG_SIGMOID_KERNEL_H

#include "engine/elementwise.h"

OG_EW_DECLARE_KERNEL3(sigmoid_fwd) // with fused bf16 / fp16 kernels
OG_EW_DECLARE_KERNEL3(sigmoid_bwd)

#endif
