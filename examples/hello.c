/* hello.c — the smallest complete hipamp program: list accelerators, build the seed kernels, run vector_add and a padded tiled transpose, check both. */
#define _POSIX_C_SOURCE 200809L
#include <hipamp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern const char demo_seeds_source[];

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#define CHECK(call)                                                                   \
    do {                                                                              \
        amp_status st_ = (call);                                                      \
        if (st_ != AMP_OK) {                                                          \
            fprintf(stderr, "hello: %s failed: %s: %s\n", #call, amp_status_name(st_), \
                    amp_last_error());                                                \
            return 1;                                                                 \
        }                                                                             \
    } while (0)

static int run_vector_add(amp_program *prog, int n, double *ms)
{
    amp_kernel *k = NULL;
    CHECK(amp_program_get_kernel(prog, "vector_add", &k));
    float *a = malloc(sizeof(float) * n), *b = malloc(sizeof(float) * n), *c = malloc(sizeof(float) * n);
    if (!a || !b || !c) return 1;
    for (int i = 0; i < n; ++i) {
        a[i] = (float)i * 0.5f;
        b[i] = (float)(n - i);
        c[i] = -1.0f;
    }
    amp_array_view *va, *vb, *vc;
    CHECK(amp_array_view_create(a, sizeof(float), amp_extent_1d(n), AMP_READ_ONLY, &va));
    CHECK(amp_array_view_create(b, sizeof(float), amp_extent_1d(n), AMP_READ_ONLY, &vb));
    CHECK(amp_array_view_create(c, sizeof(float), amp_extent_1d(n), AMP_WRITE_ONLY, &vc));
    amp_arg args[] = {amp_arg_view(va), amp_arg_view(vb), amp_arg_view(vc)};
    double t0 = now_ms();
    CHECK(amp_parallel_for_each(NULL, amp_extent_1d(n), k, args, 3));
    CHECK(amp_array_view_synchronize(vc));
    *ms = now_ms() - t0;
    int bad = 0;
    for (int i = 0; i < n; ++i)
        if (c[i] != a[i] + b[i] && bad++ < 5)
            fprintf(stderr, "hello: vector_add c[%d] = %g, want %g\n", i, c[i], a[i] + b[i]);
    CHECK(amp_array_view_destroy(va));
    CHECK(amp_array_view_destroy(vb));
    CHECK(amp_array_view_destroy(vc));
    free(a);
    free(b);
    free(c);
    return bad != 0;
}

/* At = transpose(A) for a rows x cols matrix that 16x16 tiles do not divide:
 * the tiled extent is padded and the kernel guards the edge. */
static int run_transpose(amp_program *prog, int rows, int cols, double *ms)
{
    amp_kernel *k = NULL;
    CHECK(amp_program_get_kernel(prog, "transpose_tiled_pad", &k));
    size_t n = (size_t)rows * cols;
    float *A = malloc(sizeof(float) * n), *At = malloc(sizeof(float) * n);
    if (!A || !At) return 1;
    for (size_t i = 0; i < n; ++i) {
        A[i] = (float)i;
        At[i] = -1.0f;
    }
    amp_array_view *vA, *vAt;
    CHECK(amp_array_view_create(A, sizeof(float), amp_extent_2d(rows, cols), AMP_READ_ONLY, &vA));
    CHECK(amp_array_view_create(At, sizeof(float), amp_extent_2d(cols, rows), AMP_WRITE_ONLY, &vAt));
    amp_tiled_extent t, padded;
    CHECK(amp_extent_tile(amp_extent_2d(rows, cols), (const int[]){16, 16}, &t));
    CHECK(amp_tiled_extent_pad(t, &padded));
    amp_arg args[] = {amp_arg_view(vA), amp_arg_view(vAt)};
    double t0 = now_ms();
    CHECK(amp_parallel_for_each_tiled(NULL, padded, k, args, 2));
    CHECK(amp_array_view_synchronize(vAt));
    *ms = now_ms() - t0;
    int bad = 0;
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j)
            if (At[(size_t)j * rows + i] != A[(size_t)i * cols + j] && bad++ < 5)
                fprintf(stderr, "hello: transpose At[%d][%d] = %g, want %g\n", j, i,
                        At[(size_t)j * rows + i], A[(size_t)i * cols + j]);
    CHECK(amp_array_view_destroy(vA));
    CHECK(amp_array_view_destroy(vAt));
    free(A);
    free(At);
    return bad != 0;
}

int main(void)
{
    printf("hipamp %s hello\n\n", amp_version());
    size_t n = 0;
    CHECK(amp_accelerator_list(NULL, 0, &n));
    amp_accelerator *list[64];
    CHECK(amp_accelerator_list(list, 64, &n));
    if (n > 64) n = 64;
    printf("accelerators:\n");
    for (size_t i = 0; i < n; ++i) {
        amp_accelerator_info in;
        CHECK(amp_accelerator_get_info(list[i], &in));
        printf("  %-8s %-40s arch %-24s %s%s\n", in.device_path, in.description, in.arch,
               in.is_unified_memory ? "unified" : "discrete",
               in.is_available ? "" : "  (unavailable)");
        if (!in.is_available) printf("           reason: %s\n", in.unavailable_reason);
    }

    amp_accelerator *acc = NULL;
    CHECK(amp_accelerator_default(&acc));
    amp_accelerator_info info;
    CHECK(amp_accelerator_get_info(acc, &info));
    printf("\nrunning on %s (%s)\n", info.device_path, info.description);

    double t0 = now_ms();
    amp_program *prog = NULL;
    CHECK(amp_program_build(acc, demo_seeds_source, NULL, &prog));
    double build_ms = now_ms() - t0;
    printf("  build seeds.hip             %9.1f ms (compile cache: %s)\n", build_ms, amp_cache_dir());

    int fails = 0;
    double ms = 0;
    const int vn = 1 << 20;
    int r = run_vector_add(prog, vn, &ms);
    printf("  vector_add %8d floats   %9.2f ms  %s\n", vn, ms, r ? "WRONG" : "ok");
    fails += r;
    r = run_transpose(prog, 999, 666, &ms);
    printf("  transpose_tiled_pad 999x666 %9.2f ms  %s\n", ms, r ? "WRONG" : "ok");
    fails += r;
    CHECK(amp_program_destroy(prog));

    printf("\n%s\n", fails ? "hello FAILED" : "hello passed: results match the host reference");
    return fails ? 1 : 0;
}
