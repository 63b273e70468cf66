/* hip_on_nvidia.cpp — a test runtime named libamdhip64.so for HIP's NVIDIA platform: it exports every HIP runtime and hipRTC entry point hipamp loads (lib/gpu/hip_abi.h), each forwarding to the inline function of HIP's own NVIDIA-platform headers (CUDA runtime, driver and NVRTC underneath), so that hipamp's HIP driver runs on an NVIDIA GPU. Never installed. */
#include "cuda_compat.h"

#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>

#include <cstddef>
#include <cstdlib>
#include <type_traits>

/* Every row of the library's lists, as the vendor declares it here. */
#define AMP__ABI_CHECK 1
#include "gpu/hip_abi.h"

/* FORWARD(name, return type, (parameters), (arguments)) defines the
 * exported function. Its C++ name is amp_export_<name>; its symbol is
 * <name> (an asm label), the header's own <name> being a static inline
 * function. flatten inlines that function into the export, so it is never
 * emitted on its own under the same symbol. */
#define FORWARD(name, ret, params, args)                                                     \
    extern "C" __attribute__((visibility("default"))) ret amp_export_##name params __asm__(#name); \
    extern "C" __attribute__((flatten)) ret amp_export_##name params { return name args; }

/* The runtime (HIP_FUNCS). */
FORWARD(hipGetDeviceCount, hipError_t, (int *n), (n))
FORWARD(hipGetDevice, hipError_t, (int *d), (d))
FORWARD(hipSetDevice, hipError_t, (int d), (d))
FORWARD(hipDeviceGetAttribute, hipError_t, (int *v, hipDeviceAttribute_t a, int d), (v, a, d))
FORWARD(hipDeviceGetName, hipError_t, (char *name, int len, hipDevice_t d), (name, len, d))
FORWARD(hipDeviceTotalMem, hipError_t, (size_t *bytes, hipDevice_t d), (bytes, d))
FORWARD(hipRuntimeGetVersion, hipError_t, (int *v), (v))
FORWARD(hipGetErrorString, const char *, (hipError_t e), (e))
FORWARD(hipModuleLoadData, hipError_t, (hipModule_t *m, const void *image), (m, image))
FORWARD(hipModuleUnload, hipError_t, (hipModule_t m), (m))
FORWARD(hipModuleGetFunction, hipError_t, (hipFunction_t *f, hipModule_t m, const char *name), (f, m, name))
FORWARD(hipModuleGetGlobal, hipError_t, (hipDeviceptr_t *p, size_t *bytes, hipModule_t m, const char *name),
        (p, bytes, m, name))
FORWARD(hipMemcpyDtoH, hipError_t, (void *dst, hipDeviceptr_t src, size_t n), (dst, src, n))
FORWARD(hipStreamCreateWithFlags, hipError_t, (hipStream_t *s, unsigned flags), (s, flags))
FORWARD(hipStreamDestroy, hipError_t, (hipStream_t s), (s))
FORWARD(hipStreamSynchronize, hipError_t, (hipStream_t s), (s))
FORWARD(hipStreamWaitEvent, hipError_t, (hipStream_t s, hipEvent_t e, unsigned flags), (s, e, flags))
FORWARD(hipEventCreateWithFlags, hipError_t, (hipEvent_t *e, unsigned flags), (e, flags))
FORWARD(hipEventDestroy, hipError_t, (hipEvent_t e), (e))
FORWARD(hipEventRecord, hipError_t, (hipEvent_t e, hipStream_t s), (e, s))
FORWARD(hipEventSynchronize, hipError_t, (hipEvent_t e), (e))
FORWARD(hipEventQuery, hipError_t, (hipEvent_t e), (e))
FORWARD(hipMalloc, hipError_t, (void **p, size_t n), (p, n))
FORWARD(hipFree, hipError_t, (void *p), (p))
/* AMD's runtime never answers hipErrorHostMemoryAlreadyRegistered (ROCm
 * clr's ihipHostRegister registers the range a second time and succeeds);
 * HIP on NVIDIA passes CUDA's answer on. With
 * HIPAMP_TEST_HIP_REGISTER_AS_AMD=1 (ci/gpu.sh's HIP passes) this runtime
 * succeeds there as AMD's does, the range staying registered once, its
 * owner's: hipamp's handling of memory someone else pinned is then tested
 * as it runs on AMD (an unregister of ours would end the owner's). */
extern "C" __attribute__((visibility("default"))) hipError_t amp_export_hipHostRegister(void *p, size_t n,
                                                                                         unsigned flags)
    __asm__("hipHostRegister");
extern "C" __attribute__((flatten)) hipError_t amp_export_hipHostRegister(void *p, size_t n, unsigned flags)
{
    hipError_t e = hipHostRegister(p, n, flags);
    const char *amd = getenv("HIPAMP_TEST_HIP_REGISTER_AS_AMD");
    if (e == hipErrorHostMemoryAlreadyRegistered && amd && amd[0] == '1') {
        (void)hipGetLastError();
        return hipSuccess;
    }
    return e;
}
FORWARD(hipHostUnregister, hipError_t, (void *p), (p))
FORWARD(hipHostGetDevicePointer, hipError_t, (void **d, void *h, unsigned flags), (d, h, flags))
FORWARD(hipDeviceSynchronize, hipError_t, (void), ())
FORWARD(hipMemcpyAsync, hipError_t, (void *dst, const void *src, size_t n, hipMemcpyKind k, hipStream_t s),
        (dst, src, n, k, s))
FORWARD(hipMemcpy2DAsync, hipError_t,
        (void *dst, size_t dpitch, const void *src, size_t spitch, size_t w, size_t h, hipMemcpyKind k, hipStream_t s),
        (dst, dpitch, src, spitch, w, h, k, s))
FORWARD(hipMemcpyPeerAsync, hipError_t, (void *dst, int dd, const void *src, int sd, size_t n, hipStream_t s),
        (dst, dd, src, sd, n, s))
FORWARD(hipEventElapsedTime, hipError_t, (float *ms, hipEvent_t a, hipEvent_t b), (ms, a, b))
FORWARD(hipFuncGetAttribute, hipError_t, (int *v, hipFunction_attribute a, hipFunction_t f), (v, a, f))
FORWARD(hipModuleLaunchKernel, hipError_t,
        (hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shared,
         hipStream_t s, void **params, void **extra),
        (f, gx, gy, gz, bx, by, bz, shared, s, params, extra))

/* The optional runtime functions (HIP_OPTIONAL_PLAIN). The versioned
 * property getters (R0600, R0000) are AMD's alone and not exported: the
 * library's NVIDIA mode reads the compute capability instead. */
FORWARD(hipGetDeviceProperties, hipError_t, (hipDeviceProp_t *p, int d), (p, d))
FORWARD(hipGetLastError, hipError_t, (void), ())
FORWARD(hipPointerGetAttribute, hipError_t, (void *v, hipPointer_attribute a, hipDeviceptr_t p), (v, a, p))
FORWARD(hipDeviceCanAccessPeer, hipError_t, (int *can, int d, int peer), (can, d, peer))
FORWARD(hipDeviceEnablePeerAccess, hipError_t, (int peer, unsigned flags), (peer, flags))

/* HIP_OPTIONAL_LATER: HIP 5.2's NVIDIA-platform headers have no
 * hipStreamGetDevice; CUDA's runtime answers it from 12.8 (before, the
 * export is left out, as HIP 5.2 leaves it out, and the library skips the
 * check). */
#if CUDART_VERSION >= 12080
extern "C" __attribute__((visibility("default"))) hipError_t amp_export_hipStreamGetDevice(hipStream_t s, int *d)
    __asm__("hipStreamGetDevice");
extern "C" hipError_t amp_export_hipStreamGetDevice(hipStream_t s, int *d)
{
    return hipCUDAErrorTohipError(cudaStreamGetDevice(s, d));
}
static_assert(std::is_same<decltype(&amp_export_hipStreamGetDevice), hipError_t (*)(hipStream_t, int *)>::value,
              "hipStreamGetDevice: the export's type is not lib/gpu/hip_abi.h's row");
#endif

/* Graphs (HIP_OPTIONAL_GRAPH). */
FORWARD(hipStreamBeginCapture, hipError_t, (hipStream_t s, hipStreamCaptureMode m), (s, m))
FORWARD(hipStreamEndCapture, hipError_t, (hipStream_t s, hipGraph_t *g), (s, g))
FORWARD(hipGraphInstantiate, hipError_t,
        (hipGraphExec_t *e, hipGraph_t g, hipGraphNode_t *err, char *log, size_t n), (e, g, err, log, n))
FORWARD(hipGraphLaunch, hipError_t, (hipGraphExec_t e, hipStream_t s), (e, s))
FORWARD(hipGraphExecDestroy, hipError_t, (hipGraphExec_t e), (e))
FORWARD(hipGraphDestroy, hipError_t, (hipGraph_t g), (g))

/* hipRTC (HIPRTC_FUNCS): in libamdhip64 itself, as in ROCm 5. */
FORWARD(hiprtcVersion, hiprtcResult, (int *major, int *minor), (major, minor))
FORWARD(hiprtcGetErrorString, const char *, (hiprtcResult r), (r))
FORWARD(hiprtcCreateProgram, hiprtcResult,
        (hiprtcProgram * p, const char *src, const char *name, int n, const char **headers, const char **names),
        (p, src, name, n, headers, names))
FORWARD(hiprtcCompileProgram, hiprtcResult, (hiprtcProgram p, int n, const char **options), (p, n, options))
FORWARD(hiprtcGetProgramLogSize, hiprtcResult, (hiprtcProgram p, size_t *n), (p, n))
FORWARD(hiprtcGetProgramLog, hiprtcResult, (hiprtcProgram p, char *log), (p, log))
FORWARD(hiprtcGetCodeSize, hiprtcResult, (hiprtcProgram p, size_t *n), (p, n))
FORWARD(hiprtcGetCode, hiprtcResult, (hiprtcProgram p, char *code), (p, code))
FORWARD(hiprtcDestroyProgram, hiprtcResult, (hiprtcProgram * p), (p))

/* Not the library's: what the tests' own vendor code (test/vendor.c: a
 * program's buffer and stream handed to hipamp) loads. */
FORWARD(hipMemcpy, hipError_t, (void *dst, const void *src, size_t n, hipMemcpyKind k), (dst, src, n, k))
FORWARD(hipStreamCreate, hipError_t, (hipStream_t * s), (s))
FORWARD(hipMemsetD32Async, hipError_t, (hipDeviceptr_t p, int v, size_t n, hipStream_t s), (p, v, n, s))

/* Every row the library loads has an export here (a row without its
 * FORWARD fails to compile) whose type is the row's, and the header
 * declares the function with that type (the cast selects it among the
 * header's C++ overloads, and fails to compile where there is none). */
#define CHECK_EXPORT(name, ret, args)                                                         \
    static_assert(std::is_same<decltype(&amp_export_##name), ret(*) args>::value,              \
                  #name ": the export's type is not lib/gpu/hip_abi.h's row");                \
    static_assert(sizeof(static_cast<ret(*) args>(&name)) != 0, #name);
HIP_FUNCS(CHECK_EXPORT)
HIP_OPTIONAL_PLAIN(CHECK_EXPORT)
HIP_OPTIONAL_GRAPH(CHECK_EXPORT)
HIPRTC_FUNCS(CHECK_EXPORT)

/* The library passes its own declarations of the types (hip_abi.h: int for
 * the enums, void * for handles and hipDeviceptr_t); on this platform they
 * must be passed the same way. */
#define CHECK_TYPE(vendor, ours)                                                              \
    static_assert(sizeof(vendor) == sizeof(ours) && alignof(vendor) == alignof(ours),         \
                  #vendor ": not passed as the library's " #ours);
HIP_ABI_TYPES(CHECK_TYPE)

/* The values the library passes and compares (error codes, attributes,
 * flags) are the NVIDIA platform's too: its hipError_t and device
 * attributes are HIP's own enums, translated to CUDA's inside the
 * forwarded functions; its stream, event, capture and host-register flags
 * are CUDA's, of the same values. */
#define CHECK_CONSTANT(ours, value, vendor)                                                   \
    static_assert((long long)(vendor) == (value), #vendor " differs from the library's " #ours);
HIP_ABI_CONSTANTS(CHECK_CONSTANT)
