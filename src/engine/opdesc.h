/* An operator's description: what its line in src/ops/ops.inc declares (src/ops/ops.c makes one
 * og_opdesc per line). The engine and the runtime read only these fields; they know no operator
 * by name.
 *
 * `params` is the line's parameter list as written there, e.g.
 *   "(T(self), S(beta, 1), S(threshold, 20), O(out))"
 * and og_opdesc_param() reads it one parameter at a time: its kind (below), its name, and the
 * default value an adapter uses when it has none of its own (aot entry points, opgrad.torch). */
#ifndef OG_OPDESC_H
#define OG_OPDESC_H

#include <stdbool.h>
#include <stdint.h>

#include "aclnn/aclnn_base.h"

typedef enum {
    OG_OP_FORWARD,  // FWD in ops.inc
    OG_OP_BACKWARD, // BWD: the gradient monitor logs its outputs
} og_op_kind;

/// The kinds of phase-1 parameters (the letters of ops.inc).
typedef enum {
    OG_PARAM_TENSOR,      // T  const aclTensor *, an input
    OG_PARAM_GRAD,        // G  const aclTensor *, the incoming gradient dL/dy of a backward
    OG_PARAM_RESULT,      // Y  const aclTensor *, the forward's output, read by a backward
    OG_PARAM_OUT,         // O  aclTensor *, an output
    OG_PARAM_REF,         // R  aclTensor *, updated in place (an input and an output)
    OG_PARAM_SCALAR,      // S  const aclScalar *
    OG_PARAM_INT,         // I  int64_t
    OG_PARAM_INT8,        // I8 int8_t
    OG_PARAM_BOOL,        // B  bool
    OG_PARAM_DOUBLE,      // D  double
    OG_PARAM_STRING,      // C  char *
    OG_PARAM_INT_ARRAY,   // A  const aclIntArray *
    OG_PARAM_DTYPE,       // DT aclDataType
    OG_PARAM_BOOL_ARRAY,  // BA const aclBoolArray * (an outputMask)
    OG_PARAM_TENSOR_LIST, // L  const aclTensorList *, input tensors
    OG_PARAM_REF_LIST,    // LR aclTensorList *, tensors updated in place
    OG_PARAM_OUT_LIST,    // LO aclTensorList *, output tensors
    OG_PARAM_FLOAT,       // F  float
    OG_PARAM_KIND_COUNT
} og_param_kind;

/// One phase-1 argument, by kind (the generated phase-1 thunks read the matching member).
typedef union og_arg {
    aclTensor *t;      // T G Y O R
    aclScalar *s;      // S
    int64_t i;         // I
    int8_t i8;         // I8
    bool b;            // B
    double d;          // D
    char *c;           // C
    aclIntArray *a;    // A
    aclDataType dtype; // DT
    aclBoolArray *ba;  // BA
    aclTensorList *tl; // L LR LO
    float f;           // F
} og_arg;

struct og_opdesc;
typedef aclnnStatus (*og_phase1_fn)(const og_arg *args, uint64_t *workspaceSize,
                                    aclOpExecutor **executor);
typedef aclnnStatus (*og_phase2_fn)(void *workspace, uint64_t workspaceSize,
                                    aclOpExecutor *executor, aclrtStream stream);

typedef struct og_opdesc {
    const char *name;   // "aclnnMish"
    const char *family; // "mish": src/ops/<family>/..., src/check/registry_<family>.c
    og_op_kind kind;
    const char *grad;   // a forward's backward operator as listed: "MishBackward", "" (none) or
                        // "composite" (adapters compose it from other operators)
    bool aot;           // has MindSpore aot entry points opgrad_<Name>, opgrad_<Name>Backward
    const char *params; // the phase-1 parameters, in ops.inc syntax
    int nparams;
    og_phase1_fn phase1; // aclnn<Name>GetWorkspaceSize over args[0 .. nparams)
    og_phase2_fn phase2; // aclnn<Name>
} og_opdesc;

/// One parameter of an og_opdesc, as og_opdesc_param reads it.
typedef struct og_param {
    og_param_kind kind;
    char name[48];
    char def[48]; // default value as written ("1", "0.01", "false", "none"), "" if none
} og_param;

/// Reads parameter i (0-based) of op; false when i is out of range.
bool og_opdesc_param(const og_opdesc *op, int i, og_param *p);

/// Whether a parameter kind is a tensor list (L, LR, LO).
static inline bool og_param_is_list(og_param_kind k) {
    return k == OG_PARAM_TENSOR_LIST || k == OG_PARAM_REF_LIST || k == OG_PARAM_OUT_LIST;
}

/// The name of the k-th output (O or R parameter) of op, or NULL.
const char *og_opdesc_output_name(const og_opdesc *op, int k, char *buf, int size);

#endif
