/* cpu_files.c — the CPU compiler's files: its temporary directory (TMPDIR, every directory above it checked), what dead processes left there (swept), files written and read through a build directory's descriptor, and the dependency lists the compiler writes. */
#include "cpu_internal.h"

#include "base/trusted_path.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------- files */

/* Writes the parts to name relative to dirfd (path: its name in messages).
 * In the build directory (nofollow) the file is opened through the
 * directory's descriptor without following a link: whatever the path's
 * components have become, it lands in the directory this process made
 * (mode 0700, so nothing else is planted there). The loop dump's path is
 * the user's and may be a link (dirfd AT_FDCWD). */
amp_status amp__cpu_write_file(int dirfd, const char *name, const char *path, bool nofollow,
                                      const char *const *parts, size_t nparts)
{
    amp_status st = AMP_OK;
    FILE *f = NULL;
    int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0), 0666);
    if (fd < 0 || !(f = fdopen(fd, "wb"))) {
        st = amp__fail(AMP_ERROR_DEVICE, "CPU accelerator: cannot create %s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return st;
    }
    for (size_t i = 0; i < nparts; ++i)
        if (parts[i] && fputs(parts[i], f) == EOF) {
            st = amp__fail(AMP_ERROR_DEVICE, "CPU accelerator: cannot write %s: %s", path, strerror(errno));
            break;
        }
    if (fclose(f) != 0 && st == AMP_OK)
        st = amp__fail(AMP_ERROR_DEVICE, "CPU accelerator: cannot write %s: %s", path, strerror(errno));
    return st;
}

/* File name in the build directory dirfd (shown as path): the compiler's
 * output, read through the directory this process made and holds open, so
 * that what it reads is what was written there, whatever became of the
 * directory's name (mode 0700: what is in it is this user's, whatever
 * the umask made of its files' modes). */
amp_status amp__cpu_read_file(int dirfd, const char *name, const char *path, void **data, size_t *size)
{
    amp_status st = AMP_OK;
    char *buf = NULL;
    FILE *f = NULL;
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || !(f = fdopen(fd, "rb"))) {
        st = amp__fail(AMP_ERROR_COMPILE, "CPU accelerator: the compiler wrote no %s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return st;
    }
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid()) {
        st = amp__fail(AMP_ERROR_COMPILE, "CPU accelerator: %s is not a regular file of this user's: nothing built "
                       "is loaded", path);
        goto fail;
    }
    if (sb.st_size <= 0) {
        st = amp__fail(AMP_ERROR_COMPILE, "CPU accelerator: the compiler wrote an empty %s", path);
        goto fail;
    }
    if (!(buf = malloc((size_t)sb.st_size + 1))) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for a %lld-byte file",
                       (long long)sb.st_size);
        goto fail;
    }
    if (fread(buf, 1, (size_t)sb.st_size, f) != (size_t)sb.st_size) {
        st = amp__fail(AMP_ERROR_COMPILE, "CPU accelerator: cannot read %s", path);
        goto fail;
    }
    buf[sb.st_size] = 0;
    *data = buf;
    *size = (size_t)sb.st_size;
    buf = NULL;
fail:
    free(buf);
    fclose(f);
    return st;
}

/* Remove directory fd's contents (no symlink is followed), depth-limited. */
static void amp__cpu_empty_dir(int fd, int depth)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (unlinkat(dirfd(d), e->d_name, 0) == 0) continue;
        if ((errno == EISDIR || errno == EPERM) && depth > 0) {
            int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) amp__cpu_empty_dir(sub, depth - 1);
            unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
        }
    }
    closedir(d);
}

void amp__cpu_remove_dir(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) amp__cpu_empty_dir(fd, 4);
    rmdir(path);
}

static const char *amp__cpu_tmp_root(void)
{
    const char *tmp = amp__env("TMPDIR");
    return tmp ? tmp : "/tmp";
}

/* Why the directory st describes (path) would let another user rename or
 * remove what is in it: its owner (neither us nor root) may, and so may
 * anyone who may write it when it has no sticky bit. NULL when nobody
 * else may. */
static const char *amp__cpu_dir_problem(const struct stat *st, char *buf, size_t n)
{
    if (!S_ISDIR(st->st_mode)) return "is not a directory (any more)";
    if (st->st_uid != geteuid() && st->st_uid != 0) {
        snprintf(buf, n, "is owned by uid %d, another user", (int)st->st_uid);
        return buf;
    }
    if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX))
        return st->st_mode & S_IWOTH ? "is writable by every user and has no sticky bit"
                                     : "is writable by its group and has no sticky bit";
    return NULL;
}

amp_status amp__cpu_tmp_dir(amp_status code, char root[PATH_MAX])
{
    const char *tmp = amp__cpu_tmp_root();
    if (!realpath(tmp, root))
        return amp__fail(code, "CPU accelerator: the temporary directory %s (TMPDIR) cannot be used: %s", tmp,
                         strerror(errno));
    /* Each directory from / down to root: whoever may rename an ancestor
     * may put a tree of theirs in place of everything below it. Each is
     * examined only once those above it are known to be safe, so what
     * was examined stays what the name means. */
    char dir[PATH_MAX], owner[64];
    const char *why = NULL;
    struct stat sb;
    size_t len = strlen(root);
    for (size_t end = 1; end <= len; ++end) {
        if (end != 1 && end < len && root[end] != '/') continue; /* "/", then each component */
        memcpy(dir, root, end);
        dir[end] = 0;
        if (lstat(dir, &sb) != 0) {
            why = "cannot be examined";
            memset(&sb, 0, sizeof sb);
        } else {
            why = amp__cpu_dir_problem(&sb, owner, sizeof owner);
        }
        if (why) break;
    }
    if (!why) return AMP_OK;
    const char *risk = "so another user could put their files in place of those the CPU accelerator makes there (the "
                       "compiler's output, a module being loaded); none is made there: set TMPDIR to a directory "
                       "only you and root can change, in directories only you and root can change, or with the "
                       "sticky bit (as /tmp)";
    if (!strcmp(dir, root))
        return amp__fail(code, "CPU accelerator: the temporary directory %s (TMPDIR) %s (mode %04o), %s", root, why,
                         (unsigned)(sb.st_mode & 07777), risk);
    return amp__fail(code, "CPU accelerator: the temporary directory %s (TMPDIR) is in %s, which %s (mode %04o): "
                     "its owner or those who may write it could rename the temporary directory away, %s",
                     root, dir, why, (unsigned)(sb.st_mode & 07777), risk);
}

bool amp__cpu_dir_claim(int fd)
{
    struct stat sb;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) return false;
    /* A sweep that locked it between mkdtemp and the flock removed it. */
    if (fstat(fd, &sb) != 0) return false;
    if (sb.st_nlink == 0) {
        errno = ENOENT;
        return false;
    }
    return true;
}

/* Directories (and module files) of processes that died mid-compile, and
 * their precompiled headers' directories: named hipamp-cpu-<pid>-... or
 * hipamp-pch-<pid>-..., owned by this user, their pid gone. The pid alone
 * does not say so: a process of another PID namespace sharing TMPDIR (a
 * container) may have that pid there and be alive, and removing its
 * directories under it fails its builds (its compiler is handed paths in
 * them). So a directory is removed only while this process holds its
 * flock, which its maker holds for as long as it uses it
 * (amp__cpu_dir_claim). */
static void amp__cpu_sweep(void)
{
    const char *root = amp__cpu_tmp_root();
    DIR *d = opendir(root);
    if (!d) return;
    size_t pl = strlen(AMP__CPU_TMP_PREFIX);
    _Static_assert(sizeof AMP__CPU_TMP_PREFIX == sizeof AMP__CPU_PCH_PREFIX, "the prefixes' lengths are one");
    pid_t self = getpid();
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, AMP__CPU_TMP_PREFIX, pl) && strncmp(e->d_name, AMP__CPU_PCH_PREFIX, pl)) continue;
        char *end = NULL;
        long pid = strtol(e->d_name + pl, &end, 10);
        if (end == e->d_name + pl || *end != '-' || pid <= 0 || pid == self) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        struct stat sb;
        if (fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || sb.st_uid != geteuid()) continue;
        if (S_ISDIR(sb.st_mode)) {
            int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd < 0) continue;
            /* Held until the directory is gone: its maker is alive where
             * it cannot be locked. */
            if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
                close(fd);
                continue;
            }
            int keep = dup(fd); /* amp__cpu_empty_dir closes fd */
            amp__cpu_empty_dir(fd, 4);
            unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
            if (keep >= 0) close(keep);
        } else if (S_ISREG(sb.st_mode)) {
            /* A module file: loaded through its descriptor, never by this
             * name, so unlinking a live one takes nothing from its loader. */
            unlinkat(dirfd(d), e->d_name, 0);
        }
    }
    closedir(d);
}

static pthread_once_t amp__cpu_sweep_once_ctl = PTHREAD_ONCE_INIT;

void amp__cpu_sweep_once(void) { pthread_once(&amp__cpu_sweep_once_ctl, amp__cpu_sweep); }

/* ------------------------------------------------------- dependencies */

/* line (l bytes) and a line break after the n bytes of *buf (cap bytes
 * held), grown as needed; false (and *buf freed) when no memory. */
static bool amp__cpu_line_append(char **buf, size_t *n, size_t *cap, const char *line, size_t l)
{
    if (*n + l + 2 > *cap) {
        size_t c = *cap;
        while (*n + l + 2 > c) c *= 2;
        char *q = realloc(*buf, c);
        if (!q) {
            free(*buf);
            *buf = NULL;
            return false;
        }
        *buf = q;
        *cap = c;
    }
    memcpy(*buf + *n, line, l);
    *n += l;
    (*buf)[(*n)++] = '\n';
    (*buf)[*n] = '\0';
    return true;
}

/* Whether abs names a precompiled header's origin in some process's
 * private directory: .../hipamp-pch-<...>/amp_lib.hpp. */
static bool amp__cpu_pch_origin(const char *abs)
{
    const char *base = strrchr(abs, '/');
    if (!base || base == abs || strcmp(base + 1, AMP__CPU_PCH_NAME)) return false;
    const char *dir = base - 1;
    while (dir > abs && *dir != '/') --dir;
    return !strncmp(dir + 1, AMP__CPU_PCH_PREFIX, strlen(AMP__CPU_PCH_PREFIX));
}

char *amp__cpu_deps(const char *text, const char *skip, const char *skip_dir, bool resolve, bool relative_unnamed,
                    bool pch_origin)
{
    size_t cap = 256, n = 0;
    char *out = malloc(cap);
    if (!out) return NULL;
    out[0] = 0;
    const char *p = strchr(text, ':');
    if (!p) return out;
    p++;
    char word[PATH_MAX];
    bool first = true; /* the next file is a target's first */
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || (p[0] == '\\' && (p[1] == '\n' || p[1] == '\r')))
            p += p[0] == '\\' ? 2 : 1;
        if (!*p) break;
        size_t w = 0;
        bool cut = false;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            if (p[0] == '\\' && (p[1] == ' ' || p[1] == '#' || p[1] == '\\')) p++;
            else if (p[0] == '$' && p[1] == '$') p++;
            else if (p[0] == '\\' && (p[1] == '\n' || p[1] == '\r')) break;
            if (w + 1 < sizeof word) word[w++] = *p;
            else cut = true;
            p++;
        }
        word[w] = 0;
        if (w && word[w - 1] == ':') { /* a target: its files follow */
            first = true;
            continue;
        }
        if (!w || !strcmp(word, skip)) continue;
        const bool was_first = first;
        first = false;
        char abs[PATH_MAX];
        /* A name it cannot hold stays in the list, not absolute: the check
         * of what the compiler read refuses it (lib/core/program.c). */
        if (cut || (relative_unnamed && word[0] != '/') ||
            (!(resolve && realpath(word, abs)) && !amp__path_tidy(word, abs, sizeof abs)))
            snprintf(abs, sizeof abs, "?%.200s", word);
        size_t l = strlen(abs), sl = skip_dir ? strlen(skip_dir) : 0;
        if (sl && !strncmp(abs, skip_dir, sl) && abs[sl] == '/') continue;
        if (pch_origin && was_first && amp__cpu_pch_origin(abs)) continue;
        if (!amp__cpu_line_append(&out, &n, &cap, abs, l)) return NULL;
    }
    return out;
}

char *amp__cpu_deps_join(char *deps, const char *names)
{
    size_t n = strlen(deps), cap = n + 1;
    for (const char *p = names; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char word[PATH_MAX], abs[PATH_MAX];
        const char *line = abs;
        if (!len) line = NULL;
        else if (p[0] == '?' || len >= sizeof word) snprintf(abs, sizeof abs, "%s%.*s", p[0] == '?' ? "" : "?",
                                                            (int)(len < 200 ? len : 200), p);
        else {
            memcpy(word, p, len);
            word[len] = '\0';
            if (!amp__path_tidy(word, abs, sizeof abs)) snprintf(abs, sizeof abs, "?%.200s", word);
        }
        p = nl ? nl + 1 : NULL;
        if (!line) continue;
        if (!amp__cpu_line_append(&deps, &n, &cap, line, strlen(line))) return NULL;
    }
    return deps;
}
