/* test_core.c — host-only core API: status names, thread-local errors (and the library's thread-local storage small enough to dlopen it late), extents and indices, tiled extents (pad/truncate), kernel argument constructors; AMP_* settings with bad values said on stderr (read by the CPU accelerator). */
#include "support.h"

#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ helpers */

/* A value no correct out-param can hold after a failure (rank 77). */
static amp_index garbage_index(void)
{
    amp_index g;
    g.rank = 77;
    for (int d = 0; d < AMP_MAX_RANK; ++d) g.v[d] = 0x5a5a5a5a;
    return g;
}

static amp_tiled_extent garbage_tiled(void)
{
    amp_tiled_extent t;
    t.extent.rank = 77;
    for (int d = 0; d < AMP_MAX_RANK; ++d) t.extent.v[d] = 0x5a5a5a5a;
    for (int d = 0; d < 3; ++d) t.tile[d] = 0x5a5a5a5a;
    return t;
}

#define ASSERT_INDEX_ZEROED(ix)                                                       \
    do {                                                                              \
        cr_assert_eq((ix).rank, 0, "out-param rank not zeroed on failure: %d", (ix).rank); \
        for (int d_ = 0; d_ < AMP_MAX_RANK; ++d_)                                     \
            cr_assert_eq((ix).v[d_], 0, "out-param v[%d] not zeroed on failure", d_); \
    } while (0)

#define ASSERT_TILED_ZEROED(t)                                                        \
    do {                                                                              \
        cr_assert_eq((t).extent.rank, 0, "tiled out-param not zeroed on failure");    \
        for (int d_ = 0; d_ < AMP_MAX_RANK; ++d_)                                     \
            cr_assert_eq((t).extent.v[d_], 0, "tiled out-param extent[%d] not zeroed", d_); \
        for (int d_ = 0; d_ < 3; ++d_)                                                \
            cr_assert_eq((t).tile[d_], 0, "tiled out-param tile[%d] not zeroed", d_); \
    } while (0)

#define ASSERT_MSG_HAS(needle)                                                        \
    cr_assert(strstr(amp_last_error(), (needle)) != NULL,                              \
              "amp_last_error() should mention \"%s\": \"%s\"", (needle), amp_last_error())

static void assert_extent(amp_extent e, int rank, const int *v)
{
    cr_assert_eq(e.rank, rank, "rank %d, want %d", e.rank, rank);
    for (int d = 0; d < rank; ++d)
        cr_assert_eq(e.v[d], v[d], "dimension %d is %d, want %d", d, e.v[d], v[d]);
}

/* ------------------------------------------------------------ status */

Test(status, every_name)
{
    static const struct { amp_status s; const char *name; } all[] = {
        {AMP_OK, "AMP_OK"},
        {AMP_ERROR_INVALID_ARGUMENT, "AMP_ERROR_INVALID_ARGUMENT"},
        {AMP_ERROR_INVALID_EXTENT, "AMP_ERROR_INVALID_EXTENT"},
        {AMP_ERROR_INVALID_COMPUTE_DOMAIN, "AMP_ERROR_INVALID_COMPUTE_DOMAIN"},
        {AMP_ERROR_OUT_OF_BOUNDS, "AMP_ERROR_OUT_OF_BOUNDS"},
        {AMP_ERROR_OUT_OF_MEMORY, "AMP_ERROR_OUT_OF_MEMORY"},
        {AMP_ERROR_NO_ACCELERATOR, "AMP_ERROR_NO_ACCELERATOR"},
        {AMP_ERROR_UNSUPPORTED, "AMP_ERROR_UNSUPPORTED"},
        {AMP_ERROR_COMPILE, "AMP_ERROR_COMPILE"},
        {AMP_ERROR_KERNEL_NOT_FOUND, "AMP_ERROR_KERNEL_NOT_FOUND"},
        {AMP_ERROR_ARGUMENT_MISMATCH, "AMP_ERROR_ARGUMENT_MISMATCH"},
        {AMP_ERROR_DEVICE, "AMP_ERROR_DEVICE"},
        {AMP_ERROR_BUSY, "AMP_ERROR_BUSY"},
        {AMP_ERROR_TIMEOUT, "AMP_ERROR_TIMEOUT"},
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) {
        const char *n = amp_status_name(all[i].s);
        cr_assert_not_null(n, "amp_status_name(%d) is NULL", (int)all[i].s);
        cr_assert_str_eq(n, all[i].name, "amp_status_name(%d) = \"%s\"", (int)all[i].s, n);
    }
}

Test(status, unknown_values)
{
    const int bad[] = {1, 7, -14, -100, INT_MIN, INT_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        const char *n = amp_status_name((amp_status)bad[i]);
        cr_assert_not_null(n);
        cr_assert_str_eq(n, "AMP_STATUS_UNKNOWN", "amp_status_name(%d) = \"%s\"", bad[i], n);
    }
}

Test(status, version_matches_header)
{
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", HIPAMP_VERSION_MAJOR, HIPAMP_VERSION_MINOR,
             HIPAMP_VERSION_PATCH);
    cr_assert_not_null(amp_version());
    cr_assert_str_eq(amp_version(), want);
}

/* The library's thread-local storage comes out of glibc's static TLS
 * block whenever any of it is initial-exec (amp__me is), and a process has
 * room for about 1.6 KiB of that beyond what it started with: a program
 * that dlopens hipamp late, beside other such libraries (bench_trace opens
 * three builds of it at once), fails to load it once the block is full.
 * 512 bytes a library leaves room for three; session 64's 776 bytes of
 * thread-local arrays took it to 1080 and broke bench_trace. */
typedef struct tls_probe {
    size_t bytes;
    int found;
} tls_probe;

static int tls_probe_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    tls_probe *p = arg;
    const char *slash = strrchr(info->dlpi_name, '/');
    const char *base = slash ? slash + 1 : info->dlpi_name;
    if (strncmp(base, "libhipamp.so", 12) != 0) return 0;
    p->found = 1;
    for (int i = 0; i < info->dlpi_phnum; ++i)
        if (info->dlpi_phdr[i].p_type == PT_TLS) p->bytes += info->dlpi_phdr[i].p_memsz;
    return 1;
}

Test(status, library_thread_local_storage_leaves_room_to_dlopen_it)
{
    tls_probe p = {0, 0};
    dl_iterate_phdr(tls_probe_object, &p);
    cr_assert(p.found, "libhipamp.so is not among this test's loaded objects (the tests link it shared)");
    cr_assert_leq(p.bytes, 512,
                  "libhipamp.so's thread-local storage is %zu bytes: part of it is initial-exec, so it all "
                  "comes out of the static TLS block, and a program that dlopens the library beside others "
                  "would find no room (move large per-thread state to the heap, as cpu_run.c's record of "
                  "recent launches)",
                  p.bytes);
}

Test(status, last_error_empty_at_start)
{
    cr_assert_not_null(amp_last_error());
    cr_assert_str_eq(amp_last_error(), "");
}

Test(status, last_error_not_cleared_by_success)
{
    ASSERT_STATUS(amp_extent_validate(amp_extent_2d(4, -7)), AMP_ERROR_INVALID_EXTENT);
    ASSERT_MSG_HAS("-7");
    ASSERT_OK(amp_extent_validate(amp_extent_2d(4, 7)));
    ASSERT_MSG_HAS("-7");
}

/* ------------------------------------------------ thread-local errors */

typedef struct err_thread {
    int bad_value;          /* 0: cause no error */
    pthread_barrier_t *bar; /* NULL: run alone */
    char seen_before[256];
    char seen_after[256];
    amp_status st;
} err_thread;

static void *err_thread_main(void *p)
{
    err_thread *t = p;
    snprintf(t->seen_before, sizeof t->seen_before, "%s", amp_last_error());
    t->st = AMP_OK;
    if (t->bad_value) t->st = amp_extent_validate(amp_extent_3d(3, t->bad_value, 5));
    if (t->bar) pthread_barrier_wait(t->bar); /* both threads have failed */
    if (t->bar) pthread_barrier_wait(t->bar); /* keep the race window open */
    snprintf(t->seen_after, sizeof t->seen_after, "%s", amp_last_error());
    return NULL;
}

Test(status, last_error_is_thread_local)
{
    /* A failure on the main thread is not seen by a new thread. */
    ASSERT_STATUS(amp_extent_validate(amp_extent_2d(2, -4242)), AMP_ERROR_INVALID_EXTENT);
    ASSERT_MSG_HAS("-4242");

    err_thread quiet = {0};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, err_thread_main, &quiet), 0);
    pthread_join(th, NULL);
    cr_assert_str_eq(quiet.seen_before, "", "a fresh thread sees another thread's error: \"%s\"",
                     quiet.seen_before);
    cr_assert_str_eq(quiet.seen_after, "");

    /* A failure on another thread does not change the main thread's. */
    err_thread loud = {.bad_value = -99};
    cr_assert_eq(pthread_create(&th, NULL, err_thread_main, &loud), 0);
    pthread_join(th, NULL);
    cr_assert_eq(loud.st, AMP_ERROR_INVALID_EXTENT);
    cr_assert(strstr(loud.seen_after, "-99") != NULL, "thread's own error: \"%s\"", loud.seen_after);
    ASSERT_MSG_HAS("-4242");
    cr_assert(strstr(amp_last_error(), "-99") == NULL, "main thread sees the other thread's error: \"%s\"",
              amp_last_error());
}

Test(status, last_error_concurrent_threads_keep_their_own)
{
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, 2);
    err_thread a = {.bad_value = -1111, .bar = &bar}, b = {.bad_value = -2222, .bar = &bar};
    pthread_t ta, tb;
    cr_assert_eq(pthread_create(&ta, NULL, err_thread_main, &a), 0);
    cr_assert_eq(pthread_create(&tb, NULL, err_thread_main, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    pthread_barrier_destroy(&bar);
    cr_assert_eq(a.st, AMP_ERROR_INVALID_EXTENT);
    cr_assert_eq(b.st, AMP_ERROR_INVALID_EXTENT);
    cr_assert(strstr(a.seen_after, "-1111") && !strstr(a.seen_after, "-2222"), "thread a: \"%s\"", a.seen_after);
    cr_assert(strstr(b.seen_after, "-2222") && !strstr(b.seen_after, "-1111"), "thread b: \"%s\"", b.seen_after);
}

/* -------------------------------------------------- extent and index */

Test(extent, constructors)
{
    assert_extent(amp_extent_1d(7), 1, (int[]){7});
    assert_extent(amp_extent_2d(7, 8), 2, (int[]){7, 8});
    assert_extent(amp_extent_3d(7, 8, 9), 3, (int[]){7, 8, 9});
    assert_extent(amp_extent_4d(7, 8, 9, 10), 4, (int[]){7, 8, 9, 10});

    amp_index i1 = amp_index_1d(-1), i2 = amp_index_2d(1, -2), i3 = amp_index_3d(1, 2, 3),
              i4 = amp_index_4d(4, 3, 2, 1);
    cr_assert_eq(i1.rank, 1); cr_assert_eq(i1.v[0], -1);
    cr_assert_eq(i2.rank, 2); cr_assert_eq(i2.v[0], 1); cr_assert_eq(i2.v[1], -2);
    cr_assert_eq(i3.rank, 3); cr_assert_eq(i3.v[0], 1); cr_assert_eq(i3.v[1], 2); cr_assert_eq(i3.v[2], 3);
    cr_assert_eq(i4.rank, 4);
    cr_assert_eq(i4.v[0], 4); cr_assert_eq(i4.v[1], 3); cr_assert_eq(i4.v[2], 2); cr_assert_eq(i4.v[3], 1);
}

Test(extent, size)
{
    cr_assert_eq(amp_extent_size(amp_extent_1d(7)), 7);
    cr_assert_eq(amp_extent_size(amp_extent_2d(999, 666)), 999 * 666);
    cr_assert_eq(amp_extent_size(amp_extent_3d(2, 3, 4)), 24);
    cr_assert_eq(amp_extent_size(amp_extent_4d(2, 3, 4, 5)), 120);
    cr_assert_eq(amp_extent_size(amp_extent_1d(INT_MAX)), (int64_t)INT_MAX);
    /* Larger than int32, still fits int64. */
    cr_assert_eq(amp_extent_size(amp_extent_2d(INT_MAX, INT_MAX)), (int64_t)INT_MAX * INT_MAX);
    cr_assert_eq(amp_extent_size(amp_extent_3d(65536, 65536, 4)), (int64_t)1 << 34);
}

Test(extent, size_invalid_is_minus_one)
{
    cr_assert_eq(amp_extent_size(amp_extent_2d(5, -1)), -1);
    cr_assert_eq(amp_extent_size(amp_extent_4d(INT_MAX, INT_MAX, INT_MAX, INT_MAX)), -1);
    amp_extent e = amp_extent_1d(5);
    e.rank = 0;
    cr_assert_eq(amp_extent_size(e), -1);
    e.rank = AMP_MAX_RANK + 1;
    cr_assert_eq(amp_extent_size(e), -1);
    e.rank = -1;
    cr_assert_eq(amp_extent_size(e), -1);
}

Test(extent, validate_ok)
{
    ASSERT_OK(amp_extent_validate(amp_extent_1d(1)));
    ASSERT_OK(amp_extent_validate(amp_extent_2d(INT_MAX, INT_MAX)));
    ASSERT_OK(amp_extent_validate(amp_extent_3d(1, 2, 3)));
    ASSERT_OK(amp_extent_validate(amp_extent_4d(1, 2, 3, 4)));
}

Test(extent, validate_bad_rank)
{
    amp_extent e = amp_extent_4d(1, 2, 3, 4);
    e.rank = 0;
    ASSERT_STATUS(amp_extent_validate(e), AMP_ERROR_INVALID_EXTENT);
    cr_assert_neq(amp_last_error()[0], '\0', "no message for rank 0");
    e.rank = AMP_MAX_RANK + 1;
    ASSERT_STATUS(amp_extent_validate(e), AMP_ERROR_INVALID_EXTENT);
    ASSERT_MSG_HAS("9");
    e.rank = -3;
    ASSERT_STATUS(amp_extent_validate(e), AMP_ERROR_INVALID_EXTENT);
    ASSERT_MSG_HAS("-3");
}

Test(extent, validate_bad_dimension_named)
{
    ASSERT_STATUS(amp_extent_validate(amp_extent_3d(4, -7, 2)), AMP_ERROR_INVALID_EXTENT);
    ASSERT_MSG_HAS("-7");
    ASSERT_STATUS(amp_extent_validate(amp_extent_4d(4, 5, 6, -123456)), AMP_ERROR_INVALID_EXTENT);
    ASSERT_MSG_HAS("-123456");
    ASSERT_STATUS(amp_extent_validate(amp_extent_1d(INT_MIN)), AMP_ERROR_INVALID_EXTENT);
    char buf[32];
    snprintf(buf, sizeof buf, "%d", INT_MIN);
    ASSERT_MSG_HAS(buf);
}

Test(extent, validate_size_overflow)
{
    ASSERT_STATUS(amp_extent_validate(amp_extent_4d(INT_MAX, INT_MAX, INT_MAX, INT_MAX)),
                  AMP_ERROR_INVALID_EXTENT);
    ASSERT_STATUS(amp_extent_validate(amp_extent_3d(INT_MAX, INT_MAX, INT_MAX)), AMP_ERROR_INVALID_EXTENT);
    /* 2^21 cubed = 2^63: just past INT64_MAX. */
    ASSERT_STATUS(amp_extent_validate(amp_extent_3d(1 << 21, 1 << 21, 1 << 21)), AMP_ERROR_INVALID_EXTENT);
    /* 2^21 * 2^21 * (2^21 - 1) < 2^63 fits. */
    ASSERT_OK(amp_extent_validate(amp_extent_3d(1 << 21, 1 << 21, (1 << 21) - 1)));
}

/* A dimension of 0 makes the element count 0 wherever it stands: the
 * dimensions before it must not be refused as an overflow. */
Test(extent, zero_dimension_after_large_ones_is_empty)
{
    const int late[8] = {INT_MAX, INT_MAX, INT_MAX, 0, INT_MAX, INT_MAX, INT_MAX, INT_MAX};
    const int early[8] = {0, INT_MAX, INT_MAX, INT_MAX, INT_MAX, INT_MAX, INT_MAX, INT_MAX};
    ASSERT_OK(amp_extent_validate(amp_extent_make(8, early)));
    ASSERT_OK(amp_extent_validate(amp_extent_make(8, late)));
    ASSERT_OK(amp_extent_validate(amp_extent_4d(INT_MAX, INT_MAX, INT_MAX, 0)));
    cr_assert_eq(amp_extent_size(amp_extent_make(8, late)), 0);
    cr_assert_eq(amp_extent_size(amp_extent_4d(INT_MAX, INT_MAX, INT_MAX, 0)), 0);
    /* A negative dimension stays invalid, after an overflow too. */
    ASSERT_STATUS(amp_extent_validate(amp_extent_4d(INT_MAX, INT_MAX, INT_MAX, -1)), AMP_ERROR_INVALID_EXTENT);
    cr_assert_eq(amp_extent_size(amp_extent_4d(INT_MAX, INT_MAX, INT_MAX, -1)), -1);
    cr_assert_eq(amp_extent_size(amp_extent_4d(INT_MAX, INT_MAX, INT_MAX, INT_MAX)), -1);
}

Test(extent, contains)
{
    amp_extent e = amp_extent_2d(3, 4);
    cr_assert(amp_extent_contains(e, amp_index_2d(0, 0)));
    cr_assert(amp_extent_contains(e, amp_index_2d(2, 3)));
    cr_assert_not(amp_extent_contains(e, amp_index_2d(3, 0)));
    cr_assert_not(amp_extent_contains(e, amp_index_2d(0, 4)));
    cr_assert_not(amp_extent_contains(e, amp_index_2d(-1, 0)));
    cr_assert_not(amp_extent_contains(e, amp_index_2d(0, -1)));
    cr_assert_not(amp_extent_contains(e, amp_index_2d(INT_MIN, INT_MIN)));
    /* Rank mismatch. */
    cr_assert_not(amp_extent_contains(e, amp_index_1d(0)));
    cr_assert_not(amp_extent_contains(e, amp_index_3d(0, 0, 0)));

    cr_assert(amp_extent_contains(amp_extent_1d(1), amp_index_1d(0)));
    cr_assert_not(amp_extent_contains(amp_extent_1d(1), amp_index_1d(1)));
    amp_extent e4 = amp_extent_4d(2, 3, 4, 5);
    cr_assert(amp_extent_contains(e4, amp_index_4d(1, 2, 3, 4)));
    cr_assert_not(amp_extent_contains(e4, amp_index_4d(1, 2, 3, 5)));
    cr_assert_not(amp_extent_contains(e4, amp_index_4d(1, 2, -3, 4)));
    cr_assert(amp_extent_contains(amp_extent_3d(2, 2, 2), amp_index_3d(1, 1, 1)));
    cr_assert_not(amp_extent_contains(amp_extent_3d(2, 2, 2), amp_index_3d(1, 2, 1)));
}

Test(extent, equality)
{
    cr_assert(amp_extent_equal(amp_extent_2d(3, 4), amp_extent_2d(3, 4)));
    cr_assert_not(amp_extent_equal(amp_extent_2d(3, 4), amp_extent_2d(4, 3)));
    cr_assert_not(amp_extent_equal(amp_extent_1d(3), amp_extent_2d(3, 1)));
    cr_assert(amp_extent_equal(amp_extent_4d(1, 2, 3, 4), amp_extent_4d(1, 2, 3, 4)));
    cr_assert_not(amp_extent_equal(amp_extent_4d(1, 2, 3, 4), amp_extent_4d(1, 2, 3, 5)));
    cr_assert(amp_index_equal(amp_index_3d(-1, 0, 1), amp_index_3d(-1, 0, 1)));
    cr_assert_not(amp_index_equal(amp_index_3d(-1, 0, 1), amp_index_3d(-1, 0, 2)));
    cr_assert_not(amp_index_equal(amp_index_1d(0), amp_index_2d(0, 0)));
}

Test(index, add_sub)
{
    amp_index r;
    ASSERT_OK(amp_index_add(amp_index_3d(1, 2, 3), amp_index_3d(10, -20, 30), &r));
    cr_assert(amp_index_equal(r, amp_index_3d(11, -18, 33)));
    ASSERT_OK(amp_index_sub(amp_index_3d(1, 2, 3), amp_index_3d(10, -20, 30), &r));
    cr_assert(amp_index_equal(r, amp_index_3d(-9, 22, -27)));
    ASSERT_OK(amp_index_add(amp_index_4d(1, 1, 1, 1), amp_index_4d(1, 2, 3, 4), &r));
    cr_assert(amp_index_equal(r, amp_index_4d(2, 3, 4, 5)));
    ASSERT_OK(amp_index_add(amp_index_1d(INT_MAX - 1), amp_index_1d(1), &r));
    cr_assert_eq(r.v[0], INT_MAX);
    ASSERT_OK(amp_index_sub(amp_index_1d(INT_MIN + 1), amp_index_1d(1), &r));
    cr_assert_eq(r.v[0], INT_MIN);

    amp_extent e;
    ASSERT_OK(amp_extent_add(amp_extent_2d(3, 4), amp_index_2d(1, 2), &e));
    assert_extent(e, 2, (int[]){4, 6});
    ASSERT_OK(amp_extent_sub(amp_extent_2d(3, 4), amp_index_2d(1, 2), &e));
    assert_extent(e, 2, (int[]){2, 2});
}

Test(index, add_sub_overflow)
{
    amp_index r = garbage_index();
    ASSERT_STATUS(amp_index_add(amp_index_2d(0, INT_MAX), amp_index_2d(0, 1), &r), AMP_ERROR_OUT_OF_BOUNDS);
    ASSERT_INDEX_ZEROED(r);
    r = garbage_index();
    ASSERT_STATUS(amp_index_add(amp_index_1d(INT_MIN), amp_index_1d(-1), &r), AMP_ERROR_OUT_OF_BOUNDS);
    ASSERT_INDEX_ZEROED(r);
    r = garbage_index();
    ASSERT_STATUS(amp_index_sub(amp_index_1d(INT_MIN), amp_index_1d(1), &r), AMP_ERROR_OUT_OF_BOUNDS);
    ASSERT_INDEX_ZEROED(r);
    r = garbage_index();
    ASSERT_STATUS(amp_index_sub(amp_index_3d(0, 0, INT_MAX), amp_index_3d(0, 0, -1), &r),
                  AMP_ERROR_OUT_OF_BOUNDS);
    ASSERT_INDEX_ZEROED(r);

    amp_extent e = {.rank = 77};
    ASSERT_STATUS(amp_extent_add(amp_extent_1d(INT_MAX), amp_index_1d(1), &e), AMP_ERROR_OUT_OF_BOUNDS);
    cr_assert_eq(e.rank, 0);
    e.rank = 77;
    ASSERT_STATUS(amp_extent_sub(amp_extent_2d(1, INT_MAX), amp_index_2d(0, -1), &e), AMP_ERROR_OUT_OF_BOUNDS);
    cr_assert_eq(e.rank, 0);
}

Test(index, add_sub_rank_mismatch_and_null)
{
    amp_index r = garbage_index();
    ASSERT_STATUS(amp_index_add(amp_index_2d(1, 2), amp_index_3d(1, 2, 3), &r), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_INDEX_ZEROED(r);
    r = garbage_index();
    ASSERT_STATUS(amp_index_sub(amp_index_1d(1), amp_index_4d(1, 2, 3, 4), &r), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_INDEX_ZEROED(r);
    amp_extent e = {.rank = 77};
    ASSERT_STATUS(amp_extent_add(amp_extent_2d(1, 2), amp_index_1d(1), &e), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_eq(e.rank, 0);
    e.rank = 77;
    ASSERT_STATUS(amp_extent_sub(amp_extent_3d(1, 2, 3), amp_index_2d(1, 1), &e), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_eq(e.rank, 0);

    ASSERT_STATUS(amp_index_add(amp_index_1d(1), amp_index_1d(1), NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_index_sub(amp_index_1d(1), amp_index_1d(1), NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_extent_add(amp_extent_1d(1), amp_index_1d(1), NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_extent_sub(amp_extent_1d(1), amp_index_1d(1), NULL), AMP_ERROR_INVALID_ARGUMENT);
}

/* -------------------------------------------------------- tiled extents */

Test(tiled, seed_999x666_by_16x16)
{
    amp_tiled_extent t, p, tr;
    ASSERT_OK(amp_extent_tile(amp_extent_2d(999, 666), (int[]){16, 16}, &t));
    assert_extent(t.extent, 2, (int[]){999, 666});
    cr_assert_eq(t.tile[0], 16);
    cr_assert_eq(t.tile[1], 16);
    cr_assert_not(amp_tiled_extent_is_divisible(t));

    ASSERT_OK(amp_tiled_extent_pad(t, &p));
    assert_extent(p.extent, 2, (int[]){1008, 672});
    cr_assert_eq(p.tile[0], 16);
    cr_assert_eq(p.tile[1], 16);
    cr_assert(amp_tiled_extent_is_divisible(p));

    ASSERT_OK(amp_tiled_extent_truncate(t, &tr));
    assert_extent(tr.extent, 2, (int[]){992, 656});
    cr_assert_eq(tr.tile[0], 16);
    cr_assert_eq(tr.tile[1], 16);
    cr_assert(amp_tiled_extent_is_divisible(tr));
}

Test(tiled, divisible_stays_put)
{
    amp_tiled_extent t, p, tr;
    ASSERT_OK(amp_extent_tile(amp_extent_2d(64, 32), (int[]){16, 8}, &t));
    cr_assert(amp_tiled_extent_is_divisible(t));
    ASSERT_OK(amp_tiled_extent_pad(t, &p));
    ASSERT_OK(amp_tiled_extent_truncate(t, &tr));
    assert_extent(p.extent, 2, (int[]){64, 32});
    assert_extent(tr.extent, 2, (int[]){64, 32});
}

Test(tiled, rank1)
{
    amp_tiled_extent t, p, tr;
    ASSERT_OK(amp_extent_tile(amp_extent_1d(1000), (int[]){256}, &t));
    cr_assert_eq(t.tile[0], 256);
    cr_assert_not(amp_tiled_extent_is_divisible(t));
    ASSERT_OK(amp_tiled_extent_pad(t, &p));
    assert_extent(p.extent, 1, (int[]){1024});
    cr_assert(amp_tiled_extent_is_divisible(p));
    ASSERT_OK(amp_tiled_extent_truncate(t, &tr));
    assert_extent(tr.extent, 1, (int[]){768});
    cr_assert(amp_tiled_extent_is_divisible(tr));
    /* Tile of the full 1024 threads. */
    ASSERT_OK(amp_extent_tile(amp_extent_1d(4096), (int[]){AMP_MAX_TILE_THREADS}, &t));
    cr_assert(amp_tiled_extent_is_divisible(t));
}

Test(tiled, rank3)
{
    amp_tiled_extent t, p, tr;
    ASSERT_OK(amp_extent_tile(amp_extent_3d(10, 20, 30), (int[]){2, 4, 8}, &t));
    cr_assert_eq(t.tile[0], 2);
    cr_assert_eq(t.tile[1], 4);
    cr_assert_eq(t.tile[2], 8);
    cr_assert_not(amp_tiled_extent_is_divisible(t));
    ASSERT_OK(amp_tiled_extent_pad(t, &p));
    assert_extent(p.extent, 3, (int[]){10, 20, 32});
    cr_assert(amp_tiled_extent_is_divisible(p));
    ASSERT_OK(amp_tiled_extent_truncate(t, &tr));
    assert_extent(tr.extent, 3, (int[]){10, 20, 24});
    cr_assert(amp_tiled_extent_is_divisible(tr));
    ASSERT_OK(amp_extent_tile(amp_extent_3d(7, 9, 11), (int[]){4, 4, 4}, &t));
    ASSERT_OK(amp_tiled_extent_pad(t, &p));
    assert_extent(p.extent, 3, (int[]){8, 12, 12});
    ASSERT_OK(amp_tiled_extent_truncate(t, &tr));
    assert_extent(tr.extent, 3, (int[]){4, 8, 8});
}

Test(tiled, bad_rank)
{
    amp_tiled_extent t = garbage_tiled();
    ASSERT_STATUS(amp_extent_tile(amp_extent_4d(16, 16, 16, 16), (int[]){4, 4, 4, 4}, &t),
                  AMP_ERROR_INVALID_COMPUTE_DOMAIN);
    ASSERT_TILED_ZEROED(t);

    /* Rank 0 and 5 are bad extents as well as bad tile ranks: either status
     * describes the fault, but it must fail and zero the out-param. */
    amp_extent e = amp_extent_1d(16);
    const int ranks[] = {0, 5, -1};
    for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; ++i) {
        e.rank = ranks[i];
        t = garbage_tiled();
        amp_status st = amp_extent_tile(e, (int[]){4, 4, 4, 4, 4}, &t);
        cr_assert(st == AMP_ERROR_INVALID_COMPUTE_DOMAIN || st == AMP_ERROR_INVALID_EXTENT,
                  "tile of a rank %d extent returned %s", ranks[i], amp_status_name(st));
        ASSERT_TILED_ZEROED(t);
    }
}

Test(tiled, bad_tile_sizes)
{
    amp_tiled_extent t = garbage_tiled();
    ASSERT_STATUS(amp_extent_tile(amp_extent_2d(32, 32), (int[]){16, 0}, &t), AMP_ERROR_INVALID_COMPUTE_DOMAIN);
    ASSERT_TILED_ZEROED(t);
    t = garbage_tiled();
    ASSERT_STATUS(amp_extent_tile(amp_extent_1d(32), (int[]){-4}, &t), AMP_ERROR_INVALID_COMPUTE_DOMAIN);
    ASSERT_TILED_ZEROED(t);
    ASSERT_MSG_HAS("-4");
    t = garbage_tiled();
    ASSERT_STATUS(amp_extent_tile(amp_extent_3d(8, 8, 8), (int[]){2, -2, 2}, &t),
                  AMP_ERROR_INVALID_COMPUTE_DOMAIN);
    ASSERT_TILED_ZEROED(t);
}

/* C++ AMP: a tiled_extent is a plain value; only a launch is held to the
 * hardware's threads per tile (test_conformance.c checks the launch). */
Test(tiled, many_threads_per_tile_are_a_valid_value)
{
    amp_tiled_extent t = garbage_tiled(), p;
    ASSERT_OK(amp_extent_tile(amp_extent_2d(64, 64), (int[]){64, 32}, &t));
    cr_assert(t.tile[0] == 64 && t.tile[1] == 32);
    ASSERT_OK(amp_extent_tile(amp_extent_1d(4096), (int[]){AMP_MAX_TILE_THREADS + 1}, &t));
    ASSERT_OK(amp_extent_tile(amp_extent_3d(16, 16, 16), (int[]){16, 16, 8}, &t));
    /* 65536 * 65536 wraps to 0 in 32-bit arithmetic: a value all the same. */
    ASSERT_OK(amp_extent_tile(amp_extent_2d(65536, 65536), (int[]){65536, 65536}, &t));
    ASSERT_OK(amp_extent_tile(amp_extent_2d(3000, 2500), (int[]){1000, 1000}, &t));
    cr_assert_not(amp_tiled_extent_is_divisible(t));
    ASSERT_OK(amp_tiled_extent_pad(t, &p));
    assert_extent(p.extent, 2, (int[]){3000, 3000});
    ASSERT_OK(amp_tiled_extent_truncate(t, &p));
    assert_extent(p.extent, 2, (int[]){3000, 2000});
    cr_assert(amp_tiled_extent_is_divisible(p));
}

Test(tiled, bad_extent)
{
    amp_tiled_extent t = garbage_tiled();
    ASSERT_STATUS(amp_extent_tile(amp_extent_1d(-32), (int[]){16}, &t), AMP_ERROR_INVALID_EXTENT);
    ASSERT_TILED_ZEROED(t);
    ASSERT_MSG_HAS("-32");
}

Test(tiled, null_arguments)
{
    amp_tiled_extent t = garbage_tiled();
    ASSERT_STATUS(amp_extent_tile(amp_extent_1d(16), NULL, &t), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_TILED_ZEROED(t);
    ASSERT_STATUS(amp_extent_tile(amp_extent_1d(16), (int[]){16}, NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_extent_tile(amp_extent_1d(16), (int[]){16}, &t));
    ASSERT_STATUS(amp_tiled_extent_pad(t, NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_tiled_extent_truncate(t, NULL), AMP_ERROR_INVALID_ARGUMENT);
}

Test(tiled, pad_past_int_max)
{
    amp_tiled_extent t, p = garbage_tiled();
    ASSERT_OK(amp_extent_tile(amp_extent_1d(INT_MAX - 1), (int[]){16}, &t));
    ASSERT_STATUS(amp_tiled_extent_pad(t, &p), AMP_ERROR_INVALID_EXTENT);
    ASSERT_TILED_ZEROED(p);
    /* Truncation of the same extent is fine: 2^31 - 16. */
    ASSERT_OK(amp_tiled_extent_truncate(t, &p));
    assert_extent(p.extent, 1, (int[]){INT_MAX - 15});
    /* Second dimension overflows. */
    p = garbage_tiled();
    ASSERT_OK(amp_extent_tile(amp_extent_2d(3, INT_MAX), (int[]){1, 32}, &t));
    ASSERT_STATUS(amp_tiled_extent_pad(t, &p), AMP_ERROR_INVALID_EXTENT);
    ASSERT_TILED_ZEROED(p);
    /* Every dimension fits, their product does not: {INT_MAX, INT_MAX, 1}
     * (2^62 elements) padded to {INT_MAX, INT_MAX, 3} passes INT64_MAX. It
     * came back AMP_OK with an extent amp_extent_validate refuses. */
    p = garbage_tiled();
    ASSERT_OK(amp_extent_tile(amp_extent_3d(INT_MAX, INT_MAX, 1), (int[]){1, 1, 3}, &t));
    ASSERT_STATUS(amp_tiled_extent_pad(t, &p), AMP_ERROR_INVALID_EXTENT);
    cr_assert(strstr(amp_last_error(), "INT64_MAX"), "%s", amp_last_error());
    ASSERT_TILED_ZEROED(p);
    /* Truncated, the same extent stays as it is. */
    ASSERT_OK(amp_tiled_extent_truncate(t, &p));
    assert_extent(p.extent, 3, (int[]){INT_MAX, INT_MAX, 0});
}

/* Truncating below one tile leaves an empty domain (C++ AMP: a valid
 * extent with size() 0), and an empty extent tiles, pads and truncates to
 * itself. */
Test(tiled, truncate_to_zero)
{
    amp_tiled_extent t, p = garbage_tiled();
    ASSERT_OK(amp_extent_tile(amp_extent_1d(5), (int[]){16}, &t));
    ASSERT_OK(amp_tiled_extent_truncate(t, &p));
    assert_extent(p.extent, 1, (int[]){0});
    cr_assert(amp_tiled_extent_is_divisible(p));
    /* Padding it is fine. */
    ASSERT_OK(amp_tiled_extent_pad(t, &p));
    assert_extent(p.extent, 1, (int[]){16});
    ASSERT_OK(amp_extent_tile(amp_extent_2d(100, 7), (int[]){4, 8}, &t));
    ASSERT_OK(amp_tiled_extent_truncate(t, &p));
    assert_extent(p.extent, 2, (int[]){100, 0});
    cr_assert_eq(amp_extent_size(p.extent), 0);
    ASSERT_OK(amp_extent_tile(amp_extent_2d(0, 16), (int[]){16, 16}, &t));
    cr_assert(amp_tiled_extent_is_divisible(t));
    ASSERT_OK(amp_tiled_extent_pad(t, &p));
    assert_extent(p.extent, 2, (int[]){0, 16});
}

Test(tiled, hand_made_tiled_extents_are_checked)
{
    /* A struct filled in by hand (not from amp_extent_tile) with a zero tile
     * must not divide by zero. */
    amp_tiled_extent t = {.extent = amp_extent_1d(16), .tile = {0, 0, 0}};
    cr_assert_not(amp_tiled_extent_is_divisible(t));
    amp_tiled_extent p = garbage_tiled();
    cr_assert_neq(amp_tiled_extent_pad(t, &p), AMP_OK);
    ASSERT_TILED_ZEROED(p);
    p = garbage_tiled();
    cr_assert_neq(amp_tiled_extent_truncate(t, &p), AMP_OK);
    ASSERT_TILED_ZEROED(p);
    /* An invalid extent is never divisible. */
    amp_tiled_extent z = {.extent = amp_extent_1d(-16), .tile = {16, 0, 0}};
    cr_assert_not(amp_tiled_extent_is_divisible(z));
    amp_tiled_extent r4 = {.extent = amp_extent_4d(4, 4, 4, 4), .tile = {2, 2, 2}};
    cr_assert_not(amp_tiled_extent_is_divisible(r4));
}

/* ------------------------------------------------------- view shapes */

/* An empty section may start at the view's extent in every dimension; over
 * a span near 2^63 bytes (a view of 1-byte elements, extent {2, INT_MAX,
 * INT_MAX}, over a small buffer: nothing reads it) its address passes
 * INT64_MAX. The offset wrapped (signed overflow) and amp_array_view_data
 * gave a pointer 2^62 bytes before the buffer; it starts where the view
 * does now. A section with elements keeps its exact address. */
Test(shape, an_empty_section_past_a_huge_span_starts_where_its_view_does)
{
    static char buf[64];
    amp_array_view *v = NULL, *s = NULL;
    ASSERT_OK(amp_array_view_create(buf, 1, amp_extent_3d(2, INT_MAX, INT_MAX), AMP_READ_WRITE, &v));
    ASSERT_OK(amp_array_view_section(v, amp_index_3d(2, INT_MAX, INT_MAX), amp_extent_3d(0, 0, 0), &s));
    cr_assert_eq(amp_array_view_data(s), (void *)buf, "data %p, buffer %p", amp_array_view_data(s), (void *)buf);
    ASSERT_OK(amp_array_view_destroy(s));
    /* Without a wrap, an empty section's address is its origin's. */
    ASSERT_OK(amp_array_view_section(v, amp_index_3d(0, 0, 5), amp_extent_3d(0, 0, 0), &s));
    cr_assert_eq(amp_array_view_data(s), (void *)(buf + 5));
    ASSERT_OK(amp_array_view_destroy(s));
    ASSERT_OK(amp_array_view_section(v, amp_index_3d(0, 0, 7), amp_extent_3d(1, 1, 2), &s));
    cr_assert_eq(amp_array_view_data(s), (void *)(buf + 7));
    ASSERT_OK(amp_array_view_destroy(s));
    ASSERT_OK(amp_array_view_destroy(v));
}

/* The same for a projection: a row of an empty section that starts past a
 * span near 2^63 bytes (a view of 3 x 1 x 1 elements of 2^61 bytes; the
 * section at (1, 1, 1) with extent (2, 0, 0) starts 3 x 2^61 bytes in)
 * would start at 2^63. The sum wrapped to -2^63 and amp_array_view_data
 * gave a pointer that far before the buffer. */
Test(shape, an_empty_projection_past_a_huge_span_starts_where_its_view_does)
{
    static char buf[64];
    amp_array_view *v = NULL, *s = NULL, *p = NULL;
    ASSERT_OK(amp_array_view_create(buf, (size_t)1 << 61, amp_extent_3d(3, 1, 1), AMP_READ_WRITE, &v));
    ASSERT_OK(amp_array_view_section(v, amp_index_3d(1, 1, 1), amp_extent_3d(2, 0, 0), &s));
    char *start = (char *)amp_array_view_data(s);
    ASSERT_OK(amp_array_view_project(s, 1, &p));
    cr_assert_eq((char *)amp_array_view_data(p), start, "row 1 of the empty section: data %p, the section's %p",
                 amp_array_view_data(p), (void *)start);
    ASSERT_OK(amp_array_view_destroy(p));
    /* Row 0 starts where the section does, as any first row. */
    ASSERT_OK(amp_array_view_project(s, 0, &p));
    cr_assert_eq((char *)amp_array_view_data(p), start);
    ASSERT_OK(amp_array_view_destroy(p));
    ASSERT_OK(amp_array_view_destroy(s));
    ASSERT_OK(amp_array_view_destroy(v));
}

/* A section that leaves its view is refused naming the dimension and the
 * bound it breaks: a negative origin as negative (it was said to pass the
 * extent: "origin -1 + extent 20 passes the view's extent 1000"). */
Test(shape, a_section_outside_its_view_is_refused_naming_the_bound)
{
    static int x[1000];
    amp_array_view *v = NULL, *s = (amp_array_view *)1;
    ASSERT_OK(amp_array_view_create(x, sizeof(int), amp_extent_2d(10, 100), AMP_READ_WRITE, &v));
    ASSERT_STATUS(amp_array_view_section(v, amp_index_2d(0, -1), amp_extent_2d(1, 20), &s), AMP_ERROR_OUT_OF_BOUNDS);
    cr_assert_null(s);
    cr_assert(strstr(amp_last_error(), "dimension 1: origin -1 is negative"), "%s", amp_last_error());
    ASSERT_STATUS(amp_array_view_section(v, amp_index_2d(5, 0), amp_extent_2d(6, 100), &s), AMP_ERROR_OUT_OF_BOUNDS);
    cr_assert(strstr(amp_last_error(), "dimension 0: origin 5 + extent 6 passes the view's extent 10"), "%s",
              amp_last_error());
    ASSERT_OK(amp_array_view_destroy(v));
}

/* An empty section whose origin is its view's extent starts past the
 * data's end: its host pointer is the end (one past the last element),
 * never an address beyond it; an empty section inside the data keeps its
 * own start. */
Test(shape, an_empty_section_past_the_end_points_at_the_end)
{
    static int x[16];
    amp_array_view *v = NULL, *corner = NULL, *edge = NULL, *row = NULL;
    ASSERT_OK(amp_array_view_create(x, sizeof(int), amp_extent_2d(4, 4), AMP_READ_WRITE, &v));
    ASSERT_OK(amp_array_view_section(v, amp_index_2d(4, 4), amp_extent_2d(0, 0), &corner));
    cr_assert_eq((int *)amp_array_view_data(corner), x + 16, "the corner section's data: x + %td",
                 (int *)amp_array_view_data(corner) - x);
    ASSERT_OK(amp_array_view_section(v, amp_index_2d(2, 4), amp_extent_2d(2, 0), &edge));
    cr_assert_eq((int *)amp_array_view_data(edge), x + 12, "the edge section's data: x + %td",
                 (int *)amp_array_view_data(edge) - x);
    ASSERT_OK(amp_array_view_section(v, amp_index_2d(4, 0), amp_extent_2d(0, 4), &row));
    cr_assert_eq((int *)amp_array_view_data(row), x + 16);
    ASSERT_OK(amp_array_view_destroy(row));
    ASSERT_OK(amp_array_view_destroy(edge));
    ASSERT_OK(amp_array_view_destroy(corner));
    ASSERT_OK(amp_array_view_destroy(v));
}

/* A view whose elements end near 2^63 bytes into its data: two views of
 * one element of 3 x 2^60 bytes each, the same element reinterpreted from
 * one of 3 x 2^61 bytes, overlap. Finding the storage element of the
 * view's last byte wrapped past 2^63, the view's part of the data came
 * out empty, and the copy of a view onto its duplicate was not refused: it
 * reached memmove with 3 x 2^61 bytes. */
Test(shape, views_ending_near_2_to_the_63_bytes_are_found_to_overlap)
{
    static char buf[64];
    amp_array_view *v = NULL, *a = NULL, *b = NULL;
    ASSERT_OK(amp_array_view_create(buf, (size_t)3 << 61, amp_extent_1d(1), AMP_READ_WRITE, &v));
    ASSERT_OK(amp_array_view_reinterpret_as(v, (size_t)3 << 60, &a));
    ASSERT_OK(amp_array_view_duplicate(a, &b));
    ASSERT_STATUS(amp_copy_view(a, b), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "overlap"), "%s", amp_last_error());
    ASSERT_OK(amp_array_view_destroy(b));
    ASSERT_OK(amp_array_view_destroy(a));
    ASSERT_OK(amp_array_view_destroy(v));
}

/* An empty section has no elements, so none that fail to be one run: it
 * reshapes (to an empty view) whatever strides it inherited. */
Test(shape, an_empty_section_reshapes)
{
    static int x[16];
    amp_array_view *v = NULL, *col = NULL, *w = NULL;
    ASSERT_OK(amp_array_view_create(x, sizeof(int), amp_extent_2d(4, 4), AMP_READ_WRITE, &v));
    ASSERT_OK(amp_array_view_section(v, amp_index_2d(0, 1), amp_extent_2d(4, 0), &col));
    ASSERT_OK(amp_array_view_view_as(col, amp_extent_2d(0, 3), &w));
    amp_extent e;
    ASSERT_OK(amp_array_view_get_extent(w, &e));
    cr_assert(e.rank == 2 && e.v[0] == 0 && e.v[1] == 3, "extent %d: %d x %d", e.rank, e.v[0], e.v[1]);
    ASSERT_OK(amp_array_view_destroy(w));
    w = NULL;
    ASSERT_OK(amp_array_view_reinterpret_as(col, 2, &w));
    ASSERT_OK(amp_array_view_get_extent(w, &e));
    cr_assert(e.rank == 1 && e.v[0] == 0, "extent %d: %d", e.rank, e.v[0]);
    ASSERT_OK(amp_array_view_destroy(w));
    /* An element size amp_array_view_create refuses is refused here too,
     * though an empty view has no bytes to bound it (it was taken). */
    w = NULL;
    amp_array_view *made = NULL;
    cr_assert_neq(amp_array_view_create(x, SIZE_MAX, amp_extent_1d(0), AMP_READ_WRITE, &made), AMP_OK);
    cr_assert_null(made);
    ASSERT_STATUS(amp_array_view_reinterpret_as(col, SIZE_MAX, &w), AMP_ERROR_INVALID_EXTENT);
    cr_assert_null(w);
    /* More elements than none: refused as any view_as past the view. */
    ASSERT_STATUS(amp_array_view_view_as(col, amp_extent_1d(1), &w), AMP_ERROR_INVALID_EXTENT);
    cr_assert_null(w);
    ASSERT_OK(amp_array_view_destroy(col));
    ASSERT_OK(amp_array_view_destroy(v));
}

/* reinterpret_as refuses a shape whose elements would not start on their
 * alignment (the largest power of two dividing their size, at most 16) in
 * the data, naming the offset and the element size: a float section from
 * element 1 as doubles was taken, and a GPU's 8-byte loads from it fault
 * (for the whole context). Aligned sections, elements whose alignment is
 * smaller than their size, and empty views reshape. */
Test(shape, a_reinterpretation_must_start_on_its_elements_alignment)
{
    static _Alignas(64) float h[64];
    amp_array_view *v = NULL, *s = NULL, *w = NULL;
    ASSERT_OK(amp_array_view_create(h, 4, amp_extent_1d(64), AMP_READ_WRITE, &v));
    struct {
        int at, n;
        size_t elem;
        bool ok;
    } cases[] = {
        {1, 8, 8, false},  /* 4 bytes in: doubles need 8 */
        {2, 8, 8, true},   /* 8 bytes in */
        {1, 6, 12, true},  /* 12-byte elements align to 4 */
        {2, 8, 16, false}, /* 8 bytes in: 16-byte elements need 16 */
        {4, 8, 16, true},
        {4, 16, 32, true}, /* at most 16 */
        {1, 0, 8, true},   /* empty: nothing is loaded */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        ASSERT_OK(amp_array_view_section(v, amp_index_1d(cases[i].at), amp_extent_1d(cases[i].n), &s));
        w = (amp_array_view *)1;
        amp_status st = amp_array_view_reinterpret_as(s, cases[i].elem, &w);
        if (cases[i].ok) {
            cr_assert_eq(st, AMP_OK, "case %zu: %s: %s", i, amp_status_name(st), amp_last_error());
            cr_assert_eq(amp_array_view_data(w), (void *)(h + cases[i].at), "case %zu", i);
            ASSERT_OK(amp_array_view_destroy(w));
        } else {
            cr_assert_eq(st, AMP_ERROR_INVALID_ARGUMENT, "case %zu: %s", i, amp_status_name(st));
            cr_assert_null(w, "case %zu", i);
            char want[160];
            snprintf(want, sizeof want, "starts %d bytes into its data, not a multiple of %zu, the alignment of %zu-byte",
                     4 * cases[i].at, cases[i].elem > 16 ? (size_t)16 : cases[i].elem, cases[i].elem);
            cr_assert(strstr(amp_last_error(), "amp_array_view_reinterpret_as") && strstr(amp_last_error(), want),
                      "case %zu: %s", i, amp_last_error());
        }
        ASSERT_OK(amp_array_view_destroy(s));
    }
    ASSERT_OK(amp_array_view_destroy(v));
}

/* A projection of an empty view (hipamp.h, empty extents): out of bounds
 * where the first dimension is 0 (there is no row to take), else an empty
 * view of the rest ({3, 0}[1] is {0}, as in C++ AMP); get is out of
 * bounds either way. The header said every projection of an empty view
 * was out of bounds. */
Test(shape, a_projection_of_an_empty_view)
{
    amp_array_view *e30 = NULL, *e03 = NULL, *p = NULL;
    float x = 0.0f;
    ASSERT_OK(amp_array_view_create(NULL, 4, amp_extent_2d(3, 0), AMP_READ_WRITE, &e30));
    ASSERT_OK(amp_array_view_create(NULL, 4, amp_extent_2d(0, 3), AMP_READ_WRITE, &e03));
    ASSERT_STATUS(amp_array_view_get(e30, amp_index_2d(1, 0), &x), AMP_ERROR_OUT_OF_BOUNDS);
    ASSERT_OK(amp_array_view_project(e30, 1, &p));
    amp_extent e;
    ASSERT_OK(amp_array_view_get_extent(p, &e));
    cr_assert(e.rank == 1 && e.v[0] == 0, "extent rank %d {%d}", e.rank, e.v[0]);
    ASSERT_OK(amp_array_view_destroy(p));
    p = NULL;
    ASSERT_STATUS(amp_array_view_project(e30, 3, &p), AMP_ERROR_OUT_OF_BOUNDS);
    cr_assert(strstr(amp_last_error(), "projection index 3 outside 0..2"), "%s", amp_last_error());
    cr_assert_null(p);
    ASSERT_STATUS(amp_array_view_project(e03, 0, &p), AMP_ERROR_OUT_OF_BOUNDS);
    cr_assert(strstr(amp_last_error(), "projection index 0: the view's first dimension is 0"), "%s", amp_last_error());
    cr_assert_null(p);
    ASSERT_OK(amp_array_view_destroy(e03));
    ASSERT_OK(amp_array_view_destroy(e30));
}

/* A NULL pointer is allowed for an empty extent only; with an invalid
 * extent, the extent is what is wrong (named), not the pointer. */
Test(shape, an_invalid_extent_is_named_before_a_null_pointer)
{
    amp_array_view *v = NULL;
    ASSERT_STATUS(amp_array_view_create(NULL, 4, amp_extent_2d(3, -5), AMP_READ_WRITE, &v), AMP_ERROR_INVALID_EXTENT);
    ASSERT_MSG_HAS("-5");
    cr_assert_null(v);
    ASSERT_STATUS(amp_array_view_create(NULL, 4, amp_extent_2d(3, 5), AMP_READ_WRITE, &v), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_MSG_HAS("host");
    amp_array *a = NULL;
    ASSERT_STATUS(amp_array_create_from_native(NULL, NULL, 4, amp_extent_1d(-7), &a), AMP_ERROR_INVALID_EXTENT);
    ASSERT_MSG_HAS("-7");
    cr_assert_null(a);
}

/* ------------------------------------------------------- kernel args */

Test(args, constructors)
{
    int dummy_view, dummy_array;
    amp_array_view *v = (amp_array_view *)(void *)&dummy_view;
    amp_array *a = (amp_array *)(void *)&dummy_array;

    amp_arg x = amp_arg_view(v);
    cr_assert_eq(x.kind, AMP_ARG_VIEW);
    cr_assert_eq(x.u.view, v);
    x = amp_arg_array(a);
    cr_assert_eq(x.kind, AMP_ARG_ARRAY);
    cr_assert_eq(x.u.array, a);
    x = amp_arg_int32(-123456789);
    cr_assert_eq(x.kind, AMP_ARG_INT32);
    cr_assert_eq(x.u.i32, -123456789);
    x = amp_arg_uint32(4000000000u);
    cr_assert_eq(x.kind, AMP_ARG_UINT32);
    cr_assert_eq(x.u.u32, 4000000000u);
    x = amp_arg_int64(-(INT64_C(1) << 40) - 3);
    cr_assert_eq(x.kind, AMP_ARG_INT64);
    cr_assert_eq(x.u.i64, -(INT64_C(1) << 40) - 3);
    x = amp_arg_float32(1.5f);
    cr_assert_eq(x.kind, AMP_ARG_FLOAT32);
    cr_assert_eq(x.u.f32, 1.5f);
    x = amp_arg_float64(-2.25e300);
    cr_assert_eq(x.kind, AMP_ARG_FLOAT64);
    cr_assert_eq(x.u.f64, -2.25e300);
    x = amp_arg_view(NULL);
    cr_assert_eq(x.kind, AMP_ARG_VIEW);
    cr_assert_null(x.u.view);
}

/* ------------------------------------------------------------ environment
 * AMP_* settings (lib/base/env.c): a malformed or out-of-range value falls
 * back to the default, and stderr says so once for each variable, naming
 * the variable, its value, what is accepted and the default. The CPU
 * accelerator reads its settings when first found (in this test's process:
 * Criterion forks one per test, before any accelerator is touched), and
 * AMP_CPU_UNIFIED at every amp_accelerator_get_info. */

/* What stderr received while the CPU accelerator was found and its info
 * read twice; *info the second. */
static char *stderr_of_cpu_setup(amp_accelerator_info *info)
{
    char path[] = "/tmp/hipamp-core-stderr-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0, "mkstemp: %s", strerror(errno));
    unlink(path);
    fflush(stderr);
    int saved = dup(2);
    cr_assert_geq(saved, 0);
    cr_assert_eq(dup2(fd, 2), 2);
    amp_accelerator *acc = NULL;
    amp_status st = amp_accelerator_find("cpu", &acc);
    amp_status st1 = st ? st : amp_accelerator_get_info(acc, info);
    amp_status st2 = st1 ? st1 : amp_accelerator_get_info(acc, info);
    fflush(stderr);
    cr_assert_eq(dup2(saved, 2), 2);
    close(saved);
    ASSERT_OK(st2);
    off_t n = lseek(fd, 0, SEEK_END);
    cr_assert_geq(n, 0);
    char *text = test_xmalloc((size_t)n + 1);
    cr_assert_eq(pread(fd, text, (size_t)n, 0), n);
    text[n] = '\0';
    close(fd);
    return text;
}

static int count_of(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

/* The line that names name=value (quoted), once, holding every one of
 * the NULL-terminated parts. */
static void expect_said_once(const char *err, const char *name, const char *value, const char *const *parts)
{
    char head[160];
    snprintf(head, sizeof head, "hipamp: %s=\"%s\" is not ", name, value);
    cr_expect_eq(count_of(err, head), 1, "\"%s\" said %d times, want once:\n%s", head, count_of(err, head), err);
    const char *line = strstr(err, head);
    if (!line) return;
    size_t len = strcspn(line, "\n");
    for (size_t i = 0; parts[i]; ++i) {
        const char *at = strstr(line, parts[i]);
        cr_expect(at && at < line + len, "the line for %s must say \"%s\":\n%.*s", name, parts[i], (int)len, line);
    }
}

Test(env, malformed_values_are_said_once_with_the_default)
{
    setenv("AMP_CPU_THREADS", "0", 1);
    setenv("AMP_QUEUE_DEPTH", "100x", 1);
    setenv("AMP_CPU_STACK_SIZE", "1T", 1);
    setenv("AMP_CPU_GRAPH_ALONE", "99999999999999999999999", 1);
    setenv("AMP_CPU_SPIN_US", "100 ", 1);
    setenv("AMP_CPU_STREAM_MIN", "-5", 1);
    setenv("AMP_CPU_LEARN_WIDTHS", "2", 1);
    setenv("AMP_CPU_UNIFIED", "maybe", 1); /* read at each get_info: still said once */
    amp_accelerator_info info;
    char *err = stderr_of_cpu_setup(&info);
    char threads[32];
    snprintf(threads, sizeof threads, "using the default, %d", info.compute_units);
    expect_said_once(err, "AMP_CPU_THREADS", "0", (const char *const[]){"a whole number in 1..", threads, NULL});
    expect_said_once(err, "AMP_QUEUE_DEPTH", "100x", (const char *const[]){"a whole number in 1..", "using the default, ", NULL});
    expect_said_once(err, "AMP_CPU_STACK_SIZE", "1T",
                     (const char *const[]){"a whole number in 16K..1G", "K, M or G suffix", "using the default, ", NULL});
    expect_said_once(err, "AMP_CPU_GRAPH_ALONE", "99999999999999999999999",
                     (const char *const[]){"a whole number in 1..", "using the default, ", NULL});
    expect_said_once(err, "AMP_CPU_SPIN_US", "100 ", (const char *const[]){"a whole number in 0..", "using the default, ", NULL});
    /* Its default (off) lies outside the range: no number to name. */
    expect_said_once(err, "AMP_CPU_STREAM_MIN", "-5", (const char *const[]){"a whole number in 0..", "it is ignored", NULL});
    expect_said_once(err, "AMP_CPU_LEARN_WIDTHS", "2",
                     (const char *const[]){"a flag (1, on, yes, true; 0, off, no, false)", "using the default, on", NULL});
    expect_said_once(err, "AMP_CPU_UNIFIED", "maybe", (const char *const[]){"a flag", "using the default, on", NULL});
    cr_expect(info.is_unified_memory, "AMP_CPU_UNIFIED=maybe must fall back to on");
    cr_expect_gt(info.compute_units, 0);
    free(err);
}

/* strtoul and strtoull skip leading blanks and then take a '-': " -2" must
 * not pass for 2^64 - 2, nor " -0" for 0. */
Test(env, a_negative_value_after_blanks_is_refused)
{
    setenv("AMP_CPU_STREAM_MIN", " -2", 1);
    setenv("AMP_CPU_SPIN_US", " -0", 1);
    setenv("AMP_CPU_STACK_SIZE", "\t-64K", 1);
    amp_accelerator_info info;
    char *err = stderr_of_cpu_setup(&info);
    expect_said_once(err, "AMP_CPU_STREAM_MIN", " -2", (const char *const[]){"a whole number in 0..", NULL});
    expect_said_once(err, "AMP_CPU_SPIN_US", " -0", (const char *const[]){"a whole number in 0..", NULL});
    expect_said_once(err, "AMP_CPU_STACK_SIZE", "\\x09-64K", (const char *const[]){"a whole number in 16K..1G", NULL});
    free(err);
}

/* Good values, blanks and '+' before a number included (accepted as
 * before), say nothing. */
Test(env, good_values_say_nothing)
{
    setenv("AMP_CPU_THREADS", "3", 1);
    setenv("AMP_QUEUE_DEPTH", " +16", 1);
    setenv("AMP_CPU_STACK_SIZE", "64KiB", 1);
    setenv("AMP_CPU_STREAM_MIN", "1M", 1);
    setenv("AMP_CPU_SPIN_US", "0", 1);
    setenv("AMP_CPU_LEARN_WIDTHS", "Yes", 1);
    setenv("AMP_CPU_UNIFIED", "off", 1);
    amp_accelerator_info info;
    char *err = stderr_of_cpu_setup(&info);
    cr_expect_null(strstr(err, "hipamp: AMP_"), "good values were said to be bad:\n%s", err);
    cr_expect_eq(info.compute_units, 3);
    cr_expect(!info.is_unified_memory);
    free(err);
}

/* ------------------------------------------------ the test harness itself */

/* libgit2's git_diff_line starts with its origin character ('+', '-', ' '). */
struct diff_lines_seen {
    int added, removed;
};
static int count_diff_line(const void *delta, const void *hunk, const char *line, void *payload)
{
    (void)delta;
    (void)hunk;
    struct diff_lines_seen *seen = payload;
    if (line[0] == '+') seen->added++;
    if (line[0] == '-') seen->removed++;
    return 0;
}

/* Criterion's failure diffs still work with libgit2 initialized only on the
 * first diff (support.c), and a test process that diffs nothing never
 * initializes it. */
Test(harness, criterion_diffs_with_libgit2_initialized_on_demand)
{
    cr_assert_not(test_libgit2_initialized(), "libgit2 was initialized before any diff");
    const char before[] = "one\ntwo\nthree\n", after[] = "one\nTWO\nthree\nfour\n";
    struct diff_lines_seen seen = {0, 0};
    int rc = git_diff_buffers(before, strlen(before), "before", after, strlen(after), "after", NULL, NULL, NULL,
                              NULL, (void *)count_diff_line, &seen);
    cr_assert_eq(rc, 0, "git_diff_buffers returned %d", rc);
    cr_assert(test_libgit2_initialized());
    cr_assert_eq(seen.removed, 1, "lines removed: %d", seen.removed);
    cr_assert_eq(seen.added, 2, "lines added: %d", seen.added);
}
