/* MindSpore's aot attributes, read from its AotExtra object (aot_extra.h). Built only into the
 * shared libopgrad, with -D_GLIBCXX_USE_CXX11_ABI=0 (CMakeLists.txt): MindSpore's wheels use the
 * pre-C++11 std::string (their custom_aot_extra.h is compiled by its docs with that flag, and the
 * kernel library's symbols mangle std::string as the old `Ss`/`Sb`), and the virtual methods
 * below take a std::string by value.
 *
 * MsAotExtra declares the virtual functions of MindSpore's mindspore::AotExtra in the order of its
 * header (include/mindspore/ccsrc/utils/custom_aot_extra.h, MindSpore 2.x), so the Itanium C++
 * ABI gives them the same vtable slots: the two destructor entries, HasAttr, GetAttrBool,
 * GetAttrInt, GetAttrFloat, GetAttrStr, then the vector getters (declared for the layout, never
 * called). Only the vtable is used; the class is never constructed here.
 *
 * MindSpore's getters throw (MS_LOG(EXCEPTION)) when the attribute has another type; every call
 * is inside try/catch, so nothing propagates into the C callers. */
#include "aot/aot_extra.h"

#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <typeinfo>
#include <vector>

#include "opgrad/custom_op.h"

// A named namespace, not an anonymous one: with internal linkage the compiler would see that no
// class derives from MsAotExtra and turn every call of its pure virtuals into
// __cxa_pure_virtual (GCC does, "pure virtual method called").
namespace opgrad_mindspore {

class MsAotExtra {
  public:
    virtual ~MsAotExtra() = default;
    virtual bool HasAttr(std::string name) = 0;
    virtual bool GetAttrBool(std::string name) = 0;
    virtual int64_t GetAttrInt(std::string name) = 0;
    virtual float GetAttrFloat(std::string name) = 0;
    virtual std::string GetAttrStr(std::string name) = 0;
    virtual std::vector<int64_t> GetAttrIntVec(std::string name) = 0;
    virtual std::vector<float> GetAttrFloatVec(std::string name) = 0;
    virtual std::vector<std::vector<int64_t>> GetAttrInt2DVec(std::string name) = 0;
    virtual std::vector<std::vector<float>> GetAttrFloat2DVec(std::string name) = 0;
};

} // namespace opgrad_mindspore

namespace {

using opgrad_mindspore::MsAotExtra;

// The dynamic type MindSpore's CPU and GPU aot kernels pass (their member `AotExtraImpl attrs_`).
const char kImplName[] = "N9mindspore12AotExtraImplE";

// extra as MindSpore's AotExtraImpl, or nullptr. Its vtable pointer and the type_info before the
// vtable must both lie in a loaded library (dladdr), so that a foreign non-NULL `extra` whose
// first word is not a vtable is not followed further than that word.
__attribute__((no_sanitize("vptr"))) MsAotExtra *as_mindspore(void *extra) {
    if (!extra) return nullptr;
    void *vptr;
    std::memcpy(&vptr, extra, sizeof vptr);
    Dl_info info;
    if (!vptr || (reinterpret_cast<uintptr_t>(vptr) % alignof(void *)) != 0 || !dladdr(vptr, &info))
        return nullptr;
    const std::type_info *ti;
    std::memcpy(&ti, static_cast<char *>(vptr) - sizeof(void *), sizeof ti);
    if (!ti || !dladdr(ti, &info)) return nullptr;
    const char *name = ti->name();
    if (!name || !dladdr(name, &info) || std::strcmp(name, kImplName) != 0) return nullptr;
    return static_cast<MsAotExtra *>(extra);
}

void say(char *why, size_t cap, const char *text) {
    if (why && cap) std::snprintf(why, cap, "%s", text);
}

__attribute__((no_sanitize("vptr"))) bool has(MsAotExtra *x, const char *name) {
    try {
        return x->HasAttr(std::string(name));
    } catch (...) {
        return false;
    }
}

} // namespace

extern "C" __attribute__((no_sanitize("vptr"))) int
og_aot_extra_number(void *extra, const char *name, double *out, char *why, size_t why_cap) {
    MsAotExtra *x = as_mindspore(extra);
    if (!x || !name || !*name || !has(x, name)) return OG_ATTR_ABSENT;
    try { // a float attribute (a Python float), else an int, else a bool
        *out = static_cast<double>(x->GetAttrFloat(std::string(name)));
        return OG_ATTR_FOUND;
    } catch (...) {
    }
    try {
        *out = static_cast<double>(x->GetAttrInt(std::string(name)));
        return OG_ATTR_FOUND;
    } catch (...) {
    }
    try {
        *out = x->GetAttrBool(std::string(name)) ? 1.0 : 0.0;
        return OG_ATTR_FOUND;
    } catch (...) {
    }
    say(why, why_cap, "is not a number (float, int or bool)");
    return OG_ATTR_BAD;
}

extern "C" __attribute__((no_sanitize("vptr"))) int og_aot_extra_string(void *extra,
                                                                        const char *name, char *out,
                                                                        size_t cap, char *why,
                                                                        size_t why_cap) {
    MsAotExtra *x = as_mindspore(extra);
    if (!x || !name || !*name || !out || !cap || !has(x, name)) return OG_ATTR_ABSENT;
    try {
        std::string s = x->GetAttrStr(std::string(name));
        if (s.size() >= cap || std::memchr(s.data(), 0, s.size())) {
            say(why, why_cap, "is too long or holds a NUL byte");
            return OG_ATTR_BAD;
        }
        std::memcpy(out, s.c_str(), s.size() + 1);
        return OG_ATTR_FOUND;
    } catch (...) {
    }
    say(why, why_cap, "is not a string");
    return OG_ATTR_BAD;
}

extern "C" int og_aot_extra_supported(void) { return 1; }
