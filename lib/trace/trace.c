/* trace.c — the trace's front and its flushes: what the environment asked
 * for (read by the library's constructor), the entry points the core hands
 * records to (lib/trace/trace.h), and each flush: take the buffer, place every
 * device command on the host clock from its timed events, and hand the
 * events to the JSON writer, the trace file and the summary.
 *
 * Device placement: a launch or copy on a queue was bracketed by two timed
 * events; its duration is what they measure. Its start on the host clock
 * is the latest of: when it was queued, the previous command on the
 * queue's start plus the device time between the two start events, and the
 * previous command's end (an in-order queue runs one command at a time).
 * So durations are exact, and starts lag the true device start by at most
 * the submission latency of the first command after the queue was idle.
 *
 * Locks: the flush lock serialises flushes and guards what a flush touches
 * (placement here; lib/trace/trace_json.c, trace_file.c, trace_summary.c). It is
 * taken only by amp_trace_flush and at exit, with no core lock held,
 * because a flush waits for device events. The buffer lock
 * (lib/trace/trace_buffer.c) is a leaf below it. */
#include "trace_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AMP__TRACE_MAX_DEFAULT 1000000ULL

/* Set by the constructor, read-only after. */
static bool amp__tno_hooks;        /* AMP_TRACE asked for, but the hooks are compiled out */
static char amp__tbad_path[256];   /* AMP_TRACE cannot name a file: why */

/* ------------------------------------------------------ entry points */

static void amp__trace_at_exit(void);
static pthread_once_t amp__exit_once = PTHREAD_ONCE_INIT;

/* Registered at the first record (or flush), which comes after the vendor
 * runtimes were initialised: handlers run in reverse order, so this one
 * runs before any teardown they registered. */
static void amp__hook_exit(void) { atexit(amp__trace_at_exit); }

static void amp__keep(const amp__trace_rec *r, uint64_t end_ns)
{
    char label[256];
    const char *name = r->name;
    if (r->kind == AMP__REC_BUILD) {
        amp__build_label(r->name, r->source, r->source_len, label, sizeof label);
        name = label;
    }
    pthread_once(&amp__exit_once, amp__hook_exit);
    amp__tbuf_put(r, name, end_ns);
}

uint64_t amp__trace_begin(const amp__trace_rec *r)
{
    if (atomic_load_explicit(&amp__trace_flags, memory_order_relaxed) & AMP__TRACE_VENDOR) amp__vendor_push_rec(r);
    return amp__now_ns();
}

void amp__trace_end(const amp__trace_rec *r, bool keep)
{
    unsigned f = atomic_load_explicit(&amp__trace_flags, memory_order_relaxed);
    if (keep && (f & AMP__TRACE_RECORD)) {
        amp__keep(r, amp__now_ns());
    } else if (r->timing.t0 || r->timing.t1) {
        amp__trace_timing t = r->timing;
        amp__timing_release(&t);
    }
    if (f & AMP__TRACE_VENDOR) amp__vendor_pop();
}

void amp__trace_span(const amp__trace_rec *r, uint64_t end_ns)
{
    if (!amp__trace_recording()) return;
    amp__trace_rec at = *r;
    at.timing = (amp__trace_timing){0};
    amp__keep(&at, end_ns);
}

void amp__trace_instant(const amp__trace_rec *r)
{
    if (!amp__trace_recording()) return;
    amp__trace_rec at = *r;
    at.t_ns = amp__now_ns();
    amp__keep(&at, at.t_ns);
}

/* ------------------------------------------------------------ flush */

/* Each queue's last placed command (flush lock), by queue number. */
typedef struct amp__chain {
    amp__trace_timing last; /* its be and dev, and its start event t0 kept for the next delta */
    uint64_t prev_start, prev_end;
} amp__chain;
static struct {
    amp__chain *chains;
    uint32_t nchains;
    uint64_t dropped; /* events dropped so far */
} F;
static pthread_mutex_t amp__tflush = PTHREAD_MUTEX_INITIALIZER;

static amp__chain *amp__chain_of(uint32_t qid)
{
    if (qid >= F.nchains) {
        uint32_t n = qid + 16;
        amp__chain *c = realloc(F.chains, n * sizeof *c);
        if (!c) return NULL;
        memset(c + F.nchains, 0, (n - F.nchains) * sizeof *c);
        F.chains = c;
        F.nchains = n;
    }
    return &F.chains[qid];
}

/* Where e goes on the host clock (see the file comment). Releases its
 * timed events; one that cannot be read leaves it on the host clock. */
static void amp__place(amp__tev *e, amp__placed *p)
{
    amp__trace_timing *t = &e->r.timing;
    p->start = e->r.t_ns;
    p->end = e->r.end_ns;
    p->device_ms = -1;
    p->on_device = false;
    if (!t->t0 || !t->t1) {
        amp__timing_release(t);
        return;
    }
    float ms = 0;
    amp_status st = t->be->event_wait(t->dev, t->t1);
    if (st == AMP_OK) st = t->be->event_elapsed(t->dev, t->t0, t->t1, &ms);
    amp__chain *c = amp__chain_of(e->r.qid);
    if (st != AMP_OK || !c) {
        amp__timing_release(t);
        return;
    }
    uint64_t s = e->r.t_ns;
    if (c->last.t0 && c->last.be == t->be && c->last.dev == t->dev) {
        float gap = 0;
        if (t->be->event_elapsed(t->dev, c->last.t0, t->t0, &gap) == AMP_OK && gap > 0) {
            uint64_t cand = c->prev_start + (uint64_t)((double)gap * 1e6);
            if (cand > s) s = cand;
        }
    }
    if (c->prev_end > s) s = c->prev_end;
    uint64_t d = (uint64_t)((double)ms * 1e6);
    amp__timing_release(&c->last);
    c->last = (amp__trace_timing){t->be, t->dev, t->t0, NULL};
    c->prev_start = s;
    c->prev_end = s + d;
    t->t0 = NULL;
    amp__timing_release(t);
    p->start = s;
    p->end = s + d;
    p->device_ms = ms;
    p->on_device = true;
}

/* Take the buffer, place and write it (flush lock held). */
static amp_status amp__flush_locked(void)
{
    amp__tbatch bt;
    amp_status st = AMP_OK;
    amp__tbuf_take(&bt);
    F.dropped += bt.dropped;
    bool file = atomic_load_explicit(&amp__trace_flags, memory_order_relaxed) & AMP__TRACE_FILE;
    amp__sb b = {0};
    for (amp__tchunk *c = bt.chunks; c; c = c->next)
        for (size_t i = 0; i < c->n; ++i) {
            amp__tev *e = &c->ev[i];
            amp__placed p;
            amp__place(e, &p);
            if (!bt.ok) continue;
            if (file) amp__json_event(&b, &bt, e, &p);
            amp__summary_add(e, &bt, &p);
        }
    if (!bt.ok || b.oom) {
        F.dropped += bt.count;
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "trace: out of host memory while flushing %" PRIu64 " events", bt.count);
    } else if (file) {
        amp__sb head = {0}, tail = {0};
        amp__json_head(&head);
        amp__json_tail(&tail, amp__tfile_written() + bt.count, F.dropped);
        if (head.oom || tail.oom) st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "trace: out of host memory");
        else st = amp__tfile_write(&head, &b, bt.count, &tail);
        free(head.p);
        free(tail.p);
    }
    free(b.p);
    amp__tbatch_free(&bt);
    return st;
}

amp_status amp_trace_flush(void)
{
    unsigned f = atomic_load_explicit(&amp__trace_flags, memory_order_relaxed);
    if (amp__tno_hooks)
        return amp__fail(AMP_ERROR_UNSUPPORTED,
                         "amp_trace_flush: AMP_TRACE/AMP_TRACE_SUMMARY is set, but this library was built with "
                         "-DHIPAMP_TRACE=OFF (the trace hooks are compiled out)");
    if (getpid() != amp__trace_pid) return AMP_OK;
    amp_status st = AMP_OK;
    if (f & AMP__TRACE_RECORD) {
        /* A program that flushes before recording anything still gets its
         * final flush (and summary) at exit. */
        pthread_once(&amp__exit_once, amp__hook_exit);
        pthread_mutex_lock(&amp__tflush);
        st = amp__flush_locked();
        pthread_mutex_unlock(&amp__tflush);
    }
    if (st == AMP_OK && amp__tbad_path[0]) st = amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s", amp__tbad_path);
    return st;
}

static void amp__trace_at_exit(void)
{
    unsigned f = atomic_load_explicit(&amp__trace_flags, memory_order_relaxed);
    if (!(f & AMP__TRACE_RECORD) || getpid() != amp__trace_pid) return;
    pthread_mutex_lock(&amp__tflush);
    amp_status st = amp__flush_locked();
    if (f & AMP__TRACE_SUMMARY) {
        char note[1400];
        if (f & AMP__TRACE_FILE) amp__tfile_note(note, sizeof note);
        amp__summary_print(stderr, F.dropped, amp__tbuf_limit(), f & AMP__TRACE_FILE ? note : NULL);
    } else if (st != AMP_OK) {
        fprintf(stderr, "hipamp: %s\n", amp_last_error());
    }
    for (uint32_t i = 0; i < F.nchains; ++i) amp__timing_release(&F.chains[i].last);
    amp__tfile_close();
    pthread_mutex_unlock(&amp__tflush);
}

/* ------------------------------------------------------------- setup */

/* A forked child traces nothing: its parent's buffer and file are not its
 * own (and a lock may have been held at the fork). */
static void amp__trace_child(void)
{
    atomic_store(&amp__trace_flags, 0);
    amp__tfile_child();
}

__attribute__((constructor)) static void amp__trace_init(void)
{
    unsigned f = 0;
    amp__trace_epoch = amp__now_ns();
    amp__trace_pid = getpid();
    const char *path = amp__env("AMP_TRACE");
    if (path) {
        if (amp__tfile_configure(path, amp__tbad_path, sizeof amp__tbad_path)) f |= AMP__TRACE_FILE;
        else fprintf(stderr, "hipamp: %s\n", amp__tbad_path);
    }
    if (amp__env_flag("AMP_TRACE_SUMMARY", false)) f |= AMP__TRACE_SUMMARY;
    amp__tbuf_set_limit(amp__env_size("AMP_TRACE_MAX_EVENTS", AMP__TRACE_MAX_DEFAULT, 1, 1ULL << 40));
#if !HIPAMP_TRACE_HOOKS
    if (f || amp__tbad_path[0]) {
        amp__tno_hooks = true;
        fprintf(stderr, "hipamp: AMP_TRACE/AMP_TRACE_SUMMARY is set, but this library was built with "
                        "-DHIPAMP_TRACE=OFF: nothing is traced\n");
    }
    f = 0;
#else
    /* A value that is no flag keeps the default, as unset (said on
     * stderr): before, a misspelt one turned the ranges off under a
     * profiler. */
    const int asked = amp__env_flag_or_auto("AMP_TRACE_VENDOR");
    bool vendor = asked < 0 ? amp__vendor_wanted() : asked == 1;
    if (vendor) f |= AMP__TRACE_VENDOR;
#endif
    if (f) pthread_atfork(NULL, NULL, amp__trace_child);
    atomic_store(&amp__trace_flags, f);
}
