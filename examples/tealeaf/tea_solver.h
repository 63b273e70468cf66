/* tea_solver.h — TeaLeaf's heat-conduction step in hipamp kernels (tealeaf.hip), over a block of rows of the mesh: one rank holds all of them (tealeaf.c), a row split holds a block per MPI rank (tealeaf_mpi.c) and plugs in the halo exchange and the sums across ranks (tea_comm). CG here; Chebyshev, PPCG and Jacobi in tea_poly.c.
 *
 * Each step (TeaLeaf's CG driver): u = energy * density, u0 = u;
 * r = u0 - A u, p = r, rro = r . r; then until sqrt(|rrn|) < eps or
 * max_iters: w = A p, pw = p . w, alpha = rro / pw, u += alpha p,
 * r -= alpha w, rrn = r . r, beta = rrn / rro, p = beta p + r; at the end
 * energy = u / density. A = I + the diffusion operator with face
 * coefficients kx = rx (c_l + c) / (2 c_l c), ky likewise with ry, where
 * rx = dt / dx^2, ry = dt / dy^2 and c is the density (or its inverse,
 * coefficient_inverse_density); faces on the mesh's edge carry none.
 * Chebyshev and PPCG decks begin each step with such CG iterations and
 * go on as tea_poly.c says; Jacobi decks run tea_poly.c's Jacobi. */
#ifndef TEA_SOLVER_H
#define TEA_SOLVER_H

#include <hipamp.h>

#include <stdbool.h>
#include <stdio.h>

#include "tea_deck.h"

typedef struct tea_solver tea_solver;

/* A field A is applied to: (rows + 2) x nx, its row i + 1 the block's row
 * i, rows 0 and rows + 1 halos (a neighbour's rows in a row split; zeros
 * at the mesh's edge). inner: its own rows; first, last: its first and
 * last own rows; halo_top, halo_bottom: the halo rows (1 x nx each). */
typedef struct tea_field {
    amp_array *array;
    amp_array_view *view, *inner, *first, *last, *halo_top, *halo_bottom;
} tea_field;

/* What a row split adds (all NULL, or no tea_comm: one rank). halo: the
 * first and last own rows of s->halo (the field A is about to be applied
 * to: p, or tea_poly.c's) to the neighbours' halo rows and theirs into its
 * halos, before each A x. sum: a value summed across the ranks, in place; with it every dot
 * product comes to the host, is summed and goes back to the device. */
typedef struct tea_comm {
    void *ctx;
    amp_status (*halo)(void *ctx, tea_solver *s);
    amp_status (*sum)(void *ctx, double *value);
    void (*release)(void *ctx, tea_solver *s); /* tea_free calls it first: what the comm made on s->q goes */
    /* An error on this rank mid-run (said on stderr): the other ranks may
     * be waiting in a collective this rank will not reach, so they must be
     * stopped too (tealeaf_mpi: MPI_Abort). NULL: one rank. */
    void (*fail)(void *ctx);
} tea_comm;

struct tea_solver {
    amp_accelerator_view *q;
    int nx, ny, rows, first_row; /* the mesh is nx x ny; this block rows [first_row, first_row + rows) */
    double eps;
    tea_comm comm;
    amp_program *prog;
    tea_solver_kind solver;
    int presteps, inner_steps; /* Chebyshev and PPCG: the deck's (tea_poly.c) */
    double eps_lim;
    bool error_switch;
    amp_kernel *apply, *init_u, *init_r, *update_p, *finalise;
    amp_kernel *apply_pw, *update_ur_rr; /* tiled: each sums a product a tile into pw_parts / rr_parts */
    amp_kernel *copy_into_field, *copy_from_field, *cheby_first, *cheby_step, *residual, *ppcg_init_sd, *ppcg_inner,
        *jacobi;
    amp_array *u, *u0, *r, *w, *kx, *ky, *energy, *density;
    amp_array_view *vu, *vu0, *vr, *vw, *vkx, *vky, *venergy, *vdensity;
    tea_field p;            /* CG's direction (and, in a Chebyshev phase, u: tea_poly.c) */
    tea_field sd[2];        /* Chebyshev, Jacobi: sd[0] (u, with p); PPCG: both (its inner direction) */
    const tea_field *halo;  /* the field the next exchange fills (tea_apply) */
    /* rr[parity]: rro, the r . r an iteration starts from; rr[parity ^ 1]
     * gets its rrn. iters likewise: the step's iteration count. */
    amp_array *rr[2], *pw, *iters[2];
    /* The fused kernels' sums, one a tile (tiles of them), over the block's
     * rows x nx padded to whole tiles (cg_domain). */
    amp_array *pw_parts, *rr_parts;
    amp_tiled_extent cg_domain;
    int parity;
    amp_graph *graph[2]; /* tea_use_graphs: one iteration per parity */
    double *density_host, *energy0_host; /* this block's initial state (the field summary's) */
    /* The last step's iterations by phase (tea_step's *iters is their sum):
     * CG's, then Chebyshev's or PPCG's outer ones; est_iters: Chebyshev's
     * estimate of its own count (it computes r . r only from there on). */
    int cg_iters, poly_iters, est_iters;
    double eigmin, eigmax; /* the last estimate (Chebyshev and PPCG) */
};

/* Builds the kernels on acc, allocates the block's fields on a queue of its
 * own, generates the block's initial state from the deck and the face
 * coefficients for the time step dt (they depend on the density alone,
 * which conduction leaves alone). Collective over a row split's ranks when
 * comm->sum is set. On failure the message is on stderr; tea_free frees
 * what was made. */
amp_status tea_init(tea_solver *s, amp_accelerator *acc, const tea_deck *d, double dt, int rows, int first_row,
                    const tea_comm *comm);
/* Replays each CG iteration from a launch graph from now on (two, one per
 * parity of the rro / rrn swap): the same kernels on the same data. One
 * rank only: AMP_ERROR_UNSUPPORTED with a comm. */
amp_status tea_use_graphs(tea_solver *s);
/* One time step: set-up, CG to convergence (sqrt(rrn) < eps) or max_iters,
 * energy = u / density. The host looks at the device's iteration count
 * every check_every iterations (each one with comm->sum); the device stops
 * updating once converged, so every check_every gives the same bits.
 * iters: the iterations that updated; error: the final rrn. */
amp_status tea_step(tea_solver *s, int max_iters, int check_every, int *iters, double *error);
/* The field summary of this block (not summed across ranks): volume,
 * mass, internal energy (mass times the initial energy), temperature
 * (mass times u). Waits for the queue. */
amp_status tea_summary(tea_solver *s, double dx, double dy, double out[4]);
void tea_free(tea_solver *s);

/* Shared by tea_solver.c and tea_poly.c. */
/* Returns a failed call's status from the function, said on stderr. */
#define TEA_CHECK(call)                                                                                            \
    do {                                                                                                           \
        amp_status st_ = (call);                                                                                   \
        if (st_ != AMP_OK) {                                                                                       \
            fprintf(stderr, "tealeaf: %s failed: %s: %s\n", #call, amp_status_name(st_), amp_last_error());        \
            return st_;                                                                                            \
        }                                                                                                          \
    } while (0)

/* x's halos from the neighbours, in a row split (nothing on one rank). */
amp_status tea_exchange(tea_solver *s, const tea_field *x);
/* w = A x (x's halos first). */
amp_status tea_apply(tea_solver *s, const tea_field *x);
/* a . b over every rank's rows into the one-element device array out
 * (through the host with comm.sum), or onto the host (tea_dot_host). */
amp_status tea_dot(tea_solver *s, amp_array_view *a, amp_array_view *b, amp_map map, amp_array *out);
amp_status tea_dot_host(tea_solver *s, amp_array_view *a, amp_array_view *b, amp_map map, double *out);
/* One CG iteration on rr[parity] (rro) and rr[parity ^ 1] (rrn): its w,
 * u and r updates, which also sum r . r a tile (tea_cg_wur), then its rrn
 * and p update, the parity flipped (tea_cg_p): rrn from those sums, or,
 * where r changed in between (r_changed: PPCG's inner steps), from r. */
amp_status tea_cg_wur(tea_solver *s);
amp_status tea_cg_p(tea_solver *s, bool r_changed);
/* The rest of a step after CG's set-up for Chebyshev, PPCG and Jacobi
 * decks (tea_poly.c): iterations to convergence (|error| < eps, TeaLeaf's
 * test for those solvers: r . r, or Jacobi's sum of |u' - u|) or
 * max_iters; u ends in s->u. */
amp_status tea_poly_solve(tea_solver *s, int max_iters, int *iters, double *error);

#endif
