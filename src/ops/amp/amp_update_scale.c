/* aclnnAmpUpdateScale: the dynamic loss scale's update after a step (PyTorch's
 * _amp_update_scale_, out of place as in ops-math):
 *   foundInf != 0:            scale *= backoffFactor, tracker = 0
 *   tracker + 1 == interval:  scale *= growthFactor if that stays finite (else unchanged),
 *                             tracker = 0
 *   otherwise:                tracker += 1
 * The product is formed in double and rounded once to the scale's dtype, whose finiteness
 * decides the growth (an fp16 scale does not grow past 65504). One-element tensors: a CUSTOM
 * step on the calling thread. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "aclnnop/aclnn_amp_update_scale.h"
#include "engine/convert.h"
#include "engine/program.h"
#include "ops/common/checks.h"

typedef struct amp_plan {
    aclDataType dt;
    double growth, backoff;
    int64_t interval;
} amp_plan;

// slots: currentScale, growthTracker, foundInf | updatedScale, updatedGrowthTracker
static void amp_run(const aclOpExecutor *e, const void *params, char *scratch) {
    (void)scratch;
    const amp_plan *p = params;
    double scale = og_load_elem(og_executor_addr(e, 0), p->dt);
    int32_t tracker;
    memcpy(&tracker, og_executor_addr(e, 1), sizeof tracker);
    float found = og_load_elem(og_executor_addr(e, 2), p->dt);
    float out_scale = (float)scale;
    int32_t out_tracker;
    if (found != 0) { // NaN counts as found, as any non-zero
        out_scale = (float)(scale * p->backoff);
        out_tracker = 0;
    } else if ((int64_t)tracker + 1 == p->interval) {
        char grown[4];
        og_store_elem(grown, p->dt, (float)(scale * p->growth));
        float g = og_load_elem(grown, p->dt);
        if (isfinite(g)) out_scale = g;
        out_tracker = 0;
    } else {
        out_tracker = tracker + 1;
    }
    og_store_elem(og_executor_addr(e, 3), p->dt, out_scale);
    memcpy(og_executor_addr(e, 4), &out_tracker, sizeof out_tracker);
}

#define SCALE_DTYPES (OG_DT(ACL_FLOAT) | OG_DT(ACL_FLOAT16) | OG_DT(ACL_BF16))

// A live tensor of dtype `want` (ACL_DT_UNDEFINED: float32, float16 or bfloat16) and rank <= 8
// (161002).
static aclnnStatus amp_check(const og_opdesc *op, const char *name, const aclTensor *t,
                             aclDataType want, const char *rule) {
    char fn[96];
    snprintf(fn, sizeof fn, "%sGetWorkspaceSize", op->name);
    OG_TRY(og_check_live(fn, name, t, OG_OBJ_TENSOR));
    OG_TRY(og_check_fits_block(op, name, t));
    bool ok = want == ACL_DT_UNDEFINED ? (unsigned)t->dtype < 64 && (SCALE_DTYPES & OG_DT(t->dtype))
                                       : t->dtype == want;
    if (!ok)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: %s has dtype %s; %s", fn, name,
                       og_dtype_name(t->dtype), rule);
    if (t->ndim > OG_MAX_DIMS)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: %s has rank %d; at most 8", fn, name, t->ndim);
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnAmpUpdateScaleGetWorkspaceSize(const aclTensor *currentScale,
                                                const aclTensor *growthTracker,
                                                const aclTensor *foundInf, double growthFactor,
                                                double backoffFactor, int64_t growthInterval,
                                                const aclTensor *updatedScale,
                                                const aclTensor *updatedGrowthTracker,
                                                uint64_t *workspaceSize, aclOpExecutor **executor) {
    const og_opdesc *op = &og_op_AmpUpdateScale;
    const char *names[] = {"currentScale", "growthTracker", "foundInf", "updatedScale",
                           "updatedGrowthTracker"};
    const aclTensor *io[] = {currentScale, growthTracker, foundInf, updatedScale,
                             updatedGrowthTracker};
    OG_TRY(og_check_args(op, workspaceSize, executor, 5, names, (const void *const *)io));
    OG_TRY(amp_check(op, "currentScale", currentScale, ACL_DT_UNDEFINED,
                     "supported: float32, float16, bfloat16"));
    aclDataType dt = currentScale->dtype;
    char rule[64];
    snprintf(rule, sizeof rule, "it must be currentScale's, %s", og_dtype_name(dt));
    OG_TRY(amp_check(op, "growthTracker", growthTracker, ACL_INT32, "it must be int32"));
    OG_TRY(amp_check(op, "foundInf", foundInf, dt, rule));
    OG_TRY(amp_check(op, "updatedScale", updatedScale, dt, rule));
    OG_TRY(
        amp_check(op, "updatedGrowthTracker", updatedGrowthTracker, ACL_INT32, "it must be int32"));
    for (int k = 0; k < 5; k++) // upstream's tiling rule: every tensor is [1] (561002)
        if (io[k]->numel != 1) {
            char sh[128];
            return og_fail(ACLNN_ERR_INNER_TILING_ERROR,
                           "%sGetWorkspaceSize: %s has shape %s; it must hold one element ([1])",
                           op->name, names[k],
                           og_shape_str(io[k]->dims, io[k]->ndim, sh, sizeof sh));
        }
    if (growthInterval < 1 || growthInterval > 2147483647)
        return og_fail(ACLNN_ERR_INNER_TILING_ERROR,
                       "%sGetWorkspaceSize: growthInterval is %lld; it must be in [1, 2147483647]",
                       op->name, (long long)growthInterval);
    if (!isfinite(growthFactor) || !isfinite(backoffFactor))
        return og_fail(
            ACLNN_ERR_PARAM_INVALID,
            "%sGetWorkspaceSize: growthFactor (%g) and backoffFactor (%g) must be finite", op->name,
            growthFactor, backoffFactor);
    OG_TRY(og_check_io_memory(op, 3, io, 2, io + 3, names));
    og_prog p;
    og_prog_init(&p, op, 3, 2, io);
    amp_plan a = {dt, growthFactor, backoffFactor, growthInterval};
    og_prog_custom(&p, amp_run, &a, sizeof a, (const int[]){0, 1, 2, 3, 4}, 5, 0);
    return og_prog_publish(&p, workspaceSize, executor);
}
