/* API-level tests of the aclnn meta API: aclCreateTensor validation (the view must lie inside
 * its storage, no negative dims/strides/offset, known dtypes, every byte addressable in int64),
 * the getters (malloc'd arrays the caller frees), aclInitTensor, raw addresses, scalars, arrays
 * and lists (a list owns its elements: run under ASan this proves there is neither a leak nor a
 * double free), and the object registry (a destroyed, twice-destroyed, foreign or wrong-kind
 * handle is refused with a message, never dereferenced). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
#include "tensor/tensor.h" /* og_scalar_as_double: scalars have no public getter */
#include "test.h"

static float storage[256];

static aclTensor *mk(const int64_t *dims, uint64_t n, const int64_t *strides, int64_t offset,
                     const int64_t *sdims, uint64_t sn) {
    return aclCreateTensor(dims, n, ACL_FLOAT, strides, offset, ACL_FORMAT_ND, sdims, sn, storage);
}

/* ---- the view must lie inside the storage --------------------------------------------- */

static void test_view_inside_storage_boundary(void) {
    const int64_t d[] = {2, 3};
    const int64_t s6[] = {6}, s5[] = {5}, s23[] = {2, 3}, s7[] = {7};
    // contiguous {2,3} reaches element 5: storage 6 holds it, storage 5 does not
    aclTensor *t = mk(d, 2, NULL, 0, s6, 1);
    CHECK(t != NULL);
    aclDestroyTensor(t);
    t = mk(d, 2, NULL, 0, s23, 2);
    CHECK(t != NULL);
    aclDestroyTensor(t);
    CHECK(mk(d, 2, NULL, 0, s5, 1) == NULL);
    CHECK_MSG("storage");
    // offset 1: reaches element 6, so needs storage 7
    CHECK(mk(d, 2, NULL, 1, s6, 1) == NULL);
    CHECK_MSG("aclCreateTensor");
    t = mk(d, 2, NULL, 1, s7, 1);
    CHECK(t != NULL);
    aclDestroyTensor(t);
    // explicit strides {4,1}: last element at 4 + 2 = 6
    const int64_t st[] = {4, 1};
    CHECK(mk(d, 2, st, 0, s6, 1) == NULL);
    t = mk(d, 2, st, 0, s7, 1);
    CHECK(t != NULL);
    aclDestroyTensor(t);
    // transposed {3,2} view with strides {1,3} over 6 elements: last at 2 + 3 = 5
    const int64_t dt[] = {3, 2}, stt[] = {1, 3};
    t = mk(dt, 2, stt, 0, s6, 1);
    CHECK(t != NULL);
    aclDestroyTensor(t);
    CHECK(mk(dt, 2, stt, 1, s6, 1) == NULL);
    // stride 0 (an expanded view) needs only one element per broadcast dim
    const int64_t s1[] = {1}, st0[] = {0, 0};
    t = mk(d, 2, st0, 0, s1, 1);
    CHECK(t != NULL);
    aclDestroyTensor(t);
    // an empty view fits anywhere, even a zero-size storage
    const int64_t de[] = {0, 3}, s0[] = {0};
    t = mk(de, 2, NULL, 0, s0, 1);
    CHECK(t != NULL);
    aclDestroyTensor(t);
    // but a non-empty view does not fit a zero-size storage
    CHECK(mk(d, 2, NULL, 0, s0, 1) == NULL);
}

static void test_negative_values_rejected(void) {
    const int64_t s[] = {64};
    const int64_t dneg[] = {2, -3}, d[] = {2, 3}, stneg[] = {-1, 1}, sneg[] = {-64};
    CHECK(mk(dneg, 2, NULL, 0, s, 1) == NULL);
    CHECK_MSG("viewDims");
    CHECK(mk(d, 2, stneg, 0, s, 1) == NULL);
    CHECK_MSG("stride");
    CHECK(mk(d, 2, NULL, -1, s, 1) == NULL);
    CHECK_MSG("offset");
    CHECK(mk(d, 2, NULL, 0, sneg, 1) == NULL);
    CHECK_MSG("storageDims");
}

static void test_null_arrays_with_nonzero_count(void) {
    const int64_t d[] = {2, 3}, s[] = {6};
    CHECK(mk(NULL, 2, NULL, 0, s, 1) == NULL);
    CHECK_MSG("viewDims");
    CHECK(mk(d, 2, NULL, 0, NULL, 1) == NULL);
    CHECK_MSG("storageDims");
    // NULL with a count of 0 is a 0-d tensor / an implied storage
    aclTensor *t = mk(NULL, 0, NULL, 0, s, 1);
    CHECK(t != NULL);
    aclDestroyTensor(t);
    t = mk(d, 2, NULL, 0, NULL, 0);
    CHECK(t != NULL);
    aclDestroyTensor(t);
}

static void test_unsupported_dtype_rejected(void) {
    const int64_t d[] = {4};
    const aclDataType bad[] = {ACL_DT_UNDEFINED, ACL_STRING,      ACL_INT4,
                               ACL_UINT1,        ACL_FLOAT4_E2M1, (aclDataType)1234};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        aclTensor *t = aclCreateTensor(d, 1, bad[k], NULL, 0, ACL_FORMAT_ND, d, 1, storage);
        CHECKF(t == NULL, "dtype %d accepted", (int)bad[k]);
        if (t)
            aclDestroyTensor(t);
        else
            CHECK_MSG("dataType");
    }
    // every dtype the operators must be able to reject exists as a tensor
    const aclDataType good[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16,  ACL_DOUBLE, ACL_INT8,
                                ACL_INT16, ACL_INT32,   ACL_INT64, ACL_UINT8,  ACL_BOOL};
    for (size_t k = 0; k < sizeof good / sizeof *good; k++) {
        aclTensor *t = aclCreateTensor(d, 1, good[k], NULL, 0, ACL_FORMAT_ND, d, 1, storage);
        CHECKF(t != NULL, "dtype %d refused: %s", (int)good[k], aclGetRecentErrMsg());
        aclDestroyTensor(t);
    }
}

static void test_rank_limits_of_the_tensor_object(void) {
    int64_t d[33];
    for (int i = 0; i < 33; i++) d[i] = 1;
    aclTensor *t = mk(d, 32, NULL, 0, d, 32);
    CHECK(t != NULL); // rank 32: allowed on the tensor (operators reject > 8 themselves)
    aclDestroyTensor(t);
    CHECK(mk(d, 33, NULL, 0, d, 1) == NULL);
    CHECK_MSG("rank");
    CHECK(mk(d, 2, NULL, 0, d, 33) == NULL);
}

static void test_element_count_overflow_rejected(void) {
    const int64_t d[] = {INT64_C(1) << 40, INT64_C(1) << 40};
    CHECK(aclCreateTensor(d, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, storage) == NULL);
    const int64_t st[] = {INT64_MAX / 2, 1}, d2[] = {4, 1}; // 3 * stride overflows
    CHECK(aclCreateTensor(d2, 2, ACL_FLOAT, st, 0, ACL_FORMAT_ND, NULL, 0, storage) == NULL);
    // an empty view whose other dims multiply past int64 (in any order: [0, 2^62, 4] would
    // overflow an innermost-first product; operators take such products)
    const int64_t e1[] = {0, INT64_C(1) << 62, 4}, e2[] = {INT64_C(1) << 62, 4, 0};
    CHECK(aclCreateTensor(e1, 3, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, storage) == NULL);
    CHECK_MSG("product of the nonzero viewDims overflows int64");
    CHECK(aclCreateTensor(e2, 3, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, storage) == NULL);
    // empty with other dims that fit: accepted
    const int64_t e3[] = {0, INT64_C(1) << 31, INT64_C(1) << 31};
    aclTensor *t = aclCreateTensor(e3, 3, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, storage);
    CHECK(t != NULL);
    aclDestroyTensor(t);
}

// Offsets and strides are validated in bytes: an fp32 view whose last element is 2^62 elements
// in fits int64 elements but not int64 bytes (it used to be accepted, and Relu then read buf[0..3]
// through the wrapped address); the same view of 1-byte elements fits.
static void test_byte_extent_overflow_rejected(void) {
    const int64_t one[] = {1}, two[] = {2}, huge_stride[] = {INT64_C(1) << 62};
    const int64_t off62 = INT64_C(1) << 62;
    CHECK(aclCreateTensor(one, 1, ACL_FLOAT, NULL, off62, ACL_FORMAT_ND, NULL, 0, storage) == NULL);
    CHECK_MSG("overflows int64");
    CHECK(aclCreateTensor(one, 1, ACL_BF16, NULL, off62, ACL_FORMAT_ND, NULL, 0, storage) == NULL);
    CHECK(aclCreateTensor(two, 1, ACL_FLOAT, huge_stride, 0, ACL_FORMAT_ND, NULL, 0, storage) ==
          NULL);
    CHECK_MSG("byte extent overflows int64");
    aclTensor *bytes = aclCreateTensor(two, 1, ACL_INT8, huge_stride, 0, ACL_FORMAT_ND, NULL, 0,
                                       storage); // 2^62 + 1 bytes: representable
    CHECK(bytes != NULL);
    aclDestroyTensor(bytes);
    // The last element at INT64_MAX (by the offset or by a stride): its end, INT64_MAX + 1 bytes,
    // does not fit (the storage size used to overflow and read back as INT64_MIN).
    CHECK(aclCreateTensor(one, 1, ACL_INT8, NULL, INT64_MAX, ACL_FORMAT_ND, NULL, 0, storage) ==
          NULL);
    const int64_t max_stride[] = {INT64_MAX};
    CHECK(aclCreateTensor(two, 1, ACL_INT8, max_stride, 0, ACL_FORMAT_ND, NULL, 0, storage) ==
          NULL);
    aclTensor *last =
        aclCreateTensor(one, 1, ACL_INT8, NULL, INT64_MAX - 1, ACL_FORMAT_ND, NULL, 0, storage);
    CHECK(last != NULL);
    int64_t *sd = NULL;
    uint64_t sn = 0;
    CHECK_EQ(aclGetStorageShape(last, &sd, &sn), ACLNN_SUCCESS);
    CHECK(sn == 1 && sd[0] == INT64_MAX);
    free(sd);
    aclDestroyTensor(last);
    // An offset of an empty view is an address too; a storage's byte size must fit as well.
    const int64_t zero[] = {0}, sdims[] = {INT64_C(1) << 61};
    CHECK(aclCreateTensor(zero, 1, ACL_FLOAT, NULL, off62, ACL_FORMAT_ND, NULL, 0, storage) ==
          NULL);
    CHECK(aclCreateTensor(one, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, sdims, 1, storage) == NULL);
    CHECK_MSG("storage byte size overflows int64");
    aclTensor *t = aclCreateTensor(one, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, storage);
    CHECK(aclInitTensor(t, two, 1, ACL_FLOAT, huge_stride, 0, ACL_FORMAT_ND, NULL, 0, storage) ==
          ACLNN_ERR_PARAM_INVALID);
    aclDestroyTensor(t);
}

/* ---- getters ------------------------------------------------------------------------------ */

static void test_getters_return_copies(void) {
    const int64_t d[] = {3, 4}, st[] = {1, 5}, sd[] = {2, 10};
    aclTensor *t = aclCreateTensor(d, 2, ACL_FLOAT16, st, 2, ACL_FORMAT_NCHW, sd, 2, storage);
    CHECK(t != NULL);
    if (!t) return;
    int64_t *v = NULL;
    uint64_t n = 0;
    CHECK_EQ(aclGetViewShape(t, &v, &n), ACLNN_SUCCESS);
    CHECK(n == 2 && v && v[0] == 3 && v[1] == 4);
    free(v);
    v = NULL;
    CHECK_EQ(aclGetViewStrides(t, &v, &n), ACLNN_SUCCESS);
    CHECK(n == 2 && v && v[0] == 1 && v[1] == 5);
    free(v);
    v = NULL;
    CHECK_EQ(aclGetStorageShape(t, &v, &n), ACLNN_SUCCESS);
    CHECK(n == 2 && v && v[0] == 2 && v[1] == 10);
    free(v);
    int64_t off = -1;
    CHECK_EQ(aclGetViewOffset(t, &off), ACLNN_SUCCESS);
    CHECK_EQ(off, 2);
    aclFormat f = ACL_FORMAT_UNDEFINED;
    CHECK_EQ(aclGetFormat(t, &f), ACLNN_SUCCESS);
    CHECK_EQ(f, ACL_FORMAT_NCHW);
    aclDataType dt = ACL_DT_UNDEFINED;
    CHECK_EQ(aclGetDataType(t, &dt), ACLNN_SUCCESS);
    CHECK_EQ(dt, ACL_FLOAT16);
    void *addr = NULL;
    CHECK_EQ(aclGetRawTensorAddr(t, &addr), ACLNN_SUCCESS);
    CHECK(addr == storage); // the storage base, not base + offset
    CHECK_EQ(aclSetRawTensorAddr(t, storage + 8), ACLNN_SUCCESS);
    CHECK_EQ(aclGetRawTensorAddr(t, &addr), ACLNN_SUCCESS);
    CHECK(addr == storage + 8);
    aclDestroyTensor(t);
}

static void test_getters_contiguous_strides_and_0d(void) {
    const int64_t d[] = {2, 3, 4};
    aclTensor *t = aclCreateTensor(d, 3, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, d, 3, storage);
    int64_t *v = NULL;
    uint64_t n = 0;
    CHECK_EQ(aclGetViewStrides(t, &v, &n), ACLNN_SUCCESS);
    CHECK(n == 3 && v[0] == 12 && v[1] == 4 && v[2] == 1);
    free(v);
    aclDestroyTensor(t);
    // 0-d: the shape getters return an empty (but freeable) array
    t = aclCreateTensor(NULL, 0, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, storage);
    CHECK(t != NULL);
    v = NULL;
    n = 99;
    CHECK_EQ(aclGetViewShape(t, &v, &n), ACLNN_SUCCESS);
    CHECK_EQ(n, 0);
    free(v);
    aclDestroyTensor(t);
}

static void test_getters_null_arguments(void) {
    const int64_t d[] = {2};
    aclTensor *t = aclCreateTensor(d, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, d, 1, storage);
    int64_t *v = NULL;
    uint64_t n = 0;
    int64_t off;
    aclFormat f;
    aclDataType dt;
    CHECK_EQ(aclGetViewShape(NULL, &v, &n), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_EQ(aclGetViewShape(t, NULL, &n), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_EQ(aclGetViewShape(t, &v, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_EQ(aclGetStorageShape(NULL, &v, &n), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_EQ(aclGetViewStrides(NULL, &v, &n), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_EQ(aclGetViewOffset(NULL, &off), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_EQ(aclGetViewOffset(t, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_EQ(aclGetFormat(NULL, &f), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_EQ(aclGetDataType(NULL, &dt), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_EQ(aclGetRawTensorAddr(NULL, (void **)&v), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_EQ(aclSetRawTensorAddr(NULL, storage), ACLNN_ERR_PARAM_NULLPTR);
    aclDestroyTensor(t);
}

/* ---- aclInitTensor ------------------------------------------------------------------------- */

static void test_init_tensor(void) {
    const int64_t d[] = {2, 3};
    aclTensor *t = aclCreateTensor(d, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, d, 2, storage);
    const int64_t d2[] = {4, 1, 5}, st2[] = {5, 5, 1}, sd2[] = {30};
    CHECK_EQ(aclInitTensor(t, d2, 3, ACL_BF16, st2, 7, ACL_FORMAT_NHWC, sd2, 1, storage + 1),
             ACLNN_SUCCESS);
    int64_t *v = NULL;
    uint64_t n = 0;
    aclGetViewShape(t, &v, &n);
    CHECK(n == 3 && v[0] == 4 && v[1] == 1 && v[2] == 5);
    free(v);
    aclGetViewStrides(t, &v, &n);
    CHECK(n == 3 && v[0] == 5 && v[2] == 1);
    free(v);
    int64_t off = 0;
    aclGetViewOffset(t, &off);
    CHECK_EQ(off, 7);
    aclDataType dt;
    aclGetDataType(t, &dt);
    CHECK_EQ(dt, ACL_BF16);
    aclFormat f;
    aclGetFormat(t, &f);
    CHECK_EQ(f, ACL_FORMAT_NHWC);
    void *addr = NULL;
    aclGetRawTensorAddr(t, &addr);
    CHECK(addr == storage + 1);
    // the same validation as aclCreateTensor: 7 + 15 + 4 = 26 < 30 fits, offset 20 does not
    CHECK(aclInitTensor(t, d2, 3, ACL_BF16, st2, 20, ACL_FORMAT_ND, sd2, 1, storage) !=
          ACLNN_SUCCESS);
    CHECK_MSG("aclInitTensor");
    CHECK(aclInitTensor(t, NULL, 3, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, storage) !=
          ACLNN_SUCCESS);
    CHECK(aclInitTensor(t, d, 2, (aclDataType)1234, NULL, 0, ACL_FORMAT_ND, d, 2, storage) !=
          ACLNN_SUCCESS);
    CHECK_EQ(aclInitTensor(NULL, d, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, d, 2, storage),
             ACLNN_ERR_PARAM_NULLPTR);
    aclDestroyTensor(t);
}

/* ---- scalars, arrays, lists -------------------------------------------------------------- */

static void test_scalars_copy_their_value(void) {
    float f = 2.5f;
    double d = -3.25;
    int64_t i = -7;
    uint16_t h = 0x3e00; // fp16 1.5
    aclScalar *sf = aclCreateScalar(&f, ACL_FLOAT);
    aclScalar *sd = aclCreateScalar(&d, ACL_DOUBLE);
    aclScalar *si = aclCreateScalar(&i, ACL_INT64);
    aclScalar *sh = aclCreateScalar(&h, ACL_FLOAT16);
    CHECK(sf && sd && si && sh);
    f = 0, d = 0, i = 0, h = 0; // the host variables may change or die afterwards
    if (sf && sd && si && sh) {
        CHECK(og_scalar_as_double(sf) == 2.5);
        CHECK(og_scalar_as_double(sd) == -3.25);
        CHECK(og_scalar_as_double(si) == -7.0);
        CHECK(og_scalar_as_double(sh) == 1.5);
    }
    CHECK(aclCreateScalar(NULL, ACL_FLOAT) == NULL);
    CHECK_MSG("value");
    CHECK(aclCreateScalar(&f, ACL_STRING) == NULL);
    CHECK(aclCreateScalar(&f, (aclDataType)1234) == NULL);
    aclDestroyScalar(sf);
    aclDestroyScalar(sd);
    aclDestroyScalar(si);
    aclDestroyScalar(sh);
}

static void test_arrays(void) {
    int64_t iv[] = {1, 2, 3};
    float fv[] = {0.5f, 1.5f};
    bool bv[] = {true, false, true, true};
    aclIntArray *ia = aclCreateIntArray(iv, 3);
    aclFloatArray *fa = aclCreateFloatArray(fv, 2);
    aclBoolArray *ba = aclCreateBoolArray(bv, 4);
    CHECK(ia && fa && ba);
    uint64_t n = 0;
    CHECK_EQ(aclGetIntArraySize(ia, &n), ACLNN_SUCCESS);
    CHECK_EQ(n, 3);
    CHECK_EQ(aclGetFloatArraySize(fa, &n), ACLNN_SUCCESS);
    CHECK_EQ(n, 2);
    CHECK_EQ(aclGetBoolArraySize(ba, &n), ACLNN_SUCCESS);
    CHECK_EQ(n, 4);
    CHECK_EQ(aclGetIntArraySize(NULL, &n), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_EQ(aclGetIntArraySize(ia, NULL), ACLNN_ERR_PARAM_NULLPTR);
    CHECK(aclCreateIntArray(NULL, 2) == NULL);
    CHECK(aclCreateFloatArray(NULL, 1) == NULL);
    CHECK(aclCreateBoolArray(NULL, 5) == NULL);
    // the values were copied: the caller's arrays may be freed first
    int64_t *heap = malloc(2 * sizeof *heap);
    heap[0] = 4, heap[1] = 5;
    aclIntArray *ib = aclCreateIntArray(heap, 2);
    free(heap);
    CHECK(ib != NULL);
    CHECK_EQ(aclDestroyIntArray(ib), ACLNN_SUCCESS);
    CHECK_EQ(aclDestroyIntArray(ia), ACLNN_SUCCESS);
    CHECK_EQ(aclDestroyFloatArray(fa), ACLNN_SUCCESS);
    CHECK_EQ(aclDestroyBoolArray(ba), ACLNN_SUCCESS);
}

static void test_tensor_list_owns_its_tensors(void) {
    const int64_t d[] = {2, 2};
    aclTensor *ts[3];
    for (int k = 0; k < 3; k++)
        ts[k] = aclCreateTensor(d, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, d, 2, storage + 4 * k);
    aclTensorList *l = aclCreateTensorList((const aclTensor *const *)ts, 3);
    CHECK(l != NULL);
    uint64_t n = 0;
    CHECK_EQ(aclGetTensorListSize(l, &n), ACLNN_SUCCESS);
    CHECK_EQ(n, 3);
    CHECK_EQ(aclGetTensorListSize(NULL, &n), ACLNN_ERR_PARAM_NULLPTR);
    // destroying the list destroys the tensors: destroying them again would be a double free
    // and not destroying the list a leak (ASan's leak checker sees both)
    CHECK_EQ(aclDestroyTensorList(l), ACLNN_SUCCESS);
    CHECK(aclCreateTensorList(NULL, 2) == NULL);
    aclTensorList *empty = aclCreateTensorList(NULL, 0);
    CHECK(empty != NULL);
    CHECK_EQ(aclGetTensorListSize(empty, &n), ACLNN_SUCCESS);
    CHECK_EQ(n, 0);
    aclDestroyTensorList(empty);
}

static void test_scalar_list_owns_its_scalars(void) {
    float v[4] = {1, 2, 3, 4};
    aclScalar *ss[4];
    for (int k = 0; k < 4; k++) ss[k] = aclCreateScalar(&v[k], ACL_FLOAT);
    aclScalarList *l = aclCreateScalarList((const aclScalar *const *)ss, 4);
    CHECK(l != NULL);
    uint64_t n = 0;
    CHECK_EQ(aclGetScalarListSize(l, &n), ACLNN_SUCCESS);
    CHECK_EQ(n, 4);
    CHECK_EQ(aclDestroyScalarList(l), ACLNN_SUCCESS);
    CHECK(aclCreateScalarList(NULL, 1) == NULL);
}

static void test_destroy_null_is_harmless(void) {
    // Destroying NULL must not crash (cleanup paths destroy whatever they have).
    aclDestroyTensor(NULL);
    aclDestroyScalar(NULL);
    aclDestroyIntArray(NULL);
    aclDestroyFloatArray(NULL);
    aclDestroyBoolArray(NULL);
    aclDestroyTensorList(NULL);
    aclDestroyScalarList(NULL);
}

/* ---- the object registry ------------------------------------------------------------------ */

static void test_destroyed_twice_refused(void) {
    const int64_t d[] = {2};
    float one = 1;
    aclTensor *t = aclCreateTensor(d, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, storage);
    CHECK_EQ(aclDestroyTensor(t), ACLNN_SUCCESS);
    CHECK_EQ(aclDestroyTensor(t), ACLNN_ERR_PARAM_INVALID); // used to be a double free
    CHECK_MSG("aclDestroyTensor");
    CHECK_MSG("is not a live aclTensor");
    aclScalar *s = aclCreateScalar(&one, ACL_FLOAT);
    CHECK_EQ(aclDestroyScalar(s), ACLNN_SUCCESS);
    CHECK_EQ(aclDestroyScalar(s), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("is not a live aclScalar");
    int64_t v = 3;
    aclIntArray *a = aclCreateIntArray(&v, 1);
    CHECK_EQ(aclDestroyIntArray(a), ACLNN_SUCCESS);
    CHECK_EQ(aclDestroyIntArray(a), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("is not a live aclIntArray");
}

static void test_foreign_and_wrong_kind_handles_refused(void) {
    // A foreign pointer is looked up, never read: memory of any content is refused.
    static unsigned char junk[512];
    memset(junk, 0xa5, sizeof junk);
    aclTensor *foreign = (aclTensor *)junk;
    int64_t *v = NULL;
    uint64_t n = 0;
    CHECK_EQ(aclDestroyTensor(foreign), ACLNN_ERR_PARAM_INVALID);
    CHECK_EQ(aclGetViewShape(foreign, &v, &n), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("aclGetViewShape: tensor");
    CHECK_EQ(aclSetRawTensorAddr(foreign, storage), ACLNN_ERR_PARAM_INVALID);
    CHECK_EQ(aclGetIntArraySize((aclIntArray *)junk, &n), ACLNN_ERR_PARAM_INVALID);
    // An object of another kind: named, and left alive.
    float one = 1;
    aclScalar *s = aclCreateScalar(&one, ACL_FLOAT);
    CHECK_EQ(aclDestroyTensor((aclTensor *)s), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("is an aclScalar, not an aclTensor");
    CHECK_EQ(aclDestroyScalar(s), ACLNN_SUCCESS);
    const int64_t d[] = {2};
    aclTensor *t = aclCreateTensor(d, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, storage);
    CHECK_EQ(aclInitTensor(foreign, d, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, storage),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_EQ(aclDestroyTensor(t), ACLNN_SUCCESS);
    CHECK_EQ(aclGetDataType(t, &(aclDataType){ACL_FLOAT}), ACLNN_ERR_PARAM_INVALID);
}

static void test_lists_take_live_elements(void) {
    const int64_t d[] = {2};
    static unsigned char junk[512];
    aclTensor *ts[2] = {aclCreateTensor(d, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, storage),
                        (aclTensor *)junk};
    CHECK(aclCreateTensorList((const aclTensor *const *)ts, 2) == NULL);
    CHECK_MSG("value[1]");
    // An element destroyed on its own before the list: the list's destroy skips it (no double
    // free), frees the rest and says so.
    ts[1] = aclCreateTensor(d, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, storage);
    aclTensorList *l = aclCreateTensorList((const aclTensor *const *)ts, 2);
    CHECK(l != NULL);
    CHECK_EQ(aclDestroyTensor(ts[0]), ACLNN_SUCCESS);
    CHECK_EQ(aclDestroyTensorList(l), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("is not a live aclTensor");
    CHECK_EQ(aclDestroyTensorList(l), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("is not a live aclTensorList");
}

// A bool is true when its byte is nonzero: the byte 2 reads as 1 (it was read through C's _Bool,
// undefined, and Add(1, 1, alpha = true) gave 3).
static void test_bool_values_are_0_or_1(void) {
    unsigned char two = 2;
    aclScalar *s = aclCreateScalar(&two, ACL_BOOL);
    CHECK(s != NULL);
    CHECK(og_scalar_as_double(s) == 1.0);
    aclDestroyScalar(s);
    unsigned char bytes[3] = {2, 0, 255};
    aclBoolArray *a = aclCreateBoolArray((const bool *)bytes, 3);
    CHECK(a != NULL);
    unsigned char got[3];
    memcpy(got, a->values, 3);
    CHECK(got[0] == 1 && got[1] == 0 && got[2] == 1);
    aclDestroyBoolArray(a);
}

int main(void) {
    RUN(test_view_inside_storage_boundary);
    RUN(test_negative_values_rejected);
    RUN(test_null_arrays_with_nonzero_count);
    RUN(test_unsupported_dtype_rejected);
    RUN(test_rank_limits_of_the_tensor_object);
    RUN(test_element_count_overflow_rejected);
    RUN(test_byte_extent_overflow_rejected);
    RUN(test_getters_return_copies);
    RUN(test_getters_contiguous_strides_and_0d);
    RUN(test_getters_null_arguments);
    RUN(test_init_tensor);
    RUN(test_scalars_copy_their_value);
    RUN(test_arrays);
    RUN(test_tensor_list_owns_its_tensors);
    RUN(test_scalar_list_owns_its_scalars);
    RUN(test_destroy_null_is_harmless);
    RUN(test_destroyed_twice_refused);
    RUN(test_foreign_and_wrong_kind_handles_refused);
    RUN(test_lists_take_live_elements);
    RUN(test_bool_values_are_0_or_1);
    return test_summary();
}
