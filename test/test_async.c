/* test_async.c — amp_parallel_for_each_async and futures: wait/is_ready/destroy, results after wait, two queues, host access waiting without an explicit wait, amp_accelerator_view_wait, cross-queue ordering; the CPU accelerator running launches of two queues (and two threads) at the same time, reporting an asynchronous launch's failure, holding at most AMP_QUEUE_DEPTH launches in a queue, and giving a burst's memory back; waits with a time-out; a continuation that ends the process; a later launch naming an earlier failure whole; a forked child told at once that launches queued before the fork do not run there, and never hanging beside threads that build programs. */
#include "support.h"
#include "vendor.h"
#include <hipamp_algorithms.h>
#include <hipamp_graph.h>

#include <pthread.h>
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern const char test_kernels_async[];
extern const char test_kernels_handles[];


static amp_accelerator_view *mkqueue(amp_accelerator *acc)
{
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    cr_assert_not_null(q);
    return q;
}

/* x -> x * 1664525 + 1013904223, iters times, by doubling (the kernel runs
 * the loop; the host jumps). */
static uint32_t lcg_skip(uint32_t x, uint64_t iters)
{
    uint32_t a = 1664525u, c = 1013904223u; /* the map applied 2^k times */
    uint32_t ra = 1u, rc = 0u;              /* the accumulated map */
    while (iters) {
        if (iters & 1) {
            ra = ra * a;
            rc = rc * a + c;
        }
        c = c * a + c;
        a = a * a;
        iters >>= 1;
    }
    return ra * x + rc;
}

static void lcg_want(uint32_t *want, int n, int iters, uint32_t seed)
{
    for (int i = 0; i < n; ++i) want[i] = lcg_skip(seed ^ ((uint32_t)i * 2654435761u), (uint64_t)iters);
}

static void check_u32(const uint32_t *got, const uint32_t *want, size_t n, const char *what)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; ++i)
        if (got[i] != want[i] && bad++ == 0) first = i;
    cr_assert_eq(bad, 0, "%s: %zu of %zu elements wrong; first at %zu: got 0x%08x want 0x%08x",
                 what, bad, n, first, got[first], want[first]);
}

/* Enough work that a launch is still running when the call returns on a
 * GPU; modest on the CPU accelerator. */
static int slow_iters(amp_accelerator *acc)
{
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    return info.is_emulated ? 20000 : 2000000;
}

#define NS 4096

#define now_s test_now_s

Test(async, lcg_reference_self_check)
{
    uint32_t x = 12345u, y = 12345u;
    for (int i = 0; i < 1000; ++i) y = y * 1664525u + 1013904223u;
    cr_assert_eq(lcg_skip(x, 1000), y);
    cr_assert_eq(lcg_skip(x, 0), x);
}

ACCEL_TEST(async, future_wait_then_results)
{
    int iters = slow_iters(acc);
    amp_program *p = test_build(acc, test_kernels_async);
    amp_kernel *k = test_kernel(p, "slow_lcg");
    static uint32_t out[NS], want[NS];
    for (int i = 0; i < NS; ++i) out[i] = POISON_U32;
    lcg_want(want, NS, iters, 0x1234u);
    amp_array_view *v = test_view(out, 4, amp_extent_1d(NS), AMP_WRITE_ONLY);
    amp_arg a[] = {amp_arg_view(v), amp_arg_int32(iters), amp_arg_uint32(0x1234u)};
    amp_future *f = NULL;
    ASSERT_OK(amp_parallel_for_each_async(NULL, amp_extent_1d(NS), k, a, 3, &f));
    cr_assert_not_null(f);
    ASSERT_OK(amp_future_wait(f));
    bool done = false;
    ASSERT_OK(amp_future_is_ready(f, &done));
    cr_assert(done, "is_ready false after wait");
    ASSERT_OK(amp_future_wait(f)); /* waiting again is fine */
    ASSERT_OK(amp_future_destroy(f));
    ASSERT_OK(amp_array_view_synchronize(v));
    check_u32(out, want, NS, "slow_lcg after wait");
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TEST(async, is_ready_becomes_true)
{
    int iters = slow_iters(acc);
    amp_program *p = test_build(acc, test_kernels_async);
    amp_kernel *k = test_kernel(p, "slow_lcg");
    static uint32_t out[NS], want[NS];
    for (int i = 0; i < NS; ++i) out[i] = POISON_U32;
    lcg_want(want, NS, iters, 77u);
    amp_array_view *v = test_view(out, 4, amp_extent_1d(NS), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v), amp_arg_int32(iters), amp_arg_uint32(77u)};
    amp_future *f = NULL;
    ASSERT_OK(amp_parallel_for_each_async(NULL, amp_extent_1d(NS), k, a, 3, &f));
    bool done = false;
    double deadline = now_s() + 120.0;
    long polls = 0;
    while (!done) {
        ASSERT_OK(amp_future_is_ready(f, &done));
        ++polls;
        cr_assert(now_s() < deadline, "not ready after 120 s (%ld polls)", polls);
        if (!done) nanosleep(&(struct timespec){0, 200000}, NULL);
    }
    ASSERT_OK(amp_future_wait(f));
    ASSERT_OK(amp_future_destroy(f));
    ASSERT_OK(amp_array_view_synchronize(v));
    check_u32(out, want, NS, "slow_lcg after polling");
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
}

/* On a GPU, a launch held by its kernel (which waits for a flag in host
 * memory mapped for the device) is not ready, however often it is asked,
 * until the flag is set; then it ends, is ready, and ran once.
 * is_ready_becomes_true cannot see a wrong "ready" (a short kernel may well
 * have ended at the first poll); the CPU accelerator's held launches
 * (cpu_program_destroyed_while_its_launches_are_held) cover the CPU. */
Test(async, gpu_is_ready_is_false_while_a_kernel_is_held, .timeout = 300)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_GPU);
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    char why[256];
    if (!vendor_open(info.device_path, why, sizeof why)) cr_skip_test("vendor runtime for %s: %s", info.device_path, why);
    static int flag[1024] __attribute__((aligned(4096)));
    __atomic_store_n(&flag[0], 0, __ATOMIC_SEQ_CST);
    cr_assert(vendor_host_register(flag, sizeof flag), "the vendor's register of the flag's page failed");
    void *dflag = vendor_host_device_pointer(flag);
    cr_assert_not_null(dflag, "no device address for the registered flag");
    amp_program *p = test_build(acc, test_kernels_handles);
    amp_kernel *k = test_kernel(p, "h_wait_flag_bounded");
    amp_accelerator_view *q = mkqueue(acc);
    static int gate[1];
    gate[0] = 0;
    amp_array_view *vg = test_view(gate, 4, amp_extent_1d(1), AMP_READ_WRITE);
    /* 2^25 reads of host memory over the bus take half a minute or more
     * (about 1 us each), within the test's time limit: the flag is set
     * long before, unless its store never reaches the device (-1). */
    amp_arg a[] = {amp_arg_view(vg), amp_arg_uint64((uint64_t)(uintptr_t)dflag), amp_arg_int64(1LL << 25)};
    amp_future *f = NULL;
    ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(1), k, a, 3, &f));
    ASSERT_OK(amp_accelerator_view_flush(q));
    for (int i = 0; i < 200; ++i) {
        bool ready = true;
        ASSERT_OK(amp_future_is_ready(f, &ready));
        cr_assert(!ready, "poll %d (about %d ms after the launch): ready while its kernel waits for the flag", i, i);
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    __atomic_store_n(&flag[0], 1, __ATOMIC_SEQ_CST);
    ASSERT_OK(amp_future_wait(f));
    bool ready = false;
    ASSERT_OK(amp_future_is_ready(f, &ready));
    cr_assert(ready, "not ready after its wait returned");
    ASSERT_OK(amp_future_destroy(f));
    ASSERT_OK(amp_array_view_synchronize(vg));
    cr_assert_eq(gate[0], 1, "the held kernel left %d (-1: it never saw the flag set; 1: it ran once)", gate[0]);
    ASSERT_OK(amp_array_view_destroy(vg));
    ASSERT_OK(amp_accelerator_view_destroy(q));
    ASSERT_OK(amp_program_destroy(p));
    vendor_host_unregister(flag);
}

ACCEL_TEST(async, two_futures_on_two_queues)
{
    int iters = slow_iters(acc);
    amp_program *p = test_build(acc, test_kernels_async);
    amp_kernel *k = test_kernel(p, "slow_lcg");
    amp_accelerator_view *q1 = mkqueue(acc), *q2 = mkqueue(acc);
    static uint32_t o1[NS], o2[NS], w1[NS], w2[NS];
    for (int i = 0; i < NS; ++i) o1[i] = o2[i] = POISON_U32;
    lcg_want(w1, NS, iters, 1u);
    lcg_want(w2, NS, iters / 2 + 3, 2u);
    amp_array_view *v1 = test_view(o1, 4, amp_extent_1d(NS), AMP_WRITE_ONLY);
    amp_array_view *v2 = test_view(o2, 4, amp_extent_1d(NS), AMP_WRITE_ONLY);
    amp_arg a1[] = {amp_arg_view(v1), amp_arg_int32(iters), amp_arg_uint32(1u)};
    amp_arg a2[] = {amp_arg_view(v2), amp_arg_int32(iters / 2 + 3), amp_arg_uint32(2u)};
    amp_future *f1 = NULL, *f2 = NULL;
    ASSERT_OK(amp_parallel_for_each_async(q1, amp_extent_1d(NS), k, a1, 3, &f1));
    ASSERT_OK(amp_parallel_for_each_async(q2, amp_extent_1d(NS), k, a2, 3, &f2));
    ASSERT_OK(amp_future_wait(f2));
    ASSERT_OK(amp_future_wait(f1));
    ASSERT_OK(amp_future_destroy(f1));
    ASSERT_OK(amp_future_destroy(f2));
    ASSERT_OK(amp_array_view_synchronize(v1));
    ASSERT_OK(amp_array_view_synchronize(v2));
    check_u32(o1, w1, NS, "queue 1");
    check_u32(o2, w2, NS, "queue 2");
    ASSERT_OK(amp_array_view_destroy(v1));
    ASSERT_OK(amp_array_view_destroy(v2));
    ASSERT_OK(amp_accelerator_view_destroy(q1));
    ASSERT_OK(amp_accelerator_view_destroy(q2));
    ASSERT_OK(amp_program_destroy(p));
}

/* Host access waits for the queued kernel: no future wait, no queue wait. */
ACCEL_TEST(async, synchronize_waits_without_explicit_wait)
{
    int iters = slow_iters(acc);
    amp_program *p = test_build(acc, test_kernels_async);
    amp_kernel *k = test_kernel(p, "slow_lcg");
    static uint32_t out[NS], want[NS];
    for (int i = 0; i < NS; ++i) out[i] = POISON_U32;
    lcg_want(want, NS, iters, 99u);
    amp_array_view *v = test_view(out, 4, amp_extent_1d(NS), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v), amp_arg_int32(iters), amp_arg_uint32(99u)};
    amp_future *f = NULL;
    ASSERT_OK(amp_parallel_for_each_async(NULL, amp_extent_1d(NS), k, a, 3, &f));
    ASSERT_OK(amp_future_destroy(f)); /* does not wait; the launch runs on */
    ASSERT_OK(amp_array_view_synchronize(v));
    check_u32(out, want, NS, "synchronize after an unwaited async launch");
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TEST(async, destroy_waits_without_explicit_wait)
{
    int iters = slow_iters(acc);
    amp_program *p = test_build(acc, test_kernels_async);
    amp_kernel *k = test_kernel(p, "slow_lcg");
    static uint32_t out[NS], want[NS];
    for (int i = 0; i < NS; ++i) out[i] = POISON_U32;
    lcg_want(want, NS, iters, 5u);
    amp_array_view *v = test_view(out, 4, amp_extent_1d(NS), AMP_WRITE_ONLY);
    amp_arg a[] = {amp_arg_view(v), amp_arg_int32(iters), amp_arg_uint32(5u)};
    /* the plain launch is as-if synchronous too */
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(NS), k, a, 3));
    ASSERT_OK(amp_array_view_destroy(v));
    check_u32(out, want, NS, "destroy after a launch");
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TEST(async, array_copy_waits_without_explicit_wait)
{
    int iters = slow_iters(acc);
    amp_program *p = test_build(acc, test_kernels_async);
    amp_kernel *k = test_kernel(p, "slow_lcg");
    static uint32_t init[NS], out[NS], want[NS];
    for (int i = 0; i < NS; ++i) { init[i] = POISON_U32; out[i] = 0; }
    lcg_want(want, NS, iters, 6u);
    amp_accelerator_view *dq = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &dq));
    amp_array *arr = NULL;
    ASSERT_OK(amp_array_create(dq, 4, amp_extent_1d(NS), init, &arr));
    amp_array_view *v = NULL;
    ASSERT_OK(amp_array_view_of_array(arr, &v));
    amp_arg a[] = {amp_arg_view(v), amp_arg_int32(iters), amp_arg_uint32(6u)};
    amp_future *f = NULL;
    ASSERT_OK(amp_parallel_for_each_async(NULL, amp_extent_1d(NS), k, a, 3, &f));
    ASSERT_OK(amp_future_destroy(f));
    ASSERT_OK(amp_array_copy_to_host(arr, out));
    check_u32(out, want, NS, "array copy after an unwaited async launch");
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_array_destroy(arr));
    ASSERT_OK(amp_program_destroy(p));
}

/* amp_accelerator_view_wait finishes everything queued on the view. */
ACCEL_TEST(async, accelerator_view_wait_finishes_all)
{
    enum { K = 3 };
    int iters = slow_iters(acc);
    amp_program *p = test_build(acc, test_kernels_async);
    amp_kernel *k = test_kernel(p, "slow_lcg");
    amp_accelerator_view *q = mkqueue(acc);
    static uint32_t out[K][NS], want[K][NS];
    amp_array_view *v[K];
    amp_future *f[K];
    for (int j = 0; j < K; ++j) {
        for (int i = 0; i < NS; ++i) out[j][i] = POISON_U32;
        lcg_want(want[j], NS, iters, 100u + j);
        v[j] = test_view(out[j], 4, amp_extent_1d(NS), AMP_WRITE_ONLY);
        amp_arg a[] = {amp_arg_view(v[j]), amp_arg_int32(iters), amp_arg_uint32(100u + j)};
        ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(NS), k, a, 3, &f[j]));
    }
    ASSERT_OK(amp_accelerator_view_wait(q));
    for (int j = 0; j < K; ++j) {
        bool done = false;
        ASSERT_OK(amp_future_is_ready(f[j], &done));
        cr_assert(done, "future %d not ready after amp_accelerator_view_wait", j);
        ASSERT_OK(amp_future_destroy(f[j]));
        ASSERT_OK(amp_array_view_synchronize(v[j]));
        check_u32(out[j], want[j], NS, "after queue wait");
        ASSERT_OK(amp_array_view_destroy(v[j]));
    }
    ASSERT_OK(amp_accelerator_view_wait(q)); /* an idle queue */
    ASSERT_OK(amp_accelerator_view_destroy(q));
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TEST(async, tiled_async_launch)
{
    enum { M = 32 * 50 };
    amp_program *p = test_build(acc, test_kernels_async);
    amp_kernel *k = test_kernel(p, "async_reverse");
    int32_t in[M], out[M], want[M];
    for (int i = 0; i < M; ++i) {
        in[i] = (int32_t)((uint32_t)i * 2654435761u >> 3);
        out[i] = POISON_I32;
    }
    for (int i = 0; i < M; ++i) want[i] = in[i / 32 * 32 + 31 - i % 32];
    amp_array_view *vi = test_view(in, 4, amp_extent_1d(M), AMP_READ_ONLY);
    amp_array_view *vo = test_view(out, 4, amp_extent_1d(M), AMP_WRITE_ONLY);
    amp_arg a[] = {amp_arg_view(vi), amp_arg_view(vo)};
    amp_tiled_extent t;
    ASSERT_OK(amp_extent_tile(amp_extent_1d(M), (const int[]){32}, &t));
    amp_future *f = NULL;
    ASSERT_OK(amp_parallel_for_each_tiled_async(NULL, t, k, a, 2, &f));
    ASSERT_OK(amp_future_wait(f));
    ASSERT_OK(amp_future_destroy(f));
    ASSERT_OK(amp_array_view_synchronize(vo));
    for (int i = 0; i < M; ++i) cr_assert_eq(out[i], want[i], "element %d: %d want %d", i, out[i], want[i]);
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(p));
}

/* A view written on one queue and read by a kernel on another: the second
 * kernel sees the first one's result (as-if synchronous). */
ACCEL_TEST(async, dependency_across_queues)
{
    int iters = slow_iters(acc);
    amp_program *p = test_build(acc, test_kernels_async);
    amp_kernel *ks = test_kernel(p, "slow_lcg");
    amp_kernel *kr = test_kernel(p, "async_reverse");
    amp_accelerator_view *q1 = mkqueue(acc), *q2 = mkqueue(acc);
    static uint32_t x[NS], y[NS], wx[NS], wy[NS];
    for (int i = 0; i < NS; ++i) x[i] = y[i] = POISON_U32;
    lcg_want(wx, NS, iters, 4242u);
    for (int i = 0; i < NS; ++i) wy[i] = wx[i / 32 * 32 + 31 - i % 32];
    amp_array_view *vx = test_view(x, 4, amp_extent_1d(NS), AMP_READ_WRITE);
    amp_array_view *vy = test_view(y, 4, amp_extent_1d(NS), AMP_WRITE_ONLY);
    amp_arg a1[] = {amp_arg_view(vx), amp_arg_int32(iters), amp_arg_uint32(4242u)};
    amp_future *f1 = NULL, *f2 = NULL;
    ASSERT_OK(amp_parallel_for_each_async(q1, amp_extent_1d(NS), ks, a1, 3, &f1));
    amp_arg a2[] = {amp_arg_view(vx), amp_arg_view(vy)};
    amp_tiled_extent t;
    ASSERT_OK(amp_extent_tile(amp_extent_1d(NS), (const int[]){32}, &t));
    ASSERT_OK(amp_parallel_for_each_tiled_async(q2, t, kr, a2, 2, &f2));
    ASSERT_OK(amp_future_wait(f2));
    ASSERT_OK(amp_array_view_synchronize(vy));
    check_u32(y, wy, NS, "reverse on queue 2 of queue 1's output");
    ASSERT_OK(amp_future_wait(f1));
    ASSERT_OK(amp_array_view_synchronize(vx));
    check_u32(x, wx, NS, "queue 1's output");
    ASSERT_OK(amp_future_destroy(f1));
    ASSERT_OK(amp_future_destroy(f2));
    ASSERT_OK(amp_array_view_destroy(vx));
    ASSERT_OK(amp_array_view_destroy(vy));
    ASSERT_OK(amp_accelerator_view_destroy(q1));
    ASSERT_OK(amp_accelerator_view_destroy(q2));
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TEST(async, refused_launch_gives_no_future)
{
    amp_program *p = test_build(acc, test_kernels_async);
    amp_kernel *ks = test_kernel(p, "slow_lcg");
    amp_kernel *kr = test_kernel(p, "async_reverse");
    uint32_t out[64];
    int32_t in[64];
    for (int i = 0; i < 64; ++i) { out[i] = POISON_U32; in[i] = i * 3 + 1; }
    amp_array_view *v = test_view(out, 4, amp_extent_1d(64), AMP_READ_WRITE);
    amp_array_view *vi = test_view(in, 4, amp_extent_1d(64), AMP_READ_ONLY);
    amp_future *f = (amp_future *)&f;
    amp_arg a[] = {amp_arg_view(v), amp_arg_int32(10), amp_arg_uint32(1u)};
    ASSERT_STATUS(amp_parallel_for_each_async(NULL, amp_extent_1d(-1), ks, a, 3, &f),
                  AMP_ERROR_INVALID_EXTENT);
    cr_assert_null(f, "future set on failure");
    f = (amp_future *)&f;
    ASSERT_STATUS(amp_parallel_for_each_async(NULL, amp_extent_1d(64), ks, a, 2, &f),
                  AMP_ERROR_ARGUMENT_MISMATCH);
    cr_assert_null(f, "future set on failure");
    amp_tiled_extent t;
    ASSERT_OK(amp_extent_tile(amp_extent_1d(60), (const int[]){32}, &t));
    amp_arg b[] = {amp_arg_view(vi), amp_arg_view(v)};
    f = (amp_future *)&f;
    ASSERT_STATUS(amp_parallel_for_each_tiled_async(NULL, t, kr, b, 2, &f),
                  AMP_ERROR_INVALID_COMPUTE_DOMAIN);
    cr_assert_null(f, "future set on failure");
    ASSERT_STATUS(amp_parallel_for_each_async(NULL, amp_extent_1d(64), ks, a, 3, NULL),
                  AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_array_view_destroy(vi));
    for (int i = 0; i < 64; ++i) cr_assert_eq(out[i], POISON_U32, "element %d written", i);
    ASSERT_OK(amp_program_destroy(p));
}

/* ------------------------------------------- the CPU accelerator's queues */

/* CPU only: the kernels reach host memory by address (a uint64 argument),
 * which no GPU kernel could. Each announces itself, then spins until the
 * other has (at most spins steps): both see each other only when they ran
 * at the same time. */
static const char cpu_handshake_src[] =
    "AMP_KERNEL(handshake, amp::index<1> i, unsigned long long mine, unsigned long long theirs, long long spins,\n"
    "           amp::array_view<int, 1> seen)\n"
    "{\n"
    "    __atomic_store_n((int *)mine, 1, __ATOMIC_RELEASE);\n"
    "    long long n = 0;\n"
    "    while (__atomic_load_n((const int *)theirs, __ATOMIC_ACQUIRE) == 0 && n < spins) ++n;\n"
    "    seen[i] = n < spins ? 1 : 0;\n"
    "}\n"
    "AMP_KERNEL(poke, amp::index<1> i, amp::array_view<int, 1> v, int at) { v[at] = 7; }\n"
    "AMP_KERNEL(fill7, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 7; }\n";

/* Up to ~10 s of spinning on a slow machine before a kernel gives up. */
#define HANDSHAKE_SPINS 4000000000LL

typedef struct handshake {
    amp_kernel *k;
    amp_accelerator_view *q;
    int *mine, *theirs, seen;
    long long spins;
    amp_status st;
} handshake;

static void handshake_args(handshake *h, amp_array_view **v, amp_arg *a)
{
    *v = test_view(&h->seen, sizeof h->seen, amp_extent_1d(1), AMP_WRITE_ONLY);
    a[0] = amp_arg_uint64((uint64_t)(uintptr_t)h->mine);
    a[1] = amp_arg_uint64((uint64_t)(uintptr_t)h->theirs);
    a[2] = amp_arg_int64(h->spins);
    a[3] = amp_arg_view(*v);
}

/* Two asynchronous launches from this thread, on two queues, run at the
 * same time: each kernel sees the other's flag while it runs. The same two
 * launches on one queue cannot: the first gives up, which shows that the
 * check can fail. */
Test(async, cpu_async_launches_on_two_queues_overlap, .timeout = 120)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_program *p = test_build(acc, cpu_handshake_src);
    amp_kernel *k = test_kernel(p, "handshake");
    amp_accelerator_view *q1 = mkqueue(acc), *q2 = mkqueue(acc);
    static int flags[2];
    handshake a = {k, q1, &flags[0], &flags[1], -1, HANDSHAKE_SPINS, AMP_OK};
    handshake b = {k, q2, &flags[1], &flags[0], -1, HANDSHAKE_SPINS, AMP_OK};
    amp_array_view *va, *vb;
    amp_arg aa[4], ab[4];
    handshake_args(&a, &va, aa);
    handshake_args(&b, &vb, ab);
    amp_future *fa = NULL, *fb = NULL;
    double t0 = now_s();
    ASSERT_OK(amp_parallel_for_each_async(q1, amp_extent_1d(1), k, aa, 4, &fa));
    ASSERT_OK(amp_parallel_for_each_async(q2, amp_extent_1d(1), k, ab, 4, &fb));
    ASSERT_OK(amp_future_wait(fa));
    ASSERT_OK(amp_future_wait(fb));
    double wall = now_s() - t0;
    ASSERT_OK(amp_array_view_synchronize(va));
    ASSERT_OK(amp_array_view_synchronize(vb));
    cr_assert(a.seen == 1 && b.seen == 1,
              "the launches on two queues did not run at the same time (seen %d and %d, %.2f s)", a.seen, b.seen,
              wall);
    ASSERT_OK(amp_future_destroy(fa));
    ASSERT_OK(amp_future_destroy(fb));

    /* One queue: in order, so the first cannot meet the second. */
    flags[0] = flags[1] = 0;
    a.seen = b.seen = -1;
    a.spins = b.spins = 20000000; /* ~20 ms */
    handshake_args(&a, &va, aa);
    handshake_args(&b, &vb, ab);
    ASSERT_OK(amp_parallel_for_each_async(q1, amp_extent_1d(1), k, aa, 4, &fa));
    ASSERT_OK(amp_parallel_for_each_async(q1, amp_extent_1d(1), k, ab, 4, &fb));
    ASSERT_OK(amp_accelerator_view_wait(q1));
    ASSERT_OK(amp_array_view_synchronize(va));
    ASSERT_OK(amp_array_view_synchronize(vb));
    cr_assert(a.seen == 0 && b.seen == 1, "one queue ran its launches out of order or at once (seen %d and %d)",
              a.seen, b.seen);
    amp_future_destroy(fa);
    amp_future_destroy(fb);
    amp_array_view_destroy(va);
    amp_array_view_destroy(vb);
    ASSERT_OK(amp_accelerator_view_destroy(q1));
    ASSERT_OK(amp_accelerator_view_destroy(q2));
    ASSERT_OK(amp_program_destroy(p));
}

static void *handshake_thread(void *arg)
{
    handshake *h = arg;
    amp_array_view *v;
    amp_arg a[4];
    handshake_args(h, &v, a);
    h->st = amp_parallel_for_each(h->q, amp_extent_1d(1), h->k, a, 4);
    if (h->st == AMP_OK) h->st = amp_array_view_destroy(v);
    return NULL;
}

/* Blocking launches from two threads (each on its own queue) run at the
 * same time too: the CPU accelerator runs more than one launch at once. */
Test(async, cpu_launches_from_two_threads_overlap, .timeout = 120)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_program *p = test_build(acc, cpu_handshake_src);
    amp_kernel *k = test_kernel(p, "handshake");
    amp_accelerator_view *q1 = mkqueue(acc), *q2 = mkqueue(acc);
    static int flags[2];
    handshake a = {k, q1, &flags[0], &flags[1], -1, HANDSHAKE_SPINS, AMP_OK};
    handshake b = {k, q2, &flags[1], &flags[0], -1, HANDSHAKE_SPINS, AMP_OK};
    pthread_t ta, tb;
    cr_assert_eq(pthread_create(&ta, NULL, handshake_thread, &a), 0);
    cr_assert_eq(pthread_create(&tb, NULL, handshake_thread, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    cr_assert(a.st == AMP_OK && b.st == AMP_OK, "%s / %s", amp_status_name(a.st), amp_status_name(b.st));
    cr_assert(a.seen == 1 && b.seen == 1, "launches from two threads did not run at the same time (seen %d and %d)",
              a.seen, b.seen);
    ASSERT_OK(amp_accelerator_view_destroy(q1));
    ASSERT_OK(amp_accelerator_view_destroy(q2));
    ASSERT_OK(amp_program_destroy(p));
}

/* An asynchronous launch that fails (a view access out of bounds, checked
 * in debug mode) fails its future with the kernel's message; the queue's
 * later launches do not run, and say why, until amp_accelerator_view_wait
 * reports the failure; then the queue works again. */
Test(async, cpu_async_failure_is_reported_by_the_future_and_the_queue)
{
    setenv("AMP_DEBUG", "1", 1);
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_program *p = test_build(acc, cpu_handshake_src);
    amp_accelerator_view *q = mkqueue(acc);
    int data[8] = {0};
    amp_array_view *v = test_view(data, sizeof(int), amp_extent_1d(8), AMP_READ_WRITE);
    amp_arg bad[] = {amp_arg_view(v), amp_arg_int32(8)};
    amp_arg good[] = {amp_arg_view(v)};
    amp_future *f1 = NULL, *f2 = NULL, *f3 = NULL;
    ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(1), test_kernel(p, "poke"), bad, 2, &f1));
    ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(8), test_kernel(p, "fill7"), good, 1, &f2));
    ASSERT_STATUS(amp_future_wait(f1), AMP_ERROR_OUT_OF_BOUNDS);
    cr_assert(strstr(amp_last_error(), "poke") && strstr(amp_last_error(), "8"), "%s", amp_last_error());
    ASSERT_STATUS(amp_future_wait(f2), AMP_ERROR_OUT_OF_BOUNDS);
    cr_assert(strstr(amp_last_error(), "not run: an earlier launch on this queue failed"), "%s", amp_last_error());
    ASSERT_STATUS(amp_accelerator_view_wait(q), AMP_ERROR_OUT_OF_BOUNDS);
    ASSERT_OK(amp_accelerator_view_wait(q));
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < 8; ++i) cr_assert_eq(data[i], 0, "the launch after the failure ran: element %d is %d", i, data[i]);
    ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(8), test_kernel(p, "fill7"), good, 1, &f3));
    ASSERT_OK(amp_future_wait(f3));
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < 8; ++i) cr_assert_eq(data[i], 7, "element %d: %d", i, data[i]);
    amp_future_destroy(f1);
    amp_future_destroy(f2);
    amp_future_destroy(f3);
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_accelerator_view_destroy(q));
    ASSERT_OK(amp_program_destroy(p));
}

/* A failed asynchronous launch's future says so even when it is waited
 * for after the queue went idle (the wait then records its point on an
 * empty queue, which must carry the queue's unreported failure). */
Test(async, cpu_async_failure_is_reported_after_the_queue_went_idle)
{
    setenv("AMP_DEBUG", "1", 1);
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_program *p = test_build(acc, cpu_handshake_src);
    amp_accelerator_view *q = mkqueue(acc);
    int data[8] = {0};
    amp_array_view *v = test_view(data, sizeof(int), amp_extent_1d(8), AMP_READ_WRITE);
    amp_arg bad[] = {amp_arg_view(v), amp_arg_int32(8)};
    amp_future *f = NULL;
    ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(1), test_kernel(p, "poke"), bad, 2, &f));
    /* The queue's thread runs it and goes idle. */
    double t0 = now_s();
    bool done = false;
    amp_status st = AMP_OK;
    while (!done && st == AMP_OK && now_s() - t0 < 60) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
        st = amp_future_is_ready(f, &done);
    }
    cr_assert_eq(st, AMP_ERROR_OUT_OF_BOUNDS, "amp_future_is_ready of the failed launch: %s", amp_status_name(st));
    ASSERT_STATUS(amp_future_wait(f), AMP_ERROR_OUT_OF_BOUNDS);
    ASSERT_STATUS(amp_accelerator_view_wait(q), AMP_ERROR_OUT_OF_BOUNDS);
    ASSERT_OK(amp_accelerator_view_wait(q));
    amp_future_destroy(f);
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_accelerator_view_destroy(q));
    ASSERT_OK(amp_program_destroy(p));
}

typedef struct then_seen {
    atomic_int called;
    amp_status st;
    char msg[512];
} then_seen;

static void then_record(amp_status st, void *user)
{
    then_seen *t = user;
    t->st = st;
    snprintf(t->msg, sizeof t->msg, "%s", st == AMP_OK ? "" : amp_last_error());
    atomic_store(&t->called, 1);
}

/* With a queue of two (AMP_QUEUE_DEPTH=2) a failed launch's later
 * launches wait for room, then do not run: each future reports its own
 * outcome, whichever is waited for first and however it is asked (wait,
 * is_ready, a continuation): the failed launch its own error, the later
 * ones that they did not run because of it. */
Test(async, cpu_async_failure_each_future_says_its_own, .timeout = 120)
{
    setenv("AMP_DEBUG", "1", 1);
    setenv("AMP_QUEUE_DEPTH", "2", 1);
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_program *p = test_build(acc, cpu_handshake_src);
    amp_accelerator_view *q = mkqueue(acc);
    int data[8] = {0}, other[8] = {0};
    amp_array_view *v = test_view(data, sizeof(int), amp_extent_1d(8), AMP_READ_WRITE);
    amp_array_view *w = test_view(other, sizeof(int), amp_extent_1d(8), AMP_READ_WRITE);
    amp_arg bad[] = {amp_arg_view(v), amp_arg_int32(8)};
    amp_arg good[] = {amp_arg_view(w)};
    enum { N = 4 };
    amp_future *f[N] = {NULL};
    ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(1), test_kernel(p, "poke"), bad, 2, &f[0]));
    for (int i = 1; i < N; ++i)
        ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(8), test_kernel(p, "fill7"), good, 1, &f[i]));
    static then_seen seen;
    ASSERT_OK(amp_future_then(f[0], then_record, &seen));
    /* The last one first: a wait point covering every launch is made. */
    ASSERT_STATUS(amp_future_wait(f[N - 1]), AMP_ERROR_OUT_OF_BOUNDS);
    cr_assert(strstr(amp_last_error(), "not run: an earlier launch on this queue failed"), "%s", amp_last_error());
    const char *own = "out-of-bounds access in kernel 'poke'";
    ASSERT_STATUS(amp_future_wait(f[0]), AMP_ERROR_OUT_OF_BOUNDS);
    cr_assert(strstr(amp_last_error(), own) && !strstr(amp_last_error(), "not run"),
              "the failed launch's own future: %s", amp_last_error());
    bool done = false;
    ASSERT_STATUS(amp_future_is_ready(f[0], &done), AMP_ERROR_OUT_OF_BOUNDS);
    cr_assert(done);
    cr_assert(strstr(amp_last_error(), own) && !strstr(amp_last_error(), "not run"), "is_ready: %s", amp_last_error());
    ASSERT_STATUS(amp_future_wait_for(f[0], 1000), AMP_ERROR_OUT_OF_BOUNDS);
    cr_assert(!strstr(amp_last_error(), "not run"), "wait_for: %s", amp_last_error());
    for (int i = 1; i < N; ++i) {
        ASSERT_STATUS(amp_future_wait(f[i]), AMP_ERROR_OUT_OF_BOUNDS);
        cr_assert(strstr(amp_last_error(), "not run: an earlier launch on this queue failed") &&
                      strstr(amp_last_error(), own),
                  "launch %d: %s", i, amp_last_error());
    }
    /* The continuation keeps what it needs: f[0] goes before it ran. */
    amp_future_destroy(f[0]);
    for (double t0 = now_s(); !atomic_load(&seen.called) && now_s() - t0 < 60;)
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    cr_assert(atomic_load(&seen.called), "the continuation never ran");
    cr_assert_eq(seen.st, AMP_ERROR_OUT_OF_BOUNDS, "continuation: %s", amp_status_name(seen.st));
    cr_assert(strstr(seen.msg, own) && !strstr(seen.msg, "not run"), "continuation: %s", seen.msg);
    ASSERT_STATUS(amp_accelerator_view_wait(q), AMP_ERROR_OUT_OF_BOUNDS);
    cr_assert(strstr(amp_last_error(), own) && !strstr(amp_last_error(), "not run"), "%s", amp_last_error());
    ASSERT_OK(amp_accelerator_view_wait(q));
    for (int i = 1; i < N; ++i) amp_future_destroy(f[i]);
    /* None of the later launches ran. */
    ASSERT_OK(amp_array_view_synchronize(w));
    for (int i = 0; i < 8; ++i) cr_assert_eq(other[i], 0, "element %d: %d", i, other[i]);
    ASSERT_OK(amp_array_view_destroy(w));
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_accelerator_view_destroy(q));
    ASSERT_OK(amp_program_destroy(p));
}

/* A blocking launch after an asynchronous one that failed, its future
 * never asked: the message wraps the failed launch's own, which it names
 * whole (before it was formatted over itself: the prefix twice and the
 * cause cut, or freed memory read where the new message was longer). */
Test(async, a_later_launch_reports_the_earlier_failure_whole, .timeout = 120)
{
    setenv("AMP_DEBUG", "1", 1);
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_program *p = test_build(acc, cpu_handshake_src);
    amp_accelerator_view *q = mkqueue(acc);
    int data[8] = {0}, other[8] = {0};
    amp_array_view *v = test_view(data, sizeof(int), amp_extent_1d(8), AMP_READ_WRITE);
    amp_array_view *w = test_view(other, sizeof(int), amp_extent_1d(8), AMP_READ_WRITE);
    amp_arg bad[] = {amp_arg_view(v), amp_arg_int32(8)};
    amp_arg good[] = {amp_arg_view(w)};
    amp_future *f = NULL;
    ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(1), test_kernel(p, "poke"), bad, 2, &f));
    amp_future_destroy(f);
    ASSERT_STATUS(amp_parallel_for_each(q, amp_extent_1d(8), test_kernel(p, "fill7"), good, 1),
                  AMP_ERROR_OUT_OF_BOUNDS);
    const char *msg = amp_last_error();
    const char *prefix = "an earlier asynchronous launch on this queue failed, so 'fill7' did not run: ";
    cr_assert(strncmp(msg, prefix, strlen(prefix)) == 0, "%s", msg);
    cr_assert(!strstr(msg + 1, "an earlier asynchronous launch"), "the prefix twice: %s", msg);
    cr_assert(strstr(msg + strlen(prefix), "out-of-bounds access in kernel 'poke'"), "the cause lost: %s", msg);
    ASSERT_OK(amp_accelerator_view_wait(q)); /* the failure was reported, once, by the launch */
    ASSERT_OK(amp_array_view_synchronize(w));
    for (int i = 0; i < 8; ++i) cr_assert_eq(other[i], 0, "'fill7' ran: element %d is %d", i, other[i]);
    ASSERT_OK(amp_array_view_destroy(w));
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_accelerator_view_destroy(q));
    ASSERT_OK(amp_program_destroy(p));
}

/* A failed launch's future keeps its own failure after the queue moved on:
 * amp_accelerator_view_wait reports the fault (and lets q run again), a
 * later launch succeeds and its future is waited for; the failed future,
 * asked only then (wait, wait_for, is_ready, a continuation registered
 * then), still says its launch failed, and the later one still succeeded.
 * CPU only: a GPU fault is not cleared (on NVIDIA it ruins the context, so
 * no later launch succeeds whose success could be mistaken for it). */
Test(async, cpu_failed_future_keeps_its_failure_after_later_success, .timeout = 120)
{
    setenv("AMP_DEBUG", "1", 1);
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_program *p = test_build(acc, cpu_handshake_src);
    amp_accelerator_view *q = mkqueue(acc);
    int data[8] = {0}, other[8] = {0};
    amp_array_view *v = test_view(data, sizeof(int), amp_extent_1d(8), AMP_READ_WRITE);
    amp_array_view *w = test_view(other, sizeof(int), amp_extent_1d(8), AMP_READ_WRITE);
    amp_arg bad[] = {amp_arg_view(v), amp_arg_int32(8)};
    amp_arg good[] = {amp_arg_view(w)};
    const char *own = "out-of-bounds access in kernel 'poke'";
    amp_future *fa = NULL, *fc = NULL;
    ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(1), test_kernel(p, "poke"), bad, 2, &fa));
    ASSERT_STATUS(amp_accelerator_view_wait(q), AMP_ERROR_OUT_OF_BOUNDS);
    cr_assert(strstr(amp_last_error(), own), "%s", amp_last_error());
    ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(8), test_kernel(p, "fill7"), good, 1, &fc));
    ASSERT_OK(amp_future_wait(fc));
    /* Asked only now, after the later success. */
    ASSERT_STATUS(amp_future_wait(fa), AMP_ERROR_OUT_OF_BOUNDS);
    cr_assert(strstr(amp_last_error(), own), "wait: %s", amp_last_error());
    bool done = false;
    ASSERT_STATUS(amp_future_is_ready(fa, &done), AMP_ERROR_OUT_OF_BOUNDS);
    cr_assert(done);
    cr_assert(strstr(amp_last_error(), own), "is_ready: %s", amp_last_error());
    ASSERT_STATUS(amp_future_wait_for(fa, 0), AMP_ERROR_OUT_OF_BOUNDS);
    cr_assert(strstr(amp_last_error(), own), "wait_for: %s", amp_last_error());
    static then_seen seen;
    ASSERT_OK(amp_future_then(fa, then_record, &seen));
    for (double t0 = now_s(); !atomic_load(&seen.called) && now_s() - t0 < 60;)
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    cr_assert(atomic_load(&seen.called), "the continuation never ran");
    cr_assert_eq(seen.st, AMP_ERROR_OUT_OF_BOUNDS, "continuation: %s", amp_status_name(seen.st));
    cr_assert(strstr(seen.msg, own), "continuation: %s", seen.msg);
    /* Asked again, each says the same. */
    ASSERT_STATUS(amp_future_wait(fa), AMP_ERROR_OUT_OF_BOUNDS);
    ASSERT_OK(amp_future_wait(fc));
    done = false;
    ASSERT_OK(amp_future_is_ready(fc, &done));
    cr_assert(done);
    ASSERT_OK(amp_future_destroy(fa));
    ASSERT_OK(amp_future_destroy(fc));
    /* The later launch ran. */
    ASSERT_OK(amp_array_view_synchronize(w));
    for (int i = 0; i < 8; ++i) cr_assert_eq(other[i], 7, "element %d: %d", i, other[i]);
    ASSERT_OK(amp_accelerator_view_wait(q));
    ASSERT_OK(amp_array_view_destroy(w));
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_accelerator_view_destroy(q));
    ASSERT_OK(amp_program_destroy(p));
}

/* Destroying the program while its launch may still be queued: the
 * launch runs whole (the kernel's code stays loaded until it ran). */
ACCEL_TEST(async, program_destroyed_while_its_launch_is_queued)
{
    int iters = slow_iters(acc);
    amp_program *p = test_build(acc, test_kernels_async);
    amp_kernel *k = test_kernel(p, "slow_lcg");
    amp_accelerator_view *q = mkqueue(acc);
    static uint32_t o[NS], w[NS];
    for (int i = 0; i < NS; ++i) o[i] = POISON_U32;
    lcg_want(w, NS, iters, 9u);
    amp_array_view *v = test_view(o, 4, amp_extent_1d(NS), AMP_WRITE_ONLY);
    amp_arg a[] = {amp_arg_view(v), amp_arg_int32(iters), amp_arg_uint32(9u)};
    amp_future *f = NULL;
    ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(NS), k, a, 3, &f));
    ASSERT_OK(amp_program_destroy(p));
    ASSERT_OK(amp_future_wait(f));
    ASSERT_OK(amp_future_destroy(f));
    ASSERT_OK(amp_array_view_synchronize(v));
    check_u32(o, w, NS, "after the program was destroyed");
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_accelerator_view_destroy(q));
}

/* A launch of the handles file's h_wait_flag on q, held until
 * held_release sets its flag (host memory: CPU only). */
typedef struct held_launch {
    atomic_int flag;
    int gate[1];
    amp_array_view *vg;
    amp_future *f;
} held_launch;

static void held_start(held_launch *h, amp_kernel *wait_flag, amp_accelerator_view *q)
{
    atomic_store(&h->flag, 0);
    h->gate[0] = 0;
    h->vg = test_view(h->gate, 4, amp_extent_1d(1), AMP_READ_WRITE);
    amp_arg ag[] = {amp_arg_view(h->vg), amp_arg_uint64((uint64_t)(uintptr_t)&h->flag)};
    ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(1), wait_flag, ag, 2, &h->f));
}

/* Lets it go; it ran (its gate set) and is over. */
static void held_release(held_launch *h)
{
    atomic_store(&h->flag, 1);
    ASSERT_OK(amp_future_wait(h->f));
    ASSERT_OK(amp_array_view_synchronize(h->vg));
    cr_assert_eq(h->gate[0], 1, "the held kernel did not run");
    amp_future_destroy(h->f);
    ASSERT_OK(amp_array_view_destroy(h->vg));
}

/* The same with the launch certainly queued when the program goes: the
 * destroy returns while a kernel of the program waits on a flag and
 * another of its launches is queued behind it (it waits for no queued
 * work), and both then run (CPU: the flag is host memory). */
Test(async, cpu_program_destroyed_while_its_launches_are_held, .timeout = 120)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_program *p = test_build(acc, test_kernels_handles);
    amp_kernel *wait_flag = test_kernel(p, "h_wait_flag"), *step = test_kernel(p, "h_step");
    amp_accelerator_view *q = mkqueue(acc);
    static held_launch h;
    int x[4] = {0};
    amp_array_view *vx = test_view(x, 4, amp_extent_1d(4), AMP_READ_WRITE);
    amp_arg ax[] = {amp_arg_view(vx), amp_arg_int32(3)}, ax0[] = {amp_arg_view(vx), amp_arg_int32(0)};
    amp_future *behind = NULL;
    /* x's data goes to the device first: with AMP_CPU_UNIFIED=0 the launch
     * behind would otherwise wait in its call for a copy queued behind the
     * held kernel. */
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(4), step, ax0, 2));
    held_start(&h, wait_flag, q);
    ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(4), step, ax, 2, &behind));
    ASSERT_OK(amp_program_destroy(p));
    bool ready = true;
    ASSERT_OK(amp_future_is_ready(behind, &ready));
    cr_assert(!ready, "the launch behind the held one ran before the flag was set");
    held_release(&h);
    ASSERT_OK(amp_future_wait(behind));
    ASSERT_OK(amp_array_view_synchronize(vx));
    for (int i = 0; i < 4; ++i) cr_assert_eq(x[i], 3, "x[%d] = %d: the launch behind it did not run", i, x[i]);
    amp_future_destroy(behind);
    ASSERT_OK(amp_array_view_destroy(vx));
    ASSERT_OK(amp_accelerator_view_destroy(q));
}

/* amp_accelerator_view_flush hands the queued work to the accelerator and
 * returns without waiting for it: here while a kernel waits on a flag
 * (CPU: the flag is host memory), in both queuing modes. */
Test(async, cpu_flush_returns_while_the_queued_work_is_held, .timeout = 120)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_program *p = test_build(acc, test_kernels_handles);
    amp_kernel *wait_flag = test_kernel(p, "h_wait_flag");
    const amp_queuing_mode modes[] = {AMP_QUEUING_IMMEDIATE, AMP_QUEUING_AUTOMATIC};
    for (int m = 0; m < 2; ++m) {
        amp_accelerator_view *q = NULL;
        ASSERT_OK(amp_accelerator_view_create_with_mode(acc, modes[m], &q));
        static held_launch h;
        held_start(&h, wait_flag, q);
        ASSERT_OK(amp_accelerator_view_flush(q));
        bool ready = true;
        ASSERT_OK(amp_future_is_ready(h.f, &ready));
        cr_assert(!ready, "mode %d: the held kernel ended before its flag was set", m);
        held_release(&h);
        ASSERT_OK(amp_accelerator_view_destroy(q));
    }
    ASSERT_OK(amp_program_destroy(p));
}

/* --------------------------------------------------- bounded CPU queues */

typedef struct blocked_launch {
    amp_kernel *k;
    amp_accelerator_view *q;
    amp_array_view *v;
    amp_future *f;
    amp_status st;
    atomic_int returned;
} blocked_launch;

static void *launch_into_full_queue(void *arg)
{
    blocked_launch *b = arg;
    amp_arg a[] = {amp_arg_view(b->v), amp_arg_int32(1)};
    b->st = amp_parallel_for_each_async(b->q, amp_extent_1d(4), b->k, a, 2, &b->f);
    atomic_store(&b->returned, 1);
    return NULL;
}

/* With AMP_QUEUE_DEPTH=4 a queue holds four launches (the one running
 * counts): a fifth waits in amp_parallel_for_each_async until the first
 * finishes, then everything runs, in order. */
Test(async, cpu_queue_depth_holds_the_next_launch, .timeout = 120)
{
    setenv("AMP_QUEUE_DEPTH", "4", 1);
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_program *p = test_build(acc, test_kernels_handles);
    amp_kernel *wait_flag = test_kernel(p, "h_wait_flag"), *step = test_kernel(p, "h_step");
    amp_accelerator_view *q = mkqueue(acc);
    static atomic_int flag;
    int gate[1] = {0}, x[4] = {0};
    amp_array_view *vg = test_view(gate, 4, amp_extent_1d(1), AMP_READ_WRITE);
    amp_array_view *vx = test_view(x, 4, amp_extent_1d(4), AMP_READ_WRITE);
    amp_arg ag[] = {amp_arg_view(vg), amp_arg_uint64((uint64_t)(uintptr_t)&flag)};
    amp_arg ax[] = {amp_arg_view(vx), amp_arg_int32(1)};
    amp_future *f[4] = {NULL};
    /* x's data goes to the device first: a copy on q would wait for the
     * flag's kernel (AMP_CPU_UNIFIED=0). */
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(4), step, ax, 2));
    ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(1), wait_flag, ag, 2, &f[0]));
    for (int i = 1; i < 4; ++i) ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(4), step, ax, 2, &f[i]));
    blocked_launch b = {step, q, vx, NULL, AMP_OK, 0};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, launch_into_full_queue, &b), 0);
    /* Nothing can make room while the first launch waits for the flag: the
     * fifth call must still be inside after a while (a slow machine only
     * makes this weaker, never wrong). */
    nanosleep(&(struct timespec){0, 300 * 1000 * 1000}, NULL);
    cr_assert_eq(atomic_load(&b.returned), 0, "a fifth launch was queued while four were");
    atomic_store(&flag, 1);
    pthread_join(th, NULL);
    ASSERT_OK(b.st);
    ASSERT_OK(amp_future_wait(b.f));
    for (int i = 0; i < 4; ++i) ASSERT_OK(amp_future_wait(f[i]));
    ASSERT_OK(amp_array_view_synchronize(vx));
    ASSERT_OK(amp_array_view_synchronize(vg));
    cr_assert_eq(gate[0], 1);
    for (int i = 0; i < 4; ++i) cr_assert_eq(x[i], 5, "x[%d] = %d after five steps", i, x[i]);
    for (int i = 0; i < 4; ++i) amp_future_destroy(f[i]);
    amp_future_destroy(b.f);
    ASSERT_OK(amp_array_view_destroy(vg));
    ASSERT_OK(amp_array_view_destroy(vx));
    ASSERT_OK(amp_accelerator_view_destroy(q));
    ASSERT_OK(amp_program_destroy(p));
}

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    cr_assert_not_null(f);
    char line[256];
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6)) kb = atol(line + 6);
    fclose(f);
    cr_assert_geq(kb, 0, "no VmRSS in /proc/self/status");
    return kb;
}

/* A burst of asynchronous launches whose futures are all held, then waited
 * for and destroyed: the memory they took comes back (futures and events
 * come from pools that return empty pages, queued launches are bounded). */
Test(async, cpu_burst_memory_comes_back, .timeout = 300)
{
#if defined(__SANITIZE_ADDRESS__)
    cr_skip_test("AddressSanitizer keeps freed memory in quarantine: RSS says nothing here");
#endif
    if (getenv("AMP_TRACE") && *getenv("AMP_TRACE"))
        cr_skip_test("AMP_TRACE is set: the trace keeps a record of every launch until it is written at exit");
    enum { BURST = 40000 };
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    bool debug = false;
    ASSERT_OK(amp_accelerator_get_is_debug(acc, &debug));
    if (debug)
        cr_skip_test("AMP_DEBUG=1 (or a HIPAMP_DEBUG_CHECKS build): the handle registry remembers every freed shell and "
                     "quarantines the last ones, so that a use after destroy is caught: RSS says nothing here");
    amp_program *p = test_build(acc, test_kernels_handles);
    amp_kernel *k = test_kernel(p, "h_step");
    amp_accelerator_view *q = mkqueue(acc);
    int x[1] = {0};
    amp_array_view *v = test_view(x, 4, amp_extent_1d(1), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v), amp_arg_int32(1)};
    amp_future **f = test_xmalloc(BURST * sizeof *f);
    memset(f, 0, BURST * sizeof *f);
    /* Warm up: threads, stacks, the first slabs. */
    for (int i = 0; i < 200; ++i) ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(1), k, a, 2, &f[i]));
    for (int i = 0; i < 200; ++i) ASSERT_OK(amp_future_destroy(f[i]));
    ASSERT_OK(amp_accelerator_view_wait(q));
    long before = rss_kb();
    for (int i = 0; i < BURST; ++i) ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(1), k, a, 2, &f[i]));
    long peak = rss_kb();
    for (int i = 0; i < BURST; ++i) {
        ASSERT_OK(amp_future_wait(f[i]));
        ASSERT_OK(amp_future_destroy(f[i]));
    }
    ASSERT_OK(amp_accelerator_view_wait(q));
    long after = rss_kb();
    ASSERT_OK(amp_array_view_synchronize(v));
    cr_assert_eq(x[0], 200 + BURST);
    cr_assert_lt(after - before, (peak - before) / 4 + 1024,
                 "%d launches: RSS %ld KB before, %ld KB with their futures, %ld KB after they were destroyed",
                 BURST, before, peak, after);
    free(f);
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_accelerator_view_destroy(q));
    ASSERT_OK(amp_program_destroy(p));
}

/* ------------------------------------------------------- timed waits */

/* A kernel that waits for the host: every timed wait on it (its future,
 * its queue) runs out with AMP_ERROR_TIMEOUT and leaves it running; once
 * the host lets it end, the same waits succeed. */
Test(async, cpu_wait_for_times_out_until_the_kernel_ends, .timeout = 120)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_program *p = test_build(acc, test_kernels_handles);
    amp_kernel *k = test_kernel(p, "h_wait_flag");
    amp_accelerator_view *q = mkqueue(acc);
    static atomic_int flag;
    int out[1] = {0};
    amp_array_view *v = test_view(out, 4, amp_extent_1d(1), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v), amp_arg_uint64((uint64_t)(uintptr_t)&flag)};
    amp_future *f = NULL;
    ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(1), k, a, 2, &f));
    ASSERT_STATUS(amp_future_wait_for(f, 0), AMP_ERROR_TIMEOUT);
    double t0 = now_s();
    ASSERT_STATUS(amp_future_wait_for(f, 50), AMP_ERROR_TIMEOUT);
    double waited = now_s() - t0;
    cr_assert_geq(waited, 0.049, "amp_future_wait_for(50 ms) returned after %.3f s", waited);
    cr_assert(strstr(amp_last_error(), "amp_future_wait_for: not done after 50 ms"), "%s", amp_last_error());
    bool done = true;
    ASSERT_OK(amp_future_is_ready(f, &done));
    cr_assert(!done, "the kernel ended without its flag");
    ASSERT_STATUS(amp_accelerator_view_wait_for(q, 20), AMP_ERROR_TIMEOUT);
    cr_assert(strstr(amp_last_error(), "amp_accelerator_view_wait_for"), "%s", amp_last_error());
    ASSERT_STATUS(amp_future_wait_for(NULL, 1), AMP_ERROR_INVALID_ARGUMENT);
    atomic_store(&flag, 1);
    ASSERT_OK(amp_future_wait_for(f, 600000));
    ASSERT_OK(amp_future_wait_for(f, 0)); /* done: even without time */
    ASSERT_OK(amp_accelerator_view_wait_for(q, 600000));
    ASSERT_OK(amp_accelerator_view_wait_for(q, 0));
    ASSERT_OK(amp_array_view_synchronize(v));
    cr_assert_eq(out[0], 1);
    ASSERT_OK(amp_future_destroy(f));
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_accelerator_view_destroy(q));
    ASSERT_OK(amp_program_destroy(p));
}

/* The same on a GPU, with a kernel that runs for about a second (2^28
 * dependent steps a thread): a 1 ms wait runs out, a long one succeeds
 * with the right results. */
Test(async, gpu_wait_for_times_out_on_a_long_kernel, .timeout = 300)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_GPU);
    enum { ITERS = 1 << 28, M = 256 };
    amp_program *p = test_build(acc, test_kernels_handles);
    amp_kernel *k = test_kernel(p, "h_slow");
    amp_accelerator_view *q = mkqueue(acc);
    static uint32_t out[M], want[M];
    for (int i = 0; i < M; ++i) {
        out[i] = POISON_U32;
        want[i] = lcg_skip((uint32_t)i * 2654435761u, ITERS);
    }
    amp_array_view *v = test_view(out, 4, amp_extent_1d(M), AMP_WRITE_ONLY);
    amp_arg a[] = {amp_arg_view(v), amp_arg_int32(ITERS)};
    amp_future *f = NULL;
    ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(M), k, a, 2, &f));
    ASSERT_STATUS(amp_future_wait_for(f, 1), AMP_ERROR_TIMEOUT);
    ASSERT_STATUS(amp_accelerator_view_wait_for(q, 0), AMP_ERROR_TIMEOUT);
    ASSERT_OK(amp_future_wait_for(f, 600000));
    ASSERT_OK(amp_accelerator_view_wait_for(q, 600000));
    ASSERT_OK(amp_array_view_synchronize(v));
    check_u32(out, want, M, "h_slow after a timed wait");
    ASSERT_OK(amp_future_destroy(f));
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_accelerator_view_destroy(q));
    ASSERT_OK(amp_program_destroy(p));
}

/* A continuation that ends the process: exit runs the library's exit
 * handler on the continuation thread itself, which must not wait for that
 * thread's round to finish (it would wait for ever). The child process
 * exits with the callback's status; killed by its alarm, it hung. */
static void then_exit(amp_status st, void *user)
{
    (void)user;
    exit(st == AMP_OK ? 42 : 43);
}

Test(async, a_continuation_may_exit_the_process, .timeout = 120)
{
    /* The library is first touched in the child (the exit handler is the
     * same whatever the accelerator; a GPU driver would not survive the
     * fork). */
    pid_t pid = fork();
    cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
    if (pid == 0) {
        alarm(20);
        amp_accelerator *acc = NULL;
        amp_accelerator_view *q = NULL;
        amp_future *f = NULL;
        if (amp_accelerator_find("cpu", &acc) != AMP_OK || amp_accelerator_default_view(acc, &q) != AMP_OK || amp_accelerator_view_create_marker(q, &f) != AMP_OK ||
            amp_future_then(f, then_exit, NULL) != AMP_OK)
            _exit(44);
        for (;;) pause();
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(!WIFSIGNALED(status), "the process hung in exit (killed by signal %d)", WTERMSIG(status));
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 42, "exit status %d (43: the marker failed; 44: a call failed)",
              WEXITSTATUS(status));
}

/* A launch still queued when the process forks stays in the parent (its
 * queue's thread does not exist in the child): in the child its future
 * says so, AMP_ERROR_DEVICE, at once, and so does a host access of its
 * data. Neither touches the queue itself, which is where the child found
 * out: a wait on the future (time-out included) or a query, or a host
 * access waiting through a wait point cached before the fork
 * (amp_accelerator_view_flush), waited for the parent's queue thread for
 * ever. Each child is killed by its alarm if it hangs. */
static const char cpu_fork_gate_src[] =
    "AMP_KERNEL(gated, amp::index<1> i, amp::array_view<int, 1> v, unsigned long long gate)\n"
    "{ while (__atomic_load_n((const int *)gate, __ATOMIC_ACQUIRE) == 0) ; v[i] += 1; }\n";

/* In the child: 0, or which step failed. */
static int fork_child_steps(amp_future *f, amp_array_view *v, bool view_first)
{
    static const char why[] = "a launch queued before fork() does not run in the child process";
    if (view_first && (amp_array_view_synchronize(v) != AMP_ERROR_DEVICE || !strstr(amp_last_error(), why)))
        return 10;
    amp_status st = amp_future_wait_for(f, 2000);
    if (st == AMP_ERROR_TIMEOUT) return 11;
    if (st != AMP_ERROR_DEVICE || !strstr(amp_last_error(), why)) return 12;
    bool done = false;
    if (amp_future_is_ready(f, &done) != AMP_ERROR_DEVICE || !done) return 13;
    if (amp_future_wait(f) != AMP_ERROR_DEVICE) return 14;
    if (!view_first && amp_array_view_synchronize(v) != AMP_ERROR_DEVICE) return 15;
    return 0;
}

Test(async, cpu_fork_child_reports_launches_queued_before_fork, .timeout = 120)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_program *p = test_build(acc, cpu_fork_gate_src);
    amp_accelerator_view *q = mkqueue(acc);
    static int gate;
    static int x[4];
    amp_array_view *v = test_view(x, sizeof(int), amp_extent_1d(4), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v), amp_arg_uint64((uint64_t)(uintptr_t)&gate)};
    amp_future *f = NULL;
    ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(4), test_kernel(p, "gated"), a, 2, &f));
    ASSERT_OK(amp_accelerator_view_flush(q)); /* caches a wait point on q */
    for (int view_first = 0; view_first < 2; ++view_first) {
        fflush(NULL);
        pid_t pid = fork();
        cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
        if (pid == 0) {
            alarm(5);
            _exit(fork_child_steps(f, v, view_first));
        }
        int status = 0;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(!WIFSIGNALED(status), "%s: the child hung (killed by signal %d)",
                  view_first ? "synchronize first" : "future first", WTERMSIG(status));
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "%s: child step %d failed (10: synchronize; 11: the future's wait timed out; 12: its status; "
                  "13: is_ready; 14: wait; 15: synchronize after)", view_first ? "synchronize first" : "future first",
                  WEXITSTATUS(status));
    }
    /* The parent's launch was never disturbed. */
    __atomic_store_n(&gate, 1, __ATOMIC_RELEASE);
    ASSERT_OK(amp_future_wait(f));
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < 4; ++i) cr_assert_eq(x[i], 1, "element %d: %d", i, x[i]);
    ASSERT_OK(amp_future_destroy(f));
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_accelerator_view_destroy(q));
    ASSERT_OK(amp_program_destroy(p));
}

/* Another thread's synchronous launch on a view is running when the
 * process forks: in the child a launch on that view fails at once with
 * AMP_ERROR_DEVICE saying so (the storage's lock, held by a thread the fork
 * left behind, is never released there, and the data may be half-written).
 * Before, the child's launch waited for that lock for ever. */
static const char cpu_fork_busy_src[] =
    "AMP_KERNEL(held, amp::index<1> i, amp::array_view<int, 1> v, unsigned long long gate, unsigned long long started)\n"
    "{ __atomic_store_n((int *)started, 1, __ATOMIC_RELEASE);\n"
    "  while (__atomic_load_n((const int *)gate, __ATOMIC_ACQUIRE) == 0) ; v[i] += 1; }\n"
    "AMP_KERNEL(inc, amp::index<1> i, amp::array_view<int, 1> v) { v[i] += 1; }\n"
    "AMP_KERNEL(held_array, amp::index<1> i, amp::array<int, 1> a, unsigned long long gate, unsigned long long started)\n"
    "{ __atomic_store_n((int *)started, 1, __ATOMIC_RELEASE);\n"
    "  while (__atomic_load_n((const int *)gate, __ATOMIC_ACQUIRE) == 0) ; a[i] += 1; }\n";

struct busy_launch {
    amp_kernel *k;
    amp_arg a[3];
    amp_status st;
};

static void *busy_launch_run(void *arg)
{
    struct busy_launch *b = arg;
    b->st = amp_parallel_for_each(NULL, amp_extent_1d(1), b->k, b->a, 3);
    return NULL;
}

/* Fork; the child exits with child(arg), killed by SIGALRM after alarm_s
 * seconds. Returns the child's wait status. */
static int fork_child(int (*child)(void *), void *arg, unsigned alarm_s)
{
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
    if (pid == 0) {
        alarm(alarm_s);
        _exit(child(arg));
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    return status;
}

/* A child's exit code, asserting it exited rather than hung. */
static int exit_code_of(int status)
{
    cr_assert(!WIFSIGNALED(status), "the child hung (killed by signal %d)", WTERMSIG(status));
    cr_assert(WIFEXITED(status));
    return WEXITSTATUS(status);
}

/* Run run(arg) on a thread of its own until its kernel has set *started,
 * fork, and in the child exit with child(child_arg) within 5 s; then open
 * the gate, join the thread and return the child's exit status (asserting
 * it exited rather than hung). */
static int fork_while_held(int *gate, int *started, void *(*run)(void *), void *arg, int (*child)(void *),
                           void *child_arg)
{
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, run, arg), 0);
    for (int i = 0; i < 30000 && !__atomic_load_n(started, __ATOMIC_ACQUIRE); ++i) usleep(1000);
    cr_assert(__atomic_load_n(started, __ATOMIC_ACQUIRE), "the held kernel did not start in 30 s");
    int status = fork_child(child, child_arg, 5);
    __atomic_store_n(gate, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    return exit_code_of(status);
}

/* A view whose launch of "held" another thread runs (the kernel spins
 * until gate is set): the program, the view over x and that launch, ready
 * for fork_while_held (gate and started are its flags). */
struct held_view {
    amp_program *p;
    int gate, started, x[1];
    amp_array_view *v;
    struct busy_launch b;
};

static void held_view_setup(struct held_view *h)
{
    h->p = test_build(test_accel(TEST_ACCEL_CPU), cpu_fork_busy_src);
    h->v = test_view(h->x, sizeof(int), amp_extent_1d(1), AMP_READ_WRITE);
    h->b = (struct busy_launch){.k = test_kernel(h->p, "held"),
                                .a = {amp_arg_view(h->v), amp_arg_uint64((uint64_t)(uintptr_t)&h->gate),
                                      amp_arg_uint64((uint64_t)(uintptr_t)&h->started)}};
}

/* The parent's launch was never disturbed: it ran once, x[0] is want
 * (other launches on the view added the rest); then all is destroyed. */
static void held_view_finish(struct held_view *h, int want)
{
    ASSERT_OK(h->b.st);
    ASSERT_OK(amp_array_view_synchronize(h->v));
    cr_assert_eq(h->x[0], want, "x[0] = %d", h->x[0]);
    ASSERT_OK(amp_array_view_destroy(h->v));
    ASSERT_OK(amp_program_destroy(h->p));
}

struct fork_inc {
    amp_kernel *k;
    amp_array_view *v;
};

static int fork_child_inc(void *arg)
{
    struct fork_inc *c = arg;
    amp_arg a[] = {amp_arg_view(c->v)};
    amp_status st = amp_parallel_for_each(NULL, amp_extent_1d(1), c->k, a, 1);
    return st != AMP_ERROR_DEVICE ? 10 : !strstr(amp_last_error(), "when this process was forked") ? 11 : 0;
}

Test(async, cpu_fork_child_refuses_a_view_another_thread_was_launching_on, .timeout = 120)
{
    static struct held_view h;
    held_view_setup(&h);
    struct fork_inc c = {test_kernel(h.p, "inc"), h.v};
    int status = fork_while_held(&h.gate, &h.started, busy_launch_run, &h.b, fork_child_inc, &c);
    cr_assert_eq(status, 0, "the child's launch: 10: not AMP_ERROR_DEVICE; 11: the message does not say why; got %d",
                 status);
    held_view_finish(&h, 1);
}

/* The same fork, and in the child every other call on the held view that
 * can report a status: synchronize, get, set, copies either way,
 * native_handle, refresh, discard_data, a section, a read-only view, and
 * destroying it (the view stays: a get after it still answers). Each fails
 * at once with AMP_ERROR_DEVICE naming itself; before, each waited for
 * ever for the lock the parent's launching thread held at fork. Returns
 * the number of the first call that did not, 0 when all did. */
static int fork_child_refusals(void *arg)
{
    amp_array_view *v = arg;
    static int other[1];
    amp_array_view *w = NULL;
    if (amp_array_view_create(other, sizeof(int), amp_extent_1d(1), AMP_READ_WRITE, &w) != AMP_OK) return 1;
    int val = 7, step = 1;
    amp_future *f = NULL;
    void *ptr = NULL;
    amp_array_view *derived = NULL;
    const char *names[] = {"amp_array_view_synchronize",   "amp_array_view_synchronize_async", "amp_array_view_get",
                           "amp_array_view_set",           "amp_copy_view",                    "amp_copy_view",
                           "amp_array_view_native_handle", "amp_array_view_refresh",           "amp_array_view_discard_data",
                           "amp_array_view_section",       "amp_array_view_read_only",         "amp_array_view_destroy",
                           "amp_array_view_get"};
    for (; step <= 13; ++step) {
        amp_status st = AMP_OK;
        switch (step) {
        case 1: st = amp_array_view_synchronize(v); break;
        case 2: st = amp_array_view_synchronize_async(v, &f); break;
        case 3: st = amp_array_view_get(v, amp_index_1d(0), &val); break;
        case 4: st = amp_array_view_set(v, amp_index_1d(0), &val); break;
        case 5: st = amp_copy_view(v, w); break;
        case 6: st = amp_copy_view(w, v); break;
        case 7: st = amp_array_view_native_handle(v, NULL, AMP_READ_WRITE, &ptr); break;
        case 8: st = amp_array_view_refresh(v); break;
        case 9: st = amp_array_view_discard_data(v); break;
        case 10: st = amp_array_view_section(v, amp_index_1d(0), amp_extent_1d(1), &derived); break;
        case 11: st = amp_array_view_read_only(v, &derived); break;
        case 12: st = amp_array_view_destroy(v); break;
        /* The refused destroy left the view as it was. */
        case 13: st = amp_array_view_get(v, amp_index_1d(0), &val); break;
        }
        if (derived) {
            fprintf(stderr, "call %d (%s) made a view\n", step, names[step - 1]);
            goto out;
        }
        const char *msg = amp_last_error();
        if (st != AMP_ERROR_DEVICE || !strstr(msg, "when this process was forked") ||
            strncmp(msg, names[step - 1], strlen(names[step - 1])) != 0) {
            fprintf(stderr, "call %d (%s): %s: %s\n", step, names[step - 1], amp_status_name(st), msg);
            goto out;
        }
    }
    step = 0;
out:
    (void)amp_array_view_destroy(w);
    return step ? 10 + step : 0;
}

Test(async, cpu_fork_child_refuses_host_access_and_copies_of_a_view_another_thread_was_launching_on, .timeout = 120)
{
    static struct held_view h;
    held_view_setup(&h);
    int status = fork_while_held(&h.gate, &h.started, busy_launch_run, &h.b, fork_child_refusals, h.v);
    cr_assert_eq(status, 0,
                 "the child's call %d (see its stderr) was not refused with AMP_ERROR_DEVICE naming it and the fork",
                 status - 10);
    held_view_finish(&h, 1);
}

/* A graph another thread of the parent was replaying at fork (its kernel
 * spins on a gate): in the child, replaying it (either way) and destroying
 * it fail at once with AMP_ERROR_DEVICE naming the call and the fork, and
 * the graph stays (a second destroy says the same, not "destroyed").
 * Before, each waited for ever for the replay lock the parent's thread
 * held at fork. */
struct busy_replay {
    amp_accelerator_view *q;
    amp_graph *g;
    amp_status st;
};

static void *busy_replay_run(void *arg)
{
    struct busy_replay *b = arg;
    b->st = amp_graph_launch(b->q, b->g);
    return NULL;
}

static int fork_child_graph_refusals(void *arg)
{
    struct busy_replay *b = arg;
    amp_accelerator_view *q = b->q;
    amp_graph *g = b->g;
    amp_future *f = NULL;
    const char *names[] = {"amp_graph_launch", "amp_graph_launch_async", "amp_graph_destroy", "amp_graph_destroy"};
    for (int step = 1; step <= 4; ++step) {
        amp_status st = step == 1 ? amp_graph_launch(q, g) : step == 2 ? amp_graph_launch_async(q, g, &f)
                                                                      : amp_graph_destroy(g);
        const char *msg = amp_last_error();
        if (st != AMP_ERROR_DEVICE || f || !strstr(msg, "when this process was forked") ||
            strncmp(msg, names[step - 1], strlen(names[step - 1])) != 0) {
            fprintf(stderr, "call %d (%s): %s: %s\n", step, names[step - 1], amp_status_name(st), msg);
            return 10 + step;
        }
    }
    return 0;
}

Test(async, cpu_fork_child_refuses_a_graph_another_thread_was_replaying, .timeout = 120)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_program *p = test_build(acc, cpu_fork_busy_src);
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    static int gate, started;
    static int x[1];
    amp_array_view *v = test_view(x, sizeof(int), amp_extent_1d(1), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v), amp_arg_uint64((uint64_t)(uintptr_t)&gate),
                   amp_arg_uint64((uint64_t)(uintptr_t)&started)};
    struct busy_replay b = {.q = q};
    ASSERT_OK(amp_graph_begin_recording(q));
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(1), test_kernel(p, "held"), a, 3));
    ASSERT_OK(amp_graph_end_recording(q, &b.g));
    int status = fork_while_held(&gate, &started, busy_replay_run, &b, fork_child_graph_refusals, &b);
    cr_assert_eq(status, 0,
                 "the child's call %d (see its stderr) was not refused with AMP_ERROR_DEVICE naming it and the fork",
                 status - 10);
    /* The parent's replay was never disturbed. */
    ASSERT_OK(b.st);
    ASSERT_OK(amp_array_view_synchronize(v));
    cr_assert_eq(x[0], 1, "x[0] = %d", x[0]);
    ASSERT_OK(amp_graph_destroy(b.g));
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_accelerator_view_destroy(q));
    ASSERT_OK(amp_program_destroy(p));
}

/* ------------------------------------------------ a fork during a build */

/* The process id of a descendant of this process whose command line
 * (arguments joined by spaces) holds needle, or 0. */
static int descendant_running(const char *needle)
{
    int me = getpid(), found = 0;
    DIR *d = opendir("/proc");
    for (struct dirent *e; !found && d && (e = readdir(d));) {
        long pid = atol(e->d_name), p = pid;
        for (int hops = 0; p > 1 && p != me && hops < 10; ++hops) p = test_proc_parent(p, NULL);
        char cmd[4096];
        if (pid > 0 && pid != me && p == me && test_proc_cmdline(pid, cmd, sizeof cmd) && strstr(cmd, needle))
            found = (int)pid;
    }
    if (d) closedir(d);
    return found;
}

/* Run run(arg) on a thread of its own until a program it started whose
 * command line holds needle (the compiler) is seen running, fork, and in
 * the child exit with child(child_arg) within 60 s (the child may build
 * again: a loaded machine's compile); then join the thread and return the
 * child's exit status (asserting it exited rather than hung). */
static int fork_while_building(void *(*run)(void *), void *arg, const char *needle, int (*child)(void *),
                               void *child_arg)
{
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, run, arg), 0);
    int seen = 0;
    for (int i = 0; i < 60000 && !seen; ++i) {
        seen = descendant_running(needle);
        if (!seen) usleep(1000);
    }
    cr_assert(seen, "no program with \"%s\" in its command line ran in 60 s", needle);
    int status = fork_child(child, child_arg, 60);
    pthread_join(th, NULL);
    return exit_code_of(status);
}

/* A text no cache holds (this process's id and the time in it). */
static void unique_text(char *out, size_t n, const char *fmt)
{
    snprintf(out, n, fmt, (long)getpid() * 1000003L + (long)time(NULL) % 1000003L);
}

struct fork_count {
    amp_array_view *v;
    char pred[64];
    uint64_t count;
    amp_status st;
};

static void *fork_count_run(void *arg)
{
    struct fork_count *c = arg;
    c->st = amp_count_if(NULL, amp_arg_view(c->v), AMP_TYPE_INT32, c->pred, NULL, &c->count);
    return NULL;
}

static int fork_child_count(void *arg)
{
    struct fork_count *c = arg;
    uint64_t n = 0;
    amp_status st = amp_count_if(NULL, amp_arg_view(c->v), AMP_TYPE_INT32, c->pred, NULL, &n);
    if (st != AMP_OK) fprintf(stderr, "amp_count_if: %s: %s\n", amp_status_name(st), amp_last_error());
    return st != AMP_OK ? 11 : n != 63 ? 12 : 0;
}

/* Another thread's first amp_count_if of a predicate is compiling its
 * program when the process forks: in the child the same call builds the
 * program itself and counts. It waited for ever for the parent's thread,
 * which the fork left behind, to finish the build. */
Test(async, cpu_fork_child_builds_an_algorithm_program_another_thread_was_building, .timeout = 180)
{
    static int x[64];
    for (int i = 0; i < 64; ++i) x[i] = i;
    ASSERT_OK(amp_accelerator_set_default(test_accel(TEST_ACCEL_CPU)));
    struct fork_count c = {.v = test_view(x, sizeof(int), amp_extent_1d(64), AMP_READ_WRITE)};
    unique_text(c.pred, sizeof c.pred, "x > 0 && x != %ld");
    int status = fork_while_building(fork_count_run, &c, " -o ", fork_child_count, &c);
    cr_assert_eq(status, 0, "the child's count: 11 failed, 12 wrong; got %d", status);
    ASSERT_OK(c.st);
    cr_assert_eq(c.count, 63);
    ASSERT_OK(amp_array_view_destroy(c.v));
}

struct fork_scan {
    amp_accelerator_view *q;
    amp_reduction *r;
    amp_array_view *in, *out;
    amp_status st;
};

static void *fork_scan_run(void *arg)
{
    struct fork_scan *c = arg;
    amp_arg a[] = {amp_arg_view(c->in)};
    c->st = amp_reduction_scan(c->q, c->r, a, 1, amp_arg_view(c->out), AMP_SCAN_INCLUSIVE);
    return NULL;
}

static int fork_child_scan(void *arg)
{
    struct fork_scan *c = arg;
    amp_arg a[] = {amp_arg_view(c->in)};
    amp_status st = amp_reduction_scan(c->q, c->r, a, 1, amp_arg_view(c->out), AMP_SCAN_INCLUSIVE);
    if (st != AMP_ERROR_DEVICE || strncmp(amp_last_error(), "amp_reduction_scan:", 19) ||
        !strstr(amp_last_error(), "when this process was forked")) {
        fprintf(stderr, "amp_reduction_scan: %s: %s\n", amp_status_name(st), amp_last_error());
        return 11;
    }
    st = amp_reduction_destroy(c->r);
    if (st != AMP_ERROR_DEVICE || strncmp(amp_last_error(), "amp_reduction_destroy:", 22)) return 12;
    return amp_reduction_destroy(c->r) != AMP_ERROR_DEVICE ? 13 : 0; /* kept: refused alike */
}

/* Another thread's first amp_reduction_scan of a reduction is compiling
 * its scan when the process forks: in the child the scan and the
 * reduction's destroy are AMP_ERROR_DEVICE at once, naming the call and
 * the fork (the reduction is kept). Both waited for ever for the lock the
 * parent's thread held while it built. */
Test(async, cpu_fork_child_refuses_a_reduction_whose_scan_another_thread_was_building, .timeout = 180)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    static float x[64], y[64];
    for (int i = 0; i < 64; ++i) x[i] = 1.0f;
    char map[64];
    unique_text(map, sizeof map, "x + 0.0f * %ld");
    amp_reduction_desc d = {.name = "fork_sum", .inputs = "float x", .type = AMP_TYPE_FLOAT32, .map = map,
                            .reduce = "a + b", .identity = "0"};
    struct fork_scan c = {.in = test_view(x, sizeof(float), amp_extent_1d(64), AMP_READ_ONLY),
                          .out = test_view(y, sizeof(float), amp_extent_1d(64), AMP_READ_WRITE)};
    ASSERT_OK(amp_accelerator_default_view(acc, &c.q));
    ASSERT_OK(amp_reduction_create(acc, &d, &c.r));
    int status = fork_while_building(fork_scan_run, &c, " -o ", fork_child_scan, &c);
    cr_assert_eq(status, 0, "the child: 11 the scan, 12 the destroy, 13 a second destroy was not refused; got %d",
                 status);
    ASSERT_OK(c.st);
    ASSERT_OK(amp_array_view_synchronize(c.out));
    cr_assert_eq(y[63], 64.0f, "y[63] = %g", (double)y[63]);
    ASSERT_OK(amp_reduction_destroy(c.r));
    ASSERT_OK(amp_array_view_destroy(c.in));
    ASSERT_OK(amp_array_view_destroy(c.out));
}

/* A launch queued on a view's own thread is running when the process
 * forks: in the child its future is AMP_ERROR_DEVICE, and the program's
 * module can still be unloaded (destroy, then clear the memory cache).
 * The child's queue dropped the launch without taking it off its module's
 * count of queued launches, so the unload waited for it for ever. */
struct queued_held {
    amp_accelerator_view *q;
    amp_program *p;
    amp_kernel *k;
    amp_arg a[3];
    amp_future *f;
    amp_status st;
};

static void *queued_held_run(void *arg)
{
    struct queued_held *h = arg;
    h->st = amp_parallel_for_each_async(h->q, amp_extent_1d(1), h->k, h->a, 3, &h->f);
    return NULL;
}

static int fork_child_unload(void *arg)
{
    struct queued_held *h = arg;
    amp_status st = amp_future_wait(h->f);
    if (st != AMP_ERROR_DEVICE || !strstr(amp_last_error(), "fork")) {
        fprintf(stderr, "the future: %s: %s\n", amp_status_name(st), amp_last_error());
        return 11;
    }
    if (amp_future_destroy(h->f) != AMP_OK || amp_program_destroy(h->p) != AMP_OK) return 12;
    return amp_cache_clear_memory() != AMP_OK ? 13 : 0;
}

Test(async, cpu_fork_child_unloads_a_module_whose_launch_was_queued_at_fork, .timeout = 120)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    static int gate, started;
    static int x[1];
    struct queued_held h = {.p = test_build(acc, cpu_fork_busy_src)};
    h.k = test_kernel(h.p, "held");
    ASSERT_OK(amp_accelerator_view_create(acc, &h.q));
    amp_array_view *v = test_view(x, sizeof(int), amp_extent_1d(1), AMP_READ_WRITE);
    h.a[0] = amp_arg_view(v);
    h.a[1] = amp_arg_uint64((uint64_t)(uintptr_t)&gate);
    h.a[2] = amp_arg_uint64((uint64_t)(uintptr_t)&started);
    int status = fork_while_held(&gate, &started, queued_held_run, &h, fork_child_unload, &h);
    cr_assert_eq(status, 0, "the child: 11 the future not AMP_ERROR_DEVICE, 12 a destroy failed, 13 the unload "
                 "failed; got %d", status);
    ASSERT_OK(h.st);
    ASSERT_OK(amp_future_wait(h.f));
    ASSERT_OK(amp_future_destroy(h.f));
    ASSERT_OK(amp_array_view_synchronize(v));
    cr_assert_eq(x[0], 1, "x[0] = %d", x[0]);
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_accelerator_view_destroy(h.q));
    ASSERT_OK(amp_program_destroy(h.p));
}

/* A view another thread of the parent was launching on at fork, and a
 * graph (not replaying) that uses it: in the child an algorithm over the
 * view fails at once with AMP_ERROR_DEVICE naming the call and the fork,
 * and the graph's destroy returns (its data stay the parent's). Before,
 * both waited for ever for the view's lock. */
struct fork_fill {
    amp_array_view *v;
    amp_graph *g;
};

static int fork_child_fill(void *arg)
{
    struct fork_fill *c = arg;
    int seven = 7;
    amp_status st = amp_fill(NULL, amp_arg_view(c->v), &seven);
    if (st != AMP_ERROR_DEVICE || !strstr(amp_last_error(), "when this process was forked") ||
        strncmp(amp_last_error(), "amp_fill", 8) != 0) {
        fprintf(stderr, "amp_fill: %s: %s\n", amp_status_name(st), amp_last_error());
        return 11;
    }
    return amp_graph_destroy(c->g) != AMP_OK ? 12 : 0;
}

Test(async, cpu_fork_child_refuses_an_algorithm_and_destroys_a_graph_over_a_view_another_thread_was_launching_on,
     .timeout = 120)
{
    static struct held_view h;
    held_view_setup(&h);
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(test_accel(TEST_ACCEL_CPU), &q));
    amp_graph *g = NULL;
    amp_arg inc[] = {amp_arg_view(h.v)};
    ASSERT_OK(amp_graph_begin_recording(q));
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(1), test_kernel(h.p, "inc"), inc, 1));
    ASSERT_OK(amp_graph_end_recording(q, &g));
    struct fork_fill c = {h.v, g};
    int status = fork_while_held(&h.gate, &h.started, busy_launch_run, &h.b, fork_child_fill, &c);
    cr_assert_eq(status, 0,
                 "the child: 11 amp_fill not refused with AMP_ERROR_DEVICE naming it and the fork, 12 the graph's "
                 "destroy failed; got %d", status);
    ASSERT_OK(amp_graph_launch(q, g)); /* the graph's inc, after the held launch */
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_accelerator_view_destroy(q));
    held_view_finish(&h, 2);
}

/* An array another thread of the parent was launching on at fork: in the
 * child a view of it and its destroy fail at once with AMP_ERROR_DEVICE
 * naming the call (before, both waited for ever), and the array stays. */
static int fork_child_array(void *arg)
{
    amp_array *a = arg;
    amp_array_view *v = NULL;
    amp_status st = amp_array_view_of_array(a, &v);
    if (st != AMP_ERROR_DEVICE || v || !strstr(amp_last_error(), "when this process was forked") ||
        strncmp(amp_last_error(), "amp_array_view_of_array", 23) != 0)
        return 11;
    st = amp_array_destroy(a);
    if (st != AMP_ERROR_DEVICE || strncmp(amp_last_error(), "amp_array_destroy", 17) != 0) return 12;
    st = amp_array_destroy(a); /* still there: refused the same way, not a stale handle */
    return st != AMP_ERROR_DEVICE ? 13 : 0;
}

Test(async, cpu_fork_child_refuses_views_of_and_destroying_an_array_another_thread_was_launching_on, .timeout = 120)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_program *p = test_build(acc, cpu_fork_busy_src);
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    static int gate, started;
    int zero = 0;
    amp_array *a = NULL;
    ASSERT_OK(amp_array_create(q, sizeof(int), amp_extent_1d(1), &zero, &a));
    struct busy_launch b = {.k = test_kernel(p, "held_array"),
                            .a = {amp_arg_array(a), amp_arg_uint64((uint64_t)(uintptr_t)&gate),
                                  amp_arg_uint64((uint64_t)(uintptr_t)&started)}};
    int status = fork_while_held(&gate, &started, busy_launch_run, &b, fork_child_array, a);
    cr_assert_eq(status, 0, "the child: 11 a view of the array, 12 its destroy, 13 a second destroy; got %d", status);
    ASSERT_OK(b.st);
    int got = -1;
    ASSERT_OK(amp_array_copy_to_host(a, &got));
    cr_assert_eq(got, 1, "a[0] = %d", got);
    ASSERT_OK(amp_array_destroy(a));
    ASSERT_OK(amp_program_destroy(p));
}

/* ---------------------------------- forks beside a process's builds */

/* Threads of the parent build one program again and again (a hit of the
 * compile cache), take its kernel, destroy it and read the caches' and the
 * prebuilt packs' state, while the main thread forks; every child makes
 * the same calls. Each of those calls takes a short-held lock (the compile
 * cache's, the kernel table's, a module's kernel list, the graph pin
 * table's, the disk cache's note, the prebuilt packs'), which a child used to inherit held by a
 * thread it does not have and waited on for ever: a probe's children hung
 * in 39-58 of 300 forks. A race: with the locks taken across fork, no
 * child may hang; without, this many forks hang some. */
static const char fork_build_src[] = "AMP_KERNEL(inc, amp::index<1> i, amp::array_view<int, 1> v) { v[i] += 1; }\n";

struct fork_builder {
    amp_accelerator *acc;
    int (*calls)(void *acc); /* what the threads and each child do */
    atomic_int stop;
    atomic_int rounds;
};

static int fork_build_calls(void *arg)
{
    amp_accelerator *acc = arg;
    amp_program *p = NULL;
    amp_kernel *k = NULL;
    amp_cache_info ci;
    amp_prebuilt_info pi;
    if (amp_program_build(acc, fork_build_src, NULL, &p) != AMP_OK) return 1;
    int bad = amp_program_get_kernel(p, "inc", &k) != AMP_OK ? 2 : 0;
    if (!bad && amp_cache_get_info(&ci) != AMP_OK) bad = 3;
    if (!bad && amp_prebuilt_get_info(&pi) != AMP_OK) bad = 4;
    if (amp_program_destroy(p) != AMP_OK && !bad) bad = 5;
    return bad;
}

static void *fork_builder_run(void *arg)
{
    struct fork_builder *b = arg;
    while (!atomic_load(&b->stop))
        if (b->calls(b->acc) == 0) atomic_fetch_add(&b->rounds, 1);
    return NULL;
}

/* fork_build_calls with the modules unloaded first: every build loads its
 * module again (dlopen) from the disk cache, every clear unloads one. */
static int fork_reload_calls(void *arg)
{
    if (amp_cache_clear_memory() != AMP_OK) return 6;
    return fork_build_calls(arg);
}

/* forks children, each making calls(acc) under a 10 s alarm, while
 * threads threads make them over and over (at least 10 times before the
 * first fork); asserts none hung or failed (steps names calls' exit
 * codes). */
static void fork_beside_threads(int (*calls)(void *), int threads, int forks, const char *steps)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    cr_assert_eq(calls(acc), 0, "the calls themselves: %s", amp_last_error());
    struct fork_builder b = {.acc = acc, .calls = calls};
    pthread_t th[4];
    cr_assert_leq(threads, 4);
    for (int i = 0; i < threads; ++i) cr_assert_eq(pthread_create(&th[i], NULL, fork_builder_run, &b), 0);
    for (int i = 0; i < 30000 && atomic_load(&b.rounds) < 10; ++i) usleep(1000);
    int hung = 0, failed = 0, last = 0;
    for (int i = 0; i < forks; ++i) {
        int status = fork_child(calls, acc, 10);
        if (WIFSIGNALED(status)) hung++;
        else if (WEXITSTATUS(status)) failed++, last = WEXITSTATUS(status);
    }
    atomic_store(&b.stop, 1);
    for (int i = 0; i < threads; ++i) pthread_join(th[i], NULL);
    cr_assert_geq(atomic_load(&b.rounds), 10, "the threads made the calls %d times", atomic_load(&b.rounds));
    cr_assert_eq(hung, 0, "%d of %d children hung (killed by SIGALRM)", hung, forks);
    cr_assert_eq(failed, 0, "%d of %d children failed (the last at step %d: %s)", failed, forks, last, steps);
}

Test(async, cpu_fork_children_never_hang_beside_threads_building_cached_programs, .timeout = 300)
{
    /* GCC 12's libasan does not take its allocator's lock across fork: a
     * child forked while another thread was in malloc hangs in its own
     * first malloc (1 child in 100 here, in opendir's), whatever the
     * library does. */
    if (TEST_UNDER_ASAN)
        cr_skip_test("AddressSanitizer's allocator is not fork-safe beside other threads that allocate");
    SKIP_IN_DISCRETE_PASS(test_accel(TEST_ACCEL_CPU), "a fork beside building threads");
    fork_beside_threads(fork_build_calls, 2, 100, "1 build, 2 kernel, 3 cache info, 4 prebuilt info, 5 destroy");
}

/* glibc leaves its loader's lock held in a child forked while another
 * thread was inside dlopen or dlclose: the child's first module load
 * waited for ever (15 children of 60 in a review's probe) until module
 * loads and unloads were kept out of fork. */
Test(async, cpu_fork_children_never_hang_beside_a_thread_loading_and_unloading_modules, .timeout = 300)
{
    if (TEST_UNDER_ASAN)
        cr_skip_test("AddressSanitizer's allocator is not fork-safe beside other threads that allocate");
    SKIP_IN_DISCRETE_PASS(test_accel(TEST_ACCEL_CPU), "a fork beside a loading thread");
    fork_beside_threads(fork_reload_calls, 1, 60,
                        "6 clear, 1 build, 2 kernel, 3 cache info, 4 prebuilt info, 5 destroy");
}
