/* test_barrier.c — every tile_barrier variant and free fence, each in a producer/consumer kernel that gives a wrong answer without its barrier, plus the seed barrier_loop, all against CPU references; on the CPU accelerator each test runs on the loop versions and on fibers. */
#include "support.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern const char test_kernels_barrier[];

#define TILES 97
#define N (64 * TILES)

/* Random, distinct per element (so every tile's values are its own: the CPU
 * accelerator's tile_static persists between tiles on a thread). */
static void fill_input(int32_t *in, size_t n, unsigned seed)
{
    float *f = malloc(n * sizeof *f);
    cr_assert_not_null(f);
    test_fill_random(f, n, seed);
    for (size_t i = 0; i < n; ++i) in[i] = (int32_t)(f[i] * 100000.0f) * 2 + (int32_t)(i & 1);
    free(f);
}

typedef enum pattern { TS_PHASES, GLOBAL_PHASES, ALL_ONE_BARRIER } pattern;

/* CPU reference of the kernels in barrier.hip. */
static void reference(pattern pat, const int32_t *in, int32_t *out, int32_t *scratch)
{
    for (int t = 0; t < TILES; ++t) {
        const int32_t *x = in + t * 64;
        int32_t *o = out + t * 64, *s = scratch + t * 64;
        int32_t a[64], b[64];
        switch (pat) {
        case TS_PHASES:
            for (int l = 0; l < 64; ++l) a[l] = x[63 - l];
            for (int l = 0; l < 64; ++l) b[l] = a[l] * 3 + l;
            for (int l = 0; l < 64; ++l) o[l] = b[(l + 5) % 64] - a[l];
            break;
        case GLOBAL_PHASES:
            for (int l = 0; l < 64; ++l) b[l] = x[l] * 7 + 1;
            for (int l = 0; l < 64; ++l) a[l] = b[63 - l];
            for (int l = 0; l < 64; ++l) s[l] = a[l] - l;
            for (int l = 0; l < 64; ++l) o[l] = s[(l + 5) % 64] + a[l];
            break;
        case ALL_ONE_BARRIER:
            for (int l = 0; l < 64; ++l) s[l] = x[l] * 7 + 1;
            for (int l = 0; l < 64; ++l) o[l] = x[63 - l] + s[(l + 9) % 64];
            break;
        }
    }
}

static void run_variant(amp_accelerator *acc, const char *kname, pattern pat, unsigned seed)
{
    static int32_t in[N], out[N], scratch[N], want[N], want_scratch[N];
    amp_program *p = test_build(acc, test_kernels_barrier);
    amp_kernel *k = test_kernel(p, kname);
    fill_input(in, N, seed);
    for (int i = 0; i < N; ++i) out[i] = scratch[i] = want_scratch[i] = POISON_I32;
    reference(pat, in, want, want_scratch);
    amp_array_view *vi = test_view(in, 4, amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vo = test_view(out, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *vs = test_view(scratch, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_arg args[] = {amp_arg_view(vi), amp_arg_view(vo), amp_arg_view(vs)};
    size_t nargs = pat == TS_PHASES ? 2 : 3;
    amp_tiled_extent t;
    ASSERT_OK(amp_extent_tile(amp_extent_1d(N), (const int[]){64}, &t));
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, t, k, args, nargs));
    ASSERT_OK(amp_array_view_synchronize(vo));
    ASSERT_OK(amp_array_view_synchronize(vs));
    test_check_i32(out, want, N, kname);
    if (pat != TS_PHASES) test_check_i32(scratch, want_scratch, N, "scratch (global memory)");
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_array_view_destroy(vs));
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TILED_TEST(barrier, wait) { run_variant(acc, "bar_wait", TS_PHASES, 1); }
ACCEL_TILED_TEST(barrier, wait_with_tile_static_memory_fence) { run_variant(acc, "bar_wait_tsfence", TS_PHASES, 2); }
ACCEL_TILED_TEST(barrier, wait_with_global_memory_fence) { run_variant(acc, "bar_wait_globalfence", GLOBAL_PHASES, 3); }
ACCEL_TILED_TEST(barrier, wait_with_all_memory_fence) { run_variant(acc, "bar_wait_allfence", ALL_ONE_BARRIER, 4); }
ACCEL_TILED_TEST(barrier, tile_static_memory_fence_then_wait) { run_variant(acc, "fence_tile_static", TS_PHASES, 5); }
ACCEL_TILED_TEST(barrier, global_memory_fence_then_wait) { run_variant(acc, "fence_global", GLOBAL_PHASES, 6); }
ACCEL_TILED_TEST(barrier, all_memory_fence_then_wait) { run_variant(acc, "fence_all", ALL_ONE_BARRIER, 7); }

/* 8x8 tiles, a barrier pair per round inside a loop. */
ACCEL_TILED_TEST(barrier, rounds_in_2d_tiles)
{
    enum { R = 40, C = 48, ROUNDS = 9 };
    static int32_t in[R * C], out[R * C], want[R * C];
    amp_program *p = test_build(acc, test_kernels_barrier);
    amp_kernel *k = test_kernel(p, "bar_rounds2d");
    fill_input(in, R * C, 8);
    for (int i = 0; i < R * C; ++i) {
        in[i] %= 1000;
        if (in[i] == 0) in[i] = 1;
        out[i] = POISON_I32;
    }
    for (int tr = 0; tr < R; tr += 8)
        for (int tc = 0; tc < C; tc += 8) {
            int32_t v[8][8], s[8][8];
            for (int r = 0; r < 8; ++r)
                for (int c = 0; c < 8; ++c) v[r][c] = in[(tr + r) * C + tc + c];
            for (int q = 0; q < ROUNDS; ++q) {
                memcpy(s, v, sizeof s);
                for (int r = 0; r < 8; ++r)
                    for (int c = 0; c < 8; ++c) v[r][c] = s[c][r] + s[(r + 1) % 8][c] + q;
            }
            for (int r = 0; r < 8; ++r)
                for (int c = 0; c < 8; ++c) want[(tr + r) * C + tc + c] = v[r][c];
        }
    amp_array_view *vi = test_view(in, 4, amp_extent_2d(R, C), AMP_READ_ONLY);
    amp_array_view *vo = test_view(out, 4, amp_extent_2d(R, C), AMP_WRITE_ONLY);
    amp_arg args[] = {amp_arg_view(vi), amp_arg_view(vo), amp_arg_int32(ROUNDS)};
    amp_tiled_extent t;
    ASSERT_OK(amp_extent_tile(amp_extent_2d(R, C), (const int[]){8, 8}, &t));
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, t, k, args, 3));
    ASSERT_OK(amp_array_view_synchronize(vo));
    test_check_i32(out, want, R * C, "bar_rounds2d");
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(p));
}

/* The seed producer/consumer loop: v += neighbour, `steps` times. */
static void barrier_loop_case(amp_accelerator *acc, int tiles, int steps)
{
    int n = 256 * tiles;
    int32_t *data = malloc((size_t)n * 4), *want = malloc((size_t)n * 4);
    cr_assert(data && want);
    fill_input(data, (size_t)n, 9);
    for (int i = 0; i < n; ++i) {
        data[i] %= 1000;
        if (data[i] == 0) data[i] = -3;
        want[i] = data[i];
    }
    for (int t = 0; t < tiles; ++t) {
        int32_t *w = want + t * 256, prev[256];
        for (int s = 0; s < steps; ++s) {
            memcpy(prev, w, sizeof prev);
            for (int l = 0; l < 256; ++l) w[l] = prev[l] + prev[(l + 1) % 256];
        }
    }
    amp_program *p = test_build(acc, test_kernels_seeds);
    amp_kernel *k = test_kernel(p, "barrier_loop");
    amp_array_view *v = test_view(data, 4, amp_extent_1d(n), AMP_READ_WRITE);
    amp_arg args[] = {amp_arg_view(v), amp_arg_int32(steps)};
    amp_tiled_extent t;
    ASSERT_OK(amp_extent_tile(amp_extent_1d(n), (const int[]){256}, &t));
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, t, k, args, 2));
    ASSERT_OK(amp_array_view_synchronize(v));
    test_check_i32(data, want, (size_t)n, "barrier_loop");
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
    free(data);
    free(want);
}

ACCEL_TILED_TEST(barrier, seed_barrier_loop_12_steps) { barrier_loop_case(acc, 40, 12); }
ACCEL_TILED_TEST(barrier, seed_barrier_loop_0_steps) { barrier_loop_case(acc, 3, 0); }
ACCEL_TILED_TEST(barrier, seed_barrier_loop_1_step) { barrier_loop_case(acc, 5, 1); }
