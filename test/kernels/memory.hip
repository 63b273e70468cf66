// memory.hip — kernels of test_memory.c: small read/write, read-only and write-only kernels over rank 1-3 views, whose results are exact in float (power-of-two scales) so coherence is checked bit for bit.

AMP_KERNEL(mem_scale1, amp::index<1> i, amp::array_view<float, 1> v)
{
    v[i] = v[i] * 2.0f + 1.0f;
}

AMP_KERNEL(mem_scale2, amp::index<2> i, amp::array_view<float, 2> v)
{
    v[i] = v[i] * 2.0f + 1.0f;
}

AMP_KERNEL(mem_scale3, amp::index<3> i, amp::array_view<float, 3> v)
{
    v[i] = v[i] * 2.0f + 1.0f;
}

// out = in * 4 - 0.5 (in only read).
AMP_KERNEL(mem_copy1, amp::index<1> i, amp::array_view<const float, 1> in,
           amp::array_view<float, 1> out)
{
    out[i] = in[i] * 4.0f - 0.5f;
}

// out = base + i, nothing read.
AMP_KERNEL(mem_fill1, amp::index<1> i, amp::array_view<float, 1> out, float base)
{
    out[i] = base + (float)i[0];
}
