/* raw_cuda.c — raw_gpu.h over the CUDA driver API and NVRTC (cuLaunchKernel on cuMemAlloc'ed buffers, CUDA events, cuBLAS loaded with dlopen): the vendor half of bench_gpu. */
#define _GNU_SOURCE
#include "raw_gpu.h"
#include "workloads.h"

#include <cuda.h>
#include <nvrtc.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const rg_names rg = {
    .program = "bench_gpu",
    .accelerator = "cuda:0",
    .compiler = "NVRTC",
    .load = "cuModuleLoadData",
    .launch = "cuLaunchKernel",
    .alloc = "cuMemAlloc",
    .copy = "cuMemcpyDtoD",
    .events = "CUDA",
    .blas = "cuBLAS",
};

#define CK(call)                                                                            \
    do {                                                                                    \
        CUresult e_ = (call);                                                               \
        if (e_ != CUDA_SUCCESS) {                                                           \
            const char *s_ = NULL;                                                          \
            cuGetErrorString(e_, &s_);                                                      \
            die("%s:%d: %s: %s", __FILE__, __LINE__, #call, s_ ? s_ : "unknown error");     \
        }                                                                                   \
    } while (0)

static CUdevice dev;
static CUcontext ctx;
static CUstream stream, own_stream;
static CUevent ev0, ev1;
static int sm_major, sm_minor;

void rg_open(rg_device *d)
{
    /* The usual failure on a machine without an NVIDIA GPU: say so plainly. */
    CUresult e = cuInit(0);
    if (e != CUDA_SUCCESS) {
        const char *s = NULL;
        cuGetErrorString(e, &s);
        die("no usable NVIDIA GPU: cuInit: %s (CUresult %d); this benchmark needs one (see nvidia-smi)",
            s ? s : "unknown error", (int)e);
    }
    CK(cuDeviceGet(&dev, 0));
    CK(cuDeviceGetName(d->name, sizeof d->name, dev));
    CK(cuDeviceGetAttribute(&sm_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CK(cuDeviceGetAttribute(&sm_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuStreamCreate(&own_stream, CU_STREAM_NON_BLOCKING));
    stream = own_stream;
    CK(cuEventCreate(&ev0, CU_EVENT_DEFAULT));
    CK(cuEventCreate(&ev1, CU_EVENT_DEFAULT));
    int drv = 0;
    cuDriverGetVersion(&drv);
    int nv_major = 0, nv_minor = 0;
    nvrtcVersion(&nv_major, &nv_minor);
    snprintf(d->arch, sizeof d->arch, "sm_%d%d", sm_major, sm_minor);
    snprintf(d->platform, sizeof d->platform, "sm_%d%d, CUDA driver %d.%d, NVRTC %d.%d", sm_major, sm_minor,
             drv / 1000, drv % 1000 / 10, nv_major, nv_minor);
}

/* The library's CUDA driver options: a CUBIN for the device's own sm when
 * NVRTC knows it, else PTX of the newest arch below for the driver to JIT;
 * lean adds the options lib/gpu/driver_cuda.c gives NVRTC by its release
 * (--minimal from 12.4, --no-cache from 12.9). */
static void *build(const char *full, bool lean)
{
    int narch = 0, archs[128], best = 0;
    bool exact = false;
    int want = sm_major * 10 + sm_minor;
    if (nvrtcGetNumSupportedArchs(&narch) == NVRTC_SUCCESS && narch > 0 && narch <= 128 &&
        nvrtcGetSupportedArchs(archs) == NVRTC_SUCCESS) {
        for (int i = 0; i < narch; ++i) {
            if (archs[i] == want) exact = true;
            if (archs[i] <= want && archs[i] > best) best = archs[i];
        }
    } else {
        best = want;
        exact = true;
    }
    if (!best) die("NVRTC supports no architecture up to sm_%d", want);
    char arch[64];
    snprintf(arch, sizeof arch, "--gpu-architecture=%s_%d", exact ? "sm" : "compute", exact ? want : best);
    const char *opts[4] = {arch, "-std=c++17"};
    int nopts = 2, major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    if (lean && major * 100 + minor >= 1204) opts[nopts++] = "--minimal";
    if (lean && major * 100 + minor >= 1209) opts[nopts++] = "--no-cache";
    nvrtcProgram p;
    if (nvrtcCreateProgram(&p, full, "kernel.hip", 0, NULL, NULL) != NVRTC_SUCCESS) die("nvrtcCreateProgram");
    nvrtcResult r = nvrtcCompileProgram(p, nopts, opts);
    if (r != NVRTC_SUCCESS) {
        size_t ls = 0;
        nvrtcGetProgramLogSize(p, &ls);
        char *log = malloc(ls + 1);
        if (log && nvrtcGetProgramLog(p, log) == NVRTC_SUCCESS) log[ls] = 0;
        die("NVRTC: %s\n%s", nvrtcGetErrorString(r), log ? log : "");
    }
    size_t size = 0;
    char *code;
    if (exact) {
        nvrtcGetCUBINSize(p, &size);
        code = malloc(size);
        if (!code || nvrtcGetCUBIN(p, code) != NVRTC_SUCCESS) die("nvrtcGetCUBIN");
    } else {
        nvrtcGetPTXSize(p, &size);
        code = malloc(size);
        if (!code || nvrtcGetPTX(p, code) != NVRTC_SUCCESS) die("nvrtcGetPTX");
    }
    nvrtcDestroyProgram(&p);
    CUmodule m;
    CK(cuModuleLoadData(&m, code));
    free(code);
    return m;
}

void *rg_build(const char *full) { return build(full, false); }
void *rg_build_lean(const char *full) { return build(full, true); }

void *rg_function(void *module, const char *name)
{
    CUfunction f;
    CK(cuModuleGetFunction(&f, (CUmodule)module, name));
    return f;
}

rg_ptr rg_global(void *module, const char *name, size_t *bytes)
{
    CUdeviceptr p;
    CK(cuModuleGetGlobal(&p, bytes, (CUmodule)module, name));
    return (rg_ptr)p;
}

bool rg_kernel_regs(void *fn, int *regs, int *local_bytes)
{
    /* Errors left as zeros, as this report has always printed them. */
    cuFuncGetAttribute(regs, CU_FUNC_ATTRIBUTE_NUM_REGS, (CUfunction)fn);
    cuFuncGetAttribute(local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, (CUfunction)fn);
    return true;
}

void rg_launch(void *fn, const unsigned g[3], const unsigned b[3], void **params)
{
    CK(cuLaunchKernel((CUfunction)fn, g[0], g[1], g[2], b[0], b[1], b[2], 0, stream, params, NULL));
}

rg_ptr rg_alloc(size_t bytes)
{
    CUdeviceptr p;
    CK(cuMemAlloc(&p, bytes));
    return (rg_ptr)p;
}
void rg_free(rg_ptr p) { CK(cuMemFree((CUdeviceptr)p)); }
/* From pageable memory cuMemcpyHtoD may return before the copy has landed
 * (CUDA documents it), and it runs on the null stream, which does not order
 * against the non-blocking stream the launches use: wait for the null
 * stream, so that a launch after rg_h2d reads what it copied. */
void rg_h2d(rg_ptr dst, const void *src, size_t bytes)
{
    CK(cuMemcpyHtoD((CUdeviceptr)dst, src, bytes));
    CK(cuStreamSynchronize(NULL));
}
void rg_d2h(void *dst, rg_ptr src, size_t bytes) { CK(cuMemcpyDtoH(dst, (CUdeviceptr)src, bytes)); }
void rg_fill32(rg_ptr dst, uint32_t value, size_t count) { CK(cuMemsetD32((CUdeviceptr)dst, value, count)); }
void rg_copy_async(rg_ptr dst, rg_ptr src, size_t bytes)
{
    CK(cuMemcpyDtoDAsync((CUdeviceptr)dst, (CUdeviceptr)src, bytes, stream));
}
void rg_sync(void) { CK(cuStreamSynchronize(stream)); }
void rg_use_stream(void *native) { stream = native ? (CUstream)native : own_stream; }

void rg_events_begin(void) { CK(cuEventRecord(ev0, stream)); }
void rg_events_end(void)
{
    CK(cuEventRecord(ev1, stream));
    CK(cuEventSynchronize(ev1));
}
double rg_events_seconds(void)
{
    float ms = 0;
    CK(cuEventElapsedTime(&ms, ev0, ev1));
    return ms * 1e-3;
}

int rg_device_count(void)
{
    int n = 0;
    CK(cuDeviceGetCount(&n));
    return n;
}

bool rg_peer_copy(size_t bytes, int reps, double *seconds, bool *direct, char *why, size_t why_n)
{
    CUdevice d1;
    CUcontext ctx1;
    if (rg_device_count() < 2 || cuDeviceGet(&d1, 1) != CUDA_SUCCESS) {
        snprintf(why, why_n, "one NVIDIA GPU");
        return false;
    }
    CK(cuDevicePrimaryCtxRetain(&ctx1, d1));
    int can = 0;
    CK(cuDeviceCanAccessPeer(&can, dev, d1));
    if (can) {
        CUresult e = cuCtxEnablePeerAccess(ctx1, 0);
        if (e != CUDA_SUCCESS && e != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) CK(e);
    }
    *direct = can != 0;
    size_t count = bytes / 4;
    CUdeviceptr src, dst;
    CK(cuMemAlloc(&src, bytes));
    CK(cuCtxSetCurrent(ctx1));
    CK(cuMemAlloc(&dst, bytes));
    CK(cuMemsetD32(dst, 0, count));
    CK(cuCtxSetCurrent(ctx));
    CK(cuMemsetD32(src, 0x3f8ccccd, count));
    double *t = malloc((size_t)reps * sizeof *t);
    if (!t) die("out of memory");
    CK(cuMemcpyPeerAsync(dst, ctx1, src, ctx, bytes, stream)); /* warm-up */
    CK(cuStreamSynchronize(stream));
    for (int r = 0; r < reps; ++r) {
        rg_events_begin();
        CK(cuMemcpyPeerAsync(dst, ctx1, src, ctx, bytes, stream));
        rg_events_end();
        t[r] = rg_events_seconds();
    }
    *seconds = wl_median(t, reps);
    free(t);
    uint32_t *host = malloc(bytes);
    if (!host) die("out of memory");
    CK(cuMemcpyDtoH(host, dst, bytes)); /* unified addressing: any context */
    size_t bad = 0;
    for (size_t i = 0; i < count; ++i) bad += host[i] != 0x3f8ccccdu;
    free(host);
    CK(cuMemFree(src));
    CK(cuCtxSetCurrent(ctx1));
    CK(cuMemFree(dst));
    CK(cuCtxSetCurrent(ctx));
    CK(cuDevicePrimaryCtxRelease(d1));
    if (bad) die("raw peer copy: %zu of %zu words wrong on device 1", bad, count);
    return true;
}

/* cuBLAS, loaded at run time: the benchmark alone needs it, so neither
 * hipamp nor this build depends on it. */
typedef int (*cublasCreate_t)(void **);
typedef int (*cublasDestroy_t)(void *);
typedef int (*cublasSetStream_t)(void *, CUstream);
typedef int (*cublasSgemm_t)(void *, int, int, int, int, int, const float *, const float *, int, const float *,
                             int, const float *, float *, int);
typedef int (*cublasSetPointerMode_t)(void *, int);
typedef int (*cublasSasum_t)(void *, int, const float *, int, float *);
typedef int (*cublasSdot_t)(void *, int, const float *, int, const float *, int, float *);
static struct {
    void *lib, *h;
    cublasSgemm_t sgemm;
    cublasDestroy_t destroy;
    cublasSetPointerMode_t pointer_mode;
    cublasSasum_t sasum;
    cublasSdot_t sdot;
} cublas;

bool rg_blas_load(char *lib, size_t lib_n, char *why, size_t why_n)
{
    static const char *const libs[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0] && !cublas.lib; ++i) {
        cublas.lib = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
        if (cublas.lib) snprintf(lib, lib_n, "%s", libs[i]);
    }
    if (!cublas.lib) {
        const char *e = dlerror();
        snprintf(why, why_n, "%s", e ? e : "no libcublas");
        return false;
    }
    cublasCreate_t create = (cublasCreate_t)dlsym(cublas.lib, "cublasCreate_v2");
    cublasSetStream_t set_stream = (cublasSetStream_t)dlsym(cublas.lib, "cublasSetStream_v2");
    cublas.sgemm = (cublasSgemm_t)dlsym(cublas.lib, "cublasSgemm_v2");
    cublas.destroy = (cublasDestroy_t)dlsym(cublas.lib, "cublasDestroy_v2");
    cublas.pointer_mode = (cublasSetPointerMode_t)dlsym(cublas.lib, "cublasSetPointerMode_v2");
    cublas.sasum = (cublasSasum_t)dlsym(cublas.lib, "cublasSasum_v2");
    cublas.sdot = (cublasSdot_t)dlsym(cublas.lib, "cublasSdot_v2");
    if (!create || !set_stream || !cublas.sgemm) {
        snprintf(why, why_n, "%s lacks cublasCreate_v2, cublasSetStream_v2 or cublasSgemm_v2", lib);
        return false;
    }
    int rc = create(&cublas.h);
    if (rc != 0) {
        cublas.h = NULL;
        snprintf(why, why_n, "cublasCreate_v2 failed: %d", rc);
        return false;
    }
    if ((rc = set_stream(cublas.h, stream)) != 0) {
        snprintf(why, why_n, "cublasSetStream_v2 failed: %d", rc);
        return false;
    }
    return true;
}

void rg_sgemm(int M, int N, int K, rg_ptr a, rg_ptr b, rg_ptr c)
{
    const float one = 1.0f, zero = 0.0f;
    /* Row-major C = A B is column-major C^T = B^T A^T: swap the operands.
     * 0 is CUBLAS_OP_N. */
    int rc = cublas.sgemm(cublas.h, 0, 0, N, M, K, &one, (const float *)b, N, (const float *)a, K, &zero,
                          (float *)c, N);
    if (rc != 0) die("cublasSgemm_v2 failed: %d", rc);
}

/* Level-1 results to the device (CUBLAS_POINTER_MODE_DEVICE, 1), so that a
 * batch queues without waiting; back to host mode for rg_sgemm's alpha and
 * beta. */
bool rg_sasum(int n, rg_ptr x, rg_ptr result)
{
    if (!cublas.h || !cublas.sasum || !cublas.pointer_mode) return false;
    cublas.pointer_mode(cublas.h, 1);
    int rc = cublas.sasum(cublas.h, n, (const float *)x, 1, (float *)result);
    cublas.pointer_mode(cublas.h, 0);
    if (rc != 0) die("cublasSasum_v2 failed: %d", rc);
    return true;
}

bool rg_sdot(int n, rg_ptr x, rg_ptr y, rg_ptr result)
{
    if (!cublas.h || !cublas.sdot || !cublas.pointer_mode) return false;
    cublas.pointer_mode(cublas.h, 1);
    int rc = cublas.sdot(cublas.h, n, (const float *)x, 1, (const float *)y, 1, (float *)result);
    cublas.pointer_mode(cublas.h, 0);
    if (rc != 0) die("cublasSdot_v2 failed: %d", rc);
    return true;
}

void rg_blas_unload(void)
{
    if (cublas.h && cublas.destroy) cublas.destroy(cublas.h);
    cublas.h = NULL;
}
