/* exchange_state.h — the exchanger's state, shared by exchange.c (its life: creation, destroy, path, statistics, time-out) and halo.c (its exchanges: begin, test, end): the in-flight exchanges and the staging buffers they keep. Never installed. */
#ifndef HIPAMP_MPI_EXCHANGE_STATE_H
#define HIPAMP_MPI_EXCHANGE_STATE_H

#include "mpi_private.h"

/* A host staging buffer of the STAGED path, viewed with the extent of the
 * section it mirrors. Reused while that extent stays the same. */
typedef struct amp_mpi__stage {
    void *host;
    size_t bytes;
    amp_extent ext;
    amp_array_view *view;
    bool lent; /* an abandoned send may still read host: never freed */
} amp_mpi__stage;

/* How one side (send or recv) of one halo moves. */
typedef enum amp_mpi__how {
    AMP_MPI__NONE = 0,
    AMP_MPI__IN_PLACE, /* host memory of a host view */
    AMP_MPI__POINTER,  /* an address from amp_array_view_native_handle */
    AMP_MPI__STAGE     /* a staging buffer */
} amp_mpi__how;

typedef struct amp_mpi__side {
    amp_array_view *v; /* NULL: nothing this way (or a MPI_PROC_NULL peer) */
    amp_mpi__how how;
    amp_extent ext;
    int64_t strides[AMP_MAX_RANK];
    void *addr;        /* what MPI reads or writes */
    MPI_Datatype type; /* MPI_BYTE (count bytes) or a committed vector type (count 1) */
    int count;
    uint64_t bytes;
    bool posted;       /* its MPI request was posted */
} amp_mpi__side;

/* One exchange, from its begin to its end, and afterwards the keeper of its
 * staging buffers until they are free again. A record is free when id is 0
 * and the copies back from its receive staging buffers (queued by its end,
 * never waited for there) have finished. Its arrays grow with the largest
 * exchange it carried and are kept. Index 2i is halo i's send, 2i+1 its
 * receive, in sides, copies and reqs alike. */
typedef struct amp_mpi__flight {
    uint64_t id; /* 0: not in flight */
    size_t count, cap;
    amp_mpi_halo *halos;          /* the caller's entries */
    amp_mpi__side *sides;
    amp_mpi__stage *send_stage, *recv_stage; /* per halo */
    amp_future **copies;          /* a send's copy to its staging buffer until it is posted; a
                                   * receive's copy back after the end */
    MPI_Request *reqs;            /* MPI_REQUEST_NULL where nothing was posted */
    MPI_Status *statuses;         /* not MPI_STATUSES_IGNORE: GCC 12 misreads MPICH's value */
    bool complete;                /* every request finished (amp_mpi_exchange_test saw it) */
    int complete_rc;              /* what MPI_Testall returned then */
    double seconds;               /* wall time inside its calls so far */
} amp_mpi__flight;

struct amp_mpi_exchange {
    MPI_Comm comm; /* a duplicate of the caller's, returning errors */
    int size;
    amp_accelerator_view *q;
    bool host_memory; /* q's accelerator keeps arrays in host memory */
    size_t elem;
    amp_mpi_path_info path;
    amp_mpi__flight **flights; /* in flight or keeping buffers; stable addresses */
    size_t nflights;
    uint64_t next_id;   /* the id the next begin gives (from 1) */
    uint64_t oldest;    /* the oldest id in flight, or next_id when none */
    amp_mpi_exchange_stats stats;
    uint32_t timeout_ms; /* 0: wait for ever */
    /* Set when an exchange was abandoned (a time-out, a failed post or
     * copy): its messages are undefined, so the exchanger only refuses from
     * then on. */
    char broken[AMP_MPI__ERR_SIZE];
};

/* halo.c: every record's buffers back (waits for their copies; staging
 * buffers lent to MPI stay allocated). The first failure is returned. */
amp_status amp_mpi__flights_free(amp_mpi_exchange *x);

#endif
