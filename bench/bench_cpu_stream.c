/* bench_cpu_stream.c — bench_cpu's stream section (issue 41): BabelStream's kernels (examples/stream/stream.hip: Copy, Mul, Add, Triad, Nstream, and Dot both as BabelStream's tiled grid-stride kernel and as amp_transform_reduce) on the CPU accelerator against the same kernels in C + OpenMP (stream_omp.c) on as many threads, in double and float, each kernel timed to completion on every iteration as BabelStream times it, the two sides' iterations interleaved, each after a pause; MB/s from each kernel's fastest run (BabelStream's figure), the ratio hipamp / OpenMP beside the goal, and both sides' arrays and dot products checked against the iterations replayed on scalars (the rule of examples/stream/stream.c). */
#define _GNU_SOURCE
#include <hipamp.h>

#include "bench_cpu_check.h"

#include "bench_cpu_stream.h"
#include "stream_omp.h"
#include "workloads.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char stream_kernels[];

#define SC(call) BENCH_CPU_CHECK(call)
/* BabelStream's OpenMP arrays start on 2 MiB (its ALIGNMENT). */
#define STREAM_OMP_ALIGN ((size_t)2 << 20)

/* Rows of the table: the five streaming kernels, then the two dots. The
 * hipamp side runs every row; OpenMP has one dot (its row DOT_TILED's
 * time serves both dot rows). */
enum { R_COPY, R_MUL, R_ADD, R_TRIAD, R_NSTREAM, R_DOT_TILED, R_DOT_ALG, R_COUNT };
static const char *const row_names[R_COUNT] = {"Copy",    "Mul", "Add", "Triad", "Nstream",
                                               "Dot, tiled grid-stride kernel", "Dot, amp_transform_reduce"};
static const int row_weight[R_COUNT] = {2, 2, 3, 3, 4, 2, 2};
/* The order of an iteration, BabelStream's: Copy, Mul, Add, Triad, Dot;
 * Nstream runs in a loop of its own after those iterations. */
static const int order[R_COUNT] = {R_COPY, R_MUL, R_ADD, R_TRIAD, R_DOT_TILED, R_DOT_ALG, R_NSTREAM};
enum { DOT_TILE = 1024 };

typedef struct side {
    amp_accelerator_view *q;
    amp_kernel *k[R_COUNT], *init;
    amp_array *arr[3], *sums;
    amp_array_view *v[3], *vsums;
    void *host_sums;
    int tiles;
} side;

typedef struct prec {
    bool fl;
    size_t es;
    amp_type type;
    double eps;
} prec;

/* ------------------------------------------------------------- hipamp */

static int amp_setup(side *s, amp_accelerator *acc, const prec *p, long long n)
{
    amp_accelerator_info info;
    SC(amp_accelerator_get_info(acc, &info));
    SC(amp_accelerator_view_create(acc, &s->q));
    amp_program *prog = NULL;
    amp_status st = amp_program_build(acc, stream_kernels, p->fl ? "-DSTREAM_T=float" : "-DSTREAM_T=double", &prog);
    SC(st);
    static const char *const names[R_COUNT] = {"stream_copy", "stream_mul", "stream_add", "stream_triad",
                                               "stream_nstream", "stream_dot", "stream_dot"};
    for (int r = 0; r < R_COUNT; ++r) SC(amp_program_get_kernel(prog, names[r], &s->k[r]));
    SC(amp_program_get_kernel(prog, "stream_init", &s->init));
    for (int v = 0; v < 3; ++v) {
        SC(amp_array_create(s->q, p->es, amp_extent_1d((int)n), NULL, &s->arr[v]));
        SC(amp_array_view_of_array(s->arr[v], &s->v[v]));
    }
    s->tiles = 4 * (info.compute_units > 0 ? info.compute_units : 1); /* BabelStream's CUDA geometry */
    SC(amp_array_create(s->q, p->es, amp_extent_1d(s->tiles), NULL, &s->sums));
    SC(amp_array_view_of_array(s->sums, &s->vsums));
    if (!(s->host_sums = malloc((size_t)s->tiles * p->es))) return -1;
    /* The program stays (its kernels are the section's); freed at exit. */
    amp_arg ia[6] = {amp_arg_view(s->v[0]), amp_arg_view(s->v[1]), amp_arg_view(s->v[2]),
                     p->fl ? amp_arg_float32(0.1f) : amp_arg_float64(0.1),
                     p->fl ? amp_arg_float32(0.2f) : amp_arg_float64(0.2),
                     p->fl ? amp_arg_float32(0.0f) : amp_arg_float64(0.0)};
    SC(amp_parallel_for_each(s->q, amp_extent_1d((int)n), s->init, ia, 6));
    SC(amp_accelerator_view_wait(s->q));
    return 0;
}

static int amp_row(side *s, const prec *p, int r, long long n, double *sum)
{
    amp_arg a = amp_arg_view(s->v[0]), b = amp_arg_view(s->v[1]), c = amp_arg_view(s->v[2]);
    amp_extent e = amp_extent_1d((int)n);
    switch (r) {
    case R_COPY: SC(amp_parallel_for_each(s->q, e, s->k[r], (amp_arg[]){a, c}, 2)); break;
    case R_MUL: SC(amp_parallel_for_each(s->q, e, s->k[r], (amp_arg[]){b, c}, 2)); break;
    case R_ADD:
    case R_TRIAD:
    case R_NSTREAM: SC(amp_parallel_for_each(s->q, e, s->k[r], (amp_arg[]){a, b, c}, 3)); break;
    case R_DOT_TILED: {
        amp_tiled_extent te;
        SC(amp_extent_tile_1d(amp_extent_1d(s->tiles * DOT_TILE), DOT_TILE, &te));
        SC(amp_parallel_for_each_tiled(s->q, te, s->k[r], (amp_arg[]){a, b, amp_arg_view(s->vsums)}, 3));
        SC(amp_array_copy_to_host(s->sums, s->host_sums));
        double t = 0;
        if (p->fl) {
            float f = 0; /* added in the element type, as BabelStream's CUDA dot */
            for (int i = 0; i < s->tiles; ++i) f += ((const float *)s->host_sums)[i];
            t = f;
        } else {
            for (int i = 0; i < s->tiles; ++i) t += ((const double *)s->host_sums)[i];
        }
        *sum = t;
        return 0;
    }
    case R_DOT_ALG: {
        const amp_alg_options wide = {NULL, AMP_TYPE_FLOAT64}; /* as examples/stream's --dot alg */
        SC(amp_transform_reduce_with(s->q, a, b, p->type, AMP_MAP_PRODUCT, AMP_OP_SUM, &wide, sum));
        return 0;
    }
    default: break;
    }
    SC(amp_accelerator_view_wait(s->q));
    return 0;
}

static void amp_teardown(side *s)
{
    for (int v = 0; v < 3; ++v) {
        amp_array_view_destroy(s->v[v]);
        amp_array_destroy(s->arr[v]);
    }
    amp_array_view_destroy(s->vsums);
    amp_array_destroy(s->sums);
    amp_accelerator_view_destroy(s->q);
    free(s->host_sums);
}

/* ------------------------------------------------------------- OpenMP */

static void omp_row(const prec *p, int r, void *a, void *b, void *c, long n, int th, double *sum)
{
    if (p->fl) {
        switch (r) {
        case R_COPY: somp_copy_f(a, c, n, th); break;
        case R_MUL: somp_mul_f(b, c, n, th); break;
        case R_ADD: somp_add_f(a, b, c, n, th); break;
        case R_TRIAD: somp_triad_f(a, b, c, n, th); break;
        case R_NSTREAM: somp_nstream_f(a, b, c, n, th); break;
        default: *sum = somp_dot_f(a, b, n, th); break;
        }
    } else {
        switch (r) {
        case R_COPY: somp_copy_d(a, c, n, th); break;
        case R_MUL: somp_mul_d(b, c, n, th); break;
        case R_ADD: somp_add_d(a, b, c, n, th); break;
        case R_TRIAD: somp_triad_d(a, b, c, n, th); break;
        case R_NSTREAM: somp_nstream_d(a, b, c, n, th); break;
        default: *sum = somp_dot_d(a, b, n, th); break;
        }
    }
}

/* ------------------------------------------------------------ checking */

/* The iterations replayed on scalars of the element type: the gold
 * values of a, b, c and the last dot. */
static void gold(const prec *p, int times, long long n, double g[4])
{
#define GOLD(T)                                                                                        \
    do {                                                                                               \
        T a = (T)0.1, b = (T)0.2, c = 0, s = 0, x = (T)0.4;                                            \
        for (int k = 0; k < times; ++k) {                                                              \
            c = a;                                                                                     \
            b = x * c;                                                                                 \
            c = a + b;                                                                                 \
            a = b + x * c;                                                                             \
            s = a * b * (T)n;                                                                          \
        }                                                                                              \
        for (int k = 0; k < times; ++k) a += b + x * c;                                                \
        g[0] = a, g[1] = b, g[2] = c, g[3] = s;                                                        \
    } while (0)
    if (p->fl) GOLD(float);
    else GOLD(double);
#undef GOLD
}

/* Every element of each array within 100 + 4 x times eps of its gold
 * value, relative to the larger of the two (examples/stream/stream.c's
 * rule: BabelStream's, with an epsilon an iteration for fused
 * multiply-adds; a NaN fails). */
static bool arrays_ok(const prec *p, void *const arr[3], long long n, const double g[4], int times)
{
    const double limit = (100.0 + 4.0 * times) * p->eps;
    for (int v = 0; v < 3; ++v)
        for (long long i = 0; i < n; ++i) {
            double x = p->fl ? (double)((const float *)arr[v])[i] : ((const double *)arr[v])[i];
            if (!(fabs(x - g[v]) <= limit * fmax(fabs(x), fabs(g[v])))) return false;
        }
    return true;
}

static bool dot_ok(double sum, double want, double tol)
{
    return fabs(sum - want) <= tol * fabs(want);
}

/* ------------------------------------------------------------ the section */

static double min_after_first(const double *t, int times)
{
    double m = t[1];
    for (int i = 2; i < times; ++i) m = t[i] < m ? t[i] : m;
    return m;
}

/* One precision: both sides, interleaved by iteration. Appends its rows
 * to o; returns the failed checks, -1 when a hipamp call failed. */
static int one_precision(FILE *o, amp_accelerator *acc, const prec *p, long long n, int times, int threads,
                         double *worst_stream, double *dot_tiled_ratio)
{
    side s;
    memset(&s, 0, sizeof s);
    if (amp_setup(&s, acc, p, n)) return -1;
    void *h[3] = {NULL, NULL, NULL}, *m[3] = {NULL, NULL, NULL};
    double *ta = calloc((size_t)R_COUNT * times, sizeof(double)), *to = calloc((size_t)R_COUNT * times, sizeof(double));
    for (int v = 0; v < 3; ++v) {
        h[v] = malloc((size_t)n * p->es);
        /* As BabelStream's OpenMP version allocates (its ALIGNMENT): on
         * a 2 MiB boundary, where a host whose transparent huge pages are
         * "always" backs every whole 2 MiB of the array with one. */
        m[v] = aligned_alloc(STREAM_OMP_ALIGN, ((size_t)n * p->es + STREAM_OMP_ALIGN - 1) / STREAM_OMP_ALIGN *
                                                   STREAM_OMP_ALIGN);
    }
    if (!ta || !to || !h[0] || !h[1] || !h[2] || !m[0] || !m[1] || !m[2]) {
        fprintf(stderr, "bench_cpu: out of host memory for the stream section\n");
        return -1;
    }
    if (p->fl) somp_init_f(m[0], m[1], m[2], 0.1f, 0.2f, 0.0f, (long)n, threads);
    else somp_init_d(m[0], m[1], m[2], 0.1, 0.2, 0.0, (long)n, threads);
    double sum_tiled = 0, sum_alg = 0, sum_omp = 0;
    /* Which side goes first alternates by iteration, and each side's
     * iteration starts after a pause (wl_settle) and one untimed dot (its
     * sum dropped; it writes no array): OpenMP's idle threads keep
     * spinning for milliseconds after a region, and would otherwise share
     * the cores with hipamp's next kernels (or hipamp's with OpenMP's, for
     * AMP_CPU_SPIN_US); the dot then wakes the side's own threads, as the
     * iteration before does in BabelStream's back-to-back run, so that its
     * Copy (or Nstream) is not timed waking them. */
    /* The classic run (every row but Nstream, each iteration), then
     * Nstream's, as examples/stream runs them. */
    for (int it = 0; it < 2 * times; ++it)
        for (int half = 0; half < 2; ++half) {
            const bool ns = it >= times;
            const bool hip = (half == 0) == (it % 2 == 0);
            double dropped = 0;
            wl_settle();
            if (hip) {
                if (amp_row(&s, p, R_DOT_TILED, n, &dropped)) return -1;
                for (int j = 0; j < R_COUNT; ++j) {
                    int r = order[j];
                    if ((r == R_NSTREAM) != ns) continue;
                    double t0 = wl_now(), sum = 0;
                    if (amp_row(&s, p, r, n, &sum)) return -1;
                    ta[r * times + it % times] = wl_now() - t0;
                    if (r == R_DOT_TILED) sum_tiled = sum;
                    if (r == R_DOT_ALG) sum_alg = sum;
                }
            } else {
                omp_row(p, R_DOT_TILED, m[0], m[1], m[2], (long)n, threads, &dropped);
                for (int j = 0; j < R_COUNT; ++j) {
                    int r = order[j];
                    if (r == R_DOT_ALG || (r == R_NSTREAM) != ns) continue;
                    double t0 = wl_now();
                    omp_row(p, r, m[0], m[1], m[2], (long)n, threads, &sum_omp);
                    to[r * times + it % times] = wl_now() - t0;
                }
            }
        }
    for (int it = 0; it < times; ++it) to[R_DOT_ALG * times + it] = to[R_DOT_TILED * times + it];
    for (int v = 0; v < 3; ++v) SC(amp_array_copy_to_host(s.arr[v], h[v]));

    double g[4];
    gold(p, times, n, g);
    /* The dot's limit (stream.c's): 1e-8, or the tiled kernel's worst-case
     * rounding where larger, and an epsilon an iteration for fused
     * multiply-adds. */
    const long long items = (long long)s.tiles * DOT_TILE;
    double tol = ((double)((n + items - 1) / items) + 10 + s.tiles + 2) * p->eps / 2;
    if (tol < 1e-8) tol = 1e-8;
    tol += 4.0 * times * p->eps;
    const bool amp_arrays = arrays_ok(p, h, n, g, times), omp_arrays = arrays_ok(p, m, n, g, times);
    const bool ok_tiled = dot_ok(sum_tiled, g[3], tol), ok_alg = dot_ok(sum_alg, g[3], tol),
               ok_omp = dot_ok(sum_omp, g[3], tol);
    int bad = 0;
    for (int r = 0; r < R_COUNT; ++r) {
        const double bytes = (double)row_weight[r] * (double)n * (double)p->es;
        const double amin = min_after_first(ta + r * times, times), omin = min_after_first(to + r * times, times);
        const double ratio = omin / amin;
        const bool is_dot = r == R_DOT_TILED || r == R_DOT_ALG;
        const double goal = r == R_DOT_TILED ? 0.9 : 1.0;
        bool ok = omp_arrays && ok_omp && (is_dot ? (r == R_DOT_TILED ? ok_tiled : ok_alg) : amp_arrays);
        if (!ok) ++bad;
        if (!is_dot && ratio < *worst_stream) *worst_stream = ratio;
        if (r == R_DOT_TILED) *dot_tiled_ratio = ratio < *dot_tiled_ratio ? ratio : *dot_tiled_ratio;
        fprintf(o, "| %s | %s | %.0f | %.0f | **%.2f** | >= %.1f: %s | %s |\n", row_names[r], p->fl ? "float" : "double",
                1e-6 * bytes / amin, 1e-6 * bytes / omin, ratio, goal, ratio >= goal ? "met" : "**missed**",
                ok ? "passed" : (!omp_arrays || !ok_omp ? "OpenMP WRONG" : "hipamp WRONG"));
    }
    if (!ok_tiled || !ok_alg || !ok_omp)
        fprintf(o, "\n(%s dot products: tiled %.10g, amp_transform_reduce %.10g, OpenMP %.10g; want %.10g within %.2g.)\n",
                p->fl ? "float" : "double", sum_tiled, sum_alg, sum_omp, g[3], tol);
    amp_teardown(&s);
    for (int v = 0; v < 3; ++v) {
        free(h[v]);
        free(m[v]);
    }
    free(ta);
    free(to);
    return bad;
}

/* The host's transparent huge pages setting, the bracketed word of
 * /sys/kernel/mm/transparent_hugepage/enabled ("madvise", "always",
 * "never"), or "unknown". */
static const char *thp_mode(char *buf, size_t cap)
{
    char line[128] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    bool read = f && fgets(line, sizeof line, f);
    if (f) fclose(f);
    const char *b = read ? strchr(line, '[') : NULL, *e = b ? strchr(b, ']') : NULL;
    if (!e) return "unknown";
    snprintf(buf, cap, "%.*s", (int)(e - b - 1), b + 1);
    return buf;
}

int bench_cpu_stream(FILE *o, amp_accelerator *acc, long long n, int times, int precisions)
{
    char thp[64];
    amp_accelerator_info info;
    SC(amp_accelerator_get_info(acc, &info));
    const int threads = info.compute_units > 0 ? info.compute_units : 1;
    fprintf(o, "\n## BabelStream (stream)\n\n");
    fprintf(o, "examples/stream's kernels (stream.hip) on the CPU accelerator (%d threads) against the same kernels "
               "in C + OpenMP (bench/stream_omp.c: one `omp parallel for` a kernel, static schedule, "
               "`num_threads(%d)`%s), %lld elements a array, %d iterations of BabelStream's classic run (Copy, Mul, "
               "Add, Triad, Dot) and then as many of Nstream (as examples/stream runs them), the two sides' iterations interleaved (each side first every other iteration, each after a %d ms pause, longer than idle OpenMP threads spin, and one untimed dot), each kernel timed to completion "
               "(hipamp: launch + amp_accelerator_view_wait; a dot with its result on the host). MB/s from each "
               "kernel's fastest run after the first iteration (BabelStream's figure); hipamp / OpenMP is the "
               "ratio of those, above 1 when hipamp is faster. The tiled dot is BabelStream's CUDA dot (%d "
               "tiles of %d work-items, a grid-stride loop, the partial sums added on the host); "
               "amp_transform_reduce accumulates in double, as OpenMP's dot here does (both dot rows are set "
               "against the one OpenMP dot). Both sides' arrays and dot products are checked against the "
               "iterations replayed on scalars (examples/stream/stream.c's rule). Memory: the host's transparent "
               "huge pages are `%s`; the OpenMP side's arrays are 2 MiB-aligned, as BabelStream's OpenMP version "
               "allocates them.\n\n",
            threads, threads, somp_available() ? "" : "; **no OpenMP here: one thread**", n, times, (int)WL_SETTLE_MS, 4 * threads,
            DOT_TILE, thp_mode(thp, sizeof thp));
    fprintf(o, "| kernel | precision | hipamp MB/s | C + OpenMP MB/s | hipamp / OpenMP | goal | check |\n"
               "|---|---|---:|---:|---:|---|---|\n");
    int bad = 0;
    double worst = 1e9, dot_tiled = 1e9;
    for (int fl = 0; fl < 2; ++fl) {
        if (!(precisions & (fl ? BENCH_STREAM_FLOAT : BENCH_STREAM_DOUBLE))) continue;
        prec p = {fl != 0, fl ? sizeof(float) : sizeof(double), fl ? AMP_TYPE_FLOAT32 : AMP_TYPE_FLOAT64,
                  fl ? FLT_EPSILON : DBL_EPSILON};
        int b = one_precision(o, acc, &p, n, times, threads, &worst, &dot_tiled);
        if (b < 0) return -1;
        bad += b;
    }
    const char *which = precisions == (BENCH_STREAM_DOUBLE | BENCH_STREAM_FLOAT) ? "double and float"
                        : precisions & BENCH_STREAM_FLOAT                          ? "float"
                                                                                   : "double";
    fprintf(o, "\nLowest hipamp / OpenMP of the streaming kernels (%s): %.2f (goal >= 1.0); the tiled dot: %.2f "
               "(goal >= 0.9).\n",
            which, worst, dot_tiled);
    return bad;
}
