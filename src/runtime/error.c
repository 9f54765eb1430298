#include "runtime/error.h"

#include <stdarg.h>
#include <stdio.h>

#include "acl/acl_base.h"

static _Thread_local char recent_error[1024];

static void set_error_v(const char *fmt, va_list ap) {
    vsnprintf(recent_error, sizeof recent_error, fmt, ap);
}

void og_set_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    set_error_v(fmt, ap);
    va_end(ap);
}

int og_fail(int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    set_error_v(fmt, ap);
    va_end(ap);
    return status;
}

const char *aclGetRecentErrMsg(void) { return recent_error; }
