/* trace_file.c — the AMP_TRACE file: its name (%p: the process id; a
 * relative name is made absolute at load, against the directory the program
 * started in), opened so that nothing another local user planted is written
 * through, and rewritten at its end by each flush so that it is a complete
 * JSON document after every one.
 *
 * The rules (README, "Tracing"; include/hipamp.h): the directories on the
 * way to the file are walked one name at a time (O_PATH | O_NOFOLLOW), and
 * a symbolic link among them is followed only where no other user could
 * have put it there: in a directory of this process's user or root that
 * no group or other may write, or, in a sticky one they may, a link of
 * this user or of the directory's owner (the kernel's protected_symlinks
 * rule, applied here to every directory because a host may have it off).
 * The file itself is created new in the directory reached (O_CREAT |
 * O_EXCL | O_NOFOLLOW: never through a symbolic link), or, when the name
 * exists, used only if it is a regular file of this process's user with
 * one link, checked before it is opened and again on the open descriptor;
 * a FIFO, device, directory or link is refused without being opened, and
 * the open never blocks (O_NONBLOCK). The descriptor is close-on-exec, so
 * compilers the library runs do not inherit it. A name of PATH_MAX (4096)
 * characters or more, before or after %p (or made absolute), is refused
 * and said. A refusal is AMP_ERROR_INVALID_ARGUMENT from amp_trace_flush
 * (and on stderr at exit) naming the file and why; nothing is written.
 *
 * Another process's trace is never cut: the file is held with an exclusive
 * flock from its open to the exit, and an existing one is truncated only
 * once this process holds that lock and it was last written no later
 * than this process started (so by an earlier run, not by a process
 * running alongside: MPI ranks given one AMP_TRACE finish at different
 * moments, and each flushes only at its exit).
 * Otherwise, or where the file system has no flock, this process writes
 * to the name with ".<pid>" before the last extension (trace.json:
 * trace.<pid>.json) in the same directory, by the same rules, and says so
 * on stderr naming both; when that one is another process's too, it is a
 * refusal.
 *
 * A flush that cannot write its events (a full disk, RLIMIT_FSIZE) puts
 * back the closing text the previous flush wrote, where it was, so the file
 * stays the last complete trace (a first flush leaves it empty rather than
 * cut off mid-event); the flush fails as a refusal does. Past
 * RLIMIT_FSIZE the kernel also sends the writing thread SIGXFSZ, whose
 * default action ends the process: it is blocked while the file is written
 * and the one the trace's own write raised is taken back, so that a
 * program under `ulimit -f` runs on untraced instead of dying at exit.
 *
 * The descriptor is checked to be the file's still before each flush
 * writes and before it is closed: a program that closed it and opened a
 * file of its own at its number has that file left alone (the flush fails,
 * saying so).
 *
 * Called under the trace's flush lock (and by the constructor, before any
 * thread can call in), which guards all of it. */
#include "trace_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Links followed on the way to the file at most (the kernel's limit). */
#define AMP__TFILE_MAX_LINKS 40

static struct {
    char value[PATH_MAX]; /* AMP_TRACE as given, made absolute at load */
    size_t verbatim;      /* value's first bytes that are the current directory's name: no %p there */
    char path[PATH_MAX];  /* with %p replaced, once opened */
    int fd;               /* -1: not open */
    dev_t dev;            /* the file fd was opened on (amp__tfile_ours) */
    ino_t ino;
    off_t tail;           /* where the closing text starts: the next events go there */
    char closing[2048];   /* the closing text the last flush wrote at tail */
    size_t closing_n;     /* its length; 0: none written, or too long to keep */
    bool failed;
    char error[1600];
    uint64_t written;
    struct timespec start; /* when the library was loaded (CLOCK_REALTIME) */
} W = {.fd = -1};

bool amp__tfile_configure(const char *value, char *why, size_t n)
{
    size_t len = strlen(value);
    /* The fine clock, not the coarse one files were once stamped with:
     * kernels with multigrain timestamps (6.13+, and the H200 host's) stamp
     * a file with the fine time, which may be after a coarse reading taken
     * later (a file written just before this process started then looked
     * written since: test_trace's file_of_our_own_is_reused_unless_linked
     * failed there). A file written before this has an mtime at or before
     * it either way (on NFS, the server's clock). */
    (void)clock_gettime(CLOCK_REALTIME, &W.start);
    if (len >= sizeof W.value) {
        snprintf(why, n,
                 "AMP_TRACE is %zu characters long; a trace path must be shorter than %d characters: no trace file is "
                 "written",
                 len, PATH_MAX);
        return false;
    }
    if (value[0] == '/') {
        memcpy(W.value, value, len + 1);
        return true;
    }
    /* Relative: to where the program started, not to wherever it has gone
     * by the first flush. */
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) {
        snprintf(why, n,
                 "AMP_TRACE=%.200s is a relative path, and the current directory cannot be named (getcwd: %s): no trace "
                 "file is written",
                 value, strerror(errno));
        return false;
    }
    size_t cl = strlen(cwd);
    bool slash = cl > 0 && cwd[cl - 1] == '/';
    if (cl + !slash + len >= sizeof W.value) {
        snprintf(why, n,
                 "AMP_TRACE=%.200s in the current directory is %zu characters long; a trace path must be shorter than %d "
                 "characters: no trace file is written",
                 value, cl + !slash + len, PATH_MAX);
        return false;
    }
    memcpy(W.value, cwd, cl);
    if (!slash) W.value[cl++] = '/';
    memcpy(W.value + cl, value, len + 1);
    /* A "%p" in the directory's name is not AMP_TRACE's to replace
     * (/tmp/100%pure became /tmp/100<pid>ure, a directory that is not
     * there). */
    W.verbatim = cl;
    return true;
}

uint64_t amp__tfile_written(void) { return W.written; }

/* Remember why the file cannot be written (every later flush says it). */
static amp_status amp__tfile_refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static amp_status amp__tfile_refuse(const char *fmt, ...)
{
    char why[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    const char *name = W.path[0] ? W.path : W.value;
    snprintf(W.error, sizeof W.error, "AMP_TRACE=%.400s%s: cannot write the trace: %.1150s", name,
             strlen(name) > 400 ? "..." : "", why);
    W.failed = true;
    return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s", W.error);
}

/* W.value with each %p of AMP_TRACE's own text (not of the current
 * directory's name put before a relative one) replaced by the process id,
 * into W.path. */
static bool amp__tfile_expand(void)
{
    char pid[24];
    int pl = snprintf(pid, sizeof pid, "%ld", (long)getpid());
    size_t at = 0;
    for (const char *p = W.value; *p; ++p) {
        bool is_pid = p >= W.value + W.verbatim && p[0] == '%' && p[1] == 'p';
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

/* ------------------------------------------------- the way to the file */

/* The walk to the file's directory: where it is (an O_PATH descriptor),
 * the names still to go (a link's target goes in front of them), and the
 * path walked so far, as written, for messages. */
typedef struct amp__walk {
    int dir;
    char rest[2 * PATH_MAX];
    char shown[PATH_MAX];
    unsigned links;
} amp__walk;

static void amp__walk_shown_add(amp__walk *w, const char *name)
{
    size_t at = strlen(w->shown);
    snprintf(w->shown + at, sizeof w->shown - at, "%s%s", at && w->shown[at - 1] == '/' ? "" : "/", name);
}

/* Follow the link fd (named name in w->dir, of owner uid) when no other
 * user could have planted it: its target goes in front of w->rest. false
 * after amp__tfile_refuse. */
static bool amp__walk_link(amp__walk *w, int fd, const char *name, uid_t uid)
{
    struct stat ds;
    char why[300], to[PATH_MAX], at[PATH_MAX + 256];
    snprintf(at, sizeof at, "%s", w->shown);
    amp__walk_shown_add(w, name);
    if (fstat(w->dir, &ds) != 0) return amp__tfile_refuse("%.200s: %s", at, strerror(errno)), false;
    ssize_t tl = readlinkat(fd, "", to, sizeof to - 1);
    if (tl < 0) return amp__tfile_refuse("%.200s: readlink: %s", w->shown, strerror(errno)), false;
    to[tl] = '\0';
    if (amp__link_planted(&ds, uid, why, sizeof why)) {
        /* A directory of ours only its group may write besides us (umask
         * 002 with a group per user): following a link of ours there would
         * be safe only if no one else is in that group, which cannot be
         * told: the group database need not list every member (a user's
         * primary group is in the passwd entry; directory services may
         * not enumerate), and a member can rename or (protected_hardlinks
         * off) hard-link a link of ours into place, so the link's owner
         * does not say who put it there. */
        bool own_group = ds.st_uid == geteuid() && (ds.st_mode & S_IWGRP) && !(ds.st_mode & (S_IWOTH | S_ISVTX));
        char how[400];
        if (own_group)
            snprintf(how, sizeof how, ": its group (gid %u) may write it, and hipamp cannot tell that no other user is "
                     "in that group. To trace there, make %.200s writable by you alone (chmod g-w), or give AMP_TRACE "
                     "the path the link leads to", (unsigned)ds.st_gid, at[0] ? at : "/");
        else
            snprintf(how, sizeof how, "; give AMP_TRACE the path the link leads to instead");
        return amp__tfile_refuse("%.200s is a symbolic link (owned by uid %u, to %.200s) in %s; hipamp does not follow a "
                                 "link another user could have put there%s", w->shown, (unsigned)uid, to, why, how),
               false;
    }
    if (++w->links > AMP__TFILE_MAX_LINKS || tl == 0)
        return amp__tfile_refuse("%.200s: %s", w->shown, strerror(tl ? ELOOP : ENOENT)), false;
    size_t rl = strlen(w->rest);
    if ((size_t)tl + 1 + rl >= sizeof w->rest) return amp__tfile_refuse("%s", strerror(ENAMETOOLONG)), false;
    memmove(w->rest + tl + 1, w->rest, rl + 1);
    memcpy(w->rest, to, (size_t)tl);
    w->rest[tl] = '/';
    if (to[0] == '/') {
        int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0) return amp__tfile_refuse("/: %s", strerror(errno)), false;
        close(w->dir);
        w->dir = root;
        w->shown[0] = '\0';
    } else {
        w->shown[strlen(at)] = '\0'; /* a relative target starts where the link is */
    }
    return true;
}

/* Walk from / to the directory of absolute path's last name, one name at a
 * time, following only links no other user could have planted. Its
 * descriptor (O_PATH), the last name in *leaf; -1 after amp__tfile_refuse. */
static int amp__walk_to_dir(const char *path, const char **leaf)
{
    static amp__walk w; /* large; under the flush lock */
    const char *slash = strrchr(path, '/');
    if (path[0] != '/' || !slash) return amp__tfile_refuse("it is not an absolute path"), -1;
    *leaf = slash + 1;
    size_t pl = (size_t)(slash - path);
    memcpy(w.rest, path, pl);
    w.rest[pl] = '\0';
    w.shown[0] = '\0';
    w.links = 0;
    if ((w.dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) return amp__tfile_refuse("/: %s", strerror(errno)), -1;
    while (w.rest[0]) {
        size_t len = strcspn(w.rest, "/");
        char name[NAME_MAX + 1];
        if (len > NAME_MAX) {
            close(w.dir);
            return amp__tfile_refuse("%s", strerror(ENAMETOOLONG)), -1;
        }
        memcpy(name, w.rest, len);
        name[len] = '\0';
        memmove(w.rest, w.rest + len + (w.rest[len] == '/'), strlen(w.rest + len + (w.rest[len] == '/')) + 1);
        if (!len || !strcmp(name, ".")) continue;
        int fd = openat(w.dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0) {
            int e = errno;
            if (fd >= 0) close(fd);
            close(w.dir);
            return amp__tfile_refuse("%s", strerror(e)), -1;
        }
        if (S_ISDIR(st.st_mode)) {
            close(w.dir);
            w.dir = fd;
            amp__walk_shown_add(&w, name);
            continue;
        }
        bool ok = S_ISLNK(st.st_mode) && amp__walk_link(&w, fd, name, st.st_uid);
        if (!S_ISLNK(st.st_mode)) amp__tfile_refuse("%s", strerror(ENOTDIR));
        close(fd);
        if (!ok) {
            close(w.dir);
            return -1;
        }
    }
    return w.dir;
}

/* Whether a is after b. A file a process running alongside wrote within
 * a coarse tick (a few ms) after this one started may carry a coarse
 * stamp before it, and is the one case taken for an earlier run's (ranks
 * write their traces at exit, long after). */
static bool amp__ts_after(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec != b->tv_sec ? a->tv_sec > b->tv_sec : a->tv_nsec > b->tv_nsec;
}

/* leaf in dir by the rules above, locked (flock, exclusive) and emptied:
 * its descriptor; -1 when it is refused (fail says why; the caller
 * refuses, naming the file it was asked for); -2 when it is, or may be,
 * another process's trace (busy says why) and was left as it was. */
static int amp__tfile_open_leaf(int dir, const char *leaf, char *busy, size_t bn, char *fail, size_t fn)
{
    const int flags = O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
    char why[300];
    int fd = openat(dir, leaf, flags | O_CREAT | O_EXCL, 0666);
    if (fd >= 0) {
        /* Made by us, so empty; one that opened it meanwhile and locked it
         * first writes it (a file system without flock: nobody locks). */
        if (flock(fd, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK) return fd;
        close(fd);
        snprintf(busy, bn, "another process took it as it was made");
        return -2;
    }
    if (errno != EEXIST) return snprintf(fail, fn, "%s", strerror(errno)), -1;
    /* It exists: look before opening (a FIFO or device is never opened). */
    struct stat before, st;
    const char *bad = NULL;
    if (fstatat(dir, leaf, &before, AT_SYMLINK_NOFOLLOW) != 0) bad = strerror(errno);
    else if (!(bad = amp__not_ours(&before, why, sizeof why)) && (fd = openat(dir, leaf, flags | O_NONBLOCK)) < 0)
        bad = strerror(errno);
    if (bad) return snprintf(fail, fn, "%s", bad), -1;
    /* What was opened is what was looked at (not swapped since). */
    if (fstat(fd, &st) != 0) bad = strerror(errno);
    else if (st.st_dev != before.st_dev || st.st_ino != before.st_ino) bad = "it was replaced while being opened";
    else bad = amp__not_ours(&st, why, sizeof why);
    if (bad) {
        close(fd);
        return snprintf(fail, fn, "%s", bad), -1;
    }
    /* Ours to cut only while we hold it and it is an earlier run's. */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        if (e == EWOULDBLOCK) snprintf(busy, bn, "another process is writing it");
        else snprintf(busy, bn, "it cannot be locked (flock: %s), so whether another process is writing it cannot be "
                      "told", strerror(e));
        return -2;
    }
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return snprintf(fail, fn, "%s", strerror(e)), -1;
    }
    if (amp__ts_after(&st.st_mtim, &W.start)) {
        close(fd);
        snprintf(busy, bn, "it was written since this process started, by another process running alongside it");
        return -2;
    }
    if (ftruncate(fd, 0) != 0) {
        int e = errno;
        close(fd);
        return snprintf(fail, fn, "%s", strerror(e)), -1;
    }
    return fd;
}

/* The name this process writes instead of leaf (another process's): leaf
 * with ".<pid>" before its last extension, into out (NAME_MAX + 1 bytes).
 * false: too long. */
static bool amp__tfile_own_name(const char *leaf, char *out, size_t n)
{
    const char *dot = strrchr(leaf, '.');
    if (!dot || dot == leaf) dot = leaf + strlen(leaf);
    int w = snprintf(out, n, "%.*s.%ld%s", (int)(dot - leaf), leaf, (long)getpid(), dot);
    return w > 0 && (size_t)w < n && (size_t)w <= NAME_MAX;
}

/* Open W.path by the rules above, or this process's own name beside it
 * (W.path then names that one); -1 after amp__tfile_refuse. */
static int amp__tfile_open(void)
{
    char busy[300], busy2[300], fail[400], asked[PATH_MAX], own[NAME_MAX + 2];
    const char *leaf = NULL;
    int fd = -1, dir = amp__walk_to_dir(W.path, &leaf);
    if (dir < 0) return -1;
    if (!*leaf) {
        close(dir);
        return amp__tfile_refuse("%s", strerror(EISDIR)), -1;
    }
    if ((fd = amp__tfile_open_leaf(dir, leaf, busy, sizeof busy, fail, sizeof fail)) != -2) {
        if (fd == -1) amp__tfile_refuse("%s", fail);
        goto out;
    }
    snprintf(asked, sizeof asked, "%s", W.path);
    size_t at = (size_t)(leaf - W.path);
    if (!amp__tfile_own_name(leaf, own, sizeof own) || at + strlen(own) >= sizeof W.path) {
        amp__tfile_refuse("%s, and with this process's id added the name is too long: nothing of the other "
                          "process's is touched", busy);
        fd = -1;
        goto out;
    }
    memcpy(W.path + at, own, strlen(own) + 1);
    fd = amp__tfile_open_leaf(dir, own, busy2, sizeof busy2, fail, sizeof fail);
    if (fd >= 0) {
        fprintf(stderr, "hipamp: AMP_TRACE=%s is another process's trace (%s): this process (pid %ld) writes its trace "
                "to %s instead\n", asked, busy, (long)getpid(), W.path);
    } else {
        /* Named after the file the user asked for: the name with the pid
         * alone says neither where it came from nor why it was tried
         * (another user may have put something there, pids being easy to
         * guess). */
        snprintf(W.path, sizeof W.path, "%s", asked);
        if (fd == -2)
            amp__tfile_refuse("%s, and so is %s, this process's name for it (%s): nothing of theirs is touched", busy,
                              own, busy2);
        else
            amp__tfile_refuse("%s, and %s, this process's name for it beside it, cannot be used either: %s", busy, own,
                              fail);
        fd = -1;
    }
out:
    close(dir);
    return fd < 0 ? -1 : fd;
}

/* Whether W.fd is still the trace file. A program that closes descriptors
 * it does not own (a daemon closing all from 3 up) and then opens a file
 * of its own at the same number would otherwise have that file written
 * over at the trace's offset and cut to the trace's length, or closed
 * under it at exit. */
static bool amp__tfile_ours(void)
{
    struct stat st;
    return W.fd >= 0 && fstat(W.fd, &st) == 0 && st.st_dev == W.dev && st.st_ino == W.ino;
}

void amp__tfile_child(void)
{
    /* The parent's descriptor, and with it the lock, stays the parent's:
     * a child that lives on (it traces nothing) does not make the file
     * look in use after the parent is gone. */
    if (amp__tfile_ours()) close(W.fd);
    W.fd = -1;
}

/* ------------------------------------------------------------- writing */

/* All of n bytes of p at off. */
static bool amp__pwrite_all(const char *p, size_t n, off_t off)
{
    for (size_t done = 0; done < n;) {
        ssize_t w = pwrite(W.fd, p + done, n - done, off + (off_t)done);
        if (w < 0 && errno == EINTR) continue;
        if (w == 0) errno = EIO;
        if (w <= 0) return false;
        done += (size_t)w;
    }
    return true;
}

/* A write at W.tail failed (errno): cut off what it wrote and put back the
 * previous flush's closing text, so the file is the last complete trace
 * again (empty where there is none); the flush fails, and says whether the
 * trace was put back. */
static amp_status amp__tfile_restore(void)
{
    int e = errno;
    if (!W.closing_n) {
        /* No flush wrote the file whole: what this one wrote stops
         * mid-event, a document no viewer reads, which looked like a trace
         * cut short. Empty, it is plainly none. */
        if (ftruncate(W.fd, 0) == 0)
            return amp__tfile_refuse("%s (no flush wrote the trace whole: the file is left empty)", strerror(e));
        return amp__tfile_refuse("%s; the file could not be emptied either (%s): it is not a complete document",
                                 strerror(e), strerror(errno));
    }
    bool back = ftruncate(W.fd, W.tail) == 0 && amp__pwrite_all(W.closing, W.closing_n, W.tail);
    if (back) return amp__tfile_refuse("%s (the file holds the trace as the previous flush left it)", strerror(e));
    return amp__tfile_refuse("%s; the previous flush's trace could not be put back either (%s): the file is not a "
                             "complete document", strerror(e), strerror(errno));
}

static amp_status amp__tfile_write_unsignalled(const amp__sb *head, const amp__sb *events, uint64_t nevents,
                                               const amp__sb *tail)
{
    if (W.fd < 0) {
        if (!amp__tfile_expand())
            return amp__tfile_refuse("with %%p replaced by the process id the path is %d characters or longer", PATH_MAX);
        if ((W.fd = amp__tfile_open()) < 0) return AMP_ERROR_INVALID_ARGUMENT;
        struct stat st;
        if (fstat(W.fd, &st) != 0) return amp__tfile_refuse("%s", strerror(errno));
        W.dev = st.st_dev;
        W.ino = st.st_ino;
        if (!amp__pwrite_all(head->p, head->n, 0)) return amp__tfile_restore();
        W.tail = (off_t)head->n;
    } else if (!amp__tfile_ours()) {
        int fd = W.fd;
        W.fd = -1; /* the number is the program's now: not closed either */
        return amp__tfile_refuse("its descriptor (%d) was closed by the program since the last flush%s; nothing more "
                                 "is written, so that the program's file is not written over",
                                 fd, fcntl(fd, F_GETFD) != -1 ? " and now refers to another file" : "");
    }
    off_t end = W.tail + (off_t)events->n;
    if (!amp__pwrite_all(events->p, events->n, W.tail) || !amp__pwrite_all(tail->p, tail->n, end) ||
        ftruncate(W.fd, end + (off_t)tail->n) != 0)
        return amp__tfile_restore();
    W.tail = end;
    W.written += nevents;
    W.closing_n = tail->n <= sizeof W.closing ? tail->n : 0;
    if (W.closing_n) memcpy(W.closing, tail->p, tail->n);
    return AMP_OK;
}

amp_status amp__tfile_write(const amp__sb *head, const amp__sb *events, uint64_t nevents, const amp__sb *tail)
{
    if (W.failed) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s", W.error);
    /* SIGXFSZ is sent to this thread by a write or truncate past
     * RLIMIT_FSIZE (see the top): blocked, the call fails with EFBIG
     * instead. One already pending (the program's own, blocked) is left
     * for the program. */
    sigset_t xfsz, old, pending;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    bool masked = pthread_sigmask(SIG_BLOCK, &xfsz, &old) == 0;
    bool was_pending = masked && sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ) == 1;
    amp_status st = amp__tfile_write_unsignalled(head, events, nevents, tail);
    if (masked) {
        if (!was_pending) {
            const struct timespec now = {0, 0};
            int e = errno;
            while (sigtimedwait(&xfsz, NULL, &now) == SIGXFSZ) {}
            errno = e;
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    return st;
}

void amp__tfile_note(char *out, size_t n)
{
    snprintf(out, n, "%s (%llu events)%s%s", W.path[0] ? W.path : W.value, (unsigned long long)W.written,
             W.failed ? " — " : "", W.failed ? W.error : "");
}

void amp__tfile_close(void)
{
    if (amp__tfile_ours()) close(W.fd);
    W.fd = -1;
    if (!W.failed) {
        W.failed = true; /* nothing is written after this */
        snprintf(W.error, sizeof W.error, "AMP_TRACE=%.400s: the trace was closed at exit", W.path[0] ? W.path : W.value);
    }
}
