/* fdio.c — whole reads and writes on a file descriptor, interrupted calls retried: the disk cache's entries and keys, the prebuilt packs, the CPU accelerator's precompiled header; and a kernel file read whole with the directory its quoted includes resolve from. */
#include "core.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool amp__fd_read_all(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        p += r;
        n -= (size_t)r;
    }
    return true;
}

bool amp__fd_pread_all(int fd, void *buf, size_t n, uint64_t off)
{
    char *p = buf;
    while (n) {
        ssize_t r = pread(fd, p, n, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        p += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return true;
}

bool amp__fd_write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* A kernel file is text of at most this many bytes. */
#define AMP__SOURCE_FILE_MAX (64u << 20)

amp_status amp__read_kernel_file(const char *path, char **text, size_t *size, char **dir)
{
    amp_status st = AMP_OK;
    *text = *dir = NULL;
    *size = 0;
    /* Not blocking: a FIFO's open would wait for a writer. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "cannot open kernel file %s: %s", path, strerror(errno));
    struct stat sb;
    char *t = NULL;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size > AMP__SOURCE_FILE_MAX) {
        st = amp__fail(AMP_ERROR_INVALID_ARGUMENT, "kernel file %s is not a regular file of at most %u MiB", path,
                       AMP__SOURCE_FILE_MAX >> 20);
        goto out;
    }
    size_t n = (size_t)sb.st_size;
    if (!(t = malloc(n + 1))) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory to read kernel file %s (%zu bytes)", path, n);
        goto out;
    }
    if (!amp__fd_read_all(fd, t, n)) {
        st = amp__fail(AMP_ERROR_INVALID_ARGUMENT, "cannot read kernel file %s", path);
        goto out;
    }
    t[n] = '\0';
    if (memchr(t, '\0', n)) {
        st = amp__fail(AMP_ERROR_INVALID_ARGUMENT, "kernel file %s contains a NUL byte", path);
        goto out;
    }
    /* Quoted includes resolve from the file's own directory, named
     * absolutely so that a later chdir changes nothing. */
    const char *slash = strrchr(path, '/');
    char dirbuf[PATH_MAX];
    snprintf(dirbuf, sizeof dirbuf, "%.*s", slash ? (int)(slash == path ? 1 : slash - path) : 1, slash ? path : ".");
    if (!(*dir = realpath(dirbuf, NULL))) {
        st = amp__fail(AMP_ERROR_INVALID_ARGUMENT, "cannot resolve the directory of kernel file %s: %s", path,
                       strerror(errno));
        goto out;
    }
    *text = t;
    *size = n;
    t = NULL;
out:
    close(fd);
    free(t);
    return st;
}
