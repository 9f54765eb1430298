/* aclnnop/aclnn_util.h - visibility macro for operator entry points. */
#ifndef OPGRAD_ACLNN_UTIL_H
#define OPGRAD_ACLNN_UTIL_H
#ifndef ACLNN_API
#define ACLNN_API __attribute__((visibility("default")))
#endif
#endif
