/* app_mpi.c — the Makefile example with MPI (make mpi): each rank runs saxpy.hip on its own slice, on the GPU its node-local rank selects (round robin over the node's GPUs; the CPU accelerator where there is none), checks it against the host, and rank 0 reports the sum over all ranks. */
#include "saxpy_kernel.h" /* generated: extern const char saxpy_source[]; */

#include <hipamp.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 100000 /* elements per rank */

static float sample(unsigned *state)
{
    *state = *state * 1664525u + 1013904223u;
    float v = (float)(*state >> 8) / 8388608.0f - 1.0f;
    return v == 0.0f ? 0.5f : v;
}

/* The node-local rank's share of this node's GPUs, else the CPU accelerator.
 * Choosing by local rank (not by AMP_DEFAULT_ACCELERATOR) keeps one job
 * script for every node size. */
static amp_accelerator *pick(int local_rank)
{
    amp_accelerator *list[64], *gpus[64];
    size_t n = 0, ngpu = 0;
    if (amp_accelerator_list(list, 64, &n) != AMP_OK) return NULL;
    amp_accelerator *cpu = NULL;
    for (size_t i = 0; i < n && i < 64; ++i) {
        amp_accelerator_info in;
        if (amp_accelerator_get_info(list[i], &in) != AMP_OK || !in.is_available) continue;
        if (in.is_emulated) cpu = list[i];
        else gpus[ngpu++] = list[i];
    }
    return ngpu ? gpus[(size_t)local_rank % ngpu] : cpu;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1, local_rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_free(&node);

    long bad = 1; /* this rank's failures; 1 until the check ran */
    double sum = 0.0;
    const float a = -1.5f;
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *want = malloc(N * sizeof *want);
    amp_accelerator *acc = pick(local_rank);
    amp_accelerator_view *q = NULL;
    amp_accelerator_info info;
    amp_program *prog = NULL;
    amp_kernel *k = NULL;
    amp_array_view *vx = NULL, *vy = NULL;
    if (!x || !y || !want || !acc) {
        fprintf(stderr, "app_mpi[%d]: %s\n", rank, acc ? "out of memory" : "no accelerator");
        goto done;
    }
    unsigned seed = 777u + (unsigned)rank;
    for (int i = 0; i < N; ++i) {
        x[i] = sample(&seed);
        y[i] = sample(&seed);
        want[i] = a * x[i] + y[i];
    }
    amp_arg args[3];
    if (amp_accelerator_get_info(acc, &info) != AMP_OK || amp_accelerator_default_view(acc, &q) != AMP_OK ||
        amp_program_build(acc, saxpy_source, NULL, &prog) != AMP_OK ||
        amp_program_get_kernel(prog, "saxpy", &k) != AMP_OK ||
        amp_array_view_create(x, sizeof *x, amp_extent_1d(N), AMP_READ_ONLY, &vx) != AMP_OK ||
        amp_array_view_create(y, sizeof *y, amp_extent_1d(N), AMP_READ_WRITE, &vy) != AMP_OK) {
        fprintf(stderr, "app_mpi[%d]: %s\n", rank, amp_last_error());
        goto done;
    }
    args[0] = amp_arg_float32(a);
    args[1] = amp_arg_view(vx);
    args[2] = amp_arg_view(vy);
    if (amp_parallel_for_each(q, amp_extent_1d(N), k, args, 3) != AMP_OK || amp_array_view_synchronize(vy) != AMP_OK) {
        fprintf(stderr, "app_mpi[%d]: %s\n", rank, amp_last_error());
        goto done;
    }
    bad = 0;
    for (int i = 0; i < N; ++i) {
        float d = y[i] - want[i], tol = 1e-6f * (want[i] < 0 ? -want[i] : want[i]) + 1e-7f;
        if ((d > tol || d < -tol) && bad++ == 0)
            fprintf(stderr, "app_mpi[%d]: y[%d] = %.9g, want %.9g\n", rank, i, (double)y[i], (double)want[i]);
        sum += y[i];
    }
    printf("app_mpi[%d]: local rank %d on %s\n", rank, local_rank, info.device_path);
done:
    if (vx) amp_array_view_destroy(vx);
    if (vy) amp_array_view_destroy(vy);
    if (prog) amp_program_destroy(prog);
    free(x);
    free(y);
    free(want);
    long total_bad = 0;
    double total = 0.0;
    MPI_Reduce(&bad, &total_bad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total_bad == 0)
            printf("app_mpi: %d ranks x %d floats match the host (sum of y %.6g)\n", size, N, total);
        else
            fprintf(stderr, "app_mpi: %ld mismatches or failed ranks\n", total_bad);
    }
    int rc = rank == 0 && total_bad != 0;
    MPI_Finalize();
    return rc;
}
