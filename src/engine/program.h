/* Step programs: what an executor runs.
 *
 * Phase 1 of an operator builds a program: a list of steps over slots. Slots 0 .. nio-1 are the
 * operator's tensors (inputs, then outputs, in phase-1 order); og_prog_temp adds temporaries,
 * contiguous tensors that live in the workspace, for values one step makes and a later step
 * reads. A step is
 *   MAP     an elementwise map (engine/elementwise.h): broadcasting, strides, dtypes, tiling;
 *   REDUCE  a reduction along any dims, sum / mean / max / min (engine/reduce.h), deterministic;
 *   ROWS    a row kernel along one axis (engine/rows.h): softmax, norms, losses;
 *   GEMM    a batched matrix product with its epilogue (engine/gemm.h);
 *   CUSTOM  an operator's own phase-2 function over the executor's slots (gathers, scatters,
 *           random bit masks: what none of the engines expresses), with its parameters copied
 *           into the step.
 * There is no fixed limit on slots or steps; every slot a step names is checked against the
 * program when the step is added (a bad one is an internal error, reported by og_prog_publish).
 * The workspace is laid out as [temporaries][scratch], the scratch being the largest any one step
 * needs (steps run one after the other), and its size is fixed in phase 1.
 *
 * Typical use (phase 1, after the operator's argument checks):
 *   og_prog p;
 *   og_prog_init(&p, &og_op_FusedAddScaleBackward, 4, 3, io);
 *   og_prog_reduce(&p, &r);      // ... more steps
 *   return og_prog_publish(&p, workspaceSize, executor);
 */
#ifndef OG_PROGRAM_H
#define OG_PROGRAM_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/elementwise.h"
#include "engine/executor.h"
#include "engine/gemm.h"
#include "engine/reduce.h"
#include "engine/rows.h"

typedef enum {
    OG_STEP_MAP,
    OG_STEP_REDUCE,
    OG_STEP_ROWS,
    OG_STEP_GEMM,
    OG_STEP_CUSTOM
} og_step_kind;

#define OG_CUSTOM_MAX_PARAMS 1024

/// A CUSTOM step's function (phase 2): reads and writes the executor's slots
/// (og_executor_addr), uses `scratch` (the step's scratch bytes) and runs its own threads
/// (og_parallel_for); its result must not depend on the thread count.
typedef void (*og_custom_fn)(const aclOpExecutor *e, const void *params, char *scratch);

typedef struct og_custom_plan {
    og_custom_fn run;
    void *heap; // parameters larger than `params` (a tensor list's views), owned by the executor
    _Alignas(16) unsigned char params[OG_CUSTOM_MAX_PARAMS];
} og_custom_plan;

typedef struct og_step {
    og_step_kind kind;
    uint64_t scratch; // workspace bytes the step uses after the temporaries
    union {
        og_ew_plan map;
        og_reduce_plan reduce;
        og_rows_plan rows;
        og_gemm_plan gemm;
        og_custom_plan custom;
    } plan;
} og_step;

typedef struct og_prog_tmp og_prog_tmp;

/// A program being built (phase 1).
typedef struct og_prog {
    const og_opdesc *op;
    int nin, nout;              // user slots
    const aclTensor *const *io; // [nin + nout], the caller's (outlives the builder)
    int ntemps, temps_cap;
    og_prog_tmp **temps;
    int nsteps, steps_cap;
    og_step *steps;
    uint64_t temp_bytes, scratch_bytes;
    aclnnStatus status;  // the first failure (sticky), ACLNN_SUCCESS
    char algorithm[160]; // what the operator chose, for opgrad_executor_algorithm
    double t0_us;        // when planning started, while profiling (runtime/profile.h); else 0
} og_prog;

void og_prog_init(og_prog *p, const og_opdesc *op, int nin, int nout, const aclTensor *const *io);
/// A contiguous temporary of dtype dt and shape dims (in the workspace): returns its slot and
/// sets *t to a tensor describing it (for the planners: its data pointer is NULL). -1 on failure.
int og_prog_temp(og_prog *p, aclDataType dt, int ndim, const int64_t *dims, const aclTensor **t);
/// Appends a step. The op's slots (og_ew_op.in_slot/out_slot with .slots set, og_reduce_op's,
/// og_rows_op's) name user slots or temporaries.
void og_prog_map(og_prog *p, const og_ew_op *op);
void og_prog_reduce(og_prog *p, const og_reduce_op *op);
void og_prog_rows(og_prog *p, const og_rows_op *op);
/// A GEMM step; fails the builder (161002, naming the operator) when a size overflows.
void og_prog_gemm(og_prog *p, const og_gemm_op *op);
/// A CUSTOM step: fn runs in phase 2 with a copy of params (of any size: up to
/// OG_CUSTOM_MAX_PARAMS bytes live in the step, more on the heap, freed with the executor), the
/// slots it names (checked here) and `scratch` bytes of workspace.
void og_prog_custom(og_prog *p, og_custom_fn fn, const void *params, size_t params_size,
                    const int *slots, int nslots, uint64_t scratch);
/// Appends "what" to the program's algorithm note ("; "-separated; cut at its size): the
/// algorithm an operator picked at plan time, reported by opgrad_executor_algorithm.
void og_prog_note(og_prog *p, const char *what);
/// Makes the executor (binds the user slots, sizes the workspace) and frees the builder; returns
/// the first failure of the building instead, if any.
aclnnStatus og_prog_publish(og_prog *p, uint64_t *workspaceSize, aclOpExecutor **executor);
/// Frees the builder without making an executor.
void og_prog_discard(og_prog *p);
/// Frees what steps own (a CUSTOM step's heap parameters); the executor calls it when it dies.
void og_prog_free_steps(og_step *steps, int nsteps);

/// The memory rules of operators whose outputs may share memory with an input element for element
/// (in place): every tensor has data (161001); an output never writes one address twice, and
/// overlaps another tensor only with the same layout (161002). names: inputs, then outputs.
aclnnStatus og_check_io_memory(const og_opdesc *op, int nin, const aclTensor *const *in, int nout,
                               const aclTensor *const *out, const char *const *names);

/// Runs an executor's program (phase 2, on the launching or the stream's thread).
void og_program_run(const aclOpExecutor *e, char *workspace);

#endif
