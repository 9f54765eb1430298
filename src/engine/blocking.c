/* The engines' size gates (engine/blocking.h). */
#include "engine/blocking.h"

#include "runtime/cpu.h"

#include <stdbool.h>
#include <stdlib.h>

static og_size_gates overridden;
static bool is_overridden;

og_size_gates og_size_gates_get(void) {
    if (is_overridden) return overridden;
    const char *nt = getenv("OPGRAD_NT_BYTES"), *prefault = getenv("OPGRAD_PREFAULT_BYTES");
    const char *ymm = getenv("OPGRAD_YMM_STREAM_BYTES");
    return (og_size_gates){
        .nt_out_bytes = nt ? atoll(nt) : (int64_t)16 << 20,
        .stream_in_bytes = (int64_t)4 << 20,
        .row_prefetch_bytes = (int64_t)16 << 20,
        .prefault_out_bytes = prefault ? atoll(prefault) : (int64_t)4 << 20,
        .ymm_stream_bytes = ymm                   ? atoll(ymm)
                            : og_cpu_halves_512() ? (int64_t)4 << 20
                                                  : 0,
    };
}

bool og_ymm_stream(int64_t thread_bytes) {
    int64_t gate = og_size_gates_get().ymm_stream_bytes;
    return gate > 0 && thread_bytes >= gate;
}

void og_size_gates_set(const og_size_gates *gates) {
    is_overridden = gates != NULL;
    if (gates) overridden = *gates;
}
