/* Broken variants of the FusedAddScale example, each a mistake seen in real integrations. The
 * correct kernels come from the example itself; every variant below differs in one thing.
 * tests/custom/test_custom_check.c asserts the checker's diagnosis for each. */
#include "../../../examples/custom/fused_add_scale.c"

#include <stdlib.h>

#define ARGS                                                                                       \
    int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes, void *stream,    \
        void *extra
#define PASS_ARGS nparam, params, ndims, shapes, dtypes, stream, extra

// Forward writing float16 values into the float32 output it was given.
EXPORT int FusedAddScale_Fp16Out(ARGS) {
    (void)stream, (void)extra;
    if (nparam != 4) return 1;
    int64_t rows = 0, cols = 0;
    if (!shapes_ok(ndims, shapes, &rows, &cols)) return 2;
    kind kx = kind_of(dtypes[0]);
    double scale = load(params[2], 0, kind_of(dtypes[2]));
    for (int64_t i = 0; i < rows * cols; i++)
        store(params[3], i, F16, (load(params[0], i, kx) + load(params[1], i % cols, kx)) * scale);
    return 0;
}

// Forward vectorised by 8 columns whose tail path dereferences a bad pointer.
EXPORT int FusedAddScale_CrashTail(ARGS) {
    int64_t cols = ndims[0] ? shapes[0][ndims[0] - 1] : 1;
    // the tail path indexes with a garbage stride: far outside any mapping
    if (cols % 8 != 0) ((volatile float *)params[3])[cols << 36] = 0;
    return FusedAddScale(PASS_ARGS);
}

// Backward that forgets the reduction over rows: dbias written as [N, C].
EXPORT int FusedAddScaleGrad_NoReduce(ARGS) {
    int rc = FusedAddScaleGrad(PASS_ARGS);
    if (rc) return rc;
    int64_t rows = 0, cols = 0;
    shapes_ok(ndims, shapes, &rows, &cols);
    double scale = load(params[2], 0, kind_of(dtypes[2]));
    for (int64_t i = 0; i < rows * cols; i++)
        store(params[6], i, kind_of(dtypes[6]), load(params[4], i, kind_of(dtypes[4])) * scale);
    return 0;
}

// Backward that returns 2 of 3 gradients: dscale is never written.
EXPORT int FusedAddScaleGrad_TwoOfThree(ARGS) {
    int64_t rows = 0, cols = 0;
    if (nparam != 8 || !shapes_ok(ndims, shapes, &rows, &cols)) return 1;
    double dscale_slot[1];
    void *p[8];
    memcpy(p, params, sizeof p);
    p[7] = dscale_slot; // computed into a scratch slot and dropped
    const char *dt[8];
    memcpy(dt, dtypes, sizeof dt);
    dt[7] = "float64";
    return FusedAddScaleGrad(nparam, p, ndims, shapes, dt, stream, extra);
}

// Backward with the sign of dx flipped.
EXPORT int FusedAddScaleGrad_SignFlip(ARGS) {
    int rc = FusedAddScaleGrad(PASS_ARGS);
    int64_t n = opgrad_aot_numel(ndims[5], shapes[5]);
    for (int64_t i = 0; i < n; i++)
        store(params[5], i, kind_of(dtypes[5]), -load(params[5], i, kind_of(dtypes[5])));
    return rc;
}

// Backward that averages the bias gradient over rows instead of summing it.
EXPORT int FusedAddScaleGrad_MeanBias(ARGS) {
    int rc = FusedAddScaleGrad(PASS_ARGS);
    int64_t rows = 0, cols = 0;
    shapes_ok(ndims, shapes, &rows, &cols);
    for (int64_t c = 0; c < cols; c++)
        store(params[6], c, kind_of(dtypes[6]),
              load(params[6], c, kind_of(dtypes[6])) / (double)rows);
    return rc;
}

// Backward with a small term that does not scale with dy (B(0) != 0): below the value
// tolerances, caught by running the backward with dy = 0.
EXPORT int FusedAddScaleGrad_Offset(ARGS) {
    int rc = FusedAddScaleGrad(PASS_ARGS);
    store(params[7], 0, kind_of(dtypes[7]), load(params[7], 0, kind_of(dtypes[7])) + 1e-9);
    return rc;
}

// Backward that writes dx as float16 whatever dx's dtype is.
EXPORT int FusedAddScaleGrad_Fp16Grad(ARGS) {
    int64_t n = opgrad_aot_numel(ndims[5], shapes[5]);
    double *dx = malloc((size_t)(n ? n : 1) * sizeof(double));
    void *p[8];
    const char *dt[8];
    memcpy(p, params, sizeof p);
    memcpy(dt, dtypes, sizeof dt);
    p[5] = dx, dt[5] = "float64";
    int rc = dx ? FusedAddScaleGrad(nparam, p, ndims, shapes, dt, stream, extra) : 4;
    for (int64_t i = 0; rc == 0 && i < n; i++) store(params[5], i, F16, dx[i]);
    free(dx);
    return rc;
}

// Backward that ends the process instead of returning.
EXPORT int FusedAddScaleGrad_Aborts(ARGS) {
    (void)nparam, (void)params, (void)ndims, (void)shapes, (void)dtypes, (void)stream, (void)extra;
    abort();
}

// Forward that ends the process with exit(3) instead of returning.
EXPORT int FusedAddScale_Exits(ARGS) {
    (void)nparam, (void)params, (void)ndims, (void)shapes, (void)dtypes, (void)stream, (void)extra;
    exit(3);
}

// Backward written for a different bprop convention (no y: x, bias, scale, dy, then 3
// gradients = 7 params): it refuses the 8 params it is called with by returning 1.
EXPORT int FusedAddScaleGrad_Nparam7(ARGS) {
    if (nparam != 7) return 1;
    return FusedAddScaleGrad(PASS_ARGS);
}

// Backward that leaves dx all zeros (it "forgot" to compute it).
EXPORT int FusedAddScaleGrad_ZeroDx(ARGS) {
    int rc = FusedAddScaleGrad(PASS_ARGS);
    int64_t n = opgrad_aot_numel(ndims[5], shapes[5]);
    for (int64_t i = 0; i < n; i++) store(params[5], i, kind_of(dtypes[5]), 0.0);
    return rc;
}

// Backward with the sign of the one-element dscale flipped.
EXPORT int FusedAddScaleGrad_SignFlipScale(ARGS) {
    int rc = FusedAddScaleGrad(PASS_ARGS);
    store(params[7], 0, kind_of(dtypes[7]), -load(params[7], 0, kind_of(dtypes[7])));
    return rc;
}

// Backward that scales its incoming gradient dy in place (a kernel must not write its inputs).
EXPORT int FusedAddScaleGrad_WritesInput(ARGS) {
    int rc = FusedAddScaleGrad(PASS_ARGS);
    if (rc) return rc;
    int64_t rows = 0, cols = 0;
    shapes_ok(ndims, shapes, &rows, &cols);
    for (int64_t i = 0; i < rows * cols; i++)
        store(params[4], i, kind_of(dtypes[4]), 2 * load(params[4], i, kind_of(dtypes[4])));
    return 0;
}
