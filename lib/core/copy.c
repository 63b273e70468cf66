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

/* One side of a copy: the elements of a view (its own layout) and the box
 * of storage elements they lie in. */
typedef struct amp__side {
    amp__storage *s;
    amp__box box;
    bool exact;      /* box holds the side's elements and nothing else */
    bool uncounted;  /* a host buffer of amp_array_view_get/_set: moves between two host memories are not
                        counted as copies */
    amp_extent ext;
    size_t elem;
    int64_t offset;  /* bytes from the storage's start */
    int64_t stride[AMP_MAX_RANK]; /* elements */
    amp_accelerator_view *q; /* an array's own queue; NULL for views */
    const void *handle;      /* the caller's view or array (graphs bind it) */
    amp_array_view *view;    /* NULL for an array */
} amp__side;

/* Where a side's bytes are read or written: the data source (home: host
 * memory, or an array's memory on its accelerator) or a device copy of it
 * on another accelerator. The CPU accelerator's memory is host memory too
 * (host is then true): copies between host-addressable places are done on
 * this thread, and counted on the accelerator's queue like a GPU's. */
typedef struct amp__place {
    char *base;           /* address of the storage's element 0 */
    amp_accelerator *acc; /* NULL: plain host memory */
    bool host;            /* the host can address it */
    bool device_copy;     /* a copy whose boxes the storage tracks (not the data source) */
} amp__place;

static void amp__side_of_view(amp_array_view *v, amp__side *d)
{
    memset(d, 0, sizeof *d);
    d->s = v->s;
    d->box = v->box;
    d->exact = v->exact;
    d->ext = v->ext;
    d->elem = v->elem;
    d->offset = v->offset;
    memcpy(d->stride, v->stride, sizeof(int64_t) * (size_t)v->ext.rank);
    d->handle = d->view = v;
}

static void amp__side_of_array(amp_array *a, amp__side *d)
{
    memset(d, 0, sizeof *d);
    d->s = a->s;
    d->box = a->s->whole;
    d->exact = true;
    d->ext = a->s->ext;
    d->elem = a->s->elem;
    memcpy(d->stride, a->s->stride, sizeof d->stride);
    d->q = a->q;
    d->handle = a;
    d->view = NULL;
}

/* The queue that runs a side's work on accelerator acc: the array's own,
 * else the one that last used the storage, else the data source's, else
 * acc's default; another where that one records a graph
 * (amp__accelerator_queue_for: an array of a recording view was refused
 * before, amp__side_refuse_recording). */
static amp_status amp__side_queue(const amp__side *d, amp_accelerator *acc, amp_accelerator_view **q)
{
    amp_accelerator_view *last = d->s->last.q, *home = d->s->home_q;
    return amp__accelerator_queue_for(
        acc, d->q && d->q->acc == acc ? d->q : last && last->acc == acc ? last : home && home->acc == acc ? home : NULL,
        q);
}

/* A strided copy of the side's extent between two places with their own
 * strides: rows of the last dimension, up to three dimensions per driver
 * copy, the leading ones looped. */
typedef struct amp__plan {
    amp__copy c;
    int nouter;                    /* leading dimensions looped */
    int outer[AMP_MAX_RANK];       /* their extents */
    int64_t src_outer[AMP_MAX_RANK], dst_outer[AMP_MAX_RANK]; /* their byte strides */
    int64_t count;                 /* driver copies: the product of outer */
} amp__plan;

static void amp__plan_make(const amp__side *src, const amp__side *dst, char *sbase, char *dbase, amp__copy_dir dir,
                           amp__plan *p)
{
    int r = src->ext.rank;
    size_t elem = src->elem;
    memset(p, 0, sizeof *p);
    p->c.dir = dir;
    p->c.width_bytes = (size_t)src->ext.v[r - 1] * elem;
    p->c.height = r >= 2 ? (size_t)src->ext.v[r - 2] : 1;
    p->c.depth = r >= 3 ? (size_t)src->ext.v[r - 3] : 1;
    p->c.src_pitch = r >= 2 ? (size_t)src->stride[r - 2] * elem : p->c.width_bytes;
    p->c.dst_pitch = r >= 2 ? (size_t)dst->stride[r - 2] * elem : p->c.width_bytes;
    p->c.src_slice_pitch = r >= 3 ? (size_t)src->stride[r - 3] * elem : p->c.src_pitch * p->c.height;
    p->c.dst_slice_pitch = r >= 3 ? (size_t)dst->stride[r - 3] * elem : p->c.dst_pitch * p->c.height;
    p->nouter = r > 3 ? r - 3 : 0;
    p->count = 1;
    for (int d = 0; d < p->nouter; ++d) {
        p->outer[d] = src->ext.v[d];
        p->src_outer[d] = src->stride[d] * (int64_t)elem;
        p->dst_outer[d] = dst->stride[d] * (int64_t)elem;
        p->count *= src->ext.v[d];
    }
    p->c.src = sbase + src->offset;
    p->c.dst = dbase + dst->offset;
}

/* Driver copy number n of the plan (its leading dimensions' position). */
static amp__copy amp__plan_at(const amp__plan *p, int64_t n)
{
    amp__copy c = p->c;
    c.src = (const char *)c.src + amp__odometer_offset(p->nouter, p->outer, p->src_outer, n);
    c.dst = (char *)c.dst + amp__odometer_offset(p->nouter, p->outer, p->dst_outer, n);
    return c;
}

static uint64_t amp__side_bytes(const amp__side *d) { return (uint64_t)amp_extent_size(d->ext) * d->elem; }

/* Host to host, on this thread. */
static void amp__host_copy(const amp__plan *p)
{
    for (int64_t o = 0; o < p->count; ++o) {
        amp__copy c = amp__plan_at(p, o);
        for (size_t z = 0; z < c.depth; ++z)
            for (size_t y = 0; y < c.height; ++y)
                memmove((char *)c.dst + z * c.dst_slice_pitch + y * c.dst_pitch,
                        (const char *)c.src + z * c.src_slice_pitch + y * c.src_pitch, c.width_bytes);
    }
}

/* Queue the plan on q (loops the leading dimensions). */
static amp_status amp__queue_plan(amp_accelerator_view *q, const amp__plan *p, amp__point *done)
{
    for (int64_t o = 0; o < p->count; ++o) {
        amp__copy c = amp__plan_at(p, o);
        amp_status st = amp__queue_copy(q, &c, done);
        if (st != AMP_OK) return st;
    }
    return AMP_OK;
}

/* The storage's data source as a place. */
static amp__place amp__home_place(const amp__storage *s)
{
    amp__place at = {s->home, s->home_acc, amp__host_addressable(s->home_acc), false};
    return at;
}

/* The storage holds a device copy of its data source (boxes tracked). */
static bool amp__has_device_copy(const amp__storage *s) { return s->acc && !s->direct; }

static bool amp__boxes_meet(const amp__box *list, int n, const amp__box *b, int r)
{
    amp__box cut;
    for (int i = 0; i < n; ++i)
        if (amp__box_intersect(&list[i], b, r, &cut)) return true;
    return false;
}

/* The host holds the data source itself, and may write it at any time
 * without telling a view: an array whose memory amp_array_data hands out
 * (a staging array, an array of the CPU accelerator). A device copy of
 * such a home is current only where it is newer (dirty): elsewhere the
 * host may have written home since the copy-in (C++ AMP's staging
 * pattern: write data(), then copy the array), and what is copied into
 * the array must reach home, which amp_array_data shows. (A kernel
 * through a view of it still needs that view's refresh to see such host
 * writes, as a view of host memory does.) */
static bool amp__home_host_owned(const amp__storage *s) { return s->is_array && amp__host_addressable(s->home_acc); }

/* Where dst is written (nothing moves yet). A device copy that holds the
 * whole box current, with room in its dirty list to say it is newer there,
 * is written there (the ghost rows of a halo exchange then never touch the
 * host; where the view that last used it records a graph, by a copy on
 * another view: amp__side_queue); otherwise, and always for a home the
 * host owns (amp__home_host_owned: its device copies of the box then go
 * stale), the data source. Writing the data source can still need a queue:
 * device-newer data in a box wider than the side's elements comes back
 * first (amp__dest_prepare_home). */
static void amp__dest_place(const amp__side *dst, amp__place *at)
{
    const amp__storage *s = dst->s;
    int R = s->ext.rank;
    if (amp__has_device_copy(s) && !amp__home_host_owned(s) && amp__boxes_cover(s->valid, s->nvalid, &dst->box, R) &&
        s->ndirty < AMP__MAX_BOXES) {
        at->base = s->dptr;
        at->acc = s->acc;
        at->host = amp__host_addressable(s->acc);
        at->device_copy = true;
    } else {
        *at = amp__home_place(s);
    }
}

/* Where src is read: its device copy when that holds the whole box and is
 * newer there or the destination is on the same accelerator (for a home
 * the host owns, amp__home_host_owned: only when the whole box is newer
 * there), else its data source once the device-newer parts of the box
 * came back (exactly those bytes). Storage lock held. A data source on a
 * device is not waited for: a copy queued on a device is ordered after its
 * last use (amp__point_order), and one made on this thread waits for it
 * first; so an asynchronous copy of a section of a device array that a
 * queued kernel still writes returns at once instead of after the kernel. */
static amp_status amp__source_place(amp__side *src, const amp__place *to, amp__place *at)
{
    amp__storage *s = src->s;
    int R = s->ext.rank;
    /* Dirty boxes lie inside valid ones: a dirty box holding the box holds
     * it current. */
    bool device = !amp__has_device_copy(s)      ? false
                  : amp__home_host_owned(s)     ? amp__boxes_cover(s->dirty, s->ndirty, &src->box, R)
                  : amp__boxes_cover(s->valid, s->nvalid, &src->box, R) &&
                        (amp__boxes_meet(s->dirty, s->ndirty, &src->box, R) || to->acc == s->acc);
    if (device) {
        at->base = s->dptr;
        at->acc = s->acc;
        at->host = amp__host_addressable(s->acc);
        at->device_copy = true;
        return AMP_OK;
    }
    *at = amp__home_place(s);
    /* A home in host memory may be pageable, and a copy from pageable
     * memory is staged by the driver at the call, outside stream order:
     * the host waits for the copies back then. */
    if (amp__host_addressable(s->home_acc)) return amp__storage_sync(s, &src->box);
    return amp__storage_sync_queue(s, &src->box);
}

/* Before a data source with a device copy is written: device-newer data in
 * the box is overwritten, so drop it without copying it back (a box wider
 * than the side's elements: bring it back, since the rest is kept). */
static amp_status amp__dest_prepare_home(amp__side *dst)
{
    if (!amp__has_device_copy(dst->s)) return AMP_OK;
    return dst->exact ? amp__storage_discard(dst->s, &dst->box) : amp__storage_sync(dst->s, &dst->box);
}

/* Where a copy reads (from) and writes (to), its destination's data source
 * made ready to be written where that takes it. Storage locks held. */
static amp_status amp__copy_places(amp__side *src, amp__side *dst, amp__place *from, amp__place *to)
{
    amp_status st;
    amp__dest_place(dst, to);
    if ((st = amp__source_place(src, to, from)) != AMP_OK) return st;
    /* Bringing src home can split dst's dirty boxes (two sections of one
     * storage) until no room is left to mark the write newer on the device
     * copy: then the data source takes it. */
    if (to->device_copy && dst->s->ndirty >= AMP__MAX_BOXES) amp__dest_place(dst, to);
    if (!to->device_copy && (st = amp__dest_prepare_home(dst)) != AMP_OK) return st;
    return AMP_OK;
}

/* After dst was written at to: a device copy has the box newer there
 * (amp__copy_places left room in the list); a data source has its device
 * copies of the box stale. Either ends a view's discard_data hint. */
static amp_status amp__dest_written(amp__side *dst, const amp__place *to)
{
    if (!to->device_copy && amp__has_device_copy(dst->s))
        return amp__storage_refresh(dst->s, &dst->box); /* counts the write */
    dst->s->writes++;
    if (to->device_copy) (void)amp__boxes_add(dst->s->dirty, &dst->s->ndirty, &dst->box, dst->s->ext.rank);
    return AMP_OK;
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
    /* The queue the timed events are of: both of one queue, which the
     * future releases them through (the staged path moves them to q2). */
    amp_accelerator_view *timed_on = NULL;
    void *staging = NULL;
    AMP__TRACE_SPAN(span);
    AMP__TRACE_SPAN(span2);
    *done = (amp__point){NULL, 0};
    if ((st = amp__copy_places(src, dst, &from, &to)) != AMP_OK) return st;

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
        if (hdir == AMP__H2H && (src->uncounted || dst->uncounted)) count_on = NULL;
        else if (to.acc && amp__side_queue(dst, to.acc, &count_on) == AMP_OK) amp__queue_count_copy(count_on, hdir, bytes);
        else if (from.acc && amp__side_queue(src, from.acc, &count_on) == AMP_OK) amp__queue_count_copy(count_on, hdir, bytes);
        else if (dst->s->acc && amp__side_queue(dst, dst->s->acc, &count_on) == AMP_OK) amp__queue_count_copy(count_on, hdir, bytes);
        else if (src->s->acc && amp__side_queue(src, src->s->acc, &count_on) == AMP_OK) amp__queue_count_copy(count_on, hdir, bytes);
        else if (amp__default_queue(&count_on) == AMP_OK) amp__queue_count_copy(count_on, hdir, bytes);
        else count_on = NULL;
        AMP__TRACE(amp__queue_span_end(&span, count_on, dst->s, &dst->box, AMP_OK));
        goto marks;
    }
    /* A GPU on at least one side; the CPU accelerator's memory, if on the
     * other, is host memory to it. */
    amp_accelerator *from_acc = from.host ? NULL : from.acc, *to_acc = to.host ? NULL : to.acc;
    amp__copy_dir dir = !from_acc ? AMP__H2D : !to_acc ? AMP__D2H : AMP__D2D;
    /* The device side's queue runs the copy (the destination's for
     * host-to-device and device-to-device, the source's for device-to-host
     * and peer copies). */
    bool same_device = from_acc == to_acc;
    bool use_src_queue = dir == AMP__D2H || (dir == AMP__D2D && !same_device);
    if ((st = use_src_queue ? amp__side_queue(src, from_acc, &q) : amp__side_queue(dst, to_acc, &q)) != AMP_OK)
        return st;
    if ((st = amp__point_order(q, src->s->last)) != AMP_OK || (st = amp__point_order(q, dst->s->last)) != AMP_OK)
        return st;
    if (timing && (st = amp__queue_timed_event(q, &timing[0])) != AMP_OK) return st;
    timed_on = q;
    /* One span for whichever path runs on q (a failed peer attempt queues
     * nothing, so it also times the staged path's first half). */
    AMP__TRACE(amp__queue_span_begin(&span, q, dir, bytes, AMP__WHY_COPY));
    if (dir != AMP__D2D || same_device) {
        amp__plan_make(src, dst, from.base, to.base, dir, &plan);
        if ((st = amp__queue_plan(q, &plan, done)) != AMP_OK) goto fail;
        amp__queue_count_copy(q, dir, bytes);
        AMP__TRACE(amp__queue_span_end(&span, q, dst->s, &dst->box, AMP_OK));
    } else if (amp__layout_contiguous(src->ext.rank, src->ext.v, src->stride) &&
               amp__layout_contiguous(dst->ext.rank, dst->ext.v, dst->stride) &&
               (amp__plan_make(src, dst, from.base, to.base, dir, &plan),
                amp__queue_copy_peer(q, to_acc, plan.c.dst, plan.c.src, (size_t)bytes, done) == AMP_OK)) {
        amp__queue_count_copy(q, AMP__D2D, bytes);
        AMP__TRACE(amp__queue_span_end(&span, q, dst->s, &dst->box, AMP_OK));
    } else {
        /* Two devices that cannot copy to each other (or strided views):
         * down to host memory, then up. */
        amp_accelerator_view *q2 = NULL;
        amp__side stage;
        if ((st = amp__side_queue(dst, to_acc, &q2)) != AMP_OK) goto fail;
        if (!(staging = malloc(bytes ? bytes : 1))) {
            st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "copy: no memory to stage %llu bytes", (unsigned long long)bytes);
            goto fail;
        }
        memset(&stage, 0, sizeof stage);
        stage.ext = src->ext;
        stage.elem = src->elem;
        for (int64_t k = stage.ext.rank - 1, n = 1; k >= 0; --k) {
            stage.stride[k] = n;
            n *= stage.ext.v[k];
        }
        amp__plan_make(src, &stage, from.base, staging, AMP__D2H, &plan);
        amp__point down = {NULL, 0};
        AMP__TRACE(span.dir = AMP__D2H; span.why = AMP__WHY_COPY_STAGED);
        if ((st = amp__queue_plan(q, &plan, &down)) != AMP_OK || (st = amp__point_wait(down)) != AMP_OK) goto fail;
        amp__queue_count_copy(q, AMP__D2H, bytes);
        AMP__TRACE(amp__queue_span_end(&span, q, src->s, &src->box, AMP_OK));
        amp__plan_make(&stage, dst, staging, to.base, AMP__H2D, &plan);
        if ((st = amp__point_order(q2, dst->s->last)) != AMP_OK) goto fail;
        /* Two devices' events cannot time one span: the future times the
         * upload (the download was waited for above). */
        if (timing && timing[0]) {
            amp__queue_event_release(timed_on, timing[0]);
            timing[0] = NULL;
            timed_on = q2;
            if ((st = amp__queue_timed_event(q2, &timing[0])) != AMP_OK) goto fail;
        }
        AMP__TRACE(amp__queue_span_begin(&span2, q2, AMP__H2D, bytes, AMP__WHY_COPY_STAGED));
        if ((st = amp__queue_plan(q2, &plan, done)) != AMP_OK || (st = amp__point_wait(*done)) != AMP_OK) goto fail;
        amp__queue_count_copy(q2, AMP__H2D, bytes);
        AMP__TRACE(amp__queue_span_end(&span2, q2, dst->s, &dst->box, AMP_OK));
        q = q2;
    }
    if (done->q) {
        amp__point_set(&src->s->last, *done);
        amp__point_set(&dst->s->last, *done);
    }
marks:
    st = amp__dest_written(dst, &to);
    /* Recorded above before the closing event. */
    if (st == AMP_OK && timing && timed_on) st = amp__queue_close_timing(timed_on, timing, "copy", "copy", NULL);
    if (st != AMP_OK && timing) {
        /* The caller makes no future of a failed copy: its events go here. */
        for (int k = 0; k < 2; ++k) {
            amp__queue_event_release(timed_on, timing[k]);
            timing[k] = NULL;
        }
    }
    free(staging);
    return st;
fail:
    /* Whatever reached the place written may be partial, and that place
     * holds the box's newest data, as a failed launch's writes are kept
     * (lib/core/launch.c): marked as a copy that ran (a device copy's box
     * was current there, so marking it newer copies back at worst what
     * home has). Other elements of a wider box keep where they are newest. */
    (void)amp__dest_written(dst, &to);
    AMP__TRACE(amp__queue_span_end(&span, NULL, NULL, NULL, st); amp__queue_span_end(&span2, NULL, NULL, NULL, st));
    if (timing) {
        for (int k = 0; k < 2; ++k) {
            amp__queue_event_release(timed_on, timing[k]);
            timing[k] = NULL;
        }
    }
    if (done->q) {
        amp__point_set(&src->s->last, *done);
        amp__point_set(&dst->s->last, *done);
    }
    free(staging);
    return st;
}

static int64_t amp__floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && a < 0); }
static int64_t amp__ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0 && a > 0); }

/* Whether steps k[d], |k[d]| < n[d], of dimensions d..r-1 (strides s,
 * positive, largest first) sum to want elements; span[d]: the most the
 * dimensions after d can add (sum of s[e] * (n[e] - 1)). Every k[d] that
 * leaves a reachable rest is tried, so the answer is exact, whether or not
 * a difference decomposes in one way only. *budget bounds the work: false
 * with *budget < 0 is "undecided". */
static bool amp__steps_reach(int r, const int *n, const int64_t *s, const int64_t *span, int d, int64_t want,
                             int *budget)
{
    if (--*budget < 0) return false;
    if (d == r) return want == 0;
    int64_t lo = amp__ceil_div(want - span[d], s[d]), hi = amp__floor_div(want + span[d], s[d]);
    if (lo < 1 - (int64_t)n[d]) lo = 1 - (int64_t)n[d];
    if (hi > (int64_t)n[d] - 1) hi = (int64_t)n[d] - 1;
    for (int64_t k = lo; k <= hi; ++k) {
        if (amp__steps_reach(r, n, s, span, d + 1, want - k * s[d], budget)) return true;
        if (*budget < 0) return false;
    }
    return false;
}

/* Two sides of one storage with one element size and the same strides
 * (sections of one view, whatever its shape): b's elements are a's moved
 * by b->offset - a->offset bytes, and they meet exactly when that move is
 * a whole number of elements made of steps k[d] along the strides with
 * |k[d]| < extent (element i of a is element i - k of b). 1: they meet,
 * 0: they do not, -1: undecided (other layouts, a move by part of an
 * element, a search over its budget). A view's strides are those of a
 * row-major layout (view_as and reinterpret_as make one, sections and
 * projections keep it), each larger than what the dimensions after it
 * span: at most two steps fit each dimension, so the search is short. */
static int amp__same_layout_meet(const amp__side *a, const amp__side *b)
{
    int r = a->ext.rank, m = 0, n[AMP_MAX_RANK];
    int64_t s[AMP_MAX_RANK], span[AMP_MAX_RANK];
    if (a->elem != b->elem || b->ext.rank != r) return -1;
    int64_t moved = b->offset - a->offset, e = (int64_t)a->elem;
    if (moved % e != 0) return -1;
    for (int d = 0; d < r; ++d) {
        if (a->ext.v[d] != b->ext.v[d]) return -1;
        if (a->ext.v[d] <= 0) return 0; /* empty: no elements */
        if (a->ext.v[d] == 1) continue; /* one index: no step, whatever its stride */
        if (a->stride[d] != b->stride[d] || a->stride[d] == 0) return -1;
        /* Largest stride first (insertion): the bounds then prune most. */
        int64_t sd = a->stride[d] < 0 ? -a->stride[d] : a->stride[d]; /* steps go both ways: the sign is moot */
        int at = m++;
        while (at > 0 && s[at - 1] < sd) {
            s[at] = s[at - 1];
            n[at] = n[at - 1];
            --at;
        }
        s[at] = sd;
        n[at] = a->ext.v[d];
    }
    for (int d = m - 1; d >= 0; --d) span[d] = d == m - 1 ? 0 : span[d + 1] + s[d + 1] * (int64_t)(n[d + 1] - 1);
    int budget = 4096;
    bool meet = amp__steps_reach(m, n, s, span, 0, moved / e, &budget);
    return budget < 0 ? -1 : meet;
}

/* Two sides whose elements may share bytes. Of one storage: exact boxes
 * that do not meet never share any; sides of one layout are decided
 * exactly (amp__same_layout_meet); otherwise (a reshaped view's wider box
 * against another layout) the byte ranges decide, conservatively. Of two
 * storages (views made apart over one buffer, arrays over one native
 * allocation): amp__parts_share_memory; a copy between them, done a row
 * at a time or through a device copy of one, would read what it had
 * already written.
 * The caller's element of amp_array_view_get/_set (uncounted) is not held
 * to it: a single element moved onto memory it shares is moved whole. */
static bool amp__sides_overlap(const amp__side *a, const amp__side *b)
{
    if (a->s != b->s) {
        if (a->uncounted || b->uncounted) return false;
        amp__part pa = {a->s, &a->box, a->offset, a->elem, a->ext.rank, a->ext.v, a->stride};
        amp__part pb = {b->s, &b->box, b->offset, b->elem, b->ext.rank, b->ext.v, b->stride};
        return amp__parts_share_memory(&pa, &pb);
    }
    amp__box cut;
    if (!amp__box_intersect(&a->box, &b->box, a->s->ext.rank, &cut)) return false;
    if (a->exact && b->exact) return true;
    int meet = amp__same_layout_meet(a, b);
    if (meet >= 0) return meet;
    int64_t a_end = a->offset + (int64_t)a->elem, b_end = b->offset + (int64_t)b->elem;
    for (int d = 0; d < a->ext.rank; ++d) a_end += (int64_t)(a->ext.v[d] - 1) * a->stride[d] * (int64_t)a->elem;
    for (int d = 0; d < b->ext.rank; ++d) b_end += (int64_t)(b->ext.v[d] - 1) * b->stride[d] * (int64_t)b->elem;
    return a->offset < b_end && b->offset < a_end;
}

/* A copy the recording thread makes between arrays at home on its graph's
 * accelerator: recorded on the graph's view, to run at each replay. */
static bool amp__copy_recordable(const amp_graph *g, const amp__side *src, const amp__side *dst)
{
    const amp_accelerator *acc = amp__graph_queue(g)->acc;
    return src->s->is_array && dst->s->is_array && src->s->home_acc == acc && dst->s->home_acc == acc;
}

static amp_status amp__copy_recorded(amp_graph *g, amp__side *src, amp__side *dst, amp_future **out, const char *fn)
{
    void *from = NULL, *to = NULL;
    amp__plan plan;
    /* Its future names nothing that runs now: complete at once. Made
     * first: a copy recorded is never undone, so nothing may fail after. */
    amp_future *f = NULL;
    amp_status st = out ? amp__future_new(&f) : AMP_OK;
    if (st != AMP_OK) return st;
    /* A copy that fails is not recorded: neither are its data's uses. */
    amp__graph_mark m = amp__graph_command(g);
    if ((st = amp__graph_bind(g, src->s, &src->box, src->handle, src->view, false, false, &from)) != AMP_OK)
        st = amp__fail(st, "%s: recording the copy: its source: %s", fn, amp_last_error());
    else if ((st = amp__graph_bind(g, dst->s, &dst->box, dst->handle, dst->view, true, dst->exact, &to)) != AMP_OK)
        st = amp__fail(st, "%s: recording the copy: its destination: %s", fn, amp_last_error());
    if (st == AMP_OK) amp__plan_make(src, dst, from, to, AMP__D2D, &plan);
    for (int64_t o = 0; st == AMP_OK && o < plan.count; ++o) {
        amp__copy c = amp__plan_at(&plan, o);
        st = amp__graph_record_copy(g, &c, o == 0 ? amp__side_bytes(src) : 0);
    }
    if (st != AMP_OK) {
        amp__graph_undo(g, &m);
        amp_future_destroy(f);
        return st;
    }
    if (out) *out = f;
    return AMP_OK;
}

/* A copy the recording did not take (amp__copy_recordable) whose side is
 * an array, or a view of one, of a view that records: refused on every
 * accelerator, as the copy on that view's queue is on a GPU
 * (amp__queue_copy). Where both sides are host-addressable (the CPU
 * accelerator) it would run at once on this thread, before the graph
 * that may write the array, and be in no replay. */
static amp_status amp__side_refuse_recording(const amp__side *d, const char *role, const char *fn)
{
    amp_accelerator_view *q = d->s->home_acc ? d->s->home_q : NULL;
    if (!q || !atomic_load_explicit(&q->recorder, memory_order_acquire)) return AMP_OK;
    char what[160];
    snprintf(what, sizeof what, "%s (its %s is an array of this view, or a view of one)", fn, role);
    amp_status st = amp__graph_check_thread(q, what);
    if (st != AMP_OK) return st;
    return amp__fail(AMP_ERROR_BUSY,
                     "%s: the accelerator view (%s) records a graph on this thread, which takes only copies between "
                     "arrays (or views of arrays) of its accelerator; this one, with the host or another accelerator, "
                     "would run now, before the graph does (copy before or after the recording)",
                     what, q->acc->e.info.device_path);
}

static amp_status amp__copy_sides(amp__side *src, amp__side *dst, amp_future **out, const char *fn)
{
    amp_status st = AMP_OK;
    if (src->ext.rank != dst->ext.rank || !amp_extent_equal(src->ext, dst->ext)) {
        char a[96] = "", b[96] = "";
        for (int d = 0, n = 0; d < src->ext.rank; ++d) n += snprintf(a + n, sizeof a - (size_t)n, d ? "x%d" : "%d", src->ext.v[d]);
        for (int d = 0, n = 0; d < dst->ext.rank; ++d) n += snprintf(b + n, sizeof b - (size_t)n, d ? "x%d" : "%d", dst->ext.v[d]);
        return amp__fail(AMP_ERROR_INVALID_EXTENT, "%s: the source's extent %s differs from the destination's %s", fn, a, b);
    }
    if (src->elem != dst->elem)
        return amp__fail(AMP_ERROR_ARGUMENT_MISMATCH, "%s: the source has %zu-byte elements, the destination %zu", fn,
                         src->elem, dst->elem);
    /* As amp_array_view_set: the memory behind such a view may be const. */
    if (dst->view && dst->view->access == AMP_READ_ONLY)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: the destination view is AMP_READ_ONLY", fn);
    if (amp__sides_overlap(src, dst))
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: source and destination overlap (%s)", fn,
                         src->s == dst->s ? "in the same storage" : amp__shared_memory_kind(src->s));
    amp_graph *g = amp__graph_here();
    if (g && amp__copy_recordable(g, src, dst)) return amp__copy_recorded(g, src, dst, out, fn);
    if ((st = amp__side_refuse_recording(src, "source", fn)) != AMP_OK ||
        (st = amp__side_refuse_recording(dst, "destination", fn)) != AMP_OK)
        return st;
    amp_future *f = NULL;
    void *timing[2] = {NULL, NULL};
    if (out && (st = amp__future_new(&f)) != AMP_OK) return st;
    if (amp_extent_size(src->ext) == 0) {
        /* Nothing to move: a future that is complete. */
        if (out) *out = f;
        return AMP_OK;
    }
    amp__storage *first = src->s, *second = dst->s;
    if ((uintptr_t)first > (uintptr_t)second) {
        first = dst->s;
        second = src->s;
    }
    amp__point done = {NULL, 0};
    if ((st = amp__storage_lock(first, fn)) != AMP_OK) goto unlocked;
    if (second != first && (st = amp__storage_lock(second, fn)) != AMP_OK) goto first_locked;
    /* Data a recording in progress uses is copied only by that recording
     * (above): anything else would read or write it before the graph ran. */
    st = amp__storage_refuse_host(src->s->recordings ? src->s : dst->s, fn);
    if (st == AMP_OK) st = amp__copy_locked(src, dst, &done, out ? timing : NULL);
    /* done's queue may be one only the storages hold (a view's last queue,
     * destroyed by its user): once the locks go, another thread's launch
     * can let go of it, so the wait and the future take a reference. */
    amp__queue_retain(done.q);
    if (second != first) amp__lock_release(&second->lock);
first_locked:
    amp__lock_release(&first->lock);
unlocked:
    if (st == AMP_OK && !out) st = amp__point_wait(done);
    if (out) {
        if (st != AMP_OK) {
            amp_future_destroy(f);
        } else {
            amp__future_complete_at(f, done, timing[0], timing[1]);
            *out = f;
        }
    }
    amp__queue_release(done.q);
    return st;
}

amp_status amp__copy_element(amp_array_view *v, amp_index i, void *value, bool into_view)
{
    amp__side elem, buf;
    amp__side_of_view(v, &elem);
    for (int d = 0; d < v->ext.rank; ++d) elem.offset += (int64_t)i.v[d] * v->stride[d] * (int64_t)v->elem;
    elem.ext = amp_extent_1d(1);
    elem.stride[0] = 1;
    amp__view_locate(v->s, elem.offset, v->elem, elem.ext, elem.stride, &elem.box, &elem.exact);
    /* The caller's element: a one-element storage of its own. */
    amp__storage tmp;
    memset(&tmp, 0, sizeof tmp);
    amp__lock_init(&tmp.lock);
    tmp.refs = 1;
    tmp.elem = v->elem;
    tmp.ext = elem.ext;
    tmp.stride[0] = 1;
    tmp.whole.hi[0] = 1;
    tmp.host = tmp.home = value;
    memset(&buf, 0, sizeof buf);
    buf.s = &tmp;
    buf.box = tmp.whole;
    buf.exact = buf.uncounted = true;
    buf.ext = elem.ext;
    buf.elem = v->elem;
    buf.stride[0] = 1;
    amp_status st = into_view ? amp__copy_sides(&buf, &elem, NULL, "amp_array_view_set")
                              : amp__copy_sides(&elem, &buf, NULL, "amp_array_view_get");
    /* Nothing of tmp outlives the call: the copy waited for its point. */
    amp__point_set(&tmp.last, (amp__point){NULL, 0});
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
