/* cg_solver.c — the conjugate-gradient solver cg and cg_mpi share (see cg_solver.h): hipamp kernels for the stencil and the updates, amp_transform_reduce for the dot products, the row split's halo exchange and sums plugged in through cg_comm, one rank's iteration replayed from launch graphs (cg_use_graphs); the serial C reference and the agreement test.
 *
 * Agreement between two runs (cg_agree): CG in floating point depends on
 * the order of each dot product's sum, which differs between the
 * accelerator (pairwise), the serial reference (left to right) and a row
 * split (each rank's rows, then the ranks' partial sums), so runs agree to
 * rounding, not bit for bit. Each sum's relative error is a few eps; CG
 * carries such differences from iteration to iteration without amplifying
 * them much on this well-posed problem (measured: final residuals within
 * about 1e-9 relative, solutions within about 1e-13 of their largest value,
 * equal iteration counts). The test allows iteration counts within one (a
 * residual can fall within rounding of the tolerance), residuals within
 * 1e-6 relative (or 1e-14 absolute: a grid of a few rows converges exactly,
 * to a residual of rounding alone, 1e-17 or so, whose digits mean nothing;
 * or 100 eps times the condition number: the recursive residual's drift)
 * and solutions within 1e-8: far above the rounding seen,
 * far below what a wrong halo or a missing partial sum gives (those change
 * the residual in its first digits within a few iterations). */
#define _POSIX_C_SOURCE 200809L
#include "cg_solver.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern const char cg_kernels[];

#define CHECK(call)                                                                                      \
    do {                                                                                                 \
        amp_status st_ = (call);                                                                         \
        if (st_ != AMP_OK) {                                                                             \
            fprintf(stderr, "cg: %s failed: %s: %s\n", #call, amp_status_name(st_), amp_last_error());   \
            return st_;                                                                                  \
        }                                                                                                \
    } while (0)

double cg_rhs(int n) /* b = h^2 f with f = 1 */
{
    double h = 1.0 / (n + 1);
    return h * h;
}

cg_grid cg_split(int n, int ny, int nranks, int rank)
{
    int base = ny / nranks, extra = ny % nranks;
    cg_grid g = {n, ny, base + (rank < extra ? 1 : 0), rank * base + (rank < extra ? rank : extra)};
    return g;
}

/* ----------------------------------------------------- communication */

/* out = a . b over all the rows of every rank, on the device; with
 * comm.sum also in s->rr_host when out is rr_new or rr (the local dot to
 * the host, the sum across ranks, the result back to the device). */
static amp_status cg_dot(cg_solver *s, amp_array_view *a, amp_array_view *b, amp_array *out)
{
    if (!s->comm.sum) {
        CHECK(amp_transform_reduce_async(s->q, amp_arg_view(a), amp_arg_view(b), AMP_TYPE_FLOAT64, AMP_MAP_PRODUCT,
                                         AMP_OP_SUM, amp_arg_array(out), NULL));
        return s->comm.sum_device ? s->comm.sum_device(s->comm.ctx, out) : AMP_OK;
    }
    double v = 0;
    CHECK(amp_transform_reduce(s->q, amp_arg_view(a), amp_arg_view(b), AMP_TYPE_FLOAT64, AMP_MAP_PRODUCT, AMP_OP_SUM,
                               &v));
    CHECK(s->comm.sum(s->comm.ctx, &v));
    CHECK(amp_array_copy_from_host(out, &v));
    if (out != s->pap) s->rr_host = v;
    return AMP_OK;
}

/* Ap = A p: one launch over every row (one rank), or the interior rows
 * while p's halos move and the edge rows once they arrived. Every row's
 * arithmetic is cg_apply_cell's, whichever kernel computes it. */
static amp_status cg_apply(cg_solver *s)
{
    const int rows = s->g.rows, n = s->g.n;
    if (!s->comm.halo_begin) {
        amp_arg a[] = {amp_arg_view(s->vp), amp_arg_view(s->vap)};
        return amp_parallel_for_each(s->q, amp_extent_2d(rows, n), s->apply, a, 2);
    }
    amp_arg edges[] = {amp_arg_view(s->vp), amp_arg_view(s->vap)};
    if (!s->comm.overlap || !s->ap_inner) {
        CHECK(s->comm.halo_begin(s->comm.ctx, s));
        CHECK(s->comm.halo_end(s->comm.ctx, s));
        return amp_parallel_for_each(s->q, amp_extent_2d(rows, n), s->apply, edges, 2);
    }
    /* vp_in starts at p's first own row, so that its row i + 1 is what
     * ap_inner's row i (own row i + 1) is centred on. */
    amp_arg inner[] = {amp_arg_view(s->vp_in), amp_arg_view(s->ap_inner)};
    CHECK(s->comm.halo_begin(s->comm.ctx, s));
    if (s->async_interior) {
        /* On the CPU accelerator a launch runs in the calling thread; the
         * asynchronous one runs on q's own, so that this thread drives MPI
         * in halo_end meanwhile (as heat_mpi). */
        amp_future *f = NULL;
        CHECK(amp_parallel_for_each_async(s->q, amp_extent_2d(rows - 2, n), s->apply, inner, 2, &f));
        CHECK(amp_future_destroy(f));
    } else {
        CHECK(amp_parallel_for_each(s->q, amp_extent_2d(rows - 2, n), s->apply, inner, 2));
    }
    CHECK(s->comm.halo_end(s->comm.ctx, s));
    return amp_parallel_for_each(s->q, amp_extent_2d(2, n), s->apply_edges, edges, 2);
}

/* --------------------------------------------------------------- solver */

amp_status cg_init(cg_solver *s, amp_accelerator *acc, cg_grid g, const cg_comm *comm)
{
    memset(s, 0, sizeof *s);
    s->g = g;
    if (comm) s->comm = *comm;
    amp_accelerator_info info;
    CHECK(amp_accelerator_get_info(acc, &info));
    s->async_interior = info.is_emulated;
    CHECK(amp_accelerator_view_create(acc, &s->q));
    CHECK(amp_program_build(acc, cg_kernels, NULL, &s->prog));
    CHECK(amp_program_get_kernel(s->prog, "cg_apply", &s->apply));
    CHECK(amp_program_get_kernel(s->prog, "cg_apply_edges", &s->apply_edges));
    CHECK(amp_program_get_kernel(s->prog, "cg_update_xr", &s->update_xr));
    CHECK(amp_program_get_kernel(s->prog, "cg_update_p", &s->update_p));
    amp_extent own = amp_extent_2d(g.rows, g.n), row = amp_extent_2d(1, g.n);
    CHECK(amp_array_create(s->q, 8, own, NULL, &s->x));
    CHECK(amp_array_create(s->q, 8, own, NULL, &s->r));
    CHECK(amp_array_create(s->q, 8, own, NULL, &s->ap));
    CHECK(amp_array_create(s->q, 8, amp_extent_2d(g.rows + 2, g.n), NULL, &s->p));
    CHECK(amp_array_create(s->q, 8, amp_extent_1d(1), NULL, &s->rr));
    CHECK(amp_array_create(s->q, 8, amp_extent_1d(1), NULL, &s->pap));
    CHECK(amp_array_create(s->q, 8, amp_extent_1d(1), NULL, &s->rr_new));
    CHECK(amp_array_view_of_array(s->x, &s->vx));
    CHECK(amp_array_view_of_array(s->r, &s->vr));
    CHECK(amp_array_view_of_array(s->ap, &s->vap));
    CHECK(amp_array_view_of_array(s->p, &s->vp));
    CHECK(amp_array_view_section(s->vp, amp_index_2d(1, 0), own, &s->vp_in));
    CHECK(amp_array_view_section(s->vp, amp_index_2d(1, 0), row, &s->p_first));
    CHECK(amp_array_view_section(s->vp, amp_index_2d(g.rows, 0), row, &s->p_last));
    CHECK(amp_array_view_section(s->vp, amp_index_2d(0, 0), row, &s->p_halo_top));
    CHECK(amp_array_view_section(s->vp, amp_index_2d(g.rows + 1, 0), row, &s->p_halo_bottom));
    if (g.rows > 2)
        CHECK(amp_array_view_section(s->vap, amp_index_2d(1, 0), amp_extent_2d(g.rows - 2, g.n), &s->ap_inner));
    /* x = 0, r = p = b, rr = r . r; p's halos 0 (the boundary; a row split's
     * first exchange fills those of inner edges). */
    double zero = 0.0, b = cg_rhs(g.n);
    CHECK(amp_fill(s->q, amp_arg_array(s->x), &zero));
    CHECK(amp_fill(s->q, amp_arg_array(s->p), &zero));
    CHECK(amp_fill(s->q, amp_arg_array(s->r), &b));
    CHECK(amp_fill(s->q, amp_arg_view(s->vp_in), &b));
    return cg_dot(s, s->vr, s->vr, s->rr);
}

amp_status cg_iteration(cg_solver *s)
{
    if (s->graph[0]) {
        CHECK(amp_graph_launch(s->q, s->graph[s->parity]));
        s->parity ^= 1;
        amp_array *t = s->rr; /* as the recorded iteration swapped them */
        s->rr = s->rr_new;
        s->rr_new = t;
        return AMP_OK;
    }
    amp_extent own = amp_extent_2d(s->g.rows, s->g.n);
    amp_arg a2[] = {amp_arg_view(s->vx), amp_arg_view(s->vr), amp_arg_view(s->vp), amp_arg_view(s->vap),
                    amp_arg_array(s->rr), amp_arg_array(s->pap)};
    amp_arg a3[] = {amp_arg_view(s->vp), amp_arg_view(s->vr), amp_arg_array(s->rr_new), amp_arg_array(s->rr)};
    CHECK(cg_apply(s));
    CHECK(cg_dot(s, s->vp_in, s->vap, s->pap));
    CHECK(amp_parallel_for_each(s->q, own, s->update_xr, a2, 6));
    CHECK(cg_dot(s, s->vr, s->vr, s->rr_new));
    CHECK(amp_parallel_for_each(s->q, own, s->update_p, a3, 4));
    amp_array *t = s->rr; /* the new r . r is rr from now on */
    s->rr = s->rr_new;
    s->rr_new = t;
    return AMP_OK;
}

amp_status cg_use_graphs(cg_solver *s)
{
    if (s->comm.sum || s->comm.sum_device || s->comm.halo_begin) {
        fprintf(stderr, "cg: launch graphs need one rank (a row split's sums and halos go through the host)\n");
        return AMP_ERROR_UNSUPPORTED;
    }
    amp_graph *g[2] = {NULL, NULL};
    amp_array *rr = s->rr, *rr_new = s->rr_new;
    amp_status st = AMP_OK;
    /* Iteration k records with rr and rr_new as iteration k + 2m finds
     * them: after the two, they are back where they were. */
    for (int k = 0; k < 2 && st == AMP_OK; ++k) {
        if ((st = amp_graph_begin_recording(s->q)) != AMP_OK) {
            fprintf(stderr, "cg: amp_graph_begin_recording failed: %s: %s\n", amp_status_name(st), amp_last_error());
            break;
        }
        st = cg_iteration(s);
        amp_status ended = amp_graph_end_recording(s->q, &g[k]);
        if (st == AMP_OK && ended != AMP_OK) {
            fprintf(stderr, "cg: amp_graph_end_recording failed: %s: %s\n", amp_status_name(ended), amp_last_error());
            st = ended;
        }
    }
    if (st != AMP_OK) {
        amp_graph_destroy(g[0]);
        amp_graph_destroy(g[1]);
        s->rr = rr;
        s->rr_new = rr_new;
        return st;
    }
    s->graph[0] = g[0];
    s->graph[1] = g[1];
    s->parity = 0;
    return AMP_OK;
}

amp_status cg_rr(cg_solver *s, double *rr)
{
    if (s->comm.sum) {
        *rr = s->rr_host;
        return AMP_OK;
    }
    return amp_array_copy_to_host(s->rr, rr);
}

void cg_free(cg_solver *s)
{
    amp_graph_destroy(s->graph[0]); /* before what they use */
    amp_graph_destroy(s->graph[1]);
    amp_array_view *views[] = {s->ap_inner, s->p_halo_bottom, s->p_halo_top, s->p_last, s->p_first,
                               s->vp_in,    s->vp,            s->vx,         s->vr,     s->vap};
    for (size_t i = 0; i < sizeof views / sizeof views[0]; ++i) amp_array_view_destroy(views[i]);
    amp_array *arrays[] = {s->x, s->r, s->p, s->ap, s->rr, s->pap, s->rr_new};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) amp_array_destroy(arrays[i]);
    amp_program_destroy(s->prog);
    amp_accelerator_view_destroy(s->q);
    memset(s, 0, sizeof *s);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

amp_status cg_solve(cg_solver *s, double tol, int max_iters, int check_every, int warmup, cg_result *out)
{
    memset(out, 0, sizeof *out);
    double bb = 0, rr = 0, t0 = 0;
    CHECK(cg_rr(s, &bb));
    rr = bb;
    if (s->comm.sum) check_every = 1; /* the sum brought rr to the host already */
    int it = 0;
    if (warmup <= 0) warmup = 0;
    while (true) {
        if (it == warmup) {
            CHECK(amp_accelerator_view_wait(s->q));
            if (s->comm.timed) s->comm.timed(s->comm.ctx);
            t0 = now_s();
        }
        if (it >= max_iters || !(sqrt(rr / bb) > tol)) break;
        CHECK(cg_iteration(s));
        ++it;
        if (it % check_every == 0) CHECK(cg_rr(s, &rr));
    }
    CHECK(cg_rr(s, &rr));
    CHECK(amp_accelerator_view_wait(s->q));
    out->timed = it > warmup ? it - warmup : 0;
    out->seconds = out->timed ? now_s() - t0 : 0.0;
    out->iters = it;
    out->rel = sqrt(rr / bb);
    return AMP_OK;
}

/* ------------------------------------------------------ serial reference */

bool cg_reference(int n, int ny, double tol, int max_iters, int *iters, double *rel, double *x)
{
    size_t m = (size_t)n * ny;
    double *r = malloc(m * 8), *p = calloc((size_t)(ny + 2) * n, 8), *ap = malloc(m * 8);
    bool ok = r && p && ap;
    if (!ok) goto out;
    double b = cg_rhs(n), bb = 0, rr = 0;
    for (size_t i = 0; i < m; ++i) {
        x[i] = 0;
        r[i] = b;
        p[n + i] = b;
        rr += r[i] * r[i];
    }
    bb = rr;
    int it = 0;
    while (it < max_iters && sqrt(rr / bb) > tol) {
        double pap = 0;
        for (int i = 0; i < ny; ++i)
            for (int j = 0; j < n; ++j) {
                const double *pr = p + (size_t)(i + 1) * n;
                double left = j > 0 ? pr[j - 1] : 0.0, right = j < n - 1 ? pr[j + 1] : 0.0;
                ap[(size_t)i * n + j] = 4.0 * pr[j] - ((pr[j - n] + pr[j + n]) + (left + right));
                pap += pr[j] * ap[(size_t)i * n + j];
            }
        double alpha = rr / pap, rr_new = 0;
        for (size_t i = 0; i < m; ++i) {
            x[i] += alpha * p[n + i];
            r[i] -= alpha * ap[i];
            rr_new += r[i] * r[i];
        }
        double beta = rr_new / rr;
        for (size_t i = 0; i < m; ++i) p[n + i] = r[i] + beta * p[n + i];
        rr = rr_new;
        ++it;
    }
    *iters = it;
    *rel = sqrt(rr / bb);
out:
    free(r);
    free(p);
    free(ap);
    return ok;
}

bool cg_agree(const char *what, int ia, double ra, const double *xa, int ib, double rb, const double *xb, size_t m,
              int longest, double tol)
{
    /* Not fmax: it drops a NaN, and a solution of NaNs would agree. */
    double dx = 0, xmax = 0;
    bool finite = true;
    for (size_t i = 0; i < m; ++i) {
        double d = fabs(xa[i] - xb[i]);
        if (!isfinite(d)) finite = false;
        else if (d > dx) dx = d;
        if (fabs(xb[i]) > xmax) xmax = fabs(xb[i]);
    }
    bool iters_ok = abs(ia - ib) <= 1;
    /* Below 1e-14 (about 100 eps) a relative residual is rounding: a grid
     * of a few rows converges exactly in a few iterations, to 1e-17 or so. */
    /* The recursively updated residual drifts from the true one by about
     * eps times the condition number, (2 (longest + 1) / pi)^2 for the
     * 5-point Laplacian: differently ordered sums drift differently (on an
     * H100, 512 x 512 after 941 iterations: 9.848e-9 against the serial
     * reference's 9.860e-9, 1.2e-11 apart, kappa 1.1e5). A wrong halo or a
     * lost partial sum changes the residual's first digits instead. */
    double kappa = pow(2.0 * (longest + 1) / 3.14159265358979, 2.0);
    bool res_ok = ia != ib || fabs(ra - rb) <= fmax(fmax(1e-6 * rb, 1e-14), 100 * 2.220446049250313e-16 * kappa);
    bool x_ok = finite && dx <= 1e-8 * xmax;
    bool conv = ra <= tol;
    printf("%s: %s (iterations %d and %d, relative residuals %.9e and %.9e: %.3e apart relative; largest solution "
           "difference %.3e of %.3e)%s\n",
           what, iters_ok && res_ok && x_ok && conv ? "agrees" : "DIFFERS", ia, ib, ra, rb,
           rb > 0 ? fabs(ra - rb) / rb : 0.0, dx, xmax,
           !finite ? ", a solution holds values that are not finite" : conv ? "" : ", not converged");
    return iters_ok && res_ok && x_ok && conv;
}
