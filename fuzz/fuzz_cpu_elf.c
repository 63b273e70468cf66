/* fuzz_cpu_elf.c — libFuzzer harness for the CPU accelerator's ELF reader (lib/cpu/cpu_elf.c), which reads a module's image before it is loaded (a disk-cache entry's, a pack's: its thread-local symbols and segment, its call graph, its needed libraries) and a split build's objects (their writable local variables): any bytes, never a crash, an out-of-bounds read (AddressSanitizer) or a hang, and each result is checked: every name found is a string that ends inside the image, the call graph's every index names a function or thread-local it has, a needed library's name starts with the prefix asked for, the count of local variables is the number of names seen. */
#include "cpu/cpu_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fuzz_seen {
    size_t n, stop; /* names seen; the callback says stop at the stop-th (0: never) */
    size_t bytes;   /* their lengths, read whole (ASan checks each) */
} fuzz_seen;

static bool fuzz_note(void *ctx, const char *name)
{
    fuzz_seen *s = ctx;
    s->bytes += strlen(name);
    s->n++;
    return !s->stop || s->n < s->stop;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy of exactly size bytes, so that a read past the end is caught. */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) return 0;
    memcpy(copy, data, size);

    amp__cpu_tls t;
    if (amp__cpu_elf_tls(copy, size, &t) == AMP_OK) {
        if (t.n > t.cap || (t.n && !t.syms)) abort();
        char others[256];
        for (size_t i = 0; i < t.n; ++i)
            if (!t.syms[i].name) abort();
        if (!t.have_graph && (t.nfns || t.nedges || t.nexports)) abort();
        for (size_t f = 0; f < t.nfns; ++f) {
            if (t.fns[f].edge0 > t.nedges || t.fns[f].nedges > t.nedges - t.fns[f].edge0) abort();
            if (f && t.fns[f].addr <= t.fns[f - 1].addr) abort();
        }
        for (size_t k = 0; k < t.nedges; ++k)
            if (t.edges[k] >= 0 ? (size_t)t.edges[k] >= t.nfns : (size_t)(-1 - (int64_t)t.edges[k]) >= t.n) abort();
        for (size_t x = 0; x < t.nexports; ++x)
            if (!t.exports[x].name || t.exports[x].fn >= t.nfns) abort();
        bool traced = false;
        (void)amp__cpu_tile_static_bytes(&t, "k", 0, others, sizeof others, &traced);
        if (strlen(others) >= sizeof others) abort();
        /* each symbol's own kernel name too (the body-of parse), and each
         * exported function's as a kernel (the graph's walk) */
        for (size_t i = 0; i < t.n && i < 8; ++i) {
            const char *k = t.syms[i].name;
            (void)amp__cpu_tile_static_bytes(&t, k, 16, NULL, 0, NULL);
        }
        for (size_t x = 0; x < t.nexports && x < 8; ++x)
            (void)amp__cpu_tile_static_bytes(&t, t.exports[x].name, 0, others, sizeof others, &traced);
        amp__cpu_elf_tls_free(&t);
    }

    static const char *const prefixes[] = {"libasan", "lib", ""};
    for (size_t p = 0; p < sizeof prefixes / sizeof prefixes[0]; ++p) {
        char name[32];
        memset(name, 'x', sizeof name);
        if (amp__cpu_elf_needs(copy, size, prefixes[p], name, sizeof name)) {
            if (!memchr(name, 0, sizeof name)) abort();
            if (strncmp(name, prefixes[p], strlen(prefixes[p]))) abort();
        }
    }

    fuzz_seen all = {0, 0, 0}, first = {0, 1, 0};
    int n = amp__cpu_elf_local_data(copy, size, fuzz_note, &all);
    if (n >= 0 && (size_t)n != all.n) abort();
    /* stopped at the first name: that one counted (a bad table after it
     * makes the whole call -1, not this one) */
    int m = amp__cpu_elf_local_data(copy, size, fuzz_note, &first);
    if (first.n > 1 || (n >= 0 && m != (n > 0 ? 1 : 0)) || (m < 0 && n >= 0)) abort();
    if (amp__cpu_elf_local_data(copy, size, NULL, NULL) != n) abort();

    free(copy);
    return 0;
}
