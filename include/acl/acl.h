/* acl/acl.h - the ACL runtime entry header that aclnn programs include first. */
#ifndef OPGRAD_ACL_H
#define OPGRAD_ACL_H

#include "acl/acl_base.h"
#include "acl/acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ACL_MAJOR_VERSION 9
#define ACL_MINOR_VERSION 0
#define ACL_PATCH_VERSION 0

/// Initialises the runtime; configPath may be NULL. A second call returns
/// ACL_ERROR_REPEAT_INITIALIZE. (opgrad's operators also work without it.)
ACL_FUNC_VISIBILITY aclError aclInit(const char *configPath);
/// Ends the runtime; a call without a matching aclInit returns ACL_ERROR_REPEAT_FINALIZE.
ACL_FUNC_VISIBILITY aclError aclFinalize(void);

#ifdef __cplusplus
}
#endif
#endif
