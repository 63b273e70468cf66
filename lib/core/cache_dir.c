/* cache_dir.c — the disk cache's directory reached without trusting the way there: its path walked one name at a time, every symbolic link judged before it is followed, the directories on the way made (0700; a shared cache's 0711) and the last with the cache's mode, every failure said for disk_cache.c. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void amp__dc_say(amp__dc_where *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void amp__dc_say(amp__dc_where *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->why, sizeof w->why, fmt, ap);
    va_end(ap);
}

/* Why the symbolic link at a name in the directory pfd, of owner
 * link_uid, is not followed (in why, n bytes), or NULL: only a link of
 * ours or root's where no other user could have put it (amp__link_planted,
 * the trace file's rule too). */
static const char *amp__dc_link_refused(int pfd, uid_t link_uid, char *why, size_t n)
{
    char where[160];
    struct stat ds;
    if (link_uid != geteuid() && link_uid != 0) snprintf(why, n, "a symbolic link owned by uid %d", (int)link_uid);
    else if (fstat(pfd, &ds) != 0) snprintf(why, n, "a symbolic link in a directory that cannot be examined");
    else if (amp__link_planted(&ds, link_uid, where, sizeof where))
        snprintf(why, n, "a symbolic link in %s; hipamp does not follow a link another user could have put there (a "
                 "link of yours renamed, or hard-linked, into place): set AMP_CACHE_DIR to the path it leads to", where);
    else
        return NULL;
    return why;
}

/* A directory this process just made on the way to a shared cache: mode
 * 0711, so that the group's members may pass through it to the cache
 * (whatever the umask left), and list nothing in it. Best effort: where it
 * fails, the members are refused with the directory named. */
static void amp__dc_let_through(int at, const char *name)
{
    struct stat sb;
    int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    if (fstat(fd, &sb) == 0 && sb.st_uid == geteuid()) (void)fchmod(fd, 0711);
    close(fd);
}

/* The directory path names (absolute, or relative to the directory from,
 * named shown in messages), as an O_PATH descriptor, or -1 after
 * amp__dc_say. Walked one name at a time, each looked up O_NOFOLLOW in
 * the descriptor of the one before, so that every symbolic link on the
 * way is judged before it is followed (amp__dc_link_refused): a link
 * another user put partway along AMP_CACHE_DIR (/tmp/theirs -> a private
 * directory of ours) would otherwise choose where the key is made and
 * which ".tmp-" files the sweep removes. A link is followed through the
 * inode held when it was judged (a link's text cannot change), so none can
 * be swapped in after the check. A missing name is made (0700; a shared
 * cache's 0711, amp__dc_let_through) when make is set. */
static int amp__dc_walk_dir(amp__dc_where *w, int from, const char *shown_from, const char *path, bool make)
{
    char rest[PATH_MAX], link[PATH_MAX], joined[PATH_MAX], shown[PATH_MAX], why[384];
    int cur = -1, next = -1, links = 0;
    snprintf(shown, sizeof shown, "%s", path[0] == '/' ? "" : shown_from);
    if ((size_t)snprintf(rest, sizeof rest, "%s", path) >= sizeof rest) {
        amp__dc_say(w, "cache directory %s: a path too long to walk", w->path);
        goto fail;
    }
    cur = path[0] == '/' ? open("/", O_PATH | O_CLOEXEC) : openat(from, ".", O_PATH | O_CLOEXEC);
    for (const char *p = rest; cur >= 0;) {
        while (*p == '/') ++p;
        size_t cl = strcspn(p, "/"), sl = strlen(shown);
        if (!cl) return cur;
        char name[NAME_MAX + 1];
        snprintf(name, sizeof name, "%.*s", (int)cl, p);
        p += cl;
        snprintf(shown + sl, sizeof shown - sl, "/%s", name);
        errno = ENAMETOOLONG; /* a name cut short is not looked up */
        next = cl > NAME_MAX ? -1 : openat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        bool making = next < 0 && errno == ENOENT && make;
        if (making) {
            bool new_dir = mkdirat(cur, name, 0700) == 0;
            if (new_dir && w->shared) amp__dc_let_through(cur, name);
            if (new_dir || errno == EEXIST) next = openat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        }
        struct stat sb;
        if (next < 0 || fstat(next, &sb) != 0) {
            amp__dc_say(w, "cannot %s cache directory %s: %s: %s", making ? "create" : "reach", w->path, shown,
                        strerror(errno));
            goto fail;
        }
        if (S_ISDIR(sb.st_mode)) {
            close(cur);
            cur = next;
            next = -1;
            continue;
        }
        if (!S_ISLNK(sb.st_mode)) {
            amp__dc_say(w, "cannot create cache directory %s: %s is not a directory", w->path, shown);
            goto fail;
        }
        if (amp__dc_link_refused(cur, sb.st_uid, why, sizeof why)) {
            amp__dc_say(w, "cache directory %s not used: %s is %s", w->path, shown, why);
            goto fail;
        }
        ssize_t ll = readlinkat(next, "", link, sizeof link - 1);
        if (ll <= 0 || ++links > 40 || (size_t)snprintf(joined, sizeof joined, "%.*s/%s", (int)ll, link, p) >=
                                           sizeof joined) {
            amp__dc_say(w, "cannot follow the symbolic link %s on the way to cache directory %s: %s", shown, w->path,
                        ll < 0 ? strerror(errno) : ll == 0 ? "empty" : "too many links, or too long a path");
            goto fail;
        }
        close(next);
        next = -1;
        memcpy(rest, joined, strlen(joined) + 1);
        p = rest;
        *strrchr(shown, '/') = '\0'; /* the link's directory: where a relative text starts */
        if (link[0] == '/') {
            close(cur);
            cur = open("/", O_PATH | O_CLOEXEC);
            shown[0] = '\0';
        }
    }
    amp__dc_say(w, "cannot open the way to cache directory %s: %s", w->path, strerror(errno));
fail:
    if (next >= 0) close(next);
    if (cur >= 0) close(cur);
    return -1;
}

/* The cache directory's descriptor, or -1 with w->why said; *made: made
 * now, mode mode. Every name on the way and the last is walked by
 * amp__dc_walk_dir (the directories above made, 0700, unless in the /tmp
 * fallback, whose last name may be no link at all). What the last name
 * leads to is checked on the descriptor by the caller, whatever the path
 * says later. */
int amp__dc_open_dir(amp__dc_where *w, bool tmp_fallback, mode_t mode, bool *made)
{
    char parent[PATH_MAX];
    int pfd = -1, at = -1, fd = -1;
    struct stat ls;
    *made = false;
    if (w->path_cut) {
        amp__dc_say(w, "the cache directory's path (from AMP_CACHE_DIR, XDG_CACHE_HOME or HOME) is longer than %d "
                    "bytes; it begins %.120s", PATH_MAX - 1, w->path);
        return -1;
    }
    snprintf(parent, sizeof parent, "%s", w->path);
    size_t len = strlen(parent);
    while (len > 1 && parent[len - 1] == '/') parent[--len] = '\0';
    char *slash = strrchr(parent, '/'); /* the path is absolute */
    const char *leaf = slash[1] ? slash + 1 : ".";
    *slash = '\0';
    if ((pfd = amp__dc_walk_dir(w, -1, "", slash == parent ? "/" : parent, !tmp_fallback)) < 0) goto out;
    *made = mkdirat(pfd, leaf, mode) == 0;
    /* Why the directory could not be made, when it is not there: the walk
     * below would only find it missing. */
    int mk_errno = *made ? 0 : errno;
    if (mk_errno && mk_errno != EEXIST && fstatat(pfd, leaf, &ls, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT) {
        amp__dc_say(w, "cannot create cache directory %s: %s", w->path, strerror(mk_errno));
        goto out;
    }
    if (tmp_fallback && fstatat(pfd, leaf, &ls, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(ls.st_mode)) {
        amp__dc_say(w, "cache directory %s is a symbolic link owned by uid %d", w->path, (int)ls.st_uid);
        goto out;
    }
    if ((at = amp__dc_walk_dir(w, pfd, parent, leaf, false)) < 0) goto out;
    if ((fd = openat(at, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        amp__dc_say(w, "cannot open cache directory %s: %s", w->path, strerror(errno));
out:
    if (at >= 0) close(at);
    if (pfd >= 0) close(pfd);
    return fd;
}
