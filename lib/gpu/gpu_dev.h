/* gpu_dev.h — one GPU as the GPU backend's files share it (lib/gpu/gpu_backend.c, gpu_memory.c): the gpu_dev record, its locks and their order, ON_DEVICE, and the memory entry points gpu_memory.c gives the backend table. Private: never installed. */
#ifndef HIPAMP_GPU_DEV_H
#define HIPAMP_GPU_DEV_H

#include "gpu_driver.h"

#include "base/core.h"

#include <pthread.h>

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

/* ------------------------------------------------ memory (gpu_memory.c) */

amp_status amp__gpu_mem_alloc(void *dev, size_t bytes, void **dptr);
void amp__gpu_mem_free(void *dev, void *dptr);
amp_status amp__gpu_host_register(void *dev, void *host, size_t bytes, void **dptr);
void amp__gpu_host_unregister(void *dev, void *host);
amp_status amp__gpu_copy(void *dev, void *queue, const amp__copy *c);
amp_status amp__gpu_copy_peer(void *dev, void *queue, void *dst_dev, void *dst, const void *src, size_t bytes);
amp_status amp__gpu_peer_info(void *dev, void *dst_dev, bool *direct, bool *enabled, char *why, size_t n);

#endif
