/* compile_cache.c — the in-memory compile cache: loaded modules by exact
 * build inputs (accelerator, source, options, file name, directory, and
 * what else decides where its headers are found: amp__scan_context), so that
 * building the same source again costs a lookup. A hit compares the inputs
 * byte for byte (the bucket hash only picks where to look) and re-checks
 * the stamps of the headers the module was keyed on, so an edited header is
 * rebuilt in the same process too. */
#include "internal.h"
#include "base/fork_guard.h"

#include <stdlib.h>
#include <string.h>

#define AMP__BUCKETS 256u

/* Guards the buckets and module refs; a leaf (modules are freed after it
 * is released; under it only a header's stamp is read), taken across
 * fork() (base/fork_guard.h). */
AMP__FORK_GUARDED_MUTEX(amp__cache_lock)
static amp__module *amp__buckets[AMP__BUCKETS];
static _Atomic uint64_t amp__hits, amp__misses;

static bool amp__str_eq(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

/* The bucket hash reads the source's length, head and tail only: equality
 * is decided by memcmp, so this need only spread different sources. */
static uint64_t amp__input_hash(const amp_accelerator *acc, const amp__build_input *in)
{
    uint64_t h = amp__fast_hash((uintptr_t)acc, &in->source_len, sizeof in->source_len);
    size_t n = in->source_len, edge = n < 128 ? n : 128;
    h = amp__fast_hash(h, in->source, edge);
    h = amp__fast_hash(h, in->source + n - edge, edge);
    if (in->options) h = amp__fast_hash(h, in->options, strlen(in->options));
    if (in->source_name) h = amp__fast_hash(h, in->source_name, strlen(in->source_name));
    if (in->source_dir) h = amp__fast_hash(h, in->source_dir, strlen(in->source_dir));
    if (in->search) h = amp__fast_hash(h, in->search, strlen(in->search));
    return h;
}

static bool amp__input_equal(const amp__module *m, const amp_accelerator *acc, const amp__build_input *in,
                             uint64_t h)
{
    return m->hash == h && m->acc == acc && m->in.source_len == in->source_len && amp__str_eq(m->in.options, in->options) &&
           amp__str_eq(m->in.source_name, in->source_name) && amp__str_eq(m->in.source_dir, in->source_dir) &&
           amp__str_eq(m->in.search, in->search) && !memcmp(m->in.source, in->source, in->source_len);
}

static bool amp__deps_fresh(const amp__module *m)
{
    for (size_t i = 0; i < m->ndeps; ++i)
        if (!amp__dep_fresh(&m->deps[i])) return false;
    return true;
}

static char *amp__dup_or_null(const char *s, bool *ok)
{
    if (!s) return NULL;
    char *d = amp__strdup(s);
    if (!d) *ok = false;
    return d;
}

amp__module *amp__module_new(amp_accelerator *acc, const amp__build_input *in)
{
    amp__module *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    bool ok = true;
    m->acc = acc;
    m->refs = 1;
    m->in.source_len = in->source_len;
    m->in.source = malloc(in->source_len + 1);
    if (m->in.source) {
        memcpy((char *)m->in.source, in->source, in->source_len);
        ((char *)m->in.source)[in->source_len] = '\0';
    } else {
        ok = false;
    }
    m->in.options = amp__dup_or_null(in->options, &ok);
    m->in.source_name = amp__dup_or_null(in->source_name, &ok);
    m->in.source_dir = amp__dup_or_null(in->source_dir, &ok);
    m->in.search = amp__dup_or_null(in->search, &ok);
    m->hash = amp__input_hash(acc, in);
    if (!ok) {
        amp__module_release(m);
        return NULL;
    }
    return m;
}

static void amp__module_free(amp__module *m)
{
    /* The backend waits for queued launches of the module (backend.h). */
    if (m->mod) m->acc->e.be->module_unload(m->acc->e.dev, m->mod);
    free((char *)m->in.source);
    free((char *)m->in.options);
    free((char *)m->in.source_name);
    free((char *)m->in.source_dir);
    free((char *)m->in.search);
    for (size_t i = 0; i < m->ndeps; ++i) free(m->deps[i].path);
    free(m->deps);
    free(m);
}

void amp__module_retain(amp__module *m)
{
    pthread_mutex_lock(&amp__cache_lock);
    m->refs++;
    pthread_mutex_unlock(&amp__cache_lock);
}

void amp__module_release(amp__module *m)
{
    if (!m) return;
    pthread_mutex_lock(&amp__cache_lock);
    bool last = --m->refs == 0;
    pthread_mutex_unlock(&amp__cache_lock);
    if (last) amp__module_free(m);
}

/* Unlink m from its bucket (cache lock held); drops the cache's reference
 * and returns true when that was the last one. */
static bool amp__unlink_locked(amp__module *m)
{
    amp__module **pp = &amp__buckets[m->hash % AMP__BUCKETS];
    while (*pp && *pp != m) pp = &(*pp)->next;
    if (*pp) *pp = m->next;
    m->in_cache = false;
    return --m->refs == 0;
}

amp__module *amp__mcache_find(amp_accelerator *acc, const amp__build_input *in)
{
    uint64_t h = amp__input_hash(acc, in);
    amp__module *found = NULL, *stale = NULL;
    pthread_mutex_lock(&amp__cache_lock);
    for (amp__module *m = amp__buckets[h % AMP__BUCKETS]; m; m = m->next)
        if (amp__input_equal(m, acc, in, h)) {
            found = m;
            break;
        }
    if (found && !amp__deps_fresh(found)) {
        /* A header changed since: this module must not be handed out again. */
        if (amp__unlink_locked(found)) stale = found;
        found = NULL;
    }
    if (found) found->refs++;
    pthread_mutex_unlock(&amp__cache_lock);
    if (stale) amp__module_free(stale);
    atomic_fetch_add_explicit(found ? &amp__hits : &amp__misses, 1, memory_order_relaxed);
    return found;
}

amp__module *amp__mcache_insert(amp__module *m)
{
    amp__module *winner = NULL, *stale = NULL;
    pthread_mutex_lock(&amp__cache_lock);
    for (amp__module *o = amp__buckets[m->hash % AMP__BUCKETS]; o; o = o->next)
        if (amp__input_equal(o, m->acc, &m->in, m->hash)) {
            if (amp__deps_fresh(o)) {
                o->refs++;
                winner = o;
            } else if (amp__unlink_locked(o)) {
                stale = o;
            }
            break;
        }
    if (!winner) {
        m->refs++; /* the cache's */
        m->in_cache = true;
        m->next = amp__buckets[m->hash % AMP__BUCKETS];
        amp__buckets[m->hash % AMP__BUCKETS] = m;
    }
    pthread_mutex_unlock(&amp__cache_lock);
    if (stale) amp__module_free(stale);
    if (winner) {
        amp__module_release(m);
        return winner;
    }
    return m;
}

void amp__mcache_count(uint64_t *hits, uint64_t *misses)
{
    *hits = atomic_load(&amp__hits);
    *misses = atomic_load(&amp__misses);
}

amp_status amp_cache_clear_memory(void)
{
    amp__module *dead = NULL;
    pthread_mutex_lock(&amp__cache_lock);
    for (unsigned b = 0; b < AMP__BUCKETS; ++b) {
        amp__module *list = amp__buckets[b];
        amp__buckets[b] = NULL;
        while (list) {
            amp__module *m = list;
            list = m->next;
            m->in_cache = false;
            if (--m->refs == 0) {
                m->next = dead;
                dead = m;
            }
        }
    }
    pthread_mutex_unlock(&amp__cache_lock);
    while (dead) {
        amp__module *m = dead;
        dead = m->next;
        amp__module_free(m);
    }
    return AMP_OK;
}
