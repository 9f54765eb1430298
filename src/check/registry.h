/* How operator families join the checker's registry.
 *
 * Each family lives in its own src/check/registry_<family>.c, defines a static array of ogc_op
 * and ends with OGC_DEFINE_FAMILY(<family>, <array>); the family's OG_FAMILY line in
 * src/ops/ops.inc lists it. The checker, `opgrad check`, the tests and the benchmarks see every
 * entry. */
#ifndef OG_REGISTRY_H
#define OG_REGISTRY_H

#include "check/check.h"

typedef struct ogc_family {
    const ogc_op *ops;
    int count;
} ogc_family;

#define OGC_DEFINE_FAMILY(family, array)                                                           \
    const ogc_family ogc_family_##family = {array, (int)(sizeof array / sizeof *array)};

/// The families are the OG_FAMILY lines of src/ops/ops.inc, in its order.
#define OG_FAMILY(family) extern const ogc_family ogc_family_##family;
#include "ops/ops.inc"
#undef OG_FAMILY

#endif
