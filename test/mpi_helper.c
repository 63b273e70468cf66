/* mpi_helper.c — the MPI program test_mpi.c runs under mpiexec with 2 and 3 ranks on the CPU accelerator: halo exchanges between real ranks (a ring: each rank sends to the next and receives from the one before), with views whose sizes or element sizes differ between ranks. Each rank prints what its calls returned; test_mpi.c checks the lines. */
/* setenv, unsetenv, nanosleep (POSIX; the helper is built as plain C11). */
#define _POSIX_C_SOURCE 200809L

#include <hipamp.h>
#include <hipamp_mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Usage: mpiexec -n N mpi_helper SCENARIO [PATH]
 *   sizes PATH   three exchanges around the ring on one exchanger (PATH:
 *                host, staged or device): "short" (rank 0's receive view
 *                holds twice what rank N-1 sends), "long" (rank 1 sends
 *                twice what its receiver's view holds), then "good" (every
 *                view the same size: the data must arrive intact).
 *   elements     rank 1 creates its exchanger for 8-byte elements, the
 *                others for 4-byte ones ("create"); then rank 1 passes NULL
 *                for the exchanger to create ("null out") and for the local
 *                rank's count ("null local"), the others good pointers:
 *                every rank must return (none waits for rank 1 for ever);
 *                then rank 1 creates one for elements of 2^63 bytes, the
 *                others for 4-byte ones ("huge"); then every rank's local
 *                rank on MPI_COMM_WORLD ("local": "L of N") and on the
 *                ranks reordered last to first ("reversed local": "L of N";
 *                the ranks of one node, which a test's are).
 *   nonblocking PATH
 *                three rounds of a periodic row exchange on a grid of 6 x W
 *                cells (rows 1..4 owned, 0 and 5 halos), written by a
 *                kernel first, once with amp_mpi_exchange_rows on one
 *                exchanger and once begun on another, with a kernel writing
 *                rows 2..3 between its begin and its end: prints "rank R
 *                rounds: ok" when both grids hold what they must, the two
 *                exchangers' statistics ("rank R stats blocking|begun:
 *                exchanges E messages M bytes B staged S"), then two
 *                exchanges in flight ended out of order, in order, and
 *                twice ("rank R end second first: ...", "end first", "end
 *                first again", "end second") and "rank R in flight: ok"
 *                when both delivered.
 *   timeout PATH every rank but 1 sets a time-out of 1 s and exchanges
 *                around the ring ("exchange"), then tries once more
 *                ("again"); rank 1 never exchanges: it waits in an
 *                MPI_Barrier until the others are done, then destroys its
 *                exchanger and finalizes.
 *   leaving PATH finalize|destroy
 *                rank 1 never exchanges: it calls MPI_Finalize at once
 *                (finalize; its destroy comes after), or destroys its
 *                exchanger first (destroy); every other rank exchanges
 *                around the ring with no time-out set ("exchange", then
 *                "rank R waited: S s"), once more ("again") and destroys.
 *                A rank still waiting after 30 s ends the job (SIGALRM).
 *   path PATH    creates an exchanger with PATH (nccl: with the stand-in
 *                library test_mpi names in AMP_MPI_NCCL_LIBRARY), prints
 *                "rank R path: NAME fell_back 0|1: REASON", then one good
 *                exchange around the ring ("good", "data") and three
 *                all-reduces ("allreduce: ok", "rank R reductions:
 *                allreduces A on_device D").
 *   chunks PATH  first an exchange around the ring of 3572 floats into views
 *                of 2048 ("mismatch"), then one of three faces: 5000 floats
 *                (1-D), rows 1..3 of a 5 x 2000 grid (a section), and 6000
 *                floats of a shape each rank has its own: on even ranks
 *                columns 1..3 of a 2000 x 5 grid of host memory (a strided
 *                host view), on odd ones a 3 x 40 x 50 box of a 4 x 40 x 60
 *                array (strided in two dimensions), each rank's values its
 *                own; prints "data: ok" when all three arrived intact (in
 *                row-major order, nothing around them changed), "rank R
 *                messages: sent S received V bytes B", and "rank R destroy
 *                arrays: STATUS" for its arrays destroyed (their views
 *                first) while the exchanger still lives (run with
 *                AMP_MPI_CHUNK_BYTES to split the faces); with it set, the
 *                mismatch once more on a new exchanger with MPI_Improbe
 *                failing ("drain fault").
 *   mismatch     rank 0 asks for the nccl path, the others for staged:
 *                every rank's "create" line says why it failed.
 *   faults       (the nccl path, with the stand-in library) steps of the
 *                library made to fail through its test seam
 *                (amp_mpi_test_fault below): rank 1 runs out of memory
 *                before ncclCommInitRank ("rank R open fault: PATH
 *                fell_back F: REASON", then a good exchange: "open fault
 *                data: ok"); then, on a working exchanger, an exchange is
 *                begun, a second begin runs out of memory on every rank
 *                ("begin out of memory"), and the first ends ("end
 *                first", "first data: ok"), another exchange works
 *                ("after"), and the exchanger is destroyed ("destroy").
 *                A rank still running after 20 s ends the job (SIGALRM).
 *   refused PATH rank 1 refuses its own all-reduce (a float view given as
 *                AMP_MPI_DOUBLE) on an exchanger with a time-out of 500 ms
 *                ("refused with a time-out"; the others' call, then their
 *                "again"), then on one with none ("refused"), which it
 *                destroys ("destroy"): the others' call ends as it left
 *                ("peer left", "rank R waited: S s"); rank 1 keeps the first
 *                until the others are done (MPI_Barrier). A rank still running
 *                after 20 s ends the job (SIGALRM).
 *   inter        ranks split by parity into two groups joined by an
 *                intercommunicator (2 ranks or more): amp_mpi_exchange_create,
 *                amp_mpi_local_rank and amp_mpi_select_accelerator on it
 *                ("inter create", "inter local rank", "inter select"), then
 *                a creation on the groups merged ("merged create").
 *   overrun      (2 ranks or more; the others only create and destroy) on
 *                the host, staged and device paths, faces whole and in
 *                4096-byte chunks: rank 0 sends 3000 floats to rank 1, whose
 *                receive view is the first 2000 of 6000: rank 1 prints
 *                "overrun PATH whole|chunked", "outside PATH whole|chunked: N
 *                written" (floats past its view changed), then of a good
 *                exchange on the same exchanger "after PATH ..." and "after
 *                PATH ... data: ok". A rank still running after 30 s ends the
 *                job (SIGALRM).
 *   progress [a|b|c]
 *                (2 ranks) faces of 65536 floats (too large to go eagerly)
 *                of host memory, on exchangers A and B: rank 0 begins an
 *                exchange on A and, before it ends it ("a end", "b end A",
 *                "c end"), waits in another call: (a) a sum of rank + 1 over
 *                the ranks on A ("a begin", "a allreduce"; rank 1: "a
 *                exchange" on A, then "a allreduce"), (b) a blocking
 *                exchange on B ("b begin A", "b exchange B"; rank 1: "b
 *                exchange A", "b exchange B"), (c) the creation of C ("c
 *                begin", "c create"; rank 1: "c exchange" on A, then "c
 *                create"). Each rank prints "a data", "b data A", "b data
 *                B", "c data" ("ok": the peer's values arrived) and "a sum:
 *                S". Only one part when named. A rank still running after
 *                60 s ends the job (SIGALRM).
 *   stall        (2 ranks) rank 0, with a time-out of 1000 ms, begins and
 *                ends an exchange of 2^20 floats with rank 1 ("begin",
 *                "end", "rank 0 waited: S s"); rank 1 begins its own
 *                ("begin"), then makes no MPI call for 6 s, then ends it
 *                ("end"); both destroy ("destroy").
 *   pairs        (2 ranks; faces in 4096-byte chunks) one exchange of two
 *                halos with the same peer and tag: rank 0 sends 3000 floats
 *                where rank 1's view holds 100, then 10 floats into 10
 *                ("pair"; rank 1 exchanges 0.3 s late, when every message
 *                has arrived): "pair data 1" (both ranks) and "pair data 0"
 *                (rank 0, which receives 100 floats into 100) say "ok" when
 *                the peer's values arrived; then a good exchange of 10
 *                floats ("good", "good data").
 * Each rank prints "rank R STEP: STATUS: MESSAGE" for every call it checks
 * ("rank R data: ok" once a good exchange's data was checked) and ends
 * with "rank R done". Exit status 0 unless a call that must succeed failed
 * (the line says which), 2 for bad usage. */

#define W 64 /* floats in a halo */

/* LeakSanitizer builds, as heat_mpi: what MPI_Init allocates and drops is
 * the MPI library's, and the leak check runs before MPI_Finalize, while the
 * library's own allocations are still reachable (it frees little at
 * finalize and unloads its plugins, so they would be reported at exit with
 * no library to suppress them by). No-ops in other builds. */
extern void __lsan_do_leak_check(void) __attribute__((weak));
extern void __lsan_disable(void) __attribute__((weak));
extern void __lsan_enable(void) __attribute__((weak));

static void finalize(void)
{
    if (__lsan_do_leak_check) __lsan_do_leak_check();
    MPI_Finalize();
}

static int rank_, size_;

static void say(const char *step, amp_status st)
{
    printf("rank %d %s: %s: %s\n", rank_, step, amp_status_name(st), st == AMP_OK ? "" : amp_mpi_last_error());
    fflush(stdout);
}

/* The library's test seam (mpi/errors.c): the step fault_step fails on
 * rank fault_rank (-1: every rank); "" fails nothing. */
static const char *fault_step = "";
static int fault_rank = -1;
int amp_mpi_test_fault(const char *where);
int amp_mpi_test_fault(const char *where)
{
    return !strcmp(where, fault_step) && (fault_rank < 0 || fault_rank == rank_);
}

/* MPI_Improbe fails (MPI_ERR_OTHER) while set, as an MPI whose probe
 * failed does, for a message of fewer than 4096 bytes (a face's last chunk
 * with AMP_MPI_CHUNK_BYTES=4096: the surplus a drain takes; the receives'
 * own matches, of full chunks, go through): the profiling interface makes
 * this the one libhipamp_mpi calls. */
static int improbe_fails;
int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
    if (improbe_fails) {
        /* A look first (MPI_Iprobe matches nothing); nothing there is
         * "nothing yet", as the probe itself would say. */
        int there = 0, bytes = 0;
        MPI_Status peek;
        int rc = PMPI_Iprobe(source, tag, comm, &there, &peek);
        if (rc != MPI_SUCCESS) return rc;
        if (!there) {
            *flag = 0;
            return MPI_SUCCESS;
        }
        if (PMPI_Get_count(&peek, MPI_BYTE, &bytes) == MPI_SUCCESS && bytes < 4096) return MPI_ERR_OTHER;
    }
    return PMPI_Improbe(source, tag, comm, flag, message, status);
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

/* --------------------------------------------------------- nonblocking */

extern const char mpi_helper_kernels[];
static amp_kernel *fill_k;

#define GR 6 /* grid rows: halo, 4 owned, halo */

/* v(r, c) = base + r * 1024 + c on q (the kernel of test/kernels/mpi.hip). */
static void fill(amp_accelerator_view *q, amp_array_view *v, float base)
{
    amp_extent e;
    MUST(amp_array_view_get_extent(v, &e));
    amp_arg args[] = {amp_arg_view(v), amp_arg_float32(base)};
    MUST(amp_parallel_for_each(q, e, fill_k, args, 2));
}

/* A grid and the sections an exchange and the kernels use. */
typedef struct grid {
    float host[GR * W];
    amp_array *a;
    amp_array_view *v, *owned, *inner, *first, *last, *halo_lo, *halo_hi;
} grid;

static amp_array_view *rows(amp_array_view *v, int r0, int n)
{
    amp_array_view *s = NULL;
    MUST(amp_array_view_section(v, amp_index_2d(r0, 0), amp_extent_2d(n, W), &s));
    return s;
}

static void grid_make(grid *g, amp_accelerator_view *q, amp_mpi_path path)
{
    for (int i = 0; i < GR * W; ++i) g->host[i] = -1.0f;
    g->a = NULL;
    if (path == AMP_MPI_PATH_HOST) {
        MUST(amp_array_view_create(g->host, sizeof(float), amp_extent_2d(GR, W), AMP_READ_WRITE, &g->v));
    } else {
        MUST(amp_array_create(q, sizeof(float), amp_extent_2d(GR, W), g->host, &g->a));
        MUST(amp_array_view_of_array(g->a, &g->v));
    }
    g->owned = rows(g->v, 1, 4);
    g->inner = rows(g->v, 2, 2);
    g->first = rows(g->v, 1, 1);
    g->last = rows(g->v, 4, 1);
    g->halo_lo = rows(g->v, 0, 1);
    g->halo_hi = rows(g->v, 5, 1);
}

/* The grid's values on the host, then gone. */
static void grid_free(grid *g)
{
    amp_array_view *all[] = {g->owned, g->inner, g->first, g->last, g->halo_lo, g->halo_hi, g->v};
    for (int i = 0; i < 7; ++i) MUST(amp_array_view_destroy(all[i]));
    if (g->a) {
        MUST(amp_array_copy_to_host(g->a, g->host));
        MUST(amp_array_destroy(g->a));
    }
}

/* What cell (r, c) of `rank`'s grid holds after a round with owned base b
 * and inner base i: its own rows, its neighbours' edge rows in the halos. */
static float expect(int rank, int r, int c, int round)
{
    const int lo = (rank + size_ - 1) % size_, hi = (rank + 1) % size_;
    const float own = 10000.0f * (float)rank + 100.0f * (float)round, inner = own + 50.0f;
    if (r == 0) return 10000.0f * (float)lo + 100.0f * (float)round + (float)(3 * 1024 + c); /* lo's row 4 */
    if (r == GR - 1) return 10000.0f * (float)hi + 100.0f * (float)round + (float)c;         /* hi's row 1 */
    if (r == 2 || r == 3) return inner + (float)((r - 2) * 1024 + c);
    return own + (float)((r - 1) * 1024 + c);
}

static int grid_wrong(const grid *g, int round, const char *what)
{
    for (int r = 0; r < GR; ++r)
        for (int c = 0; c < W; ++c)
            if (g->host[r * W + c] != expect(rank_, r, c, round)) {
                printf("rank %d %s: cell (%d, %d) is %.9g, want %.9g\n", rank_, what, r, c,
                       (double)g->host[r * W + c], (double)expect(rank_, r, c, round));
                return 1;
            }
    return 0;
}

static void print_stats(amp_mpi_exchange *x, const char *which)
{
    amp_mpi_exchange_stats s;
    MUST_MPI(amp_mpi_exchange_get_stats(x, &s));
    printf("rank %d stats %s: exchanges %llu messages %llu bytes %llu staged %llu\n", rank_, which,
           (unsigned long long)s.exchanges, (unsigned long long)(s.messages_sent + s.messages_received),
           (unsigned long long)(s.bytes_sent + s.bytes_received), (unsigned long long)s.bytes_staged);
}

static void nonblocking(amp_accelerator *acc, amp_accelerator_view *q, amp_mpi_path path)
{
    amp_program *p = NULL;
    MUST(amp_program_build(acc, mpi_helper_kernels, NULL, &p));
    MUST(amp_program_get_kernel(p, "mpi_fill", &fill_k));
    amp_mpi_exchange *xb = NULL, *xn = NULL;
    MUST_MPI(amp_mpi_exchange_create(MPI_COMM_WORLD, q, sizeof(float), path, &xb));
    MUST_MPI(amp_mpi_exchange_create(MPI_COMM_WORLD, q, sizeof(float), path, &xn));
    const int lo = (rank_ + size_ - 1) % size_, hi = (rank_ + 1) % size_;
    int wrong = 0;
    for (int round = 0; round < 3; ++round) {
        const float own = 10000.0f * (float)rank_ + 100.0f * (float)round;
        grid b, n;
        grid_make(&b, q, path);
        grid_make(&n, q, path);
        /* Blocking: the whole grid, then the exchange. */
        fill(q, b.owned, own);
        fill(q, b.inner, own + 50.0f);
        MUST_MPI(amp_mpi_exchange_rows(xb, lo, b.first, b.halo_lo, hi, b.last, b.halo_hi));
        /* Begun: the edge rows travel while a kernel writes the inner rows. */
        fill(q, n.owned, own);
        amp_mpi_pending pe;
        MUST_MPI(amp_mpi_exchange_rows_begin(xn, lo, n.first, n.halo_lo, hi, n.last, n.halo_hi, &pe));
        fill(q, n.inner, own + 50.0f);
        bool done = false;
        MUST_MPI(amp_mpi_exchange_test(xn, pe, &done));
        MUST_MPI(amp_mpi_exchange_end(xn, pe));
        grid_free(&b);
        grid_free(&n);
        wrong += grid_wrong(&b, round, "blocking") + grid_wrong(&n, round, "begun");
        if (memcmp(b.host, n.host, sizeof b.host)) wrong++;
    }
    printf("rank %d rounds: %s\n", rank_, wrong ? "WRONG" : "ok");
    print_stats(xb, "blocking");
    print_stats(xn, "begun");

    /* Two in flight: A then B; B cannot end first, A cannot end twice. */
    grid ga, gb;
    grid_make(&ga, q, path);
    grid_make(&gb, q, path);
    fill(q, ga.owned, 10000.0f * (float)rank_);
    fill(q, ga.inner, 10000.0f * (float)rank_ + 50.0f);
    fill(q, gb.owned, 10000.0f * (float)rank_ + 100.0f);
    fill(q, gb.inner, 10000.0f * (float)rank_ + 150.0f);
    amp_mpi_pending a, bb;
    MUST_MPI(amp_mpi_exchange_rows_begin(xn, lo, ga.first, ga.halo_lo, hi, ga.last, ga.halo_hi, &a));
    MUST_MPI(amp_mpi_exchange_rows_begin(xn, lo, gb.first, gb.halo_lo, hi, gb.last, gb.halo_hi, &bb));
    say("end second first", amp_mpi_exchange_end(xn, bb));
    say("end first", amp_mpi_exchange_end(xn, a));
    say("end first again", amp_mpi_exchange_end(xn, a));
    bool done = false;
    say("test first", amp_mpi_exchange_test(xn, a, &done));
    say("end second", amp_mpi_exchange_end(xn, bb));
    grid_free(&ga);
    grid_free(&gb);
    int bad = grid_wrong(&ga, 0, "first in flight") + grid_wrong(&gb, 1, "second in flight");
    printf("rank %d in flight: %s\n", rank_, bad ? "WRONG" : "ok");
    MUST_MPI(amp_mpi_exchange_destroy(xb));
    MUST_MPI(amp_mpi_exchange_destroy(xn));
    MUST(amp_program_destroy(p));
}

/* Three all-reduces on arrays of q: a sum of doubles, a max of int64s and
 * a min of floats, each checked against what every rank's values give. */
static void allreduces(amp_mpi_exchange *x, amp_accelerator_view *q)
{
    double d[3] = {rank_ + 1.0, 0.5 * rank_, -rank_ - 0.25};
    int64_t l[2] = {rank_ * 3, -rank_};
    float f[2] = {(float)rank_, 10.0f - (float)rank_};
    amp_array *ad = NULL, *al = NULL, *af = NULL;
    amp_array_view *vd = NULL, *vl = NULL, *vf = NULL;
    MUST(amp_array_create(q, sizeof d[0], amp_extent_1d(3), d, &ad));
    MUST(amp_array_create(q, sizeof l[0], amp_extent_1d(2), l, &al));
    MUST(amp_array_create(q, sizeof f[0], amp_extent_1d(2), f, &af));
    MUST(amp_array_view_of_array(ad, &vd));
    MUST(amp_array_view_of_array(al, &vl));
    MUST(amp_array_view_of_array(af, &vf));
    amp_status st = amp_mpi_exchange_allreduce(x, vd, AMP_MPI_DOUBLE, AMP_MPI_SUM);
    if (st == AMP_OK) st = amp_mpi_exchange_allreduce(x, vl, AMP_MPI_INT64, AMP_MPI_MAX);
    if (st == AMP_OK) st = amp_mpi_exchange_allreduce(x, vf, AMP_MPI_FLOAT, AMP_MPI_MIN);
    say("allreduce calls", st);
    MUST(amp_array_view_destroy(vd));
    MUST(amp_array_view_destroy(vl));
    MUST(amp_array_view_destroy(vf));
    MUST(amp_array_copy_to_host(ad, d));
    MUST(amp_array_copy_to_host(al, l));
    MUST(amp_array_copy_to_host(af, f));
    double n = size_;
    bool ok = d[0] == n * (n + 1) / 2 && d[1] == 0.5 * n * (n - 1) / 2 && d[2] == -n * (n - 1) / 2 - 0.25 * n &&
              l[0] == 3 * (size_ - 1) && l[1] == 0 && f[0] == 0.0f && f[1] == 10.0f - (float)(size_ - 1);
    printf("rank %d allreduce: %s\n", rank_, ok ? "ok" : "WRONG");
    amp_mpi_exchange_stats xs;
    MUST_MPI(amp_mpi_exchange_get_stats(x, &xs));
    printf("rank %d reductions: allreduces %llu on_device %llu\n", rank_, (unsigned long long)xs.allreduces,
           (unsigned long long)xs.allreduces_on_device);
    MUST(amp_array_destroy(ad));
    MUST(amp_array_destroy(al));
    MUST(amp_array_destroy(af));
}

/* One ring exchange of W floats begun on x (the views made here, freed by
 * ring_end, which checks the data: "STEP data: ok"). */
typedef struct ring_state {
    buffer s, r;
    amp_mpi_pending p;
} ring_state;

static amp_status ring_begin(ring_state *g, amp_mpi_exchange *x, amp_accelerator_view *q, float base)
{
    buffer_make(&g->s, q, AMP_MPI_PATH_STAGED, W, base + (float)(1000 * rank_));
    buffer_make(&g->r, q, AMP_MPI_PATH_STAGED, W, -1.0f);
    amp_mpi_halo two[2] = {{g->s.v, NULL, (rank_ + 1) % size_, 7, 7}, {NULL, g->r.v, (rank_ + size_ - 1) % size_, 7, 7}};
    return amp_mpi_exchange_begin(x, two, 2, &g->p);
}

static void ring_end(ring_state *g, amp_status ended, float base, const char *step)
{
    buffer_free(&g->s);
    buffer_free(&g->r);
    if (ended != AMP_OK) return;
    int from = (rank_ + size_ - 1) % size_, bad = 0;
    for (int i = 0; i < W; ++i) bad += g->r.host[i] != base + (float)(1000 * from) + (float)i;
    printf("rank %d %s data: %s\n", rank_, step, bad ? "WRONG" : "ok");
}

/* See "faults" above. */
static void faults(amp_accelerator_view *q)
{
    alarm(20);
    amp_mpi_exchange *x = NULL;
    amp_mpi_path_info info;
    fault_step = "nccl_open";
    fault_rank = 1;
    MUST_MPI(amp_mpi_exchange_create(MPI_COMM_WORLD, q, sizeof(float), AMP_MPI_PATH_NCCL, &x));
    fault_step = "";
    MUST_MPI(amp_mpi_exchange_get_path(x, &info));
    printf("rank %d open fault: %s fell_back %d: %s\n", rank_, amp_mpi_path_name(info.path), info.fell_back ? 1 : 0,
           info.reason);
    ring_state g;
    ring_end(&g, ring_begin(&g, x, q, 0) == AMP_OK ? amp_mpi_exchange_end(x, g.p) : AMP_ERROR_DEVICE, 0, "open fault");
    MUST_MPI(amp_mpi_exchange_destroy(x));

    MUST_MPI(amp_mpi_exchange_create(MPI_COMM_WORLD, q, sizeof(float), AMP_MPI_PATH_NCCL, &x));
    ring_state first, second, after;
    MUST_MPI(ring_begin(&first, x, q, 100));
    fault_step = "nccl_post";
    fault_rank = -1;
    amp_status st = ring_begin(&second, x, q, 200);
    fault_step = "";
    say("begin out of memory", st);
    ring_end(&second, AMP_ERROR_DEVICE, 200, "second");
    st = amp_mpi_exchange_end(x, first.p);
    say("end first", st);
    ring_end(&first, st, 100, "first");
    st = ring_begin(&after, x, q, 300);
    if (st == AMP_OK) st = amp_mpi_exchange_end(x, after.p);
    say("after", st);
    ring_end(&after, st, 300, "after");
    say("destroy", amp_mpi_exchange_destroy(x));
}

/* See "refused" above. */
static void refused(amp_accelerator_view *q, amp_mpi_path path)
{
    alarm(20);
    amp_mpi_exchange *timed = NULL, *untimed = NULL;
    MUST_MPI(amp_mpi_exchange_create(MPI_COMM_WORLD, q, sizeof(float), path, &timed));
    MUST_MPI(amp_mpi_exchange_create(MPI_COMM_WORLD, q, sizeof(float), path, &untimed));
    MUST_MPI(amp_mpi_exchange_set_timeout(timed, 500));
    double d = rank_ + 1.0;
    float f = 1.0f;
    amp_array_view *dv = NULL, *fv = NULL;
    MUST(amp_array_view_create(&d, sizeof d, amp_extent_1d(1), AMP_READ_WRITE, &dv));
    MUST(amp_array_view_create(&f, sizeof f, amp_extent_1d(1), AMP_READ_WRITE, &fv));
    amp_array_view *mine = rank_ == 1 ? fv : dv;
    say("refused with a time-out", amp_mpi_exchange_allreduce(timed, mine, AMP_MPI_DOUBLE, AMP_MPI_SUM));
    if (rank_ != 1) say("again", amp_mpi_exchange_allreduce(timed, dv, AMP_MPI_DOUBLE, AMP_MPI_SUM));
    if (rank_ == 1) {
        say("refused", amp_mpi_exchange_allreduce(untimed, mine, AMP_MPI_DOUBLE, AMP_MPI_SUM));
        say("destroy", amp_mpi_exchange_destroy(untimed));
    } else {
        double t0 = MPI_Wtime();
        say("peer left", amp_mpi_exchange_allreduce(untimed, dv, AMP_MPI_DOUBLE, AMP_MPI_SUM));
        printf("rank %d waited: %.3f s\n", rank_, MPI_Wtime() - t0);
        say("destroy", amp_mpi_exchange_destroy(untimed));
    }
    /* Rank 1 keeps its timed exchanger until the others are done: only
     * their time-out ends their first call. */
    MPI_Barrier(MPI_COMM_WORLD);
    MUST(amp_array_view_destroy(dv));
    MUST(amp_array_view_destroy(fv));
    MUST_MPI(amp_mpi_exchange_destroy(timed));
}

/* See "chunks" above. */
static void chunks(amp_accelerator_view *q, amp_mpi_path path)
{
    enum { N1 = 5000, GR2 = 5, GC2 = 2000, N3 = 6000, HR3 = 2000, HC3 = 5, P0 = 4, P1 = 40, P2 = 60 };
    const bool even = rank_ % 2 == 0;
    const int next = (rank_ + 1) % size_, prev = (rank_ + size_ - 1) % size_;
    float *a = malloc(N1 * sizeof *a), *b = malloc(N1 * sizeof *b);
    float *g = malloc(GR2 * GC2 * sizeof *g), *h = malloc(GR2 * GC2 * sizeof *h);
    /* Face 3: host memory of HR3 x HC3 on even ranks, of P0 x P1 x P2 (an
     * array's) on odd ones. */
    const int n3 = even ? HR3 * HC3 : P0 * P1 * P2;
    float *s3 = malloc((size_t)n3 * sizeof *s3), *r3 = malloc((size_t)n3 * sizeof *r3);
    if (!a || !b || !g || !h || !s3 || !r3) must(AMP_ERROR_OUT_OF_MEMORY, "malloc", "no memory");
    for (int i = 0; i < N1; ++i) a[i] = (float)(rank_ * 100000 + i), b[i] = -1;
    for (int i = 0; i < GR2 * GC2; ++i) g[i] = (float)(rank_ * 100000 + i), h[i] = -1;
    for (int i = 0; i < n3; ++i) s3[i] = -2, r3[i] = -1;
    /* Element k of face 3 (row-major) at its offset in s3 or r3. */
#define FACE3_AT(k, ev)                                                                                     \
    ((ev) ? ((k) / 3) * HC3 + 1 + (k) % 3                                                                   \
          : (1 + (k) / (P1 * 50)) * P1 * P2 + ((k) / 50 % P1) * P2 + 5 + (k) % 50)
    for (int k = 0; k < N3; ++k) s3[FACE3_AT(k, even)] = (float)(rank_ * 100000 + k);
    amp_array *aa = NULL, *ab = NULL, *ag = NULL, *ah = NULL, *as3 = NULL, *ar3 = NULL;
    amp_array_view *va = NULL, *vb = NULL, *vg = NULL, *vh = NULL, *sg = NULL, *sh = NULL;
    amp_array_view *vs3 = NULL, *vr3 = NULL, *ss3 = NULL, *sr3 = NULL;
    MUST(amp_array_create(q, sizeof(float), amp_extent_1d(N1), a, &aa));
    MUST(amp_array_create(q, sizeof(float), amp_extent_1d(N1), b, &ab));
    MUST(amp_array_create(q, sizeof(float), amp_extent_2d(GR2, GC2), g, &ag));
    MUST(amp_array_create(q, sizeof(float), amp_extent_2d(GR2, GC2), h, &ah));
    MUST(amp_array_view_of_array(aa, &va));
    MUST(amp_array_view_of_array(ab, &vb));
    MUST(amp_array_view_of_array(ag, &vg));
    MUST(amp_array_view_of_array(ah, &vh));
    MUST(amp_array_view_section(vg, amp_index_2d(1, 0), amp_extent_2d(3, GC2), &sg));
    MUST(amp_array_view_section(vh, amp_index_2d(1, 0), amp_extent_2d(3, GC2), &sh));
    if (even) {
        MUST(amp_array_view_create(s3, sizeof(float), amp_extent_2d(HR3, HC3), AMP_READ_WRITE, &vs3));
        MUST(amp_array_view_create(r3, sizeof(float), amp_extent_2d(HR3, HC3), AMP_READ_WRITE, &vr3));
        MUST(amp_array_view_section(vs3, amp_index_2d(0, 1), amp_extent_2d(HR3, 3), &ss3));
        MUST(amp_array_view_section(vr3, amp_index_2d(0, 1), amp_extent_2d(HR3, 3), &sr3));
    } else {
        const int box[3] = {3, P1, 50}, at[3] = {1, 0, 5};
        MUST(amp_array_create(q, sizeof(float), amp_extent_3d(P0, P1, P2), s3, &as3));
        MUST(amp_array_create(q, sizeof(float), amp_extent_3d(P0, P1, P2), r3, &ar3));
        MUST(amp_array_view_of_array(as3, &vs3));
        MUST(amp_array_view_of_array(ar3, &vr3));
        MUST(amp_array_view_section(vs3, amp_index_3d(at[0], at[1], at[2]), amp_extent_3d(box[0], box[1], box[2]),
                                    &ss3));
        MUST(amp_array_view_section(vr3, amp_index_3d(at[0], at[1], at[2]), amp_extent_3d(box[0], box[1], box[2]),
                                    &sr3));
    }
    amp_mpi_exchange *x = NULL;
    MUST_MPI(amp_mpi_exchange_create(MPI_COMM_WORLD, q, sizeof(float), path, &x));
    /* Faces cut differently on the two sides would fail, or wait for ever. */
    MUST_MPI(amp_mpi_exchange_set_timeout(x, 20000));
    /* Every rank sends more than its receiver's view holds, more chunks
     * too: each must say so, and take the chunks its view has no room for,
     * so that none meets the next exchange's receives of the same tag. */
    amp_array_view *more = NULL, *fewer = NULL;
    MUST(amp_array_view_section(va, amp_index_1d(0), amp_extent_1d(3 * 1024 + 500), &more));
    MUST(amp_array_view_section(vb, amp_index_1d(0), amp_extent_1d(2 * 1024), &fewer));
    amp_mpi_halo odd[2] = {{more, NULL, next, 3, 3}, {NULL, fewer, prev, 3, 3}};
    say("mismatch", amp_mpi_exchange_halos(x, odd, 2));
    MUST(amp_array_view_destroy(more));
    MUST(amp_array_view_destroy(fewer));
    amp_mpi_halo hs[6] = {{va, NULL, next, 3, 3},  {NULL, vb, prev, 3, 3},  {sg, NULL, next, 4, 4},
                          {NULL, sh, prev, 4, 4},  {ss3, NULL, next, 5, 5}, {NULL, sr3, prev, 5, 5}};
    say("exchange", amp_mpi_exchange_halos(x, hs, 6));
    amp_mpi_exchange_stats xs;
    MUST_MPI(amp_mpi_exchange_get_stats(x, &xs));
    amp_array_view *views[] = {sg, sh, va, vb, vg, vh, ss3, sr3, vs3, vr3};
    for (int i = 0; i < 10; ++i) MUST(amp_array_view_destroy(views[i]));
    MUST(amp_array_copy_to_host(ab, b));
    MUST(amp_array_copy_to_host(ah, h));
    if (ar3) MUST(amp_array_copy_to_host(ar3, r3));
    /* The exchange ended and every view is gone: nothing of the exchanger's
     * keeps the arrays. */
    amp_status st = AMP_OK;
    amp_array *arrays[] = {aa, ab, ag, ah, as3, ar3};
    for (int i = 0; i < 6; ++i) {
        amp_status d = arrays[i] ? amp_array_destroy(arrays[i]) : AMP_OK;
        if (d != AMP_OK && st == AMP_OK) {
            st = d;
            printf("rank %d destroy arrays: %s: %s\n", rank_, amp_status_name(d), amp_last_error());
        }
    }
    if (st == AMP_OK) say("destroy arrays", st);
    MUST_MPI(amp_mpi_exchange_destroy(x));
    long bad = 0;
    for (int i = 0; i < N1; ++i) bad += b[i] != (float)(prev * 100000 + i);
    for (int i = 0; i < GR2 * GC2; ++i)
        bad += h[i] != (i / GC2 >= 1 && i / GC2 <= 3 ? (float)(prev * 100000 + i) : -1.0f);
    for (int k = 0; k < N3; ++k) {
        bad += r3[FACE3_AT(k, even)] != (float)(prev * 100000 + k);
        r3[FACE3_AT(k, even)] = -1;
    }
    for (int i = 0; i < n3; ++i) bad += r3[i] != -1.0f;
#undef FACE3_AT
    printf("rank %d data: %s\n", rank_, bad ? "WRONG" : "ok");
    printf("rank %d messages: sent %llu received %llu bytes %llu\n", rank_, (unsigned long long)xs.messages_sent,
           (unsigned long long)xs.messages_received, (unsigned long long)xs.bytes_sent);
    if (getenv("AMP_MPI_CHUNK_BYTES")) {
        /* The mismatch again on an exchanger of its own, with MPI_Improbe
         * failing while the surplus chunk is drained: the message says
         * which MPI call failed and how. */
        MUST_MPI(amp_mpi_exchange_create(MPI_COMM_WORLD, q, sizeof(float), path, &x));
        MUST_MPI(amp_mpi_exchange_set_timeout(x, 20000));
        MUST(amp_array_create(q, sizeof(float), amp_extent_1d(N1), a, &aa));
        MUST(amp_array_create(q, sizeof(float), amp_extent_1d(N1), b, &ab));
        MUST(amp_array_view_of_array(aa, &va));
        MUST(amp_array_view_of_array(ab, &vb));
        MUST(amp_array_view_section(va, amp_index_1d(0), amp_extent_1d(3 * 1024 + 500), &more));
        MUST(amp_array_view_section(vb, amp_index_1d(0), amp_extent_1d(2 * 1024), &fewer));
        amp_mpi_halo again[2] = {{more, NULL, next, 3, 3}, {NULL, fewer, prev, 3, 3}};
        improbe_fails = 1;
        say("drain fault", amp_mpi_exchange_halos(x, again, 2));
        improbe_fails = 0;
        amp_array_view *left[] = {more, fewer, va, vb};
        for (int i = 0; i < 4; ++i) MUST(amp_array_view_destroy(left[i]));
        MUST(amp_array_destroy(aa));
        MUST(amp_array_destroy(ab));
        MUST_MPI(amp_mpi_exchange_destroy(x));
    }
    free(a);
    free(b);
    free(g);
    free(h);
    free(s3);
    free(r3);
}

/* ------------------------------------------------- intercommunicators */

/* Ranks split by parity into two groups joined by an intercommunicator:
 * every call that takes a communicator refuses it on every rank (none
 * waits for another in a collective). */
static void inter(amp_accelerator_view *q)
{
    MPI_Comm local = MPI_COMM_NULL, ic = MPI_COMM_NULL;
    const int color = rank_ % 2;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank_, &local);
    /* The other group's leader: world rank 1 for the even ranks, 0 for the
     * odd. What Open MPI allocates for the intercommunicator and keeps past
     * its free (a 13-byte name, seen by LeakSanitizer with no frame to
     * suppress it by) is the MPI library's, as MPI_Init's (main). */
    if (__lsan_disable) __lsan_disable();
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color ? 0 : 1, 99, &ic);
    if (__lsan_enable) __lsan_enable();
    amp_mpi_exchange *x = NULL;
    say("inter create", amp_mpi_exchange_create(ic, q, sizeof(float), AMP_MPI_PATH_AUTO, &x));
    if (x) MUST_MPI(amp_mpi_exchange_destroy(x));
    int lr = -1, ls = -1;
    say("inter local rank", amp_mpi_local_rank(ic, &lr, &ls));
    amp_accelerator *acc = NULL;
    say("inter select", amp_mpi_select_accelerator(ic, &acc));
    /* The intracommunicator of both groups works. */
    MPI_Comm both = MPI_COMM_NULL;
    if (__lsan_disable) __lsan_disable();
    MPI_Intercomm_merge(ic, color, &both);
    if (__lsan_enable) __lsan_enable();
    say("merged create", amp_mpi_exchange_create(both, q, sizeof(float), AMP_MPI_PATH_AUTO, &x));
    MUST_MPI(amp_mpi_exchange_destroy(x));
    MPI_Comm_free(&both);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
}

/* ------------------------------------------------- overrun */

enum { OV_SENT = 3000, OV_HOLDS = 2000, OV_ALL = 6000 };

/* Rank 0 sends OV_SENT floats to rank 1, whose receive view is the first
 * OV_HOLDS of OV_ALL (-1 each), on x. Rank 1 reports the exchange ("overrun
 * WHAT") and how many floats past its view changed ("outside WHAT: N
 * written"); then a good exchange of OV_HOLDS ("after WHAT", "after WHAT
 * data"). Views of host memory on the host path, of an array otherwise
 * (the device path: MPI writes the array itself). */
static void overrun_once(amp_accelerator_view *q, amp_mpi_path path, const char *what)
{
    static float s[OV_ALL], g[OV_ALL];
    amp_mpi_exchange *x = NULL;
    MUST_MPI(amp_mpi_exchange_create(MPI_COMM_WORLD, q, sizeof(float), path, &x));
    MUST_MPI(amp_mpi_exchange_set_timeout(x, 20000));
    for (int pass = 0; pass < 2; ++pass) {
        const int n = pass ? OV_HOLDS : OV_SENT;
        for (int i = 0; i < OV_ALL; ++i) s[i] = (float)(1000 + pass * 10000 + i), g[i] = -1.0f;
        amp_array *as = NULL, *ag = NULL;
        amp_array_view *vs = NULL, *vg = NULL, *send = NULL, *recv = NULL;
        if (path == AMP_MPI_PATH_HOST) {
            MUST(amp_array_view_create(s, sizeof(float), amp_extent_1d(OV_ALL), AMP_READ_WRITE, &vs));
            MUST(amp_array_view_create(g, sizeof(float), amp_extent_1d(OV_ALL), AMP_READ_WRITE, &vg));
        } else {
            MUST(amp_array_create(q, sizeof(float), amp_extent_1d(OV_ALL), s, &as));
            MUST(amp_array_create(q, sizeof(float), amp_extent_1d(OV_ALL), g, &ag));
            MUST(amp_array_view_of_array(as, &vs));
            MUST(amp_array_view_of_array(ag, &vg));
        }
        MUST(amp_array_view_section(vs, amp_index_1d(0), amp_extent_1d(n), &send));
        MUST(amp_array_view_section(vg, amp_index_1d(0), amp_extent_1d(OV_HOLDS), &recv));
        amp_mpi_halo h = rank_ == 0 ? (amp_mpi_halo){send, NULL, 1, 9, 9} : (amp_mpi_halo){NULL, recv, 0, 9, 9};
        amp_status st = rank_ < 2 ? amp_mpi_exchange_halos(x, &h, 1) : AMP_OK;
        char step[96];
        snprintf(step, sizeof step, "%s %s", pass ? "after" : "overrun", what);
        if (rank_ == 1) say(step, st);
        amp_array_view *views[] = {send, recv, vs, vg};
        for (int i = 0; i < 4; ++i) MUST(amp_array_view_destroy(views[i]));
        if (ag) MUST(amp_array_copy_to_host(ag, g));
        if (as) MUST(amp_array_destroy(as));
        if (ag) MUST(amp_array_destroy(ag));
        if (rank_ != 1) continue;
        int outside = 0, bad = 0;
        for (int i = OV_HOLDS; i < OV_ALL; ++i) outside += g[i] != -1.0f;
        for (int i = 0; i < OV_HOLDS; ++i) bad += g[i] != (float)(11000 + i);
        if (!pass) printf("rank 1 outside %s: %d written\n", what, outside);
        else printf("rank 1 after %s data: %s\n", what, bad || outside ? "WRONG" : "ok");
        fflush(stdout);
    }
    MUST_MPI(amp_mpi_exchange_destroy(x));
}

/* overrun_once on every path, faces whole and cut into 4096-byte chunks. */
static void overrun(amp_accelerator_view *q)
{
    /* The watchdog: a library that lets a message overrun its buffer may
     * corrupt the heap and hang instead of failing. */
    alarm(30);
    const amp_mpi_path paths[] = {AMP_MPI_PATH_HOST, AMP_MPI_PATH_STAGED, AMP_MPI_PATH_DEVICE};
    for (int p = 0; p < 3; ++p)
        for (int chunked = 0; chunked < 2; ++chunked) {
            char what[64];
            snprintf(what, sizeof what, "%s %s", amp_mpi_path_name(paths[p]), chunked ? "chunked" : "whole");
            if (chunked) setenv("AMP_MPI_CHUNK_BYTES", "4096", 1);
            overrun_once(q, paths[p], what);
            unsetenv("AMP_MPI_CHUNK_BYTES");
        }
}

/* ------------------------------------------- progress, stall and pairs */

#define PF (1 << 16) /* floats in a progress face: past Open MPI's eager limit */

/* A face of n floats of host memory each way with the other of 2 ranks:
 * the send holds 1000000 * rank + i + offset, the receive -1. */
typedef struct face {
    float *send, *recv;
    amp_array_view *vs, *vr;
    int n;
    float offset;
} face;

static void face_make(face *f, int n, float offset)
{
    f->n = n;
    f->offset = offset;
    f->send = malloc(sizeof(float) * (size_t)n);
    f->recv = malloc(sizeof(float) * (size_t)n);
    if (!f->send || !f->recv) must(AMP_ERROR_OUT_OF_MEMORY, "malloc", "face");
    for (int i = 0; i < n; ++i) {
        f->send[i] = 1000000.0f * (float)rank_ + (float)i + offset;
        f->recv[i] = -1.0f;
    }
    MUST(amp_array_view_create(f->send, sizeof(float), amp_extent_1d(n), AMP_READ_WRITE, &f->vs));
    MUST(amp_array_view_create(f->recv, sizeof(float), amp_extent_1d(n), AMP_READ_WRITE, &f->vr));
}

static amp_mpi_halo face_halo(const face *f)
{
    return (amp_mpi_halo){f->vs, f->vr, 1 - rank_, 3, 3};
}

/* The views gone, then "rank R STEP: ok" when the peer's values arrived,
 * every one of them. */
static void face_check(face *f, const char *step)
{
    MUST(amp_array_view_destroy(f->vs));
    MUST(amp_array_view_destroy(f->vr));
    int bad = 0;
    for (int i = 0; i < f->n; ++i) bad += f->recv[i] != 1000000.0f * (float)(1 - rank_) + (float)i + f->offset;
    printf("rank %d %s: %s\n", rank_, step, bad ? "WRONG" : "ok");
    fflush(stdout);
    free(f->send);
    free(f->recv);
}

/* Rank 0 has begun an exchange on A and then waits in another call of the
 * library (an all-reduce on A, a blocking exchange on B, the creation of
 * C); rank 1 exchanges on A (blocking) first. The faces are too large to go
 * eagerly, so rank 1's exchange ends only once rank 0's receive is posted:
 * the library must post it while rank 0 waits in the other call. part is
 * "a", "b", "c" or NULL for all three. */
static void progress(amp_accelerator_view *q, const char *part)
{
    alarm(60);
    amp_mpi_exchange *a = NULL, *b = NULL, *c = NULL;
    MUST_MPI(amp_mpi_exchange_create(MPI_COMM_WORLD, q, sizeof(float), AMP_MPI_PATH_HOST, &a));
    MUST_MPI(amp_mpi_exchange_create(MPI_COMM_WORLD, q, sizeof(float), AMP_MPI_PATH_HOST, &b));
    amp_mpi_pending p;
    face f, g;
    amp_mpi_halo h, k;
    if (!part || !strcmp(part, "a")) {
        double d = rank_ + 1.0;
        amp_array_view *dv = NULL;
        MUST(amp_array_view_create(&d, sizeof d, amp_extent_1d(1), AMP_READ_WRITE, &dv));
        face_make(&f, PF, 0.0f);
        h = face_halo(&f);
        if (rank_ == 0) {
            say("a begin", amp_mpi_exchange_begin(a, &h, 1, &p));
            say("a allreduce", amp_mpi_exchange_allreduce(a, dv, AMP_MPI_DOUBLE, AMP_MPI_SUM));
            say("a end", amp_mpi_exchange_end(a, p));
        } else {
            say("a exchange", amp_mpi_exchange_halos(a, &h, 1));
            say("a allreduce", amp_mpi_exchange_allreduce(a, dv, AMP_MPI_DOUBLE, AMP_MPI_SUM));
        }
        MUST(amp_array_view_destroy(dv));
        face_check(&f, "a data");
        printf("rank %d a sum: %g\n", rank_, d);
    }
    if (!part || !strcmp(part, "b")) {
        face_make(&f, PF, 100000.0f);
        face_make(&g, PF, 200000.0f);
        h = face_halo(&f);
        k = face_halo(&g);
        if (rank_ == 0) {
            say("b begin A", amp_mpi_exchange_begin(a, &h, 1, &p));
            say("b exchange B", amp_mpi_exchange_halos(b, &k, 1));
            say("b end A", amp_mpi_exchange_end(a, p));
        } else {
            say("b exchange A", amp_mpi_exchange_halos(a, &h, 1));
            say("b exchange B", amp_mpi_exchange_halos(b, &k, 1));
        }
        face_check(&f, "b data A");
        face_check(&g, "b data B");
    }
    if (!part || !strcmp(part, "c")) {
        face_make(&f, PF, 300000.0f);
        h = face_halo(&f);
        if (rank_ == 0) {
            say("c begin", amp_mpi_exchange_begin(a, &h, 1, &p));
            say("c create", amp_mpi_exchange_create(MPI_COMM_WORLD, q, sizeof(float), AMP_MPI_PATH_HOST, &c));
            say("c end", amp_mpi_exchange_end(a, p));
        } else {
            say("c exchange", amp_mpi_exchange_halos(a, &h, 1));
            say("c create", amp_mpi_exchange_create(MPI_COMM_WORLD, q, sizeof(float), AMP_MPI_PATH_HOST, &c));
        }
        face_check(&f, "c data");
    }
    fflush(stdout);
    MUST_MPI(amp_mpi_exchange_destroy(c));
    MUST_MPI(amp_mpi_exchange_destroy(b));
    MUST_MPI(amp_mpi_exchange_destroy(a));
}

/* Rank 1 begins STALL_EXCHANGES exchanges of faces too large to go
 * eagerly, so rank 0's receives are matched to their messages, and then
 * does no MPI call for 6 s: the data never comes. Rank 0's end of the
 * first must give up after its time-out, abandoning them all within one
 * grace of 0.1 s (it took one for each: 1 + 40 x 0.1 s). */
enum { STALL_EXCHANGES = 40 };
static void stall(amp_accelerator_view *q)
{
    alarm(60);
    amp_mpi_exchange *x = NULL;
    MUST_MPI(amp_mpi_exchange_create(MPI_COMM_WORLD, q, sizeof(float), AMP_MPI_PATH_HOST, &x));
    /* static: their buffers stay reachable (see below) */
    static face f[STALL_EXCHANGES];
    amp_mpi_pending p[STALL_EXCHANGES];
    for (int k = 0; k < STALL_EXCHANGES; ++k) face_make(&f[k], 1 << 16, (float)k);
    if (rank_ == 0) MUST_MPI(amp_mpi_exchange_set_timeout(x, 1000));
    /* Rank 1 begins every exchange before rank 0 begins any (the barrier):
     * its MPI calls while it begins would otherwise move rank 0's first
     * messages along as rank 0 matches them (a slow rank 1, under ASan,
     * let the first exchange finish). */
    if (rank_ == 0) MPI_Barrier(MPI_COMM_WORLD);
    amp_status begun = AMP_OK; /* the first failure */
    for (int k = 0; k < STALL_EXCHANGES; ++k) {
        amp_mpi_halo h = face_halo(&f[k]);
        amp_status st = amp_mpi_exchange_begin(x, &h, 1, &p[k]);
        if (begun == AMP_OK) begun = st;
    }
    if (rank_ == 1) MPI_Barrier(MPI_COMM_WORLD);
    say("begin", begun);
    if (rank_ == 0) {
        double t0 = MPI_Wtime();
        amp_status st = amp_mpi_exchange_end(x, p[0]);
        printf("rank 0 waited: %.3f s\n", MPI_Wtime() - t0);
        say("end", st);
    } else {
        sleep(6); /* busy with other work: no MPI call */
        say("end", amp_mpi_exchange_end(x, p[0]));
    }
    say("destroy", amp_mpi_exchange_destroy(x));
    for (int k = 0; k < STALL_EXCHANGES; ++k) {
        MUST(amp_array_view_destroy(f[k].vs));
        MUST(amp_array_view_destroy(f[k].vr));
    }
    /* The buffers are not freed: rank 0's receives, matched to rank 1's
     * messages, cannot be cancelled, and MPI writes them when rank 1's
     * data comes (in rank 0's MPI_Finalize). */
}

/* A pair held back behind a face that goes on (rank 0 sends 3000 floats
 * in chunks where rank 1's exchange p1 receives 100) is freed by whatever
 * moves the exchanger on, not only by p1's own test or end: (test) rank 1
 * begins p1 and p2 (10 floats, the same peer and tag) and polls p2's test,
 * which must say done once p2's message came ("held test: done" within
 * 5 s; before, never until p1 ended, and rank 0's blocking exchange of the
 * 3000 floats waited as long); (allreduce) rank 1 begins p1 and calls the
 * all-reduce on the same exchanger, which rank 0 joins after its blocking
 * exchange of the 3000 floats (before, both waited for ever). Rank 1's
 * end of p1 then reports the sizes ("held p1"); p2's data arrives. */
static void held(amp_mpi_exchange *x, float *a, float *ra, float *b, float *rb)
{
    const int peer = 1 - rank_;
    amp_array_view *sa = NULL, *va = NULL, *sb = NULL, *vb = NULL;
    for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < 10; ++i) rb[i] = -1.0f, b[i] = 30000.0f + 1000.0f * (float)rank_ + (float)(i + round);
        MUST(amp_array_view_create(a, sizeof(float), amp_extent_1d(rank_ == 0 ? 3000 : 100), AMP_READ_WRITE, &sa));
        MUST(amp_array_view_create(ra, sizeof(float), amp_extent_1d(100), AMP_READ_WRITE, &va));
        MUST(amp_array_view_create(b, sizeof(float), amp_extent_1d(10), AMP_READ_WRITE, &sb));
        MUST(amp_array_view_create(rb, sizeof(float), amp_extent_1d(10), AMP_READ_WRITE, &vb));
        amp_mpi_halo h1 = {sa, va, peer, 5, 5}, h2 = {sb, vb, peer, 5, 5};
        double sum = rank_ + 1;
        amp_array_view *sv = NULL;
        MUST(amp_array_view_create(&sum, sizeof(double), amp_extent_1d(1), AMP_READ_WRITE, &sv));
        if (rank_ == 0) {
            say(round ? "held allreduce exchange" : "held test exchange 1", amp_mpi_exchange_halos(x, &h1, 1));
            if (round == 0) say("held test exchange 2", amp_mpi_exchange_halos(x, &h2, 1));
            else say("held allreduce", amp_mpi_exchange_allreduce(x, sv, AMP_MPI_DOUBLE, AMP_MPI_SUM));
        } else {
            amp_mpi_pending p1, p2;
            say(round ? "held allreduce begin" : "held test begin 1", amp_mpi_exchange_begin(x, &h1, 1, &p1));
            if (round == 0) {
                say("held test begin 2", amp_mpi_exchange_begin(x, &h2, 1, &p2));
                bool done = false;
                const double t0 = MPI_Wtime();
                while (!done && MPI_Wtime() - t0 < 5.0)
                    if (amp_mpi_exchange_test(x, p2, &done) != AMP_OK) break;
                printf("rank 1 held test: %s\n", done ? "done" : "not done after 5 s");
                fflush(stdout);
            } else {
                say("held allreduce", amp_mpi_exchange_allreduce(x, sv, AMP_MPI_DOUBLE, AMP_MPI_SUM));
            }
            say(round ? "held allreduce p1" : "held test p1", amp_mpi_exchange_end(x, p1));
            if (round == 0) say("held test p2", amp_mpi_exchange_end(x, p2));
        }
        amp_array_view *views[] = {sa, va, sb, vb, sv};
        for (int i = 0; i < 5; ++i) MUST(amp_array_view_destroy(views[i]));
        int bad = 0;
        for (int i = 0; round == 0 && i < 10; ++i) bad += rb[i] != 30000.0f + 1000.0f * (float)peer + (float)i;
        if (round == 0) printf("rank %d held test data: %s\n", rank_, bad ? "WRONG" : "ok");
        else printf("rank %d held sum: %g\n", rank_, sum);
        fflush(stdout);
    }
}

/* Faces cut into 4096-byte chunks, two halos of one exchange with the same
 * peer and tag: rank 0 sends 3000 floats (3 chunks) where rank 1's view
 * holds 100, then 10 floats into a view of 10 ("pair"); every message has
 * arrived before rank 1 exchanges. Then a good exchange of 10 floats
 * ("good", "good data"). Rank 0's receives fit (rank 1 sends 100 and 10):
 * "pair data 0", "pair data 1" on both ranks when a halo's receive got the
 * peer's values (rank 1's halo 0 says nothing: it is refused). */
static void pairs(amp_accelerator_view *q)
{
    alarm(60);
    static float a[3000], b[10], ra[3000], rb[10];
    setenv("AMP_MPI_CHUNK_BYTES", "4096", 1);
    amp_mpi_exchange *x = NULL;
    MUST_MPI(amp_mpi_exchange_create(MPI_COMM_WORLD, q, sizeof(float), AMP_MPI_PATH_HOST, &x));
    unsetenv("AMP_MPI_CHUNK_BYTES");
    const int peer = 1 - rank_, na = rank_ == 0 ? 3000 : 100, nra = 100;
    for (int i = 0; i < 3000; ++i) {
        a[i] = 20000.0f * (float)rank_ + (float)i;
        ra[i] = -1.0f;
    }
    for (int i = 0; i < 10; ++i) {
        b[i] = 20000.0f * (float)rank_ + 10000.0f + (float)i;
        rb[i] = -1.0f;
    }
    amp_array_view *sa = NULL, *sb = NULL, *va = NULL, *vb = NULL;
    MUST(amp_array_view_create(a, sizeof(float), amp_extent_1d(na), AMP_READ_WRITE, &sa));
    MUST(amp_array_view_create(b, sizeof(float), amp_extent_1d(10), AMP_READ_WRITE, &sb));
    MUST(amp_array_view_create(ra, sizeof(float), amp_extent_1d(nra), AMP_READ_WRITE, &va));
    MUST(amp_array_view_create(rb, sizeof(float), amp_extent_1d(10), AMP_READ_WRITE, &vb));
    amp_mpi_halo h[2] = {{sa, va, peer, 0, 0}, {sb, vb, peer, 0, 0}};
    if (rank_ == 1) nanosleep(&(struct timespec){0, 300000000}, NULL); /* every message has arrived */
    say("pair", amp_mpi_exchange_halos(x, h, 2));
    amp_array_view *views[] = {sa, sb, va, vb};
    for (int i = 0; i < 4; ++i) MUST(amp_array_view_destroy(views[i]));
    int bad0 = 0, bad1 = 0;
    for (int i = 0; i < nra; ++i) bad0 += ra[i] != 20000.0f * (float)peer + (float)i;
    for (int i = 0; i < 10; ++i) bad1 += rb[i] != 20000.0f * (float)peer + 10000.0f + (float)i;
    if (rank_ == 0) printf("rank 0 pair data 0: %s\n", bad0 ? "WRONG" : "ok");
    printf("rank %d pair data 1: %s\n", rank_, bad1 ? "WRONG" : "ok");
    fflush(stdout);
    /* The exchanger works on. */
    for (int i = 0; i < 10; ++i) {
        a[i] = 40000.0f + 1000.0f * (float)rank_ + (float)i;
        ra[i] = -1.0f;
    }
    MUST(amp_array_view_create(a, sizeof(float), amp_extent_1d(10), AMP_READ_WRITE, &sa));
    MUST(amp_array_view_create(ra, sizeof(float), amp_extent_1d(10), AMP_READ_WRITE, &va));
    amp_mpi_halo g = {sa, va, peer, 0, 0};
    say("good", amp_mpi_exchange_halos(x, &g, 1));
    MUST(amp_array_view_destroy(sa));
    MUST(amp_array_view_destroy(va));
    int bad = 0;
    for (int i = 0; i < 10; ++i) bad += ra[i] != 40000.0f + 1000.0f * (float)peer + (float)i;
    printf("rank %d good data: %s\n", rank_, bad ? "WRONG" : "ok");
    fflush(stdout);
    held(x, a, ra, b, rb);
    MUST_MPI(amp_mpi_exchange_destroy(x));
}

int main(int argc, char **argv)
{
    if (__lsan_disable) __lsan_disable();
    MPI_Init(&argc, &argv);
    if (__lsan_enable) __lsan_enable();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    if (argc < 2) {
        if (rank_ == 0)
            fprintf(stderr, "usage: mpi_helper sizes PATH | elements | nonblocking PATH | timeout PATH | leaving PATH "
                            "finalize|destroy | path PATH | mismatch | chunks PATH | faults | refused PATH | inter "
                            "| overrun | progress [a|b|c] | stall | pairs\n");
        finalize();
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
        x = NULL;
        st = amp_mpi_exchange_create(MPI_COMM_WORLD, q, 4, AMP_MPI_PATH_AUTO, rank_ == 1 ? NULL : &x);
        say("null out", st);
        MUST_MPI(amp_mpi_exchange_destroy(x));
        int local = -1, nlocal = -1;
        st = amp_mpi_local_rank(MPI_COMM_WORLD, &local, rank_ == 1 ? NULL : &nlocal);
        say("null local", st);
        /* An element size no message could hold on rank 1 (2^63 bytes). */
        x = NULL;
        st = amp_mpi_exchange_create(MPI_COMM_WORLD, q, rank_ == 1 ? (size_t)1 << 63 : 4, AMP_MPI_PATH_AUTO, &x);
        say("huge", st);
        MUST_MPI(amp_mpi_exchange_destroy(x));
        /* The local rank is the rank among this node's ranks of comm, in
         * comm's order: on a communicator of the ranks reversed it is
         * reversed too. */
        MPI_Comm reversed = MPI_COMM_NULL;
        if (MPI_Comm_split(MPI_COMM_WORLD, 0, size_ - rank_, &reversed) != MPI_SUCCESS) {
            fprintf(stderr, "rank %d: MPI_Comm_split failed\n", rank_);
            finalize();
            return 1;
        }
        MPI_Comm comms[] = {MPI_COMM_WORLD, reversed};
        const char *names[] = {"local", "reversed local"};
        for (int k = 0; k < 2; ++k) {
            local = nlocal = -1;
            st = amp_mpi_local_rank(comms[k], &local, &nlocal);
            if (st != AMP_OK) say(names[k], st);
            else printf("rank %d %s: %d of %d\n", rank_, names[k], local, nlocal);
            fflush(stdout);
        }
        MPI_Comm_free(&reversed);
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
    } else if (!strcmp(scenario, "nonblocking") && argc >= 3) {
        amp_mpi_path path;
        MUST_MPI(amp_mpi_path_parse(argv[2], &path));
        nonblocking(acc, q, path);
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
        /* Rank 1 waits here, busy with other work as far as the exchanger
         * can tell, until the others are done with theirs. */
        MPI_Barrier(MPI_COMM_WORLD);
        say("destroy", amp_mpi_exchange_destroy(x));
    } else if (!strcmp(scenario, "leaving") && argc >= 4) {
        amp_mpi_path path;
        MUST_MPI(amp_mpi_path_parse(argv[2], &path));
        const bool destroy = !strcmp(argv[3], "destroy");
        amp_mpi_exchange *x = NULL;
        MUST_MPI(amp_mpi_exchange_create(MPI_COMM_WORLD, q, sizeof(float), path, &x));
        if (rank_ == 1) {
            if (destroy) say("destroy", amp_mpi_exchange_destroy(x));
            printf("rank 1 leaves\n");
            fflush(stdout);
            finalize();
            if (!destroy) say("destroy", amp_mpi_exchange_destroy(x));
            printf("rank 1 done\n");
            return 0;
        }
        /* The watchdog: an exchange that waits for ever ends the job
         * instead of the test's own time limit. */
        alarm(30);
        double t0 = MPI_Wtime();
        ring("exchange", x, q, path, W, W, NULL);
        printf("rank %d waited: %.3f s\n", rank_, MPI_Wtime() - t0);
        ring("again", x, q, path, W, W, NULL);
        say("destroy", amp_mpi_exchange_destroy(x));
    } else if (!strcmp(scenario, "path") && argc >= 3) {
        amp_mpi_path path;
        MUST_MPI(amp_mpi_path_parse(argv[2], &path));
        amp_mpi_exchange *x = NULL;
        MUST_MPI(amp_mpi_exchange_create(MPI_COMM_WORLD, q, sizeof(float), path, &x));
        amp_mpi_path_info info;
        MUST_MPI(amp_mpi_exchange_get_path(x, &info));
        printf("rank %d path: %s fell_back %d: %s\n", rank_, amp_mpi_path_name(info.path), info.fell_back ? 1 : 0,
               info.reason);
        float got[2 * W];
        if (ring("good", x, q, path, W, W, got) == AMP_OK) {
            int from = (rank_ + size_ - 1) % size_, bad = 0;
            for (int i = 0; i < W; ++i) bad += got[i] != (float)(1000 * from) + (float)i;
            printf("rank %d data: %s\n", rank_, bad ? "WRONG" : "ok");
        }
        allreduces(x, q);
        MUST_MPI(amp_mpi_exchange_destroy(x));
    } else if (!strcmp(scenario, "chunks") && argc >= 3) {
        amp_mpi_path path;
        MUST_MPI(amp_mpi_path_parse(argv[2], &path));
        chunks(q, path);
    } else if (!strcmp(scenario, "refused") && argc >= 3) {
        amp_mpi_path path;
        MUST_MPI(amp_mpi_path_parse(argv[2], &path));
        refused(q, path);
    } else if (!strcmp(scenario, "faults")) {
        faults(q);
    } else if (!strcmp(scenario, "inter")) {
        inter(q);
    } else if (!strcmp(scenario, "overrun")) {
        overrun(q);
    } else if (!strcmp(scenario, "progress") && size_ == 2) {
        progress(q, argc >= 3 ? argv[2] : NULL);
    } else if (!strcmp(scenario, "stall") && size_ == 2) {
        stall(q);
    } else if (!strcmp(scenario, "pairs") && size_ == 2) {
        pairs(q);
    } else if (!strcmp(scenario, "mismatch")) {
        amp_mpi_exchange *x = NULL;
        amp_status st = amp_mpi_exchange_create(MPI_COMM_WORLD, q, sizeof(float),
                                                rank_ == 0 ? AMP_MPI_PATH_NCCL : AMP_MPI_PATH_STAGED, &x);
        say("create", st);
        MUST_MPI(amp_mpi_exchange_destroy(x));
    } else {
        if (rank_ == 0) fprintf(stderr, "mpi_helper: unknown scenario %s\n", scenario);
        finalize();
        return 2;
    }
    printf("rank %d done\n", rank_);
    fflush(stdout);
    finalize();
    return 0;
}
