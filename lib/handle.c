/* handle.c — the life of the handles a user holds as pointers (views,
 * arrays, queues, futures, programs): type-stable shells with a tag that
 * every entry point checks, so that a use after destroy or a second destroy
 * is reported ("destroyed") instead of touching freed memory; and, with
 * AMP_DEBUG=1, a registry of every handle made that makes the check exact.
 *
 * Shells come from 64 KiB slabs of one kind and are never handed back to
 * malloc: a stale pointer always reads a tag of its own kind's memory. A
 * destroyed shell is reused by the next handle of its kind (so a stale
 * pointer may then reach that handle: only AMP_DEBUG=1 catches it). When
 * every shell of a slab is free and another empty slab is kept ready, the
 * slab's pages after its first are given back to the system
 * (MADV_DONTNEED): they read as zero afterwards, which is no live tag. With
 * AMP_DEBUG=1 shells are never reused (a slab whose shells are all retired
 * gives its pages back the same way) and the registry answers every check
 * without dereferencing the pointer. Lock order: a kind's pool lock, then
 * the registry lock (both leaves). */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define AMP__SLAB_BYTES 65536u
#define AMP__SLAB_PAGE 4096u
#define AMP__SLAB_SHELLS_MAX 1024u /* bits in a slab's free map */

typedef struct amp__slab {
    struct amp__slab *next, *prev; /* the pool's slabs with a free shell */
    size_t size;                   /* bytes per shell (a multiple of 64) */
    uint32_t nshells, nlive, nretired;
    bool listed;                   /* on the pool's list */
    bool released;                 /* pages after the first given back */
    uint64_t free_map[AMP__SLAB_SHELLS_MAX / 64]; /* 1: free shell */
} amp__slab;

/* Shells start on the first cache line after the header. */
#define AMP__SLAB_HEADER ((sizeof(amp__slab) + 63) / 64 * 64)

typedef struct amp__pool {
    pthread_mutex_t mu;     /* leaf; guards everything below and the slabs' headers */
    amp__slab *avail;       /* slabs with a free shell: resident ones first */
    size_t empty_resident;  /* slabs with no live shell whose pages are kept */
} amp__pool;

static amp__pool amp__pools[AMP__HANDLE_KINDS]; /* locks made by amp__handles_init */

static const char *const amp__kind_names[AMP__HANDLE_KINDS] = {
    [AMP__HANDLE_VIEW] = "amp_array_view",        [AMP__HANDLE_ARRAY] = "amp_array",
    [AMP__HANDLE_QUEUE] = "amp_accelerator_view", [AMP__HANDLE_FUTURE] = "amp_future",
    [AMP__HANDLE_PROGRAM] = "amp_program",
};

atomic_bool amp__handles_exact;

/* ------------------------------------------------------------ registry
 * AMP_DEBUG=1 only: every shell ever handed out, live or destroyed (shells
 * are not reused then, so an address names one handle for good). Open
 * addressing; entries are never removed. */

enum { AMP__REG_EMPTY = 0, AMP__REG_LIVE = 0x10, AMP__REG_DEAD = 0x20 };

typedef struct amp__reg_entry {
    uintptr_t addr;
    uint8_t state; /* AMP__REG_LIVE or AMP__REG_DEAD, | kind */
} amp__reg_entry;

static pthread_mutex_t amp__reg_mu = PTHREAD_MUTEX_INITIALIZER;
static amp__reg_entry *amp__reg;
static size_t amp__reg_cap, amp__reg_n;

static size_t amp__reg_slot(const amp__reg_entry *t, size_t cap, uintptr_t addr)
{
    size_t i = (size_t)((addr >> 6) * 0x9E3779B97F4A7C15ull) & (cap - 1);
    while (t[i].addr && t[i].addr != addr) i = (i + 1) & (cap - 1);
    return i;
}

/* Record addr's state (registry lock held). false: no memory to grow. */
static bool amp__reg_put(uintptr_t addr, uint8_t state)
{
    if (2 * (amp__reg_n + 1) > amp__reg_cap) {
        size_t cap = amp__reg_cap ? 2 * amp__reg_cap : 1024;
        amp__reg_entry *t = calloc(cap, sizeof *t);
        if (!t) return false;
        for (size_t i = 0; i < amp__reg_cap; ++i)
            if (amp__reg[i].addr) t[amp__reg_slot(t, cap, amp__reg[i].addr)] = amp__reg[i];
        free(amp__reg);
        amp__reg = t;
        amp__reg_cap = cap;
    }
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

/* ---------------------------------------------------------------- pools */

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

static void amp__slab_unlist(amp__pool *p, amp__slab *s)
{
    if (!s->listed) return;
    if (s->prev) s->prev->next = s->next;
    else p->avail = s->next;
    if (s->next) s->next->prev = s->prev;
    s->next = s->prev = NULL;
    s->listed = false;
}

/* Resident slabs go first (a shell from them costs no page fault). */
static void amp__slab_list(amp__pool *p, amp__slab *s)
{
    if (s->listed) return;
    s->prev = NULL;
    if (!s->released || !p->avail) {
        s->next = p->avail;
        if (p->avail) p->avail->prev = s;
        p->avail = s;
    } else {
        amp__slab *t = p->avail;
        while (t->next) t = t->next;
        t->next = s;
        s->prev = t;
        s->next = NULL;
    }
    s->listed = true;
}

/* Give the slab's pages after the first back to the system. */
static void amp__slab_release(amp__slab *s)
{
    if (s->released) return;
    (void)madvise((char *)s + AMP__SLAB_PAGE, AMP__SLAB_BYTES - AMP__SLAB_PAGE, MADV_DONTNEED);
    s->released = true;
}

static amp__slab *amp__slab_new(size_t size)
{
    amp__slab *s = aligned_alloc(AMP__SLAB_BYTES, AMP__SLAB_BYTES);
    if (!s) return NULL;
    memset(s, 0, AMP__SLAB_HEADER);
    s->size = size;
    size_t n = (AMP__SLAB_BYTES - AMP__SLAB_HEADER) / size;
    s->nshells = (uint32_t)(n < AMP__SLAB_SHELLS_MAX ? n : AMP__SLAB_SHELLS_MAX);
    for (uint32_t i = 0; i < s->nshells; ++i) s->free_map[i / 64] |= 1ull << (i % 64);
    return s;
}

static char *amp__slab_shell(amp__slab *s, uint32_t i) { return (char *)s + AMP__SLAB_HEADER + (size_t)i * s->size; }

void *amp__handle_new(amp__handle_kind kind, size_t size)
{
    pthread_once(&amp__handles_once, amp__handles_init);
    bool exact = atomic_load_explicit(&amp__handles_exact, memory_order_relaxed);
    amp__pool *p = &amp__pools[kind];
    size = (size + 63) / 64 * 64;
    char *shell = NULL;
    pthread_mutex_lock(&p->mu);
    amp__slab *s = p->avail;
    if (!s) {
        if (!(s = amp__slab_new(size))) goto out;
        amp__slab_list(p, s);
    }
    uint32_t i = 0;
    for (uint32_t w = 0; w < AMP__SLAB_SHELLS_MAX / 64; ++w)
        if (s->free_map[w]) {
            i = w * 64 + (uint32_t)__builtin_ctzll(s->free_map[w]);
            break;
        }
    if (s->nlive == 0 && !s->released && s->nretired == 0 && p->empty_resident) p->empty_resident--;
    s->free_map[i / 64] &= ~(1ull << (i % 64));
    s->nlive++;
    s->released = false; /* the pages fault back in as they are touched */
    if (s->nlive + s->nretired == s->nshells) amp__slab_unlist(p, s);
    shell = amp__slab_shell(s, i);
    if (exact) {
        pthread_mutex_lock(&amp__reg_mu);
        bool ok = amp__reg_put((uintptr_t)shell, AMP__REG_LIVE | kind);
        pthread_mutex_unlock(&amp__reg_mu);
        if (!ok) {
            /* Unregistered, it would fail every check: retire it unused. */
            s->nlive--;
            s->nretired++;
            shell = NULL;
        }
    }
out:
    pthread_mutex_unlock(&p->mu);
    if (!shell) return NULL;
    memset(shell, 0, size);
    atomic_store_explicit(&((amp__handle *)shell)->tag, AMP__HANDLE_LIVE(kind), memory_order_release);
    return shell;
}

void amp__handle_free(void *shell, amp__handle_kind kind)
{
    if (!shell) return;
    amp__pool *p = &amp__pools[kind];
    amp__slab *s = (amp__slab *)((uintptr_t)shell & ~(uintptr_t)(AMP__SLAB_BYTES - 1));
    uint32_t i = (uint32_t)(((char *)shell - (char *)s - AMP__SLAB_HEADER) / s->size);
    /* Not live, whatever a stale reader sees from here on. */
    atomic_store_explicit(&((amp__handle *)shell)->tag, AMP__HANDLE_DEAD(kind), memory_order_release);
    pthread_mutex_lock(&p->mu);
    s->nlive--;
    if (atomic_load_explicit(&amp__handles_exact, memory_order_relaxed)) {
        /* Never reused: the registry keeps naming it destroyed (a shell
         * freed without amp__handle_end, on a failed create, too). */
        pthread_mutex_lock(&amp__reg_mu);
        (void)amp__reg_put((uintptr_t)shell, AMP__REG_DEAD | kind); /* an existing entry: no growth */
        pthread_mutex_unlock(&amp__reg_mu);
        s->nretired++;
        if (s->nretired == s->nshells) amp__slab_release(s);
    } else {
        s->free_map[i / 64] |= 1ull << (i % 64);
        if (s->nlive == 0) {
            /* Keep one empty slab's pages for the next handles (a loop that
             * makes and destroys one handle must not fault pages in each
             * time); give the others' back. */
            if (p->empty_resident) amp__slab_release(s);
            else p->empty_resident++;
        }
        amp__slab_unlist(p, s); /* re-listed by residency */
        amp__slab_list(p, s);
    }
    pthread_mutex_unlock(&p->mu);
}

/* -------------------------------------------------------------- checks */

static amp_status amp__handle_report(const void *h, amp__handle_kind kind, const char *fn, const char *what,
                                     uint32_t tag, bool known)
{
    const char *want = amp__kind_names[kind];
    if (!h) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, what);
    for (int k = 0; known && k < AMP__HANDLE_KINDS; ++k) {
        if (tag == AMP__HANDLE_LIVE(k))
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %s (%p) is an %s, not an %s", fn, what, h,
                             amp__kind_names[k], want);
        if (tag == AMP__HANDLE_DEAD(k))
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %s (%p) is a destroyed %s (a stale handle)%s%s", fn,
                             what, h, amp__kind_names[k], k == (int)kind ? "" : "; wanted an ",
                             k == (int)kind ? "" : want);
    }
    if (known && tag == 0)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %s (%p) is a destroyed %s (a stale handle)", fn, what, h,
                         want);
    return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %s (%p) is not a live %s: destroyed (a stale handle), or never "
                     "one", fn, what, h, want);
}

amp_status amp__handle_check_slow(const void *h, amp__handle_kind kind, const char *fn, const char *what)
{
    if (!h) return amp__handle_report(h, kind, fn, what, 0, false);
    pthread_once(&amp__handles_once, amp__handles_init);
    if (!atomic_load_explicit(&amp__handles_exact, memory_order_relaxed)) {
        uint32_t tag = atomic_load_explicit(&((const amp__handle *)h)->tag, memory_order_acquire);
        if (tag == AMP__HANDLE_LIVE(kind)) return AMP_OK;
        return amp__handle_report(h, kind, fn, what, tag, true);
    }
    pthread_mutex_lock(&amp__reg_mu);
    uint8_t state = amp__reg_get((uintptr_t)h);
    pthread_mutex_unlock(&amp__reg_mu);
    if (state == (AMP__REG_LIVE | kind)) return AMP_OK;
    if (state == AMP__REG_EMPTY)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %s (%p) is no %s this process made (AMP_DEBUG registry)",
                         fn, what, h, amp__kind_names[kind]);
    uint32_t tag = (state & AMP__REG_LIVE ? AMP__HANDLE_LIVE(0) : AMP__HANDLE_DEAD(0)) + (state & 0x0f);
    return amp__handle_report(h, kind, fn, what, tag, true);
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
        if (mine) (void)amp__reg_put((uintptr_t)h, AMP__REG_DEAD | kind); /* an existing entry: no growth */
        pthread_mutex_unlock(&amp__reg_mu);
        if (!mine) return amp__handle_check_slow(h, kind, fn, what);
        atomic_store_explicit(&((amp__handle *)h)->tag, AMP__HANDLE_DEAD(kind), memory_order_release);
        return AMP_OK;
    }
    if (!atomic_compare_exchange_strong_explicit(&((amp__handle *)h)->tag, &live, AMP__HANDLE_DEAD(kind),
                                                 memory_order_acq_rel, memory_order_acquire))
        return amp__handle_report(h, kind, fn, what, live, true);
    return AMP_OK;
}
