/* A minimal test harness: each test binary lists its tests in main() with RUN(name) and ends
 * with return test_summary(); checks record failures (file:line + message) and carry on. */
#ifndef OG_TEST_H
#define OG_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_checks_failed_in_current;
static int test_passed, test_failed;
static const char *test_current = "";

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            test_checks_failed_in_current++;                                                       \
            fprintf(stderr, "  %s:%d: %s: CHECK(%s) failed\n", __FILE__, __LINE__, test_current,   \
                    #cond);                                                                        \
        }                                                                                          \
    } while (0)

/// CHECK with a printf-style explanation printed on failure.
#define CHECKF(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            test_checks_failed_in_current++;                                                       \
            fprintf(stderr, "  %s:%d: %s: CHECK(%s) failed: ", __FILE__, __LINE__, test_current,   \
                    #cond);                                                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
        }                                                                                          \
    } while (0)

#define CHECK_EQ(a, b)                                                                             \
    CHECKF((long long)(a) == (long long)(b), "%s = %lld, expected %s = %lld", #a, (long long)(a),  \
           #b, (long long)(b))

/// The message of the last error must contain `needle`.
#define CHECK_MSG(needle)                                                                          \
    CHECKF(strstr(aclGetRecentErrMsg(), needle) != NULL, "message \"%s\" lacks \"%s\"",            \
           aclGetRecentErrMsg(), needle)

#define RUN(fn)                                                                                    \
    do {                                                                                           \
        test_current = #fn;                                                                        \
        test_checks_failed_in_current = 0;                                                         \
        fn();                                                                                      \
        if (test_checks_failed_in_current) {                                                       \
            test_failed++;                                                                         \
            printf("FAIL %s\n", #fn);                                                              \
        } else {                                                                                   \
            test_passed++;                                                                         \
            printf("ok   %s\n", #fn);                                                              \
        }                                                                                          \
        fflush(stdout);                                                                            \
    } while (0)

static inline int test_summary(void) {
    printf("%d passed, %d failed\n", test_passed, test_failed);
    return test_failed ? 1 : 0;
}

#endif
