/* array.c — amp_array: containers that live on one accelerator (device
 * memory, or host memory on the CPU accelerator) or, as staging arrays, in
 * host memory associated with an accelerator view; created on a queue and
 * copied to and from the host on that queue. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* Blocking host<->array copy of the whole array on its queue (why: for
 * traces). The data comes home first when a view of the array took it to
 * another accelerator. */
static amp_status amp__array_copy(amp_array *a, void *host, amp__copy_dir dir, amp__copy_why why)
{
    amp__storage *s = a->s;
    amp_status st = AMP_OK;
    amp_accelerator_view *q = a->q;
    amp__point done = {NULL, 0};
    size_t bytes = amp__storage_bytes(s);
    const char *fn = dir == AMP__H2D ? "amp_array_copy_from_host" : "amp_array_copy_to_host";
    if ((st = amp__storage_lock(s, fn)) != AMP_OK) return st;
    if ((st = amp__storage_refuse_host(s, fn)) != AMP_OK) goto out;
    /* The copy runs on q, which must not be recording: refused here, by
     * this call's name, before the data comes home or a write is counted
     * (a refused call changes nothing). A staging array's copy is a host
     * memmove, never queued. */
    if (s->home_acc && bytes && (st = amp__queue_refuse_recording(q, fn)) != AMP_OK) goto out;
    /* Reading keeps a view's device copy (its device-newer parts come home);
     * writing makes it stale, so it goes. */
    st = dir == AMP__D2H ? amp__storage_sync(s, &s->whole) : amp__storage_go_home(s);
    if (st != AMP_OK || bytes == 0) goto out;
    /* The data source written again: a view's discard_data hint ends (the
     * next kernel on it must copy in what arrives here). */
    if (dir == AMP__H2D) s->writes++;
    if (!s->home_acc) {
        /* A staging array: host memory on both sides. */
        memmove(dir == AMP__H2D ? s->home : host, dir == AMP__H2D ? host : s->home, bytes);
        goto out;
    }
    if ((st = amp__point_order(q, s->last)) != AMP_OK) goto out;
    amp__copy c;
    memset(&c, 0, sizeof c);
    c.dir = dir;
    c.dst = dir == AMP__H2D ? s->home : host;
    c.src = dir == AMP__H2D ? (const void *)host : (const void *)s->home;
    c.width_bytes = c.dst_pitch = c.src_pitch = c.dst_slice_pitch = c.src_slice_pitch = bytes;
    c.height = c.depth = 1;
    AMP__TRACE_SPAN(span);
    AMP__TRACE(amp__queue_span_begin(&span, q, dir, c.width_bytes, why));
    st = amp__queue_copy(q, &c, &done);
    AMP__TRACE(amp__queue_span_end(&span, q, s, NULL, st));
    if (st != AMP_OK) goto out;
    amp__queue_count_copy(q, dir, c.width_bytes);
    amp__point_set(&s->last, done);
    st = amp__point_wait(done);
out:
    amp__lock_release(&s->lock);
    return st;
}

/* An array of s on q (q retained twice: the array's and the storage's). */
static amp_status amp__array_new(amp_accelerator_view *q, amp__storage *s, amp_array **out)
{
    amp_array *a = amp__handle_new_unpublished(AMP__HANDLE_ARRAY, sizeof *a);
    if (!a) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "array: out of host memory");
    a->s = s;
    a->q = q;
    amp__queue_retain(q); /* the array's copies run on q */
    s->home_q = q;
    amp__queue_retain(q);
    amp__handle_publish(a, AMP__HANDLE_ARRAY);
    *out = a;
    return AMP_OK;
}

static void amp__array_free(amp_array *a)
{
    if (!a) return;
    amp__storage_release(a->s);
    amp__queue_release(a->q);
    amp__handle_free(a, AMP__HANDLE_ARRAY);
}

/* A NULL pointer stands for no data only when there is none (a bad
 * extent, size -1, is named by amp__storage_new instead). */
#define AMP__NOT_NULL_UNLESS_EMPTY(p, e)                 \
    do {                                                 \
        if (amp_extent_size(e) > 0) AMP__NOT_NULL(p);    \
    } while (0)

amp_status amp_array_create(amp_accelerator_view *q, size_t elem_size, amp_extent e, const void *init,
                            amp_array **out)
{
    amp_status st = AMP_OK;
    amp__storage *s = NULL;
    amp_array *a = NULL;
    AMP__NOT_NULL(out);
    *out = NULL;
    if (q) AMP__HANDLE_OK(q, AMP__HANDLE_QUEUE);
    else if ((st = amp__default_queue(&q)) != AMP_OK) return st;
    /* The copy of init is made before return, never recorded: refused
     * first, by this call's name, while q records. */
    if (init && (st = amp__queue_refuse_recording(q, "amp_array_create (its copy of init)")) != AMP_OK) return st;
    if ((st = amp__storage_new(elem_size, e, NULL, true, &s)) != AMP_OK) return st;
    size_t bytes = amp__storage_bytes(s);
    if (bytes && (st = q->be->mem_alloc(q->dev, bytes, (void **)&s->home)) != AMP_OK) goto fail;
    s->home_acc = s->acc = q->acc;
    s->dptr = s->home;
    s->direct = true;
    if ((st = amp__array_new(q, s, &a)) != AMP_OK) goto fail;
    if (init && (st = amp__array_copy(a, (void *)init, AMP__H2D, AMP__WHY_ARRAY_INIT)) != AMP_OK) {
        amp__array_free(a);
        return st;
    }
    *out = a;
    return AMP_OK;
fail:
    amp__storage_release(s);
    return st;
}

amp_status amp_array_create_staging(amp_accelerator_view *q, size_t elem_size, amp_extent e, const void *init,
                                    amp_array **out)
{
    amp_status st = AMP_OK;
    amp__storage *s = NULL;
    amp_array *a = NULL;
    AMP__NOT_NULL(out);
    *out = NULL;
    if (q) AMP__HANDLE_OK(q, AMP__HANDLE_QUEUE);
    else if ((st = amp__default_queue(&q)) != AMP_OK) return st;
    if ((st = amp__storage_new(elem_size, e, NULL, true, &s)) != AMP_OK) return st;
    size_t bytes = amp__storage_bytes(s);
    if (!(s->home = s->host = aligned_alloc(64, bytes ? (bytes + 63) / 64 * 64 : 64))) {
        amp__storage_release(s);
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "staging array: cannot allocate %zu bytes of host memory", bytes);
    }
    /* Pinned for q's GPU: its copies then run at full speed and truly
     * asynchronously. Where the driver refuses, the memory stays pageable
     * (slower copies, the same results). */
    void *mapped = NULL;
    if (bytes && !amp__host_addressable(q->acc) && q->be->host_register &&
        q->be->host_register(q->dev, s->home, bytes, &mapped) == AMP_OK)
        s->pinned_acc = q->acc;
    if ((st = amp__array_new(q, s, &a)) != AMP_OK) {
        amp__storage_release(s);
        return st;
    }
    if (init && bytes) memcpy(s->home, init, bytes);
    *out = a;
    return AMP_OK;
}

amp_status amp_array_create_from_native(amp_accelerator_view *q, void *device_ptr, size_t elem_size, amp_extent e,
                                        amp_array **out)
{
    amp_status st = AMP_OK;
    amp__storage *s = NULL;
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__NOT_NULL_UNLESS_EMPTY(device_ptr, e);
    if (q) AMP__HANDLE_OK(q, AMP__HANDLE_QUEUE);
    else if ((st = amp__default_queue(&q)) != AMP_OK) return st;
    if ((st = amp__storage_new(elem_size, e, NULL, true, &s)) != AMP_OK) return st;
    s->home = s->dptr = device_ptr;
    s->borrowed = true;
    s->home_acc = s->acc = q->acc;
    s->direct = true;
    if ((st = amp__array_new(q, s, out)) != AMP_OK) amp__storage_release(s);
    return st;
}

amp_status amp_array_native_handle(amp_array *a, void **device_ptr)
{
    AMP__NOT_NULL(device_ptr);
    *device_ptr = NULL;
    AMP__HANDLE_OK(a, AMP__HANDLE_ARRAY);
    amp_status st = amp__storage_lock(a->s, __func__);
    if (st != AMP_OK) return st;
    /* A view of the array may have taken the data to another accelerator. */
    if (a->s->acc && !a->s->direct) st = amp__storage_go_home(a->s);
    amp__lock_release(&a->s->lock);
    if (st == AMP_OK) *device_ptr = a->s->home;
    return st;
}

void *amp_array_data(const amp_array *a)
{
    if (amp__handle_check(a, AMP__HANDLE_ARRAY, __func__, "a") != AMP_OK) return NULL;
    if (!amp__host_addressable(a->s->home_acc)) return NULL;
    return a->s->home;
}

amp_status amp_array_get_accelerator_view(amp_array *a, amp_accelerator_view **out)
{
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__HANDLE_OK(a, AMP__HANDLE_ARRAY);
    *out = a->q;
    return AMP_OK;
}

amp_status amp_array_copy_to_host(amp_array *a, void *dst)
{
    AMP__HANDLE_OK(a, AMP__HANDLE_ARRAY);
    AMP__NOT_NULL_UNLESS_EMPTY(dst, a->s->ext);
    return amp__array_copy(a, dst, AMP__D2H, AMP__WHY_ARRAY_TO_HOST);
}

amp_status amp_array_copy_from_host(amp_array *a, const void *src)
{
    AMP__HANDLE_OK(a, AMP__HANDLE_ARRAY);
    AMP__NOT_NULL_UNLESS_EMPTY(src, a->s->ext);
    return amp__array_copy(a, (void *)src, AMP__H2D, AMP__WHY_ARRAY_FROM_HOST);
}

amp_status amp_array_get_element_size(const amp_array *a, size_t *out)
{
    AMP__CLEAR_OUT(out);
    AMP__NOT_NULL(out);
    AMP__HANDLE_OK(a, AMP__HANDLE_ARRAY);
    *out = a->s->elem;
    return AMP_OK;
}

amp_status amp_array_get_extent(const amp_array *a, amp_extent *out)
{
    AMP__CLEAR_OUT(out);
    AMP__NOT_NULL(out);
    AMP__HANDLE_OK(a, AMP__HANDLE_ARRAY);
    *out = a->s->ext;
    return AMP_OK;
}

/* Arrays end (amp_array_destroy counts the views of its storage and ends
 * the handle) under this lock, and views of an array are counted under it
 * with the array checked live: a view asked for while the array is
 * destroyed either makes the destroy BUSY or is refused as of a destroyed
 * array, and never reaches the storage the destroy then frees. Lock
 * order: this, then a storage's lock. */
static pthread_mutex_t amp__arrays_ending = PTHREAD_MUTEX_INITIALIZER;

amp_status amp__array_hold_storage(amp_array *a, amp__storage **s)
{
    pthread_mutex_lock(&amp__arrays_ending);
    amp_status st = amp__handle_check(a, AMP__HANDLE_ARRAY, "amp_array_view_of_array", "a");
    if (st == AMP_OK && (st = amp__storage_lock(a->s, "amp_array_view_of_array")) == AMP_OK) {
        (*s = a->s)->refs++;
        amp__lock_release(&a->s->lock);
    }
    pthread_mutex_unlock(&amp__arrays_ending);
    return st;
}

amp_status amp_array_destroy(amp_array *a)
{
    if (!a) return AMP_OK;
    AMP__HANDLE_OK(a, AMP__HANDLE_ARRAY);
    int graphs = amp__graph_uses(a);
    if (graphs)
        return amp__fail(AMP_ERROR_BUSY, "amp_array_destroy: %d graph(s) use this array (destroy them first)", graphs);
    pthread_mutex_lock(&amp__arrays_ending);
    amp_status st = amp__storage_lock(a->s, __func__);
    if (st != AMP_OK) { /* a forked child: the array stays */
        pthread_mutex_unlock(&amp__arrays_ending);
        return st;
    }
    int refs = a->s->refs;
    amp__lock_release(&a->s->lock);
    st = refs > 1 ? AMP_ERROR_BUSY : amp__handle_end(a, AMP__HANDLE_ARRAY, __func__, "a");
    pthread_mutex_unlock(&amp__arrays_ending);
    if (st == AMP_ERROR_BUSY)
        return amp__fail(AMP_ERROR_BUSY, "amp_array_destroy: %d array_view(s) of this array still exist",
                         refs - 1);
    if (st != AMP_OK) return st;
    st = amp__storage_release(a->s);
    amp__queue_release(a->q);
    amp__handle_free(a, AMP__HANDLE_ARRAY);
    return st;
}
