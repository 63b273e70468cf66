/* cpu_loops.c — the CPU accelerator's loop transformation ("deep fission" at the source level): parses the assembled translation unit with libclang, and for each tiled kernel whose barriers sit in work-item-uniform control flow writes a second version that runs a whole tile as loops over its work-items between barriers, inserted after the kernel; other kernels keep the fiber path with the reason recorded.
 *
 * What a transformed kernel looks like (generated text, after the body of
 * NAME__amp_body, under a #line that restores the user's numbering):
 *
 *   static AMP_FI bool NAME__amp_loops(amp__cpu_item *amp__it, const P1 a, ...)
 *   {
 *       tile_static arrays, hoisted to plain locals (the function runs one tile)
 *       ctx<T, tile threads> amp__c_x;   one slot per work-item for each
 *                                         variable a later region still reads
 *       uniform control flow of the body (loops and ifs holding barriers)
 *       around "regions": the code between two barriers, each wrapped in
 *       loops over the tile's work-items, contiguous dimension innermost.
 *   }
 *   extern "C" void NAME__amp_tiles(amp__cpu_item *);  runs tiles [begin, end)
 *   extern "C" const char NAME__amp_cpu_path[] = "loops" | "fibers: <why>";
 *
 * Variables that cross a barrier are sorted into three kinds (MCUDA's
 * "selective replication", PoCL's context arrays and uniformity analysis):
 *   uniform  the same value in every work-item (its initialiser and updates
 *            read only kernel parameters, constants, tile coordinates and
 *            other uniform variables, and read no memory): computed once per
 *            tile in the outer control flow; regions see a const copy.
 *   remat    never modified, initialiser a pure function of the work-item's
 *            index and uniform values: recomputed at the top of each region
 *            that uses it (as a const, so a missed modification cannot
 *            compile rather than silently diverge).
 *   private  anything else: stored at the end of the region that declares
 *            it into its context slot; later regions bind a reference to it.
 * Conditions of control flow that holds a barrier are used directly when
 * uniform; otherwise every work-item evaluates its own and they must agree,
 * else the tile stops with a divergent-barrier error (GPUs hang or misbehave).
 * A return, break or continue under a uniform condition, and updates of a
 * variable that stay uniform (stride *= 2), move to the outer flow too (a
 * second planning pass, after the first classification found them).
 * Returns after the last barrier end the work-item (a goto to the end of its
 * loop iteration).
 *
 * Soundness: anything not understood keeps the kernel on fibers (a barrier
 * under a call the analysis cannot see through, under a macro that spans
 * several statements, in a switch, a jump crossing a barrier under a
 * condition that differs between work-items, references or lambdas or
 * addresses living across a barrier, ...). Where a classification could be
 * wrong, the generated code declares the copy const so the mistake fails to
 * compile, and a loop version that does not compile is turned off
 * (cpu_compile.c, which also runs this file's transformation in a child
 * process, under the compile deadline). */
#include "cpu_clang.h"
#include "cpu_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Work-item context and hoisted tile_static memory of one loop version may
 * take at most this much stack (the loop runner's stack is sized for it:
 * cpu_run.c); a kernel needing more stays on fibers. */
#define AMP__LOOPS_FRAME_MAX AMP__CPU_LOOP_FRAME_MAX

/* Double the array *pp (elem-byte elements, *cap of them; first when
 * empty). false, with *oom set and the array unchanged, when out of memory.
 * pp is the address of the array pointer (of any element type). */
static bool grow(void *pp, int *cap, size_t elem, int first, bool *oom)
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

/* ------------------------------------------------------- string builder */

/* A C string literal's contents. */
static void sb_cstring(amp__sb *s, const char *t)
{
    for (; *t; ++t) {
        if (*t == '"' || *t == '\\') amp__sb_printf(s, "\\%c", *t);
        else if ((unsigned char)*t < 32) amp__sb_printf(s, "\\%03o", (unsigned)(unsigned char)*t);
        else amp__sb_put(s, t, 1);
    }
}

/* ---------------------------------------------------------------- model */

/* One AST node of a kernel body: offsets are file positions in the source
 * (where a macro's expansion starts, for nodes written in a macro body). */
typedef struct node {
    amp__cx_cursor c;
    int kind;
    unsigned b, e;   /* file range [b, e) */
    unsigned sb;     /* spelling position of the first token */
    bool macro;      /* spelled in a macro body (its text is not at [b, e)) */
    int parent, first, next;
    int var;         /* DeclRefExpr/VarDecl/ParmDecl: index in vars, else -1 */
    bool barrier;    /* subtree calls a barrier (lambda bodies excluded) */
    bool promoted;   /* a uniform jump or update moved to the outer flow */
    bool candidate;  /* a jump planning would have refused: promoted if uniform */
} node;

enum { V_LOCAL = 0, V_UNIFORM, V_REMAT, V_PRIVATE, V_TILE_STATIC, V_PARAM };

typedef struct var {
    int node;        /* its VarDecl / ParmDecl */
    int decl;        /* DeclStmt node holding it (structure variables), else -1 */
    int unit;        /* unit declaring it (structure variables), else -1 */
    int loop;        /* ForStmt whose init declares it, else -1 */
    int inc;         /* that loop's increment expression, else -1 */
    char name[128];
    char type[512];  /* canonical type spelling */
    bool is_const, is_ref, is_array, is_param, is_tidx, structure, has_init;
    bool modified, addr_taken, mod_outside_inc;
    bool cross;      /* referenced outside its declaring unit */
    int mods[16];    /* the operators that modify it (nmods > 16: too many to promote) */
    int nmods;
    int cls;
    long long size;
} var;

enum { U_REGION, U_COND, U_INIT, U_INC, U_STMT };
/* Shapes of statements that can move to the outer flow. */
enum { UJ_NONE, UJ_RETURN, UJ_BREAK, UJ_CONTINUE, UJ_UPDATE };

typedef struct unit {
    int kind;
    unsigned b, e;      /* span of its text */
    int owner;          /* structure node (for/while/if/do) for COND/INIT/INC */
    int first, last;    /* REGION: first and last child node of the run */
    bool final;         /* REGION: nothing runs after it in the kernel */
    bool uniform;       /* COND/INIT/INC: evaluated once in the outer flow */
} unit;

typedef struct edit {
    unsigned b, e;
    char *text; /* malloc'ed replacement */
} edit;

/* Function classification memo: does calling it possibly reach a barrier? */
enum { F_SAFE = 1, F_BARRIER, F_MAYBE, F_BUSY };
typedef struct fmemo {
    char *usr;
    int cls;
    char why[160];
} fmemo;

typedef struct tu_ctx {
    const amp__clang *cx;
    amp__cx_tu tu;
    amp__cx_file file;
    const char *src;
    size_t len;
    unsigned user_start;
    amp__cx_token *toks;
    unsigned ntoks;
    unsigned *tb, *te; /* token offsets */
    fmemo *memo;
    int nmemo, cmemo;
    /* user macro definitions (name, offset, text range) */
    struct mdef { char name[96]; unsigned b, e; } *mdefs;
    int nmdefs, cmdefs;
    /* macro expansions in the user's part: where, and which definition */
    struct mexp { unsigned off, def; } *mexps;
    int nmexps, cmexps;
    bool oom;
} tu_ctx;

typedef struct kctx {
    tu_ctx *t;
    const amp__clang *cx;
    char name[256];
    amp__cx_cursor fn;
    node *n;
    int nn, cn;
    var *v;
    int nv, cv;
    unit *u;
    int nu, cu;
    edit *ed;
    int ned, ced;
    int body;      /* CompoundStmt node */
    int tidx;      /* var index of the tiled_index parameter */
    int dims[3];
    int threads;
    bool needs_local;
    char why[256];
    int hoist[64]; /* structure-level declarations of types only: hoisted */
    int nhoist;
    int emit_unit; /* emit pass: next unit */
    bool cont_ok[64]; /* emit pass: does `continue` in the innermost loop emitted so far do what it did */
    int ncont;
    int label;
    amp__sb out;
} kctx;

static void fallback(kctx *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fallback(kctx *k, const char *fmt, ...)
{
    if (k->why[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(k->why, sizeof k->why, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------- helpers */

static void loc_offset(const tu_ctx *t, amp__cx_loc l, unsigned *off, bool *in_main)
{
    amp__cx_file f = NULL;
    unsigned o = 0;
    t->cx->clang_getFileLocation(l, &f, NULL, NULL, &o);
    *off = o;
    if (in_main) *in_main = f && t->cx->clang_File_isEqual(f, t->file);
}

static void cursor_span(const tu_ctx *t, amp__cx_cursor c, unsigned *b, unsigned *e, bool *in_main)
{
    amp__cx_range r = t->cx->clang_getCursorExtent(c);
    loc_offset(t, t->cx->clang_getRangeStart(r), b, in_main);
    loc_offset(t, t->cx->clang_getRangeEnd(r), e, NULL);
    if (*e < *b) *e = *b;
}

static void cursor_name(const amp__clang *cx, amp__cx_cursor c, char *buf, size_t cap)
{
    amp__clang_text(cx, cx->clang_getCursorSpelling(c), buf, cap);
}

static bool cursor_null(const amp__clang *cx, amp__cx_cursor c)
{
    return cx->clang_Cursor_isNull(c) || (c.kind >= 70 && c.kind <= 73);
}

/* First token starting at or after off. */
static unsigned tok_find(const tu_ctx *t, unsigned off)
{
    unsigned lo = 0, hi = t->ntoks;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (t->tb[mid] < off) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static bool tok_is(const tu_ctx *t, unsigned i, const char *s)
{
    size_t n = strlen(s);
    return i < t->ntoks && t->te[i] - t->tb[i] == n && !memcmp(t->src + t->tb[i], s, n);
}

static bool is_assign_op(const tu_ctx *t, unsigned i)
{
    static const char *const ops[] = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; ++k)
        if (tok_is(t, i, ops[k])) return true;
    return false;
}

/* ---------------------------------------------------------- node tree */

typedef struct build_arg {
    kctx *k;
    int parent, last;
} build_arg;

static int build_visit(amp__cx_cursor c, amp__cx_cursor parent, void *data);

static int node_add(kctx *k, amp__cx_cursor c, int parent)
{
    if (k->nn == k->cn && !grow(&k->n, &k->cn, sizeof *k->n, 512, &k->t->oom))
        return -1;
    const amp__clang *cx = k->cx;
    node *x = &k->n[k->nn];
    memset(x, 0, sizeof *x);
    x->c = c;
    x->kind = cx->clang_getCursorKind(c);
    x->parent = parent;
    x->first = x->next = -1;
    x->var = -1;
    cursor_span(k->t, c, &x->b, &x->e, NULL);
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
    kctx *k = a->k;
    int id = node_add(k, c, a->parent);
    if (id < 0) return AMP__CXV_Break;
    if (a->last >= 0) k->n[a->last].next = id;
    else if (a->parent >= 0) k->n[a->parent].first = id;
    a->last = id;
    build_arg sub = {k, id, -1};
    k->cx->clang_visitChildren(c, build_visit, &sub);
    return k->t->oom ? AMP__CXV_Break : AMP__CXV_Continue;
}

static int nth_child(const kctx *k, int n, int i)
{
    int c = k->n[n].first;
    while (c >= 0 && i-- > 0) c = k->n[c].next;
    return c;
}

static int nchildren(const kctx *k, int n)
{
    int m = 0;
    for (int c = k->n[n].first; c >= 0; c = k->n[c].next) ++m;
    return m;
}

/* Skip implicit wrappers (UnexposedExpr, ParenExpr) downwards. */
static int strip(const kctx *k, int n)
{
    while (n >= 0 && (k->n[n].kind == AMP__CX_UnexposedExpr || k->n[n].kind == AMP__CX_ParenExpr) &&
           k->n[n].first >= 0 && k->n[k->n[n].first].next < 0)
        n = k->n[n].first;
    return n;
}

static bool inside(const kctx *k, int n, int anc)
{
    for (; n >= 0; n = k->n[n].parent)
        if (n == anc) return true;
    return false;
}

/* --------------------------------------------------- barrier analysis */

static int fn_class(tu_ctx *t, amp__cx_cursor f, char *why, size_t cap);

typedef struct scan_arg {
    tu_ctx *t;
    int worst;
    char why[160];
    bool dependent; /* a template pattern: unresolved calls may be anything */
} scan_arg;

static int scan_calls(amp__cx_cursor c, amp__cx_cursor parent, void *data)
{
    scan_arg *a = data;
    const amp__clang *cx = a->t->cx;
    int kind = cx->clang_getCursorKind(c);
    if (kind == AMP__CX_LambdaExpr) return AMP__CXV_Continue; /* runs when called, not here */
    if (kind == AMP__CX_CallExpr) {
        amp__cx_cursor r = cx->clang_getCursorReferenced(c);
        char w[160] = "";
        int fc;
        if (cursor_null(cx, r)) {
            fc = F_MAYBE;
            snprintf(w, sizeof w, "%s", a->dependent ? "a call the analysis cannot resolve (template)"
                                                     : "a call through a pointer");
        } else {
            fc = fn_class(a->t, r, w, sizeof w);
        }
        if (fc == F_BARRIER || fc == F_MAYBE) {
            if (a->worst != F_BARRIER || fc == F_BARRIER) {
                if (fc > a->worst || !a->why[0]) snprintf(a->why, sizeof a->why, "%s", w);
            }
            if (fc == F_BARRIER || a->worst != F_BARRIER) a->worst = fc == F_BARRIER ? F_BARRIER : F_MAYBE;
        }
    }
    return AMP__CXV_Recurse;
}

/* Whether calling f may reach a barrier. The preludes are trusted (their
 * barrier functions are known by name); system headers cannot reach one;
 * user functions are analysed through their definitions, memoised by USR. */
static int fn_class(tu_ctx *t, amp__cx_cursor f, char *why, size_t cap)
{
    const amp__clang *cx = t->cx;
    char name[160];
    cursor_name(cx, f, name, sizeof name);
    amp__cx_loc loc = cx->clang_getCursorLocation(f);
    unsigned off = 0;
    bool in_main = false;
    loc_offset(t, loc, &off, &in_main);
    if (in_main && off < t->user_start) {
        if (!strcmp(name, "__syncthreads")) return F_BARRIER;
        if (!strncmp(name, "wait", 4)) {
            char cls[64];
            cursor_name(cx, cx->clang_getCursorSemanticParent(f), cls, sizeof cls);
            if (!strcmp(cls, "tile_barrier")) return F_BARRIER;
        }
        return F_SAFE;
    }
    if (!in_main && cx->clang_Location_isInSystemHeader(loc)) return F_SAFE;
    int fk = cx->clang_getCursorKind(f);
    if (fk == AMP__CX_CXXMethod && cx->clang_CXXMethod_isVirtual(f)) {
        snprintf(why, cap, "a virtual call (%.100s)", name);
        return F_MAYBE;
    }
    char usr[512];
    amp__clang_text(cx, cx->clang_getCursorUSR(f), usr, sizeof usr);
    for (int i = 0; i < t->nmemo; ++i)
        if (!strcmp(t->memo[i].usr, usr)) {
            if (t->memo[i].cls == F_BUSY) return F_SAFE; /* recursion: decided by the outer call */
            snprintf(why, cap, "%s", t->memo[i].why);
            return t->memo[i].cls;
        }
    if (t->nmemo == t->cmemo && !grow(&t->memo, &t->cmemo, sizeof *t->memo, 32, &t->oom))
        return F_MAYBE;
    int mi = t->nmemo++;
    t->memo[mi].usr = amp__strdup(usr);
    t->memo[mi].cls = F_BUSY;
    t->memo[mi].why[0] = 0;
    if (!t->memo[mi].usr) t->oom = true;

    amp__cx_cursor def = cx->clang_getCursorDefinition(f);
    scan_arg a = {t, F_SAFE, "", false};
    if (cursor_null(cx, def)) {
        amp__cx_cursor tmpl = cx->clang_getSpecializedCursorTemplate(f);
        if (!cursor_null(cx, tmpl)) def = cx->clang_getCursorDefinition(tmpl);
        a.dependent = true;
    }
    int cls = F_SAFE;
    if (!cursor_null(cx, def)) {
        cx->clang_visitChildren(def, scan_calls, &a);
        if (a.worst == F_BARRIER) {
            cls = F_MAYBE; /* a barrier inside a helper: not split by this transformation */
            snprintf(t->memo[mi].why, sizeof t->memo[mi].why, "a barrier inside %.100s()", name);
        } else if (a.worst == F_MAYBE) {
            cls = F_MAYBE;
            snprintf(t->memo[mi].why, sizeof t->memo[mi].why, "%.60s() makes %.90s", name, a.why);
        }
    }
    t->memo[mi].cls = cls;
    snprintf(why, cap, "%s", t->memo[mi].why);
    return cls;
}

/* Mark calls in the body (barrier calls, and calls that may reach one) and
 * propagate upwards; lambda bodies are skipped (they run where called). */
static void mark_barriers(kctx *k)
{
    tu_ctx *t = k->t;
    for (int i = 0; i < k->nn; ++i) {
        node *x = &k->n[i];
        if (x->kind != AMP__CX_CallExpr) continue;
        bool in_lambda = false;
        for (int p = x->parent; p >= 0; p = k->n[p].parent)
            if (k->n[p].kind == AMP__CX_LambdaExpr) in_lambda = true;
        if (in_lambda) continue;
        amp__cx_cursor r = k->cx->clang_getCursorReferenced(x->c);
        char why[160] = "";
        int fc = cursor_null(k->cx, r) ? F_MAYBE : fn_class(t, r, why, sizeof why);
        if (fc == F_MAYBE && !why[0]) snprintf(why, sizeof why, "a call through a pointer");
        if (fc == F_BARRIER || fc == F_MAYBE) {
            if (fc == F_MAYBE) {
                /* The transformation splits only the kernel's own body: a
                 * call that may reach a barrier keeps it on fibers. */
                x->barrier = true;
                if (!k->why[0])
                    snprintf(k->why, sizeof k->why, "%s%s", why,
                             strstr(why, "barrier") ? "" : ", which may reach a barrier");
            }
            for (int p = i; p >= 0; p = k->n[p].parent) k->n[p].barrier = true;
        }
    }
}

/* A statement that is exactly a barrier call: tidx.barrier.wait*() or
 * __syncthreads(), its value unused. */
static bool is_barrier_stmt(const kctx *k, int s)
{
    int c = strip(k, s);
    if (c < 0 || k->n[c].kind != AMP__CX_CallExpr) return false;
    if (!k->n[c].barrier) return false;
    /* No barrier among its arguments or object expression. */
    for (int a = k->n[c].first; a >= 0; a = k->n[a].next)
        if (k->n[a].barrier) return false;
    return true;
}

/* -------------------------------------------------- variables and refs */

static int var_of_cursor(kctx *k, amp__cx_cursor c)
{
    for (int i = 0; i < k->nv; ++i)
        if (k->cx->clang_equalCursors(k->n[k->v[i].node].c, c)) return i;
    return -1;
}

static int var_add(kctx *k, int n)
{
    if (k->nv == k->cv && !grow(&k->v, &k->cv, sizeof *k->v, 32, &k->t->oom))
        return -1;
    const amp__clang *cx = k->cx;
    var *v = &k->v[k->nv];
    memset(v, 0, sizeof *v);
    v->node = n;
    v->decl = v->unit = v->loop = v->inc = -1;
    cursor_name(cx, k->n[n].c, v->name, sizeof v->name);
    amp__cx_type ty = cx->clang_getCursorType(k->n[n].c);
    amp__cx_type can = cx->clang_getCanonicalType(ty);
    amp__clang_text(cx, cx->clang_getTypeSpelling(can), v->type, sizeof v->type);
    v->is_const = cx->clang_isConstQualifiedType(can) != 0;
    v->is_ref = can.kind == AMP__CXT_LValueReference || can.kind == AMP__CXT_RValueReference;
    v->is_array = can.kind == AMP__CXT_ConstantArray || can.kind == AMP__CXT_IncompleteArray ||
                  can.kind == AMP__CXT_VariableArray || can.kind == AMP__CXT_DependentSizedArray;
    v->size = cx->clang_Type_getSizeOf(can);
    v->is_param = k->n[n].kind == AMP__CX_ParmDecl;
    k->n[n].var = k->nv;
    return k->nv++;
}

/* The operator token of a unary operator node: "++", "&", ...; NULL when it
 * cannot be read (macro). */
static const char *unary_op(const kctx *k, int p)
{
    const tu_ctx *t = k->t;
    const node *x = &k->n[p];
    if (x->macro) return NULL;
    static const char *const ops[] = {"++", "--", "&", "*", "-", "+", "!", "~", "__extension__"};
    unsigned i = tok_find(t, x->b);
    for (size_t j = 0; j < sizeof ops / sizeof ops[0]; ++j)
        if (i < t->ntoks && t->tb[i] == x->b && tok_is(t, i, ops[j])) return ops[j];
    /* postfix: the last token of the range */
    unsigned last = tok_find(t, x->e);
    if (last > 0 && t->te[last - 1] == x->e) {
        if (tok_is(t, last - 1, "++")) return "++";
        if (tok_is(t, last - 1, "--")) return "--";
    }
    return "?";
}

/* The operator token index of a binary operator node, or ~0u. */
static unsigned binary_op(const kctx *k, int p)
{
    const tu_ctx *t = k->t;
    if (k->n[p].macro) return ~0u;
    int l = k->n[p].first;
    if (l < 0 || k->n[l].next < 0) return ~0u;
    int r = k->n[l].next;
    unsigned i = tok_find(t, k->n[l].e);
    if (i < t->ntoks && t->tb[i] < k->n[r].b) return i;
    return ~0u;
}

static bool is_amp_class(const kctx *k, amp__cx_cursor cls, const char *which)
{
    char name[64];
    cursor_name(k->cx, cls, name, sizeof name);
    if (strcmp(name, which)) return false;
    char ns[32];
    cursor_name(k->cx, k->cx->clang_getCursorSemanticParent(cls), ns, sizeof ns);
    return !strcmp(ns, "amp");
}

/* The argument position of node a in call c, or -1. */
static int arg_index(const kctx *k, int c, int a)
{
    int nargs = k->cx->clang_Cursor_getNumArguments(k->n[c].c);
    for (int i = 0; i < nargs; ++i) {
        amp__cx_cursor ac = k->cx->clang_Cursor_getArgument(k->n[c].c, (unsigned)i);
        unsigned b, e;
        cursor_span(k->t, ac, &b, &e, NULL);
        if (b == k->n[a].b && e == k->n[a].e) return i;
    }
    return -1;
}

/* What a reference to variable v at node r does to it: sets v->modified
 * and v->addr_taken conservatively (anything unclear counts). */
static void note_mod(var *v, int p)
{
    if (v->nmods < 16) v->mods[v->nmods] = p;
    v->nmods++;
}

static int jump_shape(const kctx *k, int s, int *cond, int *target);

/* Whether operator node p is the whole of a promoted update of variable v. */
static bool promoted_update_of(const kctx *k, int p, int vi)
{
    int s = p;
    while (s >= 0 && !k->n[s].promoted) {
        int q = k->n[s].parent;
        if (q < 0 || (k->n[q].kind != AMP__CX_UnexposedExpr && k->n[q].kind != AMP__CX_ParenExpr && !k->n[q].promoted))
            return false;
        s = q;
    }
    int cond, target;
    return s >= 0 && jump_shape(k, s, &cond, &target) == UJ_UPDATE && target == vi && strip(k, s) == p;
}

static void ref_effect(kctx *k, var *v, int r)
{
    const amp__clang *cx = k->cx;
    int cur = r;
    int site = -1;
    bool mod = false, addr = false, unsure = false;
    for (;;) {
        int p = k->n[cur].parent;
        if (p < 0) break;
        node *px = &k->n[p];
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
            amp__cx_cursor f = cx->clang_getCursorReferenced(px->c);
            if (cursor_null(cx, f)) {
                mod = addr = true;
                break;
            }
            int fk = cx->clang_getCursorKind(f);
            char fname[64];
            cursor_name(cx, f, fname, sizeof fname);
            int ai = arg_index(k, p, cur);
            bool member_op = fk == AMP__CX_CXXMethod && !strncmp(fname, "operator", 8);
            if (member_op && ai == 0) {
                amp__cx_cursor cls = cx->clang_getCursorSemanticParent(f);
                if ((!strcmp(fname, "operator[]") || !strcmp(fname, "operator()")) &&
                    (is_amp_class(k, cls, "index") || is_amp_class(k, cls, "extent"))) {
                    cur = p; /* an element of the variable itself */
                    continue;
                }
                if (!cx->clang_CXXMethod_isConst(f) && !cx->clang_CXXMethod_isStatic(f)) mod = true;
                break;
            }
            if (ai < 0) {
                /* the object of a member call, or the callee itself */
                if (fk == AMP__CX_CXXMethod && !cx->clang_CXXMethod_isConst(f) && !cx->clang_CXXMethod_isStatic(f))
                    mod = true;
                break;
            }
            amp__cx_type ft = cx->clang_getCursorType(f);
            int pi = member_op ? ai - 1 : ai;
            int np = cx->clang_getNumArgTypes(ft);
            if (pi < 0 || pi >= np) {
                if (np < 0) mod = true; /* variadic or unknown */
                break;
            }
            amp__cx_type pt = cx->clang_getCanonicalType(cx->clang_getArgType(ft, (unsigned)pi));
            if (pt.kind == AMP__CXT_LValueReference || pt.kind == AMP__CXT_RValueReference) {
                amp__cx_type pe = cx->clang_getCanonicalType(cx->clang_getPointeeType(pt));
                if (!cx->clang_isConstQualifiedType(pe) || pt.kind == AMP__CXT_RValueReference) mod = true;
            }
            break;
        }
        if (kind == AMP__CX_UnaryOperator) {
            const char *op = unary_op(k, p);
            if (!op) {
                mod = addr = unsure = true;
            } else if (!strcmp(op, "++") || !strcmp(op, "--")) {
                mod = true;
                site = p;
                if (v->inc >= 0 && k->n[p].b >= k->n[v->inc].b && k->n[p].e <= k->n[v->inc].e) {
                    v->modified = true;
                    note_mod(v, p);
                    return;
                }
                if (promoted_update_of(k, p, (int)(v - k->v))) {
                    v->modified = true;
                    note_mod(v, p);
                    return;
                }
            } else if (!strcmp(op, "&")) {
                addr = true;
            } else if (!strcmp(op, "?")) {
                mod = addr = unsure = true;
            }
            break;
        }
        if (kind == AMP__CX_BinaryOperator || kind == AMP__CX_CompoundAssignOperator) {
            if (px->first != cur) break;
            unsigned op = binary_op(k, p);
            bool assign = kind == AMP__CX_CompoundAssignOperator || op == ~0u || is_assign_op(k->t, op);
            if (assign) {
                mod = true;
                site = p;
                if (v->inc >= 0 && k->n[p].b >= k->n[v->inc].b && k->n[p].e <= k->n[v->inc].e) {
                    v->modified = true;
                    note_mod(v, p);
                    return;
                }
                if (promoted_update_of(k, p, (int)(v - k->v))) {
                    v->modified = true;
                    note_mod(v, p);
                    return;
                }
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

/* ------------------------------------------------------- purity checks */

enum { P_NO = 0, P_REMAT = 1, P_UNIFORM = 2 };

static int pmin(int a, int b) { return a < b ? a : b; }

static bool pure_prelude_fn(kctx *k, amp__cx_cursor f, int call, int *level)
{
    const amp__clang *cx = k->cx;
    char name[96];
    cursor_name(cx, f, name, sizeof name);
    int fk = cx->clang_getCursorKind(f);
    amp__cx_cursor par = cx->clang_getCursorSemanticParent(f);
    *level = P_UNIFORM;
    if (fk == AMP__CX_CXXMethod || fk == AMP__CX_Constructor || fk == AMP__CX_ConversionFunction) {
        if (is_amp_class(k, par, "index") || is_amp_class(k, par, "extent")) {
            static const char *const ok[] = {"index", "extent", "operator[]", "operator()", "operator+",
                                             "operator-", "operator*", "operator/", "operator%",
                                             "operator==", "operator!=", "size", "contains"};
            for (size_t i = 0; i < sizeof ok / sizeof ok[0]; ++i)
                if (!strcmp(name, ok[i])) return fk != AMP__CX_CXXMethod || cx->clang_CXXMethod_isConst(f) ||
                                                   !strcmp(name, "operator[]") || !strcmp(name, "operator()");
            return false;
        }
        if (is_amp_class(k, par, "tiled_index"))
            return !strcmp(name, "tile_extent") || !strncmp(name, "operator index", 14) ||
                   !strcmp(name, "tiled_index");
        if (is_amp_class(k, par, "array_view") || is_amp_class(k, par, "array"))
            return !strcmp(name, "get_extent") || !strcmp(name, "array_view") || !strcmp(name, "array") ||
                   !strcmp(name, "data") || !strncmp(name, "operator array_view", 19);
        return false;
    }
    if (fk == AMP__CX_FunctionDecl) {
        char ns[32];
        cursor_name(cx, par, ns, sizeof ns);
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
            int arg = nth_child(k, call, 1);
            char an[64] = "";
            int a = strip(k, arg);
            if (a >= 0 && k->n[a].kind == AMP__CX_DeclRefExpr) cursor_name(cx, k->n[a].c, an, sizeof an);
            if (!strcmp(an, "G_THREAD")) {
                *level = P_REMAT;
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

static bool pure_system_fn(const kctx *k, amp__cx_cursor f)
{
    char name[64];
    cursor_name(k->cx, f, name, sizeof name);
    static const char *const ok[] = {"abs",   "labs",  "fabs",  "fabsf", "sqrt",  "sqrtf", "floor",
                                     "floorf", "ceil", "ceilf", "fmin",  "fminf", "fmax",  "fmaxf",
                                     "exp",   "expf",  "log",   "logf",  "log2",  "log2f", "pow",
                                     "powf",  "sin",   "sinf",  "cos",   "cosf",  "trunc", "truncf",
                                     "round", "roundf"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; ++i)
        if (!strcmp(name, ok[i])) return true;
    return false;
}

/* How pure expression n is: P_UNIFORM (same in every work-item, reads no
 * memory), P_REMAT (a pure function of the work-item's index and uniform
 * values) or P_NO. self: a variable the expression may update (a loop's
 * increment), or -1. */
static int purity(kctx *k, int n, int self)
{
    const amp__clang *cx = k->cx;
    tu_ctx *t = k->t;
    node *x = &k->n[n];
    int lvl = P_UNIFORM;
    switch (x->kind) {
    case AMP__CX_IntegerLiteral: case AMP__CX_FloatingLiteral: case AMP__CX_CharacterLiteral:
    case AMP__CX_CXXBoolLiteralExpr: case AMP__CX_CXXNullPtrLiteralExpr: case AMP__CX_StringLiteral:
    case 43: /* TypeRef */ case 45: /* TemplateRef */ case 46: /* NamespaceRef */
        return P_UNIFORM;
    case AMP__CX_ParenExpr: case AMP__CX_UnexposedExpr: case AMP__CX_CStyleCastExpr:
    case AMP__CX_CXXStaticCastExpr: case AMP__CX_CXXFunctionalCastExpr: case AMP__CX_ConditionalOperator:
    case AMP__CX_UnaryExpr:
        break;
    case AMP__CX_UnaryOperator: {
        const char *op = unary_op(k, n);
        if (!op || !strcmp(op, "?") || !strcmp(op, "&") || !strcmp(op, "*")) return P_NO;
        if (!strcmp(op, "++") || !strcmp(op, "--")) {
            int o = strip(k, x->first);
            if (self < 0 || o < 0 || k->n[o].kind != AMP__CX_DeclRefExpr || k->n[o].var != self) return P_NO;
            return P_UNIFORM;
        }
        break;
    }
    case AMP__CX_BinaryOperator: case AMP__CX_CompoundAssignOperator: {
        unsigned op = binary_op(k, n);
        if (op == ~0u) return P_NO;
        if (x->kind == AMP__CX_CompoundAssignOperator || is_assign_op(t, op)) {
            int o = strip(k, x->first);
            if (self < 0 || o < 0 || k->n[o].kind != AMP__CX_DeclRefExpr || k->n[o].var != self) return P_NO;
            int r = k->n[x->first].next;
            return r >= 0 ? purity(k, r, self) : P_NO;
        }
        break;
    }
    case AMP__CX_DeclRefExpr: {
        if (x->var >= 0) {
            var *v = &k->v[x->var];
            if (x->var == self) return P_UNIFORM;
            if (v->is_tidx) return P_REMAT;
            if (v->is_param) return v->modified ? P_NO : P_UNIFORM;
            if (v->cls == V_UNIFORM) return P_UNIFORM;
            if (v->cls == V_REMAT) return P_REMAT;
            return P_NO;
        }
        amp__cx_cursor r = cx->clang_getCursorReferenced(x->c);
        if (cursor_null(cx, r)) return P_NO;
        int rk = cx->clang_getCursorKind(r);
        if (rk == AMP__CX_EnumConstantDecl || rk == AMP__CX_FunctionDecl || rk == AMP__CX_CXXMethod ||
            rk == AMP__CX_Constructor || rk == AMP__CX_ConversionFunction)
            return P_UNIFORM;
        if (rk == AMP__CX_VarDecl) {
            /* A constant outside the kernel (namespace scope, static member). */
            unsigned b, e;
            cursor_span(t, r, &b, &e, NULL);
            bool in_body = b >= k->n[k->body].b && b < k->n[k->body].e;
            amp__cx_type vt = cx->clang_getCanonicalType(cx->clang_getCursorType(r));
            if (!in_body && cx->clang_isConstQualifiedType(vt)) return P_UNIFORM;
        }
        return P_NO;
    }
    case AMP__CX_MemberRefExpr: {
        amp__cx_cursor m = cx->clang_getCursorReferenced(x->c);
        int mk = cursor_null(cx, m) ? -1 : cx->clang_getCursorKind(m);
        if (mk == AMP__CX_FieldDecl) {
            int base = strip(k, x->first);
            if (base >= 0 && k->n[base].kind == AMP__CX_DeclRefExpr && k->n[base].var >= 0 &&
                k->v[k->n[base].var].is_tidx) {
                char fname[32];
                cursor_name(cx, m, fname, sizeof fname);
                if (!strcmp(fname, "tile") || !strcmp(fname, "tile_origin") || !strcmp(fname, "barrier"))
                    return P_UNIFORM;
                return P_REMAT;
            }
            break;
        }
        if (mk == AMP__CX_CXXMethod || mk == AMP__CX_ConversionFunction) break; /* the call decides */
        if (mk == AMP__CX_VarDecl) {
            amp__cx_type vt = cx->clang_getCanonicalType(cx->clang_getCursorType(m));
            if (cx->clang_isConstQualifiedType(vt)) return P_UNIFORM;
        }
        return P_NO;
    }
    case AMP__CX_CallExpr: {
        amp__cx_cursor f = cx->clang_getCursorReferenced(x->c);
        if (cursor_null(cx, f)) return P_NO;
        unsigned off;
        bool in_main;
        amp__cx_loc fl = cx->clang_getCursorLocation(f);
        loc_offset(t, fl, &off, &in_main);
        if (in_main && off < t->user_start) {
            int l;
            if (!pure_prelude_fn(k, f, n, &l)) return P_NO;
            lvl = l;
        } else if (!in_main && cx->clang_Location_isInSystemHeader(fl)) {
            if (!pure_system_fn(k, f)) return P_NO;
        } else {
            return P_NO;
        }
        break;
    }
    default:
        return P_NO;
    }
    for (int c = x->first; c >= 0 && lvl > P_NO; c = k->n[c].next) lvl = pmin(lvl, purity(k, c, self));
    return lvl;
}

/* ------------------------------------------------------ structure plan */

static int unit_add(kctx *k, int kind, unsigned b, unsigned e, int owner)
{
    if (k->nu == k->cu && !grow(&k->u, &k->cu, sizeof *k->u, 32, &k->t->oom))
        return -1;
    unit *u = &k->u[k->nu];
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
static unsigned stmt_end(const kctx *k, int s, unsigned limit)
{
    const tu_ctx *t = k->t;
    unsigned e = k->n[s].e;
    unsigned i = tok_find(t, e);
    if (i < t->ntoks && tok_is(t, i, ";") && t->te[i] <= limit) {
        int nx = k->n[s].next;
        if (!(nx >= 0 && k->n[nx].kind == AMP__CX_NullStmt && k->n[nx].b == t->tb[i])) return t->te[i];
    }
    return e;
}

/* A structure-level statement that must be emitted in the outer flow. */
static bool is_structure(const kctx *k, int s) { return k->n[s].barrier; }

/* For a ForStmt: its init/cond/inc children (or -1), body, and the header's
 * parenthesis offsets. False when the header cannot be read. */
static bool for_parts(const kctx *k, int f, int *init, int *cond, int *inc, int *body, unsigned *lp, unsigned *rp,
                      unsigned *s1, unsigned *s2)
{
    const tu_ctx *t = k->t;
    unsigned i = tok_find(t, k->n[f].b);
    if (!tok_is(t, i, "for") || !tok_is(t, i + 1, "(")) return false;
    *lp = t->tb[i + 1];
    int depth = 0, semis = 0;
    unsigned j;
    for (j = i + 1; j < t->ntoks && t->tb[j] < k->n[f].e; ++j) {
        if (tok_is(t, j, "(") || tok_is(t, j, "[") || tok_is(t, j, "{")) depth++;
        else if (tok_is(t, j, ")") || tok_is(t, j, "]") || tok_is(t, j, "}")) {
            if (--depth == 0) break;
        } else if (depth == 1 && tok_is(t, j, ";")) {
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

static void plan_seq(kctx *k, int compound, bool top);

/* A branch or loop body: a compound, or one statement (plan_seq treats a
 * lone statement as a one-statement sequence). */
static void plan_branch(kctx *k, int s) { plan_seq(k, s, false); }

static void plan_structure(kctx *k, int s)
{
    node *x = &k->n[s];
    if (x->macro) {
        fallback(k, "a barrier inside a macro expansion");
        return;
    }
    switch (x->kind) {
    case AMP__CX_CompoundStmt:
        plan_seq(k, s, false);
        return;
    case AMP__CX_IfStmt: {
        int nc = nchildren(k, s);
        int cond = k->n[s].first;
        if (cond < 0 || nc < 2 || k->n[cond].kind == AMP__CX_DeclStmt || k->n[cond].kind == AMP__CX_VarDecl) {
            fallback(k, "a barrier under an if with a declaration in its condition");
            return;
        }
        unsigned i = tok_find(k->t, x->b);
        if (tok_is(k->t, i + 1, "constexpr")) {
            fallback(k, "a barrier under if constexpr");
            return;
        }
        if (k->n[cond].barrier) {
            fallback(k, "a barrier inside a condition");
            return;
        }
        unit_add(k, U_COND, k->n[cond].b, k->n[cond].e, s);
        int th = k->n[cond].next, el = th >= 0 ? k->n[th].next : -1;
        plan_branch(k, th);
        if (el >= 0) plan_branch(k, el);
        return;
    }
    case AMP__CX_ForStmt: {
        int init, cond, inc, body;
        unsigned lp, rp, s1 = 0, s2 = 0;
        if (!for_parts(k, s, &init, &cond, &inc, &body, &lp, &rp, &s1, &s2)) {
            fallback(k, "a barrier under a for loop whose header cannot be read");
            return;
        }
        if ((init >= 0 && k->n[init].barrier) || (cond >= 0 && k->n[cond].barrier) ||
            (inc >= 0 && k->n[inc].barrier)) {
            fallback(k, "a barrier inside a loop header");
            return;
        }
        if (cond >= 0 && (k->n[cond].kind == AMP__CX_VarDecl || k->n[cond].kind == AMP__CX_DeclStmt)) {
            fallback(k, "a barrier under a loop with a declaration in its condition");
            return;
        }
        if (init >= 0) {
            int u = unit_add(k, U_INIT, k->n[init].b, k->n[init].kind == AMP__CX_DeclStmt ? k->n[init].e : s1, s);
            if (u >= 0 && k->n[init].kind == AMP__CX_DeclStmt) {
                for (int d = k->n[init].first; d >= 0; d = k->n[d].next)
                    if (k->n[d].kind == AMP__CX_VarDecl && k->n[d].var >= 0) {
                        var *v = &k->v[k->n[d].var];
                        v->structure = true;
                        v->decl = init;
                        v->unit = u;
                        v->loop = s;
                        v->inc = inc;
                    }
            }
        }
        if (cond >= 0) unit_add(k, U_COND, k->n[cond].b, k->n[cond].e, s);
        if (inc >= 0) unit_add(k, U_INC, k->n[inc].b, k->n[inc].e, s);
        plan_branch(k, body);
        return;
    }
    case AMP__CX_WhileStmt: {
        int cond = k->n[s].first, body = cond >= 0 ? k->n[cond].next : -1;
        if (cond < 0 || body < 0 || k->n[cond].kind == AMP__CX_VarDecl || k->n[cond].kind == AMP__CX_DeclStmt) {
            fallback(k, "a barrier under a while loop with a declaration in its condition");
            return;
        }
        if (k->n[cond].barrier) {
            fallback(k, "a barrier inside a condition");
            return;
        }
        unit_add(k, U_COND, k->n[cond].b, k->n[cond].e, s);
        plan_branch(k, body);
        return;
    }
    case AMP__CX_DoStmt: {
        int body = k->n[s].first, cond = body >= 0 ? k->n[body].next : -1;
        if (cond < 0) {
            fallback(k, "a barrier under a do loop that cannot be read");
            return;
        }
        if (k->n[cond].barrier) {
            fallback(k, "a barrier inside a condition");
            return;
        }
        plan_branch(k, body);
        unit_add(k, U_COND, k->n[cond].b, k->n[cond].e, s);
        return;
    }
    case AMP__CX_SwitchStmt:
        fallback(k, "a barrier inside a switch");
        return;
    case AMP__CX_DeclStmt:
        fallback(k, "a barrier inside a declaration's initialiser");
        return;
    case AMP__CX_ReturnStmt:
        fallback(k, "a barrier inside a return statement");
        return;
    case AMP__CX_CXXForRangeStmt:
        fallback(k, "a barrier under a range-based for loop");
        return;
    case AMP__CX_CXXTryStmt:
        fallback(k, "a barrier inside a try block");
        return;
    case AMP__CX_LabelStmt: case AMP__CX_GotoStmt:
        fallback(k, "a barrier next to a label or goto");
        return;
    default:
        fallback(k, "a barrier inside an expression");
        return;
    }
}

/* A statement that can move to the outer flow when uniform: `return;`,
 * `break;`, `continue;`, `if (cond) <one of those>` (cond, else -1), or an
 * update of a variable declared at structure level (`v = e`, `v op= e`,
 * `++v`: target is its index). UJ_NONE otherwise. */
static int jump_shape(const kctx *k, int s, int *cond, int *target)
{
    *cond = -1;
    *target = -1;
    const node *x = &k->n[s];
    if (x->macro) return UJ_NONE;
    switch (x->kind) {
    case AMP__CX_ReturnStmt: return x->first < 0 ? UJ_RETURN : UJ_NONE;
    case AMP__CX_BreakStmt: return UJ_BREAK;
    case AMP__CX_ContinueStmt: return UJ_CONTINUE;
    case AMP__CX_IfStmt: {
        int c = x->first, th = c >= 0 ? k->n[c].next : -1;
        if (c < 0 || th < 0 || k->n[th].next >= 0 || k->n[c].kind == AMP__CX_DeclStmt ||
            k->n[c].kind == AMP__CX_VarDecl || k->n[c].barrier)
            return UJ_NONE;
        if (k->n[th].kind == AMP__CX_CompoundStmt) {
            th = k->n[th].first;
            if (th < 0 || k->n[th].next >= 0) return UJ_NONE;
        }
        int c2, t2;
        int j = jump_shape(k, th, &c2, &t2);
        if (j == UJ_NONE || j == UJ_UPDATE || c2 >= 0) return UJ_NONE;
        *cond = c;
        return j;
    }
    default: {
        int e = strip(k, s);
        if (e < 0) return UJ_NONE;
        int kind = k->n[e].kind;
        bool upd = false;
        if (kind == AMP__CX_CompoundAssignOperator) upd = true;
        else if (kind == AMP__CX_BinaryOperator) {
            unsigned op = binary_op(k, e);
            upd = op != ~0u && tok_is(k->t, op, "=");
        } else if (kind == AMP__CX_UnaryOperator) {
            const char *op = unary_op(k, e);
            upd = op && (!strcmp(op, "++") || !strcmp(op, "--"));
        }
        if (!upd) return UJ_NONE;
        int t = strip(k, k->n[e].first);
        if (t < 0 || k->n[t].kind != AMP__CX_DeclRefExpr || k->n[t].var < 0 || !k->v[k->n[t].var].structure)
            return UJ_NONE;
        *target = k->n[t].var;
        return UJ_UPDATE;
    }
    }
}

/* Break, continue or return inside a region that leaves it. A region
 * statement that is itself such a jump (jump_shape) is only marked a
 * candidate: it moves to the outer flow when its condition is uniform. */
static void check_jumps(kctx *k, int root, bool final)
{
    int cj, tj;
    int shape = jump_shape(k, root, &cj, &tj);
    if (shape == UJ_RETURN || shape == UJ_BREAK || shape == UJ_CONTINUE) {
        if (!(shape == UJ_RETURN && final)) {
            k->n[root].candidate = true;
            return;
        }
    }
    int end = k->nn;
    for (int i = root; i < end; ++i) {
        if (!inside(k, i, root)) continue;
        int kind = k->n[i].kind;
        if (kind == AMP__CX_GotoStmt || kind == AMP__CX_LabelStmt || kind == AMP__CX_IndirectGotoStmt) {
            fallback(k, "goto or a label in a kernel with barriers");
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
                fallback(k, "a return before a later barrier");
                return;
            }
            if (k->n[i].first >= 0 || k->n[i].macro) {
                fallback(k, "a return with a value or from a macro");
                return;
            }
            continue;
        }
        fallback(k, "a break or continue that crosses a barrier");
        return;
    }
}

/* The statements of a compound, or a lone statement, as a list. */
static int seq_first(const kctx *k, int compound)
{
    return k->n[compound].kind == AMP__CX_CompoundStmt ? k->n[compound].first : compound;
}
static int seq_next(const kctx *k, int compound, int s)
{
    return k->n[compound].kind == AMP__CX_CompoundStmt ? k->n[s].next : -1;
}

/* Statements of a compound (or one statement) in runs between structure
 * statements (barriers, control flow holding one, promoted jumps and
 * updates). top: the kernel body itself (its last run is final). */
static void plan_seq(kctx *k, int compound, bool top)
{
    unsigned limit = k->n[compound].kind == AMP__CX_CompoundStmt ? k->n[compound].e - 1 : ~0u;
    int run = -1, prev = -1;
    for (int c = seq_first(k, compound);; c = seq_next(k, compound, c)) {
        if (k->why[0]) return;
        bool structural = c >= 0 && (is_structure(k, c) || k->n[c].promoted);
        if (c < 0 || structural) {
            if (run >= 0) {
                int last = prev;
                unsigned e = stmt_end(k, last, limit);
                int u = unit_add(k, U_REGION, k->n[run].b, e, -1);
                if (u < 0) return;
                k->u[u].first = run;
                k->u[u].last = last;
                k->u[u].final = top && c < 0;
                /* A macro invocation must not straddle the region's edge. */
                if (c >= 0 && k->n[c].b < e) {
                    fallback(k, "a barrier inside a macro expansion");
                    return;
                }
                for (int j = run;; j = k->n[j].next) {
                    check_jumps(k, j, k->u[u].final);
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
                                var *v = &k->v[k->n[d].var];
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
                fallback(k, "a barrier inside a macro expansion");
                return;
            }
            prev = c;
            if (k->n[c].promoted) {
                unsigned e = stmt_end(k, c, limit);
                int u = unit_add(k, U_STMT, k->n[c].b, e, c);
                if (u < 0) return;
                k->u[u].first = k->u[u].last = c;
                continue;
            }
            if (is_barrier_stmt(k, c)) continue;
            plan_structure(k, c);
            continue;
        }
        if (run < 0) run = c;
        prev = c;
    }
}

/* ----------------------------------------------------- classification */

static bool type_is_local(kctx *k, amp__cx_type can)
{
    const amp__clang *cx = k->cx;
    amp__cx_type el = can;
    while (el.kind == AMP__CXT_ConstantArray) el = cx->clang_getCanonicalType(cx->clang_getArrayElementType(el));
    if (el.kind == AMP__CXT_Pointer) el = cx->clang_getCanonicalType(cx->clang_getPointeeType(el));
    if (el.kind != AMP__CXT_Record && el.kind != AMP__CXT_Enum) return false;
    amp__cx_cursor d = cx->clang_getTypeDeclaration(el);
    if (cursor_null(cx, d)) return true;
    unsigned b, e;
    bool in_main;
    cursor_span(k->t, d, &b, &e, &in_main);
    if (in_main && b >= k->n[k->body].b && b < k->n[k->body].e) return true;
    /* lambdas and unnamed types cannot be named */
    char spell[256];
    amp__clang_text(cx, cx->clang_getTypeSpelling(el), spell, sizeof spell);
    return strstr(spell, "lambda") || strstr(spell, "anonymous") || strstr(spell, "unnamed");
}

/* Types a context slot can hold by memcpy: scalars, pointers, enums, arrays
 * of them, PODs, and the prelude's index/extent/array_view types. */
static bool type_copyable(kctx *k, int n)
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

/* The initialiser of variable vi: an expression child starting after the
 * declarator's name and after a '=' or '{' (so not an array bound, a
 * template argument of its type, or the implicit construction C++ reports
 * at the name itself). -1 when it has none the analysis can use. */
static int var_init(kctx *k, int vi)
{
    const var *v = &k->v[vi];
    unsigned name_off = 0;
    loc_offset(k->t, k->cx->clang_getCursorLocation(k->n[v->node].c), &name_off, NULL);
    int init = -1;
    for (int c = k->n[v->node].first; c >= 0; c = k->n[c].next) {
        int kind = k->n[c].kind;
        if (kind < 100 || kind >= 200 || k->n[c].b <= name_off) continue;
        unsigned i = tok_find(k->t, name_off);
        bool eq = false;
        for (; i < k->t->ntoks && k->t->tb[i] < k->n[c].b; ++i)
            if (tok_is(k->t, i, "=") || tok_is(k->t, i, "{")) eq = true;
        if (eq) init = c;
    }
    return init;
}

static int unit_of_offset(const kctx *k, unsigned off)
{
    /* innermost (latest-starting) unit containing off */
    int best = -1;
    for (int i = 0; i < k->nu; ++i)
        if (off >= k->u[i].b && off < k->u[i].e && (best < 0 || k->u[i].b >= k->u[best].b)) best = i;
    return best;
}

static void classify(kctx *k)
{
    /* References: cross-unit use and effects. */
    for (int i = 0; i < k->nn; ++i) {
        node *x = &k->n[i];
        if (x->kind != AMP__CX_DeclRefExpr) continue;
        amp__cx_cursor r = k->cx->clang_getCursorReferenced(x->c);
        if (cursor_null(k->cx, r)) continue;
        int vi = var_of_cursor(k, r);
        if (vi < 0) continue;
        x->var = vi;
        var *v = &k->v[vi];
        ref_effect(k, v, i);
        if (v->structure) {
            int u = unit_of_offset(k, x->b);
            if (u != v->unit) v->cross = true;
        }
    }
    /* Parameters other than the tiled index must stay unmodified (they are
     * const in the loop version). */
    for (int i = 0; i < k->nv; ++i) {
        var *v = &k->v[i];
        if (v->is_param) {
            v->cls = V_PARAM;
            if (v->is_tidx && (v->modified || v->addr_taken)) fallback(k, "the tiled_index parameter is modified");
            else if (!v->is_tidx && v->modified) fallback(k, "parameter %s is modified", v->name);
        }
    }
    /* Structure variables in declaration order: each sees the classes of
     * those before it. All variables of one declaration share a class. */
    for (int i = 0; i < k->nv && !k->why[0]; ++i) {
        var *v = &k->v[i];
        if (v->is_param || v->cls != V_LOCAL) continue;
        amp__cx_cursor c = k->n[v->node].c;
        if (k->cx->clang_getCursorTLSKind(c) != AMP__CXTLS_None) {
            v->cls = V_TILE_STATIC;
            continue;
        }
        if (k->cx->clang_Cursor_getStorageClass(c) == AMP__CXSC_Static) {
            fallback(k, "static variable %s in a kernel with barriers", v->name);
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
            var *w = &k->v[members[m]];
            int init = var_init(k, members[m]);
            w->has_init = init >= 0 && !w->is_array;
            if (w->is_ref || w->is_array || !w->has_init || w->addr_taken) uni = remat = false;
            if (!uni && !remat) break;
            int p = purity(k, init, -1);
            if (w->modified) {
                /* updated only by its own loop's increment, or by updates that
                 * moved to the outer flow, each a uniform expression */
                remat = false;
                if (w->mod_outside_inc || w->nmods > 16) uni = false;
                for (int q = 0; uni && q < w->nmods; ++q) {
                    int site = w->mods[q];
                    if (w->inc >= 0 && inside(k, site, w->inc)) {
                        if (purity(k, w->inc, members[m]) != P_UNIFORM) uni = false;
                    } else if (!promoted_update_of(k, site, members[m]) ||
                               purity(k, site, members[m]) != P_UNIFORM) {
                        uni = false;
                    }
                }
            }
            if (p < P_UNIFORM) uni = false;
            if (p < P_REMAT) remat = false;
        }
        int cls = uni ? V_UNIFORM : remat ? V_REMAT : V_PRIVATE;
        for (int m = 0; m < nm; ++m) {
            var *w = &k->v[members[m]];
            w->cls = cls;
            if (cls != V_PRIVATE) continue;
            if (!w->cross) { w->cls = V_LOCAL; continue; }
            if (w->is_ref) {
                fallback(k, "reference %s lives across a barrier", w->name);
                return;
            }
            if (w->addr_taken) {
                fallback(k, "the address of %s is taken and it lives across a barrier", w->name);
                return;
            }
            amp__cx_type can = k->cx->clang_getCanonicalType(k->cx->clang_getCursorType(k->n[w->node].c));
            if (type_is_local(k, can)) {
                fallback(k, "%s, of a type that cannot be named outside the kernel, lives across a barrier",
                         w->name);
                return;
            }
            if (!type_copyable(k, w->node)) {
                fallback(k, "%s, of a non-trivial type, lives across a barrier", w->name);
                return;
            }
            if (w->size <= 0) {
                fallback(k, "%s has no size", w->name);
                return;
            }
        }
    }
    /* Which conditions and loop parts are uniform. */
    for (int i = 0; i < k->nu && !k->why[0]; ++i) {
        unit *u = &k->u[i];
        if (u->kind == U_REGION) continue;
        if (u->kind == U_STMT) {
            int cond, target;
            int shape = jump_shape(k, u->owner, &cond, &target);
            if (shape == UJ_UPDATE)
                u->uniform = k->v[target].cls == V_UNIFORM && purity(k, strip(k, u->owner), target) == P_UNIFORM;
            else
                u->uniform = cond < 0 || purity(k, cond, -1) == P_UNIFORM;
            if (!u->uniform && shape != UJ_UPDATE)
                fallback(k, "a %s before a later barrier, under a condition that differs between work-items",
                         shape == UJ_RETURN ? "return" : shape == UJ_BREAK ? "break" : "continue");
            continue;
        }
        int s = u->owner;
        int node_id = -1;
        if (k->n[s].kind == AMP__CX_ForStmt) {
            int init, cond, inc, body;
            unsigned lp, rp, s1, s2;
            for_parts(k, s, &init, &cond, &inc, &body, &lp, &rp, &s1, &s2);
            node_id = u->kind == U_INIT ? init : u->kind == U_COND ? cond : inc;
        } else if (k->n[s].kind == AMP__CX_DoStmt) {
            node_id = k->n[k->n[s].first].next;
        } else {
            node_id = k->n[s].first;
        }
        if (u->kind == U_INIT) {
            if (k->n[node_id].kind == AMP__CX_DeclStmt) {
                bool all = true;
                for (int d = k->n[node_id].first; d >= 0; d = k->n[d].next)
                    if (k->n[d].kind == AMP__CX_VarDecl && k->n[d].var >= 0 && k->v[k->n[d].var].cls != V_UNIFORM)
                        all = false;
                u->uniform = all;
            } else {
                u->uniform = false; /* an expression: runs per work-item */
            }
        } else if (u->kind == U_INC) {
            /* uniform when it only updates uniform loop counters */
            int self = -1;
            int o = strip(k, node_id);
            if (o >= 0 && (k->n[o].kind == AMP__CX_UnaryOperator || k->n[o].kind == AMP__CX_CompoundAssignOperator ||
                           k->n[o].kind == AMP__CX_BinaryOperator)) {
                int a = strip(k, k->n[o].first);
                if (a >= 0 && k->n[a].kind == AMP__CX_DeclRefExpr && k->n[a].var >= 0 &&
                    k->v[k->n[a].var].cls == V_UNIFORM)
                    self = k->n[a].var;
            }
            u->uniform = self >= 0 && purity(k, node_id, self) == P_UNIFORM;
        } else {
            u->uniform = purity(k, node_id, -1) == P_UNIFORM;
        }
    }
    /* A uniform variable changes only in the outer flow: its loop's
     * increment there, or updates that moved there. */
    for (int i = 0; i < k->nv && !k->why[0]; ++i) {
        var *v = &k->v[i];
        if (v->cls != V_UNIFORM || !v->modified) continue;
        bool in_inc = false;
        for (int q = 0; q < v->nmods && q < 16; ++q)
            if (v->inc >= 0 && inside(k, v->mods[q], v->inc)) in_inc = true;
        if (!in_inc) continue;
        bool ok = false;
        for (int j = 0; j < k->nu; ++j)
            if (k->u[j].kind == U_INC && k->u[j].owner == v->loop && k->u[j].uniform) ok = true;
        if (!ok) fallback(k, "loop counter %s changes per work-item around a barrier", v->name);
    }
}

/* --------------------------------------------------------------- emit */

static void emit_src(kctx *k, unsigned b, unsigned e)
{
    if (e > b) amp__sb_put(&k->out, k->t->src + b, e - b);
}

/* Text [b, e) with this kernel's edits applied. */
static void emit_edited(kctx *k, unsigned b, unsigned e)
{
    unsigned at = b;
    for (int i = 0; i < k->ned; ++i) {
        edit *d = &k->ed[i];
        if (d->b < at || d->e > e) continue;
        emit_src(k, at, d->b);
        amp__sb_puts(&k->out, d->text);
        at = d->e;
    }
    emit_src(k, at, e);
}

static void edit_add(kctx *k, unsigned b, unsigned e, const char *text)
{
    if (k->ned == k->ced && !grow(&k->ed, &k->ced, sizeof *k->ed, 16, &k->t->oom)) return;
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
    k->ed[i] = (edit){b, e, t};
}

/* The remat form of a declaration: verbatim when every variable it declares
 * is const; otherwise a const copy per variable through a lambda that runs
 * the original declaration (same conversions, and a modification of the
 * copy does not compile). */
static void emit_remat_decl(kctx *k, int d, amp__sb *s, const bool *want)
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

static void emit_wi_open(kctx *k)
{
    amp__sb *o = &k->out;
    amp__sb_puts(o, "for (int amp__l0 = 0; amp__l0 < amp__S::e0; ++amp__l0)\n"
               "for (int amp__l1 = 0; amp__l1 < amp__S::e1; ++amp__l1)\n"
               "AMP__WI_IVDEP for (int amp__l2 = 0; amp__l2 < amp__S::e2; ++amp__l2) {\n"
               "const int amp__wi = (amp__l0 * amp__S::e1 + amp__l1) * amp__S::e2 + amp__l2; (void)amp__wi;\n");
    if (k->tidx >= 0 && k->v[k->tidx].name[0])
        amp__sb_printf(o, "const amp__TI %s = amp__tb.at(amp__l0, amp__l1, amp__l2); (void)%s;\n", k->v[k->tidx].name,
                  k->v[k->tidx].name);
    if (k->needs_local) amp__sb_puts(o, "amp__it->cur_local = amp__wi;\n");
    else amp__sb_puts(o, "AMP__WI_SET_LOCAL(amp__it, amp__wi);\n");
}

/* Variables unit ui reads, and the bindings that give them their values. */
static void emit_bindings(kctx *k, int ui, unsigned b, unsigned e, bool *outer_refs_done)
{
    amp__sb *o = &k->out;
    int nv = k->nv;
    bool *used = calloc((size_t)nv + 1, sizeof *used);
    if (!used) {
        k->t->oom = true;
        return;
    }
    for (int i = 0; i < k->nn; ++i) {
        node *x = &k->n[i];
        if (x->kind == AMP__CX_DeclRefExpr && x->var >= 0 && x->b >= b && x->b < e) used[x->var] = true;
    }
    /* remat dependencies: a remat variable's declaration reads others */
    bool grew = true;
    while (grew) {
        grew = false;
        for (int i = 0; i < k->nn; ++i) {
            node *x = &k->n[i];
            if (x->kind != AMP__CX_DeclRefExpr || x->var < 0 || used[x->var]) continue;
            for (int vi = 0; vi < nv; ++vi) {
                var *v = &k->v[vi];
                if (!used[vi] || v->cls != V_REMAT || v->unit == ui) continue;
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
            var *v = &k->v[vi];
            if (used[vi] && v->cls == V_UNIFORM && !v->is_const)
                amp__sb_printf(o, "const auto &amp__u%d_%s = %s;\n", vi, v->name, v->name);
        }
        free(used);
        return;
    }
    for (int vi = 0; vi < nv; ++vi) {
        var *v = &k->v[vi];
        if (!used[vi]) continue;
        /* uniform ones hoisted out of this very region are bound too: the
         * work-items see a const copy */
        if (v->cls == V_UNIFORM && !v->is_const) amp__sb_printf(o, "const auto %s = amp__u%d_%s;\n", v->name, vi, v->name);
        else if (v->cls == V_PRIVATE && v->unit != ui)
            amp__sb_printf(o, "auto &%s = amp__c%d_%s[amp__wi];\n", v->name, vi, v->name);
    }
    /* remat declarations in source order, each declaration once */
    for (int vi = 0; vi < nv; ++vi) {
        var *v = &k->v[vi];
        if (!used[vi] || v->cls != V_REMAT || v->unit == ui) continue;
        bool first = true;
        for (int w = 0; w < vi; ++w)
            if (k->v[w].decl == v->decl && used[w] && k->v[w].cls == V_REMAT) first = false;
        if (first) emit_remat_decl(k, v->decl, o, used);
    }
    free(used);
}

static void emit_seq(kctx *k, int compound, bool top);

/* One region (or an INIT/INC unit run per work-item): hoisted uniform
 * declarations, then the work-item loops around the text. */
static void emit_region(kctx *k, int ui)
{
    unit *u = &k->u[ui];
    amp__sb *o = &k->out;
    /* uniform declarations of this region go first, in the outer flow */
    if (u->kind == U_REGION) {
        for (int s = u->first;; s = k->n[s].next) {
            if (k->n[s].kind == AMP__CX_DeclStmt) {
                int d = k->n[s].first;
                while (d >= 0 && !(k->n[d].kind == AMP__CX_VarDecl && k->n[d].var >= 0)) d = k->n[d].next;
                if (d >= 0 && k->v[k->n[d].var].cls == V_UNIFORM) {
                    emit_src(k, k->n[s].b, k->n[s].e);
                    amp__sb_puts(o, "\n");
                }
            }
            if (s == u->last) break;
        }
    }
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
    bool dummy = true;
    emit_bindings(k, ui, u->b, u->e, NULL);
    emit_wi_open(k);
    emit_bindings(k, ui, u->b, u->e, &dummy);
    amp__sb_puts(o, "{\n");
    emit_edited(k, u->b, u->e);
    amp__sb_puts(o, u->kind == U_REGION ? "\n" : ";\n");
    /* private variables declared here: into their slots */
    for (int vi = 0; vi < k->nv; ++vi)
        if (k->v[vi].unit == ui && k->v[vi].cls == V_PRIVATE)
            amp__sb_printf(o, "::amp::cpu::save(amp__c%d_%s[amp__wi], %s);\n", vi, k->v[vi].name, k->v[vi].name);
    amp__sb_puts(o, "}\n");
    if (u->final) amp__sb_printf(o, "amp__done_%d: ;\n", ui);
    amp__sb_puts(o, "}\n}\n");
}

/* A condition: the expression when uniform, else every work-item's value,
 * which must agree. Writes the C++ condition to use into cond. */
static void emit_cond(kctx *k, int ui, const char *what, char *cond, size_t cap)
{
    unit *u = &k->u[ui];
    amp__sb *o = &k->out;
    if (u->uniform) {
        size_t n = u->e - u->b;
        if (n + 3 > cap) {
            fallback(k, "a condition too long to copy");
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
    bool dummy = true;
    emit_bindings(k, ui, u->b, u->e, NULL);
    emit_wi_open(k);
    emit_bindings(k, ui, u->b, u->e, &dummy);
    amp__sb_printf(o, "const bool amp__v = static_cast<bool>(");
    emit_src(k, u->b, u->e);
    amp__sb_printf(o, ");\nif (!::amp::cpu::agree(amp__it, amp__c%d, amp__v, amp__wi, \"%s\")) return false;\n}\n}\n", id,
              what);
}

static void emit_branch(kctx *k, int s)
{
    amp__sb_puts(&k->out, "{\n");
    emit_seq(k, s, false);
    amp__sb_puts(&k->out, "}\n");
}

static int next_unit(kctx *k) { return k->emit_unit++; }

static void emit_structure(kctx *k, int s)
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
        int init, cnd, inc, body;
        unsigned lp, rp, s1, s2;
        for_parts(k, s, &init, &cnd, &inc, &body, &lp, &rp, &s1, &s2);
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
        fallback(k, "unexpected structure");
        return;
    }
}

/* A promoted statement: a uniform update or jump, in the outer flow. */
static void emit_ustmt(kctx *k, int ui)
{
    unit *u = &k->u[ui];
    amp__sb *o = &k->out;
    int cond, target;
    int shape = jump_shape(k, u->owner, &cond, &target);
    if (shape == UJ_UPDATE) {
        if (!u->uniform) {
            emit_region(k, ui);
            return;
        }
        emit_src(k, u->b, u->e);
        amp__sb_puts(o, ";\n");
        return;
    }
    if (shape == UJ_CONTINUE && (k->ncont == 0 || k->ncont > 64 || !k->cont_ok[k->ncont - 1])) {
        fallback(k, "a continue in a loop whose condition or increment runs per work-item");
        return;
    }
    if (cond >= 0) {
        amp__sb_puts(o, "if (");
        emit_src(k, k->n[cond].b, k->n[cond].e);
        amp__sb_puts(o, ") ");
    }
    amp__sb_puts(o, shape == UJ_RETURN ? "return true;\n" : shape == UJ_BREAK ? "break;\n" : "continue;\n");
}

static void emit_seq(kctx *k, int compound, bool top)
{
    bool in_run = false;
    for (int c = seq_first(k, compound);; c = seq_next(k, compound, c)) {
        if (k->why[0]) return;
        bool structural = c >= 0 && (is_structure(k, c) || k->n[c].promoted);
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
            if (is_barrier_stmt(k, c)) continue;
            emit_structure(k, c);
            continue;
        }
        in_run = true;
    }
    (void)top;
}

/* ----------------------------------------------------------- promotion */

/* A statement directly in a compound the plan splits. */
static bool at_structure_level(const kctx *k, int s)
{
    int p = k->n[s].parent;
    return p >= 0 && k->n[p].kind == AMP__CX_CompoundStmt && k->n[p].barrier;
}

/* Mark the jumps and updates that can move to the outer flow: a jump
 * planning could not leave in a region, under a uniform condition; every
 * structure-level update of a variable whose initialiser and updates are all
 * uniform (it then becomes uniform itself). Returns whether any was marked;
 * a jump under a condition that is not uniform keeps the kernel on fibers. */
static bool promote(kctx *k)
{
    bool any = false;
    for (int i = 0; i < k->nn; ++i) {
        if (!k->n[i].candidate) continue;
        int cond, target;
        int shape = jump_shape(k, i, &cond, &target);
        if (cond >= 0 && purity(k, cond, -1) != P_UNIFORM) {
            fallback(k, "a %s before a later barrier, under a condition that differs between work-items",
                     shape == UJ_RETURN ? "return" : shape == UJ_BREAK ? "break" : "continue");
            return false;
        }
        k->n[i].promoted = true;
        any = true;
    }
    for (int vi = 0; vi < k->nv; ++vi) {
        var *v = &k->v[vi];
        if (!v->structure || !v->modified || !v->mod_outside_inc || v->is_param || v->is_ref || v->is_array ||
            v->addr_taken || v->nmods > 16)
            continue;
        /* alone in its declaration (a uniform declaration moves whole) */
        int members = 0;
        for (int c = k->n[v->decl].first; c >= 0; c = k->n[c].next) members += k->n[c].kind == AMP__CX_VarDecl;
        int init = var_init(k, vi);
        if (members != 1 || init < 0 || purity(k, init, -1) != P_UNIFORM) continue;
        int stmts[16], ns = 0;
        bool ok = true;
        for (int m = 0; m < v->nmods && ok; ++m) {
            int site = v->mods[m];
            if (v->inc >= 0 && inside(k, site, v->inc)) continue;
            int st = site;
            while (k->n[st].parent >= 0 && (k->n[k->n[st].parent].kind == AMP__CX_UnexposedExpr ||
                                            k->n[k->n[st].parent].kind == AMP__CX_ParenExpr))
                st = k->n[st].parent;
            int c, t;
            if (!at_structure_level(k, st) || jump_shape(k, st, &c, &t) != UJ_UPDATE || t != vi ||
                strip(k, st) != site || purity(k, site, vi) != P_UNIFORM)
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

/* Forget what planning and classification found (not the promotions). */
static void reset_analysis(kctx *k)
{
    for (int i = 0; i < k->nv; ++i) {
        var *v = &k->v[i];
        v->decl = v->unit = v->loop = v->inc = -1;
        v->structure = v->has_init = v->modified = v->addr_taken = v->mod_outside_inc = v->cross = false;
        v->nmods = 0;
        v->cls = V_LOCAL;
    }
    for (int i = 0; i < k->nn; ++i) k->n[i].candidate = false;
    k->nu = 0;
    k->nhoist = 0;
}

/* ------------------------------------------------------------- kernels */

/* Tile dimensions from "amp::tiled_index<16, 16, 0>". */
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

/* Names used by the generated code must not collide with macros the user's
 * regions expand later: user macros used in copied text are re-emitted
 * around it (#pragma push_macro/pop_macro), so a definition made inside the
 * body, or one #undef'd after it, expands the same. */
static void collect_macro_names(kctx *k, unsigned b, unsigned e, bool *want)
{
    tu_ctx *t = k->t;
    for (unsigned i = tok_find(t, b); i < t->ntoks && t->tb[i] < e; ++i) {
        size_t n = t->te[i] - t->tb[i];
        const char *tok = t->src + t->tb[i];
        if (n >= 96 || !(tok[0] == '_' || ((tok[0] | 32) >= 'a' && (tok[0] | 32) <= 'z'))) continue;
        /* the latest definition of this name before the use */
        int best = -1;
        for (int m = 0; m < t->nmdefs; ++m)
            if (strlen(t->mdefs[m].name) == n && !memcmp(t->mdefs[m].name, tok, n) && t->mdefs[m].b < t->tb[i] &&
                (best < 0 || t->mdefs[m].b > t->mdefs[best].b))
                best = m;
        if (best < 0 || want[best]) continue;
        want[best] = true;
        collect_macro_names(k, t->mdefs[best].b, t->mdefs[best].e, want);
    }
}

/* User macros expanded in [b, e), and those their definitions use. */
static void collect_macros(kctx *k, unsigned b, unsigned e, bool *want)
{
    tu_ctx *t = k->t;
    for (int x = 0; x < t->nmexps; ++x) {
        if (t->mexps[x].off < b || t->mexps[x].off >= e) continue;
        for (int m = 0; m < t->nmdefs; ++m)
            if (t->mdefs[m].b == t->mexps[x].def && !want[m]) {
                want[m] = true;
                collect_macro_names(k, t->mdefs[m].b, t->mdefs[m].e, want);
            }
    }
}

/* Analyse and generate one tiled kernel. Returns its path text; appends the
 * generated code to k->out when the path is "loops". */
static void kernel_loops(kctx *k)
{
    const amp__clang *cx = k->cx;
    build_arg a = {k, -1, -1};
    build_visit(k->fn, k->fn, &a);
    if (k->t->oom) return;
    int fnode = 0;
    k->body = -1;
    k->tidx = -1;
    for (int c = k->n[fnode].first; c >= 0; c = k->n[c].next) {
        if (k->n[c].kind == AMP__CX_ParmDecl) {
            int vi = var_add(k, c);
            if (vi < 0) return;
            if (k->tidx < 0) {
                k->tidx = vi;
                k->v[vi].is_tidx = true;
            }
        } else if (k->n[c].kind == AMP__CX_CompoundStmt) {
            k->body = c;
        }
    }
    if (k->body < 0 || k->tidx < 0) {
        fallback(k, "no kernel body");
        return;
    }
    if (!parse_dims(k->v[k->tidx].type, k->dims)) {
        fallback(k, "tile shape %s not understood", k->v[k->tidx].type);
        return;
    }
    k->threads = k->dims[0] * (k->dims[1] ? k->dims[1] : 1) * (k->dims[2] ? k->dims[2] : 1);
    for (int i = 0; i < k->nn; ++i)
        if (k->n[i].kind == AMP__CX_VarDecl && inside(k, i, k->body) && var_add(k, i) < 0) return;
    k->why[0] = 0;
    mark_barriers(k);
    char maybe[256];
    snprintf(maybe, sizeof maybe, "%s", k->why);
    k->why[0] = 0;
    /* A call that may reach a barrier only matters where the transformation
     * would put it inside a work-item loop: anywhere, since it is not split. */
    if (maybe[0]) {
        fallback(k, "%s", maybe);
        return;
    }
    /* Plan and classify; then move uniform jumps and updates to the outer
     * flow (which changes the regions) and do both again. */
    plan_seq(k, k->body, true);
    if (k->why[0]) return;
    classify(k);
    if (k->why[0]) return;
    if (promote(k)) {
        reset_analysis(k);
        plan_seq(k, k->body, true);
        if (k->why[0]) return;
        classify(k);
        if (k->why[0]) return;
    }
    for (int i = 0; i < k->nn; ++i)
        if (k->n[i].candidate && !k->n[i].promoted) {
            int c, t;
            int shape = jump_shape(k, i, &c, &t);
            fallback(k, "a %s before a later barrier", shape == UJ_RETURN ? "return" : "break or continue that crosses it");
            return;
        }

    /* Work-items that call functions of the user (which may read threadIdx)
     * need the current work-item recorded. */
    for (int i = 0; i < k->nn && !k->needs_local; ++i) {
        if (k->n[i].kind != AMP__CX_CallExpr) continue;
        amp__cx_cursor f = cx->clang_getCursorReferenced(k->n[i].c);
        if (cursor_null(cx, f)) continue;
        unsigned off;
        bool in_main;
        amp__cx_loc fl = cx->clang_getCursorLocation(f);
        loc_offset(k->t, fl, &off, &in_main);
        if (in_main && off < k->t->user_start) {
            char nm[32];
            cursor_name(cx, f, nm, sizeof nm);
            if (!strcmp(nm, "geometry")) k->needs_local = true;
            continue;
        }
        if (!in_main && cx->clang_Location_isInSystemHeader(fl)) continue;
        int fk = cx->clang_getCursorKind(f);
        if (fk == AMP__CX_CXXMethod) {
            /* a lambda defined in the body is the body's own code */
            unsigned b, e;
            cursor_span(k->t, f, &b, &e, NULL);
            if (in_main && b >= k->n[k->body].b && b < k->n[k->body].e) continue;
        }
        k->needs_local = true;
    }

    /* Frame: tile_static and context slots. */
    long long frame = 0;
    for (int i = 0; i < k->nv; ++i) {
        var *v = &k->v[i];
        if (v->cls == V_TILE_STATIC) {
            if (v->size <= 0) {
                fallback(k, "tile_static %s has no size", v->name);
                return;
            }
            frame += v->size + 64;
        } else if (v->cls == V_PRIVATE) {
            frame += v->size * k->threads + 64;
        }
    }
    if (frame > AMP__LOOPS_FRAME_MAX) {
        fallback(k, "it needs %lld bytes of tile_static and work-item context, more than the loop path's %d",
                 frame, AMP__LOOPS_FRAME_MAX);
        return;
    }

    /* Edits inside regions. */
    for (int i = 0; i < k->nv; ++i) {
        var *v = &k->v[i];
        if (v->cls == V_TILE_STATIC) {
            int d = k->n[v->node].parent;
            if (d < 0 || k->n[d].kind != AMP__CX_DeclStmt || k->n[d].macro) {
                fallback(k, "tile_static %s declared in a macro", v->name);
                return;
            }
            for (int c = k->n[d].first; c >= 0; c = k->n[c].next)
                if (k->n[c].kind == AMP__CX_VarDecl && k->n[c].var >= 0 && k->v[k->n[c].var].cls != V_TILE_STATIC) {
                    fallback(k, "tile_static and other variables in one declaration");
                    return;
                }
            /* tile_static memory starts uninitialised; an initialiser would run
             * once per thread on the fiber path and once per tile here. */
            if (var_init(k, i) >= 0) {
                fallback(k, "tile_static %s has an initialiser", v->name);
                return;
            }
            bool dup = false;
            for (int j = 0; j < i; ++j)
                if (k->v[j].cls == V_TILE_STATIC && k->v[j].node != v->node && !strcmp(k->v[j].name, v->name))
                    dup = true;
            if (dup) {
                fallback(k, "two tile_static variables named %s", v->name);
                return;
            }
            amp__cx_type can = cx->clang_getCanonicalType(cx->clang_getCursorType(k->n[v->node].c));
            if (type_is_local(k, can)) {
                fallback(k, "tile_static %s has a type declared in the kernel", v->name);
                return;
            }
            bool first = true;
            for (int j = 0; j < k->ned; ++j)
                if (k->ed[j].b == k->n[d].b) first = false;
            if (first) edit_add(k, k->n[d].b, k->n[d].e, "");
        } else if (v->cls == V_UNIFORM && v->loop < 0) {
            int d = v->decl;
            bool first = true;
            for (int j = 0; j < k->ned; ++j)
                if (k->ed[j].b == k->n[d].b) first = false;
            if (first) edit_add(k, k->n[d].b, k->n[d].e, "");
        } else if (v->cls == V_REMAT && v->loop < 0) {
            int d = v->decl;
            bool first = true;
            for (int j = 0; j < k->ned; ++j)
                if (k->ed[j].b == k->n[d].b) first = false;
            if (!first) continue;
            amp__sb s = {0};
            emit_remat_decl(k, d, &s, NULL);
            if (s.oom) k->t->oom = true;
            else edit_add(k, k->n[d].b, k->n[d].e, s.p ? s.p : "");
            free(s.p);
        }
    }
    for (int h = 0; h < k->nhoist; ++h) edit_add(k, k->n[k->hoist[h]].b, k->n[k->hoist[h]].e, "");
    /* returns in the final region end the work-item */
    for (int ui = 0; ui < k->nu; ++ui) {
        unit *u = &k->u[ui];
        if (u->kind != U_REGION || !u->final) continue;
        for (int i = 0; i < k->nn; ++i) {
            if (k->n[i].kind != AMP__CX_ReturnStmt || k->n[i].b < u->b || k->n[i].b >= u->e) continue;
            bool in_lambda = false;
            for (int p = k->n[i].parent; p >= 0 && p != k->body; p = k->n[p].parent)
                if (k->n[p].kind == AMP__CX_LambdaExpr) in_lambda = true;
            if (in_lambda) continue;
            char g[48];
            snprintf(g, sizeof g, "goto amp__done_%d", ui);
            edit_add(k, k->n[i].b, k->n[i].e, g);
        }
    }
    if (k->t->oom || k->why[0]) return;

    /* Generate. */
    amp__sb *o = &k->out;
    const char *nm = k->name;
    amp__sb_printf(o, "static AMP_FI bool %s__amp_loops(amp__cpu_item *amp__it", nm);
    int pi = 0;
    for (int c = k->n[fnode].first; c >= 0; c = k->n[c].next) {
        if (k->n[c].kind != AMP__CX_ParmDecl) continue;
        if (pi > 0) {
            var *v = &k->v[k->n[c].var];
            if (v->name[0]) amp__sb_printf(o, ", const ::amp::cpu::param_t<decltype(%s__amp_body), %d> %s", nm, pi, v->name);
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
        var *v = &k->v[i];
        if (v->cls == V_TILE_STATIC) amp__sb_printf(o, "alignas(64) ::amp::cpu::ident<%s> %s;\n", v->type, v->name);
        else if (v->cls == V_PRIVATE) amp__sb_printf(o, "::amp::cpu::ctx<%s, amp__S::n> amp__c%d_%s;\n", v->type, i, v->name);
    }
    k->emit_unit = 0;
    emit_seq(k, k->body, true);
    amp__sb_puts(o, "return true;\n}\n");
    amp__sb_printf(o, "extern \"C\" __attribute__((visibility(\"default\"))) void %s__amp_tiles(amp__cpu_item *amp__it)\n"
                 "{ ::amp::cpu::run_tiles<decltype(%s__amp_body), %s__amp_loops>(amp__it); }\n",
              nm, nm, nm);
    /* Its tile_static memory, measured by the compiler (the kernel has no
     * fiber version whose thread-local symbols could tell). */
    amp__sb_printf(o, "extern \"C\" __attribute__((visibility(\"default\"))) const unsigned long long "
                 "%s__amp_tile_static = 0", nm);
    for (int i = 0; i < k->nv; ++i)
        if (k->v[i].cls == V_TILE_STATIC) amp__sb_printf(o, " + sizeof(::amp::cpu::ident<%s>)", k->v[i].type);
    amp__sb_puts(o, ";\n");
}

static void kernel_free(kctx *k)
{
    for (int i = 0; i < k->ned; ++i) free(k->ed[i].text);
    free(k->ed);
    free(k->n);
    free(k->v);
    free(k->u);
    free(k->out.p);
}

/* ---------------------------------------------------------- the unit */

typedef struct found {
    amp__cx_cursor fn;
    char name[256];
    unsigned end; /* offset after the body's closing brace */
} found;

typedef struct find_arg {
    tu_ctx *t;
    found *f;
    int n, cap;
} find_arg;

static int find_kernels(amp__cx_cursor c, amp__cx_cursor parent, void *data)
{
    find_arg *a = data;
    tu_ctx *t = a->t;
    const amp__clang *cx = t->cx;
    int kind = cx->clang_getCursorKind(c);
    if (kind == AMP__CX_Namespace || kind == AMP__CX_LinkageSpec) {
        cx->clang_visitChildren(c, find_kernels, a);
        return AMP__CXV_Continue;
    }
    if (kind == AMP__CX_MacroDefinition || kind == AMP__CX_MacroExpansion) {
        unsigned b, e;
        bool in_main;
        cursor_span(t, c, &b, &e, &in_main);
        if (!in_main || b < t->user_start) return AMP__CXV_Continue;
        if (kind == AMP__CX_MacroExpansion) {
            amp__cx_cursor d = cx->clang_getCursorReferenced(c);
            unsigned db, de;
            bool dmain;
            if (cursor_null(cx, d)) return AMP__CXV_Continue;
            cursor_span(t, d, &db, &de, &dmain);
            if (!dmain || db < t->user_start) return AMP__CXV_Continue;
            if (t->nmexps == t->cmexps && !grow(&t->mexps, &t->cmexps, sizeof *t->mexps, 64, &t->oom))
                return AMP__CXV_Break;
            t->mexps[t->nmexps++] = (struct mexp){b, db};
            return AMP__CXV_Continue;
        }
        if (t->nmdefs == t->cmdefs && !grow(&t->mdefs, &t->cmdefs, sizeof *t->mdefs, 32, &t->oom))
            return AMP__CXV_Break;
        struct mdef *m = &t->mdefs[t->nmdefs++];
        cursor_name(cx, c, m->name, sizeof m->name);
        m->b = b;
        m->e = e;
        return AMP__CXV_Continue;
    }
    if (kind != AMP__CX_FunctionDecl || !cx->clang_isCursorDefinition(c)) return AMP__CXV_Continue;
    char name[300];
    cursor_name(cx, c, name, sizeof name);
    size_t n = strlen(name);
    if (n <= 10 || strcmp(name + n - 10, "__amp_body")) return AMP__CXV_Continue;
    unsigned b, e;
    bool in_main;
    cursor_span(t, c, &b, &e, &in_main);
    if (!in_main || b < t->user_start) return AMP__CXV_Continue;
    amp__cx_type ft = cx->clang_getCursorType(c);
    if (cx->clang_getNumArgTypes(ft) < 1) return AMP__CXV_Continue;
    char first[256];
    amp__clang_text(cx, cx->clang_getTypeSpelling(cx->clang_getCanonicalType(cx->clang_getArgType(ft, 0))), first,
                    sizeof first);
    const char *ti = !strncmp(first, "const ", 6) ? first + 6 : first;
    if (strncmp(ti, "amp::tiled_index<", 17)) return AMP__CXV_Continue;
    if (a->n == a->cap && !grow(&a->f, &a->cap, sizeof *a->f, 16, &t->oom))
        return AMP__CXV_Break;
    found *f = &a->f[a->n++];
    f->fn = c;
    snprintf(f->name, sizeof f->name, "%.*s", (int)(n - 10), name);
    f->end = e;
    return AMP__CXV_Continue;
}

static int cmp_found(const void *a, const void *b)
{
    unsigned x = ((const found *)a)->end, y = ((const found *)b)->end;
    return (x > y) - (x < y);
}

bool amp__cpu_loops_transform(const amp__cpu_loops_job *job, amp__cpu_loops_result *res, char *note, size_t cap)
{
    const char *why = NULL;
    const amp__clang *cx = amp__clang_get(&why);
    bool ok = false;
    amp__cx_index idx = NULL;
    tu_ctx t;
    memset(&t, 0, sizeof t);
    find_arg fa = {&t, NULL, 0, 0};
    memset(res, 0, sizeof *res);
    note[0] = 0;
    if (!cx) {
        snprintf(note, cap, "fibers: %s", why);
        return false;
    }
    t.cx = cx;
    t.src = job->source;
    t.len = job->len;
    /* Everything up to the end of the device library is the library's own. */
    t.user_start = (unsigned)amp__cpu_library_end(job->source);

    idx = cx->clang_createIndex(0, 0);
    if (!idx) {
        snprintf(note, cap, "fibers: libclang could not create an index");
        goto done;
    }
    /* libclang turns on LLVM's crash recovery (signal handlers) when an
     * index is created; the host application owns its signals. */
    cx->clang_toggleCrashRecovery(0);
    const char *args[80];
    int na = 0;
    for (int i = 0; i < job->nargs && na < 76; ++i) args[na++] = job->args[i];
    if (cx->resource_dir[0]) {
        args[na++] = "-resource-dir";
        args[na++] = cx->resource_dir;
    }
    amp__cx_unsaved uf = {job->path, job->source, (unsigned long)job->len};
    int rc = cx->clang_parseTranslationUnit2(idx, job->path, args, na, &uf, 1,
                                             AMP__CXTU_DetailedPreprocessingRecord, &t.tu);
    if (rc != 0 || !t.tu) {
        snprintf(note, cap, "fibers: libclang could not parse the source (error %d)", rc);
        goto done;
    }
    unsigned nd = cx->clang_getNumDiagnostics(t.tu);
    for (unsigned i = 0; i < nd; ++i) {
        amp__cx_diag d = cx->clang_getDiagnostic(t.tu, i);
        int sev = cx->clang_getDiagnosticSeverity(d);
        if (sev >= AMP__CXD_Error) {
            char msg[300];
            amp__clang_text(cx, cx->clang_formatDiagnostic(d, 0x1 | 0x2), msg, sizeof msg);
            cx->clang_disposeDiagnostic(d);
            snprintf(note, cap, "fibers: libclang %.60s could not parse the source: %.300s", cx->version, msg);
            goto done;
        }
        cx->clang_disposeDiagnostic(d);
    }
    t.file = cx->clang_getFile(t.tu, job->path);
    if (!t.file) {
        snprintf(note, cap, "fibers: libclang lost the source file");
        goto done;
    }
    /* Tokens of the user's part, by offset. */
    amp__cx_loc lb = cx->clang_getLocationForOffset(t.tu, t.file, t.user_start);
    amp__cx_loc le = cx->clang_getLocationForOffset(t.tu, t.file, (unsigned)job->len);
    cx->clang_tokenize(t.tu, cx->clang_getRange(lb, le), &t.toks, &t.ntoks);
    t.tb = malloc(((size_t)t.ntoks + 1) * sizeof *t.tb);
    t.te = malloc(((size_t)t.ntoks + 1) * sizeof *t.te);
    if (!t.tb || !t.te) {
        snprintf(note, cap, "fibers: no memory for the loop transformation");
        goto done;
    }
    for (unsigned i = 0; i < t.ntoks; ++i) {
        amp__cx_range r = cx->clang_getTokenExtent(t.tu, t.toks[i]);
        loc_offset(&t, cx->clang_getRangeStart(r), &t.tb[i], NULL);
        loc_offset(&t, cx->clang_getRangeEnd(r), &t.te[i], NULL);
    }

    cx->clang_visitChildren(cx->clang_getTranslationUnitCursor(t.tu), find_kernels, &fa);
    if (t.oom) {
        snprintf(note, cap, "fibers: no memory for the loop transformation");
        goto done;
    }
    if (fa.n == 0) {
        snprintf(note, cap, "fibers: no tiled kernel found by the loop transformation");
        goto done;
    }
    qsort(fa.f, (size_t)fa.n, sizeof *fa.f, cmp_found);
    res->k = calloc((size_t)fa.n, sizeof *res->k);
    if (!res->k) {
        snprintf(note, cap, "fibers: no memory for the loop transformation");
        goto done;
    }
    res->n = fa.n;
    for (int i = 0; i < fa.n && !t.oom; ++i) {
        found *f = &fa.f[i];
        amp__cpu_loops_kernel *rk = &res->k[i];
        kctx k;
        memset(&k, 0, sizeof k);
        k.t = &t;
        k.cx = cx;
        k.fn = f->fn;
        snprintf(k.name, sizeof k.name, "%s", f->name);
        snprintf(rk->name, sizeof rk->name, "%s", f->name);
        rk->at = f->end;
        kernel_loops(&k);
        if (k.out.oom) t.oom = true;
        if (!k.why[0] && k.out.p) {
            amp__sb code = {0};
            bool *want = t.nmdefs > 0 ? calloc((size_t)t.nmdefs, sizeof *want) : NULL;
            if (t.nmdefs > 0 && !want) t.oom = true;
            if (want) collect_macros(&k, k.n[k.body].b, k.n[k.body].e, want);
            for (int m = 0; want && m < t.nmdefs; ++m)
                if (want[m]) {
                    amp__sb_printf(&code, "#pragma push_macro(\"%s\")\n#undef %s\n#define ", t.mdefs[m].name, t.mdefs[m].name);
                    amp__sb_put(&code, t.src + t.mdefs[m].b, t.mdefs[m].e - t.mdefs[m].b);
                    amp__sb_puts(&code, "\n");
                }
            amp__sb_printf(&code, "#line 1 \"hipamp loop version of %s\"\n", k.name);
            amp__sb_put(&code, k.out.p, k.out.n);
            for (int m = t.nmdefs - 1; want && m >= 0; --m)
                if (want[m]) amp__sb_printf(&code, "#pragma pop_macro(\"%s\")\n", t.mdefs[m].name);
            free(want);
            if (code.oom) t.oom = true;
            rk->loops = code.p;
        } else {
            snprintf(rk->why, sizeof rk->why, "%s", k.why[0] ? k.why : "no loop version");
        }
        /* back to the user's numbering for the rest of the line */
        amp__cx_loc el = cx->clang_getLocationForOffset(t.tu, t.file, f->end > 0 ? f->end - 1 : 0);
        amp__cx_string pf;
        unsigned line = 0, col = 0;
        cx->clang_getPresumedLocation(el, &pf, &line, &col);
        char fname[1024];
        amp__clang_text(cx, pf, fname, sizeof fname);
        amp__sb ld = {0};
        amp__sb_printf(&ld, "#line %u \"", line);
        sb_cstring(&ld, fname);
        amp__sb_puts(&ld, "\"\n");
        if (ld.oom) t.oom = true;
        rk->line = ld.p;
        kernel_free(&k);
    }
    if (t.oom) {
        snprintf(note, cap, "fibers: no memory for the loop transformation");
        goto done;
    }
    ok = true;
done:
    if (!ok) amp__cpu_loops_free(res);
    free(fa.f);
    for (int i = 0; i < t.nmemo; ++i) free(t.memo[i].usr);
    free(t.memo);
    free(t.mdefs);
    free(t.mexps);
    free(t.tb);
    free(t.te);
    if (t.toks) cx->clang_disposeTokens(t.tu, t.toks, t.ntoks);
    if (t.tu) cx->clang_disposeTranslationUnit(t.tu);
    if (idx) cx->clang_disposeIndex(idx);
    return ok;
}

void amp__cpu_loops_free(amp__cpu_loops_result *res)
{
    for (int i = 0; i < res->n; ++i) {
        free(res->k[i].loops);
        free(res->k[i].line);
    }
    free(res->k);
    memset(res, 0, sizeof *res);
}

char *amp__cpu_loops_assemble(const char *source, const amp__cpu_loops_result *res)
{
    amp__sb out = {0};
    size_t len = strlen(source);
    /* Kernels with a loop version get no fiber version (the entry point's
     * macro looks itself up in this list): the work is compiled once. */
    amp__sb_puts(&out, "#define AMP__CPU_LOOPS_LIST \"|");
    for (int i = 0; i < res->n; ++i)
        if (res->k[i].loops && !res->k[i].off) amp__sb_printf(&out, "%s|", res->k[i].name);
    amp__sb_puts(&out, "\"\n");
    unsigned at = 0;
    for (int i = 0; i < res->n; ++i) {
        const amp__cpu_loops_kernel *rk = &res->k[i];
        if (rk->at > len || rk->at < at) continue;
        amp__sb_put(&out, source + at, rk->at - at);
        at = rk->at;
        amp__sb_puts(&out, "\n");
        if (rk->loops && !rk->off) {
            amp__sb_puts(&out, rk->loops);
            amp__sb_printf(&out, "extern \"C\" __attribute__((visibility(\"default\"))) const char %s__amp_cpu_path[] = "
                            "\"loops\";\n", rk->name);
        } else {
            amp__sb_printf(&out, "extern \"C\" __attribute__((visibility(\"default\"))) const char %s__amp_cpu_path[] = "
                            "\"fibers: ", rk->name);
            sb_cstring(&out, rk->off ? rk->off_why : rk->why);
            amp__sb_puts(&out, "\";\n");
        }
        if (rk->line) amp__sb_puts(&out, rk->line);
    }
    amp__sb_put(&out, source + at, len - at);
    if (out.oom) {
        free(out.p);
        return NULL;
    }
    return out.p;
}

/* ------------------------------------------------------------ transport
 * The transformation runs in a child process (cpu_compile.c); its result
 * crosses a pipe as: "AMPL1\n", note\0, kernel count\n, then per kernel
 * name\0 at\n why\0 line\0 loops-length\n loops. */

char *amp__cpu_loops_encode(bool ok, const amp__cpu_loops_result *res, const char *note, size_t *len)
{
    amp__sb b = {0};
    amp__sb_puts(&b, "AMPL1\n");
    amp__sb_put(&b, note, strlen(note) + 1);
    amp__sb_printf(&b, "%d\n", ok ? res->n : -1);
    for (int i = 0; ok && i < res->n; ++i) {
        const amp__cpu_loops_kernel *k = &res->k[i];
        amp__sb_put(&b, k->name, strlen(k->name) + 1);
        amp__sb_printf(&b, "%u\n", k->at);
        amp__sb_put(&b, k->why, strlen(k->why) + 1);
        amp__sb_put(&b, k->line ? k->line : "", strlen(k->line ? k->line : "") + 1);
        size_t ll = k->loops ? strlen(k->loops) : 0;
        amp__sb_printf(&b, "%zu\n", ll);
        if (ll) amp__sb_put(&b, k->loops, ll);
    }
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    *len = b.n;
    return b.p;
}

/* A field up to delim inside [*p, end): NULL when missing. */
static const char *take(const char **p, const char *end, char delim)
{
    const char *s = *p;
    const char *d = memchr(s, delim, (size_t)(end - s));
    if (!d) return NULL;
    *p = d + 1;
    return s;
}

bool amp__cpu_loops_decode(const char *buf, size_t len, amp__cpu_loops_result *res, char *note, size_t cap)
{
    const char *p = buf, *end = buf + len;
    memset(res, 0, sizeof *res);
    note[0] = 0;
    if (len < 6 || memcmp(buf, "AMPL1\n", 6)) return false;
    p += 6;
    const char *f = take(&p, end, 0);
    if (!f) return false;
    snprintf(note, cap, "%s", f);
    const char *nl = take(&p, end, '\n');
    if (!nl) return false;
    int n = atoi(nl);
    if (n < 0) return false;
    if (n > 100000) goto bad;
    res->k = calloc((size_t)n + 1, sizeof *res->k);
    if (!res->k) goto bad;
    res->n = n;
    for (int i = 0; i < n; ++i) {
        amp__cpu_loops_kernel *k = &res->k[i];
        const char *name = take(&p, end, 0), *at = name ? take(&p, end, '\n') : NULL;
        const char *why = at ? take(&p, end, 0) : NULL, *line = why ? take(&p, end, 0) : NULL;
        const char *ll = line ? take(&p, end, '\n') : NULL;
        if (!ll) goto bad;
        snprintf(k->name, sizeof k->name, "%s", name);
        k->at = (unsigned)strtoul(at, NULL, 10);
        snprintf(k->why, sizeof k->why, "%s", why);
        size_t l = strtoul(ll, NULL, 10);
        if (line[0] && !(k->line = amp__strdup(line))) goto bad;
        if (l) {
            if (l > (size_t)(end - p) || !(k->loops = malloc(l + 1))) goto bad;
            memcpy(k->loops, p, l);
            k->loops[l] = 0;
            p += l;
        }
    }
    return true;
bad:
    amp__cpu_loops_free(res);
    snprintf(note, cap, "fibers: the loop transformation's result was garbled");
    return false;
}
