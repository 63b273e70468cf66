/* hip_abi.h — the hand-declared HIP runtime, hipRTC and comgr ABI that driver_hip.c loads with dlopen (values, types, structs, function lists), written so that test/abi/test_abi_hip.c can check every item against the real headers. */
#ifndef AMP_GPU_HIP_ABI_H
#define AMP_GPU_HIP_ABI_H

#include <stddef.h>
#include <stdint.h>

/* The library includes no HIP header (it must build and run where ROCm is
 * absent), so it declares what it uses itself. Every item is one row of an
 * X-macro list that names the vendor's own identifier:
 *
 *   HIP_ABI_TYPES       X(vendor typedef, our type)      scalar types
 *   HIP_ABI_OPAQUE      X(vendor struct typedef)         only ever pointed to
 *   HIP_ABI_CONSTANTS   X(our name, value, vendor name)  enum values, flags
 *   HIP_ABI_COMGR_MD    X(field type, field name)        a struct passed by value
 *   HIP_FUNCS etc.      X(symbol, return type, (parameter types))
 *
 * The library expands the lists into definitions (below). The ABI test
 * defines AMP__ABI_CHECK before including this file, so that it gets the
 * lists only, includes the vendor headers, and expands the same rows
 * against them: a type row must match the vendor's type in size, alignment
 * and kind (integer or pointer), a constant its value, a function row the
 * vendor's declared function type exactly (with the vendor's typedefs in
 * place of ours), a struct row its offset. A row therefore cannot be added
 * without being checked.
 *
 * Values have been stable from ROCm 5.0 through 7.x (hipError_t,
 * hipMemcpyKind and hipDeviceAttribute_t numbering was fixed in 5.0).
 * HIP_MEMCPY3D is avoided on purpose: its hipMemoryType enum was renumbered
 * in ROCm 6 and its sizes are 32-bit in 5.x; hipMemcpy2DAsync's signature is
 * the same everywhere. Enums are int-sized in every HIP release; passing
 * them as int is what the C ABI does. */

/* Handles are opaque pointers (struct ihipStream_t * and so on in the
 * headers); errors and enum parameters are int-sized enums. */
#define HIP_ABI_TYPES(X)                                                                \
    X(hipError_t, int)                                                                  \
    X(hipDeviceAttribute_t, int)                                                        \
    X(hipFunction_attribute, int)                                                       \
    X(hipMemcpyKind, int)                                                               \
    X(hipPointer_attribute, int)                                                        \
    X(hipDevice_t, int)                                                                 \
    X(hipDeviceptr_t, void *)                                                           \
    X(hipStream_t, void *)                                                              \
    X(hipEvent_t, void *)                                                               \
    X(hipModule_t, void *)                                                              \
    X(hipFunction_t, void *)                                                            \
    X(hipGraph_t, void *)                                                               \
    X(hipGraphExec_t, void *)                                                           \
    X(hipGraphNode_t, void *)                                                           \
    X(hipStreamCaptureMode, int)                                                        \
    X(hiprtcResult, int)                                                                \
    X(hiprtcProgram, void *)
/* comgr's, apart: AMD's alone (the NVIDIA-platform test runtime checks the
 * lists above against HIP's NVIDIA headers, where comgr has no place). */
#define HIP_ABI_COMGR_TYPES(X) X(amd_comgr_status_t, int)

/* hipDeviceProp_t is read as bytes (see HIP_PROPS_* below): the library only
 * passes a buffer, so these are void to it. */
#define HIP_ABI_OPAQUE(X) X(hipDeviceProp_t) X(hipDeviceProp_tR0000) X(hipDeviceProp_tR0600)

/* hipRTC and comgr report success as 0, and driver_hip.c compares their
 * results with 0 directly; the rows say so and are checked like the rest. */
#define HIP_ABI_CONSTANTS(X)                                                            \
    X(HIP_SUCCESS, 0, hipSuccess)                                                       \
    X(HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) \
    X(HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, 1, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)    \
    X(HIP_ERROR_INVALID_VALUE, 1, hipErrorInvalidValue)                                 \
    X(HIP_ERROR_OUT_OF_MEMORY, 2, hipErrorOutOfMemory)                                  \
    X(HIP_ERROR_INVALID_DEVICE_FUNCTION, 98, hipErrorInvalidDeviceFunction)             \
    X(HIP_ERROR_INVALID_CONTEXT, 201, hipErrorInvalidContext)                           \
    X(HIP_ERROR_INVALID_KERNEL_FILE, 218, hipErrorInvalidKernelFile)                    \
    X(HIP_ERROR_INVALID_HANDLE, 400, hipErrorInvalidHandle)                             \
    X(HIP_ERROR_NOT_FOUND, 500, hipErrorNotFound)                                       \
    X(HIP_ERROR_NOT_READY, 600, hipErrorNotReady)                                       \
    X(HIP_ERROR_HOST_MEMORY_ALREADY_REGISTERED, 712, hipErrorHostMemoryAlreadyRegistered) \
    X(HIP_ERROR_PEER_ACCESS_ALREADY_ENABLED, 704, hipErrorPeerAccessAlreadyEnabled)   \
    X(HIP_MEMCPY_H2D, 1, hipMemcpyHostToDevice)                                         \
    X(HIP_MEMCPY_D2H, 2, hipMemcpyDeviceToHost)                                         \
    X(HIP_MEMCPY_D2D, 3, hipMemcpyDeviceToDevice)                                       \
    X(HIP_ATTR_INTEGRATED, 16, hipDeviceAttributeIntegrated)                            \
    X(HIP_ATTR_COMPUTE_CAPABILITY_MAJOR, 23, hipDeviceAttributeComputeCapabilityMajor)  \
    X(HIP_ATTR_COMPUTE_CAPABILITY_MINOR, 61, hipDeviceAttributeComputeCapabilityMinor)  \
    X(HIP_ATTR_MANAGED_MEMORY, 24, hipDeviceAttributeManagedMemory)                     \
    X(HIP_ATTR_MAX_BLOCK_DIM_X, 26, hipDeviceAttributeMaxBlockDimX)                     \
    X(HIP_ATTR_MAX_BLOCK_DIM_Y, 27, hipDeviceAttributeMaxBlockDimY)                     \
    X(HIP_ATTR_MAX_BLOCK_DIM_Z, 28, hipDeviceAttributeMaxBlockDimZ)                     \
    X(HIP_ATTR_MAX_GRID_DIM_X, 29, hipDeviceAttributeMaxGridDimX)                       \
    X(HIP_ATTR_MAX_GRID_DIM_Y, 30, hipDeviceAttributeMaxGridDimY)                       \
    X(HIP_ATTR_MAX_GRID_DIM_Z, 31, hipDeviceAttributeMaxGridDimZ)                       \
    X(HIP_ATTR_MAX_THREADS_PER_BLOCK, 56, hipDeviceAttributeMaxThreadsPerBlock)         \
    X(HIP_ATTR_MULTIPROCESSOR_COUNT, 63, hipDeviceAttributeMultiprocessorCount)         \
    X(HIP_ATTR_PAGEABLE_MEMORY_ACCESS, 65, hipDeviceAttributePageableMemoryAccess)      \
    X(HIP_ATTR_MAX_SHARED_MEMORY_PER_BLOCK, 74, hipDeviceAttributeMaxSharedMemoryPerBlock) \
    X(HIP_STREAM_NON_BLOCKING, 0x1, hipStreamNonBlocking)                               \
    X(HIP_STREAM_CAPTURE_MODE_RELAXED, 2, hipStreamCaptureModeRelaxed)                  \
    X(HIP_EVENT_DISABLE_TIMING, 0x2, hipEventDisableTiming)                             \
    X(HIP_HOST_REGISTER_PORTABLE, 0x1, hipHostRegisterPortable)                         \
    X(HIP_HOST_REGISTER_MAPPED, 0x2, hipHostRegisterMapped)                             \
    X(HIP_POINTER_ATTRIBUTE_IS_MANAGED, 8, HIP_POINTER_ATTRIBUTE_IS_MANAGED)            \
    X(HIPRTC_SUCCESS, 0, HIPRTC_SUCCESS)                                                \
    X(HIPRTC_ERROR_INVALID_OPTION, 5, HIPRTC_ERROR_INVALID_OPTION)
/* Handle values the headers define as pointer casts (no constant
 * expression: compared at run time). */
#define HIP_ABI_HANDLE_CONSTANTS(X) X(HIP_STREAM_PER_THREAD, 2, hipStreamPerThread)
#define HIP_ABI_COMGR_CONSTANTS(X) X(AMD_COMGR_STATUS_SUCCESS, 0, AMD_COMGR_STATUS_SUCCESS)

/* gcnArchName ("gfx90a:sramecc+:xnack-") is only exposed through
 * hipDeviceProp_t, whose layout changes between releases. ROCm 6+ exports
 * hipGetDevicePropertiesR0600 (the new layout: 1472 bytes, gcnArchName[256]
 * at byte 1160) and hipGetDevicePropertiesR0000 (the ROCm 5 layout, kept for
 * binary compatibility); its header maps the plain name to R0600 with a
 * macro, while the plain exported symbol keeps the R0000 layout. ROCm 5
 * exports only the plain hipGetDeviceProperties, whose gcnArchName sits at
 * byte 396 of 792. What a future release exports under the plain name is not
 * promised, so the versioned symbols are preferred and all three are
 * optional. We pass a zeroed buffer far larger than any known layout, read
 * the symbol's offset, and fall back to scanning the buffer for a "gfx..."
 * string if a runtime ever puts it elsewhere. The test checks the R0000
 * numbers against HIP 5 headers (and hip_deprecated.h where installed) and
 * the R0600 numbers against ROCm 6+ headers. */
#define HIP_PROPS_BUFFER 16384
#define HIP_PROPS_R0600_SIZE 1472
#define HIP_PROPS_R0600_GCN_ARCH_OFFSET 1160
#define HIP_PROPS_R0000_SIZE 792
#define HIP_PROPS_R0000_GCN_ARCH_OFFSET 396

/* amd_comgr_metadata_node_t: a struct of one uint64 passed by value. */
#define HIP_ABI_COMGR_MD(X) X(uint64_t, handle)

#define HIP_FUNCS(X)                                                                    \
    X(hipGetDeviceCount, hipError_t, (int *))                                           \
    X(hipGetDevice, hipError_t, (int *))                                                \
    X(hipSetDevice, hipError_t, (int))                                                  \
    X(hipDeviceGetAttribute, hipError_t, (int *, hipDeviceAttribute_t, int))            \
    X(hipDeviceGetName, hipError_t, (char *, int, hipDevice_t))                         \
    X(hipDeviceTotalMem, hipError_t, (size_t *, hipDevice_t))                           \
    X(hipRuntimeGetVersion, hipError_t, (int *))                                        \
    X(hipGetErrorString, const char *, (hipError_t))                                    \
    X(hipModuleLoadData, hipError_t, (hipModule_t *, const void *))                     \
    X(hipModuleUnload, hipError_t, (hipModule_t))                                       \
    X(hipModuleGetFunction, hipError_t, (hipFunction_t *, hipModule_t, const char *))   \
    X(hipModuleGetGlobal, hipError_t, (hipDeviceptr_t *, size_t *, hipModule_t, const char *)) \
    X(hipMemcpyDtoH, hipError_t, (void *, hipDeviceptr_t, size_t))                      \
    X(hipStreamCreateWithFlags, hipError_t, (hipStream_t *, unsigned))                  \
    X(hipStreamDestroy, hipError_t, (hipStream_t))                                      \
    X(hipStreamSynchronize, hipError_t, (hipStream_t))                                  \
    X(hipStreamWaitEvent, hipError_t, (hipStream_t, hipEvent_t, unsigned))              \
    X(hipEventCreateWithFlags, hipError_t, (hipEvent_t *, unsigned))                    \
    X(hipEventDestroy, hipError_t, (hipEvent_t))                                        \
    X(hipEventRecord, hipError_t, (hipEvent_t, hipStream_t))                            \
    X(hipEventSynchronize, hipError_t, (hipEvent_t))                                    \
    X(hipEventQuery, hipError_t, (hipEvent_t))                                          \
    X(hipMalloc, hipError_t, (void **, size_t))                                         \
    X(hipFree, hipError_t, (void *))                                                    \
    X(hipHostRegister, hipError_t, (void *, size_t, unsigned))                          \
    X(hipHostUnregister, hipError_t, (void *))                                          \
    X(hipHostGetDevicePointer, hipError_t, (void **, void *, unsigned))                 \
    X(hipMemcpyAsync, hipError_t, (void *, const void *, size_t, hipMemcpyKind, hipStream_t)) \
    X(hipMemcpy2DAsync, hipError_t,                                                     \
      (void *, size_t, const void *, size_t, size_t, size_t, hipMemcpyKind, hipStream_t)) \
    X(hipMemcpyPeerAsync, hipError_t, (void *, int, const void *, int, size_t, hipStream_t)) \
    X(hipEventElapsedTime, hipError_t, (float *, hipEvent_t, hipEvent_t))               \
    X(hipFuncGetAttribute, hipError_t, (int *, hipFunction_attribute, hipFunction_t))   \
    X(hipModuleLaunchKernel, hipError_t,                                                \
      (hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, \
       hipStream_t, void **, void **))

/* Optional: the versioned property getters (ROCm 6+, see above), then the
 * plain getter, the error reset that keeps internally handled failures out
 * of the user's hipGetLastError (ROCm 7 keeps the last error until it is
 * read, as CUDA does), the managed-memory query of host_register, and peer
 * access between two GPUs (without it, copies between them stage through
 * the host). */
#define HIP_OPTIONAL_R0600(X) X(hipGetDevicePropertiesR0600, hipError_t, (hipDeviceProp_tR0600 *, int))
#define HIP_OPTIONAL_R0000(X) X(hipGetDevicePropertiesR0000, hipError_t, (hipDeviceProp_tR0000 *, int))
#define HIP_OPTIONAL_PLAIN(X)                                                           \
    X(hipGetDeviceProperties, hipError_t, (hipDeviceProp_t *, int))                     \
    X(hipGetLastError, hipError_t, (void))                                              \
    X(hipPointerGetAttribute, hipError_t, (void *, hipPointer_attribute, hipDeviceptr_t)) \
    X(hipDeviceCanAccessPeer, hipError_t, (int *, int, int))                            \
    X(hipDeviceEnablePeerAccess, hipError_t, (int, unsigned))
/* Launch graphs by stream capture (lib/core/graph.c; HIP 5.2 has them all, as
 * beta): optional, so that a runtime without them only loses graphs. */
#define HIP_OPTIONAL_GRAPH(X)                                                           \
    X(hipStreamBeginCapture, hipError_t, (hipStream_t, hipStreamCaptureMode))           \
    X(hipStreamEndCapture, hipError_t, (hipStream_t, hipGraph_t *))                     \
    X(hipGraphInstantiate, hipError_t, (hipGraphExec_t *, hipGraph_t, hipGraphNode_t *, char *, size_t)) \
    X(hipGraphLaunch, hipError_t, (hipGraphExec_t, hipStream_t))                        \
    X(hipGraphExecDestroy, hipError_t, (hipGraphExec_t))                                \
    X(hipGraphDestroy, hipError_t, (hipGraph_t))
/* Later than HIP 5.2 (Debian's headers, which the ABI test reads, lack it;
 * test_abi_hip checks it against HIP 6+ headers): the device a stream is
 * of, for a wrapped stream's check (driver_hip.c). */
#define HIP_OPTIONAL_LATER(X) X(hipStreamGetDevice, hipError_t, (hipStream_t, int *))
#define HIP_OPTIONAL(X)                                                                 \
    HIP_OPTIONAL_R0600(X) HIP_OPTIONAL_R0000(X) HIP_OPTIONAL_PLAIN(X) HIP_OPTIONAL_GRAPH(X) HIP_OPTIONAL_LATER(X)

#define HIPRTC_FUNCS(X)                                                                 \
    X(hiprtcVersion, hiprtcResult, (int *, int *))                                      \
    X(hiprtcGetErrorString, const char *, (hiprtcResult))                               \
    X(hiprtcCreateProgram, hiprtcResult,                                                \
      (hiprtcProgram *, const char *, const char *, int, const char **, const char **)) \
    X(hiprtcCompileProgram, hiprtcResult, (hiprtcProgram, int, const char **))          \
    X(hiprtcGetProgramLogSize, hiprtcResult, (hiprtcProgram, size_t *))                 \
    X(hiprtcGetProgramLog, hiprtcResult, (hiprtcProgram, char *))                       \
    X(hiprtcGetCodeSize, hiprtcResult, (hiprtcProgram, size_t *))                       \
    X(hiprtcGetCode, hiprtcResult, (hiprtcProgram, char *))                             \
    X(hiprtcDestroyProgram, hiprtcResult, (hiprtcProgram *))

#define COMGR_FUNCS(X)                                                                  \
    X(amd_comgr_get_isa_count, amd_comgr_status_t, (size_t *))                          \
    X(amd_comgr_get_isa_name, amd_comgr_status_t, (size_t, const char **))              \
    X(amd_comgr_get_isa_metadata, amd_comgr_status_t, (const char *, amd_comgr_metadata_node_t *)) \
    X(amd_comgr_destroy_metadata, amd_comgr_status_t, (amd_comgr_metadata_node_t))

/* ---------------------------------------------- the library's definitions */
#ifndef AMP__ABI_CHECK

#define AMP__HIP_ABI_TYPEDEF(name, ours) typedef ours name;
HIP_ABI_TYPES(AMP__HIP_ABI_TYPEDEF)
HIP_ABI_COMGR_TYPES(AMP__HIP_ABI_TYPEDEF)
#undef AMP__HIP_ABI_TYPEDEF

#define AMP__HIP_ABI_OPAQUE(name) typedef void name;
HIP_ABI_OPAQUE(AMP__HIP_ABI_OPAQUE)
#undef AMP__HIP_ABI_OPAQUE

#define AMP__HIP_ABI_CONSTANT(name, value, vendor) name = (value),
enum {
    HIP_ABI_CONSTANTS(AMP__HIP_ABI_CONSTANT) HIP_ABI_HANDLE_CONSTANTS(AMP__HIP_ABI_CONSTANT)
    HIP_ABI_COMGR_CONSTANTS(AMP__HIP_ABI_CONSTANT)
};
#undef AMP__HIP_ABI_CONSTANT

#define AMP__HIP_ABI_FIELD(type, name) type name;
typedef struct comgr_md { HIP_ABI_COMGR_MD(AMP__HIP_ABI_FIELD) } comgr_md;
#undef AMP__HIP_ABI_FIELD
typedef comgr_md amd_comgr_metadata_node_t;

/* The name driver_hip.c uses for a hipError_t. */
typedef hipError_t hip_err;

#endif /* AMP__ABI_CHECK */

#endif /* AMP_GPU_HIP_ABI_H */
