// saxpy.hip — the Makefile example's kernel: y = a * x + y, embedded into the program by hipamp-embed.
AMP_KERNEL(saxpy, amp::index<1> i, float a, amp::array_view<const float, 1> x, amp::array_view<float, 1> y)
{
    y[i] = a * x[i] + y[i];
}
