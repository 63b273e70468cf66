/* stream_interop.c — hipamp inside a program that already has its own GPU code: the program's stream and buffer (made with the CUDA or HIP runtime) are wrapped as an accelerator view and an array, the program's own copy and hipamp's kernel are ordered on that one stream without any wait in between, and the buffer stays the program's. Built as stream_interop_cuda (CUDA runtime) and/or stream_interop_hip (HIP runtime) where those are installed.
 * Exit 0 passed, 1 failed, 77 no GPU of that vendor. */
#include <hipamp.h>

#include <stdio.h>
#include <stdlib.h>

#if defined(HIPAMP_EXAMPLE_CUDA)
#include <cuda_runtime_api.h>
#define VENDOR "cuda"
typedef cudaStream_t gpu_stream;
#define gpu_malloc cudaMalloc
#define gpu_free cudaFree
#define gpu_stream_create cudaStreamCreate
#define gpu_stream_destroy cudaStreamDestroy
#define gpu_stream_sync cudaStreamSynchronize
#define gpu_memcpy_async cudaMemcpyAsync
#define GPU_H2D cudaMemcpyHostToDevice
#define GPU_D2H cudaMemcpyDeviceToHost
#define gpu_set_device cudaSetDevice
#define GPU_OK cudaSuccess
#else
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>
#define VENDOR "hip"
typedef hipStream_t gpu_stream;
#define gpu_malloc hipMalloc
#define gpu_free hipFree
#define gpu_stream_create hipStreamCreate
#define gpu_stream_destroy hipStreamDestroy
#define gpu_stream_sync hipStreamSynchronize
#define gpu_memcpy_async hipMemcpyAsync
#define GPU_H2D hipMemcpyHostToDevice
#define GPU_D2H hipMemcpyDeviceToHost
#define gpu_set_device hipSetDevice
#define GPU_OK hipSuccess
#endif

#define CHECK(call)                                                                                \
    do {                                                                                           \
        amp_status st_ = (call);                                                                   \
        if (st_ != AMP_OK) {                                                                       \
            fprintf(stderr, "%s: %s: %s\n", #call, amp_status_name(st_), amp_last_error());        \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)
#define GPU(call)                                                                                  \
    do {                                                                                           \
        if ((call) != GPU_OK) {                                                                    \
            fprintf(stderr, "%s failed\n", #call);                                                 \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static const char kernels[] =
    "AMP_KERNEL(square_plus, amp::index<1> i, amp::array_view<float, 1> v, float add)\n"
    "{ v[i] = v[i] * v[i] + add; }\n";

int main(void)
{
    enum { N = 1 << 22 };
    amp_accelerator *acc;
    if (amp_accelerator_find(VENDOR ":0", &acc) != AMP_OK) {
        printf("stream_interop: no %s:0 accelerator; skipped\n", VENDOR);
        return 77;
    }
    /* The program's own GPU code: a stream, a buffer, its data copied in. */
    GPU(gpu_set_device(0));
    gpu_stream stream;
    float *buf = NULL, *host = malloc(N * sizeof *host);
    if (!host) return 1;
    for (int i = 0; i < N; ++i) host[i] = (float)(i % 1000) * 0.5f;
    GPU(gpu_stream_create(&stream));
    GPU(gpu_malloc((void **)&buf, N * sizeof *buf));
    GPU(gpu_memcpy_async(buf, host, N * sizeof *buf, GPU_H2D, stream));

    /* hipamp on the same stream and buffer: the kernel runs after the copy,
     * and the copy back after the kernel, with no wait in between. */
    amp_accelerator_view *q;
    CHECK(amp_accelerator_view_create_from_native(acc, stream, &q));
    amp_array *a;
    CHECK(amp_array_create_from_native(q, buf, sizeof(float), amp_extent_1d(N), &a));
    amp_program *p;
    amp_kernel *k;
    CHECK(amp_program_build(acc, kernels, NULL, &p));
    CHECK(amp_program_get_kernel(p, "square_plus", &k));
    amp_arg args[] = {amp_arg_array(a), amp_arg_float32(1.0f)};
    CHECK(amp_parallel_for_each(q, amp_extent_1d(N), k, args, 2));
    GPU(gpu_memcpy_async(host, buf, N * sizeof *buf, GPU_D2H, stream));
    GPU(gpu_stream_sync(stream));

    int bad = 0;
    for (int i = 0; i < N; ++i) {
        float x = (float)(i % 1000) * 0.5f;
        if (host[i] != x * x + 1.0f && bad++ < 5) fprintf(stderr, "element %d: %g, want %g\n", i, host[i], x * x + 1.0f);
    }
    /* The array and view go; the buffer and stream are still the program's. */
    CHECK(amp_array_destroy(a));
    CHECK(amp_accelerator_view_destroy(q));
    CHECK(amp_program_destroy(p));
    GPU(gpu_stream_sync(stream));
    GPU(gpu_free(buf));
    GPU(gpu_stream_destroy(stream));
    free(host);
    printf("stream_interop (%s runtime): %s\n", VENDOR, bad ? "FAILED" : "passed");
    return bad ? 1 : 0;
}
