/* future.c — amp_future, C++ AMP's completion_future: a point in a queue
 * that the caller can wait on or poll. */
#include "internal.h"

#include <stdlib.h>

struct amp_future {
    amp__point done; /* holds a reference to the queue */
};

amp_status amp__future_new(amp_future **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? AMP_OK : amp__fail(AMP_ERROR_OUT_OF_MEMORY, "future: out of host memory");
}

void amp__future_complete_at(amp_future *f, amp__point p) { amp__point_set(&f->done, p); }

amp_status amp_future_wait(amp_future *f)
{
    AMP__NOT_NULL(f);
    return amp__point_wait(f->done);
}

amp_status amp_future_is_ready(amp_future *f, bool *done)
{
    if (done) *done = false;
    AMP__NOT_NULL(done);
    AMP__NOT_NULL(f);
    return amp__point_query(f->done, done);
}

amp_status amp_future_destroy(amp_future *f)
{
    if (!f) return AMP_OK;
    amp__point_set(&f->done, (amp__point){NULL, 0});
    free(f);
    return AMP_OK;
}
