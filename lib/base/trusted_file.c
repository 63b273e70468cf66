/* trusted_file.c — whose files the library runs or loads into the process: root, this user and the AMP_TRUSTED_USERS accounts, over every step of the way to the file (trusted_path.c's walk); used by the CPU accelerator (its compiler, libclang), the trace's NVTX tool and amp_check_trusted_file (lib/core/trusted_check.c). */
#include "base/trusted_file.h"
#include "base/core.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool amp__trusted_users(amp__trust *t, char *why, size_t n)
{
    const char *list = amp__env("AMP_TRUSTED_USERS");
    for (const char *p = list; p && *p;) {
        size_t l = strcspn(p, ",");
        char word[64], buf[16384], *end = NULL;
        struct passwd pw, *found = NULL;
        if (l == 0 || l >= sizeof word) {
            snprintf(why, n, "AMP_TRUSTED_USERS=%.80s: %s", list,
                     l ? "a name longer than 63 characters" : "an empty name (user names or uids, separated by commas)");
            return false;
        }
        memcpy(word, p, l);
        word[l] = '\0';
        errno = 0;
        unsigned long uid = strtoul(word, &end, 10);
        if (word[0] >= '0' && word[0] <= '9' && !*end) {
            if (errno || uid >= (unsigned long)(uid_t)-1) {
                snprintf(why, n, "AMP_TRUSTED_USERS=%.80s: uid %s is out of range", list, word);
                return false;
            }
            amp__trust_user(t, (uid_t)uid);
        } else if (getpwnam_r(word, &pw, buf, sizeof buf, &found) == 0 && found) {
            amp__trust_user(t, found->pw_uid);
        } else {
            snprintf(why, n, "AMP_TRUSTED_USERS=%.80s: '%s' is no user on this system", list, word);
            return false;
        }
        p += l;
        if (*p == ',') ++p;
    }
    return true;
}

/* "Nothing another local user can write is ever executed". The lookup is
 * walked as the kernel walks it (amp__trusted_walk): every directory it
 * goes through, every symbolic link followed on the way and the file itself
 * must be root's, this user's or an AMP_TRUSTED_USERS account's, and
 * writable by no one else (a sticky directory's other entries excepted). No
 * wider trust, unlike a header's: nothing else names who may have put a
 * program or a library there. A relative path is walked from the working
 * directory, as dlopen and exec take it, from / down: a directory above the
 * working directory that someone else could change would let them move
 * another directory under the name getcwd gave while the process stays in
 * its own. */
/* path walked from / (a relative one through the working directory) by
 * amp__trusted_walk against root, this user and AMP_TRUSTED_USERS: what it
 * found, or AMP__WALK_UNTRUSTED with why (n bytes) set where the walk
 * could not start (a bad AMP_TRUSTED_USERS word, an unnamable working
 * directory). */
static int amp__walk_as_trusted(const char *path, char *why, size_t n)
{
    amp__trust trusted;
    amp__trust_init(&trusted, NULL, NULL);
    if (!amp__trusted_users(&trusted, why, n)) return AMP__WALK_UNTRUSTED;
    char cwd[PATH_MAX], abs[PATH_MAX * 2];
    const char *walked = path;
    if (path[0] != '/') {
        if (!getcwd(cwd, sizeof cwd)) {
            snprintf(why, n, "%.400s cannot be looked up: the working directory cannot be named (%s)", path,
                     strerror(errno));
            return AMP__WALK_UNTRUSTED;
        }
        snprintf(abs, sizeof abs, "%s/%s", cwd, path);
        walked = abs;
    }
    return amp__trusted_walk(&trusted, "/", walked, strlen(walked), why, n);
}

const char *amp__unsafe_file(const char *path, char *why, size_t n)
{
    int found = amp__walk_as_trusted(path, why, n);
    if (found == AMP__WALK_UNTRUSTED) return why;
    if (found == AMP__WALK_FILE) return NULL;
    if (found == AMP__WALK_DIR) {
        snprintf(why, n, "%.400s is a directory, not a file", path);
        return why;
    }
    snprintf(why, n, "no file at %.400s (nothing there, something on the way that is no directory, a name too long, or a loop of links)", path);
    return why;
}

const char *amp__unsafe_way(const char *dir, char *why, size_t n)
{
    int found = amp__walk_as_trusted(dir, why, n);
    if (found == AMP__WALK_UNTRUSTED) return why;
    if (found == AMP__WALK_DIR) return NULL;
    snprintf(why, n, "%.400s is no directory", dir);
    return why;
}
