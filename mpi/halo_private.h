/* halo_private.h — what the files of hipamp::mpi's halo exchanges share (halo.c, halo_side.c, halo_flight.c, halo_wait.c, halo_overlap.c, halo_nccl.c, allreduce.c): their steps' declarations, each documented at its definition. Never installed. */
#ifndef HIPAMP_MPI_HALO_PRIVATE_H
#define HIPAMP_MPI_HALO_PRIVATE_H

#include "exchange_state.h"
#include "nccl_abi.h"

#include <stdint.h>

static inline double amp_mpi__now(void) { return MPI_Wtime(); }

/* The elements of a full chunk of a face (AMP_MPI_CHUNK_BYTES set): at
 * least one. */
static inline int64_t amp_mpi__chunk_per(const amp_mpi_exchange *x)
{
    uint64_t per = x->chunk_bytes / x->elem;
    return per ? (int64_t)per : 1;
}

/* How long an exchange still waits for a peer whose leaving notice arrived:
 * MPI orders only messages that match the same receive, so the data the
 * peer sent before its notice may still be on its way. */
#define AMP_MPI__LEFT_GRACE 0.1

/* Why amp_mpi__wait stopped before every request finished. */
typedef enum amp_mpi__stop { AMP_MPI__FINISHED, AMP_MPI__LATE, AMP_MPI__LEFT_PEER, AMP_MPI__UNMATCHED } amp_mpi__stop;

/* The order of a halo side's NCCL operation: by peer, then tag, then halo
 * (NCCL matches a pair's operations in the order they were queued; tags
 * equal on both sides then meet). */
typedef struct amp_mpi__nccl_key {
    int peer, tag;
    size_t side;
} amp_mpi__nccl_key;

/* halo_side.c: the caller's halos checked (peers, tags, element sizes, a
 * read-only receive), each side planned and made ready, chunks. */
bool amp_mpi__contiguous(const amp_mpi__side *s);
amp_status amp_mpi__check_halos(amp_mpi_exchange *x, const amp_mpi_halo *halos, size_t count, const char *fn);
amp_status amp_mpi__stage_release(amp_mpi__stage *s);
amp_status amp_mpi__plan(amp_mpi_exchange *x, amp_mpi__side *s, const char *what);
amp_status amp_mpi__ready(amp_mpi_exchange *x, amp_mpi__flight *f, size_t i, int k, bool *wait_q,
                          const char *what);
amp_status amp_mpi__settle(amp_mpi__side *r, const char *what);
void amp_mpi__side_free(amp_mpi__side *s);
void amp_mpi__chunk_text(char *buf, size_t n, const amp_mpi__side *s);
void amp_mpi__name(char *buf, size_t n, const char *fn, const amp_mpi__flight *f, size_t side);
amp_status amp_mpi__expand(amp_mpi_exchange *x, amp_mpi__flight *f, const amp_mpi_halo *halos, size_t count);

/* halo_flight.c: the records, and giving up. */
amp_status amp_mpi__copies_drain(amp_mpi_exchange *x, amp_mpi__flight *f);
amp_status amp_mpi__flight_grow(amp_mpi__flight *f, size_t n);
amp_status amp_mpi__flight_take(amp_mpi_exchange *x, size_t count, amp_mpi__flight **out);
void amp_mpi__flight_release(amp_mpi__flight *f);
amp_mpi__flight *amp_mpi__flight_of(amp_mpi_exchange *x, uint64_t id);
amp_status amp_mpi__refuse_if_broken(const amp_mpi_exchange *x, const char *fn);

/* halo_wait.c: progress, the wait, the arrivals and their delivery. */
amp_status amp_mpi__match(amp_mpi_exchange *x, const char *fn);
amp_status amp_mpi__progress(amp_mpi_exchange *x, uint64_t wait_for, const char *fn);
void amp_mpi__cut_short(const amp_mpi_exchange *x, amp_mpi__flight *f);
bool amp_mpi__drains(amp_mpi_exchange *x, amp_mpi__flight *f, bool all, int rc);
void amp_mpi__drains_stop(amp_mpi__flight *f);
void amp_mpi__drains_all(amp_mpi_exchange *x);
int amp_mpi__wait(amp_mpi_exchange *x, amp_mpi__flight *f, amp_mpi__stop *stop);
amp_status amp_mpi__late(const amp_mpi_exchange *x, amp_mpi__flight *f, const char *fn);
amp_status amp_mpi__left(const amp_mpi_exchange *x, amp_mpi__flight *f, const char *fn);
amp_status amp_mpi__arrivals(const amp_mpi_exchange *x, amp_mpi__flight *f, int rc, const char *fn,
                             bool *mpi_failed);
amp_status amp_mpi__deliver(amp_mpi_exchange *x, amp_mpi__flight *f, const char *fn);
void amp_mpi__deliver_arrived(amp_mpi_exchange *x, amp_mpi__flight *f, const char *fn);

/* halo_overlap.c */
amp_status amp_mpi__overlaps(const amp_mpi_exchange *x, const amp_mpi__flight *f, bool late_only, const char *fn);

/* halo_nccl.c */
amp_status amp_mpi__nccl_post(amp_mpi_exchange *x, amp_mpi__flight *f, amp_mpi__nccl_key *keys,
                              amp_mpi__nccl_op *ops, const char *fn);
amp_status amp_mpi__nccl_finish(amp_mpi_exchange *x, amp_mpi__flight *f, bool only_look, bool *done,
                                const char *fn);

#endif
