/* cpu_queue.c — the CPU accelerator's queues and events: launches made through the asynchronous API run in order on a thread of their queue (so two queues' launches overlap), at most AMP_QUEUE_DEPTH of them queued (a launch waits for room, as on a GPU), everything else on a queue first lets those finish, and events complete when their queue reaches them. */
#include "cpu_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct amp__cpu_queue;

/* An event: a point in a queue. Until the queue reaches it, the queued
 * launch it follows holds a reference too. */
typedef struct amp__cpu_event {
    atomic_int refs;
    atomic_bool done;
    uint64_t ns;      /* when the queue passed it (the host clock) */
    bool timed;
    amp_status st;    /* a failure of the queue's work up to this point */
    char *msg;        /* its message (malloc'ed with the failure; NULL: none or no memory) */
    struct amp__cpu_event *next; /* among the events of one queued launch */
    /* Where an item holds it (NULL: passed when made): its queue, and the
     * fork generation then. Pending in a forked child with an older
     * generation, it follows an item whose thread stayed in the parent:
     * its waits and queries run the queue's fix-up (amp__cpu_event_forked),
     * which completes it. The queue outlives it while it is pending (a
     * queue's destroy runs or completes every item first). */
    struct amp__cpu_queue *q;
    unsigned gen;
} amp__cpu_event;

/* A launch (or a graph's replay, or a wait for another queue's event)
 * waiting for (or running on) its queue's thread, and the events recorded
 * right after it. */
typedef struct amp__cpu_qitem {
    /* A launch's job, a graph's replay list (the graph's own, not freed
     * here) with AMP__CPU_QITEM_GRAPH set in the address, or an event of
     * another queue (the item holds a reference) with AMP__CPU_QITEM_WAIT:
     * the item stays at three pointers, so every asynchronous launch's item
     * comes from the allocator's smallest bin. */
    uintptr_t work;
    amp__cpu_event *events;
    struct amp__cpu_qitem *next;
} amp__cpu_qitem;
#define AMP__CPU_QITEM_GRAPH ((uintptr_t)1)
#define AMP__CPU_QITEM_WAIT ((uintptr_t)2)
#define AMP__CPU_QITEM_KIND (AMP__CPU_QITEM_GRAPH | AMP__CPU_QITEM_WAIT)
static inline amp__cpu_job *amp__cpu_qitem_job(const amp__cpu_qitem *it)
{
    return it->work & AMP__CPU_QITEM_KIND ? NULL : (amp__cpu_job *)it->work;
}
static inline amp__cpu_graph *amp__cpu_qitem_graph(const amp__cpu_qitem *it)
{
    return it->work & AMP__CPU_QITEM_GRAPH ? (amp__cpu_graph *)(it->work & ~AMP__CPU_QITEM_KIND) : NULL;
}
static inline amp__cpu_event *amp__cpu_qitem_waited(const amp__cpu_qitem *it)
{
    return it->work & AMP__CPU_QITEM_WAIT ? (amp__cpu_event *)(it->work & ~AMP__CPU_QITEM_KIND) : NULL;
}
static bool amp__cpu_event_block(amp__cpu_event *e, const struct timespec *until);
/* Run the item's work in the calling thread. A wait passes whatever the
 * other queue's work did: its failure is that queue's to report. */
static inline amp_status amp__cpu_qitem_run(amp__cpu_device *d, const amp__cpu_qitem *it)
{
    amp__cpu_graph *g = amp__cpu_qitem_graph(it);
    amp__cpu_event *e = amp__cpu_qitem_waited(it);
    if (e) return amp__cpu_event_block(e, NULL), AMP_OK;
    return g ? amp__cpu_graph_run(d, g, NULL) : amp__cpu_job_run(d, amp__cpu_qitem_job(it));
}

/* What an item that did not run because of an earlier failure says, before
 * that failure's message. */
#define AMP__CPU_NOT_RUN "not run: an earlier launch on this queue failed: "

/* Lock order: a queue's mu, then amp__cpu_event_mu; neither is held while a
 * launch runs. */
typedef struct amp__cpu_queue {
    amp__cpu_device *d;
    pthread_mutex_t mu;
    pthread_cond_t work; /* the thread waits for items */
    pthread_cond_t idle; /* drains wait for the list to empty */
    pthread_cond_t room; /* launches wait for n < depth */
    amp__cpu_qitem *head, *tail; /* head runs first; it stays listed while it runs */
    unsigned n, depth;   /* items listed; at most depth (d->queue_depth) */
    unsigned waiting;    /* launches waiting for room */
    bool thread_started, stop;
    pthread_t thread;
    /* amp__cpu_fork_generation when last fixed up (amp__cpu_queue_after_fork):
     * stored last, with release, so that a thread that reads it current
     * (acquire) finds the fixed-up locks. */
    atomic_uint fork_generation;
    /* The first failure of a queued launch not yet reported by a wait;
     * later queued launches do not run until it is. */
    amp_status fault;
    char fault_msg[512];
    /* The item the thread finished last did not run (an earlier one had
     * failed): an event recorded on the empty queue right after it says so. */
    bool last_not_run;
    /* graph_begin..graph_end: launches and copies are recorded here. Only
     * the recording thread uses the queue meanwhile (backend.h). */
    amp__cpu_graph *recording;
} amp__cpu_queue;

/* Events come from a pool (lib/base/slab.c): every asynchronous launch makes two
 * (its future's timing), and a burst of them must leave no fragmented heap
 * behind once the futures are gone. */
static amp__slab_pool amp__cpu_events = AMP__SLAB_POOL(sizeof(amp__cpu_event));

/* Event completion is announced to every waiter at once: waits are rare and
 * short-lived next to the launches they wait for. */
static pthread_mutex_t amp__cpu_event_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t amp__cpu_event_cv; /* made by amp__cpu_event_init, before the first event */
static pthread_once_t amp__cpu_event_once = PTHREAD_ONCE_INIT;

/* Condition variables with timed waits (amp_future_wait_for,
 * amp_accelerator_view_wait_for) run on the monotonic clock. */
static void amp__cpu_cond_init(pthread_cond_t *c)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(c, &a);
    pthread_condattr_destroy(&a);
}

/* fork waits until no thread holds amp__cpu_event_mu (a leaf: nothing is
 * taken under it), so the child never inherits it held by a thread it does
 * not have; the child's condition variable starts afresh, as the pool's
 * do: it still counts the parent's waiters, which glibc's broadcast would
 * wait for for ever, holding the mutex (a child's second wait on a future
 * hung there, its time-out included). */
static void amp__cpu_event_prepare(void) { pthread_mutex_lock(&amp__cpu_event_mu); }
static void amp__cpu_event_parent(void) { pthread_mutex_unlock(&amp__cpu_event_mu); }
static void amp__cpu_event_child(void)
{
    amp__cpu_cond_init(&amp__cpu_event_cv);
    pthread_mutex_unlock(&amp__cpu_event_mu);
}

static void amp__cpu_event_init(void)
{
    amp__cpu_cond_init(&amp__cpu_event_cv);
    pthread_atfork(amp__cpu_event_prepare, amp__cpu_event_parent, amp__cpu_event_child);
}

/* The monotonic time ms milliseconds from now. */
static struct timespec amp__cpu_deadline(uint32_t ms)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (long)(ms % 1000) * 1000000;
    if (t.tv_nsec >= 1000000000) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000;
    }
    return t;
}

/* pthread_cond_wait, or until *until (NULL: no limit); false: timed out. */
static bool amp__cpu_cond_wait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *until)
{
    if (!until) {
        pthread_cond_wait(c, m);
        return true;
    }
    return pthread_cond_timedwait(c, m, until) != ETIMEDOUT;
}

static void amp__cpu_event_unref(amp__cpu_event *e)
{
    if (e && atomic_fetch_sub(&e->refs, 1) == 1) {
        free(e->msg);
        amp__slab_free(&amp__cpu_events, e);
    }
}

/* An item done with: what it owns, then itself. */
static void amp__cpu_qitem_free(amp__cpu_qitem *it)
{
    amp__cpu_job_free(amp__cpu_qitem_job(it));
    amp__cpu_event_unref(amp__cpu_qitem_waited(it));
    free(it);
}

/* The queue passed these events (a list): stamp them, with st (and msg)
 * the state of the queue's work up to here. */
static void amp__cpu_events_mark(amp__cpu_event *e, amp_status st, const char *msg)
{
    uint64_t now = amp__now_ns();
    pthread_mutex_lock(&amp__cpu_event_mu);
    for (amp__cpu_event *x = e; x; x = x->next) {
        x->ns = now;
        x->st = st;
        if (st != AMP_OK) x->msg = amp__strdup(msg);
        atomic_store_explicit(&x->done, true, memory_order_release);
    }
    pthread_cond_broadcast(&amp__cpu_event_cv);
    pthread_mutex_unlock(&amp__cpu_event_mu);
}

/* The list's references (taken when each was attached) given back. */
static void amp__cpu_events_release(amp__cpu_event *e)
{
    while (e) {
        amp__cpu_event *n = e->next;
        amp__cpu_event_unref(e);
        e = n;
    }
}

static void amp__cpu_events_complete(amp__cpu_event *e, amp_status st, const char *msg)
{
    amp__cpu_events_mark(e, st, msg);
    amp__cpu_events_release(e);
}

/* A new event, the caller's reference; NULL: no memory (the message set). */
static amp__cpu_event *amp__cpu_event_new(bool timed)
{
    pthread_once(&amp__cpu_event_once, amp__cpu_event_init);
    amp__cpu_event *e = amp__slab_alloc(&amp__cpu_events);
    if (!e) {
        amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for an event");
        return NULL;
    }
    memset(e, 0, sizeof *e);
    atomic_init(&e->refs, 1);
    e->timed = timed;
    return e;
}

/* An item's closing event (backend.h, launch's end), attached before the
 * item is queued: nothing queued later can come before it, and it says
 * what the item did. NULL: no memory; the core records one itself. */
static amp__cpu_event *amp__cpu_end_attach(amp__cpu_queue *q, amp__cpu_qitem *it)
{
    amp__cpu_event *e = amp__cpu_event_new(true);
    if (!e) return NULL;
    atomic_fetch_add(&e->refs, 1); /* the item's */
    e->q = q;
    e->gen = amp__cpu_fork_generation;
    e->next = it->events;
    it->events = e;
    return e;
}

/* The closing event of work that ran in the calling thread and succeeded:
 * passed already (NULL: no memory; the core records one itself). */
static void *amp__cpu_end_here(void)
{
    amp__cpu_event *e = amp__cpu_event_new(true);
    if (e) {
        e->ns = amp__now_ns();
        atomic_store_explicit(&e->done, true, memory_order_release);
    }
    return e;
}

/* In a forked child the queue's thread and queued launches stayed in the
 * parent: what was queued is reported as not run, and a new thread starts
 * with the next asynchronous launch. The child runs this before it is
 * multithreaded, or serializes through the queue's first use. */
static void amp__cpu_queue_after_fork(amp__cpu_queue *q)
{
    if (atomic_load_explicit(&q->fork_generation, memory_order_acquire) == amp__cpu_fork_generation) return;
    static pthread_mutex_t fix = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&fix);
    if (atomic_load_explicit(&q->fork_generation, memory_order_relaxed) != amp__cpu_fork_generation) {
        pthread_mutex_init(&q->mu, NULL);
        pthread_cond_init(&q->work, NULL);
        amp__cpu_cond_init(&q->idle);
        pthread_cond_init(&q->room, NULL);
        amp__cpu_qitem *it = q->head;
        q->head = q->tail = NULL;
        q->n = q->waiting = 0;
        q->thread_started = q->stop = false;
        while (it) {
            amp__cpu_qitem *n = it->next;
            amp__cpu_events_complete(it->events, AMP_ERROR_DEVICE,
                                     "a launch queued before fork() does not run in the child process");
            if (q->fault == AMP_OK) {
                q->fault = AMP_ERROR_DEVICE;
                snprintf(q->fault_msg, sizeof q->fault_msg,
                         "a launch queued before fork() does not run in the child process");
            }
            /* The job's memory belongs to the parent's copy of it: leave
             * it, but take it off its module's count of queued launches,
             * or unloading the module here would wait for it for ever. A
             * wait's reference to an event is this process's too. */
            amp__cpu_job *job = amp__cpu_qitem_job(it);
            if (job && job->inflight) {
                pthread_mutex_lock(&job->inflight->mu);
                if (--job->inflight->n == 0) pthread_cond_broadcast(&job->inflight->cv);
                pthread_mutex_unlock(&job->inflight->mu);
            }
            amp__cpu_event_unref(amp__cpu_qitem_waited(it));
            free(it);
            it = n;
        }
        atomic_store_explicit(&q->fork_generation, amp__cpu_fork_generation, memory_order_release);
    }
    pthread_mutex_unlock(&fix);
}

/* e pending in a forked child since before the fork: its queue's fix-up
 * completes it (as not run), so that a wait on it or on a mark of the
 * queue cached before the fork (lib/core/queue.c) returns instead of
 * waiting for the parent's queue thread for ever. No lock held: the
 * fix-up takes the queue's and amp__cpu_event_mu. */
static inline void amp__cpu_event_forked(amp__cpu_event *e)
{
    if (e->q && e->gen != amp__cpu_fork_generation && !atomic_load_explicit(&e->done, memory_order_acquire))
        amp__cpu_queue_after_fork(e->q);
}

static void *amp__cpu_queue_main(void *arg)
{
    amp__cpu_queue *q = arg;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (!q->head && !q->stop) pthread_cond_wait(&q->work, &q->mu);
        if (!q->head) break;
        amp__cpu_qitem *it = q->head;
        /* An earlier failure not reported yet: the item does not run, and
         * its events say so with that failure as it is now. Taken here,
         * not after: a wait on another thread may report and clear it
         * meanwhile, and the item still did not run (read after, AMP_OK
         * made its events say a launch that never ran succeeded). */
        amp_status st = q->fault;
        bool skip = st != AMP_OK;
        char msg[sizeof q->fault_msg + 64];
        msg[0] = 0;
        if (skip) snprintf(msg, sizeof msg, "%s%s", AMP__CPU_NOT_RUN, q->fault_msg);
        pthread_mutex_unlock(&q->mu);
        if (!skip) st = amp__cpu_qitem_run(q->d, it);
        pthread_mutex_lock(&q->mu);
        if (!skip && st != AMP_OK) {
            snprintf(msg, sizeof msg, "%s", amp_last_error());
            if (q->fault == AMP_OK) {
                q->fault = st;
                snprintf(q->fault_msg, sizeof q->fault_msg, "%s", msg);
            }
        }
        q->last_not_run = skip;
        /* The item's events complete before it leaves the list: a drain
         * that sees the list empty (amp_accelerator_view_wait) must find
         * every future of what it waited for ready. Their state is the
         * item's own (a launch's closing event answers for it alone).
         * (Lock order: q->mu, then amp__cpu_event_mu.) */
        amp__cpu_events_mark(it->events, st, msg);
        q->head = it->next;
        q->n--;
        if (q->waiting) pthread_cond_signal(&q->room);
        if (!q->head) {
            q->tail = NULL;
            pthread_cond_broadcast(&q->idle);
        }
        pthread_mutex_unlock(&q->mu);
        amp__cpu_events_release(it->events);
        amp__cpu_qitem_free(it);
        pthread_mutex_lock(&q->mu);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

amp_status amp__cpu_queue_create(void *dev, void **queue)
{
    *queue = NULL;
    /* The fork handlers first: a child forked before the pool's first
     * launch must still be told (amp__cpu_queue_after_fork reads the
     * generation they bump), or it waits for the parent's queue thread. */
    amp__cpu_pool_init();
    amp__cpu_queue *q = calloc(1, sizeof *q);
    if (!q) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for a queue");
    q->d = dev;
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->work, NULL);
    amp__cpu_cond_init(&q->idle);
    pthread_cond_init(&q->room, NULL);
    q->depth = q->d->queue_depth;
    atomic_init(&q->fork_generation, amp__cpu_fork_generation);
    *queue = q;
    return AMP_OK;
}

/* Wait until the queue is empty, or until *until (NULL: no limit). false:
 * timed out. Only where no event can be had (amp__cpu_queue_drain): another
 * thread that keeps queueing keeps it from ever being seen empty. */
static bool amp__cpu_queue_idle(amp__cpu_queue *q, const struct timespec *until)
{
    amp__cpu_queue_after_fork(q);
    pthread_mutex_lock(&q->mu);
    bool in_time = true;
    while (q->head && in_time) in_time = amp__cpu_cond_wait(&q->idle, &q->mu, until);
    bool idle = !q->head;
    pthread_mutex_unlock(&q->mu);
    return idle;
}

static amp_status amp__cpu_record(amp__cpu_queue *q, bool timed, void **event);

/* What the queue holds now has run: waited through an event at its tail,
 * as amp__cpu_queue_wait_until waits, not until the queue is empty. A
 * blocking launch, a synchronous replay and a copy run in the caller's
 * thread after this; had they waited for an empty queue, another thread
 * that kept queueing asynchronous launches on it held them up until it
 * stopped (for good, were it waiting on their results). Lock order: q->mu,
 * then amp__cpu_event_mu, taken one after the other; the caller may hold
 * storage locks, which the queue's thread never takes. */
void amp__cpu_queue_drain(void *queue)
{
    amp__cpu_queue *q = queue;
    void *ev = NULL;
    if (!q) return;
    if (amp__cpu_record(q, false, &ev) != AMP_OK) {
        /* No memory for the event (its message stays this thread's last
         * error, under a call that goes on to succeed): the empty queue. */
        (void)amp__cpu_queue_idle(q, NULL);
        return;
    }
    amp__cpu_event_block(ev, NULL);
    amp__cpu_event_unref(ev);
}

void amp__cpu_queue_destroy(void *dev, void *queue)
{
    amp__cpu_queue *q = queue;
    if (!q) return;
    amp__cpu_queue_after_fork(q);
    pthread_mutex_lock(&q->mu);
    bool join = q->thread_started;
    q->stop = true;
    pthread_cond_signal(&q->work);
    pthread_mutex_unlock(&q->mu);
    /* The thread runs what is queued before it ends. */
    if (join) pthread_join(q->thread, NULL);
    pthread_cond_destroy(&q->work);
    pthread_cond_destroy(&q->idle);
    pthread_cond_destroy(&q->room);
    pthread_mutex_destroy(&q->mu);
    free(q);
}

/* After a drain: the unreported failure of a queued launch, now reported. */
static amp_status amp__cpu_queue_take_fault(amp__cpu_queue *q)
{
    pthread_mutex_lock(&q->mu);
    amp_status st = q->fault;
    char msg[sizeof q->fault_msg];
    if (st != AMP_OK) { /* the common case formats nothing: every blocking launch asks */
        memcpy(msg, q->fault_msg, sizeof msg);
        q->fault = AMP_OK;
        q->fault_msg[0] = 0;
    }
    pthread_mutex_unlock(&q->mu);
    if (st != AMP_OK) return amp__fail(st, "%s", msg);
    return AMP_OK;
}

/* Wait for what the queue holds now (until *until; NULL: no limit), then
 * report the queue's fault. Through an event at the tail, not until the
 * queue is empty: another thread that keeps queueing would keep an empty
 * queue from ever being seen (a wait for 3 s timed out on work of 1 ms). */
static amp_status amp__cpu_queue_wait_until(amp__cpu_queue *q, const struct timespec *until)
{
    if (!q) return AMP_OK;
    void *ev = NULL;
    amp_status st = amp__cpu_record(q, false, &ev);
    if (st != AMP_OK) return st;
    bool in_time = amp__cpu_event_block(ev, until);
    amp__cpu_event_unref(ev);
    if (!in_time) return amp__fail(AMP_ERROR_TIMEOUT, "CPU accelerator: the queue's launches are still running");
    return amp__cpu_queue_take_fault(q);
}

amp_status amp__cpu_queue_wait(void *dev, void *queue) { return amp__cpu_queue_wait_until(queue, NULL); }

amp_status amp__cpu_queue_wait_for(void *dev, void *queue, uint32_t ms)
{
    struct timespec until = amp__cpu_deadline(ms);
    return amp__cpu_queue_wait_until(queue, &until);
}

/* Hand it to q's thread (started on first use). Without a thread it runs
 * here, as through the blocking API, and is freed. */
static inline __attribute__((always_inline)) amp_status amp__cpu_queue_put(amp__cpu_queue *q, amp__cpu_qitem *it)
{
    amp_status st;
    pthread_mutex_lock(&q->mu);
    if (!q->thread_started) {
        /* The queue's thread takes no signals: they belong to the
         * application's threads. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        q->thread_started = pthread_create(&q->thread, NULL, amp__cpu_queue_main, q) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (!q->thread_started) {
            pthread_mutex_unlock(&q->mu);
            amp__cpu_queue_drain(q);
            st = amp__cpu_qitem_run(q->d, it);
            if (it->events) amp__cpu_events_complete(it->events, st, st != AMP_OK ? amp_last_error() : NULL);
            amp__cpu_qitem_free(it);
            return st;
        }
    }
    /* A full queue holds the launch until its thread made room, as GPU
     * drivers do: queued work stays bounded. */
    while (q->n >= q->depth) {
        q->waiting++;
        pthread_cond_wait(&q->room, &q->mu);
        q->waiting--;
    }
    if (q->tail) q->tail->next = it;
    else q->head = it;
    q->tail = it;
    q->n++;
    pthread_cond_signal(&q->work);
    pthread_mutex_unlock(&q->mu);
    return AMP_OK;
}

/* In this thread, after what the queue holds; an asynchronous launch's
 * failure not reported yet is this call's (the work after it would read
 * its results). kernel names the launch refused (NULL: a graph's replay);
 * the message is formatted only then (this is every blocking launch's
 * path). */
static inline __attribute__((always_inline)) amp_status amp__cpu_queue_ready_here(amp__cpu_queue *q, const char *kernel)
{
    amp_status st;
    if (!q) return AMP_OK;
    amp__cpu_queue_drain(q);
    if ((st = amp__cpu_queue_take_fault(q)) != AMP_OK)
        return amp__fail(st, "an earlier asynchronous launch on this queue failed, so %s%.128s%s did not run: %s",
                         kernel ? "'" : "the graph", kernel ? kernel : "", kernel ? "'" : "", amp_last_error());
    return AMP_OK;
}

/* Queue it, with its closing event where end asks for one (backend.h). */
static amp_status amp__cpu_queue_put_ended(amp__cpu_queue *q, amp__cpu_qitem *it, void **end)
{
    amp__cpu_event *e = end ? amp__cpu_end_attach(q, it) : NULL;
    amp_status st = amp__cpu_queue_put(q, it);
    if (st != AMP_OK) amp__cpu_event_unref(e);
    else if (end) *end = e;
    return st;
}

amp_status amp__cpu_queue_launch(void *dev, void *queue, void *fn, const amp__launch *l, void **end)
{
    amp__cpu_queue *q = queue;
    amp_status st;
    if (q && q->recording) return amp__cpu_graph_add_launch(dev, q->recording, fn, l);
    if (!q || !l->async) {
        if ((st = amp__cpu_queue_ready_here(q, l->kernel_name)) != AMP_OK) return st;
        if ((st = amp__cpu_run(dev, fn, l)) == AMP_OK && end) *end = amp__cpu_end_here();
        return st;
    }
    amp__cpu_queue_after_fork(q);
    amp__cpu_job *j = NULL;
    if ((st = amp__cpu_job_new(fn, l, &j)) != AMP_OK) return st;
    amp__cpu_qitem *it = calloc(1, sizeof *it);
    if (!it) {
        amp__cpu_job_free(j);
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory to queue a launch");
    }
    it->work = (uintptr_t)j;
    return amp__cpu_queue_put_ended(q, it, end);
}

/* ------------------------------------------------------------ graphs */

amp__cpu_graph *amp__cpu_queue_recording(void *queue)
{
    amp__cpu_queue *q = queue;
    return q ? q->recording : NULL;
}

amp_status amp__cpu_graph_begin(void *dev, void *queue)
{
    amp__cpu_queue *q = queue;
    if (q->recording) return amp__fail(AMP_ERROR_BUSY, "CPU accelerator: the queue is recording already");
    return amp__cpu_graph_new(&q->recording);
}

amp_status amp__cpu_graph_end(void *dev, void *queue, bool keep, void **graph)
{
    amp__cpu_queue *q = queue;
    amp__cpu_graph *g = q->recording;
    q->recording = NULL;
    *graph = NULL;
    if (keep && amp__cpu_graph_size(g)) *graph = g;
    else amp__cpu_graph_free(g);
    return AMP_OK;
}

amp_status amp__cpu_graph_launch(void *dev, void *queue, void *graph, bool async, uint64_t *node_ns, void **end)
{
    amp__cpu_queue *q = queue;
    amp_status st;
    if (!async) {
        if ((st = amp__cpu_queue_ready_here(q, NULL)) != AMP_OK) return st;
        if ((st = amp__cpu_graph_run(dev, graph, node_ns)) == AMP_OK && end) *end = amp__cpu_end_here();
        return st;
    }
    amp__cpu_queue_after_fork(q);
    amp__cpu_qitem *it = calloc(1, sizeof *it);
    if (!it) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory to queue a graph's replay");
    it->work = (uintptr_t)graph | AMP__CPU_QITEM_GRAPH;
    return amp__cpu_queue_put_ended(q, it, end);
}

void amp__cpu_graph_destroy(void *dev, void *graph) { amp__cpu_graph_free(graph); }

static amp_status amp__cpu_record(amp__cpu_queue *q, bool timed, void **event)
{
    *event = NULL;
    amp__cpu_event *e = amp__cpu_event_new(timed);
    if (!e) return AMP_ERROR_OUT_OF_MEMORY;
    bool now = true;
    if (q) {
        amp__cpu_queue_after_fork(q);
        pthread_mutex_lock(&q->mu);
        if (q->tail) {
            /* After the last queued launch: completed when it is. */
            atomic_fetch_add(&e->refs, 1);
            e->q = q;
            e->gen = amp__cpu_fork_generation;
            e->next = q->tail->events;
            q->tail->events = e;
            now = false;
        } else if (q->fault != AMP_OK) {
            /* Passed already, by work that failed and was not reported
             * yet: the point says so, as one reached by that work does
             * (the launch just queued may be that work, or one that did not
             * run because of it: the message is the last item's). */
            e->st = q->fault;
            if (q->last_not_run) {
                size_t n = sizeof AMP__CPU_NOT_RUN + strlen(q->fault_msg);
                if ((e->msg = malloc(n))) snprintf(e->msg, n, "%s%s", AMP__CPU_NOT_RUN, q->fault_msg);
            } else {
                e->msg = amp__strdup(q->fault_msg);
            }
        }
        pthread_mutex_unlock(&q->mu);
    }
    if (now) {
        e->ns = amp__now_ns();
        atomic_init(&e->done, true);
    }
    *event = e;
    return AMP_OK;
}

amp_status amp__cpu_event_record(void *dev, void *queue, void **event) { return amp__cpu_record(queue, false, event); }

amp_status amp__cpu_event_record_timed(void *dev, void *queue, void **event)
{
    return amp__cpu_record(queue, true, event);
}

/* Wait until the queue passed e, or until *until (NULL: no limit). false:
 * timed out. */
static bool amp__cpu_event_block(amp__cpu_event *e, const struct timespec *until)
{
    if (atomic_load_explicit(&e->done, memory_order_acquire)) return true;
    amp__cpu_event_forked(e);
    pthread_mutex_lock(&amp__cpu_event_mu);
    bool in_time = true;
    while (!atomic_load_explicit(&e->done, memory_order_acquire) && in_time)
        in_time = amp__cpu_cond_wait(&amp__cpu_event_cv, &amp__cpu_event_mu, until);
    pthread_mutex_unlock(&amp__cpu_event_mu);
    return atomic_load_explicit(&e->done, memory_order_acquire);
}

/* Wait for e (until *until; NULL: no limit); then the state of the
 * queue's work up to it. */
static amp_status amp__cpu_event_wait_until(amp__cpu_event *e, const struct timespec *until)
{
    if (!e) return AMP_OK;
    if (!amp__cpu_event_block(e, until))
        return amp__fail(AMP_ERROR_TIMEOUT, "CPU accelerator: the queue has not reached the event");
    if (e->st != AMP_OK) return amp__fail(e->st, "%s", e->msg ? e->msg : "the queue's work failed");
    return AMP_OK;
}

amp_status amp__cpu_event_wait(void *dev, void *event) { return amp__cpu_event_wait_until(event, NULL); }

amp_status amp__cpu_event_wait_for(void *dev, void *event, uint32_t ms)
{
    struct timespec until = amp__cpu_deadline(ms);
    return amp__cpu_event_wait_until(event, &until);
}

amp_status amp__cpu_event_query(void *dev, void *event, bool *done)
{
    amp__cpu_event *e = event;
    if (e) amp__cpu_event_forked(e);
    *done = !e || atomic_load_explicit(&e->done, memory_order_acquire);
    /* As a GPU driver answers for work that faulted. */
    if (*done && e && e->st != AMP_OK) return amp__fail(e->st, "%s", e->msg ? e->msg : "the queue's work failed");
    return AMP_OK;
}

void amp__cpu_event_release(void *dev, void *event) { amp__cpu_event_unref(event); }

amp_status amp__cpu_event_elapsed(void *dev, void *start, void *end, float *ms)
{
    const amp__cpu_event *a = start, *b = end;
    *ms = 0;
    if (!a || !b || !a->timed || !b->timed)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "elapsed time asked of events recorded without timing");
    if (!atomic_load_explicit(&a->done, memory_order_acquire) || !atomic_load_explicit(&b->done, memory_order_acquire))
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "elapsed time asked of events the queue has not reached");
    *ms = (float)((double)(b->ns - a->ns) / 1e6);
    return AMP_OK;
}

/* Later work on queue starts after event: an item on the queue that its
 * thread waits on, so that the caller does not (an asynchronous launch
 * returns once queued, whatever the other queue's work waits for: the
 * host's next step, maybe). What runs on the queue in the caller's thread
 * (a blocking launch, a copy) drains the queue first, and so waits then.
 * Waited here where nothing can be queued: a queue that records a graph,
 * no memory for the item. */
amp_status amp__cpu_queue_wait_event(void *dev, void *queue, void *event)
{
    amp__cpu_queue *q = queue;
    amp__cpu_event *e = event;
    if (!e || atomic_load_explicit(&e->done, memory_order_acquire)) return AMP_OK;
    amp__cpu_qitem *it = q && !q->recording && !((uintptr_t)e & AMP__CPU_QITEM_KIND) ? calloc(1, sizeof *it) : NULL;
    if (!it) {
        amp__cpu_event_block(e, NULL);
        return AMP_OK;
    }
    amp__cpu_queue_after_fork(q);
    atomic_fetch_add(&e->refs, 1);
    it->work = (uintptr_t)e | AMP__CPU_QITEM_WAIT;
    return amp__cpu_queue_put(q, it);
}
