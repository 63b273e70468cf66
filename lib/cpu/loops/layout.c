/* layout.c — the layout of a kernel's rank-2 tile_static arrays in its loop version: stored transposed where a transpose through the array (tile[ly][lx] = A[global]; barrier; out = tile[lx][ly], the GPU's padded transpose) then runs along memory in both phases. */
#include "loops.h"

#include <string.h>

/* Why: on the CPU the innermost work-item loop is what the compiler
 * vectorises. In the GPU's padded transpose the first phase writes the
 * array along its rows (a copy of A's rows) and the second reads it down
 * its columns into the output's rows: one element at a time, 16 loads and
 * inserts a vector (GCC 12 and 13), where the seed's kernel, which writes
 * its buffer down the columns and reads its rows, becomes row loads and a
 * transpose in registers: bench_cpu's padded kernel ran at 0.60-0.74 of a
 * blocked OpenMP loop on the H200's host, and at 0.98-1.21 stored
 * transposed, in one call. Stored transposed, the
 * array is the seed's buffer: the first phase writes down its stored
 * columns, which order.c then runs
 * interchanged (the next dimension out innermost, A read down the tile's
 * columns, which the compiler turns into row loads and a transpose in
 * registers), and the second phase reads its stored rows. The padding
 * leaves the rows: the stored rows are the array's columns (16 floats:
 * whole lines), and a pad column becomes one more stored row.
 *
 * Sound where every use of the array is an element, a[i][j], reached with
 * both subscripts, i a local index component that is below the array's
 * rows and j one below its columns, and the element is read as a value,
 * or assigned or changed in place (op=, ++, --) with the result used as a
 * value only: nothing takes an element's address or binds a reference to
 * it, so no pointer arithmetic or aggregate use can see where an element
 * lives. The prelude's transposed<T, R, C> keeps a[i][j] at m[j][i];
 * everything else about the kernel is unchanged. */

/* The node above n, skipping parentheses (and implicit casts too when
 * casts is set: libclang shows an implicit cast as an UnexposedExpr). */
static int up(const amp__loops_ctx *k, int n, bool casts)
{
    int p = k->n[n].parent;
    while (p >= 0 && (k->n[p].kind == AMP__CX_ParenExpr || (casts && k->n[p].kind == AMP__CX_UnexposedExpr)))
        p = k->n[p].parent;
    return p;
}

/* The rank-2 array of an arithmetic type that variable vi is: its *rows
 * and *cols; false for anything else. */
static bool rank2_arithmetic(amp__loops_ctx *k, int vi, long long *rows, long long *cols)
{
    const amp__clang *cx = k->cx;
    amp__cx_type t = cx->clang_getCanonicalType(cx->clang_getCursorType(k->n[k->v[vi].node].c));
    if (t.kind != AMP__CXT_ConstantArray) return false;
    amp__cx_type row = cx->clang_getCanonicalType(cx->clang_getArrayElementType(t));
    if (row.kind != AMP__CXT_ConstantArray) return false;
    amp__cx_type e = cx->clang_getCanonicalType(cx->clang_getArrayElementType(row));
    if (e.kind < AMP__CXT_Bool || e.kind > AMP__CXT_LongDouble || cx->clang_isConstQualifiedType(e)) return false;
    long long whole = cx->clang_Type_getSizeOf(t), rb = cx->clang_Type_getSizeOf(row);
    long long elem = cx->clang_Type_getSizeOf(e);
    if (whole <= 0 || rb <= 0 || elem <= 0) return false;
    *rows = whole / rb;
    *cols = rb / elem;
    return true;
}

/* Whether the expression at node n is used as a value only: an implicit
 * conversion with one operand and an unqualified type (libclang shows an
 * implicit cast as an UnexposedExpr; lvalue-to-rvalue drops the
 * qualifiers, while a cast that adds const or volatile binds a reference,
 * and other UnexposedExprs, such as GNU's a ?: b, have more operands) that
 * does not initialise a reference (a full expression's cleanups, also an
 * UnexposedExpr, keep an assignment's lvalue: int &r = (a[i][j] = T().v)),
 * or a statement's whole expression, whose value is dropped or tested. */
static bool used_as_value(amp__loops_ctx *k, int n)
{
    int q = up(k, n, false);
    if (q < 0) return false;
    const amp__loops_node *x = &k->n[q];
    switch (x->kind) {
    case AMP__CX_UnexposedExpr: {
        if (x->first < 0 || k->n[x->first].next >= 0) return false;
        amp__cx_type t = k->cx->clang_getCursorType(x->c);
        if (k->cx->clang_isConstQualifiedType(t) || k->cx->clang_isVolatileQualifiedType(t)) return false;
        int top = up(k, q, true);
        if (top >= 0 && k->n[top].kind == AMP__CX_VarDecl) {
            amp__cx_type vt = k->cx->clang_getCanonicalType(k->cx->clang_getCursorType(k->n[top].c));
            return vt.kind != AMP__CXT_LValueReference && vt.kind != AMP__CXT_RValueReference;
        }
        return true;
    }
    case AMP__CX_CompoundStmt:
    case AMP__CX_IfStmt:
    case AMP__CX_ForStmt:
    case AMP__CX_WhileStmt:
    case AMP__CX_DoStmt:
    case AMP__CX_SwitchStmt:
    case AMP__CX_CaseStmt:
    case AMP__CX_DefaultStmt:
    case AMP__CX_LabelStmt: return true;
    default: return false;
    }
}

/* One use of the array: the reference at node ref. Its subscripts in *i,
 * *j; *store: assigned or changed in place. false when it is anything but
 * an element (a[i][j]) read as a value, or assigned or changed in place
 * with the result, an lvalue of the element in C++, used as a value only. */
static bool element_use(amp__loops_ctx *k, int ref, int *i, int *j, bool *store)
{
    int a1 = up(k, ref, true);
    if (a1 < 0 || k->n[a1].kind != AMP__CX_ArraySubscriptExpr || amp__loops_strip(k, k->n[a1].first) != ref)
        return false;
    int a2 = up(k, a1, true);
    if (a2 < 0 || k->n[a2].kind != AMP__CX_ArraySubscriptExpr || amp__loops_strip(k, k->n[a2].first) != a1)
        return false;
    if (k->n[a1].macro || k->n[a2].macro) return false;
    *i = amp__loops_nth_child(k, a1, 1);
    *j = amp__loops_nth_child(k, a2, 1);
    *store = false;
    int q = up(k, a2, false);
    if (q < 0) return false;
    const amp__loops_node *x = &k->n[q];
    if (x->kind == AMP__CX_UnexposedExpr) return used_as_value(k, a2);
    if (x->kind == AMP__CX_BinaryOperator || x->kind == AMP__CX_CompoundAssignOperator) {
        unsigned op = amp__loops_binary_op(k, q);
        *store = true;
        return op != ~0u && amp__loops_is_assign_op(k->t, op) && amp__loops_strip(k, x->first) == a2 &&
               used_as_value(k, q);
    }
    if (x->kind == AMP__CX_UnaryOperator) {
        const char *op = amp__loops_unary_op(k, q);
        *store = true;
        return op && (!strcmp(op, "++") || !strcmp(op, "--")) && used_as_value(k, q);
    }
    return false;
}

/* Whether node n runs inside a loop that runs in lockstep across the
 * work-items (interchange.c): emit.c writes those with the usual order. */
static bool in_lockstep(const amp__loops_ctx *k, int n)
{
    for (int p = k->n[n].parent; p >= 0; p = k->n[p].parent)
        if (k->n[p].kind == AMP__CX_ForStmt && k->n[p].interchange) return true;
    return false;
}

/* Whether every region unit holding one of the array's stores runs
 * interchanged and every one holding only loads of it keeps the usual
 * order, by the layouts chosen so far (a region with both fails). */
static bool regions_agree(amp__loops_ctx *k, int vi)
{
    for (int ui = 0; ui < k->nu; ++ui) {
        const amp__loops_unit *u = &k->u[ui];
        if (u->kind != AMP__UNIT_REGION) continue;
        bool stores = false, loads = false;
        for (int n = 0; n < k->nn; ++n) {
            int i, j;
            bool store;
            if (k->n[n].kind != AMP__CX_DeclRefExpr || k->n[n].var != vi || k->n[n].b < u->b || k->n[n].e > u->e ||
                !element_use(k, n, &i, &j, &store))
                continue;
            stores |= store;
            loads |= !store;
        }
        if (stores && loads) return false;
        if ((stores || loads) && amp__loops_region_order_swaps(k, ui) != stores) return false;
    }
    return true;
}

void amp__loops_choose_layouts(amp__loops_ctx *k)
{
    k->ntransposed = 0;
    for (int vi = 0; vi < k->nv; ++vi) k->v[vi].transposed = false;
    const int rank = amp__loops_tile_rank(k);
    if (rank < 2) return;
    const int x = rank - 1, y = rank - 2; /* the contiguous dimension and the next one out */
    for (int vi = 0; vi < k->nv; ++vi) {
        amp__loops_var *v = &k->v[vi];
        long long rows, cols;
        if (v->cls != AMP__VAR_TILE_STATIC || !rank2_arithmetic(k, vi, &rows, &cols)) continue;
        int stores = 0, loads = 0;
        bool ok = true;
        for (int n = 0; n < k->nn && ok; ++n) {
            if (k->n[n].kind != AMP__CX_DeclRefExpr || k->n[n].var != vi) continue;
            int i, j;
            bool store;
            if (!element_use(k, n, &i, &j, &store) || in_lockstep(k, n)) {
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
        if (ok && stores > 0 && loads > 0) v->transposed = true;
    }
    /* Worth it only where each writing region then runs interchanged and
     * each reading one keeps its order, by the final layouts (an array
     * stored transposed adds votes to the regions that write it; its
     * stored rows, the array's columns, must be whole lines to vote: order.c):
     * arrays that fail are taken back until all the rest agree. */
    for (bool again = true; again;) {
        again = false;
        for (int vi = 0; vi < k->nv; ++vi)
            if (k->v[vi].transposed && !regions_agree(k, vi)) {
                k->v[vi].transposed = false;
                again = true;
            }
    }
    for (int vi = 0; vi < k->nv; ++vi) k->ntransposed += k->v[vi].transposed;
}
