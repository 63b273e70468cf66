/* test_interop.c — living beside vendor code: native pointers of arrays (written and read by the vendor runtime), arrays over memory the caller allocated, views handed to a vendor library and taken back, views on the caller's own stream ordered after the caller's work, the CPU accelerator's answers (host pointers, no native queue), accelerator choice by local rank, and device time from futures. */
#include "support.h"
#include "vendor.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char test_kernels_interop[];

static amp_accelerator_info info_of(amp_accelerator *acc)
{
    amp_accelerator_info in;
    ASSERT_OK(amp_accelerator_get_info(acc, &in));
    return in;
}

/* Vendor calls on a GPU accelerator; the CPU accelerator's memory is the
 * host's, so plain memcpy there. */
static void open_vendor(amp_accelerator_info in)
{
    if (in.is_emulated) return;
    char why[256];
    if (!vendor_open(in.device_path, why, sizeof why)) cr_skip_test("vendor runtime for %s: %s", in.device_path, why);
}
/* The caller's work must be finished (or queued on the view's queue) before
 * hipamp uses the data: a copy from pageable memory may return before its
 * DMA lands (CUDA documents this), so the copy's stream is waited for. */
static void put(amp_accelerator_info in, void *dst, const void *src, size_t n)
{
    if (in.is_emulated) memcpy(dst, src, n);
    else cr_assert(vendor_htod(dst, src, n) && vendor_stream_sync(NULL), "vendor host-to-device copy failed");
}
static void get(amp_accelerator_info in, void *dst, const void *src, size_t n)
{
    if (in.is_emulated) memcpy(dst, src, n);
    else cr_assert(vendor_dtoh(dst, src, n), "vendor device-to-host copy failed");
}

static void check_u32(const uint32_t *got, const uint32_t *want, size_t n, const char *what)
{
    for (size_t i = 0; i < n; ++i)
        cr_assert_eq(got[i], want[i], "%s: element %zu is %u, want %u", what, i, got[i], want[i]);
}

/* Write through the array's native pointer with the vendor runtime, read it
 * in a hipamp kernel; then the reverse. */
ACCEL_TEST(interop, array_native_pointer_both_ways)
{
    enum { N = 5000 };
    amp_accelerator_info in = info_of(acc);
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    open_vendor(in);
    uint32_t *host = test_xmalloc(N * 4), *got = test_xmalloc(N * 4), *want = test_xmalloc(N * 4);
    for (int i = 0; i < N; ++i) host[i] = 0x01000000u + (uint32_t)i * 7u;
    amp_array *src = NULL, *dst = NULL;
    ASSERT_OK(amp_array_create(q, 4, amp_extent_1d(N), NULL, &src));
    ASSERT_OK(amp_array_create(q, 4, amp_extent_1d(N), NULL, &dst));
    void *psrc = NULL, *pdst = NULL;
    ASSERT_OK(amp_array_native_handle(src, &psrc));
    ASSERT_OK(amp_array_native_handle(dst, &pdst));
    cr_assert(psrc && pdst && psrc != pdst);
    ASSERT_OK(amp_accelerator_view_wait(q));
    put(in, psrc, host, N * 4);
    amp_program *p = test_build(acc, test_kernels_interop);
    amp_kernel *k = test_kernel(p, "interop_add");
    amp_arg a[] = {amp_arg_array(src), amp_arg_array(dst), amp_arg_uint32(11)};
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), k, a, 3));
    ASSERT_OK(amp_accelerator_view_wait(q));
    get(in, got, pdst, N * 4);
    for (int i = 0; i < N; ++i) want[i] = host[i] + 11u;
    check_u32(got, want, N, "kernel output read through the native pointer");
    amp_program_destroy(p);
    amp_array_destroy(src);
    amp_array_destroy(dst);
    free(host);
    free(got);
    free(want);
}

/* An array over memory the caller allocated: used in place, never freed by
 * hipamp (the caller frees it after destroying the array: a double free
 * would show under the sanitizers). */
ACCEL_TEST(interop, array_over_borrowed_memory)
{
    enum { N = 4099 };
    amp_accelerator_info in = info_of(acc);
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    open_vendor(in);
    uint32_t init[N], got[N], want[N];
    for (int i = 0; i < N; ++i) init[i] = (uint32_t)i * 13u + 5u;
    void *mem = in.is_emulated ? test_xmalloc(N * 4) : vendor_malloc(N * 4);
    cr_assert_not_null(mem);
    put(in, mem, init, sizeof init);
    amp_array *a = NULL;
    ASSERT_OK(amp_array_create_from_native(q, mem, 4, amp_extent_1d(N), &a));
    void *back = NULL;
    ASSERT_OK(amp_array_native_handle(a, &back));
    cr_assert_eq(back, mem, "the borrowed memory was not used in place");
    amp_program *p = test_build(acc, test_kernels_interop);
    amp_kernel *k = test_kernel(p, "interop_scale_inplace");
    amp_arg args[] = {amp_arg_array(a)};
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(N), k, args, 1));
    ASSERT_OK(amp_array_copy_to_host(a, got));
    for (int i = 0; i < N; ++i) want[i] = init[i] * 3u + 1u;
    check_u32(got, want, N, "kernel on borrowed memory");
    ASSERT_OK(amp_array_destroy(a));
    /* Still ours, and still holding the kernel's results. */
    memset(got, 0, sizeof got);
    get(in, got, mem, sizeof got);
    check_u32(got, want, N, "borrowed memory after the array was destroyed");
    if (in.is_emulated) free(mem);
    else vendor_free(mem);
    amp_program_destroy(p);
    ASSERT_STATUS(amp_array_create_from_native(q, NULL, 4, amp_extent_1d(N), &a), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(a);
}

/* A view handed to a vendor library: read it there, write it there, and
 * hipamp's coherence follows (synchronize brings the library's writes). */
ACCEL_TEST(interop, view_handed_to_a_library_and_back)
{
    enum { N = 3000 };
    amp_accelerator_info in = info_of(acc);
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    open_vendor(in);
    static uint32_t host[N], got[N], lib[N];
    for (int i = 0; i < N; ++i) host[i] = (uint32_t)i ^ 0x5a5a5a5au;
    amp_array_view *v = test_view(host, 4, amp_extent_1d(N), AMP_READ_WRITE);
    void *dp = NULL;
    ASSERT_OK(amp_array_view_native_handle(v, q, AMP_READ_ONLY, &dp));
    cr_assert_not_null(dp);
    ASSERT_OK(amp_accelerator_view_wait(q));
    get(in, got, dp, sizeof got);
    check_u32(got, host, N, "the library read the view's current data");
    /* The library writes the view's data in place. */
    ASSERT_OK(amp_array_view_native_handle(v, q, AMP_WRITE_ONLY, &dp));
    for (int i = 0; i < N; ++i) lib[i] = 0xC0000000u + (uint32_t)i;
    put(in, dp, lib, sizeof lib);
    ASSERT_OK(amp_array_view_synchronize(v));
    check_u32(host, lib, N, "synchronize brought back what the library wrote");
    int64_t strides[AMP_MAX_RANK];
    ASSERT_OK(amp_array_view_get_strides(v, strides));
    cr_assert_eq(strides[0], 1);
    ASSERT_OK(amp_array_view_destroy(v));

    /* A read-only view cannot be handed out for writing. */
    amp_array_view *ro = test_view(host, 4, amp_extent_1d(N), AMP_READ_ONLY);
    ASSERT_STATUS(amp_array_view_native_handle(ro, q, AMP_READ_WRITE, &dp), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(dp);
    ASSERT_STATUS(amp_array_view_native_handle(ro, q, (amp_access)7, &dp), AMP_ERROR_INVALID_ARGUMENT);
    amp_array_view_destroy(ro);
}

/* A section of a 2-D view handed out: the pointer is its first element and
 * the strides step through the parent. */
ACCEL_TEST(interop, section_pointer_and_strides)
{
    enum { R = 20, C = 30 };
    amp_accelerator_info in = info_of(acc);
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(acc, &q));
    open_vendor(in);
    static uint32_t m[R * C];
    for (int i = 0; i < R * C; ++i) m[i] = (uint32_t)i;
    amp_array_view *v = test_view(m, 4, amp_extent_2d(R, C), AMP_READ_WRITE);
    amp_array_view *s = NULL;
    ASSERT_OK(amp_array_view_section(v, amp_index_2d(4, 7), amp_extent_2d(3, 5), &s));
    int64_t strides[AMP_MAX_RANK];
    ASSERT_OK(amp_array_view_get_strides(s, strides));
    cr_assert(strides[0] == C && strides[1] == 1, "strides %lld %lld", (long long)strides[0], (long long)strides[1]);
    void *dp = NULL;
    ASSERT_OK(amp_array_view_native_handle(s, q, AMP_READ_ONLY, &dp));
    ASSERT_OK(amp_accelerator_view_wait(q));
    uint32_t first = 0;
    get(in, &first, dp, 4);
    cr_assert_eq(first, 4u * C + 7u, "the pointer is not the section's first element (%u)", first);
    amp_array_view_destroy(s);
    amp_array_view_destroy(v);
}

/* Work on a view made from the caller's own stream runs after the caller's
 * work on it: the caller fills a large buffer on its stream, hipamp reads
 * the end of it without any wait in between. */
Test(interop, wrapped_stream_orders_after_callers_work)
{
    enum { N = 1 << 26 }; /* 256 MiB: the fill is still running when hipamp queues */
    amp_accelerator *gpu = test_accel(TEST_ACCEL_GPU);
    amp_accelerator_info in = info_of(gpu);
    open_vendor(in);
    void *stream = vendor_stream_create();
    cr_assert_not_null(stream, "cannot create a vendor stream");
    uint32_t *mem = vendor_malloc((size_t)N * 4);
    cr_assert_not_null(mem);
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create_from_native(gpu, stream, &q));
    void *back = NULL;
    ASSERT_OK(amp_accelerator_view_native_queue(q, &back));
    cr_assert_eq(back, stream, "the view does not queue on the caller's stream");
    amp_array *a = NULL;
    ASSERT_OK(amp_array_create_from_native(q, mem, 4, amp_extent_1d(N), &a));
    amp_array_view *whole = NULL, *tail = NULL;
    ASSERT_OK(amp_array_view_of_array(a, &whole));
    ASSERT_OK(amp_array_view_section(whole, amp_index_1d(N - 1024), amp_extent_1d(1024), &tail));
    uint32_t out[1024];
    for (int i = 0; i < 1024; ++i) out[i] = POISON_U32;
    amp_array_view *vo = test_view(out, 4, amp_extent_1d(1024), AMP_WRITE_ONLY);
    amp_program *p = test_build(gpu, test_kernels_interop);
    amp_kernel *k = test_kernel(p, "interop_add");
    cr_assert(vendor_fill32_async(mem, 0x12345678u, (size_t)N, stream), "vendor fill failed");
    amp_arg args[] = {amp_arg_view(tail), amp_arg_view(vo), amp_arg_uint32(1)};
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(1024), k, args, 3));
    ASSERT_OK(amp_array_view_synchronize(vo));
    for (int i = 0; i < 1024; ++i) cr_assert_eq(out[i], 0x12345679u, "out[%d] = 0x%08x: ran before the fill", i, out[i]);
    amp_array_view_destroy(vo);
    amp_array_view_destroy(tail);
    amp_array_view_destroy(whole);
    ASSERT_OK(amp_array_destroy(a));
    ASSERT_OK(amp_accelerator_view_destroy(q));
    /* The stream is still the caller's. */
    cr_assert(vendor_stream_sync(stream), "the caller's stream was destroyed with the view");
    vendor_stream_destroy(stream);
    vendor_free(mem);
    /* Unloading the program's code drains the device's queues: the view
     * let go of the caller's stream, which must not be among them now that
     * the caller destroyed it. */
    ASSERT_OK(amp_program_destroy(p));
    ASSERT_OK(amp_cache_clear_memory());
}

Test(interop, cpu_accelerator_has_no_native_queue)
{
    amp_accelerator *cpu = test_accel(TEST_ACCEL_CPU);
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_default_view(cpu, &q));
    void *native = (void *)&native;
    ASSERT_OK(amp_accelerator_view_native_queue(q, &native));
    cr_assert_null(native);
    amp_accelerator_view *w = (amp_accelerator_view *)&w;
    ASSERT_STATUS(amp_accelerator_view_create_from_native(cpu, NULL, &w), AMP_ERROR_UNSUPPORTED);
    cr_assert_null(w);
    cr_assert(strstr(amp_last_error(), "cpu"), "%s", amp_last_error());
    ASSERT_STATUS(amp_accelerator_view_native_queue(NULL, &native), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_array_native_handle(NULL, &native), AMP_ERROR_INVALID_ARGUMENT);
}

/* ------------------------------------------------------- local rank */

static size_t gpus(amp_accelerator **list, size_t cap)
{
    amp_accelerator *all[64];
    size_t n = 0, k = 0;
    ASSERT_OK(amp_accelerator_list(all, 64, &n));
    for (size_t i = 0; i < n && i < 64; ++i) {
        amp_accelerator_info in = info_of(all[i]);
        if (!in.is_emulated && in.is_available && k < cap) list[k++] = all[i];
    }
    return k;
}

Test(interop, select_local_from_the_launcher_environment)
{
    cr_assert_eq(setenv("OMPI_COMM_WORLD_LOCAL_RANK", "3", 1), 0);
    amp_accelerator *got = NULL, *list[64];
    ASSERT_OK(amp_accelerator_select_local(-1, &got));
    size_t n = gpus(list, 64);
    if (n == 0) cr_assert(info_of(got).is_emulated, "no GPU: the CPU accelerator is expected");
    else cr_assert_eq(got, list[3 % n], "rank 3 of %zu GPUs", n);
    for (int r = 0; r < 5; ++r) {
        ASSERT_OK(amp_accelerator_select_local(r, &got));
        if (n) cr_assert_eq(got, list[r % n]);
    }
    ASSERT_STATUS(amp_accelerator_select_local(-2, &got), AMP_ERROR_INVALID_ARGUMENT);
    cr_assert_null(got);
    cr_assert(strstr(amp_last_error(), "-2"), "%s", amp_last_error());
}

Test(interop, select_local_slurm_and_default)
{
    unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
    cr_assert_eq(setenv("SLURM_LOCALID", "1", 1), 0);
    amp_accelerator *got = NULL, *list[64];
    ASSERT_OK(amp_accelerator_select_local(-1, &got));
    size_t n = gpus(list, 64);
    if (n) cr_assert_eq(got, list[1 % n]);
    unsetenv("SLURM_LOCALID");
    cr_assert_eq(setenv("SLURM_LOCALID", "not-a-number", 1), 0);
    ASSERT_OK(amp_accelerator_select_local(-1, &got)); /* malformed: rank 0 */
    if (n) cr_assert_eq(got, list[0]);
}

/* ------------------------------------------------------ device time */

ACCEL_TEST(interop, future_reports_device_time)
{
    enum { N = 1 << 20 };
    amp_program *p = test_build(acc, test_kernels_interop);
    amp_kernel *k = test_kernel(p, "interop_scale_inplace");
    uint32_t *v = test_xmalloc(N * 4);
    for (int i = 0; i < N; ++i) v[i] = (uint32_t)i;
    amp_array_view *vv = test_view(v, 4, amp_extent_1d(N), AMP_READ_WRITE);
    amp_arg a[] = {amp_arg_view(vv)};
    amp_future *f = NULL;
    ASSERT_OK(amp_parallel_for_each_async(NULL, amp_extent_1d(N), k, a, 1, &f));
    double ms = -1;
    ASSERT_OK(amp_future_elapsed_ms(f, &ms));
    cr_assert(ms > 0 && ms < 60000, "device time %g ms", ms);
    ASSERT_STATUS(amp_future_elapsed_ms(f, NULL), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_STATUS(amp_future_elapsed_ms(NULL, &ms), AMP_ERROR_INVALID_ARGUMENT);
    ASSERT_OK(amp_future_destroy(f));
    ASSERT_OK(amp_array_view_destroy(vv));
    for (int i = 0; i < N; ++i) cr_assert_eq(v[i], (uint32_t)i * 3u + 1u);
    free(v);
    amp_program_destroy(p);
}

/* ------------------------------------------- the caller's current context */

/* Launch interop_add on fresh views with whatever context the caller has
 * current, read the result back, and check it. */
static void add_eleven_and_check(amp_accelerator *acc)
{
    enum { N = 3000 };
    uint32_t in[N], out[N];
    for (int i = 0; i < N; ++i) {
        in[i] = (uint32_t)i * 5u + 3u;
        out[i] = 0xdeadbeefu;
    }
    amp_program *p = test_build(acc, test_kernels_interop);
    amp_kernel *k = test_kernel(p, "interop_add");
    amp_array_view *vi = test_view(in, 4, amp_extent_1d(N), AMP_READ_ONLY);
    amp_array_view *vo = test_view(out, 4, amp_extent_1d(N), AMP_WRITE_ONLY);
    amp_arg a[] = {amp_arg_view(vi), amp_arg_view(vo), amp_arg_uint32(11)};
    for (int rep = 0; rep < 3; ++rep) ASSERT_OK(amp_parallel_for_each(NULL, amp_extent_1d(N), k, a, 3));
    ASSERT_OK(amp_array_view_synchronize(vo));
    for (int i = 0; i < N; ++i) cr_assert_eq(out[i], in[i] + 11u, "element %d is %u, want %u", i, out[i], in[i] + 11u);
    ASSERT_OK(amp_array_view_destroy(vo));
    ASSERT_OK(amp_array_view_destroy(vi));
    amp_program_destroy(p);
}

/* The launch path makes no context query on CUDA (lib/gpu/driver_cuda.c):
 * a thread with no context current still launches into the device's own,
 * and is left with none current. */
Test(interop, launch_with_no_context_current)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_GPU);
    open_vendor(info_of(acc));
    if (!vendor_has_contexts()) cr_skip_test("the vendor runtime has no per-thread contexts to clear");
    void *own = vendor_context_get();
    cr_assert(vendor_context_set(NULL), "cuCtxSetCurrent(NULL) failed");
    add_eleven_and_check(acc);
    cr_assert_null(vendor_context_get(), "hipamp left a context current in a thread that had none");
    cr_assert(vendor_context_set(own));
}

/* ... and with another context of the same device current, the launches
 * still go to hipamp's context, and the caller's stays current. */
Test(interop, launch_with_another_context_current)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_GPU);
    open_vendor(info_of(acc));
    if (!vendor_has_contexts()) cr_skip_test("the vendor runtime has no per-thread contexts to create");
    void *own = vendor_context_get();
    void *other = vendor_context_create();
    cr_assert_not_null(other, "cuCtxCreate failed");
    cr_assert_eq(vendor_context_get(), other);
    add_eleven_and_check(acc);
    cr_assert_eq(vendor_context_get(), other, "hipamp replaced the caller's current context");
    cr_assert(vendor_context_set(own));
    vendor_context_destroy(other);
}

/* HIP launches make no device query either: a module launch goes to its
 * stream's device whatever device the thread has current (ROCm's source:
 * docs/architecture.md). With another device current the launches still run
 * on hipamp's device, and the caller's device stays current. Needs two HIP
 * devices. */
Test(interop, hip_launch_with_another_device_current)
{
    amp_accelerator *acc = test_accel(TEST_ACCEL_GPU);
    amp_accelerator_info in = info_of(acc);
    int ord = -1;
    if (sscanf(in.device_path, "hip:%d", &ord) != 1) cr_skip_test("%s is not a HIP device", in.device_path);
    open_vendor(in);
    if (vendor_hip_device_count() < 2) cr_skip_test("needs two HIP devices (%d found)", vendor_hip_device_count());
    int other = ord == 0 ? 1 : 0;
    cr_assert(vendor_hip_set_device(other), "hipSetDevice(%d) failed", other);
    add_eleven_and_check(acc);
    cr_assert_eq(vendor_hip_device(), other, "hipamp changed the caller's current device to %d", vendor_hip_device());
    cr_assert(vendor_hip_set_device(ord));
}
