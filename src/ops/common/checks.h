/* The phase-1 helpers every operator shares: argument checks with one wording per rule, and the
 * common planning shapes on the engines. Each check returns ACLNN_SUCCESS or the aclnn status
 * (161001 for a NULL, 161002 for a broken rule) with a message that names the function, the
 * argument and the rule, e.g.
 *   aclnnMishBackwardGetWorkspaceSize: gradInput has shape [4,3] but the inputs broadcast to [4,2]
 * Host code only. */
#ifndef OG_OPS_COMMON_CHECKS_H
#define OG_OPS_COMMON_CHECKS_H

#include <stdbool.h>

#include "engine/elementwise.h"
#include "engine/executor.h"
#include "ops/ops.h"
#include "runtime/error.h"
#include "tensor/dtype.h"
#include "tensor/tensor.h"

/// Returns from the calling function when a check fails.
#define OG_TRY(expr)                                                                               \
    do {                                                                                           \
        aclnnStatus st_ = (expr);                                                                  \
        if (st_ != ACLNN_SUCCESS) return st_;                                                      \
    } while (0)

/// The out-pointers (workspaceSize, executor), then every pointer argument, non-NULL (161001),
/// in the order aclnn checks them.
aclnnStatus og_check_args(const og_opdesc *op, uint64_t *workspaceSize, aclOpExecutor **executor,
                          int n, const char *const *names, const void *const *ptrs);
/// Each tensor is a live aclTensor that fits its aclrtMalloc block (161002 naming it): for what
/// an operator reads of its tensors before og_check_tensor, such as the empty-tensor shortcut.
aclnnStatus og_check_live_tensors(const og_opdesc *op, int n, const char *const *names,
                                  const aclTensor *const *tensors);
/// A tensor list (L, LR, LO): a live aclTensorList whose every entry is a live aclTensor that
/// fits its block (161002, naming "name[i]"); *size receives its length.
aclnnStatus og_check_tensor_list(const og_opdesc *op, const char *name, const aclTensorList *list,
                                 uint64_t *size);
/// A tensor: a live aclTensor (og_check_live), dtype float32, float16 or bfloat16 and rank in
/// [min_rank, 8] (161002).
aclnnStatus og_check_tensor(const og_opdesc *op, const char *name, const aclTensor *t,
                            int min_rank);
/// The same for a tensor that may also have another dtype of `dtypes` (an OG_DT mask): 161002
/// names the dtypes it takes.
aclnnStatus og_check_tensor_of(const og_opdesc *op, const char *name, const aclTensor *t,
                               int min_rank, unsigned long long dtypes);
/// Integer and bool dtypes (the inputs a promoting operator casts to its float type).
#define OG_DTS_INTEGRAL                                                                            \
    (OG_DT(ACL_INT8) | OG_DT(ACL_UINT8) | OG_DT(ACL_INT16) | OG_DT(ACL_INT32) | OG_DT(ACL_INT64) | \
     OG_DT(ACL_BOOL))
/// A view whose data address is the start of an aclrtMalloc / aclrtMallocHost block ends inside
/// it (161002); part of og_check_tensor.
aclnnStatus og_check_fits_block(const og_opdesc *op, const char *name, const aclTensor *t);
/// A dtype argument (ReduceSum's `dtype`): float32, float16 or bfloat16 (161002).
aclnnStatus og_check_dtype_arg(const og_opdesc *op, const char *name, aclDataType dt);
/// Same shape / same dtype (161002).
aclnnStatus og_check_same_shape(const og_opdesc *op, const char *name_a, const aclTensor *a,
                                const char *name_b, const aclTensor *b);
aclnnStatus og_check_same_dtype(const og_opdesc *op, const char *name_a, const aclTensor *a,
                                const char *name_b, const aclTensor *b);
/// The inputs broadcast together and `out` has exactly the broadcast shape (161002).
aclnnStatus og_check_broadcast_to(const og_opdesc *op, int n, const char *const *names,
                                  const aclTensor *const *inputs, const char *out_name,
                                  const aclTensor *out);
/// Promotes the inputs' dtypes (PyTorch rules) into *promoted, which must be floating; out's
/// dtype must be castable from it (161002).
aclnnStatus og_check_promotion(const og_opdesc *op, int n, const char *const *names,
                               const aclTensor *const *inputs, const char *out_name,
                               const aclTensor *out, aclDataType *promoted);
/// The result dtype `from` must be castable to out's dtype (161002).
aclnnStatus og_check_castable(const og_opdesc *op, aclDataType from, const char *out_name,
                              const aclTensor *out);
/// A scalar attribute: a real dtype (floating, integer or bool; 161002). *value = its value as
/// float32 (aclnn's ToFloat: IEEE rounding, out of range -> +-inf), when value is not NULL.
aclnnStatus og_check_scalar(const og_opdesc *op, const char *name, const aclScalar *s,
                            float *value);
/// The same for a scalar parameter whose aclnn operator takes fewer dtypes (`dtypes`, an OG_DT
/// mask): 161002 names the dtypes it takes.
aclnnStatus og_check_scalar_of(const og_opdesc *op, const char *name, const aclScalar *s,
                               unsigned long long dtypes, float *value);
/// A scalar's value as float32, rounded first to dt when that is a 16-bit float type (a scalar
/// operand of an operator computed in dt).
float og_scalar_in(const aclScalar *s, aclDataType dt);
/// A dim argument in [-rank, rank - 1], rank = max(ndim, 1) (161002); *axis = the dim in [0, rank).
aclnnStatus og_check_dim(const og_opdesc *op, const char *name, int64_t dim, int ndim, int *axis);

/// The kernels of an elementwise operation: fp32 per ISA level, and optionally fused 16-bit ones
/// and float64 ones (an operation with float64 kernels takes float64 tensors).
typedef struct og_ew_kernel {
    const og_ew_compute_fn *fp32;
    const og_ew_compute16_fn (*fused16)[2];
    const og_ew_compute64_fn *fp64;
    const og_ew_compute_fn *fp32_nt; // fp32 with non-temporal stores
    bool compute_bound;              // og_ew_op.compute_bound
    bool light;                      // og_ew_op.light
} og_ew_kernel;
/// An OG_EW_KERNEL3 kernel: fp32 (normal and non-temporal stores), fused 16-bit and float64.
#define OG_EW_KERNEL(name)                                                                         \
    ((og_ew_kernel){og_##name##_kernels, og_##name##_kernels16, og_##name##_kernels64,             \
                    og_##name##_nt_kernels, false, false})
/// An OG_EW_KERNEL3 kernel whose body is compute-bound (a transcendental forward).
#define OG_EW_KERNEL_HEAVY(name)                                                                   \
    ((og_ew_kernel){og_##name##_kernels, og_##name##_kernels16, og_##name##_kernels64,             \
                    og_##name##_nt_kernels, true, false})
/// An OG_EW_KERNEL3 kernel of a few operations on two inputs (og_ew_op.light: measured per
/// operator, bench/README.md).
#define OG_EW_KERNEL_LIGHT(name)                                                                   \
    ((og_ew_kernel){og_##name##_kernels, og_##name##_kernels16, og_##name##_kernels64,             \
                    og_##name##_nt_kernels, false, true})
#define OG_EW_KERNEL_FP32(name)                                                                    \
    ((og_ew_kernel){og_##name##_kernels, NULL, NULL, NULL, false, false})
/// fp32 and float64 kernels.
#define OG_EW_KERNEL_F64(name)                                                                     \
    ((og_ew_kernel){og_##name##_kernels, NULL, og_##name##_kernels64, NULL, false, false})
/// fp32 and float64 kernels, compute-bound.
#define OG_EW_KERNEL_F64_HEAVY(name)                                                               \
    ((og_ew_kernel){og_##name##_kernels, NULL, og_##name##_kernels64, NULL, true, false})

/// How an output's dtype relates to the input's.
typedef enum {
    OG_OUT_SAME_DTYPE, // the input's dtype
    OG_OUT_CASTABLE,   // any dtype the result casts to
    // forwards only: an integer or bool self is computed in out's dtype, which must be floating
    // (aclnn casts self to it); a floating self as OG_OUT_CASTABLE
    OG_OUT_FLOAT_FROM_ANY,
} og_out_rule;

/// og_plan_backward's options.
enum {
    OG_BWD_BROADCAST = 1, // the inputs broadcast (out has the broadcast shape); else equal shapes
    // integer and bool inputs promote too (PyTorch rules: INT32 with FLOAT is FLOAT); the
    // promoted type must be floating and each such input is cast to it
    OG_BWD_INT_PROMOTE = 2,
    // the last input (self) may be integer or bool, and then every input is cast to FLOAT
    OG_BWD_INT_SELF_AS_FLOAT = 4,
};

/// A forward y_k = f_k(self) with nout outputs of self's shape (out_rule for their dtype),
/// computed in self's dtype: checks the tensors, then plans on the elementwise engine. names:
/// self, then the outputs. The caller has checked the NULLs (og_check_args).
aclnnStatus og_plan_forward(const og_opdesc *op, og_ew_kernel k, const aclTensor *self, int nout,
                            const aclTensor *const *outs, const char *const *names,
                            og_out_rule rule, const void *params, size_t params_size,
                            uint64_t *workspaceSize, aclOpExecutor **executor);

/// A backward out = f(ins...): the inputs promote together (PyTorch rules) and, with
/// OG_BWD_BROADCAST in `flags`, broadcast (out has the broadcast shape), else all shapes are
/// equal; out's dtype follows `rule` relative to ins[nin - 1] (the forward's input or output)
/// or, castable, to the promoted type. names: the inputs, then out. The caller has checked the
/// NULLs.
aclnnStatus og_plan_backward(const og_opdesc *op, og_ew_kernel k, int nin,
                             const aclTensor *const *ins, const aclTensor *out,
                             const char *const *names, unsigned flags, og_out_rule rule,
                             const void *params, size_t params_size, uint64_t *workspaceSize,
                             aclOpExecutor **executor);

#endif
