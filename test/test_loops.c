/* test_loops.c — the CPU accelerator's loop transformation: each kernel shape it handles gives the reference's answer on its loop version, on fibers and on the GPU; shapes it cannot handle stay on fibers with the reason; every tiled test kernel takes the path expected; the safety net stops a barrier the analysis missed; compile errors keep the user's line numbers after a transformed kernel. */
#include "support.h"

#include <limits.h>
#include <math.h>

#include <criterion/redirect.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern const char test_kernels_loops[];
extern const char test_kernels_tiled[];
extern const char test_kernels_barrier[];

/* Random ints in [1, 1000]. */
static void fill_ints(int32_t *x, size_t n, unsigned seed)
{
    float *f = test_xmalloc(n * sizeof *f);
    test_fill_random(f, n, seed);
    for (size_t i = 0; i < n; ++i) x[i] = (int32_t)((f[i] + 1.0f) * 499.5f) + 1;
    free(f);
}

static void poison(int32_t *x, size_t n)
{
    for (size_t i = 0; i < n; ++i) x[i] = POISON_I32;
}

/* Run kernel (one input view over extent e, one output view over eo, of as
 * many elements [, extra int]) over e with tile `tile`, and compare with
 * want. */
static void run_io_shaped(amp_accelerator *acc, const char *kernel, amp_extent e, amp_extent eo, const int *tile,
                          const int32_t *in, const int32_t *want, const int *extra)
{
    size_t n = 1;
    for (int d = 0; d < eo.rank; ++d) n *= (size_t)eo.v[d];
    int32_t *out = test_xmalloc(n * sizeof *out);
    poison(out, n);
    amp_program *p = test_build(acc, test_kernels_loops);
    amp_kernel *k = test_kernel(p, kernel);
    amp_array_view *vi = test_view((void *)in, 4, e, AMP_READ_ONLY);
    /* Read-write: a kernel that leaves some elements alone (shape_jumps
     * skips a tile) must find them unchanged, which a write-only view does
     * not promise on a device with memory of its own. */
    amp_array_view *vo = test_view(out, 4, eo, AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(vi), amp_arg_view(vo), amp_arg_int32(extra ? *extra : 0)};
    amp_tiled_extent te;
    ASSERT_OK(amp_extent_tile(e, tile, &te));
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, te, k, a, extra ? 3 : 2));
    ASSERT_OK(amp_array_view_synchronize(vo));
    test_check_i32(out, want, n, kernel);
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(p));
    free(out);
}

/* The same with the output over e too. */
static void run_io(amp_accelerator *acc, const char *kernel, amp_extent e, const int *tile, const int32_t *in,
                   const int32_t *want, const int *extra)
{
    run_io_shaped(acc, kernel, e, e, tile, in, want, extra);
}

/* ------------------------------------------------------------- shapes */

ACCEL_TILED_TEST(loops, nested_uniform_loops)
{
    enum { T = 9, N = 64 * T };
    static int32_t in[N], want[N];
    fill_ints(in, N, 1);
    for (int t = 0; t < T; ++t) {
        int32_t v[64], acc[64] = {0};
        memcpy(v, in + t * 64, sizeof v);
        for (int o = 0; o < 3; ++o)
            for (int i = 0; i < 4; ++i) {
                for (int l = 0; l < 64; ++l) acc[l] += v[(l + o + i) % 64];
                for (int l = 0; l < 64; ++l) v[l] += 1;
            }
        memcpy(want + t * 64, acc, sizeof acc);
    }
    run_io(acc, "shape_nested", amp_extent_1d(N), (const int[]){64}, in, want, NULL);
}

ACCEL_TILED_TEST(loops, uniform_if_with_barriers_in_both_branches)
{
    enum { R = 24, C = 40 };
    static int32_t in[R * C], want[R * C];
    fill_ints(in, R * C, 2);
    for (int tr = 0; tr < R / 8; ++tr)
        for (int tc = 0; tc < C / 8; ++tc)
            for (int r = 0; r < 8; ++r)
                for (int c = 0; c < 8; ++c) {
#define IN(rr, cc) in[(tr * 8 + (rr)) * C + tc * 8 + (cc)]
                    int32_t x = (tr + tc) % 2 == 0 ? 2 * IN(c, 7 - r) : IN(r, 7 - (c + 1) % 8) + 1000;
#undef IN
                    want[(tr * 8 + r) * C + tc * 8 + c] = x;
                }
    run_io(acc, "shape_if", amp_extent_2d(R, C), (const int[]){8, 8}, in, want, NULL);
}

ACCEL_TILED_TEST(loops, per_work_item_conditions_that_agree)
{
    enum { T = 5, N = 32 * T };
    static int32_t in[N], want[N];
    fill_ints(in, N, 3);
    const int n = 3;
    for (int t = 0; t < T; ++t) {
        int32_t x[32], y[32];
        memcpy(x, in + t * 32, sizeof x);
        for (int i = 0; i < n; ++i) {
            for (int l = 0; l < 32; ++l) y[l] = x[31 - l] + i;
            memcpy(x, y, sizeof x);
        }
        for (int j = 0; j < 2; ++j) {
            for (int l = 0; l < 32; ++l) y[l] = x[l] + x[(l + 1) % 32];
            memcpy(x, y, sizeof x);
        }
        memcpy(want + t * 32, x, sizeof x);
    }
    run_io(acc, "shape_while", amp_extent_1d(N), (const int[]){32}, in, want, &n);
}

ACCEL_TILED_TEST(loops, uniform_remat_and_private_variables)
{
    enum { R = 8, C = 48 };
    static int32_t in[R * C], want[R * C];
    fill_ints(in, R * C, 4);
    for (int tr = 0; tr < R / 4; ++tr)
        for (int tc = 0; tc < C / 16; ++tc) {
            int32_t s[3][4][16];
            for (int k = 0; k < 3; ++k)
                for (int r = 0; r < 4; ++r)
                    for (int cl = 0; cl < 16; ++cl)
                        s[k][r][cl] = in[(tr * 4 + r) * C + (tc * 16 + cl + 16 * k) % C] + k;
            for (int r = 0; r < 4; ++r)
                for (int cl = 0; cl < 16; ++cl) {
                    int c2 = cl * 2 + r, base = tr * 4 * 100 + tc * 16, a[3];
                    for (int k = 0; k < 3; ++k) a[k] = s[k][(r + 1) % 4][(c2 + k) % 16] + base;
                    want[(tr * 4 + r) * C + tc * 16 + cl] = a[0] * 3 + a[1] * 5 + a[2] * 7 + c2;
                }
        }
    run_io(acc, "shape_kinds", amp_extent_2d(R, C), (const int[]){4, 16}, in, want, NULL);
}

ACCEL_TILED_TEST(loops, rank3_tiles_and_a_helper_reading_threadIdx)
{
    enum { D0 = 4, D1 = 6, D2 = 8, N = D0 * D1 * D2 };
    static int32_t in[N], want[N];
    fill_ints(in, N, 5);
    for (int a0 = 0; a0 < D0; a0 += 2)
        for (int b0 = 0; b0 < D1; b0 += 3)
            for (int c0 = 0; c0 < D2; c0 += 4) {
                int32_t v[24], s[24];
                for (int f = 0; f < 24; ++f) v[f] = in[((a0 + f / 12) * D1 + b0 + f / 4 % 3) * D2 + c0 + f % 4];
                for (int round = 0; round < 2; ++round) {
                    memcpy(s, v, sizeof s);
                    for (int f = 0; f < 24; ++f) v[f] = s[(f + 5) % 24] * 2 + f % 4;
                }
                for (int f = 0; f < 24; ++f) want[((a0 + f / 12) * D1 + b0 + f / 4 % 3) * D2 + c0 + f % 4] = v[f];
            }
    run_io(acc, "shape_3d", amp_extent_3d(D0, D1, D2), (const int[]){2, 3, 4}, in, want, NULL);
}

ACCEL_TILED_TEST(loops, macro_lambda_and_return_after_the_last_barrier)
{
    enum { T = 6, N = 16 * T };
    static int32_t in[N], want[N];
    fill_ints(in, N, 6);
    for (int t = 0; t < T; ++t)
        for (int l = 0; l < 16; ++l) {
            const int32_t *s = in + t * 16;
            int32_t v = s[(l + 3) % 16] * 2 + 1;
            want[t * 16 + l] = l >= 12 ? v : v + s[(l + 1) % 16];
        }
    run_io(acc, "shape_macro_lambda_return", amp_extent_1d(N), (const int[]){16}, in, want, NULL);
}

ACCEL_TILED_TEST(loops, typedef_and_shadowed_names_across_barriers)
{
    enum { T = 5, N = 16 * T };
    static int32_t in[N], want[N];
    fill_ints(in, N, 10);
    for (int i = 0; i < N; ++i) want[i] = (in[i / 16 * 16 + 15 - i % 16] + 1) * 10 + in[i];
    run_io(acc, "shape_names", amp_extent_1d(N), (const int[]){16}, in, want, NULL);
}

ACCEL_TILED_TEST(loops, uniform_return_break_continue_and_updates)
{
    enum { T = 6, N = 32 * T };
    static int32_t in[N], want[N];
    fill_ints(in, N, 11);
    const int skip = 2;
    for (int t = 0; t < T; ++t) {
        if (t == skip) {
            for (int l = 0; l < 32; ++l) want[t * 32 + l] = POISON_I32;
            continue;
        }
        int32_t x[32], y[32];
        memcpy(x, in + t * 32, sizeof x);
        for (int stride = 1; stride < 32; stride *= 2) {
            for (int l = 0; l < 32; ++l) y[l] = x[l] + x[(l + stride) % 32];
            memcpy(x, y, sizeof x);
        }
        for (int r = 0; r < 6; ++r) {
            if (r == 3) continue;
            for (int l = 0; l < 32; ++l) y[l] = x[31 - l] + r;
            memcpy(x, y, sizeof x);
        }
        memcpy(want + t * 32, x, sizeof x);
    }
    run_io(acc, "shape_jumps", amp_extent_1d(N), (const int[]){32}, in, want, &skip);
}

ACCEL_TILED_TEST(loops, tree_reduction)
{
    enum { T = 7, N = 128 * T };
    static int32_t in[N], want[N];
    fill_ints(in, N, 7);
    for (int t = 0; t < T; ++t) {
        int32_t sum = 0;
        for (int l = 0; l < 128; ++l) sum += in[t * 128 + l];
        for (int l = 0; l < 128; ++l) want[t * 128 + l] = sum + l;
    }
    run_io(acc, "shape_reduce", amp_extent_1d(N), (const int[]){128}, in, want, NULL);
}

ACCEL_TILED_TEST(loops, shapes_left_on_fibers_still_compute)
{
    enum { T = 4, N = 16 * T };
    static int32_t in[N], want[N];
    fill_ints(in, N, 8);
    for (int t = 0; t < T; ++t) {
        int32_t x[16], y[16];
        memcpy(x, in + t * 16, sizeof x);
        for (int i = 0; i < 4; ++i) {
            for (int l = 0; l < 16; ++l) y[l] = x[15 - l] + 1;
            memcpy(x, y, sizeof x);
        }
        memcpy(want + t * 16, x, sizeof x);
    }
    run_io(acc, "fibers_break", amp_extent_1d(N), (const int[]){16}, in, want, NULL);
    for (int i = 0; i < N; ++i) want[i] = in[i / 16 * 16 + 15 - i % 16];
    run_io(acc, "fibers_helper_barrier", amp_extent_1d(N), (const int[]){16}, in, want, NULL);
    for (int i = 0; i < N; ++i) want[i] = in[i] + in[i / 16 * 16 + 15 - i % 16];
    run_io(acc, "fibers_reference", amp_extent_1d(N), (const int[]){16}, in, want, NULL);
    run_io(acc, "fibers_volatile", amp_extent_1d(N), (const int[]){16}, in, want, NULL);
}

/* ---------------------------------------------------- grid-stride loops */

/* Run a grid-stride kernel (in: n ints; out: extent eo, tiled by tile; the
 * int p) and compare with want. */
static void run_stride(amp_accelerator *acc, const char *kernel, const int32_t *in, int n, amp_extent eo,
                       const int *tile, const int32_t *want, int p)
{
    size_t no = 1;
    for (int d = 0; d < eo.rank; ++d) no *= (size_t)eo.v[d];
    int32_t *out = test_xmalloc(no * sizeof *out);
    poison(out, no);
    amp_program *pr = test_build(acc, test_kernels_loops);
    amp_kernel *k = test_kernel(pr, kernel);
    amp_array_view *vi = test_view((void *)in, 4, amp_extent_1d(n), AMP_READ_ONLY);
    amp_array_view *vo = test_view(out, 4, eo, AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(vi), amp_arg_view(vo), amp_arg_int32(p)};
    amp_tiled_extent te;
    ASSERT_OK(amp_extent_tile(eo, tile, &te));
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, te, k, a, 3));
    ASSERT_OK(amp_array_view_synchronize(vo));
    test_check_i32(out, want, no, kernel);
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(pr));
    free(out);
}

/* stride_hash's answer: work-item g of G hashes in[g], in[g + G], ... in
 * order; then each takes its own hash and its mirror's in the tile of 64. */
static void stride_hash_want(const int32_t *in, int n, int G, unsigned p, int32_t *want)
{
    uint32_t *h = test_xmalloc((size_t)G * sizeof *h);
    for (int g = 0; g < G; ++g) {
        h[g] = 7u + p;
        for (int i = g; i < n; i += G) h[g] = h[g] * 31u + (uint32_t)in[i];
    }
    for (int g = 0; g < G; ++g) want[g] = (int32_t)(h[g] ^ (h[g / 64 * 64 + 63 - g % 64] >> 3));
    free(h);
}

ACCEL_TILED_TEST(loops, grid_stride_loop_keeps_each_work_items_order)
{
    /* 5 tiles of 64; 1000 elements: 3 or 4 steps a work-item, and n below
     * the extent for a second case (some work-items take no step) */
    enum { G = 320, N = 1000 };
    static int32_t in[N], want[G];
    fill_ints(in, N, 21);
    const int ns[] = {N, 200, 1};
    for (size_t c = 0; c < sizeof ns / sizeof ns[0]; ++c) {
        stride_hash_want(in, ns[c], G, 5, want);
        run_stride(acc, "stride_hash", in, ns[c], amp_extent_1d(G), (const int[]){64}, want, 5);
    }
}

ACCEL_TILED_TEST(loops, grid_stride_loops_with_differing_trip_counts_and_a_busy_body)
{
    enum { R = 8, C = 32, G = R * C, N = 1500 };
    static int32_t in[N], want[G];
    fill_ints(in, N, 22);
    for (int p = 0; p < 3; p += 2) {
        uint32_t acc_[G];
        int steps[G];
        for (int g = 0; g < G; ++g) {
            const int lim = N - (g % 7) * p * 100, third = G / 3;
            uint32_t a = (uint32_t)g;
            steps[g] = 0;
            for (int i = g; i < lim; i += G) {
                uint32_t x = (uint32_t)in[i] + 0u + 1u + 3u;
                if (x % 2) a = a * 3u + x * x + (uint32_t)third;
                else a = a * 5u - x + (uint32_t)(2 * g);
                ++steps[g];
            }
            for (int i = N - 1 - g; i >= 0; i -= G) a = a * 7u + (uint32_t)in[i];
            acc_[g] = a;
        }
        for (int r = 0; r < R; ++r)
            for (int c = 0; c < C; ++c) {
                int tr = r / 4 * 4, tc = c / 16 * 16, lr = r % 4, lc = c % 16;
                int m = (tr + 3 - lr) * C + tc + 15 - lc;
                want[r * C + c] = (int32_t)(acc_[m] + (uint32_t)steps[r * C + c]);
            }
        run_stride(acc, "stride_shapes", in, N, amp_extent_2d(R, C), (const int[]){4, 16}, want, p * 100);
    }
}

ACCEL_TILED_TEST(loops, grid_stride_loops_left_as_they_were_still_compute)
{
    enum { G = 192, N = 777 };
    static int32_t in[N], want[G];
    fill_ints(in, N, 23);
    stride_hash_want(in, N, G, 9, want);
    static const char *const same[] = {"stride_break", "stride_helper", "stride_address", "stride_atomic"};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; ++i)
        run_stride(acc, same[i], in, N, amp_extent_1d(G), (const int[]){64}, want, 9);
    static int32_t in4[4 * G];
    fill_ints(in4, 4 * G, 24);
    uint32_t h[G];
    for (int g = 0; g < G; ++g) {
        h[g] = 7u + 9u;
        for (int i = 4 * g; i < 4 * g + 4; ++i) h[g] = h[g] * 31u + (uint32_t)in4[i];
    }
    for (int g = 0; g < G; ++g) want[g] = (int32_t)(h[g] ^ (h[g / 64 * 64 + 63 - g % 64] >> 3));
    run_stride(acc, "stride_unit", in4, 4 * G, amp_extent_1d(G), (const int[]){64}, want, 9);
}

/* The lockstep loop's vector fast path (lib/cpu/loops/emit.c): BabelStream's
 * float dot, each work-item's sum in its own order (to a float's rounding:
 * the fast path may fuse the multiply-add where the usual path does not);
 * a run leaving the range stated to the compiler after its first step, and
 * a condition with an effect, which must be evaluated once a step (both
 * exact). 5 tiles, trip counts differing between work-items. */
/* stride_dot over G work-items (tiles of 64) and N floats against each
 * work-item's sum in double, to a float's rounding (the fast path may fuse
 * the multiply-add where the usual path does not). */
static void run_stride_dot(amp_accelerator *acc, int G, int N)
{
    float *a = test_xmalloc((size_t)N * sizeof *a), *b = test_xmalloc((size_t)N * sizeof *b);
    float *got = test_xmalloc((size_t)G * sizeof *got), *want = test_xmalloc((size_t)G * sizeof *want);
    double *sum = test_xmalloc((size_t)G * sizeof *sum);
    test_fill_random(a, (size_t)N, 31);
    test_fill_random(b, (size_t)N, 32);
    for (int i = 0; i < N; ++i) {
        a[i] += 1.5f; /* positive: no cancellation in the sums */
        b[i] += 1.5f;
    }
    for (int g = 0; g < G; ++g) {
        sum[g] = 0;
        for (int i = g; i < N; i += G) sum[g] += (double)a[i] * (double)b[i];
    }
    for (int g = 0; g < G; ++g) want[g] = (float)sum[g / 64 * 64 + 63 - g % 64];
    for (int g = 0; g < G; ++g) got[g] = -1.0f;
    amp_program *pr = test_build(acc, test_kernels_loops);
    amp_kernel *k = test_kernel(pr, "stride_dot");
    amp_array_view *va = test_view(a, 4, amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vb = test_view(b, 4, amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vo = test_view(got, 4, amp_extent_1d(G), AMP_READ_WRITE);
    amp_arg args[] = {amp_arg_view(va), amp_arg_view(vb), amp_arg_view(vo)};
    amp_tiled_extent te;
    ASSERT_OK(amp_extent_tile(amp_extent_1d(G), (const int[]){64}, &te));
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, te, k, args, 3));
    ASSERT_OK(amp_array_view_synchronize(vo));
    for (int g = 0; g < G; ++g)
        cr_assert(fabsf(got[g] - want[g]) <= 1e-5f * want[g], "stride_dot, %d work-items: work-item %d got %.9g want %.9g",
                  G, g, (double)got[g], (double)want[g]);
    ASSERT_OK(amp_array_view_destroy(va));
    ASSERT_OK(amp_array_view_destroy(vb));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(pr));
    free(a);
    free(b);
    free(got);
    free(want);
    free(sum);
}

/* The lockstep loop's vector fast path (lib/cpu/loops/emit.c) and its
 * exits: BabelStream's float dot on 5 tiles (4 steps at most, trip counts
 * differing: the fast path left within its first round) and on one tile
 * (16 steps: rounds of it, then left); a run leaving the range stated to
 * the compiler after its first step; downwards with a 64-bit index on a
 * 2-D tile; a floating-point step and a condition with an effect (no fast
 * path: the results must still be right, the condition evaluated once a
 * step). */
ACCEL_TILED_TEST(loops, grid_stride_loops_on_the_vector_fast_path)
{
    run_stride_dot(acc, 320, 1000);
    run_stride_dot(acc, 64, 1000);

    enum { G = 320, N = 1000 };
    static int32_t in[N], want[G];
    fill_ints(in, N, 33);
    const int ns[] = {N, 200};
    for (size_t c = 0; c < sizeof ns / sizeof ns[0]; ++c) {
        stride_hash_want(in, ns[c], G, 4, want);
        run_stride(acc, "stride_far", in, ns[c], amp_extent_1d(G), (const int[]){64}, want, 4);
        /* the condition ran once a step and once more at the end */
        for (int g = 0; g < G; ++g)
            want[g] = (int32_t)((uint32_t)want[g] + (uint32_t)(g < ns[c] ? (ns[c] - g + G - 1) / G : 0) + 1u);
        run_stride(acc, "stride_counted", in, ns[c], amp_extent_1d(G), (const int[]){64}, want, 4);
    }

    /* 4 rows of 32 (2 x 32 tiles), in of 20 rows' worth and 5 more */
    enum { R = 4, C = 32, GD = R * C, ND = 20 * GD + 5 };
    static int32_t ind[ND], wantd[GD];
    uint32_t h[GD];
    fill_ints(ind, ND, 34);
    const int p = 3;
    for (long long g = 0; g < GD; ++g) {
        h[g] = 7u + (uint32_t)p;
        for (long long i = ND - 1 - (GD - 1) + g; i >= g + p; i -= GD) h[g] = h[g] * 31u + (uint32_t)ind[i];
    }
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) wantd[r * C + c] = (int32_t)h[(r / 2 * 2 + 1 - r % 2) * C + 31 - c];
    run_stride(acc, "stride_down_2d", ind, ND, amp_extent_2d(R, C), (const int[]){2, 32}, wantd, p);

    /* i -= 2.5, truncated to the int: 7 + 5 hashed, as C does it */
    uint32_t hf[G];
    for (int g = 0; g < G; ++g) {
        hf[g] = 7u + 5u;
        for (int i = g; i >= 0; i -= 2.5) hf[g] = hf[g] * 31u + (uint32_t)in[i];
    }
    for (int g = 0; g < G; ++g) want[g] = (int32_t)(hf[g] ^ (hf[g / 64 * 64 + 63 - g % 64] >> 3));
    run_stride(acc, "stride_float_step", in, N, amp_extent_1d(G), (const int[]){64}, want, 5);
}

/* The loops the lockstep emission leaves alone compute what the kernel
 * says: a name declared again in the loop, a division a zero-trip loop
 * guards (p = 0: no step, no division), a work-item's array used across
 * the loop. */
ACCEL_TILED_TEST(loops, grid_stride_loops_lockstep_refuses_compute)
{
    enum { G = 128, N = 1000 };
    static int32_t in[N], want[G];
    uint32_t h[G];
    fill_ints(in, N, 31);
    for (int g = 0; g < G; ++g) {
        h[g] = 7u + 3u;
        for (int i = g; i < N; i += G) h[g] = h[g] * 31u + (uint32_t)in[i] * 2u;
    }
    for (int g = 0; g < G; ++g) want[g] = (int32_t)(h[g] ^ (h[g / 64 * 64 + 63 - g % 64] >> 3));
    run_stride(acc, "lockstep_shadow", in, N, amp_extent_1d(G), (const int[]){64}, want, 3);
    for (int p = 0; p < 2; ++p) {
        for (int g = 0; g < G; ++g) {
            h[g] = 7u;
            for (int i = g; i < N * p; i += G) h[g] = h[g] * 31u + (uint32_t)in[i] + (p ? 1000u / (unsigned)p : 0u);
        }
        for (int g = 0; g < G; ++g) want[g] = (int32_t)(h[g] ^ (h[g / 64 * 64 + 63 - g % 64] >> 3));
        run_stride(acc, "lockstep_guarded_division", in, N, amp_extent_1d(G), (const int[]){64}, want, p);
    }
    for (int g = 0; g < G; ++g) {
        int32_t hist[2] = {5, 0};
        for (int i = g; i < N; i += G) hist[in[i] & 1] += in[i];
        h[g] = (uint32_t)(hist[0] * 3 + hist[1]);
    }
    for (int g = 0; g < G; ++g) want[g] = (int32_t)(h[g] ^ (h[g / 64 * 64 + 63 - g % 64] >> 3));
    run_stride(acc, "lockstep_private_array", in, N, amp_extent_1d(G), (const int[]){64}, want, 5);
    /* x: 0 + 5 = 5, + (5 + 100) = 110, + 5 = 115, + (115 + 100) = 330. */
    for (int g = 0; g < G; ++g) want[g] = 330;
    run_stride(acc, "shadow_uniform_region", in, N, amp_extent_1d(G), (const int[]){64}, want, 0);
}

/* A recomputed variable whose initialiser reads a uniform one that the
 * outer flow changes while it lives keeps its declaration's value. */
ACCEL_TILED_TEST(loops, recomputed_variables_keep_their_declarations_value)
{
    enum { T = 4, N = 16 * T };
    static int32_t in[N], want[N];
    fill_ints(in, N, 31);
    for (int g = 0; g < N; ++g) {
        int tile = g / 16 * 16, l = g % 16;
        want[g] = 0;
        for (int st = 1; st < 8; st *= 2) want[g] += in[tile + (l + st) % 16] + st + l;
    }
    run_io(acc, "remat_stale", amp_extent_1d(N), (const int[]){16}, in, want, NULL);
}

/* A recomputed variable whose initialiser reads names that a later
 * region's scope gives to other variables reads the ones it was declared
 * with. */
ACCEL_TILED_TEST(loops, recomputed_variables_keep_their_names_meaning)
{
    enum { T = 4, N = 16 * T };
    static int32_t in[N], want[N];
    fill_ints(in, N, 32);
    for (int g = 0; g < N; ++g) {
        int tile = g / 16, l = g % 16;
        want[g] = l * (tile + 3) + 7 + in[tile * 16 + 15 - l] + 100 * tile;
    }
    run_io(acc, "remat_names", amp_extent_1d(N), (const int[]){16}, in, want, NULL);
}

/* Declarations the loop version would move ahead of code reading a name
 * they hide (the kernels stay on fibers) give the reference's results. */
ACCEL_TILED_TEST(loops, moved_declarations_do_not_hide_names)
{
    enum { T = 4, N = 16 * T };
    static int32_t in[N], want[N];
    fill_ints(in, N, 33);
    for (int g = 0; g < N; ++g) want[g] = in[g / 16 * 16 + 15 - g % 16] * 3 + in[g] * 10 + 1;
    run_io(acc, "hoist_uniform", amp_extent_1d(N), (const int[]){16}, in, want, NULL);
    run_io(acc, "hoist_enum", amp_extent_1d(N), (const int[]){16}, in, want, NULL);
    run_io(acc, "hoist_tile_static", amp_extent_1d(N), (const int[]){16}, in, want, NULL);
}

/* A macro redefined inside a kernel's body expands as the body has it. */
ACCEL_TILED_TEST(loops, a_macro_redefined_in_the_body_keeps_each_definition)
{
    enum { T = 4, N = 16 * T };
    static int32_t in[N], want[N];
    fill_ints(in, N, 34);
    for (int g = 0; g < N; ++g) want[g] = in[g] + 5 + 7 * in[g / 16 * 16 + 15 - g % 16];
    run_io(acc, "macro_redefined", amp_extent_1d(N), (const int[]){16}, in, want, NULL);
}

/* A destructor of the user's that reads threadIdx sees its own work-item. */
ACCEL_TILED_TEST(loops, a_destructor_reading_threadIdx_sees_its_work_item)
{
    enum { T = 4, N = 16 * T };
    static int32_t in[N], want[N];
    fill_ints(in, N, 35);
    for (int g = 0; g < N; ++g) want[g] = in[g / 16 * 16 + 15 - g % 16] + 1000 * (g % 16);
    run_io(acc, "destructor_thread", amp_extent_1d(N), (const int[]){16}, in, want, NULL);
}

/* --------------------------------------------------------------- paths */

/* Without a usable libclang (a machine without libclang1-NN) every tiled
 * kernel runs on fibers: the tests below, about the loop path itself,
 * skip there with the reason. A libclang that cannot parse the library's
 * own code is a failure, not a reason to skip. */
static void skip_without_libclang(const char *msg)
{
    if (strstr(msg, "no libclang found") || strstr(msg, "AMP_LIBCLANG") || strstr(msg, "could not be loaded") ||
        strstr(msg, "libclang lacks"))
        cr_skip_test("the loop transformation cannot run here: %s", msg);
}

/* Kernel name of p with its loop version (skipping the test where there
 * can be none). */
static amp_kernel *loop_kernel(amp_program *p, const char *name)
{
    amp_kernel *k = NULL;
    amp_status st = amp_program_get_kernel(p, name, &k);
    if (st != AMP_OK) skip_without_libclang(amp_last_error());
    ASSERT_OK(st);
    return k;
}


/* A libclang of the system's to link to (the test skips without one). */
static const char *system_libclang(void)
{
    static const char *const cands[] = {"/usr/lib/llvm-15/lib/libclang.so.1", "/usr/lib/llvm-14/lib/libclang.so.1",
                                        "/usr/lib/llvm-16/lib/libclang.so.1", "/usr/lib/x86_64-linux-gnu/libclang.so.1"};
    for (size_t i = 0; i < sizeof cands / sizeof cands[0]; ++i)
        if (access(cands[i], R_OK) == 0) return cands[i];
    cr_skip_test("no libclang here to link to");
    return NULL;
}

/* libclang is loaded into the process: one another local user could
 * change (here reached through their link in a sticky directory others
 * may write, as root) is not loaded, and the tiled kernels say why. Before,
 * AMP_LIBCLANG was only checked to be a file, and its code ran. */
Test(loops, a_libclang_another_user_could_change_is_not_loaded)
{
    if (geteuid() != 0) cr_skip_test("a link of another user needs root to make here");
    const char *real = system_libclang();
    char dir[] = "/tmp/hipamp-libclang-XXXXXX", link[128];
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(chmod(dir, 01777), 0);
    snprintf(link, sizeof link, "%s/libclang.so", dir);
    cr_assert_eq(symlink(real, link), 0);
    cr_assert_eq(lchown(link, 65534, 65534), 0);
    setenv("AMP_LIBCLANG", link, 1);
    setenv("AMP_CPU_TILED", "loops", 1);
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_program *p = test_build(acc, test_kernels_tiled);
    amp_kernel *k = NULL;
    ASSERT_STATUS(amp_program_get_kernel(p, "tidx1", &k), AMP_ERROR_UNSUPPORTED);
    cr_assert(strstr(amp_last_error(), "not used") && strstr(amp_last_error(), "65534"), "%s", amp_last_error());
    ASSERT_OK(amp_program_destroy(p));
    unlink(link);
    rmdir(dir);
}

/* AMP_LIBCLANG naming a file without a directory (a name in the working
 * directory) loads the file it checked. Before, the check judged the
 * working directory's file but dlopen was handed the bare name, which the
 * loader searches for on LD_LIBRARY_PATH and in the system's directories
 * instead (where another user's directory may be): here it found nothing,
 * and the tiled kernel had no loop version. No disk cache, so that the
 * loop version is made here and not loaded from an earlier build. */
Test(loops, a_libclang_named_without_a_directory_is_the_file_checked)
{
    const char *real = system_libclang();
    char dir[] = "/tmp/hipamp-libclang-XXXXXX", link[128];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(link, sizeof link, "%s/hipamp-test-libclang.so", dir);
    cr_assert_eq(symlink(real, link), 0);
    cr_assert_eq(chdir(dir), 0);
    setenv("AMP_LIBCLANG", "hipamp-test-libclang.so", 1);
    setenv("AMP_CPU_TILED", "loops", 1);
    setenv("AMP_CACHE_DIR", "off", 1);
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_program *p = test_build(acc, test_kernels_tiled);
    amp_kernel *k = NULL;
    amp_status st = amp_program_get_kernel(p, "tidx1", &k);
    unlink(link);
    rmdir(dir);
    cr_assert_eq(st, AMP_OK, "the loop version with AMP_LIBCLANG=hipamp-test-libclang.so in %s: %s", dir,
                 amp_last_error());
    ASSERT_OK(amp_program_destroy(p));
}

/* With AMP_CPU_TILED=loops a tiled kernel without a loop version is
 * refused, naming why: every kernel gets the path expected. */
static void expect_path(amp_program *p, const char *kernel, const char *fibers_reason)
{
    amp_kernel *k = NULL;
    amp_status st = amp_program_get_kernel(p, kernel, &k);
    if (st != AMP_OK) skip_without_libclang(amp_last_error());
    if (!fibers_reason) {
        cr_assert_eq(st, AMP_OK, "%s has no loop version: %s", kernel, amp_last_error());
        return;
    }
    cr_assert_eq(st, AMP_ERROR_UNSUPPORTED, "%s: %s, want it on fibers (%s)", kernel, amp_status_name(st),
                 fibers_reason);
    const char *msg = amp_last_error();
    cr_assert(strstr(msg, kernel) && strstr(msg, "AMP_CPU_TILED=loops") && strstr(msg, fibers_reason),
              "message lacks the kernel, the setting or \"%s\": %s", fibers_reason, msg);
}

Test(loops, every_tiled_test_kernel_takes_the_expected_path)
{
    setenv("AMP_CPU_TILED", "loops", 1);
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_program *p = test_build(acc, test_kernels_loops);
    static const char *const loops[] = {"shape_nested", "shape_if", "shape_while", "shape_kinds", "shape_3d",
                                        "shape_macro_lambda_return", "shape_reduce", "shape_names",
                                        "shape_jumps", "stride_hash", "stride_shapes", "stride_break",
                                        "stride_helper", "stride_address", "stride_atomic", "stride_unit",
                                        "remat_stale", "remat_names", "destructor_thread"};
    for (size_t i = 0; i < sizeof loops / sizeof loops[0]; ++i) expect_path(p, loops[i], NULL);
    expect_path(p, "fibers_break", "break before a later barrier, under a condition that differs");
    /* The loop version moves uniform declarations out of their blocks,
     * where one would meet the name it hides. */
    expect_path(p, "shadow_uniform_region", "'n' is declared again inside the scope of another 'n'");
    expect_path(p, "fibers_helper_barrier", "barrier inside helper_sync()");
    expect_path(p, "fibers_reference", "reference mine lives across a barrier");
    expect_path(p, "fibers_volatile", "volatile mine lives across a barrier");
    expect_path(p, "fibers_divergent_return", "return before a later barrier, under a condition that differs");
    /* Moved ahead, these declarations would hide the globals read before
     * them. */
    expect_path(p, "hoist_uniform", "hoist_k, moved to the start of its region, would hide another 'hoist_k'");
    expect_path(p, "hoist_enum", "hoist_k, declared in the kernel and moved to its top, would hide another");
    expect_path(p, "hoist_tile_static", "tile_static hoist_tab, moved to the top of the kernel, would hide");
    expect_path(p, "macro_redefined", "macro LOOPS_STEP is defined again for the kernel's code");
    ASSERT_OK(amp_program_destroy(p));

    p = test_build(acc, test_kernels_tiled);
    static const char *const tiled[] = {"tidx2", "tidx1", "tidx3", "tile_reverse3", "tile_sum64"};
    for (size_t i = 0; i < sizeof tiled / sizeof tiled[0]; ++i) expect_path(p, tiled[i], NULL);
    ASSERT_OK(amp_program_destroy(p));

    p = test_build(acc, test_kernels_seeds);
    static const char *const seeds[] = {"transpose_tiled_even", "transpose_tiled_pad", "matmul_tiled16",
                                        "barrier_loop"};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; ++i) expect_path(p, seeds[i], NULL);
    /* simple kernels are loops by nature */
    expect_path(p, "matmul_simple", NULL);
    ASSERT_OK(amp_program_destroy(p));

    p = test_build(acc, test_kernels_barrier);
    static const char *const bar[] = {"bar_wait_allfence", "bar_wait_globalfence", "fence_global", "fence_all",
                                      "bar_rounds2d"};
    for (size_t i = 0; i < sizeof bar / sizeof bar[0]; ++i) expect_path(p, bar[i], NULL);
    /* TS_PHASES spreads its statements and barriers over one macro */
    expect_path(p, "bar_wait", "barrier inside a macro expansion");
    expect_path(p, "bar_wait_tsfence", "barrier inside a macro expansion");
    expect_path(p, "fence_tile_static", "barrier inside a macro expansion");
    ASSERT_OK(amp_program_destroy(p));
}

/* What AMP_CPU_VERBOSE printed about kernels (the redirected stderr, less
 * the lines about how a build was compiled, which a cached build does not
 * print) is exactly expect. */
static void assert_kernel_lines(const char *expect)
{
    fclose(stderr); /* the pipe's write end: its reader then sees the end */
    FILE *f = cr_get_redirected_stderr();
    cr_assert_not_null(f);
    char got[8192] = "", line[1024];
    size_t at = 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "hipamp: CPU build of ", 21) && at + strlen(line) < sizeof got) {
            memcpy(got + at, line, strlen(line) + 1);
            at += strlen(line);
        }
    cr_assert_str_eq(got, expect);
}

Test(loops, fibers_setting_builds_no_loop_versions)
{
    setenv("AMP_CPU_TILED", "fibers", 1);
    setenv("AMP_CPU_VERBOSE", "1", 1);
    cr_redirect_stderr();
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_program *p = test_build(acc, test_kernels_loops);
    test_kernel(p, "shape_nested");
    ASSERT_OK(amp_program_destroy(p));
    assert_kernel_lines("hipamp: CPU kernel 'shape_nested' runs as fibers: AMP_CPU_TILED=fibers; tile_static 256 bytes\n");
}

Test(loops, verbose_setting_names_each_kernels_path)
{
    setenv("AMP_CPU_TILED", "loops", 1);
    setenv("AMP_CPU_VERBOSE", "1", 1);
    cr_redirect_stderr();
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_program *p = test_build(acc, test_kernels_loops);
    loop_kernel(p, "shape_if");
    ASSERT_OK(amp_program_destroy(p));
    assert_kernel_lines("hipamp: CPU kernel 'shape_if' runs as loops; tile_static 256 bytes\n");
}

/* The path AMP_CPU_VERBOSE prints for each kernel of test_kernels_loops
 * named in want (fetched in that order, with AMP_CPU_TILED=loops), exactly.
 * GROUPED: what a kernel whose tiles run in groups of 8 tile rows says. */
#define GROUPED "loops, tiles in groups of 8 tile rows where the launch's views cover 256 MiB or more"
typedef struct verbose_path {
    const char *kernel, *path;
} verbose_path;
static void expect_verbose_paths(const verbose_path *want, size_t n)
{
    setenv("AMP_CPU_TILED", "loops", 1);
    setenv("AMP_CPU_VERBOSE", "1", 1);
    /* The threshold of grouped tiles (lib/cpu/loops/tiles.c) that a line
     * names: the host's cache unless set. */
    setenv("AMP_CPU_STREAM_MIN", "256M", 1);
    cr_redirect_stderr();
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_program *p = test_build(acc, test_kernels_loops);
    char expect[2048] = "";
    size_t at = 0;
    for (size_t i = 0; i < n; ++i) {
        loop_kernel(p, want[i].kernel);
        at += (size_t)snprintf(expect + at, sizeof expect - at, "hipamp: CPU kernel '%s' %s", want[i].kernel,
                               want[i].path);
        cr_assert_lt(at, sizeof expect, "the expected output outgrew its buffer");
    }
    ASSERT_OK(amp_program_destroy(p));
    assert_kernel_lines(expect);
}

/* Which grid-stride loops run in lockstep: AMP_CPU_VERBOSE says it of each
 * kernel; those the interchange must not touch run as loops as before. */
Test(loops, grid_stride_loops_run_in_lockstep_where_sound)
{
    static const verbose_path want[] = {
        {"stride_hash", "runs as loops (1 grid-stride loop in lockstep, 1 with a vector fast path); tile_static "
                        "256 bytes\n"},
        {"stride_shapes", "runs as loops (1 grid-stride loop in lockstep, 1 with a vector fast path); tile_static "
                          "256 bytes\n"},
        {"stride_dot", "runs as loops (1 grid-stride loop in lockstep, 1 with a vector fast path); tile_static "
                       "256 bytes\n"},
        {"stride_far", "runs as loops (1 grid-stride loop in lockstep, 1 with a vector fast path); tile_static "
                       "256 bytes\n"},
        {"stride_down_2d", "runs as loops (1 grid-stride loop in lockstep, 1 with a vector fast path); "
                           "tile_static 256 bytes\n"},
        {"stride_float_step", "runs as loops (1 grid-stride loop in lockstep); tile_static 256 bytes\n"},
        {"stride_counted", "runs as loops (1 grid-stride loop in lockstep); tile_static 256 bytes\n"},
        {"stride_break", "runs as loops; tile_static 256 bytes\n"},
        {"stride_helper", "runs as loops; tile_static 256 bytes\n"},
        {"stride_address", "runs as loops; tile_static 256 bytes\n"},
        {"stride_atomic", "runs as loops; tile_static 260 bytes\n"},
        {"stride_unit", "runs as loops; tile_static 256 bytes\n"},
        {"lockstep_shadow", "runs as loops; tile_static 256 bytes\n"},
        {"lockstep_guarded_division", "runs as loops; tile_static 256 bytes\n"},
        {"lockstep_private_array", "runs as loops; tile_static 256 bytes\n"},
        {"lockstep_atomic_builtin", "runs as loops; tile_static 260 bytes\n"},
        {"lockstep_destructor", "runs as loops; tile_static 260 bytes\n"},
    };
    expect_verbose_paths(want, sizeof want / sizeof want[0]);
}

/* ------------------------------------------------- work-item order */

/* Regions whose stores run along the tile's next dimension out run their
 * work-item loops interchanged on the CPU (lib/cpu/loops/order.c); the
 * results are the reference's on every accelerator. */
ACCEL_TILED_TEST(loops, interchanged_work_item_loops_keep_the_results)
{
    enum { N = 48, D0 = 4, D1 = 16 };
    static int32_t in[N * N], want[N * N];
    fill_ints(in, N * N, 21);
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) want[j * N + i] = in[i * N + j] + i % 16;
    run_io(acc, "order_transpose", amp_extent_2d(N, N), (const int[]){16, 16}, in, want, NULL);
    run_io(acc, "order_padded", amp_extent_2d(N, N), (const int[]){16, 16}, in, want, NULL);
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) {
            int ti = i / 16 * 16, tj = j / 16 * 16;
            want[i * N + j] = in[(ti + j % 16) * N + tj + i % 16] * 2;
        }
    run_io(acc, "order_mixed", amp_extent_2d(N, N), (const int[]){16, 16}, in, want, NULL);
    run_io(acc, "order_whole", amp_extent_2d(N, N), (const int[]){16, 16}, in, want, NULL);
    /* order_private: out(o1 + l1, o0 + l0) = s[l0][l1] + mine, s[l1][l0] =
     * mine - 1, mine = 5 in(o0 + l0, o1 + l1); nothing where l1 = 3. */
    for (int r = 0; r < N; ++r)
        for (int c = 0; c < N; ++c) {
            int o1 = r / 16 * 16, l1 = r % 16, o0 = c / 16 * 16, l0 = c % 16;
            want[r * N + c] = l1 == 3 ? POISON_I32
                                      : 5 * in[(o0 + l1) * N + o1 + l0] - 1 + 5 * in[(o0 + l0) * N + o1 + l1];
        }
    run_io(acc, "order_private", amp_extent_2d(N, N), (const int[]){16, 16}, in, want, NULL);
    static int32_t in3[D0 * D1 * D1], want3[D0 * D1 * D1];
    fill_ints(in3, D0 * D1 * D1, 22);
    for (int a = 0; a < D0; ++a)
        for (int b = 0; b < D1; ++b)
            for (int c = 0; c < D1; ++c) want3[(a * D1 + c) * D1 + b] = in3[(a * D1 + b) * D1 + c] * 3 + a % 2;
    run_io(acc, "order_rank3", amp_extent_3d(D0, D1, D1), (const int[]){2, 8, 8}, in3, want3, NULL);
}

/* Which regions run interchanged: AMP_CPU_VERBOSE says it of each kernel. */
Test(loops, stores_along_the_next_dimension_interchange_the_work_item_loops)
{
    static const verbose_path want[] = {
        {"order_transpose", "runs as " GROUPED " (work-item loops interchanged in 1 region); "
                            "tile_static 1024 bytes\n"},
        {"order_padded", "runs as " GROUPED "; tile_static 1088 bytes\n"},
        {"order_rank3", "runs as loops (work-item loops interchanged in 1 region); tile_static 0 bytes\n"},
        {"order_mixed", "runs as loops; tile_static 1024 bytes\n"},
        {"order_whole", "runs as loops; tile_static 1024 bytes\n"},
        {"order_private", "runs as " GROUPED " (work-item loops interchanged in 2 regions); "
                          "tile_static 1024 bytes\n"},
        {"order_short", "runs as loops, tiles in groups of 32 tile rows where the launch's views cover 256 MiB or more; "
                        "tile_static 0 bytes\n"},
    };
    expect_verbose_paths(want, sizeof want / sizeof want[0]);
}

/* ---------------------------------------------------- tile order */

/* Transposes run their tiles in groups of tile rows on the CPU (lib/cpu/
 * loops/tiles.c): every tile once, whatever the groups and the threads'
 * chunks cut (21 tile rows: groups of 8, 8 and 5; 45 of 4: groups of 16,
 * 16 and 13), on every accelerator. */
ACCEL_TILED_TEST(loops, grouped_tiles_run_every_tile_once)
{
    enum { R1 = 16 * 21, C1 = 16 * 9, R2 = 8 * 45, C2 = 32 * 5 };
    int32_t *in = test_xmalloc((size_t)R2 * C2 * sizeof *in), *want = test_xmalloc((size_t)R2 * C2 * sizeof *want);
    fill_ints(in, (size_t)R1 * C1, 31);
    for (int r = 0; r < R1; ++r)
        for (int c = 0; c < C1; ++c) want[(size_t)c * R1 + r] = 3 * in[(size_t)r * C1 + c] + r % 7;
    run_io_shaped(acc, "tiles_transpose_rect", amp_extent_2d(R1, C1), amp_extent_2d(C1, R1), (const int[]){16, 16}, in,
                  want, NULL);
    fill_ints(in, (size_t)R2 * C2, 32);
    for (int r = 0; r < R2; ++r)
        for (int c = 0; c < C2; ++c) want[(size_t)c * R2 + r] = in[(size_t)r * C2 + c] - c / 32;
    run_io_shaped(acc, "tiles_naive_rect", amp_extent_2d(R2, C2), amp_extent_2d(C2, R2), (const int[]){8, 32}, in, want,
                  NULL);
    free(in);
    free(want);
}

/* The same with groups in every launch (AMP_CPU_STREAM_MIN=0) and three
 * threads, whose chunks begin inside groups. */
Test(loops, grouped_tiles_run_every_tile_once_on_three_threads)
{
    setenv("AMP_CPU_STREAM_MIN", "0", 1);
    setenv("AMP_CPU_THREADS", "3", 1);
    loops_grouped_tiles_run_every_tile_once_body(test_accel(TEST_ACCEL_CPU));
}

/* The order itself, on one thread (its chunks halve what is left, so they
 * begin anywhere): with the launch's views at AMP_CPU_STREAM_MIN (`min`) or
 * more, tile (r, c) of R x C tiles runs after the groups of 8 tile rows
 * above it and after the columns before it in its group; else in the
 * launch's order, r C + c. amp_kernel_info says which. */
static void tile_order_case(const char *min, bool grouped)
{
    enum { R = 21, C = 3, G = 8 };
    setenv("AMP_CPU_STREAM_MIN", min, 1);
    setenv("AMP_CPU_THREADS", "1", 1);
    setenv("AMP_CPU_TILED", "loops", 1);
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_program *p = test_build(acc, test_kernels_loops);
    amp_kernel *k = loop_kernel(p, "tiles_order_probe");
    amp_kernel_info ki;
    ASSERT_OK(amp_kernel_get_info(k, &ki));
    cr_assert(strstr(ki.execution, "cpu loops, tiles in groups of 8 tile rows where the launch's views cover "),
              "%s", ki.execution);
    static int32_t counter[1], order[C][R];
    counter[0] = 0;
    poison(&order[0][0], (size_t)R * C);
    amp_array_view *vc = test_view(counter, 4, amp_extent_1d(1), AMP_READ_WRITE);
    amp_array_view *vo = test_view(order, 4, amp_extent_2d(C, R), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(vc), amp_arg_view(vo)};
    amp_tiled_extent te;
    ASSERT_OK(amp_extent_tile(amp_extent_2d(16 * R, 16 * C), (const int[]){16, 16}, &te));
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, te, k, a, 2));
    ASSERT_OK(amp_array_view_synchronize(vo));
    ASSERT_OK(amp_array_view_synchronize(vc));
    cr_assert_eq(counter[0], R * C, "%d tiles began, want %d", counter[0], R * C);
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) {
            int r0 = r / G * G, rows = R - r0 < G ? R - r0 : G;
            int want = grouped ? r0 * C + c * rows + (r - r0) : r * C + c;
            cr_assert_eq(order[c][r], want, "tile (%d, %d) ran %d-th, want %d-th (%s)", r, c, order[c][r], want,
                         grouped ? "grouped" : "the launch's order");
        }
    ASSERT_OK(amp_array_view_destroy(vc));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(p));
}

Test(loops, tiles_run_in_groups_where_the_views_reach_the_caches_size)
{
    tile_order_case("0", true);
}

/* The probe's views are 256 bytes: under a threshold of 1 MiB. */
Test(loops, tiles_run_in_the_launchs_order_below_the_caches_size)
{
    tile_order_case("1M", false);
}

/* Which kernels group their tiles: AMP_CPU_VERBOSE says it of each. */
Test(loops, kernels_that_swap_their_tiles_coordinates_group_their_tiles)
{
    static const verbose_path want[] = {
        {"tiles_transpose_rect", "runs as " GROUPED " (work-item loops interchanged in 1 region); tile_static "
                                 "1024 bytes\n"},
        {"tiles_naive_rect", "runs as loops, tiles in groups of 16 tile rows where the launch's views cover 256 MiB "
                             "or more; tile_static 0 bytes\n"},
        {"tiles_mixed_subscripts", "runs as loops; tile_static 0 bytes\n"},
        {"tiles_order_probe", "runs as " GROUPED "; tile_static 0 bytes\n"},
        {"order_mixed", "runs as loops; tile_static 1024 bytes\n"},
        {"order_rank3", "runs as loops (work-item loops interchanged in 1 region); tile_static 0 bytes\n"},
    };
    expect_verbose_paths(want, sizeof want / sizeof want[0]);
}

/* ---------------------------------------------- tile_static layout */

/* A transpose through a tile_static array written along the tile's rows
 * and read down its columns has the array stored transposed on the CPU
 * (lib/cpu/loops/layout.c); kernels whose uses it must not move keep the
 * declared layout. The results are the reference's on every accelerator. */
ACCEL_TILED_TEST(loops, tile_static_layout_keeps_the_results)
{
    enum { N = 48, D0 = 4, D1 = 32 };
    static int32_t in[N * N], want[N * N];
    fill_ints(in, N * N, 23);
    /* out(r, c) = in(c, r) + r % 16 */
    for (int r = 0; r < N; ++r)
        for (int c = 0; c < N; ++c) want[r * N + c] = in[c * N + r] + r % 16;
    static const char *const same[] = {"layout_padded", "layout_inplace", "layout_reference", "layout_global",
                                       "layout_mixed",  "layout_cleanup"};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; ++i)
        run_io(acc, same[i], amp_extent_2d(N, N), (const int[]){16, 16}, in, want, NULL);
    /* layout_address: out(r, c) = in(c, r) + r % 16, plus in(c, r + 1) +
     * r % 16 + 1 where r % 16 < 15 */
    for (int r = 0; r < N; ++r)
        for (int c = 0; c < N; ++c)
            want[r * N + c] = in[c * N + r] + r % 16 + (r % 16 < 15 ? in[c * N + r + 1] + r % 16 + 1 : 0);
    run_io(acc, "layout_address", amp_extent_2d(N, N), (const int[]){16, 16}, in, want, NULL);
    run_io(acc, "layout_volatile", amp_extent_2d(N, N), (const int[]){16, 16}, in, want, NULL);
    /* layout_assigned: out(r, c) = in(c, r) + r % 16, plus, where c % 16 <
     * 15, s[r % 16][c % 16 + 1] of the tile (c - c % 16, r - r % 16):
     * in(c - c % 16 + r % 16, r - r % 16 + c % 16 + 1) + c % 16 + 1 */
    for (int r = 0; r < N; ++r)
        for (int c = 0; c < N; ++c) {
            int ly = r % 16, lx = c % 16, o0 = c - lx, o1 = r - ly;
            want[r * N + c] = in[c * N + r] + ly + (lx < 15 ? in[(o0 + ly) * N + o1 + lx + 1] + lx + 1 : 0);
        }
    run_io(acc, "layout_assigned", amp_extent_2d(N, N), (const int[]){16, 16}, in, want, NULL);
    /* layout_rank3: out(a, b, c) = in(a - a % 2, c, b) + 1 */
    static int32_t in3[D0 * D1 * D1], want3[D0 * D1 * D1];
    fill_ints(in3, D0 * D1 * D1, 24);
    for (int a = 0; a < D0; ++a)
        for (int b = 0; b < D1; ++b)
            for (int c = 0; c < D1; ++c) want3[(a * D1 + b) * D1 + c] = in3[((a - a % 2) * D1 + c) * D1 + b] + 1;
    run_io(acc, "layout_rank3", amp_extent_3d(D0, D1, D1), (const int[]){2, 16, 16}, in3, want3, NULL);
}

/* Which arrays are stored transposed: AMP_CPU_VERBOSE says it of each
 * kernel. */
Test(loops, a_transpose_written_along_rows_stores_its_buffer_transposed)
{
    static const verbose_path want[] = {
        {"layout_padded", "runs as " GROUPED " (work-item loops interchanged in 1 region; 1 tile_static array "
                          "stored transposed); tile_static 1088 bytes\n"},
        {"layout_inplace", "runs as " GROUPED " (work-item loops interchanged in 1 region; 1 tile_static array "
                           "stored transposed); tile_static 1024 bytes\n"},
        {"layout_rank3", "runs as loops (work-item loops interchanged in 1 region; 1 tile_static array stored "
                         "transposed); tile_static 1096 bytes\n"},
        {"layout_address", "runs as " GROUPED "; tile_static 1088 bytes\n"},
        {"layout_reference", "runs as " GROUPED "; tile_static 1088 bytes\n"},
        {"layout_global", "runs as " GROUPED "; tile_static 1088 bytes\n"},
        {"layout_mixed", "runs as " GROUPED "; tile_static 2112 bytes\n"},
        {"layout_assigned", "runs as " GROUPED "; tile_static 1088 bytes\n"},
        {"layout_volatile", "runs as " GROUPED "; tile_static 1088 bytes\n"},
        {"layout_cleanup", "runs as " GROUPED "; tile_static 1088 bytes\n"},
    };
    expect_verbose_paths(want, sizeof want / sizeof want[0]);
}

/* -------------------------------------------------------- safety net */

/* A barrier reached through std::function: the analysis cannot see into
 * the library's header, so the kernel gets a loop version; the barrier call
 * there is reported, and the launch ends (no hang, no crash). */
Test(loops, barrier_the_analysis_missed_is_an_error_not_a_hang, .timeout = 120)
{
    setenv("AMP_CPU_TILED", "loops", 1);
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    const char *src = "#include <functional>\n"
                      "AMP_TILED_KERNEL(hidden_barrier, amp::tiled_index<16> t, amp::array_view<int, 1> v)\n"
                      "{\n"
                      "    std::function<void()> sync = [&]() { t.barrier.wait(); };\n"
                      "    v[t.global] = 1;\n"
                      "    sync();\n"
                      "    v[t.global] = 2;\n"
                      "}\n";
    amp_program *p = test_build(acc, src);
    amp_kernel *k = loop_kernel(p, "hidden_barrier");
    int32_t v[64];
    poison(v, 64);
    amp_array_view *vv = test_view(v, 4, amp_extent_1d(64), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(vv)};
    amp_tiled_extent te;
    ASSERT_OK(amp_extent_tile(amp_extent_1d(64), (const int[]){16}, &te));
    ASSERT_STATUS(amp_parallel_for_each_tiled(NULL, te, k, a, 1), AMP_ERROR_DEVICE);
    const char *msg = amp_last_error();
    cr_assert(strstr(msg, "hidden_barrier") && strstr(msg, "loop version") && strstr(msg, "AMP_CPU_TILED=fibers"),
              "unexpected message: %s", msg);
    /* The accelerator still works. */
    ASSERT_OK(amp_array_view_destroy(vv));
    ASSERT_OK(amp_program_destroy(p));
    p = test_build(acc, test_kernels_loops);
    static int32_t in[128], want[128];
    fill_ints(in, 128, 9);
    int32_t sum = 0;
    for (int l = 0; l < 128; ++l) sum += in[l];
    for (int l = 0; l < 128; ++l) want[l] = sum + l;
    run_io(acc, "shape_reduce", amp_extent_1d(128), (const int[]){128}, in, want, NULL);
    ASSERT_OK(amp_program_destroy(p));
}

/* ------------------------------------------------------ diagnostics */

Test(loops, compile_errors_after_a_transformed_kernel_keep_the_users_lines)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    const char *src = "AMP_TILED_KERNEL(fine, amp::tiled_index<16> t, amp::array_view<int, 1> v)\n" /* 1 */
                      "{\n"
                      "    tile_static int s[16];\n"
                      "    s[t.local[0]] = v[t.global];\n"
                      "    t.barrier.wait();\n"                                                  /* 5 */
                      "    v[t.global] = s[15 - t.local[0]];\n"
                      "}\n"
                      "AMP_KERNEL(broken, amp::index<1> i, amp::array_view<int, 1> v)\n"
                      "{\n"
                      "    v[i] = undeclared_on_line_10;\n"                                    /* 10 */
                      "}\n";
    amp_program *p = (amp_program *)1;
    ASSERT_STATUS(amp_program_build(acc, src, NULL, &p), AMP_ERROR_COMPILE);
    cr_assert_null(p);
    const char *msg = amp_last_error();
    cr_assert(strstr(msg, ":10:") && strstr(msg, "undeclared_on_line_10"), "no line 10 in: %s", msg);
    cr_assert(!strstr(msg, "hipamp loop version"), "the error names the generated code: %s", msg);
}

/* A fresh build of the loop kernels (a comment unique to this process and
 * call: no cache holds it), with AMP_CPU_DUMP_LOOPS set to dump. */
static void build_loops_dumping(const char *dump, int call)
{
    setenv("AMP_CPU_TILED", "loops", 1);
    setenv("AMP_CPU_DUMP_LOOPS", dump, 1);
    /* shape_if alone, cut from the file's text (its line to the first
     * closing brace at a line's start): the dump is what is tested, and
     * the whole file's 56 kernels took 9 s a build under ASan. */
    const char *from = strstr(test_kernels_loops, "AMP_TILED_KERNEL(shape_if,");
    cr_assert_not_null(from, "no shape_if in kernels/loops.hip");
    const char *to = strstr(from, "\n}\n");
    cr_assert_not_null(to);
    int len = (int)(to + 3 - from);
    size_t n = (size_t)len + 64;
    char *src = test_xmalloc(n);
    snprintf(src, n, "%.*s\n// dump test %ld.%d\n", len, from, (long)getpid(), call);
    amp_program *p = test_build(test_accel(TEST_ACCEL_CPU), src);
    amp_kernel *k = NULL;
    ASSERT_OK(amp_program_get_kernel(p, "shape_if", &k));
    ASSERT_OK(amp_program_destroy(p));
    free(src);
    unsetenv("AMP_CPU_DUMP_LOOPS");
}

static char *slurp_or_null(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = test_xmalloc(1 << 20);
    size_t got = fread(buf, 1, (1 << 20) - 1, f);
    buf[got] = '\0';
    fclose(f);
    return buf;
}

/* AMP_CPU_DUMP_LOOPS writes the source with its loop versions, through a
 * link of this user's in a directory of theirs; a link another user could
 * have planted in a sticky directory is not followed, at the path's end or
 * on the way to its directory (it was: the text went wherever their link
 * pointed, over a file of the user's). */
Test(loops, dump_setting_writes_the_loop_versions_and_follows_no_planted_link)
{
    char dir[] = "/tmp/hipamp-dump-XXXXXX", sticky[] = "/tmp/hipamp-dump-sticky-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char real[PATH_MAX], link[PATH_MAX], planted[PATH_MAX], kept[PATH_MAX];
    snprintf(real, sizeof real, "%s/real.cpp", dir);
    snprintf(link, sizeof link, "%s/link.cpp", dir);
    cr_assert_eq(symlink(real, link), 0);
    build_loops_dumping(link, 1);
    char *text = slurp_or_null(real);
    cr_assert_not_null(text, "nothing written through the user's own link %s", link);
    cr_assert_not_null(strstr(text, "hipamp loop version of shape_if"), "the dump holds no loop version of shape_if");
    free(text);
    if (geteuid() != 0) {
        cr_log_warn("the planted-link half needs root (a link owned by another user); only the own-link half ran");
    } else {
        cr_assert_not_null(mkdtemp(sticky));
        cr_assert_eq(chmod(sticky, 01777), 0);
        snprintf(kept, sizeof kept, "%s/kept.txt", dir);
        FILE *f = fopen(kept, "w");
        cr_assert_not_null(f);
        fputs("the user's file\n", f);
        fclose(f);
        snprintf(planted, sizeof planted, "%s/dump.cpp", sticky);
        cr_assert_eq(symlink(kept, planted), 0);
        cr_assert_eq(lchown(planted, 65534, 65534), 0);
        cr_redirect_stderr();
        build_loops_dumping(planted, 2);
        text = slurp_or_null(kept);
        cr_assert_not_null(text);
        cr_assert_str_eq(text, "the user's file\n", "the dump went through another user's link");
        free(text);
        /* Their link on the way to the file's directory: the same. */
        char planted_dir[PATH_MAX], through[PATH_MAX + 16];
        snprintf(planted_dir, sizeof planted_dir, "%s/d", sticky);
        cr_assert_eq(symlink(dir, planted_dir), 0);
        cr_assert_eq(lchown(planted_dir, 65534, 65534), 0);
        snprintf(through, sizeof through, "%s/kept.txt", planted_dir);
        build_loops_dumping(through, 3);
        text = slurp_or_null(kept);
        cr_assert_not_null(text);
        cr_assert_str_eq(text, "the user's file\n", "the dump went through another user's link to a directory");
        free(text);
        unlink(planted_dir);
        unlink(planted);
        rmdir(sticky);
        unlink(kept);
    }
    unlink(link);
    unlink(real);
    rmdir(dir);
}
