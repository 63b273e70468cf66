/* gpu_hip_vs_cuda.c — the GPU benchmark's "HIP on NVIDIA" section (--hip-vs-cuda-only): the same launch through hipamp's HIP driver (hip:0, HIP's NVIDIA platform) and its CUDA driver (cuda:0) on one GPU in one run, the cost of the HIP layer there; needs HIP_PLATFORM=nvidia and the test runtime on LD_LIBRARY_PATH (ci/gpu.sh with GPU_DRIVER=both). */
#include "gpu_harness.h"
#include "gpu_sections.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char vadd_source[] =
    "AMP_KERNEL(hvc_vadd, amp::index<1> i, amp::array_view<const float, 1> a,\n"
    "           amp::array_view<const float, 1> b, amp::array_view<float, 1> c)\n"
    "{ c[i] = a[i] + b[i]; }\n";

enum { HVC_N = 4096, HVC_PAIRS = 41, HVC_BATCH = 2000 };

static float *hvc_floats(void)
{
    float *x = malloc(HVC_N * sizeof *x);
    if (!x) die("no memory for %d floats", HVC_N);
    return x;
}

/* One accelerator's side: arrays on its default view, the kernel built. */
typedef struct hvc_side {
    const char *path;
    amp_accelerator_view *q;
    amp_program *p;
    amp_kernel *k;
    amp_array *a, *b, *c;
} hvc_side;

static bool hvc_open(hvc_side *s, const char *path, const float *a, const float *b)
{
    amp_accelerator *acc = NULL;
    memset(s, 0, sizeof *s);
    s->path = path;
    amp_accelerator_info ai;
    if (amp_accelerator_find(path, &acc) != AMP_OK || amp_accelerator_get_info(acc, &ai) != AMP_OK ||
        !ai.is_available) {
        printf("HIP on NVIDIA: %s not available (%s); run with HIP_PLATFORM=nvidia and the test runtime on "
               "LD_LIBRARY_PATH (ci/gpu.sh, GPU_DRIVER=both)\n\n",
               path, acc ? ai.unavailable_reason : amp_last_error());
        return false;
    }
    amp_extent e = amp_extent_1d(HVC_N);
    AK(amp_accelerator_view_create(acc, &s->q));
    AK(amp_program_build(acc, vadd_source, NULL, &s->p));
    AK(amp_program_get_kernel(s->p, "hvc_vadd", &s->k));
    AK(amp_array_create(s->q, sizeof(float), e, a, &s->a));
    AK(amp_array_create(s->q, sizeof(float), e, b, &s->b));
    AK(amp_array_create(s->q, sizeof(float), e, NULL, &s->c));
    return true;
}

static void hvc_close(hvc_side *s)
{
    if (!s->q) return;
    amp_array_destroy(s->a);
    amp_array_destroy(s->b);
    amp_array_destroy(s->c);
    amp_program_destroy(s->p);
    amp_accelerator_view_destroy(s->q);
}

/* Seconds a launch: n launches queued back to back, then one wait. */
static double hvc_batch(hvc_side *s, int n)
{
    amp_arg args[3] = {amp_arg_array(s->a), amp_arg_array(s->b), amp_arg_array(s->c)};
    double t0 = wl_now();
    for (int i = 0; i < n; ++i) AK(amp_parallel_for_each(s->q, amp_extent_1d(HVC_N), s->k, args, 3));
    AK(amp_accelerator_view_wait(s->q));
    return (wl_now() - t0) / n;
}

/* The result against the host's sum, element by element (never zeros:
 * the inputs are in [1, 2)). */
static bool hvc_check(hvc_side *s, const float *a, const float *b)
{
    float *c = hvc_floats();
    AK(amp_array_copy_to_host(s->c, c));
    int bad = 0;
    for (int i = 0; i < HVC_N; ++i) bad += c[i] != a[i] + b[i];
    free(c);
    if (bad) printf("HIP on NVIDIA: %s computed %d of %d sums wrong\n", s->path, bad, HVC_N);
    return bad == 0;
}

void hip_vs_cuda_report(void)
{
    float *a = hvc_floats(), *b = hvc_floats();
    for (int i = 0; i < HVC_N; ++i) {
        a[i] = 1.0f + (float)(i % 97) / 128.0f;
        b[i] = 1.0f + (float)(i % 89) / 256.0f;
    }
    hvc_side hip, cuda;
    bool ok = hvc_open(&hip, "hip:0", a, b) && hvc_open(&cuda, "cuda:0", a, b);
    if (ok) {
        /* Warm-up: module loads (hip:0 JIT-compiles PTX at its first load),
         * pools, clocks. */
        for (int i = 0; i < 3; ++i) {
            hvc_batch(&hip, HVC_BATCH);
            hvc_batch(&cuda, HVC_BATCH);
        }
        double h[HVC_PAIRS], c[HVC_PAIRS], r[HVC_PAIRS];
        for (int i = 0; i < HVC_PAIRS; ++i) {
            if (i & 1) {
                c[i] = hvc_batch(&cuda, HVC_BATCH);
                h[i] = hvc_batch(&hip, HVC_BATCH);
            } else {
                h[i] = hvc_batch(&hip, HVC_BATCH);
                c[i] = hvc_batch(&cuda, HVC_BATCH);
            }
            r[i] = h[i] / c[i];
        }
        bool right = hvc_check(&hip, a, b) & hvc_check(&cuda, a, b);
        double hm = wl_median(h, HVC_PAIRS), cm = wl_median(c, HVC_PAIRS), rm = wl_median(r, HVC_PAIRS);
        printf("## HIP on NVIDIA: hipamp's HIP driver against its CUDA driver\n\n");
        printf("One GPU, one run: %d pairs of %d back-to-back launches of a %d-element vector add (arrays in "
               "device memory), hip:0 and cuda:0 alternating which goes first; the time a launch is the "
               "batch's host time (launches and one wait) over its count; medians. No goal: this is the cost "
               "of HIP's NVIDIA layer (CUDA runtime calls under each HIP call).\n\n",
               HVC_PAIRS, HVC_BATCH, HVC_N);
        printf("| path | µs a launch | ratio to cuda:0 |\n|---|---|---|\n");
        printf("| cuda:0 (CUDA driver, NVRTC) | %.3f | 1 |\n", cm * 1e6);
        printf("| hip:0 (HIP driver on HIP's NVIDIA platform, hipRTC = NVRTC) | %.3f | %.3f (median of the "
               "pairs' ratios) |\n\n", hm * 1e6, rm);
        printf("Results checked against the host's sums: %s.\n\n", right ? "both right" : "WRONG");
        if (!right) failures++;
    }
    hvc_close(&hip);
    hvc_close(&cuda);
    free(a);
    free(b);
}
