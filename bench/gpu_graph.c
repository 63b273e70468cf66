/* gpu_graph.c — the GPU benchmark's launch-graph section (issue 24): a chain of 1000 dependent small launches (3 views of 4096 floats) replayed from a graph, per launch, against the raw driver's launches of the same kernel measured in the same run, and a CG iteration on a 256 x 256 grid with and without a graph (bench/graph_work.c, whose figures bench_cpu reports for the CPU accelerator). */
#include "gpu_harness.h"
#include "gpu_sections.h"

#include "graph_work.h"

#include <stdlib.h>
#include <string.h>

enum { CHAIN_N = 4096 };

typedef struct rchain { rawk k; rg_ptr b[3]; int launches; } rchain;

/* The chain through the driver: launch k reads b[k%3], b[(k+1)%3] and
 * writes b[(k+2)%3], as gw_chain_run does through hipamp. */
static void raw_chain(void *p)
{
    rchain *c = p;
    for (int k = 0; k < c->launches; ++k) {
        rview v[3] = {rv1(c->b[k % 3], CHAIN_N), rv1(c->b[(k + 1) % 3], CHAIN_N), rv1(c->b[(k + 2) % 3], CHAIN_N)};
        raw_launch(&c->k, amp_extent_1d(CHAIN_N), v, 3);
    }
}

/* Per launch of the raw chain (median of REPS whole chains, stream
 * synchronized around each), its result checked against the host's. */
static double raw_chain_us(int launches, bool *ok)
{
    rchain c = {.launches = launches};
    raw_kernel(raw_build(gw_source, NULL), "chain_step", &c.k);
    float *h[3], *got = malloc(CHAIN_N * sizeof *got);
    if (!got) die("out of memory");
    for (int k = 0; k < 3; ++k) {
        if (!(h[k] = malloc(CHAIN_N * sizeof *h[k]))) die("out of memory");
        gw_chain_init(h[k], CHAIN_N, 1, k);
        c.b[k] = rg_alloc(CHAIN_N * sizeof(float));
        rg_h2d(c.b[k], h[k], CHAIN_N * sizeof(float));
    }
    raw_plain_batch(raw_chain, &c, 1); /* warm-up, and the run checked */
    for (int k = 0; k < launches; ++k) {
        float *x = h[k % 3], *y = h[(k + 1) % 3], *z = h[(k + 2) % 3];
        for (int i = 0; i < CHAIN_N; ++i) z[i] = 0.5f * x[i] + 0.5f * y[i];
    }
    *ok = true;
    for (int k = 0; k < 3; ++k) {
        rg_d2h(got, c.b[k], CHAIN_N * sizeof(float));
        *ok = *ok && !memcmp(got, h[k], CHAIN_N * sizeof(float));
    }
    double t[REPS];
    for (int r = 0; r < REPS; ++r) t[r] = raw_plain_batch(raw_chain, &c, 1) / launches;
    for (int k = 0; k < 3; ++k) {
        rg_free(c.b[k]);
        free(h[k]);
    }
    free(got);
    return wl_median(t, REPS) * 1e6;
}

void graph_report(void)
{
    out("\n## Launch graphs\n\n");
    gw_figures g;
    amp_status st = gw_measure(W.acc, quick, &g);
    if (st != AMP_OK) {
        failures++;
        out("FAILED: %s: %s\n", amp_status_name(st), amp_last_error());
        return;
    }
    bool raw_ok = false;
    double raw_us = raw_chain_us(g.chain_launches, &raw_ok);
    if (!g.chain_same || !g.cg_same || !g.solver_same || !raw_ok) failures++;
    double speedup = g.cg_graph_us > 0 ? g.cg_direct_us / g.cg_graph_us : 0;
    double solver = g.solver_graph_us > 0 ? g.solver_direct_us / g.solver_graph_us : 0;
    out("Recorded once with amp_graph_begin_recording (a %s), replayed with amp_graph_launch; medians of %d "
        "batches, the queue synchronized around each (bench/graph_work.c). The raw chain launches the same kernel "
        "with %s on the benchmark's own stream, checked against the host.\n\n",
        "CUDA or HIP graph by stream capture", g.reps, rg.launch);
    out("| figure | raw | hipamp direct | hipamp graph | check |\n|---|---:|---:|---:|---|\n");
    out("| chain of %d dependent launches, 3 views of %d floats: us a launch | %.2f | %.2f | %.3f | %s |\n",
        g.chain_launches, CHAIN_N, raw_us, g.chain_direct_us, g.chain_graph_us,
        g.chain_same && raw_ok ? "passed (graph = direct bit for bit)" : "FAILED");
    out("| CG iteration on %d x %d (7 launches), %d iterations: us an iteration | - | %.1f | %.1f | %s |\n", g.cg_n,
        g.cg_n, g.cg_iters, g.cg_direct_us, g.cg_graph_us,
        g.cg_same ? "passed (graph = direct bit for bit)" : "FAILED");
    out("| examples/cg's iteration on %d x %d (doubles, amp_transform_reduce_async), batches of %d: us an iteration "
        "| - | %.1f | %.1f | %s |\n",
        g.cg_n, g.cg_n, g.solver_iters, g.solver_direct_us, g.solver_graph_us,
        g.solver_same ? "passed (graph = direct bit for bit)" : "FAILED");
    chart("Launch graphs", "chain launch", "raw", raw_us, "us");
    chart("Launch graphs", "chain launch", "hipamp", g.chain_graph_us, "us");
    add_goal(g.chain_graph_us <= 1.0, "a launch of a 1000-launch chain replayed from a graph", "<= 1.0 us", NULL,
             "%.3f us (raw %s %.2f us, hipamp direct %.2f us)", g.chain_graph_us, rg.launch, raw_us,
             g.chain_direct_us);
    add_goal(speedup >= 1.3, "CG iteration on 256 x 256 with a graph against without", ">= 1.3x", NULL,
             "%.2fx (%.1f vs %.1f us)", speedup, g.cg_graph_us, g.cg_direct_us);
    add_goal(solver >= 1.3, "examples/cg's iteration on 256 x 256 with its graphs against without", ">= 1.3x", NULL,
             "%.2fx (%.1f vs %.1f us)", solver, g.solver_graph_us, g.solver_direct_us);
}
