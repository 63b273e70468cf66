// mpi.hip — kernel of test_mpi.c: fills a 2-D view with values that name their cell (exact in float), so that a halo exchange's result can be checked element by element after the device wrote the data.

AMP_KERNEL(mpi_fill, amp::index<2> i, amp::array_view<float, 2> v, float base)
{
    v[i] = base + (float)(i[0] * 1024 + i[1]);
}
