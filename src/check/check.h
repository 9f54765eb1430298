/* The gradient-consistency checker.
 *
 * An operator is declared once (ogc_op): its inputs and which are differentiable, the tensors
 * its forward saves for the backward, dtypes, input domain and non-differentiable points,
 * per-element float64 references (forward, backward) written apart from the kernels, and entry
 * points that run the real kernels through the public aclnn API. Elementwise operators with
 * NumPy broadcasting are covered by per-element references: the checker itself reduces a
 * gradient over broadcast dims, so a reference never has to. Operators that are not elementwise
 * (reductions, parameters of a fixed shape such as a per-channel bias) add a shape hook and/or
 * tensor-level references (ogc_op.shapes, ref_forward_tensor, ref_backward_tensor), which the
 * checker uses instead of the per-element path.
 *
 * For one (operator, dtype, layout, seed) case the checker runs:
 *   O1  formula:   central differences with Richardson extrapolation on the float64 reference
 *                  forward against the float64 reference backward (full Jacobian or random
 *                  projections v^T J u);
 *   O2  kernels:   forward and backward at the dtype against the references evaluated at the
 *                  same quantized inputs, with a tolerance from the dtype, the reduction length
 *                  and a magnitude bound;
 *   contract:      result count, shapes and dtypes against the declaration (named diagnoses:
 *                  missing broadcast reduction, wrong gradient count, wrong dtype);
 *   linearity:     B(2g) = 2 B(g), B(0) = 0;
 *   in-place:      the operator's in-place form (aclnnInplaceXxx), where it has one, on the
 *                  case's own view of input 0: the reference values, nothing written outside it;
 *   determinism:   two runs, and 1 vs N threads (engine-sized layouts: 1, 2, 3 and N), bitwise
 *                  equal;
 *   trust:         outputs or gradients mostly zero, or an input never exercised: MISTRUSTED.
 */
#ifndef OG_CHECK_H
#define OG_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tensor/tensor.h"

#define OGC_MAX_IN 6
#define OGC_MAX_SAVED 3
#define OGC_MAX_RESULTS 6

typedef enum { OGC_PASS, OGC_FAIL, OGC_MISTRUSTED, OGC_SKIPPED } ogc_status;

/// A shape (row-major arrays of doubles go with it in the tensor-level references).
typedef struct ogc_shape {
    int ndim;
    int64_t dims[OG_MAX_DIMS];
} ogc_shape;
const char *ogc_status_name(ogc_status s);

/// One result an operator produced (a forward output, a saved tensor, or a gradient). The checker
/// fills in the declared shape and dtype and a contiguous buffer; an operator that produced
/// something else must say so by changing dims/dtype (or the result count), which is how the
/// checker sees integration mistakes.
typedef struct ogc_result {
    aclDataType dtype;
    int ndim;
    int64_t dims[OG_MAX_DIMS];
    void *data;
    size_t capacity; // bytes available at data
} ogc_result;

struct ogc_op;

/// Everything an operator's entry point gets. Inputs are aclTensors laid out as the case under
/// test says (contiguous, broadcast, strided, ...); saved and grad_out are contiguous.
typedef struct ogc_call {
    const struct ogc_op *op;
    aclDataType dtype;
    aclTensor *in[OGC_MAX_IN];
    aclTensor *saved[OGC_MAX_SAVED]; // backward: what the forward saved (saved[0] is the
                                     //   forward's output when the op sets backward_uses_output)
    aclTensor *grad_out;             // backward: dL/dy, output shape; the output's dtype
                                     //   except in the "mixed" layout
    ogc_result *results;             // forward: output then saved; backward: one per
                                     //   differentiable input, in input order
    int nresults;                    // declared count; the operator may lower or raise it
} ogc_call;

typedef struct ogc_arg {
    const char *name;
    bool differentiable;
} ogc_arg;

typedef struct ogc_op {
    const char *name; // registry name, e.g. "mish"
    const char *api;  // what it runs, e.g. "aclnnMish + aclnnMishBackward"
    int nin;
    ogc_arg in[OGC_MAX_IN];
    int nsaved; // extra forward outputs the backward consumes (after the output)
    const char *saved_names[OGC_MAX_SAVED];
    bool backward_uses_output; // the backward reads the forward's output (e.g. sigmoid, tanh):
                               // it arrives as saved[0] (nsaved must be 0)
    const double *attrs;       // operator attributes of this entry (alpha, beta, ...), for the refs
    unsigned long long dtypes; // OG_DT mask: dtypes the kernels support
    double lo, hi;             // input domain for test points
    const double *kinks;       // non-differentiable points (test points keep a margin)
    int nkinks;
    const double *specials; // values worth testing (parameters, cancellation, under/overflow)
    int nspecials;
    double fp32_ulps; // kernel error bound in fp32 ulps (forward and backward)
    /// float64 kernels (OG_DT(ACL_DOUBLE) in dtypes): the bound in double ulps of the kernel and
    /// the float64 reference together (both are double: the reference is no longer 2^-29 finer);
    /// 0 = OGC_FP64_ULPS
    double fp64_ulps;
    /// 16-bit results: how many times the fp32 result is rounded to the 16-bit dtype on its way
    /// out (0 = 1: computed in fp32 and rounded once, so correctly rounded up to the fp32 bound);
    /// more for a composite whose steps each round (e.g. aclnnReduceSum then aclnnMuls).
    int fwd_roundings16, bwd_roundings16;
    /// The output (and grad_output) is FLOAT whatever the inputs' dtype (FusedMatmul's
    /// "16cast32": the fp32 result of 16-bit inputs); it is judged as an fp32 result.
    bool fp32_output;
    /// Intervals [regions[2i], regions[2i+1]] the "sweep" layout covers densely, besides 0, the
    /// kinks, the specials and the domain: thresholds, overflow edges, polynomial ranges.
    const double *regions;
    int nregions;
    double zero_trust; // max share of zero outputs/gradients before MISTRUSTED (0 = 0.65)
    /// y = f(x) for one element; writes the saved values (nsaved of them).
    double (*ref_forward)(const struct ogc_op *op, const double *x, double *saved);
    /// dL/dx_k for one element given dL/dy = gy, the inputs and the saved values (saved[0] = the
    /// output y when backward_uses_output), at the values the kernel saw. mag[k] receives a
    /// magnitude bound: the same expression with every term made non-negative (0 = use |gx[k]|).
    void (*ref_backward)(const struct ogc_op *op, const double *x, const double *saved, double gy,
                         double *gx, double *mag);
    /// Kernels through the public API: return an aclnn status (0 = success). A forward-only
    /// entry (an optimizer step, a compressor: nothing differentiable) has every input
    /// non-differentiable (and backward NULL): its cases stop after the forward stages (values,
    /// determinism, in-place) and it has no formula check. Its forward must leave c->in as it
    /// found them (the checker runs it again): an operator that updates tensors in place runs
    /// on copies, and the copies' new values are its results.
    int (*forward)(ogc_call *c);
    int (*backward)(ogc_call *c);
    /// The in-place form (aclnnInplaceXxx), if the operator has one: updates c->in[0] in place
    /// (its view as the layout lays it out; the other inputs as in forward). No results.
    int (*forward_inplace)(ogc_call *c);

    // ---- operators that are not elementwise (all optional; NULL keeps the per-element path)
    /// The shapes of a case. Gets the layout's shapes (every input as the layout builds it, out =
    /// their broadcast) and may rewrite them (e.g. bias [C] next to x [N,C], or a reduced
    /// output). Returns false when the layout does not apply to the operator (SKIPPED).
    bool (*shapes)(const struct ogc_op *op, const char *layout, ogc_shape *in, ogc_shape *out);
    /// Tensor-level float64 forward, used instead of ref_forward: from the inputs x[k] (row-major
    /// over in[k]) writes y and saved[s] (row-major over out), mag (a magnitude bound per output
    /// element: the sum of |terms| it adds up; 0 = use |y|) and *terms (the number of values
    /// summed into one output element, which widens the tolerance as for reduced gradients).
    void (*ref_forward_tensor)(const struct ogc_op *op, const ogc_shape *in, const double *const *x,
                               const ogc_shape *out, double *y, double *const *saved, double *mag,
                               int64_t *terms);
    /// Tensor-level float64 backward, used instead of ref_backward: for dL/dy = gy (row-major over
    /// out) writes gx[k] and mag[k] (row-major over in[k], zeroed by the checker; mag 0 = use
    /// |gx|) and terms[k] for every differentiable input k.
    void (*ref_backward_tensor)(const struct ogc_op *op, const ogc_shape *in,
                                const double *const *x, const ogc_shape *out,
                                const double *const *saved, const double *gy, double *const *gx,
                                double *const *mag, int64_t *terms);
    /// Tensor-level operators whose non-differentiable points are not at fixed input values (a
    /// relu of a matrix product): whether the inputs x keep a margin from them. The checker
    /// redraws data that does not (up to 32 times, from the case's stream), as test points keep
    /// a margin from `kinks`, in the formula check and the kernel checks. NULL: every draw does.
    bool (*clear_of_kinks)(const struct ogc_op *op, const ogc_shape *in, const double *const *x);
} ogc_op;

typedef enum { OGC_MODE_FAST, OGC_MODE_FULL } ogc_mode;

/// The default float64 bound (ogc_op.fp64_ulps): a few roundings of each side's libm formula.
#define OGC_FP64_ULPS 8.0

/// Per-element errors of a case, for the HTML report (`opgrad check --html`, report_html.h):
/// recorded only when ogc_options.samples is set. A series holds a bounded, deterministic
/// selection of (x, ulp error) points (evenly spaced elements plus the largest errors; the
/// sweep layout's elements cover the operator's tested range) and a histogram of the errors of
/// every compared element.
#define OGC_SAMPLE_MAX 128  // points kept per series
#define OGC_SAMPLE_WORST 32 // ... of which the largest errors
#define OGC_HIST_BINS 17    // ogc_hist_bin

typedef struct ogc_point {
    double x;    // the input value at the element (its flat index when the series' x_is_index)
    float ulp;   // |got - ref| in ulps of the result's dtype at ref (INFINITY: non-finite)
    float ratio; // |got - ref| / the element's tolerance (> 1: beyond it)
} ogc_point;

typedef struct ogc_series {
    int n;           // points in p, sorted by x
    bool x_is_index; // x is the element's index (a forward whose output is not input-shaped)
    ogc_point p[OGC_SAMPLE_MAX];
    int64_t hist[OGC_HIST_BINS]; // every compared element, by ogc_hist_bin of its ulp error
} ogc_series;

/// The forward output's series (x: input 0 at the element) and the gradients' (x: the input
/// the gradient is of).
typedef struct ogc_samples {
    ogc_series fwd, bwd;
} ogc_samples;

/// The histogram bin of an ulp error: 0 for 0, 1 for (0, 2^-4), b = 2..15 for
/// [2^(b-6), 2^(b-5)), 16 for 2^10 and above or non-finite.
int ogc_hist_bin(double ulp);
/// Adds src's points and histogram to dst, keeping at most OGC_SAMPLE_MAX points: the
/// OGC_SAMPLE_WORST largest errors and, of the rest, points evenly spaced in x order.
void ogc_series_merge(ogc_series *dst, const ogc_series *src);

typedef struct ogc_options {
    ogc_mode mode;
    uint64_t seed;
    const char *layout; // NULL = all layouts
    bool verbose;
    ogc_samples *samples; // NULL (no cost), or where each case writes its per-element errors
} ogc_options;

/// The result of one case: status, error statistics of the worst-judged comparison, diagnoses.
typedef struct ogc_report {
    const char *op;
    aclDataType dtype; // ACL_DOUBLE for the O1 formula check (isa -1) and the float64 kernels
    const char *layout;
    uint64_t seed;
    int isa; // the ISA level the kernels ran at (opgrad_isa); -1 for the formula check
    ogc_status status;
    double max_abs, max_rel, max_ulp, mean_ulp, mere, mare;
    double bias_ulp;     // mean signed error in ulps, positive = larger in magnitude than the
                         // reference (truncation shows as about -0.25 for 16-bit results)
    int64_t compared;    // elements compared
    char diagnosis[512]; // the most specific diagnosis found, "" if none
    int diagnosis_rank;  // its specificity (checker.c: a named cause outranks a generic one)
    char repro[256];     // one-line reproducer
} ogc_report;

/// A contiguous aclTensor over a result's buffer with its declared shape and dtype (for entry
/// points); release it with aclDestroyTensor.
aclTensor *ogc_result_tensor(const ogc_result *r);
/// Phase 2 of an aclnn call, run synchronously with a workspace of the size phase 1 asked for.
int ogc_launch(uint64_t workspace_size, aclOpExecutor *executor,
               aclnnStatus (*phase2)(void *, uint64_t, aclOpExecutor *, aclrtStream));

/// Layouts the checker knows, by name.
int ogc_layout_count(void);
const char *ogc_layout_name(int i);

/// Checks one operator at one dtype and one layout, at the ISA level in effect (set it with
/// opgrad_set_max_isa). Writes the report; returns its status.
ogc_status ogc_check_case(const ogc_op *op, aclDataType dtype, const char *layout,
                          const ogc_options *opt, ogc_report *report);
/// Checks the formula (O1) of one operator at one layout, in float64 only.
ogc_status ogc_check_formula(const ogc_op *op, const char *layout, const ogc_options *opt,
                             ogc_report *report);

/// The built-in operators.
int ogc_registry_count(void);
const ogc_op *ogc_registry_get(int i);
const ogc_op *ogc_registry_find(const char *name);

/// Writes one JSON object for a report (no trailing newline).
void ogc_report_json(FILE *f, const ogc_report *r);

#endif
