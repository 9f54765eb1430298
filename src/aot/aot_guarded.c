/* opgrad_custom_call_guarded (opgrad/custom_op.h): one call of a custom kernel with the checks of
 * `opgrad check --custom` that fit inside a training step, for opgrad.mindspore.custom(spec,
 * debug=True) and any C caller that wants a kernel's mistake named where it happens.
 *
 *   - every output (the last `noutputs` params) is given to the kernel in a buffer of opgrad's
 *     own, of exactly the declared shape, poisoned (0xFF bytes) and followed by a canary zone as
 *     large as the largest param of the call (at least 4 KiB): a kernel that writes a whole
 *     unreduced gradient into a reduced one ([N, C] into a declared [C]) writes into the zone,
 *     not into someone else's memory, and how far it wrote is measured;
 *   - the inputs are compared with a copy after the call (a kernel must not write its inputs);
 *   - an output left partly unwritten (still the poison) is reported;
 *   - the gradients (the last `ngrads` params) go through the gradient monitor
 *     (OPGRAD_DEBUG_GRADS=1), as with opgrad_custom_call;
 *   - only when every check passes are the outputs copied to the caller's buffers.
 *
 * A write further than the zone is not caught (it lands past opgrad's buffer); the isolated
 * checker (`opgrad check --custom`) catches that one too. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "opgrad/custom_op.h"
#include "runtime/custom_lib.h"
#include "runtime/error.h"

#define GUARD_MAX_PARAMS 64
#define CANARY 0xCD
#define POISON 0xFF
#define MIN_ZONE 4096
#define MAX_BYTES ((int64_t)1 << 40)

static const char FN[] = "opgrad_custom_call_guarded";

// Bytes per element of an aot dtype string; 0 when unknown.
static size_t elem_size(const char *dt) {
    static const struct {
        const char *name;
        size_t size;
    } t[] = {{"float32", 4}, {"float", 4},  {"float16", 2}, {"bfloat16", 2}, {"float64", 8},
             {"int32", 4},   {"int", 4},    {"int64", 8},   {"int16", 2},    {"int8", 1},
             {"uint8", 1},   {"uint16", 2}, {"uint32", 4},  {"uint64", 8},   {"bool", 1}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(dt, t[i].name)) return t[i].size;
    return 0;
}

static void shape_str(int nd, const int64_t *s, char *buf, size_t cap) {
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (int d = 0; d < nd && n < cap; d++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? ", " : "", (long long)s[d]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
}

// "'dbias' (params[5])" or "params[5]" for messages.
static const char *pname(const char *const *names, int i, char *buf, size_t cap) {
    if (names && names[i] && names[i][0])
        snprintf(buf, cap, "'%s' (params[%d])", names[i], i);
    else
        snprintf(buf, cap, "params[%d]", i);
    return buf;
}

typedef struct guard {
    int n;
    int64_t bytes[GUARD_MAX_PARAMS];
    size_t es[GUARD_MAX_PARAMS];
    void *copy[GUARD_MAX_PARAMS]; // outputs: opgrad's buffer (+ zone); inputs: their copy
} guard;

static void guard_free(guard *g) {
    for (int i = 0; i < g->n; i++) free(g->copy[i]);
}

// What the kernel wrote past output i: a sentence naming the declared shape, the elements it
// wrote in all and, when that count is an input's, that input.
static aclnnStatus overrun(const guard *g, int i, size_t over, int first_out, int *ndims,
                           int64_t **shapes, const char **dtypes, const char *symbol,
                           const char *const *names) {
    char nb[96], sb[160], ob[96], os[160], hint[400] = "";
    size_t es = g->es[i];
    int64_t wrote = (g->bytes[i] + (int64_t)over + (int64_t)es - 1) / (int64_t)es;
    shape_str(ndims[i], shapes[i], sb, sizeof sb);
    // the nearest input with that many elements: a backward's dy comes before y and the inputs
    for (int k = first_out - 1; k >= 0; k--) {
        if (opgrad_aot_numel(ndims[k], shapes[k]) != wrote) continue;
        shape_str(ndims[k], shapes[k], os, sizeof os);
        snprintf(hint, sizeof hint, " (as many as %s %s%s)", pname(names, k, ob, sizeof ob), os,
                 ndims[k] > ndims[i] ? ": a gradient of a broadcast input must be summed over "
                                       "the broadcast dims to its input's shape"
                                     : "");
        break;
    }
    return og_fail(ACLNN_ERR_PARAM_INVALID,
                   "%s: '%s' wrote past the end of %s: declared %s %s (%lld elements, %lld "
                   "bytes), it wrote %zu bytes beyond, about %lld elements in all%s; the canary "
                   "bytes after it were overwritten",
                   FN, symbol, pname(names, i, nb, sizeof nb), sb, dtypes[i],
                   (long long)(g->bytes[i] / (int64_t)es), (long long)g->bytes[i], over,
                   (long long)wrote, hint);
}

aclnnStatus opgrad_custom_call_guarded(opgrad_custom_lib *lib, const char *symbol, int nparam,
                                       void **params, int *ndims, int64_t **shapes,
                                       const char **dtypes, int noutputs, int ngrads,
                                       const char *const *names) {
    if (!lib || !symbol)
        return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL", FN, lib ? "symbol" : "lib");
    if (nparam < 0 || nparam > GUARD_MAX_PARAMS || noutputs < 0 || noutputs > nparam ||
        ngrads < 0 || ngrads > noutputs)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: nparam %d, noutputs %d, ngrads %d: need 0 <= ngrads <= noutputs <= "
                       "nparam <= %d",
                       FN, nparam, noutputs, ngrads, GUARD_MAX_PARAMS);
    if (nparam > 0 && (!params || !ndims || !shapes || !dtypes))
        return og_fail(ACLNN_ERR_PARAM_NULLPTR,
                       "%s: params, ndims, shapes and dtypes must not be NULL when nparam > 0", FN);
    guard g = {.n = 0};
    int64_t largest = MIN_ZONE;
    char nb[96];
    for (int i = 0; i < nparam; i++) {
        if (!dtypes[i] || !(g.es[i] = elem_size(dtypes[i])))
            return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: %s has dtype %s%s%s", FN,
                           pname(names, i, nb, sizeof nb), dtypes[i] ? "\"" : "",
                           dtypes[i] ? dtypes[i] : "NULL", dtypes[i] ? "\" (unknown)" : "");
        if (ndims[i] < 0 || ndims[i] > 16 || (ndims[i] > 0 && !shapes[i]))
            return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: %s has rank %d%s", FN,
                           pname(names, i, nb, sizeof nb), ndims[i],
                           ndims[i] > 0 && !shapes[i] ? " and a NULL shape" : " (0 to 16)");
        int64_t b = (int64_t)g.es[i];
        for (int d = 0; d < ndims[i]; d++)
            if (shapes[i][d] < 0 || __builtin_mul_overflow(b, shapes[i][d], &b) || b > MAX_BYTES)
                return og_fail(ACLNN_ERR_PARAM_INVALID,
                               "%s: %s has dim %d = %lld (too large or "
                               "negative)",
                               FN, pname(names, i, nb, sizeof nb), d, (long long)shapes[i][d]);
        if (b > 0 && !params[i])
            return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s: %s is NULL", FN,
                           pname(names, i, nb, sizeof nb));
        g.bytes[i] = b;
        if (b > largest) largest = b;
    }
    const int first_out = nparam - noutputs;
    aclnnStatus st = ACLNN_SUCCESS;
    for (g.n = 0; g.n < nparam; g.n++) {
        int i = g.n;
        size_t size = (size_t)g.bytes[i] + (i >= first_out ? (size_t)largest : 0);
        g.copy[i] = malloc(size ? size : 1);
        if (!g.copy[i]) {
            st = og_fail(ACLNN_ERR_INNER, "%s: out of memory (%zu bytes for %s)", FN, size,
                         pname(names, i, nb, sizeof nb));
            break;
        }
        if (i < first_out) {
            if (g.bytes[i]) memcpy(g.copy[i], params[i], (size_t)g.bytes[i]);
        } else {
            memset(g.copy[i], POISON, (size_t)g.bytes[i]);
            memset((char *)g.copy[i] + g.bytes[i], CANARY, (size_t)largest);
        }
    }
    if (st != ACLNN_SUCCESS) {
        guard_free(&g);
        return st;
    }
    void *call[GUARD_MAX_PARAMS];
    for (int i = 0; i < nparam; i++) call[i] = i < first_out ? params[i] : g.copy[i];
    int rc = 0;
    st = og_custom_call_rc(lib, symbol, nparam, call, ndims, shapes, dtypes, ngrads, &rc);
    // the canaries first, even after a nonzero return: past-the-end writes are the most
    // dangerous mistake and explain the rest
    for (int i = first_out; i < nparam && (st == ACLNN_SUCCESS || rc != 0); i++) {
        const unsigned char *z = (const unsigned char *)g.copy[i] + g.bytes[i];
        size_t last = (size_t)largest;
        while (last > 0 && z[last - 1] == CANARY) last--;
        if (last > 0) {
            st = overrun(&g, i, last, first_out, ndims, shapes, dtypes, symbol, names);
            break;
        }
    }
    for (int i = 0; i < first_out && st == ACLNN_SUCCESS; i++)
        if (g.bytes[i] && memcmp(g.copy[i], params[i], (size_t)g.bytes[i]) != 0)
            st = og_fail(ACLNN_ERR_PARAM_INVALID,
                         "%s: '%s' wrote into its input %s; a kernel writes its outputs only", FN,
                         symbol, pname(names, i, nb, sizeof nb));
    // unwritten elements: floating outputs only (all-0xFF is a NaN no arithmetic produces; in an
    // integer output it is a plain value)
    for (int i = first_out; i < nparam && st == ACLNN_SUCCESS; i++) {
        if (!opgrad_aot_dtype_is(dtypes[i], "float32") && strcmp(dtypes[i], "float16") &&
            strcmp(dtypes[i], "bfloat16") && strcmp(dtypes[i], "float64"))
            continue;
        size_t es = g.es[i];
        int64_t n = g.bytes[i] / (int64_t)es, unwritten = 0, first = -1;
        const unsigned char *p = g.copy[i];
        for (int64_t e = 0; e < n; e++) {
            size_t k = 0;
            while (k < es && p[(size_t)e * es + k] == POISON) k++;
            if (k == es) unwritten++, first = first < 0 ? e : first;
        }
        if (unwritten) {
            char sb[160];
            shape_str(ndims[i], shapes[i], sb, sizeof sb);
            st = og_fail(ACLNN_ERR_PARAM_INVALID,
                         "%s: '%s' left %lld of the %lld elements of %s %s unwritten (the first "
                         "at flat index %lld)",
                         FN, symbol, (long long)unwritten, (long long)n,
                         pname(names, i, nb, sizeof nb), sb, (long long)first);
        }
    }
    if (st == ACLNN_SUCCESS)
        for (int i = first_out; i < nparam; i++)
            if (g.bytes[i]) memcpy(params[i], g.copy[i], (size_t)g.bytes[i]);
    guard_free(&g);
    return st;
}
