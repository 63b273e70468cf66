// tealeaf.hip — the kernels of the TeaLeaf port (examples/tealeaf/tea_solver.c, tea_poly.c): the 5-point diffusion operator, CG's updates (two of them fused with its dot products, which they sum a tile), the per-step set-up and finalisation, and the Chebyshev and PPCG steps; CG reads its scalars from one-element device arrays written by amp_reduce_async over those sums (one rank) or by the host's sum across ranks (a row split).
//
// Layout: a rank's block of `rows` rows of the x_cells-wide mesh (one rank:
// all of it). u, u0, r, w, energy, density: rows x nx. p: (rows + 2) x nx,
// p(i + 1, j) is row i and rows 0 and rows + 1 are halos (a neighbour's
// rows in a row split; zeros at the mesh's edge). kx: rows x (nx + 1),
// kx(i, j) is the face between cells j - 1 and j of row i; ky: (rows + 1) x
// nx, ky(i, j) the face between rows i - 1 and i. The faces on the mesh's
// edge are 0 (no flux: TeaLeaf's reflective halos give the same operator),
// so what p's outer halos hold never matters; it must only be finite.
//
// Convergence is tested on the device: every iteration's kernels compare
// the r . r its first kernel sees (rro, the last iteration's rrn) with eps,
// as TeaLeaf tests rrn after an iteration; once it passed, the updates are
// no-ops and the iteration counter stops, so the host may look every few
// iterations and get the results of looking after each.

__device__ inline bool tea_converged(double rro, double eps)
{
    return sqrt(fabs(rro)) < eps;
}

// (A x) at a cell of value c from its neighbours (left, right in its row;
// prev, next: the rows before and after) and the faces between them (kl,
// kr, kb: the face to the row before, kt), A = I + the diffusion operator,
// in TeaLeaf's order of operations (tealeaf_SMVP): the diagonal times c
// minus the x neighbours minus the y neighbours.
__device__ inline double tea_smvp_cell(double c, double left, double right, double prev, double next, double kl,
                                       double kr, double kb, double kt)
{
    return (1.0 + (kr + kl) + (kt + kb)) * c - (kr * right + kl * left) - (kt * next + kb * prev);
}

// (A x)(i, j) for a field x with halo rows (x(i + 1, j) is row i).
__device__ inline double tea_smvp(amp::array_view<const double, 2> x, amp::array_view<const double, 2> kx,
                                  amp::array_view<const double, 2> ky, int i, int j, int nx)
{
    const double left = j > 0 ? x(i + 1, j - 1) : 0.0;
    const double right = j < nx - 1 ? x(i + 1, j + 1) : 0.0;
    return tea_smvp_cell(x(i + 1, j), left, right, x(i, j), x(i + 2, j), kx(i, j), kx(i, j + 1), ky(i, j),
                         ky(i + 1, j));
}

// w = A p.
AMP_KERNEL(tea_apply, amp::index<2> idx, amp::array_view<const double, 2> p, amp::array_view<double, 2> w,
           amp::array_view<const double, 2> kx, amp::array_view<const double, 2> ky)
{
    w[idx] = tea_smvp(p, kx, ky, idx[0], idx[1], w.extent[1]);
}

// A step's start: u = energy * density, u0 = u, and p's own rows = u (so
// that tea_apply computes A u into w).
AMP_KERNEL(tea_init_u, amp::index<2> idx, amp::array_view<const double, 2> energy,
           amp::array_view<const double, 2> density, amp::array_view<double, 2> u, amp::array_view<double, 2> u0,
           amp::array_view<double, 2> p)
{
    const double v = energy[idx] * density[idx];
    u[idx] = v;
    u0[idx] = v;
    p(idx[0] + 1, idx[1]) = v;
}

// r = u0 - A u (w), p = r.
AMP_KERNEL(tea_init_r, amp::index<2> idx, amp::array_view<const double, 2> u0, amp::array_view<const double, 2> w,
           amp::array_view<double, 2> r, amp::array_view<double, 2> p)
{
    const double v = u0[idx] - w[idx];
    r[idx] = v;
    p(idx[0] + 1, idx[1]) = v;
}

// ---- The CG iteration's fused kernels: each also sums a product over its
// tile into partials[tile] (one element a tile, the tiles in row-major
// order), which tea_solver.c then sums into a one-element array, the dot
// product, as TeaLeaf's CUDA version does: 3 passes over the fields an
// iteration instead of 5. A tile is a run of one row: the CPU accelerator
// then walks each field in order, as the hardware prefetchers want (8 x 32
// tiles took it 1.4x the time). The launch is padded to whole tiles: the
// work-items past the mesh add 0. A tile inside the mesh takes a branch
// without the test of the mesh's edge; holding a barrier, the branch is
// taken by the whole tile, so the CPU accelerator runs its work-items in a
// loop of their own, which its compiler vectorises. Work-item 0 sums the
// tile's values in order (8 work-items summing 16 each first took the
// 16-core host 5-12% longer, and the GPU as long).
#define TEA_TILE_ROWS 1
#define TEA_TILE_COLS 128
#define TEA_TILE (TEA_TILE_ROWS * TEA_TILE_COLS)

// (A p)(i, j) as tea_smvp, from x = &p(i + 1, j) in p's rows of nx
// elements (p is a whole array): x[-1] and x[1] are the row before's last
// or the row after's first element (or a halo row's) where j is 0 or
// nx - 1, and the faces there are 0, so no test is needed.
__device__ inline double tea_smvp_at(const double *x, amp::array_view<const double, 2> kx,
                                     amp::array_view<const double, 2> ky, int i, int j, int nx)
{
    return tea_smvp_cell(x[0], x[-1], x[1], x[-nx], x[nx], kx(i, j), kx(i, j + 1), ky(i, j), ky(i + 1, j));
}

// The tile's sum of part[] into partials[tile] (work-item 0; after a barrier).
__device__ inline void tea_tile_sum(const double *part, amp::array_view<double, 1> partials, int tile_row,
                                    int tile_col, int nx)
{
    double sum = 0.0;
    for (int k = 0; k < TEA_TILE; ++k) sum += part[k];
    partials[tile_row * ((nx + TEA_TILE_COLS - 1) / TEA_TILE_COLS) + tile_col] = sum;
}

// w = A p; partials: p . w.
AMP_TILED_KERNEL(tea_apply_pw, amp::tiled_index<TEA_TILE_ROWS, TEA_TILE_COLS> t, amp::array_view<const double, 2> p,
                 amp::array_view<double, 2> w, amp::array_view<const double, 2> kx,
                 amp::array_view<const double, 2> ky, amp::array_view<double, 1> partials)
{
    tile_static double part[TEA_TILE];
    const int i = t.global[0], j = t.global[1], nx = w.extent[1];
    const int l = t.local[0] * TEA_TILE_COLS + t.local[1];
    if (t.tile_origin[0] + TEA_TILE_ROWS <= w.extent[0] && t.tile_origin[1] + TEA_TILE_COLS <= nx) {
        const double *x = p.data() + (long long)(i + 1) * nx + j;
        const double a = tea_smvp_at(x, kx, ky, i, j, nx);
        w(i, j) = a;
        part[l] = x[0] * a;
        t.barrier.wait();
    } else {
        double v = 0.0;
        if (i < w.extent[0] && j < nx) {
            const double *x = p.data() + (long long)(i + 1) * nx + j;
            const double a = tea_smvp_at(x, kx, ky, i, j, nx);
            w(i, j) = a;
            v = x[0] * a;
        }
        part[l] = v;
        t.barrier.wait();
    }
    if (l == 0) tea_tile_sum(part, partials, t.tile[0], t.tile[1], nx);
}

// alpha = rro / pw; u += alpha p; r -= alpha w (none of it once
// converged); partials: r . r, of r as it is after. The iteration count is
// carried from iters_in to iters_out (two arrays, swapped each iteration
// as rro and rrn are: no work-item reads what another writes), plus one
// unless converged, by the first tile's work-item 0 where it sums its
// tile. (In tea_update_p, a simple kernel, that work-item's test and store
// kept the CPU's loop over the work-items scalar, which GCC does not
// vectorise with a store to one address under a condition: the kernel
// took 1.6x the time, the CG iteration on a 16-core host 6-15% more. The
// CPU accelerator now runs a row's work-item 0 apart from the others, and
// the count there would cost nothing either; it stays here.)
// Each branch reads the scalars first: read under the test of the mesh's
// edge, or before the branch (then kept per work-item across it), they
// could not be taken out of the CPU's loop over the work-items. The update
// is written out in each branch: as a helper function GCC left the CPU's
// loop scalar.
AMP_TILED_KERNEL(tea_update_ur_rr, amp::tiled_index<TEA_TILE_ROWS, TEA_TILE_COLS> t, amp::array_view<double, 2> u,
                 amp::array_view<double, 2> r, amp::array_view<const double, 2> p,
                 amp::array_view<const double, 2> w, amp::array_view<const double, 1> rro,
                 amp::array_view<const double, 1> pw, double eps, amp::array_view<double, 1> partials,
                 amp::array_view<const int, 1> iters_in, amp::array_view<int, 1> iters_out)
{
    tile_static double part[TEA_TILE];
    const int i = t.global[0], j = t.global[1], nx = r.extent[1];
    const int l = t.local[0] * TEA_TILE_COLS + t.local[1];
    if (t.tile_origin[0] + TEA_TILE_ROWS <= r.extent[0] && t.tile_origin[1] + TEA_TILE_COLS <= nx) {
        const bool update = !tea_converged(rro[0], eps);
        const double alpha = rro[0] / pw[0];
        double res = r(i, j);
        if (update) {
            u(i, j) += alpha * p(i + 1, j);
            res -= alpha * w(i, j);
            r(i, j) = res;
        }
        part[l] = res * res;
        t.barrier.wait();
    } else {
        const bool update = !tea_converged(rro[0], eps);
        const double alpha = rro[0] / pw[0];
        double v = 0.0;
        if (i < r.extent[0] && j < nx) {
            double res = r(i, j);
            if (update) {
                u(i, j) += alpha * p(i + 1, j);
                res -= alpha * w(i, j);
                r(i, j) = res;
            }
            v = res * res;
        }
        part[l] = v;
        t.barrier.wait();
    }
    if (l == 0) {
        tea_tile_sum(part, partials, t.tile[0], t.tile[1], nx);
        if (t.tile[0] == 0 && t.tile[1] == 0) iters_out[0] = iters_in[0] + (tea_converged(rro[0], eps) ? 0 : 1);
    }
}

// beta = rrn / rro; p = beta p + r (not once converged).
AMP_KERNEL(tea_update_p, amp::index<2> idx, amp::array_view<double, 2> p, amp::array_view<const double, 2> r,
           amp::array_view<const double, 1> rrn, amp::array_view<const double, 1> rro, double eps)
{
    if (tea_converged(rro[0], eps)) return;
    const double beta = rrn[0] / rro[0];
    p(idx[0] + 1, idx[1]) = beta * p(idx[0] + 1, idx[1]) + r[idx];
}

// A step's end: energy = u / density.
AMP_KERNEL(tea_finalise, amp::index<2> idx, amp::array_view<double, 2> energy, amp::array_view<const double, 2> u,
           amp::array_view<const double, 2> density)
{
    energy[idx] = u[idx] / density[idx];
}

// ---- Chebyshev and PPCG (tea_poly.c). Their operator is applied to u
// (Chebyshev, and PPCG's true residual at its start) and to PPCG's inner
// direction sd: each then lives in fields with halo rows, as p does, for
// the operator and a row split's exchange (`field`: (rows + 2) x nx, row
// i + 1 its row i). Each step reads one field and writes the next into the
// other of a pair (A reads neighbours: an update in place would race), so
// that a step is one kernel, the operator's result never stored.

// field's own rows = src.
AMP_KERNEL(tea_copy_into_field, amp::index<2> idx, amp::array_view<const double, 2> src,
           amp::array_view<double, 2> field)
{
    field(idx[0] + 1, idx[1]) = src[idx];
}

// dst = field's own rows.
AMP_KERNEL(tea_copy_from_field, amp::index<2> idx, amp::array_view<const double, 2> field,
           amp::array_view<double, 2> dst)
{
    dst[idx] = field(idx[0] + 1, idx[1]);
}

// Chebyshev's first step: res = u0 - A u, d = res / theta, u' = u + d.
AMP_KERNEL(tea_cheby_first, amp::index<2> idx, amp::array_view<const double, 2> u,
           amp::array_view<const double, 2> kx, amp::array_view<const double, 2> ky,
           amp::array_view<const double, 2> u0, amp::array_view<double, 2> d, amp::array_view<double, 2> u_next,
           double theta)
{
    const int i = idx[0], j = idx[1];
    const double step = (u0[idx] - tea_smvp(u, kx, ky, i, j, d.extent[1])) / theta;
    d[idx] = step;
    u_next(i + 1, j) = u(i + 1, j) + step;
}

// Chebyshev's step k: res = u0 - A u (kept in r where r . r follows), d =
// alpha_k d + beta_k res, u' = u + d.
AMP_KERNEL(tea_cheby_step, amp::index<2> idx, amp::array_view<const double, 2> u,
           amp::array_view<const double, 2> kx, amp::array_view<const double, 2> ky,
           amp::array_view<const double, 2> u0, amp::array_view<double, 2> d, amp::array_view<double, 2> r,
           amp::array_view<double, 2> u_next, double alpha, double beta, int keep_r)
{
    const int i = idx[0], j = idx[1];
    const double res = u0[idx] - tea_smvp(u, kx, ky, i, j, d.extent[1]);
    const double step = alpha * d[idx] + beta * res;
    if (keep_r) r[idx] = res;
    d[idx] = step;
    u_next(i + 1, j) = u(i + 1, j) + step;
}

// r = u0 - A u: PPCG starts from the true residual.
AMP_KERNEL(tea_residual, amp::index<2> idx, amp::array_view<const double, 2> u_field,
           amp::array_view<const double, 2> kx, amp::array_view<const double, 2> ky,
           amp::array_view<const double, 2> u0, amp::array_view<double, 2> r)
{
    r[idx] = u0[idx] - tea_smvp(u_field, kx, ky, idx[0], idx[1], r.extent[1]);
}

// PPCG's inner steps start: sd = r / theta.
AMP_KERNEL(tea_ppcg_init_sd, amp::index<2> idx, amp::array_view<const double, 2> r,
           amp::array_view<double, 2> sd_field, double theta)
{
    sd_field(idx[0] + 1, idx[1]) = r[idx] / theta;
}

// PPCG's inner step k: r -= A sd, u += sd, sd' = alpha_k sd + beta_k r.
AMP_KERNEL(tea_ppcg_inner, amp::index<2> idx, amp::array_view<const double, 2> sd,
           amp::array_view<const double, 2> kx, amp::array_view<const double, 2> ky, amp::array_view<double, 2> r,
           amp::array_view<double, 2> u, amp::array_view<double, 2> sd_next, double alpha, double beta)
{
    const int i = idx[0], j = idx[1];
    const double s = sd(i + 1, j);
    const double res = r[idx] - tea_smvp(sd, kx, ky, i, j, r.extent[1]);
    r[idx] = res;
    u[idx] += s;
    sd_next(i + 1, j) = alpha * s + beta * res;
}

// Jacobi's step (TeaLeaf's order of operations): u' = (u0 + the neighbours
// of u weighted by their faces) / (1 + the faces), w = u' - u (its sum of
// magnitudes is TeaLeaf's error).
AMP_KERNEL(tea_jacobi, amp::index<2> idx, amp::array_view<const double, 2> u, amp::array_view<const double, 2> kx,
           amp::array_view<const double, 2> ky, amp::array_view<const double, 2> u0,
           amp::array_view<double, 2> u_next, amp::array_view<double, 2> w)
{
    const int i = idx[0], j = idx[1], nx = w.extent[1];
    const double c = u(i + 1, j);
    const double left = j > 0 ? u(i + 1, j - 1) : 0.0;
    const double right = j < nx - 1 ? u(i + 1, j + 1) : 0.0;
    const double kl = kx(i, j), kr = kx(i, j + 1), kb = ky(i, j), kt = ky(i + 1, j);
    const double next =
        (u0[idx] + (kr * right + kl * left) + (kt * u(i + 2, j) + kb * u(i, j))) / (1.0 + (kl + kr) + (kb + kt));
    u_next(i + 1, j) = next;
    w[idx] = next - c;
}
