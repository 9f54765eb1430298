/* Strided CopyIn / CopyOut between storage dtypes and fp32 (or float64) buffers, shared by the
 * elementwise and reduction drivers. Contiguous runs go through the per-ISA converters (convert.h).
 */
#include <math.h>
#include <string.h>
#include <xmmintrin.h>

#include "engine/convert.h"
#include "tensor/dtype.h"

float og_load_elem(const char *p, aclDataType dt) {
    switch (dt) {
    case ACL_FLOAT16:
        return og_f16_to_f32(*(const uint16_t *)p);
    case ACL_BF16:
        return og_bf16_to_f32(*(const uint16_t *)p);
    case ACL_INT8:
        return (float)*(const int8_t *)p;
    case ACL_UINT8:
        return (float)*(const uint8_t *)p;
    case ACL_INT16:
        return (float)*(const int16_t *)p;
    case ACL_INT32:
        return (float)*(const int32_t *)p;
    case ACL_INT64:
        return (float)*(const int64_t *)p;
    case ACL_BOOL:
        return *(const uint8_t *)p ? 1.0f : 0.0f;
    case ACL_DOUBLE: // (a float64 operand of an fp32 plan: only its fp32 output, widened back)
        return (float)*(const double *)p;
    default:
        return *(const float *)p;
    }
}

// A run of an integer (or bool) input as fp32, rounded to nearest (the aclnn Cast to FLOAT): one
// typed loop per dtype, so that the compiler vectorizes the dense ones.
#define INT_RUN(T)                                                                                 \
    do {                                                                                           \
        const T *s_ = (const T *)src;                                                              \
        for (int64_t i = 0; i < n; i++) dst[i] = (float)s_[i * stride];                            \
    } while (0)

static void load_int_run(const char *src, aclDataType dt, int64_t stride, float *dst, int64_t n) {
    switch (dt) {
    case ACL_INT8:
        INT_RUN(int8_t);
        break;
    case ACL_UINT8:
        INT_RUN(uint8_t);
        break;
    case ACL_INT16:
        INT_RUN(int16_t);
        break;
    case ACL_INT32:
        INT_RUN(int32_t);
        break;
    case ACL_INT64:
        INT_RUN(int64_t);
        break;
    default: // ACL_BOOL: any non-zero byte is true
        for (int64_t i = 0; i < n; i++) dst[i] = ((const uint8_t *)src)[i * stride] ? 1.0f : 0.0f;
        break;
    }
}
#undef INT_RUN

void og_store_elem(char *p, aclDataType dt, float v) {
    switch (dt) {
    case ACL_FLOAT16:
        *(uint16_t *)p = og_f32_to_f16(v);
        break;
    case ACL_BF16:
        *(uint16_t *)p = og_f32_to_bf16(v);
        break;
    case ACL_DOUBLE: // an fp32 result cast to a float64 output: exact
        *(double *)p = v;
        break;
    default:
        *(float *)p = v;
        break;
    }
}

void og_load_run(const og_convert_table *cv, const char *src, aclDataType dt, int64_t stride,
                 float *dst, int64_t n) {
    size_t es = aclDataTypeSize(dt);
    if (!og_dtype_is_floating(dt) && stride != 0) {
        load_int_run(src, dt, stride, dst, n);
    } else if (stride == 1 && dt != ACL_DOUBLE) {
        if (dt == ACL_FLOAT16)
            cv->f16_to_f32((const uint16_t *)src, dst, (size_t)n);
        else if (dt == ACL_BF16)
            cv->bf16_to_f32((const uint16_t *)src, dst, (size_t)n);
        else
            memcpy(dst, src, (size_t)n * sizeof(float));
    } else if (stride == 0) {
        float v = og_load_elem(src, dt);
        for (int64_t i = 0; i < n; i++) dst[i] = v;
    } else if (dt == ACL_FLOAT) {
        const float *f = (const float *)src;
        for (int64_t i = 0; i < n; i++) dst[i] = f[i * stride];
    } else { // 16-bit strided, float64
        for (int64_t i = 0; i < n; i++) dst[i] = og_load_elem(src + i * stride * (int64_t)es, dt);
    }
}

void og_store_run(const og_convert_table *cv, char *dst, aclDataType dt, int64_t stride,
                  const float *src, int64_t n, bool stream) {
    size_t es = aclDataTypeSize(dt);
    if (stride == 1 && dt != ACL_DOUBLE) {
        if (dt == ACL_FLOAT16)
            cv->f32_to_f16(src, (uint16_t *)dst, (size_t)n, stream);
        else if (dt == ACL_BF16)
            cv->f32_to_bf16(src, (uint16_t *)dst, (size_t)n, stream);
        else
            cv->f32_copy(src, (float *)dst, (size_t)n, stream);
    } else {
        for (int64_t i = 0; i < n; i++) og_store_elem(dst + i * stride * (int64_t)es, dt, src[i]);
    }
}

void og_round_through(const og_convert_table *cv, float *v, int64_t n, aclDataType dt) {
    uint16_t h[256];
    for (int64_t i = 0; i < n; i += 256) {
        size_t m = n - i < 256 ? (size_t)(n - i) : 256;
        if (dt == ACL_FLOAT16)
            cv->f32_to_f16(v + i, h, m, false), cv->f16_to_f32(h, v + i, m);
        else
            cv->f32_to_bf16(v + i, h, m, false), cv->bf16_to_f32(h, v + i, m);
    }
}

void og_stream_fence(void) { _mm_sfence(); }

// ---- float64 ----------------------------------------------------------------------------------

static double load_elem64(const char *p, aclDataType dt) {
    switch (dt) {
    case ACL_DOUBLE:
        return *(const double *)p;
    case ACL_INT32:
        return (double)*(const int32_t *)p;
    case ACL_INT64:
        return (double)*(const int64_t *)p;
    default: // every other dtype converts to fp32 exactly
        return (double)og_load_elem(p, dt);
    }
}

// d rounded to float toward zero, with the last bit set when inexact ("round to odd"): rounding
// that float again to a format at least two bits narrower (fp16, bf16) is then the correct
// rounding of d, with no double-rounding error.
static float narrow_to_odd(double d) {
    float f = (float)d;
    if ((double)f == d || d != d) return f;
    if (fabs((double)f) > fabs(d)) f = nextafterf(f, 0.0f);
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u |= 1;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void store_elem64(char *p, aclDataType dt, double v) {
    if (dt == ACL_DOUBLE)
        *(double *)p = v;
    else if (dt == ACL_FLOAT)
        *(float *)p = (float)v;
    else
        og_store_elem(p, dt, narrow_to_odd(v));
}

void og_load_run64(const char *src, aclDataType dt, int64_t stride, double *dst, int64_t n) {
    int64_t step = stride * (int64_t)aclDataTypeSize(dt);
    if (dt == ACL_DOUBLE && stride == 1) {
        memcpy(dst, src, (size_t)n * sizeof(double));
    } else if (dt == ACL_DOUBLE) {
        const double *d = (const double *)src;
        for (int64_t i = 0; i < n; i++) dst[i] = d[i * stride];
    } else {
        for (int64_t i = 0; i < n; i++) dst[i] = load_elem64(src + i * step, dt);
    }
}

void og_store_run64(char *dst, aclDataType dt, int64_t stride, const double *src, int64_t n) {
    int64_t step = stride * (int64_t)aclDataTypeSize(dt);
    if (dt == ACL_DOUBLE && stride == 1)
        memcpy(dst, src, (size_t)n * sizeof(double));
    else
        for (int64_t i = 0; i < n; i++) store_elem64(dst + i * step, dt, src[i]);
}
