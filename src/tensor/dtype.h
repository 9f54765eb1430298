/* Data-type facts: sizes, names, PyTorch-style promotion, the aclnn output-cast rule, and exact
 * scalar conversions for the 16-bit float formats. */
#ifndef OG_DTYPE_H
#define OG_DTYPE_H

#include <stdbool.h>
#include <stdint.h>

#include "acl/acl_base.h"

/// Dtype sets: bit masks over aclDataType values < 64.
#define OG_DT(x) (1ull << (x))
#define OG_DTS_FLOATING (OG_DT(ACL_FLOAT) | OG_DT(ACL_FLOAT16) | OG_DT(ACL_BF16))
/// The floating dtypes of an operator with float64 kernels.
#define OG_DTS_FLOATING64 (OG_DTS_FLOATING | OG_DT(ACL_DOUBLE))

const char *og_dtype_name(aclDataType dt);
/// True for the dtypes the tensor model can hold (size > 0 and not complex/string).
bool og_dtype_is_representable(aclDataType dt);
bool og_dtype_is_floating(aclDataType dt);
/// PyTorch's promoteTypes for the representable dtypes; ACL_DT_UNDEFINED when there is none
/// (u16/u32/u64 promote only with themselves).
aclDataType og_promote(aclDataType a, aclDataType b);
/// aclnn's output-cast rule: may a result of dtype `from` be stored into `to`?
bool og_can_cast(aclDataType from, aclDataType to);

float og_f16_to_f32(uint16_t h);
uint16_t og_f32_to_f16(float f); // round to nearest even; overflow -> inf; NaN stays quiet NaN
float og_bf16_to_f32(uint16_t b);
uint16_t og_f32_to_bf16(float f); // round to nearest even; NaN stays quiet NaN

#endif
