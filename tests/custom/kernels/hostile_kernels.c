/* Hostile variants of the FusedAddScale example's forward: kernels that are correct (or crash)
 * but misbehave towards the process running them. tests/custom/test_custom_check.c asserts
 * that `opgrad check --custom` contains each and still writes a clean report. */
#define _DEFAULT_SOURCE // setsid, usleep
#include "../../../examples/custom/fused_add_scale.c"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ARGS                                                                                       \
    int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes, void *stream,    \
        void *extra
#define PASS_ARGS nparam, params, ndims, shapes, dtypes, stream, extra

// Thousands of lines on stdout and stderr, a line that looks like the checker's own summary,
// terminal escapes and a carriage return; then the correct result.
EXPORT int FusedAddScale_Spam(ARGS) {
    for (int i = 0; i < 3000; i++) printf("kernel debug line %d: all good\n", i);
    printf("65 passed, 0 failed, 0 mistrusted, 0 skipped in 0.1 s\n");
    printf("\033[2J\033[Hwiped?\rPASS\n");
    for (int i = 0; i < 200; i++) fprintf(stderr, "kernel warning %d\n", i);
    return FusedAddScale(PASS_ARGS);
}

// Allocates and touches 64 MiB at a time, never freeing and never checking for NULL (at most
// 4 GiB, so that even without a limit it ends): under --max-memory it crashes on the first
// allocation the limit refuses.
EXPORT int FusedAddScale_Hog(ARGS) {
    for (int i = 0; i < 64; i++) {
        char *p = malloc(64 << 20);
        memset(p, i + 1, 64 << 20);
        __asm__ volatile("" : : "r"(p) : "memory"); // keep the writes
    }
    return FusedAddScale(PASS_ARGS);
}

// Leaves two processes behind, each holding the kernel's stdout: one forked (in the call's
// process group) and one that leaves the group with setsid(). Both sleep a minute. Their pids
// are appended to $OPGRAD_TEST_PIDFILE, so the test can check that the checker ended them.
EXPORT int FusedAddScale_Spawn(ARGS) {
    const char *pidfile = getenv("OPGRAD_TEST_PIDFILE");
    for (int escape = 0; escape < 2; escape++) {
        pid_t pid = fork();
        if (pid == 0) {
            if (escape) setsid();
            printf("%s grandchild %d running\n", escape ? "setsid" : "forked", (int)getpid());
            fflush(stdout);
            sleep(60);
            _exit(0);
        }
        FILE *f = pidfile && pid > 0 ? fopen(pidfile, "a") : NULL;
        if (f) fprintf(f, "%d\n", (int)pid), fclose(f);
    }
    return FusedAddScale(PASS_ARGS);
}

// Correct but slow: 300 ms per call (passes with --timeout 1).
EXPORT int FusedAddScale_Sleep300ms(ARGS) {
    usleep(300 * 1000);
    return FusedAddScale(PASS_ARGS);
}

// Correct but slower than --timeout 0.5: 2 s per call.
EXPORT int FusedAddScale_Sleep2s(ARGS) {
    usleep(2000 * 1000);
    return FusedAddScale(PASS_ARGS);
}
