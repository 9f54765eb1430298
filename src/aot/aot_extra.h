/* Reading MindSpore's operator attributes from the `extra` argument of an aot call.
 *
 * MindSpore's CPU (and GPU) aot kernel passes `extra` = its `AotExtraImpl` object (a C++ class,
 * mindspore/ccsrc/utils/custom_aot_extra.h in the wheel's include/ tree) whose virtual methods
 * `HasAttr(std::string)` and `GetAttrFloat/Int/Bool/Str(std::string)` read the attributes of the
 * Custom primitive (set with `op.add_prim_attr(name, value)` or `CustomRegOp().attr(...)`). C
 * cannot call them, so aot_extra.cpp (built when a C++ compiler is available, linked into the
 * shared libopgrad only) does, with MindSpore's std::string ABI (the pre-C++11 one: its wheels are
 * built with _GLIBCXX_USE_CXX11_ABI=0). Without it (the static library, or no C++ compiler) the
 * weak definitions of aot_extra_stub.c report every attribute absent: the defaults apply.
 *
 * `extra` is used only when it is MindSpore's object: its dynamic type must be
 * mindspore::AotExtraImpl (checked through its type_info, whose vtable must lie in a loaded
 * library); NULL or anything else reads as "no attributes". */
#ifndef OG_AOT_EXTRA_H
#define OG_AOT_EXTRA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { OG_ATTR_ABSENT = 0, OG_ATTR_FOUND = 1, OG_ATTR_BAD = -1 };

/// Attribute `name` as a number (a float, int or bool attribute): OG_ATTR_FOUND and *out,
/// OG_ATTR_ABSENT, or OG_ATTR_BAD with the reason in why (a string or list attribute, say).
int og_aot_extra_number(void *extra, const char *name, double *out, char *why, size_t why_cap);
/// Attribute `name` as a string: OG_ATTR_FOUND and out (NUL-ended, at most cap - 1 bytes),
/// OG_ATTR_ABSENT, or OG_ATTR_BAD with the reason (not a string, or too long).
int og_aot_extra_string(void *extra, const char *name, char *out, size_t cap, char *why,
                        size_t why_cap);
/// 1 when this build can read MindSpore attributes (the C++ reader is linked in), else 0.
int og_aot_extra_supported(void);

#ifdef __cplusplus
}
#endif
#endif
