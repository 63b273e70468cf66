// matmul.hip — C = A * B (row-major floats, A MxK, B KxN) in the study's variants: simple, tiled 16x16 with tile_static and two barriers a step, and a tuned register-blocked kernel.

#if defined(AMP_CPU)
#define MM_UNROLL _Pragma("GCC unroll 8")
#else
#define MM_UNROLL _Pragma("unroll")
#endif

// Simple model: one thread per element of C.
AMP_KERNEL(matmul_simple, amp::index<2> idx, amp::array_view<const float, 2> A,
           amp::array_view<const float, 2> B, amp::array_view<float, 2> C)
{
    const int K = A.extent[1];
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) sum += A(idx[0], k) * B(k, idx[1]);
    C[idx] = sum;
}

// Tiled 16x16 (the articles' kernel), launched on C's padded extent: each
// step stages a 16x16 block of A and of B in tile_static memory; one barrier
// before the products, one after so the next step's loads do not overwrite
// what slower threads still read.
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

// Tuned: register blocking. A 16x16 thread tile computes a 128x128 block of
// C; each thread owns 8x8 outputs (rows ty*4+{0..3} and 64+ty*4+{0..3},
// columns tx*4+{0..3} and 64+tx*4+{0..3}, so its tile_static reads are
// contiguous groups of four, conflict-free). K advances in panels of 8: a
// 128x8 panel of A (stored transposed, rows padded to 132 against bank
// conflicts) and an 8x128 panel of B, double-buffered in tile_static memory
// so one barrier a panel suffices, the next panel's global loads in flight
// while this one is multiplied. Launch on extent (ceil(M/128)*16,
// ceil(N/128)*16); edge blocks and a K tail take guarded loads and stores.
#define MM_BM 128
#define MM_BN 128
#define MM_BK 8
#define MM_LDA 132
AMP_TILED_KERNEL(matmul_tuned, amp::tiled_index<16, 16> tidx,
                 amp::array_view<const float, 2> A, amp::array_view<const float, 2> B,
                 amp::array_view<float, 2> C)
{
    tile_static float As[2][MM_BK][MM_LDA] __attribute__((aligned(16)));
    tile_static float Bs[2][MM_BK][MM_BN] __attribute__((aligned(16)));
    const int M = C.extent[0], N = C.extent[1], K = A.extent[1];
    const int m0 = tidx.tile[0] * MM_BM, n0 = tidx.tile[1] * MM_BN;
    const int ty = tidx.local[0], tx = tidx.local[1];
    const int tid = ty * 16 + tx;
    // Panel loads: A rows a_row + 32*i at column a_col; B row b_row + 2*i at
    // column b_col (a warp reads 128 contiguous bytes of B).
    const int a_row = tid >> 3, a_col = tid & 7;
    const int b_row = tid >> 7, b_col = tid & 127;
    const bool full = m0 + MM_BM <= M && n0 + MM_BN <= N;
    const bool fast = full && (K % MM_BK) == 0;

    float ra[4], rb[4];
    float acc[8][8];
    MM_UNROLL for (int i = 0; i < 8; ++i)
        MM_UNROLL for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

    // Load panel k0 into ra/rb.
#define MM_LOAD(k0)                                                                      \
    if (fast) {                                                                          \
        MM_UNROLL for (int i = 0; i < 4; ++i) ra[i] = A(m0 + a_row + 32 * i, (k0) + a_col); \
        MM_UNROLL for (int i = 0; i < 4; ++i) rb[i] = B((k0) + b_row + 2 * i, n0 + b_col);  \
    } else {                                                                             \
        MM_UNROLL for (int i = 0; i < 4; ++i) {                                          \
            const int r = m0 + a_row + 32 * i, k = (k0) + a_col;                        \
            ra[i] = (r < M && k < K) ? A(r, k) : 0.0f;                                   \
        }                                                                                \
        MM_UNROLL for (int i = 0; i < 4; ++i) {                                          \
            const int k = (k0) + b_row + 2 * i, c = n0 + b_col;                          \
            rb[i] = (k < K && c < N) ? B(k, c) : 0.0f;                                   \
        }                                                                                \
    }
#define MM_STORE(buf)                                                                    \
    MM_UNROLL for (int i = 0; i < 4; ++i) As[buf][a_col][a_row + 32 * i] = ra[i];        \
    MM_UNROLL for (int i = 0; i < 4; ++i) Bs[buf][b_row + 2 * i][b_col] = rb[i];

    MM_LOAD(0)
    MM_STORE(0)
    tidx.barrier.wait();
    int cur = 0;
    for (int k0 = 0; k0 < K; k0 += MM_BK) {
        const bool more = k0 + MM_BK < K;
        if (more) { MM_LOAD(k0 + MM_BK) }
        MM_UNROLL for (int k = 0; k < MM_BK; ++k) {
            float a[8], b[8];
            MM_UNROLL for (int i = 0; i < 4; ++i) {
                a[i] = As[cur][k][ty * 4 + i];
                a[4 + i] = As[cur][k][64 + ty * 4 + i];
                b[i] = Bs[cur][k][tx * 4 + i];
                b[4 + i] = Bs[cur][k][64 + tx * 4 + i];
            }
            MM_UNROLL for (int i = 0; i < 8; ++i)
                MM_UNROLL for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
        }
        if (more) { MM_STORE(cur ^ 1) }
        tidx.barrier.wait();
        cur ^= 1;
    }
#undef MM_LOAD
#undef MM_STORE

    MM_UNROLL for (int i = 0; i < 8; ++i) {
        const int r = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
        MM_UNROLL for (int j = 0; j < 8; ++j) {
            const int c = n0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + (j - 4));
            if (full || (r < M && c < N)) C(r, c) = acc[i][j];
        }
    }
}
