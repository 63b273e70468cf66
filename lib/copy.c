/* copy.c — C++ AMP's copy and copy_async: between two arrays and between two
 * array_views of equal extent (host views, views of arrays, strided sections
 * of either), on one accelerator, between two (peer where the driver can,
 * else through host memory), or between a GPU and the CPU accelerator.
 * Exactly the bytes of the views move; the source is read where it is
 * current and the destination's other copies are marked stale. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One side of a copy: a storage box seen through a view's extent. */
typedef struct amp__side {
    amp__storage *s;
    amp_index origin; /* storage coordinates */
    amp_extent ext;   /* the view's extent (rank r <= storage rank) */
    amp__box box;
    amp_accelerator_view *q; /* an array's own queue; NULL for views */
} amp__side;

/* Where a side's bytes are read or written: an accelerator's memory (acc)
 * or plain host memory (acc NULL). The CPU accelerator's memory is host
 * memory too (host is then true): copies to and from it are done on this
 * thread, and counted on its queue like a GPU's. */
typedef struct amp__place {
    char *base;           /* address of the storage's element 0 */
    amp_accelerator *acc; /* NULL: plain host memory */
    bool host;            /* the host can address it */
} amp__place;

static void amp__side_of_view(amp_array_view *v, amp__side *d)
{
    d->s = v->s;
    d->origin = v->origin;
    d->ext = v->ext;
    d->q = NULL;
    d->box = v->box;
}

static void amp__side_of_array(amp_array *a, amp__side *d)
{
    d->s = a->s;
    d->ext = a->s->ext;
    d->origin.rank = d->ext.rank;
    memset(d->origin.v, 0, sizeof d->origin.v);
    d->box = a->s->whole;
    d->q = a->q;
}

static bool amp__host_memory(const amp_accelerator *acc) { return acc && acc->e.info.is_emulated; }

/* The queue a side's device work runs on: the array's own, else the one
 * that last used the storage, else its accelerator's default. */
static amp_status amp__side_queue(const amp__side *d, amp_accelerator_view **q)
{
    if (d->q) {
        *q = d->q;
        return AMP_OK;
    }
    if (d->s->last.q && d->s->last.q->acc == d->s->acc) {
        *q = d->s->last.q;
        return AMP_OK;
    }
    return amp__accelerator_queue(d->s->acc, q);
}

/* A strided copy of the view extent between two places with their own
 * strides: rows of the last dimension, up to three dimensions per driver
 * copy, the fourth looped. */
typedef struct amp__plan {
    amp__copy c;
    int outer;                 /* iterations of the fourth dimension */
    int64_t src_outer, dst_outer; /* byte strides of it */
} amp__plan;

static void amp__plan_make(const amp__side *src, const amp__side *dst, char *sbase, char *dbase, amp__copy_dir dir,
                           amp__plan *p)
{
    int r = src->ext.rank, RS = src->s->ext.rank, RD = dst->s->ext.rank;
    size_t elem = src->s->elem;
    memset(p, 0, sizeof *p);
    p->c.dir = dir;
    p->c.width_bytes = (size_t)src->ext.v[r - 1] * elem;
    p->c.height = r >= 2 ? (size_t)src->ext.v[r - 2] : 1;
    p->c.depth = r >= 3 ? (size_t)src->ext.v[r - 3] : 1;
    p->c.src_pitch = r >= 2 ? (size_t)src->s->stride[RS - 2] * elem : p->c.width_bytes;
    p->c.dst_pitch = r >= 2 ? (size_t)dst->s->stride[RD - 2] * elem : p->c.width_bytes;
    p->c.src_slice_pitch = r >= 3 ? (size_t)src->s->stride[RS - 3] * elem : p->c.src_pitch * p->c.height;
    p->c.dst_slice_pitch = r >= 3 ? (size_t)dst->s->stride[RD - 3] * elem : p->c.dst_pitch * p->c.height;
    p->outer = r >= 4 ? src->ext.v[0] : 1;
    p->src_outer = r >= 4 ? src->s->stride[RS - 4] * (int64_t)elem : 0;
    p->dst_outer = r >= 4 ? dst->s->stride[RD - 4] * (int64_t)elem : 0;
    p->c.src = sbase + amp__storage_offset(src->s, src->origin.v) * (int64_t)elem;
    p->c.dst = dbase + amp__storage_offset(dst->s, dst->origin.v) * (int64_t)elem;
}

/* The bytes one side spans are one contiguous run. */
static bool amp__contiguous(const amp__side *d)
{
    int r = d->ext.rank, R = d->s->ext.rank;
    int64_t expect = 1;
    for (int k = r - 1; k >= 0; --k) {
        if (d->ext.v[k] > 1 && d->s->stride[R - r + k] != expect) return false;
        expect *= d->ext.v[k];
    }
    return true;
}

static uint64_t amp__side_bytes(const amp__side *d) { return (uint64_t)amp_extent_size(d->ext) * d->s->elem; }

/* Host to host, on this thread. */
static void amp__host_copy(const amp__plan *p)
{
    for (int o = 0; o < p->outer; ++o)
        for (size_t z = 0; z < p->c.depth; ++z)
            for (size_t y = 0; y < p->c.height; ++y)
                memmove((char *)p->c.dst + o * p->dst_outer + z * p->c.dst_slice_pitch + y * p->c.dst_pitch,
                        (const char *)p->c.src + o * p->src_outer + z * p->c.src_slice_pitch + y * p->c.src_pitch,
                        p->c.width_bytes);
}

/* Queue the plan on q (loops the fourth dimension). */
static amp_status amp__queue_plan(amp_accelerator_view *q, amp__plan *p, amp__point *done)
{
    const char *s0 = p->c.src;
    char *d0 = p->c.dst;
    for (int o = 0; o < p->outer; ++o) {
        p->c.src = s0 + o * p->src_outer;
        p->c.dst = d0 + o * p->dst_outer;
        amp_status st = amp__queue_copy(q, &p->c, done);
        if (st != AMP_OK) return st;
    }
    return AMP_OK;
}

/* A host view's storage holds a device copy (not unified). */
static bool amp__view_on_device(const amp__storage *s)
{
    return !s->is_array && s->acc && !s->unified;
}

static bool amp__boxes_meet(const amp__box *list, int n, const amp__box *b, int r)
{
    amp__box cut;
    for (int i = 0; i < n; ++i)
        if (amp__box_intersect(&list[i], b, r, &cut)) return true;
    return false;
}

/* Where dst is written (no side effects yet). A host view whose device copy
 * holds the whole box current is written there (the ghost rows of a halo
 * exchange then never touch the host); otherwise in host memory. */
static void amp__dest_place(const amp__side *dst, amp__place *at)
{
    const amp__storage *s = dst->s;
    int R = s->ext.rank;
    if (s->is_array || (amp__view_on_device(s) && amp__boxes_cover(s->valid, s->nvalid, &dst->box, R) &&
                        s->ndirty < AMP__MAX_BOXES)) {
        at->base = s->dptr;
        at->acc = s->acc;
    } else {
        at->base = s->host;
        at->acc = NULL;
    }
    at->host = !at->acc || amp__host_memory(at->acc);
}

/* Where src is read: an array's memory; for a host view, its device copy
 * when that holds the whole box and is newer there or the destination is on
 * the same device, else its host memory once the device-newer parts of the
 * box came back (exactly those bytes). Storage lock held. */
static amp_status amp__source_place(amp__side *src, const amp__place *to, amp__place *at)
{
    amp__storage *s = src->s;
    int R = s->ext.rank;
    if (s->is_array || (amp__view_on_device(s) && amp__boxes_cover(s->valid, s->nvalid, &src->box, R) &&
                        (amp__boxes_meet(s->dirty, s->ndirty, &src->box, R) || to->acc == s->acc))) {
        at->base = s->dptr;
        at->acc = s->acc;
        at->host = amp__host_memory(s->acc);
        return AMP_OK;
    }
    at->base = s->host;
    at->acc = NULL;
    at->host = true;
    return amp__storage_sync(s, &src->box);
}

/* Before a host view is written in host memory: device-newer data in the
 * box is overwritten, so drop it without copying it back, and wait until
 * nothing still uses the storage. */
static amp_status amp__dest_prepare_host(amp__side *dst)
{
    amp_status st = amp__storage_discard(dst->s, &dst->box);
    if (st != AMP_OK) return st;
    return amp__point_wait(dst->s->last);
}

/* Both storages locked. *done is the point after the last queued copy
 * ({NULL, 0} when all of it happened on this thread). */
static amp_status amp__copy_locked(amp__side *src, amp__side *dst, amp__point *done, void **timing)
{
    amp_status st = AMP_OK;
    amp__place from, to;
    amp__plan plan;
    uint64_t bytes = amp__side_bytes(src);
    amp_accelerator_view *q = NULL;
    void *staging = NULL;
    AMP__TRACE_SPAN(span);
    AMP__TRACE_SPAN(span2);
    *done = (amp__point){NULL, 0};
    amp__dest_place(dst, &to);
    if ((st = amp__source_place(src, &to, &from)) != AMP_OK) return st;
    bool dst_view_on_device = !dst->s->is_array && to.acc;
    if (!dst->s->is_array && !to.acc && (st = amp__dest_prepare_host(dst)) != AMP_OK) return st;

    if (from.host && to.host) {
        /* Host-addressable on both sides (host views, the CPU accelerator):
         * after the last uses, on this thread; counted on the queue of the
         * accelerator memory involved, as that accelerator's copy. */
        if ((st = amp__point_wait(src->s->last)) != AMP_OK || (st = amp__point_wait(dst->s->last)) != AMP_OK) return st;
        amp__copy_dir hdir = !from.acc ? (!to.acc ? AMP__H2H : AMP__H2D) : (!to.acc ? AMP__D2H : AMP__D2D);
        amp__plan_make(src, dst, from.base, to.base, hdir, &plan);
        AMP__TRACE(amp__queue_span_begin(&span, NULL, hdir, bytes, AMP__WHY_COPY));
        amp__host_copy(&plan);
        amp_accelerator_view *count_on = NULL;
        if (to.acc && amp__side_queue(dst, &count_on) == AMP_OK) amp__queue_count_copy(count_on, hdir, bytes);
        else if (from.acc && amp__side_queue(src, &count_on) == AMP_OK) amp__queue_count_copy(count_on, hdir, bytes);
        else if (dst->s->acc && amp__side_queue(dst, &count_on) == AMP_OK) amp__queue_count_copy(count_on, hdir, bytes);
        else if (src->s->acc && amp__side_queue(src, &count_on) == AMP_OK) amp__queue_count_copy(count_on, hdir, bytes);
        else if (amp__default_queue(&count_on) == AMP_OK) amp__queue_count_copy(count_on, hdir, bytes);
        else count_on = NULL;
        AMP__TRACE(amp__queue_span_end(&span, count_on, dst->s, &dst->box, AMP_OK));
        goto marks;
    }
    /* A GPU on at least one side; the CPU accelerator's memory, if on the
     * other, is host memory to it. */
    if (from.host) from.acc = NULL;
    if (to.host) to.acc = NULL;
    amp__copy_dir dir = !from.acc ? AMP__H2D : !to.acc ? AMP__D2H : AMP__D2D;
    /* The device side's queue runs the copy (the destination's for
     * host-to-device and device-to-device, the source's for device-to-host
     * and peer copies). */
    bool same_device = from.acc == to.acc;
    bool use_src_queue = dir == AMP__D2H || (dir == AMP__D2D && !same_device);
    if ((st = amp__side_queue(use_src_queue ? src : dst, &q)) != AMP_OK) return st;
    if ((st = amp__point_order(q, src->s->last)) != AMP_OK || (st = amp__point_order(q, dst->s->last)) != AMP_OK)
        return st;
    if (timing && (st = amp__queue_timed_event(q, &timing[0])) != AMP_OK) return st;
    /* One span for whichever path runs on q (a failed peer attempt queues
     * nothing, so it also times the staged path's first half). */
    AMP__TRACE(amp__queue_span_begin(&span, q, dir, bytes, AMP__WHY_COPY));
    if (dir != AMP__D2D || same_device) {
        amp__plan_make(src, dst, from.base, to.base, dir, &plan);
        if ((st = amp__queue_plan(q, &plan, done)) != AMP_OK) goto fail;
        amp__queue_count_copy(q, dir, bytes);
        AMP__TRACE(amp__queue_span_end(&span, q, dst->s, &dst->box, AMP_OK));
    } else if (amp__contiguous(src) && amp__contiguous(dst) &&
               (amp__plan_make(src, dst, from.base, to.base, dir, &plan),
                amp__queue_copy_peer(q, to.acc, plan.c.dst, plan.c.src, (size_t)bytes, done) == AMP_OK)) {
        amp__queue_count_copy(q, AMP__D2D, bytes);
        AMP__TRACE(amp__queue_span_end(&span, q, dst->s, &dst->box, AMP_OK));
    } else {
        /* Two devices that cannot copy to each other (or strided views):
         * down to host memory, then up. */
        amp_accelerator_view *q2 = NULL;
        amp__side stage;
        amp__storage tmp;
        if ((st = amp__side_queue(dst, &q2)) != AMP_OK) goto fail;
        if (!(staging = malloc(bytes ? bytes : 1))) {
            st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "copy: no memory to stage %llu bytes", (unsigned long long)bytes);
            goto fail;
        }
        memset(&tmp, 0, sizeof tmp);
        tmp.elem = src->s->elem;
        tmp.ext = src->ext;
        int64_t stride = 1;
        for (int k = tmp.ext.rank - 1; k >= 0; --k) {
            tmp.stride[k] = stride;
            stride *= tmp.ext.v[k];
        }
        memset(&stage, 0, sizeof stage);
        stage.s = &tmp;
        stage.ext = src->ext;
        stage.origin.rank = src->ext.rank;
        amp__plan_make(src, &stage, from.base, staging, AMP__D2H, &plan);
        amp__point down = {NULL, 0};
        AMP__TRACE(span.dir = AMP__D2H; span.why = AMP__WHY_COPY_STAGED);
        if ((st = amp__queue_plan(q, &plan, &down)) != AMP_OK || (st = amp__point_wait(down)) != AMP_OK) goto fail;
        amp__queue_count_copy(q, AMP__D2H, bytes);
        AMP__TRACE(amp__queue_span_end(&span, q, src->s, &src->box, AMP_OK));
        amp__plan_make(&stage, dst, staging, to.base, AMP__H2D, &plan);
        if ((st = amp__point_order(q2, dst->s->last)) != AMP_OK) goto fail;
        AMP__TRACE(amp__queue_span_begin(&span2, q2, AMP__H2D, bytes, AMP__WHY_COPY_STAGED));
        if ((st = amp__queue_plan(q2, &plan, done)) != AMP_OK || (st = amp__point_wait(*done)) != AMP_OK) goto fail;
        amp__queue_count_copy(q2, AMP__H2D, bytes);
        AMP__TRACE(amp__queue_span_end(&span2, q2, dst->s, &dst->box, AMP_OK));
        q = q2;
    }
    if (timing && (st = amp__queue_timed_event(q, &timing[1])) != AMP_OK) goto fail;
    if (done->q) {
        amp__point_set(&src->s->last, *done);
        amp__point_set(&dst->s->last, *done);
    }
marks:
    /* A host view written on its device now has the box newer there; one
     * written in host memory has its device copies of the box stale. */
    if (dst_view_on_device) (void)amp__boxes_add(dst->s->dirty, &dst->s->ndirty, &dst->box, dst->s->ext.rank);
    else if (!dst->s->is_array) st = amp__storage_refresh(dst->s, &dst->box);
    free(staging);
    return st;
fail:
    /* Whatever reached a host view's device copy may be partial: the box is
     * neither current there nor here. */
    if (dst_view_on_device && !amp__boxes_subtract(dst->s->valid, &dst->s->nvalid, &dst->box, dst->s->ext.rank))
        dst->s->nvalid = 0;
    AMP__TRACE(amp__queue_span_end(&span, NULL, NULL, NULL, st); amp__queue_span_end(&span2, NULL, NULL, NULL, st));
    if (timing && timing[0]) {
        amp__queue_event_release(q, timing[0]);
        timing[0] = NULL;
    }
    if (done->q) {
        amp__point_set(&src->s->last, *done);
        amp__point_set(&dst->s->last, *done);
    }
    free(staging);
    return st;
}

static amp_status amp__copy_sides(amp__side *src, amp__side *dst, amp_future **out, const char *fn)
{
    amp_status st = AMP_OK;
    if (src->ext.rank != dst->ext.rank || !amp_extent_equal(src->ext, dst->ext)) {
        char a[64] = "", b[64] = "";
        for (int d = 0, n = 0; d < src->ext.rank; ++d) n += snprintf(a + n, sizeof a - (size_t)n, d ? "x%d" : "%d", src->ext.v[d]);
        for (int d = 0, n = 0; d < dst->ext.rank; ++d) n += snprintf(b + n, sizeof b - (size_t)n, d ? "x%d" : "%d", dst->ext.v[d]);
        return amp__fail(AMP_ERROR_INVALID_EXTENT, "%s: the source's extent %s differs from the destination's %s", fn, a, b);
    }
    if (src->s->elem != dst->s->elem)
        return amp__fail(AMP_ERROR_ARGUMENT_MISMATCH, "%s: the source has %zu-byte elements, the destination %zu", fn,
                         src->s->elem, dst->s->elem);
    if (src->s == dst->s) {
        amp__box cut;
        if (amp__box_intersect(&src->box, &dst->box, src->s->ext.rank, &cut))
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: source and destination overlap in the same storage", fn);
    }
    amp_future *f = NULL;
    void *timing[2] = {NULL, NULL};
    if (out && (st = amp__future_new(&f)) != AMP_OK) return st;
    amp__storage *first = src->s, *second = dst->s;
    if ((uintptr_t)first > (uintptr_t)second) {
        first = dst->s;
        second = src->s;
    }
    amp__lock_acquire(&first->lock);
    if (second != first) amp__lock_acquire(&second->lock);
    amp__point done = {NULL, 0};
    st = amp__copy_locked(src, dst, &done, out ? timing : NULL);
    if (second != first) amp__lock_release(&second->lock);
    amp__lock_release(&first->lock);
    if (st == AMP_OK && !out) st = amp__point_wait(done);
    if (out) {
        if (st != AMP_OK) {
            amp_future_destroy(f);
            return st;
        }
        amp__future_complete_at(f, done, timing[0], timing[1]);
        *out = f;
    }
    return st;
}

amp_status amp_copy_array(amp_array *src, amp_array *dst)
{
    AMP__HANDLE_OK(src, AMP__HANDLE_ARRAY);
    AMP__HANDLE_OK(dst, AMP__HANDLE_ARRAY);
    amp__side a, b;
    amp__side_of_array(src, &a);
    amp__side_of_array(dst, &b);
    return amp__copy_sides(&a, &b, NULL, __func__);
}

amp_status amp_copy_array_async(amp_array *src, amp_array *dst, amp_future **out)
{
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__HANDLE_OK(src, AMP__HANDLE_ARRAY);
    AMP__HANDLE_OK(dst, AMP__HANDLE_ARRAY);
    amp__side a, b;
    amp__side_of_array(src, &a);
    amp__side_of_array(dst, &b);
    return amp__copy_sides(&a, &b, out, __func__);
}

amp_status amp_copy_view(amp_array_view *src, amp_array_view *dst)
{
    AMP__HANDLE_OK(src, AMP__HANDLE_VIEW);
    AMP__HANDLE_OK(dst, AMP__HANDLE_VIEW);
    amp__side a, b;
    amp__side_of_view(src, &a);
    amp__side_of_view(dst, &b);
    return amp__copy_sides(&a, &b, NULL, __func__);
}

amp_status amp_copy_view_async(amp_array_view *src, amp_array_view *dst, amp_future **out)
{
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__HANDLE_OK(src, AMP__HANDLE_VIEW);
    AMP__HANDLE_OK(dst, AMP__HANDLE_VIEW);
    amp__side a, b;
    amp__side_of_view(src, &a);
    amp__side_of_view(dst, &b);
    return amp__copy_sides(&a, &b, out, __func__);
}
