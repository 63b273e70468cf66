/* core.h — private helpers shared by the core and the backends: error
 * reporting, environment, hashing, embedded sources, locking wrappers. */
#ifndef AMP_CORE_H
#define AMP_CORE_H

#include "hipamp.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Set the calling thread's error message (printf format) and return s.
 * Messages longer than the buffer (64 KiB, enough for compiler logs) are
 * truncated with a note. */
amp_status amp__fail(amp_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
amp_status amp__failv(amp_status s, const char *fmt, va_list ap);
/* Append to the current message (used to add compiler logs). */
void amp__append_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* getenv that treats "" as unset. */
const char *amp__env(const char *name);
/* Environment flag: "1", "on", "yes", "true" -> true. */
bool amp__env_flag(const char *name);

/* 64-bit FNV-1a, chainable (seed with AMP__FNV_SEED). */
#define AMP__FNV_SEED 0xcbf29ce484222325ULL
uint64_t amp__fnv1a(uint64_t h, const void *data, size_t n);

/* Embedded device sources (generated at build time from hip_kernels/). */
extern const char amp__embedded_prelude[];
extern const char amp__embedded_cpu_prelude[];
extern const char amp__embedded_device_lib[]; /* hip_kernels/amp_device_lib.hip */
extern const char amp__embedded_cpu_device[]; /* hip_kernels/amp_cpu_device.hpp */

/* Default on-disk cache lookup/store, shared by every backend's builds.
 * key: 32 hex chars. Load returns malloc'ed bytes or NULL (miss, or a
 * corrupt/truncated entry, which is deleted). Store is atomic (temp file +
 * rename); failures are silent (the cache is an optimisation). */
void *amp__disk_cache_load(const char *key, size_t *size);
void amp__disk_cache_store(const char *key, const void *data, size_t size);

/* Split options on whitespace (no quoting) into argv-style pointers inside
 * a malloc'ed copy. Slots [0, nfixed) of *argv are left for the caller's own
 * flags, and nextra more slots after the words (plus a NULL terminator) are
 * allocated for flags that must come last. *argc counts nfixed + words. The
 * caller frees *argv and *storage. */
amp_status amp__split_options(const char *options, size_t nfixed, size_t nextra, char ***argv, size_t *argc,
                              char **storage);

/* The user's source file name in diagnostics when none is given. */
#define AMP__SOURCE_NAME "kernel.hip"
/* lib/prelude.c: prefix (may be NULL) + common prelude + user source, each
 * after a #line naming it (source_name NULL: AMP__SOURCE_NAME). malloc'ed;
 * NULL on no memory. *len (may be NULL) gets the length. */
char *amp__prelude_assemble(const char *prefix, const char *source, const char *source_name, size_t *len);

/* Monotonic clock in nanoseconds. */
uint64_t amp__now_ns(void);

/* Duplicate a string with malloc (NULL on failure). */
char *amp__strdup(const char *s);

#endif /* AMP_CORE_H */
