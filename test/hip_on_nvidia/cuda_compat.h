/* cuda_compat.h — the CUDA runtime and driver names that HIP 5.2's NVIDIA-platform headers (Debian's libamdhip64-dev) still use and CUDA 12/13 removed or changed, given back so that those headers compile against today's toolkit; included by the test runtime before any HIP header. */
#ifndef AMP_TEST_HIP_ON_NVIDIA_CUDA_COMPAT_H
#define AMP_TEST_HIP_ON_NVIDIA_CUDA_COMPAT_H

#include <cuda.h>
#include <cuda_runtime_api.h>

/* Nothing here is reached by a function hipamp loads: each item sits in a
 * HIP function the library never calls (texture binding, multi-device
 * cooperative launch, context creation, memory advice, device choice) or
 * fills a hipDeviceProp_t field it never reads. Where such a function is
 * called anyway it fails with cudaErrorNotSupported, never with a wrong
 * answer. */

#if CUDART_VERSION >= 12000
/* Removed in CUDA 12: texture references and multi-device cooperative
 * launch. */
static inline cudaError_t amp_compat_not_supported(...) { return cudaErrorNotSupported; }
#define cudaBindTexture amp_compat_not_supported
#define cudaBindTexture2D amp_compat_not_supported
#define cudaGetTextureAlignmentOffset amp_compat_not_supported
#define cudaLaunchCooperativeKernelMultiDevice amp_compat_not_supported
#define cudaUnbindTexture amp_compat_not_supported
#define cudaBindTextureToArray amp_compat_not_supported
/* The texture-reference template the HIP header's texture binding names. */
template <class T, int dim, enum cudaTextureReadMode mode> struct texture {};
#endif

#if CUDART_VERSION >= 13000
/* cudaDeviceProp lost clockRate, memoryClockRate, computeMode,
 * kernelExecTimeoutEnabled and cooperativeMultiDeviceLaunch in CUDA 13; the
 * HIP header reads and writes them. Its locals of type struct
 * cudaDeviceProp become this derived struct (a pointer to it converts to
 * the real one), whose extra fields read as 0. */
struct amp_compat_cudaDeviceProp : cudaDeviceProp {
    int clockRate = 0, memoryClockRate = 0, computeMode = 0, kernelExecTimeoutEnabled = 0,
        cooperativeMultiDeviceLaunch = 0;
};
#define cudaDeviceProp amp_compat_cudaDeviceProp

/* The attribute is gone; the HIP query of it then fails with CUDA's
 * invalid-value error. */
#define cudaDevAttrCooperativeMultiDeviceLaunch ((cudaDeviceAttr)-1)

/* Memory advice and prefetch name a cudaMemLocation instead of a device
 * ordinal. */
static inline cudaError_t amp_compat_mem_advise(const void *p, size_t n, cudaMemoryAdvise advice, int device)
{
    cudaMemLocation where = {device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice,
                             device == cudaCpuDeviceId ? 0 : device};
    return cudaMemAdvise(p, n, advice, where);
}
static inline cudaError_t amp_compat_mem_prefetch(const void *p, size_t n, int device, cudaStream_t s)
{
    cudaMemLocation where = {device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice,
                             device == cudaCpuDeviceId ? 0 : device};
    return cudaMemPrefetchAsync(p, n, where, 0, s);
}
#define cudaMemAdvise amp_compat_mem_advise
#define cudaMemPrefetchAsync amp_compat_mem_prefetch

/* Graph edges and capture dependencies carry edge data (NULL: plain
 * edges, what the HIP functions mean). */
#define cudaGraphAddDependencies(g, from, to, n) cudaGraphAddDependencies((g), (from), (to), NULL, (n))
#define cudaGraphRemoveDependencies(g, from, to, n) cudaGraphRemoveDependencies((g), (from), (to), NULL, (n))
#define cudaGraphGetEdges(g, from, to, n) cudaGraphGetEdges((g), (from), (to), NULL, (n))
#define cudaGraphNodeGetDependencies(node, deps, n) cudaGraphNodeGetDependencies((node), (deps), NULL, (n))
#define cudaGraphNodeGetDependentNodes(node, deps, n) cudaGraphNodeGetDependentNodes((node), (deps), NULL, (n))
#define cudaStreamGetCaptureInfo_v2(s, status, id, graph, deps, n)                                     \
    cudaStreamGetCaptureInfo((s), (status), (id), (graph), (deps), NULL, (n))
#define cudaStreamUpdateCaptureDependencies(s, deps, n, flags)                                         \
    cudaStreamUpdateCaptureDependencies((s), (deps), NULL, (n), (flags))

/* cuCtxCreate takes creation parameters first. */
#undef cuCtxCreate
#define cuCtxCreate(ctx, flags, dev) cuCtxCreate_v4((ctx), NULL, (flags), (dev))
#endif

#endif
