/* cg_mpi.c — the conjugate-gradient example across MPI ranks: the n x ny grid's rows split across the ranks, one accelerator per rank (by node-local rank), the solver of cg_solver.c with p's halo rows exchanged by hipamp::mpi (begun before the interior rows' stencil, ended before the edge rows') and each dot product reduced on the rank by amp_transform_reduce, then summed by MPI_Allreduce; --check compares the result with the single-rank solver and the serial C reference on rank 0.
 *
 *   mpiexec -n P cg_mpi [--n N] [--ny NY] [--tol T] [--max-iters K] [--warmup K] [--check-every K]
 *                       [--path auto|host|device|staged|nccl] [--accelerator PATH] [--no-overlap] [--check]
 *
 * An iteration's host round trips are the two sums (each a local dot
 * product's 8 bytes to the host, an MPI_Allreduce, 8 bytes back); the
 * convergence test reads the second sum, already on the host. On the nccl
 * path the sums are ncclAllReduce on the device (amp_mpi_exchange_allreduce)
 * and an iteration queues everything without waiting, but the convergence
 * test reads r . r every --check-every iterations. Every rank
 * takes the same decisions from the same sums: MPI_Allreduce gives every
 * rank the same bits (Open MPI's and MPICH's algorithms for a commutative
 * built-in operation combine the same two operands on every rank, and the
 * MPI standard asks for it), so no rank leaves the loop alone.
 *
 * Agreement (--check; cg_solver.c says why): with the single-rank solver
 * and with the reference, iteration counts within 1, final relative
 * residuals within 1e-6 of each other (or 1e-14 apart) and solutions within
 * 1e-8 of their largest value. The row split changes only the order of each dot
 * product's sum (each rank's rows, then the ranks' partial sums).
 *
 * Rank 0 prints the run (per rank: device, rows, bytes per iteration) and
 * lines of "key value" that test_mpi and bench/scaling_model.py read:
 * iterations, relative_residual, time_per_iteration_s, halo and MPI bytes per
 * iteration, and cg_model_inputs. */
#include "cg_solver.h"
#include "mpi_example.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const usage_text =
    "usage: cg_mpi [--n N] [--ny NY] [--tol T] [--max-iters K] [--warmup K] [--check-every K]\n"
    "              [--path auto|host|device|staged|nccl] [--accelerator PATH] [--no-overlap] [--check]\n"
    "  --n N          N x N interior grid (default 256), its rows split across the ranks\n"
    "  --ny NY        NY rows instead of N (an N x NY rectangle, the same spacing)\n"
    "  --tol T        stop when |r| / |b| <= T (default 1e-8)\n"
    "  --max-iters K  at most K iterations (default 10 N)\n"
    "  --warmup K     iterations left out of the time per iteration (default 1)\n"
    "  --check-every K  the nccl path: read r . r for the convergence test every K iterations\n"
    "                 (default 1: the same iterations as the other paths; the sums stay on the device)\n"
    "  --path         how halos cross between ranks (as heat_mpi; default auto)\n"
    "  --accelerator  device path for every rank (cpu, cuda:0, hip:1); default: by node-local rank\n"
    "  --no-overlap   exchange p's halos, then compute Ap on every row (default: the interior\n"
    "                 rows while the halos move, then the first and last row)\n"
    "  --check        compare with the single-rank solver and the serial C reference (rank 0)\n";

typedef struct options {
    long n, ny, max_iters, warmup, check_every;
    double tol;
    amp_mpi_path path;
    const char *accelerator;
    bool overlap, check;
} options;

/* What each rank sends rank 0 for the report (plain bytes). */
typedef struct rank_report {
    char device[32];
    int32_t first_row, rows, neighbours;
    uint64_t mpi_bytes;    /* exchanger: sent + received, the counted iterations */
    uint64_t copied_bytes; /* hipamp's statistics of the solver's queue */
    uint64_t staged_bytes;
    double seconds, exchange_seconds, allreduce_seconds;
    int64_t allreduces;
    int64_t exchanges, exchanges_overlapped; /* split_comm's, all iterations */
} rank_report;

/* ------------------------------------------------ the row split's comm */

typedef struct split_comm {
    amp_mpi_exchange *x;
    int lo, hi; /* neighbour ranks, MPI_PROC_NULL at the ends */
    amp_mpi_pending pending;
    int64_t allreduces;
    double allreduce_seconds;
    amp_accelerator_view *q; /* the solver's queue, whose statistics are counted */
    bool counting;           /* the counters were reset when the timed iterations began */
    /* What ran, all iterations: p's halo exchanges, and those with a launch
     * queued on q between their begin and their end (q's statistics; they
     * are reset only between iterations, by timed). */
    int64_t exchanges, exchanges_overlapped;
    uint64_t launched_at_begin;
    amp_array *arrays[4];    /* sum_device: the scalars seen, and a view of each */
    amp_array_view *views[4];
    int nviews;
} split_comm;

/* My first own row goes to lo and fills lo's bottom halo; my last goes to
 * hi; theirs fill my halos. */
static amp_status halo_begin(void *ctx, cg_solver *s)
{
    split_comm *c = ctx;
    amp_stats qs;
    amp_status st = amp_mpi_exchange_rows_begin(c->x, c->lo, s->p_first, s->p_halo_top, c->hi, s->p_last,
                                                s->p_halo_bottom, &c->pending);
    if (st != AMP_OK) fprintf(stderr, "cg_mpi: rank %d: halo exchange: %s\n", world_rank, amp_mpi_last_error());
    else if ((st = amp_accelerator_view_get_stats(c->q, &qs)) == AMP_OK) c->launched_at_begin = qs.launches;
    return st;
}

static amp_status halo_end(void *ctx, cg_solver *s)
{
    (void)s;
    split_comm *c = ctx;
    amp_stats qs;
    amp_status st = amp_mpi_exchange_end(c->x, c->pending);
    if (st != AMP_OK) {
        fprintf(stderr, "cg_mpi: rank %d: halo exchange: %s\n", world_rank, amp_mpi_last_error());
        return st;
    }
    /* This thread queues every launch: one counted now was queued before
     * the end, while the exchange was in flight. */
    if ((st = amp_accelerator_view_get_stats(c->q, &qs)) != AMP_OK) return st;
    c->exchanges++;
    if (qs.launches > c->launched_at_begin) c->exchanges_overlapped++;
    return st;
}

/* The NCCL path: the scalar summed across the ranks on the device, through
 * a view of it kept for the run (destroying a view waits for the queue). */
static amp_status sum_device(void *ctx, amp_array *value)
{
    split_comm *c = ctx;
    amp_array_view *v = NULL;
    for (int i = 0; i < c->nviews && !v; ++i)
        if (c->arrays[i] == value) v = c->views[i];
    if (!v) {
        if (c->nviews == 4) return AMP_ERROR_INVALID_ARGUMENT;
        amp_status st = amp_array_view_of_array(value, &v);
        if (st != AMP_OK) return st;
        c->arrays[c->nviews] = value;
        c->views[c->nviews++] = v;
    }
    double t0 = MPI_Wtime();
    amp_status st = amp_mpi_exchange_allreduce(c->x, v, AMP_MPI_DOUBLE, AMP_MPI_SUM);
    c->allreduce_seconds += MPI_Wtime() - t0;
    c->allreduces++;
    if (st != AMP_OK) fprintf(stderr, "cg_mpi: rank %d: all-reduce: %s\n", world_rank, amp_mpi_last_error());
    return st;
}

static amp_status sum(void *ctx, double *value)
{
    split_comm *c = ctx;
    double t0 = MPI_Wtime();
    int rc = MPI_Allreduce(MPI_IN_PLACE, value, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    c->allreduce_seconds += MPI_Wtime() - t0;
    c->allreduces++;
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "cg_mpi: rank %d: MPI_Allreduce failed (%d)\n", world_rank, rc);
        return AMP_ERROR_DEVICE;
    }
    return AMP_OK;
}

/* The timed iterations begin: every counter starts from zero, every rank
 * at the same iteration (the same decisions from the same sums). */
static void timed(void *ctx)
{
    split_comm *c = ctx;
    if (amp_accelerator_view_reset_stats(c->q) != AMP_OK) die("amp_accelerator_view_reset_stats", amp_last_error());
    if (amp_mpi_exchange_reset_stats(c->x) != AMP_OK) die("amp_mpi_exchange_reset_stats", amp_mpi_last_error());
    c->allreduces = 0;
    c->allreduce_seconds = 0;
    c->counting = true;
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ------------------------------------------------------------ options */

/* 0: run; 1: bad arguments (message in err); 2: --help. */
static int parse(int argc, char **argv, options *o, char *err, size_t n)
{
    memset(o, 0, sizeof *o);
    o->n = 256;
    o->max_iters = -1;
    o->warmup = 1;
    o->check_every = 1;
    o->tol = 1e-8;
    o->overlap = true;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return 2;
        if (!strcmp(a, "--no-overlap")) {
            o->overlap = false;
            continue;
        }
        if (!strcmp(a, "--check")) {
            o->check = true;
            continue;
        }
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = true;
        if (!strcmp(a, "--n")) ok = v && parse_long(v, 2, 32768, &o->n);
        else if (!strcmp(a, "--ny")) ok = v && parse_long(v, 1, 1 << 20, &o->ny);
        else if (!strcmp(a, "--max-iters")) ok = v && parse_long(v, 0, INT_MAX, &o->max_iters);
        else if (!strcmp(a, "--warmup")) ok = v && parse_long(v, 0, INT_MAX, &o->warmup);
        else if (!strcmp(a, "--check-every")) ok = v && parse_long(v, 1, INT_MAX, &o->check_every);
        else if (!strcmp(a, "--tol")) {
            char *end = NULL;
            o->tol = v ? strtod(v, &end) : 0;
            ok = v && end != v && !*end && o->tol > 0 && o->tol < 1;
        } else if (!strcmp(a, "--path")) {
            if (v && amp_mpi_path_parse(v, &o->path) != AMP_OK) {
                snprintf(err, n, "%s", amp_mpi_last_error());
                return 1;
            }
            ok = v != NULL;
        } else if (!strcmp(a, "--accelerator")) {
            o->accelerator = v;
            ok = v != NULL;
        } else {
            snprintf(err, n, "unknown argument \"%s\"", a);
            return 1;
        }
        if (!ok) {
            snprintf(err, n, "%s %s%s%s: %s", a, v ? "\"" : "", v ? v : "(no value)", v ? "\"" : "",
                     !strcmp(a, "--n")           ? "a whole number from 2 to 32768"
                     : !strcmp(a, "--ny")        ? "a whole number from 1 to 1048576"
                     : !strcmp(a, "--tol")       ? "a number between 0 and 1"
                     : !strcmp(a, "--max-iters") || !strcmp(a, "--warmup") ? "a whole number >= 0"
                     : !strcmp(a, "--check-every")                          ? "a whole number >= 1"
                                                                            : "needs a value");
            return 1;
        }
        ++i;
    }
    if (o->ny == 0) o->ny = o->n;
    if (o->max_iters < 0) o->max_iters = 10 * (o->n > o->ny ? o->n : o->ny);
    return 0;
}

/* ------------------------------------------------------------- checks */

/* The whole solution on rank 0 (rows in rank order), NULL elsewhere. */
static double *gather_solution(cg_solver *s, int n, int ny)
{
    size_t own = (size_t)s->g.rows * (size_t)n;
    double *mine = malloc(own * sizeof(double));
    if (!mine) die("malloc", "no memory for the solution");
    TRY(amp_array_copy_to_host(s->x, mine));
    int *counts = NULL, *displs = NULL;
    double *all = NULL;
    if (world_rank == 0) {
        counts = malloc((size_t)world_size * sizeof(int));
        displs = malloc((size_t)world_size * sizeof(int));
        all = malloc((size_t)n * (size_t)ny * sizeof(double));
        if (!counts || !displs || !all) die("malloc", "no memory to gather the solution");
        for (int r = 0; r < world_size; ++r) {
            cg_grid g = cg_split(n, ny, world_size, r);
            counts[r] = g.rows * n;
            displs[r] = g.first_row * n;
        }
    }
    if (MPI_Gatherv(mine, (int)own, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        die("MPI_Gatherv", "gathering the solution");
    free(mine);
    free(counts);
    free(displs);
    return all;
}

/* Rank 0: the single-rank solver and the serial reference against the
 * distributed run. */
static bool check_on_rank0(amp_accelerator *acc, const options *o, const cg_result *res, const double *x)
{
    const int n = (int)o->n, ny = (int)o->ny;
    const size_t m = (size_t)n * ny;
    bool ok = true;
    cg_solver one;
    cg_result r1;
    double *x1 = malloc(m * sizeof(double)), *xr = malloc(m * sizeof(double));
    if (!x1 || !xr) die("malloc", "no memory for the checks");
    cg_grid whole = {n, ny, ny, 0};
    if (cg_init(&one, acc, whole, NULL) != AMP_OK || cg_solve(&one, o->tol, (int)o->max_iters, 1, 0, &r1) != AMP_OK ||
        amp_array_copy_to_host(one.x, x1) != AMP_OK)
        die("the single-rank solver", amp_last_error());
    cg_free(&one);
    printf("single rank: %d iterations, relative residual %.9e\n", r1.iters, r1.rel);
    ok &= cg_agree("cg_mpi against one rank", res->iters, res->rel, x, r1.iters, r1.rel, x1, m, n > ny ? n : ny, o->tol);
    int rit = 0;
    double rrel = 0;
    if (!cg_reference(n, ny, o->tol, (int)o->max_iters, &rit, &rrel, xr)) die("cg_reference", "no memory");
    printf("reference (serial C): %d iterations, relative residual %.9e\n", rit, rrel);
    ok &= cg_agree("cg_mpi against the reference", res->iters, res->rel, x, rit, rrel, xr, m, n > ny ? n : ny, o->tol);
    free(x1);
    free(xr);
    return ok;
}

/* "123" when whole, "123.5" otherwise. */
static void per_iteration(char *out, size_t n, double total, int iters)
{
    double v = iters > 0 ? total / iters : 0.0;
    if (v == floor(v)) snprintf(out, n, "%.0f", v);
    else snprintf(out, n, "%.3f", v);
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    example_name = "cg_mpi";
    example_mpi_init(&argc, &argv);

    options o;
    char err[512] = "";
    int pr = parse(argc, argv, &o, err, sizeof err);
    if (pr == 0 && o.ny < world_size) {
        snprintf(err, sizeof err, "a grid of %ld rows (--ny, else --n) is too small for %d ranks: each needs at "
                 "least one row", o.ny, world_size);
        pr = 1;
    }
    if (pr == 0 && o.n * (o.ny / world_size + 3) > INT_MAX) {
        snprintf(err, sizeof err, "--n %ld x %ld rows per rank: too many cells for one rank", o.n,
                 o.ny / world_size + 1);
        pr = 1;
    }
    if (pr != 0) return example_stop(pr == 1 ? err : NULL, usage_text);
    const int n = (int)o.n, ny = (int)o.ny;
    const cg_grid g = cg_split(n, ny, world_size, world_rank);

    amp_accelerator *acc = NULL;
    if (o.accelerator) TRY(amp_accelerator_find(o.accelerator, &acc));
    else TRY_MPI(amp_mpi_select_accelerator(MPI_COMM_WORLD, &acc));
    amp_accelerator_info info;
    TRY(amp_accelerator_get_info(acc, &info));

    /* The exchanger works on the solver's own queue, so that its staging
     * copies are ordered with the solver's kernels (cg_init exchanges
     * nothing: it only sums r . r). */
    split_comm sc = {.lo = world_rank > 0 ? world_rank - 1 : MPI_PROC_NULL,
                     .hi = world_rank < world_size - 1 ? world_rank + 1 : MPI_PROC_NULL};
    cg_comm comm = {.ctx = &sc,
                    .halo_begin = halo_begin,
                    .halo_end = halo_end,
                    .sum = sum,
                    .timed = timed,
                    .overlap = o.overlap};
    cg_solver s;
    if (cg_init(&s, acc, g, &comm) != AMP_OK) die("cg_init", "see above");
    TRY_MPI(amp_mpi_exchange_create(MPI_COMM_WORLD, s.q, sizeof(double), o.path, &sc.x));
    sc.q = s.q;
    amp_mpi_path_info path;
    TRY_MPI(amp_mpi_exchange_get_path(sc.x, &path));
    /* The NCCL path: the dot products' sums on the device from here on
     * (cg_init's first sum went through MPI, before the exchanger). */
    const bool device_sums = path.path == AMP_MPI_PATH_NCCL;
    if (device_sums) {
        s.comm.sum = NULL;
        s.comm.sum_device = sum_device;
    }

    TRY(amp_accelerator_view_wait(s.q));
    timed(&sc); /* counted from here, or from the warm-up's end when there is one */
    sc.counting = false;
    cg_result res;
    if (cg_solve(&s, o.tol, (int)o.max_iters, (int)o.check_every, (int)o.warmup, &res) != AMP_OK)
        die("cg_solve", "see above");

    amp_stats qs;
    amp_mpi_exchange_stats xs;
    TRY(amp_accelerator_view_get_stats(s.q, &qs));
    TRY_MPI(amp_mpi_exchange_get_stats(sc.x, &xs));
    rank_report me;
    memset(&me, 0, sizeof me);
    snprintf(me.device, sizeof me.device, "%s", info.device_path);
    me.first_row = g.first_row;
    me.rows = g.rows;
    me.neighbours = (sc.lo != MPI_PROC_NULL) + (sc.hi != MPI_PROC_NULL);
    me.mpi_bytes = xs.bytes_sent + xs.bytes_received;
    /* The queue's copies, and the staged pipeline's on hipamp::mpi's own
     * copy stream beside it (a GPU's), which the queue does not count. */
    me.copied_bytes = qs.bytes_to_device + qs.bytes_to_host + qs.bytes_device_to_device + qs.bytes_host_to_host +
                      xs.bytes_copied_aside;
    me.staged_bytes = xs.bytes_staged;
    me.seconds = res.seconds;
    me.exchange_seconds = xs.seconds;
    me.allreduce_seconds = sc.allreduce_seconds;
    me.allreduces = sc.allreduces;
    me.exchanges = sc.exchanges;
    me.exchanges_overlapped = sc.exchanges_overlapped;
    rank_report *all = world_rank == 0 ? calloc((size_t)world_size, sizeof *all) : NULL;
    if (world_rank == 0 && !all) die("calloc", "no memory for the report");
    MPI_Gather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, 0, MPI_COMM_WORLD);
    double *x = o.check ? gather_solution(&s, n, ny) : NULL;

    int verdict = 1;
    if (world_rank == 0) {
        const int it = res.iters;
        /* The counters cover the timed iterations (all of them when the run
         * ended within the warm-up). */
        const int counted = sc.counting ? res.timed : it;
        printf("cg_mpi: 2-D Poisson, %d x %d grid (columns x rows), %d rank%s, tolerance %g\n", n, ny, world_size,
               world_size == 1 ? "" : "s", o.tol);
        double halo = 0, mpi = 0, copied = 0, staged = 0, slowest = 0, exch = 0, ar = 0;
        long long exchanged = 0, overlapped = 0;
        for (int r = 0; r < world_size; ++r) {
            const rank_report *p = &all[r];
            char c1[32], c2[32];
            per_iteration(c1, sizeof c1, (double)p->mpi_bytes, counted);
            per_iteration(c2, sizeof c2, (double)p->copied_bytes, counted);
            printf("rank %d: %s, rows %d..%d, %d neighbour%s, halo %llu B/iteration, mpi %s B/iteration, copied %s "
                   "B/iteration, %.6f s\n",
                   r, p->device, p->first_row, p->first_row + p->rows - 1, p->neighbours, p->neighbours == 1 ? "" : "s",
                   (unsigned long long)p->neighbours * 2u * (unsigned long long)n * 8u, c1, c2, p->seconds);
            halo += (double)p->neighbours * 2 * n * 8;
            mpi += (double)p->mpi_bytes;
            copied += (double)p->copied_bytes;
            staged += (double)p->staged_bytes;
            slowest = fmax(slowest, p->seconds);
            exch = fmax(exch, p->exchange_seconds);
            ar = fmax(ar, p->allreduce_seconds);
            exchanged += p->exchanges;
            overlapped += p->exchanges_overlapped;
        }
        const int64_t ars = all[0].allreduces; /* the same on every rank */
        printf("mpi: %s; gpu-aware: cuda %s, rocm %s (%s)\n", path.gpu.library, path.gpu.cuda ? "yes" : "no",
               path.gpu.rocm ? "yes" : "no", path.gpu.reason);
        printf("path %s: %s\n", amp_mpi_path_name(path.path), path.reason);
        printf("step %s\n", o.overlap ? "overlapped: exchange begun, interior rows of Ap, exchange ended, edge rows"
                                      : "not overlapped: exchange, then every row of Ap");
        /* What ran, counted (the line above says what was asked). */
        printf("halo_exchanges %lld (all ranks, all iterations)\n", exchanged);
        printf("halo_exchanges_overlapped %lld (of those, with a launch queued while in flight)\n", overlapped);
        printf("iterations %d\n", it);
        printf("relative_residual %.9e\n", res.rel);
        if (res.timed > 0)
            printf("time_per_iteration_s %.9f (iterations %ld..%d, slowest rank; halo exchange %.9f s, allreduces "
                   "%.9f s an iteration)\n",
                   slowest / res.timed, o.warmup, it - 1, counted ? exch / counted : 0.0, counted ? ar / counted : 0.0);
        else
            printf("time_per_iteration_s n/a (no iteration after the %ld warm-up iterations)\n", o.warmup);
        char c[32], per_it[32];
        per_iteration(per_it, sizeof per_it, (double)ars, counted);
        printf("allreduces_per_iteration %s (%s of one double, each a dot product)\n", per_it,
               device_sums ? "ncclAllReduce on the device" : "MPI_Allreduce");
        printf("allreduces_on_device %llu (amp_mpi_exchange_allreduce through NCCL, rank 0)\n",
               (unsigned long long)xs.allreduces_on_device);
        printf("halo_bytes_per_iteration %.0f (one row of %d doubles out and one in per neighbour, all ranks)\n",
               halo, n);
        per_iteration(c, sizeof c, mpi, counted);
        printf("mpi_bytes_per_iteration %s (handed to MPI by the exchanger, sent + received, all ranks)\n", c);
        per_iteration(c, sizeof c, copied, counted);
        printf("copied_bytes_per_iteration %s (hipamp statistics of the ranks' queues and exchangers: staging "
               "copies and the dot products' scalars)\n",
               c);
        per_iteration(c, sizeof c, staged, counted);
        printf("staged_bytes_per_iteration %s (of which through hipamp::mpi's host staging buffers)\n", c);
        /* What bench/scaling_model.py reads (key value pairs). */
        int most_rows = 0, most_nb = 0;
        for (int r = 0; r < world_size; ++r) {
            if (all[r].rows > most_rows) most_rows = all[r].rows;
            if (all[r].neighbours > most_nb) most_nb = all[r].neighbours;
        }
        printf("cg_model_inputs nx %d rows_per_rank %d ranks %d overlap %d path %s time_per_iteration_s %.9f "
               "exchange_s_per_iteration %.9f allreduce_s_per_iteration %.9f allreduces_per_iteration %s row_bytes %d "
               "halo_bytes_per_rank_per_iteration %d iterations %d\n",
               n, most_rows, world_size, o.overlap ? 1 : 0, amp_mpi_path_name(path.path),
               res.timed > 0 ? slowest / res.timed : 0.0, counted ? exch / counted : 0.0, counted ? ar / counted : 0.0, per_it, n * 8,
               most_nb * 2 * n * 8, it);
        if (o.check) verdict = check_on_rank0(acc, &o, &res, x);
        fflush(stdout);
    }
    free(all);
    free(x);
    MPI_Bcast(&verdict, 1, MPI_INT, 0, MPI_COMM_WORLD);

    for (int i = 0; i < sc.nviews; ++i) TRY(amp_array_view_destroy(sc.views[i]));
    TRY_MPI(amp_mpi_exchange_destroy(sc.x));
    cg_free(&s);
    example_mpi_finalize();
    return verdict ? 0 : 1;
}
