/* alg/scratch.c — the algorithms' temporary device memory: arrays kept in a
 * pool per accelerator, taken for the length of one call's queuing and given
 * back, reused by later calls on any queue (their launches order after the
 * array's last use, as for any array), trimmed when idle ones pass a budget.
 * Taken for a call that a launch graph records, an array belongs to the
 * graph instead: every replay runs the recorded launches on it, so it comes
 * back to the pool only when the graph is freed (amp__graph_hold). */
#include "alg.h"
#include "base/fork_guard.h"

#include <limits.h>
#include <stdlib.h>

struct amp__alg_scratch {
    amp_array *a;
    amp_accelerator *acc;
    size_t elem;
    int64_t cap;           /* elements */
    const void *last_q;    /* the queue it was last taken for: a preference, never dereferenced */
    uint64_t last_use;     /* pool clock when last given back */
    bool busy;             /* taken, or being trimmed */
    bool graph;            /* taken for a recording: the graph gives it back */
    amp__alg_scratch *next;
};

/* Guards the list and every entry's fields but a; a leaf: nothing else is
 * taken under it (trimming queries and destroys arrays after unlocking). */
AMP__FORK_GUARDED_MUTEX(amp__pool_lock)
static amp__alg_scratch *amp__pool;
static uint64_t amp__pool_clock;

/* Idle bytes an accelerator's pool keeps: an eighth of a GPU's memory, at
 * least 256 MiB (the CPU accelerator reports none). */
static uint64_t amp__pool_budget(const amp_accelerator *acc)
{
    uint64_t b = acc->e.info.dedicated_memory / 8;
    return b < (256ull << 20) ? 256ull << 20 : b;
}

/* Capacity for count elements: powers of two up to 2^20, then steps of an
 * eighth of the next power of two (at most 12.5% unused), so that a pool
 * entry also serves somewhat larger calls. Above INT_MAX elements a
 * multiple of 2^20 (the array is then 2-D). */
static int64_t amp__pool_round(int64_t count)
{
    int64_t p = 1;
    while (p < count) p <<= 1;
    if (p <= (1 << 20)) return p < 256 ? 256 : p;
    int64_t step = p / 8;
    return (count + step - 1) / step * step;
}

/* Give back idle entries of acc's pool, oldest first, whose last work has
 * finished, while its idle bytes pass the budget. */
static void amp__pool_trim(amp_accelerator *acc)
{
    enum { MAX_VICTIMS = 16 };
    amp__alg_scratch *cand[MAX_VICTIMS];
    int n = 0;
    uint64_t idle = 0, budget = amp__pool_budget(acc);
    pthread_mutex_lock(&amp__pool_lock);
    for (amp__alg_scratch *e = amp__pool; e; e = e->next)
        if (e->acc == acc && !e->busy) idle += (uint64_t)e->cap * e->elem;
    while (idle > budget && n < MAX_VICTIMS) {
        amp__alg_scratch *old = NULL;
        for (amp__alg_scratch *e = amp__pool; e; e = e->next)
            if (e->acc == acc && !e->busy && (!old || e->last_use < old->last_use)) old = e;
        if (!old) break;
        old->busy = true; /* claimed: nobody takes it while it is looked at */
        idle -= (uint64_t)old->cap * old->elem;
        cand[n++] = old;
    }
    pthread_mutex_unlock(&amp__pool_lock);
    for (int i = 0; i < n; ++i) {
        amp__storage *s = cand[i]->a->s;
        bool done = false;
        amp_status st = AMP_ERROR_DEVICE; /* a forked child where a parent's thread held it: kept */
        if (amp__lock_acquire_or_forked(&s->lock)) {
            st = amp__point_query(s->last, &done);
            amp__lock_release(&s->lock);
        }
        pthread_mutex_lock(&amp__pool_lock);
        if (st == AMP_OK && done) {
            for (amp__alg_scratch **pp = &amp__pool; *pp; pp = &(*pp)->next)
                if (*pp == cand[i]) {
                    *pp = cand[i]->next;
                    break;
                }
        } else {
            cand[i]->busy = false;
            cand[i] = NULL;
        }
        pthread_mutex_unlock(&amp__pool_lock);
        if (cand[i]) {
            (void)amp_array_destroy(cand[i]->a); /* its work is done: no wait */
            free(cand[i]);
        }
    }
}

/* [no lock held] A graph's entry back to the pool, once the graph is freed. */
static void amp__pool_give_from_graph(void *arg)
{
    amp__alg_scratch *s = arg;
    pthread_mutex_lock(&amp__pool_lock);
    s->graph = false;
    s->busy = false;
    s->last_use = ++amp__pool_clock;
    pthread_mutex_unlock(&amp__pool_lock);
}

/* e, just taken for q: when this thread records q, the graph keeps it. */
static amp_status amp__pool_taken(amp_accelerator_view *q, amp__alg_scratch *e)
{
    amp_graph *g = amp__graph_here();
    if (!g || amp__graph_queue(g) != q) return AMP_OK;
    amp_status st = amp__graph_hold(g, amp__pool_give_from_graph, e);
    if (st != AMP_OK) {
        amp__alg_scratch_give(e);
        return st;
    }
    pthread_mutex_lock(&amp__pool_lock);
    e->graph = true;
    pthread_mutex_unlock(&amp__pool_lock);
    return AMP_OK;
}

amp_status amp__alg_scratch_take(amp_accelerator_view *q, size_t elem, int64_t count, amp__alg_scratch **out)
{
    *out = NULL;
    if (count < 1) count = 1;
    amp_accelerator *acc = q->acc;
    amp__alg_scratch *best = NULL;
    pthread_mutex_lock(&amp__pool_lock);
    /* One element (a result read back to the host): an array of exactly
     * one, so that reading it copies one element. */
    bool exact = count == 1;
    for (amp__alg_scratch *e = amp__pool; e; e = e->next) {
        if (e->busy || e->acc != acc || e->elem != elem || e->cap < count || (exact && e->cap != 1)) continue;
        /* Prefer the queue's own (no ordering across queues), then the smallest. */
        if (!best || (e->last_q == q && best->last_q != q) ||
            ((e->last_q == q) == (best->last_q == q) && e->cap < best->cap))
            best = e;
    }
    if (best) {
        best->busy = true;
        best->last_q = q;
        pthread_mutex_unlock(&amp__pool_lock);
        amp_status st = amp__pool_taken(q, best);
        if (st == AMP_OK) *out = best;
        return st;
    }
    pthread_mutex_unlock(&amp__pool_lock);

    amp__alg_scratch *e = calloc(1, sizeof *e);
    if (!e) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "algorithm scratch: out of host memory");
    int64_t cap = exact ? 1 : amp__pool_round(count);
    amp_extent ext = cap <= INT_MAX ? amp_extent_1d((int)cap) : amp_extent_2d((int)(cap >> 20), 1 << 20);
    /* On the accelerator's default view (library-owned), never the caller's
     * queue, which the array would keep alive. */
    amp_accelerator_view *dq = NULL;
    amp_status st = amp__accelerator_queue(acc, &dq);
    if (st == AMP_OK) st = amp_array_create(dq, elem, ext, NULL, &e->a);
    if (st != AMP_OK) {
        free(e);
        return st;
    }
    e->acc = acc;
    e->elem = elem;
    e->cap = cap;
    e->last_q = q;
    e->busy = true;
    pthread_mutex_lock(&amp__pool_lock);
    e->next = amp__pool;
    amp__pool = e;
    pthread_mutex_unlock(&amp__pool_lock);
    /* Not while this thread records: trimming frees device memory, which
     * a driver's stream capture is better not mixed with. */
    if (!amp__graph_here()) amp__pool_trim(acc);
    if ((st = amp__pool_taken(q, e)) != AMP_OK) return st;
    *out = e;
    return AMP_OK;
}

amp_arg amp__alg_scratch_arg(const amp__alg_scratch *s)
{
    amp_arg a = amp_arg_array(s->a);
    a.kind = (amp_arg_kind)(AMP__ARG_SPAN | AMP__ARG_SPAN_ARRAY);
    return a;
}

amp_array *amp__alg_scratch_array(const amp__alg_scratch *s) { return s->a; }

void amp__alg_scratch_give(amp__alg_scratch *s)
{
    if (!s) return;
    pthread_mutex_lock(&amp__pool_lock);
    if (s->graph) { /* a graph's: it gives it back when it is freed */
        pthread_mutex_unlock(&amp__pool_lock);
        return;
    }
    s->busy = false;
    s->last_use = ++amp__pool_clock;
    pthread_mutex_unlock(&amp__pool_lock);
}
