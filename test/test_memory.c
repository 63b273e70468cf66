/* test_memory.c — array_view coherence: exact bytes/copies/launches from amp_accelerator_view_get_stats for each scenario on discrete GPUs, 0 bytes on unified accelerators (the CPU, or AMP_UNIFIED_MEMORY=on), results checked every time; device-newer data kept through a refresh that overflows the region lists; data whose strides would overflow refused. */
#include "support.h"
#include "vendor.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern const char test_kernels_memory[];


typedef struct mem_ctx {
    amp_accelerator *acc;
    amp_accelerator_view *q;
    amp_program *p;
    amp_accelerator_info info;
    bool unified;
} mem_ctx;

static void mem_open(mem_ctx *c, amp_accelerator *acc)
{
    c->acc = acc;
    ASSERT_OK(amp_accelerator_get_info(acc, &c->info));
    c->unified = c->info.is_unified_memory;
    /* The CPU accelerator is unified unless AMP_CPU_UNIFIED=0 makes it keep
     * views apart (the *_discrete_cpu runs of this suite). */
    const char *cpu_unified = getenv("AMP_CPU_UNIFIED"), *forced = getenv("AMP_UNIFIED_MEMORY");
    if (c->info.is_emulated)
        cr_assert_eq(c->unified, !(cpu_unified && !strcmp(cpu_unified, "0")) || (forced && !strcmp(forced, "on")),
                     "CPU accelerator is_unified_memory %d", c->unified);
    c->q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &c->q));
    c->p = test_build(acc, test_kernels_memory);
    ASSERT_OK(amp_accelerator_view_reset_stats(c->q));
    amp_stats s;
    ASSERT_OK(amp_accelerator_view_get_stats(c->q, &s));
    cr_assert(s.bytes_to_device == 0 && s.copies_to_device == 0 && s.bytes_to_host == 0 &&
                  s.copies_to_host == 0 && s.launches == 0,
              "stats not zero after reset");
}

static void mem_close(mem_ctx *c)
{
    ASSERT_OK(amp_program_destroy(c->p));
    ASSERT_OK(amp_accelerator_view_destroy(c->q));
}

/* Expected counters for a discrete GPU; on a unified accelerator every byte
 * and copy count must be 0 instead. Launches are counted either way. */
#define EXPECT_STATS(c, to_dev, ncp_dev, to_host, ncp_host, nlaunch, when)                        \
    do {                                                                                        \
        amp_stats s_;                                                                           \
        ASSERT_OK(amp_accelerator_view_get_stats((c)->q, &s_));                                 \
        uint64_t wd_ = (c)->unified ? 0 : (uint64_t)(to_dev);                                   \
        uint64_t wcd_ = (c)->unified ? 0 : (uint64_t)(ncp_dev);                                 \
        uint64_t wh_ = (c)->unified ? 0 : (uint64_t)(to_host);                                  \
        uint64_t wch_ = (c)->unified ? 0 : (uint64_t)(ncp_host);                                \
        cr_assert(s_.bytes_to_device == wd_ && s_.copies_to_device == wcd_ &&                   \
                      s_.bytes_to_host == wh_ && s_.copies_to_host == wch_ &&                   \
                      s_.launches == (uint64_t)(nlaunch),                                       \
                  "%s (%s memory): to_device %llu bytes/%llu copies (want %llu/%llu), "          \
                  "to_host %llu bytes/%llu copies (want %llu/%llu), launches %llu (want %llu)", \
                  (when), (c)->unified ? "unified" : "discrete",                                \
                  (unsigned long long)s_.bytes_to_device, (unsigned long long)s_.copies_to_device, \
                  (unsigned long long)wd_, (unsigned long long)wcd_,                            \
                  (unsigned long long)s_.bytes_to_host, (unsigned long long)s_.copies_to_host,  \
                  (unsigned long long)wh_, (unsigned long long)wch_,                            \
                  (unsigned long long)s_.launches, (unsigned long long)(nlaunch));              \
    } while (0)

static void launch1(mem_ctx *c, const char *kname, amp_extent e, const amp_arg *a, size_t n)
{
    amp_kernel *k = test_kernel(c->p, kname);
    ASSERT_OK(amp_parallel_for_each(c->q, e, k, a, n));
}

#define NE 4096
#define NB (NE * 4)

/* ------------------------------------------------------------ scenarios */

ACCEL_TEST(memory, read_only_view_copied_in_once_never_back)
{
    mem_ctx c;
    mem_open(&c, acc);
    static float in[NE], out[NE], want[NE], in0[NE];
    test_fill_random(in, NE, 1);
    memcpy(in0, in, sizeof in);
    for (int i = 0; i < NE; ++i) { out[i] = POISON_F32; want[i] = in[i] * 4.0f - 0.5f; }
    amp_array_view *vi = test_view(in, 4, amp_extent_1d(NE), AMP_READ_ONLY);
    amp_array_view *vo = test_view(out, 4, amp_extent_1d(NE), AMP_WRITE_ONLY);
    amp_arg a[] = {amp_arg_view(vi), amp_arg_view(vo)};
    launch1(&c, "mem_copy1", amp_extent_1d(NE), a, 2);
    EXPECT_STATS(&c, NB, 1, 0, 0, 1, "after the first launch");
    launch1(&c, "mem_copy1", amp_extent_1d(NE), a, 2);
    EXPECT_STATS(&c, NB, 1, 0, 0, 2, "after the second launch");
    ASSERT_OK(amp_array_view_synchronize(vi));
    EXPECT_STATS(&c, NB, 1, 0, 0, 2, "after synchronizing the read-only view");
    ASSERT_OK(amp_array_view_synchronize(vo));
    EXPECT_STATS(&c, NB, 1, NB, 1, 2, "after synchronizing the output");
    test_check_f32(out, want, NE, "out = in * 4 - 0.5");
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_array_view_destroy(vo));
    EXPECT_STATS(&c, NB, 1, NB, 1, 2, "after destroying both");
    test_check_f32(in, in0, NE, "the read-only input");
    mem_close(&c);
}

ACCEL_TEST(memory, write_only_view_not_copied_in)
{
    mem_ctx c;
    mem_open(&c, acc);
    static float out[NE], want[NE];
    for (int i = 0; i < NE; ++i) { out[i] = POISON_F32; want[i] = 0.25f + (float)i; }
    amp_array_view *vo = test_view(out, 4, amp_extent_1d(NE), AMP_WRITE_ONLY);
    amp_arg a[] = {amp_arg_view(vo), amp_arg_float32(0.25f)};
    launch1(&c, "mem_fill1", amp_extent_1d(NE), a, 2);
    EXPECT_STATS(&c, 0, 0, 0, 0, 1, "after the launch");
    ASSERT_OK(amp_array_view_synchronize(vo));
    EXPECT_STATS(&c, 0, 0, NB, 1, 1, "after synchronize");
    test_check_f32(out, want, NE, "fill");
    ASSERT_OK(amp_array_view_destroy(vo));
    EXPECT_STATS(&c, 0, 0, NB, 1, 1, "after destroy");
    mem_close(&c);
}

ACCEL_TEST(memory, read_write_view_in_and_back)
{
    mem_ctx c;
    mem_open(&c, acc);
    static float v[NE], want[NE];
    test_fill_random(v, NE, 2);
    for (int i = 0; i < NE; ++i) want[i] = v[i] * 2.0f + 1.0f;
    amp_array_view *vv = test_view(v, 4, amp_extent_1d(NE), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(vv)};
    launch1(&c, "mem_scale1", amp_extent_1d(NE), a, 1);
    EXPECT_STATS(&c, NB, 1, 0, 0, 1, "after the launch");
    ASSERT_OK(amp_array_view_synchronize(vv));
    EXPECT_STATS(&c, NB, 1, NB, 1, 1, "after synchronize");
    test_check_f32(v, want, NE, "v * 2 + 1");
    ASSERT_OK(amp_array_view_destroy(vv));
    mem_close(&c);
}

ACCEL_TEST(memory, discard_data_skips_copy_in)
{
    mem_ctx c;
    mem_open(&c, acc);
    static float v[NE], want[NE];
    test_fill_random(v, NE, 3);
    for (int i = 0; i < NE; ++i) want[i] = -3.0f + (float)i;
    amp_array_view *vv = test_view(v, 4, amp_extent_1d(NE), AMP_READ_WRITE);
    ASSERT_OK(amp_array_view_discard_data(vv));
    amp_arg a[] = {amp_arg_view(vv), amp_arg_float32(-3.0f)};
    launch1(&c, "mem_fill1", amp_extent_1d(NE), a, 2);
    EXPECT_STATS(&c, 0, 0, 0, 0, 1, "after a launch on a discarded view");
    ASSERT_OK(amp_array_view_synchronize(vv));
    EXPECT_STATS(&c, 0, 0, NB, 1, 1, "after synchronize");
    test_check_f32(v, want, NE, "fill after discard");
    ASSERT_OK(amp_array_view_destroy(vv));
    mem_close(&c);
}

ACCEL_TEST(memory, refresh_copies_in_again)
{
    mem_ctx c;
    mem_open(&c, acc);
    static float v[NE], want[NE];
    test_fill_random(v, NE, 4);
    for (int i = 0; i < NE; ++i) want[i] = v[i] * 2.0f + 1.0f;
    amp_array_view *vv = test_view(v, 4, amp_extent_1d(NE), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(vv)};
    launch1(&c, "mem_scale1", amp_extent_1d(NE), a, 1);
    ASSERT_OK(amp_array_view_synchronize(vv));
    EXPECT_STATS(&c, NB, 1, NB, 1, 1, "launch + synchronize");
    test_check_f32(v, want, NE, "first launch");
    /* host and device agree after synchronize: no copy in for the next launch */
    launch1(&c, "mem_scale1", amp_extent_1d(NE), a, 1);
    EXPECT_STATS(&c, NB, 1, NB, 1, 2, "second launch after synchronize");
    ASSERT_OK(amp_array_view_synchronize(vv));
    EXPECT_STATS(&c, NB, 1, 2 * NB, 2, 2, "second synchronize");
    for (int i = 0; i < NE; ++i) want[i] = want[i] * 2.0f + 1.0f;
    test_check_f32(v, want, NE, "second launch");
    /* the host changes the data and says so */
    test_fill_random(v, NE, 5);
    for (int i = 0; i < NE; ++i) want[i] = v[i] * 2.0f + 1.0f;
    ASSERT_OK(amp_array_view_refresh(vv));
    EXPECT_STATS(&c, NB, 1, 2 * NB, 2, 2, "refresh itself copies nothing");
    launch1(&c, "mem_scale1", amp_extent_1d(NE), a, 1);
    EXPECT_STATS(&c, 2 * NB, 2, 2 * NB, 2, 3, "launch after refresh");
    ASSERT_OK(amp_array_view_synchronize(vv));
    EXPECT_STATS(&c, 2 * NB, 2, 3 * NB, 3, 3, "synchronize after refresh");
    test_check_f32(v, want, NE, "the kernel saw the new host data");
    ASSERT_OK(amp_array_view_destroy(vv));
    EXPECT_STATS(&c, 2 * NB, 2, 3 * NB, 3, 3, "destroy of a synchronized view");
    mem_close(&c);
}

ACCEL_TEST(memory, two_launches_copy_in_once)
{
    mem_ctx c;
    mem_open(&c, acc);
    static float v[NE], want[NE];
    test_fill_random(v, NE, 6);
    for (int i = 0; i < NE; ++i) want[i] = (v[i] * 2.0f + 1.0f) * 2.0f + 1.0f;
    amp_array_view *vv = test_view(v, 4, amp_extent_1d(NE), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(vv)};
    launch1(&c, "mem_scale1", amp_extent_1d(NE), a, 1);
    launch1(&c, "mem_scale1", amp_extent_1d(NE), a, 1);
    EXPECT_STATS(&c, NB, 1, 0, 0, 2, "after two launches");
    ASSERT_OK(amp_array_view_synchronize(vv));
    EXPECT_STATS(&c, NB, 1, NB, 1, 2, "after synchronize");
    test_check_f32(v, want, NE, "two launches");
    ASSERT_OK(amp_array_view_destroy(vv));
    mem_close(&c);
}

ACCEL_TEST(memory, synchronize_twice_copies_back_once)
{
    mem_ctx c;
    mem_open(&c, acc);
    static float v[NE], want[NE];
    test_fill_random(v, NE, 7);
    for (int i = 0; i < NE; ++i) want[i] = v[i] * 2.0f + 1.0f;
    amp_array_view *vv = test_view(v, 4, amp_extent_1d(NE), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(vv)};
    launch1(&c, "mem_scale1", amp_extent_1d(NE), a, 1);
    ASSERT_OK(amp_array_view_synchronize(vv));
    ASSERT_OK(amp_array_view_synchronize(vv));
    EXPECT_STATS(&c, NB, 1, NB, 1, 1, "after two synchronizes");
    test_check_f32(v, want, NE, "result");
    ASSERT_OK(amp_array_view_destroy(vv));
    EXPECT_STATS(&c, NB, 1, NB, 1, 1, "after destroy");
    mem_close(&c);
}

ACCEL_TEST(memory, section_2d_moves_only_its_bytes)
{
    enum { R = 64, C = 64, R0 = 10, C0 = 5, SR = 10, SC = 10, SB = SR * SC * 4 };
    mem_ctx c;
    mem_open(&c, acc);
    static float m[R * C], want[R * C];
    test_fill_random(m, R * C, 8);
    memcpy(want, m, sizeof m);
    for (int r = R0; r < R0 + SR; ++r)
        for (int q = C0; q < C0 + SC; ++q) want[r * C + q] = m[r * C + q] * 2.0f + 1.0f;
    amp_array_view *vm = test_view(m, 4, amp_extent_2d(R, C), AMP_READ_WRITE);
    amp_array_view *vs = NULL;
    ASSERT_OK(amp_array_view_section(vm, amp_index_2d(R0, C0), amp_extent_2d(SR, SC), &vs));
    amp_arg a[] = {amp_arg_view(vs)};
    launch1(&c, "mem_scale2", amp_extent_2d(SR, SC), a, 1);
    EXPECT_STATS(&c, SB, 1, 0, 0, 1, "after the launch on the section");
    ASSERT_OK(amp_array_view_synchronize(vs));
    EXPECT_STATS(&c, SB, 1, SB, 1, 1, "after synchronizing the section");
    test_check_f32(m, want, R * C, "64x64 after the section's synchronize");
    ASSERT_OK(amp_array_view_destroy(vs));
    ASSERT_OK(amp_array_view_synchronize(vm));
    ASSERT_OK(amp_array_view_destroy(vm));
    EXPECT_STATS(&c, SB, 1, SB, 1, 1, "after synchronizing and destroying the parent");
    test_check_f32(m, want, R * C, "64x64 after the parent's destroy");
    mem_close(&c);
}

ACCEL_TEST(memory, section_3d_moves_only_its_bytes)
{
    enum { X = 8, Y = 16, Z = 32, SX = 3, SY = 5, SZ = 7, SB = SX * SY * SZ * 4 };
    mem_ctx c;
    mem_open(&c, acc);
    static float m[X * Y * Z], want[X * Y * Z];
    test_fill_random(m, X * Y * Z, 9);
    memcpy(want, m, sizeof m);
    for (int x = 2; x < 2 + SX; ++x)
        for (int y = 3; y < 3 + SY; ++y)
            for (int z = 4; z < 4 + SZ; ++z) {
                int l = (x * Y + y) * Z + z;
                want[l] = m[l] * 2.0f + 1.0f;
            }
    amp_array_view *vm = test_view(m, 4, amp_extent_3d(X, Y, Z), AMP_READ_WRITE);
    amp_array_view *vs = NULL;
    ASSERT_OK(amp_array_view_section(vm, amp_index_3d(2, 3, 4), amp_extent_3d(SX, SY, SZ), &vs));
    amp_arg a[] = {amp_arg_view(vs)};
    launch1(&c, "mem_scale3", amp_extent_3d(SX, SY, SZ), a, 1);
    EXPECT_STATS(&c, SB, 1, 0, 0, 1, "after the launch on the 3-D section");
    ASSERT_OK(amp_array_view_destroy(vs)); /* destroy synchronizes */
    EXPECT_STATS(&c, SB, 1, SB, 1, 1, "after destroying the section");
    test_check_f32(m, want, X * Y * Z, "8x16x32 after the 3-D section");
    ASSERT_OK(amp_array_view_destroy(vm));
    EXPECT_STATS(&c, SB, 1, SB, 1, 1, "after destroying the parent");
    mem_close(&c);
}

ACCEL_TEST(memory, projection_moves_only_its_row)
{
    enum { R = 32, C = 48, ROW = 7, RB = C * 4 };
    mem_ctx c;
    mem_open(&c, acc);
    static float m[R * C], want[R * C];
    test_fill_random(m, R * C, 10);
    memcpy(want, m, sizeof m);
    for (int q = 0; q < C; ++q) want[ROW * C + q] = m[ROW * C + q] * 2.0f + 1.0f;
    amp_array_view *vm = test_view(m, 4, amp_extent_2d(R, C), AMP_READ_WRITE);
    amp_array_view *row = NULL;
    ASSERT_OK(amp_array_view_project(vm, ROW, &row));
    amp_arg a[] = {amp_arg_view(row)};
    launch1(&c, "mem_scale1", amp_extent_1d(C), a, 1);
    EXPECT_STATS(&c, RB, 1, 0, 0, 1, "after the launch on row 7");
    ASSERT_OK(amp_array_view_synchronize(row));
    EXPECT_STATS(&c, RB, 1, RB, 1, 1, "after synchronizing row 7");
    test_check_f32(m, want, R * C, "after row 7's synchronize");
    ASSERT_OK(amp_array_view_destroy(row));
    ASSERT_OK(amp_array_view_destroy(vm));
    EXPECT_STATS(&c, RB, 1, RB, 1, 1, "after destroying row and parent");
    test_check_f32(m, want, R * C, "after destroy");
    mem_close(&c);
}

/* discard_data, then the host writes and refreshes: the data is needed
 * again, so the next kernel gets a copy-in and sees the host's values. */
ACCEL_TEST(memory, refresh_after_discard_copies_in)
{
    mem_ctx c;
    mem_open(&c, acc);
    static float v[NE], want[NE];
    test_fill_random(v, NE, 21);
    amp_array_view *vv = test_view(v, 4, amp_extent_1d(NE), AMP_READ_WRITE);
    ASSERT_OK(amp_array_view_discard_data(vv));
    test_fill_random(v, NE, 22);
    for (int i = 0; i < NE; ++i) want[i] = v[i] * 2.0f + 1.0f;
    ASSERT_OK(amp_array_view_refresh(vv));
    amp_arg a[] = {amp_arg_view(vv)};
    launch1(&c, "mem_scale1", amp_extent_1d(NE), a, 1);
    EXPECT_STATS(&c, NB, 1, 0, 0, 1, "after the launch that follows discard + refresh");
    ASSERT_OK(amp_array_view_destroy(vv));
    EXPECT_STATS(&c, NB, 1, NB, 1, 1, "after destroy");
    test_check_f32(v, want, NE, "kernel saw the refreshed host data");
    mem_close(&c);
}

/* A kernel on each row of a matrix: the rows' device-newer boxes merge, so
 * the parent's synchronize is one copy of the whole matrix; then the host
 * overwrites one column and refreshes it, the next kernel's results come
 * back for every column but that one (two copies around it), and the host's
 * column survives. */
ACCEL_TEST(memory, row_loop_then_column_refresh)
{
    enum { R = 40, C = 40, RB = C * 4, COL = 20 };
    mem_ctx c;
    mem_open(&c, acc);
    static float m[R * C], want[R * C];
    amp_array_view *rows[R];
    test_fill_random(m, R * C, 23);
    for (int i = 0; i < R * C; ++i) want[i] = m[i] * 2.0f + 1.0f;
    amp_array_view *vm = test_view(m, 4, amp_extent_2d(R, C), AMP_READ_WRITE);
    for (int r = 0; r < R; ++r) {
        rows[r] = NULL;
        ASSERT_OK(amp_array_view_project(vm, r, &rows[r]));
        amp_arg a[] = {amp_arg_view(rows[r])};
        launch1(&c, "mem_scale1", amp_extent_1d(C), a, 1);
    }
    EXPECT_STATS(&c, R * RB, R, 0, 0, R, "after a launch on each row");
    ASSERT_OK(amp_array_view_synchronize(vm));
    EXPECT_STATS(&c, R * RB, R, R * RB, 1, R, "after synchronizing the parent");
    test_check_f32(m, want, R * C, "every row scaled");
    for (int r = 0; r < R; ++r) ASSERT_OK(amp_array_view_destroy(rows[r]));
    EXPECT_STATS(&c, R * RB, R, R * RB, 1, R, "after destroying the rows (nothing left to copy)");

    /* Second round: whole-matrix kernel, then the host takes column COL. */
    for (int i = 0; i < R * C; ++i) want[i] = m[i] * 2.0f + 1.0f;
    amp_arg a[] = {amp_arg_view(vm)};
    launch1(&c, "mem_scale2", amp_extent_2d(R, C), a, 1);
    amp_array_view *col = NULL;
    ASSERT_OK(amp_array_view_section(vm, amp_index_2d(0, COL), amp_extent_2d(R, 1), &col));
    ASSERT_OK(amp_array_view_synchronize(col));
    for (int r = 0; r < R; ++r) m[r * C + COL] = want[r * C + COL] = 1000.0f + (float)r;
    ASSERT_OK(amp_array_view_refresh(col));
    ASSERT_OK(amp_array_view_synchronize(vm));
    test_check_f32(m, want, R * C, "kernel results outside the column, host values in it");
    /* Copy-backs of round two: the column (R elements) on its synchronize,
     * then the rest of the matrix around it in two boxes. */
    EXPECT_STATS(&c, R * RB, R, R * RB + R * 4 + (R * C - R) * 4, 1 + 1 + 2, R + 1,
                 "after the column refresh and the parent's synchronize");
    ASSERT_OK(amp_array_view_destroy(col));
    ASSERT_OK(amp_array_view_destroy(vm));
    mem_close(&c);
}

/* A read-write view that every kernel took as const is never copied back. */
ACCEL_TEST(memory, const_only_view_never_copied_back)
{
    mem_ctx c;
    mem_open(&c, acc);
    static float in[NE], o1[NE], o2[NE], want[NE], in0[NE];
    test_fill_random(in, NE, 11);
    memcpy(in0, in, sizeof in);
    for (int i = 0; i < NE; ++i) { o1[i] = o2[i] = POISON_F32; want[i] = in[i] * 4.0f - 0.5f; }
    amp_array_view *vi = test_view(in, 4, amp_extent_1d(NE), AMP_READ_WRITE);
    amp_array_view *v1 = test_view(o1, 4, amp_extent_1d(NE), AMP_WRITE_ONLY);
    amp_array_view *v2 = test_view(o2, 4, amp_extent_1d(NE), AMP_WRITE_ONLY);
    amp_arg a1[] = {amp_arg_view(vi), amp_arg_view(v1)};
    amp_arg a2[] = {amp_arg_view(vi), amp_arg_view(v2)};
    launch1(&c, "mem_copy1", amp_extent_1d(NE), a1, 2);
    launch1(&c, "mem_copy1", amp_extent_1d(NE), a2, 2);
    EXPECT_STATS(&c, NB, 1, 0, 0, 2, "after two launches reading the view");
    ASSERT_OK(amp_array_view_synchronize(vi));
    ASSERT_OK(amp_array_view_destroy(vi));
    EXPECT_STATS(&c, NB, 1, 0, 0, 2, "after synchronizing and destroying the const-only view");
    test_check_f32(in, in0, NE, "the input");
    ASSERT_OK(amp_array_view_destroy(v1));
    ASSERT_OK(amp_array_view_destroy(v2));
    EXPECT_STATS(&c, NB, 1, 2 * NB, 2, 2, "after destroying the outputs");
    test_check_f32(o1, want, NE, "first output");
    test_check_f32(o2, want, NE, "second output");
    mem_close(&c);
}

ACCEL_TEST(memory, destroy_copies_back)
{
    mem_ctx c;
    mem_open(&c, acc);
    static float v[NE], want[NE];
    test_fill_random(v, NE, 12);
    for (int i = 0; i < NE; ++i) want[i] = v[i] * 2.0f + 1.0f;
    amp_array_view *vv = test_view(v, 4, amp_extent_1d(NE), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(vv)};
    launch1(&c, "mem_scale1", amp_extent_1d(NE), a, 1);
    ASSERT_OK(amp_array_view_destroy(vv));
    EXPECT_STATS(&c, NB, 1, NB, 1, 1, "after destroy without synchronize");
    test_check_f32(v, want, NE, "destroy copied the result back");
    mem_close(&c);
}

ACCEL_TEST(memory, launch_counts_and_reset)
{
    mem_ctx c;
    mem_open(&c, acc);
    enum { M = 256 };
    float v[M], want[M];
    test_fill_random(v, M, 13);
    memcpy(want, v, sizeof v);
    amp_array_view *vv = test_view(v, 4, amp_extent_1d(M), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(vv)};
    for (int i = 0; i < 5; ++i) {
        launch1(&c, "mem_scale1", amp_extent_1d(M), a, 1);
        for (int j = 0; j < M; ++j) want[j] = want[j] * 2.0f + 1.0f;
    }
    EXPECT_STATS(&c, M * 4, 1, 0, 0, 5, "after five launches");
    /* a refused launch is not counted, nor an empty one */
    ASSERT_STATUS(amp_parallel_for_each(c.q, amp_extent_1d(-1), test_kernel(c.p, "mem_scale1"), a, 1),
                  AMP_ERROR_INVALID_EXTENT);
    ASSERT_OK(amp_parallel_for_each(c.q, amp_extent_1d(0), test_kernel(c.p, "mem_scale1"), a, 1));
    EXPECT_STATS(&c, M * 4, 1, 0, 0, 5, "after a refused and an empty launch");
    ASSERT_OK(amp_accelerator_view_reset_stats(c.q));
    EXPECT_STATS(&c, 0, 0, 0, 0, 0, "after reset");
    ASSERT_OK(amp_array_view_synchronize(vv));
    EXPECT_STATS(&c, 0, 0, M * 4, 1, 0, "synchronize after reset");
    test_check_f32(v, want, M, "five launches");
    ASSERT_OK(amp_array_view_destroy(vv));
    mem_close(&c);
}

/* ---------------------------------------------------- forced unified */

static void force_unified(void) { setenv("AMP_UNIFIED_MEMORY", "on", 1); }

ACCEL_TEST(memory, forced_unified_copies_nothing, .init = force_unified)
{
    mem_ctx c;
    mem_open(&c, acc);
    cr_assert(c.info.is_unified_memory,
              "AMP_UNIFIED_MEMORY=on: %s does not report is_unified_memory", c.info.device_path);
    static float in[NE], out[NE], v[NE], want_out[NE], want_v[NE];
    test_fill_random(in, NE, 14);
    test_fill_random(v, NE, 15);
    for (int i = 0; i < NE; ++i) {
        out[i] = POISON_F32;
        want_out[i] = in[i] * 4.0f - 0.5f;
        want_v[i] = v[i] * 2.0f + 1.0f;
    }
    amp_array_view *vi = test_view(in, 4, amp_extent_1d(NE), AMP_READ_ONLY);
    amp_array_view *vo = test_view(out, 4, amp_extent_1d(NE), AMP_WRITE_ONLY);
    amp_array_view *vv = test_view(v, 4, amp_extent_1d(NE), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(vi), amp_arg_view(vo)};
    amp_arg b[] = {amp_arg_view(vv)};
    launch1(&c, "mem_copy1", amp_extent_1d(NE), a, 2);
    launch1(&c, "mem_scale1", amp_extent_1d(NE), b, 1);
    ASSERT_OK(amp_array_view_synchronize(vo));
    ASSERT_OK(amp_array_view_synchronize(vv));
    test_check_f32(out, want_out, NE, "read-only -> write-only");
    test_check_f32(v, want_v, NE, "read-write, one launch");
    for (int i = 0; i < NE; ++i) want_v[i] = want_v[i] * 2.0f + 1.0f;
    launch1(&c, "mem_scale1", amp_extent_1d(NE), b, 1);
    ASSERT_OK(amp_array_view_synchronize(vv));
    test_check_f32(v, want_v, NE, "read-write, two launches");
    /* the host changes the data, refreshes, and the kernel sees it */
    v[0] = 8.0f;
    want_v[0] = 17.0f;
    ASSERT_OK(amp_array_view_refresh(vv));
    launch1(&c, "mem_scale1", amp_extent_1d(1), b, 1);
    ASSERT_OK(amp_array_view_destroy(vv));
    test_check_f32(v, want_v, NE, "after a host change and refresh");
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_array_view_destroy(vo));
    amp_stats s;
    ASSERT_OK(amp_accelerator_view_get_stats(c.q, &s));
    cr_assert(s.bytes_to_device == 0 && s.copies_to_device == 0 && s.bytes_to_host == 0 &&
                  s.copies_to_host == 0,
              "forced unified: %llu bytes in %llu copies to device, %llu bytes in %llu copies to host",
              (unsigned long long)s.bytes_to_device, (unsigned long long)s.copies_to_device,
              (unsigned long long)s.bytes_to_host, (unsigned long long)s.copies_to_host);
    cr_assert_eq(s.launches, 4, "launches %llu, want 4", (unsigned long long)s.launches);
    mem_close(&c);
}

/* Host memory another library registered (pinned) for only the start of
 * a view's span: the view is refused with AMP_ERROR_UNSUPPORTED naming the
 * memory, instead of mapped whole through the other's registration (a
 * kernel would read past it: an illegal address, the context lost). A
 * GPU's path (the CPU accelerator maps nothing). */
ACCEL_TEST(memory, host_memory_registered_in_part_by_another_is_refused, .init = force_unified)
{
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    if (info.is_emulated) cr_skip_test("the CPU accelerator maps no host memory");
    char why[256];
    if (!vendor_open(info.device_path, why, sizeof why)) cr_skip_test("vendor runtime for %s: %s", info.device_path, why);
    enum { PAGE = 4096, N = 4 * PAGE / 4 };
    static float buf[N] __attribute__((aligned(4096)));
    for (int i = 0; i < N; ++i) buf[i] = (float)i;
    cr_assert(vendor_host_register(buf, PAGE), "the vendor's register of the first page failed");
    mem_ctx c;
    mem_open(&c, acc);
    amp_array_view *vv = test_view(buf, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_arg b[] = {amp_arg_view(vv)};
    amp_status st = amp_parallel_for_each(c.q, amp_extent_1d(N), test_kernel(c.p, "mem_scale1"), b, 1);
    cr_assert_eq(st, AMP_ERROR_UNSUPPORTED, "%s: %s", amp_status_name(st), amp_last_error());
    cr_assert(strstr(amp_last_error(), "registered (pinned) by someone else"), "%s", amp_last_error());
    for (int i = 0; i < N; ++i) cr_assert_eq(buf[i], (float)i, "buf[%d] changed: %g", i, buf[i]);
    ASSERT_OK(amp_array_view_destroy(vv));
    /* Registered whole by the other: used through its mapping. */
    vendor_host_unregister(buf);
    cr_assert(vendor_host_register(buf, sizeof buf), "the vendor's register of the whole buffer failed");
    vv = test_view(buf, 4, amp_extent_1d(N), AMP_READ_WRITE);
    b[0] = amp_arg_view(vv);
    ASSERT_OK(amp_parallel_for_each(c.q, amp_extent_1d(N), test_kernel(c.p, "mem_scale1"), b, 1));
    ASSERT_OK(amp_array_view_synchronize(vv));
    for (int i = 0; i < N; ++i) cr_assert_eq(buf[i], (float)i * 2.0f + 1.0f, "buf[%d] = %g", i, buf[i]);
    ASSERT_OK(amp_array_view_destroy(vv));
    mem_close(&c);
    /* The registration is still its owner's: the library did not end it
     * (on AMD, whose hipHostRegister registers such memory again without
     * a word, it did, until the runtime's pointer query was asked first). */
    cr_assert(vendor_host_device_pointer(buf), "the owner's registration of the buffer was ended by the library");
    vendor_host_unregister(buf);
}

/* The device copy's list of valid regions has room for 64 boxes; a
 * refresh that would split it past that keeps the regions the device has
 * newer data for (dirty), never forgets them: here 40 column boxes are
 * valid, a kernel writes column 0 on the device, and the host's refresh of
 * row 1 would cut all 40 in two. Column 0 must come back with the kernel's
 * values but row 1's (the host's, refreshed). */
ACCEL_TEST(memory, refresh_past_the_box_list_keeps_device_newer_data)
{
    enum { R = 4, C = 80 };
    static unsigned host[R][C];
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    amp_program *p = test_build(acc, "AMP_KERNEL(mark_rows, amp::index<2> i, amp::array_view<unsigned, 2> v)\n"
                                     "{\n    v[i] = 1000u + (unsigned)i[0];\n}\n");
    amp_array_view *v = test_view(host, 4, amp_extent_2d(R, C), AMP_READ_WRITE), *col[C / 2], *row1 = NULL;
    void *dev = NULL;
    for (int i = 0; i < C / 2; ++i) {
        ASSERT_OK(amp_array_view_section(v, amp_index_2d(0, 2 * i), amp_extent_2d(R, 1), &col[i]));
        ASSERT_OK(amp_array_view_native_handle(col[i], q, AMP_READ_ONLY, &dev));
    }
    amp_arg a[] = {amp_arg_view(col[0])};
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_2d(R, 1), test_kernel(p, "mark_rows"), a, 1));
    ASSERT_OK(amp_array_view_section(v, amp_index_2d(1, 0), amp_extent_2d(1, C), &row1));
    for (int c = 0; c < C; ++c) host[1][c] = 7;
    ASSERT_OK(amp_array_view_refresh(row1));
    /* Column 0 used on the device again, then brought home. */
    ASSERT_OK(amp_array_view_native_handle(col[0], q, AMP_READ_ONLY, &dev));
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int r = 0; r < R; ++r)
        cr_assert_eq(host[r][0], r == 1 ? 7u : 1000u + (unsigned)r, "row %d of column 0: %u", r, host[r][0]);
    for (int i = 0; i < C / 2; ++i) ASSERT_OK(amp_array_view_destroy(col[i]));
    ASSERT_OK(amp_array_view_destroy(row1));
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
}

/* Data whose strides in bytes would not fit a ptrdiff_t is refused naming
 * its extent: an element size near SIZE_MAX (a staging array once wrapped
 * its size to 0 rounding it up to a line, then copied into it), and an
 * empty extent whose other dimensions multiply past int64 (its strides
 * overflowed). An empty extent of sensible size stays fine. */
ACCEL_TEST(memory, data_whose_strides_overflow_is_refused)
{
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    amp_array *a = NULL;
    ASSERT_STATUS(amp_array_create_staging(q, SIZE_MAX - 10, amp_extent_1d(1), NULL, &a), AMP_ERROR_INVALID_EXTENT);
    cr_assert_null(a);
    cr_assert(strstr(amp_last_error(), "extent {1}") && strstr(amp_last_error(), "18446744073709551605-byte"), "%s",
              amp_last_error());
    ASSERT_STATUS(amp_array_create(q, SIZE_MAX / 2, amp_extent_1d(2), NULL, &a), AMP_ERROR_INVALID_EXTENT);
    int dims[8] = {0, INT_MAX, INT_MAX, INT_MAX, INT_MAX, INT_MAX, INT_MAX, INT_MAX};
    amp_extent huge_empty = amp_extent_make(8, dims);
    static int host[4];
    amp_array_view *v = NULL;
    ASSERT_STATUS(amp_array_view_create(host, 4, huge_empty, AMP_READ_WRITE, &v), AMP_ERROR_INVALID_EXTENT);
    cr_assert_null(v);
    cr_assert(strstr(amp_last_error(), "{0,2147483647,") && strstr(amp_last_error(), "strides"), "%s",
              amp_last_error());
    amp_array_view *whole = test_view(host, 4, amp_extent_1d(4), AMP_READ_WRITE);
    ASSERT_STATUS(amp_array_view_view_as(whole, huge_empty, &v), AMP_ERROR_INVALID_EXTENT);
    cr_assert_null(v);
    cr_assert(strstr(amp_last_error(), "amp_array_view_view_as"), "%s", amp_last_error());
    ASSERT_OK(amp_array_view_view_as(whole, amp_extent_2d(0, 5), &v));
    int64_t strides[2] = {0, 0};
    ASSERT_OK(amp_array_view_get_strides(v, strides));
    cr_assert(strides[0] == 5 && strides[1] == 1, "strides of {0,5}: %lld,%lld", (long long)strides[0],
              (long long)strides[1]);
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_array_view_destroy(whole));
}

/* A launch prepares its views one after the other: when the second one's
 * finds the valid list full and resets it, the first one's box must still
 * be listed valid, else what the launch writes there is device-newer
 * data outside every valid box, and the next copy-in of a view around it
 * overwrites it with the host's stale values. Here 63 column boxes are
 * valid, the launch writes column 130 (its box is the 64th) and reads
 * column 135 (the list is full: reset), then the whole matrix is used on
 * the device and brought home. */
ACCEL_TEST(memory, launch_whose_second_view_resets_the_box_list_keeps_the_first)
{
    enum { R = 4, C = 140, OUT = 130, IN = 135 };
    static unsigned host[R][C];
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) host[r][c] = (unsigned)(r * C + c);
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    amp_program *p = test_build(acc, "AMP_KERNEL(col_from, amp::index<2> i, amp::array_view<unsigned, 2> out,\n"
                                     "           amp::array_view<const unsigned, 2> in)\n"
                                     "{\n    out[i] = in[i] + 500000u;\n}\n");
    amp_array_view *v = test_view(host, 4, amp_extent_2d(R, C), AMP_READ_WRITE), *col[63], *out = NULL, *in = NULL;
    void *dev = NULL;
    for (int i = 0; i < 63; ++i) {
        ASSERT_OK(amp_array_view_section(v, amp_index_2d(0, 2 * i), amp_extent_2d(R, 1), &col[i]));
        ASSERT_OK(amp_array_view_native_handle(col[i], q, AMP_READ_ONLY, &dev));
    }
    ASSERT_OK(amp_array_view_section(v, amp_index_2d(0, OUT), amp_extent_2d(R, 1), &out));
    ASSERT_OK(amp_array_view_section(v, amp_index_2d(0, IN), amp_extent_2d(R, 1), &in));
    amp_arg a[] = {amp_arg_view(out), amp_arg_view(in)};
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_2d(R, 1), test_kernel(p, "col_from"), a, 2));
    ASSERT_OK(amp_array_view_native_handle(v, q, AMP_READ_ONLY, &dev));
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) {
            unsigned want = c == OUT ? (unsigned)(r * C + IN) + 500000u : (unsigned)(r * C + c);
            cr_assert_eq(host[r][c], want, "host[%d][%d] = %u, want %u", r, c, host[r][c], want);
        }
    for (int i = 0; i < 63; ++i) ASSERT_OK(amp_array_view_destroy(col[i]));
    ASSERT_OK(amp_array_view_destroy(out));
    ASSERT_OK(amp_array_view_destroy(in));
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
}

/* amp_array_copy_from_host writes the array's data again, as a copy into a
 * view of it does: a view's discard_data hint ends there, and the next
 * kernel on the view gets what was written. A staging array's view keeps a
 * device copy (on the CPU accelerator with AMP_CPU_UNIFIED=0, set here, as
 * on a GPU); the kernel read stale or unset device memory instead. */
ACCEL_TEST(memory, array_copy_from_host_ends_a_views_discard_data, .init = test_cpu_copying)
{
    enum { N = 64 };
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    amp_program *p = test_build(acc, test_kernels_memory);
    float init[N], data[N], got[N];
    for (int i = 0; i < N; ++i) {
        init[i] = 1000.0f + (float)i;
        data[i] = (float)i;
    }
    amp_array *a = NULL;
    amp_array_view *v = NULL;
    ASSERT_OK(amp_array_create_staging(q, sizeof(float), amp_extent_1d(N), init, &a));
    ASSERT_OK(amp_array_view_of_array(a, &v));
    amp_arg args[] = {amp_arg_view(v)};
    amp_kernel *k = test_kernel(p, "mem_scale1");
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), k, args, 1));
    ASSERT_OK(amp_array_view_discard_data(v));
    ASSERT_OK(amp_array_copy_from_host(a, data));
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), k, args, 1));
    ASSERT_OK(amp_array_view_synchronize(v));
    ASSERT_OK(amp_array_copy_to_host(a, got));
    for (int i = 0; i < N; ++i)
        cr_assert_eq(got[i], 2.0f * (float)i + 1.0f, "got[%d] = %g after copy_from_host, want %g", i, (double)got[i],
                     2.0 * i + 1.0);
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_array_destroy(a));
    ASSERT_OK(amp_program_destroy(p));
}

/* A read-only view made of an AMP_WRITE_ONLY view reads the data (C++
 * AMP's array_view<const T> of it): the write-only view's promise not to
 * read is its own. On a copying accelerator (the CPU with
 * AMP_CPU_UNIFIED=0, set here) the derived view shared the write-only
 * view's discard and skipped the copy-in: the kernel read unset device
 * memory. The same holds for a read-only view of a write-only section, and
 * for native_handle of a write-only view for AMP_READ_ONLY (it copies in,
 * as its access says it reads). */
ACCEL_TEST(memory, a_read_only_view_of_a_write_only_view_reads_the_data, .init = test_cpu_copying)
{
    enum { N = 64, SEC0 = 16, SECN = 32 };
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    amp_program *p = test_build(acc, test_kernels_memory);
    amp_kernel *k = test_kernel(p, "mem_copy1");
    static float h[N], h2[N], out[N], out2[SECN];
    for (int i = 0; i < N; ++i) {
        h[i] = (float)(i + 1);
        h2[i] = 100.0f + (float)i;
        out[i] = POISON_F32;
    }
    for (int i = 0; i < SECN; ++i) out2[i] = POISON_F32;
    /* native_handle first, before anything else moved h2's data. */
    amp_array_view *w2 = test_view(h2, 4, amp_extent_1d(N), AMP_WRITE_ONLY);
    void *dptr = NULL;
    ASSERT_OK(amp_array_view_native_handle(w2, q, AMP_READ_ONLY, &dptr));
    cr_assert(dptr, "native_handle gave NULL");
    if (info.is_emulated) {
        ASSERT_OK(amp_accelerator_view_wait(q));
        for (int i = 0; i < N; ++i)
            cr_assert_eq(((float *)dptr)[i], h2[i], "native_handle(AMP_READ_ONLY)[%d] = %g, want %g", i,
                         (double)((float *)dptr)[i], (double)h2[i]);
    }
    amp_array_view *w = test_view(h, 4, amp_extent_1d(N), AMP_WRITE_ONLY);
    amp_array_view *r = NULL, *sec = NULL, *rs = NULL;
    ASSERT_OK(amp_array_view_read_only(w, &r));
    ASSERT_OK(amp_array_view_section(w, amp_index_1d(SEC0), amp_extent_1d(SECN), &sec));
    ASSERT_OK(amp_array_view_read_only(sec, &rs));
    amp_access access = AMP_READ_WRITE;
    ASSERT_OK(amp_array_view_get_access(sec, &access));
    cr_assert_eq(access, AMP_WRITE_ONLY, "a section of a write-only view keeps its access");
    amp_array_view *o = test_view(out, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *o2 = test_view(out2, 4, amp_extent_1d(SECN), AMP_READ_WRITE);
    /* The section's read-only view first: the whole one's copy-in would
     * otherwise have brought its elements already. */
    amp_arg a2[] = {amp_arg_view(rs), amp_arg_view(o2)};
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(SECN), k, a2, 2));
    amp_arg a1[] = {amp_arg_view(r), amp_arg_view(o)};
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), k, a1, 2));
    ASSERT_OK(amp_array_view_synchronize(o));
    ASSERT_OK(amp_array_view_synchronize(o2));
    for (int i = 0; i < N; ++i)
        cr_assert_eq(out[i], h[i] * 4.0f - 0.5f, "out[%d] = %g, want %g", i, (double)out[i],
                     (double)(h[i] * 4.0f - 0.5f));
    for (int i = 0; i < SECN; ++i)
        cr_assert_eq(out2[i], h[SEC0 + i] * 4.0f - 0.5f, "section out[%d] = %g, want %g", i, (double)out2[i],
                     (double)(h[SEC0 + i] * 4.0f - 0.5f));
    amp_array_view *views[] = {o2, o, rs, sec, r, w, w2};
    for (size_t i = 0; i < sizeof views / sizeof *views; ++i) ASSERT_OK(amp_array_view_destroy(views[i]));
    ASSERT_OK(amp_program_destroy(p));
}
