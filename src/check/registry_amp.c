#include "check/registry.h"
static const ogc_op amp_ops[] = {{0}};
OGC_DEFINE_FAMILY(amp, amp_ops)
