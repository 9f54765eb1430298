#include "tensor/tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/error.h"
#include "runtime/ptrset.h"
#include "tensor/dtype.h"

// Every object the API hands out is registered until it is destroyed (the value: its kind), so
// that an operator, a getter or a destroy call refuses a stale, twice-destroyed or foreign handle
// with a message instead of reading freed memory or freeing it twice.
static og_ptrset live_objects = OG_PTRSET_INIT;

static const char *kind_name(uintptr_t kind) {
    static const char *const names[] = {"?",
                                        "aclTensor",
                                        "aclScalar",
                                        "aclIntArray",
                                        "aclFloatArray",
                                        "aclBoolArray",
                                        "aclTensorList",
                                        "aclScalarList"};
    return kind < sizeof names / sizeof *names ? names[kind] : "?";
}

bool og_object_register(const void *p, og_object_kind kind) {
    return og_ptrset_add(&live_objects, p, (uintptr_t)kind);
}

void og_object_unregister(const void *p) { og_ptrset_remove(&live_objects, p, NULL); }

bool og_object_is_live(const void *p, og_object_kind kind) {
    uintptr_t k;
    return p && og_ptrset_find(&live_objects, p, &k) && k == (uintptr_t)kind;
}

aclnnStatus og_check_live(const char *fn, const char *name, const void *p, og_object_kind kind) {
    uintptr_t k;
    if (!p) return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL", fn, name);
    if (!og_ptrset_find(&live_objects, p, &k))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: %s (%p) is not a live %s: it was destroyed, or was not created by "
                       "aclCreate%s",
                       fn, name, p, kind_name(kind), kind_name(kind) + 3);
    if (k != (uintptr_t)kind)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: %s (%p) is an %s, not an %s", fn, name, p,
                       kind_name(k), kind_name(kind));
    return ACLNN_SUCCESS;
}

// Unregisters p for its destroy function; the caller frees it only on success. NULL is a no-op.
static aclnnStatus retire(const char *fn, const void *p, og_object_kind kind) {
    aclnnStatus st = og_check_live(fn, "the object", p, kind);
    if (st != ACLNN_SUCCESS) return st;
    // Two threads destroying one object: only one removes it.
    if (!og_ptrset_remove(&live_objects, p, NULL))
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: %p was destroyed concurrently", fn, p);
    return ACLNN_SUCCESS;
}

// Multiplies with overflow detection against INT64_MAX.
static bool mul_ok(int64_t a, int64_t b, int64_t *r) { return !__builtin_mul_overflow(a, b, r); }
static bool add_ok(int64_t a, int64_t b, int64_t *r) { return !__builtin_add_overflow(a, b, r); }

// Validates and fills t; on failure sets the message (prefixed by fn) and returns a status.
static aclnnStatus init_tensor(const char *fn, aclTensor *t, const int64_t *viewDims,
                               uint64_t viewDimsNum, aclDataType dataType, const int64_t *stride,
                               int64_t offset, aclFormat format, const int64_t *storageDims,
                               uint64_t storageDimsNum, void *tensorData) {
    if (!viewDims && viewDimsNum > 0)
        return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: viewDims is NULL but viewDimsNum is %llu", fn,
                       (unsigned long long)viewDimsNum);
    if (!storageDims && storageDimsNum > 0)
        return og_fail(ACLNN_ERR_PARAM_NULLPTR,
                       "%s: storageDims is NULL but storageDimsNum is %llu", fn,
                       (unsigned long long)storageDimsNum);
    if (viewDimsNum > OG_TENSOR_MAX_DIMS || storageDimsNum > OG_TENSOR_MAX_DIMS)
        return og_fail(
            ACLNN_ERR_PARAM_INVALID, "%s: rank %llu exceeds the tensor limit %d", fn,
            (unsigned long long)(viewDimsNum > storageDimsNum ? viewDimsNum : storageDimsNum),
            OG_TENSOR_MAX_DIMS);
    if (!og_dtype_is_representable(dataType))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: dataType %d is not supported by opgrad tensors", fn, (int)dataType);
    if (offset < 0)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: offset %lld must be >= 0", fn,
                       (long long)offset);
    int ndim = (int)viewDimsNum;
    int64_t numel = 1, max_offset = offset, nonzero = 1;
    for (int i = 0; i < ndim; i++) {
        if (viewDims[i] < 0)
            return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: viewDims[%d] = %lld must be >= 0", fn, i,
                           (long long)viewDims[i]);
        if (!mul_ok(numel, viewDims[i], &numel))
            return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: element count overflows int64", fn);
        // An empty view's other dims must multiply within int64 too, so that any product of a
        // view's dims does (operators take row counts and contiguous strides as such products).
        if (viewDims[i] > 0 && !mul_ok(nonzero, viewDims[i], &nonzero))
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%s: the product of the nonzero viewDims overflows int64 (an empty "
                           "view's other dims must multiply within int64 too)",
                           fn);
    }
    int64_t elem = (int64_t)aclDataTypeSize(dataType), bytes;
    if (!mul_ok(numel, elem, &bytes))
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: byte size overflows int64", fn);
    if (!mul_ok(offset, elem, &bytes))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: offset %lld elements of %lld bytes overflows int64 bytes", fn,
                       (long long)offset, (long long)elem);
    int64_t strides[OG_TENSOR_MAX_DIMS];
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = stride ? stride[i] : s;
        if (strides[i] < 0)
            return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: stride[%d] = %lld must be >= 0", fn, i,
                           (long long)strides[i]);
        if (!stride && !mul_ok(s, viewDims[i] > 0 ? viewDims[i] : 1, &s)) s = INT64_MAX;
    }
    if (numel > 0) {
        for (int i = 0; i < ndim; i++) {
            int64_t span;
            if (!mul_ok(strides[i], viewDims[i] - 1, &span) ||
                !add_ok(max_offset, span, &max_offset))
                return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: view extent overflows int64", fn);
        }
        // Every byte of the view, up to the end of its last element, must be addressable in
        // int64 bytes: the extent and overlap checks, the engines and the storage size work in
        // bytes (an fp32 stride of 2^62 elements fits int64, its 2^64 bytes do not).
        int64_t end;
        if (!add_ok(max_offset, 1, &end) || !mul_ok(end, elem, &end))
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%s: the view's last element is at %lld elements of %lld bytes "
                           "(offset + sum(stride[i]*(dim[i]-1))): its byte extent overflows int64",
                           fn, (long long)max_offset, (long long)elem);
    }
    int64_t storage_numel = 1;
    for (uint64_t i = 0; i < storageDimsNum; i++) {
        if (storageDims[i] < 0)
            return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: storageDims[%llu] = %lld must be >= 0", fn,
                           (unsigned long long)i, (long long)storageDims[i]);
        if (!mul_ok(storage_numel, storageDims[i], &storage_numel))
            return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: storage element count overflows int64",
                           fn);
    }
    int64_t storage_bytes;
    if (!mul_ok(storage_numel, elem, &storage_bytes))
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: storage byte size overflows int64", fn);
    if (storageDimsNum > 0 && numel > 0 && max_offset >= storage_numel)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: view reaches element %lld but the storage holds %lld elements "
                       "(offset + sum(stride[i]*(dim[i]-1)) must be < prod(storageDims))",
                       fn, (long long)max_offset, (long long)storage_numel);

    t->dtype = dataType;
    t->format = format;
    t->ndim = ndim;
    t->offset = offset;
    t->numel = numel;
    t->data = tensorData;
    for (int i = 0; i < ndim; i++) {
        t->dims[i] = viewDims[i];
        t->strides[i] = strides[i];
    }
    if (storageDimsNum > 0) {
        t->storage_ndim = (int)storageDimsNum;
        memcpy(t->storage_dims, storageDims, storageDimsNum * sizeof *storageDims);
    } else { // no storage given: the smallest storage that holds the view
        t->storage_ndim = 1;
        t->storage_dims[0] = numel > 0 ? max_offset + 1 : 0;
    }
    return ACLNN_SUCCESS;
}

aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
                           const int64_t *stride, int64_t offset, aclFormat format,
                           const int64_t *storageDims, uint64_t storageDimsNum, void *tensorData) {
    aclTensor *t = calloc(1, sizeof *t);
    if (!t) {
        og_set_error("aclCreateTensor: out of memory");
        return NULL;
    }
    if (init_tensor("aclCreateTensor", t, viewDims, viewDimsNum, dataType, stride, offset, format,
                    storageDims, storageDimsNum, tensorData) != ACLNN_SUCCESS) {
        free(t);
        return NULL;
    }
    if (!og_object_register(t, OG_OBJ_TENSOR)) {
        free(t);
        og_set_error("aclCreateTensor: out of memory for the object registry");
        return NULL;
    }
    return t;
}

aclnnStatus aclInitTensor(aclTensor *tensor, const int64_t *viewDims, uint64_t viewDimsNum,
                          aclDataType dataType, const int64_t *stride, int64_t offset,
                          aclFormat format, const int64_t *storageDims, uint64_t storageDimsNum,
                          void *tensorDataAddr) {
    aclnnStatus live = og_check_live("aclInitTensor", "tensor", tensor, OG_OBJ_TENSOR);
    if (live != ACLNN_SUCCESS) return live;
    aclTensor fresh;
    memset(&fresh, 0, sizeof fresh);
    aclnnStatus st = init_tensor("aclInitTensor", &fresh, viewDims, viewDimsNum, dataType, stride,
                                 offset, format, storageDims, storageDimsNum, tensorDataAddr);
    if (st == ACLNN_SUCCESS) *tensor = fresh;
    return st;
}

aclnnStatus aclDestroyTensor(const aclTensor *tensor) {
    if (!tensor) return ACLNN_SUCCESS;
    aclnnStatus st = retire("aclDestroyTensor", tensor, OG_OBJ_TENSOR);
    if (st == ACLNN_SUCCESS) free((void *)tensor);
    return st;
}

aclScalar *aclCreateScalar(void *value, aclDataType dataType) {
    if (!value) {
        og_set_error("aclCreateScalar: value is NULL");
        return NULL;
    }
    size_t size = aclDataTypeSize(dataType);
    if (!og_dtype_is_representable(dataType) || size == 0 || size > 16) {
        og_set_error("aclCreateScalar: dataType %d is not supported", (int)dataType);
        return NULL;
    }
    aclScalar *s = calloc(1, sizeof *s);
    if (!s) {
        og_set_error("aclCreateScalar: out of memory");
        return NULL;
    }
    s->dtype = dataType;
    memcpy(s->v.bytes, value, size);
    // A bool is one byte, true when nonzero (C's _Bool may only hold 0 or 1: reading a 2 through
    // it is undefined, and gave Add(1, 1, alpha = true) = 3).
    if (dataType == ACL_BOOL) s->v.b = s->v.bytes[0] != 0;
    if (!og_object_register(s, OG_OBJ_SCALAR)) {
        free(s);
        og_set_error("aclCreateScalar: out of memory for the object registry");
        return NULL;
    }
    return s;
}

aclnnStatus aclDestroyScalar(const aclScalar *scalar) {
    if (!scalar) return ACLNN_SUCCESS;
    aclnnStatus st = retire("aclDestroyScalar", scalar, OG_OBJ_SCALAR);
    if (st == ACLNN_SUCCESS) free((void *)scalar);
    return st;
}

double og_scalar_as_double(const aclScalar *s) {
    switch (s->dtype) {
    case ACL_FLOAT:
        return s->v.f32;
    case ACL_DOUBLE:
        return s->v.f64;
    case ACL_FLOAT16:
        return og_f16_to_f32(s->v.u16);
    case ACL_BF16:
        return og_bf16_to_f32(s->v.u16);
    case ACL_INT8:
        return s->v.i8;
    case ACL_INT16:
        return s->v.i16;
    case ACL_INT32:
        return s->v.i32;
    case ACL_INT64:
        return (double)s->v.i64;
    case ACL_UINT8:
        return s->v.u8;
    case ACL_UINT16:
        return s->v.u16;
    case ACL_UINT32:
        return s->v.u32;
    case ACL_UINT64:
        return (double)s->v.u64;
    case ACL_BOOL:
        return s->v.bytes[0] != 0;
    default:
        return 0.0;
    }
}

// The values of a bool array as 0 / 1, whatever nonzero byte the caller stored (see
// aclCreateScalar); a no-op for the other arrays.
static void normalize_bools(bool *v, uint64_t n) {
    for (uint64_t i = 0; i < n; i++) {
        unsigned char byte;
        memcpy(&byte, &v[i], 1);
        v[i] = byte != 0;
    }
}
#define NO_NORMALIZE(v, n) ((void)(v), (void)(n))

// The arrays copy their values; size 0 is allowed (an empty array), value NULL is not when size
// > 0.
#define DEFINE_ARRAY(Type, Elem, kind, create, destroy, getsize, normalize)                        \
    Type *create(const Elem *value, uint64_t size) {                                               \
        if (!value && size > 0) {                                                                  \
            og_set_error(#create ": value is NULL but size is %llu", (unsigned long long)size);    \
            return NULL;                                                                           \
        }                                                                                          \
        if (size > (uint64_t)1 << 40) {                                                            \
            og_set_error(#create ": size %llu is too large", (unsigned long long)size);            \
            return NULL;                                                                           \
        }                                                                                          \
        Type *a = calloc(1, sizeof *a);                                                            \
        Elem *copy = calloc(size ? size : 1, sizeof(Elem));                                        \
        if (!a || !copy || !og_object_register(a, kind)) {                                         \
            free(a);                                                                               \
            free(copy);                                                                            \
            og_set_error(#create ": out of memory");                                               \
            return NULL;                                                                           \
        }                                                                                          \
        if (size) memcpy(copy, value, size * sizeof(Elem));                                        \
        normalize(copy, size);                                                                     \
        a->size = size;                                                                            \
        a->values = copy;                                                                          \
        return a;                                                                                  \
    }                                                                                              \
    aclnnStatus destroy(const Type *array) {                                                       \
        if (!array) return ACLNN_SUCCESS;                                                          \
        aclnnStatus st = retire(#destroy, array, kind);                                            \
        if (st != ACLNN_SUCCESS) return st;                                                        \
        free(array->values);                                                                       \
        free((void *)array);                                                                       \
        return ACLNN_SUCCESS;                                                                      \
    }                                                                                              \
    aclnnStatus getsize(const Type *array, uint64_t *size) {                                       \
        if (!size) return og_fail(ACLNN_ERR_PARAM_NULLPTR, #getsize ": size is NULL");             \
        aclnnStatus st = og_check_live(#getsize, "array", array, kind);                            \
        if (st == ACLNN_SUCCESS) *size = array->size;                                              \
        return st;                                                                                 \
    }

DEFINE_ARRAY(aclIntArray, int64_t, OG_OBJ_INT_ARRAY, aclCreateIntArray, aclDestroyIntArray,
             aclGetIntArraySize, NO_NORMALIZE)
DEFINE_ARRAY(aclFloatArray, float, OG_OBJ_FLOAT_ARRAY, aclCreateFloatArray, aclDestroyFloatArray,
             aclGetFloatArraySize, NO_NORMALIZE)
DEFINE_ARRAY(aclBoolArray, bool, OG_OBJ_BOOL_ARRAY, aclCreateBoolArray, aclDestroyBoolArray,
             aclGetBoolArraySize, normalize_bools)

// Lists take ownership of the objects they are given (live ones, or NULL entries): destroying
// the list destroys them. An element already destroyed on its own is skipped, and the list's
// destroy reports it after freeing the rest.
#define DEFINE_LIST(Type, Elem, elem_kind, field, kind, create, destroy, getsize, destroy_elem)    \
    Type *create(const Elem *const *value, uint64_t size) {                                        \
        if (!value && size > 0) {                                                                  \
            og_set_error(#create ": value is NULL but size is %llu", (unsigned long long)size);    \
            return NULL;                                                                           \
        }                                                                                          \
        if (size > (uint64_t)1 << 32) {                                                            \
            og_set_error(#create ": size %llu is too large", (unsigned long long)size);            \
            return NULL;                                                                           \
        }                                                                                          \
        for (uint64_t i = 0; i < size; i++)                                                        \
            if (value[i] && !og_object_is_live(value[i], elem_kind)) {                             \
                char name[40];                                                                     \
                snprintf(name, sizeof name, "value[%llu]", (unsigned long long)i);                 \
                og_check_live(#create, name, value[i], elem_kind);                                 \
                return NULL;                                                                       \
            }                                                                                      \
        Type *l = calloc(1, sizeof *l);                                                            \
        Elem **items = calloc(size ? size : 1, sizeof *items);                                     \
        if (!l || !items || !og_object_register(l, kind)) {                                        \
            free(l);                                                                               \
            free(items);                                                                           \
            og_set_error(#create ": out of memory");                                               \
            return NULL;                                                                           \
        }                                                                                          \
        for (uint64_t i = 0; i < size; i++) items[i] = (Elem *)value[i];                           \
        l->size = size;                                                                            \
        l->field = items;                                                                          \
        return l;                                                                                  \
    }                                                                                              \
    aclnnStatus destroy(const Type *list) {                                                        \
        if (!list) return ACLNN_SUCCESS;                                                           \
        aclnnStatus st = retire(#destroy, list, kind);                                             \
        if (st != ACLNN_SUCCESS) return st;                                                        \
        for (uint64_t i = 0; i < list->size; i++) {                                                \
            aclnnStatus e = destroy_elem(list->field[i]);                                          \
            if (st == ACLNN_SUCCESS) st = e;                                                       \
        }                                                                                          \
        free(list->field);                                                                         \
        free((void *)list);                                                                        \
        return st;                                                                                 \
    }                                                                                              \
    aclnnStatus getsize(const Type *list, uint64_t *size) {                                        \
        if (!size) return og_fail(ACLNN_ERR_PARAM_NULLPTR, #getsize ": size is NULL");             \
        aclnnStatus st = og_check_live(#getsize, "list", list, kind);                              \
        if (st == ACLNN_SUCCESS) *size = list->size;                                               \
        return st;                                                                                 \
    }

DEFINE_LIST(aclTensorList, aclTensor, OG_OBJ_TENSOR, tensors, OG_OBJ_TENSOR_LIST,
            aclCreateTensorList, aclDestroyTensorList, aclGetTensorListSize, aclDestroyTensor)
DEFINE_LIST(aclScalarList, aclScalar, OG_OBJ_SCALAR, scalars, OG_OBJ_SCALAR_LIST,
            aclCreateScalarList, aclDestroyScalarList, aclGetScalarListSize, aclDestroyScalar)

static aclnnStatus copy_dims(const char *fn, const aclTensor *t, const int64_t *src, int n,
                             int64_t **out, uint64_t *outn) {
    if (!out || !outn)
        return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL", fn,
                       !out ? "the out array" : "its size");
    aclnnStatus st = og_check_live(fn, "tensor", t, OG_OBJ_TENSOR);
    if (st != ACLNN_SUCCESS) return st;
    *out = malloc((n ? n : 1) * sizeof **out);
    if (!*out) return og_fail(ACLNN_ERR_INNER, "%s: out of memory", fn);
    if (n) memcpy(*out, src, n * sizeof **out);
    *outn = (uint64_t)n;
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetViewShape(const aclTensor *tensor, int64_t **viewDims, uint64_t *viewDimsNum) {
    return copy_dims("aclGetViewShape", tensor, tensor ? tensor->dims : NULL,
                     tensor ? tensor->ndim : 0, viewDims, viewDimsNum);
}
aclnnStatus aclGetStorageShape(const aclTensor *tensor, int64_t **storageDims,
                               uint64_t *storageDimsNum) {
    return copy_dims("aclGetStorageShape", tensor, tensor ? tensor->storage_dims : NULL,
                     tensor ? tensor->storage_ndim : 0, storageDims, storageDimsNum);
}
aclnnStatus aclGetViewStrides(const aclTensor *tensor, int64_t **stridesValue,
                              uint64_t *stridesNum) {
    return copy_dims("aclGetViewStrides", tensor, tensor ? tensor->strides : NULL,
                     tensor ? tensor->ndim : 0, stridesValue, stridesNum);
}
aclnnStatus aclGetViewOffset(const aclTensor *tensor, int64_t *offset) {
    if (!offset) return og_fail(ACLNN_ERR_PARAM_NULLPTR, "aclGetViewOffset: offset is NULL");
    aclnnStatus st = og_check_live("aclGetViewOffset", "tensor", tensor, OG_OBJ_TENSOR);
    if (st != ACLNN_SUCCESS) return st;
    *offset = tensor->offset;
    return ACLNN_SUCCESS;
}
aclnnStatus aclGetFormat(const aclTensor *tensor, aclFormat *format) {
    if (!format) return og_fail(ACLNN_ERR_PARAM_NULLPTR, "aclGetFormat: format is NULL");
    aclnnStatus st = og_check_live("aclGetFormat", "tensor", tensor, OG_OBJ_TENSOR);
    if (st != ACLNN_SUCCESS) return st;
    *format = tensor->format;
    return ACLNN_SUCCESS;
}
aclnnStatus aclGetDataType(const aclTensor *tensor, aclDataType *dataType) {
    if (!dataType) return og_fail(ACLNN_ERR_PARAM_NULLPTR, "aclGetDataType: dataType is NULL");
    aclnnStatus st = og_check_live("aclGetDataType", "tensor", tensor, OG_OBJ_TENSOR);
    if (st != ACLNN_SUCCESS) return st;
    *dataType = tensor->dtype;
    return ACLNN_SUCCESS;
}
aclnnStatus aclSetRawTensorAddr(aclTensor *tensor, void *addr) {
    aclnnStatus st = og_check_live("aclSetRawTensorAddr", "tensor", tensor, OG_OBJ_TENSOR);
    if (st != ACLNN_SUCCESS) return st;
    tensor->data = addr;
    return ACLNN_SUCCESS;
}
aclnnStatus aclGetRawTensorAddr(const aclTensor *tensor, void **addr) {
    if (!addr) return og_fail(ACLNN_ERR_PARAM_NULLPTR, "aclGetRawTensorAddr: addr is NULL");
    aclnnStatus st = og_check_live("aclGetRawTensorAddr", "tensor", tensor, OG_OBJ_TENSOR);
    if (st != ACLNN_SUCCESS) return st;
    *addr = tensor->data;
    return ACLNN_SUCCESS;
}

const char *og_shape_str(const int64_t *dims, int ndim, char *buf, int bufsize) {
    int n = snprintf(buf, bufsize, "[");
    for (int i = 0; i < ndim && n < bufsize; i++)
        n += snprintf(buf + n, bufsize - n, i ? ",%lld" : "%lld", (long long)dims[i]);
    if (n < bufsize) snprintf(buf + n, bufsize - n, "]");
    return buf;
}

bool og_broadcast_shapes(const int64_t *a, int na, const int64_t *b, int nb, int64_t *out,
                         int *nout, int *bad_dim) {
    int n = na > nb ? na : nb;
    for (int i = 0; i < n; i++) {
        int ia = na - n + i, ib = nb - n + i;
        int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
        if (da != db && da != 1 && db != 1) {
            if (bad_dim) *bad_dim = i;
            return false;
        }
        out[i] = da == 1 ? db : da;
    }
    *nout = n;
    return true;
}

// |x|, INT64_MIN saturated to INT64_MAX (a stride from the caller may be anything)
static int64_t llabs_i64(int64_t x) { return x >= 0 ? x : x == INT64_MIN ? INT64_MAX : -x; }

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

// The creation checks guarantee (max element offset + 1) * element size fits int64, so none of
// these byte computations can overflow (strides are >= 0).
int64_t og_tensor_end_bytes(const aclTensor *t) {
    if (t->numel == 0) return 0;
    int64_t last = t->offset;
    for (int d = 0; d < t->ndim; d++) last += t->strides[d] * (t->dims[d] - 1);
    return (last + 1) * (int64_t)aclDataTypeSize(t->dtype);
}

bool og_tensor_extent(const aclTensor *t, uintptr_t *lo, uintptr_t *hi) {
    if (t->numel == 0) return false;
    *lo = (uintptr_t)og_tensor_first(t);
    *hi = (uintptr_t)t->data + (uintptr_t)og_tensor_end_bytes(t) - 1;
    return true;
}

bool og_tensors_overlap(const aclTensor *a, const aclTensor *b) {
    uintptr_t alo, ahi, blo, bhi;
    return og_tensor_extent(a, &alo, &ahi) && og_tensor_extent(b, &blo, &bhi) && alo <= bhi &&
           blo <= ahi;
}

int og_tensor_self_overlap_dim(const aclTensor *t) {
    int order[OG_TENSOR_MAX_DIMS], n = 0;
    for (int d = 0; d < t->ndim; d++)
        if (t->dims[d] > 1) order[n++] = d;
    for (int i = 1; i < n; i++)
        for (int k = i;
             k > 0 && llabs_i64(t->strides[order[k]]) < llabs_i64(t->strides[order[k - 1]]); k--) {
            int tmp = order[k];
            order[k] = order[k - 1];
            order[k - 1] = tmp;
        }
    int64_t span = 0;
    int suspect = -1;
    for (int i = 0; i < n; i++) {
        int d = order[i];
        if (t->strides[d] == 0) return d;
        if (llabs_i64(t->strides[d]) <= span && suspect < 0) suspect = d;
        // A span past int64 is no addressable layout (and would overflow the offsets below):
        // refused like a self-overlapping one.
        int64_t step;
        if (__builtin_mul_overflow(llabs_i64(t->strides[d]), t->dims[d] - 1, &step) ||
            __builtin_add_overflow(span, step, &span))
            return d;
    }
    if (suspect < 0) return -1;
    if (t->numel > ((int64_t)1 << 20)) return suspect;
    int64_t *offsets = malloc((size_t)t->numel * sizeof *offsets);
    if (!offsets) return suspect;
    int64_t idx[OG_TENSOR_MAX_DIMS] = {0};
    for (int64_t i = 0; i < t->numel; i++) {
        int64_t off = 0;
        for (int d = 0; d < t->ndim; d++) off += idx[d] * t->strides[d];
        offsets[i] = off;
        for (int d = t->ndim - 1; d >= 0 && ++idx[d] == t->dims[d]; d--) idx[d] = 0;
    }
    qsort(offsets, (size_t)t->numel, sizeof *offsets, cmp_i64);
    int result = -1;
    for (int64_t i = 1; i < t->numel && result < 0; i++)
        if (offsets[i] == offsets[i - 1]) result = suspect;
    free(offsets);
    return result;
}
