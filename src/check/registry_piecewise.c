/* Registry entries of the 'piecewise' family (filled in by its operators). */
#include "check/registry.h"

const ogc_family ogc_family_piecewise = {0, 0};
