/* Loading custom-operator libraries (opgrad/custom_op.h).
 *
 * dlopen() returns the already-loaded object for a path it has seen, so rebuilding a library
 * under a long-lived process (a notebook, a training job, the checker) would silently keep the
 * old code. opgrad therefore loads a private copy of the file (unlinked right after dlopen, so
 * nothing is left behind) and remembers the original's identity; every call compares it with
 * the file on disk and loads a fresh copy when it changed. Calls hold a read lock, a reload the
 * write lock, so no thread is inside a kernel whose code is being unmapped. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/custom_lib.h"

#include "acl/acl.h"
#include "opgrad/custom_op.h"
#include "runtime/error.h"

/// The gradient monitor's names for one backward symbol (opgrad_custom_set_grad_names).
typedef struct grad_names {
    struct grad_names *next;
    char *symbol, *op;
    int n;
    char **names;
} grad_names;

struct opgrad_custom_lib {
    char path[PATH_MAX];   // what the user named
    char loaded[PATH_MAX]; // the private copy (removed after dlopen), or path (loaded directly)
    void *handle;
    struct stat identity; // of `path` when it was loaded
    int loads;
    grad_names *names; // under the lock; kept across reloads (they describe the operator)
    pthread_rwlock_t lock;
};

static const char OP[] = "opgrad_custom";

static bool same_file(const struct stat *a, const struct stat *b) {
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

// Copies src to a fresh file in $TMPDIR; returns false with errno set.
static bool copy_file(const char *src, char *dst, size_t dst_size) {
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = "/tmp";
    const char *base = strrchr(src, '/');
    base = base ? base + 1 : src;
    if (snprintf(dst, dst_size, "%s/opgrad-%.64s-XXXXXX", tmp, base) >= (int)dst_size) {
        errno = ENAMETOOLONG;
        return false;
    }
    int out = mkstemp(dst);
    if (out < 0) return false;
    int in = open(src, O_RDONLY | O_CLOEXEC);
    bool ok = in >= 0;
    char buf[1 << 16];
    while (ok) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n == 0) break;
        if (n < 0) {
            ok = errno == EINTR;
            continue;
        }
        for (ssize_t done = 0; ok && done < n;) {
            ssize_t w = write(out, buf + done, (size_t)(n - done));
            if (w < 0)
                ok = errno == EINTR;
            else
                done += w;
        }
    }
    int saved = errno;
    if (in >= 0) close(in);
    close(out);
    if (!ok) unlink(dst);
    errno = saved;
    return ok;
}

// Loads a private copy of lib->path (direct: the file itself, for a process that never loaded
// it); on success replaces the current handle.
static aclnnStatus load(opgrad_custom_lib *lib, bool direct) {
    struct stat st;
    if (stat(lib->path, &st) != 0)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: cannot open library '%s': %s", OP, lib->path,
                       strerror(errno));
    if (!S_ISREG(st.st_mode))
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: '%s' is not a regular file", OP, lib->path);
    char copy[PATH_MAX];
    if (direct)
        snprintf(copy, sizeof copy, "%s", lib->path);
    else if (!copy_file(lib->path, copy, sizeof copy))
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: cannot make a private copy of '%s': %s", OP,
                       lib->path, strerror(errno));
    void *h = dlopen(copy, RTLD_NOW | RTLD_LOCAL);
    const char *why = h ? NULL : dlerror();
    if (!direct) unlink(copy); // mapped already (or failed): the file is not needed any more
    if (!h)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: dlopen of '%s' failed: %s", OP, lib->path,
                       why ? why : "unknown error");
    if (lib->handle) dlclose(lib->handle);
    lib->handle = h;
    lib->identity = st;
    snprintf(lib->loaded, sizeof lib->loaded, "%s", copy);
    lib->loads++;
    return ACLNN_SUCCESS;
}

// Reloads when the file on disk is no longer the one loaded. Takes the write lock itself.
static aclnnStatus refresh(opgrad_custom_lib *lib) {
    struct stat st;
    if (stat(lib->path, &st) != 0)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: library '%s' disappeared since it was loaded: %s", OP, lib->path,
                       strerror(errno));
    pthread_rwlock_rdlock(&lib->lock);
    bool fresh = same_file(&st, &lib->identity);
    pthread_rwlock_unlock(&lib->lock);
    if (fresh) return ACLNN_SUCCESS;
    pthread_rwlock_wrlock(&lib->lock);
    aclnnStatus s = same_file(&st, &lib->identity) ? ACLNN_SUCCESS : load(lib, false);
    pthread_rwlock_unlock(&lib->lock);
    if (s != ACLNN_SUCCESS) {
        char why[512];
        snprintf(why, sizeof why, "%s", aclGetRecentErrMsg());
        return og_fail(s, "%s: library '%s' was rebuilt and could not be reloaded (%s)", OP,
                       lib->path, why);
    }
    return s;
}

static aclnnStatus open_lib(const char *path, opgrad_custom_lib **out, bool direct) {
    if (!path || !out)
        return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s_open: %s is NULL", OP, path ? "lib" : "path");
    *out = NULL;
    if (path[0] != '/')
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s_open: library path '%s' is relative; give an absolute path (a relative "
                       "path resolves against whatever directory the process runs in, so the "
                       "same job would load different files, or none, depending on where it "
                       "starts)",
                       OP, path);
    if (strlen(path) >= PATH_MAX)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s_open: library path longer than %d bytes", OP,
                       PATH_MAX - 1);
    opgrad_custom_lib *lib = calloc(1, sizeof *lib);
    if (!lib) return og_fail(ACLNN_ERR_INNER_NULLPTR, "%s_open: out of memory", OP);
    snprintf(lib->path, sizeof lib->path, "%s", path);
    pthread_rwlock_init(&lib->lock, NULL);
    aclnnStatus s = load(lib, direct);
    if (s != ACLNN_SUCCESS) {
        pthread_rwlock_destroy(&lib->lock);
        free(lib);
        return s;
    }
    *out = lib;
    return ACLNN_SUCCESS;
}

aclnnStatus opgrad_custom_open(const char *path, opgrad_custom_lib **out) {
    return open_lib(path, out, false);
}

aclnnStatus og_custom_open_direct(const char *path, opgrad_custom_lib **out) {
    return open_lib(path, out, true);
}

static void *symbol_locked(opgrad_custom_lib *lib, const char *symbol) {
    dlerror();
    return dlsym(lib->handle, symbol);
}

aclnnStatus opgrad_custom_has_symbol(opgrad_custom_lib *lib, const char *symbol) {
    if (!lib || !symbol)
        return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s_has_symbol: %s is NULL", OP,
                       lib ? "symbol" : "lib");
    aclnnStatus s = refresh(lib);
    if (s != ACLNN_SUCCESS) return s;
    pthread_rwlock_rdlock(&lib->lock);
    void *p = symbol_locked(lib, symbol);
    pthread_rwlock_unlock(&lib->lock);
    if (!p)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s: symbol '%s' not found in '%s' (a C++ file needs extern \"C\"; check "
                       "with: nm -D --defined-only %s)",
                       OP, symbol, lib->path, lib->path);
    return ACLNN_SUCCESS;
}

static void free_names(grad_names *g) {
    if (!g) return;
    for (int i = 0; i < g->n; i++) free(g->names[i]);
    free(g->names);
    free(g->symbol);
    free(g->op);
    free(g);
}

static grad_names *find_names(const opgrad_custom_lib *lib, const char *symbol) {
    for (grad_names *g = lib->names; g; g = g->next)
        if (!strcmp(g->symbol, symbol)) return g;
    return NULL;
}

aclnnStatus opgrad_custom_set_grad_names(opgrad_custom_lib *lib, const char *symbol, const char *op,
                                         int ngrads, const char *const *names) {
    if (!lib || !symbol || (ngrads > 0 && !names))
        return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s_set_grad_names: %s is NULL", OP,
                       !lib      ? "lib"
                       : !symbol ? "symbol"
                                 : "names");
    if (ngrads < 0 || ngrads > 64)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s_set_grad_names: ngrads %d is not in [0, 64]",
                       OP, ngrads);
    for (int i = 0; i < ngrads; i++)
        if (!names[i] || !names[i][0])
            return og_fail(ACLNN_ERR_PARAM_INVALID, "%s_set_grad_names: names[%d] is %s", OP, i,
                           names[i] ? "empty" : "NULL");
    grad_names *g = NULL;
    if (ngrads > 0) {
        g = calloc(1, sizeof *g);
        bool ok = g && (g->symbol = strdup(symbol)) && (!op || (g->op = strdup(op))) &&
                  (g->names = calloc((size_t)ngrads, sizeof *g->names));
        for (int i = 0; ok && i < ngrads; i++, g->n++) ok = (g->names[i] = strdup(names[i]));
        if (!ok) {
            free_names(g);
            return og_fail(ACLNN_ERR_INNER_NULLPTR, "%s_set_grad_names: out of memory", OP);
        }
    }
    pthread_rwlock_wrlock(&lib->lock);
    // unlink the old entry of this symbol, then put the new one first
    for (grad_names **p = &lib->names; *p; p = &(*p)->next)
        if (!strcmp((*p)->symbol, symbol)) {
            grad_names *old = *p;
            *p = old->next;
            free_names(old);
            break;
        }
    if (g) g->next = lib->names, lib->names = g;
    pthread_rwlock_unlock(&lib->lock);
    return ACLNN_SUCCESS;
}

aclnnStatus opgrad_custom_call(opgrad_custom_lib *lib, const char *symbol, int nparam,
                               void **params, int *ndims, int64_t **shapes, const char **dtypes,
                               int ngrads) {
    int rc;
    return og_custom_call_rc(lib, symbol, nparam, params, ndims, shapes, dtypes, ngrads, &rc);
}

aclnnStatus og_custom_call_rc(opgrad_custom_lib *lib, const char *symbol, int nparam, void **params,
                              int *ndims, int64_t **shapes, const char **dtypes, int ngrads,
                              int *kernel_rc) {
    *kernel_rc = 0;
    if (!lib || !symbol)
        return og_fail(ACLNN_ERR_PARAM_NULLPTR, "%s_call: %s is NULL", OP, lib ? "symbol" : "lib");
    if (nparam < 0 || ngrads < 0 || ngrads > nparam)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%s_call: nparam %d and ngrads %d: need 0 <= ngrads <= nparam", OP, nparam,
                       ngrads);
    if (nparam > 0 && (!params || !ndims || !shapes || !dtypes))
        return og_fail(ACLNN_ERR_PARAM_NULLPTR,
                       "%s_call: params, ndims, shapes and dtypes must "
                       "not be NULL when nparam > 0",
                       OP);
    aclnnStatus s = refresh(lib);
    if (s != ACLNN_SUCCESS) return s;
    pthread_rwlock_rdlock(&lib->lock);
    opgrad_aot_fn fn;
    void *p = symbol_locked(lib, symbol);
    memcpy(&fn, &p, sizeof fn); // object pointer to function pointer, as dlsym requires
    int rc = fn ? fn(nparam, params, ndims, shapes, dtypes, NULL, NULL) : 0;
    *kernel_rc = rc;
    if (fn && rc == 0 && ngrads > 0 && opgrad_debug_grads_enabled()) {
        // the spec's names when an adapter gave them, else grad<k> (the aot ABI has no names)
        const grad_names *g = find_names(lib, symbol);
        char name[32];
        for (int k = 0; k < ngrads; k++) {
            int i = nparam - ngrads + k;
            if (!g || k >= g->n) snprintf(name, sizeof name, "grad%d", k);
            opgrad_debug_grads_log(g && g->op ? g->op : symbol, k,
                                   g && k < g->n ? g->names[k] : name, dtypes[i], ndims[i],
                                   shapes[i], params[i]);
        }
    }
    pthread_rwlock_unlock(&lib->lock);
    if (!fn)
        return og_fail(ACLNN_ERR_PARAM_INVALID, "%s: symbol '%s' not found in '%s'", OP, symbol,
                       lib->path);
    if (rc != 0)
        return og_fail(ACLNN_ERR_INNER, "%s: '%s' in '%s' returned %d", OP, symbol, lib->path, rc);
    return ACLNN_SUCCESS;
}

int opgrad_custom_load_count(const opgrad_custom_lib *lib) { return lib ? lib->loads : 0; }

const char *opgrad_custom_loaded_path(const opgrad_custom_lib *lib) {
    return lib ? lib->loaded : NULL;
}

void opgrad_custom_close(opgrad_custom_lib *lib) {
    if (!lib) return;
    if (lib->handle) dlclose(lib->handle);
    while (lib->names) {
        grad_names *next = lib->names->next;
        free_names(lib->names);
        lib->names = next;
    }
    pthread_rwlock_destroy(&lib->lock);
    free(lib);
}
