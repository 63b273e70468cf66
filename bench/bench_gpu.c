/* bench_gpu.c — the GPU benchmark report (issue 5): its options, header, goals table and outputs (Markdown, CSV, PNG chart); the sections (gpu_sections.h) measure each kernel through hipamp against the identical kernel through the driver API (raw_gpu.h), launch overhead, build and cache times, two GPUs and BabelStream's kernels, over the shared harness (gpu_harness.h); --first-call-only runs the time-to-first-result table (first_call.c, shared with bench_cpu) alone. */
#define _GNU_SOURCE
#include "first_call.h"
#include "gpu_harness.h"
#include "gpu_sections.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef HIPAMP_BENCH_RESULTS
#define HIPAMP_BENCH_RESULTS "bench/results"
#endif
#ifndef HIPAMP_PLOT_SCRIPT
#define HIPAMP_PLOT_SCRIPT "bench/plot_results.py"
#endif

/* ------------------------------------------------------------------ main */

static void slug(char *dst, size_t n, const char *s)
{
    size_t k = 0;
    for (; *s && k + 1 < n; ++s) {
        char c = *s;
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) dst[k++] = c;
        else if (c >= 'A' && c <= 'Z') dst[k++] = (char)(c + 32);
        else if (k && dst[k - 1] != '-') dst[k++] = '-';
    }
    while (k && dst[k - 1] == '-') --k;
    dst[k] = 0;
}

static void mkdirs(const char *path)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; ++p)
        if (*p == '/') {
            *p = 0;
            mkdir(tmp, 0755);
            *p = '/';
        }
    mkdir(tmp, 0755);
}

/* The CPU accelerator's figures: bench_cpu beside this program, if built. */
static void run_cpu_bench(const char *dir)
{
    char path[PATH_MAX + 32], cmd[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/bench_cpu", dir);
    out("\n## CPU accelerator (bench_cpu)\n\n");
    if (access(path, X_OK) != 0) {
        out("bench_cpu was not built beside %s; run it separately for the CPU accelerator's figures.\n", rg.program);
        return;
    }
    snprintf(cmd, sizeof cmd, "timeout 150 '%s' 2>&1", path);
    FILE *f = popen(cmd, "r");
    if (!f) {
        out("could not run %s\n", path);
        return;
    }
    out("```\n");
    char line[1024];
    while (fgets(line, sizeof line, f)) out("%s", line);
    int rc = pclose(f);
    out("```\n(exit status %d)\n", rc);
}

/* Options; returns -1 to go on, else the exit status (--help, --chart). */
static const char *outdir;
static bool with_cpu = true;
static bool launch_only;
static bool graph_only;
static bool algorithms_only;
static bool two_gpus_only;
static bool hip_vs_cuda_only;
static bool stream_only;
static bool first_call_only;
/* The plain seed's row (first_call.h): the vendor layer in the child. */
static void vendor_open(void)
{
    static rg_device d;
    rg_open(&d);
}
static void *vendor_build(const char *source) { return rg_function(rg_build_lean(source), fc_plain_seed_kernel); }
static void vendor_transpose(void *kernel, const float *in, float *out, int n)
{
    static rg_ptr a, at; /* made by the first call, as a view's device copy is */
    const size_t bytes = (size_t)n * (size_t)n * sizeof(float);
    if (!a) a = rg_alloc(bytes), at = rg_alloc(bytes);
    rg_h2d(a, in, bytes);
    const unsigned g[3] = {(unsigned)n / 16, (unsigned)n / 16, 1}, b[3] = {16, 16, 1};
    void *params[] = {&a, &at, &n};
    rg_launch(kernel, g, b, params);
    rg_sync();
    rg_d2h(out, at, bytes);
}
static char vendor_label[160];
static const fc_vendor vendor = {vendor_label, vendor_open, vendor_build, vendor_transpose};

/* Issue 40's goals for the GPU: the cold compile's on the H200's host. */
static fc_config fcc = {.alg_goal_ms = 50, .build_goal_ms = 40, .build_goal_where = "the GPU's host (issue 40 sets it for the H200's)",
                        .vendor = &vendor};
static int parse_args(int argc, char **argv)
{
    outdir = getenv("OUT");
    for (int i = 1; i < argc; ++i) {
        int fo;
        if (!strcmp(argv[i], "--out") && i + 1 < argc) outdir = argv[++i];
        else if (!strcmp(argv[i], "--quick")) quick = true;
        else if (!strcmp(argv[i], "--no-cpu")) with_cpu = false;
        else if (!strcmp(argv[i], "--launch-only")) launch_only = true;
        else if (!strcmp(argv[i], "--graph-only")) graph_only = true;
        else if (!strcmp(argv[i], "--algorithms-only")) algorithms_only = true;
        else if (!strcmp(argv[i], "--two-gpus-only")) two_gpus_only = true;
        else if (!strcmp(argv[i], "--hip-vs-cuda-only")) hip_vs_cuda_only = true;
        else if (!strcmp(argv[i], "--stream-only")) stream_only = true;
        else if (!strcmp(argv[i], "--first-call-only")) first_call_only = true;
        else if ((fo = fc_option(argv[i], &fcc)) != 0) {
            if (fo < 0) return 2;
        } else if (!strcmp(argv[i], "--chart") && i + 2 < argc) {
            /* Redraw a chart from a results CSV with the built-in PNG writer. */
            FILE *f = fopen(argv[i + 1], "r");
            if (!f) die("cannot read %s", argv[i + 1]);
            char line[512];
            while (fgets(line, sizeof line, f)) {
                char p[64], l[32], s[16], u[12];
                double v;
                if (sscanf(line, "%63[^,],%31[^,],%15[^,],%lf,%11[^,\n]", p, l, s, &v, u) == 5) chart(p, l, s, v, u);
            }
            fclose(f);
            return png_chart(argv[i + 2], "hipamp chart") ? 0 : 1;
        } else {
            printf("usage: %s [--out DIR] [--quick] [--no-cpu] [--launch-only] [--graph-only] [--algorithms-only] [--two-gpus-only] [--stream-only] [--hip-vs-cuda-only] |\n"
                   "       --first-call-only [--first-call-rows=LIST] [--first-call-timeout=S] [--first-call-no-jit] |\n"
                   "       --chart RESULTS.csv OUT.png\n"
                   "  Benchmarks hipamp on %s against raw driver launches, device copy and\n"
                   "  %s; writes <date>-<gpu>.md/.csv/.png into DIR (default: $OUT, else\n"
                   "  %s). --quick: smaller sizes. --no-cpu: skip bench_cpu.\n"
                   "  --launch-only: the launch-overhead row and where a launch's time goes\n"
                   "  (long batches with device events, the host cost of short bursts), printed only.\n"
                   "  --graph-only: the launch-graph section and its goals, printed only.\n"
                   "  --two-gpus-only: the two-GPU section (peer copy, two kernels at once), printed only.\n"
                   "  --hip-vs-cuda-only: one launch through hip:0 (HIP's NVIDIA platform) and cuda:0\n"
                   "  side by side, printed only (HIP_PLATFORM=nvidia, the test runtime on LD_LIBRARY_PATH).\n"
                   "  --stream-only: the BabelStream section (examples/stream's kernels) and its goal, printed only.\n"
                   "  --algorithms-only: the algorithms section and its goals, printed only (a\n"
                   "  tuning sweep runs it once per setting of the AMP_ALG_* knobs: ci/gpu.sh figures).\n"
                   "  --first-call-only: time to first result on %s (each built-in algorithm's first call with\n"
                   "  empty caches, prebuilt and with AMP_PREBUILT=0, and cold builds of the seed's transpose\n"
                   "  kernel and of transpose.hip, against a warm call; one fresh process each), printed\n"
                   "  only; skipped with a message without a GPU.\n"
                   "  Not part of the full run: its JIT column compiles every algorithm program (minutes).\n%s",
                   rg.program, rg.accelerator, rg.blas, HIPAMP_BENCH_RESULTS, rg.accelerator, fc_usage);
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    if (!outdir || !*outdir) outdir = HIPAMP_BENCH_RESULTS;
    return -1;
}

/* The accelerator the raw path also targets (same processor, or the
 * comparison is between different code). */
static amp_accelerator *open_accelerator(void)
{
    amp_accelerator *acc;
    AK(amp_accelerator_find(rg.accelerator, &acc));
    amp_accelerator_info ai;
    AK(amp_accelerator_get_info(acc, &ai));
    if (strcmp(ai.arch, D.arch)) die("hipamp compiles %s for %s, the raw path would for %s", rg.accelerator, ai.arch, D.arch);
    return acc;
}

static void report_header(const char *date, uint64_t seed)
{
    out("# hipamp GPU benchmark — %s, %s\n\n", D.name, date);
    out("%s, hipamp %s; seed 0x%llx; %s sizes.\n\n", D.platform, amp_version(), (unsigned long long)seed,
        quick ? "quick (smaller)" : "full");
    out("Every kernel is compiled twice from the same text (hipamp's prelude + the example's .hip file,\n"
        "the library's %s options): once by hipamp, once here with %s, launched with %s\n"
        "on %s'ed buffers with the same grid, block, launch_info and argument pack. Times are\n"
        "medians of %d interleaved batches after a warm-up; the hipamp/raw ratio compares wall-clock\n"
        "batches (synchronize, N launches, synchronize) — above 1 means hipamp was faster; raw (events)\n"
        "is %s-event time of the raw batch. \"Same buffers\" runs the raw launches on hipamp's own device\n"
        "buffers (their addresses read by a probe kernel), which takes out where the driver happened to\n"
        "place each side's memory. Data stays resident on the GPU across launches. Every\n"
        "result (hipamp and raw) is checked against a CPU reference on fresh random data, outputs\n"
        "poisoned with NaN first.\n\n",
        rg.compiler, rg.compiler, rg.launch, rg.alloc, REPS, rg.events);
}

/* study: the study section ran, so its goals are added first. */
static void report_goals(bool study)
{
    if (study) study_goals();
    out("\n## Goals\n\n| goal | target | measured | result |\n|---|---|---|---|\n");
    int missed = 0;
    for (int i = 0; i < ngoals; ++i) {
        missed += !goals[i].met;
        out("| %s | %s | %s | %s%s%s |\n", goals[i].what, goals[i].target, goals[i].measured,
            goals[i].met ? "met" : "**missed**", goals[i].note[0] ? ": " : "", goals[i].note);
    }
    out("\n%d of %d goals met; %s.\n", ngoals - missed, ngoals,
        failures ? "SOME RESULTS FAILED VERIFICATION" : "every result verified");
}

/* Markdown, CSV (chart data) and PNG under outdir. */
static void write_outputs(const char *date, const char *gslug)
{
    mkdirs(outdir);
    char base[PATH_MAX], path[PATH_MAX + 16];
    snprintf(base, sizeof base, "%s/%s-%s", outdir, date, gslug);
    snprintf(path, sizeof path, "%s.md", base);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(report_text(), f);
        fclose(f);
        fprintf(stderr, "wrote %s\n", path);
    } else {
        fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
    }
    char csv[PATH_MAX + 16], png[PATH_MAX + 16];
    snprintf(csv, sizeof csv, "%s.csv", base);
    snprintf(png, sizeof png, "%s.png", base);
    f = fopen(csv, "w");
    if (f) {
        fprintf(f, "panel,label,series,value,unit\n");
        for (int i = 0; i < ncrows; ++i)
            fprintf(f, "%s,%s,%s,%.3f,%s\n", crows[i].panel, crows[i].label, crows[i].series, crows[i].value,
                    crows[i].unit);
        fclose(f);
        fprintf(stderr, "wrote %s\n", csv);
    }
    char title[320], cmd[3 * PATH_MAX + 400];
    snprintf(title, sizeof title, "hipamp on %s, %s", D.name, date);
    snprintf(cmd, sizeof cmd, "python3 '%s' '%s' '%s' --title '%s' --raw-label '%s' 2>&1", HIPAMP_PLOT_SCRIPT, csv,
             png, title, rg.launch);
    int rc = access(HIPAMP_PLOT_SCRIPT, R_OK) == 0 ? system(cmd) : -1;
    if (rc != 0) {
        fprintf(stderr, "plot_results.py unavailable (matplotlib missing?): drawing the PNG here\n");
        if (!png_chart(png, title)) fprintf(stderr, "cannot write %s\n", png);
    }
    if (access(png, R_OK) == 0) fprintf(stderr, "wrote %s\n", png);
}

static void run_cpu_bench_beside_self(void)
{
    char self[PATH_MAX];
    if (self_dir(self, sizeof self)) run_cpu_bench(self);
}

/* --first-call-only: the section runs in children of this program, so this
 * process opens neither the GPU nor the library's accelerators (without a
 * GPU the first child says so and the section is skipped). */
static int first_call_report(void)
{
    fcc.accelerator = rg.accelerator;
    snprintf(vendor_label, sizeof vendor_label,
             "the seed's kernel written without hipamp (no prelude): %s + %s + %s, 1024x1024 (the floor)",
             rg.compiler, rg.load, rg.launch);
    out("# hipamp GPU benchmark — time to first result, %s\n", rg.accelerator);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) die("open_memstream: %s", strerror(errno));
    fc_summary s;
    int bad = fc_report(f, &fcc, &s);
    fclose(f);
    /* out() takes a line at a time (its buffer is bounded). */
    for (char *line = text, *end; line && *line; line = end ? end + 1 : NULL) {
        end = strchr(line, '\n');
        out("%.*s\n", end ? (int)(end - line) : (int)strlen(line), line);
    }
    free(text);
    if (bad < 0) return 2;
    if (s.skipped) return 0;
    if (s.alg_rows)
        add_goal(s.alg_met == s.alg_rows, "first call of every built-in algorithm, empty caches, 2^20 elements",
                 "<= 50 ms", s.worst_alg_ms < 0 ? "no row measured" : s.worst_alg, "slowest %.1f ms", s.worst_alg_ms);
    if (s.build_row)
        add_goal(s.build_ms >= 0 && s.build_ms <= fcc.build_goal_ms,
                 "cold compile of the seed's transpose kernel (first call)", "<= 40 ms",
                 s.build_ms < 0 ? "failed" : NULL, "%.1f ms", s.build_ms);
    failures += bad;
    report_goals(false);
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    /* Before anything touches the library or the GPU: the child starts cold. */
    if (argc >= 2 && !strcmp(argv[1], FC_CHILD_OPTION)) return fc_child_main(argc - 2, argv + 2, &vendor);
    int rc = parse_args(argc, argv);
    if (rc >= 0) return rc;
    if (first_call_only) return first_call_report();
    double t_start = wl_now();
    rg_open(&D); /* the device first: without one there is nothing to clean up */
    /* A fresh compile cache, so that cold builds are cold. */
    char cache[] = "/tmp/hipamp-bench-cache-XXXXXX";
    if (!mkdtemp(cache)) die("mkdtemp: %s", strerror(errno));
    setenv("AMP_CACHE_DIR", cache, 1);
    amp_accelerator *acc = open_accelerator();
    rng = wl_seed();
    uint64_t seed = rng;
    time_t now = time(NULL);
    struct tm tmv;
    localtime_r(&now, &tmv);
    char date[32], gslug[128];
    strftime(date, sizeof date, "%Y-%m-%d", &tmv);
    slug(gslug, sizeof gslug, D.name);

    report_header(date, seed);
    W.acc = acc;
    if (launch_only) {
        AK(wl_open(&W, acc));
        load_raw_kernels();
        launch_row(true);
        wl_close(&W);
        return failures ? 1 : 0;
    }
    if (graph_only) {
        AK(wl_open(&W, acc));
        graph_report();
        report_goals(false);
        wl_close(&W);
        return failures ? 1 : 0;
    }
    if (hip_vs_cuda_only) {
        hip_vs_cuda_report();
        return failures ? 1 : 0;
    }
    if (two_gpus_only) {
        AK(wl_open(&W, acc));
        two_gpus_report();
        report_goals(false);
        wl_close(&W);
        return failures ? 1 : 0;
    }
    if (stream_only) {
        AK(wl_open(&W, acc));
        stream_report();
        report_goals(false);
        wl_close(&W);
        return failures ? 1 : 0;
    }
    if (algorithms_only) {
        AK(wl_open(&W, acc));
        algorithms_report();
        report_goals(false);
        wl_close(&W);
        return failures ? 1 : 0;
    }
    build_cache_measure();
    AK(wl_open(&W, acc));
    load_raw_kernels();
    study_report();
    launch_report();
    build_cache_report();
    two_gpus_report();
    graph_report();
    algorithms_report();
    stream_report();
    report_goals(true);
    if (with_cpu) run_cpu_bench_beside_self();
    out("\nTotal benchmark time %.0f s.\n", wl_now() - t_start);
    write_outputs(date, gslug);

    rg_blas_unload();
    wl_close(&W);
    char rm[128];
    snprintf(rm, sizeof rm, "rm -rf '%s'", cache);
    if (system(rm) != 0) fprintf(stderr, "could not remove %s\n", cache);
    return failures ? 1 : 0;
}
