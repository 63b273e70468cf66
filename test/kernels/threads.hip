// threads.hip — kernels of test_threads.c: a tiny read-modify-write step many host threads launch, and a slower kernel for concurrent queues.

AMP_KERNEL(thr_step, amp::index<1> i, amp::array_view<unsigned, 1> v, unsigned k)
{
    v[i] = v[i] * 3u + k + (unsigned)i[0];
}

AMP_KERNEL(thr_slow, amp::index<1> i, amp::array_view<unsigned, 1> out, int iters, unsigned seed)
{
    unsigned x = seed ^ ((unsigned)i[0] * 2654435761u);
    for (int k = 0; k < iters; ++k) x = x * 1664525u + 1013904223u;
    out[i] = x;
}
