/* hipamp_graph.h — launch graphs: record the launches and device copies
 * an accelerator view queues once, replay them many times
 * for a fraction of their launch cost (CUDA graphs and HIP graphs on GPUs,
 * a replay list of launches set up once on the CPU accelerator). Included
 * by hipamp.h; the conventions stated at its top hold here too.
 *
 * Recording. Between amp_graph_begin_recording(q) and
 * amp_graph_end_recording(q, &g), the thread that began records instead of
 * runs:
 *  - every launch on q (amp_parallel_for_each*, and the launches of the
 *    algorithms of hipamp_algorithms.h whose result stays on the device:
 *    amp_fill, amp_iota, amp_scan, amp_sort, amp_sort_by_key,
 *    amp_reduction_scan, amp_reduce_async, amp_transform_reduce_async,
 *    amp_reduction_apply_async; the temporary memory such a call takes
 *    belongs to the graph until it is destroyed, and the launches that
 *    clear it, a scan's tile states for one, are recorded too, so every
 *    replay starts clean);
 *  - every copy between arrays (or views of arrays) of q's accelerator that
 *    it makes (amp_copy_array*, amp_copy_view*): it runs on q at each
 *    replay.
 * What is recorded is fixed then: the kernel, the extent, every value
 * argument (a scalar that must change from one replay to the next lives in
 * a 1-element array that a recorded kernel writes), and which views
 * and arrays each command uses. Nothing runs and no data moves while
 * recording: the views' data get device memory on q's accelerator, nothing
 * more.
 *
 * Coherence is settled at each replay, as for one launch of the whole
 * graph: before the graph runs, the parts of its views that it reads are
 * made current on the device (copying in only what the device lacks, as a
 * launch does: nothing once the data lives there, which is the case from
 * the second replay of an iterative solver on; a host view the host
 * changed and refreshed is copied in again, that part only), and after it,
 * the parts it writes are newer on the device, so a later synchronize, or
 * any host access, copies back what the last replay wrote. No copy between
 * host and device is ever recorded into a graph.
 *
 * Refused while recording (the results they need do not exist until the
 * graph runs; nothing is recorded or run):
 *  - calls that need a result on the host, from the data a recording uses
 *    or from q (its arrays, its waits): amp_array_view_synchronize of such data, amp_array_copy_to
 *    /from_host of an array the recording uses or created on q, copies
 *    between such data and the host or another accelerator (any copy of
 *    an array of q, or of a view of one, that is not recorded: on every
 *    accelerator, the CPU one too), amp_accelerator_view_wait(q),
 *    amp_array_view_native_handle on q, and the algorithms that return
 *    their result on the host (amp_reduce, amp_transform_reduce,
 *    amp_reduction_apply: record their _async forms; amp_count_if,
 *    amp_copy_if), on q or, over the recording's data (amp_copy_if's out
 *    too), on any view from any thread: AMP_ERROR_BUSY;
 *  - commands on q from any other thread: AMP_ERROR_BUSY (a recording
 *    belongs to the thread that began it; begin and end must not race with
 *    another thread's commands on q). A thread that exits without ending
 *    its recording leaves it to no one: q still refuses everything else,
 *    but any thread may end it (amp_graph_end_recording), and
 *    amp_accelerator_view_destroy(q) discards it; the first of them to
 *    take it does (the others racing it get AMP_ERROR_BUSY while it is
 *    being ended, then AMP_ERROR_INVALID_ARGUMENT: q records nothing; a
 *    destroy that loses is AMP_ERROR_BUSY, so q never goes while a graph
 *    recorded on it exists);
 *  - beginning a second recording on q, or on any view from a thread that
 *    records already (recordings do not nest), or launching a graph on q:
 *    AMP_ERROR_BUSY.
 * Data the recording does not use comes and goes as ever, also where q
 * wrote it last, before the recording began: a view's synchronize, destroy
 * or copy then runs its copies on another view of q's accelerator (one of
 * the library's), after what q ran before the recording.
 * A command that fails while recording (a bad argument) returns its status
 * and is not recorded; the recording goes on. A built-in algorithm is
 * several launches: its arguments are checked before the first, but one
 * that fails after recording some of them (the device refused a launch, no
 * memory) leaves the recording broken: amp_graph_end_recording then fails
 * with that failure's message (a replay would run half an algorithm). The futures of launches and
 * copies made while recording are complete at once and untimed: the work
 * they name runs when the graph does (wait on the graph's launch).
 *
 * C++ AMP's host features on a view that records (none is recorded; the
 * recorded commands are not queued until a replay):
 *  - the queuing mode (amp_accelerator_view_create_with_mode): views of
 *    either mode record and replay alike (hipamp queues every command at
 *    once in both);
 *  - amp_accelerator_view_flush(q): AMP_OK, handing over what was queued
 *    on q before the recording;
 *  - amp_accelerator_view_create_marker(q): AMP_OK; its future covers the
 *    work queued on q before the recording (on a view of a native queue,
 *    the caller's own included), and may be waited for while q records
 *    (a replay's future, amp_graph_launch_async, covers the recorded
 *    commands);
 *  - amp_future_then: a continuation of a recorded command's future (complete
 *    at once) runs at once; one that queues work on q while q records is
 *    another thread's command: AMP_ERROR_BUSY.
 *
 * Handles. An amp_graph is checked as every handle is (hipamp.h): a
 * destroyed graph passed to any amp_graph_ call is
 * AMP_ERROR_INVALID_ARGUMENT naming it destroyed (a stale handle), never
 * a use of freed memory.
 *
 * Lifetimes. The views, arrays, programs (through their kernels) and user
 * reductions (amp_reduction) a graph uses, and the view it was recorded
 * on, stay bound to it:
 * destroying one of them while the graph exists is AMP_ERROR_BUSY (destroy
 * the graph first), and their data stay on q's accelerator (launching a
 * view the graph uses on another accelerator is AMP_ERROR_BUSY; so is a
 * launch of an array with a view the graph uses, on the array's own
 * accelerator when that is not q's: its copy_to_host and native_handle
 * still bring the data back).
 */
#ifndef HIPAMP_GRAPH_H
#define HIPAMP_GRAPH_H

#include "hipamp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A recorded sequence of commands of one accelerator view. */
typedef struct amp_graph amp_graph;

/* Start recording q's commands made by the calling thread (see above).
 * q must be a view of the caller's own (amp_accelerator_view_create or
 * _create_from_native): the library itself queues work on default views.
 * Never blocks. AMP_ERROR_INVALID_ARGUMENT: q NULL or a default view.
 * AMP_ERROR_BUSY: q records already, or this thread records on another
 * view. AMP_ERROR_UNSUPPORTED: the accelerator's driver has no graphs (a
 * CUDA driver older than 11.4, a HIP runtime without stream capture). */
AMP_API amp_status amp_graph_begin_recording(amp_accelerator_view *q);
/* Stop recording on q and return what was recorded as a graph the caller
 * owns (destroy it with amp_graph_destroy); a recording of nothing gives a
 * graph whose launch does nothing. Called from the thread that began, or
 * from any thread once that one has exited without ending it. Blocks while
 * the driver builds the graph. Recording stops however this returns, the
 * BUSY case excepted. AMP_ERROR_INVALID_ARGUMENT: q NULL or not recording;
 * out NULL (the recording is discarded). AMP_ERROR_BUSY: q records on
 * another thread that is still running, or another thread (ending it, or
 * destroying q) took q's orphaned recording and is ending it (this call
 * leaves it to that thread). AMP_ERROR_DEVICE from the
 * driver (a recorded command it refused). */
AMP_API amp_status amp_graph_end_recording(amp_accelerator_view *q, amp_graph **out);
/* Replay g on q (NULL: the view it was recorded on), after the work
 * queued on q before. As amp_parallel_for_each: returns once queued
 * (as-if synchronous: host access to its data waits for it); it may block
 * to copy its views' data to the device first (see Coherence above); on
 * the CPU accelerator it runs to completion in the calling thread and a
 * kernel's failure is this call's status (the commands after it in the
 * graph do not run).
 * Threads may replay one graph at once (with either call): its replays
 * run one at a time, each after the one queued before, in the order the
 * calls take their turns. A call blocks while another thread's replay of
 * g is being queued, or, synchronous on the CPU accelerator, runs; it
 * never waits for a replay only queued (q runs them in order).
 * AMP_ERROR_INVALID_ARGUMENT: g NULL or still being recorded, or q is not
 * the view g was recorded on (naming both). AMP_ERROR_BUSY: q records a
 * graph now. AMP_ERROR_OUT_OF_MEMORY, AMP_ERROR_DEVICE as for a launch;
 * AMP_ERROR_DEVICE also, at once, in a child process forked while another
 * thread of the parent was replaying g (that replay stays the parent's). */
AMP_API amp_status amp_graph_launch(amp_accelerator_view *q, amp_graph *g);
/* As amp_graph_launch, and return a future the caller owns that completes
 * when the replay has (its elapsed time covers the whole replay). On the
 * CPU accelerator the replay runs on q's own thread, as an asynchronous
 * launch does, and its failure is the future's status. Blocks as
 * amp_graph_launch does while another thread's replay of g is queued or
 * runs in its thread, and for room in q's queue. */
AMP_API amp_status amp_graph_launch_async(amp_accelerator_view *q, amp_graph *g, amp_future **out);

typedef struct amp_graph_info {
    uint64_t launches;        /* kernel launches recorded */
    uint64_t copies;          /* copies recorded */
    uint64_t data;            /* distinct views' and arrays' data it uses */
    /* Launches handed to the view's queue (its data made current first),
     * whatever came of them: one that failed part-way, or that never ran
     * because an earlier command on the view failed, counts; a launch
     * call refused before (a bad argument, the view recording, its data
     * not made current) does not. */
    uint64_t replays;
    char implementation[64];  /* "cuda graph", "hip graph", "cpu replay list", "empty" */
} amp_graph_info;
/* What g holds. Never blocks. */
AMP_API amp_status amp_graph_get_info(amp_graph *g, amp_graph_info *out);
/* Wait for g's replays queued so far (a replay's failure is not reported
 * here: it was its launch's or its future's), then free it, unbinding what
 * it used. Blocks for those replays. NULL: AMP_OK. Not while another
 * thread launches g. AMP_ERROR_INVALID_ARGUMENT: g destroyed already.
 * Where the wait cannot be made (AMP_ERROR_OUT_OF_MEMORY for its wait
 * point, AMP_ERROR_DEVICE from the driver), that status, and g is not
 * destroyed (its last replay may still run; the backend's graph must not
 * be freed under it): g stays valid and may be destroyed again. The same,
 * AMP_ERROR_DEVICE at once, in a child process forked while another
 * thread of the parent was replaying g; a graph whose data another thread
 * of the parent was using at fork is destroyed (its data stay the
 * parent's: see amp_future_wait). */
AMP_API amp_status amp_graph_destroy(amp_graph *g);

#ifdef __cplusplus
}
#endif
#endif /* HIPAMP_GRAPH_H */
