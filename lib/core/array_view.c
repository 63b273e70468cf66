/* array_view.c — amp_array_view: views of host memory or of an array,
 * sections, projections and the shapes C++ AMP derives from a view
 * (reinterpret_as, view_as, a read-only view, another handle), all sharing
 * their parent's storage; one element read or written from the host; and
 * the host's side of coherence (synchronize, refresh, discard). */
#include "internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A view of s with this layout; the caller holds a storage reference for it. */
static amp_status amp__view_new(amp__storage *s, int64_t offset, size_t elem, amp_extent ext, const int64_t *stride,
                                amp_access access, amp_array_view **out)
{
    amp_array_view *v = amp__handle_new_unpublished(AMP__HANDLE_VIEW, sizeof *v);
    if (!v) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "view: out of host memory");
    v->s = s;
    v->offset = offset;
    v->elem = elem;
    v->ext = ext;
    memcpy(v->stride, stride, sizeof(int64_t) * (size_t)ext.rank);
    amp__view_locate(s, offset, elem, ext, stride, &v->box, &v->exact);
    v->empty = amp_extent_size(ext) == 0;
    v->access = access;
    /* A view whose box holds more than its elements must have the rest
     * copied in: it never skips the copy-in. */
    v->discard = access == AMP_WRITE_ONLY && v->exact;
    /* Unused while discard is false, and for AMP_WRITE_ONLY (whose discard
     * passes only to derived views that stay write-only: amp__view_derive). */
    v->discard_at = 0;
    amp__handle_publish(v, AMP__HANDLE_VIEW);
    *out = v;
    return AMP_OK;
}

/* A view of the whole storage in its own shape. */
static amp_status amp__view_whole(amp__storage *s, amp_access access, amp_array_view **out)
{
    return amp__view_new(s, 0, s->elem, s->ext, s->stride, access, out);
}

static bool amp__access_valid(amp_access a)
{
    return a == AMP_READ_WRITE || a == AMP_READ_ONLY || a == AMP_WRITE_ONLY;
}

amp_status amp_array_view_create(void *host, size_t elem_size, amp_extent e, amp_access access,
                                 amp_array_view **out)
{
    amp_status st = AMP_OK;
    amp__storage *s = NULL;
    AMP__NOT_NULL(out);
    *out = NULL;
    /* A bad extent (size -1) is named by amp__storage_new below. */
    if (!host && amp_extent_size(e) > 0) AMP__NOT_NULL(host);
    if (!amp__access_valid(access))
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_array_view_create: access %d is not an amp_access",
                         (int)access);
    if ((st = amp__storage_new(elem_size, e, host, false, &s)) != AMP_OK) return st;
    if ((st = amp__view_whole(s, access, out)) != AMP_OK) amp__storage_release(s);
    return st;
}

amp_status amp_array_view_of_array(amp_array *a, amp_array_view **out)
{
    AMP__NOT_NULL(out);
    *out = NULL;
    amp__storage *s = NULL;
    amp_status st = amp__array_hold_storage(a, &s);
    if (st != AMP_OK) return st;
    if ((st = amp__view_whole(s, AMP_READ_WRITE, out)) != AMP_OK) amp__storage_release(s);
    return st;
}

/* A view of v's storage with another layout (or the same), sharing v's
 * discard state when the new view is exact. An AMP_WRITE_ONLY v's discard
 * is the promise that its kernels never read (its discard_at unused, 0):
 * it passes only to a view that stays AMP_WRITE_ONLY. A view derived to
 * read (amp_array_view_read_only) reads the data, as C++ AMP's
 * array_view<const T> of a write-only view does; its discard_at would
 * compare 0 with writes and skip the copy-in. */
static amp_status amp__view_derive(const char *fn, amp_array_view *v, int64_t offset, size_t elem, amp_extent e,
                                   const int64_t *stride, amp_access access, amp_array_view **out)
{
    /* The reference is taken before the handle exists: in a forked child
     * whose parent thread held the lock, nothing is made (AMP_ERROR_DEVICE)
     * rather than a published view left over a storage it cannot count. */
    amp_status st = amp__storage_lock(v->s, fn);
    if (st != AMP_OK) return st;
    bool inherits = v->access != AMP_WRITE_ONLY || access == AMP_WRITE_ONLY;
    bool discard = inherits && v->discard;
    uint64_t discard_at = v->discard_at;
    v->s->refs++;
    amp__lock_release(&v->s->lock);
    if ((st = amp__view_new(v->s, offset, elem, e, stride, access, out)) != AMP_OK) {
        (void)amp__storage_release(v->s);
        return st;
    }
    /* Not yet returned to the caller: no other thread reaches these. */
    (*out)->discard = discard && (*out)->exact;
    (*out)->discard_at = discard_at;
    return AMP_OK;
}

amp_status amp_array_view_section(amp_array_view *v, amp_index origin, amp_extent e, amp_array_view **out)
{
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
    amp_status st = amp_extent_validate(e);
    if (st != AMP_OK) return st;
    int r = v->ext.rank;
    if (origin.rank != r || e.rank != r)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                         "section of a rank-%d view needs rank-%d origin and extent (got %d and %d)", r, r,
                         origin.rank, e.rank);
    int64_t offset = v->offset;
    bool wrapped = false;
    for (int d = 0; d < r; ++d) {
        if (origin.v[d] < 0)
            return amp__fail(AMP_ERROR_OUT_OF_BOUNDS, "section dimension %d: origin %d is negative", d, origin.v[d]);
        if ((int64_t)origin.v[d] + e.v[d] > v->ext.v[d])
            return amp__fail(AMP_ERROR_OUT_OF_BOUNDS,
                             "section dimension %d: origin %d + extent %d passes the view's extent %d", d,
                             origin.v[d], e.v[d], v->ext.v[d]);
        int64_t step;
        wrapped |= __builtin_mul_overflow((int64_t)origin.v[d], v->stride[d], &step) ||
                   __builtin_mul_overflow(step, (int64_t)v->elem, &step) ||
                   __builtin_add_overflow(offset, step, &offset);
    }
    /* A section with elements starts at one of v's, inside v's span, which
     * fits; only an empty one may start past it (its origin may equal v's
     * extent in every dimension), and over a span near 2^63 bytes its
     * address would wrap: it then starts where v does (it has nothing to
     * address). */
    if (wrapped) offset = v->offset;
    return amp__view_derive("amp_array_view_section", v, offset, v->elem, e, v->stride, v->access, out);
}

amp_status amp_array_view_project(amp_array_view *v, int i, amp_array_view **out)
{
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
    int r = v->ext.rank;
    if (r < 2)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "projection needs a view of rank 2 or more (rank %d)", r);
    if (i < 0 || i >= v->ext.v[0])
        return v->ext.v[0] ? amp__fail(AMP_ERROR_OUT_OF_BOUNDS, "projection index %d outside 0..%d", i, v->ext.v[0] - 1)
                           : amp__fail(AMP_ERROR_OUT_OF_BOUNDS, "projection index %d: the view's first dimension is 0", i);
    amp_extent e = amp_extent_make(r - 1, v->ext.v + 1);
    /* As for a section: only an empty view's row may start past its span,
     * where the address could wrap; such a row starts where v does. */
    int64_t offset;
    if (__builtin_mul_overflow((int64_t)i, v->stride[0], &offset) ||
        __builtin_mul_overflow(offset, (int64_t)v->elem, &offset) ||
        __builtin_add_overflow(v->offset, offset, &offset))
        offset = v->offset;
    return amp__view_derive("amp_array_view_project", v, offset, v->elem, e, v->stride + 1, v->access, out);
}

/* reinterpret_as and view_as need the view's elements to be one run. */
static amp_status amp__view_check_contiguous(const amp_array_view *v, const char *fn)
{
    /* An empty view (a section with a 0 anywhere) has no elements apart. */
    if (v->empty || amp__layout_contiguous(v->ext.rank, v->ext.v, v->stride)) return AMP_OK;
    char strides[160] = "";
    for (int d = 0, n = 0; d < v->ext.rank && n < (int)sizeof strides; ++d)
        n += snprintf(strides + n, sizeof strides - (size_t)n, d ? ",%lld" : "%lld", (long long)v->stride[d]);
    return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                     "%s: the view's elements are not contiguous (strides %s): take it of a whole view, a "
                     "rank-1 view or whole rows", fn, strides);
}

/* A new shape's elements must start on their natural alignment (the
 * largest power of two dividing their size, at most 16) in the data: a
 * GPU's device copy starts on a wide boundary, and an 8-byte load from 4
 * bytes past one is a misaligned-address fault, which is sticky for the
 * whole context (every later call fails, data lost). The CPU accelerator
 * loads anywhere, but a shape is refused alike everywhere. An empty view
 * loads nothing. */
static amp_status amp__view_check_aligned(const amp_array_view *v, size_t elem_size, const char *fn)
{
    size_t align = elem_size & (~elem_size + 1);
    if (align > 16) align = 16;
    if (v->empty || v->offset % (int64_t)align == 0) return AMP_OK;
    return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                     "%s: the view starts %lld bytes into its data, not a multiple of %zu, the alignment of %zu-byte "
                     "elements (a GPU faults on such loads): take it from a section that starts on such a boundary",
                     fn, (long long)v->offset, align, elem_size);
}

amp_status amp_array_view_reinterpret_as(amp_array_view *v, size_t elem_size, amp_array_view **out)
{
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
    if (elem_size == 0) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_array_view_reinterpret_as: element size is 0");
    amp_status st = amp__view_check_contiguous(v, "amp_array_view_reinterpret_as");
    if (st == AMP_OK) st = amp__view_check_aligned(v, elem_size, "amp_array_view_reinterpret_as");
    if (st != AMP_OK) return st;
    uint64_t bytes = (uint64_t)amp_extent_size(v->ext) * v->elem;
    if (bytes % elem_size)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                         "amp_array_view_reinterpret_as: the view's %llu bytes are not a whole number of %zu-byte "
                         "elements", (unsigned long long)bytes, elem_size);
    if (bytes / elem_size > INT_MAX)
        return amp__fail(AMP_ERROR_INVALID_EXTENT,
                         "amp_array_view_reinterpret_as: %llu elements of %zu bytes do not fit a rank-1 extent",
                         (unsigned long long)(bytes / elem_size), elem_size);
    amp_extent e = amp_extent_1d((int)(bytes / elem_size));
    /* The element size amp_array_view_create would take: an empty view
     * has no bytes to bound it. */
    if ((st = amp__extent_span_check(e, elem_size, "amp_array_view_reinterpret_as: a view")) != AMP_OK) return st;
    const int64_t one = 1;
    return amp__view_derive("amp_array_view_reinterpret_as", v, v->offset, elem_size, e, &one, v->access, out);
}

amp_status amp_array_view_view_as(amp_array_view *v, amp_extent e, amp_array_view **out)
{
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
    amp_status st = amp_extent_validate(e);
    if (st != AMP_OK) return st;
    if ((st = amp__view_check_contiguous(v, "amp_array_view_view_as")) != AMP_OK ||
        (st = amp__view_check_aligned(v, v->elem, "amp_array_view_view_as")) != AMP_OK)
        return st;
    if (amp_extent_size(e) > amp_extent_size(v->ext))
        return amp__fail(AMP_ERROR_INVALID_EXTENT,
                         "amp_array_view_view_as: the extent has %lld elements; the view has %lld",
                         (long long)amp_extent_size(e), (long long)amp_extent_size(v->ext));
    if ((st = amp__extent_span_check(e, v->elem, "amp_array_view_view_as: a view")) != AMP_OK) return st;
    int64_t stride[AMP_MAX_RANK], n = 1;
    for (int d = e.rank - 1; d >= 0; --d) {
        stride[d] = n;
        n *= e.v[d] > 0 ? e.v[d] : 1;
    }
    return amp__view_derive("amp_array_view_view_as", v, v->offset, v->elem, e, stride, v->access, out);
}

amp_status amp_array_view_read_only(amp_array_view *v, amp_array_view **out)
{
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
    return amp__view_derive("amp_array_view_read_only", v, v->offset, v->elem, v->ext, v->stride, AMP_READ_ONLY, out);
}

amp_status amp_array_view_duplicate(amp_array_view *v, amp_array_view **out)
{
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
    return amp__view_derive("amp_array_view_duplicate", v, v->offset, v->elem, v->ext, v->stride, v->access, out);
}

/* i inside v, else AMP_ERROR_OUT_OF_BOUNDS naming both. */
static amp_status amp__view_check_index(const amp_array_view *v, amp_index i, const char *fn)
{
    if (amp_extent_contains(v->ext, i)) return AMP_OK;
    char a[160] = "", b[160] = "";
    for (int d = 0, n = 0; d < i.rank && d < AMP_MAX_RANK && n < (int)sizeof a; ++d)
        n += snprintf(a + n, sizeof a - (size_t)n, d ? ",%d" : "%d", i.v[d]);
    for (int d = 0, n = 0; d < v->ext.rank && n < (int)sizeof b; ++d)
        n += snprintf(b + n, sizeof b - (size_t)n, d ? ",%d" : "%d", v->ext.v[d]);
    return amp__fail(i.rank == v->ext.rank ? AMP_ERROR_OUT_OF_BOUNDS : AMP_ERROR_INVALID_ARGUMENT,
                     "%s: index (%s) of rank %d is outside the view's extent (%s)", fn, a, i.rank, b);
}

amp_status amp_array_view_get(amp_array_view *v, amp_index i, void *value)
{
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
    AMP__NOT_NULL(value);
    amp_status st = amp__view_check_index(v, i, "amp_array_view_get");
    if (st == AMP_OK) st = amp__copy_element(v, i, value, false);
    /* The out-parameter rule: a live view's element size is known (a
     * stale one's is not: nothing is written then). */
    if (st != AMP_OK) memset(value, 0, v->elem);
    return st;
}

amp_status amp_array_view_set(amp_array_view *v, amp_index i, const void *value)
{
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
    AMP__NOT_NULL(value);
    if (v->access == AMP_READ_ONLY)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_array_view_set: the view is AMP_READ_ONLY");
    amp_status st = amp__view_check_index(v, i, "amp_array_view_set");
    if (st != AMP_OK) return st;
    return amp__copy_element(v, i, (void *)value, true);
}

amp_status amp_array_view_get_element_size(const amp_array_view *v, size_t *out)
{
    AMP__CLEAR_OUT(out);
    AMP__NOT_NULL(out);
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
    *out = v->elem;
    return AMP_OK;
}

amp_status amp_array_view_get_access(const amp_array_view *v, amp_access *out)
{
    if (out) *out = AMP_READ_WRITE;
    AMP__NOT_NULL(out);
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
    *out = v->access;
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
    if (amp__handle_check(v, AMP__HANDLE_VIEW, __func__, "v") != AMP_OK || !v->s->host) return NULL;
    /* An empty section may start past its data's end (its origin at the
     * view's extent): its address is then the end, one past the last
     * byte, which C lets us form (nothing is there to read). */
    size_t bytes = amp__storage_bytes(v->s);
    return v->s->host + ((uint64_t)v->offset > bytes ? bytes : (size_t)v->offset);
}

amp_status amp_array_view_get_strides(const amp_array_view *v, int64_t *strides)
{
    AMP__NOT_NULL(strides);
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
    memcpy(strides, v->stride, sizeof(int64_t) * (size_t)v->ext.rank);
    return AMP_OK;
}

amp_status amp_array_view_native_handle(amp_array_view *v, amp_accelerator_view *q, amp_access access,
                                        void **device_ptr)
{
    amp_status st = AMP_OK;
    AMP__NOT_NULL(device_ptr);
    *device_ptr = NULL;
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
    if (!amp__access_valid(access))
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_array_view_native_handle: access %d is not an amp_access",
                         (int)access);
    if (access != AMP_READ_ONLY && v->access == AMP_READ_ONLY)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                         "amp_array_view_native_handle: the view is AMP_READ_ONLY; it cannot be handed out for writing");
    if (q) AMP__HANDLE_OK(q, AMP__HANDLE_QUEUE);
    amp__storage *s = v->s;
    if (v->empty) return AMP_OK; /* no elements: nothing to hand out (NULL) */
    if (!q) {
        /* The view's accelerator when it has one (an array's, or where its
         * data went last), else the default (the rule in hipamp.h). */
        if (s->acc) st = amp__accelerator_queue(s->acc, &q);
        else st = amp__default_queue(&q);
        if (st != AMP_OK) return st;
    }
    /* What the caller queues on q after this would be recorded into the
     * graph, with the data's state of now. */
    if ((st = amp__queue_refuse_recording(q, "amp_array_view_native_handle")) != AMP_OK) return st;
    void *dptr = NULL;
    if ((st = amp__storage_lock(s, "amp_array_view_native_handle")) != AMP_OK) return st;
    /* access says what the caller does with the memory: one that reads it
     * (AMP_READ_ONLY, AMP_READ_WRITE) gets the data copied in, even of an
     * AMP_WRITE_ONLY view, whose discard only says its kernels never read;
     * only discard_data's hint still in force spares that copy. */
    bool discard = access == AMP_WRITE_ONLY ? v->exact : v->access != AMP_WRITE_ONLY && amp__view_discards(v);
    if ((st = amp__storage_prepare(s, q, &v->box, discard, &dptr)) == AMP_OK) {
        /* What the caller queues on q from now on uses the data: a host
         * access waits for q as it is then (a tail point), and a writer
         * leaves the box newer on the device. */
        amp__storage_after_launch(s, (amp__point){q, AMP__SEQ_TAIL}, &v->box, access != AMP_READ_ONLY);
        v->discard = false;
        *device_ptr = dptr ? (char *)dptr + v->offset : NULL;
    }
    amp__lock_release(&s->lock);
    return st;
}

static amp_status amp__view_sync(amp_array_view *v)
{
    amp_status st = amp__storage_lock(v->s, "amp_array_view_synchronize");
    if (st != AMP_OK) return st;
    st = amp__storage_sync(v->s, &v->box);
    amp__lock_release(&v->s->lock);
    return st;
}

amp_status amp_array_view_synchronize(amp_array_view *v)
{
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
    return amp__view_sync(v);
}

amp_status amp_array_view_synchronize_async(amp_array_view *v, amp_future **out)
{
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
    amp_future *f = NULL;
    amp_status st = amp__future_new(&f);
    if (st != AMP_OK) return st;
    if ((st = amp__storage_lock(v->s, "amp_array_view_synchronize_async")) != AMP_OK) goto out;
    if ((st = amp__storage_sync_queue(v->s, &v->box)) == AMP_OK) amp__future_complete_at(f, v->s->last, NULL, NULL);
    amp__lock_release(&v->s->lock);
out:
    if (st != AMP_OK) {
        amp_future_destroy(f);
        return st;
    }
    *out = f;
    return AMP_OK;
}

amp_status amp_array_view_refresh(amp_array_view *v)
{
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
    amp__storage *s = v->s;
    amp_status st = amp__storage_lock(s, "amp_array_view_refresh");
    if (st != AMP_OK) return st;
    /* The host data is needed again, unless the view never reads it. */
    v->discard = v->access == AMP_WRITE_ONLY && v->exact;
    /* A box wider than the view also holds elements the host did not
     * change: device-newer ones among them come back first. */
    if (!v->exact) st = amp__storage_sync(s, &v->box);
    if (st == AMP_OK) st = amp__storage_refresh(s, &v->box);
    amp__lock_release(&s->lock);
    return st;
}

amp_status amp_array_view_discard_data(amp_array_view *v)
{
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
    amp__storage *s = v->s;
    amp_status st = amp__storage_lock(s, "amp_array_view_discard_data");
    if (st != AMP_OK) return st;
    /* Only a view whose box is exactly its elements can drop device data:
     * a wider box holds elements another view may still need. */
    if (v->exact) {
        v->discard = true;
        v->discard_at = s->writes;
        st = amp__storage_discard(s, &v->box);
    }
    amp__lock_release(&s->lock);
    return st;
}

amp_status amp_array_view_destroy(amp_array_view *v)
{
    if (!v) return AMP_OK;
    AMP__HANDLE_OK(v, AMP__HANDLE_VIEW);
    int graphs = amp__graph_uses(v);
    if (graphs)
        return amp__fail(AMP_ERROR_BUSY, "amp_array_view_destroy: %d graph(s) use this view (destroy them first)",
                         graphs);
    /* Synchronized before the handle ends: a sync a recording refuses
     * leaves the view as it was (ended, its device-newer data would be
     * dropped with the storage's last reference, unsynchronized). */
    amp_status st = amp__storage_lock(v->s, __func__);
    if (st != AMP_OK) return st; /* a forked child: the view stays */
    st = amp__storage_refuse_host(v->s, __func__);
    if (st == AMP_OK) st = amp__storage_sync(v->s, &v->box);
    amp__lock_release(&v->s->lock);
    if (st == AMP_ERROR_BUSY) return st;
    amp_status st1 = amp__handle_end(v, AMP__HANDLE_VIEW, __func__, "v");
    if (st1 != AMP_OK) return st1;
    amp_status st2 = amp__storage_release(v->s);
    amp__handle_free(v, AMP__HANDLE_VIEW);
    return st != AMP_OK ? st : st2;
}
