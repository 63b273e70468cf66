/* test_conformance.c — issue 21's C++ AMP conformance on the host side, tested from the specification's wording on
 * every accelerator (and again with AMP_CPU_UNIFIED=0): ranks above 4, views of other shapes (reinterpret_as,
 * view_as, read-only, another handle), one element read or written from the host, views of arrays on other
 * accelerators, staging arrays, empty extents, tiled extents as plain values, host arithmetic on index and extent,
 * zero-copy semantics, futures (continuations, markers, asynchronous synchronize), queuing modes and the default
 * accelerator. */
#include "support.h"

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern const char test_kernels_conformance[];

#define ASSERT_MSG_HAS(needle)                                                                 \
    cr_assert(strstr(amp_last_error(), (needle)) != NULL, "amp_last_error() should mention \"%s\": \"%s\"", \
              (needle), amp_last_error())

typedef struct conf {
    amp_accelerator *acc;
    amp_accelerator_info info;
    amp_accelerator_view *q;
    amp_program *p;
} conf;

static void conf_open(conf *c, amp_accelerator *acc)
{
    c->acc = acc;
    ASSERT_OK(amp_accelerator_get_info(acc, &c->info));
    c->q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &c->q));
    c->p = test_build(acc, test_kernels_conformance);
}

static void conf_close(conf *c)
{
    ASSERT_OK(amp_program_destroy(c->p));
    ASSERT_OK(amp_accelerator_view_destroy(c->q));
}

static void conf_run(conf *c, const char *kernel, amp_extent e, const amp_arg *args, size_t n)
{
    ASSERT_OK(amp_parallel_for_each(c->q, e, test_kernel(c->p, kernel), args, n));
}

static amp_stats conf_stats(amp_accelerator_view *q)
{
    amp_stats s;
    ASSERT_OK(amp_accelerator_view_get_stats(q, &s));
    return s;
}

static int32_t *conf_ints(size_t n, int32_t base, int32_t step)
{
    int32_t *x = test_xmalloc(n * sizeof *x + 1);
    for (size_t i = 0; i < n; ++i) x[i] = base + (int32_t)i * step;
    return x;
}

/* ------------------------------------------------------- ranks above 4 */

Test(rank, extents_and_indices_from_arrays)
{
    /* C++ AMP: extent(const int components[]), index(const int components[]). */
    const int dims[8] = {2, 3, 4, 5, 6, 7, 8, 9};
    for (int r = 1; r <= AMP_MAX_RANK; ++r) {
        amp_extent e = amp_extent_make(r, dims);
        amp_index i = amp_index_make(r, dims);
        cr_assert_eq(e.rank, r);
        cr_assert_eq(i.rank, r);
        for (int d = 0; d < r; ++d) cr_assert(e.v[d] == dims[d] && i.v[d] == dims[d], "rank %d dimension %d", r, d);
    }
    cr_assert(amp_extent_equal(amp_extent_make(3, (const int[]){4, 5, 6}), amp_extent_3d(4, 5, 6)));
    cr_assert(amp_index_equal(amp_index_make(2, (const int[]){-1, 7}), amp_index_2d(-1, 7)));
    amp_extent z = amp_extent_make(5, NULL);
    cr_assert(z.rank == 5 && z.v[0] == 0 && z.v[4] == 0, "NULL values give zeros");
    /* A rank outside 1..AMP_MAX_RANK is kept for the call that takes it to refuse. */
    amp_extent bad = amp_extent_make(AMP_MAX_RANK + 1, dims);
    cr_assert_eq(bad.rank, AMP_MAX_RANK + 1);
    ASSERT_STATUS(amp_extent_validate(bad), AMP_ERROR_INVALID_EXTENT);
    ASSERT_MSG_HAS("9");
    ASSERT_STATUS(amp_extent_validate(amp_extent_make(0, dims)), AMP_ERROR_INVALID_EXTENT);
}

Test(rank, rank_8_values)
{
    const int dims[8] = {2, 1, 3, 1, 2, 1, 2, 3};
    amp_extent e = amp_extent_make(8, dims);
    ASSERT_OK(amp_extent_validate(e));
    cr_assert_eq(amp_extent_size(e), 72);
    cr_assert(amp_extent_contains(e, amp_index_make(8, (const int[]){1, 0, 2, 0, 1, 0, 1, 2})));
    cr_assert(!amp_extent_contains(e, amp_index_make(8, (const int[]){1, 0, 2, 0, 1, 0, 1, 3})));
    amp_index a = amp_index_make(8, (const int[]){1, 2, 3, 4, 5, 6, 7, 8}), s;
    ASSERT_OK(amp_index_add(a, a, &s));
    cr_assert(s.rank == 8 && s.v[7] == 16 && s.v[0] == 2);
    amp_extent g;
    ASSERT_OK(amp_extent_add(e, a, &g));
    cr_assert(g.v[7] == 11 && g.v[4] == 7);
}

/* Each rank 5..8 launch writes every index's row-major number once: the
 * flattened launch must neither skip nor repeat an index. */
ACCEL_TEST(rank, launches_of_rank_5_to_8_cover_every_index_once)
{
    conf c;
    conf_open(&c, acc);
    static const int dims[4][8] = {{3, 2, 5, 1, 7}, {2, 3, 1, 4, 3, 5}, {2, 1, 3, 2, 2, 3, 5}, {2, 3, 1, 2, 3, 2, 1, 5}};
    static const char *const kernels[4] = {"conf_iota5", "conf_iota6", "conf_iota7", "conf_iota8"};
    for (int r = 5; r <= 8; ++r) {
        amp_extent e = amp_extent_make(r, dims[r - 5]);
        size_t n = (size_t)amp_extent_size(e);
        int32_t *x = conf_ints(n, POISON_I32, 0), *want = conf_ints(n, 0, 1);
        amp_array_view *v = test_view(x, 4, e, AMP_WRITE_ONLY);
        amp_arg a[] = {amp_arg_view(v)};
        conf_run(&c, kernels[r - 5], e, a, 1);
        ASSERT_OK(amp_array_view_destroy(v));
        char what[32];
        snprintf(what, sizeof what, "rank %d launch", r);
        test_check_i32(x, want, n, what);
        free(x);
        free(want);
    }
    conf_close(&c);
}

/* A rank-6 section used by a kernel: exactly its elements change, and on a
 * copying accelerator exactly its bytes move each way. */
ACCEL_TEST(rank, rank_6_section_moves_exactly_its_elements)
{
    conf c;
    conf_open(&c, acc);
    amp_extent e = amp_extent_make(6, (const int[]){3, 2, 4, 3, 2, 5});
    size_t n = (size_t)amp_extent_size(e);
    int32_t *x = conf_ints(n, 0, 1), *want = conf_ints(n, 0, 1);
    amp_array_view *v = test_view(x, 4, e, AMP_READ_WRITE), *s = NULL;
    const int org[6] = {1, 1, 1, 0, 1, 2}, sub[6] = {2, 1, 2, 3, 1, 3};
    ASSERT_OK(amp_array_view_section(v, amp_index_make(6, org), amp_extent_make(6, sub), &s));
    ASSERT_OK(amp_accelerator_view_reset_stats(c.q));
    amp_arg a[] = {amp_arg_view(s)};
    conf_run(&c, "conf_inc6", amp_extent_make(6, sub), a, 1);
    ASSERT_OK(amp_array_view_synchronize(s));
    int nsub = 2 * 1 * 2 * 3 * 1 * 3;
    amp_stats st = conf_stats(c.q);
    uint64_t want_bytes = c.info.is_unified_memory ? 0 : (uint64_t)nsub * 4;
    cr_assert(st.bytes_to_device == want_bytes && st.bytes_to_host == want_bytes && st.launches == 1,
              "%s: %llu bytes in, %llu back, want %llu each", c.info.device_path,
              (unsigned long long)st.bytes_to_device, (unsigned long long)st.bytes_to_host,
              (unsigned long long)want_bytes);
    /* The section's elements, by their coordinates. */
    int i[6];
    for (i[0] = 0; i[0] < 2; ++i[0])
        for (i[1] = 0; i[1] < 1; ++i[1])
            for (i[2] = 0; i[2] < 2; ++i[2])
                for (i[3] = 0; i[3] < 3; ++i[3])
                    for (i[4] = 0; i[4] < 1; ++i[4])
                        for (i[5] = 0; i[5] < 3; ++i[5]) {
                            int k = 0;
                            for (int d = 0; d < 6; ++d) k = k * e.v[d] + org[d] + i[d];
                            want[k] += 1;
                        }
    ASSERT_OK(amp_array_view_destroy(s));
    ASSERT_OK(amp_array_view_destroy(v));
    test_check_i32(x, want, n, "rank-6 section");
    free(x);
    free(want);
    conf_close(&c);
}

/* amp_copy_view between rank-7 sections of a host view and of an array. */
ACCEL_TEST(rank, copies_of_rank_7_sections)
{
    conf c;
    conf_open(&c, acc);
    amp_extent e = amp_extent_make(7, (const int[]){2, 2, 3, 2, 2, 3, 4});
    size_t n = (size_t)amp_extent_size(e);
    int32_t *x = conf_ints(n, 0, 1), *got = conf_ints(n, POISON_I32, 0), *want = conf_ints(n, -1, 0);
    amp_array *arr = NULL;
    ASSERT_OK(amp_array_create(c.q, 4, e, want, &arr));
    amp_array_view *v = test_view(x, 4, e, AMP_READ_WRITE), *va = NULL, *s1 = NULL, *s2 = NULL;
    ASSERT_OK(amp_array_view_of_array(arr, &va));
    const int o1[7] = {1, 0, 1, 1, 0, 1, 1}, o2[7] = {0, 0, 0, 1, 0, 1, 1}, sub[7] = {1, 2, 2, 1, 2, 2, 3};
    ASSERT_OK(amp_array_view_section(v, amp_index_make(7, o1), amp_extent_make(7, sub), &s1));
    ASSERT_OK(amp_array_view_section(va, amp_index_make(7, o2), amp_extent_make(7, sub), &s2));
    ASSERT_OK(amp_copy_view(s1, s2));
    ASSERT_OK(amp_array_view_destroy(s1));
    ASSERT_OK(amp_array_view_destroy(s2));
    ASSERT_OK(amp_array_view_destroy(va));
    ASSERT_OK(amp_array_copy_to_host(arr, got));
    /* want: -1 everywhere but the destination section, which holds the source's numbers. */
    int i[7];
    for (int64_t k = 0; k < (int64_t)amp_extent_size(amp_extent_make(7, sub)); ++k) {
        int64_t r = k;
        for (int d = 6; d >= 0; --d) {
            i[d] = (int)(r % sub[d]);
            r /= sub[d];
        }
        int ks = 0, kd = 0;
        for (int d = 0; d < 7; ++d) {
            ks = ks * e.v[d] + o1[d] + i[d];
            kd = kd * e.v[d] + o2[d] + i[d];
        }
        want[kd] = x[ks];
    }
    test_check_i32(got, want, n, "rank-7 section copy");
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_array_destroy(arr));
    free(x);
    free(got);
    free(want);
    conf_close(&c);
}

/* -------------------------------------------------------- view shapes */

/* C++ AMP: reinterpret_as gives a view of the same data with another element
 * type; writes through it are writes to the original. */
ACCEL_TEST(shape, reinterpret_as_shares_the_data_source)
{
    conf c;
    conf_open(&c, acc);
    enum { N = 64 };
    float f[N], want[N];
    for (int i = 0; i < N; ++i) want[i] = -(f[i] = 0.5f + (float)i);
    amp_array_view *v = test_view(f, sizeof(float), amp_extent_1d(N), AMP_READ_WRITE), *u = NULL;
    ASSERT_OK(amp_array_view_reinterpret_as(v, sizeof(unsigned), &u));
    amp_extent ue;
    ASSERT_OK(amp_array_view_get_extent(u, &ue));
    cr_assert(ue.rank == 1 && ue.v[0] == N, "extent %d", ue.v[0]);
    amp_arg a[] = {amp_arg_view(u)};
    conf_run(&c, "conf_flip_sign", ue, a, 1);
    ASSERT_OK(amp_array_view_synchronize(v)); /* the original's synchronize brings the writes home */
    test_check_f32(f, want, N, "floats with their sign flipped through an unsigned view");
    ASSERT_OK(amp_array_view_destroy(u));

    /* Wider elements: 64 ints as 16 four-int records. */
    int32_t x[N], xw[N];
    for (int i = 0; i < N; ++i) x[i] = xw[i] = i;
    for (int i = 0; i < N; i += 4) {
        xw[i + 1] = i + 2;
        xw[i + 2] = i + 1;
    }
    amp_array_view *xv = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE), *qv = NULL;
    ASSERT_OK(amp_array_view_reinterpret_as(xv, 16, &qv));
    ASSERT_OK(amp_array_view_get_extent(qv, &ue));
    cr_assert_eq(ue.v[0], N / 4);
    size_t es = 0;
    ASSERT_OK(amp_array_view_get_element_size(qv, &es));
    cr_assert_eq(es, 16);
    amp_arg b[] = {amp_arg_view(qv)};
    conf_run(&c, "conf_swap_mid", ue, b, 1);
    ASSERT_OK(amp_array_view_destroy(qv));
    ASSERT_OK(amp_array_view_destroy(xv));
    test_check_i32(x, xw, N, "ints swapped through 16-byte records");

    /* The bytes must divide; the elements must be one run. */
    ASSERT_STATUS(amp_array_view_reinterpret_as(v, 0, &u), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_array_view_reinterpret_as(v, 12, &u), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_MSG_HAS("256");
    cr_assert_null(u);
    amp_array_view *m = test_view(f, sizeof(float), amp_extent_2d(8, 8), AMP_READ_WRITE), *col = NULL;
    ASSERT_OK(amp_array_view_section(m, amp_index_2d(0, 2), amp_extent_2d(8, 2), &col));
    ASSERT_STATUS(amp_array_view_reinterpret_as(col, 4, &u), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_MSG_HAS("contiguous");
    ASSERT_STATUS(amp_array_view_reinterpret_as(NULL, 4, &u), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_array_view_destroy(col));
    ASSERT_OK(amp_array_view_destroy(m));
    ASSERT_OK(amp_array_view_destroy(v));
    conf_close(&c);
}

/* C++ AMP: view_as gives a view of the same data with another shape. */
ACCEL_TEST(shape, view_as_reshapes_the_same_storage)
{
    conf c;
    conf_open(&c, acc);
    enum { N = 24 };
    int32_t *x = conf_ints(N, POISON_I32, 0), *want = conf_ints(N, 0, 1);
    amp_array_view *v = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE), *w = NULL, *w8 = NULL;
    ASSERT_OK(amp_array_view_view_as(v, amp_extent_2d(4, 6), &w));
    int64_t st[2];
    ASSERT_OK(amp_array_view_get_strides(w, st));
    cr_assert(st[0] == 6 && st[1] == 1, "strides %lld %lld", (long long)st[0], (long long)st[1]);
    amp_arg a[] = {amp_arg_view(w)};
    conf_run(&c, "conf_iota2", amp_extent_2d(4, 6), a, 1);
    ASSERT_OK(amp_array_view_synchronize(v));
    test_check_i32(x, want, N, "a 1-D view written as 4x6");
    /* Any rank, fewer elements than the view: its first ones. */
    const int d8[8] = {1, 2, 1, 1, 3, 1, 1, 3};
    ASSERT_OK(amp_array_view_view_as(w, amp_extent_make(8, d8), &w8));
    amp_arg fill[] = {amp_arg_view(v), amp_arg_int32(-1)};
    conf_run(&c, "conf_fill1", amp_extent_1d(N), fill, 2);
    amp_arg b[] = {amp_arg_view(w8)};
    conf_run(&c, "conf_iota8", amp_extent_make(8, d8), b, 1);
    ASSERT_OK(amp_array_view_destroy(w8));
    for (int i = 0; i < N; ++i) want[i] = i < 18 ? i : -1;
    ASSERT_OK(amp_array_view_synchronize(v));
    test_check_i32(x, want, N, "the first 18 elements as rank 8");
    ASSERT_STATUS(amp_array_view_view_as(v, amp_extent_2d(5, 5), &w8), AMP_ERROR_INVALID_EXTENT);
    ASSERT_MSG_HAS("25");
    cr_assert_null(w8);
    ASSERT_STATUS(amp_array_view_view_as(v, amp_extent_make(AMP_MAX_RANK + 1, NULL), &w8), AMP_ERROR_INVALID_EXTENT);
    ASSERT_OK(amp_array_view_destroy(w));
    ASSERT_OK(amp_array_view_destroy(v));
    free(x);
    free(want);
    conf_close(&c);
}

/* A section of a reshaped view whose elements are not a box of the
 * original: the elements between them keep their values, whatever the
 * view's access and discard_data say. */
ACCEL_TEST(shape, a_section_of_a_reshaped_view_keeps_its_neighbours)
{
    conf c;
    conf_open(&c, acc);
    enum { N = 24 };
    int32_t *x = conf_ints(N, 0, 10), *want = conf_ints(N, 0, 10);
    /* AMP_WRITE_ONLY: a box wider than the section must still be copied in. */
    amp_array_view *v = test_view(x, 4, amp_extent_1d(N), AMP_WRITE_ONLY), *w = NULL, *s = NULL;
    ASSERT_OK(amp_array_view_view_as(v, amp_extent_2d(4, 6), &w));
    ASSERT_OK(amp_array_view_section(w, amp_index_2d(1, 2), amp_extent_2d(2, 2), &s));
    amp_arg a[] = {amp_arg_view(s), amp_arg_int32(-1)};
    conf_run(&c, "conf_fill2", amp_extent_2d(2, 2), a, 2);
    ASSERT_OK(amp_array_view_synchronize(v));
    want[8] = want[9] = want[14] = want[15] = -1;
    test_check_i32(x, want, N, "the section's neighbours");
    /* discard_data of such a section drops nothing another view wrote. */
    amp_arg b[] = {amp_arg_view(v), amp_arg_int32(7)};
    conf_run(&c, "conf_fill1", amp_extent_1d(N), b, 2);
    ASSERT_OK(amp_array_view_discard_data(s));
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < N; ++i) want[i] = 7;
    test_check_i32(x, want, N, "writes of the whole view after discard_data of the section");
    ASSERT_OK(amp_array_view_destroy(s));
    ASSERT_OK(amp_array_view_destroy(w));
    ASSERT_OK(amp_array_view_destroy(v));
    free(x);
    free(want);
    conf_close(&c);
}

/* C++ AMP: array_view<const T, N> from an array_view<T, N>. */
ACCEL_TEST(shape, read_only_view_of_a_view)
{
    conf c;
    conf_open(&c, acc);
    enum { N = 50 };
    int32_t *x = conf_ints(N, 3, 1), *y = conf_ints(N, POISON_I32, 0), *want = conf_ints(N, 1003, 1);
    amp_array_view *v = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE), *ro = NULL;
    amp_array_view *out = test_view(y, 4, amp_extent_1d(N), AMP_WRITE_ONLY);
    ASSERT_OK(amp_array_view_read_only(v, &ro));
    amp_arg a[] = {amp_arg_view(ro), amp_arg_view(out)};
    conf_run(&c, "conf_plus1000", amp_extent_1d(N), a, 2);
    ASSERT_OK(amp_array_view_synchronize(out));
    test_check_i32(y, want, N, "read through the read-only view");
    amp_arg b[] = {amp_arg_view(ro)};
    ASSERT_STATUS(amp_parallel_for_each(c.q, amp_extent_1d(N), test_kernel(c.p, "conf_inc1"), b, 1),
                  AMP_ERROR_ARGUMENT_MISMATCH);
    void *dp = NULL;
    ASSERT_STATUS(amp_array_view_native_handle(ro, c.q, AMP_READ_WRITE, &dp), AMP_ERROR_INVALID_ARGUMENT);
    int32_t one = 1;
    ASSERT_STATUS(amp_array_view_set(ro, amp_index_1d(0), &one), AMP_ERROR_INVALID_ARGUMENT);
    /* Each view says its access; a section keeps its view's. */
    amp_access acc_of = AMP_WRITE_ONLY;
    ASSERT_OK(amp_array_view_get_access(ro, &acc_of));
    cr_assert_eq(acc_of, AMP_READ_ONLY);
    amp_array_view *sec = NULL;
    ASSERT_OK(amp_array_view_section(ro, amp_index_1d(5), amp_extent_1d(10), &sec));
    ASSERT_OK(amp_array_view_get_access(sec, &acc_of));
    cr_assert_eq(acc_of, AMP_READ_ONLY);
    ASSERT_OK(amp_array_view_destroy(sec));
    ASSERT_OK(amp_array_view_get_access(v, &acc_of));
    cr_assert_eq(acc_of, AMP_READ_WRITE);
    ASSERT_OK(amp_array_view_get_access(out, &acc_of));
    cr_assert_eq(acc_of, AMP_WRITE_ONLY);
    ASSERT_STATUS(amp_array_view_get_access(v, NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_array_view_destroy(ro));
    acc_of = AMP_WRITE_ONLY;
    ASSERT_STATUS(amp_array_view_get_access(ro, &acc_of), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_eq(acc_of, AMP_READ_WRITE, "a failed call leaves AMP_READ_WRITE");
    ASSERT_STATUS(amp_array_view_read_only(NULL, &ro), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(ro);
    ASSERT_OK(amp_array_view_destroy(out));
    ASSERT_OK(amp_array_view_destroy(v));
    free(x);
    free(y);
    free(want);
    conf_close(&c);
}

/* C++ AMP's array_view copy: another handle, the same data source. */
ACCEL_TEST(shape, duplicate_is_another_handle_to_the_same_view)
{
    conf c;
    conf_open(&c, acc);
    enum { N = 40 };
    int32_t *x = conf_ints(N, 0, 1), *want = conf_ints(N, 2, 1);
    amp_array_view *v = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE), *d = NULL;
    ASSERT_OK(amp_array_view_duplicate(v, &d));
    cr_assert_neq(d, v);
    amp_arg a[] = {amp_arg_view(d)};
    conf_run(&c, "conf_inc1", amp_extent_1d(N), a, 1);
    int32_t got = 0;
    ASSERT_OK(amp_array_view_get(v, amp_index_1d(5), &got)); /* written through one handle, read through the other */
    cr_assert_eq(got, 6);
    ASSERT_OK(amp_array_view_destroy(v)); /* either may go first */
    conf_run(&c, "conf_inc1", amp_extent_1d(N), a, 1);
    ASSERT_OK(amp_array_view_destroy(d));
    test_check_i32(x, want, N, "two launches through the duplicate");
    free(x);
    free(want);
    conf_close(&c);
}

/* ---------------------------------------------------- element access */

ACCEL_TEST(element, get_and_set_keep_coherence)
{
    conf c;
    conf_open(&c, acc);
    enum { N = 64 };
    int32_t *x = conf_ints(N, 0, 1), *y = conf_ints(N, POISON_I32, 0);
    amp_array_view *v = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *out = test_view(y, 4, amp_extent_1d(N), AMP_WRITE_ONLY);
    amp_arg inc[] = {amp_arg_view(v)};
    conf_run(&c, "conf_inc1", amp_extent_1d(N), inc, 1);
    /* The kernel's value, with no synchronize; on a copying accelerator the
     * element alone comes back. */
    amp_stats s0 = conf_stats(c.q);
    int32_t got = 0;
    ASSERT_OK(amp_array_view_get(v, amp_index_1d(5), &got));
    cr_assert_eq(got, 6);
    amp_stats s1 = conf_stats(c.q);
    uint64_t moved = s1.bytes_to_host - s0.bytes_to_host;
    cr_assert_eq(moved, c.info.is_unified_memory ? 0 : 4, "%s: get moved %llu bytes", c.info.device_path,
                 (unsigned long long)moved);
    /* A value set from the host is what the next kernel reads. */
    int32_t val = -5;
    ASSERT_OK(amp_array_view_set(v, amp_index_1d(7), &val));
    amp_arg cp[] = {amp_arg_view(v), amp_arg_view(out)};
    conf_run(&c, "conf_plus1000", amp_extent_1d(N), cp, 2);
    ASSERT_OK(amp_array_view_get(out, amp_index_1d(7), &got));
    cr_assert_eq(got, 995);
    ASSERT_OK(amp_array_view_get(v, amp_index_1d(7), &got));
    cr_assert_eq(got, -5);
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < N; ++i) cr_assert_eq(x[i], i == 7 ? -5 : i + 1, "element %d: %d", i, x[i]);

    /* The same on a view of an array, and on a rank-2 section. */
    amp_array *arr = NULL;
    ASSERT_OK(amp_array_create(c.q, 4, amp_extent_2d(8, 8), x, &arr));
    amp_array_view *va = NULL, *sec = NULL;
    ASSERT_OK(amp_array_view_of_array(arr, &va));
    ASSERT_OK(amp_array_view_section(va, amp_index_2d(2, 3), amp_extent_2d(4, 4), &sec));
    ASSERT_OK(amp_array_view_get(sec, amp_index_2d(1, 2), &got));
    cr_assert_eq(got, x[3 * 8 + 5]);
    val = 4242;
    ASSERT_OK(amp_array_view_set(sec, amp_index_2d(3, 3), &val));
    ASSERT_OK(amp_array_copy_to_host(arr, y));
    cr_assert_eq(y[5 * 8 + 6], 4242);
    cr_assert_eq(y[5 * 8 + 5], x[5 * 8 + 5]);

    /* Refusals; a failed get zeroes its out-parameter (it was left as it
     * was). */
    got = 0x5555;
    ASSERT_STATUS(amp_array_view_get(sec, amp_index_2d(4, 0), &got), AMP_ERROR_OUT_OF_BOUNDS);
    ASSERT_MSG_HAS("4,0");
    cr_assert_eq(got, 0, "a get out of bounds left %d", got);
    got = 0x5555;
    ASSERT_STATUS(amp_array_view_get(sec, amp_index_1d(0), &got), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_eq(got, 0, "a get of another rank's index left %d", got);
    ASSERT_STATUS(amp_array_view_get(sec, amp_index_2d(-1, 0), &got), AMP_ERROR_OUT_OF_BOUNDS);
    ASSERT_STATUS(amp_array_view_get(sec, amp_index_2d(0, 0), NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_array_view_set(NULL, amp_index_2d(0, 0), &val), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_array_view_destroy(sec));
    ASSERT_OK(amp_array_view_destroy(va));
    ASSERT_OK(amp_array_destroy(arr));
    ASSERT_OK(amp_array_view_destroy(out));
    ASSERT_OK(amp_array_view_destroy(v));
    free(x);
    free(y);
    conf_close(&c);
}

/* ------------------------------ views of arrays across accelerators
 * test_internal.c runs the same body on stand-in accelerators, so that
 * every path also runs where there is no GPU. */

#define CROSS_ASSERT_OK ASSERT_OK
#include "cross_accel.h"

Test(cross, view_of_an_array_between_the_cpu_and_a_gpu)
{
    amp_accelerator *cpu = test_accel(TEST_ACCEL_CPU), *gpu = test_accel(TEST_ACCEL_GPU);
    cross_view_of_array(cpu, gpu);
    cross_view_of_array(gpu, cpu);
    cross_graph_of_a_view_after_its_array_went_home(cpu, gpu);
    cross_graph_of_a_view_after_its_array_went_home(gpu, cpu);
    cross_discard_ends_after_a_write_at_home(cpu, gpu);
    cross_discard_ends_after_a_write_at_home(gpu, cpu);
    cross_discard_ends_after_a_write_elsewhere(gpu, cpu);
    cross_array_launch_while_a_graph_elsewhere_holds_its_view(cpu, gpu);
    cross_array_launch_while_a_graph_elsewhere_holds_its_view(gpu, cpu);
}

Test(cross, view_of_an_array_between_two_gpus)
{
    amp_accelerator *list[16], *gpu[2] = {NULL, NULL};
    size_t n = 0, found = 0;
    ASSERT_OK(amp_accelerator_list(list, 16, &n));
    for (size_t i = 0; i < n && i < 16; ++i) {
        amp_accelerator_info in;
        ASSERT_OK(amp_accelerator_get_info(list[i], &in));
        if (!in.is_emulated && in.is_available && found < 2) gpu[found++] = list[i];
    }
    if (found < 2) cr_skip_test("needs two GPUs (%zu found)", found);
    cross_view_of_array(gpu[0], gpu[1]);
    cross_view_of_array(gpu[1], gpu[0]);
    cross_discard_ends_after_a_write_elsewhere(gpu[0], gpu[1]);
}

/* ------------------------------------------------------- empty extents */

/* C++ AMP: an extent with a zero dimension is a valid domain of size 0. */
Test(empty, extent_values)
{
    cr_assert_eq(amp_extent_size(amp_extent_1d(0)), 0);
    cr_assert_eq(amp_extent_size(amp_extent_3d(4, 0, 7)), 0);
    cr_assert_eq(amp_extent_size(amp_extent_make(8, (const int[]){0, INT_MAX, INT_MAX, INT_MAX, INT_MAX, INT_MAX, 1, 1})), 0);
    ASSERT_OK(amp_extent_validate(amp_extent_2d(0, 0)));
    ASSERT_OK(amp_extent_validate(amp_extent_2d(31, 0)));
    cr_assert_not(amp_extent_contains(amp_extent_2d(3, 0), amp_index_2d(0, 0)));
    cr_assert_not(amp_extent_contains(amp_extent_1d(0), amp_index_1d(0)));
    /* Negative dimensions stay invalid. */
    cr_assert_eq(amp_extent_size(amp_extent_2d(0, -1)), -1);
    ASSERT_STATUS(amp_extent_validate(amp_extent_2d(0, -1)), AMP_ERROR_INVALID_EXTENT);
    ASSERT_MSG_HAS("-1");
}

ACCEL_TEST(empty, a_launch_over_an_empty_extent_runs_nothing)
{
    conf c;
    conf_open(&c, acc);
    int32_t flag[1] = {0};
    amp_array_view *f = test_view(flag, 4, amp_extent_1d(1), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(f)};
    ASSERT_OK(amp_accelerator_view_reset_stats(c.q));
    conf_run(&c, "conf_touch1", amp_extent_1d(0), a, 1);
    conf_run(&c, "conf_touch2", amp_extent_2d(3, 0), a, 1);
    conf_run(&c, "conf_touch2", amp_extent_2d(0, 3), a, 1);
    amp_tiled_extent t;
    ASSERT_OK(amp_extent_tile(amp_extent_2d(0, 8), (const int[]){4, 4}, &t));
    ASSERT_OK(amp_parallel_for_each_tiled(c.q, t, test_kernel(c.p, "conf_touch_tiled"), a, 1));
    amp_future *fu = NULL;
    ASSERT_OK(amp_parallel_for_each_async(c.q, amp_extent_1d(0), test_kernel(c.p, "conf_touch1"), a, 1, &fu));
    bool ready = false;
    ASSERT_OK(amp_future_is_ready(fu, &ready));
    cr_assert(ready, "the future of an empty launch is complete at once");
    ASSERT_OK(amp_future_wait(fu));
    ASSERT_OK(amp_future_destroy(fu));
    ASSERT_OK(amp_array_view_synchronize(f));
    cr_assert_eq(flag[0], 0, "a work-item of an empty launch ran");
    amp_stats s = conf_stats(c.q);
    cr_assert(s.launches == 0 && s.bytes_to_device == 0 && s.bytes_to_host == 0, "%llu launches, %llu+%llu bytes",
              (unsigned long long)s.launches, (unsigned long long)s.bytes_to_device,
              (unsigned long long)s.bytes_to_host);
    /* Its kernel and arguments are checked all the same. */
    ASSERT_STATUS(amp_parallel_for_each(c.q, amp_extent_1d(0), test_kernel(c.p, "conf_touch1"), a, 0),
                  AMP_ERROR_ARGUMENT_MISMATCH);
    ASSERT_STATUS(amp_parallel_for_each(c.q, amp_extent_2d(0, 1), test_kernel(c.p, "conf_touch1"), a, 1),
                  AMP_ERROR_INVALID_EXTENT);
    /* A launch over one index still runs. */
    conf_run(&c, "conf_touch1", amp_extent_1d(1), a, 1);
    ASSERT_OK(amp_array_view_destroy(f));
    cr_assert_eq(flag[0], 1);
    conf_close(&c);
}

ACCEL_TEST(empty, views_arrays_and_copies_of_empty_extents)
{
    conf c;
    conf_open(&c, acc);
    amp_array_view *e = NULL, *sec = NULL, *p = NULL;
    ASSERT_OK(amp_array_view_create(NULL, 4, amp_extent_2d(0, 5), AMP_READ_WRITE, &e));
    cr_assert_null(amp_array_view_data(e));
    void *dp = (void *)1;
    ASSERT_OK(amp_array_view_native_handle(e, c.q, AMP_READ_WRITE, &dp));
    cr_assert_null(dp);
    int32_t got = 0;
    ASSERT_STATUS(amp_array_view_get(e, amp_index_2d(0, 0), &got), AMP_ERROR_OUT_OF_BOUNDS);
    ASSERT_STATUS(amp_array_view_project(e, 0, &p), AMP_ERROR_OUT_OF_BOUNDS);
    ASSERT_OK(amp_array_view_section(e, amp_index_2d(0, 2), amp_extent_2d(0, 3), &sec));
    ASSERT_OK(amp_array_view_synchronize(e));
    ASSERT_OK(amp_array_view_refresh(e));
    ASSERT_OK(amp_array_view_discard_data(e));
    ASSERT_OK(amp_array_view_destroy(sec));

    /* An empty section of a real view, at its edge, passed to a launch: the
     * kernel sees a view with no elements. */
    int32_t x[24] = {0}, out[3] = {-1, -1, -1};
    amp_array_view *v = test_view(x, 4, amp_extent_2d(4, 6), AMP_READ_WRITE), *o = test_view(out, 4, amp_extent_1d(3), AMP_WRITE_ONLY);
    ASSERT_OK(amp_array_view_section(v, amp_index_2d(4, 0), amp_extent_2d(0, 6), &sec));
    amp_arg a[] = {amp_arg_view(o), amp_arg_view(sec)};
    conf_run(&c, "conf_extent_of", amp_extent_1d(3), a, 2);
    ASSERT_OK(amp_array_view_synchronize(o));
    for (int i = 0; i < 3; ++i) cr_assert_eq(out[i], 6, "the empty section's extent seen by the kernel: %d", out[i]);
    ASSERT_OK(amp_array_view_destroy(sec));

    /* Arrays: no memory, NULL buffers allowed, copies move nothing. */
    amp_array *a0 = NULL, *a1 = NULL, *a2 = NULL;
    ASSERT_OK(amp_array_create(c.q, 4, amp_extent_2d(3, 0), NULL, &a0));
    ASSERT_OK(amp_array_create(c.q, 4, amp_extent_2d(3, 0), NULL, &a1));
    ASSERT_OK(amp_array_create(c.q, 4, amp_extent_2d(0, 3), NULL, &a2));
    ASSERT_OK(amp_array_copy_to_host(a0, NULL));
    ASSERT_OK(amp_array_copy_from_host(a0, NULL));
    ASSERT_OK(amp_accelerator_view_reset_stats(c.q));
    ASSERT_OK(amp_copy_array(a0, a1));
    amp_future *fu = NULL;
    ASSERT_OK(amp_copy_array_async(a0, a1, &fu));
    ASSERT_OK(amp_future_wait(fu));
    ASSERT_OK(amp_future_destroy(fu));
    ASSERT_STATUS(amp_copy_array(a0, a2), AMP_ERROR_INVALID_EXTENT);
    amp_stats s = conf_stats(c.q);
    cr_assert(s.bytes_device_to_device == 0 && s.copies_device_to_device == 0 && s.bytes_to_host == 0);
    amp_array_view *va = NULL;
    ASSERT_OK(amp_array_view_of_array(a0, &va));
    amp_array_view *e35 = NULL;
    ASSERT_OK(amp_array_view_create(NULL, 4, amp_extent_2d(3, 0), AMP_READ_WRITE, &e35));
    ASSERT_OK(amp_copy_view(va, e35));
    amp_arg b[] = {amp_arg_view(o), amp_arg_view(va)};
    conf_run(&c, "conf_extent_of", amp_extent_1d(3), b, 2);
    ASSERT_OK(amp_array_view_synchronize(o));
    cr_assert_eq(out[0], 3000, "an empty array's view seen by the kernel: %d", out[0]);
    amp_array *n0 = NULL;
    ASSERT_OK(amp_array_create_from_native(c.q, NULL, 4, amp_extent_1d(0), &n0));
    ASSERT_OK(amp_array_destroy(n0));
    ASSERT_STATUS(amp_array_create_from_native(c.q, NULL, 4, amp_extent_1d(1), &n0), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_array_view_create(NULL, 4, amp_extent_1d(1), AMP_READ_WRITE, &p), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_array_view_destroy(e35));
    ASSERT_OK(amp_array_view_destroy(va));
    ASSERT_OK(amp_array_destroy(a0));
    ASSERT_OK(amp_array_destroy(a1));
    ASSERT_OK(amp_array_destroy(a2));
    ASSERT_OK(amp_array_view_destroy(o));
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_array_view_destroy(e));
    conf_close(&c);
}

/* ------------------------------------------- tiled extents are values */

/* C++ AMP: tiled_extent<1000, 1000> is an ordinary value; parallel_for_each
 * over it is what fails (the hardware runs at most so many threads a tile). */
ACCEL_TEST(tiled_value, a_1000x1000_tile_is_a_value_only_its_launch_is_refused)
{
    conf c;
    conf_open(&c, acc);
    amp_tiled_extent t;
    ASSERT_OK(amp_extent_tile(amp_extent_2d(2000, 2000), (const int[]){1000, 1000}, &t));
    cr_assert(amp_tiled_extent_is_divisible(t));
    int32_t flag[1] = {0};
    amp_array_view *f = test_view(flag, 4, amp_extent_1d(1), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(f)};
    amp_kernel *k = test_kernel(c.p, "conf_touch_tiled");
    ASSERT_STATUS(amp_parallel_for_each_tiled(c.q, t, k, a, 1), AMP_ERROR_INVALID_COMPUTE_DOMAIN);
    char limit[32];
    snprintf(limit, sizeof limit, "%d", c.info.max_tile_threads);
    ASSERT_MSG_HAS("1000000");
    ASSERT_MSG_HAS(limit);
    amp_future *fu = NULL;
    ASSERT_STATUS(amp_parallel_for_each_tiled_async(c.q, t, k, a, 1, &fu), AMP_ERROR_INVALID_COMPUTE_DOMAIN);
    cr_assert_null(fu);
    /* Within the limit but not the kernel's tile: the mismatch is named. */
    ASSERT_OK(amp_extent_tile(amp_extent_2d(16, 16), (const int[]){8, 8}, &t));
    ASSERT_STATUS(amp_parallel_for_each_tiled(c.q, t, k, a, 1), AMP_ERROR_INVALID_COMPUTE_DOMAIN);
    ASSERT_MSG_HAS("written for tile 4");
    ASSERT_OK(amp_array_view_destroy(f));
    cr_assert_eq(flag[0], 0);
    conf_close(&c);
}

/* ---------------------------------------- host arithmetic on index and extent */

static void expect_vec(const int *got, int rank, const int *want, const char *what)
{
    for (int d = 0; d < rank; ++d) cr_assert_eq(got[d], want[d], "%s: dimension %d is %d, want %d", what, d, got[d], want[d]);
}

/* C++ AMP: index and extent have +, -, *, /, % with an int on either side,
 * ++ and --, and extent has + and - with an extent. */
Test(arith, scalars_on_either_side)
{
    amp_index i = amp_index_3d(7, -9, 12), r;
    amp_extent e = amp_extent_3d(8, 6, 5), x;
    ASSERT_OK(amp_index_scalar(i, AMP_OP_ADD, 3, &r));
    expect_vec(r.v, 3, (const int[]){10, -6, 15}, "index + 3");
    ASSERT_OK(amp_index_scalar(i, AMP_OP_SUB, 3, &r));
    expect_vec(r.v, 3, (const int[]){4, -12, 9}, "index - 3");
    ASSERT_OK(amp_scalar_index(3, AMP_OP_SUB, i, &r));
    expect_vec(r.v, 3, (const int[]){-4, 12, -9}, "3 - index");
    ASSERT_OK(amp_index_scalar(i, AMP_OP_MUL, -2, &r));
    expect_vec(r.v, 3, (const int[]){-14, 18, -24}, "index * -2");
    ASSERT_OK(amp_index_scalar(i, AMP_OP_DIV, 2, &r));
    expect_vec(r.v, 3, (const int[]){3, -4, 6}, "index / 2 (toward zero)");
    ASSERT_OK(amp_index_scalar(i, AMP_OP_MOD, 5, &r));
    expect_vec(r.v, 3, (const int[]){2, -4, 2}, "index % 5");
    ASSERT_OK(amp_scalar_index(100, AMP_OP_DIV, i, &r));
    expect_vec(r.v, 3, (const int[]){14, -11, 8}, "100 / index");
    ASSERT_OK(amp_scalar_index(100, AMP_OP_MOD, i, &r));
    expect_vec(r.v, 3, (const int[]){2, 1, 4}, "100 % index");
    cr_assert_eq(r.rank, 3);
    ASSERT_OK(amp_extent_scalar(e, AMP_OP_MUL, 2, &x));
    expect_vec(x.v, 3, (const int[]){16, 12, 10}, "extent * 2");
    ASSERT_OK(amp_scalar_extent(2, AMP_OP_ADD, e, &x));
    expect_vec(x.v, 3, (const int[]){10, 8, 7}, "2 + extent");
    ASSERT_OK(amp_extent_scalar(e, AMP_OP_ADD, 1, &x)); /* ++ */
    expect_vec(x.v, 3, (const int[]){9, 7, 6}, "++extent");
    ASSERT_OK(amp_extent_add_extent(e, amp_extent_3d(1, 2, 3), &x));
    expect_vec(x.v, 3, (const int[]){9, 8, 8}, "extent + extent");
    ASSERT_OK(amp_extent_sub_extent(e, amp_extent_3d(1, 2, 3), &x));
    expect_vec(x.v, 3, (const int[]){7, 4, 2}, "extent - extent");
    amp_index i8 = amp_index_make(8, (const int[]){1, 2, 3, 4, 5, 6, 7, 8});
    ASSERT_OK(amp_scalar_index(1, AMP_OP_SUB, i8, &r));
    expect_vec(r.v, 8, (const int[]){0, -1, -2, -3, -4, -5, -6, -7}, "1 - rank-8 index");
}

Test(arith, refusals_name_what_went_wrong)
{
    amp_index i = amp_index_2d(4, 0), r = amp_index_2d(9, 9);
    ASSERT_STATUS(amp_scalar_index(1, AMP_OP_DIV, i, &r), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_MSG_HAS("dimension 1");
    cr_assert(r.rank == 0 && r.v[0] == 0, "out zeroed on failure");
    ASSERT_STATUS(amp_index_scalar(i, AMP_OP_MOD, 0, &r), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_index_scalar(amp_index_1d(INT_MIN), AMP_OP_DIV, -1, &r), AMP_ERROR_OUT_OF_BOUNDS);
    ASSERT_STATUS(amp_index_scalar(amp_index_1d(INT_MAX), AMP_OP_ADD, 1, &r), AMP_ERROR_OUT_OF_BOUNDS);
    ASSERT_MSG_HAS("overflows");
    ASSERT_STATUS(amp_extent_scalar(amp_extent_2d(1 << 20, 2), AMP_OP_MUL, 1 << 12, NULL), AMP_ERROR_INVALID_ARGUMENT);
    amp_extent x;
    ASSERT_STATUS(amp_extent_scalar(amp_extent_2d(1 << 20, 2), AMP_OP_MUL, 1 << 12, &x), AMP_ERROR_OUT_OF_BOUNDS);
    ASSERT_STATUS(amp_extent_scalar(amp_extent_1d(1), (amp_op)9, 1, &x), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_MSG_HAS("9");
    ASSERT_STATUS(amp_extent_add_extent(amp_extent_1d(1), amp_extent_2d(1, 1), &x), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_scalar_extent(1, AMP_OP_ADD, amp_extent_make(AMP_MAX_RANK + 1, NULL), &x),
                  AMP_ERROR_INVALID_ARGUMENT);
}

/* ---------------------------------------------------- zero-copy semantics
 * What hipamp promises (include/hipamp.h, amp_array_view_synchronize and
 * _discard_data): on a zero-copy accelerator a kernel's writes are in host
 * memory once it finished, and discard_data cannot withdraw them; on a
 * copying one host memory holds them only after synchronize, and
 * discard_data drops them. */

ACCEL_TEST(zero_copy, kernel_writes_reach_host_memory_as_promised)
{
    conf c;
    conf_open(&c, acc);
    enum { N = 100 };
    int32_t *x = conf_ints(N, 0, 1);
    amp_array_view *v = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v)};
    conf_run(&c, "conf_inc1", amp_extent_1d(N), a, 1);
    ASSERT_OK(amp_accelerator_view_wait(c.q));
    int want_before = c.info.is_unified_memory ? 1 : 0;
    for (int i = 0; i < N; ++i)
        cr_assert_eq(x[i], i + want_before, "%s (%s): element %d before synchronize is %d", c.info.device_path,
                     c.info.is_unified_memory ? "zero-copy" : "copies", i, x[i]);
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < N; ++i) cr_assert_eq(x[i], i + 1, "element %d after synchronize is %d", i, x[i]);
    ASSERT_OK(amp_array_view_destroy(v));
    free(x);
    conf_close(&c);
}

ACCEL_TEST(zero_copy, discard_data_after_a_kernel)
{
    conf c;
    conf_open(&c, acc);
    enum { N = 100 };
    int32_t *x = conf_ints(N, 0, 1);
    amp_array_view *v = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v), amp_arg_int32(7)};
    conf_run(&c, "conf_fill1", amp_extent_1d(N), a, 2);
    ASSERT_OK(amp_array_view_discard_data(v));
    ASSERT_OK(amp_array_view_destroy(v)); /* synchronizes */
    for (int i = 0; i < N; ++i)
        cr_assert_eq(x[i], c.info.is_unified_memory ? 7 : i, "%s (%s): element %d after discard_data is %d",
                     c.info.device_path, c.info.is_unified_memory ? "zero-copy: the writes stay" : "copies: dropped",
                     i, x[i]);
    free(x);
    conf_close(&c);
}

/* ---------------------------------------------------------------- futures */

/* Futures of one queue whose callbacks must run in registration order:
 * enough of them that a continuation thread polling them one by one sees
 * a later one complete before it looks at an earlier one again (it ran
 * them out of order under load until the round held back a queue's later
 * entries behind its first pending one). */
enum { THEN_ORDERED = 32 };

typedef struct then_rec {
    pthread_mutex_t lock;
    int calls;
    amp_status st;
    bool other_thread;
    char thread_name[32];
    int order[THEN_ORDERED];
    amp_array_view *peek; /* read from inside the callback */
    int32_t peeked;
} then_rec;

static pthread_t then_test_thread;

static void then_note(amp_status st, void *user)
{
    then_rec *r = user;
    pthread_mutex_lock(&r->lock);
    if (r->calls < THEN_ORDERED) r->order[r->calls] = -1;
    r->calls++;
    r->st = st;
    r->other_thread = !pthread_equal(pthread_self(), then_test_thread);
    pthread_getname_np(pthread_self(), r->thread_name, sizeof r->thread_name);
    if (r->peek) (void)amp_array_view_get(r->peek, amp_index_1d(0), &r->peeked);
    pthread_mutex_unlock(&r->lock);
}

typedef struct then_slot {
    then_rec *rec;
    int id;
} then_slot;

static void then_order(amp_status st, void *user)
{
    then_slot *s = user;
    pthread_mutex_lock(&s->rec->lock);
    if (s->rec->calls < THEN_ORDERED) s->rec->order[s->rec->calls] = s->id;
    s->rec->calls++;
    s->rec->st = st;
    pthread_mutex_unlock(&s->rec->lock);
}

/* Wait (generously: a loaded machine) until rec saw n calls. */
static void then_await(then_rec *r, int n)
{
    for (int i = 0; i < 60000; ++i) {
        pthread_mutex_lock(&r->lock);
        int calls = r->calls;
        pthread_mutex_unlock(&r->lock);
        if (calls >= n) return;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    cr_assert_fail("continuations: %d calls after 60 s, want %d", r->calls, n);
}

/* C++ AMP: completion_future::then runs a callback once the work is done. */
ACCEL_TEST(future, then_runs_once_on_the_continuation_thread)
{
    conf c;
    conf_open(&c, acc);
    then_test_thread = pthread_self();
    enum { N = 4096 };
    int32_t *x = conf_ints(N, 0, 0);
    amp_array_view *v = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v)};
    amp_future *f = NULL;
    ASSERT_OK(amp_parallel_for_each_async(c.q, amp_extent_1d(N), test_kernel(c.p, "conf_inc1"), a, 1, &f));
    then_rec r = {.lock = PTHREAD_MUTEX_INITIALIZER, .peek = v};
    ASSERT_OK(amp_future_then(f, then_note, &r));
    ASSERT_OK(amp_future_destroy(f)); /* the continuation keeps what it needs */
    then_await(&r, 1);
    pthread_mutex_lock(&r.lock);
    cr_assert_eq(r.st, AMP_OK);
    cr_assert(r.other_thread, "the callback ran on the registering thread");
    cr_assert_str_eq(r.thread_name, "hipamp-then");
    cr_assert_eq(r.peeked, 1, "the callback read %d from the view (hipamp calls are allowed there)", r.peeked);
    pthread_mutex_unlock(&r.lock);
    /* An already complete future: still called, still on that thread. */
    ASSERT_OK(amp_parallel_for_each_async(c.q, amp_extent_1d(N), test_kernel(c.p, "conf_inc1"), a, 1, &f));
    ASSERT_OK(amp_future_wait(f));
    r.peek = NULL;
    ASSERT_OK(amp_future_then(f, then_note, &r));
    ASSERT_OK(amp_future_then(f, then_note, &r)); /* two on one future: both */
    then_await(&r, 3);
    ASSERT_OK(amp_future_destroy(f));
    pthread_mutex_lock(&r.lock);
    cr_assert_eq(r.st, AMP_OK);
    cr_assert(r.other_thread, "a continuation of a complete future ran on the registering thread");
    cr_assert_str_eq(r.thread_name, "hipamp-then");
    pthread_mutex_unlock(&r.lock);
    /* Futures of one queue, registered in queue order, are called in it. */
    then_rec o = {.lock = PTHREAD_MUTEX_INITIALIZER};
    then_slot slots[THEN_ORDERED];
    for (int i = 0; i < THEN_ORDERED; ++i) {
        slots[i] = (then_slot){&o, i};
        ASSERT_OK(amp_parallel_for_each_async(c.q, amp_extent_1d(N), test_kernel(c.p, "conf_inc1"), a, 1, &f));
        ASSERT_OK(amp_future_then(f, then_order, &slots[i]));
        ASSERT_OK(amp_future_destroy(f));
    }
    then_await(&o, THEN_ORDERED);
    for (int i = 0; i < THEN_ORDERED; ++i) cr_assert_eq(o.order[i], i, "call %d was future %d", i, o.order[i]);
    /* Each once: after the queue is idle and a moment more, no call more. */
    ASSERT_OK(amp_accelerator_view_wait(c.q));
    nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    pthread_mutex_lock(&r.lock);
    pthread_mutex_lock(&o.lock);
    cr_assert(r.calls == 3 && o.calls == THEN_ORDERED, "continuations called %d and %d times, want 3 and %d", r.calls,
              o.calls, THEN_ORDERED);
    pthread_mutex_unlock(&o.lock);
    pthread_mutex_unlock(&r.lock);
    ASSERT_STATUS(amp_future_then(NULL, then_note, &r), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_array_view_destroy(v));
    for (int i = 0; i < N; ++i) cr_assert_eq(x[i], 2 + THEN_ORDERED, "element %d: %d", i, x[i]);
    free(x);
    conf_close(&c);
}

/* C++ AMP: create_marker returns a future for everything submitted so far. */
ACCEL_TEST(future, marker_covers_what_was_queued_before_it)
{
    conf c;
    conf_open(&c, acc);
    amp_future *m = NULL, *f[3] = {NULL, NULL, NULL};
    ASSERT_OK(amp_accelerator_view_create_marker(c.q, &m));
    bool ready = false;
    ASSERT_OK(amp_future_is_ready(m, &ready));
    cr_assert(ready, "a marker of an empty queue is complete");
    ASSERT_OK(amp_future_destroy(m));
    enum { N = 1 << 16 };
    int32_t *x = conf_ints(N, 0, 0);
    amp_array_view *v = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v)};
    for (int i = 0; i < 3; ++i)
        ASSERT_OK(amp_parallel_for_each_async(c.q, amp_extent_1d(N), test_kernel(c.p, "conf_inc1"), a, 1, &f[i]));
    ASSERT_OK(amp_accelerator_view_create_marker(c.q, &m));
    ASSERT_OK(amp_future_wait(m));
    for (int i = 0; i < 3; ++i) {
        ASSERT_OK(amp_future_is_ready(f[i], &ready));
        cr_assert(ready, "launch %d not finished after its marker", i);
        ASSERT_OK(amp_future_destroy(f[i]));
    }
    ASSERT_OK(amp_future_destroy(m));
    ASSERT_STATUS(amp_accelerator_view_create_marker(NULL, &m), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(m);
    ASSERT_OK(amp_array_view_destroy(v));
    for (int i = 0; i < N; ++i) cr_assert_eq(x[i], 3, "element %d: %d", i, x[i]);
    free(x);
    conf_close(&c);
}

/* C++ AMP: synchronize_async returns a future; host memory is current once
 * it completes. */
ACCEL_TEST(future, synchronize_async)
{
    conf c;
    conf_open(&c, acc);
    enum { N = 1000 };
    int32_t *x = conf_ints(N, 0, 1);
    amp_array_view *v = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v)};
    conf_run(&c, "conf_inc1", amp_extent_1d(N), a, 1);
    ASSERT_OK(amp_accelerator_view_reset_stats(c.q));
    amp_future *f = NULL;
    ASSERT_OK(amp_array_view_synchronize_async(v, &f));
    ASSERT_OK(amp_future_wait(f));
    ASSERT_OK(amp_future_destroy(f));
    for (int i = 0; i < N; ++i) cr_assert_eq(x[i], i + 1, "element %d: %d", i, x[i]);
    amp_stats s = conf_stats(c.q);
    cr_assert_eq(s.bytes_to_host, c.info.is_unified_memory ? 0 : N * 4, "%llu bytes back",
                 (unsigned long long)s.bytes_to_host);
    /* Nothing newer on the device: a future all the same. */
    ASSERT_OK(amp_array_view_synchronize_async(v, &f));
    ASSERT_OK(amp_future_wait(f));
    ASSERT_OK(amp_future_destroy(f));
    ASSERT_STATUS(amp_array_view_synchronize_async(NULL, &f), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(f);
    ASSERT_STATUS(amp_array_view_synchronize_async(v, NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_array_view_destroy(v));
    free(x);
    conf_close(&c);
}

/* ---------------------------------------------------------- queuing modes */

ACCEL_TEST(queue, queuing_modes_and_flush)
{
    amp_accelerator_view *qi = NULL, *qa = NULL, *qd = NULL;
    amp_queuing_mode m = AMP_QUEUING_IMMEDIATE;
    ASSERT_OK(amp_accelerator_view_create_with_mode(acc, AMP_QUEUING_IMMEDIATE, &qi));
    ASSERT_OK(amp_accelerator_view_get_queuing_mode(qi, &m));
    cr_assert_eq(m, AMP_QUEUING_IMMEDIATE);
    ASSERT_OK(amp_accelerator_view_create(acc, &qa));
    ASSERT_OK(amp_accelerator_view_get_queuing_mode(qa, &m));
    cr_assert_eq(m, AMP_QUEUING_AUTOMATIC);
    ASSERT_OK(amp_accelerator_default_view(acc, &qd));
    m = AMP_QUEUING_IMMEDIATE;
    ASSERT_OK(amp_accelerator_view_get_queuing_mode(qd, &m));
    cr_assert_eq(m, AMP_QUEUING_AUTOMATIC, "C++ AMP's default views are automatic");
    ASSERT_STATUS(amp_accelerator_view_create_with_mode(acc, (amp_queuing_mode)7, &qd), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(qd);
    ASSERT_STATUS(amp_accelerator_view_get_queuing_mode(NULL, &m), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_accelerator_view_flush(NULL), AMP_ERROR_INVALID_ARGUMENT);
    /* Work on both, flushed: it runs, and flush does not wait for it. */
    amp_program *p = test_build(acc, test_kernels_conformance);
    enum { N = 2048 };
    int32_t *x = conf_ints(N, 0, 0), *y = conf_ints(N, 0, 0);
    amp_array_view *vx = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE), *vy = test_view(y, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_arg ax[] = {amp_arg_view(vx)}, ay[] = {amp_arg_view(vy)};
    amp_future *fx = NULL, *fy = NULL;
    ASSERT_OK(amp_accelerator_view_flush(qi)); /* nothing queued yet */
    ASSERT_OK(amp_parallel_for_each_async(qi, amp_extent_1d(N), test_kernel(p, "conf_inc1"), ax, 1, &fx));
    ASSERT_OK(amp_parallel_for_each_async(qa, amp_extent_1d(N), test_kernel(p, "conf_inc1"), ay, 1, &fy));
    ASSERT_OK(amp_accelerator_view_flush(qi));
    ASSERT_OK(amp_accelerator_view_flush(qa));
    ASSERT_OK(amp_future_wait(fx));
    ASSERT_OK(amp_future_wait(fy));
    ASSERT_OK(amp_future_destroy(fx));
    ASSERT_OK(amp_future_destroy(fy));
    ASSERT_OK(amp_array_view_destroy(vx));
    ASSERT_OK(amp_array_view_destroy(vy));
    for (int i = 0; i < N; ++i) cr_assert(x[i] == 1 && y[i] == 1, "element %d: %d %d", i, x[i], y[i]);
    free(x);
    free(y);
    ASSERT_OK(amp_program_destroy(p));
    ASSERT_OK(amp_accelerator_view_destroy(qi));
    ASSERT_OK(amp_accelerator_view_destroy(qa));
}

/* ----------------------------------------------------------- accelerators */

Test(accelerator, default_as_a_device_path)
{
    amp_accelerator *d = NULL, *f = NULL;
    ASSERT_OK(amp_accelerator_find("default", &f));
    ASSERT_OK(amp_accelerator_default(&d));
    cr_assert_eq(f, d);
}

/* C++ AMP: accelerator::set_default succeeds before the default is used,
 * and fails once it has been. */
Test(accelerator, set_default_before_use_only)
{
    amp_accelerator *list[16], *cpu = NULL, *d = NULL;
    size_t n = 0;
    ASSERT_OK(amp_accelerator_list(list, 16, &n));
    ASSERT_OK(amp_accelerator_find("cpu", &cpu));
    amp_accelerator_info in;
    ASSERT_OK(amp_accelerator_get_info(cpu, &in));
    if (!in.is_available) cr_skip_test("CPU accelerator unavailable: %s", in.unavailable_reason);
    /* Not the first GPU the automatic choice would take: the CPU wins here. */
    setenv("AMP_DEFAULT_ACCELERATOR", "no-such-accelerator", 1); /* not read: set_default decides */
    ASSERT_OK(amp_accelerator_set_default(cpu));
    ASSERT_OK(amp_accelerator_default(&d));
    cr_assert_eq(d, cpu);
    ASSERT_OK(amp_accelerator_find("default", &d));
    cr_assert_eq(d, cpu);
    ASSERT_OK(amp_accelerator_set_default(cpu)); /* the same one again: fine */
    /* Another one once decided: refused, naming both. */
    for (size_t i = 0; i < n && i < 16; ++i) {
        if (list[i] == cpu) continue;
        amp_accelerator_info gi;
        ASSERT_OK(amp_accelerator_get_info(list[i], &gi));
        if (!gi.is_available) continue;
        ASSERT_STATUS(amp_accelerator_set_default(list[i]), AMP_ERROR_BUSY);
        ASSERT_MSG_HAS("cpu");
        ASSERT_MSG_HAS(gi.device_path);
    }
    ASSERT_STATUS(amp_accelerator_set_default(NULL), AMP_ERROR_INVALID_ARGUMENT);
    /* A NULL view now means the CPU accelerator. */
    amp_array *a = NULL;
    amp_accelerator_view *q = NULL;
    amp_accelerator *qa = NULL;
    ASSERT_OK(amp_array_create(NULL, 4, amp_extent_1d(4), NULL, &a));
    ASSERT_OK(amp_array_get_accelerator_view(a, &q));
    ASSERT_OK(amp_accelerator_view_get_accelerator(q, &qa));
    cr_assert_eq(qa, cpu);
    ASSERT_OK(amp_array_destroy(a));
}

Test(accelerator, set_default_after_use_is_refused)
{
    amp_accelerator *d = NULL, *cpu = NULL;
    unsetenv("AMP_DEFAULT_ACCELERATOR");
    ASSERT_OK(amp_accelerator_default(&d)); /* used: decided */
    ASSERT_OK(amp_accelerator_find("cpu", &cpu));
    ASSERT_OK(amp_accelerator_set_default(d));
    if (d != cpu) {
        ASSERT_STATUS(amp_accelerator_set_default(cpu), AMP_ERROR_BUSY);
    } else {
        /* Only the CPU here: any other listed accelerator is refused. */
        amp_accelerator *list[16];
        size_t n = 0;
        ASSERT_OK(amp_accelerator_list(list, 16, &n));
        for (size_t i = 0; i + 1 < n && i < 16; ++i) {
            amp_accelerator_info gi;
            ASSERT_OK(amp_accelerator_get_info(list[i], &gi));
            if (gi.is_available) ASSERT_STATUS(amp_accelerator_set_default(list[i]), AMP_ERROR_BUSY);
        }
    }
}

/* C++ AMP's version and is_debug properties. */
Test(accelerator, version_and_is_debug)
{
    amp_accelerator *list[16];
    size_t n = 0;
    ASSERT_OK(amp_accelerator_list(list, 16, &n));
    for (size_t i = 0; i < n && i < 16; ++i) {
        amp_accelerator_info in;
        unsigned v = 1;
        bool dbg = true;
        ASSERT_OK(amp_accelerator_get_info(list[i], &in));
        ASSERT_OK(amp_accelerator_get_version(list[i], &v));
        ASSERT_OK(amp_accelerator_get_is_debug(list[i], &dbg));
        if (in.is_emulated) {
            cr_assert_eq(v, (unsigned)HIPAMP_VERSION_MAJOR << 16 | HIPAMP_VERSION_MINOR, "cpu version %#x", v);
            const char *e = getenv("AMP_DEBUG");
            if (e && !strcmp(e, "1")) cr_assert(dbg, "AMP_DEBUG=1 but is_debug is false");
        } else {
            int sm = 0;
            if (sscanf(in.arch, "sm_%d", &sm) == 1)
                cr_assert_eq(v, (unsigned)(sm / 10) << 16 | (unsigned)(sm % 10), "%s: version %#x", in.arch, v);
            else
                cr_assert_gt(v >> 16, 0, "%s: version %#x", in.arch, v);
            cr_assert_not(dbg);
        }
    }
    unsigned v;
    bool dbg;
    ASSERT_STATUS(amp_accelerator_get_version(NULL, &v), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_accelerator_get_is_debug(NULL, &dbg), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_accelerator_get_version(list[0], NULL), AMP_ERROR_INVALID_ARGUMENT);
}

/* AMP_DEBUG=0: the CPU accelerator says it is not a debug one (an explicit
 * 0, since a build with HIPAMP_DEBUG_CHECKS defaults it on). */
Test(accelerator, is_debug_is_off_with_amp_debug_0)
{
    setenv("AMP_DEBUG", "0", 1);
    amp_accelerator *cpu = NULL;
    bool dbg = true;
    ASSERT_OK(amp_accelerator_find("cpu", &cpu));
    ASSERT_OK(amp_accelerator_get_is_debug(cpu, &dbg));
    cr_assert_not(dbg, "AMP_DEBUG=0 but is_debug is true");
}

Test(accelerator, is_debug_follows_amp_debug)
{
    setenv("AMP_DEBUG", "1", 1);
    amp_accelerator *cpu = NULL;
    bool dbg = false;
    ASSERT_OK(amp_accelerator_find("cpu", &cpu));
    ASSERT_OK(amp_accelerator_get_is_debug(cpu, &dbg));
    cr_assert(dbg);
}

/* --------------------------------------------------------- staging arrays */

/* C++ AMP: array(extent, cpu_accelerator_view, associated_view) lives in
 * host memory (data() works) and copies to arrays of the associated view. */
ACCEL_TEST(staging, a_host_array_associated_with_a_view)
{
    conf c;
    conf_open(&c, acc);
    enum { N = 777 };
    int32_t *init = conf_ints(N, 5, 3), *got = conf_ints(N, POISON_I32, 0);
    amp_array *s = NULL, *d = NULL;
    ASSERT_OK(amp_array_create_staging(c.q, 4, amp_extent_1d(N), init, &s));
    int32_t *h = amp_array_data(s);
    cr_assert_not_null(h, "a staging array's memory is the host's");
    test_check_i32(h, init, N, "staging array initial data");
    amp_accelerator_view *sq = NULL;
    ASSERT_OK(amp_array_get_accelerator_view(s, &sq));
    cr_assert_eq(sq, c.q);
    /* To an array of the associated view, and back. */
    ASSERT_OK(amp_array_create(c.q, 4, amp_extent_1d(N), NULL, &d));
    ASSERT_OK(amp_accelerator_view_reset_stats(c.q));
    ASSERT_OK(amp_copy_array(s, d));
    amp_stats st = conf_stats(c.q);
    cr_assert(st.bytes_to_device == N * 4 && st.copies_to_device == 1, "%s: staging to array: %llu bytes in %llu copies",
              c.info.device_path, (unsigned long long)st.bytes_to_device, (unsigned long long)st.copies_to_device);
    ASSERT_OK(amp_array_copy_to_host(d, got));
    test_check_i32(got, init, N, "array copied from the staging array");
    amp_arg a[] = {amp_arg_array(d)};
    conf_run(&c, "conf_array_inc1", amp_extent_1d(N), a, 1);
    ASSERT_OK(amp_copy_array(d, s));
    for (int i = 0; i < N; ++i) init[i] += 1;
    test_check_i32(h, init, N, "staging array copied back from the array");
    /* Written through its pointer, then copied again. */
    for (int i = 0; i < N; ++i) h[i] = init[i] = -i;
    ASSERT_OK(amp_copy_array(s, d));
    ASSERT_OK(amp_array_copy_to_host(d, got));
    test_check_i32(got, init, N, "after writing the staging memory directly");
    /* A view of it runs on the accelerator like a view of host memory. */
    amp_array_view *v = NULL;
    ASSERT_OK(amp_array_view_of_array(s, &v));
    cr_assert_eq(amp_array_view_data(v), (void *)h);
    amp_arg b[] = {amp_arg_view(v)};
    conf_run(&c, "conf_inc1", amp_extent_1d(N), b, 1);
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < N; ++i) init[i] += 1;
    test_check_i32(h, init, N, "a view of the staging array in a launch");
    ASSERT_OK(amp_array_view_destroy(v));
    /* The staging array itself is not an accelerator's array. */
    amp_arg sa[] = {amp_arg_array(s)};
    ASSERT_STATUS(amp_parallel_for_each(c.q, amp_extent_1d(N), test_kernel(c.p, "conf_array_inc1"), sa, 1),
                  AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_MSG_HAS("staging");
    ASSERT_OK(amp_array_copy_to_host(s, got));
    test_check_i32(got, init, N, "amp_array_copy_to_host of the staging array");
    for (int i = 0; i < N; ++i) init[i] = 9000 + i;
    ASSERT_OK(amp_array_copy_from_host(s, init));
    test_check_i32(h, init, N, "amp_array_copy_from_host into the staging array");
    ASSERT_OK(amp_array_destroy(d));
    ASSERT_OK(amp_array_destroy(s));
    ASSERT_OK(amp_array_create_staging(c.q, 4, amp_extent_2d(0, 3), NULL, &s));
    ASSERT_OK(amp_array_destroy(s));
    ASSERT_STATUS(amp_array_create_staging(c.q, 0, amp_extent_1d(3), NULL, &s), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(s);
    free(init);
    free(got);
    conf_close(&c);
}

/* hipamp-info's memory lines say the same as the tests above, per mode. */
Test(zero_copy, hipamp_info_states_the_promise)
{
    const char *bin = getenv("HIPAMP_TEST_BIN_DIR");
    if (!bin) cr_skip_test("HIPAMP_TEST_BIN_DIR is not set (run through ctest)");
    const char *cpu_unified = getenv("AMP_CPU_UNIFIED");
    bool unified = !(cpu_unified && !strcmp(cpu_unified, "0"));
    char cmd[4200], line[512];
    snprintf(cmd, sizeof cmd, "%s/hipamp-info", bin);
    if (access(cmd, X_OK) != 0) cr_skip_test("%s is not built", cmd);
    snprintf(cmd, sizeof cmd, "'%s/hipamp-info'", bin);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    bool in_cpu = false, seen = false;
    while (fgets(line, sizeof line, p)) {
        if (line[0] == '[') in_cpu = strstr(line, "] cpu") != NULL;
        if (!in_cpu || !strstr(line, "kernel_writes")) continue;
        seen = true;
        cr_assert(strstr(line, unified ? "before any synchronize" : "after synchronize") != NULL, "%s mode: %s",
                  unified ? "zero-copy" : "copy", line);
        cr_assert(strstr(line, unified ? "cannot withdraw" : "drops them") != NULL, "%s", line);
    }
    pclose(p);
    cr_assert(seen, "hipamp-info printed no kernel_writes line for the CPU accelerator");
}
