/* cache.c — the on-disk compile cache: one file per key under amp_cache_dir(),
 * written to a temporary name and renamed so concurrent processes (MPI ranks)
 * never read a torn file; every entry carries its size and checksum, and a
 * corrupt or truncated entry is deleted and rebuilt, never trusted. */
#include "core.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define AMP__CACHE_MAGIC "HIPAMPC1"
#define AMP__CACHE_MAX_ENTRY (1u << 30)

typedef struct amp__cache_header {
    char magic[8];
    char key[32];
    uint64_t payload_size;
    uint64_t payload_fnv;
} amp__cache_header;

static pthread_once_t amp__cache_dir_once = PTHREAD_ONCE_INIT;
static char amp__cache_dir_buf[PATH_MAX];

static void amp__cache_dir_init(void)
{
    const char *d = amp__env("AMP_CACHE_DIR");
    const char *xdg = amp__env("XDG_CACHE_HOME");
    const char *home = amp__env("HOME");
    if (d)
        snprintf(amp__cache_dir_buf, sizeof amp__cache_dir_buf, "%s", d);
    else if (xdg)
        snprintf(amp__cache_dir_buf, sizeof amp__cache_dir_buf, "%s/hipamp", xdg);
    else if (home)
        snprintf(amp__cache_dir_buf, sizeof amp__cache_dir_buf, "%s/.cache/hipamp", home);
    else
        snprintf(amp__cache_dir_buf, sizeof amp__cache_dir_buf, "/tmp/hipamp-cache-%d", (int)getuid());
}

const char *amp_cache_dir(void)
{
    pthread_once(&amp__cache_dir_once, amp__cache_dir_init);
    return amp__cache_dir_buf;
}

/* mkdir -p; failures surface later as a failed open. */
static void amp__mkdirs(const char *path)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; ++p)
        if (*p == '/') {
            *p = 0;
            mkdir(buf, 0755);
            *p = '/';
        }
    mkdir(buf, 0700);
}

/* Cache entries become loaded code (the CPU accelerator dlopens them), so
 * a directory someone else could have planted files in is not used: it must
 * be ours and not writable by others. The predictable /tmp fallback makes
 * this matter. Group-writable stays allowed (a project's shared cache). */
static bool amp__cache_dir_trusted(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return false;
    return st.st_uid == geteuid() && !(st.st_mode & S_IWOTH);
}

static void amp__entry_path(const char *key, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%.32s.ampc", amp_cache_dir(), key);
}

void *amp__disk_cache_load(const char *key, size_t *size)
{
    char path[PATH_MAX];
    if (!amp__cache_dir_trusted(amp_cache_dir())) return NULL;
    amp__entry_path(key, path, sizeof path);
    void *data = NULL;
    bool corrupt = false;
    amp__cache_header h;
    struct stat stt;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    if (fstat(fd, &stt) != 0) goto out;
    if (stt.st_size < (off_t)sizeof h || read(fd, &h, sizeof h) != (ssize_t)sizeof h ||
        memcmp(h.magic, AMP__CACHE_MAGIC, 8) || memcmp(h.key, key, 32) ||
        h.payload_size > AMP__CACHE_MAX_ENTRY || (uint64_t)stt.st_size != sizeof h + h.payload_size) {
        corrupt = true;
        goto out;
    }
    data = malloc(h.payload_size ? h.payload_size : 1);
    if (!data) goto out;
    size_t got = 0;
    while (got < h.payload_size) {
        ssize_t r = read(fd, (char *)data + got, h.payload_size - got);
        if (r <= 0) break;
        got += (size_t)r;
    }
    if (got != h.payload_size || amp__fnv1a(AMP__FNV_SEED, data, got) != h.payload_fnv) {
        corrupt = true;
        free(data);
        data = NULL;
        goto out;
    }
    *size = got;
out:
    close(fd);
    /* Renames are atomic, so a bad entry is bad for everyone: remove it and
     * let the caller rebuild (the rebuilt entry replaces it by rename). */
    if (corrupt) unlink(path);
    return data;
}

void amp__disk_cache_store(const char *key, const void *data, size_t size)
{
    const char *dir = amp_cache_dir();
    char path[PATH_MAX], tmp[PATH_MAX];
    amp__mkdirs(dir);
    if (!amp__cache_dir_trusted(dir)) return;
    amp__entry_path(key, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s/.tmp-%.32s-%d-%llx", dir, key, (int)getpid(),
             (unsigned long long)amp__now_ns());
    amp__cache_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, AMP__CACHE_MAGIC, 8);
    memcpy(h.key, key, 32);
    h.payload_size = size;
    h.payload_fnv = amp__fnv1a(AMP__FNV_SEED, data, size);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return;
    bool ok = write(fd, &h, sizeof h) == (ssize_t)sizeof h;
    size_t put = 0;
    while (ok && put < size) {
        ssize_t w = write(fd, (const char *)data + put, size - put);
        if (w <= 0) ok = false;
        else put += (size_t)w;
    }
    if (close(fd) != 0) ok = false;
    if (!ok || rename(tmp, path) != 0) unlink(tmp);
}
