#include "check/ref_matmul.h"

#include <math.h>
#include <string.h>

bool og_ref_mm_shapes(const ogc_shape *a, const ogc_shape *b, og_ref_mm *g, ogc_shape *out) {
    memset(g, 0, sizeof *g);
    if (a->ndim < 1 || b->ndim < 1) return false;
    bool avec = a->ndim == 1, bvec = b->ndim == 1;
    int anb = avec ? 0 : a->ndim - 2, bnb = bvec ? 0 : b->ndim - 2;
    int64_t K = a->dims[a->ndim - 1], Kb = bvec ? b->dims[0] : b->dims[b->ndim - 2];
    if (K != Kb) return false;
    g->M = avec ? 1 : a->dims[a->ndim - 2];
    g->N = bvec ? 1 : b->dims[b->ndim - 1];
    g->K = K;
    g->nb = anb > bnb ? anb : bnb;
    g->nbatch = 1;
    int64_t amat = g->M * K, bmat = K * g->N;
    for (int d = g->nb - 1; d >= 0; d--) {
        int da = d - (g->nb - anb), db = d - (g->nb - bnb);
        int64_t sa = da >= 0 ? a->dims[da] : 1, sb = db >= 0 ? b->dims[db] : 1;
        if (sa != sb && sa != 1 && sb != 1) return false;
        g->batch[d] = sa == 1 ? sb : sa;
        g->astep[d] = sa == 1 ? 0 : amat;
        g->bstep[d] = sb == 1 ? 0 : bmat;
        amat *= sa;
        bmat *= sb;
        g->nbatch *= g->batch[d];
    }
    g->anumel = amat;
    g->bnumel = bmat;
    g->abatches = g->M * K > 0 ? amat / (g->M * K) : 1;
    g->bbatches = K * g->N > 0 ? bmat / (K * g->N) : 1;
    if (g->M * K == 0 || K * g->N == 0) { // count the matrices from the batch dims
        g->abatches = g->bbatches = 1;
        for (int d = 0; d < anb; d++) g->abatches *= a->dims[d];
        for (int d = 0; d < bnb; d++) g->bbatches *= b->dims[d];
    }
    out->ndim = 0;
    for (int d = 0; d < g->nb; d++) out->dims[out->ndim++] = g->batch[d];
    if (!avec) out->dims[out->ndim++] = g->M;
    if (!bvec) out->dims[out->ndim++] = g->N;
    return true;
}

// Element offset of batch bi's matrix in an operand with steps `step`.
static int64_t batch_offset(const og_ref_mm *g, const int64_t *step, int64_t bi) {
    int64_t off = 0;
    for (int d = g->nb - 1; d >= 0; d--) {
        off += bi % g->batch[d] * step[d];
        bi /= g->batch[d];
    }
    return off;
}

void og_ref_mm_forward(const og_ref_mm *g, const double *a, const double *b, double *c,
                       double *mag) {
    const int64_t M = g->M, N = g->N, K = g->K;
    for (int64_t bi = 0; bi < g->nbatch; bi++) {
        const double *ab = a + batch_offset(g, g->astep, bi),
                     *bb = b + batch_offset(g, g->bstep, bi);
        double *cb = c + bi * M * N, *mb = mag ? mag + bi * M * N : NULL;
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                double s = 0, t = 0;
                for (int64_t k = 0; k < K; k++) {
                    double p = ab[m * K + k] * bb[k * N + n];
                    s += p;
                    t += fabs(p);
                }
                cb[m * N + n] = s;
                if (mb) mb[m * N + n] = t;
            }
    }
}

void og_ref_mm_grad_a(const og_ref_mm *g, const double *gy, const double *b, double *da,
                      double *mag) {
    const int64_t M = g->M, N = g->N, K = g->K;
    for (int64_t i = 0; i < g->anumel; i++) {
        da[i] = 0;
        if (mag) mag[i] = 0;
    }
    for (int64_t bi = 0; bi < g->nbatch; bi++) {
        const double *bb = b + batch_offset(g, g->bstep, bi), *gb = gy + bi * M * N;
        int64_t ao = batch_offset(g, g->astep, bi);
        for (int64_t m = 0; m < M; m++)
            for (int64_t k = 0; k < K; k++) {
                double s = 0, t = 0;
                for (int64_t n = 0; n < N; n++) {
                    double p = gb[m * N + n] * bb[k * N + n];
                    s += p;
                    t += fabs(p);
                }
                da[ao + m * K + k] += s;
                if (mag) mag[ao + m * K + k] += t;
            }
    }
}

void og_ref_mm_grad_b(const og_ref_mm *g, const double *a, const double *gy, double *db,
                      double *mag) {
    const int64_t M = g->M, N = g->N, K = g->K;
    for (int64_t i = 0; i < g->bnumel; i++) {
        db[i] = 0;
        if (mag) mag[i] = 0;
    }
    for (int64_t bi = 0; bi < g->nbatch; bi++) {
        const double *ab = a + batch_offset(g, g->astep, bi), *gb = gy + bi * M * N;
        int64_t bo = batch_offset(g, g->bstep, bi);
        for (int64_t k = 0; k < K; k++)
            for (int64_t n = 0; n < N; n++) {
                double s = 0, t = 0;
                for (int64_t m = 0; m < M; m++) {
                    double p = ab[m * K + k] * gb[m * N + n];
                    s += p;
                    t += fabs(p);
                }
                db[bo + k * N + n] += s;
                if (mag) mag[bo + k * N + n] += t;
            }
    }
}

int64_t og_ref_mm_terms_a(const og_ref_mm *g) {
    return g->N * (g->abatches > 0 ? g->nbatch / g->abatches : 0);
}
int64_t og_ref_mm_terms_b(const og_ref_mm *g) {
    return g->M * (g->bbatches > 0 ? g->nbatch / g->bbatches : 0);
}
