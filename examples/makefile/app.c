/* app.c — the Makefile example: runs saxpy.hip (embedded by hipamp-embed) on the default accelerator through an installed hipamp found with pkg-config, and checks it against the same loop on the host. */
#include "saxpy_kernel.h" /* generated: extern const char saxpy_source[]; */

#include <hipamp.h>
#include <stdio.h>
#include <stdlib.h>

#define N 100000

/* Reproducible values in [-1, 1), never zero. */
static float sample(unsigned *state)
{
    *state = *state * 1664525u + 1013904223u;
    float v = (float)(*state >> 8) / 8388608.0f - 1.0f;
    return v == 0.0f ? 0.5f : v;
}

int main(void)
{
    int rc = 1;
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *want = malloc(N * sizeof *want);
    amp_program *prog = NULL;
    amp_kernel *k = NULL;
    amp_array_view *vx = NULL, *vy = NULL;
    amp_accelerator *acc = NULL;
    amp_accelerator_info info;
    const float a = 2.5f;
    if (!x || !y || !want) {
        fprintf(stderr, "app: out of memory\n");
        goto done;
    }
    unsigned seed = 12345u;
    for (int i = 0; i < N; ++i) {
        x[i] = sample(&seed);
        y[i] = sample(&seed);
        want[i] = a * x[i] + y[i];
    }
    amp_arg args[3];
    if (amp_accelerator_default(&acc) != AMP_OK || amp_accelerator_get_info(acc, &info) != AMP_OK ||
        amp_program_build(NULL, saxpy_source, NULL, &prog) != AMP_OK ||
        amp_program_get_kernel(prog, "saxpy", &k) != AMP_OK ||
        amp_array_view_create(x, sizeof *x, amp_extent_1d(N), AMP_READ_ONLY, &vx) != AMP_OK ||
        amp_array_view_create(y, sizeof *y, amp_extent_1d(N), AMP_READ_WRITE, &vy) != AMP_OK)
        goto fail;
    args[0] = amp_arg_float32(a);
    args[1] = amp_arg_view(vx);
    args[2] = amp_arg_view(vy);
    if (amp_parallel_for_each(NULL, amp_extent_1d(N), k, args, 3) != AMP_OK ||
        amp_array_view_synchronize(vy) != AMP_OK)
        goto fail;
    /* A GPU may fuse the multiply-add (one rounding instead of two). */
    for (int i = 0; i < N; ++i) {
        float d = y[i] - want[i], tol = 1e-6f * (want[i] < 0 ? -want[i] : want[i]) + 1e-7f;
        if (d > tol || d < -tol) {
            fprintf(stderr, "app: y[%d] = %.9g, want %.9g\n", i, (double)y[i], (double)want[i]);
            goto done;
        }
    }
    printf("app: saxpy of %d floats on %s (hipamp %s) matches the host\n", N, info.device_path, amp_version());
    rc = 0;
    goto done;
fail:
    fprintf(stderr, "app: %s\n", amp_last_error());
done:
    if (vx) amp_array_view_destroy(vx);
    if (vy) amp_array_view_destroy(vy);
    if (prog) amp_program_destroy(prog);
    free(x);
    free(y);
    free(want);
    return rc;
}
