/* trusted_path.h — who could have put what a path leads to where it is: a lookup walked as the kernel walks it, links included, each directory and the file held against a set of trusted writers; shared by the include scan (headers), the check of what a compiler read (lib/core/program.c) and the CPU accelerator's compiler check. */
#ifndef AMP_TRUSTED_PATH_H
#define AMP_TRUSTED_PATH_H

#include "core.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct stat;

/* Who may have written what a lookup finds: root (and its group), this
 * user, and whoever amp__trust_init adds. Past AMP__TRUST_MAX writers the
 * rest are not trusted: more refusals, never fewer. */
#define AMP__TRUST_MAX 32
typedef struct amp__trust {
    uid_t uid[AMP__TRUST_MAX];
    gid_t gid[AMP__TRUST_MAX];
    int nuid, ngid;
    bool everyone;
} amp__trust;

/* Root, this user, the writers of file (may be NULL) and of every directory
 * from / down to dir (absolute and real; NULL: none): whoever could have
 * changed a file in dir, and so what it names. */
void amp__trust_init(amp__trust *t, const char *dir, const struct stat *file);

/* Trust uid u too (past AMP__TRUST_MAX: not; more refusals, never fewer). */
void amp__trust_user(amp__trust *t, uid_t u);

/* What amp__trusted_walk finds. */
enum {
    AMP__WALK_UNTRUSTED = -1, /* someone outside the set could have put it, or a directory or link on the way, there */
    AMP__WALK_NOTHING = 0,    /* nothing there, or a link loop, a non-directory on the way, a name too long */
    AMP__WALK_FILE = 1,       /* something that is not a directory, and no one outside the set could have put it there */
    AMP__WALK_DIR = 2,        /* a directory, on a trusted way (the directory itself is not judged) */
};

/* Look name (len bytes; absolute, or relative to the real directory base)
 * up as the kernel does, symbolic links included (at most 40, as the
 * kernel), checking each directory it looks in and what it finds against
 * t. On AMP__WALK_UNTRUSTED, why (n bytes) names the path and who could
 * write it, with its mode. Reads only metadata; thread-safe. */
int amp__trusted_walk(const amp__trust *t, const char *base, const char *name, size_t len, char *why, size_t n);

/* Whether no one outside t could put a program in the directory dir
 * (absolute): the way to it as amp__trusted_walk judges it, and the
 * directory itself, whose new names anyone who may write it could make,
 * sticky or not. AMP__WALK_DIR when no one could, AMP__WALK_UNTRUSTED with
 * why (n bytes) naming who could, AMP__WALK_NOTHING when dir is no
 * directory. Reads only metadata; thread-safe. */
int amp__trusted_dir(const amp__trust *t, const char *dir, char *why, size_t n);

/* A caller's rule for one directory above a path: true when it passes;
 * false with the reason in what (n bytes). */
typedef bool (*amp__dir_judge)(const struct stat *sb, void *ctx, char *what, size_t n);

/* Each directory from / down to real (absolute and resolved: no links, no
 * ".."), real itself last when whole, else its parent, stat'ed and held to
 * judge. True when every one passes; else false with the first that could
 * not be stat'ed or that judge refused in dir (n bytes) and why in why (m
 * bytes). Reads only metadata; thread-safe. */
bool amp__ancestors_pass(const char *real, bool whole, amp__dir_judge judge, void *ctx, char *dir, size_t n, char *why,
                         size_t m);

/* path as a lookup would take it from here, without looking: made
 * absolute from the working directory, its empty and "." components left
 * out; ".." and links kept (what a link leads to decides where a ".."
 * after it goes). false when it does not fit out (n bytes). */
bool amp__path_tidy(const char *path, char *out, size_t n);

#endif
