/* gpu_stream.c — the GPU benchmark's stream section (issue 41): BabelStream's kernels (examples/stream/stream.hip: Copy, Mul, Add, Triad, Nstream, and its tiled grid-stride Dot) through hipamp against the identical kernels launched raw (raw_gpu.h, the harness's raw_launch: the same text, grid, block and argument pack), also on hipamp's own buffers, and the dot through amp_transform_reduce against the raw tiled dot; double and float, 2^25 elements (BabelStream's size; --quick 2^22). Every result of both sides is checked against its analytic value. */
#include "gpu_harness.h"
#include "gpu_sections.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char stream_kernels[];

enum { S_COPY, S_MUL, S_ADD, S_TRIAD, S_NSTREAM, S_DOT, S_DOT_ALG, S_COUNT };
static const char *const s_names[S_COUNT] = {"Copy", "Mul", "Add", "Triad", "Nstream", "Dot (tiled)",
                                             "Dot (amp_transform_reduce)"};
static const char *const s_kernels[S_COUNT] = {"stream_copy", "stream_mul",  "stream_add", "stream_triad",
                                               "stream_nstream", "stream_dot", "stream_dot"};
/* Arrays read or written once an element (BabelStream's weights). */
static const int s_weight[S_COUNT] = {2, 2, 3, 3, 4, 2, 2};
enum { DOT_TILE = 1024 };

/* One precision's state: hipamp's arrays and the raw buffers. */
typedef struct sstate {
    bool fl;
    size_t es, n;
    int tiles;
    amp_kernel *k[S_COUNT];
    rawk rk[S_COUNT];
    amp_array *arr[3], *sums, *res;
    amp_array_view *v[3], *vsums;
    rg_ptr raw[3], rsums, hp[3], hsums; /* hp: hipamp's arrays' device addresses */
    void *host;
    long long runs_hip, runs_raw; /* Nstream launches on each side's buffers */
} sstate;

typedef struct sjob {
    sstate *s;
    int k;
    bool same; /* raw launches on hipamp's buffers */
} sjob;

static amp_status hip_run(void *p)
{
    sjob *j = p;
    sstate *s = j->s;
    amp_arg a = amp_arg_view(s->v[0]), b = amp_arg_view(s->v[1]), c = amp_arg_view(s->v[2]);
    amp_extent e = amp_extent_1d((int)s->n);
    switch (j->k) {
    case S_COPY: return amp_parallel_for_each(W.q, e, s->k[S_COPY], (amp_arg[]){a, c}, 2);
    case S_MUL: return amp_parallel_for_each(W.q, e, s->k[S_MUL], (amp_arg[]){b, c}, 2);
    case S_NSTREAM: s->runs_hip++; /* fall through */
    case S_ADD:
    case S_TRIAD: return amp_parallel_for_each(W.q, e, s->k[j->k], (amp_arg[]){a, b, c}, 3);
    case S_DOT: {
        amp_tiled_extent te;
        amp_status st = amp_extent_tile_1d(amp_extent_1d(s->tiles * DOT_TILE), DOT_TILE, &te);
        if (st != AMP_OK) return st;
        return amp_parallel_for_each_tiled(W.q, te, s->k[S_DOT], (amp_arg[]){a, b, amp_arg_view(s->vsums)}, 3);
    }
    default: {
        const amp_alg_options wide = {NULL, AMP_TYPE_FLOAT64}; /* as examples/stream --dot alg */
        return amp_transform_reduce_with_async(W.q, a, b, s->fl ? AMP_TYPE_FLOAT32 : AMP_TYPE_FLOAT64,
                                               AMP_MAP_PRODUCT, AMP_OP_SUM, &wide, amp_arg_array(s->res), NULL);
    }
    }
}

static void raw_run(void *p)
{
    sjob *j = p;
    sstate *s = j->s;
    const rg_ptr *b = j->same ? s->hp : s->raw;
    const int n = (int)s->n;
    rview a = rv1(b[0], n), bb = rv1(b[1], n), c = rv1(b[2], n);
    switch (j->k) {
    case S_COPY: raw_launch(&s->rk[S_COPY], amp_extent_1d(n), (rview[]){a, c}, 2); break;
    case S_MUL: raw_launch(&s->rk[S_MUL], amp_extent_1d(n), (rview[]){bb, c}, 2); break;
    case S_NSTREAM:
        if (j->same) s->runs_hip++;
        else s->runs_raw++;
        /* fall through */
    case S_ADD:
    case S_TRIAD: raw_launch(&s->rk[j->k], amp_extent_1d(n), (rview[]){a, bb, c}, 3); break;
    default: {
        rview sums = rv1(j->same ? s->hsums : s->rsums, s->tiles);
        raw_launch(&s->rk[S_DOT], amp_extent_1d(s->tiles * DOT_TILE), (rview[]){a, bb, sums}, 3);
        break;
    }
    }
}

/* x rounded to the element type. */
static double rt(const sstate *s, double x)
{
    return s->fl ? (double)(float)x : x;
}

/* Both sides' arrays to a, b, c (NaN poisons an output). */
static void set_all(sstate *s, double a, double b, double c)
{
    const double v[3] = {a, b, c};
    for (int w = 0; w < 3; ++w) {
        for (size_t i = 0; i < s->n; ++i) {
            if (s->fl) ((float *)s->host)[i] = (float)v[w];
            else ((double *)s->host)[i] = v[w];
        }
        AK(amp_array_copy_from_host(s->arr[w], s->host));
        rg_h2d(s->raw[w], s->host, s->n * s->es);
    }
    AK(amp_accelerator_view_wait(W.q));
    rg_sync();
}

/* hipamp's own output of kernel k, after compare(): its last batch was the
 * raw kernel run on hipamp's buffers (the same-buffers job), so the output
 * is poisoned and written again by one launch through hipamp, which the
 * checks then read. Nstream's count and amp_transform_reduce's result are
 * hipamp's already. */
static void hipamp_output_again(sstate *s, sjob *hj)
{
    const int out_of[S_COUNT] = {[S_COPY] = 2, [S_MUL] = 1, [S_ADD] = 2, [S_TRIAD] = 0, [S_DOT] = -1,
                                 [S_NSTREAM] = -2, [S_DOT_ALG] = -2};
    int w = out_of[hj->k];
    if (w == -2) return;
    size_t count = w >= 0 ? s->n : (size_t)s->tiles;
    for (size_t i = 0; i < count; ++i) {
        if (s->fl) ((float *)s->host)[i] = nanf("");
        else ((double *)s->host)[i] = nan("");
    }
    AK(amp_array_copy_from_host(w >= 0 ? s->arr[w] : s->sums, s->host));
    AK(hip_run(hj));
    AK(amp_accelerator_view_wait(W.q));
}

/* Every element of array w (hipamp's, or the raw buffer) within rel of
 * want (relative; exactly want when rel is 0). */
static bool check_array(sstate *s, int w, bool raw, double want, double rel)
{
    if (raw) {
        rg_sync();
        rg_d2h(s->host, s->raw[w], s->n * s->es);
    } else {
        AK(amp_array_copy_to_host(s->arr[w], s->host));
    }
    for (size_t i = 0; i < s->n; ++i) {
        double x = s->fl ? (double)((const float *)s->host)[i] : ((const double *)s->host)[i];
        if (!(fabs(x - want) <= rel * fabs(want))) return false;
    }
    return true;
}

/* The partial sums (hipamp's, or the raw buffer), added in double. */
static double dot_of(sstate *s, bool raw)
{
    if (raw) {
        rg_sync();
        rg_d2h(s->host, s->rsums, (size_t)s->tiles * s->es);
    } else {
        AK(amp_array_copy_to_host(s->sums, s->host));
    }
    double t = 0;
    for (int i = 0; i < s->tiles; ++i) t += s->fl ? (double)((const float *)s->host)[i] : ((const double *)s->host)[i];
    return t;
}

static rg_ptr native_of(amp_array *a)
{
    void *p = NULL;
    AK(amp_array_native_handle(a, &p));
    return (rg_ptr)(uintptr_t)p;
}

static double worst_ratio = 1e9, worst_same = 1e9;
static char worst_what[96];

static void one_precision(bool fl, size_t n)
{
    sstate s;
    memset(&s, 0, sizeof s);
    s.fl = fl;
    s.es = fl ? sizeof(float) : sizeof(double);
    s.n = n;
    amp_accelerator_info info;
    AK(amp_accelerator_get_info(W.acc, &info));
    s.tiles = 4 * (info.compute_units > 0 ? info.compute_units : 1); /* BabelStream's dot geometry */
    /* One text for both sides: the element type ahead of the kernels. */
    const char *head = fl ? "#define STREAM_T float\n" : "#define STREAM_T double\n";
    size_t len = strlen(head) + strlen(stream_kernels) + 1;
    char *src = malloc(len);
    if (!src) die("out of memory");
    snprintf(src, len, "%s%s", head, stream_kernels);
    amp_program *prog;
    AK(amp_program_build(W.acc, src, NULL, &prog)); /* kept to exit: its kernels are timed below */
    void *mod = raw_build(src, NULL);
    free(src);
    for (int k = 0; k < S_COUNT; ++k) {
        AK(amp_program_get_kernel(prog, s_kernels[k], &s.k[k]));
        raw_kernel(mod, s_kernels[k], &s.rk[k]);
    }
    amp_extent e = amp_extent_1d((int)n);
    for (int w = 0; w < 3; ++w) {
        AK(amp_array_create(W.q, s.es, e, NULL, &s.arr[w]));
        AK(amp_array_view_of_array(s.arr[w], &s.v[w]));
        s.raw[w] = rg_alloc(n * s.es);
        s.hp[w] = native_of(s.arr[w]);
    }
    AK(amp_array_create(W.q, s.es, amp_extent_1d(s.tiles), NULL, &s.sums));
    AK(amp_array_view_of_array(s.sums, &s.vsums));
    AK(amp_array_create(W.q, sizeof(double), amp_extent_1d(1), NULL, &s.res));
    s.rsums = rg_alloc((size_t)s.tiles * s.es);
    s.hsums = native_of(s.sums);
    if (!(s.host = malloc(n * s.es))) die("out of host memory (%zu bytes)", n * s.es);

    const double A = 0.1, B = 0.2, C = 0.3, X = rt(&s, 0.4), NaN = nan("");
    const double eps = fl ? FLT_EPSILON : DBL_EPSILON;
    for (int k = 0; k < S_COUNT; ++k) {
        /* Inputs at A, B, C and the output poisoned; Nstream (a += b + x c)
         * from a = 0, b = 1, c = 0, where every run adds exactly 1 on both
         * sides (x c is 0 with or without a fused multiply-add), so that
         * a holds the count of runs exactly. */
        switch (k) {
        case S_COPY: set_all(&s, A, B, NaN); break;
        case S_MUL: set_all(&s, A, NaN, C); break;
        case S_ADD: set_all(&s, A, B, NaN); break;
        case S_TRIAD: set_all(&s, NaN, B, C); break;
        case S_NSTREAM: set_all(&s, 0, 1, 0); break;
        default: set_all(&s, A, B, C); break;
        }
        s.runs_hip = s.runs_raw = 0;
        sjob hj = {&s, k, false}, rj = {&s, k, false}, sj = {&s, k, true};
        hrun h = {hip_run, &hj};
        /* amp_transform_reduce is set against the raw tiled dot. */
        if (k == S_DOT_ALG) rj.k = sj.k = S_DOT;
        cmp c = compare(&h, raw_run, &rj, &sj, 0.05);
        hipamp_output_again(&s, &hj);
        /* The checks: each output against the value its inputs give (one
         * rounding in the element type, a fused multiply-add allowed:
         * within 4 eps), both sides. */
        bool ok = true;
        double dot_h = 0, dot_r = 0;
        switch (k) {
        case S_COPY: ok = check_array(&s, 2, false, rt(&s, A), 0) && check_array(&s, 2, true, rt(&s, A), 0); break;
        case S_MUL: {
            double want = rt(&s, X * rt(&s, C));
            ok = check_array(&s, 1, false, want, 4 * eps) && check_array(&s, 1, true, want, 4 * eps);
            break;
        }
        case S_ADD: {
            double want = rt(&s, rt(&s, A) + rt(&s, B));
            ok = check_array(&s, 2, false, want, 4 * eps) && check_array(&s, 2, true, want, 4 * eps);
            break;
        }
        case S_TRIAD: {
            double want = rt(&s, rt(&s, B) + X * rt(&s, C));
            ok = check_array(&s, 0, false, want, 4 * eps) && check_array(&s, 0, true, want, 4 * eps);
            break;
        }
        case S_NSTREAM:
            ok = check_array(&s, 0, false, (double)s.runs_hip, 0) && check_array(&s, 0, true, (double)s.runs_raw, 0);
            break;
        default: {
            /* n a b; within examples/stream's limit for the tiled order
             * (1e-8, or its worst-case rounding where larger). */
            const double want = (double)n * rt(&s, A) * rt(&s, B);
            const double items = (double)s.tiles * DOT_TILE;
            double tol = (ceil((double)n / items) + 10 + s.tiles + 2) * eps / 2;
            if (tol < 1e-8) tol = 1e-8;
            if (k == S_DOT) {
                dot_h = dot_of(&s, false);
            } else {
                AK(amp_array_copy_to_host(s.res, &dot_h));
            }
            dot_r = dot_of(&s, true);
            ok = fabs(dot_h - want) <= tol * want && fabs(dot_r - want) <= tol * want;
            break;
        }
        }
        if (!ok) failures++;
        const double bytes = (double)s_weight[k] * (double)n * (double)s.es;
        const double ratio = c.raw_s / c.amp_s, same = c.same_s / c.amp_s;
        char what[96];
        snprintf(what, sizeof what, "%s %s", s_names[k], fl ? "float" : "double");
        if (k != S_DOT_ALG && ratio < worst_ratio) {
            worst_ratio = ratio;
            snprintf(worst_what, sizeof worst_what, "%s", what);
        }
        if (k != S_DOT_ALG && same < worst_same) worst_same = same;
        out("| %s | %s | %9.4f | %9.4f | %8.1f | %8.1f | **%.3f** | %.3f | %s |\n", s_names[k], fl ? "float" : "double",
            c.amp_s * 1e3, c.raw_s * 1e3, bytes / c.amp_s / 1e9, bytes / c.raw_ev_s / 1e9, ratio, same,
            ok ? "passed" : "FAILED");
        if (k <= S_DOT) {
            char panel[48];
            snprintf(panel, sizeof panel, "stream %s (GB/s)", fl ? "float" : "double");
            chart(panel, s_names[k], "hipamp", bytes / c.amp_s / 1e9, "GB/s");
            chart(panel, s_names[k], "raw", bytes / c.raw_s / 1e9, "GB/s");
        }
    }
    for (int w = 0; w < 3; ++w) {
        AK(amp_array_view_destroy(s.v[w]));
        AK(amp_array_destroy(s.arr[w]));
        rg_free(s.raw[w]);
    }
    AK(amp_array_view_destroy(s.vsums));
    AK(amp_array_destroy(s.sums));
    AK(amp_array_destroy(s.res));
    rg_free(s.rsums);
    free(s.host);
}

void stream_report(void)
{
    const size_t n = quick ? (size_t)1 << 22 : (size_t)1 << 25;
    out("\n## BabelStream (stream)\n\n");
    out("examples/stream's kernels (stream.hip, BabelStream's: Copy, Mul, Add, Triad, Nstream and its CUDA dot: "
        "%d tiles of %d work-items a compute unit, a grid-stride loop, one partial sum a tile) on 2^%d elements, through hipamp against the identical launch through %s (same text, grid, block "
        "and argument pack), batches timed as in the kernels table; GB/s counts BabelStream's bytes (Copy and "
        "Mul 2, Add and Triad 3, Nstream 4, Dot 2 arrays); raw GB/s is from %s events. The Dot rows time the "
        "kernel alone (partial sums left on the device); amp_transform_reduce (accumulating in double, result "
        "on the device) is set against the raw tiled dot. Checked, both sides: each output against the value "
        "its inputs give, Nstream's a against the count of its runs (from a = 0, b = 1, c = 0: exact), the "
        "dots against n a b.\n\n",
        4, DOT_TILE, quick ? 22 : 25, rg.launch, rg.events);
    out("| kernel | precision | hipamp ms | raw ms | hipamp GB/s | raw GB/s (events) | hipamp/raw | hipamp/raw, same "
        "buffers | check |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n");
    worst_ratio = worst_same = 1e9;
    one_precision(false, n);
    one_precision(true, n);
    add_goal(worst_ratio >= 0.98, "stream: every BabelStream kernel vs the raw launch, double and float (lowest)",
             ">= 0.98", "", "%.3f (%s; same buffers lowest %.3f)", worst_ratio, worst_what, worst_same);
}
