/* bench_cpu_algorithms.h — bench_cpu's algorithms section (bench_cpu_algorithms.c). */
#ifndef HIPAMP_BENCH_CPU_ALGORITHMS_H
#define HIPAMP_BENCH_CPU_ALGORITHMS_H

#include <hipamp.h>

#include <stdbool.h>
#include <stdio.h>

/* Measure the algorithms on the CPU accelerator acc and write the section
 * (Markdown) to o; quick: smaller sizes. Returns the number of results
 * that failed their check, -1 when a call failed (printed to stderr). */
int bench_cpu_algorithms(FILE *o, amp_accelerator *acc, bool quick);

#endif
