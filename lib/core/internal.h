/* internal.h — the core's private structures and the functions its modules
 * call in one another (one section per file). Backends never see these.
 *
 * Lock order (outermost first; never take an earlier one while holding a
 * later one):
 *   0. a graph's replay lock (lib/core/graph.c: held for one whole replay of
 *      the graph, its storage locks inside; one at a time); the arrays'
 *      ending lock (lib/core/array.c: one storage lock inside; never with
 *      a replay lock)
 *   1. storage locks (several at once only inside a launch, a replay or a
 *      copy, in address order)
 *   2. a program's lock (its kernel list)
 *   3. the compile cache lock (lib/core/compile_cache.c)
 *   4. an accelerator's lock (its default view, its key prefix)
 *   5. a queue's mark lock (lib/core/queue.c; also numbers the queue for traces)
 *   6. the kernel-handle table lock, the disk cache's init, the trace's
 *      buffer lock, a slab pool's lock (lib/base/slab.c), the AMP_DEBUG handle
 *      registry's lock, the default accelerator's lock (lib/core/accelerator.c),
 *      the continuation list's lock (lib/core/future.c), the graph pin table's
 *      lock and a view's recording lock, q->rec_lock (lib/core/graph.c), the
 *      disk cache's note and member locks, the prebuilt packs' lock
 *      (lib/core/prebuilt.c)
 *      (leaves; slab.c's list of pools is taken
 *      before a pool's, at a pool's first use and around fork)
 * The trace's flush lock (lib/trace/trace.c) is taken only with none of these
 * held: a flush waits for device events.
 * Backend operations are called with at most the locks lib/backend.h names
 * for each; backends never call back into the core. */
#ifndef AMP_INTERNAL_H
#define AMP_INTERNAL_H

#include "backend.h"
#include "base/core.h"
#include "includes/include_scan.h"
#include "base/lock.h"
#include "trace/trace.h"

#include <stdatomic.h>

/* ----------------------------------------------------- lib/core/handle.c
 * The handles a user holds as pointers start with an amp__handle: a tag
 * naming their kind while they live, poisoned when they are destroyed, and
 * checked by every entry point (a load and a compare). Their memory is
 * type-stable (lib/core/handle.c says how and what AMP_DEBUG=1 adds). */
typedef enum amp__handle_kind {
    AMP__HANDLE_VIEW,
    AMP__HANDLE_ARRAY,
    AMP__HANDLE_QUEUE,
    AMP__HANDLE_FUTURE,
    AMP__HANDLE_PROGRAM,
    AMP__HANDLE_GRAPH,
    AMP__HANDLE_REDUCTION, /* amp_reduction (lib/alg/reduce.c) */
    AMP__HANDLE_KINDS
} amp__handle_kind;

typedef struct amp__handle {
    _Atomic uint32_t tag;
} amp__handle;
#define AMP__HANDLE_LIVE(kind) (0xA3900000u + (uint32_t)(kind))
#define AMP__HANDLE_DEAD(kind) (0xDEAD0000u + (uint32_t)(kind))
/* A live handle's tag with AMP_DEBUG=1: never the fast path's, so every
 * check asks the registry. */
#define AMP__HANDLE_LIVE_EXACT(kind) (0xA3910000u + (uint32_t)(kind))

/* AMP_DEBUG=1: every check goes through the registry (set before the first
 * handle is made). */
extern atomic_bool amp__handles_exact;

/* A zeroed shell of size bytes for a handle of kind, tagged live; NULL
 * without memory (no message). Starts on a cache line. Futures only: a
 * zeroed future is a whole one (nothing to wait for). */
void *amp__handle_new(amp__handle_kind kind, size_t size);
/* The same, tagged live only by amp__handle_publish once its fields are
 * set (every other kind): a stale pointer that reaches the reused shell
 * meanwhile is told "destroyed" instead of finding a handle half made.
 * This narrows, and cannot close, what a stale pointer may see: one whose
 * check passed before its handle's destroy can still read the fields of
 * the handle that reuses the shell (the caller's error; AMP_DEBUG=1's
 * quarantine keeps shells from reuse for a while). */
void *amp__handle_new_unpublished(amp__handle_kind kind, size_t size);
void amp__handle_publish(void *shell, amp__handle_kind kind);
/* End the handle's life (its destroy): AMP_ERROR_INVALID_ARGUMENT, with the
 * message, when h is NULL, not a live handle of kind, or another destroy
 * ended it first. fn and what name the call and the parameter. */
amp_status amp__handle_end(void *h, amp__handle_kind kind, const char *fn, const char *what);
/* Give the shell back to its kind's pool (ended or never handed out). */
void amp__handle_free(void *shell, amp__handle_kind kind);
amp_status amp__handle_check_slow(const void *h, amp__handle_kind kind, const char *fn, const char *what);
/* Whether h is a live handle of kind, as amp__handle_check would find,
 * with no message: the fast tag, or with AMP_DEBUG=1 the registry. For
 * looks ahead of a call that will report a dead handle itself. */
bool amp__handle_alive(const void *h, amp__handle_kind kind);
/* The common case, inline for the launch path: h is a live handle of kind
 * by its tag (false also whenever the registry must decide: AMP_DEBUG=1's
 * handles carry another tag). A load and a compare. Acquire, pairing with
 * amp__handle_publish's release: a stale pointer that reaches a shell
 * published again must read the fields set before it was published, not
 * the clearing before them (ThreadSanitizer found the relaxed load's race
 * in test_handles' racing destroys; ci/handle_stress.c keeps it found). A
 * plain load on x86, one ldar on ARM. */
static inline bool amp__handle_live(const void *h, amp__handle_kind kind)
{
    return h && atomic_load_explicit(&((const amp__handle *)h)->tag, memory_order_acquire) == AMP__HANDLE_LIVE(kind);
}
/* AMP_OK for a live handle of kind; else AMP_ERROR_INVALID_ARGUMENT naming
 * fn, what and why (NULL, destroyed, another kind). */
static inline amp_status amp__handle_check(const void *h, amp__handle_kind kind, const char *fn, const char *what)
{
    return amp__handle_live(h, kind) ? AMP_OK : amp__handle_check_slow(h, kind, fn, what);
}
/* Return from the calling function unless h is a live handle of kind. */
#define AMP__HANDLE_OK(h, kind)                                                 \
    do {                                                                        \
        amp_status st_ = amp__handle_check((h), (kind), __func__, #h);          \
        if (st_ != AMP_OK) return st_;                                          \
    } while (0)

/* ------------------------------------------------ lib/core/accelerator.c */

struct amp_accelerator {
    amp__device_entry e;   /* backend, its device handle, info (read-only) */
    pthread_mutex_t lock;  /* guards default_view's and side_view's creation and key_base */
    _Atomic(amp_accelerator_view *) default_view;
    _Atomic(amp_accelerator_view *) side_view; /* amp__accelerator_queue_for's */
    bool key_ready;        /* key_base holds the hash of what every build on this
                              accelerator shares: prelude, backend, cache tag */
    uint8_t key_base[32];
    int32_t index;         /* its place in the registry (amp_accelerator_list's order) */
};

amp_status amp__registry(amp_accelerator **list, size_t *count);
/* a is one of the registry's accelerators (every amp_accelerator the
 * library hands out is): else AMP_ERROR_INVALID_ARGUMENT naming fn, what
 * and the pointer (NULL, or a pointer to something else: a view, freed
 * memory), where a use would read whatever it points at. */
amp_status amp__accelerator_check(const amp_accelerator *a, const char *fn, const char *what);
/* test/test_internal.c's stand-in accelerators (the CPU backend presented
 * as a GPU): accepted by amp__accelerator_check from then on (at most 8;
 * false when full). Never called by the library itself. */
bool amp__accelerator_standin(amp_accelerator *a);
#define AMP__ACCEL_OK(a)                                                         \
    do {                                                                         \
        amp_status st_ = amp__accelerator_check((a), __func__, #a);              \
        if (st_ != AMP_OK) return st_;                                           \
    } while (0)
/* The default view of a (created on first use). */
amp_status amp__accelerator_queue(amp_accelerator *a, amp_accelerator_view **out);
/* The view of a that runs a copy of data whose last use was on q (a view
 * of a; NULL: a's default view, which never records): q, unless q records
 * a graph now (it runs nothing else until the recording ends, and what it
 * ran before is covered by the mark it made when the recording began):
 * then a view of a that no caller is given, so that nothing ever records
 * on it (created on first use, kept for the process). The caller has
 * refused data the recording uses (amp__storage_refuse_host) and orders
 * the copy after the data's last point (amp__point_order). */
amp_status amp__accelerator_queue_for(amp_accelerator *a, amp_accelerator_view *q, amp_accelerator_view **out);
/* What q = NULL means when the call's other handles belong to no
 * accelerator (include/hipamp.h states the one rule): the default
 * accelerator's default view. */
amp_status amp__default_queue(amp_accelerator_view **out);

/* ------------------------------------------------------ lib/core/queue.c
 * An accelerator view is a queue: an in-order stream of the backend. Every
 * command the core queues (copy, launch) goes through this module, which
 * numbers it, counts it, and answers "has everything up to here finished". */

typedef struct amp__mark amp__mark; /* a recorded driver event and the number it covers */

struct amp_accelerator_view {
    amp__handle h;          /* AMP__HANDLE_QUEUE; ended by the user's destroy */
    amp_accelerator *acc;
    const amp__backend *be; /* acc->e.be, acc->e.dev: the hot path's one hop */
    void *dev;
    void *queue;            /* the backend's queue */
    /* The graph being recorded on the queue (lib/core/graph.c), NULL when none:
     * the launch path's one test for recording. Only its recording thread
     * may use the graph it names without rec_lock: another thread reads it
     * and the graph's owner under rec_lock, and it is set to NULL under
     * rec_lock before the graph is freed (so a graph read there is alive
     * until the lock is released). A leaf lock. */
    _Atomic(amp_graph *) recorder;
    amp__lock rec_lock;
    _Atomic int graphs;     /* graphs recorded on it that exist (destroying it is BUSY) */
    bool is_default;
    bool borrowed;          /* wraps the user's native queue: never destroyed by us */
    amp_queuing_mode mode;  /* as created; hipamp submits every command at once in both */
    atomic_int refs;        /* the handle, arrays on it, points held in storages and futures */
    _Atomic uint64_t submitted; /* number of the newest command (given after it is queued) */
    _Atomic uint64_t completed; /* every command numbered <= this has finished */
    amp__lock mark_lock;        /* guards mark (a forked child takes over one a parent's thread held: amp__mark_get) */
    amp__mark *mark;        /* the newest recorded point, shared by waiters */
    _Atomic uint64_t bytes_to_device, copies_to_device, bytes_to_host, copies_to_host;
    _Atomic uint64_t bytes_d2d, copies_d2d, bytes_h2h, copies_h2h;
    /* Launches are counted without an atomic of their own (one fewer locked
     * instruction a launch): they are the numbered commands that are not
     * driver copies, less those before the last statistics reset. */
    _Atomic uint64_t driver_copies, launches_before_reset;
    _Atomic uint32_t trace_id; /* the queue's number in traces (0: none yet; lib/core/queue.c) */
};

/* A point in a queue: everything queued on q up to command seq. No
 * allocation; a point stored in a structure holds a reference to q (set it
 * with amp__point_set). {NULL, 0} is "nothing to wait for". */
typedef struct amp__point {
    amp_accelerator_view *q;
    uint64_t seq;
} amp__point;
/* A point that means "whatever is queued on q when someone waits": work the
 * user queues on q's native queue after handing a device pointer out. */
#define AMP__SEQ_TAIL UINT64_MAX

amp_status amp__queue_new(amp_accelerator *a, bool is_default, amp_accelerator_view **out);
/* A view of a around the caller's native queue (lib/core/view.c's
 * amp_accelerator_view_create_from_native): wrapped, never destroyed by us. */
amp_status amp__queue_wrap(amp_accelerator *a, void *native, amp_accelerator_view **out);
/* Launches queued on q since it was made (see launches_before_reset). */
uint64_t amp__queue_launches(amp_accelerator_view *q);
void amp__queue_retain(amp_accelerator_view *q);
void amp__queue_release(amp_accelerator_view *q);
/* Queue a launch / a copy; *done is the point right after it. A timed
 * launch is bracketed by amp__queue_timed_event before and after (launch.c:
 * the events released with amp__queue_event_release). While tracing, the
 * launch is bracketed by timed events of its own, handed to the trace (see
 * the tracing section). */
amp_status amp__queue_launch(amp_accelerator_view *q, void *fn, const amp__launch *l, amp__point *done);
amp_status amp__queue_timed_event(amp_accelerator_view *q, void **ev);
void amp__queue_event_release(amp_accelerator_view *q, void *ev);
/* After work is queued on q and what it writes is recorded (the storages'
 * marks, last points): its closing timed event, timing[1]. When that cannot
 * be made, timing[0] is released too and the call fails saying the work
 * (work, and name where not NULL: "the launch of 'k'") was queued and runs:
 * a failure there never takes back what the work wrote. */
amp_status amp__queue_close_timing(amp_accelerator_view *q, void **timing, const char *call, const char *work,
                                   const char *name);
/* A copy between two devices of q's backend, queued on q. */
amp_status amp__queue_copy_peer(amp_accelerator_view *q, amp_accelerator *dst_acc, void *dst, const void *src,
                                size_t bytes, amp__point *done);
amp_status amp__queue_copy(amp_accelerator_view *q, const amp__copy *c, amp__point *done);
/* Count one logical copy (a box, however many driver copies it took). */
void amp__queue_count_copy(amp_accelerator_view *q, amp__copy_dir dir, uint64_t bytes);
/* Block until everything queued on q has finished; with ms (may be NULL:
 * no limit) for at most *ms milliseconds, then AMP_ERROR_TIMEOUT. */
amp_status amp__queue_drain(amp_accelerator_view *q);
amp_status amp__queue_drain_for(amp_accelerator_view *q, const uint32_t *ms);
/* Replace *slot by p, moving the queue reference (inline: every launch
 * sets one a storage, almost always on the queue it already holds). */
static inline void amp__point_set(amp__point *slot, amp__point p)
{
    if (slot->q != p.q) {
        amp__queue_retain(p.q);
        amp__queue_release(slot->q);
    }
    *slot = p;
}
/* Block the host until p passed; with ms (may be NULL: no limit) for at
 * most *ms milliseconds, then AMP_ERROR_TIMEOUT (the work goes on). */
amp_status amp__point_wait(amp__point p);
amp_status amp__point_wait_for(amp__point p, const uint32_t *ms);
/* As amp__point_wait, and *over says whether the work up to p is over
 * however it returned: false only when no wait could be made (no memory
 * for its wait point, or the driver refused to record one), so that the
 * work may still run; a failure of the wait itself is that of the work
 * (or of work queued with it: a CPU queue's fault, a GPU's sticky one). */
amp_status amp__point_wait_over(amp__point p, bool *over);
/* Make queue `on` wait (on the device when it can) until p passed. */
amp_status amp__point_order(amp_accelerator_view *on, amp__point p);
amp_status amp__point_query(amp__point p, bool *done);
/* As amp__point_wait_for and amp__point_query, through ev (NULL: as they
 * are): an event of p.q recorded right after p's command and before any
 * later command of that thread (a future's t1). Its status is the state of
 * the work up to p's command, which a mark covering later commands, or
 * q's count of completed commands, may not be: ev is always asked, until
 * it said AMP_OK; *ok (the asker's, initially false) then keeps that. */
amp_status amp__point_wait_at(amp__point p, void *ev, const uint32_t *ms, atomic_bool *ok);
amp_status amp__point_query_at(amp__point p, void *ev, bool *done, atomic_bool *ok);
/* st, with the message of a timed wait that ran out (fn waited ms) when st
 * is AMP_ERROR_TIMEOUT. */
amp_status amp__timeout_message(const char *fn, uint32_t ms, amp_status st);
/* Graphs on q (lib/core/graph.c calls these; queue.c calls the backend):
 * record_cover, before q records, makes a wait point covering everything
 * queued so far (no event can be recorded on q while it records);
 * record_begin starts recording;
 * record_launch and record_copy hand one command to the recording;
 * record_end stops (keep: *exec is the graph to replay, NULL when
 * nothing was recorded); replay queues one replay of exec, numbered as
 * its launches and copies (copy_bytes: what they move, counted in q's
 * statistics), *done the point after it; graph_free frees exec. */
amp_status amp__queue_record_cover(amp_accelerator_view *q);
amp_status amp__queue_record_begin(amp_accelerator_view *q);
amp_status amp__queue_record_launch(amp_accelerator_view *q, void *fn, const amp__launch *l);
amp_status amp__queue_record_copy(amp_accelerator_view *q, const amp__copy *c);
amp_status amp__queue_record_end(amp_accelerator_view *q, bool keep, void **exec);
/* A recorded command as traces show it: a launch (name set) or a copy. */
typedef struct amp__replay_node {
    const char *name;           /* the kernel (lives as long as the graph); NULL: a copy */
    amp_extent extent;
    bool tiled;
    int tile[3];
    uint64_t bytes;             /* a copy's */
} amp__replay_node;
typedef struct amp__replay {
    void *exec;                 /* the backend's graph (NULL: nothing to run) */
    const char *label;          /* traces: the kernels it launches */
    const amp__replay_node *nodes; /* traces: its commands in order (launches + driver_copies) */
    uint64_t launches, driver_copies; /* numbered as commands */
    uint64_t copies, copy_bytes;      /* counted in the statistics (logical copies) */
} amp__replay;
amp_status amp__queue_replay(amp_accelerator_view *q, const amp__replay *r, bool async, amp__point *done);
void amp__queue_graph_free(amp_accelerator_view *q, void *exec);
/* AMP_ERROR_BUSY naming what, when q records a graph: nothing else may be
 * queued on it, waited for on it, or destroy it meanwhile. */
amp_status amp__queue_refuse_recording(amp_accelerator_view *q, const char *what);

/* -------------------------------------------------------- lib/core/box.c */

/* A box [lo, hi) in storage coordinates (rank = storage rank). */
typedef struct amp__box { int lo[AMP_MAX_RANK], hi[AMP_MAX_RANK]; } amp__box;
#define AMP__MAX_BOXES 64 /* >= 2 * AMP__SIG_MAX_PARAMS: see amp__storage_prepare */

int64_t amp__box_volume(const amp__box *b, int r);
/* a contains b (inline: the launch path asks it of every argument). */
static inline bool amp__box_contains(const amp__box *a, const amp__box *b, int r)
{
    for (int d = 0; d < r; ++d)
        if (b->lo[d] < a->lo[d] || b->hi[d] > a->hi[d]) return false;
    return true;
}
bool amp__box_intersect(const amp__box *a, const amp__box *b, int r, amp__box *out);
/* list -= b (boxes crossing b split into slabs). false: the list would
 * overflow AMP__MAX_BOXES (it is then unchanged). */
bool amp__boxes_subtract(amp__box *list, int *n, const amp__box *b, int r);
/* list += b, dropping boxes inside b and merging neighbours. false: no
 * room (unchanged). */
bool amp__boxes_add(amp__box *list, int *n, const amp__box *b, int r);
/* Some box of the list contains b. */
bool amp__boxes_cover(const amp__box *list, int n, const amp__box *b, int r);
/* Position i of an odometer over n digits (count[d] values each, the last
 * fastest) as sum(digit[d] * stride[d]): the offset of the i-th block of a
 * copy whose leading dimensions are looped. */
int64_t amp__odometer_offset(int n, const int *count, const int64_t *stride, int64_t i);

/* ---------------------------------------------------- lib/core/storage.c */

/* What views and arrays share: the data source (home: host memory, or an
 * array's memory on its accelerator), at most one device copy of it on
 * another accelerator with the boxes that are current there and newer there
 * than at home, and the last command that used them. Every field below
 * `lock` is guarded by it.
 *
 * Where the data is: an array on its own accelerator and a zero-copy view
 * are `direct` (dptr is the data source: always current, nothing tracked).
 * A view of host memory on a discrete device, or a view of an array used
 * on another accelerator, has a device copy there (acc, dptr) whose boxes
 * are tracked against home; synchronize brings them home. */
typedef struct amp__storage {
    /* What every launch reads comes first, in the first four cache lines:
     * the lock, where the data is, the last use, the list lengths, extent,
     * strides and the first valid box; the rest follows. */
    amp__lock lock;             /* lib/base/lock.h */
    amp_accelerator *acc;       /* accelerator holding dptr (NULL: none yet) */
    void *dptr;                 /* device buffer, mapped host memory, or an array's memory */
    amp__point last;            /* after the last launch or copy that used it */
    int nvalid;
    int ndirty;
    bool direct;                /* dptr is the data source itself: always current, nothing tracked */
    bool is_array;              /* an amp_array's: an array argument must be on its home accelerator */
    bool unified;               /* dptr maps host memory (registered or zero-copy) */
    bool registered;            /* host memory registered with acc for dptr */
    bool borrowed;              /* home is the user's (amp_array_create_from_native): never freed */
    uint8_t stale_why;          /* why device copies were last dropped (amp__copy_why,
                                   lib/trace/trace.h): names the next copy-in in traces */
    int refs;
    size_t elem;
    amp_extent ext;             /* full extent */
    int64_t stride[AMP_MAX_RANK]; /* elements */
    amp__box valid[AMP__MAX_BOXES]; /* device-copy regions holding current data */
    amp_accelerator *home_acc;  /* where the data source lives: an array's accelerator; NULL: host memory */
    char *home;                 /* the data source (host memory, or the array's memory on home_acc) */
    amp_accelerator_view *home_q; /* an array's own queue: copies at home run there (retained) */
    amp_accelerator *pinned_acc; /* a staging array: home registered (pinned) with this accelerator */
    amp__box dirty[AMP__MAX_BOXES]; /* device-copy regions newer than home */
    amp__box whole;             /* the whole extent as a box */
    char *host;                 /* host memory behind views (home when home_acc is NULL); NULL for device arrays */
    /* Writes to the data wherever they land (a launch that writes any view
     * of it, a copy or a set into one, a host write a refresh announces):
     * a view's discard_data hint holds only while this is what it was then
     * (amp__view_discards): what was written since is needed again. */
    uint64_t writes;
    /* Graphs (lib/core/graph.c): graphs that refer to its device memory (which
     * then stays where it is), and recordings in progress that use it
     * (host access to it is refused meanwhile). */
    int graphs, recordings;
} amp__storage;

/* AMP_ERROR_BUSY naming what, when a recording in progress uses s (its
 * results exist only once the graph runs). [storage lock] */
amp_status amp__storage_refuse_host(const amp__storage *s, const char *what);
amp_status amp__storage_new(size_t elem, amp_extent e, void *host, bool is_array, amp__storage **out);
/* Takes s's lock for a public call that can fail; AMP_ERROR_DEVICE naming
 * call, without the lock, in a forked child where a thread of the parent
 * held it at fork (lib/core/storage.c). */
amp_status amp__storage_lock(amp__storage *s, const char *call);
/* Waits for the last use, frees the device side and the storage at 0. */
amp_status amp__storage_release(amp__storage *s);
size_t amp__storage_bytes(const amp__storage *s);
/* Element offset of origin (storage coordinates) from the storage's start. */
int64_t amp__storage_offset(const amp__storage *s, const int *origin);
/* AMP_OK when e's row-major strides in bytes (dimensions of 0 counted as
 * 1, so an empty extent's too) fit a ptrdiff_t with room to round up to a
 * 64-byte line: strides, offsets and sizes are then computed without
 * overflow. Else AMP_ERROR_INVALID_EXTENT naming what and e. */
amp_status amp__extent_span_check(amp_extent e, size_t elem, const char *what);
/* [storage lock] The valid list cannot take a change (it would overflow):
 * only the dirty boxes stay valid. Invariant: every dirty box lies inside
 * the valid ones, since its current data is only on the device copy; a
 * dirty box outside them would be overwritten from the stale data source
 * by the next copy-in, and copied back over the results later. */
void amp__storage_valid_only_dirty(amp__storage *s);
/* [storage lock] b is current on the device copy now: listed valid (where
 * the list is full, only the dirty boxes and b stay valid). */
void amp__storage_add_valid(amp__storage *s, const amp__box *b);
/* [storage lock] Nothing to prepare for a launch on q that uses b: the
 * data is on q's accelerator, was last used on q (or never), and b is
 * current there with room left for the launch's boxes. What
 * amp__storage_prepare would conclude with nothing to do; inline for the
 * launch path, which checks it first. */
static inline bool amp__storage_ready(const amp__storage *s, const amp_accelerator_view *q, const amp__box *b)
{
    if (s->acc != q->acc || (s->last.q != q && s->last.q)) return false;
    if (s->direct) return true;
    return s->nvalid > 0 && s->nvalid < AMP__MAX_BOXES && s->ndirty <= AMP__MAX_BOXES - AMP__SIG_MAX_PARAMS &&
           amp__box_contains(&s->valid[0], b, s->ext.rank);
}
/* [storage lock] Prepare for a launch on q: device buffer, copy-in of b
 * when the launch reads it, ordering after the last use. *dptr = base. */
amp_status amp__storage_prepare(amp__storage *s, amp_accelerator_view *q, const amp__box *b, bool discard,
                                void **dptr);
/* [storage lock] Give s memory on q's accelerator, moving it there from
 * another one (host first), as a launch on q needs; nothing else. A graph
 * holding it where it is makes a move AMP_ERROR_BUSY. */
amp_status amp__storage_place(amp__storage *s, amp_accelerator_view *q);
/* [storage lock] After a graph's replay on q (done): b was made current
 * on the device for it (amp__storage_prepare, possibly before a reset of
 * the box lists by a later box of the same replay), so it is listed valid
 * again where needed; a written box becomes device-newer. */
void amp__storage_after_replay(amp__storage *s, amp__point done, const amp__box *b, bool writes);
/* [storage lock] After the launch was queued: done is its point; a launch
 * that writes b makes b device-newer (prepare() left room for a box per
 * parameter). Inline for the launch path: a storage last used on the same
 * queue, written where it already was device-newer, is three stores. */
static inline void amp__storage_after_launch(amp__storage *s, amp__point done, const amp__box *b, bool writes)
{
    amp__point_set(&s->last, done);
    if (!writes) return;
    /* A view's discard_data hint ends, here or on the device copy (the
     * view's next launch elsewhere must bring in what was written). */
    s->writes++;
    if (s->direct) return;
    if (s->ndirty > 0 && amp__box_contains(&s->dirty[0], b, s->ext.rank)) return;
    /* A later view of the same launch may have found the valid list full
     * and reset it (prepare), dropping b: b is still current on the device
     * (the reset only copied back), and a dirty box outside the valid ones
     * would be overwritten by the next copy-in. */
    if (!amp__boxes_cover(s->valid, s->nvalid, b, s->ext.rank)) amp__storage_add_valid(s, b);
    (void)amp__boxes_add(s->dirty, &s->ndirty, b, s->ext.rank);
}
/* The memory of acc (NULL: plain host memory) is host memory, which the
 * host addresses directly (the CPU accelerator's is). */
static inline bool amp__host_addressable(const amp_accelerator *acc) { return !acc || acc->e.info.is_emulated; }
/* Whether parts of two different storages may share a byte of memory
 * (views made apart over one buffer, arrays over one native allocation):
 * each part is offset bytes from its storage's start, elements of elem
 * bytes, rank dimensions of ext elements, stride elements apart (all >= 0).
 * Exact where the storages are laid out alike (the same data source,
 * extent and element size: their boxes then say), else by the
 * span from first to last byte; an empty part shares nothing. The two
 * storages each keep their own copies, so sharing a byte is an overlap
 * even where the elements are the very same ones. Reads only fields fixed
 * at creation: no lock. */
typedef struct amp__part {
    const amp__storage *s;
    const amp__box *box;
    int64_t offset;
    size_t elem;
    int rank;
    const int32_t *ext;
    const int64_t *stride;
} amp__part;
bool amp__parts_share_memory(const amp__part *a, const amp__part *b);
/* What two storages that share memory are, for messages: "views or
 * arrays over one host memory" or "arrays over one device memory". */
static inline const char *amp__shared_memory_kind(const amp__storage *s)
{
    return amp__host_addressable(s->home_acc) ? "views or arrays over one host memory" : "arrays over one device memory";
}
/* [storage lock] Make the data source current for b (blocks). */
amp_status amp__storage_sync(amp__storage *s, const amp__box *b);
/* [storage lock] The same without the wait: the copies are queued (those
 * staged between two devices are done), and the data source is current
 * once s->last has passed. */
amp_status amp__storage_sync_queue(amp__storage *s, const amp__box *b);
/* [storage lock] Bring the data home and drop any device copy: the data
 * source is then the only copy, current (blocks). */
amp_status amp__storage_go_home(amp__storage *s);
/* [storage lock] The host changed b (refresh) or b's contents are not
 * needed (discard): forget device copies accordingly. */
amp_status amp__storage_refresh(amp__storage *s, const amp__box *b);
amp_status amp__storage_discard(amp__storage *s, const amp__box *b);

/* ---------------------------------------------- lib/core/array.c, array_view.c */

struct amp_array {
    amp__handle h;
    amp__storage *s;
    amp_accelerator_view *q; /* the array's own copies run here (retained) */
};

/* One more reference on a's storage, in *s, with a checked live where
 * amp_array_destroy cannot end it meanwhile (its message names
 * amp_array_view_of_array). */
amp_status amp__array_hold_storage(amp_array *a, amp__storage **s);

/* A view: its own layout over the storage's bytes (element size, extent,
 * strides, first element), and the box of storage elements it may touch,
 * which is what coherence tracks. Sections and projections keep the
 * storage's element size and strides, so their box is exactly their
 * elements; a reinterpret_as or view_as view has a layout of its own, whose
 * box is exact when its elements fill a box of the storage, and otherwise
 * the smallest box around them (exact false: see amp__view_locate). Views
 * never change shape: all of this is worked out once, at creation. */
struct amp_array_view {
    /* What a launch reads first (the struct starts on a cache line). */
    amp__handle h;
    amp__storage *s;
    int64_t offset;    /* bytes from the storage's start to the first element */
    size_t elem;       /* element bytes */
    amp_access access;
    bool discard;      /* next launch needs no copy-in (guarded by s->lock); only set when exact */
    uint64_t discard_at; /* s->writes when discard was set (guarded by s->lock) */
    bool exact;        /* box holds the view's elements and nothing else */
    bool empty;        /* no elements (a dimension is 0) */
    amp_extent ext;    /* view extent */
    int64_t stride[AMP_MAX_RANK]; /* in elements, [0..ext.rank-1]; the last is 1 */
    amp__box box;      /* in storage coordinates */
};

/* [storage lock] The next use of v on a device may skip copying its
 * elements in: an AMP_WRITE_ONLY view, or discard_data with nothing written
 * to the data since, anywhere (s->writes: a launch writing any view of it,
 * on any accelerator; a copy or a set into one; a refresh): what was
 * written is needed again. */
static inline bool amp__view_discards(const amp_array_view *v)
{
    return v->discard && (v->access == AMP_WRITE_ONLY || v->discard_at == v->s->writes);
}

/* The box a layout (offset bytes, elem, ext, stride) covers in s, and
 * whether it covers exactly that (lib/core/array_view.c). */
void amp__view_locate(const amp__storage *s, int64_t offset, size_t elem, amp_extent ext, const int64_t *stride,
                      amp__box *box, bool *exact);
/* Row-major strides with nothing between elements: the elements are one
 * contiguous run of bytes (lib/core/box.c). */
bool amp__layout_contiguous(int r, const int *ext, const int64_t *stride);


/* ------------------------------------------------------ lib/core/copy.c */

/* Read (into_view false) or write element i of v from or to the caller's
 * value (v->elem bytes), keeping coherence; i is inside v. Blocks. */
amp_status amp__copy_element(amp_array_view *v, amp_index i, void *value, bool into_view);

/* ------------------------------------------------------ lib/core/launch.c */

/* Internal argument kinds (lib/alg_*.c; never a user's): AMP__ARG_SPAN in
 * amp_arg.kind binds u.view (or u.array, with AMP__ARG_SPAN_ARRAY) to an
 * amp::array_view<T, 1> parameter as the rank-1 view of its span, from its
 * first element to its last, gaps between rows included; the kernel indexes
 * it through a shape of its own, and coherence still covers exactly the
 * view's box. AMP__ARG_SPAN_OVERWRITE: the kernel writes every element of
 * the view, so nothing is copied in for it. */
enum { AMP__ARG_SPAN = 0x100, AMP__ARG_SPAN_ARRAY = 0x200, AMP__ARG_SPAN_OVERWRITE = 0x400 };

/* amp_parallel_for_each_tiled(_async) with the point after the launch in
 * *done (may be NULL) and no future: async runs it as an asynchronous
 * launch (on the CPU accelerator: on q's own thread). */
amp_status amp__launch_tiled(amp_accelerator_view *q, amp_tiled_extent t, amp_kernel *k, const amp_arg *args,
                             size_t nargs, bool async, amp__point *done);
/* Whether a command of several launches on q, whose views and arrays are
 * args (any kinds; the others are skipped), fits in the graph the calling
 * thread records on q, checked before its first launch: a part a later
 * launch could not bind would otherwise leave the earlier ones recorded
 * and the recording broken. AMP_OK when this thread records nothing on q.
 * Recording thread only. */
amp_status amp__launch_args_fit(amp_accelerator_view *q, const amp_arg *args, size_t n);

/* ------------------------------------------------------ lib/core/future.c */

/* A future that is complete until amp__future_complete_at gives it a point;
 * t0/t1 (may be NULL) are timed events of q around the work, which the
 * future then owns. */
amp_status amp__future_new(amp_future **out);
void amp__future_complete_at(amp_future *f, amp__point p, void *t0, void *t1);

/* ---------------------------------------------------- lib/core/argument.c */

/* The kind's name with its kernel-side C++ type; checking a value argument
 * against its parameter (position i counted as args[] is); putting a checked
 * value into the pack at the parameter's offset. */
const char *amp__kind_name(int kind);
amp_status amp__arg_check_value(const char *kernel, int i, const amp__sig_param *p, const amp_arg *a);
void amp__arg_put_value(unsigned char *pack, const amp__sig_param *p, const amp_arg *a);

/* --------------------------------------------------- lib/core/signature.c */

int amp__kind_width(int kind);
/* true for a record the launch path may trust; else why names the field. */
bool amp__signature_valid(const amp__signature *g, char *why, size_t n);

/* ---------------------------------------- lib/core/program.c, lib/core/kernel.c */

typedef struct amp__module amp__module;

/* A kernel of one program. The user holds an encoded handle (lib/core/kernel.c),
 * never this pointer, so that a kernel of a destroyed program is reported
 * instead of used. */
typedef struct amp__kernel {
    amp__module *m;   /* the program's module (the program holds the reference) */
    amp_accelerator *acc;
    char *name;
    void *fn;
    amp__signature sig;
    size_t tile_static_bytes;
    char execution[192];
    int max_block;    /* amp__kernel_props.max_block, else AMP__SIMPLE_BLOCK_THREADS */
    amp_kernel *handle;
} amp__kernel;

/* Register k and give it a handle; free the handle (later lookups of it
 * fail). */
amp_status amp__kernel_handle_new(amp__kernel *k);
void amp__kernel_handle_free(amp__kernel *k);
/* The kernel behind a handle, or AMP_ERROR_INVALID_ARGUMENT naming why
 * (NULL, not a handle, or its program was destroyed). Call it between
 * amp__launch_enter and amp__launch_leave, and use the kernel only there. */
amp_status amp__kernel_resolve(amp_kernel *h, amp__kernel **out);

/* A thread's launches in flight (lib/core/kernel.c says how): seq is odd while
 * the thread is between amp__launch_enter and amp__launch_leave. Only its
 * thread writes seq; records are never freed (a thread that exits hands its
 * record on). */
typedef struct amp__launcher {
    _Atomic uint64_t seq;
    atomic_bool used;
    struct amp__launcher *next;
} amp__launcher;
extern _Thread_local amp__launcher *amp__me __attribute__((tls_model("initial-exec")));
extern atomic_bool amp__launch_fence; /* no membarrier: launches fence themselves */
/* The calling thread's record, made on its first launch; NULL without memory. */
amp__launcher *amp__launcher_register(void);
/* Inline for the launch path: a TLS load, a load and a store of the
 * thread's own count, a load of the fence flag; no locked instruction
 * where the kernel has membarrier. NULL: no memory for the record. */
static inline amp__launcher *amp__launch_enter(void)
{
    amp__launcher *me = amp__me;
    if (!me && !(me = amp__launcher_register())) return NULL;
    atomic_store_explicit(&me->seq, atomic_load_explicit(&me->seq, memory_order_relaxed) + 1, memory_order_relaxed);
    if (atomic_load_explicit(&amp__launch_fence, memory_order_relaxed)) atomic_thread_fence(memory_order_seq_cst);
    else atomic_signal_fence(memory_order_seq_cst);
    return me;
}
static inline void amp__launch_leave(amp__launcher *me)
{
    atomic_store_explicit(&me->seq, atomic_load_explicit(&me->seq, memory_order_relaxed) + 1, memory_order_release);
}
/* [no lock held] Wait until every launch that entered before the call
 * (and may have resolved a handle ended before it) has left. */
void amp__launches_quiesce(void);
/* ------------------------------------------------------- lib/core/graph.c
 * Launch graphs. While q records (q->recorder), the launches and device
 * copies its recording thread makes on it are recorded, not run: their
 * data get device memory on q's accelerator (pinned while the graph
 * exists) but are neither copied nor ordered, and no storage's coherence
 * state changes, since nothing ran. A replay does what one launch of the
 * whole does: makes the boxes the graph uses current on the device,
 * orders after their last uses, runs the graph, and leaves the boxes it
 * writes device-newer. */

/* The graph the calling thread records (NULL: none). */
amp_graph *amp__graph_here(void);
/* The same, as the queue reads it to tell a recording thread from another
 * (defined in lib/core/queue.c, which sits below the graphs; set by graph.c):
 * a thread-local, where a thread id could be a new thread's reusing an
 * exited recorder's. */
extern _Thread_local amp_graph *amp__tls_graph;
/* q records: AMP_OK when the calling thread is its recording thread (then
 * q->recorder is this thread's graph and stays so), else AMP_ERROR_BUSY
 * naming what (a launch, a copy) was refused. Reads another thread's
 * graph under q->rec_lock only. */
amp_status amp__graph_check_thread(amp_accelerator_view *q, const char *what);
/* q's recording, when its thread exited without ending it, is claimed and
 * thrown away (its storages and pins let go, q records no more); a live
 * thread's, or one another thread claimed to end, is left alone (AMP_OK:
 * the caller refuses it as a recording). A failure of the backend's ending
 * is returned, the recording stopped all the same. */
amp_status amp__graph_discard_orphan(amp_accelerator_view *q);
amp_accelerator_view *amp__graph_queue(const amp_graph *g);
/* Record that the command being recorded uses box b of s (through the
 * view or array handle, pinned for the graph's life): reads (unless
 * overwrite: it writes every element first) and writes as said. s gets
 * device memory on the graph's accelerator; *dptr is its base. Takes
 * and releases s's lock. */
amp_status amp__graph_bind(amp_graph *g, amp__storage *s, const amp__box *b, const void *handle, amp_array_view *view,
                           bool writes, bool overwrite, void **dptr);
/* Whether g can take the n parts box b[i] of s[i] (s[i] NULL: none; view[i]
 * for the message) on top of what it uses: AMP_OK, else the refusal
 * amp__graph_bind would give the first that does not fit. Reads g only
 * (recording thread). A command of several launches checks all its data
 * first (amp__launch_args_fit), so that a later launch's refusal does not
 * leave its earlier ones recorded. */
amp_status amp__graph_parts_fit(const amp_graph *g, amp__storage *const *s, const amp__box *const *b,
                                const bool *view, size_t n);
/* Where a command's bindings begin in g (amp__graph_command, before its
 * first amp__graph_bind): when the command then fails, amp__graph_undo
 * lets go of what it bound (its uses, storages and pins, and what it
 * changed in uses bound before), so that the graph holds only what its
 * recorded commands use. Recording thread only. */
typedef struct amp__graph_mark { size_t nuses, nstorages, npins; } amp__graph_mark;
amp__graph_mark amp__graph_command(amp_graph *g);
void amp__graph_undo(amp_graph *g, const amp__graph_mark *m);
/* Record a launch (its pack holds the device pointers bind gave) of k, a
 * driver copy (device to device on the graph's accelerator; bytes > 0 on
 * the first of a logical copy's, which counts it). A failure leaves the
 * recording broken: ending it then fails. */
amp_status amp__graph_record_launch(amp_graph *g, const amp__kernel *k, const amp__launch *l);
amp_status amp__graph_record_copy(amp_graph *g, const amp__copy *c, uint64_t bytes);
/* Keep something for g's life: release(arg) is called once g is freed
 * (destroyed after its last replay, or its recording failed), with no lock
 * held, after g's pins are dropped. Recording thread only. */
amp_status amp__graph_hold(amp_graph *g, void (*release)(void *arg), void *arg);
/* Mark g's recording broken with st (amp_last_error() its message): ending
 * it then fails with st. For a command of several launches that failed
 * after recording some of them (a replay would run half of it). Returns st. */
amp_status amp__graph_break(amp_graph *g, amp_status st);
/* Graphs that pin handle (a view, an array, an amp__kernel), for the
 * destroy calls that must then say AMP_ERROR_BUSY. */
int amp__graph_uses(const void *handle);
/* For amp_program_destroy: when no graph pins any of handles[0..n), close
 * them all at once, so that no graph can pin one until
 * amp__graph_pins_reopen (a recording that tries fails, saying the
 * program is being destroyed); returns 0. Else the graphs pinning
 * handles[*busy] (nothing closed), or -1 without memory to close them. */
int amp__graph_pins_close(const void *const *handles, size_t n, size_t *busy);
void amp__graph_pins_reopen(const void *const *handles, size_t n);

/* ----------------------------------------------- lib/core/compile_cache.c */

struct amp__module {
    int refs;               /* guarded by the compile cache lock */
    amp_accelerator *acc;
    void *mod;              /* the backend's module */
    amp__build_input in;    /* owned copies */
    uint64_t hash;          /* of in, for the bucket */
    amp__dep *deps;         /* headers keyed on, re-checked on a memory hit */
    size_t ndeps;
    amp__module *next;      /* bucket chain */
    bool in_cache;
};

/* A module for these inputs whose headers are unchanged, retained; NULL on a
 * miss. */
amp__module *amp__mcache_find(amp_accelerator *acc, const amp__build_input *in);
/* Take m (one reference, the caller's) into the cache unless an equal one
 * is there; returns the one to use, holding a reference for the caller. */
amp__module *amp__mcache_insert(amp__module *m);
/* A new module holding copies of in (refs 1, not in the cache). */
amp__module *amp__module_new(amp_accelerator *acc, const amp__build_input *in);
void amp__module_retain(amp__module *m);
void amp__module_release(amp__module *m);
/* The cache's counters (lib/core/compile_cache.c). */
void amp__mcache_count(uint64_t *hits, uint64_t *misses);

/* ---------------------------------------------------- lib/core/prebuilt.c */

/* The key of a built-in program in a pack (every input its code depends
 * on; options and prefix may be NULL). An all-zero key on no memory. */
void amp__prebuilt_key(const char *backend, const char *target, const char *prefix, const char *source,
                       size_t source_len, const char *options, uint8_t key[32]);
/* Whether packs are looked for (AMP_PREBUILT, the directory's checks). */
bool amp__prebuilt_enabled(void);
/* The checked code object for key in target's pack, malloc'ed; NULL when
 * there is none or it was refused (counted; amp_prebuilt_get_info says why). */
void *amp__prebuilt_load(const char *target, const uint8_t key[32], size_t *size);
/* The same for a backend's data under its own key (the CPU accelerator's
 * precompiled header: amp__compile_job's pack_load); not counted as a
 * program's hit or miss, a refusal is (rejected, with its reason). */
void *amp__prebuilt_load_data(const char *target, const uint8_t key[32], size_t *size);
/* A loaded entry (key's) that the back end would not load (why: its message). */
void amp__prebuilt_refused(const char *target, const uint8_t key[32], const char *why);
/* hipamp-prebuild's hook: every built-in program built while it is set
 * (compiled, or from the disk cache or a pack) is handed to fn. */
typedef void (*amp__prebuilt_capture_fn)(const char *target, const uint8_t key[32], const void *bin, size_t size);
void amp__prebuilt_set_capture(amp__prebuilt_capture_fn fn);
void amp__prebuilt_captured(const char *target, const uint8_t key[32], const void *bin, size_t size);
/* The same for a backend's data: the hook set, or NULL, is what
 * amp__compile_job's pack_capture is. */
void amp__prebuilt_set_data_capture(amp__prebuilt_capture_fn fn);
amp__prebuilt_capture_fn amp__prebuilt_data_capture(void);
/* The largest entry a pack holds (as the disk cache's entries). */
#define AMP__PACK_ENTRY_MAX (64u << 20)
/* A pack's entries, for writing and reading whole packs (hipamp-prebuild). */
typedef struct amp__prebuilt_item {
    uint8_t key[32];
    void *data;
    size_t size;
} amp__prebuilt_item;
/* Write target's pack of n items (sorted here) to path, atomically. */
amp_status amp__prebuilt_write(const char *path, const char *target, amp__prebuilt_item *items, size_t n);
/* Whether a directory entry's name is a pack's, "<target>.hpk" (not
 * hidden; a log "cpu-X.hpk.log" beside one is none). */
bool amp__prebuilt_is_pack_name(const char *name);
/* Every entry of target's pack in dir, checked as a reader checks it
 * (*n 0 and AMP_OK when there is none). */
amp_status amp__prebuilt_read(const char *dir, const char *target, amp__prebuilt_item **items, size_t *n);
/* amp_program_build of a built-in algorithm's program (lib/alg/programs.c):
 * looked up in the pack of the accelerator's target first. */
amp_status amp__program_build_builtin(amp_accelerator *acc, const char *source, amp_program **out);

/* --------------------------------------------------- lib/core/cache_dir.c */

/* The disk cache's directory to open: its path (absolute), whether the
 * environment's was cut short, whether the cache is shared; why it could
 * not be opened, said by amp__dc_open_dir. */
typedef struct amp__dc_where {
    const char *path;
    bool path_cut;
    bool shared;
    char why[512];
} amp__dc_where;
/* The cache directory's descriptor (O_RDONLY | O_DIRECTORY), or -1 with
 * w->why said; *made: made now, with mode mode. The way there is walked
 * as cache_dir.c says; in the /tmp fallback nothing above is made and the
 * last name may be no link at all. */
int amp__dc_open_dir(amp__dc_where *w, bool tmp_fallback, mode_t mode, bool *made);

/* -------------------------------------------------- lib/core/disk_cache.c */

/* Whether the disk cache is in use (amp_cache_get_info says why not). */
bool amp__dcache_usable(void);
/* Entry for key (32 bytes), authenticated; malloc'ed payload or NULL. */
void *amp__dcache_load(const uint8_t key[32], size_t *size);
/* The entry for key, loaded (counted as a hit), that the back end would not
 * load (why: its message): counted as rejected instead, and named in
 * amp_cache_get_info's last_uncacheable. */
void amp__dcache_refused(const uint8_t key[32], const char *why);
/* Store (atomically; failures are counted as uncacheable builds and named
 * in amp_cache_get_info's last_uncacheable, never reported as errors: the
 * cache is an optimisation). */
void amp__dcache_store(const uint8_t key[32], const void *data, size_t size);
/* A build that could not use the disk cache and why (counted, shown by
 * amp_cache_get_info). */
void amp__dcache_note_uncacheable(const char *why);

/* ---------------------------------- tracing hooks (lib/trace/trace.h is the sink)
 * The core describes what happened as plain records and owns the timing:
 * lib/core/queue.c brackets traced launches and copies with timed events of the
 * queue that runs them and hands them to the trace with the record. */

/* One logical copy traced as one span (a box, however many driver
 * copies): begin before its first driver copy (q NULL: it runs on this
 * thread, host-timed), end after its last, with the queue whose statistics
 * count it, the storage and box that moved, and the status (a failed copy
 * is not recorded; its events are released). end closes the span, so
 * ending it twice is harmless. A caller may change dir and why between the
 * two. (lib/core/queue.c) */
typedef struct amp__copy_span {
    amp_accelerator_view *q;
    void *t0;
    uint64_t start_ns, bytes;
    uint8_t dir, why;
    bool open;
} amp__copy_span;
#define AMP__TRACE_SPAN(name) AMP__TRACE_VAR(amp__copy_span name = {0})
void amp__queue_span_begin(amp__copy_span *sp, amp_accelerator_view *q, amp__copy_dir dir, uint64_t bytes,
                           amp__copy_why why);
void amp__queue_span_end(amp__copy_span *sp, amp_accelerator_view *counted, const amp__storage *s,
                         const amp__box *b, amp_status st);
/* r's queue (its number, numbered on first use, and kind) and accelerator
 * (lib/core/queue.c); q NULL: none. */
void amp__queue_describe(amp_accelerator_view *q, amp__trace_rec *r);
/* r's accelerator: its index in the registry and its info (lib/core/describe.c). */
void amp__accelerator_describe(const amp_accelerator *a, amp__trace_rec *r);
/* r's object: the storage and the box of it (NULL: all) that moved
 * (lib/core/describe.c). */
void amp__storage_describe(const amp__storage *s, const amp__box *b, amp__trace_rec *r);

#endif /* AMP_INTERNAL_H */
