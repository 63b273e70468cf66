/* plan.c — the loop transformation's region planning: a kernel body cut into units (regions of code between barriers, and the conditions, loop parts and promoted statements of the control flow around them), or the reason it cannot be. */
#include "loops.h"

#include <string.h>

static int unit_add(amp__loops_ctx *k, int kind, unsigned b, unsigned e, int owner)
{
    if (k->nu == k->cu && !amp__loops_grow(&k->u, &k->cu, sizeof *k->u, 32, &k->t->oom))
        return -1;
    amp__loops_unit *u = &k->u[k->nu];
    memset(u, 0, sizeof *u);
    u->kind = kind;
    u->b = b;
    u->e = e;
    u->owner = owner;
    u->first = u->last = -1;
    return k->nu++;
}

/* The end of statement s including its ';' when the ';' is not the start of
 * the next statement (a null statement) and lies before limit. */
static unsigned stmt_end(const amp__loops_ctx *k, int s, unsigned limit)
{
    const amp__loops_tu *t = k->t;
    unsigned e = k->n[s].e;
    unsigned i = amp__loops_tok_find(t, e);
    if (i < t->ntoks && amp__loops_tok_is(t, i, ";") && t->te[i] <= limit) {
        int nx = k->n[s].next;
        if (!(nx >= 0 && k->n[nx].kind == AMP__CX_NullStmt && k->n[nx].b == t->tb[i])) return t->te[i];
    }
    return e;
}

/* A structure-level statement that must be emitted in the outer flow. */
bool amp__loops_is_structure(const amp__loops_ctx *k, int s) { return k->n[s].barrier || k->n[s].interchange; }

/* For a ForStmt: its init/cond/inc children (or -1), body, and the header's
 * parenthesis offsets. False when the header cannot be read. */
bool amp__loops_for_parts(const amp__loops_ctx *k, int f, int *init, int *cond, int *inc, int *body, unsigned *lp,
                          unsigned *rp, unsigned *s1, unsigned *s2)
{
    const amp__loops_tu *t = k->t;
    unsigned i = amp__loops_tok_find(t, k->n[f].b);
    if (!amp__loops_tok_is(t, i, "for") || !amp__loops_tok_is(t, i + 1, "(")) return false;
    *lp = t->tb[i + 1];
    int depth = 0, semis = 0;
    unsigned j;
    for (j = i + 1; j < t->ntoks && t->tb[j] < k->n[f].e; ++j) {
        if (amp__loops_tok_is(t, j, "(") || amp__loops_tok_is(t, j, "[") || amp__loops_tok_is(t, j, "{")) depth++;
        else if (amp__loops_tok_is(t, j, ")") || amp__loops_tok_is(t, j, "]") || amp__loops_tok_is(t, j, "}")) {
            if (--depth == 0) break;
        } else if (depth == 1 && amp__loops_tok_is(t, j, ";")) {
            if (semis == 0) *s1 = t->tb[j];
            else *s2 = t->tb[j];
            semis++;
        }
    }
    if (semis != 2 || j >= t->ntoks || t->tb[j] >= k->n[f].e) return false;
    *rp = t->tb[j];
    *init = *cond = *inc = *body = -1;
    for (int c = k->n[f].first; c >= 0; c = k->n[c].next) {
        unsigned b = k->n[c].b;
        if (b > *rp) *body = c;
        else if (b < *s1) *init = c;
        else if (b < *s2) *cond = c;
        else *inc = c;
    }
    return *body >= 0;
}

/* A branch or loop body: a compound, or one statement (plan_seq treats a
 * lone statement as a one-statement sequence). */
static void plan_branch(amp__loops_ctx *k, int s) { amp__loops_plan_seq(k, s, false); }

static void plan_structure(amp__loops_ctx *k, int s)
{
    amp__loops_node *x = &k->n[s];
    if (x->macro) {
        amp__loops_fallback(k, "a barrier inside a macro expansion");
        return;
    }
    switch (x->kind) {
    case AMP__CX_CompoundStmt:
        amp__loops_plan_seq(k, s, false);
        return;
    case AMP__CX_IfStmt: {
        int nc = amp__loops_nchildren(k, s);
        int cond = k->n[s].first;
        if (cond < 0 || nc < 2 || k->n[cond].kind == AMP__CX_DeclStmt || k->n[cond].kind == AMP__CX_VarDecl) {
            amp__loops_fallback(k, "a barrier under an if with a declaration in its condition");
            return;
        }
        unsigned i = amp__loops_tok_find(k->t, x->b);
        if (amp__loops_tok_is(k->t, i + 1, "constexpr")) {
            amp__loops_fallback(k, "a barrier under if constexpr");
            return;
        }
        if (k->n[cond].barrier) {
            amp__loops_fallback(k, "a barrier inside a condition");
            return;
        }
        unit_add(k, AMP__UNIT_COND, k->n[cond].b, k->n[cond].e, s);
        int th = k->n[cond].next, el = th >= 0 ? k->n[th].next : -1;
        plan_branch(k, th);
        if (el >= 0) plan_branch(k, el);
        return;
    }
    case AMP__CX_ForStmt: {
        int init, cond, inc, body;
        unsigned lp, rp, s1 = 0, s2 = 0;
        if (!amp__loops_for_parts(k, s, &init, &cond, &inc, &body, &lp, &rp, &s1, &s2)) {
            amp__loops_fallback(k, "a barrier under a for loop whose header cannot be read");
            return;
        }
        if ((init >= 0 && k->n[init].barrier) || (cond >= 0 && k->n[cond].barrier) ||
            (inc >= 0 && k->n[inc].barrier)) {
            amp__loops_fallback(k, "a barrier inside a loop header");
            return;
        }
        if (cond >= 0 && (k->n[cond].kind == AMP__CX_VarDecl || k->n[cond].kind == AMP__CX_DeclStmt)) {
            amp__loops_fallback(k, "a barrier under a loop with a declaration in its condition");
            return;
        }
        if (init >= 0) {
            int u = unit_add(k, AMP__UNIT_INIT, k->n[init].b,
                             k->n[init].kind == AMP__CX_DeclStmt ? k->n[init].e : s1, s);
            if (u >= 0 && k->n[init].kind == AMP__CX_DeclStmt) {
                for (int d = k->n[init].first; d >= 0; d = k->n[d].next)
                    if (k->n[d].kind == AMP__CX_VarDecl && k->n[d].var >= 0) {
                        amp__loops_var *v = &k->v[k->n[d].var];
                        v->structure = true;
                        v->decl = init;
                        v->unit = u;
                        v->loop = s;
                        v->inc = inc;
                    }
            }
        }
        if (cond >= 0) unit_add(k, AMP__UNIT_COND, k->n[cond].b, k->n[cond].e, s);
        if (inc >= 0) unit_add(k, AMP__UNIT_INC, k->n[inc].b, k->n[inc].e, s);
        plan_branch(k, body);
        if (x->interchange) k->nlockstep++;
        return;
    }
    case AMP__CX_WhileStmt: {
        int cond = k->n[s].first, body = cond >= 0 ? k->n[cond].next : -1;
        if (cond < 0 || body < 0 || k->n[cond].kind == AMP__CX_VarDecl || k->n[cond].kind == AMP__CX_DeclStmt) {
            amp__loops_fallback(k, "a barrier under a while loop with a declaration in its condition");
            return;
        }
        if (k->n[cond].barrier) {
            amp__loops_fallback(k, "a barrier inside a condition");
            return;
        }
        unit_add(k, AMP__UNIT_COND, k->n[cond].b, k->n[cond].e, s);
        plan_branch(k, body);
        return;
    }
    case AMP__CX_DoStmt: {
        int body = k->n[s].first, cond = body >= 0 ? k->n[body].next : -1;
        if (cond < 0) {
            amp__loops_fallback(k, "a barrier under a do loop that cannot be read");
            return;
        }
        if (k->n[cond].barrier) {
            amp__loops_fallback(k, "a barrier inside a condition");
            return;
        }
        plan_branch(k, body);
        unit_add(k, AMP__UNIT_COND, k->n[cond].b, k->n[cond].e, s);
        return;
    }
    case AMP__CX_SwitchStmt:
        amp__loops_fallback(k, "a barrier inside a switch");
        return;
    case AMP__CX_DeclStmt:
        amp__loops_fallback(k, "a barrier inside a declaration's initialiser");
        return;
    case AMP__CX_ReturnStmt:
        amp__loops_fallback(k, "a barrier inside a return statement");
        return;
    case AMP__CX_CXXForRangeStmt:
        amp__loops_fallback(k, "a barrier under a range-based for loop");
        return;
    case AMP__CX_CXXTryStmt:
        amp__loops_fallback(k, "a barrier inside a try block");
        return;
    case AMP__CX_LabelStmt: case AMP__CX_GotoStmt:
        amp__loops_fallback(k, "a barrier next to a label or goto");
        return;
    default:
        amp__loops_fallback(k, "a barrier inside an expression");
        return;
    }
}

/* The statements of a compound, or a lone statement, as a list. */
int amp__loops_seq_first(const amp__loops_ctx *k, int compound)
{
    return k->n[compound].kind == AMP__CX_CompoundStmt ? k->n[compound].first : compound;
}
int amp__loops_seq_next(const amp__loops_ctx *k, int compound, int s)
{
    return k->n[compound].kind == AMP__CX_CompoundStmt ? k->n[s].next : -1;
}

/* Statements of a compound (or one statement) in runs between structure
 * statements (barriers, control flow holding one, promoted jumps and
 * updates). top: the kernel body itself (its last run is final). */
void amp__loops_plan_seq(amp__loops_ctx *k, int compound, bool top)
{
    unsigned limit = k->n[compound].kind == AMP__CX_CompoundStmt ? k->n[compound].e - 1 : ~0u;
    int run = -1, prev = -1;
    for (int c = amp__loops_seq_first(k, compound);; c = amp__loops_seq_next(k, compound, c)) {
        if (k->why[0]) return;
        bool structural = c >= 0 && (amp__loops_is_structure(k, c) || k->n[c].promoted);
        if (c < 0 || structural) {
            if (run >= 0) {
                int last = prev;
                unsigned e = stmt_end(k, last, limit);
                int u = unit_add(k, AMP__UNIT_REGION, k->n[run].b, e, -1);
                if (u < 0) return;
                k->u[u].first = run;
                k->u[u].last = last;
                k->u[u].final = top && c < 0;
                /* A macro invocation must not straddle the region's edge. */
                if (c >= 0 && k->n[c].b < e) {
                    amp__loops_fallback(k, "a barrier inside a macro expansion");
                    return;
                }
                for (int j = run;; j = k->n[j].next) {
                    amp__loops_check_jumps(k, j, k->u[u].final);
                    if (k->n[j].kind == AMP__CX_DeclStmt && k->nhoist < 64) {
                        /* typedef, using, struct: they have no run-time part,
                         * and every region may name them */
                        bool types_only = k->n[j].first >= 0 && !k->n[j].macro;
                        for (int d = k->n[j].first; d >= 0; d = k->n[d].next) {
                            int dk = k->n[d].kind;
                            if (dk != AMP__CX_TypedefDecl && dk != AMP__CX_TypeAliasDecl && dk != AMP__CX_StructDecl &&
                                dk != AMP__CX_ClassDecl && dk != AMP__CX_EnumDecl && dk != AMP__CX_UnionDecl)
                                types_only = false;
                        }
                        if (types_only) k->hoist[k->nhoist++] = j;
                    }
                    if (k->n[j].kind == AMP__CX_DeclStmt)
                        for (int d = k->n[j].first; d >= 0; d = k->n[d].next)
                            if (k->n[d].kind == AMP__CX_VarDecl && k->n[d].var >= 0) {
                                amp__loops_var *v = &k->v[k->n[d].var];
                                v->structure = true;
                                v->decl = j;
                                v->unit = u;
                            }
                    if (j == last) break;
                }
                run = -1;
            }
            if (c < 0) break;
            if (prev >= 0 && k->n[prev].e > k->n[c].b) {
                amp__loops_fallback(k, "a barrier inside a macro expansion");
                return;
            }
            prev = c;
            if (k->n[c].promoted) {
                unsigned e = stmt_end(k, c, limit);
                int u = unit_add(k, AMP__UNIT_STMT, k->n[c].b, e, c);
                if (u < 0) return;
                k->u[u].first = k->u[u].last = c;
                continue;
            }
            if (amp__loops_is_barrier_stmt(k, c)) continue;
            plan_structure(k, c);
            continue;
        }
        if (run < 0) run = c;
        prev = c;
    }
}
