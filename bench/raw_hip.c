/* raw_hip.c — raw_gpu.h over HIP and hipRTC (hipModuleLaunchKernel on hipMalloc'ed buffers, HIP events, rocBLAS loaded with dlopen): the vendor half of bench_gpu_hip. */
#define _GNU_SOURCE
#include "raw_gpu.h"
#include "workloads.h"

#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const rg_names rg = {
    .program = "bench_gpu_hip",
    .accelerator = "hip:0",
    .compiler = "hipRTC",
    .load = "hipModuleLoadData",
    .launch = "hipModuleLaunchKernel",
    .alloc = "hipMalloc",
    .copy = "hipMemcpyDtoD",
    .events = "HIP",
    .blas = "rocBLAS",
};

#define HK(call)                                                                            \
    do {                                                                                    \
        hipError_t e_ = (call);                                                             \
        if (e_ != hipSuccess)                                                               \
            die("%s:%d: %s: %s", __FILE__, __LINE__, #call, hipGetErrorString(e_));         \
    } while (0)

static hipStream_t stream, own_stream;
static hipEvent_t ev0, ev1;
static char arch[256];

/* HIP's device addresses are pointers; the layer passes them as integers. */
static void *dp(rg_ptr p) { return (void *)(uintptr_t)p; }

void rg_open(rg_device *d)
{
    int n = 0;
    hipError_t e = hipGetDeviceCount(&n);
    if (e != hipSuccess || n < 1)
        die("no AMD GPU: hipGetDeviceCount found %d device(s) (%s); this benchmark needs one (see rocminfo)", n,
            e != hipSuccess ? hipGetErrorString(e) : "no error");
    HK(hipSetDevice(0));
    hipDeviceProp_t p;
    HK(hipGetDeviceProperties(&p, 0));
    snprintf(d->name, sizeof d->name, "%s", p.name);
    /* The full target id, features included: lib/gpu/driver_hip.c reads the
     * same field and hands it to hipRTC as --offload-arch. */
    snprintf(arch, sizeof arch, "%s", p.gcnArchName);
    snprintf(d->arch, sizeof d->arch, "%s", arch);
    HK(hipStreamCreateWithFlags(&own_stream, hipStreamNonBlocking));
    stream = own_stream;
    HK(hipEventCreate(&ev0));
    HK(hipEventCreate(&ev1));
    int rt = 0, rtc_major = 0, rtc_minor = 0;
    (void)hipRuntimeGetVersion(&rt);
    (void)hiprtcVersion(&rtc_major, &rtc_minor);
    /* HIP_VERSION packing: major * 10^7 + minor * 10^5 + patch. */
    snprintf(d->platform, sizeof d->platform, "%s, HIP runtime %d.%d.%d, hipRTC %d.%d", arch, rt / 10000000,
             rt / 100000 % 100, rt % 100000, rtc_major, rtc_minor);
}

/* The options lib/gpu/driver_hip.c passes to hipRTC, in its order. */
void *rg_build(const char *full)
{
    char arch_opt[300];
    snprintf(arch_opt, sizeof arch_opt, "--offload-arch=%s", arch);
    const char *opts[] = {arch_opt, "-std=c++17", "-O3"};
    hiprtcProgram p;
    hiprtcResult r = hiprtcCreateProgram(&p, full, "kernel.hip", 0, NULL, NULL);
    if (r != HIPRTC_SUCCESS) die("hiprtcCreateProgram: %s", hiprtcGetErrorString(r));
    r = hiprtcCompileProgram(p, 3, opts);
    if (r != HIPRTC_SUCCESS) {
        size_t ls = 0;
        (void)hiprtcGetProgramLogSize(p, &ls);
        char *log = malloc(ls + 1);
        if (log && hiprtcGetProgramLog(p, log) == HIPRTC_SUCCESS) log[ls] = 0;
        die("hipRTC (%s): %s\n%s", arch_opt, hiprtcGetErrorString(r), log ? log : "");
    }
    size_t size = 0;
    if (hiprtcGetCodeSize(p, &size) != HIPRTC_SUCCESS || size == 0) die("hiprtcGetCodeSize: no code object");
    char *code = malloc(size);
    if (!code || hiprtcGetCode(p, code) != HIPRTC_SUCCESS) die("hiprtcGetCode");
    (void)hiprtcDestroyProgram(&p);
    hipModule_t m;
    HK(hipModuleLoadData(&m, code));
    free(code);
    return m;
}

/* On AMD the library passes hipRTC no option of the kind (lib/gpu/driver_hip.c). */
void *rg_build_lean(const char *full) { return rg_build(full); }

void *rg_function(void *module, const char *name)
{
    hipFunction_t f;
    HK(hipModuleGetFunction(&f, (hipModule_t)module, name));
    return f;
}

rg_ptr rg_global(void *module, const char *name, size_t *bytes)
{
    hipDeviceptr_t p;
    HK(hipModuleGetGlobal(&p, bytes, (hipModule_t)module, name));
    return (rg_ptr)(uintptr_t)p;
}

bool rg_kernel_regs(void *fn, int *regs, int *local_bytes)
{
    /* Not every HIP release answers these for module functions: say so
     * rather than print zeros. */
    return hipFuncGetAttribute(regs, HIP_FUNC_ATTRIBUTE_NUM_REGS, (hipFunction_t)fn) == hipSuccess &&
           hipFuncGetAttribute(local_bytes, HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, (hipFunction_t)fn) == hipSuccess;
}

void rg_launch(void *fn, const unsigned g[3], const unsigned b[3], void **params)
{
    HK(hipModuleLaunchKernel((hipFunction_t)fn, g[0], g[1], g[2], b[0], b[1], b[2], 0, stream, params, NULL));
}

rg_ptr rg_alloc(size_t bytes)
{
    void *p;
    HK(hipMalloc(&p, bytes));
    return (rg_ptr)(uintptr_t)p;
}
void rg_free(rg_ptr p) { HK(hipFree(dp(p))); }

/* The blocking copies and the memset run on the null stream, which does not
 * order against a non-blocking stream: wait for the stream first so that a
 * read-back never overtakes the launches that wrote it, and for the null
 * stream after a copy in (from pageable memory it may return before the
 * copy has landed), so that a launch after it reads what it copied. */
void rg_h2d(rg_ptr dst, const void *src, size_t bytes)
{
    HK(hipStreamSynchronize(stream));
    HK(hipMemcpyHtoD(dp(dst), (void *)src, bytes));
    HK(hipStreamSynchronize(NULL));
}
void rg_d2h(void *dst, rg_ptr src, size_t bytes)
{
    HK(hipStreamSynchronize(stream));
    HK(hipMemcpyDtoH(dst, dp(src), bytes));
}
void rg_fill32(rg_ptr dst, uint32_t value, size_t count)
{
    HK(hipMemsetD32Async(dp(dst), (int)value, count, stream));
    HK(hipStreamSynchronize(stream));
}
void rg_copy_async(rg_ptr dst, rg_ptr src, size_t bytes)
{
    HK(hipMemcpyDtoDAsync(dp(dst), dp(src), bytes, stream));
}
void rg_sync(void) { HK(hipStreamSynchronize(stream)); }
void rg_use_stream(void *native) { stream = native ? (hipStream_t)native : own_stream; }

void rg_events_begin(void) { HK(hipEventRecord(ev0, stream)); }
void rg_events_end(void)
{
    HK(hipEventRecord(ev1, stream));
    HK(hipEventSynchronize(ev1));
}
double rg_events_seconds(void)
{
    float ms = 0;
    HK(hipEventElapsedTime(&ms, ev0, ev1));
    return ms * 1e-3;
}

int rg_device_count(void)
{
    int n = 0;
    HK(hipGetDeviceCount(&n));
    return n;
}

bool rg_peer_copy(size_t bytes, int reps, double *seconds, bool *direct, char *why, size_t why_n)
{
    if (rg_device_count() < 2) {
        snprintf(why, why_n, "one AMD GPU");
        return false;
    }
    int can = 0;
    HK(hipDeviceCanAccessPeer(&can, 0, 1));
    if (can) {
        hipError_t e = hipDeviceEnablePeerAccess(1, 0);
        if (e != hipSuccess && e != hipErrorPeerAccessAlreadyEnabled) HK(e);
    }
    *direct = can != 0;
    size_t count = bytes / 4;
    void *src, *dst;
    HK(hipMalloc(&src, bytes));
    HK(hipSetDevice(1));
    HK(hipMalloc(&dst, bytes));
    HK(hipMemset(dst, 0, bytes));
    HK(hipDeviceSynchronize());
    HK(hipSetDevice(0));
    HK(hipMemsetD32(src, 0x3f8ccccd, count));
    double *t = malloc((size_t)reps * sizeof *t);
    if (!t) die("out of memory");
    HK(hipMemcpyPeerAsync(dst, 1, src, 0, bytes, stream)); /* warm-up */
    HK(hipStreamSynchronize(stream));
    for (int r = 0; r < reps; ++r) {
        rg_events_begin();
        HK(hipMemcpyPeerAsync(dst, 1, src, 0, bytes, stream));
        rg_events_end();
        t[r] = rg_events_seconds();
    }
    *seconds = wl_median(t, reps);
    free(t);
    uint32_t *host = malloc(bytes);
    if (!host) die("out of memory");
    HK(hipMemcpy(host, dst, bytes, hipMemcpyDeviceToHost));
    size_t bad = 0;
    for (size_t i = 0; i < count; ++i) bad += host[i] != 0x3f8ccccdu;
    free(host);
    HK(hipFree(src));
    HK(hipFree(dst));
    if (bad) die("raw peer copy: %zu of %zu words wrong on device 1", bad, count);
    return true;
}

/* rocBLAS, loaded at run time: the benchmark alone needs it. The ABI used is
 * the C one every release since ROCm 5 keeps: handles are pointers, status
 * and rocblas_int are 32-bit ints, rocblas_operation_none is 111, pointer
 * mode defaults to host (alpha and beta read from host memory). */
enum { ROCBLAS_OPERATION_NONE = 111 };
typedef int (*rocblas_create_t)(void **);
typedef int (*rocblas_destroy_t)(void *);
typedef int (*rocblas_set_stream_t)(void *, hipStream_t);
typedef int (*rocblas_sgemm_t)(void *, int, int, int, int, int, const float *, const float *, int, const float *,
                               int, const float *, float *, int);
typedef int (*rocblas_set_pointer_mode_t)(void *, int);
typedef int (*rocblas_sasum_t)(void *, int, const float *, int, float *);
typedef int (*rocblas_sdot_t)(void *, int, const float *, int, const float *, int, float *);
static struct {
    void *lib, *h;
    rocblas_sgemm_t sgemm;
    rocblas_destroy_t destroy;
    rocblas_set_pointer_mode_t pointer_mode;
    rocblas_sasum_t sasum;
    rocblas_sdot_t sdot;
} rocblas;

bool rg_blas_load(char *lib, size_t lib_n, char *why, size_t why_n)
{
    /* .so.5 is ROCm 7, .so.4 ROCm 6, .so.0 ROCm 5's distribution packages. */
    static const char *const libs[] = {"librocblas.so.5", "librocblas.so.4", "librocblas.so.3",
                                       "librocblas.so.0", "librocblas.so"};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0] && !rocblas.lib; ++i) {
        rocblas.lib = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
        if (rocblas.lib) snprintf(lib, lib_n, "%s", libs[i]);
    }
    if (!rocblas.lib) {
        const char *e = dlerror();
        snprintf(why, why_n, "%s", e ? e : "no librocblas");
        return false;
    }
    rocblas_create_t create = (rocblas_create_t)dlsym(rocblas.lib, "rocblas_create_handle");
    rocblas_set_stream_t set_stream = (rocblas_set_stream_t)dlsym(rocblas.lib, "rocblas_set_stream");
    rocblas.sgemm = (rocblas_sgemm_t)dlsym(rocblas.lib, "rocblas_sgemm");
    rocblas.destroy = (rocblas_destroy_t)dlsym(rocblas.lib, "rocblas_destroy_handle");
    rocblas.pointer_mode = (rocblas_set_pointer_mode_t)dlsym(rocblas.lib, "rocblas_set_pointer_mode");
    rocblas.sasum = (rocblas_sasum_t)dlsym(rocblas.lib, "rocblas_sasum");
    rocblas.sdot = (rocblas_sdot_t)dlsym(rocblas.lib, "rocblas_sdot");
    if (!create || !set_stream || !rocblas.sgemm) {
        snprintf(why, why_n, "%s lacks rocblas_create_handle, rocblas_set_stream or rocblas_sgemm", lib);
        return false;
    }
    int rc = create(&rocblas.h);
    if (rc != 0) {
        rocblas.h = NULL;
        snprintf(why, why_n, "rocblas_create_handle failed: %d", rc);
        return false;
    }
    if ((rc = set_stream(rocblas.h, stream)) != 0) {
        snprintf(why, why_n, "rocblas_set_stream failed: %d", rc);
        return false;
    }
    return true;
}

void rg_sgemm(int M, int N, int K, rg_ptr a, rg_ptr b, rg_ptr c)
{
    const float one = 1.0f, zero = 0.0f;
    /* Row-major C = A B is column-major C^T = B^T A^T: swap the operands. */
    int rc = rocblas.sgemm(rocblas.h, ROCBLAS_OPERATION_NONE, ROCBLAS_OPERATION_NONE, N, M, K, &one,
                           (const float *)dp(b), N, (const float *)dp(a), K, &zero, (float *)dp(c), N);
    if (rc != 0) die("rocblas_sgemm failed: %d", rc);
}

/* Level-1 results to the device (rocblas_pointer_mode_device, 1), back to
 * host mode (0) for rg_sgemm's alpha and beta. */
bool rg_sasum(int n, rg_ptr x, rg_ptr result)
{
    if (!rocblas.h || !rocblas.sasum || !rocblas.pointer_mode) return false;
    rocblas.pointer_mode(rocblas.h, 1);
    int rc = rocblas.sasum(rocblas.h, n, (const float *)dp(x), 1, (float *)dp(result));
    rocblas.pointer_mode(rocblas.h, 0);
    if (rc != 0) die("rocblas_sasum failed: %d", rc);
    return true;
}

bool rg_sdot(int n, rg_ptr x, rg_ptr y, rg_ptr result)
{
    if (!rocblas.h || !rocblas.sdot || !rocblas.pointer_mode) return false;
    rocblas.pointer_mode(rocblas.h, 1);
    int rc = rocblas.sdot(rocblas.h, n, (const float *)dp(x), 1, (const float *)dp(y), 1, (float *)dp(result));
    rocblas.pointer_mode(rocblas.h, 0);
    if (rc != 0) die("rocblas_sdot failed: %d", rc);
    return true;
}

void rg_blas_unload(void)
{
    if (rocblas.h && rocblas.destroy) rocblas.destroy(rocblas.h);
    rocblas.h = NULL;
}
