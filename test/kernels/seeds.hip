// seeds.hip — the seed articles' kernels: transpose (tiled, even and padded),
// tiled 16x16 matrix multiply, simple matrix multiply, vector add, and the
// tile_barrier producer/consumer loop.
AMP_TILED_KERNEL(transpose_tiled_even, amp::tiled_index<16, 16> tidx,
                 amp::array_view<const float, 2> A, amp::array_view<float, 2> At)
{
    tile_static float t1[16][16];
    t1[tidx.local[1]][tidx.local[0]] = A[tidx.global];
    tidx.barrier.wait();
    amp::index<2> dst = amp::index<2>(tidx.tile_origin[1], tidx.tile_origin[0]) + tidx.local;
    At[dst] = t1[tidx.local[0]][tidx.local[1]];
}

AMP_TILED_KERNEL(transpose_tiled_pad, amp::tiled_index<16, 16> tidx,
                 amp::array_view<const float, 2> A, amp::array_view<float, 2> At)
{
    tile_static float t1[16][16];
    t1[tidx.local[1]][tidx.local[0]] = amp::guarded_read(A, tidx.global);
    tidx.barrier.wait();
    amp::index<2> dst = amp::index<2>(tidx.tile_origin[1], tidx.tile_origin[0]) + tidx.local;
    amp::guarded_write(At, dst, t1[tidx.local[0]][tidx.local[1]]);
}

AMP_TILED_KERNEL(matmul_tiled16, amp::tiled_index<16, 16> tidx,
                 amp::array_view<const float, 2> A, amp::array_view<const float, 2> B,
                 amp::array_view<float, 2> C)
{
    tile_static float As[16][16];
    tile_static float Bs[16][16];
    const int row = tidx.local[0], col = tidx.local[1];
    const int K = A.extent[1];
    float sum = 0.0f;
    for (int k0 = 0; k0 < K; k0 += 16) {
        As[row][col] = amp::guarded_read(A, amp::index<2>(tidx.global[0], k0 + col));
        Bs[row][col] = amp::guarded_read(B, amp::index<2>(k0 + row, tidx.global[1]));
        tidx.barrier.wait();
        for (int k = 0; k < 16; ++k) sum += As[row][k] * Bs[k][col];
        tidx.barrier.wait();
    }
    amp::guarded_write(C, tidx.global, sum);
}

AMP_KERNEL(matmul_simple, amp::index<2> idx, amp::array_view<const float, 2> A,
           amp::array_view<const float, 2> B, amp::array_view<float, 2> C)
{
    float sum = 0.0f;
    for (int k = 0; k < A.extent[1]; ++k) sum += A(idx[0], k) * B(k, idx[1]);
    C[idx] = sum;
}

AMP_KERNEL(vector_add, amp::index<1> i, amp::array_view<const float, 1> a,
           amp::array_view<const float, 1> b, amp::array_view<float, 1> c)
{ c[i] = a[i] + b[i]; }

// Each step: every thread produces into tile_static, the tile waits, then
// each thread consumes its neighbour's value; a second barrier keeps the next
// step's writes from racing the reads.
AMP_TILED_KERNEL(barrier_loop, amp::tiled_index<256> tidx, amp::array_view<int, 1> data, int steps)
{
    tile_static int buf[256];
    int v = data[tidx.global];
    for (int s = 0; s < steps; ++s) {
        buf[tidx.local[0]] = v;
        tidx.barrier.wait();
        v += buf[(tidx.local[0] + 1) % 256];
        tidx.barrier.wait();
    }
    data[tidx.global] = v;
}
