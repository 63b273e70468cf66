/* cpu_pool.c — the CPU accelerator's thread pool: threads started on first use (and again in a forked child) take chunks of whichever published job has some left, spinning a while before they sleep; a launcher publishes its job, runs it too, and waits for the threads to leave it. */
#include "cpu_internal.h"
#include "base/lock.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

unsigned amp__cpu_fork_generation;

/* The pool: threads that take chunks of whichever published job has some
 * left. Several launches run at once (from different threads or queues):
 * each launching thread runs its own job's chunks with its own worker slot
 * and publishes the job for the pool threads to join.
 * Lock order: start_mu -> mu -> job.err_lock.
 *
 * Spinning. Waking a sleeping thread is a futex call by the launcher and a
 * trip through the scheduler for the thread, and the woken threads then
 * queue on mu: for a small launch that costs far more than its work
 * (docs/architecture.md, the CPU accelerator). So a pool thread that finds no job first polls `published` for spin_ns
 * (AMP_CPU_SPIN_US) without the lock, pausing the core between reads, and
 * sleeps on `work` only then; launches that come back to back (a solver's
 * iterations, a graph's replay) find the threads awake, as OpenMP runtimes
 * do (GOMP_SPINCOUNT, KMP_BLOCKTIME). The launcher waiting for the pool
 * threads to leave its job spins on refs likewise before it sleeps on
 * `idle`. Invariants that keep a job from being missed or freed early:
 * - published is bumped under mu at every publish. A thread reads it under
 *   mu in the critical section in which it found no job, so any job
 *   published after that changes it, and the spinner goes back to pick.
 * - A thread counts itself in sleepers (or spinners) in the critical
 *   section in which it found no job, and a launcher reads the counts
 *   under mu when it publishes: it signals only as many sleepers as it
 *   needs beyond the spinners, none (no futex call) when enough spin. A
 *   spinner whose time runs out picks again under mu before it sleeps, so
 *   a spinner counted on never misses the job, and a sleeper is not
 *   missed because it waits on `work` in the same critical section in
 *   which it found nothing (pthread_cond_wait releases mu atomically).
 * - refs changes only under mu, with a release store; picking is under
 *   mu, and a closing launcher takes its job out of the table under mu,
 *   so after that refs only falls. The launcher may see refs reach 0
 *   without mu and then reuse or free the job (it may live on the
 *   launcher's stack): a thread leaving a job reads `closing` before its
 *   store of refs and touches the job no more after it. */
enum { AMP__CPU_MAX_JOBS = 64 };
static struct {
    pthread_once_t once;
    pthread_mutex_t start_mu; /* serializes starting the threads (again after fork) */
    pthread_mutex_t mu;       /* guards jobs/njobs/rr, sleepers/spinners and each job's refs/closing */
    pthread_cond_t work, idle;
    amp__cpu_job *jobs[AMP__CPU_MAX_JOBS]; /* published jobs that may have chunks left */
    int njobs, rr;
    _Atomic unsigned published; /* bumped (under mu) at each publish; spinners poll it */
    int sleepers; /* pool threads waiting on `work` */
    int spinners; /* pool threads polling `published` */
    uint64_t spin_ns; /* how long they poll (AMP_CPU_SPIN_US), 0: never; set before the threads start */
    int nthreads;  /* threads a job may use: the pool's and the launching one */
    int started;   /* pool threads running */
    /* amp__cpu_fork_generation + 1 once started in this process (threads
     * do not survive fork); 0: never. Read without a lock by every launch:
     * the fast path of amp__cpu_pool_start. */
    _Atomic unsigned started_gen;
    size_t stack_size; /* fiber stack bytes */
    amp__cpu_worker *workers; /* the pool threads' slots */
    pthread_key_t key;        /* a launching thread's own slot, freed when it exits */
} amp__cpu_pool = {.once = PTHREAD_ONCE_INIT};

/* ------------------------------------------------------------- spinning */

/* A bounded spin (amp__cpu_spin). The clock is read only every
 * AMP__CPU_SPIN_POLLS pauses (it is a system call on some virtual
 * machines), and first then: a wait that ends within them reads no clock
 * at all.
 * A spinner that finds more than AMP__CPU_SPIN_PREEMPTED_NS between two
 * reads was descheduled: its core is wanted by another thread (another
 * process's, or one of more threads than cores), and a spinner delays it,
 * a thread of its own launch perhaps. Then that thread does not spin for
 * AMP__CPU_SPIN_OFF_NS (amp__cpu_spin_off_until, its own): it sleeps at
 * once, as with AMP_CPU_SPIN_US=0, and a launch wakes it through the
 * kernel. The others spin on. Where the cores are oversubscribed every
 * spinner is descheduled soon and all of them stop; where one is now and
 * then (a daemon, the hypervisor: on the 16-core host of the H200 machine
 * 6 to 9 times in a 40 s BabelStream run), one thread pays a wake-up for
 * 50 ms, where stopping the whole pool made every launch of those 50 ms
 * wake the pool's threads through the kernel (TeaLeaf's CG on 1000^2 cells
 * through direct launches in 0.94 of the time, seven pairs of runs:
 * bench/results/2026-12-01-h200-host-cpu-spin-off-per-thread.md).
 * A replay team's member (own) is a spinner apart: descheduled, it leaves
 * the team, and only it, and its thread's spinning stays on; a thread's
 * spinning being off does not end its wait as a member either. On a host
 * shared with other work a spinner is descheduled often, and teams left
 * empty for most of a replay when a member's being so stopped spinning. */
enum { AMP__CPU_SPIN_POLLS = 64 };
#define AMP__CPU_SPIN_PREEMPTED_NS 50000u
#define AMP__CPU_SPIN_OFF_NS 50000000u

/* amp__now_ns() before which the calling thread does not spin. */
static _Thread_local uint64_t amp__cpu_spin_off_until;

bool amp__cpu_spin_more(amp__cpu_spin *s)
{
    amp__pause();
    if (++s->polls % AMP__CPU_SPIN_POLLS) return true;
    uint64_t now = amp__now_ns();
    if (!s->deadline) {
        s->deadline = now + s->ns;
    } else if (now - s->last > AMP__CPU_SPIN_PREEMPTED_NS) {
        if (!s->own) amp__cpu_spin_off_until = now + AMP__CPU_SPIN_OFF_NS;
        return false;
    }
    s->last = now;
    return now < s->deadline && (s->own || now >= amp__cpu_spin_off_until);
}

/* mu for a pool thread that spun: the spinners that saw a publish all want
 * it at once, and each holds it briefly (a pick), so they try it for what
 * is left of their spin rather than queue in the kernel. */
static void amp__cpu_lock_after_spin(amp__cpu_spin *sp)
{
    while (pthread_mutex_trylock(&amp__cpu_pool.mu) != 0)
        if (!amp__cpu_spin_more(sp)) {
            pthread_mutex_lock(&amp__cpu_pool.mu);
            return;
        }
}

/* --------------------------------------------------------------- threads */

/* A published job with chunks left and room for one more pool thread
 * (its launcher runs it too: nthreads - 1 of them), taken in turn (mu
 * held). */
static amp__cpu_job *amp__cpu_pick(void)
{
    for (int i = 0; i < amp__cpu_pool.njobs; ++i) {
        int k = (amp__cpu_pool.rr + i) % amp__cpu_pool.njobs;
        amp__cpu_job *j = amp__cpu_pool.jobs[k];
        if (!atomic_load_explicit(&j->stop, memory_order_relaxed) &&
            atomic_load_explicit(&j->next, memory_order_relaxed) < j->total &&
            atomic_load_explicit(&j->refs, memory_order_relaxed) < j->nthreads - 1) {
            amp__cpu_pool.rr = k + 1;
            return j;
        }
    }
    return NULL;
}

/* A pool thread: takes jobs; without one it spins, then sleeps (the pool's
 * comment gives the invariants). mu is held at the top of the loop. */
static void *amp__cpu_thread_main(void *arg)
{
    amp__cpu_worker *w = arg;
    bool may_spin = true; /* false once a spin ran out with nothing published */
    pthread_mutex_lock(&amp__cpu_pool.mu);
    for (;;) {
        amp__cpu_job *j = amp__cpu_pick();
        if (!j && may_spin && amp__cpu_pool.spin_ns) {
            unsigned seen = atomic_load_explicit(&amp__cpu_pool.published, memory_order_relaxed);
            amp__cpu_spin sp = {.ns = amp__cpu_pool.spin_ns};
            amp__cpu_pool.spinners++;
            pthread_mutex_unlock(&amp__cpu_pool.mu);
            while (atomic_load_explicit(&amp__cpu_pool.published, memory_order_relaxed) == seen &&
                   (may_spin = amp__cpu_spin_more(&sp)))
                ;
            amp__cpu_lock_after_spin(&sp);
            amp__cpu_pool.spinners--;
            continue; /* pick again under mu, whatever ended the spin */
        }
        if (!j) {
            amp__cpu_pool.sleepers++;
            pthread_cond_wait(&amp__cpu_pool.work, &amp__cpu_pool.mu);
            amp__cpu_pool.sleepers--;
            may_spin = true;
            continue;
        }
        atomic_store_explicit(&j->refs, atomic_load_explicit(&j->refs, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        pthread_mutex_unlock(&amp__cpu_pool.mu);
        amp__cpu_run_chunks(j, w, amp__cpu_pool.stack_size);
        w->job = NULL;
        may_spin = true;
        pthread_mutex_lock(&amp__cpu_pool.mu);
        /* Release: the launcher that reads 0 sees the chunks' writes. After
         * this store j may be gone (the pool's comment). */
        bool closing = j->closing;
        int refs = atomic_load_explicit(&j->refs, memory_order_relaxed) - 1;
        atomic_store_explicit(&j->refs, refs, memory_order_release);
        if (refs == 0 && closing) pthread_cond_broadcast(&amp__cpu_pool.idle);
    }
    return NULL;
}

/* -------------------------------------------------------------- starting */

amp__cpu_worker *amp__cpu_my_worker(void)
{
    amp__cpu_worker *w = pthread_getspecific(amp__cpu_pool.key);
    if (!w && (w = calloc(1, sizeof *w)) && pthread_setspecific(amp__cpu_pool.key, w) != 0) {
        free(w);
        w = NULL;
    }
    return w;
}

/* fork waits until no thread holds the pool's locks, so the child never
 * inherits one locked by a thread it does not have; the child starts its
 * own threads at its first launch (amp__cpu_pool_start). */
static void amp__cpu_atfork_prepare(void)
{
    pthread_mutex_lock(&amp__cpu_pool.start_mu);
    pthread_mutex_lock(&amp__cpu_pool.mu);
}
static void amp__cpu_atfork_parent(void)
{
    pthread_mutex_unlock(&amp__cpu_pool.mu);
    pthread_mutex_unlock(&amp__cpu_pool.start_mu);
}
/* The child has none of the parent's pool threads, but its condition
 * variables still count those that slept on them: a signal would wait for
 * them for ever (glibc), holding mu. They start afresh, before mu goes. */
static void amp__cpu_atfork_child(void)
{
    pthread_cond_init(&amp__cpu_pool.work, NULL);
    pthread_cond_init(&amp__cpu_pool.idle, NULL);
    amp__cpu_atfork_parent();
    amp__cpu_fork_generation++;
}

static void amp__cpu_pool_once(void)
{
    pthread_mutex_init(&amp__cpu_pool.start_mu, NULL);
    /* Every pool thread takes mu at the start and end of each job, all at
     * once when spinners see a publish: glibc's adaptive mutex spins a
     * little before it sleeps in the kernel. */
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
    pthread_mutex_init(&amp__cpu_pool.mu, &attr);
    pthread_mutexattr_destroy(&attr);
    pthread_cond_init(&amp__cpu_pool.work, NULL);
    pthread_cond_init(&amp__cpu_pool.idle, NULL);
    (void)pthread_key_create(&amp__cpu_pool.key, amp__cpu_worker_free);
    pthread_atfork(amp__cpu_atfork_prepare, amp__cpu_atfork_parent, amp__cpu_atfork_child);
}

/* Starts the pool threads on first use, and again in a forked child
 * (threads do not survive fork; the slots and their stacks, being plain
 * memory, do, and no job of the parent's is carried over). Fewer threads
 * than asked is not an error: the launching thread alone can run
 * everything. */
static amp_status amp__cpu_pool_start(amp__cpu_device *d)
{
    /* A fork is told by the generation its atfork handler bumps (as the
     * queues tell it), not by getpid: on a paravirtualised VM a system
     * call per launch is most of a small launch's cost
     * (docs/architecture.md, the CPU accelerator). A child made without
     * the atfork handlers (_Fork, a raw clone) is not told, as the queues
     * are not. */
    unsigned gen = amp__cpu_fork_generation + 1;
    if (atomic_load_explicit(&amp__cpu_pool.started_gen, memory_order_acquire) == gen) return AMP_OK;
    pthread_mutex_lock(&amp__cpu_pool.start_mu);
    if (amp__cpu_pool.workers && atomic_load_explicit(&amp__cpu_pool.started_gen, memory_order_relaxed) == gen) {
        pthread_mutex_unlock(&amp__cpu_pool.start_mu);
        return AMP_OK;
    }
    if (!amp__cpu_pool.workers) {
        amp__cpu_pool.workers = calloc((size_t)d->nthreads, sizeof *amp__cpu_pool.workers);
        if (!amp__cpu_pool.workers) {
            pthread_mutex_unlock(&amp__cpu_pool.start_mu);
            return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for the thread pool");
        }
        amp__cpu_pool.nthreads = d->nthreads;
        amp__cpu_pool.spin_ns = (uint64_t)d->spin_us * 1000;
    }
    pthread_mutex_lock(&amp__cpu_pool.mu);
    /* In a forked child: the parent's threads, counted here, are gone. */
    amp__cpu_pool.njobs = amp__cpu_pool.sleepers = amp__cpu_pool.spinners = 0;
    amp__cpu_pool.stack_size = d->stack_size;
    /* Pool threads take no signals: those belong to the application's
     * threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int started = 0;
    for (int i = 1; i < amp__cpu_pool.nthreads; ++i) {
        pthread_t t;
        amp__cpu_worker *w = &amp__cpu_pool.workers[started + 1];
        /* In a forked child the slot's parked contexts belonged to a
         * thread that is gone: made again at their next use. */
        amp__cpu_worker_abandon_contexts(w);
        w->job = NULL;
        w->home = started + 1;
        if (pthread_create(&t, NULL, amp__cpu_thread_main, w) != 0) break;
        pthread_detach(t);
        started++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    amp__cpu_pool.started = started;
    atomic_store_explicit(&amp__cpu_pool.started_gen, gen, memory_order_release);
    pthread_mutex_unlock(&amp__cpu_pool.mu);
    pthread_mutex_unlock(&amp__cpu_pool.start_mu);
    return AMP_OK;
}

void amp__cpu_pool_init(void) { pthread_once(&amp__cpu_pool.once, amp__cpu_pool_once); }

/* The calling thread's slot, the pool started. */
amp_status amp__cpu_launcher(amp__cpu_device *d, amp__cpu_worker **me)
{
    amp__cpu_pool_init();
    amp_status st = amp__cpu_pool_start(d);
    if (st != AMP_OK) return st;
    if (!(*me = amp__cpu_my_worker()))
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for a launching thread's state");
    return AMP_OK;
}

int amp__cpu_pool_threads(void) { return amp__cpu_pool.started + 1; }

uint64_t amp__cpu_pool_spin_ns(void) { return amp__cpu_pool.spin_ns; }

int amp__cpu_pool_slot(const amp__cpu_worker *w) { return (int)(w - amp__cpu_pool.workers); }

/* ------------------------------------------------------------------ jobs */

bool amp__cpu_job_publish(amp__cpu_job *j, int64_t nwake)
{
    bool published = false;
    pthread_mutex_lock(&amp__cpu_pool.mu);
    if (amp__cpu_pool.njobs < AMP__CPU_MAX_JOBS) {
        amp__cpu_pool.jobs[amp__cpu_pool.njobs++] = j;
        published = true;
        atomic_store_explicit(&amp__cpu_pool.published,
                              atomic_load_explicit(&amp__cpu_pool.published, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        /* Spinners will pick the job: wake only the sleepers needed
         * beyond them, and make no call when none sleeps. */
        nwake -= amp__cpu_pool.spinners;
        if (nwake >= amp__cpu_pool.sleepers && amp__cpu_pool.sleepers > 0)
            pthread_cond_broadcast(&amp__cpu_pool.work);
        else
            for (int64_t i = 0; i < nwake && i < amp__cpu_pool.sleepers; ++i)
                pthread_cond_signal(&amp__cpu_pool.work);
    }
    pthread_mutex_unlock(&amp__cpu_pool.mu);
    return published;
}

/* Out of the table, no thread enters j again, so refs only falls; the
 * threads still inside it are waited for spinning first (the pool's
 * comment): their last chunks are short. */
void amp__cpu_job_close(amp__cpu_job *j)
{
    pthread_mutex_lock(&amp__cpu_pool.mu);
    for (int i = 0; i < amp__cpu_pool.njobs; ++i)
        if (amp__cpu_pool.jobs[i] == j) {
            amp__cpu_pool.jobs[i] = amp__cpu_pool.jobs[--amp__cpu_pool.njobs];
            break;
        }
    if (atomic_load_explicit(&j->refs, memory_order_relaxed) > 0 && amp__cpu_pool.spin_ns) {
        pthread_mutex_unlock(&amp__cpu_pool.mu);
        amp__cpu_spin sp = {.ns = amp__cpu_pool.spin_ns};
        /* Acquire: at 0 the chunks' writes are seen. */
        while (atomic_load_explicit(&j->refs, memory_order_acquire) > 0)
            if (!amp__cpu_spin_more(&sp)) break;
        if (atomic_load_explicit(&j->refs, memory_order_acquire) == 0) return;
        pthread_mutex_lock(&amp__cpu_pool.mu);
    }
    if (atomic_load_explicit(&j->refs, memory_order_relaxed) > 0) {
        j->closing = true;
        while (atomic_load_explicit(&j->refs, memory_order_relaxed) > 0)
            pthread_cond_wait(&amp__cpu_pool.idle, &amp__cpu_pool.mu);
    }
    pthread_mutex_unlock(&amp__cpu_pool.mu);
}

/* A direct launch's take where the pool's threads spin between launches:
 * the thread's own block first (its home: the launching thread's is 0,
 * pool thread s's is s, as its rank in a replay team), then the others'.
 * So the same thread takes the same index range at every launch of a
 * size, as OpenMP's static schedule gives it, and finds the data of that
 * range in its own core's cache where the launch before left it; one
 * shared counter handed every thread other data at every launch (a Triad
 * over three arrays of 2^20 floats, in the caches of a 16-core host: 74-76
 * us, 37-42 with blocks). Taking from the others' blocks keeps the balance
 * a counter gave. Where the pool's threads sleep between launches (fewer
 * than AMP__CPU_SPIN_MIN_THREADS, or AMP_CPU_SPIN_US=0) a woken thread
 * joins tens of microseconds late, and launches keep the counter: with
 * blocks TeaLeaf's Jacobi on 2 threads took 5% longer. */
static bool amp__cpu_take_home(amp__cpu_job *j, const amp__cpu_worker *w, int64_t *b, int64_t *e)
{
    return amp__cpu_take_blocks(j, w->home % j->nparts, b, e);
}

/* Cuts j into blocks for nt threads in me's home_parts (made or grown
 * here). Without memory for them j runs on the shared counter, which is
 * slower on cached data, never wrong. No block smaller than a chunk: at
 * most nchunks of them. */
static void amp__cpu_home_blocks(amp__cpu_worker *me, amp__cpu_job *j, int nt, int64_t nchunks)
{
    int n = nchunks < nt ? (int)nchunks : nt;
    if (n > me->home_cap) {
        amp__cpu_block *p = amp__cpu_blocks_alloc(amp__cpu_pool.nthreads);
        if (!p) return;
        free(me->home_parts);
        me->home_parts = p;
        me->home_cap = amp__cpu_pool.nthreads;
    }
    amp__cpu_blocks_arm(j, me->home_parts, n);
    j->take = amp__cpu_take_home;
}

amp_status amp__cpu_job_run_on(amp__cpu_device *d, amp__cpu_job *j, int width)
{
    amp__cpu_worker *me;
    amp_status st = amp__cpu_launcher(d, &me);
    if (st != AMP_OK) return st;
    int nt = amp__cpu_pool.started + 1;
    if (width > 0 && width < nt) nt = width;
    int64_t nchunks = amp__cpu_job_arm(j, nt);
    bool published = false;
    /* Wake only as many threads as there are chunks beyond the caller's
     * first: small launches do not stampede every thread onto mu. */
    if (nt > 1 && nchunks > 1) {
        if (amp__cpu_pool.spin_ns) amp__cpu_home_blocks(me, j, nt, nchunks);
        published = amp__cpu_job_publish(j, nchunks - 1 < nt - 1 ? nchunks - 1 : nt - 1);
    }
    amp__cpu_run_chunks(j, me, d->stack_size);
    me->job = NULL;
    if (published) amp__cpu_job_close(j);
    /* No thread is inside j now (close waited for them): its blocks may go
     * to the next launch. */
    j->take = NULL;
    j->parts = NULL;
    j->nparts = 0;
    return amp__cpu_job_status(j);
}
