/* disk_cache.c — the on-disk compile cache. Its entries become code this
 * process loads and runs, so it is a security boundary:
 *  - the directory is resolved and opened once; its descriptor is checked
 *    (fstat: a directory, ours, writable by nobody else — or, in the shared
 *    group mode the user asks for, by the group only) and every entry is
 *    reached relative to it (openat, O_NOFOLLOW | O_NONBLOCK), so swapping a
 *    path component later changes nothing;
 *  - an entry must be a regular file with one link, owned by us (shared:
 *    by the directory's group), not writable by others, of sane size;
 *  - every entry carries an HMAC-SHA256 under a random key kept in the
 *    directory (readable only by us; shared: by the group): an entry
 *    written by anyone who cannot read the key fails verification;
 *  - writes go to a temporary name and are renamed, so concurrent processes
 *    (MPI ranks) never read a torn entry; a bad entry is deleted and rebuilt
 *    (an empty directory at an entry's name too; a directory with something
 *    in it is left alone, and amp_cache_get_info names it);
 *  - the MACs need OpenSSL's SHA-256: where it has none (only the base
 *    provider) the disk cache is off, and builds go on without it.
 * Nothing here is reported as an error: a cache that cannot be used is
 * skipped, and amp_cache_get_info says why. */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define AMP__ENTRY_MAGIC "HIPAMPC2"
#define AMP__ENTRY_FORMAT 2u
/* The largest module stored, and read: a bad entry is refused from its
 * size (fstat) before a byte of it is read or allocated. Code objects and
 * CPU modules are a few MiB; 64 MiB is also the limit on a kernel file. */
#define AMP__ENTRY_MAX (64u << 20)
#define AMP__KEY_FILE ".key"
#define AMP__TMP_PREFIX ".tmp-"
#define AMP__TMP_STALE_S 3600 /* temporaries older than this are leftovers */

typedef struct amp__entry_header {
    char magic[8];
    uint32_t format;
    uint32_t reserved;
    uint8_t key[32];
    uint64_t payload_size;
    uint8_t mac[32]; /* HMAC over the bytes before it, then the payload */
} amp__entry_header;

static pthread_once_t amp__dc_once = PTHREAD_ONCE_INIT;
static int amp__dc_fd = -1;        /* the directory; -1: disk cache off */
static bool amp__dc_shared;        /* AMP_CACHE_SHARED=group */
static gid_t amp__dc_gid;          /* the directory's group (shared mode) */
static char amp__dc_path[PATH_MAX];
static char amp__dc_reason[512];
static uint8_t amp__dc_key[32];

static pthread_mutex_t amp__dc_note_lock = PTHREAD_MUTEX_INITIALIZER; /* leaf: guards the last note */
static char amp__dc_last_uncacheable[256];
static _Atomic uint64_t amp__dc_hits, amp__dc_misses, amp__dc_stores, amp__dc_rejected, amp__dc_uncacheable;

static void amp__dc_off(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void amp__dc_off(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(amp__dc_reason, sizeof amp__dc_reason, fmt, ap);
    va_end(ap);
    if (amp__dc_fd >= 0) close(amp__dc_fd);
    amp__dc_fd = -1;
}

/* mkdir -p of path's parents (0700 for the ones we make); the last
 * component is made by the caller with its own mode. */
static void amp__mkdir_parents(const char *path)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; ++p)
        if (*p == '/') {
            *p = 0;
            (void)mkdir(buf, 0700);
            *p = '/';
        }
}

/* Whether the process belongs to group g. */
static bool amp__in_group(gid_t g)
{
    if (g == getegid()) return true;
    gid_t groups[256];
    int n = getgroups(256, groups);
    for (int i = 0; i < n; ++i)
        if (groups[i] == g) return true;
    return false;
}

/* The rules an entry or the key file must meet in this directory. */
static const char *amp__file_problem(const struct stat *sb)
{
    if (!S_ISREG(sb->st_mode)) return "not a regular file";
    if (sb->st_nlink != 1) return "more than one link";
    if (amp__dc_shared) {
        if (sb->st_gid != amp__dc_gid) return "not of the cache directory's group";
        if (sb->st_mode & (S_IWGRP | S_IWOTH)) return "writable by others";
    } else {
        if (sb->st_uid != geteuid()) return "owned by another user";
        if (sb->st_mode & (S_IWGRP | S_IWOTH)) return "writable by others";
    }
    return NULL;
}

/* A fresh temporary name in the directory. */
static void amp__tmp_name(char *out, size_t n)
{
    uint8_t r[8];
    char hex[17];
    if (!amp__random_bytes(r, sizeof r)) {
        uint64_t t = amp__now_ns();
        memcpy(r, &t, sizeof r);
    }
    amp__hex(r, sizeof r, hex);
    snprintf(out, n, AMP__TMP_PREFIX "%d-%s", (int)getpid(), hex);
}

/* Read the MAC key, making it first when there is none (link() so that two
 * processes racing agree on one). */
static bool amp__load_key(void)
{
    for (int attempt = 0; attempt < 2; ++attempt) {
        int fd = openat(amp__dc_fd, AMP__KEY_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd >= 0) {
            struct stat sb;
            const char *why = fstat(fd, &sb) != 0 ? "cannot be read" : amp__file_problem(&sb);
            if (!why && (sb.st_mode & (amp__dc_shared ? S_IRWXO : (S_IRWXG | S_IRWXO))))
                why = amp__dc_shared ? "readable by users outside the group" : "readable by other users";
            if (!why && sb.st_size != 32) why = "not 32 bytes";
            if (!why && !amp__fd_read_all(fd, amp__dc_key, 32)) why = "cannot be read";
            close(fd);
            if (why) {
                amp__dc_off("the cache key %s/" AMP__KEY_FILE " is %s", amp__dc_path, why);
                return false;
            }
            return true;
        }
        if (errno != ENOENT) {
            amp__dc_off("cannot open the cache key %s/" AMP__KEY_FILE ": %s", amp__dc_path, strerror(errno));
            return false;
        }
        uint8_t key[32];
        char tmp[64];
        if (!amp__random_bytes(key, sizeof key)) {
            amp__dc_off("no random bytes for a cache key");
            return false;
        }
        amp__tmp_name(tmp, sizeof tmp);
        int w = openat(amp__dc_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, amp__dc_shared ? 0640 : 0600);
        if (w < 0) {
            amp__dc_off("cannot create a cache key in %s: %s", amp__dc_path, strerror(errno));
            return false;
        }
        bool ok = amp__fd_write_all(w, key, sizeof key);
        if (close(w) != 0) ok = false;
        if (ok && linkat(amp__dc_fd, tmp, amp__dc_fd, AMP__KEY_FILE, 0) != 0 && errno != EEXIST) ok = false;
        (void)unlinkat(amp__dc_fd, tmp, 0);
        if (!ok) {
            amp__dc_off("cannot write a cache key in %s: %s", amp__dc_path, strerror(errno));
            return false;
        }
    }
    amp__dc_off("cannot settle on a cache key in %s", amp__dc_path);
    return false;
}

/* Temporaries of dead processes: a process killed while storing. */
static void amp__sweep_tmp(void)
{
    int fd = dup(amp__dc_fd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return;
    }
    time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, AMP__TMP_PREFIX, strlen(AMP__TMP_PREFIX))) continue;
        struct stat sb;
        if (fstatat(amp__dc_fd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (sb.st_uid == geteuid() && now - sb.st_mtime > AMP__TMP_STALE_S) (void)unlinkat(amp__dc_fd, e->d_name, 0);
    }
    closedir(d);
}

/* Where the cache is, decided once without touching the file system. */
static pthread_once_t amp__dc_path_once = PTHREAD_ONCE_INIT;
static bool amp__dc_tmp_fallback;

static void amp__dc_path_init(void)
{
    const char *dir = amp__env("AMP_CACHE_DIR");
    const char *xdg = amp__env("XDG_CACHE_HOME");
    const char *home = amp__env("HOME");
    if (dir) snprintf(amp__dc_path, sizeof amp__dc_path, "%s", dir);
    else if (xdg) snprintf(amp__dc_path, sizeof amp__dc_path, "%s/hipamp", xdg);
    else if (home) snprintf(amp__dc_path, sizeof amp__dc_path, "%s/.cache/hipamp", home);
    else {
        snprintf(amp__dc_path, sizeof amp__dc_path, "/tmp/hipamp-cache-%d", (int)geteuid());
        amp__dc_tmp_fallback = true;
    }
}

static void amp__dc_init(void)
{
    char why[384];
    pthread_once(&amp__dc_path_once, amp__dc_path_init);
    if (!amp__crypto_usable(why, sizeof why)) {
        amp__dc_off("%s: entries cannot be authenticated", why);
        return;
    }
    const char *dir = amp__env("AMP_CACHE_DIR");
    const char *shared = amp__env("AMP_CACHE_SHARED");
    bool tmp_fallback = amp__dc_tmp_fallback;
    if (dir && (!strcmp(dir, "off") || !strcmp(dir, "none") || !strcmp(dir, "0"))) {
        amp__dc_off("disabled by AMP_CACHE_DIR=%s", dir);
        return;
    }
    if (shared && strcmp(shared, "group") && strcmp(shared, "0") && strcmp(shared, "off")) {
        amp__dc_off("AMP_CACHE_SHARED=%s is not understood (use \"group\")", shared);
        return;
    }
    amp__dc_shared = shared && !strcmp(shared, "group");
    if (amp__dc_path[0] != '/') {
        amp__dc_off("cache directory %s is not an absolute path", amp__dc_path);
        return;
    }
    if (!tmp_fallback) amp__mkdir_parents(amp__dc_path);
    (void)mkdir(amp__dc_path, amp__dc_shared ? 02770 : 0700);

    /* The last component may be a symlink only if it is ours (or root's);
     * in the /tmp fallback not at all. What we then hold is checked on the
     * descriptor, whatever the path says later. */
    struct stat ls;
    if (lstat(amp__dc_path, &ls) != 0) {
        amp__dc_off("cannot create cache directory %s: %s", amp__dc_path, strerror(errno));
        return;
    }
    if (S_ISLNK(ls.st_mode) && (tmp_fallback || (ls.st_uid != geteuid() && ls.st_uid != 0))) {
        amp__dc_off("cache directory %s is a symbolic link owned by uid %d", amp__dc_path, (int)ls.st_uid);
        return;
    }
    amp__dc_fd = open(amp__dc_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (tmp_fallback ? O_NOFOLLOW : 0));
    if (amp__dc_fd < 0) {
        amp__dc_off("cannot open cache directory %s: %s", amp__dc_path, strerror(errno));
        return;
    }
    struct stat sb;
    if (fstat(amp__dc_fd, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        amp__dc_off("cache directory %s is not a directory", amp__dc_path);
        return;
    }
    if (amp__dc_shared) {
        amp__dc_gid = sb.st_gid;
        if (sb.st_mode & S_IWOTH) {
            amp__dc_off("shared cache directory %s is writable by every user (mode %04o)", amp__dc_path,
                        (unsigned)(sb.st_mode & 07777));
            return;
        }
        if (!amp__in_group(sb.st_gid)) {
            amp__dc_off("shared cache directory %s belongs to group %d, which this process is not in", amp__dc_path,
                        (int)sb.st_gid);
            return;
        }
    } else {
        if (sb.st_uid != geteuid()) {
            amp__dc_off("cache directory %s is owned by uid %d, not by this user (uid %d); set AMP_CACHE_SHARED=group "
                        "to share a cache with a group", amp__dc_path, (int)sb.st_uid, (int)geteuid());
            return;
        }
        if (sb.st_mode & S_IWOTH) {
            amp__dc_off("cache directory %s is writable by every user (mode %04o)", amp__dc_path,
                        (unsigned)(sb.st_mode & 07777));
            return;
        }
        if (sb.st_mode & S_IWGRP) {
            amp__dc_off("cache directory %s is writable by its group (mode %04o); set AMP_CACHE_SHARED=group to trust "
                        "the group with running code in this process", amp__dc_path, (unsigned)(sb.st_mode & 07777));
            return;
        }
        if (tmp_fallback && (sb.st_mode & 0777) != 0700) {
            amp__dc_off("cache directory %s has mode %04o, not 0700", amp__dc_path, (unsigned)(sb.st_mode & 07777));
            return;
        }
    }
    if (!amp__load_key()) return;
    amp__sweep_tmp();
}

static bool amp__dc_ready(void)
{
    pthread_once(&amp__dc_once, amp__dc_init);
    return amp__dc_fd >= 0;
}

bool amp__dcache_usable(void) { return amp__dc_ready(); }

/* A directory at an entry's name (nothing of ours makes one): removed when
 * empty, so that the entry can be stored; else left alone (hipamp removes
 * nothing it did not write) and named in amp_cache_get_info. */
static bool amp__dc_clear_dir(const char *name)
{
    if (unlinkat(amp__dc_fd, name, AT_REMOVEDIR) == 0) return true;
    char why[256];
    snprintf(why, sizeof why, "disk cache entry %.80s is a directory with something in it: remove it (in the cache "
             "directory) to cache this build", name);
    amp__dcache_note_uncacheable(why);
    return false;
}

static void amp__entry_name(const uint8_t key[32], char out[80])
{
    char hex[65];
    amp__hex(key, 32, hex);
    snprintf(out, 80, "%s.ampc", hex);
}

static void amp__entry_mac(const amp__entry_header *h, const void *payload, size_t size, uint8_t mac[32])
{
    (void)amp__hmac_sha256(amp__dc_key, h, offsetof(amp__entry_header, mac), payload, size, mac);
}

void *amp__dcache_load(const uint8_t key[32], size_t *size)
{
    char name[80];
    void *data = NULL;
    bool bad = false;
    amp__entry_header h;
    struct stat sb;
    *size = 0;
    if (!amp__dc_ready()) return NULL;
    amp__entry_name(key, name);
    int fd = openat(amp__dc_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        if (errno == ELOOP || errno == ENXIO) { /* a symlink or a socket: planted */
            atomic_fetch_add(&amp__dc_rejected, 1);
            (void)unlinkat(amp__dc_fd, name, 0);
        } else {
            atomic_fetch_add(&amp__dc_misses, 1);
        }
        return NULL;
    }
    if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        close(fd);
        atomic_fetch_add(&amp__dc_rejected, 1);
        (void)amp__dc_clear_dir(name);
        return NULL;
    }
    if (fstat(fd, &sb) != 0 || amp__file_problem(&sb) || sb.st_size < (off_t)sizeof h ||
        (uint64_t)sb.st_size > sizeof h + (uint64_t)AMP__ENTRY_MAX || !amp__fd_read_all(fd, &h, sizeof h) ||
        memcmp(h.magic, AMP__ENTRY_MAGIC, 8) || h.format != AMP__ENTRY_FORMAT || memcmp(h.key, key, 32) ||
        h.payload_size != (uint64_t)sb.st_size - sizeof h) {
        bad = true;
        goto out;
    }
    if (!(data = malloc(h.payload_size ? h.payload_size : 1))) goto out;
    uint8_t mac[32];
    if (!amp__fd_read_all(fd, data, h.payload_size)) {
        bad = true;
        goto out;
    }
    amp__entry_mac(&h, data, h.payload_size, mac);
    if (CRYPTO_memcmp(mac, h.mac, 32) != 0) {
        bad = true;
        goto out;
    }
    *size = h.payload_size;
out:
    close(fd);
    if (bad) {
        free(data);
        data = NULL;
        atomic_fetch_add(&amp__dc_rejected, 1);
        /* Renames are atomic, so a bad entry is bad for everyone: remove it
         * and let the caller rebuild (the rebuilt entry replaces it). */
        (void)unlinkat(amp__dc_fd, name, 0);
    } else if (data) {
        atomic_fetch_add(&amp__dc_hits, 1);
    }
    return data;
}

void amp__dcache_store(const uint8_t key[32], const void *data, size_t size)
{
    char name[80], tmp[64];
    amp__entry_header h;
    if (!amp__dc_ready()) return;
    if (size > AMP__ENTRY_MAX) {
        char why[160];
        snprintf(why, sizeof why, "the module is %zu bytes; disk cache entries hold at most %u MiB", size,
                 AMP__ENTRY_MAX >> 20);
        amp__dcache_note_uncacheable(why);
        return;
    }
    amp__entry_name(key, name);
    amp__tmp_name(tmp, sizeof tmp);
    memset(&h, 0, sizeof h);
    memcpy(h.magic, AMP__ENTRY_MAGIC, 8);
    h.format = AMP__ENTRY_FORMAT;
    memcpy(h.key, key, 32);
    h.payload_size = size;
    amp__entry_mac(&h, data, size, h.mac);
    int fd = openat(amp__dc_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, amp__dc_shared ? 0640 : 0600);
    if (fd < 0) return;
    bool ok = amp__fd_write_all(fd, &h, sizeof h) && amp__fd_write_all(fd, data, size);
    if (close(fd) != 0) ok = false;
    if (ok && renameat(amp__dc_fd, tmp, amp__dc_fd, name) != 0) {
        /* A directory appeared at the name since the load looked. */
        ok = (errno == EISDIR || errno == ENOTEMPTY || errno == EEXIST) && amp__dc_clear_dir(name) &&
             renameat(amp__dc_fd, tmp, amp__dc_fd, name) == 0;
    }
    if (!ok) {
        (void)unlinkat(amp__dc_fd, tmp, 0);
        return;
    }
    atomic_fetch_add(&amp__dc_stores, 1);
}

void amp__dcache_note_uncacheable(const char *why)
{
    atomic_fetch_add(&amp__dc_uncacheable, 1);
    pthread_mutex_lock(&amp__dc_note_lock);
    snprintf(amp__dc_last_uncacheable, sizeof amp__dc_last_uncacheable, "%.255s", why);
    pthread_mutex_unlock(&amp__dc_note_lock);
}

const char *amp_cache_dir(void)
{
    pthread_once(&amp__dc_path_once, amp__dc_path_init);
    return amp__dc_path;
}

amp_status amp_cache_get_info(amp_cache_info *out)
{
    AMP__CLEAR_OUT(out);
    AMP__NOT_NULL(out);
    bool on = amp__dc_ready();
    out->disk_enabled = on;
    out->shared_group = amp__dc_shared;
    snprintf(out->dir, sizeof out->dir, "%.1023s", amp__dc_path);
    snprintf(out->reason, sizeof out->reason, "%s", on ? "" : amp__dc_reason);
    pthread_mutex_lock(&amp__dc_note_lock);
    snprintf(out->last_uncacheable, sizeof out->last_uncacheable, "%s", amp__dc_last_uncacheable);
    pthread_mutex_unlock(&amp__dc_note_lock);
    amp__mcache_count(&out->memory_hits, &out->memory_misses);
    out->disk_hits = atomic_load(&amp__dc_hits);
    out->disk_misses = atomic_load(&amp__dc_misses);
    out->disk_stores = atomic_load(&amp__dc_stores);
    out->disk_rejected = atomic_load(&amp__dc_rejected);
    out->uncacheable_builds = atomic_load(&amp__dc_uncacheable);
    return AMP_OK;
}
