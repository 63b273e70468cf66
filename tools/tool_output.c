/* tool_output.c — the tools' input and output files (tool_output.h): a
 * source read whole and refused with NUL bytes; a file output written to a
 * temporary file beside it and renamed into place, keeping the old file's
 * mode; a device or FIFO output written in place; one of the process's
 * descriptors written through it; the way to an output walked one name at
 * a time, every symbolic link on it checked, never replaced, and the file
 * made and renamed in the directory descriptor the walk ends in; the checks
 * that keep a run from writing over its input or twice to one place; and
 * standard output's write errors. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* O_PATH, readlinkat of an O_PATH link (""), getrandom, fchown, F_DUPFD_CLOEXEC */
#endif
#include "tool_output.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
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

/* Links followed on the way to an output before it is refused as a loop
 * (the kernel's own limit). */
enum { HOP_MAX = 40 };

/* What an output name leads to, walked one name at a time. */
typedef struct out_file {
    bool exists;         /* false: nothing at the name yet (a new file) */
    bool via_link;       /* at least one link was followed */
    int fd;              /* >= 0: written through this process's descriptor fd */
    int dir;             /* >= 0: O_PATH descriptor of the directory holding leaf (the caller closes it) */
    int err;             /* a directory on the way could not be walked (errno): the open reports it */
    struct stat st;      /* the file at the end (fd: fstat of fd) */
    char leaf[NAME_MAX + 1]; /* its name in dir, never a link */
    char path[PATH_MAX]; /* its name as walked, for messages */
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

/* Why another user could have put a link (or FIFO) owned by uid in the
 * directory ds, or NULL. The rule of the library's trace file and disk
 * cache (lib/base/planted.c amp__link_planted), which the tools cannot
 * call (they link the public library only): a link's owner does
 * not say who put it there, since whoever may write the directory can
 * rename one of ours into it from another directory they may write (or,
 * protected_hardlinks off, hard-link it). So it is followed only in a
 * directory of this user or root that no group or other may write, or, in
 * a sticky one they may, when it is this user's or the directory owner's
 * (the kernel's protected_symlinks rule, which a host may have off). */
static const char *link_planted(const struct stat *ds, uid_t uid, char *why, size_t n)
{
    uid_t me = geteuid();
    bool shared = ds->st_mode & (S_IWGRP | S_IWOTH);
    if (ds->st_uid != me && ds->st_uid != 0)
        snprintf(why, n, "a directory of uid %lu", (unsigned long)ds->st_uid);
    else if (shared && !(ds->st_mode & S_ISVTX))
        snprintf(why, n, "a directory a group or others may write (mode %04o)", (unsigned)(ds->st_mode & 07777));
    else if (shared && uid != me && uid != ds->st_uid)
        snprintf(why, n, "a sticky directory others may write (mode %04o), and it is not this user's (uid %lu) or the "
                 "directory owner's (uid %lu)", (unsigned)(ds->st_mode & 07777), (unsigned long)me,
                 (unsigned long)ds->st_uid);
    else
        return NULL;
    return why;
}

/* The walk: dir (O_PATH), the names still to go in rest (a link's target
 * goes in front of them), and the directory walked so far as text in shown
 * ("" for the working directory), for messages and descriptor names. */
typedef struct walk {
    int dir;
    char rest[2 * PATH_MAX];
    char shown[PATH_MAX];
} walk;

/* shown joined with name into out. */
static void walk_join(const walk *w, const char *name, size_t len, char *out, size_t n)
{
    size_t sl = strlen(w->shown);
    while (sl && w->shown[sl - 1] == '/' && len && *name == '/') ++name, --len;
    snprintf(out, n, "%s%s%.*s", w->shown, sl && w->shown[sl - 1] != '/' ? "/" : "", (int)len, name);
}

/* Follow the link lfd (named name in w->dir, owned by ls's owner): refused
 * when another user owns it or could have put it there; else its target
 * goes in front of w->rest. false after a message. */
static bool walk_link(const char *prog, const char *dest, walk *w, int lfd, const char *name, const struct stat *ls)
{
    char at[PATH_MAX], to[PATH_MAX], why[300];
    walk_join(w, name, strlen(name), at, sizeof at);
    if (ls->st_uid != geteuid() && ls->st_uid != 0) {
        if (!strcmp(at, dest))
            fprintf(stderr, "%s: '%s' is a symbolic link of another user (uid %lu): refusing to write through "
                            "it or to replace it\n", prog, dest, (unsigned long)ls->st_uid);
        else
            fprintf(stderr, "%s: '%s' leads through '%s', a symbolic link of another user (uid %lu): refusing "
                            "to write through it\n", prog, dest, at, (unsigned long)ls->st_uid);
        return false;
    }
    ssize_t len = readlinkat(lfd, "", to, sizeof to);
    if (len <= 0 || (size_t)len >= sizeof to) {
        fprintf(stderr, "%s: cannot follow the symbolic link '%s' (from '%s'): %s\n", prog, at, dest,
                strerror(len < 0 ? errno : len ? ENAMETOOLONG : ENOENT));
        return false;
    }
    to[len] = '\0';
    struct stat ds;
    const char *planted = fstat(w->dir, &ds) != 0 ? strerror(errno) : link_planted(&ds, ls->st_uid, why, sizeof why);
    if (planted) {
        fprintf(stderr, "%s: '%s' leads through the symbolic link '%s' (to '%s') in %s: another user could have put "
                        "it there (a link of yours renamed or hard-linked into place), so it is not followed; give "
                        "the path it leads to instead\n", prog, dest, at, to, planted);
        return false;
    }
    size_t rl = strlen(w->rest);
    if ((size_t)len + 1 + rl >= sizeof w->rest) {
        fprintf(stderr, "%s: '%s': %s\n", prog, dest, strerror(ENAMETOOLONG));
        return false;
    }
    memmove(w->rest + len + (rl ? 1 : 0), w->rest, rl + 1);
    memcpy(w->rest, to, (size_t)len);
    if (rl) w->rest[len] = '/';
    if (to[0] == '/') {
        /* An absolute target starts again at the root; a relative one where
         * the link is. */
        int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0) {
            fprintf(stderr, "%s: cannot open '/': %s\n", prog, strerror(errno));
            return false;
        }
        close(w->dir);
        w->dir = root;
        snprintf(w->shown, sizeof w->shown, "/");
    }
    return true;
}

/* What an output name leads to, walked one name at a time from the root or
 * the working directory (O_PATH | O_NOFOLLOW), every symbolic link on the
 * way, in the directories and at the end, this user's or root's and in a
 * place no other user could have put it (link_planted): another user's
 * link, or one they could have planted, may be there to make the tool write
 * somewhere else. The file is then created, opened and renamed in the
 * directory descriptor the walk ends in (of->dir), so a name on the way
 * swapped for a link after it was checked changes nothing. false after a
 * message when the run may not write it. A name of one of this process's
 * descriptors, or a file that a standard descriptor open for writing
 * already writes (the same device and inode), is written through that
 * descriptor (of->fd). */
static bool out_lookup(const char *prog, const char *dest, out_file *of)
{
    static walk w; /* large; the tools are single-threaded */
    of->exists = of->via_link = false;
    of->fd = of->dir = -1;
    of->err = 0;
    of->leaf[0] = '\0';
    /* An empty name walked as the rest would stop at the working directory
     * ("is a directory"), which names neither the value nor the mistake. */
    if (!*dest) {
        fprintf(stderr, "%s: '' is an empty output name (give a file name, or - for standard output)\n", prog);
        return false;
    }
    if (strlen(dest) >= sizeof of->path) {
        fprintf(stderr, "%s: '%s': %s\n", prog, dest, strerror(ENAMETOOLONG));
        return false;
    }
    snprintf(of->path, sizeof of->path, "%s", dest);
    snprintf(w.rest, sizeof w.rest, "%s", dest);
    snprintf(w.shown, sizeof w.shown, "%s", dest[0] == '/' ? "/" : "");
    if ((w.dir = open(dest[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
        of->err = errno;
        return true;
    }
    int hops = 0;
    /* The output's own name (or a link its link led to) was a link: then
     * nothing at the end is a dangling link, refused. A directory reached
     * through a link ("ldir/new.co") is no such thing: a new file is made
     * there. */
    bool name_is_link = false;
    bool check_fd_name = true;
    for (;;) {
        if (check_fd_name) {
            /* The name as it reads now (after a link, its target's). */
            char now[PATH_MAX];
            walk_join(&w, w.rest, strlen(w.rest), now, sizeof now);
            int fd = fd_name(now);
            if (fd >= 0) {
                if (!fd_writable(fd) || fstat(fd, &of->st) != 0) {
                    fprintf(stderr, "%s: '%s' is descriptor %d, which is not open for writing\n", prog, dest, fd);
                    goto refuse;
                }
                of->exists = true;
                of->fd = fd;
                close(w.dir);
                w.dir = -1;
                return true; /* written through fd as it was opened: nothing else to check */
            }
            check_fd_name = false;
        }
        char *r = w.rest;
        while (*r == '/') ++r;
        size_t len = strcspn(r, "/");
        bool last = !r[len];
        char name[NAME_MAX + 1];
        if (len > NAME_MAX) {
            fprintf(stderr, "%s: '%s': %s\n", prog, dest, strerror(ENAMETOOLONG));
            goto refuse;
        }
        /* Nothing after the last slash: the name is the directory reached. */
        snprintf(name, sizeof name, "%.*s", len ? (int)len : 1, len ? r : ".");
        memmove(w.rest, r + len, strlen(r + len) + 1);
        struct stat ls;
        if (!last) {
            if (!strcmp(name, ".")) continue;
            int fd = openat(w.dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
            if (fd < 0 || fstat(fd, &ls) != 0) {
                of->err = errno;
                if (fd >= 0) close(fd);
                break; /* the open says why (a directory missing, not searchable) */
            }
            if (S_ISDIR(ls.st_mode)) {
                char shown[PATH_MAX];
                walk_join(&w, name, len, shown, sizeof shown);
                snprintf(w.shown, sizeof w.shown, "%s", shown);
                close(w.dir);
                w.dir = fd;
                continue;
            }
            if (!S_ISLNK(ls.st_mode)) {
                close(fd);
                of->err = ENOTDIR;
                break;
            }
            bool ok = ++hops <= HOP_MAX && walk_link(prog, dest, &w, fd, name, &ls);
            if (hops > HOP_MAX)
                fprintf(stderr, "%s: cannot follow the symbolic link '%s' (from '%s'): %s\n", prog, name, dest,
                        strerror(ELOOP));
            close(fd);
            if (!ok) goto refuse;
            of->via_link = check_fd_name = true;
            continue;
        }
        walk_join(&w, name, len, of->path, sizeof of->path);
        snprintf(of->leaf, sizeof of->leaf, "%s", name);
        if (fstatat(w.dir, name, &ls, AT_SYMLINK_NOFOLLOW) != 0) {
            if (name_is_link) {
                fprintf(stderr, "%s: '%s' is a symbolic link that leads nowhere ('%s': %s): refusing to replace it\n",
                        prog, dest, of->path, strerror(errno));
                goto refuse;
            }
            if (errno != ENOENT) of->err = errno;
            break; /* nothing there: a new file */
        }
        if (S_ISLNK(ls.st_mode)) {
            int fd = openat(w.dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
            struct stat held;
            /* The link followed is the one held (a link's text cannot change). */
            bool ok = fd >= 0 && fstat(fd, &held) == 0 && S_ISLNK(held.st_mode) && ++hops <= HOP_MAX &&
                      walk_link(prog, dest, &w, fd, name, &held);
            if (!ok && (fd < 0 || hops > HOP_MAX || !S_ISLNK(held.st_mode)))
                fprintf(stderr, "%s: cannot follow the symbolic link '%s' (from '%s'): %s\n", prog, of->path, dest,
                        strerror(hops > HOP_MAX ? ELOOP : fd < 0 ? errno : EAGAIN));
            if (fd >= 0) close(fd);
            if (!ok) goto refuse;
            of->via_link = check_fd_name = name_is_link = true;
            continue;
        }
        of->exists = true;
        of->st = ls;
        break;
    }
    if (of->err) {
        close(w.dir);
        return true;
    }
    of->dir = w.dir;
    if (!of->exists) {
        return true;
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
    if (of->fd >= 0) {
        close(of->dir);
        of->dir = -1;
        return true;
    }
    /* A FIFO is written in place, to whoever reads it: one another user
     * could have made there (the link rule, with the FIFO's owner) may be
     * theirs, to read the output or to stall the run by never reading. */
    char why[300];
    struct stat ds;
    const char *planted = !S_ISFIFO(of->st.st_mode)     ? NULL
                          : fstat(of->dir, &ds) != 0 ? strerror(errno)
                                                      : link_planted(&ds, of->st.st_uid, why, sizeof why);
    if (planted) {
        fprintf(stderr, "%s: '%s' is a FIFO (owned by uid %lu) in %s: another user could have put it there, so it "
                        "is not written\n", prog, dest, (unsigned long)of->st.st_uid, planted);
        close(of->dir);
        of->dir = -1;
        return false;
    }
    if (S_ISREG(of->st.st_mode) || S_ISCHR(of->st.st_mode) || S_ISFIFO(of->st.st_mode)) return true;
    fprintf(stderr, "%s: '%s' is %s%s: refusing to write it (use -o - for standard output)\n", prog, dest,
            of->via_link ? "a symbolic link to " : "",
            S_ISDIR(of->st.st_mode) ? "a directory" : S_ISBLK(of->st.st_mode) ? "a block device"
                                                                                 : "a socket or special file");
    close(of->dir);
    of->dir = -1;
    return false;
refuse:
    close(w.dir);
    w.dir = -1;
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
    /* The file the output would write: a file's rename replaces it (an
     * input reached through it, the same inode or a link to it elsewhere,
     * would be lost); standard output, "-o - >> in.hip", appends to the
     * input while it is read. Either is refused. */
    struct stat target;
    bool regular = false;
    if (is_stdout(dest)) {
        regular = fstat(STDOUT_FILENO, &target) == 0 && S_ISREG(target.st_mode);
    } else {
        out_file of;
        if (!out_lookup(prog, dest, &of)) return false;
        if (of.dir >= 0) close(of.dir); /* tool_out_open walks again */
        regular = of.exists && S_ISREG(of.st.st_mode);
        target = of.st;
    }
    for (size_t i = 0; regular && i < ninputs; ++i) {
        struct stat is;
        if (stat(inputs[i], &is) == 0 && is.st_dev == target.st_dev && is.st_ino == target.st_ino) {
            if (is_stdout(dest))
                fprintf(stderr, "%s: the standard output is the input '%s': refusing to write into it\n", prog,
                        inputs[i]);
            else
                fprintf(stderr, "%s: '%s' is the input '%s': refusing to overwrite it\n", prog, dest, inputs[i]);
            return false;
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

bool tool_out_reachable(const char *prog, const char *dest)
{
    if (is_stdout(dest)) return true;
    out_file of;
    if (!out_lookup(prog, dest, &of)) return false;
    if (of.dir >= 0) close(of.dir);
    if (of.err) fprintf(stderr, "%s: cannot write '%s': %s\n", prog, dest, strerror(of.err));
    return !of.err;
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

/* The temporary files being written (a tool has at most two outputs open
 * at once: hipamp-embed's source and header), for the handler of the
 * signals that end a tool to remove: a run interrupted mid-write left one
 * behind beside the output. Set and cleared outside the handler, which
 * only reads them (unlinkat is async-signal-safe). */
#define PENDING 2
static int pending_dir[PENDING];
static char pending_leaf[PENDING][256];
static volatile sig_atomic_t pending_used[PENDING];

static void pending_set(int dir, const char *leaf, bool on)
{
    for (int i = 0; i < PENDING; ++i) {
        if (on && !pending_used[i]) {
            pending_dir[i] = dir;
            snprintf(pending_leaf[i], sizeof pending_leaf[i], "%s", leaf);
            pending_used[i] = 1;
            return;
        }
        if (!on && pending_used[i] && pending_dir[i] == dir && !strcmp(pending_leaf[i], leaf)) {
            pending_used[i] = 0;
            return;
        }
    }
}

static void remove_pending_and_die(int sig)
{
    for (int i = 0; i < PENDING; ++i)
        if (pending_used[i]) unlinkat(pending_dir[i], pending_leaf[i], 0);
    signal(sig, SIG_DFL);
    raise(sig);
}

void tool_start(void)
{
    /* A closed pipe is a write error the tool reports (tool_stdout_close,
     * tool_out_close), not a silent death by SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = remove_pending_and_die;
    sigemptyset(&sa.sa_mask);
    const int ends[] = {SIGINT, SIGTERM, SIGHUP, SIGXFSZ}; /* SIGXFSZ: past the file size limit (ulimit -f) */
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; ++i) {
        struct sigaction old;
        /* One the caller ignores (nohup) stays ignored. */
        if (sigaction(ends[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN) sigaction(ends[i], &sa, NULL);
    }
}

/* A temporary file beside leaf in dir, made new (O_CREAT | O_EXCL |
 * O_NOFOLLOW: never a file or link put there before) under a random name,
 * which is written into o->tmp_leaf; its descriptor, or -1 with errno. */
static int create_tmp(int dir, const char *leaf, char *name, size_t n)
{
    static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    for (int attempt = 0; attempt < 100; ++attempt) {
        unsigned char r[8];
        if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
            /* Only a guess another user could make: O_EXCL still keeps
             * their file from being used, at worst the run fails. */
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            unsigned long long v = (unsigned long long)ts.tv_nsec * 2654435761u ^ (unsigned long long)getpid() << 20 ^
                                   (unsigned long long)attempt;
            memcpy(r, &v, sizeof r);
        }
        char suffix[sizeof r + 1];
        for (size_t i = 0; i < sizeof r; ++i) suffix[i] = digits[r[i] % (sizeof digits - 1)];
        suffix[sizeof r] = '\0';
        /* The leaf cut short where the whole would pass NAME_MAX: an
         * output name of 243 to 255 bytes is still written (its temporary
         * name was too long, and the run failed). */
        size_t keep = strlen(leaf), room = NAME_MAX - (sizeof ".tmp." - 1) - sizeof r;
        int w = snprintf(name, n, "%.*s.tmp.%s", (int)(keep < room ? keep : room), leaf, suffix);
        if (w < 0 || (size_t)w >= n || w > NAME_MAX) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    return -1;
}

bool tool_out_open(tool_out *o, const char *prog, const char *dest)
{
    o->prog = prog;
    o->f = NULL;
    o->dest = is_stdout(dest) ? NULL : dest;
    o->target = NULL;
    o->tmp = NULL;
    o->dir = -1;
    o->leaf[0] = o->tmp_leaf[0] = '\0';
    o->to_stdout = !o->dest;
    if (!o->dest) {
        o->f = stdout;
        return true;
    }
    out_file of;
    int fd = -1;
    if (!out_lookup(prog, dest, &of)) return false;
    if (of.fd >= 0) return open_descriptor(o, &of);
    if (of.err) {
        fprintf(stderr, "%s: cannot create '%s': %s\n", prog, dest, strerror(of.err));
        return false;
    }
    if (of.exists && !S_ISREG(of.st.st_mode)) {
        bool ok = open_in_place(o, &of);
        close(of.dir);
        return ok;
    }
    /* A regular file is replaced whole; through links, the file they lead
     * to is, and the links stay. The temporary file is made and renamed in
     * the directory the walk ended in (o->dir), not by path. In a directory
     * another user may write, they could swap the temporary file before the
     * rename; they could as well replace the output itself there, so that
     * gives them nothing more. */
    o->dir = of.dir;
    snprintf(o->leaf, sizeof o->leaf, "%s", of.leaf);
    if (!(o->target = strdup(of.path))) {
        fprintf(stderr, "%s: out of memory\n", prog);
        goto fail;
    }
    if ((fd = create_tmp(o->dir, o->leaf, o->tmp_leaf, sizeof o->tmp_leaf)) < 0) {
        fprintf(stderr, "%s: cannot create a temporary file beside '%s': %s\n", prog, o->target, strerror(errno));
        goto fail;
    }
    pending_set(o->dir, o->tmp_leaf, true);
    size_t n = strlen(o->target) + strlen(o->tmp_leaf) + 2;
    if (!(o->tmp = malloc(n))) {
        fprintf(stderr, "%s: out of memory\n", prog);
        goto fail;
    }
    const char *slash = strrchr(o->target, '/');
    snprintf(o->tmp, n, "%.*s%s", slash ? (int)(slash - o->target + 1) : 0, o->target, o->tmp_leaf);
    /* Private (0600) until here. A file replaced keeps its permission bits
     * (a private one stays private) and, as root, its owner and group; its
     * group also where the user is in that group; set-id bits only where
     * owner and group are kept, and the group's bits only where the group
     * is (they were granted to that group, not to the one the new file
     * has). A new file gets the mode
     * any new file of this user would have; so does one that another user
     * may have put in a sticky directory others may write (/tmp), unless
     * they own the directory: kept, their owner (as root) or their mode
     * bits (0666) would let them change the output after the rename, which
     * the sticky bit keeps them from doing to a file of ours. */
    bool planted = false;
    if (of.exists && of.st.st_uid != geteuid()) {
        struct stat ds;
        planted = fstat(o->dir, &ds) != 0 || ((ds.st_mode & S_ISVTX) && (ds.st_mode & (S_IWGRP | S_IWOTH)) &&
                                              of.st.st_uid != ds.st_uid);
    }
    if (of.exists && !planted) {
        struct stat now;
        bool uid_kept = false, gid_kept = false;
        if (fstat(fd, &now) == 0) {
            uid_kept = now.st_uid == of.st.st_uid;
            gid_kept = now.st_gid == of.st.st_gid;
        }
        if ((!uid_kept || !gid_kept) && geteuid() == 0 && fchown(fd, of.st.st_uid, of.st.st_gid) == 0)
            uid_kept = gid_kept = true;
        if (!gid_kept && fchown(fd, (uid_t)-1, of.st.st_gid) == 0) gid_kept = true;
        mode_t mode = of.st.st_mode & 07777;
        if (!uid_kept || !gid_kept) mode &= ~(mode_t)(S_ISUID | S_ISGID);
        if (!gid_kept) mode &= ~(mode_t)S_IRWXG;
        (void)fchmod(fd, mode);
    } else {
        mode_t mask = umask(0);
        umask(mask);
        (void)fchmod(fd, 0666 & ~mask);
    }
    if (!(o->f = fdopen(fd, "wb"))) {
        fprintf(stderr, "%s: cannot write '%s': %s\n", prog, o->tmp, strerror(errno));
        goto fail;
    }
    return true;
fail:
    if (fd >= 0) {
        close(fd);
        unlinkat(o->dir, o->tmp_leaf, 0);
        pending_set(o->dir, o->tmp_leaf, false);
    }
    if (o->dir >= 0) close(o->dir);
    o->dir = -1;
    free(o->tmp);
    free(o->target);
    o->tmp = o->target = NULL;
    return false;
}

/* The rename made durable: the directory it changed synced. Where that
 * cannot be done (a directory this user may search but not read, a file
 * system without fsync of directories: EINVAL) nothing more is asked;
 * an I/O error is reported (the file is in place, but may not stay there). */
static bool sync_dir(const tool_out *o)
{
    int fd = openat(o->dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return true;
    bool ok = fsync(fd) == 0 || errno == EINVAL || errno == EROFS;
    if (!ok)
        fprintf(stderr, "%s: '%s' was written, but its directory could not be written to disk (fsync): %s\n", o->prog,
                o->target, strerror(errno));
    close(fd);
    return ok;
}

bool tool_out_close(tool_out *o, bool ok)
{
    /* The caller's failed write (its callers write, then close at once). */
    int write_errno = errno;
    if (!o->dest) {
        /* What failed before the flush left its mark in ferror. */
        errno = 0;
        if (fflush(stdout) != 0 || ferror(stdout)) {
            fprintf(stderr, "%s: write error: %s\n", o->prog,
                    strerror(errno ? errno : write_errno ? write_errno : EIO));
            ok = false;
        }
        return ok;
    }
    const char *name = o->tmp ? o->tmp : o->dest;
    if (o->f) {
        bool err = ferror(o->f) != 0;
        int e = 0;
        /* On disk before the rename: else a crash after it could leave the
         * output's name holding an empty or partial file (the rename may
         * reach the disk before the data). */
        if (ok && !err && o->tmp) {
            if (fflush(o->f) != 0) e = errno ? errno : EIO;
            else if (fsync(fileno(o->f)) != 0) {
                fprintf(stderr, "%s: cannot write '%s' to disk (fsync of '%s'): %s\n", o->prog, o->target, o->tmp,
                        strerror(errno));
                ok = false;
            }
        }
        errno = 0;
        if (fclose(o->f) != 0 || err || e) {
            if (ok || err)
                fprintf(stderr, "%s: cannot write '%s': %s\n", o->prog, o->tmp ? o->target : name,
                        strerror(e ? e : errno ? errno : err && write_errno ? write_errno : EIO));
            ok = false;
        }
        o->f = NULL;
    }
    if (o->tmp) {
        if (ok && renameat(o->dir, o->tmp_leaf, o->dir, o->leaf) != 0) {
            fprintf(stderr, "%s: cannot rename '%s' to '%s': %s\n", o->prog, o->tmp, o->target, strerror(errno));
            ok = false;
        }
        if (!ok) unlinkat(o->dir, o->tmp_leaf, 0);
        pending_set(o->dir, o->tmp_leaf, false);
        if (ok && !sync_dir(o)) ok = false;
    }
    if (o->dir >= 0) close(o->dir);
    o->dir = -1;
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
    /* EBADF after a flush that lost nothing: no standard output was open
     * (">&-"), and the tool wrote nothing to it (its outputs were files). */
    if (fclose(stdout) != 0 && errno != EBADF) {
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
        /* amp_program_build_file's limit: a larger file is refused before
         * it is read (or, grown while read, once it passes it). */
        if ((uint64_t)st.st_size > TOOL_SOURCE_MAX || len > TOOL_SOURCE_MAX) {
            fprintf(stderr, "%s: '%s' is larger than a kernel source may be (%u MiB)\n", prog, path,
                    TOOL_SOURCE_MAX >> 20);
            goto fail;
        }
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

bool tool_target_shaped(const char *t)
{
    if (!strncmp(t, "sm_", 3)) {
        const char *p = t + 3;
        if (!isdigit((unsigned char)*p)) return false;
        while (isdigit((unsigned char)*p)) ++p;
        if (isalpha((unsigned char)*p)) ++p;
        return !*p;
    }
    if (strncmp(t, "gfx", 3) || !isalnum((unsigned char)t[3])) return false;
    const char *p = t + 3;
    while (isalnum((unsigned char)*p) || (*p == '-' && isalnum((unsigned char)p[1]))) ++p;
    while (*p == ':') {
        const char *f = ++p;
        while (isalnum((unsigned char)*p)) ++p;
        if (p == f || (*p != '+' && *p != '-')) return false;
        ++p;
    }
    return !*p;
}
