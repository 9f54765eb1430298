/* A library whose constructor ends the process (exit(3)) while it is being loaded: the checker
 * must load it in a child, report "a constructor in it calls exit()" and still write its report.
 * The symbol exists so that only the constructor is at fault. */
#include <stdint.h>
#include <stdlib.h>

__attribute__((constructor)) static void ends_the_process(void) { exit(3); }

__attribute__((visibility("default"))) int Forward(int nparam, void **params, int *ndims,
                                                   int64_t **shapes, const char **dtypes,
                                                   void *stream, void *extra) {
    (void)nparam, (void)params, (void)ndims, (void)shapes, (void)dtypes, (void)stream, (void)extra;
    return 0;
}
