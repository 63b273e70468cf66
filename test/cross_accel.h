/* cross_accel.h — the body of the tests of views of arrays used on another accelerator (issue 21 item 1), shared
 * by test_conformance.c (real pairs: the CPU accelerator and a GPU, two GPUs) and test_internal.c (stand-in
 * accelerators on the CPU backend whose memory the core treats as a GPU's, so that every path runs without a
 * GPU). Public API and Criterion only; the includer defines CROSS_ASSERT_OK. */
#ifndef HIPAMP_TEST_CROSS_ACCEL_H
#define HIPAMP_TEST_CROSS_ACCEL_H

#include <criterion/criterion.h>
#include <hipamp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char cross_source[] =
    "AMP_KERNEL(cross_add2, amp::index<2> i, amp::array_view<int, 2> v, int x) { v[i] += x; }\n"
    "AMP_KERNEL(cross_array_add2, amp::index<2> i, amp::array<int, 2> a, int x) { a[i] += x; }\n"
    "AMP_KERNEL(cross_array_set2, amp::index<2> i, amp::array<int, 2> a, int x) { a[i] = x + i[0] * 1000 + i[1]; }\n"
    "AMP_KERNEL(cross_copy2, amp::index<2> i, amp::array_view<const int, 2> in, amp::array_view<int, 2> out)\n"
    "{ out[i] = in[i]; }\n"
    "AMP_KERNEL(cross_set2, amp::index<2> i, amp::array_view<int, 2> v, int x) { v[i] = x + i[0] * 1000 + i[1]; }\n";

#define CROSS_ROWS 16
#define CROSS_COLS 24

static void cross_expect(amp_array *a, const int32_t *want, const char *what, const char *home, const char *other)
{
    int32_t got[CROSS_ROWS * CROSS_COLS];
    CROSS_ASSERT_OK(amp_array_copy_to_host(a, got));
    for (int k = 0; k < CROSS_ROWS * CROSS_COLS; ++k)
        cr_assert_eq(got[k], want[k], "array on %s, view used on %s: %s: element (%d,%d) is %d, want %d", home, other,
                     what, k / CROSS_COLS, k % CROSS_COLS, got[k], want[k]);
}

/* The two accelerators of a test, a queue and the program on each, and
 * their names for messages. */
typedef struct {
    amp_accelerator_info hi, oi;
    const char *hn, *on;
    amp_accelerator_view *qh, *qo;
    amp_program *ph, *po;
} cross_pair;

static void cross_open(amp_accelerator *home, amp_accelerator *other, cross_pair *p)
{
    CROSS_ASSERT_OK(amp_accelerator_get_info(home, &p->hi));
    CROSS_ASSERT_OK(amp_accelerator_get_info(other, &p->oi));
    p->hn = p->hi.device_path;
    p->on = p->oi.device_path;
    CROSS_ASSERT_OK(amp_accelerator_view_create(home, &p->qh));
    CROSS_ASSERT_OK(amp_accelerator_view_create(other, &p->qo));
    CROSS_ASSERT_OK(amp_program_build(home, cross_source, NULL, &p->ph));
    CROSS_ASSERT_OK(amp_program_build(other, cross_source, NULL, &p->po));
}

static void cross_close(cross_pair *p)
{
    CROSS_ASSERT_OK(amp_program_destroy(p->ph));
    CROSS_ASSERT_OK(amp_program_destroy(p->po));
    CROSS_ASSERT_OK(amp_accelerator_view_destroy(p->qh));
    CROSS_ASSERT_OK(amp_accelerator_view_destroy(p->qo));
}

/* A view of an array of `home` used in launches on `other`: the data moves
 * there and back as for a view of host memory (C++ AMP: array_views are
 * location-transparent); only the array itself must be used on its own
 * accelerator. */
static void cross_view_of_array(amp_accelerator *home, amp_accelerator *other)
{
    cross_pair p;
    cross_open(home, other, &p);
    const char *hn = p.hn, *on = p.on;
    amp_accelerator_view *qh = p.qh, *qo = p.qo;
    amp_program *ph = p.ph, *po = p.po;
    amp_kernel *add_h = NULL, *add_o = NULL, *arr_h = NULL, *arr_o = NULL, *copy_o = NULL;
    CROSS_ASSERT_OK(amp_program_get_kernel(ph, "cross_add2", &add_h));
    CROSS_ASSERT_OK(amp_program_get_kernel(po, "cross_add2", &add_o));
    CROSS_ASSERT_OK(amp_program_get_kernel(ph, "cross_array_add2", &arr_h));
    CROSS_ASSERT_OK(amp_program_get_kernel(po, "cross_array_add2", &arr_o));
    CROSS_ASSERT_OK(amp_program_get_kernel(po, "cross_copy2", &copy_o));

    enum { N = CROSS_ROWS * CROSS_COLS };
    int32_t want[N], host[N];
    for (int k = 0; k < N; ++k) want[k] = k;
    amp_extent e = amp_extent_2d(CROSS_ROWS, CROSS_COLS);
    amp_array *a = NULL;
    CROSS_ASSERT_OK(amp_array_create(qh, 4, e, want, &a));
    amp_array_view *v = NULL, *sec = NULL, *hv = NULL;
    CROSS_ASSERT_OK(amp_array_view_of_array(a, &v));

    /* The whole view on the other accelerator; the array's own copy back
     * sees the result. */
    amp_arg args[] = {amp_arg_view(v), amp_arg_int32(100)};
    CROSS_ASSERT_OK(amp_parallel_for_each(qo, e, add_o, args, 2));
    for (int k = 0; k < N; ++k) want[k] += 100;
    cross_expect(a, want, "after a launch of the whole view there", hn, on);

    /* The array itself: only on its own accelerator. */
    amp_arg aargs[] = {amp_arg_array(a), amp_arg_int32(10)};
    cr_assert_eq(amp_parallel_for_each(qo, e, arr_o, aargs, 2), AMP_ERROR_INVALID_ARGUMENT,
                 "an array of %s launched on %s must be refused", hn, on);
    CROSS_ASSERT_OK(amp_parallel_for_each(qh, e, arr_h, aargs, 2));
    for (int k = 0; k < N; ++k) want[k] += 10;
    cross_expect(a, want, "after the array's own launch at home", hn, on);

    /* A section there, then the view at home without a synchronize between:
     * the section's newer data must come home first. */
    CROSS_ASSERT_OK(amp_array_view_section(v, amp_index_2d(4, 5), amp_extent_2d(6, 11), &sec));
    amp_arg sargs[] = {amp_arg_view(sec), amp_arg_int32(1000)};
    CROSS_ASSERT_OK(amp_parallel_for_each(qo, amp_extent_2d(6, 11), add_o, sargs, 2));
    for (int r = 4; r < 10; ++r)
        for (int c = 5; c < 16; ++c) want[r * CROSS_COLS + c] += 1000;
    CROSS_ASSERT_OK(amp_parallel_for_each(qh, e, add_h, args, 2));
    for (int k = 0; k < N; ++k) want[k] += 100;
    cross_expect(a, want, "after a section there and the whole view at home", hn, on);

    /* Back and forth with the array in between: there, the array at home
     * (which takes the data back), there again. */
    CROSS_ASSERT_OK(amp_parallel_for_each(qo, amp_extent_2d(6, 11), add_o, sargs, 2));
    CROSS_ASSERT_OK(amp_parallel_for_each(qh, e, arr_h, aargs, 2));
    CROSS_ASSERT_OK(amp_parallel_for_each(qo, e, add_o, args, 2));
    for (int r = 4; r < 10; ++r)
        for (int c = 5; c < 16; ++c) want[r * CROSS_COLS + c] += 1000;
    for (int k = 0; k < N; ++k) want[k] += 110;
    /* One element from the host while the data is there. */
    int32_t got = 0, val = -7;
    CROSS_ASSERT_OK(amp_array_view_get(v, amp_index_2d(5, 6), &got));
    cr_assert_eq(got, want[5 * CROSS_COLS + 6], "get on %s's view used on %s: %d, want %d", hn, on, got,
                 want[5 * CROSS_COLS + 6]);
    CROSS_ASSERT_OK(amp_array_view_set(v, amp_index_2d(0, 1), &val));
    want[1] = val;
    /* A copy reads the newest data wherever it is. */
    CROSS_ASSERT_OK(amp_array_view_create(host, 4, e, AMP_READ_WRITE, &hv));
    CROSS_ASSERT_OK(amp_copy_view(v, hv));
    CROSS_ASSERT_OK(amp_array_view_destroy(hv));
    for (int k = 0; k < N; ++k)
        cr_assert_eq(host[k], want[k], "amp_copy_view from %s's view used on %s: element %d is %d, want %d", hn, on, k,
                     host[k], want[k]);
    /* A kernel there reading the view, writing a host view. */
    for (int k = 0; k < N; ++k) host[k] = -1;
    CROSS_ASSERT_OK(amp_array_view_create(host, 4, e, AMP_WRITE_ONLY, &hv));
    amp_arg cargs[] = {amp_arg_view(v), amp_arg_view(hv)};
    CROSS_ASSERT_OK(amp_parallel_for_each(qo, e, copy_o, cargs, 2));
    CROSS_ASSERT_OK(amp_array_view_destroy(hv));
    for (int k = 0; k < N; ++k)
        cr_assert_eq(host[k], want[k], "a kernel on %s reading %s's view: element %d is %d, want %d", on, hn, k,
                     host[k], want[k]);
    /* synchronize makes the array current; destroying the views, then the array. */
    CROSS_ASSERT_OK(amp_array_view_synchronize(v));
    cross_expect(a, want, "after synchronize", hn, on);
    CROSS_ASSERT_OK(amp_array_view_destroy(sec));
    CROSS_ASSERT_OK(amp_array_view_destroy(v));
    CROSS_ASSERT_OK(amp_array_destroy(a));
    cross_close(&p);
}

/* A view of an array of `home` given discard_data, then a kernel at home
 * setting the array itself, then the view's launch on `other`: what the
 * kernel wrote must reach it (the hint held, and the launch read the
 * other's fresh memory instead). */
static void cross_discard_ends_after_a_write_at_home(amp_accelerator *home, amp_accelerator *other)
{
    cross_pair p;
    cross_open(home, other, &p);
    const char *hn = p.hn, *on = p.on;
    amp_accelerator_view *qh = p.qh, *qo = p.qo;
    amp_program *ph = p.ph, *po = p.po;
    amp_kernel *add_o = NULL, *arr_h = NULL;
    CROSS_ASSERT_OK(amp_program_get_kernel(po, "cross_add2", &add_o));
    CROSS_ASSERT_OK(amp_program_get_kernel(ph, "cross_array_set2", &arr_h));
    enum { N = CROSS_ROWS * CROSS_COLS };
    int32_t want[N];
    for (int k = 0; k < N; ++k) want[k] = k;
    amp_extent e = amp_extent_2d(CROSS_ROWS, CROSS_COLS);
    amp_array *a = NULL;
    amp_array_view *v = NULL;
    CROSS_ASSERT_OK(amp_array_create(qh, 4, e, want, &a));
    CROSS_ASSERT_OK(amp_array_view_of_array(a, &v));
    amp_arg args[] = {amp_arg_view(v), amp_arg_int32(100)};
    CROSS_ASSERT_OK(amp_parallel_for_each(qo, e, add_o, args, 2));
    CROSS_ASSERT_OK(amp_array_view_discard_data(v));
    amp_arg aargs[] = {amp_arg_array(a), amp_arg_int32(7)};
    CROSS_ASSERT_OK(amp_parallel_for_each(qh, e, arr_h, aargs, 2));
    CROSS_ASSERT_OK(amp_parallel_for_each(qo, e, add_o, args, 2));
    CROSS_ASSERT_OK(amp_array_view_synchronize(v));
    for (int k = 0; k < N; ++k) want[k] = 7 + (k / CROSS_COLS) * 1000 + k % CROSS_COLS + 100;
    cross_expect(a, want, "discard_data, the array written at home, then the view there", hn, on);
    CROSS_ASSERT_OK(amp_array_view_destroy(v));
    CROSS_ASSERT_OK(amp_array_destroy(a));
    cross_close(&p);
}

/* A view of host memory used on `first` (a device copy there where it
 * copies), given discard_data, then written again on `first` without the
 * host: by a copy into it (the device copy takes it), or by a kernel
 * through another view of the same memory; then used on `second`: what
 * was written must move with it (before, the hint outlived both writes,
 * which did not reach the host, and the launch on `second` read memory
 * nothing had copied in). */
static void cross_discard_ends_after_a_write_elsewhere(amp_accelerator *first, amp_accelerator *second)
{
    cross_pair p;
    cross_open(first, second, &p);
    const char *fn = p.hn, *sn = p.on;
    amp_kernel *add_f = NULL, *set_f = NULL, *add_s = NULL;
    CROSS_ASSERT_OK(amp_program_get_kernel(p.ph, "cross_add2", &add_f));
    CROSS_ASSERT_OK(amp_program_get_kernel(p.ph, "cross_set2", &set_f));
    CROSS_ASSERT_OK(amp_program_get_kernel(p.po, "cross_add2", &add_s));
    enum { N = CROSS_ROWS * CROSS_COLS };
    amp_extent e = amp_extent_2d(CROSS_ROWS, CROSS_COLS);
    for (int how = 0; how < 2; ++how) {
        static int32_t x[N], fifty[N];
        for (int k = 0; k < N; ++k) {
            x[k] = k;
            fifty[k] = 50 + k;
        }
        amp_array_view *v = NULL, *twin = NULL, *src = NULL;
        CROSS_ASSERT_OK(amp_array_view_create(x, 4, e, AMP_READ_WRITE, &v));
        CROSS_ASSERT_OK(amp_array_view_duplicate(v, &twin));
        CROSS_ASSERT_OK(amp_array_view_create(fifty, 4, e, AMP_READ_WRITE, &src));
        amp_arg args[] = {amp_arg_view(v), amp_arg_int32(1)};
        amp_arg twin_args[] = {amp_arg_view(twin), amp_arg_int32(7)};
        CROSS_ASSERT_OK(amp_parallel_for_each(p.qh, e, add_f, args, 2));
        CROSS_ASSERT_OK(amp_array_view_discard_data(v));
        if (how == 0) CROSS_ASSERT_OK(amp_copy_view(src, v));
        else CROSS_ASSERT_OK(amp_parallel_for_each(p.qh, e, set_f, twin_args, 2));
        amp_arg again[] = {amp_arg_view(v), amp_arg_int32(100)};
        CROSS_ASSERT_OK(amp_parallel_for_each(p.qo, e, add_s, again, 2));
        CROSS_ASSERT_OK(amp_array_view_synchronize(v));
        for (int k = 0; k < N; ++k) {
            int32_t want = how == 0 ? 50 + k + 100 : 7 + (k / CROSS_COLS) * 1000 + k % CROSS_COLS + 100;
            cr_assert_eq(x[k], want, "view used on %s, discard_data, then %s there, then the view used on %s: element "
                         "(%d,%d) is %d, want %d", fn, how == 0 ? "a copy into it" : "a kernel through another view",
                         sn, k / CROSS_COLS, k % CROSS_COLS, x[k], want);
        }
        CROSS_ASSERT_OK(amp_array_view_destroy(src));
        CROSS_ASSERT_OK(amp_array_view_destroy(twin));
        CROSS_ASSERT_OK(amp_array_view_destroy(v));
    }
    cross_close(&p);
}

/* An array of `home` whose view a graph on `other` launches: a launch of
 * the array itself on `home` would need the data back from where the graph
 * holds it, and is AMP_ERROR_BUSY saying so (naming both, and the way
 * out); once the graph is gone it runs, on the graph's results. */
static void cross_array_launch_while_a_graph_elsewhere_holds_its_view(amp_accelerator *home, amp_accelerator *other)
{
    cross_pair p;
    cross_open(home, other, &p);
    const char *hn = p.hn, *on = p.on;
    amp_kernel *add_o = NULL, *arr_h = NULL;
    CROSS_ASSERT_OK(amp_program_get_kernel(p.po, "cross_add2", &add_o));
    CROSS_ASSERT_OK(amp_program_get_kernel(p.ph, "cross_array_add2", &arr_h));
    enum { N = CROSS_ROWS * CROSS_COLS };
    int32_t want[N];
    for (int k = 0; k < N; ++k) want[k] = k;
    amp_extent e = amp_extent_2d(CROSS_ROWS, CROSS_COLS);
    amp_array *a = NULL;
    amp_array_view *v = NULL;
    amp_graph *g = NULL;
    CROSS_ASSERT_OK(amp_array_create(p.qh, 4, e, want, &a));
    CROSS_ASSERT_OK(amp_array_view_of_array(a, &v));
    amp_arg args[] = {amp_arg_view(v), amp_arg_int32(1)};
    CROSS_ASSERT_OK(amp_graph_begin_recording(p.qo));
    CROSS_ASSERT_OK(amp_parallel_for_each(p.qo, e, add_o, args, 2));
    CROSS_ASSERT_OK(amp_graph_end_recording(p.qo, &g));
    CROSS_ASSERT_OK(amp_graph_launch(p.qo, g));
    amp_arg aargs[] = {amp_arg_array(a), amp_arg_int32(10)};
    amp_status st = amp_parallel_for_each(p.qh, e, arr_h, aargs, 2);
    cr_assert_eq(st, AMP_ERROR_BUSY, "array on %s, a graph on %s using its view: the array's launch at home: %s: %s",
                 hn, on, amp_status_name(st), amp_last_error());
    const char *why = amp_last_error();
    cr_assert(strstr(why, "own accelerator") && strstr(why, hn) && strstr(why, on) && strstr(why, "through a view"),
              "array on %s, graph on %s: %s", hn, on, why);
    CROSS_ASSERT_OK(amp_graph_destroy(g));
    CROSS_ASSERT_OK(amp_parallel_for_each(p.qh, e, arr_h, aargs, 2));
    for (int k = 0; k < N; ++k) want[k] = k + 1 + 10;
    cross_expect(a, want, "a graph's replay there, then the array's launch at home once the graph is gone", hn, on);
    CROSS_ASSERT_OK(amp_array_view_destroy(v));
    CROSS_ASSERT_OK(amp_array_destroy(a));
    cross_close(&p);
}

/* A graph recorded on `other` launching a view of an array of `home`, then
 * the array's own host copy and native handle (which bring its data home):
 * the graph replays after each with the array's new data (before, the
 * device memory the graph's commands name was freed, and every replay was
 * then BUSY for good). */
static void cross_graph_of_a_view_after_its_array_went_home(amp_accelerator *home, amp_accelerator *other)
{
    cross_pair p;
    cross_open(home, other, &p);
    const char *hn = p.hn, *on = p.on;
    amp_accelerator_view *qh = p.qh, *qo = p.qo;
    amp_program *po = p.po;
    amp_kernel *add_o = NULL;
    CROSS_ASSERT_OK(amp_program_get_kernel(po, "cross_add2", &add_o));
    enum { N = CROSS_ROWS * CROSS_COLS };
    int32_t want[N];
    for (int k = 0; k < N; ++k) want[k] = k;
    amp_extent e = amp_extent_2d(CROSS_ROWS, CROSS_COLS);
    amp_array *a = NULL;
    amp_array_view *v = NULL;
    amp_graph *g = NULL;
    CROSS_ASSERT_OK(amp_array_create(qh, 4, e, want, &a));
    CROSS_ASSERT_OK(amp_array_view_of_array(a, &v));
    amp_arg args[] = {amp_arg_view(v), amp_arg_int32(1)};
    CROSS_ASSERT_OK(amp_graph_begin_recording(qo));
    CROSS_ASSERT_OK(amp_parallel_for_each(qo, e, add_o, args, 2));
    CROSS_ASSERT_OK(amp_graph_end_recording(qo, &g));
    CROSS_ASSERT_OK(amp_graph_launch(qo, g));
    CROSS_ASSERT_OK(amp_array_view_synchronize(v));
    for (int k = 0; k < N; ++k) want[k] += 1;
    cross_expect(a, want, "after a replay there", hn, on);
    for (int k = 0; k < N; ++k) want[k] = 100 * k;
    CROSS_ASSERT_OK(amp_array_copy_from_host(a, want));
    amp_status st = amp_graph_launch(qo, g);
    cr_assert_eq(st, AMP_OK, "a replay on %s after the %s array's copy from the host: %s", on, hn,
                 st == AMP_OK ? "" : amp_last_error());
    CROSS_ASSERT_OK(amp_array_view_synchronize(v));
    for (int k = 0; k < N; ++k) want[k] += 1;
    cross_expect(a, want, "a replay after the array's copy from the host", hn, on);
    void *native = NULL;
    CROSS_ASSERT_OK(amp_array_native_handle(a, &native));
    st = amp_graph_launch(qo, g);
    cr_assert_eq(st, AMP_OK, "a replay on %s after the %s array's native handle: %s", on, hn,
                 st == AMP_OK ? "" : amp_last_error());
    CROSS_ASSERT_OK(amp_array_view_synchronize(v));
    for (int k = 0; k < N; ++k) want[k] += 1;
    cross_expect(a, want, "a replay after the array's native handle", hn, on);
    CROSS_ASSERT_OK(amp_graph_destroy(g));
    CROSS_ASSERT_OK(amp_array_view_destroy(v));
    CROSS_ASSERT_OK(amp_array_destroy(a));
    cross_close(&p);
}

#endif
