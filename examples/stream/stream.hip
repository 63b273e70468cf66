// stream.hip — BabelStream's kernels in hipamp (examples/stream/stream.c; bench_gpu's and bench_cpu's stream sections compile the same text): Copy, Mul, Add, Triad, Nstream, and Dot as BabelStream's CUDA version writes it (a tile of STREAM_TILE work-items, each summing a grid-stride run of products, then a tree in tile_static memory, one partial sum a tile).
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
AMP_KERNEL_MAX_BLOCK(stream_init, 1024)
AMP_KERNEL_MAX_BLOCK(stream_copy, 1024)
AMP_KERNEL_MAX_BLOCK(stream_mul, 1024)
AMP_KERNEL_MAX_BLOCK(stream_add, 1024)
AMP_KERNEL_MAX_BLOCK(stream_triad, 1024)
AMP_KERNEL_MAX_BLOCK(stream_nstream, 1024)

// a = x, b = y, c = z (BabelStream's init_arrays).
AMP_KERNEL(stream_init, amp::index<1> i, amp::array_view<stream_t, 1> a, amp::array_view<stream_t, 1> b,
           amp::array_view<stream_t, 1> c, stream_t x, stream_t y, stream_t z)
{
    a[i] = x;
    b[i] = y;
    c[i] = z;
}

// c = a
AMP_KERNEL(stream_copy, amp::index<1> i, amp::array_view<const stream_t, 1> a, amp::array_view<stream_t, 1> c)
{
    c[i] = a[i];
}

// b = scalar * c
AMP_KERNEL(stream_mul, amp::index<1> i, amp::array_view<stream_t, 1> b, amp::array_view<const stream_t, 1> c)
{
    b[i] = STREAM_SCALAR * c[i];
}

// c = a + b
AMP_KERNEL(stream_add, amp::index<1> i, amp::array_view<const stream_t, 1> a, amp::array_view<const stream_t, 1> b,
           amp::array_view<stream_t, 1> c)
{
    c[i] = a[i] + b[i];
}

// a = b + scalar * c
AMP_KERNEL(stream_triad, amp::index<1> i, amp::array_view<stream_t, 1> a, amp::array_view<const stream_t, 1> b,
           amp::array_view<const stream_t, 1> c)
{
    a[i] = b[i] + STREAM_SCALAR * c[i];
}

// a += b + scalar * c
AMP_KERNEL(stream_nstream, amp::index<1> i, amp::array_view<stream_t, 1> a, amp::array_view<const stream_t, 1> b,
           amp::array_view<const stream_t, 1> c)
{
    a[i] += b[i] + STREAM_SCALAR * c[i];
}

// sums[tile] = the sum of a[i] * b[i] over the i this tile's work-items
// visit: work-item g of G (G = tiles * STREAM_TILE, the launch's extent;
// sums has one element a tile) takes g, g + G, g + 2G, ... The index is
// unsigned: i + G stays below 2^32 for any int extent and any launch.
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
