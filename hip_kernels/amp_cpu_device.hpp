// amp_cpu_device.hpp — the HIP device functions the host C++ compiler lacks (atomics, device-only math, bit intrinsics), defined for the CPU accelerator.
//
// The library splices this text after the common prelude for every
// accelerator; only the CPU accelerator's compiler (which defines AMP_CPU in
// amp_cpu_prelude.hpp) sees more than this comment. The GPU compilers have
// these names natively. amp_device_lib.hip, which follows, builds C++ AMP's
// atomics and math on them, so they must mean on the CPU what they mean on a
// GPU: atomics are real atomic instructions (a launch's tiles run on several
// threads), and the device-only math functions are accurate to within about
// one ulp (computed in long double and rounded once).
//
// Names: as in amp_prelude.hip, template parameters and other private short
// or all-uppercase names are spelt __amp_N, __amp_T, ...: the user's -D
// macros (-DN=4) are live in this text.
#ifdef AMP_CPU
#ifndef AMP_CPU_DEVICE_INCLUDED
#define AMP_CPU_DEVICE_INCLUDED

// ---------------------------------------------------------------- atomics
// Relaxed, as on the GPU; RMW on x86 is a full barrier anyway.
#define AMP__ATOMIC_INT(__amp_T)                                                                 \
    inline __amp_T atomicAdd(__amp_T *p, __amp_T v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); } \
    inline __amp_T atomicSub(__amp_T *p, __amp_T v) { return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED); } \
    inline __amp_T atomicExch(__amp_T *p, __amp_T v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); } \
    inline __amp_T atomicAnd(__amp_T *p, __amp_T v) { return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); } \
    inline __amp_T atomicOr(__amp_T *p, __amp_T v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); } \
    inline __amp_T atomicXor(__amp_T *p, __amp_T v) { return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED); } \
    inline __amp_T atomicCAS(__amp_T *p, __amp_T cmp, __amp_T v) {                               \
        __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);      \
        return cmp;                                                                              \
    }                                                                                            \
    inline __amp_T atomicMin(__amp_T *p, __amp_T v) {                                            \
        __amp_T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                      \
        while (v < old && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED,       \
                                                       __ATOMIC_RELAXED)) {}                     \
        return old;                                                                              \
    }                                                                                            \
    inline __amp_T atomicMax(__amp_T *p, __amp_T v) {                                            \
        __amp_T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                      \
        while (v > old && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED,       \
                                                       __ATOMIC_RELAXED)) {}                     \
        return old;                                                                              \
    }
AMP__ATOMIC_INT(int)
AMP__ATOMIC_INT(unsigned)
AMP__ATOMIC_INT(long long)
AMP__ATOMIC_INT(unsigned long long)
#undef AMP__ATOMIC_INT

// Floating point: compare-and-swap loops on the value (the generic builtins
// compare bit patterns, which is what a GPU CAS does too).
#define AMP__ATOMIC_FP(__amp_T)                                                                  \
    template <class __amp_F> inline __amp_T amp__atomic_update(__amp_T *p, __amp_F f) {          \
        __amp_T old, nv;                                                                         \
        __atomic_load(p, &old, __ATOMIC_RELAXED);                                                \
        do { nv = f(old); } while (!__atomic_compare_exchange(p, &old, &nv, true,                \
                                                              __ATOMIC_RELAXED, __ATOMIC_RELAXED)); \
        return old;                                                                              \
    }                                                                                            \
    inline __amp_T atomicAdd(__amp_T *p, __amp_T v) { return amp__atomic_update(p, [v](__amp_T o) { return o + v; }); } \
    inline __amp_T atomicSub(__amp_T *p, __amp_T v) { return amp__atomic_update(p, [v](__amp_T o) { return o - v; }); } \
    inline __amp_T atomicMin(__amp_T *p, __amp_T v) { return amp__atomic_update(p, [v](__amp_T o) { return v < o ? v : o; }); } \
    inline __amp_T atomicMax(__amp_T *p, __amp_T v) { return amp__atomic_update(p, [v](__amp_T o) { return v > o ? v : o; }); } \
    inline __amp_T atomicExch(__amp_T *p, __amp_T v) { __amp_T old; __atomic_exchange(p, &v, &old, __ATOMIC_RELAXED); return old; } \
    inline __amp_T atomicCAS(__amp_T *p, __amp_T cmp, __amp_T v) {                               \
        __atomic_compare_exchange(p, &cmp, &v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);       \
        return cmp;                                                                              \
    }
AMP__ATOMIC_FP(float)
AMP__ATOMIC_FP(double)
#undef AMP__ATOMIC_FP

// CUDA's wrapping increment/decrement.
inline unsigned atomicInc(unsigned *p, unsigned lim) {
    unsigned old = __atomic_load_n(p, __ATOMIC_RELAXED), nv;
    do { nv = old >= lim ? 0u : old + 1u; }
    while (!__atomic_compare_exchange_n(p, &old, nv, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return old;
}
inline unsigned atomicDec(unsigned *p, unsigned lim) {
    unsigned old = __atomic_load_n(p, __ATOMIC_RELAXED), nv;
    do { nv = (old == 0u || old > lim) ? lim : old - 1u; }
    while (!__atomic_compare_exchange_n(p, &old, nv, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return old;
}

// ------------------------------------------------- device-only math, exact
namespace amp {
namespace cpu {
typedef long double ld;
const ld pi_l = 3.141592653589793238462643383279502884L;

// sin(pi r) and cos(pi r) for |r| <= 1/4, where the long double kernels are
// accurate far beyond double.
inline ld sin_pi_small(ld r) { return sinl(pi_l * r); }
inline ld cos_pi_small(ld r) { return cosl(pi_l * r); }
// sin(pi x): x reduced modulo 2 exactly (fmod and the Sterbenz subtractions
// below round nothing), so no multiple of pi is ever rounded.
inline ld sinpi(double x) {
    if (x - x != 0.0) return (ld)(x - x); // NaN or infinity: NaN
    double r = fmod(x, 2.0);                // exact, in (-2, 2), sign of x
    if (r > 1.0) r -= 2.0;
    else if (r < -1.0) r += 2.0;            // now in [-1, 1]
    double a = r < 0.0 ? -r : r;
    ld s;
    if (a <= 0.25) s = sin_pi_small(a);
    else if (a <= 0.75) s = cos_pi_small(0.5 - a);
    else s = sin_pi_small(1.0 - a);
    return r < 0.0 ? -s : s;
}
inline ld cospi(double x) {
    if (x - x != 0.0) return (ld)(x - x);
    double a = fabs(fmod(x, 2.0)); // [0, 2)
    if (a > 1.0) a = 2.0 - a;      // [0, 1]
    if (a <= 0.25) return cos_pi_small(a);
    if (a <= 0.75) return sin_pi_small(0.5 - a);
    return -cos_pi_small(1.0 - a);
}

// Inverse error functions: Winitzki's closed-form estimate (relative error
// below 2e-3 everywhere), then Halley steps on erf(x) - z or erfc(x) - y in
// long double until a step no longer changes x (three or four; deep in the
// tail, near x = 26, the fourth is needed).
// Each branch keeps its argument exact: 1 - y and 2 - y are exact
// subtractions on the ranges where they are taken.
inline ld winitzki(ld log_one_minus_z2) {
    const ld a = 0.147L, b = 2.0L / (pi_l * a);
    ld h = b + log_one_minus_z2 / 2.0L;
    return sqrtl(sqrtl(h * h - log_one_minus_z2 / a) - h);
}
inline ld erfcinv_l(ld y);
// erf(x) = z for 0 < |z| <= 1/2.
inline ld erfinv_small(ld z) {
    ld x = winitzki(log1pl(-z * z));
    if (z < 0) x = -x;
    for (int i = 0; i < 8; ++i) {
        ld u = (erfl(x) - z) / (2.0L / sqrtl(pi_l) * expl(-x * x)), step = u / (1.0L + x * u);
        x -= step;
        if (fabsl(step) <= fabsl(x) * 0x1p-62L) break;
    }
    return x;
}
// erfc(x) = y for 0 < y <= 1/2 (x >= 0.47).
inline ld erfcinv_small(ld y) {
    ld x = winitzki(logl(y * (2.0L - y)));
    for (int i = 0; i < 8; ++i) {
        ld u = (erfcl(x) - y) / (-2.0L / sqrtl(pi_l) * expl(-x * x)), step = u / (1.0L + x * u);
        x -= step;
        if (fabsl(step) <= fabsl(x) * 0x1p-62L) break;
    }
    return x;
}
inline ld erfinv_l(ld z) {
    if (z != z || z < -1.0L || z > 1.0L) return (z - z) / (z - z) + z; // NaN
    if (z == 1.0L) return HUGE_VALL;
    if (z == -1.0L) return -HUGE_VALL;
    if (z == 0.0L) return z;
    if (z > 0.5L) return erfcinv_small(1.0L - z);
    if (z < -0.5L) return -erfcinv_small(1.0L + z);
    return erfinv_small(z);
}
inline ld erfcinv_l(ld y) {
    if (y != y || y < 0.0L || y > 2.0L) return (y - y) / (y - y) + y;
    if (y == 0.0L) return HUGE_VALL;
    if (y == 2.0L) return -HUGE_VALL;
    if (y <= 0.5L) return erfcinv_small(y);
    if (y < 1.5L) return erfinv_l(1.0L - y);
    return -erfcinv_small(2.0L - y);
}
// Standard normal CDF and its inverse.
inline ld normcdf_l(ld x) { return 0.5L * erfcl(-x * 0.707106781186547524400844362104849039L); }
inline ld normcdfinv_l(ld p) {
    return -1.414213562373095048801688724209698079L * erfcinv_l(2.0L * p);
}
} // namespace cpu
} // namespace amp

// C23 adds some of these names to <math.h> (sinpi, cospi, rsqrt, ...). Ours
// are templates with a defaulted parameter, so where the C library declares
// the same function, its non-template wins overload resolution and nothing
// clashes; where it does not, ours is the one found.
#define AMP__MATHFN template <class amp__libm_first = void> inline
AMP__MATHFN float rsqrtf(float x) { return (float)(1.0 / sqrt((double)x)); }
AMP__MATHFN double rsqrt(double x) { return (double)(1.0L / sqrtl((long double)x)); }
AMP__MATHFN float rcbrtf(float x) { return (float)(1.0 / cbrt((double)x)); }
AMP__MATHFN double rcbrt(double x) { return (double)(1.0L / cbrtl((long double)x)); }
AMP__MATHFN float sinpif(float x) { return (float)amp::cpu::sinpi(x); }
AMP__MATHFN double sinpi(double x) { return (double)amp::cpu::sinpi(x); }
AMP__MATHFN float cospif(float x) { return (float)amp::cpu::cospi(x); }
AMP__MATHFN double cospi(double x) { return (double)amp::cpu::cospi(x); }
AMP__MATHFN float erfinvf(float x) { return (float)amp::cpu::erfinv_l(x); }
AMP__MATHFN double erfinv(double x) { return (double)amp::cpu::erfinv_l(x); }
AMP__MATHFN float erfcinvf(float x) { return (float)amp::cpu::erfcinv_l(x); }
AMP__MATHFN double erfcinv(double x) { return (double)amp::cpu::erfcinv_l(x); }
AMP__MATHFN float normcdff(float x) { return (float)amp::cpu::normcdf_l(x); }
AMP__MATHFN double normcdf(double x) { return (double)amp::cpu::normcdf_l(x); }
AMP__MATHFN float normcdfinvf(float x) { return (float)amp::cpu::normcdfinv_l(x); }
AMP__MATHFN double normcdfinv(double x) { return (double)amp::cpu::normcdfinv_l(x); }
#undef AMP__MATHFN

// ------------------------------------------- intrinsics and device names
// <cmath>/<math.h> provide sqrtf, expf, fminf, exp10f, sincosf, ... and the
// float overloads of sqrt, exp, ...; these are the device-only names. The
// __-prefixed fast forms are the accurate functions here.
inline float __fdividef(float a, float b) { return a / b; }
inline float fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return expf(x); }
inline float __exp10f(float x) { return exp10f(x); }
inline float __logf(float x) { return logf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __log10f(float x) { return log10f(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline void __sincosf(float x, float *s, float *c) { *s = sinf(x); *c = cosf(x); }
inline float __powf(float a, float b) { return powf(a, b); }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline double __fma_rn(double a, double b, double c) { return ::fma(a, b, c); }
inline float __fsqrt_rn(float x) { return sqrtf(x); }
inline float __frcp_rn(float x) { return 1.0f / x; }
// __fadd_rn and __fmul_rn are never merged into a fused multiply-add (CUDA's
// and HIP's promise), but the host compiler contracts a * b + c across
// inlined functions (-ffp-contract=fast): a product and an addend pass
// through an empty asm the optimiser cannot see into, so each exists,
// rounded, in a register (a volatile where the register class is unknown).
template <class __amp_T> inline __amp_T amp__cpu_rounded(__amp_T x) {
#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE2__))
    __asm__("" : "+x"(x));
#elif defined(__aarch64__)
    __asm__("" : "+w"(x));
#else
    volatile __amp_T v = x;
    x = v;
#endif
    return x;
}
inline float __fadd_rn(float a, float b) { return amp__cpu_rounded(a) + amp__cpu_rounded(b); }
inline float __fmul_rn(float a, float b) { return amp__cpu_rounded(a * b); }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return ::fmin(a, b); }
inline double max(double a, double b) { return ::fmax(a, b); }
inline unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned umax(unsigned a, unsigned b) { return a > b ? a : b; }

// Bit reinterpretation and integer intrinsics.
inline float __int_as_float(int x) { float f; memcpy(&f, &x, 4); return f; }
inline int __float_as_int(float f) { int x; memcpy(&x, &f, 4); return x; }
inline float __uint_as_float(unsigned x) { float f; memcpy(&f, &x, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned x; memcpy(&x, &f, 4); return x; }
inline double __longlong_as_double(long long x) { double f; memcpy(&f, &x, 8); return f; }
inline long long __double_as_longlong(double f) { long long x; memcpy(&x, &f, 8); return x; }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    return __builtin_bswap32(x);
}
inline int __mul24(int a, int b) { return (int)((long long)((a << 8) >> 8) * ((b << 8) >> 8)); }
inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }

#endif // AMP_CPU_DEVICE_INCLUDED
#endif // AMP_CPU
