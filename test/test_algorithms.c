/* test_algorithms.c — the algorithms (include/hipamp_algorithms.h) against host references on every accelerator: reduce and scan with every operator of every type at sizes around waves, tiles and chunks and large ones; transform-reduce; sort and sort_by_key (total float order with NaN and -0.0, stability, both orders, every value size); count_if/copy_if; fill/iota; sections, strided and rank-3 views, arrays; results on the device (async); user-defined reductions and their compile errors; the refusals; coherence without synchronize; two threads on two queues; every CPU kernel on the loop path. */
#include "stderr_capture.h"
#include "support.h"

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------- helpers */

static bool is_float(amp_type t) { return t == AMP_TYPE_FLOAT32 || t == AMP_TYPE_FLOAT64; }
/* The operators the algorithms take (amp_op's associative members), the
 * bitwise ones last: a floating-point type takes the first nops(t). */
static const amp_op ops[] = {AMP_OP_SUM, AMP_OP_PRODUCT, AMP_OP_MIN, AMP_OP_MAX, AMP_OP_AND, AMP_OP_OR, AMP_OP_XOR};
static int nops(amp_type t) { return is_float(t) ? 4 : 7; }

static bool is_emulated(amp_accelerator *acc)
{
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    return info.is_emulated;
}

static amp_accelerator_view *default_view(amp_accelerator *acc)
{
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    return q;
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Element i of a buffer of type t, as the widest type of its kind. */
typedef union value {
    int64_t i;
    uint64_t u;
    double f;
} value;

static value get(amp_type t, const void *p, size_t i)
{
    value v;
    switch (t) {
    case AMP_TYPE_INT32: v.i = ((const int32_t *)p)[i]; break;
    case AMP_TYPE_UINT32: v.u = ((const uint32_t *)p)[i]; break;
    case AMP_TYPE_INT64: v.i = ((const int64_t *)p)[i]; break;
    case AMP_TYPE_UINT64: v.u = ((const uint64_t *)p)[i]; break;
    case AMP_TYPE_FLOAT32: v.f = ((const float *)p)[i]; break;
    default: v.f = ((const double *)p)[i]; break;
    }
    return v;
}

static void put(amp_type t, void *p, size_t i, value v)
{
    switch (t) {
    case AMP_TYPE_INT32: ((int32_t *)p)[i] = (int32_t)v.i; break;
    case AMP_TYPE_UINT32: ((uint32_t *)p)[i] = (uint32_t)v.u; break;
    case AMP_TYPE_INT64: ((int64_t *)p)[i] = v.i; break;
    case AMP_TYPE_UINT64: ((uint64_t *)p)[i] = v.u; break;
    case AMP_TYPE_FLOAT32: ((float *)p)[i] = (float)v.f; break;
    default: ((double *)p)[i] = v.f; break;
    }
}

/* The operators as hipamp_algorithms.h defines them, in the type's width
 * (integers wrap; float min/max: NaN wins, -0.0 < +0.0). */
static value combine(amp_type t, amp_op op, value a, value b)
{
    value r;
    if (is_float(t)) {
        double x = a.f, y = b.f;
        switch (op) {
        case AMP_OP_SUM: r.f = x + y; break;
        case AMP_OP_PRODUCT: r.f = x * y; break;
        case AMP_OP_MIN:
            r.f = isnan(x) ? x : isnan(y) ? y : (x == y ? (signbit(x) ? x : y) : (y < x ? y : x));
            break;
        default: r.f = isnan(x) ? x : isnan(y) ? y : (x == y ? (signbit(x) ? y : x) : (y > x ? y : x)); break;
        }
        if (t == AMP_TYPE_FLOAT32) r.f = (float)r.f;
        return r;
    }
    bool sgn = t == AMP_TYPE_INT32 || t == AMP_TYPE_INT64;
    switch (op) {
    case AMP_OP_SUM: r.u = a.u + b.u; break;
    case AMP_OP_PRODUCT: r.u = a.u * b.u; break;
    case AMP_OP_MIN: r = sgn ? (b.i < a.i ? b : a) : (b.u < a.u ? b : a); break;
    case AMP_OP_MAX: r = sgn ? (b.i > a.i ? b : a) : (b.u > a.u ? b : a); break;
    case AMP_OP_AND: r.u = a.u & b.u; break;
    case AMP_OP_OR: r.u = a.u | b.u; break;
    default: r.u = a.u ^ b.u; break;
    }
    /* Back to the type's width (and sign). */
    if (t == AMP_TYPE_INT32) r.i = (int32_t)(uint32_t)r.u;
    if (t == AMP_TYPE_UINT32) r.u = (uint32_t)r.u;
    return r;
}

static value identity(amp_type t, amp_op op)
{
    value v;
    v.u = 0;
    bool f = is_float(t);
    switch (op) {
    case AMP_OP_SUM: if (f) v.f = 0; break;
    case AMP_OP_PRODUCT: if (f) v.f = 1; else v.u = 1; break;
    case AMP_OP_MIN:
        if (f) v.f = INFINITY;
        else if (t == AMP_TYPE_INT32) v.i = INT32_MAX;
        else if (t == AMP_TYPE_UINT32) v.u = UINT32_MAX;
        else if (t == AMP_TYPE_INT64) v.i = INT64_MAX;
        else v.u = UINT64_MAX;
        break;
    case AMP_OP_MAX:
        if (f) v.f = -INFINITY;
        else if (t == AMP_TYPE_INT32) v.i = INT32_MIN;
        else if (t == AMP_TYPE_INT64) v.i = INT64_MIN;
        break;
    case AMP_OP_AND: v.u = t == AMP_TYPE_INT32 ? (uint64_t)(int64_t)-1 : t == AMP_TYPE_UINT32 ? UINT32_MAX : UINT64_MAX; break;
    default: break;
    }
    return v;
}

static bool same_value(amp_type t, value a, value b)
{
    if (is_float(t)) return (isnan(a.f) && isnan(b.f)) || (a.f == b.f && signbit(a.f) == signbit(b.f));
    if (t == AMP_TYPE_INT32) return (int32_t)a.i == (int32_t)b.i;
    if (t == AMP_TYPE_UINT32) return (uint32_t)a.u == (uint32_t)b.u;
    return a.u == b.u;
}

static const char *show(amp_type t, value v, char *buf)
{
    if (is_float(t)) snprintf(buf, 64, "%.17g", v.f);
    else if (t == AMP_TYPE_INT32 || t == AMP_TYPE_INT64) snprintf(buf, 64, "%lld", (long long)v.i);
    else snprintf(buf, 64, "%llu", (unsigned long long)v.u);
    return buf;
}

/* Data for op on type t whose every combination is exact: integers of the
 * full range (they wrap exactly); for floating point, small integers
 * (sums), signs and powers of two (products), and anything, -0.0 included,
 * for min and max. */
static void fill_data(amp_type t, amp_op op, void *p, size_t n, uint64_t seed)
{
    uint64_t s = 0x9e3779b97f4a7c15ull ^ (seed * 0x100000001b3ull) ^ ((uint64_t)op << 40);
    for (size_t i = 0; i < n; ++i) {
        uint64_t r = rng_next(&s);
        value v;
        if (!is_float(t)) {
            v.u = r;
            if (t == AMP_TYPE_INT32) v.i = (int32_t)(uint32_t)r;
            if (t == AMP_TYPE_UINT32) v.u = (uint32_t)r;
            if (op == AMP_OP_AND && (r >> 60) != 0) v.u |= 0xfffffffffffff0ffull; /* keep some bits standing */
            if (op == AMP_OP_AND && t == AMP_TYPE_INT32) v.i = (int32_t)(uint32_t)v.u;
            if (op == AMP_OP_AND && t == AMP_TYPE_UINT32) v.u = (uint32_t)v.u;
        } else if (op == AMP_OP_SUM) {
            v.f = (double)((int)(r % 17) - 8);
        } else if (op == AMP_OP_PRODUCT) {
            /* Few powers of two, so that no partial product in any order
             * leaves float's range. */
            int k = (int)(r % 4096);
            v.f = k == 0 ? 2.0 : k == 1 ? 0.5 : (k & 1) ? -1.0 : 1.0;
        } else {
            int k = (int)(r % 1000);
            v.f = k == 0 ? -0.0 : k == 1 ? 0.0 : ((double)(int64_t)(r >> 11) / 9007199254740992.0 - 0.5) * 1e6;
        }
        put(t, p, i, v);
    }
}

static size_t elem_of(amp_type t) { return amp_type_size(t); }

/* prefix_int32 ... prefix_float64 (each on every accelerator): check(acc, type). */
#define EVERY_TYPE(prefix, check)                                                  \
    ACCEL_TEST(algorithms, prefix##_int32) { check(acc, AMP_TYPE_INT32); }         \
    ACCEL_TEST(algorithms, prefix##_uint32) { check(acc, AMP_TYPE_UINT32); }       \
    ACCEL_TEST(algorithms, prefix##_int64) { check(acc, AMP_TYPE_INT64); }         \
    ACCEL_TEST(algorithms, prefix##_uint64) { check(acc, AMP_TYPE_UINT64); }       \
    ACCEL_TEST(algorithms, prefix##_float32) { check(acc, AMP_TYPE_FLOAT32); }     \
    ACCEL_TEST(algorithms, prefix##_float64) { check(acc, AMP_TYPE_FLOAT64); }

/* Sizes around wave sizes (32, 64), GPU tiles (128 for reduce and scan,
 * 256 for sorts), GPU scan and sort chunks (4096 = 128 x 32 = 256 x 16),
 * CPU scan chunks (16384) and powers of two. */
static const size_t sizes[] = {1,    2,    31,   32,    33,    63,    64,    65,    127,   128,   129,  255,
                               256,  257,  4095, 4096,  4097,  16383, 16384, 16385, 65535, 65537, 100003};

/* -------------------------------------------------------------- reduce */

static void check_reduce_type(amp_accelerator *acc, amp_type t)
{
    amp_accelerator_view *q = default_view(acc);
    size_t nmax = 1u << 20, esz = elem_of(t);
    void *data = test_xmalloc(nmax * esz);
    char b1[64], b2[64];
    for (int oi = 0; oi < nops(t); ++oi) {
        amp_op op = ops[oi];
        fill_data(t, op, data, nmax, (uint64_t)t);
        amp_array_view *v = test_view(data, esz, amp_extent_1d((int)nmax), AMP_READ_ONLY);
        for (size_t si = 0; si <= sizeof sizes / sizeof sizes[0]; ++si) {
            size_t n = si < sizeof sizes / sizeof sizes[0] ? sizes[si] : nmax;
            amp_array_view *sec = NULL;
            ASSERT_OK(amp_array_view_section(v, amp_index_1d(0), amp_extent_1d((int)n), &sec));
            value want = identity(t, op);
            for (size_t i = 0; i < n; ++i) want = combine(t, op, want, get(t, data, i));
            unsigned char res[8];
            memset(res, 0xab, sizeof res);
            ASSERT_OK(amp_reduce(q, amp_arg_view(sec), t, op, res));
            value got = get(t, res, 0);
            cr_assert(same_value(t, got, want), "reduce %s %s of %zu elements: got %s, want %s", amp_type_name(t),
                      amp_op_name(op), n, show(t, got, b1), show(t, want, b2));
            ASSERT_OK(amp_array_view_destroy(sec));
        }
        ASSERT_OK(amp_array_view_destroy(v));
    }
    free(data);
}

EVERY_TYPE(reduce, check_reduce_type)

/* A NaN anywhere makes min, max and sum NaN; -0.0 is below +0.0 wherever
 * it stands. */
ACCEL_TEST(algorithms, reduce_nan_and_signed_zero)
{
    amp_accelerator_view *q = default_view(acc);
    float x[1000];
    for (int i = 0; i < 1000; ++i) x[i] = (float)(i % 13) - 6.0f;
    x[777] = NAN;
    amp_array_view *v = test_view(x, 4, amp_extent_1d(1000), AMP_READ_WRITE);
    float r = 0;
    ASSERT_OK(amp_reduce(q, amp_arg_view(v), AMP_TYPE_FLOAT32, AMP_OP_MIN, &r));
    cr_assert(isnan(r), "min with a NaN: %g", (double)r);
    ASSERT_OK(amp_reduce(q, amp_arg_view(v), AMP_TYPE_FLOAT32, AMP_OP_MAX, &r));
    cr_assert(isnan(r), "max with a NaN: %g", (double)r);
    ASSERT_OK(amp_reduce(q, amp_arg_view(v), AMP_TYPE_FLOAT32, AMP_OP_SUM, &r));
    cr_assert(isnan(r), "sum with a NaN: %g", (double)r);
    ASSERT_OK(amp_array_view_destroy(v));
    /* Zeros of both signs, in every position. */
    for (int pos = 0; pos < 2; ++pos) {
        double z[300];
        for (int i = 0; i < 300; ++i) z[i] = 0.0;
        z[pos ? 299 : 0] = -0.0;
        amp_array_view *w = test_view(z, 8, amp_extent_1d(300), AMP_READ_ONLY);
        double m = 1;
        ASSERT_OK(amp_reduce(q, amp_arg_view(w), AMP_TYPE_FLOAT64, AMP_OP_MIN, &m));
        cr_assert(m == 0 && signbit(m), "min of zeros with one -0.0 at %d: %g (sign %d)", pos ? 299 : 0, m,
                  signbit(m) != 0);
        ASSERT_OK(amp_reduce(q, amp_arg_view(w), AMP_TYPE_FLOAT64, AMP_OP_MAX, &m));
        cr_assert(m == 0 && !signbit(m), "max of zeros: -0.0 came out");
        ASSERT_OK(amp_array_view_destroy(w));
    }
    /* A sum over only -0.0 starts from the identity, +0.0, as the header
     * says: the reduction and every element of both scans are +0.0 (the
     * header also said an inclusive scan's out[0] was in[0], -0.0). */
    double nz[300], out[300];
    for (int i = 0; i < 300; ++i) nz[i] = -0.0, out[i] = 1.0;
    amp_array_view *vn = test_view(nz, 8, amp_extent_1d(300), AMP_READ_ONLY);
    double sum = 1;
    ASSERT_OK(amp_reduce(q, amp_arg_view(vn), AMP_TYPE_FLOAT64, AMP_OP_SUM, &sum));
    cr_assert(sum == 0 && !signbit(sum), "sum of -0.0s: %g (sign %d)", sum, signbit(sum) != 0);
    for (int kind = 0; kind < 2; ++kind) {
        amp_array_view *vo = test_view(out, 8, amp_extent_1d(300), AMP_WRITE_ONLY);
        ASSERT_OK(amp_scan(q, amp_arg_view(vn), amp_arg_view(vo), AMP_TYPE_FLOAT64, AMP_OP_SUM, kind));
        ASSERT_OK(amp_array_view_destroy(vo));
        for (int i = 0; i < 300; ++i)
            cr_assert(out[i] == 0 && !signbit(out[i]), "%s scan of -0.0s: out[%d] = %g (sign %d)",
                      kind ? "exclusive" : "inclusive", i, out[i], signbit(out[i]) != 0);
    }
    ASSERT_OK(amp_array_view_destroy(vn));
}

/* Session 105's: a sum from an init of -0.0 gave +0.0 where the header's
 * init op x[0] op ... op x[n-1] is -0.0: the elements were folded from
 * +0.0, the identity, and init put in front of that (-0.0 + +0.0). Now a
 * sum folds from -0.0, which changes no sign, and puts init (or, without
 * one, +0.0) in front: of no elements or only -0.0s, every result is
 * init, float32 widened to float64 included, on the host and the device. */
ACCEL_TEST(algorithms, a_sum_from_an_init_of_negative_zero_keeps_its_sign)
{
    amp_accelerator_view *q = default_view(acc);
    enum { N = 3000 }; /* several tiles and chunks */
    double nz[N], out[N], init = -0.0;
    float nzf[N], initf = -0.0f;
    for (int i = 0; i < N; ++i) nz[i] = -0.0, nzf[i] = -0.0f;
    amp_alg_options o = {&init, 0}, of = {&initf, 0}, ow = {&init, AMP_TYPE_FLOAT64};
    static const int sizes[] = {0, 1, 300, N};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
        int n = sizes[k];
        amp_array_view *vn = test_view(nz, 8, amp_extent_1d(n ? n : 1), AMP_READ_ONLY), *v = vn;
        amp_array_view *vf = test_view(nzf, 4, amp_extent_1d(n ? n : 1), AMP_READ_ONLY), *w = vf;
        if (!n) { /* a view of no elements */
            ASSERT_OK(amp_array_view_section(vn, amp_index_1d(0), amp_extent_1d(0), &v));
            ASSERT_OK(amp_array_view_section(vf, amp_index_1d(0), amp_extent_1d(0), &w));
        }
        double r = 1;
        float rf = 1;
        ASSERT_OK(amp_reduce_with(q, amp_arg_view(v), AMP_TYPE_FLOAT64, AMP_OP_SUM, &o, &r));
        cr_assert(r == 0 && signbit(r), "float64 sum of %d -0.0s from -0.0: %g (sign %d)", n, r, signbit(r) != 0);
        ASSERT_OK(amp_reduce_with(q, amp_arg_view(w), AMP_TYPE_FLOAT32, AMP_OP_SUM, &of, &rf));
        cr_assert(rf == 0 && signbit(rf), "float32 sum of %d -0.0s from -0.0: %g", n, (double)rf);
        r = 1;
        ASSERT_OK(amp_reduce_with(q, amp_arg_view(w), AMP_TYPE_FLOAT32, AMP_OP_SUM, &ow, &r));
        cr_assert(r == 0 && signbit(r), "float32 sum widened to float64 of %d -0.0s from -0.0: %g", n, r);
        /* on the device */
        double dev = 1;
        amp_array_view *vd = test_view(&dev, 8, amp_extent_1d(1), AMP_READ_WRITE);
        ASSERT_OK(amp_reduce_with_async(q, amp_arg_view(v), AMP_TYPE_FLOAT64, AMP_OP_SUM, &o, amp_arg_view(vd), NULL));
        ASSERT_OK(amp_array_view_synchronize(vd));
        ASSERT_OK(amp_array_view_destroy(vd));
        cr_assert(dev == 0 && signbit(dev), "float64 sum on the device of %d -0.0s from -0.0: %g", n, dev);
        /* without init: +0.0, as before */
        ASSERT_OK(amp_reduce(q, amp_arg_view(v), AMP_TYPE_FLOAT64, AMP_OP_SUM, &r));
        cr_assert(r == 0 && !signbit(r), "float64 sum of %d -0.0s: %g (sign %d)", n, r, signbit(r) != 0);
        for (int kind = 0; n && kind < 2; ++kind) {
            for (int i = 0; i < N; ++i) out[i] = 1.0;
            amp_array_view *vo = test_view(out, 8, amp_extent_1d(n), AMP_WRITE_ONLY);
            ASSERT_OK(amp_scan_with(q, amp_arg_view(v), amp_arg_view(vo), AMP_TYPE_FLOAT64, AMP_OP_SUM, kind, &o));
            ASSERT_OK(amp_array_view_destroy(vo));
            for (int i = 0; i < n; ++i)
                cr_assert(out[i] == 0 && signbit(out[i]), "%s scan of %d -0.0s from -0.0: out[%d] = %g (sign %d)",
                          kind ? "exclusive" : "inclusive", n, i, out[i], signbit(out[i]) != 0);
        }
        if (v != vn) ASSERT_OK(amp_array_view_destroy(v));
        if (w != vf) ASSERT_OK(amp_array_view_destroy(w));
        ASSERT_OK(amp_array_view_destroy(vn));
        ASSERT_OK(amp_array_view_destroy(vf));
    }
    /* -0.0 elements after +0.0 ones, from an init of -0.0: +0.0 (the sum's sign is the IEEE one). */
    nz[N / 2] = 0.0;
    amp_array_view *vm = test_view(nz, 8, amp_extent_1d(N), AMP_READ_ONLY);
    double r = 1;
    ASSERT_OK(amp_reduce_with(q, amp_arg_view(vm), AMP_TYPE_FLOAT64, AMP_OP_SUM, &o, &r));
    cr_assert(r == 0 && !signbit(r), "a sum with one +0.0 in it: %g (sign %d)", r, signbit(r) != 0);
    ASSERT_OK(amp_array_view_destroy(vm));
}

/* A few million elements, and float sums of values that do not add exactly
 * (within a relative bound of the pairwise sum). */
ACCEL_TEST(algorithms, reduce_large)
{
    amp_accelerator_view *q = default_view(acc);
    int n = is_emulated(acc) ? 3000017 : 50000017;
    float *x = test_xmalloc((size_t)n * 4);
    test_fill_random(x, (size_t)n, 7);
    double want = 0, want_abs = 0;
    for (int i = 0; i < n; ++i) {
        want += x[i];
        want_abs += fabs(x[i]);
    }
    amp_array_view *v = test_view(x, 4, amp_extent_1d(n), AMP_READ_ONLY);
    float s = 0;
    ASSERT_OK(amp_reduce(q, amp_arg_view(v), AMP_TYPE_FLOAT32, AMP_OP_SUM, &s));
    cr_assert(fabs(s - want) <= 1e-5 * want_abs, "sum of %d floats: %.9g, want %.9g (sum of |x| %.9g)", n, (double)s,
              want, want_abs);
    int32_t *k = test_xmalloc((size_t)n * 4);
    uint32_t acc_x = 0;
    for (int i = 0; i < n; ++i) {
        k[i] = (int32_t)(i * 2654435761u);
        acc_x ^= (uint32_t)k[i];
    }
    amp_array_view *kv = test_view(k, 4, amp_extent_1d(n), AMP_READ_ONLY);
    int32_t r = 0;
    ASSERT_OK(amp_reduce(q, amp_arg_view(kv), AMP_TYPE_INT32, AMP_OP_XOR, &r));
    cr_assert_eq((uint32_t)r, acc_x);
    ASSERT_OK(amp_array_view_destroy(kv));
    ASSERT_OK(amp_array_view_destroy(v));
    free(k);
    free(x);
}

/* float32 products of values within 1e-3 of 1 (issue 38 item 8): a tree of
 * float32 products keeps its partial products near 1, where rounding is
 * biased down, and drifted thousands of ulps where a serial float loop
 * drifts tens (1,000,003 values: 7,500 ulps on the H200, 300 for the
 * reduction and 1,200 for the scans on the CPU accelerator). Accumulated in
 * float64 and rounded once, every result is within an ulp of the exact
 * product of the float32 inputs, and so no farther than the serial loop. */
ACCEL_TEST(algorithms, float32_products_as_accurate_as_a_serial_loop)
{
    amp_accelerator_view *q = default_view(acc);
    enum { N = 1000003 };
    float *x = test_xmalloc((size_t)N * 4), *y = test_xmalloc((size_t)N * 4);
    uint64_t s = 0x853c49e6748fea9bull;
    for (int i = 0; i < N; ++i) x[i] = (float)(1.0 + ((double)(rng_next(&s) >> 11) / 9007199254740992.0 * 2 - 1) * 1e-3);
    const double eps = 1.1920928955078125e-07; /* FLT_EPSILON */
    long double exact = 1;
    float serial = 1;
    for (int i = 0; i < N; ++i) {
        exact *= x[i];
        serial *= x[i];
    }
    double serial_err = (double)fabsl((serial - exact) / exact) / eps;
    amp_array_view *v = test_view(x, 4, amp_extent_1d(N), AMP_READ_ONLY);
    float r = 0;
    ASSERT_OK(amp_reduce(q, amp_arg_view(v), AMP_TYPE_FLOAT32, AMP_OP_PRODUCT, &r));
    double err = (double)fabsl((r - exact) / exact) / eps;
    cr_assert(err <= 1.0 && err <= serial_err, "product of %d float32 near 1: %.9g, exact %.9Lg: %.1f ulps off (a serial "
              "float loop: %.1f)", N, (double)r, exact, err, serial_err);
    /* The result on the device, and a transform-reduce (|x|). */
    amp_array *res = NULL;
    ASSERT_OK(amp_array_create(q, 4, amp_extent_1d(1), NULL, &res));
    ASSERT_OK(amp_reduce_async(q, amp_arg_view(v), AMP_TYPE_FLOAT32, AMP_OP_PRODUCT, amp_arg_array(res), NULL));
    float ra = 0;
    ASSERT_OK(amp_array_copy_to_host(res, &ra));
    cr_assert_eq(ra, r, "product on the device %.9g, to the host %.9g", (double)ra, (double)r);
    ASSERT_OK(amp_transform_reduce(q, amp_arg_view(v), (amp_arg){0}, AMP_TYPE_FLOAT32, AMP_MAP_ABS, AMP_OP_PRODUCT, &ra));
    cr_assert_eq(ra, r, "product of |x| %.9g, of x %.9g", (double)ra, (double)r);
    ASSERT_OK(amp_array_destroy(res));
    /* Both scans: every element within an ulp of the exact prefix. */
    for (int kind = 0; kind < 2; ++kind) {
        amp_array_view *w = test_view(y, 4, amp_extent_1d(N), AMP_WRITE_ONLY);
        ASSERT_OK(amp_scan(q, amp_arg_view(v), amp_arg_view(w), AMP_TYPE_FLOAT32, AMP_OP_PRODUCT, kind));
        ASSERT_OK(amp_array_view_destroy(w));
        long double run = 1;
        float srun = 1;
        double worst = 0, serial_worst = 0;
        int at = 0;
        for (int i = 0; i < N; ++i) {
            long double want = kind == AMP_SCAN_EXCLUSIVE ? run : run * x[i];
            double e = (double)fabsl((y[i] - want) / want) / eps;
            if (e > worst) {
                worst = e;
                at = i;
            }
            run *= x[i];
            srun *= x[i];
            double se = (double)fabsl((srun - run) / run) / eps;
            if (se > serial_worst) serial_worst = se;
        }
        cr_assert(worst <= 1.0 && worst <= serial_worst, "%s product scan of %d float32 near 1: element %d is %.1f ulps "
                  "off (a serial float loop: at most %.1f)", kind ? "exclusive" : "inclusive", N, at, worst, serial_worst);
    }
    ASSERT_OK(amp_array_view_destroy(v));
    free(x);
    free(y);
}

/* ------------------------------------------------------ transform-reduce */

ACCEL_TEST(algorithms, transform_reduce_maps)
{
    amp_accelerator_view *q = default_view(acc);
    enum { N = 50000 };
    static double x[N], y[N];
    static int32_t xi[N], yi[N];
    for (int i = 0; i < N; ++i) {
        x[i] = (double)(i % 23) - 11;
        y[i] = (double)(i % 7) - 3;
        xi[i] = (int32_t)(i * 2654435761u);
        yi[i] = (int32_t)(i * 40503u + 7);
    }
    amp_array_view *vx = test_view(x, 8, amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vy = test_view(y, 8, amp_extent_1d(N), AMP_READ_ONLY);
    double dot = 0, sq = 0, ab = 0, sd = 0, amax = 0;
    for (int i = 0; i < N; ++i) {
        dot += x[i] * y[i];
        sq += x[i] * x[i];
        ab += fabs(x[i]);
        sd += (x[i] - y[i]) * (x[i] - y[i]);
        if (fabs(x[i]) > amax) amax = fabs(x[i]);
    }
    double r = 0;
    ASSERT_OK(amp_transform_reduce(q, amp_arg_view(vx), amp_arg_view(vy), AMP_TYPE_FLOAT64, AMP_MAP_PRODUCT, AMP_OP_SUM, &r));
    cr_assert_eq(r, dot, "dot: %g want %g", r, dot);
    ASSERT_OK(amp_transform_reduce(q, amp_arg_view(vx), (amp_arg){0}, AMP_TYPE_FLOAT64, AMP_MAP_SQUARE, AMP_OP_SUM, &r));
    cr_assert_eq(r, sq, "norm^2: %g want %g", r, sq);
    ASSERT_OK(amp_transform_reduce(q, amp_arg_view(vx), (amp_arg){0}, AMP_TYPE_FLOAT64, AMP_MAP_ABS, AMP_OP_SUM, &r));
    cr_assert_eq(r, ab, "asum: %g want %g", r, ab);
    ASSERT_OK(amp_transform_reduce(q, amp_arg_view(vx), (amp_arg){0}, AMP_TYPE_FLOAT64, AMP_MAP_ABS, AMP_OP_MAX, &r));
    cr_assert_eq(r, amax, "amax: %g want %g", r, amax);
    ASSERT_OK(amp_transform_reduce(q, amp_arg_view(vx), amp_arg_view(vy), AMP_TYPE_FLOAT64, AMP_MAP_SQUARED_DIFFERENCE,
                                   AMP_OP_SUM, &r));
    cr_assert_eq(r, sd, "squared distance: %g want %g", r, sd);
    /* Integers wrap: the dot of int32 in 32 bits. */
    amp_array_view *ix = test_view(xi, 4, amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *iy = test_view(yi, 4, amp_extent_1d(N), AMP_READ_ONLY);
    uint32_t want = 0;
    for (int i = 0; i < N; ++i) want += (uint32_t)xi[i] * (uint32_t)yi[i];
    int32_t ri = 0;
    ASSERT_OK(amp_transform_reduce(q, amp_arg_view(ix), amp_arg_view(iy), AMP_TYPE_INT32, AMP_MAP_PRODUCT, AMP_OP_SUM, &ri));
    cr_assert_eq((uint32_t)ri, want);
    /* Sizes must agree. */
    amp_array_view *short_y = NULL;
    ASSERT_OK(amp_array_view_section(vy, amp_index_1d(0), amp_extent_1d(N - 1), &short_y));
    ASSERT_STATUS(amp_transform_reduce(q, amp_arg_view(vx), amp_arg_view(short_y), AMP_TYPE_FLOAT64, AMP_MAP_PRODUCT,
                                       AMP_OP_SUM, &r),
                  AMP_ERROR_INVALID_EXTENT);
    ASSERT_OK(amp_array_view_destroy(short_y));
    ASSERT_OK(amp_array_view_destroy(ix));
    ASSERT_OK(amp_array_view_destroy(iy));
    ASSERT_OK(amp_array_view_destroy(vx));
    ASSERT_OK(amp_array_view_destroy(vy));
}

/* ---------------------------------------------------------------- scan */

static void check_scan_type(amp_accelerator *acc, amp_type t)
{
    amp_accelerator_view *q = default_view(acc);
    size_t nmax = 300007, esz = elem_of(t);
    void *in = test_xmalloc(nmax * esz), *out = test_xmalloc(nmax * esz), *copy = test_xmalloc(nmax * esz);
    char b1[64], b2[64];
    for (int oi = 0; oi < nops(t); ++oi)
        for (int kind = 0; kind < 2; ++kind)
            for (size_t si = 0; si <= sizeof sizes / sizeof sizes[0]; ++si) {
                size_t n = si < sizeof sizes / sizeof sizes[0] ? sizes[si] : nmax;
                amp_op op = ops[oi];
                fill_data(t, op, in, n, n);
                memset(out, 0x5a, n * esz);
                amp_array_view *vi = test_view(in, esz, amp_extent_1d((int)n), AMP_READ_ONLY);
                amp_array_view *vo = test_view(out, esz, amp_extent_1d((int)n), AMP_WRITE_ONLY);
                ASSERT_OK(amp_scan(q, amp_arg_view(vi), amp_arg_view(vo), t, op, kind));
                ASSERT_OK(amp_array_view_destroy(vo));
                value run = identity(t, op);
                for (size_t i = 0; i < n; ++i) {
                    value x = get(t, in, i), nxt = combine(t, op, run, x);
                    value want = kind == AMP_SCAN_EXCLUSIVE ? run : nxt, got = get(t, out, i);
                    if (!same_value(t, got, want))
                        cr_assert_fail("%s scan %s %s of %zu elements: element %zu is %s, want %s",
                                       kind ? "exclusive" : "inclusive", amp_type_name(t), amp_op_name(op), n, i,
                                       show(t, got, b1), show(t, want, b2));
                    run = nxt;
                }
                ASSERT_OK(amp_array_view_destroy(vi));
                /* In place, for a few sizes. */
                if (si % 5 == 0) {
                    memcpy(copy, in, n * esz);
                    amp_array_view *vc = test_view(copy, esz, amp_extent_1d((int)n), AMP_READ_WRITE);
                    ASSERT_OK(amp_scan(q, amp_arg_view(vc), amp_arg_view(vc), t, op, kind));
                    ASSERT_OK(amp_array_view_destroy(vc));
                    cr_assert(!memcmp(copy, out, n * esz), "in-place %s scan %s %s of %zu differs from out of place",
                              kind ? "exclusive" : "inclusive", amp_type_name(t), amp_op_name(op), n);
                }
            }
    free(in);
    free(out);
    free(copy);
}

EVERY_TYPE(scan, check_scan_type)

ACCEL_TEST(algorithms, scan_large)
{
    amp_accelerator_view *q = default_view(acc);
    int n = is_emulated(acc) ? 4000037 : 60000037;
    int32_t *x = test_xmalloc((size_t)n * 4), *y = test_xmalloc((size_t)n * 4);
    for (int i = 0; i < n; ++i) x[i] = (int32_t)(i * 2654435761u) >> 8;
    amp_array_view *vx = test_view(x, 4, amp_extent_1d(n), AMP_READ_ONLY);
    amp_array_view *vy = test_view(y, 4, amp_extent_1d(n), AMP_WRITE_ONLY);
    ASSERT_OK(amp_scan(q, amp_arg_view(vx), amp_arg_view(vy), AMP_TYPE_INT32, AMP_OP_SUM, AMP_SCAN_EXCLUSIVE));
    ASSERT_OK(amp_array_view_synchronize(vy));
    uint32_t run = 0;
    for (int i = 0; i < n; ++i) {
        if ((uint32_t)y[i] != run) cr_assert_fail("exclusive scan of %d: element %d is %d, want %d", n, i, y[i], (int32_t)run);
        run += (uint32_t)x[i];
    }
    ASSERT_OK(amp_array_view_destroy(vx));
    ASSERT_OK(amp_array_view_destroy(vy));
    free(x);
    free(y);
}

/* ---------------------------------------------------------------- sort */

/* The documented order as bits: integers by value, floats -inf..-0.0,
 * +0.0..+inf, then NaNs; descending reverses all but the NaNs. */
static uint64_t order_bits(amp_type t, value v, amp_order o)
{
    uint64_t b;
    switch (t) {
    case AMP_TYPE_INT32: b = (uint32_t)v.i ^ 0x80000000u; break;
    case AMP_TYPE_UINT32: b = (uint32_t)v.u; break;
    case AMP_TYPE_INT64: b = v.u ^ 0x8000000000000000ull; break;
    case AMP_TYPE_UINT64: b = v.u; break;
    default: {
        if (isnan(v.f)) return UINT64_MAX;
        double d = v.f;
        uint64_t u;
        memcpy(&u, &d, 8);
        b = (u >> 63) ? ~u : (u | 0x8000000000000000ull);
        if (b == UINT64_MAX) b--; /* never the NaN slot */
        break;
    }
    }
    return o == AMP_DESCENDING ? (b == UINT64_MAX ? b : UINT64_MAX - 1 - b) : b;
}

typedef struct keyed {
    uint64_t bits;
    size_t index;
} keyed;

static int keyed_cmp(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->bits != y->bits) return x->bits < y->bits ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index; /* stable */
}

/* Keys with repeats, and for floats NaNs of both signs, infinities and
 * zeros of both signs. */
static void sort_keys(amp_type t, void *p, size_t n, uint64_t seed)
{
    uint64_t s = 0x2545F4914F6CDD1Dull ^ seed;
    for (size_t i = 0; i < n; ++i) {
        uint64_t r = rng_next(&s);
        value v;
        if (!is_float(t)) {
            v.u = (r & 3) == 0 ? r % 50 : r; /* repeats */
            if (t == AMP_TYPE_INT32) v.i = (int32_t)(uint32_t)v.u;
            if (t == AMP_TYPE_UINT32) v.u = (uint32_t)v.u;
        } else {
            switch (r % 16) {
            case 0: v.f = NAN; break;
            case 1: v.f = -NAN; break;
            case 2: v.f = -0.0; break;
            case 3: v.f = 0.0; break;
            case 4: v.f = INFINITY; break;
            case 5: v.f = -INFINITY; break;
            case 6: v.f = (double)(r % 7); break;
            default: v.f = ((double)(int64_t)(r >> 11) / 9007199254740992.0 - 0.5) * 1e5; break;
            }
        }
        put(t, p, i, v);
    }
}

/* Sort keys (and values: their index as vsize-byte words) and check
 * against the stable host reference; bit-exact keys (NaN payloads too). */
static void check_sort(amp_accelerator_view *q, amp_type t, size_t n, amp_order o, size_t vsize)
{
    size_t esz = elem_of(t);
    void *k = test_xmalloc(n * esz + 1), *orig = test_xmalloc(n * esz + 1);
    unsigned char *val = vsize ? test_xmalloc(n * vsize) : NULL;
    sort_keys(t, k, n, n * 31 + vsize + (size_t)o);
    memcpy(orig, k, n * esz);
    for (size_t i = 0; i < n && val; ++i) {
        uint64_t w = i * 0x9e3779b97f4a7c15ull;
        for (size_t b = 0; b < vsize; ++b) val[i * vsize + b] = (unsigned char)(b < 8 ? i >> (8 * b) : w >> (8 * (b - 8)));
    }
    keyed *ref = test_xmalloc(n * sizeof *ref);
    for (size_t i = 0; i < n; ++i) ref[i] = (keyed){order_bits(t, get(t, k, i), o), i};
    qsort(ref, n, sizeof *ref, keyed_cmp);
    amp_array_view *kv = test_view(k, esz, amp_extent_1d((int)n), AMP_READ_WRITE);
    amp_array_view *vv = val ? test_view(val, vsize, amp_extent_1d((int)n), AMP_READ_WRITE) : NULL;
    if (val) ASSERT_OK(amp_sort_by_key(q, amp_arg_view(kv), amp_arg_view(vv), t, o));
    else ASSERT_OK(amp_sort(q, amp_arg_view(kv), t, o));
    ASSERT_OK(amp_array_view_destroy(kv));
    if (vv) ASSERT_OK(amp_array_view_destroy(vv));
    for (size_t i = 0; i < n; ++i) {
        size_t src = ref[i].index;
        if (memcmp((char *)k + i * esz, (char *)orig + src * esz, esz) != 0) {
            char b1[64], b2[64];
            cr_assert_fail("sort %s %s of %zu (values %zu bytes): element %zu is %s, want %s (from %zu)",
                           amp_type_name(t), o == AMP_ASCENDING ? "ascending" : "descending", n, vsize, i,
                           show(t, get(t, k, i), b1), show(t, get(t, orig, src), b2), src);
        }
        for (size_t b = 0; val && b < vsize; ++b) {
            uint64_t w = src * 0x9e3779b97f4a7c15ull;
            unsigned char want = (unsigned char)(b < 8 ? src >> (8 * b) : w >> (8 * (b - 8)));
            if (val[i * vsize + b] != want)
                cr_assert_fail("sort_by_key %s of %zu: value at %zu is not that of element %zu (byte %zu): the sort "
                               "is not stable or lost the value", amp_type_name(t), n, i, src, b);
        }
    }
    free(ref);
    free(k);
    free(orig);
    free(val);
}

/* got (n keys of type t, sorted by the library in order o) holds exactly
 * orig's keys in the order the stable host reference puts them: a sort
 * that lost, doubled or made up an element fails, not only one out of
 * order. what names the call. */
static void assert_sorted_from(amp_type t, const void *got, const void *orig, size_t n, amp_order o, const char *what)
{
    size_t esz = elem_of(t);
    keyed *ref = test_xmalloc(n * sizeof *ref + 1);
    for (size_t i = 0; i < n; ++i) ref[i] = (keyed){order_bits(t, get(t, orig, i), o), i};
    qsort(ref, n, sizeof *ref, keyed_cmp);
    for (size_t i = 0; i < n; ++i)
        if (memcmp((const char *)got + i * esz, (const char *)orig + ref[i].index * esz, esz) != 0) {
            char b1[64], b2[64];
            cr_assert_fail("%s: element %zu of %zu is %s, want %s", what, i, n, show(t, get(t, got, i), b1),
                           show(t, get(t, orig, ref[i].index), b2));
        }
    free(ref);
}

static void check_sort_type(amp_accelerator *acc, amp_type t)
{
    amp_accelerator_view *q = default_view(acc);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si)
        check_sort(q, t, sizes[si], si % 2 ? AMP_DESCENDING : AMP_ASCENDING, 0);
    check_sort(q, t, 200003, AMP_ASCENDING, 0);
    check_sort(q, t, 200003, AMP_DESCENDING, 0);
}

EVERY_TYPE(sort, check_sort_type)

/* Stability and every value size: keys of few distinct values, values
 * carrying their original position. */
ACCEL_TEST(algorithms, sort_by_key_stable_every_value_size)
{
    amp_accelerator_view *q = default_view(acc);
    static const size_t vs[] = {1, 2, 4, 8, 16};
    for (size_t i = 0; i < 5; ++i) {
        check_sort(q, AMP_TYPE_UINT32, 70001, AMP_ASCENDING, vs[i]);
        check_sort(q, AMP_TYPE_FLOAT32, 4097, AMP_DESCENDING, vs[i]);
    }
    check_sort(q, AMP_TYPE_INT64, 33333, AMP_DESCENDING, 8);
    check_sort(q, AMP_TYPE_FLOAT64, 65, AMP_ASCENDING, 16);
    /* Few distinct keys over many elements. */
    enum { N = 100000 };
    static uint32_t key[N], v[N];
    for (int i = 0; i < N; ++i) {
        key[i] = (i * 7919u) % 5;
        v[i] = (uint32_t)i;
    }
    amp_array_view *kv = test_view(key, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *vv = test_view(v, 4, amp_extent_1d(N), AMP_READ_WRITE);
    ASSERT_OK(amp_sort_by_key(q, amp_arg_view(kv), amp_arg_view(vv), AMP_TYPE_UINT32, AMP_ASCENDING));
    ASSERT_OK(amp_array_view_destroy(kv));
    ASSERT_OK(amp_array_view_destroy(vv));
    for (int i = 1; i < N; ++i) {
        cr_assert(key[i - 1] <= key[i], "keys out of order at %d", i);
        if (key[i - 1] == key[i]) cr_assert(v[i - 1] < v[i], "equal keys %u at %d lost their order", key[i], i);
    }
}

ACCEL_TEST(algorithms, sort_large)
{
    amp_accelerator_view *q = default_view(acc);
    check_sort(q, AMP_TYPE_UINT32, is_emulated(acc) ? 2000003 : 30000001, AMP_ASCENDING, 0);
    check_sort(q, AMP_TYPE_FLOAT32, is_emulated(acc) ? 1000003 : 20000003, AMP_DESCENDING, 4);
}

/* --------------------------------------------------- sections and strides */

/* A 2-D section (rows with gaps), a projection, a rank-3 section and an
 * array: reduce, scan between differently strided views, sort in place
 * (nothing outside the section touched), compaction. */
ACCEL_TEST(algorithms, sections_and_strides)
{
    amp_accelerator_view *q = default_view(acc);
    enum { R = 300, C = 257 };
    static int32_t g[R][C], h[R][C];
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) {
            g[r][c] = (int32_t)((r * 1000003u + c * 7919u) % 100003u) - 50000;
            h[r][c] = -1;
        }
    amp_array_view *vg = test_view(g, 4, amp_extent_2d(R, C), AMP_READ_WRITE);
    amp_array_view *vh = test_view(h, 4, amp_extent_2d(R, C), AMP_READ_WRITE);
    amp_array_view *sec = NULL, *hsec = NULL, *row = NULL;
    int r0 = 17, c0 = 5, nr = 211, nc = 129;
    ASSERT_OK(amp_array_view_section(vg, amp_index_2d(r0, c0), amp_extent_2d(nr, nc), &sec));
    /* Reduce over the section. */
    int64_t want = 0;
    int32_t mn = INT32_MAX;
    for (int r = r0; r < r0 + nr; ++r)
        for (int c = c0; c < c0 + nc; ++c) {
            want += g[r][c];
            if (g[r][c] < mn) mn = g[r][c];
        }
    int32_t s = 0;
    ASSERT_OK(amp_reduce(q, amp_arg_view(sec), AMP_TYPE_INT32, AMP_OP_SUM, &s));
    cr_assert_eq(s, (int32_t)want);
    ASSERT_OK(amp_reduce(q, amp_arg_view(sec), AMP_TYPE_INT32, AMP_OP_MIN, &s));
    cr_assert_eq(s, mn);
    /* Scan the section into a section of another shape with the same count
     * (nc x nr), each taken in its row-major order. */
    ASSERT_OK(amp_array_view_section(vh, amp_index_2d(40, 30), amp_extent_2d(nc, nr), &hsec));
    ASSERT_OK(amp_scan(q, amp_arg_view(sec), amp_arg_view(hsec), AMP_TYPE_INT32, AMP_OP_SUM, AMP_SCAN_INCLUSIVE));
    ASSERT_OK(amp_array_view_synchronize(vh));
    uint32_t run = 0;
    long i = 0;
    for (int r = r0; r < r0 + nr; ++r)
        for (int c = c0; c < c0 + nc; ++c, ++i) {
            run += (uint32_t)g[r][c];
            int hr = 40 + (int)(i / 211), hc = 30 + (int)(i % 211);
            cr_assert_eq(h[hr][hc], (int32_t)run, "scan into a strided section: element %ld", i);
        }
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c)
            if (r < 40 || r >= 40 + nc || c < 30 || c >= 30 + 211)
                cr_assert_eq(h[r][c], -1, "scan wrote outside its section at (%d, %d)", r, c);
    ASSERT_OK(amp_array_view_destroy(hsec));
    /* A projection (one row), rank 1 inside a rank-2 storage. */
    ASSERT_OK(amp_array_view_project(vg, 123, &row));
    int64_t rw = 0;
    for (int c = 0; c < C; ++c) rw += g[123][c];
    ASSERT_OK(amp_reduce(q, amp_arg_view(row), AMP_TYPE_INT32, AMP_OP_SUM, &s));
    cr_assert_eq(s, (int32_t)rw);
    ASSERT_OK(amp_array_view_destroy(row));
    /* Sort the section in place; the rest of the grid stays as it was. */
    static int32_t before[R][C];
    memcpy(before, g, sizeof g);
    ASSERT_OK(amp_sort(q, amp_arg_view(sec), AMP_TYPE_INT32, AMP_ASCENDING));
    ASSERT_OK(amp_array_view_synchronize(vg));
    int32_t prev = INT32_MIN;
    int64_t after_sum = 0;
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) {
            bool in = r >= r0 && r < r0 + nr && c >= c0 && c < c0 + nc;
            if (!in) {
                cr_assert_eq(g[r][c], before[r][c], "sort changed (%d, %d) outside its section", r, c);
                continue;
            }
            cr_assert_geq(g[r][c], prev, "section not sorted at (%d, %d)", r, c);
            prev = g[r][c];
            after_sum += g[r][c];
        }
    cr_assert_eq(after_sum, want, "the sorted section holds other elements");
    ASSERT_OK(amp_array_view_destroy(sec));
    ASSERT_OK(amp_array_view_destroy(vg));
    ASSERT_OK(amp_array_view_destroy(vh));

    /* Rank 3: a section of a 3-D view, reduced and scanned. */
    enum { A = 7, B = 33, D = 65 };
    static double cube[A][B][D], out3[5 * 20 * 40];
    for (int a = 0; a < A; ++a)
        for (int b = 0; b < B; ++b)
            for (int d = 0; d < D; ++d) cube[a][b][d] = (double)((a * 31 + b * 7 + d) % 19) - 9;
    amp_array_view *vc = test_view(cube, 8, amp_extent_3d(A, B, D), AMP_READ_ONLY), *c3 = NULL;
    ASSERT_OK(amp_array_view_section(vc, amp_index_3d(1, 4, 9), amp_extent_3d(5, 20, 40), &c3));
    double w3 = 0, r3 = 0;
    for (int a = 1; a < 6; ++a)
        for (int b = 4; b < 24; ++b)
            for (int d = 9; d < 49; ++d) w3 += cube[a][b][d];
    ASSERT_OK(amp_reduce(q, amp_arg_view(c3), AMP_TYPE_FLOAT64, AMP_OP_SUM, &r3));
    cr_assert_eq(r3, w3);
    amp_array_view *vo = test_view(out3, 8, amp_extent_1d(5 * 20 * 40), AMP_WRITE_ONLY);
    ASSERT_OK(amp_scan(q, amp_arg_view(c3), amp_arg_view(vo), AMP_TYPE_FLOAT64, AMP_OP_MAX, AMP_SCAN_INCLUSIVE));
    ASSERT_OK(amp_array_view_destroy(vo));
    double m = -INFINITY;
    i = 0;
    for (int a = 1; a < 6; ++a)
        for (int b = 4; b < 24; ++b)
            for (int d = 9; d < 49; ++d, ++i) {
                if (cube[a][b][d] > m) m = cube[a][b][d];
                cr_assert_eq(out3[i], m, "rank-3 max scan at %ld", i);
            }
    ASSERT_OK(amp_array_view_destroy(c3));
    ASSERT_OK(amp_array_view_destroy(vc));

    /* A whole array (device memory), and a 2-D array. */
    enum { M = 10007 };
    static float init[M];
    for (int k = 0; k < M; ++k) init[k] = (float)(k % 5);
    amp_array *arr = NULL;
    ASSERT_OK(amp_array_create(q, 4, amp_extent_2d(1, M), init, &arr));
    float fs = 0;
    ASSERT_OK(amp_reduce(q, amp_arg_array(arr), AMP_TYPE_FLOAT32, AMP_OP_SUM, &fs));
    cr_assert_eq(fs, (float)(M / 5 * 10 + 0 + 1), "sum over an array: %g", (double)fs);
    ASSERT_OK(amp_sort(q, amp_arg_array(arr), AMP_TYPE_FLOAT32, AMP_DESCENDING));
    static float back[M];
    ASSERT_OK(amp_array_copy_to_host(arr, back));
    assert_sorted_from(AMP_TYPE_FLOAT32, back, init, M, AMP_DESCENDING, "a 2-D array's sort");
    ASSERT_OK(amp_array_destroy(arr));
}

/* ------------------------------------------------------ results on device */

ACCEL_TEST(algorithms, async_results_on_device)
{
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    enum { N = 123457 };
    static float x[N];
    double want = 0;
    for (int i = 0; i < N; ++i) {
        x[i] = (float)(i % 11) - 5.0f;
        want += x[i];
    }
    amp_array_view *v = test_view(x, 4, amp_extent_1d(N), AMP_READ_ONLY);
    amp_array *res = NULL;
    ASSERT_OK(amp_array_create(q, 4, amp_extent_1d(1), NULL, &res));
    amp_future *f = NULL;
    ASSERT_OK(amp_reduce_async(q, amp_arg_view(v), AMP_TYPE_FLOAT32, AMP_OP_SUM, amp_arg_array(res), &f));
    cr_assert_not_null(f);
    ASSERT_OK(amp_future_wait(f));
    double ms = -1;
    ASSERT_OK(amp_future_elapsed_ms(f, &ms));
    cr_assert_geq(ms, 0.0);
    ASSERT_OK(amp_future_destroy(f));
    float got = 0;
    ASSERT_OK(amp_array_copy_to_host(res, &got));
    cr_assert_eq(got, (float)want);
    /* No future; a one-element view of host memory as the result, read
     * after synchronize (as any view a launch wrote). */
    double dres = -1;
    amp_array_view *rv = test_view(&dres, 8, amp_extent_1d(1), AMP_READ_WRITE);
    static double y[N];
    for (int i = 0; i < N; ++i) y[i] = 2.0;
    amp_array_view *vy = test_view(y, 8, amp_extent_1d(N), AMP_READ_ONLY);
    ASSERT_OK(amp_transform_reduce_async(q, amp_arg_view(vy), amp_arg_view(vy), AMP_TYPE_FLOAT64, AMP_MAP_PRODUCT,
                                         AMP_OP_SUM, amp_arg_view(rv), NULL));
    ASSERT_OK(amp_array_view_synchronize(rv));
    cr_assert_eq(dres, 4.0 * N);
    /* A result of the wrong size or type is refused. */
    amp_array *two = NULL;
    ASSERT_OK(amp_array_create(q, 4, amp_extent_1d(2), NULL, &two));
    ASSERT_STATUS(amp_reduce_async(q, amp_arg_view(v), AMP_TYPE_FLOAT32, AMP_OP_SUM, amp_arg_array(two), NULL),
                  AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_reduce_async(q, amp_arg_view(v), AMP_TYPE_FLOAT32, AMP_OP_SUM, amp_arg_view(rv), NULL),
                  AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "8-byte") && strstr(amp_last_error(), "float32"), "%s", amp_last_error());
    ASSERT_OK(amp_array_destroy(two));
    ASSERT_OK(amp_array_view_destroy(vy));
    ASSERT_OK(amp_array_view_destroy(rv));
    ASSERT_OK(amp_array_destroy(res));
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_accelerator_view_destroy(q));
}

/* ------------------------------------ initial values, wide accumulation */

/* amp_alg_options (issue 38 item 9): Thrust's init for reductions and both
 * scans, and accumulation in the wider type (int32 in int64, uint32 in
 * uint64, float32 in float64) with results of that type. */
ACCEL_TEST(algorithms, initial_values)
{
    amp_accelerator_view *q = default_view(acc);
    enum { N = 70001 };
    static int32_t xi[N], yi[N];
    static float xf[N], yf[N];
    uint64_t s = 99;
    for (int i = 0; i < N; ++i) {
        xi[i] = (int32_t)(rng_next(&s) % 2001) - 1000;
        xf[i] = (float)((int)(rng_next(&s) % 2001) - 1000) * 0.25f; /* sums exact in float32 */
    }
    amp_array_view *vi = test_view(xi, 4, amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vf = test_view(xf, 4, amp_extent_1d(N), AMP_READ_ONLY);
    /* Exclusive and inclusive scans from an initial value, sum, min, max;
     * the min/max inits inside the data's range, so that they show. */
    const amp_op sops[] = {AMP_OP_SUM, AMP_OP_MIN, AMP_OP_MAX};
    const int32_t iinit[] = {123456, -500, 700};
    const float finit[] = {-1e4f, -250.5f, 300.25f};
    for (int oi = 0; oi < 3; ++oi)
        for (int kind = 0; kind < 2; ++kind) {
            amp_op op = sops[oi];
            amp_alg_options oint = {.init = &iinit[oi]}, oflt = {.init = &finit[oi]};
            amp_array_view *wi = test_view(yi, 4, amp_extent_1d(N), AMP_WRITE_ONLY);
            amp_array_view *wf = test_view(yf, 4, amp_extent_1d(N), AMP_WRITE_ONLY);
            ASSERT_OK(amp_scan_with(q, amp_arg_view(vi), amp_arg_view(wi), AMP_TYPE_INT32, op, kind, &oint));
            ASSERT_OK(amp_scan_with(q, amp_arg_view(vf), amp_arg_view(wf), AMP_TYPE_FLOAT32, op, kind, &oflt));
            ASSERT_OK(amp_array_view_destroy(wi));
            ASSERT_OK(amp_array_view_destroy(wf));
            value ri = {.i = iinit[oi]}, rf = {.f = finit[oi]};
            for (int i = 0; i < N; ++i) {
                value ni = combine(AMP_TYPE_INT32, op, ri, get(AMP_TYPE_INT32, xi, (size_t)i));
                value nf = combine(AMP_TYPE_FLOAT32, op, rf, get(AMP_TYPE_FLOAT32, xf, (size_t)i));
                value wanti = kind == AMP_SCAN_EXCLUSIVE ? ri : ni, wantf = kind == AMP_SCAN_EXCLUSIVE ? rf : nf;
                if (yi[i] != (int32_t)wanti.i || yf[i] != (float)wantf.f)
                    cr_assert_fail("%s %s scan from an initial value: element %d is %d and %g, want %lld and %g",
                                   kind ? "exclusive" : "inclusive", amp_op_name(op), i, yi[i], (double)yf[i],
                                   (long long)wanti.i, wantf.f);
                ri = ni;
                rf = nf;
            }
            cr_assert(kind == AMP_SCAN_INCLUSIVE || (yi[0] == iinit[oi] && yf[0] == finit[oi]),
                      "an exclusive scan starts at init");
            /* The reduction from the same initial value is the inclusive
             * scan's last element, on the host and on the device. */
            int32_t r32 = 0;
            float rfl = 0;
            ASSERT_OK(amp_reduce_with(q, amp_arg_view(vi), AMP_TYPE_INT32, op, &oint, &r32));
            cr_assert_eq(r32, (int32_t)ri.i, "%s reduce from %d: %d, want %lld", amp_op_name(op), iinit[oi], r32,
                         (long long)ri.i);
            ASSERT_OK(amp_reduce_with(q, amp_arg_view(vf), AMP_TYPE_FLOAT32, op, &oflt, &rfl));
            cr_assert_eq(rfl, (float)rf.f, "%s reduce from %g: %g, want %g", amp_op_name(op), (double)finit[oi],
                         (double)rfl, rf.f);
            amp_array *res = NULL;
            ASSERT_OK(amp_array_create(q, 4, amp_extent_1d(1), NULL, &res));
            ASSERT_OK(amp_reduce_with_async(q, amp_arg_view(vi), AMP_TYPE_INT32, op, &oint, amp_arg_array(res), NULL));
            ASSERT_OK(amp_array_copy_to_host(res, &r32));
            cr_assert_eq(r32, (int32_t)ri.i, "%s reduce_async from %d: %d", amp_op_name(op), iinit[oi], r32);
            ASSERT_OK(amp_array_destroy(res));
        }
    /* In place, a strided section, a product from an initial value (float32
     * products accumulate in float64: init goes in widened), a single tile. */
    static float pf[300];
    for (int i = 0; i < 300; ++i) pf[i] = (i % 7 == 0) ? 2.0f : (i % 11 == 0) ? 0.5f : 1.0f;
    amp_array_view *vp = test_view(pf, 4, amp_extent_2d(30, 10), AMP_READ_WRITE), *col = NULL;
    ASSERT_OK(amp_array_view_section(vp, amp_index_2d(0, 3), amp_extent_2d(30, 1), &col));
    float three = 3.0f, got = 0;
    amp_alg_options o3 = {.init = &three};
    ASSERT_OK(amp_reduce_with(q, amp_arg_view(col), AMP_TYPE_FLOAT32, AMP_OP_PRODUCT, &o3, &got));
    float want = 3.0f;
    for (int r = 0; r < 30; ++r) want *= pf[r * 10 + 3];
    cr_assert_eq(got, want, "product of a column from 3: %g, want %g", (double)got, (double)want);
    float wantcol[30], run = 3.0f;
    for (int r = 0; r < 30; ++r) {
        wantcol[r] = run;
        run *= pf[r * 10 + 3];
    }
    ASSERT_OK(amp_scan_with(q, amp_arg_view(col), amp_arg_view(col), AMP_TYPE_FLOAT32, AMP_OP_PRODUCT,
                            AMP_SCAN_EXCLUSIVE, &o3));
    ASSERT_OK(amp_array_view_synchronize(vp));
    for (int r = 0; r < 30; ++r)
        cr_assert_eq(pf[r * 10 + 3], wantcol[r], "in place exclusive product scan of a column from 3: row %d is %g, "
                     "want %g", r, (double)pf[r * 10 + 3], (double)wantcol[r]);
    cr_assert_eq(pf[4], (4 % 7 == 0) ? 2.0f : (4 % 11 == 0) ? 0.5f : 1.0f, "the next column is untouched");
    ASSERT_OK(amp_array_view_destroy(col));
    ASSERT_OK(amp_array_view_destroy(vp));
    /* 0 elements: the initial value. */
    amp_array_view *none = NULL;
    ASSERT_OK(amp_array_view_section(vi, amp_index_1d(5), amp_extent_1d(0), &none));
    int32_t r0 = 0, seven = 7;
    amp_alg_options o7 = {.init = &seven};
    ASSERT_OK(amp_reduce_with(q, amp_arg_view(none), AMP_TYPE_INT32, AMP_OP_MAX, &o7, &r0));
    cr_assert_eq(r0, 7, "max of nothing from 7: %d", r0);
    ASSERT_OK(amp_array_view_destroy(none));
    /* NULL options and zeroed ones are the plain calls. */
    amp_alg_options zero = {0};
    int32_t a = 1, b = 2, c = 3;
    ASSERT_OK(amp_reduce(q, amp_arg_view(vi), AMP_TYPE_INT32, AMP_OP_SUM, &a));
    ASSERT_OK(amp_reduce_with(q, amp_arg_view(vi), AMP_TYPE_INT32, AMP_OP_SUM, NULL, &b));
    ASSERT_OK(amp_reduce_with(q, amp_arg_view(vi), AMP_TYPE_INT32, AMP_OP_SUM, &zero, &c));
    cr_assert(a == b && b == c, "plain %d, NULL options %d, zeroed options %d", a, b, c);
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_array_view_destroy(vf));
}

ACCEL_TEST(algorithms, wide_accumulation)
{
    amp_accelerator_view *q = default_view(acc);
    enum { N = 100003 };
    static int32_t xi[N], yi[N];
    static uint32_t xu[N];
    static int64_t out64[N];
    static float xf[N], yf[N];
    uint64_t s = 12345;
    int64_t sum = 0, dot = 0;
    uint64_t usum = 0;
    double fsum = 0, fdot = 0;
    for (int i = 0; i < N; ++i) {
        xi[i] = 2000000000 - (int32_t)(rng_next(&s) % 1000); /* int32 sums wrap */
        yi[i] = (int32_t)(rng_next(&s) % 65536) - 32768;
        xu[i] = 4000000000u + (uint32_t)(rng_next(&s) % 1000);
        /* 1 + k 2^-20: 21 bits; the sum needs 38, exact in float64, not float32. */
        xf[i] = 1.0f + (float)(rng_next(&s) % 1048576) * 0x1p-20f;
        yf[i] = (float)(rng_next(&s) % 8) - 4.0f;
        sum += xi[i];
        dot += (int64_t)xi[i] * yi[i];
        usum += xu[i];
        fsum += xf[i];
        fdot += (double)xf[i] * yf[i];
    }
    amp_array_view *vi = test_view(xi, 4, amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *wi = test_view(yi, 4, amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vu = test_view(xu, 4, amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vf = test_view(xf, 4, amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *wf = test_view(yf, 4, amp_extent_1d(N), AMP_READ_ONLY);
    amp_alg_options o64 = {.accumulate = AMP_TYPE_INT64}, ou64 = {.accumulate = AMP_TYPE_UINT64},
                    od = {.accumulate = AMP_TYPE_FLOAT64};
    /* The narrow sums wrap and round; the wide ones are exact. */
    int32_t n32 = 0;
    int64_t w64 = 0;
    ASSERT_OK(amp_reduce(q, amp_arg_view(vi), AMP_TYPE_INT32, AMP_OP_SUM, &n32));
    cr_assert_eq(n32, (int32_t)(uint32_t)(uint64_t)sum, "the narrow sum wraps");
    ASSERT_OK(amp_reduce_with(q, amp_arg_view(vi), AMP_TYPE_INT32, AMP_OP_SUM, &o64, &w64));
    cr_assert_eq(w64, sum, "int32 summed in int64: %lld, want %lld", (long long)w64, (long long)sum);
    uint64_t wu = 0;
    ASSERT_OK(amp_reduce_with(q, amp_arg_view(vu), AMP_TYPE_UINT32, AMP_OP_SUM, &ou64, &wu));
    cr_assert_eq(wu, usum, "uint32 summed in uint64: %llu, want %llu", (unsigned long long)wu, (unsigned long long)usum);
    ASSERT_OK(amp_transform_reduce_with(q, amp_arg_view(vi), amp_arg_view(wi), AMP_TYPE_INT32, AMP_MAP_PRODUCT,
                                        AMP_OP_SUM, &o64, &w64));
    cr_assert_eq(w64, dot, "int32 dot in int64 (products widened first): %lld, want %lld", (long long)w64,
                 (long long)dot);
    float nf = 0;
    double wd = 0;
    ASSERT_OK(amp_reduce(q, amp_arg_view(vf), AMP_TYPE_FLOAT32, AMP_OP_SUM, &nf));
    cr_assert_neq((double)nf, fsum, "the float32 sum was expected to round (%.17g)", fsum);
    ASSERT_OK(amp_reduce_with(q, amp_arg_view(vf), AMP_TYPE_FLOAT32, AMP_OP_SUM, &od, &wd));
    cr_assert_eq(wd, fsum, "float32 summed in float64: %.17g, want %.17g", wd, fsum);
    ASSERT_OK(amp_transform_reduce_with(q, amp_arg_view(vf), amp_arg_view(wf), AMP_TYPE_FLOAT32, AMP_MAP_PRODUCT,
                                        AMP_OP_SUM, &od, &wd));
    cr_assert_eq(wd, fdot, "float32 dot in float64: %.17g, want %.17g", wd, fdot);
    /* min and max in the wide type: the same values, widened. */
    ASSERT_OK(amp_reduce_with(q, amp_arg_view(vi), AMP_TYPE_INT32, AMP_OP_MIN, &o64, &w64));
    int32_t n_min = 0;
    ASSERT_OK(amp_reduce(q, amp_arg_view(vi), AMP_TYPE_INT32, AMP_OP_MIN, &n_min));
    cr_assert_eq(w64, (int64_t)n_min);
    /* A wide result on the device, with an initial value of the wide type. */
    int64_t big = INT64_C(1) << 40;
    amp_alg_options o64i = {.init = &big, .accumulate = AMP_TYPE_INT64};
    amp_array *res = NULL;
    ASSERT_OK(amp_array_create(q, 8, amp_extent_1d(1), NULL, &res));
    ASSERT_OK(amp_reduce_with_async(q, amp_arg_view(vi), AMP_TYPE_INT32, AMP_OP_SUM, &o64i, amp_arg_array(res), NULL));
    ASSERT_OK(amp_array_copy_to_host(res, &w64));
    cr_assert_eq(w64, sum + big, "int32 summed in int64 from 2^40 on the device: %lld", (long long)w64);
    ASSERT_OK(amp_array_destroy(res));
    /* A wide scan: int32 prefix sums past 2^31 as int64, from an initial value. */
    amp_array_view *w = test_view(out64, 8, amp_extent_1d(N), AMP_WRITE_ONLY);
    ASSERT_OK(amp_scan_with(q, amp_arg_view(vi), amp_arg_view(w), AMP_TYPE_INT32, AMP_OP_SUM, AMP_SCAN_EXCLUSIVE, &o64i));
    ASSERT_OK(amp_array_view_destroy(w));
    int64_t run = big;
    for (int i = 0; i < N; ++i) {
        if (out64[i] != run) cr_assert_fail("wide exclusive scan: element %d is %lld, want %lld", i, (long long)out64[i],
                                            (long long)run);
        run += xi[i];
    }
    /* A float32 product in float64 gives a float64 result. */
    static float ones[1000];
    for (int i = 0; i < 1000; ++i) ones[i] = i == 500 ? 3.0f : 1.0f;
    amp_array_view *vo = test_view(ones, 4, amp_extent_1d(1000), AMP_READ_ONLY);
    ASSERT_OK(amp_reduce_with(q, amp_arg_view(vo), AMP_TYPE_FLOAT32, AMP_OP_PRODUCT, &od, &wd));
    cr_assert_eq(wd, 3.0);
    ASSERT_OK(amp_array_view_destroy(vo));
    /* Refusals: a type t does not widen to, one outside the enum, a result
     * or out of the element type's size, a wide scan in place. */
    amp_alg_options bad = {.accumulate = AMP_TYPE_FLOAT64};
    ASSERT_STATUS(amp_reduce_with(q, amp_arg_view(vi), AMP_TYPE_INT32, AMP_OP_SUM, &bad, &wd), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "amp_reduce_with") && strstr(amp_last_error(), "float64") &&
              strstr(amp_last_error(), "int32") && strstr(amp_last_error(), "int64"), "%s", amp_last_error());
    amp_alg_options bad2 = {.accumulate = AMP_TYPE_FLOAT32};
    ASSERT_STATUS(amp_transform_reduce_with(q, amp_arg_view(vi), (amp_arg){0}, AMP_TYPE_INT32, AMP_MAP_ABS, AMP_OP_SUM,
                                            &bad2, &wd),
                  AMP_ERROR_INVALID_ARGUMENT);
    amp_alg_options bad3 = {.accumulate = (amp_type)99};
    ASSERT_STATUS(amp_scan_with(q, amp_arg_view(vi), amp_arg_view(vi), AMP_TYPE_INT32, AMP_OP_SUM, AMP_SCAN_INCLUSIVE,
                                &bad3),
                  AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "amp_scan_with") && strstr(amp_last_error(), "99"), "%s", amp_last_error());
    amp_alg_options same64 = {.accumulate = AMP_TYPE_INT64};
    static int64_t x64[10] = {1, 2, 3};
    amp_array_view *v64 = test_view(x64, 8, amp_extent_1d(10), AMP_READ_ONLY);
    ASSERT_OK(amp_reduce_with(q, amp_arg_view(v64), AMP_TYPE_INT64, AMP_OP_SUM, &same64, &w64));
    cr_assert_eq(w64, 6, "int64 accumulated in itself");
    ASSERT_OK(amp_array_view_destroy(v64));
    amp_array *r4 = NULL;
    ASSERT_OK(amp_array_create(q, 4, amp_extent_1d(1), NULL, &r4));
    ASSERT_STATUS(amp_reduce_with_async(q, amp_arg_view(vi), AMP_TYPE_INT32, AMP_OP_SUM, &o64, amp_arg_array(r4), NULL),
                  AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "int64"), "%s", amp_last_error());
    ASSERT_OK(amp_array_destroy(r4));
    amp_array_view *w32 = test_view(yi, 4, amp_extent_1d(N), AMP_WRITE_ONLY);
    ASSERT_STATUS(amp_scan_with(q, amp_arg_view(vi), amp_arg_view(w32), AMP_TYPE_INT32, AMP_OP_SUM, AMP_SCAN_INCLUSIVE,
                                &o64),
                  AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_array_view_destroy(w32));
    static int32_t inplace[16];
    amp_array_view *vip = test_view(inplace, 4, amp_extent_1d(16), AMP_READ_WRITE);
    ASSERT_STATUS(amp_scan_with(q, amp_arg_view(vip), amp_arg_view(vip), AMP_TYPE_INT32, AMP_OP_SUM,
                                AMP_SCAN_INCLUSIVE, &o64),
                  AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_array_view_destroy(vip));
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_array_view_destroy(wi));
    ASSERT_OK(amp_array_view_destroy(vu));
    ASSERT_OK(amp_array_view_destroy(vf));
    ASSERT_OK(amp_array_view_destroy(wf));
}

/* ----------------------------------------------------- user reductions */

ACCEL_TEST(algorithms, user_reduction)
{
    amp_accelerator_view *q = default_view(acc);
    amp_reduction_desc d = {
        .name = "wnorm",
        .inputs = "float x, double w",
        .scalars = "double scale, int k",
        .type = AMP_TYPE_FLOAT64,
        .map = "w * twice(x) * x * scale + k",
        .reduce = "a + b",
        .identity = "0",
        .post = "sqrt(a)",
        .preamble = "__device__ double twice(double v) { return 2 * v; }",
    };
    amp_reduction *r = NULL;
    ASSERT_OK(amp_reduction_create(acc, &d, &r));
    enum { N = 70001 };
    static float x[N];
    static double w[N];
    double want = 0;
    for (int i = 0; i < N; ++i) {
        x[i] = (float)(i % 9) - 4;
        w[i] = (double)(i % 3);
        want += w[i] * 2.0 * x[i] * x[i] * 0.5 + 1;
    }
    want = sqrt(want);
    amp_array_view *vx = test_view(x, 4, amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vw = test_view(w, 8, amp_extent_1d(N), AMP_READ_ONLY);
    amp_arg args[] = {amp_arg_view(vx), amp_arg_view(vw), amp_arg_float64(0.5), amp_arg_int32(1)};
    double got = 0;
    ASSERT_OK(amp_reduction_apply(q, r, args, 4, &got));
    cr_assert(fabs(got - want) <= 1e-12 * want, "user reduction: %.17g want %.17g", got, want);
    /* On the device. */
    amp_array *res = NULL;
    ASSERT_OK(amp_array_create(q, 8, amp_extent_1d(1), NULL, &res));
    amp_future *f = NULL;
    ASSERT_OK(amp_reduction_apply_async(q, r, args, 4, amp_arg_array(res), &f));
    ASSERT_OK(amp_future_wait(f));
    ASSERT_OK(amp_future_destroy(f));
    double dev = 0;
    ASSERT_OK(amp_array_copy_to_host(res, &dev));
    cr_assert_eq(dev, got);
    /* Wrong arguments name the parameter. */
    amp_arg bad1[] = {amp_arg_view(vx), amp_arg_view(vw), amp_arg_float32(0.5f), amp_arg_int32(1)};
    ASSERT_STATUS(amp_reduction_apply(q, r, bad1, 4, &got), AMP_ERROR_ARGUMENT_MISMATCH);
    cr_assert(strstr(amp_last_error(), "scale"), "%s", amp_last_error());
    amp_arg bad2[] = {amp_arg_view(vw), amp_arg_view(vw), amp_arg_float64(0.5), amp_arg_int32(1)};
    ASSERT_STATUS(amp_reduction_apply(q, r, bad2, 4, &got), AMP_ERROR_ARGUMENT_MISMATCH);
    cr_assert(strstr(amp_last_error(), "'x'"), "%s", amp_last_error());
    ASSERT_STATUS(amp_reduction_apply(q, r, args, 3, &got), AMP_ERROR_ARGUMENT_MISMATCH);
    amp_array_view *short_w = NULL;
    ASSERT_OK(amp_array_view_section(vw, amp_index_1d(1), amp_extent_1d(N - 1), &short_w));
    amp_arg bad3[] = {amp_arg_view(vx), amp_arg_view(short_w), amp_arg_float64(0.5), amp_arg_int32(1)};
    ASSERT_STATUS(amp_reduction_apply(q, r, bad3, 4, &got), AMP_ERROR_INVALID_EXTENT);
    ASSERT_OK(amp_array_view_destroy(short_w));
    ASSERT_OK(amp_array_destroy(res));
    ASSERT_OK(amp_reduction_destroy(r));

    /* A scan with a user operator: running maximum of |x| (associative,
     * one input), exclusive from the identity. */
    amp_reduction_desc m = {.name = "runmax", .inputs = "float x", .type = AMP_TYPE_FLOAT32, .map = "fabsf(x)",
                            .reduce = "a > b ? a : b", .identity = "-1.0f"};
    ASSERT_OK(amp_reduction_create(acc, &m, &r));
    static float out[N];
    amp_array_view *vo = test_view(out, 4, amp_extent_1d(N), AMP_WRITE_ONLY);
    amp_arg one[] = {amp_arg_view(vx)};
    ASSERT_OK(amp_reduction_scan(q, r, one, 1, amp_arg_view(vo), AMP_SCAN_EXCLUSIVE));
    ASSERT_OK(amp_array_view_synchronize(vo));
    float run = -1.0f;
    for (int i = 0; i < N; ++i) {
        cr_assert_eq(out[i], run, "user scan at %d: %g want %g", i, (double)out[i], (double)run);
        if (fabsf(x[i]) > run) run = fabsf(x[i]);
    }
    float mx = 0;
    ASSERT_OK(amp_reduction_apply(q, r, one, 1, &mx));
    cr_assert_eq(mx, 4.0f);
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_reduction_destroy(r));
    ASSERT_OK(amp_array_view_destroy(vx));
    ASSERT_OK(amp_array_view_destroy(vw));
}

/* Expressions that do not compile: AMP_ERROR_COMPILE, the first line names
 * the expression at fault, and (where the compiler gives columns) the
 * error's line and column are the expression's own. */
ACCEL_TEST(algorithms, user_expressions_that_do_not_compile)
{
    SKIP_IN_DISCRETE_PASS(acc, "a user expression that does not compile");
    amp_reduction *r = NULL;
    amp_reduction_desc d = {.name = "broken", .inputs = "float x, float y", .type = AMP_TYPE_FLOAT32,
                            .map = "x * zz", .reduce = "a + b", .identity = "0"};
    ASSERT_STATUS(amp_reduction_create(acc, &d, &r), AMP_ERROR_COMPILE);
    cr_assert_null(r);
    const char *log = amp_last_error();
    const char *nl = strchr(log, '\n');
    cr_assert(nl && strstr(log, "map expression") && strstr(log, "map expression") < nl,
              "the first line does not name the map expression:\n%.2000s", log);
    cr_assert(strstr(log, "zz"), "the log does not show the unknown name:\n%.2000s", log);
    if (is_emulated(acc))
        cr_assert(strstr(log, "<broken: map expression>:1:5"), "no line 1, column 5 of the expression:\n%.2000s", log);
    d.map = "x * y";
    d.reduce = "a +* b";
    ASSERT_STATUS(amp_reduction_create(acc, &d, &r), AMP_ERROR_COMPILE);
    log = amp_last_error();
    nl = strchr(log, '\n');
    cr_assert(strstr(log, "reduce expression") && strstr(log, "reduce expression") < nl, "%.2000s", log);
    d.reduce = "a + b";
    d.identity = "undefined_thing";
    ASSERT_STATUS(amp_reduction_create(acc, &d, &r), AMP_ERROR_COMPILE);
    cr_assert(strstr(amp_last_error(), "identity"), "%.2000s", amp_last_error());
    /* A predicate. */
    float x[100] = {0};
    amp_array_view *v = test_view(x, 4, amp_extent_1d(100), AMP_READ_ONLY);
    uint64_t c = 7;
    ASSERT_STATUS(amp_count_if(NULL, amp_arg_view(v), AMP_TYPE_FLOAT32, "x >>> 2", NULL, &c), AMP_ERROR_COMPILE);
    cr_assert_eq(c, 0);
    cr_assert(strstr(amp_last_error(), "predicate"), "%.2000s", amp_last_error());
    ASSERT_OK(amp_array_view_destroy(v));
    /* Parameter lists and names are checked before anything compiles. */
    d.identity = "0";
    d.inputs = "quad x";
    ASSERT_STATUS(amp_reduction_create(acc, &d, &r), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "quad"), "%s", amp_last_error());
    d.inputs = "float i";
    ASSERT_STATUS(amp_reduction_create(acc, &d, &r), AMP_ERROR_INVALID_ARGUMENT);
    d.inputs = "float x, float x";
    ASSERT_STATUS(amp_reduction_create(acc, &d, &r), AMP_ERROR_INVALID_ARGUMENT);
    d.inputs = "float x";
    d.name = "bad name";
    ASSERT_STATUS(amp_reduction_create(acc, &d, &r), AMP_ERROR_INVALID_ARGUMENT);
    d.name = NULL;
    d.map = NULL;
    ASSERT_STATUS(amp_reduction_create(acc, &d, &r), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "map"), "%s", amp_last_error());
}

/* ----------------------------------------------------------- compaction */

/* A predicate's count and its compaction are two programs, each built on
 * its own call's first use, so that a call compiles only its kernels: one
 * build (a miss of the in-memory program cache) for each call's first use
 * of a string, none for later calls. Another string first, so that what
 * both calls use besides (scratch, their launches) is there already. */
ACCEL_TEST(algorithms, predicate_builds_only_its_calls_program)
{
    amp_accelerator_view *q = default_view(acc);
    enum { N = 1000 };
    static int32_t x[N], out[N];
    for (int i = 0; i < N; ++i) x[i] = i;
    amp_array_view *vx = test_view(x, 4, amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vo = test_view(out, 4, amp_extent_1d(N), AMP_READ_WRITE);
    uint64_t c = 0;
    ASSERT_OK(amp_count_if(q, amp_arg_view(vx), AMP_TYPE_INT32, "x < 0", NULL, &c));
    ASSERT_OK(amp_copy_if(q, amp_arg_view(vx), amp_arg_view(vo), AMP_TYPE_INT32, "x < 0", NULL, &c));
    /* x % 7 == 3: 3, 10, ..., 997. */
    static const char pred[] = "x % 7 == 3";
    static const char *const calls[] = {"copy_if", "count_if", "copy_if again", "count_if again"};
    static const uint64_t builds[] = {1, 1, 0, 0};
    for (int k = 0; k < 4; ++k) {
        amp_cache_info before, after;
        ASSERT_OK(amp_cache_get_info(&before));
        c = 0;
        if (k % 2 == 0) ASSERT_OK(amp_copy_if(q, amp_arg_view(vx), amp_arg_view(vo), AMP_TYPE_INT32, pred, NULL, &c));
        else ASSERT_OK(amp_count_if(q, amp_arg_view(vx), AMP_TYPE_INT32, pred, NULL, &c));
        ASSERT_OK(amp_cache_get_info(&after));
        cr_assert_eq(c, 143, "%s: %llu elements pass, want 143", calls[k], (unsigned long long)c);
        cr_assert_eq(after.memory_misses - before.memory_misses, builds[k], "%s: %llu programs built, want %llu",
                     calls[k], (unsigned long long)(after.memory_misses - before.memory_misses),
                     (unsigned long long)builds[k]);
    }
    ASSERT_OK(amp_array_view_synchronize(vo));
    for (int k = 0; k < 143; ++k) cr_assert_eq(out[k], 3 + 7 * k, "copy_if: out[%d] = %d", k, out[k]);
    ASSERT_OK(amp_array_view_destroy(vx));
    ASSERT_OK(amp_array_view_destroy(vo));
}

/* copy_if of a strided input (a section of a wider view) with tiles of 64
 * and a number of items a thread takes that 4 does not divide: the strided
 * load went on in groups of 4 past a thread's items and stored the next
 * chunk's elements past its tile_static (the CPU accelerator's process
 * ended with SIGSEGV at 9 and 10). */
static void copy_if_strided_with_items(amp_accelerator *acc, const char *items)
{
    setenv("AMP_ALG_TILE", "64", 1);
    setenv("AMP_ALG_SELECT_ITEMS", items, 1);
    enum { H = 64, W = 64, N = 4096 };
    static int32_t x[H][W], out[N];
    for (int r = 0; r < H; ++r)
        for (int c = 0; c < W; ++c) x[r][c] = (r * 31 + c * 17) % 13 - 6;
    for (int i = 0; i < N; ++i) out[i] = -99;
    amp_array_view *vx = test_view(x, 4, amp_extent_2d(H, W), AMP_READ_ONLY), *sec = NULL;
    ASSERT_OK(amp_array_view_section(vx, amp_index_2d(1, 1), amp_extent_2d(60, 33), &sec));
    amp_array_view *vo = test_view(out, 4, amp_extent_1d(N), AMP_READ_WRITE);
    uint64_t count = 0;
    ASSERT_OK(amp_copy_if(default_view(acc), amp_arg_view(sec), amp_arg_view(vo), AMP_TYPE_INT32, "x > 0", NULL,
                          &count));
    ASSERT_OK(amp_array_view_synchronize(vo));
    uint64_t k = 0;
    for (int r = 1; r < 61; ++r)
        for (int c = 1; c < 34; ++c)
            if (x[r][c] > 0) {
                cr_assert_eq(out[k], x[r][c], "items %s: out[%llu] = %d, want x[%d][%d] = %d", items,
                             (unsigned long long)k, out[k], r, c, x[r][c]);
                ++k;
            }
    cr_assert_eq(count, k, "items %s: count %llu, want %llu", items, (unsigned long long)count, (unsigned long long)k);
    for (; k < N; ++k) cr_assert_eq(out[k], -99, "items %s: copy_if wrote past its count at %llu", items,
                                    (unsigned long long)k);
    ASSERT_OK(amp_array_view_destroy(sec));
    ASSERT_OK(amp_array_view_destroy(vx));
    ASSERT_OK(amp_array_view_destroy(vo));
}

ACCEL_TEST(algorithms, copy_if_strided_with_items_nine) { copy_if_strided_with_items(acc, "9"); }
ACCEL_TEST(algorithms, copy_if_strided_with_items_ten) { copy_if_strided_with_items(acc, "10"); }

ACCEL_TEST(algorithms, count_and_copy_if)
{
    amp_accelerator_view *q = default_view(acc);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si += 2) {
        size_t n = sizes[si];
        int64_t *x = test_xmalloc(n * 8), *out = test_xmalloc(n * 8);
        for (size_t i = 0; i < n; ++i) {
            x[i] = (int64_t)((i * 2654435761u) % 1000) - 500;
            out[i] = -7777;
        }
        int64_t thr = 100;
        uint64_t want = 0;
        for (size_t i = 0; i < n; ++i) want += x[i] > thr && (i & 1) == 0;
        amp_array_view *vx = test_view(x, 8, amp_extent_1d((int)n), AMP_READ_ONLY);
        amp_array_view *vo = test_view(out, 8, amp_extent_1d((int)n), AMP_READ_WRITE);
        uint64_t c = 0;
        ASSERT_OK(amp_count_if(q, amp_arg_view(vx), AMP_TYPE_INT64, "x > arg && (i & 1) == 0", &thr, &c));
        cr_assert_eq(c, want, "count_if of %zu: %llu want %llu", n, (unsigned long long)c, (unsigned long long)want);
        c = 0;
        ASSERT_OK(amp_copy_if(q, amp_arg_view(vx), amp_arg_view(vo), AMP_TYPE_INT64, "x > arg && (i & 1) == 0", &thr, &c));
        cr_assert_eq(c, want);
        ASSERT_OK(amp_array_view_synchronize(vo));
        size_t k = 0;
        for (size_t i = 0; i < n; ++i)
            if (x[i] > thr && (i & 1) == 0) {
                cr_assert_eq(out[k], x[i], "copy_if of %zu: out[%zu] = %lld, want x[%zu] = %lld", n, k,
                             (long long)out[k], i, (long long)x[i]);
                ++k;
            }
        for (; k < n; ++k) cr_assert_eq(out[k], -7777, "copy_if wrote past its count at %zu", k);
        ASSERT_OK(amp_array_view_destroy(vx));
        ASSERT_OK(amp_array_view_destroy(vo));
        free(x);
        free(out);
    }
    /* Floats, NaNs never pass x == x; an output too small. */
    enum { N = 5000 };
    static float f[N], o[100];
    for (int i = 0; i < N; ++i) f[i] = i % 3 == 0 ? NAN : (float)i;
    amp_array_view *vf = test_view(f, 4, amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *small = test_view(o, 4, amp_extent_1d(100), AMP_READ_WRITE);
    uint64_t c = 0;
    ASSERT_OK(amp_count_if(q, amp_arg_view(vf), AMP_TYPE_FLOAT32, "x == x", NULL, &c));
    cr_assert_eq(c, (uint64_t)(N - (N + 2) / 3));
    ASSERT_STATUS(amp_copy_if(q, amp_arg_view(vf), amp_arg_view(small), AMP_TYPE_FLOAT32, "x == x", NULL, &c),
                  AMP_ERROR_OUT_OF_BOUNDS);
    cr_assert_eq(c, 0);
    cr_assert(strstr(amp_last_error(), "3333") && strstr(amp_last_error(), "100"), "%s", amp_last_error());
    ASSERT_OK(amp_array_view_synchronize(small));
    cr_assert_eq(o[0], 1.0f);
    cr_assert_eq(o[99], 149.0f);
    /* in and out may not overlap (a writable view of the input, so that
     * the overlap, not the read-only output, is what is refused). */
    amp_array_view *vf_rw = test_view(f, 4, amp_extent_1d(N), AMP_READ_WRITE), *s1 = NULL;
    ASSERT_OK(amp_array_view_section(vf_rw, amp_index_1d(10), amp_extent_1d(100), &s1));
    ASSERT_STATUS(amp_copy_if(q, amp_arg_view(vf_rw), amp_arg_view(s1), AMP_TYPE_FLOAT32, "true", NULL, &c),
                  AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "overlap"), "%s", amp_last_error());
    ASSERT_OK(amp_array_view_synchronize(vf_rw));
    for (int i = 0; i < N; ++i)
        cr_assert(i % 3 == 0 ? isnan(f[i]) : f[i] == (float)i, "the refused copy_if changed its input at %d", i);
    ASSERT_OK(amp_array_view_destroy(s1));
    ASSERT_OK(amp_array_view_destroy(vf_rw));
    ASSERT_OK(amp_array_view_destroy(small));
    ASSERT_OK(amp_array_view_destroy(vf));
}

/* ----------------------------------------------------------- fill, iota */

ACCEL_TEST(algorithms, fill_and_iota)
{
    amp_accelerator_view *q = default_view(acc);
    enum { N = 100003 };
    static int32_t a[N];
    static double d[N];
    static struct { int32_t v[3]; } s3[1000];
    for (int i = 0; i < N; ++i) a[i] = -1;
    amp_array_view *va = test_view(a, 4, amp_extent_1d(N), AMP_WRITE_ONLY);
    int32_t seven = 7;
    ASSERT_OK(amp_fill(q, amp_arg_view(va), &seven));
    ASSERT_OK(amp_array_view_synchronize(va));
    for (int i = 0; i < N; ++i) cr_assert_eq(a[i], 7, "fill at %d", i);
    int32_t start = -50, step = 3;
    ASSERT_OK(amp_iota(q, amp_arg_view(va), AMP_TYPE_INT32, &start, &step));
    ASSERT_OK(amp_array_view_synchronize(va));
    for (int i = 0; i < N; ++i) cr_assert_eq(a[i], -50 + 3 * i, "iota at %d", i);
    ASSERT_OK(amp_array_view_destroy(va));
    amp_array_view *vd = test_view(d, 8, amp_extent_2d(1000, 100), AMP_READ_WRITE), *sec = NULL;
    ASSERT_OK(amp_array_view_section(vd, amp_index_2d(10, 20), amp_extent_2d(30, 40), &sec));
    double zero = 0.0, half = 0.5;
    ASSERT_OK(amp_fill(q, amp_arg_view(vd), &zero));
    ASSERT_OK(amp_iota(q, amp_arg_view(sec), AMP_TYPE_FLOAT64, &half, NULL));
    ASSERT_OK(amp_array_view_synchronize(vd));
    for (int r = 0; r < 1000; ++r)
        for (int c = 0; c < 100; ++c) {
            bool in = r >= 10 && r < 40 && c >= 20 && c < 60;
            double want = in ? 0.5 + (r - 10) * 40 + (c - 20) : 0.0;
            cr_assert_eq(d[r * 100 + c], want, "fill/iota of a section at (%d, %d)", r, c);
        }
    ASSERT_OK(amp_array_view_destroy(sec));
    ASSERT_OK(amp_array_view_destroy(vd));
    /* A 12-byte element. */
    amp_array_view *v3 = test_view(s3, 12, amp_extent_1d(1000), AMP_READ_WRITE);
    int32_t pat[3] = {1, -2, 3};
    ASSERT_OK(amp_fill(q, amp_arg_view(v3), pat));
    ASSERT_OK(amp_array_view_destroy(v3));
    for (int i = 0; i < 1000; ++i) cr_assert(s3[i].v[0] == 1 && s3[i].v[1] == -2 && s3[i].v[2] == 3, "fill12 at %d", i);
}

/* ------------------------------------------------------------ refusals */

ACCEL_TEST(algorithms, refusals)
{
    amp_accelerator_view *q = default_view(acc);
    float x[64] = {0};
    double r = 0;
    amp_array_view *v = test_view(x, 4, amp_extent_1d(64), AMP_READ_ONLY);
    /* The refusals of calls that write: a writable view, so that what is
     * refused is the argument named, not the view's access; left as it was. */
    float z[64];
    for (int i = 0; i < 64; ++i) z[i] = (float)(64 - i);
    amp_array_view *vw = test_view(z, 4, amp_extent_1d(64), AMP_READ_WRITE);
    /* Element size against the type, naming both. */
    ASSERT_STATUS(amp_reduce(q, amp_arg_view(v), AMP_TYPE_FLOAT64, AMP_OP_SUM, &r), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "4-byte") && strstr(amp_last_error(), "float64"), "%s", amp_last_error());
    /* Bitwise operators on floating point, naming both. */
    ASSERT_STATUS(amp_reduce(q, amp_arg_view(v), AMP_TYPE_FLOAT32, AMP_OP_XOR, &r), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "AMP_OP_XOR") && strstr(amp_last_error(), "float32"), "%s", amp_last_error());
    ASSERT_STATUS(amp_scan(q, amp_arg_view(vw), amp_arg_view(vw), AMP_TYPE_FLOAT32, AMP_OP_AND, AMP_SCAN_INCLUSIVE),
                  AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "AMP_OP_AND") && strstr(amp_last_error(), "bitwise"), "%s", amp_last_error());
    /* Values outside the enums, NULL results, non-data arguments. */
    ASSERT_STATUS(amp_reduce(q, amp_arg_view(v), (amp_type)9, AMP_OP_SUM, &r), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_reduce(q, amp_arg_view(v), AMP_TYPE_FLOAT32, (amp_op)42, &r), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_reduce(q, amp_arg_view(v), AMP_TYPE_FLOAT32, (amp_op)-1, &r), AMP_ERROR_INVALID_ARGUMENT);
    /* amp_op's operators that are not associative (index arithmetic's),
     * named. */
    static const amp_op unassociative[] = {AMP_OP_SUB, AMP_OP_DIV, AMP_OP_MOD};
    for (int i = 0; i < 3; ++i) {
        ASSERT_STATUS(amp_reduce(q, amp_arg_view(v), AMP_TYPE_FLOAT32, unassociative[i], &r),
                      AMP_ERROR_INVALID_ARGUMENT);
        cr_assert(strstr(amp_last_error(), amp_op_name(unassociative[i])) &&
                      strstr(amp_last_error(), "not associative"), "%s", amp_last_error());
        ASSERT_STATUS(amp_scan(q, amp_arg_view(vw), amp_arg_view(vw), AMP_TYPE_INT32, unassociative[i],
                               AMP_SCAN_EXCLUSIVE),
                      AMP_ERROR_INVALID_ARGUMENT);
        cr_assert(strstr(amp_last_error(), amp_op_name(unassociative[i])) &&
                      strstr(amp_last_error(), "not associative"), "%s", amp_last_error());
    }
    /* Index arithmetic refuses the algorithms' operators. */
    amp_extent e1;
    ASSERT_STATUS(amp_extent_scalar(amp_extent_1d(4), AMP_OP_MAX, 2, &e1), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_str_eq(amp_op_name(AMP_OP_ADD), "AMP_OP_SUM");
    ASSERT_STATUS(amp_reduce(q, amp_arg_view(v), AMP_TYPE_FLOAT32, AMP_OP_SUM, NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_reduce(q, amp_arg_int32(5), AMP_TYPE_INT32, AMP_OP_SUM, &r), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "view or an array"), "%s", amp_last_error());
    ASSERT_STATUS(amp_reduce(q, amp_arg_view(NULL), AMP_TYPE_INT32, AMP_OP_SUM, &r), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_transform_reduce(q, amp_arg_view(v), amp_arg_view(v), AMP_TYPE_FLOAT32, (amp_map)42, AMP_OP_SUM,
                                       &r),
                  AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_scan(q, amp_arg_view(vw), amp_arg_view(vw), AMP_TYPE_FLOAT32, AMP_OP_SUM, (amp_scan_kind)3),
                  AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "kind 3 is not an amp_scan_kind"), "%s", amp_last_error());
    ASSERT_STATUS(amp_sort(q, amp_arg_view(vw), AMP_TYPE_FLOAT32, (amp_order)2), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "order 2 is not an amp_order"), "%s", amp_last_error());
    ASSERT_OK(amp_array_view_synchronize(vw));
    for (int i = 0; i < 64; ++i) cr_assert_eq(z[i], (float)(64 - i), "a refused call wrote its view at %d", i);
    ASSERT_OK(amp_array_view_destroy(vw));
    /* Writing a read-only view. */
    ASSERT_STATUS(amp_sort(q, amp_arg_view(v), AMP_TYPE_FLOAT32, AMP_ASCENDING), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "AMP_READ_ONLY"), "%s", amp_last_error());
    float y[64];
    amp_array_view *w = test_view(y, 4, amp_extent_1d(64), AMP_READ_WRITE), *w1 = NULL, *w2 = NULL;
    ASSERT_OK(amp_array_view_section(w, amp_index_1d(0), amp_extent_1d(40), &w1));
    ASSERT_OK(amp_array_view_section(w, amp_index_1d(20), amp_extent_1d(40), &w2));
    /* Overlapping scan in/out that are not the same elements; sizes. */
    ASSERT_STATUS(amp_scan(q, amp_arg_view(w1), amp_arg_view(w2), AMP_TYPE_FLOAT32, AMP_OP_SUM, AMP_SCAN_INCLUSIVE),
                  AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_scan(q, amp_arg_view(v), amp_arg_view(w1), AMP_TYPE_FLOAT32, AMP_OP_SUM, AMP_SCAN_INCLUSIVE),
                  AMP_ERROR_INVALID_EXTENT);
    /* Keys and values overlapping; values of an unsupported size. */
    ASSERT_STATUS(amp_sort_by_key(q, amp_arg_view(w1), amp_arg_view(w2), AMP_TYPE_FLOAT32, AMP_ASCENDING),
                  AMP_ERROR_INVALID_ARGUMENT);
    static char c3[64][3];
    amp_array_view *v3 = test_view(c3, 3, amp_extent_1d(64), AMP_READ_WRITE);
    ASSERT_STATUS(amp_sort_by_key(q, amp_arg_view(w), amp_arg_view(v3), AMP_TYPE_FLOAT32, AMP_ASCENDING),
                  AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "3-byte"), "%s", amp_last_error());
    ASSERT_STATUS(amp_iota(q, amp_arg_view(w), AMP_TYPE_FLOAT32, NULL, NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_fill(q, amp_arg_view(w), NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_count_if(q, amp_arg_view(w), AMP_TYPE_FLOAT32, NULL, NULL, &(uint64_t){0}),
                  AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_reduction_create(acc, NULL, &(amp_reduction *){NULL}), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_reduction_destroy(NULL));
    ASSERT_OK(amp_array_view_destroy(v3));
    ASSERT_OK(amp_array_view_destroy(w1));
    ASSERT_OK(amp_array_view_destroy(w2));
    ASSERT_OK(amp_array_view_destroy(w));
    ASSERT_OK(amp_array_view_destroy(v));
    cr_assert_eq(amp_type_size((amp_type)0), 0);
    cr_assert_str_eq(amp_type_name(AMP_TYPE_UINT64), "uint64");
    cr_assert_str_eq(amp_op_name((amp_op)99), "unknown");
}

/* hipamp.h: on failure, out-parameters are zeroed. A reduction's host
 * result is one: its type's bytes (the wider accumulation's where the
 * options ask for it), and only those. */
ACCEL_TEST(algorithms, a_refused_reduction_zeroes_its_host_result)
{
    amp_accelerator_view *q = default_view(acc);
    float x[64];
    for (int i = 0; i < 64; ++i) x[i] = (float)i;
    amp_array_view *v = test_view(x, 4, amp_extent_1d(64), AMP_READ_ONLY);
    union {
        double d;
        float f;
        int64_t i64;
        unsigned char b[16];
    } r;
    /* float64 over a 4-byte view: 8 bytes zeroed, the next 8 left. */
    memset(&r, 0x5a, sizeof r);
    ASSERT_STATUS(amp_reduce(q, amp_arg_view(v), AMP_TYPE_FLOAT64, AMP_OP_SUM, &r), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_eq(r.d, 0.0, "amp_reduce left its result on failure");
    for (int i = 8; i < 16; ++i) cr_assert_eq(r.b[i], 0x5a, "amp_reduce wrote past its 8-byte result at %d", i);
    /* Not associative; a map that is no amp_map; y not data. */
    memset(&r, 0x5a, sizeof r);
    ASSERT_STATUS(amp_reduce(q, amp_arg_view(v), AMP_TYPE_FLOAT32, AMP_OP_SUB, &r), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_eq(r.f, 0.0f);
    cr_assert_eq(r.b[4], 0x5a, "a float32 result is 4 bytes");
    memset(&r, 0x5a, sizeof r);
    ASSERT_STATUS(amp_transform_reduce(q, amp_arg_view(v), amp_arg_view(v), AMP_TYPE_FLOAT32, (amp_map)42, AMP_OP_SUM,
                                       &r),
                  AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_eq(r.f, 0.0f);
    memset(&r, 0x5a, sizeof r);
    ASSERT_STATUS(amp_transform_reduce(q, amp_arg_view(v), amp_arg_int32(0), AMP_TYPE_FLOAT32, AMP_MAP_PRODUCT,
                                       AMP_OP_SUM, &r),
                  AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_eq(r.f, 0.0f);
    /* A wider accumulation: its 8 bytes. */
    int32_t n[16];
    for (int i = 0; i < 16; ++i) n[i] = i;
    amp_array_view *vn = test_view(n, 4, amp_extent_1d(16), AMP_READ_ONLY);
    amp_alg_options wide = {.accumulate = AMP_TYPE_INT64};
    memset(&r, 0x5a, sizeof r);
    ASSERT_STATUS(amp_reduce_with(q, amp_arg_view(vn), AMP_TYPE_INT32, AMP_OP_DIV, &wide, &r),
                  AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_eq(r.i64, 0, "the wider accumulation's 8 bytes");
    cr_assert_eq(r.b[8], 0x5a);
    /* An unknown type has no size: nothing written. */
    memset(&r, 0x5a, sizeof r);
    ASSERT_STATUS(amp_reduce(q, amp_arg_view(vn), (amp_type)9, AMP_OP_SUM, &r), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_eq(r.b[0], 0x5a);
    /* A user reduction's result: its type's bytes. */
    amp_reduction_desc d = {.name = "zsum", .inputs = "double x", .type = AMP_TYPE_FLOAT64, .map = "x",
                            .reduce = "a + b", .identity = "0"};
    amp_reduction *u = NULL;
    ASSERT_OK(amp_reduction_create(acc, &d, &u));
    amp_arg wrong[] = {amp_arg_view(v)}; /* 4-byte elements for a double input */
    memset(&r, 0x5a, sizeof r);
    ASSERT_STATUS(amp_reduction_apply(q, u, wrong, 1, &r), AMP_ERROR_ARGUMENT_MISMATCH);
    cr_assert_eq(r.d, 0.0, "amp_reduction_apply left its result on failure");
    cr_assert_eq(r.b[8], 0x5a);
    /* And a call that works writes its value. */
    double xs[4] = {1, 2, 3, 4.5};
    amp_array_view *vd = test_view(xs, 8, amp_extent_1d(4), AMP_READ_ONLY);
    amp_arg right[] = {amp_arg_view(vd)};
    ASSERT_OK(amp_reduction_apply(q, u, right, 1, &r.d));
    cr_assert_eq(r.d, 10.5);
    ASSERT_OK(amp_reduction_destroy(u));
    ASSERT_OK(amp_array_view_destroy(vd));
    ASSERT_OK(amp_array_view_destroy(vn));
    ASSERT_OK(amp_array_view_destroy(v));
}

/* ---------------------------------------------------------- view shapes */

/* Views with layouts of their own (issue 21): reinterpret_as and view_as
 * views, ranks up to AMP_MAX_RANK, and sections of them whose box holds
 * more than their elements. With AMP_CPU_UNIFIED=0 every copy is real, so
 * an output whose box is not exactly its elements must still be copied in
 * (fill and sort would otherwise write back stale neighbours). */
ACCEL_TEST(algorithms, view_shapes)
{
    amp_accelerator_view *q = default_view(acc);
    enum { N = 384 };
    /* reinterpret_as: N uint64 seen as 2N uint32. */
    static uint64_t w[N];
    uint64_t s32 = 0;
    for (int i = 0; i < N; ++i) {
        w[i] = ((uint64_t)(i * 2654435761u) << 32) | (uint32_t)(i * 40503u + 7);
        s32 += (uint32_t)w[i] + (uint32_t)(w[i] >> 32);
    }
    amp_array_view *vw = test_view(w, 8, amp_extent_1d(N), AMP_READ_WRITE), *v32 = NULL;
    ASSERT_OK(amp_array_view_reinterpret_as(vw, 4, &v32));
    uint32_t sum = 0;
    ASSERT_OK(amp_reduce(q, amp_arg_view(v32), AMP_TYPE_UINT32, AMP_OP_SUM, &sum));
    cr_assert_eq(sum, (uint32_t)s32, "reinterpret_as: sum %u, want %u", sum, (uint32_t)s32);
    /* Its element size is its own: as the 8-byte type it is refused. */
    ASSERT_STATUS(amp_reduce(q, amp_arg_view(v32), AMP_TYPE_UINT64, AMP_OP_SUM, &(uint64_t){0}),
                  AMP_ERROR_INVALID_ARGUMENT);
    static uint64_t w_before[N];
    memcpy(w_before, w, sizeof w_before);
    ASSERT_OK(amp_sort(q, amp_arg_view(v32), AMP_TYPE_UINT32, AMP_ASCENDING));
    ASSERT_OK(amp_array_view_synchronize(vw));
    assert_sorted_from(AMP_TYPE_UINT32, w, w_before, 2 * (size_t)N, AMP_ASCENDING, "reinterpret_as sort");
    ASSERT_OK(amp_array_view_destroy(v32));
    ASSERT_OK(amp_array_view_destroy(vw));

    /* view_as: N floats as rank 8 (2x2x2x2x2x2x2x3), reduced, scanned in
     * place and sorted; one contiguous run, so it merges to rank 1. */
    static float x[N], want[N];
    for (int i = 0; i < N; ++i) x[i] = (float)((i * 37) % 101) - 50;
    static const int dims8[8] = {2, 2, 2, 2, 2, 2, 2, 3};
    amp_array_view *v1 = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE), *v8 = NULL;
    ASSERT_OK(amp_array_view_view_as(v1, amp_extent_make(8, dims8), &v8));
    float mx = 0;
    ASSERT_OK(amp_reduce(q, amp_arg_view(v8), AMP_TYPE_FLOAT32, AMP_OP_MAX, &mx));
    cr_assert_eq(mx, 50.0f);
    double acc_run = 0;
    for (int i = 0; i < N; ++i) {
        acc_run += x[i];
        want[i] = (float)acc_run;
    }
    ASSERT_OK(amp_scan(q, amp_arg_view(v8), amp_arg_view(v8), AMP_TYPE_FLOAT32, AMP_OP_SUM, AMP_SCAN_INCLUSIVE));
    ASSERT_OK(amp_array_view_synchronize(v1));
    for (int i = 0; i < N; ++i) cr_assert_eq(x[i], want[i], "rank-8 scan: x[%d] = %g, want %g", i, x[i], want[i]);
    ASSERT_OK(amp_sort(q, amp_arg_view(v8), AMP_TYPE_FLOAT32, AMP_DESCENDING));
    ASSERT_OK(amp_array_view_synchronize(v1));
    assert_sorted_from(AMP_TYPE_FLOAT32, x, want, N, AMP_DESCENDING, "rank-8 sort"); /* want: the scan's result */
    ASSERT_OK(amp_array_view_destroy(v8));

    /* A section of a view_as view that does not fill a box of the storage
     * (columns 0..2 of 24 elements seen as 4 x 6): its box is rows 0..3's
     * first 21 elements; fill and iota write only the section's. */
    static int32_t c[24];
    for (int i = 0; i < 24; ++i) c[i] = 1000 + i;
    amp_array_view *vc = test_view(c, 4, amp_extent_1d(24), AMP_READ_WRITE), *v46 = NULL, *cols = NULL;
    ASSERT_OK(amp_array_view_view_as(vc, amp_extent_2d(4, 6), &v46));
    ASSERT_OK(amp_array_view_section(v46, amp_index_2d(0, 0), amp_extent_2d(4, 3), &cols));
    int32_t minus = -1, start = 0;
    ASSERT_OK(amp_fill(q, amp_arg_view(cols), &minus));
    ASSERT_OK(amp_array_view_synchronize(vc));
    for (int i = 0; i < 24; ++i)
        cr_assert_eq(c[i], i % 6 < 3 ? -1 : 1000 + i, "fill of a column block: c[%d] = %d", i, c[i]);
    ASSERT_OK(amp_iota(q, amp_arg_view(cols), AMP_TYPE_INT32, &start, NULL));
    ASSERT_OK(amp_array_view_synchronize(vc));
    for (int i = 0; i < 24; ++i)
        cr_assert_eq(c[i], i % 6 < 3 ? (i / 6) * 3 + i % 6 : 1000 + i, "iota of a column block: c[%d] = %d", i, c[i]);
    int32_t csum = 0, cdot = 0;
    ASSERT_OK(amp_reduce(q, amp_arg_view(cols), AMP_TYPE_INT32, AMP_OP_SUM, &csum));
    ASSERT_OK(amp_transform_reduce(q, amp_arg_view(cols), amp_arg_view(cols), AMP_TYPE_INT32, AMP_MAP_PRODUCT,
                                   AMP_OP_SUM, &cdot));
    cr_assert(csum == 66 && cdot == 506, "column block: sum %d (want 66), dot %d (want 506)", csum, cdot);
    /* The whole view and the section overlap without being the same
     * elements: a scan between them is refused. */
    amp_array_view *first12 = NULL;
    ASSERT_OK(amp_array_view_section(vc, amp_index_1d(0), amp_extent_1d(12), &first12));
    ASSERT_STATUS(amp_scan(q, amp_arg_view(first12), amp_arg_view(cols), AMP_TYPE_INT32, AMP_OP_SUM,
                           AMP_SCAN_INCLUSIVE),
                  AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_array_view_destroy(first12));
    ASSERT_OK(amp_array_view_destroy(cols));
    ASSERT_OK(amp_array_view_destroy(v46));
    ASSERT_OK(amp_array_view_destroy(vc));
    ASSERT_OK(amp_array_view_destroy(v1));

    /* Rank 6: a section strided in two dimensions is taken (the full ones
     * merge); one strided in all six is refused, naming the limit. */
    enum { M = 729 }; /* 3^6 */
    static int32_t g[M];
    int64_t gsum = 0;
    for (int i = 0; i < M; ++i) g[i] = i;
    static const int full6[6] = {3, 3, 3, 3, 3, 3}, two6[6] = {3, 3, 3, 3, 3, 2}, all6[6] = {2, 2, 2, 2, 2, 2};
    for (int i = 0; i < M; ++i)
        if (i % 3 < 2) gsum += i;
    amp_array_view *v6 = test_view(g, 4, amp_extent_make(6, full6), AMP_READ_ONLY), *s2 = NULL, *s6 = NULL;
    ASSERT_OK(amp_array_view_section(v6, amp_index_make(6, NULL), amp_extent_make(6, two6), &s2));
    int32_t got32 = 0;
    ASSERT_OK(amp_reduce(q, amp_arg_view(s2), AMP_TYPE_INT32, AMP_OP_SUM, &got32));
    cr_assert_eq(got32, gsum, "rank-6 section: sum %d, want %lld", got32, (long long)gsum);
    ASSERT_OK(amp_array_view_section(v6, amp_index_make(6, NULL), amp_extent_make(6, all6), &s6));
    ASSERT_STATUS(amp_reduce(q, amp_arg_view(s6), AMP_TYPE_INT32, AMP_OP_SUM, &got32), AMP_ERROR_UNSUPPORTED);
    cr_assert(strstr(amp_last_error(), "at most 4"), "%s", amp_last_error());
    ASSERT_OK(amp_array_view_destroy(s6));
    ASSERT_OK(amp_array_view_destroy(s2));
    ASSERT_OK(amp_array_view_destroy(v6));
}

/* ------------------------------------------------------- launch graphs */

/* The host references of the recorded algorithms of recording_a_graph. */
typedef struct graph_ref {
    int32_t sum, dot;
    int64_t squares;
} graph_ref;

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

/* Inputs of replay k: x (the keys too) and y. */
static void graph_inputs(int32_t *x, int32_t *y, int n, int k)
{
    uint64_t s = 0x9e3779b97f4a7c15ull * (uint64_t)(k + 1);
    for (int i = 0; i < n; ++i) {
        x[i] = (int32_t)(rng_next(&s) % 2001) - 1000;
        y[i] = (int32_t)(rng_next(&s) % 7) - 3;
    }
}

/* On a view that records a launch graph the algorithms whose result stays
 * on the device are recorded (their scratch kept by the graph, the scan's
 * and sort's clearing launches too), and every replay computes them afresh
 * from the inputs of the moment: three replays with new inputs copied in
 * between, checked against the host each time, with direct algorithm calls
 * between the replays (which would take the graph's scratch from the pool
 * if the graph had given it back). The calls that return a result on the
 * host are AMP_ERROR_BUSY naming their _async form (count_if, copy_if:
 * none), and record nothing. A reduction a graph launches is
 * AMP_ERROR_BUSY to destroy until the graph is. */
ACCEL_TEST(algorithms, recording_a_graph)
{
    enum { N = 100003, REPLAYS = 3 };
    int32_t *x = test_xmalloc(N * 4), *y = test_xmalloc(N * 4), *got = test_xmalloc(N * 4);
    int32_t *want = test_xmalloc(N * 4), *vals = test_xmalloc(N * 4);
    int64_t *got64 = test_xmalloc(N * 8);
    static int32_t fx[1000], fy[1000];
    for (int i = 0; i < 1000; ++i) fx[i] = fy[i] = -5;
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    amp_reduction_desc rd = {.name = "squares", .inputs = "int x", .type = AMP_TYPE_INT64,
                             .map = "(long long)x * x", .reduce = "a + b", .identity = "0"};
    amp_reduction *r = NULL;
    ASSERT_OK(amp_reduction_create(acc, &rd, &r));
    /* Inputs, outputs and the one-element results, on the device. */
    amp_array *ax, *ay, *keys, *skeys, *pkeys, *pvals, *scan, *uscan, *sum, *dot, *squares;
    amp_extent e = amp_extent_1d(N), one = amp_extent_1d(1);
    ASSERT_OK(amp_array_create(q, 4, e, NULL, &ax));
    ASSERT_OK(amp_array_create(q, 4, e, NULL, &ay));
    ASSERT_OK(amp_array_create(q, 4, e, NULL, &keys));
    ASSERT_OK(amp_array_create(q, 4, e, NULL, &skeys));
    ASSERT_OK(amp_array_create(q, 4, e, NULL, &pkeys));
    ASSERT_OK(amp_array_create(q, 4, e, NULL, &pvals));
    ASSERT_OK(amp_array_create(q, 4, e, NULL, &scan));
    ASSERT_OK(amp_array_create(q, 8, e, NULL, &uscan));
    ASSERT_OK(amp_array_create(q, 4, one, NULL, &sum));
    ASSERT_OK(amp_array_create(q, 4, one, NULL, &dot));
    ASSERT_OK(amp_array_create(q, 8, one, NULL, &squares));
    int32_t minus = -1;
    ASSERT_OK(amp_fill(q, amp_arg_array(sum), &minus));
    graph_inputs(x, y, N, 0);
    ASSERT_OK(amp_array_copy_from_host(ax, x));
    ASSERT_OK(amp_array_copy_from_host(ay, y));
    amp_array_view *vfx = test_view(fx, 4, amp_extent_1d(1000), AMP_READ_WRITE);
    amp_array_view *vfy = test_view(fy, 4, amp_extent_1d(1000), AMP_READ_WRITE);

    amp_status bst = amp_graph_begin_recording(q);
    if (bst == AMP_ERROR_UNSUPPORTED) {
        ASSERT_OK(amp_accelerator_view_destroy(q));
        cr_skip_test("no launch graphs on this accelerator: %s", amp_last_error());
    }
    ASSERT_OK(bst);
    amp_arg X = amp_arg_array(ax), Y = amp_arg_array(ay);
    int32_t v = 0, seven = 7, start = 3;
    int64_t v64 = 0;
    uint64_t c = 0;
#define ASSERT_HOST_RESULT_REFUSED(call, async)                                                         \
    do {                                                                                                \
        ASSERT_STATUS(call, AMP_ERROR_BUSY);                                                            \
        cr_assert(strstr(amp_last_error(), "recording a launch graph"), "%s: %s", #call, amp_last_error()); \
        cr_assert(!(async) || strstr(amp_last_error(), (async) ? (async) : ""), "%s: %s", #call,        \
                  amp_last_error());                                                                    \
    } while (0)
    ASSERT_HOST_RESULT_REFUSED(amp_reduce(q, X, AMP_TYPE_INT32, AMP_OP_SUM, &v), "amp_reduce_async");
    ASSERT_HOST_RESULT_REFUSED(amp_transform_reduce(q, X, Y, AMP_TYPE_INT32, AMP_MAP_PRODUCT, AMP_OP_SUM, &v),
                               "amp_transform_reduce_async");
    ASSERT_HOST_RESULT_REFUSED(amp_reduction_apply(q, r, &X, 1, &v64), "amp_reduction_apply_async");
    ASSERT_HOST_RESULT_REFUSED(amp_count_if(q, X, AMP_TYPE_INT32, "x > 0", NULL, &c), NULL);
    ASSERT_HOST_RESULT_REFUSED(amp_copy_if(q, X, Y, AMP_TYPE_INT32, "x > 0", NULL, &c), NULL);
#undef ASSERT_HOST_RESULT_REFUSED
    /* The refused calls recorded nothing: that recording, ended, is empty. */
    amp_graph *refused = NULL;
    ASSERT_OK(amp_graph_end_recording(q, &refused));
    amp_graph_info none;
    ASSERT_OK(amp_graph_get_info(refused, &none));
    cr_assert(none.launches == 0 && none.copies == 0, "the refused calls recorded %llu launches and %llu copies",
              (unsigned long long)none.launches, (unsigned long long)none.copies);
    ASSERT_OK(amp_graph_destroy(refused));
    ASSERT_OK(amp_graph_begin_recording(q));
    /* Recorded: a copy and every algorithm with a device result. */
    amp_future *f = NULL;
    ASSERT_OK(amp_copy_array(ax, keys));
    ASSERT_OK(amp_copy_array(ax, pkeys));
    ASSERT_OK(amp_copy_array(ay, pvals));
    ASSERT_OK(amp_sort(q, amp_arg_array(keys), AMP_TYPE_INT32, AMP_ASCENDING));
    ASSERT_OK(amp_sort_by_key(q, amp_arg_array(pkeys), amp_arg_array(pvals), AMP_TYPE_INT32, AMP_DESCENDING));
    ASSERT_OK(amp_reduce_async(q, X, AMP_TYPE_INT32, AMP_OP_SUM, amp_arg_array(sum), &f));
    cr_assert_not_null(f, "a recorded algorithm's future");
    bool ready = false;
    ASSERT_OK(amp_future_is_ready(f, &ready));
    cr_assert(ready, "a recorded algorithm's future is complete at once");
    ASSERT_OK(amp_future_destroy(f));
    ASSERT_OK(amp_transform_reduce_async(q, X, Y, AMP_TYPE_INT32, AMP_MAP_PRODUCT, AMP_OP_SUM, amp_arg_array(dot),
                                         NULL));
    ASSERT_OK(amp_reduction_apply_async(q, r, &X, 1, amp_arg_array(squares), NULL));
    ASSERT_OK(amp_scan(q, X, amp_arg_array(scan), AMP_TYPE_INT32, AMP_OP_SUM, AMP_SCAN_INCLUSIVE));
    ASSERT_OK(amp_reduction_scan(q, r, &X, 1, amp_arg_array(uscan), AMP_SCAN_EXCLUSIVE));
    ASSERT_OK(amp_fill(q, amp_arg_view(vfx), &seven));
    ASSERT_OK(amp_iota(q, amp_arg_view(vfy), AMP_TYPE_INT32, &start, NULL));
    amp_graph *g = NULL;
    ASSERT_OK(amp_graph_end_recording(q, &g));
    amp_graph_info info;
    ASSERT_OK(amp_graph_get_info(g, &info));
    cr_assert_geq(info.launches, 12, "recorded launches: %llu", (unsigned long long)info.launches);
    cr_assert_eq(info.copies, 3, "recorded copies: %llu", (unsigned long long)info.copies);
    ASSERT_OK(amp_array_copy_to_host(sum, &v));
    cr_assert_eq(v, -1, "the recording ran the reduction");
    cr_assert_eq(fx[0], -5, "the recording ran the fill");
    ASSERT_STATUS(amp_reduction_destroy(r), AMP_ERROR_BUSY);
    cr_assert(strstr(amp_last_error(), "squares"), "%s", amp_last_error());

    for (int k = 0; k < REPLAYS; ++k) {
        if (k) {
            graph_inputs(x, y, N, k);
            ASSERT_OK(amp_array_copy_from_host(ax, x));
            ASSERT_OK(amp_array_copy_from_host(ay, y));
        }
        ASSERT_OK(amp_graph_launch(q, g));
        /* Direct calls of the same sizes between replays: their scratch
         * must not be the graph's. */
        ASSERT_OK(amp_scan(q, Y, amp_arg_array(skeys), AMP_TYPE_INT32, AMP_OP_MAX, AMP_SCAN_EXCLUSIVE));
        int32_t ymin = 0;
        ASSERT_OK(amp_reduce(q, Y, AMP_TYPE_INT32, AMP_OP_MIN, &ymin));
        cr_assert_eq(ymin, -3, "replay %d: direct reduce between replays: %d", k, ymin);
        graph_ref ref = {0, 0, 0};
        for (int i = 0; i < N; ++i) {
            ref.sum += x[i];
            ref.dot += x[i] * y[i];
            ref.squares += (int64_t)x[i] * x[i];
        }
        ASSERT_OK(amp_array_copy_to_host(sum, &v));
        cr_assert_eq(v, ref.sum, "replay %d: reduce %d, want %d", k, v, ref.sum);
        ASSERT_OK(amp_array_copy_to_host(dot, &v));
        cr_assert_eq(v, ref.dot, "replay %d: transform_reduce %d, want %d", k, v, ref.dot);
        ASSERT_OK(amp_array_copy_to_host(squares, &v64));
        cr_assert_eq(v64, ref.squares, "replay %d: user reduction %lld, want %lld", k, (long long)v64,
                     (long long)ref.squares);
        ASSERT_OK(amp_array_copy_to_host(scan, got));
        for (int i = 0, acc_ = 0; i < N; ++i) {
            acc_ += x[i];
            cr_assert_eq(got[i], acc_, "replay %d: scan[%d] = %d, want %d", k, i, got[i], acc_);
        }
        ASSERT_OK(amp_array_copy_to_host(uscan, got64));
        int64_t acc64 = 0;
        for (int i = 0; i < N; ++i) {
            cr_assert_eq(got64[i], acc64, "replay %d: user scan[%d] = %lld, want %lld", k, i, (long long)got64[i],
                         (long long)acc64);
            acc64 += (int64_t)x[i] * x[i];
        }
        memcpy(want, x, N * 4);
        qsort(want, N, 4, cmp_i32);
        ASSERT_OK(amp_array_copy_to_host(keys, got));
        cr_assert(!memcmp(got, want, N * 4), "replay %d: sort", k);
        /* Descending by key, stable: equal keys keep y's order. */
        ASSERT_OK(amp_array_copy_to_host(pkeys, got));
        ASSERT_OK(amp_array_copy_to_host(pvals, vals));
        for (int i = 0; i < N; ++i)
            cr_assert_eq(got[i], want[N - 1 - i], "replay %d: sort_by_key's keys[%d]", k, i);
        /* y's values bucketed by x's key in their order (counting sort). */
        int32_t *start = test_xmalloc(2002 * sizeof *start), *bucket = test_xmalloc(N * 4);
        memset(start, 0, 2002 * sizeof *start);
        for (int i = 0; i < N; ++i) start[x[i] + 1000 + 1]++;
        for (int b = 0; b < 2001; ++b) start[b + 1] += start[b];
        for (int i = 0; i < N; ++i) bucket[start[x[i] + 1000]++] = y[i];
        for (int b = 2001; b > 0; --b) start[b] = start[b - 1];
        start[0] = 0;
        for (int i = 0; i < N; ++i) {
            int32_t w = bucket[start[got[i] + 1000]++];
            cr_assert_eq(vals[i], w, "replay %d: sort_by_key's values[%d] = %d (key %d), want %d", k, i, vals[i],
                         got[i], w);
        }
        free(bucket);
        free(start);
        ASSERT_OK(amp_array_view_synchronize(vfx));
        ASSERT_OK(amp_array_view_synchronize(vfy));
        for (int i = 0; i < 1000; ++i) {
            cr_assert_eq(fx[i], 7, "replayed fill: x[%d] = %d", i, fx[i]);
            cr_assert_eq(fy[i], 3 + i, "replayed iota: y[%d] = %d", i, fy[i]);
        }
    }
    /* After the recording the view runs every algorithm again. */
    ASSERT_OK(amp_reduce(q, amp_arg_view(vfy), AMP_TYPE_INT32, AMP_OP_MAX, &v));
    cr_assert_eq(v, 3 + 1000 - 1);
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_reduction_destroy(r));
    amp_array *arrays[] = {ax, ay, keys, skeys, pkeys, pvals, scan, uscan, sum, dot, squares};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) ASSERT_OK(amp_array_destroy(arrays[i]));
    ASSERT_OK(amp_array_view_destroy(vfy));
    ASSERT_OK(amp_array_view_destroy(vfx));
    ASSERT_OK(amp_accelerator_view_destroy(q));
    free(x);
    free(y);
    free(got);
    free(want);
    free(vals);
    free(got64);
}

/* An algorithm refused for a bad argument while recording records nothing
 * and the recording goes on: the graph holds the next call's launches and
 * replays them. */
ACCEL_TEST(algorithms, recording_goes_on_after_a_refused_algorithm)
{
    enum { N = 4096 };
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    amp_array *a = NULL, *res = NULL;
    ASSERT_OK(amp_array_create(q, 4, amp_extent_1d(N), NULL, &a));
    ASSERT_OK(amp_array_create(q, 4, amp_extent_1d(1), NULL, &res));
    amp_status bst = amp_graph_begin_recording(q);
    if (bst == AMP_ERROR_UNSUPPORTED) {
        ASSERT_OK(amp_accelerator_view_destroy(q));
        cr_skip_test("no launch graphs on this accelerator: %s", amp_last_error());
    }
    ASSERT_OK(bst);
    /* A bad argument: nothing recorded, the recording goes on. */
    ASSERT_STATUS(amp_reduce_async(q, amp_arg_array(a), AMP_TYPE_INT32, AMP_OP_SUB, amp_arg_array(res), NULL),
                  AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_reduce_async(q, amp_arg_array(a), AMP_TYPE_INT32, AMP_OP_SUM, amp_arg_array(res), NULL));
    amp_graph *g = NULL, *alone = NULL;
    ASSERT_OK(amp_graph_end_recording(q, &g));
    /* It holds what the accepted call alone records. */
    ASSERT_OK(amp_graph_begin_recording(q));
    ASSERT_OK(amp_reduce_async(q, amp_arg_array(a), AMP_TYPE_INT32, AMP_OP_SUM, amp_arg_array(res), NULL));
    ASSERT_OK(amp_graph_end_recording(q, &alone));
    amp_graph_info gi, ai;
    ASSERT_OK(amp_graph_get_info(g, &gi));
    ASSERT_OK(amp_graph_get_info(alone, &ai));
    cr_assert(gi.launches == ai.launches && gi.copies == ai.copies,
              "with the refused call: %llu launches, %llu copies; the accepted call alone: %llu, %llu",
              (unsigned long long)gi.launches, (unsigned long long)gi.copies, (unsigned long long)ai.launches,
              (unsigned long long)ai.copies);
    ASSERT_OK(amp_graph_destroy(alone));
    int32_t ones[N], got = 0;
    for (int i = 0; i < N; ++i) ones[i] = 1;
    ASSERT_OK(amp_array_copy_from_host(a, ones));
    ASSERT_OK(amp_graph_launch(q, g));
    ASSERT_OK(amp_array_copy_to_host(res, &got));
    cr_assert_eq(got, N, "replayed reduce: %d", got);
    ASSERT_OK(amp_graph_destroy(g));
    ASSERT_OK(amp_array_destroy(res));
    ASSERT_OK(amp_array_destroy(a));
    ASSERT_OK(amp_accelerator_view_destroy(q));
}

/* -------------------------------------------------------- stale handles */

/* Every algorithm given a destroyed view, array, queue or reduction says
 * "destroyed" (naming the argument) and runs nothing; a reduction destroyed
 * twice too. With AMP_DEBUG=1 (stale_handles_debug) the registry answers. */
static void stale_handles(amp_accelerator *acc)
{
    enum { N = 64 };
    static float x[N], y[N];
    for (int i = 0; i < N; ++i) x[i] = y[i] = (float)i;
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    amp_array_view *live = test_view(y, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *v = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array *arr = NULL, *res = NULL;
    ASSERT_OK(amp_array_create(q, 4, amp_extent_1d(N), x, &arr));
    ASSERT_OK(amp_array_create(q, 4, amp_extent_1d(1), NULL, &res));
    amp_reduction_desc d = {.inputs = "float x", .type = AMP_TYPE_FLOAT32, .map = "x", .reduce = "a + b",
                            .identity = "0"};
    amp_reduction *r = NULL;
    ASSERT_OK(amp_reduction_create(acc, &d, &r));
    float got = 0;
    amp_arg la[] = {amp_arg_view(live)};
    ASSERT_OK(amp_reduction_apply(q, r, la, 1, &got));
    cr_assert_eq(got, (float)(N * (N - 1) / 2));
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_array_destroy(arr));

    /* A destroyed view or array as data, named. */
    amp_arg dv = amp_arg_view(v), da = amp_arg_array(arr), lv = amp_arg_view(live);
    uint64_t c = 0;
    amp_future *f = NULL;
    float one = 1;
    ASSERT_DESTROYED(amp_reduce(q, dv, AMP_TYPE_FLOAT32, AMP_OP_SUM, &got));
    cr_assert(strstr(amp_last_error(), "amp_reduce") && strstr(amp_last_error(), "in"), "%s", amp_last_error());
    ASSERT_DESTROYED(amp_reduce(q, da, AMP_TYPE_FLOAT32, AMP_OP_SUM, &got));
    ASSERT_DESTROYED(amp_reduce_async(q, lv, AMP_TYPE_FLOAT32, AMP_OP_SUM, amp_arg_view(v), &f));
    cr_assert(strstr(amp_last_error(), "result"), "%s", amp_last_error());
    cr_assert_null(f);
    ASSERT_DESTROYED(amp_transform_reduce(q, lv, dv, AMP_TYPE_FLOAT32, AMP_MAP_PRODUCT, AMP_OP_SUM, &got));
    cr_assert(strstr(amp_last_error(), "y"), "%s", amp_last_error());
    ASSERT_DESTROYED(amp_transform_reduce_async(q, da, lv, AMP_TYPE_FLOAT32, AMP_MAP_PRODUCT, AMP_OP_SUM,
                                                amp_arg_array(res), &f));
    ASSERT_DESTROYED(amp_scan(q, dv, lv, AMP_TYPE_FLOAT32, AMP_OP_SUM, AMP_SCAN_INCLUSIVE));
    ASSERT_DESTROYED(amp_scan(q, lv, dv, AMP_TYPE_FLOAT32, AMP_OP_SUM, AMP_SCAN_INCLUSIVE));
    ASSERT_DESTROYED(amp_sort(q, dv, AMP_TYPE_FLOAT32, AMP_ASCENDING));
    ASSERT_DESTROYED(amp_sort(q, da, AMP_TYPE_FLOAT32, AMP_ASCENDING));
    ASSERT_DESTROYED(amp_sort_by_key(q, lv, dv, AMP_TYPE_FLOAT32, AMP_ASCENDING));
    cr_assert(strstr(amp_last_error(), "values"), "%s", amp_last_error());
    ASSERT_DESTROYED(amp_count_if(q, dv, AMP_TYPE_FLOAT32, "x > 0", NULL, &c));
    ASSERT_DESTROYED(amp_copy_if(q, lv, dv, AMP_TYPE_FLOAT32, "x > 0", NULL, &c));
    ASSERT_DESTROYED(amp_copy_if(q, da, lv, AMP_TYPE_FLOAT32, "x > 0", NULL, &c));
    ASSERT_DESTROYED(amp_fill(q, dv, &one));
    ASSERT_DESTROYED(amp_fill(q, da, &one));
    ASSERT_DESTROYED(amp_iota(q, dv, AMP_TYPE_FLOAT32, &one, NULL));
    amp_arg sa[] = {dv};
    ASSERT_DESTROYED(amp_reduction_apply(q, r, sa, 1, &got));
    cr_assert(strstr(amp_last_error(), "input 0"), "%s", amp_last_error());
    ASSERT_DESTROYED(amp_reduction_apply_async(q, r, la, 1, amp_arg_view(v), &f));
    ASSERT_DESTROYED(amp_reduction_scan(q, r, sa, 1, lv, AMP_SCAN_INCLUSIVE));
    ASSERT_DESTROYED(amp_reduction_scan(q, r, la, 1, dv, AMP_SCAN_INCLUSIVE));
    cr_assert_null(f);

    /* A destroyed queue. */
    amp_accelerator_view *dq = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &dq));
    ASSERT_OK(amp_accelerator_view_destroy(dq));
    ASSERT_DESTROYED(amp_reduce(dq, lv, AMP_TYPE_FLOAT32, AMP_OP_SUM, &got));
    cr_assert(strstr(amp_last_error(), "q"), "%s", amp_last_error());
    ASSERT_DESTROYED(amp_reduce_async(dq, lv, AMP_TYPE_FLOAT32, AMP_OP_SUM, amp_arg_array(res), &f));
    ASSERT_DESTROYED(amp_transform_reduce(dq, lv, lv, AMP_TYPE_FLOAT32, AMP_MAP_PRODUCT, AMP_OP_SUM, &got));
    ASSERT_DESTROYED(amp_scan(dq, lv, lv, AMP_TYPE_FLOAT32, AMP_OP_SUM, AMP_SCAN_INCLUSIVE));
    ASSERT_DESTROYED(amp_sort(dq, lv, AMP_TYPE_FLOAT32, AMP_ASCENDING));
    ASSERT_DESTROYED(amp_sort_by_key(dq, lv, amp_arg_array(res), AMP_TYPE_FLOAT32, AMP_ASCENDING));
    ASSERT_DESTROYED(amp_count_if(dq, lv, AMP_TYPE_FLOAT32, "x > 0", NULL, &c));
    ASSERT_DESTROYED(amp_copy_if(dq, lv, amp_arg_array(res), AMP_TYPE_FLOAT32, "x > 0", NULL, &c));
    ASSERT_DESTROYED(amp_fill(dq, lv, &one));
    ASSERT_DESTROYED(amp_iota(dq, lv, AMP_TYPE_FLOAT32, &one, NULL));
    ASSERT_DESTROYED(amp_reduction_apply(dq, r, la, 1, &got));
    ASSERT_DESTROYED(amp_reduction_apply_async(dq, r, la, 1, amp_arg_array(res), &f));
    ASSERT_DESTROYED(amp_reduction_scan(dq, r, la, 1, lv, AMP_SCAN_INCLUSIVE));
    cr_assert_null(f);

    /* A destroyed reduction, and destroyed twice. */
    ASSERT_OK(amp_reduction_destroy(r));
    ASSERT_DESTROYED(amp_reduction_apply(q, r, la, 1, &got));
    cr_assert(strstr(amp_last_error(), "amp_reduction"), "%s", amp_last_error());
    ASSERT_DESTROYED(amp_reduction_apply_async(q, r, la, 1, amp_arg_array(res), &f));
    cr_assert_null(f);
    ASSERT_DESTROYED(amp_reduction_scan(q, r, la, 1, lv, AMP_SCAN_INCLUSIVE));
    ASSERT_DESTROYED(amp_reduction_destroy(r));
    /* Another kind's handle where a reduction belongs. */
    ASSERT_STATUS(amp_reduction_apply(q, (amp_reduction *)live, la, 1, &got), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "amp_array_view") || strstr(amp_last_error(), "never"), "%s",
              amp_last_error());

    /* Nothing ran: the live view is as it was, and still works. */
    ASSERT_OK(amp_array_view_synchronize(live));
    for (int i = 0; i < N; ++i) cr_assert_eq(y[i], (float)i, "y[%d] = %g", i, (double)y[i]);
    ASSERT_OK(amp_reduce(q, lv, AMP_TYPE_FLOAT32, AMP_OP_MAX, &got));
    cr_assert_eq(got, (float)(N - 1));
    ASSERT_OK(amp_array_destroy(res));
    ASSERT_OK(amp_array_view_destroy(live));
    ASSERT_OK(amp_accelerator_view_destroy(q));
}

ACCEL_TEST(algorithms, stale_handles) { stale_handles(acc); }
ACCEL_TEST(algorithms, stale_handles_debug)
{
    setenv("AMP_DEBUG", "1", 1);
    stale_handles(acc);
}

/* ------------------------------------------------------------ coherence */

/* Data a kernel left on the device is reduced there (no synchronize), and
 * host changes after refresh are seen; scan results reach the host through
 * synchronize alone. With AMP_CPU_UNIFIED=0 (test_algorithms_discrete_cpu)
 * every copy is real. */
ACCEL_TEST(algorithms, coherence_without_synchronize)
{
    amp_accelerator_view *q = default_view(acc);
    enum { N = 10000 };
    static int32_t x[N], y[N];
    for (int i = 0; i < N; ++i) x[i] = 1;
    amp_array_view *v = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE);
    int32_t s = 0;
    ASSERT_OK(amp_reduce(q, amp_arg_view(v), AMP_TYPE_INT32, AMP_OP_SUM, &s));
    cr_assert_eq(s, N);
    /* The device's copy changes (iota writes it), the host's does not yet. */
    int32_t two = 2;
    ASSERT_OK(amp_iota(q, amp_arg_view(v), AMP_TYPE_INT32, &two, &(int32_t){0}));
    ASSERT_OK(amp_reduce(q, amp_arg_view(v), AMP_TYPE_INT32, AMP_OP_SUM, &s));
    cr_assert_eq(s, 2 * N);
    ASSERT_OK(amp_array_view_synchronize(v));
    cr_assert_eq(x[N - 1], 2);
    /* The host changes it; refresh says so. */
    for (int i = 0; i < N; ++i) x[i] = 3;
    ASSERT_OK(amp_array_view_refresh(v));
    ASSERT_OK(amp_reduce(q, amp_arg_view(v), AMP_TYPE_INT32, AMP_OP_SUM, &s));
    cr_assert_eq(s, 3 * N);
    amp_array_view *vy = test_view(y, 4, amp_extent_1d(N), AMP_WRITE_ONLY);
    ASSERT_OK(amp_scan(q, amp_arg_view(v), amp_arg_view(vy), AMP_TYPE_INT32, AMP_OP_SUM, AMP_SCAN_INCLUSIVE));
    ASSERT_OK(amp_array_view_destroy(vy));
    cr_assert_eq(y[N - 1], 3 * N);
    ASSERT_OK(amp_array_view_destroy(v));
}

/* ------------------------------------------------------------- threads */

typedef struct worker {
    amp_accelerator *acc;
    int seed;
    int failures;
    char why[256];
} worker;

static int cmp_u32_descending(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x < y) - (x > y);
}

static void *work(void *p)
{
    worker *w = p;
    amp_accelerator_view *q = NULL;
    if (amp_accelerator_view_create(w->acc, &q) != AMP_OK) {
        snprintf(w->why, sizeof w->why, "view: %s", amp_last_error());
        w->failures++;
        return NULL;
    }
    enum { N = 200003 };
    uint32_t *k = malloc(N * 4), *out = malloc(N * 4), *ref = malloc(N * 4);
    for (int round = 0; round < 6 && k && out && ref; ++round) {
        uint64_t sum = 0;
        for (int i = 0; i < N; ++i) {
            k[i] = (uint32_t)((i + w->seed * 7 + round) * 2654435761u);
            sum += k[i];
        }
        amp_array_view *v = NULL, *o = NULL;
        uint64_t got = 0, c = 0;
        amp_status st = amp_array_view_create(k, 4, amp_extent_1d(N), AMP_READ_WRITE, &v);
        if (st == AMP_OK) st = amp_array_view_create(out, 4, amp_extent_1d(N), AMP_WRITE_ONLY, &o);
        uint32_t s32 = 0;
        if (st == AMP_OK) st = amp_reduce(q, amp_arg_view(v), AMP_TYPE_UINT32, AMP_OP_SUM, &s32);
        if (st == AMP_OK && s32 != (uint32_t)sum) {
            snprintf(w->why, sizeof w->why, "reduce %u want %u", s32, (uint32_t)sum);
            w->failures++;
        }
        if (st == AMP_OK) st = amp_scan(q, amp_arg_view(v), amp_arg_view(o), AMP_TYPE_UINT32, AMP_OP_MAX, AMP_SCAN_INCLUSIVE);
        if (st == AMP_OK) st = amp_sort(q, amp_arg_view(v), AMP_TYPE_UINT32, AMP_DESCENDING);
        if (st == AMP_OK) st = amp_count_if(q, amp_arg_view(v), AMP_TYPE_UINT32, "x >= arg", &(uint32_t){1u << 31}, &c);
        if (st == AMP_OK) st = amp_array_view_synchronize(v);
        if (st == AMP_OK) st = amp_array_view_synchronize(o);
        (void)got;
        if (st != AMP_OK) {
            snprintf(w->why, sizeof w->why, "%s: %s", amp_status_name(st), amp_last_error());
            w->failures++;
        } else {
            uint32_t m = 0;
            uint64_t hi = 0;
            for (int i = 0; i < N; ++i) {
                if (i && k[i - 1] < k[i]) {
                    snprintf(w->why, sizeof w->why, "not sorted at %d", i);
                    w->failures++;
                    break;
                }
                hi += k[i] >= (1u << 31);
            }
            for (int i = 0; i < N; ++i) {
                uint32_t orig = (uint32_t)((i + w->seed * 7 + round) * 2654435761u);
                m = orig > m ? orig : m;
                if (out[i] != m) {
                    snprintf(w->why, sizeof w->why, "max scan at %d", i);
                    w->failures++;
                    break;
                }
            }
            if (hi != c) {
                snprintf(w->why, sizeof w->why, "count_if %llu want %llu", (unsigned long long)c, (unsigned long long)hi);
                w->failures++;
            }
            /* The sorted keys are the keys: none lost, doubled or made up. */
            for (int i = 0; i < N; ++i) ref[i] = (uint32_t)((i + w->seed * 7 + round) * 2654435761u);
            qsort(ref, N, 4, cmp_u32_descending);
            if (memcmp(ref, k, (size_t)N * 4) != 0) {
                snprintf(w->why, sizeof w->why, "the sort's keys are not the keys sorted (round %d)", round);
                w->failures++;
            }
        }
        if (o) amp_array_view_destroy(o);
        if (v) amp_array_view_destroy(v);
    }
    free(k);
    free(out);
    free(ref);
    amp_accelerator_view_destroy(q);
    return NULL;
}

ACCEL_TEST(algorithms, two_threads_two_queues)
{
    /* Both threads also build the programs at the same time (one builds,
     * the other waits for it). */
    worker w[2] = {{acc, 1, 0, ""}, {acc, 2, 0, ""}};
    pthread_t th[2];
    for (int i = 0; i < 2; ++i) cr_assert_eq(pthread_create(&th[i], NULL, work, &w[i]), 0);
    for (int i = 0; i < 2; ++i) pthread_join(th[i], NULL);
    for (int i = 0; i < 2; ++i) cr_assert_eq(w[i].failures, 0, "thread %d: %s", i, w[i].why);
}

/* ----------------------------------------------- the CPU's loop versions */

/* Every algorithm kernel runs as loops on the CPU accelerator, not as
 * fibers (AMP_CPU_VERBOSE's report at each kernel's first fetch). */
Test(algorithms, cpu_kernels_run_as_loops)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    char path[] = "/tmp/hipamp-alg-verbose-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    setenv("AMP_CPU_VERBOSE", "1", 1);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    amp_accelerator_view *q = default_view(acc);
    float x[5000];
    for (int i = 0; i < 5000; ++i) x[i] = (float)(i % 17);
    amp_array_view *v = test_view(x, 4, amp_extent_1d(5000), AMP_READ_WRITE);
    float f = 0;
    uint64_t c = 0;
    amp_status st[12];
    st[0] = amp_reduce(q, amp_arg_view(v), AMP_TYPE_FLOAT32, AMP_OP_SUM, &f);
    st[1] = amp_scan(q, amp_arg_view(v), amp_arg_view(v), AMP_TYPE_FLOAT32, AMP_OP_MAX, AMP_SCAN_INCLUSIVE);
    st[2] = amp_sort(q, amp_arg_view(v), AMP_TYPE_FLOAT32, AMP_ASCENDING);
    st[3] = amp_copy_if(q, amp_arg_view(v), amp_arg_view(v), AMP_TYPE_FLOAT32, "x > 3", NULL, &c); /* refused: overlap */
    st[4] = amp_count_if(q, amp_arg_view(v), AMP_TYPE_FLOAT32, "x > 3", NULL, &c);
    st[5] = amp_fill(q, amp_arg_view(v), &f);
    st[6] = amp_iota(q, amp_arg_view(v), AMP_TYPE_FLOAT32, &f, NULL);
    float y[5000];
    amp_array_view *vy = test_view(y, 4, amp_extent_1d(5000), AMP_READ_WRITE);
    st[7] = amp_sort_by_key(q, amp_arg_view(v), amp_arg_view(vy), AMP_TYPE_FLOAT32, AMP_DESCENDING);
    /* The programs accumulating in a wider type: float32 products (their
     * results and outputs narrower than the accumulator), and the wide
     * accumulations of amp_alg_options. */
    st[8] = amp_reduce(q, amp_arg_view(v), AMP_TYPE_FLOAT32, AMP_OP_PRODUCT, &f);
    st[9] = amp_scan(q, amp_arg_view(v), amp_arg_view(vy), AMP_TYPE_FLOAT32, AMP_OP_PRODUCT, AMP_SCAN_EXCLUSIVE);
    amp_alg_options wide = {.accumulate = AMP_TYPE_FLOAT64};
    double d = 0, z[5000];
    st[10] = amp_reduce_with(q, amp_arg_view(v), AMP_TYPE_FLOAT32, AMP_OP_SUM, &wide, &d);
    amp_array_view *vz = test_view(z, 8, amp_extent_1d(5000), AMP_WRITE_ONLY);
    st[11] = amp_scan_with(q, amp_arg_view(v), amp_arg_view(vz), AMP_TYPE_FLOAT32, AMP_OP_SUM, AMP_SCAN_INCLUSIVE, &wide);
    amp_array_view_destroy(vz);
    amp_array_view_destroy(vy);
    amp_array_view_destroy(v);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    for (int i = 0; i < 12; ++i)
        if (i != 3) cr_assert_eq(st[i], AMP_OK, "call %d: %s", i, amp_status_name(st[i]));
    char buf[16384];
    lseek(fd, 0, SEEK_SET);
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    unlink(path);
    cr_assert_gt(n, 0, "AMP_CPU_VERBOSE printed nothing");
    buf[n] = '\0';
    cr_assert_null(strstr(buf, "as fibers"), "an algorithm kernel runs as fibers:\n%s", buf);
    static const char *const kernels[] = {"amp_alg_reduce'", "amp_alg_reduce_final'", "amp_alg_scan'", "amp_alg_clear'",
                                          "amp_alg_iota'",   "amp_alg_fill'",      "amp_alg_select'",
                                          "amp_alg_sort_hist'", "amp_alg_sort_offsets'", "amp_alg_sort_pass'"};
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; ++i) {
        char want[96];
        snprintf(want, sizeof want, "'%s runs as loops", kernels[i]);
        cr_assert_not_null(strstr(buf, want), "no \"%s\" in:\n%s", want, buf);
    }
}

/* A reduction on the CPU accelerator gives no tile fewer than
 * AMP_ALG_REDUCE_GRAIN (4096) elements: under 2 x 4096 it is one tile,
 * one launch, which the launching thread runs alone; from 8192 two or
 * more tiles and a second launch that folds their results. Each sum is
 * checked, so the launches counted are those of a right answer. */
Test(algorithms, cpu_small_reduction_is_one_launch)
{
    if (getenv("AMP_ALG_REDUCE_GRAIN")) cr_skip_test("AMP_ALG_REDUCE_GRAIN is set: this test checks the default");
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    static int32_t x[1 << 20];
    for (int i = 0; i < (1 << 20); ++i) x[i] = (i % 1000) - 300;
    static const int sizes[] = {1, 4095, 8191, 8192, 1 << 20};
    static const unsigned long long want[] = {1, 1, 1, 2, 2};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
        const int n = sizes[k];
        int64_t ref = 0;
        for (int i = 0; i < n; ++i) ref += x[i];
        amp_array_view *v = test_view(x, 4, amp_extent_1d(n), AMP_READ_ONLY);
        ASSERT_OK(amp_accelerator_view_reset_stats(q));
        int32_t sum = 0;
        ASSERT_OK(amp_reduce(q, amp_arg_view(v), AMP_TYPE_INT32, AMP_OP_SUM, &sum));
        amp_stats s;
        ASSERT_OK(amp_accelerator_view_get_stats(q, &s));
        amp_array_view_destroy(v);
        cr_assert_eq(sum, (int32_t)ref, "n = %d: sum %d, want %lld", n, sum, (long long)ref);
        cr_assert_eq(s.launches, want[k], "n = %d: %llu launches, want %llu", n, (unsigned long long)s.launches,
                     want[k]);
    }
    amp_accelerator_view_destroy(q);
}

/* The same algorithms give the same results on fibers (AMP_CPU_TILED=fibers). */
Test(algorithms, on_fibers_cpu)
{
    setenv("AMP_CPU_TILED", "fibers", 1);
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_accelerator_view *q = default_view(acc);
    check_sort(q, AMP_TYPE_INT32, 9001, AMP_DESCENDING, 4);
    enum { N = 9001 };
    static int32_t x[N], y[N];
    for (int i = 0; i < N; ++i) x[i] = i % 5;
    amp_array_view *vx = test_view(x, 4, amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vy = test_view(y, 4, amp_extent_1d(N), AMP_WRITE_ONLY);
    ASSERT_OK(amp_scan(q, amp_arg_view(vx), amp_arg_view(vy), AMP_TYPE_INT32, AMP_OP_SUM, AMP_SCAN_EXCLUSIVE));
    int32_t s = 0;
    ASSERT_OK(amp_reduce(q, amp_arg_view(vx), AMP_TYPE_INT32, AMP_OP_SUM, &s));
    ASSERT_OK(amp_array_view_destroy(vy));
    int32_t run = 0;
    for (int i = 0; i < N; ++i) {
        cr_assert_eq(y[i], run);
        run += x[i];
    }
    cr_assert_eq(s, run);
    ASSERT_OK(amp_array_view_destroy(vx));
}

/* ------------------------------------------------------- sizes past 2^31 */

/* More than 2^31 elements (a rank-2 array: a rank-1 extent stops at
 * 2^31 - 1): 8.6 GB of uint32, so on a GPU with the memory only. */
ACCEL_TEST(algorithms, count_past_2_31)
{
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    if (info.is_emulated || info.dedicated_memory < (24ull << 30))
        cr_skip_test("needs a GPU with 24 GB (8.6 GB of input): %s has %llu bytes", info.device_path,
                     (unsigned long long)info.dedicated_memory);
    amp_accelerator_view *q = default_view(acc);
    int rows = 2049, cols = 1 << 20; /* 2^31 + 2^20 elements */
    amp_array *a = NULL;
    ASSERT_OK(amp_array_create(q, 4, amp_extent_2d(rows, cols), NULL, &a));
    uint32_t one = 1;
    ASSERT_OK(amp_fill(q, amp_arg_array(a), &one));
    uint32_t s = 0;
    ASSERT_OK(amp_reduce(q, amp_arg_array(a), AMP_TYPE_UINT32, AMP_OP_SUM, &s));
    cr_assert_eq(s, (uint32_t)rows * (uint32_t)cols);
    ASSERT_OK(amp_iota(q, amp_arg_array(a), AMP_TYPE_UINT32, &(uint32_t){0}, NULL));
    uint64_t c = 0;
    ASSERT_OK(amp_count_if(q, amp_arg_array(a), AMP_TYPE_UINT32, "x != (unsigned)i", NULL, &c));
    cr_assert_eq(c, 0, "iota past 2^31: %llu elements differ from their index", (unsigned long long)c);
    ASSERT_OK(amp_array_destroy(a));
}

/* ----------------------------------------------------------- 0 elements */

/* A view of 0 elements (issue 21 made extents with a zero dimension
 * valid): reductions give the identity, on the host and on the device; the
 * rest do nothing. */
ACCEL_TEST(algorithms, zero_elements)
{
    float x[1] = {5.0f};
    amp_array_view *v = NULL;
    ASSERT_OK(amp_array_view_create(x, 4, amp_extent_1d(0), AMP_READ_WRITE, &v));
    amp_accelerator_view *q = default_view(acc);
    float s = -1, m = 0;
    ASSERT_OK(amp_reduce(q, amp_arg_view(v), AMP_TYPE_FLOAT32, AMP_OP_SUM, &s));
    cr_assert_eq(s, 0.0f);
    ASSERT_OK(amp_reduce(q, amp_arg_view(v), AMP_TYPE_FLOAT32, AMP_OP_MIN, &m));
    cr_assert(isinf(m) && m > 0, "min of nothing: %g", (double)m);
    amp_array *res = NULL;
    ASSERT_OK(amp_array_create(q, 4, amp_extent_1d(1), x, &res));
    ASSERT_OK(amp_reduce_async(q, amp_arg_view(v), AMP_TYPE_FLOAT32, AMP_OP_PRODUCT, amp_arg_array(res), NULL));
    float p = 0;
    ASSERT_OK(amp_array_copy_to_host(res, &p));
    cr_assert_eq(p, 1.0f);
    ASSERT_OK(amp_scan(q, amp_arg_view(v), amp_arg_view(v), AMP_TYPE_FLOAT32, AMP_OP_SUM, AMP_SCAN_INCLUSIVE));
    ASSERT_OK(amp_sort(q, amp_arg_view(v), AMP_TYPE_FLOAT32, AMP_ASCENDING));
    uint64_t c = 9;
    ASSERT_OK(amp_count_if(q, amp_arg_view(v), AMP_TYPE_FLOAT32, "x > 0", NULL, &c));
    cr_assert_eq(c, 0);
    ASSERT_OK(amp_fill(q, amp_arg_view(v), &s));
    ASSERT_OK(amp_array_destroy(res));
    ASSERT_OK(amp_array_view_destroy(v));
    cr_assert_eq(x[0], 5.0f, "an algorithm touched memory past a view of 0 elements");

    /* Of rank 6, strided in all six before its last dimension went to 0:
     * still nothing to do (it was refused as more than 4 strided
     * dimensions). */
    static int32_t g[729];
    for (int i = 0; i < 729; ++i) g[i] = i;
    static const int full6[6] = {3, 3, 3, 3, 3, 3}, none6[6] = {2, 2, 2, 2, 2, 0};
    amp_array_view *v6 = test_view(g, 4, amp_extent_make(6, full6), AMP_READ_WRITE), *e6 = NULL;
    ASSERT_OK(amp_array_view_section(v6, amp_index_make(6, NULL), amp_extent_make(6, none6), &e6));
    int32_t sum = -1, fill = 7;
    ASSERT_OK(amp_reduce(q, amp_arg_view(e6), AMP_TYPE_INT32, AMP_OP_SUM, &sum));
    cr_assert_eq(sum, 0);
    c = 9;
    ASSERT_OK(amp_count_if(q, amp_arg_view(e6), AMP_TYPE_INT32, "x > 0", NULL, &c));
    cr_assert_eq(c, 0);
    ASSERT_OK(amp_sort(q, amp_arg_view(e6), AMP_TYPE_INT32, AMP_ASCENDING));
    ASSERT_OK(amp_fill(q, amp_arg_view(e6), &fill));
    ASSERT_OK(amp_array_view_destroy(e6));
    ASSERT_OK(amp_array_view_synchronize(v6));
    ASSERT_OK(amp_array_view_destroy(v6));
    for (int i = 0; i < 729; ++i) cr_assert_eq(g[i], i, "an algorithm over a rank-6 view of 0 elements wrote g[%d]", i);
}

/* ------------------------------------------------ overlapping arguments */

/* Two arguments of one call may not share bytes where the call writes one
 * of them (issue 38): whether they are sections of one view, views made
 * apart over one host buffer, or arrays over one allocation; a scan in
 * place is out = in, the very view. Inputs that are only read may share. */
ACCEL_TEST(algorithms, overlapping_arguments)
{
    amp_accelerator_view *q = default_view(acc);
    enum { N = 1000 };
    static int32_t k[2 * N + 1], before[2 * N + 1];
    for (int i = 0; i < 2 * N + 1; ++i) k[i] = before[i] = (int32_t)((i * 7919) % 1000);
    amp_array_view *keys = test_view(k, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *shifted = test_view(k + 1, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *again = test_view(k, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *cell = test_view(k + 5, 4, amp_extent_1d(1), AMP_READ_WRITE);
    /* The issue's case: values at keys + 1. */
    ASSERT_STATUS(amp_sort_by_key(q, amp_arg_view(keys), amp_arg_view(shifted), AMP_TYPE_INT32, AMP_ASCENDING),
                  AMP_ERROR_INVALID_ARGUMENT);
    const char *e = amp_last_error();
    cr_assert(strstr(e, "amp_sort_by_key") && strstr(e, "keys") && strstr(e, "values") && strstr(e, "overlap"),
              "%s", e);
    ASSERT_STATUS(amp_sort_by_key(q, amp_arg_view(keys), amp_arg_view(again), AMP_TYPE_INT32, AMP_ASCENDING),
                  AMP_ERROR_INVALID_ARGUMENT);
    uint64_t c = 0;
    ASSERT_STATUS(amp_copy_if(q, amp_arg_view(keys), amp_arg_view(shifted), AMP_TYPE_INT32, "x > 500", NULL, &c),
                  AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "amp_copy_if") && strstr(amp_last_error(), "in and out"), "%s",
              amp_last_error());
    /* A scan in place takes the one view as both; another view of the
     * same bytes is not that. */
    ASSERT_STATUS(amp_scan(q, amp_arg_view(keys), amp_arg_view(shifted), AMP_TYPE_INT32, AMP_OP_SUM,
                           AMP_SCAN_INCLUSIVE),
                  AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_scan(q, amp_arg_view(keys), amp_arg_view(again), AMP_TYPE_INT32, AMP_OP_SUM,
                           AMP_SCAN_INCLUSIVE),
                  AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "amp_scan") && strstr(amp_last_error(), "must not share memory"), "%s",
              amp_last_error());
    /* Results on the device written into an input. */
    ASSERT_STATUS(amp_reduce_async(q, amp_arg_view(keys), AMP_TYPE_INT32, AMP_OP_SUM, amp_arg_view(cell), NULL),
                  AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "result") && strstr(amp_last_error(), "in"), "%s", amp_last_error());
    ASSERT_STATUS(amp_transform_reduce_async(q, amp_arg_view(shifted), amp_arg_view(keys), AMP_TYPE_INT32,
                                             AMP_MAP_PRODUCT, AMP_OP_SUM, amp_arg_view(cell), NULL),
                  AMP_ERROR_INVALID_ARGUMENT);
    amp_reduction_desc d = {.name = "isum", .inputs = "int v", .type = AMP_TYPE_INT32, .map = "v", .reduce = "a + b",
                            .identity = "0"};
    amp_reduction *r = NULL;
    ASSERT_OK(amp_reduction_create(acc, &d, &r));
    amp_arg in[] = {amp_arg_view(keys)};
    ASSERT_STATUS(amp_reduction_apply_async(q, r, in, 1, amp_arg_view(cell), NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_reduction_scan(q, r, in, 1, amp_arg_view(shifted), AMP_SCAN_INCLUSIVE),
                  AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_array_view_synchronize(keys));
    ASSERT_OK(amp_array_view_synchronize(shifted));
    cr_assert(!memcmp(k, before, sizeof k), "a refused call changed the data");

    /* Read-only inputs may share bytes: x . y with y = x shifted by one. */
    int32_t dot = 0, want = 0;
    for (int i = 0; i < N; ++i) want += k[i] * k[i + 1];
    ASSERT_OK(amp_transform_reduce(q, amp_arg_view(keys), amp_arg_view(shifted), AMP_TYPE_INT32, AMP_MAP_PRODUCT,
                                   AMP_OP_SUM, &dot));
    cr_assert_eq(dot, want);
    /* The same view as in and out: in place. */
    int32_t run = 0;
    int32_t *scanned = test_xmalloc(N * 4);
    for (int i = 0; i < N; ++i) scanned[i] = run += k[i];
    ASSERT_OK(amp_scan(q, amp_arg_view(again), amp_arg_view(again), AMP_TYPE_INT32, AMP_OP_SUM, AMP_SCAN_INCLUSIVE));
    ASSERT_OK(amp_array_view_synchronize(again));
    cr_assert(!memcmp(k, scanned, N * 4), "scan in place");
    free(scanned);
    ASSERT_OK(amp_array_view_destroy(again));
    ASSERT_OK(amp_array_view_destroy(cell));
    ASSERT_OK(amp_array_view_destroy(shifted));
    ASSERT_OK(amp_array_view_destroy(keys));
    ASSERT_OK(amp_reduction_destroy(r));

    /* Views of one host buffer made apart whose elements interleave without
     * sharing a byte (column blocks of one matrix): keys and values apart. */
    enum { R = 50, C = 20 };
    static int32_t m[R * 2 * C];
    for (int i = 0; i < R * 2 * C; ++i) m[i] = (i % (2 * C)) < C ? (int32_t)((i * 7919) % 1000) : i;
    amp_array_view *m1 = test_view(m, 4, amp_extent_2d(R, 2 * C), AMP_READ_WRITE);
    amp_array_view *m2 = test_view(m, 4, amp_extent_2d(R, 2 * C), AMP_READ_WRITE);
    amp_array_view *left = NULL, *right = NULL;
    ASSERT_OK(amp_array_view_section(m1, amp_index_2d(0, 0), amp_extent_2d(R, C), &left));
    ASSERT_OK(amp_array_view_section(m2, amp_index_2d(0, C), amp_extent_2d(R, C), &right));
    ASSERT_OK(amp_sort_by_key(q, amp_arg_view(left), amp_arg_view(right), AMP_TYPE_INT32, AMP_ASCENDING));
    ASSERT_OK(amp_array_view_destroy(left));
    ASSERT_OK(amp_array_view_destroy(right));
    ASSERT_OK(amp_array_view_destroy(m1));
    ASSERT_OK(amp_array_view_destroy(m2));
    for (int i = 1; i < R * C; ++i) {
        int32_t k0 = m[(i - 1) / C * 2 * C + (i - 1) % C], k1 = m[i / C * 2 * C + i % C];
        cr_assert(k0 <= k1, "column-block keys not sorted at %d", i);
    }
    for (int i = 0; i < R * C; ++i) {
        int32_t key = m[i / C * 2 * C + i % C], val = m[i / C * 2 * C + C + i % C];
        int src = val - C; /* the value was its own index, C past its key's */
        cr_assert(src >= 0 && (src % (2 * C)) < C && (int32_t)((src * 7919) % 1000) == key,
                  "value %d does not go with key %d", val, key);
    }

    /* Arrays over one allocation: wholly, and sections of views of them. */
    amp_array *base = NULL, *a1 = NULL, *a2 = NULL, *a3 = NULL;
    ASSERT_OK(amp_array_create(q, 4, amp_extent_1d(2 * N), NULL, &base));
    void *mem = NULL;
    ASSERT_OK(amp_array_native_handle(base, &mem));
    ASSERT_OK(amp_array_create_from_native(q, mem, 4, amp_extent_1d(N), &a1));
    ASSERT_OK(amp_array_create_from_native(q, (char *)mem + 4 * (N / 2), 4, amp_extent_1d(N), &a2));
    ASSERT_OK(amp_array_create_from_native(q, (char *)mem + 4 * N, 4, amp_extent_1d(N), &a3));
    ASSERT_STATUS(amp_sort_by_key(q, amp_arg_array(a1), amp_arg_array(a2), AMP_TYPE_INT32, AMP_ASCENDING),
                  AMP_ERROR_INVALID_ARGUMENT);
    amp_array_view *v1 = NULL, *v2 = NULL, *s1 = NULL, *s2 = NULL;
    ASSERT_OK(amp_array_view_of_array(a1, &v1));
    ASSERT_OK(amp_array_view_of_array(a2, &v2));
    ASSERT_OK(amp_array_view_section(v1, amp_index_1d(N / 2), amp_extent_1d(N / 4), &s1));
    ASSERT_OK(amp_array_view_section(v2, amp_index_1d(N / 8), amp_extent_1d(N / 4), &s2));
    ASSERT_STATUS(amp_sort_by_key(q, amp_arg_view(s1), amp_arg_view(s2), AMP_TYPE_INT32, AMP_ASCENDING),
                  AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_sort_by_key(q, amp_arg_array(a1), amp_arg_array(a3), AMP_TYPE_INT32, AMP_ASCENDING));
    ASSERT_OK(amp_array_view_destroy(s1));
    ASSERT_OK(amp_array_view_destroy(s2));
    ASSERT_OK(amp_array_view_destroy(v1));
    ASSERT_OK(amp_array_view_destroy(v2));
    ASSERT_OK(amp_array_destroy(a1));
    ASSERT_OK(amp_array_destroy(a2));
    ASSERT_OK(amp_array_destroy(a3));
    ASSERT_OK(amp_array_destroy(base));
}

/* ------------------------------------------ user strings and their messages */

static const float pred_x[100] = {
#define P10(b) b - 50, b - 49, b - 48, b - 47, b - 46, b - 45, b - 44, b - 43, b - 42, b - 41
    P10(0), P10(10), P10(20), P10(30), P10(40), P10(50), P10(60), P10(70), P10(80), P10(90)
#undef P10
};

/* User strings cannot rewrite the code generated around them (issue 38):
 * no preprocessor directive, line splice, _Pragma or amp__ name, and
 * brackets, comments and literals closed within the string. Each refusal
 * names the call and the string; what only looks like them is taken. */
ACCEL_TEST(algorithms, user_strings_cannot_rewrite_generated_code)
{
    amp_accelerator_view *q = default_view(acc);
    amp_array_view *v = test_view((void *)pred_x, 4, amp_extent_1d(100), AMP_READ_ONLY);
    static const char *const bad[] = {
        "x > 0\n#define true false\n",
        "x > 0\n#define true false\ntrue",
        "x > 0\n  # define x 1\n",
        "/* c */ #undef true\nx > 0",
        "x > 0\n%:define true false\ntrue",
        "x > 0 /* unterminated",
        "x > 0) || (true",
        "(x > 0",
        "x > 0 ]",
        "x > 0 %>",
        "x > 0 <:",
        "x > 0 && \"abc",
        "x > 0 && 'a",
        "x > 0 && R\"d(abc)\"",
        "amp__in.c0 == 0 && x > 0",
        "_Pragma(\"GCC poison amp\") x > 0",
        "x > 0 \\\n",
        "x > 0 \\  \n&& true",
        "x > 0 \\",
        /* a digit separator before a non-ASCII byte or '$' is none: the
         * compiler reads a character literal there (the directive below
         * would be compiled, hidden in what a number-first reading takes
         * for a comment) */
        "x > 1'\xc3\xa9 /* ' > 0\n#error directive\n// */ 0",
        "x > 1'$ /* ' > 0\n#error directive\n// */ 0",
        "x > 1$ && x > 0",
        "x > 2\xc3\xa9 && x > 0",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        uint64_t c = 7;
        ASSERT_STATUS(amp_count_if(q, amp_arg_view(v), AMP_TYPE_FLOAT32, bad[i], NULL, &c),
                      AMP_ERROR_INVALID_ARGUMENT);
        cr_assert_eq(c, 0);
        const char *e = amp_last_error();
        cr_assert(!strncmp(e, "amp_count_if: predicate", 23), "predicate %zu: %s", i, e);
    }
    static const char *const good[] = {
        "x > 0 && '#' == 35",
        "x > 0 && sizeof(\"#amp__\\\"\") == 8",
        "x > 0 && 1'000 == 1000 && 0x1p+1 == 2.0 && 0x1'f == 31 && 1'0.5 == 10.5",
        "x > 0 && R\"d(#)\" )d\"[0] == '#'",
        "x > 0 // # define, amp__ (",
        "x > 0 /* ) #include */",
        "x > 0 && [&] { return true; }()",
        "x > 0 && sizeof(int<:2:>) == 8 && [] <% return 1; %>() == 1 && (1 <<:: abs(-1)) == 2",
        "\n  x > 0\n",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; ++i) {
        uint64_t c = 0;
        ASSERT_OK(amp_count_if(q, amp_arg_view(v), AMP_TYPE_FLOAT32, good[i], NULL, &c));
        cr_assert_eq(c, 49, "predicate %zu (%s): %llu", i, good[i], (unsigned long long)c);
    }
    /* The same rule for every string of a reduction, preamble included. */
    amp_reduction_desc d = {.name = "r", .inputs = "float x", .type = AMP_TYPE_FLOAT32, .map = "x", .reduce = "a + b",
                            .identity = "0"};
    const char **fields[] = {&d.map, &d.reduce, &d.identity, &d.post, &d.preamble};
    static const char *const names[] = {"map", "reduce", "identity", "post", "preamble"};
    static const char *const rbad[] = {"0\n#define a b\n", "0 + amp__x", "(0", "0 \\\n"};
    for (int f = 0; f < 5; ++f)
        for (size_t i = 0; i < sizeof rbad / sizeof rbad[0]; ++i) {
            amp_reduction_desc t = d;
            const char **fp = (const char **)((char *)&t + ((char *)fields[f] - (char *)&d));
            *fp = rbad[i];
            amp_reduction *r = NULL;
            ASSERT_STATUS(amp_reduction_create(acc, &t, &r), AMP_ERROR_INVALID_ARGUMENT);
            cr_assert_null(r);
            const char *e = amp_last_error();
            cr_assert(!strncmp(e, "amp_reduction_create: ", 22) && strstr(e, names[f]), "%s %zu: %s", names[f], i,
                      e);
        }
    d.preamble = "_Pragma(\"pack(1)\")";
    ASSERT_STATUS(amp_reduction_create(acc, &d, &(amp_reduction *){NULL}), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "_Pragma"), "%s", amp_last_error());
    /* The preamble too: a directive behind a digit separator that is none. */
    d.preamble = "[[gnu::amp_x(1'\xc3\xa9 /* ')]];\n#define float double\n// */)]];";
    ASSERT_STATUS(amp_reduction_create(acc, &d, &(amp_reduction *){NULL}), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(!strncmp(amp_last_error(), "amp_reduction_create: ", 22) && strstr(amp_last_error(), "preamble"), "%s",
              amp_last_error());
    ASSERT_OK(amp_array_view_destroy(v));
}

/* Messages name the user's text and the public call, never the library's
 * internals or generated code (issue 38). */
ACCEL_TEST(algorithms, messages_name_the_user_text_and_the_call)
{
    SKIP_IN_DISCRETE_PASS(acc, "what a refusal or a failed compile says");
    amp_accelerator_view *q = default_view(acc);
    amp_array_view *v = test_view((void *)pred_x, 4, amp_extent_1d(100), AMP_READ_ONLY);
    float o[100];
    amp_array_view *vo = test_view(o, 4, amp_extent_1d(100), AMP_WRITE_ONLY);
    uint64_t c = 0;
    /* A predicate that includes a file: the directive and the call. */
    ASSERT_STATUS(amp_count_if(q, amp_arg_view(v), AMP_TYPE_FLOAT32, "#include \"no_such_file.h\"\nx > 0", NULL, &c),
                  AMP_ERROR_INVALID_ARGUMENT);
    const char *e = amp_last_error();
    cr_assert(strstr(e, "amp_count_if") && strstr(e, "predicate") && strstr(e, "#include") && !strstr(e, "generated"),
              "%s", e);
    ASSERT_STATUS(amp_copy_if(q, amp_arg_view(v), amp_arg_view(vo), AMP_TYPE_FLOAT32, "#include <cmath>\nx > 0",
                              NULL, &c),
                  AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "amp_copy_if") && strstr(amp_last_error(), "#include"), "%s",
              amp_last_error());
    /* A NULL predicate. */
    ASSERT_STATUS(amp_count_if(q, amp_arg_view(v), AMP_TYPE_FLOAT32, NULL, NULL, &c), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(!strncmp(amp_last_error(), "amp_count_if: predicate", 23) && !strstr(amp_last_error(), "amp__"), "%s",
              amp_last_error());
    ASSERT_STATUS(amp_copy_if(q, amp_arg_view(v), amp_arg_view(vo), AMP_TYPE_FLOAT32, NULL, NULL, &c),
                  AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(!strncmp(amp_last_error(), "amp_copy_if: predicate", 22) && !strstr(amp_last_error(), "amp__"), "%s",
              amp_last_error());
    /* A predicate that does not compile: the call first. */
    ASSERT_STATUS(amp_count_if(q, amp_arg_view(v), AMP_TYPE_FLOAT32, "x >>> 2", NULL, &c), AMP_ERROR_COMPILE);
    cr_assert(!strncmp(amp_last_error(), "amp_count_if: predicate", 23), "%.2000s", amp_last_error());
    /* Parameter names: a keyword, the library's names, refused before
     * anything compiles, naming the parameter. */
    amp_reduction_desc d = {.name = "r", .inputs = "float int", .type = AMP_TYPE_FLOAT32, .map = "1",
                            .reduce = "a + b", .identity = "0"};
    amp_reduction *r = NULL;
    static const char *const inputs[] = {"float int", "float x, double and", "float AMP_ALG_R", "float __x",
                                         "float _Pragma"};
    static const char *const named[] = {"'int'", "'and'", "'AMP_ALG_R'", "'__x'", "'_Pragma'"};
    for (int i = 0; i < 5; ++i) {
        d.inputs = inputs[i];
        ASSERT_STATUS(amp_reduction_create(acc, &d, &r), AMP_ERROR_INVALID_ARGUMENT);
        e = amp_last_error();
        cr_assert(!strncmp(e, "amp_reduction_create: inputs", 28) && strstr(e, named[i]) && !strstr(e, "generated"),
                  "%s", e);
    }
    /* A long entry (eight words of 63 characters: more than any type's
     * name) is refused naming its type. */
    char longest[8 * 64 + 8] = "";
    for (int w = 0; w < 8; ++w) {
        char word[64];
        memset(word, w == 7 ? 'x' : 'a', 63);
        word[63] = '\0';
        snprintf(longest + strlen(longest), sizeof longest - strlen(longest), "%s%s", w ? " " : "", word);
    }
    d.inputs = longest;
    ASSERT_STATUS(amp_reduction_create(acc, &d, &r), AMP_ERROR_INVALID_ARGUMENT);
    e = amp_last_error();
    cr_assert(!strncmp(e, "amp_reduction_create: inputs", 28) && strstr(e, "is not one of"), "%s", e);
    d.inputs = "float x";
    d.scalars = "int float";
    ASSERT_STATUS(amp_reduction_create(acc, &d, &r), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(!strncmp(amp_last_error(), "amp_reduction_create: scalars", 29), "%s", amp_last_error());
    d.scalars = NULL;
    /* A name the device language defines as a macro: the compiler's error,
     * led by a line naming the inputs, not the generated code. */
    d.inputs = "float float4";
    ASSERT_STATUS(amp_reduction_create(acc, &d, &r), AMP_ERROR_COMPILE);
    e = amp_last_error();
    const char *nl = strchr(e, '\n');
    cr_assert(!strncmp(e, "amp_reduction_create: ", 22) && strstr(e, "<r: inputs>") && strstr(e, "<r: inputs>") < nl,
              "%.2000s", e);
    /* An expression that does not compile: the call first. */
    d.inputs = "float x";
    d.map = "x * zz";
    ASSERT_STATUS(amp_reduction_create(acc, &d, &r), AMP_ERROR_COMPILE);
    cr_assert(!strncmp(amp_last_error(), "amp_reduction_create: reduction 'r'", 35), "%.2000s", amp_last_error());
    /* Names the generated code uses are the user's to take. */
    d.inputs = "float C, float amp";
    d.map = "C * amp";
    ASSERT_OK(amp_reduction_create(acc, &d, &r));
    float sq = 0, want = 0;
    for (int i = 0; i < 100; ++i) want += pred_x[i] * pred_x[i];
    amp_arg args[] = {amp_arg_view(v), amp_arg_view(v)};
    ASSERT_OK(amp_reduction_apply(q, r, args, 2, &sq));
    cr_assert_eq(sq, want);
    ASSERT_OK(amp_reduction_destroy(r));
    /* ... and the preamble's names are not hidden by the library's in the
     * reduce expression (amp::alg has a mul of its own). */
    d.inputs = "float x";
    d.map = "x";
    d.preamble = "__device__ float mul(float p, float q) { return p + q; }";
    d.reduce = "mul(a, b)";
    ASSERT_OK(amp_reduction_create(acc, &d, &r));
    float sum = 0;
    want = 0;
    for (int i = 0; i < 100; ++i) want += pred_x[i];
    ASSERT_OK(amp_reduction_apply(q, r, args, 1, &sum));
    cr_assert_eq(sum, want, "the reduce expression's mul is not the preamble's: %g, want %g", (double)sum,
                 (double)want);
    ASSERT_OK(amp_reduction_destroy(r));
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_array_view_destroy(v));
}

/* ----------------------------------------------------- the last error */

/* A call that succeeds leaves amp_last_error() as it was, the builds of
 * its programs included (issue 38: the first amp_reduce left a kernel
 * lookup's "not found" there). */
ACCEL_TEST(algorithms, success_leaves_the_last_error_alone)
{
    amp_accelerator_view *q = default_view(acc);
    enum { N = 300 };
    static int32_t x[N], y[N];
    for (int i = 0; i < N; ++i) x[i] = (i * 37) % 101;
    amp_array_view *vx = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *vy = test_view(y, 4, amp_extent_1d(N), AMP_READ_WRITE);
    ASSERT_STATUS(amp_reduce(q, amp_arg_view(vx), AMP_TYPE_INT32, AMP_OP_SUM, NULL), AMP_ERROR_INVALID_ARGUMENT);
    char want[512];
    snprintf(want, sizeof want, "%s", amp_last_error());
    cr_assert(strstr(want, "amp_reduce"), "%s", want);
    int32_t s = 0;
    ASSERT_OK(amp_reduce(q, amp_arg_view(vx), AMP_TYPE_INT32, AMP_OP_SUM, &s));
    cr_assert_str_eq(amp_last_error(), want, "after amp_reduce");
    ASSERT_OK(amp_scan(q, amp_arg_view(vx), amp_arg_view(vy), AMP_TYPE_INT32, AMP_OP_MAX, AMP_SCAN_EXCLUSIVE));
    cr_assert_str_eq(amp_last_error(), want, "after amp_scan");
    ASSERT_OK(amp_sort_by_key(q, amp_arg_view(vx), amp_arg_view(vy), AMP_TYPE_INT32, AMP_DESCENDING));
    cr_assert_str_eq(amp_last_error(), want, "after amp_sort_by_key");
    uint64_t c = 0;
    ASSERT_OK(amp_count_if(q, amp_arg_view(vx), AMP_TYPE_INT32, "x > 50", NULL, &c));
    cr_assert_str_eq(amp_last_error(), want, "after amp_count_if");
    ASSERT_OK(amp_fill(q, amp_arg_view(vy), &s));
    cr_assert_str_eq(amp_last_error(), want, "after amp_fill");
    amp_reduction_desc d = {.name = "mx", .inputs = "int v", .type = AMP_TYPE_INT32, .map = "v",
                            .reduce = "a > b ? a : b", .identity = "-1"};
    amp_reduction *r = NULL;
    ASSERT_OK(amp_reduction_create(acc, &d, &r));
    cr_assert_str_eq(amp_last_error(), want, "after amp_reduction_create");
    amp_arg in[] = {amp_arg_view(vx)};
    ASSERT_OK(amp_reduction_scan(q, r, in, 1, amp_arg_view(vy), AMP_SCAN_INCLUSIVE));
    cr_assert_str_eq(amp_last_error(), want, "after amp_reduction_scan");
    ASSERT_OK(amp_reduction_destroy(r));
    ASSERT_OK(amp_array_view_destroy(vx));
    ASSERT_OK(amp_array_view_destroy(vy));
}

/* A parameter list that ends in a comma ("int v,") names an entry that is
 * not there: refused as "int v, " and ",int v" were, before anything is
 * compiled. Before, the trailing comma alone was taken in silence. */
ACCEL_TEST(algorithms, parameter_list_ending_in_a_comma_is_refused)
{
    amp_reduction_desc d = {.name = "tc", .inputs = "int v,", .type = AMP_TYPE_INT32, .map = "v",
                            .reduce = "a + b", .identity = "0"};
    amp_reduction *r = NULL;
    ASSERT_STATUS(amp_reduction_create(acc, &d, &r), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(r);
    const char *e = amp_last_error();
    cr_assert(strstr(e, "amp_reduction_create") && strstr(e, "inputs") && strstr(e, "int v,") && strstr(e, "comma"),
              "%s", e);
    d.inputs = "int v";
    d.scalars = "int k, int m,";
    ASSERT_STATUS(amp_reduction_create(acc, &d, &r), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(r);
    e = amp_last_error();
    cr_assert(strstr(e, "scalars") && strstr(e, "int k, int m,") && strstr(e, "comma"), "%s", e);
}

/* amp_reduction_scan in place (out = the input view) needs the input's type
 * to be the reduction's: an int32 input scanned into float32 results in
 * place would leave float bits where the caller has int32 elements. The
 * check compared element sizes, so int32 -> float32 (both 4 bytes) was
 * taken (and the scan program compiled first: now nothing is). */
ACCEL_TEST(algorithms, user_scan_in_place_needs_one_type)
{
    amp_accelerator_view *q = default_view(acc);
    enum { N = 100 };
    int32_t x[N], before[N];
    float y[N];
    for (int i = 0; i < N; ++i) x[i] = before[i] = (i * 37) % 11 - 5;
    amp_array_view *vx = test_view(x, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_array_view *vy = test_view(y, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_reduction_desc d = {.name = "half", .inputs = "int v", .type = AMP_TYPE_FLOAT32, .map = "v * 0.5f",
                            .reduce = "a + b", .identity = "0"};
    amp_reduction *r = NULL;
    ASSERT_OK(amp_reduction_create(acc, &d, &r));
    amp_arg in[] = {amp_arg_view(vx)};
    ASSERT_STATUS(amp_reduction_scan(q, r, in, 1, amp_arg_view(vx), AMP_SCAN_INCLUSIVE), AMP_ERROR_INVALID_ARGUMENT);
    const char *e = amp_last_error();
    cr_assert(strstr(e, "amp_reduction_scan") && strstr(e, "in place") && strstr(e, "int32") && strstr(e, "float32"),
              "%s", e);
    ASSERT_OK(amp_array_view_synchronize(vx));
    cr_assert(!memcmp(x, before, sizeof x), "a refused scan changed its input");
    ASSERT_OK(amp_reduction_destroy(r));
    ASSERT_OK(amp_array_view_destroy(vx));
    ASSERT_OK(amp_array_view_destroy(vy));
}

/* The tuning knobs (AMP_ALG_*, docs/algorithms.md) have a range per kind of
 * accelerator: a value one kind cannot take is said on stderr for that kind
 * (once), with the rule and the default used there; a value the other kind
 * takes is not said for it. Before, a value below the range, or not the
 * multiple or power of two a knob needs, fell back to the default in
 * silence. */
Test(algorithms, tuning_values_an_accelerator_cannot_take_are_said)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    setenv("AMP_ALG_TILE", "2000", 1);        /* above both kinds' ranges */
    setenv("AMP_ALG_REDUCE_ITEMS", "3", 1);   /* a power of two on both */
    setenv("AMP_ALG_SORT_TILE", "96", 1);     /* a GPU's must be a multiple of 64; the CPU takes it */
    stderr_capture cap;
    stderr_capture_begin(&cap);
    amp_accelerator_view *q = NULL;
    amp_status st = amp_accelerator_default_view(acc, &q);
    int32_t host[300];
    amp_array_view *v = NULL;
    if (st == AMP_OK) st = amp_array_view_create(host, sizeof host[0], amp_extent_1d(300), AMP_WRITE_ONLY, &v);
    int32_t seven = 7;
    if (st == AMP_OK) st = amp_fill(q, amp_arg_view(v), &seven);
    if (st == AMP_OK) st = amp_fill(q, amp_arg_view(v), &seven);
    if (st == AMP_OK) st = amp_array_view_synchronize(v);
    static char err[8192];
    stderr_capture_end(&cap, err, sizeof err);
    ASSERT_OK(st);
    for (int i = 0; i < 300; ++i) cr_assert_eq(host[i], 7, "element %d: %d", i, host[i]);
    amp_array_view_destroy(v);
    const char *want[] = {
        "hipamp: AMP_ALG_TILE=\"2000\" is not a whole number in 64..1024 and a multiple of 64 on a GPU; using the "
        "default there, 128\n",
        "hipamp: AMP_ALG_TILE=\"2000\" is not a whole number in 1..1024 on the CPU accelerator; using the default "
        "there, 1\n",
        "hipamp: AMP_ALG_REDUCE_ITEMS=\"3\" is not a whole number in 1..64 and a power of two on a GPU; using the "
        "default there, 8\n",
        "hipamp: AMP_ALG_REDUCE_ITEMS=\"3\" is not a whole number in 1..256 and a power of two on the CPU "
        "accelerator; using the default there, 16\n",
        "hipamp: AMP_ALG_SORT_TILE=\"96\" is not a whole number in 64..1024 and a multiple of 64 on a GPU; using the "
        "default there, 256\n"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; ++i) {
        const char *at = strstr(err, want[i]);
        cr_assert(at, "stderr lacks\n%s---- it has:\n%s", want[i], err);
        cr_assert_null(strstr(at + 1, want[i]), "said twice: %s", want[i]);
    }
    cr_assert_null(strstr(err, "AMP_ALG_SORT_TILE=\"96\" is not a whole number in 1..1024"), "%s", err);
}

/* A staging array lives in host memory, where no kernel takes an array:
 * every algorithm refuses it before compiling or queueing anything, naming
 * the call and the argument (before, the launch inside refused it naming
 * an internal kernel and parameter index, after a predicate's compile or
 * a sort's scratch clearing). A view of it works. */
ACCEL_TEST(algorithms, a_staging_array_is_refused_by_the_calls_name_and_a_view_of_it_works)
{
    int32_t init[8] = {3, 1, 2, 5, 4, 8, 7, 6};
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    amp_array *st = NULL, *one = NULL;
    ASSERT_OK(amp_array_create_staging(q, sizeof init[0], amp_extent_1d(8), init, &st));
    ASSERT_OK(amp_array_create(q, sizeof init[0], amp_extent_1d(1), NULL, &one));
    int32_t r = 0;
    uint64_t c = 0;
    ASSERT_STATUS(amp_reduce(q, amp_arg_array(st), AMP_TYPE_INT32, AMP_OP_SUM, &r), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "amp_reduce: ") && strstr(amp_last_error(), "is a staging array"), "%s",
              amp_last_error());
    ASSERT_STATUS(amp_reduce_async(q, amp_arg_array(st), AMP_TYPE_INT32, AMP_OP_SUM, amp_arg_array(one), NULL),
                  AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "is a staging array"), "%s", amp_last_error());
    ASSERT_STATUS(amp_sort(q, amp_arg_array(st), AMP_TYPE_INT32, AMP_ASCENDING), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "amp_sort: ") && strstr(amp_last_error(), "is a staging array"), "%s",
              amp_last_error());
    ASSERT_STATUS(amp_fill(q, amp_arg_array(st), &r), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_count_if(q, amp_arg_array(st), AMP_TYPE_INT32, "x > 2", NULL, &c), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "amp_count_if: ") && strstr(amp_last_error(), "is a staging array"), "%s",
              amp_last_error());
    int32_t back[8];
    ASSERT_OK(amp_array_copy_to_host(st, back));
    cr_assert(!memcmp(back, init, sizeof init), "the refused calls changed the staging array");
    amp_array_view *v = NULL;
    ASSERT_OK(amp_array_view_of_array(st, &v));
    ASSERT_OK(amp_reduce(q, amp_arg_view(v), AMP_TYPE_INT32, AMP_OP_SUM, &r));
    cr_assert_eq(r, 36, "sum %d", r);
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_array_destroy(one));
    ASSERT_OK(amp_array_destroy(st));
}

/* A sort tile in the knob's range whose pass would not fit in 47 KiB of
 * tile_static memory even with one key a thread (on the CPU accelerator a
 * tile's waves are its threads: 64 of them take 64 KiB of digit counters)
 * keeps the default, said once, and the sort sorts. Before, every sort of
 * the process failed naming an internal kernel's tile_static bytes. */
Test(algorithms, a_sort_tile_whose_pass_cannot_fit_keeps_the_default)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    setenv("AMP_ALG_SORT_TILE", "64", 1);
    stderr_capture cap;
    stderr_capture_begin(&cap);
    amp_accelerator_view *q = NULL;
    enum { K = 5000 };
    static uint32_t keys[K];
    for (int i = 0; i < K; ++i) keys[i] = (uint32_t)i * 2654435761u;
    amp_array_view *v = NULL;
    amp_status st = amp_accelerator_default_view(acc, &q);
    if (st == AMP_OK) st = amp_array_view_create(keys, sizeof keys[0], amp_extent_1d(K), AMP_READ_WRITE, &v);
    if (st == AMP_OK) st = amp_sort(q, amp_arg_view(v), AMP_TYPE_UINT32, AMP_ASCENDING);
    if (st == AMP_OK) st = amp_sort(q, amp_arg_view(v), AMP_TYPE_UINT32, AMP_DESCENDING);
    if (st == AMP_OK) st = amp_array_view_synchronize(v);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", amp_last_error());
    static char err[8192];
    stderr_capture_end(&cap, err, sizeof err);
    cr_assert_eq(st, AMP_OK, "%s: %s", amp_status_name(st), msg);
    static uint32_t before[K];
    for (int i = 0; i < K; ++i) before[i] = (uint32_t)i * 2654435761u;
    assert_sorted_from(AMP_TYPE_UINT32, keys, before, K, AMP_DESCENDING, "the sorts under AMP_ALG_SORT_TILE=64");
    amp_array_view_destroy(v);
    const char *want = "hipamp: AMP_ALG_SORT_TILE=\"64\" is not a tile whose sort pass fits in 47 KiB of tile_static "
                       "memory (its digit counters and a key a thread) for a sort of 4-byte keys on the CPU "
                       "accelerator; using the default there, 1\n";
    const char *at = strstr(err, want);
    cr_assert(at, "stderr lacks\n%s---- it has:\n%s", want, err);
    cr_assert_null(strstr(at + strlen(want), "AMP_ALG_SORT_TILE"), "said twice:\n%s", err);
}

/* Each predicate in bad is refused by amp_count_if over v, the message
 * naming the call and holding why. */
static void count_if_refuses(amp_accelerator_view *q, amp_array_view *v, const char *const *bad, size_t n,
                             const char *why)
{
    for (size_t i = 0; i < n; ++i) {
        uint64_t c = 7;
        ASSERT_STATUS(amp_count_if(q, amp_arg_view(v), AMP_TYPE_FLOAT32, bad[i], NULL, &c),
                      AMP_ERROR_INVALID_ARGUMENT);
        const char *e = amp_last_error();
        cr_assert(!strncmp(e, "amp_count_if: predicate", 23) && strstr(e, why), "predicate %zu: %s", i, e);
    }
}

/* A raw string's prefix right after a literal ("a"R"(...)") is no raw
 * string to g++: R is the first literal's suffix and "(" a plain string,
 * while clang reads a raw string there. The check read a raw string, so a
 * directive "inside" it was compiled by g++: here one that makes a float32
 * reduction write a double, 8 bytes, into its 4-byte result (the sum of
 * 100 ones came back 0). Such strings are refused now, naming the call. */
ACCEL_TEST(algorithms, raw_string_right_after_a_literal_is_refused)
{
    amp_accelerator_view *q = default_view(acc);
    amp_array_view *v = test_view((void *)pred_x, 4, amp_extent_1d(100), AMP_READ_ONLY);
    static const char *const bad[] = {
        "x > 0 && sizeof(\"a\"R\"(\")\n#error hidden directive\n)\") > 0",
        "x > 0 && sizeof('a'R\"(\")\n#error hidden directive\n)\") > 0",
        "x > 0 && sizeof(R\"(a)\"u8R\"(\")\n#error hidden directive\n)\") > 0",
        /* clang ends the name at U+00D7 (an error, but the directive ran) */
        "x > 0 && \xc3\x97R\"(\" /* )\" != 0\n#error hidden directive\n*/",
        "x > 0 && y$u8R\"(\" /* )\" != 0\n#error hidden directive\n*/",
    };
    count_if_refuses(q, v, bad, sizeof bad / sizeof bad[0], "raw string");
    amp_reduction_desc d = {.name = "r", .inputs = "float x", .type = AMP_TYPE_FLOAT32, .map = "1", .reduce = "a + b",
                            .identity = "0",
                            .preamble = "[[gnu::amp_x(\"a\"R\"(\", (\n#undef AMP_ALG_O\n#define AMP_ALG_O double\n"
                                        ")\" //\"\n)]];"};
    amp_reduction *r = NULL;
    amp_status st = amp_reduction_create(acc, &d, &r);
    if (st == AMP_OK) {
        float sum[2] = {-1, -1};
        amp_arg args[] = {amp_arg_view(v)};
        ASSERT_OK(amp_reduction_apply(q, r, args, 1, sum));
        ASSERT_OK(amp_reduction_destroy(r));
        cr_assert_fail("the preamble was taken; the sum of 100 ones is %g, the float after it %g", (double)sum[0],
                       (double)sum[1]);
    }
    cr_assert_eq(st, AMP_ERROR_INVALID_ARGUMENT, "%s: %s", amp_status_name(st), amp_last_error());
    cr_assert(!strncmp(amp_last_error(), "amp_reduction_create: ", 22) && strstr(amp_last_error(), "preamble"), "%s",
              amp_last_error());
    ASSERT_OK(amp_array_view_destroy(v));
}

/* A raw string whose delimiter holds a byte C++ does not allow there
 * ('@', '$', a control or non-ASCII byte) is an error to the compilers,
 * which then read on from the next '"' as code; the check took all up to
 * )@" for the literal's body, so a directive there ran: an #include put a
 * file's text into the failed build's message, an #error its own. Refused
 * now, naming the call and the raw string; a delimiter of the allowed
 * bytes stays the user's. */
ACCEL_TEST(algorithms, a_raw_string_with_a_delimiter_compilers_refuse_is_refused)
{
    amp_accelerator_view *q = default_view(acc);
    amp_array_view *v = test_view((void *)pred_x, 4, amp_extent_1d(100), AMP_READ_ONLY);
    static const char *const bad[] = {
        "x > 0 && R\"@(\"\n#error hidden directive\n)@\"[0] != 0",
        "x > 0 && R\"$(\"\n#error hidden directive\n)$\"[0] != 0",
        "x > 0 && R\"\x01(\"\n#error hidden directive\n)\x01\"[0] != 0",
        "x > 0 && R\"\xc3\xa9(\"\n#error hidden directive\n)\xc3\xa9\"[0] != 0",
        "x > 0 && R\"a`b(\"\n#error hidden directive\n)a`b\"[0] != 0",
    };
    count_if_refuses(q, v, bad, sizeof bad / sizeof bad[0], "malformed raw string");
    uint64_t c = 0;
    ASSERT_OK(amp_count_if(q, amp_arg_view(v), AMP_TYPE_FLOAT32, "x > 0 && R\"a{b}.-(#)a{b}.-\"[0] == '#'", NULL, &c));
    cr_assert_eq(c, 49);
    ASSERT_OK(amp_array_view_destroy(v));
}

/* The preludes' internal macros (AMP__...) are the library's: through
 * AMP__CPU_CAT, which pastes tokens, a preamble made a _Pragma that ran
 * (GCC error) and took amp_alg_clear (the scan program broke at the first
 * scan), past the checks of both names. Refused at create now. A control
 * byte in a refused string is written \xNN in the message (it reached
 * the caller's log as is: a terminal escape). */
ACCEL_TEST(algorithms, the_preludes_internal_macros_are_refused_and_control_bytes_quoted)
{
    amp_reduction_desc d = {.name = "paste", .inputs = "float x", .type = AMP_TYPE_FLOAT32, .map = "x",
                            .reduce = "a + b", .identity = "0",
                            .preamble = "__device__ const int AMP__CPU_CAT(amp_alg, _clear) = 1;"};
    amp_reduction *r = NULL;
    ASSERT_STATUS(amp_reduction_create(acc, &d, &r), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(r);
    cr_assert(strstr(amp_last_error(), "preamble") && strstr(amp_last_error(), "AMP__"), "%s", amp_last_error());
    d.preamble = "AMP__CPU_CAT(_Pra, gma)(\"GCC error \\\"pasted\\\"\")";
    ASSERT_STATUS(amp_reduction_create(acc, &d, &r), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "AMP__"), "%s", amp_last_error());
    d.preamble = NULL;
    d.map = "x + AMP__SIMPLE_BLOCK_THREADS";
    ASSERT_STATUS(amp_reduction_create(acc, &d, &r), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "map expression"), "%s", amp_last_error());
    /* The public AMP_ names stay the user's. */
    d.map = "x + (float)(AMP_PRELUDE_VERSION - AMP_PRELUDE_VERSION)";
    ASSERT_OK(amp_reduction_create(acc, &d, &r));
    ASSERT_OK(amp_reduction_destroy(r));
    amp_accelerator_view *q = default_view(acc);
    amp_array_view *v = test_view((void *)pred_x, 4, amp_extent_1d(100), AMP_READ_ONLY);
    uint64_t c = 7;
    ASSERT_STATUS(amp_count_if(q, amp_arg_view(v), AMP_TYPE_FLOAT32, "x \x1b[31m > 0", NULL, &c),
                  AMP_ERROR_INVALID_ARGUMENT);
    const char *e = amp_last_error();
    cr_assert_null(strchr(e, 0x1b), "the escape byte reached the message: %s", e);
    cr_assert(strstr(e, "\\x1b[31m"), "the escape byte is not written \\x1b: %s", e);
    ASSERT_OK(amp_array_view_destroy(v));
}

/* A Unicode space (U+00A0, U+3000, ...) outside a literal or comment is
 * white space to clang (hipRTC; the CPU accelerator with AMP_CXX=clang++)
 * and part of a name to g++ and to the check, which so took what clang
 * reads after it as a token of its own: a raw string hiding a directive
 * (with clang this predicate redefined the generated amp__alg_pred and
 * counted 100 of 100 elements, not 49), an amp__ name, a _Pragma. Refused
 * now; in literals and comments such spaces stay the user's. */
ACCEL_TEST(algorithms, unicode_space_outside_literals_is_refused)
{
    amp_accelerator_view *q = default_view(acc);
    amp_array_view *v = test_view((void *)pred_x, 4, amp_extent_1d(100), AMP_READ_ONLY);
    static const char *const bad[] = {
        "x > 0 && \xc2\xa0R\"(\" /* )\" != 0\n#define amp__alg_pred(x, i, in) true /*\n*/",
        "x > 0 && \xe3\x80\x80" "amp__in.c0 == 0",
        "x > 0 && x\xe2\x80\xa8_Pragma(\"GCC diagnostic ignored \\\"-Wall\\\"\") > 0",
        /* the same spaces as universal character names */
        "x > 0 && \\u00a0R\"(\" /* )\" != 0\n#define amp__alg_pred(x, i, in) true /*\n*/",
        "x > 0 && 1\\U00003000R\"(\" /* )\" != 0\n#define amp__alg_pred(x, i, in) true /*\n*/",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        uint64_t c = 7;
        ASSERT_STATUS(amp_count_if(q, amp_arg_view(v), AMP_TYPE_FLOAT32, bad[i], NULL, &c),
                      AMP_ERROR_INVALID_ARGUMENT);
        const char *e = amp_last_error();
        cr_assert(!strncmp(e, "amp_count_if: predicate", 23) && strstr(e, "Unicode space"), "predicate %zu: %s", i, e);
    }
    uint64_t c = 0;
    ASSERT_OK(amp_count_if(q, amp_arg_view(v), AMP_TYPE_FLOAT32, "x > 0 /* \xc2\xa0 */ && sizeof(\"\xc2\xa0\") == 3",
                           NULL, &c));
    cr_assert_eq(c, 49);
    ASSERT_OK(amp_array_view_destroy(v));
}

/* The generated kernels' names (amp_alg_reduce, amp_alg_clear, ...) are
 * the library's: a preamble that took amp_alg_clear was created and
 * applied, then broke the reduction's scan program, built at its first
 * scan. Refused at create now, naming the string. */
ACCEL_TEST(algorithms, a_name_of_the_librarys_kernels_is_refused_in_a_reduction)
{
    amp_reduction_desc d = {.name = "clash", .inputs = "float x", .type = AMP_TYPE_FLOAT32, .map = "x",
                            .reduce = "a + b", .identity = "0", .preamble = "__device__ const int amp_alg_clear = 1;"};
    amp_reduction *r = NULL;
    ASSERT_STATUS(amp_reduction_create(acc, &d, &r), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(r);
    cr_assert(strstr(amp_last_error(), "preamble") && strstr(amp_last_error(), "amp_alg_"), "%s", amp_last_error());
    d.preamble = NULL;
    d.map = "x + (float)amp_alg_scan";
    ASSERT_STATUS(amp_reduction_create(acc, &d, &r), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "map expression"), "%s", amp_last_error());
    /* A name that only contains it is the user's. */
    d.preamble = "__device__ const float my_amp_alg_clear = 0;";
    d.map = "x + my_amp_alg_clear";
    ASSERT_OK(amp_reduction_create(acc, &d, &r));
    ASSERT_OK(amp_reduction_destroy(r));
}

/* A preamble must end at file scope, which the lexical check cannot see
 * through a declaration left open or a system macro that opens a
 * namespace: the first error then fell in the generated code, which the
 * message blamed ("a type the expressions give"). It names the preamble. */
ACCEL_TEST(algorithms, a_preamble_that_ends_inside_a_declaration_or_scope_is_blamed)
{
    SKIP_IN_DISCRETE_PASS(acc, "a preamble that does not compile");
    static const char *const bad[] = {"__device__ int dangling =", "template <class T>",
                                      "_GLIBCXX_BEGIN_NAMESPACE_CXX11 __device__ int inner = 1;"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        amp_reduction_desc d = {.name = "open_pre", .inputs = "float x", .type = AMP_TYPE_FLOAT32, .map = "x",
                                .reduce = "a + b", .identity = "0", .preamble = bad[i]};
        amp_reduction *r = NULL;
        ASSERT_STATUS(amp_reduction_create(acc, &d, &r), AMP_ERROR_COMPILE);
        const char *e = amp_last_error();
        const char *nl = strchr(e, '\n');
        const char *at = strstr(e, "<open_pre: preamble>");
        cr_assert(nl && at && at < nl, "preamble '%s': the message's first line does not name it:\n%.1500s", bad[i], e);
    }
}

/* The line that leads a compile failure's message names the string the
 * first error is in. It took the first line of the log holding the word
 * "error": for a reduction named error_sum, every line about its strings
 * (the marker's file name is "<error_sum: ...>"), so a warning about its
 * preamble was blamed for an error in its reduce expression. */
ACCEL_TEST(algorithms, compile_failure_names_the_string_at_fault_whatever_the_name)
{
    SKIP_IN_DISCRETE_PASS(acc, "a failed compile's message");
    amp_reduction_desc d = {.name = "error_sum", .inputs = "float x", .type = AMP_TYPE_FLOAT32, .map = "x",
                            .reduce = "a + zz", .identity = "0",
                            .preamble = "[[gnu::amp_unknown]] __device__ int amp_f(); __device__ int amp_g(int p) "
                                        "{ int unused; return p; }"};
    amp_reduction *r = NULL;
    ASSERT_STATUS(amp_reduction_create(acc, &d, &r), AMP_ERROR_COMPILE);
    const char *e = amp_last_error();
    const char *nl = strchr(e, '\n');
    const char *at = strstr(e, "<error_sum: reduce expression>");
    cr_assert(nl && at && at < nl, "the message's first line does not name the reduce expression:\n%.1500s", e);
}

/* Nor a warning whose text says "error" after ": " (a deprecation's
 * message in the preamble): the first location of a line decides what the
 * line is. */
ACCEL_TEST(algorithms, compile_failure_is_not_blamed_on_a_warning_that_says_error)
{
    SKIP_IN_DISCRETE_PASS(acc, "a failed compile's message");
    amp_reduction_desc d = {.name = "warned_sum", .inputs = "float x", .type = AMP_TYPE_FLOAT32, .map = "x",
                            .reduce = "a + zz", .identity = "0",
                            .preamble = "[[deprecated(\"see: error codes\")]] __device__ int amp_old(); "
                                        "__device__ int amp_use() { return amp_old(); }"};
    amp_reduction *r = NULL;
    ASSERT_STATUS(amp_reduction_create(acc, &d, &r), AMP_ERROR_COMPILE);
    const char *e = amp_last_error();
    const char *nl = strchr(e, '\n');
    const char *at = strstr(e, "<warned_sum: reduce expression>");
    cr_assert(nl && at && at < nl, "the message's first line does not name the reduce expression:\n%.1500s", e);
}
