/* prebuilt.c — packs of the built-in algorithms' code objects compiled when the library was built (one file per target, <libdir>/hipamp/prebuilt-<version>/<target>.hpk): finding and checking them, reading an entry for a build, and writing a pack (hipamp-prebuild).
 *
 * A pack holds code this process loads and runs, so it is held to the disk
 * cache's rules without the disk cache's key (install data has no secret):
 *  - the directory and every directory above it, and the pack itself, must
 *    belong to root, to us, or to the owner of the library file we were
 *    loaded from (who could change our code anyway), and be writable by
 *    nobody else (a directory with the sticky bit, like /tmp, excepted:
 *    others cannot rename what is ours in it); the pack is opened with
 *    O_NOFOLLOW relative to the checked directory's descriptor;
 *  - the header names the format, the library version and the target: a
 *    pack of another version or target is refused as a whole;
 *  - the index is covered by a SHA-256 digest in the header, and every
 *    entry by its own, checked when it is read: a corrupt entry is refused
 *    and its program compiled as if there were none.
 * Nothing here is an error to the caller: a refused pack or entry is
 * counted, its reason kept for amp_prebuilt_get_info, and the build goes
 * on through the disk cache and the compiler.
 *
 * An entry's key is a SHA-256 over the library version, the back end, the
 * target, the prelude texts and the program's source and options
 * (amp__prebuilt_key): a program whose source differs in any way (a tuning
 * knob set in the environment) finds no entry and is compiled. A CPU pack
 * also holds one entry of a backend's own data, the CPU accelerator's
 * precompiled header, under that backend's key (a hash over a domain name
 * of its own: lib/cpu/cpu_pch.c), read with amp__prebuilt_load_data.
 *
 * Lock order: amp__pb_lock is a leaf (nothing is called into under it but
 * the opening of a pack: its header and index read and checked). An open
 * pack (descriptor, index) is never changed or closed again, so entries
 * are read and checked without the lock. */
#include "internal.h"
#include "base/fork_guard.h"
#include "base/trusted_path.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hipamp_version.h"

#define AMP__PACK_MAGIC "HIPAMPK1"
#define AMP__PACK_FORMAT 1u
#define AMP__PACK_MAX_ENTRIES 65536u
#define AMP__PACK_MAX_TARGETS 16

typedef struct amp__pack_header {
    char magic[8];
    uint32_t format;
    uint32_t count;
    char version[32];
    char target[64];
    uint8_t index_digest[32]; /* SHA-256 of the index (count entries) */
} amp__pack_header;

typedef struct amp__pack_entry {
    uint8_t key[32];
    uint64_t offset; /* from the file's start */
    uint64_t size;
    uint8_t digest[32]; /* SHA-256 of the payload */
} amp__pack_entry;

_Static_assert(sizeof(amp__pack_header) == 144, "pack header layout");
_Static_assert(sizeof(amp__pack_entry) == 80, "pack entry layout");

typedef struct amp__pack {
    char target[64];
    int fd;                  /* -1: no pack (or refused) */
    uint32_t count;
    amp__pack_entry *index;  /* sorted by key */
} amp__pack;

static pthread_once_t amp__pb_once = PTHREAD_ONCE_INIT;
/* A leaf (a pack's open and index read happen under it), taken across
 * fork() (base/fork_guard.h). */
AMP__FORK_GUARDED_MUTEX(amp__pb_lock)
static bool amp__pb_on;
static int amp__pb_dirfd = -1;
static char amp__pb_dir[PATH_MAX];
static char amp__pb_reason[PATH_MAX + 512]; /* guarded by amp__pb_lock after init */
static amp__pack amp__pb_packs[AMP__PACK_MAX_TARGETS];
static int amp__pb_npacks;
static _Atomic uint64_t amp__pb_hits, amp__pb_misses, amp__pb_rejected;
static amp__prebuilt_capture_fn amp__pb_capture;

/* ------------------------------------------------------------------ keys */

void amp__prebuilt_key(const char *backend, const char *target, const char *prefix, const char *source,
                       size_t source_len, const char *options, uint8_t key[32])
{
    memset(key, 0, 32);
    amp__sha256 *h = amp__sha256_new();
    if (!h) return; /* an all-zero key matches no entry a writer made */
    amp__sha256_str(h, "hipamp prebuilt key v1");
    amp__sha256_str(h, HIPAMP_VERSION_STRING);
    amp__sha256_str(h, backend);
    amp__sha256_str(h, target);
    amp__sha256_str(h, prefix);
    amp__sha256_str(h, amp__embedded_prelude);
    amp__sha256_str(h, amp__embedded_cpu_device);
    amp__sha256_str(h, amp__embedded_device_lib);
    amp__sha256_field(h, source, source_len);
    amp__sha256_str(h, options);
    (void)amp__sha256_final(h, key); /* zeros where it failed: as above */
}

/* ------------------------------------------------------------ trust */

static uid_t amp__pb_lib_owner = (uid_t)-1; /* the owner of the library file; -1: unknown */

/* This user is not trusted in a set-uid, set-gid or file-capability
 * program that runs as whoever started it (AT_SECURE with euid the real
 * uid): what they own is theirs to change (amp__trust_init's rule). */
static bool amp__pb_trusted_owner(uid_t u)
{
    bool me = u == geteuid() && (!getauxval(AT_SECURE) || geteuid() != getuid());
    return u == 0 || me || u == amp__pb_lib_owner;
}

/* What is wrong with a directory or pack of these attributes (NULL: nothing). */
static const char *amp__pb_problem(const struct stat *sb, bool dir)
{
    if (dir ? !S_ISDIR(sb->st_mode) : !S_ISREG(sb->st_mode)) return dir ? "not a directory" : "not a regular file";
    if (!amp__pb_trusted_owner(sb->st_uid)) return "owned by another user";
    if ((sb->st_mode & (S_IWGRP | S_IWOTH)) && !(dir && (sb->st_mode & S_ISVTX))) return "writable by others";
    return NULL;
}

static void amp__pb_set_reason(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void amp__pb_set_reason(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(amp__pb_reason, sizeof amp__pb_reason, fmt, ap);
    va_end(ap);
}

static bool amp__pb_dir_judge(const struct stat *sb, void *ctx, char *what, size_t n)
{
    (void)ctx;
    const char *why = amp__pb_problem(sb, true);
    if (why) snprintf(what, n, "%s", why);
    return !why;
}

/* Every directory from / down to real (resolved) must pass amp__pb_problem;
 * false with the reason in why (size bytes) otherwise. */
static bool amp__pb_check_dirs(const char *real, char *why_out, size_t size)
{
    char dir[PATH_MAX], why[128];
    if (amp__ancestors_pass(real, true, amp__pb_dir_judge, NULL, dir, sizeof dir, why, sizeof why)) return true;
    /* A message cut at size bytes is still the message. */
    if (snprintf(why_out, size, "prebuilt directory %s not used: %s is %s", real, dir, why) >= (int)size)
        why_out[size - 1] = '\0';
    return false;
}

static void amp__pb_init(void)
{
    const char *flag = amp__env("AMP_PREBUILT");
    if (flag && (!strcmp(flag, "0") || !strcmp(flag, "off") || !strcmp(flag, "none"))) {
        amp__pb_set_reason("disabled by AMP_PREBUILT=%s", flag);
        return;
    }
    if (flag && strcmp(flag, "1") && strcmp(flag, "on")) {
        amp__pb_set_reason("AMP_PREBUILT=%s is not understood (0 or 1): prebuilt programs not used", flag);
        return;
    }
    /* The library's own file: dladdr's name when it is absolute. For a
     * program linked with the static library the name is the program's as
     * typed (argv[0], perhaps a bare name resolved nowhere but the current
     * directory, which another user may own): the kernel's own link to the
     * executable stands in for it. */
    Dl_info info;
    memset(&info, 0, sizeof info);
    char lib[PATH_MAX] = "";
    if (dladdr((void *)amp__prebuilt_key, &info) && info.dli_fname) {
        if (info.dli_fname[0] == '/') {
            if (!realpath(info.dli_fname, lib)) lib[0] = 0;
        } else if (!realpath("/proc/self/exe", lib)) {
            lib[0] = 0;
        }
        struct stat sb;
        if (lib[0] && stat(lib, &sb) == 0) amp__pb_lib_owner = sb.st_uid;
    }
    const char *dir = amp__env("AMP_PREBUILT_DIR");
    char real[PATH_MAX];
    if (dir) {
        /* A path cut short would name another directory. */
        if ((size_t)snprintf(amp__pb_dir, sizeof amp__pb_dir, "%s", dir) >= sizeof amp__pb_dir) {
            amp__pb_set_reason("AMP_PREBUILT_DIR is %zu bytes long, longer than a path can be (%zu)", strlen(dir),
                               sizeof amp__pb_dir - 1);
            amp__pb_dir[0] = 0;
            return;
        }
    } else {
        /* Beside the library, else where it was installed (a program
         * linked with the static library runs from its own directory). */
        if (lib[0]) {
            char *slash = strrchr(lib, '/');
            if (slash) *slash = 0;
            if ((size_t)snprintf(amp__pb_dir, sizeof amp__pb_dir, "%s/hipamp/prebuilt-%s", lib,
                                 HIPAMP_VERSION_STRING) >= sizeof amp__pb_dir)
                lib[0] = amp__pb_dir[0] = 0; /* too long a path: not beside the library */
        }
#ifdef HIPAMP_INSTALL_LIBDIR
        if (!lib[0] || !realpath(amp__pb_dir, real))
            snprintf(amp__pb_dir, sizeof amp__pb_dir, "%s/hipamp/prebuilt-%s", HIPAMP_INSTALL_LIBDIR,
                     HIPAMP_VERSION_STRING);
#endif
        if (!amp__pb_dir[0]) {
            amp__pb_set_reason("the library's own file could not be found (dladdr), and AMP_PREBUILT_DIR is unset");
            return;
        }
    }
    if (!realpath(amp__pb_dir, real)) {
        amp__pb_set_reason("no prebuilt directory %s (%s)", amp__pb_dir, strerror(errno));
        return;
    }
    if (!amp__pb_check_dirs(real, amp__pb_reason, sizeof amp__pb_reason)) return;
    int fd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat sb;
    const char *why = fd < 0 ? strerror(errno) : fstat(fd, &sb) != 0 ? strerror(errno) : amp__pb_problem(&sb, true);
    if (why) {
        amp__pb_set_reason("prebuilt directory %s not used: %s", real, why);
        if (fd >= 0) close(fd);
        return;
    }
    amp__pb_dirfd = fd;
    amp__pb_on = true;
}

bool amp__prebuilt_enabled(void)
{
    pthread_once(&amp__pb_once, amp__pb_init);
    return amp__pb_on;
}

/* ------------------------------------------------------------ reading */

static int amp__entry_cmp(const void *a, const void *b) { return memcmp(a, b, 32); }

/* Whether target is a name a pack may have (no path, no dot first). */
static bool amp__pb_name_ok(const char *t)
{
    size_t n = strlen(t);
    if (n == 0 || n >= 64 || t[0] == '.') return false;
    for (size_t i = 0; i < n; ++i)
        if (!((t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' && t[i] <= 'Z') || (t[i] >= '0' && t[i] <= '9') ||
              t[i] == '_' || t[i] == '-'))
            return false;
    return true;
}

/* Open and check target's pack in the directory dirfd (named dir in
 * messages) into p. p->fd stays -1 when there is none (why "") or it is
 * refused (why says so). */
static void amp__pb_open(int dirfd, const char *dir, const char *target, amp__pack *p, char *why_out, size_t wsize)
{
    snprintf(p->target, sizeof p->target, "%s", target);
    p->fd = -1;
    why_out[0] = 0;
    char name[80];
    snprintf(name, sizeof name, "%s.hpk", target);
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        /* O_NOFOLLOW's ELOOP and a socket's ENXIO say what is there, not
         * what went wrong: strerror's "Too many levels of symbolic links"
         * or "No such device or address" would send the reader astray. */
        int e = errno;
        if (e != ENOENT)
            snprintf(why_out, wsize, "prebuilt pack %s/%s refused: %s", dir, name,
                     e == ELOOP ? "a symbolic link" : e == ENXIO ? "a socket" : strerror(e));
        return;
    }
    amp__pack_header h;
    struct stat sb;
    const char *why = fstat(fd, &sb) != 0 ? strerror(errno) : amp__pb_problem(&sb, false);
    char detail[256] = "";
    /* In a directory others may write (sticky), a second name of a file is
     * one anyone there could have made for a file of ours or root's: not
     * the pack installed here. (In a directory only its owner writes, hard
     * links are an installer's: a store that shares identical files.) */
    struct stat ds;
    if (!why && sb.st_nlink > 1 && (fstat(dirfd, &ds) != 0 || (ds.st_mode & (S_IWGRP | S_IWOTH))))
        why = "a hard link (a file with another name elsewhere), in a directory others may write";
    if (!why && (uint64_t)sb.st_size < sizeof h) {
        snprintf(detail, sizeof detail, "shorter than a pack's header (%lld bytes, not %zu)", (long long)sb.st_size,
                 sizeof h);
        why = detail;
    }
    if (!why && !amp__fd_pread_all(fd, &h, sizeof h, 0)) why = "unreadable";
    if (!why && memcmp(h.magic, AMP__PACK_MAGIC, 8)) why = "not a hipamp prebuilt pack (bad magic)";
    if (!why && h.format != AMP__PACK_FORMAT) {
        snprintf(detail, sizeof detail, "pack format %u, this library reads %u", h.format, AMP__PACK_FORMAT);
        why = detail;
    }
    if (!why && (memchr(h.version, 0, sizeof h.version) == NULL || strcmp(h.version, HIPAMP_VERSION_STRING))) {
        snprintf(detail, sizeof detail, "built for hipamp %.31s, this library is %s",
                 memchr(h.version, 0, sizeof h.version) ? h.version : "(unterminated)", HIPAMP_VERSION_STRING);
        why = detail;
    }
    if (!why && (memchr(h.target, 0, sizeof h.target) == NULL || strcmp(h.target, target))) {
        snprintf(detail, sizeof detail, "built for target %.63s, not %s",
                 memchr(h.target, 0, sizeof h.target) ? h.target : "(unterminated)", target);
        why = detail;
    }
    if (!why && h.count > AMP__PACK_MAX_ENTRIES) {
        snprintf(detail, sizeof detail, "%u entries, more than a pack holds (%u)", h.count, AMP__PACK_MAX_ENTRIES);
        why = detail;
    }
    amp__pack_entry *idx = NULL;
    size_t isize = why ? 0 : (size_t)h.count * sizeof *idx;
    if (!why && (uint64_t)sb.st_size < sizeof h + isize) {
        snprintf(detail, sizeof detail, "truncated (%lld bytes; the index of %u entries ends at %zu)",
                 (long long)sb.st_size, h.count, sizeof h + isize);
        why = detail;
    }
    if (!why && !(idx = malloc(isize ? isize : 1))) why = "no memory for its index";
    if (!why && isize && !amp__fd_pread_all(fd, idx, isize, sizeof h)) why = "unreadable (index)";
    if (!why) {
        uint8_t d[32];
        amp__sha256 *s = amp__sha256_new();
        if (!s) why = "no memory to check its index";
        else {
            amp__sha256_field(s, idx, isize);
            if (!amp__sha256_final(s, d)) why = "not checkable (libcrypto could not finish a SHA-256)";
            else if (memcmp(d, h.index_digest, 32)) why = "corrupt (the index does not match its digest)";
        }
    }
    for (uint32_t i = 0; !why && i < h.count; ++i) {
        const amp__pack_entry *e = &idx[i];
        if (e->size == 0 || e->size > AMP__PACK_ENTRY_MAX) {
            snprintf(detail, sizeof detail, "corrupt (entry %u has %llu bytes; an entry has 1 to %u)", i,
                     (unsigned long long)e->size, AMP__PACK_ENTRY_MAX);
            why = detail;
        } else if (e->offset > (uint64_t)sb.st_size || e->size > (uint64_t)sb.st_size - e->offset) {
            snprintf(detail, sizeof detail, "corrupt (entry %u (offset %llu, %llu bytes) lies outside the file of %lld "
                     "bytes)", i, (unsigned long long)e->offset, (unsigned long long)e->size, (long long)sb.st_size);
            why = detail;
        } else if (i && memcmp(idx[i - 1].key, e->key, 32) >= 0) {
            snprintf(detail, sizeof detail, "corrupt (the index is not sorted at entry %u)", i);
            why = detail;
        }
    }
    if (why) {
        snprintf(why_out, wsize, "prebuilt pack %s/%s refused: %s", dir, name, why);
        free(idx);
        close(fd);
        return;
    }
    p->fd = fd;
    p->count = h.count;
    p->index = idx;
}

/* Whether e's bytes (read into bin) match their digest: NULL, or why not. */
static const char *amp__pb_entry_check(const amp__pack *p, const amp__pack_entry *e, void *bin)
{
    if (!amp__fd_pread_all(p->fd, bin, e->size, e->offset)) return "unreadable";
    uint8_t d[32];
    amp__sha256 *s = amp__sha256_new();
    if (!s) return "no memory to check it";
    amp__sha256_field(s, bin, e->size);
    if (!amp__sha256_final(s, d)) return "not checkable (libcrypto could not finish a SHA-256)";
    return memcmp(d, e->digest, 32) ? "corrupt (its bytes do not match their digest)" : NULL;
}

static amp__pack *amp__pb_pack(const char *target)
{
    for (int i = 0; i < amp__pb_npacks; ++i)
        if (!strcmp(amp__pb_packs[i].target, target)) return &amp__pb_packs[i];
    if (amp__pb_npacks == AMP__PACK_MAX_TARGETS || !amp__pb_name_ok(target)) return NULL;
    amp__pack *p = &amp__pb_packs[amp__pb_npacks++];
    char why[PATH_MAX + 512];
    amp__pb_open(amp__pb_dirfd, amp__pb_dir, target, p, why, sizeof why);
    if (why[0]) {
        snprintf(amp__pb_reason, sizeof amp__pb_reason, "%s", why);
        amp__pb_rejected++;
    }
    return p;
}

/* counted: a program's lookup (amp_prebuilt_get_info's hits and misses);
 * a backend's data (amp__prebuilt_load_data) is not a program. */
static void *amp__pb_load(const char *target, const uint8_t key[32], size_t *size, bool counted)
{
    *size = 0;
    if (!target || !amp__prebuilt_enabled()) return NULL;
    /* The entry is found under the lock and read and checked outside it
     * (up to 64 MiB hashed): a pack, once open, keeps its descriptor and
     * index for the process's life, so threads' first calls do not queue
     * behind each other's reads. */
    pthread_mutex_lock(&amp__pb_lock);
    amp__pack *p = amp__pb_pack(target);
    const amp__pack_entry *e = p && p->fd >= 0 ? bsearch(key, p->index, p->count, sizeof *p->index, amp__entry_cmp) : NULL;
    pthread_mutex_unlock(&amp__pb_lock);
    if (!e) {
        if (counted) amp__pb_misses++;
        return NULL;
    }
    void *bin = malloc(e->size);
    const char *why = bin ? amp__pb_entry_check(p, e, bin) : "no memory";
    if (why) {
        char hex[65];
        amp__hex(key, 8, hex);
        pthread_mutex_lock(&amp__pb_lock);
        amp__pb_set_reason("prebuilt entry %s of %s/%s.hpk refused: %s", hex, amp__pb_dir, target, why);
        pthread_mutex_unlock(&amp__pb_lock);
        amp__pb_rejected++;
        if (counted) amp__pb_misses++;
        free(bin);
        return NULL;
    }
    *size = e->size;
    if (counted) amp__pb_hits++;
    return bin;
}

void *amp__prebuilt_load(const char *target, const uint8_t key[32], size_t *size)
{
    return amp__pb_load(target, key, size, true);
}

void *amp__prebuilt_load_data(const char *target, const uint8_t key[32], size_t *size)
{
    return amp__pb_load(target, key, size, false);
}

void amp__prebuilt_refused(const char *target, const uint8_t key[32], const char *why)
{
    char hex[65];
    amp__hex(key, 8, hex);
    pthread_mutex_lock(&amp__pb_lock);
    amp__pb_set_reason("prebuilt entry %s of %s/%s.hpk refused by the back end: %.300s", hex, amp__pb_dir, target,
                       why);
    pthread_mutex_unlock(&amp__pb_lock);
    amp__pb_hits--;
    amp__pb_misses++;
    amp__pb_rejected++;
}

void amp__prebuilt_set_capture(amp__prebuilt_capture_fn fn) { amp__pb_capture = fn; }

/* A backend's data (the CPU's precompiled header) has a hook of its own:
 * hipamp-prebuild keeps it in whole packs only, not in those of --only.
 * Like amp__pb_capture, set before the tool starts build threads and
 * cleared after they are joined. */
static amp__prebuilt_capture_fn amp__pb_capture_data;

void amp__prebuilt_set_data_capture(amp__prebuilt_capture_fn fn) { amp__pb_capture_data = fn; }

amp__prebuilt_capture_fn amp__prebuilt_data_capture(void) { return amp__pb_capture_data; }

void amp__prebuilt_captured(const char *target, const uint8_t key[32], const void *bin, size_t size)
{
    if (amp__pb_capture) amp__pb_capture(target, key, bin, size);
}

bool amp__prebuilt_is_pack_name(const char *name)
{
    size_t len = strlen(name);
    return len > 4 && !strcmp(name + len - 4, ".hpk") && name[0] != '.';
}

AMP_API amp_status amp_accelerator_get_prebuilt_target(const amp_accelerator *a, const char **out)
{
    if (out) *out = NULL;
    AMP__NOT_NULL(out);
    AMP__ACCEL_OK(a);
    if (a->e.info.is_available && a->e.be->prebuilt_target) *out = a->e.be->prebuilt_target(a->e.dev);
    return AMP_OK;
}

AMP_API amp_status amp_prebuilt_get_info(amp_prebuilt_info *out)
{
    AMP__NOT_NULL(out);
    memset(out, 0, sizeof *out);
    bool on = amp__prebuilt_enabled();
    pthread_mutex_lock(&amp__pb_lock);
    out->enabled = on;
    amp__fit_text(out->dir, sizeof out->dir, amp__pb_dir);
    amp__fit_text(out->reason, sizeof out->reason, amp__pb_reason);
    size_t n = 0;
    for (int i = 0; i < amp__pb_npacks && n < sizeof out->used; ++i)
        if (amp__pb_packs[i].fd >= 0)
            n += (size_t)snprintf(out->used + n, sizeof out->used - n, "%s%s (%u programs)", n ? ", " : "",
                                  amp__pb_packs[i].target, amp__pb_packs[i].count);
    /* A descriptor of its own (a dup would share the read position, and a
     * second listing would find nothing). */
    int fd = on ? openat(amp__pb_dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    pthread_mutex_unlock(&amp__pb_lock);
    out->hits = amp__pb_hits;
    out->misses = amp__pb_misses;
    out->rejected = amp__pb_rejected;
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d && fd >= 0) close(fd);
    n = 0;
    for (struct dirent *de; d && (de = readdir(d));) {
        size_t len = strlen(de->d_name);
        if (!amp__prebuilt_is_pack_name(de->d_name)) continue;
        if (n < sizeof out->available)
            n += (size_t)snprintf(out->available + n, sizeof out->available - n, "%s%.*s", n ? " " : "",
                                  (int)(len - 4), de->d_name);
    }
    if (d) closedir(d);
    return AMP_OK;
}

/* ------------------------------------------------------------ writing */

static int amp__pending_cmp(const void *a, const void *b)
{
    return memcmp(((const amp__prebuilt_item *)a)->key, ((const amp__prebuilt_item *)b)->key, 32);
}

amp_status amp__prebuilt_write(const char *path, const char *target, amp__prebuilt_item *items, size_t n)
{
    amp_status st = AMP_OK;
    amp__pack_entry *idx = NULL;
    char tmp[PATH_MAX];
    int fd = -1;
    if (!amp__pb_name_ok(target))
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "prebuilt target '%s' is not a plain name", target);
    if (n > AMP__PACK_MAX_ENTRIES)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%zu prebuilt programs for %s; a pack holds at most %u", n,
                         target, AMP__PACK_MAX_ENTRIES);
    qsort(items, n, sizeof *items, amp__pending_cmp);
    for (size_t i = 1; i < n; ++i)
        if (!memcmp(items[i - 1].key, items[i].key, 32))
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "two prebuilt programs for %s have one key", target);
    if (!(idx = calloc(n ? n : 1, sizeof *idx))) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory for a pack index");
    uint64_t off = sizeof(amp__pack_header) + n * sizeof *idx;
    for (size_t i = 0; i < n; ++i) {
        if (items[i].size == 0 || items[i].size > AMP__PACK_ENTRY_MAX) {
            st = amp__fail(AMP_ERROR_INVALID_ARGUMENT, "a prebuilt program for %s has %zu bytes", target, items[i].size);
            goto fail;
        }
        memcpy(idx[i].key, items[i].key, 32);
        idx[i].offset = off;
        idx[i].size = items[i].size;
        amp__sha256 *s = amp__sha256_new();
        if (!s) { st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory to hash a prebuilt program"); goto fail; }
        amp__sha256_field(s, items[i].data, items[i].size);
        if (!amp__sha256_final(s, idx[i].digest)) {
            st = amp__fail(AMP_ERROR_UNSUPPORTED, "libcrypto could not finish the SHA-256 of a prebuilt program");
            goto fail;
        }
        off += items[i].size;
    }
    amp__pack_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, AMP__PACK_MAGIC, 8);
    h.format = AMP__PACK_FORMAT;
    h.count = (uint32_t)n;
    snprintf(h.version, sizeof h.version, "%s", HIPAMP_VERSION_STRING);
    snprintf(h.target, sizeof h.target, "%s", target);
    amp__sha256 *s = amp__sha256_new();
    if (!s) { st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory to hash a pack index"); goto fail; }
    amp__sha256_field(s, idx, n * sizeof *idx);
    if (!amp__sha256_final(s, h.index_digest)) {
        st = amp__fail(AMP_ERROR_UNSUPPORTED, "libcrypto could not finish the SHA-256 of a pack index");
        goto fail;
    }
    if (snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid()) >= (int)sizeof tmp) {
        st = amp__fail(AMP_ERROR_INVALID_ARGUMENT, "the pack's path %s is too long", path);
        goto fail;
    }
    unlink(tmp); /* a leftover of this pid's: never written into, never followed */
    if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0) {
        st = amp__fail(AMP_ERROR_UNSUPPORTED, "cannot create %s: %s", tmp, strerror(errno));
        goto fail;
    }
    bool ok = amp__fd_write_all(fd, &h, sizeof h) && amp__fd_write_all(fd, idx, n * sizeof *idx);
    for (size_t i = 0; ok && i < n; ++i) ok = amp__fd_write_all(fd, items[i].data, items[i].size);
    if (!ok || fsync(fd) != 0) {
        st = amp__fail(AMP_ERROR_UNSUPPORTED, "cannot write %s: %s", tmp, strerror(errno));
        goto fail;
    }
    close(fd);
    fd = -1;
    if (rename(tmp, path) != 0) {
        st = amp__fail(AMP_ERROR_UNSUPPORTED, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        unlink(tmp);
        goto fail;
    }
    free(idx);
    return AMP_OK;
fail:
    if (fd >= 0) {
        close(fd);
        unlink(tmp);
    }
    free(idx);
    return st;
}

amp_status amp__prebuilt_read(const char *dir, const char *target, amp__prebuilt_item **items, size_t *n)
{
    *items = NULL;
    *n = 0;
    amp_status st = AMP_OK;
    amp__prebuilt_item *it = NULL;
    amp__pack p;
    memset(&p, 0, sizeof p);
    char why[512];
    /* The writer's own earlier output, checked as a reader checks a pack
     * (the trust rules and every digest). */
    pthread_once(&amp__pb_once, amp__pb_init);
    char real[PATH_MAX];
    if (!realpath(dir, real)) return AMP_OK; /* no directory yet: no pack */
    char why_dirs[512];
    if (!amp__pb_check_dirs(real, why_dirs, sizeof why_dirs)) return amp__fail(AMP_ERROR_UNSUPPORTED, "%s", why_dirs);
    int dirfd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0) return AMP_OK;
    amp__pb_open(dirfd, dir, target, &p, why, sizeof why);
    close(dirfd);
    if (p.fd < 0) return why[0] ? amp__fail(AMP_ERROR_UNSUPPORTED, "%s", why) : AMP_OK;
    if (!(it = calloc(p.count ? p.count : 1, sizeof *it))) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory to read the pack of %s", target);
        goto fail;
    }
    for (uint32_t i = 0; i < p.count; ++i) {
        const amp__pack_entry *e = &p.index[i];
        memcpy(it[i].key, e->key, 32);
        it[i].size = e->size;
        *n = i + 1;
        const char *bad = (it[i].data = malloc(e->size)) ? amp__pb_entry_check(&p, e, it[i].data) : "no memory";
        if (bad) {
            st = amp__fail(AMP_ERROR_UNSUPPORTED, "entry %u of %s/%s.hpk: %s", i, dir, target, bad);
            goto fail;
        }
    }
    *items = it;
    close(p.fd);
    free(p.index);
    return AMP_OK;
fail:
    if (it)
        for (size_t i = 0; i < *n; ++i) free(it[i].data);
    free(it);
    *n = 0;
    close(p.fd);
    free(p.index);
    return st;
}
