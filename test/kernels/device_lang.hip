// device_lang.hip — kernels of test_device_lang.c: short-vector arithmetic and layout, C++ AMP atomics under contention, precise_math / fast_math against the host's libm, direct3d helpers.

// ------------------------------------------------------------ short vectors
// Every operator HIP defines, on float4: one result row of 16 per work-item.
AMP_KERNEL(vec_float4, amp::index<1> i, amp::array_view<const float4, 1> a,
           amp::array_view<const float4, 1> b, amp::array_view<float4, 2> r)
{
    const float4 x = a[i], y = b[i];
    const int n = i[0];
    r(n, 0) = x + y;
    r(n, 1) = x - y;
    r(n, 2) = x * y;
    r(n, 3) = x / y;
    r(n, 4) = -x;
    r(n, 5) = x * 2.5f;
    r(n, 6) = 1.5f + y;
    r(n, 7) = 3.0f / y;
    // No multiply is followed by an add here: a GPU compiler may fuse those
    // into an fma, which the host reference does not.
    float4 t = x;
    t += y;
    t *= x;
    t /= y;
    t -= 1.0f;
    r(n, 8) = t;
    t = x;
    r(n, 9) = ++t;
    t--;
    r(n, 10) = --t;
    r(n, 11) = float4(x == y ? 1.0f : 0.0f, x != y ? 1.0f : 0.0f, x == x ? 1.0f : 0.0f,
                      x != float4(x.x, x.y, x.z, 0.5f * x.w) ? 1.0f : 0.0f);
    r(n, 12) = make_float4(x.w, x.z, x.y, x.x);
    amp::float_4 s(x.y);
    r(n, 13) = s;
    r(n, 14) = float4(amp::int_4(x * 100.0f));
    float4 q;
    q.set_xyzw(y.get_wzyx());
    q.ref_g() = q.get_r() + q.get_a();
    r(n, 15) = q;
}

// Every integral operator, on int4 (values small enough not to overflow).
AMP_KERNEL(vec_int4, amp::index<1> i, amp::array_view<const int4, 1> a,
           amp::array_view<const int4, 1> b, amp::array_view<int4, 2> r)
{
    const int4 x = a[i], y = b[i];
    const int n = i[0];
    r(n, 0) = x + y;
    r(n, 1) = x - y;
    r(n, 2) = x * y;
    r(n, 3) = x / y;
    r(n, 4) = x % y;
    r(n, 5) = x ^ y;
    r(n, 6) = x | y;
    r(n, 7) = x & y;
    r(n, 8) = x << 3;
    r(n, 9) = x >> 2;
    r(n, 10) = ~x;
    r(n, 11) = -x;
    int4 t = x;
    t %= 7;
    t <<= int4(1, 2, 3, 4);
    t ^= y;
    t |= 0x100;
    t &= 0xfff;
    t >>= 1;
    r(n, 12) = t;
    t = x;
    t++;
    r(n, 13) = ++t;
    r(n, 14) = int4(x == y, x != y, x == x, 7 - x == 7 - x);
    amp::uint_4 u(x);
    r(n, 15) = int4(u >> 28u);
}

// Every vendor type: make_*, broadcast, + - * / (or %), sizeof and alignof.
// Per type: out[k] = sum of the components of ((v + w) * w - v) / w (with
// v = (1, 2, 3, 4), w = 2), then sizeof, then alignof.
#define VEC_ALL_TYPES(X)                                                                         \
    X(0, char, signed char) X(1, uchar, unsigned char) X(2, short, short)                        \
    X(3, ushort, unsigned short) X(4, int, int) X(5, uint, unsigned int) X(6, long, long)        \
    X(7, ulong, unsigned long) X(8, longlong, long long) X(9, ulonglong, unsigned long long)     \
    X(10, float, float) X(11, double, double)
template <class V> __device__ double vec_sum(const V &v)
{
    double s = (double)v.x;
    if constexpr (sizeof(V) >= 2 * sizeof(v.x)) s += (double)v.y;
    if constexpr (sizeof(V) >= 3 * sizeof(v.x)) s += (double)v.z;
    if constexpr (sizeof(V) >= 4 * sizeof(v.x)) s += (double)v.w;
    return s;
}
template <class V> __device__ void vec_probe(V v, amp::array_view<double, 1> out, int k)
{
    V w(2);
    V r = ((v + w) * w - v) / w;
    out[amp::index<1>(3 * k)] = vec_sum(r);
    out[amp::index<1>(3 * k + 1)] = (double)sizeof(V);
    out[amp::index<1>(3 * k + 2)] = (double)alignof(V);
}
#define VEC_PROBE(id, name, T)                                                                   \
    vec_probe(make_##name##1(1), out, 4 * id + 0);                                               \
    vec_probe(make_##name##2(1, 2), out, 4 * id + 1);                                            \
    vec_probe(make_##name##3(1, 2, 3), out, 4 * id + 2);                                         \
    vec_probe(make_##name##4(1, 2, 3, 4), out, 4 * id + 3);                                      \
    static_assert(sizeof(name##4) == 4 * sizeof(T), #name "4 has 4 components of " #T);
AMP_KERNEL(vec_all_types, amp::index<1> i, amp::array_view<double, 1> out)
{
    if (i[0] != 0) return;
    VEC_ALL_TYPES(VEC_PROBE)
}

// The layout of every vector, checked where the kernel compiles (the
// device library leaves this to the tests: it costs each compile).
template <class T> struct vec_layout_check {
    static_assert(sizeof(amp::vec<T, 1>) == sizeof(T) && alignof(amp::vec<T, 1>) == sizeof(T), "vec<T,1> layout");
    static_assert(sizeof(amp::vec<T, 2>) == 2 * sizeof(T) && alignof(amp::vec<T, 2>) == 2 * sizeof(T),
                  "vec<T,2> layout");
    static_assert(sizeof(amp::vec<T, 3>) == 3 * sizeof(T) && alignof(amp::vec<T, 3>) == alignof(T), "vec<T,3> layout");
    static_assert(sizeof(amp::vec<T, 4>) == 4 * sizeof(T) && alignof(amp::vec<T, 4>) == 4 * sizeof(T),
                  "vec<T,4> layout");
    static_assert(__is_trivially_copyable(amp::vec<T, 4>) && __is_trivially_copyable(amp::vec<T, 3>),
                  "vectors must be trivially copyable (kernel parameters, memcpy)");
    static constexpr bool ok = true;
};
static_assert(vec_layout_check<signed char>::ok && vec_layout_check<unsigned char>::ok &&
                  vec_layout_check<short>::ok && vec_layout_check<unsigned short>::ok &&
                  vec_layout_check<int>::ok && vec_layout_check<unsigned>::ok && vec_layout_check<long>::ok &&
                  vec_layout_check<unsigned long>::ok && vec_layout_check<long long>::ok &&
                  vec_layout_check<unsigned long long>::ok && vec_layout_check<float>::ok &&
                  vec_layout_check<double>::ok && vec_layout_check<amp::norm>::ok && vec_layout_check<amp::unorm>::ok,
              "short vector layout");

// C++ AMP's names are the vendor types; traits and conversions.
static_assert(amp::detail::same<amp::float_4, float4>::value, "float_4 is float4");
static_assert(amp::detail::same<amp::graphics::uint_3, uint3>::value, "uint_3 is uint3");
static_assert(amp::detail::same<amp::short_vector<double, 2>::type, double2>::value, "short_vector");
static_assert(amp::detail::same<amp::short_vector<int, 1>::type, int>::value, "short_vector<T, 1>");
static_assert(amp::short_vector_traits<amp::int_3>::size == 3, "short_vector_traits::size");
static_assert(amp::detail::same<amp::short_vector_traits<float>::value_type, float>::value,
              "short_vector_traits of a scalar");

// Vectors passed by value as kernel parameters (struct arguments). The
// 32-byte aligned ones (double4, long4, ...) are refused by the library's
// signature check, which allows parameter alignment up to 16.
AMP_KERNEL(vec_params, amp::index<1> i, float4 f, int3 n, double2 d, longlong2 e, uchar3 c,
           amp::array_view<double, 1> out)
{
    uint3 g = threadIdx; // converts from the thread geometry on every accelerator
    out[i] = (double)f.x + f.y + f.z + f.w + 10.0 * (n.x + n.y + n.z) + 100.0 * (d.x + d.y) +
             1000.0 * (double)(e.x + e.y) + 10000.0 * (c.x + c.y + c.z) + 0.0 * g.x;
}

// tile_static vectors (a trivial default constructor is required there).
AMP_TILED_KERNEL(vec_tile_static, amp::tiled_index<64> t, amp::array_view<double3, 1> v)
{
    tile_static double3 s[64];
    s[t.local[0]] = v[t.global];
    t.barrier.wait();
    v[t.global] = s[63 - t.local[0]] * 2.0;
}

// ---------------------------------------------------------------- atomics
// Many work-items on the same few addresses. c[] slots (int): 0 fetch_add,
// 1 fetch_sub, 2 fetch_inc, 3 fetch_dec, 4 fetch_max, 5 fetch_min, 6 fetch_and,
// 7 fetch_or, 8 fetch_xor, 9 exchange, 10 compare_exchange counter. u[] the
// same for unsigned. old[] records, per item, what the returned values say:
// fetch_inc's ticket, exchange's previous value, compare_exchange's ticket.
AMP_KERNEL(atomics_int, amp::index<1> i, amp::array_view<const int, 1> val,
           amp::array_view<int, 1> c, amp::array_view<unsigned, 1> u, amp::array_view<int, 2> old)
{
    const int n = i[0], v = val[i];
    const unsigned uv = (unsigned)v;
    typedef amp::index<1> I;
    amp::atomic_fetch_add(&c[I(0)], v);
    amp::atomic_fetch_sub(&c[I(1)], v);
    old(0, n) = amp::atomic_fetch_inc(&c[I(2)]);
    amp::atomic_fetch_dec(&c[I(3)]);
    amp::atomic_fetch_max(&c[I(4)], v);
    amp::atomic_fetch_min(&c[I(5)], v);
    amp::atomic_fetch_and(&c[I(6)], ~(1 << (n % 31)));
    amp::atomic_fetch_or(&c[I(7)], v);
    amp::atomic_fetch_xor(&c[I(8)], v);
    old(1, n) = amp::atomic_exchange(&c[I(9)], n);
    int e = c[I(10)];
    while (!amp::atomic_compare_exchange(&c[I(10)], &e, e + 1)) {}
    old(2, n) = e;

    amp::atomic_fetch_add(&u[I(0)], uv);
    amp::atomic_fetch_sub(&u[I(1)], uv);
    old(3, n) = (int)amp::atomic_fetch_inc(&u[I(2)]);
    amp::atomic_fetch_dec(&u[I(3)]);
    amp::atomic_fetch_max(&u[I(4)], uv);
    amp::atomic_fetch_min(&u[I(5)], uv);
    amp::atomic_fetch_and(&u[I(6)], ~(1u << (n % 32)));
    amp::atomic_fetch_or(&u[I(7)], uv);
    amp::atomic_fetch_xor(&u[I(8)], uv);
    old(4, n) = (int)amp::atomic_exchange(&u[I(9)], (unsigned)n);
    unsigned ue = u[I(10)];
    while (!amp::atomic_compare_exchange(&u[I(10)], &ue, ue + 1u)) {}
    old(5, n) = (int)ue;
}

// float exchange, and HIP's atomics on the types every accelerator has.
AMP_KERNEL(atomics_hip, amp::index<1> i, amp::array_view<float, 1> f, amp::array_view<double, 1> d,
           amp::array_view<unsigned long long, 1> ull, amp::array_view<unsigned, 1> w,
           amp::array_view<float, 1> fold, amp::array_view<unsigned, 1> casold)
{
    const int n = i[0];
    typedef amp::index<1> I;
    fold[i] = amp::atomic_exchange(&f[I(0)], (float)n + 0.5f);
    atomicAdd(&f[I(1)], 0.5f);
    atomicAdd(&d[I(0)], 0.25);
    atomicAdd(&ull[I(0)], (unsigned long long)n * 0x100000001ull);
    atomicMax(&ull[I(1)], (unsigned long long)n << 33);
    atomicMin(&ull[I(2)], (unsigned long long)(n + 3) << 33);
    atomicOr(&ull[I(3)], 1ull << (n % 64));
    atomicInc(&w[I(0)], 1000u);
    atomicDec(&w[I(1)], 1000u);
    casold[i] = atomicCAS(&w[I(2)], 0u, (unsigned)n + 1u);
    atomicExch(&w[I(3)], 7u);
}

// Atomics on tile_static memory: each tile counts its items, then one item
// adds the tile's count to the global total.
AMP_TILED_KERNEL(atomics_tile_static, amp::tiled_index<128> t, amp::array_view<int, 1> total)
{
    tile_static int count;
    if (t.local[0] == 0) count = 0;
    t.barrier.wait();
    amp::atomic_fetch_inc(&count);
    amp::atomic_fetch_add(&count, t.local[0]);
    t.barrier.wait();
    if (t.local[0] == 0) amp::atomic_fetch_add(&total[amp::index<1>(0)], count);
}

// ------------------------------------------------------------------- math
// One kernel per function, found by name: pmf_<name> (precise_math, float),
// pmd_<name> (double), fm_<name> (fast_math). Two-argument functions read y.
#define PM_F1(name)                                                                              \
    AMP_KERNEL(pmf_##name, amp::index<1> i, amp::array_view<const float, 1> x,                   \
               amp::array_view<const float, 1> y, amp::array_view<float, 1> o)                   \
    { o[i] = amp::precise_math::name##f(x[i]); }                                                 \
    AMP_KERNEL(pmd_##name, amp::index<1> i, amp::array_view<const double, 1> x,                  \
               amp::array_view<const double, 1> y, amp::array_view<double, 1> o)                 \
    { o[i] = amp::precise_math::name(x[i]); }
#define PM_F2(name)                                                                              \
    AMP_KERNEL(pmf_##name, amp::index<1> i, amp::array_view<const float, 1> x,                   \
               amp::array_view<const float, 1> y, amp::array_view<float, 1> o)                   \
    { o[i] = amp::precise_math::name##f(x[i], y[i]); }                                           \
    AMP_KERNEL(pmd_##name, amp::index<1> i, amp::array_view<const double, 1> x,                  \
               amp::array_view<const double, 1> y, amp::array_view<double, 1> o)                 \
    { o[i] = amp::precise_math::name(x[i], y[i]); }
PM_F1(acos) PM_F1(acosh) PM_F1(asin) PM_F1(asinh) PM_F1(atan) PM_F1(atanh) PM_F1(cbrt)
PM_F1(ceil) PM_F1(cos) PM_F1(cosh) PM_F1(cospi) PM_F1(erf) PM_F1(erfc) PM_F1(erfcinv)
PM_F1(erfinv) PM_F1(exp) PM_F1(exp10) PM_F1(exp2) PM_F1(expm1) PM_F1(fabs) PM_F1(floor)
PM_F1(lgamma) PM_F1(log) PM_F1(log10) PM_F1(log1p) PM_F1(log2) PM_F1(logb) PM_F1(nearbyint)
PM_F1(phi) PM_F1(probit) PM_F1(rcbrt) PM_F1(round) PM_F1(rsqrt) PM_F1(sin) PM_F1(sinh)
PM_F1(sinpi) PM_F1(sqrt) PM_F1(tan) PM_F1(tanh) PM_F1(tanpi) PM_F1(tgamma) PM_F1(trunc)
PM_F2(atan2) PM_F2(copysign) PM_F2(fdim) PM_F2(fmax) PM_F2(fmin) PM_F2(fmod) PM_F2(hypot)
PM_F2(nextafter) PM_F2(pow) PM_F2(remainder)

#define FM_F1(name)                                                                              \
    AMP_KERNEL(fm_##name, amp::index<1> i, amp::array_view<const float, 1> x,                    \
               amp::array_view<const float, 1> y, amp::array_view<float, 1> o)                   \
    { o[i] = amp::fast_math::name##f(x[i]) + 0.0f * amp::fast_math::name(y[i]); }
#define FM_F2(name)                                                                              \
    AMP_KERNEL(fm_##name, amp::index<1> i, amp::array_view<const float, 1> x,                    \
               amp::array_view<const float, 1> y, amp::array_view<float, 1> o)                   \
    { o[i] = amp::fast_math::name##f(x[i], y[i]) + 0.0f * amp::fast_math::name(x[i], y[i]); }
FM_F1(acos) FM_F1(asin) FM_F1(atan) FM_F1(ceil) FM_F1(cos) FM_F1(cosh) FM_F1(exp) FM_F1(exp2)
FM_F1(fabs) FM_F1(floor) FM_F1(log) FM_F1(log10) FM_F1(log2) FM_F1(round) FM_F1(rsqrt)
FM_F1(sin) FM_F1(sinh) FM_F1(sqrt) FM_F1(tan) FM_F1(tanh) FM_F1(trunc)
FM_F2(atan2) FM_F2(fmax) FM_F2(fmin) FM_F2(fmod) FM_F2(pow)

// The functions with pointer results or integer arguments, and the
// classification functions: exact on every accelerator. Per item, k[] gets
// 28 values.
AMP_KERNEL(pm_exact, amp::index<1> i, amp::array_view<const float, 1> x,
           amp::array_view<const double, 1> dx, amp::array_view<double, 2> k)
{
    namespace pm = amp::precise_math;
    namespace fm = amp::fast_math;
    const float a = x[i];
    const double d = dx[i];
    const int n = i[0];
    int e = 0, q = 0;
    float fi = 0, s = 0, c = 0;
    double di = 0, ds = 0, dc = 0;
    k(n, 0) = pm::frexpf(a, &e);
    k(n, 1) = e;
    k(n, 2) = pm::frexp(d, &e);
    k(n, 3) = e;
    k(n, 4) = pm::modff(a, &fi) + 1000.0 * fi;
    k(n, 5) = pm::modf(d, &di) + 1000.0 * di;
    k(n, 6) = pm::ldexpf(a, n % 20 - 10);
    k(n, 7) = pm::ldexp(d, n % 20 - 10);
    k(n, 24) = pm::scalbnf(a, 3);
    k(n, 25) = pm::scalbf(a, -2.0f);
    k(n, 26) = pm::scalbn(d, 3);
    k(n, 27) = pm::scalb(d, -2.0);
    k(n, 8) = pm::ilogbf(a) + 100 * pm::ilogb(d);
    k(n, 9) = pm::remquof(a, 0.375f, &q);
    k(n, 10) = q & 7;
    k(n, 11) = pm::remquo(d, 0.375, &q);
    k(n, 12) = q & 7;
    k(n, 13) = pm::fmaf(a, a, -1.0f);
    k(n, 14) = pm::fma(d, d, -1.0);
    pm::sincosf(a, &s, &c);
    k(n, 15) = s;
    k(n, 16) = c;
    pm::sincos(d, &ds, &dc);
    k(n, 17) = ds;
    k(n, 18) = dc;
    // Classification of a, 1/(a - a) (an infinity or NaN), a * 1e-40 (may be
    // subnormal) and NaN, as bits.
    const float z = a - a, inf = 1.0f / (z + 0.0f * a), sub = a * 1e-40f, nan = pm::nanf(0);
    k(n, 19) = pm::fpclassify(a) + 8 * pm::fpclassify(inf) + 64 * pm::fpclassify(sub) +
               512 * pm::fpclassify(nan) + 4096 * pm::fpclassify(z) + 32768 * pm::fpclassify(pm::nan(0));
    k(n, 20) = pm::isfinite(a) + 2 * pm::isinf(inf) + 4 * pm::isnan(nan) + 8 * pm::isnormal(sub) +
               16 * pm::signbit(a) + 32 * pm::signbitf(-a) + 64 * pm::signbit(d) + 128 * pm::isnan(pm::nan(1)) +
               256 * pm::isinf(1.0 / (d - d)) + 512 * pm::isfinite(d) + 1024 * pm::isnormal(d);
    k(n, 21) = fm::isfinite(a) + 2 * fm::isinf(inf) + 4 * fm::isnan(nan) + 8 * fm::signbit(a) +
               16 * fm::signbitf(-a);
    fm::sincosf(a, &s, &c);
    float s2 = 0, c2 = 0;
    fm::sincos(a, &s2, &c2);
    k(n, 22) = s == s2 && c == c2 ? 0.0 : 1.0;
    k(n, 23) = fm::frexpf(a, &e) + fm::ldexpf(a, 2) + fm::modff(a, &fi) + fm::frexp(a, &q) +
               fm::ldexp(a, 1) + fm::modf(a, &s) + 0.0 * (e + q + fi + s);
}

// -------------------------------------------------------------- direct3d
// Per item, k[] gets 20 values; all exact.
AMP_KERNEL(d3d_ops, amp::index<1> i, amp::array_view<const int, 1> iv,
           amp::array_view<const float, 1> fv, amp::array_view<double, 2> k)
{
    namespace d3 = amp::direct3d;
    const int n = i[0], a = iv[i], b = iv[amp::index<1>((n + 1) % iv.extent[0])];
    const unsigned ua = (unsigned)a, ub = (unsigned)b;
    const float x = fv[i], y = fv[amp::index<1>((n + 1) % fv.extent[0])];
    k(n, 0) = d3::abs(a);
    k(n, 1) = d3::clamp(x, -0.5f, 0.25f);
    k(n, 2) = d3::clamp(a, -1000, 5000);
    k(n, 3) = d3::countbits(ua);
    k(n, 4) = d3::firstbithigh(a);
    k(n, 5) = d3::firstbitlow(a);
    k(n, 6) = d3::imax(a, b) + 0.5 * d3::imin(a, b);
    k(n, 7) = (double)d3::umax(ua, ub) + 0.5 * d3::umin(ua, ub);
    k(n, 8) = d3::mad(x, y, 0.75f);
    k(n, 9) = d3::mad((double)x, (double)y, 0.75);
    k(n, 10) = d3::mad(a, b, 12345);
    k(n, 11) = d3::mad(ua, ub, 12345u);
    k(n, 12) = d3::radians(x * 180.0f);
    k(n, 13) = d3::rcp(y);
    k(n, 14) = d3::rcp((double)y);
    k(n, 15) = d3::reversebits(ua);
    k(n, 16) = d3::saturate(2.0f * x);
    k(n, 17) = d3::sign(a) + 4 * d3::sign(b) + 16 * d3::sign(a - a);
    k(n, 18) = d3::smoothstep(-0.25f, 0.5f, x);
    k(n, 19) = d3::step(y, x);
}

// ------------------------------------------------------ using namespace
// C++ AMP code commonly opens the math namespaces; an unqualified call that a
// global function also matches must not be ambiguous on any accelerator.
__device__ double with_precise(float x, double d)
{
    using namespace amp::precise_math;
    return sin(x) + cos(d) + phi(x) + tanpi(d) + erfinv(0.5f * x) + fabs(d) + sqrt(x * x);
}
__device__ double with_fast(float x)
{
    using namespace amp::fast_math;
    return sin(x) + exp(x) + rsqrt(1.0f + x * x) + pow(2.0f, x);
}
__device__ double with_d3d(int n, float x)
{
    using namespace amp::direct3d;
    return abs(n) + saturate(x) + mad(x, x, 1.0f) + sign(n);
}
AMP_KERNEL(using_namespaces, amp::index<1> i, amp::array_view<const float, 1> x,
           amp::array_view<double, 2> o)
{
    const float a = x[i];
    o(i[0], 0) = with_precise(a, (double)a);
    o(i[0], 1) = with_fast(a);
    o(i[0], 2) = with_d3d(i[0] - 3, a);
}
