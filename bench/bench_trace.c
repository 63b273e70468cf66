/* bench_trace.c — what the trace costs: launch overhead (wall clock per launch, many launches between two waits) of the library with its trace hooks compiled in but tracing off, of the same sources built with the hooks compiled out (-DHIPAMP_TRACE=OFF), and with AMP_TRACE on; the three libraries loaded side by side with dlopen in one process and measured in interleaved rounds, results checked. */
#define _GNU_SOURCE
#include <hipamp.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef HIPAMP_LIB_HOOKS
#error "HIPAMP_LIB_HOOKS (the library, hooks compiled in) must be defined by the build"
#endif
#ifndef HIPAMP_LIB_NOHOOKS
#error "HIPAMP_LIB_NOHOOKS (the library built with the hooks compiled out) must be defined by the build"
#endif

/* The calls made through each library (dlsym: this program links none). */
#define BT_API(X)                                                                                  \
    X(amp_accelerator_find) X(amp_accelerator_get_info) X(amp_accelerator_default_view)            \
    X(amp_program_build) X(amp_program_get_kernel) X(amp_program_destroy) X(amp_array_view_create) \
    X(amp_array_view_synchronize) X(amp_array_view_destroy) X(amp_parallel_for_each)               \
    X(amp_accelerator_view_wait) X(amp_trace_flush) X(amp_last_error) X(amp_status_name)

static const char bt_kernel[] =
    "AMP_KERNEL(bt_saxpy, amp::index<1> i, amp::array_view<const float, 1> x,\n"
    "           amp::array_view<const float, 1> y, amp::array_view<float, 1> z)\n"
    "{ z[i] = 2.0f * x[i] + y[i]; }\n";

#define MAX_ROUNDS 101
#define MAX_N 4096

typedef struct variant {
    const char *label, *path;
    void *h;
#define BT_FIELD(name) __typeof__(&name) name;
    BT_API(BT_FIELD)
#undef BT_FIELD
    amp_accelerator_view *q;
    amp_program *p;
    amp_kernel *k;
    amp_array_view *vx, *vy, *vz;
    int n; /* elements */
    float x[MAX_N], y[MAX_N], z[MAX_N];
    double us[MAX_ROUNDS];
} variant;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "bench_trace: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

#define VK(v, call)                                                                                   \
    do {                                                                                              \
        amp_status s_ = (v)->call;                                                                    \
        if (s_ != AMP_OK) die("%s: %s: %s: %s", (v)->label, #call, (v)->amp_status_name(s_), (v)->amp_last_error()); \
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

static double median(const double *v, int n)
{
    double s[MAX_ROUNDS];
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* amp_extent_1d without calling into a library. */
static amp_extent ext1(int n)
{
    amp_extent e;
    memset(&e, 0, sizeof e);
    e.rank = 1;
    e.v[0] = n;
    return e;
}

/* A private copy of the library file, so that the loader maps it again
 * (its own globals, its own environment read at load). */
static void copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY | O_CLOEXEC), out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
    if (in < 0 || out < 0) die("cannot copy %s to %s: %s", from, to, strerror(errno));
    char buf[1 << 16];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n) die("cannot write %s: %s", to, strerror(errno));
    close(in);
    close(out);
}

static void load(variant *v, const char *accel, int n)
{
    /* RTLD_LOCAL: each copy binds its own symbols, the calls inside it included. */
    v->h = dlopen(v->path, RTLD_NOW | RTLD_LOCAL);
    if (!v->h) die("dlopen %s: %s", v->path, dlerror());
#define BT_SYM(name)                                                                    \
    if (!(*(void **)&v->name = dlsym(v->h, #name))) die("%s: no symbol %s", v->path, #name);
    BT_API(BT_SYM)
#undef BT_SYM
    amp_accelerator *acc = NULL;
    VK(v, amp_accelerator_find(accel, &acc));
    VK(v, amp_accelerator_default_view(acc, &v->q));
    VK(v, amp_program_build(acc, bt_kernel, NULL, &v->p));
    VK(v, amp_program_get_kernel(v->p, "bt_saxpy", &v->k));
    v->n = n;
    for (int i = 0; i < n; ++i) {
        v->x[i] = (float)(i % 97) - 48.0f;
        v->y[i] = (float)(i % 31) * 0.5f;
        v->z[i] = -777.25f;
    }
    VK(v, amp_array_view_create(v->x, sizeof(float), ext1(n), AMP_READ_ONLY, &v->vx));
    VK(v, amp_array_view_create(v->y, sizeof(float), ext1(n), AMP_READ_ONLY, &v->vy));
    VK(v, amp_array_view_create(v->z, sizeof(float), ext1(n), AMP_READ_WRITE, &v->vz));
}

/* Seconds per launch over a batch: resident views, n launches between two
 * waits on the queue. */
static double batch(variant *v, int n)
{
    amp_arg a[3] = {{.kind = AMP_ARG_VIEW, .u.view = v->vx}, {.kind = AMP_ARG_VIEW, .u.view = v->vy},
                    {.kind = AMP_ARG_VIEW, .u.view = v->vz}};
    const amp_extent e = ext1(v->n);
    VK(v, amp_accelerator_view_wait(v->q));
    double t0 = now_s();
    for (int i = 0; i < n; ++i) VK(v, amp_parallel_for_each(v->q, e, v->k, a, 3));
    VK(v, amp_accelerator_view_wait(v->q));
    return (now_s() - t0) / n;
}

static bool check(variant *v)
{
    VK(v, amp_array_view_synchronize(v->vz));
    for (int i = 0; i < v->n; ++i)
        if (v->z[i] != 2.0f * v->x[i] + v->y[i]) return false;
    return true;
}

/* Paired per-round differences a - b: median and the median absolute
 * deviation around it (the noise the verdict is judged against). */
static void paired(const variant *a, const variant *b, int rounds, double *med, double *mad)
{
    double d[MAX_ROUNDS], dev[MAX_ROUNDS];
    for (int r = 0; r < rounds; ++r) d[r] = a->us[r] - b->us[r];
    *med = median(d, rounds);
    for (int r = 0; r < rounds; ++r) dev[r] = fabs(d[r] - *med);
    *mad = median(dev, rounds);
}

static long count_launch_events(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long n = 0;
    char line[4096];
    while (fgets(line, sizeof line, f)) n += strstr(line, "\"cat\":\"launch\"") != NULL;
    fclose(f);
    return n;
}

int main(int argc, char **argv)
{
    const char *accel = "cpu";
    int rounds = 31, n = 0, elements = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--accelerator") && i + 1 < argc) accel = argv[++i];
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc) n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--elements") && i + 1 < argc) elements = atoi(argv[++i]);
        else {
            printf("usage: %s [--accelerator PATH] [--rounds N] [--batch N] [--elements N]\n"
                   "  Launch overhead of libhipamp with the trace hooks in (tracing off), the same\n"
                   "  sources built with the hooks compiled out, and with AMP_TRACE on; interleaved\n"
                   "  rounds in one process. Lines starting \"row\" and \"diff\" are tab-separated for\n"
                   "  bench_gpu. Default accelerator: cpu. Elements a view (at most %d): 64 on the CPU\n"
                   "  accelerator (one chunk, run by the calling thread: the launch path alone),\n"
                   "  4096 on a GPU.\n",
                   argv[0], MAX_N);
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    if (rounds < 3) rounds = 3;
    if (rounds > MAX_ROUNDS) rounds = MAX_ROUNDS;
    /* This program decides where tracing is on. */
    static const char *const vars[] = {"AMP_TRACE", "AMP_TRACE_SUMMARY", "AMP_TRACE_VENDOR", "NVTX_INJECTION64_PATH",
                                       "HSA_TOOLS_LIB", "ROCP_TOOL_LIB", "ROCP_TOOL_LIBRARIES"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; ++i) unsetenv(vars[i]);
    setenv("AMP_TRACE_VENDOR", "0", 1);

    char dir[] = "/tmp/hipamp-bench-trace-XXXXXX";
    if (!mkdtemp(dir)) die("mkdtemp: %s", strerror(errno));
    char traced[sizeof dir + 32], trace[sizeof dir + 32];
    snprintf(traced, sizeof traced, "%s/libhipamp-traced.so", dir);
    snprintf(trace, sizeof trace, "%s/trace.json", dir);
    copy_file(HIPAMP_LIB_HOOKS, traced);

    static variant v[3];
    v[0].label = "hooks in, tracing off";
    v[0].path = HIPAMP_LIB_HOOKS;
    v[1].label = "hooks compiled out";
    v[1].path = HIPAMP_LIB_NOHOOKS;
    v[2].label = "AMP_TRACE on";
    v[2].path = traced;
    /* The size, from the accelerator's kind (asked through a library that
     * traces nothing). */
    amp_accelerator *acc = NULL;
    amp_accelerator_info info;
    {
        void *h = dlopen(HIPAMP_LIB_NOHOOKS, RTLD_NOW | RTLD_LOCAL);
        if (!h) die("dlopen %s: %s", HIPAMP_LIB_NOHOOKS, dlerror());
        __typeof__(&amp_accelerator_find) find;
        __typeof__(&amp_accelerator_get_info) get_info;
        *(void **)&find = dlsym(h, "amp_accelerator_find");
        *(void **)&get_info = dlsym(h, "amp_accelerator_get_info");
        if (!find || !get_info || find(accel, &acc) != AMP_OK || get_info(acc, &info) != AMP_OK)
            die("no accelerator %s", accel);
        if (!info.is_available) die("%s is unavailable: %s", accel, info.unavailable_reason);
    }
    if (elements <= 0) elements = info.is_emulated ? 64 : MAX_N;
    if (elements > MAX_N) elements = MAX_N;
    load(&v[0], accel, elements);
    load(&v[1], accel, elements);
    setenv("AMP_TRACE", trace, 1);
    load(&v[2], accel, elements);
    unsetenv("AMP_TRACE");
    /* Warm up each (copies in, code paths, clocks), then size the batch to
     * about 20 ms. */
    for (int k = 0; k < 3; ++k) batch(&v[k], 50);
    if (n <= 0) {
        double t = batch(&v[0], 200);
        n = t > 0 ? (int)(0.02 / t) : 1000;
        if (n < 50) n = 50;
        if (n > 2000) n = 2000; /* the traced copy writes every launch */
    }
    long traced_launches = 50;
    for (int r = 0; r < rounds; ++r)
        for (int j = 0; j < 3; ++j) {
            int k = (r + j) % 3; /* rotate the order: drift hits all alike */
            v[k].us[r] = batch(&v[k], n) * 1e6;
            if (k == 2) {
                traced_launches += n;
                /* Outside the timed batch, as a program would between phases:
                 * keeps the buffer (and the device events it holds) small. */
                VK(&v[2], amp_trace_flush());
            }
        }
    bool ok[3];
    for (int k = 0; k < 3; ++k) ok[k] = check(&v[k]);
    VK(&v[2], amp_trace_flush());
    long events = count_launch_events(trace);

    printf("trace hooks: launch overhead on %s (%s), 3 resident views of %d floats, %d launches a batch, %d "
           "interleaved rounds\n",
           info.device_path, info.description, elements, n, rounds);
    for (int k = 0; k < 3; ++k) {
        double mn = v[k].us[0], mx = v[k].us[0];
        for (int r = 1; r < rounds; ++r) {
            if (v[k].us[r] < mn) mn = v[k].us[r];
            if (v[k].us[r] > mx) mx = v[k].us[r];
        }
        printf("  %-24s %9.3f us per launch (median; rounds %.3f .. %.3f)  %s\n", v[k].label, median(v[k].us, rounds),
               mn, mx, ok[k] ? "results ok" : "WRONG RESULTS");
        printf("row\t%s\t%.4f\t%.4f\t%.4f\t%d\t%s\n", v[k].label, median(v[k].us, rounds), mn, mx, n,
               ok[k] ? "passed" : "FAILED");
    }
    double d_off, mad_off, d_on, mad_on, base = median(v[1].us, rounds);
    paired(&v[0], &v[1], rounds, &d_off, &mad_off);
    paired(&v[2], &v[1], rounds, &d_on, &mad_on);
    /* "Equal": the paired difference is within the rounds' own scatter
     * (twice the median absolute deviation) or below 1%. */
    bool equal = fabs(d_off) <= 2 * mad_off || fabs(d_off) <= 0.01 * base;
    printf("  hooks in, tracing off - hooks compiled out: %+.3f us per launch (%+.2f%%), noise +-%.3f us: %s\n", d_off,
           100 * d_off / base, 2 * mad_off, equal ? "equal within noise" : "DIFFERENT");
    printf("  AMP_TRACE on - hooks compiled out: %+.3f us per launch (%+.2f%%), noise +-%.3f us; %ld launch events "
           "written for %ld launches\n",
           d_on, 100 * d_on / base, 2 * mad_on, events, traced_launches);
    printf("diff\toff\t%.4f\t%.3f\t%.4f\t%s\n", d_off, 100 * d_off / base, 2 * mad_off, equal ? "equal" : "different");
    printf("diff\ton\t%.4f\t%.3f\t%.4f\t%ld/%ld\n", d_on, 100 * d_on / base, 2 * mad_on, events, traced_launches);
    for (int k = 0; k < 3; ++k) {
        VK(&v[k], amp_array_view_destroy(v[k].vx));
        VK(&v[k], amp_array_view_destroy(v[k].vy));
        VK(&v[k], amp_array_view_destroy(v[k].vz));
        VK(&v[k], amp_program_destroy(v[k].p));
    }
    unlink(trace);
    unlink(traced);
    rmdir(dir);
    bool all = ok[0] && ok[1] && ok[2] && events == traced_launches;
    if (events != traced_launches) printf("  !! the trace holds %ld launch events, want %ld\n", events, traced_launches);
    return all ? 0 : 1;
}
