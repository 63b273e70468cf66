/* fuzz_signature.c — libFuzzer harness for the signature-record check (lib/core/signature.c): records near a prelude's (a known-good record edited field by field by the input) and raw ones; every record the check accepts must be safe for the launch path, which this harness replays: each value written at its offset into a heap pack of exactly pack_size bytes (AddressSanitizer catches a byte outside), views' descriptors filled, parameters not overlapping. */
#include "core/internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Known-good records of a few shapes, as the prelude makes them. */
static void good_record(int shape, amp__signature *g)
{
    memset(g, 0, sizeof *g);
    g->magic = AMP__SIG_MAGIC;
    g->version = AMP__SIG_VERSION;
    switch (shape % 3) {
    case 0: /* tiled 16x16: view<float,2>, int, double */
        g->tiled = 1;
        g->rank = 2;
        g->tile[0] = g->tile[1] = 16;
        g->nparams = 3;
        g->params[0] = (amp__sig_param){AMP_ARG_VIEW, 4, 2, 0, 0, AMP__DESC_SIZE(2), 8, 0};
        g->params[1] = (amp__sig_param){AMP_ARG_INT32, 4, 0, 0, 32, 4, 4, 0};
        g->params[2] = (amp__sig_param){AMP_ARG_FLOAT64, 8, 0, 0, 40, 8, 8, 0};
        g->pack_size = 56;
        g->pack_align = 8;
        break;
    case 1: /* simple rank 1: bool, struct of 48 (align 16), uint16 */
        g->rank = 1;
        g->nparams = 3;
        g->params[0] = (amp__sig_param){AMP_ARG_BOOL, 1, 0, 0, 0, 1, 1, 0};
        g->params[1] = (amp__sig_param){AMP_ARG_STRUCT, 48, 0, 0, 16, 48, 16, 0};
        g->params[2] = (amp__sig_param){AMP_ARG_UINT16, 2, 0, 0, 64, 2, 2, 0};
        g->pack_size = 80;
        g->pack_align = 16;
        break;
    default: /* no parameters */
        g->rank = 4;
        g->pack_size = 1;
        g->pack_align = 1;
        break;
    }
}

/* What the launch path does with an accepted record (lib/core/launch.c,
 * lib/core/argument.c): write every parameter into a pack of pack_size bytes. */
static void replay_launch(const amp__signature *g)
{
    unsigned char *pack = malloc((size_t)g->pack_size);
    if (!pack) return;
    unsigned char owner[AMP__MAX_PACK];
    memset(owner, 0xff, sizeof owner);
    for (int i = 0; i < g->nparams; ++i) {
        const amp__sig_param *p = &g->params[i];
        if (p->kind == AMP_ARG_VIEW || p->kind == AMP_ARG_ARRAY) {
            /* pointer, strides, extents: the descriptor's own layout */
            memset(pack + p->offset, 0xAB, 8);
            for (int d = 0; d < p->rank; ++d) {
                memset(pack + p->offset + AMP__DESC_STRIDE_OFFSET + 8 * d, 1, 8);
                memset(pack + p->offset + AMP__DESC_EXTENT_OFFSET(p->rank) + 4 * d, 2, 4);
            }
        } else {
            amp_arg a;
            memset(&a, 0, sizeof a);
            a.kind = (amp_arg_kind)p->kind;
            unsigned char bytes[AMP__MAX_PACK];
            memset(bytes, 0x5c, sizeof bytes);
            a.u.bytes.data = bytes;
            a.u.bytes.size = (size_t)p->size;
            /* a bool member must hold 0 or 1 (the library reads it as _Bool) */
            if (a.kind == AMP_ARG_BOOL) a.u.b = true;
            else if (a.kind != AMP_ARG_STRUCT) a.u.u64 = 0x0123456789abcdefULL;
            amp__arg_put_value(pack, p, &a);
        }
        for (int b = 0; b < p->size; ++b) {
            if (owner[p->offset + b] != 0xff) __builtin_trap(); /* two parameters share a byte */
            owner[p->offset + b] = (unsigned char)i;
        }
    }
    free(pack);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    amp__signature g;
    char why[256];
    if (size >= 1 && data[0] < 0x80) {
        /* Edits of a good record: (field offset, 32-bit value) pairs. */
        good_record(data[0], &g);
        for (size_t i = 1; i + 6 <= size; i += 6) {
            uint16_t at;
            int32_t v;
            memcpy(&at, data + i, 2);
            memcpy(&v, data + i + 2, 4);
            size_t off = (size_t)(at % (sizeof g / 4)) * 4;
            memcpy((char *)&g + off, &v, 4);
        }
    } else {
        memset(&g, 0, sizeof g);
        memcpy(&g, data + (size ? 1 : 0), size > sizeof g ? sizeof g : (size ? size - 1 : 0));
    }
    if (amp__signature_valid(&g, why, sizeof why)) replay_launch(&g);
    return 0;
}
