// params.hip — kernels taking every scalar kind and structs by value (test_params.c): each writes what it received into a uint64 view, so the host can check every bit.

// One of each C scalar, in an order that forces padding between them.
AMP_KERNEL(every_scalar, amp::index<1> i, amp::array_view<unsigned long long, 1> out, signed char a, unsigned char b,
           short c, unsigned short d, int e, unsigned f, long long g, unsigned long long h, float fl, double db,
           bool t)
{
    unsigned long long v = 0;
    switch (i[0]) {
    case 0: v = (unsigned long long)(long long)a; break;
    case 1: v = b; break;
    case 2: v = (unsigned long long)(long long)c; break;
    case 3: v = d; break;
    case 4: v = (unsigned long long)(long long)e; break;
    case 5: v = f; break;
    case 6: v = (unsigned long long)g; break;
    case 7: v = h; break;
    case 8: v = __float_as_uint(fl); break;
    case 9: v = (unsigned long long)__double_as_longlong(db); break;
    case 10: v = t ? 1 : 0; break;
    }
    out[i] = v;
}

// The <cstdint> spellings are the same kinds.
AMP_KERNEL(fixed_width, amp::index<1> i, amp::array_view<unsigned long long, 1> out, unsigned long long u64,
           long long i64, unsigned char u8)
{
    out[i] = i[0] == 0 ? u64 : i[0] == 1 ? (unsigned long long)i64 : (unsigned long long)u8;
}

// A struct of mixed members with padding inside and at the end.
struct params_mixed {
    char tag;        // 0
    double scale;    // 8
    int count;       // 16
    short small;     // 20
    float offset;    // 24
    long long big;   // 32
    unsigned char flags[3]; // 40
};

AMP_KERNEL(struct_param, amp::index<1> i, amp::array_view<double, 1> out, int before, params_mixed p, short after)
{
    double v = 0;
    switch (i[0]) {
    case 0: v = p.tag; break;
    case 1: v = p.scale; break;
    case 2: v = p.count; break;
    case 3: v = p.small; break;
    case 4: v = p.offset; break;
    case 5: v = (double)p.big; break;
    case 6: v = p.flags[0] + 256.0 * p.flags[1] + 65536.0 * p.flags[2]; break;
    case 7: v = before; break;
    case 8: v = after; break;
    }
    out[i] = v;
}

// A 16-byte aligned struct: the pack must honour its alignment.
struct alignas(16) params_aligned { float v[4]; };

AMP_TILED_KERNEL(aligned_struct_tiled, amp::tiled_index<4> t, amp::array_view<float, 1> out, char c, params_aligned a)
{
    out[t.global] = a.v[t.local[0]] + c;
}

// A 32-byte aligned short vector by value (HIP's layout of double4).
AMP_KERNEL(double4_param, amp::index<1> i, amp::array_view<double, 1> out, char c, double4 v)
{
    out[i] = (i[0] == 0 ? v.x : i[0] == 1 ? v.y : i[0] == 2 ? v.z : v.w) + c;
}
