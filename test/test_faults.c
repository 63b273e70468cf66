/* test_faults.c — GPU-only: a faulting kernel is reported as AMP_ERROR_DEVICE with the driver's message at the next synchronizing call, without aborting, and everything can be destroyed afterwards; a huge amp_array is AMP_ERROR_OUT_OF_MEMORY. */
#include "support.h"

#include <stdint.h>
#include <string.h>

extern const char test_kernels_faults[];

/* 2^40 floats (4 TiB) past the view: far from any mapping. */
#define WILD_OFFSET (1LL << 40)

static void require_gpu(amp_accelerator *acc)
{
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    if (info.is_emulated)
        cr_skip_test("GPU-only: a wild write on the CPU accelerator is a host segfault, not a "
                     "reportable device fault, and host memory does not run out like a GPU's");
}

/* The wild-write tests need a driver that reports a device fault: ROCr (under
 * HIP) aborts the whole process on a GPU memory fault before any status can
 * be returned, and HIP offers no hook to prevent it. HIP on NVIDIA (an sm_
 * arch) reports it as CUDA does: those run. */
static void require_reportable_faults(amp_accelerator *acc)
{
    require_gpu(acc);
    amp_accelerator_info info;
    ASSERT_OK(amp_accelerator_get_info(acc, &info));
    if (strncmp(info.device_path, "hip:", 4) == 0 && strncmp(info.arch, "sm_", 3) != 0)
        cr_skip_test("%s: the ROCm runtime aborts the process on a GPU memory fault before a status "
                     "can be returned, so a wild write cannot be reported there", info.device_path);
}

/* Destroy calls after a fault: they must return (OK, or DEVICE to report the
 * fault again), never crash or hang. */
#define ASSERT_OK_OR_DEVICE(call)                                                       \
    do {                                                                               \
        amp_status st_ = (call);                                                       \
        cr_assert(st_ == AMP_OK || st_ == AMP_ERROR_DEVICE, "%s returned %s: %s", #call, \
                  amp_status_name(st_), amp_last_error());                             \
    } while (0)

#define ASSERT_DEVICE_ERROR(call)                                                       \
    do {                                                                               \
        ASSERT_STATUS(call, AMP_ERROR_DEVICE);                                         \
        const char *m_ = amp_last_error();                                             \
        cr_assert(strlen(m_) > 0, "AMP_ERROR_DEVICE without the driver's message");    \
    } while (0)

typedef struct fault_fixture {
    amp_accelerator_view *q;
    amp_program *p;
    amp_kernel *wild, *ok;
    float data[256];
    amp_array_view *v;
} fault_fixture;

static void fault_setup(amp_accelerator *acc, fault_fixture *f)
{
    require_reportable_faults(acc);
    f->q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &f->q));
    f->p = test_build(acc, test_kernels_faults);
    f->wild = test_kernel(f->p, "wild_write");
    f->ok = test_kernel(f->p, "fault_ok"); /* before the fault: a faulted context may refuse lookups */
    test_fill_random(f->data, 256, 1);
    f->v = NULL;
    ASSERT_OK(amp_array_view_create(f->data, 4, amp_extent_1d(256), AMP_READ_WRITE, &f->v));
}

static void fault_launch(fault_fixture *f, amp_future **fut)
{
    amp_arg a[] = {amp_arg_view(f->v), amp_arg_int64(WILD_OFFSET)};
    if (fut)
        ASSERT_OK(amp_parallel_for_each_async(f->q, amp_extent_1d(256), f->wild, a, 2, fut));
    else
        ASSERT_OK(amp_parallel_for_each(f->q, amp_extent_1d(256), f->wild, a, 2));
}

static void fault_teardown(fault_fixture *f)
{
    ASSERT_OK_OR_DEVICE(amp_array_view_destroy(f->v));
    ASSERT_OK_OR_DEVICE(amp_program_destroy(f->p));
    ASSERT_OK_OR_DEVICE(amp_accelerator_view_destroy(f->q));
}

ACCEL_TEST(faults, wild_write_reported_at_queue_wait)
{
    fault_fixture f;
    fault_setup(acc, &f);
    fault_launch(&f, NULL);
    ASSERT_DEVICE_ERROR(amp_accelerator_view_wait(f.q));
    cr_log_info("driver message: %s", amp_last_error());
    /* the queue stays failed: the next launch on it says so */
    amp_arg a[] = {amp_arg_view(f.v)};
    ASSERT_DEVICE_ERROR(amp_parallel_for_each(f.q, amp_extent_1d(256), f.ok, a, 1));
    fault_teardown(&f);
}

ACCEL_TEST(faults, wild_write_reported_at_synchronize)
{
    fault_fixture f;
    fault_setup(acc, &f);
    fault_launch(&f, NULL);
    ASSERT_DEVICE_ERROR(amp_array_view_synchronize(f.v));
    fault_teardown(&f);
}

ACCEL_TEST(faults, wild_write_reported_at_future_wait)
{
    fault_fixture f;
    fault_setup(acc, &f);
    amp_future *fut = NULL;
    fault_launch(&f, &fut);
    cr_assert_not_null(fut);
    ASSERT_DEVICE_ERROR(amp_future_wait(fut));
    bool done = false;
    ASSERT_OK_OR_DEVICE(amp_future_is_ready(fut, &done));
    ASSERT_OK(amp_future_destroy(fut));
    fault_teardown(&f);
}

ACCEL_TEST(faults, huge_array_out_of_memory)
{
    require_gpu(acc);
    amp_accelerator_view *q = NULL;
    ASSERT_OK(amp_accelerator_view_create(acc, &q));
    amp_array *a = (amp_array *)&a;
    /* 2^20 x 2^18 floats = 2^40 bytes (1 TiB) */
    ASSERT_STATUS(amp_array_create(q, 4, amp_extent_2d(1 << 20, 1 << 18), NULL, &a),
                  AMP_ERROR_OUT_OF_MEMORY);
    cr_assert_null(a, "out-param set on failure");
    cr_assert(strlen(amp_last_error()) > 0, "no message");
    /* the device is still usable */
    float init[100], got[100];
    test_fill_random(init, 100, 2);
    ASSERT_OK(amp_array_create(q, 4, amp_extent_1d(100), init, &a));
    amp_program *p = test_build(acc, test_kernels_faults);
    amp_kernel *k = test_kernel(p, "fault_ok");
    amp_arg args[] = {amp_arg_array(a)};
    ASSERT_OK(amp_parallel_for_each(q, amp_extent_1d(100), k, args, 1));
    ASSERT_OK(amp_array_copy_to_host(a, got));
    for (int i = 0; i < 100; ++i)
        cr_assert(got[i] == init[i] + 1.0f, "element %d: %g want %g", i, (double)got[i],
                  (double)(init[i] + 1.0f));
    ASSERT_OK(amp_array_destroy(a));
    ASSERT_OK(amp_program_destroy(p));
    ASSERT_OK(amp_accelerator_view_destroy(q));
}
