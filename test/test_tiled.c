/* test_tiled.c — tiled launches: every tiled_index field for rank 1-3 tiles, tiled transpose (even, padded, truncated + leftover), padded tiled matmul, and compute-domain errors; on the CPU accelerator each test runs on the loop versions and on fibers. */
#include "support.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern const char test_kernels_tiled[];


static amp_tiled_extent tile_of(amp_extent e, const int *tile)
{
    amp_tiled_extent t;
    ASSERT_OK(amp_extent_tile(e, tile, &t));
    return t;
}

/* ------------------------------------------------------ tiled_index */

/* The seed: data extent (8,6), tile 2x2. */
ACCEL_TILED_TEST(tiled, index_fields_8x6_tile2x2)
{
    enum { E0 = 8, E1 = 6, F = 10, N = E0 * E1 * F };
    amp_program *p = test_build(acc, test_kernels_tiled);
    amp_kernel *k = test_kernel(p, "tidx2");
    int32_t rec[N], want[N];
    for (int i = 0; i < N; ++i) rec[i] = POISON_I32;
    for (int a = 0; a < E0; ++a)
        for (int b = 0; b < E1; ++b) {
            int32_t *w = &want[(a * E1 + b) * F];
            w[0] = a; w[1] = b;
            w[2] = a % 2; w[3] = b % 2;
            w[4] = a / 2; w[5] = b / 2;
            w[6] = a / 2 * 2; w[7] = b / 2 * 2;
            w[8] = a * 100 + b;
            w[9] = 22;
        }
    amp_array_view *v = test_view(rec, 4, amp_extent_3d(E0, E1, F), AMP_READ_WRITE);
    amp_arg args[] = {amp_arg_view(v)};
    amp_tiled_extent t = tile_of(amp_extent_2d(E0, E1), (const int[]){2, 2});
    cr_assert(amp_tiled_extent_is_divisible(t));
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, t, k, args, 1));
    ASSERT_OK(amp_array_view_synchronize(v));
    /* the seed's thread first, by name */
    const int32_t *r = &rec[(6 * E1 + 3) * F];
    cr_assert(r[0] == 6 && r[1] == 3, "global (%d,%d), want (6,3)", r[0], r[1]);
    cr_assert(r[2] == 0 && r[3] == 1, "global (6,3): local (%d,%d), want (0,1)", r[2], r[3]);
    cr_assert(r[4] == 3 && r[5] == 1, "global (6,3): tile (%d,%d), want (3,1)", r[4], r[5]);
    cr_assert(r[6] == 6 && r[7] == 2, "global (6,3): tile_origin (%d,%d), want (6,2)", r[6], r[7]);
    test_check_i32(rec, want, N, "tiled_index fields (g0, g1, field)");
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TILED_TEST(tiled, index_fields_rank1_tile64)
{
    enum { E = 640, F = 4, N = E * F };
    amp_program *p = test_build(acc, test_kernels_tiled);
    amp_kernel *k = test_kernel(p, "tidx1");
    int32_t *rec = test_xmalloc(N * 4), *want = test_xmalloc(N * 4);
    for (int g = 0; g < E; ++g) {
        want[g * F + 0] = g;
        want[g * F + 1] = g % 64;
        want[g * F + 2] = g / 64;
        want[g * F + 3] = g / 64 * 64;
    }
    for (int i = 0; i < N; ++i) rec[i] = POISON_I32;
    amp_array_view *v = test_view(rec, 4, amp_extent_2d(E, F), AMP_READ_WRITE);
    amp_arg args[] = {amp_arg_view(v)};
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, tile_of(amp_extent_1d(E), (const int[]){64}), k, args, 1));
    ASSERT_OK(amp_array_view_synchronize(v));
    test_check_i32(rec, want, N, "rank-1 tiled_index fields (g, field)");
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
    free(rec); free(want);
}

ACCEL_TILED_TEST(tiled, index_fields_rank3_tile2x4x8)
{
    enum { E0 = 6, E1 = 8, E2 = 24, F = 12, N = E0 * E1 * E2 * F };
    const int T[3] = {2, 4, 8};
    amp_program *p = test_build(acc, test_kernels_tiled);
    amp_kernel *k = test_kernel(p, "tidx3");
    int32_t *rec = test_xmalloc(N * 4), *want = test_xmalloc(N * 4);
    for (int a = 0; a < E0; ++a)
        for (int b = 0; b < E1; ++b)
            for (int c = 0; c < E2; ++c) {
                int32_t *w = &want[((a * E1 + b) * E2 + c) * F];
                int g[3] = {a, b, c};
                for (int d = 0; d < 3; ++d) {
                    w[d] = g[d];
                    w[3 + d] = g[d] % T[d];
                    w[6 + d] = g[d] / T[d];
                    w[9 + d] = g[d] / T[d] * T[d];
                }
            }
    for (int i = 0; i < N; ++i) rec[i] = POISON_I32;
    amp_array_view *v = test_view(rec, 4, amp_extent_4d(E0, E1, E2, F), AMP_READ_WRITE);
    amp_arg args[] = {amp_arg_view(v)};
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, tile_of(amp_extent_3d(E0, E1, E2), T), k, args, 1));
    ASSERT_OK(amp_array_view_synchronize(v));
    test_check_i32(rec, want, N, "rank-3 tiled_index fields (g0, g1, g2, field)");
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
    free(rec); free(want);
}

ACCEL_TILED_TEST(tiled, tile_reverse_rank3)
{
    enum { E0 = 4, E1 = 12, E2 = 40, N = E0 * E1 * E2 };
    amp_program *p = test_build(acc, test_kernels_tiled);
    amp_kernel *k = test_kernel(p, "tile_reverse3");
    int32_t *in = test_xmalloc(N * 4), *out = test_xmalloc(N * 4), *want = test_xmalloc(N * 4);
    for (int i = 0; i < N; ++i) {
        in[i] = (int32_t)(((uint32_t)i * 2654435761u) >> 8);
        out[i] = POISON_I32;
    }
    for (int a = 0; a < E0; ++a)
        for (int b = 0; b < E1; ++b)
            for (int c = 0; c < E2; ++c) {
                int sa = a / 2 * 2 + 1 - a % 2, sb = b / 4 * 4 + 3 - b % 4, sc = c / 8 * 8 + 7 - c % 8;
                want[(a * E1 + b) * E2 + c] = in[(sa * E1 + sb) * E2 + sc];
            }
    amp_array_view *vi = test_view(in, 4, amp_extent_3d(E0, E1, E2), AMP_READ_ONLY);
    amp_array_view *vo = test_view(out, 4, amp_extent_3d(E0, E1, E2), AMP_READ_WRITE);
    amp_arg args[] = {amp_arg_view(vi), amp_arg_view(vo)};
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, tile_of(amp_extent_3d(E0, E1, E2), (const int[]){2, 4, 8}),
                                          k, args, 2));
    ASSERT_OK(amp_array_view_synchronize(vo));
    test_check_i32(out, want, N, "3-D tile reversal");
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(p));
    free(in); free(out); free(want);
}

ACCEL_TILED_TEST(tiled, tile_sum_rank1)
{
    enum { TILES = 150, N = TILES * 64 };
    amp_program *p = test_build(acc, test_kernels_tiled);
    amp_kernel *k = test_kernel(p, "tile_sum64");
    int32_t *in = test_xmalloc(N * 4), sums[TILES], want[TILES];
    for (int i = 0; i < N; ++i) in[i] = (int32_t)((i * 7919u) % 20001u) - 10000;
    for (int t = 0; t < TILES; ++t) {
        int32_t s = 0;
        for (int j = 0; j < 64; ++j) s += in[t * 64 + j];
        want[t] = s;
        sums[t] = POISON_I32;
    }
    amp_array_view *vi = test_view(in, 4, amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vs = test_view(sums, 4, amp_extent_1d(TILES), AMP_WRITE_ONLY);
    amp_arg args[] = {amp_arg_view(vi), amp_arg_view(vs)};
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, tile_of(amp_extent_1d(N), (const int[]){64}), k, args, 2));
    ASSERT_OK(amp_array_view_synchronize(vs));
    test_check_i32(sums, want, TILES, "tile sums");
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_array_view_destroy(vs));
    ASSERT_OK(amp_program_destroy(p));
    free(in);
}

/* ---------------------------------------------------------- transpose */

typedef struct transpose_case {
    int rows, cols;
    float *A, *At, *want;
    amp_array_view *va, *vt;
} transpose_case;

static void transpose_setup(transpose_case *c, int rows, int cols, unsigned seed)
{
    size_t n = (size_t)rows * cols;
    c->rows = rows;
    c->cols = cols;
    c->A = test_xmalloc(n * 4);
    c->At = test_xmalloc(n * 4);
    c->want = test_xmalloc(n * 4);
    test_fill_random(c->A, n, seed);
    for (int r = 0; r < rows; ++r)
        for (int k = 0; k < cols; ++k) c->want[(size_t)k * rows + r] = c->A[(size_t)r * cols + k];
    for (size_t i = 0; i < n; ++i) c->At[i] = POISON_F32;
    c->va = test_view(c->A, 4, amp_extent_2d(rows, cols), AMP_READ_ONLY);
    c->vt = test_view(c->At, 4, amp_extent_2d(cols, rows), AMP_READ_WRITE);
}

static void transpose_teardown(transpose_case *c)
{
    ASSERT_OK(amp_array_view_destroy(c->va));
    ASSERT_OK(amp_array_view_destroy(c->vt));
    free(c->A); free(c->At); free(c->want);
}

ACCEL_TILED_TEST(tiled, transpose_even_512x256)
{
    amp_program *p = test_build(acc, test_kernels_seeds);
    amp_kernel *k = test_kernel(p, "transpose_tiled_even");
    transpose_case c;
    transpose_setup(&c, 512, 256, 101);
    amp_arg args[] = {amp_arg_view(c.va), amp_arg_view(c.vt)};
    amp_tiled_extent t = tile_of(amp_extent_2d(512, 256), (const int[]){16, 16});
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, t, k, args, 2));
    ASSERT_OK(amp_array_view_synchronize(c.vt));
    test_check_f32(c.At, c.want, 512 * 256, "transpose 512x256");
    transpose_teardown(&c);
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TILED_TEST(tiled, transpose_padded_999x666)
{
    amp_program *p = test_build(acc, test_kernels_seeds);
    amp_kernel *k = test_kernel(p, "transpose_tiled_pad");
    transpose_case c;
    transpose_setup(&c, 999, 666, 102);
    amp_tiled_extent t = tile_of(amp_extent_2d(999, 666), (const int[]){16, 16}), tp;
    cr_assert(!amp_tiled_extent_is_divisible(t));
    ASSERT_OK(amp_tiled_extent_pad(t, &tp));
    cr_assert(amp_extent_equal(tp.extent, amp_extent_2d(1008, 672)), "padded to (%d,%d)",
              tp.extent.v[0], tp.extent.v[1]);
    cr_assert(tp.tile[0] == 16 && tp.tile[1] == 16);
    cr_assert(amp_tiled_extent_is_divisible(tp));
    amp_arg args[] = {amp_arg_view(c.va), amp_arg_view(c.vt)};
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, tp, k, args, 2));
    ASSERT_OK(amp_array_view_synchronize(c.vt));
    test_check_f32(c.At, c.want, 999 * 666, "padded transpose 999x666");
    transpose_teardown(&c);
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TILED_TEST(tiled, transpose_truncated_999x666_with_leftover)
{
    enum { R = 999, C = 666, RT = 992, CT = 656 };
    amp_program *ps = test_build(acc, test_kernels_seeds);
    amp_program *pt = test_build(acc, test_kernels_tiled);
    amp_kernel *k = test_kernel(ps, "transpose_tiled_even");
    amp_kernel *kl = test_kernel(pt, "transpose_leftover");
    transpose_case c;
    transpose_setup(&c, R, C, 103);
    amp_tiled_extent t = tile_of(amp_extent_2d(R, C), (const int[]){16, 16}), tt;
    ASSERT_OK(amp_tiled_extent_truncate(t, &tt));
    cr_assert(amp_extent_equal(tt.extent, amp_extent_2d(RT, CT)), "truncated to (%d,%d)",
              tt.extent.v[0], tt.extent.v[1]);
    cr_assert(amp_tiled_extent_is_divisible(tt));
    amp_arg args[] = {amp_arg_view(c.va), amp_arg_view(c.vt)};
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, tt, k, args, 2));
    ASSERT_OK(amp_array_view_synchronize(c.vt));
    /* the truncated launch wrote exactly the covered part */
    size_t bad = 0;
    for (int r = 0; r < R; ++r)
        for (int q = 0; q < C; ++q) {
            float got = c.At[(size_t)q * R + r];
            float want = (r < RT && q < CT) ? c.want[(size_t)q * R + r] : POISON_F32;
            if (!(got == want) && bad++ == 0)
                cr_log_error("At(%d,%d) = %g, want %g", q, r, (double)got, (double)want);
        }
    cr_assert_eq(bad, 0, "%zu elements wrong after the truncated launch", bad);
    amp_arg la[] = {amp_arg_view(c.va), amp_arg_view(c.vt), amp_arg_int32(RT), amp_arg_int32(CT)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_2d(R, C), kl, la, 4));
    ASSERT_OK(amp_array_view_synchronize(c.vt));
    test_check_f32(c.At, c.want, (size_t)R * C, "truncated transpose + leftover");
    transpose_teardown(&c);
    ASSERT_OK(amp_program_destroy(ps));
    ASSERT_OK(amp_program_destroy(pt));
}

/* ------------------------------------------------------------- matmul */

static void matmul_case(amp_accelerator *acc, int M, int K, int N, unsigned seed)
{
    amp_program *p = test_build(acc, test_kernels_seeds);
    amp_kernel *k = test_kernel(p, "matmul_tiled16");
    float *A = test_xmalloc((size_t)M * K * 4), *B = test_xmalloc((size_t)K * N * 4);
    float *C = test_xmalloc((size_t)M * N * 4);
    double *want = test_xmalloc((size_t)M * N * 8), *mag = test_xmalloc((size_t)M * N * 8);
    test_fill_random(A, (size_t)M * K, seed);
    test_fill_random(B, (size_t)K * N, seed + 1);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            double s = 0, m = 0;
            for (int q = 0; q < K; ++q) {
                double t = (double)A[i * K + q] * B[q * N + j];
                s += t;
                m += fabs(t);
            }
            want[i * N + j] = s;
            mag[i * N + j] = m;
            C[i * N + j] = POISON_F32;
        }
    amp_array_view *va = test_view(A, 4, amp_extent_2d(M, K), AMP_READ_ONLY);
    amp_array_view *vb = test_view(B, 4, amp_extent_2d(K, N), AMP_READ_ONLY);
    amp_array_view *vc = test_view(C, 4, amp_extent_2d(M, N), AMP_WRITE_ONLY);
    amp_tiled_extent t = tile_of(amp_extent_2d(M, N), (const int[]){16, 16}), tp;
    ASSERT_OK(amp_tiled_extent_pad(t, &tp));
    amp_arg args[] = {amp_arg_view(va), amp_arg_view(vb), amp_arg_view(vc)};
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, tp, k, args, 3));
    ASSERT_OK(amp_array_view_synchronize(vc));
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < (size_t)M * N; ++i)
        if (!(fabs(C[i] - want[i]) <= 1e-5 * mag[i] + 1e-6) && bad++ == 0) first = i;
    cr_assert_eq(bad, 0, "matmul %dx%d * %dx%d: %zu wrong; first C(%zu,%zu) = %.9g want %.9g", M, K,
                 K, N, bad, first / N, first % N, (double)C[first], want[first]);
    ASSERT_OK(amp_array_view_destroy(va));
    ASSERT_OK(amp_array_view_destroy(vb));
    ASSERT_OK(amp_array_view_destroy(vc));
    ASSERT_OK(amp_program_destroy(p));
    free(A); free(B); free(C); free(want); free(mag);
}

ACCEL_TILED_TEST(tiled, matmul16_padded_100x75_75x130) { matmul_case(acc, 100, 75, 130, 201); }
ACCEL_TILED_TEST(tiled, matmul16_even_64x48_48x96) { matmul_case(acc, 64, 48, 96, 202); }

/* ------------------------------------------------------------- errors */

ACCEL_TILED_TEST(tiled, non_divisible_extent_refused)
{
    amp_program *p = test_build(acc, test_kernels_seeds);
    amp_kernel *k = test_kernel(p, "transpose_tiled_pad");
    transpose_case c;
    transpose_setup(&c, 40, 24, 104);
    amp_tiled_extent t = tile_of(amp_extent_2d(40, 24), (const int[]){16, 16});
    cr_assert(!amp_tiled_extent_is_divisible(t));
    amp_arg args[] = {amp_arg_view(c.va), amp_arg_view(c.vt)};
    ASSERT_STATUS(amp_parallel_for_each_tiled(NULL, t, k, args, 2), AMP_ERROR_INVALID_COMPUTE_DOMAIN);
    cr_assert_neq(amp_last_error()[0], '\0', "no message");
    ASSERT_OK(amp_array_view_synchronize(c.vt));
    for (int i = 0; i < 40 * 24; ++i) cr_assert_eq(c.At[i], POISON_F32, "element %d written", i);
    transpose_teardown(&c);
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TILED_TEST(tiled, tile_differs_from_kernel_refused)
{
    amp_program *p = test_build(acc, test_kernels_seeds);
    amp_kernel *k = test_kernel(p, "transpose_tiled_even");
    transpose_case c;
    transpose_setup(&c, 64, 64, 105);
    amp_arg args[] = {amp_arg_view(c.va), amp_arg_view(c.vt)};
    /* divisible, but 8x8 and 16x32 are not the kernel's 16x16 */
    ASSERT_STATUS(amp_parallel_for_each_tiled(NULL, tile_of(amp_extent_2d(64, 64), (const int[]){8, 8}),
                                              k, args, 2),
                  AMP_ERROR_INVALID_COMPUTE_DOMAIN);
    ASSERT_STATUS(amp_parallel_for_each_tiled(NULL, tile_of(amp_extent_2d(64, 64), (const int[]){16, 32}),
                                              k, args, 2),
                  AMP_ERROR_INVALID_COMPUTE_DOMAIN);
    /* a rank-1 tiling of a rank-2 tiled kernel */
    ASSERT_STATUS(amp_parallel_for_each_tiled(NULL, tile_of(amp_extent_1d(4096), (const int[]){256}),
                                              k, args, 2),
                  AMP_ERROR_INVALID_COMPUTE_DOMAIN);
    ASSERT_OK(amp_array_view_synchronize(c.vt));
    for (int i = 0; i < 64 * 64; ++i) cr_assert_eq(c.At[i], POISON_F32, "element %d written", i);
    transpose_teardown(&c);
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TILED_TEST(tiled, tiled_kernel_in_simple_launch_refused)
{
    amp_program *p = test_build(acc, test_kernels_seeds);
    amp_kernel *k = test_kernel(p, "transpose_tiled_even");
    transpose_case c;
    transpose_setup(&c, 32, 32, 106);
    amp_arg args[] = {amp_arg_view(c.va), amp_arg_view(c.vt)};
    ASSERT_STATUS(amp_parallel_for_each(NULL, amp_extent_2d(32, 32), k, args, 2),
                  AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_array_view_synchronize(c.vt));
    for (int i = 0; i < 32 * 32; ++i) cr_assert_eq(c.At[i], POISON_F32, "element %d written", i);
    transpose_teardown(&c);
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TILED_TEST(tiled, simple_kernel_in_tiled_launch_refused)
{
    amp_program *p = test_build(acc, test_kernels_seeds);
    amp_kernel *k = test_kernel(p, "vector_add");
    float a[256], b[256], out[256];
    test_fill_random(a, 256, 107);
    test_fill_random(b, 256, 108);
    for (int i = 0; i < 256; ++i) out[i] = POISON_F32;
    amp_array_view *va = test_view(a, 4, amp_extent_1d(256), AMP_READ_ONLY);
    amp_array_view *vb = test_view(b, 4, amp_extent_1d(256), AMP_READ_ONLY);
    amp_array_view *vo = test_view(out, 4, amp_extent_1d(256), AMP_READ_WRITE);
    amp_arg args[] = {amp_arg_view(va), amp_arg_view(vb), amp_arg_view(vo)};
    amp_status st = amp_parallel_for_each_tiled(NULL, tile_of(amp_extent_1d(256), (const int[]){64}),
                                                k, args, 3);
    /* hipamp.h names INVALID_ARGUMENT for the mirror case (a tiled kernel in
     * a simple launch); a simple kernel has no tile, so the tiled launch is
     * refused the same way. */
    cr_assert_eq(st, AMP_ERROR_INVALID_ARGUMENT, "got %s: %s", amp_status_name(st), amp_last_error());
    ASSERT_OK(amp_array_view_synchronize(vo));
    for (int i = 0; i < 256; ++i) cr_assert_eq(out[i], POISON_F32, "element %d written", i);
    ASSERT_OK(amp_array_view_destroy(va));
    ASSERT_OK(amp_array_view_destroy(vb));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(p));
}

/* amp_extent_tile's own checks (no accelerator involved). */
Test(tiled, extent_tile_rejects_bad_tiles)
{
    amp_tiled_extent t;
    ASSERT_STATUS(amp_extent_tile(amp_extent_2d(64, 64), (const int[]){0, 16}, &t),
                  AMP_ERROR_INVALID_COMPUTE_DOMAIN);
    ASSERT_STATUS(amp_extent_tile(amp_extent_2d(64, 64), (const int[]){16, -2}, &t),
                  AMP_ERROR_INVALID_COMPUTE_DOMAIN);
    ASSERT_STATUS(amp_extent_tile(amp_extent_4d(4, 4, 4, 4), (const int[]){2, 2, 2}, &t),
                  AMP_ERROR_INVALID_COMPUTE_DOMAIN);
    ASSERT_STATUS(amp_extent_tile(amp_extent_1d(-1), (const int[]){16}, &t), AMP_ERROR_INVALID_EXTENT);
    ASSERT_OK(amp_extent_tile(amp_extent_3d(5, 7, 9), (const int[]){2, 4, 8}, &t));
    amp_tiled_extent tt;
    ASSERT_OK(amp_tiled_extent_truncate(t, &tt));
    cr_assert(amp_extent_equal(tt.extent, amp_extent_3d(4, 4, 8)));
    ASSERT_OK(amp_tiled_extent_pad(t, &tt));
    cr_assert(amp_extent_equal(tt.extent, amp_extent_3d(6, 8, 16)));
    /* truncating below one tile leaves an empty domain */
    ASSERT_OK(amp_extent_tile(amp_extent_1d(10), (const int[]){16}, &t));
    ASSERT_OK(amp_tiled_extent_truncate(t, &tt));
    cr_assert_eq(amp_extent_size(tt.extent), 0);
}
