// amp_cpu_prelude.hpp — maps the HIP device vocabulary onto host C++17 so the common AMP prelude and user kernels compile with the system C++ compiler for the CPU accelerator (lib/cpu).
//
// The library prepends this text to <common prelude> + user source and
// compiles the whole into a shared object. Everything the library calls is
// extern "C" with default visibility; the rest is hidden (-fvisibility=hidden).
//
// ABI with lib/cpu (lib/cpu/cpu_abi.h mirrors it byte for byte; bump
// AMP__CPU_ABI on any change):
//   extern "C" void NAME(amp__cpu_item *it);     one call runs a range of work:
//     simple kernel: linear indices [it->begin, it->end) of the launched extent
//                    (row-major, last dimension fastest);
//     tiled kernel:  local work-items [it->begin, it->end) (row-major local
//                    linear ids) of the tile at it->tile[].
//   extern "C" amp::detail::signature NAME__amp_sig;   the signature record.
//   extern "C" int amp__cpu_abi(void);                returns AMP__CPU_ABI.
// __syncthreads() calls it->launch->barrier(it), which may switch to another
// fiber of the same tile on the same OS thread and return later.
#ifndef AMP_CPU_PRELUDE_INCLUDED
#define AMP_CPU_PRELUDE_INCLUDED

// Standard headers first: the macros below (__device__, __shared__, ...)
// must not leak into library headers.
#include <cassert>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <math.h>

#define AMP_CPU 1
#define AMP_FI inline __attribute__((always_inline))
#define __device__
#define __host__
#define __global__
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
// Shared memory is per tile; a tile's fibers never leave their OS thread, and
// a thread runs one tile at a time, so thread-local storage is tile storage.
// Tiles that follow on the same thread reuse it, which is fine: tile_static
// memory starts uninitialised in C++ AMP.
#define __shared__ static thread_local
#define tile_static static thread_local

extern "C" {
struct amp__cpu_item;
struct amp__cpu_launch {
    int32_t abi;
    int32_t tiled;
    int32_t rank;
    int32_t ext[4];
    int32_t tile[3];  // index order (tile[0] outermost); 1 where unused
    int32_t tiles[3]; // tiles per dimension, index order; 1 where unused
    int32_t tile_threads;
    const void *pack;
    void (*barrier)(amp__cpu_item *it);
    // Debug checks: a view access outside its extent (the library records the
    // first one and stops the launch; the access itself is redirected).
    void (*oob)(amp__cpu_item *it, const void *data, const int32_t *idx, const int32_t *ext,
                int32_t rank);
    // A C++ exception escaped the kernel body.
    void (*fault)(amp__cpu_item *it, const char *what);
};
struct amp__cpu_item {
    const amp__cpu_launch *launch;
    int64_t begin, end;
    int32_t tile[3];
    int32_t cur_local; // tiled: local linear id of the work-item running now
    void *worker;      // library's
    void *fiber;       // library's
};
__attribute__((visibility("default"))) int amp__cpu_abi(void) { return 1; }
}
static_assert(sizeof(void *) == 8, "the CPU accelerator needs a 64-bit host");
static_assert(offsetof(amp__cpu_launch, pack) == 56, "amp__cpu_launch layout");
static_assert(sizeof(amp__cpu_launch) == 88, "amp__cpu_launch layout");
static_assert(offsetof(amp__cpu_item, tile) == 24, "amp__cpu_item layout");
static_assert(sizeof(amp__cpu_item) == 56, "amp__cpu_item layout");

namespace amp {
namespace cpu {
// The work-item running on this thread (its fiber restores it after every
// barrier, so it is right even though fibers share the thread).
inline thread_local amp__cpu_item *cur;
} // namespace cpu
} // namespace amp

// ------------------------------------------------------- thread geometry
struct uint3 { unsigned x, y, z; };
struct dim3 {
    unsigned x, y, z;
    dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
    dim3(uint3 u) : x(u.x), y(u.y), z(u.z) {}
};
namespace amp {
namespace cpu {
// HIP axis a (x = 0) is index dimension rank-1-a. In simple launches there
// are no blocks: threadIdx is 0 and blockDim 1 (use the amp::index).
enum { G_THREAD, G_BLOCK, G_BLOCKDIM, G_GRIDDIM };
inline uint3 geometry(int what) {
    const amp__cpu_item *it = cur;
    uint3 r = {0, 0, 0};
    if (what == G_BLOCKDIM || what == G_GRIDDIM) r = uint3{1, 1, 1};
    if (!it || !it->launch->tiled) return r;
    const amp__cpu_launch *L = it->launch;
    int v[3] = {0, 0, 0};
    int rem = it->cur_local;
    for (int d = L->rank - 1; d >= 0; --d) {
        int x = 0;
        switch (what) {
        case G_THREAD: x = rem % L->tile[d]; rem /= L->tile[d]; break;
        case G_BLOCK: x = it->tile[d]; break;
        case G_BLOCKDIM: x = L->tile[d]; break;
        default: x = L->tiles[d]; break;
        }
        v[L->rank - 1 - d] = x;
    }
    return uint3{(unsigned)v[0], (unsigned)(L->rank > 1 ? v[1] : r.y),
                 (unsigned)(L->rank > 2 ? v[2] : r.z)};
}
} // namespace cpu
} // namespace amp
#define threadIdx (amp::cpu::geometry(amp::cpu::G_THREAD))
#define blockIdx (amp::cpu::geometry(amp::cpu::G_BLOCK))
#define blockDim (amp::cpu::geometry(amp::cpu::G_BLOCKDIM))
#define gridDim (amp::cpu::geometry(amp::cpu::G_GRIDDIM))

// ------------------------------------------------------ barriers, fences
// Fibers of a tile switch only inside __syncthreads (an opaque call), so
// within a tile a compiler barrier orders memory; other tiles run on other
// threads and need a real fence.
inline void __syncthreads() {
    amp__cpu_item *it = amp::cpu::cur;
    it->launch->barrier(it);
    amp::cpu::cur = it;
}
inline void __threadfence_block() { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

// Atomics, the device-only math and the bit intrinsics (atomicAdd, rsqrtf,
// __popc, ...) are in amp_cpu_device.hpp, which the library splices in after
// the common prelude.

// ------------------------------------------- names the entry points need
// Declared here, defined by the common prelude that follows this text.
namespace amp {
template <int N> struct index;
template <int D0, int D1, int D2> struct tiled_index;
template <class T, int N> struct array_view;
namespace detail {
struct signature;
template <class... A> struct pack;
template <int I> struct pack_get;
template <int... I> struct int_seq;
template <int N, int... I> struct make_int_seq;
template <class F> struct kernel_traits;
} // namespace detail
} // namespace amp

// --------------------------------------------------------- debug checks
#ifdef AMP_DEBUG_CHECKS
namespace amp {
namespace cpu {
// Returns the base pointer the access goes through: the view's own when idx
// is inside, else one that lands the access on the view's first element, so
// nothing outside the view is touched (the launch has failed by then and the
// view's contents are unspecified).
template <class V, class I> inline auto checked_base(const V &v, const I &idx) -> decltype(v.data_) {
    if (__builtin_expect(v.extent.contains(idx), 1)) return v.data_;
    amp__cpu_item *it = cur;
    if (it) it->launch->oob(it, (const void *)v.data_, idx.v, v.extent.v, V::rank);
    uintptr_t base = (uintptr_t)v.data_ - (uintptr_t)v.offset_of(idx) * sizeof(*v.data_);
    return (decltype(v.data_))base;
}
// A section must lie inside its view: its accesses are checked only against
// the section's own extent, so one reaching past the view would let them
// leave it. Reported at the first corner outside (origin, else the far one).
template <class V, class I, class E> inline bool section_inside(const V &v, const I &origin, const E &e) {
    bool inside = true;
    I far;
    for (int d = 0; d < V::rank; ++d) {
        far.v[d] = origin.v[d] + e.v[d] - 1;
        if (origin.v[d] < 0 || e.v[d] < 0 || (long long)origin.v[d] + e.v[d] > v.extent.v[d]) inside = false;
    }
    if (__builtin_expect(inside, 1)) return true;
    amp__cpu_item *it = cur;
    if (it) it->launch->oob(it, (const void *)v.data_, v.extent.contains(origin) ? far.v : origin.v, v.extent.v, V::rank);
    return false;
}
} // namespace cpu
} // namespace amp
#define AMP__CHECKED_BASE(view, idx) amp::cpu::checked_base(view, idx)
#define AMP__SECTION_INSIDE(view, origin, ext) amp::cpu::section_inside(view, origin, ext)
#endif

// ---------------------------------------------------------- entry points
namespace amp {
namespace cpu {

template <int N, class... A, int... I>
AMP_FI void run_simple(void (*f)(index<N>, A...), const amp__cpu_item *it,
                       const detail::pack<A...> &p, detail::int_seq<I...>) {
    long long n = it->begin;
    const long long e = it->end;
    if constexpr (N == 1) {
        // int induction (a rank-1 extent fits in int): the address is then
        // affine in x and the loop vectorises.
        for (int x = (int)n; x < (int)e; ++x) f(index<1>(x), detail::pack_get<I>::get(p)...);
    } else {
        int ext[N];
        for (int d = 0; d < N; ++d) ext[d] = it->launch->ext[d];
        index<N> idx;
        long long r = n;
        for (int d = N - 1; d >= 0; --d) {
            idx.v[d] = (int)(r % ext[d]);
            r /= ext[d];
        }
        // Rows of the last dimension, so the inner loop is a plain
        // contiguous loop the compiler can vectorise.
        while (n < e) {
            const int x0 = idx.v[N - 1];
            long long run = ext[N - 1] - x0;
            if (run > e - n) run = e - n;
            for (int x = x0; x < x0 + (int)run; ++x) {
                index<N> i = idx;
                i.v[N - 1] = x;
                f(i, detail::pack_get<I>::get(p)...);
            }
            n += run;
            idx.v[N - 1] = 0;
            for (int d = N - 2; d >= 0; --d) {
                if (++idx.v[d] < ext[d]) break;
                idx.v[d] = 0;
            }
        }
    }
}

template <int D0, int D1, int D2, class... A, int... I>
AMP_FI void run_tiled(void (*f)(tiled_index<D0, D1, D2>, A...), amp__cpu_item *it,
                      const detail::pack<A...> &p, detail::int_seq<I...>) {
    typedef tiled_index<D0, D1, D2> T;
    const int R = T::rank;
    const int dims[3] = {D0, D1 > 0 ? D1 : 1, D2 > 0 ? D2 : 1};
    T t;
    for (int d = 0; d < R; ++d) {
        t.tile.v[d] = it->tile[d];
        t.tile_origin.v[d] = it->tile[d] * dims[d];
    }
    for (long long l = it->begin; l < it->end; ++l) {
        it->cur_local = (int)l;
        int rem = (int)l;
        for (int d = R - 1; d >= 0; --d) {
            t.local.v[d] = rem % dims[d];
            rem /= dims[d];
            t.global.v[d] = t.tile_origin.v[d] + t.local.v[d];
        }
        f(t, detail::pack_get<I>::get(p)...);
    }
}

template <class F> struct entry;
template <int N, class... A> struct entry<void(index<N>, A...)> {
    AMP_FI static void run(void (*f)(index<N>, A...), amp__cpu_item *it) {
        // A private copy: the compiler then knows no kernel store changes the
        // view descriptors, and keeps them in registers.
        const detail::pack<A...> p = *(const detail::pack<A...> *)it->launch->pack;
        run_simple(f, it, p, typename detail::make_int_seq<sizeof...(A)>::type());
    }
};
template <int D0, int D1, int D2, class... A> struct entry<void(tiled_index<D0, D1, D2>, A...)> {
    AMP_FI static void run(void (*f)(tiled_index<D0, D1, D2>, A...), amp__cpu_item *it) {
        const detail::pack<A...> p = *(const detail::pack<A...> *)it->launch->pack;
        run_tiled(f, it, p, typename detail::make_int_seq<sizeof...(A)>::type());
    }
};

template <class F, class B> inline void guarded(B body, amp__cpu_item *it) {
    cur = it;
#if defined(__cpp_exceptions)
    try {
        entry<F>::run(body, it);
    } catch (...) {
        cur = it;
        it->launch->fault(it, "a C++ exception escaped the kernel");
    }
#else
    entry<F>::run(body, it);
#endif
}

} // namespace cpu
} // namespace amp

#define AMP__DEFINE_ENTRY(name)                                                                  \
    extern "C" __attribute__((visibility("default"))) void name(amp__cpu_item *amp__it) {       \
        amp::cpu::guarded<decltype(name##__amp_body)>(name##__amp_body, amp__it);                 \
    }                                                                                            \
    extern "C" {                                                                                 \
    __attribute__((visibility("default"), used)) amp::detail::signature name##__amp_sig =         \
        amp::detail::kernel_traits<decltype(name##__amp_body)>::make();                          \
    }

#endif // AMP_CPU_PRELUDE_INCLUDED
