/* bench_gpu.c — the GPU benchmark report (issue 5): each transpose/matmul kernel through hipamp vs the identical kernel through the driver API (cuLaunchKernel or hipModuleLaunchKernel, raw_gpu.h), transpose vs device copy, matmul vs cuBLAS or rocBLAS, launch overhead, build/cache times; writes Markdown, CSV and a PNG chart. */
#define _GNU_SOURCE
#include "raw_gpu.h"
#include "launch_geometry.h"
#include "signature.h"
#include "workloads.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
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

/* ------------------------------------------------------------- plumbing */

void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", rg.program);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

#define AK(call)                                                                            \
    do {                                                                                    \
        amp_status s_ = (call);                                                             \
        if (s_ != AMP_OK)                                                                   \
            die("%s:%d: %s: %s: %s", __FILE__, __LINE__, #call, amp_status_name(s_),        \
                amp_last_error());                                                          \
    } while (0)

static rg_device D;
static wl_ctx W;
static uint64_t rng;
static bool quick;

/* ------------------------------------------------------------ the report */

static char *md;
static size_t md_len, md_cap;
static void out(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char buf[4096];
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= sizeof buf) n = sizeof buf - 1;
    if (md_len + (size_t)n + 1 > md_cap) {
        md_cap = (md_cap + (size_t)n + 1) * 2;
        md = realloc(md, md_cap);
        if (!md) die("out of memory");
    }
    memcpy(md + md_len, buf, (size_t)n + 1);
    md_len += (size_t)n;
    fputs(buf, stdout);
    fflush(stdout);
}

/* Chart rows: panel, label, series, value, unit (series "ceiling" = line). */
typedef struct crow { char panel[64], label[32], series[16], unit[12]; double value; } crow;
static crow crows[128];
static int ncrows;
static void chart(const char *panel, const char *label, const char *series, double value, const char *unit)
{
    if (ncrows >= (int)(sizeof crows / sizeof crows[0])) return;
    crow *c = &crows[ncrows++];
    snprintf(c->panel, sizeof c->panel, "%s", panel);
    snprintf(c->label, sizeof c->label, "%s", label);
    snprintf(c->series, sizeof c->series, "%s", series);
    snprintf(c->unit, sizeof c->unit, "%s", unit);
    c->value = value;
}

/* Goals (issue 5). */
typedef struct goal { char what[96], target[32], measured[96]; bool met; char note[256]; } goal;
static goal goals[24];
static int ngoals;
static void add_goal(bool met, const char *what, const char *target, const char *note, const char *fmt, ...)
{
    if (ngoals >= (int)(sizeof goals / sizeof goals[0])) die("more goals than the table holds");
    goal *g = &goals[ngoals++];
    g->met = met;
    snprintf(g->what, sizeof g->what, "%s", what);
    snprintf(g->target, sizeof g->target, "%s", target);
    snprintf(g->note, sizeof g->note, "%s", note ? note : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->measured, sizeof g->measured, fmt, ap);
    va_end(ap);
}
static int failures; /* verification failures */

/* ----------------------------------------------------------- raw launches */

typedef struct rawk {
    void *f;
    amp__signature sig;
    const char *name;
} rawk;

/* Prelude + source exactly as amp_program_build assembles them; the vendor
 * layer compiles them with the options the library's driver passes to its
 * runtime compiler. */
static void *raw_build(const char *src, double *secs)
{
    double t0 = wl_now();
    const char *prelude = amp_prelude_source();
    size_t n = strlen(prelude) + strlen(src) + 64;
    char *full = malloc(n);
    if (!full) die("out of memory");
    snprintf(full, n, "%s\n#line 1 \"kernel.hip\"\n%s\n", prelude, src);
    void *m = rg_build(full);
    free(full);
    if (secs) *secs = wl_now() - t0;
    return m;
}

static void raw_kernel(void *m, const char *name, rawk *k)
{
    k->name = name;
    k->f = rg_function(m, name);
    char g[160];
    snprintf(g, sizeof g, "%s%s", name, AMP__SIG_SUFFIX);
    size_t bytes;
    rg_ptr p = rg_global(m, g, &bytes);
    if (bytes != sizeof k->sig) die("%s: signature record is %zu bytes, expected %zu", g, bytes, sizeof k->sig);
    rg_d2h(&k->sig, p, sizeof k->sig);
    if (k->sig.magic != AMP__SIG_MAGIC || k->sig.version != AMP__SIG_VERSION) die("%s: bad signature", name);
}

/* A rank-1 or rank-2 view descriptor over device memory. */
typedef struct rview {
    rg_ptr p;
    int rank;
    long long stride0; /* rank 2: elements between rows */
    int ext[2];
} rview;
static rview rv2(rg_ptr base, long long ld, int r0, int c0, int rows, int cols)
{
    rview v = {base + (rg_ptr)(((long long)r0 * ld + c0) * 4), 2, ld, {rows, cols}};
    return v;
}
static rview rv1(rg_ptr base, int n)
{
    rview v = {base, 1, 1, {n, 0}};
    return v;
}

/* Launch k on domain e with views v (the pack filled from the signature). */
static void raw_launch(const rawk *k, amp_extent e, const rview *v, int nv)
{
    _Alignas(AMP__MAX_PARAM_ALIGN) unsigned char pack[AMP__MAX_PACK];
    const amp__signature *s = &k->sig;
    if (s->nparams != nv) die("%s takes %d parameters, %d given", k->name, s->nparams, nv);
    if (s->pack_size > (int)sizeof pack) die("%s: pack of %d bytes", k->name, s->pack_size);
    memset(pack, 0, (size_t)s->pack_size);
    for (int i = 0; i < nv; ++i) {
        const amp__sig_param *p = &s->params[i];
        if (p->kind != AMP_ARG_VIEW || p->rank != v[i].rank) die("%s: parameter %d mismatch", k->name, i);
        unsigned char *at = pack + p->offset;
        uint64_t ptr = (uint64_t)v[i].p;
        memcpy(at, &ptr, 8);
        long long st[2] = {v[i].rank == 2 ? v[i].stride0 : 1, 1};
        int32_t ex[2] = {v[i].ext[0], v[i].ext[1]};
        memcpy(at + AMP__DESC_STRIDE_OFFSET, st, 8 * (size_t)v[i].rank);
        memcpy(at + AMP__DESC_EXTENT_OFFSET(v[i].rank), ex, 4 * (size_t)v[i].rank);
    }
    amp__launch_info li;
    memset(&li, 0, sizeof li);
    li.rank = e.rank;
    for (int d = 0; d < e.rank; ++d) li.ext[d] = e.v[d];
    unsigned g[3], b[3];
    amp__launch_geometry(e.rank, e.v, s->tiled != 0, s->tile, g, b); /* the library's own mapping */
    void *params[2] = {&li, pack};
    rg_launch(k->f, g, b, params);
}

/* -------------------------------------------------------------- timing */

typedef void (*run_fn)(void *);
typedef struct hrun { amp_status (*fn)(void *); void *job; } hrun;

static double hip_batch(const hrun *h, int n)
{
    AK(amp_accelerator_view_wait(W.q));
    double t0 = wl_now();
    for (int i = 0; i < n; ++i) AK(h->fn(h->job));
    AK(amp_accelerator_view_wait(W.q));
    return (wl_now() - t0) / n;
}

/* Wall seconds per run; *ev_s gets the stream-event time per run. */
static double raw_batch(run_fn fn, void *job, int n, double *ev_s)
{
    rg_sync();
    double t0 = wl_now();
    rg_events_begin();
    for (int i = 0; i < n; ++i) fn(job);
    rg_events_end();
    double wall = (wl_now() - t0) / n;
    double ev = rg_events_seconds();
    if (ev_s) *ev_s = ev / n;
    return wall;
}

/* A raw batch as hip_batch times one: no events inside (for pairs). */
static double raw_plain_batch(run_fn fn, void *job, int n)
{
    rg_sync();
    double t0 = wl_now();
    for (int i = 0; i < n; ++i) fn(job);
    rg_sync();
    return (wl_now() - t0) / n;
}

enum { REPS = 7 };
typedef struct cmp { double amp_s, raw_s, raw_ev_s, same_s; int n; } cmp;

/* Interleaved batches of the hipamp job and the raw job, same count each;
 * medians. A warm-up of each first (copies, module load, clocks). same_job
 * (may be NULL): the raw launches on hipamp's own device buffers, a control
 * for where the driver placed each side's memory. */
/* A warm-up run of each side, then the batch size (in lo..hi) that makes a
 * hipamp batch last about batch_s, timed over a batch of probe_n. */
static int warm_up_and_size(const hrun *h, run_fn raw, void *rjob, int probe_n, double batch_s, int lo, int hi)
{
    AK(h->fn(h->job));
    AK(amp_accelerator_view_wait(W.q));
    raw(rjob);
    rg_sync();
    double t1 = hip_batch(h, probe_n);
    int n = t1 > 0 ? (int)(batch_s / t1) : 1000;
    return n < lo ? lo : n > hi ? hi : n;
}

static cmp compare(const hrun *h, run_fn raw, void *rjob, void *same_job, double batch_s)
{
    cmp c;
    int n = warm_up_and_size(h, raw, rjob, 1, batch_s, 1, 5000);
    double a[REPS], r[REPS], e[REPS], s[REPS];
    for (int i = 0; i < REPS; ++i) {
        a[i] = hip_batch(h, n);
        r[i] = raw_batch(raw, rjob, n, &e[i]);
        s[i] = same_job ? raw_batch(raw, same_job, n, NULL) : 0;
    }
    c.amp_s = wl_median(a, REPS);
    c.raw_s = wl_median(r, REPS);
    c.raw_ev_s = wl_median(e, REPS);
    c.same_s = same_job ? wl_median(s, REPS) : 0;
    c.n = n;
    return c;
}

/* hipamp's device addresses of three views (resident after this launch):
 * the probe kernel stores each view's data pointer. */
static amp_kernel *probe_k;
static void hipamp_pointers(amp_array_view *a, amp_array_view *b, amp_array_view *c, rg_ptr p[3])
{
    static const char src[] =
        "AMP_KERNEL(ptr_probe, amp::index<1> i, amp::array_view<const float, 2> a,\n"
        "           amp::array_view<const float, 2> b, amp::array_view<float, 2> c,\n"
        "           amp::array_view<long long, 1> out)\n"
        "{ out[0] = (long long)a.data(); out[1] = (long long)b.data(); out[2] = (long long)c.data(); }\n";
    if (!probe_k) {
        amp_program *p;
        AK(amp_program_build(W.acc, src, NULL, &p));
        AK(amp_program_get_kernel(p, "ptr_probe", &probe_k)); /* the program lives to exit */
    }
    long long v[3] = {0, 0, 0};
    amp_array_view *out;
    AK(amp_array_view_create(v, sizeof v[0], amp_extent_1d(3), AMP_READ_WRITE, &out));
    amp_arg args[4] = {amp_arg_view(a), amp_arg_view(b), amp_arg_view(c), amp_arg_view(out)};
    AK(amp_parallel_for_each(W.q, amp_extent_1d(1), probe_k, args, 4));
    AK(amp_array_view_destroy(out));
    for (int i = 0; i < 3; ++i) p[i] = (rg_ptr)v[i];
}

/* Event-timed batches of a raw operation alone (copies, vendor BLAS). */
static double raw_only(run_fn fn, void *job, double batch_s)
{
    fn(job);
    rg_sync();
    double ev;
    raw_batch(fn, job, 1, &ev);
    int n = ev > 0 ? (int)(batch_s / ev) : 100;
    if (n < 1) n = 1;
    if (n > 5000) n = 5000;
    double e[REPS];
    for (int i = 0; i < REPS; ++i) raw_batch(fn, job, n, &e[i]);
    return wl_median(e, REPS);
}

/* ------------------------------------------------------------ transposes */

static rawk rk_tsimple, rk_tpad, rk_teven, rk_ttrunc, rk_ttuned, rk_saxpy3;
static rawk rk_msimple, rk_mtiled, rk_mtuned;

typedef struct rtjob { wl_tvariant v; int M, N; rg_ptr a, at; } rtjob;

static void raw_transpose(void *p)
{
    rtjob *j = p;
    const int M = j->M, N = j->N;
    rview v[2] = {rv2(j->a, N, 0, 0, M, N), rv2(j->at, M, 0, 0, N, M)};
    const int tm = M / 16 * 16, tn = N / 16 * 16;
    switch (j->v) {
    case WL_T_SIMPLE: raw_launch(&rk_tsimple, amp_extent_2d(M, N), v, 2); break;
    case WL_T_PAD: raw_launch(&rk_tpad, amp_extent_2d((M + 15) / 16 * 16, (N + 15) / 16 * 16), v, 2); break;
    case WL_T_TRUNCATE: raw_launch(&rk_ttrunc, amp_extent_2d(tm, tn), v, 2); break;
    case WL_T_SECTIONS: {
        rview core[2] = {rv2(j->a, N, 0, 0, tm, tn), rv2(j->at, M, 0, 0, tn, tm)};
        raw_launch(&rk_teven, amp_extent_2d(tm, tn), core, 2);
        if (tn < N) {
            rview s[2] = {rv2(j->a, N, 0, tn, M, N - tn), rv2(j->at, M, tn, 0, N - tn, M)};
            raw_launch(&rk_tsimple, amp_extent_2d(M, N - tn), s, 2);
        }
        if (tm < M) {
            rview s[2] = {rv2(j->a, N, tm, 0, M - tm, tn), rv2(j->at, M, 0, tm, tn, M - tm)};
            raw_launch(&rk_tsimple, amp_extent_2d(M - tm, tn), s, 2);
        }
        break;
    }
    case WL_T_TUNED: raw_launch(&rk_ttuned, wl_tuned_transpose_domain(M, N).extent, v, 2); break;
    default: break;
    }
}

typedef struct copyjob { rg_ptr dst, src; size_t bytes; } copyjob;
static void raw_copy(void *p)
{
    copyjob *c = p;
    rg_copy_async(c->dst, c->src, c->bytes);
}

static const char *short_t[WL_T_COUNT] = {"simple", "pad", "truncate", "sections", "tuned"};
static const char *short_m[WL_M_COUNT] = {"serial", "simple", "tiled", "tuned"};

/* Ratio hipamp/raw of the same kernel (speed: raw time / hipamp time). */
static double min_ratio = 1e9;
static char min_ratio_what[96];
static double ratios[64], same_ratios[64], min_same = 1e9;
static int nratios;
static char min_same_what[96];
static void note_ratio(double r, double same, const char *what)
{
    if (nratios < 64) ratios[nratios] = r, same_ratios[nratios++] = same;
    if (r < min_ratio) {
        min_ratio = r;
        snprintf(min_ratio_what, sizeof min_ratio_what, "%s", what);
    }
    if (same < min_same) {
        min_same = same;
        snprintf(min_same_what, sizeof min_same_what, "%s", what);
    }
}

static double tuned8192_gbs = -1, copy8192_gbs = -1;

static void bench_transposes(int M, int N, bool with_copy)
{
    size_t n = (size_t)M * N, bytes = n * sizeof(float);
    float *a = malloc(bytes), *at = malloc(bytes);
    if (!a || !at) die("out of host memory for %dx%d", M, N);
    wl_fill_random(a, n, &rng);
    rg_ptr da = rg_alloc(bytes), dat = rg_alloc(bytes);
    rg_h2d(da, a, bytes);
    char size[32], panel[64];
    snprintf(size, sizeof size, "%dx%d", M, N);
    snprintf(panel, sizeof panel, "transpose %s (GB/s)", size);
    const double moved = 2.0 * (double)bytes; /* read + written */
    double copy_gbs = -1;
    if (with_copy) {
        copyjob cj = {dat, da, bytes};
        double s = raw_only(raw_copy, &cj, 0.03);
        copy_gbs = moved / s / 1e9;
    }
    for (int v = 0; v < WL_T_COUNT; ++v) {
        if (v == WL_T_TRUNCATE && (M < 16 || N < 16)) continue;
        wl_poison(at, n);
        wl_tjob j;
        AK(wl_tjob_init(&j, &W, (wl_tvariant)v, a, at, M, N));
        hrun h = {(amp_status(*)(void *))wl_tjob_run, &j};
        rtjob r = {(wl_tvariant)v, M, N, da, dat};
        rg_fill32(dat, 0x7fc0dead, n);
        rg_ptr hp[3];
        hipamp_pointers(j.A, j.A, j.At, hp);
        rtjob same_job = {(wl_tvariant)v, M, N, hp[0], hp[2]};
        cmp c = compare(&h, raw_transpose, &r, &same_job, 0.025);
        AK(wl_tjob_fini(&j));
        size_t first;
        size_t bad_amp = wl_check_transpose(a, at, M, N, &first);
        rg_d2h(at, dat, bytes);
        size_t bad_raw = wl_check_transpose(a, at, M, N, &first);
        bool ok = !bad_amp && !bad_raw;
        if (!ok) failures++;
        double ratio = c.raw_s / c.amp_s, same = c.same_s / c.amp_s;
        char what[96];
        snprintf(what, sizeof what, "transpose %s %s", short_t[v], size);
        note_ratio(ratio, same, what);
        double gbs = moved / c.amp_s / 1e9, rgbs = moved / c.raw_ev_s / 1e9;
        out("| transpose %-8s | %-11s | %9.4f | %9.4f | %9.4f | **%.3f** | %.3f | %8.1f | %8.1f | %s |\n", short_t[v],
            size, c.amp_s * 1e3, c.raw_s * 1e3, c.raw_ev_s * 1e3, ratio, same, gbs, rgbs,
            ok ? "passed" : (bad_amp ? "FAILED (hipamp)" : "FAILED (raw)"));
        chart(panel, short_t[v], "hipamp", gbs, "GB/s");
        chart(panel, short_t[v], "raw", moved / c.raw_s / 1e9, "GB/s");
        if (v == WL_T_TUNED && M == 8192 && N == 8192) tuned8192_gbs = gbs;
    }
    if (with_copy) {
        out("| device copy (%s) | %-11s | | | %9.4f | | | | %8.1f | ceiling |\n", rg.copy, size,
            moved / copy_gbs / 1e9 * 1e3, copy_gbs);
        chart(panel, "copy", "ceiling", copy_gbs, "GB/s");
        if (M == 8192 && N == 8192) copy8192_gbs = copy_gbs;
    }
    rg_free(da);
    rg_free(dat);
    free(a);
    free(at);
}

/* ---------------------------------------------------------------- matmul */

typedef struct rmjob { wl_mvariant v; int M, N, K; rg_ptr a, b, c; } rmjob;
static void raw_matmul(void *p)
{
    rmjob *j = p;
    rview v[3] = {rv2(j->a, j->K, 0, 0, j->M, j->K), rv2(j->b, j->N, 0, 0, j->K, j->N), rv2(j->c, j->N, 0, 0, j->M, j->N)};
    switch (j->v) {
    case WL_M_SIMPLE: raw_launch(&rk_msimple, amp_extent_2d(j->M, j->N), v, 3); break;
    case WL_M_TILED: raw_launch(&rk_mtiled, amp_extent_2d((j->M + 15) / 16 * 16, (j->N + 15) / 16 * 16), v, 3); break;
    case WL_M_TUNED: raw_launch(&rk_mtuned, wl_tuned_matmul_domain(j->M, j->N).extent, v, 3); break;
    default: break;
    }
}

typedef struct gemmjob { int M, N, K; rg_ptr a, b, c; } gemmjob;
static void blas_gemm(void *p)
{
    gemmjob *g = p;
    rg_sgemm(g->M, g->N, g->K, g->a, g->b, g->c);
}

static void bench_matmul(int M, int N, int K)
{
    float *a = malloc((size_t)M * K * 4), *b = malloc((size_t)K * N * 4), *c = malloc((size_t)M * N * 4);
    float *tuned = malloc((size_t)M * N * 4);
    if (!a || !b || !c || !tuned) die("out of host memory");
    wl_fill_random(a, (size_t)M * K, &rng);
    wl_fill_random(b, (size_t)K * N, &rng);
    rg_ptr da = rg_alloc((size_t)M * K * 4), db = rg_alloc((size_t)K * N * 4), dc = rg_alloc((size_t)M * N * 4);
    rg_h2d(da, a, (size_t)M * K * 4);
    rg_h2d(db, b, (size_t)K * N * 4);
    char size[32], panel[64];
    snprintf(size, sizeof size, "%dx%dx%d", M, N, K);
    snprintf(panel, sizeof panel, "matmul %s (GFLOP/s)", size);
    const double flops = 2.0 * M * N * K;
    double gf[WL_M_COUNT] = {0};
    for (int v = WL_M_SIMPLE; v < WL_M_COUNT; ++v) {
        wl_poison(c, (size_t)M * N);
        wl_mjob j;
        AK(wl_mjob_init(&j, &W, (wl_mvariant)v, a, b, c, M, N, K));
        hrun h = {(amp_status(*)(void *))wl_mjob_run, &j};
        rmjob r = {(wl_mvariant)v, M, N, K, da, db, dc};
        rg_fill32(dc, 0x7fc0dead, (size_t)M * N);
        rg_ptr hp[3];
        hipamp_pointers(j.A, j.B, j.C, hp);
        rmjob same_job = {(wl_mvariant)v, M, N, K, hp[0], hp[1], hp[2]};
        cmp cm = compare(&h, raw_matmul, &r, &same_job, 0.05);
        AK(wl_mjob_fini(&j));
        double err;
        size_t bad_amp = wl_check_matmul(a, b, c, M, N, K, 0, 2048, &rng, &err);
        if (v == WL_M_TUNED) memcpy(tuned, c, (size_t)M * N * 4);
        rg_d2h(c, dc, (size_t)M * N * 4);
        size_t bad_raw = wl_check_matmul(a, b, c, M, N, K, 0, 2048, &rng, &err);
        bool ok = !bad_amp && !bad_raw;
        if (!ok) failures++;
        double ratio = cm.raw_s / cm.amp_s, same = cm.same_s / cm.amp_s;
        char what[96];
        snprintf(what, sizeof what, "matmul %s %s", short_m[v], size);
        note_ratio(ratio, same, what);
        gf[v] = flops / cm.amp_s / 1e9;
        out("| matmul %-11s | %-11s | %9.3f | %9.3f | %9.3f | **%.3f** | %.3f | %8.0f | %8.0f | %s |\n", short_m[v],
            size, cm.amp_s * 1e3, cm.raw_s * 1e3, cm.raw_ev_s * 1e3, ratio, same, gf[v], flops / cm.raw_ev_s / 1e9,
            ok ? "passed (sampled)" : (bad_amp ? "FAILED (hipamp)" : "FAILED (raw)"));
        chart(panel, short_m[v], "hipamp", gf[v], "GFLOP/s");
        chart(panel, short_m[v], "raw", flops / cm.raw_s / 1e9, "GFLOP/s");
    }
    double blas_gf = -1;
    char blas_note[160] = "", blas_lib[64] = "", blas_why[256] = "";
    if (rg_blas_load(blas_lib, sizeof blas_lib, blas_why, sizeof blas_why)) {
        gemmjob g = {M, N, K, da, db, dc};
        rg_fill32(dc, 0x7fc0dead, (size_t)M * N);
        double s = raw_only(blas_gemm, &g, 0.05);
        blas_gf = flops / s / 1e9;
        rg_d2h(c, dc, (size_t)M * N * 4);
        double err;
        size_t bad = wl_check_matmul(a, b, c, M, N, K, 0, 2048, &rng, &err);
        /* The tuned kernel against the vendor SGEMM, every element. */
        double maxd = 0;
        for (size_t i = 0; i < (size_t)M * N; ++i) {
            double d = fabs((double)tuned[i] - (double)c[i]);
            if (!(d <= maxd)) maxd = isnan(d) ? INFINITY : d;
        }
        bool agree = maxd < 1e-2;
        if (bad || !agree) failures++;
        snprintf(blas_note, sizeof blas_note, "tuned vs %s max |diff| %.2g over all elements", rg.blas, maxd);
        out("| %s SGEMM (%s) | %-11s | | | %9.3f | | | | %8.0f | %s; %s |\n", rg.blas, blas_lib, size, s * 1e3,
            blas_gf, bad ? "FAILED" : "passed (sampled)", blas_note);
        chart(panel, rg.blas, "ceiling", blas_gf, "GFLOP/s");
    } else {
        out("| %s SGEMM | %-11s | | | | | | | | not found: %s |\n", rg.blas, size, blas_why);
    }
    double tiled_x = gf[WL_M_TILED] / gf[WL_M_SIMPLE];
    char why[256];
    snprintf(why, sizeof why,
             "L1/L2 already serve the simple kernel's reuse, and one output a thread (2 tile_static loads "
             "an FMA) caps the 16x16 kernel; register blocking (tuned) is %.1fx simple",
             gf[WL_M_TUNED] / gf[WL_M_SIMPLE]);
    add_goal(tiled_x >= 2.0, "tiled matmul vs simple at 4096x4096 (the articles' claim)", ">= 2x",
             tiled_x < 2.0 ? why : NULL, "%.2fx", tiled_x);
    char blas_goal[96], blas_missing[64];
    snprintf(blas_goal, sizeof blas_goal, "tuned matmul vs %s SGEMM at 4096", rg.blas);
    snprintf(blas_missing, sizeof blas_missing, "%s could not be loaded", rg.blas);
    if (blas_gf > 0)
        add_goal(gf[WL_M_TUNED] / blas_gf >= 0.5, blas_goal, ">= 0.50", NULL, "%.2f (%.0f vs %.0f GFLOP/s)",
                 gf[WL_M_TUNED] / blas_gf, gf[WL_M_TUNED], blas_gf);
    else
        add_goal(false, blas_goal, ">= 0.50", blas_missing, "n/a");
    rg_free(da);
    rg_free(db);
    rg_free(dc);
    free(a);
    free(b);
    free(c);
    free(tuned);
}

/* ------------------------------------------------------- launch overhead */

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
static bool launch_only;
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


static void bench_launch(void)
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
    if (launch_only) launch_study(&h, &rj, &hj);
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

/* ------------------------------------------------------------ build time */

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
static void bench_build(void)
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

static void report_build(void)
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

/* ------------------------------------------------------------ PNG writer */

/* Fallback when matplotlib is missing: bars and lines drawn here, stored
 * (uncompressed) deflate blocks, a 3x5 pixel font. */
typedef struct img { int w, h; unsigned char *px; } img;
static void fill(img *im, int x0, int y0, int x1, int y1, unsigned rgb)
{
    if (x0 < 0) x0 = 0;
    if (y0 < 0) y0 = 0;
    if (x1 > im->w) x1 = im->w;
    if (y1 > im->h) y1 = im->h;
    for (int y = y0; y < y1; ++y)
        for (int x = x0; x < x1; ++x) {
            unsigned char *p = im->px + ((size_t)y * im->w + x) * 3;
            p[0] = (unsigned char)(rgb >> 16), p[1] = (unsigned char)(rgb >> 8), p[2] = (unsigned char)rgb;
        }
}
static const char *glyph(char c)
{
    static const char *const digits[10] = {"111101101101111", "010110010010111", "111001111100111",
                                           "111001111001111", "101101111001001", "111100111001111",
                                           "111100111101111", "111001001001001", "111101111101111",
                                           "111101111001111"};
    static const char *const letters[26] = {
        "010101111101101", "110101110101110", "011100100100011", "110101101101110", "111100110100111",
        "111100110100100", "011100101101011", "101101111101101", "111010010010111", "001001001101010",
        "101101110101101", "100100100100111", "101111111101101", "110101101101101", "010101101101010",
        "110101110100100", "010101101110011", "110101110101101", "011100010001110", "111010010010010",
        "101101101101111", "101101101101010", "101101111111101", "101101010101101", "101101010010010",
        "111001010100111"};
    if (c >= '0' && c <= '9') return digits[c - '0'];
    if (c >= 'a' && c <= 'z') c = (char)(c - 32);
    if (c >= 'A' && c <= 'Z') return letters[c - 'A'];
    switch (c) {
    case '.': return "000000000000010";
    case '/': return "001001010100100";
    case '-': return "000000111000000";
    case '(': return "010100100100010";
    case ')': return "010001001001010";
    case '%': return "101001010100101";
    case ':': return "000010000010000";
    case '_': return "000000000000111";
    default: return "000000000000000";
    }
}
static void text(img *im, int x, int y, const char *s, int scale, unsigned rgb)
{
    for (; *s; ++s, x += 4 * scale) {
        const char *g = glyph(*s);
        for (int r = 0; r < 5; ++r)
            for (int c = 0; c < 3; ++c)
                if (g[r * 3 + c] == '1') fill(im, x + c * scale, y + r * scale, x + (c + 1) * scale, y + (r + 1) * scale, rgb);
    }
}
static uint32_t crc32_of(const unsigned char *p, size_t n, uint32_t c)
{
    static uint32_t t[256];
    if (!t[1])
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t v = i;
            for (int k = 0; k < 8; ++k) v = v & 1 ? 0xedb88320u ^ (v >> 1) : v >> 1;
            t[i] = v;
        }
    c = ~c;
    for (size_t i = 0; i < n; ++i) c = t[(c ^ p[i]) & 0xff] ^ (c >> 8);
    return ~c;
}
static void be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16), p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}
static void chunk(FILE *f, const char *type, const unsigned char *data, size_t n)
{
    unsigned char hdr[8];
    be32(hdr, (uint32_t)n);
    memcpy(hdr + 4, type, 4);
    fwrite(hdr, 1, 8, f);
    if (n) fwrite(data, 1, n, f);
    uint32_t c = crc32_of(hdr + 4, 4, 0);
    c = crc32_of(data, n, c);
    unsigned char cb[4];
    be32(cb, c);
    fwrite(cb, 1, 4, f);
}
static bool png_write(const char *path, const img *im)
{
    size_t raw_n = (size_t)im->h * (1 + (size_t)im->w * 3);
    unsigned char *raw = malloc(raw_n);
    size_t nblocks = (raw_n + 65534) / 65535;
    unsigned char *z = malloc(2 + raw_n + nblocks * 5 + 4);
    if (!raw || !z) return false;
    for (int y = 0; y < im->h; ++y) {
        raw[(size_t)y * (1 + im->w * 3)] = 0;
        memcpy(raw + (size_t)y * (1 + im->w * 3) + 1, im->px + (size_t)y * im->w * 3, (size_t)im->w * 3);
    }
    size_t zn = 0;
    z[zn++] = 0x78;
    z[zn++] = 0x01;
    uint32_t s1 = 1, s2 = 0;
    for (size_t off = 0; off < raw_n; off += 65535) {
        size_t len = raw_n - off < 65535 ? raw_n - off : 65535;
        z[zn++] = off + len == raw_n ? 1 : 0;
        z[zn++] = (unsigned char)len, z[zn++] = (unsigned char)(len >> 8);
        z[zn++] = (unsigned char)~len, z[zn++] = (unsigned char)(~len >> 8);
        memcpy(z + zn, raw + off, len);
        zn += len;
        for (size_t i = 0; i < len; ++i) {
            s1 = (s1 + raw[off + i]) % 65521;
            s2 = (s2 + s1) % 65521;
        }
    }
    be32(z + zn, (s2 << 16) | s1);
    zn += 4;
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    fwrite(sig, 1, 8, f);
    unsigned char ihdr[13];
    be32(ihdr, (uint32_t)im->w);
    be32(ihdr + 4, (uint32_t)im->h);
    ihdr[8] = 8, ihdr[9] = 2, ihdr[10] = 0, ihdr[11] = 0, ihdr[12] = 0;
    chunk(f, "IHDR", ihdr, 13);
    chunk(f, "IDAT", z, zn);
    chunk(f, "IEND", NULL, 0);
    bool ok = fclose(f) == 0;
    free(raw);
    free(z);
    return ok;
}

/* One panel per distinct chart panel: grouped bars (hipamp, raw), ceiling
 * lines. */
static bool png_chart(const char *path, const char *title)
{
    const char *panels[8];
    int np = 0;
    for (int i = 0; i < ncrows; ++i) {
        int k = 0;
        while (k < np && strcmp(panels[k], crows[i].panel)) ++k;
        if (k == np && np < 8) panels[np++] = crows[i].panel;
    }
    if (!np) return false;
    const int pw = 420, ph = 360, top = 40;
    img im = {pw * (np < 3 ? np : 3), top + ph * ((np + 2) / 3), NULL};
    im.px = malloc((size_t)im.w * im.h * 3);
    if (!im.px) return false;
    fill(&im, 0, 0, im.w, im.h, 0xffffff);
    text(&im, 10, 10, title, 3, 0x000000);
    const unsigned series_rgb[2] = {0x1f77b4, 0xff7f0e};
    for (int p = 0; p < np; ++p) {
        int ox = (p % 3) * pw, oy = top + (p / 3) * ph;
        const char *labels[16];
        int nl = 0;
        double vmax = 0;
        for (int i = 0; i < ncrows; ++i) {
            if (strcmp(crows[i].panel, panels[p])) continue;
            if (crows[i].value > vmax) vmax = crows[i].value;
            if (!strcmp(crows[i].series, "ceiling")) continue;
            int k = 0;
            while (k < nl && strcmp(labels[k], crows[i].label)) ++k;
            if (k == nl && nl < 16) labels[nl++] = crows[i].label;
        }
        if (vmax <= 0) continue;
        vmax *= 1.1;
        text(&im, ox + 10, oy + 8, panels[p], 2, 0x000000);
        const int x0 = ox + 30, x1 = ox + pw - 20, y0 = oy + 40, y1 = oy + ph - 40;
        fill(&im, x0, y1, x1, y1 + 1, 0x000000);
        fill(&im, x0, y0, x0 + 1, y1, 0x000000);
        int gw = nl ? (x1 - x0) / nl : 1;
        for (int l = 0; l < nl; ++l) {
            int s = 0;
            for (int i = 0; i < ncrows; ++i) {
                if (strcmp(crows[i].panel, panels[p]) || strcmp(crows[i].label, labels[l]) ||
                    !strcmp(crows[i].series, "ceiling") || s >= 2)
                    continue;
                int bw = (gw - 12) / 2, bx = x0 + l * gw + 6 + s * bw;
                int by = y1 - (int)((y1 - y0) * crows[i].value / vmax);
                fill(&im, bx, by, bx + bw - 2, y1, series_rgb[s]);
                char v[24];
                snprintf(v, sizeof v, "%.0f", crows[i].value);
                text(&im, bx, by - 8, v, 1, 0x000000);
                ++s;
            }
            text(&im, x0 + l * gw + 6, y1 + 8, labels[l], 2, 0x000000);
        }
        for (int i = 0; i < ncrows; ++i) {
            if (strcmp(crows[i].panel, panels[p]) || strcmp(crows[i].series, "ceiling")) continue;
            int y = y1 - (int)((y1 - y0) * crows[i].value / vmax);
            for (int x = x0; x < x1; x += 8) fill(&im, x, y, x + 5, y + 2, 0xd62728);
            char v[48];
            snprintf(v, sizeof v, "%s %.0f", crows[i].label, crows[i].value);
            text(&im, x1 - 4 * 2 * (int)strlen(v), y - 14, v, 2, 0xd62728);
        }
        char legend[96];
        snprintf(legend, sizeof legend, "BLUE: HIPAMP  ORANGE: RAW %s", rg.launch); /* the font has capitals only */
        text(&im, ox + 30, oy + ph - 14, legend, 1, 0x444444);
    }
    bool ok = png_write(path, &im);
    free(im.px);
    return ok;
}

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
static int parse_args(int argc, char **argv)
{
    outdir = getenv("OUT");
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc) outdir = argv[++i];
        else if (!strcmp(argv[i], "--quick")) quick = true;
        else if (!strcmp(argv[i], "--no-cpu")) with_cpu = false;
        else if (!strcmp(argv[i], "--launch-only")) launch_only = true;
        else if (!strcmp(argv[i], "--chart") && i + 2 < argc) {
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
            printf("usage: %s [--out DIR] [--quick] [--no-cpu] [--launch-only] | --chart RESULTS.csv OUT.png\n"
                   "  Benchmarks hipamp on %s against raw driver launches, device copy and\n"
                   "  %s; writes <date>-<gpu>.md/.csv/.png into DIR (default: $OUT, else\n"
                   "  %s). --quick: smaller sizes. --no-cpu: skip bench_cpu.\n"
                   "  --launch-only: the launch-overhead row and where a launch's time goes\n"
                   "  (long batches with device events, the host cost of short bursts), printed only.\n",
                   rg.program, rg.accelerator, rg.blas, HIPAMP_BENCH_RESULTS);
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

static void load_raw_kernels(void)
{
    void *tmod = raw_build(wl_transpose_source, NULL);
    void *mmod = raw_build(wl_matmul_source, NULL);
    raw_kernel(tmod, "transpose_simple", &rk_tsimple);
    raw_kernel(tmod, "transpose_tiled_pad", &rk_tpad);
    raw_kernel(tmod, "transpose_tiled_even", &rk_teven);
    raw_kernel(tmod, "transpose_tiled_truncate", &rk_ttrunc);
    raw_kernel(tmod, "transpose_tuned", &rk_ttuned);
    raw_kernel(tmod, "saxpy3", &rk_saxpy3);
    raw_kernel(mmod, "matmul_simple", &rk_msimple);
    raw_kernel(mmod, "matmul_tiled16", &rk_mtiled);
    raw_kernel(mmod, "matmul_tuned", &rk_mtuned);
    int regs = 0, lmem = 0, regs_t = 0, lmem_t = 0;
    if (rg_kernel_regs(rk_mtuned.f, &regs, &lmem) && rg_kernel_regs(rk_ttuned.f, &regs_t, &lmem_t))
        out("Tuned kernels as compiled: matmul_tuned %d registers, %d bytes of local memory a thread; "
            "transpose_tuned %d registers.\n\n", regs, lmem, regs_t);
    else
        out("Tuned kernels as compiled: the driver does not report their registers.\n\n");
}

/* ------------------------------------------------------------ two GPUs */

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
static void bench_two_gpus(void)
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

/* The directory of this program, where bench_trace and bench_cpu are built. */
static bool self_dir(char *dir, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", dir, size - 1);
    if (n <= 0) return false;
    dir[n] = 0;
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    return true;
}

static void report_kernels(void)
{
    out("## Kernels: hipamp vs the identical raw launch\n\n");
    out("| kernel | size | hipamp ms | raw ms | raw ms (events) | hipamp/raw | hipamp/raw, same buffers | hipamp GB/s or GFLOP/s | raw (events) | check |\n");
    out("|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
    if (quick) {
        bench_transposes(999, 666, false);
        bench_transposes(4096, 4096, true);
        bench_matmul(1024, 1024, 1024);
    } else {
        bench_transposes(9999, 6666, false);
        bench_transposes(8192, 8192, true);
        bench_transposes(16384, 16384, true);
        bench_matmul(4096, 4096, 4096);
    }
    out("\n## Launch overhead (wall clock per launch, many launches between two waits)\n\n");
    out("The first row: %d pairs of batches of about a millisecond, hipamp's and the raw one back to back "
        "(which goes first alternates); the times are each side's median, the difference the median of the "
        "pairs' differences.\n\n", LAUNCH_PAIRS);
    out("| workload | hipamp us | raw us | difference us | raw us (events) | launches a batch | check |\n");
    out("|---|---:|---:|---:|---:|---:|---|\n");
    bench_launch();
    char self[PATH_MAX];
    if (self_dir(self, sizeof self)) bench_trace_hooks(self);
    out("\nLaunch overhead above the raw launch, the pairs' differences: median %+.2f us, interquartile range "
        "%+.2f to %+.2f us.\n", launch_diff_us, launch_diff_q1_us, launch_diff_q3_us);
    if (trace_on_us > -1)
        out("\nWith AMP_TRACE on, each launch also records two timed device events and a trace event: %+.2f us "
            "(%+.1f%%) a launch above the library built without the hooks.\n",
            trace_on_us, trace_on_pct);
}

static void report_goals(void)
{
    if (tuned8192_gbs > 0 && copy8192_gbs > 0)
        add_goal(tuned8192_gbs >= 0.9 * copy8192_gbs, "tuned transpose 8192x8192 vs device-to-device copy",
                 ">= 0.90", NULL, "%.2f (%.0f vs %.0f GB/s)", tuned8192_gbs / copy8192_gbs, tuned8192_gbs,
                 copy8192_gbs);
    double med = wl_median(ratios, nratios), med_same = wl_median(same_ratios, nratios);
    char note[256];
    snprintf(note, sizeof note, "separate raw buffers: lowest %.3f (%s), median %.3f%s", min_ratio, min_ratio_what, med,
             min_ratio < 0.98 ? "; the gap follows buffer placement, not the launch path" : "");
    add_goal(min_same >= 0.98, "hipamp/raw, same kernel on the same buffers, large sizes (lowest)", ">= 0.98", note,
             "%.3f (%s); median %.3f", min_same, min_same_what, med_same);
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
        fputs(md, f);
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

int main(int argc, char **argv)
{
    int rc = parse_args(argc, argv);
    if (rc >= 0) return rc;
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
        bench_launch();
        wl_close(&W);
        return failures ? 1 : 0;
    }
    bench_build();
    AK(wl_open(&W, acc));
    load_raw_kernels();
    report_kernels();
    report_build();
    bench_two_gpus();
    report_goals();
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
