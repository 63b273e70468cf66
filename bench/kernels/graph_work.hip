// graph_work.hip — the launch-graph benchmark's kernels (bench/graph_work.c): one step of a chain of dependent small launches, and a conjugate-gradient iteration on an n x n grid (5-point Poisson stencil) whose scalars stay on the device, in fixed-order reductions so that every run gives the same bits.

// z = (x + y) / 2: a chain of these stays within the inputs' range.
AMP_KERNEL(chain_step, amp::index<1> i, amp::array_view<const float, 1> x, amp::array_view<const float, 1> y,
           amp::array_view<float, 1> z)
{
    z[i] = 0.5f * x[i] + 0.5f * y[i];
}

// Ap = A p, A the 5-point Laplacian (4 on the diagonal, -1 to each
// neighbour; zero outside the grid), the grid n x n stored by rows.
AMP_KERNEL(cg_apply, amp::index<2> i, amp::array<const float, 1> p, amp::array<float, 1> ap, int n)
{
    const int r = i[0], c = i[1], k = r * n + c;
    float v = 4.0f * p[k];
    if (r > 0) v -= p[k - n];
    if (r < n - 1) v -= p[k + n];
    if (c > 0) v -= p[k - 1];
    if (c < n - 1) v -= p[k + 1];
    ap[k] = v;
}

// part[tile] = sum over the tile of a * b (a tree in tile_static).
AMP_TILED_KERNEL(cg_dot_part, amp::tiled_index<256> t, amp::array<const float, 1> a, amp::array<const float, 1> b,
                 amp::array<float, 1> part)
{
    tile_static float s[256];
    const int l = t.local[0];
    s[l] = a[t.global] * b[t.global];
    t.barrier.wait();
    for (int w = 128; w > 0; w >>= 1) {
        if (l < w) s[l] += s[l + w];
        t.barrier.wait();
    }
    if (l == 0) part[t.tile[0]] = s[0];
}

// Scalars of the iteration, in sc: 0 rho (r.r), 1 alpha, 2 beta.
// what 0: alpha = rho / sum(part); what 1: beta = sum(part) / rho, rho =
// sum(part). One tile of 256 sums nparts partial sums.
AMP_TILED_KERNEL(cg_dot_finish, amp::tiled_index<256> t, amp::array<const float, 1> part, amp::array<float, 1> sc,
                 int nparts, int what)
{
    tile_static float s[256];
    const int l = t.local[0];
    float v = 0.0f;
    for (int k = l; k < nparts; k += 256) v += part[k];
    s[l] = v;
    t.barrier.wait();
    for (int w = 128; w > 0; w >>= 1) {
        if (l < w) s[l] += s[l + w];
        t.barrier.wait();
    }
    if (l == 0) {
        if (what == 0) {
            sc[1] = sc[0] / s[0];
        } else {
            sc[2] = s[0] / sc[0];
            sc[0] = s[0];
        }
    }
}

// x += alpha p; r -= alpha Ap.
AMP_KERNEL(cg_update_xr, amp::index<1> i, amp::array<float, 1> x, amp::array<float, 1> r,
           amp::array<const float, 1> p, amp::array<const float, 1> ap, amp::array<const float, 1> sc)
{
    const float alpha = sc[1];
    x[i] += alpha * p[i];
    r[i] -= alpha * ap[i];
}

// p = r + beta p.
AMP_KERNEL(cg_update_p, amp::index<1> i, amp::array<float, 1> p, amp::array<const float, 1> r,
           amp::array<const float, 1> sc)
{
    p[i] = r[i] + sc[2] * p[i];
}
