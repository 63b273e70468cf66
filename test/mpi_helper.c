/* mpi_helper.c — the MPI program test_mpi.c runs under mpiexec with 2 and 3 ranks on the CPU accelerator: halo exchanges between real ranks (a ring: each rank sends to the next and receives from the one before), with views whose sizes or element sizes differ between ranks. Each rank prints what its calls returned; test_mpi.c checks the lines. */
#include <hipamp.h>
#include <hipamp_mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Usage: mpiexec -n N mpi_helper SCENARIO [PATH]
 *   sizes PATH   three exchanges around the ring on one exchanger (PATH:
 *                host, staged or device): "short" (rank 0's receive view
 *                holds twice what rank N-1 sends), "long" (rank 1 sends
 *                twice what its receiver's view holds), then "good" (every
 *                view the same size: the data must arrive intact).
 *   elements     rank 1 creates its exchanger for 8-byte elements, the
 *                others for 4-byte ones.
 *   timeout PATH every rank but 1 sets a time-out of 1 s and exchanges
 *                around the ring ("exchange"), then tries once more
 *                ("again"); rank 1 never exchanges: it destroys its
 *                exchanger and finalizes.
 * Each rank prints "rank R STEP: STATUS: MESSAGE" for every call it checks
 * ("rank R data: ok" once a good exchange's data was checked) and ends
 * with "rank R done". Exit status 0 unless a call that must succeed failed
 * (the line says which), 2 for bad usage. */

#define W 64 /* floats in a halo */

static int rank_, size_;

static void say(const char *step, amp_status st)
{
    printf("rank %d %s: %s: %s\n", rank_, step, amp_status_name(st), st == AMP_OK ? "" : amp_mpi_last_error());
    fflush(stdout);
}

/* A call that must succeed; ends the job when it does not. */
static void must(amp_status st, const char *what, const char *msg)
{
    if (st == AMP_OK) return;
    printf("rank %d FAILED %s: %s: %s\n", rank_, what, amp_status_name(st), msg);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 1);
}
#define MUST(call) must((call), #call, amp_last_error())
#define MUST_MPI(call) must((call), #call, amp_mpi_last_error())

/* A 1-D exchange buffer of n floats: a host view on the host path, a view
 * of an array on q otherwise. */
typedef struct buffer {
    float host[2 * W];
    amp_array *a;
    amp_array_view *v;
} buffer;

static void buffer_make(buffer *b, amp_accelerator_view *q, amp_mpi_path path, int n, float value)
{
    for (int i = 0; i < 2 * W; ++i) b->host[i] = value + (float)i;
    b->a = NULL;
    if (path == AMP_MPI_PATH_HOST) {
        MUST(amp_array_view_create(b->host, sizeof(float), amp_extent_1d(n), AMP_READ_WRITE, &b->v));
    } else {
        MUST(amp_array_create(q, sizeof(float), amp_extent_1d(n), b->host, &b->a));
        MUST(amp_array_view_of_array(b->a, &b->v));
    }
}

/* Back to host memory, then gone. */
static void buffer_free(buffer *b)
{
    MUST(amp_array_view_destroy(b->v));
    if (b->a) {
        MUST(amp_array_copy_to_host(b->a, b->host));
        MUST(amp_array_destroy(b->a));
    }
}

/* One exchange around the ring, reported as step: send n_send floats to the
 * next rank, receive into a view of n_recv floats from the previous one.
 * received (may be NULL) gets the receive buffer afterwards. */
static amp_status ring(const char *step, amp_mpi_exchange *x, amp_accelerator_view *q, amp_mpi_path path,
                       int n_send, int n_recv, float *received)
{
    buffer s, r;
    buffer_make(&s, q, path, n_send, (float)(1000 * rank_));
    buffer_make(&r, q, path, n_recv, -1.0f);
    amp_mpi_halo two[2] = {{s.v, NULL, (rank_ + 1) % size_, 7, 7}, {NULL, r.v, (rank_ + size_ - 1) % size_, 7, 7}};
    amp_status st = amp_mpi_exchange_halos(x, two, 2);
    say(step, st);
    buffer_free(&s);
    buffer_free(&r);
    if (received) memcpy(received, r.host, sizeof r.host);
    return st;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    if (argc < 2) {
        if (rank_ == 0) fprintf(stderr, "usage: mpi_helper sizes PATH | elements | timeout PATH\n");
        MPI_Finalize();
        return 2;
    }
    const char *scenario = argv[1];
    amp_accelerator *acc = NULL;
    amp_accelerator_view *q = NULL;
    MUST(amp_accelerator_default(&acc));
    MUST(amp_accelerator_default_view(acc, &q));
    if (!strcmp(scenario, "elements")) {
        amp_mpi_exchange *x = NULL;
        amp_status st = amp_mpi_exchange_create(MPI_COMM_WORLD, q, rank_ == 1 ? 8 : 4, AMP_MPI_PATH_AUTO, &x);
        say("create", st);
        MUST_MPI(amp_mpi_exchange_destroy(x));
    } else if (!strcmp(scenario, "sizes") && argc >= 3) {
        amp_mpi_path path;
        MUST_MPI(amp_mpi_path_parse(argv[2], &path));
        amp_mpi_exchange *x = NULL;
        MUST_MPI(amp_mpi_exchange_create(MPI_COMM_WORLD, q, sizeof(float), path, &x));
        /* short: rank 0 expects 2W from rank N-1, which sends W. */
        ring("short", x, q, path, W, rank_ == 0 ? 2 * W : W, NULL);
        /* long: rank 1 sends 2W to rank 2 % N, which expects W. */
        ring("long", x, q, path, rank_ == 1 ? 2 * W : W, W, NULL);
        float got[2 * W];
        if (ring("good", x, q, path, W, W, got) == AMP_OK) {
            int from = (rank_ + size_ - 1) % size_, bad = 0;
            for (int i = 0; i < W; ++i) bad += got[i] != (float)(1000 * from) + (float)i;
            printf("rank %d data: %s\n", rank_, bad ? "WRONG" : "ok");
        }
        amp_mpi_exchange_stats xs;
        MUST_MPI(amp_mpi_exchange_get_stats(x, &xs));
        printf("rank %d stats: exchanges %llu bytes_sent %llu bytes_received %llu\n", rank_,
               (unsigned long long)xs.exchanges, (unsigned long long)xs.bytes_sent,
               (unsigned long long)xs.bytes_received);
        MUST_MPI(amp_mpi_exchange_destroy(x));
    } else if (!strcmp(scenario, "timeout") && argc >= 3) {
        amp_mpi_path path;
        MUST_MPI(amp_mpi_path_parse(argv[2], &path));
        amp_mpi_exchange *x = NULL;
        MUST_MPI(amp_mpi_exchange_create(MPI_COMM_WORLD, q, sizeof(float), path, &x));
        say("set_timeout NULL", amp_mpi_exchange_set_timeout(NULL, 5));
        if (rank_ != 1) {
            MUST_MPI(amp_mpi_exchange_set_timeout(x, 1000));
            ring("exchange", x, q, path, W, W, NULL);
            ring("again", x, q, path, W, W, NULL);
        }
        say("destroy", amp_mpi_exchange_destroy(x));
    } else {
        if (rank_ == 0) fprintf(stderr, "mpi_helper: unknown scenario %s\n", scenario);
        MPI_Finalize();
        return 2;
    }
    printf("rank %d done\n", rank_);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
