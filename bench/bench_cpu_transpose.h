/* bench_cpu_transpose.h — bench_cpu's transpose section (bench_cpu_transpose.c): the tiled transposes on the CPU accelerator against a blocked C + OpenMP loop. */
#ifndef HIPAMP_BENCH_CPU_TRANSPOSE_H
#define HIPAMP_BENCH_CPU_TRANSPOSE_H

#include <hipamp.h>

#include <stdio.h>

/* Transpose n x n float matrices, n each of the nsizes (1 to 4) sizes[]
 * (multiples of 16), with the seed's
 * tiled kernel and bench_cpu's padded one on the CPU accelerator acc, and
 * with the blocked C + OpenMP loop on as many threads, `runs` timed runs
 * each (rounded down to whole blocks of bench_cpu_transpose.c's BLOCK,
 * at least one; the sides' blocks alternate, each after a pause and one
 * untimed run); write the section (Markdown) to o.
 * Returns the number of results that differ from the serial transpose, -1
 * when a hipamp call failed or host memory ran out (said on stderr; the
 * sizes measured are still reported). */
int bench_cpu_transpose(FILE *o, amp_accelerator *acc, const int *sizes, int nsizes, int runs);

/* bench_cpu.c's kernels (saxpy, matmuls, the padded transpose_tiled, the
 * reduction), which the transpose section builds for transpose_tiled. */
extern const char bench_cpu_kernels_source[];

#endif
