/* Every registered operator passes the checker on every dtype and layout, in fast and full mode,
 * over several seeds and on every ISA of this CPU: zero false failures. (scripts/check_seeds.sh
 * runs the default `opgrad check` over 100 seeds; OPGRAD_TEST_QUICK=1 runs fewer here.) */
#include <string.h>

#include "check/check.h"
#include "opgrad/opgrad.h"
#include "tensor/dtype.h"
#include "test.h"
#include "testutil.h"

static void run_all(ogc_mode mode, uint64_t seed, int *cases) {
    static const aclDataType dts[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    ogc_options opt = {.mode = mode, .seed = seed};
    for (int o = 0; o < ogc_registry_count(); o++) {
        const ogc_op *op = ogc_registry_get(o);
        for (int l = 0; l < ogc_layout_count(); l++) {
            const char *layout = ogc_layout_name(l);
            ogc_report rep;
            ogc_status st = ogc_check_formula(op, layout, &opt, &rep);
            CHECKF(st == OGC_PASS || st == OGC_SKIPPED, "%s: %s", rep.repro, rep.diagnosis);
            for (int d = 0; d < 3; d++) {
                st = ogc_check_case(op, dts[d], layout, &opt, &rep);
                CHECKF(st == OGC_PASS || st == OGC_SKIPPED, "%s: %s %s", rep.repro,
                       ogc_status_name(st), rep.diagnosis);
                *cases += st != OGC_SKIPPED;
            }
        }
    }
}

static void test_builtins_pass_over_seeds(void) {
    int cases = 0;
    uint64_t seeds = test_quick_mode() ? 1 : 4;
    for (uint64_t seed = 1; seed <= seeds; seed++) run_all(OGC_MODE_FAST, seed, &cases);
    run_all(OGC_MODE_FULL, 99, &cases);
    printf("  %d cases checked\n", cases);
}

static void test_builtins_pass_on_every_isa(void) {
    opgrad_isa cpu = opgrad_cpu_isa();
    int cases = 0;
    for (int isa = OPGRAD_ISA_SCALAR; isa < (int)cpu; isa++) { // the seeds above ran at `cpu`
        opgrad_set_max_isa((opgrad_isa)isa);
        run_all(OGC_MODE_FAST, 100 + (uint64_t)isa, &cases);
    }
    opgrad_set_max_isa(OPGRAD_ISA_COUNT);
    printf("  %d cases checked\n", cases);
}

int main(void) {
    RUN(test_builtins_pass_over_seeds);
    RUN(test_builtins_pass_on_every_isa);
    return test_summary();
}
