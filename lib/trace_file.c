/* trace_file.c — the AMP_TRACE file: its name (%p: the process id), and
 * its text rewritten at its end by each flush so that it is a complete JSON
 * document after every one.
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

bool amp__tfile_configure(const char *value)
{
    size_t len = strlen(value);
    if (len >= sizeof W.value) return false;
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
    size_t at = 0;
    for (const char *p = W.value; *p && at + 24 < sizeof W.path; ++p) {
        if (p[0] == '%' && p[1] == 'p') {
            at += (size_t)snprintf(W.path + at, sizeof W.path - at, "%ld", (long)getpid());
            ++p;
        } else {
            W.path[at++] = *p;
        }
    }
    W.path[at] = '\0';
    return true;
}

static int amp__tfile_open(void)
{
    int fd = open(W.path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0) amp__tfile_refuse("%s", strerror(errno));
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
