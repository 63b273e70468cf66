/* bench_cpu_stream.h — bench_cpu's stream section (bench_cpu_stream.c): BabelStream's kernels on the CPU accelerator against C + OpenMP. */
#ifndef HIPAMP_BENCH_CPU_STREAM_H
#define HIPAMP_BENCH_CPU_STREAM_H

#include <hipamp.h>

#include <stdio.h>

/* Run BabelStream's kernels on the CPU accelerator acc and in C + OpenMP
 * on as many threads, n elements an array (1..INT_MAX), times iterations
 * (>= 2), in the precisions `precisions` names (BENCH_STREAM_DOUBLE and/or
 * BENCH_STREAM_FLOAT; double first), and write the section (Markdown) to
 * o. Returns the number of rows whose check failed, -1 when a hipamp call
 * failed or host memory ran out (said on stderr). */
enum { BENCH_STREAM_DOUBLE = 1, BENCH_STREAM_FLOAT = 2 };
int bench_cpu_stream(FILE *o, amp_accelerator *acc, long long n, int times, int precisions);

#endif
