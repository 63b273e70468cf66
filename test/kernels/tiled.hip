// tiled.hip — kernels of test_tiled.c: record every tiled_index field for rank 1, 2 and 3 tiles, a tile-local reversal in 3-D, a tile reduction, and the leftover pass of a truncated transpose.

// rec(g0, g1, f): f = 0..1 global, 2..3 local, 4..5 tile, 6..7 tile_origin,
// 8 the index<2> the tiled_index converts to, 9 the tile_extent().
AMP_TILED_KERNEL(tidx2, amp::tiled_index<2, 2> t, amp::array_view<int, 3> rec)
{
    const int a = t.global[0], b = t.global[1];
    rec(a, b, 0) = t.global[0];
    rec(a, b, 1) = t.global[1];
    rec(a, b, 2) = t.local[0];
    rec(a, b, 3) = t.local[1];
    rec(a, b, 4) = t.tile[0];
    rec(a, b, 5) = t.tile[1];
    rec(a, b, 6) = t.tile_origin[0];
    rec(a, b, 7) = t.tile_origin[1];
    amp::index<2> g = t;
    rec(a, b, 8) = g[0] * 100 + g[1];
    amp::extent<2> te = t.tile_extent();
    rec(a, b, 9) = te[0] * 10 + te[1];
}

// rec(g, f): f = 0 global, 1 local, 2 tile, 3 tile_origin.
AMP_TILED_KERNEL(tidx1, amp::tiled_index<64> t, amp::array_view<int, 2> rec)
{
    const int g = t.global[0];
    rec(g, 0) = t.global[0];
    rec(g, 1) = t.local[0];
    rec(g, 2) = t.tile[0];
    rec(g, 3) = t.tile_origin[0];
}

// rec(g0, g1, g2, f): f = 0..2 global, 3..5 local, 6..8 tile, 9..11 tile_origin.
AMP_TILED_KERNEL(tidx3, amp::tiled_index<2, 4, 8> t, amp::array_view<int, 4> rec)
{
    const int a = t.global[0], b = t.global[1], c = t.global[2];
    for (int d = 0; d < 3; ++d) {
        rec(a, b, c, d) = t.global[d];
        rec(a, b, c, 3 + d) = t.local[d];
        rec(a, b, c, 6 + d) = t.tile[d];
        rec(a, b, c, 9 + d) = t.tile_origin[d];
    }
}

// Reverse each 2x4x8 tile in all three dimensions through tile_static.
AMP_TILED_KERNEL(tile_reverse3, amp::tiled_index<2, 4, 8> t, amp::array_view<const int, 3> in,
                 amp::array_view<int, 3> out)
{
    tile_static int s[2][4][8];
    s[t.local[0]][t.local[1]][t.local[2]] = in[t.global];
    t.barrier.wait();
    out[t.global] = s[1 - t.local[0]][3 - t.local[1]][7 - t.local[2]];
}

// Tree sum of each 64-wide tile.
AMP_TILED_KERNEL(tile_sum64, amp::tiled_index<64> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> sums)
{
    tile_static int s[64];
    s[t.local[0]] = in[t.global];
    t.barrier.wait();
    for (int w = 32; w > 0; w >>= 1) {
        if (t.local[0] < w) s[t.local[0]] += s[t.local[0] + w];
        t.barrier.wait();
    }
    if (t.local[0] == 0) sums[t.tile] = s[0];
}

// The part of A a truncated tiled transpose left: rows >= rows_done or
// columns >= cols_done.
AMP_KERNEL(transpose_leftover, amp::index<2> i, amp::array_view<const float, 2> A,
           amp::array_view<float, 2> At, int rows_done, int cols_done)
{
    if (i[0] >= rows_done || i[1] >= cols_done) At(i[1], i[0]) = A[i];
}
