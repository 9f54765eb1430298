/* Test layouts: the shapes and memory layouts the checker runs every operator in. */
#include <string.h>

#include "check/check_internal.h"

static const char *const layout_names[] = {
    "contiguous", "size1", "strided", "offset", "scalar", "empty",  "rank8",
    "large",      "mixed", "bcast0",  "bcast1", "bcast2", "bcast3",
};

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
    int64_t n_large = 3 * 4096 + 1; // crosses the engine's tile boundaries
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
            set_dims(&l->in[k], 1, &n_large);
        else if (!strncmp(name, "bcast", 5) && name[5] >= '0' && name[5] <= '3' && !name[6]) {
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
