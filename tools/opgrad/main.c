/* The `opgrad` command.
 *
 *   opgrad info        version, CPU ISA, active ISA, threads
 *   opgrad selfcheck   Mish / MishBackward through the public aclnn API, on every ISA this CPU
 *                      has and in fp32 / fp16 / bf16, against the float64 references; prints the
 *                      max error in ulps and exits non-zero when a bound is exceeded.
 * (`opgrad check`, the full gradient-consistency checker, builds on this.) */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_mish.h"
#include "aclnnop/aclnn_mish_backward.h"
#include "check/reference.h"
#include "opgrad/opgrad.h"
#include "tensor/dtype.h"

static int cmd_info(void) {
    printf("opgrad %s\n", opgrad_version());
    printf("cpu isa:    %s\n", opgrad_isa_name(opgrad_cpu_isa()));
    printf("active isa: %s (cap with OPGRAD_ISA=scalar|avx2|avx512)\n",
           opgrad_isa_name(opgrad_active_isa()));
    printf("threads:    %d (OPGRAD_NUM_THREADS)\n", opgrad_get_num_threads());
    return 0;
}

enum { N = 4096 };

static double decode(const void *p, int64_t i, aclDataType dt) {
    if (dt == ACL_FLOAT16) return og_f16_to_f32(((const uint16_t *)p)[i]);
    if (dt == ACL_BF16) return og_bf16_to_f32(((const uint16_t *)p)[i]);
    return ((const float *)p)[i];
}

static void encode(void *p, int64_t i, aclDataType dt, double v) {
    if (dt == ACL_FLOAT16) ((uint16_t *)p)[i] = og_f32_to_f16((float)v);
    else if (dt == ACL_BF16) ((uint16_t *)p)[i] = og_f32_to_bf16((float)v);
    else ((float *)p)[i] = (float)v;
}

// ulps of dt between got and the exact value ref.
static double ulps(aclDataType dt, double got, double ref) {
    if (isnan(ref) || isnan(got)) return isnan(ref) && isnan(got) ? 0 : INFINITY;
    if (isinf(ref) || isinf(got)) return got == ref ? 0 : INFINITY;
    int mant = dt == ACL_FLOAT16 ? 10 : dt == ACL_BF16 ? 7 : 23;
    int emin = dt == ACL_FLOAT16 ? -14 : -126, e;
    frexp(ref, &e);
    int ex = ref == 0 || e - 1 < emin ? emin : e - 1;
    return fabs(got - ref) / ldexp(1.0, ex - mant);
}

typedef struct result {
    double fwd, bwd;
    int status;
} result;

static result run_case(opgrad_isa isa, aclDataType dt) {
    static float xs[N * 2], gs[N * 2], ys[N * 2], ds[N * 2]; // storage for any dtype
    result r = {0, 0, 0};
    opgrad_set_max_isa(isa);
    // x: a dense grid over [-20, 20] plus special values; grad: varied signs and scales.
    static const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, 1e-30, -1e-30, -90, 90};
    for (int i = 0; i < N; i++) {
        double x = i < 8 ? specials[i] : -20.0 + 40.0 * i / N;
        encode(xs, i, dt, x);
        encode(gs, i, dt, (i % 7 - 3) * 0.75);
    }
    int64_t shape[1] = {N};
    aclTensor *x = aclCreateTensor(shape, 1, dt, NULL, 0, ACL_FORMAT_ND, shape, 1, xs);
    aclTensor *g = aclCreateTensor(shape, 1, dt, NULL, 0, ACL_FORMAT_ND, shape, 1, gs);
    aclTensor *y = aclCreateTensor(shape, 1, dt, NULL, 0, ACL_FORMAT_ND, shape, 1, ys);
    aclTensor *d = aclCreateTensor(shape, 1, dt, NULL, 0, ACL_FORMAT_ND, shape, 1, ds);
    uint64_t ws;
    aclOpExecutor *ex;
    void *work = NULL;
    r.status = aclnnMishGetWorkspaceSize(x, y, &ws, &ex);
    if (!r.status && ws) r.status = aclrtMalloc(&work, ws, ACL_MEM_MALLOC_HUGE_FIRST);
    if (!r.status) r.status = aclnnMish(work, ws, ex, NULL);
    if (work) aclrtFree(work), work = NULL;
    if (!r.status) r.status = aclnnMishBackwardGetWorkspaceSize(g, x, d, &ws, &ex);
    if (!r.status && ws) r.status = aclrtMalloc(&work, ws, ACL_MEM_MALLOC_HUGE_FIRST);
    if (!r.status) r.status = aclnnMishBackward(work, ws, ex, NULL);
    if (work) aclrtFree(work);
    for (int i = 0; !r.status && i < N; i++) {
        double xv = decode(xs, i, dt), gv = decode(gs, i, dt);
        double uf = ulps(dt, decode(ys, i, dt), og_ref_mish(xv));
        double ref_b = gv * og_ref_mish_grad(xv);
        // Near the root of mish' (x ~ -1.19) fp32 errors are measured against the magnitude of
        // the terms that cancel there, in ulps of that magnitude.
        double mag = fabs(gv) * (fabs(og_ref_mish_tanhx(xv)) + fabs(xv) * og_ref_sigmoid(xv));
        double ub = ulps(dt, decode(ds, i, dt), ref_b);
        if (dt == ACL_FLOAT && xv > -1.4 && xv < -1.0) ub = fmin(ub, ulps(dt, decode(ds, i, dt) - ref_b + mag, mag));
        if (uf > r.fwd) r.fwd = uf;
        if (ub > r.bwd) r.bwd = ub;
    }
    aclDestroyTensor(x);
    aclDestroyTensor(g);
    aclDestroyTensor(y);
    aclDestroyTensor(d);
    return r;
}

static int cmd_selfcheck(void) {
    static const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    int failures = 0;
    opgrad_isa cap = opgrad_active_isa();
    printf("%-8s %-9s %-14s %-14s %s\n", "isa", "dtype", "mish max ulp", "grad max ulp", "status");
    for (int isa = OPGRAD_ISA_SCALAR; isa <= (int)cap; isa++) {
        for (int k = 0; k < 3; k++) {
            result r = run_case((opgrad_isa)isa, dts[k]);
            // Bounds: fp32 kernels are within a few ulp; 16-bit results are correctly rounded
            // fp32 values, so within 1 ulp of the exact result.
            double bound = dts[k] == ACL_FLOAT ? 8.0 : 1.0;
            bool ok = r.status == 0 && r.fwd <= bound && r.bwd <= bound;
            failures += !ok;
            printf("%-8s %-9s %-14.3f %-14.3f %s%s%s\n", opgrad_isa_name((opgrad_isa)isa),
                   og_dtype_name(dts[k]), r.fwd, r.bwd, ok ? "PASS" : "FAIL",
                   r.status ? ": " : "", r.status ? aclGetRecentErrMsg() : "");
        }
    }
    opgrad_set_max_isa(cap);
    printf(failures ? "selfcheck: %d FAILED\n" : "selfcheck: all passed\n", failures);
    return failures ? 1 : 0;
}

static void usage(void) {
    fprintf(stderr, "usage: opgrad info | opgrad selfcheck\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage();
        return 2;
    }
    if (!strcmp(argv[1], "info")) return cmd_info();
    if (!strcmp(argv[1], "selfcheck")) return cmd_selfcheck();
    usage();
    return 2;
}
