// async.hip — kernels of test_async.c: a deliberately slow integer kernel (exact on every accelerator) and a tiled tile-reversal, for futures and queue waits.

// iters steps of a 32-bit LCG seeded by the index and seed.
AMP_KERNEL(slow_lcg, amp::index<1> i, amp::array_view<unsigned, 1> out, int iters, unsigned seed)
{
    unsigned x = seed ^ ((unsigned)i[0] * 2654435761u);
    for (int k = 0; k < iters; ++k) x = x * 1664525u + 1013904223u;
    out[i] = x;
}

AMP_TILED_KERNEL(async_reverse, amp::tiled_index<32> t, amp::array_view<const int, 1> in,
                 amp::array_view<int, 1> out)
{
    tile_static int s[32];
    s[t.local[0]] = in[t.global];
    t.barrier.wait();
    out[t.global] = s[31 - t.local[0]];
}
