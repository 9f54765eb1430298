/* What is Mish-specific and not derived by tests/kernel/test_elementwise.c (which runs the mish and
 * mish_tanhx registry entries like every other operator):
 *
 *  - the per-ISA kernel tables hold the per-build symbols (one instance of OG_ISA_TABLE, which
 *    every kernel table is made with);
 *  - the cancellation at mish's minimum: every fp32 value in windows around the root of mish'
 *    (-1.1924) and at both edges of the region where t + x sigmoid(x) (1 - t^2) cancels, through
 *    aclnnMishBackward and aclnnMishBackwardWithTanhx (t from aclnnMishWithTanhx, as a framework
 *    passes it), at several gradOutput values, on every ISA level this CPU has: within the
 *    registry entries' bound (the checker's rule, with their float64 references and magnitude
 *    bounds) and bitwise equal to the scalar level. The harness samples a few thousand values
 *    there; this covers all ~700,000.
 * OPGRAD_TEST_QUICK=1 takes every 64th value of the windows. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_mish.h"
#include "aclnnop/aclnn_mish_backward.h"
#include "check/check.h"
#include "check/compare.h"
#include "engine/isa_table.h"
#include "opgrad/opgrad.h"
#include "ops/activation/mish/mish_kernel.h"
#include "test.h"
#include "testutil.h"

static void test_kernel_tables(void) {
    const og_ew_compute_fn *tables[] = {og_mish_fwd_kernels, og_mish_fwd_tanhx_kernels,
                                        og_mish_bwd_kernels, og_mish_bwd_tanhx_kernels};
    const og_ew_compute_fn expect[][3] = {
        {og_mish_fwd__scalar, og_mish_fwd__avx2, og_mish_fwd__avx512},
        {og_mish_fwd_tanhx__scalar, og_mish_fwd_tanhx__avx2, og_mish_fwd_tanhx__avx512},
        {og_mish_bwd__scalar, og_mish_bwd__avx2, og_mish_bwd__avx512},
        {og_mish_bwd_tanhx__scalar, og_mish_bwd_tanhx__avx2, og_mish_bwd_tanhx__avx512},
    };
    for (int k = 0; k < 4; k++)
        for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++)
            CHECKF(tables[k][isa] == expect[k][og_isa_build((opgrad_isa)isa)],
                   "mish table %d, entry %s", k, opgrad_isa_name((opgrad_isa)isa));
}

typedef struct win_stats {
    double max_ratio; // err / tolerance
    int64_t n, bad, mismatch;
} win_stats;

// Judges n backward results against the registry entry's reference (the checker's rule).
static void judge(const ogc_op *op, int64_t n, const float *g, const float *x, const float *t,
                  const float *got, win_stats *s, const char *what, int isa) {
    for (int64_t i = 0; i < n; i++) {
        double xv = x[i], saved[1] = {t ? t[i] : 0}, gx[1], mag[1] = {0};
        op->ref_backward(op, &xv, saved, g[i], gx, mag);
        double m = mag[0] != 0 ? fabs(mag[0]) : fabs(gx[0]);
        double err = fabs(got[i] - gx[0]),
               tol = ogc_tolerance(op->fp32_ulps, ACL_FLOAT, gx[0], m, 1);
        s->max_ratio = fmax(s->max_ratio, err / tol);
        if (!(err <= tol) && s->bad++ < 5)
            fprintf(stderr, "    %s %s x=%a g=%a: got %a, reference %.17g (err %.3g x tolerance)\n",
                    what, opgrad_isa_name((opgrad_isa)isa), x[i], g[i], got[i], gx[0], err / tol);
        s->n++;
    }
}

static void test_root_windows(void) {
    const ogc_op *mish = ogc_registry_find("mish"), *tanhx = ogc_registry_find("mish_tanhx");
    CHECK(mish && tanhx);
    if (!mish || !tanhx) return;
    static const float windows[][2] = {{-1.23f, -1.15f}, {-1.0f, -0.97f}, {-1.43f, -1.4f}};
    static const float gset[] = {1.0f, -0.75f, 3.5f, 0x1p-10f, 1e30f};
    uint32_t step = test_quick_mode() ? 64 : 1;
    win_stats st[2][OPGRAD_ISA_COUNT] = {{{0}}};
    for (int w = 0; w < 3; w++) {
        uint32_t lo = test_f2u(windows[w][1]), hi = test_f2u(windows[w][0]); // |lo| < |hi|
        int64_t n = (int64_t)((hi - lo) / step + 1);
        float *x = malloc((size_t)n * 4), *g = malloc((size_t)n * 4), *y = malloc((size_t)n * 4),
              *t = malloc((size_t)n * 4), *d[2][OPGRAD_ISA_COUNT] = {{0}};
        for (int64_t i = 0; i < n; i++)
            x[i] = test_u2f(lo + (uint32_t)i * step), g[i] = gset[i % 5];
        int64_t dims[1] = {n};
        aclTensor *tx = test_tensor(dims, 1, ACL_FLOAT, x),
                  *tg = test_tensor(dims, 1, ACL_FLOAT, g);
        aclTensor *ty = test_tensor(dims, 1, ACL_FLOAT, y),
                  *tt = test_tensor(dims, 1, ACL_FLOAT, t);
        aclnnStatus s;
        opgrad_set_max_isa(OPGRAD_ISA_SCALAR); // t as the scalar level makes it, for every level
        OP_RUN(s, aclnnMishWithTanhxGetWorkspaceSize(tx, ty, tt, &ws_, &ex_), aclnnMishWithTanhx);
        CHECK_EQ(s, ACLNN_SUCCESS);
        for (int isa = 0; isa <= (int)opgrad_cpu_isa(); isa++) {
            opgrad_set_max_isa((opgrad_isa)isa);
            for (int k = 0; k < 2; k++) {
                d[k][isa] = malloc((size_t)n * 4);
                aclTensor *td = test_tensor(dims, 1, ACL_FLOAT, d[k][isa]);
                if (k == 0)
                    OP_RUN(s, aclnnMishBackwardGetWorkspaceSize(tg, tx, td, &ws_, &ex_),
                           aclnnMishBackward);
                else
                    OP_RUN(s,
                           aclnnMishBackwardWithTanhxGetWorkspaceSize(tg, tx, tt, td, &ws_, &ex_),
                           aclnnMishBackwardWithTanhx);
                CHECK_EQ(s, ACLNN_SUCCESS);
                aclDestroyTensor(td);
                judge(k ? tanhx : mish, n, g, x, k ? t : NULL, d[k][isa], &st[k][isa],
                      k ? "MishBackwardWithTanhx" : "MishBackward", isa);
                if (isa && memcmp(d[k][isa], d[k][0], (size_t)n * 4)) st[k][isa].mismatch++;
            }
        }
        opgrad_set_max_isa(OPGRAD_ISA_COUNT - 1);
        aclDestroyTensor(tx), aclDestroyTensor(tg), aclDestroyTensor(ty), aclDestroyTensor(tt);
        for (int k = 0; k < 2; k++)
            for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) free(d[k][isa]);
        free(x), free(g), free(y), free(t);
    }
    for (int k = 0; k < 2; k++)
        for (int isa = 0; isa <= (int)opgrad_cpu_isa(); isa++) {
            const char *name = k ? "MishBackwardWithTanhx" : "MishBackward";
            win_stats *w = &st[k][isa];
            printf("  %-22s %-7s %lld values near the minimum: max err / tolerance %.3f\n", name,
                   opgrad_isa_name((opgrad_isa)isa), (long long)w->n, w->max_ratio);
            CHECKF(w->bad == 0, "%s %s: %lld results outside the registry's bound", name,
                   opgrad_isa_name((opgrad_isa)isa), (long long)w->bad);
            CHECKF(w->mismatch == 0, "%s %s: windows differ bitwise from the scalar level", name,
                   opgrad_isa_name((opgrad_isa)isa));
        }
}

int main(void) {
    RUN(test_kernel_tables);
    RUN(test_root_windows);
    return test_summary();
}
