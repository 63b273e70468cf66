/* mpi_halo_rtt.c — the halo face round trip of hipamp::mpi between two ranks: each rank sends a face of BYTES (default 256 KiB) from an array on its accelerator to the other and receives the other's into another array, the exchange ended and the queue drained (the received face is on the device); per round trip the median, minimum and 90th percentile over REPS rounds after a warm-up, on the path asked for (--path, or AMP_MPI_PATH; AMP_MPI_STAGED_PIPELINE=0 for the staged path as before its pipeline, AMP_MPI_CHUNK_BYTES to send faces in chunks). Prints one line rank 0 writes for ci/gpu.sh:
 *
 *   halo_rtt path P pipeline 0|1 chunk C bytes B reps N median_us M min_us m p90_us p fell_back 0|1 ...
 *
 * and the path's reason. Data is checked once at the end (the last round's received face holds the peer's values).
 *
 * --raw-nccl times the same round trip through NCCL called directly (libnccl.so.2 on the queue's own CUDA stream,
 * one group of a send and a receive, then the same queue wait), hipamp::mpi left out: the line then starts
 * `halo_rtt path raw-nccl`. What hipamp adds to NCCL is the difference between the two lines. --parts K (with
 * --raw-nccl) splits the face into K sends and K receives of one group, to see whether NCCL spreads them over more
 * channels.
 *
 *   mpiexec -n 2 mpi_halo_rtt [--bytes B] [--reps N] [--warmup N] [--path auto|host|device|staged|nccl] [--raw-nccl] */
#include <hipamp.h>
#include <hipamp_mpi.h>

#include <dlfcn.h>
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

/* --raw-nccl: the few NCCL and CUDA driver calls it makes, loaded here (as
 * hipamp::mpi does) so that the benchmark builds without nccl.h. */
/* ncclUniqueId, passed by value to ncclCommInitRank. */
typedef struct raw_nccl_id {
    char bytes[128];
} raw_nccl_id;

typedef struct raw_nccl {
    int (*get_unique_id)(raw_nccl_id *id);
    int (*comm_init_rank)(void **comm, int n, raw_nccl_id id, int rank);
    int (*comm_destroy)(void *comm);
    int (*group_start)(void);
    int (*group_end)(void);
    int (*send)(const void *, size_t, int, int, void *, void *);
    int (*recv)(void *, size_t, int, int, void *, void *);
    void *comm, *stream;
} raw_nccl;

/* Loads NCCL, makes the stream's CUDA context current for this thread (for
 * the whole run: hipamp restores what it changes) and the communicator of
 * the two ranks. */
static void raw_nccl_open(raw_nccl *r, amp_accelerator_view *q)
{
    void *nccl = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL), *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!nccl || !cu) die("--raw-nccl", "libnccl.so.2 or libcuda.so.1 does not load");
    *(void **)&r->get_unique_id = dlsym(nccl, "ncclGetUniqueId");
    *(void **)&r->comm_init_rank = dlsym(nccl, "ncclCommInitRank");
    *(void **)&r->comm_destroy = dlsym(nccl, "ncclCommDestroy");
    *(void **)&r->group_start = dlsym(nccl, "ncclGroupStart");
    *(void **)&r->group_end = dlsym(nccl, "ncclGroupEnd");
    *(void **)&r->send = dlsym(nccl, "ncclSend");
    *(void **)&r->recv = dlsym(nccl, "ncclRecv");
    int (*get_ctx)(void *, void **) = NULL, (*push)(void *) = NULL;
    *(void **)&get_ctx = dlsym(cu, "cuStreamGetCtx");
    *(void **)&push = dlsym(cu, "cuCtxPushCurrent_v2");
    if (!r->get_unique_id || !r->comm_init_rank || !r->comm_destroy || !r->group_start || !r->group_end || !r->send ||
        !r->recv || !get_ctx || !push)
        die("--raw-nccl", "a symbol is missing from libnccl.so.2 or libcuda.so.1");
    TRY(amp_accelerator_view_native_queue(q, &r->stream));
    void *ctx = NULL;
    if (!r->stream || get_ctx(r->stream, &ctx) || push(ctx)) die("--raw-nccl", "the queue has no CUDA stream");
    raw_nccl_id id;
    memset(&id, 0, sizeof id);
    if (rank_ == 0 && r->get_unique_id(&id)) die("--raw-nccl", "ncclGetUniqueId failed");
    MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (r->comm_init_rank(&r->comm, 2, id, rank_)) die("--raw-nccl", "ncclCommInitRank failed");
}

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
    bool raw = false;
    long parts = 1;
    for (int i = 1; i < argc; i += 2) {
        if (!strcmp(argv[i], "--raw-nccl")) {
            raw = true;
            i--;
        } else if (i + 1 >= argc) {
            if (rank_ == 0) fprintf(stderr, "mpi_halo_rtt: %s needs a value\n", argv[i]);
            MPI_Finalize();
            return 2;
        } else if (!strcmp(argv[i], "--bytes")) bytes = strtol(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--reps")) reps = strtol(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--warmup")) warmup = strtol(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--parts")) parts = strtol(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--path")) {
            if (amp_mpi_path_parse(argv[i + 1], &path) != AMP_OK) die("--path", amp_mpi_last_error());
        } else {
            if (rank_ == 0) fprintf(stderr, "mpi_halo_rtt: unknown argument %s\n", argv[i]);
            MPI_Finalize();
            return 2;
        }
    }
    if (size != 2 || bytes < 4 || bytes % 4 || reps < 1 || warmup < 0 || parts < 1 || bytes % (4 * parts)) {
        if (rank_ == 0)
            fprintf(stderr, "mpi_halo_rtt: 2 ranks, --bytes a multiple of 4, --reps >= 1, --parts dividing the floats\n");
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
    raw_nccl rn = {0};
    void *sp = NULL, *rp = NULL;
    if (raw) {
        raw_nccl_open(&rn, q);
        TRY(amp_array_view_native_handle(sv, q, AMP_READ_ONLY, &sp));
        TRY(amp_array_view_native_handle(rv, q, AMP_WRITE_ONLY, &rp));
        TRY(amp_accelerator_view_wait(q));
    }
    double *t = malloc((size_t)reps * sizeof *t);
    if (!t) die("malloc", "no memory");
    MPI_Barrier(MPI_COMM_WORLD);
    for (long k = 0; k < warmup + reps; ++k) {
        double t0 = MPI_Wtime();
        if (raw) {
            /* Bytes (ncclUint8 = 1), as hipamp::mpi sends them. */
            const size_t part = (size_t)(bytes / parts);
            int bad = rn.group_start();
            for (long k = 0; k < parts && !bad; ++k)
                bad = rn.send((const char *)sp + k * part, part, 1, peer, rn.comm, rn.stream) ||
                      rn.recv((char *)rp + k * part, part, 1, peer, rn.comm, rn.stream);
            if (rn.group_end() || bad) die("--raw-nccl", "an NCCL call failed");
        } else {
            TRY_MPI(amp_mpi_exchange_halos(x, &h, 1));
        }
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
        printf("halo_rtt path %s%s pipeline %d chunk %s bytes %ld reps %ld median_us %.1f min_us %.1f p90_us %.1f "
               "fell_back %d staged_bytes %llu data %s\n",
               raw ? "raw-nccl" : amp_mpi_path_name(info.path), raw && parts > 1 ? " (in parts)" : "", !(pl && !strcmp(pl, "0")), ck && *ck ? ck : "0", bytes, reps,
               1e6 * other[reps / 2],
               1e6 * other[0], 1e6 * other[(reps * 9) / 10], info.fell_back ? 1 : 0,
               (unsigned long long)xs.bytes_staged, all_bad ? "WRONG" : "ok");
        fflush(stdout);
    }
    if (raw) rn.comm_destroy(rn.comm);
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
