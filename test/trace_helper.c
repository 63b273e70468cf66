/* trace_helper.c — a second process for test_trace.c: a fixed workload on one accelerator (three builds, launches over views, arrays and a second queue, copies for each reason, an async copy), its statistics printed for the test to compare with the trace the library writes. */
#define _POSIX_C_SOURCE 200809L
#include <hipamp.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Usage: trace_helper DEVICE_PATH [--flush-exit] [--build-file PATH]
 *        trace_helper DEVICE_PATH [--plant-as-nobody TARGET] --flush-only [--then-build PATH]
 * Prints, one per line: "unified 0|1", "disk_cache 0|1", after each
 * amp_trace_flush "flush STATUS", then "queue default|second" followed by
 * h2d bytes, h2d copies, d2h bytes, d2h copies, d2d bytes, d2d copies, h2h
 * bytes, h2h copies, launches; "elapsed_launch_ms X", "elapsed_copy_ms X"
 * (or "unsupported"), then "ok". --flush-exit: flush after the view part,
 * print the stats and leave with _exit (no exit-time flush).
 * The trace file's rules: --plant-as-nobody first plants, as uid 65534, a
 * symbolic link to TARGET at this process's AMP_TRACE name (%p: its own
 * pid, which the test cannot know); --plant-own-as-nobody TARGET at the
 * name the library writes instead when AMP_TRACE is another process's
 * (NAME.<pid>.EXT), --plant-own-fifo-as-nobody a FIFO there; --flush-only flushes once (opening the
 * trace file), builds PATH after it with --then-build (a compiler that runs
 * then must not inherit the file), prints "ok" and exits normally.
 * --chdir DIR: goes to DIR first (after the library read AMP_TRACE at
 * load). --limited-second-flush: after the flush midway, limits the size a
 * file may grow to (RLIMIT_FSIZE, SIGXFSZ ignored) to the trace file's
 * (AMP_TRACE, no %p) plus 64 bytes, launches 20 more times, flushes again
 * (it fails: "File too large"), prints "ok" and exits normally;
 * --keep-sigxfsz with it leaves SIGXFSZ's default action (the end of the
 * process), as a program under `ulimit -f` has it. --reuse-trace-fd PATH:
 * after the flush midway, closes the trace file's descriptor (AMP_TRACE
 * without %p) as a program closing descriptors it does not own would,
 * opens PATH at its number and writes "precious\n" there, launches again,
 * flushes, prints "ok" and exits normally. --limited-first-flush: the
 * same limit as --limited-second-flush (SIGXFSZ ignored), at 300 bytes,
 * set before the flush midway (the first), which it fails; "ok" and a
 * normal exit after it.
 * Exit: 0 ok, 1 usage, 2 no accelerator, 3 build failed, 4 planting failed,
 * 5 a call failed, 6 wrong result. */

extern const char trace_helper_kernels[];

#define N 4096
#define M 1024
#define R2 32
#define C2 48

#define TRY(call)                                                                                  \
    do {                                                                                           \
        amp_status st_ = (call);                                                                   \
        if (st_ != AMP_OK) {                                                                       \
            fprintf(stderr, "trace_helper: %s: %s: %s\n", #call, amp_status_name(st_), amp_last_error()); \
            exit(5);                                                                               \
        }                                                                                          \
    } while (0)

static void fill(float *x, int n, unsigned seed)
{
    unsigned s = seed * 2654435761u + 1;
    for (int i = 0; i < n; ++i) {
        s = s * 1664525u + 1013904223u;
        /* Small integers: every result below is exact in float. */
        x[i] = (float)((int)(s >> 24) - 128);
    }
}

static int check(const float *got, const float *want, int n, const char *what)
{
    for (int i = 0; i < n; ++i)
        if (got[i] != want[i]) {
            fprintf(stderr, "trace_helper: %s: element %d is %g, want %g\n", what, i, (double)got[i], (double)want[i]);
            return 1;
        }
    return 0;
}

static void print_stats(const char *name, amp_accelerator_view *q)
{
    amp_stats s;
    TRY(amp_accelerator_view_get_stats(q, &s));
    printf("queue %s %llu %llu %llu %llu %llu %llu %llu %llu %llu\n", name, (unsigned long long)s.bytes_to_device,
           (unsigned long long)s.copies_to_device, (unsigned long long)s.bytes_to_host,
           (unsigned long long)s.copies_to_host, (unsigned long long)s.bytes_device_to_device,
           (unsigned long long)s.copies_device_to_device, (unsigned long long)s.bytes_host_to_host,
           (unsigned long long)s.copies_host_to_host, (unsigned long long)s.launches);
}

/* The attacker's link for this pid: AMP_TRACE with %p replaced (own: the
 * name the library writes instead when AMP_TRACE is another process's,
 * NAME.<pid>.EXT beside it), made by a child that became uid 65534 (root
 * only); a FIFO there instead when target is NULL. */
static int plant_as_nobody(const char *target, bool own)
{
    const char *t = getenv("AMP_TRACE");
    char path[4096];
    size_t at = 0;
    for (const char *p = t ? t : ""; *p && at + 24 < sizeof path; ++p) {
        if (p[0] == '%' && p[1] == 'p') {
            at += (size_t)snprintf(path + at, sizeof path - at, "%ld", (long)getpid());
            ++p;
        } else {
            path[at++] = *p;
        }
    }
    path[at] = '\0';
    if (own) {
        char *slash = strrchr(path, '/'), *dot = strrchr(path, '.'), ext[256];
        if (!dot || !slash || dot <= slash + 1) dot = path + at;
        snprintf(ext, sizeof ext, "%s", dot);
        snprintf(dot, sizeof path - (size_t)(dot - path), ".%ld%s", (long)getpid(), ext);
    }
    pid_t c = fork();
    if (c == 0)
        _exit(setgid(65534) == 0 && setuid(65534) == 0 && (target ? symlink(target, path) : mkfifo(path, 0666)) == 0
                  ? 0
                  : 1);
    int ws = 0;
    if (c < 0 || waitpid(c, &ws, 0) != c || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
        fprintf(stderr, "trace_helper: could not plant %s -> %s as uid 65534\n", path, target ? target : "(a FIFO)");
        return 4;
    }
    return 0;
}

static void flush(void)
{
    amp_status st = amp_trace_flush();
    printf("flush %s\n", amp_status_name(st));
    if (st != AMP_OK) fprintf(stderr, "trace_helper: amp_trace_flush: %s\n", amp_last_error());
}

/* The descriptor of the trace file AMP_TRACE names (no %p), or -1. */
static int trace_fd(void)
{
    const char *t = getenv("AMP_TRACE");
    struct stat want, st;
    if (!t || stat(t, &want) != 0) return -1;
    for (int fd = 3; fd < 1024; ++fd)
        if (fstat(fd, &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino) return fd;
    return -1;
}

int main(int argc, char **argv)
{
    const char *extra = NULL, *plant = NULL, *then_build = NULL, *go_to = NULL, *reuse_fd = NULL;
    bool flush_exit = false, flush_only = false, graph = false, limited = false, own = false, plant_fifo = false,
         keep_xfsz = false, limited_first = false;
    if (argc < 2) {
        fprintf(stderr, "usage: %s DEVICE_PATH [--flush-exit] [--graph] [--build-file PATH]\n", argv[0]);
        return 1;
    }
    for (int i = 2; i < argc; ++i) {
        if (!strcmp(argv[i], "--flush-exit")) flush_exit = true;
        else if (!strcmp(argv[i], "--build-file") && i + 1 < argc) extra = argv[++i];
        else if (!strcmp(argv[i], "--plant-as-nobody") && i + 1 < argc) plant = argv[++i];
        else if (!strcmp(argv[i], "--plant-own-as-nobody") && i + 1 < argc) plant = argv[++i], own = true;
        else if (!strcmp(argv[i], "--plant-own-fifo-as-nobody")) plant_fifo = own = true;
        else if (!strcmp(argv[i], "--flush-only")) flush_only = true;
        else if (!strcmp(argv[i], "--graph")) graph = true;
        else if (!strcmp(argv[i], "--then-build") && i + 1 < argc) then_build = argv[++i];
        else if (!strcmp(argv[i], "--chdir") && i + 1 < argc) go_to = argv[++i];
        else if (!strcmp(argv[i], "--limited-second-flush")) limited = true;
        else if (!strcmp(argv[i], "--keep-sigxfsz")) keep_xfsz = true;
        else if (!strcmp(argv[i], "--limited-first-flush")) limited_first = true;
        else if (!strcmp(argv[i], "--reuse-trace-fd") && i + 1 < argc) reuse_fd = argv[++i];
        else return 1;
    }
    if (go_to && chdir(go_to) != 0) {
        perror(go_to);
        return 1;
    }
    if (plant || plant_fifo) {
        int rc = plant_as_nobody(plant_fifo ? NULL : plant, own);
        if (rc) return rc;
    }
    amp_accelerator *acc = NULL;
    if (amp_accelerator_find(argv[1], &acc) != AMP_OK) {
        fprintf(stderr, "trace_helper: %s\n", amp_last_error());
        return 2;
    }
    amp_accelerator_info info;
    amp_cache_info ci;
    TRY(amp_accelerator_get_info(acc, &info));
    TRY(amp_cache_get_info(&ci));
    printf("unified %d\ndisk_cache %d\n", info.is_unified_memory ? 1 : 0, ci.disk_enabled ? 1 : 0);
    if (flush_only) {
        flush();
        amp_program *late = NULL;
        if (then_build && amp_program_build_file(acc, then_build, NULL, &late) != AMP_OK) {
            fprintf(stderr, "trace_helper: build: %s\n", amp_last_error());
            return 3;
        }
        TRY(amp_program_destroy(late));
        printf("ok\n");
        return 0;
    }
    amp_accelerator_view *q = NULL, *q2 = NULL;
    TRY(amp_accelerator_default_view(acc, &q));
    TRY(amp_accelerator_view_create(acc, &q2));

    /* Builds: compiled (the cache directory is fresh), a memory hit, and
     * after dropping the memory cache a disk hit. */
    amp_program *p = NULL, *p2 = NULL, *p3 = NULL, *px = NULL;
    if (amp_program_build(acc, trace_helper_kernels, NULL, &p) != AMP_OK ||
        amp_program_build(acc, trace_helper_kernels, NULL, &p2) != AMP_OK ||
        amp_cache_clear_memory() != AMP_OK || amp_program_build(acc, trace_helper_kernels, NULL, &p3) != AMP_OK ||
        (extra && amp_program_build_file(acc, extra, NULL, &px) != AMP_OK)) {
        fprintf(stderr, "trace_helper: build: %s\n", amp_last_error());
        return 3;
    }
    amp_kernel *k_scale = NULL, *k_flip = NULL, *k_add = NULL;
    TRY(amp_program_get_kernel(p, "trace_scale", &k_scale));
    TRY(amp_program_get_kernel(p, "trace_tile_flip", &k_flip));
    TRY(amp_program_get_kernel(p, "trace_add_one", &k_add));
    int bad = 0;

    if (graph) {
        /* A graph of two launches on the second queue, replayed three
         * times: three replay spans, each with its launches inside where
         * the backend times them (the CPU accelerator). */
        static float g[R2 * C2], gwant[R2 * C2], gout[R2 * C2];
        fill(g, R2 * C2, 4);
        amp_array *ga = NULL;
        amp_graph *gr = NULL;
        TRY(amp_array_create(q2, sizeof(float), amp_extent_2d(R2, C2), g, &ga));
        amp_arg ag[] = {amp_arg_array(ga)};
        TRY(amp_graph_begin_recording(q2));
        TRY(amp_parallel_for_each(q2, amp_extent_2d(R2, C2), k_add, ag, 1));
        TRY(amp_parallel_for_each(q2, amp_extent_2d(R2, C2), k_add, ag, 1));
        TRY(amp_graph_end_recording(q2, &gr));
        for (int i = 0; i < 3; ++i) TRY(amp_graph_launch(q2, gr));
        TRY(amp_array_copy_to_host(ga, gout));
        for (int i = 0; i < R2 * C2; ++i) gwant[i] = g[i] + 6.0f;
        bad |= check(gout, gwant, R2 * C2, "a + 6 after three replays of two launches");
        TRY(amp_graph_destroy(gr));
        TRY(amp_array_destroy(ga));
        flush();
        printf("graph_replays 3\n");
        fflush(stdout);
        return bad ? 6 : 0;
    }

    /* Views on the default queue: x is copied in (first use), y is write-only
     * (its copy-in is avoided), synchronize copies y back. */
    static float x[N], y[N], y2[N], want[N];
    fill(x, N, 1);
    for (int i = 0; i < N; ++i) y[i] = -777.25f;
    amp_array_view *vx = NULL, *vy = NULL;
    TRY(amp_array_view_create(x, sizeof(float), amp_extent_1d(N), AMP_READ_ONLY, &vx));
    TRY(amp_array_view_create(y, sizeof(float), amp_extent_1d(N), AMP_WRITE_ONLY, &vy));
    amp_arg a1[] = {amp_arg_view(vx), amp_arg_view(vy), amp_arg_float32(2.0f)};
    TRY(amp_parallel_for_each(q, amp_extent_1d(N), k_scale, a1, 3));
    TRY(amp_array_view_synchronize(vy));
    for (int i = 0; i < N; ++i) want[i] = 2.0f * x[i];
    bad |= check(y, want, N, "y = 2x");
    memcpy(y2, y, sizeof y);

    /* The host changes x: refresh makes the device's copy stale, so the
     * next launch copies it in again. Then discard drops y's new values
     * (their copy-back is avoided), so y keeps 2x where memory is copied. */
    for (int i = 0; i < N; ++i) x[i] += 1.0f;
    TRY(amp_array_view_refresh(vx));
    amp_arg a2[] = {amp_arg_view(vx), amp_arg_view(vy), amp_arg_float32(3.0f)};
    TRY(amp_parallel_for_each(q, amp_extent_1d(N), k_scale, a2, 3));
    TRY(amp_array_view_discard_data(vy));
    TRY(amp_array_view_synchronize(vy));
    for (int i = 0; i < N; ++i) want[i] = info.is_unified_memory ? 3.0f * x[i] : y2[i];
    bad |= check(y, want, N, info.is_unified_memory ? "y = 3x (unified: written in place)" : "y kept 2x (discarded)");

    if (flush_exit) {
        flush();
        print_stats("default", q);
        print_stats("second", q2);
        fflush(stdout);
        _exit(bad ? 6 : 0);
    }
    if (limited_first) {
        struct rlimit r = {300, 300};
        signal(SIGXFSZ, SIG_IGN);
        if (setrlimit(RLIMIT_FSIZE, &r) != 0) {
            perror("setrlimit");
            return 5;
        }
        flush();
        printf("ok\n");
        return bad ? 6 : 0;
    }
    flush();
    if (reuse_fd) {
        int tfd = trace_fd();
        int fd = tfd < 0 ? -1 : open(reuse_fd, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (tfd < 0 || fd < 0 || close(tfd) != 0 || dup2(fd, tfd) != tfd || close(fd) != 0 ||
            write(tfd, "precious\n", 9) != 9) {
            fprintf(stderr, "trace_helper: could not put %s at the trace's descriptor %d\n", reuse_fd, tfd);
            return 5;
        }
        for (int i = 0; i < 5; ++i) TRY(amp_parallel_for_each(q, amp_extent_1d(N), k_scale, a2, 3));
        flush();
        printf("ok\n");
        return bad ? 6 : 0;
    }
    if (limited) {
        struct stat st;
        const char *t = getenv("AMP_TRACE");
        if (!t || stat(t, &st) != 0) {
            fprintf(stderr, "trace_helper: no trace file %s after the first flush\n", t ? t : "(AMP_TRACE unset)");
            return 5;
        }
        struct rlimit r = {(rlim_t)st.st_size + 64, (rlim_t)st.st_size + 64};
        if (!keep_xfsz) signal(SIGXFSZ, SIG_IGN);
        if (setrlimit(RLIMIT_FSIZE, &r) != 0) {
            perror("setrlimit");
            return 5;
        }
        for (int i = 0; i < 20; ++i) TRY(amp_parallel_for_each(q, amp_extent_1d(N), k_scale, a2, 3));
        flush();
        printf("ok\n");
        return bad ? 6 : 0;
    }

    /* A tiled launch on the second queue: z copied in and, at destroy,
     * back (counted on the queue that last used it). */
    static float z[M], z0[M];
    fill(z, M, 2);
    memcpy(z0, z, sizeof z);
    amp_array_view *vz = NULL;
    TRY(amp_array_view_create(z, sizeof(float), amp_extent_1d(M), AMP_READ_WRITE, &vz));
    amp_tiled_extent te;
    TRY(amp_extent_tile_1d(amp_extent_1d(M), 64, &te));
    amp_arg a3[] = {amp_arg_view(vz)};
    TRY(amp_parallel_for_each_tiled(q2, te, k_flip, a3, 1));
    TRY(amp_array_view_destroy(vz));
    for (int i = 0; i < M; ++i) want[i] = 1.0f - z0[i];
    bad |= check(z, want, M, "z = 1 - z");

    /* Arrays on the default queue: created with data, an async launch timed
     * by its future, an async array-to-array copy, then copied out. */
    static float a[R2 * C2], out[R2 * C2];
    fill(a, R2 * C2, 3);
    amp_array *arr = NULL, *arr2 = NULL;
    TRY(amp_array_create(q, sizeof(float), amp_extent_2d(R2, C2), a, &arr));
    TRY(amp_array_create(q, sizeof(float), amp_extent_2d(R2, C2), NULL, &arr2));
    amp_arg a4[] = {amp_arg_array(arr)};
    amp_future *f = NULL, *f2 = NULL;
    TRY(amp_parallel_for_each_async(q, amp_extent_2d(R2, C2), k_add, a4, 1, &f));
    double ms = -1;
    TRY(amp_future_elapsed_ms(f, &ms));
    printf("elapsed_launch_ms %.6f\n", ms);
    TRY(amp_copy_array_async(arr, arr2, &f2));
    amp_status est = amp_future_elapsed_ms(f2, &ms);
    if (est == AMP_OK) printf("elapsed_copy_ms %.6f\n", ms);
    else if (est == AMP_ERROR_UNSUPPORTED) printf("elapsed_copy_ms unsupported\n");
    else TRY(est);
    TRY(amp_array_copy_to_host(arr2, out));
    for (int i = 0; i < R2 * C2; ++i) want[i] = a[i] + 1.0f;
    bad |= check(out, want, R2 * C2, "array + 1");

    print_stats("default", q);
    print_stats("second", q2);
    TRY(amp_future_destroy(f));
    TRY(amp_future_destroy(f2));
    TRY(amp_array_destroy(arr));
    TRY(amp_array_destroy(arr2));
    TRY(amp_array_view_destroy(vx));
    TRY(amp_array_view_destroy(vy));
    TRY(amp_accelerator_view_destroy(q2));
    TRY(amp_program_destroy(px));
    TRY(amp_program_destroy(p3));
    TRY(amp_program_destroy(p2));
    TRY(amp_program_destroy(p));
    printf("%s\n", bad ? "WRONG" : "ok");
    return bad ? 6 : 0;
}
