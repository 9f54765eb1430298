/* BiasAdd for the MindSpore stage (tests/mindspore/test_mindspore.py, part F): y = x + bias, in
 * MindSpore's aot ABI, float32 and float64, with a correct backward and a deliberately broken one.
 *
 *   x [N, C], bias [C] (broadcast over rows)  ->  y [N, C]
 *   BiasAddGrad           dx = dy [N, C], dbias = dy summed over rows [C]     (correct)
 *   BiasAddGradNoReduce   dx = dy, and dy copied whole into dbias: N*C elements written into a
 *                         [C] gradient (the mistake: the broadcast gradient is not reduced).
 *                         MindSpore allocates dbias [C] and does not notice the overrun.
 *
 * Build: cc -O2 -shared -fPIC -I<opgrad>/include bias_add.c -o libbias_add.so */
#include <stdint.h>
#include <string.h>

#include "opgrad/custom_op.h"

#define EXPORT __attribute__((visibility("default")))

static int elem(const char *dt) {
    return opgrad_aot_dtype_is(dt, "float32") ? 4 : opgrad_aot_dtype_is(dt, "float64") ? 8 : 0;
}

// x, bias, y: nparam 3, same dtype, x [N, C], bias [C], y [N, C].
EXPORT int BiasAdd(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes,
                   void *stream, void *extra) {
    (void)stream, (void)extra;
    if (nparam != 3 || ndims[0] != 2 || ndims[1] != 1 || ndims[2] != 2) return 1;
    int es = elem(dtypes[0]);
    if (!es || elem(dtypes[1]) != es || elem(dtypes[2]) != es) return 2;
    int64_t n = shapes[0][0], c = shapes[0][1];
    if (shapes[1][0] != c || shapes[2][0] != n || shapes[2][1] != c) return 3;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < c; j++) {
            if (es == 4)
                ((float *)params[2])[i * c + j] =
                    ((const float *)params[0])[i * c + j] + ((const float *)params[1])[j];
            else
                ((double *)params[2])[i * c + j] =
                    ((const double *)params[0])[i * c + j] + ((const double *)params[1])[j];
        }
    return 0;
}

// x, bias, y, dy, dx, dbias: nparam 6.
static int grad(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes,
                int reduce) {
    if (nparam != 6 || ndims[0] != 2 || ndims[3] != 2) return 1;
    int es = elem(dtypes[0]);
    if (!es || elem(dtypes[3]) != es || elem(dtypes[4]) != es || elem(dtypes[5]) != es) return 2;
    int64_t n = shapes[3][0], c = shapes[3][1];
    memcpy(params[4], params[3], (size_t)(n * c * es)); // dx = dy
    if (!reduce) {                                      // the bug: dbias = dy, unreduced
        memcpy(params[5], params[3], (size_t)(n * c * es));
        return 0;
    }
    for (int64_t j = 0; j < c; j++) {
        double s = 0;
        for (int64_t i = 0; i < n; i++)
            s += es == 4 ? ((const float *)params[3])[i * c + j]
                         : ((const double *)params[3])[i * c + j];
        if (es == 4)
            ((float *)params[5])[j] = (float)s;
        else
            ((double *)params[5])[j] = s;
    }
    return 0;
}

EXPORT int BiasAddGrad(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes,
                       void *stream, void *extra) {
    (void)stream, (void)extra;
    return grad(nparam, params, ndims, shapes, dtypes, 1);
}

EXPORT int BiasAddGradNoReduce(int nparam, void **params, int *ndims, int64_t **shapes,
                               const char **dtypes, void *stream, void *extra) {
    (void)stream, (void)extra;
    return grad(nparam, params, ndims, shapes, dtypes, 0);
}
