/* tea_run.c — the command line, the time-step loop and the verification that tealeaf and tealeaf_mpi share (tea_run.h). */
#define _POSIX_C_SOURCE 200809L
#include "tea_run.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int usage(const char *argv0, const char *why)
{
    if (why) fprintf(stderr, "tealeaf: %s\n", why);
    fprintf(stderr,
            "usage: %s [--device PATH] [--problems FILE] [--solver cg|chebyshev|ppcg|jacobi] [--check-every K]\n"
            "          [--no-graph] [--digest] [--skip-missing] DECK\n"
            "  DECK: a TeaLeaf input deck (tea.in format), e.g. ../shared/tealeaf/tea_bm_1.in\n"
            "  --solver: instead of the deck's use_cg / use_chebyshev / use_ppcg / use_jacobi\n",
            argv0);
    return 2;
}

int tea_parse_args(int argc, char **argv, tea_options *o)
{
    memset(o, 0, sizeof *o);
    o->check_every = 16;
    o->graph = true;
    o->solver = -1;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "--device") || !strcmp(a, "--problems") || !strcmp(a, "--check-every") ||
            !strcmp(a, "--solver")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "tealeaf: %s needs a value\n", a);
                return usage(argv[0], NULL);
            }
            const char *v = argv[++i];
            if (!strcmp(a, "--device")) o->device = v;
            else if (!strcmp(a, "--problems")) o->problems = v;
            else if (!strcmp(a, "--solver")) {
                if (!strcmp(v, "cg")) o->solver = TEA_SOLVER_CG;
                else if (!strcmp(v, "chebyshev")) o->solver = TEA_SOLVER_CHEBYSHEV;
                else if (!strcmp(v, "ppcg")) o->solver = TEA_SOLVER_PPCG;
                else if (!strcmp(v, "jacobi")) o->solver = TEA_SOLVER_JACOBI;
                else {
                    fprintf(stderr, "tealeaf: --solver '%s': not cg, chebyshev, ppcg or jacobi\n", v);
                    return usage(argv[0], NULL);
                }
            } else {
                char *end = NULL;
                long k = strtol(v, &end, 10);
                if (end == v || *end || k < 1 || k > 1000000) {
                    fprintf(stderr, "tealeaf: --check-every '%s': need a whole number from 1 to 1000000\n", v);
                    return usage(argv[0], NULL);
                }
                o->check_every = (int)k;
            }
        } else if (!strcmp(a, "--no-graph")) o->graph = false;
        else if (!strcmp(a, "--digest")) o->digest = true;
        else if (!strcmp(a, "--skip-missing")) o->skip_missing = true;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(argv[0], NULL);
            return -1; /* asked for: the caller exits 0 */
        }
        else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "tealeaf: unknown option '%s'\n", a);
            return usage(argv[0], NULL);
        } else if (o->deck) {
            fprintf(stderr, "tealeaf: one deck only, given '%s' and '%s'\n", o->deck, a);
            return usage(argv[0], NULL);
        }
        else o->deck = a;
    }
    if (!o->deck) return usage(argv[0], "no deck given");
    return 0;
}

void tea_split(int ny, int nranks, int rank, int *rows, int *first_row)
{
    int base = ny / nranks, extra = ny % nranks;
    *rows = base + (rank < extra ? 1 : 0);
    *first_row = rank * base + (rank < extra ? rank : extra);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* dir of path + name, into buf. */
static void beside(const char *path, const char *name, char *buf, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (slash) snprintf(buf, n, "%.*s/%s", (int)(slash - path), path, name);
    else snprintf(buf, n, "%s", name);
}

/* The expected value and where it came from (see tealeaf.c). */
static int expected(const tea_options *o, const tea_deck *d, double *value, char *from, size_t n)
{
    char problems[4096];
    if (o->problems) snprintf(problems, sizeof problems, "%s", o->problems);
    else beside(o->deck, "tea.problems", problems, sizeof problems);
    char why[160] = "";
    int found = tea_expected_from_problems(problems, d, value, why, sizeof why);
    if (found == 1) {
        snprintf(from, n, "%s, line %d %d %d", problems, d->x_cells, d->y_cells, d->end_step);
        return 1;
    }
    /* A tea.problems beside the deck that is there but cannot be read is
     * said, not passed over for the reference output. */
    if (found < 0 && (o->problems || access(problems, F_OK) == 0)) {
        snprintf(from, n, "%s: %s", problems, why);
        return 0;
    }
    char out[4096];
    size_t len = strlen(o->deck);
    if (len > 3 && !strcmp(o->deck + len - 3, ".in") && len < sizeof out) {
        snprintf(out, sizeof out, "%.*s.out", (int)(len - 3), o->deck);
        if (tea_expected_from_out(out, d, value) == 1) {
            snprintf(from, n, "%s, its last field summary", out);
            return 1;
        }
    }
    snprintf(from, n, "%s has no line \"%d %d %d\" and there is no TeaLeaf output for this deck beside it", problems,
             d->x_cells, d->y_cells, d->end_step);
    return 0;
}

static const char *solver_name(tea_solver_kind k)
{
    return k == TEA_SOLVER_CG          ? "CG"
           : k == TEA_SOLVER_CHEBYSHEV ? "Chebyshev"
           : k == TEA_SOLVER_PPCG      ? "PPCG"
                                       : "Jacobi";
}

/* FNV-1a, 64 bits. */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* An error mid-run: with ranks, the others are stopped through comm's fail
 * (they may wait in a collective this rank will not reach). */
static int tea_error(const tea_comm *comm)
{
    if (comm && comm->fail) comm->fail(comm->ctx);
    return 1;
}

/* The field summary (volume, mass, internal energy, temperature) of the
 * whole mesh into sum: this block's, added across ranks where comm sums. */
static amp_status field_summary(tea_solver *s, const tea_deck *d, const tea_comm *comm, double sum[4])
{
    amp_status st = tea_summary(s, d->dx, d->dy, sum);
    for (int k = 0; st == AMP_OK && comm && comm->sum && k < 4; ++k) st = comm->sum(comm->ctx, &sum[k]);
    return st;
}

/* TeaLeaf's field summary lines for step: its header, then the values. */
static void print_summary(int step, const double sum[4])
{
    printf("%41s%26s%26s%26s%26s\n", "Volume", "Mass", "Density", "Energy", "U");
    printf(" step: %6d %25.17E %25.17E %25.17E %25.17E %25.17E\n", step, sum[0], sum[1], sum[1] / sum[0], sum[2],
           sum[3]);
}

int tea_run(const tea_options *o, const tea_deck *d, amp_accelerator *acc, const tea_comm *comm, int nranks, int rank)
{
    const bool boss = rank == 0;
    amp_accelerator_info info;
    if (amp_accelerator_get_info(acc, &info) != AMP_OK) {
        fprintf(stderr, "tealeaf: amp_accelerator_get_info failed: %s\n", amp_last_error());
        return 1;
    }
    int rows = 0, first = 0;
    tea_split(d->y_cells, nranks, rank, &rows, &first);
    if (boss) {
        printf("TeaLeaf (hipamp port)\n - Deck:   %s\n - Mesh:   %d x %d cells, [%g, %g] x [%g, %g]\n", o->deck,
               d->x_cells, d->y_cells, d->xmin, d->xmax, d->ymin, d->ymax);
        printf(" - Solver: %s, eps %g, max_iters %d, coefficient %s\n", solver_name(d->solver), d->eps, d->max_iters,
               d->inverse_density ? "1 / density" : "density");
        if (d->solver == TEA_SOLVER_CHEBYSHEV || d->solver == TEA_SOLVER_PPCG) {
            if (d->error_switch)
                printf(" - Switch: from CG once r.r < epslim %g (after at least 21 CG iterations)\n", d->eps_lim);
            else printf(" - Switch: from CG after presteps %d + 1 iterations (once r.r < 1)\n", d->presteps);
        }
        if (d->solver == TEA_SOLVER_PPCG) printf(" - Inner:  %d Chebyshev steps an iteration\n", d->ppcg_inner_steps);
        if (d->ignored[0]) printf(" - Ignored (not used by this port): %s\n", d->ignored);
        printf(" - Device: %s (%s)%s\n", info.device_path, info.description,
               nranks > 1 ? ", rows split across MPI ranks" : "");
        if (nranks > 1) printf(" - Ranks:  %d\n", nranks);
    }
    tea_solver s;
    const double dt = d->dt_init; /* TeaLeaf's calc_dt: the deck's, every step */
    double t0 = now_s();
    if (tea_init(&s, acc, d, dt, rows, first, comm) != AMP_OK) {
        tea_free(&s);
        return tea_error(comm);
    }
    const bool graph = o->graph && !comm && d->solver == TEA_SOLVER_CG; /* the others' steps vary */
    if (graph && tea_use_graphs(&s) != AMP_OK) {
        tea_free(&s);
        return tea_error(comm);
    }
    double t_setup = now_s() - t0, t_solve0 = now_s(), time = 0.0;
    long total_iters = 0;
    int step = 0, status = 0;
    while (true) {
        ++step;
        int iters = 0;
        double error = 0;
        if (tea_step(&s, d->max_iters, o->check_every, &iters, &error) != AMP_OK) {
            status = 1;
            break;
        }
        total_iters += iters;
        /* TeaLeaf's tests: CG sqrt(|r.r|) < eps, the others |error| < eps */
        const bool converged = d->solver == TEA_SOLVER_CG ? sqrt(fabs(error)) < d->eps : fabs(error) < d->eps;
        const char *unconverged = converged ? "" : "  (max_iters: not converged)";
        time += dt;
        if (boss && d->solver == TEA_SOLVER_CG)
            printf(" Step %6d time %11.7f timestep %9.2e  CG iterations %6d  error %.7e%s\n", step, time, dt, iters,
                   error, unconverged);
        else if (boss && d->solver == TEA_SOLVER_JACOBI)
            printf(" Step %6d time %11.7f timestep %9.2e  Jacobi iterations %6d  error %.7e%s\n", step, time, dt,
                   iters, error, unconverged);
        else if (boss) {
            char est[48] = "", eig[80] = "  (converged in CG)";
            if (d->solver == TEA_SOLVER_CHEBYSHEV && s.poly_iters)
                snprintf(est, sizeof est, " (%d estimated)", s.est_iters);
            if (s.poly_iters) snprintf(eig, sizeof eig, "  eigenvalues [%.6e, %.6e]", s.eigmin, s.eigmax);
            printf(" Step %6d time %11.7f timestep %9.2e  CG %4d + %s %6d iterations%s%s  error %.7e%s\n", step, time,
                   dt, s.cg_iters, solver_name(d->solver), s.poly_iters, est, eig, error, unconverged);
        }
        if (time + 1.0e-16 > d->end_time || step >= d->end_step) break; /* TeaLeaf's test (g_small) */
        /* TeaLeaf's summary every summary_frequency steps (0: none); the
         * last step's is the one after the loop. */
        if (d->summary_frequency > 0 && step % d->summary_frequency == 0) {
            double mid[4];
            if (field_summary(&s, d, comm, mid) != AMP_OK) {
                status = 1;
                break;
            }
            if (boss) print_summary(step, mid);
        }
    }
    if (status) {
        tea_free(&s);
        return tea_error(comm);
    }
    if (amp_accelerator_view_wait(s.q) != AMP_OK) {
        fprintf(stderr, "tealeaf: amp_accelerator_view_wait failed: %s\n", amp_last_error());
        tea_free(&s);
        return tea_error(comm);
    }
    const double t_solve = now_s() - t_solve0;
    double sum[4];
    if (field_summary(&s, d, comm, sum) != AMP_OK) {
        tea_free(&s);
        return tea_error(comm);
    }
    if (o->digest) {
        /* The bits of this block's final u, for comparing runs. */
        double *u = malloc((size_t)rows * d->x_cells * 8);
        if (!u || amp_array_copy_to_host(s.u, u) != AMP_OK) {
            fprintf(stderr, "tealeaf: --digest: no memory, or u could not be read: %s\n", amp_last_error());
            free(u);
            tea_free(&s);
            return tea_error(comm);
        }
        printf("tealeaf: digest (rank %d): %ld iterations, temperature %a, u fnv1a %016llx\n", rank, total_iters,
               sum[3], (unsigned long long)fnv1a(0xcbf29ce484222325ull, u, (size_t)rows * d->x_cells * 8));
        free(u);
    }
    tea_free(&s);
    if (!boss) return 0;
    printf("\n Time %.15e\n", time);
    print_summary(step, sum);
    const char *kind = d->solver == TEA_SOLVER_CG ? "CG" : d->solver == TEA_SOLVER_JACOBI ? "Jacobi" : "outer";
    printf("\n Setup %.3f s, solve %.3f s (%ld %s iterations, %.1f us an iteration)%s\n", t_setup, t_solve,
           total_iters, kind, total_iters ? t_solve * 1e6 / (double)total_iters : 0.0,
           graph ? ", iterations replayed from launch graphs" : "");
    double want = 0;
    char from[8400];
    printf("\n Checking results...\n");
    if (!expected(o, d, &want, from, sizeof from)) {
        printf(" No expected value: %s\n This run FAILED (not verified)\n", from);
        return 1;
    }
    const double diff = fabs(100.0 * (sum[3] / want) - 100.0);
    const bool pass = diff < 0.001 && !isnan(sum[3]);
    printf(" Expected %.15e (%s)\n Actual   %.15e\n This run %s (Difference is within %.8f%%)\n", want, from, sum[3],
           pass ? "PASSED" : "FAILED", diff);
    return pass ? 0 : 1;
}
