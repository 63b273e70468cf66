// amp_prelude.hip — the C++ AMP vocabulary every hipamp kernel is compiled with
// (prepended by the library; works under hipRTC, NVRTC and, after the CPU
// prelude, the host C++ compiler). Self-contained: no standard headers.
//
// Layouts of signature, launch_info and view descriptors must match
// lib/base/signature.h (AMP__SIG_VERSION).
//
// Names: this text comes before the user's kernels and after the user's
// build options, so every macro a user defines with -D (-DN=4, -DT=float,
// the README's own example) is live in it. Template parameters and the
// other private names here that a user could plausibly define as a macro
// (short or all-uppercase: N, T, I, D0, Kernel, K_VIEW, ...) are therefore
// spelt __amp_N, __amp_T, ... (names reserved to the implementation; not
// _N-style, which some C libraries' ctype.h define as macros). A new one
// must follow suit; test/test_program.c's
// build_options_may_define_short_uppercase_names defines them all.
#ifndef AMP_PRELUDE_INCLUDED
#define AMP_PRELUDE_INCLUDED
#define AMP_PRELUDE_VERSION 2

// Threads per block of a simple-model launch, at most: the entry point's
// __launch_bounds__ unless AMP_KERNEL_MAX_BLOCK raises it for a kernel. Must
// equal AMP__SIMPLE_BLOCK_THREADS in lib/base/signature.h, which caps the
// blocks gpu_backend.c's launch_geometry makes (a block larger than the bound
// fails to launch; a bound larger than the block wastes registers the
// compiler reserved for threads that never come).
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
template <bool __amp_B> struct enable {};
template <> struct enable<true> { typedef int type; };
template <class __amp_T> struct remove_const { typedef __amp_T type; };
template <class __amp_T> struct remove_const<const __amp_T> { typedef __amp_T type; };
template <class __amp_T> struct is_const { enum { value = 0 }; };
template <class __amp_T> struct is_const<const __amp_T> { enum { value = 1 }; };
template <class __amp_T> struct is_pointer { enum { value = 0 }; };
template <class __amp_T> struct is_pointer<__amp_T *> { enum { value = 1 }; };
// U with the const of T: the element type of a reinterpreted view.
template <class __amp_T, class __amp_U> struct copy_const { typedef __amp_U type; };
template <class __amp_T, class __amp_U> struct copy_const<const __amp_T, __amp_U> { typedef const __amp_U type; };
} // namespace meta

// The largest rank a launch may have: launch_info carries this many extents
// (lib/base/signature.h, AMP__LAUNCH_MAX_RANK). Values, views and arrays of any
// rank work inside a kernel; only the launched index is bounded.
#define AMP__LAUNCH_MAX_RANK 8

template <int __amp_N> struct extent;
template <int __amp_D0, int __amp_D1 = 0, int __amp_D2 = 0> struct tiled_extent;

namespace detail {
// The rank of a tile of D0[, D1[, D2]] work-items (0 marks an unused size).
template <int __amp_D0, int __amp_D1, int __amp_D2> struct tile_rank { enum { value = __amp_D2 > 0 ? 3 : (__amp_D1 > 0 ? 2 : 1) }; };
} // namespace detail

// --------------------------------------------------------------- index<N>
// C++ AMP's index<N> and extent<N>: N ints, any N >= 1. Arithmetic is
// component-wise: with another index (or extent), and with an int on either
// side (int - idx is value - idx[d] in each dimension). ++ and -- add or
// subtract 1 in every dimension.
#define AMP__COMPONENTWISE(__amp_T)                                                              \
    AMP_FI __amp_T() { for (int d = 0; d < __amp_N; ++d) v[d] = 0; }                             \
    template <class... __amp_I, typename meta::enable<sizeof...(__amp_I) == __amp_N &&           \
                                                 !(meta::is_pointer<__amp_I>::value || ...)>::type = 0> \
    AMP_FI explicit __amp_T(__amp_I... is) : v{int(is)...} {}                                    \
    /* C++ AMP's T(const int components[]): N values from an array. */                         \
    AMP_FI explicit __amp_T(const int *components) { for (int d = 0; d < __amp_N; ++d) v[d] = components[d]; } \
    AMP_FI int &operator[](int d) { return v[d]; }                                               \
    AMP_FI const int &operator[](int d) const { return v[d]; }                                   \
    AMP_FI __amp_T &operator+=(int s) { for (int d = 0; d < __amp_N; ++d) v[d] += s; return *this; } \
    AMP_FI __amp_T &operator-=(int s) { for (int d = 0; d < __amp_N; ++d) v[d] -= s; return *this; } \
    AMP_FI __amp_T &operator*=(int s) { for (int d = 0; d < __amp_N; ++d) v[d] *= s; return *this; } \
    AMP_FI __amp_T &operator/=(int s) { for (int d = 0; d < __amp_N; ++d) v[d] /= s; return *this; } \
    AMP_FI __amp_T &operator%=(int s) { for (int d = 0; d < __amp_N; ++d) v[d] %= s; return *this; } \
    AMP_FI __amp_T &operator++() { return *this += 1; }                                          \
    AMP_FI __amp_T &operator--() { return *this -= 1; }                                          \
    AMP_FI __amp_T operator++(int) { __amp_T old = *this; *this += 1; return old; }              \
    AMP_FI __amp_T operator--(int) { __amp_T old = *this; *this -= 1; return old; }              \
    AMP_FI friend __amp_T operator+(__amp_T a, int s) { return a += s; }                         \
    AMP_FI friend __amp_T operator-(__amp_T a, int s) { return a -= s; }                         \
    AMP_FI friend __amp_T operator*(__amp_T a, int s) { return a *= s; }                         \
    AMP_FI friend __amp_T operator/(__amp_T a, int s) { return a /= s; }                         \
    AMP_FI friend __amp_T operator%(__amp_T a, int s) { return a %= s; }                         \
    AMP_FI friend __amp_T operator+(int s, __amp_T a) { return a += s; }                         \
    AMP_FI friend __amp_T operator*(int s, __amp_T a) { return a *= s; }                         \
    AMP_FI friend __amp_T operator-(int s, const __amp_T &a) { __amp_T r; for (int d = 0; d < __amp_N; ++d) r.v[d] = s - a.v[d]; return r; } \
    AMP_FI friend __amp_T operator/(int s, const __amp_T &a) { __amp_T r; for (int d = 0; d < __amp_N; ++d) r.v[d] = s / a.v[d]; return r; } \
    AMP_FI friend __amp_T operator%(int s, const __amp_T &a) { __amp_T r; for (int d = 0; d < __amp_N; ++d) r.v[d] = s % a.v[d]; return r; } \
    AMP_FI friend bool operator==(const __amp_T &a, const __amp_T &b) {                          \
        for (int d = 0; d < __amp_N; ++d) if (a.v[d] != b.v[d]) return false;                    \
        return true;                                                                             \
    }                                                                                            \
    AMP_FI friend bool operator!=(const __amp_T &a, const __amp_T &b) { return !(a == b); }

template <int __amp_N> struct index {
    static_assert(__amp_N >= 1, "amp::index rank must be at least 1");
    static constexpr int rank = __amp_N;
    int v[__amp_N];
    AMP__COMPONENTWISE(index)
    AMP_FI index &operator+=(const index &o) { for (int d = 0; d < __amp_N; ++d) v[d] += o.v[d]; return *this; }
    AMP_FI index &operator-=(const index &o) { for (int d = 0; d < __amp_N; ++d) v[d] -= o.v[d]; return *this; }
    AMP_FI friend index operator+(index a, const index &b) { return a += b; }
    AMP_FI friend index operator-(index a, const index &b) { return a -= b; }
};

// -------------------------------------------------------------- extent<N>
template <int __amp_N> struct extent {
    static_assert(__amp_N >= 1, "amp::extent rank must be at least 1");
    static constexpr int rank = __amp_N;
    int v[__amp_N];
    AMP__COMPONENTWISE(extent)
    // Elements in the domain: the indices contains() accepts, so 0 when a
    // dimension is 0 or negative. A product past 2^64 - 1 (rank 3 and up
    // can reach it) is 2^64 - 1, not its wrapped remainder: view_as compares
    // sizes, and a wrapped one would let a shape larger than its view pass.
    AMP_FI unsigned long long size() const {
        unsigned long long s = 1;
        for (int d = 0; d < __amp_N; ++d) {
            if (v[d] <= 0) return 0;
            const unsigned long long e = (unsigned long long)v[d];
            s = s > ~0ull / e ? ~0ull : s * e;
        }
        return s;
    }
    AMP_FI bool contains(const index<__amp_N> &i) const {
        for (int d = 0; d < __amp_N; ++d)
            if (i.v[d] < 0 || i.v[d] >= v[d]) return false;
        return true;
    }
    // This extent as tiles of D0[ x D1[ x D2]] (outermost first); the tile
    // rank must be the extent's.
    template <int __amp_D0> AMP_FI tiled_extent<__amp_D0> tile() const {
        static_assert(__amp_N == 1, "extent<N>::tile<D0>() needs a rank-1 extent");
        return tiled_extent<__amp_D0>(*this);
    }
    template <int __amp_D0, int __amp_D1> AMP_FI tiled_extent<__amp_D0, __amp_D1> tile() const {
        static_assert(__amp_N == 2, "extent<N>::tile<D0, D1>() needs a rank-2 extent");
        return tiled_extent<__amp_D0, __amp_D1>(*this);
    }
    template <int __amp_D0, int __amp_D1, int __amp_D2> AMP_FI tiled_extent<__amp_D0, __amp_D1, __amp_D2> tile() const {
        static_assert(__amp_N == 3, "extent<N>::tile<D0, D1, D2>() needs a rank-3 extent");
        return tiled_extent<__amp_D0, __amp_D1, __amp_D2>(*this);
    }
    AMP_FI extent &operator+=(const extent &o) { for (int d = 0; d < __amp_N; ++d) v[d] += o.v[d]; return *this; }
    AMP_FI extent &operator-=(const extent &o) { for (int d = 0; d < __amp_N; ++d) v[d] -= o.v[d]; return *this; }
    AMP_FI extent &operator+=(const index<__amp_N> &o) { for (int d = 0; d < __amp_N; ++d) v[d] += o.v[d]; return *this; }
    AMP_FI extent &operator-=(const index<__amp_N> &o) { for (int d = 0; d < __amp_N; ++d) v[d] -= o.v[d]; return *this; }
    AMP_FI friend extent operator+(extent a, const extent &b) { return a += b; }
    AMP_FI friend extent operator-(extent a, const extent &b) { return a -= b; }
    AMP_FI friend extent operator+(extent a, const index<__amp_N> &b) { return a += b; }
    AMP_FI friend extent operator-(extent a, const index<__amp_N> &b) { return a -= b; }
};
#undef AMP__COMPONENTWISE

// ---------------------------------------------------------- tiled_extent
// C++ AMP's tiled_extent: an extent (its base) with a tile shape of D0[ x
// D1[ x D2]] work-items. A plain value, usable anywhere; only a launch is
// bounded by the accelerator's threads per tile.
template <int __amp_D0, int __amp_D1, int __amp_D2> struct tiled_extent : extent<detail::tile_rank<__amp_D0, __amp_D1, __amp_D2>::value> {
    static_assert(__amp_D0 > 0 && __amp_D1 >= 0 && __amp_D2 >= 0 && !(__amp_D1 == 0 && __amp_D2 > 0),
                  "tiled_extent tile sizes must be positive, given outermost first");
    static constexpr int rank = detail::tile_rank<__amp_D0, __amp_D1, __amp_D2>::value;
    static constexpr int tile_dim0 = __amp_D0, tile_dim1 = __amp_D1, tile_dim2 = __amp_D2;
    typedef amp::extent<rank> extent_type;
    AMP_FI tiled_extent() {}
    AMP_FI tiled_extent(const extent_type &e) : extent_type(e) {}
    AMP_FI static extent_type get_tile_extent() {
        extent_type e;
        const int dims[3] = {__amp_D0, __amp_D1, __amp_D2};
        for (int d = 0; d < rank; ++d) e.v[d] = dims[d];
        return e;
    }
    // Each dimension rounded up (pad) or down (truncate) to a whole number
    // of tiles. Rounded up in long long: v + t - 1 passes INT_MAX near it.
    // A dimension whose padded value is no int (above INT_MAX) makes every
    // dimension 0, an empty domain, where the host's amp_tiled_extent_pad
    // fails with AMP_ERROR_INVALID_EXTENT and zeroes its result.
    AMP_FI tiled_extent pad() const {
        tiled_extent r = *this;
        const extent_type t = get_tile_extent();
        for (int d = 0; d < rank; ++d) {
            const long long p = ((long long)r.v[d] + t.v[d] - 1) / t.v[d] * t.v[d];
            if (p > 2147483647LL) return tiled_extent();
            r.v[d] = (int)p;
        }
        return r;
    }
    AMP_FI tiled_extent truncate() const {
        tiled_extent r = *this;
        const extent_type t = get_tile_extent();
        for (int d = 0; d < rank; ++d) r.v[d] = r.v[d] / t.v[d] * t.v[d];
        return r;
    }
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
template <int __amp_D0, int __amp_D1 = 0, int __amp_D2 = 0> struct tiled_index {
    static_assert(__amp_D0 > 0 && __amp_D1 >= 0 && __amp_D2 >= 0 && !(__amp_D1 == 0 && __amp_D2 > 0),
                  "tiled_index tile sizes must be positive, given outermost first");
    static constexpr int rank = __amp_D2 > 0 ? 3 : (__amp_D1 > 0 ? 2 : 1);
    static constexpr int tile_dim0 = __amp_D0, tile_dim1 = __amp_D1, tile_dim2 = __amp_D2;
    static constexpr int tile_threads = __amp_D0 * (__amp_D1 > 0 ? __amp_D1 : 1) * (__amp_D2 > 0 ? __amp_D2 : 1);
    index<rank> global, local, tile, tile_origin;
    tile_barrier barrier;
    AMP_FI static extent<rank> tile_extent() {
        extent<rank> e;
        const int dims[3] = {__amp_D0, __amp_D1, __amp_D2};
        for (int d = 0; d < rank; ++d) e.v[d] = dims[d];
        return e;
    }
    AMP_FI operator index<rank>() const { return global; }
};

// ----------------------------------------------------------- array_view
// Descriptor layout (lib/base/signature.h): pointer, int64 stride[N], extent.
template <class __amp_T, int __amp_N> struct array_view {
    static_assert(__amp_N >= 1, "amp::array_view rank must be at least 1");
    static constexpr int rank = __amp_N;
    typedef __amp_T value_type;
    __amp_T *data_;
    long long stride_[__amp_N];
    amp::extent<__amp_N> extent;

    array_view() = default;
    // A view of memory the kernel has (a local array, tile_static storage):
    // e.size() elements from src, row-major, as C++ AMP's array_view(extent,
    // T *src) and array_view(e0[, e1[, e2]], T *src). Nothing is copied; the
    // view lives as long as the memory does.
    AMP_FI array_view(const amp::extent<__amp_N> &e, __amp_T *src) : data_(src), extent(e) { dense_strides(); }
    template <int __amp_M = __amp_N, typename meta::enable<__amp_M == 1>::type = 0>
    AMP_FI array_view(int e0, __amp_T *src) : data_(src), extent(e0) { dense_strides(); }
    template <int __amp_M = __amp_N, typename meta::enable<__amp_M == 2>::type = 0>
    AMP_FI array_view(int e0, int e1, __amp_T *src) : data_(src), extent(e0, e1) { dense_strides(); }
    template <int __amp_M = __amp_N, typename meta::enable<__amp_M == 3>::type = 0>
    AMP_FI array_view(int e0, int e1, int e2, __amp_T *src) : data_(src), extent(e0, e1, e2) { dense_strides(); }

    AMP_FI void dense_strides() {
        long long s = 1;
        for (int d = __amp_N - 1; d >= 0; --d) {
            stride_[d] = s;
            s *= extent.v[d];
        }
    }
    AMP_FI long long offset_of(const index<__amp_N> &i) const {
        long long off = i.v[__amp_N - 1];
        for (int d = 0; d < __amp_N - 1; ++d) off += (long long)i.v[d] * stride_[d];
        return off;
    }
    AMP_FI amp::extent<__amp_N> get_extent() const { return extent; }
    AMP_FI __amp_T *data() const { return data_; }
    AMP_FI __amp_T &operator[](const index<__amp_N> &i) const { return AMP__CHECKED_BASE(*this, i)[offset_of(i)]; }
    AMP_FI __amp_T &operator()(const index<__amp_N> &i) const { return (*this)[i]; }
    template <class... __amp_I, typename meta::enable<sizeof...(__amp_I) == __amp_N>::type = 0>
    AMP_FI __amp_T &operator()(__amp_I... is) const { return (*this)[index<__amp_N>(is...)]; }
    // Projection, as [i] (C++ AMP's operator()(int) of rank N > 1).
    template <int __amp_M = __amp_N, typename meta::enable<(__amp_M > 1)>::type = 0>
    AMP_FI array_view<__amp_T, (__amp_N > 1 ? __amp_N - 1 : 1)> operator()(int i) const { return (*this)[i]; }
    // Projection: rank N-1 view of row i (N > 1), or element i (N == 1).
    AMP_FI decltype(auto) operator[](int i) const {
        if constexpr (__amp_N == 1) {
            return (*this)[index<1>(i)];
        } else {
            array_view<__amp_T, (__amp_N > 1 ? __amp_N - 1 : 1)> r;
            index<__amp_N> origin;
            origin.v[0] = i;
            r.data_ = AMP__CHECKED_BASE(*this, origin) + (long long)i * stride_[0];
            for (int d = 1; d < __amp_N; ++d) {
                r.stride_[d - 1] = stride_[d];
                r.extent.v[d - 1] = extent.v[d];
            }
            return r;
        }
    }
    AMP_FI array_view section(const index<__amp_N> &origin, const amp::extent<__amp_N> &e) const {
        array_view r = *this;
        if (!AMP__SECTION_INSIDE(*this, origin, e)) {
            r.extent = amp::extent<__amp_N>();
            return r;
        }
        r.data_ = data_ + offset_of(origin);
        r.extent = e;
        return r;
    }
    AMP_FI array_view section(const index<__amp_N> &origin) const { return section(origin, extent - origin); }
    AMP_FI array_view section(const amp::extent<__amp_N> &e) const { return section(index<__amp_N>(), e); }
    template <class __amp_U = __amp_T, typename meta::enable<!meta::is_const<__amp_U>::value>::type = 0>
    AMP_FI operator array_view<const __amp_U, __amp_N>() const {
        array_view<const __amp_U, __amp_N> r;
        r.data_ = data_;
        for (int d = 0; d < __amp_N; ++d) r.stride_[d] = stride_[d];
        r.extent = extent;
        return r;
    }
    // The same elements as another element type U (C++ AMP's reinterpret_as;
    // rank 1, whose elements are contiguous): size() * sizeof(T) / sizeof(U)
    // elements of U, a const U if T is const. Reading an element through one
    // type that the same work-item wrote through another is undefined (C++'s
    // aliasing rules), as it is in C++ AMP.
    template <class __amp_U> AMP_FI array_view<typename meta::copy_const<__amp_T, __amp_U>::type, 1> reinterpret_as() const {
        static_assert(__amp_N == 1, "array_view<T, N>::reinterpret_as: a view of rank 1 (an array of any rank)");
        return reinterpret_whole<__amp_U>();
    }
    // The same elements as a row-major view of rank K (C++ AMP's view_as;
    // rank 1). A shape of more elements than the view has gives an empty
    // view (extent 0): every access through it is outside the view, which
    // the CPU accelerator's debug checks report (AMP_DEBUG=1) and which is
    // otherwise undefined, as C++ AMP leaves it.
    template <int __amp_K> AMP_FI array_view<__amp_T, __amp_K> view_as(const amp::extent<__amp_K> &e) const {
        static_assert(__amp_N == 1, "array_view<T, N>::view_as: a view of rank 1 (an array of any rank)");
        return view_whole(e);
    }

    // For array, which is dense whatever its rank, and rank-1 views. More
    // elements of U than an int counts (a rank-1 extent holds an int) give
    // an empty view, as view_as does for a shape it cannot give.
    template <class __amp_U> AMP_FI array_view<typename meta::copy_const<__amp_T, __amp_U>::type, 1> reinterpret_whole() const {
        typedef typename meta::copy_const<__amp_T, __amp_U>::type __amp_R;
        const unsigned long long n = extent.size();
        const unsigned long long count = n > ~0ull / sizeof(__amp_T) ? ~0ull : n * sizeof(__amp_T) / sizeof(__amp_U);
        return array_view<__amp_R, 1>(count > 2147483647ull ? 0 : (int)count, (__amp_R *)data_);
    }
    // A shape with a negative dimension is no shape of these elements.
    template <int __amp_K> AMP_FI array_view<__amp_T, __amp_K> view_whole(const amp::extent<__amp_K> &e) const {
        array_view<__amp_T, __amp_K> r(e, data_);
        bool negative = false;
        for (int d = 0; d < __amp_K; ++d) negative = negative || e.v[d] < 0;
        if (negative || e.size() > extent.size()) r.extent = amp::extent<__amp_K>();
        return r;
    }
};

// A device array bound by amp_arg_array; same descriptor as array_view, and
// always dense (a whole array), so reinterpret_as and view_as take any rank.
template <class __amp_T, int __amp_N> struct array : array_view<__amp_T, __amp_N> {
    template <class __amp_U> AMP_FI array_view<typename meta::copy_const<__amp_T, __amp_U>::type, 1> reinterpret_as() const {
        return this->template reinterpret_whole<__amp_U>();
    }
    template <int __amp_K> AMP_FI array_view<__amp_T, __amp_K> view_as(const amp::extent<__amp_K> &e) const { return this->view_whole(e); }
};

// Read/write that ignore indices outside the view (padded tiled launches).
template <class __amp_T, int __amp_N>
AMP_FI typename meta::remove_const<__amp_T>::type guarded_read(const array_view<__amp_T, __amp_N> &v, const index<__amp_N> &i) {
    return v.extent.contains(i) ? v[i] : typename meta::remove_const<__amp_T>::type();
}
template <class __amp_T, int __amp_N, class __amp_U>
AMP_FI void guarded_write(const array_view<__amp_T, __amp_N> &v, const index<__amp_N> &i, const __amp_U &x) {
    if (v.extent.contains(i)) v[i] = x;
}

namespace detail {

// Kernel signature records (lib/base/signature.h).
struct sig_param { int kind, elem_size, rank, is_const, offset, size, align, reserved; };
struct signature {
    int magic, version, tiled, rank, tile[3], nparams, pack_size, pack_align;
    sig_param params[32];
};
struct launch_info { int ext[AMP__LAUNCH_MAX_RANK]; int rank; int reserved[3]; };

// Same numbers as amp_arg_kind in include/hipamp.h.
enum {
    __amp_K_VIEW = 1, __amp_K_ARRAY = 2, __amp_K_INT32 = 3, __amp_K_FLOAT32 = 4, __amp_K_FLOAT64 = 5, __amp_K_UINT32 = 6, __amp_K_INT64 = 7,
    __amp_K_UINT64 = 8, __amp_K_INT8 = 9, __amp_K_UINT8 = 10, __amp_K_INT16 = 11, __amp_K_UINT16 = 12, __amp_K_BOOL = 13, __amp_K_STRUCT = 14
};

template <class __amp_T> struct is_pointer { enum { value = 0 }; };
template <class __amp_T> struct is_pointer<__amp_T *> { enum { value = 1 }; };
template <class __amp_T> struct is_reference { enum { value = 0 }; };
template <class __amp_T> struct is_reference<__amp_T &> { enum { value = 1 }; };

// Any other parameter type is passed by value as raw bytes (K_STRUCT). The
// checks name the parameter's position (counted from 0 after the index, as
// args[] does) in the instantiation the compiler reports first; the library
// also puts that position on the first line of the log.
template <int __amp_Position, class __amp_T> struct kernel_parameter {
    static_assert(!is_pointer<__amp_T>::value,
                  "hipamp: a kernel parameter cannot be a raw pointer (its memory would bypass "
                  "array_view coherence); use amp::array_view<T, N> or amp::array<T, N>");
    static_assert(!is_reference<__amp_T>::value,
                  "hipamp: a kernel parameter cannot be a reference; take it by value");
    static_assert(__is_trivially_copyable(__amp_T),
                  "hipamp: a kernel parameter must be amp::array_view, amp::array, a scalar, or a "
                  "trivially copyable struct passed by value");
    // The host lays out the argument pack with at most 32-byte alignment
    // (AMP__MAX_PARAM_ALIGN, lib/base/signature.h).
    static_assert(alignof(__amp_T) <= 32,
                  "hipamp: a kernel parameter may be aligned to at most 32 bytes (alignas(64) is not passed)");
    enum { kind = __amp_K_STRUCT, elem = sizeof(__amp_T), rank = 0, is_const = 0 };
};
#define AMP__SCALAR_TRAITS(__amp_T, __amp_K)                                                     \
    template <int __amp_P> struct kernel_parameter<__amp_P, __amp_T> { enum { kind = __amp_K, elem = sizeof(__amp_T), rank = 0, is_const = 0 }; };
AMP__SCALAR_TRAITS(bool, __amp_K_BOOL)
AMP__SCALAR_TRAITS(char, __amp_K_INT8)
AMP__SCALAR_TRAITS(signed char, __amp_K_INT8)
AMP__SCALAR_TRAITS(unsigned char, __amp_K_UINT8)
AMP__SCALAR_TRAITS(short, __amp_K_INT16)
AMP__SCALAR_TRAITS(unsigned short, __amp_K_UINT16)
AMP__SCALAR_TRAITS(int, __amp_K_INT32)
AMP__SCALAR_TRAITS(unsigned, __amp_K_UINT32)
AMP__SCALAR_TRAITS(long, sizeof(long) == 8 ? __amp_K_INT64 : __amp_K_INT32)
AMP__SCALAR_TRAITS(unsigned long, sizeof(long) == 8 ? __amp_K_UINT64 : __amp_K_UINT32)
AMP__SCALAR_TRAITS(long long, __amp_K_INT64)
AMP__SCALAR_TRAITS(unsigned long long, __amp_K_UINT64)
AMP__SCALAR_TRAITS(float, __amp_K_FLOAT32)
AMP__SCALAR_TRAITS(double, __amp_K_FLOAT64)
#undef AMP__SCALAR_TRAITS
// A const scalar or struct parameter is the same to the host.
template <int __amp_P, class __amp_T> struct kernel_parameter<__amp_P, const __amp_T> : kernel_parameter<__amp_P, __amp_T> {};
template <int __amp_P, class __amp_T, int __amp_N> struct kernel_parameter<__amp_P, array_view<__amp_T, __amp_N>> {
    enum { kind = __amp_K_VIEW, elem = sizeof(__amp_T), rank = __amp_N, is_const = meta::is_const<__amp_T>::value };
};
template <int __amp_P, class __amp_T, int __amp_N> struct kernel_parameter<__amp_P, array<__amp_T, __amp_N>> {
    enum { kind = __amp_K_ARRAY, elem = sizeof(__amp_T), rank = __amp_N, is_const = meta::is_const<__amp_T>::value };
};

// The argument pack: a nested struct whose layout the signature describes.
template <class... __amp_A> struct pack {};
template <class __amp_H, class... __amp_A> struct pack<__amp_H, __amp_A...> {
    __amp_H head;
    pack<__amp_A...> tail;
};
template <int __amp_I> struct pack_get {
    template <class __amp_P> AMP_FI static const auto &get(const __amp_P &p) { return pack_get<__amp_I - 1>::get(p.tail); }
};
template <> struct pack_get<0> {
    template <class __amp_P> AMP_FI static const auto &get(const __amp_P &p) { return p.head; }
};

AMP__HD constexpr int align_up(int x, int a) { return (x + a - 1) / a * a; }

template <int __amp_I, class... __amp_A> struct fill_params;
template <int __amp_I> struct fill_params<__amp_I> {
    AMP__HD static constexpr void fill(signature &, int) {}
};
template <int __amp_I, class __amp_H, class... __amp_A> struct fill_params<__amp_I, __amp_H, __amp_A...> {
    AMP__HD static constexpr void fill(signature &s, int base) {
        typedef kernel_parameter<__amp_I, __amp_H> t;
        s.params[__amp_I].kind = t::kind;
        s.params[__amp_I].elem_size = t::elem;
        s.params[__amp_I].rank = t::rank;
        s.params[__amp_I].is_const = t::is_const;
        s.params[__amp_I].offset = base;
        s.params[__amp_I].size = (int)sizeof(__amp_H);
        s.params[__amp_I].align = (int)alignof(__amp_H);
        s.params[__amp_I].reserved = 0;
        // Layout rule of pack<H, A...>: tail follows head at its own alignment.
        fill_params<__amp_I + 1, __amp_A...>::fill(s, base + align_up((int)sizeof(__amp_H), (int)alignof(pack<__amp_A...>)));
    }
};

template <class __amp_I> struct index_traits {
    static_assert(sizeof(__amp_I) == 0,
                  "the first kernel parameter must be amp::index<N> (AMP_KERNEL) or "
                  "amp::tiled_index<...> (AMP_TILED_KERNEL)");
};
template <int __amp_N> struct index_traits<index<__amp_N>> {
    static_assert(__amp_N <= AMP__LAUNCH_MAX_RANK, "a launch's index has rank 1..8 (AMP__LAUNCH_MAX_RANK)");
    enum { tiled = 0, rank = __amp_N, d0 = 0, d1 = 0, d2 = 0, threads = AMP__SIMPLE_BLOCK_THREADS };
};
template <int __amp_D0, int __amp_D1, int __amp_D2> struct index_traits<tiled_index<__amp_D0, __amp_D1, __amp_D2>> {
    enum { tiled = 1, rank = tiled_index<__amp_D0, __amp_D1, __amp_D2>::rank, d0 = __amp_D0, d1 = __amp_D1, d2 = __amp_D2,
           threads = tiled_index<__amp_D0, __amp_D1, __amp_D2>::tile_threads };
};

// The argument pack's size, named in the compiler's message when it passes
// hipamp's limit on every accelerator (AMP__MAX_PACK, lib/base/signature.h: CUDA
// before 12.1 and HIP take 4 KiB of kernel parameters). The library reads
// the size and the kernel's name back from the log: Kernel is a tag type
// named after the kernel (name__amp_kernel), so every compiler's
// instantiation note carries the name (clang without caret lines, as
// some hipRTC builds print, shows no macro expansion to read it from).
template <unsigned long __amp_Bytes, class __amp_Kernel> struct kernel_parameter_bytes {
    static_assert(__amp_Bytes <= 4096, "hipamp: a kernel's parameters (after the index) take at most 4096 bytes");
    enum { fits = __amp_Bytes <= 4096 };
};

template <class __amp_F> struct kernel_traits;
template <class __amp_I, class... __amp_A> struct kernel_traits<void(__amp_I, __amp_A...)> {
    typedef index_traits<__amp_I> idx;
    typedef pack<__amp_A...> pack_type;
    static_assert(sizeof...(__amp_A) <= 32, "a hipamp kernel takes at most 32 parameters");
    AMP__HD static constexpr signature make() {
        signature s{};
        s.magic = 0x53504d41;
        s.version = 2;
        s.tiled = idx::tiled;
        s.rank = idx::rank;
        s.tile[0] = idx::d0;
        s.tile[1] = idx::d1;
        s.tile[2] = idx::d2;
        s.nparams = (int)sizeof...(__amp_A);
        s.pack_size = (int)sizeof(pack<__amp_A...>);
        s.pack_align = (int)alignof(pack<__amp_A...>);
        fill_params<0, __amp_A...>::fill(s, 0);
        return s;
    }
};

template <int... __amp_I> struct int_seq {};
template <int __amp_N, int... __amp_I> struct make_int_seq : make_int_seq<__amp_N - 1, __amp_N - 1, __amp_I...> {};
template <int... __amp_I> struct make_int_seq<0, __amp_I...> { typedef int_seq<__amp_I...> type; };

} // namespace detail
} // namespace amp

#ifndef AMP_CPU
namespace amp {
namespace detail {

// Simple model: x covers the last dimension, y the one before, z the product
// of the rest; y and z loop when the extent passes the grid limit. Threads
// past the edge do nothing. x is compared unsigned: a stated block size that
// is not a power of two (amp_launch_options) makes the last block's threads
// pass INT_MAX where the extent is near it, which an int would wrap to a
// negative, in-range x.
template <int __amp_N, class... __amp_A, int... __amp_I>
AMP_FI void run_simple(void (*f)(index<__amp_N>, __amp_A...), const launch_info &li, const pack<__amp_A...> &p,
                       int_seq<__amp_I...>) {
    unsigned ux = blockIdx.x * blockDim.x + threadIdx.x;
    if (ux >= (unsigned)li.ext[__amp_N - 1]) return;
    int x = (int)ux;
    if constexpr (__amp_N == 1) {
        f(index<1>(x), pack_get<__amp_I>::get(p)...);
    } else {
        // long long, like z: y + gridDim.y * blockDim.y can pass INT_MAX when
        // ey is near it, and an int would wrap to a negative, in-range y.
        long long ey = li.ext[__amp_N - 2];
        for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < ey;
             y += (long long)gridDim.y * blockDim.y) {
            if constexpr (__amp_N == 2) {
                f(index<2>(y, x), pack_get<__amp_I>::get(p)...);
            } else {
                long long ez = 1;
                for (int d = 0; d < __amp_N - 2; ++d) ez *= li.ext[d];
                for (long long z = blockIdx.z * blockDim.z + threadIdx.z; z < ez;
                     z += (long long)gridDim.z * blockDim.z) {
                    index<__amp_N> idx;
                    idx.v[__amp_N - 1] = x;
                    idx.v[__amp_N - 2] = (int)y;
                    long long r = z;
                    for (int d = __amp_N - 3; d >= 0; --d) {
                        idx.v[d] = (int)(r % li.ext[d]);
                        r /= li.ext[d];
                    }
                    f(idx, pack_get<__amp_I>::get(p)...);
                }
            }
        }
    }
}

template <int __amp_D0, int __amp_D1, int __amp_D2, class... __amp_A, int... __amp_I>
AMP_FI void run_tiled(void (*f)(tiled_index<__amp_D0, __amp_D1, __amp_D2>, __amp_A...), const launch_info &,
                      const pack<__amp_A...> &p, int_seq<__amp_I...>) {
    typedef tiled_index<__amp_D0, __amp_D1, __amp_D2> __amp_T;
    __amp_T t;
    const int __amp_R = __amp_T::rank;
    // Index dimension d maps to hardware axis R-1-d (x the last dimension).
    // Straight-line code, not a loop over d: NVRTC's optimizer pays for
    // unrolling even a loop of constant count, a few milliseconds of a
    // small tiled kernel's cold build on the H200 machine's host, for the
    // same machine code (bench/results/2026-12-03-h200-seed-against-plain-cuda.md).
    t.local.v[__amp_R - 1] = (int)threadIdx.x;
    t.tile.v[__amp_R - 1] = (int)blockIdx.x;
    if constexpr (__amp_R >= 2) {
        t.local.v[__amp_R - 2] = (int)threadIdx.y;
        t.tile.v[__amp_R - 2] = (int)blockIdx.y;
    }
    if constexpr (__amp_R >= 3) {
        t.local.v[0] = (int)threadIdx.z;
        t.tile.v[0] = (int)blockIdx.z;
    }
    t.tile_origin.v[0] = t.tile.v[0] * __amp_D0;
    t.global.v[0] = t.tile_origin.v[0] + t.local.v[0];
    if constexpr (__amp_R >= 2) {
        t.tile_origin.v[1] = t.tile.v[1] * __amp_D1;
        t.global.v[1] = t.tile_origin.v[1] + t.local.v[1];
    }
    if constexpr (__amp_R >= 3) {
        t.tile_origin.v[2] = t.tile.v[2] * __amp_D2;
        t.global.v[2] = t.tile_origin.v[2] + t.local.v[2];
    }
    f(t, pack_get<__amp_I>::get(p)...);
}

template <class __amp_F> struct entry;
template <int __amp_N, class... __amp_A> struct entry<void(index<__amp_N>, __amp_A...)> {
    AMP_FI static void run(void (*f)(index<__amp_N>, __amp_A...), const launch_info &li, const pack<__amp_A...> &p) {
        run_simple(f, li, p, typename make_int_seq<sizeof...(__amp_A)>::type());
    }
};
template <int __amp_D0, int __amp_D1, int __amp_D2, class... __amp_A> struct entry<void(tiled_index<__amp_D0, __amp_D1, __amp_D2>, __amp_A...)> {
    AMP_FI static void run(void (*f)(tiled_index<__amp_D0, __amp_D1, __amp_D2>, __amp_A...), const launch_info &li,
                           const pack<__amp_A...> &p) {
        run_tiled(f, li, p, typename make_int_seq<sizeof...(__amp_A)>::type());
    }
};

} // namespace detail
} // namespace amp

namespace amp { namespace detail {
// A launch recorded into a graph on sm_90 or later is programmatic
// (lib/gpu/driver_cuda.c): its tiles may be scheduled before the launch
// queued before it has finished. So every entry point first lets the
// launch after it be scheduled once every tile of its own has started,
// and then waits until the launch before it has completed and its memory
// is visible (at once when that launch was not programmatic). The next
// launch's tiles take only slots that are free and read only after their
// own wait, so launches still run in their order; and a launch's
// dependents are scheduled only after all its tiles have started, so the
// oldest unfinished launch always has every tile running (the algorithms'
// look-backs rely on that). Letting the next launch in before the wait
// rather than after overlaps two launches' scheduling with one kernel, a
// sixth of a small launch's time in a replayed chain (docs/architecture.md,
// launch graphs).
AMP_FI void grid_dependency_enter() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
} } // namespace amp::detail

// CUDA's minimum blocks per multiprocessor of a kernel's __launch_bounds__
// (which caps the registers a thread may take): 0, the compiler's choice,
// unless a source names a number of tiles for the kernel with
// AMP__KERNEL_MIN_TILES before defining it (hipamp's sort pass does). HIP's
// second bound means something else: it gets none.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define AMP__LAUNCH_MIN_TILES(name) , amp::detail::kernel_min_tiles<name##__amp_kernel>::value
#else
#define AMP__LAUNCH_MIN_TILES(name)
#endif

// The entry point: extern "C" name(launch_info, pack) plus the signature
// record name##__amp_sig that the host reads to check launches. The bound is
// parenthesized: HIP's __launch_bounds__ is a macro, which would split the
// template's arguments at their comma.
#define AMP__DEFINE_ENTRY(name)                                                                  \
    extern "C" __global__ void __launch_bounds__(                                                \
        (amp::detail::entry_threads<decltype(name##__amp_body), name##__amp_kernel>::value)      \
        AMP__LAUNCH_MIN_TILES(name))                                                             \
        name(amp::detail::launch_info amp__li,                                                   \
             typename amp::detail::kernel_traits<decltype(name##__amp_body)>::pack_type amp__p) { \
        amp::detail::grid_dependency_enter();                                                    \
        amp::detail::entry<decltype(name##__amp_body)>::run(name##__amp_body, amp__li, amp__p);  \
    }                                                                                            \
    extern "C" __device__ __attribute__((used)) amp::detail::signature name##__amp_sig =         \
        amp::detail::kernel_traits<decltype(name##__amp_body)>::make();
#endif // !AMP_CPU

namespace amp { namespace detail {
template <class __amp_Kernel> struct kernel_min_tiles { enum { value = 0 }; };
// The parameters (positions after the index, from 0) that a simple kernel's
// launches may write with streaming stores (AMP_KERNEL_STREAMING_STORES);
// bit k for position k, 0: none. Only the CPU accelerator acts on it.
template <class __amp_Kernel> struct kernel_streams { enum : unsigned { mask = 0u, declared = 0 }; };
AMP__HD constexpr int stream_positions() { return 0; }
template <class... __amp_P> AMP__HD constexpr int stream_positions(int, __amp_P... rest) { return 1 + stream_positions(rest...); }
AMP__HD constexpr bool stream_positions_ok() { return true; }
template <class... __amp_P> AMP__HD constexpr bool stream_positions_ok(int k, __amp_P... rest) {
    return k >= 0 && k < 32 && stream_positions_ok(rest...);
}
AMP__HD constexpr unsigned stream_mask() { return 0u; }
template <class... __amp_P> AMP__HD constexpr unsigned stream_mask(int k, __amp_P... rest) {
    return (k >= 0 && k < 32 ? 1u << k : 0u) | stream_mask(rest...);
}
// Whether parameter type P of a kernel of rank R may be declared streamed:
// a writable view or array of the launch's rank.
template <class __amp_P, int __amp_R> struct stream_param_ok { enum { value = 0 }; };
template <class __amp_T, int __amp_R> struct stream_param_ok<array_view<__amp_T, __amp_R>, __amp_R> { enum { value = !meta::is_const<__amp_T>::value }; };
template <class __amp_T, int __amp_R> struct stream_param_ok<array<__amp_T, __amp_R>, __amp_R> { enum { value = !meta::is_const<__amp_T>::value }; };
template <unsigned __amp_Mask, int __amp_R, int __amp_K, class... __amp_A> struct stream_params_ok { enum { value = 1 }; };
template <unsigned __amp_Mask, int __amp_R, int __amp_K, class __amp_P, class... __amp_A> struct stream_params_ok<__amp_Mask, __amp_R, __amp_K, __amp_P, __amp_A...> {
    // K & 31: a kernel of more than 32 parameters is refused by kernel_traits;
    // its message alone, not a shift's, names the error.
    enum { value = (__amp_K >= 32 || !((__amp_Mask >> (__amp_K & 31)) & 1u) || stream_param_ok<__amp_P, __amp_R>::value) &&
                   stream_params_ok<__amp_Mask, __amp_R, __amp_K + 1, __amp_A...>::value };
};
template <class __amp_F, class __amp_Kernel> struct stream_check;
template <class __amp_I, class... __amp_A, class __amp_Kernel> struct stream_check<void(__amp_I, __amp_A...), __amp_Kernel> {
    enum : unsigned { mask = kernel_streams<__amp_Kernel>::mask };
    static_assert(!(index_traits<__amp_I>::tiled && kernel_streams<__amp_Kernel>::declared),
                  "hipamp: AMP_KERNEL_STREAMING_STORES applies to AMP_KERNEL (simple) kernels");
    static_assert(sizeof...(__amp_A) >= 32 || (mask >> (sizeof...(__amp_A) & 31)) == 0u,
                  "hipamp: AMP_KERNEL_STREAMING_STORES names a position past the kernel's parameters "
                  "(positions count the parameters after the index from 0)");
    static_assert(stream_params_ok<mask, index_traits<__amp_I>::rank, 0, __amp_A...>::value,
                  "hipamp: AMP_KERNEL_STREAMING_STORES names a parameter that is not a writable "
                  "amp::array_view or amp::array of the kernel's rank");
};
// The most threads a block of a simple launch of Kernel may have
// (AMP_KERNEL_MAX_BLOCK); declared: whether a source named it.
template <class __amp_Kernel> struct kernel_max_block { enum { value = AMP__SIMPLE_BLOCK_THREADS, declared = 0 }; };
// The entry point's threads per block: a tiled kernel's tile, a simple
// kernel's bound. The host reads it back (the driver's figure on a GPU,
// name##__amp_max_block on the CPU) to check amp_launch_options.block_size.
template <class __amp_F, class __amp_Kernel> struct entry_threads {
    typedef typename kernel_traits<__amp_F>::idx idx;
    static_assert(!(idx::tiled && kernel_max_block<__amp_Kernel>::declared),
                  "hipamp: AMP_KERNEL_MAX_BLOCK applies to AMP_KERNEL (simple) kernels; a tiled kernel's "
                  "block is its tile");
    enum { value = idx::tiled ? (int)idx::threads : (int)kernel_max_block<__amp_Kernel>::value,
           streams_checked = (int)sizeof(stream_check<__amp_F, __amp_Kernel>) };
};
} } // namespace amp::detail
// AMP_KERNEL_MAX_BLOCK(name, n), at file scope before AMP_KERNEL(name, ...):
// the simple kernel name may be launched with blocks of up to n threads
// (amp_launch_options.block_size, 1..1024); without it, up to
// AMP__SIMPLE_BLOCK_THREADS (256). It is the kernel's __launch_bounds__: a
// larger bound leaves each thread fewer registers (on NVIDIA, 1024 leaves
// 64), so name only what the launches need.
#define AMP_KERNEL_MAX_BLOCK(name, n)                                                            \
    struct name##__amp_kernel;                                                                   \
    namespace amp { namespace detail {                                                           \
    template <> struct kernel_max_block<::name##__amp_kernel> {                                  \
        static_assert((n) >= 1 && (n) <= 1024,                                                   \
                      "hipamp: AMP_KERNEL_MAX_BLOCK(" #name ", n) takes n from 1 to 1024");      \
        enum { value = (n), declared = 1 };                                                      \
    };                                                                                           \
    } }
// AMP_KERNEL_STREAMING_STORES(name, k...), at file scope before
// AMP_KERNEL(name, ...): a promise about the simple kernel name's
// parameters at positions k... (counted after the index from 0; each a
// writable array_view or array of the kernel's rank): in every launch,
// every work-item writes the whole element at its own index of each, and
// no work-item reads them or writes them elsewhere. The CPU accelerator may
// then gather a block of work-items' results in a buffer of its cache and
// write it to memory with streaming (non-temporal) stores, which skip
// reading the destination's lines first: about a quarter more bandwidth for
// BabelStream's Mul and Triad when the arrays are larger than the
// last-level cache (AMP_CPU_STREAM_STORES, AMP_CPU_STREAM_MIN). A kernel
// that breaks the promise has undefined behaviour, as a restrict pointer
// that aliases: its stores may land outside the views (AMP_DEBUG=1 builds
// do not stream). GPUs ignore it.
#define AMP_KERNEL_STREAMING_STORES(name, ...)                                                   \
    struct name##__amp_kernel;                                                                   \
    namespace amp { namespace detail {                                                           \
    template <> struct kernel_streams<::name##__amp_kernel> {                                    \
        static_assert(amp::detail::stream_positions(__VA_ARGS__) > 0 &&                          \
                          amp::detail::stream_positions_ok(__VA_ARGS__),                         \
                      "hipamp: AMP_KERNEL_STREAMING_STORES(" #name ", ...) takes parameter "     \
                      "positions from 0 to 31, at least one");                                   \
        enum : unsigned { mask = amp::detail::stream_mask(__VA_ARGS__), declared = 1 };          \
    };                                                                                           \
    } }
// AMP__KERNEL_MIN_TILES(name, n): n tiles of kernel name must fit on a
// multiprocessor at once (CUDA only; see AMP__LAUNCH_MIN_TILES). Internal:
// for hipamp's own kernels, before their definition.
#define AMP__KERNEL_MIN_TILES(name, n)                                                           \
    struct name##__amp_kernel;                                                                   \
    namespace amp { namespace detail {                                                           \
    template <> struct kernel_min_tiles<::name##__amp_kernel> { enum { value = (n) }; };         \
    } }

namespace amp { namespace detail {
template <class __amp_F, class __amp_Kernel> struct kernel_pack_fits {
    enum { value = kernel_parameter_bytes<sizeof(typename kernel_traits<__amp_F>::pack_type), __amp_Kernel>::fits };
};
} } // namespace amp::detail

// AMP_KERNEL(name, amp::index<N> idx, params...) { body }
// AMP_TILED_KERNEL(name, amp::tiled_index<D0[,D1[,D2]]> tidx, params...) { body }
#define AMP__KERNEL(name, ...)                                          \
    static AMP_FI void name##__amp_body(__VA_ARGS__);                                            \
    struct name##__amp_kernel;                                                                   \
    static_assert(amp::detail::kernel_pack_fits<decltype(name##__amp_body), name##__amp_kernel>::value, \
                  "hipamp: the parameters of kernel '" #name "' take more than 4096 bytes: " \
                  "pass large data in an amp::array_view");             \
    AMP__DEFINE_ENTRY(name)                                             \
    static AMP_FI void name##__amp_body(__VA_ARGS__)
// The device library renames the token norm (C++ AMP's type, which a
// vendor math function shares the name of): a kernel of that name would be
// compiled as amp__norm and never found under its own.
namespace amp { namespace detail {
AMP__HD constexpr bool kernel_name_allowed(const char *s) {
    return !(s[0] == 'n' && s[1] == 'o' && s[2] == 'r' && s[3] == 'm' && s[4] == '\0');
}
// AMP__KERNEL_NAME_MAX in lib/base/signature.h: the host looks the name's
// records up under NAME plus a suffix in fixed buffers.
AMP__HD constexpr bool kernel_name_fits(const char *s) {
    int n = 0;
    while (s[n] && n <= 255) ++n;
    return n <= 255;
}
} } // namespace amp::detail
#define AMP__KERNEL_NAME_CHECK(spelled)                                 \
    static_assert(amp::detail::kernel_name_allowed(spelled),            \
                  "hipamp: a kernel cannot be named 'norm': the name is C++ AMP's type amp::graphics::norm"); \
    static_assert(amp::detail::kernel_name_fits(spelled), "hipamp: a kernel's name has at most 255 characters");
#define AMP_KERNEL(name, ...) AMP__KERNEL_NAME_CHECK(#name) AMP__KERNEL(name, __VA_ARGS__)
#define AMP_TILED_KERNEL(name, ...) AMP__KERNEL_NAME_CHECK(#name) AMP__KERNEL(name, __VA_ARGS__)

#endif // AMP_PRELUDE_INCLUDED
