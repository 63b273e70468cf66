/* passes.c — the loop transformation of one tiled kernel: reads its parameters, locals and tile shape, runs the passes in order (barriers, plan, classification, promotion and the second plan it needs), sizes its frame, edits the regions' text and has the loop version emitted; or keeps the kernel on fibers with the first reason found. */
#include "loops.h"
#include "../cpu_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Work-item context and hoisted tile_static memory of one loop version may
 * take at most this much stack (the loop runner's stack is sized for it:
 * cpu_run.c); a kernel needing more stays on fibers. */
#define AMP__LOOPS_FRAME_MAX AMP__CPU_LOOP_FRAME_MAX

/* Forget what planning and classification found (not the promotions). */
static void reset_analysis(amp__loops_ctx *k)
{
    for (int i = 0; i < k->nv; ++i) {
        amp__loops_var *v = &k->v[i];
        v->decl = v->unit = v->loop = v->inc = -1;
        v->structure = v->has_init = v->modified = v->addr_taken = v->mod_outside_inc = v->cross = false;
        v->nmods = 0;
        v->cls = AMP__VAR_LOCAL;
    }
    for (int i = 0; i < k->nn; ++i) k->n[i].candidate = false;
    k->nu = 0;
    k->nhoist = 0;
    k->nlockstep = 0;
    k->nfast = 0;
}

/* Plan and classify; then move uniform jumps and updates to the outer flow
 * (which changes the regions) and do both again. False (k->why says why)
 * when the kernel cannot be planned. */
static bool plan_and_classify(amp__loops_ctx *k)
{
    for (int round = 0; round < 2; ++round) {
        if (round) reset_analysis(k);
        amp__loops_plan_seq(k, k->body, true);
        if (k->why[0]) return false;
        amp__loops_classify(k);
        if (k->why[0]) return false;
        if (round || !amp__loops_promote(k)) break;
    }
    return true;
}

/* The tile shape from the spelling of tiled_index<D0, D1, D2>: libclang 14
 * writes every argument, newer ones leave out those at their default (0). */
static bool parse_dims(const char *type, int *dims)
{
    const char *p = strchr(type, '<');
    if (!p) return false;
    dims[0] = dims[1] = dims[2] = 0;
    for (int d = 0; d < 3; ++d) {
        char *end;
        long v = strtol(p + 1, &end, 10);
        if (end == p + 1 || v < 0 || v > 1 << 20) return false;
        dims[d] = (int)v;
        p = end;
        while (*p == ' ') ++p;
        if (*p == '>') return d > 0 || dims[0] > 0;
        if (d == 2 || *p != ',') return false;
    }
    return false;
}

/* Where a variable's name is visible: the statement list, loop or body
 * its declaration sits in (a parameter: the whole kernel, -1). */
static int scope_of(const amp__loops_ctx *k, const amp__loops_var *v)
{
    if (v->is_param) return -1;
    int d = k->n[v->node].parent;
    if (d >= 0 && k->n[d].kind == AMP__CX_DeclStmt) d = k->n[d].parent;
    return d;
}

/* A uniform declaration that hides one of an enclosing scope (`const int
 * n` in a loop over an outer n): the loop version moves it to the outer
 * flow, where the two would meet, so such a kernel stays on fibers (read
 * the classes: after amp__loops_classify). A work-item's own variable
 * hiding another stays in its block and keeps C++'s scoping; names of
 * sibling scopes (two loops' i) hide nothing. */
static bool shadows_a_name(amp__loops_ctx *k)
{
    for (int a = 0; a < k->nv; ++a)
        for (int b = 0; b < k->nv; ++b) {
            const amp__loops_var *outer = &k->v[a], *inner = &k->v[b];
            if (a == b || strcmp(outer->name, inner->name) || !outer->name[0]) continue;
            if (inner->cls != AMP__VAR_UNIFORM && inner->cls != AMP__VAR_REMAT) continue;
            int sc = scope_of(k, outer);
            if (k->n[inner->node].b <= k->n[outer->node].b && !outer->is_param) continue;
            if (sc < 0 || amp__loops_inside(k, inner->node, sc)) {
                amp__loops_fallback(k, "'%s' is declared again inside the scope of another '%s'", inner->name,
                                    outer->name);
                return true;
            }
        }
    return false;
}

/* Whether a reference in [b, e) of the kernel names `name` and means
 * something other than what and the kernel's own variables (those the loop
 * version declares after what, or next to it: a compile error): a
 * declaration moved ahead of that reference would hide what it reads. */
static bool name_read_otherwise(amp__loops_ctx *k, const char *name, amp__cx_cursor what, unsigned b, unsigned e)
{
    const amp__clang *cx = k->cx;
    if (!name[0]) return false;
    for (int i = 0; i < k->nn; ++i) {
        const amp__loops_node *x = &k->n[i];
        if (x->b < b || x->b >= e ||
            (x->kind != AMP__CX_DeclRefExpr && x->kind != AMP__CX_TypeRef && x->kind != AMP__CX_TemplateRef))
            continue;
        amp__cx_cursor r = cx->clang_getCursorReferenced(x->c);
        if (amp__loops_cursor_null(cx, r) || cx->clang_equalCursors(r, what) || amp__loops_var_of_cursor(k, r) >= 0)
            continue;
        char nm[128];
        amp__loops_cursor_name(cx, r, nm, sizeof nm);
        if (!strcmp(nm, name)) return true;
    }
    return false;
}

/* A name a type declaration moved to the kernel's top brings (node n)
 * hides another that [b, e) reads: the kernel stays on fibers. */
static bool type_name_hides(amp__loops_ctx *k, int n, unsigned b, unsigned e)
{
    char nm[128];
    amp__loops_cursor_name(k->cx, k->n[n].c, nm, sizeof nm);
    if (!name_read_otherwise(k, nm, k->n[n].c, b, e)) return false;
    amp__loops_fallback(k, "%s, declared in the kernel and moved to its top, would hide another '%s'", nm, nm);
    return true;
}

/* The loop version moves tile_static arrays and type declarations to its
 * top, and a region's uniform declarations to the region's start: one that
 * would then hide a name (a global, an enumerator, a type) that code it
 * moves past reads keeps the kernel on fibers (read the classes and the
 * plan: after plan_kernel). */
static bool moves_hide_a_name(amp__loops_ctx *k)
{
    unsigned bb = k->n[k->body].b, be = k->n[k->body].e;
    for (int i = 0; i < k->nv; ++i) {
        const amp__loops_var *v = &k->v[i];
        amp__cx_cursor c = k->n[v->node].c;
        if (v->cls == AMP__VAR_TILE_STATIC && name_read_otherwise(k, v->name, c, bb, be)) {
            amp__loops_fallback(k, "tile_static %s, moved to the top of the kernel, would hide another '%s'", v->name,
                                v->name);
            return true;
        }
        if (v->cls == AMP__VAR_UNIFORM && v->loop < 0 && v->unit >= 0 && v->decl >= 0 &&
            name_read_otherwise(k, v->name, c, k->u[v->unit].b, k->n[v->decl].b)) {
            amp__loops_fallback(k, "%s, moved to the start of its region, would hide another '%s'", v->name, v->name);
            return true;
        }
    }
    /* a type declaration: its name, and an enumeration's constants */
    for (int h = 0; h < k->nhoist; ++h)
        for (int d = k->n[k->hoist[h]].first; d >= 0; d = k->n[d].next) {
            if (type_name_hides(k, d, bb, be)) return true;
            if (k->n[d].kind == AMP__CX_EnumDecl)
                for (int c = k->n[d].first; c >= 0; c = k->n[c].next)
                    if (k->n[c].kind == AMP__CX_EnumConstantDecl && type_name_hides(k, c, bb, be)) return true;
        }
    return false;
}

/* The kernel's parameters (the first is its tiled_index), body, tile shape
 * and local variables. false when it stays on fibers or memory ran out. */
static bool read_kernel(amp__loops_ctx *k)
{
    const int fnode = 0; /* the kernel's function (amp__loops_build_tree) */
    k->body = -1;
    k->tidx = -1;
    for (int c = k->n[fnode].first; c >= 0; c = k->n[c].next) {
        if (k->n[c].kind == AMP__CX_ParmDecl) {
            int vi = amp__loops_var_add(k, c);
            if (vi < 0) return false;
            if (k->tidx < 0) {
                k->tidx = vi;
                k->v[vi].is_tidx = true;
            }
        } else if (k->n[c].kind == AMP__CX_CompoundStmt) {
            k->body = c;
        }
    }
    if (k->body < 0 || k->tidx < 0) {
        amp__loops_fallback(k, "no kernel body");
        return false;
    }
    if (!parse_dims(k->v[k->tidx].type, k->dims)) {
        amp__loops_fallback(k, "tile shape %s not understood", k->v[k->tidx].type);
        return false;
    }
    k->threads = k->dims[0] * (k->dims[1] ? k->dims[1] : 1) * (k->dims[2] ? k->dims[2] : 1);
    for (int i = 0; i < k->nn; ++i)
        if (k->n[i].kind == AMP__CX_VarDecl && amp__loops_inside(k, i, k->body) && amp__loops_var_add(k, i) < 0)
            return false;
    return true;
}

/* Barriers, the plan of regions and the classification (twice when jumps
 * or updates were promoted). false when the kernel stays on fibers. */
static bool plan_kernel(amp__loops_ctx *k)
{
    k->why[0] = 0;
    amp__loops_mark_barriers(k);
    char maybe[256];
    snprintf(maybe, sizeof maybe, "%s", k->why);
    k->why[0] = 0;
    /* A call that may reach a barrier only matters where the transformation
     * would put it inside a work-item loop: anywhere, since it is not split. */
    if (maybe[0]) {
        amp__loops_fallback(k, "%s", maybe);
        return false;
    }
    if (!plan_and_classify(k) || shadows_a_name(k)) return false;
    /* Grid-stride loops to run in lockstep (their choice reads the classes
     * just found): split out of their regions, which plans and classifies
     * again (and may promote again). A refusal from here on makes
     * transform.c try the kernel again without them. */
    if (!k->no_interchange && (k->nmarked = amp__loops_mark_interchange(k)) > 0) {
        reset_analysis(k);
        if (!plan_and_classify(k) || shadows_a_name(k) || !amp__loops_interchange_sound(k)) return false;
    }
    for (int i = 0; i < k->nn; ++i)
        if (k->n[i].candidate && !k->n[i].promoted) {
            int c, t;
            int shape = amp__loops_jump_shape(k, i, &c, &t);
            amp__loops_fallback(k, "a %s before a later barrier",
                                shape == AMP__JUMP_RETURN ? "return" : "break or continue that crosses it");
            return false;
        }
    return true;
}

/* Whether a value of type ty may run the user's code when it dies: a
 * class of the user's (not the preludes', not a system header's) that is
 * not POD (its destructor, or a base's or member's, may be the user's).
 * The tree has no call for a destructor. */
static bool user_destructor(amp__loops_ctx *k, amp__cx_type ty)
{
    const amp__clang *cx = k->cx;
    amp__cx_type el = cx->clang_getCanonicalType(ty);
    while (el.kind == AMP__CXT_ConstantArray) el = cx->clang_getCanonicalType(cx->clang_getArrayElementType(el));
    if (el.kind != AMP__CXT_Record || cx->clang_isPODType(el)) return false;
    amp__cx_cursor d = cx->clang_getTypeDeclaration(el);
    if (amp__loops_cursor_null(cx, d)) return true;
    unsigned off;
    bool in_main;
    amp__cx_loc l = cx->clang_getCursorLocation(d);
    amp__loops_loc_offset(k->t, l, &off, &in_main);
    return in_main ? off >= k->t->user_start : !cx->clang_Location_isInSystemHeader(l);
}

/* Work-items that call functions of the user (which may read threadIdx),
 * explicitly or through a destructor, need the current work-item
 * recorded. */
static void find_needs_local(amp__loops_ctx *k)
{
    const amp__clang *cx = k->cx;
    for (int i = 0; i < k->nn && !k->needs_local; ++i) {
        if (user_destructor(k, cx->clang_getCursorType(k->n[i].c))) {
            k->needs_local = true;
            break;
        }
        if (k->n[i].kind != AMP__CX_CallExpr) continue;
        amp__cx_cursor f = cx->clang_getCursorReferenced(k->n[i].c);
        if (amp__loops_cursor_null(cx, f)) continue;
        unsigned off;
        bool in_main;
        amp__cx_loc fl = cx->clang_getCursorLocation(f);
        amp__loops_loc_offset(k->t, fl, &off, &in_main);
        if (in_main && off < k->t->user_start) {
            char nm[32];
            amp__loops_cursor_name(cx, f, nm, sizeof nm);
            if (!strcmp(nm, "geometry")) k->needs_local = true;
            continue;
        }
        if (!in_main && cx->clang_Location_isInSystemHeader(fl)) continue;
        int fk = cx->clang_getCursorKind(f);
        if (fk == AMP__CX_CXXMethod) {
            /* a lambda defined in the body is the body's own code */
            unsigned b, e;
            amp__loops_cursor_span(k->t, f, &b, &e, NULL);
            if (in_main && b >= k->n[k->body].b && b < k->n[k->body].e) continue;
        }
        k->needs_local = true;
    }
}

/* The frame: tile_static and context slots must fit the loop runner's
 * stack. false when they do not. */
static bool check_frame(amp__loops_ctx *k)
{
    long long frame = 0;
    for (int i = 0; i < k->nv; ++i) {
        amp__loops_var *v = &k->v[i];
        if (v->cls == AMP__VAR_TILE_STATIC) {
            if (v->size <= 0) {
                amp__loops_fallback(k, "tile_static %s has no size", v->name);
                return false;
            }
            frame += v->size + 64;
        } else if (v->cls == AMP__VAR_PRIVATE) {
            frame += v->size * k->threads + 64;
        }
    }
    frame += (long long)k->nlockstep * (k->threads + 64); /* a lockstep loop's activity flags */
    if (frame > AMP__LOOPS_FRAME_MAX) {
        amp__loops_fallback(k, "it needs %lld bytes of tile_static and work-item context, more than the loop path's %d",
                            frame, AMP__LOOPS_FRAME_MAX);
        return false;
    }
    return true;
}

/* An edit starts at node d already (one per declaration). */
static bool edited(const amp__loops_ctx *k, int d)
{
    for (int j = 0; j < k->ned; ++j)
        if (k->ed[j].b == k->n[d].b) return true;
    return false;
}

/* Edits inside regions: tile_static and uniform declarations leave them
 * (they are emitted once, in the outer flow), remat declarations become
 * const copies, type declarations are hoisted, and returns in the final
 * region end the work-item. */
static void edit_regions(amp__loops_ctx *k)
{
    const amp__clang *cx = k->cx;
    for (int i = 0; i < k->nv; ++i) {
        amp__loops_var *v = &k->v[i];
        if (v->cls == AMP__VAR_TILE_STATIC) {
            int d = k->n[v->node].parent;
            if (d < 0 || k->n[d].kind != AMP__CX_DeclStmt || k->n[d].macro) {
                amp__loops_fallback(k, "tile_static %s declared in a macro", v->name);
                return;
            }
            for (int c = k->n[d].first; c >= 0; c = k->n[c].next)
                if (k->n[c].kind == AMP__CX_VarDecl && k->n[c].var >= 0 &&
                    k->v[k->n[c].var].cls != AMP__VAR_TILE_STATIC) {
                    amp__loops_fallback(k, "tile_static and other variables in one declaration");
                    return;
                }
            /* tile_static memory starts uninitialised; an initialiser would run
             * once per thread on the fiber path and once per tile here. */
            if (amp__loops_var_init(k, i) >= 0) {
                amp__loops_fallback(k, "tile_static %s has an initialiser", v->name);
                return;
            }
            bool dup = false;
            for (int j = 0; j < i; ++j)
                if (k->v[j].cls == AMP__VAR_TILE_STATIC && k->v[j].node != v->node && !strcmp(k->v[j].name, v->name))
                    dup = true;
            if (dup) {
                amp__loops_fallback(k, "two tile_static variables named %s", v->name);
                return;
            }
            amp__cx_type can = cx->clang_getCanonicalType(cx->clang_getCursorType(k->n[v->node].c));
            if (amp__loops_type_is_local(k, can)) {
                amp__loops_fallback(k, "tile_static %s has a type declared in the kernel", v->name);
                return;
            }
            if (!edited(k, d)) amp__loops_edit_add(k, k->n[d].b, k->n[d].e, "");
        } else if (v->cls == AMP__VAR_UNIFORM && v->loop < 0) {
            int d = v->decl;
            if (!edited(k, d)) amp__loops_edit_add(k, k->n[d].b, k->n[d].e, "");
        } else if (v->cls == AMP__VAR_REMAT && v->loop < 0) {
            int d = v->decl;
            if (edited(k, d)) continue;
            amp__sb s = {0};
            amp__loops_emit_remat_decl(k, d, &s, NULL);
            if (s.oom) k->t->oom = true;
            else amp__loops_edit_add(k, k->n[d].b, k->n[d].e, s.p ? s.p : "");
            free(s.p);
        }
    }
    for (int h = 0; h < k->nhoist; ++h) amp__loops_edit_add(k, k->n[k->hoist[h]].b, k->n[k->hoist[h]].e, "");
    /* returns in the final region end the work-item */
    for (int ui = 0; ui < k->nu; ++ui) {
        amp__loops_unit *u = &k->u[ui];
        if (u->kind != AMP__UNIT_REGION || !u->final) continue;
        for (int i = 0; i < k->nn; ++i) {
            if (k->n[i].kind != AMP__CX_ReturnStmt || k->n[i].b < u->b || k->n[i].b >= u->e) continue;
            bool in_lambda = false;
            for (int p = k->n[i].parent; p >= 0 && p != k->body; p = k->n[p].parent)
                if (k->n[p].kind == AMP__CX_LambdaExpr) in_lambda = true;
            if (in_lambda) continue;
            char g[48];
            snprintf(g, sizeof g, "goto amp__done_%d", ui);
            amp__loops_edit_add(k, k->n[i].b, k->n[i].e, g);
        }
    }
}

void amp__loops_kernel(amp__loops_ctx *k)
{
    amp__loops_build_tree(k);
    if (k->t->oom) return;
    if (!read_kernel(k) || !plan_kernel(k) || moves_hide_a_name(k)) return;
    find_needs_local(k);
    if (!check_frame(k)) return;
    edit_regions(k);
    if (k->t->oom || k->why[0]) return;
    amp__loops_choose_layouts(k);
    amp__loops_choose_tile_order(k);
    amp__loops_emit(k);
}

void amp__loops_kernel_free(amp__loops_ctx *k)
{
    for (int i = 0; i < k->ned; ++i) free(k->ed[i].text);
    free(k->ed);
    free(k->n);
    free(k->v);
    free(k->u);
    free(k->out.p);
}
