// cg.hip — the kernels of the conjugate-gradient examples (examples/cg/cg_solver.c, for cg and cg_mpi): the 5-point Laplacian of the 2-D Poisson problem and the two vector updates of an iteration, reading CG's scalars from one-element device arrays (written by amp_transform_reduce_async on one rank, by the sum across ranks in a row split).
//
// Layout: a rank's block of rows of the n x n interior grid. Vectors x, r,
// Ap are rows x n; p has a halo row above and below, (rows + 2) x n, where
// p(i + 1, j) is row i (the halos hold the neighbours' rows in a row split
// across MPI ranks, and the zero boundary on a single rank).

// Ap = A p, A = the 5-point Laplacian (unscaled: 4 on the diagonal, -1 for
// each of the four neighbours; zero Dirichlet boundary outside the grid):
// ap's row i from p's rows i, i + 1 and i + 2. One function for both
// kernels, so a row's arithmetic does not depend on which computes it.
__device__ void cg_apply_cell(amp::array_view<const double, 2> p, amp::array_view<double, 2> ap, int i, int j)
{
    const int n = ap.extent[1];
    const double left = j > 0 ? p(i + 1, j - 1) : 0.0;
    const double right = j < n - 1 ? p(i + 1, j + 1) : 0.0;
    ap(i, j) = 4.0 * p(i + 1, j) - ((p(i, j) + p(i + 2, j)) + (left + right));
}

// Every row of ap (or, launched on sections, the interior rows of a row
// split: p from its first own row, ap from its second).
AMP_KERNEL(cg_apply, amp::index<2> idx, amp::array_view<const double, 2> p, amp::array_view<double, 2> ap)
{
    cg_apply_cell(p, ap, idx[0], idx[1]);
}

// The first and the last row of ap, once p's halos arrived: launched on
// 2 x n (ap has at least 3 rows), index row 0 computes row 0, index row 1
// the last row.
AMP_KERNEL(cg_apply_edges, amp::index<2> idx, amp::array_view<const double, 2> p, amp::array_view<double, 2> ap)
{
    cg_apply_cell(p, ap, idx[0] == 0 ? 0 : ap.extent[0] - 1, idx[1]);
}

// alpha = rr / pAp; x += alpha p; r -= alpha Ap.
AMP_KERNEL(cg_update_xr, amp::index<2> idx, amp::array_view<double, 2> x, amp::array_view<double, 2> r,
           amp::array_view<const double, 2> p, amp::array_view<const double, 2> ap,
           amp::array_view<const double, 1> rr, amp::array_view<const double, 1> pap)
{
    const double alpha = rr[0] / pap[0];
    x[idx] += alpha * p(idx[0] + 1, idx[1]);
    r[idx] -= alpha * ap[idx];
}

// beta = rr_new / rr; p = r + beta p (the interior of p; its halos stay).
AMP_KERNEL(cg_update_p, amp::index<2> idx, amp::array_view<double, 2> p, amp::array_view<const double, 2> r,
           amp::array_view<const double, 1> rr_new, amp::array_view<const double, 1> rr)
{
    const double beta = rr_new[0] / rr[0];
    p(idx[0] + 1, idx[1]) = r[idx] + beta * p(idx[0] + 1, idx[1]);
}
