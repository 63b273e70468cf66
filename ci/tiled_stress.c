/* tiled_stress.c — a small threaded program over the CPU accelerator's tiled paths (loop versions and fibers), its queues (each thread also launches asynchronously on a queue of its own) and its graphs' replays (each thread replays a graph of tiled launches; then threads replay one graph at once, and recordings whose thread exited are ended by another or discarded with their view) for the tools (valgrind memcheck, ThreadSanitizer) in ci/fiber-tools.sh, and with --launches N a long run of N tiled launches in a row, synchronous and asynchronous, on both paths; Criterion-free so the tools see only hipamp. Exits non-zero on a wrong result. */
#include <hipamp.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* reverse64: loop version. reverse64_macro: the barrier sits in a macro
 * spanning several statements, which keeps it on fibers. rounds2d: a uniform
 * loop around two barriers. tile_sum: a tree reduction. */
static const char source[] =
    "AMP_TILED_KERNEL(reverse64, amp::tiled_index<64> t, amp::array_view<const int, 1> in,\n"
    "                 amp::array_view<int, 1> out)\n"
    "{\n"
    "    tile_static int s[64];\n"
    "    s[t.local[0]] = in[t.global];\n"
    "    t.barrier.wait();\n"
    "    out[t.global] = s[63 - t.local[0]];\n"
    "}\n"
    "#define PHASES(t, in, out)            \\\n"
    "    tile_static int s[64];            \\\n"
    "    s[t.local[0]] = in[t.global];     \\\n"
    "    t.barrier.wait();                 \\\n"
    "    out[t.global] = s[63 - t.local[0]];\n"
    "AMP_TILED_KERNEL(reverse64_macro, amp::tiled_index<64> t, amp::array_view<const int, 1> in,\n"
    "                 amp::array_view<int, 1> out)\n"
    "{ PHASES(t, in, out) }\n"
    "AMP_TILED_KERNEL(rounds2d, amp::tiled_index<8, 8> t, amp::array_view<int, 2> v, int rounds)\n"
    "{\n"
    "    tile_static int s[8][8];\n"
    "    const int r = t.local[0], c = t.local[1];\n"
    "    int x = v[t.global];\n"
    "    for (int k = 0; k < rounds; ++k) {\n"
    "        s[r][c] = x;\n"
    "        t.barrier.wait();\n"
    "        x = s[c][r] + k;\n"
    "        t.barrier.wait();\n"
    "    }\n"
    "    v[t.global] = x;\n"
    "}\n"
    "AMP_TILED_KERNEL(tile_sum, amp::tiled_index<128> t, amp::array_view<const int, 1> in,\n"
    "                 amp::array_view<int, 1> sums)\n"
    "{\n"
    "    tile_static int s[128];\n"
    "    const int l = t.local[0];\n"
    "    s[l] = in[t.global];\n"
    "    t.barrier.wait();\n"
    "    for (int w = 64; w > 0; w >>= 1) {\n"
    "        if (l < w) s[l] += s[l + w];\n"
    "        t.barrier.wait();\n"
    "    }\n"
    "    if (l == 0) sums[t.tile] = s[0];\n"
    "}\n"
    "AMP_TILED_KERNEL(ring4, amp::tiled_index<4> t, amp::array_view<int, 1> v)\n"
    "{\n"
    "    tile_static int s[4];\n"
    "    s[t.local[0]] = v[t.global] + 1;\n"
    "    t.barrier.wait();\n"
    "    v[t.global] = s[(t.local[0] + 1) % 4];\n"
    "}\n"
    "#define RING4(t, v)                                 \\\n"
    "    tile_static int s[4];                           \\\n"
    "    s[t.local[0]] = v[t.global] + 1;                \\\n"
    "    t.barrier.wait();                               \\\n"
    "    v[t.global] = s[(t.local[0] + 1) % 4];\n"
    "AMP_TILED_KERNEL(ring4_macro, amp::tiled_index<4> t, amp::array_view<int, 1> v)\n"
    "{ RING4(t, v) }\n"
    "AMP_KERNEL(raw_inc, amp::index<1> i, unsigned long long addr)\n"
    "{\n"
    "    int *p = reinterpret_cast<int *>(addr);\n"
    "    p[i[0]] += 1;\n"
    "}\n";

enum { N = 64 * 40, SIDE = 32, THREADS = 4, ITERS = 6 };

static amp_accelerator *acc;
static amp_program *prog;
static int failures;
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;

static void fail(const char *what, const char *detail)
{
    pthread_mutex_lock(&fail_lock);
    failures++;
    fprintf(stderr, "tiled_stress: %s: %s\n", what, detail);
    pthread_mutex_unlock(&fail_lock);
}

#define TRY(call)                                          \
    do {                                                   \
        if ((call) != AMP_OK) {                            \
            fail(#call, amp_last_error());                 \
            goto out;                                      \
        }                                                  \
    } while (0)

/* A graph of GRAPH_LAUNCHES launches of ring4 and ring4_macro over a view
 * of N ints on this thread's queue q, replayed GRAPH_REPLAYS times, every
 * fourth asynchronously: under AMP_CPU_SPIN_US the replays hand their
 * launches to a team of pool threads (lib/cpu/cpu_team.c), which join and
 * leave as launches open, while the other threads launch directly and
 * replay their own graphs. */
enum { GRAPH_LAUNCHES = 6, GRAPH_REPLAYS = 24 };
static void graph_replays(int seed, amp_accelerator_view *q)
{
    int *v = malloc(N * sizeof *v);
    amp_array_view *view = NULL;
    amp_graph *g = NULL;
    amp_kernel *k[2] = {NULL, NULL};
    amp_tiled_extent t4;
    if (!v) {
        fail("malloc", "out of memory");
        goto out;
    }
    for (int i = 0; i < N; ++i) v[i] = i * 3 + seed;
    TRY(amp_extent_tile(amp_extent_1d(N), (int[]){4}, &t4));
    TRY(amp_program_get_kernel(prog, "ring4", &k[0]));
    TRY(amp_program_get_kernel(prog, "ring4_macro", &k[1]));
    TRY(amp_array_view_create(v, sizeof(int), amp_extent_1d(N), AMP_READ_WRITE, &view));
    amp_arg a[] = {amp_arg_view(view)};
    TRY(amp_graph_begin_recording(q));
    for (int i = 0; i < GRAPH_LAUNCHES; ++i) TRY(amp_parallel_for_each_tiled(q, t4, k[i % 2], a, 1));
    TRY(amp_graph_end_recording(q, &g));
    for (int r = 0; r < GRAPH_REPLAYS; ++r) {
        if (r % 4 != 3) {
            TRY(amp_graph_launch(q, g));
            continue;
        }
        amp_future *f = NULL;
        TRY(amp_graph_launch_async(q, g, &f));
        amp_status st = amp_future_wait(f);
        amp_future_destroy(f);
        TRY(st);
    }
    TRY(amp_array_view_synchronize(view));
    const int moves = GRAPH_LAUNCHES * GRAPH_REPLAYS;
    for (int i = 0; i < N; ++i) {
        int from = i / 4 * 4 + (i % 4 + moves) % 4;
        if (v[i] != from * 3 + seed + moves) {
            fail("graph replays", "wrong result");
            goto out;
        }
    }
out:
    if (g) amp_graph_destroy(g);
    if (view) amp_array_view_destroy(view);
    free(v);
}

static void *worker(void *arg)
{
    int seed = (int)(intptr_t)arg;
    int *in = malloc(N * sizeof *in), *out = malloc(N * sizeof *out), *grid = malloc(SIDE * SIDE * sizeof *grid),
        *sums = malloc(N / 128 * sizeof *sums);
    amp_array_view *vi = NULL, *vo = NULL, *vg = NULL, *vs = NULL;
    amp_accelerator_view *q = NULL; /* this thread's queue: tile_sum runs on its thread, asynchronously */
    if (!in || !out || !grid || !sums) {
        fail("malloc", "out of memory");
        goto out;
    }
    for (int i = 0; i < N; ++i) in[i] = (i * 7919 + seed * 104729) % 100003 + 1;
    TRY(amp_accelerator_view_create(acc, &q));
    TRY(amp_array_view_create(in, sizeof(int), amp_extent_1d(N), AMP_READ_ONLY, &vi));
    TRY(amp_array_view_create(out, sizeof(int), amp_extent_1d(N), AMP_READ_WRITE, &vo));
    TRY(amp_array_view_create(grid, sizeof(int), amp_extent_2d(SIDE, SIDE), AMP_READ_WRITE, &vg));
    TRY(amp_array_view_create(sums, sizeof(int), amp_extent_1d(N / 128), AMP_READ_WRITE, &vs));
    amp_tiled_extent t64, t128, t8;
    TRY(amp_extent_tile(amp_extent_1d(N), (int[]){64}, &t64));
    TRY(amp_extent_tile(amp_extent_1d(N), (int[]){128}, &t128));
    TRY(amp_extent_tile(amp_extent_2d(SIDE, SIDE), (int[]){8, 8}, &t8));
    for (int it = 0; it < ITERS; ++it) {
        const char *rev = it % 2 ? "reverse64" : "reverse64_macro";
        amp_kernel *k = NULL;
        TRY(amp_program_get_kernel(prog, rev, &k));
        memset(out, 0, N * sizeof *out);
        TRY(amp_array_view_refresh(vo));
        amp_arg a[] = {amp_arg_view(vi), amp_arg_view(vo)};
        TRY(amp_parallel_for_each_tiled(NULL, t64, k, a, 2));
        TRY(amp_array_view_synchronize(vo));
        for (int i = 0; i < N; ++i)
            if (out[i] != in[i / 64 * 64 + 63 - i % 64]) {
                fail(rev, "wrong result");
                goto out;
            }

        for (int i = 0; i < SIDE * SIDE; ++i) grid[i] = i + seed;
        TRY(amp_array_view_refresh(vg));
        TRY(amp_program_get_kernel(prog, "rounds2d", &k));
        amp_arg b[] = {amp_arg_view(vg), amp_arg_int32(3)};
        TRY(amp_parallel_for_each_tiled(NULL, t8, k, b, 2));
        TRY(amp_array_view_synchronize(vg));
        /* three rounds: transposed within the tile an odd number of times */
        for (int r = 0; r < SIDE; ++r)
            for (int c = 0; c < SIDE; ++c) {
                int tr = r / 8 * 8 + c % 8, tc = c / 8 * 8 + r % 8;
                if (grid[r * SIDE + c] != tr * SIDE + tc + seed + 3) {
                    fail("rounds2d", "wrong result");
                    goto out;
                }
            }

        TRY(amp_program_get_kernel(prog, "tile_sum", &k));
        amp_arg c2[] = {amp_arg_view(vi), amp_arg_view(vs)};
        amp_future *f = NULL;
        TRY(amp_parallel_for_each_tiled_async(q, t128, k, c2, 2, &f));
        amp_status fst = amp_future_wait(f);
        amp_future_destroy(f);
        TRY(fst);
        TRY(amp_array_view_synchronize(vs));
        for (int t = 0; t < N / 128; ++t) {
            int want = 0;
            for (int i = 0; i < 128; ++i) want += in[t * 128 + i];
            if (sums[t] != want) {
                fail("tile_sum", "wrong result");
                goto out;
            }
        }
    }
    graph_replays(seed, q);
out:
    if (vi) amp_array_view_destroy(vi);
    if (vo) amp_array_view_destroy(vo);
    if (vg) amp_array_view_destroy(vg);
    if (vs) amp_array_view_destroy(vs);
    if (q) amp_accelerator_view_destroy(q);
    free(in);
    free(out);
    free(grid);
    free(sums);
    return NULL;
}

/* One graph shared by SHARED_THREADS threads, each replaying it
 * SHARED_REPLAYS times (every third asynchronously): its launches of
 * raw_inc write through a raw address, so no view's lock orders the
 * replays; the graph's own turns must (lib/core/graph.c). */
enum { SHARED_THREADS = 4, SHARED_REPLAYS = 12, SHARED_LAUNCHES = 3 };
static amp_graph *shared_graph;
static amp_accelerator_view *shared_q;

static void *shared_replayer(void *arg)
{
    (void)arg;
    for (int r = 0; r < SHARED_REPLAYS; ++r) {
        if (r % 3 != 2) {
            TRY(amp_graph_launch(shared_q, shared_graph));
            continue;
        }
        amp_future *f = NULL;
        TRY(amp_graph_launch_async(shared_q, shared_graph, &f));
        amp_future_destroy(f);
    }
out:
    return NULL;
}

/* A thread that begins recording on q, records a launch of raw_inc over
 * N ints at addr, and exits without ending it. */
typedef struct quitter {
    amp_accelerator_view *q;
    void *addr;
} quitter;

static void *quit_while_recording(void *arg)
{
    quitter *t = arg;
    amp_kernel *k = NULL;
    TRY(amp_program_get_kernel(prog, "raw_inc", &k));
    amp_arg a[] = {amp_arg_uint64((uint64_t)(uintptr_t)t->addr)};
    TRY(amp_graph_begin_recording(t->q));
    TRY(amp_parallel_for_each(t->q, amp_extent_1d(N), k, a, 1));
out:
    return NULL;
}

/* Threads replaying one graph at once, and recordings whose thread exited:
 * one ended by another thread (its graph is then replayed once more), one
 * discarded by destroying its view. */
static void shared_graph_run(void)
{
    amp_array *arr = NULL;
    amp_accelerator_view *q2 = NULL;
    amp_graph *orphan = NULL;
    int *x = calloc(N, sizeof *x);
    void *addr = NULL;
    pthread_t t[SHARED_THREADS];
    int started = 0;
    if (!x) {
        fail("calloc", "out of memory");
        goto out;
    }
    TRY(amp_accelerator_view_create(acc, &shared_q));
    TRY(amp_array_create(shared_q, sizeof(int), amp_extent_1d(N), x, &arr));
    TRY(amp_array_native_handle(arr, &addr));
    /* Recorded by a thread that exits: ended here. */
    quitter qt = {shared_q, addr};
    pthread_t th;
    if (pthread_create(&th, NULL, quit_while_recording, &qt) != 0) {
        fail("pthread_create", "failed");
        goto out;
    }
    pthread_join(th, NULL);
    TRY(amp_graph_end_recording(shared_q, &orphan));
    TRY(amp_graph_launch(shared_q, orphan)); /* before the threads: it writes x too */
    amp_kernel *k = NULL;
    TRY(amp_program_get_kernel(prog, "raw_inc", &k));
    amp_arg a[] = {amp_arg_uint64((uint64_t)(uintptr_t)addr)};
    TRY(amp_graph_begin_recording(shared_q));
    for (int i = 0; i < SHARED_LAUNCHES; ++i) TRY(amp_parallel_for_each(shared_q, amp_extent_1d(N), k, a, 1));
    TRY(amp_graph_end_recording(shared_q, &shared_graph));
    for (; started < SHARED_THREADS; ++started)
        if (pthread_create(&t[started], NULL, shared_replayer, NULL) != 0) {
            fail("pthread_create", "failed");
            break;
        }
    /* Recorded by a thread that exits: discarded with its view. */
    TRY(amp_accelerator_view_create(acc, &q2));
    quitter qt2 = {q2, addr};
    if (pthread_create(&th, NULL, quit_while_recording, &qt2) != 0) {
        fail("pthread_create", "failed");
        goto out;
    }
    pthread_join(th, NULL);
    amp_accelerator_view *gone = q2;
    q2 = NULL;
    TRY(amp_accelerator_view_destroy(gone));
out:
    while (started > 0) pthread_join(t[--started], NULL);
    if (shared_q && amp_accelerator_view_wait(shared_q) == AMP_OK && arr && amp_array_copy_to_host(arr, x) == AMP_OK &&
        !failures) {
        const int want = SHARED_THREADS * SHARED_REPLAYS * SHARED_LAUNCHES + 1;
        for (int i = 0; i < N; ++i)
            if (x[i] != want) {
                char what[96];
                snprintf(what, sizeof what, "x[%d] = %d, want %d", i, x[i], want);
                fail("threads replaying one graph", what);
                break;
            }
    }
    if (orphan) amp_graph_destroy(orphan);
    if (shared_graph) amp_graph_destroy(shared_graph);
    if (arr) amp_array_destroy(arr);
    if (q2) amp_accelerator_view_destroy(q2);
    if (shared_q) amp_accelerator_view_destroy(shared_q);
    free(x);
}

/* The long run: `launches` launches of one tile (4 work-items) in a row,
 * from this thread and then asynchronously on a queue, of ring4 (its loop
 * version, or fibers under AMP_CPU_TILED=fibers) and of ring4_macro (fibers:
 * its barrier is in a macro). Every launch switches onto a fiber or loop
 * stack and back; a switch the sanitizers are not told about the right way
 * piles up in their state (ThreadSanitizer's shadow stack overflowed after
 * about 16,000 such launches). Each launch moves every element one place
 * and adds one, so the end state is known. */
static void long_run(long launches)
{
    static const char *const kernels[] = {"ring4", "ring4_macro"};
    int v[4];
    amp_array_view *view = NULL;
    amp_accelerator_view *q = NULL;
    amp_future *f = NULL;
    amp_tiled_extent t4;
    TRY(amp_extent_tile(amp_extent_1d(4), (int[]){4}, &t4));
    TRY(amp_accelerator_view_create(acc, &q));
    for (int kk = 0; kk < 2; ++kk)
        for (int async = 0; async < 2; ++async) {
            amp_kernel *k = NULL;
            TRY(amp_program_get_kernel(prog, kernels[kk], &k));
            for (int i = 0; i < 4; ++i) v[i] = i;
            TRY(amp_array_view_create(v, sizeof(int), amp_extent_1d(4), AMP_READ_WRITE, &view));
            amp_arg a[] = {amp_arg_view(view)};
            for (long n = 0; n < launches; ++n) {
                if (!async) {
                    TRY(amp_parallel_for_each_tiled(NULL, t4, k, a, 1));
                    continue;
                }
                TRY(amp_parallel_for_each_tiled_async(q, t4, k, a, 1, &f));
                TRY(amp_future_destroy(f));
                f = NULL;
                if (n % 256 == 255) TRY(amp_accelerator_view_wait(q));
            }
            TRY(amp_accelerator_view_wait(q));
            TRY(amp_array_view_synchronize(view));
            TRY(amp_array_view_destroy(view));
            view = NULL;
            for (int i = 0; i < 4; ++i)
                if (v[i] != (int)((i + launches) % 4 + launches)) {
                    char what[64];
                    snprintf(what, sizeof what, "%s (%s)", kernels[kk], async ? "asynchronous" : "synchronous");
                    fail(what, "wrong result after the long run");
                    goto out;
                }
            printf("tiled_stress: %ld %s launches of %s, result right\n", launches,
                   async ? "asynchronous" : "synchronous", kernels[kk]);
        }
out:
    if (view) amp_array_view_destroy(view);
    if (q) amp_accelerator_view_destroy(q);
}

int main(int argc, char **argv)
{
    long launches = 0;
    if (argc == 3 && !strcmp(argv[1], "--launches")) {
        launches = strtol(argv[2], NULL, 10);
    } else if (argc != 1) {
        fprintf(stderr, "usage: tiled_stress [--launches N]\n");
        return 2;
    }
    if (amp_accelerator_find("cpu", &acc) != AMP_OK || amp_program_build(acc, source, NULL, &prog) != AMP_OK) {
        fprintf(stderr, "tiled_stress: cannot build: %s\n", amp_last_error());
        return 1;
    }
    if (launches > 0) {
        long_run(launches);
        amp_program_destroy(prog);
        if (failures) {
            fprintf(stderr, "tiled_stress: %d failure(s)\n", failures);
            return 1;
        }
        return 0;
    }
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; ++i)
        if (pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i) != 0) {
            fprintf(stderr, "tiled_stress: pthread_create failed\n");
            return 1;
        }
    for (int i = 0; i < THREADS; ++i) pthread_join(t[i], NULL);
    shared_graph_run();
    amp_program_destroy(prog);
    if (failures) {
        fprintf(stderr, "tiled_stress: %d failure(s)\n", failures);
        return 1;
    }
    printf("tiled_stress: %d threads x %d iterations, and %d threads replaying one graph, all results right\n", THREADS,
           ITERS, SHARED_THREADS);
    return 0;
}
