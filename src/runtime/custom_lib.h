/* Internal entry points of the custom-operator loader (custom_lib.c), beyond the public
 * opgrad/custom_op.h: the checker needs the kernel's own return code, and adapters that know
 * the operator's spec give the gradient monitor its names. */
#ifndef OG_CUSTOM_LIB_H
#define OG_CUSTOM_LIB_H

#include "opgrad/custom_op.h"

/// opgrad_custom_open without the private copy: dlopen of the file itself. Only for a process
/// that has never loaded `path` (the checker's one-call child processes), where dlopen's cache
/// cannot hand back an old build, and a copy would only cost time (and be left behind by a child
/// killed inside dlopen). A reload after a rebuild still goes through a copy.
aclnnStatus og_custom_open_direct(const char *path, opgrad_custom_lib **lib);

/// opgrad_custom_call that also hands back the kernel's own return value (*kernel_rc, 0 when
/// the kernel was not reached): the public call folds every nonzero code into ACLNN_ERR_INNER.
aclnnStatus og_custom_call_rc(opgrad_custom_lib *lib, const char *symbol, int nparam, void **params,
                              int *ndims, int64_t **shapes, const char **dtypes, int ngrads,
                              int *kernel_rc);

/// Names for the gradient monitor's lines of `symbol` (a backward): the operator's name (NULL:
/// the symbol) and one name per gradient, in order (the spec's input names). Later calls of
/// `symbol` with ngrads > 0 log "<op> grad[i] <names[i]>" instead of "<symbol> grad[i] grad<i>".
/// Copies the strings. ACLNN_ERR_PARAM_NULLPTR / _INVALID (ngrads out of [0, 64], a NULL or
/// empty name) with a message; ngrads 0 forgets the names.
OPGRAD_API aclnnStatus opgrad_custom_set_grad_names(opgrad_custom_lib *lib, const char *symbol,
                                                    const char *op, int ngrads,
                                                    const char *const *names);

#endif
