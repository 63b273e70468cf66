// amp_algorithms_lib.hip — the device helpers of hipamp's algorithms (lib/alg_*.c): wave size and wave intrinsics, the built-in operators, strided element access and the look-back protocol, written once for AMD (hipRTC), NVIDIA (NVRTC) and the CPU accelerator (g++).
//
// What the library compiles for an algorithm (lib/alg/programs.c): a block of
// #defines (the configuration: element and accumulator types, tile size,
// items per thread, which kernels), this file, the functions it generates
// from the built-in or the user's expressions (the map, the reduce operator,
// the identity, the post expression), then the kernels of hip_kernels/alg/.
// Everything here is in namespace amp::alg; nothing here is part of the
// device language users write kernels in (docs/device-language.md).
//
// Configuration this file reads:
//   AMP_ALG_R       the accumulator type of reductions and scans
//   AMP_ALG_O       the type of a reduction's result and a scan's output
//                   (undefined: AMP_ALG_R); AMP_ALG_SPLIT_OUT 1 when it
//                   differs (a float32 product accumulated in double), the
//                   reduction's result then a parameter of its own
//   AMP_ALG_TILE    threads per tile (a multiple of the wave size; 1 on the CPU)
//   AMP_ALG_USER    defined when the program carries a user-defined reduction
//
// The wave size is the compiler's, not a guess: 32 under NVRTC, the target's
// under hipRTC (64 on gfx9, 32 on gfx10 and later by default; a compiler
// without the macro that says it: the target family's default, checked in
// the kernels where the compiler can), and 1 on the
// CPU accelerator, where a tile is one work-item running a loop and the
// wave code below reduces to plain sequential code.
#ifndef AMP_ALGORITHMS_LIB_INCLUDED
#define AMP_ALGORITHMS_LIB_INCLUDED

#if defined(AMP_CPU)
#define AMP_ALG_WAVE 1
#elif defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define AMP_ALG_WAVE 32
#elif defined(__AMDGCN_WAVEFRONT_SIZE__)
#define AMP_ALG_WAVE __AMDGCN_WAVEFRONT_SIZE__
#elif defined(__AMDGCN_WAVEFRONT_SIZE)
#define AMP_ALG_WAVE __AMDGCN_WAVEFRONT_SIZE
#elif defined(__GFX9__) || defined(__GFX8__) || defined(__GFX7__) || defined(__GFX6__)
#define AMP_ALG_WAVE 64
#else
#define AMP_ALG_WAVE 32
#endif

// Where the compiler no longer says the wave size in a macro (LLVM 20
// deprecated __AMDGCN_WAVEFRONT_SIZE, ROCm 7.2's compiler has none), the
// family guess above is the target's default, wrong for an RDNA target
// built wave64 (-mwavefrontsize64 in HIPRTC_COMPILE_OPTIONS_APPEND): the
// wave intrinsics below then trap, a device fault the launch reports,
// instead of the algorithms covering half a wave and returning wrong
// results. The builtin folds to a constant once the target's features are
// known, so the check costs nothing where it holds.
#if !defined(AMP_CPU) && !defined(__CUDACC__) && !defined(__CUDACC_RTC__) && \
    !defined(__AMDGCN_WAVEFRONT_SIZE__) && !defined(__AMDGCN_WAVEFRONT_SIZE) && defined(__has_builtin)
#if __has_builtin(__builtin_amdgcn_wavefrontsize)
#define AMP_ALG_WAVE_CHECK()                                                                          \
    do {                                                                                              \
        if (__builtin_amdgcn_wavefrontsize() != AMP_ALG_WAVE) __builtin_trap();                       \
    } while (0)
#endif
#endif
#ifndef AMP_ALG_WAVE_CHECK
#define AMP_ALG_WAVE_CHECK() \
    do {                     \
    } while (0)
#endif

#ifndef AMP_ALG_O
#define AMP_ALG_O AMP_ALG_R
#define AMP_ALG_SPLIT_OUT 0
#endif

#if AMP_ALG_TILE % AMP_ALG_WAVE != 0
#error "hipamp algorithms: the tile size must be a multiple of the wave size"
#endif
#define AMP_ALG_WAVES (AMP_ALG_TILE / AMP_ALG_WAVE)

// Loops over a thread's items are unrolled on a GPU (the items then live in
// registers); on the CPU a tile is one work-item with thousands of items.
// AMP_ALG_ROLLED keeps a GPU loop rolled (a strided load's groups of items:
// compile time).
#if defined(AMP_CPU)
#define AMP_ALG_UNROLL
#define AMP_ALG_ROLLED
#else
#define AMP_ALG_UNROLL _Pragma("unroll")
#define AMP_ALG_ROLLED _Pragma("unroll 1")
#endif

namespace amp {
namespace alg {

// ------------------------------------------------------------ numbers
AMP__HD constexpr int log2i(int x) { return x <= 1 ? 0 : 1 + log2i(x / 2); }
// Integer arithmetic wraps (two's complement), computed in the unsigned type
// so that signed overflow is never undefined.
template <class T> struct num;
template <> struct num<int> {
    typedef unsigned U;
    enum { is_float = 0 };
    AMP_FI static int lowest() { return -2147483647 - 1; }
    AMP_FI static int highest() { return 2147483647; }
};
template <> struct num<unsigned> {
    typedef unsigned U;
    enum { is_float = 0 };
    AMP_FI static unsigned lowest() { return 0u; }
    AMP_FI static unsigned highest() { return 0xffffffffu; }
};
template <> struct num<long long> {
    typedef unsigned long long U;
    enum { is_float = 0 };
    AMP_FI static long long lowest() { return -9223372036854775807LL - 1; }
    AMP_FI static long long highest() { return 9223372036854775807LL; }
};
template <> struct num<unsigned long long> {
    typedef unsigned long long U;
    enum { is_float = 0 };
    AMP_FI static unsigned long long lowest() { return 0ull; }
    AMP_FI static unsigned long long highest() { return ~0ull; }
};
template <> struct num<float> {
    typedef unsigned U;
    enum { is_float = 1 };
    AMP_FI static float lowest() { return __uint_as_float(0xff800000u); }
    AMP_FI static float highest() { return __uint_as_float(0x7f800000u); }
};
template <> struct num<double> {
    typedef unsigned long long U;
    enum { is_float = 1 };
    AMP_FI static double lowest() { return __longlong_as_double((long long)0xfff0000000000000ull); }
    AMP_FI static double highest() { return __longlong_as_double(0x7ff0000000000000ll); }
};

AMP_FI bool is_nan(float x) { return (__float_as_uint(x) & 0x7fffffffu) > 0x7f800000u; }
AMP_FI bool is_nan(double x) {
    return ((unsigned long long)__double_as_longlong(x) & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
}
template <class T> AMP_FI bool is_nan(T) { return false; }
AMP_FI bool sign_bit(float x) { return (__float_as_uint(x) >> 31) != 0; }
AMP_FI bool sign_bit(double x) { return __double_as_longlong(x) < 0; }
template <class T> AMP_FI bool sign_bit(T) { return false; }

template <class T> AMP_FI T add(T a, T b) {
    if constexpr (num<T>::is_float) return a + b;
    else return (T)((typename num<T>::U)a + (typename num<T>::U)b);
}
template <class T> AMP_FI T sub(T a, T b) {
    if constexpr (num<T>::is_float) return a - b;
    else return (T)((typename num<T>::U)a - (typename num<T>::U)b);
}
template <class T> AMP_FI T mul(T a, T b) {
    if constexpr (num<T>::is_float) return a * b;
    else return (T)((typename num<T>::U)a * (typename num<T>::U)b);
}
template <class T> AMP_FI T absval(T a) { return a < T(0) ? sub(T(0), a) : a; }
AMP_FI float absval(float a) { return __uint_as_float(__float_as_uint(a) & 0x7fffffffu); }
AMP_FI double absval(double a) { return __longlong_as_double(__double_as_longlong(a) & 0x7fffffffffffffffll); }
AMP_FI unsigned absval(unsigned a) { return a; }
AMP_FI unsigned long long absval(unsigned long long a) { return a; }

// min and max: a NaN anywhere gives a NaN (order-independent, as numpy's
// min/max), and -0.0 is less than +0.0, so the result never depends on the
// order the elements were combined in.
template <class T> AMP_FI T vmin(T a, T b) {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    if constexpr (num<T>::is_float) if (a == b) return sign_bit(a) ? a : b;
    return b < a ? b : a;
}
template <class T> AMP_FI T vmax(T a, T b) {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    if constexpr (num<T>::is_float) if (a == b) return sign_bit(a) ? b : a;
    return b > a ? b : a;
}

// Bitwise operators exist for integers only (the library refuses them on
// floating-point types before anything is compiled).
template <class T> struct bits {
    AMP_FI static T band(T a, T b) { return a & b; }
    AMP_FI static T bor(T a, T b) { return a | b; }
    AMP_FI static T bxor(T a, T b) { return a ^ b; }
    AMP_FI static T ones() { return (T)~(typename num<T>::U)0; }
};
template <> struct bits<float> {
    AMP_FI static float band(float a, float) { return a; }
    AMP_FI static float bor(float a, float) { return a; }
    AMP_FI static float bxor(float a, float) { return a; }
    AMP_FI static float ones() { return 0.0f; }
};
template <> struct bits<double> {
    AMP_FI static double band(double a, double) { return a; }
    AMP_FI static double bor(double a, double) { return a; }
    AMP_FI static double bxor(double a, double) { return a; }
    AMP_FI static double ones() { return 0.0; }
};

// ---------------------------------------------------------- operators
// The numbers are amp_op's (include/hipamp.h); OP_USER is a
// user-defined reduction's operator.
enum { OP_SUM = 0, OP_PRODUCT = 2, OP_MIN = 5, OP_MAX = 6, OP_AND = 7, OP_OR = 8, OP_XOR = 9, OP_USER = 100 };

#ifdef AMP_ALG_USER
// Generated from the user's strings after this file (lib/alg/programs.c).
AMP_FI AMP_ALG_R amp__alg_user_reduce(AMP_ALG_R a, AMP_ALG_R b);
AMP_FI AMP_ALG_R amp__alg_user_identity();
#endif

// Compile-time operators, for the loops that touch every element (a switch
// per element would keep the compiler from vectorising them on the CPU).
// A floating-point sum's identity is -0.0, IEEE addition's own (-0.0 + x
// is x for every x; +0.0 + -0.0 is +0.0), so that the padding and the
// start of every partial fold change no sign: an initial value of -0.0
// survives a sum of -0.0s. Where no initial value is given, a result
// starts from +0.0 (start: the documented identity).
struct op_sum {
    template <class T> AMP_FI static T f(T a, T b) { return add(a, b); }
    template <class T> AMP_FI static T id() { return num<T>::is_float ? T(-0.0) : T(0); }
};
struct op_product {
    template <class T> AMP_FI static T f(T a, T b) { return mul(a, b); }
    template <class T> AMP_FI static T id() { return T(1); }
};
struct op_min {
    template <class T> AMP_FI static T f(T a, T b) { return vmin(a, b); }
    template <class T> AMP_FI static T id() { return num<T>::highest(); }
};
struct op_max {
    template <class T> AMP_FI static T f(T a, T b) { return vmax(a, b); }
    template <class T> AMP_FI static T id() { return num<T>::lowest(); }
};
struct op_and {
    template <class T> AMP_FI static T f(T a, T b) { return bits<T>::band(a, b); }
    template <class T> AMP_FI static T id() { return bits<T>::ones(); }
};
struct op_or {
    template <class T> AMP_FI static T f(T a, T b) { return bits<T>::bor(a, b); }
    template <class T> AMP_FI static T id() { return T(0); }
};
struct op_xor {
    template <class T> AMP_FI static T f(T a, T b) { return bits<T>::bxor(a, b); }
    template <class T> AMP_FI static T id() { return T(0); }
};
#ifdef AMP_ALG_USER
struct op_user {
    template <class T> AMP_FI static T f(T a, T b) { return (T)amp__alg_user_reduce((AMP_ALG_R)a, (AMP_ALG_R)b); }
    template <class T> AMP_FI static T id() { return (T)amp__alg_user_identity(); }
};
#endif

// The operator chosen at run time (op is uniform over the launch), for the
// few combines per tile.
template <class T> AMP_FI T combine(int op, T a, T b) {
    switch (op) {
    case OP_SUM: return op_sum::f(a, b);
    case OP_PRODUCT: return op_product::f(a, b);
    case OP_MIN: return op_min::f(a, b);
    case OP_MAX: return op_max::f(a, b);
    case OP_AND: return op_and::f(a, b);
    case OP_OR: return op_or::f(a, b);
    case OP_XOR: return op_xor::f(a, b);
#ifdef AMP_ALG_USER
    case OP_USER: return op_user::f(a, b);
#endif
    default: return a;
    }
}
template <class T> AMP_FI T identity(int op) {
    switch (op) {
    case OP_SUM: return op_sum::id<T>();
    case OP_PRODUCT: return op_product::id<T>();
    case OP_MIN: return op_min::id<T>();
    case OP_MAX: return op_max::id<T>();
    case OP_AND: return op_and::id<T>();
    case OP_OR: return op_or::id<T>();
    case OP_XOR: return op_xor::id<T>();
#ifdef AMP_ALG_USER
    case OP_USER: return op_user::id<T>();
#endif
    default: return T(0);
    }
}

// What a result starts from where the caller gave no initial value: the
// identity, but +0.0 for a floating-point sum (a sum over only -0.0
// values is +0.0, as a loop from 0.0 gives: include/hipamp_algorithms.h).
template <class T> AMP_FI T start(int op) { return op == OP_SUM ? T(0) : identity<T>(op); }

// -------------------------------------------------------------- waves
// The only wave intrinsics hipamp uses, each with its CUDA and HIP
// spelling; on the CPU (wave size 1) each is the identity.
typedef unsigned long long lanes_t;
AMP_FI lanes_t ballot(bool p) {
#if AMP_ALG_WAVE == 1
    return p ? 1ull : 0ull;
#elif defined(__CUDACC__) || defined(__CUDACC_RTC__)
    return (lanes_t)__ballot_sync(0xffffffffu, p);
#else
    AMP_ALG_WAVE_CHECK();
    return (lanes_t)__ballot(p);
#endif
}
template <class T> AMP_FI T shfl_xor(T v, int mask) {
#if AMP_ALG_WAVE == 1
    (void)mask;
    return v;
#elif defined(__CUDACC__) || defined(__CUDACC_RTC__)
    return __shfl_xor_sync(0xffffffffu, v, mask);
#else
    AMP_ALG_WAVE_CHECK();
    return __shfl_xor(v, mask);
#endif
}
template <class T> AMP_FI T shfl_up(T v, int delta) {
#if AMP_ALG_WAVE == 1
    (void)delta;
    return v;
#elif defined(__CUDACC__) || defined(__CUDACC_RTC__)
    return __shfl_up_sync(0xffffffffu, v, delta);
#else
    AMP_ALG_WAVE_CHECK();
    return __shfl_up(v, delta);
#endif
}
template <class T> AMP_FI T shfl_from(T v, int lane) {
#if AMP_ALG_WAVE == 1
    (void)lane;
    return v;
#elif defined(__CUDACC__) || defined(__CUDACC_RTC__)
    return __shfl_sync(0xffffffffu, v, lane);
#else
    AMP_ALG_WAVE_CHECK();
    return __shfl(v, lane);
#endif
}
// Orders the wave's accesses to tile_static memory (a compiler barrier on
// AMD, where a wave runs in lockstep; __syncwarp on NVIDIA, whose lanes may
// diverge).
AMP_FI void wave_sync() {
#if AMP_ALG_WAVE == 1
#elif defined(__CUDACC__) || defined(__CUDACC_RTC__)
    __syncwarp();
#else
    __builtin_amdgcn_wave_barrier();
#endif
}
AMP_FI lanes_t lanes_below(int lane) { return lane >= 64 ? ~0ull : ((1ull << lane) - 1ull); }
AMP_FI lanes_t all_lanes() { return AMP_ALG_WAVE >= 64 ? ~0ull : ((1ull << AMP_ALG_WAVE) - 1ull); }
// The lanes of the wave whose digit d (RADIX_BITS wide) equals this lane's:
// one ballot a bit, on every GPU. (NVIDIA's __match_any_sync does it in one
// instruction but is slower: the sort of 2^26 uint32 keys on an H100 ran
// at 22.1 Gkeys/s with it, 26.4 with the ballots, in one call.)
template <int BITS> AMP_FI lanes_t match_digit(unsigned d) {
#if AMP_ALG_WAVE == 1
    (void)d;
    return 1ull;
#else
    // Only the wave's lanes: a 32-lane wave's ballot leaves the top 32 bits
    // clear, which ~m would set.
    lanes_t peers = all_lanes();
    AMP_ALG_UNROLL for (int b = 0; b < BITS; ++b) {
        const bool bit = (d >> b) & 1u;
        const lanes_t m = ballot(bit);
        peers &= bit ? m : ~m;
    }
    return peers;
#endif
}
// Reduce over the wave with a commutative operator (every lane gets it).
template <class T> AMP_FI T wave_reduce(int op, T v) {
    for (int m = AMP_ALG_WAVE / 2; m > 0; m >>= 1) v = combine(op, v, shfl_xor(v, m));
    return v;
}
template <class F, class T> AMP_FI T wave_reduce_f(T v) {
    for (int m = AMP_ALG_WAVE / 2; m > 0; m >>= 1) v = F::f(v, shfl_xor(v, m));
    return v;
}
// Reduce keeping the order of an associative operator, lane 0 being the
// last element: v[W-1] + ... + v[0] (every lane gets it).
template <class T> AMP_FI T wave_reduce_reversed(int op, T v, int lane) {
    for (int m = 1; m < AMP_ALG_WAVE; m <<= 1) {
        T o = shfl_xor(v, m);
        v = (lane & m) ? combine(op, v, o) : combine(op, o, v);
    }
    return v;
}
// Inclusive scan over the wave, in lane order.
template <class T> AMP_FI T wave_scan(int op, T v, int lane) {
    for (int d = 1; d < AMP_ALG_WAVE; d <<= 1) {
        T u = shfl_up(v, d);
        if (lane >= d) v = combine(op, u, v);
    }
    return v;
}

// ------------------------------------------------------ element access
// A view seen as a sequence of n elements in row-major order: the library
// binds the view as a rank-1 view of its span (its first to its last
// element) and describes the layout here, after merging dimensions that are
// contiguous with the next one. Layout: lib/alg/alg.h (amp__alg_shape).
// At most 4 dimensions: a GPU keeps a kernel's shapes in scalar registers,
// and four shapes of 8 dimensions spilled them (gfx1030).
struct shape {
    long long n;
    long long stride[4];
    int ext[4];
    int rank;
    int contiguous;
};
static_assert(sizeof(shape) == 64, "amp::alg::shape must match lib/alg/alg.h");

// Element offset of the i-th element of a strided view from the first. The
// shape goes as scalars read with constant indices, so that a GPU reads it
// where the launch put it instead of copying it to scratch memory.
#define AMP_ALG_SHAPE_SCALARS(s) \
    (s).rank, (s).ext[1], (s).ext[2], (s).ext[3], (s).stride[0], (s).stride[1], (s).stride[2], (s).stride[3]
AMP_FI long long strided_offset(long long i, int rank, int e1, int e2, int e3, long long s0, long long s1,
                                long long s2, long long s3) {
    long long off = 0, q;
    if (rank > 3) { q = i / e3; off += (i - q * e3) * s3; i = q; }
    if (rank > 2) { q = i / e2; off += (i - q * e2) * s2; i = q; }
    if (rank > 1) { q = i / e1; off += (i - q * e1) * s1; i = q; }
    return off + i * s0;
}
AMP_FI long long offset(const shape &s, long long i) {
    return s.contiguous ? i : strided_offset(i, AMP_ALG_SHAPE_SCALARS(s));
}
// The same, out of line on a GPU, for the loops that unroll their items
// (up to 64 a thread: get<false>, put_unrolled): 64 inlined copies of up to
// three 64-bit divisions made a program's compile take 2-3 times as long
// (NVRTC 13, sm_90: the predicate program 2.4 s against 0.9 s, the int32
// scan 3.5 s against 1.0 s, the int32 reductions 2.9 s against 1.0 s). The
// compaction's and the sort's kernels keep the offset inline (a call in
// them cost their contiguous rates 2-12% and 1-4% on an H200); the
// compaction loads its strided items 4 at a time in a rolled loop.
#ifdef AMP_CPU
AMP_FI
#else
__device__ __noinline__
#endif
long long strided_offset_call(long long i, int rank, int e1, int e2, int e3, long long s0, long long s1,
                              long long s2, long long s3) {
    return strided_offset(i, rank, e1, e2, e3, s0, s1, s2, s3);
}
// The i-th element; C: known contiguous (the loops that touch every element
// are instantiated for both cases, so the contiguous one vectorises). Call:
// a strided offset through strided_offset_call (the default: a loop that
// unrolls its items), else inline.
template <bool C, bool Call = !C, class T> AMP_FI T get(const T *p, const shape &s, long long i) {
    if (C || s.contiguous) return p[i];
    return p[Call ? strided_offset_call(i, AMP_ALG_SHAPE_SCALARS(s)) : strided_offset(i, AMP_ALG_SHAPE_SCALARS(s))];
}
template <class T> AMP_FI void put(T *p, const shape &s, long long i, T v) { p[offset(s, i)] = v; }
// put in an unrolled loop (strided_offset_call).
template <class T> AMP_FI void put_unrolled(T *p, const shape &s, long long i, T v) {
    if (s.contiguous) p[i] = v;
    else p[strided_offset_call(i, AMP_ALG_SHAPE_SCALARS(s))] = v;
}

// ------------------------------------------------- look-back protocol
// Tiles of a single-pass scan publish their aggregate, then their inclusive
// prefix (decoupled look-back, Merrill and Garland 2016): a value word is
// written, then its state word with release order; a reader that sees the
// state reads the value after an acquire. Values go through volatile
// accesses on a GPU so that no tile reads a stale line of its own cache.
enum { ST_EMPTY = 0, ST_AGGREGATE = 1, ST_PREFIX = 2 };

AMP_FI unsigned long long load_acquire(const unsigned long long *p) {
#ifdef AMP_CPU
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#else
    unsigned long long v = *(const volatile unsigned long long *)p;
    __threadfence();
    return v;
#endif
}
AMP_FI void store_release(unsigned long long *p, unsigned long long v) {
#ifdef AMP_CPU
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
#else
    __threadfence();
    *(volatile unsigned long long *)p = v;
#endif
}
// A status word that holds everything its reader needs (a packed tile state,
// a sort's count): no ordering with other memory, so no fence; volatile on a
// GPU so that the access goes to the coherent level, not a core's cache.
AMP_FI unsigned long long load_word(const unsigned long long *p) {
#ifdef AMP_CPU
    return __atomic_load_n(p, __ATOMIC_RELAXED);
#else
    return *(const volatile unsigned long long *)p;
#endif
}
AMP_FI void store_word(unsigned long long *p, unsigned long long v) {
#ifdef AMP_CPU
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
#else
    *(volatile unsigned long long *)p = v;
#endif
}
// Between two polls of a word another tile has not written yet: back off a
// little, so that pollers leave the L2's bandwidth to the tiles streaming
// their data (they are what the pollers wait for).
AMP_FI void poll_pause() {
#if defined(AMP_CPU)
#elif (defined(__CUDACC__) || defined(__CUDACC_RTC__)) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
    __nanosleep(64);
#elif defined(__HIP_DEVICE_COMPILE__) || defined(__AMDGCN__)
    __builtin_amdgcn_s_sleep(1);
#endif
}
template <class T> AMP_FI T load_value(const T *p) {
#ifdef AMP_CPU
    T v;
    __atomic_load(p, &v, __ATOMIC_RELAXED);
    return v;
#else
    return *(const volatile T *)p;
#endif
}
template <class T> AMP_FI void store_value(T *p, T v) {
#ifdef AMP_CPU
    __atomic_store(p, &v, __ATOMIC_RELAXED);
#else
    *(volatile T *)p = v;
#endif
}

// Publish this tile's aggregate (tile 0: its inclusive prefix), walk back
// over earlier tiles until one with an inclusive prefix, publish this
// tile's own, and return the combined value of every earlier tile. Run by
// the whole first wave of the tile (uniform control flow within the wave);
// tile ids are handed out in launch order by an atomic counter, so the tiles
// waited for have all started: forward progress holds on every
// accelerator (on the CPU a tile that started runs on its own thread to
// its end).
// Values of at most 4 bytes travel in their tile's state word (the state in
// the high half): one load reads a consistent pair, with no fence between
// reading the state and the value.
template <class T> union state_bits {
    T v;
    unsigned u;
};
template <class T> AMP_FI unsigned long long pack_state(unsigned st, T v) {
    state_bits<T> b;
    b.u = 0;
    b.v = v;
    return ((unsigned long long)st << 32) | b.u;
}
template <class T> AMP_FI T unpack_value(unsigned long long w) {
    state_bits<T> b;
    b.u = (unsigned)w;
    return b.v;
}
// What a tile publishes first, from one thread: its aggregate (tile 0: its
// inclusive prefix). look_back does it unless told it is done.
template <class T>
AMP_FI void publish_aggregate(unsigned long long *state, T *aggs, T *incls, long long tile, T agg) {
    if constexpr (sizeof(T) <= 4) {
        store_word(&state[tile], pack_state<T>(tile == 0 ? ST_PREFIX : ST_AGGREGATE, agg));
    } else if (tile == 0) {
        store_value(&incls[0], agg);
        store_release(&state[0], ST_PREFIX);
    } else {
        store_value(&aggs[tile], agg);
        store_release(&state[tile], ST_AGGREGATE);
    }
}
template <class T>
AMP_FI T look_back_packed(int op, unsigned long long *state, long long tile, T agg, int lane, bool published) {
    const T id = identity<T>(op);
    if (lane == 0 && !published) publish_aggregate<T>(state, nullptr, nullptr, tile, agg);
    if (tile == 0) return id;
    T pre = id;
    long long j = tile - 1 - lane; // lane 0 looks at the nearest earlier tile
    for (;;) {
        const unsigned long long w = j >= 0 ? load_word(&state[j]) : pack_state<T>(ST_PREFIX, id);
        const unsigned st = (unsigned)(w >> 32);
        if (ballot(st == ST_EMPTY)) { // an earlier tile has not published yet
            poll_pause();
            continue;
        }
        T v = unpack_value<T>(w);
        lanes_t done = ballot(st == ST_PREFIX);
        int first = done ? __ffsll((long long)done) - 1 : AMP_ALG_WAVE;
        if (lane > first) v = id;
        pre = combine(op, wave_reduce_reversed(op, v, lane), pre);
        if (done) break;
        j -= AMP_ALG_WAVE;
    }
    if (lane == 0) store_word(&state[tile], pack_state<T>(ST_PREFIX, combine(op, pre, agg)));
    return pre;
}

template <class T>
AMP_FI T look_back(int op, unsigned long long *state, T *aggs, T *incls, long long tile, T agg, int lane,
                   bool published = false) {
    if constexpr (sizeof(T) <= 4) return look_back_packed<T>(op, state, tile, agg, lane, published);
    const T id = identity<T>(op);
    if (lane == 0 && !published) publish_aggregate<T>(state, aggs, incls, tile, agg);
    if (tile == 0) return id;
    T pre = id;
    long long j = tile - 1 - lane; // lane 0 looks at the nearest earlier tile
    for (;;) {
        unsigned long long st = j >= 0 ? load_acquire(&state[j]) : (unsigned long long)ST_PREFIX;
        if (ballot(st == ST_EMPTY)) { // an earlier tile has not published yet
            poll_pause();
            continue;
        }
        T v = j < 0 ? id : (st == ST_PREFIX ? load_value(&incls[j]) : load_value(&aggs[j]));
        lanes_t done = ballot(st == ST_PREFIX);
        int first = done ? __ffsll((long long)done) - 1 : AMP_ALG_WAVE;
        if (lane > first) v = id;
        pre = combine(op, wave_reduce_reversed(op, v, lane), pre);
        if (done) break;
        j -= AMP_ALG_WAVE;
    }
    if (lane == 0) {
        store_value(&incls[tile], combine(op, pre, agg));
        store_release(&state[tile], ST_PREFIX);
    }
    return pre;
}

// ------------------------------------------------------------ sorting
// Keys as unsigned integers whose order is the sort order: integers with
// the sign bit flipped; floats by their bits with negatives inverted, so
// -0.0 sorts before +0.0, and every NaN as the largest value (NaNs last,
// ascending and descending). Descending inverts the bits of the rest.
AMP_FI unsigned key_bits(unsigned k, bool desc) { return desc ? ~k : k; }
AMP_FI unsigned key_bits(int k, bool desc) { return key_bits((unsigned)k ^ 0x80000000u, desc); }
AMP_FI unsigned long long key_bits(unsigned long long k, bool desc) { return desc ? ~k : k; }
AMP_FI unsigned long long key_bits(long long k, bool desc) {
    return key_bits((unsigned long long)k ^ 0x8000000000000000ull, desc);
}
AMP_FI unsigned key_bits(float k, bool desc) {
    if (is_nan(k)) return 0xffffffffu;
    unsigned u = __float_as_uint(k);
    u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    return desc ? ~u : u;
}
AMP_FI unsigned long long key_bits(double k, bool desc) {
    if (is_nan(k)) return ~0ull;
    unsigned long long u = (unsigned long long)__double_as_longlong(k);
    u = (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
    return desc ? ~u : u;
}

// Values of a key-value sort move as raw words of their size.
struct word16 {
    unsigned long long lo, hi;
};
template <int N> struct word_of;
template <> struct word_of<1> { typedef unsigned char type; };
template <> struct word_of<2> { typedef unsigned short type; };
template <> struct word_of<4> { typedef unsigned type; };
template <> struct word_of<8> { typedef unsigned long long type; };
template <> struct word_of<16> { typedef word16 type; };
// Copy a value word; 16-byte ones field by field (AMD compilers copy a
// 16-byte structure through scratch memory).
template <class T> AMP_FI void assign(T &d, const T &s) { d = s; }
AMP_FI void assign(word16 &d, const word16 &s)
{
    d.lo = s.lo;
    d.hi = s.hi;
}

} // namespace alg
} // namespace amp

#endif // AMP_ALGORITHMS_LIB_INCLUDED
