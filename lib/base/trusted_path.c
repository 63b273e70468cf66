/* trusted_path.c — who could have put what a path leads to where it is (trusted_path.h): the lookup walked component by component as the kernel walks it, symbolic links followed, each directory looked in and what is found held against the writers a caller trusts. */
#include "trusted_path.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#define AMP__WALK_MAX_LINKS 40 /* symbolic links on one lookup, as the kernel allows */

static bool amp__trusts_uid(const amp__trust *t, uid_t u)
{
    for (int i = 0; i < t->nuid; ++i)
        if (t->uid[i] == u) return true;
    return t->everyone;
}

static bool amp__trusts_gid(const amp__trust *t, gid_t g)
{
    for (int i = 0; i < t->ngid; ++i)
        if (t->gid[i] == g) return true;
    return t->everyone;
}

static void amp__trust_add(amp__trust *t, uid_t u, const gid_t *g)
{
    if (!amp__trusts_uid(t, u) && t->nuid < AMP__TRUST_MAX) t->uid[t->nuid++] = u;
    if (g && !amp__trusts_gid(t, *g) && t->ngid < AMP__TRUST_MAX) t->gid[t->ngid++] = *g;
}

void amp__trust_user(amp__trust *t, uid_t u)
{
    amp__trust_add(t, u, NULL);
}

/* The writers of what st describes. Others may only add names to a sticky
 * directory (/tmp), not change what is there: its owner alone counts. */
static void amp__trust_writers(amp__trust *t, const struct stat *st)
{
    amp__trust_add(t, st->st_uid, NULL);
    if (S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX)) return;
    if (st->st_mode & S_IWGRP) amp__trust_add(t, st->st_uid, &st->st_gid);
    if (st->st_mode & S_IWOTH) t->everyone = true;
}

void amp__trust_init(amp__trust *t, const char *dir, const struct stat *file)
{
    memset(t, 0, sizeof *t);
    gid_t root_group = 0;
    amp__trust_add(t, 0, &root_group);
    /* This user, unless this is a set-uid, set-gid or file-capability
     * program (AT_SECURE) that runs as whoever started it (a capability or
     * set-gid one: euid is the real uid): their files are the invoker's,
     * who must not choose what runs with the program's rights. A set-uid
     * program's own user (euid, not the real one) is trusted. */
    if (!getauxval(AT_SECURE) || geteuid() != getuid()) amp__trust_add(t, geteuid(), NULL);
    if (file) amp__trust_writers(t, file);
    if (!dir || dir[0] != '/') return;
    char prefix[PATH_MAX];
    size_t n = strlen(dir);
    struct stat st;
    if (n >= sizeof prefix) return;
    if (stat("/", &st) == 0) amp__trust_writers(t, &st);
    for (size_t i = 1; i <= n; ++i) {
        if ((i < n && dir[i] != '/') || dir[i - 1] == '/') continue;
        memcpy(prefix, dir, i);
        prefix[i] = '\0';
        if (stat(prefix, &st) == 0) amp__trust_writers(t, &st);
    }
}

/* Why someone outside t could have changed entry (NULL: absent) of
 * directory dir, named dir_path; NULL when no one could. */
static const char *amp__dir_problem(const amp__trust *t, const char *dir_path, const struct stat *dir,
                                    const char *entry_path, const struct stat *entry, char *buf, size_t n)
{
    if (!amp__trusts_uid(t, dir->st_uid)) {
        snprintf(buf, n, "%s belongs to uid %lu", dir_path, (unsigned long)dir->st_uid);
        return buf;
    }
    bool other = (dir->st_mode & S_IWOTH) && !t->everyone;
    bool group = (dir->st_mode & S_IWGRP) && !amp__trusts_gid(t, dir->st_gid);
    if (!other && !group) return NULL;
    if ((dir->st_mode & S_ISVTX) && entry) {
        /* A second name of one of our files is a name someone else may have
         * made (a hard link: where fs.protected_hardlinks is off, of any
         * file they can read), and may make again after what they put
         * there first was read. */
        const char *who = other ? "every user" : "its group";
        if (!amp__trusts_uid(t, entry->st_uid))
            snprintf(buf, n, "%s belongs to uid %lu, in %s, which %s can write", entry_path,
                     (unsigned long)entry->st_uid, dir_path, who);
        else if (!S_ISDIR(entry->st_mode) && entry->st_nlink > 1)
            snprintf(buf, n, "%s has %lu hard links, in %s, which %s can write (another user may have linked it "
                     "there)", entry_path, (unsigned long)entry->st_nlink, dir_path, who);
        else
            return NULL;
        return buf;
    }
    if (other) snprintf(buf, n, "%s is writable by every user (mode %04o)", dir_path, (unsigned)(dir->st_mode & 07777));
    else
        snprintf(buf, n, "%s is writable by group %lu (mode %04o)", dir_path, (unsigned long)dir->st_gid,
                 (unsigned)(dir->st_mode & 07777));
    return buf;
}

static const char *amp__entry_problem(const amp__trust *t, const char *path, const struct stat *st, char *buf,
                                      size_t n)
{
    if (!amp__trusts_uid(t, st->st_uid)) snprintf(buf, n, "%s belongs to uid %lu", path, (unsigned long)st->st_uid);
    else if ((st->st_mode & S_IWOTH) && !t->everyone)
        snprintf(buf, n, "%s is writable by every user (mode %04o)", path, (unsigned)(st->st_mode & 07777));
    else if ((st->st_mode & S_IWGRP) && !amp__trusts_gid(t, st->st_gid))
        snprintf(buf, n, "%s is writable by group %lu (mode %04o)", path, (unsigned long)st->st_gid,
                 (unsigned)(st->st_mode & 07777));
    else return NULL;
    return buf;
}

int amp__trusted_walk(const amp__trust *t, const char *base, const char *name, size_t len, char *why, size_t n)
{
    char cur[PATH_MAX], rest[PATH_MAX], next[PATH_MAX], link[PATH_MAX];
    int links = 0;
    if (len >= sizeof rest || strlen(base) >= sizeof cur) return AMP__WALK_NOTHING;
    memcpy(rest, name, len);
    rest[len] = '\0';
    snprintf(cur, sizeof cur, "%s", rest[0] == '/' ? "/" : base);
    const char *p = rest;
    for (;;) {
        while (*p == '/') ++p;
        if (!*p) return AMP__WALK_NOTHING; /* ends in '/': names no file */
        const char *end = strchr(p, '/');
        size_t cl = end ? (size_t)(end - p) : strlen(p);
        const char *after = p + cl;
        while (*after == '/') ++after;
        bool last = !*after;
        if (cl == 1 && p[0] == '.') {
            if (last) return AMP__WALK_NOTHING;
            p = after;
            continue;
        }
        if (cl == 2 && p[0] == '.' && p[1] == '.') {
            char *slash = strrchr(cur, '/');
            if (slash == cur) cur[1] = '\0';
            else if (slash) *slash = '\0';
            if (last) return AMP__WALK_NOTHING;
            p = after;
            continue;
        }
        int k = snprintf(next, sizeof next, "%s%s%.*s", cur, strcmp(cur, "/") ? "/" : "", (int)cl, p);
        if (k < 0 || (size_t)k >= sizeof next) return AMP__WALK_NOTHING;
        struct stat ds, es;
        if (stat(cur, &ds) != 0 || lstat(next, &es) != 0) return AMP__WALK_NOTHING;
        const char *problem = amp__dir_problem(t, cur, &ds, next, &es, why, n);
        if (problem) return AMP__WALK_UNTRUSTED;
        if (S_ISLNK(es.st_mode)) {
            ssize_t ll = readlink(next, link, sizeof link - 1);
            if (ll <= 0 || ++links > AMP__WALK_MAX_LINKS) return AMP__WALK_NOTHING;
            link[ll] = '\0';
            /* The link's target, then what followed it. */
            char joined[PATH_MAX];
            k = snprintf(joined, sizeof joined, "%s%s%s", link, last ? "" : "/", after);
            if (k < 0 || (size_t)k >= sizeof joined) return AMP__WALK_NOTHING;
            memcpy(rest, joined, (size_t)k + 1);
            p = rest;
            if (rest[0] == '/') snprintf(cur, sizeof cur, "/");
            continue;
        }
        /* A directory is no file: a compiler looking for a header looks on. */
        if (last && S_ISDIR(es.st_mode)) return AMP__WALK_DIR;
        if (last) return amp__entry_problem(t, next, &es, why, n) ? AMP__WALK_UNTRUSTED : AMP__WALK_FILE;
        if (!S_ISDIR(es.st_mode)) return AMP__WALK_NOTHING;
        memcpy(cur, next, (size_t)k + 1);
        /* The rest of the name is in rest, after p: keep it where it is. */
        p = after;
    }
}

int amp__trusted_dir(const amp__trust *t, const char *dir, char *why, size_t n)
{
    char real[PATH_MAX];
    struct stat st;
    int w = amp__trusted_walk(t, "/", dir, strlen(dir), why, n);
    if (w != AMP__WALK_DIR) return w == AMP__WALK_FILE ? AMP__WALK_NOTHING : w;
    if (!realpath(dir, real) || stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) return AMP__WALK_NOTHING;
    /* No entry: in a sticky directory a new name needs no one's file. */
    return amp__dir_problem(t, real, &st, NULL, NULL, why, n) ? AMP__WALK_UNTRUSTED : AMP__WALK_DIR;
}

bool amp__ancestors_pass(const char *real, bool whole, amp__dir_judge judge, void *ctx, char *dir, size_t n, char *why,
                         size_t m)
{
    const size_t len = strlen(real);
    /* The parent's end: the last '/', which is / itself for "/x". */
    const char *slash = strrchr(real, '/');
    const size_t end = whole ? len : slash ? (size_t)(slash - real) : 0;
    char at[PATH_MAX];
    if (real[0] != '/' || len >= sizeof at) {
        snprintf(dir, n, "%s", real);
        snprintf(why, m, "%s", real[0] != '/' ? "not an absolute path" : "a path too long to walk");
        return false;
    }
    /* "/" first, then each prefix ending before a '/' or at end. */
    for (size_t p = 0; p <= end; ++p) {
        if (p > 0 && p < end && real[p] != '/') continue;
        if (p > 0 && p == end && real[p - 1] == '/') continue; /* a trailing '/': judged already */
        if (p > 0 && p < end && real[p - 1] == '/') continue;  /* "//": the same directory */
        snprintf(at, sizeof at, "%.*s", p ? (int)p : 1, real);
        struct stat sb;
        if (stat(at, &sb) != 0) {
            snprintf(why, m, "%s", strerror(errno));
        } else if (judge(&sb, ctx, why, m)) {
            continue;
        }
        snprintf(dir, n, "%s", at);
        return false;
    }
    return true;
}

bool amp__path_tidy(const char *path, char *out, size_t n)
{
    char cwd[PATH_MAX];
    size_t k = 0;
    if (path[0] != '/') {
        if (!getcwd(cwd, sizeof cwd) || (k = strlen(cwd)) >= n) return false;
        memcpy(out, cwd, k);
    }
    for (const char *p = path;;) {
        while (*p == '/') ++p;
        if (!*p) break;
        size_t cl = strcspn(p, "/");
        if (!(cl == 1 && p[0] == '.')) {
            bool root = k == 1 && out[0] == '/';
            if (k + (root ? 0 : 1) + cl >= n) return false;
            if (!root) out[k++] = '/';
            memcpy(out + k, p, cl);
            k += cl;
        }
        p += cl;
    }
    if (!k) out[k++] = '/';
    out[k] = '\0';
    return true;
}
