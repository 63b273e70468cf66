// conformance.hip — kernels of test_conformance.c (C++ AMP conformance on the host side: ranks above 4, views of
// other shapes, element access, views of arrays, empty extents). Results are exact integers.

template <int N> __device__ int conf_linear(const amp::index<N> &i, const amp::extent<N> &e)
{
    int k = 0;
    for (int d = 0; d < N; ++d) k = k * e[d] + i[d];
    return k;
}

// Every work-item writes its row-major number: a launch of rank N covers each index exactly once.
AMP_KERNEL(conf_iota1, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = conf_linear(i, v.extent); }
AMP_KERNEL(conf_iota2, amp::index<2> i, amp::array_view<int, 2> v) { v[i] = conf_linear(i, v.extent); }
AMP_KERNEL(conf_iota5, amp::index<5> i, amp::array_view<int, 5> v) { v[i] = conf_linear(i, v.extent); }
AMP_KERNEL(conf_iota6, amp::index<6> i, amp::array_view<int, 6> v) { v[i] = conf_linear(i, v.extent); }
AMP_KERNEL(conf_iota7, amp::index<7> i, amp::array_view<int, 7> v) { v[i] = conf_linear(i, v.extent); }
AMP_KERNEL(conf_iota8, amp::index<8> i, amp::array_view<int, 8> v) { v[i] = conf_linear(i, v.extent); }

// v += 1 over the launch (rank 1, 2 and 6).
AMP_KERNEL(conf_inc1, amp::index<1> i, amp::array_view<int, 1> v) { v[i] += 1; }
AMP_KERNEL(conf_inc2, amp::index<2> i, amp::array_view<int, 2> v) { v[i] += 1; }
AMP_KERNEL(conf_inc6, amp::index<6> i, amp::array_view<int, 6> v) { v[i] += 1; }
// The same through an array argument.
AMP_KERNEL(conf_array_inc1, amp::index<1> i, amp::array<int, 1> a) { a[i] += 1; }

// out = in + 1000, in only read.
AMP_KERNEL(conf_plus1000, amp::index<1> i, amp::array_view<const int, 1> in, amp::array_view<int, 1> out)
{
    out[i] = in[i] + 1000;
}

// v = value, nothing read.
AMP_KERNEL(conf_fill1, amp::index<1> i, amp::array_view<int, 1> v, int value) { v[i] = value; }
AMP_KERNEL(conf_fill2, amp::index<2> i, amp::array_view<int, 2> v, int value) { v[i] = value; }

// Flip the sign bit of 32-bit words (a float view reinterpreted as unsigned).
AMP_KERNEL(conf_flip_sign, amp::index<1> i, amp::array_view<unsigned, 1> v) { v[i] ^= 0x80000000u; }
// 16-byte elements: the two middle ints of each swap.
struct conf_quad { int a, b, c, d; };
AMP_KERNEL(conf_swap_mid, amp::index<1> i, amp::array_view<conf_quad, 1> v)
{
    conf_quad q = v[i];
    int t = q.b;
    q.b = q.c;
    q.c = t;
    v[i] = q;
}

// Runs for any index of the launch: sets the flag (an empty launch must leave it alone).
AMP_KERNEL(conf_touch1, amp::index<1> i, amp::array_view<int, 1> flag) { flag[0] = 1; }
AMP_KERNEL(conf_touch2, amp::index<2> i, amp::array_view<int, 1> flag) { flag[0] = 1; }
AMP_TILED_KERNEL(conf_touch_tiled, amp::tiled_index<4, 4> t, amp::array_view<int, 1> flag) { flag[0] = 1; }

// out = the extent of a view that may be empty (its descriptor must say 0 elements).
AMP_KERNEL(conf_extent_of, amp::index<1> i, amp::array_view<int, 1> out, amp::array_view<const int, 2> maybe_empty)
{
    out[i] = maybe_empty.extent[0] * 1000 + maybe_empty.extent[1];
}
