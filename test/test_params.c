/* test_params.c — kernel parameters as real codes use them: every C scalar kind bit for bit (values that need all 64 unsigned bits, negative 8-bit values, bool), structs by value with mixed members and padding, an over-aligned struct, and the mismatch messages (position, the kernel's type, the argument's kind, both sizes); kinds outside amp_arg_kind refused; a count past the kernel's refused before any argument is read. */
#include "support.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern const char test_kernels_params[];

/* Must match params_mixed in test/kernels/params.hip member for member
 * (fixed-width members, standard layout: the README's rule). */
typedef struct params_mixed {
    char tag;
    double scale;
    int32_t count;
    int16_t small;
    float offset;
    int64_t big;
    uint8_t flags[3];
} params_mixed;

typedef struct params_aligned {
    _Alignas(16) float v[4];
} params_aligned;

static void run_every_scalar(amp_accelerator *acc, const amp_arg *args, uint64_t *got)
{
    amp_program *p = test_build(acc, test_kernels_params);
    amp_kernel *k = test_kernel(p, "every_scalar");
    for (int i = 0; i < 11; ++i) got[i] = 0xA5A5A5A5A5A5A5A5ULL;
    amp_array_view *v = test_view(got, sizeof *got, amp_extent_1d(11), AMP_READ_WRITE);
    amp_arg all[12];
    all[0] = amp_arg_view(v);
    memcpy(all + 1, args, 11 * sizeof *args);
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(11), k, all, 12));
    ASSERT_OK(amp_array_view_destroy(v));
    amp_program_destroy(p);
}

ACCEL_TEST(params, every_scalar_kind_bit_for_bit)
{
    float f = -3.25e-7f;
    double d = 6.02214076e23;
    amp_arg a[11] = {amp_arg_int8(-128),           amp_arg_uint8(255),
                     amp_arg_int16(-32768),        amp_arg_uint16(65535),
                     amp_arg_int32(INT32_MIN),     amp_arg_uint32(0xFFFFFFFEu),
                     amp_arg_int64(INT64_MIN + 7), amp_arg_uint64(0xFEDCBA9876543210ULL),
                     amp_arg_float32(f),           amp_arg_float64(d),
                     amp_arg_bool(true)};
    uint64_t got[11];
    run_every_scalar(acc, a, got);
    uint32_t fbits;
    uint64_t dbits;
    memcpy(&fbits, &f, 4);
    memcpy(&dbits, &d, 8);
    const uint64_t want[11] = {(uint64_t)(int64_t)-128, 255, (uint64_t)(int64_t)-32768, 65535,
                               (uint64_t)(int64_t)INT32_MIN, 0xFFFFFFFEu, (uint64_t)(INT64_MIN + 7),
                               0xFEDCBA9876543210ULL, fbits, dbits, 1};
    for (int i = 0; i < 11; ++i)
        cr_assert_eq(got[i], want[i], "parameter %d: got 0x%016llx, want 0x%016llx", i + 1,
                     (unsigned long long)got[i], (unsigned long long)want[i]);
    /* And the other extreme of each. */
    amp_arg b[11] = {amp_arg_int8(127),        amp_arg_uint8(0),          amp_arg_int16(32767),
                     amp_arg_uint16(1),        amp_arg_int32(INT32_MAX),  amp_arg_uint32(1),
                     amp_arg_int64(INT64_MAX), amp_arg_uint64(UINT64_MAX), amp_arg_float32(1.0f),
                     amp_arg_float64(-0.0),    amp_arg_bool(false)};
    run_every_scalar(acc, b, got);
    cr_assert_eq(got[0], 127);
    cr_assert_eq(got[2], 32767);
    cr_assert_eq(got[6], (uint64_t)INT64_MAX);
    cr_assert_eq(got[7], UINT64_MAX, "uint64 max came through as 0x%016llx", (unsigned long long)got[7]);
    cr_assert_eq(got[9], 0x8000000000000000ULL, "-0.0 lost its sign");
    cr_assert_eq(got[10], 0);
}

ACCEL_TEST(params, fixed_width_names_are_the_same_kinds)
{
    amp_program *p = test_build(acc, test_kernels_params);
    amp_kernel *k = test_kernel(p, "fixed_width");
    uint64_t got[3] = {0, 0, 0};
    amp_array_view *v = test_view(got, sizeof *got, amp_extent_1d(3), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v), amp_arg_uint64(0x8000000000000001ULL), amp_arg_int64(-2), amp_arg_uint8(200)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(3), k, a, 4));
    ASSERT_OK(amp_array_view_destroy(v));
    cr_assert_eq(got[0], 0x8000000000000001ULL);
    cr_assert_eq(got[1], (uint64_t)-2);
    cr_assert_eq(got[2], 200);
    amp_program_destroy(p);
}

ACCEL_TEST(params, struct_with_mixed_members_and_padding)
{
    amp_program *p = test_build(acc, test_kernels_params);
    amp_kernel *k = test_kernel(p, "struct_param");
    params_mixed s;
    memset(&s, 0xCC, sizeof s); /* padding bytes are garbage, as in real code */
    s.tag = -5;
    s.scale = 1.0 / 3.0;
    s.count = -123456;
    s.small = 4321;
    s.offset = 2.5f;
    s.big = -(1LL << 50);
    s.flags[0] = 1;
    s.flags[1] = 2;
    s.flags[2] = 3;
    double got[9];
    for (int i = 0; i < 9; ++i) got[i] = -777.25;
    amp_array_view *v = test_view(got, sizeof *got, amp_extent_1d(9), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v), amp_arg_int32(77), amp_arg_struct(&s, sizeof s), amp_arg_int16(-9)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(9), k, a, 4));
    /* The bytes were read during the call: changing the struct now changes
     * nothing the kernel saw. */
    memset(&s, 0, sizeof s);
    ASSERT_OK(amp_array_view_destroy(v));
    const double want[9] = {-5, 1.0 / 3.0, -123456, 4321, 2.5, (double)-(1LL << 50), 1 + 256.0 * 2 + 65536.0 * 3, 77, -9};
    for (int i = 0; i < 9; ++i) cr_assert_eq(got[i], want[i], "member %d: got %.17g want %.17g", i, got[i], want[i]);
    amp_program_destroy(p);
}

ACCEL_TEST(params, struct_read_during_async_launch_call)
{
    amp_program *p = test_build(acc, test_kernels_params);
    amp_kernel *k = test_kernel(p, "struct_param");
    params_mixed s;
    memset(&s, 0, sizeof s);
    s.scale = 42.0;
    double got[9] = {0};
    amp_array_view *v = test_view(got, sizeof *got, amp_extent_1d(9), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v), amp_arg_int32(1), amp_arg_struct(&s, sizeof s), amp_arg_int16(2)};
    amp_future *f = NULL;
    ASSERT_OK(amp_parallel_for_each_async(NULL, amp_extent_1d(9), k, a, 4, &f));
    s.scale = -1.0; /* reused right after the call returned */
    ASSERT_OK(amp_future_wait(f));
    ASSERT_OK(amp_future_destroy(f));
    ASSERT_OK(amp_array_view_destroy(v));
    cr_assert_eq(got[1], 42.0, "the kernel saw the struct after the call returned (%g)", got[1]);
    amp_program_destroy(p);
}

ACCEL_TEST(params, over_aligned_struct_in_a_tiled_kernel)
{
    amp_program *p = test_build(acc, test_kernels_params);
    amp_kernel *k = test_kernel(p, "aligned_struct_tiled");
    params_aligned s = {{1.5f, 2.5f, 3.5f, 4.5f}};
    float got[8];
    for (int i = 0; i < 8; ++i) got[i] = POISON_F32;
    amp_array_view *v = test_view(got, sizeof *got, amp_extent_1d(8), AMP_WRITE_ONLY);
    amp_tiled_extent t;
    ASSERT_OK(amp_extent_tile_1d(amp_extent_1d(8), 4, &t));
    amp_arg a[] = {amp_arg_view(v), amp_arg_int8(10), amp_arg_struct(&s, sizeof s)};
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, t, k, a, 3));
    ASSERT_OK(amp_array_view_destroy(v));
    for (int i = 0; i < 8; ++i) cr_assert_eq(got[i], s.v[i % 4] + 10, "element %d: %g", i, (double)got[i]);
    amp_program_destroy(p);
}

/* ---------------------------------------------------------- mismatches */

static void expect_mismatch(amp_accelerator *acc, const char *kernel, amp_arg *args, size_t n, const char *const *needles)
{
    amp_program *p = test_build(acc, test_kernels_params);
    amp_kernel *k = test_kernel(p, kernel);
    ASSERT_STATUS(amp_parallel_for_each(NULL, amp_extent_1d(1), k, args, n), AMP_ERROR_ARGUMENT_MISMATCH);
    for (size_t i = 0; needles[i]; ++i)
        cr_assert(strstr(amp_last_error(), needles[i]), "message should contain \"%s\": %s", needles[i], amp_last_error());
    amp_program_destroy(p);
}

ACCEL_TEST(params, scalar_mismatch_names_position_type_and_kind)
{
    uint64_t out[1];
    amp_array_view *v = test_view(out, sizeof *out, amp_extent_1d(1), AMP_READ_WRITE);
    amp_arg a[12] = {amp_arg_view(v),     amp_arg_int8(1),     amp_arg_uint8(1),      amp_arg_int16(1),
                     amp_arg_uint16(1),   amp_arg_int32(1),    amp_arg_uint32(1),     amp_arg_int64(1),
                     amp_arg_uint64(1),   amp_arg_float32(1),  amp_arg_float64(1),    amp_arg_bool(1)};
    /* unsigned long long (position 8) given an int64. */
    a[8] = amp_arg_int64(5);
    const char *n1[] = {"parameter 8", "uint64 (unsigned long long)", "int64 (long long)", "every_scalar", NULL};
    expect_mismatch(acc, "every_scalar", a, 12, n1);
    /* short (position 3) given an int32. */
    a[8] = amp_arg_uint64(5);
    a[3] = amp_arg_int32(5);
    const char *n2[] = {"parameter 3", "int16 (short)", "int32 (int)", NULL};
    expect_mismatch(acc, "every_scalar", a, 12, n2);
    /* bool (position 11) given a uint8. */
    a[3] = amp_arg_int16(5);
    a[11] = amp_arg_uint8(1);
    const char *n3[] = {"parameter 11", "bool", "uint8", NULL};
    expect_mismatch(acc, "every_scalar", a, 12, n3);
    ASSERT_OK(amp_array_view_destroy(v));
}

/* A kind outside amp_arg_kind is refused naming the argument and the
 * value, the library's own internal kinds included (they bind a view of
 * any rank to a rank-1 parameter over its whole span and skip its
 * copy-in: a 2x2 section bound that way let a kernel write the elements
 * between its rows). Nothing runs: the data is unchanged. */
ACCEL_TEST(params, kinds_outside_amp_arg_kind_are_refused)
{
    uint64_t out[4] = {11, 12, 13, 14};
    amp_array_view *v = test_view(out, sizeof *out, amp_extent_2d(2, 2), AMP_READ_WRITE), *row = NULL;
    ASSERT_OK(amp_array_view_section(v, amp_index_2d(0, 0), amp_extent_2d(1, 2), &row));
    amp_program *p = test_build(acc, test_kernels_params);
    amp_kernel *k = test_kernel(p, "every_scalar");
    amp_arg a[12] = {amp_arg_view(row),   amp_arg_int8(1),     amp_arg_uint8(1),      amp_arg_int16(1),
                     amp_arg_uint16(1),   amp_arg_int32(1),    amp_arg_uint32(1),     amp_arg_int64(1),
                     amp_arg_uint64(1),   amp_arg_float32(1),  amp_arg_float64(1),    amp_arg_bool(1)};
    static const int kinds[] = {AMP_ARG_VIEW | 0x100 | 0x400, AMP_ARG_VIEW | 0x100, 0x200 | AMP_ARG_ARRAY, 0x10000};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
        a[0].kind = (amp_arg_kind)kinds[i];
        ASSERT_STATUS(amp_parallel_for_each(NULL, amp_extent_1d(2), k, a, 12), AMP_ERROR_INVALID_ARGUMENT);
        char want[64];
        snprintf(want, sizeof want, "argument 0: kind %d is not an amp_arg_kind", kinds[i]);
        cr_assert(strstr(amp_last_error(), want), "kind %d: %s", kinds[i], amp_last_error());
        amp_future *f = NULL;
        ASSERT_STATUS(amp_parallel_for_each_async(NULL, amp_extent_1d(2), k, a, 12, &f), AMP_ERROR_INVALID_ARGUMENT);
        cr_assert_null(f);
    }
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < 4; ++i) cr_assert_eq(out[i], (uint64_t)(11 + i), "out[%d] = %llu", i, (unsigned long long)out[i]);
    ASSERT_OK(amp_array_view_destroy(row));
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
}

/* The count is checked before any argument is read: args holds nargs
 * entries as the caller says, and one past the kernel's count may be past
 * the caller's memory (here the array ends at an unmapped page; the kinds
 * were read first, and this faulted). Nothing runs. */
ACCEL_TEST(params, more_arguments_than_parameters_are_refused_before_any_is_read)
{
    uint64_t out[2] = {11, 12};
    amp_array_view *v = test_view(out, sizeof *out, amp_extent_1d(2), AMP_READ_WRITE);
    amp_program *p = test_build(acc, test_kernels_params);
    amp_kernel *k = test_kernel(p, "every_scalar");
    long page = sysconf(_SC_PAGESIZE);
    char *pages = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(pages, MAP_FAILED);
    cr_assert_eq(munmap(pages + page, (size_t)page), 0);
    amp_arg *a = (amp_arg *)(pages + page) - 12;
    amp_arg given[12] = {amp_arg_view(v),   amp_arg_int8(1),    amp_arg_uint8(1),   amp_arg_int16(1),
                         amp_arg_uint16(1), amp_arg_int32(1),   amp_arg_uint32(1),  amp_arg_int64(1),
                         amp_arg_uint64(1), amp_arg_float32(1), amp_arg_float64(1), amp_arg_bool(1)};
    memcpy(a, given, sizeof given);
    static const size_t counts[] = {13, 40, SIZE_MAX};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; ++i) {
        ASSERT_STATUS(amp_parallel_for_each(NULL, amp_extent_1d(2), k, a, counts[i]), AMP_ERROR_ARGUMENT_MISMATCH);
        char want[80];
        snprintf(want, sizeof want, "takes 12 parameters; %zu arguments given", counts[i]);
        cr_assert(strstr(amp_last_error(), want), "nargs %zu: %s", counts[i], amp_last_error());
        amp_launch_options o = {.block_size = 64};
        ASSERT_STATUS(amp_parallel_for_each_with(NULL, amp_extent_1d(2), k, a, counts[i], &o),
                      AMP_ERROR_ARGUMENT_MISMATCH);
        amp_future *f = NULL;
        ASSERT_STATUS(amp_parallel_for_each_async(NULL, amp_extent_1d(2), k, a, counts[i], &f),
                      AMP_ERROR_ARGUMENT_MISMATCH);
        cr_assert_null(f);
    }
    ASSERT_OK(amp_array_view_synchronize(v));
    cr_assert(out[0] == 11 && out[1] == 12, "out = %llu %llu", (unsigned long long)out[0], (unsigned long long)out[1]);
    cr_assert_eq(munmap(pages, (size_t)page), 0);
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TEST(params, struct_mismatch_names_both_sizes)
{
    double out[9];
    amp_array_view *v = test_view(out, sizeof *out, amp_extent_1d(9), AMP_READ_WRITE);
    params_mixed s;
    memset(&s, 0, sizeof s);
    amp_arg a[] = {amp_arg_view(v), amp_arg_int32(0), amp_arg_struct(&s, sizeof s - 8), amp_arg_int16(0)};
    char want_size[32];
    snprintf(want_size, sizeof want_size, "%zu bytes", sizeof s);
    char got_size[32];
    snprintf(got_size, sizeof got_size, "%zu bytes", sizeof s - 8);
    const char *n1[] = {"parameter 2", want_size, got_size, NULL};
    expect_mismatch(acc, "struct_param", a, 4, n1);
    /* A scalar where the struct goes. */
    a[2] = amp_arg_float64(1.0);
    const char *n2[] = {"parameter 2", "struct", "amp_arg_struct", NULL};
    expect_mismatch(acc, "struct_param", a, 4, n2);
    /* A struct where an int goes. */
    a[2] = amp_arg_struct(&s, sizeof s);
    a[1] = amp_arg_struct(&s, 4);
    const char *n3[] = {"parameter 1", "int32 (int)", "struct", NULL};
    expect_mismatch(acc, "struct_param", a, 4, n3);
    ASSERT_OK(amp_array_view_destroy(v));
}

ACCEL_TEST(params, struct_with_null_data_is_refused)
{
    double out[9];
    amp_array_view *v = test_view(out, sizeof *out, amp_extent_1d(9), AMP_READ_WRITE);
    amp_program *p = test_build(acc, test_kernels_params);
    amp_kernel *k = test_kernel(p, "struct_param");
    amp_arg a[] = {amp_arg_view(v), amp_arg_int32(0), amp_arg_struct(NULL, sizeof(params_mixed)), amp_arg_int16(0)};
    ASSERT_STATUS(amp_parallel_for_each(NULL, amp_extent_1d(9), k, a, 4), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "parameter 2"), "%s", amp_last_error());
    ASSERT_OK(amp_array_view_destroy(v));
    amp_program_destroy(p);
}

/* A parameter type the prelude refuses: the position is on the first line. */
ACCEL_TEST(params, refused_parameter_type_names_its_position_first)
{
    static const char src[] = "AMP_KERNEL(takes_pointer, amp::index<1> i, int a, float *p, int b) { }\n";
    amp_program *p = NULL;
    ASSERT_STATUS(amp_program_build(acc, src, NULL, &p), AMP_ERROR_COMPILE);
    const char *log = amp_last_error();
    const char *nl = strchr(log, '\n');
    size_t first = nl ? (size_t)(nl - log) : strlen(log);
    cr_assert(first > 0 && strstr(log, "kernel parameter 1") && (size_t)(strstr(log, "kernel parameter 1") - log) < first,
              "first line should name parameter 1: %.*s", (int)first, log);
    cr_assert(strstr(log, "raw pointer"), "the prelude's reason should follow: %s", log);
}

ACCEL_TEST(params, double4_by_value)
{
    typedef struct { _Alignas(32) double v[4]; } dvec4;
    amp_program *p = test_build(acc, test_kernels_params);
    amp_kernel *k = test_kernel(p, "double4_param");
    dvec4 d = {{0.5, -1.25, 3e100, -7.0}};
    double got[4] = {0, 0, 0, 0};
    amp_array_view *v = test_view(got, sizeof *got, amp_extent_1d(4), AMP_WRITE_ONLY);
    amp_arg a[] = {amp_arg_view(v), amp_arg_int8(2), amp_arg_struct(&d, sizeof d)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(4), k, a, 3));
    ASSERT_OK(amp_array_view_destroy(v));
    for (int i = 0; i < 4; ++i) cr_assert_eq(got[i], d.v[i] + 2, "component %d: %g", i, got[i]);
    amp_program_destroy(p);
}
