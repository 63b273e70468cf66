/* test_graph.c — launch graphs (issue 24): record/replay gives what direct execution gives (views, arrays, a tiled kernel, recorded copies, a scalar kept in an array, a long chain whose every launch reads what other tiles of the one before wrote), coherence at each replay (host changes refreshed are copied in, a later synchronize copies back the last replay's results, nothing moves once the data lives on the device), every refusal with its status (nesting, two threads, another view, host results and waits while recording, destroying what a graph uses), destroy order, 10,000 replays without growing memory (also with AMP_DEBUG=1), two threads replaying two graphs on two queues, four threads replaying one graph whose kernels write through raw addresses (replays take turns), a recording whose thread exited (ended by another thread, or discarded with its view; a launch from a key destructor after the thread's exit not recorded; threads racing to end it, or to end it and destroy its view, 200 rounds each), ending a recording without out (it stops), a recorded copy of no elements (moves nothing; a replay of nothing keeps its data's last launch), a replay's failure on the CPU accelerator, and the CUDA/HIP graph behind a GPU's (checked where there is one). */
#include "support.h"
#include "vendor.h"

#include <hipamp_algorithms.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const char test_kernels_graph[];

#define N 1024

typedef struct fixture {
    amp_accelerator *acc;
    amp_accelerator_view *q;
    amp_program *p;
    amp_kernel *step, *axpy, *inc, *scale, *bump, *tile_sum, *poke, *rotate, *raw_inc;
} fixture;

static void setup(fixture *f, amp_accelerator *acc)
{
    memset(f, 0, sizeof *f);
    f->acc = acc;
    ASSERT_OK(amp_accelerator_view_create(acc, &f->q));
    f->p = test_build(acc, test_kernels_graph);
    f->step = test_kernel(f->p, "graph_step");
    f->axpy = test_kernel(f->p, "graph_axpy");
    f->inc = test_kernel(f->p, "graph_inc");
    f->scale = test_kernel(f->p, "graph_scale");
    f->bump = test_kernel(f->p, "graph_bump");
    f->tile_sum = test_kernel(f->p, "graph_tile_sum");
    f->poke = test_kernel(f->p, "graph_poke");
    f->rotate = test_kernel(f->p, "graph_rotate");
    f->raw_inc = test_kernel(f->p, "graph_raw_inc");
}

static void teardown(fixture *f)
{
    ASSERT_OK(amp_program_destroy(f->p));
    ASSERT_OK(amp_accelerator_view_destroy(f->q));
}

/* Pool threads that spin for work (AMP_CPU_SPIN_US; the default on 4
 * threads or more, not on the 2-core CI machine) make a replay hand its
 * launches to a team of them (lib/cpu/cpu_team.c). */
static void use_replay_teams(void)
{
    setenv("AMP_CPU_THREADS", "4", 1);
    setenv("AMP_CPU_SPIN_US", "1000", 1);
}

static bool unified(amp_accelerator *acc)
{
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    return info.is_unified_memory;
}

/* The data graph_inc counts in: x (N ints from 0) behind view v, and the
 * launch counter cnt; args are graph_inc's arguments over them. */
typedef struct counted {
    int32_t x[N];
    amp_array *cnt;
    amp_array_view *v;
    amp_arg args[2];
} counted;

static void counted_open(fixture *f, counted *c)
{
    int32_t zero = 0;
    memset(c->x, 0, sizeof c->x);
    ASSERT_OK(amp_array_create(f->q, 4, amp_extent_1d(1), &zero, &c->cnt));
    c->v = test_view(c->x, 4, amp_extent_1d(N), AMP_READ_WRITE);
    c->args[0] = amp_arg_view(c->v);
    c->args[1] = amp_arg_array(c->cnt);
}

/* A graph of launches graph_inc launches over c, recorded on f's view. */
static amp_graph *counted_record(fixture *f, counted *c, int launches)
{
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_begin_recording(f->q));
    for (int i = 0; i < launches; ++i) ASSERT_OK(amp_parallel_for_each(f->q, amp_extent_1d(N), f->inc, c->args, 2));
    ASSERT_OK(amp_graph_end_recording(f->q, &g));
    cr_assert_not_null(g);
    return g;
}

static void counted_close(counted *c)
{
    ASSERT_OK(amp_array_view_destroy(c->v));
    ASSERT_OK(amp_array_destroy(c->cnt));
}

/* Values whose halves and sums stay exact in float for many steps. */
static void fill_dyadic(float *x, int n, int seed)
{
    for (int i = 0; i < n; ++i) x[i] = (float)((i * 7 + seed * 13) % 64) / 8.0f;
}

/* One iteration of the chain: c = a/2 + b; b = c/2 + a; a += 0.25 c. */
static void chain_launch(fixture *f, amp_array_view *a, amp_array_view *b, amp_array_view *c)
{
    amp_arg s1[] = {amp_arg_view(a), amp_arg_view(b), amp_arg_view(c)};
    amp_arg s2[] = {amp_arg_view(c), amp_arg_view(a), amp_arg_view(b)};
    amp_arg s3[] = {amp_arg_view(a), amp_arg_view(c), amp_arg_float32(0.25f)};
    ASSERT_OK(amp_parallel_for_each(f->q, amp_extent_1d(N), f->step, s1, 3));
    ASSERT_OK(amp_parallel_for_each(f->q, amp_extent_1d(N), f->step, s2, 3));
    ASSERT_OK(amp_parallel_for_each(f->q, amp_extent_1d(N), f->axpy, s3, 3));
}

static void chain_reference(float *a, float *b, float *c, int iters)
{
    for (int it = 0; it < iters; ++it)
        for (int i = 0; i < N; ++i) {
            c[i] = a[i] * 0.5f + b[i];
            b[i] = c[i] * 0.5f + a[i];
            a[i] += 0.25f * c[i];
        }
}

/* -------------------------------------------------------- record/replay */

/* A graph of three dependent launches replayed 20 times gives, bit for
 * bit, what 20 direct iterations give (and the C reference). */
ACCEL_TEST(graph, replay_equals_direct_execution)
{
    enum { ITERS = 20 };
    fixture f;
    setup(&f, acc);
    static float a1[N], b1[N], c1[N], a2[N], b2[N], c2[N], ra[N], rb[N], rc[N];
    fill_dyadic(a1, N, 1);
    fill_dyadic(b1, N, 2);
    memset(c1, 0, sizeof c1);
    memcpy(a2, a1, sizeof a1);
    memcpy(b2, b1, sizeof b1);
    memcpy(c2, c1, sizeof c1);
    memcpy(ra, a1, sizeof a1);
    memcpy(rb, b1, sizeof b1);
    memcpy(rc, c1, sizeof c1);
    chain_reference(ra, rb, rc, ITERS);

    amp_array_view *va = test_view(a1, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *vb = test_view(b1, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *vc = test_view(c1, 4, amp_extent_1d(N), AMP_READ_WRITE);
    for (int it = 0; it < ITERS; ++it) chain_launch(&f, va, vb, vc);
    ASSERT_OK(amp_array_view_destroy(va));
    ASSERT_OK(amp_array_view_destroy(vb));
    ASSERT_OK(amp_array_view_destroy(vc));

    va = test_view(a2, 4, amp_extent_1d(N), AMP_READ_WRITE);
    vb = test_view(b2, 4, amp_extent_1d(N), AMP_READ_WRITE);
    vc = test_view(c2, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_begin_recording(f.q));
    chain_launch(&f, va, vb, vc);
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    cr_assert_not_null(g);
    /* Recording ran nothing. */
    cr_assert_eq(c2[5], 0.0f, "recording ran the launches");
    amp_graph_info info;
    ASSERT_OK(amp_graph_get_info(g, &info));
    cr_assert_eq(info.launches, 3);
    cr_assert_eq(info.copies, 0);
    cr_assert_eq(info.data, 3, "three views' data: %llu", (unsigned long long)info.data);
    cr_assert_eq(info.replays, 0);
    for (int it = 0; it < ITERS; ++it) ASSERT_OK(amp_graph_launch(NULL, g));
    ASSERT_OK(amp_graph_get_info(g, &info));
    cr_assert_eq(info.replays, ITERS);
    ASSERT_OK(amp_array_view_synchronize(va));
    ASSERT_OK(amp_array_view_synchronize(vb));
    ASSERT_OK(amp_array_view_synchronize(vc));
    test_check_f32(a2, a1, N, "a: graph vs direct");
    test_check_f32(b2, b1, N, "b: graph vs direct");
    test_check_f32(c2, c1, N, "c: graph vs direct");
    test_check_f32(a2, ra, N, "a: graph vs reference");
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_array_view_destroy(va));
    ASSERT_OK(amp_array_view_destroy(vb));
    ASSERT_OK(amp_array_view_destroy(vc));
    teardown(&f);
}

/* A long chain over many tiles in which every element reads one that
 * another tile of the launch before wrote: replayed, each launch still
 * reads only after the one before finished (on a GPU that runs recorded
 * launches as programmatic dependent launches, the entry point's wait is
 * what keeps this true). */
ACCEL_TEST(graph, each_replayed_launch_reads_what_the_one_before_wrote)
{
    enum { LEN = 1 << 18, LAUNCHES = 64, REPLAYS = 3, SHIFT = 4099 };
    fixture f;
    setup(&f, acc);
    int32_t *x = malloc(2 * LEN * sizeof *x), *ref = malloc(2 * LEN * sizeof *ref);
    cr_assert(x && ref);
    for (int i = 0; i < LEN; ++i) x[i] = ref[i] = (i * 37) % 1000;
    memset(x + LEN, 0, LEN * sizeof *x);
    amp_array_view *va = test_view(x, 4, amp_extent_1d(LEN), AMP_READ_WRITE);
    amp_array_view *vb = test_view(x + LEN, 4, amp_extent_1d(LEN), AMP_READ_WRITE);
    amp_arg ab[] = {amp_arg_view(va), amp_arg_view(vb), amp_arg_int32(SHIFT)};
    amp_arg ba[] = {amp_arg_view(vb), amp_arg_view(va), amp_arg_int32(SHIFT)};
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_begin_recording(f.q));
    for (int k = 0; k < LAUNCHES; ++k)
        ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(LEN), f.rotate, k % 2 ? ba : ab, 3));
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    for (int r = 0; r < REPLAYS; ++r) ASSERT_OK(amp_graph_launch(f.q, g));
    ASSERT_OK(amp_array_view_synchronize(va));
    /* LAUNCHES is even: the result is back in a, rotated by SHIFT and
     * incremented once a launch. */
    int64_t total = (int64_t)LAUNCHES * REPLAYS;
    for (int i = 0; i < LEN; ++i) {
        int want = ref[(int)(((int64_t)i + total * SHIFT) % LEN)] + (int)total;
        if (x[i] != want) cr_assert_fail("a[%d] = %d after %lld launches, want %d", i, x[i], (long long)total, want);
    }
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_array_view_destroy(va));
    ASSERT_OK(amp_array_view_destroy(vb));
    free(x);
    free(ref);
    teardown(&f);
}

/* The same through a replay team (lib/cpu/cpu_team.c): a member still
 * inside a launch when the replaying thread has finished its own chunks
 * is waited for before the next launch opens. */
Test(graph, each_replayed_launch_reads_what_the_one_before_wrote_cpu_team)
{
    use_replay_teams();
    graph_each_replayed_launch_reads_what_the_one_before_wrote_body(test_accel(TEST_ACCEL_CPU));
}

/* Recording right after launches nobody waited for (no wait point on the
 * view yet) works, and the replay runs after them. */
ACCEL_TEST(graph, recording_after_unwaited_launches)
{
    fixture f;
    setup(&f, acc);
    static int32_t x[N];
    memset(x, 0, sizeof x);
    int32_t zero = 0, n = 0;
    amp_array *cnt = NULL;
    ASSERT_OK(amp_array_create(f.q, 4, amp_extent_1d(1), &zero, &cnt));
    ASSERT_OK(amp_accelerator_view_wait(f.q));
    amp_array_view *v = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_arg args[] = {amp_arg_view(v), amp_arg_array(cnt)};
    for (int i = 0; i < 3; ++i) ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.inc, args, 2));
    amp_future *fut = NULL;
    ASSERT_OK(amp_parallel_for_each_async(f.q, amp_extent_1d(N), f.inc, args, 2, &fut));
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.inc, args, 2));
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    ASSERT_OK(amp_graph_launch(f.q, g));
    ASSERT_OK(amp_future_wait(fut));
    ASSERT_OK(amp_future_destroy(fut));
    ASSERT_OK(amp_array_copy_to_host(cnt, &n));
    cr_assert_eq(n, 5, "counter %d, want 5", n);
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < N; ++i) cr_assert_eq(x[i], 5, "x[%d] = %d", i, x[i]);
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_array_destroy(cnt));
    teardown(&f);
}

/* Code unloaded while a view of the same accelerator records (a program of
 * its own, destroyed and dropped from the in-memory cache, its launches
 * still queued on another view): the recording ends whole and replays as
 * recorded, and the other view's launches all ran. The GPU backend used to
 * synchronize the whole device before unloading code, which CUDA and HIP
 * refuse while any stream captures, and which broke the recording
 * (amp_graph_end_recording failed: capture invalidated). */
ACCEL_TEST(graph, code_unloaded_while_another_view_records)
{
    fixture f;
    setup(&f, acc);
    static counted c;
    counted_open(&f, &c);
    amp_accelerator_view *q2 = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q2));
    amp_program *p2 = test_build(acc, "AMP_KERNEL(unload_probe_add, amp::index<1> i, amp::array<int, 1> a)"
                                      " { a[i] += 3; }");
    amp_kernel *add = test_kernel(p2, "unload_probe_add");
    static int32_t y[N];
    memset(y, 0, sizeof y);
    amp_array *arr = NULL;
    ASSERT_OK(amp_array_create(q2, 4, amp_extent_1d(N), y, &arr));
    amp_arg a2[] = {amp_arg_array(arr)};
    for (int i = 0; i < 20; ++i) ASSERT_OK(amp_parallel_for_each(q2, amp_extent_1d(N), add, a2, 1));
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.inc, c.args, 2));
    ASSERT_OK(amp_program_destroy(p2));
    ASSERT_OK(amp_cache_clear_memory()); /* the last reference: the code is unloaded now */
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.inc, c.args, 2));
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    for (int i = 0; i < 3; ++i) ASSERT_OK(amp_graph_launch(f.q, g));
    int32_t n = -1;
    ASSERT_OK(amp_array_copy_to_host(c.cnt, &n));
    cr_assert_eq(n, 6, "counter %d, want 6", n);
    ASSERT_OK(amp_array_view_synchronize(c.v));
    for (int i = 0; i < N; ++i) cr_assert_eq(c.x[i], 6, "x[%d] = %d", i, c.x[i]);
    ASSERT_OK(amp_array_copy_to_host(arr, y));
    for (int i = 0; i < N; ++i) cr_assert_eq(y[i], 60, "y[%d] = %d after 20 launches of 3", i, y[i]);
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_array_destroy(arr));
    ASSERT_OK(amp_accelerator_view_destroy(q2));
    counted_close(&c);
    teardown(&f);
}

/* Every replay runs every launch: a counter in an array and a view both
 * count them; the view's statistics count the graph's launches. */
ACCEL_TEST(graph, every_replay_runs_every_launch)
{
    fixture f;
    setup(&f, acc);
    static counted c;
    counted_open(&f, &c);
    int32_t n = -1;
    amp_graph *g = counted_record(&f, &c, 2);
    ASSERT_OK(amp_accelerator_view_reset_stats(f.q));
    for (int i = 0; i < 50; ++i) ASSERT_OK(amp_graph_launch(f.q, g));
    amp_stats st;
    ASSERT_OK(amp_accelerator_view_get_stats(f.q, &st));
    cr_assert_eq(st.launches, 100, "the view counted %llu launches, want 100", (unsigned long long)st.launches);
    ASSERT_OK(amp_array_copy_to_host(c.cnt, &n));
    cr_assert_eq(n, 100, "counter %d, want 100", n);
    ASSERT_OK(amp_array_view_synchronize(c.v));
    for (int i = 0; i < N; ++i) cr_assert_eq(c.x[i], 100, "x[%d] = %d", i, c.x[i]);
    ASSERT_OK(amp_graph_destroy(g));
    counted_close(&c);
    teardown(&f);
}

/* A value argument is fixed at recording; a scalar that must change lives
 * in a 1-element array a recorded kernel writes: y *= 2, 3, 4, 5. */
ACCEL_TEST(graph, scalars_fixed_at_recording_and_scalars_in_arrays)
{
    fixture f;
    setup(&f, acc);
    static float y[N], x[N];
    for (int i = 0; i < N; ++i) {
        y[i] = (float)(i % 5);
        x[i] = 1.0f;
    }
    float one = 1.0f, a = 2.0f;
    amp_array *s = NULL;
    ASSERT_OK(amp_array_create(f.q, 4, amp_extent_1d(1), &one, &s));
    amp_array_view *vy = test_view(y, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *vx = test_view(x, 4, amp_extent_1d(N), AMP_READ_ONLY);
    amp_arg b[] = {amp_arg_array(s)};
    amp_arg sc[] = {amp_arg_view(vy), amp_arg_array(s)};
    amp_arg ax[] = {amp_arg_view(vy), amp_arg_view(vx), amp_arg_float32(a)};
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(1), f.bump, b, 1));
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.scale, sc, 2));
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.axpy, ax, 3));
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    /* The recorded launch keeps its arguments' values, not the caller's
     * array of them: that array changed (another scalar, another view)
     * changes no replay. */
    a = 100.0f;
    ax[2] = amp_arg_float32(a);
    ax[1] = amp_arg_view(vy);
    for (int r = 0; r < 4; ++r) ASSERT_OK(amp_graph_launch(f.q, g));
    ASSERT_OK(amp_array_view_synchronize(vy));
    for (int i = 0; i < N; ++i) {
        float w = (float)(i % 5);
        for (int r = 0; r < 4; ++r) w = w * (float)(r + 2) + 2.0f;
        cr_assert_eq(y[i], w, "y[%d] = %g, want %g", i, (double)y[i], (double)w);
    }
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_array_view_destroy(vy));
    ASSERT_OK(amp_array_view_destroy(vx));
    ASSERT_OK(amp_array_destroy(s));
    teardown(&f);
}

/* A tiled kernel with tile_static memory in a graph (loop version and
 * fibers on the CPU accelerator). */
ACCEL_TILED_TEST(graph, tiled_kernel_replays)
{
    fixture f;
    setup(&f, acc);
    enum { M = 64 * 16 };
    static int32_t in[M], out[M];
    for (int i = 0; i < M; ++i) {
        in[i] = i % 17;
        out[i] = POISON_I32;
    }
    amp_array_view *vi = test_view(in, 4, amp_extent_1d(M), AMP_READ_ONLY);
    amp_array_view *vo = test_view(out, 4, amp_extent_1d(M), AMP_WRITE_ONLY);
    amp_tiled_extent t;
    ASSERT_OK(amp_extent_tile_1d(amp_extent_1d(M), 64, &t));
    amp_arg a[] = {amp_arg_view(vi), amp_arg_view(vo)};
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_OK(amp_parallel_for_each_tiled(f.q, t, f.tile_sum, a, 2));
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    ASSERT_OK(amp_graph_launch(f.q, g));
    ASSERT_OK(amp_graph_launch(f.q, g));
    ASSERT_OK(amp_array_view_synchronize(vo));
    for (int tile = 0; tile < M / 64; ++tile) {
        int sum = 0;
        for (int k = 0; k < 64; ++k) sum += in[tile * 64 + k];
        cr_assert_eq(out[tile * 64], sum, "tile %d: %d, want %d", tile, out[tile * 64], sum);
        for (int k = 1; k < 64; ++k) cr_assert_eq(out[tile * 64 + k], in[tile * 64 + k]);
    }
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_array_view_destroy(vo));
    teardown(&f);
}

/* Copies between arrays made while recording are recorded (and counted as
 * device copies at each replay); their future is complete at once. */
ACCEL_TEST(graph, copies_between_arrays_are_recorded)
{
    fixture f;
    setup(&f, acc);
    static int32_t init[N], poison[N], got[N];
    for (int i = 0; i < N; ++i) init[i] = i, poison[i] = -7777;
    int32_t zero = 0, n = 0;
    amp_array *src = NULL, *dst = NULL, *cnt = NULL;
    ASSERT_OK(amp_array_create(f.q, 4, amp_extent_1d(N), init, &src));
    ASSERT_OK(amp_array_create(f.q, 4, amp_extent_1d(N), poison, &dst));
    ASSERT_OK(amp_array_create(f.q, 4, amp_extent_1d(1), &zero, &cnt));
    amp_array_view *vsrc = NULL;
    ASSERT_OK(amp_array_view_of_array(src, &vsrc));
    amp_arg inc[] = {amp_arg_view(vsrc), amp_arg_array(cnt)};
    amp_graph *g = NULL;
    amp_future *fut = NULL;
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.inc, inc, 2)); /* src += 1 */
    ASSERT_OK(amp_copy_array_async(src, dst, &fut));                         /* dst = src */
    bool ready = false;
    ASSERT_OK(amp_future_is_ready(fut, &ready));
    cr_assert(ready, "a recorded copy's future names nothing that runs now");
    ASSERT_OK(amp_future_destroy(fut));
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    amp_graph_info info;
    ASSERT_OK(amp_graph_get_info(g, &info));
    cr_assert_eq(info.launches, 1);
    cr_assert_eq(info.copies, 1);
    ASSERT_OK(amp_array_copy_to_host(dst, got));
    test_check_i32(got, poison, N, "dst after the recording (the recorded copy ran at once)");
    ASSERT_OK(amp_accelerator_view_reset_stats(f.q));
    for (int r = 0; r < 3; ++r) ASSERT_OK(amp_graph_launch(f.q, g));
    amp_stats st;
    ASSERT_OK(amp_accelerator_view_get_stats(f.q, &st));
    cr_assert_eq(st.copies_device_to_device, 3, "%llu device copies", (unsigned long long)st.copies_device_to_device);
    cr_assert_eq(st.bytes_device_to_device, 3 * N * 4);
    cr_assert_eq(st.launches, 3, "%llu launches", (unsigned long long)st.launches);
    ASSERT_OK(amp_array_copy_to_host(dst, got));
    for (int i = 0; i < N; ++i) cr_assert_eq(got[i], i + 3, "dst[%d] = %d", i, got[i]);
    ASSERT_OK(amp_array_copy_to_host(cnt, &n));
    cr_assert_eq(n, 3);
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_array_view_destroy(vsrc));
    ASSERT_OK(amp_array_destroy(src));
    ASSERT_OK(amp_array_destroy(dst));
    ASSERT_OK(amp_array_destroy(cnt));
    teardown(&f);
}

/* A recorded copy of no elements (sections of 0 rows of 5) moves nothing
 * at its replays, as it moves nothing when made directly: the CPU
 * accelerator once copied a 0-row box as one row. */
ACCEL_TEST(graph, a_recorded_copy_of_no_rows_moves_nothing)
{
    fixture f;
    setup(&f, acc);
    float a[20], b[20], got[20];
    for (int i = 0; i < 20; ++i) a[i] = (float)i, b[i] = -1.0f;
    amp_array *A = NULL, *B = NULL;
    ASSERT_OK(amp_array_create(f.q, 4, amp_extent_2d(4, 5), a, &A));
    ASSERT_OK(amp_array_create(f.q, 4, amp_extent_2d(4, 5), b, &B));
    amp_array_view *va = NULL, *vb = NULL, *sa = NULL, *sb = NULL;
    ASSERT_OK(amp_array_view_of_array(A, &va));
    ASSERT_OK(amp_array_view_of_array(B, &vb));
    ASSERT_OK(amp_array_view_section(va, amp_index_2d(0, 0), amp_extent_2d(0, 5), &sa));
    ASSERT_OK(amp_array_view_section(vb, amp_index_2d(0, 0), amp_extent_2d(0, 5), &sb));
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_OK(amp_copy_view(sa, sb));
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    ASSERT_OK(amp_graph_launch(f.q, g));
    ASSERT_OK(amp_array_copy_to_host(B, got));
    for (int i = 0; i < 20; ++i) cr_assert_eq(got[i], -1.0f, "b[%d] = %g after the replay", i, got[i]);
    ASSERT_OK(amp_graph_destroy(g));
    amp_array_view *views[] = {sa, sb, va, vb};
    for (int i = 0; i < 4; ++i) ASSERT_OK(amp_array_view_destroy(views[i]));
    ASSERT_OK(amp_array_destroy(A));
    ASSERT_OK(amp_array_destroy(B));
    teardown(&f);
}

static void *open_gate_later(void *arg)
{
    usleep(300 * 1000);
    __atomic_store_n((int *)arg, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* A graph that recorded no command (here a copy of no elements of rank 4,
 * which queues none) replays as nothing: the data it names keep their last
 * use, so the host still waits for a launch queued before it that writes
 * them (the replay once left them with none, and the host read A while
 * the gated launch that writes it still waited). */
Test(graph, a_replay_of_nothing_keeps_the_datas_last_launch)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    fixture f;
    setup(&f, acc);
    amp_kernel *gated = test_kernel(f.p, "graph_gated_set");
    amp_accelerator_view *q2 = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q2));
    int32_t zero[2] = {0, 0}, got[2] = {0, 0};
    amp_array *A = NULL, *B = NULL;
    ASSERT_OK(amp_array_create(f.q, 4, amp_extent_4d(2, 1, 1, 1), zero, &A));
    ASSERT_OK(amp_array_create(f.q, 4, amp_extent_4d(2, 1, 1, 1), zero, &B));
    amp_array_view *va = NULL, *vb = NULL, *sa = NULL, *sb = NULL;
    ASSERT_OK(amp_array_view_of_array(A, &va));
    ASSERT_OK(amp_array_view_of_array(B, &vb));
    ASSERT_OK(amp_array_view_section(va, amp_index_4d(0, 0, 0, 0), amp_extent_4d(0, 1, 1, 1), &sa));
    ASSERT_OK(amp_array_view_section(vb, amp_index_4d(0, 0, 0, 0), amp_extent_4d(0, 1, 1, 1), &sb));
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_begin_recording(q2));
    ASSERT_OK(amp_copy_view(sa, sb));
    ASSERT_OK(amp_graph_end_recording(q2, &g));
    static int gate;
    gate = 0;
    amp_arg args[] = {amp_arg_view(va), amp_arg_uint64((uint64_t)(uintptr_t)&gate), amp_arg_int32(7)};
    amp_future *fut = NULL;
    ASSERT_OK(amp_parallel_for_each_async(q2, amp_extent_4d(2, 1, 1, 1), gated, args, 3, &fut));
    pthread_t opener;
    cr_assert_eq(pthread_create(&opener, NULL, open_gate_later, &gate), 0);
    ASSERT_OK(amp_graph_launch(q2, g));
    ASSERT_OK(amp_array_copy_to_host(A, got));
    pthread_join(opener, NULL);
    ASSERT_OK(amp_future_wait(fut));
    cr_assert(got[0] == 7 && got[1] == 7, "A read as %d %d: the host did not wait for the launch that writes it",
              got[0], got[1]);
    ASSERT_OK(amp_future_destroy(fut));
    ASSERT_OK(amp_graph_destroy(g));
    amp_array_view *views[] = {sa, sb, va, vb};
    for (int i = 0; i < 4; ++i) ASSERT_OK(amp_array_view_destroy(views[i]));
    ASSERT_OK(amp_array_destroy(A));
    ASSERT_OK(amp_array_destroy(B));
    ASSERT_OK(amp_accelerator_view_destroy(q2));
    teardown(&f);
}

/* ----------------------------------------------------------- coherence */

/* Coherence at each replay: the host's refreshed change of an input is
 * copied in (that part only), the outputs are device-newer after a replay
 * and a synchronize copies back what the last replay wrote; an input that
 * did not change is not copied again. */
ACCEL_TEST(graph, coherence_is_settled_at_each_replay)
{
    fixture f;
    setup(&f, acc);
    bool uni = unified(acc);
    static float x[N], y[N];
    for (int i = 0; i < N; ++i) {
        x[i] = 1.0f;
        y[i] = 0.0f;
    }
    amp_array_view *vx = test_view(x, 4, amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vy = test_view(y, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(vy), amp_arg_view(vx), amp_arg_float32(1.0f)};
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.axpy, a, 3));
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    amp_stats st;
    ASSERT_OK(amp_accelerator_view_reset_stats(f.q));
    ASSERT_OK(amp_graph_launch(f.q, g)); /* first: x and y copied in (discrete) */
    ASSERT_OK(amp_graph_launch(f.q, g)); /* second: nothing moves */
    ASSERT_OK(amp_accelerator_view_get_stats(f.q, &st));
    cr_assert_eq(st.bytes_to_device, uni ? 0 : 2 * N * 4, "%llu bytes to the device",
                 (unsigned long long)st.bytes_to_device);
    cr_assert_eq(st.bytes_to_host, 0, "nothing comes back before the host asks");
    ASSERT_OK(amp_array_view_synchronize(vy));
    for (int i = 0; i < N; ++i) cr_assert_eq(y[i], 2.0f, "y[%d] = %g after 2 replays", i, (double)y[i]);
    /* The host changes a part of x and says so. */
    amp_array_view *part = NULL;
    ASSERT_OK(amp_array_view_section(vx, amp_index_1d(256), amp_extent_1d(256), &part));
    for (int i = 256; i < 512; ++i) x[i] = 10.0f;
    ASSERT_OK(amp_array_view_refresh(part));
    ASSERT_OK(amp_accelerator_view_reset_stats(f.q));
    ASSERT_OK(amp_graph_launch(f.q, g));
    ASSERT_OK(amp_accelerator_view_get_stats(f.q, &st));
    cr_assert_eq(st.bytes_to_device, uni ? 0 : 256 * 4, "the refreshed part only: %llu bytes",
                 (unsigned long long)st.bytes_to_device);
    /* destroy synchronizes: what the last replay wrote comes back. */
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_array_view_destroy(part));
    ASSERT_OK(amp_array_view_destroy(vy));
    for (int i = 0; i < N; ++i) {
        float w = i >= 256 && i < 512 ? 12.0f : 3.0f;
        cr_assert_eq(y[i], w, "y[%d] = %g, want %g", i, (double)y[i], (double)w);
    }
    ASSERT_OK(amp_array_view_destroy(vx));
    teardown(&f);
}

/* An AMP_WRITE_ONLY output is never copied in, replay after replay. */
ACCEL_TEST(graph, write_only_output_is_not_copied_in)
{
    fixture f;
    setup(&f, acc);
    static float a[N], b[N], c[N];
    fill_dyadic(a, N, 3);
    fill_dyadic(b, N, 4);
    for (int i = 0; i < N; ++i) c[i] = POISON_F32;
    amp_array_view *va = test_view(a, 4, amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vb = test_view(b, 4, amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vc = test_view(c, 4, amp_extent_1d(N), AMP_WRITE_ONLY);
    amp_arg s[] = {amp_arg_view(va), amp_arg_view(vb), amp_arg_view(vc)};
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.step, s, 3));
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    ASSERT_OK(amp_accelerator_view_reset_stats(f.q));
    for (int r = 0; r < 3; ++r) ASSERT_OK(amp_graph_launch(f.q, g));
    amp_stats st;
    ASSERT_OK(amp_accelerator_view_get_stats(f.q, &st));
    cr_assert_eq(st.bytes_to_device, unified(acc) ? 0 : 2 * N * 4, "a and b only: %llu bytes",
                 (unsigned long long)st.bytes_to_device);
    ASSERT_OK(amp_array_view_synchronize(vc));
    for (int i = 0; i < N; ++i) cr_assert_eq(c[i], a[i] * 0.5f + b[i], "c[%d]", i);
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_array_view_destroy(va));
    ASSERT_OK(amp_array_view_destroy(vb));
    ASSERT_OK(amp_array_view_destroy(vc));
    teardown(&f);
}

/* ------------------------------------------------------------ refusals */

Test(graph, begin_refuses_null_and_default_views)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_accelerator_view *dq = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &dq));
    ASSERT_STATUS(amp_graph_begin_recording(NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_graph_begin_recording(dq), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "default view"), "%s", amp_last_error());
    amp_graph *g = (amp_graph *)1;
    ASSERT_STATUS(amp_graph_end_recording(dq, &g), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(g);
    ASSERT_STATUS(amp_graph_end_recording(NULL, &g), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_graph_launch(NULL, NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_graph_get_info(NULL, NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_graph_destroy(NULL));
}

/* Recordings do not nest: not twice on a view, not on a second view from a
 * thread that records. Ending one that does not exist is refused. */
ACCEL_TEST(graph, recordings_do_not_nest)
{
    fixture f;
    setup(&f, acc);
    amp_accelerator_view *q2 = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q2));
    amp_graph *g = NULL;
    ASSERT_STATUS(amp_graph_end_recording(f.q, &g), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_STATUS(amp_graph_begin_recording(f.q), AMP_ERROR_BUSY);
    cr_assert(strstr(amp_last_error(), "do not nest"), "%s", amp_last_error());
    ASSERT_STATUS(amp_graph_begin_recording(q2), AMP_ERROR_BUSY);
    ASSERT_STATUS(amp_graph_end_recording(q2, &g), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    amp_graph_info info;
    ASSERT_OK(amp_graph_get_info(g, &info));
    cr_assert_str_eq(info.implementation, "empty");
    ASSERT_OK(amp_graph_launch(f.q, g)); /* does nothing */
    ASSERT_OK(amp_graph_destroy(g));
    /* The view records again, and q2 can now. */
    ASSERT_OK(amp_graph_begin_recording(q2));
    ASSERT_OK(amp_graph_end_recording(q2, &g));
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_accelerator_view_destroy(q2));
    teardown(&f);
}

typedef struct other_thread {
    fixture *f;
    amp_array_view *v;
    amp_status begin, launch, empty, end, wait;
    char msg[512], empty_msg[512];
} other_thread;

static void *other_thread_main(void *arg)
{
    other_thread *o = arg;
    amp_graph *g = NULL;
    o->begin = amp_graph_begin_recording(o->f->q);
    amp_arg s[] = {amp_arg_view(o->v), amp_arg_view(o->v), amp_arg_float32(1.0f)};
    o->launch = amp_parallel_for_each(o->f->q, amp_extent_1d(N), o->f->axpy, s, 3);
    snprintf(o->msg, sizeof o->msg, "%s", amp_last_error());
    o->empty = amp_parallel_for_each(o->f->q, amp_extent_1d(0), o->f->axpy, s, 3);
    snprintf(o->empty_msg, sizeof o->empty_msg, "%s", amp_last_error());
    o->end = amp_graph_end_recording(o->f->q, &g);
    o->wait = amp_accelerator_view_wait(o->f->q);
    return NULL;
}

/* A recording belongs to its thread: another thread can neither begin nor
 * end one on the view, launch on it (not even over an empty domain, which
 * runs nothing but is still a command on the view), nor wait for it
 * meanwhile. */
ACCEL_TEST(graph, another_thread_is_refused_while_a_view_records)
{
    fixture f;
    setup(&f, acc);
    static float y[N];
    amp_array_view *v = test_view(y, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_arg s[] = {amp_arg_view(v), amp_arg_view(v), amp_arg_float32(1.0f)};
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.axpy, s, 3));
    other_thread o = {.f = &f, .v = v};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, other_thread_main, &o), 0);
    pthread_join(th, NULL);
    cr_assert_eq(o.begin, AMP_ERROR_BUSY, "begin from another thread: %s", amp_status_name(o.begin));
    cr_assert_eq(o.launch, AMP_ERROR_BUSY, "launch from another thread: %s", amp_status_name(o.launch));
    cr_assert(strstr(o.msg, "another thread"), "%s", o.msg);
    cr_assert_eq(o.empty, AMP_ERROR_BUSY, "empty-domain launch from another thread: %s", amp_status_name(o.empty));
    cr_assert(strstr(o.empty_msg, "another thread"), "%s", o.empty_msg);
    cr_assert_eq(o.end, AMP_ERROR_BUSY, "end from another thread: %s", amp_status_name(o.end));
    cr_assert_eq(o.wait, AMP_ERROR_BUSY, "wait from another thread: %s", amp_status_name(o.wait));
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    amp_graph_info info;
    ASSERT_OK(amp_graph_get_info(g, &info));
    cr_assert_eq(info.launches, 1, "only the recording thread's launch: %llu", (unsigned long long)info.launches);
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_array_view_destroy(v));
    teardown(&f);
}

typedef struct copier {
    amp_array *src, *dst;
    amp_status st;
    char msg[512];
} copier;

static void *copier_main(void *arg)
{
    copier *c = arg;
    c->st = amp_copy_array(c->src, c->dst);
    snprintf(c->msg, sizeof c->msg, "%s", amp_last_error());
    return NULL;
}

/* While q records, a copy between an array of q (or a view of one) and
 * the host (a staging array, a host view), and any copy of q's arrays
 * from another thread, is refused, on every accelerator alike: nothing
 * moves, and only the recording thread's copy between q's arrays is in
 * the graph. Where both sides are host-addressable (the CPU accelerator)
 * such copies once ran at once, while a GPU refused them. */
static void copies_with_the_host_are_refused_while_recording(amp_accelerator *acc)
{
    fixture f;
    setup(&f, acc);
    static int32_t init[N], host[N], got[N];
    for (int i = 0; i < N; ++i) init[i] = 10, host[i] = 30;
    int32_t *a0 = test_xmalloc(sizeof init), *b0 = test_xmalloc(sizeof init);
    for (int i = 0; i < N; ++i) a0[i] = 42, b0[i] = 7;
    amp_array *A = NULL, *B = NULL, *S = NULL;
    ASSERT_OK(amp_array_create(f.q, 4, amp_extent_1d(N), a0, &A));
    ASSERT_OK(amp_array_create(f.q, 4, amp_extent_1d(N), b0, &B));
    ASSERT_OK(amp_array_create_staging(f.q, 4, amp_extent_1d(N), init, &S));
    amp_array_view *hv = test_view(host, 4, amp_extent_1d(N), AMP_READ_WRITE), *bv = NULL;
    ASSERT_OK(amp_array_view_of_array(B, &bv));
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_STATUS(amp_copy_array(S, A), AMP_ERROR_BUSY);
    cr_assert(strstr(amp_last_error(), "amp_copy_array (its destination is an array of this view") &&
                  strstr(amp_last_error(), "records a graph on this thread"),
              "%s", amp_last_error());
    ASSERT_STATUS(amp_copy_array(A, S), AMP_ERROR_BUSY);
    cr_assert(strstr(amp_last_error(), "its source is an array of this view"), "%s", amp_last_error());
    amp_future *fut = (amp_future *)1;
    ASSERT_STATUS(amp_copy_view_async(hv, bv, &fut), AMP_ERROR_BUSY);
    cr_assert(strstr(amp_last_error(), "amp_copy_view_async (its destination"), "%s", amp_last_error());
    cr_assert_null(fut);
    ASSERT_STATUS(amp_copy_view(bv, hv), AMP_ERROR_BUSY);
    copier c = {.src = A, .dst = B};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, copier_main, &c), 0);
    pthread_join(th, NULL);
    cr_assert_eq(c.st, AMP_ERROR_BUSY, "a copy between q's arrays from another thread: %s", amp_status_name(c.st));
    cr_assert(strstr(c.msg, "amp_copy_array (its source") && strstr(c.msg, "another thread"), "%s", c.msg);
    ASSERT_OK(amp_copy_array(A, B)); /* the recording thread's: recorded */
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    amp_graph_info info;
    ASSERT_OK(amp_graph_get_info(g, &info));
    cr_assert_eq(info.copies, 1, "only the recorded copy: %llu", (unsigned long long)info.copies);
    ASSERT_OK(amp_array_copy_to_host(A, got));
    test_check_i32(got, a0, N, "A after the recording");
    ASSERT_OK(amp_array_copy_to_host(B, got));
    test_check_i32(got, b0, N, "B after the recording (nothing moved)");
    ASSERT_OK(amp_array_view_synchronize(hv));
    for (int i = 0; i < N; ++i) cr_assert_eq(host[i], 30, "host[%d] = %d", i, host[i]);
    ASSERT_OK(amp_array_copy_to_host(S, got));
    test_check_i32(got, init, N, "the staging array S after the recording (its refused copy moved nothing)");
    ASSERT_OK(amp_graph_launch(f.q, g));
    ASSERT_OK(amp_array_copy_to_host(B, got));
    test_check_i32(got, a0, N, "B after the replay");
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_array_view_destroy(bv));
    ASSERT_OK(amp_array_view_destroy(hv));
    ASSERT_OK(amp_array_destroy(A));
    ASSERT_OK(amp_array_destroy(B));
    ASSERT_OK(amp_array_destroy(S));
    free(a0);
    free(b0);
    teardown(&f);
}

ACCEL_TEST(graph, copies_with_the_host_are_refused_while_recording)
{
    copies_with_the_host_are_refused_while_recording(acc);
}

Test(graph, copies_with_the_host_are_refused_while_recording_cpu_copying, .init = test_cpu_copying)
{
    copies_with_the_host_are_refused_while_recording(test_accel(TEST_ACCEL_CPU));
}

/* The axpy tests' data: y[i] = i read-write, x[i] = 1 read-only, as views
 * of static arrays (y stays readable after the views go). */
static float axpy_y[N], axpy_x[N];
static void axpy_views(amp_array_view **vy, amp_array_view **vx)
{
    for (int i = 0; i < N; ++i) axpy_y[i] = (float)i, axpy_x[i] = 1.0f;
    *vy = test_view(axpy_y, 4, amp_extent_1d(N), AMP_READ_WRITE);
    *vx = test_view(axpy_x, 4, amp_extent_1d(N), AMP_READ_ONLY);
}

/* The fixture, those views and axpy's arguments (y += a * x); returns y. */
static float *axpy_setup(fixture *f, amp_accelerator *acc, float a, amp_array_view **vy, amp_array_view **vx,
                         amp_arg s[3])
{
    setup(f, acc);
    axpy_views(vy, vx);
    s[0] = amp_arg_view(*vy);
    s[1] = amp_arg_view(*vx);
    s[2] = amp_arg_float32(a);
    return axpy_y;
}

/* Ending without somewhere to put the graph is refused, and the recording
 * stops all the same (discarded): the view runs and waits again, its data
 * is the host's again, and a new recording may begin. */
ACCEL_TEST(graph, end_recording_without_out_stops_the_recording)
{
    fixture f;
    amp_array_view *vy, *vx;
    amp_arg s[3];
    float *y = axpy_setup(&f, acc, 2.0f, &vy, &vx, s);
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.axpy, s, 3));
    ASSERT_STATUS(amp_graph_end_recording(f.q, NULL), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "out"), "%s", amp_last_error());
    /* Not recording any more: nothing to end, the view waits and runs. */
    amp_graph *g = (amp_graph *)1;
    ASSERT_STATUS(amp_graph_end_recording(f.q, &g), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(g);
    ASSERT_OK(amp_accelerator_view_wait(f.q));
    ASSERT_OK(amp_array_view_synchronize(vy));
    for (int i = 0; i < N; ++i) cr_assert_eq(y[i], (float)i, "the discarded launch ran: y[%d] = %g", i, y[i]);
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.axpy, s, 3));
    ASSERT_OK(amp_array_view_synchronize(vy));
    for (int i = 0; i < N; ++i) cr_assert_eq(y[i], (float)i + 2.0f, "y[%d] = %g", i, y[i]);
    /* This thread records again, and the views are bound to no graph. */
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.axpy, s, 3));
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    ASSERT_OK(amp_graph_launch(f.q, g));
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_array_view_synchronize(vy));
    for (int i = 0; i < N; ++i) cr_assert_eq(y[i], (float)i + 4.0f, "y[%d] = %g", i, y[i]);
    /* Nothing recording: NULL out is refused as before, with nothing to stop. */
    ASSERT_STATUS(amp_graph_end_recording(f.q, NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_array_view_destroy(vy));
    ASSERT_OK(amp_array_view_destroy(vx));
    teardown(&f);
}

typedef struct quitter {
    amp_accelerator_view *q;
    amp_kernel *axpy;
    amp_arg *args;
    amp_status begin, launch;
    amp_status late;    /* a launch from a key destructor after the library's */
    char late_msg[512]; /* its message */
} quitter;

/* Begins recording on q, records one launch, and exits without ending. */
static void *quitter_main(void *arg)
{
    quitter *t = arg;
    t->begin = amp_graph_begin_recording(t->q);
    t->launch = amp_parallel_for_each(t->q, amp_extent_1d(N), t->axpy, t->args, 3);
    return NULL;
}

static void quit_while_recording(quitter *t)
{
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, quitter_main, t), 0);
    pthread_join(th, NULL);
    cr_assert_eq(t->begin, AMP_OK, "begin: %s", amp_status_name(t->begin));
    cr_assert_eq(t->launch, AMP_OK, "launch: %s", amp_status_name(t->launch));
}

/* A recording whose thread exited belongs to no one: the view still runs
 * nothing else, but any thread may end it (and gets what was recorded),
 * and destroying the view discards it. */
ACCEL_TEST(graph, a_recording_whose_thread_exited_can_be_ended_or_discarded)
{
    fixture f;
    amp_array_view *vy, *vx;
    amp_arg s[3];
    float *y = axpy_setup(&f, acc, 3.0f, &vy, &vx, s);

    quitter t = {.q = f.q, .axpy = f.axpy, .args = s};
    quit_while_recording(&t);
    /* Still recording: other commands are refused, saying why. */
    ASSERT_STATUS(amp_parallel_for_each(f.q, amp_extent_1d(N), f.axpy, s, 3), AMP_ERROR_BUSY);
    cr_assert(strstr(amp_last_error(), "exited"), "%s", amp_last_error());
    ASSERT_STATUS(amp_graph_begin_recording(f.q), AMP_ERROR_BUSY);
    /* Ended here, it is a graph of what the thread recorded. */
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    amp_graph_info info;
    ASSERT_OK(amp_graph_get_info(g, &info));
    cr_assert_eq(info.launches, 1, "launches recorded: %llu", (unsigned long long)info.launches);
    ASSERT_OK(amp_graph_launch(f.q, g));
    ASSERT_OK(amp_graph_launch(f.q, g));
    ASSERT_OK(amp_array_view_synchronize(vy));
    for (int i = 0; i < N; ++i) cr_assert_eq(y[i], (float)i + 6.0f, "y[%d] = %g", i, y[i]);
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_accelerator_view_wait(f.q));

    /* Destroying the view discards it, and unbinds what it used. */
    amp_accelerator_view *q2 = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q2));
    quitter t2 = {.q = q2, .axpy = f.axpy, .args = s};
    quit_while_recording(&t2);
    ASSERT_STATUS(amp_array_view_synchronize(vy), AMP_ERROR_BUSY);
    ASSERT_OK(amp_accelerator_view_destroy(q2));
    ASSERT_OK(amp_array_view_synchronize(vy));
    for (int i = 0; i < N; ++i) cr_assert_eq(y[i], (float)i + 6.0f, "the discarded launch ran: y[%d] = %g", i, y[i]);
    ASSERT_OK(amp_array_view_destroy(vy));
    ASSERT_OK(amp_array_view_destroy(vx));
    teardown(&f);
}

/* A view whose data a recording uses (through a sibling section, so the
 * view itself is in no graph) is not destroyed: its synchronization would
 * be refused, so its destroy is refused, nothing freed, and the kernel's
 * writes into it reach the host once the recording ended. Before, the
 * destroy said AMP_ERROR_BUSY but had freed the view, and on a copying
 * accelerator its device-newer elements were dropped with its data. */
ACCEL_TEST(graph, a_view_whose_data_a_recording_uses_is_not_destroyed)
{
    fixture f;
    setup(&f, acc);
    static float y[N], x[N];
    for (int i = 0; i < N; ++i) {
        y[i] = 0.0f;
        x[i] = 1.0f;
    }
    amp_array_view *vy = NULL, *vx = NULL, *lo = NULL, *hi = NULL;
    ASSERT_OK(amp_array_view_create(y, sizeof y[0], amp_extent_1d(N), AMP_READ_WRITE, &vy));
    ASSERT_OK(amp_array_view_create(x, sizeof x[0], amp_extent_1d(N), AMP_READ_ONLY, &vx));
    ASSERT_OK(amp_array_view_section(vy, amp_index_1d(0), amp_extent_1d(N / 2), &lo));
    ASSERT_OK(amp_array_view_section(vy, amp_index_1d(N / 2), amp_extent_1d(N / 2), &hi));
    amp_array_view *xlo = NULL;
    ASSERT_OK(amp_array_view_section(vx, amp_index_1d(0), amp_extent_1d(N / 2), &xlo));
    amp_arg a_lo[3] = {amp_arg_view(lo), amp_arg_view(xlo), amp_arg_float32(111.0f)};
    amp_arg a_hi[3] = {amp_arg_view(hi), amp_arg_view(xlo), amp_arg_float32(222.0f)};
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N / 2), f.axpy, a_lo, 3));
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N / 2), f.axpy, a_hi, 3));
    ASSERT_STATUS(amp_array_view_destroy(lo), AMP_ERROR_BUSY);
    cr_assert(strstr(amp_last_error(), "amp_array_view_destroy") && strstr(amp_last_error(), "recorded"), "%s",
              amp_last_error());
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    ASSERT_OK(amp_graph_launch(f.q, g));
    ASSERT_OK(amp_graph_destroy(g));
    /* Still lo's, and its destroy synchronizes now. */
    ASSERT_OK(amp_array_view_destroy(lo));
    ASSERT_OK(amp_array_view_destroy(hi));
    ASSERT_OK(amp_array_view_destroy(xlo));
    ASSERT_OK(amp_array_view_destroy(vy));
    ASSERT_OK(amp_array_view_destroy(vx));
    for (int i = 0; i < N; ++i)
        cr_assert_eq(y[i], i < N / 2 ? 111.0f : 222.0f, "y[%d] = %g", i, y[i]);
    teardown(&f);
}

/* A key destructor of the program's runs at the recording thread's exit
 * after the library's (its key made later) and launches on the view: the
 * thread records no more, so the launch is refused as another thread's
 * would be, and the graph holds what the thread recorded while it ran. */
static pthread_key_t late_graph_key;

static void late_graph_launch(void *arg)
{
    quitter *t = arg;
    t->late = amp_parallel_for_each(t->q, amp_extent_1d(N), t->axpy, t->args, 3);
    snprintf(t->late_msg, sizeof t->late_msg, "%s", amp_last_error());
}

static void *late_quitter_main(void *arg)
{
    quitter_main(arg);
    (void)pthread_setspecific(late_graph_key, arg);
    return NULL;
}

ACCEL_TEST(graph, a_launch_from_a_key_destructor_after_the_recording_thread_exited_is_not_recorded)
{
    fixture f;
    amp_array_view *vy, *vx;
    amp_arg s[3];
    float *y = axpy_setup(&f, acc, 3.0f, &vy, &vx, s);
    /* The library's key for recordings first (a recording of nothing
     * here), so that this test's key comes after it. */
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    ASSERT_OK(amp_graph_destroy(g));
    cr_assert_eq(pthread_key_create(&late_graph_key, late_graph_launch), 0);
    quitter t = {.q = f.q, .axpy = f.axpy, .args = s, .late = AMP_OK};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, late_quitter_main, &t), 0);
    pthread_join(th, NULL);
    cr_assert_eq(t.begin, AMP_OK, "begin: %s", amp_status_name(t.begin));
    cr_assert_eq(t.launch, AMP_OK, "launch: %s", amp_status_name(t.launch));
    cr_assert_eq(t.late, AMP_ERROR_BUSY, "the launch from the later key destructor: %s (%s), want AMP_ERROR_BUSY",
                 amp_status_name(t.late), t.late_msg);
    cr_assert(strstr(t.late_msg, "exited"), "%s", t.late_msg);
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    amp_graph_info info;
    ASSERT_OK(amp_graph_get_info(g, &info));
    cr_assert_eq(info.launches, 1, "launches recorded: %llu", (unsigned long long)info.launches);
    ASSERT_OK(amp_graph_launch(f.q, g));
    ASSERT_OK(amp_array_view_synchronize(vy));
    for (int i = 0; i < N; ++i) cr_assert_eq(y[i], (float)i + 3.0f, "y[%d] = %g", i, y[i]);
    ASSERT_OK(amp_graph_destroy(g));
    pthread_key_delete(late_graph_key);
    ASSERT_OK(amp_array_view_destroy(vy));
    ASSERT_OK(amp_array_view_destroy(vx));
    teardown(&f);
}

/* Racers on one orphaned recording. Each waits at the barrier, then ends
 * the recording its way (kind): 0 keeps the graph, 1 passes no out (the
 * recording is discarded), 2 destroys the graph at once and leaves a new
 * orphaned recording on another view (q3), whose graph may reuse the
 * memory of the one just freed, 3 destroys the graph at once. */
typedef struct racer {
    pthread_barrier_t *go;
    amp_accelerator_view *q, *q3;
    quitter *orphan3;
    int kind;
    amp_status st;
    amp_graph *g;
    uint64_t launches;
    bool stopped; /* out NULL and this call stopped the recording */
    bool orphaned3;
    char msg[512];
} racer;

static void *racer_main(void *arg)
{
    racer *r = arg;
    pthread_barrier_wait(r->go);
    r->st = amp_graph_end_recording(r->q, r->kind == 1 ? NULL : &r->g);
    snprintf(r->msg, sizeof r->msg, "%s", r->st == AMP_OK ? "" : amp_last_error());
    r->stopped = r->kind == 1 && r->st == AMP_ERROR_INVALID_ARGUMENT && strstr(r->msg, "recording stopped");
    if (r->g) {
        amp_graph_info info;
        if (amp_graph_get_info(r->g, &info) == AMP_OK) r->launches = info.launches;
    }
    if (r->g && (r->kind == 2 || r->kind == 3)) {
        if (amp_graph_destroy(r->g) != AMP_OK) r->launches = 99;
        r->g = NULL;
        if (r->kind == 2) {
            quit_while_recording(r->orphan3);
            r->orphaned3 = true;
        }
    }
    return NULL;
}

/* Threads ending one orphaned recording at once: exactly one ends it (a
 * graph of what was recorded, or, without out, the recording stopped),
 * the others get AMP_ERROR_BUSY (another thread is ending it) or
 * AMP_ERROR_INVALID_ARGUMENT (no longer recording), and none touches the
 * recording after the winner freed it (a later recording on another view
 * is left to its own view). */
ACCEL_TEST(graph, threads_racing_to_end_an_orphaned_recording_get_one_graph, .timeout = 240)
{
    fixture f;
    amp_array_view *vy, *vx;
    amp_arg s[3];
    float *y = axpy_setup(&f, acc, 3.0f, &vy, &vx, s);
    enum { RACERS = 4, ROUNDS = 200 };
    pthread_barrier_t go;
    cr_assert_eq(pthread_barrier_init(&go, NULL, RACERS), 0);
    int wins[4] = {0};
    for (int round = 0; round < ROUNDS; ++round) {
        amp_accelerator_view *q3 = NULL;
        ASSERT_OK(amp_accelerator_view_create(acc, &q3));
        quitter t = {.q = f.q, .axpy = f.axpy, .args = s}, t3 = {.q = q3, .axpy = f.axpy, .args = s};
        quit_while_recording(&t);
        racer r[RACERS];
        pthread_t th[RACERS];
        for (int i = 0; i < RACERS; ++i) {
            r[i] = (racer){.go = &go, .q = f.q, .q3 = q3, .orphan3 = &t3, .kind = (i + round) % 4};
            cr_assert_eq(pthread_create(&th[i], NULL, racer_main, &r[i]), 0);
        }
        for (int i = 0; i < RACERS; ++i) pthread_join(th[i], NULL);
        int ended = 0;
        for (int i = 0; i < RACERS; ++i) {
            if (r[i].st == AMP_OK || r[i].stopped) {
                ended++;
                wins[r[i].kind]++;
                if (r[i].st == AMP_OK)
                    cr_assert_eq(r[i].launches, 1, "round %d: kind %d's graph has %llu launches", round, r[i].kind,
                                 (unsigned long long)r[i].launches);
                continue;
            }
            cr_assert(r[i].st == AMP_ERROR_BUSY || r[i].st == AMP_ERROR_INVALID_ARGUMENT,
                      "round %d: a losing end returned %s: %s", round, amp_status_name(r[i].st), r[i].msg);
            cr_assert(r[i].st == AMP_ERROR_BUSY ? strstr(r[i].msg, "another thread is ending") != NULL
                                                : strstr(r[i].msg, "not recording") != NULL,
                      "round %d: %s: %s", round, amp_status_name(r[i].st), r[i].msg);
        }
        cr_assert_eq(ended, 1, "round %d: %d threads ended the one recording", round, ended);
        for (int i = 0; i < RACERS; ++i) ASSERT_OK(amp_graph_destroy(r[i].g));
        /* f.q records no more; q3's orphan is intact and still its own. */
        ASSERT_STATUS(amp_graph_end_recording(f.q, NULL), AMP_ERROR_INVALID_ARGUMENT);
        cr_assert(strstr(amp_last_error(), "not recording"), "round %d: %s", round, amp_last_error());
        bool orphaned3 = false;
        for (int i = 0; i < RACERS; ++i) orphaned3 = orphaned3 || r[i].orphaned3;
        if (orphaned3) {
            amp_graph *g3 = NULL;
            ASSERT_OK(amp_graph_end_recording(q3, &g3));
            amp_graph_info info;
            ASSERT_OK(amp_graph_get_info(g3, &info));
            cr_assert_eq(info.launches, 1, "round %d: q3's graph has %llu launches", round,
                         (unsigned long long)info.launches);
            ASSERT_OK(amp_graph_destroy(g3));
        }
        ASSERT_OK(amp_accelerator_view_destroy(q3));
    }
    pthread_barrier_destroy(&go);
    for (int k = 0; k < 4; ++k) cr_assert(wins[k] > 0, "kind %d never won in %d rounds", k, ROUNDS);
    /* Nothing recorded ran, and the data are free of every recording. */
    ASSERT_OK(amp_accelerator_view_wait(f.q));
    ASSERT_OK(amp_array_view_synchronize(vy));
    for (int i = 0; i < N; ++i) cr_assert_eq(y[i], (float)i, "a recorded launch ran: y[%d] = %g", i, (double)y[i]);
    ASSERT_OK(amp_array_view_destroy(vy));
    ASSERT_OK(amp_array_view_destroy(vx));
    teardown(&f);
}

typedef struct view_racer {
    pthread_barrier_t *go;
    amp_accelerator_view *q;
    bool destroy, keep;
    amp_status st;
    amp_graph *g;
    char msg[512];
} view_racer;

static void *view_racer_main(void *arg)
{
    view_racer *r = arg;
    pthread_barrier_wait(r->go);
    r->st = r->destroy ? amp_accelerator_view_destroy(r->q) : amp_graph_end_recording(r->q, r->keep ? &r->g : NULL);
    snprintf(r->msg, sizeof r->msg, "%s", r->st == AMP_OK ? "" : amp_last_error());
    return NULL;
}

/* Destroying a view while another thread ends its orphaned recording:
 * either the destroy discards the recording (the end then finds none, or
 * the view destroyed), or the end gets the graph and the destroy is
 * AMP_ERROR_BUSY; never a destroyed view with a graph recorded on it. */
ACCEL_TEST(graph, destroying_a_view_while_another_thread_ends_its_orphaned_recording, .timeout = 240)
{
    fixture f;
    amp_array_view *vy, *vx;
    amp_arg s[3];
    float *y = axpy_setup(&f, acc, 3.0f, &vy, &vx, s);
    enum { ROUNDS = 200 };
    pthread_barrier_t go;
    cr_assert_eq(pthread_barrier_init(&go, NULL, 2), 0);
    int destroyed_first = 0, ended_first = 0;
    for (int round = 0; round < ROUNDS; ++round) {
        amp_accelerator_view *q2 = NULL;
        ASSERT_OK(amp_accelerator_view_create(acc, &q2));
        quitter t = {.q = q2, .axpy = f.axpy, .args = s};
        quit_while_recording(&t);
        view_racer a = {.go = &go, .q = q2, .destroy = true}, b = {.go = &go, .q = q2, .keep = round % 4 != 3};
        pthread_t ta, tb;
        cr_assert_eq(pthread_create(&ta, NULL, view_racer_main, &a), 0);
        cr_assert_eq(pthread_create(&tb, NULL, view_racer_main, &b), 0);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        cr_assert(a.st == AMP_OK || a.st == AMP_ERROR_BUSY, "round %d: destroy: %s: %s", round,
                  amp_status_name(a.st), a.msg);
        if (a.st == AMP_OK) {
            destroyed_first++;
            cr_assert_null(b.g, "round %d: the view was destroyed while a graph recorded on it exists", round);
            cr_assert_neq(b.st, AMP_OK, "round %d: end after the discard returned AMP_OK", round);
            /* Not recording (or the view destroyed), or, without out, the
             * end stopped it first and the destroy found it stopped. */
            cr_assert(b.st == AMP_ERROR_INVALID_ARGUMENT || b.st == AMP_ERROR_BUSY, "round %d: end: %s: %s", round,
                      amp_status_name(b.st), b.msg);
            continue;
        }
        /* The end claimed the recording first: the destroy is refused
         * while it records or while its graph exists. */
        ended_first++;
        if (b.keep) {
            ASSERT_OK(b.st);
            cr_assert_not_null(b.g);
            ASSERT_STATUS(amp_accelerator_view_destroy(q2), AMP_ERROR_BUSY);
            cr_assert(strstr(amp_last_error(), "graph(s) recorded on this view"), "%s", amp_last_error());
            ASSERT_OK(amp_graph_destroy(b.g));
        } else {
            cr_assert(b.st == AMP_ERROR_INVALID_ARGUMENT && strstr(b.msg, "recording stopped"),
                      "round %d: destroy BUSY (%s), yet the end did not stop the recording: %s: %s", round, a.msg,
                      amp_status_name(b.st), b.msg);
        }
        ASSERT_OK(amp_accelerator_view_destroy(q2));
    }
    pthread_barrier_destroy(&go);
    cr_assert(destroyed_first + ended_first == ROUNDS);
    ASSERT_OK(amp_array_view_synchronize(vy));
    for (int i = 0; i < N; ++i) cr_assert_eq(y[i], (float)i, "a recorded launch ran: y[%d] = %g", i, (double)y[i]);
    ASSERT_OK(amp_array_view_destroy(vy));
    ASSERT_OK(amp_array_view_destroy(vx));
    teardown(&f);
}

/* While recording, what needs a result on the host, or waits for the
 * view, is refused and runs nothing; a failed launch is not recorded and
 * the recording goes on. */
ACCEL_TEST(graph, host_results_and_waits_are_refused_while_recording)
{
    fixture f;
    setup(&f, acc);
    static float y[N], h[N];
    for (int i = 0; i < N; ++i) y[i] = 1.0f;
    amp_array_view *vy = test_view(y, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *vh = test_view(h, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array *arr = NULL;
    ASSERT_OK(amp_array_create(f.q, 4, amp_extent_1d(N), y, &arr));
    amp_arg s[] = {amp_arg_view(vy), amp_arg_view(vy), amp_arg_float32(1.0f)};
    amp_arg bad[] = {amp_arg_view(vy)};
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.axpy, s, 3));
    ASSERT_STATUS(amp_parallel_for_each(f.q, amp_extent_1d(N), f.axpy, bad, 1), AMP_ERROR_ARGUMENT_MISMATCH);
    ASSERT_STATUS(amp_array_view_synchronize(vy), AMP_ERROR_BUSY);
    cr_assert(strstr(amp_last_error(), "graph being recorded"), "%s", amp_last_error());
    /* An array's initial copy is made before return, never recorded. */
    amp_array *more = (amp_array *)1;
    ASSERT_STATUS(amp_array_create(f.q, 4, amp_extent_1d(N), y, &more), AMP_ERROR_BUSY);
    cr_assert_null(more);
    cr_assert(strstr(amp_last_error(), "amp_array_create"), "%s", amp_last_error());
    ASSERT_STATUS(amp_accelerator_view_wait(f.q), AMP_ERROR_BUSY);
    ASSERT_STATUS(amp_copy_view(vy, vh), AMP_ERROR_BUSY);
    void *dptr = NULL;
    ASSERT_STATUS(amp_array_view_native_handle(vh, f.q, AMP_READ_WRITE, &dptr), AMP_ERROR_BUSY);
    ASSERT_STATUS(amp_array_copy_to_host(arr, h), AMP_ERROR_BUSY); /* its copies run on f.q */
    amp_arg sc[] = {amp_arg_view(vh), amp_arg_array(arr)};
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.scale, sc, 2));
    ASSERT_STATUS(amp_array_copy_from_host(arr, h), AMP_ERROR_BUSY);
    amp_graph *g = NULL;
    ASSERT_STATUS(amp_graph_launch(f.q, g), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    amp_graph_info info;
    ASSERT_OK(amp_graph_get_info(g, &info));
    cr_assert_eq(info.launches, 2, "the failed launch is not recorded: %llu", (unsigned long long)info.launches);
    for (int i = 0; i < N; ++i) cr_assert_eq(y[i], 1.0f, "recording ran something: y[%d] = %g", i, (double)y[i]);
    /* The refused copies moved nothing: vh (the copy's and copy_to_host's
     * destination) is still zero, arr (copy_from_host's) still y's ones. */
    ASSERT_OK(amp_array_view_synchronize(vh));
    for (int i = 0; i < N; ++i) cr_assert_eq(h[i], 0.0f, "a refused copy wrote h[%d] = %g", i, (double)h[i]);
    static float back[N];
    ASSERT_OK(amp_array_copy_to_host(arr, back));
    for (int i = 0; i < N; ++i)
        cr_assert_eq(back[i], 1.0f, "the refused copy_from_host wrote arr[%d] = %g", i, (double)back[i]);
    /* Launching a graph on its view while the view records is refused. */
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_STATUS(amp_graph_launch(f.q, g), AMP_ERROR_BUSY);
    amp_graph *empty = NULL;
    ASSERT_OK(amp_graph_end_recording(f.q, &empty));
    ASSERT_OK(amp_graph_destroy(empty));
    ASSERT_OK(amp_graph_launch(f.q, g));
    ASSERT_OK(amp_array_view_synchronize(vy));
    for (int i = 0; i < N; ++i) cr_assert_eq(y[i], 2.0f, "y[%d] = %g", i, (double)y[i]);
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_array_view_destroy(vy));
    ASSERT_OK(amp_array_view_destroy(vh));
    ASSERT_OK(amp_array_destroy(arr));
    teardown(&f);
}

/* An array the recording does not use, whose copies run on the recording
 * view: both host copies are refused by their own names before they do
 * anything (no copy counted on the view, the array's data unchanged). */
ACCEL_TEST(graph, host_copies_of_an_array_outside_the_recording_are_refused_by_name)
{
    fixture f;
    setup(&f, acc);
    static float ones[N], twos[N], got[N];
    for (int i = 0; i < N; ++i) ones[i] = 1.0f, twos[i] = 2.0f, got[i] = -1.0f;
    amp_array *arr = NULL;
    ASSERT_OK(amp_array_create(f.q, 4, amp_extent_1d(N), ones, &arr));
    ASSERT_OK(amp_accelerator_view_reset_stats(f.q));
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_STATUS(amp_array_copy_from_host(arr, twos), AMP_ERROR_BUSY);
    cr_assert(strstr(amp_last_error(), "amp_array_copy_from_host") && strstr(amp_last_error(), "recording"), "%s",
              amp_last_error());
    ASSERT_STATUS(amp_array_copy_to_host(arr, got), AMP_ERROR_BUSY);
    cr_assert(strstr(amp_last_error(), "amp_array_copy_to_host") && strstr(amp_last_error(), "recording"), "%s",
              amp_last_error());
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    amp_stats stats;
    ASSERT_OK(amp_accelerator_view_get_stats(f.q, &stats));
    cr_assert_eq(stats.copies_to_device + stats.copies_to_host, 0, "a refused copy was queued: %llu, %llu",
                 (unsigned long long)stats.copies_to_device, (unsigned long long)stats.copies_to_host);
    for (int i = 0; i < N; ++i) cr_assert_eq(got[i], -1.0f, "a refused copy_to_host wrote got[%d]", i);
    ASSERT_OK(amp_array_copy_to_host(arr, got));
    for (int i = 0; i < N; ++i)
        cr_assert_eq(got[i], 1.0f, "the refused copy_from_host wrote arr[%d] = %g", i, (double)got[i]);
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_array_destroy(arr));
    teardown(&f);
}

/* The algorithms that return their result on the host refuse data a
 * recording in progress uses, called on another view or with q NULL, from
 * the recording thread or another (AMP_ERROR_BUSY naming the argument):
 * they would read it, or copy_if write it, now, before the graph that
 * computes it runs, and return stale values with AMP_OK. Nothing is
 * written; once the graph runs they see its results. Another thread's
 * call on the recording view is told the recording is not its own. */
typedef struct alg_probe {
    amp_array_view *y;
    amp_accelerator_view *q; /* the recording view */
    amp_status reduce, on_q;
    char msg[512], msg_q[512];
} alg_probe;

static void *alg_probe_thread(void *p)
{
    alg_probe *a = p;
    int32_t r = -1;
    a->reduce = amp_reduce(NULL, amp_arg_view(a->y), AMP_TYPE_INT32, AMP_OP_SUM, &r);
    snprintf(a->msg, sizeof a->msg, "%s", amp_last_error());
    a->on_q = amp_reduce(a->q, amp_arg_view(a->y), AMP_TYPE_INT32, AMP_OP_SUM, &r);
    snprintf(a->msg_q, sizeof a->msg_q, "%s", amp_last_error());
    return NULL;
}

ACCEL_TEST(graph, host_result_algorithms_refuse_data_a_recording_uses)
{
    fixture f;
    setup(&f, acc);
    static int32_t x[N], y[N], o[N];
    for (int i = 0; i < N; ++i) x[i] = 1, y[i] = 0, o[i] = -7;
    amp_array_view *vx = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *vy = test_view(y, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *vo = test_view(o, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_accelerator_view *q2 = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q2));
    amp_reduction_desc rd = {.name = "isum", .inputs = "int v", .type = AMP_TYPE_INT64, .map = "v",
                             .reduce = "a + b", .identity = "0"};
    amp_reduction *red = NULL;
    ASSERT_OK(amp_reduction_create(acc, &rd, &red));
    /* Before the recording: the data is idle on the device side too. */
    ASSERT_OK(amp_scan(f.q, amp_arg_view(vx), amp_arg_view(vy), AMP_TYPE_INT32, AMP_OP_SUM, AMP_SCAN_EXCLUSIVE));
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_OK(amp_scan(f.q, amp_arg_view(vx), amp_arg_view(vy), AMP_TYPE_INT32, AMP_OP_SUM, AMP_SCAN_INCLUSIVE));
    int32_t r = -1;
    ASSERT_STATUS(amp_reduce(q2, amp_arg_view(vy), AMP_TYPE_INT32, AMP_OP_SUM, &r), AMP_ERROR_BUSY);
    cr_assert(strstr(amp_last_error(), "amp_reduce (in)") && strstr(amp_last_error(), "graph being recorded"), "%s",
              amp_last_error());
    /* Zeroed, as hipamp.h's out-parameters are on failure: not a sum of
     * the data as it was before the recording (which is not 0 here). */
    cr_assert_eq(r, 0, "a refused reduce gave %d, not 0", r);
    ASSERT_STATUS(amp_reduce(NULL, amp_arg_view(vy), AMP_TYPE_INT32, AMP_OP_SUM, &r), AMP_ERROR_BUSY);
    int32_t dot = -1;
    ASSERT_STATUS(amp_transform_reduce(q2, amp_arg_view(vx), amp_arg_view(vy), AMP_TYPE_INT32, AMP_MAP_PRODUCT,
                                       AMP_OP_SUM, &dot),
                  AMP_ERROR_BUSY);
    cr_assert(strstr(amp_last_error(), "amp_transform_reduce (x)"), "%s", amp_last_error());
    uint64_t c = 99;
    ASSERT_STATUS(amp_count_if(q2, amp_arg_view(vy), AMP_TYPE_INT32, "x > 0", NULL, &c), AMP_ERROR_BUSY);
    cr_assert(strstr(amp_last_error(), "amp_count_if (in)"), "%s", amp_last_error());
    ASSERT_STATUS(amp_copy_if(q2, amp_arg_view(vy), amp_arg_view(vo), AMP_TYPE_INT32, "true", NULL, &c),
                  AMP_ERROR_BUSY);
    cr_assert(strstr(amp_last_error(), "amp_copy_if (in)"), "%s", amp_last_error());
    /* copy_if would write the recording's data: refused as an output too. */
    static int32_t z[N];
    for (int i = 0; i < N; ++i) z[i] = 5;
    amp_array_view *vz = test_view(z, 4, amp_extent_1d(N), AMP_READ_WRITE);
    ASSERT_STATUS(amp_copy_if(q2, amp_arg_view(vz), amp_arg_view(vy), AMP_TYPE_INT32, "true", NULL, &c),
                  AMP_ERROR_BUSY);
    cr_assert(strstr(amp_last_error(), "amp_copy_if (out)"), "%s", amp_last_error());
    amp_arg ra[] = {amp_arg_view(vy)};
    int64_t rs = -1;
    ASSERT_STATUS(amp_reduction_apply(q2, red, ra, 1, &rs), AMP_ERROR_BUSY);
    cr_assert(strstr(amp_last_error(), "amp_reduction_apply (input 0 ('v'))"), "%s", amp_last_error());
    cr_assert(dot == 0 && rs == 0, "a refused call gave its result: dot %d, reduction %lld", dot, (long long)rs);
    alg_probe probe = {.y = vy, .q = f.q};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, alg_probe_thread, &probe), 0);
    pthread_join(t, NULL);
    cr_assert_eq(probe.reduce, AMP_ERROR_BUSY, "another thread's amp_reduce: %s (%s)", amp_status_name(probe.reduce),
                 probe.msg);
    /* On the recording view itself the reason is the owner, not the host
     * result (the _async form would be refused too). */
    cr_assert_eq(probe.on_q, AMP_ERROR_BUSY, "another thread's amp_reduce on q: %s (%s)", amp_status_name(probe.on_q),
                 probe.msg_q);
    cr_assert(strstr(probe.msg_q, "on another thread") && !strstr(probe.msg_q, "_async"), "%s", probe.msg_q);
    /* Data the recording does not use is free. */
    ASSERT_OK(amp_count_if(q2, amp_arg_view(vz), AMP_TYPE_INT32, "x == 5", NULL, &c));
    cr_assert_eq(c, (uint64_t)N, "count_if of untouched data: %llu", (unsigned long long)c);
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    ASSERT_OK(amp_array_view_synchronize(vy));
    for (int i = 0; i < N; ++i) cr_assert_eq(y[i], i, "the recording or a refused call ran: y[%d] = %d", i, y[i]);
    ASSERT_OK(amp_array_view_synchronize(vo));
    for (int i = 0; i < N; ++i) cr_assert_eq(o[i], -7, "a refused copy_if wrote o[%d] = %d", i, o[i]);
    ASSERT_OK(amp_graph_launch(f.q, g));
    ASSERT_OK(amp_reduce(q2, amp_arg_view(vy), AMP_TYPE_INT32, AMP_OP_SUM, &r));
    cr_assert_eq(r, N * (N + 1) / 2, "after the replay: %d", r);
    ASSERT_OK(amp_reduction_apply(NULL, red, ra, 1, &rs));
    cr_assert_eq(rs, (int64_t)N * (N + 1) / 2, "after the replay: %lld", (long long)rs);
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_reduction_destroy(red));
    ASSERT_OK(amp_array_view_destroy(vz));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_array_view_destroy(vy));
    ASSERT_OK(amp_array_view_destroy(vx));
    ASSERT_OK(amp_accelerator_view_destroy(q2));
    teardown(&f);
}

/* A continuation of the host features test: it records its status and
 * the status of a launch it makes on the recording view from the
 * continuation thread. */
typedef struct then_probe {
    atomic_int ran;
    amp_status status, launch;
    fixture *f;
    amp_arg *args;
} then_probe;

static void then_probe_fn(amp_status st, void *user)
{
    then_probe *p = user;
    p->status = st;
    if (p->f) p->launch = amp_parallel_for_each(p->f->q, amp_extent_1d(N), p->f->inc, p->args, 2);
    atomic_store(&p->ran, 1);
}

/* Until p ran (a generous bound: the continuation thread polls). */
static bool then_probe_wait(then_probe *p)
{
    for (int i = 0; i < 30000 && !atomic_load(&p->ran); ++i) usleep(1000);
    return atomic_load(&p->ran);
}

/* C++ AMP's host features on a view that records (hipamp_graph.h says
 * which are recorded and which refused), on a view of each queuing mode:
 * the mode is kept and changes nothing; flush is AMP_OK and hands over
 * the work queued before the recording (nothing recorded runs); a marker
 * covers the work queued on the view before the recording (waiting for it
 * is allowed and does not wait for, or run, what is recorded); a recorded
 * launch's future is complete at once, so a continuation on it runs at
 * once; a continuation that launches on the recording view is another
 * thread's command (AMP_ERROR_BUSY, not recorded). Every replay then runs
 * the recorded launches once. */
ACCEL_TEST(graph, host_features_while_recording)
{
    static const amp_queuing_mode modes[] = {AMP_QUEUING_AUTOMATIC, AMP_QUEUING_IMMEDIATE};
    for (size_t m = 0; m < 2; ++m) {
        fixture f;
        setup(&f, acc);
        ASSERT_OK(amp_accelerator_view_destroy(f.q));
        ASSERT_OK(amp_accelerator_view_create_with_mode(acc, modes[m], &f.q));
        static counted before, rec;
        counted_open(&f, &before);
        counted_open(&f, &rec);
        /* Queued before the recording: a marker made while recording covers it. */
        amp_future *pre = NULL;
        for (int i = 0; i < 3; ++i) {
            amp_future_destroy(pre);
            ASSERT_OK(amp_parallel_for_each_async(f.q, amp_extent_1d(N), f.inc, before.args, 2, &pre));
        }
        ASSERT_OK(amp_graph_begin_recording(f.q));
        amp_queuing_mode got = (amp_queuing_mode)-1;
        ASSERT_OK(amp_accelerator_view_get_queuing_mode(f.q, &got));
        cr_assert_eq(got, modes[m], "queuing mode while recording: %d", (int)got);
        amp_future *launched = NULL;
        ASSERT_OK(amp_parallel_for_each_async(f.q, amp_extent_1d(N), f.inc, rec.args, 2, &launched));
        ASSERT_OK(amp_accelerator_view_flush(f.q));
        amp_future *marker = NULL;
        ASSERT_OK(amp_accelerator_view_create_marker(f.q, &marker));
        ASSERT_OK(amp_future_wait(marker));
        bool done = false;
        ASSERT_OK(amp_future_is_ready(pre, &done));
        cr_assert(done, "mode %d: the marker completed before the work queued ahead of the recording", (int)modes[m]);
        ASSERT_OK(amp_future_is_ready(launched, &done));
        cr_assert(done, "a recorded launch's future is complete at once");
        /* Continuations: on the recorded launch (runs at once), on the
         * marker, and one that launches on the recording view. */
        then_probe on_launch = {.status = AMP_ERROR_DEVICE}, on_marker = {.status = AMP_ERROR_DEVICE};
        then_probe launcher = {.status = AMP_ERROR_DEVICE, .launch = AMP_OK, .f = &f, .args = rec.args};
        ASSERT_OK(amp_future_then(launched, then_probe_fn, &on_launch));
        ASSERT_OK(amp_future_then(marker, then_probe_fn, &on_marker));
        ASSERT_OK(amp_future_then(marker, then_probe_fn, &launcher));
        cr_assert(then_probe_wait(&on_launch) && then_probe_wait(&on_marker) && then_probe_wait(&launcher),
                  "a continuation did not run within 30 s");
        cr_assert_eq(on_launch.status, AMP_OK);
        cr_assert_eq(on_marker.status, AMP_OK);
        cr_assert_eq(launcher.launch, AMP_ERROR_BUSY, "a continuation's launch on the recording view: %s",
                     amp_status_name(launcher.launch));
        ASSERT_OK(amp_future_destroy(marker));
        ASSERT_OK(amp_future_destroy(launched));
        ASSERT_OK(amp_future_destroy(pre));
        amp_graph *g = NULL;
        ASSERT_OK(amp_graph_end_recording(f.q, &g));
        amp_graph_info info;
        ASSERT_OK(amp_graph_get_info(g, &info));
        cr_assert_eq(info.launches, 1, "recorded launches: %llu", (unsigned long long)info.launches);
        ASSERT_OK(amp_array_view_synchronize(rec.v));
        for (int i = 0; i < N; ++i) cr_assert_eq(rec.x[i], 0, "recording ran x[%d] = %d", i, rec.x[i]);
        for (int r = 0; r < 2; ++r) ASSERT_OK(amp_graph_launch(f.q, g));
        ASSERT_OK(amp_array_view_synchronize(rec.v));
        ASSERT_OK(amp_array_view_synchronize(before.v));
        for (int i = 0; i < N; ++i) {
            cr_assert_eq(rec.x[i], 2, "mode %d: after 2 replays x[%d] = %d", (int)modes[m], i, rec.x[i]);
            cr_assert_eq(before.x[i], 3, "mode %d: before the recording x[%d] = %d", (int)modes[m], i, before.x[i]);
        }
        ASSERT_OK(amp_graph_destroy(g));
        counted_close(&rec);
        counted_close(&before);
        teardown(&f);
    }
}

/* Data handed out for reading on the view before it records
 * (amp_array_view_native_handle: host access waits for the view's work as
 * queued then, the caller's included): while the view records, what runs
 * on it is what was queued before the recording, so a host write to those
 * data, which the recording does not use, waits for that and is not
 * refused (the wait behind a marker of a view of a native queue). */
ACCEL_TEST(graph, data_handed_out_before_a_recording_can_be_written_by_the_host_while_it_records)
{
    fixture f;
    setup(&f, acc);
    static counted c;
    counted_open(&f, &c);
    void *dptr = NULL;
    ASSERT_OK(amp_array_view_native_handle(c.v, f.q, AMP_READ_ONLY, &dptr));
    ASSERT_OK(amp_graph_begin_recording(f.q));
    int32_t seven = 7;
    /* Handed out for reading, the data's host copy stays current (nothing
     * wrote the GPU's), on a discrete GPU too: the write goes to the host,
     * no copy between q and the host, nothing for the recording to refuse. */
    amp_status st = amp_array_view_set(c.v, amp_index_1d(3), &seven);
    cr_assert_eq(st, AMP_OK, "amp_array_view_set: %s: %s", amp_status_name(st), amp_last_error());
    int32_t got = 0;
    ASSERT_OK(amp_array_view_get(c.v, amp_index_1d(3), &got));
    cr_assert_eq(got, 7, "x[3] = %d", got);
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    ASSERT_OK(amp_graph_destroy(g));
    counted_close(&c);
    teardown(&f);
}

/* A copy into a section whose box is wider than its elements (a column of
 * a reshaped view) while the view's queue records, its data newer on the
 * device copy (and not used by the recording): the copy is written at
 * once, as before the recording. On a discrete GPU the device-newer rest
 * of the box comes back first, on another view of the accelerator after
 * what the recording view ran before (session 105; it was AMP_ERROR_BUSY
 * there, the copy back queued on the recording view). (Session 97 found
 * the CPU's discrete pass refusing it after the fix for handed-out data
 * above.) */
ACCEL_TEST(graph, a_copy_into_a_wider_section_while_the_queue_records)
{
    fixture f;
    setup(&f, acc);
    static counted c;
    counted_open(&f, &c);
    amp_accelerator_info ai;
    ASSERT_OK(amp_accelerator_get_info(acc, &ai));
    enum { ROWS = N / 4 };
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.inc, c.args, 2)); /* 1 everywhere, device-newer */
    amp_array_view *grid = NULL, *col = NULL;
    ASSERT_OK(amp_array_view_view_as(c.v, amp_extent_2d(ROWS, 4), &grid));
    ASSERT_OK(amp_array_view_section(grid, amp_index_2d(0, 1), amp_extent_2d(ROWS, 2), &col));
    static int32_t src[ROWS * 2];
    for (int k = 0; k < ROWS * 2; ++k) src[k] = 100 + k;
    amp_array_view *sv = test_view(src, 4, amp_extent_2d(ROWS, 2), AMP_READ_ONLY);
    ASSERT_OK(amp_graph_begin_recording(f.q));
    amp_status st = amp_copy_view(sv, col);
    cr_assert_eq(st, AMP_OK, "%s: %s: %s", ai.device_path, amp_status_name(st), amp_last_error());
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_array_view_synchronize(c.v));
    for (int k = 0; k < N; ++k) {
        int r = k / 4, j = k % 4;
        int32_t want = j == 1 || j == 2 ? 100 + 2 * r + (j - 1) : 1;
        cr_assert_eq(c.x[k], want, "x[%d] (row %d, column %d) = %d, want %d", k, r, j, c.x[k], want);
    }
    ASSERT_OK(amp_array_view_destroy(sv));
    ASSERT_OK(amp_array_view_destroy(col));
    ASSERT_OK(amp_array_view_destroy(grid));
    counted_close(&c);
    teardown(&f);
}

/* Session 105's: data a kernel on q wrote before q began recording, and
 * that the recording does not use, was refused (AMP_ERROR_BUSY, "a copy:
 * the accelerator view is recording a graph") by amp_array_view_synchronize,
 * amp_array_view_destroy and a copy to the host on a copying accelerator
 * (a discrete GPU, the CPU accelerator's discrete pass), where unified
 * memory gave AMP_OK: its copy back was queued on q, which runs nothing
 * while it records. Now it runs on another view, after what q ran before
 * the recording; the recording is untouched (its graph replays as
 * recorded). Data the recording uses is still refused. */
ACCEL_TEST(graph, results_from_before_a_recording_come_back_to_the_host_while_it_records)
{
    fixture f;
    setup(&f, acc);
    static counted c, d, e;
    counted_open(&f, &c);
    counted_open(&f, &d);
    counted_open(&f, &e);
    /* Before the recording: c.x, d.x and e.x written on f.q (newer on the device copy). */
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.inc, c.args, 2));
    for (int k = 0; k < 2; ++k) ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.inc, d.args, 2));
    for (int k = 0; k < 3; ++k) ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.inc, e.args, 2));
    static int32_t x2[N];
    amp_array_view *v2 = test_view(x2, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_arg a2[] = {amp_arg_view(v2), amp_arg_array(c.cnt)};
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.inc, a2, 2));
    amp_status st = amp_array_view_synchronize(c.v);
    cr_assert_eq(st, AMP_OK, "synchronize: %s: %s", amp_status_name(st), amp_last_error());
    for (int i = 0; i < N; ++i) cr_assert_eq(c.x[i], 1, "c.x[%d] = %d after synchronize", i, c.x[i]);
    /* A copy to another host view. */
    static int32_t h[N];
    amp_array_view *vh = test_view(h, 4, amp_extent_1d(N), AMP_WRITE_ONLY);
    st = amp_copy_view(d.v, vh);
    cr_assert_eq(st, AMP_OK, "copy: %s: %s", amp_status_name(st), amp_last_error());
    ASSERT_OK(amp_array_view_destroy(vh));
    for (int i = 0; i < N; ++i) cr_assert_eq(h[i], 2, "h[%d] = %d after the copy", i, h[i]);
    /* One of two views of e's data destroyed: its part comes home. */
    amp_array_view *e2 = NULL;
    ASSERT_OK(amp_array_view_section(e.v, amp_index_1d(0), amp_extent_1d(N / 2), &e2));
    st = amp_array_view_destroy(e2);
    cr_assert_eq(st, AMP_OK, "destroy: %s: %s", amp_status_name(st), amp_last_error());
    for (int i = 0; i < N / 2; ++i) cr_assert_eq(e.x[i], 3, "e.x[%d] = %d after destroy", i, e.x[i]);
    /* The recording's own data is still refused. */
    ASSERT_STATUS(amp_array_view_synchronize(v2), AMP_ERROR_BUSY);
    cr_assert(strstr(amp_last_error(), "graph being recorded"), "%s", amp_last_error());
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    for (int i = 0; i < N; ++i) cr_assert_eq(x2[i], 0, "the recording ran: x2[%d] = %d", i, x2[i]);
    ASSERT_OK(amp_graph_launch(f.q, g));
    ASSERT_OK(amp_graph_launch(f.q, g));
    ASSERT_OK(amp_array_view_synchronize(v2));
    for (int i = 0; i < N; ++i) cr_assert_eq(x2[i], 2, "x2[%d] = %d after two replays", i, x2[i]);
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_array_view_destroy(v2));
    counted_close(&e);
    counted_close(&d);
    counted_close(&c);
    teardown(&f);
}

/* A marker of a view of the caller's own stream covers the stream's work
 * as queued when someone waits; while the view records, that is the work
 * queued before the recording (what is recorded runs at replays only),
 * the caller's own included, and it may be waited for (hipamp_graph.h). */
ACCEL_TEST(graph, a_marker_of_a_native_streams_view_can_be_waited_for_while_it_records)
{
    /* 64 MiB filled FILLS times (about 20 ms of an H100's time):
     * still running when the markers are made and waited for. */
    enum { M = 1 << 24, FILLS = 1000 };
    amp_accelerator_info ai;
    ASSERT_OK(amp_accelerator_get_info(acc, &ai));
    if (ai.is_emulated)
        cr_skip_test("the CPU accelerator has no native queues (amp_accelerator_view_create_from_native refuses it): "
                     "a view of one, and its marker, are a GPU's");
    char why[512] = "";
    cr_assert(vendor_open(ai.device_path, why, sizeof why), "%s", why);
    void *stream = vendor_stream_create();
    cr_assert_not_null(stream, "cannot create a vendor stream");
    void *reader = vendor_stream_create_nonblocking();
    cr_assert_not_null(reader, "cannot create a non-blocking vendor stream");
    uint32_t *mem = vendor_malloc((size_t)M * 4);
    cr_assert_not_null(mem);
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create_from_native(acc, stream, &q));
    for (int i = 0; i < FILLS - 1; ++i)
        cr_assert(vendor_fill32_async(mem, 0x11111111u * (uint32_t)(i % 8), (size_t)M, stream), "vendor fill failed");
    cr_assert(vendor_fill32_async(mem, 0x5a5a5a5au, (size_t)M, stream), "vendor fill failed");
    amp_future *before = NULL, *during = NULL;
    ASSERT_OK(amp_accelerator_view_create_marker(q, &before));
    ASSERT_OK(amp_graph_begin_recording(q));
    ASSERT_OK(amp_accelerator_view_create_marker(q, &during));
    ASSERT_OK(amp_future_wait(during));
    /* Read on a stream that waits for no other (a blocking copy would
     * wait for the fills itself): the last fill is over once the marker
     * made while recording has been waited for. */
    uint32_t last = 0;
    cr_assert(vendor_dtoh_on(&last, mem + M - 1, 4, reader), "vendor copy back failed");
    cr_assert_eq(last, 0x5a5a5a5au, "the caller's fills queued before the recording were not waited for: last word %#x",
                 last);
    ASSERT_OK(amp_future_wait(before));
    bool done = false;
    ASSERT_OK(amp_future_is_ready(during, &done));
    cr_assert(done, "a waited marker is ready");
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_end_recording(q, &g));
    vendor_stream_destroy(reader);
    ASSERT_OK(amp_future_destroy(during));
    ASSERT_OK(amp_future_destroy(before));
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_accelerator_view_destroy(q));
    vendor_free(mem);
    vendor_stream_destroy(stream);
}

/* A view of the caller's blocking stream records; a program built then,
 * its kernel fetched and launched, is recorded and replays. Before, the
 * kernel's signature record was read with a copy on the legacy stream,
 * which waits for every blocking stream, the capturing one too: the
 * capture was invalidated (a first algorithm call while recording built
 * its program the same way). */
ACCEL_TEST(graph, a_program_built_while_a_native_blocking_stream_records)
{
    amp_accelerator_info ai;
    ASSERT_OK(amp_accelerator_get_info(acc, &ai));
    if (ai.is_emulated)
        cr_skip_test("the CPU accelerator has no native queues (amp_accelerator_view_create_from_native refuses it)");
    char why[512] = "";
    cr_assert(vendor_open(ai.device_path, why, sizeof why), "%s", why);
    void *stream = vendor_stream_create(); /* flags 0: a blocking stream */
    cr_assert_not_null(stream, "cannot create a vendor stream");
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create_from_native(acc, stream, &q));
    enum { M = 1000 };
    static int x[M];
    for (int i = 0; i < M; ++i) x[i] = i;
    amp_array_view *v = NULL;
    ASSERT_OK(amp_array_view_create(x, sizeof x[0], amp_extent_1d(M), AMP_READ_WRITE, &v));
    ASSERT_OK(amp_graph_begin_recording(q));
    /* A source of this test's own: no cache holds its program yet. */
    char src[256];
    snprintf(src, sizeof src,
             "AMP_KERNEL(rec_add_%d, amp::index<1> i, amp::array_view<int, 1> v) { v[i] += %d; }\n", (int)getpid(), 7);
    amp_program *p = NULL;
    ASSERT_OK(amp_program_build(acc, src, NULL, &p));
    char name[64];
    snprintf(name, sizeof name, "rec_add_%d", (int)getpid());
    amp_kernel *k = NULL;
    ASSERT_OK(amp_program_get_kernel(p, name, &k));
    amp_arg a[] = {amp_arg_view(v)};
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(M), k, a, 1));
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_end_recording(q, &g));
    ASSERT_OK(amp_graph_launch(q, g));
    ASSERT_OK(amp_graph_launch(q, g));
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < M; ++i) cr_assert_eq(x[i], i + 14, "x[%d] = %d after two replays", i, x[i]);
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
    ASSERT_OK(amp_accelerator_view_destroy(q));
    vendor_stream_destroy(stream);
}

/* A graph replays on the view it was recorded on only. */
ACCEL_TEST(graph, launch_on_another_view_is_refused)
{
    fixture f;
    setup(&f, acc);
    amp_accelerator_view *q2 = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q2));
    static counted c;
    counted_open(&f, &c);
    amp_graph *g = counted_record(&f, &c, 1);
    ASSERT_STATUS(amp_graph_launch(q2, g), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "its own view"), "%s", amp_last_error());
    /* The two views told apart (both on one device: its name is twice). */
    char recorded[32], launched[32];
    snprintf(recorded, sizeof recorded, "%p", (void *)f.q);
    snprintf(launched, sizeof launched, "%p", (void *)q2);
    cr_assert(strstr(amp_last_error(), recorded) && strstr(amp_last_error(), launched), "%s", amp_last_error());
    amp_future *fut = (amp_future *)1;
    ASSERT_STATUS(amp_graph_launch_async(q2, g, &fut), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(fut);
    ASSERT_OK(amp_graph_launch(f.q, g));
    ASSERT_OK(amp_array_view_synchronize(c.v));
    for (int i = 0; i < N; ++i) cr_assert_eq(c.x[i], 1, "x[%d] = %d", i, c.x[i]);
    ASSERT_OK(amp_graph_destroy(g));
    counted_close(&c);
    ASSERT_OK(amp_accelerator_view_destroy(q2));
    teardown(&f);
}

/* A recording that uses a view's data leaves plain launches on another
 * view over that data alone, however many: 100 launches over 100
 * sections filled the data's box lists, whose reset (a copy back home)
 * was refused as a host access from the 34th on (copying like a GPU).
 * What they wrote is home afterwards, and the replay reads it. */
ACCEL_TEST(graph, launches_elsewhere_over_many_sections_of_data_a_recording_uses, .init = test_cpu_copying)
{
    enum { M = 8192, SECTIONS = 100, STEP = 64, LEN = 16 };
    fixture f;
    setup(&f, acc);
    amp_accelerator_view *q2 = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q2));
    static int32_t x[M];
    memset(x, 0, sizeof x);
    int32_t zero = 0, launches = 0;
    amp_array *cnt = NULL;
    ASSERT_OK(amp_array_create(q2, 4, amp_extent_1d(1), &zero, &cnt));
    amp_array_view *v = test_view(x, 4, amp_extent_1d(M), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v), amp_arg_array(cnt)};
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(M), f.inc, a, 2));
    /* Destroyed after the recording: a view's destroy synchronizes it. */
    static amp_array_view *s[SECTIONS];
    for (int k = 0; k < SECTIONS; ++k) {
        ASSERT_OK(amp_array_view_section(v, amp_index_1d(k * STEP), amp_extent_1d(LEN), &s[k]));
        amp_arg b[] = {amp_arg_view(s[k]), amp_arg_array(cnt)};
        amp_status st = amp_parallel_for_each(q2, amp_extent_1d(LEN), f.inc, b, 2);
        cr_assert_eq(st, AMP_OK, "launch %d on the other view: %s: %s", k, amp_status_name(st), amp_last_error());
    }
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    for (int k = 0; k < SECTIONS; ++k) ASSERT_OK(amp_array_view_destroy(s[k]));
    for (int round = 0; round < 2; ++round) {
        if (round) ASSERT_OK(amp_graph_launch(f.q, g));
        ASSERT_OK(amp_array_view_synchronize(v));
        for (int i = 0; i < M; ++i) {
            int32_t want = round + (i / STEP < SECTIONS && i % STEP < LEN);
            cr_assert_eq(x[i], want, "after %d replay(s): x[%d] = %d, want %d", round, i, x[i], want);
        }
    }
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_array_copy_to_host(cnt, &launches));
    cr_assert_eq(launches, SECTIONS + 1, "launches counted: %d", launches);
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_array_destroy(cnt));
    ASSERT_OK(amp_accelerator_view_destroy(q2));
    teardown(&f);
}

/* ------------------------------------------------------- destroy order */

/* What a graph uses cannot be destroyed while it exists (AMP_ERROR_BUSY,
 * nothing freed); once the graph is gone, everything can be. A graph
 * destroyed with replays still queued waits for them. */
ACCEL_TEST(graph, destroy_order_is_checked)
{
    fixture f;
    setup(&f, acc);
    static counted c;
    counted_open(&f, &c);
    amp_array_view *other = NULL; /* a section of the same data, not in the graph */
    ASSERT_OK(amp_array_view_section(c.v, amp_index_1d(0), amp_extent_1d(8), &other));
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.inc, c.args, 2));
    ASSERT_STATUS(amp_accelerator_view_destroy(f.q), AMP_ERROR_BUSY); /* recording */
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    ASSERT_STATUS(amp_array_view_destroy(c.v), AMP_ERROR_BUSY);
    cr_assert(strstr(amp_last_error(), "graph"), "%s", amp_last_error());
    ASSERT_STATUS(amp_array_destroy(c.cnt), AMP_ERROR_BUSY);
    ASSERT_STATUS(amp_program_destroy(f.p), AMP_ERROR_BUSY);
    cr_assert(strstr(amp_last_error(), "graph_inc"), "%s", amp_last_error());
    ASSERT_STATUS(amp_accelerator_view_destroy(f.q), AMP_ERROR_BUSY);
    ASSERT_OK(amp_array_view_destroy(other)); /* not bound */
    /* Everything still works after the refusals. */
    amp_future *futs[8];
    for (int r = 0; r < 8; ++r) ASSERT_OK(amp_graph_launch_async(f.q, g, &futs[r]));
    ASSERT_OK(amp_graph_destroy(g)); /* waits for the replays */
    for (int r = 0; r < 8; ++r) {
        bool done = false;
        ASSERT_OK(amp_future_is_ready(futs[r], &done));
        cr_assert(done, "replay %d still running after its graph was destroyed", r);
        ASSERT_OK(amp_future_wait(futs[r]));
        ASSERT_OK(amp_future_destroy(futs[r]));
    }
    ASSERT_OK(amp_array_view_destroy(c.v));
    for (int i = 0; i < N; ++i) cr_assert_eq(c.x[i], 8, "x[%d] = %d", i, c.x[i]);
    ASSERT_OK(amp_array_destroy(c.cnt));
    teardown(&f);
}

/* A destroyed graph is a stale handle: launching it, asking about it or
 * destroying it again is AMP_ERROR_INVALID_ARGUMENT saying so, and what
 * it bound can be destroyed. */
ACCEL_TEST(graph, a_destroyed_graph_is_refused)
{
    fixture f;
    setup(&f, acc);
    static counted c;
    counted_open(&f, &c);
    amp_graph *g = counted_record(&f, &c, 1);
    ASSERT_OK(amp_graph_launch(f.q, g));
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_STATUS(amp_graph_launch(f.q, g), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "destroyed") && strstr(amp_last_error(), "amp_graph"), "%s", amp_last_error());
    amp_future *fut = NULL;
    ASSERT_STATUS(amp_graph_launch_async(NULL, g, &fut), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(fut);
    amp_graph_info info;
    ASSERT_STATUS(amp_graph_get_info(g, &info), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_graph_destroy(g), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "destroyed"), "%s", amp_last_error());
    /* Another kind of handle is named as such. */
    ASSERT_STATUS(amp_graph_launch(NULL, (amp_graph *)c.v), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "amp_array_view"), "%s", amp_last_error());
    counted_close(&c);
    teardown(&f);
}

/* A view whose data a GPU graph uses cannot move to another accelerator
 * (the graph refers to its device memory). */
Test(graph, data_of_a_graph_stays_on_its_accelerator)
{
    amp_accelerator *gpu = test_accel(TEST_ACCEL_GPU);
    amp_accelerator *cpu = test_accel(TEST_ACCEL_CPU);
    fixture f, c;
    setup(&f, gpu);
    setup(&c, cpu);
    static float y[N];
    amp_array_view *v = test_view(y, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_arg s[] = {amp_arg_view(v), amp_arg_view(v), amp_arg_float32(1.0f)};
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.axpy, s, 3));
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    ASSERT_STATUS(amp_parallel_for_each(c.q, amp_extent_1d(N), c.axpy, s, 3), AMP_ERROR_BUSY);
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_parallel_for_each(c.q, amp_extent_1d(N), c.axpy, s, 3));
    ASSERT_OK(amp_array_view_destroy(v));
    teardown(&c);
    teardown(&f);
}

/* Records 16 launches of graph_axpy, each over its own 8-element part of
 * whole (parts[0..15]), then one over other and a 17th part (parts[16]),
 * which is refused: AMP_ERROR_UNSUPPORTED, its message in msg. */
static amp_graph *record_a_17th_part(fixture *f, amp_array_view *whole, amp_array_view *other,
                                     amp_array_view *parts[17], char msg[512])
{
    for (int i = 0; i < 17; ++i)
        ASSERT_OK(amp_array_view_section(whole, amp_index_1d(8 * i), amp_extent_1d(8), &parts[i]));
    ASSERT_OK(amp_graph_begin_recording(f->q));
    for (int i = 0; i < 16; ++i) {
        amp_arg s[] = {amp_arg_view(parts[i]), amp_arg_view(parts[i]), amp_arg_float32(1.0f)};
        ASSERT_OK(amp_parallel_for_each(f->q, amp_extent_1d(8), f->axpy, s, 3));
    }
    amp_arg s[] = {amp_arg_view(other), amp_arg_view(parts[16]), amp_arg_float32(1.0f)};
    ASSERT_STATUS(amp_parallel_for_each(f->q, amp_extent_1d(8), f->axpy, s, 3), AMP_ERROR_UNSUPPORTED);
    snprintf(msg, 512, "%s", amp_last_error());
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_end_recording(f->q, &g));
    return g;
}

static void close_parts(amp_graph *g, amp_array_view *whole, amp_array_view *parts[17])
{
    ASSERT_OK(amp_graph_destroy(g));
    for (int i = 0; i < 17; ++i) ASSERT_OK(amp_array_view_destroy(parts[i]));
    ASSERT_OK(amp_array_view_destroy(whole));
}

/* A graph uses at most 16 distinct parts of one view's data: the 17th is
 * refused naming the kernel, the parameter and the part. */
ACCEL_TEST(graph, a_17th_part_of_one_views_data_is_refused_naming_the_kernel_and_parameter)
{
    fixture f;
    setup(&f, acc);
    static float y[N], z[8];
    amp_array_view *whole = test_view(y, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *other = test_view(z, 4, amp_extent_1d(8), AMP_READ_WRITE);
    amp_array_view *parts[17];
    char msg[512];
    amp_graph *g = record_a_17th_part(&f, whole, other, parts, msg);
    cr_assert(strstr(msg, "graph_axpy") && strstr(msg, "parameter 1") && strstr(msg, "[128, 136)"),
              "the message names the kernel, the parameter and the part: %s", msg);
    close_parts(g, whole, parts);
    ASSERT_OK(amp_array_view_destroy(other));
    teardown(&f);
}

/* A launch refused while recording is not recorded, and neither are the
 * uses of its arguments bound before the refusal (other, its parameter
 * 0): the graph holds only the data its recorded launches use, so other
 * may be destroyed while the graph exists, and a replay leaves it alone. */
ACCEL_TEST(graph, a_refused_launch_leaves_none_of_its_data_bound)
{
    fixture f;
    setup(&f, acc);
    static float y[N], z[8];
    for (int i = 0; i < N; ++i) y[i] = 1.0f;
    for (int i = 0; i < 8; ++i) z[i] = 5.0f;
    amp_array_view *whole = test_view(y, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *other = test_view(z, 4, amp_extent_1d(8), AMP_READ_WRITE);
    amp_array_view *parts[17];
    char msg[512];
    amp_graph *g = record_a_17th_part(&f, whole, other, parts, msg);
    amp_graph_info info;
    ASSERT_OK(amp_graph_get_info(g, &info));
    cr_assert_eq(info.launches, 16, "launches recorded: %llu", (unsigned long long)info.launches);
    cr_assert_eq(info.data, 1, "data the graph uses: %llu (only whole's; the refused launch's other is not)",
                 (unsigned long long)info.data);
    ASSERT_OK(amp_array_view_destroy(other)); /* not the graph's */
    ASSERT_OK(amp_graph_launch(f.q, g));
    ASSERT_OK(amp_array_view_synchronize(whole));
    for (int i = 0; i < N; ++i) cr_assert_eq(y[i], i < 128 ? 2.0f : 1.0f, "y[%d] = %g", i, (double)y[i]);
    for (int i = 0; i < 8; ++i) cr_assert_eq(z[i], 5.0f, "z[%d] = %g", i, (double)z[i]);
    close_parts(g, whole, parts);
    teardown(&f);
}

/* An algorithm of several launches whose data would be a 17th part of one
 * view's is refused before its first launch: none of it is recorded and
 * the recording goes on (hipamp_graph.h). amp_reduce_async with a result
 * there recorded its partial sums' launch, then was refused at its final
 * one, which broke the recording: ending it failed and the 16 launches
 * before were lost. The same for a scan and a sort, whose first launches
 * clear their own scratch. */
static void algorithm_refused_for_a_17th_part(amp_accelerator *acc);

ACCEL_TEST(graph, an_algorithm_refused_for_a_17th_part_records_none_of_its_launches)
{
    algorithm_refused_for_a_17th_part(acc);
}

/* The same with AMP_DEBUG=1, where every handle check asks the registry:
 * the look ahead passed over every view and array (their tags are not the
 * fast path's), so the reduction's first launch was recorded and its
 * second refused, breaking the recording. */
Test(graph, an_algorithm_refused_for_a_17th_part_records_none_of_its_launches_with_amp_debug)
{
    setenv("AMP_DEBUG", "1", 1);
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    bool debug = false;
    ASSERT_OK(amp_accelerator_get_is_debug(acc, &debug));
    cr_assert(debug, "AMP_DEBUG=1 reached the library");
    algorithm_refused_for_a_17th_part(acc);
}

static void algorithm_refused_for_a_17th_part(amp_accelerator *acc)
{
    fixture f;
    setup(&f, acc);
    enum { BIG = 1 << 20 };
    static float y[N];
    for (int i = 0; i < N; ++i) y[i] = 1.0f;
    float *ones = malloc(BIG * sizeof *ones);
    cr_assert_not_null(ones);
    for (int i = 0; i < BIG; ++i) ones[i] = 1.0f;
    amp_array *in = NULL;
    ASSERT_OK(amp_array_create(f.q, 4, amp_extent_1d(BIG), ones, &in));
    amp_array_view *whole = test_view(y, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *parts[17], *one = NULL;
    for (int i = 0; i < 17; ++i)
        ASSERT_OK(amp_array_view_section(whole, amp_index_1d(8 * i), amp_extent_1d(8), &parts[i]));
    ASSERT_OK(amp_array_view_section(whole, amp_index_1d(8 * 16), amp_extent_1d(1), &one));
    ASSERT_OK(amp_graph_begin_recording(f.q));
    for (int i = 0; i < 16; ++i) {
        amp_arg s[] = {amp_arg_view(parts[i]), amp_arg_view(parts[i]), amp_arg_float32(1.0f)};
        ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(8), f.axpy, s, 3));
    }
    ASSERT_STATUS(amp_reduce_async(f.q, amp_arg_array(in), AMP_TYPE_FLOAT32, AMP_OP_SUM, amp_arg_view(one), NULL),
                  AMP_ERROR_UNSUPPORTED);
    cr_assert(strstr(amp_last_error(), "[128, 129)"), "the message names the part: %s", amp_last_error());
    ASSERT_STATUS(amp_scan(f.q, amp_arg_view(parts[0]), amp_arg_view(parts[16]), AMP_TYPE_FLOAT32, AMP_OP_SUM,
                           AMP_SCAN_INCLUSIVE),
                  AMP_ERROR_UNSUPPORTED);
    ASSERT_STATUS(amp_sort(f.q, amp_arg_view(parts[16]), AMP_TYPE_FLOAT32, AMP_ASCENDING), AMP_ERROR_UNSUPPORTED);
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    cr_assert_not_null(g);
    amp_graph_info info;
    ASSERT_OK(amp_graph_get_info(g, &info));
    cr_assert_eq(info.launches, 16, "launches recorded: %llu", (unsigned long long)info.launches);
    ASSERT_OK(amp_graph_launch(f.q, g));
    ASSERT_OK(amp_array_view_synchronize(whole));
    for (int i = 0; i < N; ++i) cr_assert_eq(y[i], i < 128 ? 2.0f : 1.0f, "y[%d] = %g", i, (double)y[i]);
    ASSERT_OK(amp_graph_destroy(g));
    /* Past the recording, the same calls run. */
    ASSERT_OK(amp_reduce_async(f.q, amp_arg_array(in), AMP_TYPE_FLOAT32, AMP_OP_SUM, amp_arg_view(one), NULL));
    ASSERT_OK(amp_array_view_synchronize(one));
    cr_assert_eq(y[128], (float)BIG, "sum %g", (double)y[128]);
    for (int i = 0; i < 17; ++i) ASSERT_OK(amp_array_view_destroy(parts[i]));
    ASSERT_OK(amp_array_view_destroy(one));
    ASSERT_OK(amp_array_view_destroy(whole));
    ASSERT_OK(amp_array_destroy(in));
    free(ones);
    teardown(&f);
}

/* An empty view is no part of a graph (a launch binds nothing for it):
 * an algorithm over an empty section of a view whose 16 parts the graph
 * already uses is recorded, not refused as a 17th part, and its replay
 * writes the empty sum. */
ACCEL_TEST(graph, an_empty_section_is_no_17th_part_for_an_algorithm)
{
    fixture f;
    setup(&f, acc);
    static float y[N], z[1];
    for (int i = 0; i < N; ++i) y[i] = 1.0f;
    z[0] = 7.0f;
    amp_array_view *whole = test_view(y, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *res = test_view(z, 4, amp_extent_1d(1), AMP_READ_WRITE);
    amp_array_view *parts[16], *none = NULL;
    for (int i = 0; i < 16; ++i)
        ASSERT_OK(amp_array_view_section(whole, amp_index_1d(8 * i), amp_extent_1d(8), &parts[i]));
    ASSERT_OK(amp_array_view_section(whole, amp_index_1d(200), amp_extent_1d(0), &none));
    ASSERT_OK(amp_graph_begin_recording(f.q));
    for (int i = 0; i < 16; ++i) {
        amp_arg s[] = {amp_arg_view(parts[i]), amp_arg_view(parts[i]), amp_arg_float32(1.0f)};
        ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(8), f.axpy, s, 3));
    }
    ASSERT_OK(amp_reduce_async(f.q, amp_arg_view(none), AMP_TYPE_FLOAT32, AMP_OP_SUM, amp_arg_view(res), NULL));
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    cr_assert_eq(z[0], 7.0f, "recording ran the reduction: %g", (double)z[0]);
    ASSERT_OK(amp_graph_launch(f.q, g));
    ASSERT_OK(amp_array_view_synchronize(whole));
    ASSERT_OK(amp_array_view_synchronize(res));
    for (int i = 0; i < N; ++i) cr_assert_eq(y[i], i < 128 ? 2.0f : 1.0f, "y[%d] = %g", i, (double)y[i]);
    cr_assert_eq(z[0], 0.0f, "the empty sum: %g", (double)z[0]);
    ASSERT_OK(amp_graph_destroy(g));
    for (int i = 0; i < 16; ++i) ASSERT_OK(amp_array_view_destroy(parts[i]));
    ASSERT_OK(amp_array_view_destroy(none));
    ASSERT_OK(amp_array_view_destroy(res));
    ASSERT_OK(amp_array_view_destroy(whole));
    teardown(&f);
}

/* ------------------------------------------------------------- failure */

/* A CPU replay's failing kernel is the launch's status (or its
 * future's), and the commands after it in the graph do not run: poke
 * over poke_points index points, each out of bounds. */
static void cpu_replay_failure(int poke_points)
{
    setenv("AMP_DEBUG", "1", 1);
    fixture f;
    setup(&f, test_accel(TEST_ACCEL_CPU));
    static int32_t x[N], small[4];
    memset(x, 0, sizeof x);
    int32_t zero = 0;
    amp_array *cnt = NULL;
    ASSERT_OK(amp_array_create(f.q, 4, amp_extent_1d(1), &zero, &cnt));
    amp_array_view *v = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *vs = test_view(small, 4, amp_extent_1d(4), AMP_READ_WRITE);
    amp_arg poke[] = {amp_arg_view(vs), amp_arg_int32(4)};
    amp_arg inc[] = {amp_arg_view(v), amp_arg_array(cnt)};
    amp_graph *g = NULL, *only_inc = NULL;
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(poke_points), f.poke, poke, 2));
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.inc, inc, 2));
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.inc, inc, 2));
    ASSERT_OK(amp_graph_end_recording(f.q, &only_inc));
    ASSERT_STATUS(amp_graph_launch(f.q, g), AMP_ERROR_OUT_OF_BOUNDS);
    cr_assert(strstr(amp_last_error(), "graph_poke"), "%s", amp_last_error());
    amp_future *fut = NULL, *fut2 = NULL, *fut3 = NULL;
    ASSERT_OK(amp_graph_launch_async(f.q, g, &fut));
    /* Queued after a failure: it never runs, and its future says why; a
     * graph of launches that cannot fail (only_inc) neither, so what it
     * would have written is how it is seen not to run. */
    ASSERT_OK(amp_graph_launch_async(f.q, g, &fut2));
    ASSERT_OK(amp_graph_launch_async(f.q, only_inc, &fut3));
    ASSERT_STATUS(amp_future_wait(fut), AMP_ERROR_OUT_OF_BOUNDS);
    ASSERT_STATUS(amp_future_wait(fut2), AMP_ERROR_OUT_OF_BOUNDS);
    cr_assert(strstr(amp_last_error(), "not run: an earlier launch on this queue failed"), "%s", amp_last_error());
    ASSERT_STATUS(amp_future_wait(fut3), AMP_ERROR_OUT_OF_BOUNDS);
    cr_assert(strstr(amp_last_error(), "not run: an earlier launch on this queue failed"), "%s", amp_last_error());
    ASSERT_STATUS(amp_accelerator_view_wait(f.q), AMP_ERROR_OUT_OF_BOUNDS);
    ASSERT_OK(amp_future_destroy(fut));
    ASSERT_OK(amp_future_destroy(fut2));
    ASSERT_OK(amp_future_destroy(fut3));
    int32_t launches = -1;
    ASSERT_OK(amp_array_copy_to_host(cnt, &launches));
    cr_assert_eq(launches, 0, "graph_inc ran %d times: a replay queued after the failure ran", launches);
    ASSERT_OK(amp_graph_destroy(only_inc));
    /* Every launch handed over counts (hipamp_graph.h), the synchronous
     * one that failed part-way and the asynchronous one that never ran
     * alike (the first once went uncounted, the second counted); a launch
     * refused before does not. */
    ASSERT_STATUS(amp_graph_launch_async(f.q, g, NULL), AMP_ERROR_INVALID_ARGUMENT);
    amp_graph_info info;
    ASSERT_OK(amp_graph_get_info(g, &info));
    cr_assert_eq(info.replays, 3, "replays: %llu", (unsigned long long)info.replays);
    /* The command after the failure never ran. Host access may repeat the
     * failure (with unified memory the data's last use is the failed
     * replay) or not (in memory of its own, the copy back is queued after
     * the failure was reported); it copies back what the device holds. */
    amp_status sst = amp_array_view_synchronize(v);
    cr_assert(sst == AMP_OK || sst == AMP_ERROR_OUT_OF_BOUNDS, "synchronize: %s", amp_status_name(sst));
    for (int i = 0; i < N; ++i) cr_assert_eq(x[i], 0, "x[%d] = %d: a command after the failure ran", i, x[i]);
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.inc, inc, 2));
    ASSERT_OK(amp_array_view_destroy(v));
    for (int i = 0; i < N; ++i) cr_assert_eq(x[i], 1, "x[%d] = %d", i, x[i]);
    ASSERT_OK(amp_array_view_destroy(vs));
    ASSERT_OK(amp_array_destroy(cnt));
    teardown(&f);
}

/* amp_graph_destroy waits for its last replay; a replay that failed is
 * over, and its failure is its future's and the view's next wait's, not
 * destroy's: the graph is freed (AMP_OK) and the view still reports the
 * fault. (A wait that cannot be made, which the CPU accelerator cannot be
 * made to show, keeps the graph: hipamp_graph.h.) */
Test(graph, destroy_after_an_unwaited_failed_replay_frees_it_and_the_view_reports_the_fault)
{
    setenv("AMP_DEBUG", "1", 1);
    fixture f;
    setup(&f, test_accel(TEST_ACCEL_CPU));
    static int32_t small[4];
    amp_array_view *vs = test_view(small, 4, amp_extent_1d(4), AMP_READ_WRITE);
    amp_arg poke[] = {amp_arg_view(vs), amp_arg_int32(4)};
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(1), f.poke, poke, 2));
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    amp_future *fut = NULL;
    ASSERT_OK(amp_graph_launch_async(f.q, g, &fut));
    ASSERT_OK(amp_future_destroy(fut));
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_STATUS(amp_graph_get_info(g, &(amp_graph_info){0}), AMP_ERROR_INVALID_ARGUMENT); /* freed */
    ASSERT_STATUS(amp_accelerator_view_wait(f.q), AMP_ERROR_OUT_OF_BOUNDS);
    /* Its data's last use is the failed replay: destroying the view may
     * repeat the failure (cpu_replay_failure says when). */
    amp_status vst = amp_array_view_destroy(vs);
    cr_assert(vst == AMP_OK || vst == AMP_ERROR_OUT_OF_BOUNDS, "view destroy: %s", amp_status_name(vst));
    teardown(&f);
}

/* On the CPU accelerator: the failing launch runs alone. */
Test(graph, cpu_replay_failure_is_reported)
{
    cpu_replay_failure(1);
}

/* With a replay team: the failing launch (2^16 index points, each
 * failing) runs on the team, members included where they came; the team
 * ends with the failed replay, and the next replay (which fails again) and
 * a direct launch run. */
Test(graph, cpu_replay_failure_is_reported_team)
{
    use_replay_teams();
    cpu_replay_failure(1 << 16);
}

/* f on the CPU accelerator with 4 threads and every launch counted small
 * (AMP_CPU_GRAPH_ALONE at its largest): a launch is timed on 4 threads,
 * then 2, then alone while half the threads take a tenth off, unless it
 * takes 30 us a thread or more on all 4 (lib/cpu/cpu_width.c). */
static void setup_cpu_timed(fixture *f)
{
    setenv("AMP_CPU_GRAPH_ALONE", "1073741824", 1);
    setenv("AMP_CPU_THREADS", "4", 1);
    setup(f, test_accel(TEST_ACCEL_CPU));
}

/* On the CPU accelerator a replay learns how many threads each launch of
 * at most AMP_CPU_GRAPH_ALONE points runs on, down from every thread
 * (lib/cpu/cpu_graph.c, cpu_width.c). With every launch counted small
 * (AMP_CPU_GRAPH_ALONE at its largest), a graph of small launches, which
 * go down to alone, and large ones, which stay on more threads, gives at
 * every replay the bits that direct launches give: a simple kernel and a
 * tiled one with a barrier. */
static void cpu_launches_alone_and_on_the_pool(void);
Test(graph, cpu_launches_alone_and_on_the_pool_give_the_same_bits)
{
    cpu_launches_alone_and_on_the_pool();
}

/* The same through a replay team, its size following the widths learned
 * (lib/cpu/cpu_team.c, cpu_width.c, cpu_graph.c). */
Test(graph, cpu_launches_alone_and_on_a_team_give_the_same_bits)
{
    use_replay_teams();
    cpu_launches_alone_and_on_the_pool();
}

static void cpu_launches_alone_and_on_the_pool(void)
{
    /* A launch is timed on 4 threads (3 replays), then on 2 and alone
     * while half the threads take a tenth off, before a width settles
     * (the direct launches of the same kernels and sizes below share the
     * search): 16 replays pass through every stage. */
    enum { BIG = 1 << 20, REPLAYS = 16 };
    fixture f;
    setup_cpu_timed(&f);
    float *a = test_xmalloc(BIG * 4), *b = test_xmalloc(BIG * 4), *c = test_xmalloc(BIG * 4);
    float *da = test_xmalloc(BIG * 4), *db = test_xmalloc(BIG * 4), *dc = test_xmalloc(BIG * 4);
    int32_t *in = test_xmalloc(BIG * 4), *out = test_xmalloc(BIG * 4), *dout = test_xmalloc(BIG * 4);
    fill_dyadic(a, BIG, 1);
    fill_dyadic(b, BIG, 2);
    memset(c, 0, BIG * 4);
    memcpy(da, a, BIG * 4);
    memcpy(db, b, BIG * 4);
    memcpy(dc, c, BIG * 4);
    for (int i = 0; i < BIG; ++i) in[i] = i % 1000 - 500;
    amp_array_view *va = test_view(a, 4, amp_extent_1d(BIG), AMP_READ_WRITE);
    amp_array_view *vb = test_view(b, 4, amp_extent_1d(BIG), AMP_READ_WRITE);
    amp_array_view *vc = test_view(c, 4, amp_extent_1d(BIG), AMP_READ_WRITE);
    amp_array_view *vda = test_view(da, 4, amp_extent_1d(BIG), AMP_READ_WRITE);
    amp_array_view *vdb = test_view(db, 4, amp_extent_1d(BIG), AMP_READ_WRITE);
    amp_array_view *vdc = test_view(dc, 4, amp_extent_1d(BIG), AMP_READ_WRITE);
    amp_array_view *vin = test_view(in, 4, amp_extent_1d(BIG), AMP_READ_ONLY);
    amp_array_view *vout = test_view(out, 4, amp_extent_1d(BIG), AMP_WRITE_ONLY);
    amp_array_view *vdout = test_view(dout, 4, amp_extent_1d(BIG), AMP_WRITE_ONLY);
    amp_tiled_extent t;
    ASSERT_OK(amp_extent_tile_1d(amp_extent_1d(BIG), 64, &t));
    /* One iteration: small steps over the first N elements, a big step, a
     * big tiled sum. */
#define ITERATION(A, B, C, OUT)                                                                            \
    do {                                                                                                   \
        amp_arg small[] = {amp_arg_view(A), amp_arg_view(B), amp_arg_view(C)};                             \
        amp_arg big[] = {amp_arg_view(C), amp_arg_view(A), amp_arg_view(B)};                               \
        amp_arg tiled[] = {amp_arg_view(vin), amp_arg_view(OUT)};                                          \
        ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(N), f.step, small, 3));                         \
        ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(BIG), f.step, big, 3));                         \
        ASSERT_OK(amp_parallel_for_each_tiled(f.q, t, f.tile_sum, tiled, 2));                              \
    } while (0)
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ITERATION(va, vb, vc, vout);
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    /* The host's reference of the same steps (each exact: dyadic values,
     * a product by 0.5), so that a partition wrong in the code replays and
     * direct launches share fails too; and of the tiled sums. */
    float *ha = test_xmalloc(BIG * 4), *hb = test_xmalloc(BIG * 4), *hc = test_xmalloc(BIG * 4);
    int32_t *hout = test_xmalloc(BIG * 4);
    memcpy(ha, a, BIG * 4);
    memcpy(hb, b, BIG * 4);
    memcpy(hc, c, BIG * 4);
    for (int i = 0; i < BIG; i += 64) {
        int32_t sum = 0;
        for (int k = 0; k < 64; ++k) sum += in[i + k], hout[i + k] = in[i + k];
        hout[i] = sum;
    }
    for (int r = 0; r < REPLAYS; ++r) {
        ASSERT_OK(amp_graph_launch(f.q, g));
        ITERATION(vda, vdb, vdc, vdout);
        amp_array_view *views[] = {va, vb, vc, vout, vda, vdb, vdc, vdout};
        for (size_t k = 0; k < sizeof views / sizeof views[0]; ++k) ASSERT_OK(amp_array_view_synchronize(views[k]));
        for (int i = 0; i < N; ++i) hc[i] = ha[i] * 0.5f + hb[i];
        for (int i = 0; i < BIG; ++i) hb[i] = hc[i] * 0.5f + ha[i];
        cr_assert(!memcmp(a, da, BIG * 4) && !memcmp(b, db, BIG * 4) && !memcmp(c, dc, BIG * 4),
                  "replay %d: the steps differ from direct launches", r);
        cr_assert(!memcmp(a, ha, BIG * 4) && !memcmp(b, hb, BIG * 4) && !memcmp(c, hc, BIG * 4),
                  "replay %d: the steps differ from the host's", r);
        cr_assert(!memcmp(out, dout, BIG * 4), "replay %d: the tiled sums differ from direct launches", r);
        cr_assert(!memcmp(out, hout, BIG * 4), "replay %d: the tiled sums differ from the host's", r);
    }
#undef ITERATION
    cr_assert_eq(out[0], 64 * (-500) + (0 + 63) * 64 / 2, "tile 0's sum: %d", out[0]);
    free(ha);
    free(hb);
    free(hc);
    free(hout);
    ASSERT_OK(amp_graph_destroy(g));
    amp_array_view *views[] = {va, vb, vc, vout, vda, vdb, vdc, vdout, vin};
    for (size_t k = 0; k < sizeof views / sizeof views[0]; ++k) ASSERT_OK(amp_array_view_destroy(views[k]));
    free(a);
    free(b);
    free(c);
    free(da);
    free(db);
    free(dc);
    free(in);
    free(out);
    free(dout);
    teardown(&f);
}

/* Replays on the CPU accelerator run on the widths their kernel learns
 * (lib/cpu/cpu_width.c): across 600 replays of x += 1 over 2^14 ints on 4
 * threads, short enough to be searched (it runs on 4 threads, then on 2
 * at least), and checked at the 256th and 512th replays where it settles
 * on more than one thread or takes 50 us or more alone (its width, twice
 * it and half it, in turn), every element was added to once a replay, and
 * the launches counted. test_internal's cpu_width tests drive the search
 * and the checks on made-up times. */
Test(graph, cpu_replays_on_learned_widths_stay_whole)
{
    enum { M = 1 << 14, REPLAYS = 600 };
    fixture f;
    setup_cpu_timed(&f);
    int32_t *x = test_xmalloc(M * 4), zero = 0, count = 0;
    memset(x, 0, M * 4);
    amp_array *cnt = NULL;
    ASSERT_OK(amp_array_create(f.q, 4, amp_extent_1d(1), &zero, &cnt));
    amp_array_view *v = test_view(x, 4, amp_extent_1d(M), AMP_READ_WRITE);
    amp_arg args[] = {amp_arg_view(v), amp_arg_array(cnt)};
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_begin_recording(f.q));
    ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(M), f.inc, args, 2));
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    for (int r = 0; r < REPLAYS; ++r) ASSERT_OK(amp_graph_launch(f.q, g));
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < M; ++i)
        if (x[i] != REPLAYS) cr_assert_fail("element %d was added to %d times in %d replays", i, x[i], REPLAYS);
    ASSERT_OK(amp_array_copy_to_host(cnt, &count));
    cr_assert_eq(count, REPLAYS, "%d launches counted in %d replays", count, REPLAYS);
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_array_destroy(cnt));
    free(x);
    teardown(&f);
}

/* --------------------------------------------------------------- memory */

static long rss_kib(void)
{
    long pages = 0, resident = 0;
    FILE *fp = fopen("/proc/self/statm", "r");
    if (!fp) return 0;
    if (fscanf(fp, "%ld %ld", &pages, &resident) != 2) resident = 0;
    fclose(fp);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* 10,000 replays (synchronous, and asynchronous with their futures) do
 * not grow the heap or the resident set. */
ACCEL_TEST(graph, ten_thousand_replays_do_not_grow_memory)
{
    fixture f;
    setup(&f, acc);
    static counted c;
    counted_open(&f, &c);
    int32_t n = 0;
    /* Two launches: a CPU replay of one launch has no team to engage. */
    amp_graph *g = counted_record(&f, &c, 2);
    /* Warm up: pools, worker state, driver buffers, and with AMP_DEBUG=1
     * the quarantine of destroyed futures (4096 before one is reused,
     * lib/core/handle.c). */
    for (int r = 0; r < 500; ++r) ASSERT_OK(amp_graph_launch(f.q, g));
    /* And every worker thread of the CPU accelerator on this program: a
     * thread's first kernel of a module allocates the module's
     * thread-local storage (glibc does it lazily, once a thread), and
     * which threads a small launch involves follows the widths it learns
     * (lib/cpu/cpu_width.c): a check may bring in one that never ran it.
     * Launches of 2^20 points run on every thread. */
    enum { WIDE = 1 << 20 };
    int32_t *wide = test_xmalloc(WIDE * 4), zero = 0;
    memset(wide, 0, WIDE * 4);
    amp_array *wide_n = NULL;
    ASSERT_OK(amp_array_create(f.q, 4, amp_extent_1d(1), &zero, &wide_n));
    amp_array_view *wide_v = test_view(wide, 4, amp_extent_1d(WIDE), AMP_READ_WRITE);
    amp_arg wide_args[] = {amp_arg_view(wide_v), amp_arg_array(wide_n)};
    for (int r = 0; r < 20; ++r) ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(WIDE), f.inc, wide_args, 2));
    ASSERT_OK(amp_array_view_synchronize(wide_v));
    for (int r = 0; r < 5000; ++r) {
        amp_future *fut = NULL;
        ASSERT_OK(amp_graph_launch_async(f.q, g, &fut));
        ASSERT_OK(amp_future_destroy(fut));
    }
    ASSERT_OK(amp_accelerator_view_wait(f.q));
    size_t heap0 = test_heap_in_use();
    long rss0 = rss_kib();
    for (int r = 0; r < 10000; ++r) {
        if (r % 2) {
            ASSERT_OK(amp_graph_launch(f.q, g));
        } else {
            amp_future *fut = NULL;
            ASSERT_OK(amp_graph_launch_async(f.q, g, &fut));
            ASSERT_OK(amp_future_destroy(fut));
        }
    }
    ASSERT_OK(amp_accelerator_view_wait(f.q));
    size_t heap1 = test_heap_in_use();
    long rss1 = rss_kib();
    ASSERT_OK(amp_array_copy_to_host(c.cnt, &n));
    cr_assert_eq(n, 2 * 15500, "%d launches ran in 15500 replays of 2", n);
    /* A byte a replay would be 10 KB; the slack is for allocator noise. */
    cr_assert_lt((long)heap1 - (long)heap0, 8192, "heap grew by %ld bytes over 10,000 replays",
                 (long)heap1 - (long)heap0);
    cr_assert_lt(rss1 - rss0, 1024, "resident set grew by %ld KiB over 10,000 replays", rss1 - rss0);
    cr_assert_eq(wide[WIDE - 1], 20);
    ASSERT_OK(amp_array_view_destroy(wide_v));
    ASSERT_OK(amp_array_destroy(wide_n));
    free(wide);
    ASSERT_OK(amp_graph_destroy(g));
    counted_close(&c);
    teardown(&f);
}

/* The same with AMP_DEBUG=1 (checked kernels, and every handle checked
 * against the registry): each destroyed future used to keep its shell and
 * its registry entry for good, about 25 bytes a replay here. */
Test(graph, ten_thousand_replays_do_not_grow_memory_debug_cpu)
{
    setenv("AMP_DEBUG", "1", 1);
    graph_ten_thousand_replays_do_not_grow_memory_body(test_accel(TEST_ACCEL_CPU));
}

/* The same through a replay team: the team is the graph's, made once. */
Test(graph, ten_thousand_replays_do_not_grow_memory_cpu_team)
{
    use_replay_teams();
    graph_ten_thousand_replays_do_not_grow_memory_body(test_accel(TEST_ACCEL_CPU));
}

/* ------------------------------------------------------------- threads */

typedef struct replayer {
    amp_accelerator *acc;
    amp_kernel *inc;
    int replays;
    int32_t x[N];
    int32_t count;
    char err[512];
} replayer;

#define TRY(r, call)                                                                                   \
    do {                                                                                               \
        amp_status st_ = (call);                                                                       \
        if (st_ != AMP_OK) {                                                                           \
            snprintf((r)->err, sizeof(r)->err, "%s -> %s: %s", #call, amp_status_name(st_), amp_last_error()); \
            goto out;                                                                                  \
        }                                                                                              \
    } while (0)

/* Each thread records its own graph on its own view (both recording at
 * once), then replays it. */
static void *replayer_main(void *arg)
{
    replayer *r = arg;
    amp_accelerator_view *q = NULL;
    amp_array *cnt = NULL;
    amp_array_view *v = NULL;
    amp_graph *g = NULL;
    int32_t zero = 0;
    TRY(r, amp_accelerator_view_create(r->acc, &q));
    TRY(r, amp_array_create(q, 4, amp_extent_1d(1), &zero, &cnt));
    TRY(r, amp_array_view_create(r->x, 4, amp_extent_1d(N), AMP_READ_WRITE, &v));
    amp_arg a[] = {amp_arg_view(v), amp_arg_array(cnt)};
    TRY(r, amp_graph_begin_recording(q));
    TRY(r, amp_parallel_for_each(q, amp_extent_1d(N), r->inc, a, 2));
    TRY(r, amp_parallel_for_each(q, amp_extent_1d(N), r->inc, a, 2));
    TRY(r, amp_graph_end_recording(q, &g));
    for (int i = 0; i < r->replays; ++i) {
        if (i % 4 == 3) {
            amp_future *f = NULL;
            TRY(r, amp_graph_launch_async(q, g, &f));
            amp_future_destroy(f);
        } else {
            TRY(r, amp_graph_launch(q, g));
        }
    }
    TRY(r, amp_array_copy_to_host(cnt, &r->count));
out:
    amp_graph_destroy(g);
    amp_array_view_destroy(v);
    amp_array_destroy(cnt);
    amp_accelerator_view_destroy(q);
    return NULL;
}

ACCEL_TEST(graph, two_threads_replay_two_graphs_on_two_queues)
{
    amp_program *p = test_build(acc, test_kernels_graph);
    static replayer r[2];
    pthread_t th[2];
    for (int i = 0; i < 2; ++i) {
        memset(&r[i], 0, sizeof r[i]);
        r[i].acc = acc;
        r[i].inc = test_kernel(p, "graph_inc");
        r[i].replays = 200 + 50 * i;
        for (int k = 0; k < N; ++k) r[i].x[k] = k * (i + 1);
        cr_assert_eq(pthread_create(&th[i], NULL, replayer_main, &r[i]), 0);
    }
    for (int i = 0; i < 2; ++i) pthread_join(th[i], NULL);
    for (int i = 0; i < 2; ++i) {
        cr_assert_eq(r[i].err[0], 0, "thread %d: %s", i, r[i].err);
        int want = 2 * r[i].replays;
        cr_assert_eq(r[i].count, want, "thread %d counted %d launches, want %d", i, r[i].count, want);
        for (int k = 0; k < N; ++k)
            cr_assert_eq(r[i].x[k], k * (i + 1) + want, "thread %d x[%d] = %d", i, k, r[i].x[k]);
    }
    ASSERT_OK(amp_program_destroy(p));
}

/* The same through replay teams: the two replays recruit from one pool,
 * each team taking the threads the other leaves. */
Test(graph, two_threads_replay_two_graphs_on_two_queues_cpu_team)
{
    use_replay_teams();
    graph_two_threads_replay_two_graphs_on_two_queues_body(test_accel(TEST_ACCEL_CPU));
}

/* Threads sharing one graph: its kernels write through a raw address (no
 * view, so no storage lock orders its replays), and each thread replays it
 * synchronously and asynchronously. Replays of one graph run one at a
 * time, so every increment of every replay lands. */
enum { SHARED_THREADS = 4, SHARED_LAUNCHES = 4, SHARED_N = 1 << 16 };

typedef struct sharer {
    amp_accelerator_view *q;
    amp_graph *g;
    int replays;
    char err[512];
} sharer;

static void *sharer_main(void *arg)
{
    sharer *r = arg;
    for (int i = 0; i < r->replays; ++i) {
        if (i % 3 == 2) {
            amp_future *fut = NULL;
            TRY(r, amp_graph_launch_async(r->q, r->g, &fut));
            if (i % 6 == 5) {
                amp_status st = amp_future_wait(fut);
                amp_future_destroy(fut);
                TRY(r, st);
            } else {
                amp_future_destroy(fut);
            }
        } else {
            TRY(r, amp_graph_launch(r->q, r->g));
        }
    }
out:
    return NULL;
}

static void shared_graph_replays(amp_accelerator *acc, int replays)
{
    fixture f;
    setup(&f, acc);
    int32_t *x = calloc(SHARED_N, sizeof *x);
    cr_assert_not_null(x);
    amp_array *a = NULL;
    void *addr = NULL;
    ASSERT_OK(amp_array_create(f.q, 4, amp_extent_1d(SHARED_N), x, &a));
    ASSERT_OK(amp_array_native_handle(a, &addr));
    amp_arg args[] = {amp_arg_uint64((uint64_t)(uintptr_t)addr)};
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_begin_recording(f.q));
    for (int i = 0; i < SHARED_LAUNCHES; ++i)
        ASSERT_OK(amp_parallel_for_each(f.q, amp_extent_1d(SHARED_N), f.raw_inc, args, 1));
    ASSERT_OK(amp_graph_end_recording(f.q, &g));
    static sharer r[SHARED_THREADS];
    pthread_t th[SHARED_THREADS];
    for (int i = 0; i < SHARED_THREADS; ++i) {
        r[i] = (sharer){.q = i % 2 ? f.q : NULL, .g = g, .replays = replays};
        cr_assert_eq(pthread_create(&th[i], NULL, sharer_main, &r[i]), 0);
    }
    for (int i = 0; i < SHARED_THREADS; ++i) pthread_join(th[i], NULL);
    for (int i = 0; i < SHARED_THREADS; ++i) cr_assert_eq(r[i].err[0], 0, "thread %d: %s", i, r[i].err);
    amp_graph_info info;
    ASSERT_OK(amp_graph_get_info(g, &info));
    cr_assert_eq(info.replays, (uint64_t)(SHARED_THREADS * replays), "replays: %llu", (unsigned long long)info.replays);
    /* The array's own bookkeeping knows nothing of the writes. */
    ASSERT_OK(amp_accelerator_view_wait(f.q));
    ASSERT_OK(amp_array_copy_to_host(a, x));
    int want = SHARED_THREADS * replays * SHARED_LAUNCHES, wrong = 0;
    for (int i = 0; i < SHARED_N; ++i) wrong += x[i] != want;
    cr_assert_eq(wrong, 0, "%d of %d elements wrong (x[0] = %d, want %d)", wrong, SHARED_N, x[0], want);
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_array_destroy(a));
    free(x);
    teardown(&f);
}

ACCEL_TEST(graph, threads_replaying_one_graph_take_turns, .timeout = 120)
{
    shared_graph_replays(acc, 500);
}

/* The same through replay teams: one graph's team serves one replay at a
 * time. */
Test(graph, threads_replaying_one_graph_take_turns_cpu_team, .timeout = 120)
{
    use_replay_teams();
    shared_graph_replays(test_accel(TEST_ACCEL_CPU), 120);
}

/* ------------------------------------------------------------ backends */

/* The graph behind each accelerator: a CUDA or HIP graph on a GPU (one
 * driver call a replay), the replay list on the CPU accelerator. */
ACCEL_TEST(graph, the_backend_graph_is_the_drivers)
{
    fixture f;
    setup(&f, acc);
    amp_accelerator_info ai;
    ASSERT_OK(amp_accelerator_get_info(acc, &ai));
    static counted c;
    counted_open(&f, &c);
    amp_graph *g = counted_record(&f, &c, 10);
    amp_graph_info info;
    ASSERT_OK(amp_graph_get_info(g, &info));
    const char *want = ai.is_emulated ? "cpu replay list" : !strncmp(ai.device_path, "cuda", 4) ? "cuda graph" : "hip graph";
    cr_assert_str_eq(info.implementation, want);
    amp_future *fut = NULL;
    ASSERT_OK(amp_graph_launch_async(f.q, g, &fut));
    double ms = -1;
    ASSERT_OK(amp_future_elapsed_ms(fut, &ms));
    cr_assert(ms >= 0, "the replay's future times it: %g ms", ms);
    ASSERT_OK(amp_future_destroy(fut));
    ASSERT_OK(amp_array_view_synchronize(c.v));
    for (int i = 0; i < N; ++i) cr_assert_eq(c.x[i], 10, "x[%d] = %d", i, c.x[i]);
    ASSERT_OK(amp_graph_destroy(g));
    counted_close(&c);
    teardown(&f);
}
