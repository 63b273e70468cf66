/* mpi_halo_rtt.c — the halo face round trip of hipamp::mpi between two ranks: each rank sends a face of BYTES (default 256 KiB) from an array on its accelerator to the other and receives the other's into another array, the exchange ended and the queue drained (the received face is on the device); per round trip the median, minimum and 90th percentile over REPS rounds after a warm-up, on the path asked for (--path, or AMP_MPI_PATH; AMP_MPI_STAGED_PIPELINE=0 for the staged path as before its pipeline, AMP_MPI_CHUNK_BYTES to send faces in chunks). Prints one line rank 0 writes for ci/gpu.sh:
 *
 *   halo_rtt path P pipeline 0|1 chunk C bytes B reps N median_us M min_us m p90_us p fell_back 0|1 ...
 *
 * and the path's reason. Data is checked once at the end (the last round's received face holds the peer's values).
 *
 *   mpiexec -n 2 mpi_halo_rtt [--bytes B] [--reps N] [--warmup N] [--path auto|host|device|staged|nccl] */
#include <hipamp.h>
#include <hipamp_mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank_ = 0;

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "mpi_halo_rtt: rank %d: %s: %s\n", rank_, what, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}
#define TRY(call)                                                                                \
    do {                                                                                         \
        if ((call) != AMP_OK) die(#call, amp_last_error());                                      \
    } while (0)
#define TRY_MPI(call)                                                                            \
    do {                                                                                         \
        if ((call) != AMP_OK) die(#call, amp_mpi_last_error());                                  \
    } while (0)

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long bytes = 256 * 1024, reps = 200, warmup = 20;
    amp_mpi_path path = AMP_MPI_PATH_AUTO;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--bytes")) bytes = strtol(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--reps")) reps = strtol(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--warmup")) warmup = strtol(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--path")) {
            if (amp_mpi_path_parse(argv[i + 1], &path) != AMP_OK) die("--path", amp_mpi_last_error());
        } else {
            if (rank_ == 0) fprintf(stderr, "mpi_halo_rtt: unknown argument %s\n", argv[i]);
            MPI_Finalize();
            return 2;
        }
    }
    if (size != 2 || bytes < 4 || bytes % 4 || reps < 1 || warmup < 0) {
        if (rank_ == 0) fprintf(stderr, "mpi_halo_rtt: 2 ranks, --bytes a multiple of 4, --reps >= 1\n");
        MPI_Finalize();
        return 2;
    }
    amp_accelerator *acc = NULL;
    amp_accelerator_view *q = NULL;
    TRY_MPI(amp_mpi_select_accelerator(MPI_COMM_WORLD, &acc));
    TRY(amp_accelerator_default_view(acc, &q));
    const int n = (int)(bytes / 4);
    float *init = malloc((size_t)bytes);
    if (!init) die("malloc", "no memory");
    for (int i = 0; i < n; ++i) init[i] = (float)(rank_ * 1000000 + i % 1000003);
    amp_array *sa = NULL, *ra = NULL;
    amp_array_view *sv = NULL, *rv = NULL;
    TRY(amp_array_create(q, sizeof(float), amp_extent_1d(n), init, &sa));
    TRY(amp_array_create(q, sizeof(float), amp_extent_1d(n), NULL, &ra));
    TRY(amp_array_view_of_array(sa, &sv));
    TRY(amp_array_view_of_array(ra, &rv));
    amp_mpi_exchange *x = NULL;
    TRY_MPI(amp_mpi_exchange_create(MPI_COMM_WORLD, q, sizeof(float), path, &x));
    amp_mpi_path_info info;
    TRY_MPI(amp_mpi_exchange_get_path(x, &info));
    const int peer = 1 - rank_;
    amp_mpi_halo h = {sv, rv, peer, 5, 5};
    double *t = malloc((size_t)reps * sizeof *t);
    if (!t) die("malloc", "no memory");
    MPI_Barrier(MPI_COMM_WORLD);
    for (long k = 0; k < warmup + reps; ++k) {
        double t0 = MPI_Wtime();
        TRY_MPI(amp_mpi_exchange_halos(x, &h, 1));
        TRY(amp_accelerator_view_wait(q));
        if (k >= warmup) t[k - warmup] = MPI_Wtime() - t0;
    }
    TRY(amp_array_view_synchronize(rv));
    TRY(amp_array_copy_to_host(ra, init));
    long bad = 0;
    for (int i = 0; i < n; ++i) bad += init[i] != (float)(peer * 1000000 + i % 1000003);
    /* The slower rank's samples: each round trip is the larger of the two. */
    double *other = malloc((size_t)reps * sizeof *other);
    if (!other) die("malloc", "no memory");
    MPI_Allreduce(t, other, (int)reps, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    long all_bad = 0;
    MPI_Reduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank_ == 0) {
        qsort(other, (size_t)reps, sizeof *other, cmp_double);
        const char *pl = getenv("AMP_MPI_STAGED_PIPELINE");
        amp_mpi_exchange_stats xs;
        TRY_MPI(amp_mpi_exchange_get_stats(x, &xs));
        printf("path %s: %s\n", amp_mpi_path_name(info.path), info.reason);
        const char *ck = getenv("AMP_MPI_CHUNK_BYTES");
        printf("halo_rtt path %s pipeline %d chunk %s bytes %ld reps %ld median_us %.1f min_us %.1f p90_us %.1f "
               "fell_back %d staged_bytes %llu data %s\n",
               amp_mpi_path_name(info.path), !(pl && !strcmp(pl, "0")), ck && *ck ? ck : "0", bytes, reps,
               1e6 * other[reps / 2],
               1e6 * other[0], 1e6 * other[(reps * 9) / 10], info.fell_back ? 1 : 0,
               (unsigned long long)xs.bytes_staged, all_bad ? "WRONG" : "ok");
        fflush(stdout);
    }
    TRY_MPI(amp_mpi_exchange_destroy(x));
    TRY(amp_array_view_destroy(sv));
    TRY(amp_array_view_destroy(rv));
    TRY(amp_array_destroy(sa));
    TRY(amp_array_destroy(ra));
    free(t);
    free(other);
    free(init);
    MPI_Finalize();
    return all_bad ? 1 : 0;
}
