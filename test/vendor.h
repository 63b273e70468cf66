/* vendor.h — the few vendor-runtime calls the interop tests make themselves (as a user's own HIP or CUDA code would), loaded with dlopen so the tests build without any SDK: allocate, copy, fill on a stream, make a stream. */
#ifndef HIPAMP_TEST_VENDOR_H
#define HIPAMP_TEST_VENDOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* For the accelerator at device_path ("cuda:N" or "hip:N"): false (with a
 * reason) when its runtime cannot be loaded. Makes the device current. */
bool vendor_open(const char *device_path, char *why, size_t n);
void *vendor_malloc(size_t bytes);
void vendor_free(void *p);
/* Host memory registered (pinned, mapped) the vendor's way, as another
 * library would; true on success. */
bool vendor_host_register(void *p, size_t bytes);
void vendor_host_unregister(void *p);
/* The device's address of host memory vendor_host_register mapped; NULL
 * when the runtime gives none. */
void *vendor_host_device_pointer(void *p);
bool vendor_htod(void *dst, const void *src, size_t bytes);
bool vendor_dtoh(void *dst, const void *src, size_t bytes);
void *vendor_stream_create(void);
/* A stream that waits for no other (not even the legacy default stream). */
void *vendor_stream_create_nonblocking(void);
/* dst <- src queued on stream s, then s synchronized: a copy ordered after
 * nothing but s's own work. */
bool vendor_dtoh_on(void *dst, const void *src, size_t bytes, void *s);
void vendor_stream_destroy(void *s);
/* Fill n 32-bit words with value, queued on stream s. */
bool vendor_fill32_async(void *dst, uint32_t value, size_t n, void *s);
bool vendor_stream_sync(void *s);
/* The calling thread's current CUDA context (these four: CUDA only; false
 * or NULL for HIP, whose devices are not contexts the caller creates). */
bool vendor_has_contexts(void);
void *vendor_context_get(void);
bool vendor_context_set(void *ctx);
/* A new context on the opened device, made current (NULL on failure). */
void *vendor_context_create(void);
void vendor_context_destroy(void *ctx);
/* HIP only (-1 / false for CUDA): the number of devices, the calling
 * thread's current device, and making one current. */
int vendor_hip_device_count(void);
int vendor_hip_device(void);
bool vendor_hip_set_device(int ordinal);

#endif
