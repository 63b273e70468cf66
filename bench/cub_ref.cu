// cub_ref.cu — the CUB side of the GPU benchmark's algorithms section (bench/gpu_algorithms.c runs it beside itself): DeviceReduce::Sum, DeviceScan::ExclusiveSum, DeviceRadixSort::SortKeys and SortPairs on the sizes it is given, device time with events, median of the runs, one line per figure: "cub NAME ELEMENTS MILLISECONDS". Built by nvcc where the CUDA toolkit has one (target cub_ref, not part of the default build).
//
//   cub_ref [--reduce N] [--scan N] [--sort N] [--reps R]
#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(call)                                                                                       \
    do {                                                                                               \
        cudaError_t e_ = (call);                                                                       \
        if (e_ != cudaSuccess) {                                                                       \
            std::fprintf(stderr, "cub_ref: %s: %s\n", #call, cudaGetErrorString(e_));                  \
            std::exit(1);                                                                              \
        }                                                                                              \
    } while (0)

// Reproducible pseudo-random words (the same generator for every run).
__global__ void fill_random(unsigned *p, size_t n, unsigned seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned x = (unsigned)i * 2654435761u ^ seed;
        x ^= x >> 16;
        x *= 0x7feb352du;
        x ^= x >> 15;
        x *= 0x846ca68bu;
        x ^= x >> 16;
        p[i] = x;
    }
}
// Floats in [0, 1) from the same words.
__global__ void to_unit_float(unsigned *p, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        reinterpret_cast<float *>(p)[i] = (p[i] >> 8) * (1.0f / 16777216.0f);
}

static cudaEvent_t e0, e1;

// Median device time of reps runs of f (each run may set up untimed work
// first through prep).
template <class Prep, class Run> static double median_ms(int reps, Prep prep, Run run)
{
    std::vector<double> t;
    prep();
    run(); // warm-up
    CK(cudaDeviceSynchronize());
    for (int r = 0; r < reps; ++r) {
        prep();
        CK(cudaEventRecord(e0));
        run();
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

int main(int argc, char **argv)
{
    size_t n_reduce = size_t(1) << 28, n_scan = size_t(1) << 28, n_sort = size_t(1) << 26;
    int reps = 7;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--reduce")) n_reduce = std::strtoull(argv[i + 1], nullptr, 10);
        else if (!std::strcmp(argv[i], "--scan")) n_scan = std::strtoull(argv[i + 1], nullptr, 10);
        else if (!std::strcmp(argv[i], "--sort")) n_sort = std::strtoull(argv[i + 1], nullptr, 10);
        else if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
    }
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    int rt = 0;
    CK(cudaRuntimeGetVersion(&rt));
    std::printf("cub version %d.%d.%d, CUDA runtime %d\n", CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION,
                rt);
    size_t nmax = std::max(n_reduce, std::max(n_scan, n_sort));
    unsigned *a = nullptr, *b = nullptr, *c = nullptr, *d = nullptr, *keep = nullptr;
    void *tmp = nullptr;
    size_t tmp_bytes = 0;
    CK(cudaMalloc(&a, nmax * 4));
    CK(cudaMalloc(&b, nmax * 4));
    float *sum = nullptr;
    CK(cudaMalloc(&sum, sizeof(float)));
    auto need = [&](size_t bytes) {
        if (bytes <= tmp_bytes) return;
        if (tmp) CK(cudaFree(tmp));
        CK(cudaMalloc(&tmp, bytes));
        tmp_bytes = bytes;
    };
    auto nothing = [] {};

    // Reduce: the sum of n floats in [0, 1).
    fill_random<<<1024, 256>>>(a, n_reduce, 1u);
    to_unit_float<<<1024, 256>>>(a, n_reduce);
    size_t bytes = 0;
    CK(cub::DeviceReduce::Sum(nullptr, bytes, (const float *)a, sum, (int)n_reduce));
    need(bytes);
    double ms = median_ms(reps, nothing, [&] {
        size_t tb = tmp_bytes;
        CK(cub::DeviceReduce::Sum(tmp, tb, (const float *)a, sum, (int)n_reduce));
    });
    std::printf("cub reduce_sum_f32 %zu %.6f\n", n_reduce, ms);

    // Exclusive scans of int32 and float32.
    fill_random<<<1024, 256>>>(a, n_scan, 2u);
    CK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, (const int *)a, (int *)b, (int)n_scan));
    need(bytes);
    ms = median_ms(reps, nothing, [&] {
        size_t tb = tmp_bytes;
        CK(cub::DeviceScan::ExclusiveSum(tmp, tb, (const int *)a, (int *)b, (int)n_scan));
    });
    std::printf("cub scan_exclusive_i32 %zu %.6f\n", n_scan, ms);
    to_unit_float<<<1024, 256>>>(a, n_scan);
    CK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, (const float *)a, (float *)b, (int)n_scan));
    need(bytes);
    ms = median_ms(reps, nothing, [&] {
        size_t tb = tmp_bytes;
        CK(cub::DeviceScan::ExclusiveSum(tmp, tb, (const float *)a, (float *)b, (int)n_scan));
    });
    std::printf("cub scan_exclusive_f32 %zu %.6f\n", n_scan, ms);

    // Radix sorts of uint32 keys, and of (uint32, uint32) pairs, each run on
    // fresh random keys (the copy from keep is not timed).
    CK(cudaMalloc(&c, n_sort * 4));
    CK(cudaMalloc(&d, n_sort * 4));
    CK(cudaMalloc(&keep, n_sort * 4));
    fill_random<<<1024, 256>>>(keep, n_sort, 3u);
    fill_random<<<1024, 256>>>(c, n_sort, 4u);
    CK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, (const unsigned *)a, b, (int)n_sort));
    need(bytes);
    auto restore = [&] { CK(cudaMemcpy(a, keep, n_sort * 4, cudaMemcpyDeviceToDevice)); };
    ms = median_ms(reps, restore, [&] {
        size_t tb = tmp_bytes;
        CK(cub::DeviceRadixSort::SortKeys(tmp, tb, (const unsigned *)a, b, (int)n_sort));
    });
    std::printf("cub sort_keys_u32 %zu %.6f\n", n_sort, ms);
    CK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, (const unsigned *)a, b, (const unsigned *)c, d, (int)n_sort));
    need(bytes);
    ms = median_ms(reps, restore, [&] {
        size_t tb = tmp_bytes;
        CK(cub::DeviceRadixSort::SortPairs(tmp, tb, (const unsigned *)a, b, (const unsigned *)c, d, (int)n_sort));
    });
    std::printf("cub sort_pairs_u32 %zu %.6f\n", n_sort, ms);
    CK(cudaDeviceSynchronize());
    return 0;
}
