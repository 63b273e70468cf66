// amp_prelude.hip — the C++ AMP vocabulary every hipamp kernel is compiled with
// (prepended by the library; works under hipRTC, NVRTC and, after the CPU
// prelude, the host C++ compiler). Self-contained: no standard headers.
//
// Layouts of signature, launch_info and view descriptors must match
// lib/signature.h (AMP__SIG_VERSION).
#ifndef AMP_PRELUDE_INCLUDED
#define AMP_PRELUDE_INCLUDED
#define AMP_PRELUDE_VERSION 2

// Threads per block of a simple-model launch, at most: the entry point's
// __launch_bounds__. Must equal AMP__SIMPLE_BLOCK_THREADS in lib/signature.h,
// which caps the blocks gpu_backend.c's launch_geometry makes (a block larger
// than the bound fails to launch; a bound larger than the block wastes
// registers the compiler reserved for threads that never come).
#define AMP__SIMPLE_BLOCK_THREADS 256

#ifndef AMP_CPU
#define AMP_FI __device__ __forceinline__
#define tile_static __shared__
#endif
// The compile-time helpers that build a kernel's signature record. NVRTC (in
// JIT mode, without --device-as-default-execution-space, which the library
// does not pass so that NVRTC demands __device__ on helpers as hipRTC does)
// rejects any function definition without an execution space, constexpr ones
// included. The CPU prelude defines __host__ and __device__ as nothing.
#define AMP__HD __host__ __device__

// The base pointer an element access goes through. A checking prelude (the
// CPU accelerator's debug mode) redefines it to report an index outside the
// view and to return a base that keeps the access inside the view.
#ifndef AMP__CHECKED_BASE
#define AMP__CHECKED_BASE(view, idx) ((view).data_)
#endif
// Whether a section lies inside its view; a checking prelude reports one
// that does not, and section() then returns an empty view of the first
// element, so no access through it can leave the view.
#ifndef AMP__SECTION_INSIDE
#define AMP__SECTION_INSIDE(view, origin, ext) true
#endif

namespace amp {

// Minimal type traits (no standard headers under hipRTC/NVRTC).
namespace meta {
template <bool B> struct enable {};
template <> struct enable<true> { typedef int type; };
template <class T> struct remove_const { typedef T type; };
template <class T> struct remove_const<const T> { typedef T type; };
template <class T> struct is_const { enum { value = 0 }; };
template <class T> struct is_const<const T> { enum { value = 1 }; };
} // namespace meta

template <int N> struct extent;

// --------------------------------------------------------------- index<N>
template <int N> struct index {
    static_assert(N >= 1, "amp::index rank must be at least 1");
    static const int rank = N;
    int v[N];
    AMP_FI index() { for (int d = 0; d < N; ++d) v[d] = 0; }
    template <class... I, typename meta::enable<sizeof...(I) == N>::type = 0>
    AMP_FI explicit index(I... is) : v{int(is)...} {}
    AMP_FI int &operator[](int d) { return v[d]; }
    AMP_FI const int &operator[](int d) const { return v[d]; }
    AMP_FI index &operator+=(const index &o) { for (int d = 0; d < N; ++d) v[d] += o.v[d]; return *this; }
    AMP_FI index &operator-=(const index &o) { for (int d = 0; d < N; ++d) v[d] -= o.v[d]; return *this; }
    AMP_FI index &operator+=(int s) { for (int d = 0; d < N; ++d) v[d] += s; return *this; }
    AMP_FI index &operator-=(int s) { for (int d = 0; d < N; ++d) v[d] -= s; return *this; }
    AMP_FI index &operator*=(int s) { for (int d = 0; d < N; ++d) v[d] *= s; return *this; }
    AMP_FI index &operator/=(int s) { for (int d = 0; d < N; ++d) v[d] /= s; return *this; }
    AMP_FI index &operator%=(int s) { for (int d = 0; d < N; ++d) v[d] %= s; return *this; }
    AMP_FI friend index operator+(index a, const index &b) { return a += b; }
    AMP_FI friend index operator-(index a, const index &b) { return a -= b; }
    AMP_FI friend index operator+(index a, int s) { return a += s; }
    AMP_FI friend index operator-(index a, int s) { return a -= s; }
    AMP_FI friend index operator*(index a, int s) { return a *= s; }
    AMP_FI friend index operator/(index a, int s) { return a /= s; }
    AMP_FI friend index operator%(index a, int s) { return a %= s; }
    AMP_FI friend bool operator==(const index &a, const index &b) {
        for (int d = 0; d < N; ++d) if (a.v[d] != b.v[d]) return false;
        return true;
    }
    AMP_FI friend bool operator!=(const index &a, const index &b) { return !(a == b); }
};

// -------------------------------------------------------------- extent<N>
template <int N> struct extent {
    static_assert(N >= 1, "amp::extent rank must be at least 1");
    static const int rank = N;
    int v[N];
    AMP_FI extent() { for (int d = 0; d < N; ++d) v[d] = 0; }
    template <class... I, typename meta::enable<sizeof...(I) == N>::type = 0>
    AMP_FI explicit extent(I... is) : v{int(is)...} {}
    AMP_FI int &operator[](int d) { return v[d]; }
    AMP_FI const int &operator[](int d) const { return v[d]; }
    AMP_FI unsigned long long size() const {
        unsigned long long s = 1;
        for (int d = 0; d < N; ++d) s *= (unsigned long long)v[d];
        return s;
    }
    AMP_FI bool contains(const index<N> &i) const {
        for (int d = 0; d < N; ++d)
            if (i.v[d] < 0 || i.v[d] >= v[d]) return false;
        return true;
    }
    AMP_FI extent &operator+=(const index<N> &o) { for (int d = 0; d < N; ++d) v[d] += o.v[d]; return *this; }
    AMP_FI extent &operator-=(const index<N> &o) { for (int d = 0; d < N; ++d) v[d] -= o.v[d]; return *this; }
    AMP_FI friend extent operator+(extent a, const index<N> &b) { return a += b; }
    AMP_FI friend extent operator-(extent a, const index<N> &b) { return a -= b; }
    AMP_FI friend bool operator==(const extent &a, const extent &b) {
        for (int d = 0; d < N; ++d) if (a.v[d] != b.v[d]) return false;
        return true;
    }
    AMP_FI friend bool operator!=(const extent &a, const extent &b) { return !(a == b); }
};

// ---------------------------------------------------- barriers and fences
// C++ AMP's fences are tile-scoped, so a block-scope fence is enough;
// __syncthreads already orders tile_static and global memory within a block,
// the explicit fence states the intent and costs nothing extra.
struct tile_barrier {
    AMP_FI void wait() const { __syncthreads(); }
    AMP_FI void wait_with_all_memory_fence() const { __threadfence_block(); __syncthreads(); }
    AMP_FI void wait_with_global_memory_fence() const { __threadfence_block(); __syncthreads(); }
    AMP_FI void wait_with_tile_static_memory_fence() const { __threadfence_block(); __syncthreads(); }
};
AMP_FI void all_memory_fence(const tile_barrier &) { __threadfence_block(); }
AMP_FI void global_memory_fence(const tile_barrier &) { __threadfence_block(); }
AMP_FI void tile_static_memory_fence(const tile_barrier &) { __threadfence_block(); }

// ---------------------------------------------------------- tiled_index
// Index order is C++ AMP's: the last dimension is contiguous and maps to
// threadIdx.x / blockIdx.x.
template <int D0, int D1 = 0, int D2 = 0> struct tiled_index {
    static_assert(D0 > 0 && D1 >= 0 && D2 >= 0 && !(D1 == 0 && D2 > 0),
                  "tiled_index tile sizes must be positive, given outermost first");
    static const int rank = D2 > 0 ? 3 : (D1 > 0 ? 2 : 1);
    static const int tile_dim0 = D0, tile_dim1 = D1, tile_dim2 = D2;
    static const int tile_threads = D0 * (D1 > 0 ? D1 : 1) * (D2 > 0 ? D2 : 1);
    index<rank> global, local, tile, tile_origin;
    tile_barrier barrier;
    AMP_FI static extent<rank> tile_extent() {
        extent<rank> e;
        const int dims[3] = {D0, D1, D2};
        for (int d = 0; d < rank; ++d) e.v[d] = dims[d];
        return e;
    }
    AMP_FI operator index<rank>() const { return global; }
};

// ----------------------------------------------------------- array_view
// Descriptor layout (lib/signature.h): pointer, int64 stride[N], extent.
template <class T, int N> struct array_view {
    static_assert(N >= 1, "amp::array_view rank must be at least 1");
    static const int rank = N;
    typedef T value_type;
    T *data_;
    long long stride_[N];
    amp::extent<N> extent;

    AMP_FI long long offset_of(const index<N> &i) const {
        long long off = i.v[N - 1];
        for (int d = 0; d < N - 1; ++d) off += (long long)i.v[d] * stride_[d];
        return off;
    }
    AMP_FI amp::extent<N> get_extent() const { return extent; }
    AMP_FI T *data() const { return data_; }
    AMP_FI T &operator[](const index<N> &i) const { return AMP__CHECKED_BASE(*this, i)[offset_of(i)]; }
    AMP_FI T &operator()(const index<N> &i) const { return (*this)[i]; }
    template <class... I, typename meta::enable<sizeof...(I) == N>::type = 0>
    AMP_FI T &operator()(I... is) const { return (*this)[index<N>(is...)]; }
    // Projection: rank N-1 view of row i (N > 1), or element i (N == 1).
    AMP_FI decltype(auto) operator[](int i) const {
        if constexpr (N == 1) {
            return (*this)[index<1>(i)];
        } else {
            array_view<T, (N > 1 ? N - 1 : 1)> r;
            index<N> origin;
            origin.v[0] = i;
            r.data_ = AMP__CHECKED_BASE(*this, origin) + (long long)i * stride_[0];
            for (int d = 1; d < N; ++d) {
                r.stride_[d - 1] = stride_[d];
                r.extent.v[d - 1] = extent.v[d];
            }
            return r;
        }
    }
    AMP_FI array_view section(const index<N> &origin, const amp::extent<N> &e) const {
        array_view r = *this;
        if (!AMP__SECTION_INSIDE(*this, origin, e)) {
            r.extent = amp::extent<N>();
            return r;
        }
        r.data_ = data_ + offset_of(origin);
        r.extent = e;
        return r;
    }
    AMP_FI array_view section(const index<N> &origin) const { return section(origin, extent - origin); }
    AMP_FI array_view section(const amp::extent<N> &e) const { return section(index<N>(), e); }
    template <class U = T, typename meta::enable<!meta::is_const<U>::value>::type = 0>
    AMP_FI operator array_view<const U, N>() const {
        array_view<const U, N> r;
        r.data_ = data_;
        for (int d = 0; d < N; ++d) r.stride_[d] = stride_[d];
        r.extent = extent;
        return r;
    }
};

// A device array bound by amp_arg_array; same descriptor as array_view.
template <class T, int N> struct array : array_view<T, N> {};

// Read/write that ignore indices outside the view (padded tiled launches).
template <class T, int N>
AMP_FI typename meta::remove_const<T>::type guarded_read(const array_view<T, N> &v, const index<N> &i) {
    return v.extent.contains(i) ? v[i] : typename meta::remove_const<T>::type();
}
template <class T, int N, class U>
AMP_FI void guarded_write(const array_view<T, N> &v, const index<N> &i, const U &x) {
    if (v.extent.contains(i)) v[i] = x;
}

namespace detail {

// Kernel signature records (lib/signature.h).
struct sig_param { int kind, elem_size, rank, is_const, offset, size, align, reserved; };
struct signature {
    int magic, version, tiled, rank, tile[3], nparams, pack_size, pack_align;
    sig_param params[32];
};
struct launch_info { int ext[4]; int rank; int reserved[3]; };

// Same numbers as amp_arg_kind in include/hipamp.h.
enum {
    K_VIEW = 1, K_ARRAY = 2, K_INT32 = 3, K_FLOAT32 = 4, K_FLOAT64 = 5, K_UINT32 = 6, K_INT64 = 7,
    K_UINT64 = 8, K_INT8 = 9, K_UINT8 = 10, K_INT16 = 11, K_UINT16 = 12, K_BOOL = 13, K_STRUCT = 14
};

template <class T> struct is_pointer { enum { value = 0 }; };
template <class T> struct is_pointer<T *> { enum { value = 1 }; };
template <class T> struct is_reference { enum { value = 0 }; };
template <class T> struct is_reference<T &> { enum { value = 1 }; };

// Any other parameter type is passed by value as raw bytes (K_STRUCT). The
// checks name the parameter's position (counted from 0 after the index, as
// args[] does) in the instantiation the compiler reports first; the library
// also puts that position on the first line of the log.
template <int Position, class T> struct kernel_parameter {
    static_assert(!is_pointer<T>::value,
                  "hipamp: a kernel parameter cannot be a raw pointer (its memory would bypass "
                  "array_view coherence); use amp::array_view<T, N> or amp::array<T, N>");
    static_assert(!is_reference<T>::value,
                  "hipamp: a kernel parameter cannot be a reference; take it by value");
    static_assert(__is_trivially_copyable(T),
                  "hipamp: a kernel parameter must be amp::array_view, amp::array, a scalar, or a "
                  "trivially copyable struct passed by value");
    enum { kind = K_STRUCT, elem = sizeof(T), rank = 0, is_const = 0 };
};
#define AMP__SCALAR_TRAITS(T, K) \
    template <int P> struct kernel_parameter<P, T> { enum { kind = K, elem = sizeof(T), rank = 0, is_const = 0 }; };
AMP__SCALAR_TRAITS(bool, K_BOOL)
AMP__SCALAR_TRAITS(char, K_INT8)
AMP__SCALAR_TRAITS(signed char, K_INT8)
AMP__SCALAR_TRAITS(unsigned char, K_UINT8)
AMP__SCALAR_TRAITS(short, K_INT16)
AMP__SCALAR_TRAITS(unsigned short, K_UINT16)
AMP__SCALAR_TRAITS(int, K_INT32)
AMP__SCALAR_TRAITS(unsigned, K_UINT32)
AMP__SCALAR_TRAITS(long, sizeof(long) == 8 ? K_INT64 : K_INT32)
AMP__SCALAR_TRAITS(unsigned long, sizeof(long) == 8 ? K_UINT64 : K_UINT32)
AMP__SCALAR_TRAITS(long long, K_INT64)
AMP__SCALAR_TRAITS(unsigned long long, K_UINT64)
AMP__SCALAR_TRAITS(float, K_FLOAT32)
AMP__SCALAR_TRAITS(double, K_FLOAT64)
#undef AMP__SCALAR_TRAITS
// A const scalar or struct parameter is the same to the host.
template <int P, class T> struct kernel_parameter<P, const T> : kernel_parameter<P, T> {};
template <int P, class T, int N> struct kernel_parameter<P, array_view<T, N>> {
    enum { kind = K_VIEW, elem = sizeof(T), rank = N, is_const = meta::is_const<T>::value };
};
template <int P, class T, int N> struct kernel_parameter<P, array<T, N>> {
    enum { kind = K_ARRAY, elem = sizeof(T), rank = N, is_const = meta::is_const<T>::value };
};

// The argument pack: a nested struct whose layout the signature describes.
template <class... A> struct pack {};
template <class H, class... A> struct pack<H, A...> {
    H head;
    pack<A...> tail;
};
template <int I> struct pack_get {
    template <class P> AMP_FI static const auto &get(const P &p) { return pack_get<I - 1>::get(p.tail); }
};
template <> struct pack_get<0> {
    template <class P> AMP_FI static const auto &get(const P &p) { return p.head; }
};

AMP__HD constexpr int align_up(int x, int a) { return (x + a - 1) / a * a; }

template <int I, class... A> struct fill_params;
template <int I> struct fill_params<I> {
    AMP__HD static constexpr void fill(signature &, int) {}
};
template <int I, class H, class... A> struct fill_params<I, H, A...> {
    AMP__HD static constexpr void fill(signature &s, int base) {
        typedef kernel_parameter<I, H> t;
        s.params[I].kind = t::kind;
        s.params[I].elem_size = t::elem;
        s.params[I].rank = t::rank;
        s.params[I].is_const = t::is_const;
        s.params[I].offset = base;
        s.params[I].size = (int)sizeof(H);
        s.params[I].align = (int)alignof(H);
        s.params[I].reserved = 0;
        // Layout rule of pack<H, A...>: tail follows head at its own alignment.
        fill_params<I + 1, A...>::fill(s, base + align_up((int)sizeof(H), (int)alignof(pack<A...>)));
    }
};

template <class I> struct index_traits {
    static_assert(sizeof(I) == 0,
                  "the first kernel parameter must be amp::index<N> (AMP_KERNEL) or "
                  "amp::tiled_index<...> (AMP_TILED_KERNEL)");
};
template <int N> struct index_traits<index<N>> {
    enum { tiled = 0, rank = N, d0 = 0, d1 = 0, d2 = 0, threads = AMP__SIMPLE_BLOCK_THREADS };
};
template <int D0, int D1, int D2> struct index_traits<tiled_index<D0, D1, D2>> {
    enum { tiled = 1, rank = tiled_index<D0, D1, D2>::rank, d0 = D0, d1 = D1, d2 = D2,
           threads = tiled_index<D0, D1, D2>::tile_threads };
};

template <class F> struct kernel_traits;
template <class I, class... A> struct kernel_traits<void(I, A...)> {
    typedef index_traits<I> idx;
    typedef pack<A...> pack_type;
    static_assert(sizeof...(A) <= 32, "a hipamp kernel takes at most 32 parameters");
    AMP__HD static constexpr signature make() {
        signature s{};
        s.magic = 0x53504d41;
        s.version = 2;
        s.tiled = idx::tiled;
        s.rank = idx::rank;
        s.tile[0] = idx::d0;
        s.tile[1] = idx::d1;
        s.tile[2] = idx::d2;
        s.nparams = (int)sizeof...(A);
        s.pack_size = (int)sizeof(pack<A...>);
        s.pack_align = (int)alignof(pack<A...>);
        fill_params<0, A...>::fill(s, 0);
        return s;
    }
};

template <int... I> struct int_seq {};
template <int N, int... I> struct make_int_seq : make_int_seq<N - 1, N - 1, I...> {};
template <int... I> struct make_int_seq<0, I...> { typedef int_seq<I...> type; };

} // namespace detail
} // namespace amp

#ifndef AMP_CPU
namespace amp {
namespace detail {

// Simple model: x covers the last dimension, y the one before, z the product
// of the rest; y and z loop when the extent passes the grid limit. Threads
// past the edge do nothing.
template <int N, class... A, int... I>
AMP_FI void run_simple(void (*f)(index<N>, A...), const launch_info &li, const pack<A...> &p,
                       int_seq<I...>) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= li.ext[N - 1]) return;
    if constexpr (N == 1) {
        f(index<1>(x), pack_get<I>::get(p)...);
    } else {
        // long long, like z: y + gridDim.y * blockDim.y can pass INT_MAX when
        // ey is near it, and an int would wrap to a negative, in-range y.
        long long ey = li.ext[N - 2];
        for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < ey;
             y += (long long)gridDim.y * blockDim.y) {
            if constexpr (N == 2) {
                f(index<2>(y, x), pack_get<I>::get(p)...);
            } else {
                long long ez = 1;
                for (int d = 0; d < N - 2; ++d) ez *= li.ext[d];
                for (long long z = blockIdx.z * blockDim.z + threadIdx.z; z < ez;
                     z += (long long)gridDim.z * blockDim.z) {
                    index<N> idx;
                    idx.v[N - 1] = x;
                    idx.v[N - 2] = (int)y;
                    long long r = z;
                    for (int d = N - 3; d >= 0; --d) {
                        idx.v[d] = (int)(r % li.ext[d]);
                        r /= li.ext[d];
                    }
                    f(idx, pack_get<I>::get(p)...);
                }
            }
        }
    }
}

template <int D0, int D1, int D2, class... A, int... I>
AMP_FI void run_tiled(void (*f)(tiled_index<D0, D1, D2>, A...), const launch_info &,
                      const pack<A...> &p, int_seq<I...>) {
    typedef tiled_index<D0, D1, D2> T;
    T t;
    const int R = T::rank;
    const int dims[3] = {D0, D1, D2};
    const int loc[3] = {(int)threadIdx.x, (int)threadIdx.y, (int)threadIdx.z};
    const int blk[3] = {(int)blockIdx.x, (int)blockIdx.y, (int)blockIdx.z};
    for (int d = 0; d < R; ++d) {
        // index dimension d maps to hardware axis R-1-d
        t.local.v[d] = loc[R - 1 - d];
        t.tile.v[d] = blk[R - 1 - d];
        t.tile_origin.v[d] = t.tile.v[d] * dims[d];
        t.global.v[d] = t.tile_origin.v[d] + t.local.v[d];
    }
    f(t, pack_get<I>::get(p)...);
}

template <class F> struct entry;
template <int N, class... A> struct entry<void(index<N>, A...)> {
    AMP_FI static void run(void (*f)(index<N>, A...), const launch_info &li, const pack<A...> &p) {
        run_simple(f, li, p, typename make_int_seq<sizeof...(A)>::type());
    }
};
template <int D0, int D1, int D2, class... A> struct entry<void(tiled_index<D0, D1, D2>, A...)> {
    AMP_FI static void run(void (*f)(tiled_index<D0, D1, D2>, A...), const launch_info &li,
                           const pack<A...> &p) {
        run_tiled(f, li, p, typename make_int_seq<sizeof...(A)>::type());
    }
};

} // namespace detail
} // namespace amp

// The entry point: extern "C" name(launch_info, pack) plus the signature
// record name##__amp_sig that the host reads to check launches.
#define AMP__DEFINE_ENTRY(name)                                                                  \
    extern "C" __global__ void __launch_bounds__(                                                \
        amp::detail::kernel_traits<decltype(name##__amp_body)>::idx::threads)                    \
        name(amp::detail::launch_info amp__li,                                                   \
             typename amp::detail::kernel_traits<decltype(name##__amp_body)>::pack_type amp__p) { \
        amp::detail::entry<decltype(name##__amp_body)>::run(name##__amp_body, amp__li, amp__p);  \
    }                                                                                            \
    extern "C" __device__ __attribute__((used)) amp::detail::signature name##__amp_sig =   \
        amp::detail::kernel_traits<decltype(name##__amp_body)>::make();
#endif // !AMP_CPU

// AMP_KERNEL(name, amp::index<N> idx, params...) { body }
// AMP_TILED_KERNEL(name, amp::tiled_index<D0[,D1[,D2]]> tidx, params...) { body }
#define AMP__KERNEL(name, ...)                                          \
    static AMP_FI void name##__amp_body(__VA_ARGS__);                   \
    AMP__DEFINE_ENTRY(name)                                             \
    static AMP_FI void name##__amp_body(__VA_ARGS__)
#define AMP_KERNEL(name, ...) AMP__KERNEL(name, __VA_ARGS__)
#define AMP_TILED_KERNEL(name, ...) AMP__KERNEL(name, __VA_ARGS__)

#endif // AMP_PRELUDE_INCLUDED
