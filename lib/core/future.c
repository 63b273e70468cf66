/* future.c — amp_future, C++ AMP's completion_future: a point in a queue
 * that the caller can wait on or poll, the device time of the work it
 * follows (timed events recorded around it), continuations run when it
 * completes (completion_future::then), and markers (a future for what a
 * queue holds so far). */
#include "internal.h"

#include <stdlib.h>
#include <time.h>

/* What a future shares with its continuations, which may outlive it: the
 * point and the timed events (t1 answers for the work; see amp_future_wait),
 * owned here once the first continuation was registered, and released by
 * whichever of them lets go last. Made only then: most futures never have
 * one, and a launch makes no allocation for it. */
typedef struct amp__future_share {
    atomic_int refs; /* the future's + each pending continuation's */
    amp__point done; /* holds a reference to the queue */
    void *t0, *t1;
    atomic_bool ok;  /* t1 said AMP_OK (see amp__point_wait_at) */
} amp__future_share;

struct amp_future {
    amp__handle h;
    amp__point done; /* holds a reference to the queue */
    void *t0, *t1;   /* timed events of done.q around the work; NULL: none. The future's own, or share's */
    atomic_bool ok;  /* t1 said AMP_OK: the answer from then on (see amp__point_wait_at) */
    _Atomic(amp__future_share *) share;
};

amp_status amp__future_new(amp_future **out)
{
    *out = amp__handle_new(AMP__HANDLE_FUTURE, sizeof **out);
    return *out ? AMP_OK : amp__fail(AMP_ERROR_OUT_OF_MEMORY, "future: out of host memory");
}

static void amp__events_release(amp__point done, void *t0, void *t1)
{
    if (!done.q) return;
    amp__queue_event_release(done.q, t0);
    amp__queue_event_release(done.q, t1);
}

static void amp__future_share_release(amp__future_share *sh)
{
    if (!sh || atomic_fetch_sub_explicit(&sh->refs, 1, memory_order_acq_rel) != 1) return;
    amp__events_release(sh->done, sh->t0, sh->t1);
    amp__point_set(&sh->done, (amp__point){NULL, 0});
    free(sh);
}

void amp__future_complete_at(amp_future *f, amp__point p, void *t0, void *t1)
{
    amp__point_set(&f->done, p);
    f->t0 = t0;
    f->t1 = t1;
    atomic_store_explicit(&f->ok, false, memory_order_relaxed);
}

/* Waits and polls go through t1 where the work has one: it follows that
 * work and nothing queued after it (the backend bound it to the work's
 * own command when queueing it: lib/core/queue.c, timing brackets), so its
 * status is the work's own (a launch that failed says why, not that a
 * later one did not run, nor that a later one succeeded, nor the state of
 * the queue when the call returned), whenever and however often it is
 * asked. */
amp_status amp_future_wait(amp_future *f)
{
    AMP__HANDLE_OK(f, AMP__HANDLE_FUTURE);
    return amp__point_wait_at(f->done, f->t1, NULL, &f->ok);
}

amp_status amp_future_wait_for(amp_future *f, uint32_t ms)
{
    AMP__HANDLE_OK(f, AMP__HANDLE_FUTURE);
    return amp__timeout_message(__func__, ms, amp__point_wait_at(f->done, f->t1, &ms, &f->ok));
}

amp_status amp_future_is_ready(amp_future *f, bool *done)
{
    if (done) *done = false;
    AMP__NOT_NULL(done);
    AMP__HANDLE_OK(f, AMP__HANDLE_FUTURE);
    return amp__point_query_at(f->done, f->t1, done, &f->ok);
}

amp_status amp_future_elapsed_ms(amp_future *f, double *ms)
{
    if (ms) *ms = 0;
    AMP__NOT_NULL(ms);
    AMP__HANDLE_OK(f, AMP__HANDLE_FUTURE);
    amp_status st = amp__point_wait_at(f->done, f->t1, NULL, &f->ok);
    if (st != AMP_OK) return st;
    if (!f->t0 || !f->t1)
        return amp__fail(AMP_ERROR_UNSUPPORTED, "this future's work was not timed (it ran on the host, or queued "
                         "nothing)");
    float v = 0;
    if ((st = f->done.q->be->event_elapsed(f->done.q->dev, f->t0, f->t1, &v)) != AMP_OK) return st;
    *ms = v;
    return AMP_OK;
}

amp_status amp_future_destroy(amp_future *f)
{
    if (!f) return AMP_OK;
    amp_status st = amp__handle_end(f, AMP__HANDLE_FUTURE, __func__, "f");
    if (st != AMP_OK) return st;
    /* Pending continuations keep the events they wait on. */
    amp__future_share *sh = atomic_load_explicit(&f->share, memory_order_acquire);
    if (sh) amp__future_share_release(sh);
    else amp__events_release(f->done, f->t0, f->t1);
    amp__point_set(&f->done, (amp__point){NULL, 0});
    amp__handle_free(f, AMP__HANDLE_FUTURE);
    return AMP_OK;
}

/* ------------------------------------------------------------- markers */

amp_status amp_accelerator_view_create_marker(amp_accelerator_view *q, amp_future **out)
{
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__HANDLE_OK(q, AMP__HANDLE_QUEUE);
    amp_status st = amp__future_new(out);
    if (st != AMP_OK) return st;
    /* Everything hipamp queued on q so far; on a wrapped native queue, the
     * caller's own work too, as queued when someone waits (a wait may wait
     * for more, never for less). */
    uint64_t seq = q->borrowed ? AMP__SEQ_TAIL : atomic_load_explicit(&q->submitted, memory_order_acquire);
    amp__future_complete_at(*out, (amp__point){seq ? q : NULL, seq}, NULL, NULL);
    return AMP_OK;
}

/* -------------------------------------------------------- continuations
 * One thread per process runs them ("hipamp-then", started by the first
 * amp_future_then). It takes the pending list, polls each entry's point
 * without blocking, runs the callbacks of those that completed, one at a
 * time, and sleeps a little longer each round in which none did (50 us to
 * 2 ms), or on its condition while there is nothing to watch. Polling, not
 * a blocking wait on one future: a slow future must not hold back the
 * callbacks of others. The list lock is a leaf: nothing else is taken
 * while holding it, and callbacks run without it. */

typedef struct amp__then {
    struct amp__then *next;
    amp__future_share *sh;    /* a reference of its own: the future may be destroyed first */
    amp_future_callback fn;
    void *user;
} amp__then;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;      /* something was added, or stop */
    pthread_cond_t idle;      /* the thread left its round (for the exit handler) */
    amp__then *head, **tail;  /* in the order registered */
    bool started, stop, busy;
    pthread_t thread;         /* the continuation thread, once started */
} amp__then_q = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .idle = PTHREAD_COND_INITIALIZER};

static void amp__then_free(amp__then *t)
{
    amp__future_share_release(t->sh);
    free(t);
}

/* Whether an entry kept back this round waits on q: a later entry of the
 * same queue must wait behind it, even if its own work has completed since
 * the earlier one was polled (work of one queue completes in queue order,
 * and callbacks of one queue's futures run in registration order). */
static bool amp__then_queue_held(const amp__then *kept, const amp_accelerator_view *q)
{
    for (; q && kept; kept = kept->next)
        if (kept->sh->done.q == q) return true;
    return false;
}

/* One round over the entries taken from the list: run the completed ones,
 * give back the rest (in order). Returns how many ran. */
static int amp__then_round(amp__then *list, amp__then **rest)
{
    int ran = 0;
    amp__then **keep = rest;
    *rest = NULL;
    while (list) {
        amp__then *t = list;
        list = t->next;
        t->next = NULL;
        bool done = false;
        amp_status st = AMP_OK;
        amp__future_share *f = t->sh;
        if (!amp__then_queue_held(*rest, f->done.q)) st = amp__point_query_at(f->done, f->t1, &done, &f->ok);
        if (st == AMP_OK && !done) {
            *keep = t;
            keep = &t->next;
            continue;
        }
        /* Completed (or the query itself failed: that is its outcome). The
         * wait returns the work's status without blocking. */
        if (st == AMP_OK) st = amp__point_wait_at(f->done, f->t1, NULL, &f->ok);
        t->fn(st, t->user);
        amp__then_free(t);
        ++ran;
    }
    return ran;
}

static void *amp__then_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "hipamp-then");
    long nap_us = 50;
    pthread_mutex_lock(&amp__then_q.lock);
    for (;;) {
        while (!amp__then_q.head && !amp__then_q.stop) pthread_cond_wait(&amp__then_q.wake, &amp__then_q.lock);
        if (amp__then_q.stop) break;
        amp__then *list = amp__then_q.head;
        amp__then_q.head = NULL;
        amp__then_q.tail = &amp__then_q.head;
        amp__then_q.busy = true;
        pthread_mutex_unlock(&amp__then_q.lock);
        amp__then *rest = NULL;
        int ran = amp__then_round(list, &rest);
        pthread_mutex_lock(&amp__then_q.lock);
        amp__then_q.busy = false;
        pthread_cond_broadcast(&amp__then_q.idle);
        if (rest) {
            /* Back in front of what was added meanwhile: registration order. */
            amp__then *last = rest;
            while (last->next) last = last->next;
            last->next = amp__then_q.head;
            if (!amp__then_q.head) amp__then_q.tail = &last->next;
            amp__then_q.head = rest;
        }
        if (ran) nap_us = 50;
        if (amp__then_q.head && !amp__then_q.stop) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += nap_us * 1000;
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec += 1;
                until.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&amp__then_q.wake, &amp__then_q.lock, &until);
            if (nap_us < 2000) nap_us *= 2;
        }
    }
    pthread_mutex_unlock(&amp__then_q.lock);
    return NULL;
}

/* At exit: let the thread finish the round it is in (a callback may be
 * running), then stop it, so that it never polls a driver being torn down.
 * Continuations still pending are not run. A callback that calls exit runs
 * this on the continuation thread itself, whose round cannot finish until
 * exit returns (it does not): it only stops the thread. */
static void amp__then_exit(void)
{
    pthread_mutex_lock(&amp__then_q.lock);
    amp__then_q.stop = true;
    pthread_cond_broadcast(&amp__then_q.wake);
    bool on_it = amp__then_q.started && pthread_equal(pthread_self(), amp__then_q.thread);
    while (amp__then_q.busy && !on_it) pthread_cond_wait(&amp__then_q.idle, &amp__then_q.lock);
    pthread_mutex_unlock(&amp__then_q.lock);
}

/* A forked child has no continuation thread and must not run the parent's
 * callbacks: it starts afresh. */
static void amp__then_child(void)
{
    pthread_mutex_init(&amp__then_q.lock, NULL);
    pthread_cond_init(&amp__then_q.wake, NULL);
    pthread_cond_init(&amp__then_q.idle, NULL);
    amp__then_q.head = NULL;
    amp__then_q.tail = &amp__then_q.head;
    amp__then_q.started = amp__then_q.busy = amp__then_q.stop = false;
}

static pthread_once_t amp__then_once = PTHREAD_ONCE_INIT;
static void amp__then_init(void)
{
    amp__then_q.tail = &amp__then_q.head;
    atexit(amp__then_exit);
    pthread_atfork(NULL, NULL, amp__then_child);
}

amp_status amp_future_then(amp_future *f, amp_future_callback fn, void *user)
{
    AMP__HANDLE_OK(f, AMP__HANDLE_FUTURE);
    AMP__NOT_NULL(fn);
    pthread_once(&amp__then_once, amp__then_init);
    amp__then *t = calloc(1, sizeof *t);
    if (!t) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "amp_future_then: out of host memory");
    t->fn = fn;
    t->user = user;
    amp__future_share *sh = atomic_load_explicit(&f->share, memory_order_acquire);
    if (!sh) {
        /* The first continuation: the events move to a share (two threads
         * may race here; one share wins, the other is dropped unused). */
        amp__future_share *mine = calloc(1, sizeof *mine);
        if (!mine) {
            free(t);
            return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "amp_future_then: out of host memory");
        }
        atomic_init(&mine->refs, 1); /* the future's */
        amp__point_set(&mine->done, f->done);
        mine->t0 = f->t0;
        mine->t1 = f->t1;
        atomic_init(&mine->ok, atomic_load_explicit(&f->ok, memory_order_acquire));
        if (atomic_compare_exchange_strong_explicit(&f->share, &sh, mine, memory_order_acq_rel,
                                                    memory_order_acquire)) {
            sh = mine;
        } else {
            amp__point_set(&mine->done, (amp__point){NULL, 0});
            free(mine);
        }
    }
    atomic_fetch_add_explicit(&sh->refs, 1, memory_order_relaxed);
    t->sh = sh;
    amp_status st = AMP_OK;
    pthread_mutex_lock(&amp__then_q.lock);
    if (amp__then_q.stop) {
        st = amp__fail(AMP_ERROR_UNSUPPORTED, "amp_future_then: the process is exiting");
    } else if (!amp__then_q.started) {
        pthread_t th;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&th, &at, amp__then_main, NULL) != 0) {
            st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "amp_future_then: cannot start the continuation thread");
        } else {
            amp__then_q.thread = th;
            amp__then_q.started = true;
        }
        pthread_attr_destroy(&at);
    }
    if (st == AMP_OK) {
        *amp__then_q.tail = t;
        amp__then_q.tail = &t->next;
        pthread_cond_signal(&amp__then_q.wake);
    }
    pthread_mutex_unlock(&amp__then_q.lock);
    if (st != AMP_OK) amp__then_free(t);
    return st;
}
