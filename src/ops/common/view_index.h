/* A tensor view copied into a custom step's parameters (engine/program.h, OG_STEP_CUSTOM): its
 * dtype, shape and strides, so phase 2 finds element i (row-major over the view) from the slot's
 * address alone. Host code (the issue-14 gather / scatter / bit-mask operators). */
#ifndef OG_OPS_COMMON_VIEW_INDEX_H
#define OG_OPS_COMMON_VIEW_INDEX_H

#include <stdbool.h>
#include <stdint.h>

#include "acl/acl_base.h"
#include "tensor/tensor.h"

typedef struct og_view {
    aclDataType dtype;
    int esize; // bytes per element
    int ndim;
    bool contiguous; // element i at i * esize
    int64_t dims[OG_MAX_DIMS];
    int64_t strides[OG_MAX_DIMS]; // elements
} og_view;

static inline void og_view_of(og_view *v, const aclTensor *t) {
    v->dtype = t->dtype;
    v->esize = (int)aclDataTypeSize(t->dtype);
    v->ndim = t->ndim;
    v->contiguous = true;
    int64_t expect = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        v->dims[d] = t->dims[d];
        v->strides[d] = t->strides[d];
        if (t->dims[d] != 1 && t->strides[d] != expect) v->contiguous = false;
        expect *= t->dims[d];
    }
}

/// Element offset (in elements, from the view's first element) of row-major element i.
static inline int64_t og_view_offset(const og_view *v, int64_t i) {
    if (v->contiguous) return i;
    int64_t off = 0;
    for (int d = v->ndim - 1; d >= 0 && i; d--) {
        off += (i % v->dims[d]) * v->strides[d];
        i /= v->dims[d];
    }
    return off;
}

/// An integer index element (INT32 / INT64) as int64.
static inline int64_t og_view_index(const og_view *v, const char *first, int64_t i) {
    const char *p = first + og_view_offset(v, i) * v->esize;
    return v->dtype == ACL_INT32 ? (int64_t) * (const int32_t *)p : *(const int64_t *)p;
}

#endif
