/* cg.c — conjugate gradients for the 2-D Poisson problem (5-point stencil, zero Dirichlet boundary, f = 1) on one accelerator, with the solver of cg_solver.c (hipamp kernels, amp_transform_reduce_async for the dot products): an iteration queues its launches and never waits on the host, except the convergence test's read of one scalar; --check runs a serial C reference and compares iteration counts, residuals and solutions.
 *
 *   cg [--n N] [--tol T] [--max-iters K] [--check-every K] [--accelerator PATH] [--check] [--graph] [--digest]
 *
 * --graph replays each iteration from a launch graph (two, one per parity
 * of the rr / rr_new swap: cg_use_graphs), the convergence test on the host
 * every --check-every iterations as without it; the results are the same
 * bits (ctest's example_cg_graph compares --digest's line of both runs).
 * --digest prints the iteration count, the residual in hexadecimal and an
 * FNV-1a hash of the solution's bytes on one line.
 *
 * The same solver runs across MPI ranks in cg_mpi.c (rows split, p's halos
 * exchanged, the dot products summed across ranks: cg_comm). Written for
 * launch graphs too (issue 24): cg_iteration queues one whole iteration on
 * one accelerator view with every scalar on the device, so it is recorded
 * once per parity and replayed (--graph).
 *
 * Agreement with the reference (--check; cg_solver.c says why these
 * bounds): iteration counts within 1, final relative residuals within 1e-6
 * of each other, solutions within 1e-8 of their largest value. */
#define _POSIX_C_SOURCE 200809L
#include "cg_solver.h"
#include "cli_parse.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* FNV-1a, 64 bits, of n bytes. */
static uint64_t fnv1a(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    long ln = 256, lmax = -1, levery = 1;
    double tol = 1e-8;
    const char *path = NULL;
    bool check = false, graph = false, digest = false;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool value = true, ok = true;
        if (!strcmp(a, "--n")) ok = v && parse_long(v, 2, 32768, &ln);
        else if (!strcmp(a, "--max-iters")) ok = v && parse_long(v, 0, INT_MAX, &lmax);
        else if (!strcmp(a, "--check-every")) ok = v && parse_long(v, 1, INT_MAX, &levery);
        else if (!strcmp(a, "--tol")) {
            char *end = NULL;
            tol = v ? strtod(v, &end) : 0;
            ok = v && end != v && !*end && tol > 0 && tol < 1;
        } else value = false;
        if (value) {
            if (!ok) {
                fprintf(stderr, "cg: %s %s: want %s\n", a, v ? v : "(missing)",
                        !strcmp(a, "--n") ? "a whole number from 2 to 32768"
                        : !strcmp(a, "--tol") ? "a number above 0 and below 1"
                        : !strcmp(a, "--max-iters") ? "a whole number from 0 to 2147483647"
                                                    : "a whole number from 1 to 2147483647");
                return 2;
            }
            ++i;
        } else if (!strcmp(a, "--accelerator") && v) path = argv[++i];
        else if (!strcmp(argv[i], "--check")) check = true;
        else if (!strcmp(argv[i], "--graph")) graph = true;
        else if (!strcmp(argv[i], "--digest")) digest = true;
        else {
            fprintf(stderr, "usage: %s [--n N] [--tol T] [--max-iters K] [--check-every K] [--accelerator PATH] "
                            "[--check] [--graph] [--digest]\n", argv[0]);
            return 2;
        }
    }
    const int n = (int)ln, max_iters = lmax < 0 ? 10 * n : (int)lmax, check_every = (int)levery;
    amp_accelerator *acc = NULL;
    amp_accelerator_info info;
    amp_status st = path ? amp_accelerator_find(path, &acc) : amp_accelerator_default(&acc);
    if (st != AMP_OK || amp_accelerator_get_info(acc, &info) != AMP_OK) {
        fprintf(stderr, "cg: no accelerator: %s\n", amp_last_error());
        return 1;
    }
    printf("cg: 2-D Poisson, %d x %d grid, on %s (%s)\n", n, n, info.device_path, info.description);

    cg_solver s;
    cg_grid g = {n, n, n, 0};
    cg_result res;
    if (cg_init(&s, acc, g, NULL) != AMP_OK || (graph && cg_use_graphs(&s) != AMP_OK) ||
        cg_solve(&s, tol, max_iters, check_every, 0, &res) != AMP_OK) {
        cg_free(&s);
        return 1;
    }
    const int it = res.iters;
    const double rel = res.rel;
    printf("cg: %d iterations, relative residual %.6e, %.3f ms an iteration%s\n", it, rel,
           res.timed ? res.seconds * 1e3 / res.timed : 0.0, graph ? ", replayed from launch graphs" : "");
    if (digest) {
        size_t m = (size_t)n * n;
        double *x = malloc(m * 8);
        if (!x || amp_array_copy_to_host(s.x, x) != AMP_OK) {
            fprintf(stderr, "cg: --digest: no memory, or the solution could not be read: %s\n", amp_last_error());
            free(x);
            cg_free(&s);
            return 1;
        }
        printf("cg: digest: %d iterations, residual %a, solution fnv1a %016llx\n", it, rel,
               (unsigned long long)fnv1a(x, m * 8));
        free(x);
    }

    int status = 0;
    if (check) {
        size_t m = (size_t)n * n;
        double *x = malloc(m * 8), *xr = malloc(m * 8);
        int rit = 0;
        double rrel = 0;
        if (!x || !xr || amp_array_copy_to_host(s.x, x) != AMP_OK || !cg_reference(n, n, tol, max_iters, &rit, &rrel, xr)) {
            fprintf(stderr, "cg: --check: no memory, or the solution could not be read: %s\n", amp_last_error());
            status = 1;
        } else {
            printf("reference (serial C): %d iterations, relative residual %.6e\n", rit, rrel);
            /* Tested every few iterations, the solver may run past the
             * reference's count: only --check-every 1 compares. */
            if (!cg_agree("cg against the reference", it, rel, x, rit, rrel, xr, m, n, tol) || check_every != 1) {
                if (check_every != 1) printf("cg: --check needs --check-every 1\n");
                status = 1;
            }
        }
        free(x);
        free(xr);
    }
    cg_free(&s);
    return status;
}
