/* Registry entries of the 'arith' family (filled in by its operators). */
#include "check/registry.h"

const ogc_family ogc_family_arith = {0, 0};
