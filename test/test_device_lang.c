/* test_device_lang.c — the device language on every accelerator: short-vector arithmetic and layout, C++ AMP atomics under contention, precise_math/fast_math against the host's libm within documented ulp bounds, direct3d helpers, and one kernel using every documented name. */
#include "support.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char test_kernels_device_lang[];
extern const char test_kernels_device_types[];

/* ------------------------------------------------------------ helpers */

static uint32_t rng_state = 0x9E3779B9u;
static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}
/* Uniform in [lo, hi]. */
static double rng_uniform(double lo, double hi)
{
    double u = (double)(rng() >> 5) / (double)(1u << 27);
    return lo + (hi - lo) * u;
}

static amp_program *build(amp_accelerator *acc)
{
    return test_build(acc, test_kernels_device_lang);
}

static void launch(amp_kernel *k, amp_extent e, const amp_arg *args, size_t n)
{
    ASSERT_OK(amp_parallel_for_each(NULL, e, k, args, n));
}

/* --------------------------------------------------- short vectors (host) */

typedef struct f4 { _Alignas(16) float x; float y, z, w; } f4;
typedef struct i4 { _Alignas(16) int32_t x; int32_t y, z, w; } i4;
typedef struct d3 { double x, y, z; } d3;
_Static_assert(sizeof(f4) == 16 && _Alignof(f4) == 16, "f4 mirrors float4");
_Static_assert(sizeof(d3) == 24 && _Alignof(d3) == 8, "d3 mirrors double3");

static f4 f4_make(float x, float y, float z, float w) { return (f4){x, y, z, w}; }
#define F4_MAP2(a, b, OP) f4_make((a).x OP (b).x, (a).y OP (b).y, (a).z OP (b).z, (a).w OP (b).w)
#define I4_MAP2(a, b, OP) (i4){(a).x OP (b).x, (a).y OP (b).y, (a).z OP (b).z, (a).w OP (b).w}

static void check_f4(const f4 *got, const f4 *want, size_t n, const char *what)
{
    for (size_t i = 0; i < n; ++i)
        cr_assert(memcmp(&got[i], &want[i], sizeof(f4)) == 0,
                  "%s: element %zu: got (%.9g %.9g %.9g %.9g) want (%.9g %.9g %.9g %.9g)", what, i,
                  (double)got[i].x, (double)got[i].y, (double)got[i].z, (double)got[i].w, (double)want[i].x,
                  (double)want[i].y, (double)want[i].z, (double)want[i].w);
}

/* __fmul_rn and __fadd_rn are never merged into a fused multiply-add, on
 * every accelerator (CUDA's and HIP's promise; the CPU accelerator's host
 * compiler contracted __fadd_rn(__fmul_rn(a, b), c) across the inlined
 * functions). Inputs where a fused result differs from the rounded
 * product's sum: c cancels the product, leaving its rounding error. */
ACCEL_TEST(device_lang, rn_products_and_sums_are_never_fused)
{
    static const char src[] =
        "AMP_KERNEL(rn_mad, amp::index<1> i, amp::array_view<const float, 1> a, amp::array_view<const float, 1> b,\n"
        "           amp::array_view<const float, 1> c, amp::array_view<float, 1> both, amp::array_view<float, 1> sum)\n"
        "{\n"
        "    both[i] = __fadd_rn(__fmul_rn(a[i], b[i]), c[i]);\n"
        "    sum[i] = __fadd_rn(a[i] * b[i], c[i]);\n"
        "}\n";
    enum { N = 4096 };
    static float a[N], b[N], c[N], both[N], sum[N];
    int fused_differs = 0;
    for (int i = 0; i < N; ++i) {
        a[i] = 1.0f + (float)(i + 1) * 3e-7f;
        b[i] = 1.0f - (float)(i + 1) * 7e-7f;
        volatile float p = a[i] * b[i];
        c[i] = -p;
        if (fmaf(a[i], b[i], c[i]) != 0.0f) ++fused_differs;
    }
    cr_assert_gt(fused_differs, N / 2, "the inputs must tell a fused result from a rounded one (%d)", fused_differs);
    amp_program *p = test_build(acc, src);
    amp_array_view *v[5];
    float *d[5] = {a, b, c, both, sum};
    amp_arg args[5];
    for (int j = 0; j < 5; ++j) {
        v[j] = test_view(d[j], 4, amp_extent_1d(N), j < 3 ? AMP_READ_ONLY : AMP_WRITE_ONLY);
        args[j] = amp_arg_view(v[j]);
    }
    launch(test_kernel(p, "rn_mad"), amp_extent_1d(N), args, 5);
    for (int j = 3; j < 5; ++j) ASSERT_OK(amp_array_view_synchronize(v[j]));
    for (int i = 0; i < N; ++i) {
        volatile float prod = a[i] * b[i];
        float want = prod + c[i];
        cr_assert_eq(both[i], want, "__fadd_rn(__fmul_rn(a, b), c) at %d: %a, want %a (fused: %a)", i,
                     (double)both[i], (double)want, (double)fmaf(a[i], b[i], c[i]));
        cr_assert_eq(sum[i], want, "__fadd_rn(a * b, c) at %d: %a, want %a", i, (double)sum[i], (double)want);
    }
    for (int j = 0; j < 5; ++j) ASSERT_OK(amp_array_view_destroy(v[j]));
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TEST(device_lang, float4_operators)
{
    amp_program *p = build(acc);
    enum { N = 333, R = 16 };
    f4 *a = test_xmalloc(N * sizeof *a), *b = test_xmalloc(N * sizeof *b);
    f4 *r = test_xmalloc(N * R * sizeof *r), *want = test_xmalloc(N * R * sizeof *want);
    float tmp[8];
    for (int i = 0; i < N; ++i) {
        test_fill_random(tmp, 8, 100u + (unsigned)i);
        a[i] = f4_make(tmp[0] * 4, tmp[1] * 4, tmp[2] * 4, tmp[3] * 4);
        b[i] = f4_make(tmp[4], tmp[5], tmp[6], tmp[7]);
    }
    for (int i = 0; i < N * R; ++i) r[i] = f4_make(POISON_F32, POISON_F32, POISON_F32, POISON_F32);
    for (int i = 0; i < N; ++i) {
        f4 x = a[i], y = b[i], *w = &want[i * R];
        w[0] = F4_MAP2(x, y, +);
        w[1] = F4_MAP2(x, y, -);
        w[2] = F4_MAP2(x, y, *);
        w[3] = F4_MAP2(x, y, /);
        w[4] = f4_make(-x.x, -x.y, -x.z, -x.w);
        w[5] = f4_make(x.x * 2.5f, x.y * 2.5f, x.z * 2.5f, x.w * 2.5f);
        w[6] = f4_make(1.5f + y.x, 1.5f + y.y, 1.5f + y.z, 1.5f + y.w);
        w[7] = f4_make(3.0f / y.x, 3.0f / y.y, 3.0f / y.z, 3.0f / y.w);
        f4 t = F4_MAP2(x, y, +);
        t = F4_MAP2(t, x, *);
        t = F4_MAP2(t, y, /);
        w[8] = f4_make(t.x - 1.0f, t.y - 1.0f, t.z - 1.0f, t.w - 1.0f);
        w[9] = f4_make(x.x + 1.0f, x.y + 1.0f, x.z + 1.0f, x.w + 1.0f);
        f4 u = f4_make(x.x + 1.0f, x.y + 1.0f, x.z + 1.0f, x.w + 1.0f);
        w[10] = f4_make(u.x - 1.0f - 1.0f, u.y - 1.0f - 1.0f, u.z - 1.0f - 1.0f, u.w - 1.0f - 1.0f);
        w[11] = f4_make(0.0f, 1.0f, 1.0f, 1.0f); /* x != y, x == x, w differs from w/2 */
        w[12] = f4_make(x.w, x.z, x.y, x.x);
        w[13] = f4_make(x.y, x.y, x.y, x.y);
        w[14] = f4_make((float)(int)(x.x * 100.0f), (float)(int)(x.y * 100.0f), (float)(int)(x.z * 100.0f),
                        (float)(int)(x.w * 100.0f));
        w[15] = f4_make(y.w, y.w + y.x, y.y, y.x);
    }
    amp_array_view *va = test_view(a, sizeof(f4), amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vb = test_view(b, sizeof(f4), amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vr = test_view(r, sizeof(f4), amp_extent_2d(N, R), AMP_WRITE_ONLY);
    amp_arg args[] = {amp_arg_view(va), amp_arg_view(vb), amp_arg_view(vr)};
    launch(test_kernel(p, "vec_float4"), amp_extent_1d(N), args, 3);
    ASSERT_OK(amp_array_view_synchronize(vr));
    static const char *what[R] = {"x + y", "x - y", "x * y", "x / y", "-x", "x * 2.5f", "1.5f + y",
                                  "3.0f / y", "compound assignments", "++t", "--t", "== and !=",
                                  "make_float4", "broadcast constructor", "int_4 <-> float_4",
                                  "swizzles and accessors"};
    for (int k = 0; k < R; ++k)
        for (int i = 0; i < N; ++i) check_f4(&r[i * R + k], &want[i * R + k], 1, what[k]);
    ASSERT_OK(amp_array_view_destroy(va));
    ASSERT_OK(amp_array_view_destroy(vb));
    ASSERT_OK(amp_array_view_destroy(vr));
    ASSERT_OK(amp_program_destroy(p));
    free(a), free(b), free(r), free(want);
}

ACCEL_TEST(device_lang, int4_operators)
{
    amp_program *p = build(acc);
    enum { N = 517, R = 16 };
    i4 *a = test_xmalloc(N * sizeof *a), *b = test_xmalloc(N * sizeof *b);
    i4 *r = test_xmalloc(N * R * sizeof *r), *want = test_xmalloc(N * R * sizeof *want);
    for (int i = 0; i < N; ++i) {
        int32_t v[8];
        for (int k = 0; k < 8; ++k) {
            v[k] = (int32_t)(rng() % 60001u) - 30000;
            if (k >= 4 && v[k] == 0) v[k] = 17;
        }
        a[i] = (i4){v[0], v[1], v[2], v[3]};
        b[i] = (i4){v[4], v[5], v[6], v[7]};
    }
    for (int i = 0; i < N * R; ++i) r[i] = (i4){POISON_I32, POISON_I32, POISON_I32, POISON_I32};
    for (int i = 0; i < N; ++i) {
        i4 x = a[i], y = b[i], *w = &want[i * R];
        w[0] = I4_MAP2(x, y, +);
        w[1] = I4_MAP2(x, y, -);
        w[2] = I4_MAP2(x, y, *);
        w[3] = I4_MAP2(x, y, /);
        w[4] = I4_MAP2(x, y, %);
        w[5] = I4_MAP2(x, y, ^);
        w[6] = I4_MAP2(x, y, |);
        w[7] = I4_MAP2(x, y, &);
        w[8] = (i4){x.x * 8, x.y * 8, x.z * 8, x.w * 8};
        w[9] = (i4){x.x >> 2, x.y >> 2, x.z >> 2, x.w >> 2};
        w[10] = (i4){~x.x, ~x.y, ~x.z, ~x.w};
        w[11] = (i4){-x.x, -x.y, -x.z, -x.w};
        int32_t t[4] = {x.x % 7, x.y % 7, x.z % 7, x.w % 7}, yy[4] = {y.x, y.y, y.z, y.w};
        for (int k = 0; k < 4; ++k) {
            t[k] = (int32_t)((uint32_t)t[k] << (k + 1));
            t[k] = (((t[k] ^ yy[k]) | 0x100) & 0xfff) >> 1;
        }
        w[12] = (i4){t[0], t[1], t[2], t[3]};
        w[13] = (i4){x.x + 2, x.y + 2, x.z + 2, x.w + 2};
        w[14] = (i4){0, 1, 1, 1};
        w[15] = (i4){(int32_t)((uint32_t)x.x >> 28), (int32_t)((uint32_t)x.y >> 28), (int32_t)((uint32_t)x.z >> 28),
                     (int32_t)((uint32_t)x.w >> 28)};
    }
    amp_array_view *va = test_view(a, sizeof(i4), amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vb = test_view(b, sizeof(i4), amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vr = test_view(r, sizeof(i4), amp_extent_2d(N, R), AMP_WRITE_ONLY);
    amp_arg args[] = {amp_arg_view(va), amp_arg_view(vb), amp_arg_view(vr)};
    launch(test_kernel(p, "vec_int4"), amp_extent_1d(N), args, 3);
    ASSERT_OK(amp_array_view_synchronize(vr));
    for (int k = 0; k < R; ++k)
        for (int i = 0; i < N; ++i) {
            const i4 *g = &r[i * R + k], *w = &want[i * R + k];
            cr_assert(g->x == w->x && g->y == w->y && g->z == w->z && g->w == w->w,
                      "int4 result %d of element %d: got (%d %d %d %d) want (%d %d %d %d)", k, i, g->x, g->y,
                      g->z, g->w, w->x, w->y, w->z, w->w);
        }
    ASSERT_OK(amp_array_view_destroy(va));
    ASSERT_OK(amp_array_view_destroy(vb));
    ASSERT_OK(amp_array_view_destroy(vr));
    ASSERT_OK(amp_program_destroy(p));
    free(a), free(b), free(r), free(want);
}

/* HIP's layout: N components of s bytes; alignment s, 2s, s, 4s for N = 1..4. */
ACCEL_TEST(device_lang, every_vector_type_layout_and_arithmetic)
{
    amp_program *p = build(acc);
    enum { T = 12, K = 4 * T * 3 };
    static const int elem[T] = {1, 1, 2, 2, 4, 4, 8, 8, 8, 8, 4, 8};
    static const char *names[T] = {"char", "uchar", "short", "ushort", "int", "uint",
                                   "long", "ulong", "longlong", "ulonglong", "float", "double"};
    double out[K];
    for (int i = 0; i < K; ++i) out[i] = -1.0;
    amp_array_view *vo = test_view(out, sizeof(double), amp_extent_1d(K), AMP_WRITE_ONLY);
    amp_arg args[] = {amp_arg_view(vo)};
    launch(test_kernel(p, "vec_all_types"), amp_extent_1d(3), args, 1);
    ASSERT_OK(amp_array_view_synchronize(vo));
    for (int t = 0; t < T; ++t)
        for (int n = 1; n <= 4; ++n) {
            const double *o = &out[3 * (4 * t + n - 1)];
            /* ((v + 2) * 2 - v) / 2 = (v + 4) / 2 per component, v = 1..n. */
            double sum = 0;
            for (int c = 1; c <= n; ++c) sum += t >= 10 ? (c + 4) / 2.0 : (double)((c + 4) / 2);
            int size = n * elem[t], align = n == 3 ? elem[t] : n * elem[t];
            cr_assert_eq(o[0], sum, "%s%d arithmetic: got %g want %g", names[t], n, o[0], sum);
            cr_assert_eq(o[1], (double)size, "sizeof(%s%d): got %g want %d", names[t], n, o[1], size);
            cr_assert_eq(o[2], (double)align, "alignof(%s%d): got %g want %d", names[t], n, o[2], align);
        }
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TEST(device_lang, vectors_as_kernel_parameters)
{
    amp_program *p = build(acc);
    struct { _Alignas(16) float v[4]; } f = {{1.5f, 2.25f, -3.0f, 0.125f}};
    int32_t n[3] = {4, -7, 9};
    struct { _Alignas(16) double v[2]; } d = {{0.5, -2.0}};
    struct { _Alignas(16) int64_t v[2]; } e = {{-3, 11}};
    unsigned char c[3] = {3, 1, 2};
    double out[5] = {-1, -1, -1, -1, -1};
    amp_array_view *vo = test_view(out, sizeof(double), amp_extent_1d(5), AMP_WRITE_ONLY);
    amp_arg args[] = {amp_arg_struct(&f, sizeof f), amp_arg_struct(n, sizeof n), amp_arg_struct(&d, sizeof d),
                      amp_arg_struct(&e, sizeof e), amp_arg_struct(c, sizeof c), amp_arg_view(vo)};
    launch(test_kernel(p, "vec_params"), amp_extent_1d(5), args, 6);
    ASSERT_OK(amp_array_view_synchronize(vo));
    double want = (1.5 + 2.25 - 3.0 + 0.125) + 10.0 * (4 - 7 + 9) + 100.0 * (0.5 - 2.0) +
                  1000.0 * (-3 + 11) + 10000.0 * (3 + 1 + 2);
    for (int i = 0; i < 5; ++i) cr_assert_eq(out[i], want, "item %d: got %.17g want %.17g", i, out[i], want);
    /* A struct of the wrong size is refused, naming the parameter. */
    amp_arg bad[] = {amp_arg_struct(&f, 12), amp_arg_struct(n, sizeof n), amp_arg_struct(&d, sizeof d),
                     amp_arg_struct(&e, sizeof e), amp_arg_struct(c, sizeof c), amp_arg_view(vo)};
    ASSERT_STATUS(amp_parallel_for_each(NULL, amp_extent_1d(5), test_kernel(p, "vec_params"), bad, 6),
                  AMP_ERROR_ARGUMENT_MISMATCH);
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TEST(device_lang, tile_static_vectors)
{
    amp_program *p = build(acc);
    enum { N = 64 * 5 };
    d3 *v = test_xmalloc(N * sizeof *v), *orig = test_xmalloc(N * sizeof *orig);
    for (int i = 0; i < N; ++i) v[i] = orig[i] = (d3){i + 0.25, -i * 0.5, i * 3.0};
    amp_array_view *vv = test_view(v, sizeof(d3), amp_extent_1d(N), AMP_READ_WRITE);
    amp_tiled_extent te;
    ASSERT_OK(amp_extent_tile_1d(amp_extent_1d(N), 64, &te));
    amp_arg args[] = {amp_arg_view(vv)};
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, te, test_kernel(p, "vec_tile_static"), args, 1));
    ASSERT_OK(amp_array_view_synchronize(vv));
    for (int i = 0; i < N; ++i) {
        int j = i / 64 * 64 + 63 - i % 64;
        cr_assert(v[i].x == 2 * orig[j].x && v[i].y == 2 * orig[j].y && v[i].z == 2 * orig[j].z,
                  "element %d: got (%g %g %g) want twice element %d", i, v[i].x, v[i].y, v[i].z, j);
    }
    ASSERT_OK(amp_array_view_destroy(vv));
    ASSERT_OK(amp_program_destroy(p));
    free(v), free(orig);
}

/* ---------------------------------------------------------------- atomics */

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* got[0..n-1] (with extra appended) is a permutation of first..first+n(-1+1). */
static void check_permutation(int *got, size_t n, int extra, int extra_want, const char *what)
{
    int *all = test_xmalloc((n + 1) * sizeof *all);
    memcpy(all, got, n * sizeof *all);
    size_t m = n;
    if (extra_want != INT_MIN) all[m++] = extra;
    qsort(all, m, sizeof *all, cmp_int);
    size_t k = 0;
    int expect_extra = extra_want != INT_MIN;
    for (size_t i = 0; i < m; ++i) {
        if (expect_extra && all[i] == extra_want) {
            expect_extra = 0;
            continue;
        }
        cr_assert_eq(all[i], (int)k, "%s: value %d missing or repeated (found %d)", what, (int)k, all[i]);
        ++k;
    }
    cr_assert_eq(k, n, "%s: %zu distinct values, want %zu", what, k, n);
    cr_assert(!expect_extra, "%s: the initial value %d is neither returned nor left", what, extra_want);
    free(all);
}

ACCEL_TEST(device_lang, cpp_amp_atomics_under_contention)
{
    amp_program *p = build(acc);
    enum { N = 1 << 16 };
    int *val = test_xmalloc(N * sizeof *val), *old = test_xmalloc(6 * N * sizeof *old);
    int c[11] = {0, 0, 0, 0, INT_MIN, INT_MAX, -1, 0, 0, -7, 0};
    unsigned u[11] = {0, 0, 0, 0, 0, UINT_MAX, UINT_MAX, 0, 0, 7, 0};
    int64_t sum = 0;
    int mx = INT_MIN, mn = INT_MAX, or_ = 0, xor_ = 0;
    unsigned umx = 0, umn = UINT_MAX, uor = 0, uxor = 0;
    for (int i = 0; i < N; ++i) {
        val[i] = (int)(rng() % 32769u) - 16384;
        if (val[i] == 0) val[i] = 5;
        sum += val[i];
        mx = val[i] > mx ? val[i] : mx;
        mn = val[i] < mn ? val[i] : mn;
        or_ |= val[i];
        xor_ ^= val[i];
        unsigned uv = (unsigned)val[i];
        umx = uv > umx ? uv : umx;
        umn = uv < umn ? uv : umn;
        uor |= uv;
        uxor ^= uv;
    }
    for (int i = 0; i < 6 * N; ++i) old[i] = POISON_I32;
    amp_array_view *vv = test_view(val, sizeof(int), amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vc = test_view(c, sizeof(int), amp_extent_1d(11), AMP_READ_WRITE);
    amp_array_view *vu = test_view(u, sizeof(unsigned), amp_extent_1d(11), AMP_READ_WRITE);
    amp_array_view *vo = test_view(old, sizeof(int), amp_extent_2d(6, N), AMP_WRITE_ONLY);
    amp_arg args[] = {amp_arg_view(vv), amp_arg_view(vc), amp_arg_view(vu), amp_arg_view(vo)};
    launch(test_kernel(p, "atomics_int"), amp_extent_1d(N), args, 4);
    ASSERT_OK(amp_array_view_synchronize(vc));
    ASSERT_OK(amp_array_view_synchronize(vu));
    ASSERT_OK(amp_array_view_synchronize(vo));

    cr_assert_eq(c[0], (int)sum, "atomic_fetch_add(int): got %d want %d", c[0], (int)sum);
    cr_assert_eq(c[1], (int)-sum, "atomic_fetch_sub(int): got %d want %d", c[1], (int)-sum);
    cr_assert_eq(c[2], N, "atomic_fetch_inc(int): got %d want %d", c[2], N);
    cr_assert_eq(c[3], -N, "atomic_fetch_dec(int): got %d want %d", c[3], -N);
    cr_assert_eq(c[4], mx, "atomic_fetch_max(int): got %d want %d", c[4], mx);
    cr_assert_eq(c[5], mn, "atomic_fetch_min(int): got %d want %d", c[5], mn);
    cr_assert_eq(c[6], INT_MIN, "atomic_fetch_and(int): got %#x want %#x", c[6], INT_MIN);
    cr_assert_eq(c[7], or_, "atomic_fetch_or(int): got %#x want %#x", c[7], or_);
    cr_assert_eq(c[8], xor_, "atomic_fetch_xor(int): got %#x want %#x", c[8], xor_);
    cr_assert_eq(c[10], N, "atomic_compare_exchange(int) counter: got %d want %d", c[10], N);
    check_permutation(&old[0 * N], N, 0, INT_MIN, "atomic_fetch_inc(int) tickets");
    check_permutation(&old[1 * N], N, c[9], -7, "atomic_exchange(int) previous values");
    check_permutation(&old[2 * N], N, 0, INT_MIN, "atomic_compare_exchange(int) tickets");

    cr_assert_eq(u[0], (unsigned)sum, "atomic_fetch_add(unsigned): got %u want %u", u[0], (unsigned)sum);
    cr_assert_eq(u[1], 0u - (unsigned)sum, "atomic_fetch_sub(unsigned): got %u", u[1]);
    cr_assert_eq(u[2], (unsigned)N, "atomic_fetch_inc(unsigned): got %u", u[2]);
    cr_assert_eq(u[3], 0u - (unsigned)N, "atomic_fetch_dec(unsigned): got %u", u[3]);
    cr_assert_eq(u[4], umx, "atomic_fetch_max(unsigned): got %u want %u", u[4], umx);
    cr_assert_eq(u[5], umn, "atomic_fetch_min(unsigned): got %u want %u", u[5], umn);
    cr_assert_eq(u[6], 0u, "atomic_fetch_and(unsigned): got %#x", u[6]);
    cr_assert_eq(u[7], uor, "atomic_fetch_or(unsigned): got %#x want %#x", u[7], uor);
    cr_assert_eq(u[8], uxor, "atomic_fetch_xor(unsigned): got %#x want %#x", u[8], uxor);
    cr_assert_eq(u[10], (unsigned)N, "atomic_compare_exchange(unsigned) counter: got %u", u[10]);
    check_permutation(&old[3 * N], N, 0, INT_MIN, "atomic_fetch_inc(unsigned) tickets");
    check_permutation(&old[4 * N], N, (int)u[9], 7, "atomic_exchange(unsigned) previous values");
    check_permutation(&old[5 * N], N, 0, INT_MIN, "atomic_compare_exchange(unsigned) tickets");

    ASSERT_OK(amp_array_view_destroy(vv));
    ASSERT_OK(amp_array_view_destroy(vc));
    ASSERT_OK(amp_array_view_destroy(vu));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(p));
    free(val), free(old);
}

ACCEL_TEST(device_lang, hip_atomics_and_float_exchange_under_contention)
{
    amp_program *p = build(acc);
    enum { N = 1 << 16 };
    float f[2] = {-1.0f, 0.0f};
    double d[1] = {0.0};
    unsigned long long ull[4] = {0, 0, ~0ull, 0};
    unsigned w[4] = {0, 0, 0, 0};
    float *fold = test_xmalloc(N * sizeof *fold);
    for (int i = 0; i < N; ++i) fold[i] = POISON_F32;
    amp_array_view *vf = test_view(f, sizeof(float), amp_extent_1d(2), AMP_READ_WRITE);
    amp_array_view *vd = test_view(d, sizeof(double), amp_extent_1d(1), AMP_READ_WRITE);
    amp_array_view *vl = test_view(ull, sizeof(unsigned long long), amp_extent_1d(4), AMP_READ_WRITE);
    amp_array_view *vw = test_view(w, sizeof(unsigned), amp_extent_1d(4), AMP_READ_WRITE);
    amp_array_view *vo = test_view(fold, sizeof(float), amp_extent_1d(N), AMP_WRITE_ONLY);
    unsigned *casold = test_xmalloc(N * sizeof *casold);
    for (int i = 0; i < N; ++i) casold[i] = 0xdeadbeefu;
    amp_array_view *vc = test_view(casold, sizeof(unsigned), amp_extent_1d(N), AMP_WRITE_ONLY);
    amp_arg args[] = {amp_arg_view(vf), amp_arg_view(vd), amp_arg_view(vl), amp_arg_view(vw), amp_arg_view(vo),
                      amp_arg_view(vc)};
    launch(test_kernel(p, "atomics_hip"), amp_extent_1d(N), args, 6);
    ASSERT_OK(amp_array_view_synchronize(vc));
    ASSERT_OK(amp_array_view_synchronize(vf));
    ASSERT_OK(amp_array_view_synchronize(vd));
    ASSERT_OK(amp_array_view_synchronize(vl));
    ASSERT_OK(amp_array_view_synchronize(vw));
    ASSERT_OK(amp_array_view_synchronize(vo));

    /* atomic_exchange(float): previous values + final = {-1} and n + 0.5. */
    int *idx = test_xmalloc(N * sizeof *idx);
    for (int i = 0; i < N; ++i) idx[i] = fold[i] == -1.0f ? -7 : (int)(fold[i] - 0.5f);
    check_permutation(idx, N, f[0] == -1.0f ? -7 : (int)(f[0] - 0.5f), -7, "atomic_exchange(float)");
    cr_assert_eq(f[1], 0.5f * N, "atomicAdd(float): got %.9g want %.9g", (double)f[1], 0.5 * N);
    cr_assert_eq(d[0], 0.25 * N, "atomicAdd(double): got %.17g want %.17g", d[0], 0.25 * N);
    unsigned long long s = (unsigned long long)N * (N - 1) / 2;
    cr_assert_eq(ull[0], s * 0x100000001ull, "atomicAdd(unsigned long long): got %#llx", ull[0]);
    cr_assert_eq(ull[1], (unsigned long long)(N - 1) << 33, "atomicMax(unsigned long long): got %#llx", ull[1]);
    cr_assert_eq(ull[2], 3ull << 33, "atomicMin(unsigned long long): got %#llx", ull[2]);
    cr_assert_eq(ull[3], ~0ull, "atomicOr(unsigned long long): got %#llx", ull[3]);
    cr_assert_eq(w[0], (unsigned)(N % 1001), "atomicInc wraps at 1000: got %u want %u", w[0], N % 1001);
    cr_assert_eq(w[1], (unsigned)((1001 - N % 1001) % 1001), "atomicDec wraps at 1000: got %u", w[1]);
    /* atomicCAS: exactly one item found 0 and stored its n + 1; every
     * other item found that value. */
    cr_assert(w[2] >= 1 && w[2] <= (unsigned)N, "atomicCAS: got %u", w[2]);
    int winners = 0;
    for (int i = 0; i < N; ++i) {
        if (casold[i] == 0u) {
            ++winners;
            cr_assert_eq(w[2], (unsigned)i + 1u, "atomicCAS: item %d found 0, but %u was stored", i, w[2]);
        } else {
            cr_assert_eq(casold[i], w[2], "atomicCAS: item %d found %u, not the one value stored (%u)", i, casold[i],
                         w[2]);
        }
    }
    cr_assert_eq(winners, 1, "atomicCAS: %d items found 0 and stored", winners);
    ASSERT_OK(amp_array_view_destroy(vc));
    free(casold);
    cr_assert_eq(w[3], 7u, "atomicExch(unsigned): got %u", w[3]);

    ASSERT_OK(amp_array_view_destroy(vf));
    ASSERT_OK(amp_array_view_destroy(vd));
    ASSERT_OK(amp_array_view_destroy(vl));
    ASSERT_OK(amp_array_view_destroy(vw));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(p));
    free(fold), free(idx);
}

ACCEL_TEST(device_lang, atomics_on_tile_static_memory)
{
    amp_program *p = build(acc);
    enum { TILES = 64, T = 128 };
    int total = 0;
    amp_array_view *vt = test_view(&total, sizeof(int), amp_extent_1d(1), AMP_READ_WRITE);
    amp_tiled_extent te;
    ASSERT_OK(amp_extent_tile_1d(amp_extent_1d(TILES * T), T, &te));
    amp_arg args[] = {amp_arg_view(vt)};
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, te, test_kernel(p, "atomics_tile_static"), args, 1));
    ASSERT_OK(amp_array_view_synchronize(vt));
    cr_assert_eq(total, TILES * (T + T * (T - 1) / 2), "got %d want %d", total, TILES * (T + T * (T - 1) / 2));
    ASSERT_OK(amp_array_view_destroy(vt));
    ASSERT_OK(amp_program_destroy(p));
}

/* --------------------------------------------------------------- direct3d */

static int ref_firstbithigh(int32_t a)
{
    uint32_t u = a < 0 ? ~(uint32_t)a : (uint32_t)a;
    return u ? 31 - __builtin_clz(u) : -1;
}
static uint32_t ref_reverse(uint32_t x)
{
    uint32_t r = 0;
    for (int b = 0; b < 32; ++b) r |= ((x >> b) & 1u) << (31 - b);
    return r;
}

ACCEL_TEST(device_lang, direct3d_helpers_exact)
{
    amp_program *p = build(acc);
    enum { N = 1000, K = 20 };
    int32_t *iv = test_xmalloc(N * sizeof *iv);
    float *fv = test_xmalloc(N * sizeof *fv);
    double *k = test_xmalloc(N * K * sizeof *k);
    test_fill_random(fv, N, 4242u);
    for (int i = 0; i < N; ++i) iv[i] = (int32_t)rng();
    iv[0] = 0, iv[1] = -1, iv[2] = INT_MIN, iv[3] = INT_MAX, iv[4] = 1, iv[5] = 5000, iv[6] = -1000;
    fv[7] = -0.25f, fv[8] = 0.5f, fv[9] = 0.1f;
    for (int i = 0; i < N * K; ++i) k[i] = -12345.0;
    amp_array_view *vi = test_view(iv, sizeof(int32_t), amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vf = test_view(fv, sizeof(float), amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vk = test_view(k, sizeof(double), amp_extent_2d(N, K), AMP_WRITE_ONLY);
    amp_arg args[] = {amp_arg_view(vi), amp_arg_view(vf), amp_arg_view(vk)};
    launch(test_kernel(p, "d3d_ops"), amp_extent_1d(N), args, 3);
    ASSERT_OK(amp_array_view_synchronize(vk));
    static const char *what[K] = {"abs", "clamp(float)", "clamp(int)", "countbits", "firstbithigh",
                                  "firstbitlow", "imax/imin", "umax/umin", "mad(float)", "mad(double)",
                                  "mad(int)", "mad(unsigned)", "radians", "rcp(float)", "rcp(double)",
                                  "reversebits", "saturate", "sign", "smoothstep", "step"};
    for (int i = 0; i < N; ++i) {
        int32_t a = iv[i], b = iv[(i + 1) % N];
        uint32_t ua = (uint32_t)a, ub = (uint32_t)b;
        float x = fv[i], y = fv[(i + 1) % N];
        double w[K];
        w[0] = (int32_t)(a < 0 ? 0u - ua : ua);
        w[1] = fminf(fmaxf(x, -0.5f), 0.25f);
        w[2] = a < -1000 ? -1000 : (a > 5000 ? 5000 : a);
        w[3] = __builtin_popcount(ua);
        w[4] = ref_firstbithigh(a);
        w[5] = __builtin_ffs(a) - 1;
        w[6] = (a > b ? a : b) + 0.5 * (a < b ? a : b);
        w[7] = (double)(ua > ub ? ua : ub) + 0.5 * (ua < ub ? ua : ub);
        w[8] = fmaf(x, y, 0.75f);
        w[9] = fma((double)x, (double)y, 0.75);
        w[10] = (int32_t)(ua * ub + 12345u);
        w[11] = ua * ub + 12345u;
        float deg = x * 180.0f;
        w[12] = deg * 0.0174532925199432957692f;
        w[13] = 1.0f / y;
        w[14] = 1.0 / (double)y;
        w[15] = ref_reverse(ua);
        w[16] = fminf(fmaxf(2.0f * x, 0.0f), 1.0f);
        w[17] = ((a > 0) - (a < 0)) + 4 * ((b > 0) - (b < 0));
        float t = fminf(fmaxf((x - -0.25f) / (0.5f - -0.25f), 0.0f), 1.0f);
        w[18] = t * t * (3.0f - 2.0f * t);
        w[19] = x >= y ? 1.0f : 0.0f;
        for (int j = 0; j < K; ++j)
            cr_assert_eq(k[i * K + j], w[j], "direct3d::%s, item %d (a=%d b=%d x=%.9g y=%.9g): got %.17g want %.17g",
                         what[j], i, a, b, (double)x, (double)y, k[i * K + j], w[j]);
    }
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_array_view_destroy(vf));
    ASSERT_OK(amp_array_view_destroy(vk));
    ASSERT_OK(amp_program_destroy(p));
    free(iv), free(fv), free(k);
}

/* ------------------------------------- C++ AMP value types in kernels */

/* The kernels of test/kernels/device_types.hip; each result is computed here
 * from the C++ AMP specification's definitions. */
static amp_program *build_types(amp_accelerator *acc)
{
    return test_build(acc, test_kernels_device_types);
}

/* index<3> and extent<3>: construction from const int[], ++ and --, scalar
 * arithmetic with the scalar on either side, extent with extent. */
ACCEL_TEST(device_lang, index_and_extent_arithmetic)
{
    amp_program *p = build_types(acc);
    enum { N = 300, IN = 7, K = 3 * 46 + 3 };
    int32_t *in = test_xmalloc(N * IN * sizeof *in), *out = test_xmalloc(N * K * sizeof *out);
    int32_t *want = test_xmalloc(N * K * sizeof *want);
    for (int n = 0; n < N; ++n) {
        int32_t *r = &in[n * IN];
        for (int d = 0; d < 3; ++d) {
            r[d] = (int32_t)(rng() % 101u) - 50;
            r[3 + d] = 1 + (int32_t)(rng() % 20u);
        }
        do r[6] = (int32_t)(rng() % 19u) - 9; while (r[6] == 0);
        if (n == 0) r[0] = r[1] = r[2] = 0, r[3] = r[4] = r[5] = 1; /* contains, equal-size rows */
        if (n == 1) for (int d = 0; d < 3; ++d) r[d] = r[3 + d]; /* e == f */
    }
    for (int i = 0; i < N * K; ++i) out[i] = POISON_I32;
    for (int n = 0; n < N; ++n) {
        const int32_t *a = &in[n * IN], *b = &in[n * IN + 3], s = in[n * IN + 6];
        int32_t *w = &want[n * K];
        for (int d = 0; d < 3; ++d) {
            const int32_t x = a[d], e = b[d];
            int32_t *c = &w[d];
            c[0] = x, c[3] = e;
            c[6] = x + 1, c[9] = x + 1, c[12] = x + 2, c[15] = x + 1, c[18] = x + 1, c[21] = x;
            c[24] = e + 1, c[27] = e + 1, c[30] = e + 2, c[33] = e + 1, c[36] = e + 1, c[39] = e;
            c[42] = x + s, c[45] = s + x, c[48] = x - s, c[51] = s - x, c[54] = x * s, c[57] = s * x;
            c[60] = x / s, c[63] = s / e, c[66] = x % s, c[69] = s % e;
            c[72] = e + s, c[75] = s + e, c[78] = e - s, c[81] = s - e, c[84] = e * s, c[87] = s * e;
            c[90] = e / s, c[93] = s / e, c[96] = e % s, c[99] = s % e;
            c[102] = e + x, c[105] = e - x, c[108] = e + x, c[111] = x, c[114] = e + x, c[117] = e - x;
            int32_t u = e + s;
            c[120] = u;
            u -= 2 * s;
            c[123] = u;
            u *= s;
            c[126] = u;
            u /= 3;
            c[129] = u;
            u %= 5;
            c[132] = u;
            c[135] = ((((x + s) * 3) - 1) / s) % 7;
        }
        bool same = a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
        w[138] = 1 + 2 + 4 * same + 8 * !same;
        w[139] = b[0] * b[1] * b[2];
        w[140] = a[0] >= 0 && a[0] < b[0] && a[1] >= 0 && a[1] < b[1] && a[2] >= 0 && a[2] < b[2];
    }
    amp_array_view *vi = test_view(in, sizeof(int32_t), amp_extent_2d(N, IN), AMP_READ_ONLY);
    amp_array_view *vo = test_view(out, sizeof(int32_t), amp_extent_2d(N, K), AMP_WRITE_ONLY);
    amp_arg args[] = {amp_arg_view(vi), amp_arg_view(vo)};
    launch(test_kernel(p, "index_extent_ops"), amp_extent_1d(N), args, 2);
    ASSERT_OK(amp_array_view_synchronize(vo));
    static const char *what[47] = {
        "index(const int[])", "extent(const int[])", "++index", "index++ (old value)", "index after ++",
        "--index", "index-- (old value)", "index after --", "++extent", "extent++ (old value)",
        "extent after ++", "--extent", "extent-- (old value)", "extent after --", "index + int",
        "int + index", "index - int", "int - index", "index * int", "int * index", "index / int",
        "int / index", "index % int", "int % index", "extent + int", "int + extent", "extent - int",
        "int - extent", "extent * int", "int * extent", "extent / int", "int / extent", "extent % int",
        "int % extent", "extent + extent", "extent - extent", "extent += extent", "extent -= extent",
        "extent + index", "extent - index", "extent += int", "extent -= int", "extent *= int",
        "extent /= int", "extent %= int", "index compound assignments", "==, !=, size(), contains()"};
    for (int n = 0; n < N; ++n)
        for (int k = 0; k < K; ++k)
            cr_assert_eq(out[n * K + k], want[n * K + k],
                         "%s, row %d (a = %d %d %d, b = %d %d %d, s = %d), component %d: got %d want %d", what[k / 3],
                         n, in[n * IN], in[n * IN + 1], in[n * IN + 2], in[n * IN + 3], in[n * IN + 4],
                         in[n * IN + 5], in[n * IN + 6], k % 3, out[n * K + k], want[n * K + k]);
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(p));
    free(in), free(out), free(want);
}

static int32_t round_up(int32_t x, int32_t m) { return (x + m - 1) / m * m; }
static int32_t round_down(int32_t x, int32_t m) { return x / m * m; }

/* extent::tile<D0[, D1[, D2]]>() and tiled_extent's pad(), truncate(),
 * tile_dim0..2, get_tile_extent() and size(), in a kernel. */
ACCEL_TEST(device_lang, tiled_extent_in_kernels)
{
    amp_program *p = build_types(acc);
    enum { N = 64, K = 26 };
    int32_t in[N * 3], out[N * K], want[N * K];
    for (int n = 0; n < N; ++n)
        for (int d = 0; d < 3; ++d) in[n * 3 + d] = 1 + (int32_t)(rng() % 100u);
    /* Already whole tiles; smaller than one tile (truncate gives 0). */
    in[0] = 4, in[1] = 12, in[2] = 32;
    in[3] = 1, in[4] = 3, in[5] = 7;
    for (int i = 0; i < N * K; ++i) out[i] = POISON_I32;
    static const int32_t tile[3] = {2, 4, 8};
    for (int n = 0; n < N; ++n) {
        const int32_t *e = &in[n * 3];
        int32_t *w = &want[n * K], k = 0;
        int64_t ps = 1, ts = 1;
        bool whole = true, under = true;
        for (int d = 0; d < 3; ++d) w[k++] = e[d];
        for (int d = 0; d < 3; ++d) w[k++] = round_up(e[d], tile[d]), ps *= round_up(e[d], tile[d]);
        for (int d = 0; d < 3; ++d) w[k++] = round_down(e[d], tile[d]), ts *= round_down(e[d], tile[d]);
        for (int d = 0; d < 3; ++d) whole = whole && e[d] % tile[d] == 0, under = under && round_down(e[d], tile[d]) == e[d];
        w[k++] = (int32_t)ps;
        w[k++] = (int32_t)ts;
        w[k++] = 20408;
        for (int d = 0; d < 3; ++d) w[k++] = tile[d];
        w[k++] = round_up(e[2], 16);
        w[k++] = round_down(e[2], 16);
        w[k++] = 16 + 100000;
        w[k++] = round_up(e[1], 3);
        w[k++] = round_up(e[2], 5);
        w[k++] = round_down(e[1], 3);
        w[k++] = round_down(e[2], 5);
        w[k++] = round_up(e[1], 3) * round_up(e[2], 5);
        w[k++] = 2000 + 3000;
        w[k++] = whole + 2 * !under + 4 + 8;
        w[k++] = 3;
        cr_assert_eq(k, K);
    }
    amp_array_view *vi = test_view(in, sizeof(int32_t), amp_extent_2d(N, 3), AMP_READ_ONLY);
    amp_array_view *vo = test_view(out, sizeof(int32_t), amp_extent_2d(N, K), AMP_WRITE_ONLY);
    amp_arg args[] = {amp_arg_view(vi), amp_arg_view(vo)};
    launch(test_kernel(p, "tiled_extent_ops"), amp_extent_1d(N), args, 2);
    ASSERT_OK(amp_array_view_synchronize(vo));
    static const char *what[K] = {"extent", "extent", "extent", "pad()", "pad()", "pad()", "truncate()",
                                  "truncate()", "truncate()", "pad().size()", "truncate().size()",
                                  "tile_dim0..2", "get_tile_extent()", "get_tile_extent()", "get_tile_extent()",
                                  "tile<16>().pad()", "tile<16>().truncate()", "tiled_extent<16> dims and rank",
                                  "tile<3, 5>().pad()[0]", "tile<3, 5>().pad()[1]", "tile<3, 5>().truncate()[0]",
                                  "tile<3, 5>().truncate()[1]", "tile<3, 5>().pad().size()",
                                  "tile<1000, 1000>().pad()", "== and !=", "from and to extent"};
    for (int n = 0; n < N; ++n)
        for (int k = 0; k < K; ++k)
            cr_assert_eq(out[n * K + k], want[n * K + k], "%s, extent (%d %d %d): got %d want %d", what[k],
                         in[n * 3], in[n * 3 + 1], in[n * 3 + 2], out[n * K + k], want[n * K + k]);
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(p));
}

/* arr(i) is the rank N-1 sub-array, for arrays and views of rank 3 and 4:
 * arr(i)(j)(k), arr(i)(j, k), arr[i][j][k] and arr(i, j, k) name one element. */
ACCEL_TEST(device_lang, array_projection_with_parentheses)
{
    amp_program *p = build_types(acc);
    enum { I = 3, J = 4, K = 5, L = 2 };
    int32_t init[I * J * K], v4[L * I * J * K], out[I * J * K * 4];
    for (int i = 0; i < I * J * K; ++i) init[i] = 1000 + 7 * i;
    for (int i = 0; i < L * I * J * K; ++i) v4[i] = -5 * i - 1;
    for (int i = 0; i < I * J * K * 4; ++i) out[i] = POISON_I32;
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    amp_array *arr;
    ASSERT_OK(amp_array_create(q, sizeof(int32_t), amp_extent_3d(I, J, K), init, &arr));
    amp_array_view *vv = test_view(v4, sizeof(int32_t), amp_extent_4d(L, I, J, K), AMP_READ_ONLY);
    amp_array_view *vo = test_view(out, sizeof(int32_t), amp_extent_4d(I, J, K, 4), AMP_WRITE_ONLY);
    amp_arg args[] = {amp_arg_array(arr), amp_arg_view(vv), amp_arg_view(vo)};
    launch(test_kernel(p, "array_projections"), amp_extent_3d(I, J, K), args, 3);
    ASSERT_OK(amp_array_view_synchronize(vo));
    for (int i = 0; i < I; ++i)
        for (int j = 0; j < J; ++j)
            for (int k = 0; k < K; ++k) {
                const int32_t *o = &out[((i * J + j) * K + k) * 4];
                int l = (i + j + k) % L;
                cr_assert_eq(o[0], init[(i * J + j) * K + k], "array (%d, %d, %d): projections got %d want %d", i, j, k,
                             o[0], init[(i * J + j) * K + k]);
                cr_assert_eq(o[1], J * 100 + K * 10 + K, "array (%d, %d, %d): projected extents %d", i, j, k, o[1]);
                cr_assert_eq(o[2], v4[((l * I + i) * J + j) * K + k], "view (%d, %d, %d, %d): projections got %d", l,
                             i, j, k, o[2]);
                cr_assert_eq(o[3], I * 100 + J * 10 + K, "view (%d, %d, %d, %d): projected extents %d", l, i, j, k,
                             o[3]);
            }
    ASSERT_OK(amp_array_view_destroy(vv));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_array_destroy(arr));
    ASSERT_OK(amp_program_destroy(p));
}

static int32_t f32_bits(float f)
{
    int32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* reinterpret_as<U>() and view_as(extent<K>) of an array (any rank) and of a
 * rank-1 view, read and written in a kernel: the same elements, no copy. */
ACCEL_TEST(device_lang, reinterpret_as_and_view_as_in_kernels)
{
    amp_program *p = build_types(acc);
    enum { N = 48, K = 9 };
    float f[N];
    int32_t v[2 * N], out[N * K];
    test_fill_random(f, N, 31u);
    for (int i = 0; i < 2 * N; ++i) v[i] = POISON_I32;
    for (int i = 0; i < N * K; ++i) out[i] = POISON_I32;
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    amp_array *arr;
    ASSERT_OK(amp_array_create(q, sizeof(float), amp_extent_2d(6, 8), f, &arr));
    amp_array_view *vv = test_view(v, sizeof(int32_t), amp_extent_1d(2 * N), AMP_READ_WRITE);
    amp_array_view *vo = test_view(out, sizeof(int32_t), amp_extent_2d(N, K), AMP_WRITE_ONLY);
    amp_arg args[] = {amp_arg_array(arr), amp_arg_view(vv), amp_arg_view(vo)};
    launch(test_kernel(p, "view_shapes"), amp_extent_1d(N), args, 3);
    ASSERT_OK(amp_array_view_synchronize(vo));
    ASSERT_OK(amp_array_view_synchronize(vv));
    for (int n = 0; n < N; ++n) {
        const int32_t *o = &out[n * K];
        cr_assert_eq(o[0], f32_bits(f[n]), "array<float, 2>::reinterpret_as<int>()[%d]: got %#x", n, (unsigned)o[0]);
        cr_assert_eq(o[1], N, "reinterpret_as<int>() extent: got %d", o[1]);
        cr_assert_eq(o[2], N / 2, "reinterpret_as<float_2>() extent: got %d", o[2]);
        cr_assert_eq(o[3], n < N / 2 ? f32_bits(f[2 * n + 1]) : 0, "reinterpret_as<float_2>()[%d].y: got %#x", n,
                     (unsigned)o[3]);
        cr_assert_eq(o[4], f32_bits(f[n]), "view_as(extent<3>(4, 3, 4)) element %d: got %#x", n, (unsigned)o[4]);
        cr_assert_eq(o[5], 434, "view_as extent: got %d", o[5]);
        cr_assert_eq(o[6], 4 * N, "array_view<int, 1>::reinterpret_as<short>() extent: got %d", o[6]);
        cr_assert_eq(o[7], 100, "view_as with too many elements is empty, a fitting one is not: got %d", o[7]);
        cr_assert_eq(o[8], 2 * N, "array_view<const int, 1>::reinterpret_as<float>() extent: got %d", o[8]);
        cr_assert_eq(v[n], 3 * n, "written through view_as(extent<2>(6, 8)): element %d is %d", n, v[n]);
        int32_t halves = (int32_t)((uint32_t)(uint16_t)n | (uint32_t)(uint16_t)-n << 16);
        cr_assert_eq(v[N + n], halves, "written through reinterpret_as<short>(): element %d is %#x want %#x", N + n,
                     (unsigned)v[N + n], (unsigned)halves);
    }
    ASSERT_OK(amp_array_view_destroy(vv));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_array_destroy(arr));
    ASSERT_OK(amp_program_destroy(p));
}

/* view_as with more elements than the view has gives an empty view: the CPU
 * accelerator's debug checks report the access through it (and, as for any
 * access they stop, land it on the view's first element: nothing past the
 * original view is touched). */
Test(device_lang, oversized_view_as_is_empty)
{
    setenv("AMP_DEBUG", "1", 1);
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_program *p = build_types(acc);
    int32_t v[96];
    for (int i = 0; i < 96; ++i) v[i] = -3;
    amp_array_view *vv = test_view(v, sizeof(int32_t), amp_extent_1d(96), AMP_READ_WRITE);
    amp_arg args[] = {amp_arg_view(vv)};
    ASSERT_STATUS(amp_parallel_for_each(NULL, amp_extent_1d(4), test_kernel(p, "oversized_view_as"), args, 1),
                  AMP_ERROR_OUT_OF_BOUNDS);
    cr_assert(strstr(amp_last_error(), "oversized_view_as") && strstr(amp_last_error(), "extent (0, 0)"), "%s",
              amp_last_error());
    ASSERT_OK(amp_array_view_synchronize(vv));
    for (int i = 1; i < 96; ++i) cr_assert_eq(v[i], -3, "element %d written through an empty view: %d", i, v[i]);
    ASSERT_OK(amp_array_view_destroy(vv));
    ASSERT_OK(amp_program_destroy(p));
}

/* array_view(e0, T *src) over a local variable (C++ AMP's array_view<int,
 * 1>(1, &local)) and a local array, array_view(extent, T *) of rank 3, and a
 * view of tile_static memory shared by the tile. */
ACCEL_TILED_TEST(device_lang, views_of_kernel_memory)
{
    amp_program *p = build_types(acc);
    enum { N = 128, K = 5 };
    int32_t out[N * K];
    for (int i = 0; i < N * K; ++i) out[i] = POISON_I32;
    amp_array_view *vo = test_view(out, sizeof(int32_t), amp_extent_2d(N, K), AMP_WRITE_ONLY);
    amp_tiled_extent te;
    ASSERT_OK(amp_extent_tile_1d(amp_extent_1d(N), 32, &te));
    amp_arg args[] = {amp_arg_view(vo)};
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, te, test_kernel(p, "local_views"), args, 1));
    ASSERT_OK(amp_array_view_synchronize(vo));
    for (int n = 0; n < N; ++n) {
        const int32_t *o = &out[n * K];
        cr_assert_eq(o[0], 2 * (n + 1000), "item %d: a local through array_view<int, 1>(1, &local): %d", n, o[0]);
        cr_assert_eq(o[1], (n + 23) + 1000 * (n + 6), "item %d: rank-3 view of a local array: %d", n, o[1]);
        cr_assert_eq(o[2], 17, "item %d: array_view<int, 2>(4, 6, arr): %d", n, o[2]);
        cr_assert_eq(o[3], n + 12 + 4000, "item %d: array_view<const int, 3>(2, 3, 4, arr): %d", n, o[3]);
        cr_assert_eq(o[4], (n / 32 * 32 + 31 - n % 32) * 3, "item %d: a view of tile_static memory: %d", n, o[4]);
    }
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(p));
}

/* C++ AMP's clamps: norm to [-1, 1], unorm to [0, 1]; NaN to the lower
 * bound (Direct3D's clamp and saturate). */
static float clamp_n(float x) { return x >= -1.0f ? (x <= 1.0f ? x : 1.0f) : -1.0f; }
static float clamp_u(float x) { return x >= 0.0f ? (x <= 1.0f ? x : 1.0f) : 0.0f; }

/* norm, unorm, norm_N and unorm_N: construction clamps, every operator
 * computes in float and clamps, default values are 0, conversions. */
ACCEL_TEST(device_lang, norm_and_unorm)
{
    amp_program *p = build_types(acc);
    static const float special[] = {-3.0f, -1.5f, -1.0f, -0.75f, -0.5f, -0.0f, 0.0f, 0.25f,
                                    0.5f,  1.0f,  1.25f, 7.0f,   INFINITY, -INFINITY, NAN, 0.3f};
    enum { S = sizeof special / sizeof special[0], N = S * S + 256, K = 32 };
    float *x = test_xmalloc(N * sizeof *x), *y = test_xmalloc(N * sizeof *y);
    float *out = test_xmalloc(N * K * sizeof *out);
    for (int i = 0; i < S * S; ++i) x[i] = special[i / S], y[i] = special[i % S];
    for (int i = S * S; i < N; ++i) x[i] = (float)rng_uniform(-2, 2), y[i] = (float)rng_uniform(-2, 2);
    for (int i = 0; i < N * K; ++i) out[i] = POISON_F32;
    amp_array_view *vx = test_view(x, sizeof(float), amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vy = test_view(y, sizeof(float), amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vo = test_view(out, sizeof(float), amp_extent_2d(N, K), AMP_WRITE_ONLY);
    amp_arg args[] = {amp_arg_view(vx), amp_arg_view(vy), amp_arg_view(vo)};
    launch(test_kernel(p, "norm_ops"), amp_extent_1d(N), args, 3);
    ASSERT_OK(amp_array_view_synchronize(vo));
    static const char *what[K] = {"norm(float)", "unorm(float)", "norm(double)", "unorm(int)", "norm(unsigned)",
                                  "norm + norm", "norm - norm", "norm * norm", "norm / norm", "unorm + unorm",
                                  "unorm - unorm", "unorm * unorm", "unorm / unorm", "-norm", "++norm",
                                  "norm++ (old value)", "norm after ++", "--unorm", "unorm-- (old value)",
                                  "unorm after --", "norm += and *=", "unorm -= and /=", "unorm to norm, norm()",
                                  "comparisons", "norm_4 + norm_4 (x)", "norm_4 + norm_4 (w)",
                                  "unorm_2 * and - (x)", "unorm_2 * and - (y)", "norm_3(float_3), get_zyx()",
                                  "float_4(-norm_4)", "unorm_4 default", "NORM_ and UNORM_ constants"};
    for (int n = 0; n < N; ++n) {
        const float a = x[n], b = y[n], nx = clamp_n(a), ny = clamp_n(b), ux = clamp_u(a), uy = clamp_u(b);
        float w[K];
        w[0] = nx, w[1] = ux;
        w[2] = clamp_n((float)((double)a * 3));
        w[3] = clamp_u((float)(n % 5 - 2));
        w[4] = clamp_n((float)(n % 3));
        w[5] = clamp_n(nx + ny), w[6] = clamp_n(nx - ny), w[7] = clamp_n(nx * ny), w[8] = clamp_n(nx / ny);
        w[9] = clamp_u(ux + uy), w[10] = clamp_u(ux - uy), w[11] = clamp_u(ux * uy), w[12] = clamp_u(ux / uy);
        w[13] = -nx;
        w[14] = w[15] = clamp_n(nx + 1.0f);
        w[16] = clamp_n(w[14] + 1.0f);
        w[17] = w[18] = clamp_u(ux - 1.0f);
        w[19] = clamp_u(w[17] - 1.0f);
        w[20] = clamp_n(clamp_n(nx + ny) * nx);
        w[21] = clamp_u(clamp_u(ux - uy) / ux);
        w[22] = ux;
        w[23] = (float)((nx == ny) + 2 * (nx != ny) + 4 * (nx < ny) + 8 * (nx <= ny) + 16 * (nx > ny) +
                        32 * (nx >= ny) + 64 * (ux == uy) + 128 * (ux < uy));
        w[24] = clamp_n(nx + ny);
        w[25] = clamp_n(clamp_n(2.0f * b) + ny);
        w[26] = clamp_u(clamp_u(ux * 0.5f) - uy);
        w[27] = clamp_u(clamp_u(uy * 0.5f) - uy);
        w[28] = clamp_n(0.25f + clamp_n(a * 4));
        w[29] = -ny;
        w[30] = 0.0f;
        w[31] = 109.0f;
        for (int k = 0; k < K; ++k) {
            float g = out[n * K + k];
            cr_assert(g == w[k], "%s, x = %g, y = %g: got %.9g want %.9g", what[k], (double)a, (double)b, (double)g,
                      (double)w[k]);
        }
    }
    ASSERT_OK(amp_array_view_destroy(vx));
    ASSERT_OK(amp_array_view_destroy(vy));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(p));
    free(x), free(y), free(out);
}

/* Extent arithmetic in a kernel near INT_MAX and past 2^64: pad() rounded
 * up in int and wrapped (2147483646 on a tile of 2147483646 gave 0); a pad
 * that is no int gives an empty extent, as the host's
 * amp_tiled_extent_pad refuses it (and zeroes its result); size() counts
 * no elements for a negative dimension and saturates past 2^64 - 1, so
 * view_as of a shape whose count wrapped is empty; reinterpret_as to more
 * elements than an int counts is empty too. */
ACCEL_TEST(device_lang, extent_arithmetic_at_the_limits)
{
    amp_program *p = build_types(acc);
    enum { K = 22 };
    int64_t out[K];
    for (int i = 0; i < K; ++i) out[i] = POISON_I32;
    amp_array_view *vo = test_view(out, sizeof(int64_t), amp_extent_1d(K), AMP_WRITE_ONLY);
    amp_arg args[] = {amp_arg_view(vo)};
    launch(test_kernel(p, "extent_limits"), amp_extent_1d(1), args, 1);
    ASSERT_OK(amp_array_view_synchronize(vo));
    static const struct { const char *what; int64_t want; } w[K] = {
        {"extent<1>(2147483646).tile<2147483646>().pad()[0]", 2147483646},
        {"extent<1>(INT_MAX).tile<INT_MAX>().pad()[0]", INT_MAX},
        {"extent<1>(2147482624).tile<1024>().pad()[0]", 2147482624},
        {"extent<1>(2147482625).tile<1024>().pad()[0] (2^31)", 0},
        {"extent<1>(INT_MAX).tile<2>().pad()[0] (2^31)", 0},
        {"extent<2>(5, INT_MAX).tile<4, 2>().pad()[0] (dimension 1 is 2^31)", 0},
        {"extent<2>(5, INT_MAX).tile<4, 2>().pad()[1] (2^31)", 0},
        {"extent<3>(5, 3, 2147483640).tile<4, 2, 8>().pad()[0..1]", 84},
        {"extent<3>(5, 3, 2147483640).tile<4, 2, 8>().pad()[2]", 2147483640},
        {"extent<1>(INT_MAX).tile<1024>().truncate()[0]", 2147482624},
        {"extent<1>(INT_MAX).tile<INT_MAX>().truncate()[0]", INT_MAX},
        {"extent<3>(2^22, 2^21, 2^21).size() (2^64: saturates)", -1},
        {"extent<3>(INT_MAX, INT_MAX, 2).size()", 2 * (int64_t)INT_MAX * INT_MAX},
        {"extent<2>(-1, -1).size()", 0},
        {"extent<3>(7, 0, -5).size()", 0},
        {"view_as(extent<3>(2^22, 2^21, 2^21)) of one element: extent[0]", 0},
        {"view_as(extent<2>(-1, -1)) of one element: extent[0]", 0},
        {"array_view<double, 1>(INT_MAX).reinterpret_as<char>(): extent[0]", 0},
        {"array_view<double, 1>(2^28).reinterpret_as<char>() (2^31): extent[0]", 0},
        {"array_view<double, 1>(2^28 - 1).reinterpret_as<char>(): extent[0]", 2147483640},
        {"array_view<char, 1>(INT_MAX).reinterpret_as<double>(): extent[0]", INT_MAX / 8},
        {"the count", K},
    };
    for (int k = 0; k < K; ++k)
        cr_expect_eq(out[k], w[k].want, "%s: got %lld want %lld", w[k].what, (long long)out[k], (long long)w[k].want);
    /* The host agrees: the same pads, and the one that is no int refused. */
    amp_tiled_extent t, r;
    ASSERT_OK(amp_extent_tile_1d(amp_extent_1d(2147483646), 2147483646, &t));
    ASSERT_OK(amp_tiled_extent_pad(t, &r));
    cr_expect_eq(r.extent.v[0], 2147483646);
    ASSERT_OK(amp_extent_tile_1d(amp_extent_1d(INT_MAX), 2, &t));
    ASSERT_STATUS(amp_tiled_extent_pad(t, &r), AMP_ERROR_INVALID_EXTENT);
    cr_expect(strstr(amp_last_error(), "amp_tiled_extent_pad") && strstr(amp_last_error(), "2147483647"), "%s",
              amp_last_error());
    cr_expect_eq(r.extent.v[0], 0);
    ASSERT_OK(amp_tiled_extent_truncate(t, &r));
    cr_expect_eq(r.extent.v[0], INT_MAX - 1);
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(p));
}

/* C++ AMP's spelling of the graphics types: `using namespace
 * amp::graphics;` at file scope, then norm, unorm and their vectors
 * unqualified. CUDA's and HIP's math headers, which NVRTC and hipRTC put
 * before every source, declare a function ::norm(int, const double *); an
 * unqualified norm named both and did not compile for a GPU. */
static const char graphics_names_source[] =
    "using namespace amp::graphics;\n"
    "AMP_KERNEL(graphics_names, amp::index<1> i, amp::array_view<const float, 1> xs, amp::array_view<float, 2> out)\n"
    "{\n"
    "    const int n = i[0];\n"
    "    const float x = xs[i];\n"
    "    const norm p(x);\n"
    "    const unorm q(x);\n"
    "    const norm_2 p2(x, -x);\n"
    "    const norm_3 p3(x, 2.0f * x, -2.0f * x);\n"
    "    const norm_4 p4 = norm_4(x) + norm_4(p);\n"
    "    const unorm_2 q2(x, -x);\n"
    "    const unorm_3 q3(x, 2.0f * x, 0.25f);\n"
    "    const unorm_4 q4 = unorm_4(q) * unorm_4(x);\n"
    "    const uint u = 3;\n"
    "    const float_2 f2(1.0f, 2.0f);\n"
    "    float r[16] = {p, q, p2.x, p2.y, p3.x, p3.y, p3.z, p4.w, q2.x, q2.y, q3.x, q3.y, q3.z, q4.z,\n"
    "                   norm(-x) + unorm(), (float)u + f2.y};\n"
    "    for (int k = 0; k < 16; ++k) out(n, k) = r[k];\n"
    "}\n";

Test(device_lang, graphics_names_unqualified_compile_for_gpu_targets, .timeout = 600)
{
    const char *targets[] = {"sm_90", "gfx90a"};
    int compiled = 0;
    char skipped[512] = "";
    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; ++t) {
        amp_code_object *co = NULL;
        amp_status st = amp_compile_for_target(targets[t], graphics_names_source, NULL, &co);
        if (st == AMP_ERROR_UNSUPPORTED) {
            size_t used = strlen(skipped);
            snprintf(skipped + used, sizeof skipped - used, "%s: %s; ", targets[t], amp_last_error());
            continue;
        }
        cr_assert_eq(st, AMP_OK, "%s: %s: %s", targets[t], amp_status_name(st), amp_last_error());
        const void *data = NULL;
        size_t size = 0;
        ASSERT_OK(amp_code_object_data(co, &data, &size));
        cr_assert(data && size > 0, "%s: an empty code object", targets[t]);
        ASSERT_OK(amp_code_object_destroy(co));
        ++compiled;
    }
    if (!compiled) cr_skip_test("neither NVRTC nor hipRTC is installed (%s)", skipped);
}

ACCEL_TEST(device_lang, graphics_names_unqualified)
{
    amp_program *p = test_build(acc, graphics_names_source);
    static const float special[] = {-3.0f, -1.0f, -0.75f, -0.25f, 0.0f, 0.25f, 0.5f, 0.75f, 1.0f, 1.5f, NAN, INFINITY};
    enum { N = sizeof special / sizeof special[0], K = 16 };
    float x[N], out[N * K];
    for (int i = 0; i < N; ++i) x[i] = special[i];
    for (int i = 0; i < N * K; ++i) out[i] = POISON_F32;
    amp_array_view *vx = test_view(x, sizeof(float), amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vo = test_view(out, sizeof(float), amp_extent_2d(N, K), AMP_WRITE_ONLY);
    amp_arg args[] = {amp_arg_view(vx), amp_arg_view(vo)};
    launch(test_kernel(p, "graphics_names"), amp_extent_1d(N), args, 2);
    ASSERT_OK(amp_array_view_synchronize(vo));
    static const char *what[K] = {"norm",     "unorm",    "norm_2.x", "norm_2.y", "norm_3.x", "norm_3.y",
                                  "norm_3.z", "norm_4.w", "unorm_2.x", "unorm_2.y", "unorm_3.x", "unorm_3.y",
                                  "unorm_3.z", "unorm_4.z", "norm(-x) + unorm()", "uint + float_2"};
    for (int n = 0; n < N; ++n) {
        const float a = x[n];
        float w[K] = {clamp_n(a), clamp_u(a), clamp_n(a), clamp_n(-a), clamp_n(a), clamp_n(2.0f * a),
                      clamp_n(-2.0f * a), clamp_n(clamp_n(a) + clamp_n(a)), clamp_u(a), clamp_u(-a), clamp_u(a),
                      clamp_u(2.0f * a), 0.25f, clamp_u(clamp_u(a) * clamp_u(a)), clamp_n(-a), 5.0f};
        for (int k = 0; k < K; ++k)
            cr_assert(out[n * K + k] == w[k], "%s, x = %g: got %.9g want %.9g", what[k], (double)a,
                      (double)out[n * K + k], (double)w[k]);
    }
    ASSERT_OK(amp_array_view_destroy(vx));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(p));
}

/* The token norm names C++ AMP's type everywhere, so a kernel of that
 * name would be built under another; the build says why instead. */
ACCEL_TEST(device_lang, kernel_named_norm_is_refused)
{
    amp_program *p = NULL;
    amp_status st = amp_program_build(
        acc, "AMP_KERNEL(norm, amp::index<1> i, amp::array_view<float, 1> a) { a[i] = 1.0f; }\n", NULL, &p);
    cr_assert_eq(st, AMP_ERROR_COMPILE, "a kernel named norm: %s", amp_status_name(st));
    cr_assert_null(p);
    cr_assert(strstr(amp_last_error(), "cannot be named 'norm'"), "%s", amp_last_error());
}

/* The device types take any rank: index<7>, extent<7>, views of rank 5 and
 * 6 (view_as, a local array, projections) in a kernel launched at rank 1. */
ACCEL_TEST(device_lang, values_and_views_of_rank_above_4)
{
    amp_program *p = build_types(acc);
    enum { N = 64, K = 7 };
    int32_t out[N * K];
    for (int i = 0; i < N * K; ++i) out[i] = POISON_I32;
    amp_array_view *vo = test_view(out, sizeof(int32_t), amp_extent_2d(N, K), AMP_WRITE_ONLY);
    amp_arg args[] = {amp_arg_view(vo)};
    launch(test_kernel(p, "high_rank_values"), amp_extent_1d(N), args, 1);
    ASSERT_OK(amp_array_view_synchronize(vo));
    for (int n = 0; n < N; ++n) {
        const int32_t *o = &out[n * K];
        int rev = 0;
        for (int b = 0; b < 6; ++b) rev |= ((n >> b) & 1) << (5 - b);
        cr_assert_eq(o[0], n * 100 + rev, "item %d: view<int, 6>[index<6>(const int[])]: %d", n, o[0]);
        cr_assert_eq(o[1], n * 100 + rev, "item %d: view<int, 6>(i0, ..., i5): %d", n, o[1]);
        cr_assert_eq(o[2], n * 100 + 42, "item %d: six projections: %d", n, o[2]);
        cr_assert_eq(o[3], 5040, "item %d: extent<7>::size(): %d", n, o[3]);
        cr_assert_eq(o[4], 1, "item %d: extent<7>::contains: %d", n, o[4]);
        cr_assert_eq(o[5], 1301, "item %d: extent<7> + extent<7> - 1: %d", n, o[5]);
        cr_assert_eq(o[6], n * 100 + 63 + 64, "item %d: array_view<int, 5>(extent, local): %d", n, o[6]);
    }
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(p));
}

/* A launch of rank r >= 4 (flattened on a GPU): every work-item runs once,
 * with its own index, and writes its row-major position through a view of
 * the same rank. */
static void rank_launch(amp_accelerator *acc, amp_program *p, int rank, const int *dims)
{
    amp_extent e;
    memset(&e, 0, sizeof e);
    e.rank = rank;
    size_t total = 1;
    for (int d = 0; d < rank; ++d) e.v[d] = dims[d], total *= (size_t)dims[d];
    int32_t *out = test_xmalloc(total * sizeof *out);
    int32_t count = 0;
    for (size_t i = 0; i < total; ++i) out[i] = POISON_I32;
    amp_array_view *vo = test_view(out, sizeof(int32_t), e, AMP_WRITE_ONLY);
    amp_array_view *vc = test_view(&count, sizeof(int32_t), amp_extent_1d(1), AMP_READ_WRITE);
    char name[32];
    snprintf(name, sizeof name, "rank%d_launch", rank);
    amp_arg args[] = {amp_arg_view(vo), amp_arg_view(vc)};
    launch(test_kernel(p, name), e, args, 2);
    ASSERT_OK(amp_array_view_synchronize(vo));
    ASSERT_OK(amp_array_view_synchronize(vc));
    cr_assert_eq(count, (int32_t)total, "rank %d on %s: %d work-items ran, want %zu", rank,
                 acc ? "this accelerator" : "?", count, total);
    for (size_t i = 0; i < total; ++i)
        cr_assert_eq(out[i], (int32_t)i + 1, "rank %d: element %zu holds %d", rank, i, out[i]);
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_array_view_destroy(vc));
    free(out);
}

ACCEL_TEST(device_lang, launches_of_rank_4_and_above)
{
    amp_program *p = build_types(acc);
    /* Last dimensions that leave partial blocks; outer ones the GPU's z axis
     * folds together. */
    rank_launch(acc, p, 4, (const int[]){3, 4, 5, 37});
#if AMP_MAX_RANK >= 8
    rank_launch(acc, p, 5, (const int[]){2, 3, 4, 5, 37});
    rank_launch(acc, p, 6, (const int[]){2, 3, 2, 3, 5, 19});
    rank_launch(acc, p, 7, (const int[]){2, 2, 3, 2, 2, 3, 33});
    rank_launch(acc, p, 8, (const int[]){2, 2, 2, 3, 2, 2, 3, 17});
#else
    cr_log_info("ranks 5..8 not launched: this hipamp's AMP_MAX_RANK is %d", AMP_MAX_RANK);
#endif
    ASSERT_OK(amp_program_destroy(p));
}

/* ------------------------------------------------------------------- math */

typedef long double ld;
static const ld PI_L = 3.141592653589793238462643383279502884L;

/* Long double references for the functions glibc has no long double form of.
 * The inverse error functions are found by bisection on glibc's erfl/erfcl
 * (then two Newton steps), an independent route from the CPU accelerator's
 * closed-form estimate and Halley steps. */
static ld ref_sinpi(ld x)
{
    ld r = x - 2 * roundl(x / 2); /* exact, [-1, 1] */
    ld a = fabsl(r);
    if (a > 0.5L) a = 1 - a;
    return r < 0 ? -sinl(PI_L * a) : sinl(PI_L * a);
}
static ld ref_cospi(ld x)
{
    ld a = fabsl(x - 2 * roundl(x / 2)); /* [0, 1] */
    if (a < 0.25L) return cosl(PI_L * a);
    if (a <= 0.75L) return sinl(PI_L * (0.5L - a));
    return -cosl(PI_L * (1 - a));
}
static ld ref_tanpi(ld x) { return ref_sinpi(x) / ref_cospi(x); }
/* erf(x) = z, |z| <= 1/2. */
static ld solve_erf(ld z)
{
    ld lo = -1, hi = 1;
    for (int i = 0; i < 200; ++i) {
        ld mid = (lo + hi) / 2;
        if (erfl(mid) < z) lo = mid; else hi = mid;
    }
    ld x = (lo + hi) / 2;
    for (int i = 0; i < 2; ++i) x -= (erfl(x) - z) / (2 / sqrtl(PI_L) * expl(-x * x));
    return x;
}
/* erfc(x) = y, 0 < y <= 1/2. */
static ld solve_erfc(ld y)
{
    ld lo = 0, hi = 110;
    for (int i = 0; i < 300; ++i) {
        ld mid = (lo + hi) / 2;
        if (erfcl(mid) > y) lo = mid; else hi = mid;
    }
    ld x = (lo + hi) / 2;
    for (int i = 0; i < 2; ++i) x -= (erfcl(x) - y) / (-2 / sqrtl(PI_L) * expl(-x * x));
    return x;
}
static ld ref_erfinv(ld z)
{
    if (fabsl(z) <= 0.5L) return solve_erf(z);
    return z < 0 ? -solve_erfc(1 + z) : solve_erfc(1 - z);
}
static ld ref_erfcinv(ld y)
{
    if (y < 0.5L) return solve_erfc(y);
    if (y <= 1.5L) return solve_erf(1 - y);
    return -solve_erfc(2 - y);
}
static ld ref_phi(ld x) { return 0.5L * erfcl(-x / sqrtl(2.0L)); }
static ld ref_probit(ld p) { return -sqrtl(2.0L) * ref_erfcinv(2 * p); }
static ld ref_rsqrt(ld x) { return 1 / sqrtl(x); }
static ld ref_rcbrt(ld x) { return 1 / cbrtl(x); }
static ld ref_lgamma(ld x)
{
    int s;
    return lgammal_r(x, &s);
}
static ld ref_logb(ld x) { return logbl(x); }

typedef ld (*ref1_fn)(ld);
typedef ld (*ref2_fn)(ld, ld);
typedef struct math_case {
    const char *name;
    ref1_fn f1;
    ref2_fn f2;
    double lo, hi, ylo, yhi; /* domains of x and y */
    double tol_f, tol_d;     /* ulps against the exact result; 0: bit-exact */
    double abs_f;            /* fast_math: absolute error also accepted */
} math_case;

#define MC1(name, ref, lo, hi, tf, td) {#name, ref, NULL, lo, hi, 0, 0, tf, td, 0}
#define MC2(name, ref, lo, hi, ylo, yhi, tf, td) {#name, NULL, ref, lo, hi, ylo, yhi, tf, td, 0}
#define L1(fn) static ld l_##fn(ld x) { return fn##l(x); }
#define L2(fn) static ld l_##fn(ld x, ld y) { return fn##l(x, y); }
L1(acos) L1(acosh) L1(asin) L1(asinh) L1(atan) L1(atanh) L1(cbrt) L1(ceil) L1(cos) L1(cosh) L1(erf)
L1(erfc) L1(exp) L1(exp10) L1(exp2) L1(expm1) L1(fabs) L1(floor) L1(log) L1(log10) L1(log1p) L1(log2)
L1(nearbyint) L1(round) L1(sin) L1(sinh) L1(sqrt) L1(tan) L1(tanh) L1(tgamma) L1(trunc)
L2(atan2) L2(copysign) L2(fdim) L2(fmax) L2(fmin) L2(fmod) L2(hypot) L2(pow) L2(remainder)
static ld l_nextafter_f(ld x, ld y) { return nextafterf((float)x, (float)y); }

/* Bounds, against the exact result. float: 1 ulp for every function (the
 * float forms compute in double and round once: within 0.5 ulp plus a
 * double's error, so at least as accurate as the host's float libm); 0:
 * exact. double: the larger of CUDA's and ROCm's documented maximum errors
 * for the GPU math libraries (their tables are against the correctly
 * rounded result: +0.5). docs/device-language.md. */
static const math_case precise_cases[] = {
    MC1(acos, l_acos, -1, 1, 1, 3),
    MC1(acosh, l_acosh, 1, 1e4, 1, 4),
    MC1(asin, l_asin, -1, 1, 1, 3),
    MC1(asinh, l_asinh, -1e4, 1e4, 1, 4),
    MC1(atan, l_atan, -1e4, 1e4, 1, 3),
    MC1(atanh, l_atanh, -0.999, 0.999, 1, 3),
    MC1(cbrt, l_cbrt, -1e6, 1e6, 1, 4),
    MC1(ceil, l_ceil, -1e4, 1e4, 0, 0),
    MC1(cos, l_cos, -100, 100, 1, 3),
    MC1(cosh, l_cosh, -20, 20, 1, 2),
    MC1(cospi, ref_cospi, -100, 100, 1, 2),
    MC1(erf, l_erf, -5, 5, 1, 3),
    MC1(erfc, l_erfc, -5, 9, 1, 6),
    MC1(erfcinv, ref_erfcinv, 1e-6, 2 - 1e-6, 1, 7),
    MC1(erfinv, ref_erfinv, -1 + 1e-6, 1 - 1e-6, 1, 6),
    MC1(exp, l_exp, -80, 80, 1, 2),
    MC1(exp10, l_exp10, -30, 30, 1, 3),
    MC1(exp2, l_exp2, -120, 120, 1, 2),
    MC1(expm1, l_expm1, -20, 20, 1, 2),
    MC1(fabs, l_fabs, -1e4, 1e4, 0, 0),
    MC1(floor, l_floor, -1e4, 1e4, 0, 0),
    MC1(lgamma, ref_lgamma, 2.5, 40, 1, 5),
    MC1(log, l_log, 1e-3, 1e6, 1, 2),
    MC1(log10, l_log10, 1e-3, 1e6, 1, 2),
    MC1(log1p, l_log1p, -0.9, 1e4, 1, 2),
    MC1(log2, l_log2, 1e-3, 1e6, 1, 2),
    MC1(logb, ref_logb, 1e-3, 1e6, 0, 0),
    MC1(nearbyint, l_nearbyint, -1e4, 1e4, 0, 0),
    MC1(phi, ref_phi, -8, 8, 1, 6),
    MC1(probit, ref_probit, 1e-6, 1 - 1e-6, 1, 9),
    MC1(rcbrt, ref_rcbrt, 1e-3, 1e6, 1, 2),
    MC1(round, l_round, -1e4, 1e4, 0, 0),
    MC1(rsqrt, ref_rsqrt, 1e-3, 1e6, 1, 2),
    MC1(sin, l_sin, -100, 100, 1, 3),
    MC1(sinh, l_sinh, -20, 20, 1, 3),
    MC1(sinpi, ref_sinpi, -100, 100, 1, 2),
    MC1(sqrt, l_sqrt, 0, 1e6, 1, 1),
    MC1(tan, l_tan, -100, 100, 1, 3),
    MC1(tanh, l_tanh, -10, 10, 1, 3),
    MC1(tanpi, ref_tanpi, -100, 100, 1, 4),
    MC1(tgamma, l_tgamma, 0.1, 30, 1, 11),
    MC1(trunc, l_trunc, -1e4, 1e4, 0, 0),
    MC2(atan2, l_atan2, -10, 10, -10, 10, 1, 3),
    MC2(copysign, l_copysign, -1e4, 1e4, -1, 1, 0, 0),
    MC2(fdim, l_fdim, -100, 100, -100, 100, 0, 0),
    MC2(fmax, l_fmax, -100, 100, -100, 100, 0, 0),
    MC2(fmin, l_fmin, -100, 100, -100, 100, 0, 0),
    MC2(fmod, l_fmod, -100, 100, 0.1, 10, 0, 0),
    MC2(hypot, l_hypot, -1e3, 1e3, -1e3, 1e3, 1, 3),
    MC2(nextafter, l_nextafter_f, -100, 100, -100, 100, 0, 0),
    MC2(pow, l_pow, 0.01, 10, -10, 10, 1, 3),
    MC2(remainder, l_remainder, -100, 100, 0.1, 10, 0, 0),
};

/* Distance in ulps of the result type between got and the exact ref. */
static double ulp_error(ld got, ld ref, int is_double)
{
    if (isnan(ref)) return isnan(got) ? 0 : INFINITY;
    if (isinf(ref)) return got == ref ? 0 : INFINITY;
    /* An infinity for a finite exact result: right (0) from half an ulp past
     * the largest finite value on, where correct rounding overflows; below
     * that, measured from 2^128 (2^1024), the next value an unbounded
     * exponent would give. */
    ld maxv = is_double ? DBL_MAX : FLT_MAX, half = is_double ? ldexpl(1, 970) : ldexpl(1, 103);
    if (isinf(got) && (got > 0) == (ref > 0)) {
        if (fabsl(ref) >= maxv + half) return 0;
        got = copysignl(maxv + 2 * half, got);
    }
    if (!isfinite(got)) return INFINITY;
    ld a = fabsl(ref), ulp;
    if (is_double) {
        if (a < DBL_MIN) ulp = ldexpl(1, -1074);
        else { int e; frexpl(a, &e); ulp = ldexpl(1, e - 53); }
    } else {
        if (a < FLT_MIN) ulp = ldexpl(1, -149);
        else { int e; frexpl(a, &e); ulp = ldexpl(1, e - 24); }
    }
    return (double)(fabsl(got - ref) / ulp);
}

/* Run kernel <prefix><name> on n inputs of case c (xs[] and ys[] if given,
 * else sampled from its domain) and return the largest error (ulps),
 * asserting each result within the case's bound. The double kernel's
 * reference for nextafter uses the double function. */
static double run_math_case(amp_program *p, const math_case *c, const char *prefix, int is_double, int fast,
                            size_t n, const char *label, const double *xs, const double *ys)
{
    char kname[64];
    snprintf(kname, sizeof kname, "%s%s", prefix, c->name);
    size_t es = is_double ? sizeof(double) : sizeof(float);
    void *x = test_xmalloc(n * es), *y = test_xmalloc(n * es), *o = test_xmalloc(n * es);
    for (size_t i = 0; i < n; ++i) {
        double xv = rng_uniform(c->lo, c->hi), yv = rng_uniform(c->ylo, c->yhi);
        /* A quarter of the inverse CDF / erfc inputs are tiny (log-uniform). */
        if ((c->f1 == ref_erfcinv || c->f1 == ref_probit) && i % 4 == 0)
            xv = pow(10.0, rng_uniform(is_double ? -300 : -30, -2));
        if (xs) xv = xs[i], yv = ys[i];
        if (is_double) {
            ((double *)x)[i] = xv, ((double *)y)[i] = yv, ((double *)o)[i] = POISON_F32;
        } else {
            ((float *)x)[i] = (float)xv, ((float *)y)[i] = (float)yv, ((float *)o)[i] = POISON_F32;
        }
    }
    amp_array_view *vx = test_view(x, es, amp_extent_1d((int)n), AMP_READ_ONLY);
    amp_array_view *vy = test_view(y, es, amp_extent_1d((int)n), AMP_READ_ONLY);
    amp_array_view *vo = test_view(o, es, amp_extent_1d((int)n), AMP_WRITE_ONLY);
    amp_arg args[] = {amp_arg_view(vx), amp_arg_view(vy), amp_arg_view(vo)};
    launch(test_kernel(p, kname), amp_extent_1d((int)n), args, 3);
    ASSERT_OK(amp_array_view_synchronize(vo));
    double worst = 0;
    size_t bad = 0;
    char first[320] = "";
    for (size_t i = 0; i < n; ++i) {
        ld xv = is_double ? ((double *)x)[i] : ((float *)x)[i];
        ld yv = is_double ? ((double *)y)[i] : ((float *)y)[i];
        ld got = is_double ? ((double *)o)[i] : ((float *)o)[i];
        ld ref;
        if (c->f2 == l_nextafter_f && is_double) ref = nextafter((double)xv, (double)yv);
        else ref = c->f1 ? c->f1(xv) : c->f2(xv, yv);
        double tol = is_double ? c->tol_d : c->tol_f, err;
        if (tol == 0) {
            /* Exact functions: the reference rounded once to the type. */
            ld r = is_double ? (ld)(double)ref : (ld)(float)ref;
            err = (got == r || (isnan(got) && isnan(r))) ? 0 : INFINITY;
        } else {
            err = ulp_error(got, ref, is_double);
        }
        if (err > worst) worst = err;
        /* fast_math: an absolute error within abs_f also passes (sin, cos
         * and log near their zeros, where ulps say little). */
        int ok = err <= tol || (fast && fabsl(got - ref) <= c->abs_f);
        if (!ok && bad++ == 0) {
            char argv[96];
            if (c->f2) snprintf(argv, sizeof argv, "%.17Lg, %.17Lg", xv, yv);
            else snprintf(argv, sizeof argv, "%.17Lg", xv);
            snprintf(first, sizeof first, "%s(%s): got %.17Lg, exact %.17Lg: %.3g ulp", c->name, argv, got, ref, err);
        }
    }
    /* Non-fatal, so the other functions are still measured and logged. */
    cr_expect(bad == 0, "%s %s: %zu of %zu results beyond %g ulp; first %s", label, c->name, bad, n,
              is_double ? c->tol_d : c->tol_f, first);
    ASSERT_OK(amp_array_view_destroy(vx));
    ASSERT_OK(amp_array_view_destroy(vy));
    ASSERT_OK(amp_array_view_destroy(vo));
    free(x), free(y), free(o);
    return worst;
}

/* Samples per function: HIPAMP_TEST_MATH_SAMPLES (for a longer measurement
 * run), else 2048. */
static size_t math_samples(void)
{
    const char *s = getenv("HIPAMP_TEST_MATH_SAMPLES");
    long n = s ? strtol(s, NULL, 10) : 0;
    return n >= 16 && n <= (1L << 24) ? (size_t)n : 2048;
}

static void run_precise(amp_accelerator *acc, int is_double)
{
    amp_program *p = build(acc);
    char line[4096];
    size_t len = 0;
    for (size_t k = 0; k < sizeof precise_cases / sizeof precise_cases[0]; ++k) {
        const math_case *c = &precise_cases[k];
        double worst = run_math_case(p, c, is_double ? "pmd_" : "pmf_", is_double, 0, math_samples(),
                                     is_double ? "precise_math (double)" : "precise_math (float)", NULL, NULL);
        len += (size_t)snprintf(line + len, sizeof line - len, " %s %.2f", c->name, worst);
        if (len >= sizeof line) len = sizeof line - 1;
    }
    cr_log_info("largest error in ulps, precise_math %s:%s", is_double ? "double" : "float", line);
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TEST(device_lang, precise_math_float_against_libm) { run_precise(acc, 0); }
ACCEL_TEST(device_lang, precise_math_double_against_libm) { run_precise(acc, 1); }

/* precise_math's float forms where float libraries lose accuracy: near the
 * poles and zeros of each function, at results near overflow and in the
 * subnormal range, at huge arguments, and on the domains issue 21 found
 * wrong (tan on [-1.5708, 1.5708], pow with both arguments in [1, 10]). The
 * bound is 1 ulp everywhere (docs/device-language.md). Inputs, by kind:
 *   E_UNI  x in [a, b], y in [c, d];
 *   E_LOG  x = 10^u, u in [a, b], y = 10^v, v in [c, d] (unused for one
 *          argument); a negative sign is taken at random when c < 0 for
 *          one-argument functions;
 *   E_NEAR x = the float nearest k * a + b, k an integer in [c, d], then
 *          moved by up to 8 ulps either way;
 *   E_OFF  x = c + d * 10^u, u in [a, b];
 *   E_POW  x in [a, b] and y with x^y = 10^v, v in [c, d]. */
enum { E_UNI, E_LOG, E_NEAR, E_OFF, E_POW };
typedef struct {
    const char *name, *where;
    int kind;
    double a, b, c, d;
} edge_case;
static const edge_case float_edges[] = {
    {"tan", "issue 21's domain", E_UNI, -1.5708, 1.5708, 0, 0},
    {"tan", "near the poles (k + 1/2) pi", E_NEAR, 3.14159265358979323846, 1.57079632679489661923, -5000, 5000},
    {"tan", "near the zeros k pi", E_NEAR, 3.14159265358979323846, 0, -5000, 5000},
    {"tan", "huge arguments", E_LOG, 4, 38, -1, 0},
    {"pow", "issue 21's domain", E_UNI, 1, 10, 1, 10},
    {"pow", "results near overflow", E_POW, 1.5, 10, 30, 38.6},
    {"pow", "subnormal results", E_POW, 1.5, 10, -44.5, -36},
    {"pow", "x near 1", E_UNI, 0.999, 1.001, -1e4, 1e4},
    {"sin", "near the zeros k pi", E_NEAR, 3.14159265358979323846, 0, -10000, 10000},
    {"sin", "huge arguments", E_LOG, 4, 38, -1, 0},
    {"cos", "near the zeros (k + 1/2) pi", E_NEAR, 3.14159265358979323846, 1.57079632679489661923, -10000, 10000},
    {"cos", "huge arguments", E_LOG, 4, 38, -1, 0},
    {"sinpi", "near the zeros k", E_NEAR, 1, 0, -1000, 1000},
    {"cospi", "near the zeros k + 1/2", E_NEAR, 1, 0.5, -1000, 1000},
    {"tanpi", "near the poles k + 1/2", E_NEAR, 1, 0.5, -1000, 1000},
    {"tanpi", "near the zeros k", E_NEAR, 1, 0, -1000, 1000},
    {"exp", "results near overflow", E_UNI, 80, 88.8, 0, 0},
    {"exp", "subnormal results", E_UNI, -103.9, -87, 0, 0},
    {"exp2", "results near overflow", E_UNI, 120, 128.5, 0, 0},
    {"exp2", "subnormal results", E_UNI, -149.5, -120, 0, 0},
    {"exp10", "results near overflow", E_UNI, 30, 38.6, 0, 0},
    {"exp10", "subnormal results", E_UNI, -45, -37, 0, 0},
    {"expm1", "near 0", E_UNI, -1e-5, 1e-5, 0, 0},
    {"expm1", "results near overflow", E_UNI, 80, 88.8, 0, 0},
    {"sinh", "results near overflow", E_UNI, -89.5, 89.5, 0, 0},
    {"sinh", "near 0", E_UNI, -1e-4, 1e-4, 0, 0},
    {"cosh", "results near overflow", E_UNI, -89.5, 89.5, 0, 0},
    {"tanh", "near 0", E_UNI, -1e-4, 1e-4, 0, 0},
    {"log", "near the zero at 1", E_UNI, 0.999, 1.001, 0, 0},
    {"log", "huge and subnormal arguments", E_LOG, -45, 38.5, 0, 0},
    {"log2", "near the zero at 1", E_UNI, 0.999, 1.001, 0, 0},
    {"log10", "near the zero at 1", E_UNI, 0.999, 1.001, 0, 0},
    {"log1p", "near 0", E_UNI, -1e-5, 1e-5, 0, 0},
    {"log1p", "near the pole at -1", E_OFF, -8, -1, -1, 1},
    {"acos", "near the zero at 1", E_OFF, -8, -3, 1, -1},
    {"asin", "near 1", E_OFF, -8, -3, 1, -1},
    {"atan", "huge arguments", E_LOG, 5, 38, -1, 0},
    {"atan2", "ratios near 0 and huge", E_LOG, -30, 30, -30, 30},
    {"acosh", "near the zero at 1", E_OFF, -7, -2, 1, 1},
    {"acosh", "huge arguments", E_LOG, 10, 38.5, 0, 0},
    {"asinh", "huge arguments", E_LOG, 10, 38.5, -1, 0},
    {"atanh", "near the pole at 1", E_OFF, -7.5, -2, 1, -1},
    {"atanh", "near the pole at -1", E_OFF, -7.5, -2, -1, 1},
    {"cbrt", "huge and subnormal arguments", E_LOG, -45, 38.5, -1, 0},
    {"sqrt", "huge and subnormal arguments", E_LOG, -45, 38.5, 0, 0},
    {"rsqrt", "huge and subnormal arguments", E_LOG, -45, 38.5, 0, 0},
    {"rcbrt", "huge and subnormal arguments", E_LOG, -45, 38.5, 0, 0},
    {"hypot", "huge and tiny arguments", E_LOG, -44, 38, -44, 38},
    {"erf", "near 0", E_UNI, -1e-5, 1e-5, 0, 0},
    {"erfc", "subnormal results", E_UNI, 5, 10.05, 0, 0},
    {"erfinv", "near the pole at 1", E_OFF, -7.2, -2, 1, -1},
    {"erfinv", "near the pole at -1", E_OFF, -7.2, -2, -1, 1},
    {"erfcinv", "near the pole at 0", E_LOG, -44, -3, 0, 0},
    {"erfcinv", "near the pole at 2", E_OFF, -6.9, -2, 2, -1},
    {"probit", "near the pole at 0", E_LOG, -44, -3, 0, 0},
    {"probit", "near the pole at 1", E_OFF, -7.2, -2, 1, -1},
    {"phi", "subnormal results", E_UNI, -14, -8, 0, 0},
    {"tgamma", "results near overflow", E_UNI, 30, 35.1, 0, 0},
    {"tgamma", "near the pole at 0", E_LOG, -30, -3, -1, 0},
    {"tgamma", "near the poles -1 .. -30", E_NEAR, 1, 0, -30, -1},
    {"tgamma", "negative arguments", E_UNI, -40, 0, 0, 0},
    {"lgamma", "large results", E_LOG, 3, 36, 0, 0},
    {"lgamma", "near the pole at 0", E_LOG, -30, -3, -1, 0},
    {"lgamma", "within 8 ulps of the zeros 1 and 2", E_NEAR, 1, 0, 1, 2},
    {"lgamma", "just above the zero at 1", E_OFF, -6, -1, 1, 1},
    {"lgamma", "just below the zero at 2", E_OFF, -6, -1, 2, -1},
    {"lgamma", "near the poles -1 and -2", E_NEAR, 1, 0, -2, -1},
    {"lgamma", "near the poles -12 .. -20", E_NEAR, 1, 0, -20, -12},
};

/* The float nearest x moved by k ulps. */
static float float_steps(double x, int k)
{
    float f = (float)x;
    for (; k > 0; --k) f = nextafterf(f, INFINITY);
    for (; k < 0; ++k) f = nextafterf(f, -INFINITY);
    return f;
}

static void edge_inputs(const edge_case *e, int two_args, size_t n, double *x, double *y)
{
    for (size_t i = 0; i < n; ++i) {
        double u = rng_uniform(e->a, e->b), v = rng_uniform(e->c, e->d);
        switch (e->kind) {
        case E_UNI: x[i] = u, y[i] = v; break;
        case E_LOG:
            x[i] = pow(10.0, u);
            y[i] = two_args ? pow(10.0, v) : 0;
            if (!two_args && e->c < 0 && rng() % 2) x[i] = -x[i];
            if (two_args && rng() % 2) x[i] = -x[i];
            if (two_args && rng() % 2) y[i] = -y[i];
            break;
        case E_NEAR: {
            double k = floor(rng_uniform(e->c, e->d + 1));
            if (k > e->d) k = e->d;
            x[i] = float_steps(k * e->a + e->b, (int)(rng() % 17u) - 8);
            y[i] = 0;
            break;
        }
        case E_OFF: x[i] = e->c + e->d * pow(10.0, u), y[i] = 0; break;
        default: { /* E_POW */
            double base = (float)u;
            x[i] = base;
            y[i] = v * log(10.0) / log(base);
            break;
        }
        }
        /* The kernel takes floats: keep what the kernel will see. */
        x[i] = (float)x[i], y[i] = (float)y[i];
    }
}

ACCEL_TEST(device_lang, precise_math_float_near_poles_and_extremes)
{
    amp_program *p = build(acc);
    enum { N = 512 };
    double x[N], y[N];
    for (size_t k = 0; k < sizeof float_edges / sizeof float_edges[0]; ++k) {
        const edge_case *e = &float_edges[k];
        const math_case *c = NULL;
        for (size_t j = 0; j < sizeof precise_cases / sizeof precise_cases[0]; ++j)
            if (!strcmp(precise_cases[j].name, e->name)) c = &precise_cases[j];
        cr_assert(c != NULL, "no precise_math case named %s", e->name);
        edge_inputs(e, c->f2 != NULL, N, x, y);
        char label[128];
        snprintf(label, sizeof label, "precise_math (float), %s,", e->where);
        double worst = run_math_case(p, c, "pmf_", 0, 0, N, label, x, y);
        cr_log_info("largest error in ulps, precise_math float %s %s: %.3f", e->name, e->where, worst);
    }
    ASSERT_OK(amp_program_destroy(p));
}

/* fast_math: the GPU's hardware approximations where it has them. Bounds:
 * ulps, or an absolute error (sin, cos, log near 1); restricted domains. */
#define FC1(name, ref, lo, hi, tf, absf) {#name, ref, NULL, lo, hi, 0, 0, tf, 0, absf}
#define FC2(name, ref, lo, hi, ylo, yhi, tf) {#name, NULL, ref, lo, hi, ylo, yhi, tf, 0, 0}
static const math_case fast_cases[] = {
    FC1(acos, l_acos, -1, 1, 3, 0),
    FC1(asin, l_asin, -1, 1, 3, 0),
    FC1(atan, l_atan, -100, 100, 3, 0),
    FC1(ceil, l_ceil, -1e4, 1e4, 0, 0),
    FC1(cos, l_cos, -3.14159, 3.14159, 4, 0x1p-18),
    FC1(cosh, l_cosh, -10, 10, 3, 0),
    FC1(exp, l_exp, -20, 20, 32, 0),
    FC1(exp2, l_exp2, -60, 60, 3, 0),
    FC1(fabs, l_fabs, -1e4, 1e4, 0, 0),
    FC1(floor, l_floor, -1e4, 1e4, 0, 0),
    FC1(log, l_log, 1e-3, 1e3, 8, 0x1p-19),
    FC1(log10, l_log10, 1e-3, 1e3, 8, 0x1p-19),
    FC1(log2, l_log2, 1e-3, 1e3, 8, 0x1p-19),
    FC1(round, l_round, -1e4, 1e4, 0, 0),
    FC1(rsqrt, ref_rsqrt, 1e-3, 1e6, 3, 0),
    FC1(sin, l_sin, -3.14159, 3.14159, 4, 0x1p-18),
    FC1(sinh, l_sinh, -10, 10, 4, 0),
    FC1(sqrt, l_sqrt, 0, 1e6, 1, 0),
    FC1(tan, l_tan, -1.2, 1.2, 64, 0x1p-18),
    FC1(tanh, l_tanh, -10, 10, 3, 0),
    FC1(trunc, l_trunc, -1e4, 1e4, 0, 0),
    FC2(atan2, l_atan2, -10, 10, -10, 10, 4),
    FC2(fmax, l_fmax, -100, 100, -100, 100, 0),
    FC2(fmin, l_fmin, -100, 100, -100, 100, 0),
    FC2(fmod, l_fmod, -100, 100, 0.1, 10, 0),
    FC2(pow, l_pow, 0.5, 4, -4, 4, 64),
};

ACCEL_TEST(device_lang, fast_math_against_libm)
{
    amp_program *p = build(acc);
    char line[4096];
    size_t len = 0;
    for (size_t k = 0; k < sizeof fast_cases / sizeof fast_cases[0]; ++k) {
        const math_case *c = &fast_cases[k];
        /* The kernel evaluates name(y) too (both spellings); y = x keeps it finite. */
        math_case same = *c;
        if (!c->f2) same.ylo = c->lo, same.yhi = c->hi;
        double worst = run_math_case(p, &same, "fm_", 0, 1, math_samples(), "fast_math", NULL, NULL);
        len += (size_t)snprintf(line + len, sizeof line - len, " %s %.2f", c->name, worst);
        if (len >= sizeof line) len = sizeof line - 1;
    }
    cr_log_info("largest error in ulps, fast_math (sin, cos, tan, log* pass within an absolute bound too):%s", line);
    ASSERT_OK(amp_program_destroy(p));
}

/* The functions with pointer or integer arguments and the classification
 * functions; compared with the host's libm. */
ACCEL_TEST(device_lang, precise_math_exact_functions)
{
    amp_program *p = build(acc);
    enum { N = 512, K = 28 };
    float *x = test_xmalloc(N * sizeof *x);
    double *dx = test_xmalloc(N * sizeof *dx), *k = test_xmalloc(N * K * sizeof *k);
    test_fill_random(x, N, 777u);
    for (int i = 0; i < N; ++i) {
        x[i] *= 50.0f;
        dx[i] = (double)x[i] * 1.000001;
    }
    for (int i = 0; i < N * K; ++i) k[i] = -12345.0;
    amp_array_view *vx = test_view(x, sizeof(float), amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vd = test_view(dx, sizeof(double), amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vk = test_view(k, sizeof(double), amp_extent_2d(N, K), AMP_WRITE_ONLY);
    amp_arg args[] = {amp_arg_view(vx), amp_arg_view(vd), amp_arg_view(vk)};
    launch(test_kernel(p, "pm_exact"), amp_extent_1d(N), args, 3);
    ASSERT_OK(amp_array_view_synchronize(vk));
    for (int i = 0; i < N; ++i) {
        const float a = x[i];
        const double d = dx[i];
        const double *g = &k[i * K];
        double w[K];
        int e, q;
        float fi;
        double di;
        w[0] = frexpf(a, &e);
        w[1] = e;
        w[2] = frexp(d, &e);
        w[3] = e;
        w[4] = modff(a, &fi) + 1000.0 * fi;
        w[5] = modf(d, &di) + 1000.0 * di;
        w[6] = ldexpf(a, i % 20 - 10);
        w[7] = ldexp(d, i % 20 - 10);
        w[24] = scalbnf(a, 3);
        w[25] = a / 4.0f;
        w[26] = scalbn(d, 3);
        w[27] = d / 4.0;
        w[8] = ilogbf(a) + 100 * ilogb(d);
        w[9] = remquof(a, 0.375f, &q);
        w[10] = q & 7;
        w[11] = remquo(d, 0.375, &q);
        w[12] = q & 7;
        w[13] = fmaf(a, a, -1.0f);
        w[14] = fma(d, d, -1.0);
        const float z = a - a, inf = 1.0f / z, sub = a * 1e-40f, nan = NAN;
        w[19] = fpclassify(a) + 8 * fpclassify(inf) + 64 * fpclassify(sub) + 512 * fpclassify(nan) +
                4096 * fpclassify(z) + 32768 * FP_NAN;
        w[20] = (isfinite(a) != 0) + 2 * (isinf(inf) != 0) + 4 + 8 * (isnormal(sub) != 0) + 16 * (signbit(a) != 0) +
                32 * (signbit(-a) != 0) + 64 * (signbit(d) != 0) + 128 + 256 + 512 * (isfinite(d) != 0) +
                1024 * (isnormal(d) != 0);
        w[21] = (isfinite(a) != 0) + 2 + 4 + 8 * (signbit(a) != 0) + 16 * (signbit(-a) != 0);
        for (int j = 0; j < K; ++j) {
            if (j >= 15 && j <= 18) continue; /* sincos: below */
            if (j == 22 || j == 23) continue;
            cr_assert_eq(g[j], w[j], "pm_exact value %d of item %d (a=%.9g d=%.17g): got %.17g want %.17g", j, i,
                         (double)a, d, g[j], w[j]);
        }
        double es = ulp_error(g[15], sinl((ld)a), 0), ec = ulp_error(g[16], cosl((ld)a), 0);
        double eds = ulp_error(g[17], sinl((ld)d), 1), edc = ulp_error(g[18], cosl((ld)d), 1);
        cr_assert(es <= 3 && ec <= 3 && eds <= 3 && edc <= 3,
                  "sincos of %.9g / %.17g: errors %.3g %.3g (float), %.3g %.3g (double) ulp", (double)a, d, es, ec,
                  eds, edc);
        cr_assert_eq(g[22], 0.0, "fast_math sincosf and sincos disagree for %.9g", (double)a);
        double fw = frexpf(a, &e) + ldexpf(a, 2) + modff(a, &fi) + frexpf(a, &q) + ldexpf(a, 1) + modff(a, &fi);
        cr_assert(fabs(g[23] - fw) <= 1e-5 * fabs(fw) + 1e-6, "fast_math frexp/ldexp/modf of %.9g: got %.9g want %.9g",
                  (double)a, g[23], fw);
    }
    ASSERT_OK(amp_array_view_destroy(vx));
    ASSERT_OK(amp_array_view_destroy(vd));
    ASSERT_OK(amp_array_view_destroy(vk));
    ASSERT_OK(amp_program_destroy(p));
    free(x), free(dx), free(k);
}

/* ------------------------------------------------------ every name, once */

/* One tiled kernel (one tile of one work-item) evaluates one expression per
 * entry below into out[k]; the host checks each against its reference. The
 * kernel is generated from this table, so the table is the one list, and the
 * test also checks that every name docs/device-language.md lists appears in
 * the generated source. */
typedef enum { K_EXACT, K_FLOAT, K_DOUBLE, K_FAST, K_NAN } name_tol;
typedef struct {
    char *expr;
    double ref;
    name_tol tol;
} name_case;
typedef struct {
    name_case c[1400];
    size_t n;
    /* Memory the atomics work on, with its initial contents, and what
     * each slot holds once the kernel ran (its atomic's store). */
    int32_t im[64], imw[64];
    uint32_t um[64], umw[64];
    uint64_t lm[64], lmw[64];
    float fm[64], fmw[64];
    double dm[64], dmw[64];
    int ni, nu, nl, nf, nd;
} names;

static void add(names *t, name_tol tol, double ref, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void add(names *t, name_tol tol, double ref, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    cr_assert_lt(t->n, sizeof t->c / sizeof t->c[0], "name table full");
    t->c[t->n].expr = strdup(buf);
    t->c[t->n].ref = ref;
    t->c[t->n].tol = tol;
    t->n++;
}
/* A fresh slot of each memory kind, initialised to a value the host knows. */
static int slot_i(names *t) { t->imw[t->ni] = t->im[t->ni] = 100 + 3 * t->ni; return t->ni++; }
static int slot_u(names *t) { t->umw[t->nu] = t->um[t->nu] = 200u + 5u * (uint32_t)t->nu; return t->nu++; }
static int slot_l(names *t) { t->lmw[t->nl] = t->lm[t->nl] = 0x100000000ull + 7u * (uint64_t)t->nl; return t->nl++; }
static int slot_f(names *t) { t->fmw[t->nf] = t->fm[t->nf] = 0.5f + (float)t->nf; return t->nf++; }
static int slot_d(names *t) { t->dmw[t->nd] = t->dm[t->nd] = 0.25 + t->nd; return t->nd++; }

/* Kernel inputs (fin, din, iin), the same values here. */
static const float A = 0.375f, B = 1.625f, C = -2.25f;
static const int32_t NN = -37, MM = 12;
static const uint32_t UU = 0x80001234u;
static const int64_t LL = -123456789012LL;
static const uint64_t ULL = 0x8000000012345678ULL;

static double bits_f(float x) { uint32_t u; memcpy(&u, &x, 4); return (double)u; }
static double bits_d(double x) { int64_t u; memcpy(&u, &x, 8); return (double)u; }

static void build_names(names *t)
{
    const double a = A, b = B, c = C;
    int s;
    /* Kernel structure. */
    add(t, K_EXACT, 12, "(double)amp::extent<2>(3, 4).size()");
    add(t, K_EXACT, 2, "(double)amp::index<2>(1, 2)[1]");
    add(t, K_EXACT, 0, "(double)(t.global[0] + t.local[0] + t.tile[0] + t.tile_origin[0])");
    add(t, K_EXACT, 1, "(t.barrier.wait(), amp::tile_barrier().wait_with_all_memory_fence(), 1.0)");
    add(t, K_EXACT, 1, "(amp::all_memory_fence(t.barrier), amp::global_memory_fence(t.barrier), "
                       "amp::tile_static_memory_fence(t.barrier), 1.0)");
    add(t, K_EXACT, 6, "(double)arr[I(1)]");
    add(t, K_EXACT, 0, "(double)amp::guarded_read(iin, I(1000))");
    add(t, K_EXACT, 1, "(amp::guarded_write(im, I(-1), 5), 1.0)");
    add(t, K_EXACT, 2 * b, "(double)(ts[1] = 2 * b, ts[1])");
    add(t, K_EXACT, 3 * a, "(double)(sh[2] = 3 * a, sh[2])");
    add(t, K_EXACT, 2 * b + 1, "(double)(dev_twice(b) + hd_once(1.0f))");
    add(t, K_EXACT, 8 * 16 + 4 + 10 * 8, "(double)(amp::tiled_extent<4, 8>(amp::extent<2>(5, 9)).pad().size() + "
                                          "amp::extent<1>(7).tile<4>().truncate()[0] + "
                                          "10 * amp::tiled_extent<2, 8>::tile_dim1)");
    add(t, K_EXACT, 1 - 2 + 10 * (7 - 3) + 100 * 3,
        "(double)((1 - amp::index<2>(0, 2))[1] + 10 * (amp::extent<1>(7) - amp::extent<1>(3))[0] + "
        "100 * (++amp::index<1>(2))[0])");
    /* Thread geometry and synchronisation. */
    add(t, K_EXACT, 0, "(double)(threadIdx.x + threadIdx.y + threadIdx.z + blockIdx.x + blockIdx.y + blockIdx.z)");
    add(t, K_EXACT, 2, "(double)(blockDim.x * blockDim.y * blockDim.z + gridDim.x * gridDim.y * gridDim.z)");
    add(t, K_EXACT, 3 + 1, "(double)(dim3(2, 3, 4).y + dim3().z)");
    add(t, K_EXACT, 0, "(double)geom_sum(threadIdx, blockIdx)");
    add(t, K_EXACT, 1, "(__syncthreads(), __threadfence_block(), __threadfence(), __threadfence_system(), 1.0)");

    /* HIP atomics: each returns the slot's initial value (old) and leaves
     * final there. */
#define ATOM(fn, kind, arg, final)                                                                \
    do {                                                                                         \
        int k_ = slot_##kind(t);                                                                 \
        __typeof__(t->kind##m[0]) old = t->kind##m[k_];                                          \
        add(t, K_EXACT, (double)old, "(double)" #fn "(&" #kind "m[I(%d)], " arg ")", k_);       \
        t->kind##mw[k_] = (final);                                                               \
        (void)old;                                                                               \
    } while (0)
    ATOM(atomicAdd, i, "5", old + 5);
    ATOM(atomicAdd, u, "5u", old + 5u);
    ATOM(atomicAdd, l, "5ull", old + 5ull);
    ATOM(atomicAdd, f, "0.5f", old + 0.5f);
    ATOM(atomicAdd, d, "0.5", old + 0.5);
    ATOM(atomicSub, i, "5", old - 5);
    ATOM(atomicSub, u, "5u", old - 5u);
    ATOM(atomicExch, i, "5", 5);
    ATOM(atomicExch, u, "5u", 5u);
    ATOM(atomicExch, l, "5ull", 5ull);
    ATOM(atomicExch, f, "0.5f", 0.5f);
    ATOM(atomicMin, i, "5", 5);
    ATOM(atomicMin, u, "5u", 5u);
    ATOM(atomicMin, l, "5ull", 5ull);
    ATOM(atomicMax, i, "5", old);
    ATOM(atomicMax, u, "5u", old);
    ATOM(atomicMax, l, "5ull", old);
    ATOM(atomicAnd, i, "5", old & 5);
    ATOM(atomicAnd, u, "5u", old & 5u);
    ATOM(atomicAnd, l, "5ull", old & 5ull);
    ATOM(atomicOr, i, "5", old | 5);
    ATOM(atomicOr, u, "5u", old | 5u);
    ATOM(atomicOr, l, "5ull", old | 5ull);
    ATOM(atomicXor, i, "5", old ^ 5);
    ATOM(atomicXor, u, "5u", old ^ 5u);
    ATOM(atomicXor, l, "5ull", old ^ 5ull);
    ATOM(atomicInc, u, "1000u", old + 1u);
    ATOM(atomicDec, u, "1000u", old - 1u);
    {
        int k = slot_i(t);
        add(t, K_EXACT, t->im[k], "(double)atomicCAS(&im[I(%d)], %d, 1)", k, (int)t->im[k]);
        t->imw[k] = 1; /* it matched: stored */
        k = slot_u(t);
        add(t, K_EXACT, t->um[k], "(double)atomicCAS(&um[I(%d)], 0u, 1u)", k); /* no match: kept */
        k = slot_l(t);
        add(t, K_EXACT, (double)t->lm[k], "(double)atomicCAS(&lm[I(%d)], 0ull, 1ull)", k);
    }
    /* C++ AMP atomics. */
#define AMP_ATOM(fn, kind, arg, final) ATOM(amp::fn, kind, arg, final)
    AMP_ATOM(atomic_fetch_add, i, "5", old + 5);
    AMP_ATOM(atomic_fetch_add, u, "5u", old + 5u);
    AMP_ATOM(atomic_fetch_sub, i, "5", old - 5);
    AMP_ATOM(atomic_fetch_sub, u, "5u", old - 5u);
    AMP_ATOM(atomic_fetch_and, i, "5", old & 5);
    AMP_ATOM(atomic_fetch_and, u, "5u", old & 5u);
    AMP_ATOM(atomic_fetch_or, i, "5", old | 5);
    AMP_ATOM(atomic_fetch_or, u, "5u", old | 5u);
    AMP_ATOM(atomic_fetch_xor, i, "5", old ^ 5);
    AMP_ATOM(atomic_fetch_xor, u, "5u", old ^ 5u);
    AMP_ATOM(atomic_fetch_max, i, "5", old);
    AMP_ATOM(atomic_fetch_max, u, "5u", old);
    AMP_ATOM(atomic_fetch_min, i, "5", 5);
    AMP_ATOM(atomic_fetch_min, u, "5u", 5u);
    AMP_ATOM(atomic_exchange, i, "5", 5);
    AMP_ATOM(atomic_exchange, u, "5u", 5u);
    AMP_ATOM(atomic_exchange, f, "0.5f", 0.5f);
    {
        int k = slot_i(t);
        add(t, K_EXACT, t->im[k], "(double)amp::atomic_fetch_inc(&im[I(%d)])", k);
        t->imw[k] = t->im[k] + 1;
        k = slot_i(t);
        add(t, K_EXACT, t->im[k], "(double)amp::atomic_fetch_dec(&im[I(%d)])", k);
        t->imw[k] = t->im[k] - 1;
        k = slot_u(t);
        add(t, K_EXACT, t->um[k], "(double)amp::atomic_fetch_inc(&um[I(%d)])", k);
        t->umw[k] = t->um[k] + 1u;
        k = slot_u(t);
        add(t, K_EXACT, t->um[k], "(double)amp::atomic_fetch_dec(&um[I(%d)])", k);
        t->umw[k] = t->um[k] - 1u;
        /* Success: 1000 + expected; failure: the value found. */
        k = slot_i(t);
        add(t, K_EXACT, 1000 + t->im[k], "(double)cas_probe(&im[I(%d)], %d, 7)", k, (int)t->im[k]);
        t->imw[k] = 7;
        k = slot_i(t);
        add(t, K_EXACT, t->im[k], "(double)cas_probe(&im[I(%d)], -1, 7)", k);
        k = slot_u(t);
        add(t, K_EXACT, 1000.0 + t->um[k], "(double)cas_probe(&um[I(%d)], %uu, 7u)", k, t->um[k]);
        t->umw[k] = 7u;
        k = slot_u(t);
        add(t, K_EXACT, t->um[k], "(double)cas_probe(&um[I(%d)], 1u, 7u)", k);
    }

    /* HIP math: the C99 functions, float and double. */
#define M1(fn, v)                                                                                 \
    add(t, K_FLOAT, fn(v), #fn "f(" #v ")");                                                     \
    add(t, K_DOUBLE, fn(v), #fn "(d" #v ")");
#define M2(fn, v, w)                                                                              \
    add(t, K_FLOAT, fn(v, w), #fn "f(" #v ", " #w ")");                                          \
    add(t, K_DOUBLE, fn(v, w), #fn "(d" #v ", d" #w ")");
    M1(acos, a) M1(acosh, b) M1(asin, a) M1(asinh, c) M1(atan, c) M1(atanh, a) M1(cbrt, c) M1(ceil, c)
    M1(cos, b) M1(cosh, c) M1(erf, a) M1(erfc, b) M1(exp, c) M1(exp2, b) M1(exp10, a) M1(expm1, a)
    M1(fabs, c) M1(floor, c) M1(log, b) M1(log10, b) M1(log1p, a) M1(log2, b) M1(logb, b)
    M1(nearbyint, c) M1(rint, c) M1(round, c) M1(sin, b) M1(sinh, c) M1(sqrt, b) M1(tan, a) M1(tanh, c)
    M1(tgamma, b) M1(trunc, c)
    M2(atan2, a, c) M2(copysign, b, c) M2(fdim, b, a) M2(fmax, a, c) M2(fmin, a, c) M2(fmod, c, a)
    M2(hypot, a, b) M2(pow, b, c) M2(remainder, c, a)
    add(t, K_FLOAT, lgamma_r(b, &s), "lgammaf(b)");
    add(t, K_DOUBLE, lgamma_r(b, &s), "lgamma(db)");
    add(t, K_EXACT, nextafterf(A, B), "nextafterf(a, b)");
    add(t, K_EXACT, nextafter(a, b), "nextafter(da, db)");
    add(t, K_EXACT, fmaf(A, B, C), "fmaf(a, b, c)");
    add(t, K_EXACT, fma(a, b, c), "fma(da, db, dc)");
    add(t, K_EXACT, ilogb(b) + 10 * ilogb(c), "(double)(ilogbf(b) + 10 * ilogb(dc))");
    add(t, K_EXACT, -2 - 2 - 2 - 2 - 2 - 2 - 2 - 2,
        "(double)(lrintf(c) + lrint(dc) + llrintf(c) + llrint(dc) + lroundf(c) + lround(dc) + llroundf(c) + llround(dc))");
    add(t, K_EXACT, 3 * 3, "(double)(ldexpf(b, 3) + ldexp(db, 3) + scalbnf(b, 3) + scalbn(db, 3) + "
                           "scalblnf(b, 3L) + scalbln(db, 3L)) / 1.625 / 8.0 * 1.5");
    /* Functions with out-parameters: the comma operator sequences each call
     * before its outputs are read. */
    {
        int x1, x2;
        float g1;
        double h1, r1 = frexpf(B, &x1), r2 = frexp(c, &x2);
        add(t, K_EXACT, r1 + r2 + x1 + 10 * x2, "(r1 = frexpf(b, &e1), r2 = frexp(dc, &e2), r1 + r2 + e1 + 10 * e2)");
        r1 = modff(C, &g1), r2 = modf(c, &h1);
        add(t, K_EXACT, r1 + r2 + 10 * g1 + 100 * h1, "(r1 = modff(c, &f1), r2 = modf(dc, &d1), r1 + r2 + 10 * f1 + 100 * d1)");
        r1 = remquof(C, A, &x1), r2 = remquo(c, a, &x2);
        add(t, K_EXACT, r1 + r2 + 10 * (x1 & 7) + 100 * (x2 & 7),
            "(r1 = remquof(c, a, &q1), r2 = remquo(dc, da, &q2), r1 + r2 + 10 * (q1 & 7) + 100 * (q2 & 7))");
    }
    add(t, K_FLOAT, sin(a) + cos(a), "(sincosf(a, &f1, &f2), (double)(f1 + f2))");
    add(t, K_DOUBLE, sin(a) + cos(a), "(sincos(da, &d1, &d2), d1 + d2)");
    add(t, K_NAN, NAN, "(double)nanf(\"\")");
    add(t, K_NAN, NAN, "nan(\"\")");
    add(t, K_EXACT, 1 + 2 * 0 + 4 + 8 * 1,
        "(double)((isfinite(a) ? 1 : 0) + 2 * (isinf(db) ? 1 : 0) + 4 * (isnan(nanf(\"\")) ? 1 : 0) + 8 * (signbit(dc) ? 1 : 0))");
    add(t, K_EXACT, 37 + 37 + 123456789012.0, "(double)(abs(n) + labs((long)n) + llabs(ll))");
    add(t, K_EXACT, -37 + 120 + c + a, "(double)min(n, m) + 10.0 * max(1u, 12u) + (double)min(a, c) + max(da, dc)");
    add(t, K_EXACT, 1 + 2, "(double)((min(ll, 0ll) == ll ? 1 : 0) + (max(ull, 1ull) == ull ? 2 : 0))");
    add(t, K_FLOAT, a / b, "(double)fdividef(a, b)");
    /* CUDA/HIP extras. */
    add(t, K_FLOAT, 1 / sqrt(b), "(double)rsqrtf(b)");
    add(t, K_DOUBLE, 1 / sqrt(b), "rsqrt(db)");
    add(t, K_FLOAT, 1 / cbrt(b), "(double)rcbrtf(b)");
    add(t, K_DOUBLE, 1 / cbrt(b), "rcbrt(db)");
    add(t, K_FLOAT, (double)ref_sinpi(a), "(double)sinpif(a)");
    add(t, K_DOUBLE, (double)ref_sinpi(a), "sinpi(da)");
    add(t, K_FLOAT, (double)ref_cospi(a), "(double)cospif(a)");
    add(t, K_DOUBLE, (double)ref_cospi(a), "cospi(da)");
    add(t, K_FLOAT, (double)ref_erfinv(a), "(double)erfinvf(a)");
    add(t, K_DOUBLE, (double)ref_erfinv(a), "erfinv(da)");
    add(t, K_FLOAT, (double)ref_erfcinv(a), "(double)erfcinvf(a)");
    add(t, K_DOUBLE, (double)ref_erfcinv(a), "erfcinv(da)");
    add(t, K_FLOAT, (double)ref_phi(c), "(double)normcdff(c)");
    add(t, K_DOUBLE, (double)ref_phi(c), "normcdf(dc)");
    add(t, K_FLOAT, (double)ref_probit(a), "(double)normcdfinvf(a)");
    add(t, K_DOUBLE, (double)ref_probit(a), "normcdfinv(da)");
    /* Intrinsics. */
    add(t, K_FAST, exp(a), "(double)__expf(a)");
    add(t, K_FAST, pow(10, a), "(double)__exp10f(a)");
    add(t, K_FAST, log(b), "(double)__logf(b)");
    add(t, K_FAST, log2(b), "(double)__log2f(b)");
    add(t, K_FAST, log10(b), "(double)__log10f(b)");
    add(t, K_FAST, sin(a), "(double)__sinf(a)");
    add(t, K_FAST, cos(a), "(double)__cosf(a)");
    add(t, K_FAST, tan(a), "(double)__tanf(a)");
    add(t, K_FAST, sin(a) - cos(a), "(__sincosf(a, &f1, &f2), (double)(f1 - f2))");
    add(t, K_FAST, pow(b, a), "(double)__powf(b, a)");
    add(t, K_FAST, a / b, "(double)__fdividef(a, b)");
    add(t, K_EXACT, 1, "(double)__saturatef(b)");
    add(t, K_EXACT, fmaf(A, B, C), "(double)__fmaf_rn(a, b, c)");
    add(t, K_EXACT, fma(a, b, c), "__fma_rn(da, db, dc)");
    add(t, K_EXACT, sqrtf(B), "(double)__fsqrt_rn(b)");
    add(t, K_EXACT, 1.0f / B, "(double)__frcp_rn(b)");
    add(t, K_EXACT, (float)(A + B), "(double)__fadd_rn(a, b)");
    add(t, K_EXACT, (float)(A * B), "(double)__fmul_rn(a, b)");
    add(t, K_EXACT, A / B, "(double)__fdiv_rn(a, b)");
    add(t, K_EXACT, 1.0, "(double)__int_as_float(0x3f800000)");
    add(t, K_EXACT, bits_f(A), "(double)(unsigned)__float_as_int(a)");
    add(t, K_EXACT, -2.0, "(double)__uint_as_float(0xc0000000u)");
    add(t, K_EXACT, bits_f(B), "(double)__float_as_uint(b)");
    add(t, K_EXACT, 2.0, "__longlong_as_double(0x4000000000000000ll)");
    add(t, K_EXACT, bits_d(a), "(double)__double_as_longlong(da)");
    add(t, K_EXACT, __builtin_popcount(UU), "(double)__popc(u)");
    add(t, K_EXACT, __builtin_popcountll(ULL), "(double)__popcll(ull)");
    add(t, K_EXACT, 0 + 32 + 10 * 0 + 100 * 64, "(double)(__clz(n) + __clz(0) + 10 * __clzll(ll) + 100 * __clzll(0ll))");
    add(t, K_EXACT, __builtin_ffs(MM) + 100 * __builtin_ffsll(LL), "(double)(__ffs(m) + 100 * __ffsll(ll))");
    add(t, K_EXACT, ref_reverse(UU), "(double)__brev(u)");
    add(t, K_EXACT, NN * MM, "(double)__mul24(n, m)");
    add(t, K_EXACT, (UU & 0xffffffu) * 5u, "(double)__umul24(u, 5u)");
    add(t, K_EXACT, (double)(int32_t)(((int64_t)NN * 0x7fffffff) >> 32), "(double)__mulhi(n, 0x7fffffff)");
    add(t, K_EXACT, (double)(uint32_t)(((uint64_t)UU * UU) >> 32), "(double)__umulhi(u, u)");

    /* Every vendor vector type and its make_ function: components 1..N,
     * then sizeof and alignof (HIP's layout). */
    {
        static const char *tn[12] = {"char", "uchar", "short", "ushort", "int", "uint",
                                     "long", "ulong", "longlong", "ulonglong", "float", "double"};
        static const int es[12] = {1, 1, 2, 2, 4, 4, 8, 8, 8, 8, 4, 8};
        for (int k = 0; k < 12; ++k)
            for (int n = 1; n <= 4; ++n) {
                static const char *args[5] = {"", "1", "1, 2", "1, 2, 3", "1, 2, 3, 4"};
                double ref = n * (n + 1) / 2 + 1000.0 * n * es[k] + 100000.0 * (n == 3 ? es[k] : n * es[k]);
                add(t, K_EXACT, ref, "vsum(make_%s%d(%s)) + 1000.0 * sizeof(%s%d) + 100000.0 * alignof(%s%d)",
                    tn[k], n, args[n], tn[k], n, tn[k], n);
            }
    }
    /* C++ AMP's vector names and traits. */
    add(t, K_EXACT, 3, "vsum(amp::int_2(1, 2))");
    add(t, K_EXACT, 6, "vsum(amp::int_3(1, 2, 3))");
    add(t, K_EXACT, 10, "vsum(amp::int_4(1, 2, 3, 4))");
    add(t, K_EXACT, 3, "vsum(amp::uint_2(1u, 2u))");
    add(t, K_EXACT, 6, "vsum(amp::uint_3(1u, 2u, 3u))");
    add(t, K_EXACT, 10, "vsum(amp::uint_4(1u, 2u, 3u, 4u))");
    add(t, K_EXACT, 3, "vsum(amp::float_2(1, 2))");
    add(t, K_EXACT, 6, "vsum(amp::float_3(1, 2, 3))");
    add(t, K_EXACT, 10, "vsum(amp::float_4(1, 2, 3, 4))");
    add(t, K_EXACT, 3, "vsum(amp::double_2(1, 2))");
    add(t, K_EXACT, 6, "vsum(amp::double_3(1, 2, 3))");
    add(t, K_EXACT, 10, "vsum(amp::double_4(1, 2, 3, 4))");
    add(t, K_EXACT, 8, "vsum(amp::graphics::float_4(2.0f))");
    add(t, K_EXACT, 7, "(double)(amp::uint)7");
    add(t, K_EXACT, 12 + 3, "vsum(amp::short_vector<float, 3>::type(4)) + amp::short_vector_traits<amp::vec<int, 3>>::size");
    add(t, K_EXACT, -0.75 + 10 * 1.0, "(double)(amp::norm(-3.0f) + amp::norm(0.25f)) + 10.0 * (float)amp::unorm(2)");
    add(t, K_EXACT, 1.5 + 10 * -3.0 + 100 * 1.0,
        "vsum(amp::norm_2(0.5f, 2.0f)) + 10.0 * vsum(amp::norm_3(-2.0f)) + 100.0 * vsum(amp::norm_4(0.25f))");
    add(t, K_EXACT, 1.5 + 10 * 0.0 + 100 * 1.0,
        "vsum(amp::unorm_2(0.5f, 2.0f)) + 10.0 * vsum(amp::unorm_3(-2.0f)) + 100.0 * vsum(amp::unorm_4(0.25f))");
    add(t, K_EXACT, 0 - 1 + 10 * 1 + 100 * (0 + 0 + 1),
        "(double)((float)NORM_ZERO + (float)NORM_MIN + 10.0f * (float)NORM_MAX + "
        "100.0f * ((float)UNORM_ZERO + (float)UNORM_MIN + (float)UNORM_MAX))");
    add(t, K_EXACT, 4311, "(double)(amp::float_4(1, 2, 3, 4).get_wzyx().get_x() * 1000 + "
                          "amp::float_4(1, 2, 3, 4).get_zy().x * 100 + amp::int_3(1, 2, 3).get_yxz().y * 10 + "
                          "amp::double_2(1.0, 2.0).get_r())");

    /* precise_math: the f form, the float overload and the double overload. */
#define PM1(fn, ref, v)                                                                            \
    add(t, K_FLOAT, (double)(ref), "(double)amp::precise_math::" #fn "f(" #v ")");                 \
    add(t, K_FLOAT, (double)(ref), "(double)amp::precise_math::" #fn "(" #v ")");                  \
    add(t, K_DOUBLE, (double)(ref), "amp::precise_math::" #fn "(d" #v ")");
#define PM2(fn, ref, v, w)                                                                         \
    add(t, K_FLOAT, (double)(ref), "(double)amp::precise_math::" #fn "f(" #v ", " #w ")");         \
    add(t, K_FLOAT, (double)(ref), "(double)amp::precise_math::" #fn "(" #v ", " #w ")");          \
    add(t, K_DOUBLE, (double)(ref), "amp::precise_math::" #fn "(d" #v ", d" #w ")");
    PM1(acos, acos(a), a) PM1(acosh, acosh(b), b) PM1(asin, asin(a), a) PM1(asinh, asinh(c), c)
    PM1(atan, atan(c), c) PM1(atanh, atanh(a), a) PM1(cbrt, cbrt(c), c) PM1(ceil, ceil(c), c)
    PM1(cos, cos(b), b) PM1(cosh, cosh(c), c) PM1(cospi, ref_cospi(a), a) PM1(erf, erf(a), a)
    PM1(erfc, erfc(b), b) PM1(erfcinv, ref_erfcinv(a), a) PM1(erfinv, ref_erfinv(a), a) PM1(exp, exp(c), c)
    PM1(exp10, pow(10, a), a) PM1(exp2, exp2(b), b) PM1(expm1, expm1(a), a) PM1(fabs, fabs(c), c)
    PM1(floor, floor(c), c) PM1(lgamma, lgamma_r(b, &s), b) PM1(log, log(b), b) PM1(log10, log10(b), b)
    PM1(log1p, log1p(a), a) PM1(log2, log2(b), b) PM1(logb, logb(b), b) PM1(nearbyint, nearbyint(c), c)
    PM1(phi, ref_phi(c), c) PM1(probit, ref_probit(a), a) PM1(rcbrt, 1 / cbrt(b), b) PM1(round, round(c), c)
    PM1(rsqrt, 1 / sqrt(b), b) PM1(sin, sin(b), b) PM1(sinh, sinh(c), c) PM1(sinpi, ref_sinpi(a), a)
    PM1(sqrt, sqrt(b), b) PM1(tan, tan(a), a) PM1(tanh, tanh(c), c) PM1(tanpi, ref_tanpi(a), a)
    PM1(tgamma, tgamma(b), b) PM1(trunc, trunc(c), c)
    PM2(atan2, atan2(a, c), a, c) PM2(copysign, copysign(b, c), b, c) PM2(fdim, fdim(b, a), b, a)
    PM2(fmax, fmax(a, c), a, c) PM2(fmin, fmin(a, c), a, c) PM2(fmod, fmod(c, a), c, a)
    PM2(hypot, hypot(a, b), a, b) PM2(pow, pow(b, c), b, c) PM2(remainder, remainder(c, a), c, a)
    add(t, K_EXACT, nextafterf(A, B) + nextafterf(A, B) + nextafter(a, b),
        "(double)amp::precise_math::nextafterf(a, b) + amp::precise_math::nextafter(a, b) + "
        "amp::precise_math::nextafter(da, db)");
    add(t, K_EXACT, 3.0 * fmaf(A, B, C),
        "(double)amp::precise_math::fmaf(a, b, c) + amp::precise_math::fma(a, b, c) + amp::precise_math::fma(da, db, dc)");
    {
        int x1, x2, x3;
        float g1, g2;
        double h1, r1 = frexpf(B, &x1), r2 = frexpf(B, &x2), r3 = frexp(c, &x3);
        add(t, K_EXACT, r1 + r2 + r3 + x1 + 10 * x2 + 100 * x3,
            "(r1 = amp::precise_math::frexpf(b, &e1), r2 = amp::precise_math::frexp(b, &e2), "
            "r3 = amp::precise_math::frexp(dc, &q1), r1 + r2 + r3 + e1 + 10 * e2 + 100 * q1)");
        r1 = modff(C, &g1), r2 = modff(C, &g2), r3 = modf(c, &h1);
        add(t, K_EXACT, r1 + r2 + r3 + g1 + 10 * g2 + 100 * h1,
            "(r1 = amp::precise_math::modff(c, &f1), r2 = amp::precise_math::modf(c, &f2), "
            "r3 = amp::precise_math::modf(dc, &d1), r1 + r2 + r3 + f1 + 10 * f2 + 100 * d1)");
        r1 = remquof(C, A, &x1), r2 = remquof(C, A, &x2), r3 = remquo(c, a, &x3);
        add(t, K_EXACT, r1 + r2 + r3 + (x1 & 7) + 10 * (x2 & 7) + 100 * (x3 & 7),
            "(r1 = amp::precise_math::remquof(c, a, &q1), r2 = amp::precise_math::remquo(c, a, &q2), "
            "r3 = amp::precise_math::remquo(dc, da, &e1), r1 + r2 + r3 + (q1 & 7) + 10 * (q2 & 7) + 100 * (e1 & 7))");
    }
    add(t, K_EXACT, ilogbf(B) + 10 * ilogbf(C) + 100 * ilogb(c),
        "(double)(amp::precise_math::ilogbf(b) + 10 * amp::precise_math::ilogb(c) + 100 * amp::precise_math::ilogb(dc))");
    add(t, K_EXACT, 3 * 13.0 + 3 * 13.0 + 2 * 0.40625,
        "(double)(amp::precise_math::ldexpf(b, 3) + amp::precise_math::ldexp(b, 3) + amp::precise_math::ldexp(db, 3) + "
        "amp::precise_math::scalbnf(b, 3) + amp::precise_math::scalbn(b, 3) + amp::precise_math::scalbn(db, 3) + "
        "amp::precise_math::scalbf(b, -2.0f) + amp::precise_math::scalb(b, -2.0f)) + "
        "amp::precise_math::scalb(db, -2.0) - 0.40625");
    add(t, K_NAN, NAN, "(double)amp::precise_math::scalb(db, 0.5)");
    add(t, K_FLOAT, 3 * (sin(a) + cos(a)),
        "(amp::precise_math::sincosf(a, &f1, &f2), r1 = f1 + f2, amp::precise_math::sincos(a, &f1, &f2), "
        "r2 = f1 + f2, amp::precise_math::sincos(da, &d1, &d2), r1 + r2 + d1 + d2)");
    add(t, K_NAN, NAN, "(double)amp::precise_math::nanf(0) + amp::precise_math::nan(3)");
    add(t, K_EXACT, FP_NORMAL + 8 * FP_ZERO + 64 * FP_NAN + 512 * FP_INFINITE,
        "(double)(amp::precise_math::fpclassify(a) + 8 * amp::precise_math::fpclassify(0.0) + "
        "64 * amp::precise_math::fpclassify(amp::precise_math::nan(0)) + 512 * amp::precise_math::fpclassify(1.0f / (a - a)))");
    add(t, K_EXACT, 1 + 2 + 4 + 8 + 16 + 32 + 64 + 128 + 256,
        "(double)(amp::precise_math::isfinite(a) + 2 * amp::precise_math::isfinite(db) + "
        "4 * amp::precise_math::isinf(1.0f / (a - a)) + 8 * amp::precise_math::isinf(1.0 / (da - da)) + "
        "16 * amp::precise_math::isnan(amp::precise_math::nanf(0)) + 32 * amp::precise_math::isnan(amp::precise_math::nan(0)) + "
        "64 * amp::precise_math::isnormal(c) + 128 * amp::precise_math::signbit(dc) + "
        "256 * amp::precise_math::signbitf(c) + 512 * amp::precise_math::signbit(a))");

    /* fast_math: both spellings. */
#define FM1(fn, ref, v)                                                                            \
    add(t, K_FAST, (double)(ref), "(double)amp::fast_math::" #fn "f(" #v ")");                     \
    add(t, K_FAST, (double)(ref), "(double)amp::fast_math::" #fn "(" #v ")");
#define FM2(fn, ref, v, w)                                                                         \
    add(t, K_FAST, (double)(ref), "(double)amp::fast_math::" #fn "f(" #v ", " #w ")");             \
    add(t, K_FAST, (double)(ref), "(double)amp::fast_math::" #fn "(" #v ", " #w ")");
    FM1(acos, acos(a), a) FM1(asin, asin(a), a) FM1(atan, atan(c), c) FM1(ceil, ceil(c), c) FM1(cos, cos(a), a)
    FM1(cosh, cosh(c), c) FM1(exp, exp(c), c) FM1(exp2, exp2(b), b) FM1(fabs, fabs(c), c) FM1(floor, floor(c), c)
    FM1(log, log(b), b) FM1(log10, log10(b), b) FM1(log2, log2(b), b) FM1(round, round(c), c)
    FM1(rsqrt, 1 / sqrt(b), b) FM1(sin, sin(a), a) FM1(sinh, sinh(c), c) FM1(sqrt, sqrt(b), b) FM1(tan, tan(a), a)
    FM1(tanh, tanh(c), c) FM1(trunc, trunc(c), c)
    FM2(atan2, atan2(a, c), a, c) FM2(fmax, fmax(a, c), a, c) FM2(fmin, fmin(a, c), a, c) FM2(fmod, fmod(c, a), c, a)
    FM2(pow, pow(b, c), b, c)
    add(t, K_FAST, 2 * (sin(a) + cos(a)),
        "(amp::fast_math::sincosf(a, &f1, &f2), r1 = f1 + f2, amp::fast_math::sincos(a, &f1, &f2), r1 + f1 + f2)");
    {
        int x1, x2;
        float g1, g2;
        double r1 = frexpf(B, &x1), r2 = frexpf(C, &x2), r3 = modff(C, &g1), r4 = modff(B, &g2);
        add(t, K_EXACT, r1 + r2 + r3 + r4 + x1 + 10 * x2 + 100 * g1 + 1000 * g2 + ldexpf(B, 3) + ldexpf(C, 2),
            "(r1 = amp::fast_math::frexpf(b, &e1), r2 = amp::fast_math::frexp(c, &e2), "
            "r3 = amp::fast_math::modff(c, &f1), r4 = amp::fast_math::modf(b, &f2), "
            "r1 + r2 + r3 + r4 + e1 + 10 * e2 + 100 * f1 + 1000 * f2 + amp::fast_math::ldexpf(b, 3) + "
            "amp::fast_math::ldexp(c, 2))");
    }
    add(t, K_EXACT, 1 + 2 + 4 + 8 + 0,
        "(double)(amp::fast_math::isfinite(a) + 2 * amp::fast_math::isinf(1.0f / (a - a)) + "
        "4 * amp::fast_math::isnan(amp::precise_math::nanf(0)) + 8 * amp::fast_math::signbit(c) + "
        "16 * amp::fast_math::signbitf(a))");

    /* direct3d. */
    add(t, K_EXACT, 37, "(double)amp::direct3d::abs(n)");
    add(t, K_EXACT, 0.25 + 12, "(double)amp::direct3d::clamp(b, -0.5f, 0.25f) + amp::direct3d::clamp(m, 0, 12)");
    add(t, K_EXACT, __builtin_popcount(UU), "(double)amp::direct3d::countbits(u)");
    add(t, K_EXACT, ref_firstbithigh(NN) + 100 * ref_firstbithigh(MM), "(double)(amp::direct3d::firstbithigh(n) + 100 * amp::direct3d::firstbithigh(m))");
    add(t, K_EXACT, __builtin_ffs(MM) - 1, "(double)amp::direct3d::firstbitlow(m)");
    add(t, K_EXACT, 12 - 37 * 10.0 + 0x80001234u + 12 * 10.0,
        "(double)amp::direct3d::imax(n, m) + 10.0 * amp::direct3d::imin(n, m) + (double)amp::direct3d::umax(u, 12u) + "
        "10.0 * amp::direct3d::umin(u, 12u)");
    add(t, K_EXACT, (double)fmaf(A, B, C) + fma(a, b, c) + (double)(NN * MM + 5) + (double)(UU * 3u + 1u),
        "(double)amp::direct3d::mad(a, b, c) + amp::direct3d::mad(da, db, dc) + (double)amp::direct3d::mad(n, m, 5) + "
        "(double)amp::direct3d::mad(u, 3u, 1u)");
    add(t, K_EXACT, (double)(B * 0.0174532925199432957692f), "(double)amp::direct3d::radians(b)");
    add(t, K_EXACT, (double)(1.0f / B) + 1.0 / b, "(double)amp::direct3d::rcp(b) + amp::direct3d::rcp(db)");
    add(t, K_EXACT, ref_reverse(UU), "(double)amp::direct3d::reversebits(u)");
    add(t, K_EXACT, 1 + 0.375, "(double)(amp::direct3d::saturate(b) + amp::direct3d::saturate(a))");
    add(t, K_EXACT, -1 + 10, "(double)(amp::direct3d::sign(n) + 10 * amp::direct3d::sign(m))");
    {
        float st = (A - 0.0f) / (1.0f - 0.0f);
        add(t, K_EXACT, st * st * (3.0f - 2.0f * st), "(double)amp::direct3d::smoothstep(0.0f, 1.0f, a)");
    }
    add(t, K_EXACT, 1 + 10 * 0, "(double)(amp::direct3d::step(a, b) + 10 * amp::direct3d::step(b, a))");
}

static const char names_prefix[] =
    "template <class V> __device__ double vsum(const V &v)\n"
    "{\n"
    "    double s = (double)v.x;\n"
    "    if constexpr (sizeof(V) >= 2 * sizeof(v.x)) s += (double)v.y;\n"
    "    if constexpr (sizeof(V) >= 3 * sizeof(v.x)) s += (double)v.z;\n"
    "    if constexpr (sizeof(V) >= 4 * sizeof(v.x)) s += (double)v.w;\n"
    "    return s;\n"
    "}\n"
    "__device__ float dev_twice(float x) { return 2 * x; }\n"
    "__host__ __device__ __forceinline__ float hd_once(float x) { return x; }\n"
    "__device__ unsigned geom_sum(uint3 g, uint3 b) { return g.x + g.y + g.z + b.x + b.y + b.z; }\n"
    "template <class T> __device__ T cas_probe(T *p, T expect, T val)\n"
    "{\n"
    "    T e = expect;\n"
    "    bool ok = amp::atomic_compare_exchange(p, &e, val);\n"
    "    return ok ? T(1000 + e) : e;\n"
    "}\n"
    "AMP_KERNEL_MAX_BLOCK(all_names_simple, 512)\n"
    "AMP_KERNEL(all_names_simple, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = i[0] + 1; }\n"
    "AMP_TILED_KERNEL(all_names, amp::tiled_index<1> t, amp::array_view<const float, 1> fin,\n"
    "                 amp::array_view<const double, 1> din, amp::array_view<const int, 1> iin,\n"
    "                 amp::array<int, 1> arr, amp::array_view<int, 1> im, amp::array_view<unsigned, 1> um,\n"
    "                 amp::array_view<unsigned long long, 1> lm, amp::array_view<float, 1> fm,\n"
    "                 amp::array_view<double, 1> dm, amp::array_view<double, 1> out)\n"
    "{\n"
    "    typedef amp::index<1> I;\n"
    "    tile_static float ts[4];\n"
    "    __shared__ float sh[4];\n"
    "    const float a = fin[I(0)], b = fin[I(1)], c = fin[I(2)];\n"
    "    const double da = din[I(0)], db = din[I(1)], dc = din[I(2)];\n"
    "    const int n = iin[I(0)], m = iin[I(1)];\n"
    "    const unsigned u = (unsigned)iin[I(2)];\n"
    "    const long long ll = (long long)din[I(3)];\n"
    "    const unsigned long long ull = (unsigned long long)(unsigned)iin[I(3)] << 32 | (unsigned)iin[I(4)];\n"
    "    int e1 = 0, e2 = 0, q1 = 0, q2 = 0;\n"
    "    float f1 = 0, f2 = 0;\n"
    "    double d1 = 0, d2 = 0, r1 = 0, r2 = 0, r3 = 0, r4 = 0;\n";

/* The generated source: prefix, one line per entry, closing brace. */
static char *names_source(const names *t)
{
    size_t cap = sizeof names_prefix + 64;
    for (size_t k = 0; k < t->n; ++k) cap += strlen(t->c[k].expr) + 48;
    char *s = test_xmalloc(cap);
    size_t len = (size_t)snprintf(s, cap, "%s", names_prefix);
    for (size_t k = 0; k < t->n; ++k)
        len += (size_t)snprintf(s + len, cap - len, "    out[I(%zu)] = %s;\n", k, t->c[k].expr);
    snprintf(s + len, cap - len, "}\n");
    return s;
}

static bool names_ok(double got, double ref, name_tol tol)
{
    switch (tol) {
    case K_EXACT: return got == ref;
    case K_NAN: return isnan(got);
    case K_FLOAT: return fabs(got - ref) <= 2e-6 * fabs(ref) + 1e-37;
    case K_DOUBLE: return fabs(got - ref) <= 1e-14 * fabs(ref) + 1e-300;
    default: return fabs(got - ref) <= 1e-4 * fabs(ref) + 1e-5;
    }
}

/* Whether name occurs in src as a whole name: not preceded by an
 * identifier character or ':' (so `abs` is not found in `direct3d::abs`),
 * not followed by an identifier character or ':'. */
static bool has_name(const char *src, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = strstr(src, name); p; p = strstr(p + 1, name)) {
        char before = p == src ? ' ' : p[-1], after = p[len];
        bool ident_b = before == '_' || before == ':' || (before >= '0' && before <= '9') ||
                       ((before | 32) >= 'a' && (before | 32) <= 'z');
        bool ident_a = after == '_' || after == ':' || (after >= '0' && after <= '9') ||
                       ((after | 32) >= 'a' && (after | 32) <= 'z');
        if (!ident_b && !ident_a) return true;
    }
    return false;
}

ACCEL_TEST(device_lang, all_names_in_one_kernel)
{
    static names t;
    memset(&t, 0, sizeof t);
    build_names(&t);
    char *src = names_source(&t);
    amp_program *p = test_build(acc, src);

    const float fin[3] = {A, B, C};
    const double din[4] = {A, B, C, (double)LL};
    const int32_t iin[5] = {NN, MM, (int32_t)UU, (int32_t)(uint32_t)(ULL >> 32), (int32_t)(uint32_t)ULL};
    int32_t arr_init[3] = {5, 6, 7};
    double *out = test_xmalloc(t.n * sizeof *out);
    for (size_t k = 0; k < t.n; ++k) out[k] = -12345.678;
    amp_array *arr;
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    ASSERT_OK(amp_array_create(q, sizeof(int32_t), amp_extent_1d(3), arr_init, &arr));
    amp_array_view *v[10] = {
        test_view((void *)fin, sizeof(float), amp_extent_1d(3), AMP_READ_ONLY),
        test_view((void *)din, sizeof(double), amp_extent_1d(4), AMP_READ_ONLY),
        test_view((void *)iin, sizeof(int32_t), amp_extent_1d(5), AMP_READ_ONLY),
        test_view(t.im, sizeof(int32_t), amp_extent_1d(64), AMP_READ_WRITE),
        test_view(t.um, sizeof(uint32_t), amp_extent_1d(64), AMP_READ_WRITE),
        test_view(t.lm, sizeof(uint64_t), amp_extent_1d(64), AMP_READ_WRITE),
        test_view(t.fm, sizeof(float), amp_extent_1d(64), AMP_READ_WRITE),
        test_view(t.dm, sizeof(double), amp_extent_1d(64), AMP_READ_WRITE),
        test_view(out, sizeof(double), amp_extent_1d((int)t.n), AMP_WRITE_ONLY),
        NULL};
    amp_arg args[] = {amp_arg_view(v[0]), amp_arg_view(v[1]), amp_arg_view(v[2]), amp_arg_array(arr),
                      amp_arg_view(v[3]), amp_arg_view(v[4]), amp_arg_view(v[5]), amp_arg_view(v[6]),
                      amp_arg_view(v[7]), amp_arg_view(v[8])};
    amp_tiled_extent te;
    ASSERT_OK(amp_extent_tile_1d(amp_extent_1d(1), 1, &te));
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, te, test_kernel(p, "all_names"), args, 10));
    ASSERT_OK(amp_array_view_synchronize(v[8]));
    /* It ran the table's entries on this accelerator. */
    size_t bad = 0;
    for (size_t k = 0; k < t.n; ++k)
        if (!names_ok(out[k], t.c[k].ref, t.c[k].tol)) {
            cr_log_error("entry %zu, %s: got %.17g want %.17g", k, t.c[k].expr, out[k], t.c[k].ref);
            ++bad;
        }
    cr_assert_eq(bad, 0, "%zu of %zu entries of the all-names kernel are wrong (listed above)", bad, t.n);
    /* Each atomic stored what it should (a slot no atomic writes, and the
     * slots past the last one used, kept their values). */
    for (int i = 3; i < 8; ++i) ASSERT_OK(amp_array_view_synchronize(v[i]));
    for (int k = 0; k < 64; ++k) {
        cr_assert_eq(t.im[k], t.imw[k], "int slot %d holds %d, want %d", k, t.im[k], t.imw[k]);
        cr_assert_eq(t.um[k], t.umw[k], "unsigned slot %d holds %u, want %u", k, t.um[k], t.umw[k]);
        cr_assert_eq(t.lm[k], t.lmw[k], "uint64 slot %d holds %llu, want %llu", k, (unsigned long long)t.lm[k],
                     (unsigned long long)t.lmw[k]);
        cr_assert_eq(t.fm[k], t.fmw[k], "float slot %d holds %g, want %g", k, (double)t.fm[k], (double)t.fmw[k]);
        cr_assert_eq(t.dm[k], t.dmw[k], "double slot %d holds %g, want %g", k, t.dm[k], t.dmw[k]);
    }

    int32_t simple[4] = {0, 0, 0, 0};
    amp_array_view *vs = test_view(simple, sizeof(int32_t), amp_extent_1d(4), AMP_WRITE_ONLY);
    amp_arg sargs[] = {amp_arg_view(vs)};
    launch(test_kernel(p, "all_names_simple"), amp_extent_1d(4), sargs, 1);
    ASSERT_OK(amp_array_view_destroy(vs));
    for (int i = 0; i < 4; ++i) cr_assert_eq(simple[i], i + 1, "all_names_simple item %d", i);

    for (int i = 0; v[i]; ++i) ASSERT_OK(amp_array_view_destroy(v[i]));
    ASSERT_OK(amp_array_destroy(arr));
    ASSERT_OK(amp_program_destroy(p));
    for (size_t k = 0; k < t.n; ++k) free(t.c[k].expr);
    free(out);
    free(src);
}

/* Every name in the first column of docs/device-language.md's tables is used
 * by the all-names kernel (a name without a test is not documented, and the
 * list cannot drift from what is checked). */
Test(device_lang, documented_names_are_all_tested)
{
    char path[1024];
    const char *here = __FILE__, *slash = strrchr(here, '/');
    cr_assert(slash != NULL, "__FILE__ is not a path: %s", here);
    snprintf(path, sizeof path, "%.*s/../docs/device-language.md", (int)(slash - here), here);
    FILE *f = fopen(path, "r");
    cr_assert(f != NULL, "cannot open %s", path);
    static names t;
    memset(&t, 0, sizeof t);
    build_names(&t);
    char *src = names_source(&t);
    char line[8192];
    size_t checked = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "| `", 3) != 0) continue;
        char *end = strstr(line + 1, " |");
        if (!end) continue;
        *end = '\0';
        for (char *p = strchr(line, '`'); p; p = strchr(p + 1, '`')) {
            char *q = strchr(p + 1, '`');
            if (!q) break;
            *q = '\0';
            const char *name = p + 1;
            bool plain = name[0] != '\0';
            for (const char *c = name; *c; ++c)
                if (!(*c == '_' || *c == ':' || (*c >= '0' && *c <= '9') || ((*c | 32) >= 'a' && (*c | 32) <= 'z')))
                    plain = false;
            if (plain) {
                cr_expect(has_name(src, name), "docs/device-language.md lists %s, which the all-names kernel does not use",
                          name);
                ++checked;
            }
            p = q;
        }
    }
    fclose(f);
    cr_assert_gt(checked, 400, "only %zu names found in %s: its tables changed shape?", checked, path);
    /* HIPAMP_TEST_DUMP_NAMES=file writes the generated kernel, to compile it
     * for a GPU target with no GPU present (tools/check-device-compile.sh). */
    const char *dump = getenv("HIPAMP_TEST_DUMP_NAMES");
    if (dump) {
        FILE *o = fopen(dump, "w");
        cr_assert(o != NULL, "cannot write %s", dump);
        fputs(src, o);
        fclose(o);
    }
    for (size_t k = 0; k < t.n; ++k) free(t.c[k].expr);
    free(src);
}

/* using namespace amp::precise_math / fast_math / direct3d, then unqualified
 * calls: the kernel builds (no ambiguity with the global functions) and
 * computes the same functions. */
ACCEL_TEST(device_lang, using_the_math_namespaces)
{
    amp_program *p = build(acc);
    enum { N = 64 };
    float x[N];
    double o[N * 3];
    test_fill_random(x, N, 99u);
    for (int i = 0; i < N * 3; ++i) o[i] = -12345.0;
    amp_array_view *vx = test_view(x, sizeof(float), amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vo = test_view(o, sizeof(double), amp_extent_2d(N, 3), AMP_WRITE_ONLY);
    amp_arg args[] = {amp_arg_view(vx), amp_arg_view(vo)};
    launch(test_kernel(p, "using_namespaces"), amp_extent_1d(N), args, 2);
    ASSERT_OK(amp_array_view_synchronize(vo));
    for (int i = 0; i < N; ++i) {
        double a = x[i];
        double w0 = sin(a) + cos(a) + (double)ref_phi(a) + (double)ref_tanpi(a) + (double)ref_erfinv(0.5 * a) + fabs(a) +
                    fabs(a);
        double w1 = sin(a) + exp(a) + 1 / sqrt(1 + a * a) + pow(2.0, a);
        /* int + float is float arithmetic in the kernel: the same here. */
        float s = (float)abs(i - 3) + fminf(fmaxf(x[i], 0.0f), 1.0f);
        s = s + fmaf(x[i], x[i], 1.0f);
        s = s + (float)((i > 3) - (i < 3));
        double w2 = s;
        cr_assert(fabs(o[i * 3] - w0) <= 1e-5 * (1 + fabs(w0)), "precise_math, x=%.9g: got %.17g want %.17g", a,
                  o[i * 3], w0);
        cr_assert(fabs(o[i * 3 + 1] - w1) <= 1e-4 * (1 + fabs(w1)), "fast_math, x=%.9g: got %.17g want %.17g", a,
                  o[i * 3 + 1], w1);
        cr_assert_eq(o[i * 3 + 2], w2, "direct3d, x=%.9g: got %.17g want %.17g", a, o[i * 3 + 2], w2);
    }
    ASSERT_OK(amp_array_view_destroy(vx));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_program_destroy(p));
}
