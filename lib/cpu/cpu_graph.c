/* cpu_graph.c — the CPU accelerator's launch graphs: a replay list. A launch recorded on a queue becomes a job set up once (its argument pack copied, its chunking and entry points chosen: amp__cpu_job_new), a copy the record of its bytes; a replay runs them in order and checks and sets up nothing.
 *
 * How many threads a replayed launch runs on is learned from its times,
 * as a direct launch's is, and in the same place: its kernel's widths for
 * its size and hand-off (cpu_width.c, cpu_launch.c), so a graph replayed
 * without a team after direct launches starts on the width they found,
 * and a graph's many launches of one kernel and size (a chain of 1000)
 * search together, within the first replay, rather than each on its own
 * over many replays. A launch of at most AMP__CPU_GRAPH_ALONE_POINTS
 * index points (AMP_CPU_GRAPH_ALONE sets it) learns; a bigger one runs on
 * every thread. Waking a pool thread and waiting for it to leave the job
 * costs microseconds, while a simple kernel's index point costs a
 * fraction of a nanosecond: a small launch spread over every thread is
 * mostly hand-off, and runs several times faster on a few threads or
 * alone (docs/architecture.md, launch graphs).
 * Where the pool's threads spin, a replay of two launches or more hands
 * them to a team of pool threads engaged for its whole length (cpu_team.c
 * says how and why), sized to the widest launch the replay before asked
 * for; its launches learn their widths apart from direct launches
 * (cpu_width.c). */
#include "cpu_internal.h"

#include <stdlib.h>
#include <string.h>

/* One recorded command: a launch (job) or a copy (job NULL). Replays of
 * one graph never overlap, so the fields are the replaying thread's: the
 * core makes one replay of a graph at a time (its replay lock, lib/core/graph.c),
 * a synchronous replay runs once what its queue holds has run, and the
 * queue's thread runs the asynchronous ones one after another. */
typedef struct amp__cpu_gnode {
    amp__cpu_job *job;
    bool learn; /* on its kernel's learned width (else on every thread) */
    amp__copy copy;
} amp__cpu_gnode;

struct amp__cpu_graph {
    amp__cpu_gnode *nodes;
    size_t n, cap;
    size_t njobs;
    amp__cpu_team *team; /* its replays' (they never overlap), NULL until the first */
    int team_size;       /* the next replay's team, 0: every thread */
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
    /* A big launch runs on every thread; a small one on its kernel's
     * learned width (the file's comment). */
    bool small = amp__cpu_job_points(j) <= (int64_t)d->graph_alone_points;
    g->nodes[g->n++] = (amp__cpu_gnode){.job = j, .learn = small};
    g->njobs++;
    return AMP_OK;
}

void amp__cpu_copy_bytes(const amp__copy *c)
{
    char *dst = c->dst;
    const char *src = c->src;
    /* 0 rows or slices are no bytes (lib/backend.h), as on a GPU: a graph
     * records a copy of a 0-row section as it is given. */
    size_t h = c->height, dd = c->depth;
    if (!c->width_bytes || !h || !dd) return;
    if (h * dd == 1 || (c->width_bytes == c->dst_pitch && c->width_bytes == c->src_pitch &&
                        (dd == 1 || (c->dst_slice_pitch == h * c->dst_pitch &&
                                     c->src_slice_pitch == h * c->src_pitch)))) {
        memmove(dst, src, c->width_bytes * h * dd);
        return;
    }
    for (size_t z = 0; z < dd; ++z)
        for (size_t y = 0; y < h; ++y)
            memmove(dst + z * c->dst_slice_pitch + y * c->dst_pitch,
                    src + z * c->src_slice_pitch + y * c->src_pitch, c->width_bytes);
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

amp_status amp__cpu_graph_run(amp__cpu_device *d, amp__cpu_graph *g, uint64_t *node_ns)
{
    /* A team pays where pool threads spin (they wait for the next launch
     * that way) and a replay has launches to hand them. */
    bool teams = d->graph_team && d->spin_us && d->nthreads > 1 && g->njobs > 1;
    /* Made at the first replay; without memory for it, none. */
    if (teams && !g->team) g->team = amp__cpu_team_new();
    amp__cpu_team *team = teams ? g->team : NULL;
    amp_status st = AMP_OK;
    if (team && (st = amp__cpu_team_begin(d, team, g->team_size ? g->team_size : d->nthreads)) != AMP_OK)
        return st;
    for (size_t i = 0; i < g->n && st == AMP_OK; ++i) {
        amp__cpu_gnode *x = &g->nodes[i];
        if (node_ns) node_ns[2 * i] = amp__now_ns();
        if (!x->job) {
            amp__cpu_copy_bytes(&x->copy);
        } else {
            amp__cpu_job_rearm(x->job);
            if (x->learn)
                st = amp__cpu_job_run_learning(d, x->job, team);
            else if (team)
                st = amp__cpu_team_run(d, team, x->job, amp__cpu_team_width(team, 0));
            else
                st = amp__cpu_job_run_on(d, x->job, 0);
        }
        if (node_ns) node_ns[2 * i + 1] = amp__now_ns();
        /* A failure ends the replay: the commands after it would read its
         * results. */
    }
    if (team) g->team_size = amp__cpu_team_end(team);
    return st;
}

void amp__cpu_graph_free(amp__cpu_graph *g)
{
    if (!g) return;
    for (size_t i = 0; i < g->n; ++i) amp__cpu_job_free(g->nodes[i].job);
    amp__cpu_team_free(g->team);
    free(g->nodes);
    free(g);
}
