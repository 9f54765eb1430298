/* The registry: every family listed in registry.h, and the launch helper entry points share. */
#include <string.h>

#include "acl/acl.h"
#include "check/registry.h"

#define OG_FAMILY(family) &ogc_family_##family,
static const ogc_family *const families[] = {
#include "ops/ops.inc"
};
#undef OG_FAMILY
enum { NFAMILIES = sizeof families / sizeof *families };

int ogc_registry_count(void) {
    int n = 0;
    for (int f = 0; f < NFAMILIES; f++) n += families[f]->count;
    return n;
}

const ogc_op *ogc_registry_get(int i) {
    for (int f = 0; f < NFAMILIES; f++) {
        if (families[f]->count == 0) continue;
        if (i < families[f]->count) return &families[f]->ops[i];
        i -= families[f]->count;
    }
    return NULL;
}

const ogc_op *ogc_registry_find(const char *name) {
    for (int i = 0; i < ogc_registry_count(); i++)
        if (!strcmp(ogc_registry_get(i)->name, name)) return ogc_registry_get(i);
    return NULL;
}

int ogc_launch(uint64_t workspace_size, aclOpExecutor *executor,
               aclnnStatus (*phase2)(void *, uint64_t, aclOpExecutor *, aclrtStream)) {
    void *ws = NULL;
    if (workspace_size > 0 && aclrtMalloc(&ws, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST) != 0)
        return ACLNN_ERR_INNER;
    int st = phase2(ws, workspace_size, executor, NULL);
    if (ws) aclrtFree(ws);
    return st;
}
