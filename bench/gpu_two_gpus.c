/* gpu_two_gpus.c — the GPU benchmark's two-GPU section: an array copied between two GPUs through hipamp against the raw driver's peer copy, and one long kernel on each GPU at once against one alone. */
#include "gpu_harness.h"
#include "gpu_sections.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char spin_source[] =
    "AMP_KERNEL(spin, amp::index<1> i, amp::array_view<float, 1> x, int iters)\n"
    "{ float v = x[i]; for (int k = 0; k < iters; ++k) v = v * 0.999f + 0.001f; x[i] = v; }\n";

/* The second GPU's device path: device 0's with index 1. */
static void second_path(char *path, size_t n)
{
    snprintf(path, n, "%.*s1", (int)(strchr(rg.accelerator, ':') - rg.accelerator + 1), rg.accelerator);
}

/* Arrays on two GPUs: the peer copy through amp_copy_array_async (device
 * time from its future) against the raw driver's peer copy, both checked;
 * then one long kernel on each GPU, alone and both at once from this thread
 * (wall clock), to show that the two run concurrently. */
void two_gpus_report(void)
{
    out("\n## Two GPUs\n\n");
    char path1[32], why[256] = "";
    second_path(path1, sizeof path1);
    amp_accelerator *acc1 = NULL;
    if (rg_device_count() < 2 || amp_accelerator_find(path1, &acc1) != AMP_OK) {
        out("This machine has one GPU (%s): the peer copy and concurrent launches on two GPUs were not measured.\n",
            rg.accelerator);
        return;
    }
    const size_t bytes = quick ? (64u << 20) : (512u << 20);
    const int reps = 15;
    const size_t n = bytes / 4;
    float *host = malloc(bytes), *back = malloc(bytes);
    if (!host || !back) die("out of memory");
    wl_fill_random(host, n, &rng);
    amp_accelerator_view *q0, *q1;
    AK(amp_accelerator_default_view(W.acc, &q0));
    AK(amp_accelerator_default_view(acc1, &q1));
    amp_array *a, *b;
    AK(amp_array_create(q0, 4, amp_extent_1d((int)n), host, &a));
    AK(amp_array_create(q1, 4, amp_extent_1d((int)n), NULL, &b));
    AK(amp_copy_array(a, b)); /* warm-up: peer access is enabled on first use */
    double t[32];
    for (int r = 0; r < reps; ++r) {
        amp_future *f;
        AK(amp_copy_array_async(a, b, &f));
        AK(amp_future_wait(f));
        double ms = 0;
        AK(amp_future_elapsed_ms(f, &ms));
        t[r] = ms * 1e-3;
        amp_future_destroy(f);
    }
    double amp_s = wl_median(t, reps);
    AK(amp_array_copy_to_host(b, back));
    bool ok = memcmp(host, back, bytes) == 0;
    failures += !ok;
    double raw_s = 0;
    bool direct = false;
    bool raw_ok = rg_peer_copy(bytes, reps, &raw_s, &direct, why, sizeof why);
    out("| copy %s -> %s, %zu MiB | GB/s | check |\n|---|---:|---|\n", rg.accelerator, path1, bytes >> 20);
    out("| amp_copy_array_async (device time of its future; median of %d) | %.1f | %s |\n", reps, bytes / amp_s * 1e-9,
        ok ? "passed" : "FAILED");
    if (raw_ok) {
        out("| raw peer copy on a stream (%s events; median of %d; peer access %s) | %.1f | passed |\n", rg.events, reps,
            direct ? "on" : "not possible: staged by the driver", bytes / raw_s * 1e-9);
        add_goal(amp_s <= raw_s / 0.9, "peer copy between two GPUs vs the raw driver's", ">= 0.90", NULL,
                 "%.2f (%.1f vs %.1f GB/s)", raw_s / amp_s, bytes / amp_s * 1e-9, bytes / raw_s * 1e-9);
    } else {
        out("| raw peer copy | - | not run: %s |\n", why);
    }
    amp_array_destroy(a);
    amp_array_destroy(b);

    /* Concurrency: a kernel of about 100 ms on each GPU. */
    const int cn = 1 << 20, iters = quick ? 20000 : 100000;
    float *x0 = malloc(cn * 4), *x1 = malloc(cn * 4);
    if (!x0 || !x1) die("out of memory");
    amp_program *p0, *p1;
    amp_kernel *k0, *k1;
    AK(amp_program_build(W.acc, spin_source, NULL, &p0));
    AK(amp_program_build(acc1, spin_source, NULL, &p1));
    AK(amp_program_get_kernel(p0, "spin", &k0));
    AK(amp_program_get_kernel(p1, "spin", &k1));
    amp_array *d0, *d1;
    for (int i = 0; i < cn; ++i) x0[i] = (float)(i % 1000) * 1e-3f;
    AK(amp_array_create(q0, 4, amp_extent_1d(cn), x0, &d0));
    AK(amp_array_create(q1, 4, amp_extent_1d(cn), x0, &d1));
    amp_arg a0[] = {amp_arg_array(d0), amp_arg_int32(iters)}, a1[] = {amp_arg_array(d1), amp_arg_int32(iters)};
    AK(amp_parallel_for_each(q0, amp_extent_1d(cn), k0, a0, 2)); /* warm-up */
    AK(amp_parallel_for_each(q1, amp_extent_1d(cn), k1, a1, 2));
    AK(amp_accelerator_view_wait(q0));
    AK(amp_accelerator_view_wait(q1));
    double one[5], both[5];
    for (int r = 0; r < 5; ++r) {
        double t0 = wl_now();
        AK(amp_parallel_for_each(q0, amp_extent_1d(cn), k0, a0, 2));
        AK(amp_accelerator_view_wait(q0));
        one[r] = wl_now() - t0;
        t0 = wl_now();
        amp_future *f0, *f1;
        AK(amp_parallel_for_each_async(q0, amp_extent_1d(cn), k0, a0, 2, &f0));
        AK(amp_parallel_for_each_async(q1, amp_extent_1d(cn), k1, a1, 2, &f1));
        AK(amp_future_wait(f0));
        AK(amp_future_wait(f1));
        both[r] = wl_now() - t0;
        amp_future_destroy(f0);
        amp_future_destroy(f1);
    }
    /* d0 ran 1 + 5 + 5 times, d1 1 + 5 times. */
    AK(amp_array_copy_to_host(d0, x0));
    AK(amp_array_copy_to_host(d1, x1));
    int bad = 0;
    for (int i = 0; i < cn; i += 997) {
        float v0 = (float)(i % 1000) * 1e-3f, v1;
        for (int k = 0; k < 6 * iters; ++k) v0 = v0 * 0.999f + 0.001f;
        v1 = v0;
        for (int k = 0; k < 5 * iters; ++k) v0 = v0 * 0.999f + 0.001f;
        bad += fabsf(x0[i] - v0) > 1e-3f || fabsf(x1[i] - v1) > 1e-3f;
    }
    failures += bad != 0;
    double s1 = wl_median(one, 5), s2 = wl_median(both, 5);
    out("\n| one long kernel (%d launches of %d work-items x %d steps) | ms | check |\n|---|---:|---|\n", 5, cn, iters);
    out("| on %s alone | %.1f | - |\n", rg.accelerator, s1 * 1e3);
    out("| on %s and %s at once (two async launches from one thread, then both waits) | %.1f | %s |\n",
        rg.accelerator, path1, s2 * 1e3, bad ? "FAILED" : "passed");
    add_goal(s2 < 1.25 * s1, "two GPUs at once from one thread vs one GPU alone", "< 1.25x", NULL, "%.2fx",
             s2 / s1);
    amp_array_destroy(d0);
    amp_array_destroy(d1);
    amp_program_destroy(p0);
    amp_program_destroy(p1);
    free(x0);
    free(x1);
    free(host);
    free(back);
}
