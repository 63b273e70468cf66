/* nccl_abi.h — the hand-declared NCCL (and RCCL: the same API) ABI that nccl.c loads with dlopen (types, constants, function list), written so that test/abi/test_abi_nccl.c can check every row against nccl.h. */
#ifndef HIPAMP_MPI_NCCL_ABI_H
#define HIPAMP_MPI_NCCL_ABI_H

#include <stddef.h>

/* hipamp::mpi builds where no NCCL is installed and loads it at run time,
 * so it declares the little it uses, one row of an X-macro list per item
 * under NCCL's own name (as lib/gpu/cuda_abi.h does for CUDA):
 *
 *   NCCL_ABI_TYPES      X(vendor typedef, our type)
 *   NCCL_ABI_CONSTANTS  X(our name, value, vendor name)
 *   NCCL_FUNCS          X(symbol, return type, (parameter types))
 *   NCCL_OPTIONAL       the same, for symbols older releases lack
 *
 * The library expands the lists into definitions (below); the ABI test
 * defines AMP__ABI_CHECK, gets the lists only, and checks each row against
 * the real nccl.h. Everything here is stable since NCCL 2.7 (ncclSend and
 * ncclRecv); RCCL keeps NCCL's values and signatures (hipStream_t for
 * cudaStream_t: both are pointers). */

/* ncclUniqueId: NCCL_UNIQUE_ID_BYTES opaque bytes. */
#define AMP_NCCL_UNIQUE_ID_BYTES 128
typedef struct amp_nccl_unique_id {
    char internal[AMP_NCCL_UNIQUE_ID_BYTES];
} amp_nccl_unique_id;

#define NCCL_ABI_TYPES(X)                                                               \
    X(ncclResult_t, int)                                                                \
    X(ncclDataType_t, int)                                                              \
    X(ncclRedOp_t, int)                                                                 \
    X(ncclComm_t, void *)                                                               \
    X(cudaStream_t, void *)                                                             \
    X(ncclUniqueId, amp_nccl_unique_id)

#define NCCL_ABI_CONSTANTS(X)                                                           \
    X(AMP_NCCL_UNIQUE_ID_BYTES_, 128, NCCL_UNIQUE_ID_BYTES)                             \
    X(ncclSuccess, 0, ncclSuccess)                                                      \
    X(ncclUnhandledCudaError, 1, ncclUnhandledCudaError)                                \
    X(ncclSystemError, 2, ncclSystemError)                                              \
    X(ncclInternalError, 3, ncclInternalError)                                          \
    X(ncclInvalidArgument, 4, ncclInvalidArgument)                                      \
    X(ncclInvalidUsage, 5, ncclInvalidUsage)                                            \
    X(ncclRemoteError, 6, ncclRemoteError)                                              \
    X(ncclInProgress, 7, ncclInProgress)                                                \
    X(ncclInt8, 0, ncclInt8)                                                            \
    X(ncclUint8, 1, ncclUint8)                                                          \
    X(ncclInt32, 2, ncclInt32)                                                          \
    X(ncclUint32, 3, ncclUint32)                                                        \
    X(ncclInt64, 4, ncclInt64)                                                          \
    X(ncclUint64, 5, ncclUint64)                                                        \
    X(ncclFloat32, 7, ncclFloat32)                                                      \
    X(ncclFloat64, 8, ncclFloat64)                                                      \
    X(ncclSum, 0, ncclSum)                                                              \
    X(ncclProd, 1, ncclProd)                                                            \
    X(ncclMax, 2, ncclMax)                                                              \
    X(ncclMin, 3, ncclMin)

#define NCCL_FUNCS(X)                                                                   \
    X(ncclGetVersion, ncclResult_t, (int *))                                            \
    X(ncclGetUniqueId, ncclResult_t, (ncclUniqueId *))                                  \
    X(ncclCommInitRank, ncclResult_t, (ncclComm_t *, int, ncclUniqueId, int))           \
    X(ncclCommDestroy, ncclResult_t, (ncclComm_t))                                      \
    X(ncclCommAbort, ncclResult_t, (ncclComm_t))                                        \
    X(ncclCommGetAsyncError, ncclResult_t, (ncclComm_t, ncclResult_t *))                \
    X(ncclGetErrorString, const char *, (ncclResult_t))                                 \
    X(ncclGroupStart, ncclResult_t, (void))                                             \
    X(ncclGroupEnd, ncclResult_t, (void))                                               \
    X(ncclSend, ncclResult_t, (const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t)) \
    X(ncclRecv, ncclResult_t, (void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t)) \
    X(ncclAllReduce, ncclResult_t,                                                      \
      (const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t))

/* NCCL 2.13 and later: the last error in words. */
#define NCCL_OPTIONAL(X) X(ncclGetLastError, const char *, (ncclComm_t))

/* ---------------------------------------------- the library's definitions */
#ifndef AMP__ABI_CHECK

#define AMP__NCCL_ABI_TYPEDEF(name, ours) typedef ours name;
NCCL_ABI_TYPES(AMP__NCCL_ABI_TYPEDEF)
#undef AMP__NCCL_ABI_TYPEDEF

#define AMP__NCCL_ABI_CONSTANT(name, value, vendor) name = (value),
enum { NCCL_ABI_CONSTANTS(AMP__NCCL_ABI_CONSTANT) };
#undef AMP__NCCL_ABI_CONSTANT

#endif /* AMP__ABI_CHECK */

#endif /* HIPAMP_MPI_NCCL_ABI_H */
