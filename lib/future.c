/* future.c — amp_future, C++ AMP's completion_future: a point in a queue
 * that the caller can wait on or poll, and the device time of the work it
 * follows (timed events recorded around it). */
#include "internal.h"

#include <stdlib.h>

struct amp_future {
    amp__handle h;
    amp__point done; /* holds a reference to the queue */
    void *t0, *t1;   /* timed events of done.q around the work; NULL: none */
};

amp_status amp__future_new(amp_future **out)
{
    *out = amp__handle_new(AMP__HANDLE_FUTURE, sizeof **out);
    return *out ? AMP_OK : amp__fail(AMP_ERROR_OUT_OF_MEMORY, "future: out of host memory");
}

void amp__future_complete_at(amp_future *f, amp__point p, void *t0, void *t1)
{
    amp__point_set(&f->done, p);
    f->t0 = t0;
    f->t1 = t1;
}

amp_status amp_future_wait(amp_future *f)
{
    AMP__HANDLE_OK(f, AMP__HANDLE_FUTURE);
    return amp__point_wait(f->done);
}

amp_status amp_future_wait_for(amp_future *f, uint32_t ms)
{
    AMP__HANDLE_OK(f, AMP__HANDLE_FUTURE);
    return amp__timeout_message(__func__, ms, amp__point_wait_for(f->done, &ms));
}

amp_status amp_future_is_ready(amp_future *f, bool *done)
{
    if (done) *done = false;
    AMP__NOT_NULL(done);
    AMP__HANDLE_OK(f, AMP__HANDLE_FUTURE);
    return amp__point_query(f->done, done);
}

amp_status amp_future_elapsed_ms(amp_future *f, double *ms)
{
    if (ms) *ms = 0;
    AMP__NOT_NULL(ms);
    AMP__HANDLE_OK(f, AMP__HANDLE_FUTURE);
    amp_status st = amp__point_wait(f->done);
    if (st != AMP_OK) return st;
    if (!f->t0 || !f->t1)
        return amp__fail(AMP_ERROR_UNSUPPORTED, "this future's work was not timed (it ran on the host, or queued "
                         "nothing)");
    float v = 0;
    if ((st = f->done.q->be->event_elapsed(f->done.q->dev, f->t0, f->t1, &v)) != AMP_OK) return st;
    *ms = v;
    return AMP_OK;
}

amp_status amp_future_destroy(amp_future *f)
{
    if (!f) return AMP_OK;
    amp_status st = amp__handle_end(f, AMP__HANDLE_FUTURE, __func__, "f");
    if (st != AMP_OK) return st;
    if (f->done.q) {
        amp__queue_event_release(f->done.q, f->t0);
        amp__queue_event_release(f->done.q, f->t1);
    }
    amp__point_set(&f->done, (amp__point){NULL, 0});
    amp__handle_free(f, AMP__HANDLE_FUTURE);
    return AMP_OK;
}
