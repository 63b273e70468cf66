/* exchange_state.h — the exchanger's state, shared by exchange.c (its life: creation, destroy, path, statistics, time-out), halo.c and the files beside it (its exchanges: begin, test, end; halo_private.h) and leave.c (the notices of peers that left): the in-flight exchanges and the staging buffers they keep. Never installed. */
#ifndef HIPAMP_MPI_EXCHANGE_STATE_H
#define HIPAMP_MPI_EXCHANGE_STATE_H

#include "mpi_private.h"
#include "native.h"
#include "nccl_transport.h"

#include <pthread.h>

/* A staging buffer, viewed with the extent of the section it mirrors and
 * reused while that extent stays the same: on the STAGED path host memory
 * (a pinned staging array of the exchanger's queue; malloc'ed and pageable
 * with AMP_MPI_STAGED_PIPELINE=0), on the NCCL path a contiguous device
 * array that packs a strided view. */
typedef struct amp_mpi__stage {
    void *host;           /* what MPI reads or writes (NULL for a device pack) */
    size_t bytes;
    amp_extent ext;
    amp_array *arr;       /* the staging or device array; NULL: host is malloc'ed */
    amp_array_view *view; /* of arr, or of host */
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
    /* The address of v's first element where two views of one exchange
     * are compared (amp_mpi__overlaps): host memory's for a view of host
     * memory, else the device address it was handed over by; NULL where
     * neither is known (a view of an array moved through a staging
     * buffer). */
    const void *base;
    /* base was not known at the plan (it is a device address, known once
     * handed over): the overlap check after the sides are ready compares
     * only pairs with such a side, the one before compared the others. */
    bool base_late;
    MPI_Datatype type; /* MPI_BYTE (count bytes) or a committed vector type (count 1) */
    int count;
    uint64_t bytes;
    bool posted;       /* its MPI request was posted (NCCL: its operation queued) */
    bool delivered;    /* a staged receive: its copy up was queued as soon as it arrived */
    /* Staged through the exchanger's copy stream (x->aside): dev is the
     * device address of the elements it moves; its copies run beside the
     * queue's kernels. */
    bool aside;
    void *dev;
    /* What of v it moves: elements lo..hi-1 of its n, in row-major order.
     * All of them (chunks 0), or chunk `chunk` (from 0) of the `chunks` a
     * face of AMP_MPI_CHUNK_BYTES or more is cut into by element count
     * alone, so that the peer's face of the same count, whatever its shape,
     * is cut into the same messages (the last one always shorter than a
     * chunk, empty where need be: where the peer's face ends). A chunked side keeps no view of its own: its
     * data is v's (at its own address, through a datatype of just those
     * elements), or a range of its face's staging buffer, which the entry
     * of its chunk 0 holds. */
    int64_t lo, hi, n;
    uint32_t chunk, chunks;
    /* Where chunks are on (AMP_MPI_CHUNK_BYTES), a receive that ends a
     * face whose peer's face may differ: cut, its request cancelled since
     * an earlier chunk got the peer's last message (amp_mpi__cut_short);
     * for the last (or only) receive of a face, settled once the end of the
     * peer's face is known, draining while the peer's further chunks are
     * taken (its message was a full chunk's, and more than it holds), and
     * drained, their bytes (amp_mpi__drains). */
    bool cut, settled, draining;
    uint64_t drained;
    /* A receive is posted only once its message was matched (MPI_Improbe)
     * and its length known: Open MPI 4's shared-memory single copy writes a
     * whole message past a shorter receive buffer instead of truncating it.
     * A message longer than the receive is taken whole into sink (malloc'ed,
     * its length; freed once the request finished) and reported: longer. */
    void *sink;
    bool longer;
    /* The length of the message it took (-1: none yet). */
    int64_t took;
    /* A drain's receive of the peer's next message of the face, whole into
     * drain_sink (drain_len bytes), not waited for: a peer that stalls in
     * the middle of a message must not hold this rank past its time-out.
     * One abandoned unfinished is left to MPI with its sink. */
    MPI_Request drain_req;
    void *drain_sink;
    int drain_len;
} amp_mpi__side;

/* A side that moves nothing yet: every field zero but the handles MPI
 * gives a value of its own. */
#define AMP_MPI__SIDE_NONE ((amp_mpi__side){.type = MPI_DATATYPE_NULL, .drain_req = MPI_REQUEST_NULL, .took = -1})

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
    /* Entry i carries the caller's halo orig[i]: the whole halo, or chunk
     * j of each of its faces cut into chunks (AMP_MPI_CHUNK_BYTES), a
     * halo's entries one after the other (its sides say which elements
     * they move). */
    size_t *orig;
    /* The copy stream's events (x->aside): per side, its copy's (a send's
     * until it is posted, a receive's copy up until the record is taken
     * again), and the mark of what the queue held when the exchange began,
     * which every copy waits for (freed once the last copy is queued). */
    void **aside_ev;
    void *mark;
    bool complete;                /* every request finished (amp_mpi_exchange_test saw it) */
    /* Messages of a face sent in chunks may be left over (a count that
     * differs between the two sides, and a receive that took a later
     * exchange's message or a drain that could not finish): its end
     * breaks the exchanger. */
    bool strays;
    /* A drain's MPI call that failed (drain_rc MPI_SUCCESS: none), for the
     * end's message. */
    int drain_rc;
    const char *drain_call;
    int complete_rc;              /* what MPI_Testall returned then */
    /* Receives not yet matched to their message (neither posted nor cut):
     * MPI_Testall waits for none of them, so it is called only at 0. */
    size_t awaiting;
    amp_status match_st;          /* a failed match's status (amp_mpi__wait: AMP_MPI__UNMATCHED) */
    double seconds;               /* wall time inside its calls so far */
} amp_mpi__flight;

/* An exchanger's tag: AMP_MPI__LIVE from its create's success to its
 * destroy; its shell is never handed back to malloc (leave.c keeps it for
 * the next create), so a destroyed exchanger's pointer reads another tag
 * and every entry point refuses it as destroyed, as hipamp's own handles
 * are (a shell a later create took reads live again: that exchanger's). */
#define AMP_MPI__LIVE 0x58504d41u /* "AMPX" */

struct amp_mpi_exchange {
    uint32_t tag;  /* AMP_MPI__LIVE, or 0 once destroyed */
    /* Held through every call that works on the exchanger's exchanges
     * (amp_mpi__enter): one thread uses an exchanger at a time, and the
     * only other taker is the progress that a call on another exchanger
     * makes while it waits (amp_mpi__progress_others), which only tries it.
     * user: the thread of its last call (has_user once there was one);
     * only that thread's waits progress it, so that an MPI initialised
     * below MPI_THREAD_MULTIPLE is never entered by two threads at once. */
    pthread_mutex_t call_lock;
    pthread_t user;
    bool has_user;
    MPI_Comm comm; /* a duplicate of the caller's, returning errors */
    int size;
    amp_accelerator_view *q;
    bool host_memory; /* q's accelerator keeps arrays in host memory */
    size_t elem;
    amp_mpi_path_info path;
    amp_mpi__nccl *nccl; /* the NCCL path's communicator; NULL on the others */
    /* q has no native stream (the CPU accelerator, served only by a
     * stand-in library that works on the calling thread): q is waited for
     * before each NCCL call, which then completes before it returns. */
    bool nccl_sync;
    /* The staged path's pipeline (AMP_MPI_STAGED_PIPELINE, default on):
     * pinned buffers (and a copy stream, aside), each receive copied up as
     * soon as it arrived. */
    bool pipeline;
    /* AMP_MPI_CHUNK_BYTES (0: none; the same on every rank): a face of
     * more bytes moves as messages of at most this many (cut by element
     * count, never by shape); a staged contiguous face's chunks are each
     * their own copy on the copy stream, so that the first chunks travel
     * while the later ones are still copied (other faces are copied
     * whole). */
    uint64_t chunk_bytes;
    /* The staged pipeline's copy stream on a GPU (native.c; NULL: the
     * copies are hipamp's, on q): a face's copies then run while q's
     * kernels do, instead of between them. AMP_MPI_COPY_STREAM=0: none. */
    amp_mpi__aside *aside;
    amp_mpi__flight **flights; /* in flight or keeping buffers; stable addresses */
    size_t nflights;
    uint64_t next_id;   /* the id the next begin gives (from 1) */
    uint64_t oldest;    /* the oldest id in flight, or next_id when none */
    amp_mpi_exchange_stats stats;
    uint32_t timeout_ms; /* 0: wait for ever */
    /* Set when an exchange was abandoned (a time-out, a peer that left, a
     * failed post or copy): its messages are undefined, so the exchanger
     * only refuses from then on. */
    char broken[AMP_MPI__ERR_SIZE];

    /* Leaving notices (leave.c): a rank's exchanger tells its peers, with
     * one MPI_INT on comm tagged notice_tag, that it left (destroyed, or
     * MPI_Finalize while it lived), and each keeps a receive of them posted
     * from its creation until the last one it expects arrived. */
    int rank;                   /* this process's rank in comm */
    int notice_tag;             /* MPI_TAG_UB: never a halo's tag */
    unsigned char *peer;        /* per rank of comm: AMP_MPI__LEFT_* */
    int notice_in;              /* what the posted receive gets: an AMP_MPI__LEFT_* */
    MPI_Request notice_req;     /* that receive; MPI_REQUEST_NULL when none is posted */
    unsigned gone;              /* notices that arrived */
    bool announced;             /* its own notices went out */
    bool retired;               /* destroyed: kept only until the notices it awaits arrived */
    bool finalized;             /* MPI_Finalize saw it alive: MPI is no more */
    size_t awaited;             /* retired: notices still to come before comm is freed */
    amp_mpi_exchange *next, *prev; /* the process's list of exchangers (leave.c's lock) */
};

/* peer[] flags: the rank's notice said it destroyed its exchanger, or
 * called MPI_Finalize. */
#define AMP_MPI__LEFT_DESTROYED 2u
#define AMP_MPI__LEFT_FINALIZED 4u
#define AMP_MPI__LEFT (AMP_MPI__LEFT_DESTROYED | AMP_MPI__LEFT_FINALIZED)

/* halo_flight.c: every record's buffers back (waits for their copies; staging
 * buffers lent to MPI stay allocated). The first failure is returned. */
amp_status amp_mpi__flights_free(amp_mpi_exchange *x);
/* halo_flight.c: every exchange in flight abandoned (its receives
 * cancelled, its unfinished sends' requests freed), the exchanger broken
 * (refusing from then on, why saying why). Returns st. */
amp_status amp_mpi__break(amp_mpi_exchange *x, amp_status st, const char *why);

/* leave.c. Once per process, the MPI_Finalize hook (an attribute of
 * MPI_COMM_SELF whose deletion MPI_Finalize runs first, MPI still usable). */
amp_status amp_mpi__notices_hook(void);
/* At creation, on x->comm (size, rank set) before the ranks agree: the
 * peer flags and the posted receive of notices. */
amp_status amp_mpi__notices_open(amp_mpi_exchange *x);
/* A creation that failed after notices_open: its receive cancelled, the
 * flags freed (x->comm is the caller's to free). */
void amp_mpi__notices_abort(amp_mpi_exchange *x);
/* A created exchanger joins the process's list. */
void amp_mpi__notices_join(amp_mpi_exchange *x);
/* Notices that arrived are recorded in x->peer (never blocks). */
void amp_mpi__notices_poll(amp_mpi_exchange *x);
/* x's destroy, after its exchanges' buffers were freed: its notices go out
 * and it leaves the list; its communicator is freed once the notices it
 * awaits arrived (now, or at a later creation, destroy or MPI_Finalize),
 * never when an exchange was abandoned or MPI is finalized. x is gone
 * afterwards. */
void amp_mpi__notices_leave(amp_mpi_exchange *x);
/* A zeroed exchanger shell (a destroyed one's where the process has one),
 * or NULL for want of memory; amp_mpi__shell_give takes back one whose
 * creation failed (after notices_abort). */
amp_mpi_exchange *amp_mpi__shell_take(void);
void amp_mpi__shell_give(amp_mpi_exchange *x);

/* The calls on an exchanger (see call_lock): taken after the exchanger
 * was found live, held until the call returns. */
static inline void amp_mpi__enter(amp_mpi_exchange *x)
{
    pthread_mutex_lock(&x->call_lock);
    x->user = pthread_self();
    x->has_user = true;
}
static inline void amp_mpi__leave(amp_mpi_exchange *x) { pthread_mutex_unlock(&x->call_lock); }

/* leave.c: visit(x), under x's call lock, for every live exchanger of the
 * process but self that has exchanges in flight, is not broken, was last
 * used by this thread and whose call lock is free (a busy one is skipped,
 * never waited for). Lock order: registry_lock, then a call lock, tried
 * only; a call holds its own call lock and may then take registry_lock
 * (create, destroy). visit runs without registry_lock (it may block for
 * a break's grace, and may itself take registry_lock). */
void amp_mpi__registry_visit(const amp_mpi_exchange *self, void (*visit)(amp_mpi_exchange *));
/* halo_wait.c: the exchanges in flight on this thread's other exchangers
 * (self excluded; NULL: none) progressed, as MPI progresses every posted
 * request while a rank waits in any call: their receives matched and
 * posted, their ready sends posted, their surplus chunks drained. Called
 * from every wait of hipamp::mpi. A failure breaks that exchanger (its
 * next call says why); this thread's amp_mpi_last_error() is kept. Never
 * blocks. */
void amp_mpi__progress_others(amp_mpi_exchange *self);
/* halo_wait.c: MPI_Test of req until it finished, progressing the
 * exchanges of this thread's exchangers but self meanwhile (a collective
 * call of create that a peer joins only after an exchange this rank began
 * went on). Returns MPI's code; after a failed test the request is waited
 * for (MPI_Wait) before the return, so that the buffers it names may go. */
int amp_mpi__await(MPI_Request *req, amp_mpi_exchange *self);

/* x NULL, or not live (destroyed): refused, naming fn. */
#define AMP_MPI__LIVE_EXCHANGER(x, fn)                                                                      \
    do {                                                                                                    \
        if (!(x)) return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: x is NULL", (fn));                \
        if ((x)->tag != AMP_MPI__LIVE)                                                                      \
            return amp_mpi__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: the exchanger %p was destroyed", (fn),    \
                                 (const void *)(x));                                                        \
    } while (0)

#endif
