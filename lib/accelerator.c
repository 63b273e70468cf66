/* accelerator.c — the accelerator registry (GPUs found at run time, then the
 * CPU accelerator), the default choice, accelerator views (queues) and their
 * statistics. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define AMP__MAX_ACCELERATORS 64

static pthread_once_t amp__registry_once = PTHREAD_ONCE_INIT;
static amp_accelerator amp__accs[AMP__MAX_ACCELERATORS + 1];
static size_t amp__nacc;

static void amp__registry_init(void)
{
    amp__device_entry entries[AMP__MAX_ACCELERATORS];
    size_t n = amp__gpu_enumerate(entries, AMP__MAX_ACCELERATORS);
    if (n > AMP__MAX_ACCELERATORS) n = AMP__MAX_ACCELERATORS;
    for (size_t i = 0; i < n; ++i) amp__accs[i].e = entries[i];
    amp__cpu_enumerate(&amp__accs[n].e);
    amp__nacc = n + 1;
    for (size_t i = 0; i < amp__nacc; ++i) pthread_mutex_init(&amp__accs[i].lock, NULL);
}

amp_status amp__registry(amp_accelerator **list, size_t *count)
{
    pthread_once(&amp__registry_once, amp__registry_init);
    *list = amp__accs;
    *count = amp__nacc;
    return AMP_OK;
}

amp_status amp_accelerator_list(amp_accelerator **list, size_t cap, size_t *count)
{
    if (!count) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_accelerator_list: count is NULL");
    if (!list && cap) {
        *count = 0;
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_accelerator_list: list is NULL but cap is %zu", cap);
    }
    amp_accelerator *all;
    size_t n;
    amp__registry(&all, &n);
    for (size_t i = 0; i < n && i < cap; ++i) list[i] = &all[i];
    *count = n;
    return AMP_OK;
}

amp_status amp_accelerator_find(const char *path, amp_accelerator **out)
{
    if (!out) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_accelerator_find: out is NULL");
    *out = NULL;
    if (!path) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_accelerator_find: device path is NULL");
    amp_accelerator *all;
    size_t n;
    amp__registry(&all, &n);
    for (size_t i = 0; i < n; ++i)
        if (!strcmp(all[i].e.info.device_path, path)) {
            *out = &all[i];
            return AMP_OK;
        }
    return amp__fail(AMP_ERROR_NO_ACCELERATOR, "no accelerator with device path \"%s\"", path);
}

amp_status amp_accelerator_default(amp_accelerator **out)
{
    if (!out) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_accelerator_default: out is NULL");
    *out = NULL;
    amp_accelerator *all, *a = NULL;
    size_t n;
    amp__registry(&all, &n);
    const char *want = amp__env("AMP_DEFAULT_ACCELERATOR");
    if (want) {
        amp_status st = amp_accelerator_find(want, &a);
        if (st != AMP_OK)
            return amp__fail(AMP_ERROR_NO_ACCELERATOR,
                             "AMP_DEFAULT_ACCELERATOR=\"%s\" names no accelerator on this machine "
                             "(see hipamp-info)", want);
        if (!a->e.info.is_available)
            return amp__fail(AMP_ERROR_NO_ACCELERATOR, "AMP_DEFAULT_ACCELERATOR=\"%s\" is unavailable: %s",
                             want, a->e.info.unavailable_reason);
        *out = a;
        return AMP_OK;
    }
    for (size_t i = 0; i < n; ++i)
        if (all[i].e.info.is_available) {
            *out = &all[i];
            return AMP_OK;
        }
    return amp__fail(AMP_ERROR_NO_ACCELERATOR, "no usable accelerator: no GPU found and the CPU accelerator "
                     "is unavailable: %s", all[n - 1].e.info.unavailable_reason);
}

amp_status amp_accelerator_get_info(const amp_accelerator *a, amp_accelerator_info *out)
{
    if (!a || !out) {
        if (out) memset(out, 0, sizeof *out);
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_accelerator_get_info: %s is NULL",
                         a ? "out" : "accelerator");
    }
    *out = a->e.info;
    return AMP_OK;
}

/* ------------------------------------------------------------------ views */

static amp_status amp__view_new(amp_accelerator *a, bool is_default, amp_accelerator_view **out)
{
    amp_status st = AMP_OK;
    amp_accelerator_view *q = NULL;
    if (!a->e.info.is_available) {
        st = amp__fail(AMP_ERROR_NO_ACCELERATOR, "accelerator %s is unavailable: %s",
                       a->e.info.device_path, a->e.info.unavailable_reason);
        goto fail;
    }
    q = calloc(1, sizeof *q);
    if (!q) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "accelerator view: out of host memory");
        goto fail;
    }
    q->acc = a;
    q->is_default = is_default;
    atomic_init(&q->refs, 1);
    if ((st = a->e.be->queue_create(a->e.dev, &q->queue)) != AMP_OK) goto fail;
    *out = q;
    return AMP_OK;
fail:
    free(q);
    *out = NULL;
    return st;
}

amp_status amp_accelerator_view_create(amp_accelerator *a, amp_accelerator_view **out)
{
    if (!out) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_accelerator_view_create: out is NULL");
    *out = NULL;
    if (!a) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_accelerator_view_create: accelerator is NULL");
    return amp__view_new(a, false, out);
}

amp_status amp__default_view(amp_accelerator *a, amp_accelerator_view **out)
{
    amp_status st = AMP_OK;
    pthread_mutex_lock(&a->lock);
    if (!a->default_view) st = amp__view_new(a, true, &a->default_view);
    *out = a->default_view;
    pthread_mutex_unlock(&a->lock);
    return st;
}

amp_status amp_accelerator_default_view(amp_accelerator *a, amp_accelerator_view **out)
{
    if (!out) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_accelerator_default_view: out is NULL");
    *out = NULL;
    if (!a) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_accelerator_default_view: accelerator is NULL");
    return amp__default_view(a, out);
}

amp_status amp_accelerator_view_get_accelerator(amp_accelerator_view *q, amp_accelerator **out)
{
    if (!q || !out) {
        if (out) *out = NULL;
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_accelerator_view_get_accelerator: %s is NULL",
                         q ? "out" : "view");
    }
    *out = q->acc;
    return AMP_OK;
}

amp_status amp_accelerator_view_wait(amp_accelerator_view *q)
{
    if (!q) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_accelerator_view_wait: view is NULL");
    return q->acc->e.be->queue_wait(q->acc->e.dev, q->queue);
}

amp_status amp_accelerator_view_destroy(amp_accelerator_view *q)
{
    if (!q) return AMP_OK;
    if (q->is_default)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                         "amp_accelerator_view_destroy: %s's default view belongs to the library",
                         q->acc->e.info.device_path);
    /* Storages may still hold events of this queue (they retain it); the
     * queue itself goes when the last of those is released. */
    amp_status st = q->acc->e.be->queue_wait(q->acc->e.dev, q->queue);
    amp__view_release(q);
    return st;
}

void amp__view_release(amp_accelerator_view *q)
{
    if (!q || atomic_fetch_sub(&q->refs, 1) != 1) return;
    q->acc->e.be->queue_destroy(q->acc->e.dev, q->queue);
    free(q);
}

void amp__count_copy(amp_accelerator_view *q, amp__copy_dir dir, uint64_t bytes)
{
    if (dir == AMP__H2D) {
        atomic_fetch_add(&q->bytes_to_device, bytes);
        atomic_fetch_add(&q->copies_to_device, 1);
    } else if (dir == AMP__D2H) {
        atomic_fetch_add(&q->bytes_to_host, bytes);
        atomic_fetch_add(&q->copies_to_host, 1);
    }
}

amp_status amp_accelerator_view_get_stats(amp_accelerator_view *q, amp_stats *out)
{
    if (!q || !out) {
        if (out) memset(out, 0, sizeof *out);
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_accelerator_view_get_stats: %s is NULL",
                         q ? "out" : "view");
    }
    out->bytes_to_device = atomic_load(&q->bytes_to_device);
    out->copies_to_device = atomic_load(&q->copies_to_device);
    out->bytes_to_host = atomic_load(&q->bytes_to_host);
    out->copies_to_host = atomic_load(&q->copies_to_host);
    out->launches = atomic_load(&q->launches);
    return AMP_OK;
}

amp_status amp_accelerator_view_reset_stats(amp_accelerator_view *q)
{
    if (!q) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_accelerator_view_reset_stats: view is NULL");
    atomic_store(&q->bytes_to_device, 0);
    atomic_store(&q->copies_to_device, 0);
    atomic_store(&q->bytes_to_host, 0);
    atomic_store(&q->copies_to_host, 0);
    atomic_store(&q->launches, 0);
    return AMP_OK;
}

/* ----------------------------------------------------------------- events */

amp_status amp__event_record(amp_accelerator_view *q, amp__event **out)
{
    amp__event *e = calloc(1, sizeof *e);
    if (!e) {
        *out = NULL;
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "event: out of host memory");
    }
    atomic_init(&e->refs, 1);
    atomic_init(&e->ev, NULL);
    atomic_fetch_add(&q->refs, 1);
    e->q = q;
    *out = e;
    return AMP_OK;
}

/* The driver event of e, recorded now if nobody needed it before. Two
 * threads may race here: the loser releases its own record. */
static amp_status amp__event_handle(amp__event *e, void **ev)
{
    void *h = atomic_load(&e->ev);
    if (!h) {
        const amp__backend *be = e->q->acc->e.be;
        void *dev = e->q->acc->e.dev;
        amp_status st = be->event_record(dev, e->q->queue, &h);
        if (st != AMP_OK) return st;
        void *expected = NULL;
        if (!atomic_compare_exchange_strong(&e->ev, &expected, h)) {
            be->event_release(dev, h);
            h = expected;
        }
    }
    *ev = h;
    return AMP_OK;
}

amp__event *amp__event_retain(amp__event *e)
{
    if (e) atomic_fetch_add(&e->refs, 1);
    return e;
}

void amp__event_release(amp__event *e)
{
    if (!e || atomic_fetch_sub(&e->refs, 1) != 1) return;
    amp_accelerator *a = e->q->acc;
    void *h = atomic_load(&e->ev);
    if (h) a->e.be->event_release(a->e.dev, h);
    amp__view_release(e->q);
    free(e);
}

amp_status amp__event_wait(amp__event *e)
{
    if (!e) return AMP_OK;
    void *h;
    amp_status st = amp__event_handle(e, &h);
    if (st != AMP_OK) return st;
    return e->q->acc->e.be->event_wait(e->q->acc->e.dev, h);
}

amp_status amp__event_order(amp_accelerator_view *on, amp__event *e)
{
    if (!e || e->q == on) return AMP_OK; /* same queue: already in order */
    void *h;
    amp_status st = amp__event_handle(e, &h);
    if (st != AMP_OK) return st;
    return on->acc->e.be->queue_wait_event(on->acc->e.dev, on->queue, h);
}

amp_status amp__event_query(amp__event *e, bool *done)
{
    void *h;
    amp_status st = amp__event_handle(e, &h);
    if (st != AMP_OK) return st;
    return e->q->acc->e.be->event_query(e->q->acc->e.dev, h, done);
}
