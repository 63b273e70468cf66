/* gpu_driver.h — the normalized vendor-driver interface (HIP or CUDA, loaded with dlopen) that the one GPU backend body (gpu_backend.c) runs on. */
#ifndef AMP_GPU_DRIVER_H
#define AMP_GPU_DRIVER_H

#include "backend.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* What the backend needs to know about one device, filled once at open. */
typedef struct amp__gpu_devinfo {
    char name[256];
    char arch[96];        /* "gfx90a:sramecc+:xnack-", "sm_90" */
    uint64_t total_mem;
    int compute_units;
    int max_tile_threads;
    size_t max_tile_static_bytes;
    bool integrated, pageable_access, managed_memory;
    int max_grid[3];      /* block-count limits per axis */
    int max_block[3];     /* threads-per-block limits per axis (x, y, z) */
    /* Launches captured into a graph may be programmatic (launch's
     * programmatic): the device runs them (CUDA compute capability 9.0 or
     * later), the driver has the entry point (cuLaunchKernelEx), and the
     * kernels are compiled for an architecture on which the prelude's entry
     * point waits for its predecessor (sm_90 or later). */
    bool programmatic_launch;
    /* Kernels are compiled by NVRTC (the CUDA driver, or hipRTC on HIP's
     * NVIDIA platform): no default system include directory. */
    bool nvrtc_compiler;
    /* Non-empty: the device is listed but cannot compile/run (no runtime
     * compiler, arch unknown to it). */
    char unavailable_reason[256];
} amp__gpu_devinfo;

/* Every handle is the vendor's own pointer (hipStream_t, CUstream, CUdeviceptr
 * cast to void *, ...). Every function except enter()/leave() and launch()
 * assumes enter(ctx) ran on the calling thread; functions returning amp_status have
 * called amp__fail with the driver's error text. void functions ignore driver
 * errors on purpose: after a sticky fault (illegal address) every release must
 * still be safe. */
typedef struct amp__gpu_driver {
    const char *platform; /* "hip", "cuda": the device_path prefix */
    /* Compiler + runtime versions, e.g. "hiprtc 9.0 runtime 50221153";
     * filled once, before the table is first handed out. */
    const char *version_tag;
    /* The vendor library loaded, as amp__gpu_dlopen_first put it. */
    const char *library;

    /* The devices the driver lists; 0 with why (the driver's error code
     * and text, or "zero devices") filled when it lists none. */
    int (*device_count)(char *why, size_t why_size);
    /* *ctx: what enter() needs (CUDA primary context; HIP ordinal). Never
     * fails for a listed device: problems go to info->unavailable_reason. */
    void (*device_open)(int ordinal, void **ctx, amp__gpu_devinfo *info);
    /* Make ctx current on the calling thread and say what to restore: the
     * calling thread's current HIP device / CUDA context belongs to the user
     * (MPI+HIP codes call hipSetDevice(local_rank) themselves), so every
     * backend entry point undoes its switch with leave(*prev) before it
     * returns. *prev = NULL when ctx already was current (the common case:
     * one cheap get, and leave is skipped), or when nothing can be restored.
     * On failure nothing changed and *prev = NULL. */
    amp_status (*enter)(void *ctx, void **prev);
    /* Restore what enter() replaced; prev is never NULL here. */
    void (*leave)(void *prev);

    /* Compile a complete translation unit for arch, handing the job's headers
     * to the compiler as named headers. *bin is malloc'ed. */
    amp_status (*compile)(const char *arch, const amp__compile_job *job, void **bin, size_t *bin_size);
    amp_status (*module_load)(const void *bin, size_t size, void **module);
    void (*module_unload)(void *module);
    /* *found = false (no failure recorded) when name is absent. */
    amp_status (*function_get)(void *module, const char *name, void **fn, bool *found);
    /* Copy the device global name (size bytes) to dst; *found = false when
     * absent, *actual = its size in the module. */
    amp_status (*global_read)(void *module, const char *name, void *dst, size_t size,
                              size_t *actual, bool *found);

    amp_status (*stream_create)(void **stream);
    void (*stream_destroy)(void *stream);
    amp_status (*stream_sync)(void *stream);
    amp_status (*stream_wait_event)(void *stream, void *event);

    amp_status (*event_create)(void **event);
    /* An event that records time (for event_elapsed). */
    amp_status (*event_create_timed)(void **event);
    amp_status (*event_elapsed)(void *start, void *end, float *ms);
    void (*event_destroy)(void *event);
    amp_status (*event_record)(void *event, void *stream);
    amp_status (*event_sync)(void *event);
    amp_status (*event_query)(void *event, bool *done);

    amp_status (*mem_alloc)(size_t bytes, void **dptr);
    void (*mem_free)(void *dptr);
    /* Map host memory for the device. *owned = true: this call registered
     * the range (undo with host_unregister). *owned = false: the memory was
     * already registered or device-accessible (pinned or managed memory of
     * the user or another library) and *dptr is its existing device address;
     * it must not be unregistered by us. */
    amp_status (*host_register)(void *host, size_t bytes, void **dptr, bool *owned);
    void (*host_unregister)(void *host);

    amp_status (*memcpy_1d)(amp__copy_dir dir, void *dst, const void *src, size_t bytes,
                            void *stream);
    /* bytes from src on the device of src_ctx to dst on the device of dst_ctx
     * (contexts as device_open made them), queued on stream. */
    amp_status (*memcpy_peer)(void *dst, void *dst_ctx, const void *src, void *src_ctx, size_t bytes, void *stream);
    /* Whether device ordinal can reach peer's memory directly (peer access):
     * *possible, and in why what the driver said. Needs no current device.
     * A driver without the entry points says so in why (AMP_OK). */
    amp_status (*peer_possible)(int ordinal, int peer, bool *possible, char *why, size_t why_size);
    /* Let the current device reach the memory of the device of peer_ctx
     * (ordinal peer) directly; already enabled counts as success. */
    amp_status (*peer_enable)(void *peer_ctx, int peer);
    /* Static shared memory (tile_static) a kernel uses, in bytes. */
    amp_status (*function_shared_bytes)(void *fn, size_t *bytes);
    /* The most threads a block of a launch of the kernel may have: its
     * __launch_bounds__, lowered where its registers do not fit more; 0
     * (and AMP_OK) when the driver cannot say. */
    amp_status (*function_max_threads)(void *fn, int *threads);
    /* AMP_OK when stream belongs to the device of ctx (a user's stream that
     * a view is to wrap); AMP_ERROR_INVALID_ARGUMENT naming both otherwise. */
    amp_status (*stream_check)(void *stream, void *ctx);
    amp_status (*memcpy_2d)(amp__copy_dir dir, void *dst, size_t dpitch, const void *src,
                            size_t spitch, size_t width, size_t height, void *stream);

    /* params: {&launch_info, pack}. The one call that takes the device's
     * ctx and is not preceded by enter(): the launch path's cost, and the
     * driver knows whether its vendor needs the context current for a
     * launch into a stream of that context (it enters and leaves itself
     * when it does). programmatic (only where devinfo's
     * programmatic_launch): the kernel may start before the one queued
     * before it on stream has finished (programmatic dependent launch), its
     * entry point waiting for that one's completion and memory first
     * (hip_kernels/amp_prelude.hip). */
    amp_status (*launch)(void *ctx, void *fn, const unsigned grid[3], const unsigned block[3],
                         void *stream, void **params, bool programmatic);

    /* Launch graphs by stream capture (lib/core/graph.c). capture_begin: what
     * is queued on stream from now on is recorded, not run (relaxed mode:
     * the capturing thread may still allocate memory);
     * AMP_ERROR_UNSUPPORTED when the driver has no graphs. capture_end:
     * stop; keep: *exec is the graph made executable, else it is thrown
     * away (*exec NULL). The capture has ended however this returns. */
    amp_status (*capture_begin)(void *stream);
    amp_status (*capture_end)(void *stream, bool keep, void **exec);
    amp_status (*graph_launch)(void *exec, void *stream);
    void (*graph_destroy)(void *exec);
} amp__gpu_driver;

/* The driver tables, or NULL when the vendor library cannot be loaded (then
 * *why says which library was missing). Loaded once, thread-safe. */
const amp__gpu_driver *amp__hip_driver(const char **why);
const amp__gpu_driver *amp__cuda_driver(const char **why);

/* A vendor's install directories, for a loader not told of them
 * (driver_load.c), NULL-terminated, found once per process: ROCm's are
 * $ROCM_PATH/lib, $HIP_PATH/lib (where set) and /opt/rocm/lib; CUDA's
 * $CUDA_HOME/lib64, $CUDA_PATH/lib64 (where set), /usr/local/cuda/lib64
 * and its targets/<arch>-linux/lib. */
const char *const *amp__gpu_rocm_lib_dirs(void);
const char *const *amp__gpu_cuda_lib_dirs(void);

/* dlopen the first of names that loads (RTLD_NOW | RTLD_LOCAL) through the
 * loader's search; where none does, each name in each of dirs in turn
 * (NULL-terminated; NULL for none), a file there only where no other local
 * user could have changed it or the way to it (amp__unsafe_file). Loaded:
 * why is the file's path, and the error of an earlier name that was found
 * but did not load. NULL: why says which names were tried and why none
 * loaded: the first dlopen error that is not "no such file" (a dependency
 * missing), else where the loader and dirs were searched; and the first
 * file refused as another user's to change, naming it and why. */
void *amp__gpu_dlopen_first(const char *const *names, const char *const *dirs, char *why, size_t why_size);

/* AMP_ERROR_UNSUPPORTED: host memory another registered covers less than
 * the bytes a view spans (a kernel would read past it); both drivers'
 * host_register (driver_cuda.c). */
amp_status amp__gpu_registered_in_part(const void *host, size_t bytes);
/* Rewrite NVRTC's "name(12): error" locations as "name:12: error", the
 * form hipRTC and g++ use, in place (driver_cuda.c). */
void amp__nvrtc_normalize_log(char *log, const char *name);
/* Where NVRTC's log (may be NULL) says a C function of a kernel's name in
 * job's text is declared twice (a kernel named exp: CUDA's headers declare
 * the C math functions), a line that says so and to rename it, into hint
 * (cap bytes, NUL-ended; "" otherwise); its length (driver_cuda.c). */
size_t amp__nvrtc_kernel_name_hint(const char *log, const amp__compile_job *job, char *hint, size_t cap);
/* The threads NVRTC of release (major * 100 + minor) may compile job in
 * (--split-compile=N; 1: pass nothing): from 12.4, AMP_GPU_COMPILE_JOBS or
 * the CPUs this process may use, at most 8, where the user's text and its
 * headers name two kernels or more; else 1. The machine code is the same
 * either way (driver_cuda.c). */
int amp__nvrtc_split_jobs(int release, const amp__compile_job *job);
/* AMP_ERROR_INVALID_ARGUMENT, naming the word, when the user's options
 * name a target (any of words): a second target would reach the compiler
 * unvalidated, where hipRTC may abort the process, or NVRTC take it over
 * ours and build code the launch does not expect; when a word of them is
 * no option, which clang (hipRTC) would compile as another input
 * (amp__options_refuse_inputs); or when one names a file for the compiler
 * to load code from or write (a plugin, a precompiled header or module, a
 * time trace, saved temporaries: option_checks.c). */
amp_status amp__gpu_refuse_target_options(const char *options, const char *const *words);
/* AMP_ERROR_COMPILE naming the file and line of a byte 0xFF in job's
 * source (the user's part, -D lines included) or headers, or in its options:
 * NVRTC takes it for the end of its input and drops what follows without
 * an error (NVRTC 13: a second kernel after it was not built). For NVRTC
 * and hipRTC on HIP's NVIDIA platform (driver_cuda.c). */
amp_status amp__nvrtc_refuse_eof_byte(const amp__compile_job *job);
/* AMP_ERROR_UNSUPPORTED, naming what, in a set-uid, set-gid or
 * file-capability program (the kernel's AT_SECURE): hipRTC and NVRTC
 * compile inside the process, with its rights, and hipRTC takes options
 * and paths from the environment of whoever started it
 * (HIPRTC_COMPILE_OPTIONS_APPEND, HIP_PATH, ...), which amp__env hides
 * from the library but not from it. So such a program compiles no
 * kernels on a GPU either, as on the CPU accelerator (cpu_toolchain.c);
 * the prebuilt packs still serve the built-in algorithms
 * (secure_program.c). */
amp_status amp__gpu_refuse_in_secure_program(const char *what);
/* nvrtcCompileProgram and hiprtcCompileProgram (compile: the loaded entry
 * point) called with prog, argc and argv on a thread of at least 8 MiB of
 * stack, their result returned: their front ends recurse with the
 * kernel's templates, past the 128 KiB a caller's thread may have
 * (rtc_stack.c). Blocks for the compile. */
int amp__nvrtc_compile_call(int (*compile)(void *, int, const char *const *), void *prog, int argc,
                            const char *const *argv);
int amp__hiprtc_compile_call(int (*compile)(void *, int, const char **), void *prog, int argc, const char **argv);
/* job as hipRTC or NVRTC is handed it (option_macros.c): its -D and -U
 * options (and --define-macro, --undefine-macro) taken out of the options
 * and written as #define and #undef lines, in their order, between
 * hipamp's text and the user's source, so that the compilers' own headers
 * (read before the unit: HIP's use T, F, R, V, B and U, NVRTC's T) never
 * see them, as libstdc++'s reserved names keep the CPU build's headers
 * out of their way. One whose value cannot be a line of its own (it ends
 * in a backslash, or holds a comment's start) stays an option. *out is
 * job, or points into *owned (malloc'ed; NULL when nothing moved), which
 * the caller frees after the compile. AMP_ERROR_OUT_OF_MEMORY. */
amp_status amp__gpu_option_macros(const amp__compile_job *job, amp__compile_job *out, char **owned);
/* AMP_ERROR_COMPILE naming the file and line where the user's part of
 * job's unit, or a header it hands the compiler, holds inline asm that
 * reads a file (.incbin, .include in a string literal): hipRTC's
 * assembler (AMD targets) reads it and lists it nowhere (asm_reads.c).
 * target names the build in the message. */
amp_status amp__gpu_refuse_asm_reads(const amp__compile_job *job, const char *target);
/* Whether NVRTC of release takes --no-cache (12.9 on), which keeps it out of
 * the CUDA driver's compute cache. */
bool amp__nvrtc_takes_no_cache(int release);

/* hipRTC + comgr, usable with no GPU (driver_hip.c). */
/* AMP_OK when comgr knows target (features included, e.g.
 * "gfx90a:sramecc+:xnack-"); AMP_ERROR_UNSUPPORTED naming it otherwise, or
 * when comgr cannot be loaded; AMP_ERROR_INVALID_ARGUMENT for ""/NULL. hipRTC
 * 5.2 aborts the process inside comgr on a target it does not know, so every
 * hipRTC compile goes through this check first. */
amp_status amp__amd_validate_target(const char *target);
/* Validate target, then compile with hipRTC (--offload-arch=target -std=c++17
 * -O3 + options). *bin (malloc'ed) is what hipRTC returned: an AMDGPU ELF code
 * object (ROCm 5) or a clang offload bundle (some ROCm 6 builds). */
amp_status amp__hiprtc_compile(const char *target, const amp__compile_job *job, void **bin, size_t *bin_size);
/* "hiprtc X.Y" or NULL when hipRTC cannot be loaded (*why says why). */
const char *amp__hiprtc_version(const char **why);
/* The ISA names comgr knows, without the "amdgcn-amd-amdhsa--" prefix. i past
 * the end (or no comgr) -> NULL. */
const char *amp__amd_isa_name(size_t i);

/* NVRTC alone (driver_cuda.c), usable with no GPU and no libcuda: compile
 * for arch "sm_NN" (CUBIN when NVRTC knows it, else PTX); the sm_NN names it
 * knows (NULL past the end or without NVRTC). */
amp_status amp__nvrtc_compile(const char *arch, const amp__compile_job *job, void **bin, size_t *bin_size);

/* The default include directories the scan must know for a platform's
 * runtime compiler ("hip": hipRTC; "cuda": NVRTC, none): backend.h. */
const amp__sys_dir *amp__gpu_system_dirs(const char *platform);
const char *amp__nvrtc_arch_name(size_t i);

/* The job's headers as the two parallel arrays hipRTC and NVRTC take: the
 * returned contents array and *names are one malloc'ed block (free the
 * returned pointer). NULL when the job has no headers or on no memory. */
static inline const char **amp__gpu_header_arrays(const amp__compile_job *job, const char ***names)
{
    *names = NULL;
    if (!job->nheaders) return NULL;
    const char **v = (const char **)malloc(2 * job->nheaders * sizeof *v);
    if (!v) return NULL;
    for (size_t i = 0; i < job->nheaders; ++i) {
        v[i] = job->headers[i].content;
        v[job->nheaders + i] = job->headers[i].name;
    }
    *names = v + job->nheaders;
    return v;
}

#endif /* AMP_GPU_DRIVER_H */
