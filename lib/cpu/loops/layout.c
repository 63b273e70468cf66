/* layout.c — the layout of a kernel's rank-2 tile_static arrays in its loop version: stored transposed where a transpose through the array (tile[ly][lx] = A[global]; barrier; out = tile[lx][ly], the GPU's padded transpose) then runs along memory in both phases. */
#include "loops.h"

#include <string.h>

/* Why: on the CPU the innermost work-item loop is what the compiler
 * vectorises. In the GPU's padded transpose the first phase writes the
 * array along its rows (a copy of A's rows) and the second reads it down
 * its columns into the output's rows: one element at a time, 16 loads and
 * inserts a vector (GCC 12 and 13; bench_cpu's padded kernel ran at
 * 0.56-0.91 of a blocked OpenMP loop on the H200's host, where the seed's
 * kernel, which writes its buffer down the columns and reads its rows, ran
 * at 1.05-1.14). Stored transposed, the array is the seed's buffer: the
 * first phase writes down its stored columns, which order.c then runs
 * interchanged (the next dimension out innermost, A read down the tile's
 * columns, which the compiler turns into row loads and a transpose in
 * registers), and the second phase reads its stored rows. The padding goes
 * too: the stored rows are the array's columns (16 floats: whole lines).
 *
 * Sound where every use of the array is an element, a[i][j], reached with
 * both subscripts, i a local index component that is below the array's
 * rows and j one below its columns, and the element is assigned, changed
 * in place (op=, ++, --) or read as a value: nothing takes its address or
 * binds a reference to it, so no pointer arithmetic or aggregate use can
 * see where an element lives. The prelude's transposed<T, R, C> keeps
 * a[i][j] at m[j][i]; everything else about the kernel is unchanged. */

/* The node above n, skipping parentheses (and implicit casts too when
 * casts is set): libclang shows an implicit cast as an UnexposedExpr. */
static int up(const amp__loops_ctx *k, int n, bool casts)
{
    int p = k->n[n].parent;
    while (p >= 0 && (k->n[p].kind == AMP__CX_ParenExpr || (casts && k->n[p].kind == AMP__CX_UnexposedExpr)))
        p = k->n[p].parent;
    return p;
}

/* The rank-2 array of an arithmetic type that variable vi is: *rows, *cols
 * and the element's bytes; false for anything else. */
static bool rank2_arithmetic(amp__loops_ctx *k, int vi, long long *rows, long long *cols, long long *elem)
{
    const amp__clang *cx = k->cx;
    amp__cx_type t = cx->clang_getCanonicalType(cx->clang_getCursorType(k->n[k->v[vi].node].c));
    if (t.kind != AMP__CXT_ConstantArray) return false;
    amp__cx_type row = cx->clang_getCanonicalType(cx->clang_getArrayElementType(t));
    if (row.kind != AMP__CXT_ConstantArray) return false;
    amp__cx_type e = cx->clang_getCanonicalType(cx->clang_getArrayElementType(row));
    if (e.kind < AMP__CXT_Bool || e.kind > AMP__CXT_LongDouble || cx->clang_isConstQualifiedType(e)) return false;
    long long whole = cx->clang_Type_getSizeOf(t), rb = cx->clang_Type_getSizeOf(row);
    *elem = cx->clang_Type_getSizeOf(e);
    if (whole <= 0 || rb <= 0 || *elem <= 0) return false;
    *rows = whole / rb;
    *cols = rb / *elem;
    return true;
}

/* One use of the array: the reference at node ref. Its element node
 * (a[i][j]) and subscripts in *el, *i, *j; *store: assigned or changed in
 * place. false when it is anything but an element used as above. */
static bool element_use(amp__loops_ctx *k, int ref, int *el, int *i, int *j, bool *store)
{
    int a1 = up(k, ref, true);
    if (a1 < 0 || k->n[a1].kind != AMP__CX_ArraySubscriptExpr || amp__loops_strip(k, k->n[a1].first) != ref)
        return false;
    int a2 = up(k, a1, true);
    if (a2 < 0 || k->n[a2].kind != AMP__CX_ArraySubscriptExpr || amp__loops_strip(k, k->n[a2].first) != a1)
        return false;
    if (k->n[a1].macro || k->n[a2].macro) return false;
    *el = a2;
    *i = amp__loops_nth_child(k, a1, 1);
    *j = amp__loops_nth_child(k, a2, 1);
    int q = up(k, a2, false);
    if (q < 0) return false;
    const amp__loops_node *x = &k->n[q];
    if (x->kind == AMP__CX_UnexposedExpr) {
        /* An implicit conversion: read as a value (lvalue to rvalue, then
         * converted), unless it only adds const, which binds a reference. */
        *store = false;
        return !k->cx->clang_isConstQualifiedType(k->cx->clang_getCursorType(x->c));
    }
    if (x->kind == AMP__CX_BinaryOperator || x->kind == AMP__CX_CompoundAssignOperator) {
        unsigned op = amp__loops_binary_op(k, q);
        *store = true;
        return op != ~0u && amp__loops_is_assign_op(k->t, op) && amp__loops_strip(k, x->first) == a2;
    }
    if (x->kind == AMP__CX_UnaryOperator) {
        const char *op = amp__loops_unary_op(k, q);
        *store = true;
        return op && (!strcmp(op, "++") || !strcmp(op, "--"));
    }
    return false;
}

/* Whether every region unit holding one of the array's stores (want set)
 * or loads (want clear) runs interchanged (or, for loads, not). */
static bool regions_agree(amp__loops_ctx *k, int vi, bool stores)
{
    for (int ui = 0; ui < k->nu; ++ui) {
        const amp__loops_unit *u = &k->u[ui];
        if (u->kind != AMP__UNIT_REGION) continue;
        bool holds = false;
        for (int n = 0; n < k->nn && !holds; ++n) {
            int el, i, j;
            bool store;
            if (k->n[n].kind != AMP__CX_DeclRefExpr || k->n[n].var != vi || k->n[n].b < u->b || k->n[n].e > u->e)
                continue;
            holds = element_use(k, n, &el, &i, &j, &store) && store == stores;
        }
        if (holds && amp__loops_region_order_swaps(k, ui) != stores) return false;
    }
    return true;
}

void amp__loops_choose_layouts(amp__loops_ctx *k)
{
    k->ntransposed = 0;
    for (int vi = 0; vi < k->nv; ++vi) k->v[vi].transposed = false;
    const int rank = k->dims[2] > 0 ? 3 : (k->dims[1] > 0 ? 2 : 1);
    if (rank < 2) return;
    const int x = rank - 1, y = rank - 2; /* the contiguous dimension and the next one out */
    for (int vi = 0; vi < k->nv; ++vi) {
        amp__loops_var *v = &k->v[vi];
        long long rows, cols, elem;
        if (v->cls != AMP__VAR_TILE_STATIC || !rank2_arithmetic(k, vi, &rows, &cols, &elem)) continue;
        /* The stored rows (the array's columns) must be whole lines, or
         * order.c would not run the writing region interchanged. */
        if (rows * elem % 64 != 0) continue;
        int stores = 0, loads = 0;
        bool ok = true;
        for (int n = 0; n < k->nn && ok; ++n) {
            if (k->n[n].kind != AMP__CX_DeclRefExpr || k->n[n].var != vi) continue;
            int el, i, j;
            bool store;
            if (!element_use(k, n, &el, &i, &j, &store)) {
                ok = false;
                break;
            }
            int di = amp__loops_local_dim(k, i), dj = amp__loops_local_dim(k, j);
            /* Stores along the tile's rows (a[ly][lx]), loads down its
             * columns (a[lx][ly]), each subscript within its bound. */
            if (store) ok = di == y && dj == x;
            else ok = di == x && dj == y;
            ok = ok && di >= 0 && dj >= 0 && k->dims[di] <= rows && k->dims[dj] <= cols;
            stores += store;
            loads += !store;
        }
        if (!ok || stores == 0 || loads == 0) continue;
        v->transposed = true;
        /* Worth it only where the writing region then runs interchanged
         * and the reading one keeps its order. */
        if (!regions_agree(k, vi, true) || !regions_agree(k, vi, false)) {
            v->transposed = false;
            continue;
        }
        k->ntransposed++;
    }
}
