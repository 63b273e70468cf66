// cg.hip — the kernels of the conjugate-gradient example (examples/cg/cg.c): the 5-point Laplacian of the 2-D Poisson problem and the two vector updates of an iteration, reading CG's scalars from one-element device arrays that amp_transform_reduce_async wrote (no host round trip).
//
// Layout: a rank's block of rows of the n x n interior grid. Vectors x, r,
// Ap are rows x n; p has a halo row above and below, (rows + 2) x n, where
// p(i + 1, j) is row i (the halos hold the neighbours' rows in a row split
// across MPI ranks, and the zero boundary on a single rank).

// Ap = A p, A = the 5-point Laplacian (unscaled: 4 on the diagonal, -1 for
// each of the four neighbours; zero Dirichlet boundary outside the grid).
AMP_KERNEL(cg_apply, amp::index<2> idx, amp::array_view<const double, 2> p, amp::array_view<double, 2> ap)
{
    const int i = idx[0], j = idx[1], n = ap.extent[1];
    const double left = j > 0 ? p(i + 1, j - 1) : 0.0;
    const double right = j < n - 1 ? p(i + 1, j + 1) : 0.0;
    ap[idx] = 4.0 * p(i + 1, j) - ((p(i, j) + p(i + 2, j)) + (left + right));
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
