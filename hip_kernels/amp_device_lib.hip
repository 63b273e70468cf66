// amp_device_lib.hip — the device vocabulary every accelerator shares: HIP's short vector types (float4 is amp::float_4 everywhere), C++ AMP's atomics, precise_math, fast_math and direct3d helpers.
//
// The library puts this text after the common prelude (amp_prelude.hip) and,
// on the CPU accelerator, after amp_cpu_device.hpp, which supplies the HIP
// names (atomicAdd, sinpif, __popc, ...) that the host compiler lacks. Below
// this point a kernel sees the same names with the same meaning on hipRTC,
// NVRTC and g++. Self-contained: no standard headers. docs/device-language.md
// lists every name and the accuracy of the math.
//
// Short vectors: NVRTC predefines CUDA's vector types (plain aggregates, no
// operators), hipRTC predefines HIP's (HIP_vector_type, with operators), and
// the host compiler has none. Rather than patch three different types, one
// template, amp::vec<T, N>, is the type on every accelerator: the vendor
// names (float4, make_float4, ...) become macros for it at the end of this
// file, so a kernel's float4 is one type with one layout and one set of
// operators everywhere, and amp::float_4 (C++ AMP's name) is that same type.
// Size and alignment follow HIP's (a 4-vector of 8-byte elements is 32-byte
// aligned, as on AMD; CUDA's deprecated double4 was 16).
//
// Names: as in amp_prelude.hip, template parameters and other private short
// or all-uppercase names are spelt __amp_N, __amp_T, ...: the user's -D
// macros (-DN=4) are live in this text.
#ifndef AMP_DEVICE_LIB_INCLUDED
#define AMP_DEVICE_LIB_INCLUDED

// Every vector member is usable in host-side constant expressions too (a
// __device__ variable initialised with float4(...), a constexpr table).
#define AMP__VFN AMP__HD __forceinline__
// The library functions: templates on an unused parameter, so that after
// `using namespace amp::precise_math;` a call that a global function of the
// same name and signature also matches (sin, abs, ...) resolves to the global
// one (a non-template wins a tie) instead of being ambiguous; both compute
// the same thing. A call that only ours matches exactly still picks ours.
#define AMP__LFN template <class amp__unused = void> AMP_FI

namespace amp {

template <class __amp_T, int __amp_N> struct vec;

namespace detail {

template <class __amp_T> struct arith { enum { value = 0, integral = 0 }; };
template <class __amp_T> struct arith<const __amp_T> : arith<__amp_T> {};
#define AMP__ARITH(__amp_T, __amp_I) template <> struct arith<__amp_T> { enum { value = 1, integral = __amp_I }; };
AMP__ARITH(bool, 1)
AMP__ARITH(char, 1)
AMP__ARITH(signed char, 1)
AMP__ARITH(unsigned char, 1)
AMP__ARITH(short, 1)
AMP__ARITH(unsigned short, 1)
AMP__ARITH(int, 1)
AMP__ARITH(unsigned, 1)
AMP__ARITH(long, 1)
AMP__ARITH(unsigned long, 1)
AMP__ARITH(long long, 1)
AMP__ARITH(unsigned long long, 1)
AMP__ARITH(float, 0)
AMP__ARITH(double, 0)
#undef AMP__ARITH
template <class __amp_T, class __amp_U> struct same { enum { value = 0 }; };
template <class __amp_T> struct same<__amp_T, __amp_T> { enum { value = 1 }; };

// The clamps of C++ AMP's norm and unorm. A NaN gives the lower bound, as
// Direct3D's clamp and saturate do (C++ AMP's GPU semantics); -0.0 stays.
AMP__VFN constexpr float clamp_norm(float x) { return x >= -1.0f ? (x <= 1.0f ? x : 1.0f) : -1.0f; }
AMP__VFN constexpr float clamp_unorm(float x) { return x >= 0.0f ? (x <= 1.0f ? x : 1.0f) : 0.0f; }
} // namespace detail

// ------------------------------------------------------- norm and unorm
// C++ AMP's norm and unorm (concurrency::graphics): a float clamped to
// [-1, 1] and to [0, 1]. Construction from a float, double, int or unsigned
// is explicit and clamps (a value that is not a float is first converted to
// float); the default value is 0 (so, unlike a float, neither can be
// tile_static on a GPU, whose compilers refuse constructors there). unorm
// converts implicitly to norm, both to float. + - * / and their assignments,
// ++ and -- (both forms) and, for norm, unary - compute in float and clamp
// the result; comparisons are those of the float values.
//
// CUDA's and HIP's math headers, which NVRTC and hipRTC read before any
// source (NVRTC's are built in, out of reach of a -D), declare a function
// ::norm(int, const double *). Under C++ AMP's `using namespace
// amp::graphics;` an unqualified norm would name both that function and
// this type, which both compilers reject as ambiguous. So the token norm is
// renamed, in the prelude and in every kernel after it, to one no vendor
// header declares: amp::norm, amp::graphics::norm and a plain norm all name
// the type on every accelerator (diagnostics call it amp__norm), and the
// vendor's norm(dim, p) is not reachable by that name (the device language
// never offered it; the CPU accelerator has none). A kernel cannot be named
// norm (AMP_KERNEL says so).
#define norm amp__norm
struct norm;
struct unorm;
#define AMP__NORM_CLASS(__amp_C, clamp)                                                          \
    struct __amp_C {                                                                             \
        AMP__VFN constexpr __amp_C() : v_(0.0f) {}                                               \
        AMP__VFN constexpr explicit __amp_C(float x) : v_(detail::clamp(x)) {}                   \
        template <class __amp_U, typename meta::enable<detail::arith<__amp_U>::value && !detail::same<__amp_U, float>::value && \
                                                 !detail::is_norm<__amp_U>::value>::type = 0>    \
        AMP__VFN constexpr explicit __amp_C(__amp_U x) : v_(detail::clamp((float)x)) {}          \
        __amp_C(const __amp_C &) = default;                                                      \
        __amp_C &operator=(const __amp_C &) = default;                                           \
        AMP__VFN constexpr operator float() const { return v_; }                                 \
        AMP__VFN constexpr __amp_C &operator+=(const __amp_C &o) { v_ = detail::clamp(v_ + o.v_); return *this; } \
        AMP__VFN constexpr __amp_C &operator-=(const __amp_C &o) { v_ = detail::clamp(v_ - o.v_); return *this; } \
        AMP__VFN constexpr __amp_C &operator*=(const __amp_C &o) { v_ = detail::clamp(v_ * o.v_); return *this; } \
        AMP__VFN constexpr __amp_C &operator/=(const __amp_C &o) { v_ = detail::clamp(v_ / o.v_); return *this; } \
        AMP__VFN constexpr __amp_C &operator++() { v_ = detail::clamp(v_ + 1.0f); return *this; } \
        AMP__VFN constexpr __amp_C &operator--() { v_ = detail::clamp(v_ - 1.0f); return *this; } \
        AMP__VFN constexpr __amp_C operator++(int) { __amp_C old = *this; ++*this; return old; } \
        AMP__VFN constexpr __amp_C operator--(int) { __amp_C old = *this; --*this; return old; } \
        friend AMP__VFN constexpr __amp_C operator+(__amp_C a, const __amp_C &b) { return a += b; } \
        friend AMP__VFN constexpr __amp_C operator-(__amp_C a, const __amp_C &b) { return a -= b; } \
        friend AMP__VFN constexpr __amp_C operator*(__amp_C a, const __amp_C &b) { return a *= b; } \
        friend AMP__VFN constexpr __amp_C operator/(__amp_C a, const __amp_C &b) { return a /= b; } \
                                                                                                 \
      private:                                                                                   \
        float v_;                                                                                \
                                                                                                 \
      public:
namespace detail {
template <class __amp_T> struct is_norm { enum { value = 0 }; };
template <> struct is_norm<norm> { enum { value = 1 }; };
template <> struct is_norm<unorm> { enum { value = 1 }; };
template <class __amp_T> struct is_norm<const __amp_T> : is_norm<__amp_T> {};
template <> struct arith<norm> { enum { value = 1, integral = 0 }; };
template <> struct arith<unorm> { enum { value = 1, integral = 0 }; };
} // namespace detail
AMP__NORM_CLASS(unorm, clamp_unorm)
};
AMP__NORM_CLASS(norm, clamp_norm)
    AMP__VFN constexpr norm(const unorm &u) : v_((float)u) {}
    AMP__VFN constexpr norm operator-() const { return norm(-v_); }
};
#undef AMP__NORM_CLASS

namespace detail {

template <class __amp_T> struct is_vec { enum { value = 0 }; };
template <class __amp_T, int __amp_N> struct is_vec<vec<__amp_T, __amp_N>> { enum { value = 1 }; };
template <class __amp_T> AMP__HD __amp_T &&declval_(); // never defined: unevaluated operands only
template <class...> struct void_t_ { typedef void type; };
// A thread-geometry value: anything but one of our vectors with x, y and z
// convertible to unsigned. CUDA's threadIdx and blockIdx are its builtin
// uint3, HIP's are coordinate objects, the CPU accelerator's are its own
// struct; uint3 (ours) converts from each, so `uint3 t = threadIdx;` compiles
// on every accelerator (natively it does not on HIP).
template <class __amp_V, class = void> struct xyz_like { enum { value = 0 }; };
template <class __amp_V>
struct xyz_like<__amp_V, typename void_t_<decltype((unsigned)declval_<const __amp_V &>().x),
                                    decltype((unsigned)declval_<const __amp_V &>().y),
                                    decltype((unsigned)declval_<const __amp_V &>().z)>::type> {
    enum { value = !is_vec<__amp_V>::value && !arith<__amp_V>::value };
};

// Storage and per-component accessors. Alignment is HIP's: 1 and 2
// components align to their size, 4 components to theirs (16 bytes for
// float4, 32 for double4), 3 components to one element (size 3 * sizeof(T)).
template <class __amp_T, int __amp_N> struct vec_base;

#define AMP__COMP(c, alias)                                                                      \
    AMP__VFN constexpr __amp_T get_##c() const { return c; }                                     \
    AMP__VFN constexpr void set_##c(__amp_T v) { c = v; }                                        \
    AMP__VFN constexpr __amp_T &ref_##c() { return c; }                                          \
    AMP__VFN constexpr __amp_T get_##alias() const { return c; }                                 \
    AMP__VFN constexpr void set_##alias(__amp_T v) { c = v; }                                    \
    AMP__VFN constexpr __amp_T &ref_##alias() { return c; }
#define AMP__SW2(a, b)                                                                           \
    AMP__VFN constexpr vec<__amp_T, 2> get_##a##b() const { return vec<__amp_T, 2>(a, b); }      \
    AMP__VFN constexpr void set_##a##b(const vec<__amp_T, 2> &v) { a = v.x; b = v.y; }
#define AMP__SW3(a, b, c)                                                                        \
    AMP__VFN constexpr vec<__amp_T, 3> get_##a##b##c() const { return vec<__amp_T, 3>(a, b, c); } \
    AMP__VFN constexpr void set_##a##b##c(const vec<__amp_T, 3> &v) { a = v.x; b = v.y; c = v.z; }
#define AMP__SW4(a, b, c, d)                                                                     \
    AMP__VFN constexpr vec<__amp_T, 4> get_##a##b##c##d() const { return vec<__amp_T, 4>(a, b, c, d); } \
    AMP__VFN constexpr void set_##a##b##c##d(const vec<__amp_T, 4> &v) { a = v.x; b = v.y; c = v.z; d = v.w; }

template <class __amp_T> struct alignas(sizeof(__amp_T)) vec_base<__amp_T, 1> {
    __amp_T x;
    AMP__COMP(x, r)
};
template <class __amp_T> struct alignas(2 * sizeof(__amp_T)) vec_base<__amp_T, 2> {
    __amp_T x, y;
    AMP__COMP(x, r) AMP__COMP(y, g)
    AMP__SW2(x, y) AMP__SW2(y, x)
};
template <class __amp_T> struct vec_base<__amp_T, 3> {
    __amp_T x, y, z;
    AMP__COMP(x, r) AMP__COMP(y, g) AMP__COMP(z, b)
    AMP__SW2(x, y) AMP__SW2(x, z) AMP__SW2(y, x) AMP__SW2(y, z) AMP__SW2(z, x) AMP__SW2(z, y)
    AMP__SW3(x, y, z) AMP__SW3(x, z, y) AMP__SW3(y, x, z) AMP__SW3(y, z, x) AMP__SW3(z, x, y)
    AMP__SW3(z, y, x)
};
template <class __amp_T> struct alignas(4 * sizeof(__amp_T)) vec_base<__amp_T, 4> {
    __amp_T x, y, z, w;
    AMP__COMP(x, r) AMP__COMP(y, g) AMP__COMP(z, b) AMP__COMP(w, a)
    AMP__SW2(x, y) AMP__SW2(x, z) AMP__SW2(x, w) AMP__SW2(y, x) AMP__SW2(y, z) AMP__SW2(y, w)
    AMP__SW2(z, x) AMP__SW2(z, y) AMP__SW2(z, w) AMP__SW2(w, x) AMP__SW2(w, y) AMP__SW2(w, z)
    AMP__SW3(x, y, z) AMP__SW3(x, y, w) AMP__SW3(x, z, y) AMP__SW3(x, z, w) AMP__SW3(x, w, y)
    AMP__SW3(x, w, z) AMP__SW3(y, x, z) AMP__SW3(y, x, w) AMP__SW3(y, z, x) AMP__SW3(y, z, w)
    AMP__SW3(y, w, x) AMP__SW3(y, w, z) AMP__SW3(z, x, y) AMP__SW3(z, x, w) AMP__SW3(z, y, x)
    AMP__SW3(z, y, w) AMP__SW3(z, w, x) AMP__SW3(z, w, y) AMP__SW3(w, x, y) AMP__SW3(w, x, z)
    AMP__SW3(w, y, x) AMP__SW3(w, y, z) AMP__SW3(w, z, x) AMP__SW3(w, z, y)
    AMP__SW4(x, y, z, w) AMP__SW4(x, y, w, z) AMP__SW4(x, z, y, w) AMP__SW4(x, z, w, y)
    AMP__SW4(x, w, y, z) AMP__SW4(x, w, z, y) AMP__SW4(y, x, z, w) AMP__SW4(y, x, w, z)
    AMP__SW4(y, z, x, w) AMP__SW4(y, z, w, x) AMP__SW4(y, w, x, z) AMP__SW4(y, w, z, x)
    AMP__SW4(z, x, y, w) AMP__SW4(z, x, w, y) AMP__SW4(z, y, x, w) AMP__SW4(z, y, w, x)
    AMP__SW4(z, w, x, y) AMP__SW4(z, w, y, x) AMP__SW4(w, x, y, z) AMP__SW4(w, x, z, y)
    AMP__SW4(w, y, x, z) AMP__SW4(w, y, z, x) AMP__SW4(w, z, x, y) AMP__SW4(w, z, y, x)
};
#undef AMP__COMP
#undef AMP__SW2
#undef AMP__SW3
#undef AMP__SW4

// The storage of N components of type T from any object with members
// x[, y[, z[, w]]] (another vec, a vendor vector), component by component.
template <class __amp_T, int __amp_N, class __amp_V> AMP__VFN constexpr vec_base<__amp_T, __amp_N> convert_base(const __amp_V &o) {
    if constexpr (__amp_N == 1) return vec_base<__amp_T, 1>{__amp_T(o.x)};
    else if constexpr (__amp_N == 2) return vec_base<__amp_T, 2>{__amp_T(o.x), __amp_T(o.y)};
    else if constexpr (__amp_N == 3) return vec_base<__amp_T, 3>{__amp_T(o.x), __amp_T(o.y), __amp_T(o.z)};
    else return vec_base<__amp_T, 4>{__amp_T(o.x), __amp_T(o.y), __amp_T(o.z), __amp_T(o.w)};
}
template <class __amp_T, int __amp_N> AMP__VFN constexpr vec_base<__amp_T, __amp_N> splat_base(__amp_T s) {
    if constexpr (__amp_N == 1) return vec_base<__amp_T, 1>{s};
    else if constexpr (__amp_N == 2) return vec_base<__amp_T, 2>{s, s};
    else if constexpr (__amp_N == 3) return vec_base<__amp_T, 3>{s, s, s};
    else return vec_base<__amp_T, 4>{s, s, s, s};
}

} // namespace detail

// ------------------------------------------------------------ amp::vec<T, N>
// Operators are HIP's: ++ -- (both forms); + - * / and their assignments;
// unary - (signed element types); ~ % ^ | & << >> and their assignments
// (integral element types); == and != (true when every component matches).
// A scalar operand is broadcast to every component (v * 2.0f, 1 + v).
// Constructors are C++ AMP's and HIP's: one value per component, one value
// for all components, and an explicit conversion from a vector of another
// element type with the same count. The default constructor leaves the
// components uninitialised, as HIP's does and C++ AMP's does not: a type with
// a non-trivial default constructor cannot be tile_static/__shared__.
// vec<T, N>() and vec<T, N>{} are zero. Vectors of norm and unorm (norm_2,
// unorm_4, ...) start at zero, as their components do, and clamp each
// component as it does.
template <class __amp_T, int __amp_N> struct vec : detail::vec_base<__amp_T, __amp_N> {
    static_assert(detail::arith<__amp_T>::value && __amp_N >= 1 && __amp_N <= 4,
                  "amp::vec<T, N>: T must be an arithmetic type, norm or unorm, and N 1..4");
    typedef __amp_T value_type;
    static constexpr int size = __amp_N;

    vec() = default;
    vec(const vec &) = default;
    vec &operator=(const vec &) = default;
    template <class __amp_U, typename meta::enable<detail::arith<__amp_U>::value>::type = 0>
    AMP__VFN constexpr vec(__amp_U s) : detail::vec_base<__amp_T, __amp_N>(detail::splat_base<__amp_T, __amp_N>(__amp_T(s))) {}
    template <class... __amp_U, typename meta::enable<(__amp_N > 1 && sizeof...(__amp_U) == __amp_N &&
                                                 (detail::arith<__amp_U>::value && ...))>::type = 0>
    AMP__VFN constexpr vec(__amp_U... u) : detail::vec_base<__amp_T, __amp_N>{static_cast<__amp_T>(u)...} {}
    template <class __amp_U, typename meta::enable<!detail::same<__amp_U, __amp_T>::value>::type = 0>
    AMP__VFN constexpr explicit vec(const vec<__amp_U, __amp_N> &o)
        : detail::vec_base<__amp_T, __amp_N>(detail::convert_base<__amp_T, __amp_N>(o)) {}
    template <class __amp_V, typename meta::enable<detail::same<__amp_T, unsigned>::value && __amp_N == 3 &&
                                             detail::xyz_like<__amp_V>::value>::type = 0>
    AMP__VFN constexpr vec(const __amp_V &g) : detail::vec_base<__amp_T, __amp_N>{(unsigned)g.x, (unsigned)g.y, (unsigned)g.z} {}

#define AMP__VEC_ASSIGN(op, integral_only)                                                       \
    AMP__VFN constexpr vec &operator op(const vec &o) {                                          \
        static_assert(!integral_only || detail::arith<__amp_T>::integral,                        \
                      "operator " #op " needs a vector of an integral element type");             \
        this->x op o.x;                                                                          \
        if constexpr (__amp_N > 1) this->y op o.y;                                               \
        if constexpr (__amp_N > 2) this->z op o.z;                                               \
        if constexpr (__amp_N > 3) this->w op o.w;                                               \
        return *this;                                                                            \
    }
    AMP__VEC_ASSIGN(+=, false)
    AMP__VEC_ASSIGN(-=, false)
    AMP__VEC_ASSIGN(*=, false)
    AMP__VEC_ASSIGN(/=, false)
    AMP__VEC_ASSIGN(%=, true)
    AMP__VEC_ASSIGN(^=, true)
    AMP__VEC_ASSIGN(|=, true)
    AMP__VEC_ASSIGN(&=, true)
    AMP__VEC_ASSIGN(<<=, true)
    AMP__VEC_ASSIGN(>>=, true)
#undef AMP__VEC_ASSIGN

    AMP__VFN constexpr vec &operator++() { return *this += vec(__amp_T(1)); }
    AMP__VFN constexpr vec &operator--() { return *this -= vec(__amp_T(1)); }
    AMP__VFN constexpr vec operator++(int) { vec t = *this; *this += vec(__amp_T(1)); return t; }
    AMP__VFN constexpr vec operator--(int) { vec t = *this; *this -= vec(__amp_T(1)); return t; }
    AMP__VFN constexpr vec operator-() const {
        static_assert(__amp_T(-1) < __amp_T(0), "unary - needs a vector of a signed element type");
        return vec(__amp_T(0)) -= *this;
    }
    AMP__VFN constexpr vec operator~() const {
        static_assert(detail::arith<__amp_T>::integral, "operator ~ needs a vector of an integral element type");
        vec r = *this;
        r.x = __amp_T(~r.x);
        if constexpr (__amp_N > 1) r.y = __amp_T(~r.y);
        if constexpr (__amp_N > 2) r.z = __amp_T(~r.z);
        if constexpr (__amp_N > 3) r.w = __amp_T(~r.w);
        return r;
    }

    // Hidden friends: found through either operand, and a scalar operand
    // converts through the broadcast constructor.
#define AMP__VEC_BINARY(op)                                                                      \
    friend AMP__VFN constexpr vec operator op(vec a, const vec &b) { return a op##= b; }
    AMP__VEC_BINARY(+)
    AMP__VEC_BINARY(-)
    AMP__VEC_BINARY(*)
    AMP__VEC_BINARY(/)
    AMP__VEC_BINARY(%)
    AMP__VEC_BINARY(^)
    AMP__VEC_BINARY(|)
    AMP__VEC_BINARY(&)
    AMP__VEC_BINARY(<<)
    AMP__VEC_BINARY(>>)
#undef AMP__VEC_BINARY
    friend AMP__VFN constexpr bool operator==(const vec &a, const vec &b) {
        bool eq = a.x == b.x;
        if constexpr (__amp_N > 1) eq = eq && a.y == b.y;
        if constexpr (__amp_N > 2) eq = eq && a.z == b.z;
        if constexpr (__amp_N > 3) eq = eq && a.w == b.w;
        return eq;
    }
    friend AMP__VFN constexpr bool operator!=(const vec &a, const vec &b) { return !(a == b); }
};

// C++ AMP's names (concurrency::graphics), the same types as HIP's.
typedef unsigned int uint;
typedef vec<int, 2> int_2;
typedef vec<int, 3> int_3;
typedef vec<int, 4> int_4;
typedef vec<unsigned, 2> uint_2;
typedef vec<unsigned, 3> uint_3;
typedef vec<unsigned, 4> uint_4;
typedef vec<float, 2> float_2;
typedef vec<float, 3> float_3;
typedef vec<float, 4> float_4;
typedef vec<double, 2> double_2;
typedef vec<double, 3> double_3;
typedef vec<double, 4> double_4;
typedef vec<norm, 2> norm_2;
typedef vec<norm, 3> norm_3;
typedef vec<norm, 4> norm_4;
typedef vec<unorm, 2> unorm_2;
typedef vec<unorm, 3> unorm_3;
typedef vec<unorm, 4> unorm_4;

// short_vector<T, N>::type: the vector of N Ts (T itself for N == 1).
template <class __amp_T, int __amp_N> struct short_vector {
    static_assert(__amp_N >= 1 && __amp_N <= 4, "short_vector<T, N>: N must be 1..4");
    typedef vec<__amp_T, __amp_N> type;
};
template <class __amp_T> struct short_vector<__amp_T, 1> { typedef __amp_T type; };
// short_vector_traits<V>: value_type and size of a vector or a scalar.
template <class __amp_V> struct short_vector_traits {
    static_assert(detail::arith<__amp_V>::value, "short_vector_traits: not a short vector or scalar");
    typedef __amp_V value_type;
    static constexpr int size = 1;
};
template <class __amp_T, int __amp_N> struct short_vector_traits<vec<__amp_T, __amp_N>> {
    typedef __amp_T value_type;
    static constexpr int size = __amp_N;
};

namespace graphics {
using amp::uint;
using amp::int_2;
using amp::int_3;
using amp::int_4;
using amp::uint_2;
using amp::uint_3;
using amp::uint_4;
using amp::float_2;
using amp::float_3;
using amp::float_4;
using amp::double_2;
using amp::double_3;
using amp::double_4;
using amp::norm;
using amp::norm_2;
using amp::norm_3;
using amp::norm_4;
using amp::unorm;
using amp::unorm_2;
using amp::unorm_3;
using amp::unorm_4;
using amp::short_vector;
using amp::short_vector_traits;
} // namespace graphics

// make_<vendor name>(components...): HIP's and CUDA's constructors by name.
// The macros at the end of the file bind make_float4 and the rest to these
// (named mk_*: NVRTC flags any function called make_long4 as its deprecated
// builtin). Templates whose return type depends on a defaulted parameter
// (never deduced: the arguments convert to T as a plain function's would),
// so that a compile instantiates vec<T, N>, swizzles and operators, only
// for the types its kernels make: plain functions would instantiate all 48
// in every compile, a large part of a small kernel's compile time.
namespace vendor {
#define AMP__MAKE(name, __amp_T)                                                                 \
    template <class __amp_E = __amp_T> AMP__VFN constexpr vec<__amp_E, 1> mk_##name##1(__amp_T x) { return vec<__amp_E, 1>(x); } \
    template <class __amp_E = __amp_T> AMP__VFN constexpr vec<__amp_E, 2> mk_##name##2(__amp_T x, __amp_T y) { return vec<__amp_E, 2>(x, y); } \
    template <class __amp_E = __amp_T> AMP__VFN constexpr vec<__amp_E, 3> mk_##name##3(__amp_T x, __amp_T y, __amp_T z) { return vec<__amp_E, 3>(x, y, z); } \
    template <class __amp_E = __amp_T> AMP__VFN constexpr vec<__amp_E, 4> mk_##name##4(__amp_T x, __amp_T y, __amp_T z, __amp_T w) { return vec<__amp_E, 4>(x, y, z, w); }
AMP__MAKE(char, signed char)
AMP__MAKE(uchar, unsigned char)
AMP__MAKE(short, short)
AMP__MAKE(ushort, unsigned short)
AMP__MAKE(int, int)
AMP__MAKE(uint, unsigned int)
AMP__MAKE(long, long)
AMP__MAKE(ulong, unsigned long)
AMP__MAKE(longlong, long long)
AMP__MAKE(ulonglong, unsigned long long)
AMP__MAKE(float, float)
AMP__MAKE(double, double)
#undef AMP__MAKE
} // namespace vendor

namespace detail {
// The vectors' layout (HIP's numbers on every accelerator) is asserted by
// test/kernels/device_lang.hip, not here: instantiating all 56 vectors
// would cost every compile a large part of a small kernel's compile time.
static_assert(sizeof(long) == 8, "hipamp kernels assume LP64 (long is 64-bit, as on every supported target)");
} // namespace detail

// --------------------------------------------------------------- atomics
// C++ AMP's atomic functions (concurrency::atomic_*), with its signatures.
// They are relaxed read-modify-writes, as C++ AMP's are, device-wide on a
// GPU (tile_static or global memory) and process-wide on the CPU
// accelerator, whose tiles run on several threads.
#define AMP__ATOMIC2(name, hip)                                                                  \
    AMP_FI int name(int *dest, int val) { return hip(dest, val); }                               \
    AMP_FI unsigned name(unsigned *dest, unsigned val) { return hip(dest, val); }
AMP__ATOMIC2(atomic_fetch_add, atomicAdd)
AMP__ATOMIC2(atomic_fetch_sub, atomicSub)
AMP__ATOMIC2(atomic_fetch_and, atomicAnd)
AMP__ATOMIC2(atomic_fetch_or, atomicOr)
AMP__ATOMIC2(atomic_fetch_xor, atomicXor)
AMP__ATOMIC2(atomic_fetch_max, atomicMax)
AMP__ATOMIC2(atomic_fetch_min, atomicMin)
AMP__ATOMIC2(atomic_exchange, atomicExch)
#undef AMP__ATOMIC2
AMP_FI float atomic_exchange(float *dest, float val) { return atomicExch(dest, val); }
AMP_FI int atomic_fetch_inc(int *dest) { return atomicAdd(dest, 1); }
AMP_FI unsigned atomic_fetch_inc(unsigned *dest) { return atomicAdd(dest, 1u); }
AMP_FI int atomic_fetch_dec(int *dest) { return atomicSub(dest, 1); }
AMP_FI unsigned atomic_fetch_dec(unsigned *dest) { return atomicSub(dest, 1u); }
// Stores val when *dest equals *expected_value and returns true; otherwise
// returns false and writes the value found to *expected_value.
AMP_FI bool atomic_compare_exchange(int *dest, int *expected_value, int val) {
    int want = *expected_value, old = atomicCAS(dest, want, val);
    if (old == want) return true;
    *expected_value = old;
    return false;
}
AMP_FI bool atomic_compare_exchange(unsigned *dest, unsigned *expected_value, unsigned val) {
    unsigned want = *expected_value, old = atomicCAS(dest, want, val);
    if (old == want) return true;
    *expected_value = old;
    return false;
}

} // namespace amp

// ------------------------------------------------------ classification
// The values fpclassify returns: the host C library's (glibc's) on the CPU
// accelerator; the same numbers on the GPUs, whose compilers define none.
#ifndef FP_NAN
#define FP_NAN 0
#define FP_INFINITE 1
#define FP_ZERO 2
#define FP_SUBNORMAL 3
#define FP_NORMAL 4
#endif

namespace amp {
namespace detail {
// Classification from the bits: exact, and unaffected by any fast-math
// option a user passes to the compiler.
AMP_FI unsigned fbits(float x) { return __float_as_uint(x); }
AMP_FI unsigned long long dbits(double x) { return (unsigned long long)__double_as_longlong(x); }
AMP_FI int classify(float x) {
    unsigned b = fbits(x), e = (b >> 23) & 0xffu, m = b & 0x7fffffu;
    if (e == 0xffu) return m ? FP_NAN : FP_INFINITE;
    if (e == 0) return m ? FP_SUBNORMAL : FP_ZERO;
    return FP_NORMAL;
}
AMP_FI int classify(double x) {
    unsigned long long b = dbits(x), e = (b >> 52) & 0x7ffull, m = b & 0xfffffffffffffull;
    if (e == 0x7ffull) return m ? FP_NAN : FP_INFINITE;
    if (e == 0) return m ? FP_SUBNORMAL : FP_ZERO;
    return FP_NORMAL;
}
AMP_FI int sign_bit(float x) { return (int)(fbits(x) >> 31); }
AMP_FI int sign_bit(double x) { return (int)(dbits(x) >> 63); }
AMP_FI float quiet_nanf() { return __uint_as_float(0x7fc00000u); }
AMP_FI double quiet_nan() { return __longlong_as_double(0x7ff8000000000000ll); }

// POSIX scalb: x * 2^y for an integral y; NaN for a non-integral y, and
// for 0 * 2^inf and inf * 2^-inf.
AMP_FI double scalb(double x, double y) {
    if (x != x || y != y) return x + y;
    if (y - y != 0.0) { // y is infinite
        if (y > 0.0) return x == 0.0 ? y - y : x * y;
        return x - x != 0.0 ? y - y : x / -y;
    }
    if (::trunc(y) != y) return (y - y) / (y - y);
    // Past +-65536 every finite x has over- or underflowed already.
    return ::scalbn(x, (int)(y > 65536.0 ? 65536.0 : (y < -65536.0 ? -65536.0 : y)));
}
// Exact in double, so the one rounding to float is the right one.
AMP_FI float scalb(float x, float y) { return (float)scalb((double)x, (double)y); }
} // namespace detail

// ------------------------------------------------------------ precise_math
// C++ AMP's precise_math (float and double). The double forms are the
// accelerator's accurate math library (CUDA's / ROCm's on a GPU, the C
// library's on the CPU, or the CPU accelerator's own implementations where
// it has none). The float forms compute in double and round once: the
// double result is within a few double ulps, 2^-29 of a float ulp, so the
// float result is within 0.5 ulp plus that, at least as accurate as any
// host's float libm (the vendors' own float functions allow up to 4 ulp:
// CUDA's tanf and powf). Every accelerator hipamp supports has double
// arithmetic. The exact functions (ceil, fmod, ...) stay in float. Error
// bounds: docs/device-language.md.
namespace precise_math {
// In double, rounded once to float.
#define AMP__PM1(name, fname, dglobal)                                                           \
    AMP__LFN float fname(float x) { return (float)::dglobal((double)x); }                        \
    AMP__LFN float name(float x) { return (float)::dglobal((double)x); }                         \
    AMP__LFN double name(double x) { return ::dglobal(x); }
#define AMP__PM2(name, fname, dglobal)                                                           \
    AMP__LFN float fname(float x, float y) { return (float)::dglobal((double)x, (double)y); }    \
    AMP__LFN float name(float x, float y) { return (float)::dglobal((double)x, (double)y); }     \
    AMP__LFN double name(double x, double y) { return ::dglobal(x, y); }
// Exact in float already.
#define AMP__PM1X(name, fname, fglobal, dglobal)                                                 \
    AMP__LFN float fname(float x) { return ::fglobal(x); }                                       \
    AMP__LFN float name(float x) { return ::fglobal(x); }                                        \
    AMP__LFN double name(double x) { return ::dglobal(x); }
#define AMP__PM2X(name, fname, fglobal, dglobal)                                                 \
    AMP__LFN float fname(float x, float y) { return ::fglobal(x, y); }                           \
    AMP__LFN float name(float x, float y) { return ::fglobal(x, y); }                            \
    AMP__LFN double name(double x, double y) { return ::dglobal(x, y); }
AMP__PM1(acos, acosf, acos)
AMP__PM1(acosh, acoshf, acosh)
AMP__PM1(asin, asinf, asin)
AMP__PM1(asinh, asinhf, asinh)
AMP__PM1(atan, atanf, atan)
AMP__PM1(atanh, atanhf, atanh)
AMP__PM1(cbrt, cbrtf, cbrt)
AMP__PM1X(ceil, ceilf, ceilf, ceil)
AMP__PM1(cos, cosf, cos)
AMP__PM1(cosh, coshf, cosh)
AMP__PM1(cospi, cospif, cospi)
AMP__PM1(erf, erff, erf)
AMP__PM1(erfc, erfcf, erfc)
AMP__PM1(erfcinv, erfcinvf, erfcinv)
AMP__PM1(erfinv, erfinvf, erfinv)
AMP__PM1(exp, expf, exp)
AMP__PM1(exp10, exp10f, exp10)
AMP__PM1(exp2, exp2f, exp2)
AMP__PM1(expm1, expm1f, expm1)
AMP__PM1X(fabs, fabsf, fabsf, fabs)
AMP__PM1X(floor, floorf, floorf, floor)
AMP__PM1(log, logf, log)
AMP__PM1(log10, log10f, log10)
AMP__PM1(log1p, log1pf, log1p)
AMP__PM1(log2, log2f, log2)
AMP__PM1X(logb, logbf, logbf, logb)
AMP__PM1X(nearbyint, nearbyintf, nearbyintf, nearbyint)
AMP__PM1(phi, phif, normcdf)
AMP__PM1(probit, probitf, normcdfinv)
AMP__PM1(rcbrt, rcbrtf, rcbrt)
AMP__PM1X(round, roundf, roundf, round)
AMP__PM1(rsqrt, rsqrtf, rsqrt)
AMP__PM1(sin, sinf, sin)
AMP__PM1(sinh, sinhf, sinh)
AMP__PM1(sinpi, sinpif, sinpi)
AMP__PM1(sqrt, sqrtf, sqrt)
AMP__PM1(tan, tanf, tan)
AMP__PM1(tanh, tanhf, tanh)
AMP__PM1(tgamma, tgammaf, tgamma)
AMP__PM1X(trunc, truncf, truncf, trunc)
AMP__PM2(atan2, atan2f, atan2)
AMP__PM2X(copysign, copysignf, copysignf, copysign)
AMP__PM2X(fdim, fdimf, fdimf, fdim)
AMP__PM2X(fmax, fmaxf, fmaxf, fmax)
AMP__PM2X(fmin, fminf, fminf, fmin)
AMP__PM2X(fmod, fmodf, fmodf, fmod)
AMP__PM2(hypot, hypotf, hypot)
AMP__PM2X(nextafter, nextafterf, nextafterf, nextafter)
AMP__PM2(pow, powf, pow)
AMP__PM2X(remainder, remainderf, remainderf, remainder)
#undef AMP__PM1
#undef AMP__PM2
#undef AMP__PM1X
#undef AMP__PM2X

AMP__LFN float fmaf(float x, float y, float z) { return ::fmaf(x, y, z); }
AMP__LFN float fma(float x, float y, float z) { return ::fmaf(x, y, z); }
AMP__LFN double fma(double x, double y, double z) { return ::fma(x, y, z); }
AMP__LFN float frexpf(float x, int *e) { return ::frexpf(x, e); }
AMP__LFN float frexp(float x, int *e) { return ::frexpf(x, e); }
AMP__LFN double frexp(double x, int *e) { return ::frexp(x, e); }
AMP__LFN int ilogbf(float x) { return ::ilogbf(x); }
AMP__LFN int ilogb(float x) { return ::ilogbf(x); }
AMP__LFN int ilogb(double x) { return ::ilogb(x); }
AMP__LFN float ldexpf(float x, int e) { return ::ldexpf(x, e); }
AMP__LFN float ldexp(float x, int e) { return ::ldexpf(x, e); }
AMP__LFN double ldexp(double x, int e) { return ::ldexp(x, e); }
AMP__LFN float scalbnf(float x, int e) { return ::scalbnf(x, e); }
AMP__LFN float scalbn(float x, int e) { return ::scalbnf(x, e); }
AMP__LFN double scalbn(double x, int e) { return ::scalbn(x, e); }
AMP__LFN float scalbf(float x, float y) { return detail::scalb(x, y); }
AMP__LFN float scalb(float x, float y) { return detail::scalb(x, y); }
AMP__LFN double scalb(double x, double y) { return detail::scalb(x, y); }
AMP__LFN float modff(float x, float *ip) { return ::modff(x, ip); }
AMP__LFN float modf(float x, float *ip) { return ::modff(x, ip); }
AMP__LFN double modf(double x, double *ip) { return ::modf(x, ip); }
AMP__LFN float remquof(float x, float y, int *q) { return ::remquof(x, y, q); }
AMP__LFN float remquo(float x, float y, int *q) { return ::remquof(x, y, q); }
AMP__LFN double remquo(double x, double y, int *q) { return ::remquo(x, y, q); }
AMP__LFN void sincos(double x, double *s, double *c) { ::sincos(x, s, c); }
AMP__LFN void sincosf(float x, float *s, float *c) {
    double ds, dc;
    ::sincos((double)x, &ds, &dc);
    *s = (float)ds;
    *c = (float)dc;
}
AMP__LFN void sincos(float x, float *s, float *c) { sincosf(x, s, c); }
// lgamma: the CPU accelerator uses the reentrant form (glibc's lgamma writes
// the global signgam, a data race between its worker threads).
AMP__LFN double lgamma(double x) {
#ifdef AMP_CPU
    int s;
    return ::lgamma_r(x, &s);
#else
    return ::lgamma(x);
#endif
}
AMP__LFN float lgammaf(float x) { return (float)lgamma((double)x); }
AMP__LFN float lgamma(float x) { return lgammaf(x); }
// tan(pi x), which neither CUDA nor HIP provides: the ratio of the exactly
// reduced sinpi and cospi. Odd multiples of 1/2 give an infinity.
AMP__LFN double tanpi(double x) { return ::sinpi(x) / ::cospi(x); }
AMP__LFN float tanpif(float x) { return (float)(::sinpi((double)x) / ::cospi((double)x)); }
AMP__LFN float tanpi(float x) { return tanpif(x); }
// A quiet NaN; the argument (C99's tag string) is ignored.
AMP__LFN float nanf(int) { return detail::quiet_nanf(); }
AMP__LFN double nan(int) { return detail::quiet_nan(); }
AMP__LFN int fpclassify(float x) { return detail::classify(x); }
AMP__LFN int fpclassify(double x) { return detail::classify(x); }
AMP__LFN int isfinite(float x) { return detail::classify(x) != FP_NAN && detail::classify(x) != FP_INFINITE; }
AMP__LFN int isfinite(double x) { return detail::classify(x) != FP_NAN && detail::classify(x) != FP_INFINITE; }
AMP__LFN int isinf(float x) { return detail::classify(x) == FP_INFINITE; }
AMP__LFN int isinf(double x) { return detail::classify(x) == FP_INFINITE; }
AMP__LFN int isnan(float x) { return detail::classify(x) == FP_NAN; }
AMP__LFN int isnan(double x) { return detail::classify(x) == FP_NAN; }
AMP__LFN int isnormal(float x) { return detail::classify(x) == FP_NORMAL; }
AMP__LFN int isnormal(double x) { return detail::classify(x) == FP_NORMAL; }
AMP__LFN int signbitf(float x) { return detail::sign_bit(x); }
AMP__LFN int signbit(float x) { return detail::sign_bit(x); }
AMP__LFN int signbit(double x) { return detail::sign_bit(x); }
} // namespace precise_math

// --------------------------------------------------------------- fast_math
// C++ AMP's fast_math (float only; each name in a plain and an f form).
// Trigonometric, exponential, logarithmic and power functions use the GPU's
// hardware approximations (__sinf, __expf, __logf, __powf, ...); the rest
// are the vendor's accurate float functions. On the CPU accelerator every
// one is the C library's accurate float function.
// Error bounds: docs/device-language.md.
namespace fast_math {
#define AMP__FM1(name, impl)                                                                     \
    AMP__LFN float name##f(float x) { return impl(x); }                                          \
    AMP__LFN float name(float x) { return impl(x); }
#define AMP__FM2(name, impl)                                                                     \
    AMP__LFN float name##f(float x, float y) { return impl(x, y); }                              \
    AMP__LFN float name(float x, float y) { return impl(x, y); }
AMP__FM1(acos, ::acosf)
AMP__FM1(asin, ::asinf)
AMP__FM1(atan, ::atanf)
AMP__FM1(ceil, ::ceilf)
AMP__FM1(cos, ::__cosf)
AMP__FM1(cosh, ::coshf)
AMP__FM1(exp, ::__expf)
AMP__FM1(exp2, ::exp2f)
AMP__FM1(fabs, ::fabsf)
AMP__FM1(floor, ::floorf)
AMP__FM1(log, ::__logf)
AMP__FM1(log10, ::__log10f)
AMP__FM1(log2, ::__log2f)
AMP__FM1(round, ::roundf)
AMP__FM1(rsqrt, ::rsqrtf)
AMP__FM1(sin, ::__sinf)
AMP__FM1(sinh, ::sinhf)
AMP__FM1(sqrt, ::sqrtf)
AMP__FM1(tan, ::__tanf)
AMP__FM1(tanh, ::tanhf)
AMP__FM1(trunc, ::truncf)
AMP__FM2(atan2, ::atan2f)
AMP__FM2(fmax, ::fmaxf)
AMP__FM2(fmin, ::fminf)
AMP__FM2(fmod, ::fmodf)
AMP__FM2(pow, ::__powf)
#undef AMP__FM1
#undef AMP__FM2
AMP__LFN float frexpf(float x, int *e) { return ::frexpf(x, e); }
AMP__LFN float frexp(float x, int *e) { return ::frexpf(x, e); }
AMP__LFN float ldexpf(float x, int e) { return ::ldexpf(x, e); }
AMP__LFN float ldexp(float x, int e) { return ::ldexpf(x, e); }
AMP__LFN float modff(float x, float *ip) { return ::modff(x, ip); }
AMP__LFN float modf(float x, float *ip) { return ::modff(x, ip); }
AMP__LFN void sincosf(float x, float *s, float *c) { ::__sincosf(x, s, c); }
AMP__LFN void sincos(float x, float *s, float *c) { ::__sincosf(x, s, c); }
AMP__LFN int isfinite(float x) { return precise_math::isfinite(x); }
AMP__LFN int isinf(float x) { return precise_math::isinf(x); }
AMP__LFN int isnan(float x) { return precise_math::isnan(x); }
AMP__LFN int signbitf(float x) { return detail::sign_bit(x); }
AMP__LFN int signbit(float x) { return detail::sign_bit(x); }
} // namespace fast_math

// ---------------------------------------------------------------- direct3d
// C++ AMP's concurrency::direct3d numeric helpers (HLSL intrinsics). Exact
// and identical on every accelerator: mad is a fused multiply-add, rcp an
// IEEE division, smoothstep and radians plain IEEE operations in a fixed
// order. noise is not provided.
namespace direct3d {
AMP__LFN int abs(int x) { return x < 0 ? (int)(0u - (unsigned)x) : x; }
AMP__LFN float clamp(float x, float lo, float hi) { return ::fminf(::fmaxf(x, lo), hi); }
AMP__LFN int clamp(int x, int lo, int hi) { return x < lo ? lo : (x > hi ? hi : x); }
AMP__LFN unsigned countbits(unsigned x) { return (unsigned)__popc(x); }
// Bit index (0 = least significant) of the highest bit that differs from the
// sign bit; -1 for 0 and -1 (HLSL's firstbithigh on int).
AMP__LFN int firstbithigh(int x) {
    unsigned u = x < 0 ? ~(unsigned)x : (unsigned)x;
    return u ? 31 - __clz((int)u) : -1;
}
// Bit index of the lowest set bit; -1 for 0.
AMP__LFN int firstbitlow(int x) { return __ffs(x) - 1; }
AMP__LFN int imax(int x, int y) { return x > y ? x : y; }
AMP__LFN int imin(int x, int y) { return x < y ? x : y; }
AMP__LFN unsigned umax(unsigned x, unsigned y) { return x > y ? x : y; }
AMP__LFN unsigned umin(unsigned x, unsigned y) { return x < y ? x : y; }
AMP__LFN float mad(float x, float y, float z) { return ::fmaf(x, y, z); }
AMP__LFN double mad(double x, double y, double z) { return ::fma(x, y, z); }
AMP__LFN int mad(int x, int y, int z) { return (int)((unsigned)x * (unsigned)y + (unsigned)z); }
AMP__LFN unsigned mad(unsigned x, unsigned y, unsigned z) { return x * y + z; }
AMP__LFN float radians(float x) { return x * 0.0174532925199432957692f; }
AMP__LFN float rcp(float x) { return 1.0f / x; }
AMP__LFN double rcp(double x) { return 1.0 / x; }
AMP__LFN unsigned reversebits(unsigned x) { return __brev(x); }
AMP__LFN float saturate(float x) { return ::fminf(::fmaxf(x, 0.0f), 1.0f); }
AMP__LFN int sign(int x) { return (x > 0) - (x < 0); }
AMP__LFN float smoothstep(float lo, float hi, float x) {
    float t = saturate((x - lo) / (hi - lo));
    return t * t * (3.0f - 2.0f * t);
}
AMP__LFN float step(float y, float x) { return x >= y ? 1.0f : 0.0f; }
} // namespace direct3d

} // namespace amp

// C++ AMP's norm and unorm constants (amp_short_vectors.h's macros).
#define NORM_ZERO ((::amp::norm)0.0f)
#define NORM_MIN ((::amp::norm)-1.0f)
#define NORM_MAX ((::amp::norm)1.0f)
#define UNORM_ZERO ((::amp::unorm)0.0f)
#define UNORM_MIN ((::amp::unorm)0.0f)
#define UNORM_MAX ((::amp::unorm)1.0f)

// ------------------------------------------------- the vendor vector names
// Last, so that nothing above is rewritten by them. The element type of
// charN is signed char (CUDA's; HIP's char has the same layout).
#define char1 ::amp::vec<signed char, 1>
#define char2 ::amp::vec<signed char, 2>
#define char3 ::amp::vec<signed char, 3>
#define char4 ::amp::vec<signed char, 4>
#define uchar1 ::amp::vec<unsigned char, 1>
#define uchar2 ::amp::vec<unsigned char, 2>
#define uchar3 ::amp::vec<unsigned char, 3>
#define uchar4 ::amp::vec<unsigned char, 4>
#define short1 ::amp::vec<short, 1>
#define short2 ::amp::vec<short, 2>
#define short3 ::amp::vec<short, 3>
#define short4 ::amp::vec<short, 4>
#define ushort1 ::amp::vec<unsigned short, 1>
#define ushort2 ::amp::vec<unsigned short, 2>
#define ushort3 ::amp::vec<unsigned short, 3>
#define ushort4 ::amp::vec<unsigned short, 4>
#define int1 ::amp::vec<int, 1>
#define int2 ::amp::vec<int, 2>
#define int3 ::amp::vec<int, 3>
#define int4 ::amp::vec<int, 4>
#define uint1 ::amp::vec<unsigned int, 1>
#define uint2 ::amp::vec<unsigned int, 2>
#define uint3 ::amp::vec<unsigned int, 3>
#define uint4 ::amp::vec<unsigned int, 4>
#define long1 ::amp::vec<long, 1>
#define long2 ::amp::vec<long, 2>
#define long3 ::amp::vec<long, 3>
#define long4 ::amp::vec<long, 4>
#define ulong1 ::amp::vec<unsigned long, 1>
#define ulong2 ::amp::vec<unsigned long, 2>
#define ulong3 ::amp::vec<unsigned long, 3>
#define ulong4 ::amp::vec<unsigned long, 4>
#define longlong1 ::amp::vec<long long, 1>
#define longlong2 ::amp::vec<long long, 2>
#define longlong3 ::amp::vec<long long, 3>
#define longlong4 ::amp::vec<long long, 4>
#define ulonglong1 ::amp::vec<unsigned long long, 1>
#define ulonglong2 ::amp::vec<unsigned long long, 2>
#define ulonglong3 ::amp::vec<unsigned long long, 3>
#define ulonglong4 ::amp::vec<unsigned long long, 4>
#define float1 ::amp::vec<float, 1>
#define float2 ::amp::vec<float, 2>
#define float3 ::amp::vec<float, 3>
#define float4 ::amp::vec<float, 4>
#define double1 ::amp::vec<double, 1>
#define double2 ::amp::vec<double, 2>
#define double3 ::amp::vec<double, 3>
#define double4 ::amp::vec<double, 4>
#define make_char1 ::amp::vendor::mk_char1
#define make_char2 ::amp::vendor::mk_char2
#define make_char3 ::amp::vendor::mk_char3
#define make_char4 ::amp::vendor::mk_char4
#define make_uchar1 ::amp::vendor::mk_uchar1
#define make_uchar2 ::amp::vendor::mk_uchar2
#define make_uchar3 ::amp::vendor::mk_uchar3
#define make_uchar4 ::amp::vendor::mk_uchar4
#define make_short1 ::amp::vendor::mk_short1
#define make_short2 ::amp::vendor::mk_short2
#define make_short3 ::amp::vendor::mk_short3
#define make_short4 ::amp::vendor::mk_short4
#define make_ushort1 ::amp::vendor::mk_ushort1
#define make_ushort2 ::amp::vendor::mk_ushort2
#define make_ushort3 ::amp::vendor::mk_ushort3
#define make_ushort4 ::amp::vendor::mk_ushort4
#define make_int1 ::amp::vendor::mk_int1
#define make_int2 ::amp::vendor::mk_int2
#define make_int3 ::amp::vendor::mk_int3
#define make_int4 ::amp::vendor::mk_int4
#define make_uint1 ::amp::vendor::mk_uint1
#define make_uint2 ::amp::vendor::mk_uint2
#define make_uint3 ::amp::vendor::mk_uint3
#define make_uint4 ::amp::vendor::mk_uint4
#define make_long1 ::amp::vendor::mk_long1
#define make_long2 ::amp::vendor::mk_long2
#define make_long3 ::amp::vendor::mk_long3
#define make_long4 ::amp::vendor::mk_long4
#define make_ulong1 ::amp::vendor::mk_ulong1
#define make_ulong2 ::amp::vendor::mk_ulong2
#define make_ulong3 ::amp::vendor::mk_ulong3
#define make_ulong4 ::amp::vendor::mk_ulong4
#define make_longlong1 ::amp::vendor::mk_longlong1
#define make_longlong2 ::amp::vendor::mk_longlong2
#define make_longlong3 ::amp::vendor::mk_longlong3
#define make_longlong4 ::amp::vendor::mk_longlong4
#define make_ulonglong1 ::amp::vendor::mk_ulonglong1
#define make_ulonglong2 ::amp::vendor::mk_ulonglong2
#define make_ulonglong3 ::amp::vendor::mk_ulonglong3
#define make_ulonglong4 ::amp::vendor::mk_ulonglong4
#define make_float1 ::amp::vendor::mk_float1
#define make_float2 ::amp::vendor::mk_float2
#define make_float3 ::amp::vendor::mk_float3
#define make_float4 ::amp::vendor::mk_float4
#define make_double1 ::amp::vendor::mk_double1
#define make_double2 ::amp::vendor::mk_double2
#define make_double3 ::amp::vendor::mk_double3
#define make_double4 ::amp::vendor::mk_double4

#endif // AMP_DEVICE_LIB_INCLUDED
