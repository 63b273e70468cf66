/* gpu_backend.c — the GPU backend (lib/backend.h), written once over the normalized driver interface (gpu_driver.h) so that HIP and CUDA devices share every line of policy: enumeration, programs and their unloading, launch geometry, event pooling, native queues, graphs (memory, copies and host registration: gpu_memory.c). */
#include "gpu_dev.h"
#include "launch_geometry.h"

#include "base/core.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    amp__compile_job unit;
    char *owned = NULL;
    memset(out, 0, sizeof *out);
    char what[64];
    snprintf(what, sizeof what, "%s:%d", d->drv->platform, d->ordinal);
    amp_status st = amp__gpu_refuse_in_secure_program(what);
    if (st == AMP_OK) st = amp__gpu_option_macros(job, &unit, &owned);
    /* No context needed: hipRTC and NVRTC run without touching the device. */
    if (st == AMP_OK) st = d->drv->compile(d->di.arch, &unit, &out->bin, &out->bin_size);
    free(owned);
    return st;
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
 * the device is drained before any unload (errors ignored: after a sticky
 * fault a sync reports one, and the unload must still happen). Device
 * entered, queue_lock held, no queue recording. */
static void drain_queues_locked(gpu_dev *d)
{
    for (size_t i = 0; i < d->nqueues; ++i) (void)d->drv->stream_sync(d->queues[i]);
}

/* The unloads that waited for the recordings to end, once none records.
 * Device entered, queue_lock held. */
static void unload_deferred_locked(gpu_dev *d)
{
    if (d->recording > 0 || d->ndeferred == 0) return;
    drain_queues_locked(d);
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
        if (d->recording == 0) {
            drain_queues_locked(d);
            d->drv->module_unload(module);
        } else (void)ptr_push(&d->deferred, &d->ndeferred, &d->deferred_cap, module);
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
    size_t listed = d->nqueues;
    pthread_mutex_unlock(&d->queue_lock);
    return ok ? AMP_OK
              : amp__fail(AMP_ERROR_OUT_OF_MEMORY, "cannot list a new queue of %s:%d (%zu listed)", d->drv->platform,
                          d->ordinal, listed);
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

/* -------------------------------------------------------------- launch */

/* end (backend.h, launch's closing event) is left NULL: the core records
 * one after the call, in order on the stream behind the launch, so the
 * driver's status is the launch's (a fault is sticky on its context); only
 * another thread's command queued in between would count in the future's
 * elapsed time. Binding one here would record an event for every launch of
 * a multi-launch algorithm, where the core records one for the call. */
static amp_status gpu_launch(void *dev, void *queue, void *fn, const amp__launch *l, void **end)
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
    (void)end;
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

static amp_status gpu_graph_launch(void *dev, void *queue, void *graph, bool async, uint64_t *node_ns, void **end)
{
    gpu_dev *d = GPU_DEV(dev);
    amp_status st;
    /* A GPU queue runs everything asynchronously, and the drivers time a
     * graph as a whole: node_ns stays as it is. */
    (void)async;
    (void)node_ns;
    if (!graph) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "graph is NULL");
    (void)end; /* as gpu_launch's */
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
    .mem_alloc = amp__gpu_mem_alloc,
    .mem_free = amp__gpu_mem_free,
    .host_register = amp__gpu_host_register,
    .host_unregister = amp__gpu_host_unregister,
    .copy = amp__gpu_copy,
    .copy_peer = amp__gpu_copy_peer,
    .peer_info = amp__gpu_peer_info,
    .launch = gpu_launch,
    .graph_begin = gpu_graph_begin,
    .graph_end = gpu_graph_end,
    .graph_launch = gpu_graph_launch,
    .graph_destroy = gpu_graph_destroy,
};

/* --------------------------------------------------------- enumeration */

/* AMP_UNIFIED_MEMORY: "on" forces zero-copy views (through host_register on a
 * discrete GPU, for testing), "off" forbids them, "auto" (also unset or any
 * other value, which is said and ignored rather than failing enumeration) decides from
 * the hardware: an integrated GPU that can reach host memory coherently
 * (pageable access or managed memory). A discrete GPU never qualifies, not
 * even an xnack+ target (MI250X/MI300X with HSA_XNACK=1): it can fault host
 * pages over the interconnect, but every kernel access would then cross it,
 * tens of times slower than copying the view to device memory once. */
static bool unified_memory(const amp__gpu_devinfo *di, char *why, size_t n)
{
    const char *v = amp__env("AMP_UNIFIED_MEMORY");
    int forced = amp__env_flag_or_auto("AMP_UNIFIED_MEMORY");
    bool xnack = strstr(di->arch, "xnack+") != NULL;
    if (forced == 1) {
        snprintf(why, n, "zero-copy: forced by AMP_UNIFIED_MEMORY=%s%s", v,
                 di->integrated ? "" : " (a discrete GPU then reads host memory over the interconnect)");
        return true;
    }
    if (forced == 0) {
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
