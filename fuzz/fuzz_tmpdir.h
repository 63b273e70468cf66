/* fuzz_tmpdir.h — the file-reading harnesses' private directory: made at the first input (on tmpfs where /dev/shm is there, else in /tmp), emptied and removed at exit; a crash leaves it beside its reproducer. */
#ifndef HIPAMP_FUZZ_TMPDIR_H
#define HIPAMP_FUZZ_TMPDIR_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fz_dir[96];

static void fz_dir_remove(void)
{
    DIR *d = opendir(fz_dir);
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) (void)unlinkat(dirfd(d), e->d_name, 0);
    if (d) closedir(d);
    (void)rmdir(fz_dir);
}

/* The directory (its name carries tag), made on the first call. */
static const char *fz_private_dir(const char *tag)
{
    if (!fz_dir[0]) {
        snprintf(fz_dir, sizeof fz_dir, "/dev/shm/fz-%s.XXXXXX", tag);
        if (!mkdtemp(fz_dir)) {
            snprintf(fz_dir, sizeof fz_dir, "/tmp/fz-%s.XXXXXX", tag);
            if (!mkdtemp(fz_dir)) abort();
        }
        atexit(fz_dir_remove);
    }
    return fz_dir;
}

#endif
