/* trace_buffer.c — the recording buffer: the records the core hands the
 * trace, kept in chunks until a flush takes them, with their names interned
 * and each host thread numbered as a track.
 *
 * Locks: the buffer lock is a leaf. The core's hooks reach it under storage
 * locks; nothing under it takes another lock or calls a backend (events of
 * dropped records are released after it is let go). */
#include "trace_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_mutex_t amp__tlock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    amp__tchunk *head, *tail;
    uint64_t count, dropped, max_events;
    char **strs; /* interned strings, by id; never freed */
    uint32_t nstrs, capstrs;
    uint32_t *slots; /* open addressing over strs, id + 1 (0: empty) */
    uint32_t nslots;
    long *threads; /* OS thread id, by track - 1 */
    uint32_t nthreads, capthreads;
} T;
static _Thread_local uint32_t amp__my_track;

void amp__tbuf_set_limit(uint64_t max_events) { T.max_events = max_events; }

uint64_t amp__tbuf_limit(void) { return T.max_events; }

void amp__timing_release(amp__trace_timing *t)
{
    if (t->t0) t->be->event_release(t->dev, t->t0);
    if (t->t1) t->be->event_release(t->dev, t->t1);
    t->t0 = t->t1 = NULL;
}

/* The id of s (buffer lock held); UINT32_MAX when out of memory. */
static uint32_t amp__intern(const char *s)
{
    uint64_t h = amp__fnv1a(AMP__FNV_SEED, s, strlen(s));
    if (!T.nslots || (T.nstrs + 1) * 2 > T.nslots) {
        /* Grow the table (it is always at most half full). */
        uint32_t ns = T.nslots ? T.nslots * 2 : 256;
        uint32_t *slots = calloc(ns, sizeof *slots);
        if (!slots) return UINT32_MAX;
        for (uint32_t id = 0; id < T.nstrs; ++id) {
            uint64_t g = amp__fnv1a(AMP__FNV_SEED, T.strs[id], strlen(T.strs[id]));
            uint32_t i = (uint32_t)g & (ns - 1);
            while (slots[i]) i = (i + 1) & (ns - 1);
            slots[i] = id + 1;
        }
        free(T.slots);
        T.slots = slots;
        T.nslots = ns;
    }
    uint32_t i = (uint32_t)h & (T.nslots - 1);
    for (; T.slots[i]; i = (i + 1) & (T.nslots - 1))
        if (!strcmp(T.strs[T.slots[i] - 1], s)) return T.slots[i] - 1;
    if (T.nstrs == T.capstrs) {
        uint32_t cap = T.capstrs ? T.capstrs * 2 : 64;
        char **strs = realloc(T.strs, cap * sizeof *strs);
        if (!strs) return UINT32_MAX;
        T.strs = strs;
        T.capstrs = cap;
    }
    char *copy = amp__strdup(s);
    if (!copy) return UINT32_MAX;
    T.strs[T.nstrs] = copy;
    T.slots[i] = ++T.nstrs;
    return T.nstrs - 1;
}

/* The calling thread's track (buffer lock held); 0 when out of memory. */
static uint32_t amp__thread_track(void)
{
    if (amp__my_track) return amp__my_track;
    if (T.nthreads == T.capthreads) {
        uint32_t cap = T.capthreads ? T.capthreads * 2 : 8;
        long *ts = realloc(T.threads, cap * sizeof *ts);
        if (!ts) return 0;
        T.threads = ts;
        T.capthreads = cap;
    }
    T.threads[T.nthreads] = (long)syscall(SYS_gettid);
    amp__my_track = ++T.nthreads;
    return amp__my_track;
}

/* A slot at the end of the buffer, or NULL (full, or no memory: counted
 * as dropped). Buffer lock held. */
static amp__tev *amp__tev_new(void)
{
    if (T.count >= T.max_events) {
        T.dropped++;
        return NULL;
    }
    if (!T.tail || T.tail->n == AMP__TRACE_CHUNK) {
        amp__tchunk *c = malloc(sizeof *c);
        if (!c) {
            T.dropped++;
            return NULL;
        }
        c->next = NULL;
        c->n = 0;
        if (T.tail) T.tail->next = c;
        else T.head = c;
        T.tail = c;
    }
    T.count++;
    return &T.tail->ev[T.tail->n++];
}

void amp__tbuf_put(const amp__trace_rec *r, const char *name, uint64_t end_ns)
{
    pthread_mutex_lock(&amp__tlock);
    amp__tev *e = amp__tev_new();
    if (e) {
        e->r = *r;
        e->r.name = e->r.source = NULL;
        e->r.source_len = 0;
        e->r.end_ns = end_ns;
        e->name = name ? amp__intern(name) : UINT32_MAX;
        e->tid = amp__thread_track();
    }
    pthread_mutex_unlock(&amp__tlock);
    if (!e) {
        amp__trace_timing t = r->timing;
        amp__timing_release(&t);
    }
}

void amp__tbuf_take(amp__tbatch *b)
{
    memset(b, 0, sizeof *b);
    pthread_mutex_lock(&amp__tlock);
    b->chunks = T.head;
    b->count = T.count;
    b->dropped = T.dropped;
    T.head = T.tail = NULL;
    T.count = T.dropped = 0;
    b->ok = (!T.nstrs || (b->strs = malloc(T.nstrs * sizeof *b->strs))) &&
            (!T.nthreads || (b->threads = malloc(T.nthreads * sizeof *b->threads)));
    if (b->ok) {
        if (T.nstrs) memcpy(b->strs, T.strs, T.nstrs * sizeof *b->strs);
        if (T.nthreads) memcpy(b->threads, T.threads, T.nthreads * sizeof *b->threads);
        b->nstrs = T.nstrs;
        b->nthreads = T.nthreads;
    }
    pthread_mutex_unlock(&amp__tlock);
}

void amp__tbatch_free(amp__tbatch *b)
{
    while (b->chunks) {
        amp__tchunk *next = b->chunks->next;
        free(b->chunks);
        b->chunks = next;
    }
    free(b->strs);
    free(b->threads);
    memset(b, 0, sizeof *b);
}

const char *amp__tbatch_str(const amp__tbatch *b, uint32_t id) { return id < b->nstrs ? b->strs[id] : "?"; }
