/* workloads.c — the study's transpose and matmul variants through hipamp, their CPU references and checks, random data, poison, and timing (see workloads.h). */
#define _POSIX_C_SOURCE 200809L
#include "workloads.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const tnames[WL_T_COUNT] = {
    "transpose simple", "transpose tiled pad", "transpose tiled truncate",
    "transpose sections", "transpose tuned 32x32"};
static const char *const tkernels[WL_T_COUNT] = {
    "transpose_simple", "transpose_tiled_pad", "transpose_tiled_truncate",
    "transpose_tiled_even", "transpose_tuned"};
static const char *const mnames[WL_M_COUNT] = {
    "matmul serial (host)", "matmul simple", "matmul tiled 16x16", "matmul tuned 8x8/thread"};
static const char *const mkernels[WL_M_COUNT] = {NULL, "matmul_simple", "matmul_tiled16", "matmul_tuned"};

const char *wl_tvariant_name(wl_tvariant v) { return v < WL_T_COUNT ? tnames[v] : "?"; }
const char *wl_tvariant_kernel(wl_tvariant v) { return v < WL_T_COUNT ? tkernels[v] : NULL; }
const char *wl_mvariant_name(wl_mvariant v) { return v < WL_M_COUNT ? mnames[v] : "?"; }
const char *wl_mvariant_kernel(wl_mvariant v) { return v < WL_M_COUNT ? mkernels[v] : NULL; }

const char wl_seed_transpose_source[] =
    "AMP_TILED_KERNEL(transpose_tiled_even, amp::tiled_index<16, 16> tidx,\n"
    "                 amp::array_view<const float, 2> A, amp::array_view<float, 2> At)\n"
    "{\n"
    "    tile_static float t1[16][16];\n"
    "    t1[tidx.local[1]][tidx.local[0]] = A[tidx.global];\n"
    "    tidx.barrier.wait();\n"
    "    amp::index<2> dst = amp::index<2>(tidx.tile_origin[1], tidx.tile_origin[0]) + tidx.local;\n"
    "    At[dst] = t1[tidx.local[0]][tidx.local[1]];\n"
    "}\n";

/* Index of each kernel in wl_ctx.tk / .mk. */
enum { TK_SIMPLE, TK_PAD, TK_EVEN, TK_TRUNCATE, TK_TUNED };
enum { MK_SIMPLE, MK_TILED, MK_TUNED };

#define WL_TRY(call)                                                                        \
    do {                                                                                    \
        amp_status st_ = (call);                                                            \
        if (st_ != AMP_OK) {                                                                \
            fprintf(stderr, "%s:%d: %s: %s\n  %s\n", __FILE__, __LINE__, #call,             \
                    amp_status_name(st_), amp_last_error());                                \
            return st_;                                                                     \
        }                                                                                   \
    } while (0)

double wl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void wl_settle(void)
{
    struct timespec ts = {WL_SETTLE_MS / 1000, (long)(WL_SETTLE_MS % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

amp_status wl_open(wl_ctx *c, amp_accelerator *acc)
{
    memset(c, 0, sizeof *c);
    if (!acc) WL_TRY(amp_accelerator_default(&acc));
    c->acc = acc;
    WL_TRY(amp_accelerator_get_info(acc, &c->info));
    WL_TRY(amp_accelerator_default_view(acc, &c->q));
    double t0 = wl_now();
    WL_TRY(amp_program_build(acc, wl_transpose_source, NULL, &c->tprog));
    WL_TRY(amp_program_build(acc, wl_matmul_source, NULL, &c->mprog));
    c->build_s = wl_now() - t0;
    static const char *const tk[5] = {"transpose_simple", "transpose_tiled_pad", "transpose_tiled_even",
                                      "transpose_tiled_truncate", "transpose_tuned"};
    static const char *const mk[3] = {"matmul_simple", "matmul_tiled16", "matmul_tuned"};
    for (int i = 0; i < 5; ++i) WL_TRY(amp_program_get_kernel(c->tprog, tk[i], &c->tk[i]));
    for (int i = 0; i < 3; ++i) WL_TRY(amp_program_get_kernel(c->mprog, mk[i], &c->mk[i]));
    WL_TRY(amp_program_get_kernel(c->tprog, "saxpy3", &c->saxpy3));
    return AMP_OK;
}

void wl_close(wl_ctx *c)
{
    amp_program_destroy(c->tprog);
    amp_program_destroy(c->mprog);
    memset(c, 0, sizeof *c);
}

amp_tiled_extent wl_tuned_transpose_domain(int M, int N)
{
    amp_tiled_extent t;
    memset(&t, 0, sizeof t);
    t.extent = amp_extent_2d((M + 31) / 32 * 8, (N + 31) / 32 * 32);
    t.tile[0] = 8;
    t.tile[1] = 32;
    return t;
}

amp_tiled_extent wl_tuned_matmul_domain(int M, int N)
{
    amp_tiled_extent t;
    memset(&t, 0, sizeof t);
    t.extent = amp_extent_2d((M + 127) / 128 * 16, (N + 127) / 128 * 16);
    t.tile[0] = 16;
    t.tile[1] = 16;
    return t;
}

/* ------------------------------------------------------------- transpose */

amp_status wl_tjob_init(wl_tjob *j, wl_ctx *c, wl_tvariant v, float *a, float *at, int M, int N)
{
    memset(j, 0, sizeof *j);
    j->c = c;
    j->v = v;
    j->M = M;
    j->N = N;
    WL_TRY(amp_array_view_create(a, sizeof(float), amp_extent_2d(M, N), AMP_READ_ONLY, &j->A));
    WL_TRY(amp_array_view_create(at, sizeof(float), amp_extent_2d(N, M), AMP_READ_WRITE, &j->At));
    if (v != WL_T_SECTIONS) return AMP_OK;

    /* Divide and conquer: the divisible core (tiled, no guards), the right
     * strip of columns tn..N-1 and the bottom strip of rows tm..M-1 under
     * the core (simple model): one to three launches. */
    const int tm = M / 16 * 16, tn = N / 16 * 16;
    amp_array_view **s = j->sec;
    if (tm > 0 && tn > 0) {
        WL_TRY(amp_array_view_section(j->A, amp_index_2d(0, 0), amp_extent_2d(tm, tn), &s[0]));
        WL_TRY(amp_array_view_section(j->At, amp_index_2d(0, 0), amp_extent_2d(tn, tm), &s[1]));
        const int tile[2] = {16, 16};
        WL_TRY(amp_extent_tile(amp_extent_2d(tm, tn), tile, &j->core));
        j->nparts = 1;
        if (tn < N) {
            WL_TRY(amp_array_view_section(j->A, amp_index_2d(0, tn), amp_extent_2d(M, N - tn), &s[2]));
            WL_TRY(amp_array_view_section(j->At, amp_index_2d(tn, 0), amp_extent_2d(N - tn, M), &s[3]));
            j->nparts = 2;
        }
        if (tm < M) {
            int k = 2 * j->nparts;
            WL_TRY(amp_array_view_section(j->A, amp_index_2d(tm, 0), amp_extent_2d(M - tm, tn), &s[k]));
            WL_TRY(amp_array_view_section(j->At, amp_index_2d(0, tm), amp_extent_2d(tn, M - tm), &s[k + 1]));
            j->nparts++;
        }
    }
    return AMP_OK;
}

int wl_tjob_launches(const wl_tjob *j)
{
    if (j->v != WL_T_SECTIONS) return 1;
    return j->nparts ? j->nparts : 1;
}

amp_status wl_tjob_run(wl_tjob *j)
{
    wl_ctx *c = j->c;
    amp_arg args[2] = {amp_arg_view(j->A), amp_arg_view(j->At)};
    const int tile16[2] = {16, 16};
    amp_tiled_extent t;
    switch (j->v) {
    case WL_T_SIMPLE:
        return amp_parallel_for_each(c->q, amp_extent_2d(j->M, j->N), c->tk[TK_SIMPLE], args, 2);
    case WL_T_PAD:
        WL_TRY(amp_extent_tile(amp_extent_2d(j->M, j->N), tile16, &t));
        WL_TRY(amp_tiled_extent_pad(t, &t));
        return amp_parallel_for_each_tiled(c->q, t, c->tk[TK_PAD], args, 2);
    case WL_T_TRUNCATE:
        WL_TRY(amp_extent_tile(amp_extent_2d(j->M, j->N), tile16, &t));
        WL_TRY(amp_tiled_extent_truncate(t, &t));
        return amp_parallel_for_each_tiled(c->q, t, c->tk[TK_TRUNCATE], args, 2);
    case WL_T_SECTIONS:
        if (!j->nparts) return amp_parallel_for_each(c->q, amp_extent_2d(j->M, j->N), c->tk[TK_SIMPLE], args, 2);
        for (int p = 0; p < j->nparts; ++p) {
            amp_arg sa[2] = {amp_arg_view(j->sec[2 * p]), amp_arg_view(j->sec[2 * p + 1])};
            if (p == 0) {
                WL_TRY(amp_parallel_for_each_tiled(c->q, j->core, c->tk[TK_EVEN], sa, 2));
            } else {
                amp_extent e;
                WL_TRY(amp_array_view_get_extent(j->sec[2 * p], &e));
                WL_TRY(amp_parallel_for_each(c->q, e, c->tk[TK_SIMPLE], sa, 2));
            }
        }
        return AMP_OK;
    case WL_T_TUNED:
        return amp_parallel_for_each_tiled(c->q, wl_tuned_transpose_domain(j->M, j->N), c->tk[TK_TUNED], args, 2);
    default:
        return AMP_ERROR_INVALID_ARGUMENT;
    }
}

amp_status wl_tjob_fini(wl_tjob *j)
{
    amp_status st = AMP_OK, s;
    for (int i = 5; i >= 0; --i)
        if ((s = amp_array_view_destroy(j->sec[i])) != AMP_OK && st == AMP_OK) st = s;
    if ((s = amp_array_view_destroy(j->At)) != AMP_OK && st == AMP_OK) st = s;
    if ((s = amp_array_view_destroy(j->A)) != AMP_OK && st == AMP_OK) st = s;
    memset(j, 0, sizeof *j);
    return st;
}

/* ---------------------------------------------------------------- matmul */

amp_status wl_mjob_init(wl_mjob *j, wl_ctx *c, wl_mvariant v, float *a, float *b, float *cc, int M, int N, int K)
{
    memset(j, 0, sizeof *j);
    j->c = c;
    j->v = v;
    j->M = M;
    j->N = N;
    j->K = K;
    WL_TRY(amp_array_view_create(a, sizeof(float), amp_extent_2d(M, K), AMP_READ_ONLY, &j->A));
    WL_TRY(amp_array_view_create(b, sizeof(float), amp_extent_2d(K, N), AMP_READ_ONLY, &j->B));
    WL_TRY(amp_array_view_create(cc, sizeof(float), amp_extent_2d(M, N), AMP_READ_WRITE, &j->C));
    return AMP_OK;
}

amp_status wl_mjob_run(wl_mjob *j)
{
    wl_ctx *c = j->c;
    amp_arg args[3] = {amp_arg_view(j->A), amp_arg_view(j->B), amp_arg_view(j->C)};
    const int tile16[2] = {16, 16};
    amp_tiled_extent t;
    switch (j->v) {
    case WL_M_SIMPLE:
        return amp_parallel_for_each(c->q, amp_extent_2d(j->M, j->N), c->mk[MK_SIMPLE], args, 3);
    case WL_M_TILED:
        WL_TRY(amp_extent_tile(amp_extent_2d(j->M, j->N), tile16, &t));
        WL_TRY(amp_tiled_extent_pad(t, &t));
        return amp_parallel_for_each_tiled(c->q, t, c->mk[MK_TILED], args, 3);
    case WL_M_TUNED:
        return amp_parallel_for_each_tiled(c->q, wl_tuned_matmul_domain(j->M, j->N), c->mk[MK_TUNED], args, 3);
    default:
        return AMP_ERROR_INVALID_ARGUMENT;
    }
}

amp_status wl_mjob_fini(wl_mjob *j)
{
    amp_status st = AMP_OK, s;
    if ((s = amp_array_view_destroy(j->C)) != AMP_OK) st = s;
    if ((s = amp_array_view_destroy(j->B)) != AMP_OK && st == AMP_OK) st = s;
    if ((s = amp_array_view_destroy(j->A)) != AMP_OK && st == AMP_OK) st = s;
    memset(j, 0, sizeof *j);
    return st;
}

/* ----------------------------------------------------- data and checks */

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

uint64_t wl_seed(void)
{
    const char *env = getenv("HIPAMP_SEED");
    if (env && *env) return strtoull(env, NULL, 0) | 1;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t s = ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 40);
    return s | 1;
}

void wl_fill_random(float *x, size_t n, uint64_t *state)
{
    for (size_t i = 0; i < n; ++i) {
        /* 24 random bits -> (-1, 1) in steps of 2^-23, skipping 0 */
        int32_t r = (int32_t)(xorshift(state) >> 40) - (1 << 23);
        if (r == 0) r = 1;
        x[i] = (float)r * (1.0f / 8388608.0f);
    }
}

void wl_poison(float *x, size_t n)
{
    const uint32_t bits = 0x7fc0dead; /* a quiet NaN */
    for (size_t i = 0; i < n; ++i) memcpy(&x[i], &bits, 4);
}

void wl_matmul_serial(const float *a, const float *b, float *c, int M, int N, int K)
{
    for (int i = 0; i < M; ++i) {
        float *ci = c + (size_t)i * N;
        for (int j = 0; j < N; ++j) ci[j] = 0.0f;
        for (int k = 0; k < K; ++k) {
            const float aik = a[(size_t)i * K + k];
            const float *bk = b + (size_t)k * N;
            for (int j = 0; j < N; ++j) ci[j] += aik * bk[j];
        }
    }
}

size_t wl_check_transpose(const float *a, const float *at, int M, int N, size_t *first)
{
    size_t bad = 0;
    if (first) *first = (size_t)-1;
    /* 64x64 blocks: both matrices are walked cache-friendly. */
    for (int i0 = 0; i0 < M; i0 += 64)
        for (int j0 = 0; j0 < N; j0 += 64) {
            const int i1 = i0 + 64 < M ? i0 + 64 : M, j1 = j0 + 64 < N ? j0 + 64 : N;
            for (int j = j0; j < j1; ++j)
                for (int i = i0; i < i1; ++i) {
                    size_t d = (size_t)j * M + i;
                    if (!(at[d] == a[(size_t)i * N + j])) {
                        if (first && d < *first) *first = d;
                        bad++;
                    }
                }
        }
    return bad;
}

/* Reference for one element in double: value and sum of |terms|. */
static void ref_elem(const float *a, const float *b, int N, int K, int i, int j, double *v, double *absv)
{
    double s = 0, t = 0;
    for (int k = 0; k < K; ++k) {
        double p = (double)a[(size_t)i * K + k] * (double)b[(size_t)k * N + j];
        s += p;
        t += fabs(p);
    }
    *v = s;
    *absv = t;
}

static bool elem_ok(float got, double v, double absv, int K, double *max_err)
{
    double tol = (4.0 * sqrt((double)K) + 16.0) * 6e-8 * absv + 1e-6;
    if (!isfinite(got)) return false;
    double err = fabs((double)got - v);
    if (max_err && absv > 0 && err / absv > *max_err) *max_err = err / absv;
    return err <= tol;
}

size_t wl_check_matmul(const float *a, const float *b, const float *c, int M, int N, int K,
                       double full_limit, int samples, uint64_t *state, double *max_err)
{
    size_t bad = 0;
    if (max_err) *max_err = 0;
    if ((double)M * N * K <= full_limit) {
        double *ref = calloc((size_t)N, sizeof *ref), *abs = calloc((size_t)N, sizeof *abs);
        if (!ref || !abs) {
            free(ref);
            free(abs);
            return (size_t)M * N;
        }
        for (int i = 0; i < M; ++i) {
            memset(ref, 0, (size_t)N * sizeof *ref);
            memset(abs, 0, (size_t)N * sizeof *abs);
            for (int k = 0; k < K; ++k) {
                const double aik = a[(size_t)i * K + k];
                const float *bk = b + (size_t)k * N;
                for (int j = 0; j < N; ++j) {
                    double p = aik * (double)bk[j];
                    ref[j] += p;
                    abs[j] += fabs(p);
                }
            }
            for (int j = 0; j < N; ++j)
                if (!elem_ok(c[(size_t)i * N + j], ref[j], abs[j], K, max_err)) bad++;
        }
        free(ref);
        free(abs);
        return bad;
    }
    /* Every element written (poison is NaN) ... */
    for (size_t i = 0; i < (size_t)M * N; ++i)
        if (!isfinite(c[i])) bad++;
    /* ... and right at random places and along the last row and column,
     * where the edge blocks are. */
    double v, av;
    for (int s = 0; s < samples; ++s) {
        int i = (int)(xorshift(state) % (uint64_t)M), j = (int)(xorshift(state) % (uint64_t)N);
        ref_elem(a, b, N, K, i, j, &v, &av);
        if (!elem_ok(c[(size_t)i * N + j], v, av, K, max_err)) bad++;
    }
    for (int j = 0; j < N; j += (N > 4096 ? 7 : 1)) {
        ref_elem(a, b, N, K, M - 1, j, &v, &av);
        if (!elem_ok(c[(size_t)(M - 1) * N + j], v, av, K, max_err)) bad++;
    }
    for (int i = 0; i < M; i += (M > 4096 ? 7 : 1)) {
        ref_elem(a, b, N, K, i, N - 1, &v, &av);
        if (!elem_ok(c[(size_t)i * N + N - 1], v, av, K, max_err)) bad++;
    }
    return bad;
}

/* ---------------------------------------------------------------- timing */

static int dcmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

double wl_median(double *x, int n)
{
    if (n <= 0) return -1;
    qsort(x, (size_t)n, sizeof *x, dcmp);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

double wl_time(wl_run_fn run, void *job, amp_accelerator_view *q, double budget_s, int *runs, amp_status *st)
{
    *runs = 0;
    double t0 = wl_now();
    if ((*st = run(job)) != AMP_OK || (*st = amp_accelerator_view_wait(q)) != AMP_OK) return -1;
    double tw = wl_now() - t0;
    /* Slow runs: a single timed run after the warm-up. */
    if (tw > 0.4 * budget_s) {
        t0 = wl_now();
        if ((*st = run(job)) != AMP_OK || (*st = amp_accelerator_view_wait(q)) != AMP_OK) return -1;
        *runs = 1;
        return wl_now() - t0;
    }
    enum { BATCHES = 5 };
    double per = budget_s / BATCHES;
    int n = tw > 0 ? (int)(per / tw) : 1000;
    if (n < 1) n = 1;
    if (n > 1000) n = 1000;
    double t[BATCHES];
    for (int b = 0; b < BATCHES; ++b) {
        t0 = wl_now();
        for (int i = 0; i < n; ++i)
            if ((*st = run(job)) != AMP_OK) return -1;
        if ((*st = amp_accelerator_view_wait(q)) != AMP_OK) return -1;
        t[b] = (wl_now() - t0) / n;
        *runs += n;
    }
    return wl_median(t, BATCHES);
}
