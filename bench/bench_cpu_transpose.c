/* bench_cpu_transpose.c — bench_cpu's transpose section (issue 41): the seed's tiled transpose (test/kernels/seeds.hip's transpose_tiled_even: a 16 x 16 tile through tile_static float[16][16]) and bench_cpu's padded one (float[16][17]) on the CPU accelerator, against the blocked loop a C + OpenMP programmer writes (transpose_omp.c) on as many threads; each timed to completion, the sides' runs in alternating blocks after pauses, the median of each, the ratio hipamp / OpenMP beside the goal, every result checked bit for bit against a serial transpose. */
#define _GNU_SOURCE
#include <hipamp.h>

#include "bench_cpu_transpose.h"
#include "transpose_omp.h"
#include "workloads.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TC(call)                                                                                       \
    do {                                                                                               \
        amp_status s_ = (call);                                                                        \
        if (s_ != AMP_OK) {                                                                            \
            fprintf(stderr, "bench_cpu: %s: %s: %s\n", #call, amp_status_name(s_), amp_last_error());  \
            goto fail;                                                                                 \
        }                                                                                              \
    } while (0)

/* The seed's kernel is workloads.c's wl_seed_transpose_source; bench_cpu's
 * padded one comes with bench_cpu.c's kernels (bench_cpu_kernels_source). */

enum { ROWS = 2 };
/* Timed runs a side makes back to back (bench_cpu_transpose's runs is
 * rounded down to a multiple, at least one block). */
enum { BLOCK = 4 };
static const char *const kernel_names[ROWS] = {"transpose_tiled_even", "transpose_tiled"};
static const char *const row_names[ROWS] = {"seed's tiled transpose (tile_static float[16][16])",
                                            "bench_cpu's tiled transpose (tile_static float[16][17])"};

/* One size's measurements of both rows (amp_ms, omp_ms, the checks);
 * false when a hipamp call failed or host memory ran out (said on stderr). */
static bool transpose_at(amp_program *const prog[ROWS], int n, int runs, int threads, double amp_ms[ROWS],
                         double omp_ms[ROWS], bool amp_ok[ROWS], bool omp_ok[ROWS])
{
    bool done = false;
    const int blocks = runs / BLOCK;
    size_t nn = (size_t)n * (size_t)n;
    float *A = malloc(nn * sizeof *A), *ref = malloc(nn * sizeof *ref), *At = malloc(nn * sizeof *At),
          *Ao = malloc(nn * sizeof *Ao);
    double *ta = malloc((size_t)runs * sizeof *ta), *to = malloc((size_t)runs * sizeof *to);
    amp_array_view *va = NULL, *vt = NULL;
    if (!A || !ref || !At || !Ao || !ta || !to) {
        fprintf(stderr, "bench_cpu: no memory for the transpose section at %d x %d\n", n, n);
        goto fail;
    }
    uint32_t s = 12345u;
    for (size_t i = 0; i < nn; ++i) {
        s = s * 1664525u + 1013904223u;
        A[i] = (float)(s >> 8) / 16777216.0f;
    }
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) ref[(size_t)j * n + i] = A[(size_t)i * n + j];
    TC(amp_array_view_create(A, sizeof *A, amp_extent_2d(n, n), AMP_READ_ONLY, &va));
    TC(amp_array_view_create(At, sizeof *At, amp_extent_2d(n, n), AMP_WRITE_ONLY, &vt));
    amp_tiled_extent te;
    TC(amp_extent_tile(amp_extent_2d(n, n), (const int[]){16, 16}, &te));
    amp_arg args[2] = {amp_arg_view(va), amp_arg_view(vt)};
    for (int r = 0; r < ROWS; ++r) {
        amp_kernel *k = NULL;
        TC(amp_program_get_kernel(prog[r], kernel_names[r], &k));
        for (size_t i = 0; i < nn; ++i) At[i] = Ao[i] = -1.0f;
        TC(amp_array_view_refresh(vt));
        /* The sides run in blocks, not run by run, each block after a
         * pause (wl_settle) and one untimed run: OpenMP's idle threads
         * keep spinning for milliseconds after a region, and a hipamp run
         * right after one of OpenMP's shared the cores with them (on the
         * H200's host the seed's kernel took 6.4-7.6 ms so, about 2.8 ms
         * alone; 4.3-4.7 ms interleaved with OpenMP's threads passive, so
         * the spinning is part of it: back to back, each side also finds
         * its own arrays in the caches, as a program transposing
         * repeatedly does). Which side goes first alternates by block. */
        for (int b = 0; b < blocks; ++b)
            for (int side = 0; side < 2; ++side) {
                bool hip = (side == 0) == (b % 2 == 0);
                wl_settle();
                for (int it = -1; it < BLOCK; ++it) {
                    double t0 = wl_now();
                    if (hip) {
                        TC(amp_parallel_for_each_tiled(NULL, te, k, args, 2));
                        TC(amp_array_view_synchronize(vt));
                    } else {
                        tomp_transpose(A, Ao, n, threads);
                    }
                    double t = wl_now() - t0;
                    if (it >= 0) (hip ? ta : to)[b * BLOCK + it] = t;
                }
            }
        amp_ms[r] = wl_median(ta, runs) * 1e3;
        omp_ms[r] = wl_median(to, runs) * 1e3;
        amp_ok[r] = !memcmp(At, ref, nn * sizeof *At);
        omp_ok[r] = !memcmp(Ao, ref, nn * sizeof *Ao);
    }
    done = true;
fail:
    if (va) amp_array_view_destroy(va);
    if (vt) amp_array_view_destroy(vt);
    free(A);
    free(ref);
    free(At);
    free(Ao);
    free(ta);
    free(to);
    return done;
}

int bench_cpu_transpose(FILE *o, amp_accelerator *acc, const int *sizes, int nsizes, int runs)
{
    int bad = -1;
    const int blocks = runs / BLOCK > 0 ? runs / BLOCK : 1;
    runs = blocks * BLOCK;
    amp_program *prog[ROWS] = {NULL, NULL};
    enum { MAX_SIZES = 4 };
    double amp_ms[MAX_SIZES][ROWS], omp_ms[MAX_SIZES][ROWS];
    bool amp_ok[MAX_SIZES][ROWS], omp_ok[MAX_SIZES][ROWS];
    if (nsizes < 1 || nsizes > MAX_SIZES) {
        fprintf(stderr, "bench_cpu: %d transpose sizes (1 to %d)\n", nsizes, MAX_SIZES);
        return -1;
    }
    amp_accelerator_info info;
    TC(amp_accelerator_get_info(acc, &info));
    const int threads = info.compute_units > 0 ? info.compute_units : 1;
    TC(amp_program_build(acc, wl_seed_transpose_source, NULL, &prog[0]));
    TC(amp_program_build(acc, bench_cpu_kernels_source, NULL, &prog[1]));
    /* A size that could not be measured (no memory for its arrays, a
     * failed call: said on stderr) leaves the others' rows. */
    bool measured[MAX_SIZES], any_failed = false;
    for (int z = 0; z < nsizes; ++z) {
        measured[z] = transpose_at(prog, sizes[z], runs, threads, amp_ms[z], omp_ms[z], amp_ok[z], omp_ok[z]);
        any_failed |= !measured[z];
    }
    fprintf(o, "\n## Tiled transpose against a blocked OpenMP loop\n\n");
    fprintf(o, "An n x n float matrix transposed by tiled kernels (16 x 16 tiles through tile_static memory) on the "
               "CPU accelerator (%d threads) and by a blocked loop in C + OpenMP (bench/transpose_omp.c: 16 x 16 "
               "blocks written along At's rows, the rows of blocks shared out by one `omp parallel for`, static schedule, `num_threads(%d)`%s)"
               "; each run timed to completion (hipamp: launch + amp_array_view_synchronize), %d runs a side in "
               "blocks of %d back to back, each block after a %d ms pause (longer than idle OpenMP threads spin) and one untimed run, which side goes first alternating by block, medians. hipamp / OpenMP is the ratio of the speeds (OpenMP's time "
               "over hipamp's), above 1 when hipamp is faster; both results checked bit for bit against a serial "
               "transpose. Each size has arrays of its own (the input, hipamp's and OpenMP's outputs, the reference: "
               "4 n^2 floats). At 4096^2 they take 256 MiB, which a large last-level cache (300 MiB on the H200's "
               "host, shared with the machine's other tenants) holds in part, so there the times depend on what "
               "the other side and other programs left in it; at 8192^2 (1 GiB) both sides stream from memory.\n\n",
            threads, threads, tomp_available() ? "" : "; **no OpenMP here: one thread**", runs, BLOCK, (int)WL_SETTLE_MS);
    fprintf(o, "| kernel | n | hipamp ms | C + OpenMP ms | hipamp / OpenMP | goal | check |\n|---|---:|---:|---:|---:|---|---|\n");
    bad = 0;
    for (int z = 0; z < nsizes; ++z)
        for (int r = 0; r < ROWS; ++r) {
            if (!measured[z]) {
                fprintf(o, "| %s | %d | — | — | — | not measured (stderr says why) | **failed** |\n", row_names[r],
                        sizes[z]);
                continue;
            }
            double ratio = omp_ms[z][r] / amp_ms[z][r];
            bool ok = amp_ok[z][r] && omp_ok[z][r];
            bad += !ok;
            fprintf(o, "| %s | %d | %.2f | %.2f | **%.2f** | >= 0.9: %s | %s |\n", row_names[r], sizes[z], amp_ms[z][r],
                    omp_ms[z][r], ratio, ratio >= 0.9 ? "met" : "**missed**",
                    ok ? "passed" : !amp_ok[z][r] ? "**hipamp's differs**" : "**OpenMP's differs**");
        }
    if (any_failed) bad = -1;
fail:
    for (int r = 0; r < ROWS; ++r) amp_program_destroy(prog[r]);
    return bad;
}
