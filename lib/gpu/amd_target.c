/* amd_target.c — amp_compile_for_target, amp_compile_file_for_target, amp_compile_targets and amp_code_object_*: build code objects for a named target with no GPU present (AMD with hipRTC, NVIDIA with NVRTC), and read per-kernel resources from an AMD ELF's NT_AMDGPU_METADATA note (bounds-checked ELF, offload-bundle and msgpack readers). */
#include "gpu_driver.h"

#include "base/core.h"
#include "base/fork_guard.h"
#include "includes/include_scan.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct amp_code_object {
    unsigned char *data; /* the AMDGPU ELF code object */
    size_t size;
    amp_kernel_resources *kernels;
    size_t nkernels;
};

/* ------------------------------------------------- the live code objects */

/* The code objects handed out and not yet destroyed. Every entry point
 * finds its argument here before reading it, so a destroyed, twice
 * destroyed or foreign pointer is refused naming it, never read (a code
 * object is no core handle: this layer has none). They are few (a tool's
 * compiles), so a list does. Leaf lock: nothing else is taken under it. */
AMP__FORK_GUARDED_MUTEX(live_lock)
static const amp_code_object **live;
static size_t nlive, live_cap;

/* c added to the live list; false without memory. */
static bool live_add(const amp_code_object *c)
{
    bool ok = true;
    pthread_mutex_lock(&live_lock);
    if (nlive == live_cap) {
        size_t cap = live_cap ? live_cap * 2 : 16;
        const amp_code_object **grown = realloc(live, cap * sizeof *grown);
        if (grown) {
            live = grown;
            live_cap = cap;
        }
        ok = grown != NULL;
    }
    if (ok) live[nlive++] = c;
    pthread_mutex_unlock(&live_lock);
    return ok;
}

/* AMP_OK when c is a live code object (with take, also removed from the
 * list: its destroy; of two destroys only one takes it), else
 * AMP_ERROR_INVALID_ARGUMENT naming fn and the pointer. */
static amp_status live_check(const amp_code_object *c, const char *fn, bool take)
{
    if (!c) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: the code object is NULL", fn);
    bool found = false;
    pthread_mutex_lock(&live_lock);
    for (size_t i = 0; i < nlive && !found; ++i)
        if (live[i] == c) {
            found = true;
            if (take) live[i] = live[--nlive];
        }
    pthread_mutex_unlock(&live_lock);
    if (found) return AMP_OK;
    return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %p is no code object of this library's (destroyed, or never one)",
                     fn, (const void *)c);
}

static void code_object_free(amp_code_object *co)
{
    free(co->data);
    free(co->kernels);
    free(co);
}

/* co handed out through *out, or freed with AMP_ERROR_OUT_OF_MEMORY. */
static amp_status hand_out(amp_code_object *co, amp_code_object **out)
{
    if (!live_add(co)) {
        code_object_free(co);
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "amp_compile_for_target: out of host memory");
    }
    *out = co;
    return AMP_OK;
}

/* ---------------------------------------------------- little-endian reads */

static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const unsigned char *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }
static uint16_t be16(const unsigned char *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}
static uint64_t be64(const unsigned char *p) { return (uint64_t)be32(p) << 32 | be32(p + 4); }

/* True when [off, off+len) lies inside a buffer of size bytes. */
static bool in_range(uint64_t off, uint64_t len, size_t size) { return off <= size && len <= size - off; }

/* ------------------------------------------------------ offload bundles */

/* hipRTC in ROCm 5.2 returns the ELF itself; some ROCm 6 builds return a
 * clang offload bundle ("__CLANG_OFFLOAD_BUNDLE__", entry count, then per
 * entry offset, size, id length, id) holding it. Compressed bundles ("CCOB",
 * ROCm 6.2+) would need zstd and are refused. */
#define BUNDLE_MAGIC "__CLANG_OFFLOAD_BUNDLE__"

static amp_status extract_elf(const unsigned char *bin, size_t size, const unsigned char **elf, size_t *elf_size)
{
    if (size >= 4 && memcmp(bin, "\x7f" "ELF", 4) == 0) {
        *elf = bin;
        *elf_size = size;
        return AMP_OK;
    }
    if (size >= 4 && memcmp(bin, "CCOB", 4) == 0)
        return amp__fail(AMP_ERROR_UNSUPPORTED, "hipRTC returned a compressed offload bundle, which is not supported");
    size_t ml = sizeof BUNDLE_MAGIC - 1;
    if (size < ml + 8 || memcmp(bin, BUNDLE_MAGIC, ml) != 0)
        return amp__fail(AMP_ERROR_COMPILE, "hipRTC returned %zu bytes that are neither an ELF nor an offload bundle", size);
    uint64_t n = rd64(bin + ml), pos = ml + 8;
    for (uint64_t i = 0; i < n && i < 1024; ++i) {
        if (!in_range(pos, 24, size)) break;
        uint64_t off = rd64(bin + pos), len = rd64(bin + pos + 8), idlen = rd64(bin + pos + 16);
        pos += 24;
        if (!in_range(pos, idlen, size)) break;
        const char *id = (const char *)bin + pos;
        pos += idlen;
        bool amdgcn = false;
        for (uint64_t k = 0; k + 6 <= idlen && !amdgcn; ++k) amdgcn = memcmp(id + k, "amdgcn", 6) == 0;
        if (amdgcn && in_range(off, len, size) && len >= 4 && memcmp(bin + off, "\x7f" "ELF", 4) == 0) {
            *elf = bin + off;
            *elf_size = (size_t)len;
            return AMP_OK;
        }
    }
    return amp__fail(AMP_ERROR_COMPILE, "hipRTC's offload bundle holds no amdgcn code object");
}

/* ------------------------------------------------------------- msgpack */

/* A cursor over one msgpack buffer. Every read checks bounds; a malformed
 * buffer sets bad and later reads return nothing. */
typedef struct mp {
    const unsigned char *p, *end;
    bool bad;
} mp;

enum { MP_NIL, MP_BOOL, MP_INT, MP_UINT, MP_FLOAT, MP_STR, MP_BIN, MP_ARRAY, MP_MAP, MP_EXT, MP_BAD };

typedef struct mp_item {
    int type;
    uint64_t u;   /* UINT value; INT value as two's complement; length of STR/BIN/EXT; count of ARRAY/MAP */
    const unsigned char *data; /* STR/BIN/EXT payload */
} mp_item;

static const unsigned char *mp_take(mp *m, size_t n)
{
    if (m->bad || (size_t)(m->end - m->p) < n) { m->bad = true; return NULL; }
    const unsigned char *q = m->p;
    m->p += n;
    return q;
}

/* Read one item header (and the payload of str/bin/ext). */
static mp_item mp_read(mp *m)
{
    mp_item it = {MP_BAD, 0, NULL};
    const unsigned char *q = mp_take(m, 1);
    if (!q) return it;
    unsigned c = *q;
    size_t lenbytes = 0;
    int kind = MP_BAD;
    if (c <= 0x7f) { it.type = MP_UINT; it.u = c; return it; }
    if (c >= 0xe0) { it.type = MP_INT; it.u = (uint64_t)(int64_t)(int8_t)c; return it; }
    if ((c & 0xf0) == 0x80) { it.type = MP_MAP; it.u = c & 0x0f; return it; }
    if ((c & 0xf0) == 0x90) { it.type = MP_ARRAY; it.u = c & 0x0f; return it; }
    if ((c & 0xe0) == 0xa0) {
        it.type = MP_STR;
        it.u = c & 0x1f;
        it.data = mp_take(m, (size_t)it.u);
        if (!it.data) it.type = MP_BAD;
        return it;
    }
    switch (c) {
    case 0xc0: it.type = MP_NIL; return it;
    case 0xc2: case 0xc3: it.type = MP_BOOL; it.u = c == 0xc3; return it;
    case 0xcc: if ((q = mp_take(m, 1))) { it.type = MP_UINT; it.u = q[0]; } return it;
    case 0xcd: if ((q = mp_take(m, 2))) { it.type = MP_UINT; it.u = be16(q); } return it;
    case 0xce: if ((q = mp_take(m, 4))) { it.type = MP_UINT; it.u = be32(q); } return it;
    case 0xcf: if ((q = mp_take(m, 8))) { it.type = MP_UINT; it.u = be64(q); } return it;
    case 0xd0: if ((q = mp_take(m, 1))) { it.type = MP_INT; it.u = (uint64_t)(int64_t)(int8_t)q[0]; } return it;
    case 0xd1: if ((q = mp_take(m, 2))) { it.type = MP_INT; it.u = (uint64_t)(int64_t)(int16_t)be16(q); } return it;
    case 0xd2: if ((q = mp_take(m, 4))) { it.type = MP_INT; it.u = (uint64_t)(int64_t)(int32_t)be32(q); } return it;
    case 0xd3: if ((q = mp_take(m, 8))) { it.type = MP_INT; it.u = be64(q); } return it;
    case 0xca: if (mp_take(m, 4)) it.type = MP_FLOAT; return it;
    case 0xcb: if (mp_take(m, 8)) it.type = MP_FLOAT; return it;
    case 0xd9: kind = MP_STR; lenbytes = 1; break;
    case 0xda: kind = MP_STR; lenbytes = 2; break;
    case 0xdb: kind = MP_STR; lenbytes = 4; break;
    case 0xc4: kind = MP_BIN; lenbytes = 1; break;
    case 0xc5: kind = MP_BIN; lenbytes = 2; break;
    case 0xc6: kind = MP_BIN; lenbytes = 4; break;
    case 0xdc: if ((q = mp_take(m, 2))) { it.type = MP_ARRAY; it.u = be16(q); } return it;
    case 0xdd: if ((q = mp_take(m, 4))) { it.type = MP_ARRAY; it.u = be32(q); } return it;
    case 0xde: if ((q = mp_take(m, 2))) { it.type = MP_MAP; it.u = be16(q); } return it;
    case 0xdf: if ((q = mp_take(m, 4))) { it.type = MP_MAP; it.u = be32(q); } return it;
    case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8: {
        size_t n = (size_t)1 << (c - 0xd4);
        if (mp_take(m, 1) && (it.data = mp_take(m, n))) { it.type = MP_EXT; it.u = n; }
        return it;
    }
    case 0xc7: kind = MP_EXT; lenbytes = 1; break;
    case 0xc8: kind = MP_EXT; lenbytes = 2; break;
    case 0xc9: kind = MP_EXT; lenbytes = 4; break;
    default: m->bad = true; return it;
    }
    if (!(q = mp_take(m, lenbytes))) return it;
    uint64_t len = lenbytes == 1 ? q[0] : lenbytes == 2 ? be16(q) : be32(q);
    if (kind == MP_EXT && !mp_take(m, 1)) return it;
    if (!(it.data = mp_take(m, (size_t)len))) return it;
    it.type = kind;
    it.u = len;
    return it;
}

/* Skip one whole item. Depth-limited so a hostile nesting cannot blow the
 * stack; counts are bounded by the bytes left (each element takes >= 1). */
static void mp_skip(mp *m, int depth)
{
    if (depth > 64) { m->bad = true; return; }
    mp_item it = mp_read(m);
    if (it.type == MP_BAD) { m->bad = true; return; }
    if (it.type == MP_ARRAY || it.type == MP_MAP) {
        uint64_t n = it.type == MP_MAP ? it.u * 2 : it.u;
        if (n > (uint64_t)(m->end - m->p)) { m->bad = true; return; }
        for (uint64_t i = 0; i < n && !m->bad; ++i) mp_skip(m, depth + 1);
    }
}

static bool mp_key_is(const mp_item *k, const char *s)
{
    size_t n = strlen(s);
    return k->type == MP_STR && k->u == n && memcmp(k->data, s, n) == 0;
}

static uint32_t clamp_u32(const mp_item *v)
{
    if (v->type == MP_UINT) return v->u > UINT32_MAX ? UINT32_MAX : (uint32_t)v->u;
    return 0; /* negative or non-integer: not a count */
}

/* Parse one kernel map of amdhsa.kernels into r. */
static void parse_kernel(mp *m, uint64_t nkeys, amp_kernel_resources *r)
{
    memset(r, 0, sizeof *r);
    for (uint64_t i = 0; i < nkeys && !m->bad; ++i) {
        mp_item k = mp_read(m);
        if (k.type != MP_STR) { m->bad = true; return; }
        const unsigned char *save = m->p;
        mp_item v = mp_read(m);
        if (v.type == MP_ARRAY || v.type == MP_MAP) { /* .args etc.: skip the body */
            m->p = save;
            mp_skip(m, 1);
            continue;
        }
        if (mp_key_is(&k, ".name") && v.type == MP_STR) {
            size_t n = v.u < sizeof r->name - 1 ? (size_t)v.u : sizeof r->name - 1;
            memcpy(r->name, v.data, n);
            r->name[n] = '\0';
        } else if (mp_key_is(&k, ".group_segment_fixed_size")) r->lds_bytes = clamp_u32(&v);
        else if (mp_key_is(&k, ".private_segment_fixed_size")) r->private_bytes = clamp_u32(&v);
        else if (mp_key_is(&k, ".vgpr_count")) r->vgprs = clamp_u32(&v);
        else if (mp_key_is(&k, ".sgpr_count")) r->sgprs = clamp_u32(&v);
        else if (mp_key_is(&k, ".agpr_count")) r->agprs = clamp_u32(&v);
        else if (mp_key_is(&k, ".vgpr_spill_count")) r->vgpr_spills = clamp_u32(&v);
        else if (mp_key_is(&k, ".sgpr_spill_count")) r->sgpr_spills = clamp_u32(&v);
        else if (mp_key_is(&k, ".max_flat_workgroup_size")) r->max_flat_workgroup_size = clamp_u32(&v);
    }
}

/* Find "amdhsa.kernels" in the top-level map and fill the kernel list. */
static amp_status parse_metadata(const unsigned char *p, size_t n, amp_kernel_resources **out, size_t *count)
{
    mp m = {p, p + n, false};
    amp_kernel_resources *ks = NULL;
    size_t nk = 0;
    mp_item top = mp_read(&m);
    if (top.type != MP_MAP) goto bad;
    for (uint64_t i = 0; i < top.u && !m.bad; ++i) {
        mp_item k = mp_read(&m);
        if (k.type != MP_STR) goto bad; /* a container's body would be taken for the value */
        if (!mp_key_is(&k, "amdhsa.kernels")) { mp_skip(&m, 1); continue; }
        mp_item arr = mp_read(&m);
        if (arr.type != MP_ARRAY || arr.u > (uint64_t)(m.end - m.p)) goto bad;
        free(ks);
        ks = calloc(arr.u ? (size_t)arr.u : 1, sizeof *ks);
        if (!ks) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "cannot allocate %llu kernel records", (unsigned long long)arr.u);
        nk = 0;
        for (uint64_t j = 0; j < arr.u && !m.bad; ++j) {
            mp_item km = mp_read(&m);
            if (km.type != MP_MAP || km.u > (uint64_t)(m.end - m.p)) goto bad;
            parse_kernel(&m, km.u, &ks[nk]);
            if (!m.bad) ++nk;
        }
    }
    if (m.bad) goto bad;
    *out = ks;
    *count = nk;
    return AMP_OK;
bad:
    free(ks);
    return amp__fail(AMP_ERROR_COMPILE, "the code object's AMDGPU metadata note is malformed");
}

/* ----------------------------------------------------------------- ELF */

#define NT_AMDGPU_METADATA 32

/* Walk the notes in [off, off+len) for the AMDGPU metadata note. */
static bool find_note(const unsigned char *elf, size_t size, uint64_t off, uint64_t len, uint64_t align,
                      const unsigned char **desc, size_t *desc_size)
{
    if (!in_range(off, len, size)) return false;
    uint64_t a = align == 8 ? 8 : 4;
    uint64_t pos = off, end = off + len;
    while (pos + 12 <= end) {
        uint32_t namesz = rd32(elf + pos), descsz = rd32(elf + pos + 4), type = rd32(elf + pos + 8);
        uint64_t name_off = pos + 12;
        uint64_t desc_off = name_off + (((uint64_t)namesz + a - 1) / a) * a;
        uint64_t next = desc_off + (((uint64_t)descsz + a - 1) / a) * a;
        if (desc_off > end || next > end || !in_range(desc_off, descsz, size)) return false;
        if (type == NT_AMDGPU_METADATA && namesz == 7 && memcmp(elf + name_off, "AMDGPU", 7) == 0) {
            *desc = elf + desc_off;
            *desc_size = descsz;
            return true;
        }
        pos = next;
    }
    return false;
}

static amp_status parse_elf(const unsigned char *elf, size_t size, amp_kernel_resources **ks, size_t *nk)
{
    *ks = NULL;
    *nk = 0;
    if (size < 64 || memcmp(elf, "\x7f" "ELF", 4) != 0 || elf[4] != 2 /* 64-bit */ || elf[5] != 1 /* LE */)
        return amp__fail(AMP_ERROR_COMPILE, "the code object is not a 64-bit little-endian ELF");
    uint64_t phoff = rd64(elf + 32), shoff = rd64(elf + 40);
    uint16_t phentsize = rd16(elf + 54), phnum = rd16(elf + 56);
    uint16_t shentsize = rd16(elf + 58), shnum = rd16(elf + 60);
    const unsigned char *desc = NULL;
    size_t desc_size = 0;
    bool found = false;
    if (phentsize >= 56 && in_range(phoff, (uint64_t)phentsize * phnum, size)) {
        for (unsigned i = 0; i < phnum && !found; ++i) {
            const unsigned char *ph = elf + phoff + (uint64_t)i * phentsize;
            if (rd32(ph) != 4 /* PT_NOTE */) continue;
            found = find_note(elf, size, rd64(ph + 8), rd64(ph + 32), rd64(ph + 48), &desc, &desc_size);
        }
    }
    if (!found && shentsize >= 64 && in_range(shoff, (uint64_t)shentsize * shnum, size)) {
        for (unsigned i = 0; i < shnum && !found; ++i) {
            const unsigned char *sh = elf + shoff + (uint64_t)i * shentsize;
            if (rd32(sh + 4) != 7 /* SHT_NOTE */) continue;
            found = find_note(elf, size, rd64(sh + 24), rd64(sh + 32), rd64(sh + 48), &desc, &desc_size);
        }
    }
    if (!found) return amp__fail(AMP_ERROR_COMPILE, "the code object has no NT_AMDGPU_METADATA note");
    return parse_metadata(desc, desc_size, ks, nk);
}

/* -------------------------------------------------------- public API */

/* Hidden entry point for white-box fuzzing of the readers above: parse
 * resources from arbitrary bytes (never crashes on malformed input). */
amp_status amp__code_object_parse(const void *bin, size_t size, amp_kernel_resources **ks, size_t *nk);
amp_status amp__code_object_parse(const void *bin, size_t size, amp_kernel_resources **ks, size_t *nk)
{
    const unsigned char *elf = NULL;
    size_t elf_size = 0;
    amp_status st;
    *ks = NULL;
    *nk = 0;
    if (!bin) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "code object is NULL");
    if ((st = extract_elf(bin, size, &elf, &elf_size)) != AMP_OK) return st;
    return parse_elf(elf, elf_size, ks, nk);
}

/* One compile of a named unit for a target (amp__compile_on_demand's fn),
 * with hipRTC or NVRTC: bin gets the output of the one that worked. */
typedef struct target_compile {
    const char *target;
    const char *source_name; /* the kernel file's path, or NULL: AMP__SOURCE_NAME */
    const amp__named_unit *unit;
    amp_status (*compile)(const char *target, const amp__compile_job *job, void **bin, size_t *bin_size);
    void *bin;
    size_t size;
} target_compile;

static amp_status target_compile_unit(void *ctx, const char *source, size_t len)
{
    target_compile *c = ctx;
    (void)len;
    amp__compile_job job = {.source = source, .source_name = c->source_name ? c->source_name : AMP__SOURCE_NAME,
                            .options = c->unit->options,
                            .headers = c->unit->headers, .nheaders = c->unit->nheaders},
                     unit;
    char *owned = NULL;
    free(c->bin);
    c->bin = NULL;
    c->size = 0;
    amp_status st = amp__gpu_option_macros(&job, &unit, &owned);
    if (st == AMP_OK) st = c->compile(c->target, &unit, &c->bin, &c->size);
    free(owned);
    amp__compile_log_summarize(st);
    return st;
}

/* The named unit of source, compiled as a GPU build compiles it: without
 * the device library where nothing in it names the library. */
static amp_status target_compile_source(target_compile *c, const char *source)
{
    bool lean = !amp__unit_wants_device_lib(source, c->unit->headers, c->unit->nheaders, c->unit->options);
    return amp__compile_on_demand(lean, NULL, source, c->source_name, target_compile_unit, c);
}

/* An NVIDIA target: NVRTC's CUBIN (or PTX) as the code object; resources
 * are not read from it (kernel count 0). */
static amp_status amp__compile_nvidia(const char *target, const char *source, const char *name, const char *dir,
                                      const char *options, amp_code_object **out)
{
    amp_status st;
    amp__named_unit unit;
    /* A named target is one the installed NVRTC lists, spelt as it lists
     * it: a device's compile falls back to the newest architecture below
     * its own, but "sm_999" or "sm_90xyz" named here would give PTX of
     * another target with AMP_OK. With no list (no NVRTC), the compile
     * below says why. */
    const char *first = amp__nvrtc_arch_name(0), *last = NULL;
    bool known = first == NULL;
    for (size_t i = 0; !known && amp__nvrtc_arch_name(i); ++i) {
        last = amp__nvrtc_arch_name(i);
        known = !strcmp(last, target);
    }
    if (!known)
        return amp__fail(AMP_ERROR_UNSUPPORTED,
                         "NVIDIA target '%s' is not one the installed NVRTC knows (%s to %s; "
                         "amp_compile_targets lists them)", target, first, last);
    if ((st = amp__named_unit_make(source, name, dir, options, amp__gpu_system_dirs("cuda"), &unit)) != AMP_OK)
        return st;
    target_compile c = {target, name, &unit, amp__nvrtc_compile, NULL, 0};
    st = target_compile_source(&c, unit.source);
    amp__named_unit_free(&unit);
    if (st != AMP_OK) {
        free(c.bin);
        return st;
    }
    amp_code_object *co = calloc(1, sizeof *co);
    if (!co) {
        free(c.bin);
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "cannot allocate %zu bytes", sizeof *co);
    }
    co->data = c.bin;
    co->size = c.size;
    return hand_out(co, out);
}

AMP_API amp_status amp_compile_targets(const char **list, size_t cap, size_t *count)
{
    AMP__NOT_NULL(count);
    *count = 0;
    if (!list && cap) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_compile_targets: list is NULL but cap is %zu", cap);
    size_t n = 0;
    for (size_t i = 0;; ++i) {
        const char *name = amp__amd_isa_name(i);
        if (!name) break;
        if (n < cap) list[n] = name;
        ++n;
    }
    for (size_t i = 0;; ++i) {
        const char *name = amp__nvrtc_arch_name(i);
        if (!name) break;
        if (n < cap) list[n] = name;
        ++n;
    }
    *count = n;
    return AMP_OK;
}

/* amp_compile_for_target's and amp_compile_file_for_target's compile:
 * name and dir the kernel file's path and directory (NULL for a string). */
static amp_status compile_for_target(const char *target, const char *source, const char *name, const char *dir,
                                     const char *options, amp_code_object **out)
{
    amp_status st = AMP_OK;
    void *bin = NULL;
    size_t bin_size = 0;
    amp_code_object *co = NULL;
    const unsigned char *elf = NULL;
    size_t elf_size = 0;
    const char *why = NULL;
    amp__named_unit unit = {0};

    if (out) *out = NULL;
    if (!out) { st = amp__fail(AMP_ERROR_INVALID_ARGUMENT, "out is NULL"); goto fail; }
    if (!source) { st = amp__fail(AMP_ERROR_INVALID_ARGUMENT, "source is NULL"); goto fail; }
    if ((st = amp__gpu_refuse_in_secure_program("amp_compile_for_target")) != AMP_OK) goto fail;
    if (target && !strncmp(target, "sm_", 3)) return amp__compile_nvidia(target, source, name, dir, options, out);
    if ((st = amp__amd_validate_target(target)) != AMP_OK) goto fail;
    if (!amp__hiprtc_version(&why)) {
        st = amp__fail(AMP_ERROR_UNSUPPORTED, "cannot compile for %s: %s", target, why ? why : "no hipRTC");
        goto fail;
    }
    if ((st = amp__named_unit_make(source, name, dir, options, amp__gpu_system_dirs("hip"), &unit)) != AMP_OK)
        goto fail;
    target_compile c = {target, name, &unit, amp__hiprtc_compile, NULL, 0};
    st = target_compile_source(&c, unit.source);
    bin = c.bin;
    bin_size = c.size;
    if (st != AMP_OK) goto fail;
    co = calloc(1, sizeof *co);
    if (!co) { st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "cannot allocate %zu bytes", sizeof *co); goto fail; }
    if ((st = extract_elf(bin, bin_size, &elf, &elf_size)) != AMP_OK) goto fail;
    co->data = malloc(elf_size);
    if (!co->data) { st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "cannot allocate %zu bytes for a code object", elf_size); goto fail; }
    memcpy(co->data, elf, elf_size);
    co->size = elf_size;
    if ((st = parse_elf(co->data, co->size, &co->kernels, &co->nkernels)) != AMP_OK) goto fail;
    free(bin);
    amp__named_unit_free(&unit);
    return hand_out(co, out);
fail:
    if (co) code_object_free(co);
    free(bin);
    amp__named_unit_free(&unit);
    return st;
}

AMP_API amp_status amp_compile_for_target(const char *target, const char *source, const char *options,
                                          amp_code_object **out)
{
    return compile_for_target(target, source, NULL, NULL, options, out);
}

AMP_API amp_status amp_compile_file_for_target(const char *target, const char *path, const char *options,
                                               amp_code_object **out)
{
    char *text = NULL, *dir = NULL;
    size_t size = 0;
    if (out) *out = NULL;
    if (!out || !path) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_compile_file_for_target: %s is NULL",
                                        !out ? "out" : "path");
    amp_status st = amp__read_kernel_file(path, &text, &size, &dir);
    if (st == AMP_OK) st = compile_for_target(target, text, path, dir, options, out);
    free(text);
    free(dir);
    return st;
}

AMP_API amp_status amp_code_object_data(const amp_code_object *c, const void **data, size_t *size)
{
    if (data) *data = NULL;
    if (size) *size = 0;
    if (!data || !size)
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_code_object_data: %s is NULL", !data ? "data" : "size");
    amp_status st = live_check(c, "amp_code_object_data", false);
    if (st != AMP_OK) return st;
    *data = c->data;
    *size = c->size;
    return AMP_OK;
}

AMP_API size_t amp_code_object_kernel_count(const amp_code_object *c)
{
    return live_check(c, "amp_code_object_kernel_count", false) == AMP_OK ? c->nkernels : 0;
}

AMP_API amp_status amp_code_object_kernel_resources(const amp_code_object *c, size_t i, amp_kernel_resources *out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!out) return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "amp_code_object_kernel_resources: out is NULL");
    amp_status st = live_check(c, "amp_code_object_kernel_resources", false);
    if (st != AMP_OK) return st;
    if (i >= c->nkernels)
        return amp__fail(AMP_ERROR_OUT_OF_BOUNDS, "kernel index %zu, the code object has %zu kernels", i, c->nkernels);
    *out = c->kernels[i];
    return AMP_OK;
}

AMP_API amp_status amp_code_object_destroy(amp_code_object *c)
{
    if (!c) return AMP_OK;
    amp_status st = live_check(c, "amp_code_object_destroy", true);
    if (st == AMP_OK) code_object_free(c);
    return st;
}
