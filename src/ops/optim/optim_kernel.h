/* The optimizers' per-ISA update kernels (optim_simd.c), over contiguous fp32 arrays: the
 * operators widen fp16/bf16 or strided tensors into fp32 chunk buffers first and round once on
 * store. Every operation is a separately rounded IEEE fp32 add, multiply, divide or square root
 * (no fma), so the scalar, AVX2 and AVX-512 builds give the same bits. */
#ifndef OG_OPTIM_KERNEL_H
#define OG_OPTIM_KERNEL_H

#include <stddef.h>

#include "opgrad/opgrad.h"

/// An Adam/AdamW step's constants, each computed in double on the host and rounded once.
typedef struct og_adam_coef {
    float grad_scale; // the gradient is divided by it when has_scale
    float decay;      // 1 - lr * weightDecay (decoupled decay: p *= decay)
    float beta1, one_minus_beta1, beta2, one_minus_beta2;
    float step_size;    // lr / (1 - beta1^t)
    float inv_bc2_sqrt; // 1 / sqrt(1 - beta2^t)
    float eps;
    int has_scale, maximize, amsgrad;
    int lerp; // m += (g - m) (1 - beta1) (ApplyAdamWV2, PyTorch's lerp_) instead of
              // m = beta1 m + (1 - beta1) g (FusedAdamw)
} og_adam_coef;

/// One AdamW step over n elements (c->has_scale, c->maximize as flags):
///   g' = +-g / scale; p = p decay; m = (see lerp); v = beta2 v + (1 - beta2) g'^2;
///   vmax = max(vmax, v) (amsgrad; vmax unused otherwise);
///   p = p - (step_size m) / (sqrt(amsgrad ? vmax : v) inv_bc2_sqrt + eps).
typedef void (*og_adam_fn)(float *p, const float *g, float *m, float *v, float *vmax, size_t n,
                           const og_adam_coef *c);

/// An SGD step's constants (torch.optim.SGD's documented rule).
typedef struct og_sgd_coef {
    float grad_scale, weight_decay, momentum, one_minus_dampening, lr;
    int has_scale, maximize, use_momentum, first_step, nesterov;
} og_sgd_coef;

/// One SGD step over n elements: g = g / scale (written back into g when has_scale: aclnn's
/// gradsRef); d = +-g + weight_decay p; buf = first_step ? d : momentum buf +
/// (1 - dampening) d; d = nesterov ? d + momentum buf : buf (when use_momentum); p = p - lr d.
typedef void (*og_sgd_fn)(float *p, float *g, float *buf, size_t n, const og_sgd_coef *c);

#define OG_OPTIM_DECLARE(sfx)                                                                      \
    void og_adam_step__##sfx(float *, const float *, float *, float *, float *, size_t,            \
                             const og_adam_coef *);                                                \
    void og_sgd_step__##sfx(float *, float *, float *, size_t, const og_sgd_coef *);
OG_OPTIM_DECLARE(scalar)
OG_OPTIM_DECLARE(avx2)
OG_OPTIM_DECLARE(avx512)

extern const og_adam_fn og_adam_step_kernels[OPGRAD_ISA_COUNT];
extern const og_sgd_fn og_sgd_step_kernels[OPGRAD_ISA_COUNT];

#endif
