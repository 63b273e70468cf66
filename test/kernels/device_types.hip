// device_types.hip — kernels of test_device_lang.c for C++ AMP's value types in kernels: index/extent arithmetic, tiled_extent, array projections, reinterpret_as/view_as, views of kernel memory, norm/unorm and their vectors, and ranks above 4.

// ------------------------------------------------------ index and extent
// Writes rank-3 results as 3 ints each; test_device_lang.c computes the same
// from the C++ AMP specification's definitions. in row: a0 a1 a2 b0 b1 b2 s
// (b and s nonzero: they are divisors).
#define IX_PUT(k, x)                                                                             \
    {                                                                                            \
        const auto put_ = (x);                                                                   \
        for (int d = 0; d < 3; ++d) out(n, 3 * (k) + d) = put_[d];                               \
    }
AMP_KERNEL(index_extent_ops, amp::index<1> i, amp::array_view<const int, 2> in,
           amp::array_view<int, 2> out)
{
    const int n = i[0];
    int a[3], b[3];
    for (int d = 0; d < 3; ++d) {
        a[d] = in(n, d);
        b[d] = in(n, 3 + d);
    }
    const int s = in(n, 6);
    const amp::index<3> x(a);   // from const int[]
    const amp::extent<3> e(b);  // from const int[]
    const amp::extent<3> f(a);
    IX_PUT(0, x)
    IX_PUT(1, e)
    amp::index<3> t = x;
    IX_PUT(2, ++t)
    IX_PUT(3, t++)
    IX_PUT(4, t)
    IX_PUT(5, --t)
    IX_PUT(6, t--)
    IX_PUT(7, t)
    amp::extent<3> u = e;
    IX_PUT(8, ++u)
    IX_PUT(9, u++)
    IX_PUT(10, u)
    IX_PUT(11, --u)
    IX_PUT(12, u--)
    IX_PUT(13, u)
    // Scalar on either side.
    IX_PUT(14, x + s)
    IX_PUT(15, s + x)
    IX_PUT(16, x - s)
    IX_PUT(17, s - x)
    IX_PUT(18, x * s)
    IX_PUT(19, s * x)
    const amp::index<3> nz(b); // nonzero components: a divisor
    IX_PUT(20, x / s)
    IX_PUT(21, s / nz)
    IX_PUT(22, x % s)
    IX_PUT(23, s % nz)
    IX_PUT(24, e + s)
    IX_PUT(25, s + e)
    IX_PUT(26, e - s)
    IX_PUT(27, s - e)
    IX_PUT(28, e * s)
    IX_PUT(29, s * e)
    IX_PUT(30, e / s)
    IX_PUT(31, s / e)
    IX_PUT(32, e % s)
    IX_PUT(33, s % e)
    // extent with extent and index.
    IX_PUT(34, e + f)
    IX_PUT(35, e - f)
    u = e;
    u += f;
    IX_PUT(36, u)
    u -= e;
    IX_PUT(37, u)
    IX_PUT(38, e + x)
    IX_PUT(39, e - x)
    // Compound assignments with a scalar.
    u = e;
    u += s;
    IX_PUT(40, u)
    u -= 2 * s;
    IX_PUT(41, u)
    u *= s;
    IX_PUT(42, u)
    u /= 3;
    IX_PUT(43, u)
    u %= 5;
    IX_PUT(44, u)
    t = x;
    t += s;
    t *= 3;
    t -= 1;
    t /= s;
    t %= 7;
    IX_PUT(45, t)
    out(n, 3 * 46) = (x == amp::index<3>(a[0], a[1], a[2])) + 2 * (x != x + 1) + 4 * (e == f) + 8 * (e != f);
    out(n, 3 * 46 + 1) = (int)e.size();
    out(n, 3 * 46 + 2) = e.contains(x);
}

// ---------------------------------------------------------- tiled_extent
// One item per extent row (e0 e1 e2); results in out(n, 0..K-1).
AMP_KERNEL(tiled_extent_ops, amp::index<1> i, amp::array_view<const int, 2> in,
           amp::array_view<int, 2> out)
{
    const int n = i[0];
    const amp::extent<3> e(in(n, 0), in(n, 1), in(n, 2));
    const amp::tiled_extent<2, 4, 8> t = e.tile<2, 4, 8>();
    const amp::tiled_extent<2, 4, 8> p = t.pad(), r = t.truncate();
    int k = 0;
    for (int d = 0; d < 3; ++d) out(n, k++) = t[d];
    for (int d = 0; d < 3; ++d) out(n, k++) = p[d];
    for (int d = 0; d < 3; ++d) out(n, k++) = r[d];
    out(n, k++) = (int)p.size();
    out(n, k++) = (int)r.size();
    out(n, k++) = t.tile_dim0 * 10000 + t.tile_dim1 * 100 + t.tile_dim2;
    const amp::extent<3> te = t.get_tile_extent();
    for (int d = 0; d < 3; ++d) out(n, k++) = te[d];
    // Ranks 1 and 2, on the last dimensions.
    const amp::extent<1> e1(in(n, 2));
    const amp::tiled_extent<16> t1 = e1.tile<16>();
    out(n, k++) = t1.pad()[0];
    out(n, k++) = t1.truncate()[0];
    out(n, k++) = t1.tile_dim0 + 1000 * (t1.tile_dim1 + t1.tile_dim2) + 100000 * t1.rank;
    const amp::extent<2> e2(in(n, 1), in(n, 2));
    const amp::tiled_extent<3, 5> t2 = e2.tile<3, 5>();
    out(n, k++) = t2.pad()[0];
    out(n, k++) = t2.pad()[1];
    out(n, k++) = t2.truncate()[0];
    out(n, k++) = t2.truncate()[1];
    out(n, k++) = (int)t2.pad().size();
    // A tiled extent is a plain value: a 1000 x 1000 tile is fine here.
    const amp::tiled_extent<1000, 1000> big = amp::extent<2>(1500, 2500).tile<1000, 1000>();
    out(n, k++) = big.pad()[0] + big.pad()[1];
    out(n, k++) = (t == t.pad()) + 2 * (t != t.truncate()) + 4 * (p == p.pad()) + 8 * (r == r.truncate());
    // tiled_extent from an extent; its extent base.
    const amp::tiled_extent<2, 4, 8> c(e);
    const amp::extent<3> back = c;
    out(n, k++) = (back == e) + 2 * (amp::tiled_extent<2, 4, 8>() == amp::extent<3>());
}
static_assert(amp::tiled_extent<4>::rank == 1, "tiled_extent rank");
static_assert(amp::tiled_extent<4, 2>::rank == 2, "tiled_extent rank");
static_assert(amp::tiled_extent<4, 2, 1>::rank == 3, "tiled_extent rank");

// Extent arithmetic at the limits of int and of unsigned long long; no
// memory is touched through the views (x is one double).
AMP_KERNEL(extent_limits, amp::index<1> i, amp::array_view<long long, 1> out)
{
    if (i[0] != 0) return;
    int k = 0;
    out[k++] = amp::extent<1>(2147483646).tile<2147483646>().pad()[0];
    out[k++] = amp::extent<1>(2147483647).tile<2147483647>().pad()[0];
    out[k++] = amp::extent<1>(2147482624).tile<1024>().pad()[0];
    out[k++] = amp::extent<1>(2147482625).tile<1024>().pad()[0]; // 2^31: not an int
    out[k++] = amp::extent<1>(2147483647).tile<2>().pad()[0];     // 2^31
    const amp::tiled_extent<4, 2> p2 = amp::extent<2>(5, 2147483647).tile<4, 2>().pad();
    out[k++] = p2[0];
    out[k++] = p2[1];
    const amp::tiled_extent<4, 2, 8> p3 = amp::extent<3>(5, 3, 2147483640).tile<4, 2, 8>().pad();
    out[k++] = p3[0] * 10 + p3[1];
    out[k++] = p3[2];
    out[k++] = amp::extent<1>(2147483647).tile<1024>().truncate()[0];
    out[k++] = amp::extent<1>(2147483647).tile<2147483647>().truncate()[0];
    out[k++] = (long long)amp::extent<3>(4194304, 2097152, 2097152).size(); // 2^64
    out[k++] = (long long)amp::extent<3>(2147483647, 2147483647, 2).size();
    out[k++] = (long long)amp::extent<2>(-1, -1).size();
    out[k++] = (long long)amp::extent<3>(7, 0, -5).size();
    double x = 0;
    amp::array_view<double, 1> one(1, &x);
    out[k++] = one.view_as(amp::extent<3>(4194304, 2097152, 2097152)).extent[0];
    out[k++] = one.view_as(amp::extent<2>(-1, -1)).extent[0];
    out[k++] = amp::array_view<double, 1>(2147483647, &x).reinterpret_as<char>().extent[0];
    out[k++] = amp::array_view<double, 1>(268435456, &x).reinterpret_as<char>().extent[0];  // 2^31
    out[k++] = amp::array_view<double, 1>(268435455, &x).reinterpret_as<char>().extent[0];
    out[k++] = amp::array_view<char, 1>(2147483647, (char *)&x).reinterpret_as<double>().extent[0];
    out[k++] = k + 1; // the count, last
}

// ----------------------------------------------------------- projections
// out[n] for item n = (i, j, k) of the 3 x 4 x 5 array: the element through
// every spelling of projection, which must agree, plus the projected extents.
AMP_KERNEL(array_projections, amp::index<3> x, amp::array<const int, 3> arr,
           amp::array_view<const int, 4> v4, amp::array_view<int, 4> out)
{
    const int i = x[0], j = x[1], k = x[2];
    const int a = arr(i, j, k);
    out(i, j, k, 0) = arr(i)(j)(k) == a && arr(i)(j, k) == a && arr[i][j][k] == a && arr(i)[j](k) == a ? a : -1;
    out(i, j, k, 1) = arr(i).extent[0] * 100 + arr(i).extent[1] * 10 + arr(i)(j).extent[0];
    // A rank-4 view: v4(l) is rank 3, v4(l)(m) rank 2, ...
    const int l = (i + j + k) % v4.extent[0];
    const int b = v4(l, i, j, k);
    out(i, j, k, 2) = v4(l)(i)(j)(k) == b && v4(l)(i, j, k) == b && v4(l)(i)(j, k) == b ? b : -1;
    out(i, j, k, 3) = v4(l).extent[0] * 100 + v4(l)(i).extent[0] * 10 + v4(l)(i)(j).extent[0];
}

// ------------------------------------------------- reinterpret_as, view_as
// arr: a 6 x 8 float array; v: 48 ints (written through reinterpreted views).
// out(n, ...) per item n of 48.
AMP_KERNEL(view_shapes, amp::index<1> i, amp::array<float, 2> arr, amp::array_view<int, 1> v,
           amp::array_view<int, 2> out)
{
    const int n = i[0];
    // array of rank 2 as ints, rank 1: the bits of each float.
    amp::array_view<int, 1> bits = arr.reinterpret_as<int>();
    out(n, 0) = bits[n];
    out(n, 1) = bits.extent[0];
    // As float2: half as many elements.
    amp::array_view<amp::float_2, 1> pairs = arr.reinterpret_as<amp::float_2>();
    out(n, 2) = pairs.extent[0];
    out(n, 3) = n < 24 ? __float_as_int(pairs[n].y) : 0;
    // view_as: the 6 x 8 array as 4 x 3 x 4, row-major over the same elements.
    amp::array_view<float, 3> cube = arr.view_as(amp::extent<3>(4, 3, 4));
    out(n, 4) = __float_as_int(cube(n / 12, n / 4 % 3, n % 4));
    out(n, 5) = cube.extent[0] * 100 + cube.extent[1] * 10 + cube.extent[2];
    // A rank-1 view of 96 ints: its first 48 as a 6 x 8 matrix, its last 48
    // as shorts, written through those (each element through one type only:
    // C++'s aliasing rules).
    amp::array_view<int, 2> m = v.view_as(amp::extent<2>(6, 8));
    m(n / 8, n % 8) = 3 * n;
    amp::array_view<short, 1> halves = v.reinterpret_as<short>();
    out(n, 6) = halves.extent[0];
    // Little-endian (every target is): int 48 + n is shorts 96 + 2n (low)
    // and 97 + 2n (high).
    halves[96 + 2 * n] = (short)n;
    halves[97 + 2 * n] = (short)-n;
    // A shape with more elements than the view has: an empty view.
    out(n, 7) = (int)v.view_as(amp::extent<2>(10, 10)).extent.size() +
                10 * (int)arr.view_as(amp::extent<1>(49)).extent.size() +
                100 * (int)(v.view_as(amp::extent<1>(96)).extent.size() == 96);
    // const element types stay const.
    amp::array_view<const int, 1> cv = v;
    amp::array_view<const float, 1> cf = cv.reinterpret_as<float>();
    out(n, 8) = cf.extent[0];
}
static_assert(amp::detail::same<decltype(amp::array_view<const int, 1>().reinterpret_as<float>()),
                                amp::array_view<const float, 1>>::value,
              "reinterpret_as keeps const");
static_assert(amp::detail::same<decltype(amp::array<const float, 3>().reinterpret_as<int>()),
                                amp::array_view<const int, 1>>::value,
              "array<const T>::reinterpret_as gives const elements");

// A shape larger than its view: an empty view, every access outside it.
AMP_KERNEL(oversized_view_as, amp::index<1> i, amp::array_view<int, 1> v)
{
    amp::array_view<int, 2> m = v.view_as(amp::extent<2>(10, 10));
    m(i[0], 1) = 1;
}

// -------------------------------------------------- views of kernel memory
// C++ AMP's array_view(e0, T *src) over a local variable and a local array,
// array_view(extent, T *src) of rank 3, and a view of tile_static memory.
AMP_TILED_KERNEL(local_views, amp::tiled_index<32> t, amp::array_view<int, 2> out)
{
    const int n = t.global[0];
    int local = n;
    amp::array_view<int, 1> one(1, &local);
    one[0] += 1000;
    one(0) *= 2;
    out(n, 0) = local; // 2 * (n + 1000)
    int arr[24];
    amp::array_view<int, 1> lin(24, arr);
    for (int k = 0; k < 24; ++k) lin[k] = n + k;
    amp::array_view<int, 3> cube(amp::extent<3>(2, 3, 4), arr);
    out(n, 1) = cube(1, 2, 3) + cube(0, 1, 2) * 1000; // arr[23] + 1000 arr[6]
    amp::array_view<int, 2> mat(4, 6, arr);
    out(n, 2) = mat(3, 5) - mat(1, 0); // 23 - 6
    amp::array_view<const int, 3> c3(2, 3, 4, arr);
    out(n, 3) = c3[amp::index<3>(1, 0, 0)] + c3.extent[2] * 1000;
    tile_static int shared[32];
    amp::array_view<int, 1> sv(32, shared);
    sv[t.local[0]] = n * 3;
    t.barrier.wait();
    out(n, 4) = sv[31 - t.local[0]];
}

// ---------------------------------------------------------- norm, unorm
// For each input pair (x, y) (floats, some outside [-1, 1], NaN, infinities),
// 32 results; test_device_lang.c computes them from the clamping rules.
static_assert(sizeof(amp::norm) == 4 && sizeof(amp::unorm) == 4 && sizeof(amp::norm_4) == 16 &&
                  alignof(amp::norm_4) == 16 && sizeof(amp::unorm_3) == 12 && alignof(amp::unorm_2) == 8,
              "norm and unorm layouts");
static_assert(amp::detail::same<amp::short_vector<amp::norm, 4>::type, amp::norm_4>::value, "short_vector");
static_assert(amp::detail::same<amp::short_vector<amp::unorm, 1>::type, amp::unorm>::value, "short_vector");
static_assert(amp::detail::same<amp::graphics::short_vector<amp::graphics::unorm, 2>::type,
                                amp::graphics::unorm_2>::value,
              "short_vector in graphics");
static_assert(amp::detail::same<amp::short_vector_traits<amp::unorm_3>::value_type, amp::unorm>::value,
              "short_vector_traits::value_type");
static_assert(amp::short_vector_traits<amp::unorm_3>::size == 3, "short_vector_traits::size");
static_assert(amp::short_vector_traits<amp::norm>::size == 1, "short_vector_traits of a scalar");
static_assert(amp::detail::same<amp::short_vector_traits<amp::norm>::value_type, amp::norm>::value,
              "short_vector_traits of a scalar");
AMP_KERNEL(norm_ops, amp::index<1> i, amp::array_view<const float, 1> xs, amp::array_view<const float, 1> ys,
           amp::array_view<float, 2> out)
{
    using amp::norm;
    using amp::unorm;
    const int n = i[0];
    const float x = xs[i], y = ys[i];
    int k = 0;
    const norm nx(x), ny(y);
    const unorm ux(x), uy(y);
    out(n, k++) = nx;                  // 0: construction clamps
    out(n, k++) = ux;                  // 1
    out(n, k++) = norm((double)x * 3); // 2: from double: to float, then clamp
    out(n, k++) = unorm(n % 5 - 2);    // 3: from int
    out(n, k++) = norm((unsigned)(n % 3)); // 4: from unsigned
    out(n, k++) = nx + ny;             // 5: computed in float, clamped
    out(n, k++) = nx - ny;             // 6
    out(n, k++) = nx * ny;             // 7
    out(n, k++) = nx / ny;             // 8
    out(n, k++) = ux + uy;             // 9
    out(n, k++) = ux - uy;             // 10
    out(n, k++) = ux * uy;             // 11
    out(n, k++) = ux / uy;             // 12
    out(n, k++) = -nx;                 // 13
    norm a = nx;
    out(n, k++) = ++a;                 // 14
    out(n, k++) = a++;                 // 15
    out(n, k++) = a;                   // 16
    unorm b = ux;
    out(n, k++) = --b;                 // 17
    out(n, k++) = b--;                 // 18
    out(n, k++) = b;                   // 19
    a = nx;
    a += ny;
    a *= nx;
    out(n, k++) = a;                   // 20
    b = ux;
    b -= uy;
    b /= ux;
    out(n, k++) = b;                   // 21
    const norm fromu = ux;             // unorm -> norm, implicit
    out(n, k++) = fromu + norm();      // 22: default is 0
    out(n, k++) = (nx == ny) + 2 * (nx != ny) + 4 * (nx < ny) + 8 * (nx <= ny) + 16 * (nx > ny) + 32 * (nx >= ny) +
                  64 * (ux == uy) + 128 * (ux < uy); // 23
    // Vectors: component-wise, each component clamped.
    const amp::norm_4 v(x, y, -x, 2.0f * y);
    const amp::norm_4 w(y);
    const amp::norm_4 s = v + w;
    out(n, k++) = s.x;                 // 24
    out(n, k++) = s.w;                 // 25
    const amp::unorm_2 p(x, y), q = p * amp::unorm_2(0.5f) - amp::unorm_2(y);
    out(n, k++) = q.get_x();           // 26
    out(n, k++) = q.get_y();           // 27
    const amp::norm_3 c = amp::norm_3(amp::float_3(x * 4, y, 0.25f)); // explicit from float_3
    out(n, k++) = c.z + c.get_zyx().z; // 28: 0.25 + clamp(4x)
    const amp::float_4 back = amp::float_4(-v); // explicit to float_4
    out(n, k++) = back.y;              // 29
    amp::unorm_4 z;
    out(n, k++) = z.x + z.y + z.z + z.w; // 30: vectors of unorm start at 0
    out(n, k++) = (float)NORM_MIN + 10.0f * (float)NORM_MAX + 100.0f * (float)UNORM_MAX + (float)NORM_ZERO +
                  (float)UNORM_ZERO + (float)UNORM_MIN; // 31
}

// --------------------------------------------------------- ranks above 4
// Index, extent and views of any rank, inside a kernel launched at rank 1:
// a rank-6 view of a 64-element local array (via view_as) and a rank-7
// extent and index.
AMP_KERNEL(high_rank_values, amp::index<1> i, amp::array_view<int, 2> out)
{
    const int n = i[0];
    int mem[64];
    amp::array_view<int, 1> lin(64, mem);
    for (int k = 0; k < 64; ++k) lin[k] = n * 100 + k;
    amp::array_view<int, 6> v6 = lin.view_as(amp::extent<6>(2, 2, 2, 2, 2, 2));
    const int c[6] = {n & 1, (n >> 1) & 1, (n >> 2) & 1, (n >> 3) & 1, (n >> 4) & 1, (n >> 5) & 1};
    amp::index<6> x(c);
    out(n, 0) = v6[x];                                  // n * 100 + the bits of n reversed
    out(n, 1) = v6(c[0], c[1], c[2], c[3], c[4], c[5]); // the same
    out(n, 2) = v6(1)(0)(1)(0)(1)(0);                   // n * 100 + 42
    const amp::extent<7> e7(1, 2, 3, 4, 5, 6, 7);
    amp::index<7> y;
    ++y;
    y = 2 * y + n; // every component n + 2
    out(n, 3) = (int)e7.size();
    out(n, 4) = e7.contains(y - (n + 2)) + 2 * e7.contains(y);
    const amp::extent<7> f = e7 + e7 - 1;
    out(n, 5) = f[6] * 100 + f[0];
    amp::array_view<int, 5> v5(amp::extent<5>(2, 2, 2, 2, 4), mem);
    out(n, 6) = v5(1)(1)(1)(1)(3) + v5.extent.size();
}

// One kernel per launch rank 4..8: every work-item writes 1 + its row-major
// linear index into out (a view of the same rank) and counts itself.
#define RANK_KERNEL(N)                                                                           \
    AMP_KERNEL(rank##N##_launch, amp::index<N> x, amp::array_view<int, N> out,                   \
               amp::array_view<int, 1> count)                                                    \
    {                                                                                            \
        long long lin = 0;                                                                       \
        for (int d = 0; d < N; ++d) lin = lin * out.extent[d] + x[d];                            \
        out[x] = (int)lin + 1;                                                                   \
        atomicAdd(&count[0], 1);                                                                 \
    }
RANK_KERNEL(4)
RANK_KERNEL(5)
RANK_KERNEL(6)
RANK_KERNEL(7)
RANK_KERNEL(8)
#undef RANK_KERNEL
