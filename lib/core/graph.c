/* graph.c — launch graphs: recording an accelerator view's launches and
 * device copies once (through the backend's recording mode: CUDA/HIP
 * stream capture, the CPU accelerator's replay list), replaying them as
 * one command, and keeping what a graph refers to alive and in place
 * while it exists.
 *
 * Why coherence is settled at replay and not recorded: a graph replayed
 * by an iterative solver reads what its last replay wrote, so a copy-in
 * recorded into it would overwrite the device's newer data with the
 * host's at every replay. Instead a graph is one launch as far as
 * coherence goes: what it uses (a storage and box per argument, deduped)
 * is settled at recording, and each replay prepares exactly those boxes
 * as a launch would (nothing to do once the data lives on the device),
 * then marks the written ones device-newer.
 *
 * Replays of one graph run one at a time, whoever makes them: the backends
 * reuse what a graph holds from one replay to the next (the CPU
 * accelerator's jobs, argument packs and team; a CUDA or HIP executable
 * graph, which the drivers do not lock), and a graph whose kernels take
 * raw addresses uses no storage whose lock would order its replays.
 * Each replay holds the graph's replay lock from its checks until its
 * commands are queued (an asynchronous replay) or have run (a synchronous
 * one on the CPU accelerator). Replays that were only queued are ordered
 * by the queue itself: a graph replays on the view it was recorded on
 * only, whose commands run in order (a CPU view's thread, a GPU stream;
 * a synchronous replay on the CPU first waits for what the view queued).
 * So a second replay waits for the first to be queued, never for its
 * completion, except behind a synchronous CPU replay, which completes
 * where it is queued. No user code runs under the lock (kernels are not
 * user callbacks; continuations run on their own thread), and a replay
 * never waits for another graph's replay lock, so it cannot be part of a
 * cycle.
 *
 * Locks, outermost first: a graph's replay lock (also guarding last), then
 * its storages' locks in address order (the launch path's rule); a thread
 * holding a storage lock never takes a replay lock. The pin table's lock
 * is a leaf.
 *
 * Recording state (g's lists) belongs to the recording thread alone, and,
 * once that thread has exited (amp__graph_thread_exit), to the one thread
 * that claims the recording to end it (owner: owned, orphaned, claimed).
 * Another thread may read q->recorder's graph (its owner, to claim it or
 * to say why q is busy) only under q->rec_lock, a leaf: q->recorder goes
 * back to NULL under that lock before the graph is freed, so the graph it
 * read there is alive until it lets go. A claimed recording stays in
 * q->recorder until it is finished: to every other thread q is recording,
 * and busy. */
#include "internal.h"
#include "base/fork_guard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One (storage, box) the graph uses. */
typedef struct amp__graph_use {
    amp__storage *s;
    amp__box box;
    amp_array_view *view; /* whose discard flag a replay honours (NULL: none) */
    bool writes;
    bool overwrite; /* its first use in the graph writes every element: no copy-in */
} amp__graph_use;

/* Something a graph keeps for its life and lets go of when it is freed. */
typedef struct amp__graph_hold_entry {
    void (*release)(void *arg);
    void *arg;
} amp__graph_hold_entry;

/* Distinct boxes of one storage a graph may use: a replay prepares each,
 * and the storage's box lists must keep room for them (lib/core/storage.c). */
#define AMP__GRAPH_MAX_BOXES 16

struct amp_graph {
    amp__handle h;           /* AMP__HANDLE_GRAPH (lib/core/handle.c) */
    amp_accelerator_view *q; /* retained; counted in q->graphs once ended */
    _Atomic int owner;       /* while recording: amp__rec_owner */
    bool recording;
    amp_status broken;       /* a command the backend refused while recording */
    char broken_msg[1024]; /* the failure's message, whole (a part limit's runs past 400 bytes) */
    void *exec;              /* the backend's graph; NULL: nothing recorded */
    amp__graph_use *uses;
    size_t nuses, cap_uses;
    amp__storage **storages; /* distinct; sorted by address when recording ends */
    size_t nstorages, cap_storages;
    const void **pins;       /* handles pinned (views, arrays, kernels), each once */
    size_t npins, cap_pins;
    amp__graph_hold_entry *holds; /* what it keeps for its life (amp__graph_hold) */
    size_t nholds, cap_holds;
    amp__replay_node *nodes; /* its commands, for traces */
    size_t nnodes, cap_nodes;
    /* The uses the command being recorded changed, as they were before
     * (amp__graph_undo restores them when it fails): one per bind at most. */
    struct { size_t i; amp_array_view *view; bool writes; } undo[AMP__SIG_MAX_PARAMS];
    size_t nundo;
    uint64_t launches, copies, copy_bytes; /* copies: logical (a box), as statistics count them */
    uint64_t driver_copies;                 /* copies: the driver's, as queues number them */
    char label[192];         /* traces: the kernels it launches */
    size_t label_len;
    amp__lock replay;        /* held for a whole replay (the file's comment); guards last */
    amp__point last;         /* after its last replay */
    _Atomic uint64_t replays;
};

/* Who may end a recording: its thread; once that thread has exited, any
 * thread, the first to claim it. */
typedef enum amp__rec_owner { AMP__REC_OWNED, AMP__REC_ORPHANED, AMP__REC_CLAIMED } amp__rec_owner;

/* The graph this thread records is amp__tls_graph (lib/core/queue.c); the same
 * is kept in a key whose destructor tells when the thread exits with a
 * recording open. */
static pthread_key_t amp__graph_key;
static pthread_once_t amp__graph_key_once = PTHREAD_ONCE_INIT;
static bool amp__graph_key_ok;

/* The recording thread exits without ending its recording: hand it to
 * whoever ends it (amp_graph_end_recording from any thread) or destroys
 * its view. Nothing more here: a driver may already have let go of the
 * exiting thread's state. */
static void amp__graph_thread_exit(void *arg)
{
    amp_graph *g = arg;
    /* This thread records no more: a launch from a key destructor of the
     * program's that runs after this one runs as any unrecorded launch,
     * never into a graph another thread may have claimed and freed. */
    if (amp__tls_graph == g) amp__tls_graph = NULL;
    int owned = AMP__REC_OWNED;
    atomic_compare_exchange_strong_explicit(&g->owner, &owned, AMP__REC_ORPHANED, memory_order_acq_rel,
                                            memory_order_relaxed);
}

static void amp__graph_key_init(void) { amp__graph_key_ok = !pthread_key_create(&amp__graph_key, amp__graph_thread_exit); }

/* This thread records g (NULL: nothing). */
static void amp__graph_set_here(amp_graph *g)
{
    amp__tls_graph = g;
    if (amp__graph_key_ok) (void)pthread_setspecific(amp__graph_key, g);
}

/* ------------------------------------------------------------ pin table
 * Handles bound to graphs, counted (open addressing, linear probing,
 * backward-shift deletion). Destroy calls ask it, so the handles need no
 * field of their own. */

typedef struct amp__pin {
    const void *h;
    int n; /* graphs that pin h; -1: closed (amp__graph_pins_close): no graph may */
} amp__pin;

/* A leaf, taken across fork() (base/fork_guard.h). */
AMP__FORK_GUARDED_MUTEX(amp__pin_lock)
static amp__pin *amp__pins;
static size_t amp__pin_cap, amp__pin_count;

static size_t amp__pin_slot(const void *h, size_t cap)
{
    uint64_t x = (uint64_t)(uintptr_t)h;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x & (cap - 1);
}

/* [pin lock] Grow to twice the size (rehash). */
static bool amp__pin_grow(void)
{
    size_t cap = amp__pin_cap ? 2 * amp__pin_cap : 64;
    amp__pin *t = calloc(cap, sizeof *t);
    if (!t) return false;
    for (size_t i = 0; i < amp__pin_cap; ++i) {
        if (!amp__pins[i].h) continue;
        size_t k = amp__pin_slot(amp__pins[i].h, cap);
        while (t[k].h) k = (k + 1) & (cap - 1);
        t[k] = amp__pins[i];
    }
    free(amp__pins);
    amp__pins = t;
    amp__pin_cap = cap;
    return true;
}

static amp_status amp__pin_add(const void *h)
{
    amp_status st = AMP_OK;
    pthread_mutex_lock(&amp__pin_lock);
    if (2 * (amp__pin_count + 1) > amp__pin_cap && !amp__pin_grow()) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "graph: out of host memory for its bindings");
        goto out;
    }
    size_t k = amp__pin_slot(h, amp__pin_cap);
    while (amp__pins[k].h && amp__pins[k].h != h) k = (k + 1) & (amp__pin_cap - 1);
    if (amp__pins[k].h && amp__pins[k].n < 0) {
        st = amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                       "graph: the kernel's program is being destroyed (amp_program_destroy on another thread)");
        goto out;
    }
    if (!amp__pins[k].h) {
        amp__pins[k].h = h;
        amp__pin_count++;
    }
    amp__pins[k].n++;
out:
    pthread_mutex_unlock(&amp__pin_lock);
    return st;
}

/* [pin lock] The slot of h, or amp__pin_cap when it has none. */
static size_t amp__pin_find(const void *h)
{
    if (!amp__pin_cap) return 0;
    size_t mask = amp__pin_cap - 1, k = amp__pin_slot(h, amp__pin_cap);
    while (amp__pins[k].h && amp__pins[k].h != h) k = (k + 1) & mask;
    return amp__pins[k].h == h ? k : amp__pin_cap;
}

/* [pin lock] Empty slot k. Backward shift: later entries of the run move
 * into the hole when their home slot does not lie after it. */
static void amp__pin_remove(size_t k)
{
    size_t mask = amp__pin_cap - 1, hole = k;
    amp__pins[hole] = (amp__pin){NULL, 0};
    amp__pin_count--;
    for (size_t j = (hole + 1) & mask; amp__pins[j].h; j = (j + 1) & mask) {
        size_t home = amp__pin_slot(amp__pins[j].h, amp__pin_cap);
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            amp__pins[hole] = amp__pins[j];
            amp__pins[j] = (amp__pin){NULL, 0};
            hole = j;
        }
    }
}

static void amp__pin_drop(const void *h)
{
    pthread_mutex_lock(&amp__pin_lock);
    size_t k = amp__pin_find(h);
    if (k < amp__pin_cap && amp__pins[k].n > 0 && --amp__pins[k].n == 0) amp__pin_remove(k);
    pthread_mutex_unlock(&amp__pin_lock);
}

int amp__graph_pins_close(const void *const *handles, size_t n, size_t *busy)
{
    int graphs = 0;
    pthread_mutex_lock(&amp__pin_lock);
    for (size_t i = 0; i < n && !graphs; ++i) {
        size_t k = amp__pin_find(handles[i]);
        if (k < amp__pin_cap && amp__pins[k].n > 0) {
            graphs = amp__pins[k].n;
            *busy = i;
        }
    }
    /* Room for all first (no memory: none closed). A handle closed
     * already (a second destroy racing the first, which the handle's end
     * then refuses) is left as it is: one entry each. */
    size_t need = 0;
    for (size_t i = 0; !graphs && i < n; ++i) need += amp__pin_find(handles[i]) >= amp__pin_cap;
    while (!graphs && need && 2 * (amp__pin_count + need) > amp__pin_cap)
        if (!amp__pin_grow()) graphs = -1;
    for (size_t i = 0; !graphs && need && i < n; ++i) {
        if (amp__pin_find(handles[i]) < amp__pin_cap) continue;
        size_t k = amp__pin_slot(handles[i], amp__pin_cap);
        while (amp__pins[k].h) k = (k + 1) & (amp__pin_cap - 1);
        amp__pins[k] = (amp__pin){handles[i], -1};
        amp__pin_count++;
    }
    pthread_mutex_unlock(&amp__pin_lock);
    return graphs;
}

void amp__graph_pins_reopen(const void *const *handles, size_t n)
{
    pthread_mutex_lock(&amp__pin_lock);
    for (size_t i = 0; i < n; ++i) {
        size_t k = amp__pin_find(handles[i]);
        if (k < amp__pin_cap && amp__pins[k].n < 0) amp__pin_remove(k);
    }
    pthread_mutex_unlock(&amp__pin_lock);
}

int amp__graph_uses(const void *handle)
{
    int n = 0;
    if (!handle) return 0;
    pthread_mutex_lock(&amp__pin_lock);
    size_t k = amp__pin_find(handle);
    if (k < amp__pin_cap && amp__pins[k].n > 0) n = amp__pins[k].n;
    pthread_mutex_unlock(&amp__pin_lock);
    return n;
}

/* ---------------------------------------------------------- recording */

amp_graph *amp__graph_here(void) { return amp__tls_graph; }

amp_accelerator_view *amp__graph_queue(const amp_graph *g) { return g->q; }

/* Who records on q as another thread sees it (q->rec_lock held, so the
 * graph read is alive): AMP__REC_OWNED, _ORPHANED or _CLAIMED; -1 when q
 * records nothing. */
static int amp__graph_owner_locked(amp_accelerator_view *q, amp_graph **g)
{
    *g = atomic_load_explicit(&q->recorder, memory_order_acquire);
    return *g ? atomic_load_explicit(&(*g)->owner, memory_order_acquire) : -1;
}

/* Why another thread's command on q is refused, given owner as
 * amp__graph_owner_locked read it. */
static amp_status amp__graph_busy(amp_accelerator_view *q, int owner, const char *what)
{
    if (owner < 0) return amp__fail(AMP_ERROR_BUSY, "%s: the accelerator view was recording a graph on another thread", what);
    if (owner == AMP__REC_CLAIMED)
        return amp__fail(AMP_ERROR_BUSY,
                         "%s: the accelerator view (%s) is recording a graph whose thread exited, and another thread "
                         "is ending it",
                         what, q->acc->e.info.device_path);
    if (owner == AMP__REC_ORPHANED)
        return amp__fail(AMP_ERROR_BUSY,
                         "%s: the accelerator view (%s) is recording a graph whose thread exited without ending it; "
                         "end it (amp_graph_end_recording, from any thread) or destroy the view, which discards it",
                         what, q->acc->e.info.device_path);
    return amp__fail(AMP_ERROR_BUSY,
                     "%s: the accelerator view (%s) is recording a graph on another thread; a recording belongs to "
                     "the thread that began it",
                     what, q->acc->e.info.device_path);
}

amp_status amp__graph_check_thread(amp_accelerator_view *q, const char *what)
{
    /* The thread-local says "this thread records g", where a thread id
     * might be a new thread's reusing an exited recorder's. Only this
     * thread ends its own recording, so q->recorder stays g meanwhile. */
    amp_graph *g = atomic_load_explicit(&q->recorder, memory_order_acquire);
    if (g && amp__tls_graph == g) return AMP_OK;
    if (!amp__lock_acquire_or_forked(&q->rec_lock))
        return amp__fail(AMP_ERROR_DEVICE, "%s on %s: another thread was asking whether the view records a graph "
                         "when this process was forked; in this process the view cannot be used", what,
                         q->acc->e.info.device_path);
    int owner = amp__graph_owner_locked(q, &g);
    amp__lock_release(&q->rec_lock);
    return amp__graph_busy(q, owner, what);
}

/* Pin handle for g (once per graph). */
static amp_status amp__graph_pin(amp_graph *g, const void *handle)
{
    for (size_t i = 0; i < g->npins; ++i)
        if (g->pins[i] == handle) return AMP_OK;
    if (g->npins == g->cap_pins) {
        size_t cap = g->cap_pins ? 2 * g->cap_pins : 16;
        const void **p = realloc(g->pins, cap * sizeof *p);
        if (!p) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "graph: out of host memory for its bindings");
        g->pins = p;
        g->cap_pins = cap;
    }
    amp_status st = amp__pin_add(handle);
    if (st == AMP_OK) g->pins[g->npins++] = handle;
    return st;
}

/* Take a graph's (graphs) and a recording's (recordings) counts off s. In
 * a forked child, a storage a thread of the parent held at fork stays
 * locked for good (its data is never released, lib/core/storage.c): its
 * counts are left as they are, rather than waiting for ever. */
static void amp__unbind_storage(amp__storage *s, int graphs, int recordings)
{
    if (!amp__lock_acquire_or_forked(&s->lock)) return;
    s->graphs -= graphs;
    s->recordings -= recordings;
    amp__lock_release(&s->lock);
}

static bool amp__graph_grow(void **v, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap) return true;
    size_t c = *cap ? 2 * *cap : 16;
    void *p = realloc(*v, c * elem);
    if (!p) return false;
    *v = p;
    *cap = c;
    return true;
}

/* b as the messages write a part of a storage: [lo, hi) per dimension. */
static void amp__graph_box_text(const amp__box *b, int rank, char *out, size_t n)
{
    size_t at = 0;
    out[0] = 0;
    for (int d = 0; d < rank && at < n; ++d) {
        int w = snprintf(out + at, n - at, "%s[%d, %d)", d ? " x " : "", b->lo[d], b->hi[d]);
        if (w < 0) break;
        at += (size_t)w;
    }
}

/* The refusal amp__graph_bind gives a part past the limit. */
static amp_status amp__graph_too_many_parts(const amp__box *b, int rank, bool view)
{
    char part[16 * AMP_MAX_RANK + 8];
    amp__graph_box_text(b, rank, part, sizeof part);
    return amp__fail(AMP_ERROR_UNSUPPORTED,
                     "the graph uses %d distinct parts of this %s's data already (through it or other views of "
                     "the same data), the most one graph may use; this part, %s, would be one more: make "
                     "fewer distinct sections of those data in one graph (a section covering several is one "
                     "part)",
                     AMP__GRAPH_MAX_BOXES, view ? "view" : "array", part);
}

static bool amp__box_same(const amp__box *a, const amp__box *b, int rank)
{
    for (int d = 0; d < rank; ++d)
        if (a->lo[d] != b->lo[d] || a->hi[d] != b->hi[d]) return false;
    return true;
}

amp_status amp__graph_parts_fit(const amp_graph *g, amp__storage *const *s, const amp__box *const *b,
                                const bool *view, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        if (!s[i]) continue;
        int R = s[i]->ext.rank, parts = 0;
        bool known = false;
        for (size_t k = 0; k < g->nuses; ++k)
            if (g->uses[k].s == s[i]) {
                parts++;
                known = known || amp__box_same(&g->uses[k].box, b[i], R);
            }
        if (known) continue;
        /* New to the graph: one more part, once for all of the call's
         * arguments naming it, beside the call's other new parts of s. */
        bool first = true;
        for (size_t j = 0; j < i && first; ++j) first = s[j] != s[i] || !amp__box_same(b[j], b[i], R);
        if (!first) continue;
        for (size_t j = 0; j < i; ++j) {
            if (s[j] != s[i]) continue;
            bool named = false, seen = false;
            for (size_t k = 0; k < g->nuses && !named; ++k)
                named = g->uses[k].s == s[j] && amp__box_same(&g->uses[k].box, b[j], R);
            for (size_t k = 0; k < j && !seen; ++k) seen = s[k] == s[j] && amp__box_same(b[k], b[j], R);
            parts += !named && !seen;
        }
        if (parts >= AMP__GRAPH_MAX_BOXES) return amp__graph_too_many_parts(b[i], R, view[i]);
    }
    return AMP_OK;
}

amp_status amp__graph_bind(amp_graph *g, amp__storage *s, const amp__box *b, const void *handle, amp_array_view *view,
                           bool writes, bool overwrite, void **dptr)
{
    amp_status st = AMP_OK;
    int R = s->ext.rank, boxes = 0;
    amp__graph_use *u = NULL;
    for (size_t i = 0; i < g->nuses && !u; ++i) {
        amp__graph_use *x = &g->uses[i];
        if (x->s != s) continue;
        boxes++;
        if (amp__box_same(&x->box, b, R)) u = x;
    }
    if (!u && boxes >= AMP__GRAPH_MAX_BOXES) return amp__graph_too_many_parts(b, R, view != NULL);
    bool new_storage = true;
    for (size_t i = 0; i < g->nstorages && new_storage; ++i) new_storage = g->storages[i] != s;
    if ((!u && !amp__graph_grow((void **)&g->uses, &g->cap_uses, g->nuses, sizeof *g->uses)) ||
        (new_storage && !amp__graph_grow((void **)&g->storages, &g->cap_storages, g->nstorages, sizeof *g->storages)))
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "graph: out of host memory for its bindings");
    if ((st = amp__graph_pin(g, handle)) != AMP_OK) return st;

    if ((st = amp__storage_lock(s, "recording into a graph")) != AMP_OK) return st;
    /* Device memory on the graph's accelerator, where it stays while the
     * graph exists (pinned below); nothing is copied or ordered. */
    st = amp__storage_place(s, g->q);
    if (st == AMP_OK) {
        *dptr = s->dptr;
        if (new_storage) {
            s->graphs++;
            s->recordings++;
        }
    }
    amp__lock_release(&s->lock);
    if (st != AMP_OK) return st;
    if (new_storage) g->storages[g->nstorages++] = s;
    if (u) {
        if (((writes && !u->writes) || (view && !u->view)) && g->nundo < AMP__SIG_MAX_PARAMS) {
            g->undo[g->nundo].i = (size_t)(u - g->uses);
            g->undo[g->nundo].view = u->view;
            g->undo[g->nundo++].writes = u->writes;
        }
        u->writes = u->writes || writes;
        if (view && !u->view) u->view = view;
    } else {
        g->uses[g->nuses++] = (amp__graph_use){s, *b, view, writes, overwrite};
    }
    return AMP_OK;
}

amp__graph_mark amp__graph_command(amp_graph *g)
{
    g->nundo = 0;
    return (amp__graph_mark){g->nuses, g->nstorages, g->npins};
}

void amp__graph_undo(amp_graph *g, const amp__graph_mark *m)
{
    while (g->nundo > 0) {
        --g->nundo;
        amp__graph_use *u = &g->uses[g->undo[g->nundo].i];
        u->view = g->undo[g->nundo].view;
        u->writes = g->undo[g->nundo].writes;
    }
    g->nuses = m->nuses;
    while (g->nstorages > m->nstorages) {
        amp__unbind_storage(g->storages[--g->nstorages], 1, 1);
    }
    while (g->npins > m->npins) amp__pin_drop(g->pins[--g->npins]);
}

amp_status amp__graph_hold(amp_graph *g, void (*release)(void *arg), void *arg)
{
    if (!amp__graph_grow((void **)&g->holds, &g->cap_holds, g->nholds, sizeof *g->holds))
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "graph: out of host memory for what it keeps");
    g->holds[g->nholds++] = (amp__graph_hold_entry){release, arg};
    return AMP_OK;
}

/* A failure of the backend while recording: the recording cannot be kept
 * (a GPU capture may be invalidated by it). */
static amp_status amp__graph_broken(amp_graph *g, amp_status st)
{
    if (st != AMP_OK && g->broken == AMP_OK) {
        g->broken = st;
        snprintf(g->broken_msg, sizeof g->broken_msg, "%s", amp_last_error());
    }
    return st;
}

amp_status amp__graph_break(amp_graph *g, amp_status st) { return amp__graph_broken(g, st); }

amp_status amp__graph_record_launch(amp_graph *g, const amp__kernel *k, const amp__launch *l)
{
    if (!amp__graph_grow((void **)&g->nodes, &g->cap_nodes, g->nnodes, sizeof *g->nodes))
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "graph: out of host memory for its commands");
    amp_status st = amp__graph_pin(g, k);
    if (st != AMP_OK) return st;
    if ((st = amp__graph_broken(g, amp__queue_record_launch(g->q, k->fn, l))) != AMP_OK) return st;
    /* The label: the kernels in order, each once in a row. */
    if (g->label_len + 4 < sizeof g->label) {
        size_t n = strlen(k->name);
        const char *prev = g->label_len ? g->label + g->label_len - n : NULL;
        bool repeat = prev && g->label_len >= n && !strncmp(prev, k->name, n) &&
                      (g->label_len == n || prev[-1] == ' ');
        if (!repeat) {
            int w = snprintf(g->label + g->label_len, sizeof g->label - g->label_len, "%s%s",
                             g->label_len ? ", " : "", k->name);
            g->label_len = w > 0 && (size_t)w < sizeof g->label - g->label_len ? g->label_len + (size_t)w
                                                                             : sizeof g->label - 1;
        }
    }
    amp__replay_node *n = &g->nodes[g->nnodes++];
    *n = (amp__replay_node){.name = k->name, .extent = l->extent, .tiled = l->tiled};
    for (int d = 0; l->tiled && d < 3; ++d) n->tile[d] = k->sig.tile[d];
    g->launches++;
    return AMP_OK;
}

amp_status amp__graph_record_copy(amp_graph *g, const amp__copy *c, uint64_t bytes)
{
    if (!amp__graph_grow((void **)&g->nodes, &g->cap_nodes, g->nnodes, sizeof *g->nodes))
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "graph: out of host memory for its commands");
    amp_status st = amp__graph_broken(g, amp__queue_record_copy(g->q, c));
    if (st != AMP_OK) return st;
    g->nodes[g->nnodes++] = (amp__replay_node){.bytes = c->width_bytes * c->height * c->depth};
    g->driver_copies++;
    if (bytes) {
        g->copies++;
        g->copy_bytes += bytes;
    }
    return AMP_OK;
}

/* Undo what recording (and the graph's life) holds: storages' counts,
 * pins, the view's reference. */
static void amp__graph_release(amp_graph *g, bool recording)
{
    for (size_t i = 0; i < g->nstorages; ++i) amp__unbind_storage(g->storages[i], 1, recording);
    for (size_t i = 0; i < g->npins; ++i) amp__pin_drop(g->pins[i]);
    /* After the pins: what a hold lets go of may be destroyed at once
     * (its replays are over: amp_graph_destroy waited for them). */
    for (size_t i = 0; i < g->nholds; ++i) g->holds[i].release(g->holds[i].arg);
    free(g->holds);
    amp__point_set(&g->last, (amp__point){NULL, 0});
    amp__queue_release(g->q);
    free(g->uses);
    free(g->storages);
    free(g->pins);
    free(g->nodes);
    amp__handle_free(g, AMP__HANDLE_GRAPH);
}

amp_status amp_graph_begin_recording(amp_accelerator_view *q)
{
    amp_status st = AMP_OK;
    AMP__HANDLE_OK(q, AMP__HANDLE_QUEUE);
    if (q->is_default)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                         "amp_graph_begin_recording: %s's default view is the library's too (it queues work there "
                         "itself): record on a view of your own (amp_accelerator_view_create)",
                         q->acc->e.info.device_path);
    if (amp__tls_graph)
        return amp__fail(AMP_ERROR_BUSY,
                         "amp_graph_begin_recording: this thread records a graph on %s already; recordings do not "
                         "nest (end that one first)",
                         amp__tls_graph->q == q ? "this view" : "another view");
    if (!q->be->graph_begin)
        return amp__fail(AMP_ERROR_UNSUPPORTED, "amp_graph_begin_recording: %s cannot record graphs",
                         q->acc->e.info.device_path);
    if (atomic_load(&q->recorder))
        return amp__fail(AMP_ERROR_BUSY,
                         "amp_graph_begin_recording: the view records a graph already (on another thread); recordings "
                         "do not nest");
    /* Before q records (the wait point it makes is an event on q). */
    if ((st = amp__queue_record_cover(q)) != AMP_OK) return st;
    amp_graph *g = amp__handle_new_unpublished(AMP__HANDLE_GRAPH, sizeof *g);
    if (!g) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "graph: out of host memory");
    g->q = q;
    atomic_init(&g->owner, AMP__REC_OWNED);
    g->recording = true;
    amp__lock_init(&g->replay);
    pthread_once(&amp__graph_key_once, amp__graph_key_init);
    amp__handle_publish(g, AMP__HANDLE_GRAPH); /* whole: others may reach it through q->recorder from here */
    amp_graph *none = NULL;
    if (!atomic_compare_exchange_strong(&q->recorder, &none, g)) {
        amp__handle_free(g, AMP__HANDLE_GRAPH);
        return amp__fail(AMP_ERROR_BUSY,
                         "amp_graph_begin_recording: the view records a graph already (on another thread); recordings "
                         "do not nest");
    }
    amp__queue_retain(q);
    if ((st = amp__queue_record_begin(q)) != AMP_OK) {
        amp__lock_acquire(&q->rec_lock); /* another thread may be reading g's owner */
        atomic_store(&q->recorder, NULL);
        amp__lock_release(&q->rec_lock);
        amp__queue_release(q);
        amp__handle_free(g, AMP__HANDLE_GRAPH);
        return st;
    }
    amp__graph_set_here(g);
    return AMP_OK;
}

static int amp__storage_order(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (amp__storage *const *)a, y = (uintptr_t) * (amp__storage *const *)b;
    return x < y ? -1 : x > y;
}

/* Who records on q, in *g, claiming the recording when its thread exited
 * (under q->rec_lock: once, whoever asks first): AMP__REC_ORPHANED means
 * this caller now holds the claim, and *g stays alive and in q->recorder
 * until it finishes it; -1: q records nothing. */
static int amp__graph_claim_orphan(amp_accelerator_view *q, amp_graph **g)
{
    amp__lock_acquire(&q->rec_lock);
    int owner = amp__graph_owner_locked(q, g);
    if (owner == AMP__REC_ORPHANED) atomic_store_explicit(&(*g)->owner, AMP__REC_CLAIMED, memory_order_release);
    amp__lock_release(&q->rec_lock);
    return owner;
}

/* Take q's recording, in *g, to end it: this thread's, or one whose thread
 * exited, claimed under q->rec_lock (once: two threads ending it at once
 * get one graph; once claimed, *g stays alive and in q->recorder until
 * this thread finishes it). AMP_OK with *g NULL: q records nothing.
 * AMP_ERROR_BUSY: a live thread's recording, or one claimed already. */
static amp_status amp__graph_claim(amp_accelerator_view *q, amp_graph **g, const char *fn)
{
    *g = atomic_load_explicit(&q->recorder, memory_order_acquire);
    if (*g && amp__tls_graph == *g) return AMP_OK;
    int owner = amp__graph_claim_orphan(q, g);
    if (owner < 0 || owner == AMP__REC_ORPHANED) return AMP_OK;
    *g = NULL;
    if (owner == AMP__REC_CLAIMED)
        return amp__fail(AMP_ERROR_BUSY, "%s: another thread is ending the view's recording (its own thread exited)",
                         fn);
    return amp__graph_busy(q, owner, fn);
}

/* End q's recording g, claimed by this thread: the graph in *out, or
 * (out NULL) thrown away. Recording stops however this ends. */
static amp_status amp__graph_finish(amp_accelerator_view *q, amp_graph *g, amp_graph **out)
{
    bool keep = out && g->broken == AMP_OK && g->launches + g->driver_copies > 0;
    amp_status st = amp__queue_record_end(q, keep, &g->exec);
    g->recording = false;
    if (st == AMP_OK && g->broken != AMP_OK && out)
        st = amp__fail(g->broken, "amp_graph_end_recording: a command of the recording failed, so it cannot be "
                       "replayed: %s", g->broken_msg);
    /* Counted before q records no more: amp_accelerator_view_destroy
     * that finds q not recording then finds the graph (lib/core/view.c). */
    if (st == AMP_OK && out) atomic_fetch_add(&q->graphs, 1);
    amp__lock_acquire(&q->rec_lock); /* no other thread reads g from here on */
    atomic_store(&q->recorder, NULL);
    amp__lock_release(&q->rec_lock);
    if (amp__tls_graph == g) amp__graph_set_here(NULL);
    for (size_t i = 0; i < g->nstorages; ++i) amp__unbind_storage(g->storages[i], 0, 1);
    if (st != AMP_OK || !out) {
        amp__queue_graph_free(q, g->exec);
        amp__graph_release(g, false);
        return st;
    }
    if (g->nstorages) qsort(g->storages, g->nstorages, sizeof *g->storages, amp__storage_order); /* NULL when none */
    *out = g;
    return AMP_OK;
}

amp_status amp_graph_end_recording(amp_accelerator_view *q, amp_graph **out)
{
    if (out) *out = NULL;
    AMP__HANDLE_OK(q, AMP__HANDLE_QUEUE);
    amp_graph *g = NULL;
    amp_status st = amp__graph_claim(q, &g, "amp_graph_end_recording");
    if (st != AMP_OK) return st;
    if (!g)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_graph_end_recording: the view is not recording a graph%s",
                         out ? "" : " (and out is NULL)");
    /* Without somewhere to put the graph, the recording still stops (the
     * header's promise): it is thrown away. */
    if ((st = amp__graph_finish(q, g, out)) != AMP_OK || out) return st;
    return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                     "amp_graph_end_recording: out is NULL; the recording stopped and what it recorded was discarded");
}

amp_status amp__graph_discard_orphan(amp_accelerator_view *q)
{
    amp_graph *g = NULL;
    /* A live thread's, this thread's, or being ended: the caller refuses. */
    if (amp__graph_claim_orphan(q, &g) != AMP__REC_ORPHANED) return AMP_OK;
    return amp__graph_finish(q, g, NULL);
}

/* ------------------------------------------------------------- replay */

/* A graph another thread of the parent was replaying when this process
 * forked: its replay lock stays held in the child, and what the replay
 * changed may be half-changed. */
static amp_status amp__graph_forked(const char *fn)
{
    return amp__fail(AMP_ERROR_DEVICE,
                     "%s: the graph was being replayed by another thread when this process was forked; that replay "
                     "stays the parent's, and in this process the graph can neither run nor be destroyed (it is "
                     "kept)", fn);
}

/* One replay of g on q (locks taken here); *done the point after it,
 * timing (may be NULL) gets timed events around it. */
static amp_status amp__graph_replay(amp_accelerator_view *q, amp_graph *g, bool async, amp__point *done, void **timing,
                                    const char *fn)
{
    amp_status st = AMP_OK;
    size_t nlocked = 0;
    *done = (amp__point){NULL, 0};
    if ((st = amp__handle_check(g, AMP__HANDLE_GRAPH, fn, "g")) != AMP_OK) return st;
    if (q && (st = amp__handle_check(q, AMP__HANDLE_QUEUE, fn, "q")) != AMP_OK) return st;
    if (g->recording) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: the graph is still being recorded", fn);
    if (!q) q = g->q;
    if (q != g->q)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                         "%s: the graph was recorded on another accelerator view (%p, of %s) than the one it is "
                         "launched on (%p, of %s); a graph replays on its own view only",
                         fn, (void *)g->q, g->q->acc->e.info.device_path, (void *)q, q->acc->e.info.device_path);
    if ((st = amp__queue_refuse_recording(q, fn)) != AMP_OK) return st;
    if (!amp__lock_acquire_or_forked(&g->replay)) return amp__graph_forked(fn);
    for (; nlocked < g->nstorages; ++nlocked)
        if ((st = amp__storage_lock(g->storages[nlocked], fn)) != AMP_OK) goto out;
    /* A graph that recorded no command (each failed, or queued none: a
     * copy of no elements) runs nothing: its data are neither prepared
     * nor marked, which with no point after it would drop their last use. */
    for (size_t i = 0; g->exec && i < g->nuses; ++i) {
        amp__graph_use *u = &g->uses[i];
        void *dptr = u->s->dptr;
        bool discard = u->overwrite || (u->view && amp__view_discards(u->view));
        if (!amp__storage_ready(u->s, q, &u->box) &&
            (st = amp__storage_prepare(u->s, q, &u->box, discard, &dptr)) != AMP_OK)
            goto out;
    }
    amp__replay rp = {g->exec,         g->label_len ? g->label : "(copies)",
                      g->nodes,        g->launches,
                      g->driver_copies, g->copies,
                      g->copy_bytes};
    if (timing && g->exec && (st = amp__queue_timed_event(q, &timing[0])) != AMP_OK) goto out;
    /* Counted once handed over, whatever comes of it (hipamp_graph.h,
     * amp_graph_info.replays): a failure may come from a replay that ran
     * part-way or from one that never ran, and neither is known here. */
    atomic_fetch_add_explicit(&g->replays, 1, memory_order_relaxed);
    amp_status ran = amp__queue_replay(q, &rp, async, done);
    if (ran != AMP_OK) {
        if (timing) {
            amp__queue_event_release(q, timing[0]);
            timing[0] = NULL;
        }
        /* Some of it may have run: its writes are marked as a launch's
         * are after a failure (lib/core/launch.c), after all q holds. */
        if (g->exec) *done = (amp__point){q, AMP__SEQ_TAIL};
    }
    for (size_t i = 0; g->exec && i < g->nuses; ++i) {
        amp__graph_use *u = &g->uses[i];
        amp__storage_after_replay(u->s, *done, &u->box, u->writes);
        if (u->view) u->view->discard = false;
    }
    if (ran != AMP_OK) {
        st = ran;
        if (g->exec) amp__point_set(&g->last, *done);
        *done = (amp__point){NULL, 0};
        goto out;
    }
    if (done->q) amp__point_set(&g->last, *done);
    /* Recorded above, and the graph's last point after the replay
     * (amp_graph_destroy waits for it), before the closing event. */
    if (timing && g->exec) st = amp__queue_close_timing(q, timing, fn, "replay", NULL);
out:
    while (nlocked-- > 0) amp__lock_release(&g->storages[nlocked]->lock);
    amp__lock_release(&g->replay);
    return st;
}

amp_status amp_graph_launch(amp_accelerator_view *q, amp_graph *g)
{
    amp__point done;
    return amp__graph_replay(q, g, false, &done, NULL, __func__);
}

amp_status amp_graph_launch_async(amp_accelerator_view *q, amp_graph *g, amp_future **out)
{
    AMP__NOT_NULL(out);
    *out = NULL;
    amp_future *f = NULL;
    amp_status st = amp__future_new(&f);
    if (st != AMP_OK) return st;
    amp__point done;
    void *timing[2] = {NULL, NULL};
    if ((st = amp__graph_replay(q, g, true, &done, timing, __func__)) != AMP_OK) {
        amp_future_destroy(f);
        return st;
    }
    amp__future_complete_at(f, done, timing[0], timing[1]);
    *out = f;
    return AMP_OK;
}

amp_status amp_graph_get_info(amp_graph *g, amp_graph_info *out)
{
    AMP__CLEAR_OUT(out);
    AMP__NOT_NULL(out);
    AMP__HANDLE_OK(g, AMP__HANDLE_GRAPH);
    out->launches = g->launches;
    out->copies = g->copies;
    out->data = g->nstorages;
    out->replays = atomic_load_explicit(&g->replays, memory_order_relaxed);
    const char *impl = !g->exec                           ? "empty"
                       : g->q->acc->e.info.is_emulated    ? "cpu replay list"
                       : !strncmp(g->q->acc->e.info.device_path, "cuda", 4) ? "cuda graph"
                                                                            : "hip graph";
    snprintf(out->implementation, sizeof out->implementation, "%s", impl);
    return AMP_OK;
}

amp_status amp_graph_destroy(amp_graph *g)
{
    if (!g) return AMP_OK;
    AMP__HANDLE_OK(g, AMP__HANDLE_GRAPH);
    if (g->recording)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                         "amp_graph_destroy: the graph is still being recorded (amp_graph_end_recording first)");
    /* Its replays must be done before the backend frees what they run
     * (on the CPU accelerator, q's thread runs its replay list): waited for
     * while the handle is still the caller's, so that a wait that cannot
     * be made leaves g as it was, to be destroyed again. A replay that
     * failed reported it already (its launch's or its future's status,
     * and the view's next wait): what matters here is that nothing of it
     * still runs. */
    if (!amp__lock_acquire_or_forked(&g->replay)) return amp__graph_forked("amp_graph_destroy");
    amp__point last = g->last;
    amp__queue_retain(last.q);
    amp__lock_release(&g->replay);
    bool over = true;
    amp_status st = amp__point_wait_over(last, &over);
    amp__queue_release(last.q);
    if (!over)
        return amp__fail(st, "amp_graph_destroy: could not wait for the graph's last replay, which may still run, "
                         "so the graph was kept (destroy it again): %s", amp_last_error());
    if ((st = amp__handle_end(g, AMP__HANDLE_GRAPH, __func__, "g")) != AMP_OK) return st;
    amp__queue_graph_free(g->q, g->exec);
    atomic_fetch_sub(&g->q->graphs, 1);
    amp__graph_release(g, false);
    return AMP_OK;
}
