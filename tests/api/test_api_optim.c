/* The optim family through the public API: aclnnApplyAdamW, aclnnApplyAdamWV2, aclnnFusedAdamw,
 * aclnnFusedSgd.
 *  - values against float64 loops of PyTorch's documented AdamW / SGD rules, fp32 / fp16 / bf16,
 *    ApplyAdamWV2's mixed precision (fp32 states, 16-bit grad and maxGradNorm), strided views,
 *    sizes that end in SIMD tails and span several parallel chunks, lists of mixed sizes with
 *    empty tensors, per-tensor step counters (INT64 and FLOAT), amsgrad, maximize, weight decay,
 *    gradScale, foundInf (1 skips everything bit for bit; 0 runs);
 *  - the step tensors are never written; FusedSgd writes the rescaled gradient back only with a
 *    gradScale;
 *  - 1 vs 2 threads and every ISA level bitwise equal;
 *  - statuses: NULLs (161001), dtypes, shapes, list lengths, empty lists, attributes out of
 *    range, shared memory (161002), each with a message naming the argument.
 *
 * The error bound (fp32): every result is a chain of at most ~10 separately rounded fp32
 * operations (each <= 0.5 ulp of its own result) plus the rounding of the constants
 * (lr / (1 - beta1^t), 1 / sqrt(1 - beta2^t), 1 - beta, 1 - lr wd) to fp32 (<= 0.5 ulp each);
 * the parameter and first moment cancel, so errors are relative to the magnitude bound M (the
 * same expression with every term made non-negative): |got - ref| <= 8 * 2^-24 * M. 16-bit
 * results are computed in fp32 and rounded once: half a 16-bit spacing more. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_apply_adam_w.h"
#include "aclnnop/aclnn_apply_adam_w_v2.h"
#include "aclnnop/aclnn_fused_adamw.h"
#include "aclnnop/aclnn_fused_sgd.h"
#include "opgrad/opgrad.h"
#include "tensor/dtype.h"
#include "tensor/tensor.h"
#include "test.h"
#include "testutil.h"

#define BOUND_ULPS 8.0

// |got - ref| within the stated bound for a result of dtype dt with magnitude bound mag.
static bool within(aclDataType dt, double got, double ref, double mag) {
    double b = BOUND_ULPS * 0x1p-24 * mag + 0x1p-149;
    if (dt != ACL_FLOAT) {
        // half a spacing of dt at |ref| + b
        double a = fabs(ref) + b;
        int e;
        frexp(a, &e);
        int mant = dt == ACL_BF16 ? 8 : 11, emin = dt == ACL_BF16 ? -126 : -14;
        if (e - 1 < emin) e = emin + 1;
        b += 0.5 * ldexp(1.0, e - mant);
    }
    return fabs(got - ref) <= b;
}

// ---- float64 references --------------------------------------------------------------------

typedef struct adam_cfg {
    double lr, beta1, beta2, wd, eps;
    bool amsgrad, maximize;
    double scale; // 0 = none
} adam_cfg;

typedef struct adam_ref_out {
    double p, m, v, vx, pmag, mmag;
} adam_ref_out;

static adam_ref_out adam_ref(const adam_cfg *c, double step, double p, double g, double m, double v,
                             double vx) {
    double t = step + 1, step_size = c->lr / (1 - pow(c->beta1, t));
    double bc2_sqrt = sqrt(1 - pow(c->beta2, t));
    if (c->scale != 0) g /= c->scale;
    if (c->maximize) g = -g;
    adam_ref_out o;
    double p1 = p * (1 - c->lr * c->wd);
    o.m = c->beta1 * m + (1 - c->beta1) * g;
    o.mmag = fabs(c->beta1 * m) + fabs((1 - c->beta1) * g);
    o.v = c->beta2 * v + (1 - c->beta2) * g * g;
    o.vx = vx > o.v ? vx : o.v;
    double denom = sqrt(c->amsgrad ? o.vx : o.v) / bc2_sqrt + c->eps;
    o.p = p1 - step_size * o.m / denom;
    o.pmag = fabs(p1) + step_size * o.mmag / denom;
    return o;
}

// ---- buffers -------------------------------------------------------------------------------

typedef struct state {
    int64_t n;
    aclDataType dt, gdt;
    void *p, *g, *m, *v, *x;           // device buffers
    double *p0, *g0, *m0, *v0, *x0;    // initial values (as stored)
    aclTensor *tp, *tg, *tm, *tv, *tx; // contiguous 1-d tensors
} state;

static void fill(void *buf, double *copy, int64_t n, aclDataType dt, test_rng *r, double lo,
                 double hi, bool absval) {
    for (int64_t i = 0; i < n; i++) {
        double x = test_rng_uniform(r, lo, hi);
        if (absval) x = fabs(x);
        test_store(buf, i, dt, x);
        copy[i] = test_load(buf, i, dt);
    }
}

static state state_new(int64_t n, aclDataType dt, aclDataType gdt, test_rng *r) {
    state s = {.n = n, .dt = dt, .gdt = gdt};
    size_t e = aclDataTypeSize(dt), ge = aclDataTypeSize(gdt);
    s.p = test_dev_alloc((size_t)n * e);
    s.m = test_dev_alloc((size_t)n * e);
    s.v = test_dev_alloc((size_t)n * e);
    s.g = test_dev_alloc((size_t)n * ge);
    s.x = test_dev_alloc((size_t)n * ge);
    double **c[] = {&s.p0, &s.g0, &s.m0, &s.v0, &s.x0};
    for (int k = 0; k < 5; k++) *c[k] = malloc(((size_t)n + 1) * sizeof(double));
    fill(s.p, s.p0, n, dt, r, -2, 2, false);
    fill(s.g, s.g0, n, gdt, r, -2, 2, false);
    fill(s.m, s.m0, n, dt, r, -1, 1, false);
    fill(s.v, s.v0, n, dt, r, 0, 2, true);
    fill(s.x, s.x0, n, gdt, r, 0, 2, true);
    s.tp = test_tensor(&n, 1, dt, s.p);
    s.tg = test_tensor(&n, 1, gdt, s.g);
    s.tm = test_tensor(&n, 1, dt, s.m);
    s.tv = test_tensor(&n, 1, dt, s.v);
    s.tx = test_tensor(&n, 1, gdt, s.x);
    return s;
}

static void state_free(state *s) {
    aclTensor *t[] = {s->tp, s->tg, s->tm, s->tv, s->tx};
    for (int k = 0; k < 5; k++) aclDestroyTensor(t[k]);
    void *b[] = {s->p, s->g, s->m, s->v, s->x};
    for (int k = 0; k < 5; k++) aclrtFree(b[k]);
    double *c[] = {s->p0, s->g0, s->m0, s->v0, s->x0};
    for (int k = 0; k < 5; k++) free(c[k]);
}

// Every element of s against the reference; returns the number of bad elements.
static int64_t adam_compare(const state *s, const adam_cfg *c, double step, const char *what) {
    int64_t bad = 0;
    for (int64_t i = 0; i < s->n; i++) {
        adam_ref_out o = adam_ref(c, step, s->p0[i], s->g0[i], s->m0[i], s->v0[i], s->x0[i]);
        double p = test_load(s->p, i, s->dt), m = test_load(s->m, i, s->dt),
               v = test_load(s->v, i, s->dt), x = test_load(s->x, i, s->gdt);
        bool ok = within(s->dt, p, o.p, o.pmag) && within(s->dt, m, o.m, o.mmag) &&
                  within(s->dt, v, o.v, o.v) && (!c->amsgrad || within(s->gdt, x, o.vx, o.vx));
        if (!ok && bad++ < 3)
            fprintf(stderr,
                    "    %s [%lld]: p %.9g want %.9g, m %.9g want %.9g, v %.9g want %.9g, vmax "
                    "%.9g want %.9g\n",
                    what, (long long)i, p, o.p, m, o.m, v, o.v, x, o.vx);
    }
    return bad;
}

static aclTensor *step_tensor(aclDataType dt, double step, void **buf) {
    *buf = test_dev_alloc(8);
    if (dt == ACL_INT64) {
        int64_t i = (int64_t)step;
        memcpy(*buf, &i, 8);
    } else {
        float f = (float)step;
        memcpy(*buf, &f, 4);
    }
    int64_t one = 1;
    return test_tensor(&one, 1, dt, *buf);
}

static aclTensor *flag_tensor(float v, void **buf) {
    *buf = test_dev_alloc(4);
    memcpy(*buf, &v, 4);
    int64_t one = 1;
    return test_tensor(&one, 1, ACL_FLOAT, *buf);
}

// ---- ApplyAdamWV2 --------------------------------------------------------------------------

static aclnnStatus run_v2(state *s, aclTensor *step, const adam_cfg *c) {
    aclnnStatus st;
    OP_RUN(st,
           aclnnApplyAdamWV2GetWorkspaceSize(s->tp, s->tm, s->tv, c->amsgrad ? s->tx : NULL, s->tg,
                                             step, (float)c->lr, (float)c->beta1, (float)c->beta2,
                                             (float)c->wd, (float)c->eps, c->amsgrad, c->maximize,
                                             &ws_, &ex_),
           aclnnApplyAdamWV2);
    return st;
}

// The float arguments as the operator receives them.
static adam_cfg as_float(adam_cfg c) {
    c.lr = (float)c.lr, c.beta1 = (float)c.beta1, c.beta2 = (float)c.beta2, c.wd = (float)c.wd;
    c.eps = (float)c.eps;
    return c;
}

static void test_v2_values(void) {
    test_rng r;
    test_rng_seed(&r, 11);
    const int64_t sizes[] = {1, 7, 37, 4096 + 13, 3 * 4096 + 5};
    const adam_cfg cfgs[] = {
        {1e-2, 0.9, 0.999, 0.01, 1e-8, false, false, 0},
        {3e-2, 0.8, 0.99, 0, 1e-3, true, false, 0},
        {1e-1, 0.9, 0.999, 0.5, 1e-6, true, true, 0},
    };
    const aclDataType dts[][2] = {{ACL_FLOAT, ACL_FLOAT},
                                  {ACL_BF16, ACL_BF16},
                                  {ACL_FLOAT16, ACL_FLOAT16},
                                  {ACL_FLOAT, ACL_BF16},
                                  {ACL_FLOAT, ACL_FLOAT16}};
    for (size_t d = 0; d < sizeof dts / sizeof *dts; d++)
        for (size_t k = 0; k < sizeof cfgs / sizeof *cfgs; k++)
            for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
                state s = state_new(sizes[z], dts[d][0], dts[d][1], &r);
                double step = (double)(k * 7 + z);
                void *sb;
                aclTensor *st = step_tensor(z % 2 ? ACL_FLOAT : ACL_INT64, step, &sb);
                adam_cfg c = cfgs[k];
                CHECK_EQ(run_v2(&s, st, &c), ACLNN_SUCCESS);
                adam_cfg cf = as_float(c);
                char what[96];
                snprintf(what, sizeof what, "v2 %s/%s cfg %zu n %lld", og_dtype_name(dts[d][0]),
                         og_dtype_name(dts[d][1]), k, (long long)sizes[z]);
                CHECKF(adam_compare(&s, &cf, step, what) == 0, "%s", what);
                // the step is never written
                CHECK(z % 2 ? *(float *)sb == (float)step : *(int64_t *)sb == (int64_t)step);
                aclDestroyTensor(st);
                aclrtFree(sb);
                state_free(&s);
            }
}

// A hand-checked case: p = 1, g = 0.5, m = 0, v = 0, step 0 (t = 1), lr 0.1, betas 0.5 / 0.75,
// no decay, eps 0: m = 0.25, v = 0.0625, m^ = 0.5, v^ = 0.25, p = 1 - 0.1 * 0.5 / 0.5 = 0.9.
static void test_v2_hand(void) {
    float p = 1, g = 0.5f, m = 0, v = 0;
    void *bp = test_dev_alloc(4), *bg = test_dev_alloc(4), *bm = test_dev_alloc(4),
         *bv = test_dev_alloc(4), *bs;
    memcpy(bp, &p, 4), memcpy(bg, &g, 4), memcpy(bm, &m, 4), memcpy(bv, &v, 4);
    int64_t one = 1;
    aclTensor *tp = test_tensor(&one, 1, ACL_FLOAT, bp), *tg = test_tensor(&one, 1, ACL_FLOAT, bg),
              *tm = test_tensor(&one, 1, ACL_FLOAT, bm), *tv = test_tensor(&one, 1, ACL_FLOAT, bv);
    aclTensor *ts = step_tensor(ACL_INT64, 0, &bs);
    aclnnStatus st;
    OP_RUN(st,
           aclnnApplyAdamWV2GetWorkspaceSize(tp, tm, tv, NULL, tg, ts, 0.1f, 0.5f, 0.75f, 0, 0,
                                             false, false, &ws_, &ex_),
           aclnnApplyAdamWV2);
    CHECK_EQ(st, ACLNN_SUCCESS);
    CHECKF(*(float *)bm == 0.25f, "m %.9g", *(float *)bm);
    CHECKF(*(float *)bv == 0.0625f, "v %.9g", *(float *)bv);
    CHECKF(fabsf(*(float *)bp - 0.9f) <= 1.2e-7f, "p %.9g", *(float *)bp);
    aclTensor *t[] = {tp, tg, tm, tv, ts};
    for (int k = 0; k < 5; k++) aclDestroyTensor(t[k]);
    void *b[] = {bp, bg, bm, bv, bs};
    for (int k = 0; k < 5; k++) aclrtFree(b[k]);
}

// Strided views: every tensor a transposed [5, 7] view of a [7, 5] buffer.
static void test_v2_strided(void) {
    test_rng r;
    test_rng_seed(&r, 12);
    int64_t n = 35, dims[2] = {5, 7}, strides[2] = {1, 5}, sdims[1] = {35};
    state s = state_new(n, ACL_FLOAT, ACL_FLOAT, &r);
    aclTensor *tv[5];
    void *b[] = {s.p, s.g, s.m, s.v, s.x};
    for (int k = 0; k < 5; k++)
        tv[k] = aclCreateTensor(dims, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, sdims, 1, b[k]);
    void *sb;
    aclTensor *st = step_tensor(ACL_INT64, 4, &sb);
    adam_cfg c = {1e-2, 0.9, 0.999, 0.1, 1e-8, true, false, 0};
    aclnnStatus rc;
    OP_RUN(rc,
           aclnnApplyAdamWV2GetWorkspaceSize(tv[0], tv[2], tv[3], tv[4], tv[1], st, (float)c.lr,
                                             (float)c.beta1, (float)c.beta2, (float)c.wd,
                                             (float)c.eps, true, false, &ws_, &ex_),
           aclnnApplyAdamWV2);
    CHECK_EQ(rc, ACLNN_SUCCESS);
    adam_cfg cf = as_float(c);
    // elementwise: a view's element order does not change any element's result
    CHECK(adam_compare(&s, &cf, 4, "v2 strided") == 0);
    for (int k = 0; k < 5; k++) aclDestroyTensor(tv[k]);
    aclDestroyTensor(st);
    aclrtFree(sb);
    state_free(&s);
}

static void test_v2_status(void) {
    test_rng r;
    test_rng_seed(&r, 13);
    state s = state_new(6, ACL_FLOAT, ACL_FLOAT, &r);
    void *sb;
    aclTensor *st = step_tensor(ACL_INT64, 1, &sb);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
#define V2(var, m, v, x, g, step, lr, ams)                                                         \
    aclnnApplyAdamWV2GetWorkspaceSize(var, m, v, x, g, step, lr, 0.9f, 0.999f, 0.01f, 1e-8f, ams,  \
                                      false, &ws, &ex)
    CHECK_EQ(V2(NULL, s.tm, s.tv, NULL, s.tg, st, 1e-3f, false), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("varRef");
    CHECK_EQ(V2(s.tp, s.tm, s.tv, NULL, s.tg, NULL, 1e-3f, false), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("step");
    CHECK_EQ(V2(s.tp, s.tm, s.tv, NULL, s.tg, st, 1e-3f, true), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("maxGradNormOptionalRef");
    // amsgrad off: maxGradNorm is not read
    CHECK_EQ(V2(s.tp, s.tm, s.tv, NULL, s.tg, st, 1e-3f, false), ACLNN_SUCCESS);
    aclDestroyAclOpExecutor(ex);
    CHECK_EQ(V2(s.tp, s.tm, s.tv, NULL, s.tg, st, -1e-3f, false), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("lr");
    // dtypes: int var; a 16-bit var with another grad dtype; mixed m
    int64_t n6 = 6, n5 = 5, n2 = 2;
    void *ib = test_dev_alloc(64), *hb = test_dev_alloc(64), *sb2 = test_dev_alloc(16);
    aclTensor *ti = test_tensor(&n6, 1, ACL_INT32, ib), *th = test_tensor(&n6, 1, ACL_FLOAT16, hb),
              *tb = test_tensor(&n6, 1, ACL_BF16, hb), *t5 = test_tensor(&n5, 1, ACL_FLOAT, ib),
              *s2 = test_tensor(&n2, 1, ACL_INT64, sb2), *si = test_tensor(&n2, 1, ACL_INT32, sb2);
    CHECK_EQ(V2(ti, s.tm, s.tv, NULL, s.tg, st, 1e-3f, false), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("varRef");
    CHECK_EQ(V2(s.tp, s.tm, s.tv, NULL, ti, st, 1e-3f, false), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("grad");
    CHECK_EQ(V2(th, s.tm, s.tv, NULL, tb, st, 1e-3f, false), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("grad");
    CHECK_EQ(V2(s.tp, th, s.tv, NULL, s.tg, st, 1e-3f, false), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("mRef");
    // shapes
    CHECK_EQ(V2(s.tp, s.tm, s.tv, NULL, t5, st, 1e-3f, false), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("grad");
    CHECK_EQ(V2(s.tp, s.tm, t5, NULL, s.tg, st, 1e-3f, false), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("vRef");
    CHECK_EQ(V2(s.tp, s.tm, s.tv, t5, s.tg, st, 1e-3f, true), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("maxGradNormOptionalRef");
    // step: one element, INT64 or FLOAT
    CHECK_EQ(V2(s.tp, s.tm, s.tv, NULL, s.tg, s2, 1e-3f, false), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("step");
    CHECK_EQ(V2(s.tp, s.tm, s.tv, NULL, s.tg, si, 1e-3f, false), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("step");
    // shared memory: m is var
    CHECK_EQ(V2(s.tp, s.tp, s.tv, NULL, s.tg, st, 1e-3f, false), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("mRef");
    // amsgrad off: maxGradNorm is not read, but its view must fit its block (a fuzz finding)
    int64_t n32 = 32;
    aclTensor *big = test_tensor(&n32, 1, ACL_FLOAT, ib); // 128 bytes over a 64-byte block
    CHECK_EQ(V2(s.tp, s.tm, s.tv, big, s.tg, st, 1e-3f, false), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("maxGradNormOptionalRef");
    aclDestroyTensor(big);
#undef V2
    aclTensor *t[] = {ti, th, tb, t5, s2, si, st};
    for (int k = 0; k < 7; k++) aclDestroyTensor(t[k]);
    aclrtFree(ib), aclrtFree(hb), aclrtFree(sb2), aclrtFree(sb);
    state_free(&s);
}

// ---- FusedAdamw ----------------------------------------------------------------------------

#define NT 6
static const int64_t list_sizes[NT] = {17, 0, 1, 4096 * 2 + 9, 8, 1000};

typedef struct adam_lists {
    state s[NT];
    aclTensor *steps[NT];
    void *step_buf[NT];
    double step[NT];
    aclTensorList *lp, *lg, *lm, *lv, *lx, *ls;
} adam_lists;

static aclTensorList *list_of(aclTensor *const *src, int n) {
    // a list owns its tensors: give it aliases of ours
    aclTensor *t[NT];
    for (int i = 0; i < n; i++)
        t[i] = aclCreateTensor(src[i]->dims, (uint64_t)src[i]->ndim, src[i]->dtype, src[i]->strides,
                               src[i]->offset, ACL_FORMAT_ND, src[i]->dims, (uint64_t)src[i]->ndim,
                               src[i]->data);
    return aclCreateTensorList((const aclTensor *const *)t, (uint64_t)n);
}

static void lists_new(adam_lists *L, aclDataType dt, aclDataType sdt, test_rng *r) {
    aclTensor *tp[NT], *tg[NT], *tm[NT], *tv[NT], *tx[NT];
    for (int i = 0; i < NT; i++) {
        L->s[i] = state_new(list_sizes[i], dt, dt, r);
        L->step[i] = (double)(i * 3);
        L->steps[i] = step_tensor(sdt, L->step[i], &L->step_buf[i]);
        tp[i] = L->s[i].tp, tg[i] = L->s[i].tg, tm[i] = L->s[i].tm, tv[i] = L->s[i].tv;
        tx[i] = L->s[i].tx;
    }
    L->lp = list_of(tp, NT), L->lg = list_of(tg, NT), L->lm = list_of(tm, NT);
    L->lv = list_of(tv, NT), L->lx = list_of(tx, NT), L->ls = list_of(L->steps, NT);
}

static void lists_free(adam_lists *L) {
    aclTensorList *l[] = {L->lp, L->lg, L->lm, L->lv, L->lx, L->ls};
    for (int k = 0; k < 6; k++) aclDestroyTensorList(l[k]);
    for (int i = 0; i < NT; i++) {
        state_free(&L->s[i]);
        aclDestroyTensor(L->steps[i]);
        aclrtFree(L->step_buf[i]);
    }
}

static aclnnStatus run_fused(adam_lists *L, const adam_cfg *c, aclTensor *scale, aclTensor *inf) {
    aclnnStatus st;
    OP_RUN(st,
           aclnnFusedAdamwGetWorkspaceSize(L->lp, L->lg, L->lm, L->lv, c->amsgrad ? L->lx : NULL,
                                           L->ls, scale, inf, c->lr, c->beta1, c->beta2, c->wd,
                                           c->eps, c->amsgrad, c->maximize, &ws_, &ex_),
           aclnnFusedAdamw);
    return st;
}

static void test_fused_adamw_values(void) {
    test_rng r;
    test_rng_seed(&r, 21);
    const adam_cfg cfgs[] = {
        {1e-3, 0.9, 0.999, 0.01, 1e-8, false, false, 0},
        {2e-2, 0.85, 0.995, 0.1, 1e-3, true, true, 3},
        {1e-2, 0.9, 0.999, 0, 1e-6, true, false, 1024},
    };
    const aclDataType dts[] = {ACL_FLOAT, ACL_BF16, ACL_FLOAT16};
    for (size_t d = 0; d < 3; d++)
        for (size_t k = 0; k < sizeof cfgs / sizeof *cfgs; k++) {
            adam_lists L;
            lists_new(&L, dts[d], k % 2 ? ACL_FLOAT : ACL_INT64, &r);
            adam_cfg c = cfgs[k];
            void *sb = NULL, *ib = NULL;
            aclTensor *scale = c.scale != 0 ? flag_tensor((float)c.scale, &sb) : NULL;
            aclTensor *inf = k == 1 ? flag_tensor(0, &ib) : NULL; // 0: the step runs
            CHECK_EQ(run_fused(&L, &c, scale, inf), ACLNN_SUCCESS);
            for (int i = 0; i < NT; i++) {
                char what[96];
                snprintf(what, sizeof what, "fused %s cfg %zu tensor %d", og_dtype_name(dts[d]), k,
                         i);
                CHECKF(adam_compare(&L.s[i], &c, L.step[i], what) == 0, "%s", what);
                CHECK(k % 2 ? *(float *)L.step_buf[i] == (float)L.step[i]
                            : *(int64_t *)L.step_buf[i] == (int64_t)L.step[i]);
            }
            if (scale) aclDestroyTensor(scale), aclrtFree(sb);
            if (inf) aclDestroyTensor(inf), aclrtFree(ib);
            lists_free(&L);
        }
}

// foundInf = 1: nothing is written, bit for bit.
static void test_fused_adamw_found_inf(void) {
    test_rng r;
    test_rng_seed(&r, 22);
    adam_lists L;
    lists_new(&L, ACL_FLOAT, ACL_INT64, &r);
    void *ib, *sb;
    aclTensor *inf = flag_tensor(1, &ib), *scale = flag_tensor(2, &sb);
    adam_cfg c = {1e-2, 0.9, 0.999, 0.01, 1e-8, true, false, 2};
    CHECK_EQ(run_fused(&L, &c, scale, inf), ACLNN_SUCCESS);
    for (int i = 0; i < NT; i++) {
        const state *s = &L.s[i];
        for (int64_t j = 0; j < s->n; j++) {
            CHECK(test_load(s->p, j, ACL_FLOAT) == s->p0[j]);
            CHECK(test_load(s->m, j, ACL_FLOAT) == s->m0[j]);
            CHECK(test_load(s->v, j, ACL_FLOAT) == s->v0[j]);
            CHECK(test_load(s->x, j, ACL_FLOAT) == s->x0[j]);
            CHECK(test_load(s->g, j, ACL_FLOAT) == s->g0[j]);
        }
    }
    aclDestroyTensor(inf), aclDestroyTensor(scale);
    aclrtFree(ib), aclrtFree(sb);
    lists_free(&L);
}

// 1 vs 2 threads and every ISA level: bitwise equal.
static void test_fused_adamw_determinism(void) {
    const int64_t n = 3 * 4096 + 77;
    float *ref[4] = {0};
    int threads0 = opgrad_get_num_threads();
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
        if (!test_isa_available(isa)) continue;
        for (int th = 1; th <= 2; th++) {
            opgrad_set_max_isa((opgrad_isa)isa);
            opgrad_set_num_threads(th);
            test_rng r;
            test_rng_seed(&r, 23);
            state s = state_new(n, ACL_FLOAT, ACL_FLOAT, &r);
            void *sb;
            aclTensor *st = step_tensor(ACL_INT64, 5, &sb);
            aclTensor *a[] = {s.tp, s.tg, s.tm, s.tv, s.tx, st};
            aclTensorList *l[6];
            for (int k = 0; k < 6; k++) l[k] = list_of(&a[k], 1);
            aclnnStatus rc;
            OP_RUN(rc,
                   aclnnFusedAdamwGetWorkspaceSize(l[0], l[1], l[2], l[3], l[4], l[5], NULL, NULL,
                                                   1e-3, 0.9, 0.999, 0.01, 1e-8, true, false, &ws_,
                                                   &ex_),
                   aclnnFusedAdamw);
            CHECK_EQ(rc, ACLNN_SUCCESS);
            void *out[4] = {s.p, s.m, s.v, s.x};
            for (int k = 0; k < 4; k++) {
                if (!ref[k]) {
                    ref[k] = malloc((size_t)n * 4);
                    memcpy(ref[k], out[k], (size_t)n * 4);
                } else {
                    CHECKF(memcmp(ref[k], out[k], (size_t)n * 4) == 0,
                           "isa %d threads %d: tensor %d differs", isa, th, k);
                }
            }
            for (int k = 0; k < 6; k++) aclDestroyTensorList(l[k]);
            aclDestroyTensor(st);
            aclrtFree(sb);
            state_free(&s);
        }
    }
    opgrad_set_max_isa(OPGRAD_ISA_AMX);
    opgrad_set_num_threads(threads0);
    for (int k = 0; k < 4; k++) free(ref[k]);
}

static void test_fused_adamw_status(void) {
    test_rng r;
    test_rng_seed(&r, 24);
    adam_lists L;
    lists_new(&L, ACL_FLOAT, ACL_INT64, &r);
    uint64_t ws;
    aclOpExecutor *ex;
#define FA(p, g, m, v, x, s, lr, ams)                                                              \
    aclnnFusedAdamwGetWorkspaceSize(p, g, m, v, x, s, NULL, NULL, lr, 0.9, 0.999, 0.01, 1e-8, ams, \
                                    false, &ws, &ex)
    CHECK_EQ(FA(NULL, L.lg, L.lm, L.lv, NULL, L.ls, 1e-3, false), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("paramsRef");
    CHECK_EQ(FA(L.lp, L.lg, L.lm, L.lv, NULL, NULL, 1e-3, false), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("stateSteps");
    CHECK_EQ(FA(L.lp, L.lg, L.lm, L.lv, NULL, L.ls, 1e-3, true), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("maxExpAvgSqsRef");
    CHECK_EQ(FA(L.lp, L.lg, L.lm, L.lv, NULL, L.ls, -1, false), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("lr");
    // lengths: a shorter grads list; an empty paramsRef
    aclTensorList *empty = aclCreateTensorList(NULL, 0);
    CHECK_EQ(FA(empty, empty, empty, empty, NULL, empty, 1e-3, false), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("empty");
    aclTensor *g2[2] = {L.s[0].tg, L.s[1].tg};
    aclTensorList *short_g = list_of(g2, 2);
    CHECK_EQ(FA(L.lp, short_g, L.lm, L.lv, NULL, L.ls, 1e-3, false), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("grads");
    // shapes and dtypes: grads in another order (tensor 0 gets tensor 2's shape)
    aclTensor *gs[NT];
    for (int i = 0; i < NT; i++) gs[i] = L.s[i].tg;
    gs[0] = L.s[2].tg, gs[2] = L.s[0].tg;
    aclTensorList *swapped = list_of(gs, NT);
    CHECK_EQ(FA(L.lp, swapped, L.lm, L.lv, NULL, L.ls, 1e-3, false), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("grads[0]");
    int64_t n17 = 17;
    void *hb = test_dev_alloc(64);
    gs[0] = test_tensor(&n17, 1, ACL_BF16, hb), gs[2] = L.s[2].tg;
    aclTensorList *mixed = list_of(gs, NT);
    CHECK_EQ(FA(L.lp, mixed, L.lm, L.lv, NULL, L.ls, 1e-3, false), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("grads[0]");
    // steps: one dtype
    aclTensor *ss[NT];
    for (int i = 0; i < NT; i++) ss[i] = L.steps[i];
    void *fb;
    ss[3] = step_tensor(ACL_FLOAT, 1, &fb);
    aclTensorList *mixed_steps = list_of(ss, NT);
    CHECK_EQ(FA(L.lp, L.lg, L.lm, L.lv, NULL, mixed_steps, 1e-3, false), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("stateSteps[3]");
    // an empty parameter with no address (a framework's empty tensor) is accepted and skipped
    {
        int64_t z = 0;
        aclTensor *e[5];
        for (int k = 0; k < 5; k++) e[k] = test_tensor(&z, 1, ACL_FLOAT, NULL);
        void *sb0;
        aclTensor *s0 = step_tensor(ACL_INT64, 0, &sb0);
        aclTensorList *el[6];
        for (int k = 0; k < 5; k++) el[k] = list_of(&e[k], 1);
        el[5] = list_of(&s0, 1);
        aclnnStatus rc;
        OP_RUN(rc,
               aclnnFusedAdamwGetWorkspaceSize(el[0], el[1], el[2], el[3], el[4], el[5], NULL, NULL,
                                               1e-3, 0.9, 0.999, 0.01, 1e-8, true, false, &ws_,
                                               &ex_),
               aclnnFusedAdamw);
        CHECK_EQ(rc, ACLNN_SUCCESS);
        for (int k = 0; k < 6; k++) aclDestroyTensorList(el[k]);
        for (int k = 0; k < 5; k++) aclDestroyTensor(e[k]);
        aclDestroyTensor(s0);
        aclrtFree(sb0);
    }
    // paramsRef and expAvgsRef sharing memory
    CHECK_EQ(FA(L.lp, L.lg, L.lp, L.lv, NULL, L.ls, 1e-3, false), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("share memory");
#undef FA
    aclDestroyTensorList(empty), aclDestroyTensorList(short_g), aclDestroyTensorList(swapped);
    aclDestroyTensorList(mixed), aclDestroyTensorList(mixed_steps);
    aclDestroyTensor(gs[0]), aclDestroyTensor(ss[3]);
    aclrtFree(hb), aclrtFree(fb);
    lists_free(&L);
}

// ---- FusedSgd ------------------------------------------------------------------------------

typedef struct sgd_cfg {
    double lr, momentum, dampening, wd;
    bool nesterov, maximize, first;
    double scale;
} sgd_cfg;

static void sgd_ref(const sgd_cfg *c, double p, double g, double b, double *po, double *go,
                    double *bo, double *pmag, double *bmag) {
    if (c->scale != 0) g /= c->scale;
    *go = g;
    double d = (c->maximize ? -g : g) + c->wd * p, dm = fabs(g) + c->wd * fabs(p);
    double b1 = b, bm = fabs(b);
    if (c->momentum != 0) {
        if (c->first)
            b1 = d, bm = dm;
        else
            b1 = c->momentum * b + (1 - c->dampening) * d,
            bm = c->momentum * fabs(b) + (1 - c->dampening) * dm;
        if (c->nesterov)
            d = d + c->momentum * b1, dm = dm + c->momentum * bm;
        else
            d = b1, dm = bm;
    }
    *po = p - c->lr * d, *pmag = fabs(p) + c->lr * dm;
    *bo = b1, *bmag = bm;
}

static void test_fused_sgd_values(void) {
    test_rng r;
    test_rng_seed(&r, 31);
    const sgd_cfg cfgs[] = {
        {0.1, 0, 0, 0, false, false, false, 0},         // plain
        {0.05, 0.9, 0.1, 0.01, false, false, false, 0}, // momentum, dampening, decay
        {0.05, 0.9, 0.1, 0.01, false, true, true, 8},   // first step, maximize, gradScale 8
        {0.1, 0.5, 0, 0.2, true, false, false, 3},      // nesterov, gradScale 3
    };
    const aclDataType dts[] = {ACL_FLOAT, ACL_BF16, ACL_FLOAT16};
    for (size_t d = 0; d < 3; d++)
        for (size_t k = 0; k < sizeof cfgs / sizeof *cfgs; k++) {
            sgd_cfg c = cfgs[k];
            // FusedSgd takes floats
            c.lr = (float)c.lr, c.momentum = (float)c.momentum, c.dampening = (float)c.dampening;
            c.wd = (float)c.wd;
            state s[NT];
            aclTensor *tp[NT], *tg[NT], *tb[NT];
            for (int i = 0; i < NT; i++) {
                s[i] = state_new(list_sizes[i], dts[d], dts[d], &r);
                tp[i] = s[i].tp, tg[i] = s[i].tg, tb[i] = s[i].tm; // m as the momentum buffer
            }
            aclTensorList *lp = list_of(tp, NT), *lg = list_of(tg, NT),
                          *lb = c.momentum != 0 ? list_of(tb, NT) : NULL;
            void *sb = NULL;
            aclTensor *scale = c.scale != 0 ? flag_tensor((float)c.scale, &sb) : NULL;
            aclnnStatus st;
            OP_RUN(st,
                   aclnnFusedSgdGetWorkspaceSize(lp, lg, lb, scale, (float)c.wd, (float)c.momentum,
                                                 (float)c.lr, (float)c.dampening, c.nesterov,
                                                 c.maximize, c.first, &ws_, &ex_),
                   aclnnFusedSgd);
            CHECK_EQ(st, ACLNN_SUCCESS);
            for (int i = 0; i < NT; i++) {
                int64_t bad = 0;
                for (int64_t j = 0; j < s[i].n; j++) {
                    double po, go, bo, pm, bm;
                    sgd_ref(&c, s[i].p0[j], s[i].g0[j], c.momentum != 0 ? s[i].m0[j] : 0, &po, &go,
                            &bo, &pm, &bm);
                    double p = test_load(s[i].p, j, dts[d]), g = test_load(s[i].g, j, dts[d]),
                           b = test_load(s[i].m, j, dts[d]);
                    bool ok = within(dts[d], p, po, pm) &&
                              (c.scale != 0 ? within(dts[d], g, go, fabs(go)) : g == s[i].g0[j]) &&
                              (c.momentum == 0 ? b == s[i].m0[j] : within(dts[d], b, bo, bm));
                    if (!ok && bad++ < 3)
                        fprintf(stderr,
                                "    sgd %s cfg %zu [%d][%lld]: p %.9g/%.9g g %.9g/%.9g "
                                "b %.9g/%.9g\n",
                                og_dtype_name(dts[d]), k, i, (long long)j, p, po, g, go, b, bo);
                }
                CHECKF(bad == 0, "sgd %s cfg %zu tensor %d: %lld bad", og_dtype_name(dts[d]), k, i,
                       (long long)bad);
            }
            aclDestroyTensorList(lp), aclDestroyTensorList(lg);
            if (lb) aclDestroyTensorList(lb);
            if (scale) aclDestroyTensor(scale), aclrtFree(sb);
            for (int i = 0; i < NT; i++) state_free(&s[i]);
        }
}

static void test_fused_sgd_status(void) {
    test_rng r;
    test_rng_seed(&r, 32);
    state s = state_new(5, ACL_FLOAT, ACL_FLOAT, &r);
    aclTensor *a[] = {s.tp, s.tg, s.tm};
    aclTensorList *lp = list_of(&a[0], 1), *lg = list_of(&a[1], 1), *lb = list_of(&a[2], 1);
    aclTensorList *empty = aclCreateTensorList(NULL, 0);
    uint64_t ws;
    aclOpExecutor *ex;
#define SGD(p, g, b, mom, damp, nest)                                                              \
    aclnnFusedSgdGetWorkspaceSize(p, g, b, NULL, 0.01f, mom, 0.1f, damp, nest, false, false, &ws,  \
                                  &ex)
    CHECK_EQ(SGD(NULL, lg, lb, 0.9f, 0, false), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("paramsRef");
    CHECK_EQ(SGD(lp, lg, NULL, 0.9f, 0, false), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("momentum");
    CHECK_EQ(SGD(lp, lg, lb, 0, 0, false), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("momentum");
    CHECK_EQ(SGD(lp, lg, lb, 0.9f, 0.1f, true), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("nesterov");
    CHECK_EQ(SGD(empty, empty, NULL, 0, 0, false), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("empty");
    // an empty buffer list is no list: momentum must then be 0
    CHECK_EQ(SGD(lp, lg, empty, 0, 0, false), ACLNN_SUCCESS);
    aclDestroyAclOpExecutor(ex);
    CHECK_EQ(SGD(lp, lp, NULL, 0, 0, false), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("share memory");
#undef SGD
    aclDestroyTensorList(lp), aclDestroyTensorList(lg), aclDestroyTensorList(lb);
    aclDestroyTensorList(empty);
    state_free(&s);
}

// ---- ApplyAdamW ----------------------------------------------------------------------------

// Hyperparameters as one-element tensors of dt; beta^t = betaPower * beta. maxGradNorm is read
// (amsgrad), never written; vRef gets the new v, not the maximum (upstream's kernel).
static void test_v1_values(void) {
    test_rng r;
    test_rng_seed(&r, 41);
    const aclDataType dts[] = {ACL_FLOAT, ACL_BF16, ACL_FLOAT16};
    // exact in every dtype: lr 2^-7, wd 2^-5, beta1 7/8, beta2 63/64, eps 2^-10, powers
    // 49/64 and 31/32
    const double hv[7] = {0.765625, 0.96875, 0x1p-7, 0x1p-5, 0.875, 0.984375, 0x1p-10};
    for (size_t d = 0; d < 3; d++)
        for (int ams = 0; ams < 2; ams++) {
            state s = state_new(4096 + 29, dts[d], dts[d], &r);
            aclTensor *h[7];
            void *hb[7];
            int64_t one = 1;
            for (int k = 0; k < 7; k++) {
                hb[k] = test_dev_alloc(8);
                test_store(hb[k], 0, dts[d], hv[k]);
                h[k] = test_tensor(&one, 1, dts[d], hb[k]);
            }
            aclnnStatus st;
            OP_RUN(st,
                   aclnnApplyAdamWGetWorkspaceSize(s.tp, s.tm, s.tv, h[0], h[1], h[2], h[3], h[4],
                                                   h[5], h[6], s.tg, ams ? s.tx : NULL, ams,
                                                   ams != 0, &ws_, &ex_),
                   aclnnApplyAdamW);
            CHECK_EQ(st, ACLNN_SUCCESS);
            int64_t bad = 0;
            for (int64_t i = 0; i < s.n; i++) {
                double g = ams ? -s.g0[i] : s.g0[i], b1 = hv[4], b2 = hv[5], lr = hv[2];
                double p1 = s.p0[i] * (1 - lr * hv[3]);
                double m = b1 * s.m0[i] + (1 - b1) * g,
                       mm = fabs(b1 * s.m0[i]) + fabs((1 - b1) * g);
                double v = b2 * s.v0[i] + (1 - b2) * g * g;
                double vh = ams && s.x0[i] > v ? s.x0[i] : v;
                double denom = sqrt(vh) / sqrt(1 - hv[1] * b2) + hv[6], ss = lr / (1 - hv[0] * b1);
                double p = p1 - ss * m / denom, pm = fabs(p1) + ss * mm / denom;
                bool ok = within(dts[d], test_load(s.p, i, dts[d]), p, pm) &&
                          within(dts[d], test_load(s.m, i, dts[d]), m, mm) &&
                          within(dts[d], test_load(s.v, i, dts[d]), v, v) &&
                          test_load(s.x, i, dts[d]) == s.x0[i];
                if (!ok && bad++ < 3)
                    fprintf(stderr, "    v1 %s ams %d [%lld]: p %.9g want %.9g\n",
                            og_dtype_name(dts[d]), ams, (long long)i, test_load(s.p, i, dts[d]), p);
            }
            CHECKF(bad == 0, "v1 %s ams %d: %lld bad", og_dtype_name(dts[d]), ams, (long long)bad);
            for (int k = 0; k < 7; k++) aclDestroyTensor(h[k]), aclrtFree(hb[k]);
            state_free(&s);
        }
}

static void test_v1_status(void) {
    test_rng r;
    test_rng_seed(&r, 42);
    state s = state_new(4, ACL_FLOAT, ACL_FLOAT, &r);
    aclTensor *h[7];
    void *hb = test_dev_alloc(64);
    int64_t one = 1, two = 2;
    for (int k = 0; k < 7; k++) h[k] = test_tensor(&one, 1, ACL_FLOAT, (float *)hb + k);
    aclTensor *h2 = test_tensor(&two, 1, ACL_FLOAT, hb), *hh = test_tensor(&one, 1, ACL_BF16, hb);
    uint64_t ws;
    aclOpExecutor *ex;
#define V1(lr_, ams)                                                                               \
    aclnnApplyAdamWGetWorkspaceSize(s.tp, s.tm, s.tv, h[0], h[1], lr_, h[3], h[4], h[5], h[6],     \
                                    s.tg, NULL, ams, false, &ws, &ex)
    CHECK_EQ(V1(NULL, false), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("lr");
    CHECK_EQ(V1(h[2], true), ACLNN_ERR_PARAM_NULLPTR);
    CHECK_MSG("maxGradNormOptional");
    CHECK_EQ(V1(h2, false), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("lr");
    CHECK_EQ(V1(hh, false), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("lr");
    // amsgrad off: maxGradNorm is not read, but its view must fit its block
    int64_t n32 = 32;
    aclTensor *big = test_tensor(&n32, 1, ACL_FLOAT, hb); // 128 bytes over a 64-byte block
    CHECK_EQ(aclnnApplyAdamWGetWorkspaceSize(s.tp, s.tm, s.tv, h[0], h[1], h[2], h[3], h[4], h[5],
                                             h[6], s.tg, big, false, false, &ws, &ex),
             ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("maxGradNormOptional");
    aclDestroyTensor(big);
#undef V1
    for (int k = 0; k < 7; k++) aclDestroyTensor(h[k]);
    aclDestroyTensor(h2), aclDestroyTensor(hh);
    aclrtFree(hb);
    state_free(&s);
}

// A repeatable executor serves every training step: the step counters, gradScale and foundInf
// are read at each launch (the caller increments the steps between launches).
static void test_fused_adamw_repeatable(void) {
    test_rng r;
    test_rng_seed(&r, 25);
    adam_lists L;
    lists_new(&L, ACL_FLOAT, ACL_INT64, &r);
    void *ib;
    aclTensor *inf = flag_tensor(0, &ib);
    adam_cfg c = {1e-2, 0.9, 0.999, 0.01, 1e-8, true, false, 0};
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    CHECK_EQ(aclnnFusedAdamwGetWorkspaceSize(L.lp, L.lg, L.lm, L.lv, L.lx, L.ls, NULL, inf, c.lr,
                                             c.beta1, c.beta2, c.wd, c.eps, true, false, &ws, &ex),
             ACLNN_SUCCESS);
    CHECK_EQ(aclSetAclOpExecutorRepeatable(ex), ACLNN_SUCCESS);
    void *w = ws ? test_dev_alloc(ws) : NULL;
    for (int launch = 0; launch < 3; launch++) {
        if (launch == 2) { // foundInf: this launch must change nothing
            float one = 1;
            memcpy(ib, &one, 4);
        }
        CHECK_EQ(aclnnFusedAdamw(w, ws, ex, NULL), ACLNN_SUCCESS);
        for (int i = 0; i < NT; i++) {
            state *s = &L.s[i];
            if (launch < 2) {
                char what[64];
                snprintf(what, sizeof what, "launch %d tensor %d", launch, i);
                CHECKF(adam_compare(s, &c, L.step[i], what) == 0, "%s", what);
            }
            if (launch == 2) // skipped: still launch 1's results
                for (int64_t j = 0; j < s->n; j++)
                    CHECK(test_load(s->p, j, ACL_FLOAT) == s->p0[j] &&
                          test_load(s->m, j, ACL_FLOAT) == s->m0[j] &&
                          test_load(s->v, j, ACL_FLOAT) == s->v0[j] &&
                          test_load(s->x, j, ACL_FLOAT) == s->x0[j]);
            // the next launch starts from these values, one step later (the caller's increment)
            for (int64_t j = 0; j < s->n; j++) {
                s->p0[j] = test_load(s->p, j, ACL_FLOAT), s->m0[j] = test_load(s->m, j, ACL_FLOAT);
                s->v0[j] = test_load(s->v, j, ACL_FLOAT), s->x0[j] = test_load(s->x, j, ACL_FLOAT);
            }
            if (launch < 2) {
                L.step[i] += 1;
                int64_t st = (int64_t)L.step[i];
                memcpy(L.step_buf[i], &st, 8);
            }
        }
    }
    aclDestroyAclOpExecutor(ex);
    if (w) aclrtFree(w);
    aclDestroyTensor(inf);
    aclrtFree(ib);
    lists_free(&L);
}

int main(void) {
    RUN(test_v2_hand);
    RUN(test_v2_values);
    RUN(test_v2_strided);
    RUN(test_v2_status);
    RUN(test_fused_adamw_values);
    RUN(test_fused_adamw_found_inf);
    RUN(test_fused_adamw_determinism);
    RUN(test_fused_adamw_repeatable);
    RUN(test_fused_adamw_status);
    RUN(test_fused_sgd_values);
    RUN(test_fused_sgd_status);
    RUN(test_v1_values);
    RUN(test_v1_status);
    return test_summary();
}
