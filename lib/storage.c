/* storage.c — what arrays and array_views share: the elements, the device
 * buffer, and coherence between host and device (which boxes are current on
 * the device, which are newer there than on the host), so that only the bytes
 * a kernel or the host needs ever move. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int64_t amp__storage_offset(const amp__storage *s, const int *origin)
{
    int64_t off = 0;
    for (int d = 0; d < s->ext.rank; ++d) off += (int64_t)origin[d] * s->stride[d];
    return off;
}

size_t amp__storage_bytes(const amp__storage *s) { return (size_t)amp_extent_size(s->ext) * s->elem; }

/* ---------------------------------------------------------------- tracing */

void amp__storage_describe(const amp__storage *s, const amp__box *b, amp__trace_rec *r)
{
    r->object = (uintptr_t)s;
    r->is_array = s->is_array;
    r->elem = (uint32_t)s->elem;
    r->rank = (uint8_t)s->ext.rank;
    for (int d = 0; d < s->ext.rank; ++d) {
        r->ext[d] = s->ext.v[d];
        r->lo[d] = b ? b->lo[d] : 0;
        r->hi[d] = b ? b->hi[d] : s->ext.v[d];
    }
}

#if HIPAMP_TRACE_HOOKS /* compiled out with the hooks */
/* bytes of b that did not have to move in direction dir (on q, NULL: none). */
static void amp__note_avoided(const amp__storage *s, amp_accelerator_view *q, const amp__box *b, amp__copy_dir dir,
                               uint64_t bytes)
{
    if (!bytes || !amp__trace_recording()) return;
    amp__trace_rec r = AMP__TRACE_REC(AMP__REC_AVOIDED);
    r.sub = (uint8_t)dir;
    r.why = AMP__WHY_DISCARD;
    r.bytes = bytes;
    amp__queue_describe(q, &r);
    amp__storage_describe(s, b, &r);
    amp__trace_instant(&r);
}

/* discard_data dropped the device-newer parts of b: their copy-back is
 * avoided. */
static void amp__note_discard(const amp__storage *s, const amp__box *b)
{
    uint64_t bytes = 0;
    for (int i = 0; i < s->ndirty; ++i) {
        amp__box cut;
        if (amp__box_intersect(&s->dirty[i], b, s->ext.rank, &cut))
            bytes += (uint64_t)amp__box_volume(&cut, s->ext.rank) * s->elem;
    }
    amp__note_avoided(s, s->last.q, b, AMP__D2H, bytes);
}

/* refresh makes device copies of b stale: that names the next copy-in. */
static void amp__note_refresh(amp__storage *s, const amp__box *b)
{
    for (int i = 0; i < s->nvalid; ++i) {
        amp__box cut;
        if (amp__box_intersect(&s->valid[i], b, s->ext.rank, &cut)) {
            s->stale_why = AMP__WHY_REFRESH;
            return;
        }
    }
}
#endif


/* ---------------------------------------------------------------- copies */

/* Queue the copy of box b between host and device (dir H2D or D2H) on q.
 * Trailing dimensions the box covers whole merge into contiguous rows, so a
 * whole array is one linear copy and a 2-D section one pitched copy. One
 * box counts as one copy in q's statistics. why: for traces. */
static amp_status amp__copy_box(amp__storage *s, amp_accelerator_view *q, const amp__box *b, amp__copy_dir dir,
                                amp__copy_why why)
{
    int R = s->ext.rank, d = R - 1;
    size_t elem = s->elem;
    int64_t width = b->hi[d] - b->lo[d];
    while (d > 0 && b->lo[d] == 0 && b->hi[d] == s->ext.v[d]) {
        --d;
        width *= b->hi[d] - b->lo[d];
    }
    /* dims [0, d) remain: d-1 is height, d-2 depth, the rest loop. */
    int64_t base = amp__storage_offset(s, b->lo);
    amp__copy c;
    memset(&c, 0, sizeof c);
    c.dir = dir;
    c.width_bytes = (size_t)width * elem;
    c.height = d >= 1 ? (size_t)(b->hi[d - 1] - b->lo[d - 1]) : 1;
    c.depth = d >= 2 ? (size_t)(b->hi[d - 2] - b->lo[d - 2]) : 1;
    c.dst_pitch = c.src_pitch = d >= 1 ? (size_t)s->stride[d - 1] * elem : c.width_bytes;
    c.dst_slice_pitch = c.src_slice_pitch = d >= 2 ? (size_t)s->stride[d - 2] * elem : c.dst_pitch * c.height;
    int outer_lo = d >= 3 ? b->lo[0] : 0, outer_hi = d >= 3 ? b->hi[0] : 1;
    amp__point done = {NULL, 0};
    amp_status st = AMP_OK;
    uint64_t bytes = (uint64_t)amp__box_volume(b, R) * elem;
    AMP__TRACE_SPAN(span);
    AMP__TRACE(amp__queue_span_begin(&span, q, dir, bytes, why));
    for (int o = outer_lo; o < outer_hi; ++o) {
        int64_t off = (base + (d >= 3 ? (int64_t)(o - b->lo[0]) * s->stride[0] : 0)) * (int64_t)elem;
        char *h = s->host + off, *dv = (char *)s->dptr + off;
        c.dst = dir == AMP__H2D ? (void *)dv : (void *)h;
        c.src = dir == AMP__H2D ? (const void *)h : (const void *)dv;
        if ((st = amp__queue_copy(q, &c, &done)) != AMP_OK) break;
        amp__point_set(&s->last, done);
    }
    if (st == AMP_OK) amp__queue_count_copy(q, dir, bytes);
    AMP__TRACE(amp__queue_span_end(&span, q, s, b, st));
    return st;
}

/* The queue that orders host access after the storage's last use. */
static amp_status amp__storage_queue(amp__storage *s, amp_accelerator_view **q)
{
    if (s->last.q) {
        *q = s->last.q;
        return AMP_OK;
    }
    return amp__accelerator_queue(s->acc, q);
}

amp_status amp__storage_sync(amp__storage *s, const amp__box *b)
{
    amp_status st = AMP_OK;
    int R = s->ext.rank;
    amp_accelerator_view *q = NULL;
    if (!s->unified && !s->is_array && s->ndirty) {
        if ((st = amp__storage_queue(s, &q)) != AMP_OK) return st;
        bool any = false;
        for (int i = 0; i < s->ndirty; ++i) {
            amp__box cut;
            if (!amp__box_intersect(&s->dirty[i], b, R, &cut)) continue;
            if ((st = amp__copy_box(s, q, &cut, AMP__D2H, AMP__WHY_SYNCHRONIZE)) != AMP_OK) return st;
            any = true;
        }
        if (any && !amp__boxes_subtract(s->dirty, &s->ndirty, b, R)) {
            /* No room to split: copy the rest back too; then nothing is dirty. */
            for (int i = 0; i < s->ndirty; ++i)
                if ((st = amp__copy_box(s, q, &s->dirty[i], AMP__D2H, AMP__WHY_SYNCHRONIZE)) != AMP_OK) return st;
            s->ndirty = 0;
        }
    }
    return amp__point_wait(s->last);
}

/* Copy back every device-newer part of the storage outside box b, then
 * forget all dirty boxes (storage lock held; blocks). For refresh and
 * discard when splitting the dirty list around b would overflow it: inside
 * b the host wins, outside it the device's results must not be lost. */
static amp_status amp__storage_flush_outside(amp__storage *s, const amp__box *b)
{
    amp_status st = AMP_OK;
    amp_accelerator_view *q = NULL;
    int R = s->ext.rank;
    if ((st = amp__storage_queue(s, &q)) != AMP_OK) return st;
    for (int i = 0; i < s->ndirty; ++i) {
        amp__box pieces[2 * AMP_MAX_RANK];
        int np = 1;
        pieces[0] = s->dirty[i];
        /* pieces = dirty[i] - b: at most 2R slabs, fits by construction. */
        if (!amp__boxes_subtract(pieces, &np, b, R)) np = 0;
        for (int k = 0; k < np; ++k)
            if ((st = amp__copy_box(s, q, &pieces[k], AMP__D2H, AMP__WHY_FLUSH)) != AMP_OK) return st;
    }
    s->ndirty = 0;
    return amp__point_wait(s->last);
}

/* ---------------------------------------------------------------- storage */

amp_status amp__storage_new(size_t elem, amp_extent e, void *host, bool is_array, amp__storage **out)
{
    amp_status st = amp_extent_validate(e);
    *out = NULL;
    if (st != AMP_OK) return st;
    if (elem == 0) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "element size is 0");
    int64_t n = amp_extent_size(e);
    if ((uint64_t)n > SIZE_MAX / elem)
        return amp__fail(AMP_ERROR_INVALID_EXTENT, "extent of %lld elements of %zu bytes overflows size_t",
                         (long long)n, elem);
    amp__storage *s = amp__calloc_lines(sizeof *s);
    if (!s) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "view: out of host memory");
    amp__lock_init(&s->lock);
    s->refs = 1;
    s->elem = elem;
    s->ext = e;
    s->host = host;
    s->is_array = is_array;
    int64_t stride = 1;
    for (int d = e.rank - 1; d >= 0; --d) {
        s->stride[d] = stride;
        stride *= e.v[d];
        s->whole.hi[d] = e.v[d];
    }
    *out = s;
    return AMP_OK;
}

void amp__storage_retain(amp__storage *s)
{
    amp__lock_acquire(&s->lock);
    s->refs++;
    amp__lock_release(&s->lock);
}

/* Drop the device side (storage lock held, host already current). */
static void amp__storage_drop_device(amp__storage *s)
{
    if (!s->acc) return;
    const amp__backend *be = s->acc->e.be;
    (void)amp__point_wait(s->last);
    /* The point belongs to the old accelerator's queue: a launch elsewhere
     * must not order itself after it. */
    amp__point_set(&s->last, (amp__point){NULL, 0});
    if (s->registered && be->host_unregister) be->host_unregister(s->acc->e.dev, s->host);
    else if (s->dptr && !s->unified && !s->borrowed) be->mem_free(s->acc->e.dev, s->dptr);
    s->dptr = NULL;
    s->registered = s->unified = false;
    s->nvalid = s->ndirty = 0;
    s->acc = NULL;
}

amp_status amp__storage_release(amp__storage *s)
{
    amp__lock_acquire(&s->lock);
    bool last = --s->refs == 0;
    amp_status st = AMP_OK;
    if (last) {
        st = amp__point_wait(s->last);
        amp__storage_drop_device(s);
        amp__point_set(&s->last, (amp__point){NULL, 0});
    }
    amp__lock_release(&s->lock);
    if (last) free(s);
    return st;
}

/* Copy in the parts of b the device does not hold: b minus the valid
 * boxes, so a view whose ghost rows alone went stale moves those rows and
 * nothing else. Device-newer (dirty) data is always inside valid boxes, so
 * nothing is overwritten. When the pieces would overflow the list, the
 * whole of b goes, after its device-newer parts came back to the host
 * (same queue: in order). */
static amp_status amp__copy_in_missing(amp__storage *s, amp_accelerator_view *q, const amp__box *b)
{
    amp_status st;
    /* Why it moves, for the trace: stale after a refresh, else first use. */
    amp__copy_why why = s->stale_why ? (amp__copy_why)s->stale_why : AMP__WHY_FIRST_USE;
    AMP__TRACE(s->stale_why = AMP__WHY_NONE);
    int R = s->ext.rank, n = 1;
    amp__box pieces[AMP__MAX_BOXES];
    pieces[0] = *b;
    bool split = true;
    for (int i = 0; i < s->nvalid && split && n > 0; ++i) split = amp__boxes_subtract(pieces, &n, &s->valid[i], R);
    if (split) {
        for (int i = 0; i < n; ++i)
            if ((st = amp__copy_box(s, q, &pieces[i], AMP__H2D, why)) != AMP_OK) return st;
        return AMP_OK;
    }
    for (int i = 0; i < s->ndirty; ++i) {
        amp__box cut;
        if (amp__box_intersect(&s->dirty[i], b, R, &cut) &&
            (st = amp__copy_box(s, q, &cut, AMP__D2H, AMP__WHY_WRITE_BACK)) != AMP_OK)
            return st;
    }
    (void)amp__boxes_subtract(s->dirty, &s->ndirty, b, R);
    return amp__copy_box(s, q, b, AMP__H2D, why);
}

amp_status amp__storage_prepare(amp__storage *s, amp_accelerator_view *q, const amp__box *b, bool discard,
                                void **dptr)
{
    amp_status st = AMP_OK;
    amp_accelerator *acc = q->acc;
    if (amp__storage_ready(s, q, b)) {
        *dptr = s->dptr;
        return AMP_OK;
    }
    const amp__backend *be = q->be;
    int R = s->ext.rank;
    if (s->acc != acc) {
        if (s->acc) {
            if (s->is_array)
                return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "array lives on %s; the launch is on %s",
                                 s->acc->e.info.device_path, acc->e.info.device_path);
            /* The view moves to another accelerator: host first, then start over. */
            if ((st = amp__storage_sync(s, &s->whole)) != AMP_OK) return st;
            amp__storage_drop_device(s);
        }
        if (acc->e.info.is_unified_memory && be->host_register) {
            if ((st = be->host_register(q->dev, s->host, amp__storage_bytes(s), &s->dptr)) != AMP_OK) return st;
            s->unified = s->registered = true;
        } else if ((st = be->mem_alloc(q->dev, amp__storage_bytes(s), &s->dptr)) != AMP_OK) {
            return st;
        }
        s->acc = acc;
    }
    if ((st = amp__point_order(q, s->last)) != AMP_OK) return st;
    if (!s->unified && !s->is_array) {
        /* One launch adds at most one box per parameter: keep that much
         * room so after_launch never drops a box. */
        if (s->ndirty > AMP__MAX_BOXES - AMP__SIG_MAX_PARAMS || s->nvalid >= AMP__MAX_BOXES) {
            /* Bookkeeping full: make the host current and forget the device. */
            if ((st = amp__storage_sync(s, &s->whole)) != AMP_OK) return st;
            s->nvalid = 0;
            AMP__TRACE(s->stale_why = AMP__WHY_RESET);
        }
        if (!amp__boxes_cover(s->valid, s->nvalid, b, R)) {
            if (!discard && (st = amp__copy_in_missing(s, q, b)) != AMP_OK) return st;
            if (discard)
                AMP__TRACE(amp__note_avoided(s, q, b, AMP__H2D, (uint64_t)amp__box_volume(b, R) * s->elem));
            if (!amp__boxes_add(s->valid, &s->nvalid, b, R)) s->nvalid = 0;
        }
    }
    *dptr = s->dptr;
    return AMP_OK;
}

amp_status amp__storage_refresh(amp__storage *s, const amp__box *b)
{
    if (s->is_array) return AMP_OK;
    AMP__TRACE(amp__note_refresh(s, b));
    /* Host wins: device copies of b are stale, and nothing there is newer. */
    if (!amp__boxes_subtract(s->valid, &s->nvalid, b, s->ext.rank)) s->nvalid = 0;
    if (!amp__boxes_subtract(s->dirty, &s->ndirty, b, s->ext.rank)) return amp__storage_flush_outside(s, b);
    return AMP_OK;
}

amp_status amp__storage_discard(amp__storage *s, const amp__box *b)
{
    if (s->is_array) return AMP_OK;
    AMP__TRACE(amp__note_discard(s, b));
    if (!amp__boxes_subtract(s->dirty, &s->ndirty, b, s->ext.rank)) return amp__storage_flush_outside(s, b);
    return AMP_OK;
}
