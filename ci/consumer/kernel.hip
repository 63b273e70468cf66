// kernel.hip — the consumer's kernel, embedded by hipamp_embed().
AMP_KERNEL(square, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = v[i] * v[i]; }
