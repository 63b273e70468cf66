/* heat_mpi.c — the distributed 2-D heat (Jacobi) example: rows split across MPI ranks, one accelerator per rank chosen by node-local rank, and the halo rows exchanged through array_view sections by hipamp::mpi (device pointers to a GPU-aware MPI, host memory in place, or host staging of the halo rows only). By default each step overlaps the exchange with the interior rows' update (exchange begun, interior launch, exchange ended, edge rows' launch); --no-overlap exchanges first and updates every row in one launch. Rank 0's last line of output is `checksum <FNV-1a 64 of the final grid>`. */
#include "heat_grid.h"
#include "mpi_example.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char heat_kernels_source[];

#define TILE_ROWS 8
#define TILE_COLS 32

static const char *const usage_text =
    "usage: heat_mpi NX NY STEPS [--path auto|host|device|staged|nccl] [--warmup N]\n"
    "                [--accelerator PATH] [--no-overlap] [--graph] [--no-checksum]\n"
    "  NX x NY cells (NX columns, NY rows split across the ranks), STEPS Jacobi steps.\n"
    "  --path         how halos cross between ranks (default auto: host memory in place on the\n"
    "                 CPU accelerator and unified-memory GPUs, device pointers where MPI is\n"
    "                 GPU-aware, else staging of the halo rows through host memory)\n"
    "  --warmup N     steps left out of the time per step (default 1)\n"
    "  --accelerator  device path for every rank (cpu, cuda:0, hip:1); default: by node-local rank\n"
    "  --no-overlap   exchange the halos, then update every row (default: update the interior\n"
    "                 rows while the halos move, then the first and last row)\n"
    "  --graph        replay each launch of the step from a launch graph recorded at its first\n"
    "                 use (the halo exchange, MPI's, stays outside); same results bit for bit\n"
    "  --no-checksum  skip gathering the final grid (rank 0's last line is then the time)\n";

typedef struct options {
    long nx, ny, steps, warmup;
    amp_mpi_path path;
    const char *accelerator;
    bool checksum;
    bool overlap;
    bool graph;
} options;

/* What each rank sends rank 0 for the report (plain bytes: every rank runs
 * this same program). */
typedef struct rank_report {
    char device[32];
    char description[96];
    int32_t first_row, rows, neighbours, path;
    uint64_t halo_bytes;   /* expected per step: 2 rows x NX x 4 per neighbour */
    uint64_t mpi_bytes;    /* handed to MPI, sent + received, all steps */
    uint64_t copied_bytes; /* hipamp's statistics of q, all steps */
    uint64_t staged_bytes; /* of which through the staging buffers */
    double seconds;        /* the timed steps */
    double exchange_seconds;
    /* What ran, all steps: halo exchanges, those with a launch queued on q
     * between their begin and their end (q's statistics), q's launches and
     * those replayed from launch graphs (the graphs' replays). */
    uint64_t exchanges, exchanges_overlapped, launches, launches_from_graphs;
} rank_report;

/* The launches queued on q since its statistics were reset. */
static uint64_t launches_so_far(amp_accelerator_view *q)
{
    amp_stats s;
    TRY(amp_accelerator_view_get_stats(q, &s));
    return s.launches;
}

/* The launches replayed from g (NULL: none). */
static uint64_t launches_replayed(amp_graph *g)
{
    amp_graph_info gi;
    if (!g) return 0;
    TRY(amp_graph_get_info(g, &gi));
    return gi.replays * gi.launches;
}

/* 0: run; 1: bad arguments (message in err); 2: --help. */
static int parse(int argc, char **argv, options *o, char *err, size_t n)
{
    memset(o, 0, sizeof *o);
    o->warmup = 1;
    o->checksum = true;
    o->overlap = true;
    long pos[3];
    int npos = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return 2;
        if (!strcmp(a, "--no-checksum")) {
            o->checksum = false;
        } else if (!strcmp(a, "--no-overlap")) {
            o->overlap = false;
        } else if (!strcmp(a, "--graph")) {
            o->graph = true;
        } else if (!strcmp(a, "--path") || !strcmp(a, "--warmup") || !strcmp(a, "--accelerator")) {
            if (i + 1 >= argc) {
                snprintf(err, n, "%s needs a value", a);
                return 1;
            }
            const char *v = argv[++i];
            if (!strcmp(a, "--path")) {
                if (amp_mpi_path_parse(v, &o->path) != AMP_OK) {
                    snprintf(err, n, "%s", amp_mpi_last_error());
                    return 1;
                }
            } else if (!strcmp(a, "--warmup")) {
                if (!parse_long(v, 0, LONG_MAX, &o->warmup)) {
                    snprintf(err, n, "--warmup \"%s\": a whole number >= 0", v);
                    return 1;
                }
            } else {
                o->accelerator = v;
            }
        } else if (a[0] == '-' && a[1] == '-') {
            snprintf(err, n, "unknown option %s", a);
            return 1;
        } else {
            if (npos == 3) {
                snprintf(err, n, "unexpected argument \"%s\"", a);
                return 1;
            }
            static const char *const names[3] = {"NX", "NY", "STEPS"};
            if (!parse_long(a, npos == 2 ? 0 : 1, npos == 2 ? LONG_MAX : INT_MAX - 2, &pos[npos])) {
                snprintf(err, n, "%s \"%s\": a whole number %s", names[npos], a, npos == 2 ? ">= 0" : ">= 1");
                return 1;
            }
            npos++;
        }
    }
    if (npos != 3) {
        snprintf(err, n, "NX, NY and STEPS are required");
        return 1;
    }
    o->nx = pos[0];
    o->ny = pos[1];
    o->steps = pos[2];
    return 0;
}

/* Rank 0 hashes the whole grid, row-major: its own rows, then each other
 * rank's in rank order, received in chunks of at most 4 MiB so that rank 0
 * never holds more than its part plus one chunk. */
static uint64_t gather_checksum(const float *own, int nx, int ny, int nranks)
{
    size_t chunk_rows = (size_t)(4u << 20) / ((size_t)nx * sizeof(float));
    if (chunk_rows == 0) chunk_rows = 1;
    int first = 0, rows = 0;
    heat_split(ny, nranks, world_rank, &first, &rows);
    if (world_rank != 0) {
        for (size_t r = 0; r < (size_t)rows; r += chunk_rows) {
            size_t n = (size_t)rows - r < chunk_rows ? (size_t)rows - r : chunk_rows;
            int rc = MPI_Send(own + r * (size_t)nx, (int)(n * (size_t)nx), MPI_FLOAT, 0, 7, MPI_COMM_WORLD);
            if (rc != MPI_SUCCESS) die("MPI_Send", "sending rows for the checksum");
        }
        return 0;
    }
    uint64_t h = heat_fnv1a(HEAT_FNV_SEED, own, (size_t)rows * (size_t)nx * sizeof(float));
    float *buf = malloc(chunk_rows * (size_t)nx * sizeof(float));
    if (!buf) die("malloc", "no memory for the checksum buffer");
    for (int src = 1; src < nranks; ++src) {
        heat_split(ny, nranks, src, &first, &rows);
        for (size_t r = 0; r < (size_t)rows; r += chunk_rows) {
            size_t n = (size_t)rows - r < chunk_rows ? (size_t)rows - r : chunk_rows;
            int rc = MPI_Recv(buf, (int)(n * (size_t)nx), MPI_FLOAT, src, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS) die("MPI_Recv", "receiving rows for the checksum");
            h = heat_fnv1a(h, buf, n * (size_t)nx * sizeof(float));
        }
    }
    free(buf);
    return h;
}

/* "123" when whole, "123.5" otherwise: the per-step figures are exact
 * integers whenever every step moved the same bytes. */
static void per_step(char *out, size_t n, uint64_t total, long steps)
{
    if (steps <= 0) snprintf(out, n, "0");
    else if (total % (uint64_t)steps == 0) snprintf(out, n, "%llu", (unsigned long long)(total / (uint64_t)steps));
    else snprintf(out, n, "%.3f", (double)total / (double)steps);
}

/* One launch of the step on q: directly, or with --graph (g not NULL)
 * replayed from *g, recorded from this very launch the first time it is
 * met (a recording runs nothing, so it is replayed at once). A graph holds
 * the launch's kernel, domain, views and scalars as they are now: each of
 * the step's launches (which buffer it reads, which part) has its own.
 * async: on q's own thread where launches otherwise run in this one (the
 * CPU accelerator), the future dropped. t NULL: a simple launch over e. */
static amp_status step_launch(amp_accelerator_view *q, amp_graph **g, bool async, const amp_tiled_extent *t,
                              amp_extent e, amp_kernel *k, const amp_arg *args, size_t n)
{
    amp_status st = AMP_OK;
    amp_future *f = NULL;
    if (g && !*g) {
        if ((st = amp_graph_begin_recording(q)) != AMP_OK) return st;
        st = t ? amp_parallel_for_each_tiled(q, *t, k, args, n) : amp_parallel_for_each(q, e, k, args, n);
        amp_status ended = amp_graph_end_recording(q, g);
        if (st == AMP_OK) st = ended;
        if (st != AMP_OK) return st;
    }
    if (g) st = async ? amp_graph_launch_async(q, *g, &f) : amp_graph_launch(q, *g);
    else if (async && t) st = amp_parallel_for_each_tiled_async(q, *t, k, args, n, &f);
    else if (async) st = amp_parallel_for_each_async(q, e, k, args, n, &f);
    else st = t ? amp_parallel_for_each_tiled(q, *t, k, args, n) : amp_parallel_for_each(q, e, k, args, n);
    if (f) amp_future_destroy(f);
    return st;
}

int main(int argc, char **argv)
{
    example_name = "heat_mpi";
    example_mpi_init(&argc, &argv);
    const int nranks = world_size;

    options o;
    char err[512] = "";
    int pr = parse(argc, argv, &o, err, sizeof err);
    if (pr == 0 && o.ny < nranks) {
        snprintf(err, sizeof err, "NY %ld: each of the %d ranks needs at least one row", o.ny, nranks);
        pr = 1;
    }
    if (pr == 0 && o.nx * (o.ny / nranks + 3) > INT_MAX) {
        snprintf(err, sizeof err, "NX %ld x %ld rows per rank: too many cells for one rank", o.nx,
                 o.ny / nranks + 1);
        pr = 1;
    }
    if (pr != 0) return example_stop(pr == 1 ? err : NULL, usage_text);
    const int nx = (int)o.nx, ny = (int)o.ny;
    int first = 0, rows = 0;
    heat_split(ny, nranks, world_rank, &first, &rows);

    /* One accelerator per rank and a queue of its own on it. */
    amp_accelerator *acc = NULL;
    if (o.accelerator) TRY(amp_accelerator_find(o.accelerator, &acc));
    else TRY_MPI(amp_mpi_select_accelerator(MPI_COMM_WORLD, &acc));
    amp_accelerator_info info;
    TRY(amp_accelerator_get_info(acc, &info));
    amp_accelerator_view *q = NULL;
    TRY(amp_accelerator_view_create(acc, &q));
    amp_mpi_exchange *x = NULL;
    TRY_MPI(amp_mpi_exchange_create(MPI_COMM_WORLD, q, sizeof(float), o.path, &x));
    amp_mpi_path_info path;
    TRY_MPI(amp_mpi_exchange_get_path(x, &path));

    /* Two grids (Jacobi reads one, writes the other), each the rank's rows
     * plus a halo row above and below. The host path keeps them in host
     * memory the accelerator computes on (no copies at all); the others in
     * device arrays, so that only halo rows ever leave the device. Halos
     * and the second grid start as NaN: a cell read before it was written
     * spoils the checksum. */
    const size_t cells = (size_t)(rows + 2) * (size_t)nx;
    float *host[2] = {malloc(cells * sizeof(float)), malloc(cells * sizeof(float))};
    if (!host[0] || !host[1]) die("malloc", "no memory for the grids");
    for (size_t i = 0; i < cells; ++i) host[0][i] = host[1][i] = NAN;
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < nx; ++c) host[0][(size_t)(r + 1) * nx + c] = heat_initial(first + r, c, nx, ny);

    const amp_extent ext = amp_extent_2d(rows + 2, nx);
    const bool host_grid = path.path == AMP_MPI_PATH_HOST;
    amp_array *arr[2] = {NULL, NULL};
    amp_array_view *grid[2], *owned[2], *top[2], *bottom[2], *halo_top[2], *halo_bottom[2];
    for (int k = 0; k < 2; ++k) {
        if (host_grid) {
            TRY(amp_array_view_create(host[k], sizeof(float), ext, AMP_READ_WRITE, &grid[k]));
        } else {
            TRY(amp_array_create(q, sizeof(float), ext, host[k], &arr[k]));
            TRY(amp_array_view_of_array(arr[k], &grid[k]));
        }
        TRY(amp_array_view_section(grid[k], amp_index_2d(1, 0), amp_extent_2d(rows, nx), &owned[k]));
        TRY(amp_array_view_section(grid[k], amp_index_2d(1, 0), amp_extent_2d(1, nx), &top[k]));
        TRY(amp_array_view_section(grid[k], amp_index_2d(rows, 0), amp_extent_2d(1, nx), &bottom[k]));
        TRY(amp_array_view_section(grid[k], amp_index_2d(0, 0), amp_extent_2d(1, nx), &halo_top[k]));
        TRY(amp_array_view_section(grid[k], amp_index_2d(rows + 1, 0), amp_extent_2d(1, nx), &halo_bottom[k]));
    }

    /* The overlapped step's parts: the interior rows (owned rows 1 ..
     * rows-2, which read no halo) and the edge rows (the first and the
     * last, which do). */
    const bool inner = o.overlap && rows > 2;
    amp_array_view *inner_in[2] = {NULL, NULL}, *inner_out[2] = {NULL, NULL};
    for (int k = 0; k < 2 && inner; ++k) {
        TRY(amp_array_view_section(grid[k], amp_index_2d(1, 0), amp_extent_2d(rows, nx), &inner_in[k]));
        TRY(amp_array_view_section(owned[k], amp_index_2d(1, 0), amp_extent_2d(rows - 2, nx), &inner_out[k]));
    }

    amp_program *prog = NULL;
    amp_kernel *step = NULL, *edges = NULL;
    TRY(amp_program_build(acc, heat_kernels_source, NULL, &prog));
    TRY(amp_program_get_kernel(prog, "heat_step", &step));
    TRY(amp_program_get_kernel(prog, "heat_edges", &edges));
    amp_tiled_extent tiles, padded, inner_padded;
    TRY(amp_extent_tile_2d(amp_extent_2d(rows, nx), TILE_ROWS, TILE_COLS, &tiles));
    TRY(amp_tiled_extent_pad(tiles, &padded));
    if (inner) {
        TRY(amp_extent_tile_2d(amp_extent_2d(rows - 2, nx), TILE_ROWS, TILE_COLS, &tiles));
        TRY(amp_tiled_extent_pad(tiles, &inner_padded));
    }

    const int lo = world_rank > 0 ? world_rank - 1 : MPI_PROC_NULL;
    const int hi = world_rank < nranks - 1 ? world_rank + 1 : MPI_PROC_NULL;
    const long warm = o.warmup < o.steps ? o.warmup : o.steps;

    /* --graph: the step's launches for each buffer (step_launch). */
    amp_graph *g_all[2] = {NULL, NULL}, *g_inner[2] = {NULL, NULL}, *g_edges[2] = {NULL, NULL};

    /* Everything counted from here on is the time-step loop's. */
    TRY(amp_accelerator_view_wait(q));
    TRY(amp_accelerator_view_reset_stats(q));
    TRY_MPI(amp_mpi_exchange_reset_stats(x));
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), exchange_warm_seconds = 0;
    uint64_t exchanges = 0, exchanges_overlapped = 0;
    for (long s = 0; s < o.steps; ++s) {
        if (s == warm) {
            TRY(amp_accelerator_view_wait(q));
            /* The exchange time counts the timed steps only: a path's
             * first exchanges may set up connections (NCCL's take a
             * second). */
            amp_mpi_exchange_stats ws;
            TRY_MPI(amp_mpi_exchange_get_stats(x, &ws));
            exchange_warm_seconds = ws.seconds;
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        const int cur = (int)(s & 1), nxt = cur ^ 1;
        /* My first owned row goes up to lo and fills lo's bottom halo; my
         * last goes down to hi; their edge rows fill my halos. */
        amp_arg args[] = {amp_arg_view(grid[cur]), amp_arg_view(owned[nxt]), amp_arg_int32(first),
                          amp_arg_int32(ny)};
        if (!o.overlap) {
            TRY_MPI(amp_mpi_exchange_rows(x, lo, top[cur], halo_top[cur], hi, bottom[cur], halo_bottom[cur]));
            exchanges++;
            TRY(step_launch(q, o.graph ? &g_all[cur] : NULL, false, &padded, padded.extent, step, args, 4));
            continue;
        }
        amp_mpi_pending halos;
        TRY_MPI(amp_mpi_exchange_rows_begin(x, lo, top[cur], halo_top[cur], hi, bottom[cur], halo_bottom[cur],
                                            &halos));
        const uint64_t launched = launches_so_far(q);
        if (inner) {
            amp_arg in_args[] = {amp_arg_view(inner_in[cur]), amp_arg_view(inner_out[nxt]),
                                 amp_arg_int32(first + 1), amp_arg_int32(ny)};
            /* On the CPU accelerator a launch runs in the calling thread;
             * the asynchronous one runs on q's own, so that this thread
             * drives MPI in the end call meanwhile. */
            TRY(step_launch(q, o.graph ? &g_inner[cur] : NULL, info.is_emulated, &inner_padded, inner_padded.extent,
                            step, in_args, 4));
        }
        if (launches_so_far(q) > launched) exchanges_overlapped++;
        TRY_MPI(amp_mpi_exchange_end(x, halos));
        exchanges++;
        TRY(step_launch(q, o.graph ? &g_edges[cur] : NULL, false, NULL, amp_extent_2d(rows < 2 ? rows : 2, nx), edges,
                        args, 4));
    }
    TRY(amp_accelerator_view_wait(q));
    MPI_Barrier(MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    if (warm == o.steps) t1 = t0;

    amp_stats qs;
    amp_mpi_exchange_stats xs;
    TRY(amp_accelerator_view_get_stats(q, &qs));
    TRY_MPI(amp_mpi_exchange_get_stats(x, &xs));
    rank_report me;
    memset(&me, 0, sizeof me);
    snprintf(me.device, sizeof me.device, "%s", info.device_path);
    snprintf(me.description, sizeof me.description, "%.95s", info.description);
    me.first_row = first;
    me.rows = rows;
    me.neighbours = (lo != MPI_PROC_NULL) + (hi != MPI_PROC_NULL);
    me.path = (int32_t)path.path;
    me.halo_bytes = heat_halo_bytes(nx, nranks, world_rank);
    me.mpi_bytes = xs.bytes_sent + xs.bytes_received;
    /* The queue's copies, and the staged pipeline's on hipamp::mpi's own
     * copy stream beside it (a GPU's), which the queue does not count. */
    me.copied_bytes = qs.bytes_to_device + qs.bytes_to_host + qs.bytes_device_to_device + qs.bytes_host_to_host +
                      xs.bytes_copied_aside;
    me.staged_bytes = xs.bytes_staged;
    me.seconds = t1 - t0;
    me.exchange_seconds = xs.seconds - exchange_warm_seconds;
    me.exchanges = exchanges;
    me.exchanges_overlapped = exchanges_overlapped;
    me.launches = qs.launches;
    for (int k = 0; k < 2; ++k)
        me.launches_from_graphs += launches_replayed(g_all[k]) + launches_replayed(g_inner[k]) +
                                   launches_replayed(g_edges[k]);
    rank_report *all = world_rank == 0 ? calloc((size_t)nranks, sizeof *all) : NULL;
    if (world_rank == 0 && !all) die("calloc", "no memory for the report");
    MPI_Gather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, 0, MPI_COMM_WORLD);

    /* The final grid: after STEPS steps it is grid[STEPS % 2]. */
    const int fin = (int)(o.steps & 1);
    if (host_grid) TRY(amp_array_view_synchronize(owned[fin]));
    else TRY(amp_array_copy_to_host(arr[fin], host[fin]));
    uint64_t sum = o.checksum ? gather_checksum(host[fin] + nx, nx, ny, nranks) : 0;

    if (world_rank == 0) {
        uint64_t halo = 0, mpi = 0, copied = 0, staged = 0, exchanged = 0, overlapped = 0, launched = 0,
                 replayed = 0;
        double slowest = 0, exch = 0;
        printf("heat_mpi: %d x %d cells (NX x NY), %ld steps, %d rank%s, tile %dx%d\n", nx, ny, o.steps, nranks,
               nranks == 1 ? "" : "s", TILE_ROWS, TILE_COLS);
        for (int r = 0; r < nranks; ++r) {
            const rank_report *p = &all[r];
            char c1[32], c2[32];
            per_step(c1, sizeof c1, p->copied_bytes, o.steps);
            per_step(c2, sizeof c2, p->mpi_bytes, o.steps);
            printf("rank %d: %s (%s), rows %d..%d, %d neighbour%s, path %s, halo %llu B/step, mpi %s B/step, "
                   "copied %s B/step, %.6f s\n",
                   r, p->device, p->description, p->first_row, p->first_row + p->rows - 1, p->neighbours,
                   p->neighbours == 1 ? "" : "s", amp_mpi_path_name((amp_mpi_path)p->path),
                   (unsigned long long)p->halo_bytes, c2, c1, p->seconds);
            halo += p->halo_bytes;
            mpi += p->mpi_bytes;
            copied += p->copied_bytes;
            staged += p->staged_bytes;
            exchanged += p->exchanges;
            overlapped += p->exchanges_overlapped;
            launched += p->launches;
            replayed += p->launches_from_graphs;
            if (p->seconds > slowest) slowest = p->seconds;
            if (p->exchange_seconds > exch) exch = p->exchange_seconds;
        }
        printf("mpi: %s; gpu-aware: cuda %s, rocm %s (%s)\n", path.gpu.library, path.gpu.cuda ? "yes" : "no",
               path.gpu.rocm ? "yes" : "no", path.gpu.reason);
        printf("path %s: %s\n", amp_mpi_path_name(path.path), path.reason);
        printf("step %s\n", o.overlap ? "overlapped: exchange begun, interior rows, exchange ended, edge rows"
                                      : "not overlapped: exchange, then every row");
        printf("launches %s\n", o.graph ? "replayed from launch graphs (--graph)" : "direct");
        /* What ran, counted (the two lines above say what was asked). */
        printf("halo_exchanges %llu (all ranks, all steps)\n", (unsigned long long)exchanged);
        printf("halo_exchanges_overlapped %llu (of those, with a launch queued while in flight)\n",
               (unsigned long long)overlapped);
        printf("queue_launches %llu (all ranks' queues, all steps)\n", (unsigned long long)launched);
        printf("launches_from_graphs %llu (of those, replayed from launch graphs)\n", (unsigned long long)replayed);
        long timed = o.steps - warm;
        if (timed > 0)
            printf("time_per_step_s %.9f (steps %ld..%ld, slowest rank; exchange %.9f s/step)\n", slowest / timed,
                   warm, o.steps - 1, exch / (double)timed);
        else
            printf("time_per_step_s n/a (no step after the %ld warm-up steps)\n", warm);
        char c[32];
        printf("halo_bytes_per_step %llu (one row of %d floats out and one in per neighbour, all ranks)\n",
               (unsigned long long)halo, nx);
        per_step(c, sizeof c, mpi, o.steps);
        printf("mpi_bytes_per_step %s (handed to MPI, sent + received, all ranks)\n", c);
        per_step(c, sizeof c, copied, o.steps);
        printf("copied_bytes_per_step %s (hipamp statistics of the ranks' queues and exchangers: host<->device and "
               "staging copies)\n",
               c);
        per_step(c, sizeof c, staged, o.steps);
        printf("staged_bytes_per_step %s (of which through hipamp::mpi's host staging buffers)\n", c);
        /* One line with what bench/scaling_model.py reads (key value pairs). */
        int most_rows = 0;
        uint64_t most_halo = 0;
        for (int r = 0; r < nranks; ++r) {
            if (all[r].rows > most_rows) most_rows = all[r].rows;
            if (all[r].halo_bytes > most_halo) most_halo = all[r].halo_bytes;
        }
        printf("model_inputs nx %d rows_per_rank %d ranks %d overlap %d path %s time_per_step_s %.9f "
               "exchange_s_per_step %.9f row_bytes %llu halo_bytes_per_rank_per_step %llu\n",
               nx, most_rows, nranks, o.overlap ? 1 : 0, amp_mpi_path_name(path.path),
               timed > 0 ? slowest / (double)timed : 0.0, timed > 0 ? exch / (double)timed : 0.0,
               (unsigned long long)nx * sizeof(float), (unsigned long long)most_halo);
        if (o.checksum) printf("checksum %016llx\n", (unsigned long long)sum);
        fflush(stdout);
    }
    free(all);

    for (int k = 0; k < 2; ++k) {
        /* Before what they use (destroying that first is AMP_ERROR_BUSY). */
        TRY(amp_graph_destroy(g_all[k]));
        TRY(amp_graph_destroy(g_inner[k]));
        TRY(amp_graph_destroy(g_edges[k]));
    }
    for (int k = 0; k < 2; ++k) {
        if (inner) {
            TRY(amp_array_view_destroy(inner_out[k]));
            TRY(amp_array_view_destroy(inner_in[k]));
        }
        TRY(amp_array_view_destroy(halo_bottom[k]));
        TRY(amp_array_view_destroy(halo_top[k]));
        TRY(amp_array_view_destroy(bottom[k]));
        TRY(amp_array_view_destroy(top[k]));
        TRY(amp_array_view_destroy(owned[k]));
        TRY(amp_array_view_destroy(grid[k]));
        TRY(amp_array_destroy(arr[k]));
        free(host[k]);
    }
    TRY(amp_program_destroy(prog));
    TRY_MPI(amp_mpi_exchange_destroy(x));
    TRY(amp_accelerator_view_destroy(q));
    example_mpi_finalize();
    return 0;
}
