/* cache_helper.c — a second process for test_cache.c: builds a kernel source file on one accelerator (through the on-disk cache), runs it and checks the result. */
#include <hipamp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Usage: cache_helper DEVICE_PATH SOURCE_FILE [OPTIONS]
 * Builds SOURCE_FILE on DEVICE_PATH (with amp_program_build_file when
 * HIPAMP_HELPER_BUILD_FILE=1, else from its text), runs its kernel
 * cache_probe_scale over 1000 ints and checks them (each gets
 * HIPAMP_HELPER_EXPECT_ADD more when the kernel adds a header's constant).
 * Exit: 0 ok, 1 usage, 2 no accelerator, 3 build failed, 4 kernel missing,
 * 5 launch failed, 6 wrong result. With HIPAMP_HELPER_INFO=PATH it writes
 * amp_cache_get_info's fields there, one "name value" a line, once the
 * build is done (whether it worked or not). DEVICE_PATH "target:NAME"
 * compiles the file with amp_compile_for_target for NAME instead (a GPU
 * target, no GPU needed) and runs nothing: exit 0 or 3. */
static void dump_info(void)
{
    const char *path = getenv("HIPAMP_HELPER_INFO");
    amp_cache_info ci;
    if (!path || !*path || amp_cache_get_info(&ci) != AMP_OK) return;
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return;
    }
    fprintf(f, "enabled %d\nhits %llu\nmisses %llu\nstores %llu\nrejected %llu\nuncacheable %llu\nreason %s\nlast %s\n",
            (int)ci.disk_enabled, (unsigned long long)ci.disk_hits, (unsigned long long)ci.disk_misses,
            (unsigned long long)ci.disk_stores, (unsigned long long)ci.disk_rejected,
            (unsigned long long)ci.uncacheable_builds, ci.reason, ci.last_uncacheable);
    fclose(f);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s DEVICE_PATH SOURCE_FILE [OPTIONS]\n", argv[0]);
        return 1;
    }
    FILE *f = fopen(argv[2], "rb");
    if (!f) {
        perror(argv[2]);
        return 1;
    }
    static char src[1 << 16];
    size_t n = fread(src, 1, sizeof src - 1, f);
    fclose(f);
    src[n] = '\0';

    /* "target:NAME": amp_compile_for_target for NAME instead (exit 0 or 3). */
    if (!strncmp(argv[1], "target:", 7)) {
        amp_code_object *co = NULL;
        amp_status cst = amp_compile_for_target(argv[1] + 7, src, argc > 3 && argv[3][0] ? argv[3] : NULL, &co);
        if (cst != AMP_OK) {
            fprintf(stderr, "cache_helper: build: %s: %s\n", amp_status_name(cst), amp_last_error());
            return 3;
        }
        amp_code_object_destroy(co);
        return 0;
    }
    amp_accelerator *acc = NULL;
    amp_status st = amp_accelerator_find(argv[1], &acc);
    if (st != AMP_OK) {
        fprintf(stderr, "cache_helper: find %s: %s: %s\n", argv[1], amp_status_name(st), amp_last_error());
        return 2;
    }
    amp_program *p = NULL;
    const char *by_file = getenv("HIPAMP_HELPER_BUILD_FILE");
    const char *opts = argc > 3 && argv[3][0] ? argv[3] : NULL;
    if (by_file && !strcmp(by_file, "1")) st = amp_program_build_file(acc, argv[2], opts, &p);
    else st = amp_program_build(acc, src, opts, &p);
    dump_info();
    if (st != AMP_OK) {
        fprintf(stderr, "cache_helper: build: %s: %s\n", amp_status_name(st), amp_last_error());
        return 3;
    }
    amp_kernel *k = NULL;
    st = amp_program_get_kernel(p, "cache_probe_scale", &k);
    if (st != AMP_OK) {
        fprintf(stderr, "cache_helper: get_kernel: %s: %s\n", amp_status_name(st), amp_last_error());
        return 4;
    }
    enum { N = 1000 };
    int data[N];
    for (int i = 0; i < N; ++i) data[i] = i % 17 - 8;
    amp_array_view *v = NULL;
    st = amp_array_view_create(data, sizeof(int), amp_extent_1d(N), AMP_READ_WRITE, &v);
    if (st == AMP_OK) {
        amp_arg args[] = {amp_arg_view(v), amp_arg_int32(3)};
        st = amp_parallel_for_each(NULL, amp_extent_1d(N), k, args, 2);
        amp_status st2 = amp_array_view_destroy(v);
        if (st == AMP_OK) st = st2;
    }
    if (st != AMP_OK) {
        fprintf(stderr, "cache_helper: launch: %s: %s\n", amp_status_name(st), amp_last_error());
        return 5;
    }
    const char *add_s = getenv("HIPAMP_HELPER_EXPECT_ADD");
    int add = add_s ? atoi(add_s) : 0;
    for (int i = 0; i < N; ++i) {
        int want = (i % 17 - 8) * 3 + i + add;
        if (data[i] != want) {
            fprintf(stderr, "cache_helper: data[%d] = %d, want %d\n", i, data[i], want);
            return 6;
        }
    }
    amp_program_destroy(p);
    return 0;
}
