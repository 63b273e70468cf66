/* tealeaf_mpi.c — the TeaLeaf port (tealeaf.c) across MPI ranks: the mesh's rows split across the ranks, one accelerator per rank (by node-local rank, or --device for all), the halo rows of the field A is applied to exchanged by hipamp::mpi before each A x, every dot product reduced on its rank by amp_transform_reduce and summed by MPI_Allreduce (every rank gets the same bits, so every rank takes the same convergence decision), the field summary summed likewise; rank 0 prints and verifies.
 *
 *   mpiexec -n P tealeaf_mpi [--device PATH] [--problems FILE] [--solver cg|chebyshev|ppcg|jacobi] [--digest]
 *                            [--skip-missing] DECK
 *
 * Options and exit statuses as tealeaf's (a row split has its sums on the
 * host each iteration, so --check-every and launch graphs do not apply).
 * The split changes only the order of each sum (each rank's rows, then the
 * ranks' partial sums), so results agree with one rank to rounding. */
#define _POSIX_C_SOURCE 200809L
#include "tea_run.h"

#include "../mpi_example.h"

#include <hipamp_mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct split {
    amp_mpi_exchange *x;
    int rank, lo, hi; /* neighbour ranks, MPI_PROC_NULL at the mesh's edges */
} split;

/* My first own row of s->halo (the field A is about to be applied to) goes
 * to lo (its bottom halo), my last to hi; theirs fill my halos. The
 * exchanger is made on the solver's queue at the first exchange, which
 * every rank reaches together. */
static amp_status halo(void *ctx, tea_solver *s)
{
    split *c = ctx;
    amp_status st = AMP_OK;
    if (!c->x && (st = amp_mpi_exchange_create(MPI_COMM_WORLD, s->q, 8, AMP_MPI_PATH_AUTO, &c->x)) != AMP_OK) {
        fprintf(stderr, "tealeaf_mpi: rank %d: amp_mpi_exchange_create: %s\n", c->rank, amp_mpi_last_error());
        return st;
    }
    const tea_field *f = s->halo;
    st = amp_mpi_exchange_rows(c->x, c->lo, f->first, f->halo_top, c->hi, f->last, f->halo_bottom);
    if (st != AMP_OK) fprintf(stderr, "tealeaf_mpi: rank %d: halo exchange: %s\n", c->rank, amp_mpi_last_error());
    return st;
}

static amp_status sum(void *ctx, double *value)
{
    split *c = ctx;
    int rc = MPI_Allreduce(MPI_IN_PLACE, value, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "tealeaf_mpi: rank %d: MPI_Allreduce failed (%d)\n", c->rank, rc);
        return AMP_ERROR_DEVICE;
    }
    return AMP_OK;
}

/* An error on this rank mid-run: the others may wait in a collective it
 * will not reach; stop them all (the error is on stderr already). */
static void fail(void *ctx)
{
    split *c = ctx;
    fprintf(stderr, "tealeaf_mpi: rank %d failed: stopping every rank\n", c->rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void release(void *ctx, tea_solver *s)
{
    (void)s;
    split *c = ctx;
    if (c->x && amp_mpi_exchange_destroy(c->x) != AMP_OK)
        fprintf(stderr, "tealeaf_mpi: rank %d: amp_mpi_exchange_destroy: %s\n", c->rank, amp_mpi_last_error());
    c->x = NULL;
}

int main(int argc, char **argv)
{
    /* MPI started and ended out of LeakSanitizer's sight (mpi_example.h). */
    example_name = "tealeaf_mpi";
    example_mpi_init(&argc, &argv);
    int rank = world_rank, size = world_size, rc = 0;
    tea_options o;
    tea_deck d;
    char err[512];
    amp_accelerator *acc = NULL;
    /* Every rank checks the arguments, its accelerator and the deck, then
     * all agree: one rank whose deck is missing or unreadable (a node
     * without the file) or that has no accelerator stops every rank with
     * the worst status, instead of leaving them in the solver's
     * collectives. The arguments are the same everywhere, and the
     * accelerator's choice (amp_mpi_select_accelerator) is collective: every
     * rank makes it before anything that may differ between ranks. An error
     * later, mid-run, stops them all through fail(). */
    int ok_rc = 0;
    if ((ok_rc = tea_parse_args(argc, argv, &o)) == 0) {
        amp_status st = o.device ? amp_accelerator_find(o.device, &acc)
                                 : amp_mpi_select_accelerator(MPI_COMM_WORLD, &acc);
        if (st != AMP_OK) {
            fprintf(stderr, "tealeaf_mpi: rank %d: no accelerator: %s\n", rank,
                    o.device ? amp_last_error() : amp_mpi_last_error());
            ok_rc = o.device ? 2 : 1; /* as tealeaf: --device naming none is the command line's error */
        } else if (o.skip_missing && access(o.deck, F_OK) != 0) {
            printf("tealeaf_mpi: rank %d: SKIP: no deck at %s\n", rank, o.deck);
            ok_rc = 77;
        } else if (tea_deck_read(o.deck, o.solver, &d, err, sizeof err)) {
            fprintf(stderr, "tealeaf_mpi: rank %d: %s\n", rank, err);
            ok_rc = 2;
        } else if (size > d.y_cells) {
            if (rank == 0)
                fprintf(stderr, "tealeaf_mpi: %d ranks for %d rows: at most one rank a row\n", size, d.y_cells);
            ok_rc = 2;
        }
    }
    rc = ok_rc;
    MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rc) {
        if (rc < 0) rc = 0; /* --help on every rank */
        goto out;
    }
    split c = {NULL, rank, rank > 0 ? rank - 1 : MPI_PROC_NULL, rank + 1 < size ? rank + 1 : MPI_PROC_NULL};
    tea_comm comm = {&c, halo, sum, release, fail};
    rc = tea_run(&o, &d, acc, &comm, size, rank);
    /* Every rank leaves with rank 0's verdict, or the worst error. */
    MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
out:
    example_mpi_finalize();
    return rc;
}
