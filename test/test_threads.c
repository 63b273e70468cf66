/* test_threads.c — host concurrency: 8 threads x 200 checked launches on their own views and queues, threads sharing the default queue and one kernel, two queues running at once, concurrent program builds. */
#include "support.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char test_kernels_threads[];


/* Worker threads must not call cr_assert: they record the first failure and
 * the main thread asserts. */
typedef struct worker {
    pthread_t th;
    int id;
    amp_accelerator *acc;
    amp_kernel *shared_kernel; /* NULL: build the program in the thread */
    bool own_queue;
    int launches, n;
    const char *source;
    int checked; /* launches whose result was checked and right */
    char err[512];
} worker;

#define TRY(w, call)                                                                        \
    do {                                                                                    \
        amp_status st_ = (call);                                                            \
        if (st_ != AMP_OK) {                                                                \
            snprintf((w)->err, sizeof (w)->err, "thread %d: %s -> %s: %s", (w)->id, #call,   \
                     amp_status_name(st_), amp_last_error());                               \
            goto out;                                                                       \
        }                                                                                   \
    } while (0)

/* thr_step: v = v * 3 + k + i, checked after every launch. */
static void *step_worker(void *arg)
{
    worker *w = arg;
    amp_accelerator_view *q = NULL;
    amp_program *p = NULL;
    amp_array_view *v = NULL;
    amp_kernel *k = w->shared_kernel;
    uint32_t *data = malloc((size_t)w->n * 4), *want = malloc((size_t)w->n * 4);
    if (!data || !want) {
        snprintf(w->err, sizeof w->err, "thread %d: malloc", w->id);
        goto out;
    }
    for (int i = 0; i < w->n; ++i) data[i] = want[i] = (uint32_t)(w->id * 100003 + i * 7 + 1);
    if (!k) {
        TRY(w, amp_program_build(w->acc, w->source, NULL, &p));
        TRY(w, amp_program_get_kernel(p, "thr_step", &k));
    }
    if (w->own_queue) TRY(w, amp_accelerator_view_create(w->acc, &q));
    TRY(w, amp_array_view_create(data, 4, amp_extent_1d(w->n), AMP_READ_WRITE, &v));
    for (int it = 0; it < w->launches; ++it) {
        uint32_t kk = (uint32_t)(w->id * 1000 + it);
        amp_arg a[] = {amp_arg_view(v), amp_arg_uint32(kk)};
        TRY(w, amp_parallel_for_each(q, amp_extent_1d(w->n), k, a, 2));
        TRY(w, amp_array_view_synchronize(v));
        for (int i = 0; i < w->n; ++i) {
            want[i] = want[i] * 3u + kk + (uint32_t)i;
            if (data[i] != want[i]) {
                snprintf(w->err, sizeof w->err,
                         "thread %d launch %d: element %d = 0x%08x, want 0x%08x", w->id, it, i,
                         data[i], want[i]);
                goto out;
            }
        }
        ++w->checked;
    }
out:
    if (v) amp_array_view_destroy(v);
    if (q) amp_accelerator_view_destroy(q);
    if (p) amp_program_destroy(p);
    free(data);
    free(want);
    return NULL;
}

static void run_workers(worker *w, int nw, void *(*fn)(void *))
{
    for (int i = 0; i < nw; ++i)
        cr_assert_eq(pthread_create(&w[i].th, NULL, fn, &w[i]), 0, "pthread_create");
    for (int i = 0; i < nw; ++i) pthread_join(w[i].th, NULL);
    for (int i = 0; i < nw; ++i) cr_assert_eq(w[i].err[0], '\0', "%s", w[i].err);
    for (int i = 0; i < nw; ++i)
        cr_assert_eq(w[i].checked, w[i].launches, "thread %d checked %d of %d launches", i,
                     w[i].checked, w[i].launches);
}

ACCEL_TEST(threads, eight_threads_200_launches_own_queues)
{
    enum { NW = 8 };
    /* build once here so the threads' builds hit the cache */
    amp_program *p = test_build(acc, test_kernels_threads);
    worker w[NW];
    memset(w, 0, sizeof w);
    for (int i = 0; i < NW; ++i) {
        w[i].id = i;
        w[i].acc = acc;
        w[i].own_queue = true;
        w[i].launches = 200;
        w[i].n = 64 + i;
        w[i].source = test_kernels_threads;
    }
    run_workers(w, NW, step_worker);
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TEST(threads, threads_share_default_queue_and_kernel)
{
    enum { NW = 4 };
    amp_program *p = test_build(acc, test_kernels_threads);
    amp_kernel *k = test_kernel(p, "thr_step");
    worker w[NW];
    memset(w, 0, sizeof w);
    for (int i = 0; i < NW; ++i) {
        w[i].id = i;
        w[i].acc = acc;
        w[i].shared_kernel = k;
        w[i].own_queue = false;
        w[i].launches = 100;
        w[i].n = 33 * (i + 1);
    }
    run_workers(w, NW, step_worker);
    ASSERT_OK(amp_program_destroy(p));
}

/* Each thread builds its own variant of the source (a different cache key),
 * all at once, then launches from it. */
ACCEL_TEST(threads, concurrent_builds)
{
    enum { NW = 3 };
    char *src[NW];
    size_t len = strlen(test_kernels_threads);
    worker w[NW];
    memset(w, 0, sizeof w);
    for (int i = 0; i < NW; ++i) {
        src[i] = malloc(len + 64);
        cr_assert_not_null(src[i]);
        snprintf(src[i], len + 64, "%s\n// concurrent build variant %d\n", test_kernels_threads, i);
        w[i].id = i;
        w[i].acc = acc;
        w[i].own_queue = true;
        w[i].launches = 3;
        w[i].n = 100;
        w[i].source = src[i];
    }
    run_workers(w, NW, step_worker);
    for (int i = 0; i < NW; ++i) free(src[i]);
}

/* Two threads, each with a longer kernel on its own queue. */
typedef struct slow_worker {
    pthread_t th;
    int id;
    amp_accelerator_view *q;
    amp_kernel *k;
    int n, iters;
    uint32_t seed;
    uint32_t *out;
    char err[512];
} slow_worker;

static void *slow_fn(void *arg)
{
    slow_worker *s = arg;
    amp_array_view *v = NULL;
    amp_status st = amp_array_view_create(s->out, 4, amp_extent_1d(s->n), AMP_WRITE_ONLY, &v);
    if (st == AMP_OK) {
        amp_arg a[] = {amp_arg_view(v), amp_arg_int32(s->iters), amp_arg_uint32(s->seed)};
        for (int r = 0; r < 3 && st == AMP_OK; ++r)
            st = amp_parallel_for_each(s->q, amp_extent_1d(s->n), s->k, a, 3);
        if (st == AMP_OK) st = amp_array_view_destroy(v);
        else amp_array_view_destroy(v);
    }
    if (st != AMP_OK)
        snprintf(s->err, sizeof s->err, "thread %d: %s: %s", s->id, amp_status_name(st),
                 amp_last_error());
    return NULL;
}

/* x -> x * 1664525 + 1013904223, n times, by doubling. */
static uint32_t lcg_n(uint32_t x, int n)
{
    uint32_t a = 1664525u, c = 1013904223u, ra = 1u, rc = 0u;
    for (unsigned m = (unsigned)n; m; m >>= 1) {
        if (m & 1) {
            ra *= a;
            rc = rc * a + c;
        }
        c = c * a + c;
        a *= a;
    }
    return ra * x + rc;
}

ACCEL_TEST(threads, two_queues_concurrently)
{
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    int iters = info.is_emulated ? 3000 : 200000;
    int n = info.is_emulated ? 4096 : 65536;
    amp_program *p = test_build(acc, test_kernels_threads);
    amp_kernel *k = test_kernel(p, "thr_slow");
    slow_worker s[2];
    memset(s, 0, sizeof s);
    for (int i = 0; i < 2; ++i) {
        s[i].id = i;
        ASSERT_OK(amp_accelerator_view_create(acc, &s[i].q));
        s[i].k = k;
        s[i].n = n;
        s[i].iters = iters + i;
        s[i].seed = 0xABCD0000u + (uint32_t)i;
        s[i].out = malloc((size_t)n * 4);
        cr_assert_not_null(s[i].out);
        for (int j = 0; j < n; ++j) s[i].out[j] = POISON_U32;
    }
    for (int i = 0; i < 2; ++i) cr_assert_eq(pthread_create(&s[i].th, NULL, slow_fn, &s[i]), 0);
    for (int i = 0; i < 2; ++i) pthread_join(s[i].th, NULL);
    for (int i = 0; i < 2; ++i) {
        cr_assert_eq(s[i].err[0], '\0', "%s", s[i].err);
        size_t bad = 0, first = 0;
        uint32_t fw = 0;
        for (int j = 0; j < n; ++j) {
            uint32_t want = lcg_n(s[i].seed ^ ((uint32_t)j * 2654435761u), s[i].iters);
            if (s[i].out[j] != want && bad++ == 0) { first = (size_t)j; fw = want; }
        }
        cr_assert_eq(bad, 0, "queue %d: %zu wrong; first element %zu: 0x%08x want 0x%08x", i, bad,
                     first, s[i].out[first], fw);
        ASSERT_OK(amp_accelerator_view_destroy(s[i].q));
        free(s[i].out);
    }
    ASSERT_OK(amp_program_destroy(p));
}

Test(threads, lcg_reference_self_check)
{
    uint32_t y = 777u;
    for (int i = 0; i < 12345; ++i) y = y * 1664525u + 1013904223u;
    cr_assert_eq(lcg_n(777u, 12345), y);
}
