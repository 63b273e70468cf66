// heat.hip — one Jacobi step of the 2-D heat equation over the rows a rank owns: a tiled kernel (8 x 32 threads, the 32 along the contiguous x), reading the rank's rows plus one halo row above and below.
//
// in:  the rank's rows with their halos, (rows + 2) x nx; in(r + 1, c) is owned row r.
// out: the rank's rows, rows x nx (launched on that extent padded to the tile).
// first_row: the global index of owned row 0; ny: the global row count.
// Global boundary cells (first and last global row, first and last column)
// keep their values. Every other cell becomes the mean of its four
// neighbours, summed in one fixed order, (up + down) + (left + right), then
// scaled: the arithmetic does not depend on how the rows are split, and it
// has no multiply feeding an add, so no compiler can fuse it differently on
// one rank than on another (or on the CPU than on a GPU).
AMP_TILED_KERNEL(heat_step, amp::tiled_index<8, 32> t, amp::array_view<const float, 2> in,
                 amp::array_view<float, 2> out, int first_row, int ny)
{
    const int r = t.global[0], c = t.global[1];
    const int rows = out.extent[0], nx = out.extent[1];
    if (r >= rows || c >= nx) return; // padding of the last tile row / column
    const int g = first_row + r;
    float v;
    if (g == 0 || g == ny - 1 || c == 0 || c == nx - 1)
        v = in(r + 1, c);
    else
        v = 0.25f * ((in(r, c) + in(r + 2, c)) + (in(r + 1, c - 1) + in(r + 1, c + 1)));
    out(r, c) = v;
}
