/* classify.c — the loop transformation's classification: which variables that cross a barrier are uniform, recomputable (remat) or private to a work-item (and whether a slot can hold them), and which conditions and loop parts are uniform. */
#include "loops.h"

#include <string.h>

/* A type declared in the kernel or one that cannot be named (a lambda's,
 * an unnamed one), also behind arrays and a pointer. */
bool amp__loops_type_is_local(amp__loops_ctx *k, amp__cx_type can)
{
    const amp__clang *cx = k->cx;
    amp__cx_type el = can;
    while (el.kind == AMP__CXT_ConstantArray) el = cx->clang_getCanonicalType(cx->clang_getArrayElementType(el));
    if (el.kind == AMP__CXT_Pointer) el = cx->clang_getCanonicalType(cx->clang_getPointeeType(el));
    if (el.kind != AMP__CXT_Record && el.kind != AMP__CXT_Enum) return false;
    amp__cx_cursor d = cx->clang_getTypeDeclaration(el);
    if (amp__loops_cursor_null(cx, d)) return true;
    unsigned b, e;
    bool in_main;
    amp__loops_cursor_span(k->t, d, &b, &e, &in_main);
    if (in_main && b >= k->n[k->body].b && b < k->n[k->body].e) return true;
    /* lambdas and unnamed types cannot be named */
    char spell[256];
    amp__clang_text(cx, cx->clang_getTypeSpelling(el), spell, sizeof spell);
    return strstr(spell, "lambda") || strstr(spell, "anonymous") || strstr(spell, "unnamed");
}

/* Types a context slot can hold by memcpy: scalars, pointers, enums, arrays
 * of them, PODs, and the prelude's index/extent/array_view types. */
static bool type_copyable(amp__loops_ctx *k, int n)
{
    const amp__clang *cx = k->cx;
    amp__cx_type can = cx->clang_getCanonicalType(cx->clang_getCursorType(k->n[n].c));
    while (can.kind == AMP__CXT_ConstantArray) can = cx->clang_getCanonicalType(cx->clang_getArrayElementType(can));
    if (cx->clang_isPODType(can)) return true;
    if (can.kind != AMP__CXT_Record) return false;
    char spell[256];
    amp__clang_text(cx, cx->clang_getTypeSpelling(can), spell, sizeof spell);
    return !strncmp(spell, "amp::index<", 11) || !strncmp(spell, "amp::extent<", 12) ||
           !strncmp(spell, "amp::array_view<", 16) || !strncmp(spell, "amp::tiled_index<", 17) ||
           !strncmp(spell, "const amp::index<", 17) || !strncmp(spell, "const amp::extent<", 18) ||
           !strncmp(spell, "const amp::array_view<", 22);
}

static int unit_of_offset(const amp__loops_ctx *k, unsigned off)
{
    /* innermost (latest-starting) unit containing off */
    int best = -1;
    for (int i = 0; i < k->nu; ++i)
        if (off >= k->u[i].b && off < k->u[i].e && (best < 0 || k->u[i].b >= k->u[best].b)) best = i;
    return best;
}

/* Classify the kernel's variables (uniform, remat, private, local to one
 * unit, tile_static) and its units' conditions and loop parts (uniform or
 * per work-item), or say why it stays on fibers. */
/* Every reference to a variable: what it does to it, and whether a
 * structure-level variable is used outside its own unit. */
static void classify_refs(amp__loops_ctx *k)
{
    for (int i = 0; i < k->nn; ++i) {
        amp__loops_node *x = &k->n[i];
        if (x->kind != AMP__CX_DeclRefExpr) continue;
        amp__cx_cursor r = k->cx->clang_getCursorReferenced(x->c);
        if (amp__loops_cursor_null(k->cx, r)) continue;
        int vi = amp__loops_var_of_cursor(k, r);
        if (vi < 0) continue;
        x->var = vi;
        amp__loops_var *v = &k->v[vi];
        amp__loops_ref_effect(k, v, i);
        if (v->structure) {
            int u = unit_of_offset(k, x->b);
            if (u != v->unit) v->cross = true;
        }
    }
}

/* Parameters other than the tiled index must stay unmodified (they are
 * const in the loop version). */
static void classify_params(amp__loops_ctx *k)
{
    for (int i = 0; i < k->nv; ++i) {
        amp__loops_var *v = &k->v[i];
        if (v->is_param) {
            v->cls = AMP__VAR_PARAM;
            if (v->is_tidx && (v->modified || v->addr_taken))
                amp__loops_fallback(k, "the tiled_index parameter is modified");
            else if (!v->is_tidx && v->modified) amp__loops_fallback(k, "parameter %s is modified", v->name);
        }
    }
}

/* Whether recomputing variable wi's initialiser (node init) in a later
 * region gives the value it was declared with: no variable it reads may
 * change between its declaration and the end of its scope (a uniform
 * stride the outer flow doubles, a while loop's promoted counter; a for
 * loop's increment is outside a body's scope), and no variable of the
 * kernel declared there may have the name of something it reads (the
 * text, copied into a region in that variable's scope, would read it). */
static bool remat_keeps_value(amp__loops_ctx *k, int wi, int init)
{
    int sc = k->n[k->v[wi].node].parent;
    if (sc >= 0 && k->n[sc].kind == AMP__CX_DeclStmt) sc = k->n[sc].parent;
    if (sc < 0) return false;
    unsigned from = k->n[k->v[wi].node].e, to = k->n[sc].e;
    for (int i = init; i < k->nn && amp__loops_inside(k, i, init); ++i) {
        const amp__loops_node *x = &k->n[i];
        if (x->kind != AMP__CX_DeclRefExpr) continue;
        char name[128];
        amp__loops_cursor_name(k->cx, k->cx->clang_getCursorReferenced(x->c), name, sizeof name);
        for (int j = 0; j < k->nv; ++j)
            if (j != x->var && !strcmp(k->v[j].name, name) && k->n[k->v[j].node].b >= from &&
                k->n[k->v[j].node].b < to)
                return false;
        if (x->var < 0 || !k->v[x->var].modified) continue;
        const amp__loops_var *u = &k->v[x->var];
        if (u->nmods > 16) return false;
        for (int q = 0; q < u->nmods; ++q)
            if (k->n[u->mods[q]].b >= from && k->n[u->mods[q]].b < to) return false;
    }
    return true;
}

/* Structure variables in declaration order: each sees the classes of
 * those before it. All variables of one declaration share a class. */
static void classify_vars(amp__loops_ctx *k)
{
    for (int i = 0; i < k->nv && !k->why[0]; ++i) {
        amp__loops_var *v = &k->v[i];
        if (v->is_param || v->cls != AMP__VAR_LOCAL) continue;
        amp__cx_cursor c = k->n[v->node].c;
        if (k->cx->clang_getCursorTLSKind(c) != AMP__CXTLS_None) {
            v->cls = AMP__VAR_TILE_STATIC;
            continue;
        }
        if (k->cx->clang_Cursor_getStorageClass(c) == AMP__CXSC_Static) {
            amp__loops_fallback(k, "static variable %s in a kernel with barriers", v->name);
            return;
        }
        if (!v->structure) continue;
        /* the whole declaration (variables only one region uses may still be
         * needed as the uniform or remat inputs of others) */
        int d = v->decl;
        int members[64], nm = 0;
        for (int c2 = k->n[d].first; c2 >= 0 && nm < 64; c2 = k->n[c2].next)
            if (k->n[c2].kind == AMP__CX_VarDecl && k->n[c2].var >= 0) members[nm++] = k->n[c2].var;
        bool uni = true, remat = true;
        for (int m = 0; m < nm; ++m) {
            amp__loops_var *w = &k->v[members[m]];
            /* Each access of a volatile is the program's: a uniform or remat
             * copy (const auto drops the qualifier) would let the compiler
             * read it once, and even a private copy changes what is read
             * when. Fibers run it as written. */
            if (w->is_volatile && w->cross) {
                amp__loops_fallback(k, "volatile %s lives across a barrier", w->name);
                return;
            }
            int init = amp__loops_var_init(k, members[m]);
            w->has_init = init >= 0 && !w->is_array;
            if (w->is_ref || w->is_array || !w->has_init || w->addr_taken) uni = remat = false;
            if (!uni && !remat) break;
            int p = amp__loops_purity(k, init, -1);
            if (w->modified) {
                /* updated only by its own loop's increment, or by updates that
                 * moved to the outer flow, each a uniform expression */
                remat = false;
                if (w->mod_outside_inc || w->nmods > 16) uni = false;
                for (int q = 0; uni && q < w->nmods; ++q) {
                    int site = w->mods[q];
                    if (w->inc >= 0 && amp__loops_inside(k, site, w->inc)) {
                        if (amp__loops_purity(k, w->inc, members[m]) != AMP__PURE_UNIFORM) uni = false;
                    } else if (!amp__loops_promoted_update_of(k, site, members[m]) ||
                               amp__loops_purity(k, site, members[m]) != AMP__PURE_UNIFORM) {
                        uni = false;
                    }
                }
            }
            if (p < AMP__PURE_UNIFORM) uni = false;
            if (p < AMP__PURE_REMAT || (remat && !remat_keeps_value(k, members[m], init))) remat = false;
        }
        int cls = uni ? AMP__VAR_UNIFORM : remat ? AMP__VAR_REMAT : AMP__VAR_PRIVATE;
        for (int m = 0; m < nm; ++m) {
            amp__loops_var *w = &k->v[members[m]];
            w->cls = cls;
            if (cls != AMP__VAR_PRIVATE) continue;
            if (!w->cross) { w->cls = AMP__VAR_LOCAL; continue; }
            if (w->is_ref) {
                amp__loops_fallback(k, "reference %s lives across a barrier", w->name);
                return;
            }
            if (w->addr_taken) {
                amp__loops_fallback(k, "the address of %s is taken and it lives across a barrier", w->name);
                return;
            }
            amp__cx_type can = k->cx->clang_getCanonicalType(k->cx->clang_getCursorType(k->n[w->node].c));
            if (amp__loops_type_is_local(k, can)) {
                amp__loops_fallback(k, "%s, of a type that cannot be named outside the kernel, lives across a barrier",
                                    w->name);
                return;
            }
            if (!type_copyable(k, w->node)) {
                amp__loops_fallback(k, "%s, of a non-trivial type, lives across a barrier", w->name);
                return;
            }
            if (w->size <= 0) {
                amp__loops_fallback(k, "%s has no size", w->name);
                return;
            }
        }
    }
}

/* Which conditions and loop parts are uniform. */
static void classify_units(amp__loops_ctx *k)
{
    for (int i = 0; i < k->nu && !k->why[0]; ++i) {
        amp__loops_unit *u = &k->u[i];
        if (u->kind == AMP__UNIT_REGION) continue;
        if (u->kind == AMP__UNIT_STMT) {
            int cond, target;
            int shape = amp__loops_jump_shape(k, u->owner, &cond, &target);
            if (shape == AMP__JUMP_UPDATE)
                u->uniform = k->v[target].cls == AMP__VAR_UNIFORM &&
                             amp__loops_purity(k, amp__loops_strip(k, u->owner), target) == AMP__PURE_UNIFORM;
            else
                u->uniform = cond < 0 || amp__loops_purity(k, cond, -1) == AMP__PURE_UNIFORM;
            if (!u->uniform && shape != AMP__JUMP_UPDATE)
                amp__loops_fallback(k, "a %s before a later barrier, under a condition that differs between work-items",
                                    amp__loops_jump_word(shape));
            continue;
        }
        int s = u->owner;
        int node_id = -1;
        if (k->n[s].kind == AMP__CX_ForStmt) {
            int init, cond, inc, body;
            unsigned lp, rp, s1, s2;
            amp__loops_for_parts(k, s, &init, &cond, &inc, &body, &lp, &rp, &s1, &s2);
            node_id = u->kind == AMP__UNIT_INIT ? init : u->kind == AMP__UNIT_COND ? cond : inc;
        } else if (k->n[s].kind == AMP__CX_DoStmt) {
            node_id = k->n[k->n[s].first].next;
        } else {
            node_id = k->n[s].first;
        }
        if (u->kind == AMP__UNIT_INIT) {
            if (k->n[node_id].kind == AMP__CX_DeclStmt) {
                bool all = true;
                for (int d = k->n[node_id].first; d >= 0; d = k->n[d].next)
                    if (k->n[d].kind == AMP__CX_VarDecl && k->n[d].var >= 0 &&
                        k->v[k->n[d].var].cls != AMP__VAR_UNIFORM)
                        all = false;
                u->uniform = all;
            } else {
                u->uniform = false; /* an expression: runs per work-item */
            }
        } else if (u->kind == AMP__UNIT_INC) {
            /* uniform when it only updates uniform loop counters */
            int self = -1;
            int o = amp__loops_strip(k, node_id);
            if (o >= 0 && (k->n[o].kind == AMP__CX_UnaryOperator || k->n[o].kind == AMP__CX_CompoundAssignOperator ||
                           k->n[o].kind == AMP__CX_BinaryOperator)) {
                int a = amp__loops_strip(k, k->n[o].first);
                if (a >= 0 && k->n[a].kind == AMP__CX_DeclRefExpr && k->n[a].var >= 0 &&
                    k->v[k->n[a].var].cls == AMP__VAR_UNIFORM)
                    self = k->n[a].var;
            }
            u->uniform = self >= 0 && amp__loops_purity(k, node_id, self) == AMP__PURE_UNIFORM;
        } else {
            u->uniform = amp__loops_purity(k, node_id, -1) == AMP__PURE_UNIFORM;
        }
    }
}

/* A uniform variable changes only in the outer flow: its loop's
 * increment there, or updates that moved there. */
static void check_uniform_counters(amp__loops_ctx *k)
{
    for (int i = 0; i < k->nv && !k->why[0]; ++i) {
        amp__loops_var *v = &k->v[i];
        if (v->cls != AMP__VAR_UNIFORM || !v->modified) continue;
        bool in_inc = false;
        for (int q = 0; q < v->nmods && q < 16; ++q)
            if (v->inc >= 0 && amp__loops_inside(k, v->mods[q], v->inc)) in_inc = true;
        if (!in_inc) continue;
        bool ok = false;
        for (int j = 0; j < k->nu; ++j)
            if (k->u[j].kind == AMP__UNIT_INC && k->u[j].owner == v->loop && k->u[j].uniform) ok = true;
        if (!ok) amp__loops_fallback(k, "loop counter %s changes per work-item around a barrier", v->name);
    }
}

void amp__loops_classify(amp__loops_ctx *k)
{
    classify_refs(k);
    classify_params(k);
    classify_vars(k);
    classify_units(k);
    check_uniform_counters(k);
}
