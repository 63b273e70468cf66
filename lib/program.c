/* program.c — amp_program_build and kernels: prepend the prelude, look up the
 * in-memory then on-disk cache, compile through the backend, load the module
 * and read each kernel's signature record. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


struct amp__module {
    int refs;                  /* guarded by amp__cache_lock */
    amp_accelerator *acc;
    void *mod;
    char key[33];
    struct amp__module *next;  /* in the in-memory cache */
    bool in_cache;
    pthread_mutex_t lock;      /* guards kernels */
    amp_kernel **kernels;
    size_t nkernels;
    _Atomic(amp__event *) last; /* last launch of any kernel in it */
};

struct amp_program {
    amp__module *m;
};

static pthread_mutex_t amp__cache_lock = PTHREAD_MUTEX_INITIALIZER;
static amp__module *amp__cache_head;


amp_accelerator *amp__kernel_accelerator(const amp_kernel *k) { return k->m->acc; }

void amp__module_note_launch(amp__module *m, amp__event *ev)
{
    amp__event *old = atomic_exchange(&m->last, amp__event_retain(ev));
    amp__event_release(old);
}

static void amp__module_free(amp__module *m)
{
    amp__event *last = atomic_exchange(&m->last, NULL);
    /* Unloading under a running kernel is undefined in both drivers. */
    (void)amp__event_wait(last);
    amp__event_release(last);
    for (size_t i = 0; i < m->nkernels; ++i) {
        free(m->kernels[i]->name);
        free(m->kernels[i]);
    }
    free(m->kernels);
    if (m->mod) m->acc->e.be->module_unload(m->acc->e.dev, m->mod);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

static void amp__module_release(amp__module *m)
{
    pthread_mutex_lock(&amp__cache_lock);
    bool last = --m->refs == 0;
    pthread_mutex_unlock(&amp__cache_lock);
    if (last) amp__module_free(m);
}

/* Two independent 64-bit hashes over the same fields make the 128-bit key.
 * Word at a time: a build that hits the in-memory cache hashes only the
 * options and the user's source, so this is most of a cache hit's cost. */
typedef struct amp__keyhash { uint64_t a, b; } amp__keyhash;
static void amp__key_add(amp__keyhash *h, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    uint64_t a = h->a ^ (n * 0x9e3779b97f4a7c15ULL), b = h->b + n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        a = (a ^ w) * 0x100000001b3ULL;
        a ^= a >> 29;
        b = (b + w) * 0xbf58476d1ce4e5b9ULL;
        b = (b << 31) | (b >> 33);
    }
    uint64_t tail = 0;
    if (i < n) memcpy(&tail, s + i, n - i);
    a = (a ^ tail ^ 0xff) * 0x100000001b3ULL;
    b = (b + tail) * 0x94d049bb133111ebULL;
    h->a = a ^ (a >> 31);
    h->b = b ^ (b >> 30);
}

/* Key of (prelude, backend, cache tag, options, source) for acc. */
static void amp__build_key(amp_accelerator *acc, const char *options, const char *source, char key[33])
{
    amp__keyhash h;
    pthread_mutex_lock(&acc->lock);
    if (!acc->key_ready) {
        h.a = AMP__FNV_SEED;
        h.b = 0x243f6a8885a308d3ULL;
        amp__key_add(&h, amp__embedded_prelude);
        amp__key_add(&h, amp__embedded_device_lib);
        amp__key_add(&h, amp__embedded_cpu_device);
        amp__key_add(&h, acc->e.be->name);
        amp__key_add(&h, acc->e.be->cache_tag(acc->e.dev));
        acc->key_base[0] = h.a;
        acc->key_base[1] = h.b;
        acc->key_ready = true;
    }
    h.a = acc->key_base[0];
    h.b = acc->key_base[1];
    pthread_mutex_unlock(&acc->lock);
    amp__key_add(&h, options);
    amp__key_add(&h, source);
    snprintf(key, 33, "%016llx%016llx", (unsigned long long)h.a, (unsigned long long)h.b);
}

static amp__module *amp__cache_find(amp_accelerator *acc, const char *key)
{
    amp__module *found = NULL;
    pthread_mutex_lock(&amp__cache_lock);
    for (amp__module *m = amp__cache_head; m; m = m->next)
        if (m->acc == acc && !strcmp(m->key, key)) {
            m->refs++;
            found = m;
            break;
        }
    pthread_mutex_unlock(&amp__cache_lock);
    return found;
}

/* Insert m (one reference: the caller's) unless another thread won the race;
 * returns the module the caller should use, holding a reference to it. */
static amp__module *amp__cache_insert(amp__module *m)
{
    amp__module *winner = NULL;
    pthread_mutex_lock(&amp__cache_lock);
    for (amp__module *o = amp__cache_head; o; o = o->next)
        if (o->acc == m->acc && !strcmp(o->key, m->key)) {
            o->refs++;
            winner = o;
            break;
        }
    if (!winner) {
        m->refs = 2; /* caller + cache */
        m->in_cache = true;
        m->next = amp__cache_head;
        amp__cache_head = m;
    }
    pthread_mutex_unlock(&amp__cache_lock);
    if (winner) {
        amp__module_free(m);
        return winner;
    }
    return m;
}

amp_status amp_cache_clear_memory(void)
{
    pthread_mutex_lock(&amp__cache_lock);
    amp__module *list = amp__cache_head, *dead = NULL;
    amp__cache_head = NULL;
    while (list) {
        amp__module *m = list;
        list = m->next;
        m->in_cache = false;
        if (--m->refs == 0) {
            m->next = dead;
            dead = m;
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

static amp_status amp__module_load(amp_accelerator *acc, const char *key, const void *bin,
                                   size_t size, amp__module **out)
{
    amp__module *m = calloc(1, sizeof *m);
    if (!m) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "program: out of host memory");
    amp_status st = acc->e.be->module_load(acc->e.dev, bin, size, &m->mod);
    if (st != AMP_OK) {
        free(m);
        return st;
    }
    m->acc = acc;
    m->refs = 1;
    snprintf(m->key, sizeof m->key, "%s", key);
    pthread_mutex_init(&m->lock, NULL);
    *out = m;
    return AMP_OK;
}

amp_status amp_program_build(amp_accelerator *acc, const char *source, const char *options,
                             amp_program **out)
{
    amp_status st = AMP_OK;
    amp__module *m = NULL;
    amp_program *p = NULL;
    char *full = NULL;
    void *bin = NULL;
    size_t bin_size = 0;
    if (!out) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_program_build: out is NULL");
    *out = NULL;
    if (!source) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_program_build: source is NULL");
    if (!acc && (st = amp_accelerator_default(&acc)) != AMP_OK) return st;
    if (!acc->e.info.is_available)
        return amp__fail(AMP_ERROR_UNSUPPORTED, "accelerator %s cannot build programs: %s",
                         acc->e.info.device_path, acc->e.info.unavailable_reason);
    p = calloc(1, sizeof *p);
    if (!p) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "program: out of host memory");
        goto fail;
    }

    char key[33];
    amp__build_key(acc, options, source, key);

    if ((m = amp__cache_find(acc, key))) goto done;

    bin = amp__disk_cache_load(key, &bin_size);
    if (bin && amp__module_load(acc, key, bin, bin_size, &m) != AMP_OK) {
        /* Valid checksum but the driver refused it (e.g. a driver update):
         * rebuild below and overwrite the entry. */
        free(bin);
        bin = NULL;
        m = NULL;
    }
    if (!m) {
        if (!(full = amp__prelude_assemble(acc->e.be->prelude_prefix, source, NULL, NULL))) {
            st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "program: out of host memory");
            goto fail;
        }
        amp__compile_job job = {.source = full, .source_name = AMP__SOURCE_NAME, .options = options};
        amp__compile_output res = {0};
        st = acc->e.be->compile(acc->e.dev, &job, &res);
        free(res.deps);
        bin = res.bin;
        bin_size = res.bin_size;
        if (st != AMP_OK) goto fail;
        if ((st = amp__module_load(acc, key, bin, bin_size, &m)) != AMP_OK) goto fail;
        amp__disk_cache_store(key, bin, bin_size);
    }
    m = amp__cache_insert(m);
done:
    p->m = m;
    *out = p;
    free(full);
    free(bin);
    return AMP_OK;
fail:
    free(full);
    free(bin);
    free(p);
    return st;
}

amp_status amp_program_get_kernel(amp_program *p, const char *name, amp_kernel **out)
{
    amp_status st = AMP_OK;
    amp_kernel *k = NULL;
    if (!out) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_program_get_kernel: out is NULL");
    *out = NULL;
    if (!p || !name)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_program_get_kernel: %s is NULL",
                         p ? "name" : "program");
    amp__module *m = p->m;
    pthread_mutex_lock(&m->lock);
    for (size_t i = 0; i < m->nkernels; ++i)
        if (!strcmp(m->kernels[i]->name, name)) {
            *out = m->kernels[i];
            goto out;
        }
    k = calloc(1, sizeof *k);
    amp_kernel **grown = realloc(m->kernels, (m->nkernels + 1) * sizeof *grown);
    if (grown) m->kernels = grown;
    if (!k || !grown || !(k->name = amp__strdup(name))) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "program: out of host memory");
        goto fail;
    }
    amp__kernel_props props;
    st = m->acc->e.be->kernel_get(m->acc->e.dev, m->mod, name, &props);
    if (st != AMP_OK) goto fail;
    char why[256];
    if (!amp__signature_valid(&props.sig, why, sizeof why)) {
        st = amp__fail(AMP_ERROR_KERNEL_NOT_FOUND,
                       "kernel '%s' has no valid signature record (%s): define it with AMP_KERNEL or "
                       "AMP_TILED_KERNEL", name, why);
        goto fail;
    }
    k->fn = props.fn;
    k->sig = props.sig;
    /* The tile is fixed per kernel, so the device's limits are checked once
     * here rather than on every launch (backends rely on it: backend.h). */
    const amp_accelerator_info *ai = &m->acc->e.info;
    long long threads = 1;
    for (int d = 0; k->sig.tiled && d < k->sig.rank; ++d) threads *= k->sig.tile[d];
    if (ai->max_tile_threads > 0 && threads > ai->max_tile_threads) {
        st = amp__fail(AMP_ERROR_UNSUPPORTED, "kernel '%s' has tiles of %lld threads; %s allows at most %d", name,
                       threads, ai->device_path, ai->max_tile_threads);
        goto fail;
    }
    if (props.tile_static_bytes > ai->max_tile_static_bytes) {
        st = amp__fail(AMP_ERROR_UNSUPPORTED, "kernel '%s' uses %zu bytes of tile_static memory; %s allows at most %zu",
                       name, props.tile_static_bytes, ai->device_path, ai->max_tile_static_bytes);
        goto fail;
    }
    k->m = m;
    m->kernels[m->nkernels++] = k;
    *out = k;
out:
    pthread_mutex_unlock(&m->lock);
    return AMP_OK;
fail:
    pthread_mutex_unlock(&m->lock);
    if (k) free(k->name);
    free(k);
    return st;
}

amp_status amp_program_destroy(amp_program *p)
{
    if (!p) return AMP_OK;
    amp__module_release(p->m);
    free(p);
    return AMP_OK;
}
