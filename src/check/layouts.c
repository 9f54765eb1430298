/* Test layouts: the shapes and memory layouts the checker runs every operator in. */
#include <string.h>

#include "check/check_internal.h"
#include "engine/blocking.h"

static const char *const layout_names[] = {
    "contiguous", "size1",  "strided", "offset", "scalar", "empty", "rank8",      "large",
    "mixed",      "bcast0", "bcast1",  "bcast2", "bcast3", "wide",  "bcast_wide", "sweep",
};

// Engine-sized shapes, from the engines' own block sizes (engine/blocking.h), as small as reaching
// every path allows (the checker's float64 work per element is what a case costs).
// large: 1-d, with the size gates lowered (the large-tensor paths run); four full reduction
// blocks and a partial one (half a block, half a chunk, half a vector and 3), so a sum over it
// combines 5 block sums across threads (not a power of 2: a pairwise combine of 4 is symmetric,
// and reversing it changes no bit; checker.c sets data whose sums show a changed order); the
// elementwise tiling cuts it into a range per thread on every thread count, each of many tiles.
#define LARGE_N                                                                                    \
    (4 * OG_BLOCK_REDUCE_TERMS + OG_BLOCK_REDUCE_TERMS / 2 + OG_RED_CHUNK / 2 +                    \
     OG_BLOCK_MAX_VLEN / 2 + 3)
// wide: rows longer than the widest reduction strip and four row-kernel steps, with a tail that
// is no multiple of any vector, and more rows than reduction lanes and checked thread counts (a
// column sum wraps its lanes; each thread count cuts the rows into different ranges).
#define WIDE_W (OG_RED_STRIP_WIDE + OG_RED_STRIP / 8 + OG_BLOCK_MAX_VLEN - 3)
#define WIDE_R (OG_RED_LANES + 2 * OG_BLOCK_CHECK_THREADS - 1)
_Static_assert(LARGE_N > 4 * OG_BLOCK_REDUCE_TERMS, "large crosses several reduction blocks");
_Static_assert(LARGE_N / 3 > OG_BLOCK_FOREACH_UNIT,
               "large in three list entries: several units each");
_Static_assert(WIDE_W > 4 * OG_BLOCK_MAX_ROW_STEP, "wide rows span several row-kernel steps");
_Static_assert(WIDE_W >= OG_BLOCK_EW_ROWWISE_MIN, "bcast_wide's row is read in place, per run");
static const int64_t large_n = LARGE_N, wide_w = WIDE_W, wide_r = WIDE_R;
// sweep: 1-d, the operator's special regions densely (checker.c draws the values)
static const int64_t sweep_n = 4096 + 5;

int ogc_layout_count(void) { return (int)(sizeof layout_names / sizeof *layout_names); }
const char *ogc_layout_name(int i) { return layout_names[i]; }

static void set_dims(ogc_shape *s, int ndim, const int64_t *dims) {
    s->ndim = ndim;
    for (int d = 0; d < ndim; d++) s->dims[d] = dims[d];
}

bool ogc_layout_build(const char *name, int nin, ogc_layout *l) {
    memset(l, 0, sizeof *l);
    l->name = name;
    static const int64_t base[] = {5, 7};
    l->engine = !strcmp(name, "large") || !strcmp(name, "wide") || !strcmp(name, "bcast_wide");
    l->sweep = !strcmp(name, "sweep");
    l->gated = !strcmp(name, "large");
    if (l->engine) // tiny GEMM blocks (engine/blocking.h): several N chunks, or batch groups of 2
        l->gemm = (og_gemm_blocking){OG_BLOCK_GEMM_MC, OG_BLOCK_GEMM_KC, OG_BLOCK_GEMM_NC,
                                     !strcmp(name, "wide") ? OG_BLOCK_GEMM_PACK_GROUPS
                                                           : OG_BLOCK_GEMM_PACK_CHUNKS,
                                     OG_BLOCK_GEMM_THREAD_FLOPS};
    for (int k = 0; k < nin; k++) l->view[k] = OGC_VIEW_CONTIGUOUS;
    for (int k = 0; k < nin; k++) {
        if (!strcmp(name, "contiguous"))
            set_dims(&l->in[k], 2, base);
        else if (!strcmp(name, "mixed"))
            set_dims(&l->in[k], 2, base), l->mixed = true;
        else if (!strcmp(name, "size1"))
            set_dims(&l->in[k], 3, (const int64_t[]){3, 1, 4});
        else if (!strcmp(name, "strided"))
            set_dims(&l->in[k], 2, base), l->view[k] = OGC_VIEW_TRANSPOSED;
        else if (!strcmp(name, "offset"))
            set_dims(&l->in[k], 2, base), l->view[k] = OGC_VIEW_PADDED;
        else if (!strcmp(name, "scalar"))
            set_dims(&l->in[k], 0, base);
        else if (!strcmp(name, "empty"))
            set_dims(&l->in[k], 2, (const int64_t[]){0, 3});
        else if (!strcmp(name, "rank8"))
            set_dims(&l->in[k], 8, (const int64_t[]){2, 1, 2, 1, 1, 2, 1, 2});
        else if (!strcmp(name, "large"))
            set_dims(&l->in[k], 1, &large_n);
        else if (!strcmp(name, "sweep"))
            set_dims(&l->in[k], 1, &sweep_n);
        else if (!strcmp(name, "wide"))
            set_dims(&l->in[k], 2, (const int64_t[]){wide_r, wide_w});
        else if (!strcmp(name, "bcast_wide")) {
            // the first input a column [R, 1], the last a row [W], any between [R, W]: the
            // gradients sum along rows (W terms) and down columns (R terms, W outputs)
            if (nin < 2) return false;
            if (k == 0)
                set_dims(&l->in[k], 2, (const int64_t[]){wide_r, 1});
            else if (k == nin - 1)
                set_dims(&l->in[k], 1, &wide_w);
            else
                set_dims(&l->in[k], 2, (const int64_t[]){wide_r, wide_w});
        } else if (!strncmp(name, "bcast", 5) && name[5] >= '0' && name[5] <= '3' && !name[6]) {
            int which = name[5] - '0';
            if (which >= nin || nin < 2) return false; // needs an input to broadcast against
            if (k == which)
                set_dims(&l->in[k], 1, (const int64_t[]){7}); // [7] against [5,7]
            else
                set_dims(&l->in[k], 2, base);
        } else {
            return false;
        }
    }
    // the output shape is the broadcast of the inputs
    l->out.ndim = 0;
    for (int k = 0; k < nin; k++) {
        int64_t dims[OG_MAX_DIMS];
        int nd;
        og_broadcast_shapes(l->out.dims, l->out.ndim, l->in[k].dims, l->in[k].ndim, dims, &nd,
                            NULL);
        set_dims(&l->out, nd, dims);
    }
    return true;
}
