// trace.hip — kernels of test/trace_helper.c, the fixed workload test_trace.c traces: a simple launch over views, a tiled one, and one over an array.
AMP_KERNEL(trace_scale, amp::index<1> i, amp::array_view<const float, 1> x, amp::array_view<float, 1> y, float a)
{
    y[i] = a * x[i];
}

AMP_TILED_KERNEL(trace_tile_flip, amp::tiled_index<64> t, amp::array_view<float, 1> z)
{
    z[t.global] = 1.0f - z[t.global];
}

AMP_KERNEL(trace_add_one, amp::index<2> ij, amp::array<float, 2> a)
{
    a[ij] += 1.0f;
}
