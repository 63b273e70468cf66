/* trace_file.c — the AMP_TRACE file: its name (%p: the process id), opened
 * so that nothing another local user planted is written through, and
 * rewritten at its end by each flush so that it is a complete JSON document
 * after every one.
 *
 * The rules (README, "Tracing"; include/hipamp.h): the file is created new
 * (O_CREAT | O_EXCL | O_NOFOLLOW: never through a symbolic link), or, when
 * the name exists, used only if it is a regular file of this process's
 * user with one link, checked before it is opened and again on the open
 * descriptor; a FIFO, device, directory or link is refused without being
 * opened, and the open never blocks (O_NONBLOCK). The descriptor is
 * close-on-exec, so compilers the library runs do not inherit it. A name of
 * PATH_MAX (4096) characters or more, before or after %p, is refused and
 * said. A refusal is AMP_ERROR_INVALID_ARGUMENT from amp_trace_flush (and
 * on stderr at exit) naming the file and why; nothing is written.
 *
 * Called under the trace's flush lock (and by the constructor, before any
 * thread can call in), which guards all of it. */
#include "trace_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct {
    char value[PATH_MAX]; /* AMP_TRACE as given */
    char path[PATH_MAX];  /* with %p replaced, once opened */
    int fd;               /* -1: not open */
    off_t tail;           /* where the closing text starts: the next events go there */
    bool failed;
    char error[1024];
    uint64_t written;
} W = {.fd = -1};

bool amp__tfile_configure(const char *value, char *why, size_t n)
{
    size_t len = strlen(value);
    if (len >= sizeof W.value) {
        snprintf(why, n,
                 "AMP_TRACE is %zu characters long; a trace path must be shorter than %d characters: no trace file is "
                 "written",
                 len, PATH_MAX);
        return false;
    }
    memcpy(W.value, value, len + 1);
    return true;
}

uint64_t amp__tfile_written(void) { return W.written; }

/* Remember why the file cannot be written (every later flush says it). */
static amp_status amp__tfile_refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static amp_status amp__tfile_refuse(const char *fmt, ...)
{
    char why[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    const char *name = W.path[0] ? W.path : W.value;
    snprintf(W.error, sizeof W.error, "AMP_TRACE=%.400s%s: cannot write the trace: %s", name,
             strlen(name) > 400 ? "..." : "", why);
    W.failed = true;
    return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s", W.error);
}

/* W.value with each %p replaced by the process id, into W.path. */
static bool amp__tfile_expand(void)
{
    char pid[24];
    int pl = snprintf(pid, sizeof pid, "%ld", (long)getpid());
    size_t at = 0;
    for (const char *p = W.value; *p; ++p) {
        bool is_pid = p[0] == '%' && p[1] == 'p';
        size_t add = is_pid ? (size_t)pl : 1;
        if (at + add >= sizeof W.path) {
            W.path[0] = '\0';
            return false;
        }
        memcpy(W.path + at, is_pid ? pid : p, add);
        at += add;
        p += is_pid;
    }
    W.path[at] = '\0';
    return true;
}

static const char *amp__file_kind(mode_t m)
{
    return S_ISLNK(m)    ? "a symbolic link"
           : S_ISFIFO(m) ? "a FIFO"
           : S_ISDIR(m)  ? "a directory"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
                         : "not a regular file";
}

/* Why an existing file is not ours to write, or NULL. */
static const char *amp__not_ours(const struct stat *st, char *why, size_t n)
{
    if (!S_ISREG(st->st_mode))
        snprintf(why, n, "it exists and is %s (owned by uid %u); hipamp writes a trace only to a new file or to a regular "
                 "file of its own user", amp__file_kind(st->st_mode), (unsigned)st->st_uid);
    else if (st->st_uid != geteuid())
        snprintf(why, n, "it exists and belongs to uid %u, not to this process's user (uid %u)", (unsigned)st->st_uid,
                 (unsigned)geteuid());
    else if (st->st_nlink != 1)
        snprintf(why, n, "it exists and has %lu hard links", (unsigned long)st->st_nlink);
    else
        return NULL;
    return why;
}

/* Open W.path by the rules above; -1 after amp__tfile_refuse. */
static int amp__tfile_open(void)
{
    const int flags = O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
    char why[300];
    int fd = open(W.path, flags | O_CREAT | O_EXCL, 0666);
    if (fd >= 0) return fd;
    if (errno != EEXIST) return amp__tfile_refuse("%s", strerror(errno)), -1;
    /* It exists: look before opening (a FIFO or device is never opened). */
    struct stat before, st;
    if (lstat(W.path, &before) != 0) return amp__tfile_refuse("%s", strerror(errno)), -1;
    if (amp__not_ours(&before, why, sizeof why)) return amp__tfile_refuse("%s", why), -1;
    if ((fd = open(W.path, flags | O_NONBLOCK)) < 0) return amp__tfile_refuse("%s", strerror(errno)), -1;
    /* What was opened is what was looked at (not swapped since). */
    const char *bad = NULL;
    if (fstat(fd, &st) != 0) bad = strerror(errno);
    else if (st.st_dev != before.st_dev || st.st_ino != before.st_ino) bad = "it was replaced while being opened";
    else bad = amp__not_ours(&st, why, sizeof why);
    if (bad) {
        close(fd);
        return amp__tfile_refuse("%s", bad), -1;
    }
    if (ftruncate(fd, 0) != 0) {
        int e = errno;
        close(fd);
        return amp__tfile_refuse("%s", strerror(e)), -1;
    }
    return fd;
}

/* All of b at off. */
static bool amp__pwrite_all(const amp__sb *b, off_t off)
{
    for (size_t done = 0; done < b->n;) {
        ssize_t w = pwrite(W.fd, b->p + done, b->n - done, off + (off_t)done);
        if (w < 0 && errno == EINTR) continue;
        if (w == 0) errno = EIO;
        if (w <= 0) return false;
        done += (size_t)w;
    }
    return true;
}

amp_status amp__tfile_write(const amp__sb *head, const amp__sb *events, uint64_t nevents, const amp__sb *tail)
{
    if (W.failed) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s", W.error);
    if (W.fd < 0) {
        if (!amp__tfile_expand())
            return amp__tfile_refuse("with %%p replaced by the process id the path is %d characters or longer", PATH_MAX);
        if ((W.fd = amp__tfile_open()) < 0) return AMP_ERROR_INVALID_ARGUMENT;
        if (!amp__pwrite_all(head, 0)) return amp__tfile_refuse("%s", strerror(errno));
        W.tail = (off_t)head->n;
    }
    if (!amp__pwrite_all(events, W.tail)) return amp__tfile_refuse("%s", strerror(errno));
    W.tail += (off_t)events->n;
    W.written += nevents;
    if (!amp__pwrite_all(tail, W.tail) || ftruncate(W.fd, W.tail + (off_t)tail->n) != 0)
        return amp__tfile_refuse("%s", strerror(errno));
    return AMP_OK;
}

void amp__tfile_note(char *out, size_t n)
{
    snprintf(out, n, "%s (%llu events)%s%s", W.path[0] ? W.path : W.value, (unsigned long long)W.written,
             W.failed ? " — " : "", W.failed ? W.error : "");
}

void amp__tfile_close(void)
{
    if (W.fd >= 0) close(W.fd);
    W.fd = -1;
    if (!W.failed) {
        W.failed = true; /* nothing is written after this */
        snprintf(W.error, sizeof W.error, "AMP_TRACE=%.400s: the trace was closed at exit", W.path[0] ? W.path : W.value);
    }
}
