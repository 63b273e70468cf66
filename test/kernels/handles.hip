// handles.hip — kernels of test_handles.c: a view and an array step for stale-handle checks and launches racing a program's destroy, a slow kernel that holds a GPU queue, and (CPU accelerator only) a kernel that spins until the host sets a flag, for time-outs and the queue bound.

AMP_KERNEL(h_step, amp::index<1> i, amp::array_view<int, 1> v, int k)
{
    v[i] = v[i] + k;
}

AMP_KERNEL(h_arr_step, amp::index<1> i, amp::array<int, 1> a, int k)
{
    a[i] = a[i] + k;
}

// iters steps of a 32-bit LCG: long enough on a GPU to be still running
// when the host asks.
AMP_KERNEL(h_slow, amp::index<1> i, amp::array_view<unsigned, 1> out, int iters)
{
    unsigned x = (unsigned)i[0] * 2654435761u;
    for (int k = 0; k < iters; ++k) x = x * 1664525u + 1013904223u;
    out[i] = x;
}

// A GPU's: addr is the device's address of a host int mapped for it
// (test_async); the kernel gives up after spins reads of it and leaves -1,
// so that a flag whose store never reached the device ends the test, not
// the machine's GPU.
AMP_KERNEL(h_wait_flag_bounded, amp::index<1> i, amp::array_view<int, 1> out, unsigned long long addr,
           long long spins)
{
    volatile int *flag = reinterpret_cast<volatile int *>(addr);
    long long n = 0;
    while (!*flag && ++n < spins) {
    }
    out[i] = *flag ? out[i] + 1 : -1;
}

// CPU accelerator only: addr is a host int the test sets to release the
// kernel (the kernel runs in the test's process); out counts the releases.
AMP_KERNEL(h_wait_flag, amp::index<1> i, amp::array_view<int, 1> out, unsigned long long addr)
{
    volatile int *flag = reinterpret_cast<volatile int *>(addr);
    while (!*flag) {
    }
    out[i] = out[i] + 1;
}
