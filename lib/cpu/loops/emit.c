/* emit.c — the loop transformation's emission: the loop version's text, the kernel's control flow around units (uniform conditions used as they are, the others agreed on by every work-item), each region wrapped in loops over the work-items with the bindings its variables need. */
#include "loops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Source text [b, e) as it is. */
static void emit_src(amp__loops_ctx *k, unsigned b, unsigned e)
{
    if (e > b) amp__sb_put(&k->out, k->t->src + b, e - b);
}

/* Text [b, e) with this kernel's edits applied. */
static void emit_edited(amp__loops_ctx *k, unsigned b, unsigned e)
{
    unsigned at = b;
    for (int i = 0; i < k->ned; ++i) {
        amp__loops_edit *d = &k->ed[i];
        if (d->b < at || d->e > e) continue;
        emit_src(k, at, d->b);
        amp__sb_puts(&k->out, d->text);
        at = d->e;
    }
    emit_src(k, at, e);
}

/* Replace text [b, e) of a region with text (copied) wherever it is emitted. */
void amp__loops_edit_add(amp__loops_ctx *k, unsigned b, unsigned e, const char *text)
{
    if (k->ned == k->ced && !amp__loops_grow(&k->ed, &k->ced, sizeof *k->ed, 16, &k->t->oom)) return;
    char *t = amp__strdup(text);
    if (!t) {
        k->t->oom = true;
        return;
    }
    /* keep sorted by start */
    int i = k->ned++;
    while (i > 0 && k->ed[i - 1].b > b) {
        k->ed[i] = k->ed[i - 1];
        --i;
    }
    k->ed[i] = (amp__loops_edit){b, e, t};
}

/* The remat form of a declaration: verbatim when every variable it declares
 * is const; otherwise a const copy per variable through a lambda that runs
 * the original declaration (same conversions, and a modification of the
 * copy does not compile). */
void amp__loops_emit_remat_decl(amp__loops_ctx *k, int d, amp__sb *s, const bool *want)
{
    bool all_const = true;
    for (int c = k->n[d].first; c >= 0; c = k->n[c].next)
        if (k->n[c].kind == AMP__CX_VarDecl && k->n[c].var >= 0 && !k->v[k->n[c].var].is_const) all_const = false;
    if (all_const) {
        amp__sb_put(s, k->t->src + k->n[d].b, k->n[d].e - k->n[d].b);
        amp__sb_puts(s, "\n");
        return;
    }
    for (int c = k->n[d].first; c >= 0; c = k->n[c].next) {
        if (k->n[c].kind != AMP__CX_VarDecl || k->n[c].var < 0) continue;
        int vi = k->n[c].var;
        if (want && !want[vi]) continue;
        amp__sb_printf(s, "const auto %s = [&]() { ", k->v[vi].name);
        amp__sb_put(s, k->t->src + k->n[d].b, k->n[d].e - k->n[d].b);
        amp__sb_printf(s, " return %s; }();\n", k->v[vi].name);
    }
}

/* Open the loops over the tile's work-items (contiguous dimension
 * innermost; with swap the next one out, order.c), with the work-item's
 * index bound. */
static void emit_wi_open(amp__loops_ctx *k, bool swap)
{
    amp__sb *o = &k->out;
    static const char *const l1 = "for (int amp__l1 = 0; amp__l1 < amp__S::e1; ++amp__l1)",
                             *l2 = "for (int amp__l2 = 0; amp__l2 < amp__S::e2; ++amp__l2)";
    amp__sb_printf(o,
                   "for (int amp__l0 = 0; amp__l0 < amp__S::e0; ++amp__l0)\n%s\nAMP__WI_IVDEP %s {\n"
                   "const int amp__wi = (amp__l0 * amp__S::e1 + amp__l1) * amp__S::e2 + amp__l2; (void)amp__wi;\n",
                   swap ? l2 : l1, swap ? l1 : l2);
    if (k->tidx >= 0 && k->v[k->tidx].name[0])
        amp__sb_printf(o, "const amp__TI %s = amp__tb.at(amp__l0, amp__l1, amp__l2); (void)%s;\n", k->v[k->tidx].name,
                  k->v[k->tidx].name);
    if (k->needs_local) amp__sb_puts(o, "amp__it->cur_local = amp__wi;\n");
    else amp__sb_puts(o, "AMP__WI_SET_LOCAL(amp__it, amp__wi);\n");
}

/* Variables unit ui reads, and the bindings that give them their values.
 * copied (a lockstep loop's bindings): private variables are bound as
 * copies of their slots, marked there, to be saved back (see
 * emit_lockstep). */
static void emit_bindings(amp__loops_ctx *k, int ui, unsigned b, unsigned e, bool *outer_refs_done, bool *copied,
                          int except)
{
    amp__sb *o = &k->out;
    int nv = k->nv;
    bool *used = calloc((size_t)nv + 1, sizeof *used);
    if (!used) {
        k->t->oom = true;
        return;
    }
    for (int i = 0; i < k->nn; ++i) {
        amp__loops_node *x = &k->n[i];
        if (x->kind == AMP__CX_DeclRefExpr && x->var >= 0 && x->b >= b && x->b < e) used[x->var] = true;
    }
    /* remat dependencies: a remat variable's declaration reads others */
    bool grew = true;
    while (grew) {
        grew = false;
        for (int i = 0; i < k->nn; ++i) {
            amp__loops_node *x = &k->n[i];
            if (x->kind != AMP__CX_DeclRefExpr || x->var < 0 || used[x->var]) continue;
            for (int vi = 0; vi < nv; ++vi) {
                amp__loops_var *v = &k->v[vi];
                if (!used[vi] || v->cls != AMP__VAR_REMAT || v->unit == ui) continue;
                if (x->b >= k->n[v->decl].b && x->b < k->n[v->decl].e) {
                    used[x->var] = true;
                    grew = true;
                }
            }
        }
    }
    if (!outer_refs_done) {
        /* the outer-flow part: references to non-const uniform variables */
        for (int vi = 0; vi < nv; ++vi) {
            amp__loops_var *v = &k->v[vi];
            if (used[vi] && v->cls == AMP__VAR_UNIFORM && !v->is_const)
                amp__sb_printf(o, "const auto &amp__u%d_%s = %s;\n", vi, v->name, v->name);
        }
        free(used);
        return;
    }
    for (int vi = 0; vi < nv; ++vi) {
        amp__loops_var *v = &k->v[vi];
        if (!used[vi] || vi == except) continue;
        /* uniform ones hoisted out of this very region are bound too: the
         * work-items see a const copy */
        if (v->cls == AMP__VAR_UNIFORM && !v->is_const)
            amp__sb_printf(o, "const auto %s = amp__u%d_%s;\n", v->name, vi, v->name);
        else if (v->cls == AMP__VAR_PRIVATE && v->unit != ui) {
            amp__sb_printf(o, "auto %s%s = amp__c%d_%s[amp__wi];\n", copied ? "" : "&", v->name, vi, v->name);
            if (copied) copied[vi] = true;
        }
    }
    /* remat declarations in source order, each declaration once */
    for (int vi = 0; vi < nv; ++vi) {
        amp__loops_var *v = &k->v[vi];
        if (!used[vi] || v->cls != AMP__VAR_REMAT || v->unit == ui) continue;
        bool first = true;
        for (int w = 0; w < vi; ++w)
            if (k->v[w].decl == v->decl && used[w] && k->v[w].cls == AMP__VAR_REMAT) first = false;
        if (first) amp__loops_emit_remat_decl(k, v->decl, o, used);
    }
    free(used);
}

/* Enter the work-item loops for unit ui: the outer-flow references its
 * uniform variables need, the loops, then its bindings inside them. */
static void emit_wi_enter(amp__loops_ctx *k, int ui)
{
    const amp__loops_unit *u = &k->u[ui];
    bool inside_loops = true;
    const bool swap = u->kind == AMP__UNIT_REGION && amp__loops_region_order_swaps(k, ui);
    k->nswapped += swap;
    emit_bindings(k, ui, u->b, u->e, NULL, NULL, -1);
    emit_wi_open(k, swap);
    emit_bindings(k, ui, u->b, u->e, &inside_loops, NULL, -1);
}

static void emit_seq(amp__loops_ctx *k, int compound, bool top);

/* A region's uniform declarations, which go first, in the outer flow. */
static void emit_uniform_decls(amp__loops_ctx *k, int ui)
{
    amp__loops_unit *u = &k->u[ui];
    if (u->kind != AMP__UNIT_REGION) return;
    for (int s = u->first;; s = k->n[s].next) {
        if (k->n[s].kind == AMP__CX_DeclStmt) {
            int d = k->n[s].first;
            while (d >= 0 && !(k->n[d].kind == AMP__CX_VarDecl && k->n[d].var >= 0)) d = k->n[d].next;
            if (d >= 0 && k->v[k->n[d].var].cls == AMP__VAR_UNIFORM) {
                emit_src(k, k->n[s].b, k->n[s].e);
                amp__sb_puts(&k->out, "\n");
            }
        }
        if (s == u->last) break;
    }
}

/* One region (or an INIT/INC unit run per work-item): hoisted uniform
 * declarations, then the work-item loops around the text. */
static void emit_region(amp__loops_ctx *k, int ui)
{
    amp__loops_unit *u = &k->u[ui];
    amp__sb *o = &k->out;
    emit_uniform_decls(k, ui);
    /* Is anything left to run per work-item? */
    {
        amp__sb saved = k->out;
        k->out = (amp__sb){0};
        emit_edited(k, u->b, u->e);
        bool empty = true;
        for (size_t i = 0; i < k->out.n && empty; ++i)
            if (k->out.p[i] != ';' && k->out.p[i] != ' ' && k->out.p[i] != '\t' && k->out.p[i] != '\n' &&
                k->out.p[i] != '\r')
                empty = false;
        if (k->out.oom) k->t->oom = true;
        free(k->out.p);
        k->out = saved;
        if (empty) return;
    }
    amp__sb_puts(o, "{\n");
    emit_wi_enter(k, ui);
    amp__sb_puts(o, "{\n");
    emit_edited(k, u->b, u->e);
    amp__sb_puts(o, u->kind == AMP__UNIT_REGION ? "\n" : ";\n");
    /* private variables declared here: into their slots */
    for (int vi = 0; vi < k->nv; ++vi)
        if (k->v[vi].unit == ui && k->v[vi].cls == AMP__VAR_PRIVATE)
            amp__sb_printf(o, "::amp::cpu::save(amp__c%d_%s[amp__wi], %s);\n", vi, k->v[vi].name, k->v[vi].name);
    amp__sb_puts(o, "}\n");
    if (u->final) amp__sb_printf(o, "amp__done_%d: ;\n", ui);
    amp__sb_puts(o, "}\n}\n");
}

/* A condition: the expression when uniform, else every work-item's value,
 * which must agree. Writes the C++ condition to use into cond. */
static void emit_cond(amp__loops_ctx *k, int ui, const char *what, char *cond, size_t cap)
{
    amp__loops_unit *u = &k->u[ui];
    amp__sb *o = &k->out;
    if (u->uniform) {
        size_t n = u->e - u->b;
        if (n + 3 > cap) {
            amp__loops_fallback(k, "a condition too long to copy");
            cond[0] = 0;
            return;
        }
        cond[0] = '(';
        memcpy(cond + 1, k->t->src + u->b, n);
        cond[n + 1] = ')';
        cond[n + 2] = 0;
        return;
    }
    int id = ++k->label;
    snprintf(cond, cap, "amp__c%d", id);
    amp__sb_printf(o, "bool amp__c%d = false;\n{\n", id);
    emit_wi_enter(k, ui);
    amp__sb_printf(o, "const bool amp__v = static_cast<bool>(");
    emit_src(k, u->b, u->e);
    amp__sb_printf(o, ");\nif (!::amp::cpu::agree(amp__it, amp__c%d, amp__v, amp__wi, \"%s\")) return false;\n}\n}\n",
                   id, what);
}

static void emit_branch(amp__loops_ctx *k, int s)
{
    amp__sb_puts(&k->out, "{\n");
    emit_seq(k, s, false);
    amp__sb_puts(&k->out, "}\n");
}

static int next_unit(amp__loops_ctx *k) { return k->emit_unit++; }

/* Whether expression node x has an integer or enumeration type. */
static bool integer_typed(amp__loops_ctx *k, int x)
{
    amp__cx_type t = k->cx->clang_getCanonicalType(k->cx->clang_getCursorType(k->n[x].c));
    return (t.kind >= AMP__CXT_Bool && t.kind <= AMP__CXT_Int128) || t.kind == AMP__CXT_Enum;
}

/* The lockstep loop's variable where its steps can also run as the vector
 * fast path below, else -1: the loop's own private integer variable,
 * changed only by its increment, which adds or subtracts an integer (a
 * floating-point step, truncated, would not keep the work-items' variables
 * a base plus their numbers), and a condition without effects, volatile
 * reads included (the fast path evaluates it for every work-item before
 * any body, and the usual path evaluates it again when one fails). */
static int fast_path_var(amp__loops_ctx *k, int s, int cnd)
{
    int vi = -1;
    for (int i = 0; i < k->nv && vi < 0; ++i)
        if (k->v[i].loop == s) vi = i;
    if (vi < 0) return -1;
    const amp__loops_var *v = &k->v[vi];
    static const char *const ints[] = {"int", "unsigned int", "long", "unsigned long", "long long",
                                       "unsigned long long"};
    bool integral = false;
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; ++i) integral |= !strcmp(v->type, ints[i]);
    if (!integral || v->cls != AMP__VAR_PRIVATE || v->mod_outside_inc || v->is_ref || v->addr_taken) return -1;
    /* interchange.c's strided_inc: `v += e` or `v -= e`; e's type */
    int o = v->inc >= 0 ? amp__loops_strip(k, v->inc) : -1;
    int rhs = o >= 0 && k->n[o].kind == AMP__CX_CompoundAssignOperator && k->n[o].first >= 0
                  ? k->n[k->n[o].first].next
                  : -1;
    if (rhs < 0 || !integer_typed(k, rhs)) return -1;
    for (int i = cnd; i < k->nn && (i == cnd || amp__loops_inside(k, i, cnd)); ++i) {
        const amp__loops_node *x = &k->n[i];
        if (x->macro) return -1;
        switch (x->kind) {
        case AMP__CX_DeclRefExpr:
            /* a variable of the kernel's, not volatile; anything else a constant */
            if (x->var >= 0 ? strstr(k->v[x->var].type, "volatile") != NULL
                            : !k->cx->clang_isConstQualifiedType(k->cx->clang_getCursorType(x->c)))
                return -1;
            break;
        case AMP__CX_IntegerLiteral: case AMP__CX_ParenExpr: case AMP__CX_UnexposedExpr:
        case AMP__CX_CStyleCastExpr: case AMP__CX_CXXStaticCastExpr: case AMP__CX_CXXFunctionalCastExpr:
            break;
        case AMP__CX_BinaryOperator: {
            unsigned op = amp__loops_binary_op(k, i);
            if (op == ~0u || amp__loops_is_assign_op(k->t, op)) return -1;
            break;
        }
        case AMP__CX_UnaryOperator: {
            /* no increment, and no read through a pointer (it may be volatile) */
            const char *op = amp__loops_unary_op(k, i);
            if (!op || !strcmp(op, "++") || !strcmp(op, "--") || !strcmp(op, "*")) return -1;
            break;
        }
        default:
            return -1;
        }
    }
    return vi;
}

/* The fast path of lockstep loop id (loops.h), vi its variable, cu its
 * condition's unit, bu its body's, nu its increment's: while the
 * variable of work-item w is the first one's plus w (checked once after
 * the init: amp__f<id>) and every work-item's condition holds, a step runs
 * the body for every work-item with the variable computed from the first
 * one's, so the compiler sees its accesses as consecutive and vectorises
 * them without gathers; its range is stated to the compiler
 * (lockstep_assume) after a check that it holds (lockstep_in_range), so
 * that `a[(int)i]` of an unsigned i is an affine access to it. A step
 * whose condition fails for some work-item, or whose variable leaves that
 * range, leaves the fast path for good: the slots are filled in and the
 * usual path goes on from the same step. Each work-item's own statements
 * keep their order (condition, body, increment); only the interleaving of
 * work-items changes, which is theirs to choose between barriers. */
/* A lockstep step's copies (copied, emit_bindings) saved back to the
 * work-item's slots. */
static void emit_saves(amp__loops_ctx *k, const bool *copied)
{
    for (int vi = 0; vi < k->nv; ++vi)
        if (copied[vi])
            amp__sb_printf(&k->out, "::amp::cpu::save(amp__c%d_%s[amp__wi], %s);\n", vi, k->v[vi].name,
                           k->v[vi].name);
}

/* Opens the fast path's loop over the work-items for unit ui's text
 * [b, e): its bindings, with lockstep loop id's variable vi computed as the
 * base plus the work-item (told its range first where assume), the others
 * as emit_bindings gives them (copied: see there). */
static void emit_fast_wi_open(amp__loops_ctx *k, int id, int vi, int ui, unsigned b, unsigned e, bool assume,
                              bool *copied)
{
    amp__sb *o = &k->out;
    const char *name = k->v[vi].name, *type = k->v[vi].type; /* canonical: no user macro in it */
    bool inside = true;
    emit_bindings(k, ui, b, e, NULL, NULL, -1);
    emit_wi_open(k, false);
    if (assume) amp__sb_printf(o, "::amp::cpu::lockstep_assume(amp__b%d, amp__S::n);\n", id);
    amp__sb_printf(o, "const %s %s = static_cast<%s>(amp__b%d + amp__wi); (void)%s;\n", type, name, type, id, name);
    emit_bindings(k, ui, b, e, &inside, copied, vi);
}

static void emit_lockstep_fast(amp__loops_ctx *k, int id, int vi, int cu, int bu, int nu)
{
    amp__sb *o = &k->out;
    const char *name = k->v[vi].name;
    bool inside = true;
    amp__sb_printf(o, "if (amp__f%d) {\n"
                      "for (int amp__j = 0; amp__j < ::amp::cpu::lockstep_steps; ++amp__j) {\n"
                      "const auto amp__b%d = amp__c%d_%s[0];\n"
                      "if (!::amp::cpu::lockstep_in_range(amp__b%d, amp__S::n)) { amp__f%d = false; break; }\n"
                      "int amp__bad%d = 0;\n{\n",
                   id, id, vi, name, id, id, id);
    /* every work-item's condition */
    unsigned cb = k->u[cu].b, ce = k->u[cu].e;
    emit_fast_wi_open(k, id, vi, cu, cb, ce, false, NULL);
    /* an int's or, which the compiler vectorises (a bool's and it did not) */
    amp__sb_printf(o, "amp__bad%d |= !static_cast<bool>(", id);
    emit_src(k, cb, ce);
    amp__sb_printf(o, ");\n}\n}\nif (amp__bad%d) { amp__f%d = false; break; }\n", id, id);
    /* every work-item's body */
    bool *copied = calloc((size_t)k->nv + 1, sizeof *copied);
    if (!copied) {
        k->t->oom = true;
        return;
    }
    unsigned bb = k->u[bu].b, be = k->u[bu].e;
    amp__sb_puts(o, "{\n");
    emit_fast_wi_open(k, id, vi, bu, bb, be, true, copied);
    amp__sb_puts(o, "{\n");
    emit_edited(k, bb, be);
    amp__sb_puts(o, "\n}\n");
    emit_saves(k, copied);
    free(copied);
    amp__sb_puts(o, "}\n}\n");
    /* the first work-item's variable stepped by the increment, as written */
    unsigned nb = k->u[nu].b, ne = k->u[nu].e;
    amp__sb_puts(o, "{\n");
    emit_bindings(k, nu, nb, ne, NULL, NULL, -1);
    emit_bindings(k, nu, nb, ne, &inside, NULL, vi);
    amp__sb_printf(o, "auto %s = amp__b%d;\n", name, id);
    emit_src(k, nb, ne);
    amp__sb_printf(o, ";\namp__c%d_%s[0] = %s;\n}\n}\n"
                      "if (amp__f%d) continue;\n"
                      "::amp::cpu::lockstep_spread(amp__c%d_%s);\n}\n",
                   vi, name, name, id, vi, name);
}

/* A loop interchange.c chose, run in lockstep across the work-items: each
 * work-item's init (saved in its slots), then steps of every work-item
 * still active: its condition (false: inactive from then on), its body and
 * its increment, one work-item after the other; until a step finds none
 * active. A work-item's own statements keep their order. */
static void emit_lockstep(amp__loops_ctx *k, int s)
{
    amp__sb *o = &k->out;
    int init, cnd, inc, body;
    unsigned lp, rp, s1, s2;
    if (!amp__loops_for_parts(k, s, &init, &cnd, &inc, &body, &lp, &rp, &s1, &s2) || cnd < 0) {
        amp__loops_fallback(k, "a lockstep loop whose header cannot be read");
        return;
    }
    int iu = init >= 0 ? next_unit(k) : -1;
    int cu = next_unit(k);
    int nu = inc >= 0 ? next_unit(k) : -1;
    /* The body: one region (it holds no structure), or nothing. A promoted
     * statement in it would run once a step, not once a work-item. */
    int bu = -1;
    if (k->emit_unit < k->nu && k->u[k->emit_unit].b >= k->n[body].b && k->u[k->emit_unit].b < k->n[s].e) {
        bu = next_unit(k);
        if (k->u[bu].kind != AMP__UNIT_REGION ||
            (k->emit_unit < k->nu && k->u[k->emit_unit].b >= k->n[body].b && k->u[k->emit_unit].b < k->n[s].e)) {
            amp__loops_fallback(k, "a lockstep loop whose body the plan split");
            return;
        }
    }
    for (int i = s + 1; i < k->nn && amp__loops_inside(k, i, s); ++i)
        if (k->n[i].promoted) {
            amp__loops_fallback(k, "a lockstep loop with a promoted statement");
            return;
        }
    int id = ++k->label;
    bool init_inline = iu < 0 || k->u[iu].uniform;
    bool inc_inline = nu < 0 || k->u[nu].uniform;
    amp__sb_puts(o, "{\n");
    if (!init_inline) emit_region(k, iu);
    amp__sb_printf(o, "::amp::cpu::ctx<unsigned char, amp__S::n> amp__a%d;\n"
                      "__builtin_memset((void *)&amp__a%d, 1, sizeof amp__a%d);\n",
                   id, id, id);
    int fv = !init_inline && !inc_inline && bu >= 0
                 ? fast_path_var(k, s, cnd)
                 : -1;
    k->nfast += fv >= 0;
    if (fv >= 0)
        amp__sb_printf(o, "bool amp__f%d = ::amp::cpu::lockstep_consecutive(amp__c%d_%s);\n", id, fv, k->v[fv].name);
    amp__sb_puts(o, "for (");
    if (iu >= 0 && init_inline) emit_src(k, k->u[iu].b, k->u[iu].e);
    if (!(iu >= 0 && init_inline && k->n[init].kind == AMP__CX_DeclStmt)) amp__sb_puts(o, ";");
    amp__sb_puts(o, ";");
    if (nu >= 0 && inc_inline) emit_src(k, k->u[nu].b, k->u[nu].e);
    amp__sb_printf(o, ") {\nbool amp__any%d = false;\n", id);
    if (bu >= 0) emit_uniform_decls(k, bu);
    if (fv >= 0) emit_lockstep_fast(k, id, fv, cu, bu, nu);
    /* bindings for the condition, the increment and the body at once */
    unsigned b = k->u[cu].b, e = k->n[s].e;
    int ui = bu >= 0 ? bu : cu;
    bool inside_loops = true;
    /* Private variables are the work-item's copies for its steps, saved
     * back after them: the steps then see its variables as the loop did
     * before it was interchanged (in registers, a sum carried from step to
     * step), which is also what the compiler's choice to fuse a multiply
     * and an add depends on (same bits). */
    bool *copied = calloc((size_t)k->nv + 1, sizeof *copied);
    if (!copied) {
        k->t->oom = true;
        return;
    }
    amp__sb_puts(o, "{\n");
    emit_bindings(k, ui, b, e, NULL, NULL, -1);
    emit_wi_open(k, false);
    emit_bindings(k, ui, b, e, &inside_loops, copied, -1);
    amp__sb_printf(o, "if (!amp__a%d[amp__wi]) continue;\n", id);
    /* A few steps of each work-item at once (unroll and jam), when the
     * increment is its own: that many runs of memory stream in parallel. */
    if (!inc_inline)
        amp__sb_puts(o, "AMP__LOCKSTEP_LOOP for (int amp__j = 0; amp__j < ::amp::cpu::lockstep_steps; ++amp__j) {\n");
    amp__sb_puts(o, "if (!static_cast<bool>(");
    emit_src(k, k->u[cu].b, k->u[cu].e);
    amp__sb_printf(o, ")) {\namp__a%d[amp__wi] = 0;\n%s;\n}\n{\n", id, inc_inline ? "continue" : "break");
    if (bu >= 0) emit_edited(k, k->u[bu].b, k->u[bu].e);
    amp__sb_puts(o, "\n}\n");
    if (!inc_inline) {
        emit_src(k, k->u[nu].b, k->u[nu].e);
        amp__sb_puts(o, ";\n}\n");
    }
    emit_saves(k, copied);
    free(copied);
    amp__sb_printf(o, "amp__any%d |= amp__a%d[amp__wi];\n}\n}\nif (!amp__any%d) break;\n}\n}\n", id, id, id);
}

static void emit_structure(amp__loops_ctx *k, int s)
{
    amp__sb *o = &k->out;
    char cond[1024];
    switch (k->n[s].kind) {
    case AMP__CX_CompoundStmt:
        amp__sb_puts(o, "{\n");
        emit_seq(k, s, false);
        amp__sb_puts(o, "}\n");
        return;
    case AMP__CX_IfStmt: {
        int cu = next_unit(k);
        int th = k->n[k->n[s].first].next, el = th >= 0 ? k->n[th].next : -1;
        amp__sb_puts(o, "{\n");
        emit_cond(k, cu, "if", cond, sizeof cond);
        amp__sb_printf(o, "if (%s) ", cond);
        emit_branch(k, th);
        if (el >= 0) {
            amp__sb_puts(o, "else ");
            emit_branch(k, el);
        }
        amp__sb_puts(o, "}\n");
        return;
    }
    case AMP__CX_ForStmt: {
        if (k->n[s].interchange) {
            emit_lockstep(k, s);
            return;
        }
        int init, cnd, inc, body;
        unsigned lp, rp, s1, s2;
        amp__loops_for_parts(k, s, &init, &cnd, &inc, &body, &lp, &rp, &s1, &s2);
        int iu = init >= 0 ? next_unit(k) : -1;
        int cu = cnd >= 0 ? next_unit(k) : -1;
        int nu = inc >= 0 ? next_unit(k) : -1;
        amp__sb_puts(o, "{\n");
        bool init_inline = iu < 0 || k->u[iu].uniform;
        if (!init_inline) emit_region(k, iu);
        amp__sb_puts(o, "for (");
        if (iu >= 0 && init_inline) emit_src(k, k->u[iu].b, k->u[iu].e);
        if (!(iu >= 0 && init_inline && k->n[init].kind == AMP__CX_DeclStmt)) amp__sb_puts(o, ";");
        bool cond_inline = cu < 0 || k->u[cu].uniform;
        if (cu >= 0 && cond_inline) emit_src(k, k->u[cu].b, k->u[cu].e);
        amp__sb_puts(o, ";");
        bool inc_inline = nu < 0 || k->u[nu].uniform;
        if (nu >= 0 && inc_inline) emit_src(k, k->u[nu].b, k->u[nu].e);
        amp__sb_puts(o, ") {\n");
        if (!cond_inline) {
            emit_cond(k, cu, "for", cond, sizeof cond);
            amp__sb_printf(o, "if (!%s) break;\n", cond);
        }
        if (k->ncont < 64) k->cont_ok[k->ncont] = cond_inline && inc_inline;
        k->ncont++;
        emit_branch(k, body);
        k->ncont--;
        if (!inc_inline) emit_region(k, nu);
        amp__sb_puts(o, "}\n}\n");
        return;
    }
    case AMP__CX_WhileStmt: {
        int cu = next_unit(k);
        int body = k->n[k->n[s].first].next;
        /* continue re-evaluates the condition in both forms */
        if (k->ncont < 64) k->cont_ok[k->ncont] = true;
        k->ncont++;
        if (k->u[cu].uniform) {
            amp__sb_printf(o, "while (");
            emit_src(k, k->u[cu].b, k->u[cu].e);
            amp__sb_puts(o, ") ");
            emit_branch(k, body);
            k->ncont--;
            return;
        }
        amp__sb_puts(o, "for (;;) {\n");
        emit_cond(k, cu, "while", cond, sizeof cond);
        amp__sb_printf(o, "if (!%s) break;\n", cond);
        emit_branch(k, body);
        amp__sb_puts(o, "}\n");
        k->ncont--;
        return;
    }
    case AMP__CX_DoStmt: {
        int body = k->n[s].first;
        /* the body's units come before the condition's (plan order) */
        amp__sb_puts(o, "for (;;) {\n");
        if (k->ncont < 64) k->cont_ok[k->ncont] = false; /* it would skip the condition */
        k->ncont++;
        emit_branch(k, body);
        k->ncont--;
        int cu = next_unit(k);
        emit_cond(k, cu, "do-while", cond, sizeof cond);
        amp__sb_printf(o, "if (!%s) break;\n", cond);
        amp__sb_puts(o, "}\n");
        return;
    }
    default:
        amp__loops_fallback(k, "unexpected structure");
        return;
    }
}

/* A promoted statement: a uniform update or jump, in the outer flow. */
static void emit_ustmt(amp__loops_ctx *k, int ui)
{
    amp__loops_unit *u = &k->u[ui];
    amp__sb *o = &k->out;
    int cond, target;
    int shape = amp__loops_jump_shape(k, u->owner, &cond, &target);
    if (shape == AMP__JUMP_UPDATE) {
        if (!u->uniform) {
            emit_region(k, ui);
            return;
        }
        emit_src(k, u->b, u->e);
        amp__sb_puts(o, ";\n");
        return;
    }
    if (shape == AMP__JUMP_CONTINUE && (k->ncont == 0 || k->ncont > 64 || !k->cont_ok[k->ncont - 1])) {
        amp__loops_fallback(k, "a continue in a loop whose condition or increment runs per work-item");
        return;
    }
    if (cond >= 0) {
        amp__sb_puts(o, "if (");
        emit_src(k, k->n[cond].b, k->n[cond].e);
        amp__sb_puts(o, ") ");
    }
    amp__sb_puts(o, shape == AMP__JUMP_RETURN  ? "return true;\n"
                    : shape == AMP__JUMP_BREAK ? "break;\n"
                                               : "continue;\n");
}

static void emit_seq(amp__loops_ctx *k, int compound, bool top)
{
    bool in_run = false;
    for (int c = amp__loops_seq_first(k, compound);; c = amp__loops_seq_next(k, compound, c)) {
        if (k->why[0]) return;
        bool structural = c >= 0 && (amp__loops_is_structure(k, c) || k->n[c].promoted);
        if (c < 0 || structural) {
            if (in_run) {
                emit_region(k, next_unit(k));
                in_run = false;
            }
            if (c < 0) break;
            if (k->n[c].promoted) {
                emit_ustmt(k, next_unit(k));
                continue;
            }
            if (amp__loops_is_barrier_stmt(k, c)) continue;
            emit_structure(k, c);
            continue;
        }
        in_run = true;
    }
    (void)top;
}

/* The loop version: the function that runs one tile (its parameters the
 * kernel's, after the item), its tiles entry and its tile_static size. */
void amp__loops_emit(amp__loops_ctx *k)
{
    const int fnode = 0; /* the kernel's function (amp__loops_build_tree) */
    amp__sb *o = &k->out;
    const char *nm = k->name;
    amp__sb_printf(o, "static AMP_FI bool %s__amp_loops(amp__cpu_item *amp__it", nm);
    int pi = 0;
    for (int c = k->n[fnode].first; c >= 0; c = k->n[c].next) {
        if (k->n[c].kind != AMP__CX_ParmDecl) continue;
        if (pi > 0) {
            amp__loops_var *v = &k->v[k->n[c].var];
            if (v->name[0])
                amp__sb_printf(o, ", const ::amp::cpu::param_t<decltype(%s__amp_body), %d> %s", nm, pi, v->name);
            else amp__sb_printf(o, ", const ::amp::cpu::param_t<decltype(%s__amp_body), %d>", nm, pi);
        }
        pi++;
    }
    amp__sb_printf(o, ")\n{\ntypedef ::amp::cpu::param_t<decltype(%s__amp_body), 0> amp__TI;\n"
                 "typedef ::amp::cpu::shape<amp__TI> amp__S;\n"
                 "const ::amp::cpu::tile_base<amp__TI> amp__tb(amp__it); (void)amp__tb;\n",
              nm);
    /* Outside the work-item loops the index names the tile only: uniform
     * code reads its tile and tile_origin (never local or global). */
    if (k->v[k->tidx].name[0])
        amp__sb_printf(o, "const amp__TI %s = amp__tb.t; (void)%s;\n", k->v[k->tidx].name, k->v[k->tidx].name);
    for (int h = 0; h < k->nhoist; ++h) {
        emit_src(k, k->n[k->hoist[h]].b, k->n[k->hoist[h]].e);
        amp__sb_puts(o, "\n");
    }
    for (int i = 0; i < k->nv; ++i) {
        amp__loops_var *v = &k->v[i];
        if (v->cls == AMP__VAR_TILE_STATIC && v->transposed)
            amp__sb_printf(o, "::amp::cpu::transposed_t<%s> %s;\n", v->type, v->name);
        else if (v->cls == AMP__VAR_TILE_STATIC)
            amp__sb_printf(o, "alignas(64) ::amp::cpu::ident<%s> %s;\n", v->type, v->name);
        else if (v->cls == AMP__VAR_PRIVATE)
            amp__sb_printf(o, "::amp::cpu::ctx<%s, amp__S::n> amp__c%d_%s;\n", v->type, i, v->name);
    }
    k->emit_unit = 0;
    k->nswapped = 0;
    emit_seq(k, k->body, true);
    amp__sb_puts(o, "return true;\n}\n");
    amp__sb_printf(o, "extern \"C\" __attribute__((visibility(\"default\"))) void %s__amp_tiles(amp__cpu_item *amp__it)\n"
                 "{ ::amp::cpu::run_tiles<decltype(%s__amp_body), %s__amp_loops, %d>(amp__it); }\n",
              nm, nm, nm, k->tile_group);
    /* Its tile_static memory, measured by the compiler (the kernel has no
     * fiber version whose thread-local symbols could tell). */
    amp__sb_printf(o, "extern \"C\" __attribute__((visibility(\"default\"))) const unsigned long long "
                 "%s__amp_tile_static = 0", nm);
    for (int i = 0; i < k->nv; ++i)
        if (k->v[i].cls == AMP__VAR_TILE_STATIC) amp__sb_printf(o, " + sizeof(::amp::cpu::ident<%s>)", k->v[i].type);
    amp__sb_puts(o, ";\n");
    /* How many of its loops run in lockstep (AMP_CPU_VERBOSE says it). */
    if (k->nlockstep > 0)
        amp__sb_printf(o, "extern \"C\" __attribute__((visibility(\"default\"))) const int %s__amp_lockstep = %d;\n", nm,
                       k->nlockstep);
    /* How many of those have the vector fast path. */
    if (k->nfast > 0)
        amp__sb_printf(o, "extern \"C\" __attribute__((visibility(\"default\"))) const int %s__amp_lockstep_fast = %d;\n",
                       nm, k->nfast);
    /* How many regions run their work-item loops interchanged (order.c). */
    if (k->nswapped > 0)
        amp__sb_printf(o, "extern \"C\" __attribute__((visibility(\"default\"))) const int %s__amp_swapped = %d;\n", nm,
                       k->nswapped);
    /* How many tile_static arrays it stores transposed (layout.c). */
    if (k->ntransposed > 0)
        amp__sb_printf(o, "extern \"C\" __attribute__((visibility(\"default\"))) const int %s__amp_transposed = %d;\n",
                       nm, k->ntransposed);
    /* The tile rows a group of its launch's tiles spans (tiles.c). */
    if (k->tile_group > 1)
        amp__sb_printf(o, "extern \"C\" __attribute__((visibility(\"default\"))) const int %s__amp_tile_group = %d;\n",
                       nm, k->tile_group);
}
