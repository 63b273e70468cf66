/* fake_nccl.c — a stand-in for libnccl.so.2 for test_mpi on the CPU accelerator (AMP_MPI_NCCL_LIBRARY names it): NCCL's API as mpi/nccl_abi.h declares it, over MPI, on host memory and with no streams, so that CI runs hipamp::mpi's NCCL path (the choice, the bootstrap, the agreement of the ranks, grouped sends and receives, the all-reduce) and its fall-back. FAKE_NCCL_FAIL_RANK=k makes ncclCommInitRank fail on rank k, as a real NCCL does for a rank that has no usable GPU. */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nccl_abi.h"

#define FAKE_API __attribute__((visibility("default")))

struct fake_comm {
    MPI_Comm comm;
    int rank, size;
};

#define FAKE_MAX_OPS 256
static MPI_Request fake_reqs[FAKE_MAX_OPS];
static int fake_nreqs, fake_depth;

FAKE_API ncclResult_t ncclGetVersion(int *v)
{
    *v = 22803;
    return ncclSuccess;
}

FAKE_API ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    memset(id, 0, sizeof *id);
    snprintf(id->internal, sizeof id->internal, "fake-nccl-%d", (int)getpid());
    return ncclSuccess;
}

FAKE_API ncclResult_t ncclCommInitRank(ncclComm_t *out, int nranks, ncclUniqueId id, int rank)
{
    (void)id;
    *out = NULL;
    /* Every rank takes part in the dup (it is collective over the world,
     * which is the exchanger's communicator in the tests), then the chosen
     * one fails. */
    MPI_Comm dup = MPI_COMM_NULL;
    if (MPI_Comm_dup(MPI_COMM_WORLD, &dup) != MPI_SUCCESS) return ncclSystemError;
    int size = 0;
    MPI_Comm_size(dup, &size);
    const char *fail = getenv("FAKE_NCCL_FAIL_RANK");
    if (size != nranks || (fail && atoi(fail) == rank)) {
        MPI_Comm_free(&dup);
        return size != nranks ? ncclInvalidArgument : ncclInvalidUsage;
    }
    struct fake_comm *c = calloc(1, sizeof *c);
    if (!c) return ncclSystemError;
    c->comm = dup;
    c->rank = rank;
    c->size = nranks;
    *out = c;
    return ncclSuccess;
}

static ncclResult_t fake_free(ncclComm_t comm)
{
    struct fake_comm *c = comm;
    if (!c) return ncclInvalidArgument;
    MPI_Comm_free(&c->comm);
    free(c);
    return ncclSuccess;
}

FAKE_API ncclResult_t ncclCommDestroy(ncclComm_t comm) { return fake_free(comm); }
FAKE_API ncclResult_t ncclCommAbort(ncclComm_t comm) { return fake_free(comm); }

FAKE_API ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *r)
{
    (void)comm;
    *r = ncclSuccess;
    return ncclSuccess;
}

FAKE_API const char *ncclGetErrorString(ncclResult_t r)
{
    switch (r) {
    case ncclSuccess: return "no error";
    case ncclInvalidUsage: return "invalid usage (fake: FAKE_NCCL_FAIL_RANK)";
    case ncclInvalidArgument: return "invalid argument";
    default: return "unknown result";
    }
}

FAKE_API const char *ncclGetLastError(ncclComm_t comm)
{
    (void)comm;
    return "";
}

/* Operations are posted at once and waited for when the outermost group
 * ends (or at once outside a group): MPI's nonblocking calls never
 * deadlock, and one tag keeps a pair's messages in order, as NCCL matches
 * them. */
static ncclResult_t fake_flush(void)
{
    if (fake_depth > 0) return ncclSuccess;
    int rc = MPI_Waitall(fake_nreqs, fake_reqs, MPI_STATUSES_IGNORE);
    fake_nreqs = 0;
    return rc == MPI_SUCCESS ? ncclSuccess : ncclSystemError;
}

FAKE_API ncclResult_t ncclGroupStart(void)
{
    fake_depth++;
    return ncclSuccess;
}

FAKE_API ncclResult_t ncclGroupEnd(void)
{
    if (fake_depth <= 0) return ncclInvalidUsage;
    fake_depth--;
    return fake_flush();
}

FAKE_API ncclResult_t ncclSend(const void *buf, size_t count, ncclDataType_t t, int peer, ncclComm_t comm,
                               cudaStream_t s)
{
    (void)s;
    struct fake_comm *c = comm;
    if (t != ncclUint8 || !c || fake_nreqs >= FAKE_MAX_OPS) return ncclInvalidArgument;
    if (MPI_Isend(buf, (int)count, MPI_BYTE, peer, 0, c->comm, &fake_reqs[fake_nreqs++]) != MPI_SUCCESS)
        return ncclSystemError;
    return fake_flush();
}

FAKE_API ncclResult_t ncclRecv(void *buf, size_t count, ncclDataType_t t, int peer, ncclComm_t comm, cudaStream_t s)
{
    (void)s;
    struct fake_comm *c = comm;
    if (t != ncclUint8 || !c || fake_nreqs >= FAKE_MAX_OPS) return ncclInvalidArgument;
    if (MPI_Irecv(buf, (int)count, MPI_BYTE, peer, 0, c->comm, &fake_reqs[fake_nreqs++]) != MPI_SUCCESS)
        return ncclSystemError;
    return fake_flush();
}

FAKE_API ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, ncclDataType_t t, ncclRedOp_t op,
                                    ncclComm_t comm, cudaStream_t s)
{
    (void)s;
    struct fake_comm *c = comm;
    MPI_Datatype mt = t == ncclFloat64 ? MPI_DOUBLE : t == ncclFloat32 ? MPI_FLOAT : t == ncclInt32 ? MPI_INT32_T
                    : t == ncclInt64 ? MPI_INT64_T : MPI_DATATYPE_NULL;
    MPI_Op mo = op == ncclSum ? MPI_SUM : op == ncclMax ? MPI_MAX : op == ncclMin ? MPI_MIN : MPI_OP_NULL;
    if (!c || mt == MPI_DATATYPE_NULL || mo == MPI_OP_NULL) return ncclInvalidArgument;
    int rc = MPI_Allreduce(send == recv ? MPI_IN_PLACE : send, recv, (int)count, mt, mo, c->comm);
    return rc == MPI_SUCCESS ? ncclSuccess : ncclSystemError;
}
