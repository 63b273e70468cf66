/* array_view.c — amp_array_view: views of host memory or of an array,
 * sections and projections sharing their parent's storage, and the host's
 * side of coherence (synchronize, refresh, discard). */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static amp_status amp__view_new(amp__storage *s, amp_index origin, amp_extent ext, amp_access access,
                                amp_array_view **out)
{
    amp_array_view *v = amp__handle_new(AMP__HANDLE_VIEW, sizeof *v);
    if (!v) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "view: out of host memory");
    v->s = s;
    v->origin = origin;
    v->ext = ext;
    /* Views never change shape: their box and offset are worked out once
     * here, not at every launch. */
    int R = s->ext.rank, r = ext.rank;
    for (int d = 0; d < R; ++d) {
        v->box.lo[d] = origin.v[d];
        v->box.hi[d] = origin.v[d] + (d < R - r ? 1 : ext.v[d - (R - r)]);
    }
    v->offset = amp__storage_offset(s, origin.v);
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
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__NOT_NULL(host);
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
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__HANDLE_OK(a, AMP__HANDLE_ARRAY);
    amp_index origin = {a->s->ext.rank, {0}};
    amp_status st = amp__view_new(a->s, origin, a->s->ext, AMP_READ_WRITE, out);
    if (st == AMP_OK) amp__storage_retain(a->s);
    return st;
}

static amp_status amp__view_derive(amp_array_view *v, amp_index origin, amp_extent e, amp_array_view **out)
{
    amp_status st = amp__view_new(v->s, origin, e, v->access, out);
    if (st != AMP_OK) return st;
    amp__lock_acquire(&v->s->lock);
    (*out)->discard = v->discard;
    v->s->refs++;
    amp__lock_release(&v->s->lock);
    return AMP_OK;
}

amp_status amp_array_view_section(amp_array_view *v, amp_index origin, amp_extent e, amp_array_view **out)
{
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
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
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
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

amp_status amp_array_view_get_element_size(const amp_array_view *v, size_t *out)
{
    AMP__CLEAR_OUT(out);
    AMP__NOT_NULL(out);
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
    *out = v->s->elem;
    return AMP_OK;
}

amp_status amp_array_view_get_extent(const amp_array_view *v, amp_extent *out)
{
    AMP__CLEAR_OUT(out);
    AMP__NOT_NULL(out);
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
    *out = v->ext;
    return AMP_OK;
}

void *amp_array_view_data(const amp_array_view *v)
{
    if (!v || amp__handle_check(v, AMP__HANDLE_VIEW, __func__, "v") != AMP_OK || !v->s->host) return NULL;
    return v->s->host + v->offset * (int64_t)v->s->elem;
}

amp_status amp_array_view_get_strides(const amp_array_view *v, int64_t *strides)
{
    AMP__NOT_NULL(strides);
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
    int R = v->s->ext.rank, r = v->ext.rank;
    for (int d = 0; d < r; ++d) strides[d] = v->s->stride[R - r + d];
    return AMP_OK;
}

amp_status amp_array_view_native_handle(amp_array_view *v, amp_accelerator_view *q, amp_access access,
                                        void **device_ptr)
{
    amp_status st = AMP_OK;
    AMP__NOT_NULL(device_ptr);
    *device_ptr = NULL;
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
    if (access != AMP_READ_WRITE && access != AMP_READ_ONLY && access != AMP_WRITE_ONLY)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_array_view_native_handle: access %d is not an amp_access",
                         (int)access);
    if (access != AMP_READ_ONLY && v->access == AMP_READ_ONLY)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                         "amp_array_view_native_handle: the view is AMP_READ_ONLY; it cannot be handed out for writing");
    if (q) AMP__HANDLE_OK(q, AMP__HANDLE_QUEUE);
    amp__storage *s = v->s;
    if (!q) {
        /* The view's accelerator when it has one (an array's, or where its
         * data went last), else the default (the rule in hipamp.h). */
        if (s->acc) st = amp__accelerator_queue(s->acc, &q);
        else st = amp__default_queue(&q);
        if (st != AMP_OK) return st;
    }
    void *dptr = NULL;
    amp__lock_acquire(&s->lock);
    bool discard = access == AMP_WRITE_ONLY || v->discard;
    if ((st = amp__storage_prepare(s, q, &v->box, discard, &dptr)) == AMP_OK) {
        /* What the caller queues on q from now on uses the data: a host
         * access waits for q as it is then (a tail point), and a writer
         * leaves the box newer on the device. */
        amp__storage_after_launch(s, (amp__point){q, AMP__SEQ_TAIL}, &v->box, access != AMP_READ_ONLY);
        v->discard = false;
        *device_ptr = (char *)dptr + v->offset * (int64_t)s->elem;
    }
    amp__lock_release(&s->lock);
    return st;
}

static amp_status amp__view_sync(amp_array_view *v)
{
    amp__lock_acquire(&v->s->lock);
    amp_status st = amp__storage_sync(v->s, &v->box);
    amp__lock_release(&v->s->lock);
    return st;
}

amp_status amp_array_view_synchronize(amp_array_view *v)
{
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
    return amp__view_sync(v);
}

amp_status amp_array_view_refresh(amp_array_view *v)
{
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
    amp__storage *s = v->s;
    amp__lock_acquire(&s->lock);
    /* The host data is needed again, unless the view never reads it. */
    v->discard = v->access == AMP_WRITE_ONLY;
    amp_status st = amp__storage_refresh(s, &v->box);
    amp__lock_release(&s->lock);
    return st;
}

amp_status amp_array_view_discard_data(amp_array_view *v)
{
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
    amp__storage *s = v->s;
    amp__lock_acquire(&s->lock);
    v->discard = true;
    amp_status st = amp__storage_discard(s, &v->box);
    amp__lock_release(&s->lock);
    return st;
}

amp_status amp_array_view_destroy(amp_array_view *v)
{
    if (!v) return AMP_OK;
    amp_status st = amp__handle_end(v, AMP__HANDLE_VIEW, __func__, "v");
    if (st != AMP_OK) return st;
    st = amp__view_sync(v);
    amp_status st2 = amp__storage_release(v->s);
    amp__handle_free(v, AMP__HANDLE_VIEW);
    return st != AMP_OK ? st : st2;
}
