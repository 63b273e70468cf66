/* alg/geometry.c — the algorithms' programs' tile geometry: the tuning
 * knobs (docs/algorithms.md, "Tuning knobs"), read once per process and
 * held to each kind of accelerator's rule, and each program's tile, items
 * a thread, radix bits and tiles, fitted to the tile_static memory every
 * accelerator has. */
#include "alg.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- tuning */

/* The tuning knobs (docs/algorithms.md): defaults per kind of accelerator,
 * each overridable by an environment variable read once; a value outside
 * its range keeps the default. */
typedef struct amp__alg_tuning {
    int tile;          /* AMP_ALG_TILE: threads per tile of reduce, scan, compaction, fill, iota */
    int reduce_items;  /* AMP_ALG_REDUCE_ITEMS: elements a thread loads per step (power of two) */
    int scan_items;    /* AMP_ALG_SCAN_ITEMS: elements per thread of a scan; 0: the rule (GPU) */
    int select_items;  /* AMP_ALG_SELECT_ITEMS: elements per thread of compaction (copy_if) */
    int sort_tile;     /* AMP_ALG_SORT_TILE */
    int sort_items;    /* AMP_ALG_SORT_ITEMS: keys per thread of a sort pass */
    int radix_bits;    /* AMP_ALG_RADIX_BITS: 4..8 */
    int sort_min_tiles; /* AMP_ALG_SORT_MIN_TILES: tiles a compute unit a sort pass is compiled for; 0: the rule */
    int reduce_tiles;  /* AMP_ALG_REDUCE_TILES: tiles per compute unit (GPU) or per thread (CPU) */
    int reduce_grain;  /* AMP_ALG_REDUCE_GRAIN: elements a tile of a reduction has at least; 1: no floor */
    bool reduce_vector; /* AMP_ALG_REDUCE_VECTOR: 16-byte loads of a reduction's contiguous inputs (GPU) */
    bool scan_guess;    /* AMP_ALG_SCAN_GUESS: a scan tile reads its index's chunk before it knows its own (GPU) */
} amp__alg_tuning;

static amp__alg_tuning amp__alg_tune[2]; /* [0] GPU, [1] CPU */
static pthread_once_t amp__alg_tune_once = PTHREAD_ONCE_INIT;

static bool amp__pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }

/* The sort tile's defaults: each fits a pass of any key and value within
 * AMP__ALG_TILE_STATIC. */
#define AMP__ALG_SORT_TILE_GPU 256
#define AMP__ALG_SORT_TILE_CPU 1

/* The variable read once as any whole number (malformed: said by env.c),
 * then held to this kind of accelerator's rule: a value it cannot take is
 * said naming the kind (the same variable may suit the other). */
static int amp__alg_knob(const char *name, int dflt, int lo, int hi, int multiple, bool pow2, const char *where)
{
    unsigned v = amp__env_count(name, 0, 1u << 30);
    if (v == 0) return dflt;
    if ((int)v < lo || (int)v > hi || (multiple > 1 && (int)v % multiple) || (pow2 && !amp__pow2((int)v))) {
        char accepted[96], d[16];
        snprintf(accepted, sizeof accepted, "a whole number in %d..%d%s%s", lo, hi, pow2 ? " and a power of two" : "",
                 multiple > 1 ? " and a multiple of " : "");
        if (multiple > 1) snprintf(accepted + strlen(accepted), sizeof accepted - strlen(accepted), "%d", multiple);
        if (dflt) snprintf(d, sizeof d, "%d", dflt);
        else snprintf(d, sizeof d, "its rule");
        amp__env_refused(name, where, accepted, d);
        return dflt;
    }
    return (int)v;
}

static void amp__alg_tune_init(void)
{
    /* GPU: tiles a multiple of 64 so that 32- and 64-wide waves both divide
     * them. CPU: one work-item a tile, looping over long runs. */
    amp__alg_tuning *g = &amp__alg_tune[0], *c = &amp__alg_tune[1];
    g->tile = amp__alg_knob("AMP_ALG_TILE", 128, 64, 1024, 64, false, "on a GPU");
    g->reduce_items = amp__alg_knob("AMP_ALG_REDUCE_ITEMS", 8, 1, 64, 1, true, "on a GPU");
    /* 0: by the GPU (amp__alg_items), for the scan and compaction alike:
     * compaction gains from long runs as the scan does (the figures:
     * docs/algorithms.md, "Why the defaults"). */
    g->scan_items = amp__alg_knob("AMP_ALG_SCAN_ITEMS", 0, 1, 64, 1, false, "on a GPU");
    g->select_items = amp__alg_knob("AMP_ALG_SELECT_ITEMS", 0, 1, 64, 1, false, "on a GPU");
    g->sort_tile = amp__alg_knob("AMP_ALG_SORT_TILE", AMP__ALG_SORT_TILE_GPU, 64, 1024, 64, false, "on a GPU");
    g->sort_items = amp__alg_knob("AMP_ALG_SORT_ITEMS", 16, 1, 64, 1, false, "on a GPU");
    g->radix_bits = amp__alg_knob("AMP_ALG_RADIX_BITS", 8, 4, 8, 1, false, "on a GPU");
    g->sort_min_tiles = amp__alg_knob("AMP_ALG_SORT_MIN_TILES", 0, 1, 16, 1, false, "on a GPU");
    /* Far more tiles than a compute unit holds at once: the rest wait in
     * the hardware's queue and go to the compute units that finish first,
     * so that those that read memory more slowly do not leave the others
     * idle at the end (docs/algorithms.md, "Why the defaults"). */
    g->reduce_tiles = amp__alg_knob("AMP_ALG_REDUCE_TILES", 64, 1, 256, 1, false, "on a GPU");
    g->reduce_vector = amp__env_flag("AMP_ALG_REDUCE_VECTOR", true);
    g->scan_guess = amp__env_flag("AMP_ALG_SCAN_GUESS", true);
    c->tile = amp__alg_knob("AMP_ALG_TILE", 1, 1, 1024, 1, false, "on the CPU accelerator");
    c->reduce_items = amp__alg_knob("AMP_ALG_REDUCE_ITEMS", 16, 1, 256, 1, true, "on the CPU accelerator");
    c->scan_items = amp__alg_knob("AMP_ALG_SCAN_ITEMS", 16384, 1, 16384, 1, false, "on the CPU accelerator");
    c->select_items = amp__alg_knob("AMP_ALG_SELECT_ITEMS", 16384, 1, 16384, 1, false, "on the CPU accelerator");
    c->sort_tile = amp__alg_knob("AMP_ALG_SORT_TILE", AMP__ALG_SORT_TILE_CPU, 1, 1024, 1, false, "on the CPU accelerator");
    c->sort_items = amp__alg_knob("AMP_ALG_SORT_ITEMS", 4096, 1, 16384, 1, false, "on the CPU accelerator");
    c->radix_bits = amp__alg_knob("AMP_ALG_RADIX_BITS", 8, 4, 8, 1, false, "on the CPU accelerator");
    c->reduce_tiles = amp__alg_knob("AMP_ALG_REDUCE_TILES", 8, 1, 64, 1, false, "on the CPU accelerator");
    /* CPU: a reduction of a few thousand elements is a few microseconds'
     * work for one thread, less than waking the pool and a second launch
     * to fold the tiles' results cost; under 2 x this many elements it is
     * one tile, which the launching thread runs alone (TeaLeaf's CG sums
     * 8,000 tiles' partial results twice an iteration: docs/algorithms.md,
     * "Why the defaults"). The GPU has no floor: a launch there does not
     * wake threads. */
    g->reduce_grain = amp__alg_knob("AMP_ALG_REDUCE_GRAIN", 1, 1, 1 << 30, 1, false, "on a GPU");
    c->reduce_grain = amp__alg_knob("AMP_ALG_REDUCE_GRAIN", 4096, 1, 1 << 30, 1, false, "on the CPU accelerator");
}

static const amp__alg_tuning *amp__alg_tuning_of(const amp_accelerator *acc)
{
    pthread_once(&amp__alg_tune_once, amp__alg_tune_init);
    return &amp__alg_tune[acc->e.info.is_emulated ? 1 : 0];
}

/* tile_static bytes a kernel may use: every accelerator has 48 KiB; 1 KiB
 * is left for the variables the kernels keep beside their arrays. */
#define AMP__ALG_TILE_STATIC (47 * 1024)
/* Waves per tile for sizing: the smallest wave (32) gives the most. */
static int amp__alg_waves(const amp_accelerator *acc, int tile) { return acc->e.info.is_emulated ? tile : tile / 32 > 0 ? tile / 32 : 1; }

/* Fit items per thread so that the kernel's tile_static use stays within
 * the budget: bytes(items) grows with items. */
static int amp__alg_fit(int items, int64_t fixed, int64_t per_item)
{
    while (items > 1 && fixed + per_item * items > AMP__ALG_TILE_STATIC) --items;
    return items;
}

/* A sort pass's tile_static bytes: its digit counters (a wave's, the
 * tile's), whatever the items; and those of a key (and value) a thread. */
static int64_t amp__alg_sort_fixed(int waves, int radix_bits)
{
    int64_t bins = 1 << radix_bits;
    return (int64_t)waves * bins * 4 + bins * 16 + (int64_t)waves * 4 + 16;
}

static int64_t amp__alg_sort_per_item(int tile, const amp__alg_spec *sp)
{
    return (int64_t)tile * ((int64_t)amp_type_size(sp->type) + (int64_t)sp->size);
}

/* A GPU scan's or compaction's items a thread unless the knob (asked: the
 * AMP_ALG_SCAN_ITEMS or AMP_ALG_SELECT_ITEMS value, 0 when unset) says.
 * 64 (8192 a tile of 128) halves the tiles and so the look-backs of 32
 * (measured on sm_90 only: docs/algorithms.md, "Why the defaults"). Such a tile takes 33 KB of tile_static memory, so only NVIDIA's
 * multiprocessors with 164 KB or more (sm_80, sm_87, sm_90 to sm_110) hold
 * four or more of them. Those with 100 KB (sm_86, sm_89, sm_120 and up)
 * would hold two, 256 threads; an AMD compute unit or an older NVIDIA
 * multiprocessor (64 KB) one: they keep 32 (17 KB, five or three). */
static int amp__alg_items(const amp_accelerator *acc, int asked)
{
    if (asked > 0) return asked;
    const char *arch = acc->e.info.arch;
    if (strncmp(arch, "sm_", 3) != 0) return 32;
    int v = atoi(arch + 3);
    return v == 80 || v == 87 || (v >= 90 && v < 120) ? 64 : 32;
}

/* Geometry of a program on acc, from the tuning and the sizes involved. */
void amp__alg_geometry(const amp_accelerator *acc, const amp__alg_spec *sp, amp__alg_prog *g)
{
    const amp__alg_tuning *tn = amp__alg_tuning_of(acc);
    bool sort = sp->family == AMP__ALG_FAM_SORT;
    g->tile = sort ? tn->sort_tile : tn->tile;
    int waves = amp__alg_waves(acc, g->tile);
    if (sort && amp__alg_sort_fixed(waves, tn->radix_bits) + amp__alg_sort_per_item(g->tile, sp) > AMP__ALG_TILE_STATIC) {
        /* Even one key a thread would not fit: the tile the knob asked for
         * is too big for this sort's counters and keys. */
        bool cpu = acc->e.info.is_emulated;
        int dflt = cpu ? AMP__ALG_SORT_TILE_CPU : AMP__ALG_SORT_TILE_GPU;
        char where[128], values[48] = "", d[16];
        if (sp->size) snprintf(values, sizeof values, " with %zu-byte values", sp->size);
        snprintf(where, sizeof where, "for a sort of %zu-byte keys%s %s", amp_type_size(sp->type), values,
                 cpu ? "on the CPU accelerator" : "on a GPU");
        snprintf(d, sizeof d, "%d", dflt);
        amp__env_refused("AMP_ALG_SORT_TILE", where,
                         "a tile whose sort pass fits in 47 KiB of tile_static memory (its digit counters and a key "
                         "a thread)",
                         d);
        g->tile = dflt;
        waves = amp__alg_waves(acc, g->tile);
    }
    g->reduce_items = tn->reduce_items;
    size_t rsize = 8; /* the accumulator: at most 8 bytes */
    if (sp->family == AMP__ALG_FAM_BASIC || sp->family == AMP__ALG_FAM_SCAN) rsize = amp_type_size(amp__alg_acc_type(sp));
    if (sp->family == AMP__ALG_FAM_USER_REDUCE || sp->family == AMP__ALG_FAM_USER_SCAN) rsize = amp_type_size(sp->user->type);
    /* scan: s[PAD(tile * items) + 1] + ws[waves] + pre of R, a tile index;
     * compaction: s of T plus a byte of flags per item. */
    int64_t pad_per_item = g->tile > 1 ? g->tile + g->tile / 32 : 1;
    int asked = amp__alg_items(acc, sp->family == AMP__ALG_FAM_PREDICATE ? tn->select_items : tn->scan_items);
    if (sp->family == AMP__ALG_FAM_PREDICATE)
        g->scan_items = amp__alg_fit(asked, (int64_t)(waves + 4) * 8 + 16,
                                     pad_per_item * (int64_t)amp_type_size(sp->type) + g->tile);
    else
        g->scan_items = amp__alg_fit(asked, (int64_t)(waves + 4) * (int64_t)rsize + 16, pad_per_item * (int64_t)rsize);
    /* Cut down to fit, a GPU tile's items are cut to a power of two, so that
     * a thread's run keeps constant tile_static addresses (hip_kernels/alg/scan.hip,
     * run_at): 8-byte elements get 32 where 64 are asked for, not 45. */
    if (g->tile > 1 && g->scan_items < asked)
        while (!amp__pow2(g->scan_items)) --g->scan_items;
    /* One-thread tiles scan their items as 8 runs side by side
     * (hip_kernels/alg/scan.hip, AMP_ALG_SCAN_SEGS). */
    if (g->tile == 1) g->scan_items = g->scan_items < 8 ? 8 : g->scan_items / 8 * 8;
    /* ... and a run of a multiple of 16 elements would put the 8 runs (and
     * input and output) a power of two of bytes apart, in the same cache
     * sets: such runs are shortened by 8 elements. (On the H100 machine's
     * host the scan of 2^26 float32 ran at 0.56 of the copy loop with 2048
     * and 8192 items, 0.85 with 12016; that set conflicts are the cause is
     * this project's reading, not measured apart.) */
    if (g->tile == 1 && g->scan_items >= 256 && (g->scan_items / 8) % 16 == 0) g->scan_items -= 64;
    g->radix_bits = tn->radix_bits;
    if (sort) {
        int ksize = (int)amp_type_size(sp->type);
        g->passes = (ksize * 8 + g->radix_bits - 1) / g->radix_bits;
        g->sort_items = amp__alg_fit(tn->sort_items, amp__alg_sort_fixed(waves, g->radix_bits),
                                     amp__alg_sort_per_item(g->tile, sp));
        /* CUDA only (the prelude's AMP__LAUNCH_MIN_TILES); 1 leaves the
         * registers to the compiler. By default a pass over 4-byte keys
         * alone is held to 3 tiles a compute unit: NVRTC then gives it 80
         * registers (from 119) with at most an 8-byte frame, and on the
         * H100 the sort of 2^26 uint32 keys went from 17.0 to 18.9 Gkeys/s
         * in one call. Pairs and 8-byte keys spill at 3 (pairs of uint32:
         * 14.6 -> 12.5 Gkeys/s), so they are held to 2 (at most 128
         * registers): left to itself NVRTC gave pairs of uint32 151, one
         * tile a compute unit. */
        if (tn->sort_min_tiles > 0) g->sort_min_tiles = tn->sort_min_tiles;
        else if (acc->e.info.is_emulated) g->sort_min_tiles = 1;
        else g->sort_min_tiles = ksize == 4 && sp->size == 0 ? 3 : 2;
    }
    int units = acc->e.info.compute_units > 0 ? acc->e.info.compute_units : 1;
    g->reduce_tiles = (int64_t)units * tn->reduce_tiles;
    g->reduce_grain = tn->reduce_grain;
    g->count_tiles = (int64_t)units * 8;
    g->reduce_vector = !acc->e.info.is_emulated && tn->reduce_vector;
    g->scan_guess = !acc->e.info.is_emulated && tn->scan_guess;
}
