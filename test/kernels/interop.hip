// interop.hip — kernels of test_interop.c: read one buffer, write another, so that data written or read by the vendor runtime directly can be checked.
AMP_KERNEL(interop_add, amp::index<1> i, amp::array_view<const unsigned, 1> in, amp::array_view<unsigned, 1> out,
           unsigned k)
{
    out[i] = in[i] + k;
}

AMP_KERNEL(interop_scale_inplace, amp::index<1> i, amp::array_view<unsigned, 1> v)
{
    v[i] = v[i] * 3u + 1u;
}
