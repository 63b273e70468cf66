/* bench_launch_count.c — a launch loop on the CPU accelerator for counting the launch path's instructions with callgrind (it measures nothing itself): N launches of a one-element kernel with one view and one value, synchronous or asynchronous (each future waited for and destroyed), then the result checked. Run it as
 *   AMP_CPU_THREADS=1 valgrind --tool=callgrind --toggle-collect=amp_parallel_for_each bench_launch_count sync 2000
 *   AMP_CPU_THREADS=1 valgrind --tool=callgrind --toggle-collect=amp_parallel_for_each_async bench_launch_count async 2000
 * and divide the collected instructions by N (callgrind_annotate --inclusive=yes splits them by function). */
#include <hipamp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char kernel[] = "AMP_KERNEL(lc_store, amp::index<1> i, amp::array_view<int, 1> v, int x)\n"
                             "{ v[i] = x; }\n";

static int fail(const char *what, amp_status st)
{
    fprintf(stderr, "bench_launch_count: %s: %s: %s\n", what, amp_status_name(st), amp_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    bool async = argc > 1 && !strcmp(argv[1], "async");
    long n = argc > 2 ? strtol(argv[2], NULL, 10) : 1000;
    if (argc < 2 || (!async && strcmp(argv[1], "sync")) || n < 1) {
        fprintf(stderr, "usage: %s sync|async [N]\n", argv[0]);
        return 2;
    }
    amp_accelerator *acc;
    amp_accelerator_view *q;
    amp_program *p;
    amp_kernel *k;
    amp_array_view *v;
    amp_status st;
    int data = -1;
    if ((st = amp_accelerator_find("cpu", &acc)) != AMP_OK) return fail("the CPU accelerator", st);
    if ((st = amp_accelerator_default_view(acc, &q)) != AMP_OK) return fail("its view", st);
    if ((st = amp_program_build(acc, kernel, NULL, &p)) != AMP_OK) return fail("build", st);
    if ((st = amp_program_get_kernel(p, "lc_store", &k)) != AMP_OK) return fail("kernel", st);
    if ((st = amp_array_view_create(&data, sizeof data, amp_extent_1d(1), AMP_READ_WRITE, &v)) != AMP_OK)
        return fail("view", st);
    for (long i = 0; i < n; ++i) {
        amp_arg a[] = {amp_arg_view(v), amp_arg_int32((int32_t)i)};
        if (async) {
            amp_future *f = NULL;
            if ((st = amp_parallel_for_each_async(q, amp_extent_1d(1), k, a, 2, &f)) != AMP_OK)
                return fail("launch", st);
            if ((st = amp_future_wait(f)) != AMP_OK) return fail("wait", st);
            amp_future_destroy(f);
        } else if ((st = amp_parallel_for_each(q, amp_extent_1d(1), k, a, 2)) != AMP_OK) {
            return fail("launch", st);
        }
    }
    if ((st = amp_array_view_synchronize(v)) != AMP_OK) return fail("synchronize", st);
    if (data != (int)(n - 1)) {
        fprintf(stderr, "bench_launch_count: the last launch wrote %d, want %ld\n", data, n - 1);
        return 1;
    }
    amp_array_view_destroy(v);
    amp_program_destroy(p);
    printf("%ld %s launches\n", n, async ? "asynchronous" : "synchronous");
    return 0;
}
