/* test_peer.c — copies between two accelerators and how they move: amp_accelerator_get_peer_info for one accelerator, the CPU and a GPU, and two GPUs of one driver (peer access turned on by the first copy between them, where the driver allows it), with array and section copies both ways checked element by element. The two-GPU tests skip, saying why, on a machine with fewer. */
#include "support.h"

#include <stdio.h>
#include <string.h>

/* Two available GPU accelerators: the first two of one driver ("cuda:0"
 * and "cuda:1"); where there are none and any_driver, the first two of
 * any drivers (of one GPU: cuda:0 and hip:0 on HIP's NVIDIA platform,
 * AMP_GPU_DRIVERS=hip,cuda); else skip saying what this machine has. */
static void pick_two_gpus(amp_accelerator **a, amp_accelerator **b, bool any_driver)
{
    amp_accelerator *list[64], *gpu[64];
    size_t n = 0, found = 0;
    ASSERT_OK(amp_accelerator_list(list, 64, &n));
    if (n > 64) n = 64;
    for (size_t i = 0; i < n; ++i) {
        amp_accelerator_info x;
        ASSERT_OK(amp_accelerator_get_info(list[i], &x));
        if (!x.is_emulated && x.is_available) gpu[found++] = list[i];
    }
    for (size_t i = 0; i < found; ++i)
        for (size_t j = i + 1; j < found; ++j) {
            amp_accelerator_info x, y;
            ASSERT_OK(amp_accelerator_get_info(gpu[i], &x));
            ASSERT_OK(amp_accelerator_get_info(gpu[j], &y));
            size_t k = strcspn(x.device_path, ":");
            if (!strncmp(x.device_path, y.device_path, k + 1)) {
                *a = gpu[i];
                *b = gpu[j];
                return;
            }
        }
    if (any_driver && found >= 2) {
        *a = gpu[0];
        *b = gpu[1];
        return;
    }
    if (any_driver)
        cr_skip_test("this machine has fewer than two available GPU accelerators (%zu accelerator(s) in all; one GPU "
                     "gives two with AMP_GPU_DRIVERS=hip,cuda on HIP's NVIDIA platform)",
                     n);
    cr_skip_test("this machine has fewer than two available GPUs of one driver (%zu accelerator(s)): peer copies "
                 "between two GPUs are not exercised",
                 n);
}

static void two_gpus(amp_accelerator **a, amp_accelerator **b) { pick_two_gpus(a, b, false); }

Test(peer, info_of_one_accelerator_and_of_the_cpu_and_a_gpu)
{
    amp_accelerator *cpu = test_accel(TEST_ACCEL_CPU);
    amp_peer_info p;
    memset(&p, 0x5a, sizeof p);
    ASSERT_OK(amp_accelerator_get_peer_info(cpu, cpu, &p));
    cr_assert(p.direct && !p.enabled, "one accelerator: direct %d enabled %d", p.direct, p.enabled);
    cr_assert(strstr(p.reason, "one accelerator"), "reason: %s", p.reason);
    memset(&p, 0x5a, sizeof p);
    ASSERT_STATUS(amp_accelerator_get_peer_info(NULL, cpu, &p), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(!p.direct && !p.enabled && !p.reason[0], "out not cleared on failure");
    ASSERT_STATUS(amp_accelerator_get_peer_info(cpu, NULL, &p), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_accelerator_get_peer_info(cpu, cpu, NULL), AMP_ERROR_INVALID_ARGUMENT);
    amp_accelerator *list[64];
    size_t n = 0;
    ASSERT_OK(amp_accelerator_list(list, 64, &n));
    for (size_t i = 0; i < n && i < 64; ++i) {
        if (list[i] == cpu) continue;
        ASSERT_OK(amp_accelerator_get_peer_info(list[i], cpu, &p));
        cr_assert(!p.direct && !p.enabled, "a GPU and the CPU accelerator: direct %d", p.direct);
        cr_assert(strstr(p.reason, "through host memory"), "reason: %s", p.reason);
    }
}

/* n floats of a pattern that names the element and the round. */
static void pattern(float *x, size_t n, float round)
{
    for (size_t i = 0; i < n; ++i) x[i] = round * 1e-3f + (float)(i % 1000003);
}

/* Arrays and sections copied gpu a -> gpu b and back, synchronously and
 * not: every element arrives. Where the driver allows peer access both
 * ways, the first copy turns it on (the info says so before and after);
 * elsewhere the copies go through host memory and say so. */
Test(peer, copies_between_two_gpus)
{
    amp_accelerator *a = NULL, *b = NULL;
    two_gpus(&a, &b);
    amp_peer_info before, after;
    ASSERT_OK(amp_accelerator_get_peer_info(a, b, &before));
    cr_assert(!before.enabled, "enabled before any copy: %s", before.reason);
    enum { R = 1024, C = 1000 };
    const size_t n = (size_t)R * C;
    float *host = test_xmalloc(n * sizeof(float)), *back = test_xmalloc(n * sizeof(float));
    pattern(host, n, 1.0f);
    amp_accelerator_view *qa = NULL, *qb = NULL;
    ASSERT_OK(amp_accelerator_default_view(a, &qa));
    ASSERT_OK(amp_accelerator_default_view(b, &qb));
    amp_array *x = NULL, *y = NULL;
    ASSERT_OK(amp_array_create(qa, sizeof(float), amp_extent_2d(R, C), host, &x));
    ASSERT_OK(amp_array_create(qb, sizeof(float), amp_extent_2d(R, C), NULL, &y));
    ASSERT_OK(amp_copy_array(x, y));
    ASSERT_OK(amp_array_copy_to_host(y, back));
    cr_assert(!memcmp(host, back, n * sizeof(float)), "a -> b: the array differs");

    ASSERT_OK(amp_accelerator_get_peer_info(a, b, &after));
    cr_assert_eq(after.direct, before.direct, "before: %s; after: %s", before.reason, after.reason);
    if (before.direct) {
        cr_assert(after.enabled, "the first copy did not turn peer access on: %s", after.reason);
        cr_assert(strstr(after.reason, "peer access on both ways"), "reason: %s", after.reason);
        amp_peer_info other;
        ASSERT_OK(amp_accelerator_get_peer_info(b, a, &other));
        cr_assert(other.direct, "b -> a: %s", other.reason);
    } else {
        cr_assert(strstr(after.reason, "through host memory"), "reason: %s", after.reason);
    }

    /* Back the other way, asynchronously, after b changed it. */
    pattern(host, n, 2.0f);
    ASSERT_OK(amp_array_copy_from_host(y, host));
    amp_future *f = NULL;
    ASSERT_OK(amp_copy_array_async(y, x, &f));
    ASSERT_OK(amp_future_wait(f));
    ASSERT_OK(amp_future_destroy(f));
    ASSERT_OK(amp_array_copy_to_host(x, back));
    cr_assert(!memcmp(host, back, n * sizeof(float)), "b -> a (async): the array differs");

    /* A contiguous block of rows and a strided column block, a -> b. */
    amp_array_view *vx = NULL, *vy = NULL, *sx = NULL, *sy = NULL, *cx = NULL, *cy = NULL;
    ASSERT_OK(amp_array_view_of_array(x, &vx));
    ASSERT_OK(amp_array_view_of_array(y, &vy));
    ASSERT_OK(amp_array_view_section(vx, amp_index_2d(10, 0), amp_extent_2d(100, C), &sx));
    ASSERT_OK(amp_array_view_section(vy, amp_index_2d(500, 0), amp_extent_2d(100, C), &sy));
    ASSERT_OK(amp_array_view_section(vx, amp_index_2d(0, 7), amp_extent_2d(R, 33), &cx));
    ASSERT_OK(amp_array_view_section(vy, amp_index_2d(0, 900), amp_extent_2d(R, 33), &cy));
    float *before_y = test_xmalloc(n * sizeof(float));
    memcpy(before_y, host, n * sizeof(float)); /* y holds pattern 2, as x does */
    pattern(host, n, 3.0f);
    ASSERT_OK(amp_array_copy_from_host(x, host));
    ASSERT_OK(amp_copy_view(sx, sy));
    ASSERT_OK(amp_copy_view_async(cx, cy, &f));
    ASSERT_OK(amp_future_wait(f));
    ASSERT_OK(amp_future_destroy(f));
    amp_array_view *all[] = {sx, sy, cx, cy, vx, vy};
    for (int i = 0; i < 6; ++i) ASSERT_OK(amp_array_view_destroy(all[i]));
    ASSERT_OK(amp_array_copy_to_host(y, back));
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) {
            float want = before_y[(size_t)r * C + c];
            if (c >= 900 && c < 933) want = host[(size_t)r * C + (c - 900 + 7)];
            else if (r >= 500 && r < 600) want = host[(size_t)(r - 500 + 10) * C + c];
            cr_assert(back[(size_t)r * C + c] == want, "sections: b's (%d, %d) is %.9g, want %.9g", r, c,
                      (double)back[(size_t)r * C + c], (double)want);
        }
    ASSERT_OK(amp_array_destroy(x));
    ASSERT_OK(amp_array_destroy(y));
    free(host);
    free(back);
    free(before_y);
}

/* Views of one host array on two GPU accelerators, on the mapped-memory
 * path (AMP_UNIFIED_MEMORY=on): the drivers register host memory for
 * every device at once (and HIP's NVIDIA platform registers it through
 * CUDA's), so the range the first accelerator's view registered is the
 * one the second's view maps too. It stays registered until the last view
 * on either goes: the second's kernels still reach the array after the
 * first's view is destroyed (unregistered then, they read unmapped
 * memory: an illegal address, the context lost). Then the other way
 * round. */
static void force_unified(void) { setenv("AMP_UNIFIED_MEMORY", "on", 1); }

static void add_one(amp_accelerator_view *q, amp_program *p, amp_array_view *v, size_t n)
{
    amp_arg arg[] = {amp_arg_view(v)};
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d((int)n), test_kernel(p, "add_one"), arg, 1));
    ASSERT_OK(amp_array_view_synchronize(v));
}

Test(peer, a_host_array_mapped_on_two_gpu_accelerators_stays_mapped_until_both_let_go, .init = force_unified)
{
    amp_accelerator *acc[2] = {NULL, NULL};
    pick_two_gpus(&acc[0], &acc[1], true);
    static const char src[] = "AMP_KERNEL(add_one, amp::index<1> i, amp::array_view<float, 1> x) { x[i] += 1.0f; }\n";
    amp_program *p[2];
    amp_accelerator_view *q[2];
    for (int g = 0; g < 2; ++g) {
        amp_accelerator_info info;
        ASSERT_OK(amp_accelerator_get_info(acc[g], &info));
        cr_assert(info.is_unified_memory, "AMP_UNIFIED_MEMORY=on: %s is not on the mapped-memory path",
                  info.device_path);
        p[g] = test_build(acc[g], src);
        ASSERT_OK(amp_accelerator_default_view(acc[g], &q[g]));
    }
    enum { N = 1 << 20 };
    float *x = test_xmalloc(N * sizeof(float));
    for (size_t i = 0; i < N; ++i) x[i] = (float)(i % 1000);
    float added = 0;
    for (int first = 0; first < 2; ++first) {
        const int second = 1 - first;
        amp_array_view *v[2];
        for (int g = 0; g < 2; ++g) v[g] = test_view(x, sizeof(float), amp_extent_1d(N), AMP_READ_WRITE);
        add_one(q[first], p[first], v[first], N);
        add_one(q[second], p[second], v[second], N);
        ASSERT_OK(amp_array_view_destroy(v[first]));
        for (int k = 0; k < 3; ++k) add_one(q[second], p[second], v[second], N);
        ASSERT_OK(amp_array_view_destroy(v[second]));
        added += 5;
        for (size_t i = 0; i < N; ++i)
            cr_assert(x[i] == (float)(i % 1000) + added, "GPU %d's view first: x[%zu] is %g, want %g", first, i,
                      (double)x[i], (double)((float)(i % 1000) + added));
    }
    free(x);
    for (int g = 0; g < 2; ++g) ASSERT_OK(amp_program_destroy(p[g]));
}
