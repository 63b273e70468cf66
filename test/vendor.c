/* vendor.c — dlopen'ed CUDA driver / HIP runtime calls for the interop tests (vendor.h). */
#include "vendor.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static bool is_cuda;
static int (*cu_init)(unsigned);
static int (*cu_device_get)(int *, int);
static int (*cu_primary_retain)(void **, int);
static int (*cu_ctx_set)(void *);
static int (*cu_ctx_get)(void **);
static int (*cu_ctx_create)(void **, unsigned, int);
static int (*cu_ctx_destroy)(void *);
static int cu_dev;
static int (*cu_alloc)(unsigned long long *, size_t);
static int (*cu_free)(unsigned long long);
static int (*cu_htod)(unsigned long long, const void *, size_t);
static int (*cu_dtoh)(void *, unsigned long long, size_t);
static int (*cu_dtoh_async)(void *, unsigned long long, size_t, void *);
static int (*cu_stream_create)(void **, unsigned);
static int (*cu_stream_destroy)(void *);
static int (*cu_memset32_async)(unsigned long long, unsigned, size_t, void *);
static int (*cu_stream_sync)(void *);
static int (*cu_host_register)(void *, size_t, unsigned);
static int (*cu_host_unregister)(void *);
static int (*cu_host_device_pointer)(unsigned long long *, void *, unsigned);
static int (*hip_set_device)(int);
static int (*hip_get_device)(int *);
static int (*hip_get_device_count)(int *);
static int (*hip_malloc)(void **, size_t);
static int (*hip_free)(void *);
static int (*hip_memcpy)(void *, const void *, size_t, int);
static int (*hip_stream_create)(void **);
static int (*hip_stream_create_with_flags)(void **, unsigned);
static int (*hip_memcpy_async)(void *, const void *, size_t, int, void *);
static int (*hip_stream_destroy)(void *);
static int (*hip_memset32_async)(void *, int, size_t, void *);
static int (*hip_stream_sync)(void *);
static int (*hip_host_register)(void *, size_t, unsigned);
static int (*hip_host_unregister)(void *);
static int (*hip_host_device_pointer)(void **, void *, unsigned);

#define SYM(lib, var, name)                                       \
    do {                                                          \
        *(void **)&(var) = dlsym((lib), (name));                  \
        if (!(var)) {                                             \
            snprintf(why, n, "%s lacks %s", libname, (name));     \
            return false;                                         \
        }                                                         \
    } while (0)

bool vendor_open(const char *device_path, char *why, size_t n)
{
    int ord = 0;
    if (sscanf(device_path, "cuda:%d", &ord) == 1) {
        const char *libname = "libcuda.so.1";
        void *lib = dlopen(libname, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            snprintf(why, n, "%s not found", libname);
            return false;
        }
        SYM(lib, cu_init, "cuInit");
        SYM(lib, cu_device_get, "cuDeviceGet");
        SYM(lib, cu_primary_retain, "cuDevicePrimaryCtxRetain");
        SYM(lib, cu_ctx_set, "cuCtxSetCurrent");
        SYM(lib, cu_ctx_get, "cuCtxGetCurrent");
        SYM(lib, cu_ctx_create, "cuCtxCreate_v2");
        SYM(lib, cu_ctx_destroy, "cuCtxDestroy_v2");
        SYM(lib, cu_alloc, "cuMemAlloc_v2");
        SYM(lib, cu_free, "cuMemFree_v2");
        SYM(lib, cu_htod, "cuMemcpyHtoD_v2");
        SYM(lib, cu_dtoh, "cuMemcpyDtoH_v2");
        SYM(lib, cu_dtoh_async, "cuMemcpyDtoHAsync_v2");
        SYM(lib, cu_stream_create, "cuStreamCreate");
        SYM(lib, cu_stream_destroy, "cuStreamDestroy_v2");
        SYM(lib, cu_memset32_async, "cuMemsetD32Async");
        SYM(lib, cu_stream_sync, "cuStreamSynchronize");
        SYM(lib, cu_host_register, "cuMemHostRegister_v2");
        SYM(lib, cu_host_unregister, "cuMemHostUnregister");
        SYM(lib, cu_host_device_pointer, "cuMemHostGetDevicePointer_v2");
        int dev = 0;
        void *ctx = NULL;
        if (cu_init(0) || cu_device_get(&dev, ord) || cu_primary_retain(&ctx, dev) || cu_ctx_set(ctx)) {
            snprintf(why, n, "cannot make CUDA device %d current", ord);
            return false;
        }
        cu_dev = dev;
        is_cuda = true;
        return true;
    }
    if (sscanf(device_path, "hip:%d", &ord) == 1) {
        const char *libname = "libamdhip64.so";
        void *lib = dlopen(libname, RTLD_NOW | RTLD_LOCAL);
        if (!lib) lib = dlopen(libname = "libamdhip64.so.6", RTLD_NOW | RTLD_LOCAL);
        if (!lib) lib = dlopen(libname = "libamdhip64.so.5", RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            snprintf(why, n, "libamdhip64 not found");
            return false;
        }
        SYM(lib, hip_set_device, "hipSetDevice");
        SYM(lib, hip_get_device, "hipGetDevice");
        SYM(lib, hip_get_device_count, "hipGetDeviceCount");
        SYM(lib, hip_malloc, "hipMalloc");
        SYM(lib, hip_free, "hipFree");
        SYM(lib, hip_memcpy, "hipMemcpy");
        SYM(lib, hip_stream_create, "hipStreamCreate");
        SYM(lib, hip_stream_create_with_flags, "hipStreamCreateWithFlags");
        SYM(lib, hip_memcpy_async, "hipMemcpyAsync");
        SYM(lib, hip_stream_destroy, "hipStreamDestroy");
        SYM(lib, hip_memset32_async, "hipMemsetD32Async");
        SYM(lib, hip_stream_sync, "hipStreamSynchronize");
        SYM(lib, hip_host_register, "hipHostRegister");
        SYM(lib, hip_host_unregister, "hipHostUnregister");
        SYM(lib, hip_host_device_pointer, "hipHostGetDevicePointer");
        if (hip_set_device(ord)) {
            snprintf(why, n, "hipSetDevice(%d) failed", ord);
            return false;
        }
        is_cuda = false;
        return true;
    }
    snprintf(why, n, "%s is not a GPU device path", device_path);
    return false;
}

void *vendor_malloc(size_t bytes)
{
    if (is_cuda) {
        unsigned long long p = 0;
        return cu_alloc(&p, bytes) ? NULL : (void *)(uintptr_t)p;
    }
    void *p = NULL;
    return hip_malloc(&p, bytes) ? NULL : p;
}

/* Pinned and mapped for every device (CUDA's DEVICEMAP | PORTABLE, HIP's
 * Mapped | Portable: the flags' values are the same, 2 | 1). */
bool vendor_host_register(void *p, size_t bytes)
{
    return is_cuda ? cu_host_register(p, bytes, 3) == 0 : hip_host_register(p, bytes, 3) == 0;
}

void vendor_host_unregister(void *p)
{
    if (is_cuda) cu_host_unregister(p);
    else hip_host_unregister(p);
}

void *vendor_host_device_pointer(void *p)
{
    if (is_cuda) {
        unsigned long long d = 0;
        return cu_host_device_pointer(&d, p, 0) ? NULL : (void *)(uintptr_t)d;
    }
    void *d = NULL;
    return hip_host_device_pointer(&d, p, 0) ? NULL : d;
}

void vendor_free(void *p)
{
    if (is_cuda) cu_free((unsigned long long)(uintptr_t)p);
    else hip_free(p);
}

bool vendor_htod(void *dst, const void *src, size_t bytes)
{
    return is_cuda ? cu_htod((unsigned long long)(uintptr_t)dst, src, bytes) == 0 : hip_memcpy(dst, src, bytes, 1) == 0;
}

bool vendor_dtoh(void *dst, const void *src, size_t bytes)
{
    return is_cuda ? cu_dtoh(dst, (unsigned long long)(uintptr_t)src, bytes) == 0 : hip_memcpy(dst, src, bytes, 2) == 0;
}

void *vendor_stream_create(void)
{
    void *s = NULL;
    if (is_cuda) return cu_stream_create(&s, 0) ? NULL : s;
    return hip_stream_create(&s) ? NULL : s;
}

/* CU_STREAM_NON_BLOCKING, hipStreamNonBlocking: both 1. */
void *vendor_stream_create_nonblocking(void)
{
    void *s = NULL;
    if (is_cuda) return cu_stream_create(&s, 1) ? NULL : s;
    return hip_stream_create_with_flags(&s, 1) ? NULL : s;
}

bool vendor_dtoh_on(void *dst, const void *src, size_t bytes, void *s)
{
    bool queued = is_cuda ? cu_dtoh_async(dst, (unsigned long long)(uintptr_t)src, bytes, s) == 0
                          : hip_memcpy_async(dst, src, bytes, 2, s) == 0;
    return queued && vendor_stream_sync(s);
}

void vendor_stream_destroy(void *s)
{
    if (is_cuda) cu_stream_destroy(s);
    else hip_stream_destroy(s);
}

bool vendor_fill32_async(void *dst, uint32_t value, size_t n, void *s)
{
    return is_cuda ? cu_memset32_async((unsigned long long)(uintptr_t)dst, value, n, s) == 0
                   : hip_memset32_async(dst, (int)value, n, s) == 0;
}

bool vendor_stream_sync(void *s) { return is_cuda ? cu_stream_sync(s) == 0 : hip_stream_sync(s) == 0; }

bool vendor_has_contexts(void) { return is_cuda; }

void *vendor_context_get(void)
{
    void *c = NULL;
    return is_cuda && cu_ctx_get(&c) == 0 ? c : NULL;
}

bool vendor_context_set(void *ctx) { return is_cuda && cu_ctx_set(ctx) == 0; }

void *vendor_context_create(void)
{
    void *c = NULL;
    return is_cuda && cu_ctx_create(&c, 0, cu_dev) == 0 ? c : NULL;
}

void vendor_context_destroy(void *ctx)
{
    if (is_cuda && ctx) cu_ctx_destroy(ctx);
}

int vendor_hip_device_count(void)
{
    int n = -1;
    return !is_cuda && hip_get_device_count && hip_get_device_count(&n) == 0 ? n : -1;
}

int vendor_hip_device(void)
{
    int d = -1;
    return !is_cuda && hip_get_device && hip_get_device(&d) == 0 ? d : -1;
}

bool vendor_hip_set_device(int ordinal) { return !is_cuda && hip_set_device && hip_set_device(ordinal) == 0; }
