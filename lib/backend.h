/* backend.h — the one table of operations every accelerator backend (lib/gpu,
 * lib/cpu) implements, the plain-data records the core hands it, and what
 * the core guarantees before each call. */
#ifndef AMP_BACKEND_H
#define AMP_BACKEND_H

#include "hipamp.h"
#include "base/signature.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One strided box copy of up to 3 dimensions (the core splits higher ranks).
 * Sizes and pitches in bytes: rows of width_bytes, height rows per slice,
 * depth slices. Pitches describe the enclosing allocations: row pitch and
 * slice pitch (slice pitch is always a multiple of row pitch). A width,
 * height or depth of 0 is no bytes (a graph records an empty section's copy
 * as given). H2H copies host memory to host memory (the CPU accelerator's
 * arrays, staging). */
typedef enum amp__copy_dir { AMP__H2D = 1, AMP__D2H = 2, AMP__D2D = 3, AMP__H2H = 4 } amp__copy_dir;
typedef struct amp__copy {
    amp__copy_dir dir;
    void *dst;
    const void *src;
    size_t width_bytes, height, depth;
    size_t dst_pitch, dst_slice_pitch;
    size_t src_pitch, src_slice_pitch;
} amp__copy;

/* What the core hands a launch, already validated against the kernel's
 * signature (lib/core/signature.c, lib/core/launch.c): extent has the signature's rank
 * and positive dimensions, a tiled extent is divisible by sig->tile and the
 * tile has at most the accelerator's max_tile_threads; pack is never NULL,
 * aligned to AMP__MAX_PARAM_ALIGN, sig->pack_size bytes laid out as sig describes (device
 * pointers in place) and valid for the duration of the launch call only.
 * Backends check only their own device limits. info is the launch_info the
 * prelude's entry point reads. */
typedef struct amp__launch {
    const char *kernel_name;
    const amp__signature *sig;
    amp__launch_info info;
    amp_extent extent;
    bool tiled;
    const void *pack;
    size_t pack_size;
    /* The caller learns the outcome from the queue (a future, a wait), not
     * from the launch call: a backend that runs launches in the calling
     * thread may run this one on a thread of its own. */
    bool async;
    /* Captured into a graph (lib/core/graph.c), not run now: a GPU backend may
     * make it a programmatic dependent launch, which the graph replays with
     * the kernel's start overlapping the end of the one before (the
     * prelude's entry point waits for that one's completion and memory). */
    bool in_graph;
    /* Threads per block of a simple launch (amp_launch_options.block_size),
     * checked by the core against the accelerator's and the kernel's
     * limits; 0: the backend's choice. Always 0 for a tiled launch. */
    int block;
    /* The most threads a block of this kernel may have (its
     * AMP_KERNEL_MAX_BLOCK bound, or what its registers allow): the
     * backend's own choice (block 0) stays within it. */
    int max_block;
} amp__launch;

/* A header the core found for a source (lib/includes/include_scan.c) and keyed the
 * build on: a flat name of the core's own ("hipamp-3-params.h": no
 * directory, no "..", which a compiler that writes named headers into a
 * directory of its own (comgr) would follow), the file it resolved to, and
 * its content (NUL-terminated, size bytes). Compilers that take named
 * headers (hipRTC, NVRTC) are handed these, with the #include lines of the
 * source and of each header rewritten to those names and a #line naming
 * the real file first, so they compile exactly what was keyed. */
typedef struct amp__header {
    const char *name;
    const char *path;
    const char *content;
    size_t size;
} amp__header;

/* A directory a compiler searches by default for #include <...> (and for
 * "..." after the user's directories), as the core's include scan needs to
 * know it. COMPILER: the compiler's own headers (libstdc++, its builtin
 * headers): identified by the compiler's version in the cache tag, so the
 * scan neither keys nor follows what it finds there. LIBC: the C library's
 * (/usr/include and its multiarch directory): identified by the C
 * library's version in the cache tag when only the compiler reads them, but
 * keyed when a kernel includes them (other packages put headers there too).
 * LOCAL: anything else (/usr/local/include): keyed like the user's. */
enum { AMP__DIR_COMPILER = 1, AMP__DIR_LIBC = 2, AMP__DIR_LOCAL = 3 };
typedef struct amp__sys_dir {
    const char *path; /* absolute, symbolic links resolved */
    int kind;         /* AMP__DIR_* */
} amp__sys_dir;

/* An environment variable of header directories: searched as -I
 * directories after the -I options (CPATH), or (system) as -isystem ones
 * after the -isystem options (CPLUS_INCLUDE_PATH); an empty element is the
 * working directory. */
typedef struct amp__include_env {
    const char *name;
    bool system;
} amp__include_env;

/* One compile. source is the complete translation unit (the backend's
 * prelude prefix, the common prelude, then a #line so the user's lines keep
 * their numbers: lib/base/prelude.c). source_name names the user's file in
 * diagnostics; source_dir (NULL: none) is where its quoted includes resolve;
 * options are the user's extra flags. timeout_s > 0 limits a compiler that
 * runs as a separate process (in-process compilers cannot be stopped),
 * counted from started_ns (amp__now_ns when the build began, before its
 * include scan; 0: from the compile's start), so that the questions the
 * scan asks the compiler (its include directories, lib/cpu) spend the same
 * budget and a build ends within about timeout_s, not twice it. */
typedef struct amp__compile_job {
    const char *source;
    const char *source_name;
    const char *source_dir;
    const char *options;
    const amp__header *headers;
    size_t nheaders;
    unsigned timeout_s;
    uint64_t started_ns;
    /* The disk cache (lib/core/disk_cache.c), for what a backend keeps
     * between processes besides modules (the CPU accelerator's precompiled
     * header), under a key of its own (a SHA-256 over a domain name of its
     * own and everything that shapes the data): cache_load returns a
     * malloc'ed payload the cache authenticated (its MAC), or NULL;
     * cache_store keeps one (at most 64 MiB). NULL: no disk cache in use. */
    void *(*cache_load)(const uint8_t key[32], size_t *size);
    void (*cache_store)(const uint8_t key[32], const void *data, size_t size);
    /* The library's prebuilt pack of this accelerator's target pack_target
     * (lib/core/prebuilt.c; NULL: it loads none), for the same kind of data
     * made when the library was built: pack_load returns a malloc'ed entry
     * whose digest the pack checked, or NULL; pack_capture, set only while
     * hipamp-prebuild writes the packs, hands it an entry a backend made or
     * loaded (NULL in any other program). */
    const char *pack_target;
    void *(*pack_load)(const char *target, const uint8_t key[32], size_t *size);
    void (*pack_capture)(const char *target, const uint8_t key[32], const void *data, size_t size);
} amp__compile_job;

/* What a compile returns. bin is malloc'ed and owned by the caller. deps,
 * from a compiler that reads headers itself (not named_headers), is a
 * malloc'ed list of every file it read besides the translation unit, system
 * headers included, one absolute path (symbolic links resolved) a line: the
 * core loads nothing built from a file it did not key or that is not the
 * compiler's own (lib/core/program.c). no_store, when not empty, says why the
 * result (right, but shaped by something that may not recur: the CPU loop
 * transformation timed out) must not be stored on disk. */
typedef struct amp__compile_output {
    void *bin;
    size_t bin_size;
    char *deps;
    char no_store[256];
} amp__compile_output;

/* A kernel as the backend found it in a loaded module. */
typedef struct amp__kernel_props {
    void *fn;                 /* what launch takes */
    amp__signature sig;       /* copy of the name##__amp_sig record, unvalidated */
    size_t tile_static_bytes; /* tile_static memory a tile uses, measured from the code */
    char execution[192];      /* how it runs: "gpu", "cpu loops", "cpu fibers: <why>" */
    int max_block;            /* simple kernels: the most threads a block of a launch may have
                                 (its bound, AMP_KERNEL_MAX_BLOCK; on a GPU the driver's figure,
                                 which its registers may lower); 0: not known */
    char tile_static_note[512]; /* what tile_static_bytes holds besides the kernel's own, for the
                                   refusal of a kernel over the limit ("" where nothing) */
} amp__kernel_props;

/* Every function returns AMP_OK or a status after amp__fail() set the
 * thread's message; void functions ignore failures on purpose (they release
 * things and must stay safe after a device fault). Handles (dev, module,
 * queue, event, fn) are the backend's own opaque pointers. Functions may be
 * called from several threads at once; the backend locks what it shares and
 * never calls back into the core (core.h's helpers excepted).
 *
 * Locks the core may hold during a call (lib/core/internal.h has the order):
 *   [none]    no core lock;
 *   [storage] one or more storage locks (a launch or copy preparing its data);
 *   [graph]   the graph's replay lock (lib/core/graph.c), storage locks inside it;
 *   [queue]   the queue's mark lock (recording a wait point), a leaf for the
 *             backend: it must not block on other queues' work under it. */
typedef struct amp__backend {
    const char *name; /* "gpu", "cpu" */
    /* Text the core puts before the common prelude for this backend (the CPU
     * accelerator's host shims), or NULL. */
    const char *prelude_prefix;
    /* Environment variables (a list ending in a NULL name, or NULL)
     * holding ':'-separated directories the compiler searches for headers
     * (the CPU compiler's CPATH, CPLUS_INCLUDE_PATH): the core scans them
     * too, where the compiler does, to key builds on those headers. */
    const amp__include_env *include_env;
    /* true: the compiler takes every header by name (job->headers) and
     * cannot say what else it read (hipRTC, NVRTC). The core then hands it
     * each header the scan found under a flat name of the core's choosing,
     * rewrites the #include lines to match, and refuses what it cannot
     * rewrite (a computed #include, -include options). false: the compiler
     * reads headers itself and reports them (compile output deps). */
    bool named_headers;
    /* true: a program whose text (source, headers, options) names nothing
     * of the device library (amp__device_lib_wanted) is compiled without
     * it, and again with it when that compile fails (a name the check does
     * not know): amp__compile_on_demand. Parsing the library is a sixth
     * of a small kernel's compile through NVRTC; the CPU accelerator's
     * precompiled prelude holds it at no cost. */
    bool device_lib_on_demand;
    /* [none] The directories the compiler searches by default, in its
     * order, ending with a NULL path; NULL (or a NULL function) for none.
     * The array lives as long as the device. */
    const amp__sys_dir *(*system_include_dirs)(void *dev);

    /* [none] Text that changes whenever compiled output would: compiler and
     * its version, target arch with features, flags, the environment
     * variables the compiler reads. Part of every compile-cache key. */
    const char *(*cache_tag)(void *dev);
    /* [none] The name of the pack (lib/core/prebuilt.c) whose code objects
     * this device loads as its own compiler's ("sm_90", "gfx90a", the CPU
     * accelerator's "cpu-" and a hash of everything its code depends on),
     * or NULL: none would be (NULL function: the same). */
    const char *(*prebuilt_target)(void *dev);
    /* [none] AMP_ERROR_COMPILE with the log in amp_last_error. */
    amp_status (*compile)(void *dev, const amp__compile_job *job, amp__compile_output *out);
    /* [none] Load a compiled binary. The binary may come from the disk cache:
     * it was authenticated there, but must still be refused cleanly when it
     * does not suit this device (AMP_ERROR_DEVICE). */
    amp_status (*module_load)(void *dev, const void *bin, size_t bin_size, void **module);
    /* [none] Waits for every queued launch of the module before unloading. */
    void (*module_unload)(void *dev, void *module);
    /* [none] Find kernel name and its signature record (the name##__amp_sig
     * global). AMP_ERROR_KERNEL_NOT_FOUND when either is absent. */
    amp_status (*kernel_get)(void *dev, void *module, const char *name, amp__kernel_props *out);

    /* [none] Queues: in-order streams. queue_wait blocks until all queued
     * work ended and reports a kernel fault as AMP_ERROR_DEVICE with the
     * driver's text. */
    amp_status (*queue_create)(void *dev, void **queue);
    /* [none] Use a queue the caller made with the vendor runtime (hipStream_t,
     * CUstream) as this backend's queue; queue_destroy is then never called
     * on it, queue_unwrap is when the core lets it go (the vendor's handle
     * stays the caller's). NULL function: the backend has no native queues. */
    amp_status (*queue_wrap)(void *dev, void *native, void **queue);
    void (*queue_unwrap)(void *dev, void *queue);
    /* [none] The vendor's handle of a queue (what queue_wrap takes), or
     * NULL when there is none (the CPU accelerator). */
    void *(*queue_native)(void *dev, void *queue);
    void (*queue_destroy)(void *dev, void *queue);
    amp_status (*queue_wait)(void *dev, void *queue);
    /* [none] queue_wait for at most ms milliseconds (0: only look):
     * AMP_ERROR_TIMEOUT when work is still queued then (it goes on). */
    amp_status (*queue_wait_for)(void *dev, void *queue, uint32_t ms);
    /* [storage] Make queue wait (on the device) for event before later work. */
    amp_status (*queue_wait_event)(void *dev, void *queue, void *event);

    /* [queue] Events mark a point in a queue; released with event_release.
     * A timed event also records when the queue passed it (event_elapsed). */
    amp_status (*event_record)(void *dev, void *queue, void **event);
    amp_status (*event_record_timed)(void *dev, void *queue, void **event);
    /* [none] Milliseconds between two timed events that have both passed. */
    amp_status (*event_elapsed)(void *dev, void *start, void *end, float *ms);
    /* [storage] */
    amp_status (*event_wait)(void *dev, void *event);
    /* [none] event_wait for at most ms milliseconds (0: only look):
     * AMP_ERROR_TIMEOUT when the queue has not passed the event then. */
    amp_status (*event_wait_for)(void *dev, void *event, uint32_t ms);
    amp_status (*event_query)(void *dev, void *event, bool *done);
    void (*event_release)(void *dev, void *event);

    /* [storage] Device memory. AMP_ERROR_OUT_OF_MEMORY names the size. */
    amp_status (*mem_alloc)(void *dev, size_t bytes, void **dptr);
    void (*mem_free)(void *dev, void *dptr);
    /* [storage] Map host memory for device access (the forced unified path);
     * *dptr is the device's address of host. NULL function: unsupported. */
    amp_status (*host_register)(void *dev, void *host, size_t bytes, void **dptr);
    void (*host_unregister)(void *dev, void *host);
    /* [storage] Queue a copy on queue (ordered after earlier work on it).
     * Host memory may be pageable and may be reused once the call returns
     * for H2D; D2H has landed once the queue passed the copy. */
    amp_status (*copy)(void *dev, void *queue, const amp__copy *c);
    /* [storage] Queue a copy of bytes from src on this device to dst on
     * dst_dev (another device of this backend) on queue. NULL function, or
     * AMP_ERROR_UNSUPPORTED: the core stages the copy through host memory. */
    amp_status (*copy_peer)(void *dev, void *queue, void *dst_dev, void *dst, const void *src, size_t bytes);
    /* [none] How copies between this device and dst_dev (another of this
     * backend) move: *direct when the driver allows peer access both ways
     * (copy_peer then turns it on before the first copy between them, and
     * *enabled says it did), else through host memory; why says so in
     * words. Enables nothing. NULL function: always through host memory. */
    amp_status (*peer_info)(void *dev, void *dst_dev, bool *direct, bool *enabled, char *why, size_t why_size);

    /* [storage] Queue a launch of fn on queue. The pack is consumed before
     * return. end (NULL: not wanted; the core asks only for timed work, see
     * lib/core/queue.c): on success, a timed event (event_release) bound to
     * this launch itself, made atomically with queueing it, so that no
     * other thread's command comes between them: it completes when the
     * launch does and says what the launch did (its failure, or that an
     * earlier failure kept it from running), never what a later command or
     * an emptied queue says. *end left NULL: none made (the core then
     * records one after the call). Untouched on failure. The GPU backend,
     * whose queue is an in-order stream (an event recorded after the call
     * still says the launch's status), makes none: gpu_backend.c. */
    amp_status (*launch)(void *dev, void *queue, void *fn, const amp__launch *l, void **end);

    /* Graphs (lib/core/graph.c): record a queue's commands once, replay them
     * many times. Between graph_begin and graph_end the core calls only
     * launch and copy on the queue, from the thread that began, and each
     * is recorded instead of run (its pointers and pack are fixed there);
     * the core refuses everything else on the queue meanwhile, and never
     * frees or moves memory a graph refers to while the graph exists.
     * NULL functions: the backend cannot record (the core refuses).
     *
     * [none] Start recording queue's commands. AMP_ERROR_UNSUPPORTED when
     * the driver has no graphs. */
    amp_status (*graph_begin)(void *dev, void *queue);
    /* [none] Stop recording. keep: *graph is the recording made ready to
     * replay (NULL when nothing was recorded); otherwise it is thrown away
     * and *graph is NULL. Recording has stopped however this ends. Called
     * from the thread that began, or from another once that one has exited
     * (the GPUs capture in relaxed mode, which allows it). */
    amp_status (*graph_end)(void *dev, void *queue, bool keep, void **graph);
    /* [graph] Queue one replay of graph on queue
     * (the queue it was recorded on), in order after earlier work there.
     * The core never calls this for one graph from two threads at once
     * (lib/core/graph.c), so a backend may reuse what the graph holds from one
     * replay to the next, once the replay queued before has run. async as in
     * amp__launch: false lets a backend that runs launches in the calling
     * thread run the replay there and return its failure; it then fills
     * node_ns (may be NULL: not wanted) with each recorded command's start
     * and end on the host clock (amp__now_ns), two values a command in
     * recording order, for traces. Otherwise node_ns is left as it is.
     * end: as launch's, bound to the replay as a whole. */
    amp_status (*graph_launch)(void *dev, void *queue, void *graph, bool async, uint64_t *node_ns, void **end);
    /* [none] Free a graph no replay of which is still queued. */
    void (*graph_destroy)(void *dev, void *graph);
} amp__backend;

/* One accelerator a backend found, all filled by the backend. version and
 * is_debug are C++ AMP's accelerator properties (amp_accelerator_get_version,
 * amp_accelerator_get_is_debug say what they hold per backend). */
typedef struct amp__device_entry {
    const amp__backend *be;
    void *dev;
    amp_accelerator_info info;
    unsigned version; /* major << 16 | minor */
    bool is_debug;
} amp__device_entry;

/* Probe the vendor libraries (dlopen) and append every GPU to out (at most
 * cap), and what each driver found to reports (AMP__GPU_DRIVERS of them, in
 * listing order). Never fails: a machine without ROCm/CUDA yields 0. Called
 * once (under the registry's initialisation). AMP_GPU_DRIVERS ("hip",
 * "cuda", "hip,cuda") names the drivers probed; unset: all. */
#define AMP__GPU_DRIVERS 2
size_t amp__gpu_enumerate(amp__device_entry *out, size_t cap, amp_gpu_driver_report reports[AMP__GPU_DRIVERS]);
/* The CPU accelerator (always present; info.is_available says if usable). */
void amp__cpu_enumerate(amp__device_entry *out);

#endif /* AMP_BACKEND_H */
