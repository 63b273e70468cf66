/* order.c — the order of a region's work-item loops: the tile's contiguous dimension innermost, unless every store of the region that the analysis can place runs along the next dimension out (phase 1 of a tiled transpose, tile[local[1]][local[0]] = A[global]), which then goes innermost. */
#include "loops.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Why: the innermost work-item loop is what the compiler vectorises, and
 * a store that strides through memory there is written an element at a
 * time, while loads can be gathered. In a transpose's first phase through
 * a tile buffer the stores then run down the buffer's columns, and its
 * second phase reads the rows back with wide loads that span several of
 * those narrow stores, which the core cannot forward: each waits for the
 * stores ahead of it, the previous tile's misses included. With the loops
 * interchanged the stores are contiguous and A is read down the tile's
 * columns, as a blocked loop in C reads it; on the H200's Xeon host the
 * seed's transpose ran 1.4-1.7x faster so (bench/results, session 50).
 *
 * Sound for any region: between two barriers the work-items of a tile are
 * unordered (a kernel whose result depends on their order has a race), and
 * amp__wi, which indexes the context slots, is computed from the three
 * loop variables whatever their order. Only the order changes; a store the
 * analysis cannot place (a view indexed by an index object, a macro) does
 * not vote, and any store placed along the contiguous dimension keeps the
 * usual order. */

/* The dimension of the tile an index expression follows: d when its text
 * (blanks dropped) is "T.local[d]" or "T.global[d]" for the kernel's
 * tiled_index T, or it names an unmodified variable initialised so; -1
 * otherwise. */
static int index_dim(amp__loops_ctx *k, int n, int depth)
{
    n = amp__loops_strip(k, n);
    if (n < 0 || k->n[n].macro || depth > 4 || k->tidx < 0) return -1;
    const amp__loops_node *x = &k->n[n];
    if (x->kind == AMP__CX_DeclRefExpr && x->var >= 0 && x->var != k->tidx) {
        const amp__loops_var *v = &k->v[x->var];
        if (v->modified || v->addr_taken || v->is_param) return -1;
        int init = amp__loops_var_init(k, x->var);
        return init < 0 ? -1 : index_dim(k, init, depth + 1);
    }
    char text[160];
    size_t m = 0;
    for (unsigned i = x->b; i < x->e; ++i) {
        if (isspace((unsigned char)k->t->src[i])) continue;
        if (m + 1 >= sizeof text) return -1;
        text[m++] = k->t->src[i];
    }
    text[m] = '\0';
    const char *name = k->v[k->tidx].name;
    size_t nl = strlen(name);
    if (!nl || strncmp(text, name, nl) || text[nl] != '.') return -1;
    static const char *const fields[] = {"local[", "global["};
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; ++f) {
        size_t fl = strlen(fields[f]);
        const char *r = text + nl + 1;
        if (!strncmp(r, fields[f], fl) && r[fl] >= '0' && r[fl] <= '2' && r[fl + 1] == ']' && !r[fl + 2])
            return r[fl] - '0';
    }
    return -1;
}

/* Whether each row of tile_static array v (its last dimension) is a whole
 * number of 64-byte lines: interchanged, a row is then written with stores
 * as wide as the second phase's loads of it. A padded row (float[16][17],
 * the GPU idiom against bank conflicts) makes those stores straddle lines,
 * and the loads cannot be forwarded from them: on a 2-core EPYC the padded
 * transpose ran 1.35x slower interchanged, so it keeps the usual order. */
static bool rows_aligned(const amp__loops_var *v)
{
    long long count = 1, last = 0;
    for (const char *p = strchr(v->type, '['); p; p = strchr(p + 1, '[')) {
        char *end = NULL;
        last = strtoll(p + 1, &end, 10);
        if (last <= 0 || !end || *end != ']') return false;
        count *= last;
    }
    if (!last || v->size <= 0 || v->size % count) return false;
    return (v->size / count * last) % 64 == 0;
}

/* The last subscript of the store target at node lhs: the index of a
 * tile_static array's outermost [] (the one that varies fastest in
 * memory), or the last argument of a call such as a view's At(i, j); -1
 * when it is neither. */
static int last_subscript(amp__loops_ctx *k, int lhs)
{
    lhs = amp__loops_strip(k, lhs);
    if (lhs < 0) return -1;
    if (k->n[lhs].kind == AMP__CX_ArraySubscriptExpr) {
        int base = amp__loops_strip(k, k->n[lhs].first);
        while (base >= 0 && k->n[base].kind == AMP__CX_ArraySubscriptExpr)
            base = amp__loops_strip(k, k->n[base].first);
        if (base < 0 || k->n[base].kind != AMP__CX_DeclRefExpr || k->n[base].var < 0 ||
            k->v[k->n[base].var].cls != AMP__VAR_TILE_STATIC || !rows_aligned(&k->v[k->n[base].var]))
            return -1;
        return amp__loops_nth_child(k, lhs, 1);
    }
    if (k->n[lhs].kind == AMP__CX_CallExpr) {
        int nargs = k->cx->clang_Cursor_getNumArguments(k->n[lhs].c);
        if (nargs < 2) return -1;
        for (int c = k->n[lhs].first; c >= 0; c = k->n[c].next)
            if (amp__loops_arg_index(k, lhs, c) == nargs - 1) return c;
    }
    return -1;
}

bool amp__loops_region_order_swaps(amp__loops_ctx *k, int ui)
{
    const int rank = k->dims[2] > 0 ? 3 : (k->dims[1] > 0 ? 2 : 1);
    if (rank < 2) return false;
    const amp__loops_unit *u = &k->u[ui];
    int along_inner = 0, along_next = 0;
    for (int i = 0; i < k->nn; ++i) {
        const amp__loops_node *x = &k->n[i];
        if (x->b < u->b || x->e > u->e || x->macro) continue;
        if (x->kind != AMP__CX_BinaryOperator && x->kind != AMP__CX_CompoundAssignOperator) continue;
        unsigned op = amp__loops_binary_op(k, i);
        if (op == ~0u || !amp__loops_is_assign_op(k->t, op)) continue;
        int sub = last_subscript(k, x->first);
        int d = sub < 0 ? -1 : index_dim(k, sub, 0);
        if (d == rank - 1) along_inner++;
        else if (d == rank - 2) along_next++;
    }
    return along_next > 0 && along_inner == 0;
}
