/* stream_omp.h — BabelStream's kernels in C + OpenMP (stream_omp.c), for bench_cpu's stream section: _d on double, _f on float, each an `omp parallel for` on `threads` threads. */
#ifndef HIPAMP_BENCH_STREAM_OMP_H
#define HIPAMP_BENCH_STREAM_OMP_H

#include <stdbool.h>

/* Whether stream_omp.c was compiled with OpenMP (false: the loops run on
 * one thread, and the section says so). */
bool somp_available(void);

#define SOMP_DECLARE(T, sfx)                                                                     \
    void somp_init_##sfx(T *a, T *b, T *c, T x, T y, T z, long n, int threads);                    \
    void somp_copy_##sfx(const T *restrict a, T *restrict c, long n, int threads);                 \
    void somp_mul_##sfx(T *restrict b, const T *restrict c, long n, int threads);                  \
    void somp_add_##sfx(const T *restrict a, const T *restrict b, T *restrict c, long n, int threads); \
    void somp_triad_##sfx(T *restrict a, const T *restrict b, const T *restrict c, long n, int threads); \
    void somp_nstream_##sfx(T *restrict a, const T *restrict b, const T *restrict c, long n, int threads); \
    /* The sum of a[i] * b[i], added in double for both element types: an  \
     * OpenMP float reduction is each thread's long run added in float     \
     * (on 2 threads, 2^24 products a run), which no check could hold; the \
     * kernel reads the same bytes either way. */                           \
    double somp_dot_##sfx(const T *restrict a, const T *restrict b, long n, int threads);
SOMP_DECLARE(double, d)
SOMP_DECLARE(float, f)
#undef SOMP_DECLARE

#endif
