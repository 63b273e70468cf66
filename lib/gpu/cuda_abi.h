/* cuda_abi.h — the hand-declared CUDA driver and NVRTC ABI that driver_cuda.c loads with dlopen (values, types, the CUDA_MEMCPY2D layout, function lists), written so that test/abi/test_abi_cuda.c can check every item against cuda.h and nvrtc.h. */
#ifndef AMP_GPU_CUDA_ABI_H
#define AMP_GPU_CUDA_ABI_H

#include <stddef.h>

/* The library includes no CUDA header (it must build where no toolkit is
 * installed), so it declares what it uses itself. As in hip_abi.h, every
 * item is one row of an X-macro list under the vendor's own name:
 *
 *   CUDA_ABI_TYPES      X(vendor typedef, our type)      scalar types
 *   CUDA_ABI_CONSTANTS  X(our name, value, vendor name)  enum values, flags
 *   CUDA_ABI_MEMCPY2D   X(field type, field name)        CUDA_MEMCPY2D (v2)
 *   CUDA_ABI_LAUNCH_*   X(field type, field name)        CUlaunchAttribute, CUlaunchConfig
 *   CUDA_FUNCS etc.     X(symbol, return type, (parameter types))
 *
 * The library expands the lists into definitions (below); the ABI test
 * defines AMP__ABI_CHECK, gets the lists only, and checks each row against
 * the real headers (types by size, alignment and kind, constants by value,
 * the struct by offsets, functions by their exact declared type).
 *
 * Values and entry points are stable since CUDA 4 (driver) and 11 (NVRTC).
 * The _v2 entry points are what cuda.h maps the plain names to since CUDA
 * 3.2/4.0; dlsym needs the real symbol names, so the rows name them. */

#define CUDA_ABI_TYPES(X)                                                               \
    X(CUresult, int)                                                                    \
    X(CUdevice, int)                                                                    \
    X(CUdevice_attribute, int)                                                          \
    X(CUfunction_attribute, int)                                                        \
    X(CUpointer_attribute, int)                                                         \
    X(CUmemorytype, int)                                                                \
    X(CUdeviceptr, unsigned long long)                                                  \
    X(CUcontext, void *)                                                                \
    X(CUmodule, void *)                                                                 \
    X(CUfunction, void *)                                                               \
    X(CUstream, void *)                                                                 \
    X(CUevent, void *)                                                                  \
    X(CUarray, void *)                                                                  \
    X(CUgraph, void *)                                                                  \
    X(CUgraphExec, void *)                                                              \
    X(CUstreamCaptureMode, int)                                                         \
    X(CUlaunchAttributeID, int)                                                         \
    X(nvrtcResult, int)                                                                 \
    X(nvrtcProgram, void *)

/* NVRTC reports success as 0, and driver_cuda.c compares its results with 0
 * directly; the row says so and is checked like the rest. */
#define CUDA_ABI_CONSTANTS(X)                                                           \
    X(CUDA_SUCCESS, 0, CUDA_SUCCESS)                                                    \
    X(CUDA_ERROR_OUT_OF_MEMORY, 2, CUDA_ERROR_OUT_OF_MEMORY)                            \
    X(CUDA_ERROR_INVALID_CONTEXT, 201, CUDA_ERROR_INVALID_CONTEXT)                      \
    X(CUDA_ERROR_INVALID_HANDLE, 400, CUDA_ERROR_INVALID_HANDLE)                        \
    X(CUDA_ERROR_NOT_FOUND, 500, CUDA_ERROR_NOT_FOUND)                                  \
    X(CUDA_ERROR_NOT_READY, 600, CUDA_ERROR_NOT_READY)                                  \
    X(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, 712, CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) \
    X(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, 704, CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) \
    X(CU_ATTR_MAX_THREADS_PER_BLOCK, 1, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)      \
    X(CU_ATTR_MAX_BLOCK_DIM_X, 2, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)                  \
    X(CU_ATTR_MAX_BLOCK_DIM_Y, 3, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)                  \
    X(CU_ATTR_MAX_BLOCK_DIM_Z, 4, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)                  \
    X(CU_ATTR_MAX_GRID_DIM_X, 5, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)                    \
    X(CU_ATTR_MAX_GRID_DIM_Y, 6, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)                    \
    X(CU_ATTR_MAX_GRID_DIM_Z, 7, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)                    \
    X(CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK, 8, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK) \
    X(CU_ATTR_MULTIPROCESSOR_COUNT, 16, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)       \
    X(CU_ATTR_INTEGRATED, 18, CU_DEVICE_ATTRIBUTE_INTEGRATED)                           \
    X(CU_ATTR_COMPUTE_CAPABILITY_MAJOR, 75, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) \
    X(CU_ATTR_COMPUTE_CAPABILITY_MINOR, 76, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) \
    X(CU_ATTR_MANAGED_MEMORY, 83, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY)                   \
    X(CU_ATTR_PAGEABLE_MEMORY_ACCESS, 88, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS)   \
    X(CU_MEMORYTYPE_HOST, 1, CU_MEMORYTYPE_HOST)                                        \
    X(CU_MEMORYTYPE_DEVICE, 2, CU_MEMORYTYPE_DEVICE)                                    \
    X(CU_POINTER_ATTRIBUTE_IS_MANAGED, 8, CU_POINTER_ATTRIBUTE_IS_MANAGED)              \
    X(CU_STREAM_NON_BLOCKING, 0x1, CU_STREAM_NON_BLOCKING)                              \
    X(CU_EVENT_DISABLE_TIMING, 0x2, CU_EVENT_DISABLE_TIMING)                            \
    X(CU_MEMHOSTREGISTER_PORTABLE, 0x1, CU_MEMHOSTREGISTER_PORTABLE)                    \
    X(CU_MEMHOSTREGISTER_DEVICEMAP, 0x2, CU_MEMHOSTREGISTER_DEVICEMAP)                  \
    X(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) \
    X(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, 1, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)      \
    X(CU_STREAM_CAPTURE_MODE_RELAXED, 2, CU_STREAM_CAPTURE_MODE_RELAXED)                \
    X(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, 6,                         \
      CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)                            \
    X(NVRTC_SUCCESS, 0, NVRTC_SUCCESS)

/* CUDA_MEMCPY2D (v2: size_t fields), field by field in cuda.h's order. */
#define CUDA_ABI_MEMCPY2D(X)                                                            \
    X(size_t, srcXInBytes)                                                              \
    X(size_t, srcY)                                                                     \
    X(CUmemorytype, srcMemoryType)                                                      \
    X(const void *, srcHost)                                                            \
    X(CUdeviceptr, srcDevice)                                                           \
    X(CUarray, srcArray)                                                                \
    X(size_t, srcPitch)                                                                 \
    X(size_t, dstXInBytes)                                                              \
    X(size_t, dstY)                                                                     \
    X(CUmemorytype, dstMemoryType)                                                      \
    X(void *, dstHost)                                                                  \
    X(CUdeviceptr, dstDevice)                                                           \
    X(CUarray, dstArray)                                                                \
    X(size_t, dstPitch)                                                                 \
    X(size_t, WidthInBytes)                                                             \
    X(size_t, Height)

/* CUlaunchAttribute (CUDA 11.8): the attribute's id, padding to 8 bytes, and
 * a 64-byte union of values, of which the library sets one int (the
 * programmatic stream serialization flag) and zeroes the rest. The pad and
 * the union are types of our own so that the ABI test can mirror the
 * struct field by field. */
typedef struct cu_launch_attribute_pad { char bytes[4]; } cu_launch_attribute_pad;
typedef union cu_launch_attribute_value {
    char pad[64];
    void *event; /* members holding a CUevent: the union's alignment */
    int programmaticStreamSerializationAllowed;
} cu_launch_attribute_value;
#define CUDA_ABI_LAUNCH_ATTRIBUTE(X)                                                    \
    X(CUlaunchAttributeID, id)                                                          \
    X(cu_launch_attribute_pad, pad)                                                     \
    X(cu_launch_attribute_value, value)

/* CUlaunchConfig (CUDA 11.8), field by field in cuda.h's order. */
#define CUDA_ABI_LAUNCH_CONFIG(X)                                                       \
    X(unsigned, gridDimX)                                                               \
    X(unsigned, gridDimY)                                                               \
    X(unsigned, gridDimZ)                                                               \
    X(unsigned, blockDimX)                                                              \
    X(unsigned, blockDimY)                                                              \
    X(unsigned, blockDimZ)                                                              \
    X(unsigned, sharedMemBytes)                                                         \
    X(CUstream, hStream)                                                                \
    X(CUlaunchAttribute *, attrs)                                                       \
    X(unsigned, numAttrs)

#define CUDA_FUNCS(X)                                                                    \
    X(cuInit, CUresult, (unsigned))                                                      \
    X(cuDriverGetVersion, CUresult, (int *))                                             \
    X(cuDeviceGetCount, CUresult, (int *))                                               \
    X(cuDeviceGet, CUresult, (CUdevice *, int))                                          \
    X(cuDeviceGetName, CUresult, (char *, int, CUdevice))                                \
    X(cuDeviceTotalMem_v2, CUresult, (size_t *, CUdevice))                               \
    X(cuDeviceGetAttribute, CUresult, (int *, CUdevice_attribute, CUdevice))             \
    X(cuDevicePrimaryCtxRetain, CUresult, (CUcontext *, CUdevice))                       \
    X(cuCtxGetCurrent, CUresult, (CUcontext *))                                          \
    X(cuCtxSetCurrent, CUresult, (CUcontext))                                            \
    X(cuGetErrorString, CUresult, (CUresult, const char **))                             \
    X(cuGetErrorName, CUresult, (CUresult, const char **))                               \
    X(cuModuleLoadData, CUresult, (CUmodule *, const void *))                            \
    X(cuModuleUnload, CUresult, (CUmodule))                                              \
    X(cuModuleGetFunction, CUresult, (CUfunction *, CUmodule, const char *))             \
    X(cuModuleGetGlobal_v2, CUresult, (CUdeviceptr *, size_t *, CUmodule, const char *)) \
    X(cuMemcpyDtoH_v2, CUresult, (void *, CUdeviceptr, size_t))                          \
    X(cuStreamCreate, CUresult, (CUstream *, unsigned))                                  \
    X(cuStreamDestroy_v2, CUresult, (CUstream))                                          \
    X(cuStreamSynchronize, CUresult, (CUstream))                                         \
    X(cuStreamWaitEvent, CUresult, (CUstream, CUevent, unsigned))                        \
    X(cuEventCreate, CUresult, (CUevent *, unsigned))                                    \
    X(cuEventDestroy_v2, CUresult, (CUevent))                                            \
    X(cuEventRecord, CUresult, (CUevent, CUstream))                                      \
    X(cuEventSynchronize, CUresult, (CUevent))                                           \
    X(cuEventQuery, CUresult, (CUevent))                                                 \
    X(cuMemAlloc_v2, CUresult, (CUdeviceptr *, size_t))                                  \
    X(cuMemFree_v2, CUresult, (CUdeviceptr))                                             \
    X(cuMemHostRegister_v2, CUresult, (void *, size_t, unsigned))                        \
    X(cuMemHostUnregister, CUresult, (void *))                                           \
    X(cuMemHostGetDevicePointer_v2, CUresult, (CUdeviceptr *, void *, unsigned))         \
    X(cuMemcpyHtoDAsync_v2, CUresult, (CUdeviceptr, const void *, size_t, CUstream))     \
    X(cuMemcpyDtoHAsync_v2, CUresult, (void *, CUdeviceptr, size_t, CUstream))           \
    X(cuMemcpyDtoDAsync_v2, CUresult, (CUdeviceptr, CUdeviceptr, size_t, CUstream))      \
    X(cuMemcpy2DAsync_v2, CUresult, (const CUDA_MEMCPY2D *, CUstream))                  \
    X(cuMemcpyPeerAsync, CUresult, (CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream)) \
    X(cuFuncGetAttribute, CUresult, (int *, CUfunction_attribute, CUfunction))          \
    X(cuStreamGetCtx, CUresult, (CUstream, CUcontext *))                                \
    X(cuLaunchKernel, CUresult,                                                          \
      (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, \
       CUstream, void **, void **))

/* Optional driver entry points: a missing one only loses a refinement
 * (without the peer pair, copies between two GPUs stage through the host). */
#define CUDA_OPTIONAL(X)                                                                 \
    X(cuPointerGetAttribute, CUresult, (void *, CUpointer_attribute, CUdeviceptr))      \
    X(cuDeviceCanAccessPeer, CUresult, (int *, CUdevice, CUdevice))                     \
    X(cuCtxEnablePeerAccess, CUresult, (CUcontext, unsigned))                           \
    X(cuLaunchKernelEx, CUresult, (const CUlaunchConfig *, CUfunction, void **, void **))

/* Launch graphs by stream capture (lib/core/graph.c): optional, so that a
 * driver without them (cuGraphInstantiateWithFlags is CUDA 11.4) only
 * loses graphs. cuStreamBeginCapture is what cuda.h maps the plain name to
 * since CUDA 10.1 (_v2 takes the capture mode); cuGraphInstantiate is
 * mapped to cuGraphInstantiateWithFlags since CUDA 12. */
#define CUDA_GRAPH(X)                                                                    \
    X(cuStreamBeginCapture_v2, CUresult, (CUstream, CUstreamCaptureMode))                \
    X(cuStreamEndCapture, CUresult, (CUstream, CUgraph *))                               \
    X(cuGraphInstantiateWithFlags, CUresult, (CUgraphExec *, CUgraph, unsigned long long)) \
    X(cuGraphLaunch, CUresult, (CUgraphExec, CUstream))                                  \
    X(cuGraphExecDestroy, CUresult, (CUgraphExec))                                       \
    X(cuGraphDestroy, CUresult, (CUgraph))

/* Optional entry points that a newer cuda.h renames to NAME_v2 with a macro
 * (CUDA 12.8: cuEventElapsedTime), keeping the type: the library loads
 * NAME_v2 where the driver has it, else NAME, so it runs on every driver;
 * the ABI test checks the type of whichever the header declares. */
#define CUDA_RENAMED(X)                                                                  \
    X(cuEventElapsedTime, CUresult, (float *, CUevent, CUevent))

#define NVRTC_FUNCS(X)                                                                   \
    X(nvrtcVersion, nvrtcResult, (int *, int *))                                         \
    X(nvrtcGetErrorString, const char *, (nvrtcResult))                                  \
    X(nvrtcCreateProgram, nvrtcResult,                                                   \
      (nvrtcProgram *, const char *, const char *, int, const char *const *, const char *const *)) \
    X(nvrtcCompileProgram, nvrtcResult, (nvrtcProgram, int, const char *const *))        \
    X(nvrtcGetProgramLogSize, nvrtcResult, (nvrtcProgram, size_t *))                     \
    X(nvrtcGetProgramLog, nvrtcResult, (nvrtcProgram, char *))                           \
    X(nvrtcGetPTXSize, nvrtcResult, (nvrtcProgram, size_t *))                            \
    X(nvrtcGetPTX, nvrtcResult, (nvrtcProgram, char *))                                  \
    X(nvrtcDestroyProgram, nvrtcResult, (nvrtcProgram *))

/* Optional NVRTC entry points (CUDA 11.1/11.2+): CUBIN output and the list of
 * real architectures it can target. Missing -> PTX for the driver to JIT. */
#define NVRTC_OPTIONAL(X)                                                                \
    X(nvrtcGetCUBINSize, nvrtcResult, (nvrtcProgram, size_t *))                          \
    X(nvrtcGetCUBIN, nvrtcResult, (nvrtcProgram, char *))                                \
    X(nvrtcGetNumSupportedArchs, nvrtcResult, (int *))                                   \
    X(nvrtcGetSupportedArchs, nvrtcResult, (int *))

/* ---------------------------------------------- the library's definitions */
#ifndef AMP__ABI_CHECK

#define AMP__CUDA_ABI_TYPEDEF(name, ours) typedef ours name;
CUDA_ABI_TYPES(AMP__CUDA_ABI_TYPEDEF)
#undef AMP__CUDA_ABI_TYPEDEF

#define AMP__CUDA_ABI_CONSTANT(name, value, vendor) name = (value),
enum { CUDA_ABI_CONSTANTS(AMP__CUDA_ABI_CONSTANT) };
#undef AMP__CUDA_ABI_CONSTANT

#define AMP__CUDA_ABI_FIELD(type, name) type name;
typedef struct cu_memcpy2d { CUDA_ABI_MEMCPY2D(AMP__CUDA_ABI_FIELD) } cu_memcpy2d;
typedef cu_memcpy2d CUDA_MEMCPY2D;
typedef struct cu_launch_attribute { CUDA_ABI_LAUNCH_ATTRIBUTE(AMP__CUDA_ABI_FIELD) } cu_launch_attribute;
typedef cu_launch_attribute CUlaunchAttribute;
typedef struct cu_launch_config { CUDA_ABI_LAUNCH_CONFIG(AMP__CUDA_ABI_FIELD) } cu_launch_config;
typedef cu_launch_config CUlaunchConfig;
#undef AMP__CUDA_ABI_FIELD

#endif /* AMP__ABI_CHECK */

#endif /* AMP_GPU_CUDA_ABI_H */
