/* native.h — hipamp::mpi's direct calls into the vendor runtime (CUDA driver, HIP) on a hipamp queue's native stream (native.c): the stream's device made current around a call (NCCL's calls too), and a side stream beside the queue on which the staged path's copies run while the queue's kernels do, ordered to the queue by events. Never installed. */
#ifndef HIPAMP_MPI_NATIVE_H
#define HIPAMP_MPI_NATIVE_H

#include "mpi_private.h"

/* What amp_mpi__ctx_enter changed, for amp_mpi__ctx_leave. */
typedef struct amp_mpi__ctx_saved {
    int kind; /* 0 nothing done, 1 a CUDA context pushed, 2 a HIP device set */
    int hip_device;
} amp_mpi__ctx_saved;

/* Makes stream's device current for this thread (vendor 'c': the stream's
 * CUDA context pushed; 'h': its HIP device set), since hipamp makes its
 * queues' contexts current only inside its own calls. NULL stream: nothing.
 * The driver libraries are the ones hipamp loaded (dlopen of the loaded
 * soname). */
amp_status amp_mpi__ctx_enter(char vendor, void *stream, amp_mpi__ctx_saved *saved, const char *what);
void amp_mpi__ctx_leave(const amp_mpi__ctx_saved *saved);

/* A stream of the queue's device beside the queue's own, for copies
 * between device memory and pinned host memory that need not wait for the
 * kernels queued since (a staged exchange's section copies: the caller
 * promised not to touch those sections until the exchange ends). Events
 * order it both ways: a copy waits for an event recorded on the queue
 * (amp_mpi__aside_mark: what was queued before the exchange began), and
 * the queue's later work waits for a copy (amp_mpi__aside_order). Events
 * are made per use and freed by amp_mpi__aside_event_free. Not thread-safe:
 * one exchanger's calls, which the caller serializes. */
typedef struct amp_mpi__aside amp_mpi__aside;

/* The side stream of q, whose native stream is stream, or *out NULL where
 * there is none (the CPU accelerator, no native stream, a runtime without
 * the calls, or AMP_MPI_COPY_STREAM=0): the caller then copies on q as
 * before. Fails only for a runtime that has the calls and refuses them. */
amp_status amp_mpi__aside_open(char vendor, void *stream, amp_mpi__aside **out);
/* Waits for the side stream's copies and frees it. NULL is a no-op. */
void amp_mpi__aside_close(amp_mpi__aside *a);
/* An event recorded on the queue's stream now. */
amp_status amp_mpi__aside_mark(amp_mpi__aside *a, void **ev);
/* bytes from src to dst on the side stream (to_device: host to device,
 * else device to host), after the queue passed `after` (NULL: at once);
 * *done an event recorded after the copy. */
amp_status amp_mpi__aside_copy(amp_mpi__aside *a, void *dst, const void *src, size_t bytes, bool to_device, void *after,
                               void **done);
/* The queue's work queued from now on waits for ev. */
amp_status amp_mpi__aside_order(amp_mpi__aside *a, void *ev);
/* Whether ev has passed (never blocks), or wait for it (blocks). */
amp_status amp_mpi__aside_query(amp_mpi__aside *a, void *ev, bool *done);
amp_status amp_mpi__aside_wait(amp_mpi__aside *a, void *ev);
void amp_mpi__aside_event_free(amp_mpi__aside *a, void *ev);

#endif
