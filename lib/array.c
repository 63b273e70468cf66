/* array.c — amp_array: device-resident containers, created on a queue,
 * copied to and from the host on that queue. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* Blocking host<->array copy of the whole array on its queue (why: for
 * traces). */
static amp_status amp__array_copy(amp_array *a, void *host, amp__copy_dir dir, amp__copy_why why)
{
    amp__storage *s = a->s;
    amp_status st = AMP_OK;
    amp_accelerator_view *q = a->q;
    amp__point done = {NULL, 0};
    amp__lock_acquire(&s->lock);
    if ((st = amp__point_order(q, s->last)) != AMP_OK) goto out;
    amp__copy c;
    memset(&c, 0, sizeof c);
    c.dir = dir;
    c.dst = dir == AMP__H2D ? s->dptr : host;
    c.src = dir == AMP__H2D ? (const void *)host : (const void *)s->dptr;
    c.width_bytes = c.dst_pitch = c.src_pitch = c.dst_slice_pitch = c.src_slice_pitch = amp__storage_bytes(s);
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
    if ((st = amp__storage_new(elem_size, e, NULL, true, &s)) != AMP_OK) return st;
    if (!(a = amp__handle_new(AMP__HANDLE_ARRAY, sizeof *a))) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "array: out of host memory");
        goto fail;
    }
    if ((st = q->be->mem_alloc(q->dev, amp__storage_bytes(s), &s->dptr)) != AMP_OK) goto fail;
    s->acc = q->acc;
    a->s = s;
    a->q = q;
    amp__queue_retain(q); /* the array's copies run on q */
    if (init && (st = amp__array_copy(a, (void *)init, AMP__H2D, AMP__WHY_ARRAY_INIT)) != AMP_OK) goto fail;
    *out = a;
    return AMP_OK;
fail:
    if (s) amp__storage_release(s);
    if (a && a->q) amp__queue_release(a->q);
    amp__handle_free(a, AMP__HANDLE_ARRAY);
    return st;
}

amp_status amp_array_create_from_native(amp_accelerator_view *q, void *device_ptr, size_t elem_size, amp_extent e,
                                        amp_array **out)
{
    amp_status st = AMP_OK;
    amp__storage *s = NULL;
    amp_array *a = NULL;
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__NOT_NULL(device_ptr);
    if (q) AMP__HANDLE_OK(q, AMP__HANDLE_QUEUE);
    else if ((st = amp__default_queue(&q)) != AMP_OK) return st;
    if ((st = amp__storage_new(elem_size, e, NULL, true, &s)) != AMP_OK) return st;
    if (!(a = amp__handle_new(AMP__HANDLE_ARRAY, sizeof *a))) {
        amp__storage_release(s);
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "array: out of host memory");
    }
    s->dptr = device_ptr;
    s->borrowed = true;
    s->acc = q->acc;
    a->s = s;
    a->q = q;
    amp__queue_retain(q);
    *out = a;
    return AMP_OK;
}

amp_status amp_array_native_handle(amp_array *a, void **device_ptr)
{
    AMP__NOT_NULL(device_ptr);
    *device_ptr = NULL;
    AMP__HANDLE_OK(a, AMP__HANDLE_ARRAY);
    *device_ptr = a->s->dptr;
    return AMP_OK;
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
    AMP__NOT_NULL(dst);
    return amp__array_copy(a, dst, AMP__D2H, AMP__WHY_ARRAY_TO_HOST);
}

amp_status amp_array_copy_from_host(amp_array *a, const void *src)
{
    AMP__HANDLE_OK(a, AMP__HANDLE_ARRAY);
    AMP__NOT_NULL(src);
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

amp_status amp_array_destroy(amp_array *a)
{
    if (!a) return AMP_OK;
    AMP__HANDLE_OK(a, AMP__HANDLE_ARRAY);
    amp__lock_acquire(&a->s->lock);
    int refs = a->s->refs;
    amp__lock_release(&a->s->lock);
    if (refs > 1)
        return amp__fail(AMP_ERROR_BUSY, "amp_array_destroy: %d array_view(s) of this array still exist",
                         refs - 1);
    amp_status st = amp__handle_end(a, AMP__HANDLE_ARRAY, __func__, "a");
    if (st != AMP_OK) return st;
    st = amp__storage_release(a->s);
    amp__queue_release(a->q);
    amp__handle_free(a, AMP__HANDLE_ARRAY);
    return st;
}
