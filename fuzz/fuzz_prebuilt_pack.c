/* fuzz_prebuilt_pack.c — libFuzzer harness for the prebuilt packs' reader (lib/core/prebuilt.c: amp__pb_open's header and index checks, amp__pb_entry_check's payload digests), reached through amp__prebuilt_read (what hipamp-prebuild uses to re-read its own output; the run-time lookup amp__pb_load goes through the same amp__pb_open). The input's first byte chooses repairs so that the fuzzer gets past the checks a random file cannot pass (bit 0: a good magic, format, version and target; bit 1: count clamped to the entries the file holds; bit 2: the index sorted by key; bit 3: every in-file entry's digest; bit 4: the index digest; bit 5: every entry's offset and size moved into the file, applied before the digests); the rest is the pack, written to a file in a private directory on tmpfs. Every pack accepted must give entries of 1..64 MiB whose bytes are the file's at their offsets. */
#include "core/internal.h"
#include "hipamp_version.h"
#include "fuzz_support.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { HDR = 144, ENT = 80 };

static void sha(const void *p, size_t n, uint8_t out[32])
{
    memset(out, 0, 32);
    amp__sha256 *s = amp__sha256_new();
    if (!s) return;
    amp__sha256_field(s, p, n);
    (void)amp__sha256_final(s, out);
}

static int key_cmp(const void *a, const void *b) { return memcmp(a, b, 32); }


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *dir = fz_private_dir("pack");
    unsigned fix = 0;
    size_t n = 0;
    uint8_t *b = fz_split(data, size, &fix, &n);
    if (!b) return 0;
    if ((fix & 1) && n >= HDR) {
        uint32_t fmt = 1;
        memcpy(b, "HIPAMPK1", 8);
        memcpy(b + 8, &fmt, 4);
        memset(b + 16, 0, 32 + 64);
        snprintf((char *)b + 16, 32, "%s", HIPAMP_VERSION_STRING);
        snprintf((char *)b + 48, 64, "fz");
    }
    if ((fix & 2) && n >= HDR) {
        uint32_t c;
        memcpy(&c, b + 12, 4);
        if (c > (n - HDR) / ENT) c = (uint32_t)((n - HDR) / ENT);
        memcpy(b + 12, &c, 4);
    }
    uint32_t count = 0;
    if (n >= HDR) memcpy(&count, b + 12, 4);
    const bool index_in = n >= HDR && count <= (n - HDR) / ENT;
    if ((fix & 32) && index_in && n > HDR)
        for (uint32_t i = 0; i < count; ++i) {
            /* each entry's bytes somewhere in the file (1..64 MiB) */
            uint8_t *e = b + HDR + (size_t)i * ENT;
            uint64_t off, sz;
            memcpy(&off, e + 32, 8);
            memcpy(&sz, e + 40, 8);
            off %= n;
            sz = 1 + sz % (n - off);
            memcpy(e + 32, &off, 8);
            memcpy(e + 40, &sz, 8);
        }
    if ((fix & 4) && index_in) qsort(b + HDR, count, ENT, key_cmp);
    if ((fix & 8) && index_in)
        for (uint32_t i = 0; i < count; ++i) {
            uint8_t *e = b + HDR + (size_t)i * ENT;
            uint64_t off, sz;
            memcpy(&off, e + 32, 8);
            memcpy(&sz, e + 40, 8);
            if (off <= n && sz <= n - off) sha(b + off, sz, e + 48);
        }
    if ((fix & 16) && index_in) sha(b + HDR, (size_t)count * ENT, b + 112);

    char path[128];
    snprintf(path, sizeof path, "%s/fz.hpk", dir);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (n && fwrite(b, 1, n, f) != n) abort();
    fclose(f);

    amp__prebuilt_item *items = NULL;
    size_t ni = 0;
    amp_status st = amp__prebuilt_read(dir, "fz", &items, &ni);
    if (getenv("FZ_DEBUG")) fprintf(stderr, "fz: status %d, %zu entries: %s\n", (int)st, ni, st ? amp_last_error() : "");
    if (st == AMP_OK) {
        if (ni && (!index_in || ni != count)) abort();
        for (size_t i = 0; i < ni; ++i) {
            const uint8_t *e = b + HDR + i * ENT;
            uint64_t off;
            memcpy(&off, e + 32, 8);
            if (!items[i].size || items[i].size > AMP__PACK_ENTRY_MAX) abort();
            if (off > n || items[i].size > n - off || memcmp(items[i].data, b + off, items[i].size)) abort();
            free(items[i].data);
        }
        free(items);
    }
    free(b);
    return 0;
}
