/* gpu_launch.c — the GPU benchmark's launch section: launch overhead against the raw launch from paired batches, where a launch's time goes (--launch-only), and the trace hooks' cost measured by bench_trace. */
#define _GNU_SOURCE
#include "gpu_harness.h"
#include "gpu_sections.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Launch overhead, paired: LAUNCH_PAIRS pairs of short batches (about a
 * millisecond each), hipamp's and the raw one back to back, which goes
 * first alternating. The overhead is the median of the pairs'
 * differences: this machine's launch time drifts from one moment to the
 * next by as much as the difference sought, and a pair sees one moment. */
enum { LAUNCH_PAIRS = 101 };
typedef struct paired { double amp_s, raw_s, raw_ev_s, diff_s, diff_q1_s, diff_q3_s; int n; } paired;
static double launch_diff_us, launch_diff_q1_us, launch_diff_q3_us;
static paired compare_paired(const hrun *h, run_fn raw, void *rjob)
{
    paired c;
    int n = warm_up_and_size(h, raw, rjob, 64, 1e-3, 16, 2000);
    double a[LAUNCH_PAIRS], r[LAUNCH_PAIRS], e[REPS], d[LAUNCH_PAIRS];
    for (int i = 0; i < LAUNCH_PAIRS; ++i) {
        if (i & 1) {
            r[i] = raw_plain_batch(raw, rjob, n);
            a[i] = hip_batch(h, n);
        } else {
            a[i] = hip_batch(h, n);
            r[i] = raw_plain_batch(raw, rjob, n);
        }
        d[i] = a[i] - r[i];
    }
    for (int i = 0; i < REPS; ++i) raw_batch(raw, rjob, n, &e[i]);
    c.diff_s = wl_median(d, LAUNCH_PAIRS); /* sorts d */
    c.diff_q1_s = d[LAUNCH_PAIRS / 4];
    c.diff_q3_s = d[3 * LAUNCH_PAIRS / 4];
    c.amp_s = wl_median(a, LAUNCH_PAIRS);
    c.raw_s = wl_median(r, LAUNCH_PAIRS);
    c.raw_ev_s = wl_median(e, REPS);
    c.n = n;
    return c;
}

typedef struct sxjob { rg_ptr x, y, z; int n; } sxjob;
static void raw_saxpy3(void *p)
{
    sxjob *j = p;
    rview v[3] = {rv1(j->x, j->n), rv1(j->y, j->n), rv1(j->z, j->n)};
    raw_launch(&rk_saxpy3, amp_extent_1d(j->n), v, 3);
}
typedef struct hsxjob { amp_array_view *x, *y, *z; int n; } hsxjob;
static amp_status hip_saxpy3(void *p)
{
    hsxjob *j = p;
    amp_arg args[3] = {amp_arg_view(j->x), amp_arg_view(j->y), amp_arg_view(j->z)};
    return amp_parallel_for_each(W.q, amp_extent_1d(j->n), W.saxpy3, args, 3);
}

static double trace_on_us = -1, trace_on_pct;

/* --launch-only: where a launch's time goes. Long batches (wall and device
 * events, the device events on hipamp's own stream too), raw launches on
 * hipamp's stream and buffers, and the host cost of a short burst of
 * launches that cannot fill the driver's queue (the GPU idle at its
 * start), each side median of REPS. */
static double host_burst(const hrun *h, run_fn raw, void *rjob, int k)
{
    if (h) {
        AK(amp_accelerator_view_wait(W.q));
        double t0 = wl_now();
        for (int i = 0; i < k; ++i) AK(h->fn(h->job));
        double t = (wl_now() - t0) / k;
        AK(amp_accelerator_view_wait(W.q));
        return t;
    }
    rg_sync();
    double t0 = wl_now();
    for (int i = 0; i < k; ++i) raw(rjob);
    double t = (wl_now() - t0) / k;
    rg_sync();
    return t;
}
static void launch_study(const hrun *h, sxjob *rj, hsxjob *hj)
{
    void *hs = NULL;
    AK(amp_accelerator_view_native_queue(W.q, &hs));
    void *px, *py, *pz;
    AK(amp_array_view_native_handle(hj->x, W.q, AMP_READ_ONLY, &px));
    AK(amp_array_view_native_handle(hj->y, W.q, AMP_READ_ONLY, &py));
    AK(amp_array_view_native_handle(hj->z, W.q, AMP_READ_WRITE, &pz));
    sxjob same = {(rg_ptr)(uintptr_t)px, (rg_ptr)(uintptr_t)py, (rg_ptr)(uintptr_t)pz, rj->n};
    const int n = 3000;
    enum { K = 48, NB = 41 };
    double hw[REPS], he[REPS], rw[REPS], re[REPS], sw[REPS], se[REPS];
    for (int i = 0; i < REPS; ++i) {
        rg_use_stream(hs);
        AK(amp_accelerator_view_wait(W.q));
        double t0 = wl_now();
        rg_events_begin();
        for (int j = 0; j < n; ++j) AK(h->fn(h->job));
        rg_events_end();
        hw[i] = (wl_now() - t0) / n;
        he[i] = rg_events_seconds() / n;
        sw[i] = raw_batch(raw_saxpy3, &same, n, &se[i]);
        rg_use_stream(NULL);
        rw[i] = raw_batch(raw_saxpy3, rj, n, &re[i]);
    }
    double hb[NB], rb[NB], sb[NB];
    for (int i = 0; i < NB; ++i) {
        hb[i] = host_burst(h, NULL, NULL, K);
        rb[i] = host_burst(NULL, raw_saxpy3, rj, K);
        rg_use_stream(hs);
        sb[i] = host_burst(NULL, raw_saxpy3, &same, K);
        rg_use_stream(NULL);
    }
    printf("launch study (us a launch; medians)\n");
    printf("  long batch of %d: hipamp wall %.3f events %.3f | raw own stream wall %.3f events %.3f | "
           "raw on hipamp's stream+buffers wall %.3f events %.3f\n",
           n, wl_median(hw, REPS) * 1e6, wl_median(he, REPS) * 1e6, wl_median(rw, REPS) * 1e6,
           wl_median(re, REPS) * 1e6, wl_median(sw, REPS) * 1e6, wl_median(se, REPS) * 1e6);
    printf("  host cost, burst of %d after a wait: hipamp %.3f | raw %.3f | raw on hipamp's stream %.3f | "
           "difference %+.3f\n",
           K, wl_median(hb, NB) * 1e6, wl_median(rb, NB) * 1e6, wl_median(sb, NB) * 1e6,
           (wl_median(hb, NB) - wl_median(rb, NB)) * 1e6);
}


void launch_row(bool where_time_goes)
{
    const int n = 4096;
    float *x = malloc(n * 4), *y = malloc(n * 4), *z = malloc(n * 4);
    wl_fill_random(x, n, &rng);
    wl_fill_random(y, n, &rng);
    wl_poison(z, n);
    hsxjob hj = {NULL, NULL, NULL, n};
    AK(amp_array_view_create(x, 4, amp_extent_1d(n), AMP_READ_ONLY, &hj.x));
    AK(amp_array_view_create(y, 4, amp_extent_1d(n), AMP_READ_ONLY, &hj.y));
    AK(amp_array_view_create(z, 4, amp_extent_1d(n), AMP_READ_WRITE, &hj.z));
    sxjob rj = {rg_alloc(n * 4), rg_alloc(n * 4), rg_alloc(n * 4), n};
    rg_h2d(rj.x, x, n * 4);
    rg_h2d(rj.y, y, n * 4);
    rg_fill32(rj.z, 0x7fc0dead, n);
    hrun h = {hip_saxpy3, &hj};
    paired c = compare_paired(&h, raw_saxpy3, &rj);
    if (where_time_goes) launch_study(&h, &rj, &hj);
    AK(amp_array_view_destroy(hj.z));
    AK(amp_array_view_destroy(hj.y));
    AK(amp_array_view_destroy(hj.x));
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += !(z[i] == 2.0f * x[i] + y[i]);
    rg_d2h(z, rj.z, n * 4);
    for (int i = 0; i < n; ++i) bad += !(z[i] == 2.0f * x[i] + y[i]);
    if (bad) failures++;
    double au = c.amp_s * 1e6, ru = c.raw_s * 1e6, du = c.diff_s * 1e6;
    out("| launch: 3 resident views, %d floats | %.2f | %.2f | %+.2f | %.2f | %d | %s |\n", n, au, ru, du,
        c.raw_ev_s * 1e6, c.n, bad ? "FAILED" : "passed");
    launch_diff_us = du;
    launch_diff_q1_us = c.diff_q1_s * 1e6;
    launch_diff_q3_us = c.diff_q3_s * 1e6;
    add_goal(du <= 0.3, "launch overhead above the raw launch", "<= 0.3 us", NULL,
             "%+.2f us (median of %d paired differences; %.2f vs %.2f)", du, LAUNCH_PAIRS, au, ru);
    rg_free(rj.x);
    rg_free(rj.y);
    rg_free(rj.z);
    free(x);
    free(y);
    free(z);
}

/* Launch overhead of the trace hooks (bench_trace beside this program:
 * libhipamp with the hooks in but tracing off, the same sources built with
 * -DHIPAMP_TRACE=OFF, and with AMP_TRACE on, interleaved in one process).
 * Rows go into the launch-overhead table; the goal is that the hooks cost
 * nothing measurable while off. */
static void bench_trace_hooks(const char *dir)
{
    char path[PATH_MAX + 32], cmd[PATH_MAX + 128];
    snprintf(path, sizeof path, "%s/bench_trace", dir);
    if (access(path, X_OK) != 0) {
        out("| trace hooks: bench_trace was not built beside %s | - | - | - | - | - | - |\n", rg.program);
        return;
    }
    snprintf(cmd, sizeof cmd, "timeout 300 '%s' --accelerator %s 2>&1", path, rg.accelerator);
    FILE *f = popen(cmd, "r");
    if (!f) return;
    char line[1024], label[128], check[32], verdict[32];
    double off = 0, off_pct = 0, off_noise = 0, on = 0, on_pct = 0, on_noise = 0;
    int n = 0, rows = 0;
    bool diffs = false;
    while (fgets(line, sizeof line, f)) {
        double v, lo, hi;
        if (sscanf(line, "row\t%127[^\t]\t%lf\t%lf\t%lf\t%d\t%31s", label, &v, &lo, &hi, &n, check) == 6 && rows < 3) {
            rows++;
            if (strcmp(check, "passed")) failures++;
            const char *what = rows == 1   ? "hooks in, tracing off"
                               : rows == 2 ? "same sources, hooks compiled out (-DHIPAMP_TRACE=OFF)"
                                           : "AMP_TRACE on (a trace event and two timed events a launch)";
            out("| launch, 3 resident views (bench_trace): %s | %.2f | - | %s | - | %d | %s |\n", what, v,
                rows == 1 ? "-" : "see below", n, check);
        } else if (sscanf(line, "diff\toff\t%lf\t%lf\t%lf\t%31s", &off, &off_pct, &off_noise, verdict) == 4) {
            diffs = true;
        } else if (sscanf(line, "diff\ton\t%lf\t%lf\t%lf", &on, &on_pct, &on_noise) == 3) {
        } else if (strncmp(line, "  ", 2) && strncmp(line, "trace hooks:", 12)) {
            fprintf(stderr, "bench_trace: %s", line);
        }
    }
    int rc = pclose(f);
    if (rc != 0 || rows != 3 || !diffs) {
        failures++;
        out("| trace hooks: bench_trace failed (status %d) | - | - | - | - | - | FAILED |\n", rc);
        return;
    }
    out("| trace hooks in but off, minus compiled out (paired rounds; noise = 2 x MAD) | %+.3f | - | %+.2f%% (noise +-%.3f) | - | %d | %s |\n",
        off, off_pct, off_noise, n, verdict);
    out("| AMP_TRACE on, minus compiled out | %+.3f | - | %+.2f%% (noise +-%.3f) | - | %d | - |\n", on, on_pct,
        on_noise, n);
    add_goal(!strcmp(verdict, "equal"), "launch overhead, trace hooks in but off vs built without them",
             "equal within noise", NULL, "%+.3f us (%+.2f%%), noise +-%.3f us", off, off_pct, off_noise);
    trace_on_us = on;
    trace_on_pct = on_pct;
}

void launch_report(void)
{
    out("\n## Launch overhead (wall clock per launch, many launches between two waits)\n\n");
    out("The first row: %d pairs of batches of about a millisecond, hipamp's and the raw one back to back "
        "(which goes first alternates); the times are each side's median, the difference the median of the "
        "pairs' differences.\n\n", LAUNCH_PAIRS);
    out("| workload | hipamp us | raw us | difference us | raw us (events) | launches a batch | check |\n");
    out("|---|---:|---:|---:|---:|---:|---|\n");
    launch_row(false);
    char self[PATH_MAX];
    if (self_dir(self, sizeof self)) bench_trace_hooks(self);
    out("\nLaunch overhead above the raw launch, the pairs' differences: median %+.2f us, interquartile range "
        "%+.2f to %+.2f us.\n", launch_diff_us, launch_diff_q1_us, launch_diff_q3_us);
    if (trace_on_us > -1)
        out("\nWith AMP_TRACE on, each launch also records two timed device events and a trace event: %+.2f us "
            "(%+.1f%%) a launch above the library built without the hooks.\n",
            trace_on_us, trace_on_pct);
}
