/* gpu_backend.c — the GPU backend (lib/backend.h), written once over the normalized driver interface so that HIP and CUDA devices share every line of policy: enumeration, launch geometry, copies, event pooling, signature checks. */
#include "gpu_driver.h"

#include "core.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A host range this backend registered itself (host_register), shared by
 * every storage whose range lies inside it. */
typedef struct host_region {
    char *host;
    size_t bytes;
    char *dptr;  /* the device's address of host */
    size_t refs; /* storages using it; unregistered at 0 */
} host_region;

/* One GPU. Created once by amp__gpu_enumerate and never freed (accelerators
 * live until exit), so every field but the event pool and the region table is
 * read-only after enumeration and needs no lock. */
typedef struct gpu_dev {
    const amp__gpu_driver *drv;
    void *ctx; /* what drv->enter makes current */
    int ordinal;
    amp__gpu_devinfo di;
    char cache_tag[256];
    /* Idle events, all created on this device with timing disabled. Creating
     * events costs a driver call (and on HIP an allocation), and a busy
     * program records one per launch it tracks, so released events are kept.
     * pool_lock is a leaf lock: nothing else is taken while holding it, and no
     * driver call is made under it. */
    pthread_mutex_t pool_lock;
    void **pool;
    size_t npool, cap;
    /* Host ranges we registered. Only these are ever unregistered: memory the
     * user (or another library) pinned, registered or got from a managed
     * allocator is used through its existing mapping and left alone. Held
     * across the driver's register/unregister calls, so a registration never
     * races with the unregistration of the same range; taken after enter and
     * nothing else is taken under it. */
    pthread_mutex_t reg_lock;
    host_region *regions;
    size_t nregions, regions_cap;
} gpu_dev;

#define GPU_DEV(p) ((gpu_dev *)(p))

/* Every entry point brackets its driver calls with dev_enter/dev_leave: the
 * calling thread's current HIP device / CUDA context is the user's (an
 * MPI+HIP code calls hipSetDevice(local_rank) itself), so a switch to this
 * device is undone before returning. When the device already is current
 * (the common case) this costs one cheap get and prev stays NULL, so leave
 * makes no driver call. On failure nothing changed and prev is NULL. */
static inline amp_status dev_enter(const gpu_dev *d, void **prev) { return d->drv->enter(d->ctx, prev); }
static inline void dev_leave(const gpu_dev *d, void *prev)
{
    if (prev) d->drv->leave(prev);
}

/* Block and grid axes are limited to 65535 on y and z by CUDA; the same limit
 * is applied on HIP so a program behaves the same on both. */
#define GRID_YZ_MAX 65535u

/* ---------------------------------------------------------------- tags */

static const char *gpu_cache_tag(void *dev) { return GPU_DEV(dev)->cache_tag; }

/* ------------------------------------------------------------ programs */

static amp_status gpu_compile(void *dev, const amp__compile_job *job, amp__compile_output *out)
{
    gpu_dev *d = GPU_DEV(dev);
    memset(out, 0, sizeof *out);
    /* No context needed: hipRTC and NVRTC run without touching the device. */
    return d->drv->compile(d->di.arch, job, &out->bin, &out->bin_size);
}

static amp_status gpu_module_load(void *dev, const void *bin, size_t bin_size, void **module)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st;
    *module = NULL;
    if (!bin || bin_size == 0)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "empty code object (%zu bytes) for %s:%d", bin_size,
                         d->drv->platform, d->ordinal);
    void *prev;
    if ((st = dev_enter(d, &prev)) != AMP_OK) return st;
    st = d->drv->module_load(bin, bin_size, module);
    dev_leave(d, prev);
    return st;
}

static void gpu_module_unload(void *dev, void *module)
{
    gpu_dev *d = GPU_DEV(dev);
    if (!module) return;
    /* Unloading code a queued kernel still runs would fault it; the device is
     * drained first (errors ignored: after a sticky fault it reports one,
     * and the unload must still happen). Program destruction is rare. */
    void *prev;
    (void)dev_enter(d, &prev);
    d->drv->device_sync();
    d->drv->module_unload(module);
    dev_leave(d, prev);
}

static amp_status gpu_kernel_get(void *dev, void *module, const char *name, amp__kernel_props *out)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st = AMP_OK;
    char *signame = NULL;
    bool found = false;
    size_t actual = 0;
    void *f = NULL, *prev = NULL;
    memset(out, 0, sizeof *out);
    if (!module || !name || !*name) {
        st = amp__fail(AMP_ERROR_INVALID_ARGUMENT, "kernel name is %s", name ? "empty" : "NULL");
        goto fail;
    }
    if ((st = dev_enter(d, &prev)) != AMP_OK) goto fail;
    if ((st = d->drv->function_get(module, name, &f, &found)) != AMP_OK) goto fail;
    if (!found) {
        st = amp__fail(AMP_ERROR_KERNEL_NOT_FOUND, "kernel '%s' not found in the program", name);
        goto fail;
    }
    size_t n = strlen(name);
    signame = malloc(n + sizeof AMP__SIG_SUFFIX);
    if (!signame) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "cannot allocate %zu bytes for a symbol name", n + sizeof AMP__SIG_SUFFIX);
        goto fail;
    }
    memcpy(signame, name, n);
    memcpy(signame + n, AMP__SIG_SUFFIX, sizeof AMP__SIG_SUFFIX);
    if ((st = d->drv->global_read(module, signame, &out->sig, sizeof out->sig, &actual, &found)) != AMP_OK) goto fail;
    if (!found) {
        st = amp__fail(AMP_ERROR_KERNEL_NOT_FOUND,
                       "'%s' is not an AMP_KERNEL (the program has no %s record; declare it with AMP_KERNEL "
                       "or AMP_TILED_KERNEL)", name, signame);
        goto fail;
    }
    if (actual != sizeof out->sig) {
        st = amp__fail(AMP_ERROR_KERNEL_NOT_FOUND,
                       "'%s' is not an AMP_KERNEL of this library version (%s is %zu bytes, want %zu)", name,
                       signame, actual, sizeof out->sig);
        goto fail;
    }
    snprintf(out->execution, sizeof out->execution, "gpu");
    dev_leave(d, prev);
    free(signame);
    out->fn = f;
    return AMP_OK;
fail:
    dev_leave(d, prev);
    free(signame);
    return st;
}

/* -------------------------------------------------------------- queues */

static amp_status gpu_queue_create(void *dev, void **queue)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st;
    void *prev;
    *queue = NULL;
    if ((st = dev_enter(d, &prev)) != AMP_OK) return st;
    st = d->drv->stream_create(queue);
    dev_leave(d, prev);
    return st;
}

static void gpu_queue_destroy(void *dev, void *queue)
{
    gpu_dev *d = GPU_DEV(dev);
    void *prev;
    if (!queue) return;
    (void)dev_enter(d, &prev);
    d->drv->stream_destroy(queue);
    dev_leave(d, prev);
}

static amp_status gpu_queue_wait(void *dev, void *queue)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st;
    void *prev;
    if ((st = dev_enter(d, &prev)) != AMP_OK) return st;
    st = d->drv->stream_sync(queue);
    dev_leave(d, prev);
    return st;
}

static amp_status gpu_queue_wait_event(void *dev, void *queue, void *event)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st;
    void *prev;
    if (!event) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "event is NULL");
    if ((st = dev_enter(d, &prev)) != AMP_OK) return st;
    st = d->drv->stream_wait_event(queue, event);
    dev_leave(d, prev);
    return st;
}

/* -------------------------------------------------------------- events */

static void *pool_pop(gpu_dev *d)
{
    void *ev = NULL;
    pthread_mutex_lock(&d->pool_lock);
    if (d->npool) ev = d->pool[--d->npool];
    pthread_mutex_unlock(&d->pool_lock);
    return ev;
}

/* Returns false when the pool could not grow; the caller destroys ev. */
static bool pool_push(gpu_dev *d, void *ev)
{
    bool ok = true;
    pthread_mutex_lock(&d->pool_lock);
    if (d->npool == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 16;
        void **p = realloc(d->pool, cap * sizeof *p);
        if (p) { d->pool = p; d->cap = cap; }
        else ok = false;
    }
    if (ok) d->pool[d->npool++] = ev;
    pthread_mutex_unlock(&d->pool_lock);
    return ok;
}

static void event_discard(gpu_dev *d, void *ev)
{
    if (pool_push(d, ev)) return;
    void *prev;
    (void)dev_enter(d, &prev);
    d->drv->event_destroy(ev);
    dev_leave(d, prev);
}

static amp_status gpu_event_record(void *dev, void *queue, void **event)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st;
    void *ev = NULL, *prev = NULL;
    *event = NULL;
    if ((st = dev_enter(d, &prev)) != AMP_OK) goto fail;
    ev = pool_pop(d);
    if (!ev && (st = d->drv->event_create(&ev)) != AMP_OK) { ev = NULL; goto fail; }
    if ((st = d->drv->event_record(ev, queue)) != AMP_OK) goto fail;
    dev_leave(d, prev);
    *event = ev;
    return AMP_OK;
fail:
    dev_leave(d, prev);
    if (ev) event_discard(d, ev);
    return st;
}

static amp_status gpu_event_wait(void *dev, void *event)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st;
    void *prev;
    if (!event) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "event is NULL");
    if ((st = dev_enter(d, &prev)) != AMP_OK) return st;
    st = d->drv->event_sync(event);
    dev_leave(d, prev);
    return st;
}

static amp_status gpu_event_query(void *dev, void *event, bool *done)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st;
    void *prev;
    *done = false;
    if (!event) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "event is NULL");
    if ((st = dev_enter(d, &prev)) != AMP_OK) return st;
    st = d->drv->event_query(event, done);
    dev_leave(d, prev);
    return st;
}

/* A released event may still be pending on its queue; re-recording it later
 * is allowed by both drivers (the new record replaces the old point). */
static void gpu_event_release(void *dev, void *event)
{
    if (event) event_discard(GPU_DEV(dev), event);
}

/* -------------------------------------------------------------- memory */

static amp_status gpu_mem_alloc(void *dev, size_t bytes, void **dptr)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st;
    void *prev;
    *dptr = NULL;
    if ((st = dev_enter(d, &prev)) != AMP_OK) return st;
    /* Both drivers refuse a 0-byte allocation; an empty buffer still needs a
     * distinct, freeable address. */
    st = d->drv->mem_alloc(bytes ? bytes : 1, dptr);
    dev_leave(d, prev);
    return st;
}

static void gpu_mem_free(void *dev, void *dptr)
{
    gpu_dev *d = GPU_DEV(dev);
    void *prev;
    if (!dptr) return;
    (void)dev_enter(d, &prev);
    d->drv->mem_free(dptr);
    dev_leave(d, prev);
}

/* The unified path maps each storage's host memory (lib/memory.c). Views may
 * share host memory (two views of one C array, a view of a part of another's
 * range), and the user may have pinned or registered it already, so: a range
 * inside one we registered shares that registration (counted); memory the
 * driver reports as already registered or managed is used through its own
 * mapping and never unregistered by us; only ranges we registered are
 * unregistered, when their last user goes. */
static amp_status gpu_host_register(void *dev, void *host, size_t bytes, void **dptr)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st = AMP_OK;
    *dptr = NULL;
    if (!host || bytes == 0 || bytes > UINTPTR_MAX - (uintptr_t)host)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "cannot register host memory %p of %zu bytes", host, bytes);
    /* The device reads pageable memory at its own address (an APU such as
     * MI300A, or HMM): registering would only pin pages. Nothing is recorded,
     * so host_unregister leaves it alone. */
    if (d->di.pageable_access) {
        *dptr = host;
        return AMP_OK;
    }
    char *lo = host, *hi = lo + bytes;
    pthread_mutex_lock(&d->reg_lock);
    for (size_t i = 0; i < d->nregions; ++i) {
        host_region *r = &d->regions[i];
        if (lo >= r->host && hi <= r->host + r->bytes) {
            ++r->refs;
            *dptr = r->dptr + (lo - r->host);
            pthread_mutex_unlock(&d->reg_lock);
            return AMP_OK;
        }
        if (lo < r->host + r->bytes && hi > r->host) {
            /* The driver cannot extend a registration, and the part outside
             * r would have no mapping. */
            pthread_mutex_unlock(&d->reg_lock);
            return amp__fail(AMP_ERROR_UNSUPPORTED,
                             "host memory %p (%zu bytes) partly overlaps host memory %p (%zu bytes) already mapped "
                             "for another view on %s:%d; on the mapped-memory path, views that share host memory "
                             "must lie inside the first one mapped",
                             host, bytes, (void *)r->host, r->bytes, d->drv->platform, d->ordinal);
        }
    }
    /* Room first, so that a registration we made is always recorded. */
    if (d->nregions == d->regions_cap) {
        size_t cap = d->regions_cap ? d->regions_cap * 2 : 16;
        host_region *p = realloc(d->regions, cap * sizeof *p);
        if (!p) {
            pthread_mutex_unlock(&d->reg_lock);
            return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "cannot grow the host registration table to %zu entries", cap);
        }
        d->regions = p;
        d->regions_cap = cap;
    }
    void *prev, *p = NULL;
    bool owned = false;
    if ((st = dev_enter(d, &prev)) == AMP_OK) {
        st = d->drv->host_register(host, bytes, &p, &owned);
        dev_leave(d, prev);
    }
    if (st == AMP_OK && owned) d->regions[d->nregions++] = (host_region){lo, bytes, p, 1};
    pthread_mutex_unlock(&d->reg_lock);
    if (st == AMP_OK) *dptr = p;
    return st;
}

static void gpu_host_unregister(void *dev, void *host)
{
    gpu_dev *d = GPU_DEV(dev);
    char *h = host;
    if (!host) return;
    pthread_mutex_lock(&d->reg_lock);
    for (size_t i = 0; i < d->nregions; ++i) {
        host_region *r = &d->regions[i];
        if (h < r->host || h >= r->host + r->bytes) continue;
        if (--r->refs == 0) {
            void *prev;
            (void)dev_enter(d, &prev);
            d->drv->host_unregister(r->host);
            dev_leave(d, prev);
            d->regions[i] = d->regions[--d->nregions];
        }
        break;
    }
    pthread_mutex_unlock(&d->reg_lock);
}

static bool mul_overflows(size_t a, size_t b, size_t *out)
{
    if (a && b > SIZE_MAX / a) return true;
    *out = a * b;
    return false;
}

/* A box copy becomes the fewest driver copies that describe it: one linear
 * copy when both sides are dense, one 2D copy when only rows are padded but
 * slices follow each other (slice pitch == row pitch * height), else one 2D
 * copy per slice. 2D copies take pageable host memory on both drivers, unlike
 * 3D ones on HIP 5.2 (whose HIP_MEMCPY3D has 32-bit fields and an enum that
 * ROCm 6 renumbered). */
static amp_status gpu_copy(void *dev, void *queue, const amp__copy *c)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st;
    if (!c || !c->dst || !c->src)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "copy with NULL %s", !c ? "descriptor" : !c->dst ? "dst" : "src");
    if (c->dir != AMP__H2D && c->dir != AMP__D2H && c->dir != AMP__D2D)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "copy direction %d is not H2D/D2H/D2D", (int)c->dir);
    size_t w = c->width_bytes, h = c->height, z = c->depth;
    if (w == 0 || h == 0 || z == 0) return AMP_OK;
    /* A single row needs no pitch; a single slice needs no slice pitch. */
    size_t sp = h > 1 ? c->src_pitch : w, dp = h > 1 ? c->dst_pitch : w;
    if (sp < w || dp < w)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "copy row of %zu bytes exceeds its pitch (src %zu, dst %zu)", w,
                         c->src_pitch, c->dst_pitch);
    size_t sslab = 0, dslab = 0, total = 0, rows = 0;
    if (mul_overflows(sp, h, &sslab) || mul_overflows(dp, h, &dslab) || mul_overflows(h, z, &rows) ||
        mul_overflows(w, rows, &total))
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "copy box %zu x %zu x %zu bytes overflows", z, h, w);
    size_t ss = z > 1 ? c->src_slice_pitch : sslab, ds = z > 1 ? c->dst_slice_pitch : dslab;
    if (ss < sslab || ds < dslab)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "copy slice of %zu rows exceeds its slice pitch (src %zu, dst %zu)",
                         h, c->src_slice_pitch, c->dst_slice_pitch);
    void *prev;
    if ((st = dev_enter(d, &prev)) != AMP_OK) return st;
    bool slices_follow = ss == sslab && ds == dslab;
    if (slices_follow && sp == w && dp == w) {
        st = d->drv->memcpy_1d(c->dir, c->dst, c->src, total, queue);
    } else if (slices_follow) {
        st = d->drv->memcpy_2d(c->dir, c->dst, dp, c->src, sp, w, rows, queue);
    } else {
        for (size_t k = 0; k < z && st == AMP_OK; ++k)
            st = d->drv->memcpy_2d(c->dir, (char *)c->dst + k * ds, dp, (const char *)c->src + k * ss, sp, w, h,
                                   queue);
    }
    dev_leave(d, prev);
    return st;
}

/* -------------------------------------------------------------- launch */

static unsigned pow2ceil(uint64_t x, unsigned cap)
{
    unsigned p = 1;
    while (p < cap && p < x) p <<= 1;
    return p;
}

static unsigned ceil_div_capped(uint64_t a, unsigned b, unsigned cap)
{
    uint64_t q = (a + b - 1) / b;
    return q > cap ? cap : (unsigned)q;
}

/* Index dimension d of a rank-R launch maps to hardware axis R-1-d, so the
 * contiguous last dimension is x (coalesced); the prelude undoes this. */
static amp_status launch_geometry(const gpu_dev *d, const amp__launch *l, unsigned g[3], unsigned b[3])
{
    const int r = l->extent.rank;
    const int *e = l->extent.v;
    g[0] = g[1] = g[2] = b[0] = b[1] = b[2] = 1;
    if (l->tiled) {
        /* The core checked rank and divisibility (lib/backend.h). */
        for (int k = 0; k < r; ++k) {
            int axis = r - 1 - k;
            b[axis] = (unsigned)l->sig->tile[k];
            g[axis] = (unsigned)(e[k] / l->sig->tile[k]);
        }
        static const char axis_name[3] = {'x', 'y', 'z'};
        /* A tile the device cannot run would fail in the driver with a bare
         * "invalid configuration"; say which limit it passes instead (the
         * core checked the total thread count). */
        for (int a = 0; a < 3; ++a)
            if (d->di.max_block[a] > 0 && b[a] > (unsigned)d->di.max_block[a])
                return amp__fail(AMP_ERROR_UNSUPPORTED,
                                 "tiled launch of '%s': tile size %u along index dimension %d (block %c) exceeds "
                                 "the device's limit of %d",
                                 l->kernel_name, b[a], r - 1 - a, axis_name[a], d->di.max_block[a]);
        for (int a = 1; a < 3; ++a)
            if (g[a] > GRID_YZ_MAX)
                return amp__fail(AMP_ERROR_UNSUPPORTED,
                                 "tiled launch of '%s': %u tiles along index dimension %d (grid %c) exceed %u",
                                 l->kernel_name, g[a], r - 1 - a, axis_name[a], GRID_YZ_MAX);
        if ((int64_t)g[0] > (int64_t)d->di.max_grid[0])
            return amp__fail(AMP_ERROR_UNSUPPORTED, "tiled launch of '%s': %u tiles along grid x exceed %d",
                             l->kernel_name, g[0], d->di.max_grid[0]);
        return AMP_OK;
    }
    /* Blocks of at most AMP__SIMPLE_BLOCK_THREADS: the prelude declares
     * simple-model kernels with __launch_bounds__ of the same constant
     * (lib/signature.h), so a larger block would fail to launch. */
    const unsigned bt = AMP__SIMPLE_BLOCK_THREADS;
    uint64_t ex = (uint64_t)e[r - 1];
    b[0] = pow2ceil(ex, r == 1 ? bt : 32);
    g[0] = (unsigned)((ex + b[0] - 1) / b[0]);
    if (r >= 2) {
        uint64_t ey = (uint64_t)e[r - 2];
        b[1] = pow2ceil(ey, bt / b[0]);
        g[1] = ceil_div_capped(ey, b[1], GRID_YZ_MAX);
    }
    if (r >= 3) {
        uint64_t ez = 1;
        for (int k = 0; k < r - 2; ++k) ez *= (uint64_t)e[k]; /* < 2^62: ranks <= 4, each < 2^31 */
        unsigned cap = bt / (b[0] * b[1]);
        b[2] = pow2ceil(ez, cap < 64 ? cap : 64);
        g[2] = ceil_div_capped(ez, b[2], GRID_YZ_MAX);
    }
    return AMP_OK;
}

static amp_status gpu_launch(void *dev, void *queue, void *fn, const amp__launch *l)
{
    gpu_dev *d = GPU_DEV(dev);
    unsigned g[3], b[3];
    amp_status st;
    if ((st = launch_geometry(d, l, g, b)) != AMP_OK) return st;
    void *prev;
    if ((st = dev_enter(d, &prev)) != AMP_OK) return st;
    /* The drivers copy both parameters (sizes come from the kernel's own
     * metadata) before returning, so pointing into l is enough. */
    void *params[2] = {(void *)&l->info, (void *)l->pack};
    st = d->drv->launch(fn, g, b, queue, params);
    dev_leave(d, prev);
    return st;
}

/* ------------------------------------------------------------ the table */

static const amp__backend gpu_backend = {
    .name = "gpu",
    .prelude_prefix = NULL,
    .cache_tag = gpu_cache_tag,
    .compile = gpu_compile,
    .module_load = gpu_module_load,
    .module_unload = gpu_module_unload,
    .kernel_get = gpu_kernel_get,
    .queue_create = gpu_queue_create,
    .queue_destroy = gpu_queue_destroy,
    .queue_wait = gpu_queue_wait,
    .queue_wait_event = gpu_queue_wait_event,
    .event_record = gpu_event_record,
    .event_wait = gpu_event_wait,
    .event_query = gpu_event_query,
    .event_release = gpu_event_release,
    .mem_alloc = gpu_mem_alloc,
    .mem_free = gpu_mem_free,
    .host_register = gpu_host_register,
    .host_unregister = gpu_host_unregister,
    .copy = gpu_copy,
    .launch = gpu_launch,
};

/* --------------------------------------------------------- enumeration */

/* AMP_UNIFIED_MEMORY: "on" forces zero-copy views (through host_register on a
 * discrete GPU, for testing), "off" forbids them, "auto" (also unset or any
 * other value, which is ignored rather than failing enumeration) decides from
 * the hardware: an integrated GPU that can reach host memory coherently
 * (pageable access or managed memory). A discrete GPU never qualifies, not
 * even an xnack+ target (MI250X/MI300X with HSA_XNACK=1): it can fault host
 * pages over the interconnect, but every kernel access would then cross it,
 * tens of times slower than copying the view to device memory once. */
static bool unified_memory(const amp__gpu_devinfo *di, char *why, size_t n)
{
    const char *v = amp__env("AMP_UNIFIED_MEMORY");
    bool xnack = strstr(di->arch, "xnack+") != NULL;
    if (v && (!strcmp(v, "on") || !strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes"))) {
        snprintf(why, n, "zero-copy: forced by AMP_UNIFIED_MEMORY=%s%s", v,
                 di->integrated ? "" : " (a discrete GPU then reads host memory over the interconnect)");
        return true;
    }
    if (v && (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "no"))) {
        snprintf(why, n, "copies: AMP_UNIFIED_MEMORY=%s", v);
        return false;
    }
    if (di->integrated && di->pageable_access) {
        snprintf(why, n, "zero-copy: integrated GPU that reads pageable host memory%s", xnack ? " (XNACK on)" : "");
        return true;
    }
    if (di->integrated && di->managed_memory) {
        snprintf(why, n, "zero-copy: integrated GPU, host memory mapped for it (pageable access is off%s)",
                 strncmp(di->arch, "gfx", 3) == 0 ? "; HSA_XNACK=1 turns it on" : "");
        return true;
    }
    if (di->integrated) {
        snprintf(why, n, "copies: integrated GPU without pageable access or managed memory");
        return false;
    }
    snprintf(why, n, "copies: discrete GPU%s (device memory is faster than reaching host memory over the "
             "interconnect; AMP_UNIFIED_MEMORY=on forces zero-copy)", xnack ? " with XNACK on" : "");
    return false;
}

static size_t enumerate_driver(const amp__gpu_driver *drv, amp__device_entry *out, size_t cap)
{
    size_t n = 0;
    int count = drv->device_count();
    for (int i = 0; i < count && n < cap; ++i) {
        gpu_dev *d = calloc(1, sizeof *d);
        if (!d) break;
        d->drv = drv;
        d->ordinal = i;
        pthread_mutex_init(&d->pool_lock, NULL);
        pthread_mutex_init(&d->reg_lock, NULL);
        drv->device_open(i, &d->ctx, &d->di);
        snprintf(d->cache_tag, sizeof d->cache_tag, "%s %s %s", drv->platform, d->di.arch, drv->version_tag);

        amp__device_entry *e = &out[n++];
        memset(e, 0, sizeof *e);
        e->be = &gpu_backend;
        e->dev = d;
        amp_accelerator_info *info = &e->info;
        snprintf(info->description, sizeof info->description, "%s", d->di.name);
        snprintf(info->device_path, sizeof info->device_path, "%s:%d", drv->platform, i);
        snprintf(info->arch, sizeof info->arch, "%s", d->di.arch);
        info->dedicated_memory = d->di.total_mem;
        info->compute_units = d->di.compute_units;
        info->max_tile_threads = d->di.max_tile_threads;
        info->max_tile_static_bytes = d->di.max_tile_static_bytes;
        info->is_emulated = false;
        info->is_unified_memory = unified_memory(&d->di, info->unified_memory_reason, sizeof info->unified_memory_reason);
        info->supports_double_precision = true;
        info->is_available = d->di.unavailable_reason[0] == '\0';
        snprintf(info->unavailable_reason, sizeof info->unavailable_reason, "%s", d->di.unavailable_reason);
    }
    return n;
}

size_t amp__gpu_enumerate(amp__device_entry *out, size_t cap)
{
    size_t n = 0;
    if (!out || cap == 0) return 0;
    /* AMD first: on a machine with both, "hip:N" devices come before "cuda:N". */
    const amp__gpu_driver *hip = amp__hip_driver(NULL);
    if (hip) n += enumerate_driver(hip, out + n, cap - n);
    const amp__gpu_driver *cuda = amp__cuda_driver(NULL);
    if (cuda && n < cap) n += enumerate_driver(cuda, out + n, cap - n);
    return n;
}
