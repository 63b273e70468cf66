/* disk_cache.c — the on-disk compile cache. Its entries become code this
 * process loads and runs, so it is a security boundary:
 *  - the directory is resolved and opened once (cache_dir.c walks the way
 *    there, judging every symbolic link); its descriptor is checked
 *    (fstat: a directory, ours, writable by nobody else — or, in the shared
 *    group mode the user asks for, by the group only, and owned by us, root
 *    or a member of the group: its owner could replace the key) and every
 *    entry is reached relative to it (openat, O_NOFOLLOW | O_NONBLOCK), so
 *    swapping a path component later changes nothing;
 *  - an entry must be a regular file with one link, owned by us (shared:
 *    of the directory's group and owned by us, root or a member of it), not
 *    writable by others, of sane size;
 *  - every entry carries an HMAC-SHA256 under a random key kept in the
 *    directory (readable only by us; shared: by the group): an entry
 *    written by anyone who cannot read the key fails verification (and one
 *    whose MAC cannot be computed is neither stored nor loaded); a process
 *    whose key was removed or replaced after it read it (someone clearing
 *    the cache) stores nothing more and removes no entry for failing its
 *    MAC, so that it and the processes with the new key do not remove
 *    each other's entries;
 *  - shared: a directory we create is made 02770 (mkdir honours neither the
 *    set-gid bit nor, against the umask, the group's write), and every file
 *    we write is given the directory's group and mode 0640, whatever our
 *    egid and umask, so that the other members can use it;
 *  - writes go to a temporary name, locked by its writer until closed, and
 *    are renamed, so concurrent processes (MPI ranks) never read a torn
 *    entry, and a process's start removes a dead writer's temporaries; a
 *    bad entry is deleted and rebuilt (an empty directory at an entry's
 *    name too; a directory with something in it is left alone, and
 *    amp_cache_get_info names it);
 *  - the MACs need OpenSSL's SHA-256: where it has none (only the base
 *    provider) the disk cache is off, and builds go on without it.
 * Nothing here is reported as an error: a cache that cannot be used is
 * skipped, and amp_cache_get_info says why. */
#include "internal.h"
#include "base/fork_guard.h"
#include "base/trusted_path.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <openssl/crypto.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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
#define AMP__TMP_STALE_S 3600  /* temporaries older than this are leftovers where locks cannot tell */
#define AMP__TMP_UNLOCKED_S 10 /* an unlocked temporary older than this is a dead writer's */
#define AMP__RENAME_NOREPLACE 1 /* renameat2's flag (linux/fs.h), which older C libraries do not declare */

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
static char amp__dc_reason[PATH_MAX + 512]; /* whole: amp_cache_info.reason gets it fitted */
static uint8_t amp__dc_key[32];

/* Leaves, taken across fork() (base/fork_guard.h). */
AMP__FORK_GUARDED_MUTEX(amp__dc_note_lock)   /* guards the last note */
AMP__FORK_GUARDED_MUTEX(amp__dc_member_lock) /* guards the members seen */
static char amp__dc_last_uncacheable[PATH_MAX + 256];
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

/* The cache off because of a setting the user made that cannot work (a
 * relative path, an unknown group): said on stderr too, as a bad value of
 * any other variable is (base/env.c), since a program that never asks
 * amp_cache_get_info would otherwise compile every kernel every run
 * without knowing why. */
static void amp__dc_off_by_setting(void)
{
    fprintf(stderr, "hipamp: %s; the disk cache is off (kernels are compiled again in every process)\n",
            amp__dc_reason);
}

/* What the last build that could not use the disk cache met (a refused
 * entry, a store that failed), shown as amp_cache_get_info's
 * last_uncacheable; amp__dcache_note_uncacheable also counts the build. */
static void amp__dc_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void amp__dc_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&amp__dc_note_lock);
    vsnprintf(amp__dc_last_uncacheable, sizeof amp__dc_last_uncacheable, fmt, ap);
    pthread_mutex_unlock(&amp__dc_note_lock);
    va_end(ap);
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

/* Whether user uid belongs to group g by the user and group databases:
 * g is its primary group (getpwuid_r), lists it among its members
 * (getgrgid_r's gr_mem), or is among the groups it gets when it logs in
 * (getgrouplist: where a directory service leaves gr_mem empty, as sssd's
 * ignore_group_members does). A uid the databases do not know, or a lookup
 * that fails, is no member. */
static bool amp__uid_in_group_db(uid_t uid, gid_t g)
{
    bool in = false;
    size_t cap = 4096;
    char *buf = NULL, name[256];
    struct passwd pw, *pwp = NULL;
    struct group gr, *grp = NULL;
    int e;
    do {
        char *nb = realloc(buf, cap *= 2);
        if (!nb) goto out;
        buf = nb;
    } while ((e = getpwuid_r(uid, &pw, buf, cap, &pwp)) == ERANGE && cap < (16u << 20));
    if (e != 0 || !pwp) goto out;
    if (pw.pw_gid == g) {
        in = true;
        goto out;
    }
    if (!pw.pw_name || strlen(pw.pw_name) >= sizeof name) goto out;
    snprintf(name, sizeof name, "%s", pw.pw_name);
    const gid_t primary = pw.pw_gid;
    while ((e = getgrgid_r(g, &gr, buf, cap, &grp)) == ERANGE && cap < (16u << 20)) {
        char *nb = realloc(buf, cap *= 2);
        if (!nb) goto out;
        buf = nb;
    }
    for (char **m = e == 0 && grp ? gr.gr_mem : NULL; m && *m; ++m)
        if (!strcmp(*m, name)) {
            in = true;
            goto out;
        }
    gid_t *groups = NULL;
    int ngroups = 64;
    for (int attempt = 0; attempt < 4; ++attempt) {
        gid_t *ng = realloc(groups, (size_t)ngroups * sizeof *groups);
        if (!ng) break;
        groups = ng;
        int n = ngroups;
        if (getgrouplist(name, primary, groups, &n) >= 0) {
            for (int i = 0; i < n; ++i)
                if (groups[i] == g) in = true;
            break;
        }
        if (n <= ngroups) break;
        ngroups = n;
    }
    free(groups);
out:
    free(buf);
    return in;
}

/* Whether a file or the directory owned by uid may be trusted in shared
 * mode: ours, root's, or a member's of the directory's group (anyone else
 * who owns one could replace the key, or an entry, with their code). The
 * databases are asked once per uid. */
static bool amp__owner_trusted(uid_t uid)
{
    static struct { uid_t uid; bool in; } seen[16];
    static unsigned nseen;
    if (uid == geteuid() || uid == 0) return true;
    pthread_mutex_lock(&amp__dc_member_lock);
    for (unsigned i = 0; i < nseen && i < 16; ++i)
        if (seen[i].uid == uid) {
            bool in = seen[i].in;
            pthread_mutex_unlock(&amp__dc_member_lock);
            return in;
        }
    pthread_mutex_unlock(&amp__dc_member_lock);
    bool in = amp__uid_in_group_db(uid, amp__dc_gid);
    pthread_mutex_lock(&amp__dc_member_lock);
    seen[nseen % 16].uid = uid;
    seen[nseen % 16].in = in;
    ++nseen;
    pthread_mutex_unlock(&amp__dc_member_lock);
    return in;
}

/* The rules an entry or the key file must meet in this directory: NULL,
 * else what is wrong (in buf, n bytes, where it names the owner). */
static const char *amp__file_problem(const struct stat *sb, char *buf, size_t n)
{
    if (!S_ISREG(sb->st_mode)) return "not a regular file";
    if (sb->st_nlink != 1) return "hard-linked (a file of more than one name)";
    if (amp__dc_shared) {
        if (sb->st_gid != amp__dc_gid) return "not of the cache directory's group";
        if (sb->st_mode & (S_IWGRP | S_IWOTH)) return "writable by others";
        if (!amp__owner_trusted(sb->st_uid)) {
            snprintf(buf, n, "owned by uid %d, who is not a member of the cache directory's group %d", (int)sb->st_uid,
                     (int)amp__dc_gid);
            return buf;
        }
    } else {
        if (sb->st_uid != geteuid()) return "owned by another user";
        if (sb->st_mode & (S_IWGRP | S_IWOTH)) return "writable by others";
    }
    return NULL;
}

/* Shared mode: a file we just created gets the directory's group (our egid
 * may be another, and the directory need not be set-gid) and mode 0640
 * (the umask may have taken the group's read), so that every member can
 * read it and none can change it. */
static bool amp__share_file(int fd)
{
    if (!amp__dc_shared) return true;
    return fchown(fd, (uid_t)-1, amp__dc_gid) == 0 && fchmod(fd, 0640) == 0;
}

/* A temporary file of ours just created (fd): locked until it is closed,
 * so that the sweep can tell a live writer's from a dead one's
 * (amp__tmp_abandoned). Waits for a sweeper that holds it for a moment.
 * Best effort: where the file system refuses locks, the sweep goes by age
 * alone. */
static void amp__tmp_hold(int fd) { (void)flock(fd, LOCK_EX); }

/* This host's tag in temporary names: 8 hex digits of its name's FNV-1a
 * hash. Locks on a network file system mounted without lock sharing are
 * seen only on the host that took them, and its clock need not agree
 * with the server's file times: the lock rule applies only to this host's
 * temporaries, another host's go by the hour. */
static void amp__host_tag(char out[9])
{
    char host[256] = "";
    (void)gethostname(host, sizeof host - 1);
    uint32_t h = 2166136261u;
    for (const char *c = host; *c; ++c) h = (h ^ (uint8_t)*c) * 16777619u;
    snprintf(out, 9, "%08x", (unsigned)h);
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
    char host[9];
    amp__host_tag(host);
    snprintf(out, n, AMP__TMP_PREFIX "%s-%d-%s", host, (int)getpid(), hex);
}

/* Put the file tmp at the key's name unless a key is there already: true
 * when it is there now (ours or a racer's; *ours says which), false with
 * errno. RENAME_NOREPLACE first: the key appears whole with one link, so a
 * racer that opens it at once finds a key it accepts. Where the file
 * system refuses that flag, link() then unlink(): the key has two links
 * for a moment, which amp__load_key waits out. Either way no key is ever
 * replaced, so racing processes agree on the first one published. */
static bool amp__key_publish(const char *tmp, bool *ours)
{
    *ours = false;
#ifdef SYS_renameat2
    if (syscall(SYS_renameat2, amp__dc_fd, tmp, amp__dc_fd, AMP__KEY_FILE, AMP__RENAME_NOREPLACE) == 0) {
        *ours = true;
        return true;
    }
    if (errno == EEXIST) return true;
    if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) return false;
#endif
    if (linkat(amp__dc_fd, tmp, amp__dc_fd, AMP__KEY_FILE, 0) == 0) {
        *ours = true;
        return true;
    }
    return errno == EEXIST;
}

/* Make a key and publish it (amp__key_publish); false after amp__dc_off.
 * Its bytes reach the disk before its name does: a crash must not leave a
 * short key at the name (one left by an older library is replaced,
 * amp__key_drop_short). */
static bool amp__key_make(void)
{
    uint8_t key[32];
    char tmp[64];
    bool ours = false;
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
    amp__tmp_hold(w);
    bool ok = amp__share_file(w) && amp__fd_write_all(w, key, sizeof key) && fsync(w) == 0;
    if (close(w) != 0) ok = false;
    if (ok) ok = amp__key_publish(tmp, &ours);
    int e = errno;
    /* After a rename there is no tmp: ENOENT, harmless. */
    (void)unlinkat(amp__dc_fd, tmp, 0);
    if (!ok) {
        amp__dc_off("cannot write a cache key in %s: %s", amp__dc_path, strerror(e));
        return false;
    }
    if (ours) (void)fsync(amp__dc_fd); /* the name too, where the file system allows it */
    return true;
}

/* Whether sb is a key of ours cut short (a crash after its name was
 * written and before its bytes, which nothing fsynced before): a regular
 * file, one link, ours, not 32 bytes. Only such a key is replaced: what
 * was ours to write is ours to remake, and the entries made under the old
 * key are rebuilt as they fail their MACs. */
static bool amp__key_is_short(const struct stat *sb)
{
    return S_ISREG(sb->st_mode) && sb->st_nlink == 1 && sb->st_uid == geteuid() && sb->st_size != 32;
}

/* Remove the short key sb describes, so that amp__load_key makes a new
 * one. Under an exclusive lock on the directory, and only if the name
 * still holds that file: processes that all found the short key remove it
 * once, and a later one finds the key the first one made, not removes it
 * too (they would then use different keys, and each delete the other's
 * entries). Without the lock (a file system that refuses it), the name is
 * still checked first, and the worst case is entries rebuilt. */
static void amp__key_drop_short(const struct stat *sb)
{
    struct stat now;
    bool locked = flock(amp__dc_fd, LOCK_EX) == 0;
    if (fstatat(amp__dc_fd, AMP__KEY_FILE, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_dev == sb->st_dev &&
        now.st_ino == sb->st_ino && amp__key_is_short(&now))
        (void)unlinkat(amp__dc_fd, AMP__KEY_FILE, 0);
    if (locked) (void)flock(amp__dc_fd, LOCK_UN);
}

/* Read the MAC key, making it first when there is none
 * (amp__key_publish: racing processes agree on one). */
static bool amp__load_key(void)
{
    /* A key with two links, of a racer publishing it by link(): up to
     * 200 waits of 1 ms for its second name to go. */
    int waits = 0;
    for (int attempt = 0; attempt < 4;) {
        int fd = openat(amp__dc_fd, AMP__KEY_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd >= 0) {
            struct stat sb;
            char buf[160];
            const char *why = fstat(fd, &sb) != 0 ? "not examinable" : NULL;
            if (!why && S_ISREG(sb.st_mode) && sb.st_nlink == 2 && waits < 200) {
                close(fd);
                ++waits;
                (void)nanosleep(&(struct timespec){0, 1000000}, NULL);
                continue;
            }
            if (!why && amp__key_is_short(&sb)) {
                close(fd);
                amp__key_drop_short(&sb);
                ++attempt;
                continue;
            }
            if (!why) why = amp__file_problem(&sb, buf, sizeof buf);
            if (!why && (sb.st_mode & (amp__dc_shared ? S_IRWXO : (S_IRWXG | S_IRWXO))))
                why = amp__dc_shared ? "readable by users outside the group" : "readable by other users";
            if (!why && sb.st_size != 32) why = "not 32 bytes";
            if (!why && !amp__fd_read_all(fd, amp__dc_key, 32)) why = "unreadable";
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
        if (!amp__key_make()) return false;
        ++attempt;
    }
    amp__dc_off("cannot settle on a cache key in %s", amp__dc_path);
    return false;
}

/* Whether the key file at its name still holds amp__dc_key (read again:
 * a new key file may have the old one's inode number). Someone clearing
 * the cache may remove it while this process runs, and the next process
 * makes another: this one then holds a key nobody else has, so every entry
 * it stored would fail the others' MAC check (refused and removed), and it
 * would remove theirs as forged. Once the key is gone or replaced this
 * process stores nothing more and removes no entry for failing its MAC (it
 * rebuilds those, not loading them), and says so; a new process reads the
 * new key. A key that cannot be read
 * now (no descriptor left, an error) is not taken for a changed one: this
 * store or removal is skipped, saying why. */
static bool amp__dc_key_current(void)
{
    uint8_t now[32];
    int fd = openat(amp__dc_fd, AMP__KEY_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    int e = fd < 0 ? errno : 0;
    bool got = fd >= 0 && amp__fd_read_all(fd, now, sizeof now);
    if (fd >= 0 && !got) e = errno ? errno : EIO;
    if (fd >= 0) close(fd);
    if (got && CRYPTO_memcmp(now, amp__dc_key, 32) == 0) return true;
    if (got || e == ENOENT)
        amp__dc_note("the cache key %.100s/" AMP__KEY_FILE " was removed or replaced after this process read it: "
                     "this process stores no more entries and removes none for failing its MAC (restart it to use "
                     "the new key)", amp__dc_path);
    else
        amp__dc_note("the cache key %.100s/" AMP__KEY_FILE " cannot be read again (%s): this store, or the "
                     "removal of an entry that failed its MAC, is skipped", amp__dc_path, strerror(e));
    return false;
}

/* Whether the temporary name (sb: what fstatat found there, ours) is a
 * dead writer's. Its writer holds a lock on it from its creation to its
 * close (amp__tmp_hold), and renames it a moment after: one that can be
 * locked and is more than AMP__TMP_UNLOCKED_S old is left over (a process
 * killed while storing; a CPU precompiled header's is 15 MB), one that
 * cannot is being written. Where locks cannot tell, AMP__TMP_STALE_S.
 * host: this host's tag (amp__host_tag). */
static bool amp__tmp_abandoned(const char *name, const struct stat *sb, time_t now, const char *host)
{
    const char *tag = name + strlen(AMP__TMP_PREFIX);
    if (!S_ISREG(sb->st_mode) || strncmp(tag, host, 8) || tag[8] != '-') return now - sb->st_mtime > AMP__TMP_STALE_S;
    int fd = openat(amp__dc_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return false;
    bool dead;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) dead = now - sb->st_mtime > AMP__TMP_UNLOCKED_S;
    else dead = errno != EWOULDBLOCK && now - sb->st_mtime > AMP__TMP_STALE_S;
    close(fd);
    return dead;
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
    char host[9];
    amp__host_tag(host);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, AMP__TMP_PREFIX, strlen(AMP__TMP_PREFIX))) continue;
        struct stat sb;
        if (fstatat(amp__dc_fd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (sb.st_uid == geteuid() && amp__tmp_abandoned(e->d_name, &sb, now, host))
            (void)unlinkat(amp__dc_fd, e->d_name, 0);
    }
    closedir(d);
}

/* Where the cache is, decided once without touching the file system. */
static pthread_once_t amp__dc_path_once = PTHREAD_ONCE_INIT;
static bool amp__dc_tmp_fallback;
static bool amp__dc_path_cut; /* the path the environment gives is longer than PATH_MAX */

static void amp__dc_path_init(void)
{
    const char *dir = amp__env("AMP_CACHE_DIR");
    const char *xdg = amp__env("XDG_CACHE_HOME");
    const char *home = amp__env("HOME");
    /* A relative XDG_CACHE_HOME is ignored, as the XDG base directory
     * specification says, and so is a relative HOME: either would put the
     * cache wherever the process happens to start. */
    if (xdg && xdg[0] != '/') xdg = NULL;
    if (home && home[0] != '/') home = NULL;
    int len = 0;
    if (dir) len = snprintf(amp__dc_path, sizeof amp__dc_path, "%s", dir);
    else if (xdg) len = snprintf(amp__dc_path, sizeof amp__dc_path, "%s/hipamp", xdg);
    else if (home) len = snprintf(amp__dc_path, sizeof amp__dc_path, "%s/.cache/hipamp", home);
    else {
        snprintf(amp__dc_path, sizeof amp__dc_path, "/tmp/hipamp-cache-%d", (int)geteuid());
        amp__dc_tmp_fallback = true;
    }
    /* Cut short, the path would name another directory: no cache. */
    amp__dc_path_cut = len < 0 || (size_t)len >= sizeof amp__dc_path;
}

/* Shared mode: every directory from / down to the cache directory's
 * parent (the real path of the descriptor amp__dc_fd) may be changed only
 * by root, this user or, with the group pinned (AMP_CACHE_SHARED=group:NAME),
 * members of amp__dc_gid: each is owned by one of them, writable by a group
 * only where that is amp__dc_gid and the group is pinned, and by others
 * only where sticky. Without a pin the group is the directory's own, which
 * a member of any group the user is in who may write a directory above
 * could choose by putting theirs there. False with the cache off, saying
 * which directory and why. */
static bool amp__dc_ancestor_judge(const struct stat *sb, void *ctx, char *what, size_t n)
{
    const bool pinned = *(const bool *)ctx;
    const bool sticky = (sb->st_mode & S_ISVTX) != 0;
    if (sb->st_uid != 0 && sb->st_uid != geteuid() && !(pinned && amp__owner_trusted(sb->st_uid)))
        snprintf(what, n, "owned by uid %d", (int)sb->st_uid);
    else if ((sb->st_mode & S_IWGRP) && !sticky && !(pinned && sb->st_gid == amp__dc_gid))
        snprintf(what, n, "writable by group %d (mode %04o)", (int)sb->st_gid, (unsigned)(sb->st_mode & 07777));
    else if ((sb->st_mode & S_IWOTH) && !sticky)
        snprintf(what, n, "writable by every user (mode %04o)", (unsigned)(sb->st_mode & 07777));
    else
        return true;
    return false;
}

static bool amp__dc_ancestors_safe(bool pinned)
{
    char self[64], real[PATH_MAX];
    snprintf(self, sizeof self, "/proc/self/fd/%d", amp__dc_fd);
    ssize_t n = readlink(self, real, sizeof real - 1);
    if (n <= 0 || real[0] != '/') {
        amp__dc_off("shared cache directory %s: cannot tell where it is (%s)", amp__dc_path,
                    n < 0 ? strerror(errno) : "no path");
        return false;
    }
    real[n] = '\0';
    char dir[PATH_MAX], why[96];
    if (amp__ancestors_pass(real, false, amp__dc_ancestor_judge, &pinned, dir, sizeof dir, why, sizeof why))
        return true;
    amp__dc_off("shared cache directory %s not used: %s above it is %s: %s", amp__dc_path, dir, why,
                pinned ? "someone outside the cache's group could put another directory at its path"
                       : "someone who may write it could put a directory of another group of theirs at its "
                         "path, whose members would then run code in this process; name the cache's group "
                         "(AMP_CACHE_SHARED=group:NAME) to share a cache below a group's directory");
    return false;
}

static void amp__dc_init(void)
{
    char why[384];
    pthread_once(&amp__dc_path_once, amp__dc_path_init);
    if (!amp__crypto_usable(why, sizeof why)) {
        amp__dc_off("%s: entries cannot be authenticated", why);
        return;
    }
    /* A set-uid, set-gid or file-capability program: where its cache
     * would be and whom it could trust are the invoker's to choose (the
     * environment is not read, amp__env, but a capability program's files
     * are the invoker's to write), and its entries are code it runs. */
    if (getauxval(AT_SECURE)) {
        amp__dc_off("off in a set-uid, set-gid or file-capability program (AT_SECURE): its entries would be code "
                    "whoever started it could choose");
        return;
    }
    const char *dir = amp__env("AMP_CACHE_DIR");
    const char *shared = amp__env("AMP_CACHE_SHARED");
    bool tmp_fallback = amp__dc_tmp_fallback;
    if (dir && (!strcmp(dir, "off") || !strcmp(dir, "none") || !strcmp(dir, "0"))) {
        amp__dc_off("disabled by AMP_CACHE_DIR=%s", dir);
        return;
    }
    bool pinned = false;
    gid_t pin = 0;
    if (shared && !strncmp(shared, "group:", 6)) {
        /* group:NAME (or a gid): the group the user trusts, whatever the
         * directory found at the path says. */
        const char *g = shared + 6;
        struct group gr, *res = NULL;
        char buf[4096];
        char *end = NULL;
        /* Digits only (strtoul would take a sign or spaces), and not
         * (gid_t)-1, which no group has (chown's "leave it"). */
        unsigned long v = strtoul(g, &end, 10);
        if (*g >= '0' && *g <= '9' && end && !*end && v < (unsigned long)(gid_t)-1) {
            pin = (gid_t)v;
        } else if (*g && getgrnam_r(g, &gr, buf, sizeof buf, &res) == 0 && res) {
            pin = res->gr_gid;
        } else {
            amp__dc_off("AMP_CACHE_SHARED=%s names no group here", shared);
            amp__dc_off_by_setting();
            return;
        }
        pinned = true;
    } else if (shared && strcmp(shared, "group") && strcmp(shared, "0") && strcmp(shared, "off")) {
        amp__dc_off("AMP_CACHE_SHARED=%s is not understood (use \"group\" or \"group:NAME\")", shared);
        amp__dc_off_by_setting();
        return;
    }
    amp__dc_shared = pinned || (shared && !strcmp(shared, "group"));
    if (amp__dc_path[0] != '/') {
        amp__dc_off("cache directory %s (AMP_CACHE_DIR) is not an absolute path", amp__dc_path);
        amp__dc_off_by_setting();
        return;
    }
    /* Shared: the mode is set on the descriptor below (mkdir leaves out
     * the set-gid bit and applies the umask). */
    bool made = false;
    amp__dc_where where = {.path = amp__dc_path, .path_cut = amp__dc_path_cut, .shared = amp__dc_shared};
    amp__dc_fd = amp__dc_open_dir(&where, tmp_fallback, amp__dc_shared ? 02770 : 0700, &made);
    if (amp__dc_fd < 0) {
        amp__dc_off("%s", where.why);
        return;
    }
    struct stat sb;
    if (fstat(amp__dc_fd, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        amp__dc_off("cache directory %s is not a directory", amp__dc_path);
        return;
    }
    /* Writable by every user: no owner and no group can make that safe
     * (checked first, so that the reason does not point at sharing). */
    if (sb.st_mode & S_IWOTH) {
        amp__dc_off("%scache directory %s is writable by every user (mode %04o)", amp__dc_shared ? "shared " : "",
                    amp__dc_path, (unsigned)(sb.st_mode & 07777));
        return;
    }
    if (amp__dc_shared) {
        /* One we just made with the group named: given to that group (it
         * was made in our own group, or its parent's), which the members'
         * check below then finds. */
        if (made && pinned && sb.st_gid != pin && sb.st_uid == geteuid() &&
            (fchown(amp__dc_fd, (uid_t)-1, pin) != 0 || fstat(amp__dc_fd, &sb) != 0)) {
            amp__dc_off("cannot give the shared cache directory %s, just made, to group %d (AMP_CACHE_SHARED=%s): %s",
                        amp__dc_path, (int)pin, shared, strerror(errno));
            return;
        }
        /* Another process that made it a moment ago gives it to the group
         * right after (above): up to 200 waits of 1 ms for that, as for
         * a key being published. */
        for (int waits = 0; pinned && !made && sb.st_gid != pin && waits < 200; ++waits) {
            (void)nanosleep(&(struct timespec){0, 1000000}, NULL);
            if (fstat(amp__dc_fd, &sb) != 0) break;
        }
        amp__dc_gid = sb.st_gid;
        if (pinned && sb.st_gid != pin) {
            amp__dc_off("shared cache directory %s belongs to group %d, not to group %d (AMP_CACHE_SHARED=%s)",
                        amp__dc_path, (int)sb.st_gid, (int)pin, shared);
            return;
        }
        if (!amp__in_group(sb.st_gid)) {
            amp__dc_off("shared cache directory %s belongs to group %d, which this process is not in", amp__dc_path,
                        (int)sb.st_gid);
            return;
        }
        /* Its owner can replace the key and every entry whatever the mode
         * says: one outside the group is not someone the user trusted. */
        if (!amp__owner_trusted(sb.st_uid)) {
            amp__dc_off("shared cache directory %s is owned by uid %d, who is not a member of its group %d (only this "
                        "user, root or a member may own it)", amp__dc_path, (int)sb.st_uid, (int)sb.st_gid);
            return;
        }
        /* One we just made: usable by the group, and set-gid so that what
         * the members create is of its group. */
        if (made && sb.st_uid == geteuid() && (sb.st_mode & 07777) != 02770) {
            if (fchmod(amp__dc_fd, 02770) != 0 || fstat(amp__dc_fd, &sb) != 0) {
                amp__dc_off("cannot make the shared cache directory %s mode 2770: %s", amp__dc_path, strerror(errno));
                return;
            }
        }
        /* The group is the directory's: whoever could put another directory
         * at its path (of a group of theirs that the user is in too) would
         * choose it. So nobody outside the group may change the way there. */
        if (!amp__dc_ancestors_safe(pinned)) return;
    } else {
        if (sb.st_uid != geteuid()) {
            amp__dc_off("cache directory %s is owned by uid %d, not by this user (uid %d); set AMP_CACHE_SHARED=group "
                        "to share a cache with a group", amp__dc_path, (int)sb.st_uid, (int)geteuid());
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
 * nothing it did not write) and named in amp_cache_get_info. count: the
 * build is counted as one that could not use the disk cache (at the store;
 * the load that met it first only names it, so that one build counts
 * once). */
static bool amp__dc_clear_dir(const char *name, bool count)
{
    if (unlinkat(amp__dc_fd, name, AT_REMOVEDIR) == 0) return true;
    amp__dc_note("disk cache entry %.80s is a directory with something in it: remove it (in the cache directory) to "
                 "cache this build", name);
    if (count) atomic_fetch_add(&amp__dc_uncacheable, 1);
    return false;
}

static void amp__entry_name(const uint8_t key[32], char out[80])
{
    char hex[65];
    amp__hex(key, 32, hex);
    snprintf(out, 80, "%s.ampc", hex);
}

/* false: libcrypto failed, and mac (zeros) is no MAC: nothing is stored
 * with it, and no entry is loaded by comparing with it. */
static bool amp__entry_mac(const amp__entry_header *h, const void *payload, size_t size, uint8_t mac[32])
{
    return amp__hmac_sha256(amp__dc_key, h, offsetof(amp__entry_header, mac), payload, size, mac);
}

void *amp__dcache_load(const uint8_t key[32], size_t *size)
{
    char name[80], buf[160];
    void *data = NULL;
    bool bad = false;
    const char *why = NULL; /* a refusal the last note names */
    amp__entry_header h;
    struct stat sb;
    *size = 0;
    if (!amp__dc_ready()) return NULL;
    amp__entry_name(key, name);
    int fd = openat(amp__dc_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        if (e == ELOOP || e == ENXIO) { /* a symlink or a socket: planted */
            atomic_fetch_add(&amp__dc_rejected, 1);
            amp__dc_note("disk cache entry %.80s is a %s, which hipamp never writes: refused, removed and rebuilt",
                         name, e == ELOOP ? "symbolic link" : "socket");
            (void)unlinkat(amp__dc_fd, name, 0);
        } else if (e == EACCES || e == EPERM) {
            /* There but not readable by us (shared: another member's, made
             * before entries were given to the group): a miss, rebuilt and
             * replaced, but not a silent one. */
            atomic_fetch_add(&amp__dc_misses, 1);
            if (fstatat(amp__dc_fd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0)
                amp__dc_note("disk cache entry %.80s (uid %d, group %d, mode %04o) cannot be read: %s; rebuilt", name,
                             (int)sb.st_uid, (int)sb.st_gid, (unsigned)(sb.st_mode & 07777), strerror(e));
            else
                amp__dc_note("disk cache entry %.80s cannot be read: %s; rebuilt", name, strerror(e));
        } else {
            atomic_fetch_add(&amp__dc_misses, 1);
        }
        return NULL;
    }
    if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        close(fd);
        atomic_fetch_add(&amp__dc_rejected, 1);
        if (amp__dc_clear_dir(name, false))
            amp__dc_note("disk cache entry %.80s was an empty directory: refused, removed and rebuilt", name);
        return NULL;
    }
    /* Every refusal says why (amp_cache_get_info): a corrupt entry is
     * otherwise only counted, and the user cannot tell which file it was. */
    if (fstat(fd, &sb) != 0) why = "not examinable";
    else if ((why = amp__file_problem(&sb, buf, sizeof buf))) {
    } else if (sb.st_size < (off_t)sizeof h || (uint64_t)sb.st_size > sizeof h + (uint64_t)AMP__ENTRY_MAX) {
        snprintf(buf, sizeof buf, "%lld bytes (an entry has %zu to %llu)", (long long)sb.st_size, sizeof h,
                 (unsigned long long)sizeof h + AMP__ENTRY_MAX);
        why = buf;
    } else if (!amp__fd_read_all(fd, &h, sizeof h)) why = "unreadable";
    else if (memcmp(h.magic, AMP__ENTRY_MAGIC, 8) || h.format != AMP__ENTRY_FORMAT)
        why = "not an entry of this library's format";
    else if (memcmp(h.key, key, 32)) why = "the entry of another key";
    else if (h.payload_size != (uint64_t)sb.st_size - sizeof h) {
        snprintf(buf, sizeof buf, "%lld bytes, not the %llu its header says", (long long)sb.st_size,
                 (unsigned long long)h.payload_size + sizeof h);
        why = buf;
    }
    if (why) {
        bad = true;
        goto out;
    }
    if (!(data = malloc(h.payload_size ? h.payload_size : 1))) goto out;
    uint8_t mac[32];
    if (!amp__fd_read_all(fd, data, h.payload_size)) {
        why = "unreadable";
        bad = true;
        goto out;
    }
    if (!amp__entry_mac(&h, data, h.payload_size, mac)) {
        /* Not the entry's fault: left in place, and not loaded. */
        free(data);
        data = NULL;
        atomic_fetch_add(&amp__dc_rejected, 1);
        amp__dc_note("the MAC of disk cache entry %.80s could not be computed (OpenSSL's libcrypto failed): not loaded",
                     name);
        goto out;
    }
    if (CRYPTO_memcmp(mac, h.mac, 32) != 0) {
        if (!amp__dc_key_current()) { /* most likely made under the new key: not ours to remove */
            free(data);
            data = NULL;
            atomic_fetch_add(&amp__dc_rejected, 1);
            goto out;
        }
        why = "corrupt or forged (its MAC does not match)";
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
        /* ENOENT: another process removed it first. */
        int unlink_err = unlinkat(amp__dc_fd, name, 0) == 0 || errno == ENOENT ? 0 : errno;
        if (why && !unlink_err) amp__dc_note("disk cache entry %.80s is %s: refused and removed", name, why);
        else if (why)
            amp__dc_note("disk cache entry %.80s is %s: refused (not removed: %s)", name, why, strerror(unlink_err));
    } else if (data) {
        atomic_fetch_add(&amp__dc_hits, 1);
    }
    return data;
}

void amp__dcache_refused(const uint8_t key[32], const char *why)
{
    char name[80];
    amp__entry_name(key, name);
    atomic_fetch_sub(&amp__dc_hits, 1);
    atomic_fetch_add(&amp__dc_rejected, 1);
    amp__dc_note("disk cache entry %.80s was refused by the back end (rebuilt): %.150s", name, why ? why : "");
}

/* A store that failed at step (errno e): counted as a build that could not
 * use the disk cache, and said why. */
static void amp__dc_store_failed(const char *step, int e)
{
    char why[256];
    snprintf(why, sizeof why, "storing a disk cache entry in %.100s failed (%s: %s)%s", amp__dc_path, step, strerror(e),
             amp__dc_shared && (e == EACCES || e == EPERM)
                 ? "; a shared cache directory must be writable by its group (mode 2770)"
                 : "");
    amp__dcache_note_uncacheable(why);
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
    if (!amp__dc_key_current()) {
        atomic_fetch_add(&amp__dc_uncacheable, 1);
        return;
    }
    amp__entry_name(key, name);
    amp__tmp_name(tmp, sizeof tmp);
    memset(&h, 0, sizeof h);
    memcpy(h.magic, AMP__ENTRY_MAGIC, 8);
    h.format = AMP__ENTRY_FORMAT;
    memcpy(h.key, key, 32);
    h.payload_size = size;
    if (!amp__entry_mac(&h, data, size, h.mac)) {
        amp__dcache_note_uncacheable("the MAC of a disk cache entry could not be computed (OpenSSL's libcrypto "
                                     "failed): not stored");
        return;
    }
    int fd = openat(amp__dc_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, amp__dc_shared ? 0640 : 0600);
    if (fd < 0) {
        amp__dc_store_failed("creating a file", errno);
        return;
    }
    amp__tmp_hold(fd);
    const char *step = NULL; /* what failed; "" when it is named already */
    int err = 0;
    if (!amp__share_file(fd)) step = "giving it to the directory's group";
    else if (!amp__fd_write_all(fd, &h, sizeof h) || !amp__fd_write_all(fd, data, size)) step = "writing it";
    if (step) err = errno;
    if (close(fd) != 0 && !step) {
        step = "writing it";
        err = errno;
    }
    if (!step && renameat(amp__dc_fd, tmp, amp__dc_fd, name) != 0) {
        err = errno;
        /* A directory appeared at the name since the load looked. */
        if (err != EISDIR && err != ENOTEMPTY && err != EEXIST) step = "renaming it";
        else if (!amp__dc_clear_dir(name, true)) step = "";
        else if (renameat(amp__dc_fd, tmp, amp__dc_fd, name) != 0) {
            step = "renaming it";
            err = errno;
        }
    }
    if (step) {
        (void)unlinkat(amp__dc_fd, tmp, 0);
        if (*step) amp__dc_store_failed(step, err);
        return;
    }
    atomic_fetch_add(&amp__dc_stores, 1);
}

void amp__dcache_note_uncacheable(const char *why)
{
    atomic_fetch_add(&amp__dc_uncacheable, 1);
    pthread_mutex_lock(&amp__dc_note_lock);
    snprintf(amp__dc_last_uncacheable, sizeof amp__dc_last_uncacheable, "%s", why);
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
    amp__fit_text(out->dir, sizeof out->dir, amp__dc_path);
    amp__fit_text(out->reason, sizeof out->reason, on ? "" : amp__dc_reason);
    pthread_mutex_lock(&amp__dc_note_lock);
    amp__fit_text(out->last_uncacheable, sizeof out->last_uncacheable, amp__dc_last_uncacheable);
    pthread_mutex_unlock(&amp__dc_note_lock);
    amp__mcache_count(&out->memory_hits, &out->memory_misses);
    out->disk_hits = atomic_load(&amp__dc_hits);
    out->disk_misses = atomic_load(&amp__dc_misses);
    out->disk_stores = atomic_load(&amp__dc_stores);
    out->disk_rejected = atomic_load(&amp__dc_rejected);
    out->uncacheable_builds = atomic_load(&amp__dc_uncacheable);
    return AMP_OK;
}
