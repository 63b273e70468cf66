/* test_launch.c — simple-model launches: ranks 1-4 on odd extents, in-kernel projection/section/operator(), scalar arguments, argument and extent checking, amp_array parameters. */
#include "support.h"

#include <hipamp_graph.h>

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char test_kernels_launch[];


/* ------------------------------------------------------------ helpers */

static uint32_t enc_index(const int *idx, int rank)
{
    uint32_t h = 2166136261u;
    for (int d = 0; d < rank; ++d) h = (h ^ (uint32_t)idx[d]) * 16777619u;
    return h;
}

/* Row-major multi-index of linear position lin in e. */
static void unlinear(amp_extent e, int64_t lin, int *idx)
{
    for (int d = e.rank - 1; d >= 0; --d) {
        idx[d] = (int)(lin % e.v[d]);
        lin /= e.v[d];
    }
}

static void check_u32(const uint32_t *got, const uint32_t *want, size_t n, const char *what)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; ++i)
        if (got[i] != want[i] && bad++ == 0) first = i;
    cr_assert_eq(bad, 0, "%s: %zu of %zu elements wrong; first at %zu: got 0x%08x want 0x%08x",
                 what, bad, n, first, got[first], want[first]);
}

static void check_f32_tol(const float *got, const float *want, size_t n, float tol,
                          const char *what)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; ++i) {
        float d = got[i] - want[i];
        if (d < 0) d = -d;
        if (!(d <= tol * (1.0f + (want[i] < 0 ? -want[i] : want[i]))) && bad++ == 0) first = i;
    }
    cr_assert_eq(bad, 0, "%s: %zu of %zu elements wrong; first at %zu: got %.9g want %.9g", what,
                 bad, n, first, (double)got[first], (double)want[first]);
}

/* True when msg names parameter pos (0-based position among the kernel's
 * parameters after the index, i.e. the position in args[]), as "parameter N",
 * "argument N", "param N", "arg N", "#N" or "[N]", 0- or 1-based. */
static bool names_param(const char *msg, int pos)
{
    static const char *keys[] = {"parameter", "argument", "param", "arg", "#", "["};
    size_t n = strlen(msg);
    char *low = test_xmalloc(n + 1);
    for (size_t i = 0; i <= n; ++i) low[i] = (char)tolower((unsigned char)msg[i]);
    bool found = false;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0] && !found; ++k) {
        const char *p = low;
        while (!found && (p = strstr(p, keys[k])) != NULL) {
            p += strlen(keys[k]);
            const char *q = p;
            while (*q == ' ' || *q == '#') ++q;
            if (isdigit((unsigned char)*q)) {
                long v = strtol(q, NULL, 10);
                if (v == pos || v == pos + 1) found = true;
            }
        }
    }
    free(low);
    return found;
}

#define ASSERT_MISMATCH_NAMES(call, pos)                                                      \
    do {                                                                                      \
        ASSERT_STATUS(call, AMP_ERROR_ARGUMENT_MISMATCH);                                     \
        const char *m_ = amp_last_error();                                                    \
        cr_assert(names_param(m_, (pos)),                                                     \
                  "message does not name parameter %d (0-based in args[]): \"%s\"", (pos), m_); \
    } while (0)

/* e's elements: *out poisoned, *want each one's enc_index (the caller
 * frees both). */
static int64_t enc_buffers(amp_extent e, uint32_t **out, uint32_t **want)
{
    int64_t n = amp_extent_size(e);
    cr_assert_gt(n, 0);
    *out = test_xmalloc((size_t)n * 4);
    *want = test_xmalloc((size_t)n * 4);
    for (int64_t i = 0; i < n; ++i) {
        int idx[AMP_MAX_RANK];
        unlinear(e, i, idx);
        (*want)[i] = enc_index(idx, e.rank);
        (*out)[i] = POISON_U32;
    }
    return n;
}

/* Launch enc<N> over e and check every element against enc_index. */
static void run_enc(amp_accelerator *acc, amp_extent e, const char *kname, amp_access access)
{
    amp_program *p = test_build(acc, test_kernels_launch);
    amp_kernel *k = test_kernel(p, kname);
    uint32_t *out = NULL, *want = NULL;
    const int64_t n = enc_buffers(e, &out, &want);
    amp_array_view *v = test_view(out, 4, e, access);
    amp_arg a[] = {amp_arg_view(v)};
    ASSERT_OK(amp_parallel_for_each(NULL, e, k, a, 1));
    ASSERT_OK(amp_array_view_synchronize(v));
    check_u32(out, want, (size_t)n, kname);
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
    free(out);
    free(want);
}

/* ------------------------------------------------------- ranks 1 to 4 */

ACCEL_TEST(launch, rank1_1000003) { run_enc(acc, amp_extent_1d(1000003), "enc1", AMP_READ_WRITE); }
ACCEL_TEST(launch, rank1_one_element) { run_enc(acc, amp_extent_1d(1), "enc1", AMP_READ_WRITE); }
ACCEL_TEST(launch, rank2_333x517) { run_enc(acc, amp_extent_2d(333, 517), "enc2", AMP_READ_WRITE); }
ACCEL_TEST(launch, rank2_write_only_517x333) { run_enc(acc, amp_extent_2d(517, 333), "enc2", AMP_WRITE_ONLY); }
ACCEL_TEST(launch, rank2_tall_70001x3) { run_enc(acc, amp_extent_2d(70001, 3), "enc2", AMP_READ_WRITE); }
ACCEL_TEST(launch, rank3_7x45x131) { run_enc(acc, amp_extent_3d(7, 45, 131), "enc3", AMP_READ_WRITE); }
/* Outer dimension past the 65535 grid limit (the z loop). */
ACCEL_TEST(launch, rank3_66001x3x5) { run_enc(acc, amp_extent_3d(66001, 3, 5), "enc3", AMP_READ_WRITE); }
ACCEL_TEST(launch, rank4_3x5x7x11) { run_enc(acc, amp_extent_4d(3, 5, 7, 11), "enc4", AMP_READ_WRITE); }
ACCEL_TEST(launch, rank4_13x1x29x37) { run_enc(acc, amp_extent_4d(13, 1, 29, 37), "enc4", AMP_WRITE_ONLY); }

/* enc_first<N> over e, twice: every element encoded, and the count written
 * by the work-item of index 0 alone, once a launch (5 + 7 + 8). */
static void run_enc_first(amp_accelerator *acc, amp_extent e)
{
    amp_program *p = test_build(acc, test_kernels_launch);
    char kname[32];
    snprintf(kname, sizeof kname, "enc_first%d", e.rank);
    amp_kernel *k = test_kernel(p, kname);
    uint32_t *out = NULL, *want = NULL;
    const int64_t n = enc_buffers(e, &out, &want);
    int count = 5;
    amp_array_view *v = test_view(out, 4, e, AMP_READ_WRITE);
    amp_array_view *c = test_view(&count, 4, amp_extent_1d(1), AMP_READ_WRITE);
    for (int add = 7; add <= 8; ++add) {
        amp_arg a[] = {amp_arg_view(v), amp_arg_view(c), amp_arg_int32(add)};
        ASSERT_OK(amp_parallel_for_each(NULL, e, k, a, 3));
    }
    ASSERT_OK(amp_array_view_synchronize(v));
    ASSERT_OK(amp_array_view_synchronize(c));
    check_u32(out, want, (size_t)n, kname);
    cr_assert_eq(count, 5 + 7 + 8, "%s: count %d, want %d (work-item 0 wrote it once a launch)", kname, count, 20);
    ASSERT_OK(amp_array_view_destroy(c));
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
    free(out);
    free(want);
}

ACCEL_TEST(launch, first_item_writes_a_scalar_rank1) { run_enc_first(acc, amp_extent_1d(1000003)); }
ACCEL_TEST(launch, first_item_writes_a_scalar_rank1_one_element) { run_enc_first(acc, amp_extent_1d(1)); }
ACCEL_TEST(launch, first_item_writes_a_scalar_rank2) { run_enc_first(acc, amp_extent_2d(333, 517)); }
ACCEL_TEST(launch, first_item_writes_a_scalar_rank2_one_column) { run_enc_first(acc, amp_extent_2d(70001, 1)); }
ACCEL_TEST(launch, first_item_writes_a_scalar_rank3) { run_enc_first(acc, amp_extent_3d(7, 45, 131)); }

/* ---------------------------------------- in-kernel view vocabulary */

ACCEL_TEST(launch, operator_paren_rank2)
{
    enum { R = 77, C = 131 };
    amp_program *p = test_build(acc, test_kernels_launch);
    amp_kernel *k = test_kernel(p, "paren2");
    float *A = test_xmalloc(R * C * 4), *B = test_xmalloc(R * C * 4), *want = test_xmalloc(R * C * 4);
    test_fill_random(A, R * C, 11);
    for (int i = 0; i < R * C; ++i) {
        B[i] = POISON_F32;
        want[i] = A[i] * 2.0f + 1.0f;
    }
    amp_array_view *va = test_view(A, 4, amp_extent_2d(R, C), AMP_READ_ONLY);
    amp_array_view *vb = test_view(B, 4, amp_extent_2d(R, C), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(va), amp_arg_view(vb)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_2d(R, C), k, a, 2));
    ASSERT_OK(amp_array_view_synchronize(vb));
    test_check_f32(B, want, R * C, "paren2");
    ASSERT_OK(amp_array_view_destroy(va));
    ASSERT_OK(amp_array_view_destroy(vb));
    ASSERT_OK(amp_program_destroy(p));
    free(A); free(B); free(want);
}

ACCEL_TEST(launch, operator_paren_rank3)
{
    enum { X = 5, Y = 19, Z = 23, N = X * Y * Z };
    amp_program *p = test_build(acc, test_kernels_launch);
    amp_kernel *k = test_kernel(p, "paren3");
    int32_t A[N], B[N], want[N];
    for (int i = 0; i < N; ++i) {
        A[i] = (int32_t)((i * 7919) % 2003) - 1000;
        B[i] = POISON_I32;
    }
    for (int x = 0; x < X; ++x)
        for (int y = 0; y < Y; ++y)
            for (int z = 0; z < Z; ++z) {
                int l = (x * Y + y) * Z + z;
                want[l] = A[l] * 5 + x - z;
            }
    amp_array_view *va = test_view(A, 4, amp_extent_3d(X, Y, Z), AMP_READ_ONLY);
    amp_array_view *vb = test_view(B, 4, amp_extent_3d(X, Y, Z), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(va), amp_arg_view(vb)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_3d(X, Y, Z), k, a, 2));
    ASSERT_OK(amp_array_view_destroy(vb)); /* destroy synchronizes */
    test_check_i32(B, want, N, "paren3");
    ASSERT_OK(amp_array_view_destroy(va));
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TEST(launch, projection_read_rows)
{
    enum { R = 123, C = 45 };
    amp_program *p = test_build(acc, test_kernels_launch);
    amp_kernel *k = test_kernel(p, "row_sums");
    float A[R * C], sums[R], want[R];
    test_fill_random(A, R * C, 21);
    for (int r = 0; r < R; ++r) {
        float s = 0.0f;
        for (int j = 0; j < C; ++j) s += A[r * C + j] * (float)(j % 7 + 1);
        want[r] = s;
        sums[r] = POISON_F32;
    }
    amp_array_view *va = test_view(A, 4, amp_extent_2d(R, C), AMP_READ_ONLY);
    amp_array_view *vs = test_view(sums, 4, amp_extent_1d(R), AMP_WRITE_ONLY);
    amp_arg a[] = {amp_arg_view(va), amp_arg_view(vs)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(R), k, a, 2));
    ASSERT_OK(amp_array_view_synchronize(vs));
    /* the device may contract multiply-adds: a tolerance, not bit equality */
    check_f32_tol(sums, want, R, 1e-5f, "row_sums");
    ASSERT_OK(amp_array_view_destroy(va));
    ASSERT_OK(amp_array_view_destroy(vs));
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TEST(launch, projection_write)
{
    enum { R = 64, C = 100 };
    amp_program *p = test_build(acc, test_kernels_launch);
    amp_kernel *k = test_kernel(p, "proj_write");
    float A[R * C], B[R * C], want[R * C];
    test_fill_random(A, R * C, 31);
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) {
            want[r * C + c] = A[r * C + c] * 4.0f - (float)c;
            B[r * C + c] = POISON_F32;
        }
    amp_array_view *va = test_view(A, 4, amp_extent_2d(R, C), AMP_READ_ONLY);
    amp_array_view *vb = test_view(B, 4, amp_extent_2d(R, C), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(va), amp_arg_view(vb)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_2d(R, C), k, a, 2));
    ASSERT_OK(amp_array_view_synchronize(vb));
    test_check_f32(B, want, R * C, "proj_write");
    ASSERT_OK(amp_array_view_destroy(va));
    ASSERT_OK(amp_array_view_destroy(vb));
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TEST(launch, projection_rank3_to_plane)
{
    enum { X = 6, Y = 17, Z = 29, N = X * Y * Z };
    amp_program *p = test_build(acc, test_kernels_launch);
    amp_kernel *k = test_kernel(p, "proj3");
    int32_t A[N], B[N], want[N];
    for (int i = 0; i < N; ++i) {
        A[i] = (int32_t)((i * 104729) % 4001) - 2000;
        B[i] = POISON_I32;
        want[i] = A[i] * 3 + i / (Y * Z);
    }
    amp_array_view *va = test_view(A, 4, amp_extent_3d(X, Y, Z), AMP_READ_ONLY);
    amp_array_view *vb = test_view(B, 4, amp_extent_3d(X, Y, Z), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(va), amp_arg_view(vb)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_3d(X, Y, Z), k, a, 2));
    ASSERT_OK(amp_array_view_synchronize(vb));
    test_check_i32(B, want, N, "proj3");
    ASSERT_OK(amp_array_view_destroy(va));
    ASSERT_OK(amp_array_view_destroy(vb));
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TEST(launch, section_in_kernel)
{
    enum { R = 50, C = 70, R0 = 13, C0 = 21, SR = R - R0, SC = C - C0 };
    amp_program *p = test_build(acc, test_kernels_launch);
    amp_kernel *k = test_kernel(p, "sec_forms");
    float A[R * C], out[3 * SR * SC], want[3 * SR * SC];
    int32_t ext[6], ext_want[6] = {SR, SC, SR, SC, SR, SC};
    test_fill_random(A, R * C, 41);
    for (int i = 0; i < 3 * SR * SC; ++i) out[i] = POISON_F32;
    for (int i = 0; i < 6; ++i) ext[i] = POISON_I32;
    for (int r = 0; r < SR; ++r)
        for (int c = 0; c < SC; ++c) {
            want[0 * SR * SC + r * SC + c] = A[(r + R0) * C + c + C0];
            want[1 * SR * SC + r * SC + c] = A[(r + R0) * C + c + C0];
            want[2 * SR * SC + r * SC + c] = A[r * C + c];
        }
    amp_array_view *va = test_view(A, 4, amp_extent_2d(R, C), AMP_READ_ONLY);
    amp_array_view *vo = test_view(out, 4, amp_extent_3d(3, SR, SC), AMP_READ_WRITE);
    amp_array_view *ve = test_view(ext, 4, amp_extent_1d(6), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(va), amp_arg_view(vo), amp_arg_view(ve), amp_arg_int32(R0),
                   amp_arg_int32(C0)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_2d(SR, SC), k, a, 5));
    ASSERT_OK(amp_array_view_synchronize(vo));
    ASSERT_OK(amp_array_view_synchronize(ve));
    test_check_f32(out, want, 3 * SR * SC, "sec_forms values");
    test_check_i32(ext, ext_want, 6, "sec_forms extents");
    ASSERT_OK(amp_array_view_destroy(va));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_array_view_destroy(ve));
    ASSERT_OK(amp_program_destroy(p));
}

/* A host-made section as the kernel's view: the kernel's index 0 is the
 * section's origin, and nothing outside the section is written. */
ACCEL_TEST(launch, host_section_as_argument)
{
    enum { R = 40, C = 60, R0 = 7, C0 = 11, SR = 20, SC = 33 };
    amp_program *p = test_build(acc, test_kernels_launch);
    amp_kernel *k = test_kernel(p, "mark2");
    int32_t m[R * C], want[R * C];
    for (int i = 0; i < R * C; ++i) want[i] = m[i] = POISON_I32 - i;
    for (int r = 0; r < SR; ++r)
        for (int c = 0; c < SC; ++c) want[(r + R0) * C + c + C0] = 5000000 + r * 100 + c;
    amp_array_view *v = test_view(m, 4, amp_extent_2d(R, C), AMP_READ_WRITE);
    amp_array_view *s = NULL;
    ASSERT_OK(amp_array_view_section(v, amp_index_2d(R0, C0), amp_extent_2d(SR, SC), &s));
    amp_extent se;
    ASSERT_OK(amp_array_view_get_extent(s, &se));
    cr_assert(amp_extent_equal(se, amp_extent_2d(SR, SC)));
    cr_assert_eq(amp_array_view_data(s), (void *)&m[R0 * C + C0]);
    amp_arg a[] = {amp_arg_view(s), amp_arg_int32(5000000)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_2d(SR, SC), k, a, 2));
    ASSERT_OK(amp_array_view_synchronize(s));
    test_check_i32(m, want, R * C, "mark2 on a section");
    ASSERT_OK(amp_array_view_destroy(s));
    ASSERT_OK(amp_array_view_destroy(v));
    test_check_i32(m, want, R * C, "after destroying the parent");
    ASSERT_OK(amp_program_destroy(p));
}

/* A host-made projection (row 9 of a 2-D view) as a rank-1 argument. */
ACCEL_TEST(launch, host_projection_as_argument)
{
    enum { R = 16, C = 300, ROW = 9 };
    amp_program *p = test_build(acc, test_kernels_launch);
    amp_kernel *k = test_kernel(p, "enc1");
    uint32_t m[R * C], want[R * C];
    for (int i = 0; i < R * C; ++i) want[i] = m[i] = POISON_U32 ^ (uint32_t)i;
    for (int c = 0; c < C; ++c) want[ROW * C + c] = enc_index(&c, 1);
    amp_array_view *v = test_view(m, 4, amp_extent_2d(R, C), AMP_READ_WRITE);
    amp_array_view *row = NULL;
    ASSERT_OK(amp_array_view_project(v, ROW, &row));
    amp_extent re;
    ASSERT_OK(amp_array_view_get_extent(row, &re));
    cr_assert(amp_extent_equal(re, amp_extent_1d(C)), "projection extent rank %d", re.rank);
    amp_arg a[] = {amp_arg_view(row)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(C), k, a, 1));
    ASSERT_OK(amp_array_view_synchronize(row));
    check_u32(m, want, R * C, "enc1 on row 9");
    ASSERT_OK(amp_array_view_destroy(row));
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
}

/* ------------------------------------------------------------ scalars */

ACCEL_TEST(launch, scalar_arguments_intact)
{
    enum { T = 4 };
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    cr_assert(info.supports_double_precision, "%s reports no double support", info.device_path);
    amp_program *p = test_build(acc, test_kernels_launch);
    amp_kernel *k = test_kernel(p, "scalars");
    const int32_t a = -123456789, f = 2000000000;
    const double b = 3.141592653589793e100, h = -2.718281828459045e-200;
    const float c = 6.0221409e23f, g = -0.15625f;
    const int64_t d = -0x123456789ABCDEFLL;
    const uint32_t e = 0xFFFFFFF0u;
    int32_t oi[2 * T];
    double od[2 * T];
    float of[2 * T];
    int64_t ol[T];
    uint32_t ou[T];
    for (int i = 0; i < 2 * T; ++i) { oi[i] = POISON_I32; od[i] = -1.0; of[i] = POISON_F32; }
    for (int i = 0; i < T; ++i) { ol[i] = -1; ou[i] = POISON_U32; }
    amp_array_view *vi = test_view(oi, 4, amp_extent_1d(2 * T), AMP_READ_WRITE);
    amp_array_view *vd = test_view(od, 8, amp_extent_1d(2 * T), AMP_READ_WRITE);
    amp_array_view *vf = test_view(of, 4, amp_extent_1d(2 * T), AMP_READ_WRITE);
    amp_array_view *vl = test_view(ol, 8, amp_extent_1d(T), AMP_READ_WRITE);
    amp_array_view *vu = test_view(ou, 4, amp_extent_1d(T), AMP_READ_WRITE);
    amp_arg args[] = {amp_arg_int32(a),    amp_arg_view(vi), amp_arg_float64(b), amp_arg_float32(c),
                      amp_arg_view(vd),  amp_arg_int64(d), amp_arg_uint32(e),   amp_arg_view(vf),
                      amp_arg_int32(f),    amp_arg_view(vl), amp_arg_float32(g),  amp_arg_view(vu),
                      amp_arg_float64(h)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(T), k, args, 13));
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_array_view_destroy(vd));
    ASSERT_OK(amp_array_view_destroy(vf));
    ASSERT_OK(amp_array_view_destroy(vl));
    ASSERT_OK(amp_array_view_destroy(vu));
    for (int t = 0; t < T; ++t) {
        cr_assert_eq(oi[2 * t], a + t, "int a at thread %d: %d", t, oi[2 * t]);
        cr_assert_eq(oi[2 * t + 1], f - t, "int f at thread %d: %d", t, oi[2 * t + 1]);
        cr_assert(od[2 * t] == b, "double b at thread %d: %.17g", t, od[2 * t]);
        cr_assert(od[2 * t + 1] == h, "double h at thread %d: %.17g", t, od[2 * t + 1]);
        cr_assert(of[2 * t] == c, "float c at thread %d: %.9g", t, (double)of[2 * t]);
        cr_assert(of[2 * t + 1] == g, "float g at thread %d: %.9g", t, (double)of[2 * t + 1]);
        cr_assert_eq(ol[t], d + t, "int64 d at thread %d: %lld", t, (long long)ol[t]);
        cr_assert_eq(ou[t], e - (uint32_t)t, "uint e at thread %d: %u", t, ou[t]);
    }
    ASSERT_OK(amp_program_destroy(p));
}

/* ------------------------------------------------- argument checking */

typedef struct axpy_fixture {
    amp_program *p;
    amp_kernel *k;
    float x[64], y[64], y0[64];
    double xd[64];
    float x2[8 * 8];
    amp_array_view *vx, *vy, *vxd, *vx2;
} axpy_fixture;

static void axpy_setup(amp_accelerator *acc, axpy_fixture *f)
{
    f->p = test_build(acc, test_kernels_launch);
    f->k = test_kernel(f->p, "axpy");
    test_fill_random(f->x, 64, 51);
    test_fill_random(f->y, 64, 52);
    test_fill_random(f->x2, 64, 53);
    memcpy(f->y0, f->y, sizeof f->y);
    for (int i = 0; i < 64; ++i) f->xd[i] = f->x[i];
    f->vx = test_view(f->x, 4, amp_extent_1d(64), AMP_READ_WRITE);
    f->vy = test_view(f->y, 4, amp_extent_1d(64), AMP_READ_WRITE);
    f->vxd = test_view(f->xd, 8, amp_extent_1d(64), AMP_READ_WRITE);
    f->vx2 = test_view(f->x2, 4, amp_extent_2d(8, 8), AMP_READ_WRITE);
}

/* The refused launch ran nothing: y is as it was. Then a correct launch on
 * the same views works (the failure left no state behind). */
static void axpy_teardown(axpy_fixture *f)
{
    ASSERT_OK(amp_array_view_synchronize(f->vy));
    test_check_f32(f->y, f->y0, 64, "y after a refused launch");
    amp_arg ok[] = {amp_arg_float32(2.0f), amp_arg_view(f->vx), amp_arg_view(f->vy)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(64), f->k, ok, 3));
    ASSERT_OK(amp_array_view_synchronize(f->vy));
    float want[64];
    for (int i = 0; i < 64; ++i) want[i] = f->y0[i] + 2.0f * f->x[i];
    check_f32_tol(f->y, want, 64, 1e-6f, "axpy after the refused launch");
    ASSERT_OK(amp_array_view_destroy(f->vx));
    ASSERT_OK(amp_array_view_destroy(f->vy));
    ASSERT_OK(amp_array_view_destroy(f->vxd));
    ASSERT_OK(amp_array_view_destroy(f->vx2));
    ASSERT_OK(amp_program_destroy(f->p));
}

ACCEL_TEST(launch, mismatch_too_few_arguments)
{
    axpy_fixture f;
    axpy_setup(acc, &f);
    amp_arg a[] = {amp_arg_float32(2.0f), amp_arg_view(f.vx)};
    ASSERT_STATUS(amp_parallel_for_each(NULL, amp_extent_1d(64), f.k, a, 2),
                  AMP_ERROR_ARGUMENT_MISMATCH);
    cr_assert_neq(amp_last_error()[0], '\0', "no message");
    axpy_teardown(&f);
}

ACCEL_TEST(launch, mismatch_too_many_arguments)
{
    axpy_fixture f;
    axpy_setup(acc, &f);
    amp_arg a[] = {amp_arg_float32(2.0f), amp_arg_view(f.vx), amp_arg_view(f.vy), amp_arg_int32(1)};
    ASSERT_STATUS(amp_parallel_for_each(NULL, amp_extent_1d(64), f.k, a, 4),
                  AMP_ERROR_ARGUMENT_MISMATCH);
    cr_assert_neq(amp_last_error()[0], '\0', "no message");
    axpy_teardown(&f);
}

ACCEL_TEST(launch, mismatch_float_for_view)
{
    axpy_fixture f;
    axpy_setup(acc, &f);
    amp_arg a[] = {amp_arg_float32(2.0f), amp_arg_float32(3.0f), amp_arg_view(f.vy)};
    ASSERT_MISMATCH_NAMES(amp_parallel_for_each(NULL, amp_extent_1d(64), f.k, a, 3), 1);
    axpy_teardown(&f);
}

ACCEL_TEST(launch, mismatch_view_for_float)
{
    axpy_fixture f;
    axpy_setup(acc, &f);
    amp_arg a[] = {amp_arg_view(f.vx), amp_arg_view(f.vx), amp_arg_view(f.vy)};
    ASSERT_MISMATCH_NAMES(amp_parallel_for_each(NULL, amp_extent_1d(64), f.k, a, 3), 0);
    axpy_teardown(&f);
}

ACCEL_TEST(launch, mismatch_int_for_float)
{
    axpy_fixture f;
    axpy_setup(acc, &f);
    amp_arg a[] = {amp_arg_int32(2), amp_arg_view(f.vx), amp_arg_view(f.vy)};
    ASSERT_MISMATCH_NAMES(amp_parallel_for_each(NULL, amp_extent_1d(64), f.k, a, 3), 0);
    axpy_teardown(&f);
}

/* An argument of no amp_arg_kind (a zeroed amp_arg, a stray number) is
 * named by its number, for a value and for a view parameter alike. */
ACCEL_TEST(launch, mismatch_unknown_kind_names_it)
{
    axpy_fixture f;
    axpy_setup(acc, &f);
    amp_arg a[] = {amp_arg_float32(2.0f), amp_arg_view(f.vx), amp_arg_view(f.vy)};
    a[0].kind = (amp_arg_kind)99;
    ASSERT_MISMATCH_NAMES(amp_parallel_for_each(NULL, amp_extent_1d(64), f.k, a, 3), 0);
    cr_assert(strstr(amp_last_error(), "kind 99"), "the kind is not named: %s", amp_last_error());
    a[0] = amp_arg_float32(2.0f);
    memset(&a[1], 0, sizeof a[1]);
    ASSERT_MISMATCH_NAMES(amp_parallel_for_each(NULL, amp_extent_1d(64), f.k, a, 3), 1);
    cr_assert(strstr(amp_last_error(), "kind 0"), "the kind is not named: %s", amp_last_error());
    axpy_teardown(&f);
}

ACCEL_TEST(launch, mismatch_view_rank)
{
    axpy_fixture f;
    axpy_setup(acc, &f);
    amp_arg a[] = {amp_arg_float32(2.0f), amp_arg_view(f.vx2), amp_arg_view(f.vy)};
    ASSERT_MISMATCH_NAMES(amp_parallel_for_each(NULL, amp_extent_1d(64), f.k, a, 3), 1);
    axpy_teardown(&f);
}

ACCEL_TEST(launch, mismatch_element_size)
{
    axpy_fixture f;
    axpy_setup(acc, &f);
    amp_arg a[] = {amp_arg_float32(2.0f), amp_arg_view(f.vxd), amp_arg_view(f.vy)};
    ASSERT_MISMATCH_NAMES(amp_parallel_for_each(NULL, amp_extent_1d(64), f.k, a, 3), 1);
    axpy_teardown(&f);
}

ACCEL_TEST(launch, mismatch_read_only_view_to_nonconst)
{
    axpy_fixture f;
    axpy_setup(acc, &f);
    float yro[64];
    test_fill_random(yro, 64, 54);
    amp_array_view *vyro = test_view(yro, 4, amp_extent_1d(64), AMP_READ_ONLY);
    amp_arg a[] = {amp_arg_float32(2.0f), amp_arg_view(f.vx), amp_arg_view(vyro)};
    ASSERT_MISMATCH_NAMES(amp_parallel_for_each(NULL, amp_extent_1d(64), f.k, a, 3), 2);
    ASSERT_OK(amp_array_view_destroy(vyro));
    axpy_teardown(&f);
}

/* A view where the kernel takes an amp::array. */
ACCEL_TEST(launch, mismatch_view_for_array_param)
{
    amp_program *p = test_build(acc, test_kernels_launch);
    amp_kernel *k = test_kernel(p, "arr_scale");
    float x[16], x0[16];
    test_fill_random(x, 16, 55);
    memcpy(x0, x, sizeof x);
    amp_array_view *v = test_view(x, 4, amp_extent_1d(16), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v), amp_arg_float32(2.0f)};
    ASSERT_MISMATCH_NAMES(amp_parallel_for_each(NULL, amp_extent_1d(16), k, a, 2), 0);
    ASSERT_OK(amp_array_view_destroy(v));
    test_check_f32(x, x0, 16, "x after the refused launch");
    ASSERT_OK(amp_program_destroy(p));
}

/* A NULL view handle is an invalid argument, not a launch. */
ACCEL_TEST(launch, null_view_argument)
{
    axpy_fixture f;
    axpy_setup(acc, &f);
    amp_arg a[] = {amp_arg_float32(2.0f), amp_arg_view(NULL), amp_arg_view(f.vy)};
    ASSERT_STATUS(amp_parallel_for_each(NULL, amp_extent_1d(64), f.k, a, 3), AMP_ERROR_INVALID_ARGUMENT);
    axpy_teardown(&f);
}

/* A read-only view is fine for a const parameter. */
ACCEL_TEST(launch, read_only_view_to_const_ok)
{
    axpy_fixture f;
    axpy_setup(acc, &f);
    amp_array_view *xro = test_view(f.x, 4, amp_extent_1d(64), AMP_READ_ONLY);
    amp_arg a[] = {amp_arg_float32(0.5f), amp_arg_view(xro), amp_arg_view(f.vy)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(64), f.k, a, 3));
    ASSERT_OK(amp_array_view_synchronize(f.vy));
    float want[64];
    for (int i = 0; i < 64; ++i) want[i] = f.y0[i] + 0.5f * f.x[i];
    check_f32_tol(f.y, want, 64, 1e-6f, "axpy with a read-only x");
    memcpy(f.y0, f.y, sizeof f.y); /* teardown's reference starts here */
    ASSERT_OK(amp_array_view_destroy(xro));
    axpy_teardown(&f);
}

ACCEL_TEST(launch, extent_rank_differs_from_kernel)
{
    axpy_fixture f;
    axpy_setup(acc, &f);
    amp_arg a[] = {amp_arg_float32(2.0f), amp_arg_view(f.vx), amp_arg_view(f.vy)};
    ASSERT_STATUS(amp_parallel_for_each(NULL, amp_extent_2d(8, 8), f.k, a, 3),
                  AMP_ERROR_INVALID_EXTENT);
    ASSERT_STATUS(amp_parallel_for_each(NULL, amp_extent_3d(4, 4, 4), f.k, a, 3),
                  AMP_ERROR_INVALID_EXTENT);
    axpy_teardown(&f);
}

ACCEL_TEST(launch, bad_extents)
{
    axpy_fixture f;
    axpy_setup(acc, &f);
    amp_arg a[] = {amp_arg_float32(2.0f), amp_arg_view(f.vx), amp_arg_view(f.vy)};
    ASSERT_STATUS(amp_parallel_for_each(NULL, amp_extent_1d(-5), f.k, a, 3), AMP_ERROR_INVALID_EXTENT);
    amp_extent r0 = amp_extent_1d(64);
    r0.rank = 0;
    ASSERT_STATUS(amp_parallel_for_each(NULL, r0, f.k, a, 3), AMP_ERROR_INVALID_EXTENT);
    amp_extent r9 = amp_extent_make(AMP_MAX_RANK + 1, NULL);
    ASSERT_STATUS(amp_parallel_for_each(NULL, r9, f.k, a, 3), AMP_ERROR_INVALID_EXTENT);
    axpy_teardown(&f);
}

ACCEL_TEST(launch, bad_extent_rank2_zero_dim)
{
    amp_program *p = test_build(acc, test_kernels_launch);
    amp_kernel *k = test_kernel(p, "enc2");
    uint32_t buf[16];
    for (int i = 0; i < 16; ++i) buf[i] = POISON_U32;
    amp_array_view *v = test_view(buf, 4, amp_extent_2d(4, 4), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_2d(4, 0), k, a, 1)); /* empty: runs nothing */
    ASSERT_STATUS(amp_parallel_for_each(NULL, amp_extent_2d(-1, 4), k, a, 1), AMP_ERROR_INVALID_EXTENT);
    ASSERT_OK(amp_array_view_destroy(v));
    for (int i = 0; i < 16; ++i) cr_assert_eq(buf[i], POISON_U32, "element %d written", i);
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TEST(launch, null_kernel)
{
    float y[8];
    test_fill_random(y, 8, 61);
    amp_array_view *v = test_view(y, 4, amp_extent_1d(8), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v)};
    (void)acc;
    ASSERT_STATUS(amp_parallel_for_each(NULL, amp_extent_1d(8), NULL, a, 1), AMP_ERROR_INVALID_ARGUMENT);
    amp_tiled_extent t;
    ASSERT_OK(amp_extent_tile(amp_extent_1d(8), (const int[]){8}, &t));
    ASSERT_STATUS(amp_parallel_for_each_tiled(NULL, t, NULL, a, 1), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_array_view_destroy(v));
}

/* A queue of another accelerator than the kernel's. */
ACCEL_TEST(launch, queue_of_other_accelerator)
{
    amp_accelerator *list[16];
    size_t n = 0;
    ASSERT_OK(amp_accelerator_list(list, 16, &n));
    amp_accelerator *other = NULL;
    for (size_t i = 0; i < n && i < 16; ++i) {
        amp_accelerator_info info;
        ASSERT_OK(amp_accelerator_get_info(list[i], &info));
        if (list[i] != acc && info.is_available) { other = list[i]; break; }
    }
    if (!other) cr_skip_test("only one accelerator available");
    amp_program *p = test_build(acc, test_kernels_launch);
    amp_kernel *k = test_kernel(p, "enc1");
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(other, &q));
    uint32_t buf[32];
    for (int i = 0; i < 32; ++i) buf[i] = POISON_U32;
    amp_array_view *v = test_view(buf, 4, amp_extent_1d(32), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v)};
    ASSERT_STATUS(amp_parallel_for_each(q, amp_extent_1d(32), k, a, 1), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_array_view_destroy(v));
    for (int i = 0; i < 32; ++i) cr_assert_eq(buf[i], POISON_U32, "element %d written", i);
    ASSERT_OK(amp_accelerator_view_destroy(q));
    ASSERT_OK(amp_program_destroy(p));
}

/* ------------------------------------------------------------ amp_array */

static amp_accelerator_view *acc_queue(amp_accelerator *acc)
{
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    cr_assert_not_null(q);
    return q;
}

ACCEL_TEST(launch, array_bound_to_array_param)
{
    enum { N = 4099 };
    amp_accelerator_view *q = acc_queue(acc);
    amp_program *p = test_build(acc, test_kernels_launch);
    amp_kernel *k = test_kernel(p, "arr_scale");
    float init[N], got[N], want[N];
    test_fill_random(init, N, 71);
    for (int i = 0; i < N; ++i) {
        want[i] = init[i] * 2.0f + 1.0f;
        got[i] = POISON_F32;
    }
    amp_array *arr = NULL;
    ASSERT_OK(amp_array_create(q, 4, amp_extent_1d(N), init, &arr));
    cr_assert_not_null(arr);
    amp_extent e;
    ASSERT_OK(amp_array_get_extent(arr, &e));
    cr_assert(amp_extent_equal(e, amp_extent_1d(N)));
    size_t es = 0;
    ASSERT_OK(amp_array_get_element_size(arr, &es));
    cr_assert_eq(es, 4u);
    amp_array_view *av = NULL, *sec = NULL;
    ASSERT_OK(amp_array_view_of_array(arr, &av));
    ASSERT_OK(amp_array_view_section(av, amp_index_1d(3), amp_extent_1d(5), &sec));
    es = 0;
    ASSERT_OK(amp_array_view_get_element_size(sec, &es));
    cr_assert_eq(es, 4u, "a section of an array has its element size: %zu", es);
    ASSERT_STATUS(amp_array_view_get_element_size(sec, NULL), AMP_ERROR_INVALID_ARGUMENT);
    es = 9;
    ASSERT_STATUS(amp_array_view_get_element_size(NULL, &es), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_eq(es, 0u, "out cleared on failure");
    ASSERT_STATUS(amp_array_get_element_size(NULL, &es), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "a is NULL"), "%s", amp_last_error());
    ASSERT_OK(amp_array_view_destroy(sec));
    ASSERT_OK(amp_array_view_destroy(av));
    test_fill_random(init, N, 72); /* the array took a copy at create */
    amp_arg a[] = {amp_arg_array(arr), amp_arg_float32(2.0f)};
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), k, a, 2));
    ASSERT_OK(amp_array_copy_to_host(arr, got));
    test_check_f32(got, want, N, "arr_scale");
    /* a second launch sees the first one's result */
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), k, a, 2));
    for (int i = 0; i < N; ++i) want[i] = want[i] * 2.0f + 1.0f;
    ASSERT_OK(amp_array_copy_to_host(arr, got));
    test_check_f32(got, want, N, "arr_scale twice");
    ASSERT_OK(amp_array_destroy(arr));
    ASSERT_OK(amp_program_destroy(p));
    ASSERT_OK(amp_accelerator_view_destroy(q));
}

ACCEL_TEST(launch, array_bound_to_view_param)
{
    enum { N = 1000 };
    amp_program *p = test_build(acc, test_kernels_launch);
    amp_kernel *k = test_kernel(p, "view_scale");
    float init[N], got[N], want[N];
    test_fill_random(init, N, 81);
    for (int i = 0; i < N; ++i) {
        want[i] = init[i] * 0.5f + 1.0f;
        got[i] = POISON_F32;
    }
    /* the array on acc's default view; the launch on the kernel's default (NULL) */
    amp_accelerator_view *dq = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &dq));
    amp_array *arr = NULL;
    ASSERT_OK(amp_array_create(dq, 4, amp_extent_1d(N), init, &arr));
    amp_arg a[] = {amp_arg_array(arr), amp_arg_float32(0.5f)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(N), k, a, 2));
    ASSERT_OK(amp_array_copy_to_host(arr, got));
    test_check_f32(got, want, N, "view_scale on an array");
    ASSERT_OK(amp_array_destroy(arr));
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TEST(launch, array_rank2_const_and_copy_from_host)
{
    enum { R = 37, C = 53, N = R * C };
    amp_accelerator_view *q = acc_queue(acc);
    amp_program *p = test_build(acc, test_kernels_launch);
    amp_kernel *k = test_kernel(p, "arr2_from");
    int32_t src[N], got[N], want[N], poison[N];
    for (int i = 0; i < N; ++i) {
        src[i] = (int32_t)((i * 2654435761u) % 100003u) - 50000;
        poison[i] = POISON_I32;
        got[i] = 0;
    }
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) want[r * C + c] = src[r * C + c] * 2 + r * 1000 + c;
    amp_array *as = NULL, *ad = NULL;
    ASSERT_OK(amp_array_create(q, 4, amp_extent_2d(R, C), NULL, &as));
    ASSERT_OK(amp_array_copy_from_host(as, src));
    ASSERT_OK(amp_array_create(q, 4, amp_extent_2d(R, C), poison, &ad));
    amp_arg a[] = {amp_arg_array(as), amp_arg_array(ad)};
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_2d(R, C), k, a, 2));
    ASSERT_OK(amp_array_copy_to_host(ad, got));
    test_check_i32(got, want, N, "arr2_from");
    ASSERT_OK(amp_array_copy_to_host(as, got));
    test_check_i32(got, src, N, "the const source array");
    ASSERT_OK(amp_array_destroy(as));
    ASSERT_OK(amp_array_destroy(ad));
    ASSERT_OK(amp_program_destroy(p));
    ASSERT_OK(amp_accelerator_view_destroy(q));
}

ACCEL_TEST(launch, array_view_of_array)
{
    enum { N = 777 };
    amp_accelerator_view *q = acc_queue(acc);
    amp_program *p = test_build(acc, test_kernels_launch);
    amp_kernel *k = test_kernel(p, "view_scale");
    float init[N], got[N], want[N];
    test_fill_random(init, N, 91);
    for (int i = 0; i < N; ++i) {
        want[i] = (init[i] * 2.0f + 1.0f) * 2.0f + 1.0f;
        got[i] = POISON_F32;
    }
    amp_array *arr = NULL;
    ASSERT_OK(amp_array_create(q, 4, amp_extent_1d(N), init, &arr));
    amp_array_view *v = NULL;
    ASSERT_OK(amp_array_view_of_array(arr, &v));
    cr_assert_not_null(v);
    cr_assert_null(amp_array_view_data(v), "a view of an array has no host memory");
    amp_extent e;
    ASSERT_OK(amp_array_view_get_extent(v, &e));
    cr_assert(amp_extent_equal(e, amp_extent_1d(N)));
    amp_arg a[] = {amp_arg_view(v), amp_arg_float32(2.0f)};
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), k, a, 2));
    ASSERT_OK(amp_array_view_synchronize(v));
    /* the array itself, bound directly, sees the view's writes */
    amp_arg b[] = {amp_arg_array(arr), amp_arg_float32(2.0f)};
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), k, b, 2));
    /* views of the array block its destruction */
    ASSERT_STATUS(amp_array_destroy(arr), AMP_ERROR_BUSY);
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_array_copy_to_host(arr, got));
    test_check_f32(got, want, N, "view of array, then array");
    ASSERT_OK(amp_array_destroy(arr));
    ASSERT_OK(amp_program_destroy(p));
    ASSERT_OK(amp_accelerator_view_destroy(q));
}

Test(launch, destroy_null_is_noop)
{
    ASSERT_OK(amp_array_view_destroy(NULL));
    ASSERT_OK(amp_array_destroy(NULL));
    ASSERT_OK(amp_program_destroy(NULL));
    ASSERT_OK(amp_accelerator_view_destroy(NULL));
    ASSERT_OK(amp_future_destroy(NULL));
}

/* ------------------------------------------- stated block sizes */

/* The largest block a launch on acc may state for a kernel bounded to 1024:
 * the accelerator's threads per block. */
static int max_block_of(amp_accelerator *acc)
{
    amp_accelerator_info ai;
    ASSERT_OK(amp_accelerator_get_info(acc, &ai));
    return ai.max_tile_threads < 1024 ? ai.max_tile_threads : 1024;
}

/* Launch blk<rank> over e with block size bs (through the _with form, or
 * the _async one, or recorded into a graph and replayed twice) and check
 * that every index wrote its encoding and ran exactly once per run. */
typedef enum { BLK_SYNC, BLK_ASYNC, BLK_GRAPH } blk_mode;
static void run_blk(amp_accelerator *acc, amp_extent e, int bs, blk_mode mode)
{
    static const char *names[] = {NULL, "blk1", "blk2", "blk3"};
    amp_program *p = test_build(acc, test_kernels_launch);
    amp_kernel *k = test_kernel(p, names[e.rank]);
    int64_t n = amp_extent_size(e);
    uint32_t *out = test_xmalloc((size_t)n * 4), *cnt = test_xmalloc((size_t)n * 4), *want = test_xmalloc((size_t)n * 4);
    for (int64_t i = 0; i < n; ++i) {
        int idx[AMP_MAX_RANK];
        unlinear(e, i, idx);
        want[i] = enc_index(idx, e.rank);
        out[i] = POISON_U32;
        cnt[i] = 0;
    }
    amp_array_view *vo = test_view(out, 4, e, AMP_READ_WRITE);
    amp_array_view *vc = test_view(cnt, 4, e, AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(vo), amp_arg_view(vc)};
    amp_launch_options o = {.block_size = bs};
    uint32_t runs = 1;
    if (mode == BLK_SYNC) {
        ASSERT_OK(amp_parallel_for_each_with(NULL, e, k, a, 2, &o));
    } else if (mode == BLK_ASYNC) {
        amp_future *f = NULL;
        ASSERT_OK(amp_parallel_for_each_with_async(NULL, e, k, a, 2, &o, &f));
        ASSERT_OK(amp_future_wait(f));
        ASSERT_OK(amp_future_destroy(f));
    } else {
        amp_accelerator_view *q = NULL;
        amp_graph *g = NULL;
        ASSERT_OK(amp_accelerator_view_create(acc, &q));
        ASSERT_OK(amp_graph_begin_recording(q));
        ASSERT_OK(amp_parallel_for_each_with(q, e, k, a, 2, &o));
        ASSERT_OK(amp_graph_end_recording(q, &g));
        ASSERT_OK(amp_graph_launch(q, g));
        ASSERT_OK(amp_graph_launch(q, g));
        runs = 2;
        ASSERT_OK(amp_accelerator_view_wait(q));
        ASSERT_OK(amp_array_view_synchronize(vo));
        ASSERT_OK(amp_array_view_synchronize(vc));
        ASSERT_OK(amp_graph_destroy(g));
        ASSERT_OK(amp_accelerator_view_destroy(q));
    }
    ASSERT_OK(amp_array_view_synchronize(vo));
    ASSERT_OK(amp_array_view_synchronize(vc));
    char what[96];
    snprintf(what, sizeof what, "%s, block_size %d, extent size %lld", names[e.rank], bs, (long long)n);
    check_u32(out, want, (size_t)n, what);
    for (int64_t i = 0; i < n; ++i) want[i] = runs;
    snprintf(what, sizeof what, "%s, block_size %d: runs of each index", names[e.rank], bs);
    check_u32(cnt, want, (size_t)n, what);
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_array_view_destroy(vc));
    ASSERT_OK(amp_program_destroy(p));
    free(out);
    free(cnt);
    free(want);
}

ACCEL_TEST(launch, block_size_rank1_100003)
{
    const int sizes[] = {1, 32, 64, 96, 256, 1000, 1024, max_block_of(acc)};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
        if (sizes[i] <= max_block_of(acc)) run_blk(acc, amp_extent_1d(100003), sizes[i], BLK_SYNC);
}

ACCEL_TEST(launch, block_size_rank2_333x517)
{
    const int sizes[] = {32, 96, 1000, max_block_of(acc)};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
        if (sizes[i] <= max_block_of(acc)) run_blk(acc, amp_extent_2d(333, 517), sizes[i], BLK_SYNC);
    /* Rows past the 65535 grid limit (the y loop) with a stated block. */
    run_blk(acc, amp_extent_2d(70001, 3), 64, BLK_SYNC);
}

ACCEL_TEST(launch, block_size_rank3)
{
    run_blk(acc, amp_extent_3d(7, 45, 131), 96, BLK_SYNC);
    run_blk(acc, amp_extent_3d(7, 45, 131), 1000, BLK_SYNC);
    /* Outer dimensions past the 65535 grid limit (the z loop). */
    run_blk(acc, amp_extent_3d(66001, 3, 5), 32, BLK_SYNC);
}

ACCEL_TEST(launch, block_size_async) { run_blk(acc, amp_extent_1d(100003), 96, BLK_ASYNC); }

ACCEL_TEST(launch, block_size_graph_replay)
{
    run_blk(acc, amp_extent_1d(100003), 1000, BLK_GRAPH);
    run_blk(acc, amp_extent_2d(333, 517), 96, BLK_GRAPH);
}

/* NULL options and a zero block size are the plain launch. */
ACCEL_TEST(launch, block_size_default)
{
    run_blk(acc, amp_extent_2d(333, 517), 0, BLK_SYNC);
    amp_program *p = test_build(acc, test_kernels_launch);
    amp_kernel *k = test_kernel(p, "enc1");
    enum { N = 100003 };
    uint32_t *out = test_xmalloc(N * 4);
    for (int i = 0; i < N; ++i) out[i] = POISON_U32;
    amp_array_view *v = test_view(out, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v)};
    ASSERT_OK(amp_parallel_for_each_with(NULL, amp_extent_1d(N), k, a, 1, NULL));
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < N; ++i) {
        int idx[1] = {i};
        if (out[i] != enc_index(idx, 1)) cr_assert_fail("enc1[%d] = 0x%08x with NULL options", i, out[i]);
        out[i] = POISON_U32;
    }
    amp_future *f = NULL;
    ASSERT_OK(amp_parallel_for_each_with_async(NULL, amp_extent_1d(N), k, a, 1, NULL, &f));
    ASSERT_OK(amp_future_wait(f));
    ASSERT_OK(amp_future_destroy(f));
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < N; ++i) {
        int idx[1] = {i};
        if (out[i] != enc_index(idx, 1)) cr_assert_fail("enc1[%d] = 0x%08x with NULL options (async)", i, out[i]);
    }
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
    free(out);
}

/* call refused with AMP_ERROR_INVALID_ARGUMENT, and the message names the
 * value, the public call and each of the extra strings. */
#define ASSERT_BLOCK_REFUSED(call, value, name, ...)                                                   \
    do {                                                                                            \
        ASSERT_STATUS(call, AMP_ERROR_INVALID_ARGUMENT);                                            \
        const char *m_ = amp_last_error();                                                          \
        char v_[24];                                                                                \
        snprintf(v_, sizeof v_, "block_size %d", (value));                                          \
        cr_assert(strstr(m_, v_), "message does not name \"%s\": %s", v_, m_);                      \
        cr_assert(strstr(m_, name), "message does not name %s: %s", name, m_);                      \
        const char *extra_[] = {__VA_ARGS__};                                                       \
        for (size_t x_ = 0; x_ < sizeof extra_ / sizeof extra_[0]; ++x_)                            \
            if (extra_[x_]) cr_assert(strstr(m_, extra_[x_]), "no \"%s\" in: %s", extra_[x_], m_); \
    } while (0)

ACCEL_TEST(launch, block_size_refused)
{
    amp_accelerator_info ai;
    ASSERT_OK(amp_accelerator_get_info(acc, &ai));
    amp_program *p = test_build(acc, test_kernels_launch);
    amp_kernel *k1024 = test_kernel(p, "blk1"), *kdef = test_kernel(p, "enc1"), *k96 = test_kernel(p, "blk1_96");
    enum { N = 1000 };
    uint32_t out[N], cnt[N];
    for (int i = 0; i < N; ++i) out[i] = cnt[i] = POISON_U32;
    amp_array_view *vo = test_view(out, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *vc = test_view(cnt, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(vo), amp_arg_view(vc)};
    amp_extent e = amp_extent_1d(N);
    amp_future *f = (amp_future *)(uintptr_t)1;
    char max[32];
    snprintf(max, sizeof max, "%d", ai.max_tile_threads);

    const int negative[] = {-1, -256, -2147483647 - 1};
    for (size_t i = 0; i < sizeof negative / sizeof negative[0]; ++i) {
        amp_launch_options o = {.block_size = negative[i]};
        ASSERT_BLOCK_REFUSED(amp_parallel_for_each_with(NULL, e, k1024, a, 2, &o), negative[i],
                             "amp_parallel_for_each_with", "negative");
        ASSERT_BLOCK_REFUSED(amp_parallel_for_each_with_async(NULL, e, k1024, a, 2, &o, &f), negative[i],
                             "amp_parallel_for_each_with_async", "negative");
    }
    /* Past the accelerator's threads per block (its number named). */
    const int big[] = {ai.max_tile_threads + 1, 1025, 4096, 2147483647};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; ++i) {
        if (big[i] <= ai.max_tile_threads) continue;
        amp_launch_options o = {.block_size = big[i]};
        ASSERT_BLOCK_REFUSED(amp_parallel_for_each_with(NULL, e, k1024, a, 2, &o), big[i],
                             "amp_parallel_for_each_with", max, "max_tile_threads");
        ASSERT_BLOCK_REFUSED(amp_parallel_for_each_with_async(NULL, e, k1024, a, 2, &o, &f), big[i],
                             "amp_parallel_for_each_with_async", max);
    }
    /* Past the kernel's own bound: 256 by default, 96 where it says so. */
    amp_launch_options o257 = {.block_size = 257}, o97 = {.block_size = 97};
    amp_arg a1[] = {amp_arg_view(vo)};
    ASSERT_BLOCK_REFUSED(amp_parallel_for_each_with(NULL, e, kdef, a1, 1, &o257), 257, "amp_parallel_for_each_with",
                         "'enc1'", "256", "AMP_KERNEL_MAX_BLOCK");
    ASSERT_BLOCK_REFUSED(amp_parallel_for_each_with(NULL, e, k96, a1, 1, &o97), 97, "amp_parallel_for_each_with",
                         "'blk1_96'", "96");
    /* Checked over an empty extent too, where nothing would run. */
    ASSERT_BLOCK_REFUSED(amp_parallel_for_each_with(NULL, amp_extent_1d(0), kdef, a1, 1, &o257), 257,
                         "amp_parallel_for_each_with", "'enc1'");
    /* Nothing ran, and a refused async launch gives no future. */
    cr_assert_null(f, "a refused amp_parallel_for_each_with_async left *out set");
    ASSERT_OK(amp_array_view_synchronize(vo));
    for (int i = 0; i < N; ++i) cr_assert_eq(out[i], POISON_U32, "out[%d] written by a refused launch", i);
    /* The bounds themselves are taken. */
    amp_launch_options o256 = {.block_size = 256}, o96 = {.block_size = 96};
    ASSERT_OK(amp_parallel_for_each_with(NULL, e, kdef, a1, 1, &o256));
    ASSERT_OK(amp_array_view_synchronize(vo));
    for (int i = 0; i < N; ++i) {
        int idx[1] = {i};
        cr_assert_eq(out[i], enc_index(idx, 1), "enc1 with block_size 256: out[%d] = 0x%08x", i, out[i]);
    }
    ASSERT_OK(amp_parallel_for_each_with(NULL, e, k96, a1, 1, &o96));
    ASSERT_OK(amp_array_view_synchronize(vo));
    for (int i = 0; i < N; ++i) cr_assert_eq(out[i], (uint32_t)i * 3u, "blk1_96 with block_size 96: out[%d]", i);
    /* With no block stated the library's own block stays within the
     * kernel's bound (it was 256 threads: the GPU driver refused the
     * launch of a kernel bounded to 96). */
    for (int i = 0; i < N; ++i) out[i] = POISON_U32;
    ASSERT_OK(amp_array_view_refresh(vo));
    ASSERT_OK(amp_parallel_for_each(NULL, e, k96, a1, 1));
    ASSERT_OK(amp_array_view_synchronize(vo));
    for (int i = 0; i < N; ++i) cr_assert_eq(out[i], (uint32_t)i * 3u, "blk1_96 with no block stated: out[%d]", i);
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_array_view_destroy(vc));
    ASSERT_OK(amp_program_destroy(p));
}

/* Tiled kernels have no _with form; a tiled kernel through it is refused
 * as through amp_parallel_for_each. */
ACCEL_TEST(launch, block_size_tiled_kernel_refused)
{
    static const char src[] =
        "AMP_TILED_KERNEL(t64, amp::tiled_index<64> t, amp::array_view<int, 1> v) { v[t.global] = 1; }\n";
    amp_program *p = test_build(acc, src);
    amp_kernel *k = test_kernel(p, "t64");
    int x[64] = {0};
    amp_array_view *v = test_view(x, 4, amp_extent_1d(64), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v)};
    amp_launch_options o = {.block_size = 64};
    ASSERT_STATUS(amp_parallel_for_each_with(NULL, amp_extent_1d(64), k, a, 1, &o), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "is tiled"), "%s", amp_last_error());
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
}

/* AMP_KERNEL_MAX_BLOCK is refused at compile time on a tiled kernel and
 * outside 1..1024, with a message naming it. */
ACCEL_TEST(launch, block_size_max_block_macro_checked)
{
    static const char *bad[] = {
        "AMP_KERNEL_MAX_BLOCK(t, 256)\n"
        "AMP_TILED_KERNEL(t, amp::tiled_index<64> t_, amp::array_view<int, 1> v) { v[t_.global] = 1; }\n",
        "AMP_KERNEL_MAX_BLOCK(s, 2048)\nAMP_KERNEL(s, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 1; }\n",
        "AMP_KERNEL_MAX_BLOCK(s, 0)\nAMP_KERNEL(s, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 1; }\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        amp_program *p = NULL;
        ASSERT_STATUS(amp_program_build(acc, bad[i], NULL, &p), AMP_ERROR_COMPILE);
        cr_assert(strstr(amp_last_error(), "AMP_KERNEL_MAX_BLOCK"), "source %zu: %s", i, amp_last_error());
    }
}

/* GPU: the block the driver ran is the one stated, x by 1 by 1 at rank 2. */
ACCEL_TEST(launch, block_size_reaches_driver)
{
    amp_accelerator_info ai;
    ASSERT_OK(amp_accelerator_get_info(acc, &ai));
    if (ai.is_emulated) cr_skip_test("the CPU accelerator runs no blocks");
    amp_program *p = test_build(acc, test_kernels_launch);
    amp_kernel *k = test_kernel(p, "blk_dim");
    enum { R = 33, C = 517 };
    uint32_t *out = test_xmalloc(R * C * 4);
    amp_array_view *v = test_view(out, 4, amp_extent_2d(R, C), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v)};
    const int sizes[] = {32, 96, 1000, max_block_of(acc)};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        for (int i = 0; i < R * C; ++i) out[i] = POISON_U32;
        amp_launch_options o = {.block_size = sizes[s]};
        ASSERT_OK(amp_parallel_for_each_with(NULL, amp_extent_2d(R, C), k, a, 1, &o));
        ASSERT_OK(amp_array_view_synchronize(v));
        uint32_t want = (uint32_t)sizes[s] * 65536u + 256u + 1u;
        for (int i = 0; i < R * C; ++i)
            if (out[i] != want)
                cr_assert_fail("block_size %d: element %d saw blockDim %u x %u x %u", sizes[s], i, out[i] >> 16,
                               (out[i] >> 8) & 255u, out[i] & 255u);
    }
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
    free(out);
}

/* GPU: over an extent of INT_MAX, a block of 1000 (which does not divide
 * it) puts the last block's threads past INT_MAX; none of them may run
 * with a wrapped, negative index, and the last index must run. The CPU
 * accelerator has no blocks (and 2^31 work-items take it long). */
ACCEL_TEST(launch, block_size_edge_past_int_max)
{
    amp_accelerator_info ai;
    ASSERT_OK(amp_accelerator_get_info(acc, &ai));
    if (ai.is_emulated) cr_skip_test("the CPU accelerator runs no blocks");
    amp_program *p = test_build(acc, test_kernels_launch);
    amp_kernel *k = test_kernel(p, "blk_edge");
    int32_t flag[2] = {0, 0};
    amp_array_view *v = test_view(flag, 4, amp_extent_1d(2), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v)};
    amp_launch_options o = {.block_size = 1000};
    ASSERT_OK(amp_parallel_for_each_with(NULL, amp_extent_1d(2147483647), k, a, 1, &o));
    ASSERT_OK(amp_array_view_synchronize(v));
    cr_assert_eq(flag[0], 0, "a work-item ran with a negative index (x wrapped past INT_MAX)");
    cr_assert_eq(flag[1], 1, "the last index (INT_MAX - 1) did not run");
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
}

/* ------------------------------------------------ streaming stores */

/* AMP_KERNEL_STREAMING_STORES: kernels that promise to write their own
 * element of some views and read none of them give the same results as
 * without the promise, on every accelerator; on the CPU accelerator
 * (AMP_CPU_STREAM_MIN=0 here: every launch streams) through its buffer
 * and streaming stores, which must write exactly the views' elements:
 * destinations at every alignment, extents that end mid-line and mid-block,
 * and a section of a wider rank-2 array, whose other elements stay as they
 * were. (test_cpu's streaming tests check that the streamed path ran.) */
static const char stream_kernels[] =
    "AMP_KERNEL_STREAMING_STORES(st_two, 0, 2)\n"
    "AMP_KERNEL(st_two, amp::index<1> i, amp::array_view<float, 1> a, amp::array_view<const float, 1> b,\n"
    "           amp::array_view<double, 1> c, int k)\n"
    "{ a[i] = 2.0f * b[i] + (float)k; c[i] = 3.0 * (double)b[i] + (double)i[0]; }\n"
    "AMP_KERNEL_STREAMING_STORES(st_rows, 1)\n"
    "AMP_KERNEL(st_rows, amp::index<2> i, amp::array_view<const int, 2> in, amp::array_view<int, 2> out)\n"
    "{ out[i] = in[i] * 3 + i[1]; }\n"
    /* 12 bytes: no block can start on a line of it; 320 bytes: more than
     * the CPU accelerator streams (it stores them plainly). */
    "struct st_rgb { float r, g, b; };\n"
    "AMP_KERNEL_STREAMING_STORES(st_rgb_k, 0)\n"
    "AMP_KERNEL(st_rgb_k, amp::index<1> i, amp::array_view<st_rgb, 1> out, amp::array_view<const float, 1> in)\n"
    "{ st_rgb c; c.r = in[i]; c.g = 2.0f * in[i]; c.b = (float)i[0]; out[i] = c; }\n"
    "struct st_big { double v[40]; };\n"
    "AMP_KERNEL_STREAMING_STORES(st_big_k, 0)\n"
    "AMP_KERNEL(st_big_k, amp::index<1> i, amp::array_view<st_big, 1> out)\n"
    "{ st_big b; for (int k = 0; k < 40; ++k) b.v[k] = i[0] * 40.0 + k; out[i] = b; }\n";
typedef struct st_rgb {
    float r, g, b;
} st_rgb;
typedef struct st_big {
    double v[40];
} st_big;

static void stream_everything(void)
{
    setenv("AMP_CPU_STREAM_MIN", "0", 1);
    setenv("AMP_CPU_THREADS", "3", 1);
}

ACCEL_TEST(launch, streaming_stores_write_exactly_the_views, .init = stream_everything, .timeout = 120)
{
    amp_program *p = test_build(acc, stream_kernels);
    static const int sizes[] = {1, 5, 15, 16, 17, 63, 64, 65, 1000, 4099, 70001};
    enum { GUARD = 9 };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        for (int off = 0; off < 4; ++off) {
            const int n = sizes[s], k = 5 + off;
            float *a = test_xmalloc((size_t)(n + GUARD) * sizeof *a), *b = test_xmalloc((size_t)n * sizeof *b);
            double *c = test_xmalloc((size_t)(n + GUARD) * sizeof *c);
            for (int i = 0; i < n + GUARD; ++i) {
                a[i] = -1.0f;
                c[i] = -2.0;
            }
            for (int i = 0; i < n; ++i) b[i] = (float)(i % 1000);
            amp_array_view *va = test_view(a + off, sizeof *a, amp_extent_1d(n), AMP_WRITE_ONLY);
            amp_array_view *vb = test_view(b, sizeof *b, amp_extent_1d(n), AMP_READ_ONLY);
            amp_array_view *vc = test_view(c + off, sizeof *c, amp_extent_1d(n), AMP_WRITE_ONLY);
            amp_arg args[] = {amp_arg_view(va), amp_arg_view(vb), amp_arg_view(vc), amp_arg_int32(k)};
            ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(n), test_kernel(p, "st_two"), args, 4));
            ASSERT_OK(amp_array_view_synchronize(va));
            ASSERT_OK(amp_array_view_synchronize(vc));
            for (int i = 0; i < n + GUARD; ++i) {
                const bool in = i >= off && i < off + n;
                const float wa = in ? 2.0f * b[i - off] + (float)k : -1.0f;
                const double wc = in ? 3.0 * (double)b[i - off] + (double)(i - off) : -2.0;
                cr_assert_eq(a[i], wa, "n %d, offset %d: a[%d] is %g, want %g", n, off, i, a[i], wa);
                cr_assert_eq(c[i], wc, "n %d, offset %d: c[%d] is %g, want %g", n, off, i, c[i], wc);
            }
            ASSERT_OK(amp_array_view_destroy(va));
            ASSERT_OK(amp_array_view_destroy(vb));
            ASSERT_OK(amp_array_view_destroy(vc));
            free(a);
            free(b);
            free(c);
        }
    }
    /* out: rows 1..R-2, columns 3..3+C-1 of an R x (C + 7) array. */
    enum { R = 41, C = 1031, W = C + 7 };
    int *in = test_xmalloc((size_t)(R - 2) * C * sizeof *in), *out = test_xmalloc((size_t)R * W * sizeof *out);
    for (int i = 0; i < (R - 2) * C; ++i) in[i] = i % 777;
    for (int i = 0; i < R * W; ++i) out[i] = POISON_I32;
    amp_array_view *vin = test_view(in, sizeof *in, amp_extent_2d(R - 2, C), AMP_READ_ONLY);
    amp_array_view *vall = test_view(out, sizeof *out, amp_extent_2d(R, W), AMP_READ_WRITE);
    amp_array_view *vout = NULL;
    ASSERT_OK(amp_array_view_section(vall, amp_index_2d(1, 3), amp_extent_2d(R - 2, C), &vout));
    amp_arg args[] = {amp_arg_view(vin), amp_arg_view(vout)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_2d(R - 2, C), test_kernel(p, "st_rows"), args, 2));
    ASSERT_OK(amp_array_view_synchronize(vall));
    for (int r = 0; r < R; ++r)
        for (int x = 0; x < W; ++x) {
            const bool inside = r >= 1 && r < R - 1 && x >= 3 && x < 3 + C;
            const int want = inside ? in[(r - 1) * C + (x - 3)] * 3 + (x - 3) : POISON_I32;
            cr_assert_eq(out[r * W + x], want, "out(%d, %d) is %d, want %d", r, x, out[r * W + x], want);
        }
    ASSERT_OK(amp_array_view_destroy(vout));
    ASSERT_OK(amp_array_view_destroy(vall));
    ASSERT_OK(amp_array_view_destroy(vin));
    free(in);
    free(out);
    /* 12-byte elements starting at each of 16 offsets from a line (the
     * launch's chunks then start at every alignment). */
    enum { NR = 70001 };
    st_rgb *rgb = aligned_alloc(64, (NR + 32) * sizeof *rgb + 64 - (NR + 32) * sizeof *rgb % 64);
    float *src = test_xmalloc(NR * sizeof *src);
    cr_assert_not_null(rgb);
    for (int i = 0; i < NR; ++i) src[i] = (float)(i % 4093);
    for (int off = 0; off < 16; ++off) {
        const int n = off % 2 ? NR : 1000 + off;
        for (int i = 0; i < NR + 32; ++i) rgb[i] = (st_rgb){-1.0f, -1.0f, -1.0f};
        amp_array_view *vr = test_view(rgb + off, sizeof *rgb, amp_extent_1d(n), AMP_WRITE_ONLY);
        amp_array_view *vs = test_view(src, sizeof *src, amp_extent_1d(n), AMP_READ_ONLY);
        amp_arg ra[] = {amp_arg_view(vr), amp_arg_view(vs)};
        ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(n), test_kernel(p, "st_rgb_k"), ra, 2));
        ASSERT_OK(amp_array_view_synchronize(vr));
        for (int i = 0; i < NR + 32; ++i) {
            const bool in = i >= off && i < off + n;
            const st_rgb want = in ? (st_rgb){src[i - off], 2.0f * src[i - off], (float)(i - off)}
                                   : (st_rgb){-1.0f, -1.0f, -1.0f};
            cr_assert(rgb[i].r == want.r && rgb[i].g == want.g && rgb[i].b == want.b,
                      "n %d, offset %d: element %d is (%g, %g, %g), want (%g, %g, %g)", n, off, i, rgb[i].r, rgb[i].g,
                      rgb[i].b, want.r, want.g, want.b);
        }
        ASSERT_OK(amp_array_view_destroy(vr));
        ASSERT_OK(amp_array_view_destroy(vs));
    }
    free(rgb);
    free(src);
    enum { NB = 3001 };
    st_big *big = test_xmalloc(NB * sizeof *big);
    memset(big, 0, NB * sizeof *big);
    amp_array_view *vb = test_view(big, sizeof *big, amp_extent_1d(NB), AMP_WRITE_ONLY);
    amp_arg ba[] = {amp_arg_view(vb)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(NB), test_kernel(p, "st_big_k"), ba, 1));
    ASSERT_OK(amp_array_view_synchronize(vb));
    for (int i = 0; i < NB; ++i)
        for (int k = 0; k < 40; ++k)
            cr_assert_eq(big[i].v[k], i * 40.0 + k, "big[%d].v[%d] is %g", i, k, big[i].v[k]);
    ASSERT_OK(amp_array_view_destroy(vb));
    free(big);
    ASSERT_OK(amp_program_destroy(p));
}

/* AMP_KERNEL_STREAMING_STORES is refused at compile time, with a message
 * naming it, on a tiled kernel, past the kernel's parameters, outside
 * 0..31, and on a parameter that is not a writable view or array of the
 * kernel's rank. */
ACCEL_TEST(launch, streaming_stores_macro_checked)
{
    static const struct {
        const char *source, *message;
    } bad[] = {
        {"AMP_KERNEL_STREAMING_STORES(t, 0)\n"
         "AMP_TILED_KERNEL(t, amp::tiled_index<64> t_, amp::array_view<int, 1> v) { v[t_.global] = 1; }\n",
         "AMP_KERNEL_STREAMING_STORES applies to AMP_KERNEL (simple) kernels"},
        {"AMP_KERNEL_STREAMING_STORES(s, 1)\nAMP_KERNEL(s, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 1; }\n",
         "AMP_KERNEL_STREAMING_STORES names a position past the kernel's parameters"},
        {"AMP_KERNEL_STREAMING_STORES(s, 40)\nAMP_KERNEL(s, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 1; }\n",
         "AMP_KERNEL_STREAMING_STORES(s, ...) takes parameter positions from 0 to 31"},
        {"AMP_KERNEL_STREAMING_STORES(s, -1)\nAMP_KERNEL(s, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 1; }\n",
         "AMP_KERNEL_STREAMING_STORES(s, ...) takes parameter positions from 0 to 31"},
        {"AMP_KERNEL_STREAMING_STORES(s, 1)\n"
         "AMP_KERNEL(s, amp::index<1> i, amp::array_view<int, 1> v, amp::array_view<const int, 1> w) { v[i] = w[i]; }\n",
         "names a parameter that is not a writable amp::array_view or amp::array of the kernel's rank"},
        {"AMP_KERNEL_STREAMING_STORES(s, 1)\nAMP_KERNEL(s, amp::index<1> i, amp::array_view<int, 1> v, int x) { v[i] = x; }\n",
         "names a parameter that is not a writable amp::array_view or amp::array of the kernel's rank"},
        {"AMP_KERNEL_STREAMING_STORES(s, 0)\n"
         "AMP_KERNEL(s, amp::index<2> i, amp::array_view<int, 1> v) { v[i[1]] = 1; }\n",
         "names a parameter that is not a writable amp::array_view or amp::array of the kernel's rank"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        amp_program *p = NULL;
        ASSERT_STATUS(amp_program_build(acc, bad[i].source, NULL, &p), AMP_ERROR_COMPILE);
        cr_assert(strstr(amp_last_error(), bad[i].message), "source %zu: no \"%s\" in: %s", i, bad[i].message,
                  amp_last_error());
    }
    /* Accepted: an amp::array, rank 3, two positions. */
    amp_program *p = test_build(acc, "AMP_KERNEL_STREAMING_STORES(s, 0, 2)\n"
                                     "AMP_KERNEL(s, amp::index<3> i, amp::array<int, 3> a, amp::array_view<const int, 3> b,\n"
                                     "           amp::array_view<int, 3> c) { a[i] = b[i]; c[i] = 2 * b[i]; }\n");
    ASSERT_OK(amp_program_destroy(p));
}
