/* tool_output.c — the tools' input and output files (tool_output.h): a
 * source read whole and refused with NUL bytes, outputs written to a
 * temporary file beside them and renamed into place, and the checks that
 * keep a run from writing through a device, over its input, or twice to one
 * place. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen, fchmod */
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

bool tool_out_allowed(const char *prog, const char *dest, const char *const *inputs, size_t ninputs,
                      const char *const *others, size_t nothers)
{
    if (is_stdout(dest)) return true;
    struct stat ds;
    if (lstat(dest, &ds) == 0) {
        if (!S_ISREG(ds.st_mode) && !S_ISLNK(ds.st_mode)) {
            fprintf(stderr, "%s: '%s' is %s, not a regular file: refusing to replace it (use -o - for standard "
                            "output)\n", prog, dest,
                    S_ISDIR(ds.st_mode) ? "a directory" : S_ISCHR(ds.st_mode) || S_ISBLK(ds.st_mode) ? "a device"
                                                        : S_ISFIFO(ds.st_mode) ? "a FIFO" : "a special file");
            return false;
        }
        /* The rename replaces the entry at dest: an input reached through
         * it (the same inode, or a link to it elsewhere) would be lost. */
        for (size_t i = 0; i < ninputs; ++i) {
            struct stat is;
            if (stat(inputs[i], &is) == 0 && is.st_dev == ds.st_dev && is.st_ino == ds.st_ino) {
                fprintf(stderr, "%s: '%s' is the input '%s': refusing to overwrite it\n", prog, dest, inputs[i]);
                return false;
            }
        }
    }
    for (size_t i = 0; i < nothers; ++i)
        if (others[i] && !is_stdout(others[i]) && same_place(dest, others[i])) {
            fprintf(stderr, "%s: '%s' and '%s' are the same file: one output would replace the other\n", prog,
                    others[i], dest);
            return false;
        }
    return true;
}

bool tool_out_open(tool_out *o, const char *prog, const char *dest)
{
    o->prog = prog;
    o->f = NULL;
    o->dest = is_stdout(dest) ? NULL : dest;
    o->tmp = NULL;
    if (!o->dest) {
        o->f = stdout;
        return true;
    }
    size_t n = strlen(dest) + sizeof ".tmp.XXXXXX";
    int fd = -1;
    if (!(o->tmp = malloc(n))) {
        fprintf(stderr, "%s: out of memory\n", prog);
        goto fail;
    }
    snprintf(o->tmp, n, "%s.tmp.XXXXXX", dest);
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
    o->tmp = NULL;
    return false;
}

bool tool_out_close(tool_out *o, bool ok)
{
    if (!o->dest) {
        if (ok && fflush(stdout) != 0) {
            fprintf(stderr, "%s: cannot write to standard output: %s\n", o->prog, strerror(errno));
            ok = false;
        }
        return ok;
    }
    if (o->f) {
        bool err = ferror(o->f) != 0;
        if (fclose(o->f) != 0 || err) {
            if (ok) fprintf(stderr, "%s: cannot write '%s': %s\n", o->prog, o->tmp, strerror(errno ? errno : EIO));
            ok = false;
        }
        o->f = NULL;
    }
    if (ok && rename(o->tmp, o->dest) != 0) {
        fprintf(stderr, "%s: cannot rename '%s' to '%s': %s\n", o->prog, o->tmp, o->dest, strerror(errno));
        ok = false;
    }
    if (!ok) unlink(o->tmp);
    free(o->tmp);
    o->tmp = NULL;
    return ok;
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
