/* cpu_elf.c — reads a CPU-accelerator module's thread-local symbols (tile_static memory is static thread_local there), which of them each kernel reaches through the module's call graph, and the libraries it needs, from its ELF image, every offset and size bounds-checked since the image may come from a cache entry. */
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

/* Whether section sh's name (in the section-name table names, which lies
 * inside the image) begins with the n bytes of s (its NUL among them for
 * the whole name). */
static bool amp__elf_section_name(const amp__elf *e, const Elf64_Shdr *names, const Elf64_Shdr *sh, const char *s,
                                  size_t n)
{
    size_t room = sh->sh_name < names->sh_size ? names->sh_size - sh->sh_name : 0;
    return room >= n && !memcmp(e->b + names->sh_offset + sh->sh_name, s, n);
}

/* The string at off of a string table of n bytes, when it ends inside it
 * (its length into len); NULL otherwise. */
static const char *amp__elf_string(const char *strings, uint64_t n, uint64_t off, size_t *len)
{
    if (off >= n) return NULL;
    *len = strnlen(strings + off, n - off);
    return *len == n - off ? NULL : strings + off;
}

/* ------------------------------------------------------------ call graph
 * Which function references which function and thread-local, from the
 * relocations the link kept (-Wl,--emit-relocs) of a module whose every
 * function had a section of its own (-ffunction-sections): a call from one
 * function to another is then a relocation, never an offset the assembler
 * resolved. Sound rather than exact: what it cannot follow makes a kernel
 * count more, never less (a function whose address is taken is reached by
 * every kernel; code outside the functions the symbol table sizes counts
 * what it references for every kernel; a reference it cannot name gives the
 * functions that reach it every thread-local, or, outside any function,
 * drops the graph). */

typedef struct amp__edge {
    uint32_t from;
    int32_t to; /* as amp__cpu_fn's edges */
} amp__edge;

typedef struct amp__graph {
    const amp__elf *e;
    amp__cpu_tls *out;
    uint64_t nsyms;
    uint64_t symoff;  /* the symbol table's offset in the image */
    const int32_t *tls_of; /* a symbol's index in out->syms, or -1 */
    amp__edge *pairs;
    size_t npairs, cap;
    bool lost; /* a reference outside every function that the graph cannot name */
} amp__graph;

/* The function whose code holds address a, or -1. */
static int64_t amp__graph_fn_at(const amp__cpu_tls *t, uint64_t a)
{
    size_t lo = 0, hi = t->nfns;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->fns[mid].addr <= a) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return -1;
    const amp__cpu_fn *f = &t->fns[lo - 1];
    return a - f->addr < f->size ? (int64_t)(lo - 1) : -1;
}

static int amp__graph_by_addr(const void *a, const void *b)
{
    const amp__cpu_fn *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr ? 1 : (x->size > y->size) - (x->size < y->size);
}

static int amp__graph_by_from(const void *a, const void *b)
{
    const amp__edge *x = a, *y = b;
    if (x->from != y->from) return x->from < y->from ? -1 : 1;
    return (x->to > y->to) - (x->to < y->to);
}

static void amp__graph_add(amp__graph *g, int64_t from, int32_t to)
{
    if (g->lost) return;
    if (g->npairs == g->cap) {
        size_t nc = g->cap ? g->cap * 2 : 256;
        amp__edge *q = realloc(g->pairs, nc * sizeof *q);
        if (!q) {
            g->lost = true; /* no memory: no graph, every kernel counts every thread-local */
            return;
        }
        g->pairs = q;
        g->cap = nc;
    }
    g->pairs[g->npairs++] = (amp__edge){(uint32_t)from, to};
}

/* Code that references what the graph cannot name. */
static void amp__graph_unknown(amp__graph *g, int64_t f)
{
    if (f >= 0) g->out->fns[f].flags |= AMP__CPU_FN_UNKNOWN;
    else g->lost = true;
}

static Elf64_Sym amp__graph_sym(const amp__graph *g, uint64_t i)
{
    Elf64_Sym sym;
    memcpy(&sym, g->e->b + g->symoff + i * sizeof sym, sizeof sym);
    return sym;
}

/* Whether the relocation of type at p (inside section in) is a direct call
 * or jump's: x86-64's rel32 after E8 (call), E9 (jmp) or 0F 8x (jcc), a
 * field a RIP-relative operand never follows (its ModRM byte is 00xxx101);
 * AArch64's BL and B. */
static bool amp__graph_branch(const amp__graph *g, const Elf64_Shdr *in, uint32_t type, uint64_t p)
{
    if (g->e->eh.e_machine == EM_AARCH64) return type == R_AARCH64_CALL26 || type == R_AARCH64_JUMP26;
    if (type != R_X86_64_PC32 && type != R_X86_64_PLT32) return false;
    if (in->sh_type == SHT_NOBITS || p < in->sh_addr || p - in->sh_addr < 2 || p - in->sh_addr >= in->sh_size)
        return false;
    uint64_t off = in->sh_offset + (p - in->sh_addr);
    if (!amp__elf_in(g->e->size, off - 2, 2)) return false;
    unsigned char b2 = g->e->b[off - 2], b1 = g->e->b[off - 1];
    return b1 == 0xE8 || b1 == 0xE9 || (b2 == 0x0F && (b1 & 0xF0) == 0x80);
}

/* The address a relocation of type against a section or label at s with
 * addend a refers to (x86-64's PC-relative fields end their instruction,
 * 4 bytes after the field's start); false for a type it does not know. */
static bool amp__graph_target(const amp__graph *g, uint32_t type, uint64_t s, int64_t a, uint64_t *t)
{
    if (g->e->eh.e_machine == EM_AARCH64) {
        switch (type) {
        case R_AARCH64_ABS64: case R_AARCH64_CALL26: case R_AARCH64_JUMP26: case R_AARCH64_ADR_PREL_LO21:
        case R_AARCH64_ADR_PREL_PG_HI21: case R_AARCH64_ADR_PREL_PG_HI21_NC: case R_AARCH64_ADD_ABS_LO12_NC:
            *t = s + (uint64_t)a;
            return true;
        default: return false;
        }
    }
    if (type == R_X86_64_64) *t = s + (uint64_t)a;
    else if (type == R_X86_64_PC32 || type == R_X86_64_PLT32) *t = s + (uint64_t)a + 4;
    else return false;
    return true;
}

/* One relocation, at p in section in (code when code). */
static void amp__graph_reloc(amp__graph *g, const Elf64_Shdr *in, bool code, const Elf64_Rela *r)
{
    uint64_t idx = ELF64_R_SYM(r->r_info);
    uint32_t type = ELF64_R_TYPE(r->r_info);
    if (type == 0) return; /* R_X86_64_NONE, R_AARCH64_NONE */
    amp__cpu_tls *t = g->out;
    int64_t f = code ? amp__graph_fn_at(t, r->r_offset) : -1;
    if (idx == 0 || idx >= g->nsyms) {
        /* an absolute value, or no symbol there: in data it could be a
         * function's address the graph cannot name */
        if (code) amp__graph_unknown(g, f);
        else g->lost = true;
        return;
    }
    int32_t tls = g->tls_of[idx];
    if (tls >= 0) {
        if (f >= 0) amp__graph_add(g, f, -1 - tls);
        else t->syms[tls].anywhere = true;
        return;
    }
    Elf64_Sym sym = amp__graph_sym(g, idx);
    if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE || sym.st_shndx >= g->e->eh.e_shnum)
        return; /* another library's, or an absolute value */
    Elf64_Shdr at = amp__elf_section(g->e, sym.st_shndx);
    if (at.sh_flags & SHF_TLS) {
        /* thread-local memory not through its symbol */
        if (code) amp__graph_unknown(g, f);
        else g->lost = true;
        return;
    }
    if (!(at.sh_flags & SHF_EXECINSTR)) return; /* data */
    int st = ELF64_ST_TYPE(sym.st_info);
    uint64_t to;
    bool absolute = g->e->eh.e_machine == EM_AARCH64 ? type == R_AARCH64_ABS64 : type == R_X86_64_64;
    if (st == STT_FUNC || st == STT_GNU_IFUNC) {
        /* the function, or where inside it the addend points (a GOT
         * entry's relocation names the function alone; an operand followed
         * by an immediate biases the addend past the field's end, which
         * would name the function before it) */
        if (!amp__graph_target(g, type, sym.st_value, r->r_addend, &to) || to - sym.st_value >= sym.st_size)
            to = sym.st_value;
    } else if (!code && !absolute) {
        return; /* in data, a PC-relative entry: a jump table's label difference, read by the function of the label */
    } else if (!amp__graph_target(g, type, sym.st_value, r->r_addend, &to)) {
        amp__graph_unknown(g, f);
        return;
    }
    /* Code outside every function the graph knows counts what it references
     * for every kernel already: nothing to follow there. */
    int64_t callee = amp__graph_fn_at(t, to);
    if (callee < 0) return;
    if (code && f >= 0 && amp__graph_branch(g, in, type, r->r_offset)) {
        if (callee != f) amp__graph_add(g, f, (int32_t)callee);
    } else {
        t->fns[callee].flags |= AMP__CPU_FN_ESCAPED; /* an address taken (its own too), or a call from outside */
    }
}

/* Whether sym is a function with code the graph can hold. */
static bool amp__graph_is_fn(const amp__graph *g, const Elf64_Sym *sym)
{
    int st = ELF64_ST_TYPE(sym->st_info);
    return (st == STT_FUNC || st == STT_GNU_IFUNC) && sym->st_size && sym->st_shndx != SHN_UNDEF &&
           sym->st_shndx < SHN_LORESERVE && sym->st_shndx < g->e->eh.e_shnum &&
           (amp__elf_section(g->e, sym->st_shndx).sh_flags & SHF_EXECINSTR) &&
           sym->st_value + sym->st_size >= sym->st_value;
}

/* The functions and exported names of the symbol table; false: no memory,
 * or functions that overlap. */
static bool amp__graph_functions(amp__graph *g, const char *strtab, uint64_t nstr)
{
    amp__cpu_tls *t = g->out;
    size_t nf = 0, len;
    for (uint64_t i = 0; i < g->nsyms; ++i) {
        Elf64_Sym sym = amp__graph_sym(g, i);
        if (!amp__graph_is_fn(g, &sym)) continue;
        /* GCC's cold part of a function (NAME.cold, NAME.cold.N), which its
         * function may reach only through a jump table's label differences
         * (not followed): reached by every kernel */
        const char *name = amp__elf_string(strtab, nstr, sym.st_name, &len);
        bool cold = name && strstr(name, ".cold");
        t->fns[nf++] = (amp__cpu_fn){.addr = sym.st_value, .size = sym.st_size,
                                     .flags = cold ? AMP__CPU_FN_ESCAPED : 0};
    }
    /* by address, one a start (aliases: the longest, with every alias's
     * flags); code two functions would share could not be told apart */
    qsort(t->fns, nf, sizeof *t->fns, amp__graph_by_addr);
    size_t w = 0;
    for (size_t i = 0; i < nf; ++i) {
        if (w && t->fns[w - 1].addr == t->fns[i].addr) {
            unsigned flags = t->fns[w - 1].flags | t->fns[i].flags;
            t->fns[w - 1] = t->fns[i];
            t->fns[w - 1].flags = flags;
        } else if (w && t->fns[i].addr - t->fns[w - 1].addr < t->fns[w - 1].size) {
            return false;
        } else {
            t->fns[w++] = t->fns[i];
        }
    }
    t->nfns = w;
    for (uint64_t i = 0; i < g->nsyms; ++i) {
        Elf64_Sym sym = amp__graph_sym(g, i);
        if (!amp__graph_is_fn(g, &sym) || ELF64_ST_BIND(sym.st_info) != STB_GLOBAL ||
            ELF64_ST_VISIBILITY(sym.st_other) != STV_DEFAULT)
            continue;
        const char *name = amp__elf_string(strtab, nstr, sym.st_name, &len);
        int64_t f = name ? amp__graph_fn_at(t, sym.st_value) : -1;
        if (f < 0) continue;
        amp__cpu_export *x = &t->exports[t->nexports];
        if (!(x->name = malloc(len + 1))) return false;
        memcpy(x->name, name, len + 1);
        x->fn = (uint32_t)f;
        t->nexports++;
    }
    return true;
}

/* The call graph of the module (a shared object), symbol table si, its
 * thread-locals' indices in t->syms by symbol (tls_of, -1 for others);
 * leaves have_graph false where it cannot be read whole. */
static void amp__graph_read(const amp__elf *e, unsigned si, const int32_t *tls_of, amp__cpu_tls *t)
{
    Elf64_Shdr sh = amp__elf_section(e, si);
    const char *strtab;
    uint64_t nstr;
    if ((e->eh.e_machine != EM_X86_64 && e->eh.e_machine != EM_AARCH64) || e->eh.e_type != ET_DYN ||
        e->eh.e_shstrndx >= e->eh.e_shnum || !amp__elf_table(e, &sh, sizeof(Elf64_Sym), &strtab, &nstr))
        return;
    Elf64_Shdr names = amp__elf_section(e, e->eh.e_shstrndx);
    if (!amp__elf_in(e->size, names.sh_offset, names.sh_size)) return;
    amp__graph g = {.e = e, .out = t, .nsyms = sh.sh_size / sizeof(Elf64_Sym), .symoff = sh.sh_offset,
                    .tls_of = tls_of};
    bool relocs = false;
    if (!(t->fns = malloc(g.nsyms * sizeof *t->fns)) || !(t->exports = calloc(g.nsyms, sizeof *t->exports)))
        goto out;
    if (!amp__graph_functions(&g, strtab, nstr)) goto out;
    for (unsigned i = 0; i < e->eh.e_shnum && !g.lost; ++i) {
        Elf64_Shdr rs = amp__elf_section(e, i);
        if (rs.sh_type != SHT_RELA && rs.sh_type != SHT_REL) continue;
        /* The dynamic relocations (.rela.dyn, .rela.plt) name the dynamic
         * symbols and no section (or the GOT): not the link's. */
        if ((rs.sh_flags & SHF_ALLOC) && rs.sh_link != si) continue;
        if (rs.sh_type == SHT_REL || rs.sh_link != si || rs.sh_info == 0 || rs.sh_info >= e->eh.e_shnum) {
            g.lost = true; /* relocations it cannot read: a reference it would miss */
            break;
        }
        Elf64_Shdr in = amp__elf_section(e, rs.sh_info);
        if (!(in.sh_flags & SHF_ALLOC)) continue; /* debug information */
        if (amp__elf_section_name(e, &names, &in, ".eh_frame", sizeof ".eh_frame"))
            continue; /* every function's unwinding record: no reference a kernel makes */
        if (rs.sh_entsize != sizeof(Elf64_Rela) || !amp__elf_in(e->size, rs.sh_offset, rs.sh_size)) {
            g.lost = true;
            break;
        }
        bool code = in.sh_flags & SHF_EXECINSTR;
        relocs |= code;
        for (uint64_t k = 0; k < rs.sh_size / sizeof(Elf64_Rela) && !g.lost; ++k) {
            Elf64_Rela r;
            memcpy(&r, e->b + rs.sh_offset + k * sizeof r, sizeof r);
            amp__graph_reloc(&g, &in, code, &r);
        }
    }
    /* No relocation of code at all: linked without them (every module has
     * some: its start-up code's). */
    if (!relocs || g.lost) goto out;
    if (g.npairs) {
        qsort(g.pairs, g.npairs, sizeof *g.pairs, amp__graph_by_from);
        if (!(t->edges = malloc(g.npairs * sizeof *t->edges))) goto out;
    }
    for (size_t i = 0; i < g.npairs; ++i) {
        if (i && g.pairs[i].from == g.pairs[i - 1].from && g.pairs[i].to == g.pairs[i - 1].to) continue;
        amp__cpu_fn *f = &t->fns[g.pairs[i].from];
        if (!f->nedges) f->edge0 = (uint32_t)t->nedges;
        f->nedges++;
        t->edges[t->nedges++] = g.pairs[i].to;
    }
    t->have_graph = true;
out:
    if (!t->have_graph) {
        for (size_t i = 0; t->exports && i < t->nexports; ++i) free(t->exports[i].name);
        free(t->exports);
        free(t->fns);
        free(t->edges);
        t->exports = NULL;
        t->fns = NULL;
        t->edges = NULL;
        t->nexports = t->nfns = t->nedges = 0;
        for (size_t i = 0; i < t->n; ++i) t->syms[i].anywhere = false;
    }
    free(g.pairs);
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
        /* Each symbol's index in out->syms, or -1, for the call graph (none
         * without memory, or past an edge's 31 bits: then no graph). */
        const uint64_t nsyms = sh.sh_size / sizeof(Elf64_Sym);
        int32_t *tls_of = nsyms && nsyms <= INT32_MAX ? malloc(nsyms * sizeof *tls_of) : NULL;
        for (uint64_t s = 0; s < nsyms; ++s) {
            Elf64_Sym sym;
            memcpy(&sym, e.b + sh.sh_offset + s * sizeof sym, sizeof sym);
            if (tls_of) tls_of[s] = -1;
            if (ELF64_ST_TYPE(sym.st_info) != STT_TLS || sym.st_shndx == SHN_UNDEF) continue;
            size_t len;
            const char *name = amp__elf_string(strtab, nstr, sym.st_name, &len);
            if (!name) continue; /* not terminated inside the table */
            if (out->n == out->cap) {
                size_t nc = out->cap ? out->cap * 2 : 16;
                amp__cpu_tls_sym *q = realloc(out->syms, nc * sizeof *q);
                if (!q) goto no_memory;
                out->syms = q;
                out->cap = nc;
            }
            amp__cpu_tls_sym *t = &out->syms[out->n];
            if (!(t->name = malloc(len + 1))) goto no_memory;
            memcpy(t->name, name, len);
            t->name[len] = 0;
            t->size = sym.st_size;
            t->anywhere = false;
            if (tls_of) tls_of[s] = (int32_t)out->n;
            out->n++;
        }
        if (tls_of) amp__graph_read(&e, i, tls_of, out);
        free(tls_of);
        break;
    no_memory:
        free(tls_of);
        amp__cpu_elf_tls_free(out);
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "CPU accelerator: no memory for a module's symbols");
    }
    return AMP_OK;
}

bool amp__cpu_elf_is_shared_object(const void *bin, size_t size)
{
    amp__elf e;
    return amp__elf_open(&e, bin, size) && e.eh.e_type == ET_DYN;
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
            if (amp__elf_section_name(&e, &names, &in, ".data.rel.ro", 12)) continue;
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
    for (size_t i = 0; i < t->nexports; ++i) free(t->exports[i].name);
    free(t->exports);
    free(t->fns);
    free(t->edges);
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

/* The suffix of a tiled kernel's loop version's entry point (loops/emit.c). */
#define AMP__CPU_TILES_SUFFIX "__amp_tiles"

/* reached[i] set for every thread-local that kernel's entry points
 * (NAME__amp_entry, NAME__amp_tiles) and every function whose address is taken reach; false
 * where the graph cannot say: none, no entry point of that name, a reached
 * function that references what the graph cannot name, or no memory. */
static bool amp__cpu_tls_reached(const amp__cpu_tls *t, const char *kernel, unsigned char *reached)
{
    if (!t->have_graph || !t->nfns) return false;
    bool ok = false;
    size_t top = 0, roots = 0, klen = strlen(kernel);
    uint32_t *stack = malloc(t->nfns * sizeof *stack);
    unsigned char *seen = calloc(t->nfns, 1);
    if (!stack || !seen) goto out;
#define AMP__REACH_PUSH(f)                                                                                      do {                                                                                                            if (!seen[f]) {                                                                                                 seen[f] = 1;                                                                                                stack[top++] = (f);                                                                                     }                                                                                                       } while (0)
    for (size_t i = 0; i < t->nexports; ++i) {
        const char *n = t->exports[i].name;
        if (strncmp(n, kernel, klen) ||
            (strcmp(n + klen, AMP__CPU_ENTRY_SUFFIX) && strcmp(n + klen, AMP__CPU_TILES_SUFFIX)))
            continue;
        roots++;
        AMP__REACH_PUSH(t->exports[i].fn);
    }
    if (!roots) goto out;
    for (uint32_t f = 0; f < t->nfns; ++f)
        if (t->fns[f].flags & AMP__CPU_FN_ESCAPED) AMP__REACH_PUSH(f);
    while (top) {
        const amp__cpu_fn *f = &t->fns[stack[--top]];
        if (f->flags & AMP__CPU_FN_UNKNOWN) goto out;
        for (uint32_t k = 0; k < f->nedges; ++k) {
            int32_t e = t->edges[f->edge0 + k];
            if (e >= 0) AMP__REACH_PUSH((uint32_t)e);
            else reached[-1 - (int64_t)e] = 1;
        }
    }
#undef AMP__REACH_PUSH
    for (size_t i = 0; i < t->n; ++i) reached[i] |= t->syms[i].anywhere;
    ok = true;
out:
    free(stack);
    free(seen);
    return ok;
}

size_t amp__cpu_tile_static_bytes(const amp__cpu_tls *t, const char *kernel, size_t own, char *others, size_t cap,
                                  bool *traced)
{
    size_t used = 0;
    if (others && cap) others[0] = 0;
    if (traced) *traced = false;
    if (!t->have_symbols) return t->segment > own ? t->segment : own;
    unsigned char *reached = t->have_graph && t->n ? calloc(t->n, 1) : NULL;
    bool by_graph = reached && amp__cpu_tls_reached(t, kernel, reached);
    if (traced) *traced = by_graph;
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
        /* A helper's tile_static, or a thread_local of the user's: it counts
         * where the kernel reaches it, or may (every kernel, without a graph). */
        if (by_graph && !reached[i]) continue;
        total += t->syms[i].size;
        if (others && used < cap) {
            int w = snprintf(others + used, cap - used, "%s%s (%zu)", used ? ", " : "", s, t->syms[i].size);
            used = w < 0 ? cap : used + (size_t)w;
        }
    }
    free(reached);
    return total;
}
