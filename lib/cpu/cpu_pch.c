/* cpu_pch.c — the CPU accelerator's precompiled headers: the library's part of every translation unit (CPU prelude with its standard headers, common prelude, device library) compiled once by the host compiler with the builds' own flags, so that a build parses only the user's part, and the same part precompiled by libclang for the loop transformation's parse. Kept between processes in the disk cache, which authenticates them (their MAC), or made when the library was built and read from its prebuilt pack (whose digests check them), and written out to a private directory of this process before the compiler or libclang reads them. */
#include "cpu_internal.h"
#include "loops/loops.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A precompiled header is code the compiler loads without checking it: it
 * is only ever made by this library, in a directory this process made
 * (mode 0700, checked through its descriptor), or taken from the disk
 * cache, whose entries carry a MAC under a key only this user can read, or
 * from the library's own pack, held to the pack's rules (lib/core/
 * prebuilt.c: owners and modes checked, every entry's SHA-256); it is never
 * read from a path another user could write. The key names
 * everything that shapes it: the compiler, its version, flags and target
 * (the device's cache tag) and the text compiled. A compiler that finds
 * the file unsuitable after all (it checks its own version and flags)
 * reads the header's text beside it instead, and a build that fails with
 * it is tried again without it (cpu_compile.c). */

#define AMP__PCH_NAME AMP__CPU_PCH_NAME
#define AMP__PCH_FILE AMP__PCH_NAME ".gch"
#define AMP__PCH_DEPS "amp_lib.d"
/* libclang's (AMP__LPCH_*, below), beside them in the same directory. */
#define AMP__LPCH_FILE "amp_lib.clang.pch"

/* The disk-cache entry: this header, the files the header read (one
 * absolute path a line, deps_size bytes), then the compiled header. */
typedef struct amp__pch_entry {
    char magic[8];
    uint64_t deps_size;
} amp__pch_entry;
#define AMP__PCH_MAGIC "AMPPCH1"

/* The kind (AMP__DIR_*) of the most specific of the compiler's default
 * directories that holds path, and path's name relative to it; 0 when
 * none does. */
static int amp__pch_dir_kind(const amp__sys_dir *dirs, const char *path, const char **rel)
{
    int kind = 0;
    size_t best = 0;
    for (const amp__sys_dir *s = dirs; s && s->path; ++s) {
        size_t l = strlen(s->path);
        if (l > best && !strncmp(path, s->path, l) && path[l] == '/') {
            kind = s->kind;
            best = l;
            *rel = path + l + 1;
        }
    }
    return kind;
}

/* Whether the header may stand for the text it was made from in this
 * process's builds: every file it read (deps, one absolute path a line)
 * is the compiler's or the C library's (the key names their versions,
 * which stand for those files, as the modules' keys do), and none is
 * shadowed by a file of the same name in a default directory of another
 * kind (/usr/local/include), which the text compiled whole might read
 * instead. Builds that pass -I, CPATH or CPLUS_INCLUDE_PATH use no header
 * (amp__cpu_pch_prepare). */
static bool amp__pch_deps_ok(const amp__sys_dir *dirs, const char *deps, size_t size)
{
    const char *p = deps, *end = deps + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char path[PATH_MAX];
        if (l == 0 || l >= sizeof path) return false;
        memcpy(path, p, l);
        path[l] = 0;
        p += l + 1;
        const char *rel = NULL;
        int kind = amp__pch_dir_kind(dirs, path, &rel);
        if (kind != AMP__DIR_COMPILER && kind != AMP__DIR_LIBC) return false;
        for (const amp__sys_dir *s = dirs; s && s->path; ++s) {
            char other[2 * PATH_MAX + 2];
            if (s->kind == AMP__DIR_COMPILER || s->kind == AMP__DIR_LIBC) continue;
            snprintf(other, sizeof other, "%s/%s", s->path, rel);
            if (access(other, F_OK) == 0) return false;
        }
    }
    return true;
}

/* One CPU accelerator per process. Lock order: a leaf (held for no call
 * that takes another lock, and never while the compiler runs). */
static pthread_mutex_t amp__pch_lock = PTHREAD_MUTEX_INITIALIZER;
/* UNTRIED: not looked for. BUSY: one thread loads or makes it; builds
 * meanwhile compile without it. READY: amp__pch_header names the text with
 * the compiled header beside it, for builds whose key is amp__pch_key.
 * FAILED: it could not be had; builds compile without it. */
typedef enum { AMP__PCH_UNTRIED, AMP__PCH_BUSY, AMP__PCH_READY, AMP__PCH_FAILED } amp__pch_status;
static amp__pch_status amp__pch_state;
/* libclang's, the same way: READY when amp__lpch_path holds it for the
 * loop transformations whose key is amp__lpch_key. */
static amp__pch_status amp__lpch_state;
/* Set when the directory is removed at exit (amp__pch_remove): no header
 * is ready, and no directory made, after it. */
static bool amp__pch_gone;
static char amp__lpch_path[PATH_MAX + 32];
static uint8_t amp__lpch_key[32];
static char amp__pch_dir[PATH_MAX];
static char amp__pch_header[PATH_MAX + 32];
static uint8_t amp__pch_key[32];

/* The directory made (amp__pch_dir) and its descriptor while it exists;
 * -1: none. Set under amp__pch_lock. */
static int amp__pch_dir_fd = -1;
static pid_t amp__pch_dir_pid; /* the process that made it: a forked child leaves it alone */

/* In a forked child (amp__pch_lock held): the parent's directory is not
 * this process's. Its name is known in TMPDIR, and the parent's exit or a
 * sweep removes it, after which anyone could make one of that name: the
 * child forgets it and makes its own when it next needs one. */
static void amp__pch_forget_parents(void)
{
    if (!amp__pch_dir_pid || amp__pch_dir_pid == getpid()) return;
    if (amp__pch_dir_fd >= 0) close(amp__pch_dir_fd);
    amp__pch_dir_fd = -1;
    amp__pch_dir_pid = 0;
    amp__pch_dir[0] = amp__pch_header[0] = amp__lpch_path[0] = 0;
    amp__pch_state = amp__lpch_state = AMP__PCH_UNTRIED;
}

const char *amp__cpu_pch_dir(void)
{
    pthread_mutex_lock(&amp__pch_lock);
    amp__pch_forget_parents();
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
    bool ok = amp__fd_write_all(fd, data, size);
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
    if (!amp__fd_read_all(fd, buf, (size_t)sb.st_size)) goto fail;
    close(fd);
    *size = (size_t)sb.st_size;
    return buf;
fail:
    free(buf);
    close(fd);
    return NULL;
}

/* At exit, or when the library is unloaded: the directory and the four
 * files it can hold go (a killed process's are swept by a later one). */
__attribute__((destructor)) static void amp__pch_remove(void)
{
    /* Builds still running on other threads use the headers no more: they
     * compile and parse without them (a try that fails with one is made
     * whole), and none is made or written after this. */
    pthread_mutex_lock(&amp__pch_lock);
    bool ours = amp__pch_dir_fd >= 0 && getpid() == amp__pch_dir_pid;
    int fd = ours ? amp__pch_dir_fd : -1;
    if (ours) {
        amp__pch_state = amp__lpch_state = AMP__PCH_FAILED;
        amp__pch_dir_fd = -1;
    }
    amp__pch_gone = true;
    pthread_mutex_unlock(&amp__pch_lock);
    if (!ours) return;
    static const char *const names[] = {AMP__PCH_NAME, AMP__PCH_FILE, AMP__PCH_DEPS, AMP__LPCH_FILE};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) unlinkat(fd, names[i], 0);
    close(fd);
    rmdir(amp__pch_dir);
}

/* The private directory: <TMPDIR>/hipamp-pch-<pid>-XXXXXX (removed at exit;
 * swept by a later process once this one is gone, as the build
 * directories are), made, opened and checked, once a process for both
 * headers; its path in amp__pch_dir and a descriptor of it of the
 * caller's own, or -1. */
static int amp__pch_private_dir(void)
{
    pthread_mutex_lock(&amp__pch_lock);
    amp__pch_forget_parents();
    bool made = amp__pch_dir_fd >= 0, gone = amp__pch_gone;
    int have = made && !gone ? fcntl(amp__pch_dir_fd, F_DUPFD_CLOEXEC, 0) : -1;
    pthread_mutex_unlock(&amp__pch_lock);
    if (made || gone) return have;
    char dir[PATH_MAX], root[PATH_MAX];
    if (amp__cpu_tmp_dir(AMP_ERROR_COMPILE, root) != AMP_OK) return -1;
    if (snprintf(dir, PATH_MAX, "%s/" AMP__CPU_PCH_PREFIX "%ld-XXXXXX", root, (long)getpid()) >= PATH_MAX ||
        !mkdtemp(dir))
        return -1;
    struct stat sb;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &sb) != 0 || sb.st_uid != geteuid() || (sb.st_mode & 077) || !amp__cpu_dir_claim(fd)) {
        if (fd >= 0) close(fd);
        rmdir(dir);
        return -1;
    }
    /* Its own descriptor for the removal; another thread's directory made
     * meanwhile is the one kept. */
    pthread_mutex_lock(&amp__pch_lock);
    if (amp__pch_gone) {
        close(fd);
        fd = -1;
    } else if (amp__pch_dir_fd < 0) {
        amp__pch_dir_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        amp__pch_dir_pid = getpid();
        snprintf(amp__pch_dir, sizeof amp__pch_dir, "%s", dir);
        made = amp__pch_dir_fd >= 0;
        if (!made) {
            close(fd);
            fd = -1;
        }
    } else {
        close(fd);
        fd = fcntl(amp__pch_dir_fd, F_DUPFD_CLOEXEC, 0);
    }
    pthread_mutex_unlock(&amp__pch_lock);
    if (!made) rmdir(dir);
    return fd;
}

/* Runs the compiler on the header: words (the build's own, up to the
 * user's options) then "-c -MD -MF DEPS -x c++-header HEADER -o
 * HEADER.gch". clang (embed) is told to keep the text of every file it
 * read in the header: it checks a header it uses against the files it was
 * made from, and the header's own file is in this process's private
 * directory, gone when the process ends; every later process's build with
 * the header failed, and was compiled again without it. */
static bool amp__pch_compile(char *const *words, size_t nwords, char *const *envp, uint64_t deadline, bool embed)
{
    char out[PATH_MAX + 40];
    snprintf(out, sizeof out, "%s.gch", amp__pch_header);
    char dep[PATH_MAX + 40];
    snprintf(dep, sizeof dep, "%s/" AMP__PCH_DEPS, amp__pch_dir);
    char **argv = calloc(nwords + 13, sizeof *argv);
    if (!argv) return false;
    memcpy(argv, words, nwords * sizeof *argv);
    size_t n = nwords;
    if (embed) {
        argv[n++] = "-Xclang";
        argv[n++] = "-fmodules-embed-all-files";
    }
    argv[n++] = "-c"; /* the words say -shared: the driver would link the header into a library */
    argv[n++] = "-MD";
    argv[n++] = "-MF";
    argv[n++] = dep;
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

/* To hipamp-prebuild, when it is the one running (the job's pack_capture
 * is set only then): an entry made or loaded, for the pack it writes. */
static void amp__pch_hand_over(const amp__compile_job *job, const uint8_t key[32], const void *entry, size_t size)
{
    if (job->pack_target && job->pack_capture) job->pack_capture(job->pack_target, key, entry, size);
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
    const amp__sys_dir *dirs;
    bool embed; /* clang: the files' text kept in the header (amp__pch_compile) */
    uint8_t key[32];
} amp__pch_maker;

/* Leaves a header's state READY (its key that of key), or FAILED, and the
 * directory closed; after the removal at exit the directory is gone, so
 * never READY again. Both headers' (the libclang part's below). */
static void amp__pch_settle_state(amp__pch_status *state, uint8_t state_key[32], bool ok, const uint8_t key[32],
                                  int dirfd)
{
    if (dirfd >= 0) close(dirfd);
    pthread_mutex_lock(&amp__pch_lock);
    *state = ok && !amp__pch_gone ? AMP__PCH_READY : AMP__PCH_FAILED;
    if (ok) memcpy(state_key, key, 32);
    pthread_mutex_unlock(&amp__pch_lock);
}

/* A build's turn at a header whose key is key: 1 when it is ready (the
 * caller hands it out), 0 when this build is to load or make it (the state
 * is then BUSY until it settles), -1 when there is none for it (busy
 * elsewhere, failed, another key, or the directory removed at exit). */
static int amp__pch_claim(amp__pch_status *state, const uint8_t state_key[32], const uint8_t key[32])
{
    int claim = -1;
    pthread_mutex_lock(&amp__pch_lock);
    amp__pch_forget_parents();
    if (*state == AMP__PCH_READY && !memcmp(key, state_key, 32)) {
        claim = 1;
    } else if (*state == AMP__PCH_UNTRIED && !amp__pch_gone) {
        *state = AMP__PCH_BUSY;
        claim = 0;
    }
    pthread_mutex_unlock(&amp__pch_lock);
    return claim;
}

static void amp__pch_settle(bool ok, const uint8_t key[32], int dirfd)
{
    amp__pch_settle_state(&amp__pch_state, amp__pch_key, ok, key, dirfd);
}

/* A stored entry's header (checked: its list fits in it) written to name
 * in the directory dirfd, and handed to hipamp-prebuild. Both headers'. */
static bool amp__pch_write_entry(const amp__compile_job *job, const uint8_t key[32], int dirfd, const char *name,
                                 const void *data, size_t size)
{
    amp__pch_entry e;
    memcpy(&e, data, sizeof e);
    bool ok = amp__pch_write(dirfd, name, (const char *)data + sizeof e + e.deps_size,
                             size - sizeof e - (size_t)e.deps_size);
    if (ok) amp__pch_hand_over(job, key, data, size);
    return ok;
}

/* A made header kept: its entry (magic, the list of the files it read,
 * then its bytes) stored in the disk cache and handed to hipamp-prebuild.
 * Both headers' (the libclang part's below). */
static void amp__pch_keep(const amp__compile_job *job, const uint8_t key[32], const char *magic, const char *list,
                          const void *body, size_t size)
{
    amp__pch_entry h = {{0}, strlen(list)};
    memcpy(h.magic, magic, sizeof h.magic);
    char *entry = malloc(sizeof h + h.deps_size + size);
    if (!entry) return;
    memcpy(entry, &h, sizeof h);
    memcpy(entry + sizeof h, list, h.deps_size);
    memcpy(entry + sizeof h + h.deps_size, body, size);
    if (job->cache_store) job->cache_store(key, entry, sizeof h + h.deps_size + size);
    amp__pch_hand_over(job, key, entry, sizeof h + h.deps_size + size);
    free(entry);
}

static void *amp__pch_make(void *arg)
{
    (void)arg;
    size_t size = 0, dsize = 0;
    void *gch = NULL, *dtext = NULL;
    char *deps = NULL;
    bool ok = amp__pch_compile(amp__pch_maker.words, amp__pch_maker.nwords, amp__pch_maker.envp,
                               amp__pch_maker.deadline, amp__pch_maker.embed) &&
              (gch = amp__pch_read(amp__pch_maker.dirfd, AMP__PCH_FILE, &size)) &&
              (dtext = amp__pch_read(amp__pch_maker.dirfd, AMP__PCH_DEPS, &dsize));
    if (ok) {
        /* NUL-terminated for the parser (amp__pch_read leaves no room). */
        char *t = realloc(dtext, dsize + 1);
        ok = t != NULL;
        if (ok) {
            dtext = t;
            t[dsize] = 0;
            deps = amp__cpu_deps(t, amp__pch_header, amp__pch_dir, true, false, false);
        }
    }
    ok = ok && deps && amp__pch_deps_ok(amp__pch_maker.dirs, deps, strlen(deps));
    if (ok) amp__pch_keep(amp__pch_maker.job, amp__pch_maker.key, AMP__PCH_MAGIC, deps, gch, size);
    free(deps);
    free(dtext);
    free(gch);
    amp__pch_settle(ok, amp__pch_maker.key, amp__pch_maker.dirfd);
    return NULL;
}

/* Whether a stored entry (the disk cache's or a pack's) is one this
 * process may use: this format, its list of files inside it, and those
 * files all the compiler's or the C library's (amp__pch_deps_ok). */
static bool amp__pch_entry_ok(const amp__sys_dir *dirs, const void *data, size_t size)
{
    amp__pch_entry e;
    if (size < sizeof e) return false;
    memcpy(&e, data, sizeof e);
    return !memcmp(e.magic, AMP__PCH_MAGIC, sizeof e.magic) && e.deps_size <= size - sizeof e &&
           amp__pch_deps_ok(dirs, (const char *)data + sizeof e, (size_t)e.deps_size);
}

/* data (a stored entry of *size bytes, or NULL) if this process may use
 * it; else NULL, data freed. */
static void *amp__pch_usable(const amp__sys_dir *dirs, void *data, const size_t *size)
{
    if (data && !amp__pch_entry_ok(dirs, data, *size)) {
        free(data);
        data = NULL;
    }
    return data;
}

void amp__cpu_pch_wait(void) { pthread_join(amp__pch_maker.thread, NULL); }

/* Whether a build may use a precompiled library part of len bytes: on
 * (README: AMP_CPU_PCH), with a disk cache to keep it in or a pack to take
 * it from (*packed: a pack; *keep: somewhere to keep one made), no user
 * options (a -D, a -O0 may change what the part compiles to) and no
 * directories searched before the default ones, which no key names
 * (backend.h: the CPU backend's include_env). */
static bool amp__pch_wanted(const amp__compile_job *job, size_t len, bool *packed, bool *keep)
{
    *packed = job->pack_target && job->pack_load;
    *keep = job->cache_store || job->pack_capture;
    if (!amp__env_flag("AMP_CPU_PCH", true) || len == 0 || (!(job->cache_load && *keep) && !*packed)) return false;
    if (job->options)
        for (const char *p = job->options; *p; ++p)
            if (*p != ' ' && *p != '\t' && *p != '\n') return false;
    const char *cpath = amp__env("CPATH"), *cplus = amp__env("CPLUS_INCLUDE_PATH");
    return !((cpath && *cpath) || (cplus && *cplus));
}

const char *amp__cpu_pch_prepare(amp__cpu_device *d, const amp__compile_job *job, const char *text,
                                 size_t len, char *const *words, size_t nwords, char *const *envp, uint64_t deadline,
                                 bool *making)
{
    *making = false;
    bool packed, keep;
    if (!amp__pch_wanted(job, len, &packed, &keep)) return NULL;
    const amp__sys_dir *dirs = amp__cpu_system_dirs(d);

    uint8_t key[32];
    amp__sha256 *h = amp__sha256_new();
    if (!h) return NULL;
    amp__sha256_str(h, "hipamp cpu precompiled header 1");
    amp__sha256_str(h, d->cache_tag);
    for (size_t i = 0; i < nwords; ++i) amp__sha256_str(h, words[i]);
    /* clang's headers hold their files' text (amp__pch_compile); one made
     * before, which needs its maker's directory, is never taken */
    if (d->clang_gnu_as) amp__sha256_str(h, "the files' text embedded");
    amp__sha256_field(h, text, len);
    if (!amp__sha256_final(h, key)) return NULL; /* no key: compiled without the header, nothing kept */

    int claim = amp__pch_claim(&amp__pch_state, amp__pch_key, key);
    if (claim) return claim > 0 ? amp__pch_header : NULL;

    /* The disk cache's, else the one the library's pack holds (made when
     * the library was built, on a machine of the same cache tag); one
     * that is not what it should be is passed over for the next. Looked
     * for before anything is written: a process that finds none and keeps
     * none makes no directory. */
    size_t size = 0;
    void *gch = job->cache_load ? amp__pch_usable(dirs, job->cache_load(key, &size), &size) : NULL;
    if (!gch && packed) gch = amp__pch_usable(dirs, job->pack_load(job->pack_target, key, &size), &size);
    bool ok = false;
    int dirfd = -1;
    if (!gch && !keep) goto out; /* made for this process only, it would cost more than it saves */
    dirfd = amp__pch_private_dir();
    snprintf(amp__pch_header, sizeof amp__pch_header, "%s/" AMP__PCH_NAME, amp__pch_dir);
    if (dirfd < 0 || !amp__pch_write(dirfd, AMP__PCH_NAME, text, len)) goto out;
    if (gch) {
        ok = amp__pch_write_entry(job, key, dirfd, AMP__PCH_FILE, gch, size);
        goto out;
    }
    amp__pch_maker.job = job;
    amp__pch_maker.words = words;
    amp__pch_maker.nwords = nwords;
    amp__pch_maker.envp = envp;
    amp__pch_maker.deadline = deadline;
    amp__pch_maker.dirfd = dirfd;
    amp__pch_maker.dirs = dirs;
    amp__pch_maker.embed = d->clang_gnu_as;
    memcpy(amp__pch_maker.key, key, 32);
    *making = pthread_create(&amp__pch_maker.thread, NULL, amp__pch_make, NULL) == 0;
out:
    free(gch);
    if (*making) return NULL; /* the maker settles the state and closes dirfd */
    amp__pch_settle(ok, key, dirfd);
    return ok ? amp__pch_header : NULL;
}

/* ------------------------------------ libclang's precompiled library part
 *
 * The loop transformation parses the library's part of every unit before
 * the user's (a few hundred milliseconds of a cold build); precompiled, the
 * parse reads it back in a tenth of that (loops/transform.c). It is made by
 * libclang in a child process (loops/child.c), under a key naming the
 * device's cache tag (the host compiler's version), that libclang (its
 * file, version and built-in headers), the transformation's arguments but
 * the source directory, and the part's text; and kept, loaded and written
 * out as the compiler's header is, by the same rules: only ever one this
 * library made, authenticated by the disk cache's MAC or the pack's
 * digests, read from this process's private directory.
 *
 * libclang checks little when it reads a part back: not the part's text
 * against the one precompiled (the key decides which part a parse reads),
 * and not the system headers it read (which C++
 * library a libclang finds is its own choice, not the host compiler's). So
 * the entry holds the list of the files the part read, each with its size
 * and modification time, and a part whose files are not all as listed is
 * not used (made again where it can be kept). A header that would now be
 * found first in an earlier directory of the search (a new one in
 * /usr/local/include) is not seen; it changes the analysis of a system
 * function's calls at most, never the code compiled (the compiler reads the
 * headers themselves). A part libclang refuses, or whose parse fails, is
 * not offered again in this process (amp__cpu_loops_pch_refused). */

/* Its entry is laid out as the compiler's header's (amp__pch_entry: the
 * list, deps_size bytes, is of the files the part read, each with its size
 * and time), under a magic of its own. */
#define AMP__LPCH_MAGIC "AMPLPCH"

/* Whether every file of the list (text, size bytes: lines "path\tsize\t
 * seconds\tnanoseconds") is a regular file of that size and modification
 * time now. */
/* A whole decimal number of text [*p, end) up to the next tab or the end,
 * no sign, no blank; *p moves past the tab. false when there is none or it
 * does not fit. */
static bool amp__lpch_number(const char **p, const char *end, long long *out)
{
    const char *q = *p;
    long long v = 0;
    if (q == end || *q < '0' || *q > '9') return false;
    for (; q < end && *q != '\t'; ++q) {
        if (*q < '0' || *q > '9' || v > (LLONG_MAX - (*q - '0')) / 10) return false;
        v = v * 10 + (*q - '0');
    }
    *p = q < end ? q + 1 : q;
    *out = v;
    return true;
}

bool amp__cpu_loops_pch_inputs_ok(const char *text, size_t size)
{
    const char *p = text, *end = text + size;
    if (size == 0) return false;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl || memchr(p, 0, (size_t)(nl - p))) return false;
        const char *tab = memchr(p, '\t', (size_t)(nl - p));
        char path[PATH_MAX];
        if (!tab || p[0] != '/' || (size_t)(tab - p) >= sizeof path) return false;
        memcpy(path, p, (size_t)(tab - p));
        path[tab - p] = 0;
        const char *q = tab + 1;
        long long fsize, sec, nsec;
        /* three numbers, the last one ending the line */
        if (!amp__lpch_number(&q, nl, &fsize) || q >= nl || !amp__lpch_number(&q, nl, &sec) || q >= nl ||
            !amp__lpch_number(&q, nl, &nsec) || q != nl || q[-1] == '\t')
            return false;
        p = nl + 1;
        struct stat sb;
        if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) || (long long)sb.st_size != fsize ||
            (long long)sb.st_mtim.tv_sec != sec || (long long)sb.st_mtim.tv_nsec != nsec)
            return false;
    }
    return true;
}

/* data (a stored entry of *size bytes, or NULL) if it is a part of this
 * format whose files are all as listed; else NULL, data freed. */
static void *amp__lpch_usable(void *data, size_t size)
{
    amp__pch_entry e;
    if (!data) return NULL;
    if (size < sizeof e) goto bad;
    memcpy(&e, data, sizeof e);
    if (memcmp(e.magic, AMP__LPCH_MAGIC, sizeof e.magic) || e.deps_size >= size - sizeof e ||
        !amp__cpu_loops_pch_inputs_ok((const char *)data + sizeof e, (size_t)e.deps_size))
        goto bad;
    return data;
bad:
    free(data);
    return NULL;
}

/* The making, on a thread of its own while the build goes on without it
 * (its loop transformation parses the whole text); the build waits for it
 * before it returns (amp__cpu_loops_pch_wait). Its copy of the job's text
 * and arguments is its own. */
static struct {
    pthread_t thread;
    const amp__compile_job *job;
    amp__cpu_loops_job lj;
    char *text;
    char **args;
    uint64_t deadline;
    int dirfd;
    uint8_t key[32];
} amp__lpch_maker;

static void amp__lpch_settle(bool ok, const uint8_t key[32], int dirfd)
{
    amp__pch_settle_state(&amp__lpch_state, amp__lpch_key, ok, key, dirfd);
}

static void amp__lpch_free_copy(void)
{
    for (int i = 0; amp__lpch_maker.args && i < amp__lpch_maker.lj.nargs; ++i) free(amp__lpch_maker.args[i]);
    free(amp__lpch_maker.args);
    free(amp__lpch_maker.text);
    amp__lpch_maker.args = NULL;
    amp__lpch_maker.text = NULL;
}

static void *amp__lpch_make(void *arg)
{
    (void)arg;
    char note[300];
    size_t size = 0;
    void *pch = NULL;
    char *inputs = NULL;
    bool ok = amp__cpu_loops_make_pch(&amp__lpch_maker.lj, amp__lpch_path, amp__lpch_maker.deadline, &inputs, note,
                                      sizeof note);
    if (ok && !(pch = amp__pch_read(amp__lpch_maker.dirfd, AMP__LPCH_FILE, &size))) {
        snprintf(note, sizeof note, "the part libclang wrote could not be read back");
        ok = false;
    }
    if (ok) amp__pch_keep(amp__lpch_maker.job, amp__lpch_maker.key, AMP__LPCH_MAGIC, inputs, pch, size);
    if (!ok && amp__env_flag("AMP_CPU_VERBOSE", false))
        fprintf(stderr, "hipamp: the loop transformation's precompiled library part was not made: %s\n", note);
    free(pch);
    free(inputs);
    amp__lpch_free_copy();
    amp__lpch_settle(ok, amp__lpch_maker.key, amp__lpch_maker.dirfd);
    return NULL;
}

void amp__cpu_loops_pch_wait(void) { pthread_join(amp__lpch_maker.thread, NULL); }

void amp__cpu_loops_pch_refused(void)
{
    pthread_mutex_lock(&amp__pch_lock);
    if (amp__lpch_state == AMP__PCH_READY) amp__lpch_state = AMP__PCH_FAILED;
    pthread_mutex_unlock(&amp__pch_lock);
}

/* Whether lj's argument *i is the user's source directory (-iquote DIR,
 * then *i moves past DIR): the library's part includes only <...>
 * headers, so one precompiled part serves every directory. */
static bool amp__lpch_arg_skipped(const amp__cpu_loops_job *lj, int *i)
{
    if (strcmp(lj->args[*i], "-iquote") || *i + 1 >= lj->nargs) return false;
    ++*i;
    return true;
}

/* The maker's own copy of lj (the library's part of its text, its
 * arguments but the source directory); false when out of memory. */
static bool amp__lpch_copy_job(const amp__cpu_loops_job *lj)
{
    amp__cpu_loops_job *c = &amp__lpch_maker.lj;
    *c = (amp__cpu_loops_job){.len = lj->user_start, .user_start = lj->user_start, .path = AMP__LOOPS_LIBRARY_PART};
    amp__lpch_maker.text = malloc(lj->user_start + 1);
    amp__lpch_maker.args = calloc((size_t)lj->nargs + 1, sizeof *amp__lpch_maker.args);
    bool ok = amp__lpch_maker.text && amp__lpch_maker.args;
    int n = 0;
    for (int i = 0; ok && i < lj->nargs; ++i)
        if (!amp__lpch_arg_skipped(lj, &i)) ok = (amp__lpch_maker.args[n++] = amp__strdup(lj->args[i])) != NULL;
    c->nargs = n;
    if (!ok) {
        amp__lpch_free_copy();
        return false;
    }
    memcpy(amp__lpch_maker.text, lj->source, lj->user_start);
    amp__lpch_maker.text[lj->user_start] = 0;
    c->source = amp__lpch_maker.text;
    c->args = (const char *const *)amp__lpch_maker.args;
    return true;
}

const char *amp__cpu_loops_pch_prepare(const amp__cpu_device *d, const amp__compile_job *job,
                                       const amp__cpu_loops_job *lj, uint64_t deadline, bool *making)
{
    *making = false;
    bool packed, keep;
    const char *why = NULL;
    const amp__clang *cx = amp__clang_get(&why);
    if (!cx || !amp__pch_wanted(job, lj->user_start, &packed, &keep)) return NULL;

    uint8_t key[32];
    amp__sha256 *h = amp__sha256_new();
    if (!h) return NULL;
    amp__sha256_str(h, "hipamp libclang precompiled library part 2");
    amp__sha256_str(h, d->cache_tag);
    amp__sha256_str(h, cx->path);
    amp__sha256_str(h, cx->version);
    amp__sha256_str(h, cx->resource_dir);
    for (int i = 0; i < lj->nargs; ++i) {
        if (amp__lpch_arg_skipped(lj, &i)) continue;
        amp__sha256_str(h, lj->args[i]);
    }
    amp__sha256_field(h, lj->source, lj->user_start);
    if (!amp__sha256_final(h, key)) return NULL; /* no key: compiled without the part, nothing kept */

    int claim = amp__pch_claim(&amp__lpch_state, amp__lpch_key, key);
    if (claim) return claim > 0 ? amp__lpch_path : NULL;

    /* The disk cache's, else the pack's; one not of this format, or whose
     * files changed since, is passed over (and made again below). */
    size_t size = 0;
    void *data = job->cache_load ? job->cache_load(key, &size) : NULL;
    data = amp__lpch_usable(data, size); /* (size is set by the load: a statement of its own) */
    if (!data && packed) {
        data = job->pack_load(job->pack_target, key, &size);
        data = amp__lpch_usable(data, size);
    }
    bool ok = false;
    int dirfd = -1;
    if (!data && !keep) goto out;
    if ((dirfd = amp__pch_private_dir()) < 0) goto out;
    snprintf(amp__lpch_path, sizeof amp__lpch_path, "%s/" AMP__LPCH_FILE, amp__pch_dir);
    if (data) {
        ok = amp__pch_write_entry(job, key, dirfd, AMP__LPCH_FILE, data, size);
        goto out;
    }
    if (!amp__lpch_copy_job(lj)) goto out;
    amp__lpch_maker.job = job;
    amp__lpch_maker.deadline = deadline;
    amp__lpch_maker.dirfd = dirfd;
    memcpy(amp__lpch_maker.key, key, 32);
    *making = pthread_create(&amp__lpch_maker.thread, NULL, amp__lpch_make, NULL) == 0;
    if (!*making) amp__lpch_free_copy();
out:
    free(data);
    if (*making) return NULL; /* the maker settles the state and closes dirfd */
    amp__lpch_settle(ok, key, dirfd);
    return ok ? amp__lpch_path : NULL;
}
