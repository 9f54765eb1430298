/* How operator families join the checker's registry.
 *
 * Each family lives in its own src/check/registry_<family>.c, defines a static array of ogc_op
 * and ends with OGC_DEFINE_FAMILY(<family>, <array>); then one line in OGC_FAMILIES below adds
 * it. The checker, `opgrad check`, the tests and the benchmarks see every entry. */
#ifndef OG_REGISTRY_H
#define OG_REGISTRY_H

#include "check/check.h"

typedef struct ogc_family {
    const ogc_op *ops;
    int count;
} ogc_family;

#define OGC_DEFINE_FAMILY(family, array)                                                           \
    const ogc_family ogc_family_##family = {array, (int)(sizeof array / sizeof *array)};

/// One X(family) per registry_<family>.c, in the order `opgrad check` lists them.
#define OGC_FAMILIES(X) X(mish) X(activation) X(piecewise) X(arith)

#define OGC_DECLARE_FAMILY(family) extern const ogc_family ogc_family_##family;
OGC_FAMILIES(OGC_DECLARE_FAMILY)

#endif
