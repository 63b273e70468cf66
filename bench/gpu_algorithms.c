/* gpu_algorithms.c — the GPU benchmark's algorithms section (issue 22): reduce and dot of 2^28 float32 through hipamp against the vendor BLAS's Sasum and Sdot on the same buffers and against the device-to-device copy, exclusive scans of 2^28 int32 and float32 and the compaction (amp_copy_if) of 2^28 int32 against the copy, radix sorts of 2^26 uint32 keys and (uint32, uint32) pairs in Gkeys/s, and all of them against CUB (cub_ref beside this program, where it was built); the tuning knobs in effect are printed so that one GPU call can sweep them (ci/gpu.sh figures with GPU_SETTINGS; HIPAMP_BENCH_ALGORITHMS=reduce,scan,select,sort picks part of the section, without CUB; HIPAMP_BENCH_SORT_MASK=hex keeps some bits of the sort keys, without CUB). Every result is checked. */
#define _GNU_SOURCE
#include "gpu_harness.h"
#include "gpu_sections.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* -------------------------------------------------------------- hipamp */

typedef struct aljob {
    amp_arg x, y, out, res;
    amp_type t;
} aljob;

static amp_status run_reduce(void *p)
{
    aljob *j = p;
    return amp_reduce_async(W.q, j->x, j->t, AMP_OP_SUM, j->res, NULL);
}
static amp_status run_dot(void *p)
{
    aljob *j = p;
    return amp_transform_reduce_async(W.q, j->x, j->y, j->t, AMP_MAP_PRODUCT, AMP_OP_SUM, j->res, NULL);
}
static amp_status run_scan(void *p)
{
    aljob *j = p;
    return amp_scan(W.q, j->x, j->out, j->t, AMP_OP_SUM, AMP_SCAN_EXCLUSIVE);
}
/* Compaction of the even int32 (about half of the scan's input); blocks,
 * the count coming back to the host, as every amp_copy_if does. */
static uint64_t select_count;
static amp_status run_select(void *p)
{
    aljob *j = p;
    return amp_copy_if(W.q, j->x, j->out, AMP_TYPE_INT32, "(x & 1) == 0", NULL, &select_count);
}

/* Seconds per run: the median of REPS batches sized to about 30 ms. */
static double hip_time(amp_status (*fn)(void *), void *job)
{
    hrun h = {fn, job};
    double one = hip_batch(&h, 1);
    int n = one > 0 ? (int)(0.03 / one) : 10;
    if (n < 1) n = 1;
    if (n > 200) n = 200;
    double t[REPS];
    for (int i = 0; i < REPS; ++i) t[i] = hip_batch(&h, n);
    return wl_median(t, REPS);
}

/* ----------------------------------------------------------------- raw */

typedef struct rjob {
    rg_ptr x, y, res;
    size_t bytes;
    int n;
} rjob;
static void raw_copy(void *p)
{
    rjob *j = p;
    rg_copy_async(j->y, j->x, j->bytes);
}
static void raw_sasum(void *p)
{
    rjob *j = p;
    rg_sasum(j->n, j->x, j->res);
}
static void raw_sdot(void *p)
{
    rjob *j = p;
    rg_sdot(j->n, j->x, j->y, j->res);
}

static rg_ptr native(amp_array *a)
{
    void *p = NULL;
    AK(amp_array_native_handle(a, &p));
    return (rg_ptr)(uintptr_t)p;
}

/* ----------------------------------------------------------------- CUB */

typedef struct cubfig {
    const char *name;
    double ms;
} cubfig;
static cubfig cub[] = {{"reduce_sum_f32", -1}, {"scan_exclusive_i32", -1}, {"scan_exclusive_f32", -1},
                       {"sort_keys_u32", -1},  {"sort_pairs_u32", -1}};
static char cub_note[320];

static void run_cub(size_t n_reduce, size_t n_scan, size_t n_sort)
{
    char dir[1024], cmd[1400];
    const char *skip = getenv("HIPAMP_BENCH_NO_CUB");
    if (skip && *skip && strcmp(skip, "0")) {
        snprintf(cub_note, sizeof cub_note, "skipped (HIPAMP_BENCH_NO_CUB is set: a tuning sweep)");
        return;
    }
    if (!self_dir(dir, sizeof dir)) {
        snprintf(cub_note, sizeof cub_note, "cannot find this program's directory");
        return;
    }
    snprintf(cmd, sizeof cmd, "%s/cub_ref", dir);
    if (access(cmd, X_OK) != 0) {
        snprintf(cub_note, sizeof cub_note,
                 "cub_ref was not built (no nvcc here, or `cmake --build <build> --target cub_ref` was not run)");
        return;
    }
    snprintf(cmd, sizeof cmd, "timeout 300 '%s/cub_ref' --reduce %zu --scan %zu --sort %zu --reps %d 2>&1", dir,
             n_reduce, n_scan, n_sort, REPS);
    FILE *f = popen(cmd, "r");
    if (!f) {
        snprintf(cub_note, sizeof cub_note, "could not run cub_ref");
        return;
    }
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char name[64];
        size_t n;
        double ms;
        if (!strncmp(line, "cub version", 11)) {
            line[strcspn(line, "\n")] = 0;
            snprintf(cub_note, sizeof cub_note, "%.300s", line + 4);
        } else if (sscanf(line, "cub %63s %zu %lf", name, &n, &ms) == 3) {
            for (size_t i = 0; i < sizeof cub / sizeof cub[0]; ++i)
                if (!strcmp(cub[i].name, name)) cub[i].ms = ms;
        } else {
            fprintf(stderr, "cub_ref: %s", line);
        }
    }
    int rc = pclose(f);
    if (rc != 0) snprintf(cub_note + strlen(cub_note), sizeof cub_note - strlen(cub_note), " (exit status %d)", rc);
}

/* Seconds per exclusive scan of x (filled from h first) into y as type t;
 * h holds y's result afterwards. */
static double time_scan(aljob *j, amp_type t, amp_array *x, amp_array *y, void *h)
{
    AK(amp_array_copy_from_host(x, h));
    j->t = t;
    double s = hip_time(run_scan, j);
    AK(amp_array_copy_to_host(y, h));
    return s;
}

/* --------------------------------------------------------------- sorts */

/* Median seconds of sorting n random keys (and values), each run on keys
 * restored from a pristine copy first (not timed); checks the last run. */
static double time_sort(amp_array *keys, amp_array *pristine, amp_array *values, size_t n, bool *ok)
{
    double t[REPS];
    uint32_t start = 0;
    for (int r = -1; r < REPS; ++r) {
        AK(amp_copy_array(pristine, keys));
        if (values) AK(amp_iota(W.q, amp_arg_array(values), AMP_TYPE_UINT32, &start, NULL));
        AK(amp_accelerator_view_wait(W.q));
        double t0 = wl_now();
        if (values) AK(amp_sort_by_key(W.q, amp_arg_array(keys), amp_arg_array(values), AMP_TYPE_UINT32, AMP_ASCENDING));
        else AK(amp_sort(W.q, amp_arg_array(keys), AMP_TYPE_UINT32, AMP_ASCENDING));
        AK(amp_accelerator_view_wait(W.q));
        if (r >= 0) t[r] = wl_now() - t0;
    }
    uint32_t *k = malloc(n * 4), *orig = malloc(n * 4), *v = values ? malloc(n * 4) : NULL;
    if (!k || !orig || (values && !v)) die("out of host memory for the sort check");
    AK(amp_array_copy_to_host(keys, k));
    AK(amp_array_copy_to_host(pristine, orig));
    if (v) AK(amp_array_copy_to_host(values, v));
    *ok = true;
    uint64_t s1 = 0, s2 = 0;
    for (size_t i = 0; i < n; ++i) {
        if (i && k[i - 1] > k[i]) *ok = false;
        if (v && (v[i] >= n || orig[v[i]] != k[i])) *ok = false;
        s1 += k[i];
        s2 += orig[i];
    }
    if (s1 != s2) *ok = false;
    if (!*ok) failures++;
    free(k);
    free(orig);
    free(v);
    return wl_median(t, REPS);
}

/* ---------------------------------------------------------- the section */

static void knobs(void)
{
    static const char *const names[] = {"AMP_ALG_TILE",      "AMP_ALG_REDUCE_ITEMS", "AMP_ALG_REDUCE_TILES",
                                        "AMP_ALG_SCAN_ITEMS", "AMP_ALG_SORT_TILE",   "AMP_ALG_SORT_ITEMS",
                                        "AMP_ALG_RADIX_BITS", "AMP_ALG_SORT_MIN_TILES", "AMP_ALG_REDUCE_VECTOR",
                                        "AMP_ALG_SCAN_GUESS", "AMP_ALG_SELECT_ITEMS"};
    out("Tuning knobs (docs/algorithms.md):");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
        const char *v = getenv(names[i]);
        out(" %s=%s", names[i], v && *v ? v : "default");
    }
    out(".\n\n");
}

static void row(const char *what, const char *size, double amp_rate, const char *ref, double ref_rate,
                const char *unit, double goal)
{
    char ratio[32] = "—", target[32] = "—";
    if (amp_rate < 0) return; /* not measured (HIPAMP_BENCH_ALGORITHMS) */
    if (ref_rate > 0) snprintf(ratio, sizeof ratio, "**%.3f**", amp_rate / ref_rate);
    if (goal > 0) snprintf(target, sizeof target, ">= %.2f", goal);
    if (ref_rate > 0)
        out("| %s | %s | %.1f %s | %s | %.1f %s | %s | %s |\n", what, size, amp_rate, unit, ref, ref_rate, unit,
            ratio, target);
    else
        out("| %s | %s | %.1f %s | %s | — | — | %s |\n", what, size, amp_rate, unit, ref, target);
}

/* HIPAMP_BENCH_ALGORITHMS="reduce,scan,select,sort" (a sweep's subset; unset: all
 * of them and CUB). */
static bool want(const char *part)
{
    const char *w = getenv("HIPAMP_BENCH_ALGORITHMS");
    return !w || !*w || strstr(w, part) != NULL;
}

void algorithms_report(void)
{
    const size_t n = quick ? (size_t)1 << 24 : (size_t)1 << 28, ns = quick ? (size_t)1 << 22 : (size_t)1 << 26;
    const size_t bytes = n * 4;
    char sz[16], szs[16];
    snprintf(sz, sizeof sz, "2^%d", quick ? 24 : 28);
    snprintf(szs, sizeof szs, "2^%d", quick ? 22 : 26);
    out("\n## Algorithms\n\n");
    out("hipamp's algorithms (include/hipamp_algorithms.h) on %s 4-byte elements, results on the device (the\n"
        "_async forms; no host round trip inside a batch), against %s on the same buffers, the\n"
        "device-to-device copy (%s: a reduction reads its bytes once, a scan reads and writes each once, as a\n"
        "copy does) and CUB. Rates in GB/s count bytes read (reduce, dot: both inputs) or read and written\n"
        "(scan, copy as the scan's reference; compaction: read and kept); sorts in Gkeys/s over fresh random keys each run. Medians of %d\n"
        "batches (hipamp: wall time between waits on its queue; raw: stream events).\n\n",
        sz, rg.blas, rg.copy, REPS);
    knobs();

    /* x: floats in [0, 1) (Sasum's sum equals the sum); y: the same scaled. */
    float *h = malloc(bytes);
    if (!h) die("out of host memory (%zu bytes)", bytes);
    wl_fill_random(h, n, &rng);
    for (size_t i = 0; i < n; ++i) h[i] = fabsf(h[i]);
    amp_array *x = NULL, *y = NULL, *res = NULL, *res2 = NULL;
    AK(amp_array_create(W.q, 4, amp_extent_1d((int)n), h, &x));
    for (size_t i = 0; i < n; ++i) h[i] = 1.0f - h[i];
    AK(amp_array_create(W.q, 4, amp_extent_1d((int)n), h, &y));
    AK(amp_array_create(W.q, 4, amp_extent_1d(1), NULL, &res));
    AK(amp_array_create(W.q, 4, amp_extent_1d(1), NULL, &res2));
    rjob rj = {native(x), native(y), native(res2), bytes, (int)n};
    aljob j = {amp_arg_array(x), amp_arg_array(y), amp_arg_array(y), amp_arg_array(res), AMP_TYPE_FLOAT32};

    char blas_lib[64] = "", blas_why[256] = "";
    bool have_blas = rg_blas_load(blas_lib, sizeof blas_lib, blas_why, sizeof blas_why);
    double copy_s = raw_only(raw_copy, &rj, 0.05);
    double copy_gbs = (double)bytes / copy_s / 1e9; /* bytes read */

    /* Reduce. */
    double red_gbs = -1, asum_gbs = -1, dot_gbs = -1, sdot_gbs = -1;
    float r_amp = 0, r_ref = 0, d_amp = 0, d_ref = 0;
    bool red_ok = true, dot_ok = true;
    if (want("reduce")) {
        double red_s = hip_time(run_reduce, &j);
        red_gbs = (double)bytes / red_s / 1e9;
        AK(amp_array_copy_to_host(res, &r_amp));
        if (have_blas && rg_sasum(rj.n, rj.x, rj.res)) {
            double s = raw_only(raw_sasum, &rj, 0.05);
            asum_gbs = (double)bytes / s / 1e9;
            rg_sync();
            rg_d2h(&r_ref, rj.res, 4);
        }
        red_ok = r_ref == 0 || fabs((double)r_amp - (double)r_ref) <= 1e-5 * fabs((double)r_ref);
        if (!red_ok) failures++;

        /* Dot. */
        double dot_s = hip_time(run_dot, &j);
        dot_gbs = 2.0 * (double)bytes / dot_s / 1e9;
        AK(amp_array_copy_to_host(res, &d_amp));
        if (have_blas && rg_sdot(rj.n, rj.x, rj.y, rj.res)) {
            double s = raw_only(raw_sdot, &rj, 0.05);
            sdot_gbs = 2.0 * (double)bytes / s / 1e9;
            rg_sync();
            rg_d2h(&d_ref, rj.res, 4);
        }
        dot_ok = d_ref == 0 || fabs((double)d_amp - (double)d_ref) <= 1e-5 * fabs((double)d_ref);
        if (!dot_ok) failures++;
    }

    /* Scans: x -> y, int32 (random integers) then float32. */
    uint32_t *hi = (uint32_t *)h;
    double scan_i_gbs = -1, scan_f_gbs = -1;
    bool scan_i_ok = true, scan_f_ok = true;
    if (want("scan")) {
        for (size_t i = 0; i < n; ++i) hi[i] = (uint32_t)(i * 2654435761u) >> 6;
        double scan_i_s = time_scan(&j, AMP_TYPE_INT32, x, y, h);
        uint32_t run = 0;
        for (size_t i = 0; i < n; ++i) {
            if (((uint32_t *)h)[i] != run) scan_i_ok = false;
            run += (uint32_t)(i * 2654435761u) >> 6;
        }
        if (!scan_i_ok) failures++;
        for (size_t i = 0; i < n; ++i) h[i] = (float)(i % 7) * 0.25f;
        double scan_f_s = time_scan(&j, AMP_TYPE_FLOAT32, x, y, h);
        double frun = 0;
        for (size_t i = 0; i < n; ++i) {
            if (i % 4099 == 0 && fabs((double)h[i] - frun) > 1e-5 * frun + 1e-3) scan_f_ok = false;
            frun += (double)(i % 7) * 0.25;
        }
        if (!scan_f_ok) failures++;
        scan_i_gbs = 2.0 * (double)bytes / scan_i_s / 1e9;
        scan_f_gbs = 2.0 * (double)bytes / scan_f_s / 1e9;
    }
    double copy_rw_gbs = 2.0 * (double)bytes / copy_s / 1e9;

    /* Compaction: the scan's int32 input, the even ones kept, into y;
     * checked element by element. The rate counts bytes read and kept. */
    double sel_gbs = -1;
    bool sel_ok = true;
    if (want("select")) {
        for (size_t i = 0; i < n; ++i) hi[i] = (uint32_t)(i * 2654435761u) >> 6;
        AK(amp_array_copy_from_host(x, h));
        double sel_s = hip_time(run_select, &j);
        AK(amp_array_copy_to_host(y, h));
        size_t kept = 0;
        for (size_t i = 0; i < n; ++i) {
            uint32_t v = (uint32_t)(i * 2654435761u) >> 6;
            if (v & 1) continue;
            if (hi[kept] != v) sel_ok = false;
            ++kept;
        }
        if (kept != select_count) sel_ok = false;
        if (!sel_ok) failures++;
        sel_gbs = (double)(n + kept) * 4.0 / sel_s / 1e9;
    }

    /* Sorts. HIPAMP_BENCH_SORT_MASK (hexadecimal) keeps only some bits of
     * the random keys, for the passes in which every key has the same
     * digit (0: all keys equal); CUB is then not run. */
    const char *mask_s = getenv("HIPAMP_BENCH_SORT_MASK");
    uint32_t mask = mask_s && *mask_s ? (uint32_t)strtoul(mask_s, NULL, 16) : 0xffffffffu;
    if (mask != 0xffffffffu) out("Sort keys masked with 0x%08x (HIPAMP_BENCH_SORT_MASK).\n\n", (unsigned)mask);
    amp_array *keys = NULL, *pristine = NULL, *vals = NULL;
    for (size_t i = 0; i < ns; ++i) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        hi[i] = (uint32_t)(rng >> 32) & mask;
    }
    AK(amp_array_create(W.q, 4, amp_extent_1d((int)ns), hi, &pristine));
    AK(amp_array_create(W.q, 4, amp_extent_1d((int)ns), NULL, &keys));
    AK(amp_array_create(W.q, 4, amp_extent_1d((int)ns), NULL, &vals));
    bool sk_ok = true, sp_ok = true;
    double sk_g = -1, sp_g = -1;
    if (want("sort")) {
        double sk_s = time_sort(keys, pristine, NULL, ns, &sk_ok);
        double sp_s = time_sort(keys, pristine, vals, ns, &sp_ok);
        sk_g = (double)ns / sk_s / 1e9;
        sp_g = (double)ns / sp_s / 1e9;
    }

    if (mask != 0xffffffffu) snprintf(cub_note, sizeof cub_note, "not run (the sort keys are masked)");
    else if (want("reduce") && want("scan") && want("sort")) run_cub(n, n, ns);
    else snprintf(cub_note, sizeof cub_note, "not run (HIPAMP_BENCH_ALGORITHMS selects part of the section)");

    out("| algorithm | elements | hipamp | reference | reference rate | hipamp / reference | goal |\n"
        "|---|---|---:|---|---:|---:|---|\n");
    row("reduce sum float32", sz, red_gbs, have_blas ? "Sasum" : "Sasum (no BLAS)", asum_gbs, "GB/s", 0.95);
    row("reduce sum float32", sz, red_gbs, "device copy (bytes read)", copy_gbs, "GB/s", 0.90);
    row("dot float32", sz, dot_gbs, have_blas ? "Sdot" : "Sdot (no BLAS)", sdot_gbs, "GB/s", 0.95);
    row("exclusive scan int32", sz, scan_i_gbs, "device copy", copy_rw_gbs, "GB/s", 0.80);
    row("exclusive scan float32", sz, scan_f_gbs, "device copy", copy_rw_gbs, "GB/s", 0.80);
    row("copy_if int32, the even kept", sz, sel_gbs, "device copy", copy_rw_gbs, "GB/s", -1);
    row("sort uint32 keys", szs, sk_g, "—", -1, "Gkeys/s", -1);
    row("sort (uint32, uint32) pairs", szs, sp_g, "—", -1, "Gkeys/s", -1);
    double cub_red = cub[0].ms > 0 ? (double)bytes / (cub[0].ms * 1e-3) / 1e9 : -1;
    double cub_si = cub[1].ms > 0 ? 2.0 * (double)bytes / (cub[1].ms * 1e-3) / 1e9 : -1;
    double cub_sf = cub[2].ms > 0 ? 2.0 * (double)bytes / (cub[2].ms * 1e-3) / 1e9 : -1;
    double cub_sk = cub[3].ms > 0 ? (double)ns / (cub[3].ms * 1e-3) / 1e9 : -1;
    double cub_sp = cub[4].ms > 0 ? (double)ns / (cub[4].ms * 1e-3) / 1e9 : -1;
    row("reduce sum float32", sz, red_gbs, "CUB DeviceReduce::Sum", cub_red, "GB/s", 0.95);
    row("exclusive scan int32", sz, scan_i_gbs, "CUB DeviceScan::ExclusiveSum", cub_si, "GB/s", 0.90);
    row("exclusive scan float32", sz, scan_f_gbs, "CUB DeviceScan::ExclusiveSum", cub_sf, "GB/s", 0.90);
    row("sort uint32 keys", szs, sk_g, "CUB DeviceRadixSort::SortKeys", cub_sk, "Gkeys/s", 0.50);
    row("sort (uint32, uint32) pairs", szs, sp_g, "CUB DeviceRadixSort::SortPairs", cub_sp, "Gkeys/s", 0.50);
    out("\nChecks: reduce %s (hipamp %.7g, %s %.7g), dot %s (%.7g, %.7g), scans %s/%s, compaction %s, sorts "
        "%s/%s.\n",
        red_ok ? "passed" : "FAILED", (double)r_amp, rg.blas, (double)r_ref, dot_ok ? "passed" : "FAILED",
        (double)d_amp, (double)d_ref, scan_i_ok ? "passed" : "FAILED", scan_f_ok ? "passed" : "FAILED",
        sel_ok ? "passed" : "FAILED", sk_ok ? "passed" : "FAILED", sp_ok ? "passed" : "FAILED");
    out("CUB: %s.\n", cub_note[0] ? cub_note : "not run");
    if (!have_blas) out("%s: not loaded (%s).\n", rg.blas, blas_why);

    if (red_gbs > 0) {
        chart("algorithms (GB/s)", "reduce", "hipamp", red_gbs, "GB/s");
        chart("algorithms (GB/s)", "reduce", "raw", asum_gbs > 0 ? asum_gbs : copy_gbs, "GB/s");
    }
    if (scan_i_gbs > 0) {
        chart("algorithms (GB/s)", "scan i32", "hipamp", scan_i_gbs, "GB/s");
        chart("algorithms (GB/s)", "scan i32", "raw", cub_si > 0 ? cub_si : copy_rw_gbs, "GB/s");
    }

    if (red_gbs > 0 && asum_gbs > 0)
        add_goal(red_gbs >= 0.95 * asum_gbs, "reduce sum 2^28 float32 vs Sasum", ">= 0.95", "", "%.3f (%.0f / %.0f GB/s)",
                 red_gbs / asum_gbs, red_gbs, asum_gbs);
    if (red_gbs > 0)
        add_goal(red_gbs >= 0.90 * copy_gbs, "reduce sum vs device copy (bytes read)", ">= 0.90", "",
                 "%.3f (%.0f / %.0f GB/s)", red_gbs / copy_gbs, red_gbs, copy_gbs);
    if (dot_gbs > 0 && sdot_gbs > 0)
        add_goal(dot_gbs >= 0.95 * sdot_gbs, "dot 2^28 float32 vs Sdot", ">= 0.95", "", "%.3f", dot_gbs / sdot_gbs);
    if (scan_i_gbs > 0) {
        add_goal(scan_i_gbs >= 0.80 * copy_rw_gbs, "scan 2^28 int32 vs device copy", ">= 0.80", "", "%.3f",
                 scan_i_gbs / copy_rw_gbs);
        add_goal(scan_f_gbs >= 0.80 * copy_rw_gbs, "scan 2^28 float32 vs device copy", ">= 0.80", "", "%.3f",
                 scan_f_gbs / copy_rw_gbs);
    }
    if (cub_red > 0) {
        add_goal(red_gbs >= 0.95 * cub_red, "reduce vs CUB", ">= 0.95", "", "%.3f", red_gbs / cub_red);
        add_goal(scan_i_gbs >= 0.90 * cub_si, "scan int32 vs CUB", ">= 0.90", "", "%.3f", scan_i_gbs / cub_si);
        add_goal(scan_f_gbs >= 0.90 * cub_sf, "scan float32 vs CUB", ">= 0.90", "", "%.3f", scan_f_gbs / cub_sf);
        add_goal(sk_g >= 0.50 * cub_sk, "sort 2^26 keys vs CUB", ">= 0.50", "", "%.3f (%.2f / %.2f Gkeys/s)",
                 sk_g / cub_sk, sk_g, cub_sk);
        add_goal(sp_g >= 0.50 * cub_sp, "sort 2^26 pairs vs CUB", ">= 0.50", "", "%.3f (%.2f / %.2f Gkeys/s)",
                 sp_g / cub_sp, sp_g, cub_sp);
    } else {
        add_goal(false, "algorithms vs CUB", "measured", cub_note, "not measured");
    }

    AK(amp_array_destroy(keys));
    AK(amp_array_destroy(pristine));
    AK(amp_array_destroy(vals));
    AK(amp_array_destroy(res));
    AK(amp_array_destroy(res2));
    AK(amp_array_destroy(x));
    AK(amp_array_destroy(y));
    free(h);
}
