/* Process and device lifecycle. There is one "device" (the CPU); operators work with or
 * without aclInit, but the init/finalize pairing is checked as on CANN. */
#include <pthread.h>
#include <stdbool.h>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
#include "runtime/error.h"
#include "runtime/stream.h"

static pthread_mutex_t lifecycle = PTHREAD_MUTEX_INITIALIZER;
static bool initialized;

aclError aclInit(const char *configPath) {
    (void)configPath; // no configuration is read
    pthread_mutex_lock(&lifecycle);
    bool again = initialized;
    initialized = true;
    pthread_mutex_unlock(&lifecycle);
    if (again)
        return og_fail(ACL_ERROR_REPEAT_INITIALIZE, "aclInit: already initialized in this process");
    return ACL_SUCCESS;
}

// Work queued on streams runs to completion before aclFinalize returns, so nothing writes to
// memory the caller frees next. Streams stay valid (opgrad's runtime works without aclInit): they
// are still destroyed with aclrtDestroyStream, and keep their errors for aclrtSynchronizeStream.
aclError aclFinalize(void) {
    if (og_stream_in_task())
        return og_fail(ACL_ERROR_API_NOT_SUPPORT,
                       "aclFinalize: called from a task running on a stream, which would wait for "
                       "itself");
    pthread_mutex_lock(&lifecycle);
    bool was = initialized;
    initialized = false;
    pthread_mutex_unlock(&lifecycle);
    if (!was) return og_fail(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize: aclInit was not called");
    og_streams_wait_all();
    return ACL_SUCCESS;
}

static aclError check_device(const char *fn, int32_t deviceId) {
    if (deviceId != 0)
        return og_fail(ACL_ERROR_RT_INVALID_DEVICEID,
                       "%s: deviceId %d does not exist (opgrad has one device, 0: the CPU)", fn,
                       (int)deviceId);
    return ACL_SUCCESS;
}

aclError aclrtSetDevice(int32_t deviceId) { return check_device("aclrtSetDevice", deviceId); }
aclError aclrtResetDevice(int32_t deviceId) { return check_device("aclrtResetDevice", deviceId); }

aclError aclrtGetDeviceCount(uint32_t *count) {
    if (!count) return og_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount: count is NULL");
    *count = 1;
    return ACL_SUCCESS;
}

const char *aclrtGetSocName(void) { return "opgrad-cpu"; }

aclnnStatus aclnnInit(const char *configPath) {
    (void)configPath;
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnFinalize(void) { return ACLNN_SUCCESS; }
