// faults.hip — kernels of test_faults.c: a write through a wild pointer far outside a view (a device fault), and a harmless kernel.

AMP_KERNEL(wild_write, amp::index<1> i, amp::array_view<float, 1> v, long long offset)
{
    v.data()[offset + i[0]] = 1.0f;
}

AMP_KERNEL(fault_ok, amp::index<1> i, amp::array_view<float, 1> v)
{
    v[i] = v[i] + 1.0f;
}
