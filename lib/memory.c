/* memory.c — amp_array and amp_array_view: shared storage, sections and
 * projections, and coherence between host and device (which boxes of the
 * storage are current on the device, which are newer there than on the
 * host), so that only the bytes a kernel or the host needs ever move. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ boxes */

static int64_t amp__box_volume(const amp__box *b, int r)
{
    int64_t v = 1;
    for (int d = 0; d < r; ++d) v *= b->hi[d] - b->lo[d];
    return v;
}
static bool amp__box_contains(const amp__box *a, const amp__box *b, int r)
{
    for (int d = 0; d < r; ++d)
        if (b->lo[d] < a->lo[d] || b->hi[d] > a->hi[d]) return false;
    return true;
}
static bool amp__box_intersect(const amp__box *a, const amp__box *b, int r, amp__box *out)
{
    for (int d = 0; d < r; ++d) {
        out->lo[d] = a->lo[d] > b->lo[d] ? a->lo[d] : b->lo[d];
        out->hi[d] = a->hi[d] < b->hi[d] ? a->hi[d] : b->hi[d];
        if (out->lo[d] >= out->hi[d]) return false;
    }
    return true;
}

/* list -= b: boxes inside b go, boxes crossing b are split into the (at most
 * 2r) slabs outside it. Returns false when the list would overflow (the
 * caller then handles the whole list at once). */
static bool amp__boxes_subtract(amp__box *list, int *n, const amp__box *b, int r)
{
    amp__box out[AMP__MAX_BOXES];
    int m = 0;
    for (int i = 0; i < *n; ++i) {
        amp__box cut;
        if (!amp__box_intersect(&list[i], b, r, &cut)) {
            if (m == AMP__MAX_BOXES) return false;
            out[m++] = list[i];
            continue;
        }
        amp__box rest = list[i];
        for (int d = 0; d < r; ++d) {
            if (rest.lo[d] < cut.lo[d]) {
                if (m == AMP__MAX_BOXES) return false;
                out[m] = rest;
                out[m++].hi[d] = cut.lo[d];
            }
            if (cut.hi[d] < rest.hi[d]) {
                if (m == AMP__MAX_BOXES) return false;
                out[m] = rest;
                out[m++].lo[d] = cut.hi[d];
            }
            rest.lo[d] = cut.lo[d];
            rest.hi[d] = cut.hi[d];
        }
    }
    memcpy(list, out, sizeof(amp__box) * (size_t)m);
    *n = m;
    return true;
}

/* a and b equal in every dimension but one, where they touch or overlap:
 * their union is a box (written to out). */
static bool amp__box_mergeable(const amp__box *a, const amp__box *b, int r, amp__box *out)
{
    int diff = -1;
    for (int d = 0; d < r; ++d) {
        if (a->lo[d] == b->lo[d] && a->hi[d] == b->hi[d]) continue;
        if (diff >= 0 || a->hi[d] < b->lo[d] || b->hi[d] < a->lo[d]) return false;
        diff = d;
    }
    *out = *a;
    if (diff >= 0) {
        out->lo[diff] = a->lo[diff] < b->lo[diff] ? a->lo[diff] : b->lo[diff];
        out->hi[diff] = a->hi[diff] > b->hi[diff] ? a->hi[diff] : b->hi[diff];
    }
    return true;
}

/* list += b. Boxes inside b are dropped and neighbours merged, so a loop
 * over the rows of a matrix leaves one box, not one per row. false: no
 * room (the list is unchanged then). */
static bool amp__boxes_add(amp__box *list, int *n, const amp__box *b, int r)
{
    for (int i = 0; i < *n; ++i)
        if (amp__box_contains(&list[i], b, r)) return true;
    amp__box add = *b;
    bool merged;
    int m = *n;
    do {
        merged = false;
        int k = 0;
        for (int i = 0; i < m; ++i) {
            amp__box u;
            if (amp__box_contains(&add, &list[i], r)) continue;
            if (amp__box_mergeable(&add, &list[i], r, &u)) {
                add = u;
                merged = true;
                continue;
            }
            list[k++] = list[i];
        }
        m = k;
    } while (merged);
    if (m == AMP__MAX_BOXES) {
        /* Only reachable when nothing merged or was dropped: m == *n. */
        return false;
    }
    list[m++] = add;
    *n = m;
    return true;
}

static bool amp__boxes_cover(const amp__box *list, int n, const amp__box *b, int r)
{
    for (int i = 0; i < n; ++i)
        if (amp__box_contains(&list[i], b, r)) return true;
    return false;
}

void amp__view_box(const amp_array_view *v, amp__box *b)
{
    int R = v->s->ext.rank, r = v->ext.rank;
    for (int d = 0; d < R; ++d) {
        b->lo[d] = v->origin.v[d];
        b->hi[d] = v->origin.v[d] + (d < R - r ? 1 : v->ext.v[d - (R - r)]);
    }
}

amp__box amp__whole_box(const amp__storage *s)
{
    amp__box b;
    for (int d = 0; d < s->ext.rank; ++d) {
        b.lo[d] = 0;
        b.hi[d] = s->ext.v[d];
    }
    return b;
}

int64_t amp__storage_offset(const amp__storage *s, const int *origin)
{
    int64_t off = 0;
    for (int d = 0; d < s->ext.rank; ++d) off += (int64_t)origin[d] * s->stride[d];
    return off;
}

/* ---------------------------------------------------------------- copies */

/* Queue the copy of box b between host and device (dir H2D or D2H) on q.
 * Trailing dimensions the box covers whole merge into contiguous rows, so a
 * whole array is one linear copy and a 2-D section one pitched copy. */
static amp_status amp__copy_box(amp__storage *s, amp_accelerator_view *q, const amp__box *b,
                                amp__copy_dir dir)
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
    for (int o = outer_lo; o < outer_hi; ++o) {
        int64_t off = (base + (d >= 3 ? (int64_t)(o - b->lo[0]) * s->stride[0] : 0)) * (int64_t)elem;
        char *h = s->host + off, *dv = (char *)s->dptr + off;
        c.dst = dir == AMP__H2D ? (void *)dv : (void *)h;
        c.src = dir == AMP__H2D ? (const void *)h : (const void *)dv;
        amp_status st = q->acc->e.be->copy(q->acc->e.dev, q->queue, &c);
        if (st != AMP_OK) return st;
    }
    amp__count_copy(q, dir, (uint64_t)amp__box_volume(b, R) * elem);
    return AMP_OK;
}

/* The queue that orders host access after the storage's last use. */
static amp_status amp__storage_queue(amp__storage *s, amp_accelerator_view **q)
{
    if (s->last) {
        *q = s->last->q;
        return AMP_OK;
    }
    return amp__default_view(s->acc, q);
}

/* Make the host current for box b (storage lock held): wait for the last
 * use, copy back the device-newer parts of b. Blocks. */
static amp_status amp__storage_sync(amp__storage *s, const amp__box *b)
{
    amp_status st = AMP_OK;
    int R = s->ext.rank;
    amp_accelerator_view *q = NULL;
    amp__event *ev = NULL;
    if (!s->unified && !s->is_array && s->ndirty) {
        if ((st = amp__storage_queue(s, &q)) != AMP_OK) return st;
        /* The completion point exists before the first copy is queued, so
         * a failure half way still leaves every queued copy covered. */
        if ((st = amp__event_record(q, &ev)) != AMP_OK) return st;
        amp__event_release(s->last);
        s->last = ev;
        bool any = false;
        for (int i = 0; i < s->ndirty; ++i) {
            amp__box cut;
            if (!amp__box_intersect(&s->dirty[i], b, R, &cut)) continue;
            if ((st = amp__copy_box(s, q, &cut, AMP__D2H)) != AMP_OK) return st;
            any = true;
        }
        if (any && !amp__boxes_subtract(s->dirty, &s->ndirty, b, R)) {
            /* No room to split: copy the rest back too; then nothing is dirty. */
            for (int i = 0; i < s->ndirty; ++i)
                if ((st = amp__copy_box(s, q, &s->dirty[i], AMP__D2H)) != AMP_OK) return st;
            s->ndirty = 0;
        }
    }
    return amp__event_wait(s->last);
}

/* Copy back every device-newer part of the storage outside box b, then
 * forget all dirty boxes (storage lock held; blocks). For refresh and
 * discard when splitting the dirty list around b would overflow it: inside
 * b the host wins, outside it the device's results must not be lost. */
static amp_status amp__storage_flush_outside(amp__storage *s, const amp__box *b)
{
    amp_status st = AMP_OK;
    amp_accelerator_view *q = NULL;
    amp__event *ev = NULL;
    int R = s->ext.rank;
    if ((st = amp__storage_queue(s, &q)) != AMP_OK) return st;
    if ((st = amp__event_record(q, &ev)) != AMP_OK) return st;
    amp__event_release(s->last);
    s->last = ev;
    for (int i = 0; i < s->ndirty; ++i) {
        amp__box pieces[2 * AMP_MAX_RANK];
        int np = 1;
        pieces[0] = s->dirty[i];
        /* pieces = dirty[i] - b: at most 2R slabs, fits by construction. */
        if (!amp__boxes_subtract(pieces, &np, b, R)) np = 0;
        for (int k = 0; k < np; ++k)
            if ((st = amp__copy_box(s, q, &pieces[k], AMP__D2H)) != AMP_OK) return st;
    }
    s->ndirty = 0;
    return amp__event_wait(ev);
}

/* ---------------------------------------------------------------- storage */

static amp_status amp__storage_new(size_t elem, amp_extent e, void *host, bool is_array,
                                   amp__storage **out)
{
    amp_status st = amp_extent_validate(e);
    if (st != AMP_OK) return st;
    if (elem == 0) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "element size is 0");
    int64_t n = amp_extent_size(e);
    if ((uint64_t)n > SIZE_MAX / elem)
        return amp__fail(AMP_ERROR_INVALID_EXTENT, "extent of %lld elements of %zu bytes overflows size_t",
                         (long long)n, elem);
    amp__storage *s = calloc(1, sizeof *s);
    if (!s) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "view: out of host memory");
    pthread_mutex_init(&s->lock, NULL);
    s->refs = 1;
    s->elem = elem;
    s->ext = e;
    s->host = host;
    s->is_array = is_array;
    int64_t st_ = 1;
    for (int d = e.rank - 1; d >= 0; --d) {
        s->stride[d] = st_;
        st_ *= e.v[d];
    }
    *out = s;
    return AMP_OK;
}

static size_t amp__storage_bytes(const amp__storage *s)
{
    return (size_t)amp_extent_size(s->ext) * s->elem;
}

/* Drop the device side (storage lock held, host already current). */
static void amp__storage_drop_device(amp__storage *s)
{
    if (!s->acc) return;
    const amp__backend *be = s->acc->e.be;
    (void)amp__event_wait(s->last);
    /* The event belongs to the old accelerator's queue: a launch elsewhere
     * must not order itself after it. */
    amp__event_release(s->last);
    s->last = NULL;
    if (s->registered && be->host_unregister) be->host_unregister(s->acc->e.dev, s->host);
    else if (s->dptr && !s->unified) be->mem_free(s->acc->e.dev, s->dptr);
    s->dptr = NULL;
    s->registered = s->unified = false;
    s->nvalid = s->ndirty = 0;
    s->acc = NULL;
}

static amp_status amp__storage_release(amp__storage *s)
{
    pthread_mutex_lock(&s->lock);
    bool last = --s->refs == 0;
    amp_status st = AMP_OK;
    if (last) {
        st = amp__event_wait(s->last);
        amp__storage_drop_device(s);
        amp__event_release(s->last); /* arrays never had a device dropped */
        s->last = NULL;
    }
    pthread_mutex_unlock(&s->lock);
    if (last) {
        pthread_mutex_destroy(&s->lock);
        free(s);
    }
    return st;
}

amp_status amp__storage_prepare(amp__storage *s, amp_accelerator_view *q, const amp__box *b,
                                bool needs_data, bool discard, void **dptr)
{
    amp_status st = AMP_OK;
    amp_accelerator *acc = q->acc;
    const amp__backend *be = acc->e.be;
    int R = s->ext.rank;
    if (s->acc && s->acc != acc) {
        if (s->is_array)
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "array lives on %s; the launch is on %s",
                             s->acc->e.info.device_path, acc->e.info.device_path);
        /* The view moves to another accelerator: host first, then start over. */
        amp__box whole = amp__whole_box(s);
        if ((st = amp__storage_sync(s, &whole)) != AMP_OK) return st;
        amp__storage_drop_device(s);
    }
    if (!s->acc) {
        if (acc->e.info.is_unified_memory && be->host_register) {
            st = be->host_register(acc->e.dev, s->host, amp__storage_bytes(s), &s->dptr);
            if (st != AMP_OK) return st;
            s->unified = s->registered = true;
        } else if ((st = be->mem_alloc(acc->e.dev, amp__storage_bytes(s), &s->dptr)) != AMP_OK) {
            return st;
        }
        s->acc = acc;
    }
    if ((st = amp__event_order(q, s->last)) != AMP_OK) return st;
    if (!s->unified && !s->is_array) {
        /* One launch adds at most one box per parameter: keep that much
         * room so after_launch never drops a box. */
        if (s->ndirty > AMP__MAX_BOXES - AMP__SIG_MAX_PARAMS || s->nvalid >= AMP__MAX_BOXES) {
            /* Bookkeeping full: make the host current and forget the device. */
            amp__box whole = amp__whole_box(s);
            if ((st = amp__storage_sync(s, &whole)) != AMP_OK) return st;
            s->nvalid = 0;
        }
        if (!amp__boxes_cover(s->valid, s->nvalid, b, R)) {
            if (needs_data && !discard) {
                /* Device-newer parts of b must reach the host before b is
                 * copied in over them (same queue: in order). */
                for (int i = 0; i < s->ndirty; ++i) {
                    amp__box cut;
                    if (amp__box_intersect(&s->dirty[i], b, R, &cut) &&
                        (st = amp__copy_box(s, q, &cut, AMP__D2H)) != AMP_OK)
                        return st;
                }
                (void)amp__boxes_subtract(s->dirty, &s->ndirty, b, R);
                if ((st = amp__copy_box(s, q, b, AMP__H2D)) != AMP_OK) return st;
            }
            if (!amp__boxes_add(s->valid, &s->nvalid, b, R)) s->nvalid = 0;
        }
    }
    *dptr = s->dptr;
    return AMP_OK;
}

void amp__storage_after_launch(amp__storage *s, amp__event *ev, const amp__box *b, bool writes)
{
    amp__event_release(s->last);
    s->last = amp__event_retain(ev);
    /* prepare() left room for a box per parameter. */
    if (writes && !s->unified && !s->is_array) (void)amp__boxes_add(s->dirty, &s->ndirty, b, s->ext.rank);
}

/* ------------------------------------------------------------ array_view */

static amp_status amp__view_new(amp__storage *s, amp_index origin, amp_extent ext, amp_access access,
                                amp_array_view **out)
{
    amp_array_view *v = calloc(1, sizeof *v);
    if (!v) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "view: out of host memory");
    v->s = s;
    v->origin = origin;
    v->ext = ext;
    v->access = access;
    v->discard = access == AMP_WRITE_ONLY;
    *out = v;
    return AMP_OK;
}

amp_status amp_array_view_create(void *host, size_t elem_size, amp_extent e, amp_access access,
                                 amp_array_view **out)
{
    amp_status st = AMP_OK;
    amp__storage *s = NULL;
    if (!out) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_array_view_create: out is NULL");
    *out = NULL;
    if (!host) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_array_view_create: host pointer is NULL");
    if (access != AMP_READ_WRITE && access != AMP_READ_ONLY && access != AMP_WRITE_ONLY)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_array_view_create: access %d is not an amp_access",
                         (int)access);
    if ((st = amp__storage_new(elem_size, e, host, false, &s)) != AMP_OK) return st;
    amp_index origin = {e.rank, {0}};
    if ((st = amp__view_new(s, origin, e, access, out)) != AMP_OK) amp__storage_release(s);
    return st;
}

amp_status amp_array_view_of_array(amp_array *a, amp_array_view **out)
{
    if (!out) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_array_view_of_array: out is NULL");
    *out = NULL;
    if (!a) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_array_view_of_array: array is NULL");
    amp_index origin = {a->s->ext.rank, {0}};
    amp_status st = amp__view_new(a->s, origin, a->s->ext, AMP_READ_WRITE, out);
    if (st == AMP_OK) {
        pthread_mutex_lock(&a->s->lock);
        a->s->refs++;
        pthread_mutex_unlock(&a->s->lock);
    }
    return st;
}

static amp_status amp__view_derive(amp_array_view *v, amp_index origin, amp_extent e, amp_array_view **out)
{
    amp_status st = amp__view_new(v->s, origin, e, v->access, out);
    if (st != AMP_OK) return st;
    (*out)->discard = v->discard;
    pthread_mutex_lock(&v->s->lock);
    v->s->refs++;
    pthread_mutex_unlock(&v->s->lock);
    return AMP_OK;
}

amp_status amp_array_view_section(amp_array_view *v, amp_index origin, amp_extent e, amp_array_view **out)
{
    if (!out) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_array_view_section: out is NULL");
    *out = NULL;
    if (!v) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_array_view_section: view is NULL");
    amp_status st = amp_extent_validate(e);
    if (st != AMP_OK) return st;
    int r = v->ext.rank, R = v->s->ext.rank;
    if (origin.rank != r || e.rank != r)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                         "section of a rank-%d view needs rank-%d origin and extent (got %d and %d)", r, r,
                         origin.rank, e.rank);
    amp_index o = v->origin;
    for (int d = 0; d < r; ++d) {
        if (origin.v[d] < 0 || (int64_t)origin.v[d] + e.v[d] > v->ext.v[d])
            return amp__fail(AMP_ERROR_OUT_OF_BOUNDS,
                             "section dimension %d: origin %d + extent %d passes the view's extent %d", d,
                             origin.v[d], e.v[d], v->ext.v[d]);
        o.v[R - r + d] += origin.v[d];
    }
    return amp__view_derive(v, o, e, out);
}

amp_status amp_array_view_project(amp_array_view *v, int i, amp_array_view **out)
{
    if (!out) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_array_view_project: out is NULL");
    *out = NULL;
    if (!v) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_array_view_project: view is NULL");
    int r = v->ext.rank, R = v->s->ext.rank;
    if (r < 2)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "projection needs a view of rank 2 or more (rank %d)", r);
    if (i < 0 || i >= v->ext.v[0])
        return amp__fail(AMP_ERROR_OUT_OF_BOUNDS, "projection index %d outside 0..%d", i, v->ext.v[0] - 1);
    amp_index o = v->origin;
    o.v[R - r] += i;
    amp_extent e = {r - 1, {0}};
    for (int d = 1; d < r; ++d) e.v[d - 1] = v->ext.v[d];
    return amp__view_derive(v, o, e, out);
}

amp_status amp_array_view_get_extent(const amp_array_view *v, amp_extent *out)
{
    if (!v || !out) {
        if (out) memset(out, 0, sizeof *out);
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_array_view_get_extent: %s is NULL", v ? "out" : "view");
    }
    *out = v->ext;
    return AMP_OK;
}

void *amp_array_view_data(const amp_array_view *v)
{
    if (!v || !v->s->host) return NULL;
    return v->s->host + amp__storage_offset(v->s, v->origin.v) * (int64_t)v->s->elem;
}

amp_status amp_array_view_synchronize(amp_array_view *v)
{
    if (!v) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_array_view_synchronize: view is NULL");
    amp__box b;
    amp__view_box(v, &b);
    pthread_mutex_lock(&v->s->lock);
    amp_status st = amp__storage_sync(v->s, &b);
    pthread_mutex_unlock(&v->s->lock);
    return st;
}

amp_status amp_array_view_refresh(amp_array_view *v)
{
    if (!v) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_array_view_refresh: view is NULL");
    amp__box b;
    amp__view_box(v, &b);
    amp__storage *s = v->s;
    amp_status st = AMP_OK;
    pthread_mutex_lock(&s->lock);
    /* The host data is needed again, unless the view never reads it. */
    v->discard = v->access == AMP_WRITE_ONLY;
    if (!s->is_array) {
        /* Host wins: device copies of b are stale, and nothing there is newer. */
        if (!amp__boxes_subtract(s->valid, &s->nvalid, &b, s->ext.rank)) s->nvalid = 0;
        if (!amp__boxes_subtract(s->dirty, &s->ndirty, &b, s->ext.rank))
            st = amp__storage_flush_outside(s, &b);
    }
    pthread_mutex_unlock(&s->lock);
    return st;
}

amp_status amp_array_view_discard_data(amp_array_view *v)
{
    if (!v) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_array_view_discard_data: view is NULL");
    amp__box b;
    amp__view_box(v, &b);
    amp__storage *s = v->s;
    amp_status st = AMP_OK;
    pthread_mutex_lock(&s->lock);
    v->discard = true;
    if (!s->is_array && !amp__boxes_subtract(s->dirty, &s->ndirty, &b, s->ext.rank))
        st = amp__storage_flush_outside(s, &b);
    pthread_mutex_unlock(&s->lock);
    return st;
}

amp_status amp_array_view_destroy(amp_array_view *v)
{
    if (!v) return AMP_OK;
    amp_status st = amp_array_view_synchronize(v);
    amp_status st2 = amp__storage_release(v->s);
    free(v);
    return st != AMP_OK ? st : st2;
}

/* ------------------------------------------------------------------ array */

/* Blocking host<->array copy of the whole array on its queue. */
static amp_status amp__array_copy(amp_array *a, void *host, amp__copy_dir dir)
{
    amp__storage *s = a->s;
    amp_status st = AMP_OK;
    amp__event *ev = NULL;
    amp_accelerator_view *q = a->q;
    pthread_mutex_lock(&s->lock);
    if ((st = amp__event_order(q, s->last)) != AMP_OK) goto out;
    amp__copy c;
    memset(&c, 0, sizeof c);
    c.dir = dir;
    c.dst = dir == AMP__H2D ? s->dptr : host;
    c.src = dir == AMP__H2D ? (const void *)host : (const void *)s->dptr;
    c.width_bytes = c.dst_pitch = c.src_pitch = c.dst_slice_pitch = c.src_slice_pitch = amp__storage_bytes(s);
    c.height = c.depth = 1;
    if ((st = q->acc->e.be->copy(q->acc->e.dev, q->queue, &c)) != AMP_OK) goto out;
    amp__count_copy(q, dir, c.width_bytes);
    if ((st = amp__event_record(q, &ev)) != AMP_OK) goto out;
    amp__event_release(s->last);
    s->last = ev;
    st = amp__event_wait(ev);
out:
    pthread_mutex_unlock(&s->lock);
    return st;
}

amp_status amp_array_create(amp_accelerator_view *q, size_t elem_size, amp_extent e, const void *init,
                            amp_array **out)
{
    amp_status st = AMP_OK;
    amp__storage *s = NULL;
    amp_array *a = NULL;
    if (!out) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_array_create: out is NULL");
    *out = NULL;
    if (!q) {
        amp_accelerator *acc;
        if ((st = amp_accelerator_default(&acc)) != AMP_OK) return st;
        if ((st = amp__default_view(acc, &q)) != AMP_OK) return st;
    }
    if ((st = amp__storage_new(elem_size, e, NULL, true, &s)) != AMP_OK) return st;
    if (!(a = calloc(1, sizeof *a))) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "array: out of host memory");
        goto fail;
    }
    if ((st = q->acc->e.be->mem_alloc(q->acc->e.dev, amp__storage_bytes(s), &s->dptr)) != AMP_OK) goto fail;
    s->acc = q->acc;
    a->s = s;
    a->q = q;
    atomic_fetch_add(&q->refs, 1); /* the array's copies run on q */
    if (init && (st = amp__array_copy(a, (void *)init, AMP__H2D)) != AMP_OK) goto fail;
    *out = a;
    return AMP_OK;
fail:
    if (s) amp__storage_release(s);
    if (a && a->q) amp__view_release(a->q);
    free(a);
    return st;
}

amp_status amp_array_copy_to_host(amp_array *a, void *dst)
{
    if (!a || !dst)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_array_copy_to_host: %s is NULL", a ? "dst" : "array");
    return amp__array_copy(a, dst, AMP__D2H);
}

amp_status amp_array_copy_from_host(amp_array *a, const void *src)
{
    if (!a || !src)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_array_copy_from_host: %s is NULL", a ? "src" : "array");
    return amp__array_copy(a, (void *)src, AMP__H2D);
}

amp_status amp_array_get_extent(const amp_array *a, amp_extent *out)
{
    if (!a || !out) {
        if (out) memset(out, 0, sizeof *out);
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_array_get_extent: %s is NULL", a ? "out" : "array");
    }
    *out = a->s->ext;
    return AMP_OK;
}

amp_status amp_array_destroy(amp_array *a)
{
    if (!a) return AMP_OK;
    pthread_mutex_lock(&a->s->lock);
    int refs = a->s->refs;
    pthread_mutex_unlock(&a->s->lock);
    if (refs > 1)
        return amp__fail(AMP_ERROR_BUSY, "amp_array_destroy: %d array_view(s) of this array still exist",
                         refs - 1);
    amp_status st = amp__storage_release(a->s);
    amp__view_release(a->q);
    free(a);
    return st;
}
