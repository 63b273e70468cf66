/* planted.c — whether another local user could have put a symbolic link where it is: the one rule by which the trace file (lib/trace/trace_file.c) and the disk cache's directory (lib/core/disk_cache.c) follow a link (the tools, which cannot call the library's internals, keep a copy in tools/tool_output.c). */
#include "core.h"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* A link's owner does not say who put it there: whoever may write its
 * directory can rename a link of ours into it from another directory they
 * may write (or hard-link one, protected_hardlinks off). So a link is
 * followed only in a directory of this user's or root's that no group or
 * other may write, or, in a sticky one they may, when it is this user's or
 * the directory owner's (the kernel's protected_symlinks rule, which a host
 * may have turned off). */
const char *amp__link_planted(const struct stat *dir, uid_t link_uid, char *why, size_t n)
{
    uid_t me = geteuid();
    bool shared = dir->st_mode & (S_IWGRP | S_IWOTH);
    if (dir->st_uid != me && dir->st_uid != 0)
        snprintf(why, n, "a directory of uid %u", (unsigned)dir->st_uid);
    else if (shared && !(dir->st_mode & S_ISVTX))
        snprintf(why, n, "a directory a group or others may write (mode %04o)", (unsigned)(dir->st_mode & 07777));
    else if (shared && link_uid != me && link_uid != dir->st_uid)
        snprintf(why, n, "a sticky directory others may write (mode %04o), and the link is not this user's (uid %u) or the "
                 "directory's owner's (uid %u)", (unsigned)(dir->st_mode & 07777), (unsigned)me,
                 (unsigned)dir->st_uid);
    else
        return NULL;
    return why;
}
