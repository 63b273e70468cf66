/* queue.c — accelerator views as queues: the one place the core calls the
 * backend's queue, copy and launch operations; it numbers every command,
 * counts it in the view's statistics, and answers waits on a point ("all
 * commands up to n") by recording a driver event only when someone waits.
 *
 * Why numbers instead of an event per launch: a driver event record per
 * launch was most of the library's launch overhead, and most launches are
 * never waited on one by one. A command gets its number after it is queued,
 * so an event recorded after reading `submitted` covers every command
 * numbered up to what was read: a wait may also wait for later work on the
 * same queue, never for less. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

_Thread_local amp_graph *amp__tls_graph;

struct amp__mark {
    atomic_int refs;  /* the queue's (while it is q->mark) + each waiter's */
    uint64_t seq;     /* every command numbered <= seq precedes the event */
    void *event;
};

static amp_status amp__mark_get(amp_accelerator_view *q, uint64_t seq, amp__mark **out);

static void amp__mark_release(amp_accelerator_view *q, amp__mark *m)
{
    if (!m || atomic_fetch_sub(&m->refs, 1) != 1) return;
    q->be->event_release(q->dev, m->event);
    free(m);
}

/* A queue of a's: a new backend queue, or (wrap) the caller's native queue,
 * wrapped and never destroyed by us. */
static amp_status amp__queue_make(amp_accelerator *a, bool is_default, bool wrap, void *native,
                                  amp_accelerator_view **out)
{
    amp_status st = AMP_OK;
    amp_accelerator_view *q = NULL;
    *out = NULL;
    if (!a->e.info.is_available)
        return amp__fail(AMP_ERROR_NO_ACCELERATOR, "accelerator %s is unavailable: %s", a->e.info.device_path,
                         a->e.info.unavailable_reason);
    if (!(q = amp__handle_new_unpublished(AMP__HANDLE_QUEUE, sizeof *q)))
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "accelerator view: out of host memory");
    q->acc = a;
    q->be = a->e.be;
    q->dev = a->e.dev;
    q->is_default = is_default;
    q->borrowed = wrap;
    atomic_init(&q->refs, 1);
    amp__lock_init(&q->rec_lock);
    amp__lock_init(&q->mark_lock);
    st = wrap ? q->be->queue_wrap(q->dev, native, &q->queue) : q->be->queue_create(q->dev, &q->queue);
    if (st != AMP_OK) goto fail;
    amp__handle_publish(q, AMP__HANDLE_QUEUE);
    *out = q;
    return AMP_OK;
fail:
    amp__handle_free(q, AMP__HANDLE_QUEUE);
    return st;
}

amp_status amp__queue_new(amp_accelerator *a, bool is_default, amp_accelerator_view **out)
{
    return amp__queue_make(a, is_default, false, NULL, out);
}

amp_status amp__queue_wrap(amp_accelerator *a, void *native, amp_accelerator_view **out)
{
    return amp__queue_make(a, false, true, native, out);
}

void amp__queue_retain(amp_accelerator_view *q)
{
    if (q) atomic_fetch_add_explicit(&q->refs, 1, memory_order_relaxed);
}

void amp__queue_release(amp_accelerator_view *q)
{
    if (!q || atomic_fetch_sub(&q->refs, 1) != 1) return;
    amp__mark_release(q, q->mark);
    if (!q->borrowed) q->be->queue_destroy(q->dev, q->queue);
    else if (q->be->queue_unwrap) q->be->queue_unwrap(q->dev, q->queue);
    amp__handle_free(q, AMP__HANDLE_QUEUE);
}

/* A copy counts in driver_copies only after its number, and driver_copies is
 * read first: a copy being queued meanwhile may count as a launch for a
 * moment, never the other way round (no wrap below zero). */
uint64_t amp__queue_launches(amp_accelerator_view *q)
{
    uint64_t copies = atomic_load_explicit(&q->driver_copies, memory_order_acquire);
    return atomic_load_explicit(&q->submitted, memory_order_acquire) - copies;
}

/* The number the command just queued on q gets. */
static inline uint64_t amp__queue_number(amp_accelerator_view *q)
{
    return atomic_fetch_add_explicit(&q->submitted, 1, memory_order_acq_rel) + 1;
}

/* ------------------------------------------------------ timing brackets
 * Timed work (an asynchronous launch, a replay, an algorithm's launches, a
 * copy: what a future times) is bracketed by two amp__queue_timed_event
 * calls of one thread on one queue (internal.h; launch.c, graph.c, copy.c,
 * alg/data.c): t0 before it, t1 after it, and the future's status is t1's
 * (future.c). A t1 recorded after the call that queued the work follows
 * whatever the queue holds by then: on the CPU accelerator another
 * thread's later launch, whose status it took, or the emptied queue,
 * whose pending fault (or AMP_OK, once another thread's wait reported it)
 * it took, though a launch's future answers for that launch alone
 * (hipamp.h). So the first call opens a bracket, kept per thread: each
 * command the thread then queues on that queue is queued with a closing
 * event bound to it by the backend (backend.h, launch's end), and the
 * second call hands out the last one instead of recording one. Where the
 * thread queued no such command since (a copy: the backends bind none; a
 * backend that could not make one), it records one then, as before.
 *
 * Invariant: a bracket is open from its t0 until its t1 is handed out or
 * t0 is released (amp__queue_event_release: work that failed, or gave up
 * its timing); every caller does one or the other, so brackets never
 * overlap on a thread. t1, until handed out, is the bracket's: released
 * through be and dev, which outlive the queue. */
typedef struct amp__bracket {
    amp_accelerator_view *q; /* the queue t0 is of; NULL: no bracket open */
    void *t0;                /* the opening event (the caller's) */
    void *t1;                /* bound to the thread's last command on q since t0; NULL: none */
    const amp__backend *be;
    void *dev;
} amp__bracket;

/* initial-exec, as kernel.c's amp__me: every launch reads it, and a
 * dynamic TLS access would be a call on that path. */
static _Thread_local amp__bracket amp__tls_bracket __attribute__((tls_model("initial-exec")));

static void amp__bracket_close(void)
{
    amp__bracket *b = &amp__tls_bracket;
    if (b->t1) b->be->event_release(b->dev, b->t1);
    *b = (amp__bracket){NULL, NULL, NULL, NULL, NULL};
}

/* Whether a command this thread queues on q now closes an open bracket's
 * work (and wants a closing event of its own). */
static inline bool amp__bracket_open_on(const amp_accelerator_view *q)
{
    return __builtin_expect(q && amp__tls_bracket.q == q, 0);
}

/* The closing event of the command just queued (NULL: none; the bracket's
 * close records one then): it replaces the one before, which it follows. */
static void amp__bracket_bind(void *t1)
{
    amp__bracket *b = &amp__tls_bracket;
    if (b->t1) b->be->event_release(b->dev, b->t1);
    b->t1 = t1;
}

static amp_status amp__queue_launch_raw(amp_accelerator_view *q, void *fn, const amp__launch *l, amp__point *done)
{
    bool timed = amp__bracket_open_on(q);
    void *end = NULL;
    amp_status st = q->be->launch(q->dev, q->queue, fn, l, timed ? &end : NULL);
    if (st != AMP_OK) return st;
    done->q = q;
    done->seq = amp__queue_number(q);
    if (timed) amp__bracket_bind(end);
    return AMP_OK;
}

/* A recording queue (lib/core/graph.c) takes nothing but its recording thread's
 * launches and copies: every other operation is refused. */
amp_status amp__queue_refuse_recording(amp_accelerator_view *q, const char *what)
{
    if (!q || !atomic_load_explicit(&q->recorder, memory_order_acquire)) return AMP_OK;
    return amp__fail(AMP_ERROR_BUSY,
                     "%s: the accelerator view (%s) is recording a graph; it runs nothing else and cannot be waited "
                     "for until the recording ends (amp_graph_end_recording)",
                     what, q->acc->e.info.device_path);
}

/* The work a timed event on a recording queue would time is being
 * recorded, not run: untimed (kept off the launch path's inlined code). */
static __attribute__((noinline)) amp_status amp__queue_untimed(amp_accelerator_view *q, void **ev)
{
    *ev = NULL;
    amp_graph *g = atomic_load_explicit(&q->recorder, memory_order_acquire);
    if (!g || amp__tls_graph == g) return AMP_OK;
    return amp__fail(AMP_ERROR_BUSY,
                     "timing a command: the accelerator view (%s) is recording a graph that another thread began "
                     "(end it on that thread, or, where that thread exited, from any thread or by destroying the view)",
                     q->acc->e.info.device_path);
}

/* A timed event recorded now (the traces' own timing: no bracket). */
static amp_status amp__queue_timed_now(amp_accelerator_view *q, void **ev)
{
    if (__builtin_expect(atomic_load_explicit(&q->recorder, memory_order_relaxed) != NULL, 0))
        return amp__queue_untimed(q, ev);
    return q->be->event_record_timed(q->dev, q->queue, ev);
}

/* Opens this thread's bracket on q (t0), or closes it (t1): see timing
 * brackets above. */
amp_status amp__queue_timed_event(amp_accelerator_view *q, void **ev)
{
    amp__bracket *b = &amp__tls_bracket;
    if (b->q == q) {
        void *t1 = b->t1;
        b->t1 = NULL;
        amp__bracket_close();
        if (t1) {
            *ev = t1;
            return AMP_OK;
        }
        return amp__queue_timed_now(q, ev);
    }
    if (b->q) amp__bracket_close(); /* none is left open (the invariant): defensive */
    amp_status st = amp__queue_timed_now(q, ev);
    if (st == AMP_OK && *ev) *b = (amp__bracket){q, *ev, NULL, q->be, q->dev};
    return st;
}

void amp__queue_event_release(amp_accelerator_view *q, void *ev)
{
    if (!ev) return;
    /* The work t0 opened gave up its timing: its bracket closes with it. */
    if (amp__tls_bracket.t0 == ev) amp__bracket_close();
    q->be->event_release(q->dev, ev);
}

amp_status amp__queue_close_timing(amp_accelerator_view *q, void **timing, const char *call, const char *work,
                                   const char *name)
{
    amp_status st = amp__queue_timed_event(q, &timing[1]);
    if (st == AMP_OK) return AMP_OK;
    st = amp__fail(st, "%s: the %s%s%s%s was queued and runs (what it writes is kept), but its closing timed event "
                       "could not be made: %s", call, work, name ? " of '" : "", name ? name : "", name ? "'" : "",
                   amp_last_error());
    amp__queue_event_release(q, timing[0]);
    timing[0] = NULL;
    return st;
}

/* ---------------------------------------------------------------- tracing
 * The queue owns the timing of what it runs: a traced launch or copy is
 * bracketed here by timed events of its own queue, which go to the trace
 * with the record (lib/trace/trace.h) and are released there. */

void amp__queue_describe(amp_accelerator_view *q, amp__trace_rec *r)
{
    if (!q) return;
    uint32_t id = atomic_load_explicit(&q->trace_id, memory_order_acquire);
    if (!id) {
        /* Numbered on first use, under the queue's own lock, so that no
         * number is given twice or skipped. */
        static _Atomic uint32_t numbered;
        amp__lock_acquire_taking_over(&q->mark_lock); /* see amp__mark_get */
        if (!(id = atomic_load_explicit(&q->trace_id, memory_order_relaxed))) {
            id = atomic_fetch_add(&numbered, 1) + 1;
            atomic_store_explicit(&q->trace_id, id, memory_order_release);
        }
        amp__lock_release(&q->mark_lock);
    }
    r->qid = id;
    r->queue_kind = q->is_default ? AMP__QUEUE_DEFAULT : q->borrowed ? AMP__QUEUE_NATIVE : AMP__QUEUE_CREATED;
    amp__accelerator_describe(q->acc, r);
}

/* Timed events of q around one command, handed over in r->timing: t0 is
 * recorded before it (begin), t1 after it when it was queued (end); either
 * failing leaves the command host-timed. */
static void amp__timing_begin(amp_accelerator_view *q, amp__trace_rec *r)
{
    r->timing = (amp__trace_timing){q->be, q->dev, NULL, NULL};
    if (amp__trace_recording() && amp__queue_timed_now(q, &r->timing.t0) != AMP_OK) r->timing.t0 = NULL;
}

/* t1 recorded after the command: a span, unlike a future, reports no
 * status, and another thread's command queued in between only lengthens
 * it (a closing event bound to the command goes to its bracket, above). */
static void amp__timing_end(amp_accelerator_view *q, amp__trace_rec *r, amp_status st)
{
    if (st == AMP_OK && r->timing.t0 && amp__queue_timed_now(q, &r->timing.t1) != AMP_OK) r->timing.t1 = NULL;
    if (st != AMP_OK || !r->timing.t1) {
        amp__queue_event_release(q, r->timing.t0);
        r->timing.t0 = NULL;
    }
}

#if HIPAMP_TRACE_HOOKS /* compiled out with the hooks */
static amp_status amp__queue_launch_traced(amp_accelerator_view *q, void *fn, const amp__launch *l, amp__point *done)
{
    amp__trace_rec r = AMP__TRACE_REC(AMP__REC_LAUNCH);
    r.name = l->kernel_name;
    r.rank = (uint8_t)l->extent.rank;
    r.tiled = l->tiled;
    for (int d = 0; d < l->extent.rank && d < AMP_MAX_RANK; ++d) r.ext[d] = l->extent.v[d];
    for (int d = 0; l->tiled && d < l->extent.rank && d < 3; ++d) r.tile[d] = l->sig->tile[d];
    r.t_ns = amp__trace_begin(&r);
    amp__timing_begin(q, &r);
    amp_status st = amp__queue_launch_raw(q, fn, l, done);
    amp__timing_end(q, &r, st);
    if (st == AMP_OK) amp__queue_describe(q, &r);
    amp__trace_end(&r, st == AMP_OK);
    return st;
}
#endif


amp_status amp__queue_launch(amp_accelerator_view *q, void *fn, const amp__launch *l, amp__point *done)
{
    AMP__TRACE(return amp__queue_launch_traced(q, fn, l, done));
    return amp__queue_launch_raw(q, fn, l, done);
}

void amp__queue_span_begin(amp__copy_span *sp, amp_accelerator_view *q, amp__copy_dir dir, uint64_t bytes,
                           amp__copy_why why)
{
    amp__trace_rec r = AMP__TRACE_REC(AMP__REC_COPY);
    r.sub = (uint8_t)dir;
    r.why = (uint8_t)why;
    r.bytes = bytes;
    *sp = (amp__copy_span){.q = q, .bytes = bytes, .dir = (uint8_t)dir, .why = (uint8_t)why, .open = true};
    sp->start_ns = amp__trace_begin(&r);
    if (q) {
        amp__timing_begin(q, &r);
        sp->t0 = r.timing.t0;
    }
}

void amp__queue_span_end(amp__copy_span *sp, amp_accelerator_view *counted, const amp__storage *s,
                         const amp__box *b, amp_status st)
{
    if (!sp->open) return;
    sp->open = false;
    amp__trace_rec r = AMP__TRACE_REC(AMP__REC_COPY);
    r.sub = sp->dir;
    r.why = sp->why;
    r.bytes = sp->bytes;
    r.t_ns = sp->start_ns;
    if (sp->q) {
        r.timing = (amp__trace_timing){sp->q->be, sp->q->dev, sp->t0, NULL};
        amp__timing_end(sp->q, &r, st);
    }
    if (st == AMP_OK) {
        /* On the queue that ran it when timed there, else where it counts. */
        amp__queue_describe(r.timing.t0 ? sp->q : counted, &r);
        if (s) amp__storage_describe(s, b, &r);
    }
    amp__trace_end(&r, st == AMP_OK);
}

/* ---------------------------------------------------------------- graphs
 * While q records (lib/core/graph.c), the backend's queue is in its recording
 * mode: only the recording thread's launches and copies reach it, through
 * record_launch and record_copy; every other queue operation the core
 * would make on q is refused here (a CUDA or HIP stream that captures
 * would record it, or fail the capture). */

amp_status amp__queue_record_cover(amp_accelerator_view *q)
{
    /* A wait point recorded now, before q records, follows every point
     * given out so far and whatever else q's queue holds (on a view of a
     * native queue, the caller's own work; behind a native handle, a
     * vendor library's): nothing queued after it runs until the recording
     * ends, so it answers every wait on q meanwhile (amp__mark_get), and
     * no waiter records an event on q while it records. Recorded even
     * when hipamp queued nothing on q: a wait for "whatever is queued"
     * needs it too. */
    amp__mark *m = NULL;
    amp_status st = amp__mark_get(q, AMP__SEQ_TAIL, &m);
    if (st == AMP_OK) amp__mark_release(q, m);
    return st;
}

amp_status amp__queue_record_begin(amp_accelerator_view *q) { return q->be->graph_begin(q->dev, q->queue); }

amp_status amp__queue_record_launch(amp_accelerator_view *q, void *fn, const amp__launch *l)
{
    return q->be->launch(q->dev, q->queue, fn, l, NULL);
}

amp_status amp__queue_record_copy(amp_accelerator_view *q, const amp__copy *c)
{
    return q->be->copy(q->dev, q->queue, c);
}

amp_status amp__queue_record_end(amp_accelerator_view *q, bool keep, void **exec)
{
    return q->be->graph_end(q->dev, q->queue, keep, exec);
}

static amp_status amp__queue_replay_raw(amp_accelerator_view *q, const amp__replay *r, bool async, uint64_t *node_ns,
                                        amp__point *done)
{
    bool timed = amp__bracket_open_on(q);
    void *end = NULL;
    amp_status st = q->be->graph_launch(q->dev, q->queue, r->exec, async, node_ns, timed ? &end : NULL);
    if (st != AMP_OK) return st;
    if (timed) amp__bracket_bind(end);
    /* One number for each command it holds, so that launches and copies
     * count in q's statistics as if queued one by one. */
    uint64_t n = r->launches + r->driver_copies;
    done->q = q;
    done->seq = atomic_fetch_add_explicit(&q->submitted, n, memory_order_acq_rel) + n;
    if (r->driver_copies) {
        /* After the numbers: see amp__queue_launches. */
        atomic_fetch_add_explicit(&q->driver_copies, r->driver_copies, memory_order_release);
        atomic_fetch_add_explicit(&q->bytes_d2d, r->copy_bytes, memory_order_relaxed);
        atomic_fetch_add_explicit(&q->copies_d2d, r->copies, memory_order_relaxed);
    }
    return AMP_OK;
}

#if HIPAMP_TRACE_HOOKS /* compiled out with the hooks */
/* The commands a backend timed inside a replay (node_ns), as spans on the
 * replay's queue. */
static void amp__replay_nodes(amp_accelerator_view *q, const amp__replay *rp, const uint64_t *node_ns)
{
    for (uint64_t i = 0; i < rp->launches + rp->driver_copies; ++i) {
        const amp__replay_node *n = &rp->nodes[i];
        if (!node_ns[2 * i]) break; /* not run: an earlier one failed */
        amp__trace_rec c = AMP__TRACE_REC(n->name ? AMP__REC_LAUNCH : AMP__REC_COPY);
        if (n->name) {
            c.name = n->name;
            c.rank = (uint8_t)n->extent.rank;
            c.tiled = n->tiled;
            for (int d = 0; d < n->extent.rank && d < AMP_MAX_RANK; ++d) c.ext[d] = n->extent.v[d];
            for (int d = 0; n->tiled && d < 3; ++d) c.tile[d] = n->tile[d];
        } else {
            c.sub = AMP__D2D;
            c.why = AMP__WHY_COPY;
            c.bytes = n->bytes;
        }
        c.t_ns = node_ns[2 * i];
        amp__queue_describe(q, &c);
        amp__trace_span(&c, node_ns[2 * i + 1]);
    }
}

/* A replay is one span on its queue, device-timed, with the commands
 * inside it as spans of their own where the backend times them (the CPU
 * accelerator's synchronous replays, then host-timed as a whole too; GPU
 * drivers run a graph as a whole). */
static amp_status amp__queue_replay_traced(amp_accelerator_view *q, const amp__replay *rp, bool async,
                                           amp__point *done)
{
    amp__trace_rec r = AMP__TRACE_REC(AMP__REC_GRAPH);
    r.name = rp->label;
    r.launches = rp->launches;
    r.copies = rp->copies;
    r.bytes = rp->copy_bytes;
    uint64_t n = rp->launches + rp->driver_copies;
    uint64_t *node_ns = !async && n && amp__trace_recording() ? calloc(2 * n, sizeof *node_ns) : NULL;
    r.t_ns = amp__trace_begin(&r);
    /* Where the backend times the commands inside on the host clock, the
     * replay is placed on it too, so that they lie within its span (a
     * device-timed span is placed after its queue's previous one). */
    if (!node_ns) amp__timing_begin(q, &r);
    amp_status st = amp__queue_replay_raw(q, rp, async, node_ns, done);
    if (!node_ns) amp__timing_end(q, &r, st);
    if (st == AMP_OK) amp__queue_describe(q, &r);
    amp__trace_end(&r, st == AMP_OK);
    if (node_ns) amp__replay_nodes(q, rp, node_ns);
    free(node_ns);
    return st;
}
#endif

amp_status amp__queue_replay(amp_accelerator_view *q, const amp__replay *r, bool async, amp__point *done)
{
    *done = (amp__point){NULL, 0};
    if (!r->exec) return AMP_OK;
    AMP__TRACE(return amp__queue_replay_traced(q, r, async, done));
    return amp__queue_replay_raw(q, r, async, NULL, done);
}

void amp__queue_graph_free(amp_accelerator_view *q, void *exec)
{
    if (exec) q->be->graph_destroy(q->dev, exec);
}

amp_status amp__queue_copy_peer(amp_accelerator_view *q, amp_accelerator *dst_acc, void *dst, const void *src,
                                size_t bytes, amp__point *done)
{
    amp_status st = amp__queue_refuse_recording(q, "a copy between two accelerators");
    if (st != AMP_OK) return st;
    if (!q->be->copy_peer || dst_acc->e.be != q->be)
        return amp__fail(AMP_ERROR_UNSUPPORTED, "no peer copy from %s to %s", q->acc->e.info.device_path,
                         dst_acc->e.info.device_path);
    st = q->be->copy_peer(q->dev, q->queue, dst_acc->e.dev, dst, src, bytes);
    if (st != AMP_OK) return st;
    /* Copies bind no closing event: a bracket's closes after them when it
     * closes (see timing brackets). */
    if (amp__bracket_open_on(q)) amp__bracket_bind(NULL);
    done->q = q;
    done->seq = amp__queue_number(q);
    /* After the number: see amp__queue_launches. */
    atomic_fetch_add_explicit(&q->driver_copies, 1, memory_order_release);
    return AMP_OK;
}

amp_status amp__queue_copy(amp_accelerator_view *q, const amp__copy *c, amp__point *done)
{
    amp_status st = amp__queue_refuse_recording(q, "a copy");
    if (st != AMP_OK) return st;
    st = q->be->copy(q->dev, q->queue, c);
    if (st != AMP_OK) return st;
    if (amp__bracket_open_on(q)) amp__bracket_bind(NULL); /* as amp__queue_copy_peer's */
    done->q = q;
    done->seq = amp__queue_number(q);
    /* After the number: see amp__queue_launches. */
    atomic_fetch_add_explicit(&q->driver_copies, 1, memory_order_release);
    return AMP_OK;
}

void amp__queue_count_copy(amp_accelerator_view *q, amp__copy_dir dir, uint64_t bytes)
{
    if (dir == AMP__H2D) {
        atomic_fetch_add_explicit(&q->bytes_to_device, bytes, memory_order_relaxed);
        atomic_fetch_add_explicit(&q->copies_to_device, 1, memory_order_relaxed);
    } else if (dir == AMP__D2H) {
        atomic_fetch_add_explicit(&q->bytes_to_host, bytes, memory_order_relaxed);
        atomic_fetch_add_explicit(&q->copies_to_host, 1, memory_order_relaxed);
    } else if (dir == AMP__D2D) {
        atomic_fetch_add_explicit(&q->bytes_d2d, bytes, memory_order_relaxed);
        atomic_fetch_add_explicit(&q->copies_d2d, 1, memory_order_relaxed);
    } else {
        atomic_fetch_add_explicit(&q->bytes_h2h, bytes, memory_order_relaxed);
        atomic_fetch_add_explicit(&q->copies_h2h, 1, memory_order_relaxed);
    }
}

#if HIPAMP_TRACE_HOOKS /* compiled out with the hooks */
/* A host wait that blocks on q, traced (seq AMP__SEQ_TAIL: a whole drain). */
static uint64_t amp__wait_begin(amp_accelerator_view *q)
{
    amp__trace_rec r = AMP__TRACE_REC(AMP__REC_WAIT);
    amp__queue_describe(q, &r);
    return amp__trace_begin(&r);
}

static void amp__wait_end(uint64_t t0, amp_accelerator_view *q, uint64_t seq, amp_status st)
{
    amp__trace_rec r = AMP__TRACE_REC(AMP__REC_WAIT);
    amp__queue_describe(q, &r);
    r.t_ns = t0;
    r.seq = seq;
    r.st = st;
    amp__trace_end(&r, true);
}
#endif


_Static_assert(AMP__SEQ_TAIL == UINT64_MAX, "lib/trace/trace.h: a wait until UINT64_MAX is a whole drain");

static void amp__note_completed(amp_accelerator_view *q, uint64_t seq)
{
    uint64_t cur = atomic_load_explicit(&q->completed, memory_order_acquire);
    while (cur < seq &&
           !atomic_compare_exchange_weak_explicit(&q->completed, &cur, seq, memory_order_acq_rel, memory_order_acquire)) {
    }
}

amp_status amp__queue_drain_for(amp_accelerator_view *q, const uint32_t *ms)
{
    /* q is never NULL here (the NULL case of the refusal is for callers
     * that may have no queue). */
    amp_status st = atomic_load_explicit(&q->recorder, memory_order_acquire)
                        ? amp__queue_refuse_recording(q, "waiting for the view")
                        : AMP_OK;
    if (st != AMP_OK) return st;
    uint64_t seen = atomic_load_explicit(&q->submitted, memory_order_acquire);
    AMP__TRACE_CLOCK(t_wait, amp__wait_begin(q));
    st = ms ? q->be->queue_wait_for(q->dev, q->queue, *ms) : q->be->queue_wait(q->dev, q->queue);
    AMP__TRACE(amp__wait_end(t_wait, q, AMP__SEQ_TAIL, st));
    if (st == AMP_ERROR_TIMEOUT) return st;
    /* Passed, also where a failure was reported (once: the CPU
     * accelerator's queue cleared it and runs again): the points up to
     * seen wait no more, and q's cached mark, whose event keeps that
     * failure for good, answers no later wait (a host access of data an
     * earlier launch wrote reported it again, until a second wait). */
    amp__note_completed(q, seen);
    if (st != AMP_OK) {
        amp__mark *old = NULL;
        amp__lock_acquire_taking_over(&q->mark_lock); /* see amp__mark_get */
        if (q->mark && q->mark->seq <= seen && !atomic_load_explicit(&q->recorder, memory_order_acquire)) {
            old = q->mark;
            __atomic_store_n(&q->mark, NULL, __ATOMIC_RELEASE);
        }
        amp__lock_release(&q->mark_lock);
        amp__mark_release(q, old);
    }
    return st;
}

amp_status amp__queue_drain(amp_accelerator_view *q) { return amp__queue_drain_for(q, NULL); }

/* A mark covering command seq of q, retained for the caller: the newest one
 * when it covers seq, else a new one recorded now.
 *
 * The mark lock is taken over in a forked child where a thread of the
 * parent held it (that thread is not there to release it; every queue of
 * the process, the default view the algorithms' scratch arrays use among
 * them, would otherwise refuse its waits for good): q->mark is swapped in
 * one store (release, after the mark is whole) and marks are counted
 * atomically, so the worst such a holder leaves is a mark never freed. */
static amp_status amp__mark_get(amp_accelerator_view *q, uint64_t seq, amp__mark **out)
{
    amp_status st = AMP_OK;
    amp__mark *m = NULL;
    *out = NULL;
    amp__lock_acquire_taking_over(&q->mark_lock);
    /* While q records, its mark is the one amp__queue_record_cover made
     * before the recording began, after all that runs on q until it ends:
     * it answers a wait for any point, "whatever is queued" (AMP__SEQ_TAIL:
     * a marker of a view of a native queue, data handed out with a native
     * handle) included. */
    if (q->mark && (q->mark->seq >= seq || atomic_load_explicit(&q->recorder, memory_order_acquire))) {
        m = q->mark;
        atomic_fetch_add(&m->refs, 1);
        goto done;
    }
    /* A recording queue takes no event (a capturing stream would record
     * it into the graph): were there no mark, refused. */
    if ((st = amp__queue_refuse_recording(q, "waiting for work handed to a vendor library")) != AMP_OK) goto done;
    if (!(m = calloc(1, sizeof *m))) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "accelerator view: out of host memory for a wait point");
        goto done;
    }
    m->seq = atomic_load_explicit(&q->submitted, memory_order_acquire);
    if ((st = q->be->event_record(q->dev, q->queue, &m->event)) != AMP_OK) {
        free(m);
        m = NULL;
        goto done;
    }
    atomic_init(&m->refs, 2); /* the queue's and the caller's */
    amp__mark *old = q->mark;
    __atomic_store_n(&q->mark, m, __ATOMIC_RELEASE);
    amp__mark_release(q, old);
done:
    amp__lock_release(&q->mark_lock);
    *out = m;
    return st;
}

static bool amp__point_passed(amp__point p)
{
    return !p.q || p.seq == 0 || atomic_load_explicit(&p.q->completed, memory_order_acquire) >= p.seq;
}

static amp_status amp__point_wait_in(amp__point p, const uint32_t *ms, bool *over)
{
    *over = true;
    if (amp__point_passed(p)) return AMP_OK;
    amp__mark *m;
    amp_status st = amp__mark_get(p.q, p.seq, &m);
    *over = st == AMP_OK;
    if (st != AMP_OK) return st;
    AMP__TRACE_CLOCK(t_wait, amp__wait_begin(p.q));
    st = ms ? p.q->be->event_wait_for(p.q->dev, m->event, *ms) : p.q->be->event_wait(p.q->dev, m->event);
    if (st == AMP_OK) amp__note_completed(p.q, m->seq);
    else if (st == AMP_ERROR_TIMEOUT) *over = false;
    AMP__TRACE(amp__wait_end(t_wait, p.q, p.seq, st));
    amp__mark_release(p.q, m);
    return st;
}

amp_status amp__point_wait_for(amp__point p, const uint32_t *ms)
{
    bool over;
    return amp__point_wait_in(p, ms, &over);
}

amp_status amp__point_wait(amp__point p) { return amp__point_wait_for(p, NULL); }

amp_status amp__point_wait_over(amp__point p, bool *over) { return amp__point_wait_in(p, NULL, over); }

/* Through ev, not a mark: a mark may also cover commands queued after p,
 * and its state is theirs too (on the CPU accelerator, the "not run" of a
 * launch queued after a failed one), where ev's is p's command's own. Nor
 * through q->completed: a later wait moves it past a failed command once
 * its fault was reported (the CPU accelerator's queue then runs again), so
 * it tells that p's command is over, not that it succeeded. Asking ev is
 * cheap once it completed (the CPU accelerator's event keeps its status; a
 * GPU driver answers from the event). *ok keeps ev's success, so that a
 * future that said AMP_OK goes on saying so without asking, even after a
 * later fault that the driver would report for every event (a GPU fault
 * is sticky). A failure is asked again each time: ev keeps it. */
amp_status amp__point_wait_at(amp__point p, void *ev, const uint32_t *ms, atomic_bool *ok)
{
    if (!ev || !p.q || p.seq == 0) return amp__point_wait_for(p, ms);
    if (atomic_load_explicit(ok, memory_order_acquire)) return AMP_OK;
    AMP__TRACE_CLOCK(t_wait, amp__wait_begin(p.q));
    amp_status st = ms ? p.q->be->event_wait_for(p.q->dev, ev, *ms) : p.q->be->event_wait(p.q->dev, ev);
    if (st == AMP_OK) {
        atomic_store_explicit(ok, true, memory_order_release);
        amp__note_completed(p.q, p.seq);
    }
    AMP__TRACE(amp__wait_end(t_wait, p.q, p.seq, st));
    return st;
}

amp_status amp__point_query_at(amp__point p, void *ev, bool *done, atomic_bool *ok)
{
    if (!ev || !p.q || p.seq == 0) return amp__point_query(p, done);
    *done = true;
    if (atomic_load_explicit(ok, memory_order_acquire)) return AMP_OK;
    amp_status st = p.q->be->event_query(p.q->dev, ev, done);
    if (st == AMP_OK && *done) {
        atomic_store_explicit(ok, true, memory_order_release);
        amp__note_completed(p.q, p.seq);
    }
    return st;
}

amp_status amp__point_order(amp_accelerator_view *on, amp__point p)
{
    if (p.q == on || amp__point_passed(p)) return AMP_OK; /* same queue: already in order */
    /* Queues of different backends cannot wait for each other's events:
     * the host waits instead. */
    if (p.q->be != on->be) return amp__point_wait(p);
    amp_status st = amp__queue_refuse_recording(on, "ordering after another queue");
    if (st != AMP_OK) return st;
    amp__mark *m;
    st = amp__mark_get(p.q, p.seq, &m);
    if (st != AMP_OK) return st;
    st = on->be->queue_wait_event(on->dev, on->queue, m->event);
    amp__mark_release(p.q, m);
    return st;
}

amp_status amp__point_query(amp__point p, bool *done)
{
    *done = true;
    if (amp__point_passed(p)) return AMP_OK;
    amp__mark *m;
    amp_status st = amp__mark_get(p.q, p.seq, &m);
    if (st != AMP_OK) return st;
    if ((st = p.q->be->event_query(p.q->dev, m->event, done)) == AMP_OK && *done) amp__note_completed(p.q, m->seq);
    amp__mark_release(p.q, m);
    return st;
}

amp_status amp__timeout_message(const char *fn, uint32_t ms, amp_status st)
{
    if (st != AMP_ERROR_TIMEOUT) return st;
    return amp__fail(st, "%s: not done after %u ms; the work goes on (a running kernel cannot be stopped): wait again, "
                     "or without a limit", fn, ms);
}
