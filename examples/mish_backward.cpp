// The MishBackward flow in the C++ style of the ops-nn samples (test_aclnn_mish_backward.cpp):
// std::vector shapes, a CreateAclTensor template, RAII holders with the aclnn deleters, and
// aclDataType:: / aclFormat:: qualified enums. Compiles unchanged against opgrad's headers.
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_mish_backward.h"

#define CHECK_RET(cond, return_expr)                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            return_expr;                                                                           \
        }                                                                                          \
    } while (0)

#define LOG_PRINT(message, ...)                                                                    \
    do {                                                                                           \
        printf(message, ##__VA_ARGS__);                                                            \
    } while (0)

int64_t GetShapeSize(const std::vector<int64_t> &shape) {
    int64_t shapeSize = 1;
    for (auto i : shape) {
        shapeSize *= i;
    }
    return shapeSize;
}

int Init(int32_t deviceId, aclrtStream *stream) {
    auto ret = aclInit(nullptr);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclInit failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSetDevice(deviceId);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSetDevice failed. ERROR: %d\n", ret); return ret);
    ret = aclrtCreateStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtCreateStream failed. ERROR: %d\n", ret);
              return ret);
    return 0;
}

template <typename T>
int CreateAclTensor(const std::vector<T> &hostData, const std::vector<int64_t> &shape,
                    void **deviceAddr, aclDataType dataType, aclTensor **tensor) {
    auto size = GetShapeSize(shape) * sizeof(T);
    auto ret = aclrtMalloc(deviceAddr, size, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMalloc failed. ERROR: %d\n", ret); return ret);
    ret = aclrtMemcpy(*deviceAddr, size, hostData.data(), size, ACL_MEMCPY_HOST_TO_DEVICE);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMemcpy failed. ERROR: %d\n", ret); return ret);
    std::vector<int64_t> strides(shape.size(), 1);
    for (int64_t i = shape.size() - 2; i >= 0; i--) {
        strides[i] = shape[i + 1] * strides[i + 1];
    }
    *tensor = aclCreateTensor(shape.data(), shape.size(), dataType, strides.data(), 0,
                              aclFormat::ACL_FORMAT_ND, shape.data(), shape.size(), *deviceAddr);
    return 0;
}

int main() {
    int32_t deviceId = 0;
    aclrtStream stream;
    auto ret = Init(deviceId, &stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

    std::vector<int64_t> gradOutputShape = {4, 2};
    std::vector<int64_t> selfShape = {4, 2};
    std::vector<int64_t> gradInputShape = {4, 2};
    void *gradOutputDeviceAddr = nullptr;
    void *selfDeviceAddr = nullptr;
    void *gradInputDeviceAddr = nullptr;
    aclTensor *gradOutput = nullptr;
    aclTensor *self = nullptr;
    aclTensor *gradInput = nullptr;
    std::vector<float> gradOutputHostData = {0, 1, 2, 3, 4, 5, 6, 7};
    std::vector<float> selfHostData = {1, 1, 1, 2, 2, 2, 3, 3};
    std::vector<float> gradInputHostData(8, 0);

    ret = CreateAclTensor(gradOutputHostData, gradOutputShape, &gradOutputDeviceAddr,
                          aclDataType::ACL_FLOAT, &gradOutput);
    std::unique_ptr<aclTensor, aclnnStatus (*)(const aclTensor *)> gradOutputTensorPtr(
        gradOutput, aclDestroyTensor);
    std::unique_ptr<void, aclError (*)(void *)> gradOutputDeviceAddrPtr(gradOutputDeviceAddr,
                                                                        aclrtFree);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(selfHostData, selfShape, &selfDeviceAddr, aclDataType::ACL_FLOAT, &self);
    std::unique_ptr<aclTensor, aclnnStatus (*)(const aclTensor *)> selfTensorPtr(self,
                                                                                 aclDestroyTensor);
    std::unique_ptr<void, aclError (*)(void *)> selfDeviceAddrPtr(selfDeviceAddr, aclrtFree);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(gradInputHostData, gradInputShape, &gradInputDeviceAddr,
                          aclDataType::ACL_FLOAT, &gradInput);
    std::unique_ptr<aclTensor, aclnnStatus (*)(const aclTensor *)> gradInputTensorPtr(
        gradInput, aclDestroyTensor);
    std::unique_ptr<void, aclError (*)(void *)> gradInputDeviceAddrPtr(gradInputDeviceAddr,
                                                                       aclrtFree);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    uint64_t workspaceSize = 0;
    aclOpExecutor *executor;
    ret = aclnnMishBackwardGetWorkspaceSize(gradOutput, self, gradInput, &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS,
              LOG_PRINT("aclnnMishBackwardGetWorkspaceSize failed. ERROR: %d (%s)\n", ret,
                        aclGetRecentErrMsg());
              return ret);
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret);
                  return ret);
    }
    std::unique_ptr<void, aclError (*)(void *)> workspaceAddrPtr(workspaceAddr, aclrtFree);
    ret = aclnnMishBackward(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnMishBackward failed. ERROR: %d\n", ret);
              return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret);
              return ret);

    auto size = GetShapeSize(gradInputShape);
    std::vector<float> resultData(size, 0);
    ret = aclrtMemcpy(resultData.data(), resultData.size() * sizeof(resultData[0]),
                      gradInputDeviceAddr, size * sizeof(resultData[0]), ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS,
              LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret);
              return ret);
    int mismatches = 0;
    for (int64_t i = 0; i < size; i++) {
        double x = selfHostData[i];
        double sp = x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
        double t = std::tanh(sp);
        double expected = gradOutputHostData[i] * (t + x / (1.0 + std::exp(-x)) * (1.0 - t * t));
        bool ok = std::fabs(resultData[i] - expected) <= 8 * 0x1p-24 * std::fabs(expected) + 1e-30;
        mismatches += !ok;
        LOG_PRINT("result[%ld] is: %f (float64 %f)%s\n", static_cast<long>(i), resultData[i],
                  expected, ok ? "" : " MISMATCH");
    }

    gradOutputTensorPtr.reset();
    selfTensorPtr.reset();
    gradInputTensorPtr.reset();
    gradOutputDeviceAddrPtr.reset();
    selfDeviceAddrPtr.reset();
    gradInputDeviceAddrPtr.reset();
    workspaceAddrPtr.reset();
    aclrtDestroyStream(stream);
    aclrtResetDevice(deviceId);
    aclFinalize();
    return mismatches == 0 ? 0 : 1;
}
