/* fuzz_support.h — what the file-reading harnesses share: their private directory (made at the first input, on tmpfs where /dev/shm is there, else in /tmp; emptied and removed at exit, left beside the reproducer by a crash) and an input split into its first byte (the repairs asked for) and a writable copy of the rest. */
#ifndef HIPAMP_FUZZ_SUPPORT_H
#define HIPAMP_FUZZ_SUPPORT_H

#include <stdint.h>
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

/* A copy of data[1..size) (the caller frees it; at least one byte is
 * allocated), *first the first byte, *n the copy's size; NULL for an empty
 * input or no memory. */
static uint8_t *fz_split(const uint8_t *data, size_t size, unsigned *first, size_t *n)
{
    if (size < 1) return NULL;
    uint8_t *b = malloc(size - 1 ? size - 1 : 1);
    if (!b) return NULL;
    memcpy(b, data + 1, size - 1);
    *first = data[0];
    *n = size - 1;
    return b;
}

#endif
