/* refs.c — the loop transformation's variables: a kernel's parameters and locals as it sees them (type, constness, size), and what each reference does to one (modifies it, takes its address), read from the operator or call around it. */
#include "loops.h"

#include <string.h>

int amp__loops_var_of_cursor(amp__loops_ctx *k, amp__cx_cursor c)
{
    for (int i = 0; i < k->nv; ++i)
        if (k->cx->clang_equalCursors(k->n[k->v[i].node].c, c)) return i;
    return -1;
}

int amp__loops_var_add(amp__loops_ctx *k, int n)
{
    if (k->nv == k->cv && !amp__loops_grow(&k->v, &k->cv, sizeof *k->v, 32, &k->t->oom))
        return -1;
    const amp__clang *cx = k->cx;
    amp__loops_var *v = &k->v[k->nv];
    memset(v, 0, sizeof *v);
    v->node = n;
    v->decl = v->unit = v->loop = v->inc = -1;
    amp__loops_cursor_name(cx, k->n[n].c, v->name, sizeof v->name);
    amp__cx_type ty = cx->clang_getCursorType(k->n[n].c);
    amp__cx_type can = cx->clang_getCanonicalType(ty);
    amp__clang_text(cx, cx->clang_getTypeSpelling(can), v->type, sizeof v->type);
    v->is_const = cx->clang_isConstQualifiedType(can) != 0;
    v->is_volatile = cx->clang_isVolatileQualifiedType(can) != 0;
    v->is_ref = can.kind == AMP__CXT_LValueReference || can.kind == AMP__CXT_RValueReference;
    v->is_array = can.kind == AMP__CXT_ConstantArray || can.kind == AMP__CXT_IncompleteArray ||
                  can.kind == AMP__CXT_VariableArray || can.kind == AMP__CXT_DependentSizedArray;
    v->size = cx->clang_Type_getSizeOf(can);
    v->is_param = k->n[n].kind == AMP__CX_ParmDecl;
    k->n[n].var = k->nv;
    return k->nv++;
}

/* Record operator node p as a modification of v. */
static void note_mod(amp__loops_var *v, int p)
{
    if (v->nmods < 16) v->mods[v->nmods] = p;
    v->nmods++;
}

/* Whether operator node p is the whole of a promoted update of variable v. */
bool amp__loops_promoted_update_of(const amp__loops_ctx *k, int p, int vi)
{
    int s = p;
    while (s >= 0 && !k->n[s].promoted) {
        int q = k->n[s].parent;
        if (q < 0 || (k->n[q].kind != AMP__CX_UnexposedExpr && k->n[q].kind != AMP__CX_ParenExpr && !k->n[q].promoted))
            return false;
        s = q;
    }
    int cond, target;
    return s >= 0 && amp__loops_jump_shape(k, s, &cond, &target) == AMP__JUMP_UPDATE && target == vi &&
           amp__loops_strip(k, s) == p;
}

/* Operator node p updates v in its loop's increment or in a promoted
 * update: a modification the outer flow makes (v may stay uniform), noted
 * as such. */
static bool outer_flow_update(const amp__loops_ctx *k, amp__loops_var *v, int p)
{
    bool in_inc = v->inc >= 0 && k->n[p].b >= k->n[v->inc].b && k->n[p].e <= k->n[v->inc].e;
    if (!in_inc && !amp__loops_promoted_update_of(k, p, (int)(v - k->v))) return false;
    v->modified = true;
    note_mod(v, p);
    return true;
}

/* What the call at node p does with its argument or object cur: true when
 * the call only picks an element of the variable itself (an index's or
 * extent's operator[] or operator()), so the walk goes on from p; false
 * otherwise, with *mod and *addr set where it may modify the variable or
 * take its address (anything unresolved counts). */
static bool call_passes_through(amp__loops_ctx *k, int p, int cur, bool *mod, bool *addr)
{
    const amp__clang *cx = k->cx;
    amp__cx_cursor f = cx->clang_getCursorReferenced(k->n[p].c);
    if (amp__loops_cursor_null(cx, f)) {
        *mod = *addr = true;
        return false;
    }
    int fk = cx->clang_getCursorKind(f);
    char fname[64];
    amp__loops_cursor_name(cx, f, fname, sizeof fname);
    int ai = amp__loops_arg_index(k, p, cur);
    bool member_op = fk == AMP__CX_CXXMethod && !strncmp(fname, "operator", 8);
    if (member_op && ai == 0) {
        amp__cx_cursor cls = cx->clang_getCursorSemanticParent(f);
        if ((!strcmp(fname, "operator[]") || !strcmp(fname, "operator()")) &&
            (amp__loops_is_amp_class(k, cls, "index") || amp__loops_is_amp_class(k, cls, "extent")))
            return true; /* an element of the variable itself */
        if (!cx->clang_CXXMethod_isConst(f) && !cx->clang_CXXMethod_isStatic(f)) *mod = true;
        return false;
    }
    if (ai < 0) {
        /* the object of a member call, or the callee itself */
        if (fk == AMP__CX_CXXMethod && !cx->clang_CXXMethod_isConst(f) && !cx->clang_CXXMethod_isStatic(f))
            *mod = true;
        return false;
    }
    amp__cx_type ft = cx->clang_getCursorType(f);
    int pi = member_op ? ai - 1 : ai;
    int np = cx->clang_getNumArgTypes(ft);
    if (pi < 0 || pi >= np) {
        if (np < 0) *mod = true; /* variadic or unknown */
        return false;
    }
    amp__cx_type pt = cx->clang_getCanonicalType(cx->clang_getArgType(ft, (unsigned)pi));
    if (pt.kind == AMP__CXT_LValueReference || pt.kind == AMP__CXT_RValueReference) {
        amp__cx_type pe = cx->clang_getCanonicalType(cx->clang_getPointeeType(pt));
        if (!cx->clang_isConstQualifiedType(pe) || pt.kind == AMP__CXT_RValueReference) *mod = true;
    }
    return false;
}

/* What a reference to variable v at node r does to it: sets v->modified
 * and v->addr_taken conservatively (anything unclear counts). */
void amp__loops_ref_effect(amp__loops_ctx *k, amp__loops_var *v, int r)
{
    const amp__clang *cx = k->cx;
    int cur = r;
    int site = -1;
    bool mod = false, addr = false, unsure = false;
    for (;;) {
        int p = k->n[cur].parent;
        if (p < 0) break;
        amp__loops_node *px = &k->n[p];
        int kind = px->kind;
        if (kind == AMP__CX_ParenExpr) {
            cur = p;
            continue;
        }
        if (kind == AMP__CX_UnexposedExpr) {
            amp__cx_type pt = cx->clang_getCanonicalType(cx->clang_getCursorType(px->c));
            amp__cx_type ct = cx->clang_getCanonicalType(cx->clang_getCursorType(k->n[cur].c));
            bool decay = pt.kind == AMP__CXT_Pointer &&
                         (ct.kind == AMP__CXT_ConstantArray || ct.kind == AMP__CXT_IncompleteArray);
            if (decay) {
                int g = px->parent;
                if (g >= 0 && k->n[g].kind == AMP__CX_ArraySubscriptExpr && k->n[g].first == p) {
                    cur = g; /* element of the array: still this variable's storage */
                    continue;
                }
                addr = true; /* the array's address escapes */
                break;
            }
            cur = p;
            continue;
        }
        if (kind == AMP__CX_MemberRefExpr) {
            amp__cx_cursor m = cx->clang_getCursorReferenced(px->c);
            int mk = cx->clang_getCursorKind(m);
            if (mk == AMP__CX_FieldDecl) {
                cur = p;
                continue;
            }
            if (mk == AMP__CX_CXXMethod || mk == AMP__CX_ConversionFunction) {
                if (!cx->clang_CXXMethod_isConst(m) && !cx->clang_CXXMethod_isStatic(m)) mod = true;
            } else if (mk != AMP__CX_VarDecl) {
                mod = true; /* unresolved member */
            }
            break;
        }
        if (kind == AMP__CX_ArraySubscriptExpr) {
            if (px->first == cur) {
                amp__cx_type bt = cx->clang_getCanonicalType(cx->clang_getCursorType(k->n[cur].c));
                if (bt.kind == AMP__CXT_Pointer) break; /* pointee, not the variable */
                cur = p;
                continue;
            }
            break; /* used as an index: read */
        }
        if (kind == AMP__CX_CallExpr) {
            if (call_passes_through(k, p, cur, &mod, &addr)) {
                cur = p;
                continue;
            }
            break;
        }
        if (kind == AMP__CX_UnaryOperator) {
            const char *op = amp__loops_unary_op(k, p);
            if (!op) {
                mod = addr = unsure = true;
            } else if (!strcmp(op, "++") || !strcmp(op, "--")) {
                mod = true;
                site = p;
                if (outer_flow_update(k, v, p)) return;
            } else if (!strcmp(op, "&")) {
                addr = true;
            } else if (!strcmp(op, "?")) {
                mod = addr = unsure = true;
            }
            break;
        }
        if (kind == AMP__CX_BinaryOperator || kind == AMP__CX_CompoundAssignOperator) {
            if (px->first != cur) break;
            unsigned op = amp__loops_binary_op(k, p);
            bool assign = kind == AMP__CX_CompoundAssignOperator || op == ~0u || amp__loops_is_assign_op(k->t, op);
            if (assign) {
                mod = true;
                site = p;
                if (outer_flow_update(k, v, p)) return;
            }
            break;
        }
        if (kind == AMP__CX_ConditionalOperator) {
            if (px->first != cur) {
                cur = p;
                continue;
            }
            break;
        }
        if (kind == AMP__CX_VarDecl) {
            amp__cx_type vt = cx->clang_getCanonicalType(cx->clang_getCursorType(px->c));
            if (vt.kind == AMP__CXT_LValueReference || vt.kind == AMP__CXT_RValueReference) {
                addr = true;
                amp__cx_type pe = cx->clang_getCanonicalType(cx->clang_getPointeeType(vt));
                if (!cx->clang_isConstQualifiedType(pe)) mod = true;
            }
            break;
        }
        if (kind == AMP__CX_LambdaExpr || kind == AMP__CX_CXXForRangeStmt || kind == AMP__CX_InitListExpr) {
            /* captured, iterated (by reference?), or aggregate-initialising
             * something that may hold a reference */
            if (kind != AMP__CX_InitListExpr) mod = addr = true;
            break;
        }
        break;
    }
    /* A const scalar cannot change; an operator the analysis cannot read
     * (inside a macro) is taken to be harmless for it. */
    bool fixed = v->is_const && !v->is_array;
    if (mod && !fixed) {
        v->modified = true;
        v->mod_outside_inc = true;
        note_mod(v, site >= 0 ? site : r);
    }
    if (addr && !(fixed && unsure)) v->addr_taken = true;
}
