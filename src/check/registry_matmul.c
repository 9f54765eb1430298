/* Registry entries of the 'matmul' family (see registry.h for how families are listed):
 *
 *   matmul            aclnnMatmul (torch.matmul shapes: batch broadcast, 1-D operands)
 *   matmul_cube1      the same, fp32 with cubeMathType 1 (ALLOW_FP32_DOWN_PRECISION)
 *   matmul_cube2      the same, fp32 with cubeMathType 2 (USE_FP16)
 *   mm, bmm           aclnnMm (2-D), aclnnBatchMatMul (3-D, a batch of 1 broadcasts)
 *   addmm, baddbmm    aclnnAddmm / aclnnBaddbmm (beta 0.5, alpha -1.25) and their in-place forms
 *   fused_matmul[_T]  aclnnFusedMatmul + aclnnFusedMatmulBackward, fusedOpType T = "" (no
 *                     suffix), relu, gelu_erf, gelu_tanh, add, mul, 16cast32
 *
 * attrs = {kind, cubeMathType (-1: 3 for FLOAT inputs, as FusedMatmul requires upstream, else 0),
 * beta, alpha, fusedOpType index}.
 *
 * The backwards of the non-fused operators are not operators of their own: as in a framework's
 * autograd they are compositions of public aclnn calls, dA = dC @ B^T and dB = A^T @ dC, each
 * computed by the entry's own product operator (aclnnMatmul, aclnnMm or aclnnBatchMatMul) on
 * transposed VIEWS of the operands (strides swapped, no copies), with the same cubeMathType. A
 * gradient whose operand is broadcast along batch dims (or that carries alpha) is formed in fp32
 * (the product keeps its fp32 accumulator), summed by aclnnReduceSum (fp32) and rounded once to
 * the gradient's dtype by aclnnMuls(alpha); otherwise the product writes the gradient directly.
 * Addmm's dSelf = beta * dC summed to self's shape (aclnnReduceSum + aclnnMuls).
 *
 * Bounds (compare.h, ogc_rule): fp32_ulps = 4 everywhere, with terms = the summed length (K for
 * an output, N or M times the broadcast batches for a gradient) and mag = the sum of |a_k b_k|
 * (plus |beta self| for addmm): c ulp_f32(ref) + c 2^-24 sqrt(terms) mag. 16-bit inputs
 * multiply exactly in fp32 and accumulate in fp32, so the same fp32 bound holds, plus one final
 * rounding (roundings16 = 1). cubeMathType 1, 3 and 4 compute exact fp32 products on the CPU (as
 * 0); 2 (USE_FP16) rounds FLOAT inputs through fp16 while packing, products exact in fp32, fp32
 * accumulation: the reference rounds the product's operands through fp16 as well (see
 * round_fp16), so the comparison keeps the standard fp32 bound.
 * FusedMatmul (FLOAT with cubeMathType 3, 16-bit with 0): the same bound, with mag of y =
 * |act(z)| + |act'(z)| zmag (zmag = sum |x1 x2| + |bias|: an fp32 z moves y by act' times its
 * error) and of dZ = |gradY| (|act'(z)| + 0.8 sqrt(K) zmag) for the gelus (act'(z) at an fp32 z;
 * |gelu''| < 0.8), relu's z kept clear of 0 (relu_clear). 16cast32's y is FLOAT and judged as an
 * fp32 result (ogc_op.fp32_output). FusedMatmul in float64 (every fusedOpType but 16cast32, the
 * gelus included: opgrad's extension) is judged by the float64 rows' bound like the other
 * products. That the fused backward equals the composition of the unfused operators is
 * tests/check/test_fused_matmul_composition.c.
 *
 * Shapes: each layout is mapped to the operator's own shapes by the *_cases tables (a
 * transposed view in "strided", padded rows in "offset", broadcast batches in "size1"/"bcast*",
 * 1-D operands in "scalar"/"bcast1"/"sweep", K = 0 in "empty", 8 dims in "rank8", engine-sized
 * products in "large"/"wide"/"bcast_wide": M, N, K = 37, 53, 71 are multiples of no MR or NR, and
 * the checker forces tiny GEMM blocks there (engine/blocking.h, OG_BLOCK_GEMM_*) so that every
 * K-slice tail, partial micro-tile, N chunk and batch group is crossed). A layout an operator has
 * no use for is SKIPPED (runtime). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_addmm.h"
#include "aclnnop/aclnn_baddbmm.h"
#include "aclnnop/aclnn_batch_matmul.h"
#include "aclnnop/aclnn_fused_matmul.h"
#include "aclnnop/aclnn_fused_matmul_backward.h"
#include "aclnnop/aclnn_matmul.h"
#include "aclnnop/aclnn_mm.h"
#include "aclnnop/aclnn_mul.h"
#include "aclnnop/aclnn_reduce_sum.h"
#include "check/check.h"
#include "check/compare.h"
#include "check/composite.h"
#include "check/ref_activation.h"
#include "check/ref_matmul.h"
#include "check/registry.h"
#include "engine/blocking.h"
#include "tensor/dtype.h"

enum { K_MATMUL, K_MM, K_BMM, K_ADDMM, K_BADDBMM, K_FUSED };
enum { A_KIND, A_CUBE, A_BETA, A_ALPHA, A_FUSED };
enum { F_NONE, F_RELU, F_GELU_ERF, F_GELU_TANH, F_ADD, F_MUL, F_16CAST32 };
static const char *const fused_names[] = {"",    "relu", "gelu_erf", "gelu_tanh",
                                          "add", "mul",  "16cast32"};

static int kind_of(const ogc_op *op) { return (int)op->attrs[A_KIND]; }
static int ftype_of(const ogc_op *op) { return (int)op->attrs[A_FUSED]; }
static bool has_self(const ogc_op *op) {
    return kind_of(op) == K_ADDMM || kind_of(op) == K_BADDBMM;
}
// Inputs of the product: A and B (after addmm's self).
static int ia_of(const ogc_op *op) { return has_self(op) ? 1 : 0; }
static bool has_bias(const ogc_op *op) {
    int f = ftype_of(op);
    return kind_of(op) == K_FUSED && f != F_GELU_ERF && f != F_GELU_TANH;
}
static bool has_x3(const ogc_op *op) {
    return kind_of(op) == K_FUSED && (ftype_of(op) == F_ADD || ftype_of(op) == F_MUL);
}
static int8_t cube_of(const ogc_op *op, aclDataType dt) {
    int c = (int)op->attrs[A_CUBE];
    return (int8_t)(c >= 0 ? c : dt == ACL_FLOAT ? 3 : 0);
}
// Does the entry round its fp32 operands through fp16 (cubeMathType 2)?
static bool rounds_fp16(const ogc_op *op) { return (int)op->attrs[A_CUBE] == 2; }

// ---------------------------------------------------------------------------------------------
// Shapes

static void set(ogc_shape *s, int nd, const int64_t *dims) {
    s->ndim = nd;
    for (int d = 0; d < nd; d++) s->dims[d] = dims[d];
}
#define SET(s, ...)                                                                                \
    set(s, (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)),                        \
        (const int64_t[]){__VA_ARGS__})

// Engine-sized products (engine/blocking.h): M, N, K and the batches.
enum { EM = OG_BLOCK_GEMM_M, EN = OG_BLOCK_GEMM_N, EK = OG_BLOCK_GEMM_K };

static bool is(const char *layout, const char *name) { return !strcmp(layout, name); }

// The product's operands A and B of one layout (a layout not listed does not apply).
typedef struct mm_case {
    const char *layout;
    int na;
    int64_t a[OG_MAX_DIMS];
    int nb;
    int64_t b[OG_MAX_DIMS];
} mm_case;
// clang-format off
#define PLAIN(A, B) {"contiguous", A, B}, {"mixed", A, B}, {"strided", A, B}, {"offset", A, B}
#define D2(x, y) 2, {x, y}
#define D3(x, y, z) 3, {x, y, z}
// clang-format on

static const mm_case matmul_cases[] = {
    PLAIN(D3(2, 5, 7), D2(7, 6)),
    {"size1", D3(3, 1, 6), D3(1, 6, 5)},      // M = 1, B's batch of 1 broadcasts
    {"scalar", 1, {7}, D2(7, 5)},             // a 1-D A (a row)
    {"bcast0", 4, {2, 1, 5, 7}, D3(3, 7, 6)}, // both batches broadcast
    {"bcast1", D3(2, 5, 7), 1, {7}},          // a 1-D B (a column)
    {"sweep", 1, {4101}, 1, {4101}},          // a dot product (0-d out), many default K slices
    {"empty", D2(3, 0), D2(0, 5)},            // K = 0: zeros
    {"rank8", 8, {2, 1, 2, 1, 1, 2, 3, 4}, 7, {2, 1, 1, 1, 2, 4, 5}},
    {"large", D3(3, EM, EK), D2(EK, EN)},             // B shared by the batch
    {"wide", 4, {4, 3, EM, EK}, 4, {4, 3, EK, EN}},   // 12 batches: threads, batch groups
    {"bcast_wide", 4, {3, 1, EM, EK}, D3(4, EK, EN)}, // 12 batches, both broadcast
};
// cubeMathType rows: the plain layouts, a broadcast batch and an engine-sized product
static const mm_case cube_cases[] = {
    PLAIN(D3(2, 5, 7), D2(7, 6)),
    {"bcast0", 4, {2, 1, 5, 7}, D3(3, 7, 6)},
    {"large", D3(3, EM, EK), D2(EK, EN)},
};
static const mm_case mm_cases[] = {
    PLAIN(D2(5, 7), D2(7, 6)),
    {"size1", D2(1, 6), D2(6, 5)},
    {"empty", D2(3, 0), D2(0, 5)},
    {"large", D2(EM, EK), D2(EK, EN)},
};
// addmm: self [M,N], a row [1,N] in size1, [N] in bcast0 (mm_shapes)
static const mm_case addmm_cases[] = {
    PLAIN(D2(5, 7), D2(7, 6)),         {"size1", D2(5, 7), D2(7, 6)},
    {"bcast0", D2(5, 7), D2(7, 6)},    {"empty", D2(3, 0), D2(0, 5)},
    {"large", D2(EM, EK), D2(EK, EN)},
};
static const mm_case bmm_cases[] = {
    PLAIN(D3(2, 5, 7), D3(2, 7, 6)),
    {"size1", D3(3, 1, 6), D3(1, 6, 5)},  // B's batch of 1 broadcasts
    {"bcast0", D3(1, 5, 7), D3(3, 7, 6)}, // A's batch of 1 broadcasts
    {"empty", D3(1, 3, 0), D3(1, 0, 5)},
    {"wide", D3(3, EM, EK), D3(3, EK, EN)},
};
// FusedMatmulBackward's batch paths: x2 shared (size1: one product sums the batch; strided, x1
// a transposed view: a temporary and a REDUCE step), x1 shared (offset: a temporary and a
// REDUCE step), neither (bcast0)
static const mm_case fused_cases[] = {
    {"contiguous", D2(5, 7), D2(7, 6)}, {"mixed", D2(5, 7), D2(7, 6)},
    {"strided", D3(2, 5, 7), D2(7, 6)}, {"offset", D2(5, 7), D3(2, 7, 6)},
    {"size1", D3(2, 5, 7), D2(7, 6)},   {"bcast0", D3(2, 5, 7), D3(2, 7, 6)},
    {"empty", D2(3, 0), D2(0, 5)},      {"large", D3(3, EM, EK), D2(EK, EN)},
};

static bool product_shapes(const ogc_op *op, const char *layout, ogc_shape *a, ogc_shape *b) {
    const mm_case *c;
    size_t n;
#define USE(table) (c = table, n = sizeof table / sizeof *table)
    switch (kind_of(op)) {
    case K_MATMUL:
        if ((int)op->attrs[A_CUBE] != 0)
            USE(cube_cases);
        else
            USE(matmul_cases);
        break;
    case K_MM:
        USE(mm_cases);
        break;
    case K_ADDMM:
        USE(addmm_cases);
        break;
    case K_BMM:
    case K_BADDBMM:
        USE(bmm_cases);
        break;
    default:
        USE(fused_cases);
        break;
    }
#undef USE
    for (size_t i = 0; i < n; i++)
        if (is(layout, c[i].layout)) {
            set(a, c[i].na, c[i].a);
            set(b, c[i].nb, c[i].b);
            return true;
        }
    return false;
}

static bool mm_shapes(const ogc_op *op, const char *layout, ogc_shape *in, ogc_shape *out) {
    int ia = ia_of(op);
    og_ref_mm g;
    if (!product_shapes(op, layout, &in[ia], &in[ia + 1])) return false;
    if (!og_ref_mm_shapes(&in[ia], &in[ia + 1], &g, out)) return false;
    // (a 1-D operand makes out 1-D or 0-d: no self, bias or x3 then, so M and N go unused)
    int64_t M = out->ndim >= 2 ? out->dims[out->ndim - 2] : 1;
    int64_t N = out->ndim >= 1 ? out->dims[out->ndim - 1] : 1;
    if (has_self(op)) { // self: the output's shape, a row (size1) or [N] (bcast0)
        in[0] = *out;
        if (is(layout, "size1")) in[0].dims[in[0].ndim - 2] = 1;
        if (is(layout, "size1") && in[0].ndim == 3) in[0].dims[0] = 1;
        if (is(layout, "bcast0")) SET(&in[0], N);
    }
    if (kind_of(op) == K_FUSED) {
        int k = 2;
        if (has_bias(op)) { // bias [N], or [1, N] in size1
            if (is(layout, "size1"))
                SET(&in[k], 1, N);
            else
                SET(&in[k], N);
            k++;
        }
        if (has_x3(op)) { // x3: y's last two dims (batch 1), or y's shape in bcast0
            if (is(layout, "bcast0"))
                in[k] = *out;
            else
                SET(&in[k], M, N);
        }
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// Float64 references

// cubeMathType 2 rounds FLOAT operands through fp16 while packing. The reference does the same to
// fp32 numbers (the kernel checks' inputs and grad_output are fp32 numbers; FLOAT is the only
// dtype these entries run); the float64 formula check's points and perturbations are not, and
// stay unrounded there, where the rounding's steps have no derivative to compare.
static double *round_fp16(const ogc_op *op, const double *x, int64_t n) {
    double *r = malloc(((size_t)n + 1) * sizeof *r);
    for (int64_t i = 0; i < n; i++) {
        r[i] = x[i];
        if (rounds_fp16(op) && (double)(float)x[i] == x[i]) {
            uint16_t h;
            ogc_store(&h, 0, ACL_FLOAT16, x[i]);
            r[i] = ogc_load(&h, 0, ACL_FLOAT16);
        }
    }
    return r;
}

static int64_t numel(const ogc_shape *s) {
    int64_t n = 1;
    for (int d = 0; d < s->ndim; d++) n *= s->dims[d];
    return n;
}

// v (broadcast shape `out`) summed down to shape `in` (row-major), with |v| into mag.
static void sum_to_ref(const ogc_shape *in, const ogc_shape *out, const double *v, double scale,
                       double *dst, double *mag) {
    int64_t st[OG_MAX_DIMS], idx[OG_MAX_DIMS] = {0}, n = numel(out);
    ogc_broadcast_strides(in, out, st);
    for (int64_t i = 0; i < numel(in); i++) dst[i] = 0, mag[i] = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t pos = 0;
        for (int d = 0; d < out->ndim; d++) pos += idx[d] * st[d];
        dst[pos] += scale * v[i];
        mag[pos] += fabs(scale * v[i]);
        for (int d = out->ndim - 1; d >= 0 && ++idx[d] == out->dims[d]; d--) idx[d] = 0;
    }
}

// The element of x (shape in) that output element i reads (broadcast).
static void broadcast_to(const ogc_shape *in, const ogc_shape *out, const double *x, double *y) {
    int64_t st[OG_MAX_DIMS], idx[OG_MAX_DIMS] = {0}, n = numel(out);
    ogc_broadcast_strides(in, out, st);
    for (int64_t i = 0; i < n; i++) {
        int64_t pos = 0;
        for (int d = 0; d < out->ndim; d++) pos += idx[d] * st[d];
        y[i] = x[pos];
        for (int d = out->ndim - 1; d >= 0 && ++idx[d] == out->dims[d]; d--) idx[d] = 0;
    }
}

// Lipschitz constant of the activations' derivatives (|gelu''| <= 2 phi(0) < 0.8 for both forms):
// an fp32 z off by e moves act'(z) by at most 0.8 e.
#define ACT_LIP 0.8

// The fused epilogue at z: y, act'(z) (its magnitude bound in *dmag) and act'(z)'s sensitivity to
// an error in z (0 for the piecewise-linear ones).
static double act(int f, double z, double *d, double *dmag, double *lip) {
    *lip = 0;
    switch (f) {
    case F_RELU:
        *d = *dmag = z > 0 ? 1 : 0;
        return z > 0 ? z : 0;
    case F_GELU_ERF:
        *d = og_ref_gelu_erf_grad(z, dmag);
        *lip = ACT_LIP;
        return og_ref_gelu_erf(z);
    case F_GELU_TANH:
        *d = og_ref_gelu_tanh_grad(z, dmag);
        *lip = ACT_LIP;
        return og_ref_gelu_tanh(z);
    default:
        *d = *dmag = 1;
        return z;
    }
}

typedef struct fused_state {
    og_ref_mm g;
    ogc_shape out;
    int64_t n;
    double *z, *zmag; // z = x1 @ x2 + bias and its magnitude bound, output-shaped
    double *x3;       // x3 broadcast to the output
} fused_state;

static void fused_begin(const ogc_op *op, const ogc_shape *in, const double *const *x,
                        fused_state *s) {
    og_ref_mm_shapes(&in[0], &in[1], &s->g, &s->out);
    s->n = numel(&s->out);
    s->z = calloc((size_t)s->n + 1, sizeof(double));
    s->zmag = calloc((size_t)s->n + 1, sizeof(double));
    s->x3 = NULL;
    og_ref_mm_forward(&s->g, x[0], x[1], s->z, s->zmag);
    int k = 2;
    if (has_bias(op)) {
        double *b = malloc(((size_t)s->n + 1) * sizeof *b);
        broadcast_to(&in[k], &s->out, x[k], b);
        for (int64_t i = 0; i < s->n; i++) s->z[i] += b[i], s->zmag[i] += fabs(b[i]);
        free(b);
        k++;
    }
    if (has_x3(op)) {
        s->x3 = malloc(((size_t)s->n + 1) * sizeof *s->x3);
        broadcast_to(&in[k], &s->out, x[k], s->x3);
    }
}

static void fused_end(fused_state *s) {
    free(s->z);
    free(s->zmag);
    free(s->x3);
}

static void mm_ref_forward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                           const ogc_shape *out, double *y, double *const *saved, double *mag,
                           int64_t *terms) {
    (void)saved;
    int ia = ia_of(op), n = (int)numel(out);
    og_ref_mm g;
    ogc_shape o;
    og_ref_mm_shapes(&in[ia], &in[ia + 1], &g, &o);
    *terms = g.K;
    if (kind_of(op) == K_FUSED) {
        fused_state s;
        fused_begin(op, in, x, &s);
        for (int i = 0; i < n; i++) {
            double d, dmag, lip, z = s.z[i];
            double a = act(ftype_of(op), z, &d, &dmag, &lip);
            // an fp32 z within c 2^-24 sqrt(K) zmag: y moves by |act'| times that
            mag[i] = fabs(a) + dmag * s.zmag[i];
            if (ftype_of(op) == F_ADD) a += s.x3[i], mag[i] += fabs(s.x3[i]);
            if (ftype_of(op) == F_MUL) a *= s.x3[i], mag[i] *= fabs(s.x3[i]);
            y[i] = a;
        }
        fused_end(&s);
        return;
    }
    double *a = round_fp16(op, x[ia], g.anumel), *b = round_fp16(op, x[ia + 1], g.bnumel);
    og_ref_mm_forward(&g, a, b, y, mag);
    if (has_self(op)) {
        double beta = op->attrs[A_BETA], alpha = op->attrs[A_ALPHA];
        double *s = malloc(((size_t)n + 1) * sizeof *s);
        broadcast_to(&in[0], out, x[0], s);
        for (int i = 0; i < n; i++) {
            y[i] = beta * s[i] + alpha * y[i];
            mag[i] = fabs(beta * s[i]) + fabs(alpha) * mag[i];
        }
        free(s);
    }
    free(a);
    free(b);
}

static void scale_all(double *v, int64_t n, double f) {
    for (int64_t i = 0; i < n; i++) v[i] *= f;
}

static void mm_ref_backward(const ogc_op *op, const ogc_shape *in, const double *const *x,
                            const ogc_shape *out, const double *const *saved, const double *gy,
                            double *const *gx, double *const *mag, int64_t *terms) {
    (void)saved;
    int ia = ia_of(op);
    int64_t n = numel(out);
    og_ref_mm g;
    ogc_shape o;
    og_ref_mm_shapes(&in[ia], &in[ia + 1], &g, &o);
    if (kind_of(op) == K_FUSED) {
        fused_state s;
        fused_begin(op, in, x, &s);
        int f = ftype_of(op);
        double *dz = malloc(((size_t)n + 1) * sizeof *dz), *dzmag = malloc(((size_t)n + 1) * 8);
        double *ax1 = malloc(((size_t)g.anumel + 1) * 8), *ax2 = malloc(((size_t)g.bnumel + 1) * 8);
        double sk = sqrt((double)(g.K > 1 ? g.K : 1));
        for (int64_t i = 0; i < n; i++) {
            double d, dmag, lip;
            act(f, s.z[i], &d, &dmag, &lip);
            double gi = f == F_MUL ? gy[i] * s.x3[i] : gy[i];
            dz[i] = gi * d;
            // act'(z) at an fp32 z off by up to c 2^-24 sqrt(K) zmag, times gy
            dzmag[i] = fabs(gi) * (dmag + lip * sk * s.zmag[i]);
        }
        for (int64_t i = 0; i < g.anumel; i++) ax1[i] = fabs(x[0][i]);
        for (int64_t i = 0; i < g.bnumel; i++) ax2[i] = fabs(x[1][i]);
        og_ref_mm_grad_a(&g, dz, x[1], gx[0], NULL);
        og_ref_mm_grad_a(&g, dzmag, ax2, mag[0], NULL);
        og_ref_mm_grad_b(&g, x[0], dz, gx[1], NULL);
        og_ref_mm_grad_b(&g, ax1, dzmag, mag[1], NULL);
        terms[0] = og_ref_mm_terms_a(&g);
        terms[1] = og_ref_mm_terms_b(&g);
        int k = 2;
        if (has_bias(op)) {
            double *m2 = malloc(((size_t)numel(&in[k]) + 1) * 8);
            sum_to_ref(&in[k], out, dz, 1.0, gx[k], m2);
            sum_to_ref(&in[k], out, dzmag, 1.0, mag[k], m2);
            terms[k] = numel(&in[k]) > 0 ? n / numel(&in[k]) : 0;
            free(m2);
            k++;
        }
        if (has_x3(op)) {
            double *v = malloc(((size_t)n + 1) * 8), *vm = malloc(((size_t)n + 1) * 8);
            for (int64_t i = 0; i < n; i++) {
                v[i] = f == F_MUL ? gy[i] * s.z[i] : gy[i];
                vm[i] = f == F_MUL ? fabs(gy[i]) * s.zmag[i] : fabs(gy[i]);
            }
            double *m2 = malloc(((size_t)numel(&in[k]) + 1) * 8);
            sum_to_ref(&in[k], out, v, 1.0, gx[k], m2);
            sum_to_ref(&in[k], out, vm, 1.0, mag[k], m2);
            terms[k] = numel(&in[k]) > 0 ? n / numel(&in[k]) : 0;
            free(m2);
            free(v);
            free(vm);
        }
        free(dz);
        free(dzmag);
        free(ax1);
        free(ax2);
        fused_end(&s);
        return;
    }
    double *a = round_fp16(op, x[ia], g.anumel), *b = round_fp16(op, x[ia + 1], g.bnumel);
    double *gr = round_fp16(op, gy, n);
    og_ref_mm_grad_a(&g, gr, b, gx[ia], mag[ia]);
    og_ref_mm_grad_b(&g, a, gr, gx[ia + 1], mag[ia + 1]);
    terms[ia] = og_ref_mm_terms_a(&g);
    terms[ia + 1] = og_ref_mm_terms_b(&g);
    if (has_self(op)) {
        double alpha = op->attrs[A_ALPHA], beta = op->attrs[A_BETA];
        for (int k = 1; k <= 2; k++) {
            scale_all(gx[k], numel(&in[k]), alpha);
            scale_all(mag[k], numel(&in[k]), fabs(alpha));
        }
        sum_to_ref(&in[0], out, gy, beta, gx[0], mag[0]);
        terms[0] = numel(&in[0]) > 0 ? n / numel(&in[0]) : 0;
    }
    free(a);
    free(b);
    free(gr);
}

// relu(z): the data keeps z a margin away from the kink at 0 (1e-3 of its magnitude bound, and
// of 1), far beyond both the finite differences' steps and an fp32 z's error, so the sign of z
// is the same in float64 and in the kernel, and a central difference never straddles the kink.
static bool relu_clear(const ogc_op *op, const ogc_shape *in, const double *const *x) {
    fused_state s;
    fused_begin(op, in, x, &s);
    bool ok = true;
    for (int64_t i = 0; i < s.n && ok; i++) ok = fabs(s.z[i]) >= 1e-3 * (1 + s.zmag[i]);
    fused_end(&s);
    return ok;
}

// ---------------------------------------------------------------------------------------------
// Helpers: temporaries, views and one-call wrappers of the public API (as in registry_arith.c)

// A view of t's storage with the given dims and strides (t's offset).
static aclTensor *view(const aclTensor *t, int nd, const int64_t *dims, const int64_t *strides) {
    return aclCreateTensor(dims, (uint64_t)nd, t->dtype, strides, t->offset, ACL_FORMAT_ND,
                           t->storage_dims, (uint64_t)t->storage_ndim, t->data);
}

// t with its last two dims swapped: a transposed view, strides swapped, no copy.
static aclTensor *transposed(const aclTensor *t) {
    int64_t dims[OG_MAX_DIMS], st[OG_MAX_DIMS];
    int nd = t->ndim;
    for (int d = 0; d < nd; d++) dims[d] = t->dims[d], st[d] = t->strides[d];
    dims[nd - 2] = t->dims[nd - 1], dims[nd - 1] = t->dims[nd - 2];
    st[nd - 2] = t->strides[nd - 1], st[nd - 1] = t->strides[nd - 2];
    return view(t, nd, dims, st);
}

// t as a matrix: a 1-D t [K] as the row [1, K] (column = false) or the column [K, 1]; else t.
static aclTensor *as_matrix(const aclTensor *t, bool column) {
    if (t->ndim >= 2) return view(t, t->ndim, t->dims, t->strides);
    int64_t k = t->dims[0], s = t->strides[0];
    int64_t dims[2] = {column ? k : 1, column ? 1 : k}, st[2] = {s, s};
    return view(t, 2, dims, st);
}

static aclScalar *float_scalar(double v) {
    float f = (float)v;
    return aclCreateScalar(&f, ACL_FLOAT);
}

// out = x @ y through the entry's own product operator (Matmul, Mm or BatchMatMul).
static int product(const ogc_op *op, int8_t cube, const aclTensor *x, const aclTensor *y,
                   aclTensor *out) {
    uint64_t ws;
    aclOpExecutor *ex;
    int st;
    switch (kind_of(op)) {
    case K_MM:
    case K_ADDMM:
        st = aclnnMmGetWorkspaceSize(x, y, out, cube, &ws, &ex);
        if (!st) st = ogc_launch(ws, ex, aclnnMm);
        break;
    case K_BMM:
    case K_BADDBMM:
        st = aclnnBatchMatMulGetWorkspaceSize(x, y, out, cube, &ws, &ex);
        if (!st) st = ogc_launch(ws, ex, aclnnBatchMatMul);
        break;
    default:
        st = aclnnMatmulGetWorkspaceSize(x, y, out, cube, &ws, &ex);
        if (!st) st = ogc_launch(ws, ex, aclnnMatmul);
        break;
    }
    return st;
}

// dst = factor * (x @ y) summed down to dst's shape; the product has shape `full`. Without a sum
// or a factor the product writes dst directly (rounded once to its dtype); else it is formed in
// fp32 (float64 for float64 operands) and sum_to rounds once.
static int product_to(const ogc_op *op, int8_t cube, const aclTensor *x, const aclTensor *y,
                      const int64_t *full, int nd, double factor, ogc_result *dst) {
    int64_t nfull = 1, ndst = 1;
    for (int d = 0; d < nd; d++) nfull *= full[d];
    for (int d = 0; d < dst->ndim; d++) ndst *= dst->dims[d];
    int st;
    if (nfull == ndst && factor == 1) {
        aclTensor *out = ogc_result_tensor(dst), *v = ogc_reshaped(out, full, nd);
        st = product(op, cube, x, y, v);
        aclDestroyTensor(v);
        aclDestroyTensor(out);
        return st;
    }
    aclDataType dt = x->dtype == ACL_DOUBLE || y->dtype == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT;
    ogc_tmp p = ogc_tmp_new(full, nd, dt);
    st = product(op, cube, x, y, p.t);
    if (!st) st = ogc_sum_to(p.t, factor, dst);
    ogc_tmp_free(&p);
    return st;
}

// ---------------------------------------------------------------------------------------------
// Entry points

static int mm_forward(ogc_call *c) {
    const ogc_op *op = c->op;
    int8_t cube = cube_of(op, c->dtype);
    aclTensor *out = ogc_result_tensor(&c->results[0]);
    aclScalar *beta = float_scalar(op->attrs[A_BETA]), *alpha = float_scalar(op->attrs[A_ALPHA]);
    uint64_t ws;
    aclOpExecutor *ex;
    int st;
    switch (kind_of(op)) {
    case K_ADDMM:
        st = aclnnAddmmGetWorkspaceSize(c->in[0], c->in[1], c->in[2], beta, alpha, out, cube, &ws,
                                        &ex);
        if (!st) st = ogc_launch(ws, ex, aclnnAddmm);
        break;
    case K_BADDBMM:
        st = aclnnBaddbmmGetWorkspaceSize(c->in[0], c->in[1], c->in[2], beta, alpha, out, cube, &ws,
                                          &ex);
        if (!st) st = ogc_launch(ws, ex, aclnnBaddbmm);
        break;
    case K_FUSED: {
        int k = 2;
        const aclTensor *bias = has_bias(op) ? c->in[k++] : NULL;
        const aclTensor *x3 = has_x3(op) ? c->in[k] : NULL;
        st = aclnnFusedMatmulGetWorkspaceSize(c->in[0], c->in[1], bias, x3,
                                              fused_names[ftype_of(op)], cube, out, &ws, &ex);
        if (!st) st = ogc_launch(ws, ex, aclnnFusedMatmul);
        break;
    }
    default:
        st = product(op, cube, c->in[0], c->in[1], out);
        break;
    }
    aclDestroyScalar(beta);
    aclDestroyScalar(alpha);
    aclDestroyTensor(out);
    return st;
}

static int mm_inplace(ogc_call *c) {
    const ogc_op *op = c->op;
    int8_t cube = cube_of(op, c->dtype);
    aclScalar *beta = float_scalar(op->attrs[A_BETA]), *alpha = float_scalar(op->attrs[A_ALPHA]);
    uint64_t ws;
    aclOpExecutor *ex;
    int st;
    if (kind_of(op) == K_ADDMM) {
        st = aclnnInplaceAddmmGetWorkspaceSize(c->in[0], c->in[1], c->in[2], beta, alpha, cube, &ws,
                                               &ex);
        if (!st) st = ogc_launch(ws, ex, aclnnInplaceAddmm);
    } else {
        st = aclnnInplaceBaddbmmGetWorkspaceSize(c->in[0], c->in[1], c->in[2], beta, alpha, cube,
                                                 &ws, &ex);
        if (!st) st = ogc_launch(ws, ex, aclnnInplaceBaddbmm);
    }
    aclDestroyScalar(beta);
    aclDestroyScalar(alpha);
    return st;
}

static int fused_backward(ogc_call *c) {
    const ogc_op *op = c->op;
    aclTensor *g[4] = {NULL, NULL, NULL, NULL};
    int k = 2;
    const aclTensor *bias = NULL, *x3 = NULL;
    for (int j = 0; j < c->nresults; j++) g[j] = ogc_result_tensor(&c->results[j]);
    aclTensor *gbias = NULL, *gx3 = NULL;
    if (has_bias(op)) bias = c->in[k], gbias = g[k], k++;
    if (has_x3(op)) x3 = c->in[k], gx3 = g[k];
    uint64_t ws;
    aclOpExecutor *ex;
    int st = aclnnFusedMatmulBackwardGetWorkspaceSize(
        c->grad_out, c->in[0], c->in[1], bias, x3, fused_names[ftype_of(op)], cube_of(op, c->dtype),
        g[0], g[1], gbias, gx3, &ws, &ex);
    if (!st) st = ogc_launch(ws, ex, aclnnFusedMatmulBackward);
    for (int j = 0; j < 4; j++)
        if (g[j]) aclDestroyTensor(g[j]);
    return st;
}

// The composite backward: dA = alpha dC @ B^T, dB = alpha A^T @ dC on transposed views (a 1-D
// operand as a row or column matrix, grad_output viewed with its dropped dims restored), each
// summed to its operand's shape; addmm's dSelf = beta dC summed to self's shape.
static int mm_backward(ogc_call *c) {
    const ogc_op *op = c->op;
    if (kind_of(op) == K_FUSED) return fused_backward(c);
    int ia = ia_of(op);
    int8_t cube = cube_of(op, c->dtype);
    const aclTensor *A = c->in[ia], *B = c->in[ia + 1];
    double alpha = has_self(op) ? op->attrs[A_ALPHA] : 1.0;
    aclTensor *A2 = as_matrix(A, false), *B2 = as_matrix(B, true);
    aclTensor *At = transposed(A2), *Bt = transposed(B2);
    // grad_output as (batch..., M, N)
    const aclTensor *gy = c->grad_out;
    int nbatch = gy->ndim - (A->ndim == 1 ? 0 : 1) - (B->ndim == 1 ? 0 : 1);
    int64_t M = A2->dims[A2->ndim - 2], K = A2->dims[A2->ndim - 1], N = B2->dims[B2->ndim - 1];
    int64_t gdims[OG_MAX_DIMS], fa[OG_MAX_DIMS], fb[OG_MAX_DIMS];
    for (int d = 0; d < nbatch; d++) gdims[d] = fa[d] = fb[d] = gy->dims[d];
    gdims[nbatch] = M, gdims[nbatch + 1] = N;
    fa[nbatch] = M, fa[nbatch + 1] = K;
    fb[nbatch] = K, fb[nbatch + 1] = N;
    aclTensor *G2 = ogc_reshaped(gy, gdims, nbatch + 2);
    // the gradients of 1-D operands as the row / column matrices (their elements unchanged)
    ogc_result dA = c->results[ia], dB = c->results[ia + 1];
    if (A->ndim == 1) dA.ndim = 2, dA.dims[0] = 1, dA.dims[1] = K;
    if (B->ndim == 1) dB.ndim = 2, dB.dims[0] = K, dB.dims[1] = 1;
    int st = 0;
    if (has_self(op)) st = ogc_sum_to(gy, op->attrs[A_BETA], &c->results[0]);
    if (!st) st = product_to(op, cube, G2, Bt, fa, nbatch + 2, alpha, &dA);
    if (!st) st = product_to(op, cube, At, G2, fb, nbatch + 2, alpha, &dB);
    aclDestroyTensor(G2);
    aclDestroyTensor(A2);
    aclDestroyTensor(B2);
    aclDestroyTensor(At);
    aclDestroyTensor(Bt);
    return st;
}

// ---------------------------------------------------------------------------------------------

static const double matmul_attrs[] = {K_MATMUL, 0, 0, 1, 0};
static const double matmul_cube1_attrs[] = {K_MATMUL, 1, 0, 1, 0};
static const double matmul_cube2_attrs[] = {K_MATMUL, 2, 0, 1, 0};
static const double mm_attrs[] = {K_MM, 0, 0, 1, 0};
static const double bmm_attrs[] = {K_BMM, 0, 0, 1, 0};
static const double addmm_attrs[] = {K_ADDMM, 0, 0.5, -1.25, 0};
static const double baddbmm_attrs[] = {K_BADDBMM, 0, 0.5, -1.25, 0};
static const double fused_attrs[][5] = {
    {K_FUSED, -1, 0, 1, F_NONE},      {K_FUSED, -1, 0, 1, F_RELU}, {K_FUSED, -1, 0, 1, F_GELU_ERF},
    {K_FUSED, -1, 0, 1, F_GELU_TANH}, {K_FUSED, -1, 0, 1, F_ADD},  {K_FUSED, -1, 0, 1, F_MUL},
    {K_FUSED, -1, 0, 1, F_16CAST32},
};
static const double kink0[] = {0};

#define DT16 (OG_DT(ACL_FLOAT16) | OG_DT(ACL_BF16))
#define DT16_64 (DT16 | OG_DT(ACL_DOUBLE)) // the gelus: 16-bit upstream, float64 opgrad's extension

#define MM_ENTRY(NAME, API, ATTRS, DTYPES, NIN, ...)                                               \
    {                                                                                              \
        .name = NAME, .api = API, .nin = NIN, .in = {__VA_ARGS__}, .attrs = ATTRS,                 \
        .dtypes = DTYPES, .lo = -4, .hi = 4, .fp32_ulps = 4, .forward = mm_forward,                \
        .backward = mm_backward, .shapes = mm_shapes, .ref_forward_tensor = mm_ref_forward,        \
        .ref_backward_tensor = mm_ref_backward,                                                    \
    }
#define ADDMM_ENTRY(NAME, API, ATTRS)                                                              \
    {                                                                                              \
        .name = NAME, .api = API, .nin = 3,                                                        \
        .in = {{"self", true}, {"mat1", true}, {"mat2", true}}, .attrs = ATTRS,                    \
        .dtypes = OG_DTS_FLOATING64, .lo = -4, .hi = 4, .fp32_ulps = 4, .forward = mm_forward,     \
        .backward = mm_backward, .forward_inplace = mm_inplace, .shapes = mm_shapes,               \
        .ref_forward_tensor = mm_ref_forward, .ref_backward_tensor = mm_ref_backward,              \
    }
#define FUSED_API "aclnnFusedMatmul + aclnnFusedMatmulBackward"

static const ogc_op matmul_ops[] = {
    MM_ENTRY("matmul", "aclnnMatmul + aclnnMatmul/aclnnReduceSum/aclnnMuls", matmul_attrs,
             OG_DTS_FLOATING64, 2, {"self", true}, {"mat2", true}),
    MM_ENTRY("matmul_cube1", "aclnnMatmul(cubeMathType 1) + aclnnMatmul/aclnnReduceSum/aclnnMuls",
             matmul_cube1_attrs, OG_DT(ACL_FLOAT), 2, {"self", true}, {"mat2", true}),
    MM_ENTRY("matmul_cube2", "aclnnMatmul(cubeMathType 2) + aclnnMatmul/aclnnReduceSum/aclnnMuls",
             matmul_cube2_attrs, OG_DT(ACL_FLOAT), 2, {"self", true}, {"mat2", true}),
    MM_ENTRY("mm", "aclnnMm + aclnnMm/aclnnMuls", mm_attrs, OG_DTS_FLOATING64, 2, {"self", true},
             {"mat2", true}),
    MM_ENTRY("bmm", "aclnnBatchMatMul + aclnnBatchMatMul/aclnnReduceSum/aclnnMuls", bmm_attrs,
             OG_DTS_FLOATING64, 2, {"self", true}, {"mat2", true}),
    ADDMM_ENTRY("addmm", "aclnnAddmm(beta 0.5, alpha -1.25) + aclnnMm/aclnnReduceSum/aclnnMuls",
                addmm_attrs),
    ADDMM_ENTRY("baddbmm",
                "aclnnBaddbmm(beta 0.5, alpha -1.25) + aclnnBatchMatMul/aclnnReduceSum/aclnnMuls",
                baddbmm_attrs),
    MM_ENTRY("fused_matmul", FUSED_API " (\"\")", fused_attrs[F_NONE], OG_DTS_FLOATING64, 3,
             {"x1", true}, {"x2", true}, {"bias", true}),
    {
        .name = "fused_matmul_relu",
        .api = FUSED_API " (relu)",
        .nin = 3,
        .in = {{"x1", true}, {"x2", true}, {"bias", true}},
        .attrs = fused_attrs[F_RELU],
        .dtypes = OG_DTS_FLOATING64,
        .lo = -4,
        .hi = 4,
        .kinks = kink0,
        .nkinks = 1,
        .fp32_ulps = 4,
        .zero_trust = 0.9,
        .forward = mm_forward,
        .backward = mm_backward,
        .shapes = mm_shapes,
        .ref_forward_tensor = mm_ref_forward,
        .ref_backward_tensor = mm_ref_backward,
        .clear_of_kinks = relu_clear,
    },
    MM_ENTRY("fused_matmul_gelu_erf", FUSED_API " (gelu_erf)", fused_attrs[F_GELU_ERF], DT16_64, 2,
             {"x1", true}, {"x2", true}),
    MM_ENTRY("fused_matmul_gelu_tanh", FUSED_API " (gelu_tanh)", fused_attrs[F_GELU_TANH], DT16_64,
             2, {"x1", true}, {"x2", true}),
    MM_ENTRY("fused_matmul_add", FUSED_API " (add)", fused_attrs[F_ADD], OG_DTS_FLOATING64, 4,
             {"x1", true}, {"x2", true}, {"bias", true}, {"x3", true}),
    MM_ENTRY("fused_matmul_mul", FUSED_API " (mul)", fused_attrs[F_MUL], OG_DTS_FLOATING64, 4,
             {"x1", true}, {"x2", true}, {"bias", true}, {"x3", true}),
    {
        .name = "fused_matmul_16cast32",
        .api = FUSED_API " (16cast32: a FLOAT y from 16-bit inputs)",
        .nin = 3,
        .in = {{"x1", true}, {"x2", true}, {"bias", true}},
        .attrs = fused_attrs[F_16CAST32],
        .dtypes = DT16,
        .lo = -4,
        .hi = 4,
        .fp32_ulps = 4,
        .fp32_output = true,
        .forward = mm_forward,
        .backward = mm_backward,
        .shapes = mm_shapes,
        .ref_forward_tensor = mm_ref_forward,
        .ref_backward_tensor = mm_ref_backward,
    },
};

OGC_DEFINE_FAMILY(matmul, matmul_ops)
