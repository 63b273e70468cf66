/* jumps.c — the loop transformation's jump checks: a return, break or continue that would leave a region (and goto) keeps a kernel on fibers unless it is uniform, and then it moves to the outer control flow together with uniform updates of structure-level variables (promotion). */
#include "loops.h"

#include <string.h>

/* A statement that can move to the outer flow when uniform: `return;`,
 * `break;`, `continue;`, `if (cond) <one of those>` (cond, else -1), or an
 * update of a variable declared at structure level (`v = e`, `v op= e`,
 * `++v`: target is its index). AMP__JUMP_NONE otherwise. */
int amp__loops_jump_shape(const amp__loops_ctx *k, int s, int *cond, int *target)
{
    *cond = -1;
    *target = -1;
    const amp__loops_node *x = &k->n[s];
    if (x->macro) return AMP__JUMP_NONE;
    switch (x->kind) {
    case AMP__CX_ReturnStmt: return x->first < 0 ? AMP__JUMP_RETURN : AMP__JUMP_NONE;
    case AMP__CX_BreakStmt: return AMP__JUMP_BREAK;
    case AMP__CX_ContinueStmt: return AMP__JUMP_CONTINUE;
    case AMP__CX_IfStmt: {
        int c = x->first, th = c >= 0 ? k->n[c].next : -1;
        if (c < 0 || th < 0 || k->n[th].next >= 0 || k->n[c].kind == AMP__CX_DeclStmt ||
            k->n[c].kind == AMP__CX_VarDecl || k->n[c].barrier)
            return AMP__JUMP_NONE;
        if (k->n[th].kind == AMP__CX_CompoundStmt) {
            th = k->n[th].first;
            if (th < 0 || k->n[th].next >= 0) return AMP__JUMP_NONE;
        }
        int c2, t2;
        int j = amp__loops_jump_shape(k, th, &c2, &t2);
        if (j == AMP__JUMP_NONE || j == AMP__JUMP_UPDATE || c2 >= 0) return AMP__JUMP_NONE;
        *cond = c;
        return j;
    }
    default: {
        int e = amp__loops_strip(k, s);
        if (e < 0) return AMP__JUMP_NONE;
        int kind = k->n[e].kind;
        bool upd = false;
        if (kind == AMP__CX_CompoundAssignOperator) upd = true;
        else if (kind == AMP__CX_BinaryOperator) {
            unsigned op = amp__loops_binary_op(k, e);
            upd = op != ~0u && amp__loops_tok_is(k->t, op, "=");
        } else if (kind == AMP__CX_UnaryOperator) {
            const char *op = amp__loops_unary_op(k, e);
            upd = op && (!strcmp(op, "++") || !strcmp(op, "--"));
        }
        if (!upd) return AMP__JUMP_NONE;
        int t = amp__loops_strip(k, k->n[e].first);
        if (t < 0 || k->n[t].kind != AMP__CX_DeclRefExpr || k->n[t].var < 0 || !k->v[k->n[t].var].structure)
            return AMP__JUMP_NONE;
        *target = k->n[t].var;
        return AMP__JUMP_UPDATE;
    }
    }
}

/* The keyword of a jump shape. */
const char *amp__loops_jump_word(int shape)
{
    return shape == AMP__JUMP_RETURN ? "return" : shape == AMP__JUMP_BREAK ? "break" : "continue";
}

/* Break, continue or return inside a region that leaves it. A region
 * statement that is itself such a jump (jump_shape) is only marked a
 * candidate: it moves to the outer flow when its condition is uniform. */
void amp__loops_check_jumps(amp__loops_ctx *k, int root, bool final)
{
    int cj, tj;
    int shape = amp__loops_jump_shape(k, root, &cj, &tj);
    if (shape == AMP__JUMP_RETURN || shape == AMP__JUMP_BREAK || shape == AMP__JUMP_CONTINUE) {
        if (!(shape == AMP__JUMP_RETURN && final)) {
            k->n[root].candidate = true;
            return;
        }
    }
    int end = k->nn;
    for (int i = root; i < end; ++i) {
        if (!amp__loops_inside(k, i, root)) continue;
        int kind = k->n[i].kind;
        if (kind == AMP__CX_GotoStmt || kind == AMP__CX_LabelStmt || kind == AMP__CX_IndirectGotoStmt) {
            amp__loops_fallback(k, "goto or a label in a kernel with barriers");
            return;
        }
        if (kind != AMP__CX_BreakStmt && kind != AMP__CX_ContinueStmt && kind != AMP__CX_ReturnStmt) continue;
        bool contained = false;
        for (int p = k->n[i].parent; p >= 0; p = k->n[p].parent) {
            int pk = k->n[p].kind;
            if (pk == AMP__CX_LambdaExpr) {
                contained = true;
                break;
            }
            if (kind != AMP__CX_ReturnStmt &&
                (pk == AMP__CX_ForStmt || pk == AMP__CX_WhileStmt || pk == AMP__CX_DoStmt ||
                 pk == AMP__CX_CXXForRangeStmt || (kind == AMP__CX_BreakStmt && pk == AMP__CX_SwitchStmt))) {
                contained = true;
                break;
            }
            if (p == root) break;
        }
        if (contained) continue;
        if (kind == AMP__CX_ReturnStmt) {
            if (!final) {
                amp__loops_fallback(k, "a return before a later barrier");
                return;
            }
            if (k->n[i].first >= 0 || k->n[i].macro) {
                amp__loops_fallback(k, "a return with a value or from a macro");
                return;
            }
            continue;
        }
        amp__loops_fallback(k, "a break or continue that crosses a barrier");
        return;
    }
}

/* ----------------------------------------------------------- promotion */

/* A statement directly in a compound the plan splits. */
static bool at_structure_level(const amp__loops_ctx *k, int s)
{
    int p = k->n[s].parent;
    return p >= 0 && k->n[p].kind == AMP__CX_CompoundStmt && k->n[p].barrier;
}

/* Mark the jumps and updates that can move to the outer flow: a jump
 * planning could not leave in a region, under a uniform condition; every
 * structure-level update of a variable whose initialiser and updates are all
 * uniform (it then becomes uniform itself). Returns whether any was marked;
 * a jump under a condition that is not uniform keeps the kernel on fibers. */
bool amp__loops_promote(amp__loops_ctx *k)
{
    bool any = false;
    for (int i = 0; i < k->nn; ++i) {
        if (!k->n[i].candidate) continue;
        int cond, target;
        int shape = amp__loops_jump_shape(k, i, &cond, &target);
        if (cond >= 0 && amp__loops_purity(k, cond, -1) != AMP__PURE_UNIFORM) {
            amp__loops_fallback(k, "a %s before a later barrier, under a condition that differs between work-items",
                                amp__loops_jump_word(shape));
            return false;
        }
        k->n[i].promoted = true;
        any = true;
    }
    for (int vi = 0; vi < k->nv; ++vi) {
        amp__loops_var *v = &k->v[vi];
        if (!v->structure || !v->modified || !v->mod_outside_inc || v->is_param || v->is_ref || v->is_array ||
            v->addr_taken || v->nmods > 16)
            continue;
        /* alone in its declaration (a uniform declaration moves whole) */
        int members = 0;
        for (int c = k->n[v->decl].first; c >= 0; c = k->n[c].next) members += k->n[c].kind == AMP__CX_VarDecl;
        int init = amp__loops_var_init(k, vi);
        if (members != 1 || init < 0 || amp__loops_purity(k, init, -1) != AMP__PURE_UNIFORM) continue;
        int stmts[16], ns = 0;
        bool ok = true;
        for (int m = 0; m < v->nmods && ok; ++m) {
            int site = v->mods[m];
            if (v->inc >= 0 && amp__loops_inside(k, site, v->inc)) continue;
            int st = site;
            while (k->n[st].parent >= 0 && (k->n[k->n[st].parent].kind == AMP__CX_UnexposedExpr ||
                                            k->n[k->n[st].parent].kind == AMP__CX_ParenExpr))
                st = k->n[st].parent;
            int c, t;
            if (!at_structure_level(k, st) || amp__loops_jump_shape(k, st, &c, &t) != AMP__JUMP_UPDATE || t != vi ||
                amp__loops_strip(k, st) != site || amp__loops_purity(k, site, vi) != AMP__PURE_UNIFORM)
                ok = false;
            else
                stmts[ns++] = st;
        }
        if (!ok) continue;
        for (int i = 0; i < ns; ++i) k->n[stmts[i]].promoted = true;
        any |= ns > 0;
    }
    return any;
}
