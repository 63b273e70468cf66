/* tiles.c — the order a loop version runs its launch's tiles in: the launch's own (the last dimension fastest), or, where the kernel builds a rank-2 index with its tile's coordinates swapped (a transpose writing At(origin[1] + ..., origin[0] + ...)), in groups of tile rows, each group's tiles down its column before the next column. */
#include "loops.h"

#include "../cpu_internal.h"

/* Why: a transpose reads A along its rows and writes At down its columns
 * (or the other way round). In the launch's own order a thread's next
 * tile writes 16 other rows of At, a 64-byte piece of each, so every
 * tile's stores land on as many other pages and lines as it has rows;
 * in groups of G tile rows the next G tiles write the next pieces of the
 * same rows of At (G * 64 bytes of a row in a row), while A is read G
 * tiles deep. The same blocked C + OpenMP loop over 16 x 16 blocks ran
 * 1.3x (16 threads, Xeon host of an H100 machine: 13.4 against 10.4 ms at
 * 8192^2 floats, G from 2 to 16 alike) and 1.5x (2 threads, EPYC: 40 against
 * 25.5 ms, G = 8) faster so. A kernel that reads and writes along rows runs
 * 2-4x slower in groups (a 16 x 16 blocked copy or 5-point stencil at
 * 8192^2: 5.2 against 12.8 ms on that Xeon), so only a kernel that swaps
 * its tile's coordinates gets them; and a transpose whose arrays the
 * caches hold runs slower in groups too (they read more rows at once than
 * the prefetchers follow), so the library groups only launches whose
 * views reach the caches' size (cpu_run.c, amp__cpu_group_launch).
 *
 * Sound for any kernel: the tiles of a launch are unordered (a result that
 * depends on their order comes from a race between tiles). Only the order
 * changes; every tile runs once (the prelude's tiles<>::run maps the
 * launch's tile numbers one to one). */

/* Rows of work-items a group spans: 8 tiles of 16. */
enum { GROUP_ROWS = 128 };

/* Which dimensions of the tile's position (T.global[d], T.tile[d],
 * T.tile_origin[d]) the expression at node n uses, a bit each: directly,
 * or through an unmodified variable's initialiser. */
static unsigned positions_used(amp__loops_ctx *k, int n, int depth)
{
    if (n < 0 || depth > 64) return 0;
    int d = amp__loops_index_dim(k, n, AMP__IDX_GLOBAL | AMP__IDX_TILE | AMP__IDX_TILE_ORIGIN, NULL);
    if (d >= 0 && d <= 2) return 1u << d;
    const amp__loops_node *x = &k->n[n];
    if (x->kind == AMP__CX_DeclRefExpr && x->var >= 0 && x->var != k->tidx) {
        const amp__loops_var *v = &k->v[x->var];
        if (v->modified || v->addr_taken || v->is_param) return 0;
        return positions_used(k, amp__loops_var_init(k, x->var), depth + 8);
    }
    unsigned used = 0;
    for (int c = x->first; c >= 0; c = k->n[c].next) used |= positions_used(k, c, depth + 1);
    return used;
}

/* Whether call (or construction) node c's last two arguments are the
 * tile's position swapped: the first uses dimension 1 of it and not 0, the
 * second dimension 0 and not 1 (amp::index<2>(o[1], o[0]), At(o[1] + l[0],
 * o[0] + l[1]); a view's operator() counts the view among its arguments). */
static bool swaps_position(amp__loops_ctx *k, int c)
{
    int nargs = k->cx->clang_Cursor_getNumArguments(k->n[c].c);
    if (nargs < 2) return false;
    int first = -1, second = -1;
    for (int a = k->n[c].first; a >= 0; a = k->n[a].next) {
        int i = amp__loops_arg_index(k, c, a);
        if (i == nargs - 2) first = a;
        else if (i == nargs - 1) second = a;
    }
    if (first < 0 || second < 0) return false;
    return positions_used(k, first, 0) == 2u && positions_used(k, second, 0) == 1u;
}

void amp__loops_choose_tile_order(amp__loops_ctx *k)
{
    k->tile_group = 1;
    if (amp__loops_tile_rank(k) != 2 || k->dims[0] <= 0 || k->dims[0] >= GROUP_ROWS) return;
    for (int i = 0; i < k->nn; ++i) {
        if (k->n[i].kind != AMP__CX_CallExpr || k->n[i].macro || !swaps_position(k, i)) continue;
        int g = GROUP_ROWS / k->dims[0];
        k->tile_group = g > AMP__CPU_MAX_TILE_GROUP ? AMP__CPU_MAX_TILE_GROUP : g;
        return;
    }
}
