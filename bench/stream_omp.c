/* stream_omp.c — BabelStream's kernels in C + OpenMP (as its OpenMP version writes them: one `omp parallel for` a kernel, static schedule, a `reduction(+:)` for the dot), the reference of bench_cpu's stream section (bench_cpu_stream.c), in float and double, on a given number of threads. Compiled alone with the compiler's OpenMP flag (bench/CMakeLists.txt), so that no other file of bench_cpu is. */
#include "stream_omp.h"

#ifdef _OPENMP
#include <omp.h>
#endif

bool somp_available(void)
{
#ifdef _OPENMP
    return true;
#else
    return false;
#endif
}

/* The scalar is the kernels' constant, as in stream.hip. The dot adds in
 * double for both element types (see stream_omp.h). */
#define SOMP_DEFINE(T, sfx)                                                                  \
    void somp_init_##sfx(T *a, T *b, T *c, T x, T y, T z, long n, int threads)                \
    {                                                                                        \
        _Pragma("omp parallel for schedule(static) num_threads(threads)")                     \
        for (long i = 0; i < n; ++i) {                                                       \
            a[i] = x;                                                                        \
            b[i] = y;                                                                        \
            c[i] = z;                                                                        \
        }                                                                                    \
    }                                                                                        \
    void somp_copy_##sfx(const T *restrict a, T *restrict c, long n, int threads)            \
    {                                                                                        \
        _Pragma("omp parallel for schedule(static) num_threads(threads)")                     \
        for (long i = 0; i < n; ++i) c[i] = a[i];                                            \
    }                                                                                        \
    void somp_mul_##sfx(T *restrict b, const T *restrict c, long n, int threads)             \
    {                                                                                        \
        const T scalar = (T)0.4;                                                             \
        _Pragma("omp parallel for schedule(static) num_threads(threads)")                     \
        for (long i = 0; i < n; ++i) b[i] = scalar * c[i];                                   \
    }                                                                                        \
    void somp_add_##sfx(const T *restrict a, const T *restrict b, T *restrict c, long n, int threads) \
    {                                                                                        \
        _Pragma("omp parallel for schedule(static) num_threads(threads)")                     \
        for (long i = 0; i < n; ++i) c[i] = a[i] + b[i];                                     \
    }                                                                                        \
    void somp_triad_##sfx(T *restrict a, const T *restrict b, const T *restrict c, long n, int threads) \
    {                                                                                        \
        const T scalar = (T)0.4;                                                             \
        _Pragma("omp parallel for schedule(static) num_threads(threads)")                     \
        for (long i = 0; i < n; ++i) a[i] = b[i] + scalar * c[i];                            \
    }                                                                                        \
    void somp_nstream_##sfx(T *restrict a, const T *restrict b, const T *restrict c, long n, int threads) \
    {                                                                                        \
        const T scalar = (T)0.4;                                                             \
        _Pragma("omp parallel for schedule(static) num_threads(threads)")                     \
        for (long i = 0; i < n; ++i) a[i] += b[i] + scalar * c[i];                           \
    }                                                                                        \
    double somp_dot_##sfx(const T *restrict a, const T *restrict b, long n, int threads)     \
    {                                                                                        \
        double sum = 0;                                                                      \
        _Pragma("omp parallel for schedule(static) num_threads(threads) reduction(+ : sum)")  \
        for (long i = 0; i < n; ++i) sum += (double)a[i] * (double)b[i];                     \
        return sum;                                                                          \
    }
SOMP_DEFINE(double, d)
SOMP_DEFINE(float, f)
