/* slab.c — pools of fixed-size objects that give memory back: objects come
 * from 64 KiB slabs (allocated 16 at a time, aligned to their size, so an
 * object finds its slab by masking its address), freed objects are reused by
 * the pool's next allocation and never handed to malloc, and a slab whose
 * objects are all free gives its pages after the first back to the system
 * (MADV_DONTNEED: they read as zero afterwards) unless it is the one empty
 * slab the pool keeps ready. Handles (lib/core/handle.c) rely on the memory
 * staying readable; the CPU accelerator's events use it so that a burst of
 * launches leaves no heap behind. */
#include "core.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define AMP__SLAB_BYTES 65536u
#define AMP__SLAB_GROUP 16u  /* slabs per allocation (1 MiB: mmap'ed by malloc, outside its heap) */
#define AMP__SLAB_PAGE 4096u
#define AMP__SLAB_MAX_OBJECTS 1024u

struct amp__slab {
    struct amp__slab *next, *prev; /* the pool's slabs with a free object */
    uint32_t nobjects, nlive, nretired;
    bool listed;                   /* on the pool's list */
    bool released;                 /* pages after the first given back (or never touched) */
    uint64_t free_map[AMP__SLAB_MAX_OBJECTS / 64]; /* 1: free object */
};

/* Objects start on the first cache line after the header. */
#define AMP__SLAB_HEADER ((sizeof(amp__slab) + 63) / 64 * 64)

static void amp__slab_unlist(amp__slab_pool *p, amp__slab *s)
{
    if (!s->listed) return;
    if (s->prev) s->prev->next = s->next;
    else p->avail = s->next;
    if (s->next) s->next->prev = s->prev;
    s->next = s->prev = NULL;
    s->listed = false;
}

/* Resident slabs go first (an object from them costs no page fault). */
static void amp__slab_list(amp__slab_pool *p, amp__slab *s)
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

static void amp__slab_release(amp__slab *s)
{
    if (s->released) return;
    (void)madvise((char *)s + AMP__SLAB_PAGE, AMP__SLAB_BYTES - AMP__SLAB_PAGE, MADV_DONTNEED);
    s->released = true;
}

/* fork() takes every pool's lock first, so that a child never inherits one
 * held by a thread it does not have. */
static pthread_mutex_t amp__pools_mu = PTHREAD_MUTEX_INITIALIZER; /* guards the list; taken before a pool's */
static amp__slab_pool *amp__pools_in_use;
static pthread_once_t amp__pools_once = PTHREAD_ONCE_INIT;

static void amp__pools_prepare(void)
{
    pthread_mutex_lock(&amp__pools_mu);
    for (amp__slab_pool *p = amp__pools_in_use; p; p = p->next_pool) pthread_mutex_lock(&p->mu);
}

static void amp__pools_after(void)
{
    for (amp__slab_pool *p = amp__pools_in_use; p; p = p->next_pool) pthread_mutex_unlock(&p->mu);
    pthread_mutex_unlock(&amp__pools_mu);
}

static void amp__pools_init(void) { pthread_atfork(amp__pools_prepare, amp__pools_after, amp__pools_after); }

/* Put p on the list before its first slab (neither lock held). */
static void amp__pool_note(amp__slab_pool *p)
{
    pthread_once(&amp__pools_once, amp__pools_init);
    pthread_mutex_lock(&amp__pools_mu);
    pthread_mutex_lock(&p->mu);
    if (!p->known) {
        p->known = true;
        p->next_pool = amp__pools_in_use;
        amp__pools_in_use = p;
    }
    pthread_mutex_unlock(&p->mu);
    pthread_mutex_unlock(&amp__pools_mu);
}

/* A slab to take an object from (pool lock held); NULL without memory.
 * Slabs of a new group are set up one at a time, as they are needed, so
 * that pages no object ever used are never touched. */
static amp__slab *amp__slab_take(amp__slab_pool *p)
{
    if (p->avail) return p->avail;
    if (!p->nfresh) {
        if (!(p->fresh = aligned_alloc(AMP__SLAB_BYTES, (size_t)AMP__SLAB_GROUP * AMP__SLAB_BYTES))) return NULL;
        p->nfresh = AMP__SLAB_GROUP;
    }
    amp__slab *s = p->fresh;
    p->fresh = (char *)p->fresh + AMP__SLAB_BYTES;
    p->nfresh--;
    memset(s, 0, AMP__SLAB_HEADER);
    s->released = true; /* no page past the header touched yet */
    size_t n = (AMP__SLAB_BYTES - AMP__SLAB_HEADER) / p->size;
    s->nobjects = (uint32_t)(n < AMP__SLAB_MAX_OBJECTS ? n : AMP__SLAB_MAX_OBJECTS);
    for (uint32_t i = 0; i < s->nobjects; ++i) s->free_map[i / 64] |= 1ull << (i % 64);
    amp__slab_list(p, s);
    return s;
}

void *amp__slab_alloc(amp__slab_pool *p)
{
    char *obj = NULL;
    pthread_mutex_lock(&p->mu);
    if (!p->known) {
        pthread_mutex_unlock(&p->mu);
        amp__pool_note(p);
        pthread_mutex_lock(&p->mu);
    }
    amp__slab *s = amp__slab_take(p);
    if (s) {
        uint32_t i = 0;
        for (uint32_t w = 0; w < AMP__SLAB_MAX_OBJECTS / 64; ++w)
            if (s->free_map[w]) {
                i = w * 64 + (uint32_t)__builtin_ctzll(s->free_map[w]);
                break;
            }
        if (s->nlive == 0 && !s->released && s->nretired == 0 && p->empty_resident) p->empty_resident--;
        s->free_map[i / 64] &= ~(1ull << (i % 64));
        s->nlive++;
        s->released = false; /* its pages fault back in as they are touched */
        if (s->nlive + s->nretired == s->nobjects) amp__slab_unlist(p, s);
        obj = (char *)s + AMP__SLAB_HEADER + (size_t)i * p->size;
    }
    pthread_mutex_unlock(&p->mu);
    return obj;
}

static amp__slab *amp__slab_of(const void *obj)
{
    return (amp__slab *)((uintptr_t)obj & ~(uintptr_t)(AMP__SLAB_BYTES - 1));
}

void amp__slab_free(amp__slab_pool *p, void *obj)
{
    if (!obj) return;
    amp__slab *s = amp__slab_of(obj);
    pthread_mutex_lock(&p->mu);
    uint32_t i = (uint32_t)(((char *)obj - (char *)s - AMP__SLAB_HEADER) / p->size);
    s->nlive--;
    s->free_map[i / 64] |= 1ull << (i % 64);
    if (s->nlive == 0 && s->nretired == 0) {
        /* Keep one empty slab's pages for the next objects (a loop that
         * makes and frees one object must not fault pages in each time);
         * give the others' back. */
        if (p->empty_resident) amp__slab_release(s);
        else p->empty_resident++;
    }
    amp__slab_unlist(p, s); /* listed again where its residency puts it */
    amp__slab_list(p, s);
    pthread_mutex_unlock(&p->mu);
}

void amp__slab_retire(amp__slab_pool *p, void *obj)
{
    if (!obj) return;
    amp__slab *s = amp__slab_of(obj);
    pthread_mutex_lock(&p->mu);
    s->nlive--;
    s->nretired++;
    if (s->nretired == s->nobjects) amp__slab_release(s);
    pthread_mutex_unlock(&p->mu);
}
