/* purity.c — the loop transformation's purity check: whether an expression is uniform (the same in every work-item of a tile, reading no memory), a pure function of the work-item's index and uniform values (recomputable in any region), or neither. */
#include "loops.h"

#include <string.h>

static int pmin(int a, int b) { return a < b ? a : b; }

/* A function of the preludes that is pure: *level says how (uniform, or
 * per work-item: the HIP thread index). */
static bool pure_prelude_fn(amp__loops_ctx *k, amp__cx_cursor f, int call, int *level)
{
    const amp__clang *cx = k->cx;
    char name[96];
    amp__loops_cursor_name(cx, f, name, sizeof name);
    int fk = cx->clang_getCursorKind(f);
    amp__cx_cursor par = cx->clang_getCursorSemanticParent(f);
    *level = AMP__PURE_UNIFORM;
    if (fk == AMP__CX_CXXMethod || fk == AMP__CX_Constructor || fk == AMP__CX_ConversionFunction) {
        if (amp__loops_is_amp_class(k, par, "index") || amp__loops_is_amp_class(k, par, "extent")) {
            static const char *const ok[] = {"index", "extent", "operator[]", "operator()", "operator+",
                                             "operator-", "operator*", "operator/", "operator%",
                                             "operator==", "operator!=", "size", "contains"};
            for (size_t i = 0; i < sizeof ok / sizeof ok[0]; ++i)
                if (!strcmp(name, ok[i])) return fk != AMP__CX_CXXMethod || cx->clang_CXXMethod_isConst(f) ||
                                                   !strcmp(name, "operator[]") || !strcmp(name, "operator()");
            return false;
        }
        if (amp__loops_is_amp_class(k, par, "tiled_index"))
            return !strcmp(name, "tile_extent") || !strncmp(name, "operator index", 14) ||
                   !strcmp(name, "tiled_index");
        if (amp__loops_is_amp_class(k, par, "array_view") || amp__loops_is_amp_class(k, par, "array"))
            return !strcmp(name, "get_extent") || !strcmp(name, "array_view") || !strcmp(name, "array") ||
                   !strcmp(name, "data") || !strncmp(name, "operator array_view", 19);
        return false;
    }
    if (fk == AMP__CX_FunctionDecl) {
        char ns[32];
        amp__loops_cursor_name(cx, par, ns, sizeof ns);
        if (!strcmp(ns, "amp")) {
            static const char *const ok[] = {"operator+", "operator-", "operator*", "operator/",
                                             "operator%", "operator==", "operator!="};
            for (size_t i = 0; i < sizeof ok / sizeof ok[0]; ++i)
                if (!strcmp(name, ok[i])) return true;
            return false;
        }
        if (!strcmp(ns, "cpu") && !strcmp(name, "geometry")) {
            /* blockIdx/blockDim/gridDim are uniform; threadIdx is per work-item
             * and needs the current work-item recorded (needs_local). */
            int arg = amp__loops_nth_child(k, call, 1);
            char an[64] = "";
            int a = amp__loops_strip(k, arg);
            if (a >= 0 && k->n[a].kind == AMP__CX_DeclRefExpr) amp__loops_cursor_name(cx, k->n[a].c, an, sizeof an);
            if (!strcmp(an, "G_THREAD")) {
                *level = AMP__PURE_REMAT;
                k->needs_local = true;
            } else if (strcmp(an, "G_BLOCK") && strcmp(an, "G_BLOCKDIM") && strcmp(an, "G_GRIDDIM")) {
                return false;
            }
            return true;
        }
        if (ns[0] == 0) {
            static const char *const ok[] = {"min", "max", "umin", "umax"};
            for (size_t i = 0; i < sizeof ok / sizeof ok[0]; ++i)
                if (!strcmp(name, ok[i])) return true;
        }
    }
    return false;
}

/* A pure function of the C library's mathematics. */
static bool pure_system_fn(const amp__loops_ctx *k, amp__cx_cursor f)
{
    char name[64];
    amp__loops_cursor_name(k->cx, f, name, sizeof name);
    static const char *const ok[] = {"abs",   "labs",  "fabs",  "fabsf", "sqrt",  "sqrtf", "floor",
                                     "floorf", "ceil", "ceilf", "fmin",  "fminf", "fmax",  "fmaxf",
                                     "exp",   "expf",  "log",   "logf",  "log2",  "log2f", "pow",
                                     "powf",  "sin",   "sinf",  "cos",   "cosf",  "trunc", "truncf",
                                     "round", "roundf"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; ++i)
        if (!strcmp(name, ok[i])) return true;
    return false;
}

/* How pure expression n is: AMP__PURE_UNIFORM (same in every work-item, reads no
 * memory), AMP__PURE_REMAT (a pure function of the work-item's index and uniform
 * values) or AMP__PURE_NO. self: a variable the expression may update (a loop's
 * increment), or -1. */
int amp__loops_purity(amp__loops_ctx *k, int n, int self)
{
    const amp__clang *cx = k->cx;
    amp__loops_tu *t = k->t;
    amp__loops_node *x = &k->n[n];
    int lvl = AMP__PURE_UNIFORM;
    switch (x->kind) {
    case AMP__CX_IntegerLiteral: case AMP__CX_FloatingLiteral: case AMP__CX_CharacterLiteral:
    case AMP__CX_CXXBoolLiteralExpr: case AMP__CX_CXXNullPtrLiteralExpr: case AMP__CX_StringLiteral:
    case 43: /* TypeRef */ case 45: /* TemplateRef */ case 46: /* NamespaceRef */
        return AMP__PURE_UNIFORM;
    case AMP__CX_ParenExpr: case AMP__CX_UnexposedExpr: case AMP__CX_CStyleCastExpr:
    case AMP__CX_CXXStaticCastExpr: case AMP__CX_CXXFunctionalCastExpr: case AMP__CX_ConditionalOperator:
    case AMP__CX_UnaryExpr:
        break;
    case AMP__CX_UnaryOperator: {
        const char *op = amp__loops_unary_op(k, n);
        if (!op || !strcmp(op, "?") || !strcmp(op, "&") || !strcmp(op, "*")) return AMP__PURE_NO;
        if (!strcmp(op, "++") || !strcmp(op, "--")) {
            int o = amp__loops_strip(k, x->first);
            if (self < 0 || o < 0 || k->n[o].kind != AMP__CX_DeclRefExpr || k->n[o].var != self) return AMP__PURE_NO;
            return AMP__PURE_UNIFORM;
        }
        break;
    }
    case AMP__CX_BinaryOperator: case AMP__CX_CompoundAssignOperator: {
        unsigned op = amp__loops_binary_op(k, n);
        if (op == ~0u) return AMP__PURE_NO;
        if (x->kind == AMP__CX_CompoundAssignOperator || amp__loops_is_assign_op(t, op)) {
            int o = amp__loops_strip(k, x->first);
            if (self < 0 || o < 0 || k->n[o].kind != AMP__CX_DeclRefExpr || k->n[o].var != self) return AMP__PURE_NO;
            int r = k->n[x->first].next;
            return r >= 0 ? amp__loops_purity(k, r, self) : AMP__PURE_NO;
        }
        break;
    }
    case AMP__CX_DeclRefExpr: {
        if (x->var >= 0) {
            amp__loops_var *v = &k->v[x->var];
            if (x->var == self) return AMP__PURE_UNIFORM;
            if (v->is_tidx) return AMP__PURE_REMAT;
            if (v->is_param) return v->modified ? AMP__PURE_NO : AMP__PURE_UNIFORM;
            if (v->cls == AMP__VAR_UNIFORM) return AMP__PURE_UNIFORM;
            if (v->cls == AMP__VAR_REMAT) return AMP__PURE_REMAT;
            return AMP__PURE_NO;
        }
        amp__cx_cursor r = cx->clang_getCursorReferenced(x->c);
        if (amp__loops_cursor_null(cx, r)) return AMP__PURE_NO;
        int rk = cx->clang_getCursorKind(r);
        if (rk == AMP__CX_EnumConstantDecl || rk == AMP__CX_FunctionDecl || rk == AMP__CX_CXXMethod ||
            rk == AMP__CX_Constructor || rk == AMP__CX_ConversionFunction)
            return AMP__PURE_UNIFORM;
        if (rk == AMP__CX_VarDecl) {
            /* A constant outside the kernel (namespace scope, static member). */
            unsigned b, e;
            amp__loops_cursor_span(t, r, &b, &e, NULL);
            bool in_body = b >= k->n[k->body].b && b < k->n[k->body].e;
            amp__cx_type vt = cx->clang_getCanonicalType(cx->clang_getCursorType(r));
            if (!in_body && cx->clang_isConstQualifiedType(vt)) return AMP__PURE_UNIFORM;
        }
        return AMP__PURE_NO;
    }
    case AMP__CX_MemberRefExpr: {
        amp__cx_cursor m = cx->clang_getCursorReferenced(x->c);
        int mk = amp__loops_cursor_null(cx, m) ? -1 : cx->clang_getCursorKind(m);
        if (mk == AMP__CX_FieldDecl) {
            int base = amp__loops_strip(k, x->first);
            if (base >= 0 && k->n[base].kind == AMP__CX_DeclRefExpr && k->n[base].var >= 0 &&
                k->v[k->n[base].var].is_tidx) {
                char fname[32];
                amp__loops_cursor_name(cx, m, fname, sizeof fname);
                if (!strcmp(fname, "tile") || !strcmp(fname, "tile_origin") || !strcmp(fname, "barrier"))
                    return AMP__PURE_UNIFORM;
                return AMP__PURE_REMAT;
            }
            break;
        }
        if (mk == AMP__CX_CXXMethod || mk == AMP__CX_ConversionFunction) break; /* the call decides */
        if (mk == AMP__CX_VarDecl) {
            amp__cx_type vt = cx->clang_getCanonicalType(cx->clang_getCursorType(m));
            if (cx->clang_isConstQualifiedType(vt)) return AMP__PURE_UNIFORM;
        }
        return AMP__PURE_NO;
    }
    case AMP__CX_CallExpr: {
        amp__cx_cursor f = cx->clang_getCursorReferenced(x->c);
        if (amp__loops_cursor_null(cx, f)) return AMP__PURE_NO;
        unsigned off;
        bool in_main;
        amp__cx_loc fl = cx->clang_getCursorLocation(f);
        amp__loops_loc_offset(t, fl, &off, &in_main);
        if (in_main && off < t->user_start) {
            int l;
            if (!pure_prelude_fn(k, f, n, &l)) return AMP__PURE_NO;
            lvl = l;
        } else if (!in_main && cx->clang_Location_isInSystemHeader(fl)) {
            if (!pure_system_fn(k, f)) return AMP__PURE_NO;
        } else {
            return AMP__PURE_NO;
        }
        break;
    }
    default:
        return AMP__PURE_NO;
    }
    for (int c = x->first; c >= 0 && lvl > AMP__PURE_NO; c = k->n[c].next)
        lvl = pmin(lvl, amp__loops_purity(k, c, self));
    return lvl;
}
