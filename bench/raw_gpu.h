/* raw_gpu.h — the thin vendor layer under bench_gpu.c and its sections: device, stream and events, buffers, the runtime compiler with the library's options, modules, launches and the vendor SGEMM; raw_cuda.c implements it over the CUDA driver + NVRTC, raw_hip.c over HIP + hipRTC. */
#ifndef HIPAMP_BENCH_RAW_GPU_H
#define HIPAMP_BENCH_RAW_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A device address as an integer, so that views into a buffer are plain
 * arithmetic on both vendors (CUdeviceptr already is one; HIP's is void *). */
typedef uint64_t rg_ptr;

/* What the report calls each vendor's pieces, so that one report text
 * serves both and the CUDA report reads exactly as it always has. */
typedef struct rg_names {
    const char *program;     /* this executable, for messages */
    const char *accelerator; /* hipamp's device path of device 0 */
    const char *compiler;    /* the runtime compiler */
    const char *load;        /* the module-load call */
    const char *launch;      /* the kernel-launch call */
    const char *alloc;       /* the allocation call */
    const char *copy;        /* the device-to-device copy call */
    const char *events;      /* whose events time the raw batches */
    const char *blas;        /* the vendor BLAS */
} rg_names;
extern const rg_names rg;

typedef struct rg_device {
    char name[256];
    /* Spelled as hipamp's amp_accelerator_info.arch spells it ("sm_90",
     * "gfx90a:sramecc+:xnack-"), so main can check that both compiles
     * target the same thing. */
    char arch[256];
    char platform[512]; /* the report's line: arch, driver and compiler versions */
} rg_device;

/* Device 0, a non-blocking stream and two timing events; dies with a plain
 * message when the vendor's runtime finds no GPU. */
void rg_open(rg_device *d);

/* Compile a complete source (prelude included) with the target and
 * language options the library's driver passes to its runtime compiler,
 * and load it. */
void *rg_build(const char *source);
/* The same with the options the library adds that only make a compile
 * faster or keep the vendor's disk cache out (NVRTC 12.4 and later:
 * --minimal, 12.9 and later: --no-cache; none for hipRTC), as for a unit of
 * one kernel (no --split-compile). */
void *rg_build_lean(const char *source);
void *rg_function(void *module, const char *name);
rg_ptr rg_global(void *module, const char *name, size_t *bytes);
/* Registers and local (scratch) bytes a thread; false when the driver
 * does not say. */
bool rg_kernel_regs(void *fn, int *regs, int *local_bytes);
/* params: the kernel's parameter array (launch_info, argument pack). */
void rg_launch(void *fn, const unsigned g[3], const unsigned b[3], void **params);

rg_ptr rg_alloc(size_t bytes);
void rg_free(rg_ptr p);
void rg_h2d(rg_ptr dst, const void *src, size_t bytes);
void rg_d2h(void *dst, rg_ptr src, size_t bytes);
void rg_fill32(rg_ptr dst, uint32_t value, size_t count);
void rg_copy_async(rg_ptr dst, rg_ptr src, size_t bytes); /* on the stream */
void rg_sync(void);                                         /* the stream */
/* Which stream rg_launch, rg_sync and the events use from now on: a native
 * stream (hipamp's queue, amp_accelerator_view_native_queue), or NULL for
 * the benchmark's own. */
void rg_use_stream(void *native);

/* Stream events around a batch: begin records the first, end records the
 * second and waits for it, seconds is the time between them. */
void rg_events_begin(void);
void rg_events_end(void);
double rg_events_seconds(void);

/* The vendor BLAS, loaded at run time on the stream; false with the reason
 * in why. lib gets the library's file name. */
bool rg_blas_load(char *lib, size_t lib_n, char *why, size_t why_n);
/* Row-major C (M x N) = A (M x K) B (K x N), queued on the stream. */
void rg_sgemm(int M, int N, int K, rg_ptr a, rg_ptr b, rg_ptr c);
/* The BLAS level-1 reductions the algorithms benchmark compares with: sum
 * of |x[i]| and the dot of n floats, the result written to the device
 * (result: one float), queued on the stream. false when the library lacks
 * them (the report then says so). */
bool rg_sasum(int n, rg_ptr x, rg_ptr result);
bool rg_sdot(int n, rg_ptr x, rg_ptr y, rg_ptr result);
void rg_blas_unload(void);

/* Devices the vendor runtime sees (after rg_open). */
int rg_device_count(void);
/* Raw peer copies of bytes from a device-0 buffer to a device-1 buffer on
 * device 0's stream: peer access enabled where the driver allows it (*direct
 * says whether it did; otherwise the driver stages), a warm-up, then reps
 * copies timed one by one with the stream's events; *seconds is their
 * median. The destination is checked against the source (a 32-bit pattern)
 * before returning. false, with why, when device 1 cannot be used. */
bool rg_peer_copy(size_t bytes, int reps, double *seconds, bool *direct, char *why, size_t why_n);

/* gpu_harness.c's: prints "<program>: <message>" and exits 1. */
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
