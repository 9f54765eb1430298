/* aclnn/acl_meta.h - tensors, scalars, arrays and lists passed to aclnn operators.
 *
 * Semantics follow CANN's nnopbase:
 *  - dims, strides and offset count elements; stride NULL means contiguous (row-major);
 *  - a view must lie inside its storage: offset + sum(stride[i] * (dim[i] - 1)) <
 * prod(storageDims);
 *  - create functions return NULL on bad arguments (aclGetRecentErrMsg says why);
 *  - arrays and scalars copy their values; a tensor list owns its tensors;
 *  - shape getters return arrays allocated with malloc(): release them with free().
 * Compiles as C11 and as C++. */
#ifndef OPGRAD_ACLNN_ACL_META_H
#define OPGRAD_ACLNN_ACL_META_H

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ACLNN_META
#define ACLNN_META
typedef struct aclOpExecutor aclOpExecutor;
typedef struct aclTensor aclTensor;
typedef struct aclScalar aclScalar;
typedef struct aclIntArray aclIntArray;
typedef struct aclFloatArray aclFloatArray;
typedef struct aclBoolArray aclBoolArray;
typedef struct aclTensorList aclTensorList;
typedef struct aclScalarList aclScalarList;
typedef int32_t aclnnStatus;
#ifdef __cplusplus
constexpr aclnnStatus OK = 0;
#endif
#endif

#define ACLNN_API __attribute__((visibility("default")))

ACLNN_API aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum,
                                     aclDataType dataType, const int64_t *stride, int64_t offset,
                                     aclFormat format, const int64_t *storageDims,
                                     uint64_t storageDimsNum, void *tensorData);
ACLNN_API aclScalar *aclCreateScalar(void *value, aclDataType dataType);
ACLNN_API aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size);
ACLNN_API aclFloatArray *aclCreateFloatArray(const float *value, uint64_t size);
ACLNN_API aclBoolArray *aclCreateBoolArray(const bool *value, uint64_t size);
ACLNN_API aclTensorList *aclCreateTensorList(const aclTensor *const *value, uint64_t size);
ACLNN_API aclScalarList *aclCreateScalarList(const aclScalar *const *value, uint64_t size);

ACLNN_API aclnnStatus aclDestroyTensor(const aclTensor *tensor);
ACLNN_API aclnnStatus aclDestroyScalar(const aclScalar *scalar);
ACLNN_API aclnnStatus aclDestroyIntArray(const aclIntArray *array);
ACLNN_API aclnnStatus aclDestroyFloatArray(const aclFloatArray *array);
ACLNN_API aclnnStatus aclDestroyBoolArray(const aclBoolArray *array);
ACLNN_API aclnnStatus aclDestroyTensorList(const aclTensorList *array);
ACLNN_API aclnnStatus aclDestroyScalarList(const aclScalarList *array);

ACLNN_API aclnnStatus aclGetViewShape(const aclTensor *tensor, int64_t **viewDims,
                                      uint64_t *viewDimsNum);
ACLNN_API aclnnStatus aclGetStorageShape(const aclTensor *tensor, int64_t **storageDims,
                                         uint64_t *storageDimsNum);
ACLNN_API aclnnStatus aclGetViewStrides(const aclTensor *tensor, int64_t **stridesValue,
                                        uint64_t *stridesNum);
ACLNN_API aclnnStatus aclGetViewOffset(const aclTensor *tensor, int64_t *offset);
ACLNN_API aclnnStatus aclGetFormat(const aclTensor *tensor, aclFormat *format);
ACLNN_API aclnnStatus aclGetDataType(const aclTensor *tensor, aclDataType *dataType);
ACLNN_API aclnnStatus aclGetIntArraySize(const aclIntArray *array, uint64_t *size);
ACLNN_API aclnnStatus aclGetFloatArraySize(const aclFloatArray *array, uint64_t *size);
ACLNN_API aclnnStatus aclGetBoolArraySize(const aclBoolArray *array, uint64_t *size);
ACLNN_API aclnnStatus aclGetTensorListSize(const aclTensorList *tensorList, uint64_t *size);
ACLNN_API aclnnStatus aclGetScalarListSize(const aclScalarList *scalarList, uint64_t *size);

ACLNN_API aclnnStatus aclInitTensor(aclTensor *tensor, const int64_t *viewDims,
                                    uint64_t viewDimsNum, aclDataType dataType,
                                    const int64_t *stride, int64_t offset, aclFormat format,
                                    const int64_t *storageDims, uint64_t storageDimsNum,
                                    void *tensorDataAddr);

/// Lets phase 2 run the executor any number of times; release it with aclDestroyAclOpExecutor.
ACLNN_API aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor);
ACLNN_API aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor);
/// Re-points input / output `index` (in the order of the phase-1 signature) of an executor at a
/// new storage address (the tensor's view offset is kept).
ACLNN_API aclnnStatus aclSetInputTensorAddr(aclOpExecutor *executor, const size_t index,
                                            aclTensor *tensor, void *addr);
ACLNN_API aclnnStatus aclSetOutputTensorAddr(aclOpExecutor *executor, const size_t index,
                                             aclTensor *tensor, void *addr);
ACLNN_API aclnnStatus aclSetRawTensorAddr(aclTensor *tensor, void *addr);
ACLNN_API aclnnStatus aclGetRawTensorAddr(const aclTensor *tensor, void **addr);

#ifdef __cplusplus
}
#endif
#endif
