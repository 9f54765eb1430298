#include "tensor/dtype.h"

#include <string.h>

size_t aclDataTypeSize(aclDataType dt) {
    switch (dt) {
    case ACL_BOOL:
    case ACL_INT8:
    case ACL_UINT8:
    case ACL_HIFLOAT8:
    case ACL_FLOAT8_E5M2:
    case ACL_FLOAT8_E4M3FN:
    case ACL_FLOAT8_E8M0:
        return 1;
    case ACL_FLOAT16:
    case ACL_BF16:
    case ACL_INT16:
    case ACL_UINT16:
        return 2;
    case ACL_FLOAT:
    case ACL_INT32:
    case ACL_UINT32:
    case ACL_COMPLEX32:
        return 4;
    case ACL_DOUBLE:
    case ACL_INT64:
    case ACL_UINT64:
    case ACL_COMPLEX64:
        return 8;
    case ACL_COMPLEX128:
        return 16;
    default:
        return 0;
    }
}

const char *og_dtype_name(aclDataType dt) {
    switch (dt) {
    case ACL_FLOAT:
        return "float32";
    case ACL_FLOAT16:
        return "float16";
    case ACL_BF16:
        return "bfloat16";
    case ACL_DOUBLE:
        return "float64";
    case ACL_INT8:
        return "int8";
    case ACL_INT16:
        return "int16";
    case ACL_INT32:
        return "int32";
    case ACL_INT64:
        return "int64";
    case ACL_UINT8:
        return "uint8";
    case ACL_UINT16:
        return "uint16";
    case ACL_UINT32:
        return "uint32";
    case ACL_UINT64:
        return "uint64";
    case ACL_BOOL:
        return "bool";
    case ACL_COMPLEX64:
        return "complex64";
    case ACL_COMPLEX128:
        return "complex128";
    case ACL_STRING:
        return "string";
    default:
        return "unsupported-dtype";
    }
}

bool og_dtype_is_representable(aclDataType dt) {
    switch (dt) {
    case ACL_FLOAT:
    case ACL_FLOAT16:
    case ACL_BF16:
    case ACL_DOUBLE:
    case ACL_INT8:
    case ACL_INT16:
    case ACL_INT32:
    case ACL_INT64:
    case ACL_UINT8:
    case ACL_UINT16:
    case ACL_UINT32:
    case ACL_UINT64:
    case ACL_BOOL:
    case ACL_COMPLEX64:
    case ACL_COMPLEX128:
        return true;
    default:
        return false;
    }
}

bool og_dtype_is_floating(aclDataType dt) {
    return dt == ACL_FLOAT || dt == ACL_FLOAT16 || dt == ACL_BF16 || dt == ACL_DOUBLE;
}

static bool is_complex(aclDataType dt) { return dt == ACL_COMPLEX64 || dt == ACL_COMPLEX128; }
static bool is_unsigned_wide(aclDataType dt) {
    return dt == ACL_UINT16 || dt == ACL_UINT32 || dt == ACL_UINT64;
}
static bool is_signed_int(aclDataType dt) {
    return dt == ACL_INT8 || dt == ACL_INT16 || dt == ACL_INT32 || dt == ACL_INT64;
}

// Rank of a dtype inside its category, for "the wider one wins".
static int width_rank(aclDataType dt) {
    switch (dt) {
    case ACL_BOOL:
        return 0;
    case ACL_UINT8:
    case ACL_INT8:
        return 1;
    case ACL_INT16:
    case ACL_FLOAT16:
    case ACL_BF16:
        return 2;
    case ACL_INT32:
    case ACL_FLOAT:
    case ACL_COMPLEX64:
        return 3;
    default:
        return 4; // int64, double, complex128
    }
}

aclDataType og_promote(aclDataType a, aclDataType b) {
    if (!og_dtype_is_representable(a) || !og_dtype_is_representable(b)) return ACL_DT_UNDEFINED;
    if (a == b) return a;
    if (a == ACL_BOOL) return b;
    if (b == ACL_BOOL) return a;
    if (is_unsigned_wide(a) || is_unsigned_wide(b)) return ACL_DT_UNDEFINED;
    if (is_complex(a) || is_complex(b)) {
        aclDataType c = is_complex(a) ? a : b, o = is_complex(a) ? b : a;
        if (c == ACL_COMPLEX128 || o == ACL_DOUBLE || is_complex(o)) return ACL_COMPLEX128;
        return ACL_COMPLEX64;
    }
    bool fa = og_dtype_is_floating(a), fb = og_dtype_is_floating(b);
    if (fa && fb) {
        if ((a == ACL_FLOAT16 && b == ACL_BF16) || (a == ACL_BF16 && b == ACL_FLOAT16))
            return ACL_FLOAT;
        return width_rank(a) >= width_rank(b) ? a : b;
    }
    if (fa) return a; // a float beats any integer
    if (fb) return b;
    // Both integers; uint8 with a signed type needs the next signed width up.
    if (a == ACL_UINT8 || b == ACL_UINT8) {
        aclDataType s = a == ACL_UINT8 ? b : a;
        return s == ACL_INT8 ? ACL_INT16 : s;
    }
    if (is_signed_int(a) && is_signed_int(b)) return width_rank(a) >= width_rank(b) ? a : b;
    return ACL_DT_UNDEFINED;
}

bool og_can_cast(aclDataType from, aclDataType to) {
    if (!og_dtype_is_representable(from) || !og_dtype_is_representable(to)) return false;
    if (from == ACL_BOOL) return true;
    if (is_complex(from)) return is_complex(to);
    if (og_dtype_is_floating(from)) return og_dtype_is_floating(to) || is_complex(to);
    return to != ACL_BOOL; // integer -> integer, float, complex
}

static uint32_t bits_of(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
static float float_of(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float og_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    if (exp == 0x1f) // inf, or NaN made quiet as the F16C instruction does
        return float_of(sign | 0x7f800000u | (mant ? 0x400000u : 0) | (mant << 13));
    if (exp == 0) { // zero / subnormal
        float v = (float)mant * 0x1p-24f;
        return sign ? -v : v;
    }
    return float_of(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t og_f32_to_f16(float f) {
    uint32_t u = bits_of(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    uint32_t abs = u & 0x7fffffffu;
    if (abs > 0x7f800000u) return sign | 0x7e00 | (uint16_t)((abs >> 13) & 0x1ff); // quiet NaN
    if (abs >= 0x477ff000u) return sign | 0x7c00; // rounds to >= 65520: infinity
    if (abs < 0x38800000u) {                      // below the smallest normal half: subnormal
        // Adding 0.5 (2^-1) shifts the value so the FPU's own round-to-nearest-even lands the
        // subnormal half's mantissa in the low bits (exact for every fp32 input).
        float v = float_of(abs) + 0.5f;
        return sign | (uint16_t)(bits_of(v) - 0x3f000000u);
    }
    uint32_t mant_odd = (abs >> 13) & 1;
    abs += 0xc8000fffu + mant_odd; // rebias exponent (-112 << 23) and round to nearest even
    return sign | (uint16_t)(abs >> 13);
}

float og_bf16_to_f32(uint16_t b) { return float_of((uint32_t)b << 16); }

uint16_t og_f32_to_bf16(float f) {
    uint32_t u = bits_of(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); // quiet NaN
    u += 0x7fffu + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

float aclFloat16ToFloat(aclFloat16 value) { return og_f16_to_f32(value); }
aclFloat16 aclFloatToFloat16(float value) { return og_f32_to_f16(value); }
