/* cg.c — conjugate gradients for the 2-D Poisson problem (5-point stencil, zero Dirichlet boundary, f = 1) with hipamp kernels and amp_transform_reduce_async for the dot products: an iteration queues its five or seven launches and never waits on the host, except the convergence test's read of one scalar; --check runs a serial C reference and compares iteration counts, residuals and solutions.
 *
 *   cg [--n N] [--tol T] [--max-iters K] [--check-every K] [--accelerator PATH] [--check]
 *
 * Written for two extensions: the row split across MPI ranks (issue 23; a
 * solver holds a block of rows with a halo row above and below p, the dot
 * products and the halo exchange are the two functions marked
 * "communication"), and launch graphs (issue 24; cg_iteration queues one
 * whole iteration on one accelerator view with every scalar on the device,
 * so it can be recorded once and replayed).
 *
 * Agreement with the reference (--check): CG in floating point depends on
 * the order of each dot product's sum, which differs (pairwise on the
 * accelerator, serial in C), so the runs agree to rounding, not bit for
 * bit: the iteration counts are equal (or differ by one when a residual
 * falls within the tolerance's rounding), the final relative residuals
 * agree to 1e-6 of each other, and the solutions to 1e-8 of their largest
 * value. */
#define _POSIX_C_SOURCE 200809L
#include <hipamp.h>

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

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The part of the n x n grid one solver holds: rows [first_row,
 * first_row + rows) (a single rank: all of it). */
typedef struct cg_grid {
    int n, rows, first_row;
} cg_grid;

typedef struct cg_solver {
    amp_accelerator_view *q;
    cg_grid g;
    amp_program *prog;
    amp_kernel *apply, *update_xr, *update_p;
    amp_array *x, *r, *p, *ap;              /* rows x n; p: (rows + 2) x n */
    amp_array_view *vx, *vr, *vp, *vp_in, *vap; /* vp_in: p's own rows */
    amp_array *rr, *pap, *rr_new;           /* CG's scalars, on the device */
} cg_solver;

/* ----------------------------------------------------- communication */

/* p's halo rows: on one rank the zero boundary, written once. (Row split:
 * exchange p's first and last own rows with the neighbours' halos here.) */
static amp_status cg_exchange_halos(cg_solver *s)
{
    (void)s;
    return AMP_OK;
}

/* out = a . b over the solver's rows, on the device. (Row split: the local
 * dot into out, then MPI_Allreduce of it across the ranks.) */
static amp_status cg_dot(cg_solver *s, amp_array_view *a, amp_array_view *b, amp_array *out)
{
    return amp_transform_reduce_async(s->q, amp_arg_view(a), amp_arg_view(b), AMP_TYPE_FLOAT64, AMP_MAP_PRODUCT,
                                      AMP_OP_SUM, amp_arg_array(out), NULL);
}

/* --------------------------------------------------------------- solver */

static double cg_rhs(int n) /* b = h^2 f with f = 1 */
{
    double h = 1.0 / (n + 1);
    return h * h;
}

static amp_status cg_init(cg_solver *s, amp_accelerator *acc, cg_grid g)
{
    memset(s, 0, sizeof *s);
    s->g = g;
    CHECK(amp_accelerator_view_create(acc, &s->q));
    CHECK(amp_program_build(acc, cg_kernels, NULL, &s->prog));
    CHECK(amp_program_get_kernel(s->prog, "cg_apply", &s->apply));
    CHECK(amp_program_get_kernel(s->prog, "cg_update_xr", &s->update_xr));
    CHECK(amp_program_get_kernel(s->prog, "cg_update_p", &s->update_p));
    amp_extent own = amp_extent_2d(g.rows, g.n);
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
    /* x = 0, r = p = b, rr = r . r; p's halos 0. */
    double zero = 0.0, b = cg_rhs(g.n);
    CHECK(amp_fill(s->q, amp_arg_array(s->x), &zero));
    CHECK(amp_fill(s->q, amp_arg_array(s->p), &zero));
    CHECK(amp_fill(s->q, amp_arg_array(s->r), &b));
    CHECK(amp_fill(s->q, amp_arg_view(s->vp_in), &b));
    CHECK(cg_exchange_halos(s));
    return cg_dot(s, s->vr, s->vr, s->rr);
}

/* One iteration, queued on s->q; nothing waits on the host. */
static amp_status cg_iteration(cg_solver *s)
{
    amp_extent own = amp_extent_2d(s->g.rows, s->g.n);
    amp_arg a1[] = {amp_arg_view(s->vp), amp_arg_view(s->vap)};
    amp_arg a2[] = {amp_arg_view(s->vx), amp_arg_view(s->vr), amp_arg_view(s->vp), amp_arg_view(s->vap),
                    amp_arg_array(s->rr), amp_arg_array(s->pap)};
    amp_arg a3[] = {amp_arg_view(s->vp), amp_arg_view(s->vr), amp_arg_array(s->rr_new), amp_arg_array(s->rr)};
    CHECK(cg_exchange_halos(s));
    CHECK(amp_parallel_for_each(s->q, own, s->apply, a1, 2));
    CHECK(cg_dot(s, s->vp_in, s->vap, s->pap));
    CHECK(amp_parallel_for_each(s->q, own, s->update_xr, a2, 6));
    CHECK(cg_dot(s, s->vr, s->vr, s->rr_new));
    CHECK(amp_parallel_for_each(s->q, own, s->update_p, a3, 4));
    amp_array *t = s->rr; /* the new r . r is rr from now on */
    s->rr = s->rr_new;
    s->rr_new = t;
    return AMP_OK;
}

/* The convergence test's one host round trip: r . r. */
static amp_status cg_rr(cg_solver *s, double *rr) { return amp_array_copy_to_host(s->rr, rr); }

static void cg_free(cg_solver *s)
{
    amp_array_view *views[] = {s->vp_in, s->vp, s->vx, s->vr, s->vap};
    for (size_t i = 0; i < sizeof views / sizeof views[0]; ++i) amp_array_view_destroy(views[i]);
    amp_array *arrays[] = {s->x, s->r, s->p, s->ap, s->rr, s->pap, s->rr_new};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) amp_array_destroy(arrays[i]);
    amp_program_destroy(s->prog);
    amp_accelerator_view_destroy(s->q);
}

/* ------------------------------------------------------ serial reference */

/* The same iteration in plain C; *x gets the solution (n x n). */
static void cg_reference(int n, double tol, int max_iters, int *iters, double *rel, double *x)
{
    size_t m = (size_t)n * n;
    double *r = malloc(m * 8), *p = calloc((size_t)(n + 2) * n, 8), *ap = malloc(m * 8);
    if (!r || !p || !ap) {
        *iters = -1;
        goto out;
    }
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
        for (int i = 0; i < n; ++i)
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
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    int n = 256, max_iters = -1, check_every = 1;
    double tol = 1e-8;
    const char *path = NULL;
    bool check = false;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc) n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tol") && i + 1 < argc) tol = atof(argv[++i]);
        else if (!strcmp(argv[i], "--max-iters") && i + 1 < argc) max_iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--check-every") && i + 1 < argc) check_every = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--accelerator") && i + 1 < argc) path = argv[++i];
        else if (!strcmp(argv[i], "--check")) check = true;
        else {
            fprintf(stderr, "usage: %s [--n N] [--tol T] [--max-iters K] [--check-every K] [--accelerator PATH] "
                            "[--check]\n", argv[0]);
            return 2;
        }
    }
    if (n < 2 || n > 32768 || check_every < 1 || !(tol > 0)) {
        fprintf(stderr, "cg: need 2 <= n <= 32768, --check-every >= 1 and tol > 0\n");
        return 2;
    }
    if (max_iters < 0) max_iters = 10 * n;
    amp_accelerator *acc = NULL;
    amp_accelerator_info info;
    amp_status st = path ? amp_accelerator_find(path, &acc) : amp_accelerator_default(&acc);
    if (st != AMP_OK || amp_accelerator_get_info(acc, &info) != AMP_OK) {
        fprintf(stderr, "cg: no accelerator: %s\n", amp_last_error());
        return 1;
    }
    printf("cg: 2-D Poisson, %d x %d grid, on %s (%s)\n", n, n, info.device_path, info.description);

    cg_solver s;
    cg_grid g = {n, n, 0};
    if (cg_init(&s, acc, g) != AMP_OK) return 1;
    double bb = 0, rr = 0;
    if (cg_rr(&s, &bb) != AMP_OK) return 1;
    rr = bb;
    int it = 0;
    double t0 = now_ms();
    while (it < max_iters && sqrt(rr / bb) > tol) {
        if (cg_iteration(&s) != AMP_OK) return 1;
        ++it;
        if (it % check_every == 0 && cg_rr(&s, &rr) != AMP_OK) return 1;
    }
    if (cg_rr(&s, &rr) != AMP_OK) return 1;
    double ms = now_ms() - t0, rel = sqrt(rr / bb);
    printf("cg: %d iterations, relative residual %.6e, %.3f ms an iteration\n", it, rel, it ? ms / it : 0.0);

    int status = 0;
    if (check) {
        size_t m = (size_t)n * n;
        double *x = malloc(m * 8), *xr = malloc(m * 8);
        int rit = 0;
        double rrel = 0;
        if (!x || !xr || amp_array_copy_to_host(s.x, x) != AMP_OK) return 1;
        cg_reference(n, tol, max_iters, &rit, &rrel, xr);
        double dx = 0, xmax = 0;
        for (size_t i = 0; i < m; ++i) {
            dx = fmax(dx, fabs(x[i] - xr[i]));
            xmax = fmax(xmax, fabs(xr[i]));
        }
        printf("reference (serial C): %d iterations, relative residual %.6e; largest solution difference %.3e "
               "(of %.3e)\n", rit, rrel, dx, xmax);
        bool iters_ok = abs(it - rit) <= 1 && check_every == 1;
        bool res_ok = it != rit || fabs(rel - rrel) <= 1e-6 * rrel;
        bool x_ok = dx <= 1e-8 * xmax;
        if (iters_ok && res_ok && x_ok && rel <= tol) {
            printf("cg: agrees with the reference (iterations within 1, residuals within 1e-6, solutions within "
                   "1e-8)\n");
        } else {
            printf("cg: DIFFERS from the reference (iterations %s, residual %s, solution %s%s)\n",
                   iters_ok ? "ok" : "differ", res_ok ? "ok" : "differs", x_ok ? "ok" : "differs",
                   rel <= tol ? "" : ", not converged");
            status = 1;
        }
        free(x);
        free(xr);
    }
    cg_free(&s);
    return status;
}
