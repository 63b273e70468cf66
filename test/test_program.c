/* test_program.c — program build and kernel lookup on each accelerator: seed kernels, unknown kernels, compile errors with the user's line numbers, options, the device library left out of a GPU build and the retries with it (and without NVRTC's --minimal), NVRTC kept out of the driver's compute cache, NULL arguments, the in-memory cache. */
#include "support.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The name the library gives the user's source in compiler messages. */
#define KERNEL_FILE_NAME "kernel.hip"

static const char *const seed_kernels[] = {
    "transpose_tiled_even", "transpose_tiled_pad", "matmul_tiled16",
    "matmul_simple",        "vector_add",          "barrier_loop",
};
#define N_SEED (sizeof seed_kernels / sizeof seed_kernels[0])

/* Run vector_add (from k) on acc and check every element. */
static void check_vector_add(amp_kernel *k)
{
    enum { N = 4099 };
    static float a[N], b[N], c[N];
    test_fill_random(a, N, 1);
    test_fill_random(b, N, 2);
    for (int i = 0; i < N; ++i) c[i] = -1000.0f;
    amp_array_view *va = NULL, *vb = NULL, *vc = NULL;
    ASSERT_OK(amp_array_view_create(a, sizeof(float), amp_extent_1d(N), AMP_READ_ONLY, &va));
    ASSERT_OK(amp_array_view_create(b, sizeof(float), amp_extent_1d(N), AMP_READ_ONLY, &vb));
    ASSERT_OK(amp_array_view_create(c, sizeof(float), amp_extent_1d(N), AMP_WRITE_ONLY, &vc));
    amp_arg args[] = {amp_arg_view(va), amp_arg_view(vb), amp_arg_view(vc)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(N), k, args, 3));
    ASSERT_OK(amp_array_view_synchronize(vc));
    for (int i = 0; i < N; ++i)
        cr_assert_eq(c[i], a[i] + b[i], "c[%d] = %g, want %g", i, (double)c[i], (double)(a[i] + b[i]));
    ASSERT_OK(amp_array_view_destroy(va));
    ASSERT_OK(amp_array_view_destroy(vb));
    ASSERT_OK(amp_array_view_destroy(vc));
}

/* A source no other test (and no earlier run's disk cache) has seen, so the
 * build really compiles. */
static char *unique_source(const char *body)
{
    static unsigned counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    size_t n = strlen(body) + 128;
    char *s = malloc(n);
    cr_assert_not_null(s);
    snprintf(s, n, "// unique %ld.%09ld.%d.%u\n%s", (long)ts.tv_sec, ts.tv_nsec, (int)getpid(), counter++, body);
    return s;
}

/* -------------------------------------------------------------- seeds */

ACCEL_TEST(program, build_seeds_and_get_every_kernel)
{
    amp_program *p = test_build(acc, test_kernels_seeds);
    amp_kernel *ks[N_SEED];
    for (size_t i = 0; i < N_SEED; ++i) {
        ks[i] = test_kernel(p, seed_kernels[i]);
        cr_assert_not_null(ks[i], "%s", seed_kernels[i]);
        for (size_t j = 0; j < i; ++j)
            cr_assert_neq(ks[i], ks[j], "%s and %s share a handle", seed_kernels[i], seed_kernels[j]);
    }
    /* Looking a kernel up twice works too. */
    amp_kernel *again = NULL;
    ASSERT_OK(amp_program_get_kernel(p, "vector_add", &again));
    cr_assert_not_null(again);
    check_vector_add(again);
    ASSERT_OK(amp_program_destroy(p));
}

ACCEL_TEST(program, unknown_kernel_named)
{
    amp_program *p = test_build(acc, test_kernels_seeds);
    const char *names[] = {"no_such_kernel_xyz", "vector_ad", "vector_add__amp_sig", "VECTOR_ADD"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
        amp_kernel *k = (amp_kernel *)(void *)&k;
        ASSERT_STATUS(amp_program_get_kernel(p, names[i], &k), AMP_ERROR_KERNEL_NOT_FOUND);
        cr_assert_null(k, "out-param not NULL after failure");
        cr_assert(strstr(amp_last_error(), names[i]) != NULL, "message should name \"%s\": \"%s\"", names[i],
                  amp_last_error());
    }
    /* An empty name: the same status on every accelerator (the CPU's said
     * KERNEL_NOT_FOUND, a GPU's INVALID_ARGUMENT). */
    amp_kernel *k = (amp_kernel *)(void *)&k;
    ASSERT_STATUS(amp_program_get_kernel(p, "", &k), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(k);
    cr_assert(strstr(amp_last_error(), "name is empty"), "%s", amp_last_error());
    ASSERT_OK(amp_program_destroy(p));
}

/* A kernel may be named after a C library function (div, rand, select,
 * remove, random, time, signal, qsort): every compiler takes these (the CPU
 * accelerator's unit includes the C library, which declares them; its
 * entry points are not named after the kernel). The ones CUDA's headers
 * declare (exp, abs, sqrt) are test_codeobject's. */
ACCEL_TEST(program, kernels_named_after_c_library_functions_build_and_run)
{
    static const char src[] =
        "AMP_KERNEL(div, amp::index<1> i, amp::array_view<int, 1> a) { a[i] += 1; }\n"
        "AMP_KERNEL(rand, amp::index<1> i, amp::array_view<int, 1> a) { a[i] += 2; }\n"
        "AMP_KERNEL(select, amp::index<1> i, amp::array_view<int, 1> a) { a[i] += 4; }\n"
        "AMP_KERNEL(remove, amp::index<1> i, amp::array_view<int, 1> a) { a[i] += 8; }\n"
        "AMP_KERNEL(random, amp::index<1> i, amp::array_view<int, 1> a) { a[i] += 16; }\n"
        "AMP_KERNEL(time, amp::index<1> i, amp::array_view<int, 1> a) { a[i] += 32; }\n"
        "AMP_KERNEL(signal, amp::index<1> i, amp::array_view<int, 1> a) { a[i] += 64; }\n"
        "AMP_TILED_KERNEL(qsort, amp::tiled_index<4> t, amp::array_view<int, 1> a) {\n"
        "    tile_static int s[4];\n"
        "    s[t.local[0]] = a[t.global];\n"
        "    t.barrier.wait();\n"
        "    a[t.global] = s[3 - t.local[0]] + 128;\n"
        "}\n";
    static const char *const names[] = {"div", "rand", "select", "remove", "random", "time", "signal", "qsort"};
    int data[8];
    for (int i = 0; i < 8; ++i) data[i] = 1000 * i;
    amp_program *p = test_build(acc, src);
    amp_array_view *v = test_view(data, 4, amp_extent_1d(8), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v)};
    amp_tiled_extent te;
    ASSERT_OK(amp_extent_tile_1d(amp_extent_1d(8), 4, &te));
    for (int k = 0; k < 8; ++k) {
        amp_kernel *kn = test_kernel(p, names[k]);
        if (k < 7) ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(8), kn, a, 1));
        else ASSERT_OK(amp_parallel_for_each_tiled(NULL, te, kn, a, 1));
    }
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < 8; ++i) {
        int tile = i / 4 * 4, mirror = tile + 3 - i % 4;
        cr_assert_eq(data[i], 1000 * mirror + 255, "element %d: %d", i, data[i]);
    }
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
}

/* ------------------------------------------------------ compile errors */

/* The error is on line 4 of the user's source. */
static const char bad_src_line4[] =
    "// line 1: a kernel with an error on line 4\n"
    "AMP_KERNEL(broken, amp::index<1> i, amp::array_view<float, 1> a)\n"
    "{\n"
    "    a[i] = undeclared_identifier_xyz * 2.0f;\n"
    "}\n";

ACCEL_TEST(program, compile_error_has_user_line)
{
    amp_program *p = (amp_program *)(void *)&p;
    ASSERT_STATUS(amp_program_build(acc, bad_src_line4, NULL, &p), AMP_ERROR_COMPILE);
    cr_assert_null(p, "out-param not NULL after failure");
    const char *log = amp_last_error();
    cr_assert(strstr(log, "undeclared_identifier_xyz") != NULL, "log lacks the compiler's message: %s", log);
    /* clang/gcc: "kernel.hip:4:12: error"; NVRTC: "kernel.hip(4): error". */
    cr_assert(strstr(log, KERNEL_FILE_NAME ":4:") != NULL || strstr(log, KERNEL_FILE_NAME "(4)") != NULL,
              "log should point at " KERNEL_FILE_NAME " line 4: %s", log);
}

ACCEL_TEST(program, compile_error_line_after_many_lines)
{
    /* 40 lines of valid code, then an error on line 42: checks that the
     * prelude's lines are not counted. */
    char src[4096] = "";
    for (int i = 1; i <= 40; ++i) {
        char line[64];
        snprintf(line, sizeof line, "static const int filler_%d = %d;\n", i, i);
        strcat(src, line);
    }
    strcat(src, "AMP_KERNEL(broken42, amp::index<1> i, amp::array_view<int, 1> a) {\n"); /* 41 */
    strcat(src, "    a[i] = this_is_not_declared_42;\n");                                /* 42 */
    strcat(src, "}\n");
    amp_program *p = NULL;
    ASSERT_STATUS(amp_program_build(acc, src, NULL, &p), AMP_ERROR_COMPILE);
    const char *log = amp_last_error();
    cr_assert(strstr(log, "this_is_not_declared_42") != NULL, "log: %s", log);
    cr_assert(strstr(log, KERNEL_FILE_NAME ":42:") != NULL || strstr(log, KERNEL_FILE_NAME "(42)") != NULL,
              "log should point at " KERNEL_FILE_NAME " line 42: %s", log);
}

ACCEL_TEST(program, failed_build_is_not_cached)
{
    /* The same bad source fails every time (a failure is not remembered as a
     * program), and a good build right after works. */
    amp_program *p = NULL;
    ASSERT_STATUS(amp_program_build(acc, bad_src_line4, NULL, &p), AMP_ERROR_COMPILE);
    ASSERT_STATUS(amp_program_build(acc, bad_src_line4, NULL, &p), AMP_ERROR_COMPILE);
    cr_assert(strstr(amp_last_error(), "undeclared_identifier_xyz") != NULL, "second log: %s", amp_last_error());
    amp_program *good = test_build(acc, test_kernels_seeds);
    ASSERT_OK(amp_program_destroy(good));
}

/* ------------------------------------------------------------- options */

static const char needs_flag_src[] =
    "#ifndef HIPAMP_TEST_FLAG\n"
    "#error HIPAMP_TEST_FLAG_missing\n"
    "#endif\n"
    "AMP_KERNEL(flagged, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = HIPAMP_TEST_FLAG; }\n";

ACCEL_TEST(program, options_reach_the_compiler_and_the_cache_key)
{
    amp_program *p = NULL;
    ASSERT_STATUS(amp_program_build(acc, needs_flag_src, NULL, &p), AMP_ERROR_COMPILE);
    cr_assert(strstr(amp_last_error(), "HIPAMP_TEST_FLAG_missing") != NULL, "log: %s", amp_last_error());

    ASSERT_OK(amp_program_build(acc, needs_flag_src, "-DHIPAMP_TEST_FLAG=7", &p));
    amp_kernel *k = test_kernel(p, "flagged");
    int data[64];
    memset(data, 0, sizeof data);
    amp_array_view *v = NULL;
    ASSERT_OK(amp_array_view_create(data, sizeof(int), amp_extent_1d(64), AMP_READ_WRITE, &v));
    amp_arg args[] = {amp_arg_view(v)};
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(64), k, args, 1));
    ASSERT_OK(amp_array_view_destroy(v));
    for (int i = 0; i < 64; ++i) cr_assert_eq(data[i], 7, "data[%d] = %d", i, data[i]);
    ASSERT_OK(amp_program_destroy(p));

    /* Another value is another program (options are part of the cache key). */
    ASSERT_OK(amp_program_build(acc, needs_flag_src, "-DHIPAMP_TEST_FLAG=9", &p));
    k = test_kernel(p, "flagged");
    ASSERT_OK(amp_array_view_create(data, sizeof(int), amp_extent_1d(64), AMP_READ_WRITE, &v));
    args[0] = amp_arg_view(v);
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(64), k, args, 1));
    ASSERT_OK(amp_array_view_destroy(v));
    for (int i = 0; i < 64; ++i) cr_assert_eq(data[i], 9, "data[%d] = %d (stale cached program?)", i, data[i]);
    ASSERT_OK(amp_program_destroy(p));

    /* And no options fails again: the flagged builds were not reused. */
    ASSERT_STATUS(amp_program_build(acc, needs_flag_src, NULL, &p), AMP_ERROR_COMPILE);
    ASSERT_STATUS(amp_program_build(acc, needs_flag_src, "", &p), AMP_ERROR_COMPILE);
}

/* Users name their build-time constants N, T, I, ... ("-DN=4" is the
 * README's own example), and the preludes that precede every kernel used
 * such plain names for template parameters and locals: each of these
 * options broke every build ("in expansion of macro 'N'" inside the
 * prelude; -DN=1024 even blamed the kernel for 12304 bytes of
 * parameters). The preludes' own names are now reserved (__amp_N, ...):
 * the kernels below use the macros, plain, tiled (tile_static, a barrier,
 * the fiber and loop paths on the CPU accelerator) and with the device
 * library (int2, an atomic), and give the host's numbers. The same source
 * and options compile for gfx90a and sm_90 in test_codeobject.c.
 *
 * The GPU compilers' own headers, which come before hipamp's text, use
 * some of these names themselves (HIP 5.2's amd_hip_runtime.h and
 * amd_hip_vector_types.h and clang's __clang_hip_math.h: T, F, R, V, B,
 * U; NVRTC's built-in header: T): a GPU build writes its -D options into
 * the unit after hipamp's text, where those headers never see them, so
 * every accelerator takes the same options (before, T, F, R, V, B and U
 * broke every GPU build). */
#include "macro_names.h"

ACCEL_TILED_TEST(program, build_options_may_define_short_uppercase_names)
{
    enum { LEN = 64 };
    char *src = unique_source(macro_names_src); /* compiled here, not taken from a cache */
    amp_program *p = NULL;
    amp_status st = amp_program_build(acc, src, MACRO_NAME_OPTIONS, &p);
    cr_assert_eq(st, AMP_OK, "%s: %.2000s", amp_status_name(st), amp_last_error());
    free(src);
    int a[LEN], c[1] = {0};
    for (int i = 0; i < LEN; ++i) a[i] = i;
    amp_array_view *va = NULL, *vc = NULL;
    ASSERT_OK(amp_array_view_create(a, sizeof(int), amp_extent_1d(LEN), AMP_READ_WRITE, &va));
    ASSERT_OK(amp_array_view_create(c, sizeof(int), amp_extent_1d(1), AMP_READ_WRITE, &vc));
    amp_arg args[] = {amp_arg_view(va), amp_arg_int32(100)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(LEN), test_kernel(p, "uses_n"), args, 2));
    amp_tiled_extent tiles;
    ASSERT_OK(amp_extent_tile_1d(amp_extent_1d(LEN), 4, &tiles));
    ASSERT_OK(amp_parallel_for_each_tiled(NULL, tiles, test_kernel(p, "tiled_n"), args, 1));
    amp_arg cargs[] = {amp_arg_view(vc)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(LEN), test_kernel(p, "count_n"), cargs, 1));
    ASSERT_OK(amp_array_view_synchronize(va));
    ASSERT_OK(amp_array_view_synchronize(vc));
    for (int i = 0; i < LEN; ++i) {
        int j = i / 4 * 4 + 3 - i % 4;          /* reversed within each tile of N = 4 */
        int want = j * 4 + 100 + 13 - 14 + 2 * 3; /* uses_n, then tiled_n's A * H */
        cr_assert_eq(a[i], want, "a[%d] = %d, want %d", i, a[i], want);
    }
    cr_assert_eq(c[0], LEN, "count_n: %d, want %d (I = 1 per work-item)", c[0], LEN);
    ASSERT_OK(amp_array_view_destroy(va));
    ASSERT_OK(amp_array_view_destroy(vc));
    ASSERT_OK(amp_program_destroy(p));
}

/* On the CPU accelerator, where g++ reads the options' macros before the
 * unit, an option's macro that still meets a name in the prelude (here a
 * public one: amp::array_view) is what the first line names, with where in
 * hipamp's source it was expanded; not the kernel's parameters (-DN=1024
 * used to be told "kernel 'k' takes 12304 bytes of parameters"). A GPU
 * build writes the options' macros after hipamp's text (option_macros.c),
 * so there the prelude never meets it and a kernel that does not use the
 * name builds. */
ACCEL_TEST(program, an_options_macro_that_breaks_the_prelude_is_named)
{
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    char *src = unique_source("AMP_KERNEL(plain, amp::index<1> i, int x) { (void)x; }\n");
    amp_program *p = (amp_program *)(void *)&p;
    amp_status st = amp_program_build(acc, src, "-Darray_view=1024", &p);
    free(src);
    if (!info.is_emulated) {
        cr_assert_eq(st, AMP_OK, "%s: %.3000s", amp_status_name(st), amp_last_error());
        ASSERT_OK(amp_program_destroy(p));
        return;
    }
    cr_assert_eq(st, AMP_ERROR_COMPILE, "%s", amp_status_name(st));
    cr_assert_null(p);
    const char *log = amp_last_error();
    cr_assert(!strstr(log, "bytes of parameters"), "%s", log);
    cr_assert(strstr(log, "the build option's macro 'array_view' is expanded inside hipamp's own source (amp_") == log,
              "%.3000s", log);
}

/* A word of the options that is no option would be another input file of
 * the compile (a source, an object), one the caches' keys and the checks of
 * what the compiler read never see: an edit to it went unseen, the module
 * built with the old one kept loading. Refused on every accelerator, naming
 * the word; the value of an option that takes the next word is no input. */
ACCEL_TEST(program, an_options_word_that_is_no_option_is_refused)
{
    const char *bad[] = {"-DHIPAMP_TEST_FLAG=7 extra_input.cpp", "-DHIPAMP_TEST_FLAG=\"1 + 2\"",
                         "-DHIPAMP_TEST_FLAG=7 -"};
    const char *named[] = {"'extra_input.cpp'", "'+'", "'-' in the compiler options"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        amp_program *p = (amp_program *)(void *)&p;
        ASSERT_STATUS(amp_program_build(acc, needs_flag_src, bad[i], &p), AMP_ERROR_INVALID_ARGUMENT);
        cr_assert_null(p);
        cr_assert(strstr(amp_last_error(), named[i]) && strstr(amp_last_error(), "not an option"), "%s: %s", bad[i],
                  amp_last_error());
    }
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    if (strcmp(info.device_path, "cpu")) return; /* NVRTC spells a -D value joined */
    amp_program *p = NULL;
    ASSERT_OK(amp_program_build(acc, needs_flag_src, "-D HIPAMP_TEST_FLAG=7 -I /nonexistent-hipamp-dir", &p));
    ASSERT_OK(amp_program_destroy(p));
}

/* A function the source declares and never defines: a compile error on
 * every accelerator, naming it (the CPU accelerator's module linked with it
 * undefined and failed to load, told as a device error). */
ACCEL_TEST(program, a_function_declared_and_never_defined_is_a_compile_error)
{
    char *src = unique_source("__device__ int hipamp_test_never_defined(int);\n"
                              "AMP_KERNEL(uses_undefined, amp::index<1> i, amp::array_view<int, 1> a) {\n"
                              "    a[i] = hipamp_test_never_defined(i[0]);\n"
                              "}\n");
    for (int round = 0; round < 2; ++round) { /* the second from whatever a cache kept */
        amp_program *p = (amp_program *)(void *)&p;
        ASSERT_STATUS(amp_program_build(acc, src, NULL, &p), AMP_ERROR_COMPILE);
        cr_assert_null(p);
        /* (HIP's NVIDIA platform: the driver's PTX compile says no name) */
        cr_assert(strstr(amp_last_error(), "hipamp_test_never_defined") ||
                      strstr(amp_last_error(), "could not compile the PTX hipRTC made"),
                  "%s", amp_last_error());
    }
    free(src);
}

/* A parameter aligned past 32 bytes, more than 32 parameters, a name past
 * 255 characters: each refused when it compiles with the one message that
 * names it (the host took the first for a kernel without a record, the
 * second's log began with shift errors, the third lost its records'
 * lookups to fixed buffers); a record made by hand with a 64-byte
 * alignment is refused at lookup with the numbers. */
ACCEL_TEST(program, kernel_limits_are_told_when_the_kernel_compiles)
{
    amp_program *p = (amp_program *)(void *)&p;
    ASSERT_STATUS(amp_program_build(acc,
                                    "struct alignas(64) Wide { float x; };\n"
                                    "AMP_KERNEL(wide_align, amp::index<1> i, amp::array_view<float, 1> a, Wide w) "
                                    "{ a[i] = w.x; }\n",
                                    NULL, &p),
                  AMP_ERROR_COMPILE);
    cr_assert(strstr(amp_last_error(), "kernel parameter 1") && strstr(amp_last_error(), "at most 32 bytes"), "%s",
              amp_last_error());

    char params[33 * 10 + 1] = "", src[1024];
    for (int k = 0; k < 33; ++k) snprintf(params + strlen(params), sizeof params - strlen(params), ", int p%d", k);
    snprintf(src, sizeof src, "AMP_KERNEL(many_params, amp::index<1> i%s) {}\n", params);
    ASSERT_STATUS(amp_program_build(acc, src, NULL, &p), AMP_ERROR_COMPILE);
    cr_assert(strstr(amp_last_error(), "at most 32 parameters") && !strstr(amp_last_error(), "shift") &&
                  !strstr(amp_last_error(), "STREAMING_STORES"),
              "%s", amp_last_error());

    char name[300];
    memset(name, 'n', sizeof name);
    name[256] = '\0';
    snprintf(src, sizeof src, "AMP_KERNEL(%s, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = 1; }\n", name);
    ASSERT_STATUS(amp_program_build(acc, src, NULL, &p), AMP_ERROR_COMPILE);
    cr_assert(strstr(amp_last_error(), "at most 255 characters"), "%s", amp_last_error());
    name[255] = '\0'; /* 255: builds, found, launched with its block size */
    snprintf(src, sizeof src,
             "AMP_KERNEL_MAX_BLOCK(%s, 1024)\n"
             "AMP_KERNEL(%s, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = 1; }\n", name, name);
    p = test_build(acc, src);
    amp_kernel *k = test_kernel(p, name);
    amp_kernel_info info;
    ASSERT_OK(amp_kernel_get_info(k, &info));
    cr_assert_str_eq(info.name, name, "amp_kernel_info.name holds the whole name (it was cut at 127)");
    int data[512] = {0};
    amp_array_view *v = test_view(data, sizeof(int), amp_extent_1d(512), AMP_READ_WRITE);
    amp_arg args[] = {amp_arg_view(v)};
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    amp_launch_options o = {.block_size = 512};
    ASSERT_OK(amp_parallel_for_each_with(q, amp_extent_1d(512), k, args, 1, &o));
    ASSERT_OK(amp_array_view_destroy(v));
    for (int i = 0; i < 512; ++i) cr_assert_eq(data[i], 1, "data[%d] = %d", i, data[i]);
    memset(name, 'n', 299);
    name[299] = '\0';
    k = (amp_kernel *)(void *)&k;
    ASSERT_STATUS(amp_program_get_kernel(p, name, &k), AMP_ERROR_KERNEL_NOT_FOUND);
    cr_assert_null(k);
    cr_assert(strstr(amp_last_error(), "299 characters") && strstr(amp_last_error(), "at most 255"), "%s",
              amp_last_error());
    ASSERT_OK(amp_program_destroy(p));

    static const char forged[] =
        "#ifdef AMP_CPU\n"
        "extern \"C\" __attribute__((visibility(\"default\"))) void aligned64__amp_entry(amp__cpu_item *) {}\n"
        "extern \"C\" __attribute__((visibility(\"default\"), used)) amp::detail::signature aligned64__amp_sig =\n"
        "#else\n"
        "extern \"C\" __global__ void aligned64(amp::detail::launch_info, int) {}\n"
        "extern \"C\" __device__ __attribute__((used)) amp::detail::signature aligned64__amp_sig =\n"
        "#endif\n"
        "    {0x53504d41, 2, 0, 1, {0, 0, 0}, 1, 128, 64, {{14, 64, 0, 0, 0, 64, 64, 0}}};\n";
    p = test_build(acc, forged);
    k = (amp_kernel *)(void *)&k;
    ASSERT_STATUS(amp_program_get_kernel(p, "aligned64", &k), AMP_ERROR_UNSUPPORTED);
    cr_assert_null(k);
    cr_assert(strstr(amp_last_error(), "aligned to 64 bytes") && strstr(amp_last_error(), "at most 32"), "%s",
              amp_last_error());
    ASSERT_OK(amp_program_destroy(p));
}

/* ------------------------------------------ the device library on demand */

/* A GPU program whose text names nothing of the device library compiles
 * without it (lib/core/program.c). This kernel reaches amp::atomic_fetch_add
 * only through token pasting, so the check does not see the name
 * (test_internal's device_lib_wanted_by_names checks that it is not seen):
 * on a GPU the lean compile fails and the retry with the library must give
 * the same program as on the CPU accelerator, which always has it. */
static const char pasted_atomic_src[] =
    "#define PASTE_(a, b) a##b\n"
    "#define PASTE(a, b) PASTE_(a, b)\n"
    "AMP_KERNEL(count_odd, amp::index<1> i, amp::array_view<const int, 1> in, amp::array_view<int, 1> n) {\n"
    "    if (in[i] & 1) amp::PASTE(atom, ic_fetch_add)(&n[0], 1);\n"
    "}\n";

ACCEL_TEST(program, device_library_name_the_check_misses_still_builds)
{
    enum { N = 1000 };
    int in[N], count = 0;
    for (int i = 0; i < N; ++i) in[i] = i * 7 + 3; /* odd when i is even: 500 */
    char *src = unique_source(pasted_atomic_src);
    amp_program *p = NULL;
    ASSERT_OK(amp_program_build(acc, src, NULL, &p));
    free(src);
    amp_kernel *k = test_kernel(p, "count_odd");
    amp_array_view *vi = NULL, *vn = NULL;
    ASSERT_OK(amp_array_view_create(in, sizeof(int), amp_extent_1d(N), AMP_READ_ONLY, &vi));
    ASSERT_OK(amp_array_view_create(&count, sizeof(int), amp_extent_1d(1), AMP_READ_WRITE, &vn));
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    amp_arg args[] = {amp_arg_view(vi), amp_arg_view(vn)};
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), k, args, 2));
    ASSERT_OK(amp_array_view_synchronize(vn));
    cr_assert_eq(count, N / 2, "count = %d, want %d", count, N / 2);
    ASSERT_OK(amp_array_view_destroy(vi));
    ASSERT_OK(amp_array_view_destroy(vn));
    ASSERT_OK(amp_program_destroy(p));
}

/* A kernel with a real error and no device-library name: on a GPU both the
 * lean compile and the retry fail, and the message is the retry's (the
 * user's line, no trace of the first attempt). */
ACCEL_TEST(program, device_library_retry_reports_the_users_error)
{
    char *src = unique_source("AMP_KERNEL(broken, amp::index<1> i, amp::array_view<int, 1> a) {\n"
                              "    a[i] = not_declared_anywhere_77;\n"
                              "}\n");
    amp_program *p = NULL;
    ASSERT_STATUS(amp_program_build(acc, src, NULL, &p), AMP_ERROR_COMPILE);
    free(src);
    cr_assert_null(p);
    const char *log = amp_last_error();
    cr_assert(strstr(log, "not_declared_anywhere_77") != NULL, "log: %s", log);
    /* unique_source's comment is line 1: the error is on line 3. */
    cr_assert(strstr(log, KERNEL_FILE_NAME ":3:") != NULL || strstr(log, KERNEL_FILE_NAME "(3)") != NULL,
              "log should point at " KERNEL_FILE_NAME " line 3: %s", log);
}

/* NVRTC 12.4 and later compile with --minimal, whose builtin header lacks
 * the CUDA runtime's types; a kernel naming one (CUDA-only code) fails that
 * compile and must build through the retry without it. */
Test(program, cuda_runtime_name_builds_through_the_retry_without_minimal)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_GPU);
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    if (strncmp(info.device_path, "cuda:", 5))
        cr_skip_test("%s is not a CUDA device (NVRTC's --minimal is CUDA's)", info.device_path);
    char *src = unique_source("AMP_KERNEL(rt, amp::index<1> i, amp::array_view<int, 1> a) {\n"
                              "    cudaError_t e = cudaSuccess;\n"
                              "    a[i] = (int)e + 7;\n"
                              "}\n");
    amp_program *p = NULL;
    ASSERT_OK(amp_program_build(acc, src, NULL, &p));
    free(src);
    amp_kernel *k = test_kernel(p, "rt");
    int data[256];
    memset(data, 0, sizeof data);
    amp_array_view *v = NULL;
    ASSERT_OK(amp_array_view_create(data, sizeof(int), amp_extent_1d(256), AMP_READ_WRITE, &v));
    amp_arg args[] = {amp_arg_view(v)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(256), k, args, 1));
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < 256; ++i) cr_assert_eq(data[i], 7, "data[%d] = %d", i, data[i]);
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
}

/* Files under dir (recursively): what a cache directory holds. */
static int count_files(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "find '%s' -type f | wc -l", dir);
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    int n = -1;
    cr_assert_eq(fscanf(f, "%d", &n), 1);
    pclose(f);
    return n;
}

/* NVRTC 12.9 and later keep what they compile in the CUDA driver's compute
 * cache (CUDA_CACHE_PATH, a directory the user may share with others) and
 * hand it back to a later compile; hipamp passes --no-cache, so a build
 * neither writes there nor could read what another user left. The
 * directory is set before this process first touches the driver. */
Test(program, nvrtc_leaves_the_drivers_compute_cache_alone)
{
    /* Inside the test's own cache directory where it has one (removed
     * with it), so that a skip leaves nothing behind. */
    const char *base = getenv("AMP_CACHE_DIR");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/cuda-cache-XXXXXX", base && base[0] ? base : "/tmp");
    cr_assert_not_null(mkdtemp(dir), "mkdtemp(%s): %s", dir, strerror(errno));
    cr_assert_eq(setenv("CUDA_CACHE_PATH", dir, 1), 0);
    amp_accelerator *acc = test_accel(TEST_ACCEL_GPU);
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    if (strncmp(info.device_path, "cuda:", 5))
        cr_skip_test("%s is not a CUDA device (NVRTC compiles only for those)", info.device_path);
    int before = count_files(dir);
    char *src = unique_source("AMP_KERNEL(nc, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = 11; }\n");
    amp_program *p = NULL;
    ASSERT_OK(amp_program_build(acc, src, NULL, &p));
    free(src);
    cr_assert_eq(count_files(dir), before, "NVRTC wrote %d files into CUDA_CACHE_PATH=%s", count_files(dir) - before,
                 dir);
    ASSERT_OK(amp_program_destroy(p));
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* -------------------------------------------------------- bad arguments */

ACCEL_TEST(program, null_arguments)
{
    amp_program *p = (amp_program *)(void *)&p;
    ASSERT_STATUS(amp_program_build(acc, NULL, NULL, &p), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(p, "out-param not NULL after failure");
    ASSERT_STATUS(amp_program_build(acc, test_kernels_seeds, NULL, NULL), AMP_ERROR_INVALID_ARGUMENT);

    p = test_build(acc, test_kernels_seeds);
    amp_kernel *k = (amp_kernel *)(void *)&k;
    ASSERT_STATUS(amp_program_get_kernel(p, NULL, &k), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(k);
    ASSERT_STATUS(amp_program_get_kernel(p, "vector_add", NULL), AMP_ERROR_INVALID_ARGUMENT);
    k = (amp_kernel *)(void *)&k;
    ASSERT_STATUS(amp_program_get_kernel(NULL, "vector_add", &k), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(k);
    ASSERT_OK(amp_program_destroy(p));
}

Test(program, destroy_null)
{
    ASSERT_OK(amp_program_destroy(NULL));
}

Test(program, build_null_accelerator_uses_default)
{
    cr_assert_eq(setenv("AMP_DEFAULT_ACCELERATOR", "cpu", 1), 0);
    amp_accelerator *cpu = test_accel(TEST_ACCEL_CPU);
    amp_program *p = NULL;
    ASSERT_OK(amp_program_build(NULL, test_kernels_seeds, NULL, &p));
    cr_assert_not_null(p);
    amp_kernel *k = test_kernel(p, "vector_add");
    /* NULL queue: the kernel's accelerator's default view — here the CPU. */
    check_vector_add(k);
    (void)cpu;
    ASSERT_OK(amp_program_destroy(p));
}

/* -------------------------------------------------------------- prelude */

Test(program, prelude_source)
{
    const char *s = amp_prelude_source();
    cr_assert_not_null(s);
    cr_assert_gt(strlen(s), 1000, "prelude is only %zu bytes", strlen(s));
    cr_assert(strstr(s, "AMP_KERNEL") != NULL, "prelude lacks AMP_KERNEL");
    cr_assert(strstr(s, "AMP_TILED_KERNEL") != NULL, "prelude lacks AMP_TILED_KERNEL");
    cr_assert(strstr(s, "tiled_index") != NULL, "prelude lacks tiled_index");
    cr_assert_eq(amp_prelude_source(), s, "prelude pointer should be static");
}

/* ----------------------------------------------------- in-memory cache */

ACCEL_TEST(program, second_build_gives_distinct_working_handle)
{
    char *src = unique_source(test_kernels_seeds);
    amp_cache_info before, after;
    amp_program *p1 = test_build(acc, src);
    ASSERT_OK(amp_cache_get_info(&before));
    amp_program *p2 = test_build(acc, src);
    ASSERT_OK(amp_cache_get_info(&after));
    cr_assert(after.memory_hits == before.memory_hits + 1 && after.memory_misses == before.memory_misses,
              "the second build was not a memory hit: hits %llu -> %llu, misses %llu -> %llu",
              (unsigned long long)before.memory_hits, (unsigned long long)after.memory_hits,
              (unsigned long long)before.memory_misses, (unsigned long long)after.memory_misses);
    cr_assert_neq(p1, p2, "two builds returned one handle (destroying one would free the other)");
    amp_kernel *k1 = test_kernel(p1, "vector_add");
    amp_kernel *k2 = test_kernel(p2, "vector_add");
    check_vector_add(k1);
    check_vector_add(k2);
    /* Destroying the first leaves the second working. */
    ASSERT_OK(amp_program_destroy(p1));
    check_vector_add(k2);
    amp_program *p3 = test_build(acc, src);
    check_vector_add(test_kernel(p3, "vector_add"));
    ASSERT_OK(amp_program_destroy(p2));
    ASSERT_OK(amp_program_destroy(p3));
    /* After clearing the in-memory cache, building again still works (a
     * memory miss now). */
    ASSERT_OK(amp_cache_clear_memory());
    ASSERT_OK(amp_cache_get_info(&before));
    amp_program *p4 = test_build(acc, src);
    ASSERT_OK(amp_cache_get_info(&after));
    cr_assert(after.memory_misses == before.memory_misses + 1 && after.memory_hits == before.memory_hits,
              "the build after clear_memory was not a memory miss: hits %llu -> %llu, misses %llu -> %llu",
              (unsigned long long)before.memory_hits, (unsigned long long)after.memory_hits,
              (unsigned long long)before.memory_misses, (unsigned long long)after.memory_misses);
    check_vector_add(test_kernel(p4, "vector_add"));
    ASSERT_OK(amp_program_destroy(p4));
    free(src);
}

typedef struct build_job {
    amp_accelerator *acc;
    const char *src;
    amp_program *p;
    amp_status st;
} build_job;

static void *build_main(void *arg)
{
    build_job *j = arg;
    j->st = amp_program_build(j->acc, j->src, NULL, &j->p);
    return NULL;
}

ACCEL_TEST(program, concurrent_builds_of_one_source)
{
    enum { T = 4 };
    char *src = unique_source(
        "AMP_KERNEL(conc_fill, amp::index<1> i, amp::array_view<int, 1> a) { a[i] = i[0] * 3; }\n");
    build_job jobs[T];
    pthread_t th[T];
    for (int i = 0; i < T; ++i) {
        jobs[i] = (build_job){.acc = acc, .src = src};
        cr_assert_eq(pthread_create(&th[i], NULL, build_main, &jobs[i]), 0);
    }
    for (int i = 0; i < T; ++i) pthread_join(th[i], NULL);
    for (int i = 0; i < T; ++i) {
        cr_assert_eq(jobs[i].st, AMP_OK, "thread %d: %s", i, amp_status_name(jobs[i].st));
        cr_assert_not_null(jobs[i].p);
        for (int j = 0; j < i; ++j) cr_assert_neq(jobs[i].p, jobs[j].p);
    }
    for (int i = 0; i < T; ++i) {
        amp_kernel *k = test_kernel(jobs[i].p, "conc_fill");
        int data[300];
        memset(data, 0xff, sizeof data);
        amp_array_view *v = NULL;
        ASSERT_OK(amp_array_view_create(data, sizeof(int), amp_extent_1d(300), AMP_WRITE_ONLY, &v));
        amp_arg args[] = {amp_arg_view(v)};
        ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(300), k, args, 1));
        ASSERT_OK(amp_array_view_destroy(v));
        for (int e = 0; e < 300; ++e) cr_assert_eq(data[e], e * 3, "program %d: data[%d] = %d", i, e, data[e]);
        ASSERT_OK(amp_program_destroy(jobs[i].p));
    }
    free(src);
}

/* ------------------------------------------- handles, records, limits */

/* A kernel of a destroyed program is reported, never run or silently
 * accepted; the same source built again gives a new, working handle. */
ACCEL_TEST(program, stale_kernel_handle_is_reported)
{
    extern const char test_kernels_seeds[];
    amp_program *p = test_build(acc, test_kernels_seeds);
    amp_kernel *k = test_kernel(p, "vector_add");
    check_vector_add(k);
    ASSERT_OK(amp_program_destroy(p));
    float x[4] = {1, 2, 3, 4};
    amp_array_view *v = test_view(x, 4, amp_extent_1d(4), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(v), amp_arg_view(v), amp_arg_view(v)};
    ASSERT_STATUS(amp_parallel_for_each(NULL, amp_extent_1d(4), k, a, 3), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "stale"), "%s", amp_last_error());
    amp_kernel_info ki;
    ASSERT_STATUS(amp_kernel_get_info(k, &ki), AMP_ERROR_INVALID_ARGUMENT);
    amp_future *f = (amp_future *)&f;
    ASSERT_STATUS(amp_parallel_for_each_async(NULL, amp_extent_1d(4), k, a, 3, &f), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(f);
    /* None of them ran (x + x into x would have doubled it). */
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < 4; ++i) cr_assert_eq(x[i], (float)(i + 1), "a stale kernel ran: x[%d] = %g", i, (double)x[i]);
    /* Rebuilt (from the memory cache): a new handle that works. */
    amp_program *p2 = test_build(acc, test_kernels_seeds);
    amp_kernel *k2 = test_kernel(p2, "vector_add");
    cr_assert_neq(k2, k, "the stale handle was handed out again");
    check_vector_add(k2);
    ASSERT_STATUS(amp_parallel_for_each(NULL, amp_extent_1d(4), k, a, 3), AMP_ERROR_INVALID_ARGUMENT);
    /* Not a handle at all. */
    ASSERT_STATUS(amp_parallel_for_each(NULL, amp_extent_1d(4), (amp_kernel *)(void *)x, a, 3),
                  AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "not a kernel handle"), "%s", amp_last_error());
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p2));
}

ACCEL_TEST(program, kernel_info_describes_the_kernel)
{
    extern const char test_kernels_seeds[];
    amp_accelerator_info ai;
    ASSERT_OK(amp_accelerator_get_info(acc, &ai));
    amp_program *p = test_build(acc, test_kernels_seeds);
    amp_kernel_info ki;
    ASSERT_OK(amp_kernel_get_info(test_kernel(p, "transpose_tiled_even"), &ki));
    cr_assert_str_eq(ki.name, "transpose_tiled_even");
    cr_assert_str_eq(ki.device_path, ai.device_path);
    cr_assert(ki.is_tiled && ki.rank == 2 && ki.tile[0] == 16 && ki.tile[1] == 16 && ki.tile[2] == 0 && ki.nparams == 2,
              "tiled %d rank %d tile %dx%dx%d nparams %d", ki.is_tiled, ki.rank, ki.tile[0], ki.tile[1], ki.tile[2],
              ki.nparams);
    /* Measured from the compiled code on every accelerator: the GPU's
     * static shared memory, the CPU's thread-local tile or loop-version
     * storage. */
    cr_assert_eq(ki.tile_static_bytes, 16 * 16 * 4, "tile_static bytes %zu", ki.tile_static_bytes);
    if (!ai.is_emulated) {
        cr_assert_str_eq(ki.execution, "gpu");
    } else {
        /* A transpose: its tiles in groups where a launch outgrows the
         * cache (lib/cpu/loops/tiles.c), on the loop path. */
        static const char grouped[] = "cpu loops, tiles in groups of 8 tile rows where the launch's views cover ";
        cr_assert(!strncmp(ki.execution, grouped, sizeof grouped - 1) || !strncmp(ki.execution, "cpu fibers: ", 12),
                  "execution \"%s\"", ki.execution);
    }
    ASSERT_OK(amp_kernel_get_info(test_kernel(p, "vector_add"), &ki));
    cr_assert(!ki.is_tiled && ki.rank == 1 && ki.tile[0] == 0 && ki.nparams == 3 && ki.tile_static_bytes == 0);
    ASSERT_STATUS(amp_kernel_get_info(NULL, &ki), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_kernel_get_info(test_kernel(p, "vector_add"), NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_program_destroy(p));
}

/* A hand-written record the prelude could not have produced (the issue's
 * forgery: an int64 of size 1 at the last byte of a 4096-byte pack) is
 * refused when the kernel is looked up. */
ACCEL_TEST(program, forged_signature_record_is_refused)
{
    static const char src[] =
        "#ifdef AMP_CPU\n"
        "extern \"C\" __attribute__((visibility(\"default\"))) void forged__amp_entry(amp__cpu_item *) {}\n"
        "extern \"C\" __attribute__((visibility(\"default\"), used)) amp::detail::signature forged__amp_sig =\n"
        "#else\n"
        "extern \"C\" __global__ void forged(amp::detail::launch_info, int) {}\n"
        "extern \"C\" __device__ __attribute__((used)) amp::detail::signature forged__amp_sig =\n"
        "#endif\n"
        "    {0x53504d41, 2, 0, 1, {0, 0, 0}, 1, 4096, 1, {{7, 8, 0, 0, 4095, 1, 1, 0}}};\n";
    amp_program *p = test_build(acc, src);
    amp_kernel *k = (amp_kernel *)&k;
    ASSERT_STATUS(amp_program_get_kernel(p, "forged", &k), AMP_ERROR_KERNEL_NOT_FOUND);
    cr_assert_null(k);
    cr_assert(strstr(amp_last_error(), "parameter 0") && strstr(amp_last_error(), "forged"), "%s", amp_last_error());
    ASSERT_OK(amp_program_destroy(p));
}

/* A kernel whose parameters take more than 4096 bytes fails to build, with
 * the kernel's name and its bytes on the first line (it used to build, then
 * be "not found: define it with AMP_KERNEL"); a record that says so anyway
 * (not the prelude's) is told the same when the kernel is looked up. */
ACCEL_TEST(program, parameters_over_4096_bytes_are_named)
{
    static const char src[] = "struct Big { int v[1250]; };\n"
                              "AMP_KERNEL(big_params, amp::index<1> i, amp::array_view<int, 1> a, Big b) { a[i] = b.v[0]; }\n";
    amp_program *p = (amp_program *)1;
    ASSERT_STATUS(amp_program_build(acc, src, NULL, &p), AMP_ERROR_COMPILE);
    cr_assert_null(p);
    const char *log = amp_last_error();
    cr_assert(strstr(log, "kernel 'big_params' takes 5032 bytes of parameters") == log && strstr(log, "4096"), "%s",
              log);

    static const char forged[] =
        "#ifdef AMP_CPU\n"
        "extern \"C\" __attribute__((visibility(\"default\"))) void wide__amp_entry(amp__cpu_item *) {}\n"
        "extern \"C\" __attribute__((visibility(\"default\"), used)) amp::detail::signature wide__amp_sig =\n"
        "#else\n"
        "extern \"C\" __global__ void wide(amp::detail::launch_info, int) {}\n"
        "extern \"C\" __device__ __attribute__((used)) amp::detail::signature wide__amp_sig =\n"
        "#endif\n"
        "    {0x53504d41, 2, 0, 1, {0, 0, 0}, 1, 5032, 8, {{14, 5032, 0, 0, 0, 5032, 8, 0}}};\n";
    p = test_build(acc, forged);
    amp_kernel *k = (amp_kernel *)&k;
    ASSERT_STATUS(amp_program_get_kernel(p, "wide", &k), AMP_ERROR_UNSUPPORTED);
    cr_assert_null(k);
    cr_assert(strstr(amp_last_error(), "'wide' takes 5032 bytes") && strstr(amp_last_error(), "4096") &&
                  !strstr(amp_last_error(), "define it with"),
              "%s", amp_last_error());
    ASSERT_OK(amp_program_destroy(p));
}

/* C++ AMP limits a tile to 1024 work-items; a kernel written for more is
 * refused on the CPU accelerator too (it would run there, and fail on every
 * GPU), with both numbers. */
Test(program, tile_over_the_thread_limit_is_unsupported)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    static const char src[] = "AMP_TILED_KERNEL(big_tile, amp::tiled_index<32, 64> t, amp::array_view<int, 2> v)\n"
                              "{ v[t.global] = 1; }\n";
    amp_program *p = test_build(acc, src);
    amp_kernel *k = (amp_kernel *)&k;
    ASSERT_STATUS(amp_program_get_kernel(p, "big_tile", &k), AMP_ERROR_UNSUPPORTED);
    cr_assert_null(k);
    cr_assert(strstr(amp_last_error(), "2048") && strstr(amp_last_error(), "1024"), "%s", amp_last_error());
    ASSERT_OK(amp_program_destroy(p));
    /* A dimension past what a kernel's record holds (65536): the same
     * status and numbers, not "no valid signature record". */
    static const char huge[] = "AMP_TILED_KERNEL(huge_tile, amp::tiled_index<100000> t, amp::array_view<int, 1> v)\n"
                               "{ v[t.global] = 1; }\n";
    p = test_build(acc, huge);
    k = (amp_kernel *)&k;
    ASSERT_STATUS(amp_program_get_kernel(p, "huge_tile", &k), AMP_ERROR_UNSUPPORTED);
    cr_assert_null(k);
    cr_assert(strstr(amp_last_error(), "100000") && strstr(amp_last_error(), "1024"), "%s", amp_last_error());
    ASSERT_OK(amp_program_destroy(p));
}

/* A path with a carriage return (which a #line marker once ended at, g++
 * reading the rest of the name as code) builds; a header there cannot be
 * named in the #include the library writes, and is refused saying so. A
 * source and a header that begin with a UTF-8 byte-order mark (which a
 * compiler skips only at a file's start, and they follow the prelude or a
 * marker in the unit it sees) build and run. */
static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

ACCEL_TEST(program, a_path_with_a_carriage_return_and_a_byte_order_mark_build)
{
    char dir[] = "/tmp/hipamp-odd-path-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char sub[300], path[400], header[400];
    snprintf(sub, sizeof sub, "%s/a\rb", dir);
    cr_assert_eq(mkdir(sub, 0700), 0);
    snprintf(path, sizeof path, "%s/k.hip", sub);
    write_text(path, "AMP_KERNEL(odd_k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 7 * i[0]; }\n");
    amp_program *p = NULL;
    amp_status st = amp_program_build_file(acc, path, NULL, &p);
    cr_assert_eq(st, AMP_OK, "%s: %s", amp_status_name(st), amp_last_error());
    amp_kernel *k = test_kernel(p, "odd_k");
    int out[16] = {0};
    amp_array_view *v = NULL;
    ASSERT_OK(amp_array_view_create(out, sizeof out[0], amp_extent_1d(16), AMP_WRITE_ONLY, &v));
    amp_arg a[1] = {amp_arg_view(v)};
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(16), k, a, 1));
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < 16; ++i) cr_assert_eq(out[i], 7 * i, "out[%d] = %d", i, out[i]);
    ASSERT_OK(amp_program_destroy(p));
    snprintf(header, sizeof header, "%s/seven.h", sub);
    write_text(header, "#define SEVEN 7\n");
    write_text(path, "#include \"seven.h\"\n"
                     "AMP_KERNEL(odd_k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = SEVEN * i[0]; }\n");
    /* A GPU's compiler is handed the header by name; the CPU accelerator's
     * #include names its path, which a carriage return would end. */
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    p = (amp_program *)&p;
    st = amp_program_build_file(acc, path, NULL, &p);
    if (info.is_emulated) {
        cr_assert_eq(st, AMP_ERROR_COMPILE, "%s: %s", amp_status_name(st), amp_last_error());
        cr_assert_null(p);
        cr_assert(strstr(amp_last_error(), "cannot be named in an #include"), "%s", amp_last_error());
    } else {
        cr_assert_eq(st, AMP_OK, "%s: %s", amp_status_name(st), amp_last_error());
        ASSERT_OK(amp_program_destroy(p));
    }
    unlink(header);
    unlink(path);
    rmdir(sub);
    /* The byte-order marks, in a plain directory. */
    snprintf(path, sizeof path, "%s/bom.hip", dir);
    snprintf(header, sizeof header, "%s/seven.h", dir);
    write_text(header, "\xEF\xBB\xBF#define SEVEN 7\n");
    write_text(path, "\xEF\xBB\xBF#include \"seven.h\"\n"
                     "AMP_KERNEL(odd_k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = SEVEN * i[0]; }\n");
    st = amp_program_build_file(acc, path, NULL, &p);
    cr_assert_eq(st, AMP_OK, "%s: %s", amp_status_name(st), amp_last_error());
    k = test_kernel(p, "odd_k");
    memset(out, 0, sizeof out);
    ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(16), k, a, 1));
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < 16; ++i) cr_assert_eq(out[i], 7 * i, "out[%d] = %d", i, out[i]);
    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
    ASSERT_OK(amp_program_build(acc, "\xEF\xBB\xBF" "AMP_KERNEL(odd_s, amp::index<1> i, amp::array_view<int, 1> v) "
                                     "{ v[i] = 1; }\n", NULL, &p));
    ASSERT_OK(amp_program_destroy(p));
    unlink(header);
    unlink(path);
    rmdir(dir);
}

/* amp_program_build_file: errors name the file as given and its line. */
ACCEL_TEST(program, build_file_errors_name_the_file)
{
    char dir[] = "/tmp/hipamp-build-file-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/broken kernel.hip", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("// line 1\nAMP_KERNEL(broken, amp::index<1> i, amp::array_view<int, 1> v)\n{ v[i] = undeclared_name; }\n", f);
    fclose(f);
    amp_program *p = NULL;
    ASSERT_STATUS(amp_program_build_file(acc, path, NULL, &p), AMP_ERROR_COMPILE);
    char where[300];
    snprintf(where, sizeof where, "%s:3", path);
    cr_assert(strstr(amp_last_error(), where), "the log should name %s: %s", where, amp_last_error());
    unlink(path);
    ASSERT_STATUS(amp_program_build_file(acc, path, NULL, &p), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), path), "%s", amp_last_error());
    ASSERT_STATUS(amp_program_build_file(acc, dir, NULL, &p), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_program_build_file(acc, NULL, NULL, &p), AMP_ERROR_INVALID_ARGUMENT);
    rmdir(dir);
}
