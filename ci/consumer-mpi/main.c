/* main.c — the hipamp::mpi consumer: each rank picks its accelerator by node-local rank, and the ranks pass their rank number around a ring of host views with one amp_mpi_exchange_rows call; each checks what it received. */
#include <hipamp_mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    enum { N = 64 };
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    float rows[4][N]; /* halo from below, my first row, my last row, halo from above */
    for (int i = 0; i < N; ++i) {
        rows[0][i] = rows[3][i] = -1.0f;
        rows[1][i] = (float)(rank * 1000 + i);
        rows[2][i] = (float)(rank * 1000 + 500 + i);
    }
    amp_accelerator *acc = NULL;
    amp_accelerator_view *q = NULL;
    amp_mpi_exchange *x = NULL;
    amp_array_view *v = NULL, *s[4] = {NULL, NULL, NULL, NULL};
    if (amp_mpi_select_accelerator(MPI_COMM_WORLD, &acc) != AMP_OK ||
        amp_accelerator_default_view(acc, &q) != AMP_OK ||
        amp_mpi_exchange_create(MPI_COMM_WORLD, q, sizeof(float), AMP_MPI_PATH_HOST, &x) != AMP_OK) {
        fprintf(stderr, "consumer_mpi: rank %d: %s\n", rank, amp_mpi_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (amp_array_view_create(rows, sizeof(float), amp_extent_2d(4, N), AMP_READ_WRITE, &v) != AMP_OK) bad = 1;
    for (int r = 0; r < 4 && !bad; ++r)
        if (amp_array_view_section(v, amp_index_2d(r, 0), amp_extent_2d(1, N), &s[r]) != AMP_OK) bad = 1;
    if (bad) {
        fprintf(stderr, "consumer_mpi: rank %d: %s\n", rank, amp_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int lo = (rank + size - 1) % size, hi = (rank + 1) % size;
    if (amp_mpi_exchange_rows(x, lo, s[1], s[0], hi, s[2], s[3]) != AMP_OK) {
        fprintf(stderr, "consumer_mpi: rank %d: %s\n", rank, amp_mpi_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int r = 0; r < 4; ++r) amp_array_view_destroy(s[r]);
    amp_array_view_destroy(v);
    for (int i = 0; i < N; ++i)
        if (rows[0][i] != (float)(lo * 1000 + 500 + i) || rows[3][i] != (float)(hi * 1000 + i)) bad++;
    int total = 0;
    MPI_Reduce(&bad, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    amp_mpi_exchange_destroy(x);
    if (rank == 0) {
        if (total) fprintf(stderr, "consumer_mpi: %d halo values wrong\n", total);
        else printf("consumer_mpi: installed hipamp::mpi passed halos around a ring of %d ranks\n", size);
    }
    MPI_Finalize();
    return total ? 1 : 0;
}
