/* A library whose constructor never returns: loading it must end at the checker's --timeout with
 * "a constructor in the library never returns?", not hang the checker. */
#include <stdint.h>
#include <unistd.h>

__attribute__((constructor)) static void never_returns(void) {
    for (;;) sleep(1);
}

__attribute__((visibility("default"))) int Forward(int nparam, void **params, int *ndims,
                                                   int64_t **shapes, const char **dtypes,
                                                   void *stream, void *extra) {
    (void)nparam, (void)params, (void)ndims, (void)shapes, (void)dtypes, (void)stream, (void)extra;
    return 0;
}
