/* cpu_trust.c — who the CPU accelerator trusts with the programs it runs and
 * the libraries it loads (the compiler, libclang): root, this user and the
 * AMP_TRUSTED_USERS accounts, over every step of the way to the file
 * (lib/base/trusted_path.c). Below both cpu_toolchain.c and cpu_clang.c. */
#include "cpu_trust.h"
#include "base/core.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Who besides root and this user may own the compiler and the directories
 * on its way: AMP_TRUSTED_USERS, user names or uids separated by commas (a
 * site's software account that installs compilers). False with why (n
 * bytes) naming a word that is no user here, or an empty one. */
bool amp__cpu_trusted_users(amp__trust *t, char *why, size_t n)
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

/* Why the program at path (absolute) could be another local user's to
 * change (why, naming the path), or NULL: "nothing another local user can
 * write is ever executed". The lookup is walked as the kernel walks it
 * (amp__trusted_walk): every directory it goes through, every symbolic link
 * followed on the way and the file itself must be root's, this user's or
 * an AMP_TRUSTED_USERS account's, and writable by no one else (a sticky
 * directory's other entries excepted). No wider trust, unlike a header's:
 * nothing else names who may have put a compiler there. */
const char *amp__cpu_unsafe_program(const char *path, char *why, size_t n)
{
    amp__trust trusted;
    amp__trust_init(&trusted, NULL, NULL);
    if (!amp__cpu_trusted_users(&trusted, why, n)) return why;
    int found = amp__trusted_walk(&trusted, "/", path, strlen(path), why, n);
    if (found == AMP__WALK_UNTRUSTED) return why;
    if (found == AMP__WALK_FILE) return NULL;
    snprintf(why, n, "%.400s cannot be examined", path);
    return why;
}
