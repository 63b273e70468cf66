/* backend.h — the one table of operations every accelerator backend (lib/gpu,
 * lib/cpu) implements, and the plain-data records the core hands it. */
#ifndef AMP_BACKEND_H
#define AMP_BACKEND_H

#include "hipamp.h"
#include "signature.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One strided box copy of up to 3 dimensions (the core splits higher ranks).
 * Sizes and pitches in bytes: rows of width_bytes, height rows per slice,
 * depth slices. Pitches describe the enclosing allocations: row pitch and
 * slice pitch (slice pitch is always a multiple of row pitch). */
typedef enum amp__copy_dir { AMP__H2D = 1, AMP__D2H = 2, AMP__D2D = 3 } amp__copy_dir;
typedef struct amp__copy {
    amp__copy_dir dir;
    void *dst;
    const void *src;
    size_t width_bytes, height, depth;
    size_t dst_pitch, dst_slice_pitch;
    size_t src_pitch, src_slice_pitch;
} amp__copy;

/* What the core hands a launch, already validated against the kernel's
 * signature (amp__check_domain, amp__signature_problem in the core): extent
 * has the signature's rank and positive dimensions, a tiled extent is
 * divisible by sig->tile and the tile has at most the accelerator's
 * max_tile_threads; pack is never NULL, 16-byte aligned, sig->pack_size
 * bytes laid out as sig describes (device pointers in place) and valid for
 * the duration of the launch call. Backends check only their own device
 * limits. info is the launch_info the prelude's entry point reads. */
typedef struct amp__launch {
    const char *kernel_name;
    const amp__signature *sig;
    amp__launch_info info;
    amp_extent extent;
    bool tiled;
    const void *pack;
    size_t pack_size;
} amp__launch;

/* Every function returns AMP_OK or a status after amp__fail() set the
 * thread's message. Handles (dev, module, queue, event, fn) are the backend's
 * own opaque pointers. Unless noted, functions may be called from several
 * threads at once; the backend locks what it shares. */
typedef struct amp__backend {
    const char *name; /* "gpu", "cpu" */

    /* Text that changes whenever compiled output would: compiler version,
     * target arch with features. Part of the compile-cache key. */
    const char *(*cache_tag)(void *dev);
    /* Compile a complete translation unit (prelude already prepended, with
     * #line so the user's lines keep their numbers). *bin is malloc'ed and
     * owned by the caller. AMP_ERROR_COMPILE with the log in amp_last_error. */
    amp_status (*compile)(void *dev, const char *source, const char *source_name,
                          const char *options, void **bin, size_t *bin_size);
    amp_status (*module_load)(void *dev, const void *bin, size_t bin_size, void **module);
    void (*module_unload)(void *dev, void *module);
    /* Find kernel name in module, and copy its signature record (the
     * name##__amp_sig global). AMP_ERROR_KERNEL_NOT_FOUND when absent. */
    amp_status (*kernel_get)(void *dev, void *module, const char *name, void **fn,
                             amp__signature *sig);

    /* Queues: in-order streams. queue_wait blocks until all queued work ended
     * and reports a kernel fault as AMP_ERROR_DEVICE with the driver's text. */
    amp_status (*queue_create)(void *dev, void **queue);
    void (*queue_destroy)(void *dev, void *queue);
    amp_status (*queue_wait)(void *dev, void *queue);
    /* Make queue wait (on the device) for event before later work. */
    amp_status (*queue_wait_event)(void *dev, void *queue, void *event);

    /* Events mark a point in a queue; released with event_release. */
    amp_status (*event_record)(void *dev, void *queue, void **event);
    amp_status (*event_wait)(void *dev, void *event);
    amp_status (*event_query)(void *dev, void *event, bool *done);
    void (*event_release)(void *dev, void *event);

    /* Device memory. AMP_ERROR_OUT_OF_MEMORY names the size. */
    amp_status (*mem_alloc)(void *dev, size_t bytes, void **dptr);
    void (*mem_free)(void *dev, void *dptr);
    /* Map host memory for device access (the forced unified path); *dptr is
     * the device's address of host. NULL function: unsupported. */
    amp_status (*host_register)(void *dev, void *host, size_t bytes, void **dptr);
    void (*host_unregister)(void *dev, void *host);
    /* Queue a copy on queue (ordered after earlier work on it). */
    amp_status (*copy)(void *dev, void *queue, const amp__copy *c);

    /* Queue a launch of fn on queue. The pack is copied before return. */
    amp_status (*launch)(void *dev, void *queue, void *fn, const amp__launch *l);
} amp__backend;

/* One accelerator a backend found. info is filled by the backend. */
typedef struct amp__device_entry {
    const amp__backend *be;
    void *dev;
    amp_accelerator_info info;
} amp__device_entry;

/* Probe the vendor libraries (dlopen) and append every GPU to out (at most
 * cap). Never fails: a machine without ROCm/CUDA yields 0. Called once. */
size_t amp__gpu_enumerate(amp__device_entry *out, size_t cap);
/* The CPU accelerator (always present; info.is_available says if usable). */
void amp__cpu_enumerate(amp__device_entry *out);

#endif /* AMP_BACKEND_H */
