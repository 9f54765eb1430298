/* Internals shared by the checker's files. */
#ifndef OG_CHECK_INTERNAL_H
#define OG_CHECK_INTERNAL_H

#include "check/check.h"
#include "engine/gemm.h"

typedef enum {
    OGC_VIEW_CONTIGUOUS, // row-major
    OGC_VIEW_TRANSPOSED, // stored column-major (last two dims swapped), strides permuted
    OGC_VIEW_PADDED,     // rows padded by 2 elements and an offset of 3 into the storage
} ogc_view;

typedef struct ogc_layout {
    const char *name;
    ogc_shape in[OGC_MAX_IN];
    ogc_view view[OGC_MAX_IN];
    ogc_shape out;
    bool mixed;  // grad_output arrives in another dtype than the forward's (mixed precision)
    bool engine; // engine-sized (large, wide, bcast_wide): checks the kernels at every thread
                 // count; the float64 formula is checked on the small layouts
    bool sweep;  // the inputs densely cover the operator's special regions (no random draws)
    bool gated;  // the engines' size gates lowered for the case (engine/blocking.h): the paths
                 // of tensors of 4-16 MiB and more run on this layout
    og_gemm_blocking gemm; // engine layouts: the tiny GEMM blocks the case runs with
                           // (engine/blocking.h, OG_BLOCK_GEMM_*)
} ogc_layout;

/// Fills a layout for an operator with nin inputs; false when the layout does not apply.
bool ogc_layout_build(const char *name, int nin, ogc_layout *l);

static inline int64_t ogc_numel(const ogc_shape *s) {
    int64_t n = 1;
    for (int d = 0; d < s->ndim; d++) n *= s->dims[d];
    return n;
}

#endif
