/* test_handles.c — handle lifetimes: a view, array, queue (accelerator view), future or program used after its destroy, or destroyed twice, is AMP_ERROR_INVALID_ARGUMENT saying "destroyed" (also as a launch argument), with the tag check and with AMP_DEBUG=1's registry (which also catches a reused shell and a pointer that never was a handle; its quarantine reports a stale pointer until 4096 more of its kind were destroyed and keeps memory bounded); issue 21's calls (view shapes, element access, staging arrays, markers, flush, queuing modes) follow the same rules, and a continuation outlives its future's reused shell; launches from several threads racing amp_program_destroy run or say "stale", never touch freed memory; amp_program_get_kernel and graph recordings racing amp_program_destroy; amp_array_destroy racing amp_array_view_of_array keeps its BUSY promise; two destroys of one program racing. */
#include "support.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern const char test_kernels_handles[];

#define N 64

/* The host flag h_wait_flag spins on (test continuation_outlives_its_reused_future). */
static atomic_int then_flag_for_test;

static void debug_on(void) { setenv("AMP_DEBUG", "1", 1); }

/* ----------------------------------------------------------------- views */

static void view_after_destroy(amp_accelerator *acc)
{
    static int x[N], y[N];
    amp_program *p = test_build(acc, test_kernels_handles);
    amp_kernel *k = test_kernel(p, "h_step");
    amp_array_view *v = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *w = test_view(y, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *s = NULL;
    amp_arg a[] = {amp_arg_view(v), amp_arg_int32(1)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(N), k, a, 2));
    ASSERT_OK(amp_array_view_destroy(v));
    cr_assert_eq(x[5], 1, "the destroy synchronized the view: x[5] = %d", x[5]);

    amp_extent e;
    size_t es;
    int64_t strides[1];
    void *dptr = NULL;
    ASSERT_DESTROYED(amp_array_view_get_extent(v, &e));
    ASSERT_DESTROYED(amp_array_view_get_element_size(v, &es));
    ASSERT_DESTROYED(amp_array_view_get_strides(v, strides));
    ASSERT_DESTROYED(amp_array_view_synchronize(v));
    ASSERT_DESTROYED(amp_array_view_refresh(v));
    ASSERT_DESTROYED(amp_array_view_discard_data(v));
    ASSERT_DESTROYED(amp_array_view_section(v, amp_index_1d(0), amp_extent_1d(2), &s));
    cr_assert_null(s);
    ASSERT_DESTROYED(amp_array_view_project(v, 0, &s));
    ASSERT_DESTROYED(amp_array_view_native_handle(v, NULL, AMP_READ_ONLY, &dptr));
    cr_assert_null(dptr);
    cr_assert_null(amp_array_view_data(v), "data of a destroyed view");
    cr_assert(strstr(amp_last_error(), "destroyed"), "%s", amp_last_error());
    ASSERT_DESTROYED(amp_copy_view(v, w));
    ASSERT_DESTROYED(amp_copy_view(w, v));
    amp_future *f = NULL;
    ASSERT_DESTROYED(amp_copy_view_async(v, w, &f));
    cr_assert_null(f);
    /* As a launch argument: named with its parameter; nothing runs. */
    ASSERT_DESTROYED(amp_parallel_for_each(NULL, amp_extent_1d(N), k, a, 2));
    cr_assert(strstr(amp_last_error(), "parameter 0"), "%s", amp_last_error());
    ASSERT_DESTROYED(amp_parallel_for_each_async(NULL, amp_extent_1d(N), k, a, 2, &f));
    cr_assert_null(f);
    cr_assert_eq(x[5], 1, "a launch with a destroyed view ran: x[5] = %d", x[5]);
    /* Destroyed twice. */
    ASSERT_DESTROYED(amp_array_view_destroy(v));
    /* The other view is untouched by all this. */
    amp_arg b[] = {amp_arg_view(w), amp_arg_int32(2)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(N), k, b, 2));
    ASSERT_OK(amp_array_view_destroy(w));
    cr_assert_eq(y[7], 2, "y[7] = %d", y[7]);
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TEST(handles, view_after_destroy) { view_after_destroy(acc); }
ACCEL_TEST(handles, view_after_destroy_debug) { debug_on(); view_after_destroy(acc); }

/* ---------------------------------------------------------------- arrays */

static void array_after_destroy(amp_accelerator *acc)
{
    int host[N] = {0}, got[N];
    amp_program *p = test_build(acc, test_kernels_handles);
    amp_kernel *k = test_kernel(p, "h_arr_step");
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    amp_array *arr = NULL, *other = NULL;
    ASSERT_OK(amp_array_create(q, 4, amp_extent_1d(N), host, &arr));
    ASSERT_OK(amp_array_create(q, 4, amp_extent_1d(N), host, &other));
    amp_arg a[] = {amp_arg_array(arr), amp_arg_int32(3)};
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), k, a, 2));
    ASSERT_OK(amp_array_destroy(arr));

    amp_extent e;
    size_t es;
    void *dptr = NULL;
    amp_accelerator_view *aq = NULL;
    amp_array_view *av = NULL;
    amp_future *f = NULL;
    ASSERT_DESTROYED(amp_array_copy_to_host(arr, got));
    ASSERT_DESTROYED(amp_array_copy_from_host(arr, host));
    ASSERT_DESTROYED(amp_array_get_extent(arr, &e));
    ASSERT_DESTROYED(amp_array_get_element_size(arr, &es));
    ASSERT_DESTROYED(amp_array_get_accelerator_view(arr, &aq));
    cr_assert_null(aq);
    ASSERT_DESTROYED(amp_array_native_handle(arr, &dptr));
    cr_assert_null(dptr);
    ASSERT_DESTROYED(amp_array_view_of_array(arr, &av));
    cr_assert_null(av);
    ASSERT_DESTROYED(amp_copy_array(arr, other));
    ASSERT_DESTROYED(amp_copy_array(other, arr));
    ASSERT_DESTROYED(amp_copy_array_async(arr, other, &f));
    cr_assert_null(f);
    ASSERT_DESTROYED(amp_parallel_for_each(q, amp_extent_1d(N), k, a, 2));
    cr_assert(strstr(amp_last_error(), "parameter 0"), "%s", amp_last_error());
    ASSERT_DESTROYED(amp_array_destroy(arr));
    /* An array is not a view, and the message says what it is. */
    ASSERT_STATUS(amp_array_view_synchronize((amp_array_view *)(void *)other), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "is an amp_array, not an amp_array_view"), "%s", amp_last_error());
    ASSERT_OK(amp_array_copy_to_host(other, got));
    for (int i = 0; i < N; ++i) cr_assert_eq(got[i], 0, "a copy from the destroyed array reached other[%d] = %d", i, got[i]);
    ASSERT_OK(amp_array_destroy(other));
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TEST(handles, array_after_destroy) { array_after_destroy(acc); }
ACCEL_TEST(handles, array_after_destroy_debug) { debug_on(); array_after_destroy(acc); }

/* ---------------------------------------------------------------- queues */

static void queue_after_destroy(amp_accelerator *acc)
{
    int host[N] = {0}, got[N];
    amp_program *p = test_build(acc, test_kernels_handles);
    amp_kernel *k = test_kernel(p, "h_arr_step");
    amp_accelerator_view *q = NULL, *dq = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    /* An array made on q keeps the queue itself alive after the handle
     * goes; the handle is still ended. */
    amp_array *arr = NULL, *tmp = NULL;
    ASSERT_OK(amp_array_create(q, 4, amp_extent_1d(N), host, &arr));
    ASSERT_OK(amp_accelerator_view_destroy(q));

    amp_stats stats;
    amp_accelerator *a = NULL;
    void *native = NULL;
    ASSERT_DESTROYED(amp_accelerator_view_wait(q));
    ASSERT_DESTROYED(amp_accelerator_view_get_stats(q, &stats));
    ASSERT_DESTROYED(amp_accelerator_view_reset_stats(q));
    ASSERT_DESTROYED(amp_accelerator_view_get_accelerator(q, &a));
    cr_assert_null(a);
    ASSERT_DESTROYED(amp_accelerator_view_native_queue(q, &native));
    ASSERT_DESTROYED(amp_array_create(q, 4, amp_extent_1d(N), NULL, &tmp));
    cr_assert_null(tmp);
    ASSERT_DESTROYED(amp_array_create_from_native(q, host, 4, amp_extent_1d(N), &tmp));
    cr_assert_null(tmp);
    amp_arg args[] = {amp_arg_array(arr), amp_arg_int32(1)};
    ASSERT_DESTROYED(amp_parallel_for_each(q, amp_extent_1d(N), k, args, 2));
    ASSERT_DESTROYED(amp_accelerator_view_destroy(q));
    /* The array still works: its copies run on the queue it holds. */
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(N), k, args, 2));
    ASSERT_OK(amp_array_copy_to_host(arr, got));
    cr_assert_eq(got[3], 1, "got[3] = %d", got[3]);
    ASSERT_OK(amp_array_destroy(arr));
    /* A default view is the library's: never destroyed, and still there. */
    ASSERT_OK(amp_accelerator_default_view(acc, &dq));
    ASSERT_STATUS(amp_accelerator_view_destroy(dq), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_accelerator_view_wait(dq));
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TEST(handles, queue_after_destroy) { queue_after_destroy(acc); }
ACCEL_TEST(handles, queue_after_destroy_debug) { debug_on(); queue_after_destroy(acc); }

/* --------------------------------------------------------------- futures */

static void future_after_destroy(amp_accelerator *acc)
{
    static int x[N];
    amp_program *p = test_build(acc, test_kernels_handles);
    amp_kernel *k = test_kernel(p, "h_step");
    amp_array_view *v = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v), amp_arg_int32(1)};
    amp_future *f = NULL;
    ASSERT_OK(amp_parallel_for_each_async(NULL, amp_extent_1d(N), k, a, 2, &f));
    ASSERT_OK(amp_future_wait(f));
    ASSERT_OK(amp_future_destroy(f));
    bool done = true;
    double ms = 1;
    ASSERT_DESTROYED(amp_future_wait(f));
    ASSERT_DESTROYED(amp_future_is_ready(f, &done));
    cr_assert(!done, "done cleared on failure");
    ASSERT_DESTROYED(amp_future_elapsed_ms(f, &ms));
    cr_assert_eq(ms, 0.0);
    ASSERT_DESTROYED(amp_future_destroy(f));
    /* A future of a copy, the same. */
    static int y[N];
    amp_array_view *w = test_view(y, 4, amp_extent_1d(N), AMP_READ_WRITE);
    ASSERT_OK(amp_copy_view_async(v, w, &f));
    ASSERT_OK(amp_future_destroy(f));
    ASSERT_DESTROYED(amp_future_wait(f));
    ASSERT_DESTROYED(amp_future_destroy(f));
    ASSERT_OK(amp_array_view_destroy(w));
    cr_assert_eq(y[9], 1, "the copy landed: y[9] = %d", y[9]);
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TEST(handles, future_after_destroy) { future_after_destroy(acc); }
ACCEL_TEST(handles, future_after_destroy_debug) { debug_on(); future_after_destroy(acc); }

/* -------------------------------------------------------------- programs */

static void program_after_destroy(amp_accelerator *acc)
{
    amp_program *p = test_build(acc, test_kernels_handles);
    amp_kernel *k = test_kernel(p, "h_step");
    ASSERT_OK(amp_program_destroy(p));
    amp_kernel *k2 = NULL;
    ASSERT_DESTROYED(amp_program_get_kernel(p, "h_step", &k2));
    cr_assert_null(k2);
    ASSERT_DESTROYED(amp_program_destroy(p));
    amp_kernel_info info;
    ASSERT_STATUS(amp_kernel_get_info(k, &info), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "stale"), "%s", amp_last_error());
}

ACCEL_TEST(handles, program_after_destroy) { program_after_destroy(acc); }
ACCEL_TEST(handles, program_after_destroy_debug) { debug_on(); program_after_destroy(acc); }

/* ---------------------------------------- issue 21's calls, the same rules */

/* The view shapes (reinterpret_as, view_as, read_only, duplicate), element
 * access and synchronize_async refuse a destroyed view; the views they make
 * are handles of their own: destroying one leaves the others working, and
 * each is refused after its destroy and destroyed twice. */
static void view_shapes_after_destroy(amp_accelerator *acc)
{
    static int x[N];
    memset(x, 0, sizeof x);
    amp_program *p = test_build(acc, test_kernels_handles);
    amp_kernel *k = test_kernel(p, "h_step");
    amp_array_view *v = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *dup = NULL, *ro = NULL, *re = NULL, *as = NULL, *s = NULL;
    ASSERT_OK(amp_array_view_duplicate(v, &dup));
    ASSERT_OK(amp_array_view_read_only(v, &ro));
    ASSERT_OK(amp_array_view_reinterpret_as(v, 8, &re));
    ASSERT_OK(amp_array_view_view_as(v, amp_extent_2d(8, 8), &as));
    amp_future *f = NULL;
    int one = 1, got = -1;

    /* A derived view destroyed: refused by every call, and as an argument. */
    amp_array_view *derived[] = {dup, ro, re, as};
    for (size_t d = 0; d < sizeof derived / sizeof derived[0]; ++d) {
        amp_array_view *w = derived[d];
        ASSERT_OK(amp_array_view_destroy(w));
        ASSERT_DESTROYED(amp_array_view_synchronize(w));
        long long wide[2] = {-1, -1}; /* room for re's 8-byte element */
        ASSERT_DESTROYED(amp_array_view_get(w, amp_index_1d(0), wide));
        cr_assert_eq(wide[0], -1, "a get of a destroyed view wrote its output");
        ASSERT_DESTROYED(amp_array_view_duplicate(w, &s));
        cr_assert_null(s);
        amp_arg a[] = {amp_arg_view(w), amp_arg_int32(1)};
        ASSERT_DESTROYED(amp_parallel_for_each(NULL, amp_extent_1d(N), k, a, 2));
        ASSERT_DESTROYED(amp_array_view_destroy(w));
    }
    /* The original still works after all its derived views went. */
    amp_arg a[] = {amp_arg_view(v), amp_arg_int32(1)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(N), k, a, 2));
    ASSERT_OK(amp_array_view_get(v, amp_index_1d(5), &got));
    cr_assert_eq(got, 1, "x[5] through the view: %d", got);
    ASSERT_OK(amp_array_view_destroy(v));

    /* The original destroyed: every issue 21 call on it is refused. */
    ASSERT_DESTROYED(amp_array_view_duplicate(v, &s));
    cr_assert_null(s);
    ASSERT_DESTROYED(amp_array_view_read_only(v, &s));
    cr_assert_null(s);
    ASSERT_DESTROYED(amp_array_view_reinterpret_as(v, 8, &s));
    cr_assert_null(s);
    ASSERT_DESTROYED(amp_array_view_view_as(v, amp_extent_2d(8, 8), &s));
    cr_assert_null(s);
    got = -1;
    ASSERT_DESTROYED(amp_array_view_get(v, amp_index_1d(5), &got));
    cr_assert_eq(got, -1, "a get of a destroyed view wrote its output");
    int forty_two = 42;
    ASSERT_DESTROYED(amp_array_view_set(v, amp_index_1d(5), &forty_two));
    cr_assert_eq(x[5], 1, "a set through a destroyed view wrote: x[5] = %d", x[5]);
    ASSERT_DESTROYED(amp_array_view_synchronize_async(v, &f));
    cr_assert_null(f);
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TEST(handles, view_shapes_after_destroy) { view_shapes_after_destroy(acc); }
ACCEL_TEST(handles, view_shapes_after_destroy_debug) { debug_on(); view_shapes_after_destroy(acc); }

/* amp_array_data, staging arrays and the queue calls of issue 21 (markers,
 * flush, queuing modes) refuse destroyed handles; a marker is a future
 * like any other. */
static void staging_and_queue_calls_after_destroy(amp_accelerator *acc)
{
    int host[N] = {0};
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create_with_mode(acc, AMP_QUEUING_IMMEDIATE, &q));
    amp_array *st = NULL, *tmp = NULL;
    ASSERT_OK(amp_array_create_staging(q, 4, amp_extent_1d(N), host, &st));
    cr_assert_not_null(amp_array_data(st), "a staging array's data: %s", amp_last_error());
    ASSERT_OK(amp_array_destroy(st));
    cr_assert_null(amp_array_data(st), "data of a destroyed array");
    cr_assert(strstr(amp_last_error(), "destroyed"), "%s", amp_last_error());
    cr_assert_null(amp_array_view_data(NULL));
    cr_assert(strstr(amp_last_error(), "amp_array_view_data: v is NULL"), "%s", amp_last_error());
    cr_assert_null(amp_array_data(NULL));
    cr_assert(strstr(amp_last_error(), "amp_array_data: a is NULL"), "%s", amp_last_error());
    ASSERT_DESTROYED(amp_array_copy_to_host(st, host));
    ASSERT_DESTROYED(amp_array_destroy(st));

    amp_future *m = NULL;
    ASSERT_OK(amp_accelerator_view_create_marker(q, &m));
    ASSERT_OK(amp_future_wait(m));
    ASSERT_OK(amp_future_destroy(m));
    ASSERT_DESTROYED(amp_future_wait(m));
    ASSERT_DESTROYED(amp_future_then(m, NULL, NULL));
    ASSERT_DESTROYED(amp_future_destroy(m));

    ASSERT_OK(amp_accelerator_view_destroy(q));
    amp_queuing_mode mode = AMP_QUEUING_IMMEDIATE;
    m = NULL;
    ASSERT_DESTROYED(amp_accelerator_view_get_queuing_mode(q, &mode));
    cr_assert_eq(mode, AMP_QUEUING_AUTOMATIC, "the mode is cleared on failure");
    ASSERT_DESTROYED(amp_accelerator_view_flush(q));
    ASSERT_DESTROYED(amp_accelerator_view_create_marker(q, &m));
    cr_assert_null(m);
    ASSERT_DESTROYED(amp_array_create_staging(q, 4, amp_extent_1d(N), NULL, &tmp));
    cr_assert_null(tmp);
    ASSERT_DESTROYED(amp_accelerator_view_destroy(q));
}

ACCEL_TEST(handles, staging_and_queue_calls_after_destroy) { staging_and_queue_calls_after_destroy(acc); }
ACCEL_TEST(handles, staging_and_queue_calls_after_destroy_debug)
{
    debug_on();
    staging_and_queue_calls_after_destroy(acc);
}

/* A continuation outlives its future: amp_future_then on a kernel held by
 * a host flag, the future destroyed at once and its shell reused by new
 * futures of finished work. The callback must still wait for the held
 * kernel (it never reads the future, whose shell now says "done"), and
 * then report the kernel's status. */
typedef struct then_seen {
    atomic_int calls;
    atomic_int flag_when_called;
    amp_status st;
} then_seen;

static void then_record(amp_status st, void *user)
{
    then_seen *t = user;
    t->st = st;
    atomic_store(&t->flag_when_called, atomic_load(&then_flag_for_test));
    atomic_fetch_add(&t->calls, 1);
}

Test(handles, continuation_outlives_its_reused_future, .timeout = 120)
{
    setenv("AMP_DEBUG", "0", 1); /* AMP_DEBUG's quarantine keeps shells from reuse */
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_program *p = test_build(acc, test_kernels_handles);
    amp_kernel *k = test_kernel(p, "h_wait_flag");
    amp_accelerator_view *q = NULL, *idle = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    ASSERT_OK(amp_accelerator_view_create(acc, &idle));
    atomic_store(&then_flag_for_test, 0);
    int out[1] = {0};
    amp_array_view *v = test_view(out, 4, amp_extent_1d(1), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v), amp_arg_uint64((uint64_t)(uintptr_t)&then_flag_for_test)};
    amp_future *f = NULL;
    ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(1), k, a, 2, &f));
    static then_seen seen;
    atomic_init(&seen.calls, 0);
    atomic_init(&seen.flag_when_called, -1);
    ASSERT_OK(amp_future_then(f, then_record, &seen));
    amp_future *old = f;
    ASSERT_OK(amp_future_destroy(f));
    /* New futures of finished work take the freed shell (tags make a
     * destroyed future's shell reusable). */
    amp_future *reused[8] = {NULL};
    bool took = false;
    for (int i = 0; i < 8; ++i) {
        ASSERT_OK(amp_accelerator_view_create_marker(idle, &reused[i]));
        took |= reused[i] == old;
    }
    cr_assert(took, "no new future reused the destroyed one's shell");
    /* The continuation thread polls every 2 ms at most: give it many
     * rounds to go wrong. */
    nanosleep(&(struct timespec){0, 100 * 1000000L}, NULL);
    cr_assert_eq(atomic_load(&seen.calls), 0, "the continuation ran while its kernel was still held");
    atomic_store(&then_flag_for_test, 1);
    for (int i = 0; i < 60000 && atomic_load(&seen.calls) == 0; ++i)
        nanosleep(&(struct timespec){0, 1000000L}, NULL);
    cr_assert_eq(atomic_load(&seen.calls), 1, "the continuation ran %d times", atomic_load(&seen.calls));
    cr_assert_eq(atomic_load(&seen.flag_when_called), 1, "the continuation ran before its kernel was released");
    ASSERT_OK(seen.st);
    for (int i = 0; i < 8; ++i) ASSERT_OK(amp_future_destroy(reused[i]));
    ASSERT_OK(amp_array_view_destroy(v));
    cr_assert_eq(out[0], 1);
    ASSERT_OK(amp_accelerator_view_destroy(idle));
    ASSERT_OK(amp_accelerator_view_destroy(q));
    ASSERT_OK(amp_program_destroy(p));
}

/* --------------------------------------------------- what AMP_DEBUG adds */

/* Without AMP_DEBUG a destroyed shell is reused by the next handle of its
 * kind (a stale pointer then reaches that handle); with it, not before 4096
 * more of its kind were destroyed (the next test), and the registry knows
 * every handle made, so a pointer that never was one is named so without
 * being read. */
Test(handles, debug_catches_reused_shells_and_foreign_pointers)
{
    debug_on();
    int x[N] = {0};
    amp_array_view *first = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE);
    ASSERT_OK(amp_array_view_destroy(first));
    for (int i = 0; i < 200; ++i) {
        amp_array_view *v = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE);
        cr_assert_neq(v, first, "AMP_DEBUG=1 reused a destroyed view's memory");
        ASSERT_DESTROYED(amp_array_view_synchronize(first));
        ASSERT_OK(amp_array_view_synchronize(v));
        ASSERT_OK(amp_array_view_destroy(v));
    }
    /* Never a handle: memory that merely looks like one (a copy of a live
     * view's first bytes) is not read as one. */
    amp_array_view *live = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE);
    _Alignas(64) unsigned char fake[256];
    memcpy(fake, (void *)live, sizeof fake);
    ASSERT_STATUS(amp_array_view_synchronize((amp_array_view *)(void *)fake), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "no amp_array_view this process made"), "%s", amp_last_error());
    ASSERT_OK(amp_array_view_destroy(live));
}

/* AMP_DEBUG=1 keeps a destroyed shell from reuse until 4096 more of its
 * kind were destroyed (lib/core/handle.c's quarantine): a stale pointer is
 * reported all that while; after it the shell is reused, so that making
 * and destroying handles without end does not grow the heap (before the
 * quarantine every shell and registry entry was kept: about 300 bytes a
 * view). */
Test(handles, debug_quarantine_reports_a_window_and_bounds_memory)
{
    enum { WINDOW = 4096 };
    debug_on();
    int x[N] = {0};
    amp_array_view *first = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE);
    ASSERT_OK(amp_array_view_destroy(first));
    for (int i = 0; i < WINDOW - 1; ++i) {
        amp_array_view *v = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE);
        cr_assert_neq(v, first, "view %d reused the first one's shell inside the quarantine", i);
        ASSERT_OK(amp_array_view_destroy(v));
    }
    ASSERT_DESTROYED(amp_array_view_synchronize(first));
    ASSERT_DESTROYED(amp_array_view_destroy(first));
    /* The quarantine is full from here on: every destroy lets one shell go
     * back to its pool. */
    size_t heap0 = test_heap_in_use();
    for (int i = 0; i < 5 * WINDOW; ++i) {
        amp_array_view *v = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE);
        ASSERT_OK(amp_array_view_destroy(v));
    }
    size_t heap1 = test_heap_in_use();
    cr_assert_lt((long)heap1 - (long)heap0, 8192, "heap grew by %ld bytes over %d views made and destroyed",
                 (long)heap1 - (long)heap0, 5 * WINDOW);
}

Test(handles, a_pointer_that_never_was_a_handle)
{
    _Alignas(64) uint32_t zero[32] = {0};
    ASSERT_STATUS(amp_array_view_synchronize((amp_array_view *)(void *)zero), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "amp_array_view"), "%s", amp_last_error());
    ASSERT_STATUS(amp_future_wait((amp_future *)(void *)zero), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "amp_future"), "%s", amp_last_error());
}

/* Many handles made and destroyed: shells are reused (no growth without
 * bound) and each new handle starts zeroed and working. */
Test(handles, shells_are_reused_and_clean)
{
    setenv("AMP_DEBUG", "0", 1); /* AMP_DEBUG's quarantine keeps shells from reuse */
    int x[N];
    amp_array_view *seen[4] = {NULL};
    int reused = 0;
    for (int i = 0; i < 2000; ++i) {
        for (int j = 0; j < N; ++j) x[j] = i;
        amp_array_view *v = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE);
        for (int s = 0; s < 4; ++s) reused += seen[s] == v;
        seen[i % 4] = v;
        amp_extent e;
        ASSERT_OK(amp_array_view_get_extent(v, &e));
        cr_assert(amp_extent_equal(e, amp_extent_1d(N)));
        cr_assert_eq(((int *)amp_array_view_data(v))[3], i);
        ASSERT_OK(amp_array_view_destroy(v));
    }
    cr_assert_gt(reused, 1000, "destroyed views' shells were reused %d times in 2000", reused);
}

/* amp_array_view_of_array racing amp_array_destroy: a view made before
 * the destroy counts makes it BUSY, one asked for after is refused as of
 * a destroyed array; the destroy never succeeds while a view of the array
 * exists (before, a view could slip in between the count and the end).
 *
 * Each round has a generation: the main thread counts it up, then creates
 * the round's array (so a view the racer makes of a reused shell is seen
 * as another round's: the generation moved), and sets ended to it once
 * the destroy succeeded. The racer holds each view it made for a while
 * and then asks whether the destroy of its round succeeded meanwhile: that
 * can only be an escape, since while the view exists the destroy must say
 * BUSY. */
typedef struct array_racer {
    _Atomic(amp_array *) a;
    atomic_long gen, ended;
    atomic_int stop;
    atomic_long tries, escaped;
    long views;
} array_racer;

static void *race_views_of_array(void *arg)
{
    array_racer *r = arg;
    while (!atomic_load(&r->stop)) {
        const long g = atomic_load(&r->gen);
        amp_array *a = atomic_load(&r->a);
        if (!a || atomic_load(&r->gen) != g) {
            atomic_fetch_add(&r->tries, 1);
            continue;
        }
        amp_array_view *v = NULL;
        amp_status st = amp_array_view_of_array(a, &v);
        atomic_fetch_add(&r->tries, 1);
        if (st != AMP_OK) continue;
        if (atomic_load(&r->gen) == g) {
            /* Held 50 us: long beside the destroy's own few. */
            double t0 = test_now_s();
            while (test_now_s() - t0 < 50e-6) sched_yield();
            if (atomic_load(&r->ended) == g) atomic_fetch_add(&r->escaped, 1);
            ++r->views;
        }
        amp_array_view_destroy(v);
    }
    return NULL;
}

ACCEL_TEST(handles, array_destroy_racing_views_of_it, .timeout = 120)
{
    static array_racer r;
    memset(&r, 0, sizeof r);
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, race_views_of_array, &r), 0);
    long busy = 0;
    /* 20000 rounds or 1 s, whichever ends first (a loaded machine; without
     * the fix the race showed within a few hundred rounds). */
    double t0 = test_now_s();
    for (int round = 0; round < 20000 && test_now_s() - t0 < 1.0; ++round) {
        const long g = atomic_fetch_add(&r.gen, 1) + 1;
        amp_array *a = NULL;
        ASSERT_OK(amp_array_create(q, 4, amp_extent_1d(N), NULL, &a));
        long tries = atomic_load(&r.tries);
        atomic_store(&r.a, a);
        /* The racer is at work on this array when the destroy begins. */
        while (atomic_load(&r.tries) < tries + 2) sched_yield();
        amp_status st;
        while ((st = amp_array_destroy(a)) == AMP_ERROR_BUSY) ++busy;
        cr_assert_eq(st, AMP_OK, "round %d: %s", round, amp_last_error());
        atomic_store(&r.ended, g);
        atomic_store(&r.a, NULL);
    }
    atomic_store(&r.stop, 1);
    pthread_join(th, NULL);
    cr_assert_eq(atomic_load(&r.escaped), 0, "amp_array_destroy succeeded %ld times while a view of its array existed",
                 atomic_load(&r.escaped));
    cr_assert_gt(r.views, 0, "the racer never held a view of an array (%ld tries)", atomic_load(&r.tries));
    cr_log_info("%ld views held, destroy busy %ld times", r.views, busy);
}

/* --------------------------------------------- launches racing a destroy */

/* Threads launch a kernel (synchronously, asynchronously, or asking its
 * information) as fast as they can while the main thread destroys its
 * program; the in-memory cache is dropped first, so that the destroy also
 * unloads the module. Every call either works or says "stale"; nothing
 * runs on freed memory or unloaded code (ASan, and the results, check). */
typedef struct racer {
    pthread_t th;
    int id;
    amp_accelerator *acc;
    amp_kernel *k;
    atomic_long calls;
    long ok;
    int x[1];
    char err[512];
} racer;

static void *race_launches(void *arg)
{
    racer *r = arg;
    amp_accelerator_view *q = NULL;
    amp_array_view *v = NULL;
    amp_status st = amp_accelerator_view_create(r->acc, &q);
    if (st == AMP_OK) st = amp_array_view_create(r->x, sizeof r->x[0], amp_extent_1d(1), AMP_READ_WRITE, &v);
    if (st != AMP_OK) {
        snprintf(r->err, sizeof r->err, "set-up: %s: %s", amp_status_name(st), amp_last_error());
        atomic_store(&r->calls, 1L << 30);
        return NULL;
    }
    amp_arg a[] = {amp_arg_view(v), amp_arg_int32(1)};
    for (;;) {
        amp_future *f = NULL;
        amp_kernel_info info;
        int mode = r->id % 3;
        if (mode == 0) st = amp_parallel_for_each(q, amp_extent_1d(1), r->k, a, 2);
        else if (mode == 1) st = amp_parallel_for_each_async(q, amp_extent_1d(1), r->k, a, 2, &f);
        else st = amp_kernel_get_info(r->k, &info);
        if (f) {
            amp_status w = amp_future_wait(f);
            amp_future_destroy(f);
            if (w != AMP_OK) st = w;
        }
        atomic_fetch_add(&r->calls, 1);
        if (st == AMP_OK) {
            r->ok += mode != 2;
            if (mode == 2 && strcmp(info.name, "h_step")) {
                snprintf(r->err, sizeof r->err, "kernel info names '%s'", info.name);
                break;
            }
            continue;
        }
        if (st != AMP_ERROR_INVALID_ARGUMENT || !strstr(amp_last_error(), "stale"))
            snprintf(r->err, sizeof r->err, "%s: %s", amp_status_name(st), amp_last_error());
        break;
    }
    st = amp_array_view_destroy(v);
    if (st == AMP_OK && r->x[0] != r->ok && !r->err[0])
        snprintf(r->err, sizeof r->err, "%ld launches ran but the view holds %d", r->ok, r->x[0]);
    amp_accelerator_view_destroy(q);
    return NULL;
}

ACCEL_TEST(handles, launches_racing_program_destroy, .timeout = 300)
{
    enum { THREADS = 6, ROUNDS = 8 };
    for (int round = 0; round < ROUNDS; ++round) {
        amp_program *p = test_build(acc, test_kernels_handles);
        amp_kernel *k = test_kernel(p, "h_step");
        ASSERT_OK(amp_cache_clear_memory()); /* the program holds the module's last reference */
        static racer r[THREADS];
        for (int i = 0; i < THREADS; ++i) {
            memset(&r[i], 0, sizeof r[i]);
            r[i].id = i;
            r[i].acc = acc;
            r[i].k = k;
            atomic_init(&r[i].calls, 0);
            cr_assert_eq(pthread_create(&r[i].th, NULL, race_launches, &r[i]), 0);
        }
        /* Destroy while every thread is busy calling (bounded wait). */
        struct timespec t0, now;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int i = 0; i < THREADS; ++i)
            while (atomic_load(&r[i].calls) < 10 + round) {
                clock_gettime(CLOCK_MONOTONIC, &now);
                cr_assert_lt(now.tv_sec - t0.tv_sec, 120, "thread %d made only %ld calls in 120 s", i,
                             atomic_load(&r[i].calls));
                nanosleep(&(struct timespec){0, 100000}, NULL);
            }
        ASSERT_OK(amp_program_destroy(p));
        for (int i = 0; i < THREADS; ++i) {
            pthread_join(r[i].th, NULL);
            cr_assert_eq(r[i].err[0], 0, "round %d thread %d: %s", round, i, r[i].err);
        }
    }
}

/* Two threads destroying one program at once: one succeeds, the other is
 * told the program is destroyed (or being destroyed), and neither reads
 * what the other freed. The second is held between its handle check and
 * the program's lock (this file's pthread_mutex_lock sleeps once in a
 * thread that asks it to: a preemption there on a loaded machine). Before,
 * it then read the first's freed kernel list (a heap-use-after-free under
 * ASan) and closed the freed kernels' graph pins for good, so that a later
 * program's kernel at the same address could not be recorded. */
static _Thread_local int lock_delay_us;

int pthread_mutex_lock(pthread_mutex_t *m)
{
    static int (*_Atomic real_lock)(pthread_mutex_t *); /* found once by whichever thread locks first */
    int (*real)(pthread_mutex_t *) = atomic_load_explicit(&real_lock, memory_order_relaxed);
    if (!real) {
        real = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock");
        atomic_store_explicit(&real_lock, real, memory_order_relaxed);
    }
    if (lock_delay_us) {
        int us = lock_delay_us;
        lock_delay_us = 0;
        nanosleep(&(struct timespec){0, 1000L * us}, NULL);
    }
    return real(m);
}

typedef struct destroy_racer {
    amp_program *p;
    pthread_barrier_t start;
    amp_status st;
    char err[256];
} destroy_racer;

static void *destroy_late(void *arg)
{
    destroy_racer *r = arg;
    pthread_barrier_wait(&r->start);
    lock_delay_us = 50000;
    r->st = amp_program_destroy(r->p);
    lock_delay_us = 0;
    snprintf(r->err, sizeof r->err, "%s", r->st == AMP_OK ? "" : amp_last_error());
    return NULL;
}

ACCEL_TEST(handles, two_destroys_of_one_program, .timeout = 120)
{
    static int data[64];
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    amp_array_view *v = test_view(data, 4, amp_extent_1d(64), AMP_READ_WRITE);
    for (int round = 0; round < 4; ++round) {
        static destroy_racer r;
        memset(&r, 0, sizeof r);
        r.p = test_build(acc, test_kernels_handles);
        (void)test_kernel(r.p, "h_step");
        (void)test_kernel(r.p, "h_arr_step");
        pthread_barrier_init(&r.start, NULL, 2);
        pthread_t th;
        cr_assert_eq(pthread_create(&th, NULL, destroy_late, &r), 0);
        pthread_barrier_wait(&r.start);
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL); /* the other is in its sleep */
        amp_status st = amp_program_destroy(r.p);
        char err[256];
        snprintf(err, sizeof err, "%s", st == AMP_OK ? "" : amp_last_error());
        pthread_join(th, NULL);
        pthread_barrier_destroy(&r.start);
        cr_assert((st == AMP_OK) != (r.st == AMP_OK), "round %d: both %s (%s / %s)", round,
                  st == AMP_OK ? "succeeded" : "failed", err, r.err);
        const char *lost = st == AMP_OK ? r.err : err;
        cr_assert(strstr(lost, "destroyed"), "round %d: the losing destroy said: %s", round, lost);
        /* A new program's kernels (at the freed ones' addresses, likely)
         * record as any. */
        amp_program *p = test_build(acc, test_kernels_handles);
        amp_kernel *k = test_kernel(p, "h_step");
        (void)test_kernel(p, "h_arr_step");
        amp_arg a[] = {amp_arg_view(v), amp_arg_int32(1)};
        ASSERT_OK(amp_graph_begin_recording(q));
        st = amp_parallel_for_each(q, amp_extent_1d(64), k, a, 2);
        snprintf(err, sizeof err, "%s", st == AMP_OK ? "" : amp_last_error());
        amp_graph *g = NULL;
        ASSERT_OK(amp_graph_end_recording(q, &g));
        cr_assert_eq(st, AMP_OK, "round %d: recording a live program's kernel: %s", round, err);
        ASSERT_OK(amp_graph_destroy(g));
        ASSERT_OK(amp_program_destroy(p));
    }
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_accelerator_view_destroy(q));
}

/* amp_program_get_kernel and graph recordings racing amp_program_destroy
 * (the destroy is allowed to race launches of its kernels): a get_kernel
 * either returns a kernel of the live program or fails (stale, or "being
 * destroyed"), never adds to a freed list (a heap-use-after-free under
 * ASan before); a recording either pinned the kernel first, and the
 * destroy says AMP_ERROR_BUSY until its graph is gone, or fails, never
 * keeps a kernel the destroy then freed (a replay of such a graph read
 * freed memory). */
typedef struct pin_racer {
    amp_accelerator *acc;
    amp_accelerator_view *q;
    amp_array_view *v;
    _Atomic(amp_kernel *) k;
    _Atomic(amp_program *) p;
    atomic_int stop;
    long recorded, stale_graphs, got;
    char err[512];
} pin_racer;

static void *race_get_kernel(void *arg)
{
    pin_racer *r = arg;
    while (!atomic_load(&r->stop)) {
        amp_program *p = atomic_load(&r->p);
        amp_kernel *k = NULL;
        if (p && amp_program_get_kernel(p, "h_arr_step", &k) == AMP_OK) ++r->got;
    }
    return NULL;
}

static void *race_record(void *arg)
{
    pin_racer *r = arg;
    while (!atomic_load(&r->stop) && !r->err[0]) {
        amp_kernel *k = atomic_load(&r->k);
        if (!k) continue;
        if (amp_graph_begin_recording(r->q) != AMP_OK) {
            snprintf(r->err, sizeof r->err, "begin: %s", amp_last_error());
            break;
        }
        amp_arg a[] = {amp_arg_view(r->v), amp_arg_int32(1)};
        amp_status st = amp_parallel_for_each(r->q, amp_extent_1d(64), k, a, 2);
        amp_graph *g = NULL;
        if (amp_graph_end_recording(r->q, &g) != AMP_OK) {
            snprintf(r->err, sizeof r->err, "end: %s", amp_last_error());
            break;
        }
        amp_kernel_info info;
        if (st == AMP_OK) {
            ++r->recorded;
            /* The graph pins the kernel: its program cannot be gone. */
            if (amp_kernel_get_info(k, &info) != AMP_OK) ++r->stale_graphs;
        }
        amp_graph_destroy(g);
    }
    return NULL;
}

ACCEL_TEST(handles, get_kernel_and_recordings_racing_program_destroy, .timeout = 300)
{
    enum { ROUNDS = 150 };
    static int data[64];
    static pin_racer r;
    memset(&r, 0, sizeof r);
    r.acc = acc;
    ASSERT_OK(amp_accelerator_view_create(acc, &r.q));
    r.v = test_view(data, 4, amp_extent_1d(64), AMP_READ_WRITE);
    pthread_t getter, recorder;
    cr_assert_eq(pthread_create(&getter, NULL, race_get_kernel, &r), 0);
    cr_assert_eq(pthread_create(&recorder, NULL, race_record, &r), 0);
    long busy = 0;
    for (int round = 0; round < ROUNDS && !r.err[0]; ++round) {
        amp_program *p = test_build(acc, test_kernels_handles);
        atomic_store(&r.k, test_kernel(p, "h_step"));
        atomic_store(&r.p, p);
        nanosleep(&(struct timespec){0, 20000 + 1000 * (round % 50)}, NULL);
        amp_status st;
        while ((st = amp_program_destroy(p)) == AMP_ERROR_BUSY) ++busy;
        cr_assert_eq(st, AMP_OK, "round %d: %s", round, amp_last_error());
    }
    atomic_store(&r.stop, 1);
    pthread_join(getter, NULL);
    pthread_join(recorder, NULL);
    cr_assert_eq(r.err[0], 0, "%s", r.err);
    cr_assert_eq(r.stale_graphs, 0, "%ld of %ld graphs held a kernel whose program was destroyed", r.stale_graphs,
                 r.recorded);
    cr_log_info("%ld recordings, %ld kernels got, destroy busy %ld times", r.recorded, r.got, busy);
    cr_assert(r.recorded > 0 && r.got > 0, "the race was never run: %ld recordings, %ld kernels got", r.recorded,
              r.got);
    ASSERT_OK(amp_array_view_destroy(r.v));
    ASSERT_OK(amp_accelerator_view_destroy(r.q));
}
