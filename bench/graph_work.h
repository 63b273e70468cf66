/* graph_work.h — the launch-graph benchmark's workloads (issue 24), one source for bench_gpu's graph section and bench_cpu: a chain of dependent small launches over three views, and a conjugate-gradient iteration on an n x n grid with every scalar on the device; each runs directly or is recorded once into a graph and replayed. */
#ifndef HIPAMP_BENCH_GRAPH_WORK_H
#define HIPAMP_BENCH_GRAPH_WORK_H

#include <hipamp.h>

/* bench/kernels/graph_work.hip, embedded. */
extern const char gw_source[];

/* Launch k of a chain: z = (x + y) / 2 over views v[k%3], v[(k+1)%3] into
 * v[(k+2)%3], so each launch reads what the one before wrote. */
typedef struct gw_chain {
    amp_accelerator_view *q;
    amp_kernel *step;
    amp_array_view *v[3];
    float *host[3];
    int n;
} gw_chain;
/* The data of view k of a chain opened with seed (multiples of 1/8, so
 * that a chain's averages are exact for many steps). */
void gw_chain_init(float *x, int n, unsigned seed, int k);
/* Three views of n floats (filled from seed), on q's accelerator. */
amp_status gw_chain_open(gw_chain *c, amp_accelerator_view *q, amp_program *p, int n, unsigned seed);
/* launches launches, each queued as amp_parallel_for_each (blocking only
 * where the accelerator runs them in the caller's thread). */
amp_status gw_chain_run(gw_chain *c, int launches);
/* The same launches recorded into a graph on c->q. */
amp_status gw_chain_record(gw_chain *c, int launches, amp_graph **out);
/* Copies the views back to the host (synchronize). */
amp_status gw_chain_sync(gw_chain *c);
void gw_chain_close(gw_chain *c);

/* Conjugate gradients on the n x n 5-point Laplacian, b = 1, x0 = 0; one
 * iteration is seven launches (apply, two dot products of two launches,
 * two updates), the scalars in a device array. n * n must be a multiple
 * of 256 and at most 256 * 256 * 256. */
typedef struct gw_cg {
    amp_accelerator_view *q;
    amp_kernel *apply, *part, *finish, *xr, *pu;
    amp_array *x, *r, *p, *ap, *parts, *sc;
    int n, nparts;
} gw_cg;
amp_status gw_cg_open(gw_cg *c, amp_accelerator_view *q, amp_program *p, int n);
/* Back to x = 0, r = p = b, rho = r.r (blocking copies). */
amp_status gw_cg_reset(gw_cg *c);
amp_status gw_cg_iterate(gw_cg *c, int iterations);
amp_status gw_cg_record(gw_cg *c, int iterations, amp_graph **out);
/* x and the residual's square norm rho (blocking). x may be NULL. */
amp_status gw_cg_result(gw_cg *c, float *x, float *rho);
void gw_cg_close(gw_cg *c);

/* The figures both benchmarks report, measured on a view of acc's own,
 * each the median of reps timed batches (view waited for before and
 * after): per launch of a chain of chain_launches over 3 views of 4096
 * floats, direct and replayed from one graph; per CG iteration on the
 * cg_n x cg_n grid over cg_iters iterations, direct and replayed from a
 * graph of one iteration; per iteration of examples/cg's solver
 * (cg_solver.c: doubles, its dot products by amp_transform_reduce_async,
 * which a graph records with their scratch) on the same grid, batches of
 * solver_iters iterations (below convergence: CG is not reset between
 * batches), directly and replayed from its two graphs (cg_use_graphs).
 * *_same: the graph's results equal the direct ones bit for bit. */
typedef struct gw_figures {
    int chain_launches, cg_n, cg_iters, reps, solver_iters;
    double chain_direct_us, chain_graph_us; /* a launch */
    double cg_direct_us, cg_graph_us;       /* an iteration */
    double solver_direct_us, solver_graph_us; /* an iteration */
    bool chain_same, cg_same, solver_same;
    float cg_rho;                           /* r.r after cg_iters iterations */
} gw_figures;
amp_status gw_measure(amp_accelerator *acc, bool quick, gw_figures *f);

#endif
