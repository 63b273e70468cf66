/* interchange.c — the loop transformation's choice of loops to interchange with the work-item loop: a grid-stride loop inside a region (each work-item starting at its own index, all stepping by one uniform stride) runs in lockstep across the tile's work-items, so that consecutive work-items' accesses of one step are neighbours in memory. */
#include "loops.h"

#include <string.h>

/* Why the interchange is sound, and what the checks below guard:
 *
 * Between two barriers the work-items of a tile are unordered: a GPU runs
 * them in any interleaving, so a kernel whose result depended on the order
 * in which two work-items' statements run there has a data race (undefined
 * in C++ AMP and HIP) unless they communicate through atomics. Running the
 * loop as "step 0 of every work-item, then step 1 of every work-item, ..."
 * is one such interleaving. Each work-item still runs its own init,
 * conditions, bodies and increments in its own order (the same summation
 * order, hence the same bits, but where emit.c's vector fast path lets the
 * compiler fuse a multiply and an add the usual path keeps apart), and one
 * whose condition failed takes no further step (trip counts may differ
 * between work-items).
 *
 * The checks: no barrier (it is inside a region), no atomic, fence, wait or
 * call the analysis cannot see into (a function of the user, a library
 * function other than pure mathematics: they could communicate between
 * work-items or print in an order that would change); no return, goto or
 * label, and no break or continue of the loop itself (they would act on the
 * work-item loop); a condition, an increment `v += e` / `v -= e` of the
 * loop's only variable by a uniform expression that is not a literal (a
 * unit step is a loop over a work-item's own contiguous run, which the
 * current order already walks in memory order), and an initial value that
 * differs between work-items. Whatever else the planning and
 * classification then refuse (a variable whose address is taken and now
 * lives across the split, a jump around it) makes transform.c redo the
 * kernel without any interchange. */

/* Names of library functions that may synchronise or communicate. */
static bool unsafe_name(const char *name)
{
    static const char *const bad[] = {"atomic", "fence", "barrier", "wait", "sync", "shfl", "ballot",
                                      "activemask", "printf", "__any", "__all", "lane"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i)
        if (strstr(name, bad[i])) return true;
    return false;
}

/* A call that cannot order work-items: a function of the library (its
 * prelude) of namespace amp or a method of its index, extent, tiled_index,
 * array or array_view types, not named like a synchronisation; or a pure
 * function of the C library's mathematics; or a lambda defined inside the
 * loop (its body is checked with the loop's). */
static bool call_ok(amp__loops_ctx *k, int call, int loop)
{
    const amp__clang *cx = k->cx;
    amp__cx_cursor f = cx->clang_getCursorReferenced(k->n[call].c);
    if (amp__loops_cursor_null(cx, f)) return false;
    char name[96];
    amp__loops_cursor_name(cx, f, name, sizeof name);
    unsigned off, b, e;
    bool in_main;
    amp__cx_loc fl = cx->clang_getCursorLocation(f);
    amp__loops_loc_offset(k->t, fl, &off, &in_main);
    int fk = cx->clang_getCursorKind(f);
    if (in_main && off >= k->t->user_start) {
        /* a lambda's call operator, the lambda written inside the loop */
        amp__loops_cursor_span(k->t, f, &b, &e, NULL);
        return fk == AMP__CX_CXXMethod && b >= k->n[loop].b && e <= k->n[loop].e;
    }
    if (!in_main) {
        if (!cx->clang_Location_isInSystemHeader(fl)) return false;
        static const char *const ok[] = {"abs",   "labs",  "fabs",  "fabsf", "sqrt",  "sqrtf", "floor",
                                         "floorf", "ceil", "ceilf", "fmin",  "fminf", "fmax",  "fmaxf",
                                         "exp",   "expf",  "log",   "logf",  "log2",  "log2f", "pow",
                                         "powf",  "sin",   "sinf",  "cos",   "cosf",  "trunc", "truncf",
                                         "round", "roundf", "fma", "fmaf", "min", "max"};
        for (size_t i = 0; i < sizeof ok / sizeof ok[0]; ++i)
            if (!strcmp(name, ok[i])) return true;
        return false;
    }
    if (unsafe_name(name)) return false;
    amp__cx_cursor par = cx->clang_getCursorSemanticParent(f);
    if (fk == AMP__CX_CXXMethod || fk == AMP__CX_Constructor || fk == AMP__CX_ConversionFunction ||
        fk == AMP__CX_Destructor) {
        static const char *const cls[] = {"index", "extent", "tiled_index", "array", "array_view"};
        for (size_t i = 0; i < sizeof cls / sizeof cls[0]; ++i)
            if (amp__loops_is_amp_class(k, par, cls[i])) return true;
        return false;
    }
    if (fk == AMP__CX_FunctionDecl) {
        char ns[32];
        amp__loops_cursor_name(cx, par, ns, sizeof ns);
        if (!strcmp(ns, "amp")) return true;
        if (!strcmp(ns, "cpu") && !strcmp(name, "geometry")) return true; /* threadIdx and friends */
    }
    return false;
}

/* Nothing in the loop (header and body) that the interchange could change
 * the meaning of. */
static bool contents_ok(amp__loops_ctx *k, int loop)
{
    for (int i = loop + 1; i < k->nn && amp__loops_inside(k, i, loop); ++i) {
        amp__loops_node *x = &k->n[i];
        switch (x->kind) {
        case AMP__CX_GotoStmt: case AMP__CX_IndirectGotoStmt: case AMP__CX_LabelStmt: case AMP__CX_AsmStmt:
        case AMP__CX_CXXTryStmt:
            return false;
        case AMP__CX_CallExpr:
            if (!call_ok(k, i, loop)) return false;
            break;
        case AMP__CX_VarDecl:
            if (k->cx->clang_getCursorTLSKind(x->c) != AMP__CXTLS_None ||
                k->cx->clang_Cursor_getStorageClass(x->c) == AMP__CXSC_Static)
                return false;
            break;
        case AMP__CX_ReturnStmt: case AMP__CX_BreakStmt: case AMP__CX_ContinueStmt: {
            /* only inside a lambda, or (break, continue) a loop or switch
             * nested in this one */
            bool contained = false;
            for (int p = x->parent; p >= 0 && p != loop; p = k->n[p].parent) {
                int pk = k->n[p].kind;
                if (pk == AMP__CX_LambdaExpr ||
                    (x->kind != AMP__CX_ReturnStmt &&
                     (pk == AMP__CX_ForStmt || pk == AMP__CX_WhileStmt || pk == AMP__CX_DoStmt ||
                      pk == AMP__CX_CXXForRangeStmt || (x->kind == AMP__CX_BreakStmt && pk == AMP__CX_SwitchStmt)))) {
                    contained = true;
                    break;
                }
            }
            if (!contained) return false;
            break;
        }
        default:
            break;
        }
    }
    return true;
}

/* What the lockstep emission cannot keep as the loop had it, seen before
 * the split (found by a review against the fibers path): a local of a
 * class type with a user destructor or constructor, whose hidden calls (an
 * atomic, a print) would run in another order; the compiler's atomic
 * builtins, which libclang does not show as calls. What depends on the
 * classes after the split: amp__loops_interchange_sound. */
static bool lockstep_keeps_meaning(amp__loops_ctx *k, int loop)
{
    const amp__loops_node *L = &k->n[loop];
    for (int vi = 0; vi < k->nv; ++vi) {
        const amp__loops_var *v = &k->v[vi];
        if (v->node < 0 || v->is_ref || !amp__loops_inside(k, v->node, loop)) continue;
        amp__cx_type t = k->cx->clang_getCanonicalType(k->cx->clang_getCursorType(k->n[v->node].c));
        if (t.kind == AMP__CXT_Record && !k->cx->clang_isPODType(t)) return false;
    }
    static const char *const builtins[] = {"__atomic", "__c11_atomic", "__sync_", NULL};
    for (size_t b = 0; builtins[b]; ++b) {
        size_t n = strlen(builtins[b]);
        for (unsigned at = L->b; at + n <= L->e; ++at)
            if (!memcmp(k->t->src + at, builtins[b], n)) return false;
    }
    return true;
}

bool amp__loops_interchange_sound(amp__loops_ctx *k)
{
    for (int i = 0; i < k->nn; ++i) {
        if (!k->n[i].interchange) continue;
        for (int vi = 0; vi < k->nv; ++vi) {
            const amp__loops_var *v = &k->v[vi];
            if (v->node < 0) continue;
            bool inside = amp__loops_inside(k, v->node, i);
            /* Hoisted to the round, ahead of any work-item's condition: a
             * loop that takes no step would still run it (a division the
             * loop guards). */
            if (inside && (v->cls == AMP__VAR_UNIFORM || v->cls == AMP__VAR_REMAT)) {
                amp__loops_fallback(k, "a lockstep loop declares '%s', which would be evaluated ahead of its steps",
                                    v->name);
                return false;
            }
            /* The step's copy of a work-item's array would be a pointer. */
            if (!inside && v->is_array && v->cls == AMP__VAR_PRIVATE)
                for (int r = i + 1; r < k->nn && amp__loops_inside(k, r, i); ++r)
                    if (k->n[r].kind == AMP__CX_DeclRefExpr && k->n[r].var == vi) {
                        amp__loops_fallback(k, "a lockstep loop uses the work-item's array '%s'", v->name);
                        return false;
                    }
        }
    }
    return true;
}

/* The loop's only variable (declared by its init), or -1. */
static int loop_var(amp__loops_ctx *k, int init)
{
    if (init < 0 || k->n[init].kind != AMP__CX_DeclStmt || k->n[init].macro) return -1;
    int d = k->n[init].first;
    if (d < 0 || k->n[d].next >= 0 || k->n[d].kind != AMP__CX_VarDecl || k->n[d].var < 0) return -1;
    amp__loops_var *v = &k->v[k->n[d].var];
    if (v->is_ref || v->is_array || v->addr_taken) return -1;
    return k->n[d].var;
}

/* `v += e` or `v -= e`, e uniform and not a literal. */
static bool strided_inc(amp__loops_ctx *k, int inc, int vi)
{
    int o = amp__loops_strip(k, inc);
    if (o < 0 || k->n[o].kind != AMP__CX_CompoundAssignOperator) return false;
    unsigned op = amp__loops_binary_op(k, o);
    if (op == ~0u || !(amp__loops_tok_is(k->t, op, "+=") || amp__loops_tok_is(k->t, op, "-="))) return false;
    int lhs = amp__loops_strip(k, k->n[o].first);
    int rhs = lhs >= 0 ? k->n[k->n[o].first].next : -1;
    if (lhs < 0 || rhs < 0 || k->n[lhs].kind != AMP__CX_DeclRefExpr || k->n[lhs].var != vi) return false;
    int r = amp__loops_strip(k, rhs);
    while (r >= 0 && (k->n[r].kind == AMP__CX_CStyleCastExpr || k->n[r].kind == AMP__CX_CXXStaticCastExpr ||
                      k->n[r].kind == AMP__CX_CXXFunctionalCastExpr || k->n[r].kind == AMP__CX_ParenExpr ||
                      k->n[r].kind == AMP__CX_UnexposedExpr) && k->n[r].first >= 0)
        r = amp__loops_strip(k, k->n[r].first);
    if (r < 0 || k->n[r].kind == AMP__CX_IntegerLiteral || k->n[r].kind == AMP__CX_FloatingLiteral) return false;
    return amp__loops_purity(k, rhs, -1) == AMP__PURE_UNIFORM;
}

int amp__loops_mark_interchange(amp__loops_ctx *k)
{
    int marked = 0;
    for (int i = 0; i < k->nn; ++i) {
        amp__loops_node *x = &k->n[i];
        if (x->kind != AMP__CX_ForStmt || x->barrier || x->macro || !amp__loops_inside(k, i, k->body)) continue;
        bool skip = false;
        for (int p = x->parent; p >= 0 && p != k->body && !skip; p = k->n[p].parent)
            skip = k->n[p].kind == AMP__CX_LambdaExpr || k->n[p].interchange;
        if (skip) continue;
        int init, cond, inc, body;
        unsigned lp, rp, s1 = 0, s2 = 0;
        if (!amp__loops_for_parts(k, i, &init, &cond, &inc, &body, &lp, &rp, &s1, &s2)) continue;
        if (cond < 0 || inc < 0 || k->n[cond].kind == AMP__CX_DeclStmt || k->n[cond].kind == AMP__CX_VarDecl)
            continue;
        int vi = loop_var(k, init);
        if (vi < 0) continue;
        int iv = amp__loops_var_init(k, vi);
        if (iv < 0 || amp__loops_purity(k, iv, -1) == AMP__PURE_UNIFORM) continue;
        if (!strided_inc(k, inc, vi) || !contents_ok(k, i) || !lockstep_keeps_meaning(k, i)) continue;
        x->interchange = true;
        marked++;
    }
    return marked;
}
