// stream.hip — BabelStream's kernels in hipamp (examples/stream/stream.c; bench_gpu's and bench_cpu's stream sections compile the same text): Copy, Mul, Add, Triad, Nstream, and Dot as BabelStream's CUDA version writes it (a tile of STREAM_TILE work-items, each summing a grid-stride run of products, then a tree in tile_static memory, one partial sum a tile); each once over rank-1 arrays and once (_2d) over rank-2 ones, for arrays of more than 2^31 - 1 elements.
//
// The element type is STREAM_T (double unless the program defines it:
// -DSTREAM_T=float in the build options), so that one source serves both
// precisions. The scalar is a constant of the kernels, as in BabelStream's
// CUDA kernels (0.4, its startScalar), so a launch takes views only.

#ifndef STREAM_T
#define STREAM_T double
#endif
#ifndef STREAM_TILE
#define STREAM_TILE 1024
#endif
#define STREAM_SCALAR ((STREAM_T)0.4)

typedef STREAM_T stream_t;

// The simple kernels may be launched with blocks of up to 1024 threads
// (stream --block-size; BabelStream's CUDA version uses 1024), past the
// default bound of 256. The bound costs these kernels nothing: they need a
// handful of registers, far below what 1024-thread blocks leave a thread.
// Each kernel's body is written once, for any rank: the rank-1 kernels
// serve arrays of up to 2^31 - 1 elements (an extent's dimension is an
// int), the _2d ones larger arrays, held as rows x columns (stream.c says
// when). Both index with 32-bit numbers per dimension; a view computes the
// element's offset in 64 bits.
#define STREAM_SIMPLE(name, params, ...)                                                         \
    AMP_KERNEL_MAX_BLOCK(name, 1024)                                                             \
    AMP_KERNEL_MAX_BLOCK(name##_2d, 1024)                                                        \
    AMP_KERNEL(name, amp::index<1> i, STREAM_PARAMS_##params(1)) { name##_body(i, __VA_ARGS__); } \
    AMP_KERNEL(name##_2d, amp::index<2> i, STREAM_PARAMS_##params(2)) { name##_body(i, __VA_ARGS__); }

// The kernels that write an array without reading it promise so
// (AMP_KERNEL_STREAMING_STORES: every work-item writes its own element and
// none reads it): on the CPU accelerator, launches over arrays larger than
// the last-level cache then write them with streaming stores.
#define STREAM_STREAMS(name, ...)                                                                 \
    AMP_KERNEL_STREAMING_STORES(name, __VA_ARGS__)                                               \
    AMP_KERNEL_STREAMING_STORES(name##_2d, __VA_ARGS__)

#define STREAM_PARAMS_RW(N) amp::array_view<const stream_t, N> a, amp::array_view<stream_t, N> c
#define STREAM_PARAMS_WR(N) amp::array_view<stream_t, N> b, amp::array_view<const stream_t, N> c
#define STREAM_PARAMS_RRW(N)                                                                 \
    amp::array_view<const stream_t, N> a, amp::array_view<const stream_t, N> b, amp::array_view<stream_t, N> c
#define STREAM_PARAMS_WRR(N)                                                                 \
    amp::array_view<stream_t, N> a, amp::array_view<const stream_t, N> b, amp::array_view<const stream_t, N> c
#define STREAM_PARAMS_INIT(N)                                                                \
    amp::array_view<stream_t, N> a, amp::array_view<stream_t, N> b, amp::array_view<stream_t, N> c, stream_t x, \
        stream_t y, stream_t z

// a = x, b = y, c = z (BabelStream's init_arrays).
template <class I, class V> AMP_FI void stream_init_body(I i, V a, V b, V c, stream_t x, stream_t y, stream_t z)
{
    a[i] = x;
    b[i] = y;
    c[i] = z;
}
STREAM_STREAMS(stream_init, 0, 1, 2)
STREAM_SIMPLE(stream_init, INIT, a, b, c, x, y, z)

// c = a
template <class I, class R, class W> AMP_FI void stream_copy_body(I i, R a, W c) { c[i] = a[i]; }
STREAM_STREAMS(stream_copy, 1)
STREAM_SIMPLE(stream_copy, RW, a, c)

// b = scalar * c
template <class I, class W, class R> AMP_FI void stream_mul_body(I i, W b, R c) { b[i] = STREAM_SCALAR * c[i]; }
STREAM_STREAMS(stream_mul, 0)
STREAM_SIMPLE(stream_mul, WR, b, c)

// c = a + b
template <class I, class R, class W> AMP_FI void stream_add_body(I i, R a, R b, W c) { c[i] = a[i] + b[i]; }
STREAM_STREAMS(stream_add, 2)
STREAM_SIMPLE(stream_add, RRW, a, b, c)

// a = b + scalar * c
template <class I, class W, class R> AMP_FI void stream_triad_body(I i, W a, R b, R c)
{
    a[i] = b[i] + STREAM_SCALAR * c[i];
}
STREAM_STREAMS(stream_triad, 0)
STREAM_SIMPLE(stream_triad, WRR, a, b, c)

// a += b + scalar * c
template <class I, class W, class R> AMP_FI void stream_nstream_body(I i, W a, R b, R c)
{
    a[i] += b[i] + STREAM_SCALAR * c[i];
}
STREAM_SIMPLE(stream_nstream, WRR, a, b, c)

// sums[tile] = the sum of a[i] * b[i] over the i this tile's work-items
// visit: work-item g of G (G = tiles * STREAM_TILE, the launch's extent;
// sums has one element a tile) takes g, g + G, g + 2G, ... The index is
// unsigned: i + G stays below 2^32 for any int extent and any launch. (The
// loop stays in the kernel's body, where the CPU accelerator finds it and
// runs the tile's work-items through it in lockstep.)
AMP_TILED_KERNEL(stream_dot, amp::tiled_index<STREAM_TILE> t, amp::array_view<const stream_t, 1> a,
                 amp::array_view<const stream_t, 1> b, amp::array_view<stream_t, 1> sums)
{
    tile_static stream_t part[STREAM_TILE];
    const unsigned n = (unsigned)a.extent[0];
    const unsigned stride = (unsigned)sums.extent[0] * STREAM_TILE;
    const int l = t.local[0];
    stream_t s = 0;
    for (unsigned i = (unsigned)t.global[0]; i < n; i += stride) s += a[(int)i] * b[(int)i];
    part[l] = s;
    for (int w = STREAM_TILE / 2; w > 0; w /= 2) {
        t.barrier.wait();
        if (l < w) part[l] += part[l + w];
    }
    if (l == 0) sums[t.tile[0]] = part[0];
}

// The same over rank-2 arrays: they are whole (dense rows x columns), so
// the work-items run over their elements in order through the views' base
// addresses, with a 64-bit index.
AMP_TILED_KERNEL(stream_dot_2d, amp::tiled_index<STREAM_TILE> t, amp::array_view<const stream_t, 2> a,
                 amp::array_view<const stream_t, 2> b, amp::array_view<stream_t, 1> sums)
{
    tile_static stream_t part[STREAM_TILE];
    const stream_t *pa = a.data(), *pb = b.data();
    const unsigned long long n = (unsigned long long)a.extent[0] * (unsigned long long)a.extent[1];
    const unsigned long long stride = (unsigned long long)sums.extent[0] * STREAM_TILE;
    const int l = t.local[0];
    stream_t s = 0;
    for (unsigned long long i = (unsigned long long)t.global[0]; i < n; i += stride) s += pa[i] * pb[i];
    part[l] = s;
    for (int w = STREAM_TILE / 2; w > 0; w /= 2) {
        t.barrier.wait();
        if (l < w) part[l] += part[l + w];
    }
    if (l == 0) sums[t.tile[0]] = part[0];
}
