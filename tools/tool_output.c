/* tool_output.c — the tools' input and output files (tool_output.h): a
 * source read whole and refused with NUL bytes; a file output written to a
 * temporary file beside it and renamed into place; a device or FIFO output
 * written in place; symbolic links followed, never replaced; the checks
 * that keep a run from writing over its input or twice to one place; and
 * standard output's write errors. */
#define _XOPEN_SOURCE 700 /* mkstemp, fdopen, fchmod, realpath */
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

/* What an output that exists is, after following a link at its name: st
 * is the file it leads to. false after a message when the run may not
 * write it. *exists false: nothing is at dest yet (a new file). */
static bool out_lookup(const char *prog, const char *dest, bool *exists, struct stat *st)
{
    struct stat ls;
    *exists = false;
    if (lstat(dest, &ls) != 0) return true; /* nothing there, or not reachable: the open will say */
    if (S_ISLNK(ls.st_mode)) {
        /* A link of this user's (or root's, as /dev/stdout is) says where
         * the user means to write; another user's may have been planted to
         * make the tool write somewhere else. */
        if (ls.st_uid != geteuid() && ls.st_uid != 0) {
            fprintf(stderr, "%s: '%s' is a symbolic link of another user (uid %lu): refusing to write through it "
                            "or to replace it\n", prog, dest, (unsigned long)ls.st_uid);
            return false;
        }
        if (stat(dest, st) != 0) {
            fprintf(stderr, "%s: '%s' is a symbolic link that leads nowhere (%s): refusing to replace it\n", prog,
                    dest, strerror(errno));
            return false;
        }
    } else {
        *st = ls;
    }
    *exists = true;
    if (S_ISREG(st->st_mode) || S_ISCHR(st->st_mode) || S_ISFIFO(st->st_mode)) return true;
    fprintf(stderr, "%s: '%s' is %s%s: refusing to write it (use -o - for standard output)\n", prog, dest,
            S_ISLNK(ls.st_mode) ? "a symbolic link to " : "",
            S_ISDIR(st->st_mode) ? "a directory" : S_ISBLK(st->st_mode) ? "a block device" : "a socket or special file");
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
    struct stat ds;
    bool exists = false;
    if (!is_stdout(dest)) {
        if (!out_lookup(prog, dest, &exists, &ds)) return false;
        /* The rename replaces the file: an input reached through it (the
         * same inode, or a link to it elsewhere) would be lost. */
        for (size_t i = 0; exists && S_ISREG(ds.st_mode) && i < ninputs; ++i) {
            struct stat is;
            if (stat(inputs[i], &is) == 0 && is.st_dev == ds.st_dev && is.st_ino == ds.st_ino) {
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

/* A device or FIFO, opened where it is. A FIFO is opened without waiting
 * for a reader (there may be none, ever), then written blocking. */
static bool open_in_place(tool_out *o, const struct stat *st)
{
    int fd = open(o->dest, O_WRONLY | O_NOCTTY | O_CLOEXEC | (S_ISFIFO(st->st_mode) ? O_NONBLOCK : 0));
    struct stat fs;
    if (fd < 0) {
        if (errno == ENXIO && S_ISFIFO(st->st_mode))
            fprintf(stderr, "%s: cannot write '%s': it is a FIFO that no process is reading\n", o->prog, o->dest);
        else
            fprintf(stderr, "%s: cannot open '%s': %s\n", o->prog, o->dest, strerror(errno));
        return false;
    }
    /* What was opened is what was checked: not a regular file (which this
     * open would neither truncate nor replace whole). */
    if (fstat(fd, &fs) != 0 || !(S_ISCHR(fs.st_mode) || S_ISFIFO(fs.st_mode))) {
        fprintf(stderr, "%s: '%s' changed while it was being opened\n", o->prog, o->dest);
        close(fd);
        return false;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    struct stat so;
    o->to_stdout = fstat(STDOUT_FILENO, &so) == 0 && so.st_dev == fs.st_dev && so.st_ino == fs.st_ino &&
                   so.st_rdev == fs.st_rdev;
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
    struct stat st;
    bool exists = false;
    int fd = -1;
    if (!out_lookup(prog, dest, &exists, &st)) return false;
    if (exists && !S_ISREG(st.st_mode)) return open_in_place(o, &st);
    /* A regular file is replaced whole; through a link, the file the link
     * leads to is, and the link stays. */
    if (exists) {
        o->target = realpath(dest, NULL);
        struct stat ts;
        if (!o->target || stat(o->target, &ts) != 0 || ts.st_dev != st.st_dev || ts.st_ino != st.st_ino) {
            fprintf(stderr, "%s: cannot find the file '%s' leads to\n", prog, dest);
            goto fail;
        }
    } else if (!(o->target = strdup(dest))) {
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
    /* mkstemp makes the file private (0600); give it the mode any new file
     * of this user would have. */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask);
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
