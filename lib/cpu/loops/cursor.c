/* cursor.c — the loop transformation's clang cursor layer: file offsets of cursors, the user part's tokens, the tree of one kernel's nodes, and what a node's operator or callee is. */
#include "loops.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool amp__loops_grow(void *pp, int *cap, size_t elem, int first, bool *oom)
{
    void *p;
    memcpy(&p, pp, sizeof p);
    int nc = *cap ? *cap * 2 : first;
    void *q = realloc(p, (size_t)nc * elem);
    if (!q) {
        *oom = true;
        return false;
    }
    memcpy(pp, &q, sizeof q);
    *cap = nc;
    return true;
}

void amp__loops_fallback(amp__loops_ctx *k, const char *fmt, ...)
{
    if (k->why[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(k->why, sizeof k->why, fmt, ap);
    va_end(ap);
}

/* -------------------------------------------------- positions, tokens */

/* A position in the precompiled library part (a parse with job->pch)
 * reads as offset 0 of the main file, where the library's text is when
 * the whole is parsed: the passes then treat it as they treat that text
 * (everything below user_start is the library's, and its text is never
 * read, only its declarations). */
void amp__loops_loc_offset(const amp__loops_tu *t, amp__cx_loc l, unsigned *off, bool *in_main)
{
    amp__cx_file f = NULL;
    unsigned o = 0;
    t->cx->clang_getFileLocation(l, &f, NULL, NULL, &o);
    bool lib = f && t->lib_file && t->cx->clang_File_isEqual(f, t->lib_file);
    *off = lib ? 0 : o;
    if (in_main) *in_main = f && (lib || t->cx->clang_File_isEqual(f, t->file));
}

void amp__loops_cursor_span(const amp__loops_tu *t, amp__cx_cursor c, unsigned *b, unsigned *e, bool *in_main)
{
    amp__cx_range r = t->cx->clang_getCursorExtent(c);
    amp__loops_loc_offset(t, t->cx->clang_getRangeStart(r), b, in_main);
    amp__loops_loc_offset(t, t->cx->clang_getRangeEnd(r), e, NULL);
    if (*e < *b) *e = *b;
}

void amp__loops_cursor_name(const amp__clang *cx, amp__cx_cursor c, char *buf, size_t cap)
{
    amp__clang_text(cx, cx->clang_getCursorSpelling(c), buf, cap);
}

bool amp__loops_cursor_null(const amp__clang *cx, amp__cx_cursor c)
{
    return cx->clang_Cursor_isNull(c) || (c.kind >= 70 && c.kind <= 73);
}

/* First token starting at or after off. */
unsigned amp__loops_tok_find(const amp__loops_tu *t, unsigned off)
{
    unsigned lo = 0, hi = t->ntoks;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (t->tb[mid] < off) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

bool amp__loops_tok_is(const amp__loops_tu *t, unsigned i, const char *s)
{
    size_t n = strlen(s);
    return i < t->ntoks && t->te[i] - t->tb[i] == n && !memcmp(t->src + t->tb[i], s, n);
}

bool amp__loops_is_assign_op(const amp__loops_tu *t, unsigned i)
{
    static const char *const ops[] = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; ++k)
        if (amp__loops_tok_is(t, i, ops[k])) return true;
    return false;
}

/* ---------------------------------------------------------- node tree */

typedef struct build_arg {
    amp__loops_ctx *k;
    int parent, last;
} build_arg;

static int build_visit(amp__cx_cursor c, amp__cx_cursor parent, void *data);

static int node_add(amp__loops_ctx *k, amp__cx_cursor c, int parent)
{
    if (k->nn == k->cn && !amp__loops_grow(&k->n, &k->cn, sizeof *k->n, 512, &k->t->oom))
        return -1;
    const amp__clang *cx = k->cx;
    amp__loops_node *x = &k->n[k->nn];
    memset(x, 0, sizeof *x);
    x->c = c;
    x->kind = cx->clang_getCursorKind(c);
    x->parent = parent;
    x->first = x->next = -1;
    x->var = -1;
    amp__loops_cursor_span(k->t, c, &x->b, &x->e, NULL);
    amp__cx_file sf = NULL;
    unsigned so = 0;
    amp__cx_range r = cx->clang_getCursorExtent(c);
    cx->clang_getSpellingLocation(cx->clang_getRangeStart(r), &sf, NULL, NULL, &so);
    x->sb = so;
    x->macro = so != x->b || !sf || !cx->clang_File_isEqual(sf, k->t->file);
    return k->nn++;
}

static int build_visit(amp__cx_cursor c, amp__cx_cursor parent, void *data)
{
    build_arg *a = data;
    amp__loops_ctx *k = a->k;
    int id = node_add(k, c, a->parent);
    if (id < 0) return AMP__CXV_Break;
    if (a->last >= 0) k->n[a->last].next = id;
    else if (a->parent >= 0) k->n[a->parent].first = id;
    a->last = id;
    build_arg sub = {k, id, -1};
    k->cx->clang_visitChildren(c, build_visit, &sub);
    return k->t->oom ? AMP__CXV_Break : AMP__CXV_Continue;
}

/* The tree of the kernel's function k->fn: node 0 is the function itself. */
void amp__loops_build_tree(amp__loops_ctx *k)
{
    build_arg a = {k, -1, -1};
    build_visit(k->fn, k->fn, &a);
}

int amp__loops_nth_child(const amp__loops_ctx *k, int n, int i)
{
    int c = k->n[n].first;
    while (c >= 0 && i-- > 0) c = k->n[c].next;
    return c;
}

int amp__loops_nchildren(const amp__loops_ctx *k, int n)
{
    int m = 0;
    for (int c = k->n[n].first; c >= 0; c = k->n[c].next) ++m;
    return m;
}

/* Skip implicit wrappers (UnexposedExpr, ParenExpr) downwards. */
int amp__loops_strip(const amp__loops_ctx *k, int n)
{
    while (n >= 0 && (k->n[n].kind == AMP__CX_UnexposedExpr || k->n[n].kind == AMP__CX_ParenExpr) &&
           k->n[n].first >= 0 && k->n[k->n[n].first].next < 0)
        n = k->n[n].first;
    return n;
}

bool amp__loops_inside(const amp__loops_ctx *k, int n, int anc)
{
    for (; n >= 0; n = k->n[n].parent)
        if (n == anc) return true;
    return false;
}

/* ------------------------------------------------------ what a node is */

/* The operator token of a unary operator node: "++", "&", ...; NULL when it
 * cannot be read (macro). */
const char *amp__loops_unary_op(const amp__loops_ctx *k, int p)
{
    const amp__loops_tu *t = k->t;
    const amp__loops_node *x = &k->n[p];
    if (x->macro) return NULL;
    static const char *const ops[] = {"++", "--", "&", "*", "-", "+", "!", "~", "__extension__"};
    unsigned i = amp__loops_tok_find(t, x->b);
    for (size_t j = 0; j < sizeof ops / sizeof ops[0]; ++j)
        if (i < t->ntoks && t->tb[i] == x->b && amp__loops_tok_is(t, i, ops[j])) return ops[j];
    /* postfix: the last token of the range */
    unsigned last = amp__loops_tok_find(t, x->e);
    if (last > 0 && t->te[last - 1] == x->e) {
        if (amp__loops_tok_is(t, last - 1, "++")) return "++";
        if (amp__loops_tok_is(t, last - 1, "--")) return "--";
    }
    return "?";
}

/* The operator token index of a binary operator node, or ~0u. */
unsigned amp__loops_binary_op(const amp__loops_ctx *k, int p)
{
    const amp__loops_tu *t = k->t;
    if (k->n[p].macro) return ~0u;
    int l = k->n[p].first;
    if (l < 0 || k->n[l].next < 0) return ~0u;
    int r = k->n[l].next;
    unsigned i = amp__loops_tok_find(t, k->n[l].e);
    if (i < t->ntoks && t->tb[i] < k->n[r].b) return i;
    return ~0u;
}

bool amp__loops_is_amp_class(const amp__loops_ctx *k, amp__cx_cursor cls, const char *which)
{
    char name[64];
    amp__loops_cursor_name(k->cx, cls, name, sizeof name);
    if (strcmp(name, which)) return false;
    char ns[32];
    amp__loops_cursor_name(k->cx, k->cx->clang_getCursorSemanticParent(cls), ns, sizeof ns);
    return !strcmp(ns, "amp");
}

/* The argument position of node a in call c, or -1. */
int amp__loops_arg_index(const amp__loops_ctx *k, int c, int a)
{
    int nargs = k->cx->clang_Cursor_getNumArguments(k->n[c].c);
    for (int i = 0; i < nargs; ++i) {
        amp__cx_cursor ac = k->cx->clang_Cursor_getArgument(k->n[c].c, (unsigned)i);
        unsigned b, e;
        amp__loops_cursor_span(k->t, ac, &b, &e, NULL);
        if (b == k->n[a].b && e == k->n[a].e) return i;
    }
    return -1;
}

/* The initialiser of variable vi: an expression child starting after the
 * declarator's name and after a '=' or '{' (so not an array bound, a
 * template argument of its type, or the implicit construction C++ reports
 * at the name itself). -1 when it has none the analysis can use. */
int amp__loops_var_init(amp__loops_ctx *k, int vi)
{
    const amp__loops_var *v = &k->v[vi];
    unsigned name_off = 0;
    amp__loops_loc_offset(k->t, k->cx->clang_getCursorLocation(k->n[v->node].c), &name_off, NULL);
    int init = -1;
    for (int c = k->n[v->node].first; c >= 0; c = k->n[c].next) {
        int kind = k->n[c].kind;
        if (kind < 100 || kind >= 200 || k->n[c].b <= name_off) continue;
        unsigned i = amp__loops_tok_find(k->t, name_off);
        bool eq = false;
        for (; i < k->t->ntoks && k->t->tb[i] < k->n[c].b; ++i)
            if (amp__loops_tok_is(k->t, i, "=") || amp__loops_tok_is(k->t, i, "{")) eq = true;
        if (eq) init = c;
    }
    return init;
}
