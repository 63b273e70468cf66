/* cpu_run.c — runs CPU-accelerator launches: a lazily created thread pool hands out chunks of work through an atomic counter; tiled kernels with a loop version run whole tiles as loops (on a per-thread stack sized for their context), the others as round-robin fibers on one thread; debug-mode and barrier errors stop the launch. */
#include "cpu_internal.h"
#include "lock.h"
#include "signature.h"

#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

unsigned amp__cpu_fork_generation;

/* ------------------------------------------------------------ structures */

enum { FIBER_IDLE = 0, FIBER_LIVE, FIBER_DONE };

typedef struct amp__cpu_worker amp__cpu_worker;

/* A fiber runs one work-item of each tile it is switched to, and parks
 * between tiles (its context is made once, when it first runs). */
typedef struct amp__cpu_fiber {
    amp__cpu_ctx ctx;
    amp__cpu_stack stack;
    amp__cpu_item item;
    amp__cpu_worker *w;
    int id;       /* local linear id within the tile */
    int state;    /* FIBER_* in the tile running now */
    bool started; /* its context runs amp__cpu_fiber_main */
} amp__cpu_fiber;

struct amp__cpu_job {
    amp__cpu_launch launch; /* what the kernel reads */
    amp__cpu_entry_fn entry;
    amp__cpu_entry_fn tiles; /* the loop version, or NULL: fibers */
    const amp__launch *l;    /* the core's, or own_l for a job that outlives the call */
    amp__launch own_l;       /* a queued job's: the kernel's name and signature (its
                                module's, which outlives the job), the pack after the job */
    amp__cpu_inflight *inflight; /* its module's count (queued jobs) */
    amp__cpu_widths *widths;     /* its kernel's launch widths (cpu_width.c) */
    amp__cpu_team *team;         /* a replay team's recruiting job: who picks it is a member */
    /* A launch on a team: its work in nparts blocks, the rank's own first
     * (amp__cpu_take_part); NULL: one counter, next. */
    struct amp__cpu_part *parts;
    int nparts;
    int64_t total; /* simple: work-items; tiled: tiles */
    int64_t min_chunk;
    int nthreads;  /* threads that may take chunks */
    _Atomic int64_t next;
    atomic_int stop; /* a failure was recorded: take no more chunks */
    pthread_mutex_t err_lock; /* leaf lock: guards status and msg */
    amp_status status;
    char *msg;    /* made with the first failure (NULL: no memory for it) */
    /* Pool threads inside this job: changed only under pool.mu, read
     * without it by the launcher waiting for them to leave (acquire: it
     * then sees what they wrote). */
    atomic_int refs;
    bool closing; /* the launcher sleeps on pool.idle until refs is 0; guarded by pool.mu */
};

/* Per-thread run state. Only the thread owning the slot touches it while a
 * job runs; slots persist across launches so fibers and their stacks are
 * reused. */
struct amp__cpu_worker {
    amp__cpu_job *job;
    int rank; /* in the replay team it is in (0: its leader) */
    amp__cpu_fiber **fibers; /* each allocated alone: a parked context's address stays */
    int nfibers; /* fibers with a stack */
    amp__cpu_ctx main; /* the thread's own context while its fibers run */
    /* The tile running now. Invariant while fibers run: arrived counts the
     * live fibers suspended at the current barrier; it returns to 0 when the
     * last one arrives, and fibers are resumed in round-robin order, so a
     * fiber is resumed only after its barrier was released. */
    int n, arrived, done;
    bool saw_barrier; /* some work-item of this tile met a barrier */
    bool loop_mode;   /* work-items 1..n-1 run as a plain loop */
    bool broken;      /* divergent barrier found: barriers are no-ops now */
    amp__cpu_item loop_item;
    /* Loop versions run on their own stack: their frame holds the tile's
     * tile_static memory and work-item context (up to
     * AMP__CPU_LOOP_FRAME_MAX), more than a caller's thread may have. */
    amp__cpu_stack tiles_stack;
    amp__cpu_ctx tiles_ctx;
    bool tiles_started; /* tiles_ctx runs amp__cpu_tiles_main (parked between chunks) */
    amp__cpu_item tiles_item;
    bool in_tiles; /* a loop version runs: a barrier call is an error */
};

/* The pool: threads that take chunks of whichever published job has some
 * left. Several launches run at once (from different threads or queues):
 * each launching thread runs its own job's chunks with its own worker slot
 * and publishes the job for the pool threads to join.
 * Lock order: start_mu -> mu -> job.err_lock.
 *
 * Spinning. Waking a sleeping thread is a futex call by the launcher and a
 * trip through the scheduler for the thread, and the woken threads then
 * queue on mu; on the H100 machine's 16-thread host a launch through the
 * pool cost 38 to 47 us that way, even for 4096 floats, most of a CG
 * iteration's seven launches (bench/results/2026-11-26-graphs-h100-final.md).
 * So a pool thread that finds no job first polls `published` for spin_ns
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
    _Atomic uint64_t spin_off_until; /* amp__now_ns() before which nobody spins (amp__cpu_spin_more) */
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

/* ------------------------------------------------------------- failures */

#define AMP__CPU_JOB_MSG 2048 /* bytes of a failed job's message */

static void amp__cpu_job_failv(amp__cpu_job *j, amp_status s, const char *fmt, va_list ap)
{
    pthread_mutex_lock(&j->err_lock);
    if (j->status == AMP_OK) {
        j->status = s;
        if ((j->msg = malloc(AMP__CPU_JOB_MSG))) vsnprintf(j->msg, AMP__CPU_JOB_MSG, fmt, ap);
    }
    pthread_mutex_unlock(&j->err_lock);
    atomic_store(&j->stop, 1);
}

static void amp__cpu_job_fail(amp__cpu_job *j, amp_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void amp__cpu_job_fail(amp__cpu_job *j, amp_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    amp__cpu_job_failv(j, s, fmt, ap);
    va_end(ap);
}

/* "(a, b, c)" */
static void amp__cpu_fmt_tuple(char *buf, size_t cap, const int32_t *v, int n)
{
    size_t k = 0;
    k += (size_t)snprintf(buf + k, cap - k, "(");
    for (int d = 0; d < n && k < cap; ++d)
        k += (size_t)snprintf(buf + k, cap - k, d ? ", %d" : "%d", v[d]);
    if (k < cap) snprintf(buf + k, cap - k, ")");
}

static void amp__cpu_local_of(const amp__cpu_launch *L, int id, int32_t *out)
{
    for (int d = L->rank - 1; d >= 0; --d) {
        out[d] = id % L->tile[d];
        id /= L->tile[d];
    }
}

/* Divergence ends the tile's barriers: they become no-ops so every fiber runs
 * to its end and the tile finishes (wrong results, reported; never a hang). */
static void amp__cpu_divergent(amp__cpu_worker *w, int id, const char *fmt, int count)
{
    const amp__cpu_launch *L = &w->job->launch;
    int32_t loc[3];
    char tb[64], lb[64], detail[256];
    amp__cpu_local_of(L, id, loc);
    amp__cpu_fmt_tuple(tb, sizeof tb, w->loop_item.tile, L->rank);
    amp__cpu_fmt_tuple(lb, sizeof lb, loc, L->rank);
    snprintf(detail, sizeof detail, fmt, count, count == 1 ? "" : "s");
    w->broken = true;
    amp__cpu_job_fail(w->job, AMP_ERROR_DEVICE,
                      "divergent barrier in kernel '%s', tile %s: work-item local %s %s "
                      "(every work-item of a tile must reach each barrier)",
                      w->job->l->kernel_name, tb, lb, detail);
}

/* ------------------------------------------------- callbacks from kernels */

static void amp__cpu_fiber_main(void *arg);

/* Fiber f takes its work-item of the tile: a fiber that never ran gets its
 * context; a parked one resumes where it parked. */
static void amp__cpu_fiber_go(amp__cpu_fiber *f)
{
    f->state = FIBER_LIVE;
    if (!f->started) {
        amp__cpu_ctx_make(&f->ctx, &f->stack, amp__cpu_fiber_main, f);
        f->started = true;
    }
}

/* Round-robin: the next fiber that has not returned, started if it has not
 * run in this tile yet. */
static void amp__cpu_switch_to_next(amp__cpu_worker *w, amp__cpu_fiber *from)
{
    int k = from->id;
    do k = k + 1 == w->n ? 0 : k + 1; while (w->fibers[k]->state == FIBER_DONE);
    amp__cpu_fiber *to = w->fibers[k];
    if (to->state == FIBER_IDLE) amp__cpu_fiber_go(to);
    amp__cpu_ctx_switch(&from->ctx, &to->ctx);
}

static void amp__cpu_barrier(amp__cpu_item *it)
{
    amp__cpu_worker *w = it->worker;
    amp__cpu_job *j = w->job;
    if (!j->launch.tiled) {
        amp__cpu_job_fail(j, AMP_ERROR_DEVICE,
                          "kernel '%s' is not tiled (AMP_KERNEL) but called a barrier "
                          "(__syncthreads); use AMP_TILED_KERNEL", j->l->kernel_name);
        return;
    }
    if (w->in_tiles) {
        /* The loop version has no barriers left: the transformation missed
         * one (a call it could not see through). Report, never wait. */
        if (!w->broken) {
            char tb[64];
            amp__cpu_fmt_tuple(tb, sizeof tb, it->tile, j->launch.rank);
            amp__cpu_job_fail(j, AMP_ERROR_DEVICE,
                              "kernel '%s' reached a barrier in its loop version (tile %s): the loop "
                              "transformation missed it; run with AMP_CPU_TILED=fibers and report this",
                              j->l->kernel_name, tb);
            w->broken = true;
        }
        return;
    }
    if (w->broken) return;
    w->saw_barrier = true;
    if (w->loop_mode) {
        amp__cpu_divergent(w, it->cur_local,
                           "reached a barrier that %d work-item%s (local 0) returned without reaching", 1);
        return;
    }
    amp__cpu_fiber *f = it->fiber;
    if (w->done > 0) {
        amp__cpu_divergent(w, f->id, "waits at a barrier that %d work-item%s returned without reaching",
                           w->done);
        return;
    }
    if (++w->arrived == w->n) w->arrived = 0; /* all here: released */
    if (w->n > 1) amp__cpu_switch_to_next(w, f);
}

/* A fiber's life: its work-item of each tile, then back to the thread or on
 * to the next fiber, where it parks until a later tile switches to it (no
 * fiber is suspended mid-item between tiles). Never returns, and its
 * context is never made again: each switch away from it is resumed, which
 * keeps the tools' state of its stack balanced (cpu_internal.h). */
static void amp__cpu_fiber_main(void *arg)
{
    amp__cpu_fiber *f = arg;
    amp__cpu_worker *w = f->w;
    amp__cpu_ctx_entered(&f->ctx);
    for (;;) {
        w->job->entry(&f->item);
        f->state = FIBER_DONE;
        w->done++;
        if (!w->broken && w->arrived > 0)
            amp__cpu_divergent(w, f->id, "returned while %d work-item%s wait at a barrier", w->arrived);
        /* Fast path (no barrier so far: only this fiber ran), or the tile is
         * complete: back to the thread. Otherwise on to the next fiber. */
        if (!w->saw_barrier || w->done == w->n)
            amp__cpu_ctx_switch(&f->ctx, &w->main);
        else
            amp__cpu_switch_to_next(w, f);
    }
}

static void amp__cpu_oob(amp__cpu_item *it, const void *data, const int32_t *idx,
                         const int32_t *ext, int32_t rank)
{
    amp__cpu_worker *w = it->worker;
    amp__cpu_job *j = w->job;
    if (atomic_load_explicit(&j->stop, memory_order_relaxed)) return; /* first one wins */
    const amp__signature *sig = j->l->sig;
    const char *pack = j->launch.pack;
    int param = -1;
    bool derived = false;
    for (int p = 0; p < sig->nparams && param < 0; ++p) {
        const amp__sig_param *sp = &sig->params[p];
        if (sp->kind != AMP_ARG_VIEW && sp->kind != AMP_ARG_ARRAY) continue;
        const char *base;
        memcpy(&base, pack + sp->offset, sizeof base);
        if (base == (const char *)data) {
            param = p;
            break;
        }
        /* A projection or section made inside the kernel: match the
         * parameter whose memory holds it. */
        int64_t span = 1;
        for (int d = 0; d < sp->rank; ++d) {
            int64_t stride;
            int32_t e;
            memcpy(&stride, pack + sp->offset + AMP__DESC_STRIDE_OFFSET + 8 * d, 8);
            memcpy(&e, pack + sp->offset + AMP__DESC_EXTENT_OFFSET(sp->rank) + 4 * d, 4);
            span += (int64_t)(e - 1) * stride;
        }
        if ((const char *)data >= base && (const char *)data < base + span * sp->elem_size) {
            param = p;
            derived = true;
        }
    }
    char ib[96], eb[96], where[160] = "";
    amp__cpu_fmt_tuple(ib, sizeof ib, idx, rank);
    amp__cpu_fmt_tuple(eb, sizeof eb, ext, rank);
    if (j->launch.tiled) {
        int32_t loc[3];
        char tb[64], lb[64];
        amp__cpu_local_of(&j->launch, it->cur_local, loc);
        amp__cpu_fmt_tuple(tb, sizeof tb, it->tile, j->launch.rank);
        amp__cpu_fmt_tuple(lb, sizeof lb, loc, j->launch.rank);
        snprintf(where, sizeof where, " by work-item local %s of tile %s", lb, tb);
    }
    if (param >= 0)
        amp__cpu_job_fail(j, AMP_ERROR_OUT_OF_BOUNDS,
                          "out-of-bounds access in kernel '%s': parameter %d (args[%d], %s%s) "
                          "accessed at index %s, outside its extent %s%s",
                          j->l->kernel_name, param, param,
                          sig->params[param].kind == AMP_ARG_ARRAY ? "array" : "array_view",
                          derived ? ", through a view derived from it in the kernel" : "",
                          ib, eb, where);
    else
        amp__cpu_job_fail(j, AMP_ERROR_OUT_OF_BOUNDS,
                          "out-of-bounds access in kernel '%s': a view made in the kernel "
                          "accessed at index %s, outside its extent %s%s",
                          j->l->kernel_name, ib, eb, where);
}

static void amp__cpu_fault(amp__cpu_item *it, const char *what)
{
    amp__cpu_worker *w = it->worker;
    amp__cpu_job_fail(w->job, AMP_ERROR_DEVICE, "kernel '%s': %s", w->job->l->kernel_name, what);
}

static void amp__cpu_diverge(amp__cpu_item *it, int32_t local, const char *what)
{
    amp__cpu_worker *w = it->worker;
    const amp__cpu_launch *L = &w->job->launch;
    int32_t loc[3], zero[3] = {0, 0, 0};
    char tb[64], lb[64], zb[64];
    amp__cpu_local_of(L, local, loc);
    amp__cpu_fmt_tuple(tb, sizeof tb, it->tile, L->rank);
    amp__cpu_fmt_tuple(lb, sizeof lb, loc, L->rank);
    amp__cpu_fmt_tuple(zb, sizeof zb, zero, L->rank);
    amp__cpu_job_fail(w->job, AMP_ERROR_DEVICE,
                      "divergent barrier in kernel '%s', tile %s: work-item local %s and work-item local %s "
                      "disagree on the condition of a%s %s that holds a barrier (every work-item of a tile "
                      "must reach each barrier)",
                      w->job->l->kernel_name, tb, lb, zb, what[0] == 'i' ? "n" : "", what);
}

/* --------------------------------------------------------------- running */

/* Fibers 0..n-1 with stacks; called before the first tile of a job. */
static amp_status amp__cpu_ensure_fibers(amp__cpu_worker *w, int n, size_t stack_size)
{
    if (w->nfibers >= n) return AMP_OK;
    /* Only the array of pointers moves: parked fibers stay where they are. */
    amp__cpu_fiber **fs = realloc(w->fibers, (size_t)n * sizeof *fs);
    if (!fs) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for %d fibers", n);
    w->fibers = fs;
    while (w->nfibers < n) {
        amp__cpu_fiber *x = calloc(1, sizeof *x);
        if (!x) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for %d fibers", n);
        amp_status st = amp__cpu_stack_alloc(stack_size, &x->stack);
        if (st != AMP_OK) {
            free(x);
            return st;
        }
        x->w = w;
        /* Stacks are a power-of-two-ish distance apart, so their tops would
         * all fall in the same L1/L2 cache sets and a switch would miss;
         * start each a few lines deeper than the last (colouring). */
        size_t span = x->stack.size / 4 < 65536 ? x->stack.size / 4 : 65536;
        size_t colour = ((size_t)w->nfibers * 320) % span / 64 * 64;
        x->stack.size -= colour;
        w->fibers[w->nfibers++] = x;
    }
    return AMP_OK;
}

static void amp__cpu_run_tile(amp__cpu_worker *w, amp__cpu_job *j, int64_t t)
{
    const amp__cpu_launch *L = &j->launch;
    amp__cpu_item base = {.launch = L, .worker = w};
    for (int d = L->rank - 1; d >= 0; --d) {
        base.tile[d] = (int32_t)(t % L->tiles[d]);
        t /= L->tiles[d];
    }
    w->n = L->tile_threads;
    w->arrived = w->done = 0;
    w->saw_barrier = w->loop_mode = w->broken = false;
    w->loop_item = base;
    for (int i = 0; i < w->n; ++i) {
        amp__cpu_fiber *f = w->fibers[i];
        f->id = i;
        f->state = FIBER_IDLE;
        f->item = base;
        f->item.begin = i;
        f->item.end = i + 1;
        f->item.fiber = f;
    }
    amp__cpu_fiber *f0 = w->fibers[0];
    amp__cpu_fiber_go(f0);
    amp__cpu_ctx_switch(&w->main, &f0->ctx);
    if (!w->saw_barrier && w->n > 1) {
        /* Fast path: work-item 0 met no barrier, so in a correct kernel none
         * does (the barrier callback reports one that does): a plain loop. */
        w->loop_mode = true;
        w->loop_item.begin = 1;
        w->loop_item.end = w->n;
        j->entry(&w->loop_item);
        w->loop_mode = false;
    }
}

/* Guided self-scheduling: each take is a share of what remains (half of it
 * spread over the threads), never below min_chunk, so the last pieces are
 * small and a thread the system stalls mid-chunk holds the others up
 * briefly. [*b, *e) or false when all is taken. */
static bool amp__cpu_take(amp__cpu_job *j, int64_t *b, int64_t *e)
{
    int64_t c = atomic_load_explicit(&j->next, memory_order_relaxed);
    for (;;) {
        int64_t rem = j->total - c;
        if (rem <= 0) return false;
        int64_t sz = rem / (2 * (int64_t)j->nthreads);
        if (sz < j->min_chunk) sz = j->min_chunk;
        if (sz > rem) sz = rem;
        if (atomic_compare_exchange_weak_explicit(&j->next, &c, c + sz, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            *b = c;
            *e = c + sz;
            return true;
        }
    }
}

/* A team launch's block of work: [next, end), taken from the front, and
 * whether a member holds the rank it belongs to (amp__cpu_team_claim).
 * Each on a line of its own. */
typedef struct amp__cpu_part {
    _Alignas(64) _Atomic int64_t next;
    int64_t end;
    atomic_bool taken;
} amp__cpu_part;

/* A team launch's next chunk for the member of this rank: from its own
 * block first, half of what is left of it at a time (never below
 * min_chunk), then from the others' in turn. Block b is the same index
 * range at every launch of a width, and a replay's launches mostly run
 * over the same arrays by the same index, so a member finds its block's
 * data in its own core's cache, where one shared counter hands each
 * thread other data at every launch (the replay team's comment). */
static bool amp__cpu_take_part(amp__cpu_job *j, int rank, int64_t *b, int64_t *e)
{
    for (int k = 0; k < j->nparts; ++k) {
        amp__cpu_part *p = &j->parts[(rank + k) % j->nparts];
        int64_t c = atomic_load_explicit(&p->next, memory_order_relaxed);
        while (c < p->end) {
            int64_t rem = p->end - c, sz = rem / 2 > j->min_chunk ? rem / 2 : j->min_chunk;
            if (sz > rem) sz = rem;
            if (atomic_compare_exchange_weak_explicit(&p->next, &c, c + sz, memory_order_relaxed,
                                                      memory_order_relaxed)) {
                *b = c;
                *e = c + sz;
                return true;
            }
        }
    }
    return false;
}

static bool amp__cpu_next_chunk(amp__cpu_job *j, amp__cpu_worker *w, int64_t *b, int64_t *e)
{
    return j->parts ? amp__cpu_take_part(j, w->rank, b, e) : amp__cpu_take(j, b, e);
}

/* Runs on the worker's loop stack: the tiles of w->tiles_item, then back,
 * parking there until the next chunk (as fibers do). */
static void amp__cpu_tiles_main(void *arg)
{
    amp__cpu_worker *w = arg;
    amp__cpu_ctx_entered(&w->tiles_ctx);
    for (;;) {
        w->job->tiles(&w->tiles_item);
        amp__cpu_ctx_switch(&w->tiles_ctx, &w->main);
    }
}

static void amp__cpu_run_tiles(amp__cpu_job *j, amp__cpu_worker *w, int64_t c, int64_t e)
{
    w->tiles_item = (amp__cpu_item){.launch = &j->launch, .begin = c, .end = e, .worker = w};
    w->in_tiles = true;
    w->broken = false;
    if (!w->tiles_started) {
        amp__cpu_ctx_make(&w->tiles_ctx, &w->tiles_stack, amp__cpu_tiles_main, w);
        w->tiles_started = true;
    }
    amp__cpu_ctx_switch(&w->main, &w->tiles_ctx);
    w->in_tiles = false;
}

static void amp__cpu_team_member(amp__cpu_job *recruit, amp__cpu_worker *w, size_t stack_size);

static void amp__cpu_run_chunks(amp__cpu_job *j, amp__cpu_worker *w, size_t stack_size)
{
    if (j->team) {
        amp__cpu_team_member(j, w, stack_size);
        return;
    }
    w->job = j;
    /* Slot 0 runs on whichever thread launches: its context is that
     * thread's (the tools relearn it). */
    amp__cpu_ctx_thread(&w->main);
    if (j->tiles) {
        if (!w->tiles_stack.map) {
            amp_status st = amp__cpu_stack_alloc(AMP__CPU_LOOP_FRAME_MAX + stack_size, &w->tiles_stack);
            if (st != AMP_OK) {
                amp__cpu_job_fail(j, st, "%s", amp_last_error());
                return;
            }
        }
        int64_t c, e;
        while (!atomic_load_explicit(&j->stop, memory_order_relaxed) && amp__cpu_next_chunk(j, w, &c, &e))
            amp__cpu_run_tiles(j, w, c, e);
        return;
    }
    if (j->launch.tiled) {
        amp_status st = amp__cpu_ensure_fibers(w, j->launch.tile_threads, stack_size);
        if (st != AMP_OK) {
            /* amp__fail wrote this thread's message; move it to the job. */
            amp__cpu_job_fail(j, st, "%s", amp_last_error());
            return;
        }
    }
    for (;;) {
        if (atomic_load_explicit(&j->stop, memory_order_relaxed)) break;
        int64_t c, e;
        if (!amp__cpu_next_chunk(j, w, &c, &e)) break;
        if (!j->launch.tiled) {
            amp__cpu_item it = {.launch = &j->launch, .begin = c, .end = e, .worker = w};
            j->entry(&it);
            continue;
        }
        for (int64_t t = c; t < e; ++t) {
            if (atomic_load_explicit(&j->stop, memory_order_relaxed)) break;
            amp__cpu_run_tile(w, j, t);
        }
    }
}

/* ------------------------------------------------------------------ pool */

/* A bounded spin: amp__cpu_spin_more pauses the core once and says whether
 * to go on. The clock is read only every AMP__CPU_SPIN_POLLS pauses (it is
 * a system call on some virtual machines), and first then: a wait that
 * ends within them reads no clock at all.
 * A spinner that finds more than AMP__CPU_SPIN_PREEMPTED_NS between two
 * reads was descheduled: the cores are wanted by other threads (other
 * processes, or more threads than cores), and a spinner delays them, the
 * threads of its own launch included. Then no thread of the pool spins for
 * AMP__CPU_SPIN_OFF_NS (pool.spin_off_until): they sleep at once, as with
 * AMP_CPU_SPIN_US=0.
 * A replay team's member (own) is a spinner apart: descheduled, it leaves
 * the team, and only it; and the pool's spinning being off does not end
 * its wait. On the shared 16-vCPU host of the GPU machines a spinner finds
 * itself descheduled every few milliseconds, which turned spinning off
 * for most of a replay's launches and emptied its team. */
enum { AMP__CPU_SPIN_POLLS = 64 };
#define AMP__CPU_SPIN_PREEMPTED_NS 50000u
#define AMP__CPU_SPIN_OFF_NS 50000000u
typedef struct {
    uint64_t ns, deadline, last; /* deadline 0: no clock read yet */
    unsigned polls;
    bool own; /* a team member's wait */
} amp__cpu_spin;

static bool amp__cpu_spin_more(amp__cpu_spin *s)
{
    amp__pause();
    if (++s->polls % AMP__CPU_SPIN_POLLS) return true;
    uint64_t now = amp__now_ns();
    if (!s->deadline) {
        s->deadline = now + s->ns;
    } else if (now - s->last > AMP__CPU_SPIN_PREEMPTED_NS) {
        if (!s->own)
            atomic_store_explicit(&amp__cpu_pool.spin_off_until, now + AMP__CPU_SPIN_OFF_NS, memory_order_relaxed);
        return false;
    }
    s->last = now;
    return now < s->deadline &&
           (s->own || now >= atomic_load_explicit(&amp__cpu_pool.spin_off_until, memory_order_relaxed));
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

static void amp__cpu_worker_free(void *p)
{
    amp__cpu_worker *w = p;
    if (!w) return;
    for (int i = 0; i < w->nfibers; ++i) {
        amp__cpu_stack_free(&w->fibers[i]->stack);
        free(w->fibers[i]);
    }
    free(w->fibers);
    amp__cpu_stack_free(&w->tiles_stack);
    free(w);
}

/* The calling thread's own slot (its fibers and stacks persist across its
 * launches), or NULL without memory. */
static amp__cpu_worker *amp__cpu_my_worker(void)
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
static void amp__cpu_atfork_child(void)
{
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
     * queues tell it), not by getpid: a system call per launch cost most
     * of a small launch on the CI machine (a paravirtualised VM): a chain
     * of launches over 4096 floats took 7.1 us a launch with it, 0.7
     * without (bench/graph_work.c's chain, launched directly). A child
     * made without the atfork handlers (_Fork, a raw clone) is not told,
     * as the queues are not. */
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
        w->job = NULL;
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

/* --------------------------------------------------------------- launch */

/* Fill j (zeroed) for launch l of kernel. */
static void amp__cpu_job_init(amp__cpu_job *j, const amp__cpu_kernel *kernel, const amp__launch *l)
{
    j->l = l;
    pthread_mutex_init(&j->err_lock, NULL);
    amp__cpu_launch *L = &j->launch;
    L->abi = AMP__CPU_ABI;
    L->tiled = l->tiled;
    L->rank = l->extent.rank;
    L->tile_threads = 1;
    for (int k = 0; k < 3; ++k) L->tile[k] = L->tiles[k] = 1;
    int64_t total = 1;
    for (int k = 0; k < L->rank; ++k) {
        L->ext[k] = l->extent.v[k];
        if (l->tiled) {
            L->tile[k] = l->sig->tile[k];
            L->tiles[k] = l->extent.v[k] / L->tile[k];
            L->tile_threads *= L->tile[k];
            total *= L->tiles[k];
        } else {
            total *= l->extent.v[k];
        }
    }
    L->pack = l->pack;
    L->barrier = amp__cpu_barrier;
    L->oob = amp__cpu_oob;
    L->fault = amp__cpu_fault;
    L->diverge = amp__cpu_diverge;
    j->entry = kernel->entry;
    j->tiles = l->tiled ? kernel->tiles : NULL;
    j->widths = kernel->widths;
    j->total = total;
}

amp_status amp__cpu_job_new(const amp__cpu_kernel *kernel, const amp__launch *l, amp__cpu_job **out)
{
    *out = NULL;
    /* The pack follows the job in the same allocation, aligned by hand
     * (aligned_alloc costs five times malloc). */
    amp__cpu_job *j = malloc(sizeof *j + AMP__MAX_PARAM_ALIGN + l->pack_size);
    if (!j) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for a launch");
    memset(j, 0, sizeof *j);
    uintptr_t pack = ((uintptr_t)(j + 1) + AMP__MAX_PARAM_ALIGN - 1) / AMP__MAX_PARAM_ALIGN * AMP__MAX_PARAM_ALIGN;
    /* It runs after the call returns: the pack is copied; the kernel's name
     * and signature are its module's, which stays loaded while the job is
     * counted in flight. */
    j->own_l = *l;
    j->own_l.kernel_name = kernel->name;
    j->own_l.sig = &kernel->sig;
    j->own_l.pack = (const void *)pack;
    if (l->pack_size) memcpy((void *)pack, l->pack, l->pack_size);
    amp__cpu_job_init(j, kernel, &j->own_l);
    j->inflight = kernel->inflight;
    pthread_mutex_lock(&j->inflight->mu);
    j->inflight->n++;
    pthread_mutex_unlock(&j->inflight->mu);
    *out = j;
    return AMP_OK;
}

/* What job_free and a job on the stack both let go of. */
static void amp__cpu_job_fini(amp__cpu_job *j)
{
    pthread_mutex_destroy(&j->err_lock);
    free(j->msg);
}

void amp__cpu_job_free(amp__cpu_job *j)
{
    if (!j) return;
    if (j->inflight) {
        pthread_mutex_lock(&j->inflight->mu);
        if (--j->inflight->n == 0) pthread_cond_broadcast(&j->inflight->cv);
        pthread_mutex_unlock(&j->inflight->mu);
    }
    amp__cpu_job_fini(j);
    free(j);
}

void amp__cpu_job_rearm(amp__cpu_job *j)
{
    j->status = AMP_OK;
    free(j->msg);
    j->msg = NULL;
    j->closing = false;
}

int64_t amp__cpu_job_points(const amp__cpu_job *j) { return j->total * j->launch.tile_threads; }

/* Put j in the pool's table for up to nwake pool threads to join (busy
 * threads find it when they finish theirs); false with the table full:
 * the caller runs it alone. */
static bool amp__cpu_job_publish(amp__cpu_job *j, int64_t nwake)
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

/* Published job j, every chunk of which is taken: out of the table (no
 * thread enters it again, so refs only falls), then wait for the threads
 * still inside it, spinning first (the pool's comment): their last chunks
 * are short. */
static void amp__cpu_job_close(amp__cpu_job *j)
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

/* The calling thread's slot, the pool started. */
static amp_status amp__cpu_launcher(amp__cpu_device *d, amp__cpu_worker **me)
{
    pthread_once(&amp__cpu_pool.once, amp__cpu_pool_once);
    amp_status st = amp__cpu_pool_start(d);
    if (st != AMP_OK) return st;
    if (!(*me = amp__cpu_my_worker()))
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for a launching thread's state");
    return AMP_OK;
}

/* j made ready to run on nt threads (the launcher's included); its chunks.
 * Simple launches take at least 256 work-items a chunk so the counter
 * stays off the profile (amp__cpu_take), and alone all of them in one;
 * tiles go one at a time at the end. */
static int64_t amp__cpu_job_arm(amp__cpu_job *j, int nt)
{
    int64_t chunk = j->launch.tiled ? 1 : nt == 1 ? (j->total > 256 ? j->total : 256) : 256;
    j->min_chunk = chunk;
    j->nthreads = nt;
    atomic_init(&j->next, 0);
    atomic_init(&j->stop, 0);
    return (j->total + chunk - 1) / chunk;
}

/* j's own status, moved to the calling thread's last error. */
static amp_status amp__cpu_job_status(amp__cpu_job *j)
{
    if (j->status != AMP_OK)
        return amp__fail(j->status, "%s", j->msg ? j->msg : "the launch failed (no memory for its message)");
    return AMP_OK;
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
    if (nt > 1 && nchunks > 1) published = amp__cpu_job_publish(j, nchunks - 1 < nt - 1 ? nchunks - 1 : nt - 1);
    amp__cpu_run_chunks(j, me, d->stack_size);
    me->job = NULL;
    if (published) amp__cpu_job_close(j);
    return amp__cpu_job_status(j);
}

/* ------------------------------------------------------------ replay team
 * A graph's replay hands its launches to a team of pool threads engaged
 * for the whole replay, where a direct launch publishes each to the pool:
 * between two launches a member spins on the team's generation, without
 * the pool's lock, and joins the next launch as soon as it opens; the
 * replaying thread (rank 0) opens a launch with one store and waits for
 * the members inside it on one counter. The pool's way costs each launch
 * the lock four times a thread (publish, pick, leave, close) and a
 * sleeping thread's wake-up.
 * Members are recruited through the pool: a job that makes the thread
 * which picks it a member (amp__cpu_team_member) is published for the
 * replay's life, and lets in as many threads as the team has ranks (1 to
 * size - 1). A member holds a rank while it is in the team, the one of
 * its pool slot where that is free (so the same thread takes the same
 * block at every replay), else the lowest free one; a member that leaves
 * gives its rank back, and may pick the job again. Any number of them
 * may come, none included: a launch's work is cut into
 * one block a rank, and whoever is inside takes chunks from its own block
 * and then from the others' (amp__cpu_take_part), so the leader alone
 * finishes what nobody joins. A member leaves when the team ends, and
 * when it has waited spin_ns for a launch (the leader is running
 * something long alone, or the member was descheduled:
 * amp__cpu_spin_more).
 * What it gained, on the shared 16-vCPU host of the GPU machines (the CG
 * iteration of bench/graph_work.c, 7 launches over 65536 points,
 * bench/results/2026-11-27-session36-h100.md): with the hand-off alone,
 * launches of 65536 floats took 18 to 30 us on 8 to 16 threads, where
 * their work is 2 to 4 us a thread, and the iteration replayed 1.15x to
 * 1.20x faster than direct launches; with the blocks, which keep each
 * member on the same index range at every launch and so on data its own
 * core's cache holds, 8 to 12 us, and 1.58x to 1.94x.
 * Invariants (gen: even closed, odd a launch open; inside: members inside
 * the open launch):
 * - A member enters by incrementing inside, then reads gen again (both
 *   sequentially consistent); the leader closes by storing gen, then reads
 *   inside (likewise). So either the leader sees the member inside and
 *   waits for it, or the member sees the launch closed and leaves it
 *   untouched. After closing, the leader waits until inside is 0 (acquire:
 *   the members' writes are seen) before it touches the job or the team
 *   again, so a member inside reads a job that does not change.
 * - The job and its width are read by a member only once inside. */
struct amp__cpu_team {
    amp__cpu_job recruit; /* published while the team is engaged (amp__cpu_team_begin..end) */
    size_t stack_size;
    uint64_t spin_ns;
    int size;               /* threads the team may have, the leader included */
    int wanted;             /* the widest launch asked for since begin */
    amp__cpu_job *job;      /* the open launch: changed only while no member is inside it */
    amp__cpu_part *parts;   /* its blocks (amp__cpu_take_part) and the ranks, room for size */
    int nparts_cap;
    /* Each on a line of its own: members poll gen and end, and the entries
     * and exits of a launch's members would take them from them. */
    _Alignas(64) atomic_uint gen;
    atomic_bool end;
    _Alignas(64) atomic_int inside;
    char pad[64 - sizeof(atomic_int)];
};

amp__cpu_team *amp__cpu_team_new(void)
{
    /* Its lines apart (the struct's comment): aligned as declared. */
    amp__cpu_team *t = aligned_alloc(_Alignof(amp__cpu_team), sizeof *t);
    if (!t) return NULL;
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->recruit.err_lock, NULL);
    t->recruit.team = t;
    return t;
}

void amp__cpu_team_free(amp__cpu_team *t)
{
    if (!t) return;
    free(t->parts);
    amp__cpu_job_fini(&t->recruit);
    free(t);
}

/* A rank of t for pool thread w: its slot's where free, else the lowest
 * free one; 0: none. */
static int amp__cpu_team_claim(amp__cpu_team *t, const amp__cpu_worker *w)
{
    int own = (int)(w - amp__cpu_pool.workers);
    if (own >= 1 && own < t->size && !atomic_exchange(&t->parts[own].taken, true)) return own;
    for (int r = 1; r < t->size; ++r)
        if (!atomic_load_explicit(&t->parts[r].taken, memory_order_relaxed) && !atomic_exchange(&t->parts[r].taken, true))
            return r;
    return 0;
}

/* A pool thread that picked t's recruiting job: a member until the team
 * ends or no launch opens within spin_ns (the section's comment). */
static void amp__cpu_team_member(amp__cpu_job *recruit, amp__cpu_worker *w, size_t stack_size)
{
    amp__cpu_team *t = recruit->team;
    int rank = amp__cpu_team_claim(t, w);
    if (!rank) return;
    w->rank = rank;
    /* Even: a launch open now is joined. */
    unsigned seen = atomic_load_explicit(&t->gen, memory_order_relaxed) & ~1u;
    amp__cpu_spin sp = {.ns = t->spin_ns, .own = true};
    while (!atomic_load_explicit(&t->end, memory_order_relaxed)) {
        unsigned g = atomic_load_explicit(&t->gen, memory_order_relaxed);
        if (g == seen || !(g & 1)) {
            if (!amp__cpu_spin_more(&sp)) break;
            continue;
        }
        seen = g;
        atomic_fetch_add(&t->inside, 1);
        if (atomic_load(&t->gen) == g && rank < t->job->nthreads) {
            amp__cpu_run_chunks(t->job, w, stack_size);
            w->job = NULL;
        }
        atomic_fetch_sub_explicit(&t->inside, 1, memory_order_release);
        sp = (amp__cpu_spin){.ns = t->spin_ns, .own = true};
    }
    atomic_store(&t->parts[rank].taken, false);
}

amp_status amp__cpu_team_begin(amp__cpu_device *d, amp__cpu_team *t, int size)
{
    amp__cpu_worker *me;
    amp_status st = amp__cpu_launcher(d, &me);
    if (st != AMP_OK) return st;
    if (size > amp__cpu_pool.started + 1) size = amp__cpu_pool.started + 1;
    if (size > t->nparts_cap) {
        /* Without memory for its blocks the replay runs without members:
         * a team is worth no failure. */
        amp__cpu_part *p = aligned_alloc(_Alignof(amp__cpu_part), (size_t)size * sizeof *p);
        if (p) {
            free(t->parts);
            t->parts = p;
            t->nparts_cap = size;
        } else {
            size = 1;
        }
    }
    me->rank = 0;
    t->size = size;
    t->wanted = 1;
    t->stack_size = d->stack_size;
    t->spin_ns = amp__cpu_pool.spin_ns;
    t->job = NULL;
    atomic_init(&t->gen, 0);
    atomic_init(&t->inside, 0);
    atomic_init(&t->end, false);
    for (int r = 0; r < size; ++r) atomic_init(&t->parts[r].taken, false);
    /* Always chunks left (next stays 0): amp__cpu_pick lets in size - 1
     * threads at a time, as many as there are ranks. */
    t->recruit.total = 1;
    amp__cpu_job_rearm(&t->recruit);
    amp__cpu_job_arm(&t->recruit, size);
    atomic_init(&t->recruit.refs, 0);
    if (size > 1 && t->spin_ns && !amp__cpu_job_publish(&t->recruit, size - 1)) t->size = 1;
    return AMP_OK;
}

int amp__cpu_team_end(amp__cpu_team *t)
{
    atomic_store_explicit(&t->end, true, memory_order_relaxed);
    if (t->size > 1 && t->spin_ns) amp__cpu_job_close(&t->recruit);
    return t->wanted;
}

int amp__cpu_team_width(amp__cpu_team *t, int width)
{
    int nt = width > 0 && width < amp__cpu_pool.started + 1 ? width : amp__cpu_pool.started + 1;
    if (nt > t->wanted) t->wanted = nt;
    return nt < t->size ? nt : t->size;
}

amp_status amp__cpu_team_run(amp__cpu_device *d, amp__cpu_team *t, amp__cpu_job *j, int nt)
{
    amp__cpu_worker *me = amp__cpu_my_worker(); /* made by amp__cpu_team_begin */
    int64_t nchunks = amp__cpu_job_arm(j, nt);
    if (nt == 1 || nchunks == 1) {
        amp__cpu_run_chunks(j, me, d->stack_size);
        me->job = NULL;
        return amp__cpu_job_status(j);
    }
    /* Blocks of whole cache lines of floats where the work-items are
     * index points. */
    int64_t per = (j->total + nt - 1) / nt;
    if (!j->launch.tiled) per = (per + 63) / 64 * 64;
    for (int b = 0; b < nt; ++b) {
        int64_t from = b * per < j->total ? b * per : j->total;
        atomic_init(&t->parts[b].next, from);
        t->parts[b].end = from + per < j->total ? from + per : j->total;
    }
    j->parts = t->parts;
    j->nparts = nt;
    t->job = j;
    unsigned g = atomic_load_explicit(&t->gen, memory_order_relaxed);
    /* Release: a member that sees the launch open sees j armed. */
    atomic_store_explicit(&t->gen, g + 1, memory_order_release);
    amp__cpu_run_chunks(j, me, d->stack_size);
    me->job = NULL;
    atomic_store(&t->gen, g + 2);
    /* Members inside run what is left of their last chunks: short. */
    amp__cpu_spin sp = {.ns = t->spin_ns, .own = true};
    while (atomic_load(&t->inside) > 0)
        if (!amp__cpu_spin_more(&sp)) sched_yield();
    j->parts = NULL;
    return amp__cpu_job_status(j);
}

/* A direct launch runs on the width its kernel learned for its size
 * (cpu_width.c), searched downwards from every thread: a big kernel's
 * first launches run as they always did, on every thread, and the search
 * narrows a launch only while half the threads take a tenth off its
 * time. Launches through the pool cost about 2.7 us more for each
 * thread they involve on the shared 16-vCPU host of the GPU machines, so
 * there every thread made a chain of launches over 4096 floats cost 36 us
 * a launch and 6.3 on 4 threads, and the CG iteration of 65536 points
 * took 250 to 660 us on 16 threads and 189 to 207 on 8 or 4
 * (bench/results/2026-11-27-session34-h100.md). A graph's replay gained
 * its 1.3x to 1.8x over direct launches that way, not from the set-up it
 * skips. Above AMP__CPU_WIDTH_POINTS points a launch's work outweighs
 * the pool's cost, and it runs on every thread unlearned. */
amp_status amp__cpu_job_run_learning(amp__cpu_device *d, amp__cpu_job *j, amp__cpu_team *team)
{
    int64_t points = amp__cpu_job_points(j);
    if (d->nthreads < 2) return amp__cpu_job_run_on(d, j, 0);
    bool timed;
    amp__cpu_handoff how = team ? AMP__CPU_HANDOFF_TEAM : AMP__CPU_HANDOFF_POOL;
    /* A team is at most the threads the pool started (amp__cpu_team_begin
     * started it): a search from more would ask for a width no team has. */
    int threads = team && amp__cpu_pool.started + 1 < d->nthreads ? amp__cpu_pool.started + 1 : d->nthreads;
    int width = amp__cpu_widths_pick(j->widths, points, how, threads, &timed);
    /* A team narrower than the width asked for runs the launch on all of
     * it; the time, taken at another width, is not counted, and the next
     * replay's team is wide enough (amp__cpu_team_end). */
    if (team) width = amp__cpu_team_width(team, width);
    uint64_t t0 = timed ? amp__now_ns() : 0;
    amp_status st = team ? amp__cpu_team_run(d, team, j, width) : amp__cpu_job_run_on(d, j, width);
    if (timed && st == AMP_OK) amp__cpu_widths_took(j->widths, points, how, width, amp__now_ns() - t0);
    return st;
}

amp_status amp__cpu_job_run(amp__cpu_device *d, amp__cpu_job *j)
{
    if (d->learn_widths && amp__cpu_job_points(j) <= AMP__CPU_WIDTH_POINTS) return amp__cpu_job_run_learning(d, j, NULL);
    return amp__cpu_job_run_on(d, j, 0);
}

amp_status amp__cpu_run(amp__cpu_device *d, const amp__cpu_kernel *kernel, const amp__launch *l)
{
    /* Within the call: the job lives on this stack and borrows l. */
    amp__cpu_job j;
    memset(&j, 0, sizeof j);
    amp__cpu_job_init(&j, kernel, l);
    amp_status st = amp__cpu_job_run(d, &j);
    amp__cpu_job_fini(&j);
    return st;
}
