/* signature.c — the one check of a kernel's signature record: everything a
 * prelude could not have produced is refused before the launch path trusts
 * the record's offsets and sizes to fill a fixed-size argument pack. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

/* Bytes of a scalar kind's value; 0 for views, arrays, structs and
 * unknown kinds. */
int amp__kind_width(int kind)
{
    switch (kind) {
    case AMP_ARG_INT8: case AMP_ARG_UINT8: case AMP_ARG_BOOL: return 1;
    case AMP_ARG_INT16: case AMP_ARG_UINT16: return 2;
    case AMP_ARG_INT32: case AMP_ARG_UINT32: case AMP_ARG_FLOAT32: return 4;
    case AMP_ARG_INT64: case AMP_ARG_UINT64: case AMP_ARG_FLOAT64: return 8;
    }
    return 0;
}

static bool amp__pow2(int32_t x) { return x > 0 && (x & (x - 1)) == 0; }

/* Writes the first problem into why (naming the field and its value) and
 * returns false; true for a record the launch path may trust. */
bool amp__signature_valid(const amp__signature *g, char *why, size_t n)
{
#define AMP__BAD(...)                       \
    do {                                    \
        snprintf(why, n, __VA_ARGS__);      \
        return false;                       \
    } while (0)
    if (g->magic != AMP__SIG_MAGIC) AMP__BAD("magic is %#x, not %#x", (unsigned)g->magic, AMP__SIG_MAGIC);
    if (g->version != AMP__SIG_VERSION)
        AMP__BAD("record version %d; this library reads version %d (a kernel built with another hipamp?)", g->version,
                 AMP__SIG_VERSION);
    if (g->tiled != 0 && g->tiled != 1) AMP__BAD("tiled flag is %d", g->tiled);
    if (g->rank < 1 || g->rank > (g->tiled ? 3 : AMP_MAX_RANK))
        AMP__BAD("index rank %d is outside 1..%d", g->rank, g->tiled ? 3 : AMP_MAX_RANK);
    for (int d = 0; d < 3; ++d) {
        bool used = g->tiled && d < g->rank;
        if (used && (g->tile[d] < 1 || g->tile[d] > AMP__SIG_MAX_TILE_DIM))
            AMP__BAD("tile dimension %d is %d (1..%d)", d, g->tile[d], AMP__SIG_MAX_TILE_DIM);
        if (!used && g->tile[d] != 0) AMP__BAD("unused tile dimension %d is %d, not 0", d, g->tile[d]);
    }
    if (g->nparams < 0 || g->nparams > AMP__SIG_MAX_PARAMS)
        AMP__BAD("parameter count %d is outside 0..%d", g->nparams, AMP__SIG_MAX_PARAMS);
    if (g->pack_size < 1 || g->pack_size > AMP__MAX_PACK)
        AMP__BAD("argument pack of %d bytes (1..%d)", g->pack_size, AMP__MAX_PACK);
    if (!amp__pow2(g->pack_align) || g->pack_align > AMP__MAX_PARAM_ALIGN)
        AMP__BAD("pack alignment %d is not a power of two up to %d", g->pack_align, AMP__MAX_PARAM_ALIGN);
    int64_t end = 0; /* end of the previous parameter: they follow in order */
    int32_t max_align = 1;
    for (int i = 0; i < g->nparams; ++i) {
        const amp__sig_param *p = &g->params[i];
        bool mem = p->kind == AMP_ARG_VIEW || p->kind == AMP_ARG_ARRAY;
        int width = amp__kind_width(p->kind);
        if (!mem && !width && p->kind != AMP_ARG_STRUCT) AMP__BAD("parameter %d has unknown kind %d", i, p->kind);
        if (!amp__pow2(p->align) || p->align > AMP__MAX_PARAM_ALIGN)
            AMP__BAD("parameter %d alignment %d is not a power of two up to %d", i, p->align, AMP__MAX_PARAM_ALIGN);
        if (p->offset < end || p->offset % p->align)
            AMP__BAD("parameter %d offset %d (previous parameter ends at %lld, alignment %d)", i, p->offset,
                     (long long)end, p->align);
        if (p->size < 1 || (int64_t)p->offset + p->size > g->pack_size)
            AMP__BAD("parameter %d of %d bytes at offset %d passes the %d-byte pack", i, p->size, p->offset,
                     g->pack_size);
        if (p->reserved != 0) AMP__BAD("parameter %d reserved field is %d", i, p->reserved);
        if (mem) {
            if (p->rank < 1 || p->rank > AMP_MAX_RANK) AMP__BAD("parameter %d view rank %d", i, p->rank);
            if (p->size != AMP__DESC_SIZE(p->rank) || p->align != 8)
                AMP__BAD("parameter %d view descriptor of %d bytes, alignment %d (want %d, 8)", i, p->size, p->align,
                         AMP__DESC_SIZE(p->rank));
            if (p->elem_size < 1 || p->elem_size > (1 << 20))
                AMP__BAD("parameter %d element size %d", i, p->elem_size);
            if (p->is_const != 0 && p->is_const != 1) AMP__BAD("parameter %d const flag %d", i, p->is_const);
        } else {
            if (p->rank != 0 || p->is_const != 0)
                AMP__BAD("parameter %d is a value but has rank %d, const flag %d", i, p->rank, p->is_const);
            if (width && (p->size != width || p->elem_size != width || p->align != width))
                AMP__BAD("parameter %d of a %d-byte kind has size %d, element size %d, alignment %d", i, width,
                         p->size, p->elem_size, p->align);
            if (!width && (p->elem_size != p->size || p->size % p->align))
                AMP__BAD("parameter %d struct of %d bytes has element size %d, alignment %d", i, p->size,
                         p->elem_size, p->align);
        }
        end = (int64_t)p->offset + p->size;
        if (p->align > max_align) max_align = p->align;
    }
    if (g->pack_align != max_align)
        AMP__BAD("pack alignment %d; its parameters need %d", g->pack_align, max_align);
    /* The prelude's pack ends in an empty struct (one byte), then pads to
     * its alignment: anything larger hides bytes no parameter describes. */
    int64_t limit = (end + 1 + g->pack_align - 1) / g->pack_align * g->pack_align;
    if (g->pack_size > limit || g->pack_size % g->pack_align)
        AMP__BAD("argument pack of %d bytes; its parameters end at %lld", g->pack_size, (long long)end);
    for (int i = g->nparams; i < AMP__SIG_MAX_PARAMS; ++i) {
        static const amp__sig_param zero;
        if (memcmp(&g->params[i], &zero, sizeof zero)) AMP__BAD("unused parameter slot %d is not zero", i);
    }
    return true;
#undef AMP__BAD
}
