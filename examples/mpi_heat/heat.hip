// heat.hip — one Jacobi step of the 2-D heat equation over the rows a rank owns: heat_step (tiled, 8 x 32 threads, the 32 along the contiguous x) updates a band of rows (all of them, or the interior rows that need no halo while the halos move), heat_edges the first and last row (once the halos arrived).
//
// in:  the rows read, with one row above and below: in(r + 1, c) is the row
//      that out(r, c) updates.
// out: the rows updated (heat_step: all of them, launched on its extent
//      padded to the tile; heat_edges: its first and last row only).
// first_row: the global index of out's row 0; ny: the global row count.
// Global boundary cells (first and last global row, first and last column)
// keep their values. Every other cell becomes the mean of its four
// neighbours, summed in one fixed order, (up + down) + (left + right), then
// scaled: the arithmetic does not depend on how the rows are split or
// which kernel updates a row, and it has no multiply feeding an add, so no
// compiler can fuse it differently on one rank than on another (or on the
// CPU than on a GPU).
__device__ void heat_cell(amp::array_view<const float, 2> in, amp::array_view<float, 2> out, int r, int c,
                          int first_row, int ny)
{
    const int nx = out.extent[1];
    const int g = first_row + r;
    float v;
    if (g == 0 || g == ny - 1 || c == 0 || c == nx - 1)
        v = in(r + 1, c);
    else
        v = 0.25f * ((in(r, c) + in(r + 2, c)) + (in(r + 1, c - 1) + in(r + 1, c + 1)));
    out(r, c) = v;
}

AMP_TILED_KERNEL(heat_step, amp::tiled_index<8, 32> t, amp::array_view<const float, 2> in,
                 amp::array_view<float, 2> out, int first_row, int ny)
{
    const int r = t.global[0], c = t.global[1];
    if (r >= out.extent[0] || c >= out.extent[1]) return; // padding of the last tile row / column
    heat_cell(in, out, r, c, first_row, ny);
}

// The first and the last row of out, launched on 2 x nx (1 x nx when out
// has one row): index row 0 updates out's row 0, index row 1 its last row.
AMP_KERNEL(heat_edges, amp::index<2> i, amp::array_view<const float, 2> in, amp::array_view<float, 2> out,
           int first_row, int ny)
{
    heat_cell(in, out, i[0] == 0 ? 0 : out.extent[0] - 1, i[1], first_row, ny);
}
