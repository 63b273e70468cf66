// bench_cpu_sort.cpp — the C++ standard library's sorts that bench_cpu's algorithms section compares hipamp's sort with: std::sort on one thread and, where bench_cpu is built with OpenMP, libstdc++'s parallel mode (__gnu_parallel::sort) on the threads given; compiled at -O3.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#ifdef _OPENMP
#include <omp.h>
#include <parallel/algorithm>
#endif

extern "C" {

// Milliseconds to sort keys[0..n) with std::sort.
double bench_std_sort_ms(uint32_t *keys, size_t n)
{
    auto t0 = std::chrono::steady_clock::now();
    std::sort(keys, keys + n);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Milliseconds to sort keys[0..n) with __gnu_parallel::sort on threads
// threads; -1 when bench_cpu was built without OpenMP.
double bench_parallel_sort_ms(uint32_t *keys, size_t n, int threads)
{
#ifdef _OPENMP
    omp_set_num_threads(threads);
    auto t0 = std::chrono::steady_clock::now();
    __gnu_parallel::sort(keys, keys + n);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
#else
    (void)keys;
    (void)n;
    (void)threads;
    return -1;
#endif
}
}
