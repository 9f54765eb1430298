/* The attribute reader without C++ (aot_extra.h): weak definitions that report every attribute
 * absent, so the entry points keep their defaults. The shared libopgrad links aot_extra.cpp's
 * strong definitions over these when a C++ compiler built it; the static library always has
 * these (it must link into plain C programs without libstdc++). */
#include "aot/aot_extra.h"

__attribute__((weak)) int og_aot_extra_number(void *extra, const char *name, double *out, char *why,
                                              size_t why_cap) {
    (void)extra, (void)name, (void)out, (void)why, (void)why_cap;
    return OG_ATTR_ABSENT;
}

__attribute__((weak)) int og_aot_extra_string(void *extra, const char *name, char *out, size_t cap,
                                              char *why, size_t why_cap) {
    (void)extra, (void)name, (void)out, (void)cap, (void)why, (void)why_cap;
    return OG_ATTR_ABSENT;
}

__attribute__((weak)) int og_aot_extra_supported(void) { return 0; }
