/* Every operator of the list (src/ops/ops.inc), through its phase-1 thunk, so that an operator
 * added to the list is covered here by construction:
 *  - the descriptor: name, family, kind, parameter count and kinds parse, a forward's backward
 *    operator exists and is a backward, opgrad_op_get agrees;
 *  - NULL workspaceSize / executor -> 161001 naming them; each pointer argument NULL in turn ->
 *    161001 naming that parameter (the others valid), but an optional tensor (T(name, NULL) or
 *    O(name, NULL) in the list), for which NULL is a valid argument;
 *  - a tensor of rank 9 in each tensor parameter in turn (a tensor list's last entry for a list)
 *    -> 161002 (never a crash), and a uint16 tensor (a dtype no aclnn operator here takes;
 *    several take int32) -> 161002 naming the dtype (for the operators the otherwise valid
 *    arguments suit);
 *  - a foreign pointer (memory no create function returned) or an object of another kind in each
 *    tensor / scalar / array parameter in turn -> 161002 naming the parameter (looked up in the
 *    object registry, never read);
 *  - a view larger than the aclrtMalloc block it starts at, in each tensor parameter (or as a
 *    list's entry) -> 161002;
 *  - two outputs in one place (one tensor twice, or two tensors over one buffer) -> 161002;
 *  - phase 2 refuses an executor planned by another operator. */
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "opgrad/opgrad.h"
#include "ops/ops.h"
#include "tensor/tensor.h"
#include "test.h"
#include "testutil.h"

enum { MAXARGS = 16, LIST_LEN = 2 };

static bool is_tensor(og_param_kind k) {
    return k == OG_PARAM_TENSOR || k == OG_PARAM_GRAD || k == OG_PARAM_RESULT ||
           k == OG_PARAM_OUT || k == OG_PARAM_REF;
}
static bool is_pointer(og_param_kind k) {
    return is_tensor(k) || og_param_is_list(k) || k == OG_PARAM_SCALAR || k == OG_PARAM_STRING ||
           k == OG_PARAM_INT_ARRAY || k == OG_PARAM_BOOL_ARRAY;
}
// A tensor or an int array the list marks optional: NULL is a valid argument.
static bool is_optional(const og_param *p) {
    return (is_tensor(p->kind) || og_param_is_list(p->kind) || p->kind == OG_PARAM_INT_ARRAY) &&
           !strcmp(p->def, "NULL");
}

// Valid-looking arguments: fp32 [4,6] tensors over one shared buffer each, tensor lists of two
// such tensors, scalars 1, the list's defaults for the other kinds, dims {-1}, dtype float32.
// rank9_at / uint16_at make that tensor (or a list's second tensor) rank 9 / uint16.
typedef struct args {
    og_arg a[MAXARGS];
    og_param p[MAXARGS];
    int n;
    float *bufs[MAXARGS], *list_bufs[MAXARGS][LIST_LEN];
    aclScalar *scalars[MAXARGS];
    aclIntArray *arrays[MAXARGS];
    aclBoolArray *bools[MAXARGS];
    char strings[MAXARGS][32];
} args;

static void make_args(const og_opdesc *op, args *g, int rank9_at, int uint16_at) {
    memset(g, 0, sizeof *g);
    int64_t d2[2] = {4, 6}, d9[9] = {1, 1, 1, 1, 1, 1, 1, 4, 6}, minus1 = -1;
    for (int i = 0; og_opdesc_param(op, i, &g->p[i]) && i < MAXARGS; i++, g->n++) {
        og_param_kind k = g->p[i].kind;
        if (is_tensor(k)) {
            g->bufs[i] = test_dev_alloc(24 * 4);
            aclDataType dt = i == uint16_at ? ACL_UINT16 : ACL_FLOAT;
            g->a[i].t = i == rank9_at ? test_tensor(d9, 9, dt, g->bufs[i])
                                      : test_tensor(d2, 2, dt, g->bufs[i]);
        } else if (og_param_is_list(k)) {
            aclTensor *ts[LIST_LEN];
            for (int j = 0; j < LIST_LEN; j++) {
                bool odd = j == LIST_LEN - 1;
                g->list_bufs[i][j] = test_dev_alloc(24 * 4);
                ts[j] =
                    test_tensor(odd && i == rank9_at ? d9 : d2, odd && i == rank9_at ? 9 : 2,
                                odd && i == uint16_at ? ACL_UINT16 : ACL_FLOAT, g->list_bufs[i][j]);
            }
            g->a[i].tl = aclCreateTensorList((const aclTensor *const *)ts, LIST_LEN);
        } else if (k == OG_PARAM_FLOAT) {
            g->a[i].f = g->p[i].def[0] ? (float)atof(g->p[i].def) : 0;
        } else if (k == OG_PARAM_SCALAR) {
            float one = 1.0f;
            g->scalars[i] = aclCreateScalar(&one, ACL_FLOAT);
            g->a[i].s = g->scalars[i];
        } else if (k == OG_PARAM_INT || k == OG_PARAM_INT8) {
            long long v = g->p[i].def[0] ? atoll(g->p[i].def) : 0;
            if (k == OG_PARAM_INT)
                g->a[i].i = v;
            else
                g->a[i].i8 = (int8_t)v;
        } else if (k == OG_PARAM_BOOL) {
            g->a[i].b = !strcmp(g->p[i].def, "true");
        } else if (k == OG_PARAM_DOUBLE) {
            g->a[i].d = g->p[i].def[0] ? atof(g->p[i].def) : 0;
        } else if (k == OG_PARAM_STRING) {
            strcpy(g->strings[i], g->p[i].def[0] ? g->p[i].def : "none");
            g->a[i].c = g->strings[i];
        } else if (k == OG_PARAM_INT_ARRAY) {
            g->arrays[i] = aclCreateIntArray(&minus1, 1);
            g->a[i].a = g->arrays[i];
        } else if (k == OG_PARAM_DTYPE) {
            g->a[i].dtype = ACL_FLOAT;
        } else if (k == OG_PARAM_BOOL_ARRAY) {
            bool all[3] = {true, true, true};
            g->bools[i] = aclCreateBoolArray(all, 3);
            g->a[i].ba = g->bools[i];
        }
    }
}

static void free_args(args *g) {
    for (int i = 0; i < g->n; i++) {
        if (is_tensor(g->p[i].kind) && g->a[i].t) aclDestroyTensor(g->a[i].t);
        if (og_param_is_list(g->p[i].kind) && g->a[i].tl) aclDestroyTensorList(g->a[i].tl);
        for (int j = 0; j < LIST_LEN; j++)
            if (g->list_bufs[i][j]) aclrtFree(g->list_bufs[i][j]);
        if (g->bufs[i]) aclrtFree(g->bufs[i]);
        if (g->scalars[i]) aclDestroyScalar(g->scalars[i]);
        if (g->arrays[i]) aclDestroyIntArray(g->arrays[i]);
        if (g->bools[i]) aclDestroyBoolArray(g->bools[i]);
    }
}

static void test_descriptors(void) {
    CHECK(og_ops_count > 0);
    CHECK_EQ(opgrad_op_count(), og_ops_count);
    for (int i = 0; i < og_ops_count; i++) {
        const og_opdesc *op = og_ops[i];
        CHECKF(!strncmp(op->name, "aclnn", 5), "%s", op->name);
        CHECK(og_op_find(op->name) == op && og_op_find(op->name + 5) == op);
        og_param p;
        int n = 0, outs = 0;
        for (; og_opdesc_param(op, n, &p); n++) {
            CHECKF(p.kind != OG_PARAM_KIND_COUNT && p.name[0], "%s parameter %d does not parse",
                   op->name, n);
            outs += p.kind == OG_PARAM_OUT || p.kind == OG_PARAM_REF ||
                    p.kind == OG_PARAM_OUT_LIST || p.kind == OG_PARAM_REF_LIST;
        }
        CHECKF(n == op->nparams, "%s: %d parameters parse, the list counts %d", op->name, n,
               op->nparams);
        CHECKF(outs >= 1, "%s has no output", op->name);
        if (op->grad[0] && strcmp(op->grad, "composite")) {
            const og_opdesc *b = og_op_grad(op);
            CHECKF(b && b->kind == OG_OP_BACKWARD, "%s: grad %s is not a backward operator",
                   op->name, op->grad);
        }
        CHECKF(!op->aot || op->grad[0], "%s is AOT but has no backward", op->name);
        opgrad_op_info info;
        CHECK_EQ(opgrad_op_get(i, &info), 0);
        CHECK(!strcmp(info.name, op->name) && !strcmp(info.params, op->params));
    }
    opgrad_op_info info;
    CHECK_EQ(opgrad_op_get(og_ops_count, &info), -1);
    CHECK_EQ(opgrad_op_get(0, NULL), -1);
}

static void test_null_arguments(void) {
    for (int i = 0; i < og_ops_count; i++) {
        const og_opdesc *op = og_ops[i];
        args g;
        make_args(op, &g, -1, -1);
        uint64_t ws = 0;
        aclOpExecutor *e = NULL;
        CHECKF(op->phase1(g.a, NULL, &e) == ACLNN_ERR_PARAM_NULLPTR, "%s", op->name);
        CHECK_MSG("workspaceSize is NULL");
        CHECKF(op->phase1(g.a, &ws, NULL) == ACLNN_ERR_PARAM_NULLPTR, "%s", op->name);
        CHECK_MSG("executor is NULL");
        for (int k = 0; k < g.n; k++) {
            if (!is_pointer(g.p[k].kind) || is_optional(&g.p[k])) continue;
            og_arg saved = g.a[k];
            memset(&g.a[k], 0, sizeof g.a[k]);
            aclnnStatus st = op->phase1(g.a, &ws, &e);
            g.a[k] = saved;
            CHECKF(st == ACLNN_ERR_PARAM_NULLPTR, "%s with %s NULL: status %d", op->name,
                   g.p[k].name, (int)st);
            CHECKF(strstr(aclGetRecentErrMsg(), op->name) &&
                       strstr(aclGetRecentErrMsg(), g.p[k].name),
                   "%s with %s NULL: message \"%s\"", op->name, g.p[k].name, aclGetRecentErrMsg());
        }
        free_args(&g);
    }
}

// The operator accepts the valid-looking arguments (FusedAddScale does not: its bias must be [C]).
static bool accepts_defaults(const og_opdesc *op) {
    args g;
    make_args(op, &g, -1, -1);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    aclnnStatus st = op->phase1(g.a, &ws, &e);
    if (st == ACLNN_SUCCESS) aclDestroyAclOpExecutor(e);
    free_args(&g);
    return st == ACLNN_SUCCESS;
}

static void test_bad_tensors(void) {
    for (int i = 0; i < og_ops_count; i++) {
        const og_opdesc *op = og_ops[i];
        bool valid = accepts_defaults(op);
        og_param p;
        for (int k = 0; og_opdesc_param(op, k, &p); k++) {
            if (!is_tensor(p.kind) && !og_param_is_list(p.kind)) continue;
            for (int which = 0; which < 2; which++) {
                args g;
                make_args(op, &g, which == 0 ? k : -1, which == 1 ? k : -1);
                uint64_t ws = 0;
                aclOpExecutor *e = NULL;
                aclnnStatus st = op->phase1(g.a, &ws, &e);
                CHECKF(st == ACLNN_ERR_PARAM_INVALID, "%s with %s %s: status %d", op->name, p.name,
                       which ? "uint16" : "of rank 9", (int)st);
                if (valid && which == 1 && st == ACLNN_ERR_PARAM_INVALID)
                    CHECKF(strstr(aclGetRecentErrMsg(), "uint16"), "%s: \"%s\"", op->name,
                           aclGetRecentErrMsg());
                if (st == ACLNN_SUCCESS) aclDestroyAclOpExecutor(e);
                free_args(&g);
            }
        }
    }
}

static void test_foreign_objects(void) {
    static unsigned char junk[1024];
    memset(junk, 0x5a, sizeof junk);
    float one = 1.0f;
    aclScalar *scalar = aclCreateScalar(&one, ACL_FLOAT);
    for (int i = 0; i < og_ops_count; i++) {
        const og_opdesc *op = og_ops[i];
        bool valid = accepts_defaults(op); // else another rule may be named first
        args g;
        make_args(op, &g, -1, -1);
        for (int k = 0; k < g.n; k++) {
            og_param_kind kind = g.p[k].kind;
            bool list = og_param_is_list(kind);
            if (!is_tensor(kind) && !list && kind != OG_PARAM_SCALAR && kind != OG_PARAM_INT_ARRAY)
                continue;
            for (int which = 0; which < 2; which++) { // junk, then an object of another kind
                og_arg saved = g.a[k];
                const void *bad = which == 0                ? (const void *)junk
                                  : is_tensor(kind) || list ? (const void *)scalar
                                                            : (const void *)g.a[0].t;
                memcpy(&g.a[k], &bad, sizeof bad); // every pointer member shares the storage
                uint64_t ws = 0;
                aclOpExecutor *e = NULL;
                aclnnStatus st = op->phase1(g.a, &ws, &e);
                g.a[k] = saved;
                CHECKF(st == ACLNN_ERR_PARAM_INVALID, "%s with a %s %s: status %d", op->name,
                       which ? "wrong-kind" : "foreign", g.p[k].name, (int)st);
                const char *msg = aclGetRecentErrMsg();
                bool named =
                    strstr(msg, g.p[k].name) && strstr(msg, which ? "not an acl" : "not a live");
                CHECKF(!valid || named, "%s with a %s %s: \"%s\"", op->name,
                       which ? "wrong-kind" : "foreign", g.p[k].name, aclGetRecentErrMsg());
                if (st == ACLNN_SUCCESS) aclDestroyAclOpExecutor(e);
            }
        }
        free_args(&g);
    }
    aclDestroyScalar(scalar);
}

// A [4,6] fp32 view (96 bytes) over a 16-byte aclrtMalloc block: refused, in every tensor
// parameter of the operators that accept the valid arguments.
static void test_views_larger_than_their_block(void) {
    int64_t d2[2] = {4, 6};
    for (int i = 0; i < og_ops_count; i++) {
        const og_opdesc *op = og_ops[i];
        if (!accepts_defaults(op)) continue;
        args g;
        make_args(op, &g, -1, -1);
        void *small = test_dev_alloc(16);
        aclTensor *over = test_tensor(d2, 2, ACL_FLOAT, small);
        for (int k = 0; k < g.n; k++) {
            bool list = og_param_is_list(g.p[k].kind);
            if (!is_tensor(g.p[k].kind) && !list) continue;
            og_arg saved = g.a[k];
            aclTensorList *with_over = NULL;
            if (list) { // a list whose one tensor is the oversized view
                const aclTensor *one = test_tensor(d2, 2, ACL_FLOAT, small);
                g.a[k].tl = with_over = aclCreateTensorList(&one, 1);
            } else {
                g.a[k].t = over;
            }
            uint64_t ws = 0;
            aclOpExecutor *e = NULL;
            aclnnStatus st = op->phase1(g.a, &ws, &e);
            g.a[k] = saved;
            if (with_over) aclDestroyTensorList(with_over);
            CHECKF(st == ACLNN_ERR_PARAM_INVALID, "%s with %s over 16 bytes: status %d", op->name,
                   g.p[k].name, (int)st);
            CHECKF(strstr(aclGetRecentErrMsg(), "aclrtMalloc block of 16 bytes"), "%s: \"%s\"",
                   op->name, aclGetRecentErrMsg());
            if (st == ACLNN_SUCCESS) aclDestroyAclOpExecutor(e);
        }
        aclDestroyTensor(over);
        aclrtFree(small);
        free_args(&g);
    }
}

// The operators with several outputs (MishWithTanhx): one output tensor passed twice, or two
// tensors over one buffer, would have one result overwrite the other.
static void test_outputs_in_one_place(void) {
    int tested = 0;
    for (int i = 0; i < og_ops_count; i++) {
        const og_opdesc *op = og_ops[i];
        if (!accepts_defaults(op)) continue; // another rule would be named first
        args g;
        make_args(op, &g, -1, -1);
        int first = -1;
        for (int k = 0; k < g.n; k++) {
            if (g.p[k].kind != OG_PARAM_OUT) continue;
            if (first < 0) {
                first = k;
                continue;
            }
            for (int alias = 0; alias < 2; alias++) {
                og_arg saved = g.a[k];
                aclTensor *twin = NULL;
                if (alias == 0)
                    g.a[k].t = g.a[first].t;
                else
                    g.a[k].t = twin = test_tensor(g.a[first].t->dims, g.a[first].t->ndim, ACL_FLOAT,
                                                  g.bufs[first]);
                uint64_t ws = 0;
                aclOpExecutor *e = NULL;
                aclnnStatus st = op->phase1(g.a, &ws, &e);
                g.a[k] = saved;
                if (twin) aclDestroyTensor(twin);
                CHECKF(st == ACLNN_ERR_PARAM_INVALID, "%s with %s = %s: status %d", op->name,
                       g.p[k].name, g.p[first].name, (int)st);
                CHECK_MSG("share memory");
                if (st == ACLNN_SUCCESS) aclDestroyAclOpExecutor(e);
                tested++;
            }
        }
        free_args(&g);
    }
    CHECK(tested > 0); // the list has an operator with two outputs
}

static void test_phase2_of_another_operator(void) {
    const og_opdesc *a = og_op_find("Mish"), *b = og_op_find("Gelu");
    args g;
    make_args(a, &g, -1, -1);
    uint64_t ws = 0;
    aclOpExecutor *e = NULL;
    CHECK_EQ(a->phase1(g.a, &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(b->phase2(NULL, ws, e, NULL), ACLNN_ERR_PARAM_INVALID);
    CHECK_MSG("planned by aclnnMishGetWorkspaceSize");
    CHECK_EQ(a->phase2(NULL, ws, e, NULL), ACLNN_SUCCESS);
    free_args(&g);
}

int main(void) {
    aclInit(NULL);
    RUN(test_descriptors);
    RUN(test_null_arguments);
    RUN(test_bad_tensors);
    RUN(test_foreign_objects);
    RUN(test_views_larger_than_their_block);
    RUN(test_outputs_in_one_place);
    RUN(test_phase2_of_another_operator);
    return test_summary();
}
