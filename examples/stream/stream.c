/* stream.c — BabelStream's memory-bandwidth benchmark written in hipamp: Copy, Mul, Add, Triad, Dot and Nstream (kernels in stream.hip) over three arrays, each kernel timed to completion on every iteration, the results checked against the values the iterations give when replayed on scalars, BabelStream's table printed (MBytes/sec from the fastest run; min, max and average seconds, the first iteration left out).
 *
 *   stream [--arraysize N] [--numtimes K] [--float] [--device PATH] [--dot tiled|alg] [--block-size N] [--rank2] [--list]
 *
 * BabelStream's defaults: 2^25 elements, 100 iterations, doubles, a = 0.1,
 * b = 0.2, c = 0.0, scalar 0.4. Every iteration runs Copy, Mul, Add, Triad
 * and Dot (BabelStream's classic run), and then Nstream runs as many times
 * on the arrays they left (BabelStream's Nstream run, which it makes in a
 * separate invocation): with Nstream inside the loop the values would grow
 * 1.92 times an iteration, and floats overflow before 100. --device takes a hipamp device path (cpu, cuda:0, hip:0;
 * default: the library's default accelerator, so AMP_DEFAULT_ACCELERATOR
 * picks it too).
 *
 * Dot, two ways (--dot): "tiled" is BabelStream's CUDA dot (stream.hip's
 * stream_dot: 4 tiles of 1024 work-items per compute unit, a grid-stride
 * loop, one partial sum a tile, the partial sums added on the host);
 * "alg" is how a hipamp program would write it, amp_transform_reduce with
 * AMP_MAP_PRODUCT (amp_transform_reduce_with accumulating in double: for
 * float elements that is what keeps the sum within the check below; for
 * doubles it is the plain call). Either is timed with its result on the
 * host, as BabelStream's dot returns it.
 *
 * --block-size N states the threads per block of the simple kernels' launches
 * (Init, Copy, Mul, Add, Triad, Nstream) through amp_parallel_for_each_with;
 * without it the library chooses (blocks of 256). BabelStream's CUDA and
 * HIP versions use TBSIZE = 1024. The tiled Dot keeps its 1024-thread
 * tiles. On the CPU accelerator the size is checked and has no effect.
 *
 * Arrays of more than 2^31 - 1 elements (an extent's dimension is an int)
 * are rank 2, rows of 2^20 elements (the size must then be a multiple of
 * 2^20), run by stream.hip's _2d kernels; --rank2 runs that layout at any
 * size that is a multiple of 1024 (rows of 2^20 where the size allows,
 * else of 1024), to check it where the memory for 2^31 elements is not.
 *
 * Verification (BabelStream's rule, element by element and relative): the
 * iterations are replayed on three scalars in the same precision, and
 * every element x[i] of each array must be within 100 + 4 x iterations
 * machine epsilons of the element type of gold, relative to the larger of
 * |x[i]| and |gold| (a NaN fails). BabelStream 5 held the average error
 * over the elements, which lets a few hundred wrong elements of 2^25
 * through, to an absolute 100 epsilons, which values decaying over many
 * iterations pass whatever the arrays hold; the 4 epsilons an iteration
 * allow the kernels to contract a multiply and an add where the replay
 * rounds twice. Iterations that take the expected values below the
 * type's smallest normal number cannot be verified and say so. The dot
 * product's relative error must not exceed BabelStream 5's 1e-8, or,
 * where that is larger (float), the worst-case rounding of the tiled
 * kernel's order of summation, (run + log2(1024) + tiles + 2) * eps / 2
 * with run the elements one work-item adds, plus the same 4 epsilons an
 * iteration (a float sum of 2^25 products cannot be
 * held to 1e-8: float's epsilon is 1.2e-7, and the gold value itself is
 * rounded to float). The same limit holds for --dot alg, whose float sum
 * is accumulated in double. A plain float32 amp_transform_reduce is not
 * held to it: on the CPU accelerator (few tiles, so each accumulator folds
 * a long run of elements in float) it is off by about 7e-4 at 2^25
 * elements on 2 threads.
 *
 * Exit status: 0 verified, 1 verification failed, 2 usage error (the
 * message names the bad value), 3 a hipamp call failed (named, with the
 * library's message). */
#define _POSIX_C_SOURCE 200809L
#include <hipamp.h>

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern const char stream_kernels[];

enum { EXIT_VERIFY = 1, EXIT_USAGE = 2, EXIT_HIPAMP = 3 };
enum { K_COPY, K_MUL, K_ADD, K_TRIAD, K_DOT, K_NSTREAM, K_COUNT };
static const char *const labels[K_COUNT] = {"Copy", "Mul", "Add", "Triad", "Dot", "Nstream"};
/* Arrays each kernel reads or writes once per element (BabelStream's weights). */
static const int weights[K_COUNT] = {2, 2, 3, 3, 2, 4};

#define START_A 0.1
#define START_B 0.2
#define START_C 0.0
#define START_SCALAR 0.4
#define DOT_TILE 1024

#define CHECK(call)                                                                                    \
    do {                                                                                               \
        amp_status st_ = (call);                                                                       \
        if (st_ != AMP_OK) {                                                                           \
            fprintf(stderr, "stream: %s failed: %s: %s\n", #call, amp_status_name(st_), amp_last_error()); \
            return EXIT_HIPAMP;                                                                        \
        }                                                                                              \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------- options */

typedef struct options {
    long long n;
    long long times;
    bool use_float;
    bool dot_alg;
    const char *device;
    long long block_size; /* 0: the library's choice */
    bool rank2;           /* the rank-2 layout at any size */
} options;

/* The largest array size taken (3 arrays of 2^40 doubles are 26 TB: the
 * allocation says whether they fit), and the row length of rank-2 arrays. */
#define MAX_ARRAY_SIZE (1LL << 40)
#define WIDE_COLS (1LL << 20)
#define NARROW_COLS 1024LL

static void usage(FILE *f)
{
    fprintf(f, "usage: stream [--arraysize N] [--numtimes K] [--float] [--device PATH] [--dot tiled|alg] [--block-size N] [--rank2] [--list]\n"
               "  --arraysize N  elements per array, 1..%lld (default 2^25 = 33554432); past 2^31 - 1 a\n"
               "                 multiple of 2^20 (the arrays are then rank 2, rows of 2^20); also -s\n"
               "  --numtimes K   iterations, 2 or more (default 100; the first is left out of the table); also -n\n"
               "  --float        float elements instead of double\n"
               "  --device PATH  a hipamp device path (cpu, cuda:0, hip:0; default: the default accelerator)\n"
               "  --dot tiled|alg  BabelStream's tiled grid-stride kernel (default) or amp_transform_reduce\n"
               "  --block-size N threads per block of the simple kernels' launches, 1..1024 (default: the\n"
               "                 library's choice, 256; BabelStream's CUDA version uses TBSIZE 1024)\n"
               "  --rank2        rank-2 arrays (as past 2^31 - 1 elements) at a size that is a multiple of 1024\n"
               "  --list         list the accelerators and exit\n",
            MAX_ARRAY_SIZE);
}

/* A whole decimal number in lo..hi, else a message naming the option and
 * the value. */
static bool parse_count(const char *opt, const char *s, long long lo, long long hi, long long *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    /* strtoll skips leading spaces: " 12" is not a number as given. */
    if (!*s || isspace((unsigned char)*s) || *end || errno || v < lo || v > hi) {
        fprintf(stderr, "stream: %s '%s': need a whole number from %lld to %lld\n", opt, s, lo, hi);
        return false;
    }
    *out = v;
    return true;
}

/* 0: go on; else the exit status. */
static int parse(int argc, char **argv, options *o)
{
    *o = (options){1LL << 25, 100, false, false, NULL, 0, false};
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (!strcmp(a, "--arraysize") || !strcmp(a, "-s") || !strcmp(a, "--numtimes") || !strcmp(a, "-n") ||
            !strcmp(a, "--device") || !strcmp(a, "--dot") || !strcmp(a, "--block-size")) {
            if (!has_value) {
                fprintf(stderr, "stream: %s needs a value\n", a);
                return EXIT_USAGE;
            }
            const char *v = argv[++i];
            if (!strcmp(a, "--arraysize") || !strcmp(a, "-s")) {
                if (!parse_count(a, v, 1, MAX_ARRAY_SIZE, &o->n)) return EXIT_USAGE;
            } else if (!strcmp(a, "--numtimes") || !strcmp(a, "-n")) {
                if (!parse_count(a, v, 2, INT_MAX, &o->times)) return EXIT_USAGE;
            } else if (!strcmp(a, "--block-size")) {
                if (!parse_count(a, v, 1, 1024, &o->block_size)) return EXIT_USAGE;
            } else if (!strcmp(a, "--device")) {
                o->device = v;
            } else if (!strcmp(v, "tiled") || !strcmp(v, "alg")) {
                o->dot_alg = !strcmp(v, "alg");
            } else {
                fprintf(stderr, "stream: --dot '%s': need tiled or alg\n", v);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--float")) {
            o->use_float = true;
        } else if (!strcmp(a, "--rank2")) {
            o->rank2 = true;
        } else if (!strcmp(a, "--list")) {
            amp_accelerator *list[16];
            size_t count = 0;
            CHECK(amp_accelerator_list(list, 16, &count));
            for (size_t k = 0; k < count && k < 16; ++k) {
                amp_accelerator_info info;
                CHECK(amp_accelerator_get_info(list[k], &info));
                printf("%-8s %s%s\n", info.device_path, info.description, info.is_available ? "" : " (unavailable)");
            }
            return -1;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return -1;
        } else {
            fprintf(stderr, "stream: unknown option '%s'\n", a);
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (o->n > INT_MAX && o->n % WIDE_COLS) {
        fprintf(stderr, "stream: --arraysize '%lld': past 2^31 - 1 elements the arrays are rank 2, rows of 2^20: "
                        "need a multiple of %lld\n", o->n, WIDE_COLS);
        return EXIT_USAGE;
    }
    if (o->rank2 && o->n % NARROW_COLS) {
        fprintf(stderr, "stream: --rank2 with --arraysize '%lld': need a multiple of %lld\n", o->n, NARROW_COLS);
        return EXIT_USAGE;
    }
    return 0;
}

/* The arrays' extent: rank 1 up to 2^31 - 1 elements, else (or with
 * --rank2) rows of 2^20 elements, or of 1024 where the size is not a
 * multiple of 2^20 (parse checked that one of them divides it). */
static amp_extent array_shape(const options *o)
{
    if (o->n <= INT_MAX && !o->rank2) return amp_extent_1d((int)o->n);
    long long cols = o->n % WIDE_COLS == 0 ? WIDE_COLS : NARROW_COLS;
    return amp_extent_2d((int)(o->n / cols), (int)cols);
}

/* ------------------------------------------------------------ checking */

/* Replays the iterations on scalars of type T and compares (see the
 * comment at the top). Returns true when every check passed; says what
 * failed on stderr. */
#define DEFINE_CHECK(T, name, EPS, TMIN)                                                                    \
    static bool name(long long times, size_t n, const T *a, const T *b, const T *c, double sum,                \
                     double dot_tol)                                                                         \
    {                                                                                                          \
        T ga = (T)START_A, gb = (T)START_B, gc = (T)START_C, gs = 0;                                          \
        const T scalar = (T)START_SCALAR;                                                                     \
        for (long long k = 0; k < times; ++k) {                                                               \
            gc = ga;                                                                                           \
            gb = scalar * gc;                                                                                  \
            gc = ga + gb;                                                                                      \
            ga = gb + scalar * gc;                                                                             \
            gs = ga * gb * (T)n;                                                                               \
        }                                                                                                      \
        for (long long k = 0; k < times; ++k) ga += gb + scalar * gc;                                          \
        const T *arr[3] = {a, b, c};                                                                           \
        const T gold[3] = {ga, gb, gc};                                                                        \
        const char *nm = "abc";                                                                                \
        /* Values that decay to below the smallest normal number leave */                                    \
        /* nothing to tell a right result from a wrong one. */                                                \
        if (!(fabs((double)ga) >= (TMIN) && fabs((double)gb) >= (TMIN) && fabs((double)gc) >= (TMIN) &&         \
              fabs((double)gs) >= (TMIN))) {                                                                   \
            fprintf(stderr, "Validation impossible: after %lld iterations the expected values (a %g, b %g, "    \
                            "c %g, sum %g) are below the smallest normal number of the type; use fewer "       \
                            "--numtimes\n", times, (double)ga, (double)gb, (double)gc, (double)gs);              \
            return false;                                                                                      \
        }                                                                                                      \
        const double limit = (100.0 + 4.0 * (double)times) * (EPS);                                            \
        bool ok = true;                                                                                        \
        /* Every element on its own (an average let hundreds of wrong */                                     \
        /* elements through), relative to the larger of it and the */                                         \
        /* expected value; a NaN fails. */                                                                    \
        for (int v = 0; v < 3; ++v) {                                                                          \
            const double g = (double)gold[v];                                                                  \
            size_t bad = 0, first = 0;                                                                         \
            for (size_t i = 0; i < n; ++i) {                                                                   \
                const double x = (double)arr[v][i];                                                            \
                if (!(fabs(x - g) <= limit * fmax(fabs(x), fabs(g))) && bad++ == 0) first = i;                 \
            }                                                                                                  \
            if (bad) {                                                                                         \
                fprintf(stderr, "Validation failed on %c[]: %zu of %zu elements off by more than %g "          \
                                "relative; the first, %c[%zu] = %.17g, should be %.17g\n",                     \
                        nm[v], bad, n, limit, nm[v], first, (double)arr[v][first], g);                         \
                ok = false;                                                                                    \
            }                                                                                                  \
        }                                                                                                      \
        dot_tol += 4.0 * (double)times * (EPS);                                                                \
        double err_sum = fabs((sum - (double)gs) / (double)gs);                                                \
        if (!(err_sum <= dot_tol)) {                                                                           \
            fprintf(stderr, "Validation failed on sum. Relative error %g (limit %g); sum was %.15g but "       \
                            "should be %.15g\n",                                                               \
                    err_sum, dot_tol, sum, (double)gs);                                                        \
            ok = false;                                                                                        \
        }                                                                                                      \
        return ok;                                                                                             \
    }
DEFINE_CHECK(double, check_double, DBL_EPSILON, DBL_MIN)
DEFINE_CHECK(float, check_float, FLT_EPSILON, FLT_MIN)

/* ---------------------------------------------------------------- main */

typedef struct bench {
    options o;
    size_t esize;
    amp_accelerator_view *q;
    amp_kernel *k[K_COUNT], *init;
    amp_array *arr[3], *sums;
    amp_array_view *v[3], *vsums;
    int tiles;
    void *host_sums;
    amp_type type;
    amp_extent shape; /* the arrays' (array_shape) */
} bench;

/* One Dot: the tiled kernel and the partial sums added on the host (in the
 * element type, as BabelStream's dot does), or amp_transform_reduce. */
static int run_dot(bench *s, double *sum)
{
    if (s->o.dot_alg) {
        /* float elements are multiplied and added in double: a plain float32
         * amp_transform_reduce folds long runs of elements in float where
         * the accelerator has few tiles (the CPU), which at 2^25 elements
         * is off by about 7e-4 (see the top). */
        const amp_alg_options wide = {NULL, AMP_TYPE_FLOAT64};
        CHECK(amp_transform_reduce_with(s->q, amp_arg_view(s->v[0]), amp_arg_view(s->v[1]), s->type, AMP_MAP_PRODUCT,
                                        AMP_OP_SUM, &wide, sum));
        return 0;
    }
    amp_tiled_extent te;
    CHECK(amp_extent_tile_1d(amp_extent_1d(s->tiles * DOT_TILE), DOT_TILE, &te));
    amp_arg args[3] = {amp_arg_view(s->v[0]), amp_arg_view(s->v[1]), amp_arg_view(s->vsums)};
    CHECK(amp_parallel_for_each_tiled(s->q, te, s->k[K_DOT], args, 3));
    CHECK(amp_array_copy_to_host(s->sums, s->host_sums));
    if (s->o.use_float) {
        float t = 0;
        for (int i = 0; i < s->tiles; ++i) t += ((const float *)s->host_sums)[i];
        *sum = t;
    } else {
        double t = 0;
        for (int i = 0; i < s->tiles; ++i) t += ((const double *)s->host_sums)[i];
        *sum = t;
    }
    return 0;
}

/* Kernel k once, to completion. */
static int run_kernel(bench *s, int k, double *sum)
{
    amp_arg a = amp_arg_view(s->v[0]), b = amp_arg_view(s->v[1]), c = amp_arg_view(s->v[2]);
    amp_extent e = s->shape;
    const amp_launch_options lo = {(int)s->o.block_size};
    switch (k) {
    case K_COPY: CHECK(amp_parallel_for_each_with(s->q, e, s->k[k], (amp_arg[]){a, c}, 2, &lo)); break;
    case K_MUL: CHECK(amp_parallel_for_each_with(s->q, e, s->k[k], (amp_arg[]){b, c}, 2, &lo)); break;
    case K_ADD:
    case K_TRIAD:
    case K_NSTREAM: CHECK(amp_parallel_for_each_with(s->q, e, s->k[k], (amp_arg[]){a, b, c}, 3, &lo)); break;
    case K_DOT: return run_dot(s, sum);
    default: break;
    }
    CHECK(amp_accelerator_view_wait(s->q));
    return 0;
}

static int setup(bench *s, amp_accelerator *acc)
{
    const options *o = &s->o;
    amp_accelerator_info info;
    CHECK(amp_accelerator_get_info(acc, &info));
    CHECK(amp_accelerator_view_create(acc, &s->q));
    /* One source for both precisions: the element type is a compile
     * option. */
    amp_program *prog = NULL;
    amp_status st = amp_program_build(acc, stream_kernels, o->use_float ? "-DSTREAM_T=float" : "-DSTREAM_T=double", &prog);
    CHECK(st);
    static const char *const names[K_COUNT] = {"stream_copy", "stream_mul", "stream_add",
                                               "stream_triad", "stream_dot", "stream_nstream"};
    s->shape = array_shape(o);
    const char *suffix = s->shape.rank == 2 ? "_2d" : "";
    char name[64];
    for (int k = 0; k < K_COUNT; ++k) {
        snprintf(name, sizeof name, "%s%s", names[k], suffix);
        CHECK(amp_program_get_kernel(prog, name, &s->k[k]));
    }
    snprintf(name, sizeof name, "stream_init%s", suffix);
    CHECK(amp_program_get_kernel(prog, name, &s->init));
    /* The program lives until exit: its kernels are used to the end. */
    amp_extent e = s->shape;
    for (int v = 0; v < 3; ++v) {
        CHECK(amp_array_create(s->q, s->esize, e, NULL, &s->arr[v]));
        CHECK(amp_array_view_of_array(s->arr[v], &s->v[v]));
    }
    /* BabelStream's dot geometry: 4 tiles of 1024 per compute unit. */
    s->tiles = 4 * (info.compute_units > 0 ? info.compute_units : 1);
    CHECK(amp_array_create(s->q, s->esize, amp_extent_1d(s->tiles), NULL, &s->sums));
    CHECK(amp_array_view_of_array(s->sums, &s->vsums));
    s->host_sums = malloc((size_t)s->tiles * s->esize);
    if (!s->host_sums) {
        fprintf(stderr, "stream: out of host memory\n");
        return EXIT_HIPAMP;
    }
    return 0;
}

/* BabelStream's row: MB/s from the fastest run, then min, max and average
 * seconds, the first iteration left out. */
static void print_row(const char *label, double bytes, const double *t, long long times)
{
    double mn = t[1], mx = t[1], total = 0;
    for (long long i = 1; i < times; ++i) {
        mn = t[i] < mn ? t[i] : mn;
        mx = t[i] > mx ? t[i] : mx;
        total += t[i];
    }
    printf("%-12s%-12.3f%-12.5f%-12.5f%-12.5f\n", label, 1e-6 * bytes / mn, mn, mx, total / (double)(times - 1));
}

int main(int argc, char **argv)
{
    bench s;
    memset(&s, 0, sizeof s);
    int rc = parse(argc, argv, &s.o);
    if (rc) return rc < 0 ? 0 : rc;
    const options *o = &s.o;
    s.esize = o->use_float ? sizeof(float) : sizeof(double);
    s.type = o->use_float ? AMP_TYPE_FLOAT32 : AMP_TYPE_FLOAT64;

    amp_accelerator *acc = NULL;
    amp_status st = o->device ? amp_accelerator_find(o->device, &acc) : amp_accelerator_default(&acc);
    if (st != AMP_OK) {
        fprintf(stderr, "stream: --device '%s': %s: %s\n", o->device ? o->device : "default", amp_status_name(st),
                amp_last_error());
        return st == AMP_ERROR_NO_ACCELERATOR ? EXIT_USAGE : EXIT_HIPAMP;
    }
    amp_accelerator_info info;
    CHECK(amp_accelerator_get_info(acc, &info));
    if (!o->use_float && !info.supports_double_precision) {
        fprintf(stderr, "stream: %s has no double precision: run with --float\n", info.device_path);
        return EXIT_USAGE;
    }

    const double array_bytes = (double)o->n * (double)s.esize;
    printf("BabelStream\nVersion: 5.0 (its benchmark, written in hipamp)\n");
    printf("Implementation: hipamp %s on %s (%s)\n", amp_version(), info.device_path, info.description);
    printf("Running kernels %lld times\n", o->times);
    printf("Precision: %s\n", o->use_float ? "float" : "double");
    if (o->block_size)
        printf("Block size: %lld threads (simple kernels)\n", o->block_size);
    else
        printf("Block size: the library's choice (simple kernels)\n");
    printf("Array size: %.1f MB (=%.1f GB)\n", array_bytes * 1e-6, array_bytes * 1e-9);
    printf("Total size: %.1f MB (=%.1f GB)\n", 3 * array_bytes * 1e-6, 3 * array_bytes * 1e-9);
    if ((rc = setup(&s, acc))) return rc;
    if (s.shape.rank == 2)
        printf("Array shape: %d x %d (rank 2: %s)\n", s.shape.v[0], s.shape.v[1],
               o->n > INT_MAX ? "more than 2^31 - 1 elements" : "--rank2");
    if (o->dot_alg) {
        printf("Dot: amp_transform_reduce_with (AMP_MAP_PRODUCT, AMP_OP_SUM, accumulated in double)\n");
    } else {
        amp_kernel_info ki;
        CHECK(amp_kernel_get_info(s.k[K_DOT], &ki));
        printf("Dot: tiled kernel, %d tiles of %d work-items (%s)\n", s.tiles, DOT_TILE, ki.execution);
    }

    /* Init: a kernel writes the start values (BabelStream's init_arrays). */
    amp_arg init_args[6] = {amp_arg_view(s.v[0]), amp_arg_view(s.v[1]), amp_arg_view(s.v[2])};
    for (int i = 0; i < 3; ++i) {
        const double x = i == 0 ? START_A : i == 1 ? START_B : START_C;
        init_args[3 + i] = o->use_float ? amp_arg_float32((float)x) : amp_arg_float64(x);
    }
    double t0 = now_s();
    const amp_launch_options init_lo = {(int)o->block_size};
    CHECK(amp_parallel_for_each_with(s.q, s.shape, s.init, init_args, 6, &init_lo));
    CHECK(amp_accelerator_view_wait(s.q));
    double init_s = now_s() - t0;

    double *times = malloc(sizeof(double) * K_COUNT * (size_t)o->times);
    if (!times) {
        fprintf(stderr, "stream: out of host memory for the times of --numtimes %lld (%zu bytes)\n", o->times,
                sizeof(double) * K_COUNT * (size_t)o->times);
        return EXIT_HIPAMP;
    }
    /* The classic run (Copy, Mul, Add, Triad, Dot each iteration), then
     * Nstream's (see the top). */
    double sum = 0;
    for (long long it = 0; it < o->times; ++it)
        for (int k = 0; k < K_NSTREAM; ++k) {
            t0 = now_s();
            if ((rc = run_kernel(&s, k, &sum))) return rc;
            times[(size_t)k * (size_t)o->times + (size_t)it] = now_s() - t0;
        }
    for (long long it = 0; it < o->times; ++it) {
        t0 = now_s();
        if ((rc = run_kernel(&s, K_NSTREAM, &sum))) return rc;
        times[(size_t)K_NSTREAM * (size_t)o->times + (size_t)it] = now_s() - t0;
    }

    /* Read: the three arrays back to the host. */
    void *host[3];
    for (int v = 0; v < 3; ++v)
        if (!(host[v] = malloc((size_t)o->n * s.esize))) {
            fprintf(stderr, "stream: out of host memory for the check\n");
            return EXIT_HIPAMP;
        }
    t0 = now_s();
    for (int v = 0; v < 3; ++v) CHECK(amp_array_copy_to_host(s.arr[v], host[v]));
    double read_s = now_s() - t0;
    printf("Init: %.6f s (=%.3f MBytes/sec)\n", init_s, 3 * array_bytes * 1e-6 / init_s);
    printf("Read: %.6f s (=%.3f MBytes/sec)\n", read_s, 3 * array_bytes * 1e-6 / read_s);

    /* The dot's tolerance (see the top): the larger of 1e-8 and the
     * worst-case rounding of the tiled kernel's summation order. */
    const long long work_items = (long long)s.tiles * DOT_TILE;
    const double run = (double)((o->n + work_items - 1) / work_items);
    const double eps = o->use_float ? FLT_EPSILON : DBL_EPSILON;
    double dot_tol = (run + 10 + s.tiles + 2) * eps / 2;
    if (dot_tol < 1e-8) dot_tol = 1e-8;
    bool ok = o->use_float ? check_float(o->times, (size_t)o->n, host[0], host[1], host[2], sum, dot_tol)
                           : check_double(o->times, (size_t)o->n, host[0], host[1], host[2], sum, dot_tol);

    printf("%-12s%-12s%-12s%-12s%-12s\n", "Function", "MBytes/sec", "Min (sec)", "Max", "Average");
    for (int k = 0; k < K_COUNT; ++k)
        print_row(labels[k], weights[k] * array_bytes, times + (size_t)k * (size_t)o->times, o->times);
    printf("Verification: %s\n", ok ? "passed" : "FAILED");

    for (int v = 0; v < 3; ++v) {
        CHECK(amp_array_view_destroy(s.v[v]));
        CHECK(amp_array_destroy(s.arr[v]));
        free(host[v]);
    }
    CHECK(amp_array_view_destroy(s.vsums));
    CHECK(amp_array_destroy(s.sums));
    CHECK(amp_accelerator_view_destroy(s.q));
    free(s.host_sums);
    free(times);
    return ok ? 0 : EXIT_VERIFY;
}
