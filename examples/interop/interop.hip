// interop.hip — the hipamp kernels around a vendor BLAS call in blas_interop.c: fill the operands, then finish the product (bias and ReLU) where the library left it.

// A[i][k] = small exact values from the index, so the reference is exact
// enough to compare against in float.
AMP_KERNEL(fill_operand, amp::index<2> i, amp::array_view<float, 2> m, int salt)
{
    unsigned h = (unsigned)(i[0] * 7919 + i[1] * 104729 + salt * 31337);
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    m[i] = (float)((int)(h % 17u) - 8) * 0.125f;
}

AMP_KERNEL(bias_relu, amp::index<2> i, amp::array_view<float, 2> c, amp::array_view<const float, 1> bias)
{
    float v = c[i] + bias[i[1]];
    c[i] = v > 0.0f ? v : 0.0f;
}
