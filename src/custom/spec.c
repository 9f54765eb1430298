/* Reading and validating a custom operator's spec (spec.h, docs/custom-ops.md). */
#include "custom/spec.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "custom/json.h"

typedef struct ctx {
    ogs_spec *spec;
    char *err;
    size_t errsize;
} ctx;

static bool bad(ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool bad(ctx *c, const char *fmt, ...) {
    int n = snprintf(c->err, c->errsize, "%s: ", c->spec->path);
    if (n >= 0 && (size_t)n < c->errsize) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err + n, c->errsize - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return false;
}

const char *ogs_dtype_str(aclDataType dt) {
    switch (dt) {
    case ACL_FLOAT:
        return "float32";
    case ACL_FLOAT16:
        return "float16";
    case ACL_BF16:
        return "bfloat16";
    case ACL_DOUBLE:
        return "float64";
    default:
        return "unsupported";
    }
}

bool ogs_dtype_parse(const char *s, aclDataType *dt) {
    static const struct {
        const char *name;
        aclDataType dt;
    } names[] = {{"float32", ACL_FLOAT},
                 {"float", ACL_FLOAT},
                 {"float16", ACL_FLOAT16},
                 {"bfloat16", ACL_BF16},
                 {"float64", ACL_DOUBLE}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(s, names[i].name)) return *dt = names[i].dt, true;
    return false;
}

// Edits (insert, delete, replace, swap two neighbours) between a and b, for "did you mean";
// keys longer than 63 bytes are never close to a known one.
static int edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return 1 << 20;
    int d[64][64];
    for (size_t i = 0; i <= la; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

// Every key of obj must be one of known[]: a misspelt key ("libary") would otherwise be
// ignored, and the spec would mean something else than its author thinks. The message names the
// key, suggests the closest known one and lists them all.
static bool known_keys(ctx *c, const ogj_value *obj, const char *where, const char *const *known,
                       size_t n) {
    for (int i = 0; i < obj->count; i++) {
        const char *key = obj->keys[i];
        size_t best = 0;
        int best_d = 1 << 30;
        for (size_t k = 0; k < n; k++) {
            if (!strcmp(key, known[k])) {
                best_d = -1;
                break;
            }
            int d = edit_distance(key, known[k]);
            if (d < best_d) best_d = d, best = k;
        }
        if (best_d < 0) continue;
        char list[512];
        size_t len = 0;
        for (size_t k = 0; k < n && len < sizeof list; k++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "", known[k]);
        char hint[96] = "";
        if (best_d <= (strlen(key) >= 5 ? 2 : 1))
            snprintf(hint, sizeof hint, " (did you mean \"%s\"?)", known[best]);
        return bad(c, "line %d: unknown key \"%.64s\" in %s%s; the keys there are: %s",
                   obj->items[i]->line, key, where, hint, list);
    }
    return true;
}

static bool get_string(ctx *c, const ogj_value *obj, const char *key, bool required, char *out,
                       size_t size) {
    const ogj_value *v = ogj_get(obj, key);
    if (!v) return required ? bad(c, "\"%s\" is required", key) : true;
    if (v->type != OGJ_STRING)
        return bad(c, "line %d: \"%s\" must be a string, not a %s", v->line, key,
                   ogj_type_name(v->type));
    if (!v->string[0]) return bad(c, "line %d: \"%s\" is empty", v->line, key);
    if (strlen(v->string) >= size)
        return bad(c, "line %d: \"%s\" is longer than %zu bytes", v->line, key, size - 1);
    snprintf(out, size, "%s", v->string);
    return true;
}

static int dimname_index(ogs_spec *s, const char *name, bool add) {
    for (int i = 0; i < s->ndimnames; i++)
        if (!strcmp(s->dimnames[i], name)) return i;
    if (!add || s->ndimnames == OGS_MAX_DIMNAMES || strlen(name) >= OGS_NAME) return -1;
    snprintf(s->dimnames[s->ndimnames], OGS_NAME, "%s", name);
    return s->ndimnames++;
}

static bool read_domain(ctx *c, const ogj_value *v, const char *what, double *lo, double *hi) {
    if (!v) return true;
    if (v->type != OGJ_ARRAY || v->count != 2 || v->items[0]->type != OGJ_NUMBER ||
        v->items[1]->type != OGJ_NUMBER || !(v->items[0]->number < v->items[1]->number) ||
        !isfinite(v->items[0]->number) || !isfinite(v->items[1]->number))
        return bad(c, "line %d: %s \"domain\" must be [lo, hi] with finite lo < hi", v->line, what);
    *lo = v->items[0]->number, *hi = v->items[1]->number;
    return true;
}

static bool read_tensor(ctx *c, const ogj_value *v, const char *list, int idx, ogs_tensor *t,
                        bool named) {
    ogs_spec *s = c->spec;
    if (v->type != OGJ_OBJECT)
        return bad(c, "line %d: %s[%d] must be an object", v->line, list, idx);
    static const char *const input_keys[] = {"name", "shape", "dtype", "differentiable", "domain"};
    static const char *const output_keys[] = {"name", "shape", "dtype"};
    static const char *const gradient_keys[] = {"shape", "dtype"};
    char where[64];
    snprintf(where, sizeof where, "\"%s\"[%d]", list, idx);
    bool keys_ok = !strcmp(list, "inputs")    ? known_keys(c, v, where, input_keys, 5)
                   : !strcmp(list, "outputs") ? known_keys(c, v, where, output_keys, 3)
                                              : known_keys(c, v, where, gradient_keys, 2);
    if (!keys_ok) return false;
    t->differentiable = true;
    t->dtype = ACL_DT_UNDEFINED;
    t->lo = -2, t->hi = 2;
    if (named) {
        if (!get_string(c, v, "name", true, t->name, sizeof t->name)) return false;
    } else {
        snprintf(t->name, sizeof t->name, "%s[%d]", list, idx);
    }
    const ogj_value *shape = ogj_get(v, "shape");
    if (!shape) return bad(c, "line %d: %s '%s' has no \"shape\"", v->line, list, t->name);
    if (shape->type == OGJ_STRING) {
        // "shape": "x" = the shape of the input named x (gradients, outputs)
        int k = 0;
        while (k < s->nin && strcmp(s->in[k].name, shape->string)) k++;
        if (k == s->nin)
            return bad(c, "line %d: %s '%s': \"shape\": \"%s\" names no input", shape->line, list,
                       t->name, shape->string);
        t->ndim = s->in[k].ndim;
        memcpy(t->fixed, s->in[k].fixed, sizeof t->fixed);
        memcpy(t->sym, s->in[k].sym, sizeof t->sym);
    } else if (shape->type == OGJ_ARRAY) {
        if (shape->count > OG_MAX_DIMS)
            return bad(c, "line %d: %s '%s' has rank %d; the maximum is %d", shape->line, list,
                       t->name, shape->count, OG_MAX_DIMS);
        t->ndim = shape->count;
        for (int d = 0; d < t->ndim; d++) {
            const ogj_value *e = shape->items[d];
            t->sym[d] = -1;
            if (e->type == OGJ_NUMBER) {
                if (!(e->number >= 0 && e->number <= (double)(1 << 30)) ||
                    e->number != floor(e->number))
                    return bad(c, "line %d: %s '%s' dim %d: %g is not an extent in [0, 2^30]",
                               e->line, list, t->name, d, e->number);
                t->fixed[d] = (int64_t)e->number;
            } else if (e->type == OGJ_STRING && e->string[0]) {
                t->sym[d] = dimname_index(s, e->string, true);
                if (t->sym[d] < 0)
                    return bad(c, "line %d: more than %d dim names, or '%s' is too long", e->line,
                               OGS_MAX_DIMNAMES, e->string);
            } else {
                return bad(c, "line %d: %s '%s' dim %d must be an integer or a dim name", e->line,
                           list, t->name, d);
            }
        }
    } else {
        return bad(c,
                   "line %d: %s '%s': \"shape\" must be a list of extents / dim names, or an "
                   "input's name",
                   shape->line, list, t->name);
    }
    const ogj_value *dt = ogj_get(v, "dtype");
    if (dt) {
        if (dt->type != OGJ_STRING || !ogs_dtype_parse(dt->string, &t->dtype))
            return bad(c, "line %d: %s '%s': dtype must be float32, float16, bfloat16 or float64",
                       dt->line, list, t->name);
    }
    const ogj_value *diff = ogj_get(v, "differentiable");
    if (diff) {
        if (diff->type != OGJ_BOOL)
            return bad(c, "line %d: %s '%s': \"differentiable\" must be true or false", diff->line,
                       list, t->name);
        t->differentiable = diff->boolean;
    }
    return read_domain(c, ogj_get(v, "domain"), t->name, &t->lo, &t->hi);
}

static bool read_tensors(ctx *c, const ogj_value *root, const char *key, int max, ogs_tensor *t,
                         int *n, bool named) {
    const ogj_value *v = ogj_get(root, key);
    if (!v) return bad(c, "\"%s\" is required", key);
    if (v->type != OGJ_ARRAY || v->count < 1 || v->count > max)
        return bad(c, "line %d: \"%s\" must be a list of 1 to %d tensors", v->line, key, max);
    *n = v->count;
    for (int i = 0; i < v->count; i++)
        if (!read_tensor(c, v->items[i], key, i, &t[i], named)) return false;
    for (int i = 0; named && i < v->count; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(t[i].name, t[j].name))
                return bad(c, "\"%s\": the name '%s' is used twice", key, t[i].name);
    return true;
}

static bool read_dtypes(ctx *c, const ogj_value *root) {
    ogs_spec *s = c->spec;
    const ogj_value *v = ogj_get(root, "dtypes");
    if (!v) {
        s->ndtypes = 1, s->dtypes[0] = ACL_FLOAT;
        return true;
    }
    if (v->type != OGJ_ARRAY || v->count < 1 || v->count > OGS_MAX_DTYPES)
        return bad(c, "line %d: \"dtypes\" must list 1 to %d dtypes", v->line, OGS_MAX_DTYPES);
    for (int i = 0; i < v->count; i++) {
        aclDataType dt;
        if (v->items[i]->type != OGJ_STRING || !ogs_dtype_parse(v->items[i]->string, &dt))
            return bad(c, "line %d: \"dtypes\"[%d] must be float32, float16, bfloat16 or float64",
                       v->items[i]->line, i);
        for (int j = 0; j < s->ndtypes; j++)
            if (s->dtypes[j] == dt) return bad(c, "\"dtypes\" lists %s twice", ogs_dtype_str(dt));
        s->dtypes[s->ndtypes++] = dt;
    }
    const ogj_value *mixed = ogj_get(root, "dout_dtypes");
    if (!mixed) return true;
    if (mixed->type != OGJ_OBJECT)
        return bad(c, "line %d: \"dout_dtypes\" must map an output dtype to a list of dtypes",
                   mixed->line);
    for (int i = 0; i < mixed->count; i++) {
        aclDataType dt;
        int k = -1;
        if (ogs_dtype_parse(mixed->keys[i], &dt))
            for (int j = 0; j < s->ndtypes; j++)
                if (s->dtypes[j] == dt) k = j;
        if (k < 0)
            return bad(c, "\"dout_dtypes\": '%s' is not one of the operator's \"dtypes\"",
                       mixed->keys[i]);
        const ogj_value *l = mixed->items[i];
        if (l->type != OGJ_ARRAY)
            return bad(c, "line %d: \"dout_dtypes\".%s must be a list", l->line, mixed->keys[i]);
        for (int j = 0; j < l->count; j++) {
            aclDataType g;
            if (l->items[j]->type != OGJ_STRING || !ogs_dtype_parse(l->items[j]->string, &g))
                return bad(c, "line %d: \"dout_dtypes\".%s[%d] is not a floating dtype",
                           l->items[j]->line, mixed->keys[i], j);
            s->dout_dtypes[k] |= 1ull << g;
        }
    }
    return true;
}

static bool read_sizes(ctx *c, const ogj_value *root) {
    ogs_spec *s = c->spec;
    const ogj_value *v = ogj_get(root, "sizes");
    if (!v) {
        s->nsizes = 1;
        for (int d = 0; d < s->ndimnames; d++) s->sizes[0][d] = 7;
        return true;
    }
    if (v->type != OGJ_ARRAY || v->count < 1 || v->count > OGS_MAX_SIZES)
        return bad(c, "line %d: \"sizes\" must be a list of 1 to %d bindings", v->line,
                   OGS_MAX_SIZES);
    s->nsizes = v->count;
    for (int b = 0; b < v->count; b++) {
        const ogj_value *o = v->items[b];
        if (o->type != OGJ_OBJECT)
            return bad(c, "line %d: \"sizes\"[%d] must be an object like {\"N\": 8}", o->line, b);
        for (int d = 0; d < s->ndimnames; d++) {
            const ogj_value *e = ogj_get(o, s->dimnames[d]);
            if (!e)
                return bad(c, "line %d: \"sizes\"[%d] does not bind the dim '%s'", o->line, b,
                           s->dimnames[d]);
            if (e->type != OGJ_NUMBER || !(e->number >= 0 && e->number <= (double)(1 << 30)) ||
                e->number != floor(e->number))
                return bad(c, "line %d: \"sizes\"[%d].%s must be an integer in [0, 2^30]", e->line,
                           b, s->dimnames[d]);
            s->sizes[b][d] = (int64_t)e->number;
        }
        for (int i = 0; i < o->count; i++)
            if (dimname_index(s, o->keys[i], false) < 0)
                return bad(c, "line %d: \"sizes\"[%d] binds '%s', which no shape uses", o->line, b,
                           o->keys[i]);
    }
    return true;
}

// Every tensor of every binding must fit the checker's buffers: at most 2^26 elements each.
static bool check_extents(ctx *c) {
    ogs_spec *s = c->spec;
    for (int b = 0; b < s->nsizes; b++) {
        const ogs_tensor *all[OGS_MAX_IN * 2 + OGS_MAX_OUT];
        int n = 0;
        for (int i = 0; i < s->nin; i++) all[n++] = &s->in[i];
        for (int i = 0; i < s->nout; i++) all[n++] = &s->out[i];
        for (int i = 0; i < s->ngrads; i++) all[n++] = &s->grads[i];
        for (int i = 0; i < n; i++) {
            double numel = 1;
            for (int d = 0; d < all[i]->ndim; d++)
                numel *=
                    (double)(all[i]->sym[d] >= 0 ? s->sizes[b][all[i]->sym[d]] : all[i]->fixed[d]);
            if (numel > (double)(1 << 26)) {
                char bind[128];
                ogs_binding_str(s, b, bind, sizeof bind);
                return bad(c, "'%s' has %.0f elements with %s; the checker takes at most 2^26",
                           all[i]->name, numel, bind);
            }
        }
    }
    return true;
}

bool ogs_parse(const char *text, const char *path, ogs_spec *spec, char *err, size_t errsize) {
    memset(spec, 0, sizeof *spec);
    snprintf(spec->path, sizeof spec->path, "%s", path ? path : "<spec>");
    ctx c = {spec, err, errsize};
    char jerr[256];
    ogj_doc *doc = ogj_parse(text, jerr, sizeof jerr);
    if (!doc) return bad(&c, "not valid JSON: %s", jerr);
    const ogj_value *root = ogj_root(doc);
    static const char *const known[] = {"name",        "library",          "forward",    "backward",
                                        "reference",   "reference_symbol", "dtypes",     "inputs",
                                        "outputs",     "gradients",        "sizes",      "domain",
                                        "dout_dtypes", "tolerance_ulps",   "description"};
    bool ok = root->type == OGJ_OBJECT || bad(&c, "the spec must be a JSON object");
    // unknown keys first: a misspelt "libary" is the error, not the "library" it leaves missing
    ok = ok && known_keys(&c, root, "the spec", known, sizeof known / sizeof known[0]);
    ok = ok && get_string(&c, root, "name", true, spec->name, sizeof spec->name);
    ok = ok && get_string(&c, root, "library", true, spec->library, sizeof spec->library);
    ok = ok && get_string(&c, root, "forward", true, spec->forward, sizeof spec->forward);
    ok = ok && get_string(&c, root, "backward", false, spec->backward, sizeof spec->backward);
    ok = ok && get_string(&c, root, "reference_symbol", false, spec->reference_symbol,
                          sizeof spec->reference_symbol);
    ok = ok && read_dtypes(&c, root);
    ok = ok && read_tensors(&c, root, "inputs", OGS_MAX_IN, spec->in, &spec->nin, true);
    ok = ok && read_tensors(&c, root, "outputs", OGS_MAX_OUT, spec->out, &spec->nout, true);
    if (ok && ogj_get(root, "gradients")) {
        spec->grads_declared = true;
        const ogj_value *g = ogj_get(root, "gradients");
        if (g->type != OGJ_ARRAY || g->count > OGS_MAX_IN)
            ok = bad(&c, "line %d: \"gradients\" must be a list of at most %d tensors", g->line,
                     OGS_MAX_IN);
        for (int i = 0; ok && i < g->count; i++)
            ok = read_tensor(&c, g->items[i], "gradients", i, &spec->grads[i], false);
        if (ok) spec->ngrads = g->count;
    } else if (ok) {
        spec->ngrads = spec->nin;
        for (int i = 0; i < spec->nin; i++) spec->grads[i] = spec->in[i];
    }
    double lo = -2, hi = 2;
    ok = ok && read_domain(&c, ogj_get(root, "domain"), "the spec's", &lo, &hi);
    if (ok && ogj_get(root, "domain"))
        for (int i = 0; i < spec->nin; i++)
            if (!ogj_get(ogj_get(root, "inputs")->items[i], "domain"))
                spec->in[i].lo = lo, spec->in[i].hi = hi;
    ok = ok && read_sizes(&c, root);
    ok = ok && check_extents(&c);
    const ogj_value *ref = ogj_get(root, "reference");
    if (ok && ref) {
        if (ref->type != OGJ_STRING || !ref->string[0])
            ok = bad(&c, "line %d: \"reference\" must be a non-empty expression string", ref->line);
        else if (!(spec->reference = strdup(ref->string)))
            ok = bad(&c, "out of memory");
    }
    const ogj_value *tol = ogj_get(root, "tolerance_ulps");
    spec->tolerance_ulps = 16;
    if (ok && tol) {
        if (tol->type != OGJ_NUMBER || !(tol->number >= 0.5 && tol->number <= 1e6))
            ok = bad(&c, "line %d: \"tolerance_ulps\" must be a number in [0.5, 1e6]", tol->line);
        else
            spec->tolerance_ulps = tol->number;
    }
    ogj_free(doc);
    if (!ok) ogs_free(spec);
    return ok;
}

bool ogs_load(const char *path, ogs_spec *spec, char *err, size_t errsize) {
    memset(spec, 0, sizeof *spec);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errsize, "%s: cannot open the spec: %s", path, strerror(errno));
        return false;
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? 2 * cap : 8192;
            char *t = cap <= (1u << 24) ? realloc(text, cap) : NULL;
            if (!t) {
                free(text);
                fclose(f);
                snprintf(err, errsize, "%s: the spec is larger than 16 MiB", path);
                return false;
            }
            text = t;
        }
        size_t n = fread(text + len, 1, 4096, f);
        len += n;
        if (n < 4096) break;
    }
    fclose(f);
    text[len] = 0;
    if (strlen(text) != len) {
        free(text);
        snprintf(err, errsize, "%s: the spec contains a NUL byte", path);
        return false;
    }
    bool ok = ogs_parse(text, path, spec, err, errsize);
    free(text);
    return ok;
}

void ogs_free(ogs_spec *spec) {
    free(spec->reference);
    spec->reference = NULL;
}

void ogs_shape(const ogs_spec *spec, const ogs_tensor *t, int b, ogc_shape *out) {
    out->ndim = t->ndim;
    for (int d = 0; d < t->ndim; d++)
        out->dims[d] = t->sym[d] >= 0 ? spec->sizes[b][t->sym[d]] : t->fixed[d];
}

void ogs_binding_str(const ogs_spec *spec, int b, char *buf, size_t size) {
    size_t len = 0;
    if (size) buf[0] = 0;
    for (int d = 0; d < spec->ndimnames && len < size; d++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s=%lld", d ? "," : "", spec->dimnames[d],
                                (long long)spec->sizes[b][d]);
}
