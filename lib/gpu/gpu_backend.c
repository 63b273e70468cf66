/* gpu_backend.c — the GPU backend (lib/backend.h), written once over the normalized driver interface (gpu_driver.h) so that HIP and CUDA devices share every line of policy: enumeration, launch geometry, copies, event pooling, native queues, host registration. */
#include "gpu_driver.h"
#include "launch_geometry.h"

#include "base/core.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A host range this backend registered itself (host_register), shared by
 * every storage whose range lies inside it. */
typedef struct host_region {
    char *host;
    size_t bytes;
    char *dptr;  /* the device's address of host */
    size_t refs; /* storages using it; unregistered at 0 */
} host_region;

/* What one GPU knows about copying to and from another of its driver:
 * looked up once (the driver's answer, both ways), and peer access turned on
 * both ways before the first copy that crosses the pair. */
typedef struct gpu_peer {
    const void *dev;   /* the other gpu_dev */
    bool possible;     /* the driver allows peer access both ways */
    bool enabled;      /* turned on both ways (or failed: why says so) */
    bool tried;        /* copy_peer tried to turn it on */
    char why[256];
} gpu_peer;

#define GPU_MAX_PEERS 64

/* One GPU. Created once by amp__gpu_enumerate and never freed (accelerators
 * live until exit), so every field but the event pool, the region table and
 * the peer table is read-only after enumeration and needs no lock. */
typedef struct gpu_dev {
    const amp__gpu_driver *drv;
    void *ctx; /* what drv->enter makes current */
    int ordinal;
    amp__gpu_devinfo di;
    char cache_tag[512];
    char prebuilt[64]; /* the pack its code objects come from ("sm_90", "gfx90a"); "" none */
    /* Idle events, all created on this device with timing disabled. Creating
     * events costs a driver call (and on HIP an allocation), so released
     * events are kept. pool_lock is a leaf lock: nothing else is taken while
     * holding it, and no driver call is made under it. */
    pthread_mutex_t pool_lock;
    void **pool;
    size_t npool, cap;
    /* Host ranges we registered. Only these are ever unregistered: memory the
     * user (or another library) pinned, registered or got from a managed
     * allocator is used through its existing mapping and left alone. Held
     * across the driver's register/unregister calls, so a registration never
     * races with the unregistration of the same range; taken after entering
     * the device and nothing else is taken under it. */
    pthread_mutex_t reg_lock;
    host_region *regions;
    size_t nregions, regions_cap;
    /* Peers looked up so far. Held across the driver's peer queries and
     * enables (which enter this device and the peer), never while another
     * device's peer_lock is held, so two threads copying both ways between
     * a pair cannot deadlock (each may enable a direction the other did:
     * already enabled counts as success). */
    pthread_mutex_t peer_lock;
    gpu_peer peers[GPU_MAX_PEERS];
    size_t npeers;
    /* The queues of this device (created or wrapped), how many of them
     * record a graph (stream capture, graph_begin to graph_end), and the
     * modules whose unload waits for the last recording to end. Unloading
     * drains these queues one at a time, never the whole device: CUDA and
     * HIP refuse a device-wide synchronize while any stream of the device
     * captures, and that call broke the capture (another view's recording,
     * or the user's own on a stream of theirs: "capture invalidated" at its
     * end). A capturing queue cannot be synchronized either, so while one of
     * ours records, unloads wait in deferred. Queues destroyed are drained
     * by the core first (amp_accelerator_view_destroy). queue_lock is taken
     * after entering the device and held across those syncs and unloads
     * (program destruction is rare); nothing else is taken under it. */
    pthread_mutex_t queue_lock;
    void **queues;
    size_t nqueues, queues_cap;
    int recording;
    void **deferred;
    size_t ndeferred, deferred_cap;
} gpu_dev;

#define GPU_DEV(p) ((gpu_dev *)(p))

/* Every entry point runs its driver calls with this device current: the
 * calling thread's current HIP device / CUDA context is the user's (an
 * MPI+HIP code calls hipSetDevice(local_rank) itself), so a switch to this
 * device is undone before returning. When the device already is current
 * (the common case) entering costs one cheap get and leaving nothing.
 * ON_DEVICE runs body only when entering worked (st then holds what body
 * set, else enter's failure); ON_DEVICE_VOID runs body either way (releases
 * must happen even after a device fault; enter's status is in enter_st_). */
#define ON_DEVICE(d, st, body)                                            \
    do {                                                                  \
        void *prev_;                                                      \
        if (((st) = (d)->drv->enter((d)->ctx, &prev_)) == AMP_OK) {       \
            body;                                                         \
            if (prev_) (d)->drv->leave(prev_);                            \
        }                                                                 \
    } while (0)
#define ON_DEVICE_VOID(d, body)                                           \
    do {                                                                  \
        void *prev_ = NULL;                                               \
        amp_status enter_st_ = (d)->drv->enter((d)->ctx, &prev_);         \
        (void)enter_st_;                                                  \
        body;                                                             \
        if (prev_) (d)->drv->leave(prev_);                                \
    } while (0)

/* Timed events are handed out with bit 0 set (driver handles are aligned
 * pointers), so that release knows they do not belong in the pool. */
#define TIMED_TAG ((uintptr_t)1)
static inline void *untag(void *ev) { return (void *)((uintptr_t)ev & ~TIMED_TAG); }

/* ---------------------------------------------------------------- tags */

static const char *gpu_cache_tag(void *dev) { return GPU_DEV(dev)->cache_tag; }
static const char *gpu_prebuilt_target(void *dev);

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
    ON_DEVICE(d, st, st = d->drv->module_load(bin, bin_size, module));
    return st;
}

/* Appends p to *list (grown as needed); false when it could not grow. */
static bool ptr_push(void ***list, size_t *n, size_t *cap, void *p)
{
    if (*n == *cap) {
        size_t ncap = *cap ? 2 * *cap : 8;
        void **grown = realloc(*list, ncap * sizeof *grown);
        if (!grown) return false;
        *list = grown;
        *cap = ncap;
    }
    (*list)[(*n)++] = p;
    return true;
}

/* Unloading code a queued kernel still runs would fault it: every queue of
 * the device is drained first (errors ignored: after a sticky fault a sync
 * reports one, and the unload must still happen). Device entered,
 * queue_lock held, no queue recording. */
static void unload_now_locked(gpu_dev *d, void *module)
{
    for (size_t i = 0; i < d->nqueues; ++i) (void)d->drv->stream_sync(d->queues[i]);
    d->drv->module_unload(module);
}

/* The unloads that waited for the recordings to end, once none records.
 * Device entered, queue_lock held. */
static void unload_deferred_locked(gpu_dev *d)
{
    if (d->recording > 0 || d->ndeferred == 0) return;
    for (size_t i = 0; i < d->nqueues; ++i) (void)d->drv->stream_sync(d->queues[i]);
    for (size_t i = 0; i < d->ndeferred; ++i) d->drv->module_unload(d->deferred[i]);
    d->ndeferred = 0;
}

static void gpu_module_unload(void *dev, void *module)
{
    gpu_dev *d = GPU_DEV(dev);
    if (!module) return;
    ON_DEVICE_VOID(d, {
        pthread_mutex_lock(&d->queue_lock);
        /* No room to wait in: the code stays loaded (memory lost, no
         * recording broken, no kernel faulted). */
        if (d->recording == 0) unload_now_locked(d, module);
        else (void)ptr_push(&d->deferred, &d->ndeferred, &d->deferred_cap, module);
        pthread_mutex_unlock(&d->queue_lock);
    });
}

/* Look up the kernel and read its record (device entered). */
static amp_status kernel_lookup(gpu_dev *d, void *module, const char *name, amp__kernel_props *out)
{
    amp_status st;
    bool found = false;
    size_t actual = 0;
    char signame[512];
    if ((st = d->drv->function_get(module, name, &out->fn, &found)) != AMP_OK) return st;
    if (!found) return amp__fail(AMP_ERROR_KERNEL_NOT_FOUND, "kernel '%s' not found in the program", name);
    if (snprintf(signame, sizeof signame, "%s%s", name, AMP__SIG_SUFFIX) >= (int)sizeof signame)
        return amp__fail(AMP_ERROR_KERNEL_NOT_FOUND, "kernel name '%.64s...' is too long", name);
    if ((st = d->drv->global_read(module, signame, &out->sig, sizeof out->sig, &actual, &found)) != AMP_OK) return st;
    if (!found)
        return amp__fail(AMP_ERROR_KERNEL_NOT_FOUND,
                         "'%s' is not an AMP_KERNEL (the program has no %s record; declare it with AMP_KERNEL "
                         "or AMP_TILED_KERNEL)", name, signame);
    if (actual != sizeof out->sig)
        return amp__fail(AMP_ERROR_KERNEL_NOT_FOUND,
                         "'%s' is not an AMP_KERNEL of this library version (%s is %zu bytes, want %zu)", name,
                         signame, actual, sizeof out->sig);
    if ((st = d->drv->function_shared_bytes(out->fn, &out->tile_static_bytes)) != AMP_OK) return st;
    return d->drv->function_max_threads(out->fn, &out->max_block);
}

static amp_status gpu_kernel_get(void *dev, void *module, const char *name, amp__kernel_props *out)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st;
    memset(out, 0, sizeof *out);
    if (!module || !name || !*name)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "kernel name is %s", name ? "empty" : "NULL");
    ON_DEVICE(d, st, st = kernel_lookup(d, module, name, out));
    if (st != AMP_OK) {
        out->fn = NULL;
        return st;
    }
    snprintf(out->execution, sizeof out->execution, "gpu");
    return AMP_OK;
}

/* -------------------------------------------------------------- queues */

/* Lists queue among the device's queues (gpu_dev.queues). */
static amp_status queue_listed(gpu_dev *d, void *queue)
{
    pthread_mutex_lock(&d->queue_lock);
    bool ok = ptr_push(&d->queues, &d->nqueues, &d->queues_cap, queue);
    pthread_mutex_unlock(&d->queue_lock);
    return ok ? AMP_OK
              : amp__fail(AMP_ERROR_OUT_OF_MEMORY, "cannot list a new queue of %s:%d (%zu listed)", d->drv->platform,
                          d->ordinal, d->nqueues);
}

static amp_status gpu_queue_create(void *dev, void **queue)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st;
    *queue = NULL;
    ON_DEVICE(d, st, {
        st = d->drv->stream_create(queue);
        if (st == AMP_OK && (st = queue_listed(d, *queue)) != AMP_OK) {
            d->drv->stream_destroy(*queue);
            *queue = NULL;
        }
    });
    return st;
}

/* A GPU queue is the vendor's stream itself. */
static amp_status gpu_queue_wrap(void *dev, void *native, void **queue)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st;
    *queue = NULL;
    ON_DEVICE(d, st, st = d->drv->stream_check(native, d->ctx));
    if (st == AMP_OK && (st = queue_listed(d, native)) == AMP_OK) *queue = native;
    return st;
}

static void *gpu_queue_native(void *dev, void *queue) { return queue; }

/* Drops queue from the device's list: a queue destroyed, or a wrapped
 * stream let go (the user's to destroy: it must not be synchronized
 * afterwards). */
static void queue_unlisted(gpu_dev *d, void *queue)
{
    pthread_mutex_lock(&d->queue_lock);
    for (size_t i = 0; i < d->nqueues; ++i)
        if (d->queues[i] == queue) {
            d->queues[i] = d->queues[--d->nqueues];
            break;
        }
    pthread_mutex_unlock(&d->queue_lock);
}

static void gpu_queue_unwrap(void *dev, void *queue) { queue_unlisted(GPU_DEV(dev), queue); }

static void gpu_queue_destroy(void *dev, void *queue)
{
    gpu_dev *d = GPU_DEV(dev);
    if (!queue) return;
    queue_unlisted(d, queue);
    ON_DEVICE_VOID(d, d->drv->stream_destroy(queue));
}

static amp_status gpu_queue_wait(void *dev, void *queue)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st;
    ON_DEVICE(d, st, st = d->drv->stream_sync(queue));
    return st;
}

static amp_status gpu_event_record(void *dev, void *queue, void **event);
static void gpu_event_release(void *dev, void *event);
static amp_status gpu_event_wait_for(void *dev, void *event, uint32_t ms);

/* An event recorded now covers everything queued so far. */
static amp_status gpu_queue_wait_for(void *dev, void *queue, uint32_t ms)
{
    void *ev = NULL;
    amp_status st = gpu_event_record(dev, queue, &ev);
    if (st == AMP_OK) st = gpu_event_wait_for(dev, ev, ms);
    gpu_event_release(dev, ev);
    return st;
}

static amp_status gpu_queue_wait_event(void *dev, void *queue, void *event)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st;
    if (!event) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "event is NULL");
    ON_DEVICE(d, st, st = d->drv->stream_wait_event(queue, untag(event)));
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

/* A released event may still be pending on its queue; re-recording it later
 * is allowed by both drivers (the new record replaces the old point). */
static void gpu_event_release(void *dev, void *event)
{
    gpu_dev *d = GPU_DEV(dev);
    if (!event) return;
    bool timed = ((uintptr_t)event & TIMED_TAG) != 0;
    if (!timed && pool_push(d, event)) return;
    ON_DEVICE_VOID(d, d->drv->event_destroy(untag(event)));
}

static amp_status record(gpu_dev *d, void *queue, bool timed, void **event)
{
    amp_status st = AMP_OK;
    void *ev = timed ? NULL : pool_pop(d);
    *event = NULL;
    ON_DEVICE(d, st, {
        if (!ev) st = timed ? d->drv->event_create_timed(&ev) : d->drv->event_create(&ev);
        if (st == AMP_OK) st = d->drv->event_record(ev, queue);
    });
    if (st != AMP_OK) {
        if (ev) gpu_event_release(d, timed ? (void *)((uintptr_t)ev | TIMED_TAG) : ev);
        return st;
    }
    *event = timed ? (void *)((uintptr_t)ev | TIMED_TAG) : ev;
    return AMP_OK;
}

static amp_status gpu_event_record(void *dev, void *queue, void **event) { return record(GPU_DEV(dev), queue, false, event); }
static amp_status gpu_event_record_timed(void *dev, void *queue, void **event)
{
    return record(GPU_DEV(dev), queue, true, event);
}

static amp_status gpu_event_elapsed(void *dev, void *start, void *end, float *ms)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st;
    *ms = 0;
    if (!((uintptr_t)start & TIMED_TAG) || !((uintptr_t)end & TIMED_TAG))
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "elapsed time asked of events recorded without timing");
    ON_DEVICE(d, st, st = d->drv->event_elapsed(untag(start), untag(end), ms));
    return st;
}

static amp_status gpu_event_wait(void *dev, void *event)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st;
    if (!event) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "event is NULL");
    ON_DEVICE(d, st, st = d->drv->event_sync(untag(event)));
    return st;
}

static amp_status gpu_event_query(void *dev, void *event, bool *done)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st;
    *done = false;
    if (!event) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "event is NULL");
    ON_DEVICE(d, st, st = d->drv->event_query(untag(event), done));
    return st;
}

/* Neither driver waits for an event with a limit: ask it until the event
 * passed or ms ran out, sleeping between the questions from 20 us up to
 * 1 ms (a kernel that ends is noticed within about a millisecond). A
 * fault the driver reports is the status. */
static amp_status gpu_event_wait_for(void *dev, void *event, uint32_t ms)
{
    uint64_t deadline = amp__now_ns() + (uint64_t)ms * 1000000u;
    uint64_t nap = 20000;
    for (;;) {
        bool done = false;
        amp_status st = gpu_event_query(dev, event, &done);
        if (st != AMP_OK || done) return st;
        uint64_t now = amp__now_ns();
        if (now >= deadline) return amp__fail(AMP_ERROR_TIMEOUT, "the GPU has not passed the event");
        uint64_t ns = deadline - now < nap ? deadline - now : nap;
        struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
        nanosleep(&ts, NULL);
        if (nap < 1000000) nap *= 2;
    }
}

/* -------------------------------------------------------------- memory */

static amp_status gpu_mem_alloc(void *dev, size_t bytes, void **dptr)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st;
    *dptr = NULL;
    /* Both drivers refuse a 0-byte allocation; an empty buffer still needs a
     * distinct, freeable address. */
    ON_DEVICE(d, st, st = d->drv->mem_alloc(bytes ? bytes : 1, dptr));
    return st;
}

static void gpu_mem_free(void *dev, void *dptr)
{
    gpu_dev *d = GPU_DEV(dev);
    if (!dptr) return;
    ON_DEVICE_VOID(d, d->drv->mem_free(dptr));
}

/* The unified path maps each storage's host memory (lib/core/storage.c). Views may
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
    void *p = NULL;
    bool owned = false;
    ON_DEVICE(d, st, st = d->drv->host_register(host, bytes, &p, &owned));
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
            ON_DEVICE_VOID(d, d->drv->host_unregister(r->host));
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
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "copy direction %d is not H2D/D2H/D2D on a GPU", (int)c->dir);
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
    bool slices_follow = ss == sslab && ds == dslab;
    ON_DEVICE(d, st, {
        if (slices_follow && sp == w && dp == w) {
            st = d->drv->memcpy_1d(c->dir, c->dst, c->src, total, queue);
        } else if (slices_follow) {
            st = d->drv->memcpy_2d(c->dir, c->dst, dp, c->src, sp, w, rows, queue);
        } else {
            for (size_t k = 0; k < z && st == AMP_OK; ++k)
                st = d->drv->memcpy_2d(c->dir, (char *)c->dst + k * ds, dp, (const char *)c->src + k * ss, sp, w, h,
                                       queue);
        }
    });
    return st;
}


/* d's entry for peer t, looked up (the driver asked both ways) on first
 * use. peer_lock held. NULL when the table is full. */
static gpu_peer *peer_entry(gpu_dev *d, gpu_dev *t)
{
    for (size_t i = 0; i < d->npeers; ++i)
        if (d->peers[i].dev == t) return &d->peers[i];
    if (d->npeers == GPU_MAX_PEERS) return NULL;
    gpu_peer *p = &d->peers[d->npeers++];
    memset(p, 0, sizeof *p);
    p->dev = t;
    char there[128] = "", back[128] = "";
    bool to = false, from = false;
    amp_status st = d->drv->peer_possible(d->ordinal, t->ordinal, &to, there, sizeof there);
    if (st == AMP_OK) st = d->drv->peer_possible(t->ordinal, d->ordinal, &from, back, sizeof back);
    p->possible = st == AMP_OK && to && from;
    if (st != AMP_OK)
        snprintf(p->why, sizeof p->why, "through host memory: asking the driver failed: %s", amp_last_error());
    else if (p->possible)
        snprintf(p->why, sizeof p->why, "peer access possible both ways (%s; %s)", there, back);
    else
        snprintf(p->why, sizeof p->why, "through host memory: no peer access both ways (%s; %s)", there, back);
    return p;
}

/* Peer access between d and t, turned on both ways once, before the first
 * copy between them. A failure is kept (why) and the copies go on through
 * the driver's staged path, as without peer access. */
static void peer_prepare(gpu_dev *d, gpu_dev *t)
{
    pthread_mutex_lock(&d->peer_lock);
    gpu_peer *p = peer_entry(d, t);
    if (p && p->possible && !p->tried) {
        amp_status st, st2 = AMP_OK;
        ON_DEVICE(d, st, st = d->drv->peer_enable(t->ctx, t->ordinal));
        if (st == AMP_OK) ON_DEVICE(t, st2, st2 = t->drv->peer_enable(d->ctx, d->ordinal));
        p->tried = true;
        p->enabled = st == AMP_OK && st2 == AMP_OK;
        char was[sizeof p->why];
        snprintf(was, sizeof was, "%s", p->why);
        if (p->enabled)
            snprintf(p->why, sizeof p->why, "peer access on both ways (%.200s)", was);
        else
            snprintf(p->why, sizeof p->why, "through host memory: turning peer access on failed: %s", amp_last_error());
    }
    pthread_mutex_unlock(&d->peer_lock);
}

/* A copy to another device of the same driver: over the peer link once
 * peer access is on (the first copy between the two turns it on where the
 * driver allows), through host memory by the driver otherwise. */
static amp_status gpu_copy_peer(void *dev, void *queue, void *dst_dev, void *dst, const void *src, size_t bytes)
{
    gpu_dev *d = GPU_DEV(dev), *t = GPU_DEV(dst_dev);
    amp_status st;
    if (t->drv != d->drv)
        return amp__fail(AMP_ERROR_UNSUPPORTED, "no peer copy between %s:%d and %s:%d", d->drv->platform, d->ordinal,
                         t->drv->platform, t->ordinal);
    if (!bytes) return AMP_OK;
    if (t != d) peer_prepare(d, t);
    ON_DEVICE(d, st, st = d->drv->memcpy_peer(dst, t->ctx, src, d->ctx, bytes, queue));
    return st;
}

static amp_status gpu_peer_info(void *dev, void *dst_dev, bool *direct, bool *enabled, char *why, size_t n)
{
    gpu_dev *d = GPU_DEV(dev), *t = GPU_DEV(dst_dev);
    *direct = *enabled = false;
    if (t->drv != d->drv) {
        snprintf(why, n, "through host memory: %s:%d and %s:%d are GPUs of two drivers", d->drv->platform,
                 d->ordinal, t->drv->platform, t->ordinal);
        return AMP_OK;
    }
    if (t == d) {
        snprintf(why, n, "one device: copies stay in its memory");
        return AMP_OK;
    }
    pthread_mutex_lock(&d->peer_lock);
    gpu_peer *p = peer_entry(d, t);
    if (p) {
        *direct = p->possible && (!p->tried || p->enabled);
        *enabled = p->enabled;
        snprintf(why, n, "%s%s", p->why, p->possible && !p->tried ? "; turned on before the first copy" : "");
    } else {
        snprintf(why, n, "through host memory: more than %d peers", GPU_MAX_PEERS);
    }
    pthread_mutex_unlock(&d->peer_lock);
    return AMP_OK;
}

/* -------------------------------------------------------------- launch */

static amp_status gpu_launch(void *dev, void *queue, void *fn, const amp__launch *l)
{
    gpu_dev *d = GPU_DEV(dev);
    unsigned g[3], b[3];
    amp__launch_geometry(l->extent.rank, l->extent.v, l->tiled, l->sig->tile, (unsigned)l->block,
                         l->max_block > 0 ? (unsigned)l->max_block : 0, g, b);
    /* The core checked a stated block against max_tile_threads and the
     * kernel; x's own limit is the one left (equal to it on every device
     * known). */
    if (l->block && d->di.max_block[0] > 0 && b[0] > (unsigned)d->di.max_block[0])
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                         "launch of '%s': block_size %u exceeds the device's block x limit of %d", l->kernel_name,
                         b[0], d->di.max_block[0]);
    if (l->tiled) {
        /* A tile the device cannot run would fail in the driver with a bare
         * "invalid configuration"; say which limit it passes instead (the
         * core checked the total thread count). */
        static const char axis_name[3] = {'x', 'y', 'z'};
        int r = l->extent.rank;
        for (int a = 0; a < 3; ++a)
            if (d->di.max_block[a] > 0 && b[a] > (unsigned)d->di.max_block[a])
                return amp__fail(AMP_ERROR_UNSUPPORTED,
                                 "tiled launch of '%s': tile size %u along index dimension %d (block %c) exceeds "
                                 "the device's limit of %d",
                                 l->kernel_name, b[a], r - 1 - a, axis_name[a], d->di.max_block[a]);
        for (int a = 1; a < 3; ++a)
            if (g[a] > AMP__GRID_YZ_MAX)
                return amp__fail(AMP_ERROR_UNSUPPORTED,
                                 "tiled launch of '%s': %u tiles along index dimension %d (grid %c) exceed %u",
                                 l->kernel_name, g[a], r - 1 - a, axis_name[a], AMP__GRID_YZ_MAX);
        if ((int64_t)g[0] > (int64_t)d->di.max_grid[0])
            return amp__fail(AMP_ERROR_UNSUPPORTED, "tiled launch of '%s': %u tiles along grid x exceed %d",
                             l->kernel_name, g[0], d->di.max_grid[0]);
    }
    /* The drivers copy both parameters (sizes come from the kernel's own
     * metadata) before returning, so pointing into l is enough. */
    void *params[2] = {(void *)&l->info, (void *)l->pack};
    return d->drv->launch(d->ctx, fn, g, b, queue, params, l->in_graph && d->di.programmatic_launch);
}

/* Where the runtime compilers look for #include <...> by default, as far
 * as the scan must know: hipRTC (comgr) searches the host's directories,
 * /usr/local/include among them (keyed like the user's headers); NVRTC
 * only its builtin headers and -I. */
const amp__sys_dir *amp__gpu_system_dirs(const char *platform)
{
    static const amp__sys_dir hiprtc_dirs[] = {{"/usr/local/include", AMP__DIR_LOCAL}, {NULL, 0}};
    return strcmp(platform, "hip") ? NULL : hiprtc_dirs;
}

/* By the compiler, not the driver: hipRTC on HIP's NVIDIA platform is
 * NVRTC. */
static const amp__sys_dir *gpu_system_include_dirs(void *dev)
{
    return amp__gpu_system_dirs(GPU_DEV(dev)->di.nvrtc_compiler ? "cuda" : "hip");
}

/* -------------------------------------------------------------- graphs
 * By stream capture: while a queue records, the core queues only launches
 * and copies on it (from the recording thread), which the driver captures
 * into a graph instead of running; the graph is instantiated at the end
 * and replayed with one driver call.
 *
 * Replays of one executable graph: the drivers do not lock one against
 * concurrent calls, and one may not run alongside itself (its kernels'
 * parameters and the memory it clears are one copy). The core calls
 * gpu_graph_launch for one graph from one thread at a time (its replay
 * lock, lib/core/graph.c), always on the stream it was recorded on, so each
 * replay is queued after the one before on one stream and runs after it. */

/* A recording is counted before its capture begins and until it has
 * ended (gpu_dev.recording): an unload meanwhile waits for it. */
static void recording_ended(gpu_dev *d)
{
    pthread_mutex_lock(&d->queue_lock);
    d->recording--;
    unload_deferred_locked(d);
    pthread_mutex_unlock(&d->queue_lock);
}

static amp_status gpu_graph_begin(void *dev, void *queue)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st;
    ON_DEVICE(d, st, {
        pthread_mutex_lock(&d->queue_lock);
        d->recording++;
        pthread_mutex_unlock(&d->queue_lock);
        if ((st = d->drv->capture_begin(queue)) != AMP_OK) recording_ended(d);
    });
    return st;
}

static amp_status gpu_graph_end(void *dev, void *queue, bool keep, void **graph)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st;
    *graph = NULL;
    /* The capture has ended however capture_end returns (gpu_driver.h),
     * and the recording is over even where the device could not be
     * entered: the unloads waiting for it must not wait for ever. */
    ON_DEVICE_VOID(d, {
        st = enter_st_ == AMP_OK ? d->drv->capture_end(queue, keep, graph) : enter_st_;
        recording_ended(d);
    });
    return st;
}

static amp_status gpu_graph_launch(void *dev, void *queue, void *graph, bool async, uint64_t *node_ns)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st;
    /* A GPU queue runs everything asynchronously, and the drivers time a
     * graph as a whole: node_ns stays as it is. */
    (void)async;
    (void)node_ns;
    if (!graph) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "graph is NULL");
    ON_DEVICE(d, st, st = d->drv->graph_launch(graph, queue));
    return st;
}

static void gpu_graph_destroy(void *dev, void *graph)
{
    gpu_dev *d = GPU_DEV(dev);
    if (!graph) return;
    ON_DEVICE_VOID(d, d->drv->graph_destroy(graph));
}

/* ------------------------------------------------------------ the table */

static const amp__backend gpu_backend = {
    .name = "gpu",
    .prelude_prefix = NULL,
    .include_env = NULL,
    .named_headers = true,
    .device_lib_on_demand = true,
    .system_include_dirs = gpu_system_include_dirs,
    .cache_tag = gpu_cache_tag,
    .prebuilt_target = gpu_prebuilt_target,
    .compile = gpu_compile,
    .module_load = gpu_module_load,
    .module_unload = gpu_module_unload,
    .kernel_get = gpu_kernel_get,
    .queue_create = gpu_queue_create,
    .queue_wrap = gpu_queue_wrap,
    .queue_unwrap = gpu_queue_unwrap,
    .queue_native = gpu_queue_native,
    .queue_destroy = gpu_queue_destroy,
    .queue_wait = gpu_queue_wait,
    .queue_wait_for = gpu_queue_wait_for,
    .queue_wait_event = gpu_queue_wait_event,
    .event_record = gpu_event_record,
    .event_record_timed = gpu_event_record_timed,
    .event_elapsed = gpu_event_elapsed,
    .event_wait = gpu_event_wait,
    .event_wait_for = gpu_event_wait_for,
    .event_query = gpu_event_query,
    .event_release = gpu_event_release,
    .mem_alloc = gpu_mem_alloc,
    .mem_free = gpu_mem_free,
    .host_register = gpu_host_register,
    .host_unregister = gpu_host_unregister,
    .copy = gpu_copy,
    .copy_peer = gpu_copy_peer,
    .peer_info = gpu_peer_info,
    .launch = gpu_launch,
    .graph_begin = gpu_graph_begin,
    .graph_end = gpu_graph_end,
    .graph_launch = gpu_graph_launch,
    .graph_destroy = gpu_graph_destroy,
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

/* Environment variables the runtime compilers read that change their
 * output: part of the cache key. */
static const char *const hiprtc_env[] = {"HIPRTC_COMPILE_OPTIONS_APPEND", "HIPRTC_LINK_OPTIONS_APPEND", "HIP_PATH",
                                         "ROCM_PATH", "HIP_CLANG_PATH", NULL};

/* The pack whose code objects this device loads as its own compiler's
 * (lib/core/prebuilt.c): CUDA's CUBIN for its sm; an AMD code object for
 * its processor built for any xnack/sramecc mode (what a pack holds).
 * None on HIP's NVIDIA platform (hipRTC is NVRTC there, giving PTX of other
 * options), nor where hipRTC's options are appended to from the
 * environment (its output would not be what the user asked for). */
static void compose_prebuilt(gpu_dev *d)
{
    d->prebuilt[0] = 0;
    if (!strcmp(d->drv->platform, "cuda")) {
        if (!strncmp(d->di.arch, "sm_", 3)) snprintf(d->prebuilt, sizeof d->prebuilt, "%.63s", d->di.arch);
        return;
    }
    if (d->di.nvrtc_compiler || amp__env("HIPRTC_COMPILE_OPTIONS_APPEND") || amp__env("HIPRTC_LINK_OPTIONS_APPEND"))
        return;
    size_t n = strcspn(d->di.arch, ":");
    if (n > 0 && n < sizeof d->prebuilt && !strncmp(d->di.arch, "gfx", 3))
        snprintf(d->prebuilt, sizeof d->prebuilt, "%.*s", (int)n, d->di.arch);
}

static const char *gpu_prebuilt_target(void *dev) { return GPU_DEV(dev)->prebuilt[0] ? GPU_DEV(dev)->prebuilt : NULL; }

/* Each environment value framed by its length (a value could otherwise
 * spell another variable's entry), the whole fitted by digest (a long
 * value was cut, so that two that differed past the cut shared entries). */
static void compose_cache_tag(gpu_dev *d)
{
    amp__sb b = {0};
    amp__sb_printf(&b, "%s %s %s", d->drv->platform, d->di.arch, d->drv->version_tag);
    for (size_t i = 0; !strcmp(d->drv->platform, "hip") && hiprtc_env[i]; ++i) {
        const char *v = amp__env(hiprtc_env[i]);
        if (v) amp__sb_printf(&b, ";%s=%zu:%s", hiprtc_env[i], strlen(v), v);
    }
    /* Without memory for the text, a tag no other setting gives: nothing
     * cached under it is found again. */
    amp__fit_tag(d->cache_tag, sizeof d->cache_tag, b.oom ? "hip: no memory for the tag" : b.p);
    free(b.p);
}

/* C++ AMP's accelerator version, major << 16 | minor, from the arch name:
 * NVIDIA's compute capability (sm_90: 9.0, sm_120: 12.0); AMD's GFX IP
 * version, the stepping in the minor's low byte (gfx90a: 9, 0 << 8 | 0xa;
 * gfx1030: 10, 3 << 8). 0 for a name of neither form. */
static unsigned arch_version(const char *arch)
{
    int sm = 0;
    if (sscanf(arch, "sm_%d", &sm) == 1 && sm > 0) return (unsigned)(sm / 10) << 16 | (unsigned)(sm % 10);
    if (strncmp(arch, "gfx", 3)) return 0;
    size_t n = strcspn(arch + 3, ":");
    if (n < 3 || n > 4) return 0;
    char major[3] = {0};
    memcpy(major, arch + 3, n - 2);
    unsigned mn = 0, st = 0;
    if (sscanf(arch + 3 + n - 2, "%1x%1x", &mn, &st) != 2) return 0;
    return (unsigned)atoi(major) << 16 | mn << 8 | st;
}

static size_t enumerate_driver(const amp__gpu_driver *drv, amp__device_entry *out, size_t cap, char *why,
                               size_t why_size)
{
    size_t n = 0;
    int count = drv->device_count(why, why_size);
    for (int i = 0; i < count && n < cap; ++i) {
        gpu_dev *d = calloc(1, sizeof *d);
        if (!d) break;
        d->drv = drv;
        d->ordinal = i;
        pthread_mutex_init(&d->pool_lock, NULL);
        pthread_mutex_init(&d->reg_lock, NULL);
        pthread_mutex_init(&d->peer_lock, NULL);
        pthread_mutex_init(&d->queue_lock, NULL);
        drv->device_open(i, &d->ctx, &d->di);
        /* AMP_GRAPH_PROGRAMMATIC=0 records every launch as a plain one:
         * the way to rule programmatic launches out when a graph misbehaves. */
        d->di.programmatic_launch = d->di.programmatic_launch && amp__env_flag("AMP_GRAPH_PROGRAMMATIC", true);
        compose_cache_tag(d);
        compose_prebuilt(d);

        amp__device_entry *e = &out[n++];
        memset(e, 0, sizeof *e);
        e->be = &gpu_backend;
        e->dev = d;
        e->version = arch_version(d->di.arch);
        e->is_debug = false; /* kernels are built optimised, with no device debug layer */
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

/* AMP_GPU_DRIVERS: a comma-separated list of driver names. A list that
 * names something else probes no driver, and every report says why (the
 * enumeration cannot fail; hipamp-info and the no-GPU messages show it). */
static bool driver_wanted(const char *name, char *why, size_t n)
{
    const char *v = amp__env("AMP_GPU_DRIVERS");
    if (!v) return true;
    bool named = false, valid = true;
    for (const char *p = v; *p;) {
        size_t len = strcspn(p, ",");
        if (len == strlen(name) && !strncmp(p, name, len)) named = true;
        else if (!((len == 3 && !strncmp(p, "hip", 3)) || (len == 4 && !strncmp(p, "cuda", 4)))) valid = false;
        p += len;
        if (*p == ',') ++p;
    }
    if (!valid) {
        snprintf(why, n, "not probed: AMP_GPU_DRIVERS=\"%.64s\" is not a comma-separated list of hip and cuda", v);
        return false;
    }
    if (!named) snprintf(why, n, "not probed: AMP_GPU_DRIVERS=\"%.64s\" leaves it out", v);
    return named;
}

static size_t probe_driver(amp_gpu_driver_report *r, const char *name, const amp__gpu_driver *(*get)(const char **),
                           amp__device_entry *out, size_t cap)
{
    const char *why = NULL;
    snprintf(r->name, sizeof r->name, "%s", name);
    if (!driver_wanted(name, r->detail, sizeof r->detail)) return 0;
    const amp__gpu_driver *drv = get(&why);
    if (!drv) {
        snprintf(r->detail, sizeof r->detail, "%s", why ? why : "not loaded");
        return 0;
    }
    r->loaded = true;
    char count_why[512] = "";
    size_t n = cap ? enumerate_driver(drv, out, cap, count_why, sizeof count_why) : 0;
    r->device_count = (int)n;
    snprintf(r->detail, sizeof r->detail, "%.400s; %.120s%s%.400s", drv->library, drv->version_tag,
             count_why[0] ? "; " : "", count_why);
    return n;
}

size_t amp__gpu_enumerate(amp__device_entry *out, size_t cap, amp_gpu_driver_report reports[AMP__GPU_DRIVERS])
{
    size_t n = 0;
    memset(reports, 0, AMP__GPU_DRIVERS * sizeof *reports);
    if (!out || cap == 0) return 0;
    /* AMD first: on a machine with both, "hip:N" devices come before "cuda:N". */
    n += probe_driver(&reports[0], "hip", amp__hip_driver, out + n, cap - n);
    n += probe_driver(&reports[1], "cuda", amp__cuda_driver, out + n, cap - n);
    return n;
}
