/* hipamp_mpi.h — hipamp::mpi, the optional MPI component (libhipamp_mpi, built
 * only where MPI is found): one accelerator per rank chosen by node-local
 * rank, whether the MPI library takes GPU device pointers, and halo exchanges
 * of array_view sections that hand MPI device pointers, host memory in place,
 * or host staging buffers, as the data and the MPI library allow.
 *
 * MPI stays the engine: this header adds no communicator, launcher or
 * decomposition of its own. It needs <mpi.h> (any MPI-3 library: Open MPI,
 * MPICH, Cray MPICH, MVAPICH, Intel MPI) and <hipamp.h>.
 *
 * Conventions are hipamp's (see hipamp.h), with one difference: the
 * component has its own per-thread error message, amp_mpi_last_error(),
 * which after a failed amp_mpi_* call says why (it quotes amp_last_error()
 * when a hipamp call inside failed, and MPI's error string when MPI did).
 * An exchanger's own communicator returns MPI errors (MPI_ERRORS_RETURN), so
 * a failed exchange is a status; the calls on the caller's communicator
 * (amp_mpi_local_rank, the MPI_Comm_dup of amp_mpi_exchange_create) return
 * MPI errors only where the caller set MPI_ERRORS_RETURN on it; under MPI's
 * default handler an MPI error there ends the job.
 * Calls that communicate need MPI initialised (AMP_ERROR_INVALID_ARGUMENT
 * otherwise, never an MPI abort).
 */
#ifndef HIPAMP_MPI_H
#define HIPAMP_MPI_H

#include <mpi.h>

#include <hipamp.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(HIPAMP_MPI_BUILDING)
#define AMP_MPI_API __attribute__((visibility("default")))
#else
#define AMP_MPI_API
#endif

/* Detail of the last failed amp_mpi_* call on this thread ("" when none).
 * Owned by the component, valid until the next amp_mpi_* call on this
 * thread. Never NULL. */
AMP_MPI_API const char *amp_mpi_last_error(void);

/* ------------------------------------------------- rank -> accelerator */

/* This process's rank among the processes of comm that share its node
 * (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED), and how many there are.
 * Collective over comm; blocks until every rank of comm called it (a rank
 * given a NULL out still takes part, then fails).
 * AMP_ERROR_INVALID_ARGUMENT: NULL out, MPI not initialised,
 * MPI_COMM_NULL, or an intercommunicator (naming it and its groups' sizes;
 * refused before any collective call, so every rank of both groups fails
 * alike: hipamp::mpi works among the ranks of one group; merge the groups
 * with MPI_Intercomm_merge). AMP_ERROR_DEVICE: an MPI call failed. */
AMP_MPI_API amp_status amp_mpi_local_rank(MPI_Comm comm, int *local_rank, int *local_size);

/* The accelerator for this rank of a job that runs one rank per GPU: the
 * one AMP_DEFAULT_ACCELERATOR names when it is set (the user's explicit
 * choice, the same for every rank), else
 * amp_accelerator_select_local(node-local rank in comm): GPU number
 * local_rank % GPUs visible, or the CPU accelerator where there is none.
 * The node-local rank comes from MPI itself, so it works under any launcher
 * (mpirun, srun, mpiexec.hydra, aprun). Collective over comm (as
 * amp_mpi_local_rank). The accelerator is owned by hipamp (never freed).
 * Statuses: as amp_mpi_local_rank, and AMP_ERROR_NO_ACCELERATOR from
 * hipamp. */
AMP_MPI_API amp_status amp_mpi_select_accelerator(MPI_Comm comm, amp_accelerator **out);

/* ------------------------------------------------- GPU-aware MPI */

/* What the MPI library in this process says about GPU device buffers. */
typedef struct amp_mpi_gpu_support {
    bool cuda;             /* MPI takes CUDA device pointers */
    bool rocm;             /* MPI takes HIP/ROCm device pointers */
    bool forced;           /* AMP_MPI_GPU_AWARE (0 or 1) decided, not the library */
    char library[160];     /* MPI_Get_library_version, first line */
    char reason[320];      /* how it was found out, e.g. "MPIX_Query_cuda_support() = 0" */
} amp_mpi_gpu_support;

/* Ask the MPI library: Open MPI's MPIX_Query_cuda_support() and
 * MPIX_Query_rocm_support() (mpi-ext.h), MPICH's
 * MPIX_GPU_query_support(), Cray MPICH's MPICH_GPU_SUPPORT_ENABLED=1,
 * whichever this MPI has; a library with none of them is taken as not
 * GPU-aware. AMP_MPI_GPU_AWARE=1 or 0 in the environment overrides the
 * answer for both vendors (for a GPU-aware MPI that has no query, or to
 * force host staging). Needs MPI initialised; does not communicate or
 * block. AMP_ERROR_INVALID_ARGUMENT: out NULL, MPI not initialised, or
 * AMP_MPI_GPU_AWARE is neither 0 nor 1. */
AMP_MPI_API amp_status amp_mpi_query_gpu_support(amp_mpi_gpu_support *out);

/* ------------------------------------------------- exchange paths */

/* How halo data crosses between ranks. */
typedef enum amp_mpi_path {
    AMP_MPI_PATH_AUTO = 0,   /* decide (amp_mpi_choose_path) */
    /* The data is host memory that the accelerator works on directly (the
     * CPU accelerator; an APU in unified mode; views of host memory): MPI
     * reads and writes it in place, hipamp copies nothing. */
    AMP_MPI_PATH_HOST = 1,
    /* Device pointers are handed to a GPU-aware MPI library. */
    AMP_MPI_PATH_DEVICE = 2,
    /* Only the halo sections cross to host buffers (one section copy each
     * way per halo); MPI works on the host buffers. The buffers are pinned
     * (staging arrays of the exchanger's queue, allocated once per halo
     * slot and reused), each send is posted as soon as its copy landed and
     * each receive is copied up as soon as it arrived (AMP_MPI_STAGED_PIPELINE=0:
     * pageable buffers, sends posted when found ready, receives copied up
     * once all arrived, as before, for measurements). */
    AMP_MPI_PATH_STAGED = 3,
    /* NCCL (CUDA) or RCCL (HIP), loaded at run time: the halo sections move
     * device to device in one NCCL group per exchange, queued on the
     * exchanger's queue (its native stream), with no host round trip; MPI
     * only bootstraps the NCCL communicator. */
    AMP_MPI_PATH_NCCL = 4
} amp_mpi_path;

/* "auto", "host", "device", "staged", "nccl"; "unknown" for other values.
 * Static, never NULL. */
AMP_MPI_API const char *amp_mpi_path_name(amp_mpi_path p);
/* The inverse of amp_mpi_path_name (case-sensitive).
 * AMP_ERROR_INVALID_ARGUMENT naming the text when it is none of them. */
AMP_MPI_API amp_status amp_mpi_path_parse(const char *text, amp_mpi_path *out);

typedef struct amp_mpi_path_info {
    amp_mpi_path path;     /* never AMP_MPI_PATH_AUTO */
    amp_mpi_gpu_support gpu; /* what the MPI library said */
    char reason[512];      /* why this path, in words */
    /* NCCL/RCCL: the library found ("libnccl.so.2 (NCCL 2.28.3)") or why
     * none was ("" when not looked for: the host path). */
    char nccl[256];
    /* An exchanger's path only: NCCL was chosen, but its communicator could
     * not be made on some rank, so every rank moves its halos staged
     * (reason says which rank failed and why; a warning went to stderr). */
    bool fell_back;
} amp_mpi_path_info;

/* The path for data on accelerator a (NULL: the default accelerator).
 * requested AUTO: the AMP_MPI_PATH environment variable (host, device,
 * staged, nccl) when set, else HOST where a computes on host memory (the
 * CPU accelerator, a GPU with unified memory), DEVICE where the MPI library
 * takes a's vendor's device pointers, NCCL where a is a CUDA or HIP GPU and
 * its vendor's library loads (libnccl.so.2, librccl.so.1, or
 * AMP_MPI_NCCL_LIBRARY: a path or soname), else STAGED. A requested (or
 * AMP_MPI_PATH) DEVICE on a GPU whose vendor's pointers this MPI does not
 * take is AMP_ERROR_UNSUPPORTED: MPI would read device memory as host
 * memory; so is NCCL where no library loads (out->nccl says why), and
 * NCCL on an accelerator that computes on host memory (the CPU
 * accelerator) unless AMP_MPI_NCCL_LIBRARY names the library on purpose (a
 * stand-in that takes host memory, as the tests' does; a real NCCL there
 * fails to make its communicator where no GPU is usable, and the exchanger
 * falls back to STAGED). HOST on a discrete GPU is allowed
 * (views of host memory then travel to the device by hipamp's own copies)
 * and says so in reason. Needs MPI initialised; does not communicate (it
 * may load the NCCL library). AMP_ERROR_INVALID_ARGUMENT: out NULL, bad
 * requested, or a bad AMP_MPI_PATH / AMP_MPI_GPU_AWARE value. */
AMP_MPI_API amp_status amp_mpi_choose_path(amp_accelerator *a, amp_mpi_path requested, amp_mpi_path_info *out);

/* ------------------------------------------------- halo exchange */

typedef struct amp_mpi_exchange amp_mpi_exchange;

/* An exchanger of views of elem_size-byte elements between the ranks of comm,
 * for data used on queue q (NULL: the default accelerator's default view),
 * moving it by path (AUTO: amp_mpi_choose_path for q's accelerator). It
 * duplicates comm, so its messages never match the caller's, and posts
 * there a receive of its peers' leaving notices (see amp_mpi_exchange_halos).
 * Its time-out (amp_mpi_exchange_set_timeout) starts as AMP_MPI_TIMEOUT
 * milliseconds where that is set, else 0. AMP_MPI_CHUNK_BYTES (0 or unset:
 * none; 4096 to 1073741824) sends every face of at least
 * c = AMP_MPI_CHUNK_BYTES / elem_size elements (at least 1) as several MPI
 * messages (not on the NCCL path), cut by element count alone: chunk j
 * holds elements j*c to j*c+c-1 of the view in row-major order, and the
 * last one the count % c left (none where c divides the count: an empty
 * message, so that the last message of a face is always shorter than a
 * chunk and a receiver knows where its peer's face ended), whatever the
 * view's shape, so a face and its peer's match whenever they hold the same
 * number of elements (a 2 x 3000 section and a 1-D view of 6000 alike). A
 * difference in counts is found as for a face sent whole, whichever side
 * has more chunks: the receive's chunks that no message will fill are
 * withdrawn, and the peer's chunks it has no room for are taken and
 * dropped, so none is left to meet a later exchange (where that cannot be
 * done, with a later exchange of the same peer and tag begun, the
 * exchanger refuses further exchanges, as after a time-out). On
 * the staged path a contiguous face on a GPU with a copy stream copies
 * each chunk on its own, so that its first chunks travel while the rest
 * are still copied; other faces are copied to or from their staging
 * buffer whole, their chunks sent from or received into it. A chunk is
 * never a view of its own: nothing of the caller's views is kept once the
 * exchange ended. AMP_MPI_CHUNK_BYTES must be the same on every rank
 * (refused, naming both values, otherwise). The exchanger owns the
 * host staging buffers of the STAGED path (grown on demand, reused).
 * Collective over comm (MPI_Comm_idup, then one MPI_Iallreduce, polled
 * while this thread's exchanges in flight on its other exchangers go on,
 * see amp_mpi_exchange_begin): every rank
 * must call it, each with the path it wants, and every rank gets the same
 * verdict: when one rank's set-up fails (its own status and message), the
 * others fail too, naming it; when the ranks' element sizes differ, every
 * rank fails naming its own size, another rank's size and that rank (a
 * 4-byte and an 8-byte exchanger would move the same bytes and read them
 * as different types). The ranks' paths must agree on NCCL: when some
 * ranks chose it and others did not (NCCL and MPI messages never meet),
 * every rank fails naming its own path, another rank's and that rank.
 * Where every rank chose NCCL, the NCCL communicator is made here (rank 0's
 * ncclGetUniqueId, an MPI_Bcast, ncclCommInitRank on every rank with the
 * queue's device current); when that fails on any rank, every rank frees
 * what it made, falls back to STAGED and says so (a warning on stderr, and
 * amp_mpi_exchange_get_path: fell_back, reason): never a hang on a rank that
 * failed. Owned by the caller; one thread uses it at a time.
 * comm must be an intracommunicator: on an intercommunicator MPI's size and
 * ranks are one group's and its collectives hand each group the other's
 * values, so it is refused (as amp_mpi_local_rank refuses it), on every
 * rank of both groups before any collective call.
 * AMP_ERROR_INVALID_ARGUMENT: out NULL (this rank's set-up failure: it
 * still takes part, so every rank fails), elem_size 0 or more than
 * INT32_MAX (no message holds one element), MPI not initialised,
 * MPI_COMM_NULL or an intercommunicator (naming it), element sizes that differ between ranks, another rank's
 * failure, AMP_MPI_TIMEOUT not a number of milliseconds (0 to
 * 4294967295), a bad or differing AMP_MPI_CHUNK_BYTES; as amp_mpi_choose_path; AMP_ERROR_OUT_OF_MEMORY;
 * AMP_ERROR_DEVICE: an MPI call failed. */
AMP_MPI_API amp_status amp_mpi_exchange_create(MPI_Comm comm, amp_accelerator_view *q, size_t elem_size,
                                               amp_mpi_path path, amp_mpi_exchange **out);
/* The path the exchanger uses, and why. Never blocks. */
AMP_MPI_API amp_status amp_mpi_exchange_get_path(const amp_mpi_exchange *x, amp_mpi_path_info *out);
/* Waits for the staging copies still running, frees the staging buffers,
 * and sends the exchanger's leaving notices (see amp_mpi_exchange_halos), so
 * that a peer still waiting for it in an exchange fails instead of waiting
 * for ever. Does not wait for the peers: the duplicated communicator is
 * freed once the notices this exchanger awaits from its peers (their
 * destroy or MPI_Finalize) arrived, at this call, a later
 * amp_mpi_exchange_create or _destroy, or at MPI_Finalize (a notice must
 * never reach a freed communicator: a later one may be given the same
 * context). After MPI_Finalize, or after an exchange was abandoned, only
 * the memory is freed (the communicator and staging buffers MPI may still
 * read are left to it). An exchange still in flight when MPI_Finalize is
 * called can never end: MPI_Finalize abandons it (as a time-out does: its
 * receive views' contents are undefined, the data it was to bring is
 * lost), and this call afterwards frees the memory and returns AMP_OK.
 * NULL is a no-op. AMP_ERROR_BUSY, nothing freed: an exchange is in flight
 * and MPI is not finalized (end it first). AMP_ERROR_INVALID_ARGUMENT: x
 * destroyed. Another status: a staging copy still running, or the release
 * of a staging buffer, failed (its status, quoted in the message); the
 * exchanger is freed all the same (do not destroy it again). */
AMP_MPI_API amp_status amp_mpi_exchange_destroy(amp_mpi_exchange *x);

/* One neighbour of an exchange: send is sent to peer with send_tag, and
 * recv is filled from peer's message with recv_tag. send and recv are views
 * (whole views, sections, projections; strided ones are sent with an MPI
 * vector datatype, or packed by the staging copy) of elem_size-byte
 * elements; either may be NULL (nothing that way), but neither may be
 * empty (0 elements: refused, naming the halo; give NULL instead, on both
 * sides of the message). peer MPI_PROC_NULL skips the entry, as MPI does.
 * Tags are 0 to MPI_TAG_UB - 1 (the exchanger's communicator's MPI_TAG_UB,
 * which may be as small as 32767): MPI_TAG_UB carries the exchanger's
 * leaving notices. The peer's matching entry must move the same number of
 * elements (its shape may differ: elements go in row-major order): each
 * receive is checked when it arrives, before anything is written: a
 * receive is handed to MPI only once its message was matched
 * (MPI_Improbe) and its length known, and a message longer than the view
 * is taken whole into a buffer of the exchanger's and dropped, so that no
 * MPI library writes past the view (Open MPI 4's shared-memory single copy
 * writes a whole message past a shorter receive buffer). A receive view may share no element
 * with another view of its exchange (a send, whose data it would
 * overwrite, or another receive): what it held afterwards would depend on
 * the order in which messages land. Two sends may read the same elements.
 * Not detected: a send the peer's exchange has no receive for (its halo
 * list leaves the entry out, or names another tag). A send small enough
 * for MPI to deliver eagerly then completes, and its message waits for the
 * next receive of that peer and tag, in a later exchange, which takes it
 * as its own: from then on every exchange of that pair delivers the one
 * before's data, with AMP_OK. Both ranks' halo lists must name the same
 * (peer, tag) pairs in every exchange; a time-out (AMP_MPI_TIMEOUT) only
 * catches a receive nothing is sent to. */
typedef struct amp_mpi_halo {
    amp_array_view *send;
    amp_array_view *recv;
    int peer;              /* rank in the exchanger's comm, or MPI_PROC_NULL */
    int send_tag, recv_tag;
} amp_mpi_halo;

/* Exchange count halos at once: every send view's current data reaches its
 * peer, every recv view holds its peer's data on return, wherever the
 * accelerator will read it next. Blocks until all of it arrived: it is
 * amp_mpi_exchange_begin followed by amp_mpi_exchange_end (MPI nonblocking
 * calls, polled with MPI_Testall as MPI_Waitall would, yielding the
 * processor between polls; hipamp work queued on the views before the call
 * is waited for first). What moves, by kind of view:
 *  - a view of host memory (amp_array_view_create) is exchanged in place on
 *    every path but DEVICE: synchronize before sending (copies back only a
 *    device-newer part of the section, nothing on unified memory), refresh
 *    after receiving;
 *  - a view of an array: DEVICE hands MPI its device address
 *    (amp_array_view_native_handle on q); HOST does the same where the
 *    array's memory is host memory (the CPU accelerator) and is
 *    AMP_ERROR_UNSUPPORTED on a GPU; STAGED copies the section to a host
 *    buffer (amp_copy_view, counted in q's statistics) and back;
 *  - on the NCCL path every view (host views too) is handed to NCCL by
 *    its device address on q; a strided one is packed to a contiguous
 *    device buffer and unpacked on q. The sends and receives are one NCCL
 *    group queued on q: begin returns once it is queued, and end does not
 *    wait for the device (later work on q is ordered after it) unless a
 *    time-out is set, when it waits for q up to the time-out, this
 *    thread's exchanges in flight on its other exchangers going on
 *    meanwhile (a peer's part of the group may wait for one). NCCL has no
 *    tags: the sends to one peer go in the order of their tags, and the
 *    receives from one peer are posted in the order of theirs, so that
 *    matching entries meet (each tag used once per peer and direction in
 *    one exchange). NCCL does not report a message's length: the receive
 *    sizes are not checked on arrival on this path, and a peer that left
 *    is found only by the time-out (the communicator is then aborted).
 * AMP_ERROR_INVALID_ARGUMENT: x NULL, halos NULL with count > 0, a peer
 * outside comm, a negative tag, MPI_TAG_UB or a larger one (naming the tag
 * and the limit), a receive view that shares elements with another view of
 * the exchange (naming both halos; compared where hipamp::mpi sees the
 * views' memory: views of host memory always, before any view is touched;
 * views of arrays once handed over by device address, which loses none of
 * their data: the device and NCCL paths, the host path on the CPU
 * accelerator, contiguous faces staged on a GPU's copy stream; a view of
 * an array copied to or from a staging buffer by hipamp is not compared),
 * an exchange begun on x still in flight (the blocking calls: their end
 * would have to come first; end it), a view whose element size
 * is not the exchanger's, an empty view, a message (a face, or a chunk of
 * one) of 2 GiB or more, an AMP_READ_ONLY recv view (on every path,
 * before any view is touched, naming the halo), or a message whose size is not its receive view's
 * (shorter, or longer: MPI_ERR_TRUNCATE), naming the halo, the peer rank
 * and both sizes, of the whole face for one sent in chunks (the receive
 * views' contents are then undefined, and memory outside them is never
 * written: a longer message lands in none of the receive view; the peer's exchange may have
 * succeeded, and the exchanger stays usable but where a face in chunks
 * left messages over, see amp_mpi_exchange_create);
 * AMP_ERROR_OUT_OF_MEMORY: no memory to take a longer message whole (the
 * exchanger then refuses further exchanges, as after an MPI failure);
 * AMP_ERROR_UNSUPPORTED: as above; statuses of the hipamp calls made;
 * AMP_ERROR_DEVICE: an MPI call
 * failed (the exchange's messages are then in an undefined state, as MPI
 * leaves them, and the exchanger refuses further exchanges);
 * AMP_ERROR_TIMEOUT: a peer did not answer within the time-out
 * (amp_mpi_exchange_set_timeout), or, with or without one, a peer the
 * exchange waits for left: its exchanger was destroyed, or it called
 * MPI_Finalize, without taking part in the exchange (the message names
 * each such rank and how it left; the exchange is abandoned as on a
 * time-out). Nothing is sent, and no view is changed, when a view fails
 * its checks: every halo is checked before any view is made ready, and
 * making a view ready loses none of its data (a receive view handed over
 * by device address is handed over for reading and writing; a receive in
 * place drops its device-newer data only once every view is ready).
 * Leaving notices: when an exchanger is destroyed, or its process calls
 * MPI_Finalize while it lives, it sends one small message to its peers;
 * an exchange still waiting for such a peer 0.1 s after its notice arrived
 * (the time for data it sent before to land) fails. The peers told are
 * every other rank of comm in a communicator of at most 64 ranks; in a
 * larger one there are no notices (they would cost size^2 messages), and
 * only a time-out ends the wait for a peer that left. A peer that crashes, or hangs in other work, sends nothing: that
 * too needs the time-out. */
AMP_MPI_API amp_status amp_mpi_exchange_halos(amp_mpi_exchange *x, const amp_mpi_halo *halos, size_t count);

/* The common 1-D case: the rank below (lo) and above (hi) in a split of
 * rows, either MPI_PROC_NULL at the ends. send_lo goes to lo, recv_lo comes
 * from lo, send_hi to hi, recv_hi from hi; matching ranks call it the same
 * way (a rank's send_hi arrives in its hi neighbour's recv_lo). As
 * amp_mpi_exchange_halos with two entries. */
AMP_MPI_API amp_status amp_mpi_exchange_rows(amp_mpi_exchange *x, int lo, amp_array_view *send_lo,
                                             amp_array_view *recv_lo, int hi, amp_array_view *send_hi,
                                             amp_array_view *recv_hi);

/* ------------------------------------------------- exchanges in flight */

/* An exchange begun and not yet ended, as a number its exchanger gave it
 * (1, 2, ... in the order exchanges began; 0 is never one). A plain value:
 * copy it, compare it; it refers to nothing that can be freed. */
typedef struct amp_mpi_pending {
    uint64_t id;
} amp_mpi_pending;

/* The exchange of amp_mpi_exchange_halos, begun: checks every halo (the
 * same refusals, and nothing is sent when one fails), makes each view's
 * data ready for MPI, posts the receives whose messages arrived (the others
 * are posted by the test or end that finds theirs: see
 * amp_mpi_exchange_halos), and returns without waiting for the messages,
 * so that the caller can queue work (a kernel on the rows
 * that need no halo) while the halos move. The sends go out in the order
 * exchanges began, each as soon as its data is ready: views of host memory
 * and device pointers are ready when begin returns (begin waits for the
 * kernels still writing the sends or reading the receives: MPI touches that
 * memory outside hipamp's queues); a staged send's copy to its host buffer
 * is queued behind the kernels that write the send, and begin does not
 * wait for it: the send is posted by the first begin, test or end that
 * finds the copy landed (end waits for it), so the caller can queue its
 * next kernel at once. On the NCCL path begin queues the
 * exchange on q and waits for nothing. Until its end, the caller must not write a send
 * view nor use a receive view (a staged send's data is already copied once
 * it is posted), nor begin recording a launch graph on q (on a GPU the
 * staged copies' ordering is queued on q's stream by test and end). Several exchanges may be in flight; they end in the order
 * they began. The halos array is copied; the views must live until the
 * end (the exchanger keeps nothing of them afterwards: their arrays may
 * then be destroyed). *out gets the exchange (0 on failure). Progress:
 * a receive is posted only once its message was matched and its length
 * checked, so while the exchange is in flight it moves on in this
 * library's calls: its own test and end, and every call of this thread
 * that waits or polls (an end, test or blocking exchange of another
 * exchanger, amp_mpi_exchange_allreduce, amp_mpi_exchange_create), as a
 * posted MPI request moves on in any MPI call; another thread's calls move
 * it only once that thread used the exchanger last. Not in the caller's own MPI
 * calls: a rank that waits in MPI (a barrier, an MPI_Allreduce of its own)
 * while a peer waits for this exchange should call amp_mpi_exchange_test
 * or end it first. Statuses: as amp_mpi_exchange_halos, except those of
 * the arrival checks and the time-out, which end reports. */
AMP_MPI_API amp_status amp_mpi_exchange_begin(amp_mpi_exchange *x, const amp_mpi_halo *halos, size_t count,
                                              amp_mpi_pending *out);
/* As amp_mpi_exchange_rows, begun (see amp_mpi_exchange_begin). */
AMP_MPI_API amp_status amp_mpi_exchange_rows_begin(amp_mpi_exchange *x, int lo, amp_array_view *send_lo,
                                                   amp_array_view *recv_lo, int hi, amp_array_view *send_hi,
                                                   amp_array_view *recv_hi, amp_mpi_pending *out);
/* Move exchanges along without blocking: posts the sends whose data is now
 * ready and the receives whose messages came (of every exchange in flight,
 * in order; those of this thread's other exchangers too), and *done says whether
 * all of p's messages have finished (its end then does not wait for MPI).
 * AMP_ERROR_INVALID_ARGUMENT: x or done NULL, p not in flight (never begun,
 * or ended), the exchanger was abandoned, or MPI is not initialized or
 * already finalized. AMP_ERROR_DEVICE (an MPI or
 * NCCL call, or a staging copy, failed) or AMP_ERROR_OUT_OF_MEMORY: every
 * exchange in flight is abandoned, as after a time-out (see
 * amp_mpi_exchange_set_timeout), and the exchanger refuses later ones. */
AMP_MPI_API amp_status amp_mpi_exchange_test(amp_mpi_exchange *x, amp_mpi_pending p, bool *done);
/* End exchange p: post its remaining sends (waiting for their staging
 * copies), wait for its messages (at most the time-out), check that every
 * receive got its view's size, and put the received data where the
 * accelerator reads it next (a staged receive's copy to its view is
 * queued, ordered before any later use of the view; this call does not
 * wait for it). p must be the oldest exchange in flight: ending another
 * one, or p a second time, is AMP_ERROR_INVALID_ARGUMENT naming both
 * exchanges (nothing changes; the exchange stays in flight). After any
 * other failure p is over (as amp_mpi_exchange_halos leaves it). The
 * statistics count p once it ended successfully; its seconds are the time
 * spent inside its begin, tests and end. Statuses: as
 * amp_mpi_exchange_halos. */
AMP_MPI_API amp_status amp_mpi_exchange_end(amp_mpi_exchange *x, amp_mpi_pending p);

/* Bound how long an exchange waits for its peers: ms milliseconds of
 * waiting for the messages (0: for ever, as MPI_Waitall, unless a peer it
 * waits for leaves; the default is AMP_MPI_TIMEOUT, else 0). A peer that
 * never answers (it crashed, or is stuck in other work; one that destroyed
 * its exchanger or finalized is found without a time-out where its leaving
 * notice reaches this rank, see amp_mpi_exchange_halos) then makes the
 * exchange return AMP_ERROR_TIMEOUT, naming every peer rank that did not
 * answer and the halos still pending (with the chunk, for a face sent in
 * chunks: "chunk 2 of 6"), instead of blocking for ever. What a
 * time-out, or a peer that left, cannot undo: a send MPI already took
 * cannot be withdrawn (MPI may still read its data, so the send views, or
 * the staging buffers under them, must stay untouched; the staging buffers
 * are never freed), and a message the peer sends later would match a later
 * receive. So the exchange is abandoned (its receives are cancelled, their
 * views' contents undefined) and the exchanger refuses every later exchange
 * with AMP_ERROR_INVALID_ARGUMENT: destroy it. A receive whose message had
 * begun to arrive cannot be cancelled (MPI matched it), and its peer may
 * send the rest at any time: it is waited for 0.1 s at most, then left to
 * MPI, which may still write its view (or the staging buffer under it,
 * then never freed) until the peer's message is complete. So the memory
 * of a receive view of an abandoned exchange must stay allocated until
 * MPI_Finalize; MPI_Finalize may wait for such a receive, as for an
 * abandoned send. MPI_Finalize may still wait
 * for the abandoned sends, as MPI's rules allow. Never blocks.
 * AMP_ERROR_INVALID_ARGUMENT: x NULL. */
AMP_MPI_API amp_status amp_mpi_exchange_set_timeout(amp_mpi_exchange *x, uint32_t ms);

/* Counters of one exchanger since its creation or last reset. */
typedef struct amp_mpi_exchange_stats {
    uint64_t exchanges;                    /* exchanges that ended successfully (blocking or begun) */
    uint64_t messages_sent, messages_received;
    uint64_t bytes_sent, bytes_received;   /* payload handed to MPI */
    uint64_t bytes_staged;                 /* copied through host staging (both ways) */
    uint64_t bytes_copied_aside;           /* of those, copied on hipamp::mpi's own copy stream of a GPU (the
                                            * staged pipeline's), beside the queue: not in its amp_stats */
    double seconds;                        /* wall time inside the exchange calls (begin, test, end) */
    uint64_t allreduces;                   /* amp_mpi_exchange_allreduce calls that succeeded */
    uint64_t allreduces_on_device;         /* of those, reduced by NCCL on the device */
} amp_mpi_exchange_stats;
/* Never blocks. AMP_ERROR_INVALID_ARGUMENT: a NULL argument. */
AMP_MPI_API amp_status amp_mpi_exchange_get_stats(const amp_mpi_exchange *x, amp_mpi_exchange_stats *out);
AMP_MPI_API amp_status amp_mpi_exchange_reset_stats(amp_mpi_exchange *x);

/* ------------------------------------------------- collectives */

/* Element types and operations of amp_mpi_exchange_allreduce. */
typedef enum amp_mpi_type { AMP_MPI_DOUBLE = 0, AMP_MPI_FLOAT = 1, AMP_MPI_INT32 = 2, AMP_MPI_INT64 = 3 } amp_mpi_type;
typedef enum amp_mpi_op { AMP_MPI_SUM = 0, AMP_MPI_MAX = 1, AMP_MPI_MIN = 2 } amp_mpi_op;

/* Reduce the elements of v across the exchanger's ranks, in place: every
 * rank's v holds, element by element, the op of all ranks' values. v is a
 * contiguous view (whole, or a contiguous section) of elements of type's
 * size (any exchanger element size). On the NCCL path it is one
 * ncclAllReduce on the device, queued on the exchanger's queue (after the
 * work that wrote v, before any later use): this call returns once it is
 * queued and moves nothing through the host, so an iteration that keeps
 * its scalars on the device needs no host round trip. On the other paths
 * v's data is copied to the host, summed by MPI_Iallreduce on the
 * exchanger's communicator (polled as an exchange's messages are) and
 * copied back: blocks until done. Collective: every rank calls it in the
 * same order with the same count, type and op. A rank that refuses its own
 * call (its checks below are its own: they may fail on one rank only)
 * never joins the reduction, and the ranks do not agree first (that would
 * cost a second collective per call): on the other paths the others' calls
 * end as an exchange's wait does, with AMP_ERROR_TIMEOUT once the
 * exchanger's time-out passed (amp_mpi_exchange_set_timeout,
 * AMP_MPI_TIMEOUT), or, with or without one, once the refusing rank
 * destroyed its exchanger or called MPI_Finalize (its leaving notice); the
 * reduction is then abandoned (v keeps its values; MPI keeps the request
 * and the host buffer it may still write) and the exchanger refuses
 * further exchanges and all-reduces. A rank that refused should treat its
 * exchanger the same way: destroy it. On the NCCL path the reduction is on
 * the device, and only a later wait on the queue with a time-out (an
 * exchange's end) finds a rank that never joined. Counts that differ
 * between ranks are not found either (the same second collective): MPI
 * then truncates, a rank with more elements may get AMP_OK with values
 * not reduced, and MPI may end the job (Open MPI reports a non-blocking
 * collective's error to MPI_COMM_WORLD's error handler whatever the
 * exchanger's communicator sets).
 * AMP_ERROR_INVALID_ARGUMENT: x or v NULL, x destroyed, a bad type or op, an element
 * size other than type's, a strided view, a view of no elements (or of
 * more than INT32_MAX), an AMP_READ_ONLY view, the exchanger was abandoned;
 * AMP_ERROR_OUT_OF_MEMORY; AMP_ERROR_DEVICE: an MPI or NCCL call failed;
 * AMP_ERROR_TIMEOUT: as above; statuses of the hipamp calls made. */
AMP_MPI_API amp_status amp_mpi_exchange_allreduce(amp_mpi_exchange *x, amp_array_view *v, amp_mpi_type type,
                                                  amp_mpi_op op);

#ifdef __cplusplus
}
#endif
#endif /* HIPAMP_MPI_H */
