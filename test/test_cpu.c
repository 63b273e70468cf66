/* test_cpu.c — behaviours only the CPU accelerator has: debug-mode bounds checks and divergent-barrier reports on both tile paths (loop versions and fibers), a missing compiler, compile errors with user line numbers, user options (optimisation levels below -O2; options it cannot honour refused), compile time-outs that leave no process or file behind, a fiber build made after a stuck loop transformation kept out of the disk cache, temporary directories of dead processes swept, the tile_static and tile-size limits, thread-count independence, the restrict path against the plain one, the pool's spin-then-sleep hand-offs under launches back to back and apart, a view's wait and its blocking launches, synchronous replays and copies not held up by another thread's later launches, fiber stacks of exited threads mapped again, direct launches on learned widths, and the HIP device vocabulary of its prelude. ; a forked child launching after an idle pool, after a fork in the middle of a tiled launch on fibers, and waiting for a queue forked before the pool first ran; the compiler's process and environment: a program that ignores SIGCHLD or reaps every child, a relative AMP_CXX after a chdir, DEPENDENCIES_OUTPUT, the program's descriptors, a fork on another thread during a build. */
#include "stderr_capture.h"
#include "support.h"

#include <hipamp_algorithms.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Settings are read once per process, on the first hipamp call; Criterion
 * runs each test in its own process, so each test sets what it needs first.
 * TEST_BOTH_WAYS(name, suffix, var, value) defines cpu/name and
 * cpu/name<suffix> (with var=value), one body; BOTH_PATHS(name): cpu/name
 * (tiled kernels on their loop versions) and cpu/name_fibers
 * (AMP_CPU_TILED=fibers). */
#define TEST_BOTH_WAYS(name, suffix, var, value, ...)                            \
    static void name##_body(void);                                                \
    Test(cpu, name, ##__VA_ARGS__) { name##_body(); }                             \
    Test(cpu, name##suffix, ##__VA_ARGS__) {                                      \
        setenv(var, value, 1);                                                    \
        name##_body();                                                            \
    }                                                                             \
    static void name##_body(void)
#define BOTH_PATHS(name, ...) TEST_BOTH_WAYS(name, _fibers, "AMP_CPU_TILED", "fibers", ##__VA_ARGS__)

static const char cpu_kernels[] =
    "AMP_KERNEL(oob_write, amp::index<1> i, float scale, amp::array_view<float, 1> v)\n"
    "{ v[i + 3] = scale * (float)i[0]; }\n"
    "AMP_TILED_KERNEL(oob_read_2d, amp::tiled_index<4, 4> t, amp::array_view<const int, 2> in,\n"
    "                 amp::array_view<int, 2> out)\n"
    "{ out[t.global] = in(t.global[0], t.global[1] + (t.global[0] == 5 ? 4 : 0)); }\n"
    /* A section reaching 5 elements past the view: in range for itself. */
    "AMP_KERNEL(oob_section, amp::index<1> i, amp::array_view<float, 1> v)\n"
    "{ v.section(amp::index<1>(5), v.extent)[i] = 1.0f; }\n"
    "AMP_KERNEL(in_bounds, amp::index<2> i, amp::array_view<const float, 2> a,\n"
    "           amp::array_view<float, 2> b)\n"
    "{ b[i] = a[i[0]][i[1]] + a(i) + a.section(amp::index<2>(i[0], 0))[amp::index<2>(0, i[1])]; }\n"
    /* Reversal of each tile through tile_static: wrong without the barrier. */
    "AMP_TILED_KERNEL(reverse_tile, amp::tiled_index<64> t, amp::array_view<const int, 1> in,\n"
    "                 amp::array_view<int, 1> out)\n"
    "{\n"
    "    tile_static int s[64];\n"
    "    s[t.local[0]] = in[t.global];\n"
    "    t.barrier.wait();\n"
    "    out[t.global] = s[63 - t.local[0]];\n"
    "}\n"
    "AMP_TILED_KERNEL(reverse_tile_no_barrier, amp::tiled_index<64> t, amp::array_view<const int, 1> in,\n"
    "                 amp::array_view<int, 1> out)\n"
    "{\n"
    "    tile_static int s[64];\n"
    "    s[t.local[0]] = in[t.global];\n"
    "    out[t.global] = s[63 - t.local[0]];\n"
    "}\n"
    /* 3-D tiles, two barrier rounds: rotate each tile's values by one
     * work-item, twice. */
    "AMP_TILED_KERNEL(rotate3d, amp::tiled_index<2, 3, 4> t, amp::array_view<int, 3> v)\n"
    "{\n"
    "    tile_static int s[24];\n"
    "    const int l = (t.local[0] * 3 + t.local[1]) * 4 + t.local[2];\n"
    "    for (int r = 0; r < 2; ++r) {\n"
    "        s[l] = v[t.global];\n"
    "        t.barrier.wait();\n"
    "        v[t.global] = s[(l + 1) % 24];\n"
    "        t.barrier.wait();\n"
    "    }\n"
    "}\n"
    /* No barrier: the fast path runs the tile as a plain loop. */
    "AMP_TILED_KERNEL(no_barrier_2d, amp::tiled_index<4, 8> t, amp::array_view<int, 2> v)\n"
    "{ v[t.global] = v[t.global] * 3 + t.local[0] * 100 + t.local[1] + t.tile[0] * 10000 + t.tile[1] * 1000; }\n"
    "AMP_TILED_KERNEL(diverge_return, amp::tiled_index<32> t, amp::array_view<int, 1> v)\n"
    "{\n"
    "    if (t.local[0] < 10) t.barrier.wait();\n"
    "    v[t.global] = 1;\n"
    "}\n"
    "AMP_TILED_KERNEL(diverge_first_eight_skip, amp::tiled_index<32> t, amp::array_view<int, 1> v)\n"
    "{\n"
    "    if (t.local[0] >= 8) t.barrier.wait();\n"
    "    v[t.global] = 1;\n"
    "}\n"
    "AMP_TILED_KERNEL(diverge_first_skips, amp::tiled_index<32> t, amp::array_view<int, 1> v)\n"
    "{\n"
    "    if (t.local[0] != 0) t.barrier.wait();\n"
    "    v[t.global] = 1;\n"
    "}\n"
    /* Work-item 5 leaves before a barrier the others reach (divergent);
     * each other one then loops until it and the next one (5 excepted)
     * counted to 3: it waits on another's progress. */
    "AMP_TILED_KERNEL(diverge_loop_exit, amp::tiled_index<32> t, amp::array_view<int, 1> v)\n"
    "{\n"
    "    tile_static int c[32];\n"
    "    int me = t.local[0], next = (me + 1) & 31, i = 0;\n"
    "    c[me] = 0;\n"
    "    t.barrier.wait();\n"
    "    if (me == 5) return;\n"
    "    for (;;) {\n"
    "        c[me] = ++i;\n"
    "        t.barrier.wait();\n"
    "        if (i >= 3 && (next == 5 || c[next] >= 3)) break;\n"
    "    }\n"
    "    v[t.global] = i;\n"
    "}\n"
    "AMP_TILED_KERNEL(diverge_extra_round, amp::tiled_index<32> t, amp::array_view<int, 1> v)\n"
    "{\n"
    "    for (int r = 0; r < (t.local[0] == 5 ? 3 : 2); ++r) t.barrier.wait();\n"
    "    v[t.global] = 1;\n"
    "}\n"
    /* Work-item 0 leaves before any barrier; the others wait at a barrier,
     * in a loop, until the last one has set a tile_static flag. */
    "AMP_TILED_KERNEL(diverge_first_leaves_others_wait, amp::tiled_index<32> t, amp::array_view<int, 1> v)\n"
    "{\n"
    "    tile_static int ready;\n"
    "    const int l = t.local[0];\n"
    "    if (l == 0) { ready = 0; return; }\n"
    "    if (l == 31) ready = 1;\n"
    "    while (!ready) t.barrier.wait();\n"
    "    v[t.global] = 1;\n"
    "}\n"
    /* HIP names from the CPU prelude. */
    "AMP_TILED_KERNEL(hip_geometry, amp::tiled_index<4, 16> t, amp::array_view<int, 2> v)\n"
    "{\n"
    "    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "    v[t.global] = (y == t.global[0] && x == t.global[1] && gridDim.x == 2 && gridDim.y == 3)\n"
    "        ? 1 : -1;\n"
    "}\n"
    "AMP_KERNEL(hip_atomics, amp::index<1> i, amp::array_view<int, 1> acc, amp::array_view<float, 1> facc)\n"
    "{\n"
    "    atomicAdd(&acc[amp::index<1>(0)], 1);\n"
    "    atomicMax(&acc[amp::index<1>(1)], i[0]);\n"
    "    atomicMin(&acc[amp::index<1>(2)], i[0]);\n"
    "    atomicOr(&acc[amp::index<1>(3)], 1 << (i[0] % 31));\n"
    "    atomicAdd(&facc[amp::index<1>(0)], 0.5f);\n"
    "    float m = max(rsqrtf(4.0f), __fdividef(1.0f, 8.0f)) + min(__expf(0.0f), __logf(1.0f));\n"
    "    atomicAdd(&facc[amp::index<1>(1)], m);\n"
    "}\n"
    "AMP_KERNEL(throws_at_77, amp::index<1> i, amp::array_view<int, 1> v)\n"
    "{ if (i[0] == 77) throw 77; v[i] = 1; }\n"
    /* Work-item local (3, 5) of tile (1, 0) writes outside out, after a
     * barrier (on the loop path: in the second work-item loop). */
    "AMP_TILED_KERNEL(oob_after_barrier, amp::tiled_index<4, 8> t, amp::array_view<const int, 2> in,\n"
    "                 amp::array_view<int, 2> out)\n"
    "{\n"
    "    tile_static int s[4][8];\n"
    "    s[t.local[0]][t.local[1]] = in[t.global];\n"
    "    t.barrier.wait();\n"
    "    const int bad = (t.tile[0] == 1 && t.tile[1] == 0 && t.local[0] == 3 && t.local[1] == 5) ? 100 : 0;\n"
    "    out(t.global[0], t.global[1] + bad) = s[3 - t.local[0]][t.local[1]];\n"
    "}\n"
    "AMP_TILED_KERNEL(tiled_throws, amp::tiled_index<16> t, amp::array_view<int, 1> v)\n"
    "{\n"
    "    tile_static int s[16];\n"
    "    s[t.local[0]] = v[t.global];\n"
    "    t.barrier.wait();\n"
    "    if (t.global[0] == 37) throw 37;\n"
    "    v[t.global] = s[15 - t.local[0]];\n"
    "}\n"
    /* Every work-item of a simple launch counts its visit and writes its
     * own linear index. */
    "AMP_KERNEL(visit2, amp::index<2> i, amp::array_view<int, 2> count, amp::array_view<int, 2> where)\n"
    "{ atomicAdd(&count[i], 1); where[i] = i[0] * where.extent[1] + i[1]; }\n"
    "AMP_KERNEL(visit3, amp::index<3> i, amp::array_view<int, 3> count, amp::array_view<int, 3> where)\n"
    "{ atomicAdd(&count[i], 1); where[i] = (i[0] * where.extent[1] + i[1]) * where.extent[2] + i[2]; }\n";

/* tile_static at the limits: 48 KiB exactly, 52000 bytes, 64 MiB; and a
 * tile of 2048 work-items. A source of their own: tile_static is static
 * thread_local on the CPU accelerator, so every thread that runs any
 * kernel of a module gets (and zeroes) the whole module's, 64 MiB here;
 * with the kernels above that cost every test of this file a tenth of a
 * second. */
static const char cpu_limit_kernels[] =
    "AMP_TILED_KERNEL(ts_48k, amp::tiled_index<64> t, amp::array_view<int, 1> v)\n"
    "{\n"
    "    tile_static int s[12288];\n"
    "    s[t.local[0] * 192] = v[t.global];\n"
    "    t.barrier.wait();\n"
    "    v[t.global] = s[(63 - t.local[0]) * 192];\n"
    "}\n"
    "AMP_TILED_KERNEL(ts_52000, amp::tiled_index<64> t, amp::array_view<int, 1> v)\n"
    "{\n"
    "    tile_static int s[13000];\n"
    "    s[t.local[0]] = v[t.global];\n"
    "    t.barrier.wait();\n"
    "    v[t.global] = s[63 - t.local[0]];\n"
    "}\n"
    "AMP_TILED_KERNEL(ts_64m, amp::tiled_index<64> t, amp::array_view<int, 1> v)\n"
    "{\n"
    "    tile_static int s[16 * 1024 * 1024];\n"
    "    s[t.local[0] * 65536] = v[t.global];\n"
    "    t.barrier.wait();\n"
    "    v[t.global] = s[(63 - t.local[0]) * 65536];\n"
    "}\n"
    "AMP_TILED_KERNEL(tile_2048, amp::tiled_index<2048> t, amp::array_view<int, 1> v)\n"
    "{ v[t.global] = t.local[0]; }\n";

static amp_accelerator *cpu_acc(void)
{
    return test_accel(TEST_ACCEL_CPU);
}

static amp_tiled_extent tile1(int n, int t)
{
    amp_tiled_extent te;
    ASSERT_OK(amp_extent_tile(amp_extent_1d(n), (int[]){t}, &te));
    return te;
}

static void assert_contains(const char *msg, const char *what)
{
    cr_assert(strstr(msg, what) != NULL, "message lacks \"%s\": %s", what, msg);
}

/* ---------------------------------------------------------------- info */

Test(cpu, info_describes_the_cpu_accelerator)
{
    amp_accelerator *acc = NULL;
    ASSERT_OK(amp_accelerator_find("cpu", &acc));
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    struct utsname u;
    cr_assert_eq(uname(&u), 0);
    cr_assert(info.is_emulated && info.is_unified_memory && info.supports_double_precision);
    cr_assert_str_eq(info.device_path, "cpu");
    cr_assert_str_eq(info.arch, u.machine);
    cr_assert_gt(info.compute_units, 0);
    cr_assert_eq(info.max_tile_threads, AMP_MAX_TILE_THREADS);
    assert_contains(info.description, "thread");
}

/* ---------------------------------------------------------- debug mode */

Test(cpu, debug_mode_reports_out_of_bounds_write_and_protects_memory)
{
    setenv("AMP_DEBUG", "1", 1);
    amp_accelerator *acc = cpu_acc();
    amp_program *p = test_build(acc, cpu_kernels);
    amp_kernel *k = test_kernel(p, "oob_write");
    enum { N = 100, GUARD = 64 };
    float buf[N + GUARD];
    for (int i = 0; i < N + GUARD; ++i) buf[i] = -7.0f;
    amp_array_view *v = test_view(buf, sizeof(float), amp_extent_1d(N), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_float32(2.0f), amp_arg_view(v)};
    ASSERT_STATUS(amp_parallel_for_each(NULL, amp_extent_1d(N), k, a, 2), AMP_ERROR_OUT_OF_BOUNDS);
    const char *msg = amp_last_error();
    cr_log_info("%s", msg);
    assert_contains(msg, "oob_write");
    assert_contains(msg, "parameter 1");
    assert_contains(msg, "extent (100)");
    /* Which work-item runs first is up to the pool, but every bad index is
     * 100..102. */
    cr_assert(strstr(msg, "index (100)") || strstr(msg, "index (101)") || strstr(msg, "index (102)"),
              "message lacks the bad index: %s", msg);
    for (int i = N; i < N + GUARD; ++i)
        cr_assert_eq(buf[i], -7.0f, "float %d past the view was overwritten: %g", i - N, buf[i]);
    /* Nor what the kernel did not address inside it (v[0..2]: the bad
     * writes landed on v[0]). */
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < 3; ++i)
        cr_assert_eq(buf[i], -7.0f, "float %d, which no work-item addressed, was overwritten: %g", i, buf[i]);
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
}

/* AMP_DEBUG's bounds check sends a bad access to a scratch element of the
 * thread's (a thread_local of the library's): no kernel's tile_static
 * grows by it (it was counted as a helper's tile_static, one element a
 * view type, in every kernel: a kernel near the limit was refused). */
Test(cpu, debug_mode_adds_no_tile_static_memory)
{
    static const char src[] =
        "struct big { double v[512]; };\n"
        "AMP_TILED_KERNEL(touch_big, amp::tiled_index<4> t, amp::array_view<big, 1> v)\n"
        "{ tile_static int s[4]; s[t.local[0]] = 1; t.barrier.wait(); v[t.global].v[0] += s[3 - t.local[0]]; }\n";
    setenv("AMP_DEBUG", "1", 1);
    amp_program *p = test_build(cpu_acc(), src);
    amp_kernel_info ki;
    ASSERT_OK(amp_kernel_get_info(test_kernel(p, "touch_big"), &ki));
    cr_assert_eq(ki.tile_static_bytes, 4 * sizeof(int), "AMP_DEBUG=1: %zu bytes of tile_static for int[4]",
                 ki.tile_static_bytes);
    ASSERT_OK(amp_program_destroy(p));
}

/* A kernel over the tile_static limit is refused saying what was
 * counted: a helper's tile_static counts for the kernels that call it
 * (the module's call graph, cpu_elf.c), so the message names it and how to
 * count one for its kernel alone; before, it gave only a total, far above
 * what the kernel's own body declares. A kernel whose own tile_static is
 * over is refused too, naming no helper it does not call. */
Test(cpu, a_tile_static_refusal_names_what_it_counted)
{
    static const char src[] =
        "__device__ int helper(int l) { tile_static int big[12289]; big[l] = l; return big[12288 - l]; }\n"
        "AMP_TILED_KERNEL(uses_helper, amp::tiled_index<64> t, amp::array_view<int, 1> out)\n"
        "{ tile_static int s[64]; s[t.local[0]] = 1; t.barrier.wait(); out[t.global] = helper(t.local[0]) + s[0]; }\n"
        "AMP_TILED_KERNEL(own_too_big, amp::tiled_index<64> t, amp::array_view<int, 1> out)\n"
        "{ tile_static int s[12289]; s[t.local[0]] = 1; t.barrier.wait(); out[t.global] = s[63 - t.local[0]]; }\n";
    amp_program *p = test_build(cpu_acc(), src);
    amp_kernel *k = (amp_kernel *)1;
    ASSERT_STATUS(amp_program_get_kernel(p, "uses_helper", &k), AMP_ERROR_UNSUPPORTED);
    cr_assert_null(k);
    const char *says[] = {"kernel 'uses_helper' uses 49412 bytes of tile_static memory; cpu allows at most 49152",
                          "_ZZ6helperiE3big (49156)", "the functions it calls reach",
                          "declared in the body of the kernel that uses it"};
    for (int i = 0; i < 4; ++i) cr_assert(strstr(amp_last_error(), says[i]), "no \"%s\" in: %s", says[i], amp_last_error());
    k = (amp_kernel *)1;
    ASSERT_STATUS(amp_program_get_kernel(p, "own_too_big", &k), AMP_ERROR_UNSUPPORTED);
    cr_assert(strstr(amp_last_error(), "kernel 'own_too_big' uses 49156 bytes") &&
                  !strstr(amp_last_error(), "_ZZ6helperiE3big"),
              "message: %s", amp_last_error());
    ASSERT_OK(amp_program_destroy(p));
}

/* Each kernel counts the helpers it reaches, and only those: a kernel
 * using 32 KiB of its own beside a helper's 32 KiB that another kernel
 * calls (through a second function, not inlined) is within the 48 KiB
 * (it was refused: every helper counted for every kernel, and the
 * program ran on a GPU but not here); both run and give their results.
 * A function whose address is taken may be called by any kernel, so what
 * it reaches counts for every kernel of the program. */
Test(cpu, a_helpers_tile_static_counts_for_the_kernels_that_reach_it)
{
    static const char src[] =
        "__device__ __attribute__((noinline)) int *helper() { tile_static int h[8192]; return h; }\n"
        "__device__ __attribute__((noinline)) int *middle() { return helper(); }\n"
        "AMP_TILED_KERNEL(calls_helper, amp::tiled_index<64> t, amp::array_view<int, 1> out)\n"
        "{ int *h = middle(); h[t.local[0]] = t.local[0] + 1; t.barrier.wait(); out[t.global] = 2 * h[63 - t.local[0]]; }\n"
        "AMP_TILED_KERNEL(own_buffer, amp::tiled_index<64> t, amp::array_view<int, 1> out)\n"
        "{ tile_static int s[8192]; s[t.local[0]] = 3 * t.local[0]; t.barrier.wait(); out[t.global] = s[63 - t.local[0]]; }\n"
        "__device__ __attribute__((noinline)) int pointed(int l) { static thread_local int p[100]; p[l % 100] = l; return p[0]; }\n"
        "__device__ int (*volatile pointer)(int) = pointed;\n";
    amp_program *p = test_build(cpu_acc(), src);
    amp_kernel_info ki;
    size_t tls_pointed = 100 * sizeof(int);
    ASSERT_OK(amp_kernel_get_info(test_kernel(p, "calls_helper"), &ki));
    cr_assert_eq(ki.tile_static_bytes, 8192 * sizeof(int) + tls_pointed, "calls_helper: %zu bytes", ki.tile_static_bytes);
    ASSERT_OK(amp_kernel_get_info(test_kernel(p, "own_buffer"), &ki));
    cr_assert_eq(ki.tile_static_bytes, 8192 * sizeof(int) + tls_pointed, "own_buffer: %zu bytes", ki.tile_static_bytes);
    int out[128];
    const char *names[] = {"calls_helper", "own_buffer"};
    for (int n = 0; n < 2; ++n) {
        memset(out, 0, sizeof out);
        amp_array_view *v = test_view(out, sizeof(int), amp_extent_1d(128), AMP_WRITE_ONLY);
        amp_arg args[] = {amp_arg_view(v)};
        ASSERT_OK(amp_parallel_for_each_tiled(NULL, tile1(128, 64), test_kernel(p, names[n]), args, 1));
        ASSERT_OK(amp_array_view_synchronize(v));
        for (int i = 0; i < 128; ++i) {
            int want = n == 0 ? 2 * (64 - i % 64) : 3 * (63 - i % 64);
            cr_assert_eq(out[i], want, "%s: out[%d] = %d, want %d", names[n], i, out[i], want);
        }
        ASSERT_OK(amp_array_view_destroy(v));
    }
    ASSERT_OK(amp_program_destroy(p));
}

/* A function that takes its own address may be called through it by any
 * kernel: what it reaches counts for every kernel of the program, not only
 * for the kernel that calls it by name (the graph dropped a reference of a
 * function to itself, call or not). */
Test(cpu, a_function_that_takes_its_own_address_counts_for_every_kernel)
{
    static const char src[] =
        "__device__ int (*volatile cb)(int);\n"
        "__device__ __attribute__((noinline)) int selfish(int l)\n"
        "{ tile_static int s[1000]; s[l] = l; cb = selfish; return s[(l + 1) % 1000]; }\n"
        "AMP_TILED_KERNEL(names_it, amp::tiled_index<64> t, amp::array_view<int, 1> out)\n"
        "{ out[t.global] = selfish(t.local[0]); }\n"
        "AMP_TILED_KERNEL(calls_through_it, amp::tiled_index<64> t, amp::array_view<int, 1> out)\n"
        "{ out[t.global] = cb ? cb(t.local[0]) : 2; }\n";
    amp_program *p = test_build(cpu_acc(), src);
    const char *names[] = {"names_it", "calls_through_it"};
    for (int i = 0; i < 2; ++i) {
        amp_kernel_info ki;
        ASSERT_OK(amp_kernel_get_info(test_kernel(p, names[i]), &ki));
        cr_assert_geq(ki.tile_static_bytes, 1000 * sizeof(int), "%s: %zu bytes", names[i], ki.tile_static_bytes);
    }
    ASSERT_OK(amp_program_destroy(p));
}

/* A C++ exception that escapes a kernel fails the launch (the CPU
 * accelerator's only kind of kernel exception: GPUs compile none), saying
 * where: a tiled kernel's tile, on the loop path and on fibers; a simple
 * kernel's run of work-items, which holds the one that threw.
 * AMP_CPU_TILED is read when the accelerator is made: one path a test. */
static void exception_says_where(const char *tiled)
{
    static const char src[] =
        "AMP_KERNEL(throws_at_37, amp::index<1> i, amp::array_view<int, 1> v)\n"
        "{ if (i[0] == 37) throw 1; v[i] = 1; }\n"
        "AMP_TILED_KERNEL(tile_throws_at_37, amp::tiled_index<16> t, amp::array_view<int, 1> v)\n"
        "{ tile_static int s[16]; s[t.local[0]] = 1; t.barrier.wait(); if (t.global[0] == 37) throw 2;\n"
        "  v[t.global] = s[15 - t.local[0]]; }\n";
    setenv("AMP_CPU_TILED", tiled, 1);
    amp_program *p = test_build(cpu_acc(), src);
    amp_kernel_info ki;
    ASSERT_OK(amp_kernel_get_info(test_kernel(p, "tile_throws_at_37"), &ki));
    cr_assert(!strncmp(ki.execution, "cpu ", 4) && !strncmp(ki.execution + 4, tiled, strlen(tiled)),
              "AMP_CPU_TILED=%s: %s", tiled, ki.execution);
    int a[64] = {0};
    amp_array_view *v = test_view(a, sizeof(int), amp_extent_1d(64), AMP_READ_WRITE);
    amp_arg args[] = {amp_arg_view(v)};
    ASSERT_STATUS(amp_parallel_for_each_tiled(NULL, tile1(64, 16), test_kernel(p, "tile_throws_at_37"), args, 1),
                  AMP_ERROR_DEVICE);
    assert_contains(amp_last_error(), "kernel 'tile_throws_at_37': a C++ exception escaped the kernel (in tile (2))");
    ASSERT_STATUS(amp_parallel_for_each(NULL, amp_extent_1d(64), test_kernel(p, "throws_at_37"), args, 1),
                  AMP_ERROR_DEVICE);
    static const char says[] = "kernel 'throws_at_37': a C++ exception escaped the kernel (in one of the work-items "
                               "from index (";
    const char *m = strstr(amp_last_error(), says);
    cr_assert_not_null(m, "message: %s", amp_last_error());
    int lo = -1, hi = -1;
    cr_assert_eq(sscanf(m + strlen(says), "%d) to (%d)", &lo, &hi), 2, "message: %s", amp_last_error());
    cr_assert(0 <= lo && lo <= 37 && 37 <= hi && hi < 64, "work-items %d to %d: %s", lo, hi, amp_last_error());
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
}

Test(cpu, an_exception_escaping_a_kernel_says_where_on_loops) { exception_says_where("loops"); }
Test(cpu, an_exception_escaping_a_kernel_says_where_on_fibers) { exception_says_where("fibers"); }

/* With AMP_DEBUG=1, a build from a file (whose directory goes to the
 * compiler as -iquote) and options below -O2 (the plain path's macro), the
 * words the library puts before the user's were one more than their room:
 * the directory was written over the user's first option, which was lost,
 * and the compiler read the directory as an input ("cc1plus: fatal error:
 * DIR: No such file or directory"). The build takes every option. */
Test(cpu, debug_mode_keeps_every_option_of_a_build_from_a_file)
{
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char dir[PATH_MAX], path[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s/hipamp-debugopts-XXXXXX", base);
    cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
    test_remove_at_exit(dir);
    snprintf(path, sizeof path, "%s/k.hip", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    cr_assert(fprintf(f, "AMP_KERNEL(set_x, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = X + (int)i[0]; }\n") > 0);
    cr_assert_eq(fclose(f), 0);
    setenv("AMP_DEBUG", "1", 1);
    amp_program *p = NULL;
    amp_status st = amp_program_build_file(cpu_acc(), path, "-O1 -DX=3", &p);
    cr_assert_eq(st, AMP_OK, "%s: %.2000s", amp_status_name(st), amp_last_error());
    int a[8] = {0};
    amp_array_view *v = test_view(a, sizeof(int), amp_extent_1d(8), AMP_READ_WRITE);
    amp_arg args[] = {amp_arg_view(v)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(8), test_kernel(p, "set_x"), args, 1));
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < 8; ++i) cr_assert_eq(a[i], 3 + i, "a[%d] = %d", i, a[i]);
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
}

/* A launch that fails after running in part (the bounds check stops
 * work-item 0 after its write: an out-of-bounds read) on a copy of the data apart from the host's
 * (AMP_CPU_UNIFIED=0): what it wrote is what the host reads and what the
 * next launch reads, the same. The host read the old data with AMP_OK and
 * the next launch the partial writes (x[0] 2 there, 1 on the host), and a
 * graph's failed replay the same. */
static const char partial_kernels[] =
    "AMP_KERNEL(bump_then_overrun, amp::index<1> i, amp::array_view<int, 1> x, int n)\n"
    "{ x[i] = x[i] + 1; if (i[0] == 0 && x[amp::index<1>(n)] == 12345) x[i] = 0; }\n"
    "AMP_KERNEL(copy_ints, amp::index<1> i, amp::array_view<const int, 1> x, amp::array_view<int, 1> y)\n"
    "{ y[i] = x[i]; }\n";

static void after_partial_run_host_and_device_agree(bool graph)
{
    setenv("AMP_DEBUG", "1", 1);
    setenv("AMP_CPU_UNIFIED", "0", 1);
    amp_accelerator *acc = cpu_acc();
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    amp_program *p = test_build(acc, partial_kernels);
    enum { N = 4096 };
    static int x[N], y[N];
    for (int i = 0; i < N; ++i) x[i] = 1, y[i] = -1;
    amp_array_view *vx = test_view(x, sizeof(int), amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *vy = test_view(y, sizeof(int), amp_extent_1d(N), AMP_READ_WRITE);
    amp_arg bump[] = {amp_arg_view(vx), amp_arg_int32(N)};
    if (graph) {
        amp_graph *g = NULL;
        ASSERT_OK(amp_graph_begin_recording(q));
        ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), test_kernel(p, "bump_then_overrun"), bump, 2));
        ASSERT_OK(amp_graph_end_recording(q, &g));
        ASSERT_STATUS(amp_graph_launch(q, g), AMP_ERROR_OUT_OF_BOUNDS);
        amp_graph_destroy(g);
    } else {
        ASSERT_STATUS(amp_parallel_for_each(q, amp_extent_1d(N), test_kernel(p, "bump_then_overrun"), bump, 2),
                      AMP_ERROR_OUT_OF_BOUNDS);
    }
    amp_status st = amp_array_view_synchronize(vx);
    cr_log_info("synchronize after the failed %s: %s", graph ? "replay" : "launch", amp_status_name(st));
    cr_assert_eq(x[0], 2, "work-item 0's write before it failed is not what the host reads (%d)", x[0]);
    amp_arg copy[] = {amp_arg_view(vx), amp_arg_view(vy)};
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), test_kernel(p, "copy_ints"), copy, 2));
    ASSERT_OK(amp_array_view_synchronize(vy));
    for (int i = 0; i < N; ++i)
        cr_assert_eq(y[i], x[i], "element %d: the next launch read %d, the host %d", i, y[i], x[i]);
    ASSERT_OK(amp_array_view_destroy(vx));
    ASSERT_OK(amp_array_view_destroy(vy));
    ASSERT_OK(amp_program_destroy(p));
    ASSERT_OK(amp_accelerator_view_destroy(q));
}

Test(cpu, after_a_launch_that_ran_in_part_host_and_device_agree)
{
    after_partial_run_host_and_device_agree(false);
}

Test(cpu, after_a_replay_that_ran_in_part_host_and_device_agree)
{
    after_partial_run_host_and_device_agree(true);
}

/* An asynchronous launch or replay returns once queued, also when its data
 * was last written by work still running on another view: the CPU queue's
 * thread waits for that work, not the caller. The caller waited, and where
 * that work waited for the host's next step (here a gate the host opens
 * after the call), hung. A watchdog opens the gate after 20 s and says so;
 * the order is kept (the copy reads what the gated kernel wrote). */
static const char gate_kernels[] =
    "AMP_KERNEL(gated_inc, amp::index<1> i, amp::array_view<int, 1> x, unsigned long long gate)\n"
    "{ volatile int *g = reinterpret_cast<volatile int *>(gate); while (!*g) {} x[i] += 1; }\n"
    "AMP_KERNEL(plus_one, amp::index<1> i, amp::array_view<const int, 1> a, amp::array_view<int, 1> b)\n"
    "{ b[i] = a[i] + 1; }\n";

/* Atomic: the watchdog and the test's thread both read and write them
 * (the kernel reads gate through its address as a volatile int). */
typedef struct gate_watch {
    atomic_int gate;
    atomic_int forced;
} gate_watch;

static void *gate_watchdog(void *arg)
{
    gate_watch *w = arg;
    for (int i = 0; i < 2000 && !atomic_load(&w->gate); ++i) usleep(10000);
    if (!atomic_load(&w->gate)) {
        atomic_store(&w->forced, 1);
        atomic_store(&w->gate, 1);
    }
    return NULL;
}

static void async_call_does_not_wait_for_another_view(bool graph)
{
    amp_accelerator *acc = cpu_acc();
    amp_accelerator_view *q = NULL, *q2 = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    ASSERT_OK(amp_accelerator_view_create(acc, &q2));
    amp_program *p = test_build(acc, gate_kernels);
    enum { N = 8 };
    static int x[N], y[N];
    memset(x, 0, sizeof x);
    memset(y, 0, sizeof y);
    amp_array_view *vx = test_view(x, sizeof(int), amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *vy = test_view(y, sizeof(int), amp_extent_1d(N), AMP_READ_WRITE);
    static gate_watch w;
    atomic_store(&w.gate, 0);
    atomic_store(&w.forced, 0);
    amp_arg gated[] = {amp_arg_view(vx), amp_arg_uint64((uint64_t)(uintptr_t)&w.gate)};
    amp_arg copy[] = {amp_arg_view(vx), amp_arg_view(vy)};
    amp_graph *g = NULL;
    if (graph) {
        ASSERT_OK(amp_graph_begin_recording(q));
        ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), test_kernel(p, "plus_one"), copy, 2));
        ASSERT_OK(amp_graph_end_recording(q, &g));
    }
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, gate_watchdog, &w), 0);
    amp_future *f2 = NULL, *f = NULL;
    ASSERT_OK(amp_parallel_for_each_async(q2, amp_extent_1d(N), test_kernel(p, "gated_inc"), gated, 2, &f2));
    if (graph) ASSERT_OK(amp_graph_launch_async(q, g, &f));
    else ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(N), test_kernel(p, "plus_one"), copy, 2, &f));
    int forced = atomic_load(&w.forced);
    atomic_store(&w.gate, 1); /* the host's next step */
    pthread_join(t, NULL);
    ASSERT_OK(amp_future_wait(f));
    ASSERT_OK(amp_future_wait(f2));
    cr_assert(!forced, "the %s waited for the gated kernel on another view (the watchdog opened the gate)",
              graph ? "replay" : "launch");
    ASSERT_OK(amp_array_view_synchronize(vy));
    for (int i = 0; i < N; ++i) cr_assert_eq(y[i], 2, "y[%d] = %d: the copy did not read the gated kernel's write", i, y[i]);
    ASSERT_OK(amp_future_destroy(f));
    ASSERT_OK(amp_future_destroy(f2));
    if (g) ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_array_view_destroy(vx));
    ASSERT_OK(amp_array_view_destroy(vy));
    ASSERT_OK(amp_program_destroy(p));
    ASSERT_OK(amp_accelerator_view_destroy(q));
    ASSERT_OK(amp_accelerator_view_destroy(q2));
}

Test(cpu, an_async_launch_does_not_wait_for_another_views_work_before_it, .timeout = 120)
{
    async_call_does_not_wait_for_another_view(false);
}

Test(cpu, an_async_replay_does_not_wait_for_another_views_work_before_it, .timeout = 120)
{
    async_call_does_not_wait_for_another_view(true);
}

/* An asynchronous launch's failure is reported once: after the view's
 * wait reported it, host accesses of data an earlier launch wrote, and a
 * marker taken before the wait, report nothing more. Before, a cached
 * mark kept the failure and answered every later wait, until a second
 * view wait. */
Test(cpu, a_failure_the_view_wait_reported_is_not_reported_again)
{
    setenv("AMP_DEBUG", "1", 1);
    amp_accelerator *acc = cpu_acc();
    amp_program *p = test_build(acc, cpu_kernels), *p2 = test_build(acc, gate_kernels);
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    enum { N = 64 };
    static float good[N], bad[N];
    static int in[N], out[N];
    for (int i = 0; i < N; ++i) in[i] = i;
    amp_array_view *vb = test_view(bad, sizeof(float), amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *vi = test_view(in, sizeof(int), amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vo = test_view(out, sizeof(int), amp_extent_1d(N), AMP_WRITE_ONLY);
    (void)good;
    amp_arg ok_args[] = {amp_arg_view(vi), amp_arg_view(vo)};
    amp_arg bad_args[] = {amp_arg_float32(1.0f), amp_arg_view(vb)};
    amp_future *f1 = NULL, *f2 = NULL, *m = NULL;
    ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(N), test_kernel(p2, "plus_one"), ok_args, 2, &f1));
    ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(N), test_kernel(p, "oob_write"), bad_args, 2, &f2));
    ASSERT_OK(amp_future_destroy(f1));
    ASSERT_OK(amp_future_destroy(f2));
    ASSERT_OK(amp_accelerator_view_create_marker(q, &m));
    ASSERT_STATUS(amp_future_wait(m), AMP_ERROR_OUT_OF_BOUNDS); /* waits through the queue: the later failure */
    ASSERT_STATUS(amp_accelerator_view_wait(q), AMP_ERROR_OUT_OF_BOUNDS);
    int x = -1;
    ASSERT_OK(amp_array_view_get(vo, amp_index_1d(5), &x));
    cr_assert_eq(x, 6, "out[5] = %d", x);
    ASSERT_OK(amp_array_view_synchronize(vo));
    ASSERT_OK(amp_future_wait(m));
    ASSERT_OK(amp_accelerator_view_flush(q));
    ASSERT_OK(amp_future_destroy(m));
    ASSERT_OK(amp_array_view_destroy(vb));
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(p));
    ASSERT_OK(amp_program_destroy(p2));
    ASSERT_OK(amp_accelerator_view_destroy(q));
}

/* A view's wait waits for what was queued before it, not for the queue to
 * be empty: another thread that keeps queueing does not hold it up.
 * Before, the wait ended only when it saw the queue empty, which a busy
 * producer never let happen (a wait_for of 3 s timed out on work of a few
 * milliseconds). */
typedef struct producer {
    amp_accelerator_view *q;
    amp_kernel *k;
    amp_arg *args;
    atomic_int stop;
    int launched;
} producer;

static void *produce(void *arg)
{
    producer *pr = arg;
    while (!atomic_load(&pr->stop)) {
        amp_future *f = NULL;
        if (amp_parallel_for_each_async(pr->q, amp_extent_1d(4096), pr->k, pr->args, 2, &f) != AMP_OK) break;
        amp_future_destroy(f);
        pr->launched++;
    }
    return NULL;
}

Test(cpu, a_view_wait_is_not_held_up_by_another_threads_later_launches, .timeout = 120)
{
    /* Launches of a few milliseconds each, at most 64 queued: the producer
     * keeps the queue from ever being empty, and what a wait finds queued
     * takes a fraction of a second. */
    setenv("AMP_QUEUE_DEPTH", "64", 1);
    amp_accelerator *acc = cpu_acc();
    amp_program *p = test_build(acc, "AMP_KERNEL(busy, amp::index<1> i, amp::array_view<const int, 1> x,\n"
                                     "                 amp::array_view<int, 1> y)\n"
                                     "{ unsigned v = (unsigned)x[i];\n"
                                     "  for (int k = 0; k < 2000; ++k) v = v * 1103515245u + 12345u;\n"
                                     "  y[i] = (int)v; }\n");
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    static int in[4096], out[4096];
    amp_array_view *vi = test_view(in, sizeof(int), amp_extent_1d(4096), AMP_READ_ONLY);
    amp_array_view *vo = test_view(out, sizeof(int), amp_extent_1d(4096), AMP_WRITE_ONLY);
    amp_arg args[] = {amp_arg_view(vi), amp_arg_view(vo)};
    static producer pr;
    pr.q = q;
    pr.k = test_kernel(p, "busy");
    pr.args = args;
    atomic_init(&pr.stop, 0);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, produce, &pr), 0);
    usleep(100000);
    amp_status st = amp_accelerator_view_wait_for(q, 20000);
    atomic_store(&pr.stop, 1);
    pthread_join(t, NULL);
    cr_assert_eq(st, AMP_OK, "the wait did not end while another thread queued (%d launches): %s", pr.launched,
                 amp_status_name(st));
    ASSERT_OK(amp_accelerator_view_wait(q));
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(p));
    ASSERT_OK(amp_accelerator_view_destroy(q));
}

/* What runs on a queue in the caller's thread after the work queued on it
 * (a blocking launch, a synchronous graph replay, a copy between two arrays
 * of the queue) waits for what the queue holds when it is called, not for
 * the queue to be empty: another thread that keeps queueing does not hold
 * it up. Before, each waited until it saw the queue empty, which a busy
 * producer never let happen: it returned only once the producer stopped (a
 * helper stops it after 5 s here; the calls take a fraction of a second). */
typedef struct stopper {
    producer *pr;
    atomic_int done; /* the calls returned: stop no more */
} stopper;

static void *stop_later(void *arg)
{
    stopper *s = arg;
    for (int i = 0; i < 500 && !atomic_load(&s->done); ++i) usleep(10000);
    atomic_store(&s->pr->stop, 1);
    return NULL;
}

Test(cpu, blocking_work_on_a_view_is_not_held_up_by_another_threads_later_launches, .timeout = 120)
{
    setenv("AMP_QUEUE_DEPTH", "64", 1);
    amp_accelerator *acc = cpu_acc();
    amp_program *p = test_build(acc, "AMP_KERNEL(busy, amp::index<1> i, amp::array_view<const int, 1> x,\n"
                                     "                 amp::array_view<int, 1> y)\n"
                                     "{ unsigned v = (unsigned)x[i];\n"
                                     "  for (int k = 0; k < 2000; ++k) v = v * 1103515245u + 12345u;\n"
                                     "  y[i] = (int)v; }\n"
                                     "AMP_KERNEL(bump, amp::index<1> i, amp::array_view<int, 1> v)\n"
                                     "{ v[i] += 1; }\n");
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    static int in[4096], out[4096], mine[256], from[256], to[256];
    amp_array_view *vi = test_view(in, sizeof(int), amp_extent_1d(4096), AMP_READ_ONLY);
    amp_array_view *vo = test_view(out, sizeof(int), amp_extent_1d(4096), AMP_WRITE_ONLY);
    amp_array_view *vm = test_view(mine, sizeof(int), amp_extent_1d(256), AMP_READ_WRITE);
    amp_kernel *bump = test_kernel(p, "bump");
    amp_arg bargs[] = {amp_arg_view(vm)};
    /* The graph, recorded before the producer starts (q records nothing
     * else meanwhile), and two arrays of q's for the copy. */
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_begin_recording(q));
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(256), bump, bargs, 1));
    ASSERT_OK(amp_graph_end_recording(q, &g));
    for (int i = 0; i < 256; ++i) from[i] = 7 * i + 1;
    amp_array *a = NULL, *b = NULL;
    ASSERT_OK(amp_array_create(q, sizeof(int), amp_extent_1d(256), from, &a));
    ASSERT_OK(amp_array_create(q, sizeof(int), amp_extent_1d(256), NULL, &b));

    amp_arg args[] = {amp_arg_view(vi), amp_arg_view(vo)};
    static producer pr;
    pr.q = q;
    pr.k = test_kernel(p, "busy");
    pr.args = args;
    atomic_init(&pr.stop, 0);
    static stopper sp;
    sp.pr = &pr;
    atomic_init(&sp.done, 0);
    pthread_t t, s;
    cr_assert_eq(pthread_create(&t, NULL, produce, &pr), 0);
    usleep(100000);
    cr_assert_eq(pthread_create(&s, NULL, stop_later, &sp), 0);
    amp_status st1 = amp_parallel_for_each(q, amp_extent_1d(256), bump, bargs, 1);
    bool held1 = atomic_load(&pr.stop) != 0;
    amp_status st2 = amp_graph_launch(q, g);
    bool held2 = atomic_load(&pr.stop) != 0;
    amp_status st3 = amp_copy_array(a, b);
    bool held3 = atomic_load(&pr.stop) != 0;
    atomic_store(&sp.done, 1);
    pthread_join(s, NULL);
    pthread_join(t, NULL);
    ASSERT_OK(st1);
    ASSERT_OK(st2);
    ASSERT_OK(st3);
    cr_assert(!held1, "the blocking launch waited until the other thread stopped queueing (%d launches)", pr.launched);
    cr_assert(!held2, "the synchronous replay waited until the other thread stopped queueing (%d launches)",
              pr.launched);
    cr_assert(!held3, "the copy waited until the other thread stopped queueing (%d launches)", pr.launched);
    ASSERT_OK(amp_array_view_synchronize(vm));
    for (int i = 0; i < 256; ++i) cr_assert_eq(mine[i], 2, "element %d: %d after a launch and a replay", i, mine[i]);
    ASSERT_OK(amp_array_copy_to_host(b, to));
    cr_assert_eq(memcmp(from, to, sizeof to), 0, "the copy between q's arrays");
    ASSERT_OK(amp_accelerator_view_wait(q));
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_array_destroy(a));
    ASSERT_OK(amp_array_destroy(b));
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_array_view_destroy(vm));
    ASSERT_OK(amp_program_destroy(p));
    ASSERT_OK(amp_accelerator_view_destroy(q));
}

/* Threads that launch tiled kernels on fibers and exit, a few at a time:
 * each exit frees its fiber stacks with the fibers parked mid-call, and the
 * next thread's stacks are often mapped where those were. Fails only under
 * AddressSanitizer (HIPAMP_SANITIZE): before, the new stacks kept the old
 * frames' redzones in ASan's shadow, and the first fiber made on one
 * failed with a "stack-buffer-underflow" in amp__cpu_ctx_make. */
typedef struct churn {
    amp_kernel *k;
    int id;
    int bad; /* elements wrong, or -1: a call failed */
} churn;

static void *churn_one(void *arg)
{
    churn *c = arg;
    enum { N = 64 * 8 };
    int in[N], out[N];
    for (int i = 0; i < N; ++i) in[i] = i * 5 + c->id;
    amp_array_view *vi = NULL, *vo = NULL;
    amp_tiled_extent t;
    c->bad = -1;
    if (amp_array_view_create(in, sizeof(int), amp_extent_1d(N), AMP_READ_ONLY, &vi) != AMP_OK ||
        amp_array_view_create(out, sizeof(int), amp_extent_1d(N), AMP_WRITE_ONLY, &vo) != AMP_OK ||
        amp_extent_tile_1d(amp_extent_1d(N), 64, &t) != AMP_OK)
        goto out;
    amp_arg a[] = {amp_arg_view(vi), amp_arg_view(vo)};
    if (amp_parallel_for_each_tiled(NULL, t, c->k, a, 2) != AMP_OK || amp_array_view_synchronize(vo) != AMP_OK)
        goto out;
    c->bad = 0;
    for (int i = 0; i < N; ++i) c->bad += out[i] != in[i / 64 * 64 + 63 - i % 64];
out:
    amp_array_view_destroy(vi);
    amp_array_view_destroy(vo);
    return NULL;
}

Test(cpu, threads_that_launch_on_fibers_and_exit_leave_clean_stacks, .timeout = 120)
{
    setenv("AMP_CPU_TILED", "fibers", 1);
    amp_accelerator *acc = cpu_acc();
    amp_program *p = test_build(acc, "AMP_TILED_KERNEL(rev64, amp::tiled_index<64> t, amp::array_view<const int, 1> in,\n"
                                     "                 amp::array_view<int, 1> out)\n"
                                     "{ tile_static int s[64]; s[t.local[0]] = in[t.global]; t.barrier.wait();\n"
                                     "  out[t.global] = s[63 - t.local[0]]; }\n");
    amp_kernel *k = test_kernel(p, "rev64");
    enum { ROUNDS = 16, AT_ONCE = 3 };
    for (int r = 0; r < ROUNDS; ++r) {
        pthread_t th[AT_ONCE];
        churn c[AT_ONCE];
        for (int i = 0; i < AT_ONCE; ++i) {
            c[i] = (churn){k, r * AT_ONCE + i, -1};
            cr_assert_eq(pthread_create(&th[i], NULL, churn_one, &c[i]), 0);
        }
        for (int i = 0; i < AT_ONCE; ++i) pthread_join(th[i], NULL);
        for (int i = 0; i < AT_ONCE; ++i)
            cr_assert_eq(c[i].bad, 0, "round %d thread %d: %d (-1: a call failed)", r, i, c[i].bad);
    }
    ASSERT_OK(amp_program_destroy(p));
}

/* A work-item fiber has all of AMP_CPU_STACK_SIZE (256 KiB by default),
 * whatever its place in a large tile: a helper with a 200 KiB frame runs
 * in a tile of 256. Before, the stacks' colouring took up to 64 KiB off
 * each fiber's stack, and the fibers deep in the tile overflowed. */
Test(cpu, every_fiber_of_a_large_tile_has_the_whole_stack, .timeout = 120)
{
    setenv("AMP_CPU_TILED", "fibers", 1);
    amp_accelerator *acc = cpu_acc();
    static const char src[] =
        "__device__ __attribute__((noinline)) int use_big(int seed)\n"
        "{ volatile char big[200 * 1024];\n"
        "  for (int i = 0; i < (int)sizeof big; i += 1024) big[i] = (char)(seed + i);\n"
        "  return big[1024] + big[0]; }\n"
        "AMP_TILED_KERNEL(deep_t256, amp::tiled_index<256> t, amp::array_view<const int, 1> in,\n"
        "                 amp::array_view<int, 1> out)\n"
        "{ tile_static int s[256]; s[t.local[0]] = in[t.global]; t.barrier.wait();\n"
        "  out[t.global] = use_big(s[255 - t.local[0]]); }\n";
    amp_program *p = test_build(acc, src);
    enum { N = 512 };
    static int in[N], out[N];
    for (int i = 0; i < N; ++i) in[i] = i % 100;
    amp_array_view *vi = test_view(in, sizeof(int), amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vo = test_view(out, sizeof(int), amp_extent_1d(N), AMP_WRITE_ONLY);
    amp_arg a[] = {amp_arg_view(vi), amp_arg_view(vo)};
    amp_tiled_extent te;
    ASSERT_OK(amp_extent_tile(amp_extent_1d(N), (int[]){256}, &te));
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, te, test_kernel(p, "deep_t256"), a, 2));
    ASSERT_OK(amp_array_view_synchronize(vo));
    for (int i = 0; i < N; ++i) {
        int seed = in[(i / 256) * 256 + 255 - i % 256];
        int want = (signed char)(seed + 1024) + (signed char)seed;
        cr_assert_eq(out[i], want, "out[%d] = %d, want %d", i, out[i], want);
    }
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(p));
}

/* A process forks while one of its threads waits on a future: in the
 * child, waits on futures and events work, each one, within their time.
 * Before, the child's second wait hung for good (its time-out too): the
 * events' condition variable still counted the parent's waiter, which
 * glibc's broadcast waited for, holding the events' mutex. */
static void *wait_on_gated(void *arg)
{
    (void)amp_future_wait_for(arg, 30000);
    return NULL;
}

Test(cpu, a_child_forked_while_a_thread_waits_on_a_future_can_wait_on_its_own, .timeout = 120)
{
    amp_accelerator *acc = cpu_acc();
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    amp_program *p = test_build(acc, gate_kernels);
    enum { N = 8 };
    static int x[N], y[N];
    memset(x, 0, sizeof x);
    amp_array_view *vx = test_view(x, sizeof(int), amp_extent_1d(N), AMP_READ_WRITE);
    static gate_watch w;
    atomic_store(&w.gate, 0);
    atomic_store(&w.forced, 0);
    amp_arg gated[] = {amp_arg_view(vx), amp_arg_uint64((uint64_t)(uintptr_t)&w.gate)};
    amp_future *f = NULL;
    ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(N), test_kernel(p, "gated_inc"), gated, 2, &f));
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, wait_on_gated, f), 0);
    usleep(200000); /* the thread sleeps in its wait */
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(60);
        amp_accelerator_view *q2 = NULL;
        int bad = amp_accelerator_view_create(acc, &q2) != AMP_OK;
        amp_array_view *vy = NULL;
        bad = bad || amp_array_view_create(y, sizeof(int), amp_extent_1d(N), AMP_READ_WRITE, &vy) != AMP_OK;
        amp_arg copy[] = {amp_arg_view(vy), amp_arg_view(vy)};
        for (int r = 0; r < 4 && !bad; ++r) {
            amp_future *g = NULL;
            bad = amp_parallel_for_each_async(q2, amp_extent_1d(N), test_kernel(p, "plus_one"), copy, 2, &g) != AMP_OK;
            bad = bad || amp_future_wait_for(g, 10000) != AMP_OK;
            amp_future_destroy(g);
        }
        _exit(bad ? 3 : 0);
    }
    cr_assert_geq(pid, 0);
    int ws = 0;
    waitpid(pid, &ws, 0);
    atomic_store(&w.gate, 1);
    pthread_join(t, NULL);
    ASSERT_OK(amp_future_wait(f));
    ASSERT_OK(amp_future_destroy(f));
    cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "the child %s %d", WIFSIGNALED(ws) ? "was killed by signal" : "exited",
              WIFSIGNALED(ws) ? WTERMSIG(ws) : WEXITSTATUS(ws));
    ASSERT_OK(amp_array_view_destroy(vx));
    ASSERT_OK(amp_program_destroy(p));
    ASSERT_OK(amp_accelerator_view_destroy(q));
}

BOTH_PATHS(debug_mode_reports_out_of_bounds_read_in_tiled_2d_kernel)
{
    setenv("AMP_DEBUG", "1", 1);
    amp_accelerator *acc = cpu_acc();
    amp_program *p = test_build(acc, cpu_kernels);
    amp_kernel *k = test_kernel(p, "oob_read_2d");
    enum { R = 8, C = 8 };
    int in[R * C], out[R * C];
    for (int i = 0; i < R * C; ++i) in[i] = i;
    amp_array_view *vi = test_view(in, sizeof(int), amp_extent_2d(R, C), AMP_READ_ONLY);
    amp_array_view *vo = test_view(out, sizeof(int), amp_extent_2d(R, C), AMP_WRITE_ONLY);
    amp_tiled_extent te;
    ASSERT_OK(amp_extent_tile(amp_extent_2d(R, C), (int[]){4, 4}, &te));
    amp_arg a[] = {amp_arg_view(vi), amp_arg_view(vo)};
    ASSERT_STATUS(amp_parallel_for_each_tiled(NULL, te, k, a, 2), AMP_ERROR_OUT_OF_BOUNDS);
    const char *msg = amp_last_error();
    cr_log_info("%s", msg);
    assert_contains(msg, "oob_read_2d");
    assert_contains(msg, "parameter 0");
    assert_contains(msg, "extent (8, 8)");
    assert_contains(msg, "index (5, ");
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(p));
}

BOTH_PATHS(debug_mode_names_the_work_item_after_a_barrier)
{
    setenv("AMP_DEBUG", "1", 1);
    amp_accelerator *acc = cpu_acc();
    amp_program *p = test_build(acc, cpu_kernels);
    amp_kernel *k = test_kernel(p, "oob_after_barrier");
    enum { R = 8, C = 16, GUARD = 256 };
    static int in[R * C], out[R * C + GUARD];
    for (int i = 0; i < R * C; ++i) in[i] = i + 1;
    for (int i = 0; i < R * C + GUARD; ++i) out[i] = -7;
    amp_array_view *vi = test_view(in, sizeof(int), amp_extent_2d(R, C), AMP_READ_ONLY);
    amp_array_view *vo = test_view(out, sizeof(int), amp_extent_2d(R, C), AMP_WRITE_ONLY);
    amp_tiled_extent te;
    ASSERT_OK(amp_extent_tile(amp_extent_2d(R, C), (int[]){4, 8}, &te));
    amp_arg a[] = {amp_arg_view(vi), amp_arg_view(vo)};
    ASSERT_STATUS(amp_parallel_for_each_tiled(NULL, te, k, a, 2), AMP_ERROR_OUT_OF_BOUNDS);
    const char *msg = amp_last_error();
    cr_log_info("%s", msg);
    assert_contains(msg, "oob_after_barrier");
    assert_contains(msg, "parameter 1");
    assert_contains(msg, "index (7, 105)");
    assert_contains(msg, "extent (8, 16)");
    assert_contains(msg, "work-item local (3, 5) of tile (1, 0)");
    for (int i = R * C; i < R * C + GUARD; ++i)
        cr_assert_eq(out[i], -7, "int %d past the view was overwritten: %d", i - R * C, out[i]);
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(p));
}

Test(cpu, debug_mode_reports_section_past_the_view)
{
    setenv("AMP_DEBUG", "1", 1);
    amp_accelerator *acc = cpu_acc();
    amp_program *p = test_build(acc, cpu_kernels);
    amp_kernel *k = test_kernel(p, "oob_section");
    enum { N = 40, GUARD = 16 };
    float buf[N + GUARD];
    for (int i = 0; i < N + GUARD; ++i) buf[i] = -7.0f;
    amp_array_view *v = test_view(buf, sizeof(float), amp_extent_1d(N), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v)};
    ASSERT_STATUS(amp_parallel_for_each(NULL, amp_extent_1d(N), k, a, 1), AMP_ERROR_OUT_OF_BOUNDS);
    const char *msg = amp_last_error();
    cr_log_info("%s", msg);
    assert_contains(msg, "oob_section");
    assert_contains(msg, "parameter 0");
    assert_contains(msg, "index (44)"); /* the section's far corner, 5 + 40 - 1 */
    assert_contains(msg, "extent (40)");
    for (int i = N; i < N + GUARD; ++i)
        cr_assert_eq(buf[i], -7.0f, "float %d past the view was overwritten: %g", i - N, buf[i]);
    /* Nor what the kernel did not address inside it (v[0..2]: the bad
     * writes landed on v[0]). */
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < 3; ++i)
        cr_assert_eq(buf[i], -7.0f, "float %d, which no work-item addressed, was overwritten: %g", i, buf[i]);
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
}

Test(cpu, debug_mode_accepts_in_bounds_projection_and_section)
{
    setenv("AMP_DEBUG", "1", 1);
    amp_accelerator *acc = cpu_acc();
    amp_program *p = test_build(acc, cpu_kernels);
    amp_kernel *k = test_kernel(p, "in_bounds");
    enum { R = 13, C = 7 };
    float a[R * C], b[R * C];
    test_fill_random(a, R * C, 3);
    amp_array_view *va = test_view(a, sizeof(float), amp_extent_2d(R, C), AMP_READ_ONLY);
    amp_array_view *vb = test_view(b, sizeof(float), amp_extent_2d(R, C), AMP_WRITE_ONLY);
    amp_arg args[] = {amp_arg_view(va), amp_arg_view(vb)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_2d(R, C), k, args, 2));
    ASSERT_OK(amp_array_view_synchronize(vb));
    for (int i = 0; i < R * C; ++i) cr_assert_float_eq(b[i], 3.0f * a[i], 1e-6f, "element %d", i);
    ASSERT_OK(amp_array_view_destroy(va));
    ASSERT_OK(amp_array_view_destroy(vb));
    ASSERT_OK(amp_program_destroy(p));
}

/* ----------------------------------------------------- divergent barrier */

static void divergent_case(const char *kernel)
{
    amp_accelerator *acc = cpu_acc();
    amp_program *p = test_build(acc, cpu_kernels);
    amp_kernel *k = test_kernel(p, kernel);
    int v[32 * 4] = {0};
    amp_array_view *vv = test_view(v, sizeof(int), amp_extent_1d(32 * 4), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(vv)};
    ASSERT_STATUS(amp_parallel_for_each_tiled(NULL, tile1(32 * 4, 32), k, a, 1), AMP_ERROR_DEVICE);
    const char *msg = amp_last_error();
    cr_log_info("%s", msg);
    assert_contains(msg, "divergent barrier");
    assert_contains(msg, kernel);
    /* The accelerator still works afterwards. */
    amp_kernel *ok = test_kernel(p, "no_barrier_2d");
    int w[8 * 16] = {0};
    amp_array_view *vw = test_view(w, sizeof(int), amp_extent_2d(8, 16), AMP_READ_WRITE);
    amp_tiled_extent te;
    ASSERT_OK(amp_extent_tile(amp_extent_2d(8, 16), (int[]){4, 8}, &te));
    amp_arg b[] = {amp_arg_view(vw)};
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, te, ok, b, 1));
    ASSERT_OK(amp_array_view_destroy(vw));
    ASSERT_OK(amp_array_view_destroy(vv));
    ASSERT_OK(amp_program_destroy(p));
}

BOTH_PATHS(divergent_barrier_some_return_is_reported, .timeout = 60) { divergent_case("diverge_return"); }
BOTH_PATHS(divergent_barrier_first_item_skips_is_reported, .timeout = 60) { divergent_case("diverge_first_skips"); }
BOTH_PATHS(divergent_barrier_extra_round_is_reported, .timeout = 60) { divergent_case("diverge_extra_round"); }
/* Once a tile is divergent, a work-item waiting on another's progress
 * still gets it (the launch hung: the barriers no longer handed the
 * thread on). Fibers only: the loop transformation leaves this kernel on
 * fibers anyway (a break under a condition that differs between items). */
Test(cpu, divergent_barrier_in_a_loop_others_wait_on_is_reported, .timeout = 30)
{
    divergent_case("diverge_loop_exit");
}
/* Work-item 0 met no barrier, so the others ran as a plain loop on the
 * thread's stack, where a barrier could not hand the thread on: work-item
 * 1 waited for ever for the flag work-item 31 sets. The rest of the tile
 * now goes on as fibers. Fibers only, as above (a return before a later
 * barrier keeps the kernel off the loop version). */
Test(cpu, divergent_barrier_after_the_first_item_returned_others_wait_on_is_reported, .timeout = 30)
{
    divergent_case("diverge_first_leaves_others_wait");
}
/* The review's: where the work-items before the first to reach a barrier
 * had all returned (here 0 to 7), the report said one had ("1 work-item
 * (local 0)"). Fibers: the path where they run as a plain loop. */
Test(cpu, divergent_barrier_counts_every_work_item_that_returned_before_it, .timeout = 30)
{
    setenv("AMP_CPU_TILED", "fibers", 1);
    divergent_case("diverge_first_eight_skip");
    assert_contains(amp_last_error(), "local (8) reached a barrier that the 8 work-items before it returned");
}
/* The same, compiled with the debug checks. */
BOTH_PATHS(divergent_barrier_in_debug_mode_is_reported, .timeout = 60)
{
    setenv("AMP_DEBUG", "1", 1);
    divergent_case("diverge_extra_round");
}

/* ------------------------------------------------------------- compiler */

Test(cpu, missing_compiler_makes_cpu_unavailable)
{
    setenv("AMP_CXX", "/nonexistent/c++", 1);
    amp_accelerator *acc = NULL;
    ASSERT_OK(amp_accelerator_find("cpu", &acc));
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    cr_assert(!info.is_available, "CPU accelerator available with AMP_CXX=/nonexistent/c++");
    assert_contains(info.unavailable_reason, "/nonexistent/c++");
    assert_contains(info.unavailable_reason, "compiler");
    amp_program *p = (amp_program *)1;
    amp_status st = amp_program_build(acc, cpu_kernels, NULL, &p);
    cr_assert(st == AMP_ERROR_UNSUPPORTED || st == AMP_ERROR_NO_ACCELERATOR,
              "amp_program_build returned %s: %s", amp_status_name(st), amp_last_error());
    cr_assert_null(p);
    assert_contains(amp_last_error(), "/nonexistent/c++");
}

/* A new directory of TMPDIR (removed at exit) in dir, named hipamp-TAG-...,
 * holding cxx: a compiler that runs the shell line before (printf-style,
 * %s the directory) and then the real compiler (AMP_CXX's or c++);
 * AMP_CXX names it. Before the accelerator is first used. */
static void wrapped_compiler(char *dir, size_t cap, const char *tag, const char *before)
{
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(dir, cap, "%s/hipamp-%s-XXXXXX", base, tag);
    cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
    test_remove_at_exit(dir);
    const char *real = getenv("AMP_CXX") && *getenv("AMP_CXX") ? getenv("AMP_CXX") : "c++";
    char path[PATH_MAX + 8], line[2 * PATH_MAX];
    snprintf(path, sizeof path, "%s/cxx", dir);
    snprintf(line, sizeof line, before, dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    cr_assert(fprintf(f, "#!/bin/sh\n%s\nexec %s \"$@\"\n", line, real) > 0);
    cr_assert_eq(fclose(f), 0);
    cr_assert_eq(chmod(path, 0755), 0);
    setenv("AMP_CXX", path, 1);
}

/* wrapped_compiler, with a disk cache of its own (empty) in its directory:
 * every build compiles. */
static void wrapped_compiler_fresh_cache(const char *tag, const char *before)
{
    char dir[PATH_MAX], cache[PATH_MAX + 8];
    wrapped_compiler(dir, sizeof dir, tag, before);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    setenv("AMP_CACHE_DIR", cache, 1);
}

/* The review's: the questions the library asks the compiler before any
 * build (its version, at the first use; its include directories, at the
 * first build) waited 60 s for an answer whatever AMP_COMPILE_TIMEOUT
 * said: a compiler that hung held the first amp_accelerator_find for a
 * minute, and a build that met a hung question first returned after 61 s
 * saying it had timed out after AMP_COMPILE_TIMEOUT's 5. Now each question
 * waits at most AMP_COMPILE_TIMEOUT (60 s where that is longer). */
Test(cpu, a_compiler_that_never_says_its_version_holds_the_first_use_no_longer_than_AMP_COMPILE_TIMEOUT,
     .timeout = 50)
{
    char dir[PATH_MAX];
    wrapped_compiler(dir, sizeof dir, "hungcxx", "case \"$*\" in *--version*) exec sleep 40;; esac");
    setenv("AMP_COMPILE_TIMEOUT", "2", 1);
    double t0 = test_now_s();
    amp_accelerator *acc = NULL;
    ASSERT_OK(amp_accelerator_find("cpu", &acc));
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    double took = test_now_s() - t0;
    cr_assert(!info.is_available, "available with a compiler that never answered");
    assert_contains(info.unavailable_reason, "no answer to --version within 2 s");
    cr_assert_lt(took, 20.0, "the first use waited %.1f s for the compiler (AMP_COMPILE_TIMEOUT=2)", took);
}

/* Session 104's: the question's time also counts against the build's
 * budget. It did not: a compiler that hung on the include-directory
 * question (the build's include scan asks it) and then on the compile held
 * the build for twice AMP_COMPILE_TIMEOUT (8 + 8 s here), and the message
 * said it timed out after 8. Now AMP_COMPILE_TIMEOUT counts from the
 * build's start, and the message says where the time went. */
Test(cpu, a_compiler_that_never_lists_its_include_directories_holds_a_build_no_longer_than_AMP_COMPILE_TIMEOUT,
     .timeout = 50)
{
    wrapped_compiler_fresh_cache("hungcxx", "case \"$*\" in *--version*) ;; *) exec sleep 40;; esac");
    setenv("AMP_PREBUILT", "0", 1);
    setenv("AMP_COMPILE_TIMEOUT", "8", 1);
    double t0 = test_now_s();
    amp_program *p = NULL;
    /* An angled #include: the scan asks the compiler where its headers are. */
    static const char src[] = "#include <climits>\n"
                              "AMP_KERNEL(fill, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = INT_MAX; }\n";
    amp_status st = amp_program_build(cpu_acc(), src, NULL, &p);
    double took = test_now_s() - t0;
    cr_assert_eq(st, AMP_ERROR_COMPILE, "%s: %s", amp_status_name(st), amp_last_error());
    assert_contains(amp_last_error(), "timed out after 8 seconds");
    assert_contains(amp_last_error(), "s of them went before this compile began: the include scan");
    cr_assert_lt(took, 15.0, "the build took %.1f s (AMP_COMPILE_TIMEOUT=8; 16 or more before): %s", took,
                 amp_last_error());
}

/* The review's: a compiler that exits 0 having written something that is
 * no shared object gave AMP_ERROR_DEVICE, "cannot load a module:
 * /proc/self/fd/4: invalid ELF header" twice over, naming neither the
 * compiler nor the source. Now the build fails as a build (COMPILE),
 * naming both and the bytes; an ELF header the loader still refuses is
 * said once. */
static void garbage_compiler(const char *tag, const char *write_out)
{
    char line[1024];
    snprintf(line, sizeof line,
             "o=; p=; for a in \"$@\"; do [ \"$p\" = -o ] && o=$a; p=$a; done\n"
             "case \"$o\" in *kernel.so) %s; exit 0;; esac",
             write_out);
    wrapped_compiler_fresh_cache(tag, line);
    setenv("AMP_CPU_PCH", "0", 1);
    setenv("AMP_PREBUILT", "0", 1);
}

Test(cpu, a_compiler_that_writes_no_shared_object_fails_the_build, .timeout = 60)
{
    garbage_compiler("garbagecxx", "printf 'not an object' > \"$o\"");
    amp_program *p = (amp_program *)1;
    ASSERT_STATUS(amp_program_build(cpu_acc(), cpu_kernels, NULL, &p), AMP_ERROR_COMPILE);
    cr_assert_null(p);
    const char *e = amp_last_error();
    assert_contains(e, "wrote 13 bytes that are no ELF shared object (they begin 6e 6f 74 20");
    assert_contains(e, "garbagecxx");
}

Test(cpu, a_module_the_loader_refuses_is_said_once, .timeout = 60)
{
    /* A 64-bit ELF header of a shared object, and nothing behind it. */
    garbage_compiler("brokenelf", "{ printf '\\177ELF\\002\\001\\001'; head -c 9 /dev/zero; printf '\\003'; "
                                  "head -c 47 /dev/zero; } > \"$o\"");
    amp_program *p = (amp_program *)1;
    ASSERT_STATUS(amp_program_build(cpu_acc(), cpu_kernels, NULL, &p), AMP_ERROR_DEVICE);
    cr_assert_null(p);
    const char *e = amp_last_error(), *first = strstr(e, "/proc/self/fd/");
    cr_assert(first && !strstr(first + 1, "/proc/self/fd/"), "the loader's refusal, said once: %s", e);
}

/* A user reduction whose compile is stopped by AMP_COMPILE_TIMEOUT says so,
 * and blames nothing: the message blamed "the code hipamp generated around
 * the expressions" (a type that does not fit) and quoted an empty error
 * line, the log holding no diagnostic. The compiler here is the real one
 * after a sleep longer than the time-out, on the whole build's compile. */
Test(cpu, a_user_reduction_whose_compile_times_out_is_not_blamed_on_its_code, .timeout = 120)
{
    wrapped_compiler_fresh_cache("slowcxx", "case \"$*\" in *kernel.so*) sleep 5;; esac");
    setenv("AMP_CPU_PCH", "0", 1);
    setenv("AMP_CPU_COMPILE_JOBS", "1", 1);
    setenv("AMP_COMPILE_TIMEOUT", "1", 1);
    amp_reduction_desc d = {.name = "slow_sum", .inputs = "float x", .type = AMP_TYPE_FLOAT32, .map = "x",
                            .reduce = "a + b", .identity = "0"};
    amp_reduction *r = NULL;
    ASSERT_STATUS(amp_reduction_create(cpu_acc(), &d, &r), AMP_ERROR_COMPILE);
    cr_assert_null(r);
    const char *e = amp_last_error();
    cr_assert(strstr(e, "reduction 'slow_sum' could not be compiled") && strstr(e, "timed out") &&
                  !strstr(e, "generated around"),
              "%s", e);
}

Test(cpu, compile_error_names_the_user_line)
{
    amp_accelerator *acc = cpu_acc();
    const char *src = "// line 1\n"
                      "AMP_KERNEL(broken, amp::index<1> i, amp::array_view<int, 1> v)\n"
                      "{\n"
                      "    int ok = 1;\n"
                      "    v[i] = ok + undeclared_name_on_line_5;\n"
                      "}\n";
    amp_program *p = (amp_program *)1;
    ASSERT_STATUS(amp_program_build(acc, src, NULL, &p), AMP_ERROR_COMPILE);
    cr_assert_null(p);
    const char *msg = amp_last_error();
    cr_log_info("%s", msg);
    assert_contains(msg, "undeclared_name_on_line_5");
    assert_contains(msg, ":5:");
}

Test(cpu, user_options_reach_the_compiler)
{
    amp_accelerator *acc = cpu_acc();
    const char *src = "#ifndef MY_VALUE\n#error MY_VALUE missing\n#endif\n"
                      "AMP_KERNEL(set_value, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = MY_VALUE; }\n";
    amp_program *p = NULL;
    ASSERT_OK(amp_program_build(acc, src, "-DMY_VALUE=42  -O2", &p));
    amp_kernel *k = test_kernel(p, "set_value");
    int v[10] = {0};
    amp_array_view *vv = test_view(v, sizeof(int), amp_extent_1d(10), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(vv)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(10), k, a, 1));
    ASSERT_OK(amp_array_view_synchronize(vv));
    for (int i = 0; i < 10; ++i) cr_assert_eq(v[i], 42);
    ASSERT_OK(amp_array_view_destroy(vv));
    ASSERT_OK(amp_program_destroy(p));
}

/* C++17's mathematical special functions are left out of CPU kernels (no
 * GPU compiler has them; libstdc++ instantiated them in every compile):
 * a kernel that calls one fails to compile naming it, unless its build asks
 * for them with the standard's switch, which also brings back what
 * libstdc++'s <math.h> declares from them. */
Test(cpu, special_math_functions_only_when_the_build_asks_for_them)
{
    amp_accelerator *acc = cpu_acc();
    const char *src = "AMP_KERNEL(zeta2, amp::index<1> i, amp::array_view<double, 1> v)\n"
                      "{ v[i] = std::riemann_zeta(2.0) + i[0]; }\n";
    amp_program *p = (amp_program *)1;
    ASSERT_STATUS(amp_program_build(acc, src, NULL, &p), AMP_ERROR_COMPILE);
    cr_assert_null(p);
    assert_contains(amp_last_error(), "riemann_zeta");
    p = NULL;
    ASSERT_OK(amp_program_build(acc, src, "-D__STDCPP_WANT_MATH_SPEC_FUNCS__=1", &p));
    double v[4] = {0, 0, 0, 0};
    amp_array_view *vv = test_view(v, sizeof(double), amp_extent_1d(4), AMP_WRITE_ONLY);
    amp_arg a[] = {amp_arg_view(vv)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(4), test_kernel(p, "zeta2"), a, 1));
    ASSERT_OK(amp_array_view_synchronize(vv));
    for (int i = 0; i < 4; ++i)
        cr_assert(fabs(v[i] - (1.6449340668482264 + i)) < 1e-12, "item %d: zeta(2) + %d = %.17g", i, i, v[i]);
    ASSERT_OK(amp_array_view_destroy(vv));
    ASSERT_OK(amp_program_destroy(p));
}

/* A user's optimisation level below -O2 (debugging with -O0 -g): simple
 * and tiled kernels build and give the same results. The simple kernel's
 * plain path is a function of its own optimisation level under GCC, which
 * once made every simple kernel fail to compile at -O0, -O1 and -Og. */
Test(cpu, user_optimisation_levels_below_O2_build_and_run)
{
    amp_accelerator *acc = cpu_acc();
    const char *src = "AMP_KERNEL(scale_add, amp::index<1> i, float s, amp::array_view<const float, 1> x,\n"
                      "           amp::array_view<float, 1> y)\n"
                      "{ y[i] += s * x[i]; }\n"
                      "AMP_TILED_KERNEL(tile_reverse, amp::tiled_index<32> t, amp::array_view<const int, 1> in,\n"
                      "                 amp::array_view<int, 1> out)\n"
                      "{\n"
                      "    tile_static int s[32];\n"
                      "    s[t.local[0]] = in[t.global];\n"
                      "    t.barrier.wait();\n"
                      "    out[t.global] = s[31 - t.local[0]];\n"
                      "}\n";
    static const char *const levels[] = {"-O0 -g", "-O1", "-Og", "-O", "-O0 -O3", "-Os", "-O00", "--optimize=0",
                                         "--optimize", "-O3 -Xlinker -O1"};
    enum { N = 96 };
    for (size_t l = 0; l < sizeof levels / sizeof levels[0]; ++l) {
        amp_program *p = NULL;
        amp_status st = amp_program_build(acc, src, levels[l], &p);
        cr_assert_eq(st, AMP_OK, "options \"%s\": %s", levels[l], amp_last_error());
        float x[N], y[N];
        int in[N], out[N];
        for (int i = 0; i < N; ++i) {
            x[i] = (float)i;
            y[i] = 1.0f;
            in[i] = 3 * i + 1;
            out[i] = 0;
        }
        amp_array_view *vx = test_view(x, sizeof(float), amp_extent_1d(N), AMP_READ_ONLY);
        amp_array_view *vy = test_view(y, sizeof(float), amp_extent_1d(N), AMP_READ_WRITE);
        amp_arg a[] = {amp_arg_float32(0.5f), amp_arg_view(vx), amp_arg_view(vy)};
        ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(N), test_kernel(p, "scale_add"), a, 3));
        ASSERT_OK(amp_array_view_synchronize(vy));
        for (int i = 0; i < N; ++i)
            cr_assert_eq(y[i], 1.0f + 0.5f * (float)i, "\"%s\": y[%d] = %g", levels[l], i, y[i]);
        amp_array_view *vi = test_view(in, sizeof(int), amp_extent_1d(N), AMP_READ_ONLY);
        amp_array_view *vo = test_view(out, sizeof(int), amp_extent_1d(N), AMP_WRITE_ONLY);
        amp_arg b[] = {amp_arg_view(vi), amp_arg_view(vo)};
        ASSERT_OK(amp_parallel_for_each_tiled(NULL, tile1(N, 32), test_kernel(p, "tile_reverse"), b, 2));
        ASSERT_OK(amp_array_view_synchronize(vo));
        for (int i = 0; i < N; ++i)
            cr_assert_eq(out[i], in[i / 32 * 32 + 31 - i % 32], "\"%s\": out[%d] = %d", levels[l], i, out[i]);
        ASSERT_OK(amp_array_view_destroy(vx));
        ASSERT_OK(amp_array_view_destroy(vy));
        ASSERT_OK(amp_array_view_destroy(vi));
        ASSERT_OK(amp_array_view_destroy(vo));
        ASSERT_OK(amp_program_destroy(p));
    }
}

/* Options that would leave no module the library can load, write outside
 * its build directory, or end the process at dlopen are refused before the
 * compiler runs, naming the option; the program pointer stays NULL. */
Test(cpu, options_the_accelerator_cannot_honour_are_refused)
{
    amp_accelerator *acc = cpu_acc();
    const char *src = "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 1; }\n";
    static const char *const refused[][2] = {
        {"-E", "'-E'"},       {"-c", "'-c'"},           {"-S", "'-S'"},         {"-o /tmp/elsewhere.so", "'-o'"},
        {"-ofile", "'-ofile'"}, {"-x c", "'-x'"},        {"-MF deps.d", "'-MF'"}, {"-MMD", "'-MMD'"},
        {"-###", "'-###'"},   {"-save-temps", "'-save-temps'"}, {"-DOK=1 -static", "'-static'"},
        {"--help", "'--help'"}, {"--compile", "'--compile'"}, {"-r", "'-r'"}, {"--language=c", "'--language=c'"},
        {"-fsyntax-only", "'-fsyntax-only'"}, {"-print-search-dirs", "'-print-search-dirs'"},
        {"-dumpversion", "'-dumpversion'"}, {"-Wl,-O1,-o,out.so", "'-Wl,-O1,-o,out.so'"},
        {"-Xlinker -o -Xlinker out.so", "'-Xlinker -o'"}, {"-aux-info protos.h", "'-aux-info'"},
        /* files of their own, other programs, options the check cannot see */
        {"-Wp,-MD,/tmp/deps.d", "'-Wp,-MD,/tmp/deps.d'"}, {"-Wl,-Map=/tmp/out.map", "'-Wl,-Map=/tmp/out.map'"},
        {"-Xlinker -Map=/tmp/out.map", "'-Xlinker -Map=/tmp/out.map'"},
        {"-Xpreprocessor -MD", "'-Xpreprocessor -MD'"}, {"-fopt-info-all=/tmp/report", "'-fopt-info-all=/tmp/report'"},
        {"-fdump-tree-all", "'-fdump-tree-all'"}, {"-fprofile-generate", "'-fprofile-generate'"},
        {"--coverage", "'--coverage'"}, {"@/tmp/more-options", "'@/tmp/more-options'"},
        {"-wrapper gdb,--args", "'-wrapper'"}, {"-B/tmp/tools", "'-B/tmp/tools'"}, {"-specs=my.specs", "'-specs=my.specs'"},
        /* the assembler's files: a listing, a dependency list; files of options for the tools */
        {"-Wa,-adhln=/tmp/k.lst", "'-Wa,-adhln=/tmp/k.lst'"}, {"-Wa,--MD,/tmp/as.d", "'-Wa,--MD,/tmp/as.d'"},
        {"-Xassembler -al=/tmp/k.lst", "'-Xassembler -al=/tmp/k.lst'"}, {"-Wl,@/tmp/opts", "'-Wl,@/tmp/opts'"},
        /* clang's files of its own (AMP_CXX=clang++), other toolchains, linkers and plugins */
        {"-ftime-trace", "'-ftime-trace'"}, {"-ftime-trace=/tmp/t.json", "'-ftime-trace=/tmp/t.json'"},
        {"-fprofile-instr-generate", "'-fprofile-instr-generate'"},
        {"-fprofile-instr-generate=/tmp/p.profraw", "'-fprofile-instr-generate=/tmp/p.profraw'"},
        {"-fprofile-generate=/tmp/p", "'-fprofile-generate=/tmp/p'"}, {"-fcs-profile-generate", "'-fcs-profile-generate'"},
        {"-fsave-optimization-record", "'-fsave-optimization-record'"},
        {"-fsave-optimization-record=yaml", "'-fsave-optimization-record=yaml'"},
        {"-foptimization-record-file=/tmp/r.yaml", "'-foptimization-record-file=/tmp/r.yaml'"},
        {"-MJ /tmp/cdb.json", "'-MJ'"}, {"-fmodules-cache-path=/tmp/mc", "'-fmodules-cache-path=/tmp/mc'"},
        {"-fmodules", "'-fmodules'"}, {"-fcrash-diagnostics-dir=/tmp/crash", "'-fcrash-diagnostics-dir=/tmp/crash'"},
        {"--save-temps", "'--save-temps'"}, {"-save-temps=obj", "'-save-temps=obj'"},
        {"-fproc-stat-report=/tmp/s.csv", "'-fproc-stat-report=/tmp/s.csv'"},
        {"--serialize-diagnostics /tmp/d.dia", "'--serialize-diagnostics'"},
        {"-gen-cdb-fragment-path /tmp/cdb", "'-gen-cdb-fragment-path'"}, {"-Xclang -ast-dump", "'-Xclang'"},
        {"-mllvm -info-output-file=/tmp/i.txt", "'-mllvm -info-output-file=/tmp/i.txt'"},
        {"--gcc-toolchain=/tmp/gcc", "'--gcc-toolchain=/tmp/gcc'"}, {"-fuse-ld=/tmp/ld", "'-fuse-ld=/tmp/ld'"},
        {"--ld-path=/tmp/ld", "'--ld-path=/tmp/ld'"}, {"-fplugin=/tmp/p.so", "'-fplugin=/tmp/p.so'"},
        {"-fpass-plugin=/tmp/p.so", "'-fpass-plugin=/tmp/p.so'"}, {"-ccc-install-dir /tmp", "'-ccc-install-dir'"},
        {"-fmodule-mapper=|/tmp/m", "'-fmodule-mapper=|/tmp/m'"},
        /* the linker's: a plugin, lld's reproducer archive and reports, LTO's files */
        {"-Wl,-plugin,/tmp/p.so", "'-Wl,-plugin,/tmp/p.so'"}, {"-Wl,--reproduce=/tmp/r.tar", "'-Wl,--reproduce=/tmp/r.tar'"},
        {"-Xlinker --why-extract=/tmp/w.txt", "'-Xlinker --why-extract=/tmp/w.txt'"},
        {"-Wl,--thinlto-cache-dir=/tmp/c", "'-Wl,--thinlto-cache-dir=/tmp/c'"}, {"-Wl,-save-temps", "'-Wl,-save-temps'"},
        /* the linker's and assembler's abbreviations of those (GNU ld and as
         * take any unambiguous one), and GCC's times appended to a file */
        {"-Wl,--Ma=/tmp/m.map", "'-Wl,--Ma=/tmp/m.map'"}, {"-Xlinker --Ma=/tmp/m.map", "'-Xlinker --Ma=/tmp/m.map'"},
        {"-Wl,-Ma=/tmp/m.map", "'-Wl,-Ma=/tmp/m.map'"}, {"-Wl,--outp=/tmp/o.so", "'-Wl,--outp=/tmp/o.so'"},
        {"-Wa,--M=/tmp/as.d", "'-Wa,--M=/tmp/as.d'"}, {"-Xassembler --M=/tmp/as.d", "'-Xassembler --M=/tmp/as.d'"},
        {"-Wl,--error-handling-script=/tmp/s", "'-Wl,--error-handling-script=/tmp/s'"},
        {"-time", "'-time'"}, {"-time=/tmp/t.txt", "'-time=/tmp/t.txt'"},
        /* the call graph's relocations (cpu_elf.c): every function in a section of its own */
        {"-fno-function-sections", "'-fno-function-sections' is not allowed: the library reads which kernels call"},
        /* a value missing at the end would take the library's next word */
        {"-DOK=1 -include", "'-include' needs a value"}, {"-Xlinker", "'-Xlinker' needs a value"}};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
        amp_program *p = (amp_program *)1;
        amp_status st = amp_program_build(acc, src, refused[i][0], &p);
        cr_assert_eq(st, AMP_ERROR_INVALID_ARGUMENT, "options \"%s\": %s (%s)", refused[i][0], amp_status_name(st),
                     amp_last_error());
        cr_assert_null(p, "options \"%s\": a program was returned", refused[i][0]);
        assert_contains(amp_last_error(), refused[i][1]);
    }
    /* AddressSanitizer: only where its runtime is in the process already
     * (an ASan build of the tests); else loading would end the process. */
    amp_program *p = NULL;
    amp_status st = amp_program_build(acc, src, "-fsanitize=address", &p);
    if (dlsym(RTLD_DEFAULT, "__asan_init")) {
        cr_assert_eq(st, AMP_OK, "-fsanitize=address with ASan loaded: %s", amp_last_error());
        ASSERT_OK(amp_program_destroy(p));
    } else {
        cr_assert_eq(st, AMP_ERROR_INVALID_ARGUMENT, "-fsanitize=address without ASan: %s", amp_status_name(st));
        assert_contains(amp_last_error(), "'-fsanitize=address' needs the sanitizer's runtime");
    }
    /* LeakSanitizer the same (its runtime cannot be loaded late: the
     * module failed to load, AMP_ERROR_DEVICE); UBSan's loads late */
    st = amp_program_build(acc, src, "-fsanitize=leak", &p);
    if (dlsym(RTLD_DEFAULT, "__lsan_init")) {
        cr_assert_eq(st, AMP_OK, "-fsanitize=leak with LSan loaded: %s", amp_last_error());
        ASSERT_OK(amp_program_destroy(p));
    } else {
        cr_assert_eq(st, AMP_ERROR_INVALID_ARGUMENT, "-fsanitize=leak without LSan: %s (%s)", amp_status_name(st),
                     amp_last_error());
        assert_contains(amp_last_error(), "'-fsanitize=leak' needs the sanitizer's runtime");
    }
    ASSERT_OK(amp_program_build(acc, src, "-fsanitize=undefined", &p));
    ASSERT_OK(amp_program_destroy(p));
    /* ... and switched off again it builds; ordinary options build */
    ASSERT_OK(amp_program_build(acc, src, "-fsanitize=address -fno-sanitize=all", &p));
    ASSERT_OK(amp_program_destroy(p));
    ASSERT_OK(amp_program_build(acc, src, "-DX=1 -O2 -g -static-libstdc++ -Wl,-O1 -fopt-info-vec -Wp,-DY=2 -Wa,--noexecstack,-alm -fuse-ld=bfd "
                                 "-Wl,--as-needed,--gc-sections,-z,relro -Xlinker --build-id",
                                 &p));
    ASSERT_OK(amp_program_destroy(p));
}

/* Linker inputs (a library, an object or archive, a linker script, a run
 * path) are refused: nothing keyed or checked them, and an archive another
 * user left in a sticky directory was linked in and its constructor ran as
 * the user. Linker options without a file pass. */
Test(cpu, linker_inputs_are_refused)
{
    amp_accelerator *acc = cpu_acc();
    const char *src = "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 1; }\n";
    static const char *const refused[][2] = {
        {"-lm", "'-lm'"}, {"-l m", "'-l'"}, {"-L/tmp", "'-L/tmp'"}, {"--library=m", "'--library=m'"},
        {"-T /tmp/k.ld", "'-T'"}, {"-Wl,/tmp/evil.o", "'/tmp/evil.o'"}, {"-Wl,-O1,/tmp/libevil.a", "'/tmp/libevil.a'"},
        {"-Xlinker /tmp/evil.o", "'/tmp/evil.o'"}, {"-Wl,-lfoo", "'-lfoo'"}, {"-Wl,-L,/tmp", "'-L'"},
        {"-Wl,-rpath,/tmp", "'-rpath'"}, {"-Xlinker -rpath -Xlinker /tmp", "'-rpath'"}, {"-Wl,-R,/tmp", "'-R'"},
        {"-Wl,--rpath=/tmp", "'--rpath=/tmp'"}, {"-Wl,--version-script=/tmp/v", "'--version-script=/tmp/v'"},
        {"-Wl,--just-symbols,/tmp/s.o", "'--just-symbols'"}, {"-Wl,-z,now,/tmp/evil.o", "'/tmp/evil.o'"}};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
        amp_program *p = (amp_program *)1;
        amp_status st = amp_program_build(acc, src, refused[i][0], &p);
        cr_assert_eq(st, AMP_ERROR_INVALID_ARGUMENT, "options \"%s\": %s (%s)", refused[i][0], amp_status_name(st),
                     amp_last_error());
        cr_assert_null(p, "options \"%s\": a program was returned", refused[i][0]);
        assert_contains(amp_last_error(), refused[i][1]);
        assert_contains(amp_last_error(), "never see");
    }
    /* values of ld options, not files: a soname, -z keywords, a symbol */
    amp_program *p = NULL;
    ASSERT_OK(amp_program_build(acc, src, "-Wl,-z,now,-soname,libk.so -Xlinker -z -Xlinker relro -Wl,-e,k -Wl,-O1", &p));
    ASSERT_OK(amp_program_destroy(p));
}

/* Assembler words that are another input file: GNU as assembles every
 * piece that is not an option ('-' is standard input, '--' makes the
 * rest files), so -Wa,-,FILE assembled another user's code into the
 * module, unchecked and unkeyed (-Wa,FILE alone failed with an empty
 * log). Values of as options pass. */
Test(cpu, assembler_inputs_are_refused)
{
    amp_accelerator *acc = cpu_acc();
    const char *src = "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 1; }\n";
    static const char *const refused[][2] = {
        {"-Wa,/tmp/evil.s", "'/tmp/evil.s'"},        {"-Wa,-,/tmp/evil.s", "'-'"},
        {"-Wa,/tmp/evil.s,-", "'/tmp/evil.s'"},      {"-Xassembler /tmp/evil.s -Xassembler -", "'/tmp/evil.s'"},
        {"-Wa,--noexecstack,--,-x.s", "'--'"},       {"-Wa,--itbl,/tmp/t", "'--itbl'"},
        {"-Wa,-I,/tmp,/tmp/evil.s", "'/tmp/evil.s'"}, {"-Wa,--defsym -Wa,X=1,/tmp/evil.s", "'/tmp/evil.s'"}};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
        amp_program *p = (amp_program *)1;
        amp_status st = amp_program_build(acc, src, refused[i][0], &p);
        cr_assert_eq(st, AMP_ERROR_INVALID_ARGUMENT, "options \"%s\": %s (%s)", refused[i][0], amp_status_name(st),
                     amp_last_error());
        cr_assert_null(p, "options \"%s\": a program was returned", refused[i][0]);
        assert_contains(amp_last_error(), refused[i][1]);
        assert_contains(amp_last_error(), "never see");
    }
    /* values of as options, not files */
    amp_program *p = NULL;
    ASSERT_OK(amp_program_build(acc, src, "-Wa,--noexecstack,-I,/tmp -Wa,--defsym,AMP_X=1 -Xassembler --defsym "
                                          "-Xassembler AMP_Y=2",
                                &p));
    ASSERT_OK(amp_program_destroy(p));
}

/* A header that is a process's open file (/dev/stdin, /dev/fd/N,
 * /proc/self/fd/N) is no regular file: it was taken when the descriptor
 * was open on one (the compiler's stdin is another file), and nothing
 * keyed it. */
Test(cpu, header_that_is_an_open_descriptor_is_refused)
{
    amp_accelerator *acc = cpu_acc();
    char hdr[] = "/tmp/hipamp-test-fdhdr-XXXXXX";
    int fd = mkstemp(hdr);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, "#define V 7\n", 12), 12);
    cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);
    cr_assert_eq(dup2(fd, 0), 0); /* stdin: a regular file */
    char names[3][64];
    snprintf(names[0], sizeof names[0], "/dev/stdin");
    snprintf(names[1], sizeof names[1], "/dev/fd/%d", fd);
    snprintf(names[2], sizeof names[2], "/proc/self/fd/%d", fd);
    for (int i = 0; i < 3; ++i) {
        char src[320];
        snprintf(src, sizeof src,
                 "#include \"%s\"\n#ifndef V\n#define V 99\n#endif\n"
                 "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = V; }\n",
                 names[i]);
        amp_program *p = (amp_program *)1;
        amp_status st = amp_program_build(acc, src, NULL, &p);
        cr_assert_eq(st, AMP_ERROR_COMPILE, "#include \"%s\": %s (%s)", names[i], amp_status_name(st),
                     amp_last_error());
        cr_assert_null(p);
        assert_contains(amp_last_error(), names[i]);
        assert_contains(amp_last_error(), "not a regular file");
    }
    close(fd);
    unlink(hdr);
}

/* Options longer than the system lets a program be started with: the
 * compile fails saying why (before: "could not be started (exit status
 * 127)" and nothing more). */
Test(cpu, options_too_long_to_start_the_compiler_are_said)
{
    amp_accelerator *acc = cpu_acc();
    size_t n = 200000; /* one word over Linux's 128 KiB a word */
    char *o = malloc(n + 8);
    cr_assert_not_null(o);
    memcpy(o, "-DA=", 4);
    memset(o + 4, '1', n);
    o[n + 4] = '\0';
    amp_program *p = NULL;
    amp_status st = amp_program_build(acc, "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 1; }\n",
                                      o, &p);
    free(o);
    cr_assert_eq(st, AMP_ERROR_COMPILE, "%s: %s", amp_status_name(st), amp_last_error());
    cr_assert_null(p);
    assert_contains(amp_last_error(), "longer than the system allows (E2BIG)");
}

/* A program built again from the memory cache and its kernel fetched
 * again keep nothing once the program is destroyed: the module keeps one
 * record a kernel name. Before, every fetch added one (about 1.6 KB) for
 * as long as the cached module lived: 2,000 rounds kept 3 MB. (Under ASan
 * mallinfo2 does not see the heap, and this checks nothing.) */
Test(cpu, building_and_fetching_a_kernel_again_keeps_no_memory)
{
    amp_accelerator *acc = cpu_acc();
    const char *src = "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 1; }\n";
    amp_program *p = NULL;
    amp_kernel *k = NULL;
    ASSERT_OK(amp_program_build(acc, src, NULL, &p));
    ASSERT_OK(amp_program_get_kernel(p, "k", &k));
    ASSERT_OK(amp_program_destroy(p));
    size_t before = mallinfo2().uordblks;
    for (int i = 0; i < 2000; ++i) {
        ASSERT_OK(amp_program_build(acc, src, NULL, &p));
        ASSERT_OK(amp_program_get_kernel(p, "k", &k));
        ASSERT_OK(amp_program_destroy(p));
    }
    size_t after = mallinfo2().uordblks;
    cr_assert_lt(after, before + 256 * 1024, "2000 rounds kept %zu bytes", after - before);
}

/* ------------------------------------------------- tiles, fibers, threads */

#define RT_TILES 37
#define RT_N (64 * RT_TILES)

static void reverse_input(int *in)
{
    float f[RT_N];
    test_fill_random(f, RT_N, 11);
    for (int i = 0; i < RT_N; ++i) in[i] = (int)(f[i] * 1e6f) | 1; /* never 0 */
}

/* Runs reverse_tile; *wrong counts elements that differ from the reference. */
static void run_reverse(amp_accelerator *acc, const char *kernel, int *wrong)
{
    static int in[RT_N], out[RT_N];
    reverse_input(in);
    memset(out, 0, sizeof out);
    amp_program *p = test_build(acc, cpu_kernels);
    amp_kernel *k = test_kernel(p, kernel);
    amp_array_view *vi = test_view(in, sizeof(int), amp_extent_1d(RT_N), AMP_READ_ONLY);
    amp_array_view *vo = test_view(out, sizeof(int), amp_extent_1d(RT_N), AMP_WRITE_ONLY);
    amp_arg a[] = {amp_arg_view(vi), amp_arg_view(vo)};
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, tile1(RT_N, 64), k, a, 2));
    ASSERT_OK(amp_array_view_synchronize(vo));
    *wrong = 0;
    for (int t = 0; t < RT_TILES; ++t)
        for (int l = 0; l < 64; ++l) *wrong += out[t * 64 + l] != in[t * 64 + 63 - l];
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(p));
}

BOTH_PATHS(tile_reversal_with_barrier_is_right_and_wrong_without)
{
    amp_accelerator *acc = cpu_acc();
    int wrong = -1;
    run_reverse(acc, "reverse_tile", &wrong);
    cr_assert_eq(wrong, 0, "%d elements wrong with the barrier", wrong);
    /* The same kernel without its barrier reads tile_static before the other
     * work-items wrote it: proves the test needs the barrier. */
    run_reverse(acc, "reverse_tile_no_barrier", &wrong);
    cr_assert_gt(wrong, 0, "the barrier-free reversal was right: the test proves nothing");
}

static void rotate3d_reference(int *v, int d0, int d1, int d2)
{
    int s[24];
    for (int a = 0; a < d0; a += 2)
        for (int b = 0; b < d1; b += 3)
            for (int c = 0; c < d2; c += 4)
                for (int r = 0; r < 2; ++r) {
                    for (int l = 0; l < 24; ++l)
                        s[l] = v[((a + l / 12) * d1 + b + l / 4 % 3) * d2 + c + l % 4];
                    for (int l = 0; l < 24; ++l)
                        v[((a + l / 12) * d1 + b + l / 4 % 3) * d2 + c + l % 4] = s[(l + 1) % 24];
                }
}

/* Both tile paths, several shapes; the same answers for any thread count. */
static void tile_paths(int threads)
{
    amp_accelerator *acc = cpu_acc();
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    cr_assert_eq(info.compute_units, threads, "AMP_CPU_THREADS=%d gave %d compute units", threads,
                 info.compute_units);
    int wrong = -1;
    run_reverse(acc, "reverse_tile", &wrong);
    cr_assert_eq(wrong, 0, "reverse_tile: %d elements wrong", wrong);

    amp_program *p = test_build(acc, cpu_kernels);
    enum { D0 = 6, D1 = 9, D2 = 8 };
    static int v[D0 * D1 * D2], ref[D0 * D1 * D2];
    for (int i = 0; i < D0 * D1 * D2; ++i) v[i] = ref[i] = i * 7 + 1;
    rotate3d_reference(ref, D0, D1, D2);
    amp_array_view *vv = test_view(v, sizeof(int), amp_extent_3d(D0, D1, D2), AMP_READ_WRITE);
    amp_tiled_extent te;
    ASSERT_OK(amp_extent_tile(amp_extent_3d(D0, D1, D2), (int[]){2, 3, 4}, &te));
    amp_arg a[] = {amp_arg_view(vv)};
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, te, test_kernel(p, "rotate3d"), a, 1));
    ASSERT_OK(amp_array_view_synchronize(vv));
    for (int i = 0; i < D0 * D1 * D2; ++i) cr_assert_eq(v[i], ref[i], "rotate3d element %d", i);
    ASSERT_OK(amp_array_view_destroy(vv));

    enum { R = 12, C = 40 };
    static int w[R * C];
    for (int i = 0; i < R * C; ++i) w[i] = i;
    amp_array_view *vw = test_view(w, sizeof(int), amp_extent_2d(R, C), AMP_READ_WRITE);
    ASSERT_OK(amp_extent_tile(amp_extent_2d(R, C), (int[]){4, 8}, &te));
    amp_arg b[] = {amp_arg_view(vw)};
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, te, test_kernel(p, "no_barrier_2d"), b, 1));
    ASSERT_OK(amp_array_view_synchronize(vw));
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) {
            int want = (r * C + c) * 3 + r % 4 * 100 + c % 8 + r / 4 * 10000 + c / 8 * 1000;
            cr_assert_eq(w[r * C + c], want, "no_barrier_2d (%d, %d)", r, c);
        }
    ASSERT_OK(amp_array_view_destroy(vw));
    ASSERT_OK(amp_program_destroy(p));
}

BOTH_PATHS(one_thread_gives_the_same_results)
{
    setenv("AMP_CPU_THREADS", "1", 1);
    tile_paths(1);
}

BOTH_PATHS(three_threads_give_the_same_results)
{
    setenv("AMP_CPU_THREADS", "3", 1);
    tile_paths(3);
}

BOTH_PATHS(small_fiber_stacks_work)
{
    setenv("AMP_CPU_STACK_SIZE", "32K", 1);
    amp_accelerator *acc = cpu_acc();
    int wrong = -1;
    run_reverse(acc, "reverse_tile", &wrong);
    cr_assert_eq(wrong, 0);
}

/* --------------------------------------------------- prelude vocabulary */

BOTH_PATHS(hip_geometry_names_match_the_tiled_index)
{
    amp_accelerator *acc = cpu_acc();
    amp_program *p = test_build(acc, cpu_kernels);
    enum { R = 12, C = 32 };
    static int v[R * C];
    amp_array_view *vv = test_view(v, sizeof(int), amp_extent_2d(R, C), AMP_WRITE_ONLY);
    amp_tiled_extent te;
    ASSERT_OK(amp_extent_tile(amp_extent_2d(R, C), (int[]){4, 16}, &te));
    amp_arg a[] = {amp_arg_view(vv)};
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, te, test_kernel(p, "hip_geometry"), a, 1));
    ASSERT_OK(amp_array_view_synchronize(vv));
    for (int i = 0; i < R * C; ++i) cr_assert_eq(v[i], 1, "element %d", i);
    ASSERT_OK(amp_array_view_destroy(vv));
    ASSERT_OK(amp_program_destroy(p));
}

Test(cpu, atomics_and_math_names)
{
    amp_accelerator *acc = cpu_acc();
    amp_program *p = test_build(acc, cpu_kernels);
    enum { N = 100000 };
    int ia[4] = {0, -1, 1 << 30, 0};
    float fa[2] = {0, 0};
    amp_array_view *vi = test_view(ia, sizeof(int), amp_extent_1d(4), AMP_READ_WRITE);
    amp_array_view *vf = test_view(fa, sizeof(float), amp_extent_1d(2), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(vi), amp_arg_view(vf)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(N), test_kernel(p, "hip_atomics"), a, 2));
    ASSERT_OK(amp_array_view_synchronize(vi));
    ASSERT_OK(amp_array_view_synchronize(vf));
    cr_assert_eq(ia[0], N);
    cr_assert_eq(ia[1], N - 1);
    cr_assert_eq(ia[2], 0);
    cr_assert_eq(ia[3], 0x7fffffff);
    cr_assert_float_eq(fa[0], 0.5f * N, 1e-3f);
    cr_assert_float_eq(fa[1], 0.5f * N, 1e-3f); /* max(0.5, 0.125) + min(1, 0) per item */
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_array_view_destroy(vf));
    ASSERT_OK(amp_program_destroy(p));
}

Test(cpu, exception_escaping_a_kernel_is_a_device_error)
{
    amp_accelerator *acc = cpu_acc();
    amp_program *p = test_build(acc, cpu_kernels);
    int v[200] = {0};
    amp_array_view *vv = test_view(v, sizeof(int), amp_extent_1d(200), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(vv)};
    ASSERT_STATUS(amp_parallel_for_each(NULL, amp_extent_1d(200), test_kernel(p, "throws_at_77"), a, 1),
                  AMP_ERROR_DEVICE);
    assert_contains(amp_last_error(), "throws_at_77");
    ASSERT_OK(amp_array_view_destroy(vv));
    ASSERT_OK(amp_program_destroy(p));
}

BOTH_PATHS(exception_escaping_a_tiled_kernel_after_a_barrier_is_a_device_error)
{
    amp_accelerator *acc = cpu_acc();
    amp_program *p = test_build(acc, cpu_kernels);
    int v[64];
    for (int i = 0; i < 64; ++i) v[i] = i;
    amp_array_view *vv = test_view(v, sizeof(int), amp_extent_1d(64), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(vv)};
    ASSERT_STATUS(amp_parallel_for_each_tiled(NULL, tile1(64, 16), test_kernel(p, "tiled_throws"), a, 1),
                  AMP_ERROR_DEVICE);
    assert_contains(amp_last_error(), "tiled_throws");
    assert_contains(amp_last_error(), "exception");
    ASSERT_OK(amp_array_view_destroy(vv));
    ASSERT_OK(amp_program_destroy(p));
}

/* -------------------------------------------------------------- limits */

static void refused(amp_program *p, const char *kernel, const char *num1, const char *num2)
{
    amp_kernel *k = (amp_kernel *)1;
    ASSERT_STATUS(amp_program_get_kernel(p, kernel, &k), AMP_ERROR_UNSUPPORTED);
    cr_assert_null(k);
    const char *msg = amp_last_error();
    cr_log_info("%s", msg);
    assert_contains(msg, kernel);
    assert_contains(msg, num1);
    assert_contains(msg, num2);
}

/* The CPU accelerator reports what every GPU allows (48 KiB of tile_static,
 * 1024 work-items a tile) and refuses kernels past it, whichever path they
 * take: a kernel that works in CI works on every GPU. */
BOTH_PATHS(tile_static_and_tile_size_limits_are_the_gpus)
{
    amp_accelerator *acc = cpu_acc();
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    cr_assert_eq(info.max_tile_static_bytes, (size_t)48 * 1024);
    cr_assert_eq(info.max_tile_threads, 1024);
    amp_program *p = test_build(acc, cpu_limit_kernels);
    refused(p, "ts_52000", "52000", "49152");
    refused(p, "ts_64m", "67108864", "49152");
    refused(p, "tile_2048", "2048", "1024");
    /* exactly at the limit: runs */
    static int v[64 * 4];
    for (int i = 0; i < 64 * 4; ++i) v[i] = i * 3 + 1;
    amp_array_view *vv = test_view(v, sizeof(int), amp_extent_1d(64 * 4), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(vv)};
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, tile1(64 * 4, 64), test_kernel(p, "ts_48k"), a, 1));
    ASSERT_OK(amp_array_view_synchronize(vv));
    for (int i = 0; i < 64 * 4; ++i) cr_assert_eq(v[i], (i / 64 * 64 + 63 - i % 64) * 3 + 1, "element %d", i);
    ASSERT_OK(amp_array_view_destroy(vv));
    ASSERT_OK(amp_program_destroy(p));
}

/* ------------------------------------------------- a fiber's stack overflow */

/* Work-item 0 calls a helper whose frame (300 KB) is larger than a fiber's
 * stack (256 KiB) and writes only its lowest 32 KB; work-item 1 keeps
 * 100 KB of values on its own stack across the barrier and counts those
 * that changed. */
static const char overflow_src[] =
    "__device__ __attribute__((noinline)) int big_scratch(int n)\n"
    "{\n"
    "    volatile int a[75000];\n"
    "    for (int i = 0; i < n; ++i) a[i] = 0x5a5a5a5a;\n"
    "    return a[0];\n"
    "}\n"
    "__device__ __attribute__((noinline)) int keep(amp::tile_barrier const &b)\n"
    "{\n"
    "    volatile int v[25000];\n"
    "    for (int i = 0; i < 25000; ++i) v[i] = 7;\n"
    "    b.wait();\n"
    "    int bad = 0;\n"
    "    for (int i = 0; i < 25000; ++i) bad += v[i] != 7;\n"
    "    return bad;\n"
    "}\n"
    "AMP_TILED_KERNEL(overflow, amp::tiled_index<2> t, amp::array_view<int, 1> out)\n"
    "{\n"
    "    int r = 0;\n"
    "    if (t.local[0] == 1) r = keep(t.barrier);\n"
    "    else { t.barrier.wait(); big_scratch(8000); }\n"
    "    out[t.global] = r;\n"
    "}\n";

/* hipamp.h: a stack overflow in a kernel ends the process. On fibers a
 * frame larger than the stack stepped over the one guard page into the
 * next fiber's stack: the launch succeeded with work-item 1's values
 * overwritten (the child's exit status 3). Now each page of the frame is
 * touched in turn (-fstack-clash-protection) and the guard ends the child
 * (a signal; under ASan its report and exit status 1). */
Test(cpu, a_fiber_stack_overflow_ends_the_process, .timeout = 120)
{
    /* The child's dying words (under AddressSanitizer a report cut short,
     * with no end of line) go to a file of their own, not into the test
     * log's lines. */
    stderr_capture cap;
    stderr_capture_begin(&cap);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        setrlimit(RLIMIT_CORE, &(struct rlimit){0, 0});
        amp_accelerator *acc = NULL;
        amp_program *p = NULL;
        amp_kernel *k = NULL;
        int out[8] = {0};
        amp_array_view *o = NULL;
        amp_tiled_extent te;
        if (amp_accelerator_find("cpu", &acc) != AMP_OK || amp_program_build(acc, overflow_src, NULL, &p) != AMP_OK ||
            amp_program_get_kernel(p, "overflow", &k) != AMP_OK ||
            amp_array_view_create(out, 4, amp_extent_1d(8), AMP_READ_WRITE, &o) != AMP_OK ||
            amp_extent_tile(amp_extent_1d(8), (int[]){2}, &te) != AMP_OK) {
            fprintf(stderr, "set-up: %s\n", amp_last_error());
            _exit(2);
        }
        amp_arg a[] = {amp_arg_view(o)};
        if (amp_parallel_for_each_tiled(NULL, te, k, a, 1) != AMP_OK || amp_array_view_synchronize(o) != AMP_OK) {
            fprintf(stderr, "launch: %s\n", amp_last_error());
            _exit(4);
        }
        for (int i = 0; i < 8; ++i)
            if (out[i]) _exit(3);
        _exit(0);
    }
    int ws = 0;
    pid_t got = waitpid(pid, &ws, 0);
    char said[2048];
    stderr_capture_end(&cap, said, sizeof said);
    cr_assert_eq(got, pid);
    cr_assert(!WIFEXITED(ws) || WEXITSTATUS(ws) == 1,
              "the overflow did not end the process: exit status %d (3: another work-item's stack overwritten); it "
              "said:\n%s",
              WEXITSTATUS(ws), said);
}

/* ------------------------------------------------------ the cache's tag */

/* In a child: with AMP_CXX the real compiler plus a long -D of padding and
 * -DTAG_V=v, what a kernel returning TAG_V gives (its exit status; 100 +
 * something: a failure). */
static int value_with_long_cxx(const char *cache, int v)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        static char cxx[4096];
        char pad[1601];
        memset(pad, 'x', sizeof pad - 1);
        pad[sizeof pad - 1] = 0;
        const char *real = getenv("AMP_CXX") && *getenv("AMP_CXX") ? getenv("AMP_CXX") : "c++";
        snprintf(cxx, sizeof cxx, "%s -DPAD_%s -DTAG_V=%d", real, pad, v);
        setenv("AMP_CXX", cxx, 1);
        setenv("AMP_CACHE_DIR", cache, 1);
        amp_accelerator *acc = NULL;
        amp_program *p = NULL;
        amp_kernel *k = NULL;
        int out[4] = {0};
        amp_array_view *o = NULL;
        if (amp_accelerator_find("cpu", &acc) != AMP_OK) _exit(101);
        if (amp_program_build(acc, "AMP_KERNEL(tag_v, amp::index<1> i, amp::array_view<int, 1> o) { o[i] = TAG_V; }",
                              NULL, &p) != AMP_OK) {
            fprintf(stderr, "build: %s\n", amp_last_error());
            _exit(102);
        }
        if (amp_program_get_kernel(p, "tag_v", &k) != AMP_OK) _exit(103);
        if (amp_array_view_create(out, 4, amp_extent_1d(4), AMP_WRITE_ONLY, &o) != AMP_OK) _exit(104);
        amp_arg a[] = {amp_arg_view(o)};
        if (amp_parallel_for_each(NULL, amp_extent_1d(4), k, a, 1) != AMP_OK) _exit(105);
        if (amp_array_view_synchronize(o) != AMP_OK) _exit(106);
        _exit(out[3]);
    }
    int ws = 0;
    cr_assert_eq(waitpid(pid, &ws, 0), pid);
    cr_assert(WIFEXITED(ws), "the child ended by signal %d", WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
    return WEXITSTATUS(ws);
}

/* Two compilers whose words differ only past 1500 characters key the
 * cache apart (the tag was cut at its buffer's end, so the second process
 * loaded the first one's module: 1, not 2). */
Test(cpu, a_long_compiler_command_keys_the_cache_whole, .timeout = 120)
{
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/hipamp-tag-XXXXXX", base);
    cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
    test_remove_at_exit(dir);
    cr_assert_eq(value_with_long_cxx(dir, 1), 1);
    cr_assert_eq(value_with_long_cxx(dir, 2), 2, "a compiler differing past the tag's end loaded another's module");
}

/* ------------------------------------------------- builds split in parts */

/* A compiler that logs its command lines (one a line) into dir/cxx.log and
 * runs the real one; AMP_CXX names it, the disk cache is dir/cache (empty),
 * no precompiled header (its own compile would be logged too), and jobs
 * compiler processes at most. Before the accelerator is first used. */
static void logging_compiler_pch(char *dir, size_t cap, const char *jobs, bool pch)
{
    char cache[PATH_MAX];
    wrapped_compiler(dir, cap, "split", "printf '%%s\\n' \"$*\" >> '%s/cxx.log'");
    snprintf(cache, sizeof cache, "%s/cache", dir);
    setenv("AMP_CACHE_DIR", cache, 1);
    if (!pch) setenv("AMP_CPU_PCH", "0", 1);
    setenv("AMP_CPU_COMPILE_JOBS", jobs, 1);
}

static void logging_compiler(char *dir, size_t cap, const char *jobs)
{
    logging_compiler_pch(dir, cap, jobs, false);
}

/* Compiler runs in dir/cxx.log: compiles of a part (-c), links of parts
 * (-x none) and whole compiles (to kernel.so, neither). */
static void logged_runs(const char *dir, int *parts, int *links, int *wholes)
{
    char path[PATH_MAX], line[16384];
    snprintf(path, sizeof path, "%s/cxx.log", dir);
    *parts = *links = *wholes = 0;
    FILE *f = fopen(path, "r");
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, " -x none ")) ++*links;
        else if (strstr(line, " -c ") && strstr(line, "/part")) ++*parts;
        else if (strstr(line, "/kernel.so")) ++*wholes;
    }
    fclose(f);
}

static const char split_src[] =
    "AMP_KERNEL(add_one, amp::index<1> i, amp::array_view<int, 1> v) { v[i] += 1; }\n"
    "AMP_KERNEL(times_three, amp::index<1> i, amp::array_view<int, 1> v) { v[i] *= 3; }\n"
    "AMP_TILED_KERNEL(reverse32, amp::tiled_index<32> t, amp::array_view<int, 1> v)\n"
    "{\n"
    "    tile_static int s[32];\n"
    "    s[t.local[0]] = v[t.global];\n"
    "    t.barrier.wait();\n"
    "    v[t.global] = s[31 - t.local[0]];\n"
    "}\n"
    "AMP_KERNEL(square, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = v[i] * v[i]; }\n"
    "AMP_TILED_KERNEL(minus_local, amp::tiled_index<32> t, amp::array_view<int, 1> v) { v[t.global] -= t.local[0]; }\n";

/* Runs split_src's five kernels over 96 ints; every element checked. */
static void run_split_kernels(amp_program *p)
{
    enum { N = 96 };
    int v[N], want[N];
    for (int i = 0; i < N; ++i) v[i] = want[i] = i - 40;
    amp_array_view *vv = test_view(v, sizeof(int), amp_extent_1d(N), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(vv)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(N), test_kernel(p, "add_one"), a, 1));
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(N), test_kernel(p, "times_three"), a, 1));
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, tile1(N, 32), test_kernel(p, "reverse32"), a, 1));
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(N), test_kernel(p, "square"), a, 1));
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, tile1(N, 32), test_kernel(p, "minus_local"), a, 1));
    ASSERT_OK(amp_array_view_synchronize(vv));
    int r[N];
    for (int i = 0; i < N; ++i) want[i] = (want[i] + 1) * 3;
    for (int i = 0; i < N; ++i) r[i] = want[i / 32 * 32 + 31 - i % 32];
    for (int i = 0; i < N; ++i) want[i] = r[i] * r[i] - i % 32;
    for (int i = 0; i < N; ++i) cr_assert_eq(v[i], want[i], "element %d: %d, want %d", i, v[i], want[i]);
    ASSERT_OK(amp_array_view_destroy(vv));
}

/* A unit of five kernels on three compiler processes: three parts, one
 * link, no whole compile, and every kernel there and right, the tiled ones
 * on their loop versions (AMP_CPU_TILED=loops refuses a kernel without);
 * with one process, one whole compile. */
Test(cpu, a_build_split_across_compilers_has_every_kernel_right)
{
    char dir[PATH_MAX];
    logging_compiler(dir, sizeof dir, "3");
    setenv("AMP_CPU_TILED", "loops", 1);
    amp_accelerator *acc = cpu_acc();
    amp_program *p = NULL;
    ASSERT_OK(amp_program_build(acc, split_src, NULL, &p));
    int parts, links, wholes;
    logged_runs(dir, &parts, &links, &wholes);
    cr_assert_eq(parts, 3, "%d parts compiled, want 3", parts);
    cr_assert_eq(links, 1, "%d links, want 1", links);
    cr_assert_eq(wholes, 0, "%d whole compiles, want 0", wholes);
    run_split_kernels(p);
    ASSERT_OK(amp_program_destroy(p));
}

Test(cpu, one_compiler_process_compiles_the_unit_whole)
{
    char dir[PATH_MAX];
    logging_compiler(dir, sizeof dir, "1");
    amp_program *p = NULL;
    ASSERT_OK(amp_program_build(cpu_acc(), split_src, NULL, &p));
    int parts, links, wholes;
    logged_runs(dir, &parts, &links, &wholes);
    cr_assert(parts == 0 && links == 0 && wholes == 1, "parts %d, links %d, whole compiles %d", parts, links, wholes);
    run_split_kernels(p);
    ASSERT_OK(amp_program_destroy(p));
}

/* What parts cannot share is compiled whole, and each case's results are
 * those of one compile: a static variable two kernels share (each part
 * would have its own, and the compiler folds the reader's to its initial
 * value, so no part's object shows it), the same in an unnamed namespace,
 * through a constructor, behind a pointer to const, made by a macro, or
 * after a digit separator; a non-inline function (defined in every part).
 * Those the scan reads as such never reach a compiler in parts. A static
 * function splits. A static function's tile_static, called from kernels in
 * two parts, would be one copy a part: the parts' objects show it, and the
 * unit is compiled whole after its parts. */
Test(cpu, what_parts_cannot_share_sends_the_unit_to_one_compile)
{
    char dir[PATH_MAX];
    logging_compiler(dir, sizeof dir, "2");
    amp_accelerator *acc = cpu_acc();
#define SHARED_KERNELS(set, read)                                                                                  \
    "AMP_KERNEL(set_it, amp::index<1> i, amp::array_view<int, 1> v) { " set " }\n"                                  \
    "AMP_KERNEL(read_it, amp::index<1> i, amp::array_view<int, 1> v) { " read " }\n"
    static const struct {
        const char *src;
        int parts, wholes; /* compiles this case adds */
        int add;           /* the result: 42 (-1), i + 5 (-2: reversed twice, + 4), or 4 (i + 1) + add */
    } cases[] = {
        {"static int shared_value;\n" SHARED_KERNELS("if (i[0] == 0) shared_value = 41;", "v[i] = shared_value + 1;"),
         0, 1, -1},
        {"namespace { int shared_value; }\n"
         SHARED_KERNELS("if (i[0] == 0) shared_value = 41;", "v[i] = shared_value + 1;"),
         0, 1, -1},
        {"struct Counter { int v; Counter(int x) : v(x) {} };\nstatic Counter shared_value(0);\n"
         SHARED_KERNELS("if (i[0] == 0) shared_value.v = 41;", "v[i] = shared_value.v + 1;"),
         0, 1, -1},
        {"static const int *shared_ptr;\nconst int forty_one = 41;\n"
         SHARED_KERNELS("if (i[0] == 0) shared_ptr = &forty_one;", "v[i] = (shared_ptr ? *shared_ptr : 0) + 1;"),
         0, 1, -1},
        {"#define DECLARE(T, n) static T n\nDECLARE(int, shared_value);\n"
         SHARED_KERNELS("if (i[0] == 0) shared_value = 41;", "v[i] = shared_value + 1;"),
         0, 1, -1},
        {"const int big = 1'000; static int shared_value;\n"
         SHARED_KERNELS("if (i[0] == 0) shared_value = 41 + big - 1000;", "v[i] = shared_value + 1;"),
         0, 1, -1},
        {"int twice(int x) { return 2 * x; }\n" SHARED_KERNELS("v[i] = twice(v[i]);", "v[i] = twice(v[i]) + 2;"), 0,
         1, 2},
        {"static int twice(int x) { return 2 * x; } // static int not_a_variable;\n"
         SHARED_KERNELS("v[i] = twice(v[i]);", "v[i] = twice(v[i]) + 3;"),
         2, 0, 3},
        {"static int reversed(int x, int l) { tile_static int s[8]; s[l] = x; __syncthreads(); return s[7 - l]; }\n"
         "AMP_TILED_KERNEL(set_it, amp::tiled_index<8> t, amp::array_view<int, 1> v)\n"
         "{ v[t.global] = reversed(v[t.global], t.local[0]); }\n"
         "AMP_TILED_KERNEL(read_it, amp::tiled_index<8> t, amp::array_view<int, 1> v)\n"
         "{ v[t.global] = reversed(v[t.global], t.local[0]) + 4; }\n",
         2, 1, -2}};
#undef SHARED_KERNELS
    int parts_before = 0, wholes_before = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        amp_program *p = NULL;
        ASSERT_OK(amp_program_build(acc, cases[c].src, NULL, &p));
        int parts, links, wholes;
        logged_runs(dir, &parts, &links, &wholes);
        cr_assert_eq(parts - parts_before, cases[c].parts, "case %zu: %d parts compiled", c, parts - parts_before);
        cr_assert_eq(wholes - wholes_before, cases[c].wholes, "case %zu: %d whole compiles", c,
                     wholes - wholes_before);
        parts_before = parts;
        wholes_before = wholes;
        int v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        amp_array_view *vv = test_view(v, sizeof(int), amp_extent_1d(8), AMP_READ_WRITE);
        amp_arg a[] = {amp_arg_view(vv)};
        bool tiled = c == sizeof cases / sizeof cases[0] - 1;
        if (tiled) {
            ASSERT_OK(amp_parallel_for_each_tiled(NULL, tile1(8, 8), test_kernel(p, "set_it"), a, 1));
            ASSERT_OK(amp_parallel_for_each_tiled(NULL, tile1(8, 8), test_kernel(p, "read_it"), a, 1));
        } else {
            ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(8), test_kernel(p, "set_it"), a, 1));
            ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(8), test_kernel(p, "read_it"), a, 1));
        }
        ASSERT_OK(amp_array_view_synchronize(vv));
        for (int i = 0; i < 8; ++i) {
            int want = cases[c].add == -1 ? 42 : cases[c].add == -2 ? i + 5 : 4 * (i + 1) + cases[c].add;
            cr_assert_eq(v[i], want, "case %zu element %d: %d, want %d", c, i, v[i], want);
        }
        ASSERT_OK(amp_array_view_destroy(vv));
        ASSERT_OK(amp_program_destroy(p));
    }
}

/* With the library part's precompiled header (made beside a first build on
 * the disk cache), every part includes it and the results are right. */
Test(cpu, split_parts_use_the_precompiled_header)
{
    char dir[PATH_MAX];
    logging_compiler_pch(dir, sizeof dir, "2", true);
    amp_accelerator *acc = cpu_acc();
    amp_program *p = NULL;
    ASSERT_OK(amp_program_build(acc, "AMP_KERNEL(one, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 1; }\n",
                                NULL, &p));
    ASSERT_OK(amp_program_destroy(p));
    ASSERT_OK(amp_program_build(acc, split_src, NULL, &p));
    char path[PATH_MAX], line[16384];
    snprintf(path, sizeof path, "%s/cxx.log", dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    int with_header = 0, parts = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, " -c ") && strstr(line, "/part")) {
            ++parts;
            with_header += strstr(line, " -include ") != NULL;
        }
    fclose(f);
    cr_assert(parts >= 2 && with_header == parts, "%d parts, %d with the precompiled header", parts, with_header);
    run_split_kernels(p);
    ASSERT_OK(amp_program_destroy(p));
}

/* A compile error in a split build is reported as a whole compile reports
 * it: the status, the name and the user's line. */
Test(cpu, a_compile_error_in_a_split_build_names_the_user_line)
{
    char dir[PATH_MAX];
    logging_compiler(dir, sizeof dir, "2");
    const char *src = "AMP_KERNEL(fine, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 1; }\n"
                      "AMP_KERNEL(broken, amp::index<1> i, amp::array_view<int, 1> v)\n"
                      "{\n"
                      "    v[i] = undeclared_in_part_two;\n"
                      "}\n";
    amp_program *p = (amp_program *)1;
    ASSERT_STATUS(amp_program_build(cpu_acc(), src, NULL, &p), AMP_ERROR_COMPILE);
    cr_assert_null(p);
    assert_contains(amp_last_error(), "undeclared_in_part_two");
    assert_contains(amp_last_error(), ":4:");
    int parts, links, wholes;
    logged_runs(dir, &parts, &links, &wholes);
    cr_assert(parts == 2 && links == 0 && wholes >= 1, "parts %d, links %d, whole compiles %d", parts, links, wholes);
}

/* ------------------------------------------- compile time-out, temp files */

/* A private TMPDIR for the test (the compiler's files and ours land there). */
static void private_tmpdir(char *dir, size_t cap)
{
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(dir, cap, "%s/hipamp-test-XXXXXX", base);
    cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
    test_remove_at_exit(dir);
    setenv("TMPDIR", dir, 1);
}

/* Entries of dir whose names start with prefix. */
static int count_entries(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "opendir %s: %s", dir, strerror(errno));
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, prefix, strlen(prefix))) n++;
    closedir(d);
    return n;
}

/* The processes but this one that pick takes: how many, and the last of
 * them in *last (where last is not NULL). No assertion: a thread of the
 * test may call it. -1 where /proc cannot be read. */
static int scan_processes(bool (*pick)(long pid, const void *arg), const void *arg, long *last)
{
    DIR *d = opendir("/proc");
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid == (long)getpid() || !pick(pid, arg)) continue;
        n++;
        if (last) *last = pid;
    }
    closedir(d);
    return n;
}

typedef struct process_filter {
    const char *needle;
    bool children;
} process_filter;

static bool pick_child_or_named(long pid, const void *arg)
{
    const process_filter *f = arg;
    char state = 0, cmd[4096];
    if (f->children && test_proc_parent(pid, &state) == (long)getpid() && state != 'Z') return true;
    return test_proc_cmdline(pid, cmd, sizeof cmd) && strstr(cmd, f->needle);
}

/* Processes that are children of this one (when children), or whose
 * command line mentions needle (a compiler working in our temporary
 * directory). */
static int count_processes_of(const char *needle, bool children)
{
    process_filter f = {needle, children};
    int n = scan_processes(pick_child_or_named, &f, NULL);
    cr_assert_geq(n, 0, "cannot read /proc");
    return n;
}

static int count_processes(const char *needle) { return count_processes_of(needle, true); }

#define now_s test_now_s

/* A private TMPDIR (tmp) with a FIFO nobody writes in it (fifo, named
 * name): whatever opens it for reading blocks. */
static void private_fifo(char *tmp, size_t tmp_cap, const char *name, char *fifo, size_t fifo_cap)
{
    private_tmpdir(tmp, tmp_cap);
    snprintf(fifo, fifo_cap, "%s/%s", tmp, name);
    cr_assert_eq(mkfifo(fifo, 0600), 0, "mkfifo: %s", strerror(errno));
}

/* A header that is a FIFO nobody writes: the compiler blocks reading it.
 * The include is computed, so no scan of #include lines can see it. */
static void fifo_case(const char *kernel_kind)
{
    char tmp[1024], fifo[1100], src[4096];
    private_fifo(tmp, sizeof tmp, "stuck.h", fifo, sizeof fifo);
    setenv("AMP_COMPILE_TIMEOUT", "3", 1);
    snprintf(src, sizeof src,
             "#define STUCK_HEADER \"%s\"\n"
             "#include STUCK_HEADER\n"
             "%s\n",
             fifo, kernel_kind);
    amp_accelerator *acc = cpu_acc();
    amp_program *p = (amp_program *)1;
    double t0 = now_s();
    ASSERT_STATUS(amp_program_build(acc, src, NULL, &p), AMP_ERROR_COMPILE);
    double took = now_s() - t0;
    cr_assert_null(p);
    const char *msg = amp_last_error();
    cr_log_info("%s (%.1f s)", msg, took);
    assert_contains(msg, "timed out after 3 seconds");
    assert_contains(msg, "AMP_COMPILE_TIMEOUT");
    cr_assert_lt(took, 30.0, "the build took %.1f s with a 3 s time-out", took);
    /* nothing left behind: no temporary directory, no compiler */
    cr_assert_eq(count_entries(tmp, "hipamp-cpu-"), 0, "a temporary directory remains in %s", tmp);
    cr_assert_eq(count_processes(tmp), 0, "a process of the compile is still running");
    unlink(fifo);
    rmdir(tmp);
}

Test(cpu, compile_time_out_stops_a_compiler_stuck_on_a_fifo, .timeout = 120)
{
    fifo_case("AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 1; }");
}

/* With a tiled kernel, libclang reads the includes first (in a child
 * process): that is under the deadline too. */
Test(cpu, compile_time_out_covers_the_loop_transformation, .timeout = 120)
{
    fifo_case("AMP_TILED_KERNEL(k, amp::tiled_index<4> t, amp::array_view<int, 1> v) { v[t.global] = 1; "
              "t.barrier.wait(); }");
}

/* Session 105's: a stopped compiler's processes were left to init to reap.
 * At the deadline the library killed the guardian with the compiler's
 * process group, so the compiler and its children were orphans; where
 * nothing reaps orphans (an application that is PID 1 of its container)
 * each time-out left them as zombies, and the library waited about 2 s for
 * the group to be gone, which it never was. Here this process takes init's
 * place for its descendants' orphans (a subreaper) and never reaps them.
 * Now the guardian kills the group and reaps all of it before it exits. */
static bool pick_zombie_child(long pid, const void *arg)
{
    (void)arg;
    char state = 0;
    return test_proc_parent(pid, &state) == (long)getpid() && state == 'Z';
}

Test(cpu, a_compile_time_out_leaves_no_zombie_where_nothing_reaps_orphans, .timeout = 60)
{
    cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0, "prctl: %s", strerror(errno));
    /* A shell that waits on a child of its own: a compiler driver and its cc1plus. */
    wrapped_compiler_fresh_cache("slowcxx", "case \"$*\" in *--version*) ;; *) sleep 40;; esac");
    setenv("AMP_PREBUILT", "0", 1);
    setenv("AMP_CPU_PCH", "0", 1);
    setenv("AMP_COMPILE_TIMEOUT", "3", 1);
    amp_accelerator *acc = cpu_acc();
    amp_program *p = NULL;
    double t0 = test_now_s();
    amp_status st = amp_program_build(acc, "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 5; }",
                                      NULL, &p);
    double took = test_now_s() - t0;
    cr_assert_eq(st, AMP_ERROR_COMPILE, "%s: %s", amp_status_name(st), amp_last_error());
    assert_contains(amp_last_error(), "timed out after 3 seconds");
    cr_log_info("the build returned after %.2f s", took);
    cr_assert_eq(scan_processes(pick_zombie_child, NULL, NULL), 0,
                 "the stopped compiler's processes are zombies of this process");
    cr_assert_eq(count_processes("slowcxx"), 0, "a process of the stopped compile still runs");
    /* Reaped, not waited for: the group's end takes milliseconds (about 2 s more before). */
    cr_assert_lt(took, 4.8, "the build took %.2f s with a 3 s time-out", took);
}

/* Session 105's: a guardian killed from outside (the OOM killer, an
 * operator's kill) left its compiler running on, stopped by nobody (the
 * deadline's kill went to the guardian alone). Now the library learns the
 * compiler's pid from the guardian and kills its process group itself. */
static bool pick_compile(long pid, const void *tag)
{
    char cmd[4096];
    return test_proc_cmdline(pid, cmd, sizeof cmd) && strstr(cmd, tag) && !strstr(cmd, "--version");
}

static void *kill_the_guardian(void *tag)
{
    for (int tries = 0; tries < 2000; ++tries) {
        long compiler = -1, guardian;
        if (scan_processes(pick_compile, tag, &compiler) > 0 && (guardian = test_proc_parent(compiler, NULL)) > 1) {
            kill((pid_t)guardian, SIGKILL);
            return (void *)1;
        }
        usleep(5000);
    }
    return NULL;
}

Test(cpu, a_guardian_killed_from_outside_leaves_no_compiler_running, .timeout = 60)
{
    wrapped_compiler_fresh_cache("orphancxx", "case \"$*\" in *--version*) ;; *) sleep 41;; esac");
    setenv("AMP_PREBUILT", "0", 1);
    setenv("AMP_CPU_PCH", "0", 1);
    setenv("AMP_COMPILE_TIMEOUT", "30", 1);
    amp_accelerator *acc = cpu_acc();
    pthread_t killer;
    cr_assert_eq(pthread_create(&killer, NULL, kill_the_guardian, "orphancxx"), 0);
    amp_program *p = NULL;
    double t0 = test_now_s();
    amp_status st = amp_program_build(acc, "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 6; }",
                                      NULL, &p);
    double took = test_now_s() - t0;
    void *killed = NULL;
    pthread_join(killer, &killed);
    cr_assert_not_null(killed, "the compile's guardian was never found");
    cr_log_info("%.2f s: %s", took, amp_last_error());
    cr_assert_eq(st, AMP_ERROR_COMPILE, "%s: %s", amp_status_name(st), amp_last_error());
    cr_assert_lt(took, 20.0, "the build waited %.1f s for a guardian killed at once", took);
    double t1 = test_now_s();
    while ((count_processes_of("sleep 41", false) || count_processes_of("orphancxx", false)) && test_now_s() - t1 < 5)
        usleep(20000);
    cr_assert_eq(count_processes_of("sleep 41", false) + count_processes_of("orphancxx", false), 0,
                 "the compiler runs on without its guardian");
}

/* A loop transformation that does not finish leaves the kernels on fibers
 * for this build only: the build is not stored in the disk cache (the next
 * process tries the transformation again), and amp_cache_get_info says why.
 * Here libclang blocks opening a FIFO that only __has_include names, under
 * __clang__ (g++ never opens it): its child uses no CPU, is taken for
 * stuck, started once more and stopped again (about 10 s), and g++ builds
 * the fiber version. The FIFO lies in libstdc++'s directory, the
 * compiler's own tree, which the include scan only stats (it opens and
 * refuses a FIFO anywhere else, probed or included), so writing it needs
 * root. */
static char g_compiler_fifo[256];
static void remove_compiler_fifo(void)
{
    if (g_compiler_fifo[0]) unlink(g_compiler_fifo);
    g_compiler_fifo[0] = 0;
}

Test(cpu, fiber_build_after_a_loop_time_out_is_not_stored, .timeout = 120, .fini = remove_compiler_fifo)
{
    char tmp[1024], cache[1100], src[4096], version[32] = "";
    if (geteuid() != 0) cr_skip_test("needs root to put a FIFO in libstdc++'s directory");
    FILE *v = popen("${AMP_CXX:-g++} -dumpversion 2>/dev/null", "r");
    if (v) {
        if (!fgets(version, sizeof version, v)) version[0] = 0;
        pclose(v);
    }
    version[strcspn(version, "\n")] = 0;
    snprintf(g_compiler_fifo, sizeof g_compiler_fifo, "/usr/include/c++/%s/hipamp-blocks-libclang-%d.h", version,
             (int)getpid());
    if (!version[0] || mkfifo(g_compiler_fifo, 0600) != 0) {
        g_compiler_fifo[0] = 0;
        cr_skip_test("cannot make a FIFO in libstdc++'s directory /usr/include/c++/%s: %s", version, strerror(errno));
    }
    private_tmpdir(tmp, sizeof tmp);
    snprintf(cache, sizeof cache, "%s/cache", tmp);
    setenv("AMP_CACHE_DIR", cache, 1);
    setenv("AMP_CPU_PCH", "0", 1); /* its precompiled header would be a store of its own */
    snprintf(src, sizeof src,
             "#if defined(__clang__) && __has_include(<%s>)\n#endif\n"
             "AMP_TILED_KERNEL(k, amp::tiled_index<4> t, amp::array_view<int, 1> v)\n"
             "{ tile_static int s[4]; s[t.local[0]] = t.local[0]; t.barrier.wait(); v[t.global] = s[3 - t.local[0]]; }\n",
             strrchr(g_compiler_fifo, '/') + 1);
    amp_accelerator *acc = cpu_acc();
    amp_program *p = test_build(acc, src);
    amp_kernel_info ki;
    ASSERT_OK(amp_kernel_get_info(test_kernel(p, "k"), &ki));
    if (!strstr(ki.execution, "made no progress") && strstr(ki.execution, "libclang"))
        cr_skip_test("the loop transformation cannot run here: %s", ki.execution);
    assert_contains(ki.execution, "fibers: the loop transformation made no progress");
    amp_cache_info ci;
    ASSERT_OK(amp_cache_get_info(&ci));
    cr_assert(ci.disk_enabled, "the disk cache is off: %s", ci.reason);
    cr_assert_eq(ci.disk_stores, 0, "the fiber build made after the time-out was stored in %s", cache);
    cr_log_info("not stored: %s", ci.last_uncacheable);
    assert_contains(ci.last_uncacheable, "loop transformation");
    cr_assert_eq(count_processes(tmp), 0, "a process of the build is still running");
    ASSERT_OK(amp_program_destroy(p));
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    cr_expect_eq(system(cmd), 0, "%s", cmd);
}

/* A unique source, so that the disk cache cannot answer for the compiler. */
static const char *unique_source(char *buf, size_t cap, const char *extra)
{
    snprintf(buf, cap, "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = %ld; }\n%s",
             (long)getpid() * 1000 + (long)(now_s() * 1000) % 1000, extra);
    return buf;
}

Test(cpu, temporary_directory_goes_after_success_and_failure)
{
    char tmp[1024], src[512];
    private_tmpdir(tmp, sizeof tmp);
    amp_accelerator *acc = cpu_acc();
    amp_program *p = test_build(acc, unique_source(src, sizeof src, ""));
    ASSERT_OK(amp_program_destroy(p));
    cr_assert_eq(count_entries(tmp, "hipamp-cpu-"), 0, "a temporary entry remains after a build");
    p = (amp_program *)1;
    ASSERT_STATUS(amp_program_build(acc, unique_source(src, sizeof src, "this is not C++;"), NULL, &p),
                  AMP_ERROR_COMPILE);
    cr_assert_eq(count_entries(tmp, "hipamp-cpu-"), 0, "a temporary entry remains after a failed build");
    rmdir(tmp);
}

/* Builds k of unique_source(src) on acc and checks that it writes its
 * value into every element. */
static void build_and_run_unique(amp_accelerator *acc, const char *src)
{
    amp_program *p = test_build(acc, src);
    int v[4] = {0};
    amp_array_view *vv = test_view(v, sizeof(int), amp_extent_1d(4), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(vv)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(4), test_kernel(p, "k"), a, 1));
    ASSERT_OK(amp_array_view_synchronize(vv));
    long want = strtol(strstr(src, "= ") + 2, NULL, 10);
    for (int i = 0; i < 4; ++i) cr_assert_eq(v[i], (int)want, "element %d: %d, want %ld", i, v[i], want);
    ASSERT_OK(amp_array_view_destroy(vv));
    ASSERT_OK(amp_program_destroy(p));
}

/* A TMPDIR in which another user could rename our build directory away and
 * put theirs in its place (writable by every user or by its group without
 * the sticky bit, or another user's) is refused by name, and nothing is
 * made in it; with the sticky bit (as /tmp) or as a directory of ours it
 * is used. */
Test(cpu, unsafe_tmpdir_is_refused_by_name)
{
    char tmp[1024], src[512];
    private_tmpdir(tmp, sizeof tmp);
    setenv("AMP_CACHE_DIR", "off", 1);
    amp_accelerator *acc = cpu_acc();
    const mode_t unsafe[] = {0777, 0770};
    const char *says[] = {"writable by every user and has no sticky bit", "writable by its group and has no sticky bit"};
    for (int i = 0; i < 2; ++i) {
        cr_assert_eq(chmod(tmp, unsafe[i]), 0, "chmod: %s", strerror(errno));
        amp_program *p = (amp_program *)1;
        ASSERT_STATUS(amp_program_build(acc, unique_source(src, sizeof src, ""), NULL, &p), AMP_ERROR_COMPILE);
        cr_assert_null(p);
        cr_assert(strstr(amp_last_error(), tmp) && strstr(amp_last_error(), "TMPDIR") &&
                      strstr(amp_last_error(), says[i]),
                  "mode %04o: %s", (unsigned)unsafe[i], amp_last_error());
        cr_assert_eq(count_entries(tmp, "hipamp-cpu-"), 0, "a build directory was made in the refused TMPDIR");
    }
    if (geteuid() == 0) {
        cr_assert_eq(chmod(tmp, 0755), 0);
        cr_assert_eq(chown(tmp, 65534, 65534), 0);
        amp_program *p = (amp_program *)1;
        ASSERT_STATUS(amp_program_build(acc, unique_source(src, sizeof src, ""), NULL, &p), AMP_ERROR_COMPILE);
        cr_assert(strstr(amp_last_error(), tmp) && strstr(amp_last_error(), "uid 65534"), "%s", amp_last_error());
        cr_assert_eq(chown(tmp, 0, 0), 0);
    }
    /* The sticky bit keeps our entries ours: builds work, and go. */
    cr_assert_eq(chmod(tmp, 01777), 0);
    build_and_run_unique(acc, unique_source(src, sizeof src, ""));
    cr_assert_eq(chmod(tmp, 0700), 0);
    build_and_run_unique(acc, unique_source(src, sizeof src, "// private\n"));
    cr_assert_eq(count_entries(tmp, "hipamp-cpu-"), 0, "a temporary entry remains after a build");
    rmdir(tmp);
}

/* A TMPDIR of ours in a directory another user could rename it in (one
 * writable by every user, or by its group, without the sticky bit) is
 * refused naming that directory, and nothing is made in it; once that
 * directory has the sticky bit, builds work there. */
Test(cpu, tmpdir_in_an_unsafe_directory_is_refused_by_name)
{
    char tmp[1024], real[PATH_MAX], open_dir[PATH_MAX + 8], mine[PATH_MAX + 16], src[512], cmd[1200];
    private_tmpdir(tmp, sizeof tmp);
    setenv("AMP_CACHE_DIR", "off", 1);
    cr_assert_not_null(realpath(tmp, real));
    snprintf(open_dir, sizeof open_dir, "%s/open", real);
    snprintf(mine, sizeof mine, "%s/mine", open_dir);
    cr_assert_eq(mkdir(open_dir, 0700), 0);
    cr_assert_eq(mkdir(mine, 0700), 0);
    setenv("TMPDIR", mine, 1);
    amp_accelerator *acc = cpu_acc();
    const mode_t unsafe[] = {0777, 0770};
    const char *says[] = {"writable by every user and has no sticky bit", "writable by its group and has no sticky bit"};
    for (int i = 0; i < 2; ++i) {
        cr_assert_eq(chmod(open_dir, unsafe[i]), 0, "chmod: %s", strerror(errno));
        amp_program *p = (amp_program *)1;
        ASSERT_STATUS(amp_program_build(acc, unique_source(src, sizeof src, ""), NULL, &p), AMP_ERROR_COMPILE);
        cr_assert_null(p);
        char in[PATH_MAX + 16];
        snprintf(in, sizeof in, "is in %s, which", open_dir);
        cr_assert(strstr(amp_last_error(), mine) && strstr(amp_last_error(), in) && strstr(amp_last_error(), "TMPDIR") &&
                      strstr(amp_last_error(), says[i]),
                  "mode %04o: %s", (unsigned)unsafe[i], amp_last_error());
        cr_assert_eq(count_entries(mine, "hipamp-cpu-"), 0, "a build directory was made under the refused directory");
    }
    cr_assert_eq(chmod(open_dir, 01777), 0);
    build_and_run_unique(acc, unique_source(src, sizeof src, ""));
    cr_assert_eq(count_entries(mine, "hipamp-cpu-"), 0, "a temporary entry remains after a build");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    cr_assert_eq(system(cmd), 0);
}

/* System call nr fails with error err in this (test) process from here
 * on (a seccomp filter); the test is skipped where none can be installed
 * (a kernel or container without seccomp filters). */
static void block_syscall(unsigned nr, unsigned err, const char *name)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | err),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {(unsigned short)(sizeof f / sizeof f[0]), f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        cr_skip_test("cannot set no_new_privs to block %s: %s", name, strerror(errno));
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
        cr_skip_test("cannot install a seccomp filter to block %s: %s", name, strerror(errno));
}

/* memfd_create fails with ENOSYS in this (test) process from here on. */
static void block_memfd(void) { block_syscall(__NR_memfd_create, ENOSYS, "memfd_create"); }

/* Without memfd a module is loaded from a temporary file in TMPDIR: it
 * loads and runs, and leaves nothing behind; when TMPDIR has become one
 * another user could swap that file in (here a directory above it turns
 * writable by everyone once the compiler is done), the load is refused
 * naming that directory rather than made by a name someone else could
 * give another file. */
Test(cpu, module_file_without_memfd_only_in_a_safe_tmpdir)
{
    char tmp[1024], real[PATH_MAX], open_dir[PATH_MAX + 8], mine[PATH_MAX + 16], marker[PATH_MAX + 16];
    char script[3 * PATH_MAX], src[512], cmd[1200];
    private_tmpdir(tmp, sizeof tmp);
    setenv("AMP_CACHE_DIR", "off", 1);
    cr_assert_not_null(realpath(tmp, real));
    snprintf(open_dir, sizeof open_dir, "%s/open", real);
    snprintf(mine, sizeof mine, "%s/mine", open_dir);
    snprintf(marker, sizeof marker, "%s/open-it", real);
    cr_assert_eq(mkdir(open_dir, 0755), 0);
    cr_assert_eq(mkdir(mine, 0700), 0);
    /* A compiler that, when marker exists, opens open_dir to everyone once
     * it has compiled a kernel (the compile has checked TMPDIR by then). */
    snprintf(script, sizeof script, "%s/opening-c++", real);
    FILE *f = fopen(script, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\n"
               "c++ \"$@\" || exit $?\n"
               "for a in \"$@\"; do last=$a; done\n"
               "case \"$last\" in */kernel.cpp) ;; *) exit 0 ;; esac\n"
               "if [ -e '%s' ]; then chmod 0777 '%s'; fi\n",
            marker, open_dir);
    fclose(f);
    cr_assert_eq(chmod(script, 0700), 0);
    setenv("AMP_CXX", script, 1);
    setenv("TMPDIR", mine, 1);
    amp_accelerator *acc = cpu_acc();
    block_memfd();
    build_and_run_unique(acc, unique_source(src, sizeof src, ""));
    cr_assert_eq(count_entries(mine, "hipamp-cpu-"), 0, "a temporary entry remains after a build");
    f = fopen(marker, "w");
    cr_assert_not_null(f);
    fclose(f);
    amp_program *p = (amp_program *)1;
    amp_status st = amp_program_build(acc, unique_source(src, sizeof src, "// opened\n"), NULL, &p);
    cr_assert_eq(st, AMP_ERROR_DEVICE, "%s: %s", amp_status_name(st), amp_last_error());
    cr_assert_null(p);
    char in[PATH_MAX + 16];
    snprintf(in, sizeof in, "is in %s, which", open_dir);
    cr_assert(strstr(amp_last_error(), in) && strstr(amp_last_error(), "writable by every user"), "%s",
              amp_last_error());
    cr_assert_eq(count_entries(mine, "hipamp-cpu-"), 0, "a module file was made under the refused directory");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    cr_assert_eq(system(cmd), 0);
}

/* Someone who renames the build directory away while the compiler runs
 * and puts one of theirs, with a kernel.so of theirs, at its name: what is
 * loaded is still what the compiler wrote in the directory hipamp made.
 * The "compiler" here does the swap itself once it has compiled: it moves
 * its directory aside and builds, at the old name, the same source with
 * another value. */
Test(cpu, build_directory_swapped_during_the_compile_is_not_read)
{
    char tmp[1024], src[512], script[1300];
    private_tmpdir(tmp, sizeof tmp);
    setenv("AMP_CACHE_DIR", "off", 1);
    snprintf(script, sizeof script, "%s/swapping-c++", tmp);
    FILE *f = fopen(script, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\n"
               "c++ \"$@\" || exit $?\n"
               "for a in \"$@\"; do last=$a; done\n"
               "case \"$last\" in */kernel.cpp) ;; *) exit 0 ;; esac\n"
               "d=$(dirname \"$last\")\n"
               "mv \"$d\" \"$d.theirs\" && mkdir \"$d\" || exit 1\n"
               "sed 's/v\\[i\\] = [0-9]*;/v[i] = 666;/' \"$d.theirs/kernel.cpp\" > \"$d/kernel.cpp\"\n"
               "c++ \"$@\"\n");
    fclose(f);
    cr_assert_eq(chmod(script, 0700), 0);
    setenv("AMP_CXX", script, 1);
    amp_accelerator *acc = cpu_acc();
    unique_source(src, sizeof src, "");
    amp_program *p = NULL;
    amp_status st = amp_program_build(acc, src, NULL, &p);
    if (st == AMP_OK) {
        int v[4] = {0};
        amp_array_view *vv = test_view(v, sizeof(int), amp_extent_1d(4), AMP_READ_WRITE);
        amp_arg a[] = {amp_arg_view(vv)};
        ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(4), test_kernel(p, "k"), a, 1));
        ASSERT_OK(amp_array_view_synchronize(vv));
        cr_assert_neq(v[0], 666, "the kernel.so put in place of the build directory was loaded");
        long want = strtol(strstr(src, "= ") + 2, NULL, 10);
        cr_assert_eq(v[0], (int)want, "got %d, want %ld", v[0], want);
        ASSERT_OK(amp_array_view_destroy(vv));
        ASSERT_OK(amp_program_destroy(p));
    } else {
        cr_assert_eq(st, AMP_ERROR_COMPILE, "%s: %s", amp_status_name(st), amp_last_error());
    }
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    cr_assert_eq(system(cmd), 0);
}

/* Directories (and module files) of a process that died mid-compile are
 * swept by the next compile; a live process's are not touched. */
Test(cpu, temporary_files_of_dead_processes_are_swept)
{
    char tmp[1024], path[1300], src[512];
    private_tmpdir(tmp, sizeof tmp);
    pid_t dead = fork();
    if (dead == 0) _exit(0);
    cr_assert_gt(dead, 0);
    cr_assert_eq(waitpid(dead, NULL, 0), dead);
    snprintf(path, sizeof path, "%s/hipamp-cpu-%ld-Ab12Cd", tmp, (long)dead);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/hipamp-cpu-%ld-Ab12Cd/kernel.cpp", tmp, (long)dead);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("// left by a killed process\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/hipamp-cpu-%ld-Zz99Yy.so", tmp, (long)dead);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fclose(f);
    char live[1300];
    snprintf(live, sizeof live, "%s/hipamp-cpu-%ld-Keep01", tmp, (long)getppid());
    cr_assert_eq(mkdir(live, 0700), 0);
    amp_accelerator *acc = cpu_acc();
    amp_program *p = test_build(acc, unique_source(src, sizeof src, ""));
    ASSERT_OK(amp_program_destroy(p));
    cr_assert_eq(count_entries(tmp, "hipamp-cpu-"), 1, "want only the live process's directory left");
    struct stat sb;
    cr_assert_eq(stat(live, &sb), 0, "the live process's directory was removed");
    rmdir(live);
    rmdir(tmp);
}

/* A process killed in the middle of a compile leaves no compiler running
 * (the guardian takes the compiler's process group down with it), and the
 * next compile sweeps the temporary directory it left. */
Test(cpu, killed_host_leaves_no_compiler_and_its_files_are_swept, .timeout = 120)
{
    char tmp[1024], fifo[1100], src[4096];
    private_fifo(tmp, sizeof tmp, "stuck.h", fifo, sizeof fifo);
    snprintf(src, sizeof src,
             "#define STUCK_HEADER \"%s\"\n#include STUCK_HEADER\n"
             "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 2; }\n",
             fifo);
    pid_t host = fork();
    cr_assert_geq(host, 0);
    if (host == 0) {
        setenv("AMP_COMPILE_TIMEOUT", "100", 1);
        amp_accelerator *acc = NULL;
        amp_program *p = NULL;
        if (amp_accelerator_find("cpu", &acc) == AMP_OK) (void)amp_program_build(acc, src, NULL, &p);
        _exit(0);
    }
    /* wait for its compiler to block on the FIFO */
    double t0 = now_s();
    while (count_processes_of(tmp, false) == 0 && now_s() - t0 < 20) usleep(20000);
    cr_assert_gt(count_processes_of(tmp, false), 0, "the compile never started");
    cr_assert_eq(kill(host, SIGKILL), 0);
    cr_assert_eq(waitpid(host, NULL, 0), host);
    t0 = now_s();
    while (count_processes_of(tmp, false) > 0 && now_s() - t0 < 10) usleep(20000);
    cr_assert_eq(count_processes_of(tmp, false), 0, "the compiler outlived the process that started it");
    cr_assert_eq(count_entries(tmp, "hipamp-cpu-"), 1, "want the killed process's directory left");
    unlink(fifo);
    amp_accelerator *acc = cpu_acc();
    char usrc[512];
    amp_program *p = test_build(acc, unique_source(usrc, sizeof usrc, ""));
    ASSERT_OK(amp_program_destroy(p));
    cr_assert_eq(count_entries(tmp, "hipamp-cpu-"), 0, "the killed process's directory was not swept");
    rmdir(tmp);
}

/* Simple launches run rows of the last dimension in bands and column blocks,
 * in chunks that start and end mid-row: each work-item still runs once. */
Test(cpu, simple_launches_visit_every_work_item_once)
{
    setenv("AMP_CPU_THREADS", "3", 1);
    amp_accelerator *acc = cpu_acc();
    amp_program *p = test_build(acc, cpu_kernels);
    static const int shapes2[][2] = {{1, 1}, {7, 301}, {37, 259}, {300, 3}, {9, 1000}};
    for (size_t s2 = 0; s2 < sizeof shapes2 / sizeof shapes2[0]; ++s2) {
        int R = shapes2[s2][0], C = shapes2[s2][1];
        int *count = calloc((size_t)R * C, sizeof *count), *where = test_xmalloc((size_t)R * C * sizeof *where);
        for (int i = 0; i < R * C; ++i) where[i] = POISON_I32;
        amp_array_view *vc = test_view(count, sizeof(int), amp_extent_2d(R, C), AMP_READ_WRITE);
        amp_array_view *vw = test_view(where, sizeof(int), amp_extent_2d(R, C), AMP_WRITE_ONLY);
        amp_arg a[] = {amp_arg_view(vc), amp_arg_view(vw)};
        ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_2d(R, C), test_kernel(p, "visit2"), a, 2));
        ASSERT_OK(amp_array_view_synchronize(vc));
        ASSERT_OK(amp_array_view_synchronize(vw));
        for (int i = 0; i < R * C; ++i) {
            cr_assert_eq(count[i], 1, "%dx%d: element %d visited %d times", R, C, i, count[i]);
            cr_assert_eq(where[i], i, "%dx%d: element %d written by %d", R, C, i, where[i]);
        }
        ASSERT_OK(amp_array_view_destroy(vc));
        ASSERT_OK(amp_array_view_destroy(vw));
        free(count);
        free(where);
    }
    enum { D0 = 5, D1 = 11, D2 = 263, N3 = D0 * D1 * D2 };
    int *count = calloc(N3, sizeof *count), *where = test_xmalloc(N3 * sizeof *where);
    for (int i = 0; i < N3; ++i) where[i] = POISON_I32;
    amp_array_view *vc = test_view(count, sizeof(int), amp_extent_3d(D0, D1, D2), AMP_READ_WRITE);
    amp_array_view *vw = test_view(where, sizeof(int), amp_extent_3d(D0, D1, D2), AMP_WRITE_ONLY);
    amp_arg a[] = {amp_arg_view(vc), amp_arg_view(vw)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_3d(D0, D1, D2), test_kernel(p, "visit3"), a, 2));
    ASSERT_OK(amp_array_view_synchronize(vc));
    ASSERT_OK(amp_array_view_synchronize(vw));
    for (int i = 0; i < N3; ++i) {
        cr_assert_eq(count[i], 1, "element %d visited %d times", i, count[i]);
        cr_assert_eq(where[i], i, "element %d written by %d", i, where[i]);
    }
    ASSERT_OK(amp_array_view_destroy(vc));
    ASSERT_OK(amp_array_view_destroy(vw));
    free(count);
    free(where);
    ASSERT_OK(amp_program_destroy(p));
}

/* ------------------------------------------------ the restrict path */

/* A launch whose written views overlap no other view runs its work-items
 * with restrict pointers (amp__cpu_launch.noalias; the rule itself is
 * test_internal's cpu_restrict tests), a simple kernel's and a tiled
 * kernel's loop version alike. Both ways must compute the same: a
 * TeaLeaf-like update that every work-item skips on a condition read from
 * a one-element view (hoisted out of the loop on the restrict path), and a
 * work-item reading an element through a const view, writing it through a
 * second view of the same memory and reading it again (not restrict: the
 * second read must see the write); each as a simple kernel and as a tiled
 * one with a barrier. RESTRICT_ON_AND_OFF(name) defines cpu/name and
 * cpu/name_unrestricted (AMP_CPU_RESTRICT=0), one body. */
#define RESTRICT_ON_AND_OFF(name) TEST_BOTH_WAYS(name, _unrestricted, "AMP_CPU_RESTRICT", "0")

static const char restrict_kernels[] =
    "AMP_KERNEL(cg_update, amp::index<2> idx, amp::array_view<double, 2> u, amp::array_view<double, 2> r,\n"
    "           amp::array_view<const double, 2> p, amp::array_view<const double, 2> w,\n"
    "           amp::array_view<const double, 1> rro, amp::array_view<const double, 1> pw, double eps)\n"
    "{\n"
    "    if (sqrt(fabs(rro[0])) < eps) return;\n"
    "    const double alpha = rro[0] / pw[0];\n"
    "    u[idx] += alpha * p[idx];\n"
    "    r[idx] -= alpha * w[idx];\n"
    "}\n"
    /* Restrict would let the compiler reuse x for the second read of
     * a_ro[i] across the store to a[i] (it does: 1000 of 1000 wrong when a
     * review forced the restrict path on this launch). */
    "AMP_KERNEL(read_write_read, amp::index<1> i, amp::array_view<int, 1> a, amp::array_view<const int, 1> a_ro)\n"
    "{\n"
    "    const int x = a_ro[i];\n"
    "    a[i] = x + 1;\n"
    "    a[i] += a_ro[i];\n"
    "}\n"
    /* The same as tiled kernels, each with a phase after a barrier: their
     * loop versions. cg_update_tiled's tile_static sum is r's change,
     * written to dr[tile] (checked too). read_write_read_tiled ends at
     * x + 2 (x + 1 where the second read missed the write). */
    "AMP_TILED_KERNEL(cg_update_tiled, amp::tiled_index<1, 37> t, amp::array_view<double, 2> u,\n"
    "                 amp::array_view<double, 2> r, amp::array_view<const double, 2> p,\n"
    "                 amp::array_view<const double, 2> w, amp::array_view<const double, 1> rro,\n"
    "                 amp::array_view<const double, 1> pw, double eps, amp::array_view<double, 2> dr)\n"
    "{\n"
    "    tile_static double moved[37];\n"
    "    double d = 0.0;\n"
    "    if (!(sqrt(fabs(rro[0])) < eps)) {\n"
    "        const double alpha = rro[0] / pw[0];\n"
    "        u[t.global] += alpha * p[t.global];\n"
    "        d = alpha * w[t.global];\n"
    "        r[t.global] -= d;\n"
    "    }\n"
    "    moved[t.local[1]] = d;\n"
    "    t.barrier.wait();\n"
    "    if (t.local[1] == 0) {\n"
    "        double sum = 0.0;\n"
    "        for (int k = 0; k < 37; ++k) sum += moved[k];\n"
    "        dr(t.tile[0], t.tile[1]) = sum;\n"
    "    }\n"
    "}\n"
    "AMP_TILED_KERNEL(read_write_read_tiled, amp::tiled_index<8> t, amp::array_view<int, 1> a,\n"
    "                 amp::array_view<const int, 1> a_ro)\n"
    "{\n"
    "    tile_static int first[8];\n"
    "    const int x = a_ro[t.global];\n"
    "    a[t.global] = x + 1;\n"
    "    a[t.global] += a_ro[t.global];\n"
    "    first[t.local[0]] = x;\n"
    "    t.barrier.wait();\n"
    "    a[t.global] -= first[t.local[0]];\n"
    "}\n";

/* Whether p's tiled kernel `name` runs as loops, which it must where the
 * loop transformation can run (false where it cannot: no libclang, or
 * AMP_LIBCLANG=none; the tiled half of the test is then left out). */
static bool runs_as_loops(amp_program *p, const char *name)
{
    amp_kernel_info info;
    ASSERT_OK(amp_kernel_get_info(test_kernel(p, name), &info));
    if (strncmp(info.execution, "cpu loops", 9) &&
        (strstr(info.execution, "libclang") || strstr(info.execution, "LIBCLANG"))) {
        cr_log_warn("%s: the loop transformation cannot run here (%s): its tiled half is left out", name,
                    info.execution);
        return false;
    }
    cr_assert(!strncmp(info.execution, "cpu loops", 9), "%s runs as \"%s\", not as loops", name, info.execution);
    return true;
}

RESTRICT_ON_AND_OFF(restrict_path_computes_what_the_plain_path_does)
{
    setenv("AMP_CPU_THREADS", "2", 1);
    amp_accelerator *acc = cpu_acc();
    amp_program *p = test_build(acc, restrict_kernels);
    enum { R = 37, C = 259, N = R * C };
    double *u = test_xmalloc(N * sizeof *u), *r = test_xmalloc(N * sizeof *r);
    double *pp = test_xmalloc(N * sizeof *pp), *w = test_xmalloc(N * sizeof *w);
    /* Small integers and alpha = 0.5: every result is exact, fused or not. */
    double *dr = test_xmalloc(R * (C / 37) * sizeof *dr); /* cg_update_tiled: r's change a tile */
    for (int tiled = 0; tiled < 2 && (!tiled || runs_as_loops(p, "cg_update_tiled")); ++tiled) {
        for (int step = 0; step < 2; ++step) {
            double rro = step == 0 ? 3.0 : 0.0, pw = 6.0; /* the second step has converged: nothing changes */
            for (int i = 0; i < N; ++i) {
                u[i] = i % 97;
                r[i] = -(i % 89);
                pp[i] = 2 * (i % 13);
                w[i] = 4 * (i % 7);
            }
            amp_array_view *vu = test_view(u, 8, amp_extent_2d(R, C), AMP_READ_WRITE);
            amp_array_view *vr = test_view(r, 8, amp_extent_2d(R, C), AMP_READ_WRITE);
            amp_array_view *vp = test_view(pp, 8, amp_extent_2d(R, C), AMP_READ_ONLY);
            amp_array_view *vw = test_view(w, 8, amp_extent_2d(R, C), AMP_READ_ONLY);
            amp_array_view *vrro = test_view(&rro, 8, amp_extent_1d(1), AMP_READ_ONLY);
            amp_array_view *vpw = test_view(&pw, 8, amp_extent_1d(1), AMP_READ_ONLY);
            for (int t = 0; t < R * (C / 37); ++t) dr[t] = -1.0;
            amp_array_view *vdr = test_view(dr, 8, amp_extent_2d(R, C / 37), AMP_READ_WRITE);
            amp_arg a[] = {amp_arg_view(vu),   amp_arg_view(vr),  amp_arg_view(vp),     amp_arg_view(vw),
                           amp_arg_view(vrro), amp_arg_view(vpw), amp_arg_float64(1e-3), amp_arg_view(vdr)};
            if (tiled) {
                amp_tiled_extent te;
                ASSERT_OK(amp_extent_tile_2d(amp_extent_2d(R, C), 1, 37, &te));
                ASSERT_OK(amp_parallel_for_each_tiled(NULL, te, test_kernel(p, "cg_update_tiled"), a, 8));
            } else {
                ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_2d(R, C), test_kernel(p, "cg_update"), a, 7));
            }
            ASSERT_OK(amp_array_view_synchronize(vu));
            ASSERT_OK(amp_array_view_synchronize(vr));
            ASSERT_OK(amp_array_view_synchronize(vdr));
            for (int i = 0; i < N; ++i) {
                double want_u = (i % 97) + (step == 0 ? 0.5 * 2 * (i % 13) : 0.0);
                double want_r = -(i % 89) - (step == 0 ? 0.5 * 4 * (i % 7) : 0.0);
                cr_assert(u[i] == want_u && r[i] == want_r, "%s, step %d, element %d: u %g r %g, want %g and %g",
                          tiled ? "tiled" : "simple", step, i, u[i], r[i], want_u, want_r);
            }
            for (int t = 0; tiled && t < R * (C / 37); ++t) {
                double want = 0.0;
                for (int k = 0; step == 0 && k < 37; ++k) want += 0.5 * 4 * ((t * 37 + k) % 7);
                cr_assert(dr[t] == want, "step %d, tile %d: r moved by %g, want %g", step, t, dr[t], want);
            }
            amp_array_view *vs[] = {vu, vr, vp, vw, vrro, vpw, vdr};
            for (size_t k = 0; k < sizeof vs / sizeof vs[0]; ++k) ASSERT_OK(amp_array_view_destroy(vs[k]));
        }
    }
    enum { M = 1000 };
    int *x = test_xmalloc(M * sizeof *x);
    for (int i = 0; i < M; ++i) x[i] = i;
    amp_array_view *vx = test_view(x, sizeof(int), amp_extent_1d(M), AMP_READ_WRITE);
    amp_array_view *vx_ro = test_view(x, sizeof(int), amp_extent_1d(M), AMP_READ_ONLY);
    amp_arg b[] = {amp_arg_view(vx), amp_arg_view(vx_ro)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(M), test_kernel(p, "read_write_read"), b, 2));
    ASSERT_OK(amp_array_view_synchronize(vx));
    for (int i = 0; i < M; ++i) cr_assert_eq(x[i], 2 * i + 2, "element %d is %d, want %d", i, x[i], 2 * i + 2);
    if (runs_as_loops(p, "read_write_read_tiled")) {
        for (int i = 0; i < M; ++i) x[i] = i;
        ASSERT_OK(amp_array_view_refresh(vx));
        ASSERT_OK(amp_array_view_refresh(vx_ro));
        amp_tiled_extent te;
        ASSERT_OK(amp_extent_tile_1d(amp_extent_1d(M), 8, &te));
        ASSERT_OK(amp_parallel_for_each_tiled(NULL, te, test_kernel(p, "read_write_read_tiled"), b, 2));
        ASSERT_OK(amp_array_view_synchronize(vx));
        for (int i = 0; i < M; ++i)
            cr_assert_eq(x[i], i + 2, "tiled: element %d is %d, want %d (%d: the second read missed the write)", i,
                         x[i], i + 2, i + 1);
    }
    ASSERT_OK(amp_array_view_destroy(vx));
    ASSERT_OK(amp_array_view_destroy(vx_ro));
    free(x);
    free(dr);
    free(u);
    free(r);
    free(pp);
    free(w);
    ASSERT_OK(amp_program_destroy(p));
}

/* ------------------------------------------------- the pool's hand-offs */

/* Pool threads that find no job spin for AMP_CPU_SPIN_US before they
 * sleep, and a launcher waits for them to leave its job spinning first
 * (cpu_pool.c). Two threads launch at once, each on its own data: bursts
 * back to back (the pool threads found spinning, or mid-job on the other
 * thread's launch) separated by pauses longer than the spin (found asleep).
 * Every launch must reach every element exactly once: a launch returning
 * before a pool thread left it, or a chunk run twice, shows in the sums.
 * Nothing here is timed; the pauses only make each transition likely. */
static const char spin_kernels[] =
    "AMP_KERNEL(add_scaled, amp::index<1> i, int k, amp::array_view<int, 1> v)\n"
    "{ v[i] += k * (i[0] % 7 + 1); }\n";

typedef struct {
    amp_kernel *k;
    int seed;
    unsigned pause_us; /* after every 8th launch; 0: none */
    int failures;
    char why[200];
} spin_launcher;

enum { SPIN_N = 65536, SPIN_LAUNCHES = 48 };

static void *spin_launch_main(void *arg)
{
    spin_launcher *w = arg;
    int *v = calloc(SPIN_N, sizeof *v);
    amp_array_view *vv = NULL;
    if (!v || amp_array_view_create(v, sizeof(int), amp_extent_1d(SPIN_N), AMP_READ_WRITE, &vv) != AMP_OK) {
        snprintf(w->why, sizeof w->why, "no memory or view: %s", amp_last_error());
        w->failures++;
        goto done;
    }
    int64_t ksum = 0;
    for (int r = 0; r < SPIN_LAUNCHES; ++r) {
        int k = w->seed * 1000 + r;
        ksum += k;
        amp_arg a[] = {amp_arg_int32(k), amp_arg_view(vv)};
        amp_status st = amp_parallel_for_each(NULL, amp_extent_1d(SPIN_N), w->k, a, 2);
        if (st != AMP_OK) {
            snprintf(w->why, sizeof w->why, "launch %d: status %d: %s", r, (int)st, amp_last_error());
            w->failures++;
            goto done;
        }
        if (w->pause_us && r % 8 == 7) usleep(w->pause_us);
    }
    if (amp_array_view_synchronize(vv) != AMP_OK) {
        snprintf(w->why, sizeof w->why, "synchronize: %s", amp_last_error());
        w->failures++;
        goto done;
    }
    for (int i = 0; i < SPIN_N; ++i)
        if ((int64_t)v[i] != ksum * (i % 7 + 1)) {
            snprintf(w->why, sizeof w->why, "element %d is %d, want %lld", i, v[i], (long long)(ksum * (i % 7 + 1)));
            w->failures++;
            break;
        }
done:
    if (vv) amp_array_view_destroy(vv);
    free(v);
    return NULL;
}

static void spin_case(const char *spin_us)
{
    setenv("AMP_CPU_THREADS", "3", 1);
    setenv("AMP_CPU_SPIN_US", spin_us, 1);
    amp_program *p = test_build(cpu_acc(), spin_kernels);
    amp_kernel *k = test_kernel(p, "add_scaled");
    /* One launcher pauses 3 ms (longer than the spin but in the last case)
     * after each burst of 8, the other never. */
    spin_launcher w[2] = {{k, 1, 3000, 0, ""}, {k, 2, 0, 0, ""}};
    pthread_t th[2];
    for (int i = 0; i < 2; ++i) cr_assert_eq(pthread_create(&th[i], NULL, spin_launch_main, &w[i]), 0);
    for (int i = 0; i < 2; ++i) pthread_join(th[i], NULL);
    for (int i = 0; i < 2; ++i) cr_assert_eq(w[i].failures, 0, "AMP_CPU_SPIN_US=%s, thread %d: %s", spin_us, i, w[i].why);
    /* And once more on this thread alone, after both have gone: the pool
     * threads asleep or spinning, whichever the spin left them. */
    spin_launcher last = {k, 3, 0, 0, ""};
    spin_launch_main(&last);
    cr_assert_eq(last.failures, 0, "AMP_CPU_SPIN_US=%s, alone: %s", spin_us, last.why);
    ASSERT_OK(amp_program_destroy(p));
}

/* 200 us: the bursts meet spinners, the pauses sleepers. */
Test(cpu, pool_hand_offs_with_spinning, .timeout = 120) { spin_case("200"); }
/* 1 us: spins end almost at once, so pool threads and launchers go to
 * sleep at nearly every launch (the transitions themselves). */
Test(cpu, pool_hand_offs_with_the_shortest_spin, .timeout = 120) { spin_case("1"); }
/* 0: nobody spins (the condition variables alone, as before spinning). */
Test(cpu, pool_hand_offs_without_spinning, .timeout = 120) { spin_case("0"); }
/* 20 ms: pool threads spin through the pauses (unless they find their
 * core wanted by another thread: cpu_pool.c's amp__cpu_spin_more). */
Test(cpu, pool_hand_offs_with_a_long_spin, .timeout = 120) { spin_case("20000"); }

/* ------------------------------------------- direct launches' widths */

/* A direct launch of at most 262144 points runs on the width its kernel
 * learned for its size, searched down from every thread and checked again
 * every 256 launches (lib/cpu/cpu_width.c, cpu_launch.c). 600 launches of
 * one size pass the search and two checks, so they run on 4, 2 and 1
 * threads (and back); every one must give the bits that a launch on every
 * thread gives: a simple kernel (each element reached exactly once per
 * launch), a tiled one through tile_static and a barrier, and the same
 * simple kernel asynchronously (from the queue's thread), and all of it
 * again with AMP_CPU_LEARN_WIDTHS=0. */
static const char width_kernels[] =
    "AMP_KERNEL(add_scaled, amp::index<1> i, int k, amp::array_view<int, 1> v)\n"
    "{ v[i] += k * (i[0] % 7 + 1); }\n"
    "AMP_TILED_KERNEL(add_reversed_tile, amp::tiled_index<64> t, amp::array_view<int, 1> v)\n"
    "{\n"
    "    tile_static int s[64];\n"
    "    s[t.local[0]] = t.global[0];\n"
    "    t.barrier.wait();\n"
    "    v[t.global] += s[63 - t.local[0]];\n"
    "}\n";

static void width_case(const char *learn)
{
    enum { N = 65536, LAUNCHES = 600 };
    setenv("AMP_CPU_THREADS", "4", 1);
    setenv("AMP_CPU_LEARN_WIDTHS", learn, 1);
    amp_program *p = test_build(cpu_acc(), width_kernels);
    amp_kernel *simple = test_kernel(p, "add_scaled"), *tiled = test_kernel(p, "add_reversed_tile");
    int *v = calloc(N, sizeof *v), *u = calloc(N, sizeof *u), *w = calloc(N, sizeof *w);
    cr_assert(v && u && w);
    amp_array_view *vv = test_view(v, sizeof(int), amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *vu = test_view(u, sizeof(int), amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *vw = test_view(w, sizeof(int), amp_extent_1d(N), AMP_READ_WRITE);
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(cpu_acc(), &q));
    int64_t ksum = 0;
    for (int r = 0; r < LAUNCHES; ++r) {
        ksum += r;
        amp_arg a[] = {amp_arg_int32(r), amp_arg_view(vv)};
        ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(N), simple, a, 2));
        amp_arg t[] = {amp_arg_view(vu)};
        ASSERT_OK(amp_parallel_for_each_tiled(NULL, tile1(N, 64), tiled, t, 1));
        amp_arg b[] = {amp_arg_int32(r), amp_arg_view(vw)};
        amp_future *f = NULL;
        ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(N), simple, b, 2, &f));
        ASSERT_OK(amp_future_destroy(f));
    }
    ASSERT_OK(amp_accelerator_view_wait(q));
    ASSERT_OK(amp_array_view_synchronize(vv));
    ASSERT_OK(amp_array_view_synchronize(vu));
    ASSERT_OK(amp_array_view_synchronize(vw));
    for (int i = 0; i < N; ++i) {
        int64_t want = ksum * (i % 7 + 1), reversed = (int64_t)LAUNCHES * (i / 64 * 64 + 63 - i % 64);
        cr_assert_eq(v[i], want, "AMP_CPU_LEARN_WIDTHS=%s: element %d is %d, want %lld", learn, i, v[i],
                     (long long)want);
        cr_assert_eq(w[i], want, "AMP_CPU_LEARN_WIDTHS=%s, asynchronous: element %d is %d, want %lld", learn, i,
                     w[i], (long long)want);
        cr_assert_eq(u[i], reversed, "AMP_CPU_LEARN_WIDTHS=%s, tiled: element %d is %d, want %lld", learn, i,
                     u[i], (long long)reversed);
    }
    ASSERT_OK(amp_accelerator_view_destroy(q));
    ASSERT_OK(amp_array_view_destroy(vv));
    ASSERT_OK(amp_array_view_destroy(vu));
    ASSERT_OK(amp_array_view_destroy(vw));
    free(v);
    free(u);
    free(w);
    ASSERT_OK(amp_program_destroy(p));
}

Test(cpu, direct_launches_on_learned_widths_give_the_same_bits, .timeout = 120) { width_case("1"); }
Test(cpu, direct_launches_on_every_thread_give_the_same_bits, .timeout = 120) { width_case("0"); }

/* ------------------------------------------------ streaming stores */

/* Which launches stream a kernel's declared views (amp__cpu_launch.stream,
 * decided in cpu_run.c), told apart by a kernel that breaks its promise on
 * purpose: it reads its streamed element before writing it. Its plain
 * stores read the memory's value (-7 everywhere); streamed, the read sees
 * the thread's buffer instead, which never holds -7 (it starts zeroed and
 * holds only values streamed kernels wrote). The written elements are
 * right either way. test_launch's streaming tests check the results. */
static const char stream_probe_kernels[] =
    "AMP_KERNEL_STREAMING_STORES(st_probe, 0)\n"
    "AMP_KERNEL(st_probe, amp::index<1> i, amp::array_view<int, 1> out, amp::array_view<int, 1> echo,\n"
    "           amp::array_view<const int, 1> other)\n"
    "{ echo[i] = out[i]; out[i] = i[0] + 1000 + other[0] * 0; }\n";

/* Launches st_probe over the first n elements of out and echo (the same
 * two arrays every time: the memory the launches cover is theirs; other
 * is a one-element array, or out's first element) and returns how many
 * work-items saw -7. */
enum { PROBE_MAX = 100000 };
static int probe_out[PROBE_MAX], probe_echo[PROBE_MAX], probe_other[1];
static int stream_probe(amp_program *p, int n, bool other_is_out)
{
    int *out = probe_out, *echo = probe_echo;
    for (int i = 0; i < n; ++i) out[i] = echo[i] = -7;
    amp_array_view *vo = test_view(out, sizeof *out, amp_extent_1d(n), AMP_READ_WRITE);
    amp_array_view *ve = test_view(echo, sizeof *echo, amp_extent_1d(n), AMP_WRITE_ONLY);
    amp_array_view *vx = other_is_out ? NULL : test_view(probe_other, sizeof(int), amp_extent_1d(1), AMP_READ_ONLY);
    if (other_is_out) ASSERT_OK(amp_array_view_section(vo, amp_index_1d(0), amp_extent_1d(1), &vx));
    amp_arg a[] = {amp_arg_view(vo), amp_arg_view(ve), amp_arg_view(vx)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(n), test_kernel(p, "st_probe"), a, 3));
    ASSERT_OK(amp_array_view_synchronize(vo));
    ASSERT_OK(amp_array_view_synchronize(ve));
    int plain = 0;
    for (int i = 0; i < n; ++i) {
        cr_assert_eq(out[i], i + 1000, "out[%d] is %d, want %d", i, out[i], i + 1000);
        plain += echo[i] == -7;
    }
    ASSERT_OK(amp_array_view_destroy(vx));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_array_view_destroy(ve));
    return plain;
}

/* debug: AMP_DEBUG's setting for the accelerator (debug builds never
 * stream: the other tests are of the others, whatever the run's setting). */
static amp_program *stream_probe_build_debug(bool debug)
{
    setenv("AMP_CPU_THREADS", "2", 1);
    setenv("AMP_DEBUG", debug ? "1" : "0", 1);
    return test_build(cpu_acc(), stream_probe_kernels);
}

static amp_program *stream_probe_build(void) { return stream_probe_build_debug(false); }

#if defined(__x86_64__)
/* Over the threshold (0 here), the declared view is streamed: no
 * work-item's read reached memory; the kernel's info names the parameter. */
Test(cpu, streaming_stores_run_over_the_threshold)
{
    setenv("AMP_CPU_STREAM_MIN", "0", 1);
    amp_program *p = stream_probe_build();
    amp_kernel_info ki;
    ASSERT_OK(amp_kernel_get_info(test_kernel(p, "st_probe"), &ki));
    cr_assert(strstr(ki.execution, "streaming stores to parameter 0"), "%s", ki.execution);
    cr_assert_eq(stream_probe(p, 100000, false), 0, "a launch over the threshold was not streamed");
    cr_assert_eq(stream_probe(p, 77, false), 0, "a small launch over a threshold of 0 was not streamed");
    /* A view of the launch sharing out's memory: no restrict path, no streaming. */
    cr_assert_eq(stream_probe(p, 5000, true), 5000, "a launch whose views overlap was streamed");
    ASSERT_OK(amp_program_destroy(p));
}

/* The threshold: launches stream once the memory that this thread's last
 * 8 launches of streamed kernels covered, their own included, reaches
 * AMP_CPU_STREAM_MIN bytes: st_probe's views over n elements cover 8n + 4
 * bytes (out, echo, the one-element other), so 9999 elements stay under
 * 80000; from 15000 (120004 bytes, 1.5 times the threshold) everything is
 * streamed, and a small launch right after that still streams whole (the
 * launches' set is what does not fit), until 8 launches over other memory
 * have aged the large spans out. In between, see the next test. */
Test(cpu, streaming_stores_follow_the_threshold)
{
    setenv("AMP_CPU_STREAM_MIN", "80000", 1);
    amp_program *p = stream_probe_build();
    amp_kernel_info ki;
    ASSERT_OK(amp_kernel_get_info(test_kernel(p, "st_probe"), &ki));
    cr_assert(strstr(ki.execution, "streaming stores to parameter 0 where recent launches' views cover 80000 bytes or more"),
              "%s", ki.execution);
    cr_assert_eq(stream_probe(p, 9999, false), 9999, "launches over 79996 bytes were streamed");
    cr_assert_eq(stream_probe(p, 15000, false), 0, "launches over 120004 bytes were not streamed whole");
    cr_assert_eq(stream_probe(p, 100, false), 0, "a small launch after large ones was not streamed whole");
    static int small[8][2][8];
    for (int r = 0; r < 8; ++r) {
        amp_array_view *vo = test_view(small[r][0], sizeof(int), amp_extent_1d(8), AMP_READ_WRITE);
        amp_array_view *ve = test_view(small[r][1], sizeof(int), amp_extent_1d(8), AMP_WRITE_ONLY);
        amp_array_view *vx = test_view(probe_other, sizeof(int), amp_extent_1d(1), AMP_READ_ONLY);
        amp_arg a[] = {amp_arg_view(vo), amp_arg_view(ve), amp_arg_view(vx)};
        ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(8), test_kernel(p, "st_probe"), a, 3));
        ASSERT_OK(amp_array_view_destroy(vo));
        ASSERT_OK(amp_array_view_destroy(ve));
        ASSERT_OK(amp_array_view_destroy(vx));
    }
    cr_assert_eq(stream_probe(p, 100, false), 100, "a small launch after the large ones aged out was streamed");
    ASSERT_OK(amp_program_destroy(p));
}

/* Between the threshold C and 1.5 C a launch keeps the first share h =
 * 3C/S - 2 of each thread's block in plain stores (part of the set still
 * fits in the cache) and streams the rest: 10000 elements (80004 bytes)
 * keep 255/256 of each block, 12000 (96004) 127/256, 14000 (112004)
 * 36/256. Every element is right either way (stream_probe checks out[]),
 * and exactly the work-items at the head of each block stored plainly:
 * with spinning threads (AMP_CPU_SPIN_US) a launch runs in one block a
 * thread, two here (cpu_pool.c's home blocks, a multiple of 64 work-items
 * each but the last), without them in one block, the whole launch (the
 * shared counter). Widths are not learned, so every launch takes both
 * threads. */
static void keep_case(bool spin)
{
    setenv("AMP_CPU_STREAM_MIN", "80000", 1);
    setenv("AMP_CPU_LEARN_WIDTHS", "0", 1);
    setenv("AMP_CPU_SPIN_US", spin ? "200" : "0", 1);
    amp_program *p = stream_probe_build();
    const struct {
        int n, keep;
    } t[] = {{10000, 255}, {12000, 127}, {14000, 36}};
    for (int k = 0; k < 3; ++k) {
        const int n = t[k].n, keep = t[k].keep, plain = stream_probe(p, n, false);
        const long long per = spin ? ((n + 1) / 2 + 63) / 64 * 64 : n;
        int want = 0;
        for (long long start = 0; start < n; start += per) {
            const long long len = n - start < per ? n - start : per, head = len / 256 * keep + len % 256 * keep / 256;
            for (long long i = start; i < start + len; ++i) {
                const bool kept = i - start < head;
                want += kept;
                cr_assert_eq(probe_echo[i] == -7, kept,
                             "%d elements (%d bytes against 80000, %d/256 kept, blocks of %lld): work-item %lld "
                             "stored %s",
                             n, 8 * n + 4, keep, per, i, kept ? "streamed, want plain" : "plainly, want streamed");
            }
        }
        cr_assert_eq(plain, want, "%d elements: %d stored plainly, want %d", n, plain, want);
    }
    ASSERT_OK(amp_program_destroy(p));
}

Test(cpu, streaming_stores_keep_the_head_of_each_threads_block) { keep_case(true); }
Test(cpu, streaming_stores_keep_the_head_of_a_launch_run_from_the_counter) { keep_case(false); }

/* The same, rank 2, on three spinning threads: a block's kept head ends
 * mid-row, and the streamed rest starts there. */
Test(cpu, streaming_stores_kept_heads_end_mid_row)
{
    enum { R = 203, C = 333 };
    /* out and in: 2 * 4 * R * C = 540792 bytes; h = 3C/S - 2 = 0.4 at a
     * threshold of 432634 (102/256). */
    setenv("AMP_CPU_STREAM_MIN", "432634", 1);
    setenv("AMP_CPU_THREADS", "3", 1);
    setenv("AMP_CPU_SPIN_US", "200", 1);
    setenv("AMP_CPU_LEARN_WIDTHS", "0", 1);
    static const char src[] =
        "AMP_KERNEL_STREAMING_STORES(st2, 0)\n"
        "AMP_KERNEL(st2, amp::index<2> i, amp::array_view<int, 2> out, amp::array_view<const int, 2> in)\n"
        "{ out[i] = in[i] * 3 + i[1]; }\n";
    amp_program *p = test_build(cpu_acc(), src);
    static int out[R * C], in[R * C];
    for (int i = 0; i < R * C; ++i) {
        in[i] = i ^ 0x5a5a;
        out[i] = -7;
    }
    amp_array_view *vo = test_view(out, sizeof(int), amp_extent_2d(R, C), AMP_WRITE_ONLY);
    amp_array_view *vi = test_view(in, sizeof(int), amp_extent_2d(R, C), AMP_READ_ONLY);
    amp_arg a[] = {amp_arg_view(vo), amp_arg_view(vi)};
    for (int rep = 0; rep < 3; ++rep) {
        ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_2d(R, C), test_kernel(p, "st2"), a, 2));
        ASSERT_OK(amp_array_view_synchronize(vo));
        for (int i = 0; i < R * C; ++i)
            cr_assert_eq(out[i], in[i] * 3 + i % C, "launch %d: out[%d][%d] is %d, want %d", rep, i / C, i % C,
                         out[i], in[i] * 3 + i % C);
        memset(out, 0, sizeof out);
        ASSERT_OK(amp_array_view_refresh(vo));
    }
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_program_destroy(p));
}
#endif

/* Off: AMP_CPU_STREAM_STORES=0, or the restrict path off (AMP_CPU_RESTRICT=0),
 * or a launch under the default threshold (the last-level cache). */
Test(cpu, streaming_stores_off_by_setting)
{
    setenv("AMP_CPU_STREAM_MIN", "0", 1);
    setenv("AMP_CPU_STREAM_STORES", "0", 1);
    amp_program *p = stream_probe_build();
    amp_kernel_info ki;
    ASSERT_OK(amp_kernel_get_info(test_kernel(p, "st_probe"), &ki));
    cr_assert(strstr(ki.execution, "streaming stores off (AMP_CPU_STREAM_STORES) for parameter 0"), "%s",
              ki.execution);
    cr_assert_eq(stream_probe(p, 100000, false), 100000, "streamed with AMP_CPU_STREAM_STORES=0");
    ASSERT_OK(amp_program_destroy(p));
}

Test(cpu, streaming_stores_need_the_restrict_path)
{
    setenv("AMP_CPU_STREAM_MIN", "0", 1);
    setenv("AMP_CPU_RESTRICT", "0", 1);
    amp_program *p = stream_probe_build();
    cr_assert_eq(stream_probe(p, 100000, false), 100000, "streamed with AMP_CPU_RESTRICT=0");
    ASSERT_OK(amp_program_destroy(p));
}

/* Kernels whose streamed elements take more than 256 bytes a work-item,
 * or are aligned to more than a line, and every kernel built with debug
 * checks (AMP_DEBUG=1), are not streamed: their info says nothing of it,
 * and a launch over the threshold reads memory. */
Test(cpu, streaming_stores_not_for_large_elements_or_debug_builds)
{
    setenv("AMP_CPU_STREAM_MIN", "0", 1);
    setenv("AMP_CPU_THREADS", "2", 1);
    setenv("AMP_DEBUG", "0", 1); /* k_small streams only outside debug mode (the next test) */
    static const char src[] =
        "struct big { double v[40]; };\n"
        "struct alignas(128) wide { double v[16]; };\n"
        "AMP_KERNEL_STREAMING_STORES(k_big, 0)\n"
        "AMP_KERNEL(k_big, amp::index<1> i, amp::array_view<big, 1> out) { big b = {}; b.v[0] = i[0]; out[i] = b; }\n"
        "AMP_KERNEL_STREAMING_STORES(k_wide, 0)\n"
        "AMP_KERNEL(k_wide, amp::index<1> i, amp::array_view<wide, 1> out) { wide w = {}; out[i] = w; }\n"
        "AMP_KERNEL_STREAMING_STORES(k_small, 0)\n"
        "AMP_KERNEL(k_small, amp::index<1> i, amp::array_view<double, 1> out) { out[i] = i[0]; }\n";
    amp_program *p = test_build(cpu_acc(), src);
    const char *names[] = {"k_big", "k_wide", "k_small"};
    for (int i = 0; i < 3; ++i) {
        amp_kernel_info ki;
        ASSERT_OK(amp_kernel_get_info(test_kernel(p, names[i]), &ki));
        const bool streams = strstr(ki.execution, "streaming stores") != NULL;
#if defined(__x86_64__)
        cr_assert_eq(streams, i == 2, "%s: %s", names[i], ki.execution);
#else
        cr_assert(!streams, "%s: %s", names[i], ki.execution);
#endif
    }
    ASSERT_OK(amp_program_destroy(p));
}

Test(cpu, streaming_stores_not_in_debug_mode)
{
    setenv("AMP_CPU_STREAM_MIN", "0", 1);
    amp_program *p = stream_probe_build_debug(true);
    amp_kernel_info ki;
    ASSERT_OK(amp_kernel_get_info(test_kernel(p, "st_probe"), &ki));
    cr_assert(!strstr(ki.execution, "streaming stores"), "debug build: %s", ki.execution);
    cr_assert_eq(stream_probe(p, 100000, false), 100000, "a debug build's launch was streamed");
    ASSERT_OK(amp_program_destroy(p));
}

Test(cpu, streaming_stores_not_under_the_cache_size)
{
    amp_program *p = stream_probe_build();
    cr_assert_eq(stream_probe(p, 1000, false), 1000, "a 12 KB launch was streamed under the default threshold");
    ASSERT_OK(amp_program_destroy(p));
}

/* ------------------------------------------------------------- fork */

/* A forked child has none of the pool's threads and uses the CPU
 * accelerator afresh: its launches run (the pool's condition variables,
 * inherited still counting the parent's sleeping threads, made the
 * child's third launch wait for ever), a tiled launch on fibers runs after
 * a fork in the middle of one (the slots' parked fibers belonged to the
 * parent's threads: the child resumed them and crashed), and a child
 * forked before the pool's first launch can wait for its queue (it waited
 * for the parent's queue thread for ever). Each child reports through its
 * exit status; an alarm ends a hung one. */
static const char fork_source[] =
    "AMP_KERNEL(fork_fill, amp::index<1> i, amp::array_view<int, 1> out, int k)\n"
    "{\n    out[i] = k + i[0];\n}\n"
    "AMP_TILED_KERNEL(fork_reverse, amp::tiled_index<64> t, amp::array_view<int, 1> out)\n"
    "{\n    tile_static int s[64];\n    s[t.local[0]] = t.global[0];\n    t.barrier.wait();\n"
    "    out[t.global] = s[63 - t.local[0]];\n}\n"
    "AMP_TILED_KERNEL(fork_hold, amp::tiled_index<64> t, amp::array_view<int, 1> out, unsigned long long addr)\n"
    "{\n    tile_static int s[64];\n    s[t.local[0]] = t.global[0];\n    t.barrier.wait();\n"
    "    if (t.local[0] == 0)\n        while (!*reinterpret_cast<volatile int *>(addr)) {\n        }\n"
    "    t.barrier.wait();\n    out[t.global] = s[63 - t.local[0]];\n}\n";

enum { FORK_N = 64 * 64 };

/* 0 when every element of out is what the kernel wrote. */
static int fork_fill_and_check(amp_kernel *k, int *out, int key)
{
    amp_array_view *v = NULL;
    if (amp_array_view_create(out, sizeof *out, amp_extent_1d(FORK_N), AMP_READ_WRITE, &v) != AMP_OK) return 10;
    amp_arg a[] = {amp_arg_view(v), amp_arg_int32(key)};
    int bad = amp_parallel_for_each(NULL, amp_extent_1d(FORK_N), k, a, 2) != AMP_OK ? 11 : 0;
    if (!bad && amp_array_view_synchronize(v) != AMP_OK) bad = 12;
    for (int i = 0; !bad && i < FORK_N; ++i)
        if (out[i] != key + i) bad = 13;
    amp_array_view_destroy(v);
    return bad;
}

static int fork_reverse_and_check(amp_accelerator_view *q, amp_kernel *k, int *out)
{
    amp_array_view *v = NULL;
    if (amp_array_view_create(out, sizeof *out, amp_extent_1d(FORK_N), AMP_READ_WRITE, &v) != AMP_OK) return 20;
    amp_arg a[] = {amp_arg_view(v)};
    amp_tiled_extent t;
    int tile = 64;
    int bad = amp_extent_tile(amp_extent_1d(FORK_N), &tile, &t) != AMP_OK ? 21 : 0;
    if (!bad && amp_parallel_for_each_tiled(q, t, k, a, 1) != AMP_OK) {
        fprintf(stderr, "child: the tiled launch: %s\n", amp_last_error());
        bad = 22;
    }
    if (!bad && amp_array_view_synchronize(v) != AMP_OK) bad = 23;
    for (int i = 0; !bad && i < FORK_N; ++i)
        if (out[i] != i / 64 * 64 + 63 - i % 64) bad = 24;
    amp_array_view_destroy(v);
    return bad;
}

/* The child's exit status, asserted 0; a signal (the alarm: it hung) or
 * another status fails, with what status means. */
static void fork_wait_child(pid_t pid, const char *what)
{
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(!WIFSIGNALED(status), "%s: the child was killed by signal %d (14: it hung)", what, WTERMSIG(status));
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: the child's check %d failed", what,
              WEXITSTATUS(status));
}

Test(cpu, a_forked_child_launches_after_an_idle_pool, .timeout = 120)
{
    setenv("AMP_CPU_THREADS", "3", 1);
    amp_accelerator *acc = cpu_acc();
    amp_program *p = test_build(acc, fork_source);
    amp_kernel *k = test_kernel(p, "fork_fill");
    static int out[FORK_N];
    cr_assert_eq(fork_fill_and_check(k, out, 1), 0);
    nanosleep(&(struct timespec){0, 200000000}, NULL); /* the pool's threads asleep */
    pid_t pid = fork();
    cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
    if (pid == 0) {
        alarm(30);
        for (int r = 0; r < 10; ++r) {
            int bad = fork_fill_and_check(k, out, 100 + r);
            if (bad) _exit(bad);
        }
        _exit(0);
    }
    fork_wait_child(pid, "ten launches in the child");
    cr_assert_eq(fork_fill_and_check(k, out, 2), 0);
    ASSERT_OK(amp_program_destroy(p));
}

Test(cpu, a_forked_child_runs_fibers_after_a_fork_in_the_middle_of_a_tiled_launch, .timeout = 120)
{
    setenv("AMP_CPU_THREADS", "3", 1);
    setenv("AMP_CPU_TILED", "fibers", 1);
    amp_accelerator *acc = cpu_acc();
    amp_program *p = test_build(acc, fork_source);
    amp_kernel *hold = test_kernel(p, "fork_hold"), *rev = test_kernel(p, "fork_reverse");
    static int held[FORK_N], out[FORK_N];
    static volatile int flag;
    amp_array_view *v = test_view(held, sizeof *held, amp_extent_1d(FORK_N), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v), amp_arg_uint64((uint64_t)(uintptr_t)&flag)};
    amp_tiled_extent t;
    int tile = 64;
    ASSERT_OK(amp_extent_tile(amp_extent_1d(FORK_N), &tile, &t));
    amp_future *f = NULL;
    ASSERT_OK(amp_parallel_for_each_tiled_async(NULL, t, hold, a, 2, &f));
    nanosleep(&(struct timespec){0, 300000000}, NULL); /* every thread's tile parked at its barrier */
    pid_t pid = fork();
    cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
    if (pid == 0) {
        /* A queue of its own: the default one lost the parent's launch in
         * the fork, which its launches report. */
        alarm(30);
        amp_accelerator_view *q = NULL;
        if (amp_accelerator_view_create(acc, &q) != AMP_OK) _exit(25);
        for (int r = 0; r < 3; ++r) {
            int bad = fork_reverse_and_check(q, rev, out);
            if (bad) _exit(bad);
        }
        _exit(0);
    }
    flag = 1;
    ASSERT_OK(amp_future_wait(f));
    ASSERT_OK(amp_future_destroy(f));
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < FORK_N; ++i) cr_assert_eq(held[i], i / 64 * 64 + 63 - i % 64, "held[%d] = %d", i, held[i]);
    fork_wait_child(pid, "tiled launches on fibers in the child");
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
}

Test(cpu, a_child_forked_before_the_pools_first_launch_can_wait_for_its_queue, .timeout = 120)
{
    setenv("AMP_CPU_THREADS", "1", 1);
    amp_accelerator *acc = cpu_acc();
    amp_program *p = test_build(acc, fork_source);
    amp_kernel *k = test_kernel(p, "fork_fill");
    static int out[4][FORK_N];
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    amp_array_view *v[4];
    amp_future *f[4];
    for (int i = 0; i < 4; ++i) {
        v[i] = test_view(out[i], sizeof out[i][0], amp_extent_1d(FORK_N), AMP_READ_WRITE);
        amp_arg a[] = {amp_arg_view(v[i]), amp_arg_int32(i)};
        ASSERT_OK(amp_parallel_for_each_async(q, amp_extent_1d(FORK_N), k, a, 2, &f[i]));
    }
    pid_t pid = fork();
    cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
    if (pid == 0) {
        alarm(20);
        /* The parent's queued launches do not run here: the wait says so
         * or finds nothing left; either way it returns. */
        (void)amp_accelerator_view_wait(q);
        _exit(amp_accelerator_view_destroy(q) == AMP_OK ? 0 : 30);
    }
    for (int i = 0; i < 4; ++i) {
        ASSERT_OK(amp_future_wait(f[i]));
        ASSERT_OK(amp_future_destroy(f[i]));
        ASSERT_OK(amp_array_view_synchronize(v[i]));
        for (int j = 0; j < FORK_N; ++j) cr_assert_eq(out[i][j], i + j);
        ASSERT_OK(amp_array_view_destroy(v[i]));
    }
    fork_wait_child(pid, "a queue's wait in the child");
    ASSERT_OK(amp_accelerator_view_destroy(q));
    ASSERT_OK(amp_program_destroy(p));
}

/* ------------------------------------------- the compiler's process, env */

/* A program that ignores SIGCHLD (so its children are reaped for it, a
 * daemon's habit) still builds: the compiler's exit status is not lost. */
Test(cpu, a_program_ignoring_sigchld_still_compiles, .timeout = 120)
{
    char src[512];
    setenv("AMP_CACHE_DIR", "off", 1);
    amp_accelerator *acc = cpu_acc();
    cr_assert_neq(signal(SIGCHLD, SIG_IGN), SIG_ERR);
    build_and_run_unique(acc, unique_source(src, sizeof src, ""));
}

/* A SIGCHLD handler that reaps every child it is told of (the usual
 * "while (waitpid(-1, ...) > 0)") does not fail the build: neither where it
 * runs in the program nor in a process of the library's (where it would
 * take the compiler's status). */
static void reap_all(int sig)
{
    (void)sig;
    int e = errno;
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
    errno = e;
}

Test(cpu, a_sigchld_handler_reaping_every_child_does_not_fail_the_build, .timeout = 120)
{
    char src[512];
    setenv("AMP_CACHE_DIR", "off", 1);
    amp_accelerator *acc = cpu_acc();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = reap_all;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    cr_assert_eq(sigaction(SIGCHLD, &sa, NULL), 0);
    build_and_run_unique(acc, unique_source(src, sizeof src, ""));
}

/* A compiler named by a relative path (AMP_CXX=bin/cxx) is the one found
 * when the accelerator was set up, wherever the program's working
 * directory is when it builds. */
Test(cpu, a_relative_compiler_path_is_the_one_found_at_set_up, .timeout = 120)
{
    char tmp[1024], bin[1100], link[1200], src[512], real[PATH_MAX];
    private_tmpdir(tmp, sizeof tmp);
    setenv("AMP_CACHE_DIR", "off", 1);
    const char *cxx = getenv("AMP_CXX") && *getenv("AMP_CXX") ? getenv("AMP_CXX") : "c++";
    FILE *w = popen("command -v ${AMP_CXX:-c++}", "r");
    cr_assert_not_null(w);
    cr_assert_not_null(fgets(real, sizeof real, w), "no %s on PATH", cxx);
    pclose(w);
    real[strcspn(real, "\n")] = 0;
    snprintf(bin, sizeof bin, "%s/bin", tmp);
    cr_assert_eq(mkdir(bin, 0700), 0);
    snprintf(link, sizeof link, "%s/cxx", bin);
    cr_assert_eq(symlink(real, link), 0, "symlink: %s", strerror(errno));
    char cwd[PATH_MAX];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    cr_assert_eq(chdir(tmp), 0);
    setenv("AMP_CXX", "bin/cxx", 1);
    amp_accelerator *acc = cpu_acc();
    cr_assert_eq(chdir(cwd), 0);
    build_and_run_unique(acc, unique_source(src, sizeof src, ""));
    unlink(link);
    rmdir(bin);
}

/* DEPENDENCIES_OUTPUT (and SUNPRO_DEPENDENCIES) make GCC write a
 * dependency list wherever they say, for a compile without -MD: a
 * program run from a make that exports it must not have the library's
 * compiles (a split build's parts) written into the user's file. */
Test(cpu, dependency_variables_of_the_environment_write_nothing, .timeout = 120)
{
    static const char *const vars[] = {"DEPENDENCIES_OUTPUT", "SUNPRO_DEPENDENCIES"};
    char dir[PATH_MAX];
    logging_compiler(dir, sizeof dir, "3");
    amp_accelerator *acc = cpu_acc();
    for (int v = 0; v < 2; ++v) {
        char deps[PATH_MAX + 64], src[sizeof split_src + 64];
        snprintf(deps, sizeof deps, "%s/user-%s.d", dir, vars[v]);
        snprintf(src, sizeof src, "%s// %s\n", split_src, vars[v]);
        setenv(vars[v], deps, 1);
        amp_program *p = NULL;
        ASSERT_OK(amp_program_build(acc, src, NULL, &p));
        run_split_kernels(p);
        ASSERT_OK(amp_program_destroy(p));
        unsetenv(vars[v]);
        struct stat sb;
        cr_assert_neq(stat(deps, &sb), 0, "the compiler wrote %s (%s)", deps, vars[v]);
    }
}

/* The compiler and what it starts hold no descriptor of the program's (one
 * it did not mark close-on-exec: the write end of a pipe whose reader
 * waits for its end, a locked file): it would keep them for as long as it
 * runs. */
Test(cpu, the_compiler_inherits_no_descriptor_of_the_program, .timeout = 120)
{
    char dir[PATH_MAX], log[PATH_MAX + 16], src[512];
    wrapped_compiler(dir, sizeof dir, "fds", "ls /proc/$$/fd >> '%s/fds.log'");
    snprintf(log, sizeof log, "%s/fds.log", dir);
    setenv("AMP_CACHE_DIR", "off", 1);
    int p[2];
    cr_assert_eq(pipe(p), 0);
    cr_assert_eq(dup2(p[0], 100), 100);
    cr_assert_eq(dup2(p[1], 101), 101);
    build_and_run_unique(cpu_acc(), unique_source(src, sizeof src, ""));
    FILE *f = fopen(log, "r");
    cr_assert_not_null(f, "the compiler wrapper left no %s", log);
    char line[64];
    int runs = 0;
    while (fgets(line, sizeof line, f)) {
        int fd = atoi(line);
        runs += fd == 0;
        cr_assert(fd != 100 && fd != 101, "the compiler holds the program's descriptor %d", fd);
    }
    fclose(f);
    cr_assert_gt(runs, 0, "%s lists no descriptor", log);
}

/* Another thread's fork() landing while a build runs, between the
 * compiler's pipe being made and our copy of its write end being closed,
 * made certain: every fork of the build (pthread_atfork's parent side,
 * right after fork returns and before the library closes its copy)
 * starts a process that lives 30 s holding that copy. */
static volatile int g_hold_forks;
static pid_t g_holders[16];
static int g_nholders;
static void hold_fork_parent(void)
{
    if (!g_hold_forks || g_nholders >= 16) return;
    /* clone, not fork: no fork handlers (this one) inside a fork's */
    pid_t c = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL);
    if (c == 0) {
        struct timespec t = {30, 0};
        syscall(SYS_nanosleep, &t, NULL);
        syscall(SYS_exit_group, 0);
    }
    if (c > 0) g_holders[g_nholders++] = c;
}

static void hold_forks_end(void)
{
    g_hold_forks = 0;
    for (int i = 0; i < g_nholders; ++i) {
        kill(g_holders[i], SIGKILL);
        waitpid(g_holders[i], NULL, 0);
    }
}

/* Such a fork does not hold the build up for as long as its child lives:
 * the build ends when the compiler does. */
Test(cpu, a_fork_in_another_thread_does_not_hold_the_build_up, .timeout = 120)
{
    char src[512];
    setenv("AMP_CACHE_DIR", "off", 1);
    setenv("AMP_CPU_COMPILE_JOBS", "1", 1);
    amp_accelerator *acc = cpu_acc();
    cr_assert_eq(pthread_atfork(NULL, hold_fork_parent, NULL), 0);
    g_hold_forks = 1;
    double t0 = now_s();
    for (int i = 0; i < 3; ++i) {
        char extra[64];
        snprintf(extra, sizeof extra, "// %d\n", i);
        build_and_run_unique(acc, unique_source(src, sizeof src, extra));
    }
    double took = now_s() - t0;
    int held = g_nholders;
    hold_forks_end();
    cr_assert_gt(held, 0, "no fork was held");
    cr_assert_lt(took, 25.0, "three builds took %.1f s while %d forks were held for 30 s", took, held);
}

/* The same for the loop transformation's child: its answer ends with its
 * child (it was taken for stuck after 5 s before, and the kernel ran as
 * fibers). */
/* ------------------------------------------------ the compiler's log */

/* A compiler (a script in dir, made executable) that runs c++ but, for a
 * source holding a loop version, prints GCC's diagnostics for one that
 * does not compile and fails: a kernel named error_tile has its name in
 * the context line before the error. */
static void failing_loops_compiler(const char *dir, char *script, size_t cap)
{
    snprintf(script, cap, "%s/loops-fail-c++", dir);
    FILE *f = fopen(script, "w");
    cr_assert_not_null(f, "%s: %s", script, strerror(errno));
    fprintf(f, "#!/bin/sh\n"
               "for a in \"$@\"; do last=$a; done\n"
               "if [ -f \"$last\" ] && grep -q '^#line 1 \"hipamp loop version of' \"$last\"; then\n"
               "  echo \"hipamp loop version of error_tile: In function 'void error_tile__amp_loops()':\" >&2\n"
               "  echo \"hipamp loop version of error_tile:4:5: error: 'oops' was not declared in this scope\" >&2\n"
               "  exit 1\n"
               "fi\n"
               "exec c++ \"$@\"\n");
    fclose(f);
    cr_assert_eq(chmod(script, 0700), 0);
}

/* The loop version turned off names the compiler's error, not the first
 * line holding the word (the kernel's name holds it). */
Test(cpu, a_loop_version_that_does_not_compile_is_named_by_its_error_line, .timeout = 120)
{
    char tmp[1024], script[1200];
    private_tmpdir(tmp, sizeof tmp);
    setenv("AMP_CACHE_DIR", "off", 1);
    failing_loops_compiler(tmp, script, sizeof script);
    setenv("AMP_CXX", script, 1);
    amp_accelerator *acc = cpu_acc();
    amp_program *p = test_build(acc, "AMP_TILED_KERNEL(error_tile, amp::tiled_index<4> t, amp::array_view<int, 1> v)\n"
                                     "{ tile_static int s[4]; s[t.local[0]] = t.local[0]; t.barrier.wait();\n"
                                     "  v[t.global] = s[3 - t.local[0]]; }\n");
    amp_kernel_info ki;
    ASSERT_OK(amp_kernel_get_info(test_kernel(p, "error_tile"), &ki));
    if (!strstr(ki.execution, "did not compile") && strstr(ki.execution, "libclang"))
        cr_skip_test("the loop transformation cannot run here: %s", ki.execution);
    assert_contains(ki.execution, "the loop version did not compile: hipamp loop version of error_tile:4:5: error: "
                                  "'oops'");
}

/* pipe2 fails with EMFILE in this (test) process from here on. */
static void block_pipe2(void) { block_syscall(__NR_pipe2, EMFILE, "pipe2"); }

/* A compiler that cannot be started for want of a resource fails the build
 * with that failure's status and message (once prefixed), not as
 * AMP_ERROR_UNSUPPORTED: the accelerator can compile, this process could
 * not at that moment. */
Test(cpu, a_compiler_that_cannot_be_spawned_keeps_the_failures_status, .timeout = 120)
{
    char src[512];
    setenv("AMP_CACHE_DIR", "off", 1);
    setenv("AMP_CPU_PCH", "0", 1);
    amp_accelerator *acc = cpu_acc();
    block_pipe2();
    amp_program *p = (amp_program *)1;
    ASSERT_STATUS(amp_program_build(acc, unique_source(src, sizeof src, ""), NULL, &p), AMP_ERROR_DEVICE);
    cr_assert_null(p);
    const char *msg = amp_last_error();
    assert_contains(msg, "pipe: Too many open files");
    const char *first = strstr(msg, "CPU accelerator:");
    cr_assert(first && !strstr(first + 1, "CPU accelerator:"), "the prefix is not there once: %s", msg);
}

/* ------------------------------------------ the compiler's environment */

/* A program whose environment names other tools for the compiler
 * (COMPILER_PATH: here an assembler that leaves a mark) has its builds
 * made without them: they are in no cache tag, so a module built with
 * them would be reused without them, and the other way round. */
Test(cpu, the_compilers_tool_paths_are_kept_from_it, .timeout = 120)
{
    char tmp[1024], tools[1100], as[1200], mark[1200], src[512];
    private_tmpdir(tmp, sizeof tmp);
    setenv("AMP_CACHE_DIR", "off", 1);
    snprintf(tools, sizeof tools, "%s/tools", tmp);
    snprintf(as, sizeof as, "%s/as", tools);
    snprintf(mark, sizeof mark, "%s/assembled", tmp);
    cr_assert_eq(mkdir(tools, 0700), 0);
    FILE *f = fopen(as, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\ntouch '%s'\nexec as \"$@\"\n", mark);
    fclose(f);
    cr_assert_eq(chmod(as, 0700), 0);
    setenv("COMPILER_PATH", tools, 1);
    amp_accelerator *acc = cpu_acc();
    build_and_run_unique(acc, unique_source(src, sizeof src, ""));
    cr_assert_eq(access(mark, F_OK), -1, "the build ran the assembler in COMPILER_PATH=%s", tools);
}

/* ccache runs programs its environment names besides the compiler
 * (CCACHE_PREFIX, CCACHE_PREFIX_CPP before it, CCACHE_COMPILER instead of
 * it), none of which the library checked as it checks the wrapper and the
 * compiler: they are kept from the wrapper. Here a stand-in "ccache" (a
 * script of this user's that leaves a mark when one of them reaches it,
 * then runs the compiler) wraps g++. */
Test(cpu, a_compiler_caches_own_programs_are_kept_from_it, .timeout = 120)
{
    char tmp[1024], wrapper[1100], mark[1100], cxx[1200], src[512];
    private_tmpdir(tmp, sizeof tmp);
    setenv("AMP_CACHE_DIR", "off", 1);
    snprintf(wrapper, sizeof wrapper, "%s/ccache", tmp);
    snprintf(mark, sizeof mark, "%s/reached", tmp);
    FILE *f = fopen(wrapper, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\nif [ -n \"$CCACHE_PREFIX$CCACHE_PREFIX_CPP$CCACHE_COMPILER\" ]; then touch '%s'; fi\n"
               "exec \"$@\"\n", mark);
    fclose(f);
    cr_assert_eq(chmod(wrapper, 0700), 0);
    snprintf(cxx, sizeof cxx, "%s g++", wrapper);
    setenv("AMP_CXX", cxx, 1);
    setenv("CCACHE_PREFIX", "/bin/true", 1);
    setenv("CCACHE_PREFIX_CPP", "/bin/true", 1);
    setenv("CCACHE_COMPILER", "/bin/false", 1);
    amp_accelerator *acc = cpu_acc();
    build_and_run_unique(acc, unique_source(src, sizeof src, ""));
    cr_assert_eq(access(mark, F_OK), -1, "CCACHE_PREFIX, CCACHE_PREFIX_CPP or CCACHE_COMPILER reached the wrapper");
}

/* A header found through CPATH in one build and gone from it in the next
 * (CPATH unset): the second build does not reuse the first's module from
 * either cache. */
Test(cpu, a_module_built_with_cpath_is_not_reused_without_it, .timeout = 120)
{
    char tmp[1024], inc[1100], hdr[1200], cache[1100];
    private_tmpdir(tmp, sizeof tmp);
    snprintf(cache, sizeof cache, "%s/cache", tmp);
    setenv("AMP_CACHE_DIR", cache, 1);
    snprintf(inc, sizeof inc, "%s/inc", tmp);
    snprintf(hdr, sizeof hdr, "%s/hipamp_cpath_probe.h", inc);
    cr_assert_eq(mkdir(inc, 0700), 0);
    FILE *f = fopen(hdr, "w");
    cr_assert_not_null(f);
    fprintf(f, "#define PROBE_VALUE 7\n");
    fclose(f);
    char src[512];
    snprintf(src, sizeof src,
             "#if __has_include(<hipamp_cpath_probe.h>)\n#include <hipamp_cpath_probe.h>\n#else\n"
             "#define PROBE_VALUE 1\n#endif\n"
             "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = PROBE_VALUE + %d; }\n",
             (int)getpid());
    amp_accelerator *acc = cpu_acc();
    for (int with = 1; with >= 0; --with) {
        if (with) setenv("CPATH", inc, 1);
        else unsetenv("CPATH");
        amp_program *p = test_build(acc, src);
        int v[4] = {0};
        amp_array_view *vv = test_view(v, sizeof(int), amp_extent_1d(4), AMP_READ_WRITE);
        amp_arg a[] = {amp_arg_view(vv)};
        ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(4), test_kernel(p, "k"), a, 1));
        ASSERT_OK(amp_array_view_synchronize(vv));
        cr_assert_eq(v[0], (with ? 7 : 1) + (int)getpid(), "CPATH %s: %d", with ? "set" : "unset", v[0]);
        ASSERT_OK(amp_array_view_destroy(vv));
        ASSERT_OK(amp_program_destroy(p));
    }
}

Test(cpu, a_fork_in_another_thread_does_not_hold_the_loop_transformation_up, .timeout = 120)
{
    setenv("AMP_CACHE_DIR", "off", 1);
    setenv("AMP_CPU_COMPILE_JOBS", "1", 1);
    setenv("AMP_CPU_PCH", "0", 1);
    amp_accelerator *acc = cpu_acc();
    cr_assert_eq(pthread_atfork(NULL, hold_fork_parent, NULL), 0);
    char src[512];
    snprintf(src, sizeof src,
             "AMP_TILED_KERNEL(k, amp::tiled_index<4> t, amp::array_view<int, 1> v)\n"
             "{ tile_static int s[4]; s[t.local[0]] = t.local[0] + %d; t.barrier.wait();\n"
             "  v[t.global] = s[3 - t.local[0]]; }\n",
             (int)getpid());
    g_hold_forks = 1;
    double t0 = now_s();
    amp_program *p = test_build(acc, src);
    double took = now_s() - t0;
    int held = g_nholders;
    hold_forks_end();
    amp_kernel_info ki;
    ASSERT_OK(amp_kernel_get_info(test_kernel(p, "k"), &ki));
    if (strcmp(ki.execution, "cpu loops") && strstr(ki.execution, "libclang"))
        cr_skip_test("the loop transformation cannot run here: %s", ki.execution);
    cr_assert_gt(held, 0, "no fork was held");
    cr_assert_str_eq(ki.execution, "cpu loops", "%d forks held for 30 s", held);
    cr_assert_lt(took, 25.0, "the build took %.1f s while %d forks were held for 30 s", took, held);
}

/* ------------------------------------------ where the compiler is */

/* The CPU accelerator's info after AMP_CXX (or, NULL, PATH's c++) was
 * looked for. */
static void cpu_info_with(const char *cxx, amp_accelerator_info *info)
{
    if (cxx) setenv("AMP_CXX", cxx, 1);
    amp_accelerator *acc = NULL;
    ASSERT_OK(amp_accelerator_find("cpu", &acc));
    ASSERT_OK(amp_accelerator_get_info(acc, info));
}

/* A compiler in a directory another local user may write (here a copy of
 * ours, a link to it, or one found on PATH) is not run: they could put
 * their program in its place. The reason names the directory. */
static void unsafe_compiler_dir(char *open_dir, size_t cap)
{
    char tmp[1024];
    private_tmpdir(tmp, sizeof tmp);
    snprintf(open_dir, cap, "%s/open", tmp);
    cr_assert_eq(mkdir(open_dir, 0755), 0);
    cr_assert_eq(chmod(open_dir, 0777), 0); /* ours, in our private directory */
}

static void write_cxx_script(const char *path)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s: %s", path, strerror(errno));
    /* c++ on the PATH of before (a test may put this script's directory
     * first on it) */
    fprintf(f, "#!/bin/sh\nPATH='%s' exec c++ \"$@\"\n", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    fclose(f);
    cr_assert_eq(chmod(path, 0755), 0);
}

/* unsafe_compiler_dir with write_cxx_script's c++ in it; the script's path
 * goes to script (1200 bytes) where that is not NULL. */
static void unsafe_cxx_dir(char *open_dir, size_t cap, char *script)
{
    char path[1200];
    unsafe_compiler_dir(open_dir, cap);
    snprintf(path, sizeof path, "%s/c++", open_dir);
    write_cxx_script(path);
    if (script)
        memcpy(script, path, sizeof path);
}

/* write_cxx_script's c++ in a private directory of ours (its path in
 * script). */
static void compiler_script_of_ours(char *script, size_t cap)
{
    char tmp[1024];
    private_tmpdir(tmp, sizeof tmp);
    snprintf(script, cap, "%s/c++", tmp);
    write_cxx_script(script);
}

Test(cpu, a_compiler_in_a_directory_others_may_write_is_not_run)
{
    char open_dir[1100], script[1200];
    unsafe_cxx_dir(open_dir, sizeof open_dir, script);
    amp_accelerator_info info;
    cpu_info_with(script, &info);
    cr_assert(!info.is_available, "a compiler in a directory of mode 0777 was taken: %s", script);
    assert_contains(info.unavailable_reason, open_dir);
    assert_contains(info.unavailable_reason, "writable by every user (mode 0777)");
}

Test(cpu, a_link_to_the_compiler_in_a_directory_others_may_write_is_not_followed)
{
    char open_dir[1100], link[1200];
    unsafe_compiler_dir(open_dir, sizeof open_dir);
    snprintf(link, sizeof link, "%s/c++", open_dir);
    cr_assert_eq(symlink("/usr/bin/c++", link), 0);
    amp_accelerator_info info;
    cpu_info_with(link, &info);
    cr_assert(!info.is_available, "a link in a directory of mode 0777 was followed: %s", link);
    assert_contains(info.unavailable_reason, open_dir);
}

Test(cpu, a_compiler_found_on_path_in_a_directory_others_may_write_is_not_run)
{
    char open_dir[1100], path[4096];
    unsafe_cxx_dir(open_dir, sizeof open_dir, NULL);
    unsetenv("AMP_CXX");
    unsetenv("CXX");
    snprintf(path, sizeof path, "%s:%s", open_dir, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    setenv("PATH", path, 1);
    amp_accelerator_info info;
    cpu_info_with(NULL, &info);
    cr_assert(!info.is_available, "c++ on PATH in a directory of mode 0777 was taken");
    assert_contains(info.unavailable_reason, open_dir);
}

/* The same script in a directory of our own, and a file of ours that only
 * we may write, is run. */
Test(cpu, a_compiler_of_ours_in_a_directory_of_ours_is_run)
{
    char script[1200];
    compiler_script_of_ours(script, sizeof script);
    amp_accelerator_info info;
    cpu_info_with(script, &info);
    cr_assert(info.is_available, "%s", info.unavailable_reason);
}

/* Root's group (gid 0) is trusted as root is (the include scan's rule
 * too): as root the file is given another group, which it would have
 * under a user's umask 002. */
Test(cpu, a_compiler_file_its_group_may_write_is_not_run)
{
    char script[1200];
    compiler_script_of_ours(script, sizeof script);
    if (getegid() == 0) cr_assert_eq(chown(script, (uid_t)-1, 65534), 0, "%s", strerror(errno));
    cr_assert_eq(chmod(script, 0775), 0);
    amp_accelerator_info info;
    cpu_info_with(script, &info);
    cr_assert(!info.is_available, "a compiler of mode 0775 was taken: %s", script);
    assert_contains(info.unavailable_reason, script);
    assert_contains(info.unavailable_reason, "0775");
}

/* A compiler a site's software account owns (as root: a copy of our
 * script given to uid 65534) is not run, unless AMP_TRUSTED_USERS names
 * that account, by uid or by name. (The compiler is looked for once a
 * process: one setting a test.) */
static void other_accounts_compiler(char *script, size_t cap)
{
    if (geteuid() != 0) cr_skip_test("giving a file to another account takes root");
    compiler_script_of_ours(script, cap);
    cr_assert_eq(chown(script, 65534, 65534), 0, "%s", strerror(errno));
}

Test(cpu, a_compiler_another_account_owns_is_not_run)
{
    char script[1200];
    other_accounts_compiler(script, sizeof script);
    amp_accelerator_info info;
    cpu_info_with(script, &info);
    cr_assert(!info.is_available, "a compiler of uid 65534 was taken: %s", script);
    assert_contains(info.unavailable_reason, "belongs to uid 65534");
}

Test(cpu, a_compiler_another_account_owns_is_run_when_its_uid_is_trusted)
{
    char script[1200];
    other_accounts_compiler(script, sizeof script);
    setenv("AMP_TRUSTED_USERS", "12345,65534", 1);
    amp_accelerator_info info;
    cpu_info_with(script, &info);
    cr_assert(info.is_available, "AMP_TRUSTED_USERS=12345,65534: %s", info.unavailable_reason);
}

Test(cpu, a_compiler_another_account_owns_is_run_when_its_name_is_trusted)
{
    char script[1200], names[300];
    other_accounts_compiler(script, sizeof script);
    struct passwd *nobody = getpwuid(65534);
    if (!nobody) cr_skip_test("no account of uid 65534 here");
    snprintf(names, sizeof names, "root,%s", nobody->pw_name);
    setenv("AMP_TRUSTED_USERS", names, 1);
    amp_accelerator_info info;
    cpu_info_with(script, &info);
    cr_assert(info.is_available, "AMP_TRUSTED_USERS=%s: %s", names, info.unavailable_reason);
}

/* A bad AMP_TRUSTED_USERS makes the accelerator unavailable, naming the
 * word: it must not quietly trust fewer (or more) accounts than asked. */
static void expect_bad_trusted_users(const char *value, const char *says)
{
    setenv("AMP_TRUSTED_USERS", value, 1);
    amp_accelerator_info info;
    cpu_info_with(NULL, &info);
    cr_assert(!info.is_available, "AMP_TRUSTED_USERS=%s was taken", value);
    assert_contains(info.unavailable_reason, says);
    assert_contains(info.unavailable_reason, "AMP_TRUSTED_USERS");
}

Test(cpu, a_trusted_user_that_does_not_exist_is_named)
{
    expect_bad_trusted_users("no-such-user-here-x1", "'no-such-user-here-x1' is no user");
}

Test(cpu, an_empty_trusted_user_is_named)
{
    expect_bad_trusted_users("root,,0", "an empty name");
}

Test(cpu, a_trusted_uid_out_of_range_is_named)
{
    expect_bad_trusted_users("99999999999999999999", "uid 99999999999999999999 is out of range");
}

/* A compiler wrapper runs the compiler its first word names, found on
 * PATH: that one is held to the rule too (here c++ first on PATH in a
 * directory of mode 0777, behind a "ccache" of ours that only we may
 * write); with PATH as it was, the same wrapper is run. */
static void wrapper_spec(char *spec, size_t cap)
{
    char tmp[1024], wrapper[1200];
    private_tmpdir(tmp, sizeof tmp);
    snprintf(wrapper, sizeof wrapper, "%s/ccache", tmp);
    FILE *f = fopen(wrapper, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\nexec \"$@\"\n");
    fclose(f);
    cr_assert_eq(chmod(wrapper, 0755), 0);
    snprintf(spec, cap, "%s c++", wrapper);
}

Test(cpu, a_wrapper_and_its_compiler_of_ours_are_run)
{
    char spec[1300];
    wrapper_spec(spec, sizeof spec);
    amp_accelerator_info info;
    cpu_info_with(spec, &info);
    cr_assert(info.is_available, "%s: %s", spec, info.unavailable_reason);
}

Test(cpu, the_compiler_a_wrapper_runs_is_checked_too)
{
    char spec[1300], open_dir[1100], path[4096];
    wrapper_spec(spec, sizeof spec);
    unsafe_cxx_dir(open_dir, sizeof open_dir, NULL);
    snprintf(path, sizeof path, "%s:%s", open_dir, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    setenv("PATH", path, 1);
    amp_accelerator_info info;
    cpu_info_with(spec, &info);
    cr_assert(!info.is_available, "ccache's c++ in a directory of mode 0777 was taken");
    assert_contains(info.unavailable_reason, open_dir);
}

/* ccache looks for the compiler in CCACHE_PATH where it is set, not PATH:
 * the c++ it would take from there is the one checked (here in a directory
 * of mode 0777, while PATH's is safe). */
Test(cpu, the_compiler_a_wrapper_takes_from_ccache_path_is_checked)
{
    char spec[1300], open_dir[1100];
    wrapper_spec(spec, sizeof spec);
    unsafe_cxx_dir(open_dir, sizeof open_dir, NULL);
    setenv("CCACHE_PATH", open_dir, 1);
    amp_accelerator_info info;
    cpu_info_with(spec, &info);
    cr_assert(!info.is_available, "the c++ of CCACHE_PATH, in a directory of mode 0777, was taken");
    assert_contains(info.unavailable_reason, open_dir);
}

/* ccache looks the compiler up on CCACHE_PATH at every compile, not once:
 * a directory of it that others may write, empty when the accelerator was
 * found, gets a c++ later; the build must not run it (the compiler's
 * CCACHE_PATH keeps only the directories PATH's rule keeps). The stand-in
 * ccache does what ccache does: the first program of the name on
 * CCACHE_PATH, else PATH. */
Test(cpu, a_compiler_put_on_ccache_path_later_is_not_run)
{
    char tmp[1024], wrapper[1200], spec[1300], open_dir[1100], planted[1200], marker[1200], path[4096];
    private_tmpdir(tmp, sizeof tmp);
    snprintf(wrapper, sizeof wrapper, "%s/ccache", tmp);
    FILE *f = fopen(wrapper, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\nname=$1\nshift\nIFS=:\nfor d in ${CCACHE_PATH:-$PATH}; do\n"
               "  [ -x \"$d/$name\" ] && exec \"$d/$name\" \"$@\"\ndone\nexit 127\n");
    fclose(f);
    cr_assert_eq(chmod(wrapper, 0755), 0);
    snprintf(spec, sizeof spec, "%s c++", wrapper);
    unsafe_compiler_dir(open_dir, sizeof open_dir);
    snprintf(path, sizeof path, "%s:%s", open_dir, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    setenv("CCACHE_PATH", path, 1);
    amp_accelerator_info info;
    cpu_info_with(spec, &info);
    cr_assert(info.is_available, "%s: %s", spec, info.unavailable_reason);
    /* Now another user's c++ (its mark, then the real one). */
    snprintf(marker, sizeof marker, "%s/planted-ran", tmp);
    snprintf(planted, sizeof planted, "%s/c++", open_dir);
    f = fopen(planted, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\ntouch '%s'\nPATH='%s' exec c++ \"$@\"\n", marker,
            getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    fclose(f);
    cr_assert_eq(chmod(planted, 0755), 0);
    amp_accelerator *acc = NULL;
    ASSERT_OK(amp_accelerator_find("cpu", &acc));
    char src[256];
    snprintf(src, sizeof src, "AMP_KERNEL(k%ld, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 3; }\n",
             (long)getpid());
    amp_program *p = NULL;
    ASSERT_OK(amp_program_build(acc, src, NULL, &p));
    ASSERT_OK(amp_program_destroy(p));
    cr_assert(access(marker, F_OK) != 0, "the c++ put on CCACHE_PATH (%s) after the accelerator was found ran",
              planted);
}

/* AMP_CXX's words after the program are held to a build's options' rule:
 * -B (another place for cc1plus, as, ld), -specs, -wrapper, @file would
 * have the checked compiler run or read what no one checked. */
Test(cpu, options_in_amp_cxx_that_choose_other_programs_are_refused)
{
    const char *words[] = {"-B/tmp/", "-wrapper gdb,--args", "-specs=/tmp/x.specs", "@/tmp/opts", "-fplugin=/tmp/p.so"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; ++i) {
        if (fork() == 0) {
            /* One setting a process (the compiler is looked for once). */
            char spec[256];
            snprintf(spec, sizeof spec, "c++ -O2 %s", words[i]);
            amp_accelerator_info info;
            setenv("AMP_CXX", spec, 1);
            amp_accelerator *acc = NULL;
            if (amp_accelerator_find("cpu", &acc) != AMP_OK || amp_accelerator_get_info(acc, &info) != AMP_OK) _exit(2);
            char first[64];
            snprintf(first, sizeof first, "%.*s", (int)strcspn(words[i], " "), words[i]);
            _exit(!info.is_available && strstr(info.unavailable_reason, first) &&
                          strstr(info.unavailable_reason, "not run")
                      ? 0
                      : 1);
        }
        int ws = 0;
        cr_assert_neq(wait(&ws), -1);
        cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "AMP_CXX=\"c++ -O2 %s\" was taken, or its refusal does not "
                  "name the word (exit %d)", words[i], WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
    }
    /* Plain options pass. */
    amp_accelerator_info info;
    cpu_info_with("c++ -O2 -m64", &info);
    cr_assert(info.is_available, "AMP_CXX=\"c++ -O2 -m64\": %s", info.unavailable_reason);
}

/* What a one-element kernel that stores AMP_PLANTED (from
 * <amp_planted.h>) stores, built by acc. */
static int planted_value(amp_accelerator *acc)
{
    char src[256];
    snprintf(src, sizeof src, "#include <amp_planted.h>\nAMP_KERNEL(s%ld, amp::index<1> i, amp::array_view<int, 1> v) "
                              "{ v[i] = AMP_PLANTED; }\n", (long)getpid());
    amp_program *p = NULL;
    ASSERT_OK(amp_program_build(acc, src, NULL, &p));
    char name[32];
    snprintf(name, sizeof name, "s%ld", (long)getpid());
    amp_kernel *k = NULL;
    ASSERT_OK(amp_program_get_kernel(p, name, &k));
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    int32_t x = -1;
    amp_array_view *v = NULL;
    ASSERT_OK(amp_array_view_create(&x, sizeof x, amp_extent_1d(1), AMP_READ_WRITE, &v));
    amp_arg a = amp_arg_view(v);
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(1), k, &a, 1));
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_accelerator_view_destroy(q));
    ASSERT_OK(amp_program_destroy(p));
    return x;
}

/* A directory the compiler lists as its own that another user could
 * change (a --sysroot of theirs: as root, given to uid 65534) is not taken
 * for the compiler's own, whose files are read unkeyed: its headers are
 * keyed as those of a directory AMP_CXX names, so when its owner changes
 * one, the next build is made again instead of coming from the cache. */
Test(cpu, a_sysroot_another_user_owns_is_keyed_as_a_named_directory)
{
    if (geteuid() != 0) cr_skip_test("needs root, to give the sysroot to another account (uid 65534)");
    char tmp[1024], sysroot[1100], inc[1200], hdr[1300], cmd[4096];
    private_tmpdir(tmp, sizeof tmp);
    snprintf(sysroot, sizeof sysroot, "%s/sysroot", tmp);
    snprintf(inc, sizeof inc, "%s/usr/include", sysroot);
    snprintf(hdr, sizeof hdr, "%s/amp_planted.h", inc);
    /* The other user's include directory: links to the system's headers,
     * and a header of theirs. */
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && for e in /usr/include/*; do ln -s \"$e\" '%s'/; done && "
                              "echo '#define AMP_PLANTED 5' > '%s' && chown -hR 65534 '%s' && chmod 755 '%s' "
                              "'%s/usr' '%s'", inc, inc, hdr, sysroot, sysroot, sysroot, inc);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    char spec[1300];
    snprintf(spec, sizeof spec, "c++ --sysroot=%s", sysroot);
    amp_accelerator_info info;
    cpu_info_with(spec, &info);
    if (!info.is_available) cr_skip_test("the compiler with --sysroot is not available here: %s", info.unavailable_reason);
    amp_accelerator *acc = NULL;
    ASSERT_OK(amp_accelerator_find("cpu", &acc));
    cr_assert_eq(planted_value(acc), 5);
    FILE *f = fopen(hdr, "w");
    cr_assert_not_null(f, "%s: %s", hdr, strerror(errno));
    fprintf(f, "#define AMP_PLANTED 6 /* the owner's change */\n");
    fclose(f);
    int got = planted_value(acc);
    cr_assert_eq(got, 6, "after the sysroot's owner changed %s, the build gave %d (a module built from the old "
                 "header, not keyed on it)", hdr, got);
}

/* The masquerade: a link to a wrapper named as the compiler (ccache's
 * /usr/lib/ccache/g++ -> ../../bin/ccache), first on PATH, runs the next
 * program of its name on PATH that is not the wrapper again; that program
 * is held to the rule too. masquerade_dir makes such a directory of ours:
 * c++, a link to a "ccache" that does what ccache does with it. */
static void masquerade_dir(char *dir, size_t cap)
{
    char wrapper[1200], link[1200];
    private_tmpdir(dir, cap);
    snprintf(wrapper, sizeof wrapper, "%s/ccache", dir);
    FILE *f = fopen(wrapper, "w");
    cr_assert_not_null(f, "%s: %s", wrapper, strerror(errno));
    fprintf(f, "#!/bin/sh\nme=$(dirname \"$0\")\nIFS=:\nfor d in $PATH; do\n"
               "  [ \"$d\" = \"$me\" ] && continue\n  [ -x \"$d/c++\" ] && exec \"$d/c++\" \"$@\"\ndone\nexit 127\n");
    fclose(f);
    cr_assert_eq(chmod(wrapper, 0755), 0);
    snprintf(link, sizeof link, "%s/c++", dir);
    cr_assert_eq(symlink("ccache", link), 0, "%s: %s", link, strerror(errno));
}

static void path_first(const char *dirs)
{
    char path[8192];
    snprintf(path, sizeof path, "%s:%s", dirs, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    setenv("PATH", path, 1);
}

Test(cpu, a_masquerading_wrapper_and_the_compiler_after_it_are_run)
{
    char dir[1024];
    masquerade_dir(dir, sizeof dir);
    path_first(dir);
    amp_accelerator_info info;
    cpu_info_with("c++", &info);
    cr_assert(info.is_available, "%s", info.unavailable_reason);
}

Test(cpu, the_compiler_a_masquerading_wrapper_runs_is_checked_too)
{
    char dir[1024], open_dir[1100], dirs[2200];
    masquerade_dir(dir, sizeof dir);
    unsafe_cxx_dir(open_dir, sizeof open_dir, NULL);
    snprintf(dirs, sizeof dirs, "%s:%s", dir, open_dir);
    path_first(dirs);
    amp_accelerator_info info;
    cpu_info_with("c++", &info);
    cr_assert(!info.is_available, "the c++ after ccache's masquerade, in a directory of mode 0777, was taken");
    assert_contains(info.unavailable_reason, open_dir);
}

/* GCC looks for the assembler and the linker on PATH (Debian's gcc: `as`,
 * `ld`), so the compiler runs with only the PATH directories no other user
 * could add a program to: an `as` of ours (it leaves a mark, then runs the
 * real one) in a directory of mode 0777 first on PATH, or in the working
 * directory named by an empty entry, is never run, and the build uses the
 * next one. */
static void marking_as(const char *dir, const char *mark)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/as", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s: %s", path, strerror(errno));
    fprintf(f, "#!/bin/sh\n: > '%s'\nPATH='%s' exec as \"$@\"\n", mark, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    fclose(f);
    cr_assert_eq(chmod(path, 0755), 0);
}

static void build_unique_kernel(void)
{
    char src[256];
    setenv("AMP_CACHE_DIR", "off", 1);
    snprintf(src, sizeof src, "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = %d; }\n",
             (int)getpid());
    amp_program *p = test_build(cpu_acc(), src);
    ASSERT_OK(amp_program_destroy(p));
}

Test(cpu, an_assembler_on_path_in_a_directory_others_may_write_is_not_run)
{
    char open_dir[1100], mark[1200];
    unsafe_compiler_dir(open_dir, sizeof open_dir);
    snprintf(mark, sizeof mark, "%s/ran", open_dir);
    marking_as(open_dir, mark);
    path_first(open_dir);
    build_unique_kernel();
    cr_assert_neq(access(mark, F_OK), 0, "the compiler ran the `as` in %s (mode 0777)", open_dir);
}

Test(cpu, an_assembler_in_the_working_directory_is_not_run)
{
    char dir[1024], mark[1100], old[PATH_MAX];
    private_tmpdir(dir, sizeof dir);
    snprintf(mark, sizeof mark, "%s/ran", dir);
    marking_as(dir, mark);
    path_first(""); /* an empty entry: the working directory */
    cr_assert_not_null(getcwd(old, sizeof old));
    cr_assert_eq(chdir(dir), 0);
    build_unique_kernel();
    cr_assert_eq(chdir(old), 0);
    cr_assert_neq(access(mark, F_OK), 0, "the compiler ran the `as` of the working directory");
}

/* The dynamic loader looks for the libraries of cc1plus, as and ld in
 * LD_LIBRARY_PATH first: the compiler runs with only its directories no
 * other user could add a library to (an empty entry, which a common
 * `LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/opt/lib` makes, is the working
 * directory; one of mode 0777 anyone's), and without the variable when
 * none is left. A wrapper compiler of ours says what it was given. */
static void seen_library_path(const char *libpath, char *seen, size_t cap)
{
    char dir[1024], script[1200], mark[1200], cxx[PATH_MAX];
    private_tmpdir(dir, sizeof dir);
    FILE *w = popen("command -v c++", "r");
    cr_assert_not_null(w);
    cr_assert_not_null(fgets(cxx, sizeof cxx, w), "no c++ on PATH");
    pclose(w);
    cxx[strcspn(cxx, "\n")] = '\0';
    snprintf(mark, sizeof mark, "%s/seen", dir);
    snprintf(script, sizeof script, "%s/cxx", dir);
    FILE *f = fopen(script, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\nprintf '%%s' \"${LD_LIBRARY_PATH-(unset)}\" > '%s'\nexec '%s' \"$@\"\n", mark, cxx);
    fclose(f);
    cr_assert_eq(chmod(script, 0755), 0);
    setenv("AMP_CXX", script, 1);
    setenv("LD_LIBRARY_PATH", libpath, 1);
    build_unique_kernel();
    f = fopen(mark, "r");
    cr_assert_not_null(f, "the wrapper compiler did not run");
    size_t n = fread(seen, 1, cap - 1, f);
    seen[n] = '\0';
    fclose(f);
}

Test(cpu, the_compiler_runs_without_library_path_entries_others_could_write)
{
    char open_dir[1100], libpath[2400], seen[2400];
    unsafe_compiler_dir(open_dir, sizeof open_dir);
    snprintf(libpath, sizeof libpath, ":%s:/usr/lib:lib", open_dir);
    seen_library_path(libpath, seen, sizeof seen);
    cr_assert_str_eq(seen, "/usr/lib", "LD_LIBRARY_PATH=%s reached the compiler as %s", libpath, seen);
}

Test(cpu, the_compiler_runs_without_library_path_when_no_entry_is_kept)
{
    char open_dir[1100], libpath[2400], seen[2400];
    unsafe_compiler_dir(open_dir, sizeof open_dir);
    snprintf(libpath, sizeof libpath, "%s:", open_dir);
    seen_library_path(libpath, seen, sizeof seen);
    cr_assert_str_eq(seen, "(unset)", "LD_LIBRARY_PATH=%s reached the compiler as %s", libpath, seen);
}

/* With no PATH directory left the compiler finds no assembler: the build
 * fails, and its message names the directory left out and why. */
Test(cpu, a_failed_build_names_the_path_directory_left_out)
{
    char open_dir[1100], mark[1200], cxx[PATH_MAX];
    unsafe_compiler_dir(open_dir, sizeof open_dir);
    snprintf(mark, sizeof mark, "%s/ran", open_dir);
    marking_as(open_dir, mark);
    FILE *w = popen("command -v c++", "r");
    cr_assert_not_null(w);
    cr_assert_not_null(fgets(cxx, sizeof cxx, w), "no c++ on PATH");
    pclose(w);
    cxx[strcspn(cxx, "\n")] = '\0';
    setenv("AMP_CXX", cxx, 1);
    setenv("PATH", open_dir, 1);
    setenv("AMP_CACHE_DIR", "off", 1);
    setenv("AMP_CPU_PCH", "0", 1);
    amp_program *p = NULL;
    amp_accelerator *acc = cpu_acc();
    ASSERT_STATUS(amp_program_build(acc, "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 7; }",
                                    NULL, &p),
                  AMP_ERROR_COMPILE);
    assert_contains(amp_last_error(), "the first left out");
    assert_contains(amp_last_error(), open_dir);
    assert_contains(amp_last_error(), "writable by every user");
    cr_assert_neq(access(mark, F_OK), 0, "the compiler ran the `as` in %s (mode 0777)", open_dir);
}

/* A stack is never handed out without its guard page. Near
 * vm.max_map_count the guard's mprotect (which splits the stack's mapping)
 * fails; the stack went unguarded, the next stack mapped beside it merged
 * with it, and an overflow silently overwrote another work-item's frames.
 * Now the launch fails with AMP_ERROR_OUT_OF_MEMORY naming
 * vm.max_map_count. A forked child fills its maps with one-page mappings
 * of alternating protection until mmap fails, frees one (then more, where
 * the launch's other allocations took it), and launches; a launch that
 * succeeds must have put each stack it used right above a PROT_NONE
 * mapping (checked in /proc/self/maps). */
#include <inttypes.h>
#include <sys/mman.h>

static const char guard_kernel[] =
    "AMP_TILED_KERNEL(where, amp::tiled_index<4> t, amp::array_view<long long, 1> out)\n"
    "{\n"
    "    volatile int mine[4];\n"
    "    for (int i = 0; i < 4; ++i) mine[i] = t.local[0];\n"
    "    t.barrier.wait();\n"
    "    out[t.global] = mine[3] == t.local[0] ? (long long)mine : 0;\n"
    "}\n";

/* 0: a ---p mapping ends where the rw mapping holding a starts; the
 * mapping's start in *start. */
static int guarded_at(uintptr_t a, uintptr_t *start)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    char line[512], prev_perms[8] = "";
    uintptr_t prev_end = 0;
    int r = 1;
    while (fgets(line, sizeof line, f)) {
        uintptr_t s = 0, e = 0;
        char perms[8] = "";
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s", &s, &e, perms) != 3) continue;
        if (a >= s && a < e) {
            *start = s;
            r = !(strncmp(perms, "rw", 2) == 0 && prev_end == s && strncmp(prev_perms, "---", 3) == 0);
            break;
        }
        prev_end = e;
        memcpy(prev_perms, perms, sizeof perms);
    }
    fclose(f);
    return r;
}

/* The child's verdict: 0 the guard's failure reported, 1 a launch that
 * succeeded with every stack guarded, 2 the state not reached (a reason
 * in msg), 3 a failure (in msg). */
static int unguarded_child(amp_kernel *k, amp_array_view *v, long long *out, bool fibers, char *msg, size_t cap)
{
    long pg = sysconf(_SC_PAGESIZE);
    size_t cap_maps = 1u << 19;
    void **maps = mmap(NULL, cap_maps * sizeof *maps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (maps == MAP_FAILED) return snprintf(msg, cap, "no memory for the list of mappings"), 2;
    size_t n = 0;
    for (; n < cap_maps; ++n) {
        void *m = mmap(NULL, (size_t)pg, n % 2 ? PROT_READ : PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) break;
        maps[n] = m;
    }
    if (n == cap_maps || errno != ENOMEM)
        return snprintf(msg, cap, "the maps did not fill (%zu mappings, %s)", n, strerror(errno)), 2;
    amp_tiled_extent te;
    if (amp_extent_tile(amp_extent_1d(4), (int[]){4}, &te) != AMP_OK)
        return snprintf(msg, cap, "tile: %s", amp_last_error()), 3;
    amp_arg a[] = {amp_arg_view(v)};
    amp_status st = AMP_OK;
    char first[600] = "";
    for (int freed = 1; freed <= 8 && n > 0; ++freed) {
        munmap(maps[--n], (size_t)pg);
        st = amp_parallel_for_each_tiled(NULL, te, k, a, 1);
        if (st == AMP_OK) break;
        if (!first[0]) snprintf(first, sizeof first, "%s", amp_last_error());
        if (st == AMP_ERROR_OUT_OF_MEMORY && strstr(amp_last_error(), "vm.max_map_count")) {
            bool ok = strstr(amp_last_error(), "guard page") != NULL;
            snprintf(msg, cap, "%s", amp_last_error());
            return ok ? 0 : 3;
        }
    }
    while (n > 0) munmap(maps[--n], (size_t)pg);
    if (st != AMP_OK)
        return snprintf(msg, cap, "the launch failed otherwise: %s: %s", amp_status_name(st), first), 2;
    if (amp_array_view_synchronize(v) != AMP_OK)
        return snprintf(msg, cap, "synchronize: %s", amp_last_error()), 3;
    uintptr_t starts[4];
    for (int i = 0; i < 4; ++i) {
        if (!out[i]) return snprintf(msg, cap, "work-item %d lost its value", i), 3;
        int r = guarded_at((uintptr_t)out[i], &starts[i]);
        if (r) return snprintf(msg, cap, "work-item %d's stack (at %llx) %s", i, (unsigned long long)out[i],
                               r < 0 ? "could not be looked up" : "has no guard page below it"), 3;
        for (int j = 0; fibers && j < i; ++j)
            if (starts[j] == starts[i])
                return snprintf(msg, cap, "work-items %d and %d share one stack mapping", j, i), 3;
    }
    return snprintf(msg, cap, "the launch got every guard"), 1;
}

BOTH_PATHS(no_stack_is_handed_out_without_its_guard_page, .timeout = 120)
{
    bool fibers = getenv("AMP_CPU_TILED") != NULL;
    setenv("AMP_CPU_THREADS", "1", 1); /* no thread (and no thread stack) to start */
    setenv("AMP_CPU_STACK_SIZE", "16K", 1);
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    long max = 0;
    if (f) {
        if (fscanf(f, "%ld", &max) != 1) max = 0;
        fclose(f);
    }
    if (max <= 0 || max > 262144)
        cr_skip_test("vm.max_map_count is %ld: too many mappings to fill in a test", max);
    amp_accelerator *acc = cpu_acc();
    amp_program *p = test_build(acc, guard_kernel);
    amp_kernel *k = test_kernel(p, "where");
    static long long out[4];
    amp_array_view *v = test_view(out, sizeof(long long), amp_extent_1d(4), AMP_READ_WRITE);
    int pipefd[2];
    cr_assert_eq(pipe(pipefd), 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(60);
        close(pipefd[0]);
        char msg[700] = "";
        int verdict = unguarded_child(k, v, out, fibers, msg, sizeof msg);
        ssize_t w = write(pipefd[1], msg, strlen(msg));
        (void)w;
        _exit(verdict);
    }
    cr_assert_geq(pid, 0);
    close(pipefd[1]);
    char msg[700] = "";
    size_t got = 0;
    ssize_t r;
    while (got < sizeof msg - 1 && (r = read(pipefd[0], msg + got, sizeof msg - 1 - got)) > 0) got += (size_t)r;
    close(pipefd[0]);
    int ws = 0;
    cr_assert_eq(waitpid(pid, &ws, 0), pid);
    cr_assert(WIFEXITED(ws), "the child was killed by signal %d (%s)", WIFSIGNALED(ws) ? WTERMSIG(ws) : 0, msg);
    cr_log_info("the child: %s", msg);
    if (WEXITSTATUS(ws) == 2) cr_skip_test("the maps could not be brought to the state: %s", msg);
    cr_assert(WEXITSTATUS(ws) <= 1, "%s", msg);
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
}
