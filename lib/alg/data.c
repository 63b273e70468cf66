/* alg/data.c — the algorithms' arguments: a view or array resolved to its
 * storage, box and element layout (amp__alg_shape), the checks every
 * algorithm makes (types, operators, sizes, overlap, writability), the
 * queue a call runs on, and the launch sequence of one call. */
#include "alg.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

size_t amp_type_size(amp_type t)
{
    switch (t) {
    case AMP_TYPE_INT32:
    case AMP_TYPE_UINT32:
    case AMP_TYPE_FLOAT32: return 4;
    case AMP_TYPE_INT64:
    case AMP_TYPE_UINT64:
    case AMP_TYPE_FLOAT64: return 8;
    }
    return 0;
}

const char *amp_type_name(amp_type t)
{
    switch (t) {
    case AMP_TYPE_INT32: return "int32";
    case AMP_TYPE_UINT32: return "uint32";
    case AMP_TYPE_INT64: return "int64";
    case AMP_TYPE_UINT64: return "uint64";
    case AMP_TYPE_FLOAT32: return "float32";
    case AMP_TYPE_FLOAT64: return "float64";
    }
    return "unknown";
}

const char *amp_op_name(amp_op op)
{
    switch (op) {
    case AMP_OP_SUM: return "AMP_OP_SUM";
    case AMP_OP_SUB: return "AMP_OP_SUB";
    case AMP_OP_PRODUCT: return "AMP_OP_PRODUCT";
    case AMP_OP_DIV: return "AMP_OP_DIV";
    case AMP_OP_MOD: return "AMP_OP_MOD";
    case AMP_OP_MIN: return "AMP_OP_MIN";
    case AMP_OP_MAX: return "AMP_OP_MAX";
    case AMP_OP_AND: return "AMP_OP_AND";
    case AMP_OP_OR: return "AMP_OP_OR";
    case AMP_OP_XOR: return "AMP_OP_XOR";
    }
    return "unknown";
}

amp_status amp__alg_type_ok(const char *fn, amp_type t)
{
    if (amp_type_size(t) == 0)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: type %d is not an amp_type", fn, (int)t);
    return AMP_OK;
}

amp_status amp__alg_op_ok(const char *fn, amp_type t, amp_op op)
{
    amp_status st = amp__alg_type_ok(fn, t);
    if (st != AMP_OK) return st;
    if ((int)op < AMP_OP_ADD || (int)op > AMP_OP_XOR)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: op %d is not an amp_op", fn, (int)op);
    if (op == AMP_OP_SUB || op == AMP_OP_DIV || op == AMP_OP_MOD)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %s is not associative; reductions and scans take "
                         "AMP_OP_SUM, AMP_OP_PRODUCT, AMP_OP_MIN, AMP_OP_MAX, AMP_OP_AND, AMP_OP_OR, AMP_OP_XOR",
                         fn, amp_op_name(op));
    if (op >= AMP_OP_AND && (t == AMP_TYPE_FLOAT32 || t == AMP_TYPE_FLOAT64))
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %s is a bitwise operator, which %s (a floating-point type) "
                         "does not have", fn, amp_op_name(op), amp_type_name(t));
    return AMP_OK;
}

amp_status amp__alg_not_recording(const char *fn, amp_accelerator_view *q, bool has_async)
{
    if (!atomic_load_explicit(&q->recorder, memory_order_acquire)) return AMP_OK;
    /* Another thread's recording: that is the reason (its _async form
     * would be refused as well). */
    amp_status st = amp__graph_check_thread(q, fn);
    if (st != AMP_OK) return st;
    if (has_async)
        return amp__fail(AMP_ERROR_BUSY, "%s: the accelerator view is recording a launch graph, and %s returns its "
                         "result on the host, which exists only once the graph runs: record %s_async instead (its "
                         "result stays on the device, in a one-element array or view), or call %s outside the "
                         "recording", fn, fn, fn, fn);
    return amp__fail(AMP_ERROR_BUSY, "%s: the accelerator view is recording a launch graph, and %s returns its "
                     "result on the host, which exists only once the graph runs (it has no form that leaves the "
                     "result on the device): call it before or after the recording", fn, fn);
}

amp_status amp__alg_data_not_recorded(const char *fn, const char *what, const amp__alg_data *d)
{
    if (!d->s) return AMP_OK;
    char call[128];
    snprintf(call, sizeof call, "%s (%s)", fn, what);
    amp_status st = amp__storage_lock(d->s, call);
    if (st != AMP_OK) return st;
    st = amp__storage_refuse_host(d->s, call);
    amp__lock_release(&d->s->lock);
    return st;
}

amp_status amp__alg_count_ok(const char *fn, int64_t n)
{
    if (n > AMP_ALG_MAX_ELEMENTS)
        return amp__fail(AMP_ERROR_UNSUPPORTED, "%s: %lld elements; the algorithms take at most %lld", fn,
                         (long long)n, (long long)AMP_ALG_MAX_ELEMENTS);
    return AMP_OK;
}

/* The layout of a view of rank r with extents ext and element strides
 * stride: dimensions of extent 1 dropped, each merged into the next when it
 * is contiguous with it (and the merged extent still fits an int). false:
 * more than AMP__ALG_SHAPE_RANK dimensions remain. */
static bool amp__alg_make_shape(int r, const int *ext, const int64_t *stride, amp__alg_shape *sh)
{
    int64_t n = 1, want = 1;
    bool contiguous = true;
    for (int d = r - 1; d >= 0; --d) {
        n *= ext[d];
        if (ext[d] > 1 && stride[d] != want) contiguous = false;
        want *= ext[d];
    }
    memset(sh, 0, sizeof *sh);
    sh->n = n;
    sh->contiguous = contiguous;
    /* No element: one dimension of none, whatever the view's rank and
     * strides (an empty view of rank 5 to 8 is valid input: nothing to
     * do, a reduction's identity). */
    if (n == 0) {
        sh->rank = 1;
        sh->stride[0] = 1;
        sh->contiguous = 1;
        return true;
    }
    /* Outermost first, built from the innermost. */
    int64_t cur_ext = 1, cur_stride = 1;
    int64_t e_out[AMP_MAX_RANK + 1], s_out[AMP_MAX_RANK + 1];
    int k = 0;
    bool have = false;
    for (int d = r - 1; d >= 0; --d) {
        if (ext[d] == 1) continue;
        if (!have) {
            cur_ext = ext[d];
            cur_stride = stride[d];
            have = true;
        } else if (stride[d] == cur_ext * cur_stride && cur_ext * ext[d] <= INT_MAX) {
            cur_ext *= ext[d];
        } else {
            e_out[k] = cur_ext;
            s_out[k] = cur_stride;
            ++k;
            cur_ext = ext[d];
            cur_stride = stride[d];
        }
    }
    e_out[k] = cur_ext;
    s_out[k] = have ? cur_stride : 1;
    ++k;
    if (k > AMP__ALG_SHAPE_RANK) return false;
    sh->rank = k;
    for (int i = 0; i < k; ++i) {
        sh->ext[i] = (int32_t)e_out[k - 1 - i];
        sh->stride[i] = s_out[k - 1 - i];
    }
    return true;
}

amp_status amp__alg_resolve(const char *fn, const char *what, amp_arg a, size_t elem, const char *tname,
                         amp__alg_data *out)
{
    memset(out, 0, sizeof *out);
    out->arg = a;
    const int *ext;
    const int64_t *stride;
    int r;
    if (a.kind == AMP_ARG_VIEW) {
        amp_array_view *v = a.u.view;
        amp_status st = amp__handle_check(v, AMP__HANDLE_VIEW, fn, what);
        if (st != AMP_OK) return st;
        /* The view's own layout (a section's, a projection's, a
         * reinterpret_as or view_as view's: element size and strides of
         * its own), fixed at its creation. */
        out->s = v->s;
        out->box = &v->box;
        out->offset = v->offset;
        out->elem = v->elem;
        out->read_only = v->access == AMP_READ_ONLY;
        r = v->ext.rank;
        ext = v->ext.v;
        stride = v->stride;
    } else if (a.kind == AMP_ARG_ARRAY) {
        amp_array *arr = a.u.array;
        amp_status st = amp__handle_check(arr, AMP__HANDLE_ARRAY, fn, what);
        if (st != AMP_OK) return st;
        /* A kernel takes an array where it lives (launch.c), and a staging
         * array lives on no accelerator: refused here, before anything is
         * compiled or queued, by the call's and the argument's names. */
        if (!arr->s->home_acc)
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                             "%s: %s is a staging array, in host memory (pass a view of it: amp_array_view_of_array)",
                             fn, what);
        out->s = arr->s;
        out->box = &arr->s->whole;
        out->elem = arr->s->elem;
        r = arr->s->ext.rank;
        ext = arr->s->ext.v;
        stride = arr->s->stride;
    } else {
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %s must be a view or an array (amp_arg_view, amp_arg_array), "
                         "not %s", fn, what, a.kind ? amp__kind_name(a.kind) : "an empty amp_arg");
    }
    if (elem && out->elem != elem)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %s has %zu-byte elements; %s has %zu", fn, what, out->elem,
                         tname, elem);
    /* Where the data belongs: an array's accelerator (also for a view of
     * it; home_acc never changes), else where a view of host memory has
     * its device copy. */
    out->acc = out->s->home_acc;
    if (!out->acc) {
        amp_status st = amp__storage_lock(out->s, fn); /* a forked child: AMP_ERROR_DEVICE */
        if (st != AMP_OK) return st;
        out->acc = out->s->acc;
        amp__lock_release(&out->s->lock);
    }
    if (!amp__alg_make_shape(r, ext, stride, &out->shape))
        return amp__fail(AMP_ERROR_UNSUPPORTED, "%s: %s has more than %d strided dimensions (after merging the "
                         "contiguous ones); the algorithms take at most %d", fn, what, AMP__ALG_SHAPE_RANK,
                         AMP__ALG_SHAPE_RANK);
    return amp__alg_count_ok(fn, out->shape.n);
}

amp_arg amp__alg_span(const amp__alg_data *d, bool overwrite)
{
    amp_arg a = d->arg;
    a.kind = (amp_arg_kind)(AMP__ARG_SPAN | (d->arg.kind == AMP_ARG_ARRAY ? AMP__ARG_SPAN_ARRAY : 0) |
                            (overwrite ? AMP__ARG_SPAN_OVERWRITE : 0));
    return a;
}

amp_arg amp__alg_shape_arg(const amp__alg_data *d) { return amp_arg_struct(&d->shape, sizeof d->shape); }

amp_status amp__alg_writable(const char *fn, const char *what, const amp__alg_data *d)
{
    if (d->read_only)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %s is an AMP_READ_ONLY view, and the call writes it", fn,
                         what);
    return AMP_OK;
}

bool amp__alg_overlap(const amp__alg_data *a, const amp__alg_data *b, bool *same)
{
    *same = false;
    amp__box x;
    if (a->s == b->s) {
        /* Boxes hold at least the elements (a reinterpret_as or view_as
         * view's may hold more), so boxes apart mean elements apart; the
         * same elements in the same order need the same layout. */
        if (!amp__box_intersect(a->box, b->box, a->s->ext.rank, &x)) return false;
        *same = a->offset == b->offset && a->elem == b->elem && !memcmp(&a->shape, &b->shape, sizeof a->shape);
        return true;
    }
    /* Two storages: amp__parts_share_memory. */
    amp__part pa = {a->s, a->box, a->offset, a->elem, a->shape.rank, a->shape.ext, a->shape.stride};
    amp__part pb = {b->s, b->box, b->offset, b->elem, b->shape.rank, b->shape.ext, b->shape.stride};
    return amp__parts_share_memory(&pa, &pb);
}

amp_status amp__alg_apart(const char *fn, const char *wa, const amp__alg_data *a, const char *wb,
                          const amp__alg_data *b)
{
    bool same;
    if (!amp__alg_overlap(a, b, &same)) return AMP_OK;
    const char *how = a->s == b->s ? "parts of one view or array" : amp__shared_memory_kind(a->s);
    return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %s and %s overlap (%s): an argument the call writes must "
                     "not share memory with another", fn, wa, wb, how);
}

amp_status amp__alg_queue(amp_accelerator_view *q, const amp__alg_data *d, size_t nd, amp_accelerator *acc,
                          amp_accelerator_view **out)
{
    *out = q;
    if (q) return AMP_OK;
    for (size_t i = 0; i < nd && !acc; ++i) acc = d[i].acc;
    if (acc) return amp__accelerator_queue(acc, out);
    return amp__default_queue(out);
}

/* ------------------------------------------------------------ launching */

amp_status amp__alg_run_begin(amp__alg_run *r, amp_accelerator_view *q, bool async, bool want_future)
{
    memset(r, 0, sizeof *r);
    r->q = q;
    r->async = async;
    if (async && want_future) return amp__queue_timed_event(q, &r->t0);
    return AMP_OK;
}

amp_status amp__alg_run_fits(const amp__alg_run *r, const amp_arg *a, size_t n, const amp_arg *b, size_t m)
{
    enum { MAX_ARGS = 64 };
    amp_arg all[MAX_ARGS];
    size_t k = 0;
    for (size_t i = 0; i < n && k < MAX_ARGS; ++i) all[k++] = a[i];
    for (size_t i = 0; i < m && k < MAX_ARGS; ++i) all[k++] = b[i];
    return amp__launch_args_fit(r->q, all, k);
}

amp_status amp__alg_launch(amp__alg_run *r, const amp__alg_prog *p, int k, int64_t ntiles, const amp_arg *args,
                           size_t nargs)
{
    if (ntiles < 1) ntiles = 1;
    int64_t threads = ntiles * p->tile;
    if (threads > INT_MAX)
        return amp__fail(AMP_ERROR_UNSUPPORTED, "algorithm kernel launch of %lld tiles of %d threads: more than %d "
                         "threads", (long long)ntiles, p->tile, INT_MAX);
    amp_tiled_extent te;
    amp_status st = amp_extent_tile_1d(amp_extent_1d((int)threads), p->tile, &te);
    if (st != AMP_OK) return st;
    amp__point done = {NULL, 0};
    if ((st = amp__launch_tiled(r->q, te, p->k[k], args, nargs, r->async, &done)) != AMP_OK) return st;
    r->done = done;
    r->launched++;
    return AMP_OK;
}

amp_status amp__alg_run_end(amp__alg_run *r, amp_status st, amp_future **out)
{
    amp_graph *g = amp__graph_here();
    bool recorded = g && amp__graph_queue(g) == r->q;
    if (st != AMP_OK && recorded && r->launched) amp__graph_break(g, st);
    if (st != AMP_OK || !out || (!r->done.q && !recorded)) {
        amp__queue_event_release(r->q, r->t0);
        r->t0 = NULL;
        return st;
    }
    void *t1 = NULL;
    if (r->t0 && amp__queue_timed_event(r->q, &t1) != AMP_OK) {
        amp__queue_event_release(r->q, r->t0);
        r->t0 = NULL;
        t1 = NULL;
    }
    amp_future *f = NULL;
    if ((st = amp__future_new(&f)) != AMP_OK) {
        /* The call fails: a replay must not run what it recorded. */
        if (recorded && r->launched) amp__graph_break(g, st);
        amp__queue_event_release(r->q, r->t0);
        amp__queue_event_release(r->q, t1);
        r->t0 = NULL;
        return st;
    }
    /* Recorded: done is no point (complete at once) and t0 is NULL. */
    amp__future_complete_at(f, r->done, r->t0, r->t0 ? t1 : NULL);
    r->t0 = NULL;
    *out = f;
    return AMP_OK;
}

int64_t amp__alg_spread(const amp__alg_prog *p, int64_t n, int64_t *per)
{
    int64_t chunk = (int64_t)p->tile * p->reduce_items;
    int64_t ntiles = (n + chunk - 1) / chunk;
    if (ntiles > p->reduce_tiles) ntiles = p->reduce_tiles;
    if (p->reduce_grain > 1 && ntiles > n / p->reduce_grain) ntiles = n / p->reduce_grain;
    if (ntiles < 1) ntiles = 1;
    /* Whole chunks per tile, so that every tile but the last runs its
     * unguarded loop. */
    *per = (n + ntiles - 1) / ntiles;
    *per = (*per + chunk - 1) / chunk * chunk;
    if (*per > 0) ntiles = (n + *per - 1) / *per;
    return ntiles < 1 ? 1 : ntiles;
}
