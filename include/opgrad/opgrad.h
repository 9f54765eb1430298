/* opgrad/opgrad.h - opgrad's own controls: threads, instruction set, version; and one extension
 * of the aclnn API (opgrad_executor_run). */
#ifndef OPGRAD_OPGRAD_H
#define OPGRAD_OPGRAD_H

#include <stddef.h>
#include <stdint.h>

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OPGRAD_VERSION_STRING "0.1.0"

/// Instruction-set levels of the kernels, in increasing order; each includes the ones below it
/// (a CPU's level is the highest whose features it and its OS all have).
typedef enum {
    OPGRAD_ISA_SCALAR = 0,
    OPGRAD_ISA_AVX2 = 1,        /* AVX2 + FMA + F16C */
    OPGRAD_ISA_AVX512 = 2,      /* AVX-512 F/BW/DQ/VL */
    OPGRAD_ISA_AVX512_BF16 = 3, /* + AVX512-BF16 (vcvtne2ps2bf16, vdpbf16ps) */
    OPGRAD_ISA_AVX512_FP16 = 4, /* + AVX512-FP16 */
    OPGRAD_ISA_AMX = 5, /* + AMX-TILE and AMX-BF16, with the kernel's permission to use them */
    OPGRAD_ISA_COUNT
} opgrad_isa;

/// Threads that run one operator (the "cores" of a plan). Default: OPGRAD_NUM_THREADS, or the
/// number of CPUs this process may use. n < 1 is refused (returns -1); returns 0 on success.
__attribute__((visibility("default"))) int opgrad_set_num_threads(int n);
__attribute__((visibility("default"))) int opgrad_get_num_threads(void);

/// Winograd F(4x4, 3x3) for 3x3 stride-1 fp32 convolutions with 8 or more channels per group
/// (aclnnConvolution, and ConvolutionBackward's gradInput): 4x fewer multiplies, a larger
/// rounding error (docs/ops/conv.md). Default on, or OPGRAD_WINOGRAD=0 in the environment; the
/// setting applies to executors made after the call. Returns the previous setting.
__attribute__((visibility("default"))) int opgrad_set_winograd(int on);
/// What an operator chose at plan time for an executor phase 1 returned, e.g. for
/// aclnnConvolutionBackward "gradInput: winograd F(4x4,3x3); gradWeight: implicit GEMM"; "" for
/// operators with one algorithm, or an executor that is not live.
struct aclOpExecutor;
__attribute__((visibility("default"))) const char *
opgrad_executor_algorithm(const struct aclOpExecutor *executor);
__attribute__((visibility("default"))) int opgrad_get_winograd(void);

/// Best ISA this CPU and OS support (CPUID + XGETBV).
__attribute__((visibility("default"))) opgrad_isa opgrad_cpu_isa(void);
/// ISA used for executors planned from now on: min(cpu, cap). The cap starts from OPGRAD_ISA
/// (scalar|avx2|avx512|avx512bf16|avx512fp16|amx; unset: no cap) and can be changed here.
/// Returns the ISA now in effect. Executors already planned keep the ISA they were planned with.
__attribute__((visibility("default"))) opgrad_isa opgrad_set_max_isa(opgrad_isa cap);
__attribute__((visibility("default"))) opgrad_isa opgrad_active_isa(void);
__attribute__((visibility("default"))) const char *opgrad_isa_name(opgrad_isa isa);

__attribute__((visibility("default"))) const char *opgrad_version(void);

/// The operator profiler. opgrad_profile_start records every phase-2 launch from now on (the
/// operator, its io dtypes and shapes, phase-1 plan time, phase-2 time, bytes of its io views,
/// GEMM FLOPs, threads, stream); opgrad_profile_stop writes them to `path` as Chrome trace-event
/// JSON (chrome://tracing, ui.perfetto.dev) and prints a per-operator summary (calls, time,
/// GB/s, GFLOP/s) on stderr. OPGRAD_PROFILE=path in the environment records the whole process
/// and writes at exit. start returns 0, or -1 when already recording or path is NULL / empty;
/// stop returns the number of events written, or -1 when not recording or the file could not be
/// written. Off, a launch costs one branch.
__attribute__((visibility("default"))) int opgrad_profile_start(const char *path);
__attribute__((visibility("default"))) long opgrad_profile_stop(void);

/// Re-points a repeatable executor and runs its phase 2, in one call: for i < naddrs, a non-NULL
/// addrs[i] re-points io slot i (inputs first, then outputs, in the order of the operator's
/// phase-1 signature; the same storage address aclSetInputTensorAddr / aclSetOutputTensorAddr
/// take, the view offset is kept), a NULL one leaves the slot as it is; then the executor runs
/// exactly as the operator's own aclnnXxx(workspace, workspaceSize, executor, stream) would
/// (same checks, same statuses and messages). The aclTensor handles given to phase 1 are not
/// updated (the executor never reads them after phase 1).
///
/// Only for executors made repeatable (aclSetAclOpExecutorRepeatable): a single-use executor is
/// refused (ACLNN_ERR_PARAM_INVALID) and stays usable by its aclnnXxx. Errors, each with
/// aclGetRecentErrMsg naming the argument: NULL executor, or NULL addrs with naddrs > 0
/// (ACLNN_ERR_PARAM_NULLPTR); an executor that is not live, single-use, or naddrs larger than its
/// number of io slots (ACLNN_ERR_PARAM_INVALID); then the phase-2 errors of aclnnXxx (workspace,
/// stream). On any error no slot is re-pointed: the executor is left as it was. Like
/// aclSetInputTensorAddr, one executor must not be re-pointed from two threads at once; a run
/// queued on a stream keeps the addresses of its own call.
__attribute__((visibility("default"))) aclnnStatus
opgrad_executor_run(aclOpExecutor *executor, void *const *addrs, size_t naddrs, void *workspace,
                    uint64_t workspaceSize, aclrtStream stream);

/// One operator of the library, as its line in the operator list declares it (src/ops/ops.inc):
/// adapters read the list instead of retyping it.
typedef struct opgrad_op_info {
    const char *name;   /* "aclnnSoftplus" */
    const char *family; /* "activation" */
    const char *kind;   /* "forward" or "backward" */
    const char *grad;   /* a forward's backward operator without the prefix ("SoftplusBackward"),
                           "" if none, "composite" when adapters compose it from other operators */
    const char *params; /* the phase-1 parameters before workspaceSize and executor, e.g.
                           "(T(self), S(beta, 1), S(threshold, 20), O(out))": T input tensor,
                           G incoming gradient, Y forward output, O output tensor, R tensor updated
                           in place, S aclScalar, I int64_t, I8 int8_t, B bool, D double,
                           C char *, A aclIntArray, DT aclDataType; a second item is the default */
    int aot;            /* libopgrad exports opgrad_<Name> and opgrad_<Name>Backward (aot ABI) */
} opgrad_op_info;

/// The number of operators, and operator `index` (0-based; returns -1 when out of range or info
/// is NULL, else 0). The strings live as long as the library.
__attribute__((visibility("default"))) int opgrad_op_count(void);
__attribute__((visibility("default"))) int opgrad_op_get(int index, opgrad_op_info *info);

#ifdef __cplusplus
}
#endif
#endif
