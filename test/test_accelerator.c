/* test_accelerator.c — accelerator enumeration, info fields, default selection (AMP_DEFAULT_ACCELERATOR), find, accelerator views and their stats. */
#include "support.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ACC 64

static size_t list_all(amp_accelerator **list)
{
    size_t n = 0;
    ASSERT_OK(amp_accelerator_list(list, MAX_ACC, &n));
    cr_assert_gt(n, 0, "no accelerator at all (the CPU accelerator is always listed)");
    cr_assert_leq(n, MAX_ACC);
    return n;
}

static amp_accelerator_info info_of(const amp_accelerator *a)
{
    amp_accelerator_info info;
    memset(&info, 0xab, sizeof info);
    ASSERT_OK(amp_accelerator_get_info(a, &info));
    return info;
}

static bool terminated(const char *buf, size_t size) { return memchr(buf, '\0', size) != NULL; }

static bool starts_with(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

/* ---------------------------------------------------------------- list */

Test(accelerator, list_count_query)
{
    size_t n = 12345;
    ASSERT_OK(amp_accelerator_list(NULL, 0, &n));
    cr_assert_geq(n, 1, "count %zu: the CPU accelerator is always listed", n);
    cr_assert_leq(n, MAX_ACC);

    amp_accelerator *list[MAX_ACC];
    size_t n2 = 0;
    ASSERT_OK(amp_accelerator_list(list, MAX_ACC, &n2));
    cr_assert_eq(n2, n, "count changed between calls: %zu then %zu", n, n2);
}

Test(accelerator, list_partial_fill)
{
    amp_accelerator *all[MAX_ACC];
    size_t n = list_all(all);
    amp_accelerator *part[2] = {NULL, (amp_accelerator *)(void *)&n};
    size_t count = 0;
    ASSERT_OK(amp_accelerator_list(part, 1, &count));
    cr_assert_eq(count, n, "count must be the total (%zu), not the cap: %zu", n, count);
    cr_assert_eq(part[0], all[0]);
    cr_assert_eq(part[1], (amp_accelerator *)(void *)&n, "wrote past cap");
}

Test(accelerator, list_null_arguments)
{
    amp_accelerator *list[4];
    ASSERT_STATUS(amp_accelerator_list(list, 4, NULL), AMP_ERROR_INVALID_ARGUMENT);
    size_t n = 0;
    ASSERT_STATUS(amp_accelerator_list(NULL, 4, &n), AMP_ERROR_INVALID_ARGUMENT);
}

Test(accelerator, list_is_stable)
{
    amp_accelerator *a[MAX_ACC], *b[MAX_ACC];
    size_t n = list_all(a), m = list_all(b);
    cr_assert_eq(n, m);
    for (size_t i = 0; i < n; ++i) cr_assert_eq(a[i], b[i], "entry %zu changed between calls", i);
}

Test(accelerator, cpu_is_last)
{
    amp_accelerator *list[MAX_ACC];
    size_t n = list_all(list);
    amp_accelerator_info last = info_of(list[n - 1]);
    cr_assert_str_eq(last.device_path, "cpu");
    cr_assert(last.is_emulated, "the CPU accelerator must be is_emulated");
    for (size_t i = 0; i + 1 < n; ++i) {
        amp_accelerator_info g = info_of(list[i]);
        cr_assert_not(g.is_emulated, "%s before the CPU accelerator is emulated", g.device_path);
        cr_assert(starts_with(g.device_path, "hip:") || starts_with(g.device_path, "cuda:"),
                  "GPU device path \"%s\" is neither hip:N nor cuda:N", g.device_path);
    }
}

Test(accelerator, every_info_field_sane)
{
    amp_accelerator *list[MAX_ACC];
    size_t n = list_all(list);
    for (size_t i = 0; i < n; ++i) {
        amp_accelerator_info in = info_of(list[i]);
        cr_assert(terminated(in.description, sizeof in.description), "description not NUL-terminated");
        cr_assert(terminated(in.device_path, sizeof in.device_path), "device_path not NUL-terminated");
        cr_assert(terminated(in.arch, sizeof in.arch), "arch not NUL-terminated");
        cr_assert(terminated(in.unavailable_reason, sizeof in.unavailable_reason),
                  "unavailable_reason not NUL-terminated");
        const char *p = in.device_path;
        cr_assert_neq(p[0], '\0', "accelerator %zu has an empty device path", i);
        cr_assert_neq(in.description[0], '\0', "%s: empty description", p);
        cr_assert_neq(in.arch[0], '\0', "%s: empty arch", p);
        cr_assert_gt(in.max_tile_threads, 0, "%s: max_tile_threads %d", p, in.max_tile_threads);
        cr_assert_leq(in.max_tile_threads, AMP_MAX_TILE_THREADS, "%s: max_tile_threads %d", p,
                      in.max_tile_threads);
        cr_assert_gt(in.max_tile_static_bytes, 0, "%s: max_tile_static_bytes 0", p);
        cr_assert_gt(in.compute_units, 0, "%s: compute_units %d", p, in.compute_units);
        if (in.is_available)
            cr_assert_str_eq(in.unavailable_reason, "", "%s is available yet has a reason", p);
        else
            cr_assert_neq(in.unavailable_reason[0], '\0', "%s is unavailable without a reason", p);
        if (in.is_emulated) {
            cr_assert_str_eq(p, "cpu");
            cr_assert_eq(in.dedicated_memory, 0, "the CPU has no dedicated memory");
            cr_assert(in.is_unified_memory, "the CPU accelerator is always unified memory");
            cr_assert(in.supports_double_precision, "the CPU accelerator supports double");
            cr_assert_geq(in.max_tile_threads, 256, "cpu max_tile_threads %d", in.max_tile_threads);
            cr_assert_geq(in.max_tile_static_bytes, 32768, "cpu max_tile_static_bytes %zu",
                          in.max_tile_static_bytes);
        }
        /* device paths are unique */
        for (size_t j = 0; j < i; ++j) {
            amp_accelerator_info o = info_of(list[j]);
            cr_assert_str_neq(o.device_path, p, "two accelerators named %s", p);
        }
    }
}

Test(accelerator, get_info_null_arguments)
{
    amp_accelerator *list[MAX_ACC];
    list_all(list);
    amp_accelerator_info info;
    ASSERT_STATUS(amp_accelerator_get_info(NULL, &info), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_accelerator_get_info(list[0], NULL), AMP_ERROR_INVALID_ARGUMENT);
}

/* ---------------------------------------------------------------- find */

Test(accelerator, find_every_listed_path)
{
    amp_accelerator *list[MAX_ACC];
    size_t n = list_all(list);
    for (size_t i = 0; i < n; ++i) {
        amp_accelerator_info in = info_of(list[i]);
        amp_accelerator *a = NULL;
        ASSERT_OK(amp_accelerator_find(in.device_path, &a));
        cr_assert_eq(a, list[i], "find(\"%s\") returned another accelerator", in.device_path);
    }
    amp_accelerator *cpu = NULL;
    ASSERT_OK(amp_accelerator_find("cpu", &cpu));
    cr_assert_eq(cpu, list[n - 1]);
}

Test(accelerator, find_unknown)
{
    const char *bad[] = {"bogus", "hip:7", "cuda:99", "hip:-1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        amp_accelerator *a = (amp_accelerator *)(void *)&a;
        ASSERT_STATUS(amp_accelerator_find(bad[i], &a), AMP_ERROR_NO_ACCELERATOR);
        cr_assert_null(a, "out-param not NULL after failure");
        cr_assert(strstr(amp_last_error(), bad[i]) != NULL, "message should name \"%s\": \"%s\"", bad[i],
                  amp_last_error());
        /* and the paths there are (the CPU accelerator is always one) */
        cr_assert(strstr(amp_last_error(), "\"cpu\"") && strstr(amp_last_error(), "hipamp-info"),
                  "message should list the paths there are: \"%s\"", amp_last_error());
    }
}

Test(accelerator, find_null_arguments)
{
    amp_accelerator *a = (amp_accelerator *)(void *)&a;
    ASSERT_STATUS(amp_accelerator_find(NULL, &a), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(a);
    ASSERT_STATUS(amp_accelerator_find("cpu", NULL), AMP_ERROR_INVALID_ARGUMENT);
}

/* ------------------------------------------------------------- default */

/* Criterion runs every test in a fresh process, so setting the environment
 * here happens before the library's first look at it. */

Test(accelerator, default_without_env_prefers_gpu)
{
    unsetenv("AMP_DEFAULT_ACCELERATOR");
    amp_accelerator *list[MAX_ACC];
    size_t n = list_all(list);
    amp_accelerator *want = list[n - 1];
    for (size_t i = 0; i + 1 < n; ++i) {
        if (info_of(list[i]).is_available) {
            want = list[i];
            break;
        }
    }
    amp_accelerator *d = NULL;
    ASSERT_OK(amp_accelerator_default(&d));
    amp_accelerator_info di = info_of(d), wi = info_of(want);
    cr_assert_eq(d, want, "default is %s, want %s (first available GPU, else the CPU)", di.device_path,
                 wi.device_path);
    amp_accelerator *again = NULL;
    ASSERT_OK(amp_accelerator_default(&again));
    cr_assert_eq(again, d, "default changed between calls");
}

Test(accelerator, default_env_cpu)
{
    cr_assert_eq(setenv("AMP_DEFAULT_ACCELERATOR", "cpu", 1), 0);
    amp_accelerator *d = (amp_accelerator *)(void *)&d;
    amp_status st = amp_accelerator_default(&d);
    amp_accelerator *cpu = NULL;
    ASSERT_OK(amp_accelerator_find("cpu", &cpu));
    amp_accelerator_info ci = info_of(cpu);
    if (!ci.is_available) {
        cr_assert_eq(st, AMP_ERROR_NO_ACCELERATOR, "unavailable CPU chosen: %s", amp_status_name(st));
        cr_assert_null(d);
        return;
    }
    cr_assert_eq(st, AMP_OK, "%s: %s", amp_status_name(st), amp_last_error());
    cr_assert_eq(d, cpu, "AMP_DEFAULT_ACCELERATOR=cpu not honoured");
    cr_assert(info_of(d).is_emulated);
}

static void expect_default_refused(const char *value)
{
    cr_assert_eq(setenv("AMP_DEFAULT_ACCELERATOR", value, 1), 0);
    amp_accelerator *d = (amp_accelerator *)(void *)&d;
    ASSERT_STATUS(amp_accelerator_default(&d), AMP_ERROR_NO_ACCELERATOR);
    cr_assert_null(d, "out-param not NULL after failure");
    cr_assert(strstr(amp_last_error(), value) != NULL, "message should name \"%s\": \"%s\"", value,
              amp_last_error());
    /* Still refused the second time (not silently falling back). */
    d = (amp_accelerator *)(void *)&d;
    ASSERT_STATUS(amp_accelerator_default(&d), AMP_ERROR_NO_ACCELERATOR);
    cr_assert_null(d);
}

Test(accelerator, default_env_hip7) { expect_default_refused("hip:7"); }
Test(accelerator, default_env_bogus) { expect_default_refused("bogus"); }
Test(accelerator, default_env_cuda42) { expect_default_refused("cuda:42"); }

Test(accelerator, default_env_names_gpu)
{
    /* Pick the first GPU by its path through the environment (skip with no GPU). */
    unsetenv("AMP_DEFAULT_ACCELERATOR");
    amp_accelerator *gpu = test_accel(TEST_ACCEL_GPU);
    amp_accelerator_info gi = info_of(gpu);
    cr_assert_eq(setenv("AMP_DEFAULT_ACCELERATOR", gi.device_path, 1), 0);
    amp_accelerator *d = NULL;
    amp_status st = amp_accelerator_default(&d);
    /* The library may have read the environment during test_accel's listing;
     * either way the first available GPU is what it must pick. */
    cr_assert_eq(st, AMP_OK, "%s: %s", amp_status_name(st), amp_last_error());
    cr_assert_eq(d, gpu);
}

Test(accelerator, default_null_out)
{
    ASSERT_STATUS(amp_accelerator_default(NULL), AMP_ERROR_INVALID_ARGUMENT);
}

typedef struct first_use { amp_accelerator *got; amp_status st; pthread_barrier_t *bar; } first_use;

static void *first_use_main(void *p)
{
    first_use *f = p;
    pthread_barrier_wait(f->bar);
    f->st = amp_accelerator_default(&f->got);
    return NULL;
}

Test(accelerator, default_first_use_from_many_threads)
{
    enum { N = 8 };
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, N);
    first_use f[N];
    pthread_t th[N];
    for (int i = 0; i < N; ++i) {
        f[i] = (first_use){.bar = &bar};
        cr_assert_eq(pthread_create(&th[i], NULL, first_use_main, &f[i]), 0);
    }
    for (int i = 0; i < N; ++i) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&bar);
    for (int i = 0; i < N; ++i) {
        cr_assert_eq(f[i].st, AMP_OK, "thread %d: %s", i, amp_status_name(f[i].st));
        cr_assert_not_null(f[i].got);
        cr_assert_eq(f[i].got, f[0].got, "threads got different default accelerators");
    }
}

/* --------------------------------------------------------------- views */

ACCEL_TEST(accelerator, view_lifecycle)
{
    amp_accelerator_view *q = NULL, *q2 = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    cr_assert_not_null(q);
    ASSERT_OK(amp_accelerator_view_create(acc, &q2));
    cr_assert_not_null(q2);
    cr_assert_neq(q, q2, "two views share a handle");
    amp_accelerator *back = NULL;
    ASSERT_OK(amp_accelerator_view_get_accelerator(q, &back));
    cr_assert_eq(back, acc);
    ASSERT_OK(amp_accelerator_view_wait(q));
    ASSERT_OK(amp_accelerator_view_wait(q));
    amp_stats s;
    memset(&s, 0xff, sizeof s);
    ASSERT_OK(amp_accelerator_view_get_stats(q, &s));
    cr_assert_eq(s.bytes_to_device, 0);
    cr_assert_eq(s.copies_to_device, 0);
    cr_assert_eq(s.bytes_to_host, 0);
    cr_assert_eq(s.copies_to_host, 0);
    cr_assert_eq(s.launches, 0);
    ASSERT_OK(amp_accelerator_view_destroy(q));
    ASSERT_OK(amp_accelerator_view_destroy(q2));
}

ACCEL_TEST(accelerator, default_view)
{
    amp_accelerator_view *q = NULL, *again = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    cr_assert_not_null(q);
    ASSERT_OK(amp_accelerator_default_view(acc, &again));
    cr_assert_eq(q, again, "the default view must be one view");
    amp_accelerator *back = NULL;
    ASSERT_OK(amp_accelerator_view_get_accelerator(q, &back));
    cr_assert_eq(back, acc);
    ASSERT_OK(amp_accelerator_view_wait(q));
    amp_accelerator_view *mine = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &mine));
    cr_assert_neq(mine, q, "a created view must not be the default view");
    ASSERT_OK(amp_accelerator_view_destroy(mine));
}

ACCEL_TEST(accelerator, info_of_kind)
{
    amp_accelerator_info in = info_of(acc);
    cr_assert(in.is_available);
    if (in.is_emulated) {
        cr_assert_str_eq(in.device_path, "cpu");
        return;
    }
    const char *p = in.device_path;
    cr_assert(starts_with(p, "hip:") || starts_with(p, "cuda:"), "GPU path \"%s\"", p);
    /* HIP's NVIDIA platform (HIP_PLATFORM=nvidia) names the compute
     * capability, as CUDA does. */
    const char *platform = getenv("HIP_PLATFORM");
    bool hip_on_nvidia = platform && (!strcmp(platform, "nvidia") || !strcmp(platform, "nvcc"));
    if (starts_with(p, "hip:"))
        cr_assert(starts_with(in.arch, hip_on_nvidia ? "sm_" : "gfx"), "%s: %s arch \"%s\" is not %s", p,
                  hip_on_nvidia ? "HIP-on-NVIDIA" : "AMD", in.arch, hip_on_nvidia ? "sm_*" : "gfx*");
    else
        cr_assert(starts_with(in.arch, "sm_"), "%s: NVIDIA arch \"%s\" is not sm_*", p, in.arch);
    cr_assert_gt(in.dedicated_memory, (uint64_t)64 << 20, "%s: dedicated_memory %llu", p,
                 (unsigned long long)in.dedicated_memory);
    cr_assert_geq(in.max_tile_threads, 256, "%s: max_tile_threads %d", p, in.max_tile_threads);
    cr_assert_geq(in.max_tile_static_bytes, 16384, "%s: max_tile_static_bytes %zu", p, in.max_tile_static_bytes);
    amp_accelerator *found = NULL;
    ASSERT_OK(amp_accelerator_find(p, &found));
    cr_assert_eq(found, acc);
}

/* Stats count real work and reset to zero. */
static const char stats_src[] =
    "AMP_KERNEL(stats_inc, amp::index<1> i, amp::array_view<int, 1> d)\n"
    "{ d[i] = d[i] + 1; }\n";

ACCEL_TEST(accelerator, stats_count_and_reset)
{
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    amp_program *p = test_build(acc, stats_src);
    amp_kernel *k = test_kernel(p, "stats_inc");
    enum { N = 1000 };
    int data[N];
    for (int i = 0; i < N; ++i) data[i] = i;
    amp_array_view *v = NULL;
    ASSERT_OK(amp_array_view_create(data, sizeof(int), amp_extent_1d(N), AMP_READ_WRITE, &v));
    amp_arg args[] = {amp_arg_view(v)};
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), k, args, 1));
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), k, args, 1));
    ASSERT_OK(amp_array_view_synchronize(v));
    for (int i = 0; i < N; ++i) cr_assert_eq(data[i], i + 2, "data[%d] = %d", i, data[i]);
    ASSERT_OK(amp_accelerator_view_wait(q));

    amp_stats s;
    ASSERT_OK(amp_accelerator_view_get_stats(q, &s));
    cr_assert_eq(s.launches, 2, "launches %llu, want 2", (unsigned long long)s.launches);
    if (!info_of(acc).is_unified_memory) {
        cr_assert_geq(s.bytes_to_device, N * sizeof(int));
        cr_assert_geq(s.copies_to_device, 1);
        cr_assert_geq(s.bytes_to_host, N * sizeof(int));
        cr_assert_geq(s.copies_to_host, 1);
    }
    ASSERT_OK(amp_accelerator_view_reset_stats(q));
    memset(&s, 0xff, sizeof s);
    ASSERT_OK(amp_accelerator_view_get_stats(q, &s));
    cr_assert_eq(s.launches, 0);
    cr_assert_eq(s.bytes_to_device, 0);
    cr_assert_eq(s.copies_to_device, 0);
    cr_assert_eq(s.bytes_to_host, 0);
    cr_assert_eq(s.copies_to_host, 0);

    ASSERT_OK(amp_array_view_destroy(v));
    ASSERT_OK(amp_program_destroy(p));
    ASSERT_OK(amp_accelerator_view_destroy(q));
}

ACCEL_TEST(accelerator, view_null_arguments)
{
    amp_accelerator_view *q = (amp_accelerator_view *)(void *)&q;
    ASSERT_STATUS(amp_accelerator_view_create(NULL, &q), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(q, "out-param not NULL after failure");
    ASSERT_STATUS(amp_accelerator_view_create(acc, NULL), AMP_ERROR_INVALID_ARGUMENT);
    q = (amp_accelerator_view *)(void *)&q;
    ASSERT_STATUS(amp_accelerator_default_view(NULL, &q), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(q);
    ASSERT_STATUS(amp_accelerator_default_view(acc, NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_accelerator_view_wait(NULL), AMP_ERROR_INVALID_ARGUMENT);
    amp_accelerator *a = (amp_accelerator *)(void *)&a;
    ASSERT_STATUS(amp_accelerator_view_get_accelerator(NULL, &a), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(a);
    amp_stats s;
    ASSERT_STATUS(amp_accelerator_view_get_stats(NULL, &s), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_accelerator_view_reset_stats(NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    ASSERT_STATUS(amp_accelerator_view_get_stats(q, NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_accelerator_view_get_accelerator(q, NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_accelerator_view_destroy(q));
    ASSERT_OK(amp_accelerator_view_destroy(NULL));
}

/* ------------------------------------------------ GPU driver reports */

static size_t driver_reports(amp_gpu_driver_report *r, size_t cap)
{
    size_t n = 0;
    memset(r, 0xab, cap * sizeof *r);
    ASSERT_OK(amp_gpu_driver_reports(r, cap, &n));
    cr_assert_eq(n, 2, "%zu driver reports, want 2 (hip, cuda)", n);
    return n;
}

/* Each driver says what it found: devices that match the accelerator list,
 * or a reason that names what was tried. */
Test(accelerator, driver_reports_explain_what_each_driver_found)
{
    unsetenv("AMP_GPU_DRIVERS");
    amp_gpu_driver_report r[4];
    size_t n = driver_reports(r, 4);
    cr_assert_str_eq(r[0].name, "hip");
    cr_assert_str_eq(r[1].name, "cuda");
    amp_accelerator *list[MAX_ACC];
    size_t nacc = list_all(list);
    for (size_t i = 0; i < n; ++i) {
        cr_assert(terminated(r[i].detail, sizeof r[i].detail), "%s: detail not terminated", r[i].name);
        cr_assert_neq(r[i].detail[0], '\0', "%s: empty detail", r[i].name);
        int listed = 0;
        char prefix[20];
        snprintf(prefix, sizeof prefix, "%s:", r[i].name);
        for (size_t a = 0; a < nacc; ++a) listed += starts_with(info_of(list[a]).device_path, prefix);
        cr_assert_eq(r[i].device_count, listed, "%s reports %d devices, %d listed", r[i].name, r[i].device_count,
                     listed);
        if (!r[i].loaded) {
            cr_assert_eq(r[i].device_count, 0);
            /* Which library it looked for, and why it did not load. */
            const char *lib = i == 0 ? "libamdhip64" : "libcuda";
            cr_assert(strstr(r[i].detail, lib), "%s not loaded, but the reason names no %s: %s", r[i].name, lib,
                      r[i].detail);
        } else if (r[i].device_count == 0) {
            cr_assert(strstr(r[i].detail, "failed") || strstr(r[i].detail, "zero devices"),
                      "%s loaded with no device, but says neither the error nor zero devices: %s", r[i].name,
                      r[i].detail);
        }
    }
}

Test(accelerator, driver_reports_partial_and_null)
{
    amp_gpu_driver_report one;
    size_t n = 0;
    ASSERT_OK(amp_gpu_driver_reports(&one, 1, &n));
    cr_assert_eq(n, 2, "count is every driver, whatever cap");
    cr_assert_str_eq(one.name, "hip");
    ASSERT_OK(amp_gpu_driver_reports(NULL, 0, &n));
    cr_assert_eq(n, 2);
    ASSERT_STATUS(amp_gpu_driver_reports(NULL, 1, &n), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert(strstr(amp_last_error(), "cap is 1"), "%s", amp_last_error());
    ASSERT_STATUS(amp_gpu_driver_reports(&one, 1, NULL), AMP_ERROR_INVALID_ARGUMENT);
}

/* AMP_GPU_DRIVERS leaves a driver out: it is not probed, lists nothing and
 * says why. */
Test(accelerator, gpu_drivers_env_leaves_a_driver_out)
{
    cr_assert_eq(setenv("AMP_GPU_DRIVERS", "cuda", 1), 0);
    amp_gpu_driver_report r[2];
    driver_reports(r, 2);
    cr_assert_not(r[0].loaded);
    cr_assert_eq(r[0].device_count, 0);
    cr_assert(strstr(r[0].detail, "AMP_GPU_DRIVERS=\"cuda\" leaves it out"), "%s", r[0].detail);
    amp_accelerator *list[MAX_ACC];
    size_t n = list_all(list);
    for (size_t i = 0; i < n; ++i)
        cr_assert_not(starts_with(info_of(list[i]).device_path, "hip:"), "%s listed", info_of(list[i]).device_path);
}

/* A value that names something else probes no GPU driver, and the reports
 * and the no-GPU message name the value. */
Test(accelerator, gpu_drivers_env_bad_value_is_named)
{
    cr_assert_eq(setenv("AMP_GPU_DRIVERS", "hip,cudda", 1), 0);
    cr_assert_eq(setenv("AMP_DEFAULT_ACCELERATOR", "hip:0", 1), 0);
    amp_gpu_driver_report r[2];
    driver_reports(r, 2);
    for (int i = 0; i < 2; ++i) {
        cr_assert_not(r[i].loaded);
        cr_assert(strstr(r[i].detail, "AMP_GPU_DRIVERS=\"hip,cudda\""), "%s: %s", r[i].name, r[i].detail);
    }
    amp_accelerator *list[MAX_ACC];
    size_t n = list_all(list);
    cr_assert_eq(n, 1, "only the CPU accelerator is listed");
    amp_accelerator *d = NULL;
    ASSERT_STATUS(amp_accelerator_default(&d), AMP_ERROR_NO_ACCELERATOR);
    cr_assert(strstr(amp_last_error(), "\"hip:0\"") && strstr(amp_last_error(), "AMP_GPU_DRIVERS=\"hip,cudda\""),
              "the message names neither the accelerator asked for nor why the driver found none: %s",
              amp_last_error());
}

/* HIP_PLATFORM=nvidia says the libamdhip64 found is HIP's NVIDIA platform;
 * AMD's runtime found instead is refused by name, not run as if it were. */
Test(accelerator, hip_platform_nvidia_refuses_amds_runtime)
{
    cr_assert_eq(setenv("HIP_PLATFORM", "nvidia", 1), 0);
    unsetenv("AMP_GPU_DRIVERS");
    void *amd = NULL;
    static const char *const names[] = {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"};
    for (size_t i = 0; i < 4 && !amd; ++i) amd = dlopen(names[i], RTLD_LAZY | RTLD_LOCAL);
    bool amds = amd && dlsym(amd, "hipExtMallocWithFlags");
    amp_gpu_driver_report r[2];
    driver_reports(r, 2);
    if (amds) {
        cr_assert_not(r[0].loaded, "AMD's runtime loaded under HIP_PLATFORM=nvidia: %s", r[0].detail);
        cr_assert(strstr(r[0].detail, "is AMD's HIP runtime"), "%s", r[0].detail);
    } else if (r[0].loaded) {
        cr_assert(strstr(r[0].detail, "(HIP on NVIDIA)"), "%s", r[0].detail);
    } else {
        cr_assert(strstr(r[0].detail, "libamdhip64"), "%s", r[0].detail);
    }
    if (amd) dlclose(amd);
}

/* A pointer that is no accelerator of the library's (another handle, a
 * copy of one, freed memory) is refused naming the call and the pointer,
 * not read. Before, amp_accelerator_get_info returned AMP_OK with garbage
 * and amp_accelerator_view_create crashed. */
Test(accelerator, a_pointer_that_is_no_accelerator_is_refused)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_CPU);
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    static amp_accelerator_info not_one; /* something else of about the size */
    amp_accelerator *bad[] = {(amp_accelerator *)(void *)q, (amp_accelerator *)(void *)&not_one,
                              (amp_accelerator *)((char *)acc + 8)};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        amp_accelerator_info info;
        ASSERT_STATUS(amp_accelerator_get_info(bad[i], &info), AMP_ERROR_INVALID_ARGUMENT);
        cr_assert(strstr(amp_last_error(), "amp_accelerator_get_info") &&
                      strstr(amp_last_error(), "is not an accelerator of this library"),
                  "%s", amp_last_error());
        amp_accelerator_view *v = (amp_accelerator_view *)&v;
        ASSERT_STATUS(amp_accelerator_view_create(bad[i], &v), AMP_ERROR_INVALID_ARGUMENT);
        cr_assert_null(v);
        ASSERT_STATUS(amp_accelerator_default_view(bad[i], &v), AMP_ERROR_INVALID_ARGUMENT);
        ASSERT_STATUS(amp_accelerator_set_default(bad[i]), AMP_ERROR_INVALID_ARGUMENT);
        amp_program *p = NULL;
        ASSERT_STATUS(amp_program_build(bad[i], "AMP_KERNEL(k, amp::index<1> i, amp::array_view<int, 1> v) { v[i] = 1; }",
                                        NULL, &p),
                      AMP_ERROR_INVALID_ARGUMENT);
        cr_assert_null(p);
        amp_peer_info pi;
        ASSERT_STATUS(amp_accelerator_get_peer_info(acc, bad[i], &pi), AMP_ERROR_INVALID_ARGUMENT);
        /* A user reduction's build read the accelerator's geometry first
         * (a crash for a pointer to nothing). */
        const amp_reduction_desc d = {.inputs = "float x", .type = AMP_TYPE_FLOAT32, .map = "x", .reduce = "a + b",
                                      .identity = "0"};
        amp_reduction *r = (amp_reduction *)&r;
        ASSERT_STATUS(amp_reduction_create(bad[i], &d, &r), AMP_ERROR_INVALID_ARGUMENT);
        cr_assert(strstr(amp_last_error(), "amp_reduction_create") &&
                      strstr(amp_last_error(), "is not an accelerator of this library"),
                  "%s", amp_last_error());
        cr_assert_null(r);
        ASSERT_STATUS(amp_algorithms_prepare(bad[i]), AMP_ERROR_INVALID_ARGUMENT);
    }
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
}
