// barrier.hip — kernels of test_barrier.c: each tile_barrier variant and each free fence in a producer/consumer pattern whose answer is wrong without the barrier (including on the CPU fiber scheduler, where work-item 0 would run ahead).

// Three phases through tile_static, each needing the barrier before it:
// reverse the tile, rewrite the slots, then read a rotated neighbour.
// WAIT is the barrier statement under test.
#define TS_PHASES(t, in, out, WAIT)                                   \
    tile_static int buf[64];                                          \
    const int l = t.local[0];                                         \
    buf[l] = in[t.global];                                            \
    WAIT;                                                             \
    const int a = buf[63 - l];                                        \
    WAIT;                                                             \
    buf[l] = a * 3 + l;                                               \
    WAIT;                                                             \
    out[t.global] = buf[(l + 5) % 64] - a;

AMP_TILED_KERNEL(bar_wait, amp::tiled_index<64> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out)
{
    TS_PHASES(t, in, out, t.barrier.wait())
}

AMP_TILED_KERNEL(bar_wait_tsfence, amp::tiled_index<64> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out)
{
    TS_PHASES(t, in, out, t.barrier.wait_with_tile_static_memory_fence())
}

AMP_TILED_KERNEL(bar_wait_allfence, amp::tiled_index<64> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out, amp::array_view<int, 1> scratch)
{
    // through tile_static and through global memory, one barrier for both
    tile_static int buf[64];
    const int l = t.local[0];
    const int o = t.tile_origin[0];
    buf[l] = in[t.global];
    scratch[t.global] = in[t.global] * 7 + 1;
    t.barrier.wait_with_all_memory_fence();
    out[t.global] = buf[63 - l] + scratch[o + (l + 9) % 64];
}

// Through global memory: each work-item writes its slot of scratch, then
// reads the slot of the work-item mirrored in its tile.
AMP_TILED_KERNEL(bar_wait_globalfence, amp::tiled_index<64> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out, amp::array_view<int, 1> scratch)
{
    const int l = t.local[0];
    const int o = t.tile_origin[0];
    scratch[t.global] = in[t.global] * 7 + 1;
    t.barrier.wait_with_global_memory_fence();
    const int a = scratch[o + 63 - l];
    t.barrier.wait_with_global_memory_fence();
    scratch[t.global] = a - l;
    t.barrier.wait_with_global_memory_fence();
    out[t.global] = scratch[o + (l + 5) % 64] + a;
}

// Free fences, each followed by a plain barrier, same phases.
AMP_TILED_KERNEL(fence_tile_static, amp::tiled_index<64> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out)
{
    TS_PHASES(t, in, out, (amp::tile_static_memory_fence(t.barrier), t.barrier.wait()))
}

AMP_TILED_KERNEL(fence_global, amp::tiled_index<64> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out, amp::array_view<int, 1> scratch)
{
    const int l = t.local[0];
    const int o = t.tile_origin[0];
    scratch[t.global] = in[t.global] * 7 + 1;
    amp::global_memory_fence(t.barrier);
    t.barrier.wait();
    const int a = scratch[o + 63 - l];
    amp::global_memory_fence(t.barrier);
    t.barrier.wait();
    scratch[t.global] = a - l;
    amp::global_memory_fence(t.barrier);
    t.barrier.wait();
    out[t.global] = scratch[o + (l + 5) % 64] + a;
}

AMP_TILED_KERNEL(fence_all, amp::tiled_index<64> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out, amp::array_view<int, 1> scratch)
{
    tile_static int buf[64];
    const int l = t.local[0];
    const int o = t.tile_origin[0];
    buf[l] = in[t.global];
    scratch[t.global] = in[t.global] * 7 + 1;
    amp::all_memory_fence(t.barrier);
    t.barrier.wait();
    out[t.global] = buf[63 - l] + scratch[o + (l + 9) % 64];
}

// A 2-D tile (8x8): transpose within the tile through tile_static, several
// rounds, a barrier between every write and read phase.
AMP_TILED_KERNEL(bar_rounds2d, amp::tiled_index<8, 8> t, amp::array_view<const int, 2> in,
                 amp::array_view<int, 2> out, int rounds)
{
    tile_static int s[8][8];
    const int r = t.local[0], c = t.local[1];
    int v = in[t.global];
    for (int k = 0; k < rounds; ++k) {
        s[r][c] = v;
        t.barrier.wait();
        v = s[c][r] + s[(r + 1) % 8][c] + k;
        t.barrier.wait();
    }
    out[t.global] = v;
}
