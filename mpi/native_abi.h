/* native_abi.h — the CUDA driver and HIP runtime calls mpi/native.c makes (looked up in the libraries hipamp loaded), declared by hand as X-macro rows so that test/abi/test_abi_cuda.c and test_abi_hip.c check each row against cuda.h and hip_runtime_api.h. Never installed. */
#ifndef HIPAMP_MPI_NATIVE_ABI_H
#define HIPAMP_MPI_NATIVE_ABI_H

#include <stddef.h>

/* Rows as in mpi/nccl_abi.h and lib/gpu/cuda_abi.h: X(vendor typedef, our
 * type), X(our name, value, vendor name), X(symbol, return type,
 * (parameter types)). The CUDA symbols are the ones cuda.h's macros name
 * (cuStreamDestroy is cuStreamDestroy_v2). */
#define NATIVE_CUDA_TYPES(X)                                                            \
    X(CUresult, int)                                                                    \
    X(CUstream, void *)                                                                 \
    X(CUevent, void *)                                                                  \
    X(CUcontext, void *)                                                                \
    X(CUdeviceptr, unsigned long long)

#define NATIVE_CUDA_CONSTANTS(X)                                                        \
    X(AMP_MPI__CU_NOT_READY, 600, CUDA_ERROR_NOT_READY)                                 \
    X(AMP_MPI__CU_STREAM_NON_BLOCKING, 1, CU_STREAM_NON_BLOCKING)                       \
    X(AMP_MPI__CU_EVENT_DISABLE_TIMING, 2, CU_EVENT_DISABLE_TIMING)

#define NATIVE_CUDA_FUNCS(X)                                                            \
    X(cuStreamGetCtx, CUresult, (CUstream, CUcontext *))                                \
    X(cuCtxPushCurrent_v2, CUresult, (CUcontext))                                       \
    X(cuCtxPopCurrent_v2, CUresult, (CUcontext *))                                      \
    X(cuStreamCreate, CUresult, (CUstream *, unsigned int))                             \
    X(cuStreamDestroy_v2, CUresult, (CUstream))                                         \
    X(cuStreamSynchronize, CUresult, (CUstream))                                        \
    X(cuStreamWaitEvent, CUresult, (CUstream, CUevent, unsigned int))                   \
    X(cuEventCreate, CUresult, (CUevent *, unsigned int))                               \
    X(cuEventRecord, CUresult, (CUevent, CUstream))                                     \
    X(cuEventQuery, CUresult, (CUevent))                                                \
    X(cuEventSynchronize, CUresult, (CUevent))                                          \
    X(cuEventDestroy_v2, CUresult, (CUevent))                                           \
    X(cuMemcpyDtoHAsync_v2, CUresult, (void *, CUdeviceptr, size_t, CUstream))          \
    X(cuMemcpyHtoDAsync_v2, CUresult, (CUdeviceptr, const void *, size_t, CUstream))

#define NATIVE_HIP_TYPES(X)                                                             \
    X(hipError_t, int)                                                                  \
    X(hipStream_t, void *)                                                              \
    X(hipEvent_t, void *)                                                               \
    X(hipMemcpyKind, int)

#define NATIVE_HIP_CONSTANTS(X)                                                         \
    X(AMP_MPI__HIP_NOT_READY, 600, hipErrorNotReady)                                    \
    X(AMP_MPI__HIP_STREAM_NON_BLOCKING, 1, hipStreamNonBlocking)                        \
    X(AMP_MPI__HIP_EVENT_DISABLE_TIMING, 2, hipEventDisableTiming)                      \
    X(AMP_MPI__HIP_H2D, 1, hipMemcpyHostToDevice)                                       \
    X(AMP_MPI__HIP_D2H, 2, hipMemcpyDeviceToHost)

#define NATIVE_HIP_FUNCS(X)                                                             \
    X(hipGetDevice, hipError_t, (int *))                                                \
    X(hipSetDevice, hipError_t, (int))                                                  \
    X(hipStreamCreateWithFlags, hipError_t, (hipStream_t *, unsigned int))              \
    X(hipStreamDestroy, hipError_t, (hipStream_t))                                      \
    X(hipStreamSynchronize, hipError_t, (hipStream_t))                                  \
    X(hipStreamWaitEvent, hipError_t, (hipStream_t, hipEvent_t, unsigned int))         \
    X(hipEventCreateWithFlags, hipError_t, (hipEvent_t *, unsigned int))                \
    X(hipEventRecord, hipError_t, (hipEvent_t, hipStream_t))                            \
    X(hipEventQuery, hipError_t, (hipEvent_t))                                          \
    X(hipEventSynchronize, hipError_t, (hipEvent_t))                                    \
    X(hipEventDestroy, hipError_t, (hipEvent_t))                                        \
    X(hipMemcpyAsync, hipError_t, (void *, const void *, size_t, hipMemcpyKind, hipStream_t))

/* HIP 5.2 (Debian's) has no hipStreamGetDevice: without it the stream's
 * device cannot be made current, and native.c makes no HIP calls. */
#define NATIVE_HIP_OPTIONAL(X) X(hipStreamGetDevice, hipError_t, (hipStream_t, int *))

#ifndef AMP__ABI_CHECK

#define AMP_MPI__NATIVE_TYPEDEF(name, ours) typedef ours name;
NATIVE_CUDA_TYPES(AMP_MPI__NATIVE_TYPEDEF)
NATIVE_HIP_TYPES(AMP_MPI__NATIVE_TYPEDEF)
#undef AMP_MPI__NATIVE_TYPEDEF

#define AMP_MPI__NATIVE_CONSTANT(name, value, vendor) name = (value),
enum { NATIVE_CUDA_CONSTANTS(AMP_MPI__NATIVE_CONSTANT) NATIVE_HIP_CONSTANTS(AMP_MPI__NATIVE_CONSTANT) };
#undef AMP_MPI__NATIVE_CONSTANT

#endif /* AMP__ABI_CHECK */

#endif /* HIPAMP_MPI_NATIVE_ABI_H */
