/* act_cpe: TSC cycles per element of the activation compute functions (the fp32 kernels the
 * elementwise engine calls per tile), called directly on L1-resident data, per ISA.
 *
 *   act_cpe [--n N] [--reps R] [--range LO HI] [--kernels a,b,...]
 *
 * For each kernel and ISA: R timed calls on the same n elements (default 2048, x uniform in
 * [-6, 6] as bench/torch_ops.py, g uniform in [-4, 4]); the minimum over the calls is printed
 * (the minimum is what survives the noise of a shared machine). A second column gives the
 * median. Information only: nothing is judged. (The kernel tests print no timings: what they
 * measured is here.) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#include "opgrad/opgrad.h"
#include "ops/activation/elu/elu_kernel.h"
#include "ops/activation/gelu/gelu_kernel.h"
#include "ops/activation/hardsigmoid/hardsigmoid_kernel.h"
#include "ops/activation/hardswish/hardswish_kernel.h"
#include "ops/activation/leaky_relu/leaky_relu_kernel.h"
#include "ops/activation/mish/mish_kernel.h"
#include "ops/activation/relu/relu_kernel.h"
#include "ops/activation/sigmoid/sigmoid_kernel.h"
#include "ops/activation/silu/silu_kernel.h"
#include "ops/activation/softplus/softplus_kernel.h"
#include "ops/activation/tanh/tanh_kernel.h"

typedef struct kern {
    const char *name;
    const og_ew_compute_fn *table;
    int nin;
    int from_output; // second input is the forward's output: 1 sigmoid(x), 2 tanh(x)
    int params; // 0 none, 1 softplus(1, 20), 2 elu(1, 1, 1), 3 softplus(0.7, 12), 4 threshold 0,
                // 5 leaky slope 0.01, 6 elu(1, 1, -1.5), 7 elu(inf, 2, 1) (saturated)
} kern;

static const kern KERNS[] = {
    {"sigmoid_fwd", og_sigmoid_fwd_kernels, 1, 0, 0},
    {"sigmoid_bwd", og_sigmoid_bwd_kernels, 2, 1, 0},
    {"silu_fwd", og_silu_fwd_kernels, 1, 0, 0},
    {"silu_bwd", og_silu_bwd_kernels, 2, 0, 0},
    {"softplus_fwd", og_softplus_fwd_kernels, 1, 0, 1},
    {"softplus_bwd", og_softplus_bwd_kernels, 2, 0, 1},
    {"hardswish_fwd", og_hardswish_fwd_kernels, 1, 0, 0},
    {"hardswish_bwd", og_hardswish_bwd_kernels, 2, 0, 0},
    {"hardsigmoid_fwd", og_hardsigmoid_fwd_kernels, 1, 0, 0},
    {"hardsigmoid_bwd", og_hardsigmoid_bwd_kernels, 2, 0, 0},
    {"elu_fwd", og_elu_fwd_kernels, 1, 0, 2},
    {"elu_bwd", og_elu_bwd_kernels, 2, 0, 2},
    {"elu_bwd_result", og_elu_bwd_result_kernels, 2, 0, 2},
    {"elu_fwd(is=-1.5)", og_elu_fwd_kernels, 1, 0, 6},
    {"elu_bwd(is=-1.5)", og_elu_bwd_kernels, 2, 0, 6},
    {"elu_fwd(a=inf)", og_elu_fwd_kernels, 1, 0, 7},
    {"softplus_fwd(b=.7)", og_softplus_fwd_kernels, 1, 0, 3},
    {"softplus_bwd(b=.7)", og_softplus_bwd_kernels, 2, 0, 3},
    {"relu_fwd", og_relu_fwd_kernels, 1, 0, 0},
    {"threshold_bwd", og_threshold_bwd_kernels, 2, 0, 4},
    {"leaky_relu_fwd", og_leaky_relu_fwd_kernels, 1, 0, 5},
    {"leaky_relu_bwd", og_leaky_relu_bwd_kernels, 2, 0, 5},
    {"tanh_fwd", og_tanh_fwd_kernels, 1, 0, 0},
    {"tanh_bwd", og_tanh_bwd_kernels, 2, 2, 0},
    {"mish_fwd", og_mish_fwd_kernels, 1, 0, 0},
    {"mish_bwd", og_mish_bwd_kernels, 2, 0, 0},
    {"gelu_tanh_fwd", og_gelu_tanh_fwd_kernels, 1, 0, 0},
    {"gelu_tanh_bwd", og_gelu_tanh_bwd_kernels, 2, 0, 0},
    {"gelu_erf_fwd", og_gelu_erf_fwd_kernels, 1, 0, 0},
    {"gelu_erf_bwd", og_gelu_erf_bwd_kernels, 2, 0, 0},
};
enum { NK = sizeof KERNS / sizeof KERNS[0] };

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double uniform(double lo, double hi) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return lo + (hi - lo) * (double)(rng >> 11) * 0x1p-53;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int selected(const char *list, const char *name) {
    if (!list) return 1;
    size_t len = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += len)
        if ((p == list || p[-1] == ',') && (p[len] == ',' || p[len] == 0)) return 1;
    return 0;
}

int main(int argc, char **argv) {
    int n = 2048, reps = 2000;
    double lo = -6, hi = 6;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc)
            n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--range") && i + 2 < argc)
            lo = atof(argv[++i]), hi = atof(argv[++i]);
        else if (!strcmp(argv[i], "--kernels") && i + 1 < argc)
            only = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--n N] [--reps R] [--range LO HI] [--kernels a,b,...]\n",
                    argv[0]);
            return 2;
        }
    }
    float *x = aligned_alloc(64, (size_t)n * 4 + 64), *g = aligned_alloc(64, (size_t)n * 4 + 64);
    float *y = aligned_alloc(64, (size_t)n * 4 + 64), *o = aligned_alloc(64, (size_t)n * 4 + 64);
    float *t = aligned_alloc(64, (size_t)n * 4 + 64);
    for (int i = 0; i < n; i++) {
        x[i] = (float)uniform(lo, hi), g[i] = (float)uniform(-4, 4);
        y[i] = 1.0f / (1.0f + expf(-x[i]));
        t[i] = tanhf(x[i]);
    }
    og_softplus_params sp = {1.0f, 20.0f, 1.0, 20.0}, sp_odd = {0.7f, 12.0f, 0.7f, 12.0f};
    og_elu_params ep = og_elu_make_params(1.0f, 1.0f, 1.0f);
    og_elu_params ep_neg = og_elu_make_params(1.0f, 1.0f, -1.5f);
    og_elu_params ep_sat = og_elu_make_params(INFINITY, 2.0f, 1.0f);
    og_threshold_params th = {0};
    og_leaky_relu_params lr = {0.01f, 0.01f};
    const void *const PARAMS[] = {NULL, &sp, &ep, &sp_odd, &th, &lr, &ep_neg, &ep_sat};
    uint64_t *ts = malloc((size_t)reps * sizeof *ts);
    opgrad_isa top = opgrad_cpu_isa();
    printf(
        "# TSC cycles per element, n = %d fp32 (x uniform in [%g, %g]), min (median) of %d calls\n",
        n, lo, hi, reps);
    printf("%-18s", "kernel");
    for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++)
        printf(" %17s", opgrad_isa_name((opgrad_isa)isa));
    printf("\n");
    for (int k = 0; k < NK; k++) {
        if (!selected(only, KERNS[k].name)) continue;
        const void *params = PARAMS[KERNS[k].params];
        const float *in[2] = {KERNS[k].nin == 2 ? g : x, KERNS[k].from_output == 1   ? y
                                                         : KERNS[k].from_output == 2 ? t
                                                                                     : x};
        float *out[1] = {o};
        printf("%-18s", KERNS[k].name);
        for (int isa = 0; isa < OPGRAD_ISA_COUNT; isa++) {
            if (isa > (int)top) {
                printf(" %17s", "-");
                continue;
            }
            int r = isa == OPGRAD_ISA_SCALAR ? (reps + 9) / 10 : reps;
            for (int w = 0; w < 10; w++) KERNS[k].table[isa]((size_t)n, in, out, params);
            for (int rep = 0; rep < r; rep++) {
                uint64_t t0 = __rdtsc();
                KERNS[k].table[isa]((size_t)n, in, out, params);
                ts[rep] = __rdtsc() - t0;
            }
            qsort(ts, (size_t)r, sizeof *ts, cmp_u64);
            printf("   %6.3f (%6.3f)", (double)ts[0] / n, (double)ts[r / 2] / n);
        }
        printf("\n");
    }
    free(x), free(g), free(y), free(o), free(t), free(ts);
    return 0;
}
