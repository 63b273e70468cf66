/* transpose_omp.h — the blocked C + OpenMP transpose (transpose_omp.c), the reference of bench_cpu's transpose section (bench_cpu_transpose.c). */
#ifndef HIPAMP_BENCH_TRANSPOSE_OMP_H
#define HIPAMP_BENCH_TRANSPOSE_OMP_H

#include <stdbool.h>

/* Whether transpose_omp.c was compiled with OpenMP. */
bool tomp_available(void);

/* At = A transposed (n x n floats, row-major), in 16 x 16 blocks, the rows
 * of blocks shared out by an `omp parallel for` (static) on `threads`
 * threads (one thread where compiled without OpenMP: somp_available). */
void tomp_transpose(const float *restrict A, float *restrict At, int n, int threads);

#endif
