/* The objects behind aclTensor, aclScalar, the arrays and the lists. */
#ifndef OG_TENSOR_H
#define OG_TENSOR_H

#include <stdbool.h>
#include <stdint.h>

#include "aclnn/aclnn_base.h"

/// Rank limit of aclnn operators (checked per operator, status 161002).
#define OG_MAX_DIMS 8
/// Rank limit of the tensor object itself, so that an operator can reject rank 9 with 161002
/// instead of aclCreateTensor failing first.
#define OG_TENSOR_MAX_DIMS 32

struct aclTensor {
    aclDataType dtype;
    aclFormat format;
    int ndim;
    int storage_ndim;
    int64_t offset; // elements from `data` to the view's first element
    int64_t numel;
    int64_t dims[OG_TENSOR_MAX_DIMS];
    int64_t strides[OG_TENSOR_MAX_DIMS]; // elements
    int64_t storage_dims[OG_TENSOR_MAX_DIMS];
    void *data; // storage base address
};

struct aclScalar {
    aclDataType dtype;
    union {
        double f64;
        float f32;
        uint16_t u16;
        int64_t i64;
        uint64_t u64;
        int32_t i32;
        uint32_t u32;
        int16_t i16;
        int8_t i8;
        uint8_t u8;
        bool b;
        unsigned char bytes[16];
    } v;
};

struct aclIntArray {
    uint64_t size;
    int64_t *values;
};
struct aclFloatArray {
    uint64_t size;
    float *values;
};
struct aclBoolArray {
    uint64_t size;
    bool *values;
};
struct aclTensorList {
    uint64_t size;
    aclTensor **tensors;
};
struct aclScalarList {
    uint64_t size;
    aclScalar **scalars;
};

/// Address of the view's first element.
static inline void *og_tensor_first(const aclTensor *t) {
    return (char *)t->data + t->offset * (int64_t)aclDataTypeSize(t->dtype);
}

/// Value of a scalar as double (integers and bools converted, 16-bit floats decoded).
double og_scalar_as_double(const aclScalar *s);

/// Bytes from the data address to the end of the view's last element (0 for an empty view).
/// Creation refuses a view whose end does not fit int64 bytes, so this cannot overflow.
int64_t og_tensor_end_bytes(const aclTensor *t);
/// Byte range [*lo, *hi] the view touches; false (and nothing set) for an empty view.
bool og_tensor_extent(const aclTensor *t, uintptr_t *lo, uintptr_t *hi);
/// Do the byte ranges of two views intersect? (Empty views overlap nothing.)
bool og_tensors_overlap(const aclTensor *a, const aclTensor *b);

/// The objects the API hands out, registered from creation to destruction.
typedef enum og_object_kind {
    OG_OBJ_TENSOR = 1,
    OG_OBJ_SCALAR,
    OG_OBJ_INT_ARRAY,
    OG_OBJ_FLOAT_ARRAY,
    OG_OBJ_BOOL_ARRAY,
    OG_OBJ_TENSOR_LIST,
    OG_OBJ_SCALAR_LIST,
} og_object_kind;
/// Is p a live object of this kind?
bool og_object_is_live(const void *p, og_object_kind kind);
/// ACLNN_SUCCESS for a live object of this kind, else 161001 (NULL) or 161002 with a message
/// "fn: name (p) is not a live aclTensor: ..." naming what it is instead when it is another kind.
aclnnStatus og_check_live(const char *fn, const char *name, const void *p, og_object_kind kind);
/// For objects the library builds in its own memory (the aot entry points' tensors on their
/// stack): registered for the duration of the calls that take them, then unregistered.
/// og_object_register returns false when out of memory.
bool og_object_register(const void *p, og_object_kind kind);
void og_object_unregister(const void *p);
/// Does the view put two elements at one address? -1 = no, else a dim involved. Proved by strides
/// (each stride, in increasing order, steps over everything the smaller dims span), else decided
/// exactly by sorting the element offsets, up to 2^20 elements (larger interleaved views are
/// reported as overlapping: unprovable).
int og_tensor_self_overlap_dim(const aclTensor *t);

/// "[4,2]" style rendering for messages; returns buf.
const char *og_shape_str(const int64_t *dims, int ndim, char *buf, int bufsize);

/// NumPy broadcast of two shapes into out (rank max(na, nb)); false if incompatible, and then
/// *bad_dim is the (right-aligned output) dim that conflicts.
bool og_broadcast_shapes(const int64_t *a, int na, const int64_t *b, int nb, int64_t *out,
                         int *nout, int *bad_dim);

#endif
