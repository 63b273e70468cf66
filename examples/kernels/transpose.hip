// transpose.hip — matrix transpose At = A^T in every variant of the study: simple, tiled 16x16 padded / truncated (edge in the kernel) / even (divide-and-conquer core), and a tuned 32x32-tile kernel.

// Simple model: one thread per element of A, any extent (also used for the
// edge strips of the divide-and-conquer variant, on array_view sections).
AMP_KERNEL(transpose_simple, amp::index<2> idx,
           amp::array_view<const float, 2> A, amp::array_view<float, 2> At)
{
    At(idx[1], idx[0]) = A[idx];
}

// Tiled, launched on the padded extent: threads past the edge read zeros and
// write nothing (guarded_read / guarded_write).
AMP_TILED_KERNEL(transpose_tiled_pad, amp::tiled_index<16, 16> tidx,
                 amp::array_view<const float, 2> A, amp::array_view<float, 2> At)
{
    tile_static float t1[16][16];
    t1[tidx.local[1]][tidx.local[0]] = amp::guarded_read(A, tidx.global);
    tidx.barrier.wait();
    amp::index<2> dst = amp::index<2>(tidx.tile_origin[1], tidx.tile_origin[0]) + tidx.local;
    amp::guarded_write(At, dst, t1[tidx.local[0]][tidx.local[1]]);
}

// Tiled, launched on an extent the tile divides (the divide-and-conquer
// core): no guards at all.
AMP_TILED_KERNEL(transpose_tiled_even, amp::tiled_index<16, 16> tidx,
                 amp::array_view<const float, 2> A, amp::array_view<float, 2> At)
{
    tile_static float t1[16][16];
    t1[tidx.local[1]][tidx.local[0]] = A[tidx.global];
    tidx.barrier.wait();
    amp::index<2> dst = amp::index<2>(tidx.tile_origin[1], tidx.tile_origin[0]) + tidx.local;
    At[dst] = t1[tidx.local[0]][tidx.local[1]];
}

// Tiled, launched on the truncated extent: the tiles transpose the divisible
// core, and the threads of the last tile row / tile column also transpose
// the leftover rows / columns (fewer than 16 of each) element by element.
// The thread at global (r, c) of the last tile row handles (r + 16, c); of
// the last tile column (r, c + 16); of the last tile (r + 16, c + 16).
AMP_TILED_KERNEL(transpose_tiled_truncate, amp::tiled_index<16, 16> tidx,
                 amp::array_view<const float, 2> A, amp::array_view<float, 2> At)
{
    tile_static float t1[16][16];
    t1[tidx.local[1]][tidx.local[0]] = A[tidx.global];
    tidx.barrier.wait();
    amp::index<2> dst = amp::index<2>(tidx.tile_origin[1], tidx.tile_origin[0]) + tidx.local;
    At[dst] = t1[tidx.local[0]][tidx.local[1]];

    const int M = A.extent[0], N = A.extent[1];
    const int tm = M / 16 * 16, tn = N / 16 * 16; // the truncated extent
    const int r = tidx.global[0], c = tidx.global[1];
    const bool last_row = r >= tm - 16, last_col = c >= tn - 16;
    if (last_row && r + 16 < M) At(c, r + 16) = A(r + 16, c);
    if (last_col && c + 16 < N) At(c + 16, r) = A(r, c + 16);
    if (last_row && last_col && r + 16 < M && c + 16 < N) At(c + 16, r + 16) = A(r + 16, c + 16);
}

// Tuned: a 32x32 data tile per 32x8 thread tile (tiled_index<8, 32>: 8 rows
// of 32 threads, the 32 contiguous along x), each thread moving 4 rows; the
// tile_static row is padded to 33 floats so the column reads hit 32 different
// banks. Launch on extent (ceil(M/32)*8, ceil(N/32)*32): tile (i, j) moves
// A's data tile (32i, 32j). Full tiles take the unguarded path.
AMP_TILED_KERNEL(transpose_tuned, amp::tiled_index<8, 32> tidx,
                 amp::array_view<const float, 2> A, amp::array_view<float, 2> At)
{
    tile_static float t[32][33];
    const int M = A.extent[0], N = A.extent[1];
    const int r0 = tidx.tile[0] * 32, c0 = tidx.tile[1] * 32;
    const int ty = tidx.local[0], tx = tidx.local[1];
    if (r0 + 32 <= M && c0 + 32 <= N) {
        for (int k = 0; k < 32; k += 8) t[ty + k][tx] = A(r0 + ty + k, c0 + tx);
        tidx.barrier.wait();
        for (int k = 0; k < 32; k += 8) At(c0 + ty + k, r0 + tx) = t[tx][ty + k];
    } else {
        for (int k = 0; k < 32; k += 8)
            if (r0 + ty + k < M && c0 + tx < N) t[ty + k][tx] = A(r0 + ty + k, c0 + tx);
        tidx.barrier.wait();
        for (int k = 0; k < 32; k += 8)
            if (c0 + ty + k < N && r0 + tx < M) At(c0 + ty + k, r0 + tx) = t[tx][ty + k];
    }
}

// Launch-overhead probe: a small kernel with three views, z = 2x + y (the
// same result however often it runs); only its launch cost matters.
AMP_KERNEL(saxpy3, amp::index<1> i, amp::array_view<const float, 1> x,
           amp::array_view<const float, 1> y, amp::array_view<float, 1> z)
{
    z[i] = 2.0f * x[i] + y[i];
}
