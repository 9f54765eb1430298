/* Reading an og_opdesc's parameter list (the ops.inc syntax, see opdesc.h). */
#include "engine/opdesc.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *letters;
    og_param_kind kind;
} KINDS[] = {
    {"T", OG_PARAM_TENSOR},    {"G", OG_PARAM_GRAD},        {"Y", OG_PARAM_RESULT},
    {"O", OG_PARAM_OUT},       {"R", OG_PARAM_REF},         {"S", OG_PARAM_SCALAR},
    {"I", OG_PARAM_INT},       {"I8", OG_PARAM_INT8},       {"B", OG_PARAM_BOOL},
    {"D", OG_PARAM_DOUBLE},    {"C", OG_PARAM_STRING},      {"A", OG_PARAM_INT_ARRAY},
    {"DT", OG_PARAM_DTYPE},    {"BA", OG_PARAM_BOOL_ARRAY}, {"L", OG_PARAM_TENSOR_LIST},
    {"LR", OG_PARAM_REF_LIST}, {"LO", OG_PARAM_OUT_LIST},   {"F", OG_PARAM_FLOAT},
};

static const char *skip_space(const char *s) {
    while (*s == ' ' || *s == ',' || *s == '\n' || *s == '\t') s++;
    return s;
}

// Copies [from, to) without surrounding blanks and quotes into buf.
static void copy_trimmed(const char *from, const char *to, char *buf, size_t size) {
    while (from < to && (*from == ' ' || *from == '"')) from++;
    while (to > from && (to[-1] == ' ' || to[-1] == '"')) to--;
    size_t n = (size_t)(to - from) < size - 1 ? (size_t)(to - from) : size - 1;
    memcpy(buf, from, n);
    buf[n] = 0;
}

// Parses one "K(name[, default])" at s into *p; returns the text after it, or NULL at the end.
static const char *parse_one(const char *s, og_param *p) {
    s = skip_space(s);
    if (!*s) return NULL;
    const char *open = strchr(s, '(');
    if (!open) return NULL;
    char letters[4] = {0};
    copy_trimmed(s, open, letters, sizeof letters);
    p->kind = OG_PARAM_KIND_COUNT;
    for (size_t k = 0; k < sizeof KINDS / sizeof *KINDS; k++)
        if (!strcmp(letters, KINDS[k].letters)) p->kind = KINDS[k].kind;
    const char *at = open + 1, *comma = NULL;
    bool quoted = false;
    for (; *at && (quoted || *at != ')'); at++) {
        if (*at == '"') quoted = !quoted;
        if (!quoted && *at == ',' && !comma) comma = at;
    }
    copy_trimmed(open + 1, comma ? comma : at, p->name, sizeof p->name);
    p->def[0] = 0;
    if (comma) copy_trimmed(comma + 1, at, p->def, sizeof p->def);
    return *at ? at + 1 : at;
}

bool og_opdesc_param(const og_opdesc *op, int i, og_param *p) {
    if (i < 0) return false;
    const char *s = op->params;
    while (*s == ' ') s++;
    if (*s == '(') s++; // the list's parentheses around the parameters
    for (int k = 0; s; k++) {
        s = parse_one(s, p);
        if (!s) return false;
        if (k == i) return true;
    }
    return false;
}

const char *og_opdesc_output_name(const og_opdesc *op, int k, char *buf, int size) {
    og_param p;
    for (int i = 0, outs = 0; og_opdesc_param(op, i, &p); i++) {
        if (p.kind != OG_PARAM_OUT && p.kind != OG_PARAM_REF) continue;
        if (outs++ == k) {
            snprintf(buf, (size_t)size, "%s", p.name);
            return buf;
        }
    }
    return NULL;
}
