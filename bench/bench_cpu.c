/* bench_cpu.c — measures the CPU accelerator side by side: nanoseconds per fiber switch at a tile barrier, a barrier-free element-wise kernel against the same loop in plain C on as many pthreads, and the seed tiled 16x16 matmul against the simple one, every result checked against a reference; then what the trace hooks cost per launch (bench_trace). */
#define _GNU_SOURCE
#include <hipamp.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern const char bench_seeds_source[];

static const char bench_kernels[] =
    "AMP_TILED_KERNEL(barrier_spin, amp::tiled_index<256> t, amp::array_view<int, 1> out, int steps)\n"
    "{\n"
    "    int v = 0;\n"
    "    for (int s = 0; s < steps; ++s) { v += s; t.barrier.wait(); }\n"
    "    out[t.global] = v;\n"
    "}\n"
    "AMP_KERNEL(saxpy, amp::index<1> i, float a, amp::array_view<const float, 1> x,\n"
    "           amp::array_view<float, 1> y)\n"
    "{ y[i] = a * x[i] + y[i]; }\n";

#define RUNS 7
#define WARMUP 2

static int failures;

#define CHECK(call)                                                                           \
    do {                                                                                      \
        amp_status st_ = (call);                                                              \
        if (st_ != AMP_OK) {                                                                  \
            fprintf(stderr, "bench_cpu: %s failed: %s: %s\n", #call, amp_status_name(st_),    \
                    amp_last_error());                                                        \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void verdict(const char *what, bool ok)
{
    if (!ok) {
        failures++;
        printf("  !! %s: WRONG RESULT\n", what);
    }
}

/* ------------------------------------------------------ fiber switches */

static void bench_switch(amp_kernel *k, int threads)
{
    const int tiles = 64, steps = 400, n = 256 * tiles;
    int *out = malloc((size_t)n * sizeof *out);
    amp_array_view *v = NULL;
    CHECK(amp_array_view_create(out, sizeof(int), amp_extent_1d(n), AMP_WRITE_ONLY, &v));
    amp_tiled_extent te;
    CHECK(amp_extent_tile(amp_extent_1d(n), (int[]){256}, &te));
    amp_arg a[] = {amp_arg_view(v), amp_arg_int32(steps)};
    double t[RUNS];
    for (int r = -WARMUP; r < RUNS; ++r) {
        double t0 = now_s();
        CHECK(amp_parallel_for_each_tiled(NULL, te, k, a, 2));
        CHECK(amp_array_view_synchronize(v));
        if (r >= 0) t[r] = now_s() - t0;
    }
    bool ok = true;
    for (int i = 0; i < n; ++i) ok &= out[i] == steps * (steps - 1) / 2;
    verdict("barrier_spin", ok);
    double med = median(t, RUNS), switches = (double)n * steps;
    /* Each thread switches its own tiles: cost per switch on one thread. */
    printf("fiber switch at a barrier : %6.1f ns per switch per thread  (%d tiles x 256 work-items x "
           "%d barriers, %d threads, %.1f ms)\n",
           med * 1e9 * threads / switches, tiles, steps, threads, med * 1e3);
    CHECK(amp_array_view_destroy(v));
    free(out);
}

/* ---------------------------------------------------------------- saxpy */

/* The plain-C reference: persistent threads (as the accelerator's pool is)
 * that start and finish each run on a pthread barrier, each taking one
 * contiguous slice. */
typedef struct saxpy_ref {
    pthread_barrier_t start, done;
    int threads;
    bool quit;
    float a;
    const float *x;
    float *y;
    size_t n;
} saxpy_ref;

typedef struct saxpy_arg { saxpy_ref *r; int t; } saxpy_arg;

static void saxpy_slice(saxpy_ref *r, int t)
{
    size_t lo = r->n * (size_t)t / (size_t)r->threads, hi = r->n * (size_t)(t + 1) / (size_t)r->threads;
    const float *restrict x = r->x;
    float *restrict y = r->y;
    const float a = r->a;
    for (size_t i = lo; i < hi; ++i) y[i] = a * x[i] + y[i];
}

static void *saxpy_thread(void *arg)
{
    saxpy_arg *sa = arg;
    for (;;) {
        pthread_barrier_wait(&sa->r->start);
        if (sa->r->quit) return NULL;
        saxpy_slice(sa->r, sa->t);
        pthread_barrier_wait(&sa->r->done);
    }
}

static void saxpy_plain(saxpy_ref *r)
{
    pthread_barrier_wait(&r->start);
    saxpy_slice(r, 0);
    pthread_barrier_wait(&r->done);
}

static void bench_saxpy(amp_kernel *k, int threads)
{
    const size_t n = (size_t)1 << 24;
    const float a = 2.0f;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *y2 = malloc(n * sizeof *y2);
    if (!x || !y || !y2) {
        fprintf(stderr, "bench_cpu: out of memory\n");
        exit(1);
    }
    /* Small integers: every sum is exact, so the check is exact. */
    for (size_t i = 0; i < n; ++i) {
        x[i] = (float)(i % 17);
        y[i] = y2[i] = (float)(i % 5);
    }
    amp_array_view *vx = NULL, *vy = NULL;
    CHECK(amp_array_view_create(x, sizeof(float), amp_extent_1d((int)n), AMP_READ_ONLY, &vx));
    CHECK(amp_array_view_create(y, sizeof(float), amp_extent_1d((int)n), AMP_READ_WRITE, &vy));
    amp_arg args[] = {amp_arg_float32(a), amp_arg_view(vx), amp_arg_view(vy)};
    saxpy_ref ref = {.threads = threads, .a = a, .x = x, .y = y2, .n = n};
    pthread_t tid[1024];
    saxpy_arg targ[1024];
    pthread_barrier_init(&ref.start, NULL, (unsigned)threads);
    pthread_barrier_init(&ref.done, NULL, (unsigned)threads);
    for (int t = 1; t < threads; ++t) {
        targ[t] = (saxpy_arg){&ref, t};
        if (pthread_create(&tid[t], NULL, saxpy_thread, &targ[t]) != 0) {
            fprintf(stderr, "bench_cpu: pthread_create failed\n");
            exit(1);
        }
    }
    double ta[RUNS], tc[RUNS];
    /* Interleaved, so drift in the machine's speed hits both alike. */
    for (int r = -WARMUP; r < RUNS; ++r) {
        double t0 = now_s();
        CHECK(amp_parallel_for_each(NULL, amp_extent_1d((int)n), k, args, 3));
        CHECK(amp_array_view_synchronize(vy));
        double t1 = now_s();
        saxpy_plain(&ref);
        double t2 = now_s();
        if (r >= 0) {
            ta[r] = t1 - t0;
            tc[r] = t2 - t1;
        }
    }
    ref.quit = true;
    pthread_barrier_wait(&ref.start);
    for (int t = 1; t < threads; ++t) pthread_join(tid[t], NULL);
    pthread_barrier_destroy(&ref.start);
    pthread_barrier_destroy(&ref.done);
    bool ok = true;
    const float runs = (float)(RUNS + WARMUP);
    for (size_t i = 0; i < n && ok; ++i) {
        float want = (float)(i % 5) + runs * a * (float)(i % 17);
        ok = y[i] == want && y2[i] == want;
    }
    verdict("saxpy", ok);
    double ma = median(ta, RUNS), mc = median(tc, RUNS);
    double gbs = 3.0 * 4.0 * (double)n / 1e9;
    printf("saxpy, 2^24 floats        : accelerator %6.2f ms (%.1f GB/s) | plain C, %d pthreads %6.2f ms "
           "(%.1f GB/s) | ratio %.2f (goal <= 1.5)\n",
           ma * 1e3, gbs / ma, threads, mc * 1e3, gbs / mc, ma / mc);
    CHECK(amp_array_view_destroy(vx));
    CHECK(amp_array_view_destroy(vy));
    free(x);
    free(y);
    free(y2);
}

/* --------------------------------------------------------------- matmul */

static double time_matmul(amp_kernel *k, bool tiled, amp_array_view *va, amp_array_view *vb,
                          amp_array_view *vc, int n)
{
    amp_arg a[] = {amp_arg_view(va), amp_arg_view(vb), amp_arg_view(vc)};
    amp_tiled_extent te;
    CHECK(amp_extent_tile(amp_extent_2d(n, n), (int[]){16, 16}, &te));
    double t[RUNS];
    for (int r = -WARMUP; r < RUNS; ++r) {
        double t0 = now_s();
        if (tiled) CHECK(amp_parallel_for_each_tiled(NULL, te, k, a, 3));
        else CHECK(amp_parallel_for_each(NULL, amp_extent_2d(n, n), k, a, 3));
        CHECK(amp_array_view_synchronize(vc));
        if (r >= 0) t[r] = now_s() - t0;
    }
    return median(t, RUNS);
}

static bool matmul_ok(const float *c, const float *ref, int n)
{
    for (int i = 0; i < n * n; ++i) {
        float d = c[i] - ref[i];
        if (d < 0) d = -d;
        if (d > 1e-3f * (1.0f + (ref[i] < 0 ? -ref[i] : ref[i]))) return false;
    }
    return true;
}

static void bench_matmul(amp_kernel *tiled, amp_kernel *simple)
{
    const int n = 512;
    size_t nn = (size_t)n * n;
    float *A = malloc(nn * 4), *B = malloc(nn * 4), *C = malloc(nn * 4), *R = calloc(nn, 4);
    if (!A || !B || !C || !R) {
        fprintf(stderr, "bench_cpu: out of memory\n");
        exit(1);
    }
    uint32_t s = 12345;
    for (size_t i = 0; i < nn; ++i) {
        s = s * 1664525u + 1013904223u;
        A[i] = (float)(s >> 8) / 16777216.0f - 0.5f;
        s = s * 1664525u + 1013904223u;
        B[i] = (float)(s >> 8) / 16777216.0f - 0.5f;
    }
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < n; ++k)
            for (int j = 0; j < n; ++j) R[(size_t)i * n + j] += A[(size_t)i * n + k] * B[(size_t)k * n + j];
    amp_array_view *va = NULL, *vb = NULL, *vc = NULL;
    CHECK(amp_array_view_create(A, 4, amp_extent_2d(n, n), AMP_READ_ONLY, &va));
    CHECK(amp_array_view_create(B, 4, amp_extent_2d(n, n), AMP_READ_ONLY, &vb));
    CHECK(amp_array_view_create(C, 4, amp_extent_2d(n, n), AMP_WRITE_ONLY, &vc));
    memset(C, 0, nn * 4);
    double tt = time_matmul(tiled, true, va, vb, vc, n);
    verdict("matmul_tiled16", matmul_ok(C, R, n));
    memset(C, 0, nn * 4);
    double ts = time_matmul(simple, false, va, vb, vc, n);
    verdict("matmul_simple", matmul_ok(C, R, n));
    double flops = 2.0 * n * n * (double)n;
    printf("matmul 512x512            : tiled 16x16 %6.1f ms (%.2f GFLOP/s) | simple %6.1f ms (%.2f GFLOP/s) "
           "| tiled/simple %.2f\n",
           tt * 1e3, flops / tt / 1e9, ts * 1e3, flops / ts / 1e9, tt / ts);
    CHECK(amp_array_view_destroy(va));
    CHECK(amp_array_view_destroy(vb));
    CHECK(amp_array_view_destroy(vc));
    free(A);
    free(B);
    free(C);
    free(R);
}

/* ------------------------------------------------------- trace hooks */

/* Launch overhead with the trace hooks in but off, built without them, and
 * with AMP_TRACE on: bench_trace (beside this program) loads the three
 * libraries side by side; its summary lines are shown here. */
static void bench_trace_hooks(void)
{
    char self[4096], cmd[4200];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash) return;
    snprintf(slash + 1, sizeof self - (size_t)(slash + 1 - self), "bench_trace");
    if (access(self, X_OK) != 0) {
        printf("trace hooks              : bench_trace was not built beside bench_cpu\n");
        return;
    }
    snprintf(cmd, sizeof cmd, "'%s' --accelerator cpu 2>&1", self);
    FILE *f = popen(cmd, "r");
    if (!f) return;
    char line[1024];
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "row\t", 4) && strncmp(line, "diff\t", 5)) printf("%s", line);
    if (pclose(f) != 0) {
        failures++;
        printf("  !! bench_trace failed\n");
    }
}

int main(void)
{
    amp_accelerator *acc = NULL;
    CHECK(amp_accelerator_find("cpu", &acc));
    amp_accelerator_info info;
    CHECK(amp_accelerator_get_info(acc, &info));
    if (!info.is_available) {
        fprintf(stderr, "bench_cpu: CPU accelerator unavailable: %s\n", info.unavailable_reason);
        return 1;
    }
    printf("hipamp %s, CPU accelerator: %s, %s\n", amp_version(), info.description, info.arch);
    double t0 = now_s();
    amp_program *p = NULL, *seeds = NULL;
    CHECK(amp_program_build(acc, bench_kernels, NULL, &p));
    CHECK(amp_program_build(acc, bench_seeds_source, NULL, &seeds));
    printf("build (compile or cache)  : %.0f ms for 2 programs\n", (now_s() - t0) * 1e3);
    amp_kernel *spin = NULL, *saxpy = NULL, *mt = NULL, *ms = NULL;
    CHECK(amp_program_get_kernel(p, "barrier_spin", &spin));
    CHECK(amp_program_get_kernel(p, "saxpy", &saxpy));
    CHECK(amp_program_get_kernel(seeds, "matmul_tiled16", &mt));
    CHECK(amp_program_get_kernel(seeds, "matmul_simple", &ms));
    int threads = info.compute_units;
    if (threads < 1 || threads > 1024) threads = 1;
    bench_switch(spin, threads);
    bench_saxpy(saxpy, threads);
    bench_matmul(mt, ms);
    CHECK(amp_program_destroy(p));
    CHECK(amp_program_destroy(seeds));
    bench_trace_hooks();
    if (failures) printf("%d result check(s) FAILED\n", failures);
    else printf("all results checked against references: ok\n");
    return failures ? 1 : 0;
}
