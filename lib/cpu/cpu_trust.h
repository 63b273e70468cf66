/* cpu_trust.h — who the CPU accelerator trusts with the programs it runs and the libraries it loads (cpu_trust.c): used by cpu_toolchain.c (the compiler) and cpu_clang.c (libclang). */
#ifndef HIPAMP_CPU_TRUST_H
#define HIPAMP_CPU_TRUST_H

#include "base/trusted_path.h"

#include <stdbool.h>
#include <stddef.h>

/* Who besides root and this user may own the compiler and the directories
 * on its way: AMP_TRUSTED_USERS, user names or uids separated by commas (a
 * site's software account that installs compilers), added to t. False with
 * why (n bytes) naming a word that is no user here, or an empty one. */
bool amp__cpu_trusted_users(amp__trust *t, char *why, size_t n);
/* Why the file at path (absolute) could be another local user's to change
 * (why, naming it), or NULL: the way to it, its links and the file are
 * root's, this user's or an AMP_TRUSTED_USERS account's, and writable by no
 * one else. Held to it: the compiler and what it runs, and libclang, which
 * is loaded into the process. */
const char *amp__cpu_unsafe_program(const char *path, char *why, size_t n);

#endif
