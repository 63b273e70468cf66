/* hipamp.h — the public C API of hipamp: C++ AMP's programming model for C
 * programs on AMD GPUs/APUs (HIP + hipRTC), NVIDIA GPUs (CUDA driver + NVRTC)
 * and the CPU.
 *
 * Conventions that hold for every function below unless its comment says
 * otherwise:
 *  - Every fallible function returns amp_status (AMP_OK == 0, errors < 0).
 *    On failure, out-params are set to NULL/zero and amp_last_error() holds a
 *    message for this thread that names the bad value.
 *  - Handles are opaque; each has a create/destroy pair; destroy(NULL) is a
 *    no-op returning AMP_OK.
 *  - Every function is safe to call from several threads at once; a single
 *    handle may be shared between threads except where noted.
 *  - Nothing aborts, exits or longjmps out of the library.
 */
#ifndef HIPAMP_H
#define HIPAMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(HIPAMP_STATIC_DEFINE)
#define AMP_API
#elif defined(HIPAMP_BUILDING)
#define AMP_API __attribute__((visibility("default")))
#else
#define AMP_API
#endif

#define HIPAMP_VERSION_MAJOR 0
#define HIPAMP_VERSION_MINOR 1
#define HIPAMP_VERSION_PATCH 0

/* Highest rank of an extent/index (simple-model launches accept 1..this).
 * Tiled launches accept ranks 1..3. */
#define AMP_MAX_RANK 4
/* Most parameters a kernel may take (index excluded). */
#define AMP_MAX_KERNEL_PARAMS 32

/* ---------------------------------------------------------------- status */

typedef enum amp_status {
    AMP_OK = 0,
    AMP_ERROR_INVALID_ARGUMENT = -1,
    AMP_ERROR_INVALID_EXTENT = -2,
    AMP_ERROR_INVALID_COMPUTE_DOMAIN = -3, /* tiled extent not divisible, bad tile */
    AMP_ERROR_OUT_OF_BOUNDS = -4,
    AMP_ERROR_OUT_OF_MEMORY = -5,
    AMP_ERROR_NO_ACCELERATOR = -6,
    AMP_ERROR_UNSUPPORTED = -7,
    AMP_ERROR_COMPILE = -8,
    AMP_ERROR_KERNEL_NOT_FOUND = -9,
    AMP_ERROR_ARGUMENT_MISMATCH = -10,
    AMP_ERROR_DEVICE = -11,
    AMP_ERROR_BUSY = -12
} amp_status;

/* Static name of a status ("AMP_ERROR_COMPILE"); "AMP_STATUS_UNKNOWN" for a
 * value outside the enum. Never NULL, never fails. */
AMP_API const char *amp_status_name(amp_status s);

/* Detail of the last failure on the calling thread ("" when none). The
 * string is owned by the library and valid until the next hipamp call on this
 * thread. A successful call does not clear it. Never NULL. */
AMP_API const char *amp_last_error(void);

/* Library version string, e.g. "0.1.0". Static; never NULL. */
AMP_API const char *amp_version(void);

/* ------------------------------------------------------- extent and index */

typedef struct amp_extent { int rank; int v[AMP_MAX_RANK]; } amp_extent;
typedef struct amp_index  { int rank; int v[AMP_MAX_RANK]; } amp_index;

/* Constructors: pure value functions; they never fail (validation happens in
 * the calls that take an extent). */
AMP_API amp_extent amp_extent_1d(int e0);
AMP_API amp_extent amp_extent_2d(int e0, int e1);
AMP_API amp_extent amp_extent_3d(int e0, int e1, int e2);
AMP_API amp_extent amp_extent_4d(int e0, int e1, int e2, int e3);
AMP_API amp_index amp_index_1d(int i0);
AMP_API amp_index amp_index_2d(int i0, int i1);
AMP_API amp_index amp_index_3d(int i0, int i1, int i2);
AMP_API amp_index amp_index_4d(int i0, int i1, int i2, int i3);

/* AMP_OK when rank is 1..AMP_MAX_RANK and every dimension is > 0 and the
 * element count fits in int64; else AMP_ERROR_INVALID_EXTENT naming the
 * dimension. */
AMP_API amp_status amp_extent_validate(amp_extent e);
/* Element count; -1 for an invalid extent (see amp_extent_validate). */
AMP_API int64_t amp_extent_size(amp_extent e);
/* True when ranks match and 0 <= i[d] < e[d] for every d. */
AMP_API bool amp_extent_contains(amp_extent e, amp_index i);
AMP_API bool amp_extent_equal(amp_extent a, amp_extent b);
AMP_API bool amp_index_equal(amp_index a, amp_index b);
/* Element-wise arithmetic. AMP_ERROR_INVALID_ARGUMENT for rank mismatch or a
 * NULL out, AMP_ERROR_OUT_OF_BOUNDS when a component overflows int. */
AMP_API amp_status amp_index_add(amp_index a, amp_index b, amp_index *out);
AMP_API amp_status amp_index_sub(amp_index a, amp_index b, amp_index *out);
AMP_API amp_status amp_extent_add(amp_extent e, amp_index i, amp_extent *out);
AMP_API amp_status amp_extent_sub(amp_extent e, amp_index i, amp_extent *out);

/* -------------------------------------------------------- tiled extents */

/* tile[0..rank-1] are the tile sizes, in the same order as the extent. */
typedef struct amp_tiled_extent { amp_extent extent; int tile[3]; } amp_tiled_extent;

/* Tile extent e (rank 1..3) by tile[0..rank-1]. The extent need not be
 * divisible (use pad/truncate, or the launch refuses it).
 * AMP_ERROR_INVALID_EXTENT: bad extent. AMP_ERROR_INVALID_COMPUTE_DOMAIN: rank
 * not 1..3, a tile size <= 0, or more threads per tile than AMP_MAX_TILE_THREADS.
 * AMP_ERROR_INVALID_ARGUMENT: NULL tile or out. */
#define AMP_MAX_TILE_THREADS 1024
AMP_API amp_status amp_extent_tile(amp_extent e, const int *tile, amp_tiled_extent *out);
/* Round each dimension up to a multiple of its tile. AMP_ERROR_INVALID_EXTENT
 * when the padded size passes INT_MAX. */
AMP_API amp_status amp_tiled_extent_pad(amp_tiled_extent t, amp_tiled_extent *out);
/* Round each dimension down to a multiple of its tile.
 * AMP_ERROR_INVALID_EXTENT when a dimension would become 0. */
AMP_API amp_status amp_tiled_extent_truncate(amp_tiled_extent t, amp_tiled_extent *out);
/* True when every dimension is a positive multiple of its tile. */
AMP_API bool amp_tiled_extent_is_divisible(amp_tiled_extent t);

/* ------------------------------------------------------- accelerators */

typedef struct amp_accelerator amp_accelerator;
typedef struct amp_accelerator_view amp_accelerator_view;

typedef struct amp_accelerator_info {
    char description[256];  /* "NVIDIA H100 80GB HBM3", "CPU (16 threads)" */
    char device_path[32];   /* "hip:0", "cuda:0", "cpu" */
    char arch[96];          /* "gfx90a:sramecc+:xnack-", "sm_90", "x86_64" */
    uint64_t dedicated_memory; /* bytes; 0 for the CPU */
    int compute_units;
    int max_tile_threads;
    size_t max_tile_static_bytes;
    bool is_emulated;          /* the CPU accelerator */
    bool is_unified_memory;    /* array_view runs zero-copy on host memory */
    bool supports_double_precision;
    bool is_available;         /* false: listed but unusable (see unavailable_reason) */
    char unavailable_reason[256];
} amp_accelerator_info;

/* The accelerator AMP_DEFAULT_ACCELERATOR names ("cpu", "hip:0", "cuda:0"),
 * else the first GPU, else the CPU. Accelerators are owned by the library and
 * live until process exit: never free them. Blocks on first use while the
 * vendor libraries are probed.
 * AMP_ERROR_NO_ACCELERATOR: AMP_DEFAULT_ACCELERATOR names none that exists or
 * that is available. AMP_ERROR_INVALID_ARGUMENT: out is NULL. */
AMP_API amp_status amp_accelerator_default(amp_accelerator **out);
/* Fill list[0..cap-1] with every accelerator (GPUs first, in device order,
 * then the CPU accelerator last) and set *count to how many exist (which may
 * exceed cap). list may be NULL when cap is 0. */
AMP_API amp_status amp_accelerator_list(amp_accelerator **list, size_t cap, size_t *count);
/* Find by device path ("cuda:0"). AMP_ERROR_NO_ACCELERATOR if none. */
AMP_API amp_status amp_accelerator_find(const char *device_path, amp_accelerator **out);
AMP_API amp_status amp_accelerator_get_info(const amp_accelerator *a, amp_accelerator_info *out);

/* A queue (HIP/CUDA stream) on accelerator a. Owned by the caller; destroy
 * waits for its work. */
AMP_API amp_status amp_accelerator_view_create(amp_accelerator *a, amp_accelerator_view **out);
/* The accelerator's default view (owned by the library, never destroy it). */
AMP_API amp_status amp_accelerator_default_view(amp_accelerator *a, amp_accelerator_view **out);
AMP_API amp_status amp_accelerator_view_get_accelerator(amp_accelerator_view *q, amp_accelerator **out);
/* Block until every command queued on q finished. AMP_ERROR_DEVICE carries the
 * driver's message when a kernel on q faulted. */
AMP_API amp_status amp_accelerator_view_wait(amp_accelerator_view *q);
AMP_API amp_status amp_accelerator_view_destroy(amp_accelerator_view *q);

/* Data movement and launch counters of one accelerator view (every copy and
 * launch issued on behalf of work queued on it). One box of a view (a whole
 * view, a section, a projection) moved in one direction counts as one copy,
 * however many strided driver copies it takes. Copy-backs on host access are
 * counted on the queue of the last launch that used the data. */
typedef struct amp_stats {
    uint64_t bytes_to_device, copies_to_device;
    uint64_t bytes_to_host, copies_to_host;
    uint64_t launches;
} amp_stats;
AMP_API amp_status amp_accelerator_view_get_stats(amp_accelerator_view *q, amp_stats *out);
AMP_API amp_status amp_accelerator_view_reset_stats(amp_accelerator_view *q);

/* ----------------------------------------------------- array, array_view */

typedef struct amp_array amp_array;
typedef struct amp_array_view amp_array_view;
typedef enum amp_access { AMP_READ_WRITE = 0, AMP_READ_ONLY = 1, AMP_WRITE_ONLY = 2 } amp_access;

/* Device-resident container of amp_extent_size(e) elements of elem_size bytes
 * on q's accelerator (q NULL: the DEFAULT accelerator's default view, which
 * may not be the accelerator your kernels were built for). init (may
 * be NULL) is copied in before return; the caller keeps it. Blocks for that
 * copy. AMP_ERROR_OUT_OF_MEMORY when the device has no room. */
AMP_API amp_status amp_array_create(amp_accelerator_view *q, size_t elem_size, amp_extent e,
                                    const void *init, amp_array **out);
/* Copy the whole array to dst (amp_extent_size * elem_size bytes); waits for
 * the kernels that use it. */
AMP_API amp_status amp_array_copy_to_host(amp_array *a, void *dst);
AMP_API amp_status amp_array_copy_from_host(amp_array *a, const void *src);
AMP_API amp_status amp_array_get_extent(const amp_array *a, amp_extent *out);
/* Waits for the kernels that use it, then frees. Views of the array must be
 * destroyed first (AMP_ERROR_BUSY otherwise, nothing freed). */
AMP_API amp_status amp_array_destroy(amp_array *a);

/* A view of host memory the caller owns and keeps alive until the view is
 * destroyed. Row-major, last dimension contiguous. Nothing is copied here. */
AMP_API amp_status amp_array_view_create(void *host, size_t elem_size, amp_extent e,
                                         amp_access access, amp_array_view **out);
/* A view of a device array (no host memory behind it). */
AMP_API amp_status amp_array_view_of_array(amp_array *a, amp_array_view **out);
/* Sub-view origin..origin+e of v, same rank; shares v's storage.
 * AMP_ERROR_OUT_OF_BOUNDS when it does not fit inside v. */
AMP_API amp_status amp_array_view_section(amp_array_view *v, amp_index origin, amp_extent e,
                                          amp_array_view **out);
/* Rank-reducing view v[i] (rank >= 2). AMP_ERROR_OUT_OF_BOUNDS for i outside. */
AMP_API amp_status amp_array_view_project(amp_array_view *v, int i, amp_array_view **out);
AMP_API amp_status amp_array_view_get_extent(const amp_array_view *v, amp_extent *out);
/* Host pointer of the view's first element (NULL for a view of an array). */
AMP_API void *amp_array_view_data(const amp_array_view *v);
/* Make host memory current (waits for kernels using it, copies back if the
 * device holds newer data). */
AMP_API amp_status amp_array_view_synchronize(amp_array_view *v);
/* The host changed the memory behind v: device copies are stale. */
AMP_API amp_status amp_array_view_refresh(amp_array_view *v);
/* The contents are not needed: the next kernel gets no copy-in, and device
 * data not yet copied back is dropped (a later synchronize copies nothing
 * for it). */
AMP_API amp_status amp_array_view_discard_data(amp_array_view *v);
/* Synchronizes first (its status is returned), then frees the view. */
AMP_API amp_status amp_array_view_destroy(amp_array_view *v);

/* ------------------------------------------------------------- programs */

typedef struct amp_program amp_program;
typedef struct amp_kernel amp_kernel;

/* Compile source (HIP C++ using the AMP prelude) for accelerator a (NULL:
 * default). options are extra compiler flags (may be NULL). Uses the
 * in-memory and on-disk caches. Blocks while compiling.
 * AMP_ERROR_COMPILE: amp_last_error() holds the compiler log, with line
 * numbers of source as given. AMP_ERROR_UNSUPPORTED: the compiler does not
 * know the device's arch. */
AMP_API amp_status amp_program_build(amp_accelerator *a, const char *source, const char *options,
                                     amp_program **out);
/* Kernels are owned by their program and valid until it is destroyed.
 * AMP_ERROR_KERNEL_NOT_FOUND names the missing kernel; AMP_ERROR_UNSUPPORTED:
 * its tile has more threads than the accelerator allows. */
AMP_API amp_status amp_program_get_kernel(amp_program *p, const char *name, amp_kernel **out);
/* Frees the program; the caller must not launch its kernels afterwards.
 * Waits for none (queued launches keep the module alive until they end). */
AMP_API amp_status amp_program_destroy(amp_program *p);

/* A compiled AMD code object for a named target, built with no GPU present. */
typedef struct amp_code_object amp_code_object;
typedef struct amp_kernel_resources {
    char name[128];
    uint32_t lds_bytes;        /* .group_segment_fixed_size: tile_static bytes */
    uint32_t private_bytes;    /* .private_segment_fixed_size (scratch per item) */
    uint32_t vgprs, sgprs, agprs;
    uint32_t vgpr_spills, sgpr_spills;
    uint32_t max_flat_workgroup_size;
} amp_kernel_resources;
/* Compile source with hipRTC for target ("gfx90a", "gfx1030", "gfx90a:xnack+").
 * AMP_ERROR_UNSUPPORTED: the installed comgr/hipRTC does not know target, or
 * no hipRTC is installed. AMP_ERROR_COMPILE: log in amp_last_error(). */
AMP_API amp_status amp_compile_for_target(const char *target, const char *source,
                                          const char *options, amp_code_object **out);
/* Borrowed pointer to the ELF bytes; valid until destroy. */
AMP_API amp_status amp_code_object_data(const amp_code_object *c, const void **data, size_t *size);
AMP_API size_t amp_code_object_kernel_count(const amp_code_object *c);
AMP_API amp_status amp_code_object_kernel_resources(const amp_code_object *c, size_t i,
                                                    amp_kernel_resources *out);
AMP_API amp_status amp_code_object_destroy(amp_code_object *c);

/* --------------------------------------------------------------- launch */

typedef enum amp_arg_kind {
    AMP_ARG_VIEW = 1, AMP_ARG_ARRAY = 2, AMP_ARG_INT32 = 3, AMP_ARG_FLOAT = 4,
    AMP_ARG_DOUBLE = 5, AMP_ARG_UINT32 = 6, AMP_ARG_INT64 = 7
} amp_arg_kind;
typedef struct amp_arg {
    amp_arg_kind kind;
    union { amp_array_view *view; amp_array *array; int32_t i32; uint32_t u32;
            int64_t i64; float f32; double f64; } u;
} amp_arg;
AMP_API amp_arg amp_arg_view(amp_array_view *v);
AMP_API amp_arg amp_arg_array(amp_array *a);
AMP_API amp_arg amp_arg_int(int32_t x);
AMP_API amp_arg amp_arg_uint(uint32_t x);
AMP_API amp_arg amp_arg_int64(int64_t x);
AMP_API amp_arg amp_arg_float(float x);
AMP_API amp_arg amp_arg_double(double x);

/* Run kernel k (an AMP_KERNEL) once per index of e on q (NULL: the kernel's
 * accelerator's default view). Returns once queued (as-if synchronous: any
 * host access to a view it uses waits for it). args[i] binds the kernel's
 * parameter i after its index (counted from 0); the caller keeps the views.
 * Arguments are checked against the kernel's signature:
 * AMP_ERROR_ARGUMENT_MISMATCH names "parameter i" and what differs (count,
 * kind, rank, element size, an AMP_READ_ONLY view on a non-const parameter).
 * AMP_ERROR_INVALID_EXTENT: bad e, or its rank differs from the kernel's index.
 * AMP_ERROR_INVALID_ARGUMENT: k is tiled, or q is on another accelerator.
 * AMP_ERROR_DEVICE: an earlier kernel faulted. On NVIDIA GPUs a fault ruins
 * the whole device context: every later call on that accelerator fails with
 * AMP_ERROR_DEVICE; destroying handles stays safe. On AMD GPUs the ROCm
 * runtime itself may abort the process on a memory fault before any status
 * can be returned. */
AMP_API amp_status amp_parallel_for_each(amp_accelerator_view *q, amp_extent e, amp_kernel *k,
                                         const amp_arg *args, size_t nargs);
/* Tiled launch of an AMP_TILED_KERNEL. AMP_ERROR_INVALID_COMPUTE_DOMAIN when
 * t is not divisible, or its rank or tile differs from the kernel's
 * tiled_index. AMP_ERROR_INVALID_ARGUMENT: k is not tiled. Otherwise as
 * amp_parallel_for_each. */
AMP_API amp_status amp_parallel_for_each_tiled(amp_accelerator_view *q, amp_tiled_extent t,
                                               amp_kernel *k, const amp_arg *args, size_t nargs);

/* Completion of one launch (C++ AMP's completion_future). */
typedef struct amp_future amp_future;
/* As amp_parallel_for_each / _tiled (tiled when t is not NULL, then e is
 * ignored) and return a future the caller owns. */
AMP_API amp_status amp_parallel_for_each_async(amp_accelerator_view *q, amp_extent e,
                                               const amp_tiled_extent *t, amp_kernel *k,
                                               const amp_arg *args, size_t nargs,
                                               amp_future **out);
/* Block until the launch finished; AMP_ERROR_DEVICE if it faulted. */
AMP_API amp_status amp_future_wait(amp_future *f);
/* *done = finished; never blocks. */
AMP_API amp_status amp_future_is_ready(amp_future *f, bool *done);
/* Does not wait; the launch runs on. */
AMP_API amp_status amp_future_destroy(amp_future *f);

/* ----------------------------------------------------------------- cache */

/* Directory of the on-disk compile cache (AMP_CACHE_DIR, else
 * $XDG_CACHE_HOME/hipamp, else $HOME/.cache/hipamp). Static string. */
AMP_API const char *amp_cache_dir(void);
/* Drop the in-memory program cache (the disk cache stays). */
AMP_API amp_status amp_cache_clear_memory(void);

/* The AMP device prelude every kernel is compiled with (NUL-terminated). */
AMP_API const char *amp_prelude_source(void);

#ifdef __cplusplus
}
#endif
#endif /* HIPAMP_H */
