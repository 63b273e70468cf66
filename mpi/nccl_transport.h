/* nccl_transport.h — hipamp::mpi's NCCL/RCCL transport (nccl.c): the library found and loaded at run time, a communicator bootstrapped over an MPI communicator, grouped sends and receives and in-place all-reduces queued on a hipamp queue's native stream. Never installed. */
#ifndef HIPAMP_MPI_NCCL_H
#define HIPAMP_MPI_NCCL_H

#include "mpi_private.h"

typedef struct amp_mpi__nccl amp_mpi__nccl;

/* Whether the NCCL/RCCL library for vendor ('c' CUDA, 'h' HIP, 0 any)
 * loads: AMP_MPI_NCCL_LIBRARY when set (a path or soname, for sites with
 * their own build and for tests), else libnccl.so.2 (CUDA) or librccl.so.1
 * (HIP). *what gets "libnccl.so.2 (NCCL 2.28.3)" or why it did not load.
 * Loads once per process and library name; thread-safe; never blocks on
 * other ranks. */
bool amp_mpi__nccl_available(char vendor, char *what, size_t n);

/* A communicator over comm's ranks, its work queued on stream (q's native
 * queue; NULL: the CPU accelerator, which only a stand-in library serves).
 * Collective over comm: rank 0 makes the unique id (ncclGetUniqueId), one
 * MPI_Bcast carries it and whether that worked, the ranks agree (one
 * MPI_Allreduce) that each is ready (the library, memory, the stream's
 * device current), and only then, when all are, every rank calls
 * ncclCommInitRank, which waits for all of them: a rank that gave up
 * before it never leaves the others waiting there. A failure is this
 * rank's status with the reason in amp_mpi_last_error(); AMP_OK with *out
 * NULL: another rank was not ready, and none called ncclCommInitRank. The
 * caller agrees with the other ranks before using *out. */
amp_status amp_mpi__nccl_open(MPI_Comm comm, char vendor, void *stream, amp_mpi__nccl **out);
/* Frees the communicator: ncclCommDestroy, or ncclCommAbort when abort (an
 * operation may never complete: a peer that left, a time-out). NULL is a
 * no-op. */
void amp_mpi__nccl_close(amp_mpi__nccl *c, bool abort);

/* One point-to-point operation of a group. */
typedef struct amp_mpi__nccl_op {
    bool send;
    void *addr;
    size_t bytes;
    int peer;
} amp_mpi__nccl_op;
/* ncclGroupStart, every op in order, ncclGroupEnd: queued on the stream,
 * not waited for. what names the caller in the message. */
amp_status amp_mpi__nccl_group(amp_mpi__nccl *c, const amp_mpi__nccl_op *ops, size_t n, const char *what);
/* ncclAllReduce in place of count elements of NCCL type dtype with op,
 * queued on the stream, not waited for. */
amp_status amp_mpi__nccl_allreduce(amp_mpi__nccl *c, void *addr, size_t count, int dtype, int op, const char *what);
/* An asynchronous error the communicator reported (ncclCommGetAsyncError),
 * as a status and message; AMP_OK when none. */
amp_status amp_mpi__nccl_check(amp_mpi__nccl *c, const char *what);

#endif
