/* blas_interop.c — a vendor BLAS on hipamp arrays between two hipamp kernels: hipamp fills A and B on the device, the vendor's SGEMM multiplies them in place through the arrays' native pointers, queued on the same stream as hipamp's work, and a hipamp kernel finishes the result; checked against a host reference. The BLAS is loaded at run time: cuBLAS on NVIDIA, rocBLAS on AMD, a CBLAS (OpenBLAS, ...) on the CPU accelerator.
 * Usage: blas_interop [M N K]   (exit 0 passed, 1 failed, 77 no BLAS for the accelerator) */
#include <hipamp.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char interop_kernels[];

#define CHECK(call)                                                                                \
    do {                                                                                           \
        amp_status st_ = (call);                                                                   \
        if (st_ != AMP_OK) {                                                                       \
            fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call, amp_status_name(st_), \
                    amp_last_error());                                                             \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static void *open_any(const char *const *names)
{
    for (size_t i = 0; names[i]; ++i) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h) return h;
    }
    return NULL;
}

/* Row-major C (MxN) = A (MxK) * B (KxN). The column-major BLAS computes
 * C^T = B^T A^T from the same memory: its "A" is B with ld N, its "B" is A
 * with ld K, its C has ld N. stream: the array's native queue (GPU). */
static int gemm(const char *device_path, void *stream, int M, int N, int K, const float *A, const float *B, float *C,
                char *which, size_t wn)
{
    const float one = 1.0f, zero = 0.0f;
    if (!strncmp(device_path, "cuda:", 5)) {
        static const char *const libs[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so", NULL};
        void *lib = open_any(libs);
        if (!lib) return 77;
        int (*create)(void **) = (int (*)(void **))dlsym(lib, "cublasCreate_v2");
        int (*set_stream)(void *, void *) = (int (*)(void *, void *))dlsym(lib, "cublasSetStream_v2");
        int (*sgemm)(void *, int, int, int, int, int, const float *, const float *, int, const float *, int,
                     const float *, float *, int) =
            (int (*)(void *, int, int, int, int, int, const float *, const float *, int, const float *, int,
                     const float *, float *, int))dlsym(lib, "cublasSgemm_v2");
        int (*destroy)(void *) = (int (*)(void *))dlsym(lib, "cublasDestroy_v2");
        void *h = NULL;
        if (!create || !set_stream || !sgemm || !destroy || create(&h) || set_stream(h, stream)) return 77;
        int rc = sgemm(h, 0 /* N */, 0 /* N */, N, M, K, &one, B, N, A, K, &zero, C, N);
        destroy(h); /* waits for nothing: the work stays queued on the stream */
        snprintf(which, wn, "cuBLAS");
        return rc ? 1 : 0;
    }
    if (!strncmp(device_path, "hip:", 4)) {
        static const char *const libs[] = {"librocblas.so", "librocblas.so.4", "librocblas.so.3", "librocblas.so.0", NULL};
        void *lib = open_any(libs);
        if (!lib) return 77;
        int (*create)(void **) = (int (*)(void **))dlsym(lib, "rocblas_create_handle");
        int (*set_stream)(void *, void *) = (int (*)(void *, void *))dlsym(lib, "rocblas_set_stream");
        int (*sgemm)(void *, int, int, int, int, int, const float *, const float *, int, const float *, int,
                     const float *, float *, int) =
            (int (*)(void *, int, int, int, int, int, const float *, const float *, int, const float *, int,
                     const float *, float *, int))dlsym(lib, "rocblas_sgemm");
        int (*destroy)(void *) = (int (*)(void *))dlsym(lib, "rocblas_destroy_handle");
        void *h = NULL;
        if (!create || !set_stream || !sgemm || !destroy || create(&h) || set_stream(h, stream)) return 77;
        /* rocblas_operation_none = 111 */
        int rc = sgemm(h, 111, 111, N, M, K, &one, B, N, A, K, &zero, C, N);
        destroy(h);
        snprintf(which, wn, "rocBLAS");
        return rc ? 1 : 0;
    }
    /* The CPU accelerator: the arrays are host memory; a CBLAS works on them
     * directly (CblasRowMajor = 101, CblasNoTrans = 111). */
    static const char *const libs[] = {"libopenblas.so.0", "libopenblas.so", "libcblas.so.3", "libblis.so.4",
                                       "libblas.so.3", NULL};
    void *lib = open_any(libs);
    if (!lib) return 77;
    void (*sgemm)(int, int, int, int, int, int, float, const float *, int, const float *, int, float, float *, int) =
        (void (*)(int, int, int, int, int, int, float, const float *, int, const float *, int, float, float *,
                  int))dlsym(lib, "cblas_sgemm");
    if (!sgemm) return 77;
    sgemm(101, 111, 111, M, N, K, 1.0f, A, K, B, N, 0.0f, C, N);
    snprintf(which, wn, "CBLAS (cblas_sgemm)");
    return 0;
}

/* The same fill as the kernel, on the host. */
static float fill_value(int i, int k, int salt)
{
    unsigned h = (unsigned)(i * 7919 + k * 104729 + salt * 31337);
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return (float)((int)(h % 17u) - 8) * 0.125f;
}

int main(int argc, char **argv)
{
    int M = argc > 3 ? atoi(argv[1]) : 384, N = argc > 3 ? atoi(argv[2]) : 320, K = argc > 3 ? atoi(argv[3]) : 256;
    if (M <= 0 || N <= 0 || K <= 0) {
        fprintf(stderr, "usage: %s [M N K] (positive)\n", argv[0]);
        return 2;
    }
    amp_accelerator *acc;
    CHECK(amp_accelerator_default(&acc));
    amp_accelerator_info info;
    CHECK(amp_accelerator_get_info(acc, &info));
    amp_accelerator_view *q;
    CHECK(amp_accelerator_default_view(acc, &q));
    amp_program *prog;
    CHECK(amp_program_build(acc, interop_kernels, NULL, &prog));
    amp_kernel *fill, *finish;
    CHECK(amp_program_get_kernel(prog, "fill_operand", &fill));
    CHECK(amp_program_get_kernel(prog, "bias_relu", &finish));

    amp_array *A, *B, *C;
    CHECK(amp_array_create(q, sizeof(float), amp_extent_2d(M, K), NULL, &A));
    CHECK(amp_array_create(q, sizeof(float), amp_extent_2d(K, N), NULL, &B));
    CHECK(amp_array_create(q, sizeof(float), amp_extent_2d(M, N), NULL, &C));
    amp_array_view *vA, *vB, *vC;
    CHECK(amp_array_view_of_array(A, &vA));
    CHECK(amp_array_view_of_array(B, &vB));
    CHECK(amp_array_view_of_array(C, &vC));
    amp_arg fa[] = {amp_arg_view(vA), amp_arg_int32(1)}, fb[] = {amp_arg_view(vB), amp_arg_int32(2)};
    CHECK(amp_parallel_for_each(q, amp_extent_2d(M, K), fill, fa, 2));
    CHECK(amp_parallel_for_each(q, amp_extent_2d(K, N), fill, fb, 2));

    /* The vendor call, on the same queue as hipamp's work: no wait needed on
     * a GPU. A host library (CBLAS) needs the queue drained first. */
    void *pA, *pB, *pC, *stream;
    CHECK(amp_array_native_handle(A, &pA));
    CHECK(amp_array_native_handle(B, &pB));
    CHECK(amp_array_native_handle(C, &pC));
    CHECK(amp_accelerator_view_native_queue(q, &stream));
    if (!stream) CHECK(amp_accelerator_view_wait(q));
    char which[64] = "";
    int rc = gemm(info.device_path, stream, M, N, K, pA, pB, pC, which, sizeof which);
    if (rc == 77) {
        printf("blas_interop: no BLAS library for %s found; skipped\n", info.device_path);
        return 77;
    }
    if (rc) {
        fprintf(stderr, "blas_interop: the vendor SGEMM failed\n");
        return 1;
    }

    float *bias = malloc((size_t)N * sizeof *bias), *c = malloc((size_t)M * N * sizeof *c);
    if (!bias || !c) return 1;
    for (int j = 0; j < N; ++j) bias[j] = (float)(j % 5) - 2.0f;
    amp_array_view *vbias;
    CHECK(amp_array_view_create(bias, sizeof(float), amp_extent_1d(N), AMP_READ_ONLY, &vbias));
    amp_arg fc[] = {amp_arg_view(vC), amp_arg_view(vbias)};
    CHECK(amp_parallel_for_each(q, amp_extent_2d(M, N), finish, fc, 2));
    CHECK(amp_array_copy_to_host(C, c));

    /* Reference in double: every product and sum of these values is exact
     * in float too, so the comparison is tight. */
    double worst = 0;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            double s = 0;
            for (int k = 0; k < K; ++k) s += (double)fill_value(i, k, 1) * fill_value(k, j, 2);
            s += bias[j];
            if (s < 0) s = 0;
            double d = fabs(s - c[(size_t)i * N + j]);
            if (d > worst) worst = d;
        }
    printf("blas_interop: %s on %s, %dx%dx%d: max |difference| %.3g\n", which, info.device_path, M, N, K, worst);
    int ok = worst <= 1e-3;
    printf("blas_interop: %s\n", ok ? "passed" : "FAILED");
    amp_array_view_destroy(vbias);
    amp_array_view_destroy(vA);
    amp_array_view_destroy(vB);
    amp_array_view_destroy(vC);
    amp_array_destroy(A);
    amp_array_destroy(B);
    amp_array_destroy(C);
    amp_program_destroy(prog);
    free(bias);
    free(c);
    return ok ? 0 : 1;
}
