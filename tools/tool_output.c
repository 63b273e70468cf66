/* tool_output.c — the tools' input and output files (tool_output.h): a
 * source read whole and refused with NUL bytes; a file output written to a
 * temporary file beside it and renamed into place, keeping the old file's
 * mode; a device or FIFO output written in place; one of the process's
 * descriptors written through it; symbolic links followed hop by hop, each
 * checked, never replaced; the checks
 * that keep a run from writing over its input or twice to one place; and
 * standard output's write errors. */
#define _XOPEN_SOURCE 700 /* mkstemp, fdopen, fchmod, fchown, readlink, O_NOFOLLOW, F_DUPFD_CLOEXEC */
#include "tool_output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool is_stdout(const char *dest) { return !dest || !strcmp(dest, "-"); }

/* Where a name points in its directory: the directory's device and inode,
 * and the last component. Two names with the same place are one file,
 * whether it exists yet or not. */
typedef struct place {
    dev_t dev;
    ino_t ino;
    const char *base;
    size_t base_len;
} place;

static bool place_of(const char *path, place *p)
{
    char dir[PATH_MAX];
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') --n;
    const char *slash = NULL;
    for (size_t i = 0; i < n; ++i)
        if (path[i] == '/') slash = path + i;
    if (!slash) snprintf(dir, sizeof dir, ".");
    else snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    struct stat st;
    if (stat(dir, &st) != 0) return false;
    p->dev = st.st_dev;
    p->ino = st.st_ino;
    p->base = slash ? slash + 1 : path;
    p->base_len = (size_t)(path + n - p->base);
    return true;
}

static bool same_place(const char *a, const char *b)
{
    place pa, pb;
    if (!place_of(a, &pa) || !place_of(b, &pb)) return !strcmp(a, b);
    return pa.dev == pb.dev && pa.ino == pb.ino && pa.base_len == pb.base_len && !memcmp(pa.base, pb.base, pa.base_len);
}

/* Links followed at an output's name before it is refused as a loop (the
 * kernel's own limit). */
enum { HOP_MAX = 40 };

/* What an output name leads to, its links followed one hop at a time. */
typedef struct out_file {
    bool exists;         /* false: nothing at the name yet (a new file) */
    bool via_link;       /* at least one link was followed */
    int fd;              /* >= 0: written through this process's descriptor fd */
    struct stat st;      /* the file at the end (fd: fstat of fd) */
    char path[PATH_MAX]; /* the name of that file, no link at its last component */
} out_file;

/* The descriptor a name stands for by its text (/dev/fd/N, /proc/self/fd/N,
 * /proc/PID/fd/N of this process, /dev/stdin, /dev/stdout, /dev/stderr), or
 * -1. Through such a name the kernel reopens the file (a regular file then
 * replaced whole, not appended to as the shell opened it), so the tool
 * writes through the descriptor itself instead. */
static int fd_name(const char *path)
{
    static const char *const std[] = {"/dev/stdin", "/dev/stdout", "/dev/stderr"};
    for (int i = 0; i < 3; ++i)
        if (!strcmp(path, std[i])) return i;
    char self[48];
    snprintf(self, sizeof self, "/proc/%ld/fd/", (long)getpid());
    const char *const dirs[] = {"/dev/fd/", "/proc/self/fd/", self};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; ++i) {
        size_t n = strlen(dirs[i]);
        if (strncmp(path, dirs[i], n) || !path[n]) continue;
        long v = 0;
        for (const char *c = path + n; *c; ++c) {
            if (*c < '0' || *c > '9' || v > INT_MAX / 10) return -1;
            v = v * 10 + (*c - '0');
        }
        return (int)v;
    }
    return -1;
}

/* Whether fd is a descriptor open for writing. */
static bool fd_writable(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl >= 0 && (fl & O_ACCMODE) != O_RDONLY;
}

/* What an output name leads to: its links followed hop by hop (readlink),
 * each of them this user's or root's, since another user's link, at the
 * name or further along, may have been planted to make the tool write
 * somewhere else. false after a message when the run may not write it.
 * A name of one of this process's descriptors, or a file that a standard
 * descriptor open for writing already writes (the same device and inode),
 * is written through that descriptor (of->fd). */
static bool out_lookup(const char *prog, const char *dest, out_file *of)
{
    struct stat ls;
    of->exists = of->via_link = false;
    of->fd = -1;
    if (strlen(dest) >= sizeof of->path) {
        fprintf(stderr, "%s: '%s': %s\n", prog, dest, strerror(ENAMETOOLONG));
        return false;
    }
    strcpy(of->path, dest);
    for (int hop = 0;; ++hop) {
        int fd = fd_name(of->path);
        if (fd >= 0) {
            if (!fd_writable(fd) || fstat(fd, &of->st) != 0) {
                fprintf(stderr, "%s: '%s' is descriptor %d, which is not open for writing\n", prog, dest, fd);
                return false;
            }
            of->exists = true;
            of->fd = fd;
            break;
        }
        if (lstat(of->path, &ls) != 0) {
            if (!of->via_link) return true; /* nothing there, or not reachable: the open will say */
            fprintf(stderr, "%s: '%s' is a symbolic link that leads nowhere ('%s': %s): refusing to replace it\n",
                    prog, dest, of->path, strerror(errno));
            return false;
        }
        if (!S_ISLNK(ls.st_mode)) {
            of->exists = true;
            of->st = ls;
            break;
        }
        if (ls.st_uid != geteuid() && ls.st_uid != 0) {
            if (!of->via_link)
                fprintf(stderr, "%s: '%s' is a symbolic link of another user (uid %lu): refusing to write through "
                                "it or to replace it\n", prog, dest, (unsigned long)ls.st_uid);
            else
                fprintf(stderr, "%s: '%s' leads through '%s', a symbolic link of another user (uid %lu): refusing "
                                "to write through it\n", prog, dest, of->path, (unsigned long)ls.st_uid);
            return false;
        }
        char to[PATH_MAX];
        ssize_t len = hop < HOP_MAX ? readlink(of->path, to, sizeof to) : -1;
        if (len < 0 || (size_t)len >= sizeof to) {
            fprintf(stderr, "%s: cannot follow the symbolic link '%s' (from '%s'): %s\n", prog, of->path, dest,
                    strerror(hop >= HOP_MAX ? ELOOP : len < 0 ? errno : ENAMETOOLONG));
            return false;
        }
        to[len] = '\0';
        of->via_link = true;
        /* A relative link is read from the directory that holds it. */
        const char *slash = strrchr(of->path, '/');
        size_t keep = to[0] == '/' || !slash ? 0 : (size_t)(slash - of->path) + 1;
        if (keep + (size_t)len >= sizeof of->path) {
            fprintf(stderr, "%s: '%s': %s\n", prog, dest, strerror(ENAMETOOLONG));
            return false;
        }
        memcpy(of->path + keep, to, (size_t)len + 1);
    }
    /* A file a standard descriptor writes: "-o build.log >> build.log"
     * appends, as the shell asked, rather than replacing the file under
     * the descriptor (whose later writes would go to an unlinked inode). */
    static const int std_fds[] = {STDOUT_FILENO, STDERR_FILENO, STDIN_FILENO};
    for (size_t i = 0; of->fd < 0 && i < sizeof std_fds / sizeof std_fds[0]; ++i) {
        struct stat fs;
        if (fd_writable(std_fds[i]) && fstat(std_fds[i], &fs) == 0 && fs.st_dev == of->st.st_dev &&
            fs.st_ino == of->st.st_ino && fs.st_rdev == of->st.st_rdev)
            of->fd = std_fds[i];
    }
    if (S_ISREG(of->st.st_mode) || S_ISCHR(of->st.st_mode) || S_ISFIFO(of->st.st_mode) ||
        (of->fd >= 0 && S_ISSOCK(of->st.st_mode)))
        return true;
    fprintf(stderr, "%s: '%s' is %s%s: refusing to write it (use -o - for standard output)\n", prog, dest,
            of->via_link ? "a symbolic link to " : "",
            S_ISDIR(of->st.st_mode) ? "a directory" : S_ISBLK(of->st.st_mode) ? "a block device"
                                                                                 : "a socket or special file");
    return false;
}

/* The file an output name stands for now ("-": standard output's). */
static bool out_identity(const char *path, struct stat *st)
{
    return is_stdout(path) ? fstat(STDOUT_FILENO, st) == 0 : stat(path, st) == 0;
}

bool tool_out_allowed(const char *prog, const char *dest, const char *const *inputs, size_t ninputs,
                      const char *const *others, size_t nothers)
{
    if (!is_stdout(dest)) {
        out_file of;
        if (!out_lookup(prog, dest, &of)) return false;
        /* The rename replaces the file: an input reached through it (the
         * same inode, or a link to it elsewhere) would be lost. */
        for (size_t i = 0; of.exists && S_ISREG(of.st.st_mode) && i < ninputs; ++i) {
            struct stat is;
            if (stat(inputs[i], &is) == 0 && is.st_dev == of.st.st_dev && is.st_ino == of.st.st_ino) {
                fprintf(stderr, "%s: '%s' is the input '%s': refusing to overwrite it\n", prog, dest, inputs[i]);
                return false;
            }
        }
    }
    for (size_t i = 0; i < nothers; ++i) {
        if (!others[i]) continue;
        struct stat a, b;
        bool same = is_stdout(dest) && is_stdout(others[i]);
        if (!is_stdout(dest) && !is_stdout(others[i])) same = same_place(dest, others[i]);
        if (!same && out_identity(dest, &a) && out_identity(others[i], &b))
            same = a.st_dev == b.st_dev && a.st_ino == b.st_ino;
        if (same) {
            fprintf(stderr, "%s: '%s' and '%s' are the same file: one output would replace or mix with the other\n",
                    prog, others[i], dest);
            return false;
        }
    }
    return true;
}

/* Whether this process's standard output is the file fs. */
static bool is_our_stdout(const struct stat *fs)
{
    struct stat so;
    return fstat(STDOUT_FILENO, &so) == 0 && so.st_dev == fs->st_dev && so.st_ino == fs->st_ino &&
           so.st_rdev == fs->st_rdev;
}

/* One of this process's descriptors, written as it was opened (appending
 * when the shell opened it so), through a duplicate that closing leaves
 * the descriptor open. */
static bool open_descriptor(tool_out *o, const out_file *of)
{
    if (of->fd == STDOUT_FILENO) (void)fflush(stdout); /* what the tool printed before goes first */
    int fd = fcntl(of->fd, F_DUPFD_CLOEXEC, 3);
    /* "w" leaves the descriptor's flags alone ("a" would set O_APPEND on
     * the description the descriptor shares) and truncates nothing. */
    if (fd < 0 || !(o->f = fdopen(fd, "wb"))) {
        fprintf(stderr, "%s: cannot write '%s' (descriptor %d): %s\n", o->prog, o->dest, of->fd, strerror(errno));
        if (fd >= 0) close(fd);
        return false;
    }
    o->to_stdout = of->fd == STDOUT_FILENO || is_our_stdout(&of->st);
    return true;
}

/* A device or FIFO, opened where it is. A FIFO is opened without waiting
 * for a reader (there may be none, ever), then written blocking. */
static bool open_in_place(tool_out *o, const out_file *of)
{
    const struct stat *st = &of->st;
    /* of->path has no link at its end: O_NOFOLLOW keeps one swapped in
     * since from being followed. */
    int fd = open(of->path, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW | (S_ISFIFO(st->st_mode) ? O_NONBLOCK : 0));
    struct stat fs;
    if (fd < 0) {
        if (errno == ENXIO && S_ISFIFO(st->st_mode))
            fprintf(stderr, "%s: cannot write '%s': it is a FIFO that no process is reading\n", o->prog, o->dest);
        else if (errno == ELOOP)
            fprintf(stderr, "%s: '%s' changed while it was being opened\n", o->prog, o->dest);
        else
            fprintf(stderr, "%s: cannot open '%s': %s\n", o->prog, o->dest, strerror(errno));
        return false;
    }
    /* What was opened is the file that was checked (the same device, inode
     * and device number), not one put in its place since. */
    if (fstat(fd, &fs) != 0 || fs.st_dev != st->st_dev || fs.st_ino != st->st_ino || fs.st_rdev != st->st_rdev ||
        !(S_ISCHR(fs.st_mode) || S_ISFIFO(fs.st_mode))) {
        fprintf(stderr, "%s: '%s' changed while it was being opened\n", o->prog, o->dest);
        close(fd);
        return false;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    o->to_stdout = is_our_stdout(&fs);
    if (!(o->f = fdopen(fd, "wb"))) {
        fprintf(stderr, "%s: cannot write '%s': %s\n", o->prog, o->dest, strerror(errno));
        close(fd);
        return false;
    }
    return true;
}

bool tool_out_open(tool_out *o, const char *prog, const char *dest)
{
    o->prog = prog;
    o->f = NULL;
    o->dest = is_stdout(dest) ? NULL : dest;
    o->target = NULL;
    o->tmp = NULL;
    o->to_stdout = !o->dest;
    if (!o->dest) {
        o->f = stdout;
        return true;
    }
    out_file of;
    int fd = -1;
    if (!out_lookup(prog, dest, &of)) return false;
    if (of.fd >= 0) return open_descriptor(o, &of);
    if (of.exists && !S_ISREG(of.st.st_mode)) return open_in_place(o, &of);
    /* A regular file is replaced whole; through links, the file they lead
     * to is, and the links stay. */
    if (!(o->target = strdup(of.exists ? of.path : dest))) {
        fprintf(stderr, "%s: out of memory\n", prog);
        goto fail;
    }
    size_t n = strlen(o->target) + sizeof ".tmp.XXXXXX";
    if (!(o->tmp = malloc(n))) {
        fprintf(stderr, "%s: out of memory\n", prog);
        goto fail;
    }
    snprintf(o->tmp, n, "%s.tmp.XXXXXX", o->target);
    if ((fd = mkstemp(o->tmp)) < 0) {
        fprintf(stderr, "%s: cannot create '%s': %s\n", prog, o->tmp, strerror(errno));
        goto fail;
    }
    /* mkstemp makes the file private (0600). A file replaced keeps its
     * permission bits (a private one stays private) and, as root, its
     * owner and group; set-id bits only where the owner is kept. A new
     * file gets the mode any new file of this user would have. */
    if (of.exists) {
        bool owner_kept = of.st.st_uid == geteuid() && of.st.st_gid == getegid();
        if (!owner_kept && geteuid() == 0) owner_kept = fchown(fd, of.st.st_uid, of.st.st_gid) == 0;
        (void)fchmod(fd, of.st.st_mode & (owner_kept ? 07777 : 01777));
    } else {
        mode_t mask = umask(0);
        umask(mask);
        (void)fchmod(fd, 0666 & ~mask);
    }
    if (!(o->f = fdopen(fd, "wb"))) {
        fprintf(stderr, "%s: cannot write '%s': %s\n", prog, o->tmp, strerror(errno));
        close(fd);
        unlink(o->tmp);
        goto fail;
    }
    return true;
fail:
    free(o->tmp);
    free(o->target);
    o->tmp = o->target = NULL;
    return false;
}

bool tool_out_close(tool_out *o, bool ok)
{
    if (!o->dest) {
        /* What failed before the flush left its mark in ferror. */
        errno = 0;
        if (fflush(stdout) != 0 || ferror(stdout)) {
            if (ok) fprintf(stderr, "%s: write error: %s\n", o->prog, strerror(errno ? errno : EIO));
            ok = false;
        }
        return ok;
    }
    const char *name = o->tmp ? o->tmp : o->dest;
    if (o->f) {
        bool err = ferror(o->f) != 0;
        errno = 0;
        if (fclose(o->f) != 0 || err) {
            if (ok) fprintf(stderr, "%s: cannot write '%s': %s\n", o->prog, name, strerror(errno ? errno : EIO));
            ok = false;
        }
        o->f = NULL;
    }
    if (o->tmp) {
        if (ok && rename(o->tmp, o->target) != 0) {
            fprintf(stderr, "%s: cannot rename '%s' to '%s': %s\n", o->prog, o->tmp, o->target, strerror(errno));
            ok = false;
        }
        if (!ok) unlink(o->tmp);
    }
    free(o->tmp);
    free(o->target);
    o->tmp = o->target = NULL;
    return ok;
}

bool tool_stdout_close(const char *prog)
{
    bool err = ferror(stdout) != 0;
    errno = 0;
    if (fflush(stdout) != 0 || err) {
        fprintf(stderr, "%s: write error: %s\n", prog, strerror(errno ? errno : EIO));
        fclose(stdout);
        return false;
    }
    errno = 0;
    if (fclose(stdout) != 0) {
        fprintf(stderr, "%s: write error: %s\n", prog, strerror(errno ? errno : EIO));
        return false;
    }
    return true;
}

char *tool_read_source(const char *prog, const char *path, size_t *size)
{
    char *buf = NULL;
    size_t cap = 0, len = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "%s: cannot open '%s': %s\n", prog, path, strerror(errno));
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        fprintf(stderr, "%s: '%s' is not a regular file\n", prog, path);
        goto fail;
    }
    for (;;) {
        if (cap - len < 4096) {
            size_t ncap = cap ? cap * 2 : 65536;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                fprintf(stderr, "%s: out of memory reading '%s'\n", prog, path);
                goto fail;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t got = read(fd, buf + len, cap - len - 1);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            fprintf(stderr, "%s: cannot read '%s': %s\n", prog, path, strerror(errno));
            goto fail;
        }
        if (got == 0) break;
        len += (size_t)got;
    }
    const char *nul = memchr(buf, '\0', len);
    if (nul) {
        fprintf(stderr, "%s: '%s' contains a NUL byte (at offset %zu): a kernel source is text, and "
                        "amp_program_build would stop at it\n", prog, path, (size_t)(nul - buf));
        goto fail;
    }
    buf[len] = '\0';
    close(fd);
    *size = len;
    return buf;
fail:
    if (fd >= 0) close(fd);
    free(buf);
    return NULL;
}
