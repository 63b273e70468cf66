/* native.c — hipamp::mpi's direct calls into the vendor runtime on a hipamp queue's native stream: the stream's device made current around NCCL's calls and its own, and the staged path's side stream (copies beside the queue's kernels, ordered to the queue by events). The runtimes are the ones hipamp loaded; nothing here is a build-time dependency. */
#include "native.h"
#include "native_abi.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------- the stream's device current
 *
 * NCCL uses the calling thread's current CUDA device (RCCL the current HIP
 * device), hipamp's queues live in the device's primary context, which
 * hipamp makes current only inside its own calls. So each NCCL call (and
 * each side-stream call below) is bracketed: CUDA pushes the stream's context (cuStreamGetCtx) and pops it
 * after; HIP sets the stream's device (hipStreamGetDevice) and restores the
 * previous one. The driver libraries are the ones hipamp itself loaded
 * (dlopen of an already loaded soname). */
/* The calls, one pointer each, named as the symbols (native_abi.h). */
typedef struct amp__ctx_api {
#define AMP__NATIVE_PTR(name, ret, args) ret(*name) args;
    NATIVE_CUDA_FUNCS(AMP__NATIVE_PTR)
    NATIVE_HIP_FUNCS(AMP__NATIVE_PTR)
    NATIVE_HIP_OPTIONAL(AMP__NATIVE_PTR)
#undef AMP__NATIVE_PTR
} amp__ctx_api;
static amp__ctx_api amp__ctx;
static pthread_once_t amp__ctx_once = PTHREAD_ONCE_INIT;

static void amp__ctx_load(void)
{
    void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!cu) cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
#define AMP__NATIVE_SYM(lib, name) *(void **)&amp__ctx.name = dlsym(lib, #name);
#define AMP__NATIVE_CUDA(name, ret, args) AMP__NATIVE_SYM(cu, name)
#define AMP__NATIVE_HIP(name, ret, args) AMP__NATIVE_SYM(hip, name)
    if (cu) {
        NATIVE_CUDA_FUNCS(AMP__NATIVE_CUDA)
    }
    void *hip = dlopen("libamdhip64.so", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!hip) hip = dlopen("libamdhip64.so.7", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!hip) hip = dlopen("libamdhip64.so.6", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!hip) hip = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (hip) {
        NATIVE_HIP_FUNCS(AMP__NATIVE_HIP)
        NATIVE_HIP_OPTIONAL(AMP__NATIVE_HIP)
    }
#undef AMP__NATIVE_HIP
#undef AMP__NATIVE_CUDA
#undef AMP__NATIVE_SYM
}

amp_status amp_mpi__ctx_enter(char vendor, void *stream, amp_mpi__ctx_saved *saved, const char *what)
{
    saved->kind = 0;
    if (!stream) return AMP_OK;
    pthread_once(&amp__ctx_once, amp__ctx_load);
    if (vendor == 'c') {
        void *ctx = NULL;
        if (!amp__ctx.cuStreamGetCtx || !amp__ctx.cuCtxPushCurrent_v2 || !amp__ctx.cuCtxPopCurrent_v2)
            return amp_mpi__fail(AMP_ERROR_DEVICE, "%s: libcuda.so.1 has no cuStreamGetCtx/cuCtxPushCurrent", what);
        int e = amp__ctx.cuStreamGetCtx(stream, &ctx);
        if (e || (e = amp__ctx.cuCtxPushCurrent_v2(ctx)))
            return amp_mpi__fail(AMP_ERROR_DEVICE, "%s: making the queue's CUDA context current failed (CUresult %d)",
                                 what, e);
        saved->kind = 1;
    } else if (vendor == 'h') {
        int dev = 0;
        if (!amp__ctx.hipStreamGetDevice || !amp__ctx.hipGetDevice || !amp__ctx.hipSetDevice)
            return amp_mpi__fail(AMP_ERROR_DEVICE, "%s: the HIP runtime has no hipStreamGetDevice/hipSetDevice", what);
        int e = amp__ctx.hipGetDevice(&saved->hip_device);
        if (e || (e = amp__ctx.hipStreamGetDevice(stream, &dev)) || (e = amp__ctx.hipSetDevice(dev)))
            return amp_mpi__fail(AMP_ERROR_DEVICE, "%s: making the queue's HIP device current failed (hipError_t %d)",
                                 what, e);
        saved->kind = 2;
    }
    return AMP_OK;
}

void amp_mpi__ctx_leave(const amp_mpi__ctx_saved *saved)
{
    void *ignored = NULL;
    if (saved->kind == 1) amp__ctx.cuCtxPopCurrent_v2(&ignored);
    else if (saved->kind == 2) amp__ctx.hipSetDevice(saved->hip_device);
}

/* ---------------------------------------------------------- side stream */

/* The flags used (native_abi.h): a stream that does not wait for the
 * legacy default stream, events without timing; both runtimes give them
 * and "not ready" the same values. */
_Static_assert(AMP_MPI__CU_NOT_READY == AMP_MPI__HIP_NOT_READY, "not ready differs");
_Static_assert(AMP_MPI__CU_STREAM_NON_BLOCKING == AMP_MPI__HIP_STREAM_NON_BLOCKING, "stream flags differ");
_Static_assert(AMP_MPI__CU_EVENT_DISABLE_TIMING == AMP_MPI__HIP_EVENT_DISABLE_TIMING, "event flags differ");
enum {
    AMP__NOT_READY = AMP_MPI__CU_NOT_READY,
    AMP__STREAM_NON_BLOCKING = AMP_MPI__CU_STREAM_NON_BLOCKING,
    AMP__EVENT_DISABLE_TIMING = AMP_MPI__CU_EVENT_DISABLE_TIMING
};

struct amp_mpi__aside {
    char vendor;
    void *queue; /* the hipamp queue's native stream */
    void *side;  /* ours */
};

/* The calls a side stream needs, all of them, for vendor. */
static bool amp__aside_calls(char vendor)
{
    const amp__ctx_api *c = &amp__ctx;
    bool all = true;
#define AMP__NATIVE_HAS(name, ret, args) all = all && c->name;
    if (vendor == 'c') {
        NATIVE_CUDA_FUNCS(AMP__NATIVE_HAS)
        return all;
    }
    if (vendor == 'h') {
        NATIVE_HIP_FUNCS(AMP__NATIVE_HAS)
        NATIVE_HIP_OPTIONAL(AMP__NATIVE_HAS)
        return all;
    }
#undef AMP__NATIVE_HAS
    return false;
}

static amp_status amp__aside_fail(const amp_mpi__aside *a, int e, const char *call)
{
    return amp_mpi__fail(AMP_ERROR_DEVICE, "hipamp::mpi's copy stream: %s failed (%s error %d)", call,
                         a->vendor == 'c' ? "CUDA" : "HIP", e);
}

amp_status amp_mpi__aside_open(char vendor, void *stream, amp_mpi__aside **out)
{
    *out = NULL;
    if (!stream || (vendor != 'c' && vendor != 'h') || amp_mpi__env_off("AMP_MPI_COPY_STREAM")) return AMP_OK;
    pthread_once(&amp__ctx_once, amp__ctx_load);
    if (!amp__aside_calls(vendor)) return AMP_OK;
    amp_mpi__aside *a = calloc(1, sizeof *a);
    if (!a) return amp_mpi__fail(AMP_ERROR_OUT_OF_MEMORY, "hipamp::mpi's copy stream: no memory");
    a->vendor = vendor;
    a->queue = stream;
    amp_mpi__ctx_saved saved;
    amp_status st = amp_mpi__ctx_enter(vendor, stream, &saved, "hipamp::mpi's copy stream");
    if (st != AMP_OK) {
        free(a);
        return st;
    }
    int e = vendor == 'c' ? amp__ctx.cuStreamCreate(&a->side, AMP__STREAM_NON_BLOCKING)
                          : amp__ctx.hipStreamCreateWithFlags(&a->side, AMP__STREAM_NON_BLOCKING);
    amp_mpi__ctx_leave(&saved);
    if (e) {
        st = amp__aside_fail(a, e, vendor == 'c' ? "cuStreamCreate" : "hipStreamCreateWithFlags");
        free(a);
        return st;
    }
    *out = a;
    return AMP_OK;
}

void amp_mpi__aside_close(amp_mpi__aside *a)
{
    if (!a) return;
    amp_mpi__ctx_saved saved;
    if (amp_mpi__ctx_enter(a->vendor, a->queue, &saved, "hipamp::mpi's copy stream") == AMP_OK) {
        if (a->vendor == 'c') {
            amp__ctx.cuStreamSynchronize(a->side);
            amp__ctx.cuStreamDestroy_v2(a->side);
        } else {
            amp__ctx.hipStreamSynchronize(a->side);
            amp__ctx.hipStreamDestroy(a->side);
        }
        amp_mpi__ctx_leave(&saved);
    }
    free(a);
}

/* An event recorded on stream (a's queue or side). */
static amp_status amp__aside_record(amp_mpi__aside *a, void *stream, void **ev)
{
    *ev = NULL;
    bool cu = a->vendor == 'c';
    void *e = NULL;
    int rc = cu ? amp__ctx.cuEventCreate(&e, AMP__EVENT_DISABLE_TIMING)
                : amp__ctx.hipEventCreateWithFlags(&e, AMP__EVENT_DISABLE_TIMING);
    if (rc) return amp__aside_fail(a, rc, cu ? "cuEventCreate" : "hipEventCreateWithFlags");
    if ((rc = cu ? amp__ctx.cuEventRecord(e, stream) : amp__ctx.hipEventRecord(e, stream))) {
        if (cu) amp__ctx.cuEventDestroy_v2(e);
        else amp__ctx.hipEventDestroy(e);
        return amp__aside_fail(a, rc, cu ? "cuEventRecord" : "hipEventRecord");
    }
    *ev = e;
    return AMP_OK;
}

amp_status amp_mpi__aside_mark(amp_mpi__aside *a, void **ev)
{
    amp_mpi__ctx_saved saved;
    amp_status st = amp_mpi__ctx_enter(a->vendor, a->queue, &saved, "hipamp::mpi's copy stream");
    if (st != AMP_OK) return st;
    st = amp__aside_record(a, a->queue, ev);
    amp_mpi__ctx_leave(&saved);
    return st;
}

amp_status amp_mpi__aside_copy(amp_mpi__aside *a, void *dst, const void *src, size_t bytes, bool to_device, void *after,
                               void **done)
{
    *done = NULL;
    bool cu = a->vendor == 'c';
    amp_mpi__ctx_saved saved;
    amp_status st = amp_mpi__ctx_enter(a->vendor, a->queue, &saved, "hipamp::mpi's copy stream");
    if (st != AMP_OK) return st;
    int rc = 0;
    if (after && (rc = cu ? amp__ctx.cuStreamWaitEvent(a->side, after, 0) : amp__ctx.hipStreamWaitEvent(a->side, after, 0)))
        st = amp__aside_fail(a, rc, cu ? "cuStreamWaitEvent" : "hipStreamWaitEvent");
    /* (A face's empty last chunk, halo.c: no copy, its event still marks
     * the order.) */
    if (st == AMP_OK && bytes > 0) {
        if (cu)
            rc = to_device ? amp__ctx.cuMemcpyHtoDAsync_v2((unsigned long long)(uintptr_t)dst, src, bytes, a->side)
                           : amp__ctx.cuMemcpyDtoHAsync_v2(dst, (unsigned long long)(uintptr_t)src, bytes, a->side);
        else
            rc = amp__ctx.hipMemcpyAsync(dst, src, bytes, to_device ? AMP_MPI__HIP_H2D : AMP_MPI__HIP_D2H, a->side);
        if (rc)
            st = amp__aside_fail(a, rc, cu ? (to_device ? "cuMemcpyHtoDAsync" : "cuMemcpyDtoHAsync") : "hipMemcpyAsync");
    }
    if (st == AMP_OK && (st = amp__aside_record(a, a->side, done)) != AMP_OK) {
        /* The copy is queued but nothing could track it: it finishes
         * before this returns, so that no caller reuses its buffers early. */
        if (a->vendor == 'c') amp__ctx.cuStreamSynchronize(a->side);
        else amp__ctx.hipStreamSynchronize(a->side);
    }
    amp_mpi__ctx_leave(&saved);
    return st;
}

amp_status amp_mpi__aside_order(amp_mpi__aside *a, void *ev)
{
    bool cu = a->vendor == 'c';
    amp_mpi__ctx_saved saved;
    amp_status st = amp_mpi__ctx_enter(a->vendor, a->queue, &saved, "hipamp::mpi's copy stream");
    if (st != AMP_OK) return st;
    int rc = cu ? amp__ctx.cuStreamWaitEvent(a->queue, ev, 0) : amp__ctx.hipStreamWaitEvent(a->queue, ev, 0);
    amp_mpi__ctx_leave(&saved);
    return rc ? amp__aside_fail(a, rc, cu ? "cuStreamWaitEvent" : "hipStreamWaitEvent") : AMP_OK;
}

/* cu(ev) or hip(ev), as a's runtime is, with the stream's device current;
 * *rc the runtime's answer. */
static amp_status amp__aside_on_event(amp_mpi__aside *a, void *ev, CUresult (*cu)(CUevent), hipError_t (*hip)(hipEvent_t),
                                      int *rc)
{
    amp_mpi__ctx_saved saved;
    amp_status st = amp_mpi__ctx_enter(a->vendor, a->queue, &saved, "hipamp::mpi's copy stream");
    if (st != AMP_OK) return st;
    *rc = a->vendor == 'c' ? cu(ev) : hip(ev);
    amp_mpi__ctx_leave(&saved);
    return AMP_OK;
}

amp_status amp_mpi__aside_query(amp_mpi__aside *a, void *ev, bool *done)
{
    int rc = 0;
    amp_status st = amp__aside_on_event(a, ev, amp__ctx.cuEventQuery, amp__ctx.hipEventQuery, &rc);
    *done = st == AMP_OK && rc == 0;
    if (st != AMP_OK || rc == 0 || rc == AMP__NOT_READY) return st;
    return amp__aside_fail(a, rc, a->vendor == 'c' ? "cuEventQuery" : "hipEventQuery");
}

amp_status amp_mpi__aside_wait(amp_mpi__aside *a, void *ev)
{
    int rc = 0;
    amp_status st = amp__aside_on_event(a, ev, amp__ctx.cuEventSynchronize, amp__ctx.hipEventSynchronize, &rc);
    if (st != AMP_OK || rc == 0) return st;
    return amp__aside_fail(a, rc, a->vendor == 'c' ? "cuEventSynchronize" : "hipEventSynchronize");
}

void amp_mpi__aside_event_free(amp_mpi__aside *a, void *ev)
{
    if (!a || !ev) return;
    amp_mpi__ctx_saved saved;
    if (amp_mpi__ctx_enter(a->vendor, a->queue, &saved, "hipamp::mpi's copy stream") != AMP_OK) return;
    if (a->vendor == 'c') amp__ctx.cuEventDestroy_v2(ev);
    else amp__ctx.hipEventDestroy(ev);
    amp_mpi__ctx_leave(&saved);
}
