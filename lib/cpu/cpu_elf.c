/* cpu_elf.c — reads a CPU-accelerator module's thread-local symbols (tile_static memory is static thread_local there) and the libraries it needs from its ELF image, every offset and size bounds-checked since the image may come from a cache entry. */
#include "cpu_internal.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* [off, off + n) lies inside an image of size bytes. */
static bool amp__elf_in(size_t size, uint64_t off, uint64_t n)
{
    return off <= size && n <= size - off;
}

/* An image read as a 64-bit ELF file. */
typedef struct amp__elf {
    const unsigned char *b;
    size_t size;
    Elf64_Ehdr eh;
} amp__elf;

/* Whether bin is a 64-bit ELF file (its header read into e). */
static bool amp__elf_open(amp__elf *e, const void *bin, size_t size)
{
    e->b = bin;
    e->size = size;
    if (!bin || size < sizeof e->eh) return false;
    memcpy(&e->eh, bin, sizeof e->eh);
    return !memcmp(e->eh.e_ident, ELFMAG, SELFMAG) && e->eh.e_ident[EI_CLASS] == ELFCLASS64;
}

/* Whether its section table lies inside the image. */
static bool amp__elf_has_sections(const amp__elf *e)
{
    return e->eh.e_shnum && e->eh.e_shentsize == sizeof(Elf64_Shdr) &&
           amp__elf_in(e->size, e->eh.e_shoff, (uint64_t)e->eh.e_shnum * sizeof(Elf64_Shdr));
}

/* Section i (< e_shnum, of a table amp__elf_has_sections checked). */
static Elf64_Shdr amp__elf_section(const amp__elf *e, unsigned i)
{
    Elf64_Shdr sh;
    memcpy(&sh, e->b + e->eh.e_shoff + (uint64_t)i * sizeof sh, sizeof sh);
    return sh;
}

/* Whether section sh holds entries of entsize bytes inside the image and
 * links to a string table inside it too (its text and size into strings,
 * nstrings). */
static bool amp__elf_table(const amp__elf *e, const Elf64_Shdr *sh, size_t entsize, const char **strings,
                           uint64_t *nstrings)
{
    if (sh->sh_entsize != entsize || !amp__elf_in(e->size, sh->sh_offset, sh->sh_size) ||
        sh->sh_link >= e->eh.e_shnum)
        return false;
    Elf64_Shdr st = amp__elf_section(e, sh->sh_link);
    if (st.sh_type != SHT_STRTAB || !amp__elf_in(e->size, st.sh_offset, st.sh_size) || st.sh_size == 0) return false;
    *strings = (const char *)e->b + st.sh_offset;
    *nstrings = st.sh_size;
    return true;
}

/* The string at off of a string table of n bytes, when it ends inside it
 * (its length into len); NULL otherwise. */
static const char *amp__elf_string(const char *strings, uint64_t n, uint64_t off, size_t *len)
{
    if (off >= n) return NULL;
    *len = strnlen(strings + off, n - off);
    return *len == n - off ? NULL : strings + off;
}

amp_status amp__cpu_elf_tls(const void *bin, size_t size, amp__cpu_tls *out)
{
    memset(out, 0, sizeof *out);
    amp__elf e;
    if (!bin || size < sizeof e.eh)
        return amp__fail(AMP_ERROR_DEVICE, "CPU accelerator: module of %zu bytes is no ELF file", size);
    if (!amp__elf_open(&e, bin, size))
        return amp__fail(AMP_ERROR_DEVICE, "CPU accelerator: module is not a 64-bit ELF file");

    /* The thread-local segment: its size bounds what any kernel can use. */
    if (e.eh.e_phnum && e.eh.e_phentsize == sizeof(Elf64_Phdr) &&
        amp__elf_in(size, e.eh.e_phoff, (uint64_t)e.eh.e_phnum * sizeof(Elf64_Phdr))) {
        for (unsigned i = 0; i < e.eh.e_phnum; ++i) {
            Elf64_Phdr ph;
            memcpy(&ph, e.b + e.eh.e_phoff + (uint64_t)i * sizeof ph, sizeof ph);
            if (ph.p_type == PT_TLS) out->segment = ph.p_memsz;
        }
    }

    if (!amp__elf_has_sections(&e)) return AMP_OK; /* no section table: the segment size is all we know */
    for (unsigned i = 0; i < e.eh.e_shnum; ++i) {
        Elf64_Shdr sh = amp__elf_section(&e, i);
        if (sh.sh_type != SHT_SYMTAB) continue;
        const char *strtab;
        uint64_t nstr;
        if (!amp__elf_table(&e, &sh, sizeof(Elf64_Sym), &strtab, &nstr)) return AMP_OK;
        out->have_symbols = true;
        for (uint64_t s = 0; s < sh.sh_size / sizeof(Elf64_Sym); ++s) {
            Elf64_Sym sym;
            memcpy(&sym, e.b + sh.sh_offset + s * sizeof sym, sizeof sym);
            if (ELF64_ST_TYPE(sym.st_info) != STT_TLS || sym.st_shndx == SHN_UNDEF) continue;
            size_t len;
            const char *name = amp__elf_string(strtab, nstr, sym.st_name, &len);
            if (!name) continue; /* not terminated inside the table */
            if (out->n == out->cap) {
                size_t nc = out->cap ? out->cap * 2 : 16;
                amp__cpu_tls_sym *q = realloc(out->syms, nc * sizeof *q);
                if (!q) {
                    amp__cpu_elf_tls_free(out);
                    return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for a module's symbols");
                }
                out->syms = q;
                out->cap = nc;
            }
            amp__cpu_tls_sym *t = &out->syms[out->n];
            if (!(t->name = malloc(len + 1))) {
                amp__cpu_elf_tls_free(out);
                return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for a module's symbols");
            }
            memcpy(t->name, name, len);
            t->name[len] = 0;
            t->size = sym.st_size;
            out->n++;
        }
        break;
    }
    return AMP_OK;
}

bool amp__cpu_elf_needs(const void *bin, size_t size, const char *prefix, char *name, size_t cap)
{
    amp__elf e;
    if (!amp__elf_open(&e, bin, size) || !amp__elf_has_sections(&e)) return false;
    for (unsigned i = 0; i < e.eh.e_shnum; ++i) {
        Elf64_Shdr sh = amp__elf_section(&e, i);
        const char *strtab;
        uint64_t nstr;
        if (sh.sh_type != SHT_DYNAMIC || !amp__elf_table(&e, &sh, sizeof(Elf64_Dyn), &strtab, &nstr)) continue;
        for (uint64_t k = 0; k < sh.sh_size / sizeof(Elf64_Dyn); ++k) {
            Elf64_Dyn d;
            memcpy(&d, e.b + sh.sh_offset + k * sizeof d, sizeof d);
            if (d.d_tag == DT_NULL) break;
            size_t len;
            const char *lib = d.d_tag == DT_NEEDED ? amp__elf_string(strtab, nstr, d.d_un.d_val, &len) : NULL;
            if (!lib || strncmp(lib, prefix, strlen(prefix))) continue;
            snprintf(name, cap, "%.*s", (int)len, lib);
            return true;
        }
    }
    return false;
}

int amp__cpu_elf_local_data(const void *bin, size_t size, amp__cpu_name_fn fn, void *ctx)
{
    amp__elf e;
    if (!amp__elf_open(&e, bin, size) || !amp__elf_has_sections(&e) || e.eh.e_shstrndx >= e.eh.e_shnum) return -1;
    Elf64_Shdr names = amp__elf_section(&e, e.eh.e_shstrndx);
    if (!amp__elf_in(size, names.sh_offset, names.sh_size)) return -1;
    int found = 0;
    for (unsigned i = 0; i < e.eh.e_shnum; ++i) {
        Elf64_Shdr sh = amp__elf_section(&e, i);
        if (sh.sh_type != SHT_SYMTAB) continue;
        const char *strtab;
        uint64_t nstr;
        if (!amp__elf_table(&e, &sh, sizeof(Elf64_Sym), &strtab, &nstr)) return -1;
        for (uint64_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); ++k) {
            Elf64_Sym sym;
            memcpy(&sym, e.b + sh.sh_offset + k * sizeof sym, sizeof sym);
            int type = ELF64_ST_TYPE(sym.st_info);
            if (ELF64_ST_BIND(sym.st_info) != STB_LOCAL || (type != STT_OBJECT && type != STT_TLS) ||
                sym.st_shndx == SHN_UNDEF || sym.st_shndx >= e.eh.e_shnum)
                continue;
            Elf64_Shdr in = amp__elf_section(&e, sym.st_shndx);
            if (!(in.sh_flags & SHF_WRITE)) continue;
            /* constant data that needs relocations: written by the loader only */
            size_t room = in.sh_name < names.sh_size ? names.sh_size - in.sh_name : 0;
            if (room > 12 && !strncmp((const char *)e.b + names.sh_offset + in.sh_name, ".data.rel.ro", 12)) continue;
            size_t len;
            const char *name = amp__elf_string(strtab, nstr, sym.st_name, &len);
            if (!name) continue;
            ++found;
            if (fn && !fn(ctx, name)) return found;
        }
    }
    return found;
}

void amp__cpu_elf_tls_free(amp__cpu_tls *t)
{
    for (size_t i = 0; i < t->n; ++i) free(t->syms[i].name);
    free(t->syms);
    memset(t, 0, sizeof *t);
}

/* The kernel whose body holds a local static: "_ZZ" ["L"] <len> <name>
 * "__amp_body" ... (Itanium mangling of a local name of a function with
 * internal linkage). Writes the kernel name, or returns false. */
static bool amp__elf_body_of(const char *sym, char *kernel, size_t cap)
{
    if (strncmp(sym, "_ZZ", 3)) return false;
    const char *p = sym + 3;
    if (*p == 'L') p++;
    char *end;
    unsigned long n = strtoul(p, &end, 10);
    if (end == p || n <= 10 || n > strlen(end)) return false;
    if (strncmp(end + n - 10, "__amp_body", 10)) return false;
    if (n - 10 + 1 > cap) return false;
    memcpy(kernel, end, n - 10);
    kernel[n - 10] = 0;
    return true;
}

/* Thread-locals of the C++ runtime that a toolchain may link into a module:
 * libsupc++'s per-thread exception state (eh_globals.cc: a static
 * thread_local in (anonymous)::get_global(), 16 bytes; Ubuntu 24.04's g++ 13
 * puts it into every module). Neither a kernel's nor the user's. */
static const char *const amp__cpu_runtime_tls[] = {"_ZZN12_GLOBAL__N_110get_globalEvE6global"};

static bool amp__cpu_is_runtime_tls(const char *s)
{
    for (size_t i = 0; i < sizeof amp__cpu_runtime_tls / sizeof *amp__cpu_runtime_tls; ++i)
        if (!strcmp(s, amp__cpu_runtime_tls[i])) return true;
    return false;
}

size_t amp__cpu_tile_static_bytes(const amp__cpu_tls *t, const char *kernel, size_t own, char *others, size_t cap)
{
    size_t used = 0;
    if (others && cap) others[0] = 0;
    if (!t->have_symbols) return t->segment > own ? t->segment : own;
    size_t total = own;
    char k[512];
    for (size_t i = 0; i < t->n; ++i) {
        const char *s = t->syms[i].name;
        /* the library's own (the current work-item; AMP_DEBUG's scratch
         * element, a local static of amp::cpu::checked_base), guard
         * variables, the runtime's */
        if (!strncmp(s, "_ZN3amp3cpu", 11) || !strncmp(s, "_ZZN3amp3cpu", 12) || !strncmp(s, "_ZGV", 4) ||
            amp__cpu_is_runtime_tls(s))
            continue;
        if (amp__elf_body_of(s, k, sizeof k)) {
            if (!strcmp(k, kernel)) total += t->syms[i].size;
            continue;
        }
        /* A helper's tile_static, or a thread_local of the user's: the kernel
         * may call it, so it counts (conservatively) for every kernel. */
        total += t->syms[i].size;
        if (others && used < cap) {
            int w = snprintf(others + used, cap - used, "%s%s (%zu)", used ? ", " : "", s, t->syms[i].size);
            used = w < 0 ? cap : used + (size_t)w;
        }
    }
    return total;
}
