/* handle.c — the life of the handles a user holds as pointers (views,
 * arrays, queues, futures, programs, graphs, user reductions): a tag that
 * every entry point checks, so that a use after destroy or a second
 * destroy is reported ("destroyed") instead of touching freed memory;
 * and, with AMP_DEBUG=1, a registry of every handle made that makes the
 * check exact.
 *
 * Shells come from a slab pool per kind (lib/base/slab.c) and are never handed
 * back to malloc: a stale pointer always reads a tag of its own kind's
 * memory (or zero, where an empty slab gave its pages back: no live tag).
 * A destroyed shell is reused by the next handle of its kind, so a stale
 * pointer may then reach that handle; AMP_DEBUG=1 answers every check from
 * the registry, without reading the pointer, and reuses a shell only after
 * AMP__QUARANTINE more handles of its kind were destroyed (its memory, and
 * the registry's, stay bounded however many handles a program makes). Lock
 * order: a kind's pool lock and the registry lock are leaves, never held
 * together. */
#include "internal.h"
#include "base/fork_guard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sizes are set by the first handle of each kind (the structures are
 * private to their files). */
static amp__slab_pool amp__pools[AMP__HANDLE_KINDS];

static const char *const amp__kind_names[AMP__HANDLE_KINDS] = {
    [AMP__HANDLE_VIEW] = "amp_array_view",        [AMP__HANDLE_ARRAY] = "amp_array",
    [AMP__HANDLE_QUEUE] = "amp_accelerator_view", [AMP__HANDLE_FUTURE] = "amp_future",
    [AMP__HANDLE_PROGRAM] = "amp_program",        [AMP__HANDLE_GRAPH] = "amp_graph",
    [AMP__HANDLE_REDUCTION] = "amp_reduction",
};

atomic_bool amp__handles_exact;

/* ------------------------------------------------------------ registry
 * AMP_DEBUG=1 only: every shell ever handed out, live or destroyed (a
 * shell is reused only after its quarantine, below, so an address names
 * one handle until AMP__QUARANTINE more of its kind were destroyed). Open
 * addressing; entries are never removed: a reused shell's entry is live
 * again, so the table holds at most as many entries as the pools ever
 * had shells. */

enum { AMP__REG_EMPTY = 0, AMP__REG_LIVE = 0x10, AMP__REG_DEAD = 0x20 };

typedef struct amp__reg_entry {
    uintptr_t addr;
    uint8_t state; /* AMP__REG_LIVE or AMP__REG_DEAD, | kind */
} amp__reg_entry;

/* A leaf, taken across fork() (base/fork_guard.h). */
AMP__FORK_GUARDED_MUTEX(amp__reg_mu)
static amp__reg_entry *amp__reg;
static size_t amp__reg_cap, amp__reg_n;

static size_t amp__reg_slot(const amp__reg_entry *t, size_t cap, uintptr_t addr)
{
    size_t i = (size_t)((addr >> 6) * 0x9E3779B97F4A7C15ull) & (cap - 1);
    while (t[i].addr && t[i].addr != addr) i = (i + 1) & (cap - 1);
    return i;
}

/* Record addr's state (registry lock held). false: no memory to grow (an
 * existing entry never needs to). */
static bool amp__reg_put(uintptr_t addr, uint8_t state)
{
    if (2 * (amp__reg_n + 1) > amp__reg_cap) {
        size_t cap = amp__reg_cap ? 2 * amp__reg_cap : 1024;
        amp__reg_entry *t = calloc(cap, sizeof *t);
        if (!t) {
            if (amp__reg_cap && amp__reg[amp__reg_slot(amp__reg, amp__reg_cap, addr)].addr == addr) goto put;
            return false;
        }
        for (size_t i = 0; i < amp__reg_cap; ++i)
            if (amp__reg[i].addr) t[amp__reg_slot(t, cap, amp__reg[i].addr)] = amp__reg[i];
        free(amp__reg);
        amp__reg = t;
        amp__reg_cap = cap;
    }
put:;
    size_t i = amp__reg_slot(amp__reg, amp__reg_cap, addr);
    if (!amp__reg[i].addr) {
        amp__reg[i].addr = addr;
        amp__reg_n++;
    }
    amp__reg[i].state = state;
    return true;
}

static uint8_t amp__reg_get(uintptr_t addr)
{
    return amp__reg_cap ? amp__reg[amp__reg_slot(amp__reg, amp__reg_cap, addr)].state : AMP__REG_EMPTY;
}

static bool amp__reg_set(const void *h, uint8_t state)
{
    pthread_mutex_lock(&amp__reg_mu);
    bool ok = amp__reg_put((uintptr_t)h, state);
    pthread_mutex_unlock(&amp__reg_mu);
    return ok;
}

/* ---------------------------------------------------------- quarantine
 * AMP_DEBUG=1 only: a destroyed shell waits in its kind's ring, named
 * destroyed by the registry, until AMP__QUARANTINE more of its kind were
 * destroyed after it; then it goes back to its pool. Never reusing a
 * shell at all (as before) kept every handle ever made: a future per
 * asynchronous launch grew the heap by about 100 bytes a launch, its shell
 * and its registry entry. The bound is a window: a stale pointer is
 * reported "destroyed" until then, and may reach a new handle after.
 * Under the registry lock; a ring is made at its kind's first destroy. */

enum { AMP__QUARANTINE = 4096 };

typedef struct amp__quarantine {
    void **ring; /* AMP__QUARANTINE shells, oldest at next once full */
    size_t next, n;
} amp__quarantine;

static amp__quarantine amp__quarantines[AMP__HANDLE_KINDS];

/* Put shell in its kind's quarantine (registry lock held). *leaving: the
 * shell that leaves for reuse (the oldest, once the ring is full), or
 * NULL. false: no memory for the ring; shell is not quarantined. */
static bool amp__quarantine_put(amp__handle_kind kind, void *shell, void **leaving)
{
    amp__quarantine *q = &amp__quarantines[kind];
    *leaving = NULL;
    if (!q->ring && !(q->ring = malloc(AMP__QUARANTINE * sizeof *q->ring))) return false;
    if (q->n == AMP__QUARANTINE) *leaving = q->ring[q->next];
    else q->n++;
    q->ring[q->next] = shell;
    q->next = (q->next + 1) % AMP__QUARANTINE;
    return true;
}

/* --------------------------------------------------------------- shells */

static pthread_once_t amp__handles_once = PTHREAD_ONCE_INIT;

static void amp__handles_init(void)
{
    for (int k = 0; k < AMP__HANDLE_KINDS; ++k) pthread_mutex_init(&amp__pools[k].mu, NULL);
    bool exact = false;
#ifdef HIPAMP_DEBUG_CHECKS_DEFAULT
    exact = true;
#endif
    atomic_store(&amp__handles_exact, amp__env_flag("AMP_DEBUG", exact));
}

static void *amp__handle_make(amp__handle_kind kind, size_t size, bool publish);

void *amp__handle_new(amp__handle_kind kind, size_t size) { return amp__handle_make(kind, size, true); }

void *amp__handle_new_unpublished(amp__handle_kind kind, size_t size) { return amp__handle_make(kind, size, false); }

void amp__handle_publish(void *shell, amp__handle_kind kind)
{
    bool exact = atomic_load_explicit(&amp__handles_exact, memory_order_relaxed);
    atomic_store_explicit(&((amp__handle *)shell)->tag, exact ? AMP__HANDLE_LIVE_EXACT(kind) : AMP__HANDLE_LIVE(kind),
                          memory_order_release);
}

static void *amp__handle_make(amp__handle_kind kind, size_t size, bool publish)
{
    pthread_once(&amp__handles_once, amp__handles_init);
    amp__slab_pool *p = &amp__pools[kind];
    size = (size + 63) / 64 * 64;
    pthread_mutex_lock(&p->mu);
    if (!p->size) p->size = size;
    pthread_mutex_unlock(&p->mu);
    char *shell = amp__slab_alloc(p);
    if (!shell) return NULL;
    if (atomic_load_explicit(&amp__handles_exact, memory_order_relaxed) &&
        !amp__reg_set(shell, AMP__REG_LIVE | kind)) {
        /* Unregistered, it would fail every check: retire it unused. */
        amp__slab_retire(p, shell);
        return NULL;
    }
    /* The tag stays dead while the shell is cleared (a stale reader may be
     * looking at it). */
    atomic_store_explicit(&((amp__handle *)shell)->tag, AMP__HANDLE_DEAD(kind), memory_order_release);
    memset((char *)shell + sizeof(amp__handle), 0, size - sizeof(amp__handle));
    if (publish) amp__handle_publish(shell, kind);
    return shell;
}

void amp__handle_free(void *shell, amp__handle_kind kind)
{
    if (!shell) return;
    /* Not live, whatever a stale reader sees from here on. */
    atomic_store_explicit(&((amp__handle *)shell)->tag, AMP__HANDLE_DEAD(kind), memory_order_release);
    if (atomic_load_explicit(&amp__handles_exact, memory_order_relaxed)) {
        /* Quarantined: the registry names it destroyed (a shell freed
         * without amp__handle_end, on a failed create, too) until it is
         * reused; without memory for the ring it is never reused. */
        void *leaving = NULL;
        pthread_mutex_lock(&amp__reg_mu);
        (void)amp__reg_put((uintptr_t)shell, AMP__REG_DEAD | kind);
        bool held = amp__quarantine_put(kind, shell, &leaving);
        pthread_mutex_unlock(&amp__reg_mu);
        if (!held) amp__slab_retire(&amp__pools[kind], shell);
        if (leaving) amp__slab_free(&amp__pools[kind], leaving);
    } else {
        amp__slab_free(&amp__pools[kind], shell);
    }
}

/* -------------------------------------------------------------- checks */

static amp_status amp__handle_report(const void *h, amp__handle_kind kind, const char *fn, const char *what,
                                     uint32_t tag)
{
    const char *want = amp__kind_names[kind];
    for (int k = 0; k < AMP__HANDLE_KINDS; ++k) {
        if (tag == AMP__HANDLE_LIVE(k) || tag == AMP__HANDLE_LIVE_EXACT(k))
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %s (%p) is an %s, not an %s", fn, what, h,
                             amp__kind_names[k], want);
        if (tag == AMP__HANDLE_DEAD(k))
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %s (%p) is a destroyed %s (a stale handle)%s%s", fn,
                             what, h, amp__kind_names[k], k == (int)kind ? "" : "; wanted an ",
                             k == (int)kind ? "" : want);
    }
    if (tag == 0)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %s (%p) is a destroyed %s (a stale handle), or never was "
                         "one", fn, what, h, want);
    return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %s (%p) is not a live %s (destroyed, or never one)", fn, what,
                     h, want);
}

amp_status amp__handle_check_slow(const void *h, amp__handle_kind kind, const char *fn, const char *what)
{
    if (!h) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, what);
    pthread_once(&amp__handles_once, amp__handles_init);
    if (!atomic_load_explicit(&amp__handles_exact, memory_order_relaxed)) {
        uint32_t tag = atomic_load_explicit(&((const amp__handle *)h)->tag, memory_order_acquire);
        if (tag == AMP__HANDLE_LIVE(kind)) return AMP_OK;
        return amp__handle_report(h, kind, fn, what, tag);
    }
    pthread_mutex_lock(&amp__reg_mu);
    uint8_t state = amp__reg_get((uintptr_t)h);
    pthread_mutex_unlock(&amp__reg_mu);
    if (state == (AMP__REG_LIVE | kind)) return AMP_OK;
    if (state == AMP__REG_EMPTY)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %s (%p) is no %s this process made (AMP_DEBUG registry)",
                         fn, what, h, amp__kind_names[kind]);
    uint32_t k = state & 0x0f;
    return amp__handle_report(h, kind, fn, what, state & AMP__REG_LIVE ? AMP__HANDLE_LIVE(k) : AMP__HANDLE_DEAD(k));
}

bool amp__handle_alive(const void *h, amp__handle_kind kind)
{
    if (amp__handle_live(h, kind)) return true;
    if (!h) return false;
    pthread_once(&amp__handles_once, amp__handles_init);
    if (!atomic_load_explicit(&amp__handles_exact, memory_order_relaxed)) return false;
    pthread_mutex_lock(&amp__reg_mu);
    uint8_t state = amp__reg_get((uintptr_t)h);
    pthread_mutex_unlock(&amp__reg_mu);
    return state == (AMP__REG_LIVE | kind);
}

amp_status amp__handle_end(void *h, amp__handle_kind kind, const char *fn, const char *what)
{
    amp_status st = amp__handle_check(h, kind, fn, what);
    if (st != AMP_OK) return st;
    uint32_t live = AMP__HANDLE_LIVE(kind);
    if (atomic_load_explicit(&amp__handles_exact, memory_order_relaxed)) {
        /* The registry decides: one of two racing destroys wins. */
        pthread_mutex_lock(&amp__reg_mu);
        bool mine = amp__reg_get((uintptr_t)h) == (AMP__REG_LIVE | kind);
        if (mine) (void)amp__reg_put((uintptr_t)h, AMP__REG_DEAD | kind);
        pthread_mutex_unlock(&amp__reg_mu);
        if (!mine) return amp__handle_check_slow(h, kind, fn, what);
        atomic_store_explicit(&((amp__handle *)h)->tag, AMP__HANDLE_DEAD(kind), memory_order_release);
        return AMP_OK;
    }
    if (!atomic_compare_exchange_strong_explicit(&((amp__handle *)h)->tag, &live, AMP__HANDLE_DEAD(kind),
                                                 memory_order_acq_rel, memory_order_acquire))
        return amp__handle_report(h, kind, fn, what, live);
    return AMP_OK;
}
