/* tea_poly.c — TeaLeaf's other solvers over tea_solver's block (tea_solver.h): Chebyshev and PPCG (CG iterations first, whose coefficients give the operator's extreme eigenvalues, then Chebyshev's iteration on u, or CG whose residual each iteration is smoothed by a Chebyshev polynomial of PPCG's inner steps), and Jacobi.
 *
 * The method (UoB-HPC TeaLeaf's, which this follows in its choices):
 *
 * - The switch from CG: after presteps + 1 CG iterations once r . r < 1,
 *   or (errswitch) once r . r < epslim after at least 21.
 * - The eigenvalues: CG's coefficients alpha_k = rro / pw and beta_k =
 *   rrn / rro define Lanczos' symmetric tridiagonal matrix, diagonal
 *   1 / alpha_k + beta_(k-1) / alpha_(k-1), off-diagonal sqrt(beta_k) /
 *   alpha_k; its extreme eigenvalues (Sturm-sequence bisection here)
 *   approach A's from inside, and are widened by 5% each way.
 * - Chebyshev's recurrence on [eigmin, eigmax]: theta = (max + min) / 2,
 *   delta = (max - min) / 2, sigma = theta / delta, rho_0 = 1 / sigma,
 *   rho_(k+1) = 1 / (2 sigma - rho_k); step k's coefficients alpha_k =
 *   rho_(k+1) rho_k and beta_k = 2 rho_(k+1) / delta.
 * - Chebyshev: r = u0 - A u, d = r / theta, u += d; then each iteration
 *   r = u0 - A u (the true residual), d = alpha_k d + beta_k r, u += d.
 *   r . r is computed at the first iteration and, from TeaLeaf's estimate
 *   of the count needed on, every tenth.
 * - PPCG: r = u0 - A u once; then each iteration CG's w = A p, u and r
 *   updates, the inner steps (sd = r / theta; inner_steps times:
 *   r -= A sd, u += sd, sd = alpha_k sd + beta_k r), then rrn = r . r,
 *   beta = rrn / rro, p = r + beta p.
 * - Convergence: |r . r| < eps, as TeaLeaf tests these two solvers (CG's
 *   own test is sqrt(|r . r|) < eps). Chebyshev's residual is computed
 *   from u, and no longer falls once u is right to rounding.
 * - Jacobi: u' = (u0 + the faces times the neighbours of u) / (1 + the
 *   faces), its error the sum of |u' - u| each iteration and, at every
 *   50th from the first, r . r of u' instead. (TeaLeaf adds r . r to the
 *   sum there, its norm routine accumulating into the error; the sum
 *   alone stalls at rounding above eps on larger meshes, and upstream's
 *   OpenMP build ran into max_iters on two of tea_bm_2's ten steps, where
 *   this port converges at a residual check.)
 *
 * A is applied to u (Chebyshev's iterate, PPCG's first residual) and to
 * sd, so they live in fields with halo rows as p does, two of each: a step
 * reads one and writes the other, so that it is one kernel with A x
 * computed where it is used, never stored (A reads the neighbours: an
 * update in place would race). Through a Chebyshev phase u alternates
 * between p's field and sd[0] (p is not used there; the u array holds d)
 * and is copied back at the end; PPCG's sd alternates between sd[0] and
 * sd[1], and its first u is copied into sd[0]. Chebyshev keeps its
 * residual only where r . r follows. In a row split every rank computes
 * the same coefficients: every sum is the same bits on every rank. */
#define _POSIX_C_SOURCE 200809L
#include "tea_solver.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* TeaLeaf's switch: r . r below this (without errswitch), and more than
 * this many CG iterations before an errswitch switch. */
#define SWITCH_ERROR_MAX 1.0
#define SWITCH_MIN_CG 20
/* Chebyshev's r . r: every this many iterations once past its estimate. */
#define CHEBY_CHECK_EVERY 10

/* How many eigenvalues of the symmetric tridiagonal matrix (diagonal a,
 * squared off-diagonal b2, b2[i] coupling i - 1 and i) lie below x: the
 * sign changes of its Sturm sequence (the pivots of T - x I). */
static int eigenvalues_below(const double *a, const double *b2, int n, double x, double pivmin)
{
    int below = 0;
    double q = 1.0;
    for (int i = 0; i < n; ++i) {
        q = a[i] - x - (i > 0 ? b2[i] / q : 0.0);
        if (fabs(q) < pivmin) q = -pivmin;
        if (q < 0) ++below;
    }
    return below;
}

/* The k-th smallest eigenvalue (k = 0 or n - 1 here) by bisection of the
 * Gershgorin interval [lo, hi], to the last bits. */
static double eigenvalue(const double *a, const double *b2, int n, int k, double lo, double hi, double pivmin)
{
    for (int it = 0; it < 200 && hi - lo > 4 * DBL_EPSILON * fmax(fabs(lo), fabs(hi)); ++it) {
        const double mid = 0.5 * (lo + hi);
        if (eigenvalues_below(a, b2, n, mid, pivmin) > k) hi = mid;
        else lo = mid;
    }
    return 0.5 * (lo + hi);
}

/* eigmin and eigmax of Lanczos' matrix of n CG iterations' coefficients,
 * widened by 5% each way. AMP_ERROR_INVALID_ARGUMENT (said on stderr)
 * when they are not positive and finite: CG's coefficients were not those
 * of a positive definite operator. */
static amp_status estimate_eigenvalues(tea_solver *s, const double *alpha, const double *beta, int n)
{
    double *a = malloc((size_t)n * sizeof *a), *b2 = malloc((size_t)n * sizeof *b2);
    if (!a || !b2) {
        free(a);
        free(b2);
        fprintf(stderr, "tealeaf: no host memory for the eigenvalue estimate\n");
        return AMP_ERROR_OUT_OF_MEMORY;
    }
    double lo = INFINITY, hi = -INFINITY, scale = 0;
    for (int k = 0; k < n; ++k) {
        a[k] = 1.0 / alpha[k] + (k > 0 ? beta[k - 1] / alpha[k - 1] : 0.0);
        b2[k] = k > 0 ? beta[k - 1] / (alpha[k - 1] * alpha[k - 1]) : 0.0;
    }
    for (int k = 0; k < n; ++k) {
        const double r = (k > 0 ? sqrt(b2[k]) : 0.0) + (k + 1 < n ? sqrt(b2[k + 1]) : 0.0);
        lo = fmin(lo, a[k] - r);
        hi = fmax(hi, a[k] + r);
        scale = fmax(scale, fabs(a[k]) + r);
    }
    const double pivmin = DBL_MIN * fmax(1.0, scale * scale);
    s->eigmin = 0.95 * eigenvalue(a, b2, n, 0, lo, hi, pivmin);
    s->eigmax = 1.05 * eigenvalue(a, b2, n, n - 1, lo, hi, pivmin);
    free(a);
    free(b2);
    if (!(s->eigmin > 0) || !(s->eigmax > s->eigmin) || !isfinite(s->eigmax)) {
        fprintf(stderr,
                "tealeaf: the eigenvalue estimate from %d CG iterations is [%g, %g]: not a positive definite "
                "operator's\n",
                n, s->eigmin, s->eigmax);
        return AMP_ERROR_INVALID_ARGUMENT;
    }
    return AMP_OK;
}

/* Chebyshev's recurrence on [eigmin, eigmax]: theta, delta, sigma and
 * rho_0; step() advances rho and gives the step's two coefficients. */
typedef struct cheby {
    double theta, delta, sigma, rho;
} cheby;

static cheby cheby_start(const tea_solver *s)
{
    cheby c;
    c.theta = 0.5 * (s->eigmax + s->eigmin);
    c.delta = 0.5 * (s->eigmax - s->eigmin);
    c.sigma = c.theta / c.delta;
    c.rho = 1.0 / c.sigma;
    return c;
}

static void cheby_step(cheby *c, double *alpha, double *beta)
{
    const double next = 1.0 / (2.0 * c->sigma - c->rho);
    *alpha = next * c->rho;
    *beta = 2.0 * next / c->delta;
    c->rho = next;
}

/* TeaLeaf's estimate of the Chebyshev iterations to convergence, from the
 * condition number, u0 . u0 (bb) and the first iteration's r . r. */
static int cheby_estimate(const tea_solver *s, double bb, double rr)
{
    const double kappa = s->eigmax / s->eigmin;
    const double gamma = (sqrt(kappa) - 1.0) / (sqrt(kappa) + 1.0);
    const double est = log(DBL_EPSILON * bb / (4.0 * rr)) / (2.0 * log(gamma));
    return isfinite(est) && est > 0 && est < 1e9 ? (int)lround(est) : 0;
}

/* One CG iteration with its coefficients brought to the host (the same
 * scalars its kernels used); err: its rrn. */
static amp_status cg_step(tea_solver *s, double *alpha, double *beta, double *err)
{
    const int o = s->parity;
    double pw = 0, rro = 0, rrn = 0;
    TEA_CHECK(tea_cg_wur(s));
    TEA_CHECK(tea_cg_p(s, false));
    TEA_CHECK(amp_array_copy_to_host(s->pw, &pw));
    TEA_CHECK(amp_array_copy_to_host(s->rr[o], &rro));
    TEA_CHECK(amp_array_copy_to_host(s->rr[o ^ 1], &rrn));
    *alpha = rro / pw;
    *beta = rrn / rro;
    *err = rrn;
    return AMP_OK;
}

/* Field `which` (0 or 1) of the pair Chebyshev and Jacobi keep u in (p's
 * and sd[0]), or PPCG its sd (sd[0] and sd[1]). */
static tea_field *field_of(tea_solver *s, int which)
{
    const bool u_pair = s->solver != TEA_SOLVER_PPCG; /* Chebyshev's and Jacobi's u */
    return which == 0 ? (u_pair ? &s->p : &s->sd[0]) : (u_pair ? &s->sd[0] : &s->sd[1]);
}

/* Chebyshev's iteration k (0: its first step, u copied into a field),
 * from u in field *cur to the other. err is updated where r . r is
 * computed: at the first iteration and every tenth past the estimate. */
static amp_status cheby_iteration(tea_solver *s, cheby *c, int k, int tt, int *cur, double *err)
{
    const amp_extent e = amp_extent_2d(s->rows, s->nx);
    if (k == 0) {
        *cur = 0;
        amp_arg cp[] = {amp_arg_view(s->vu), amp_arg_view(field_of(s, 0)->view)};
        TEA_CHECK(amp_parallel_for_each(s->q, e, s->copy_into_field, cp, 2));
        tea_field *u = field_of(s, 0), *next = field_of(s, 1);
        amp_arg first[] = {amp_arg_view(u->view), amp_arg_view(s->vkx),      amp_arg_view(s->vky),
                           amp_arg_view(s->vu0),  amp_arg_view(s->vu),       amp_arg_view(next->view),
                           amp_arg_float64(c->theta)};
        TEA_CHECK(tea_exchange(s, u));
        TEA_CHECK(amp_parallel_for_each(s->q, e, s->cheby_first, first, 7));
        *cur = 1;
    }
    /* (k + 1: TeaLeaf counts its Chebyshev iterations from 1) */
    const bool keep_r = k == 0 || (k + 1 >= s->est_iters && (tt + 1) % CHEBY_CHECK_EVERY == 0);
    double alpha, beta;
    cheby_step(c, &alpha, &beta);
    tea_field *u = field_of(s, *cur), *next = field_of(s, *cur ^ 1);
    amp_arg step[] = {amp_arg_view(u->view),  amp_arg_view(s->vkx),       amp_arg_view(s->vky),
                      amp_arg_view(s->vu0),   amp_arg_view(s->vu),        amp_arg_view(s->vr),
                      amp_arg_view(next->view), amp_arg_float64(alpha),   amp_arg_float64(beta),
                      amp_arg_int32(keep_r)};
    TEA_CHECK(tea_exchange(s, u));
    TEA_CHECK(amp_parallel_for_each(s->q, e, s->cheby_step, step, 10));
    *cur ^= 1;
    if (keep_r) TEA_CHECK(tea_dot_host(s, s->vr, s->vr, AMP_MAP_SQUARE, err));
    if (k == 0) {
        double bb = 0;
        TEA_CHECK(tea_dot_host(s, s->vu0, s->vu0, AMP_MAP_SQUARE, &bb));
        s->est_iters = cheby_estimate(s, bb, *err);
    }
    return AMP_OK;
}

/* PPCG's iteration k (0: the true residual first); err: its rrn. */
static amp_status ppcg_iteration(tea_solver *s, const double *alpha, const double *beta, double theta, int k,
                                 double *err)
{
    const amp_extent e = amp_extent_2d(s->rows, s->nx);
    if (k == 0) {
        tea_field *u = &s->sd[0];
        amp_arg cp[] = {amp_arg_view(s->vu), amp_arg_view(u->view)};
        amp_arg rs[] = {amp_arg_view(u->view), amp_arg_view(s->vkx), amp_arg_view(s->vky), amp_arg_view(s->vu0),
                        amp_arg_view(s->vr)};
        TEA_CHECK(amp_parallel_for_each(s->q, e, s->copy_into_field, cp, 2));
        TEA_CHECK(tea_exchange(s, u));
        TEA_CHECK(amp_parallel_for_each(s->q, e, s->residual, rs, 5));
    }
    TEA_CHECK(tea_cg_wur(s));
    amp_arg sd[] = {amp_arg_view(s->vr), amp_arg_view(s->sd[0].view), amp_arg_float64(theta)};
    TEA_CHECK(amp_parallel_for_each(s->q, e, s->ppcg_init_sd, sd, 3));
    for (int j = 0; j < s->inner_steps; ++j) {
        tea_field *cur = &s->sd[j & 1], *next = &s->sd[(j & 1) ^ 1];
        amp_arg in[] = {amp_arg_view(cur->view), amp_arg_view(s->vkx), amp_arg_view(s->vky),
                        amp_arg_view(s->vr),     amp_arg_view(s->vu),  amp_arg_view(next->view),
                        amp_arg_float64(alpha[j]), amp_arg_float64(beta[j])};
        TEA_CHECK(tea_exchange(s, cur));
        TEA_CHECK(amp_parallel_for_each(s->q, e, s->ppcg_inner, in, 8));
    }
    TEA_CHECK(tea_cg_p(s, true));
    TEA_CHECK(amp_array_copy_to_host(s->rr[s->parity], err));
    return AMP_OK;
}

/* Jacobi from u (copied into p's field: CG's set-up left r there), u
 * alternating between p's field and sd[0]. The error: the sum of |u' - u|
 * each iteration, and every 50th (from the first) r . r after it. */
static amp_status jacobi_solve(tea_solver *s, int max_iters, int *iters, double *error)
{
    const amp_extent e = amp_extent_2d(s->rows, s->nx);
    int cur = 0, tt;
    double err = 0;
    amp_arg start[] = {amp_arg_view(s->vu), amp_arg_view(field_of(s, 0)->view)};
    TEA_CHECK(amp_parallel_for_each(s->q, e, s->copy_into_field, start, 2));
    for (tt = 0; tt < max_iters; ++tt) {
        tea_field *u = field_of(s, cur), *next = field_of(s, cur ^ 1);
        amp_arg a[] = {amp_arg_view(u->view), amp_arg_view(s->vkx),     amp_arg_view(s->vky),
                       amp_arg_view(s->vu0),  amp_arg_view(next->view), amp_arg_view(s->vw)};
        TEA_CHECK(tea_exchange(s, u));
        TEA_CHECK(amp_parallel_for_each(s->q, e, s->jacobi, a, 6));
        cur ^= 1;
        TEA_CHECK(tea_dot_host(s, s->vw, s->vw, AMP_MAP_ABS, &err));
        if (tt % 50 == 0) {
            tea_field *now = field_of(s, cur);
            amp_arg rs[] = {amp_arg_view(now->view), amp_arg_view(s->vkx), amp_arg_view(s->vky),
                            amp_arg_view(s->vu0),    amp_arg_view(s->vr)};
            TEA_CHECK(tea_exchange(s, now));
            TEA_CHECK(amp_parallel_for_each(s->q, e, s->residual, rs, 5));
            TEA_CHECK(tea_dot_host(s, s->vr, s->vr, AMP_MAP_SQUARE, &err));
        }
        if (fabs(err) < s->eps) break;
    }
    amp_arg cp[] = {amp_arg_view(field_of(s, cur)->view), amp_arg_view(s->vu)};
    TEA_CHECK(amp_parallel_for_each(s->q, e, s->copy_from_field, cp, 2));
    s->poly_iters = tt < max_iters ? tt + 1 : max_iters;
    *iters = s->poly_iters;
    *error = err;
    return AMP_OK;
}

/* Room for at least one more CG iteration's alpha and beta in *a and *b
 * (*cap of each), doubled as CG goes on: the CG iterations before the
 * switch are a few dozen, max_iters may be a billion. */
static bool room_for_one_more(double **a, double **b, int *cap, int used)
{
    if (used < *cap) return true;
    const int want = *cap < 32 ? 32 : *cap > INT_MAX / 2 ? INT_MAX : *cap * 2;
    if (want <= used) return false;
    double *na = realloc(*a, (size_t)want * sizeof **a);
    if (na) *a = na;
    double *nb = na ? realloc(*b, (size_t)want * sizeof **b) : NULL;
    if (nb) *b = nb;
    if (!na || !nb) return false;
    *cap = want;
    return true;
}

amp_status tea_poly_solve(tea_solver *s, int max_iters, int *iters, double *error)
{
    if (s->solver == TEA_SOLVER_JACOBI) return jacobi_solve(s, max_iters, iters, error);
    const bool chebyshev = s->solver == TEA_SOLVER_CHEBYSHEV;
    double *cg_alpha = NULL, *cg_beta = NULL;
    int cg_cap = 0;
    const size_t inner = s->inner_steps > 0 ? (size_t)s->inner_steps : 1; /* 0 inner steps: CG from the true residual */
    double *in_alpha = malloc(inner * sizeof *in_alpha);
    double *in_beta = malloc(inner * sizeof *in_beta);
    amp_status st = AMP_OK;
    if (!in_alpha || !in_beta) {
        fprintf(stderr, "tealeaf: no host memory for %zu inner steps' coefficients\n", inner);
        st = AMP_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    double err = 0;
    if ((st = amp_array_copy_to_host(s->rr[s->parity], &err)) != AMP_OK) {
        fprintf(stderr, "tealeaf: reading r . r failed: %s\n", amp_last_error());
        goto out;
    }
    cheby c = {0};
    int cg = 0, poly = 0, cur = 0, tt;
    s->eigmin = s->eigmax = 0; /* this step's, once it switches */
    /* Converged before any step (a uniform field: r . r is 0) is done, as
     * the CG solver has it: a step from there divides 0 by p . w = 0, and
     * the kernels' own stop test is off under these solvers. */
    for (tt = 0; tt < max_iters && !(fabs(err) < s->eps); ++tt) {
        const bool switched = poly > 0 || (s->error_switch ? err < s->eps_lim && tt > SWITCH_MIN_CG
                                                           : tt > s->presteps && err < SWITCH_ERROR_MAX);
        if (!switched) {
            if (!room_for_one_more(&cg_alpha, &cg_beta, &cg_cap, cg)) {
                fprintf(stderr, "tealeaf: no host memory for %d CG iterations' coefficients\n", cg + 1);
                st = AMP_ERROR_OUT_OF_MEMORY;
                goto out;
            }
            st = cg_step(s, &cg_alpha[cg], &cg_beta[cg], &err);
            ++cg;
        } else {
            if (poly == 0) {
                if ((st = estimate_eigenvalues(s, cg_alpha, cg_beta, cg)) != AMP_OK) goto out;
                c = cheby_start(s);
                if (!chebyshev) { /* the inner steps' coefficients, the same every iteration */
                    cheby steps = c;
                    for (int j = 0; j < s->inner_steps; ++j) cheby_step(&steps, &in_alpha[j], &in_beta[j]);
                }
            }
            st = chebyshev ? cheby_iteration(s, &c, poly, tt, &cur, &err)
                           : ppcg_iteration(s, in_alpha, in_beta, c.theta, poly, &err);
            ++poly;
        }
        if (st != AMP_OK) goto out;
    }
    if (chebyshev && poly > 0) {
        /* u back from its field (the u array held d) */
        amp_arg cp[] = {amp_arg_view(field_of(s, cur)->view), amp_arg_view(s->vu)};
        if ((st = amp_parallel_for_each(s->q, amp_extent_2d(s->rows, s->nx), s->copy_from_field, cp, 2)) != AMP_OK) {
            fprintf(stderr, "tealeaf: copying u back failed: %s\n", amp_last_error());
            goto out;
        }
    }
    s->cg_iters = cg;
    s->poly_iters = poly;
    *iters = cg + poly;
    *error = err;
out:
    free(cg_alpha);
    free(cg_beta);
    free(in_alpha);
    free(in_beta);
    return st;
}
