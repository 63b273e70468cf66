/* cpu_graph.c — the CPU accelerator's launch graphs: a replay list. A launch recorded on a queue becomes a job set up once (its argument pack copied, its chunking and entry points chosen: amp__cpu_job_new), a copy the record of its bytes; a replay runs them in order and checks and sets up nothing.
 *
 * Small launches run on the replaying thread alone. Waking a pool thread
 * and waiting for it to leave the job costs microseconds (2 us on this
 * project's 2-core CI machine when idle, 20 us when loaded), while a
 * simple kernel's index point costs a fraction of a nanosecond: a chain of
 * 1000 launches over 4096 floats replayed at 2.2 us a launch with the pool
 * and 0.3 us alone. Measured there (bench_cpu --graph-only, the chain at
 * 4096 to 262144 floats, AMP_CPU_GRAPH_ALONE=1 against 10^6), alone was as
 * fast or faster at every size, because the second core was busy. On the
 * 16-thread host of the H100 machine a launch through the pool cost 47 us
 * (the chain, direct), so there a launch pays for the pool only when it
 * takes about 50 us alone; a threshold of 32768 points left the CG
 * iterations of 65536 points on the pool (1.02x and 1.26x with a graph).
 * So a launch of at most AMP__CPU_GRAPH_ALONE_POINTS (262144;
 * AMP_CPU_GRAPH_ALONE sets it) index points runs alone, unless it turns
 * out heavy, which is what catches a big kernel below the threshold: its first
 * AMP__CPU_GRAPH_TIMED replays alone are timed, and a launch none of which
 * took less than AMP__CPU_GRAPH_HEAVY_NS goes on to threads of the pool.
 * How many is measured too: a launch costs about 2.7 us more for each
 * thread it involves on that host (1.8 us with the threads spinning), so
 * the CG iteration's launches of 65536 points took 184 us on 8 threads
 * and 437 on 16 (bench/results/2026-11-26-session29-h100.md). A heavy
 * launch is timed on 2, 4, 8, ... threads in turn, AMP__CPU_GRAPH_TIMED
 * replays each, and keeps the width past which doubling the threads no
 * longer took a tenth off its time.
 * A width chosen while the host was busy with something else can be wrong
 * for the rest of the graph's life (on the shared 16-vCPU host the CG
 * iteration replayed at 183 to 194 us in three runs and 241 in a fourth:
 * bench/results/2026-11-27-session31-h100.md), so a heavy launch is checked
 * again every AMP__CPU_GRAPH_RECHECK replays: AMP__CPU_GRAPH_TIMED replays
 * at each of its width, twice it and half it, taken in turn so that a
 * passing load weighs on all three alike, and it moves to the wider one if
 * that took a tenth off, else to the narrower one unless its own took a
 * tenth off that. A check runs at most 6 of every 256 replays at other
 * widths. Every index point runs the same code on the same data
 * whatever the width: the results are the same bits. */
#include "cpu_internal.h"

#include <stdlib.h>
#include <string.h>

/* A small launch's replays alone that are timed, and the time from which
 * it counts as heavy (the file's comment). */
#define AMP__CPU_GRAPH_TIMED 3
#define AMP__CPU_GRAPH_HEAVY_NS 50000
/* Replays between the checks of a heavy launch's width (the file's comment). */
#define AMP__CPU_GRAPH_RECHECK 256

/* One recorded command: a launch (job) or a copy (job NULL). Replays of
 * one graph never overlap (its jobs are reused), so the fields are the
 * replaying thread's. */
typedef struct amp__cpu_gnode {
    amp__cpu_job *job;
    int width;       /* threads it runs on: 1 alone, 0 every one */
    bool settled;    /* width chosen; nothing more is timed */
    int timed;       /* replays timed at this width */
    uint64_t best;   /* the fastest of them, ns */
    int prev_width;  /* the width before (0: none) and its fastest replay */
    uint64_t prev_best;
    /* A heavy launch's checks (settled, and prev_width set: only a heavy
     * launch went past width 1): replays since the last; during one
     * (ncand > 0) the widths tried, cand[0] the settled one, the fastest
     * replay at each, and the replays of the check so far. */
    int since;
    int ncand, step;
    int cand[3];
    uint64_t cand_best[3];
    amp__copy copy;
} amp__cpu_gnode;

struct amp__cpu_graph {
    amp__cpu_gnode *nodes;
    size_t n, cap;
};

amp_status amp__cpu_graph_new(amp__cpu_graph **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? AMP_OK : amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for a graph");
}

static amp_status amp__cpu_graph_grow(amp__cpu_graph *g)
{
    if (g->n < g->cap) return AMP_OK;
    size_t cap = g->cap ? 2 * g->cap : 16;
    amp__cpu_gnode *p = realloc(g->nodes, cap * sizeof *p);
    if (!p) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for %zu graph nodes", cap);
    g->nodes = p;
    g->cap = cap;
    return AMP_OK;
}

amp_status amp__cpu_graph_add_launch(amp__cpu_device *d, amp__cpu_graph *g, const amp__cpu_kernel *k,
                                     const amp__launch *l)
{
    amp_status st = amp__cpu_graph_grow(g);
    amp__cpu_job *j = NULL;
    if (st == AMP_OK) st = amp__cpu_job_new(k, l, &j);
    if (st != AMP_OK) return st;
    /* A big launch runs on every thread, as a direct one does; a small one
     * starts alone and is timed (the file's comment). */
    bool small = amp__cpu_job_points(j) <= (int64_t)d->graph_alone_points && d->nthreads > 1;
    g->nodes[g->n++] = (amp__cpu_gnode){.job = j, .width = small ? 1 : 0, .settled = !small, .best = UINT64_MAX};
    return AMP_OK;
}

amp_status amp__cpu_graph_add_copy(amp__cpu_graph *g, const amp__copy *c)
{
    if (!c || (c->width_bytes && (!c->dst || !c->src)))
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "CPU accelerator: copy with a NULL pointer");
    amp_status st = amp__cpu_graph_grow(g);
    if (st != AMP_OK) return st;
    g->nodes[g->n++] = (amp__cpu_gnode){.copy = *c};
    return AMP_OK;
}

size_t amp__cpu_graph_size(const amp__cpu_graph *g) { return g ? g->n : 0; }

/* x's width after AMP__CPU_GRAPH_TIMED replays at its present one (the
 * file's comment): light alone, or not a tenth faster than at half the
 * threads, or at every thread: settled; else twice the threads next. */
static void amp__cpu_gnode_next_width(amp__cpu_gnode *x, int threads)
{
    if (x->width == 1 && x->best < AMP__CPU_GRAPH_HEAVY_NS) {
        x->settled = true;
    } else if (x->prev_width && x->best * 10 > x->prev_best * 9) {
        x->width = x->prev_width;
        x->settled = true;
    } else if (x->width >= threads) {
        x->settled = true;
    } else {
        x->prev_width = x->width;
        x->prev_best = x->best;
        x->width = 2 * x->width < threads ? 2 * x->width : threads;
        x->best = UINT64_MAX;
        x->timed = 0;
    }
}

/* The width x's next replay runs at: its own, or the check's turn (which
 * starts here when due). */
static int amp__cpu_gnode_width(amp__cpu_gnode *x, int threads)
{
    if (!x->settled || !x->prev_width) return x->width;
    if (!x->ncand) {
        if (++x->since < AMP__CPU_GRAPH_RECHECK) return x->width;
        x->since = 0;
        x->step = 0;
        x->cand[x->ncand++] = x->width;
        if (x->width < threads) x->cand[x->ncand++] = 2 * x->width < threads ? 2 * x->width : threads;
        if (x->width > 1) x->cand[x->ncand++] = x->width / 2;
        for (int i = 0; i < x->ncand; ++i) x->cand_best[i] = UINT64_MAX;
    }
    return x->cand[x->step % x->ncand];
}

/* A check's replay took dt: after the last, the width (the file's comment). */
static void amp__cpu_gnode_checked(amp__cpu_gnode *x, uint64_t dt)
{
    int i = x->step % x->ncand;
    if (dt < x->cand_best[i]) x->cand_best[i] = dt;
    if (++x->step < AMP__CPU_GRAPH_TIMED * x->ncand) return;
    uint64_t own = x->cand_best[0];
    int k = x->ncand > 1 && x->cand[1] > x->width ? 1 : 0; /* the wider one, where there is one */
    int narrower = x->width > 1 ? x->ncand - 1 : 0;
    if (k && x->cand_best[k] * 10 < own * 9) x->width = x->cand[k];
    else if (narrower && own * 10 > x->cand_best[narrower] * 9) x->width = x->cand[narrower];
    x->ncand = 0;
}

amp_status amp__cpu_graph_run(amp__cpu_device *d, amp__cpu_graph *g, uint64_t *node_ns)
{
    for (size_t i = 0; i < g->n; ++i) {
        amp__cpu_gnode *x = &g->nodes[i];
        amp_status st = AMP_OK;
        if (node_ns) node_ns[2 * i] = amp__now_ns();
        if (x->job) {
            int width = amp__cpu_gnode_width(x, d->nthreads);
            bool timed = !x->settled || x->ncand > 0;
            amp__cpu_job_rearm(x->job);
            uint64_t t0 = timed ? amp__now_ns() : 0;
            st = amp__cpu_job_run_on(d, x->job, width);
            uint64_t dt = timed ? amp__now_ns() - t0 : 0;
            if (!x->settled) {
                x->best = dt < x->best ? dt : x->best;
                if (++x->timed == AMP__CPU_GRAPH_TIMED) amp__cpu_gnode_next_width(x, d->nthreads);
            } else if (x->ncand) {
                amp__cpu_gnode_checked(x, dt);
            }
        } else {
            amp__cpu_copy_bytes(&x->copy);
        }
        if (node_ns) node_ns[2 * i + 1] = amp__now_ns();
        /* A failure ends the replay: the commands after it would read its
         * results. */
        if (st != AMP_OK) return st;
    }
    return AMP_OK;
}

void amp__cpu_graph_free(amp__cpu_graph *g)
{
    if (!g) return;
    for (size_t i = 0; i < g->n; ++i) amp__cpu_job_free(g->nodes[i].job);
    free(g->nodes);
    free(g);
}
