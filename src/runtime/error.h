/* Thread-local "recent error" text behind aclGetRecentErrMsg. */
#ifndef OG_ERROR_H
#define OG_ERROR_H

/// Records the calling thread's error message (printf-style). Messages name the function, the
/// argument and the rule that was broken, e.g. "aclnnMish: self: rank 9 exceeds the maximum 8".
void og_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/// Sets the message and returns `status`, so checks read `return og_fail(161002, "...")`.
int og_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
