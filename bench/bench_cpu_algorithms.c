/* bench_cpu_algorithms.c — bench_cpu's algorithms section (issue 22): reduce and scan of 2^26 float32 on the CPU accelerator against a plain-C copy loop's bandwidth on the same threads, measured in the same run; a sort of 2^24 uint32 keys against std::sort (one thread) and libstdc++'s parallel sort (the same threads) on the same keys; a user-defined reduction's compile time and its later uses against the built-in operator of the same shape. Every result is checked. */
#define _GNU_SOURCE
#include <hipamp.h>

#include "bench_cpu_check.h"

#include "bench_cpu_algorithms.h"
#include "workloads.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double bench_std_sort_ms(uint32_t *keys, size_t n);
double bench_parallel_sort_ms(uint32_t *keys, size_t n, int threads);

enum { ALG_RUNS = 5 };

#define AC(call) BENCH_CPU_CHECK(call)

/* ------------------------------------------------------- the copy loop */

typedef struct copy_part {
    const float *x;
    float *y;
    size_t lo, hi;
} copy_part;

static void *copy_range(void *p)
{
    copy_part *c = p;
    for (size_t i = c->lo; i < c->hi; ++i) c->y[i] = c->x[i];
    return NULL;
}

/* Seconds of one y = x over n floats by `threads` threads (each a
 * contiguous part). */
static double copy_once(const float *x, float *y, size_t n, int threads)
{
    pthread_t th[64];
    copy_part parts[64];
    double t0 = wl_now();
    for (int i = 0; i < threads; ++i) {
        parts[i] = (copy_part){x, y, n * (size_t)i / threads, n * (size_t)(i + 1) / threads};
        if (i > 0) pthread_create(&th[i], NULL, copy_range, &parts[i]);
    }
    copy_range(&parts[0]);
    for (int i = 1; i < threads; ++i) pthread_join(th[i], NULL);
    return wl_now() - t0;
}

/* ------------------------------------------------------------ sections */

int bench_cpu_algorithms(FILE *o, amp_accelerator *acc, bool quick)
{
    amp_accelerator_view *q = NULL;
    amp_accelerator_info info;
    AC(amp_accelerator_default_view(acc, &q));
    AC(amp_accelerator_get_info(acc, &info));
    int threads = info.compute_units > 0 ? info.compute_units : 1;
    if (threads > 64) threads = 64;
    const size_t n = quick ? (size_t)1 << 22 : (size_t)1 << 26, ns = quick ? (size_t)1 << 20 : (size_t)1 << 24;
    const double mb = (double)n * 4 / 1e9; /* GB per pass over the array */
    float *x = malloc(n * 4), *y = malloc(n * 4);
    uint32_t *k = malloc(ns * 4), *keep = malloc(ns * 4), *ref = malloc(ns * 4);
    if (!x || !y || !k || !keep || !ref) {
        fprintf(stderr, "bench_cpu: out of host memory for the algorithms\n");
        return -1;
    }
    int bad = 0;
    for (size_t i = 0; i < n; ++i) x[i] = (float)(i % 17) - 8.0f; /* sums exact in float */
    printf("algorithms: copy loop, reduce, scan, sort, user reduction...\n");

    /* The copy loop (one thread and the accelerator's threads), reduce and
     * scan, interleaved round by round, so that a change in the machine's
     * load reaches all of them alike; medians after a warm-up round. */
    amp_array_view *vx = NULL, *vy = NULL;
    AC(amp_array_view_create(x, 4, amp_extent_1d((int)n), AMP_READ_ONLY, &vx));
    AC(amp_array_view_create(y, 4, amp_extent_1d((int)n), AMP_WRITE_ONLY, &vy));
    float sum = 0;
    double want = 0, t1[ALG_RUNS], tt[ALG_RUNS], tr[ALG_RUNS], tsc[ALG_RUNS];
    for (size_t i = 0; i < n; ++i) want += x[i];
    for (int r = -1; r < ALG_RUNS; ++r) {
        double c1 = copy_once(x, y, n, 1), ct = copy_once(x, y, n, threads);
        double t0 = wl_now();
        AC(amp_reduce(q, amp_arg_view(vx), AMP_TYPE_FLOAT32, AMP_OP_SUM, &sum));
        double t1s = wl_now();
        AC(amp_scan(q, amp_arg_view(vx), amp_arg_view(vy), AMP_TYPE_FLOAT32, AMP_OP_SUM, AMP_SCAN_INCLUSIVE));
        AC(amp_array_view_synchronize(vy));
        double t2 = wl_now();
        if (r < 0) continue;
        t1[r] = c1;
        tt[r] = ct;
        tr[r] = t1s - t0;
        tsc[r] = t2 - t1s;
    }
    double copy1 = wl_median(t1, ALG_RUNS), copyt = wl_median(tt, ALG_RUNS);
    double red_s = wl_median(tr, ALG_RUNS), scan_s = wl_median(tsc, ALG_RUNS);
    double copy_gbs = 2 * mb / copyt, copy1_gbs = 2 * mb / copy1; /* read + written */
    if ((double)sum != want) bad++;
    double run = 0;
    for (size_t i = 0; i < n; ++i) {
        run += x[i];
        if ((double)y[i] != run) {
            bad++;
            break;
        }
    }

    /* A user-defined reduction of the built-in's shape (map x, a + b): its
     * first use compiles it (a source no cache has seen), later uses run
     * beside the built-in, interleaved. */
    char pre[128];
    snprintf(pre, sizeof pre, "// bench_cpu %ld %.0f\n", (long)getpid(), wl_now() * 1e6);
    amp_reduction_desc d = {.name = "sum", .inputs = "float x", .type = AMP_TYPE_FLOAT32, .map = "x",
                            .reduce = "a + b", .identity = "0", .preamble = pre};
    amp_reduction *red = NULL;
    double t0 = wl_now();
    AC(amp_reduction_create(acc, &d, &red));
    double compile_s = wl_now() - t0;
    amp_arg arg = amp_arg_view(vx);
    double tu[3 * ALG_RUNS], tb[3 * ALG_RUNS];
    float us = 0;
    for (int r = -1; r < 3 * ALG_RUNS; ++r) {
        double a0 = wl_now();
        AC(amp_reduction_apply(q, red, &arg, 1, &us));
        double a1 = wl_now();
        AC(amp_reduce(q, amp_arg_view(vx), AMP_TYPE_FLOAT32, AMP_OP_SUM, &sum));
        double a2 = wl_now();
        if (r >= 0) {
            tu[r] = a1 - a0;
            tb[r] = a2 - a1;
        }
    }
    double user_s = wl_median(tu, 3 * ALG_RUNS), builtin_s = wl_median(tb, 3 * ALG_RUNS);
    if ((double)us != want) bad++;
    AC(amp_reduction_destroy(red));

    /* Sort: 2^24 random uint32 keys, restored before each run (not timed). */
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < ns; ++i) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        keep[i] = (uint32_t)(s >> 32);
    }
    /* hipamp's sort and std::sort interleaved (the parallel sort after). */
    amp_array_view *vk = NULL;
    AC(amp_array_view_create(k, 4, amp_extent_1d((int)ns), AMP_READ_WRITE, &vk));
    double t[ALG_RUNS], tstd[ALG_RUNS], tpar[3];
    for (int r = -1; r < ALG_RUNS; ++r) {
        memcpy(k, keep, ns * 4);
        AC(amp_array_view_refresh(vk));
        double s0 = wl_now();
        AC(amp_sort(q, amp_arg_view(vk), AMP_TYPE_UINT32, AMP_ASCENDING));
        AC(amp_array_view_synchronize(vk));
        double s1 = wl_now();
        memcpy(ref, keep, ns * 4);
        double st = bench_std_sort_ms(ref, ns) / 1e3;
        if (r < 0) continue;
        t[r] = s1 - s0;
        tstd[r] = st;
    }
    double sort_s = wl_median(t, ALG_RUNS);
    for (int r = 0; r < 3; ++r) {
        memcpy(ref, keep, ns * 4);
        tpar[r] = bench_parallel_sort_ms(ref, ns, threads) / 1e3;
    }
    double std_s = wl_median(tstd, ALG_RUNS), par_s = tpar[0] < 0 ? -1 : wl_median(tpar, 3);
    memcpy(ref, keep, ns * 4);
    bench_std_sort_ms(ref, ns);
    if (memcmp(ref, k, ns * 4)) bad++;

    AC(amp_array_view_destroy(vk));
    AC(amp_array_view_destroy(vx));
    AC(amp_array_view_destroy(vy));

    double red_gbs = mb / red_s, scan_gbs = 2 * mb / scan_s;
    fprintf(o, "\n## Algorithms\n\n");
    fprintf(o, "hipamp's algorithms on the CPU accelerator (%d threads), against plain C in the same run: a copy "
               "loop (`y[i] = x[i]`, -O3, on one thread and split over the same %d threads; bandwidth counts the "
               "bytes read and written), `std::sort` (g++ -O3, one thread) and libstdc++'s parallel mode "
               "(`__gnu_parallel::sort`, the same %d threads). Reduce counts the bytes it reads, a scan the bytes "
               "it reads and writes. Medians of %d after a warm-up; the tuning knobs at their defaults unless "
               "AMP_ALG_* is set (docs/algorithms.md).\n\n",
            threads, threads, threads, ALG_RUNS);
    fprintf(o, "| figure | hipamp | reference | hipamp / reference | goal |\n|---|---:|---:|---:|---|\n");
    fprintf(o, "| copy loop 2^%d float32, %d threads (1 thread) | — | %.2f GB/s (%.2f) | — | — |\n", quick ? 22 : 26,
            threads, copy_gbs, copy1_gbs);
    fprintf(o, "| reduce sum 2^%d float32 | %.2f GB/s | copy %.2f GB/s | **%.2f** | >= 0.80 %s |\n", quick ? 22 : 26,
            red_gbs, copy_gbs, red_gbs / copy_gbs, red_gbs >= 0.8 * copy_gbs ? "met" : "**missed**");
    fprintf(o, "| inclusive scan 2^%d float32 | %.2f GB/s | copy %.2f GB/s | **%.2f** | >= 0.80 %s |\n",
            quick ? 22 : 26, scan_gbs, copy_gbs, scan_gbs / copy_gbs, scan_gbs >= 0.8 * copy_gbs ? "met" : "**missed**");
    fprintf(o, "| sort 2^%d uint32 keys | %.1f ms | std::sort %.1f ms | **%.2fx** faster | faster %s |\n",
            quick ? 20 : 24, sort_s * 1e3, std_s * 1e3, std_s / sort_s, sort_s < std_s ? "met" : "**missed**");
    if (par_s > 0)
        fprintf(o, "| sort 2^%d uint32 keys | %.1f ms | parallel sort (%d threads) %.1f ms | **%.2fx** faster | — |\n",
                quick ? 20 : 24, sort_s * 1e3, threads, par_s * 1e3, par_s / sort_s);
    else
        fprintf(o, "| sort, parallel reference | — | not built (no OpenMP) | — | — |\n");
    fprintf(o, "| user reduction (x, a + b): first use, its compile | %.2f s | — | — | reported |\n", compile_s);
    fprintf(o, "| user reduction, later uses vs amp_reduce sum | %.2f ms | %.2f ms | **%.3f** | within 5%% %s |\n",
            user_s * 1e3, builtin_s * 1e3, user_s / builtin_s,
            user_s <= 1.05 * builtin_s ? "met" : "**missed**");
    fprintf(o, "\nChecks: %s.\n", bad ? "FAILED" : "every result equal to the plain-C one");
    free(x);
    free(y);
    free(k);
    free(keep);
    free(ref);
    return bad;
}
