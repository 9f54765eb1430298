/* FusedAddScale kernel: fp32 compute function for the elementwise engine (and a map of the
 * reduction engine), one build per ISA.
 *   og_fused_add_scale:  in = {a, b, c}  out = {(a + b) * c}
 * The backward reuses it as g * (x + bias) with in = {x, bias, g}, and og_mul for g * scale. */
#ifndef OG_FUSED_ADD_SCALE_KERNEL_H
#define OG_FUSED_ADD_SCALE_KERNEL_H

#include "engine/elementwise.h"

OG_EW_DECLARE_KERNEL3(fused_add_scale)

#endif
