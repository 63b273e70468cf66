/* view.c — amp_accelerator_view's public calls: create (plain, with a
 * queuing mode, around the user's native stream), wait, flush, statistics
 * and destroy, which discards a graph recording its thread left open. It
 * sits above the queue machinery (queue.c) and the graphs (graph.c), which
 * never call it. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

amp_status amp_accelerator_view_create(amp_accelerator *a, amp_accelerator_view **out)
{
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__ACCEL_OK(a);
    return amp__queue_new(a, false, out);
}

amp_status amp_accelerator_view_create_with_mode(amp_accelerator *a, amp_queuing_mode mode, amp_accelerator_view **out)
{
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__ACCEL_OK(a);
    if (mode != AMP_QUEUING_AUTOMATIC && mode != AMP_QUEUING_IMMEDIATE)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_accelerator_view_create_with_mode: mode %d is not an "
                         "amp_queuing_mode", (int)mode);
    amp_status st = amp__queue_new(a, false, out);
    if (st == AMP_OK) (*out)->mode = mode;
    return st;
}

amp_status amp_accelerator_view_get_queuing_mode(amp_accelerator_view *q, amp_queuing_mode *out)
{
    AMP__NOT_NULL(out);
    *out = AMP_QUEUING_AUTOMATIC;
    AMP__HANDLE_OK(q, AMP__HANDLE_QUEUE);
    *out = q->mode;
    return AMP_OK;
}

amp_status amp_accelerator_view_flush(amp_accelerator_view *q)
{
    AMP__HANDLE_OK(q, AMP__HANDLE_QUEUE);
    /* Every command was handed to the backend when it was queued; asking
     * whether the newest has finished (an event recorded and queried on a
     * GPU) is what makes a driver that buffers commands submit them. */
    bool done = false;
    return amp__point_query((amp__point){q, atomic_load_explicit(&q->submitted, memory_order_acquire)}, &done);
}

amp_status amp_accelerator_view_create_from_native(amp_accelerator *a, void *native, amp_accelerator_view **out)
{
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__ACCEL_OK(a);
    if (!a->e.be->queue_wrap)
        return amp__fail(AMP_ERROR_UNSUPPORTED, "accelerator %s has no native queues to wrap", a->e.info.device_path);
    return amp__queue_wrap(a, native, out);
}

amp_status amp_accelerator_view_native_queue(amp_accelerator_view *q, void **queue)
{
    AMP__NOT_NULL(queue);
    *queue = NULL;
    AMP__HANDLE_OK(q, AMP__HANDLE_QUEUE);
    *queue = q->be->queue_native(q->dev, q->queue);
    return AMP_OK;
}

amp_status amp_accelerator_view_get_accelerator(amp_accelerator_view *q, amp_accelerator **out)
{
    AMP__NOT_NULL(out);
    *out = NULL;
    AMP__HANDLE_OK(q, AMP__HANDLE_QUEUE);
    *out = q->acc;
    return AMP_OK;
}

amp_status amp_accelerator_view_wait(amp_accelerator_view *q)
{
    AMP__HANDLE_OK(q, AMP__HANDLE_QUEUE);
    return amp__queue_drain(q);
}


amp_status amp_accelerator_view_wait_for(amp_accelerator_view *q, uint32_t ms)
{
    AMP__HANDLE_OK(q, AMP__HANDLE_QUEUE);
    return amp__timeout_message(__func__, ms, amp__queue_drain_for(q, &ms));
}

amp_status amp_accelerator_view_destroy(amp_accelerator_view *q)
{
    if (!q) return AMP_OK;
    AMP__HANDLE_OK(q, AMP__HANDLE_QUEUE);
    if (q->is_default)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                         "amp_accelerator_view_destroy: %s's default view belongs to the library",
                         q->acc->e.info.device_path);
    int graphs = atomic_load(&q->graphs);
    if (graphs)
        return amp__fail(AMP_ERROR_BUSY, "amp_accelerator_view_destroy: %d graph(s) recorded on this view still exist",
                         graphs);
    /* A recording whose thread exited without ending it can be ended by
     * no one else that knows of it: destroying its view discards it. A
     * live thread's recording, or one another thread claimed to end, is
     * refused below. */
    amp_status st = amp__graph_discard_orphan(q);
    if (st == AMP_OK) st = amp__queue_refuse_recording(q, "amp_accelerator_view_destroy");
    if (st != AMP_OK) return st;
    /* Again: a thread that claimed the orphan before us may have ended it
     * into a graph since the check above. Such a graph is counted before
     * q stops recording (lib/core/graph.c), so q found not recording here
     * means it is counted now. */
    if ((graphs = atomic_load(&q->graphs)))
        return amp__fail(AMP_ERROR_BUSY, "amp_accelerator_view_destroy: %d graph(s) recorded on this view still exist",
                         graphs);
    /* The user's handle ends here; storages may still hold points on this
     * queue (they retain it), and the queue itself goes when the last of
     * those is released. */
    st = amp__handle_end(q, AMP__HANDLE_QUEUE, __func__, "q");
    if (st != AMP_OK) return st;
    st = amp__queue_drain(q);
    amp__queue_release(q);
    return st;
}

amp_status amp_accelerator_view_get_stats(amp_accelerator_view *q, amp_stats *out)
{
    AMP__CLEAR_OUT(out);
    AMP__NOT_NULL(out);
    AMP__HANDLE_OK(q, AMP__HANDLE_QUEUE);
    out->bytes_to_device = atomic_load(&q->bytes_to_device);
    out->copies_to_device = atomic_load(&q->copies_to_device);
    out->bytes_to_host = atomic_load(&q->bytes_to_host);
    out->copies_to_host = atomic_load(&q->copies_to_host);
    out->bytes_device_to_device = atomic_load(&q->bytes_d2d);
    out->copies_device_to_device = atomic_load(&q->copies_d2d);
    out->bytes_host_to_host = atomic_load(&q->bytes_h2h);
    out->copies_host_to_host = atomic_load(&q->copies_h2h);
    uint64_t launches = amp__queue_launches(q), before = atomic_load(&q->launches_before_reset);
    out->launches = launches > before ? launches - before : 0;
    return AMP_OK;
}

amp_status amp_accelerator_view_reset_stats(amp_accelerator_view *q)
{
    AMP__HANDLE_OK(q, AMP__HANDLE_QUEUE);
    atomic_store(&q->bytes_to_device, 0);
    atomic_store(&q->copies_to_device, 0);
    atomic_store(&q->bytes_to_host, 0);
    atomic_store(&q->copies_to_host, 0);
    atomic_store(&q->bytes_d2d, 0);
    atomic_store(&q->copies_d2d, 0);
    atomic_store(&q->bytes_h2h, 0);
    atomic_store(&q->copies_h2h, 0);
    atomic_store(&q->launches_before_reset, amp__queue_launches(q));
    return AMP_OK;
}
