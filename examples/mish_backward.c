/* The seven-step aclnn flow for MishBackward, in C, as an NPU sample would write it:
 * init -> device -> stream -> tensors -> phase 1 (workspace size + executor) -> workspace ->
 * phase 2 on the stream -> synchronize -> copy back -> release.
 * Prints gradInput next to a float64 evaluation of the formula, and fails on a mismatch. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_mish_backward.h"

#define CHECK_RET(cond, ...)                                                                       \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf(__VA_ARGS__);                                                                   \
            printf("  (%s)\n", aclGetRecentErrMsg());                                              \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

// Allocates "device" memory for a contiguous fp32 tensor, copies host data into it and wraps it.
static int create_tensor(const float *host, const int64_t *shape, uint64_t rank, void **device,
                         aclTensor **tensor) {
    int64_t strides[8], numel = 1;
    for (int64_t i = (int64_t)rank - 1; i >= 0; i--) {
        strides[i] = numel;
        numel *= shape[i];
    }
    size_t bytes = (size_t)numel * sizeof(float);
    CHECK_RET(aclrtMalloc(device, bytes, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS,
              "aclrtMalloc failed");
    CHECK_RET(aclrtMemcpy(*device, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS,
              "aclrtMemcpy failed");
    *tensor =
        aclCreateTensor(shape, rank, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, rank, *device);
    CHECK_RET(*tensor != NULL, "aclCreateTensor failed");
    return 0;
}

// mish'(x) in float64, straight from the definition.
static double mish_grad_f64(double x) {
    double sp = x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
    double t = tanh(sp), sig = 1.0 / (1.0 + exp(-x));
    return t + x * sig * (1.0 - t * t);
}

int main(void) {
    // 1. runtime and device, 2. stream
    int32_t device_id = 0;
    aclrtStream stream;
    CHECK_RET(aclInit(NULL) == ACL_SUCCESS, "aclInit failed");
    CHECK_RET(aclrtSetDevice(device_id) == ACL_SUCCESS, "aclrtSetDevice failed");
    CHECK_RET(aclrtCreateStream(&stream) == ACL_SUCCESS, "aclrtCreateStream failed");

    // 3. tensors: shape {4, 2}
    const int64_t shape[] = {4, 2};
    const float grad_host[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    const float self_host[8] = {1, 1, 1, 2, 2, 2, 3, 3};
    float out_host[8] = {0};
    void *grad_dev, *self_dev, *out_dev;
    aclTensor *grad, *self, *out;
    if (create_tensor(grad_host, shape, 2, &grad_dev, &grad) ||
        create_tensor(self_host, shape, 2, &self_dev, &self) ||
        create_tensor(out_host, shape, 2, &out_dev, &out))
        return 1;

    // 4. phase 1: workspace size and executor
    uint64_t workspace_size = 0;
    aclOpExecutor *executor;
    CHECK_RET(aclnnMishBackwardGetWorkspaceSize(grad, self, out, &workspace_size, &executor) ==
                  ACL_SUCCESS,
              "aclnnMishBackwardGetWorkspaceSize failed");
    // 5. workspace
    void *workspace = NULL;
    if (workspace_size > 0)
        CHECK_RET(aclrtMalloc(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS,
                  "workspace allocation failed");
    // 6. phase 2 on the stream, then wait
    CHECK_RET(aclnnMishBackward(workspace, workspace_size, executor, stream) == ACL_SUCCESS,
              "aclnnMishBackward failed");
    CHECK_RET(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "aclrtSynchronizeStream failed");

    // 7. copy back, print, release
    CHECK_RET(aclrtMemcpy(out_host, sizeof out_host, out_dev, sizeof out_host,
                          ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS,
              "copy back failed");
    int bad = 0;
    printf("  i  gradOutput  self   gradInput        float64 reference   |diff|\n");
    for (int i = 0; i < 8; i++) {
        double ref = grad_host[i] * mish_grad_f64(self_host[i]);
        double diff = fabs(out_host[i] - ref);
        // fp32 rounding of the result plus a few ulp of evaluation error
        bool ok = diff <= 8 * 0x1p-24 * fabs(ref) + 1e-30;
        bad += !ok;
        printf("%3d  %10.1f  %4.1f  %.9g  %.12f  %.2e %s\n", i, grad_host[i], self_host[i],
               out_host[i], ref, diff, ok ? "" : "MISMATCH");
    }
    aclDestroyTensor(grad);
    aclDestroyTensor(self);
    aclDestroyTensor(out);
    aclrtFree(grad_dev);
    aclrtFree(self_dev);
    aclrtFree(out_dev);
    if (workspace) aclrtFree(workspace);
    aclrtDestroyStream(stream);
    aclrtResetDevice(device_id);
    aclFinalize();
    printf(bad ? "FAILED: %d mismatches\n" : "OK: matches float64 within fp32 rounding\n", bad);
    return bad != 0;
}
