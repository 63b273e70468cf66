// launch.hip — kernels of test_launch.c: index encodings for ranks 1-4, in-kernel projection, section and operator(), scalar arguments, argument checking and amp::array parameters.

// FNV-1a over the index components: a different value for every index, and
// a value that changes when two components are swapped.
#define ENC_INDEX(h, idx, N)                                        \
    unsigned h = 2166136261u;                                       \
    for (int d_ = 0; d_ < (N); ++d_) h = (h ^ (unsigned)(idx)[d_]) * 16777619u;

AMP_KERNEL(enc1, amp::index<1> i, amp::array_view<unsigned, 1> out)
{
    ENC_INDEX(h, i, 1)
    out[i] = h;
}

AMP_KERNEL(enc2, amp::index<2> i, amp::array_view<unsigned, 2> out)
{
    ENC_INDEX(h, i, 2)
    out[i] = h;
}

AMP_KERNEL(enc3, amp::index<3> i, amp::array_view<unsigned, 3> out)
{
    ENC_INDEX(h, i, 3)
    out[i] = h;
}

AMP_KERNEL(enc4, amp::index<4> i, amp::array_view<unsigned, 4> out)
{
    ENC_INDEX(h, i, 4)
    out[i] = h;
}

// As enc1..enc3, and the work-item whose indices are all 0 also writes a
// scalar (a count): the pattern of a kernel that keeps a counter beside
// its field (the CPU accelerator runs that work-item of each row apart
// from the others, so that the test leaves their loop).
AMP_KERNEL(enc_first1, amp::index<1> i, amp::array_view<unsigned, 1> out, amp::array_view<int, 1> count, int add)
{
    if (i[0] == 0) count[0] += add;
    ENC_INDEX(h, i, 1)
    out[i] = h;
}

AMP_KERNEL(enc_first2, amp::index<2> i, amp::array_view<unsigned, 2> out, amp::array_view<int, 1> count, int add)
{
    if (i[0] == 0 && i[1] == 0) count[0] += add;
    ENC_INDEX(h, i, 2)
    out[i] = h;
}

AMP_KERNEL(enc_first3, amp::index<3> i, amp::array_view<unsigned, 3> out, amp::array_view<int, 1> count, int add)
{
    if (i[0] == 0 && i[1] == 0 && i[2] == 0) count[0] += add;
    ENC_INDEX(h, i, 3)
    out[i] = h;
}

// operator()(i, j[, k]) on read and write, mixed with operator[](index).
AMP_KERNEL(paren2, amp::index<2> ij, amp::array_view<const float, 2> A,
           amp::array_view<float, 2> B)
{
    B(ij[0], ij[1]) = A(ij[0], ij[1]) * 2.0f + 1.0f;
}

AMP_KERNEL(paren3, amp::index<3> i, amp::array_view<const int, 3> A, amp::array_view<int, 3> B)
{
    B(i[0], i[1], i[2]) = A(i[0], i[1], i[2]) * 5 + i[0] - i[2];
}

// Projection operator[](int): read a row of a rank-2 view as a rank-1 view.
AMP_KERNEL(row_sums, amp::index<1> r, amp::array_view<const float, 2> A,
           amp::array_view<float, 1> sums)
{
    amp::array_view<const float, 1> row = A[r[0]];
    float s = 0.0f;
    for (int j = 0; j < row.extent[0]; ++j) s += row[j] * (float)(j % 7 + 1);
    sums[r] = s;
}

// Projection on the written side: B[i][j] = ...
AMP_KERNEL(proj_write, amp::index<2> ij, amp::array_view<const float, 2> A,
           amp::array_view<float, 2> B)
{
    B[ij[0]][ij[1]] = A[ij[0]][ij[1]] * 4.0f - (float)ij[1];
}

// Projection of a rank-3 view to a plane, then operator() on the plane.
AMP_KERNEL(proj3, amp::index<3> i, amp::array_view<const int, 3> A, amp::array_view<int, 3> B)
{
    amp::array_view<const int, 2> plane = A[i[0]];
    amp::array_view<int, 2> out = B[i[0]];
    out(i[1], i[2]) = plane(i[1], i[2]) * 3 + i[0];
}

// The three section forms in kernel code; out is (3, rows, cols), ext gets
// the extents the sections report.
AMP_KERNEL(sec_forms, amp::index<2> ij, amp::array_view<const float, 2> A,
           amp::array_view<float, 3> out, amp::array_view<int, 1> ext, int r0, int c0)
{
    amp::extent<2> e(out.extent[1], out.extent[2]);
    amp::array_view<const float, 2> s1 = A.section(amp::index<2>(r0, c0), e);
    amp::array_view<const float, 2> s2 = A.section(amp::index<2>(r0, c0));
    amp::array_view<const float, 2> s3 = A.section(e);
    out(0, ij[0], ij[1]) = s1[ij];
    out(1, ij[0], ij[1]) = s2[ij];
    out(2, ij[0], ij[1]) = s3[ij];
    if (ij[0] == 0 && ij[1] == 0) {
        ext[0] = s1.extent[0];
        ext[1] = s1.extent[1];
        ext[2] = s2.extent[0];
        ext[3] = s2.extent[1];
        ext[4] = s3.extent[0];
        ext[5] = s3.extent[1];
    }
}

// Scalars of every kind interleaved with views (pack alignment).
AMP_KERNEL(scalars, amp::index<1> i, int a, amp::array_view<int, 1> oi, double b, float c,
           amp::array_view<double, 1> od, long long d, unsigned e,
           amp::array_view<float, 1> of, int f, amp::array_view<long long, 1> ol, float g,
           amp::array_view<unsigned, 1> ou, double h)
{
    // every thread writes its own slot: the value plus its index, so all
    // threads are seen receiving the same arguments
    int k = i[0];
    oi(2 * k) = a + k;
    oi(2 * k + 1) = f - k;
    od(2 * k) = b;
    od(2 * k + 1) = h;
    of(2 * k) = c;
    of(2 * k + 1) = g;
    ol(k) = d + k;
    ou(k) = e - (unsigned)k;
}

// The argument-checking target: y += a * x.
AMP_KERNEL(axpy, amp::index<1> i, float a, amp::array_view<const float, 1> x,
           amp::array_view<float, 1> y)
{
    y[i] = y[i] + a * x[i];
}

// amp::array parameters, and an array bound to an array_view parameter.
AMP_KERNEL(arr_scale, amp::index<1> i, amp::array<float, 1> a, float s)
{
    a[i] = a[i] * s + 1.0f;
}

AMP_KERNEL(view_scale, amp::index<1> i, amp::array_view<float, 1> a, float s)
{
    a[i] = a[i] * s + 1.0f;
}

AMP_KERNEL(arr2_from, amp::index<2> ij, amp::array<const int, 2> src, amp::array<int, 2> dst)
{
    dst[ij] = src[ij] * 2 + ij[0] * 1000 + ij[1];
}

// A section passed from the host: writes every element of the view it gets.
AMP_KERNEL(mark2, amp::index<2> ij, amp::array_view<int, 2> v, int base)
{
    v[ij] = base + ij[0] * 100 + ij[1];
}

// Stated block sizes (amp_launch_options): each work-item writes its index's
// encoding and counts itself, so an index run twice or never shows in cnt.
// Bounded to 1024-thread blocks (the largest any accelerator runs).
AMP_KERNEL_MAX_BLOCK(blk1, 1024)
AMP_KERNEL(blk1, amp::index<1> i, amp::array_view<unsigned, 1> out, amp::array_view<unsigned, 1> cnt)
{
    ENC_INDEX(h, i, 1)
    out[i] = h;
    amp::atomic_fetch_inc(&cnt[i]);
}

AMP_KERNEL_MAX_BLOCK(blk2, 1024)
AMP_KERNEL(blk2, amp::index<2> i, amp::array_view<unsigned, 2> out, amp::array_view<unsigned, 2> cnt)
{
    ENC_INDEX(h, i, 2)
    out[i] = h;
    amp::atomic_fetch_inc(&cnt[i]);
}

AMP_KERNEL_MAX_BLOCK(blk3, 1024)
AMP_KERNEL(blk3, amp::index<3> i, amp::array_view<unsigned, 3> out, amp::array_view<unsigned, 3> cnt)
{
    ENC_INDEX(h, i, 3)
    out[i] = h;
    amp::atomic_fetch_inc(&cnt[i]);
}

// A bound below the default: blocks of up to 96 threads.
AMP_KERNEL_MAX_BLOCK(blk1_96, 96)
AMP_KERNEL(blk1_96, amp::index<1> i, amp::array_view<unsigned, 1> out)
{
    out[i] = (unsigned)i[0] * 3u;
}

// The block the driver ran (GPU only: the CPU accelerator has no blocks and
// writes 0): blockDim x, y and z packed as x * 65536 + y * 256 + z.
AMP_KERNEL_MAX_BLOCK(blk_dim, 1024)
AMP_KERNEL(blk_dim, amp::index<2> i, amp::array_view<unsigned, 2> out)
{
#ifdef AMP_CPU
    out[i] = 0u;
#else
    out[i] = (unsigned)blockDim.x * 65536u + (unsigned)blockDim.y * 256u + (unsigned)blockDim.z;
#endif
}

// Over an extent of INT_MAX with a block that does not divide it, the last
// block's threads past the edge pass INT_MAX: none may run (flag[0]), and
// the last index must (flag[1]).
AMP_KERNEL_MAX_BLOCK(blk_edge, 1024)
AMP_KERNEL(blk_edge, amp::index<1> i, amp::array_view<int, 1> flag)
{
    if (i[0] < 0) flag[0] = 1;
    if (i[0] == 2147483646) flag[1] = 1;
}
