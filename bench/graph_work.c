/* graph_work.c — the launch-graph benchmark's workloads (graph_work.h): the chain of dependent launches and the conjugate-gradient iteration, run directly or recorded into a graph by the same code, and examples/cg's solver iteration with and without its graphs. */
#define _GNU_SOURCE
#include "graph_work.h"

#include "cg_solver.h"

#include <stdlib.h>
#include <time.h>
#include <string.h>

#define TRY(call)                                                                                                  \
    do {                                                                                                           \
        amp_status st_ = (call);                                                                                   \
        if (st_ != AMP_OK) return st_;                                                                             \
    } while (0)

void gw_chain_init(float *x, int n, unsigned seed, int k)
{
    for (int i = 0; i < n; ++i) x[i] = (float)(((unsigned)i * 37u + seed * 101u + (unsigned)k * 7u) % 1000u) / 8.0f;
}

amp_status gw_chain_open(gw_chain *c, amp_accelerator_view *q, amp_program *p, int n, unsigned seed)
{
    memset(c, 0, sizeof *c);
    c->q = q;
    c->n = n;
    TRY(amp_program_get_kernel(p, "chain_step", &c->step));
    for (int k = 0; k < 3; ++k) {
        if (!(c->host[k] = malloc((size_t)n * sizeof(float)))) return AMP_ERROR_OUT_OF_MEMORY;
        gw_chain_init(c->host[k], n, seed, k);
        TRY(amp_array_view_create(c->host[k], sizeof(float), amp_extent_1d(n), AMP_READ_WRITE, &c->v[k]));
    }
    return AMP_OK;
}

amp_status gw_chain_run(gw_chain *c, int launches)
{
    for (int k = 0; k < launches; ++k) {
        amp_arg a[3] = {amp_arg_view(c->v[k % 3]), amp_arg_view(c->v[(k + 1) % 3]), amp_arg_view(c->v[(k + 2) % 3])};
        TRY(amp_parallel_for_each(c->q, amp_extent_1d(c->n), c->step, a, 3));
    }
    return AMP_OK;
}

/* What run queues on q with (w, n), recorded into *out. */
static amp_status gw_record(amp_accelerator_view *q, amp_status (*run)(void *, int), void *w, int n, amp_graph **out)
{
    TRY(amp_graph_begin_recording(q));
    amp_status st = run(w, n);
    amp_status ended = amp_graph_end_recording(q, out);
    return st != AMP_OK ? st : ended;
}

static amp_status gw_chain_run_any(void *c, int n) { return gw_chain_run(c, n); }

amp_status gw_chain_record(gw_chain *c, int launches, amp_graph **out)
{
    return gw_record(c->q, gw_chain_run_any, c, launches, out);
}

amp_status gw_chain_sync(gw_chain *c)
{
    for (int k = 0; k < 3; ++k) TRY(amp_array_view_synchronize(c->v[k]));
    return AMP_OK;
}

void gw_chain_close(gw_chain *c)
{
    for (int k = 0; k < 3; ++k) {
        amp_array_view_destroy(c->v[k]);
        free(c->host[k]);
    }
    memset(c, 0, sizeof *c);
}

amp_status gw_cg_open(gw_cg *c, amp_accelerator_view *q, amp_program *p, int n)
{
    memset(c, 0, sizeof *c);
    c->q = q;
    c->n = n;
    c->nparts = n * n / 256;
    if (n * n % 256 || c->nparts > 256 * 256) return AMP_ERROR_INVALID_ARGUMENT;
    TRY(amp_program_get_kernel(p, "cg_apply", &c->apply));
    TRY(amp_program_get_kernel(p, "cg_dot_part", &c->part));
    TRY(amp_program_get_kernel(p, "cg_dot_finish", &c->finish));
    TRY(amp_program_get_kernel(p, "cg_update_xr", &c->xr));
    TRY(amp_program_get_kernel(p, "cg_update_p", &c->pu));
    amp_extent e = amp_extent_1d(n * n);
    TRY(amp_array_create(q, sizeof(float), e, NULL, &c->x));
    TRY(amp_array_create(q, sizeof(float), e, NULL, &c->r));
    TRY(amp_array_create(q, sizeof(float), e, NULL, &c->p));
    TRY(amp_array_create(q, sizeof(float), e, NULL, &c->ap));
    TRY(amp_array_create(q, sizeof(float), amp_extent_1d(c->nparts), NULL, &c->parts));
    TRY(amp_array_create(q, sizeof(float), amp_extent_1d(4), NULL, &c->sc));
    return gw_cg_reset(c);
}

amp_status gw_cg_reset(gw_cg *c)
{
    size_t nn = (size_t)c->n * c->n;
    float *h = calloc(nn, sizeof *h);
    if (!h) return AMP_ERROR_OUT_OF_MEMORY;
    amp_status st = amp_array_copy_from_host(c->x, h);
    for (size_t i = 0; i < nn; ++i) h[i] = 1.0f;
    if (st == AMP_OK) st = amp_array_copy_from_host(c->r, h);
    if (st == AMP_OK) st = amp_array_copy_from_host(c->p, h);
    free(h);
    float sc[4] = {(float)nn, 0, 0, 0};
    if (st == AMP_OK) st = amp_array_copy_from_host(c->sc, sc);
    return st;
}

/* One dot product of a and b into the scalars (what: see the kernel). */
static amp_status gw_cg_dot(gw_cg *c, amp_array *a, amp_array *b, int what)
{
    amp_tiled_extent t1, t256;
    TRY(amp_extent_tile_1d(amp_extent_1d(c->n * c->n), 256, &t1));
    TRY(amp_extent_tile_1d(amp_extent_1d(256), 256, &t256));
    amp_arg pa[3] = {amp_arg_array(a), amp_arg_array(b), amp_arg_array(c->parts)};
    TRY(amp_parallel_for_each_tiled(c->q, t1, c->part, pa, 3));
    amp_arg fa[4] = {amp_arg_array(c->parts), amp_arg_array(c->sc), amp_arg_int32(c->nparts), amp_arg_int32(what)};
    return amp_parallel_for_each_tiled(c->q, t256, c->finish, fa, 4);
}

amp_status gw_cg_iterate(gw_cg *c, int iterations)
{
    int nn = c->n * c->n;
    for (int it = 0; it < iterations; ++it) {
        amp_arg aa[3] = {amp_arg_array(c->p), amp_arg_array(c->ap), amp_arg_int32(c->n)};
        TRY(amp_parallel_for_each(c->q, amp_extent_2d(c->n, c->n), c->apply, aa, 3));
        TRY(gw_cg_dot(c, c->p, c->ap, 0));
        amp_arg xa[5] = {amp_arg_array(c->x), amp_arg_array(c->r), amp_arg_array(c->p), amp_arg_array(c->ap),
                         amp_arg_array(c->sc)};
        TRY(amp_parallel_for_each(c->q, amp_extent_1d(nn), c->xr, xa, 5));
        TRY(gw_cg_dot(c, c->r, c->r, 1));
        amp_arg pa[3] = {amp_arg_array(c->p), amp_arg_array(c->r), amp_arg_array(c->sc)};
        TRY(amp_parallel_for_each(c->q, amp_extent_1d(nn), c->pu, pa, 3));
    }
    return AMP_OK;
}

static amp_status gw_cg_iterate_any(void *c, int n) { return gw_cg_iterate(c, n); }

amp_status gw_cg_record(gw_cg *c, int iterations, amp_graph **out)
{
    return gw_record(c->q, gw_cg_iterate_any, c, iterations, out);
}

amp_status gw_cg_result(gw_cg *c, float *x, float *rho)
{
    float sc[4];
    TRY(amp_array_copy_to_host(c->sc, sc));
    *rho = sc[0];
    return x ? amp_array_copy_to_host(c->x, x) : AMP_OK;
}

void gw_cg_close(gw_cg *c)
{
    amp_array_destroy(c->x);
    amp_array_destroy(c->r);
    amp_array_destroy(c->p);
    amp_array_destroy(c->ap);
    amp_array_destroy(c->parts);
    amp_array_destroy(c->sc);
    memset(c, 0, sizeof *c);
}

/* ------------------------------------------------------------ figures */

static double gw_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int gw_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double gw_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, gw_cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

enum { GW_MAX_REPS = 15 };

/* Seconds of one batch: the view idle, the work, the view idle again. */
#define GW_TIME(q, secs, work)                                                                                     \
    do {                                                                                                           \
        TRY(amp_accelerator_view_wait(q));                                                                         \
        double t0_ = gw_now();                                                                                     \
        work;                                                                                                      \
        TRY(amp_accelerator_view_wait(q));                                                                         \
        (secs) = gw_now() - t0_;                                                                                   \
    } while (0)

static amp_status gw_measure_chain(amp_accelerator_view *q, amp_program *p, gw_figures *f)
{
    gw_chain direct, graphed;
    amp_graph *g = NULL;
    double td[GW_MAX_REPS], tg[GW_MAX_REPS];
    int L = f->chain_launches;
    TRY(gw_chain_open(&direct, q, p, 4096, 1));
    TRY(gw_chain_open(&graphed, q, p, 4096, 1));
    TRY(gw_chain_record(&graphed, L, &g));
    /* Warm-up and the check: one chain each way from the same data. */
    TRY(gw_chain_run(&direct, L));
    TRY(amp_graph_launch(q, g));
    TRY(gw_chain_sync(&direct));
    TRY(gw_chain_sync(&graphed));
    f->chain_same = true;
    for (int k = 0; k < 3; ++k)
        f->chain_same = f->chain_same && !memcmp(direct.host[k], graphed.host[k], 4096 * sizeof(float));
    for (int r = 0; r < f->reps; ++r) {
        GW_TIME(q, td[r], TRY(gw_chain_run(&direct, L)));
        GW_TIME(q, tg[r], TRY(amp_graph_launch(q, g)));
    }
    f->chain_direct_us = gw_median(td, f->reps) / L * 1e6;
    f->chain_graph_us = gw_median(tg, f->reps) / L * 1e6;
    TRY(amp_graph_destroy(g));
    gw_chain_close(&direct);
    gw_chain_close(&graphed);
    return AMP_OK;
}

static amp_status gw_measure_cg(amp_accelerator_view *q, amp_program *p, gw_figures *f)
{
    gw_cg c;
    amp_graph *g = NULL;
    double td[GW_MAX_REPS], tg[GW_MAX_REPS];
    int I = f->cg_iters;
    size_t nn = (size_t)f->cg_n * f->cg_n;
    float *x1 = malloc(nn * sizeof *x1), *x2 = malloc(nn * sizeof *x2), rho1 = 0, rho2 = 0;
    if (!x1 || !x2) {
        free(x1);
        free(x2);
        return AMP_ERROR_OUT_OF_MEMORY;
    }
    TRY(gw_cg_open(&c, q, p, f->cg_n));
    TRY(gw_cg_record(&c, 1, &g));
    /* The check: I iterations each way from the same start. */
    TRY(gw_cg_iterate(&c, I));
    TRY(gw_cg_result(&c, x1, &rho1));
    TRY(gw_cg_reset(&c));
    for (int it = 0; it < I; ++it) TRY(amp_graph_launch(q, g));
    TRY(gw_cg_result(&c, x2, &rho2));
    f->cg_same = !memcmp(x1, x2, nn * sizeof *x1) && !memcmp(&rho1, &rho2, sizeof rho1);
    f->cg_rho = rho1;
    free(x1);
    free(x2);
    for (int r = 0; r < f->reps; ++r) {
        TRY(gw_cg_reset(&c));
        GW_TIME(q, td[r], TRY(gw_cg_iterate(&c, I)));
        TRY(gw_cg_reset(&c));
        GW_TIME(q, tg[r], for (int it = 0; it < I; ++it) TRY(amp_graph_launch(q, g)));
    }
    f->cg_direct_us = gw_median(td, f->reps) / I * 1e6;
    f->cg_graph_us = gw_median(tg, f->reps) / I * 1e6;
    TRY(amp_graph_destroy(g));
    gw_cg_close(&c);
    return AMP_OK;
}

/* Whether a and b hold the same x and r . r, bit for bit. */
static amp_status gw_solver_same(cg_solver *a, cg_solver *b, size_t nn, bool *same)
{
    double *xa = malloc(nn * sizeof *xa), *xb = malloc(nn * sizeof *xb), ra = 0, rb = 0;
    amp_status st = xa && xb ? AMP_OK : AMP_ERROR_OUT_OF_MEMORY;
    if (st == AMP_OK) st = amp_array_copy_to_host(a->x, xa);
    if (st == AMP_OK) st = amp_array_copy_to_host(b->x, xb);
    if (st == AMP_OK) st = cg_rr(a, &ra);
    if (st == AMP_OK) st = cg_rr(b, &rb);
    *same = st == AMP_OK && !memcmp(xa, xb, nn * sizeof *xa) && !memcmp(&ra, &rb, sizeof ra);
    free(xa);
    free(xb);
    return st;
}

static amp_status gw_measure_solver(amp_accelerator *acc, gw_figures *f)
{
    cg_solver a, b;
    double td[GW_MAX_REPS], tg[GW_MAX_REPS];
    int I = f->solver_iters;
    cg_grid grid = {f->cg_n, f->cg_n, f->cg_n, 0};
    amp_status st = cg_init(&a, acc, grid, NULL);
    if (st == AMP_OK) st = cg_init(&b, acc, grid, NULL);
    if (st == AMP_OK) st = cg_use_graphs(&b);
    /* The check: I iterations each way from the same start, then again
     * after the timed batches. */
    for (int it = 0; it < I && st == AMP_OK; ++it)
        if ((st = cg_iteration(&a)) == AMP_OK) st = cg_iteration(&b);
    bool before = false;
    if (st == AMP_OK) st = gw_solver_same(&a, &b, (size_t)f->cg_n * f->cg_n, &before);
    for (int r = 0; r < f->reps && st == AMP_OK; ++r) {
        GW_TIME(a.q, td[r], for (int it = 0; it < I; ++it) TRY(cg_iteration(&a)));
        GW_TIME(b.q, tg[r], for (int it = 0; it < I; ++it) TRY(cg_iteration(&b)));
    }
    if (st == AMP_OK) st = gw_solver_same(&a, &b, (size_t)f->cg_n * f->cg_n, &f->solver_same);
    f->solver_same = f->solver_same && before;
    if (st == AMP_OK) {
        f->solver_direct_us = gw_median(td, f->reps) / I * 1e6;
        f->solver_graph_us = gw_median(tg, f->reps) / I * 1e6;
    }
    cg_free(&a);
    cg_free(&b);
    return st;
}

amp_status gw_measure(amp_accelerator *acc, bool quick, gw_figures *f)
{
    memset(f, 0, sizeof *f);
    f->chain_launches = 1000;
    f->cg_n = 256;
    f->cg_iters = quick ? 20 : 100;
    f->reps = quick ? 5 : 9;
    f->solver_iters = 20; /* (reps + 1) batches stay below CG's 470 iterations at 256 x 256 */
    amp_accelerator_view *q = NULL;
    amp_program *p = NULL;
    amp_status st = amp_accelerator_view_create(acc, &q);
    if (st == AMP_OK) st = amp_program_build(acc, gw_source, NULL, &p);
    if (st == AMP_OK) st = gw_measure_chain(q, p, f);
    if (st == AMP_OK) st = gw_measure_cg(q, p, f);
    if (st == AMP_OK) st = gw_measure_solver(acc, f);
    if (p) amp_program_destroy(p);
    if (q) amp_accelerator_view_destroy(q);
    return st;
}
