/* native.c — hipamp::mpi's direct calls into the vendor runtime on a hipamp queue's native stream: the stream's device made current around NCCL's calls and its own, and the staged path's side stream (copies beside the queue's kernels, ordered to the queue by events). The runtimes are the ones hipamp loaded; nothing here is a build-time dependency. */
#include "native.h"

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
typedef struct amp__ctx_api {
    int (*cuStreamGetCtx)(void *, void **);
    int (*cuCtxPushCurrent)(void *);
    int (*cuCtxPopCurrent)(void **);
    int (*hipStreamGetDevice)(void *, int *);
    int (*hipGetDevice)(int *);
    int (*hipSetDevice)(int);
    /* The side stream's calls. CUDA: stream and event flags, CUdeviceptr
     * as an unsigned 64-bit integer; HIP: hipMemcpyAsync with its kind. */
    int (*cuStreamCreate)(void **, unsigned);
    int (*cuStreamDestroy)(void *);
    int (*cuStreamSynchronize)(void *);
    int (*cuStreamWaitEvent)(void *, void *, unsigned);
    int (*cuEventCreate)(void **, unsigned);
    int (*cuEventRecord)(void *, void *);
    int (*cuEventQuery)(void *);
    int (*cuEventSynchronize)(void *);
    int (*cuEventDestroy)(void *);
    int (*cuMemcpyDtoHAsync)(void *, unsigned long long, size_t, void *);
    int (*cuMemcpyHtoDAsync)(unsigned long long, const void *, size_t, void *);
    int (*hipStreamCreateWithFlags)(void **, unsigned);
    int (*hipStreamDestroy)(void *);
    int (*hipStreamSynchronize)(void *);
    int (*hipStreamWaitEvent)(void *, void *, unsigned);
    int (*hipEventCreateWithFlags)(void **, unsigned);
    int (*hipEventRecord)(void *, void *);
    int (*hipEventQuery)(void *);
    int (*hipEventSynchronize)(void *);
    int (*hipEventDestroy)(void *);
    int (*hipMemcpyAsync)(void *, const void *, size_t, int, void *);
} amp__ctx_api;
static amp__ctx_api amp__ctx;
static pthread_once_t amp__ctx_once = PTHREAD_ONCE_INIT;

static void amp__ctx_load(void)
{
    void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!cu) cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (cu) {
        *(void **)&amp__ctx.cuStreamGetCtx = dlsym(cu, "cuStreamGetCtx");
        *(void **)&amp__ctx.cuCtxPushCurrent = dlsym(cu, "cuCtxPushCurrent_v2");
        *(void **)&amp__ctx.cuCtxPopCurrent = dlsym(cu, "cuCtxPopCurrent_v2");
        *(void **)&amp__ctx.cuStreamCreate = dlsym(cu, "cuStreamCreate");
        *(void **)&amp__ctx.cuStreamDestroy = dlsym(cu, "cuStreamDestroy_v2");
        *(void **)&amp__ctx.cuStreamSynchronize = dlsym(cu, "cuStreamSynchronize");
        *(void **)&amp__ctx.cuStreamWaitEvent = dlsym(cu, "cuStreamWaitEvent");
        *(void **)&amp__ctx.cuEventCreate = dlsym(cu, "cuEventCreate");
        *(void **)&amp__ctx.cuEventRecord = dlsym(cu, "cuEventRecord");
        *(void **)&amp__ctx.cuEventQuery = dlsym(cu, "cuEventQuery");
        *(void **)&amp__ctx.cuEventSynchronize = dlsym(cu, "cuEventSynchronize");
        *(void **)&amp__ctx.cuEventDestroy = dlsym(cu, "cuEventDestroy_v2");
        *(void **)&amp__ctx.cuMemcpyDtoHAsync = dlsym(cu, "cuMemcpyDtoHAsync_v2");
        *(void **)&amp__ctx.cuMemcpyHtoDAsync = dlsym(cu, "cuMemcpyHtoDAsync_v2");
    }
    void *hip = dlopen("libamdhip64.so", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!hip) hip = dlopen("libamdhip64.so.7", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!hip) hip = dlopen("libamdhip64.so.6", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!hip) hip = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (hip) {
        *(void **)&amp__ctx.hipStreamGetDevice = dlsym(hip, "hipStreamGetDevice");
        *(void **)&amp__ctx.hipGetDevice = dlsym(hip, "hipGetDevice");
        *(void **)&amp__ctx.hipSetDevice = dlsym(hip, "hipSetDevice");
        *(void **)&amp__ctx.hipStreamCreateWithFlags = dlsym(hip, "hipStreamCreateWithFlags");
        *(void **)&amp__ctx.hipStreamDestroy = dlsym(hip, "hipStreamDestroy");
        *(void **)&amp__ctx.hipStreamSynchronize = dlsym(hip, "hipStreamSynchronize");
        *(void **)&amp__ctx.hipStreamWaitEvent = dlsym(hip, "hipStreamWaitEvent");
        *(void **)&amp__ctx.hipEventCreateWithFlags = dlsym(hip, "hipEventCreateWithFlags");
        *(void **)&amp__ctx.hipEventRecord = dlsym(hip, "hipEventRecord");
        *(void **)&amp__ctx.hipEventQuery = dlsym(hip, "hipEventQuery");
        *(void **)&amp__ctx.hipEventSynchronize = dlsym(hip, "hipEventSynchronize");
        *(void **)&amp__ctx.hipEventDestroy = dlsym(hip, "hipEventDestroy");
        *(void **)&amp__ctx.hipMemcpyAsync = dlsym(hip, "hipMemcpyAsync");
    }
}

amp_status amp_mpi__ctx_enter(char vendor, void *stream, amp_mpi__ctx_saved *saved, const char *what)
{
    saved->kind = 0;
    if (!stream) return AMP_OK;
    pthread_once(&amp__ctx_once, amp__ctx_load);
    if (vendor == 'c') {
        void *ctx = NULL;
        if (!amp__ctx.cuStreamGetCtx || !amp__ctx.cuCtxPushCurrent || !amp__ctx.cuCtxPopCurrent)
            return amp_mpi__fail(AMP_ERROR_DEVICE, "%s: libcuda.so.1 has no cuStreamGetCtx/cuCtxPushCurrent", what);
        int e = amp__ctx.cuStreamGetCtx(stream, &ctx);
        if (e || (e = amp__ctx.cuCtxPushCurrent(ctx)))
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
    if (saved->kind == 1) amp__ctx.cuCtxPopCurrent(&ignored);
    else if (saved->kind == 2) amp__ctx.hipSetDevice(saved->hip_device);
}

/* ---------------------------------------------------------- side stream */

/* The runtimes' "not ready" (CUDA_ERROR_NOT_READY, hipErrorNotReady) and
 * the flags used: a stream that does not wait for the legacy default
 * stream, events without timing. */
enum { AMP__NOT_READY = 600, AMP__STREAM_NON_BLOCKING = 1, AMP__EVENT_DISABLE_TIMING = 2 };
enum { AMP__HIP_H2D = 1, AMP__HIP_D2H = 2 };

struct amp_mpi__aside {
    char vendor;
    void *queue; /* the hipamp queue's native stream */
    void *side;  /* ours */
};

/* The calls a side stream needs, all of them, for vendor. */
static bool amp__aside_calls(char vendor)
{
    const amp__ctx_api *c = &amp__ctx;
    if (vendor == 'c')
        return c->cuStreamGetCtx && c->cuCtxPushCurrent && c->cuCtxPopCurrent && c->cuStreamCreate &&
               c->cuStreamDestroy && c->cuStreamSynchronize && c->cuStreamWaitEvent && c->cuEventCreate &&
               c->cuEventRecord && c->cuEventQuery && c->cuEventSynchronize && c->cuEventDestroy &&
               c->cuMemcpyDtoHAsync && c->cuMemcpyHtoDAsync;
    if (vendor == 'h')
        return c->hipStreamGetDevice && c->hipGetDevice && c->hipSetDevice && c->hipStreamCreateWithFlags &&
               c->hipStreamDestroy && c->hipStreamSynchronize && c->hipStreamWaitEvent && c->hipEventCreateWithFlags &&
               c->hipEventRecord && c->hipEventQuery && c->hipEventSynchronize && c->hipEventDestroy &&
               c->hipMemcpyAsync;
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
    const char *env = amp_mpi__env("AMP_MPI_COPY_STREAM");
    if (!stream || (vendor != 'c' && vendor != 'h') || (env && !strcmp(env, "0"))) return AMP_OK;
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
            amp__ctx.cuStreamDestroy(a->side);
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
        if (cu) amp__ctx.cuEventDestroy(e);
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
    if (st == AMP_OK) {
        if (cu)
            rc = to_device ? amp__ctx.cuMemcpyHtoDAsync((unsigned long long)(uintptr_t)dst, src, bytes, a->side)
                           : amp__ctx.cuMemcpyDtoHAsync(dst, (unsigned long long)(uintptr_t)src, bytes, a->side);
        else
            rc = amp__ctx.hipMemcpyAsync(dst, src, bytes, to_device ? AMP__HIP_H2D : AMP__HIP_D2H, a->side);
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

amp_status amp_mpi__aside_query(amp_mpi__aside *a, void *ev, bool *done)
{
    bool cu = a->vendor == 'c';
    amp_mpi__ctx_saved saved;
    amp_status st = amp_mpi__ctx_enter(a->vendor, a->queue, &saved, "hipamp::mpi's copy stream");
    if (st != AMP_OK) return st;
    int rc = cu ? amp__ctx.cuEventQuery(ev) : amp__ctx.hipEventQuery(ev);
    amp_mpi__ctx_leave(&saved);
    *done = rc == 0;
    return rc == 0 || rc == AMP__NOT_READY ? AMP_OK : amp__aside_fail(a, rc, cu ? "cuEventQuery" : "hipEventQuery");
}

amp_status amp_mpi__aside_wait(amp_mpi__aside *a, void *ev)
{
    bool cu = a->vendor == 'c';
    amp_mpi__ctx_saved saved;
    amp_status st = amp_mpi__ctx_enter(a->vendor, a->queue, &saved, "hipamp::mpi's copy stream");
    if (st != AMP_OK) return st;
    int rc = cu ? amp__ctx.cuEventSynchronize(ev) : amp__ctx.hipEventSynchronize(ev);
    amp_mpi__ctx_leave(&saved);
    return rc ? amp__aside_fail(a, rc, cu ? "cuEventSynchronize" : "hipEventSynchronize") : AMP_OK;
}

void amp_mpi__aside_event_free(amp_mpi__aside *a, void *ev)
{
    if (!a || !ev) return;
    amp_mpi__ctx_saved saved;
    if (amp_mpi__ctx_enter(a->vendor, a->queue, &saved, "hipamp::mpi's copy stream") != AMP_OK) return;
    if (a->vendor == 'c') amp__ctx.cuEventDestroy(ev);
    else amp__ctx.hipEventDestroy(ev);
    amp_mpi__ctx_leave(&saved);
}
