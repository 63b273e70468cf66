/* order.c — the order of a region's work-item loops: the tile's contiguous dimension innermost, unless every store of the region that the analysis can place runs along the next dimension out (phase 1 of a tiled transpose, tile[local[1]][local[0]] = A[global]), which then goes innermost; and which dimension of the tile an index expression follows (layout.c asks too). */
#include "loops.h"

#include <ctype.h>
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
 * seed's transpose ran 1.36-1.43x faster so (bench_cpu, side by side;
 * bench/results, session 50).
 *
 * Sound for any region: between two barriers the work-items of a tile are
 * unordered (a result that depends on their order comes from a race, or
 * from atomics, whose order between work-items is unspecified anyway), and
 * amp__wi, which indexes the context slots, is computed from the three
 * loop variables whatever their order. Only the order changes. Which
 * stores vote: a tile_static array's element (its stored rows must be
 * whole lines to vote for the interchange: the array's columns where
 * layout.c stores it transposed), and a call's last argument (a view's
 * At(i, j), out[t.global]) when it reads as one dimension of the
 * work-item's index or the whole index; anything else (a pointer, an index
 * variable, a macro) does not vote, and one store placed along the
 * contiguous dimension keeps the usual order. */

/* An index expression that is the work-item's whole index (T, T.global,
 * T.local): its last component is the contiguous dimension. */
enum { WHOLE_INDEX = 3 };
/* Shortest next dimension worth running innermost. */
enum { MIN_NEXT = 8 };

/* The dimension of the tile an index expression follows: d when its text
 * (blanks dropped) is "T.F[d]" for the kernel's tiled_index T and a field F
 * of fields (AMP__IDX_LOCAL: local, _GLOBAL: global, _TILE: tile,
 * _TILE_ORIGIN: tile_origin; *field says which), or it names an unmodified
 * variable initialised so; WHOLE_INDEX for the whole index (T, T.global,
 * T.local: with local or global among fields); -1 otherwise. */
static int index_dim(amp__loops_ctx *k, int n, int depth, unsigned fields, unsigned *field)
{
    if (field) *field = 0;
    n = amp__loops_strip(k, n);
    if (n < 0 || k->n[n].macro || depth > 4 || k->tidx < 0) return -1;
    const amp__loops_node *x = &k->n[n];
    if (x->kind == AMP__CX_DeclRefExpr && x->var >= 0 && x->var != k->tidx) {
        const amp__loops_var *v = &k->v[x->var];
        if (v->modified || v->addr_taken || v->is_param) return -1;
        int init = amp__loops_var_init(k, x->var);
        return init < 0 ? -1 : index_dim(k, init, depth + 1, fields, field);
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
    if (!nl || strncmp(text, name, nl)) return -1;
    if ((fields & (AMP__IDX_LOCAL | AMP__IDX_GLOBAL)) &&
        (!text[nl] || !strcmp(text + nl, ".global") || !strcmp(text + nl, ".local")))
        return WHOLE_INDEX;
    if (text[nl] != '.') return -1;
    static const struct {
        const char *s;
        unsigned bit;
    } known[] = {{"local[", AMP__IDX_LOCAL},
                 {"global[", AMP__IDX_GLOBAL},
                 {"tile[", AMP__IDX_TILE},
                 {"tile_origin[", AMP__IDX_TILE_ORIGIN}};
    for (size_t f = 0; f < sizeof known / sizeof known[0]; ++f) {
        size_t fl = strlen(known[f].s);
        const char *r = text + nl + 1;
        if ((fields & known[f].bit) && !strncmp(r, known[f].s, fl) && r[fl] >= '0' && r[fl] <= '2' &&
            r[fl + 1] == ']' && !r[fl + 2]) {
            if (field) *field = known[f].bit;
            return r[fl] - '0';
        }
    }
    return -1;
}

int amp__loops_index_dim(amp__loops_ctx *k, int n, unsigned fields, unsigned *field)
{
    return index_dim(k, n, 0, fields, field);
}

int amp__loops_tile_rank(const amp__loops_ctx *k)
{
    return k->dims[2] > 0 ? 3 : (k->dims[1] > 0 ? 2 : 1);
}

int amp__loops_local_dim(amp__loops_ctx *k, int n)
{
    unsigned field = 0;
    int d = index_dim(k, n, 0, AMP__IDX_LOCAL | AMP__IDX_GLOBAL, &field);
    return field == AMP__IDX_LOCAL ? d : -1;
}

/* Whether each row of tile_static array vi (its last dimension) is a
 * whole number of 64-byte lines: interchanged, a row is then written with
 * stores as wide as the second phase's loads of it. A padded row
 * (float[16][17], the GPU idiom against bank conflicts) makes those stores
 * straddle lines, and the loads cannot be forwarded from them: on a 2-core
 * EPYC the padded transpose ran 1.35x slower interchanged. */
static bool rows_aligned(amp__loops_ctx *k, int vi)
{
    const amp__clang *cx = k->cx;
    amp__cx_type t = cx->clang_getCanonicalType(cx->clang_getCursorType(k->n[k->v[vi].node].c)), row = t;
    if (t.kind != AMP__CXT_ConstantArray) return false;
    long long whole = cx->clang_Type_getSizeOf(t);
    while (t.kind == AMP__CXT_ConstantArray) {
        row = t;
        t = cx->clang_getCanonicalType(cx->clang_getArrayElementType(t));
    }
    long long bytes = cx->clang_Type_getSizeOf(row);
    /* Stored transposed (layout.c: rank 2), a stored row is a column:
     * as many elements as the array has rows. */
    if (k->v[vi].transposed) {
        long long elem = cx->clang_Type_getSizeOf(t);
        bytes = bytes > 0 && elem > 0 ? whole / (bytes / elem) : 0;
    }
    return bytes > 0 && bytes % 64 == 0;
}

/* The last subscript of the store target at node lhs: the index of a
 * tile_static array's outermost [] (the one that varies fastest in
 * memory; the first [] of an array stored transposed; *padded when its
 * stored rows are not whole lines), or the last argument
 * of a call such as a view's At(i, j) or out[t.global] (libclang counts
 * an overloaded operator's object among the arguments, so out[i] has two);
 * -1 when it is neither. */
static int last_subscript(amp__loops_ctx *k, int lhs, bool *padded)
{
    *padded = false;
    lhs = amp__loops_strip(k, lhs);
    if (lhs < 0) return -1;
    if (k->n[lhs].kind == AMP__CX_ArraySubscriptExpr) {
        int base = amp__loops_strip(k, k->n[lhs].first);
        while (base >= 0 && k->n[base].kind == AMP__CX_ArraySubscriptExpr)
            base = amp__loops_strip(k, k->n[base].first);
        if (base < 0 || k->n[base].kind != AMP__CX_DeclRefExpr || k->n[base].var < 0 ||
            k->v[k->n[base].var].cls != AMP__VAR_TILE_STATIC)
            return -1;
        *padded = !rows_aligned(k, k->n[base].var);
        if (k->v[k->n[base].var].transposed) {
            int inner = amp__loops_strip(k, k->n[lhs].first);
            if (inner < 0 || k->n[inner].kind != AMP__CX_ArraySubscriptExpr) return -1;
            return amp__loops_nth_child(k, inner, 1);
        }
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
    const int rank = amp__loops_tile_rank(k);
    /* The dimension that would go innermost must be long enough to be
     * worth it (a tile of 2 x 64 keeps its 64 innermost). */
    if (rank < 2 || k->dims[rank - 2] < MIN_NEXT) return false;
    const amp__loops_unit *u = &k->u[ui];
    int along_inner = 0, along_next = 0;
    for (int i = 0; i < k->nn; ++i) {
        const amp__loops_node *x = &k->n[i];
        if (x->b < u->b || x->e > u->e || x->macro) continue;
        if (x->kind != AMP__CX_BinaryOperator && x->kind != AMP__CX_CompoundAssignOperator) continue;
        unsigned op = amp__loops_binary_op(k, i);
        if (op == ~0u || !amp__loops_is_assign_op(k->t, op)) continue;
        bool padded = false;
        int sub = last_subscript(k, x->first, &padded);
        int d = sub < 0 ? -1 : index_dim(k, sub, 0, AMP__IDX_LOCAL | AMP__IDX_GLOBAL, NULL);
        if (d == WHOLE_INDEX || d == rank - 1) along_inner++;
        else if (d == rank - 2 && !padded) along_next++;
    }
    return along_next > 0 && along_inner == 0;
}
