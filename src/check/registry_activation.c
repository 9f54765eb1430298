/* Registry entries of the 'activation' family (filled in by its operators). */
#include "check/registry.h"

const ogc_family ogc_family_activation = {0, 0};
