/* The operator list (src/ops/ops.inc) as C declarations: og_op_<Name>, the descriptor every
 * phase-1 function passes to the engine, and the list itself for the adapters, the checker and
 * the tests. */
#ifndef OG_OPS_H
#define OG_OPS_H

#include "engine/opdesc.h"

#define OG_OP(family, Name, kind, grad, aot, params) extern const og_opdesc og_op_##Name;
#include "ops/ops.inc"
#undef OG_OP

/// Every operator of ops.inc, in list order.
extern const og_opdesc *const og_ops[];
extern const int og_ops_count;

/// The operator named `name` ("aclnnMish" or "Mish"), or NULL.
const og_opdesc *og_op_find(const char *name);

/// A forward's backward operator (its "grad" entry), or NULL (none, or composite).
const og_opdesc *og_op_grad(const og_opdesc *op);

#endif
