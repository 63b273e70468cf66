/* cpu_run.c — runs a CPU-accelerator job's chunks on one thread: the job's record, chunks taken from its counter (or from the blocks its team's take hands out), tiled kernels with a loop version as whole tiles on a stack sized for their frame, the others as round-robin fibers on the thread; the kernels' callbacks (barriers, bounds and faults), whose failures stop the job. */
#include "cpu_internal.h"
#include "base/signature.h"

#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---------------------------------------------------------------- fibers */

enum { FIBER_IDLE = 0, FIBER_LIVE, FIBER_DONE };

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

/* Divergence ends the tile's barriers: they count nothing, so every fiber
 * runs to its end and the tile finishes (wrong results, reported; never a
 * hang). A fiber still hands the thread on at each one: a work-item that
 * waits for another's progress (a loop on a tile_static value) would
 * otherwise spin for ever. */
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

/* Where work-item k's turn resumes: the loop's work-item (w->loop_id, on
 * the thread's own stack) through w->main, the thread's context, not
 * through its fiber (whose context may be parked mid-kernel from an
 * earlier tile, and is left alone); any other through its fiber. */
static amp__cpu_ctx *amp__cpu_turn(amp__cpu_worker *w, int k)
{
    if (k == w->loop_id) return &w->main;
    amp__cpu_fiber *to = w->fibers[k];
    if (to->state == FIBER_IDLE) amp__cpu_fiber_go(to);
    return &to->ctx;
}

/* Round-robin: the next work-item that has not returned, its fiber started
 * if it has not run in this tile yet. */
static void amp__cpu_switch_to_next(amp__cpu_worker *w, amp__cpu_fiber *from)
{
    int k = from->id;
    do k = k + 1 == w->n ? 0 : k + 1; while (w->fibers[k]->state == FIBER_DONE);
    amp__cpu_ctx_switch(&from->ctx, amp__cpu_turn(w, k));
}

/* From the loop's work-item (on the thread's stack): the next other one
 * that has not returned, if any. */
static void amp__cpu_loop_yield(amp__cpu_worker *w)
{
    int me = w->loop_id, k = me;
    do k = k + 1 == w->n ? 0 : k + 1; while (k != me && w->fibers[k]->state == FIBER_DONE);
    if (k != me) amp__cpu_ctx_switch(&w->main, amp__cpu_turn(w, k));
}

/* A barrier met on the fast path (work-item 0 returned without one, the
 * others running as a plain loop on the thread's stack): divergence,
 * reported by the caller. The loop could not hand the thread on, so a
 * work-item waiting at a barrier for another's progress (a loop on a
 * tile_static flag that a later work-item sets) spun for ever. The rest of
 * the tile goes on as on the fiber path: the loop's work-item takes its
 * turns through the thread's context, the loop stops after it (the entry
 * reads it->end after each work-item, and the barrier call it made is
 * opaque to it), and those after it run as fibers. */
static void amp__cpu_loop_to_fibers(amp__cpu_worker *w, amp__cpu_item *it)
{
    int k = it->cur_local;
    for (int i = 1; i < k; ++i) w->fibers[i]->state = FIBER_DONE; /* ran in the loop */
    w->done = k;
    w->fibers[k]->state = FIBER_LIVE;
    w->loop_id = k;
    w->loop_mode = false;
    it->end = k + 1;
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
    if (w->broken) {
        if (!w->loop_mode && it->fiber && w->done < w->n - 1) amp__cpu_switch_to_next(w, it->fiber);
        else if (!it->fiber && w->loop_id >= 0) amp__cpu_loop_yield(w);
        return;
    }
    w->saw_barrier = true;
    if (w->loop_mode) {
        /* Work-items 0 to cur_local - 1 ran to their end before it. */
        amp__cpu_divergent(w, it->cur_local,
                           "reached a barrier that the %d work-item%s before it returned without reaching",
                           it->cur_local);
        amp__cpu_loop_to_fibers(w, it);
        amp__cpu_loop_yield(w);
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
            amp__cpu_divergent(w, f->id, "returned while %d work-item%s waiting at a barrier", w->arrived);
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

/* Where a fault happened: a tiled kernel's tile (its entry sets it, on
 * either path; a loop version does not track which of the tile's
 * work-items runs), a simple kernel's run of work-items (an entry takes
 * the range [begin, end) of the extent's linear indices, and which of them
 * ran when the fault came is not recorded). */
static void amp__cpu_fault(amp__cpu_item *it, const char *what)
{
    amp__cpu_worker *w = it->worker;
    const amp__cpu_launch *L = &w->job->launch;
    char where[320], a[128], b[128];
    if (L->tiled) {
        amp__cpu_fmt_tuple(a, sizeof a, it->tile, L->rank);
        snprintf(where, sizeof where, " (in tile %s)", a);
    } else {
        int32_t first[AMP__LAUNCH_MAX_RANK], last[AMP__LAUNCH_MAX_RANK];
        int64_t i = it->begin, j = it->end > it->begin ? it->end - 1 : it->begin;
        for (int d = L->rank - 1; d >= 0; --d) {
            int32_t e = L->ext[d] > 0 ? L->ext[d] : 1;
            first[d] = (int32_t)(i % e);
            last[d] = (int32_t)(j % e);
            i /= e;
            j /= e;
        }
        amp__cpu_fmt_tuple(a, sizeof a, first, L->rank);
        amp__cpu_fmt_tuple(b, sizeof b, last, L->rank);
        snprintf(where, sizeof where, " (in one of the work-items from index %s to %s, in row-major order)", a, b);
    }
    amp__cpu_job_fail(w->job, AMP_ERROR_DEVICE, "kernel '%s': %s%s", w->job->l->kernel_name, what, where);
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
    amp_status st = AMP_OK;
    amp__cpu_fiber *x = NULL;
    /* Only the array of pointers moves: parked fibers stay where they are. */
    amp__cpu_fiber **fs = realloc(w->fibers, (size_t)n * sizeof *fs);
    if (!fs) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for %d fibers", n);
        goto fail;
    }
    w->fibers = fs;
    while (w->nfibers < n) {
        x = calloc(1, sizeof *x);
        if (!x) {
            st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for %d fibers", n);
            goto fail;
        }
        /* Stacks are a power-of-two-ish distance apart, so their tops would
         * all fall in the same L1/L2 cache sets and a switch would miss;
         * start each a few lines deeper than the last (colouring), in room
         * mapped beyond the stack asked for: every fiber keeps all of
         * AMP_CPU_STACK_SIZE (a fiber of a large tile lost up to 64 KiB, and
         * a kernel within the documented size overflowed). */
        size_t span = stack_size / 4 < 65536 ? stack_size / 4 : 65536;
        size_t colour = span ? ((size_t)w->nfibers * 320) % span / 64 * 64 : 0;
        st = amp__cpu_stack_alloc(stack_size + span, &x->stack);
        if (st != AMP_OK) goto fail;
        x->w = w;
        /* The stack is the stack_size bytes (to a page) below its coloured
         * top; the room beneath joins the guard, so that a frame larger
         * than the stack still meets it (one compiled without stack-clash
         * protection would step over a single page). Where that guard
         * cannot be made the fiber is not kept, as where the page's cannot
         * (amp__cpu_stack_guard): no guard is dropped silently. */
        char *top = (char *)x->stack.lo + x->stack.size - colour;
        uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
        char *lo = (char *)((uintptr_t)(top - stack_size) & ~(page - 1));
        if (lo > (char *)x->stack.lo) {
            st = amp__cpu_stack_guard(x->stack.lo, (size_t)(lo - (char *)x->stack.lo));
            if (st != AMP_OK) goto fail;
            x->stack.lo = lo;
        }
        x->stack.size = (size_t)(top - (char *)x->stack.lo);
        w->fibers[w->nfibers++] = x;
        x = NULL;
    }
    return AMP_OK;
fail:
    if (x) amp__cpu_stack_free(&x->stack);
    free(x);
    return st;
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
    w->loop_id = -1;
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
        int k = w->loop_id;
        if (k >= 0) {
            /* The loop met a barrier (amp__cpu_loop_to_fibers) and its
             * work-item has returned: the fibers after it finish the tile,
             * the last one back here. */
            w->fibers[k]->state = FIBER_DONE;
            if (++w->done < w->n) amp__cpu_loop_yield(w);
            w->loop_id = -1;
        }
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

/* ---------------------------------------------------------- blocks */

/* The next chunk of j for a thread whose own block is home: from that
 * block first, half of what is left of it at a time (never below
 * min_chunk), then from the others' in turn. Block b is the same index
 * range at every launch of a width, and a program's launches mostly run
 * over the same arrays by the same index, so a thread finds its block's
 * data in its own core's cache, where one shared counter hands each
 * thread other data at every launch (a direct launch's blocks:
 * cpu_pool.c's amp__cpu_take_home; a replay team's: cpu_team.c). Halves
 * of another's block suit threads that spin between launches, as a
 * team's members and a spinning pool's threads do: a block's owner is
 * then at work on it from the launch's start. */
bool amp__cpu_take_blocks(amp__cpu_job *j, int home, int64_t *b, int64_t *e)
{
    for (int k = 0; k < j->nparts; ++k) {
        amp__cpu_block *p = &j->parts[(home + k) % j->nparts];
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

amp__cpu_block *amp__cpu_blocks_alloc(int n)
{
    return aligned_alloc(_Alignof(amp__cpu_block), (size_t)n * sizeof(amp__cpu_block));
}

/* One block of j's work for each of nt threads, into parts (room for nt):
 * whole cache lines of floats where the work-items are index points. */
void amp__cpu_blocks_arm(amp__cpu_job *j, amp__cpu_block *parts, int nt)
{
    /* total may be INT64_MAX (a rank-8 extent of that many elements is
     * valid): no sum or product here passes it, or the last block's end
     * wrapped negative and its work-items never ran. */
    int64_t per = j->total / nt + (j->total % nt != 0);
    if (!j->launch.tiled && per <= INT64_MAX - 63) per = (per + 63) / 64 * 64;
    for (int b = 0; b < nt; ++b) {
        int64_t from = b == 0 ? 0 : per <= j->total / b ? b * per : j->total;
        atomic_init(&parts[b].next, from);
        parts[b].end = per < j->total - from ? from + per : j->total;
    }
    j->parts = parts;
    j->nparts = nt;
    j->launch.stream_block = per > 0 ? per : 1;
}

/* The next chunk for w: from the launch's blocks where it has them (a
 * team's or the pool's take), else from the counter. */
static bool amp__cpu_next_chunk(amp__cpu_job *j, amp__cpu_worker *w, int64_t *b, int64_t *e)
{
    return j->take ? j->take(j, w, b, e) : amp__cpu_take(j, b, e);
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

void amp__cpu_run_chunks(amp__cpu_job *j, amp__cpu_worker *w, size_t stack_size)
{
    if (j->join) {
        j->join(j, w, stack_size);
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

void amp__cpu_worker_abandon_contexts(amp__cpu_worker *w)
{
    for (int i = 0; i < w->nfibers; ++i) {
        w->fibers[i]->started = false;
        w->fibers[i]->state = FIBER_IDLE;
    }
    w->tiles_started = w->in_tiles = w->loop_mode = w->broken = w->saw_barrier = false;
    w->loop_id = -1;
    w->n = w->arrived = w->done = 0;
}

void amp__cpu_worker_free(void *p)
{
    amp__cpu_worker *w = p;
    if (!w) return;
    for (int i = 0; i < w->nfibers; ++i) {
        amp__cpu_stack_free(&w->fibers[i]->stack);
        free(w->fibers[i]);
    }
    free(w->fibers);
    amp__cpu_stack_free(&w->tiles_stack);
    free(w->home_parts);
    free(w);
}

/* ------------------------------------------------------------------ jobs */

/* The bytes [lo, hi) a view or array descriptor of the pack can reach (lo
 * == hi: none). Strides are C++ AMP's, never negative, but a descriptor is
 * read as it is. A rank-1 extent of INT_MAX may be an algorithm's span
 * argument capped there (launch.c's amp__bind_as_span: the kernel bounds
 * its accesses itself), so it is taken to reach every byte past its base. */
static void amp__cpu_view_span(const unsigned char *desc, const amp__sig_param *sp, uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t base;
    memcpy(&base, desc, sizeof base);
    *lo = *hi = base;
    int64_t first = 0, last = 0;
    bool capped = false;
    for (int d = 0; d < sp->rank; ++d) {
        int64_t stride;
        int32_t ext;
        memcpy(&stride, desc + AMP__DESC_STRIDE_OFFSET + 8 * d, sizeof stride);
        memcpy(&ext, desc + AMP__DESC_EXTENT_OFFSET(sp->rank) + 4 * d, sizeof ext);
        if (ext <= 0) return;
        capped = sp->rank == 1 && ext == INT_MAX;
        int64_t reach = (int64_t)(ext - 1) * stride;
        if (reach < 0) first += reach;
        else last += reach;
    }
    *lo = base + (uintptr_t)(first * sp->elem_size);
    *hi = capped ? UINTPTR_MAX : base + (uintptr_t)((last + 1) * sp->elem_size);
}

typedef struct amp__cpu_span {
    uintptr_t lo, hi;
    uint64_t seen; /* streaming's record: the thread's streamed launch that last covered it */
} amp__cpu_span;

/* The memory of each view and array of the launch (empty ones left out)
 * into span[], whether the kernel only reads it into ro[]; the count.
 * *has_struct: a parameter is a struct (which may hold an address of
 * memory a view covers too, that the restrict pointers know nothing of). */
static int amp__cpu_launch_spans(const amp__launch *l, amp__cpu_span *span, bool *ro, bool *has_struct)
{
    const amp__signature *sig = l->sig;
    int n = 0;
    *has_struct = false;
    for (int i = 0; sig && i < sig->nparams; ++i) {
        const amp__sig_param *sp = &sig->params[i];
        if (sp->kind == AMP_ARG_STRUCT) *has_struct = true;
        if (sp->kind != AMP_ARG_VIEW && sp->kind != AMP_ARG_ARRAY) continue;
        amp__cpu_view_span((const unsigned char *)l->pack + sp->offset, sp, &span[n].lo, &span[n].hi);
        span[n].seen = 0;
        ro[n] = sp->is_const != 0;
        if (span[n].lo < span[n].hi) ++n;
    }
    return n;
}

static bool amp__cpu_spans_disjoint(const amp__cpu_span *span, const bool *ro, int n)
{
    if (n < 0) return false;
    for (int a = 0; a < n; ++a)
        for (int b = a + 1; b < n; ++b)
            if (!(ro[a] && ro[b]) && span[a].lo < span[b].hi && span[b].lo < span[a].hi) return false;
    return true;
}

bool amp__cpu_views_disjoint(const amp__launch *l)
{
    amp__cpu_span span[AMP__SIG_MAX_PARAMS];
    bool ro[AMP__SIG_MAX_PARAMS], has_struct;
    const int n = amp__cpu_launch_spans(l, span, ro, &has_struct);
    return amp__cpu_spans_disjoint(span, ro, has_struct ? -1 : n);
}

/* How much of a streamed launch to write with plain stores after all, in
 * 256ths of each block (amp__cpu_launch.stream_keep), where the recent
 * launches' memory is `bytes` and the threshold `min`; -1: none streamed
 * (under the threshold; from it on at least 1/256 streams, as the
 * threshold's "reaches" says).
 * Past the threshold the set no longer fits in the caches, but a little
 * past it part of it still does, if streamed stores keep the rest out: a
 * launch reading two arrays of a set of three (BabelStream's Add and
 * Triad) keeps the heads of all three across it while the heads and what
 * it reads of the tails fit, h*S/3 + 2*S/3 <= C, so h = 3*C/S - 2: nearly
 * all of it at S = C (nearly as below the threshold), none from S = 1.5*C
 * on. BabelStream's float set at 2^25 (384 MiB) against the 300 MiB cache
 * of the H200 machine's host (88/256 kept): Triad, which reads what Add
 * wrote, at 1.04-1.44 of OpenMP against 0.91-1.07 streamed whole, the
 * other kernels a few percent slower than streamed whole, the iteration as
 * a whole alike (bench/results/2026-12-04-h200-host-cpu-partial-streaming.md). */
int amp__cpu_stream_keep(uint64_t bytes, uint64_t min)
{
    if (bytes < min) return -1;
    const uint64_t over = bytes - min;
    if (over >= min / 2) return 0;
    /* min - 2 * over > 0 here, and bytes >= min > 0. */
    const int keep = (int)(256.0 * (double)(min - 2 * over) / (double)bytes);
    return keep > 255 ? 255 : keep;
}

/* Whether a launch of a kernel that declares streamed views streams them:
 * each covers the launch's extent (its elements at the work-items' own
 * indices are its own: the buffer's contents are written only there; the
 * kernel's rank is theirs, cpu_backend.c), and the memory that this
 * thread's last AMP__CPU_RECENT_LAUNCHES launches of such kernels covered
 * (the union of their views' spans, this launch's `mine` included) reaches
 * the threshold (AMP_CPU_STREAM_MIN; cpu_backend.c): data that does not fit
 * in the caches together is not in them when the next launch reads it, and
 * storing it through them only costs a read of each line first. Below, the
 * views may stay in the caches from launch to launch, which streaming
 * stores would defeat (BabelStream's Mul, Add and Triad at 2^21 elements
 * on the H200's host, streamed: 0.29-0.54 of OpenMP's bandwidth, against
 * 0.63-0.89 with plain stores). A launch's own views alone can fall short
 * where the set does not: BabelStream's Mul touches two of its three
 * arrays. */
enum { AMP__CPU_RECENT_LAUNCHES = 8, AMP__CPU_RECENT_SPANS = 32 };
/* A thread's record, on the heap the first time the thread streams (freed
 * when it exits): as thread-local arrays its 776 bytes tripled the
 * library's static TLS block (it has some: amp__me is initial-exec), and
 * a dlopen of three builds of the library at once (bench_trace) no longer
 * found room for them. */
typedef struct amp__cpu_recent_set {
    amp__cpu_span span[AMP__CPU_RECENT_SPANS];
    uint64_t launches;
} amp__cpu_recent_set;
static _Thread_local amp__cpu_recent_set *amp__cpu_recent;
static pthread_key_t amp__cpu_recent_key;
static bool amp__cpu_recent_key_ok;
static pthread_once_t amp__cpu_recent_once = PTHREAD_ONCE_INIT;
/* At the thread's exit; the pointer goes too, so that a launch from a key
 * destructor of the program's that runs after this one makes a new record
 * rather than write into this freed one. */
static void amp__cpu_recent_free(void *p)
{
    if (amp__cpu_recent == p) amp__cpu_recent = NULL;
    free(p);
}
static void amp__cpu_recent_key_init(void)
{
    amp__cpu_recent_key_ok = !pthread_key_create(&amp__cpu_recent_key, amp__cpu_recent_free);
}

static int amp__cpu_span_order(const void *a, const void *b)
{
    const amp__cpu_span *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The bytes spans [0, n) cover together (overlaps counted once); n at
 * most AMP__SIG_MAX_PARAMS (a launch's) or AMP__CPU_RECENT_SPANS (the
 * recent launches'). */
static uint64_t amp__cpu_spans_bytes(const amp__cpu_span *span, int n)
{
    amp__cpu_span sorted[AMP__SIG_MAX_PARAMS > AMP__CPU_RECENT_SPANS ? AMP__SIG_MAX_PARAMS : AMP__CPU_RECENT_SPANS];
    if (n <= 0) return 0;
    memcpy(sorted, span, (size_t)n * sizeof *span);
    qsort(sorted, (size_t)n, sizeof sorted[0], amp__cpu_span_order);
    uint64_t bytes = 0;
    uintptr_t end = 0;
    for (int k = 0; k < n; ++k) {
        uintptr_t lo = sorted[k].lo > end ? sorted[k].lo : end;
        if (sorted[k].hi > lo) bytes += (uint64_t)(sorted[k].hi - lo);
        if (sorted[k].hi > end) end = sorted[k].hi;
    }
    return bytes;
}

static int amp__cpu_stream_launch(const amp__cpu_kernel *kernel, const amp__launch *l, const amp__cpu_span *mine,
                                  int n)
{
    const amp__signature *sig = l->sig;
    for (int i = 0; i < sig->nparams; ++i) {
        if (!(kernel->streams >> i & 1u)) continue;
        const amp__sig_param *sp = &sig->params[i];
        const unsigned char *desc = (const unsigned char *)l->pack + sp->offset;
        for (int d = 0; d < sp->rank; ++d) {
            int32_t ext;
            memcpy(&ext, desc + AMP__DESC_EXTENT_OFFSET(sp->rank) + 4 * d, sizeof ext);
            if (ext < l->extent.v[d]) return -1;
        }
    }
    /* Record this launch's spans: a span seen before is marked seen now; a
     * new one takes the slot seen longest ago. Numbered from 1: a slot
     * never used (seen 0) is the oldest. */
    /* No record (no memory, or no key to free it at the thread's exit):
     * not streamed, the plain path being right for any launch. */
    if (!amp__cpu_recent) {
        pthread_once(&amp__cpu_recent_once, amp__cpu_recent_key_init);
        amp__cpu_recent_set *r = amp__cpu_recent_key_ok ? calloc(1, sizeof *r) : NULL;
        if (!r) return -1;
        if (pthread_setspecific(amp__cpu_recent_key, r)) {
            free(r);
            return -1;
        }
        amp__cpu_recent = r;
    }
    amp__cpu_span *const recent = amp__cpu_recent->span;
    const uint64_t now = ++amp__cpu_recent->launches;
    for (int k = 0; k < n; ++k) {
        int slot = -1, oldest = 0;
        for (int r = 0; r < AMP__CPU_RECENT_SPANS && slot < 0; ++r) {
            if (recent[r].lo == mine[k].lo && recent[r].hi == mine[k].hi) slot = r;
            else if (recent[r].seen < recent[oldest].seen) oldest = r;
        }
        if (slot < 0) slot = oldest;
        recent[slot] = mine[k];
        recent[slot].seen = now;
    }
    amp__cpu_span all[AMP__CPU_RECENT_SPANS];
    int m = 0;
    for (int r = 0; r < AMP__CPU_RECENT_SPANS; ++r)
        if (recent[r].seen && now - recent[r].seen < AMP__CPU_RECENT_LAUNCHES)
            all[m++] = recent[r];
    return amp__cpu_stream_keep(amp__cpu_spans_bytes(all, m), kernel->stream_min);
}

/* Whether a launch of kernel may run its tiles in groups: a loop version
 * that groups them (lib/cpu/loops/tiles.c) over a rank-2 extent; it then
 * does where its views together cover the caches' size or more (the
 * streaming threshold; amp__cpu_job_init). A transpose's tiles in
 * groups of tile rows write whole runs of each output row before moving
 * on, which is what a transpose from memory wants, but read 128 rows of
 * the input at once, more streams than the prefetchers follow, which a
 * transpose whose arrays the caches hold pays for: the seed's at 4096^2
 * (2 x 64 MiB) on the H100 machine's host (300 MiB of L3) took 3.3-4.7 ms
 * grouped against 2.5-3.0 ms in the launch's order, at 8192^2 (2 x 256
 * MiB) 21.2-21.5 against 21.7-24.0 ms
 * (bench/results/2026-12-06-h100-host-cpu-transpose-tile-order.md). */
static bool amp__cpu_groups_tiles(const amp__cpu_kernel *kernel, const amp__launch *l)
{
    return l->tiled && kernel->tiles && kernel->tile_group > 1 && l->extent.rank == 2;
}

void amp__cpu_job_init(amp__cpu_job *j, const amp__cpu_kernel *kernel, const amp__launch *l)
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
    /* Read by simple kernels' entries and tiled kernels' loop versions
     * (amp_cpu_prelude.hpp's entry<> and tiles<>); a tiled kernel on
     * fibers (no loop version) ignores it and is spared the check. */
    amp__cpu_span span[AMP__SIG_MAX_PARAMS];
    bool ro[AMP__SIG_MAX_PARAMS], has_struct = false;
    const bool restrict_path = kernel->restrict_views && (!l->tiled || kernel->tiles);
    const bool groups = amp__cpu_groups_tiles(kernel, l);
    const int n = restrict_path || groups ? amp__cpu_launch_spans(l, span, ro, &has_struct) : 0;
    const int nspans = restrict_path && !has_struct ? n : -1;
    L->noalias = amp__cpu_spans_disjoint(span, ro, nspans);
    const int keep = !l->tiled && L->noalias && kernel->streams ? amp__cpu_stream_launch(kernel, l, span, nspans) : -1;
    L->stream = keep >= 0;
    L->stream_keep = keep > 0 ? keep : 0;
    L->group_tiles = groups && amp__cpu_spans_bytes(span, n) >= kernel->stream_min;
    /* The whole launch one block until amp__cpu_job_arm and
     * amp__cpu_blocks_arm say otherwise (never 0: the entry divides by it). */
    L->stream_block = total > 0 ? total : 1;
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

void amp__cpu_job_fini(amp__cpu_job *j)
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

/* Simple launches take at least 256 work-items a chunk so the counter
 * stays off the profile (amp__cpu_take), and alone all of them in one;
 * tiles go one at a time at the end. */
int64_t amp__cpu_job_arm(amp__cpu_job *j, int nt)
{
    int64_t chunk = j->launch.tiled ? 1 : nt == 1 ? (j->total > 256 ? j->total : 256) : 256;
    j->min_chunk = chunk;
    j->nthreads = nt;
    /* One block unless amp__cpu_blocks_arm makes more. */
    j->launch.stream_block = j->total > 0 ? j->total : 1;
    atomic_init(&j->next, 0);
    atomic_init(&j->stop, 0);
    /* Not (total + chunk - 1) / chunk: total may be INT64_MAX. */
    return j->total / chunk + (j->total % chunk != 0);
}

amp_status amp__cpu_job_status(amp__cpu_job *j)
{
    if (j->status != AMP_OK)
        return amp__fail(j->status, "%s", j->msg ? j->msg : "the launch failed (no memory for its message)");
    return AMP_OK;
}
