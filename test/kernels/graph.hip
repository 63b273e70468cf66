// graph.hip — kernels of test_graph.c: exact float and integer updates whose results after n replays are known, a scalar read from a 1-element array, a tiled kernel with tile_static, a rotation whose every element is written by another tile of the launch before, a kernel that reads out of bounds when asked (checked with AMP_DEBUG=1 on the CPU accelerator), one that writes through a raw address (a graph that uses no view), and one that ends when the host lets it (a flag in host memory).

// c = a * 0.5 + b (exact in float for the values the tests use: halving and
// adding small dyadic numbers).
AMP_KERNEL(graph_step, amp::index<1> i, amp::array_view<const float, 1> a, amp::array_view<const float, 1> b,
           amp::array_view<float, 1> c)
{
    c[i] = a[i] * 0.5f + b[i];
}

// y += a * x (a: a value fixed at recording).
AMP_KERNEL(graph_axpy, amp::index<1> i, amp::array_view<float, 1> y, amp::array_view<const float, 1> x, float a)
{
    y[i] += a * x[i];
}

// x += 1, and n[0] counts the launches (one work-item adds).
AMP_KERNEL(graph_inc, amp::index<1> i, amp::array_view<int, 1> x, amp::array<int, 1> n)
{
    x[i] += 1;
    if (i[0] == 0) n[0] += 1;
}

// y *= s[0]: a scalar that changes between replays lives in an array.
AMP_KERNEL(graph_scale, amp::index<1> i, amp::array_view<float, 1> y, amp::array<const float, 1> s)
{
    y[i] *= s[0];
}

// s[0] += 1.
AMP_KERNEL(graph_bump, amp::index<1> i, amp::array<float, 1> s)
{
    s[0] += 1.0f;
}

// Each tile's sum of in, into out at the tile's first element; the other
// elements of the tile get their own input (tile_static and a barrier).
AMP_TILED_KERNEL(graph_tile_sum, amp::tiled_index<64> t, amp::array_view<const int, 1> in, amp::array_view<int, 1> out)
{
    tile_static int s[64];
    s[t.local[0]] = in[t.global];
    t.barrier.wait();
    if (t.local[0] == 0) {
        int sum = 0;
        for (int k = 0; k < 64; ++k) sum += s[k];
        out[t.global] = sum;
    } else {
        out[t.global] = s[t.local[0]];
    }
}

// v[at] = 1 (at outside v: AMP_DEBUG=1 fails the launch on the CPU).
AMP_KERNEL(graph_poke, amp::index<1> i, amp::array_view<int, 1> v, int at)
{
    v[at] = 1;
}

// dst[i] = src[(i + shift) % n] + 1: every element reads one that another
// tile of the launch before wrote (a replay that let a launch read before
// the one before it finished would see old values).
AMP_KERNEL(graph_rotate, amp::index<1> i, amp::array_view<const int, 1> src, amp::array_view<int, 1> dst, int shift)
{
    int n = dst.get_extent()[0];
    dst[i] = src[(i[0] + shift) % n] + 1;
}

// p[i] += 1 through a raw address (addr: an array's native handle), so a
// graph of it uses no view or array and takes no storage's lock.
AMP_KERNEL(graph_raw_inc, amp::index<1> i, unsigned long long addr)
{
    int *p = reinterpret_cast<int *>(addr);
    p[i[0]] += 1;
}

// v[i] = value once *gate (a host int's address) is not 0: a launch that
// ends when the host lets it (the CPU accelerator's only).
AMP_KERNEL(graph_gated_set, amp::index<4> i, amp::array_view<int, 4> v, unsigned long long gate, int value)
{
    volatile int *g = reinterpret_cast<volatile int *>(gate);
    while (!*g) {
    }
    v[i] = value;
}
