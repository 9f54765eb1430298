/* libFuzzer target: the tensor / operator API, over every operator of the list (src/ops/ops.inc)
 * through its phase-1 thunk, the mechanism tests/api/test_ops_list.c uses, so an operator added
 * to the list is fuzzed by construction.
 *
 * One input is one call: the operator, the ISA cap and thread count, a base shape and dtype, then
 * per parameter of the operator (by kind): a tensor (shape derived from the base or not, rank
 * 0..9, 0-size dims, strides contiguous / permuted / padded / 0 / negative / huge, offsets up to
 * 2^63-1, storage dims, any dtype and format, NULL, a buffer shared with an earlier tensor), a
 * scalar or int array of any dtype / length (or NULL), ints, doubles, strings, dtypes; then
 * NULL workspaceSize / executor; then one phase-2 scenario: run, run twice, too-small workspace,
 * NULL workspace with a nonzero size, an executor of another operator, a destroyed executor,
 * repeatable runs, opgrad_executor_run, a stream, a destroyed stream, a NULL executor.
 *
 * Memory is real: each view gets its own aclrtMalloc block of exactly its byte extent (or shares
 * an earlier view's block); under ASan the pad aclrtMalloc adds is poisoned, so a read one byte
 * past a view is reported. A view whose extent exceeds 1 MiB (or that has more than 2^20
 * elements) is still created, but over a 64-byte block, and phase 2 never runs with it.
 *
 * Contracts checked besides the sanitizers (FUZZ_REQUIRE): a NULL pointer argument -> 161001
 * (but for an optional tensor, T(name, NULL) / O(name, NULL) in the list); a
 * destroyed handle or one of another kind -> 161002; phase-1 statuses are 0 / 161001 / 161002 and
 * a failure leaves a message naming the operator; a view whose byte extent overflows int64, or
 * that is larger than the aclrtMalloc block it starts at, is refused; the getters give back what
 * was set; the phase-2 statuses of every misuse above.
 *
 * Environment: OPGRAD_FUZZ_PAD=1 leaves the pad readable (CANN pads blocks by 32 bytes);
 * OPGRAD_FUZZ_NO_STALE=1 never passes destroyed handles or objects of another kind (to fuzz past a
 * known finding there). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
#include "fuzz.h"
#include "opgrad/opgrad.h"
#include "ops/ops.h"

enum {
    MAXP = 16,          // parameters per operator
    MAXLIST = 4,        // tensors per tensor list
    MAXRANK = 40,       // ranks passed to aclCreateTensor (> the tensor limit, 32)
    CAP = 1 << 20,      // largest buffer a view gets (bytes)
    MAXNUMEL = 1 << 20, // most elements phase 2 may process per view
    TINY = 64,          // the buffer of a view that does not fit CAP
    MAXWS = 64 << 20,   // largest workspace the harness allocates
    ALLOC_ALIGN = 64,   // aclrtMalloc's block layout (src/runtime/memory.c)
    ALLOC_PAD = 32,
};

static const aclDataType dtypes[] = {
    ACL_FLOAT,  ACL_FLOAT16, ACL_BF16,      ACL_DOUBLE,     ACL_INT32,        ACL_INT8,
    ACL_UINT8,  ACL_INT16,   ACL_INT64,     ACL_BOOL,       ACL_UINT16,       ACL_UINT32,
    ACL_UINT64, ACL_STRING,  ACL_COMPLEX64, ACL_COMPLEX128, ACL_DT_UNDEFINED, ACL_COMPLEX32,
    ACL_INT4,   ACL_UINT1,   ACL_HIFLOAT8,  ACL_FLOAT8_E5M2};
enum { NDTYPES = sizeof dtypes / sizeof dtypes[0] };

static const int64_t specials[] = {0,
                                   1,
                                   -1,
                                   2,
                                   INT64_MAX,
                                   INT64_MIN,
                                   INT64_MAX - 1,
                                   INT64_MAX / 2,
                                   INT64_MAX / 4 + 1,
                                   INT64_MAX / 8 + 1,
                                   INT64_MAX / 16,
                                   (int64_t)1 << 62,
                                   ((int64_t)1 << 62) + 1,
                                   (int64_t)1 << 61,
                                   (int64_t)1 << 60,
                                   (int64_t)1 << 40,
                                   (int64_t)1 << 32,
                                   ((int64_t)1 << 32) + 1,
                                   (int64_t)1 << 31,
                                   ((int64_t)1 << 31) - 1,
                                   (int64_t)1 << 20,
                                   -((int64_t)1 << 62),
                                   -((int64_t)1 << 31),
                                   1000003,
                                   65536,
                                   4097,
                                   1024,
                                   255,
                                   64,
                                   33,
                                   17,
                                   16};
enum { NSPECIALS = sizeof specials / sizeof specials[0] };

static const double dspecials[] = {0.0,      -0.0,   1.0,     -1.0,   0.5,    1e-300, -1e-300,
                                   4.9e-324, 1e300,  -1e300,  3.4e38, 3.5e38, 65504,  65520,
                                   1e10,     9.3e18, -9.3e18, 2.2e9,  -2.2e9, 20,     0.01};

typedef struct opinfo {
    const og_opdesc *op;
    int n;
    og_param p[MAXP];
} opinfo;

static opinfo *infos;
static aclrtStream stream, dead_stream;
static bool allow_pad, no_stale;

static bool is_tensor(og_param_kind k) {
    return k == OG_PARAM_TENSOR || k == OG_PARAM_GRAD || k == OG_PARAM_RESULT ||
           k == OG_PARAM_OUT || k == OG_PARAM_REF;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    setenv("OPGRAD_SPIN_US", "0", 0); // pool workers sleep at once: the fuzzer has 1-2 cores
    const char *pad = getenv("OPGRAD_FUZZ_PAD");
    allow_pad = pad && pad[0] == '1';
    const char *stale = getenv("OPGRAD_FUZZ_NO_STALE");
    no_stale = stale && stale[0] == '1';
    aclInit(NULL);
    infos = calloc((size_t)og_ops_count, sizeof *infos);
    if (!infos) abort();
    for (int i = 0; i < og_ops_count; i++) {
        infos[i].op = og_ops[i];
        while (infos[i].n < MAXP && og_opdesc_param(og_ops[i], infos[i].n, &infos[i].p[infos[i].n]))
            infos[i].n++;
    }
    if (aclrtCreateStream(&stream) != ACL_SUCCESS) abort();
    if (aclrtCreateStream(&dead_stream) != ACL_SUCCESS) abort();
    aclrtDestroyStream(dead_stream); // its address is never a live stream again
    return 0;
}

// ---- buffers: aclrtMalloc blocks of exactly `size` usable bytes (the pad poisoned) ----

static size_t padded(size_t size) {
    return (size + ALLOC_PAD + ALLOC_ALIGN - 1) / ALLOC_ALIGN * ALLOC_ALIGN;
}

static void *dev_alloc(size_t size) {
    void *p = NULL;
    if (size == 0) size = 1;
    if (aclrtMalloc(&p, size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) abort();
    if (!allow_pad) OG_FUZZ_POISON((char *)p + size, padded(size) - size);
    return p;
}

static void dev_free(void *p, size_t size) {
    if (!p) return;
    if (size == 0) size = 1;
    OG_FUZZ_UNPOISON((char *)p + size, padded(size) - size);
    FUZZ_REQUIRE(aclrtFree(p) == ACL_SUCCESS, "aclrtFree: %s", aclGetRecentErrMsg());
}

// Deterministic contents: valid for every dtype (bools 0/1), else arbitrary bits.
static void fill(void *p, size_t size, aclDataType dt, uint32_t seed) {
    unsigned char *b = p;
    uint32_t x = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < size; i++) {
        x = x * 1103515245u + 12345u;
        b[i] = (unsigned char)(x >> 16);
        if (dt == ACL_BOOL) b[i] &= 1;
    }
}

// ---- one call's arguments ----

typedef struct tslot {
    aclTensor *t;
    void *own; // the block this view owns (freed), or NULL
    size_t own_size;
    void *data;    // the storage address given to aclCreateTensor
    size_t usable; // bytes from data that are this view's block
    aclDataType dtype;
    bool unsafe;   // the view does not fit its block (or is too large to run): no phase 2
    bool overflow; // a non-empty view whose byte extent overflows int64: must be refused
    bool too_big;  // a non-empty view larger than the aclrtMalloc block it starts at: refused
} tslot;

typedef struct call {
    const opinfo *info;
    og_arg a[MAXP];
    tslot ts[MAXP];
    tslot lts[MAXP][MAXLIST]; // the tensors of list parameters (L, LR, LO)
    int nlts[MAXP];
    aclTensorList *lists[MAXP];
    aclScalar *scalars[MAXP];
    aclIntArray *arrays[MAXP];
    aclBoolArray *bools[MAXP]; // BA parameters (an outputMask)
    char strings[MAXP][80];
    int64_t base[MAXRANK];
    int base_rank;
    aclDataType base_dtype;
    // handles that are not live objects of their parameter's kind (161002): destroyed ones
    // (destroyed after every argument is made, so no new object reuses the address before phase
    // 1) and objects of another kind
    bool stale[MAXP];
    aclScalar *wrong_scalar[MAXP];
    aclTensor *wrong_tensor[MAXP];
    float wrong_buf[MAXP];
    bool any_stale;
    bool any_null;      // some pointer argument is NULL
    bool optional_null; // an optional one is NULL (valid, unless an outputMask asks for it)
    bool any_unsafe;    // some view must not be run
    bool any_overflow;
    bool any_too_big;
} call;

static int64_t gen_dim(fz *f, int i) {
    uint8_t v = fz_u8(f);
    if (v < 224) return (v + 4 + 2 * i) % 10; // zeros: 4, 6, 8, 0, ...
    return specials[(v - 224) % NSPECIALS];
}

static aclDataType gen_dtype(fz *f, aclDataType base) {
    switch (fz_pick(f, 8)) {
    case 1:
        return dtypes[fz_pick(f, NDTYPES)];
    case 2:
        return (aclDataType)(int32_t)fz_u32(f);
    case 3:
        return dtypes[fz_pick(f, 4)]; // another floating type
    default:
        return base;
    }
}

// Saturating 128-bit arithmetic for extents (|values| stay below 2^100).
typedef __int128 i128;
static const i128 SAT = (i128)1 << 100;
static i128 sat(i128 v) { return v > SAT ? SAT : v < -SAT ? -SAT : v; }
static i128 abs128(i128 v) { return v < 0 ? -v : v; }
// a * b for |a|, |b| <= 2^100 (saturated operands), saturated
static i128 mul(i128 a, i128 b) {
    if (!a || !b) return 0;
    if (abs128(a) > SAT / abs128(b)) return (a < 0) != (b < 0) ? -SAT : SAT;
    return sat(a * b);
}

// A tensor the list marks optional (T(name, NULL) / O(name, NULL)): NULL is a valid argument.
static bool optional(const call *c, int k) { return !strcmp(c->info->p[k].def, "NULL"); }

// Tensor k of the call (s = &c->ts[k]) or an entry of list parameter k (s in c->lts[k]).
static void make_tensor_at(fz *f, call *c, int k, tslot *s) {
    int64_t dims[MAXRANK], strides[MAXRANK], storage[MAXRANK];
    int rank;
    // shape
    switch (fz_pick(f, 12)) {
    case 1: { // a broadcast of the base: some dims 1, leading dims dropped
        uint8_t mask = fz_u8(f);
        int drop = c->base_rank ? fz_pick(f, c->base_rank + 1) : 0;
        rank = c->base_rank - drop;
        for (int d = 0; d < rank; d++) dims[d] = mask >> (d % 8) & 1 ? 1 : c->base[d + drop];
        break;
    }
    case 2: // independent
        rank = fz_pick(f, 10);
        for (int d = 0; d < rank; d++) dims[d] = gen_dim(f, d);
        break;
    case 3: { // the base with one dim changed
        rank = c->base_rank;
        memcpy(dims, c->base, sizeof(int64_t) * (size_t)rank);
        if (rank) dims[fz_pick(f, rank)] = gen_dim(f, 0);
        break;
    }
    case 4: // a rank beyond every limit
        rank = 9 + fz_pick(f, MAXRANK - 8);
        for (int d = 0; d < rank; d++) dims[d] = 1 + fz_pick(f, 2);
        break;
    case 5: { // a reduction of the base: the dims of a mask removed, or kept as 1
        uint8_t mask = fz_u8(f);
        bool keep = fz_u8(f) & 1;
        rank = 0;
        for (int d = 0; d < c->base_rank; d++) {
            if (!(mask >> (d % 8) & 1))
                dims[rank++] = c->base[d];
            else if (keep)
                dims[rank++] = 1;
        }
        break;
    }
    case 6: // the base without its last dim (a reduction over dim -1)
        rank = c->base_rank ? c->base_rank - 1 : 0;
        memcpy(dims, c->base, sizeof(int64_t) * (size_t)rank);
        break;
    default:
        rank = c->base_rank;
        memcpy(dims, c->base, sizeof(int64_t) * (size_t)rank);
    }
    aclDataType dt = gen_dtype(f, c->base_dtype);
    size_t es = aclDataTypeSize(dt);
    size_t es1 = es ? es : 1;
    // strides (elements); contiguous as aclCreateTensor computes them for stride == NULL
    int64_t contig[MAXRANK];
    {
        i128 acc = 1;
        for (int d = rank - 1; d >= 0; d--) {
            contig[d] = acc > INT64_MAX ? INT64_MAX : (int64_t)acc;
            acc = mul(acc, dims[d] > 0 ? dims[d] : 1);
        }
    }
    bool has_strides = true;
    int lm = fz_pick(f, 10);
    for (int d = 0; d < rank; d++) strides[d] = contig[d];
    switch (lm) {
    case 0:
        has_strides = false;
        break;
    case 2: { // transposed: contiguous in reverse dim order
        i128 acc = 1;
        for (int d = 0; d < rank; d++) {
            strides[d] = acc > INT64_MAX ? INT64_MAX : (int64_t)acc;
            acc = mul(acc, dims[d] > 0 ? dims[d] : 1);
        }
        break;
    }
    case 3: { // padded rows
        i128 acc = 1;
        for (int d = rank - 1; d >= 0; d--) {
            strides[d] = acc > INT64_MAX ? INT64_MAX : (int64_t)acc;
            acc = mul(acc, (i128)(dims[d] > 0 ? dims[d] : 1) + fz_pick(f, 4));
        }
        break;
    }
    case 4: { // broadcast (0) strides
        uint8_t mask = fz_u8(f);
        for (int d = 0; d < rank; d++)
            if (mask >> (d % 8) & 1) strides[d] = 0;
        break;
    }
    case 5:
        for (int d = 0; d < rank; d++) strides[d] = fz_pick(f, 9);
        break;
    case 6:
        if (rank) strides[fz_pick(f, rank)] = -1 - fz_pick(f, 4);
        break;
    case 7:
        if (rank) strides[fz_pick(f, rank)] = specials[fz_pick(f, NSPECIALS)];
        break;
    case 8:
        if (rank >= 2) {
            int a = fz_pick(f, rank), b = fz_pick(f, rank);
            int64_t t = strides[a];
            strides[a] = strides[b];
            strides[b] = t;
        }
        break;
    default:
        break;
    }
    int64_t offset = 0;
    switch (fz_pick(f, 8)) {
    case 1:
        offset = fz_pick(f, 64);
        break;
    case 2:
        offset = specials[fz_pick(f, NSPECIALS)];
        break;
    case 3:
        offset = -1 - fz_pick(f, 4);
        break;
    default:
        break;
    }
    // the view's element range [lo, hi] and count
    i128 lo = offset, hi = offset, numel = 1;
    bool neg_dim = false;
    for (int d = 0; d < rank; d++) {
        if (dims[d] < 0) neg_dim = true;
        numel = mul(numel, dims[d] < 0 ? 0 : dims[d]);
    }
    if (numel > 0)
        for (int d = 0; d < rank; d++) {
            i128 span = mul(strides[d], (i128)dims[d] - 1);
            if (span < 0)
                lo = sat(lo + span);
            else
                hi = sat(hi + span);
        }
    i128 need = numel > 0 ? mul(hi + 1, (i128)es1) : 0;
    s->unsafe = neg_dim || lo < 0 || offset < 0 || need > CAP || numel > MAXNUMEL;
    s->overflow = es && numel > 0 && !neg_dim && mul(hi + 1, (i128)es) - 1 > INT64_MAX;
    // storage dims
    int nstorage = 0;
    const int64_t *storage_p = NULL;
    switch (fz_pick(f, 8)) {
    case 1: // exactly the view's extent
        storage[0] = numel > 0 ? (hi + 1 > INT64_MAX ? INT64_MAX : (int64_t)(hi + 1)) : 0;
        nstorage = 1;
        storage_p = storage;
        break;
    case 2:
        nstorage = fz_pick(f, 4);
        for (int d = 0; d < nstorage; d++) storage[d] = fz_pick(f, 16);
        storage_p = storage;
        break;
    case 3:
        storage[0] = specials[fz_pick(f, NSPECIALS)];
        nstorage = 1;
        storage_p = storage;
        break;
    case 4:
        nstorage = 1 + fz_pick(f, 3); // NULL storage dims with a count: refused
        break;
    default:
        break;
    }
    aclFormat fmt = ACL_FORMAT_ND;
    switch (fz_pick(f, 8)) {
    case 1:
        fmt = ACL_FORMAT_NCHW;
        break;
    case 2:
        fmt = (aclFormat)(int32_t)fz_u32(f);
        break;
    default:
        break;
    }
    // storage address
    size_t bytes = s->unsafe ? TINY : (size_t)need;
    void *data = NULL;
    int dm = fz_pick(f, 8);
    if (dm == 1) { // share an earlier view's block (same dtype, big enough)
        int j = fz_pick(f, k ? k : 1);
        tslot *o = &c->ts[j];
        if (j < k && o->t && o->data && !o->unsafe && o->dtype == dt && o->usable >= bytes) {
            data = o->data;
            s->usable = o->usable;
        } else {
            dm = 0;
        }
    }
    if (dm == 0 || dm > 2) {
        s->own_size = bytes;
        s->own = dev_alloc(bytes);
        fill(s->own, bytes ? bytes : 1, dt, fz_u8(f));
        data = s->own;
        s->usable = bytes;
    }
    s->data = data;
    s->dtype = dt;
    s->too_big = data && es && numel > 0 && !neg_dim && mul(hi + 1, (i128)es) > (i128)s->usable;
    bool null_dims = rank > 0 && fz_pick(f, 32) == 1; // viewDims NULL with a count: refused
    s->t =
        aclCreateTensor(null_dims ? NULL : dims, (uint64_t)rank, dt, has_strides ? strides : NULL,
                        offset, fmt, storage_p, (uint64_t)nstorage, data);
    if (s->t) {
        // the getters give back what was set
        int64_t *got = NULL;
        uint64_t n = 0;
        FUZZ_REQUIRE(aclGetViewShape(s->t, &got, &n) == ACLNN_SUCCESS && n == (uint64_t)rank &&
                         (rank == 0 || !memcmp(got, dims, sizeof(int64_t) * (size_t)rank)),
                     "aclGetViewShape differs from the dims given");
        free(got);
        if (has_strides) {
            FUZZ_REQUIRE(aclGetViewStrides(s->t, &got, &n) == ACLNN_SUCCESS &&
                             n == (uint64_t)rank &&
                             (rank == 0 || !memcmp(got, strides, sizeof(int64_t) * (size_t)rank)),
                         "aclGetViewStrides differs from the strides given");
            free(got);
        }
        int64_t off = -1;
        aclDataType gdt;
        FUZZ_REQUIRE(aclGetViewOffset(s->t, &off) == ACLNN_SUCCESS && off == offset,
                     "aclGetViewOffset");
        FUZZ_REQUIRE(aclGetDataType(s->t, &gdt) == ACLNN_SUCCESS && gdt == dt, "aclGetDataType");
    }
    if (s->t && s->unsafe) c->any_unsafe = true;
    if (s->t && s->overflow) c->any_overflow = true;
    if (s->t && s->too_big) c->any_too_big = true;
}

static void make_tensor(fz *f, call *c, int k) {
    make_tensor_at(f, c, k, &c->ts[k]);
    if (!c->ts[k].t && !optional(c, k)) c->any_null = true;
    if (!c->ts[k].t && optional(c, k)) c->optional_null = true;
    c->a[k].t = c->ts[k].t;
}

// A tensor list of 0..MAXLIST tensors made like the tensor parameters (the refused ones left
// out), or sometimes NULL; the list owns its tensors.
static void make_list(fz *f, call *c, int k) {
    const aclTensor *ts[MAXLIST];
    // what the entries make the call expect holds only if the list is passed
    bool unsafe0 = c->any_unsafe, overflow0 = c->any_overflow, too_big0 = c->any_too_big;
    int n = 0, want = fz_pick(f, 8) == 1 ? 0 : 1 + fz_pick(f, MAXLIST);
    for (int j = 0; j < want; j++) {
        tslot *s = &c->lts[k][j];
        make_tensor_at(f, c, k, s);
        if (s->t) ts[n++] = s->t;
    }
    c->nlts[k] = want;
    if (fz_pick(f, 16) == 1) {
        c->any_null |= !optional(c, k);
        c->optional_null |= optional(c, k);
        c->any_unsafe = unsafe0, c->any_overflow = overflow0, c->any_too_big = too_big0;
    } else {
        c->lists[k] = aclCreateTensorList(ts, (uint64_t)n);
        FUZZ_REQUIRE(c->lists[k], "aclCreateTensorList: %s", aclGetRecentErrMsg());
    }
    if (!c->lists[k]) // the tensors are not owned by a list
        for (int j = 0; j < n; j++) aclDestroyTensor((aclTensor *)ts[j]);
    for (int j = 0; j < want; j++) c->lts[k][j].t = NULL; // owned by the list (or destroyed)
    c->a[k].tl = c->lists[k];
}

static aclScalar *make_scalar(fz *f, const og_param *p) {
    unsigned char v[16] = {0};
    aclDataType dt = ACL_FLOAT;
    switch (fz_pick(f, 8)) {
    case 1: // any dtype, any bits
        dt = dtypes[fz_pick(f, NDTYPES)];
        for (int i = 0; i < 16; i++) v[i] = fz_u8(f); // a bool of any byte: true when nonzero
        break;
    case 2:
        return NULL;
    case 3: {
        double d = dspecials[fz_pick(f, sizeof dspecials / sizeof dspecials[0])];
        if (fz_u8(f) & 1) d = fz_u8(f) & 1 ? (double)INFINITY : (double)NAN;
        dt = ACL_DOUBLE;
        memcpy(v, &d, sizeof d);
        break;
    }
    case 4:
        dt = (aclDataType)(int32_t)fz_u32(f);
        break;
    case 5: {
        float x = (float)dspecials[fz_pick(f, sizeof dspecials / sizeof dspecials[0])];
        memcpy(v, &x, sizeof x);
        break;
    }
    case 6: { // value NULL: refused
        aclScalar *s = aclCreateScalar(NULL, ACL_FLOAT);
        FUZZ_REQUIRE(s == NULL, "aclCreateScalar accepted a NULL value");
        return NULL;
    }
    default: {
        float x = p->def[0] ? strtof(p->def, NULL) : 1.0f;
        memcpy(v, &x, sizeof x);
    }
    }
    return aclCreateScalar(v, dt);
}

static aclIntArray *make_array(fz *f) {
    int64_t v[16];
    int n = 1;
    v[0] = -1;
    switch (fz_pick(f, 8)) {
    case 1:
        n = fz_pick(f, 10);
        for (int i = 0; i < n; i++) v[i] = (int8_t)fz_u8(f) % 11;
        break;
    case 2:
        return NULL;
    case 3:
        n = fz_pick(f, 10);
        for (int i = 0; i < n; i++) v[i] = specials[fz_pick(f, NSPECIALS)];
        break;
    case 4: {
        aclIntArray *a = aclCreateIntArray(NULL, 1 + fz_u8(f));
        FUZZ_REQUIRE(a == NULL, "aclCreateIntArray accepted NULL values with a size");
        return NULL;
    }
    case 5:
        n = 0;
        break;
    default:
        break;
    }
    return aclCreateIntArray(v, (uint64_t)n);
}

// What becomes of a created handle: 0 kept, 1 destroyed before the call, 2 replaced by an object
// of another kind, 3 replaced by NULL (tensors). OPGRAD_FUZZ_NO_STALE=1: never 1 or 2.
static int pick_handle_mode(fz *f) {
    int m = fz_pick(f, 32);
    return no_stale && (m == 1 || m == 2) ? 0 : m;
}

static const char *const strings[] = {"none",  "tanh",        "",    "None",    "TANH",
                                      "tanh ", "approximate", "erf", "nonenone"};

static void make_arg(fz *f, call *c, int k) {
    const og_param *p = &c->info->p[k];
    og_arg *a = &c->a[k];
    switch (p->kind) {
    case OG_PARAM_SCALAR:
        a->s = c->scalars[k] = make_scalar(f, p);
        if (!a->s) c->any_null = true;
        if (a->s) switch (pick_handle_mode(f)) {
            case 1:
                c->stale[k] = true;
                break;
            case 2: { // a tensor where a scalar belongs
                float one = 1;
                c->wrong_tensor[k] = aclCreateTensor(NULL, 0, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND,
                                                     NULL, 0, &c->wrong_buf[k]);
                FUZZ_REQUIRE(c->wrong_tensor[k], "0-d tensor: %s", aclGetRecentErrMsg());
                memcpy(&c->wrong_buf[k], &one, sizeof one);
                a->s = (aclScalar *)c->wrong_tensor[k];
                c->any_stale = true;
                break;
            }
            default:
                break;
            }
        break;
    case OG_PARAM_BOOL_ARRAY: { // usually 3 random entries, sometimes another count or NULL
        bool v[8];
        int n = fz_pick(f, 4) == 1 ? fz_pick(f, 8) : 3;
        for (int i = 0; i < n; i++) v[i] = fz_u8(f) & 1;
        a->ba = c->bools[k] = fz_pick(f, 16) == 1 ? NULL : aclCreateBoolArray(v, (uint64_t)n);
        if (!a->ba) c->any_null = true;
        break;
    }
    case OG_PARAM_INT_ARRAY:
        a->a = c->arrays[k] = make_array(f);
        if (!a->a && !optional(c, k)) c->any_null = true; // (A(name, NULL): NULL is valid)
        if (!a->a && optional(c, k)) c->optional_null = true;
        if (a->a && pick_handle_mode(f) == 1) c->stale[k] = true;
        break;
    case OG_PARAM_STRING: {
        char *s = c->strings[k];
        switch (fz_pick(f, 8)) {
        case 1:
            snprintf(s, sizeof c->strings[k], "%s",
                     strings[fz_pick(f, sizeof strings / sizeof strings[0])]);
            break;
        case 2:
            s = NULL;
            c->any_null = true;
            break;
        case 3: {
            int n = fz_pick(f, (int)sizeof c->strings[k]);
            for (int i = 0; i < n; i++) s[i] = (char)fz_u8(f);
            s[n] = '\0';
            break;
        }
        default:
            snprintf(s, sizeof c->strings[k], "%s", p->def[0] ? p->def : "none");
        }
        a->c = s;
        break;
    }
    case OG_PARAM_INT:
        switch (fz_pick(f, 8)) {
        case 1:
            a->i = (int8_t)fz_u8(f);
            break;
        case 2:
            a->i = specials[fz_pick(f, NSPECIALS)];
            break;
        case 3:
            a->i = (int64_t)fz_u64(f);
            break;
        default:
            a->i = p->def[0] ? atoll(p->def) : 0;
        }
        break;
    case OG_PARAM_INT8:
        a->i8 = fz_pick(f, 4) == 1 ? (int8_t)fz_u8(f) : (int8_t)(p->def[0] ? atoi(p->def) : 0);
        break;
    case OG_PARAM_BOOL:
        a->b = fz_pick(f, 4) == 1 ? (fz_u8(f) & 1) : !strcmp(p->def, "true");
        break;
    case OG_PARAM_DOUBLE:
        switch (fz_pick(f, 8)) {
        case 1:
            a->d = dspecials[fz_pick(f, sizeof dspecials / sizeof dspecials[0])];
            break;
        case 2: {
            uint64_t bits = fz_u64(f);
            memcpy(&a->d, &bits, sizeof bits);
            break;
        }
        default:
            a->d = p->def[0] ? atof(p->def) : 0;
        }
        break;
    case OG_PARAM_DTYPE:
        a->dtype = gen_dtype(f, c->base_dtype);
        break;
    case OG_PARAM_FLOAT:
        if (fz_pick(f, 4) == 1)
            a->f = (float)dspecials[fz_pick(f, sizeof dspecials / sizeof dspecials[0])];
        else
            a->f = p->def[0] ? (float)atof(p->def) : 0;
        break;
    case OG_PARAM_TENSOR_LIST:
    case OG_PARAM_REF_LIST:
    case OG_PARAM_OUT_LIST:
        make_list(f, c, k);
        break;
    default: {
        // what this view makes the call expect holds only if it is passed
        bool unsafe0 = c->any_unsafe, overflow0 = c->any_overflow, too_big0 = c->any_too_big;
        make_tensor(f, c, k);
        if (a->t) switch (pick_handle_mode(f)) {
            case 1:
                c->stale[k] = true;
                break;
            case 3: // NULL (the tensor itself is destroyed with the others)
                a->t = NULL;
                c->any_unsafe = unsafe0, c->any_overflow = overflow0, c->any_too_big = too_big0;
                c->any_null |= !optional(c, k);
                c->optional_null |= optional(c, k);
                break;
            case 2: { // a scalar where a tensor belongs
                float one = 1;
                c->wrong_scalar[k] = aclCreateScalar(&one, ACL_FLOAT);
                FUZZ_REQUIRE(c->wrong_scalar[k], "scalar: %s", aclGetRecentErrMsg());
                a->t = (aclTensor *)c->wrong_scalar[k];
                c->any_stale = true;
                break;
            }
            default:
                break;
            }
        break;
    }
    }
}

// Destroys the handles chosen to go stale (destroying one twice is refused).
static void make_stale(call *c) {
    for (int k = 0; k < c->info->n; k++) {
        if (!c->stale[k]) continue;
        og_param_kind kind = c->info->p[k].kind;
        c->any_stale = true;
        if (kind == OG_PARAM_SCALAR) {
            FUZZ_REQUIRE(aclDestroyScalar(c->scalars[k]) == ACLNN_SUCCESS, "aclDestroyScalar");
            FUZZ_REQUIRE(aclDestroyScalar(c->scalars[k]) == ACLNN_ERR_PARAM_INVALID,
                         "aclDestroyScalar of a destroyed scalar");
            c->scalars[k] = NULL;
        } else if (kind == OG_PARAM_INT_ARRAY) {
            FUZZ_REQUIRE(aclDestroyIntArray(c->arrays[k]) == ACLNN_SUCCESS, "aclDestroyIntArray");
            FUZZ_REQUIRE(aclDestroyIntArray(c->arrays[k]) == ACLNN_ERR_PARAM_INVALID,
                         "aclDestroyIntArray of a destroyed array");
            c->arrays[k] = NULL;
        } else {
            FUZZ_REQUIRE(aclDestroyTensor(c->ts[k].t) == ACLNN_SUCCESS, "aclDestroyTensor");
            FUZZ_REQUIRE(aclDestroyTensor(c->ts[k].t) == ACLNN_ERR_PARAM_INVALID,
                         "aclDestroyTensor of a destroyed tensor");
            c->ts[k].t = NULL;
        }
    }
}

static void free_call(call *c) {
    for (int k = 0; k < c->info->n; k++) {
        tslot *s = &c->ts[k];
        if (s->t) aclDestroyTensor(s->t);
        dev_free(s->own, s->own_size);
        if (c->lists[k]) aclDestroyTensorList(c->lists[k]);
        for (int j = 0; j < c->nlts[k]; j++) dev_free(c->lts[k][j].own, c->lts[k][j].own_size);
        if (c->scalars[k]) aclDestroyScalar(c->scalars[k]);
        if (c->arrays[k]) aclDestroyIntArray(c->arrays[k]);
        if (c->bools[k]) aclDestroyBoolArray(c->bools[k]);
        if (c->wrong_scalar[k]) aclDestroyScalar(c->wrong_scalar[k]);
        if (c->wrong_tensor[k]) aclDestroyTensor(c->wrong_tensor[k]);
    }
}

// ---- phase 2 ----

#define EXPECT(expr, want)                                                                         \
    do {                                                                                           \
        aclnnStatus st_ = (expr);                                                                  \
        FUZZ_REQUIRE(st_ == (want), "%s: %s returned %d, expected %d (%s)", op->name, #expr,       \
                     (int)st_, (int)(want), aclGetRecentErrMsg());                                 \
    } while (0)

static void phase2(fz *f, call *c, aclOpExecutor *e, uint64_t ws, int opindex) {
    const og_opdesc *op = c->info->op;
    if (c->any_unsafe || ws > MAXWS) {
        EXPECT(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
        return;
    }
    void *wsbuf = ws ? dev_alloc((size_t)ws) : NULL;
    if (wsbuf) fill(wsbuf, (size_t)ws, ACL_INT8, 7);
    int nslots = 0; // a list's tensors are slots (an LR list's twice, as an R tensor's)
    bool lists = false;
    for (int k = 0; k < c->info->n; k++) {
        og_param_kind kind = c->info->p[k].kind;
        nslots += is_tensor(kind) + (kind == OG_PARAM_REF);
        uint64_t size = 0;
        if (og_param_is_list(kind) && aclGetTensorListSize(c->lists[k], &size) == 0) {
            lists = true;
            nslots += (int)size * (kind == OG_PARAM_REF_LIST ? 2 : 1);
        }
    }
    switch (fz_pick(f, 12)) {
    case 1: // too small a workspace
        if (ws > 0) {
            uint64_t less = ws - 1 - (fz_u8(f) % ws);
            EXPECT(op->phase2(wsbuf, less, e, NULL), ACLNN_ERR_PARAM_INVALID);
        }
        EXPECT(op->phase2(wsbuf, ws, e, NULL), ACLNN_SUCCESS);
        break;
    case 2: // no workspace: NULL with a nonzero size is refused when one is needed
        if (ws > 0) {
            EXPECT(op->phase2(NULL, ws + fz_u8(f), e, NULL), ACLNN_ERR_PARAM_NULLPTR);
            EXPECT(op->phase2(wsbuf, ws, e, NULL), ACLNN_SUCCESS);
        } else {
            EXPECT(op->phase2(NULL, fz_u8(f), e, NULL), ACLNN_SUCCESS);
        }
        break;
    case 3: { // the executor of another operator
        int other = (opindex + 1 + fz_pick(f, og_ops_count - 1)) % og_ops_count;
        if (og_ops[other] != op)
            EXPECT(og_ops[other]->phase2(wsbuf, ws, e, NULL), ACLNN_ERR_PARAM_INVALID);
        EXPECT(op->phase2(wsbuf, ws, e, NULL), ACLNN_SUCCESS);
        break;
    }
    case 4: // a destroyed executor
        EXPECT(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
        EXPECT(op->phase2(wsbuf, ws, e, NULL), ACLNN_ERR_PARAM_INVALID);
        EXPECT(aclDestroyAclOpExecutor(e), ACLNN_ERR_PARAM_INVALID);
        EXPECT(aclSetAclOpExecutorRepeatable(e), ACLNN_ERR_PARAM_INVALID);
        EXPECT(opgrad_executor_run(e, NULL, 0, wsbuf, ws, NULL), ACLNN_ERR_PARAM_INVALID);
        break;
    case 5: { // repeatable: several runs, opgrad_executor_run, bad re-pointing, destroy
        EXPECT(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
        int runs = 1 + fz_pick(f, 3);
        for (int r = 0; r < runs; r++) EXPECT(op->phase2(wsbuf, ws, e, NULL), ACLNN_SUCCESS);
        void *addrs[MAXP * 2 + 4] = {0};
        size_t naddrs = (size_t)fz_pick(f, MAXP * 2 + 4);
        EXPECT(opgrad_executor_run(e, addrs, naddrs, wsbuf, ws, NULL),
               naddrs <= (size_t)nslots ? ACLNN_SUCCESS : ACLNN_ERR_PARAM_INVALID);
        if (nslots > 0)
            EXPECT(opgrad_executor_run(e, NULL, 1 + (size_t)fz_pick(f, nslots), wsbuf, ws, NULL),
                   ACLNN_ERR_PARAM_NULLPTR);
        EXPECT(aclSetInputTensorAddr(e, (size_t)nslots + fz_u8(f), NULL, NULL),
               ACLNN_ERR_PARAM_INVALID);
        // re-point input 0 (the first input tensor of the signature) at a copy of its block, then
        // back through opgrad_executor_run
        int first = -1; // (slot 0 of a list operator may be a list's tensor: not re-pointed)
        for (int k = 0; k < c->info->n && first < 0 && !lists; k++) {
            og_param_kind kind = c->info->p[k].kind;
            if (is_tensor(kind) && kind != OG_PARAM_OUT) first = k;
        }
        tslot *in0 = first >= 0 ? &c->ts[first] : NULL;
        if (in0 && in0->own && in0->data == in0->own && (fz_u8(f) & 1)) {
            void *copy = dev_alloc(in0->own_size);
            memcpy(copy, in0->own, in0->own_size ? in0->own_size : 1);
            EXPECT(aclSetInputTensorAddr(e, 0, NULL, copy), ACLNN_SUCCESS);
            EXPECT(op->phase2(wsbuf, ws, e, NULL), ACLNN_SUCCESS);
            addrs[0] = in0->own;
            EXPECT(opgrad_executor_run(e, addrs, 1, wsbuf, ws, NULL), ACLNN_SUCCESS);
            EXPECT(op->phase2(wsbuf, ws, e, NULL), ACLNN_SUCCESS); // on its own block again
            dev_free(copy, in0->own_size);
        }
        EXPECT(aclSetOutputTensorAddr(e, (size_t)nslots + fz_u8(f), NULL, NULL),
               ACLNN_ERR_PARAM_INVALID);
        if (fz_u8(f) & 1) {
            EXPECT(op->phase2(wsbuf, ws, e, stream), ACLNN_SUCCESS);
            EXPECT(op->phase2(wsbuf, ws, e, stream), ACLNN_SUCCESS);
        }
        EXPECT(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS); // queued runs keep it alive
        FUZZ_REQUIRE(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "%s: synchronize: %s", op->name,
                     aclGetRecentErrMsg());
        EXPECT(op->phase2(wsbuf, ws, e, NULL), ACLNN_ERR_PARAM_INVALID);
        break;
    }
    case 6: // a stream
        EXPECT(op->phase2(wsbuf, ws, e, stream), ACLNN_SUCCESS);
        FUZZ_REQUIRE(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "%s: synchronize: %s", op->name,
                     aclGetRecentErrMsg());
        EXPECT(op->phase2(wsbuf, ws, e, stream), ACLNN_ERR_PARAM_INVALID);
        break;
    case 7: // a destroyed stream is refused before the executor is consumed
        EXPECT(op->phase2(wsbuf, ws, e, dead_stream), ACLNN_ERR_PARAM_INVALID);
        EXPECT(op->phase2(wsbuf, ws, e, NULL), ACLNN_SUCCESS);
        break;
    case 8: // a NULL executor
        EXPECT(op->phase2(wsbuf, ws, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
        EXPECT(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
        break;
    case 9: // planned, never run
        EXPECT(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
        break;
    case 10: // opgrad_executor_run refuses a single-use executor, which stays usable
        EXPECT(opgrad_executor_run(e, NULL, 0, wsbuf, ws, NULL), ACLNN_ERR_PARAM_INVALID);
        EXPECT(op->phase2(wsbuf, ws, e, NULL), ACLNN_SUCCESS);
        break;
    default: // run, then run again: single-use
        EXPECT(op->phase2(wsbuf, ws, e, NULL), ACLNN_SUCCESS);
        EXPECT(op->phase2(wsbuf, ws, e, NULL), ACLNN_ERR_PARAM_INVALID);
        EXPECT(aclDestroyAclOpExecutor(e), ACLNN_ERR_PARAM_INVALID);
        break;
    }
    dev_free(wsbuf, (size_t)ws);
}

// ---- the rest of the tensor API: aclInitTensor, lists, arrays, getters ----

static void misc_api(fz *f) {
    static const int64_t d23[2] = {2, 3};
    float buf[8] = {0};
    switch (fz_pick(f, 8)) {
    case 1: { // aclInitTensor: a refused call leaves the tensor as it was
        aclTensor *t = aclCreateTensor(d23, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, buf);
        FUZZ_REQUIRE(t, "[2,3] tensor: %s", aclGetRecentErrMsg());
        int64_t dims[MAXRANK], strides[MAXRANK];
        int rank = fz_pick(f, 10);
        for (int d = 0; d < rank; d++) {
            dims[d] = gen_dim(f, d);
            strides[d] = fz_pick(f, 4) == 1 ? specials[fz_pick(f, NSPECIALS)] : 1;
        }
        int64_t offset = fz_pick(f, 4) == 1 ? specials[fz_pick(f, NSPECIALS)] : 0;
        aclnnStatus st =
            aclInitTensor(t, dims, (uint64_t)rank, gen_dtype(f, ACL_FLOAT),
                          fz_u8(f) & 1 ? strides : NULL, offset, ACL_FORMAT_ND, NULL, 0, buf);
        int64_t *got = NULL;
        uint64_t n = 0;
        FUZZ_REQUIRE(aclGetViewShape(t, &got, &n) == ACLNN_SUCCESS, "aclGetViewShape");
        if (st != ACLNN_SUCCESS)
            FUZZ_REQUIRE(n == 2 && got[0] == 2 && got[1] == 3,
                         "a refused aclInitTensor changed the tensor");
        else
            FUZZ_REQUIRE(n == (uint64_t)rank, "aclInitTensor: rank %llu, not %d",
                         (unsigned long long)n, rank);
        free(got);
        FUZZ_REQUIRE(aclDestroyTensor(t) == ACLNN_SUCCESS, "aclDestroyTensor");
        break;
    }
    case 2: { // lists own their objects
        aclTensor *ts[4];
        aclScalar *ss[4];
        int n = fz_pick(f, 5);
        for (int i = 0; i < n; i++) {
            ts[i] = aclCreateTensor(d23, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, buf);
            float v = (float)i;
            ss[i] = aclCreateScalar(&v, ACL_FLOAT);
            FUZZ_REQUIRE(ts[i] && ss[i], "create: %s", aclGetRecentErrMsg());
        }
        aclTensorList *tl = aclCreateTensorList((const aclTensor *const *)ts, (uint64_t)n);
        aclScalarList *sl = aclCreateScalarList((const aclScalar *const *)ss, (uint64_t)n);
        FUZZ_REQUIRE(tl && sl, "lists of %d: %s", n, aclGetRecentErrMsg());
        uint64_t size = 99;
        FUZZ_REQUIRE(aclGetTensorListSize(tl, &size) == ACLNN_SUCCESS && size == (uint64_t)n,
                     "aclGetTensorListSize");
        FUZZ_REQUIRE(aclGetScalarListSize(sl, &size) == ACLNN_SUCCESS && size == (uint64_t)n,
                     "aclGetScalarListSize");
        FUZZ_REQUIRE(aclGetTensorListSize(tl, NULL) == ACLNN_ERR_PARAM_NULLPTR, "NULL size");
        FUZZ_REQUIRE(!aclCreateTensorList(NULL, 1 + fz_u8(f)), "NULL list with a size");
        FUZZ_REQUIRE(!aclCreateScalarList(NULL, 1 + fz_u8(f)), "NULL list with a size");
        aclDestroyTensorList(tl);
        aclDestroyScalarList(sl);
        break;
    }
    case 3: { // float and bool arrays
        float fv[8];
        bool bv[8];
        int n = fz_pick(f, 9);
        for (int i = 0; i < n; i++) {
            uint32_t bits = fz_u32(f);
            memcpy(&fv[i], &bits, sizeof bits);
            bv[i] = fz_u8(f) & 1;
        }
        aclFloatArray *fa = aclCreateFloatArray(fv, (uint64_t)n);
        aclBoolArray *ba = aclCreateBoolArray(bv, (uint64_t)n);
        FUZZ_REQUIRE(fa && ba, "arrays of %d: %s", n, aclGetRecentErrMsg());
        uint64_t size = 99;
        FUZZ_REQUIRE(aclGetFloatArraySize(fa, &size) == ACLNN_SUCCESS && size == (uint64_t)n,
                     "aclGetFloatArraySize");
        FUZZ_REQUIRE(aclGetBoolArraySize(ba, &size) == ACLNN_SUCCESS && size == (uint64_t)n,
                     "aclGetBoolArraySize");
        FUZZ_REQUIRE(!aclCreateFloatArray(NULL, 1 + fz_u8(f)), "NULL values with a size");
        FUZZ_REQUIRE(!aclCreateBoolArray(NULL, 1 + fz_u8(f)), "NULL values with a size");
        FUZZ_REQUIRE(!aclCreateIntArray(NULL, 1 + fz_u8(f)), "NULL values with a size");
        aclDestroyFloatArray(fa);
        aclDestroyBoolArray(ba);
        break;
    }
    case 4: { // getters: NULL arguments are refused, the raw address round-trips
        aclTensor *t = aclCreateTensor(d23, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, buf);
        FUZZ_REQUIRE(t, "[2,3] tensor: %s", aclGetRecentErrMsg());
        int64_t *v = NULL, off;
        uint64_t n;
        aclDataType dt;
        aclFormat fmt;
        void *addr = NULL;
        FUZZ_REQUIRE(aclGetViewShape(t, NULL, &n) == ACLNN_ERR_PARAM_NULLPTR, "view shape");
        FUZZ_REQUIRE(aclGetViewShape(t, &v, NULL) == ACLNN_ERR_PARAM_NULLPTR, "view shape");
        FUZZ_REQUIRE(aclGetViewShape(NULL, &v, &n) == ACLNN_ERR_PARAM_NULLPTR, "view shape");
        FUZZ_REQUIRE(aclGetStorageShape(NULL, &v, &n) == ACLNN_ERR_PARAM_NULLPTR, "storage");
        FUZZ_REQUIRE(aclGetViewStrides(NULL, &v, &n) == ACLNN_ERR_PARAM_NULLPTR, "strides");
        FUZZ_REQUIRE(aclGetViewOffset(NULL, &off) == ACLNN_ERR_PARAM_NULLPTR, "offset");
        FUZZ_REQUIRE(aclGetViewOffset(t, NULL) == ACLNN_ERR_PARAM_NULLPTR, "offset");
        FUZZ_REQUIRE(aclGetFormat(NULL, &fmt) == ACLNN_ERR_PARAM_NULLPTR, "format");
        FUZZ_REQUIRE(aclGetDataType(t, NULL) == ACLNN_ERR_PARAM_NULLPTR, "dtype");
        FUZZ_REQUIRE(aclGetDataType(NULL, &dt) == ACLNN_ERR_PARAM_NULLPTR, "dtype");
        FUZZ_REQUIRE(aclGetRawTensorAddr(NULL, &addr) == ACLNN_ERR_PARAM_NULLPTR, "raw addr");
        FUZZ_REQUIRE(aclSetRawTensorAddr(NULL, buf) == ACLNN_ERR_PARAM_NULLPTR, "raw addr");
        FUZZ_REQUIRE(aclGetStorageShape(t, &v, &n) == ACLNN_SUCCESS && n >= 1, "storage shape");
        free(v);
        FUZZ_REQUIRE(aclGetFormat(t, &fmt) == ACLNN_SUCCESS && fmt == ACL_FORMAT_ND, "format");
        FUZZ_REQUIRE(aclSetRawTensorAddr(t, buf + 1) == ACLNN_SUCCESS &&
                         aclGetRawTensorAddr(t, &addr) == ACLNN_SUCCESS && addr == buf + 1,
                     "raw address");
        FUZZ_REQUIRE(aclDestroyTensor(t) == ACLNN_SUCCESS, "aclDestroyTensor");
        break;
    }
    default:
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!infos) LLVMFuzzerInitialize(NULL, NULL);
    fz f = {data, size};
    int opindex = fz_pick(&f, 256) % og_ops_count;
    static call c;
    memset(&c, 0, sizeof c);
    c.info = &infos[opindex];
    const og_opdesc *op = c.info->op;
    static const opgrad_isa caps[4] = {OPGRAD_ISA_COUNT - 1, OPGRAD_ISA_SCALAR, OPGRAD_ISA_AVX2,
                                       OPGRAD_ISA_AVX512};
    opgrad_set_max_isa(caps[fz_pick(&f, 4)]);
    opgrad_set_num_threads(1 + fz_pick(&f, 2));
    c.base_rank = (fz_pick(&f, 10) + 2) % 10;
    for (int d = 0; d < c.base_rank; d++) c.base[d] = gen_dim(&f, d);
    c.base_dtype = dtypes[fz_pick(&f, NDTYPES)];
    for (int k = 0; k < c.info->n; k++) make_arg(&f, &c, k);
    make_stale(&c);

    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    int pm = fz_pick(&f, 32);
    uint64_t *wsp = pm == 1 ? NULL : &ws;
    aclOpExecutor **ep = pm == 2 ? NULL : &e;
    // A message phase 1 must replace when it fails.
    aclScalar *sentinel = aclCreateScalar(NULL, ACL_FLOAT);
    FUZZ_REQUIRE(!sentinel, "aclCreateScalar(NULL)");
    char before[1100];
    snprintf(before, sizeof before, "%s", aclGetRecentErrMsg());
    aclnnStatus st = op->phase1(c.a, wsp, ep);
    const char *msg = aclGetRecentErrMsg();
    if (!wsp || !ep || c.any_null)
        FUZZ_REQUIRE(st == ACLNN_ERR_PARAM_NULLPTR, "%s with a NULL argument: status %d (%s)",
                     op->name, (int)st, msg);
    else if (c.any_stale) // (an optional NULL an outputMask asks for may be named first: 161001)
        FUZZ_REQUIRE(st == ACLNN_ERR_PARAM_INVALID ||
                         (c.optional_null && st == ACLNN_ERR_PARAM_NULLPTR),
                     "%s with a destroyed handle or one of another kind: status %d (%s)", op->name,
                     (int)st, msg);
    FUZZ_REQUIRE(st == ACLNN_SUCCESS || st == ACLNN_ERR_PARAM_NULLPTR ||
                     st == ACLNN_ERR_PARAM_INVALID,
                 "%sGetWorkspaceSize: unexpected status %d (%s)", op->name, (int)st, msg);
    if (st != ACLNN_SUCCESS) {
        FUZZ_REQUIRE(strcmp(msg, before) && strstr(msg, op->name),
                     "%sGetWorkspaceSize failed (%d) without a message naming it: \"%s\"", op->name,
                     (int)st, msg);
    } else {
        FUZZ_REQUIRE(e != NULL, "%sGetWorkspaceSize succeeded without an executor", op->name);
        if (c.any_overflow) {
            for (int k = 0; k < c.info->n; k++)
                if (c.ts[k].t && c.ts[k].overflow)
                    fprintf(stderr, "%s: parameter %s: a view whose byte extent overflows int64\n",
                            op->name, c.info->p[k].name);
            FUZZ_REQUIRE(false, "%sGetWorkspaceSize accepted a view whose byte extent overflows",
                         op->name);
        }
        if (c.any_too_big) {
            for (int k = 0; k < c.info->n; k++)
                if (c.ts[k].t && c.ts[k].too_big)
                    fprintf(stderr, "%s: parameter %s: a view beyond its %zu-byte block\n",
                            op->name, c.info->p[k].name, c.ts[k].usable);
            FUZZ_REQUIRE(false,
                         "%sGetWorkspaceSize accepted a view larger than its aclrtMalloc block",
                         op->name);
        }
        phase2(&f, &c, e, ws, opindex);
    }
    free_call(&c);
    misc_api(&f);
    return 0;
}
