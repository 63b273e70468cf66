/* fuzz_disk_cache_entry.c — libFuzzer harness for the disk cache's entry reader (lib/core/disk_cache.c: amp__dcache_load — the size check from fstat, the header's magic, format, key and payload size, read before the MAC; the payload, read and MAC-checked after). The cache is a private directory on tmpfs (AMP_CACHE_DIR), its key made by the library at the first store. The input's first byte chooses repairs (bit 0: a good magic and format; bit 1: the key asked for; bit 2: payload_size the file's; bit 3: a correct HMAC under the directory's key, so that the accepted path runs); the rest is the entry, written at the key's name. An entry loaded must be exactly the file's payload. */
#include "core/internal.h"
#include "fuzz_support.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { HDR = 88 }; /* magic 8, format 4, reserved 4, key 32, payload_size 8, mac 32 */
static uint8_t mackey[32];
static const uint8_t key[32] = {0xfa, 0x22, 0x01};


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[192], hex[65];
    amp__hex(key, 32, hex);
    const bool first = !fz_dir[0];
    const char *dir = fz_private_dir("dc");
    if (first) {
        setenv("AMP_CACHE_DIR", dir, 1);
        unsetenv("AMP_CACHE_SHARED");
        static const uint8_t other[32] = {1};
        amp__dcache_store(other, "seed", 4); /* makes the key */
        if (!amp__dcache_usable()) abort();
        snprintf(path, sizeof path, "%s/.key", dir);
        int kf = open(path, O_RDONLY);
        if (kf < 0 || read(kf, mackey, 32) != 32) abort();
        close(kf);
    }
    unsigned fix = 0;
    size_t n = 0;
    uint8_t *b = fz_split(data, size, &fix, &n);
    if (!b) return 0;
    if (n >= HDR) {
        if (fix & 1) {
            uint32_t fmt = 2;
            memcpy(b, "HIPAMPC2", 8);
            memcpy(b + 8, &fmt, 4);
        }
        if (fix & 2) memcpy(b + 16, key, 32);
        if (fix & 4) {
            uint64_t ps = n - HDR;
            memcpy(b + 48, &ps, 8);
        }
        if (fix & 8) (void)amp__hmac_sha256(mackey, b, 56, b + HDR, n - HDR, b + 56);
    }
    snprintf(path, sizeof path, "%s/%s.ampc", dir, hex);
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) abort();
    if (n && write(fd, b, n) != (ssize_t)n) abort();
    close(fd);
    size_t got = 0;
    void *p = amp__dcache_load(key, &got);
    if (getenv("FZ_DEBUG")) {
        amp_cache_info ci;
        amp_cache_get_info(&ci);
        fprintf(stderr, "fz: loaded %d (%zu bytes) enabled %d reason '%s' last '%s'\n", p != NULL, got, ci.disk_enabled, ci.reason, ci.last_uncacheable);
    }
    if (p) {
        if (n < HDR || got != n - HDR || memcmp(p, b + HDR, got)) abort();
        free(p);
    }
    free(b);
    return 0;
}
