/* cpu_pch.c — the CPU accelerator's precompiled header: the library's part of every translation unit (CPU prelude with its standard headers, common prelude, device library) compiled once by the host compiler with the builds' own flags, so that a build parses only the user's part. Kept between processes in the disk cache, which authenticates it (its MAC), and written out to a private directory of this process before the compiler reads it. */
#include "cpu_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A precompiled header is code the compiler loads without checking it: it
 * is only ever made by this library, in a directory this process made
 * (mode 0700, checked through its descriptor), or taken from the disk
 * cache, whose entries carry a MAC under a key only this user can read;
 * it is never read from a path another user could write. The key names
 * everything that shapes it: the compiler, its version, flags and target
 * (the device's cache tag) and the text compiled. A compiler that finds
 * the file unsuitable after all (it checks its own version and flags)
 * reads the header's text beside it instead, and a build that fails with
 * it is tried again without it (cpu_compile.c). */

#define AMP__PCH_NAME "amp_lib.hpp"
#define AMP__PCH_FILE AMP__PCH_NAME ".gch"

/* One CPU accelerator per process. Lock order: a leaf (held for no call
 * that takes another lock, and never while the compiler runs). */
static pthread_mutex_t amp__pch_lock = PTHREAD_MUTEX_INITIALIZER;
/* UNTRIED: not looked for. BUSY: one thread loads or makes it; builds
 * meanwhile compile without it. READY: amp__pch_header names the text with
 * the compiled header beside it, for builds whose key is amp__pch_key.
 * FAILED: it could not be had; builds compile without it. */
static enum { AMP__PCH_UNTRIED, AMP__PCH_BUSY, AMP__PCH_READY, AMP__PCH_FAILED } amp__pch_state;
static char amp__pch_dir[PATH_MAX];
static char amp__pch_header[PATH_MAX + 32];
static uint8_t amp__pch_key[32];

const char *amp__cpu_pch_dir(void)
{
    pthread_mutex_lock(&amp__pch_lock);
    const char *dir = amp__pch_state == AMP__PCH_READY ? amp__pch_dir : NULL;
    pthread_mutex_unlock(&amp__pch_lock);
    return dir;
}

/* Writes size bytes to name in the directory dirfd, a new file (no link
 * followed, none replaced). */
static bool amp__pch_write(int dirfd, const char *name, const void *data, size_t size)
{
    int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    const char *p = data;
    bool ok = true;
    while (size && ok) {
        ssize_t w = write(fd, p, size);
        if (w < 0 && errno == EINTR) continue;
        ok = w > 0;
        if (ok) {
            p += w;
            size -= (size_t)w;
        }
    }
    if (close(fd) != 0) ok = false;
    return ok;
}

/* The compiled header as the compiler wrote it (malloc'ed), read through
 * the directory this process holds: a regular file of this user's. */
static void *amp__pch_read(int dirfd, const char *name, size_t *size)
{
    void *buf = NULL;
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat sb;
    if (fd < 0) return NULL;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid() || sb.st_size <= 0 ||
        !(buf = malloc((size_t)sb.st_size)))
        goto fail;
    size_t got = 0;
    while (got < (size_t)sb.st_size) {
        ssize_t r = read(fd, (char *)buf + got, (size_t)sb.st_size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) goto fail;
        got += (size_t)r;
    }
    close(fd);
    *size = got;
    return buf;
fail:
    free(buf);
    close(fd);
    return NULL;
}

/* The private directory: <TMPDIR>/hipamp-cpu-<pid>-XXXXXX (swept by a
 * later process once this one is gone, as the build directories are),
 * made, opened and checked; its descriptor, or -1. */
static int amp__pch_make_dir(char dir[PATH_MAX])
{
    char root[PATH_MAX];
    if (amp__cpu_tmp_dir(AMP_ERROR_COMPILE, root) != AMP_OK) return -1;
    if (snprintf(dir, PATH_MAX, "%s/" AMP__CPU_TMP_PREFIX "%ld-XXXXXX", root, (long)getpid()) >= PATH_MAX ||
        !mkdtemp(dir))
        return -1;
    struct stat sb;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &sb) != 0 || sb.st_uid != geteuid() || (sb.st_mode & 077)) {
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

/* Runs the compiler on the header: words (the build's own, up to the
 * user's options) then "-c -x c++-header HEADER -o HEADER.gch". */
static bool amp__pch_compile(char *const *words, size_t nwords, char *const *envp, uint64_t deadline)
{
    char out[PATH_MAX + 40];
    snprintf(out, sizeof out, "%s.gch", amp__pch_header);
    char **argv = calloc(nwords + 8, sizeof *argv);
    if (!argv) return false;
    memcpy(argv, words, nwords * sizeof *argv);
    size_t n = nwords;
    argv[n++] = "-c"; /* the words say -shared: the driver would link the header into a library */
    argv[n++] = "-x";
    argv[n++] = "c++-header";
    argv[n++] = amp__pch_header;
    argv[n++] = "-o";
    argv[n++] = out;
    argv[n] = NULL;
    char *log = NULL;
    int ws = 0;
    bool late = false;
    amp_status st = amp__cpu_run_capture(argv, envp, deadline, &log, &ws, &late);
    free(log);
    free(argv);
    return st == AMP_OK && !late && WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
}

/* The header's making, on a thread of its own (the build that found it
 * missing compiles meanwhile without it, and waits for it before it
 * returns: amp__cpu_pch_wait): what it needs lives as long as that build. */
static struct {
    pthread_t thread;
    const amp__compile_job *job;
    char *const *words, *const *envp;
    size_t nwords;
    uint64_t deadline;
    int dirfd;
    uint8_t key[32];
} amp__pch_maker;

/* Leaves the state READY, or FAILED, and the directory closed. */
static void amp__pch_settle(bool ok, const uint8_t key[32], int dirfd)
{
    if (dirfd >= 0) close(dirfd);
    pthread_mutex_lock(&amp__pch_lock);
    amp__pch_state = ok ? AMP__PCH_READY : AMP__PCH_FAILED;
    if (ok) memcpy(amp__pch_key, key, 32);
    pthread_mutex_unlock(&amp__pch_lock);
}

static void *amp__pch_make(void *arg)
{
    (void)arg;
    size_t size = 0;
    void *gch = NULL;
    bool ok = amp__pch_compile(amp__pch_maker.words, amp__pch_maker.nwords, amp__pch_maker.envp,
                               amp__pch_maker.deadline) &&
              (gch = amp__pch_read(amp__pch_maker.dirfd, AMP__PCH_FILE, &size));
    if (ok) amp__pch_maker.job->cache_store(amp__pch_maker.key, gch, size);
    free(gch);
    amp__pch_settle(ok, amp__pch_maker.key, amp__pch_maker.dirfd);
    return NULL;
}

void amp__cpu_pch_wait(void) { pthread_join(amp__pch_maker.thread, NULL); }

const char *amp__cpu_pch_prepare(const amp__cpu_device *d, const amp__compile_job *job, const char *text,
                                 size_t len, char *const *words, size_t nwords, char *const *envp, uint64_t deadline,
                                 bool *making)
{
    *making = false;
    /* Off (README: AMP_CPU_PCH), or nothing to keep it in: made for one
     * process only, it would cost more than it saves. The user's options
     * (a -D, a -O0) may change what the header compiles to. */
    if (!amp__env_flag("AMP_CPU_PCH", true) || !job->cache_load || !job->cache_store || len == 0) return NULL;
    if (job->options)
        for (const char *p = job->options; *p; ++p)
            if (*p != ' ' && *p != '\t' && *p != '\n') return NULL;

    uint8_t key[32];
    amp__sha256 *h = amp__sha256_new();
    if (!h) return NULL;
    amp__sha256_str(h, "hipamp cpu precompiled header 1");
    amp__sha256_str(h, d->cache_tag);
    for (size_t i = 0; i < nwords; ++i) amp__sha256_str(h, words[i]);
    amp__sha256_field(h, text, len);
    amp__sha256_final(h, key);

    pthread_mutex_lock(&amp__pch_lock);
    if (amp__pch_state == AMP__PCH_READY && !memcmp(key, amp__pch_key, 32)) {
        pthread_mutex_unlock(&amp__pch_lock);
        return amp__pch_header;
    }
    if (amp__pch_state != AMP__PCH_UNTRIED) { /* busy elsewhere, failed, or another key */
        pthread_mutex_unlock(&amp__pch_lock);
        return NULL;
    }
    amp__pch_state = AMP__PCH_BUSY;
    pthread_mutex_unlock(&amp__pch_lock);

    size_t size = 0;
    void *gch = NULL;
    int dirfd = amp__pch_make_dir(amp__pch_dir);
    snprintf(amp__pch_header, sizeof amp__pch_header, "%s/" AMP__PCH_NAME, amp__pch_dir);
    if (dirfd < 0 || !amp__pch_write(dirfd, AMP__PCH_NAME, text, len)) {
        amp__pch_settle(false, key, dirfd);
        return NULL;
    }
    if ((gch = job->cache_load(key, &size))) {
        bool ok = amp__pch_write(dirfd, AMP__PCH_FILE, gch, size);
        free(gch);
        amp__pch_settle(ok, key, dirfd);
        return ok ? amp__pch_header : NULL;
    }
    amp__pch_maker.job = job;
    amp__pch_maker.words = words;
    amp__pch_maker.nwords = nwords;
    amp__pch_maker.envp = envp;
    amp__pch_maker.deadline = deadline;
    amp__pch_maker.dirfd = dirfd;
    memcpy(amp__pch_maker.key, key, 32);
    if (pthread_create(&amp__pch_maker.thread, NULL, amp__pch_make, NULL) != 0) {
        amp__pch_settle(false, key, dirfd);
        return NULL;
    }
    *making = true;
    return NULL;
}
