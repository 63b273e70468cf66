/* test_copy.c — amp_copy_array / amp_copy_view and their async forms: arrays on one accelerator, strided sections of host views and of arrays in both directions, the halo-exchange pattern moving exactly the halo bytes, copies between the CPU accelerator and a GPU, futures and device time, and every refusal (views and arrays made apart over shared memory included). */
#include "support.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char test_kernels_memory[];

static amp_accelerator_info info_of(amp_accelerator *acc)
{
    amp_accelerator_info in;
    ASSERT_OK(amp_accelerator_get_info(acc, &in));
    return in;
}

static amp_stats stats_of(amp_accelerator_view *q)
{
    amp_stats s;
    ASSERT_OK(amp_accelerator_view_get_stats(q, &s));
    return s;
}

static void fill_pattern(float *x, size_t n, float base)
{
    for (size_t i = 0; i < n; ++i) x[i] = base + (float)i * 0.25f;
}

/* ------------------------------------------------------------- arrays */

ACCEL_TEST(copy, array_to_array_on_one_accelerator)
{
    enum { N = 3001 };
    amp_accelerator_info in = info_of(acc);
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    float *src = test_xmalloc(N * sizeof *src), *got = test_xmalloc(N * sizeof *got);
    test_fill_random(src, N, 5);
    amp_array *a = NULL, *b = NULL;
    ASSERT_OK(amp_array_create(q, sizeof(float), amp_extent_1d(N), src, &a));
    ASSERT_OK(amp_array_create(q, sizeof(float), amp_extent_1d(N), NULL, &b));
    ASSERT_OK(amp_accelerator_view_reset_stats(q));
    ASSERT_OK(amp_copy_array(a, b));
    amp_stats s = stats_of(q);
    /* An array's memory is its accelerator's, the CPU accelerator's too. */
    cr_assert(s.bytes_device_to_device == N * 4 && s.copies_device_to_device == 1 && s.bytes_to_host == 0 &&
                  s.bytes_to_device == 0 && s.bytes_host_to_host == 0,
              "array copy on %s: d2d %llu/%llu, to_host %llu, to_device %llu, h2h %llu", in.device_path,
              (unsigned long long)s.bytes_device_to_device, (unsigned long long)s.copies_device_to_device,
              (unsigned long long)s.bytes_to_host, (unsigned long long)s.bytes_to_device,
              (unsigned long long)s.bytes_host_to_host);
    for (int i = 0; i < N; ++i) got[i] = POISON_F32;
    ASSERT_OK(amp_array_copy_to_host(b, got));
    test_check_f32(got, src, N, "array copy");
    ASSERT_OK(amp_array_destroy(a));
    ASSERT_OK(amp_array_destroy(b));
    ASSERT_OK(amp_accelerator_view_destroy(q));
    free(src);
    free(got);
}

ACCEL_TEST(copy, array_copy_async_with_device_time)
{
    enum { N = 1 << 20 };
    amp_accelerator_info in = info_of(acc);
    float *src = test_xmalloc(N * sizeof *src), *got = test_xmalloc(N * sizeof *got);
    test_fill_random(src, N, 6);
    amp_array *a = NULL, *b = NULL;
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    ASSERT_OK(amp_array_create(q, sizeof(float), amp_extent_1d(N), src, &a));
    ASSERT_OK(amp_array_create(q, sizeof(float), amp_extent_1d(N), NULL, &b));
    amp_future *f = NULL;
    ASSERT_OK(amp_copy_array_async(a, b, &f));
    ASSERT_OK(amp_future_wait(f));
    bool ready = false;
    ASSERT_OK(amp_future_is_ready(f, &ready));
    cr_assert(ready);
    double ms = -1;
    amp_status st = amp_future_elapsed_ms(f, &ms);
    if (in.is_emulated) {
        /* The CPU accelerator's memory is host memory: the copy was done on
         * this thread, with nothing queued to time. */
        cr_assert_eq(st, AMP_ERROR_UNSUPPORTED, "%s", amp_status_name(st));
    } else {
        cr_assert_eq(st, AMP_OK, "%s", amp_last_error());
        cr_assert(ms > 0 && ms < 10000, "device time %g ms", ms);
    }
    ASSERT_OK(amp_future_destroy(f));
    ASSERT_OK(amp_array_copy_to_host(b, got));
    test_check_f32(got, src, N, "async array copy");
    amp_array_destroy(a);
    amp_array_destroy(b);
    free(src);
    free(got);
}

/* ------------------------------------------------------------- views */

/* Copy a 10x20 section between two host matrices of different shapes:
 * exactly those elements change, everything else keeps its poison. */
ACCEL_TEST(copy, strided_sections_of_host_views)
{
    enum { SR = 37, SC = 53, DR = 41, DC = 60, H = 10, W = 20 };
    (void)acc;
    static float s[SR * SC], d[DR * DC];
    test_fill_random(s, SR * SC, 7);
    for (int i = 0; i < DR * DC; ++i) d[i] = POISON_F32;
    amp_array_view *vs = test_view(s, 4, amp_extent_2d(SR, SC), AMP_READ_ONLY);
    amp_array_view *vd = test_view(d, 4, amp_extent_2d(DR, DC), AMP_READ_WRITE);
    amp_array_view *ss = NULL, *sd = NULL;
    ASSERT_OK(amp_array_view_section(vs, amp_index_2d(3, 5), amp_extent_2d(H, W), &ss));
    ASSERT_OK(amp_array_view_section(vd, amp_index_2d(7, 11), amp_extent_2d(H, W), &sd));
    ASSERT_OK(amp_copy_view(ss, sd));
    for (int r = 0; r < DR; ++r)
        for (int c = 0; c < DC; ++c) {
            bool inside = r >= 7 && r < 7 + H && c >= 11 && c < 11 + W;
            float want = inside ? s[(r - 7 + 3) * SC + (c - 11 + 5)] : POISON_F32;
            cr_assert_eq(d[r * DC + c], want, "d[%d][%d] = %g, want %g", r, c, (double)d[r * DC + c], (double)want);
        }
    amp_array_view_destroy(ss);
    amp_array_view_destroy(sd);
    amp_array_view_destroy(vs);
    amp_array_view_destroy(vd);
}

/* Sections of a device array, both directions: host section -> array
 * section, array section -> host section, bytes counted exactly. */
ACCEL_TEST(copy, array_sections_both_directions)
{
    enum { R = 64, C = 96, H = 5, W = 33 };
    amp_accelerator_info in = info_of(acc);
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    static float init[R * C], host[R * C], back[R * C];
    fill_pattern(init, R * C, 1.0f);
    test_fill_random(host, R * C, 8);
    for (int i = 0; i < R * C; ++i) back[i] = POISON_F32;
    amp_array *arr = NULL;
    ASSERT_OK(amp_array_create(q, 4, amp_extent_2d(R, C), init, &arr));
    amp_array_view *va = NULL, *sa = NULL, *hs = NULL, *hb = NULL;
    ASSERT_OK(amp_array_view_of_array(arr, &va));
    ASSERT_OK(amp_array_view_section(va, amp_index_2d(10, 20), amp_extent_2d(H, W), &sa));
    amp_array_view *vh = test_view(host, 4, amp_extent_2d(R, C), AMP_READ_WRITE);
    amp_array_view *vb = test_view(back, 4, amp_extent_2d(R, C), AMP_READ_WRITE);
    ASSERT_OK(amp_array_view_section(vh, amp_index_2d(1, 2), amp_extent_2d(H, W), &hs));
    ASSERT_OK(amp_array_view_section(vb, amp_index_2d(50, 60), amp_extent_2d(H, W), &hb));
    ASSERT_OK(amp_accelerator_view_reset_stats(q));
    ASSERT_OK(amp_copy_view(hs, sa)); /* host -> array */
    ASSERT_OK(amp_copy_view(sa, hb)); /* array -> host */
    amp_stats s = stats_of(q);
    uint64_t bytes = H * W * 4;
    cr_assert(s.bytes_to_device == bytes && s.copies_to_device == 1 && s.bytes_to_host == bytes &&
                  s.copies_to_host == 1 && s.bytes_host_to_host == 0,
              "%s: to_device %llu/%llu to_host %llu/%llu (want %llu each, one copy each), h2h %llu", in.device_path,
              (unsigned long long)s.bytes_to_device, (unsigned long long)s.copies_to_device,
              (unsigned long long)s.bytes_to_host, (unsigned long long)s.copies_to_host, (unsigned long long)bytes,
              (unsigned long long)s.bytes_host_to_host);
    ASSERT_OK(amp_array_view_synchronize(vb));
    float whole[R * C];
    ASSERT_OK(amp_array_copy_to_host(arr, whole));
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) {
            bool in_a = r >= 10 && r < 10 + H && c >= 20 && c < 20 + W;
            float want_a = in_a ? host[(r - 10 + 1) * C + (c - 20 + 2)] : init[r * C + c];
            cr_assert_eq(whole[r * C + c], want_a, "array[%d][%d]", r, c);
            bool in_b = r >= 50 && r < 50 + H && c >= 60 && c < 60 + W;
            float want_b = in_b ? host[(r - 50 + 1) * C + (c - 60 + 2)] : POISON_F32;
            cr_assert_eq(back[r * C + c], want_b, "back[%d][%d]", r, c);
        }
    amp_array_view_destroy(hs);
    amp_array_view_destroy(hb);
    amp_array_view_destroy(vh);
    amp_array_view_destroy(vb);
    amp_array_view_destroy(sa);
    amp_array_view_destroy(va);
    ASSERT_OK(amp_array_destroy(arr));
    ASSERT_OK(amp_accelerator_view_destroy(q));
}

/* A section of an array whose rows are longer than 2^31 - 1 bytes, the
 * largest pitch a CUDA 2-D copy takes: copied in and out a row at a time
 * (before, the 2-D copy failed with AMP_ERROR_DEVICE). A GPU with room for
 * the 9.6 GB array only. */
ACCEL_TEST(copy, a_section_of_an_array_with_rows_over_2_gib)
{
    amp_accelerator_info in = info_of(acc);
    if (in.is_emulated) cr_skip_test("the CPU accelerator copies no 2-D boxes with the GPU drivers");
    if (in.dedicated_memory < (uint64_t)16 << 30) cr_skip_test("%s has less than 16 GB", in.device_path);
    enum { R = 4, W = 10 };
    const int C = 600000000; /* 2.4e9 bytes a row */
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    amp_array *arr = NULL;
    amp_status st = amp_array_create(q, 4, amp_extent_2d(R, C), NULL, &arr);
    if (st == AMP_ERROR_OUT_OF_MEMORY) cr_skip_test("no room for the array here: %s", amp_last_error());
    ASSERT_OK(st);
    static float in_host[R * W], out_host[R * W];
    for (int i = 0; i < R * W; ++i) {
        in_host[i] = (float)(i * 3 + 1);
        out_host[i] = POISON_F32;
    }
    amp_array_view *va = NULL, *sa = NULL;
    ASSERT_OK(amp_array_view_of_array(arr, &va));
    ASSERT_OK(amp_array_view_section(va, amp_index_2d(0, C - W - 5), amp_extent_2d(R, W), &sa));
    amp_array_view *vi = test_view(in_host, 4, amp_extent_2d(R, W), AMP_READ_ONLY);
    amp_array_view *vo = test_view(out_host, 4, amp_extent_2d(R, W), AMP_READ_WRITE);
    ASSERT_OK(amp_copy_view(vi, sa));
    ASSERT_OK(amp_copy_view(sa, vo));
    ASSERT_OK(amp_array_view_synchronize(vo));
    for (int i = 0; i < R * W; ++i) cr_assert_eq(out_host[i], in_host[i], "element %d: %g", i, out_host[i]);
    amp_array_view_destroy(vi);
    amp_array_view_destroy(vo);
    amp_array_view_destroy(sa);
    amp_array_view_destroy(va);
    ASSERT_OK(amp_array_destroy(arr));
    ASSERT_OK(amp_accelerator_view_destroy(q));
}

/* The halo exchange of a distributed stencil: the grid lives on the device
 * between kernels; a boundary row goes out to a host buffer and a ghost row
 * comes in from one. Exactly those bytes cross, and the kernel that follows
 * copies nothing in. */
ACCEL_TEST(copy, halo_exchange_moves_exactly_the_halo)
{
    enum { R = 64, C = 128, RB = C * 4 };
    amp_accelerator_info in = info_of(acc);
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    amp_program *p = test_build(acc, test_kernels_memory);
    amp_kernel *k = test_kernel(p, "mem_scale2");
    static float g[R * C], want[R * C], out[C], ghost[C];
    test_fill_random(g, R * C, 9);
    fill_pattern(ghost, C, 100.0f);
    for (int i = 0; i < C; ++i) out[i] = POISON_F32;
    amp_array_view *vg = test_view(g, 4, amp_extent_2d(R, C), AMP_READ_WRITE);
    amp_array_view *vout = test_view(out, 4, amp_extent_2d(1, C), AMP_WRITE_ONLY);
    amp_array_view *vghost = test_view(ghost, 4, amp_extent_2d(1, C), AMP_READ_ONLY);
    amp_array_view *boundary = NULL, *ghost_row = NULL;
    ASSERT_OK(amp_array_view_section(vg, amp_index_2d(R - 2, 0), amp_extent_2d(1, C), &boundary));
    ASSERT_OK(amp_array_view_section(vg, amp_index_2d(0, 0), amp_extent_2d(1, C), &ghost_row));
    amp_arg a[] = {amp_arg_view(vg)};
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_2d(R, C), k, a, 1));
    amp_stats s0 = stats_of(q);
    ASSERT_OK(amp_copy_view(boundary, vout));
    ASSERT_OK(amp_copy_view(vghost, ghost_row));
    amp_stats s1 = stats_of(q);
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_2d(R, C), k, a, 1));
    amp_stats s2 = stats_of(q);
    if (!in.is_unified_memory) {
        cr_assert(s1.bytes_to_host - s0.bytes_to_host == RB && s1.copies_to_host - s0.copies_to_host == 1,
                  "the boundary row out: %llu bytes in %llu copies, want %d in 1",
                  (unsigned long long)(s1.bytes_to_host - s0.bytes_to_host),
                  (unsigned long long)(s1.copies_to_host - s0.copies_to_host), RB);
        cr_assert(s1.bytes_to_device - s0.bytes_to_device == RB && s1.copies_to_device - s0.copies_to_device == 1,
                  "the ghost row in: %llu bytes in %llu copies, want %d in 1",
                  (unsigned long long)(s1.bytes_to_device - s0.bytes_to_device),
                  (unsigned long long)(s1.copies_to_device - s0.copies_to_device), RB);
        cr_assert(s2.bytes_to_device == s1.bytes_to_device && s2.bytes_to_host == s1.bytes_to_host,
                  "the next kernel moved data: to_device +%llu, to_host +%llu",
                  (unsigned long long)(s2.bytes_to_device - s1.bytes_to_device),
                  (unsigned long long)(s2.bytes_to_host - s1.bytes_to_host));
    } else {
        cr_assert(s2.bytes_to_device == 0 && s2.bytes_to_host == 0, "a unified accelerator moved data");
        cr_assert(s1.bytes_host_to_host - s0.bytes_host_to_host == 2 * RB, "unified: h2h %llu, want %d",
                  (unsigned long long)(s1.bytes_host_to_host - s0.bytes_host_to_host), 2 * RB);
    }
    ASSERT_OK(amp_array_view_synchronize(vg));
    /* Expected: scale once, boundary row copied out, ghost row replaced,
     * scale again. */
    for (int i = 0; i < R * C; ++i) want[i] = g[i];
    static float orig[R * C];
    test_fill_random(orig, R * C, 9);
    for (int i = 0; i < R * C; ++i) want[i] = orig[i] * 2.0f + 1.0f;
    for (int c = 0; c < C; ++c) cr_assert_eq(out[c], want[(R - 2) * C + c], "boundary out[%d]", c);
    for (int c = 0; c < C; ++c) want[c] = ghost[c];
    for (int i = 0; i < R * C; ++i) want[i] = want[i] * 2.0f + 1.0f;
    test_check_f32(g, want, R * C, "grid after the exchange and the second kernel");
    amp_array_view_destroy(boundary);
    amp_array_view_destroy(ghost_row);
    amp_array_view_destroy(vout);
    amp_array_view_destroy(vghost);
    amp_array_view_destroy(vg);
    amp_program_destroy(p);
    ASSERT_OK(amp_accelerator_view_destroy(q));
}

ACCEL_TEST(copy, view_copy_async)
{
    enum { N = 4096 };
    (void)acc;
    static float s[N], d[N];
    test_fill_random(s, N, 10);
    for (int i = 0; i < N; ++i) d[i] = POISON_F32;
    amp_array_view *vs = test_view(s, 4, amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vd = test_view(d, 4, amp_extent_1d(N), AMP_WRITE_ONLY);
    amp_future *f = NULL;
    ASSERT_OK(amp_copy_view_async(vs, vd, &f));
    ASSERT_OK(amp_future_wait(f));
    ASSERT_OK(amp_future_destroy(f));
    ASSERT_OK(amp_array_view_synchronize(vd));
    test_check_f32(d, s, N, "async view copy");
    amp_array_view_destroy(vs);
    amp_array_view_destroy(vd);
}

/* Between a GPU array and a CPU-accelerator array, both ways. */
Test(copy, gpu_and_cpu_accelerator_arrays)
{
    enum { N = 10007 };
    amp_accelerator *gpu = test_accel(TEST_ACCEL_GPU), *cpu = test_accel(TEST_ACCEL_CPU);
    amp_accelerator_view *qg = NULL, *qc = NULL;
    ASSERT_OK(amp_accelerator_default_view(gpu, &qg));
    ASSERT_OK(amp_accelerator_default_view(cpu, &qc));
    float *src = test_xmalloc(N * 4), *got = test_xmalloc(N * 4);
    test_fill_random(src, N, 11);
    amp_array *ac = NULL, *ag = NULL, *ac2 = NULL;
    ASSERT_OK(amp_array_create(qc, 4, amp_extent_1d(N), src, &ac));
    ASSERT_OK(amp_array_create(qg, 4, amp_extent_1d(N), NULL, &ag));
    ASSERT_OK(amp_array_create(qc, 4, amp_extent_1d(N), NULL, &ac2));
    ASSERT_OK(amp_accelerator_view_reset_stats(qg));
    ASSERT_OK(amp_copy_array(ac, ag));
    ASSERT_OK(amp_copy_array(ag, ac2));
    amp_stats s = stats_of(qg);
    cr_assert(s.bytes_to_device == N * 4 && s.bytes_to_host == N * 4, "to_device %llu to_host %llu",
              (unsigned long long)s.bytes_to_device, (unsigned long long)s.bytes_to_host);
    ASSERT_OK(amp_array_copy_to_host(ac2, got));
    test_check_f32(got, src, N, "CPU -> GPU -> CPU");
    amp_array_destroy(ac);
    amp_array_destroy(ag);
    amp_array_destroy(ac2);
    free(src);
    free(got);
}

/* ------------------------------------------------------------ refusals */

ACCEL_TEST(copy, refusals_name_the_problem)
{
    (void)acc;
    float a[24], b[24];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    amp_array_view *v46 = test_view(a, 4, amp_extent_2d(4, 6), AMP_READ_WRITE);
    amp_array_view *v64 = test_view(b, 4, amp_extent_2d(6, 4), AMP_READ_WRITE);
    amp_array_view *v24 = test_view(b, 4, amp_extent_1d(24), AMP_READ_WRITE);
    amp_array_view *w46 = test_view(b, 2, amp_extent_2d(4, 6), AMP_READ_WRITE);
    ASSERT_STATUS(amp_copy_view(v46, v64), AMP_ERROR_INVALID_EXTENT);
    cr_assert(strstr(amp_last_error(), "4x6") && strstr(amp_last_error(), "6x4"), "%s", amp_last_error());
    ASSERT_STATUS(amp_copy_view(v46, v24), AMP_ERROR_INVALID_EXTENT);
    ASSERT_STATUS(amp_copy_view(v46, w46), AMP_ERROR_ARGUMENT_MISMATCH);
    cr_assert(strstr(amp_last_error(), "4-byte") && strstr(amp_last_error(), "2"), "%s", amp_last_error());
    /* Overlapping parts of one view. */
    amp_array_view *s1 = NULL, *s2 = NULL;
    ASSERT_OK(amp_array_view_section(v46, amp_index_2d(0, 0), amp_extent_2d(2, 4), &s1));
    ASSERT_OK(amp_array_view_section(v46, amp_index_2d(1, 2), amp_extent_2d(2, 4), &s2));
    ASSERT_STATUS(amp_copy_view(s1, s2), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "overlap"), "%s", amp_last_error());
    ASSERT_STATUS(amp_copy_view(NULL, v46), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_copy_view(v46, NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_copy_array(NULL, NULL), AMP_ERROR_INVALID_ARGUMENT);
    amp_future *f = (amp_future *)&f;
    ASSERT_STATUS(amp_copy_view_async(v46, v64, &f), AMP_ERROR_INVALID_EXTENT);
    cr_assert_null(f, "future not NULL after a refused copy");
    ASSERT_STATUS(amp_copy_view_async(v46, v64, NULL), AMP_ERROR_INVALID_ARGUMENT);
    amp_array_view_destroy(s1);
    amp_array_view_destroy(s2);
    amp_array_view_destroy(v46);
    amp_array_view_destroy(v64);
    amp_array_view_destroy(v24);
    amp_array_view_destroy(w46);
}

/* A source and destination made apart over memory they share are refused,
 * and the memory is unchanged: the copy ran a row at a time with memmove,
 * so a 2-D copy one row down read rows it had already written and
 * returned AMP_OK. Views over one buffer laid out alike are judged by
 * their elements (disjoint sections of them copy), others by their bytes;
 * arrays made from one native allocation likewise. */
ACCEL_TEST(copy, views_and_arrays_made_apart_over_shared_memory_are_refused)
{
    int32_t m[5][4], want[5][4];
    for (int i = 0; i < 20; ++i) ((int32_t *)m)[i] = i;
    memcpy(want, m, sizeof m);
    amp_array_view *src = test_view(m, 4, amp_extent_2d(4, 4), AMP_READ_WRITE);
    amp_array_view *dst = test_view(m[1], 4, amp_extent_2d(4, 4), AMP_READ_WRITE);
    ASSERT_STATUS(amp_copy_view(src, dst), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "amp_copy_view: source and destination overlap (views or arrays over one host memory)"),
              "%s", amp_last_error());
    amp_future *f = NULL;
    ASSERT_STATUS(amp_copy_view_async(dst, src, &f), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(f);
    ASSERT_OK(amp_array_view_synchronize(src));
    ASSERT_OK(amp_array_view_synchronize(dst));
    cr_assert(!memcmp(m, want, sizeof m), "a refused copy changed the memory");

    /* Alike (one buffer, one extent): elements decide. Row 0 into row 3 of
     * another view of the same buffer copies; row 0 onto itself does not. */
    amp_array_view *other = test_view(m, 4, amp_extent_2d(4, 4), AMP_READ_WRITE), *row0 = NULL, *row3 = NULL,
                   *same0 = NULL;
    ASSERT_OK(amp_array_view_section(src, amp_index_2d(0, 0), amp_extent_2d(1, 4), &row0));
    ASSERT_OK(amp_array_view_section(other, amp_index_2d(3, 0), amp_extent_2d(1, 4), &row3));
    ASSERT_OK(amp_array_view_section(other, amp_index_2d(0, 0), amp_extent_2d(1, 4), &same0));
    ASSERT_OK(amp_copy_view(row0, row3));
    ASSERT_STATUS(amp_copy_view(row0, same0), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_array_view_synchronize(other));
    for (int j = 0; j < 4; ++j) cr_assert_eq(m[3][j], j, "m[3][%d] = %d", j, m[3][j]);
    /* Apart in bytes: rows 0-1 of one view into the fifth row's memory. */
    amp_array_view *last = test_view(m[4], 4, amp_extent_1d(4), AMP_READ_WRITE), *flat = NULL;
    ASSERT_OK(amp_array_view_section(src, amp_index_2d(0, 0), amp_extent_2d(1, 4), &flat));
    amp_array_view *flat1 = NULL;
    ASSERT_OK(amp_array_view_view_as(flat, amp_extent_1d(4), &flat1));
    ASSERT_OK(amp_copy_view(flat1, last));
    ASSERT_OK(amp_array_view_synchronize(last));
    for (int j = 0; j < 4; ++j) cr_assert_eq(m[4][j], j, "m[4][%d] = %d", j, m[4][j]);

    /* Arrays made from one native allocation. */
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    amp_array *base = NULL, *a1 = NULL, *a2 = NULL, *a3 = NULL;
    int32_t ramp[24], back[24];
    for (int i = 0; i < 24; ++i) ramp[i] = i;
    ASSERT_OK(amp_array_create(q, 4, amp_extent_1d(24), ramp, &base));
    void *mem = NULL;
    ASSERT_OK(amp_array_native_handle(base, &mem));
    ASSERT_OK(amp_array_create_from_native(q, mem, 4, amp_extent_2d(2, 4), &a1));
    ASSERT_OK(amp_array_create_from_native(q, (char *)mem + 16, 4, amp_extent_2d(2, 4), &a2));
    ASSERT_OK(amp_array_create_from_native(q, (char *)mem + 64, 4, amp_extent_2d(2, 4), &a3));
    ASSERT_STATUS(amp_copy_array(a1, a2), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "overlap"), "%s", amp_last_error());
    ASSERT_OK(amp_array_copy_to_host(base, back));
    for (int i = 0; i < 24; ++i) cr_assert_eq(back[i], i, "the refused copy changed element %d: %d", i, back[i]);
    ASSERT_OK(amp_copy_array(a1, a3)); /* elements 0-7 into 16-23 */
    ASSERT_OK(amp_array_copy_to_host(base, back));
    for (int i = 0; i < 24; ++i)
        cr_assert_eq(back[i], i < 16 ? i : i - 16, "after the copy, element %d is %d", i, back[i]);
    ASSERT_OK(amp_array_destroy(a1));
    ASSERT_OK(amp_array_destroy(a2));
    ASSERT_OK(amp_array_destroy(a3));
    ASSERT_OK(amp_array_destroy(base));
    amp_array_view *all[] = {flat1, flat, last, same0, row3, row0, other, dst, src};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) ASSERT_OK(amp_array_view_destroy(all[i]));
}

/* Sections of one view are told apart exactly (hipamp.h), a view_as of a
 * 1-D view too, whose columns lie in the 1-D data's elements between
 * their first and last, in boxes that meet: columns 0 and 1 were refused
 * as overlapping. Columns that share elements still are; the copies read
 * the kernel's results where they are (on the device, copying). */
static void sections_of_a_reshaped_view(amp_accelerator *acc)
{
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    amp_program *p = test_build(acc, test_kernels_memory);
    static float h[16];
    for (int i = 0; i < 16; ++i) h[i] = (float)i;
    amp_array_view *v = test_view(h, 4, amp_extent_1d(16), AMP_READ_WRITE), *w = NULL;
    ASSERT_OK(amp_array_view_view_as(v, amp_extent_2d(4, 4), &w));
    amp_arg a[] = {amp_arg_view(v)};
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(16), test_kernel(p, "mem_scale1"), a, 1)); /* h = 2i + 1 */
    amp_array_view *c0 = NULL, *c1 = NULL, *c01 = NULL, *c12 = NULL, *c23 = NULL;
    ASSERT_OK(amp_array_view_section(w, amp_index_2d(0, 0), amp_extent_2d(4, 1), &c0));
    ASSERT_OK(amp_array_view_section(w, amp_index_2d(0, 1), amp_extent_2d(4, 1), &c1));
    ASSERT_OK(amp_array_view_section(w, amp_index_2d(0, 0), amp_extent_2d(4, 2), &c01));
    ASSERT_OK(amp_array_view_section(w, amp_index_2d(0, 1), amp_extent_2d(4, 2), &c12));
    ASSERT_OK(amp_array_view_section(w, amp_index_2d(0, 2), amp_extent_2d(4, 2), &c23));
    ASSERT_STATUS(amp_copy_view(c01, c12), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "amp_copy_view: source and destination overlap (in the same storage)"), "%s",
              amp_last_error());
    ASSERT_OK(amp_copy_view(c0, c1));     /* column 1 = column 0 */
    ASSERT_OK(amp_copy_view(c01, c23));   /* columns 2, 3 = columns 0, 0 */
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c)
            cr_assert_eq(h[4 * r + c], (float)(8 * r + 1), "h[%d][%d] = %g, want %d", r, c, (double)h[4 * r + c],
                         8 * r + 1);
    amp_array_view *all[] = {c23, c12, c01, c1, c0, w, v};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) ASSERT_OK(amp_array_view_destroy(all[i]));
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TEST(copy, sections_of_a_reshaped_view_are_told_apart_exactly)
{
    sections_of_a_reshaped_view(acc);
}

Test(copy, sections_of_a_reshaped_view_are_told_apart_exactly_cpu_copying, .init = test_cpu_copying)
{
    sections_of_a_reshaped_view(test_accel(TEST_ACCEL_CPU));
}

/* An AMP_READ_ONLY view (C++ AMP's array_view<const T>) is never a copy's
 * destination, as it is never set's: its memory may be read-only (a const
 * table), which a copy into it would fault on. */
ACCEL_TEST(copy, into_a_read_only_view_is_refused)
{
    (void)acc;
    static const float table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    float src[8], ro_mem[8];
    for (int i = 0; i < 8; ++i) {
        src[i] = -1.0f;
        ro_mem[i] = (float)i;
    }
    amp_array_view *vs = test_view(src, 4, amp_extent_1d(8), AMP_READ_WRITE);
    amp_array_view *vro = test_view(ro_mem, 4, amp_extent_1d(8), AMP_READ_ONLY);
    amp_array_view *vrw = test_view(ro_mem, 4, amp_extent_1d(8), AMP_READ_WRITE), *ro_of_rw = NULL, *part = NULL;
    ASSERT_OK(amp_array_view_read_only(vrw, &ro_of_rw));
    ASSERT_OK(amp_array_view_section(ro_of_rw, amp_index_1d(2), amp_extent_1d(4), &part));
    ASSERT_STATUS(amp_copy_view(vs, vro), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "AMP_READ_ONLY"), "%s", amp_last_error());
    amp_future *f = (amp_future *)&f;
    ASSERT_STATUS(amp_copy_view_async(vs, ro_of_rw, &f), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(f, "future not NULL after a refused copy");
    amp_array_view *src4 = NULL;
    ASSERT_OK(amp_array_view_section(vs, amp_index_1d(0), amp_extent_1d(4), &src4));
    ASSERT_STATUS(amp_copy_view(src4, part), AMP_ERROR_INVALID_ARGUMENT);
    for (int i = 0; i < 8; ++i)
        cr_assert_eq(ro_mem[i], (float)i, "ro_mem[%d] = %g, written through a read-only view", i, (double)ro_mem[i]);
    /* A view of a const table: the copy would have faulted. */
    amp_array_view *vt = test_view((void *)table, 4, amp_extent_1d(8), AMP_READ_ONLY);
    ASSERT_STATUS(amp_copy_view(vs, vt), AMP_ERROR_INVALID_ARGUMENT);
    /* A read-only view stays a source. */
    ASSERT_OK(amp_copy_view(vt, vs));
    ASSERT_OK(amp_array_view_synchronize(vs));
    for (int i = 0; i < 8; ++i) cr_assert_eq(src[i], table[i], "src[%d] = %g after the copy from the table", i, (double)src[i]);
    amp_array_view_destroy(src4);
    amp_array_view_destroy(part);
    amp_array_view_destroy(ro_of_rw);
    amp_array_view_destroy(vt);
    amp_array_view_destroy(vrw);
    amp_array_view_destroy(vro);
    amp_array_view_destroy(vs);
}

/* discard_data says the view's contents are not needed until written
 * again. A copy into a section of it, a set of one element and a host
 * write to another section (refreshed) write parts of them again: the next
 * kernel on the whole view must see those parts, not skip its copy-in (the
 * rest is undefined and not checked). */
ACCEL_TEST(copy, writes_after_discard_data_reach_the_next_kernel)
{
    enum { N = 64 };
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    amp_program *p = test_build(acc, test_kernels_memory);
    static float src[N], dst[N];
    fill_pattern(src, N, 3.0f);
    for (int i = 0; i < N; ++i) dst[i] = POISON_F32;
    amp_array_view *vs = test_view(src, 4, amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vd = test_view(dst, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *from = NULL, *into = NULL, *host_part = NULL;
    ASSERT_OK(amp_array_view_section(vs, amp_index_1d(10), amp_extent_1d(20), &from));
    ASSERT_OK(amp_array_view_section(vd, amp_index_1d(10), amp_extent_1d(20), &into));
    ASSERT_OK(amp_array_view_section(vd, amp_index_1d(40), amp_extent_1d(10), &host_part));
    ASSERT_OK(amp_array_view_discard_data(vd));
    ASSERT_OK(amp_copy_view(from, into));
    const float nine = 9.0f;
    ASSERT_OK(amp_array_view_set(vd, amp_index_1d(5), &nine));
    for (int i = 40; i < 50; ++i) dst[i] = (float)i;
    ASSERT_OK(amp_array_view_refresh(host_part));
    amp_arg a[] = {amp_arg_view(vd)};
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), test_kernel(p, "mem_scale1"), a, 1));
    ASSERT_OK(amp_array_view_synchronize(vd));
    cr_assert_eq(dst[5], 19.0f, "dst[5] = %g after a set, want 19", (double)dst[5]);
    for (int i = 10; i < 30; ++i)
        cr_assert_eq(dst[i], src[i] * 2.0f + 1.0f, "dst[%d] = %g after a copy, want %g", i, (double)dst[i],
                     (double)(src[i] * 2.0f + 1.0f));
    for (int i = 40; i < 50; ++i)
        cr_assert_eq(dst[i], (float)(2 * i + 1), "dst[%d] = %g after a host write, want %d", i, (double)dst[i],
                     2 * i + 1);
    ASSERT_OK(amp_array_view_destroy(from));
    ASSERT_OK(amp_array_view_destroy(into));
    ASSERT_OK(amp_array_view_destroy(host_part));
    ASSERT_OK(amp_array_view_destroy(vs));
    ASSERT_OK(amp_array_view_destroy(vd));
    ASSERT_OK(amp_program_destroy(p));
}

/* A staging array's memory (amp_array_data) is its data: the host writes it
 * there and reads what a copy into the array put there (C++ AMP's staging
 * pattern), even while a view of the array keeps a device copy (the CPU
 * accelerator with AMP_CPU_UNIFIED=0, set here, as a GPU). A copy read the
 * view's device copy, older than what the host wrote, whenever the
 * destination was on the same accelerator, and a copy into the array went
 * to that device copy, leaving the array's memory stale. A device copy
 * newer than the memory (a kernel's results not yet synchronized) is still
 * what a copy reads. */
ACCEL_TEST(copy, a_staging_arrays_memory_and_its_views_device_copy_stay_in_step, .init = test_cpu_copying)
{
    enum { N = 64 };
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    amp_program *p = test_build(acc, test_kernels_memory);
    amp_kernel *scale = test_kernel(p, "mem_scale1");
    float init[N], want[N], got[N];
    for (int i = 0; i < N; ++i) init[i] = (float)i;
    amp_array *s = NULL, *a = NULL;
    amp_array_view *sv = NULL;
    ASSERT_OK(amp_array_create_staging(q, sizeof(float), amp_extent_1d(N), init, &s));
    ASSERT_OK(amp_array_create(q, sizeof(float), amp_extent_1d(N), NULL, &a));
    ASSERT_OK(amp_array_view_of_array(s, &sv));
    amp_arg args[] = {amp_arg_view(sv)};
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), scale, args, 1));
    ASSERT_OK(amp_array_view_synchronize(sv));
    float *sd = amp_array_data(s);
    cr_assert(sd, "amp_array_data of a staging array");
    for (int i = 0; i < N; ++i)
        cr_assert_eq(sd[i], 2.0f * (float)i + 1.0f, "staging[%d] = %g after the kernel", i, (double)sd[i]);
    /* The host writes the staging memory; the copy out of the array takes that. */
    for (int i = 0; i < N; ++i) sd[i] = want[i] = 700.0f + (float)i;
    ASSERT_OK(amp_copy_array(s, a));
    ASSERT_OK(amp_array_copy_to_host(a, got));
    for (int i = 0; i < N; ++i)
        cr_assert_eq(got[i], want[i], "array[%d] = %g after a copy from the staging array, want %g", i,
                     (double)got[i], (double)want[i]);
    /* A copy into the array lands in its memory, at once. */
    for (int i = 0; i < N; ++i) want[i] = 500.0f + (float)i;
    ASSERT_OK(amp_array_copy_from_host(a, want));
    ASSERT_OK(amp_copy_array(a, s));
    for (int i = 0; i < N; ++i)
        cr_assert_eq(sd[i], want[i], "staging[%d] = %g after a copy into it, want %g", i, (double)sd[i],
                     (double)want[i]);
    /* The view's device copy of it went stale: the next kernel reads the
     * copied data; its results, not yet synchronized, are what a copy
     * reads. */
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), scale, args, 1));
    ASSERT_OK(amp_copy_array(s, a));
    ASSERT_OK(amp_array_copy_to_host(a, got));
    for (int i = 0; i < N; ++i)
        cr_assert_eq(got[i], 2.0f * want[i] + 1.0f, "array[%d] = %g after a copy of the kernel's results, want %g", i,
                     (double)got[i], (double)(2.0f * want[i] + 1.0f));
    ASSERT_OK(amp_array_view_synchronize(sv));
    for (int i = 0; i < N; ++i)
        cr_assert_eq(sd[i], 2.0f * want[i] + 1.0f, "staging[%d] = %g after synchronize, want %g", i, (double)sd[i],
                     (double)(2.0f * want[i] + 1.0f));
    ASSERT_OK(amp_array_view_destroy(sv));
    ASSERT_OK(amp_array_destroy(a));
    ASSERT_OK(amp_array_destroy(s));
    ASSERT_OK(amp_program_destroy(p));
}

/* A copy between two sections of one view whose device copy's lists are
 * nearly full: reading the source brings it home, which splits a dirty box
 * of the same storage until the dirty list is full. The write must still
 * count (before, the destination was chosen first, the device copy, and
 * its newer box then found no room in the list: the write was lost to
 * get and synchronize alike). */
ACCEL_TEST(copy, between_sections_of_one_view_whose_dirty_list_fills)
{
    enum { R = 64, C = 64 };
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    amp_program *p = test_build(acc, test_kernels_memory);
    amp_kernel *scale = test_kernel(p, "mem_scale2");
    static float x[R * C], seven[40 * C];
    for (int i = 0; i < R * C; ++i) x[i] = 1.0f;
    for (int i = 0; i < 40 * C; ++i) seven[i] = 7.0f;
    amp_array_view *v = test_view(x, sizeof x[0], amp_extent_2d(R, C), AMP_READ_WRITE);
    amp_array_view *sv = test_view(seven, sizeof seven[0], amp_extent_2d(40, C), AMP_READ_WRITE);
    amp_array_view *part = NULL, *top = NULL, *from = NULL, *to = NULL;
    amp_arg a = amp_arg_view(v);
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_2d(R, C), scale, &a, 1)); /* 3 everywhere, on the device */
    ASSERT_OK(amp_array_view_synchronize(v));
    /* The device copy current but for a 2 x 2 hole: valid in four pieces. */
    ASSERT_OK(amp_array_view_section(v, amp_index_2d(40, 40), amp_extent_2d(2, 2), &part));
    ASSERT_OK(amp_array_view_refresh(part));
    /* Rows 0-39 newer on the device copy, then 62 single elements. */
    ASSERT_OK(amp_array_view_section(v, amp_index_2d(0, 0), amp_extent_2d(40, C), &top));
    ASSERT_OK(amp_copy_view(sv, top));
    float nine = 9.0f;
    for (int k = 0; k < 62; ++k) ASSERT_OK(amp_array_view_set(v, amp_index_2d(44 + 2 * (k / 30), 2 * (k % 30)), &nine));
    /* Rows 39-40 (7, then 3) into rows 62-63. */
    ASSERT_OK(amp_array_view_section(v, amp_index_2d(39, 0), amp_extent_2d(2, 2), &from));
    ASSERT_OK(amp_array_view_section(v, amp_index_2d(62, 60), amp_extent_2d(2, 2), &to));
    ASSERT_OK(amp_copy_view(from, to));
    const float want[4] = {7.0f, 7.0f, 3.0f, 3.0f};
    for (int i = 0; i < 4; ++i) {
        float got = 0.0f;
        ASSERT_OK(amp_array_view_get(v, amp_index_2d(62 + i / 2, 60 + i % 2), &got));
        cr_assert_eq(got, want[i], "get (%d,%d) after the copy: %g, want %g", 62 + i / 2, 60 + i % 2, (double)got,
                     (double)want[i]);
    }
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < 4; ++i) {
        float got = x[(62 + i / 2) * C + 60 + i % 2];
        cr_assert_eq(got, want[i], "host (%d,%d) after synchronize: %g, want %g", 62 + i / 2, 60 + i % 2, (double)got,
                     (double)want[i]);
    }
    cr_assert_eq(x[44 * C + 2], 9.0f, "a set element: %g", (double)x[44 * C + 2]);
    cr_assert_eq(x[10 * C + 10], 7.0f, "a copied element: %g", (double)x[10 * C + 10]);
    amp_array_view *all[] = {to, from, top, part, sv, v};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) ASSERT_OK(amp_array_view_destroy(all[i]));
    ASSERT_OK(amp_program_destroy(p));
    ASSERT_OK(amp_accelerator_view_destroy(q));
}
