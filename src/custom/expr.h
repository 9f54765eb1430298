/* Reference expressions of custom operators: a small float64 language with NumPy broadcasting
 * and exact reverse-mode gradients (docs/custom-ops.md, "The reference expression language").
 *
 *   expr    := term (('+' | '-') term)*
 *   term    := unary (('*' | '/') unary)*
 *   unary   := '-' unary | power
 *   power   := primary ('^' unary)?            right-associative: 2^3^2 = 2^9, -x^2 = -(x^2)
 *   primary := number | variable | '(' expr ')' | function '(' args ')'
 *
 * Numbers use C's floating syntax (1, 2.5, .5, 1e-3). Functions: exp log sqrt abs tanh sigmoid
 * softplus erf relu (one argument), min max pow (two), and the reductions sum / mean: `sum(e)`
 * over every dim to a 0-d value, `sum(e, d...)` over the listed integer dims of e (negative dims
 * count from the end, each dim at most once; the reduced dims are removed).
 *
 * Values are row-major float64 arrays; every operand broadcasts by NumPy's rules (up to
 * OG_MAX_DIMS dims; 0-d and 1-element shapes broadcast against anything).
 *
 * Derivatives are exact formulas: softplus' = sigmoid, erf' = 2/sqrt(pi) exp(-x^2), sqrt' =
 * 0.5/sqrt(x), abs' = sign(x) (0 at 0), relu' = (x > 0), min/max pass the gradient to the
 * selected operand (ties: the first operand). For a^b (and pow(a, b)): d/da = b a^(b-1) (0 when
 * b == 0) and d/db = a^b log(a) for a > 0; for a <= 0 d/db is 0: a^b is real there only for
 * integer b, where no real derivative in b exists (and at a == 0, b > 0 the limit is 0).
 *
 * Magnitude bounds (`mag`, `gmag`) scale tolerances. They repeat the computation with every sum
 * of terms made a sum of absolute values: |a +- b| -> m(a) + m(b), m(a b) = m(a) m(b), sum ->
 * sum of m. A function of an argument a whose magnitude m(a) exceeds |a| (cancellation inside
 * a, e.g. exp(x - bias) with x ~ bias) adds first-order propagation of that excess:
 * m(f(a)) = |f(a)| + |f'(a)| (m(a) - |a|), so a bound never hides an argument's rounding; with
 * no cancellation (e.g. exp(x)) it is exactly |f(a)|. Every bound is >= the absolute value.
 */
#ifndef OG_CUSTOM_EXPR_H
#define OG_CUSTOM_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "check/check.h"

/// Most variables an expression can have (ogx_uses returns a bit mask).
#define OGX_MAX_VARS 32
/// Deepest nesting of parentheses, calls, unary minus and powers the parser accepts.
#define OGX_MAX_DEPTH 200
/// Most elements any value of an evaluation may have (its own and every intermediate's).
#define OGX_MAX_ELEMENTS ((int64_t)1 << 31)
/// Most bytes one ogx_eval or ogx_grad may allocate, all together: the parse tree, bookkeeping
/// per node and every intermediate value, magnitude bound and adjoint (float64 each; the caller's
/// inputs and outputs do not count). Checked from the shapes before any of it is allocated: an
/// evaluation over the cap fails with a message naming the expression and the cap, never
/// exhausting memory. E.g. ogx_grad with magnitudes keeps 4 doubles per element of every node.
#define OGX_MAX_BYTES ((int64_t)1 << 30)

typedef struct ogx_expr ogx_expr;

/// Parses `text` over the variables names[0..nvars) (nvars <= OGX_MAX_VARS, distinct names).
/// Returns NULL on a syntax error with a message naming the 1-based column and the problem in
/// err (when err != NULL), e.g. "at column 7: unknown function 'tnah' (...)" or "at column 5:
/// unknown variable 'bais' (variables: x, bias, scale)".
ogx_expr *ogx_parse(const char *text, int nvars, const char *const *names, char *err,
                    size_t errsize);
/// Frees an expression (NULL is fine).
void ogx_free(ogx_expr *e);

/// The result shape for the variable shapes var_shapes[0..nvars). False with a message on a
/// broadcast mismatch ("cannot broadcast [5,7] with [6] in 'x + bias'"), a bad reduction dim
/// ("sum over dim 2 of a rank-2 value in 'sum(x, 2)'"), a bad variable shape or a value of more
/// than OGX_MAX_ELEMENTS elements.
bool ogx_shape(const ogx_expr *e, const ogc_shape *var_shapes, ogc_shape *out, char *err,
               size_t errsize);

/// Evaluates in float64 (within OGX_MAX_BYTES). vars[k] is row-major over var_shapes[k] (may be
/// NULL for a variable the expression does not use); out is row-major over the result shape. mag
/// (may be NULL) receives a magnitude bound per output element (see above). *terms (terms may be
/// NULL) receives the largest number of values summed into one output element: the product of the
/// reduced extents (1 without reductions).
bool ogx_eval(const ogx_expr *e, const ogc_shape *var_shapes, const double *const *vars,
              double *out, double *mag, int64_t *terms, char *err, size_t errsize);

/// Reverse mode (within OGX_MAX_BYTES, counting the forward pass): given dout (row-major over the
/// result shape), writes d(sum dout*out)/d var_k into grads[k] (row-major over var_shapes[k]; grads
/// == NULL or grads[k] == NULL skips var k; an unused variable gets zeros). A broadcast variable
/// gets its gradient summed over the broadcast dims. gmag (may be NULL; per variable like grads,
/// entries may be NULL) receives magnitude bounds: |dout| times the magnitudes of the local
/// partials along every path, summed as absolute values (>= |gradient|). gterms (may be NULL;
/// otherwise written for every variable) receives the largest number of terms summed into one
/// gradient element: over the dims a variable broadcasts along, times its uses (0 for an unused
/// variable).
bool ogx_grad(const ogx_expr *e, const ogc_shape *var_shapes, const double *const *vars,
              const double *dout, double *const *grads, double *const *gmag, int64_t *gterms,
              char *err, size_t errsize);

/// The variables the expression uses: bit k set for variable k.
unsigned ogx_uses(const ogx_expr *e);

#endif
