/* cpu_graph.c — the CPU accelerator's launch graphs: a replay list. A launch recorded on a queue becomes a job set up once (its argument pack copied, its chunking and entry points chosen: amp__cpu_job_new), a copy the record of its bytes; a replay runs them in order and checks and sets up nothing. */
#include "cpu_internal.h"

#include <stdlib.h>
#include <string.h>

/* One recorded command: a launch (job) or a copy (job NULL). */
typedef struct amp__cpu_gnode {
    amp__cpu_job *job;
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

amp_status amp__cpu_graph_add_launch(amp__cpu_graph *g, const amp__cpu_kernel *k, const amp__launch *l)
{
    amp_status st = amp__cpu_graph_grow(g);
    amp__cpu_job *j = NULL;
    if (st == AMP_OK) st = amp__cpu_job_new(k, l, &j);
    if (st != AMP_OK) return st;
    g->nodes[g->n++] = (amp__cpu_gnode){.job = j};
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

amp_status amp__cpu_graph_run(amp__cpu_device *d, amp__cpu_graph *g, uint64_t *node_ns)
{
    for (size_t i = 0; i < g->n; ++i) {
        amp__cpu_gnode *x = &g->nodes[i];
        amp_status st = AMP_OK;
        if (node_ns) node_ns[2 * i] = amp__now_ns();
        if (x->job) {
            amp__cpu_job_rearm(x->job);
            st = amp__cpu_job_run(d, x->job);
        }
        else amp__cpu_copy_bytes(&x->copy);
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
