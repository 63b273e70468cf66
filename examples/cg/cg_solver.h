/* cg_solver.h — the conjugate-gradient solver for 2-D Poisson that cg (one rank) and cg_mpi (rows split across MPI ranks) share: the solver over a block of rows, the communication a row split plugs in (p's halo exchange, sums across ranks), the serial C reference and the agreement test between two runs.
 *
 * The problem: -laplace(u) = 1 on the unit square, zero Dirichlet boundary,
 * an n x n interior grid and the 5-point stencil (A = 4 on the diagonal, -1
 * for each neighbour; b = h^2), or its n x ny version (ny rows, the same h:
 * a rectangle, for weak scaling at a fixed number of rows per rank). A
 * solver holds rows [first_row, first_row + rows) of x, r and Ap, and of p
 * with a halo row above and below. */
#ifndef CG_SOLVER_H
#define CG_SOLVER_H

#include <hipamp.h>

#include <stdbool.h>

/* The part of the n x ny grid (n columns, ny rows) one solver holds (one
 * rank: all of it). */
typedef struct cg_grid {
    int n, ny, rows, first_row;
} cg_grid;

/* Rank `rank`'s rows of the n x ny grid split across nranks (1 <= nranks
 * <= ny): the first ny % nranks ranks get one row more. */
cg_grid cg_split(int n, int ny, int nranks, int rank);

typedef struct cg_solver cg_solver;

/* What a row split adds. All NULL (or no cg_comm at all): one rank, whose
 * halos are the zero boundary, written once, and whose dot products stay on
 * the device. With sum set, each dot product is reduced locally to the host,
 * summed across the ranks by sum and written back to the device (the
 * iteration's two host round trips; the convergence test then costs
 * nothing more). With halo_begin/halo_end set, an iteration begins the
 * exchange of p's edge rows, computes Ap on the rows that read no halo while
 * it runs (overlap; else after it ended), ends it and computes the edge rows. */
typedef struct cg_comm {
    void *ctx;
    amp_status (*halo_begin)(void *ctx, cg_solver *s);
    amp_status (*halo_end)(void *ctx, cg_solver *s);
    amp_status (*sum)(void *ctx, double *value); /* in place, across the ranks */
    /* Instead of sum: the one double of value summed across the ranks in
     * place on the device, queued on the solver's queue (NCCL's all-reduce):
     * the dot products then stay on the device as on one rank, and the
     * convergence test reads r . r every check_every iterations. */
    amp_status (*sum_device)(void *ctx, amp_array *value);
    void (*timed)(void *ctx); /* cg_solve's timed iterations begin (counters reset) */
    bool overlap;
} cg_comm;

struct cg_solver {
    amp_accelerator_view *q;
    cg_grid g;
    cg_comm comm;
    bool async_interior; /* the CPU accelerator: the interior launch runs on q's thread */
    amp_program *prog;
    amp_kernel *apply, *apply_edges, *update_xr, *update_p;
    amp_array *x, *r, *p, *ap;                  /* rows x n; p: (rows + 2) x n */
    amp_array_view *vx, *vr, *vp, *vp_in, *vap; /* vp_in: p's own rows */
    /* p's own first and last rows and its two halo rows (what the row split
     * exchanges), and Ap's interior rows (1 .. rows - 2; NULL when rows <= 2). */
    amp_array_view *p_first, *p_last, *p_halo_top, *p_halo_bottom, *ap_inner;
    amp_array *rr, *pap, *rr_new; /* CG's scalars, on the device */
    double rr_host;               /* with comm.sum: r . r, summed, as on the device */
    /* cg_use_graphs: the iteration recorded as two launch graphs, one per
     * parity of the rr / rr_new swap; iterations alternate them. */
    amp_graph *graph[2];
    int parity;
};

/* b's value (h^2 with h = 1 / (n + 1)). */
double cg_rhs(int n);

/* Builds the kernels, allocates the block's vectors on a queue of its own
 * on acc and sets x = 0, r = p = b, rr = r . r (comm may be NULL: one rank;
 * it is copied). Collective over the ranks when comm->sum is set. On
 * failure the message is on stderr and cg_free frees what was made. */
amp_status cg_init(cg_solver *s, amp_accelerator *acc, cg_grid g, const cg_comm *comm);
/* One iteration, queued on s->q; without comm nothing waits on the host.
 * After cg_use_graphs, a replay of the graph of this iteration's parity. */
amp_status cg_iteration(cg_solver *s);
/* Record the iteration once for each parity of the rr / rr_new swap (it
 * swaps them at each iteration, and a graph's arguments are fixed) and
 * replay those from then on: one launch graph per iteration, the same
 * kernels on the same data, so every result is the same bits. One rank
 * only (a row split's sums and halo exchange go through the host):
 * AMP_ERROR_UNSUPPORTED with comm. The graphs are destroyed by cg_free. */
amp_status cg_use_graphs(cg_solver *s);
/* r . r (global), the convergence test's one host read. */
amp_status cg_rr(cg_solver *s, double *rr);
void cg_free(cg_solver *s);

/* A run to convergence: iterations until sqrt(rr / bb) <= tol or max_iters,
 * the test every check_every iterations (every one with comm->sum); seconds
 * of the iterations after the first warmup, queue drained at both ends
 * (comm->timed, when set, is called as they begin). */
typedef struct cg_result {
    int iters;
    double rel;     /* final sqrt(rr / bb) */
    double seconds; /* the timed iterations */
    int timed;      /* how many */
} cg_result;
amp_status cg_solve(cg_solver *s, double tol, int max_iters, int check_every, int warmup, cg_result *out);

/* The same iteration in plain C on the whole n x ny grid; x gets the
 * solution (ny x n). false: no memory. */
bool cg_reference(int n, int ny, double tol, int max_iters, int *iters, double *rel, double *x);

/* Whether run a (iterations ia, residual ra, solution xa) agrees with run
 * b on a grid whose longest side is `longest` points: iterations within 1,
 * relative residuals within 1e-6 of each other (or 1e-14, or 100 eps times
 * the grid's condition number apart: CG's recursive residual drifts by
 * about eps times the condition number) when the iterations are equal,
 * solutions within 1e-8 of b's largest value, and a converged. Prints one
 * line, "<what>: agrees ..." or "<what>: DIFFERS ...", with the figures. */
bool cg_agree(const char *what, int ia, double ra, const double *xa, int ib, double rb, const double *xb, size_t m,
              int longest, double tol);

#endif
