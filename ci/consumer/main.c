/* main.c — the consumer: squares 1000 integers on the default accelerator through an installed hipamp and checks them. */
#include <hipamp.h>
#include <stdio.h>

extern const char consumer_kernel[];

int main(void)
{
    enum { N = 1000 };
    int v[N];
    for (int i = 0; i < N; ++i) v[i] = i - 500;
    amp_program *p = NULL;
    amp_kernel *k = NULL;
    amp_array_view *view = NULL;
    if (amp_program_build(NULL, consumer_kernel, NULL, &p) != AMP_OK ||
        amp_program_get_kernel(p, "square", &k) != AMP_OK ||
        amp_array_view_create(v, sizeof v[0], amp_extent_1d(N), AMP_READ_WRITE, &view) != AMP_OK) {
        fprintf(stderr, "consumer: %s\n", amp_last_error());
        return 1;
    }
    amp_arg arg = amp_arg_view(view);
    if (amp_parallel_for_each(NULL, amp_extent_1d(N), k, &arg, 1) != AMP_OK ||
        amp_array_view_destroy(view) != AMP_OK) {
        fprintf(stderr, "consumer: %s\n", amp_last_error());
        return 1;
    }
    for (int i = 0; i < N; ++i)
        if (v[i] != (i - 500) * (i - 500)) {
            fprintf(stderr, "consumer: v[%d] = %d, want %d\n", i, v[i], (i - 500) * (i - 500));
            return 1;
        }
    amp_program_destroy(p);
    printf("consumer: installed hipamp %s squared %d integers correctly\n", amp_version(), N);
    return 0;
}
