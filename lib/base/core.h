/* core.h — private helpers shared by the core, the trace and the backends:
 * error reporting, compile logs, argument checks, environment, hashing,
 * clock, option splitting, strings, embedded sources and the prelude.
 * Nothing here takes a lock a caller could hold, or calls anything above
 * these helpers (ci/check-layers.py). */
#ifndef AMP_CORE_H
#define AMP_CORE_H

#include "hipamp.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

/* ------------------------------------------------ errors (lib/base/status.c) */

/* Set the calling thread's error message (printf format) and return s.
 * The message buffer is allocated on a thread's first failure and grows to
 * fit (compiler logs); past 1 MiB it is truncated with a note. A thread that
 * never fails costs nothing. */
amp_status amp__fail(amp_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
amp_status amp__failv(amp_status s, const char *fmt, va_list ap);

/* ------------------------------------------ compile logs (lib/base/compile_log.c) */

/* A compile log's refusal of a kernel parameter type by the prelude
 * (kernel_parameter<__amp_Position, __amp_T>), in clang's form (hipRTC,
 * the host compiler: "kernel_parameter<1, float *>") or EDG's (NVRTC:
 * "... [with __amp_Position=1, __amp_T=float *]", and the names without
 * __amp_ of older preludes): true with
 * the position and the type's text inside log. */
bool amp__log_param_refusal(const char *log, long *position, const char **type, int *type_len);
/* After a failed compile (st == AMP_ERROR_COMPILE): when the log (the
 * thread's last error) holds such a refusal, put the position and type on
 * its first line, the log below; when it holds the prelude's refusal of an
 * argument pack over AMP__MAX_PACK (kernel_parameter_bytes<N>), the
 * kernel's name and N. Anything else is left as it is. */
void amp__compile_log_summarize(amp_status st);

/* ------------------------------------------- checks and memory (lib/base/status.c) */

/* Return AMP_ERROR_INVALID_ARGUMENT naming the calling function and the
 * expression when p is NULL. For the out-parameter, clear it first with
 * AMP__CLEAR_OUT so that a failure leaves it NULL/zero. */
#define AMP__NOT_NULL(p)                                                                      \
    do {                                                                                      \
        if (!(p)) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", __func__, #p); \
    } while (0)
#define AMP__CLEAR_OUT(out)                             \
    do {                                                \
        if (out) memset((out), 0, sizeof *(out));       \
    } while (0)

/* Duplicate a string with malloc (NULL on failure). */
char *amp__strdup(const char *s);
/* Zeroed memory that starts on a cache line (64 bytes), freed with free():
 * for what the launch path reads, so that a structure's first line holds
 * what the launch needs. NULL on failure. */
void *amp__calloc_lines(size_t size);

/* -------------------------------------------------- environment (lib/base/env.c) */

/* getenv that treats "" as unset. */
const char *amp__env(const char *name);
/* The readers below fall back to dflt on a malformed or out-of-range value
 * and say so on stderr, once for each variable and value: its name, the
 * value, what is accepted and the default used (or that it is ignored,
 * where dflt is outside the accepted range: the caller's own default). */
/* "1", "on", "yes", "true" -> true; "0", "off", "no", "false" -> false; unset
 * -> dflt; anything else -> dflt, said. */
bool amp__env_flag(const char *name, bool dflt);
/* A whole number in lo..hi (decimal digits after optional blanks and '+'; a
 * '-' never); unset -> dflt; malformed or out of range -> dflt, said. */
unsigned amp__env_uint(const char *name, unsigned dflt, unsigned lo, unsigned hi);
/* A whole number in 1..max (seconds, threads); unset -> dflt; malformed ->
 * dflt, said. */
unsigned amp__env_count(const char *name, unsigned dflt, unsigned max);
/* AMP_COMPILE_TIMEOUT: seconds a build may take (default 600, 1..86400). */
unsigned amp__compile_timeout_s(void);
/* fn(arg), run on a thread of the library's own with a stack of at least
 * 8 MiB (the stack limit where that is larger, to 256 MiB), joined before
 * it returns: for vendor code whose stack use is not hipamp's to bound (the
 * GPU compilers, the drivers' start). The thread takes no asynchronous
 * signals, and the caller is not cancelled while it waits. Where no thread
 * can be made (thread or memory limits; 8 MiB is tried after a larger
 * size) fn runs on the caller's thread, and false is returned. fn must not
 * need the caller's thread-local state. Blocks until fn returns. */
bool amp__on_big_stack(void *(*fn)(void *), void *arg);
/* A size with an optional K/M/G (KiB, MiB...) suffix in [lo, hi]; unset ->
 * dflt; malformed -> dflt, said. */
unsigned long long amp__env_size(const char *name, unsigned long long dflt, unsigned long long lo,
                                 unsigned long long hi);
/* One of n words (case aside), its index; unset -> dflt; anything else ->
 * dflt, said with the words listed (words[dflt] named as the default). */
int amp__env_word(const char *name, const char *const *words, int n, int dflt);
/* A flag or "auto": 1 / 0 as amp__env_flag reads them; unset or "auto" ->
 * -1; anything else -> -1, said. */
int amp__env_flag_or_auto(const char *name);
/* A value the caller read but cannot use where it is (a rule of its own, a
 * range per kind of accelerator): "hipamp: NAME="VALUE" is not ACCEPTED
 * WHERE; using the default there, DFLT", once for each variable, value and
 * where (a value one accelerator takes and another refuses is said for the
 * one only). */
void amp__env_refused(const char *name, const char *where, const char *accepted, const char *dflt);

/* ------------------------------------------------------ the process's CPUs (lib/base/cpus.c) */

/* The CPUs this process may run on (its affinity mask), at least 1. */
int amp__usable_cpus(void);
/* The compiler workers one build may use: env_name's value where it is a
 * whole number in 1..max; else (unset, malformed, out of range) the usable
 * CPUs, at most max. */
int amp__compile_jobs(const char *env_name, int max);
/* Bytes of last-level cache the usable CPUs have: each distinct cache
 * counted once (sysfs; sysconf's L3 else), 0 where the system does not
 * say. Reads sysfs on the first call only. Thread-safe. */
uint64_t amp__llc_bytes(void);
/* The same read from cpu_dir (a tree laid out as /sys/devices/system/cpu)
 * for the n CPUs numbered in cpus[], without sysconf's fallback: for tests. */
uint64_t amp__llc_bytes_in(const char *cpu_dir, const int *cpus, int n);

/* ------------------------------------------------------ planted links (lib/base/planted.c) */

struct stat;
/* Why another user could have put a symbolic link owned by link_uid in the
 * directory dir (its fstat), in why (n bytes), which is returned; NULL when
 * no one else could have: dir is this user's or root's and no group or
 * other may write it, or it is sticky and the link is this user's or dir's
 * owner's. */
const char *amp__link_planted(const struct stat *dir, uid_t link_uid, char *why, size_t n);

/* ------------------------------------------------------ whole reads and writes (lib/base/fdio.c) */

/* n bytes read from (at off: pread) or written to fd, EINTR retried; false
 * on an error or an early end of file. */
bool amp__fd_read_all(int fd, void *buf, size_t n);
bool amp__fd_pread_all(int fd, void *buf, size_t n, uint64_t off);
bool amp__fd_write_all(int fd, const void *buf, size_t n);
/* The kernel file at path read whole into *text (NUL-terminated, *size
 * bytes: at most 64 MiB, no NUL byte) and the absolute directory its quoted
 * includes resolve from into *dir, both malloc'ed (the caller frees).
 * AMP_ERROR_INVALID_ARGUMENT naming path: not openable, no regular file (a
 * FIFO, not waited on), too big, a NUL byte, unreadable;
 * AMP_ERROR_OUT_OF_MEMORY. Outputs NULL and 0 on failure. */
amp_status amp__read_kernel_file(const char *path, char **text, size_t *size, char **dir);

/* ------------------------------------------------------ hashing (lib/base/hash.c) */

/* SHA-256 (OpenSSL's libcrypto) over a sequence of fields. Each field is
 * framed by its length, so ("ab","c") and ("a","bc") differ. */
typedef struct amp__sha256 amp__sha256;
amp__sha256 *amp__sha256_new(void);
void amp__sha256_field(amp__sha256 *h, const void *data, size_t n);
void amp__sha256_str(amp__sha256 *h, const char *s); /* NULL hashes as a distinct empty field */
/* Writes 32 bytes and frees h. false: libcrypto failed (a field's update
 * or the final step); out is then zeros, which is no digest: the caller
 * must not use it as a key (a build is then uncacheable). */
bool amp__sha256_final(amp__sha256 *h, uint8_t out[32]);
/* HMAC-SHA256 of the concatenation of two buffers under key (32 bytes). */
bool amp__hmac_sha256(const uint8_t key[32], const void *a, size_t na, const void *b, size_t nb, uint8_t out[32]);
/* Whether libcrypto computes SHA-256 and HMAC-SHA256 here (a configuration
 * with only OpenSSL's base provider does not); else why (n bytes). */
bool amp__crypto_usable(char *why, size_t n);
/* Fill buf with n bytes from the kernel's random source. */
bool amp__random_bytes(void *buf, size_t n);
/* Lowercase hex of n bytes into out (2n + 1 bytes). */
void amp__hex(const uint8_t *in, size_t n, char *out);
/* A fast non-cryptographic 64-bit hash (bucket choice only; never trust it
 * for equality or against an adversary). Chainable: seed with 0. */
uint64_t amp__fast_hash(uint64_t seed, const void *data, size_t n);
/* 64-bit FNV-1a, chainable (seed with AMP__FNV_SEED); for tags only. */
#define AMP__FNV_SEED 0xcbf29ce484222325ULL
uint64_t amp__fnv1a(uint64_t h, const void *data, size_t n);

/* ------------------------------------------------------ pools (lib/base/slab.c) */

/* Fixed-size objects (64-byte aligned) from slabs that give their pages back
 * when all their objects are free; an object's memory is never handed to
 * malloc, so it stays readable after amp__slab_free. Thread-safe (the pool's
 * lock is a leaf) and fork-safe (fork waits for no pool lock to be held). */
typedef struct amp__slab amp__slab;
typedef struct amp__slab_pool {
    pthread_mutex_t mu;
    size_t size;           /* bytes per object: a multiple of 64, at most 32 KiB */
    amp__slab *avail;      /* slabs with a free object */
    void *fresh;           /* slabs of the last group not used yet */
    size_t nfresh;
    size_t empty_resident; /* slabs with no object whose pages are kept */
    struct amp__slab_pool *next_pool; /* pools in use, for fork (lib/base/slab.c) */
    bool known;
} amp__slab_pool;
#define AMP__SLAB_POOL(bytes) {PTHREAD_MUTEX_INITIALIZER, ((bytes) + 63) / 64 * 64, NULL, NULL, 0, 0, NULL, false}
/* An object (its bytes as the last user left them, or zero); NULL without
 * memory. */
void *amp__slab_alloc(amp__slab_pool *p);
/* Back to the pool, for reuse. */
void amp__slab_free(amp__slab_pool *p, void *obj);
/* Back to the pool, never to be reused (its memory stays readable). */
void amp__slab_retire(amp__slab_pool *p, void *obj);

/* -------------------------------------------------------- clock (lib/base/clock.c) */

/* Monotonic clock in nanoseconds. */
uint64_t amp__now_ns(void);

/* ------------------------------------------------- options (lib/base/options.c) */

/* Split options on whitespace (no quoting) into argv-style pointers inside
 * a malloc'ed copy. Slots [0, nfixed) of *argv are left for the caller's own
 * flags, and nextra more slots after the words (plus a NULL terminator) are
 * allocated for flags that must come last. *argc counts nfixed + words. The
 * caller frees *argv and *storage. */
amp_status amp__split_options(const char *options, size_t nfixed, size_t nextra, char ***argv, size_t *argc,
                              char **storage);

/* AMP_ERROR_INVALID_ARGUMENT (who: the compiler's name in the message) for
 * the first of argv[0, argc) that is neither an option (a word beginning
 * '-', "-" alone excepted) nor the value of an option before it named in
 * takes_next (NULL-terminated): a compiler takes such a word as another
 * input file, one the include scan, the caches' keys and the check of what
 * the compiler read never see (its edits would go unseen). AMP_OK else. */
amp_status amp__options_refuse_inputs(const char *who, char *const *argv, size_t argc,
                                      const char *const *takes_next);

/* ------------------------------------------------ strings (lib/base/strbuf.c) */

/* A growable string, always NUL-terminated once something was put: start
 * from {0}, free p. A failed allocation sets oom and later puts do nothing,
 * so a builder checks once at the end. */
typedef struct amp__sb {
    char *p;
    size_t n, cap;
    bool oom;
} amp__sb;
void amp__sb_put(amp__sb *b, const char *s, size_t n);
void amp__sb_puts(amp__sb *b, const char *s);
void amp__sb_printf(amp__sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* full into dst (cap > 80 bytes): whole where it fits; else its first
 * part and ";sha256=" with the digest of the whole, so that tags that
 * differ only past the cut (a long environment value) still differ. */
void amp__fit_tag(char *dst, size_t cap, const char *full);
/* full into dst (cap >= 96 bytes) for a person to read: whole where it
 * fits; else its start, " [... N bytes cut ...] " and its end, which is
 * kept longer (a message's last words say what went wrong, a long path
 * before them). */
void amp__fit_text(char *dst, size_t cap, const char *full);

/* -------------------------------------------------- sources (lib/base/prelude.c) */

/* Embedded device sources (generated at build time from hip_kernels/). */
extern const char amp__embedded_prelude[];
extern const char amp__embedded_cpu_prelude[];
extern const char amp__embedded_device_lib[]; /* hip_kernels/amp_device_lib.hip */
extern const char amp__embedded_cpu_device[]; /* hip_kernels/amp_cpu_device.hpp */

/* The user's source file name in diagnostics when none is given. */
#define AMP__SOURCE_NAME "kernel.hip"
/* prefix (may be NULL) + common prelude + user source, each after a #line
 * naming it (source_name NULL: AMP__SOURCE_NAME). malloc'ed; NULL on no
 * memory. *len (may be NULL) gets the length. */
char *amp__prelude_assemble(const char *prefix, const char *source, const char *source_name, size_t *len);
/* The same without the device library (hip_kernels/amp_device_lib.hip) and
 * with no prefix: what a GPU build whose text names nothing of it
 * (amp__device_lib_wanted) compiles (amp__compile_on_demand). */
char *amp__prelude_assemble_lean(const char *source, const char *source_name, size_t *len);
/* Whether text[0, len) names something only the device library declares
 * (an identifier token, comments and strings included: a false yes costs
 * nothing but the parse): its vector types (amp::float_4, float4,
 * make_int2, norm), atomics, math namespaces, classification macros. */
bool amp__device_lib_wanted(const char *text, size_t len);
/* A character of a C/C++ identifier (ASCII letters, digits, '_'), for the
 * scanners of kernel text (include scan, trace labels, the device library's
 * names). */
static inline bool amp__ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
/* One compile of an assembled unit, for amp__compile_on_demand. */
typedef amp_status (*amp__unit_compile_fn)(void *ctx, const char *unit, size_t len);
/* Assembles source (after prefix and the prelude) and compiles it with fn:
 * when lean (a GPU build whose text names nothing of the device library:
 * amp__unit_wants_device_lib), without the library and the prefix first,
 * then, should that fail with AMP_ERROR_COMPILE, with them; the last
 * compile's status and message are the call's. Blocks for the compiles;
 * returns fn's status or AMP_ERROR_OUT_OF_MEMORY. */
amp_status amp__compile_on_demand(bool lean, const char *prefix, const char *source, const char *source_name,
                                  amp__unit_compile_fn fn, void *ctx);
/* Where the user's own text starts in an assembled unit: after the common
 * prelude and, where the unit holds it, the device library; 0 when the
 * prelude is not found. */
size_t amp__unit_library_end(const char *unit);
/* How many AMP_KERNEL and AMP_TILED_KERNEL identifier tokens text[0, len)
 * holds, at most cap: the kernels it defines, counting a macro that defines
 * several (or a comment naming one) as one. */
int amp__kernel_macro_count(const char *text, size_t len, int cap);
/* Whether text[0, len) (may be NULL) defines a kernel named name (name_len
 * bytes): AMP_KERNEL or AMP_TILED_KERNEL, '(', the name, ','. */
bool amp__kernel_macro_defines(const char *text, size_t len, const char *name, size_t name_len);
/* "\n#line 1 \"name\"\n" with '"' and '\\' in name escaped, written to out
 * (NULL: only counted); returns its length. */
size_t amp__line_marker(char *out, const char *name);
/* A UTF-8 byte-order mark at the start of text (NUL-terminated) written
 * as three spaces: a compiler skips one only at the start of a file, and
 * a source or header follows a #line marker in the unit it sees (the
 * offsets of the rest stay as they were). */
void amp__blank_bom(char *text);

#endif /* AMP_CORE_H */
