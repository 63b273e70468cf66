/* trusted_file.h — whose files the library runs or loads into the process (trusted_file.c): root, this user and the AMP_TRUSTED_USERS accounts, over every step of the way to the file; held to it: the CPU accelerator's compiler and libclang, the NVTX tool NVTX_INJECTION64_PATH names, and amp_check_trusted_file's callers (hipamp::mpi's AMP_MPI_NCCL_LIBRARY); and the way to the directory AMP_CPU_DUMP_LOOPS writes into. */
#ifndef HIPAMP_TRUSTED_FILE_H
#define HIPAMP_TRUSTED_FILE_H

#include "base/trusted_path.h"

#include <stdbool.h>
#include <stddef.h>

/* Who besides root and this user may own the programs and libraries and the
 * directories on their way: AMP_TRUSTED_USERS, user names or uids separated
 * by commas (a site's software account that installs compilers), added to
 * t. False with why (n bytes) naming a word that is no user here, or an
 * empty one. */
bool amp__trusted_users(amp__trust *t, char *why, size_t n);
/* Why the file at path (absolute, or relative to the working directory)
 * could be another local user's to change (why, n bytes, naming it), or
 * NULL: the way to it, its links and the file are root's, this user's or
 * an AMP_TRUSTED_USERS account's, and writable by no one else. Reads file
 * metadata and, for AMP_TRUSTED_USERS names, the user database;
 * thread-safe. */
const char *amp__unsafe_file(const char *path, char *why, size_t n);
/* The same for the way to the directory dir (a place the library writes
 * into, not a file it loads): why a directory or link on the way could be
 * another local user's to change, or dir is no directory; NULL when
 * neither (the directory itself is not judged: a sticky /tmp passes).
 * Thread-safe. */
const char *amp__unsafe_way(const char *dir, char *why, size_t n);

#endif
