/* Two builds of one symbol (VARIANT=1 and 2) for the reload-after-rebuild test. */
#include <stdint.h>
__attribute__((visibility("default"))) int Fill(int nparam, void **params, int *ndims,
                                                int64_t **shapes, const char **dtypes, void *stream,
                                                void *extra) {
    (void)ndims, (void)shapes, (void)dtypes, (void)stream, (void)extra;
    if (nparam != 1) return 1;
    *(float *)params[0] = VARIANT;
    return 0;
}
