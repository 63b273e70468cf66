/* launch.c — parallel_for_each: check the compute domain and every argument
 * against the kernel's signature record, make each view's data current on
 * the device, fill the argument pack, queue the launch, and record what it
 * touched. The hot path: no allocation, one lock per distinct storage. */
#include "internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The view an argument refers to: a view, or a whole array. Pointers into
 * the view or storage, which hold still while the launch runs (the caller
 * owns the handles until the call returns). */
typedef struct amp__bound {
    amp__storage *s;
    const amp__box *box;   /* in storage coordinates */
    const int *ext;        /* the view's extent, rank = the parameter's */
    const int64_t *stride; /* the view's strides in elements */
    int64_t offset;        /* bytes from the storage's start to the view's first element */
    size_t elem;           /* the view's element bytes */
    amp_array_view *view;  /* NULL for an array */
    bool writes;
    bool overwrite;        /* the kernel writes the whole box: nothing to copy in */
    int span;              /* AMP__ARG_SPAN: the extent ext points at */
} amp__bound;

/* Parameter i's view or array is not a live handle: say which and why. */
static amp_status amp__bad_memory(const amp__kernel *k, int i, const void *h, amp__handle_kind kind)
{
    char what[192];
    snprintf(what, sizeof what, "kernel '%.128s' parameter %d's %s", k->name, i,
             kind == AMP__HANDLE_VIEW ? "view" : "array");
    return amp__handle_check_slow(h, kind, "parallel_for_each", what);
}

/* An internal span argument (internal.h, AMP__ARG_SPAN), once bound as its
 * view or array (rank dimensions): the rank-1 view of its elements from the
 * first to the last, in its own element size, for a kernel that indexes it
 * through a shape of its own (lib/alg_*.c). The coherence box stays the
 * view's own. */
static void amp__bind_as_span(const amp_arg *a, int rank, amp__bound *b)
{
    static const int64_t unit = 1;
    int64_t span = 1;
    for (int d = 0; d < rank; ++d) {
        if (b->ext[d] == 0) {
            span = 0;
            break;
        }
        span += (int64_t)(b->ext[d] - 1) * b->stride[d];
    }
    /* Only the descriptor carries it: the kernel bounds its accesses itself. */
    b->span = span > INT_MAX ? INT_MAX : (int)span;
    b->ext = &b->span;
    b->stride = &unit;
    /* Nothing to copy in only where the box is exactly the view's
     * elements: an inexact box (a reinterpret_as or view_as view) holds
     * others, which the launch must not drop. */
    b->overwrite = (!b->view || b->view->exact) && (a->kind & AMP__ARG_SPAN_OVERWRITE) != 0;
}

static amp_status amp__bind_memory(const amp__kernel *k, int i, const amp_arg *a, const amp_accelerator *on,
                                   amp__bound *b)
{
    const amp__sig_param *p = &k->sig.params[i];
    const char *kn = k->name;
    int rank;
    amp_access access;
    bool span = (a->kind & AMP__ARG_SPAN) && p->kind == AMP_ARG_VIEW && p->rank == 1;
    int kind = !span ? (int)a->kind : (a->kind & AMP__ARG_SPAN_ARRAY) ? AMP_ARG_ARRAY : AMP_ARG_VIEW;
    if (kind == AMP_ARG_VIEW && p->kind == AMP_ARG_VIEW) {
        amp_array_view *v = a->u.view;
        amp_status st;
        if (!amp__handle_live(v, AMP__HANDLE_VIEW) && (st = amp__bad_memory(k, i, v, AMP__HANDLE_VIEW)) != AMP_OK)
            return st;
        b->s = v->s;
        b->box = &v->box;
        b->ext = v->ext.v;
        b->stride = v->stride;
        b->offset = v->offset;
        b->elem = v->elem;
        b->view = v;
        rank = v->ext.rank;
        access = v->access;
    } else if (kind == AMP_ARG_ARRAY) {
        amp_array *arr = a->u.array;
        amp_status st;
        if (!amp__handle_live(arr, AMP__HANDLE_ARRAY) &&
            (st = amp__bad_memory(k, i, arr, AMP__HANDLE_ARRAY)) != AMP_OK)
            return st;
        /* An array argument is used where it lives (a view of it may go
         * anywhere). home_acc never changes: no lock needed. */
        if (arr->s->home_acc != on)
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "kernel '%s' parameter %d: the array lives %s%s; the launch is on %s (pass a view of "
                             "it, amp_array_view_of_array, to use it there)", kn, i,
                             arr->s->home_acc ? "on " : "in host memory (a staging array)",
                             arr->s->home_acc ? arr->s->home_acc->e.info.device_path : "", on->e.info.device_path);
        b->s = arr->s;
        b->box = &arr->s->whole;
        b->ext = arr->s->ext.v;
        b->stride = arr->s->stride;
        b->offset = 0;
        b->elem = arr->s->elem;
        b->view = NULL;
        rank = arr->s->ext.rank;
        access = AMP_READ_WRITE;
    } else if (kind == AMP_ARG_VIEW) {
        return amp__fail(AMP_ERROR_ARGUMENT_MISMATCH,
                         "kernel '%s' parameter %d is amp::array; bind an amp_array (amp_arg_array)", kn, i);
    } else {
        return amp__fail(AMP_ERROR_ARGUMENT_MISMATCH, "kernel '%s' parameter %d is %s<%s, %d>; argument is %s", kn, i,
                         amp__kind_name(p->kind), p->is_const ? "const T" : "T", p->rank, amp__kind_name(a->kind));
    }
    b->overwrite = false;
    if (span) {
        amp__bind_as_span(a, rank, b);
        rank = 1;
    }
    if (rank != p->rank)
        return amp__fail(AMP_ERROR_ARGUMENT_MISMATCH, "kernel '%s' parameter %d has rank %d; argument has rank %d", kn,
                         i, p->rank, rank);
    if ((int64_t)b->elem != p->elem_size)
        return amp__fail(AMP_ERROR_ARGUMENT_MISMATCH,
                         "kernel '%s' parameter %d has %d-byte elements; argument has %zu-byte elements", kn, i,
                         p->elem_size, b->elem);
    if (access == AMP_READ_ONLY && !p->is_const)
        return amp__fail(AMP_ERROR_ARGUMENT_MISMATCH,
                         "kernel '%s' parameter %d is not const but its view is AMP_READ_ONLY "
                         "(declare it array_view<const T, %d>)", kn, i, p->rank);
    b->writes = !p->is_const;
    return AMP_OK;
}

/* Descriptor (lib/base/signature.h): pointer, int64 strides, int32 extent. */
/* Inline: the launch path's (a recorded launch calls it too). */
static inline __attribute__((always_inline)) void amp__put_view(unsigned char *pack, const amp__sig_param *p,
                                                                const amp__bound *b, void *dptr)
{
    int r = p->rank;
    const int64_t *stride = b->stride;
    void *ptr = dptr ? (char *)dptr + b->offset : NULL;
    unsigned char *at = pack + p->offset;
    memcpy(at, &ptr, sizeof ptr);
    /* Fixed-size copies, which compile to moves (a copy of 8 * r bytes
     * would be a call to memcpy). */
    for (int d = 0; d < r; ++d) {
        memcpy(at + AMP__DESC_STRIDE_OFFSET + 8 * d, &stride[d], 8);
        memcpy(at + AMP__DESC_EXTENT_OFFSET(r) + 4 * d, &b->ext[d], 4);
    }
}

/* The tile's thread count against what k's accelerator runs, for the
 * message of a tile that differs from the kernel's (a kernel's own tile
 * always fits: amp_program_get_kernel checked it). */
static amp_status amp__tile_mismatch(const amp__kernel *k, const amp_tiled_extent *t, int d)
{
    double threads = 1; /* three factors below 2^31 can pass 2^63 */
    char shape[48] = "";
    for (int j = 0, n = 0; j < t->extent.rank; ++j) {
        threads *= t->tile[j];
        n += snprintf(shape + n, sizeof shape - (size_t)n, j ? "x%d" : "%d", t->tile[j]);
    }
    int limit = k->acc->e.info.max_tile_threads;
    if (threads > limit)
        return amp__fail(AMP_ERROR_INVALID_COMPUTE_DOMAIN,
                         "tile %s has %.0f threads; %s runs at most %d threads per tile", shape, threads,
                         k->acc->e.info.device_path, limit);
    return amp__fail(AMP_ERROR_INVALID_COMPUTE_DOMAIN, "tile dimension %d is %d but kernel '%s' was written for tile %d",
                     d, t->tile[d], k->name, k->sig.tile[d]);
}

/* *empty: the domain has no index (a dimension is 0): the launch does
 * nothing. */
static amp_status amp__check_domain(const amp__kernel *k, amp_extent e, const amp_tiled_extent *t, bool *empty)
{
    amp_status st;
    *empty = false;
    if (t) {
        if (!k->sig.tiled)
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "kernel '%s' is not tiled (AMP_KERNEL): launch it with amp_parallel_for_each", k->name);
        if ((st = amp_extent_validate(t->extent)) != AMP_OK) return st;
        if (t->extent.rank != k->sig.rank)
            return amp__fail(AMP_ERROR_INVALID_COMPUTE_DOMAIN, "kernel '%s' takes a rank-%d tiled_index; extent has rank %d",
                             k->name, k->sig.rank, t->extent.rank);
        for (int d = 0; d < t->extent.rank; ++d)
            if (t->tile[d] != k->sig.tile[d]) return amp__tile_mismatch(k, t, d);
        for (int d = 0; d < t->extent.rank; ++d) {
            if (t->extent.v[d] % t->tile[d])
                return amp__fail(AMP_ERROR_INVALID_COMPUTE_DOMAIN,
                                 "extent dimension %d (%d) is not divisible by tile %d: pad or truncate it", d,
                                 t->extent.v[d], t->tile[d]);
            *empty |= t->extent.v[d] == 0;
        }
        return AMP_OK;
    }
    if (k->sig.tiled)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                         "kernel '%s' is tiled (AMP_TILED_KERNEL): launch it with amp_parallel_for_each_tiled", k->name);
    if ((st = amp_extent_validate(e)) != AMP_OK) return st;
    if (e.rank != k->sig.rank)
        return amp__fail(AMP_ERROR_INVALID_EXTENT, "kernel '%s' takes amp::index<%d>; extent has rank %d", k->name,
                         k->sig.rank, e.rank);
    for (int d = 0; d < e.rank; ++d) *empty |= e.v[d] == 0;
    return AMP_OK;
}

/* A simple launch's stated block size against every limit it must keep:
 * what the accelerator runs per block and what the kernel was compiled
 * for (its __launch_bounds__, and on a GPU its registers). call is the
 * public entry point, for the message. */
static amp_status amp__check_block(const amp__kernel *k, int block, const char *call)
{
    const amp_accelerator_info *ai = &k->acc->e.info;
    if (block < 0)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                         "%s: block_size %d is negative (0: the library's choice; else 1..%d threads)", call, block,
                         ai->max_tile_threads < k->max_block ? ai->max_tile_threads : k->max_block);
    if (ai->max_tile_threads > 0 && block > ai->max_tile_threads)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                         "%s: block_size %d exceeds the %d threads per block %s runs "
                         "(amp_accelerator_info.max_tile_threads)", call, block, ai->max_tile_threads,
                         ai->device_path);
    if (block > k->max_block)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                         "%s: block_size %d exceeds the %d threads per block kernel '%s' runs on %s (simple kernels "
                         "are compiled for blocks of up to %d threads; AMP_KERNEL_MAX_BLOCK(%s, n) before the kernel "
                         "raises that to n)", call, block, k->max_block, k->name, ai->device_path,
                         AMP__SIMPLE_BLOCK_THREADS, k->name);
    return AMP_OK;
}

/* Sort a few storages by address and drop duplicates (lock order:
 * internal.h). Insertion sort: a launch has at most 32. */
static size_t amp__sort_unique(amp__storage **v, size_t n)
{
    for (size_t i = 1; i < n; ++i) {
        amp__storage *x = v[i];
        size_t j = i;
        for (; j > 0 && (uintptr_t)v[j - 1] > (uintptr_t)x; --j) v[j] = v[j - 1];
        v[j] = x;
    }
    size_t u = 0;
    for (size_t i = 0; i < n; ++i)
        if (!u || v[u - 1] != v[i]) v[u++] = v[i];
    return u;
}

amp_status amp__launch_args_fit(amp_accelerator_view *q, const amp_arg *args, size_t n)
{
    amp_graph *g = amp__graph_here();
    if (!g || amp__graph_queue(g) != q) return AMP_OK;
    enum { MAX_PARTS = 32 };
    amp__storage *s[MAX_PARTS];
    const amp__box *b[MAX_PARTS];
    bool view[MAX_PARTS];
    size_t k = 0;
    for (size_t i = 0; i < n && k < MAX_PARTS; ++i) {
        const amp_arg *a = &args[i];
        int kind = !(a->kind & AMP__ARG_SPAN) ? (int)a->kind
                   : (a->kind & AMP__ARG_SPAN_ARRAY) ? AMP_ARG_ARRAY
                                                     : AMP_ARG_VIEW;
        /* A dead handle is the launch's to report; an empty view binds
         * nothing (amp__run_entered), so it is no part. */
        if (kind == AMP_ARG_VIEW && amp__handle_alive(a->u.view, AMP__HANDLE_VIEW)) {
            if (a->u.view->empty) continue;
            s[k] = a->u.view->s;
            b[k] = &a->u.view->box;
            view[k++] = true;
        } else if (kind == AMP_ARG_ARRAY && amp__handle_alive(a->u.array, AMP__HANDLE_ARRAY)) {
            s[k] = a->u.array->s;
            b[k] = &a->u.array->s->whole;
            view[k++] = false;
        }
    }
    return amp__graph_parts_fit(g, s, b, view, k);
}

/* What the backend gets: the kernel, the domain, the pack. */
static void amp__launch_fill(amp__launch *l, const amp__kernel *k, amp_extent e, const amp_tiled_extent *t,
                             const unsigned char *pack, bool async, int block)
{
    l->kernel_name = k->name;
    l->sig = &k->sig;
    l->tiled = t != NULL;
    l->extent = t ? t->extent : e;
    memset(&l->info, 0, sizeof l->info);
    l->info.rank = l->extent.rank;
    _Static_assert(AMP_MAX_RANK <= AMP__LAUNCH_MAX_RANK, "launch_info carries every rank a launch may have");
    for (int d = 0; d < AMP_MAX_RANK; ++d) l->info.ext[d] = d < l->extent.rank ? l->extent.v[d] : 0;
    l->pack = pack;
    l->pack_size = (size_t)k->sig.pack_size;
    l->async = async;
    l->in_graph = false;
    l->block = t ? 0 : block;
    l->max_block = k->max_block;
}

/* A launch on a view that records a graph (lib/core/graph.c), its arguments
 * checked as for any launch: each datum gets device memory on q's
 * accelerator (bound to the graph), and the launch is recorded with that
 * pack. Nothing is copied, ordered or marked: nothing ran. */
static amp_status amp__run_recorded(amp_accelerator_view *q, amp_extent e, const amp_tiled_extent *t,
                                    const amp__kernel *k, const amp_arg *args, amp__bound *bound, size_t nargs,
                                    unsigned char *pack, bool async, int block)
{
    amp_status st = amp__graph_check_thread(q, "a launch");
    if (st != AMP_OK) return st;
    amp_graph *g = atomic_load_explicit(&q->recorder, memory_order_acquire); /* this thread's */
    /* A launch that fails is not recorded: neither are its data's uses. */
    amp__graph_mark m = amp__graph_command(g);
    for (size_t i = 0; i < nargs && st == AMP_OK; ++i) {
        amp__bound *b = &bound[i];
        if (!b->s) {
            if (b->view) amp__put_view(pack, &k->sig.params[i], b, NULL);
            continue;
        }
        void *dptr = NULL;
        const void *handle = b->view ? (const void *)b->view : (const void *)args[i].u.array;
        if ((st = amp__graph_bind(g, b->s, b->box, handle, b->view, b->writes, false, &dptr)) == AMP_OK)
            amp__put_view(pack, &k->sig.params[i], b, dptr);
        else
            st = amp__fail(st, "recording kernel '%s': parameter %zu (%s): %s", k->name, i,
                           b->view ? "a view" : "an array", amp_last_error());
    }
    if (st == AMP_OK) {
        amp__launch l;
        amp__launch_fill(&l, k, e, t, pack, async, block);
        l.in_graph = true;
        st = amp__graph_record_launch(g, k, &l);
    }
    if (st != AMP_OK) amp__graph_undo(g, &m);
    return st;
}

/* What a launch states beyond its domain and arguments: a simple launch's
 * block size (0: the backend's choice), the public call that stated it
 * (for messages) and whether its arguments must be of the public kinds
 * (a caller's launch; the internal ones, internal.h's AMP__ARG_SPAN...,
 * bind a view of any rank to a rank-1 parameter and skip its copy-in: the
 * algorithms' own). */
typedef struct amp__launch_opts {
    int block;
    const char *call;
    bool public_kinds;
} amp__launch_opts;

/* amp__run inside amp__launch_enter / leave (the kernel is used only here). */
static inline __attribute__((always_inline)) amp_status amp__run_entered(amp_accelerator_view *q, amp_extent e, const amp_tiled_extent *t,
                                          amp_kernel *handle, const amp_arg *args, size_t nargs, bool async,
                                          const amp__launch_opts *o, amp__point *done, void **timing)
{
    amp_status st = AMP_OK;
    amp__kernel *k = NULL;
    amp__bound bound[AMP__SIG_MAX_PARAMS];
    amp__storage *locked[AMP__SIG_MAX_PARAMS];
    size_t nlocked = 0;
    _Alignas(AMP__MAX_PARAM_ALIGN) unsigned char pack[AMP__MAX_PACK];
    if ((st = amp__kernel_resolve(handle, &k)) != AMP_OK) return st;
    if (!args && nargs)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "parallel_for_each: args is NULL, nargs %zu", nargs);
    if (q) {
        if ((st = amp__handle_check(q, AMP__HANDLE_QUEUE, "parallel_for_each", "q")) != AMP_OK) return st;
    } else if ((st = amp__accelerator_queue(k->acc, &q)) != AMP_OK) {
        return st;
    }
    if (q->acc != k->acc)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "kernel '%s' was built for %s; the accelerator view is on %s",
                         k->name, k->acc->e.info.device_path, q->acc->e.info.device_path);
    bool empty;
    if ((st = amp__check_domain(k, e, t, &empty)) != AMP_OK) return st;
    int block = o ? o->block : 0;
    if (block && (st = amp__check_block(k, block, o->call)) != AMP_OK) return st;
    if (nargs != (size_t)k->sig.nparams)
        return amp__fail(AMP_ERROR_ARGUMENT_MISMATCH, "kernel '%s' takes %d parameters; %zu arguments given", k->name,
                         k->sig.nparams, nargs);
    /* Only after the count: args holds nargs entries as the caller says,
     * and a count past the kernel's is refused before any is read. */
    for (size_t i = 0; o && o->public_kinds && i < nargs; ++i)
        if ((unsigned)args[i].kind & ~0xffu)
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: argument %zu: kind %d is not an amp_arg_kind",
                             o->call ? o->call : t ? "amp_parallel_for_each_tiled" : "amp_parallel_for_each", i,
                             (int)args[i].kind);
    memset(pack, 0, (size_t)k->sig.pack_size);
    for (size_t i = 0; i < nargs; ++i) {
        const amp__sig_param *p = &k->sig.params[i];
        bound[i].s = NULL;
        bound[i].view = NULL;
        if (p->kind == AMP_ARG_VIEW || p->kind == AMP_ARG_ARRAY) {
            if ((st = amp__bind_memory(k, (int)i, &args[i], q->acc, &bound[i])) != AMP_OK) return st;
            /* An empty view has no data to prepare or mark: the kernel
             * gets its descriptor with no elements. */
            if (bound[i].view && bound[i].view->empty) bound[i].s = NULL;
            else locked[nlocked++] = bound[i].s;
        } else {
            if ((st = amp__arg_check_value(k->name, (int)i, p, &args[i])) != AMP_OK) return st;
            amp__arg_put_value(pack, p, &args[i]);
        }
    }
    /* An empty domain runs no work-item: C++ AMP's parallel_for_each over
     * it does nothing (the arguments were still checked). Still a command
     * on q: another thread's is refused while q records (hipamp_graph.h),
     * whatever its domain, or a race with the recording would pass unseen
     * whenever the extent happens to be empty. */
    if (empty && atomic_load_explicit(&q->recorder, memory_order_relaxed) &&
        (st = amp__graph_check_thread(q, "a launch")) != AMP_OK)
        return st;
    if (empty) {
        if (done) *done = (amp__point){NULL, 0};
        return AMP_OK;
    }
    if (atomic_load_explicit(&q->recorder, memory_order_relaxed)) {
        /* Recorded, not run: the point after it is none. */
        if (done) *done = (amp__point){NULL, 0};
        if (timing) timing[0] = timing[1] = NULL;
        return amp__run_recorded(q, e, t, k, args, bound, nargs, pack, async, block);
    }
    nlocked = amp__sort_unique(locked, nlocked);
    /* In a forked child, a storage a thread of the parent held at fork
     * stays locked for ever and may be half-written (a launch or copy of
     * the parent's that does not go on here): refused, as the parent's
     * queued launches are. */
    for (size_t i = 0; i < nlocked; ++i) {
        if (amp__lock_acquire_or_forked(&locked[i]->lock)) continue;
        size_t param = 0;
        while (param < nargs && bound[param].s != locked[i]) ++param;
        nlocked = i;
        st = amp__fail(AMP_ERROR_DEVICE,
                       "parallel_for_each of kernel %s: parameter %zu's data was in use by another thread (a launch "
                       "or copy) when this process was forked; that work stays the parent's, and in this process "
                       "the data may be half-written and is never released", k->name, param);
        goto out;
    }

    for (size_t i = 0; i < nargs; ++i) {
        amp__bound *b = &bound[i];
        if (!b->s) {
            if (b->view) amp__put_view(pack, &k->sig.params[i], b, NULL);
            continue;
        }
        void *dptr = b->s->dptr;
        if (!amp__storage_ready(b->s, q, b->box) &&
            (st = amp__storage_prepare(b->s, q, b->box, b->overwrite || (b->view && amp__view_discards(b->view)), &dptr)) != AMP_OK)
            goto out;
        amp__put_view(pack, &k->sig.params[i], b, dptr);
    }

    amp__launch l;
    amp__launch_fill(&l, k, e, t, pack, async, block);
    amp__point after = {NULL, 0};
    if (timing && (st = amp__queue_timed_event(q, &timing[0])) != AMP_OK) goto out;
    if ((st = amp__queue_launch(q, k->fn, &l, &after)) != AMP_OK) {
        if (timing) {
            amp__queue_event_release(q, timing[0]);
            timing[0] = NULL;
        }
        /* The kernel may have run in part (the CPU accelerator's bounds
         * check stops it where it fails; a device may have run some of it
         * before its error): what it wrote is on the device copy, which
         * the bookkeeping must call newer, or the host would read the old
         * data with AMP_OK and a later launch the partial writes. Ordered
         * after all that q holds, there being no point of its own. */
        after = (amp__point){q, AMP__SEQ_TAIL};
    }
    for (size_t i = 0; i < nargs; ++i) {
        amp__bound *b = &bound[i];
        if (!b->s) continue;
        amp__storage_after_launch(b->s, after, b->box, b->writes);
        if (b->view) b->view->discard = false;
    }
    if (st != AMP_OK) goto out;
    if (done) *done = after;
    /* Recorded above before the closing event: a retry would otherwise read
     * a device copy the launch changed as current, and a synchronize miss
     * what it wrote. */
    if (timing)
        st = amp__queue_close_timing(q, timing,
                                     o && o->call ? o->call
                                     : t          ? "amp_parallel_for_each_tiled_async"
                                                  : "amp_parallel_for_each_async",
                                     "launch", k->name);
out:
    /* Copies a failed launch queued are still covered: prepare moved each
     * storage's last point past every copy it queued. */
    for (size_t i = nlocked; i-- > 0;) amp__lock_release(&locked[i]->lock);
    return st;
}

/* The launch behind every entry point; *done (may be NULL) is the point
 * after it; with timing (may be NULL) the launch is bracketed by timed
 * events, returned there (the caller owns them). It counts as a launch in
 * flight from before its kernel handle is resolved until it returns, so
 * that amp_program_destroy waits for it (lib/core/kernel.c). */
static amp_status amp__run_any(amp_accelerator_view *q, amp_extent e, const amp_tiled_extent *t, amp_kernel *handle,
                               const amp_arg *args, size_t nargs, bool async, const amp__launch_opts *o,
                               amp__point *done, void **timing)
{
    amp__launcher *me = amp__launch_enter();
    if (!me) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "parallel_for_each: no memory for this thread's launch record");
    amp_status st = amp__run_entered(q, e, t, handle, args, nargs, async, o, done, timing);
    amp__launch_leave(me);
    return st;
}

/* A caller's launch: its arguments are of the public kinds only
 * (amp__launch_opts). */
static amp_status amp__run(amp_accelerator_view *q, amp_extent e, const amp_tiled_extent *t, amp_kernel *handle,
                           const amp_arg *args, size_t nargs, bool async, const amp__launch_opts *o,
                           amp__point *done, void **timing)
{
    amp__launch_opts caller = {o ? o->block : 0, o ? o->call : NULL, true};
    return amp__run_any(q, e, t, handle, args, nargs, async, &caller, done, timing);
}

amp_status amp_parallel_for_each(amp_accelerator_view *q, amp_extent e, amp_kernel *k, const amp_arg *args,
                                 size_t nargs)
{
    return amp__run(q, e, NULL, k, args, nargs, false, NULL, NULL, NULL);
}

amp_status amp_parallel_for_each_tiled(amp_accelerator_view *q, amp_tiled_extent t, amp_kernel *k,
                                       const amp_arg *args, size_t nargs)
{
    return amp__run(q, t.extent, &t, k, args, nargs, false, NULL, NULL, NULL);
}

/* ------------------------------------------------------- async launches */

static amp_status amp__run_async(amp_accelerator_view *q, amp_extent e, const amp_tiled_extent *t, amp_kernel *k,
                                 const amp_arg *args, size_t nargs, const amp__launch_opts *o, amp_future **out)
{
    if (!out)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: out is NULL",
                         o && o->call ? o->call : t ? "amp_parallel_for_each_tiled_async" : "amp_parallel_for_each_async");
    *out = NULL;
    amp_future *f = NULL;
    amp_status st = amp__future_new(&f);
    if (st != AMP_OK) return st;
    amp__point done = {NULL, 0};
    void *timing[2] = {NULL, NULL};
    if ((st = amp__run(q, e, t, k, args, nargs, true, o, &done, timing)) != AMP_OK) {
        amp_future_destroy(f);
        return st;
    }
    amp__future_complete_at(f, done, timing[0], timing[1]);
    *out = f;
    return AMP_OK;
}

amp_status amp_parallel_for_each_async(amp_accelerator_view *q, amp_extent e, amp_kernel *k, const amp_arg *args,
                                       size_t nargs, amp_future **out)
{
    return amp__run_async(q, e, NULL, k, args, nargs, NULL, out);
}

/* The _with forms: a NULL or zero block size is the plain call. */
amp_status amp_parallel_for_each_with(amp_accelerator_view *q, amp_extent e, amp_kernel *k, const amp_arg *args,
                                      size_t nargs, const amp_launch_options *o)
{
    amp__launch_opts lo = {o ? o->block_size : 0, "amp_parallel_for_each_with", true};
    return amp__run(q, e, NULL, k, args, nargs, false, &lo, NULL, NULL);
}

amp_status amp_parallel_for_each_with_async(amp_accelerator_view *q, amp_extent e, amp_kernel *k,
                                            const amp_arg *args, size_t nargs, const amp_launch_options *o,
                                            amp_future **out)
{
    amp__launch_opts lo = {o ? o->block_size : 0, "amp_parallel_for_each_with_async", true};
    return amp__run_async(q, e, NULL, k, args, nargs, &lo, out);
}

amp_status amp_parallel_for_each_tiled_async(amp_accelerator_view *q, amp_tiled_extent t, amp_kernel *k,
                                             const amp_arg *args, size_t nargs, amp_future **out)
{
    return amp__run_async(q, t.extent, &t, k, args, nargs, NULL, out);
}

amp_status amp__launch_tiled(amp_accelerator_view *q, amp_tiled_extent t, amp_kernel *k, const amp_arg *args,
                             size_t nargs, bool async, amp__point *done)
{
    return amp__run_any(q, t.extent, &t, k, args, nargs, async, NULL, done, NULL);
}
