/* aclnnMatmul, aclnnMm, aclnnBatchMatMul, aclnnAddmm, aclnnInplaceAddmm, aclnnBaddbmm and
 * aclnnInplaceBaddbmm: argument checks and one GEMM step each (engine/gemm.h). Rules from ops-nn
 * matmul/mat_mul_v3 (aclnn_matmul.cpp, aclnn_mm.cpp, aclnn_addmm.cpp) and
 * matmul/batch_mat_mul_v3 (aclnn_batch_matmul.cpp, aclnn_baddbmm.cpp); where opgrad differs,
 * docs/ops/matmul.md says so. */
#include <string.h>

#include "aclnnop/aclnn_addmm.h"
#include "aclnnop/aclnn_baddbmm.h"
#include "aclnnop/aclnn_batch_matmul.h"
#include "aclnnop/aclnn_matmul.h"
#include "aclnnop/aclnn_mm.h"
#include "ops/matmul/matmul_common.h"
#include "runtime/error.h"
#include "tensor/dtype.h"
#include "tensor/tensor.h"

static aclnnStatus check_rank(const og_opdesc *op, const char *name, const aclTensor *t, int lo,
                              int hi) {
    if (t->ndim >= lo && t->ndim <= hi) return ACLNN_SUCCESS;
    char s[160];
    if (lo == hi)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has shape %s (rank %d); it must have %d dims",
                       op->name, name, og_shape_str(t->dims, t->ndim, s, sizeof s), t->ndim, lo);
    return og_fail(ACLNN_ERR_PARAM_INVALID,
                   "%sGetWorkspaceSize: %s has shape %s (rank %d); it must have %d to %d dims",
                   op->name, name, og_shape_str(t->dims, t->ndim, s, sizeof s), t->ndim, lo, hi);
}

static bool same_dims(const aclTensor *t, const int64_t *dims, int ndim) {
    if (t->ndim != ndim) return false;
    for (int d = 0; d < ndim; d++)
        if (t->dims[d] != dims[d]) return false;
    return true;
}

// An executor running g, or nothing (g NULL: an empty result).
static aclnnStatus publish(const og_opdesc *op, int nin, int nout, const aclTensor *const *io,
                           const og_gemm_op *g, uint64_t *workspaceSize, aclOpExecutor **executor) {
    og_prog p;
    og_prog_init(&p, op, nin, nout, io);
    if (g) og_prog_gemm(&p, g);
    return og_prog_publish(&p, workspaceSize, executor);
}

// out = self @ mat2 under torch.matmul's rules: a 1-D self is a row [1,K] and a 1-D mat2 a
// column [K,1], that dim dropped from out; the dims before the last two broadcast. rank: the rank
// both operands must have (Mm 2, BatchMatMul 3), or 0 for any of 1 to 8 (Matmul).
static aclnnStatus plan_matmul(const og_opdesc *op, const aclTensor *self, const aclTensor *mat2,
                               const aclTensor *out, int8_t cubeMathType, int rank,
                               uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char *const names[3] = {"self", "mat2", "out"};
    const void *ptrs[3] = {self, mat2, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, 3, names, ptrs));
    OG_TRY(og_check_tensor_of(op, "self", self, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "mat2", mat2, 1, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, "out", out, 0, OG_DTS_FLOATING64));
    const aclTensor *ins[2] = {self, mat2};
    aclDataType promoted;
    OG_TRY(og_check_promotion(op, 2, names, ins, "out", out, &promoted));
    OG_TRY(og_mm_check_cube_math(op, cubeMathType));
    if (rank) {
        OG_TRY(check_rank(op, "self", self, rank, rank));
        OG_TRY(check_rank(op, "mat2", mat2, rank, rank));
    }
    int sd = self->ndim, md = mat2->ndim;
    int64_t M = sd >= 2 ? self->dims[sd - 2] : 1, K = self->dims[sd - 1];
    int64_t K2 = md >= 2 ? mat2->dims[md - 2] : mat2->dims[0];
    int64_t N = md >= 2 ? mat2->dims[md - 1] : 1;
    char s1[160], s2[160], s3[160], s4[160];
    if (K != K2)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: self %s and mat2 %s do not multiply: self's last dim "
                       "(%lld) must equal mat2's %s (%lld)",
                       op->name, og_shape_str(self->dims, sd, s1, sizeof s1),
                       og_shape_str(mat2->dims, md, s2, sizeof s2), (long long)K,
                       md >= 2 ? "second-to-last dim" : "length", (long long)K2);
    og_gemm_op g = {.M = M,
                    .N = N,
                    .K = K,
                    .alpha = 1,
                    .beta = 0,
                    // a dot product of two vectors ignores cubeMathType (ops-nn)
                    .round_ab =
                        sd == 1 && md == 1 ? ACL_FLOAT : og_mm_round_ab(cubeMathType, promoted),
                    .f64 = promoted == ACL_DOUBLE,
                    .epi = OG_GEMM_EPI_NONE};
    int bad;
    if (!og_broadcast_shapes(self->dims, sd > 2 ? sd - 2 : 0, mat2->dims, md > 2 ? md - 2 : 0,
                             g.batch, &g.nbatch, &bad))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: the batch dims (all but the last two) of self %s and "
                       "mat2 %s do not broadcast (batch dim %d differs and neither is 1)",
                       op->name, og_shape_str(self->dims, sd, s1, sizeof s1),
                       og_shape_str(mat2->dims, md, s2, sizeof s2), bad);
    // out: the batch dims, then M unless self is 1-D, then N unless mat2 is 1-D
    int64_t want[OG_MAX_DIMS + 2];
    int nw = g.nbatch;
    memcpy(want, g.batch, sizeof(int64_t) * (size_t)nw);
    if (sd >= 2) want[nw++] = M;
    if (md >= 2) want[nw++] = N;
    if (!same_dims(out, want, nw))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: out has shape %s but self %s @ mat2 %s has shape %s",
                       op->name, og_shape_str(out->dims, out->ndim, s3, sizeof s3),
                       og_shape_str(self->dims, sd, s1, sizeof s1),
                       og_shape_str(mat2->dims, md, s2, sizeof s2),
                       og_shape_str(want, nw, s4, sizeof s4));
    const aclTensor *io[3] = {self, mat2, out};
    if (out->numel == 0) return publish(op, 2, 1, io, NULL, workspaceSize, executor);
    OG_TRY(og_mm_check_memory(op, 2, ins, names, 0, 1, &out, &names[2]));
    g.a = og_mm_mat(self, 0, g.nbatch, sd >= 2 ? sd - 2 : -1, sd - 1);
    g.b = og_mm_mat(mat2, 1, g.nbatch, md >= 2 ? md - 2 : 0, md >= 2 ? md - 1 : -1);
    g.c = og_mm_mat(out, 2, g.nbatch, sd >= 2 ? g.nbatch : -1, md >= 2 ? nw - 1 : -1);
    return publish(op, 2, 1, io, &g, workspaceSize, executor);
}

aclnnStatus aclnnMatmulGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2,
                                        aclTensor *out, int8_t cubeMathType,
                                        uint64_t *workspaceSize, aclOpExecutor **executor) {
    return plan_matmul(&og_op_Matmul, self, mat2, out, cubeMathType, 0, workspaceSize, executor);
}

aclnnStatus aclnnMmGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2, aclTensor *out,
                                    int8_t cubeMathType, uint64_t *workspaceSize,
                                    aclOpExecutor **executor) {
    return plan_matmul(&og_op_Mm, self, mat2, out, cubeMathType, 2, workspaceSize, executor);
}

aclnnStatus aclnnBatchMatMulGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2,
                                             aclTensor *out, int8_t cubeMathType,
                                             uint64_t *workspaceSize, aclOpExecutor **executor) {
    return plan_matmul(&og_op_BatchMatMul, self, mat2, out, cubeMathType, 3, workspaceSize,
                       executor);
}

// out = beta * self + alpha * (mat1 @ mat2). rank 2 (Addmm: mat1 [M,K], mat2 [K,N], self of 0-2
// dims) or 3 (Baddbmm: [B,M,K] @ [B,K,N], a batch of 1 broadcasting, self of 0-3 dims); self
// broadcasts to the product's shape, which out has. In place (out == self): selfRef has the
// product's shape, is the addend and receives the result; the batches of the in-place Baddbmm do
// not broadcast (ops-nn). names: self, mat1, mat2, beta, alpha, out.
static aclnnStatus plan_addmm(const og_opdesc *op, const char *const *names, const aclTensor *self,
                              const aclTensor *mat1, const aclTensor *mat2, const aclScalar *beta,
                              const aclScalar *alpha, const aclTensor *out, int8_t cubeMathType,
                              int rank, bool inplace, uint64_t *workspaceSize,
                              aclOpExecutor **executor) {
    const void *ptrs[6] = {self, mat1, mat2, beta, alpha, out};
    OG_TRY(og_check_args(op, workspaceSize, executor, inplace ? 5 : 6, names, ptrs));
    // (a 0-d self broadcasts, as in PyTorch)
    OG_TRY(og_check_tensor_of(op, names[0], self, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, names[1], mat1, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_tensor_of(op, names[2], mat2, 0, OG_DTS_FLOATING64));
    if (!inplace) OG_TRY(og_check_tensor_of(op, names[5], out, 0, OG_DTS_FLOATING64));
    OG_TRY(og_check_scalar(op, names[3], beta, NULL));
    OG_TRY(og_check_scalar(op, names[4], alpha, NULL));
    const aclTensor *ins[3] = {self, mat1, mat2};
    aclDataType promoted;
    OG_TRY(og_check_promotion(op, 3, names, ins, names[5], out, &promoted));
    OG_TRY(og_mm_check_cube_math(op, cubeMathType));
    OG_TRY(check_rank(op, names[1], mat1, rank, rank));
    OG_TRY(check_rank(op, names[2], mat2, rank, rank));
    OG_TRY(check_rank(op, names[0], self, inplace ? rank : 0, rank));
    char s1[160], s2[160], s3[160], s4[160];
    int64_t M = mat1->dims[rank - 2], K = mat1->dims[rank - 1];
    int64_t K2 = mat2->dims[rank - 2], N = mat2->dims[rank - 1];
    if (K != K2)
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s %s and %s %s do not multiply: %s's last dim (%lld) "
                       "must equal %s's second-to-last dim (%lld)",
                       op->name, names[1], og_shape_str(mat1->dims, rank, s1, sizeof s1), names[2],
                       og_shape_str(mat2->dims, rank, s2, sizeof s2), names[1], (long long)K,
                       names[2], (long long)K2);
    og_gemm_op g = {.nbatch = rank - 2,
                    .M = M,
                    .N = N,
                    .K = K,
                    .round_ab = og_mm_round_ab(cubeMathType, promoted),
                    .f64 = promoted == ACL_DOUBLE,
                    .epi = OG_GEMM_EPI_NONE};
    if (rank == 3) {
        int64_t b1 = mat1->dims[0], b2 = mat2->dims[0];
        if (b1 != b2 && (inplace || (b1 != 1 && b2 != 1)))
            return og_fail(ACLNN_ERR_PARAM_INVALID,
                           "%sGetWorkspaceSize: %s %s and %s %s have batches %lld and %lld; they "
                           "must be equal%s",
                           op->name, names[1], og_shape_str(mat1->dims, 3, s1, sizeof s1), names[2],
                           og_shape_str(mat2->dims, 3, s2, sizeof s2), (long long)b1, (long long)b2,
                           inplace ? " (the in-place form does not broadcast them)"
                                   : " or one of them 1");
        g.batch[0] = b1 == 1 ? b2 : b1;
    }
    int64_t want[3];
    memcpy(want, g.batch, sizeof(int64_t) * (size_t)g.nbatch);
    want[rank - 2] = M, want[rank - 1] = N;
    if (!same_dims(out, want, rank))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: %s has shape %s but %s %s @ %s %s has shape %s",
                       op->name, names[5], og_shape_str(out->dims, out->ndim, s3, sizeof s3),
                       names[1], og_shape_str(mat1->dims, rank, s1, sizeof s1), names[2],
                       og_shape_str(mat2->dims, rank, s2, sizeof s2),
                       og_shape_str(want, rank, s4, sizeof s4));
    int64_t bshape[OG_MAX_DIMS];
    int nb, bad;
    if (!og_broadcast_shapes(self->dims, self->ndim, want, rank, bshape, &nb, &bad) ||
        !same_dims(out, bshape, nb))
        return og_fail(ACLNN_ERR_PARAM_INVALID,
                       "%sGetWorkspaceSize: self %s does not broadcast to the product's shape %s",
                       op->name, og_shape_str(self->dims, self->ndim, s1, sizeof s1),
                       og_shape_str(want, rank, s2, sizeof s2));
    double b = og_scalar_as_double(beta);
    g.alpha = og_scalar_as_double(alpha);
    const aclTensor *io[4] = {self, mat1, mat2, out};
    if (out->numel == 0) return publish(op, 3, 1, io, NULL, workspaceSize, executor);
    // self may be out itself (element for element): the addend is read once per element, in the
    // epilogue that writes it
    OG_TRY(og_mm_check_memory(op, 3, ins, names, 1u, 1, &out, &names[5]));
    g.a = og_mm_mat(mat1, 1, g.nbatch, rank - 2, rank - 1);
    g.b = og_mm_mat(mat2, 2, g.nbatch, rank - 2, rank - 1);
    g.c = og_mm_mat(out, 3, g.nbatch, rank - 2, rank - 1);
    if (b != 0) { // beta = 0 ignores self: a NaN or inf in it does not propagate
        int sn = self->ndim;
        g.d = og_mm_mat(self, inplace ? 3 : 0, g.nbatch, sn >= 2 ? sn - 2 : -1, sn - 1);
        g.beta = b;
    }
    return publish(op, 3, 1, io, &g, workspaceSize, executor);
}

aclnnStatus aclnnAddmmGetWorkspaceSize(const aclTensor *self, const aclTensor *mat1,
                                       const aclTensor *mat2, const aclScalar *beta,
                                       const aclScalar *alpha, aclTensor *out, int8_t cubeMathType,
                                       uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char *const names[6] = {"self", "mat1", "mat2", "beta", "alpha", "out"};
    return plan_addmm(&og_op_Addmm, names, self, mat1, mat2, beta, alpha, out, cubeMathType, 2,
                      false, workspaceSize, executor);
}

aclnnStatus aclnnInplaceAddmmGetWorkspaceSize(const aclTensor *selfRef, const aclTensor *mat1,
                                              const aclTensor *mat2, const aclScalar *beta,
                                              const aclScalar *alpha, int8_t cubeMathType,
                                              uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char *const names[6] = {"selfRef", "mat1", "mat2", "beta", "alpha", "selfRef"};
    return plan_addmm(&og_op_InplaceAddmm, names, selfRef, mat1, mat2, beta, alpha, selfRef,
                      cubeMathType, 2, true, workspaceSize, executor);
}

aclnnStatus aclnnBaddbmmGetWorkspaceSize(const aclTensor *self, const aclTensor *batch1,
                                         const aclTensor *batch2, const aclScalar *beta,
                                         const aclScalar *alpha, aclTensor *out,
                                         int8_t cubeMathType, uint64_t *workspaceSize,
                                         aclOpExecutor **executor) {
    static const char *const names[6] = {"self", "batch1", "batch2", "beta", "alpha", "out"};
    return plan_addmm(&og_op_Baddbmm, names, self, batch1, batch2, beta, alpha, out, cubeMathType,
                      3, false, workspaceSize, executor);
}

aclnnStatus aclnnInplaceBaddbmmGetWorkspaceSize(const aclTensor *selfRef, const aclTensor *batch1,
                                                const aclTensor *batch2, const aclScalar *beta,
                                                const aclScalar *alpha, int8_t cubeMathType,
                                                uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char *const names[6] = {"selfRef", "batch1", "batch2", "beta", "alpha", "selfRef"};
    return plan_addmm(&og_op_InplaceBaddbmm, names, selfRef, batch1, batch2, beta, alpha, selfRef,
                      cubeMathType, 3, true, workspaceSize, executor);
}
