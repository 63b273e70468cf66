/* gpu_cache.c — the GPU benchmark's build-and-cache section: cold compiles through hipamp against the same text compiled by the runtime compiler directly, disk-cache loads and in-memory cache hits. */
#define _GNU_SOURCE
#include "gpu_harness.h"
#include "gpu_sections.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A source no build has seen (a unique first line), so each compile is cold
 * in both caches. */
static char *unique_source(const char *body)
{
    static unsigned counter;
    size_t n = strlen(body) + 64;
    char *u = malloc(n);
    if (!u) die("out of memory");
    snprintf(u, n, "// cold %u %d\n%s", counter++, (int)getpid(), body);
    return u;
}

enum { NCOLD = 5 };
static double cold_s, rtc_s, disk_s, mem_s;
/* Cold compile through hipamp against the same text compiled directly, in
 * alternating pairs after both compilers were warmed up (the first compile
 * in a process pays the runtime compiler's own start-up, which must land in
 * neither number); medians. Then disk-cache loads and in-memory hits. */
void build_cache_measure(void)
{
    amp_program *p;
    char *warm = unique_source("AMP_KERNEL(warm, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 1; }\n");
    AK(amp_program_build(W.acc, warm, NULL, &p));
    AK(amp_program_destroy(p));
    (void)raw_build(warm, NULL);
    free(warm);
    double hc[NCOLD], rc[NCOLD];
    for (int i = 0; i < NCOLD; ++i) {
        char *src = unique_source(wl_transpose_source);
        double t0 = wl_now();
        AK(amp_program_build(W.acc, src, NULL, &p));
        hc[i] = wl_now() - t0;
        AK(amp_program_destroy(p));
        char *src2 = unique_source(wl_transpose_source);
        (void)raw_build(src2, &rc[i]);
        free(src);
        free(src2);
    }
    cold_s = wl_median(hc, NCOLD);
    rtc_s = wl_median(rc, NCOLD);
    AK(amp_program_build(W.acc, wl_transpose_source, NULL, &p));
    AK(amp_program_destroy(p));
    enum { NM = 2000, ND = 15 };
    static double m[NM], d[ND];
    for (int i = 0; i < NM; ++i) {
        double t0 = wl_now();
        AK(amp_program_build(W.acc, wl_transpose_source, NULL, &p));
        m[i] = wl_now() - t0;
        AK(amp_program_destroy(p));
    }
    for (int i = 0; i < ND; ++i) {
        AK(amp_cache_clear_memory());
        double t0 = wl_now();
        AK(amp_program_build(W.acc, wl_transpose_source, NULL, &p));
        d[i] = wl_now() - t0;
        AK(amp_program_destroy(p));
    }
    mem_s = wl_median(m, NM);
    disk_s = wl_median(d, ND);
}

void build_cache_report(void)
{
    out("\n## Build time (transpose.hip, 6 kernels)\n\n");
    out("| step | hipamp | raw | hipamp/raw |\n|---|---:|---:|---:|\n");
    out("| cold compile (%s + load; hipamp also scans, keys and stores on disk), median of %d alternating pairs "
        "after a warm-up | %.1f ms | %.1f ms | %.3f |\n", rg.compiler, NCOLD, cold_s * 1e3, rtc_s * 1e3, cold_s / rtc_s);
    out("| disk-cache load (amp_cache_clear_memory, then build; median of 15) | %.3f ms | | |\n", disk_s * 1e3);
    out("| in-memory hit (build again; median of 2000) | %.2f us | | |\n", mem_s * 1e6);
    add_goal(cold_s <= 1.10 * rtc_s, "cold compile through hipamp vs the same compile done directly", "<= 1.10x", NULL,
             "%.3fx (%.1f vs %.1f ms)", cold_s / rtc_s, cold_s * 1e3, rtc_s * 1e3);
    add_goal(disk_s < 5e-3, "disk-cache load", "< 5 ms", NULL, "%.3f ms", disk_s * 1e3);
    add_goal(mem_s <= 1e-6, "in-memory cache hit", "<= 1 us", NULL, "%.2f us", mem_s * 1e6);
}
