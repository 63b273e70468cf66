/* barriers.c — the loop transformation's barrier analysis: which calls in a kernel reach a barrier, directly (the preludes' barrier functions, known by name) or through the user's functions (analysed through their definitions, memoised), and which statements are exactly a barrier. */
#include "loops.h"

#include <stdio.h>
#include <string.h>

/* Classes of functions (amp__loops_memo.cls): does calling it possibly
 * reach a barrier? BUSY: being classified (recursion). */
enum { F_SAFE = 1, F_BARRIER, F_MAYBE, F_BUSY };

static int fn_class(amp__loops_tu *t, amp__cx_cursor f, char *why, size_t cap);

typedef struct scan_arg {
    amp__loops_tu *t;
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
        if (amp__loops_cursor_null(cx, r)) {
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
static int fn_class(amp__loops_tu *t, amp__cx_cursor f, char *why, size_t cap)
{
    const amp__clang *cx = t->cx;
    char name[160];
    amp__loops_cursor_name(cx, f, name, sizeof name);
    amp__cx_loc loc = cx->clang_getCursorLocation(f);
    unsigned off = 0;
    bool in_main = false;
    amp__loops_loc_offset(t, loc, &off, &in_main);
    if (in_main && off < t->user_start) {
        if (!strcmp(name, "__syncthreads")) return F_BARRIER;
        if (!strncmp(name, "wait", 4)) {
            char cls[64];
            amp__loops_cursor_name(cx, cx->clang_getCursorSemanticParent(f), cls, sizeof cls);
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
    if (t->nmemo == t->cmemo && !amp__loops_grow(&t->memo, &t->cmemo, sizeof *t->memo, 32, &t->oom))
        return F_MAYBE;
    int mi = t->nmemo++;
    t->memo[mi].usr = amp__strdup(usr);
    t->memo[mi].cls = F_BUSY;
    t->memo[mi].why[0] = 0;
    if (!t->memo[mi].usr) t->oom = true;

    amp__cx_cursor def = cx->clang_getCursorDefinition(f);
    scan_arg a = {t, F_SAFE, "", false};
    if (amp__loops_cursor_null(cx, def)) {
        amp__cx_cursor tmpl = cx->clang_getSpecializedCursorTemplate(f);
        if (!amp__loops_cursor_null(cx, tmpl)) def = cx->clang_getCursorDefinition(tmpl);
        a.dependent = true;
    }
    int cls = F_SAFE;
    if (!amp__loops_cursor_null(cx, def)) {
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
void amp__loops_mark_barriers(amp__loops_ctx *k)
{
    amp__loops_tu *t = k->t;
    for (int i = 0; i < k->nn; ++i) {
        amp__loops_node *x = &k->n[i];
        if (x->kind != AMP__CX_CallExpr) continue;
        bool in_lambda = false;
        for (int p = x->parent; p >= 0; p = k->n[p].parent)
            if (k->n[p].kind == AMP__CX_LambdaExpr) in_lambda = true;
        if (in_lambda) continue;
        amp__cx_cursor r = k->cx->clang_getCursorReferenced(x->c);
        char why[160] = "";
        int fc = amp__loops_cursor_null(k->cx, r) ? F_MAYBE : fn_class(t, r, why, sizeof why);
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
bool amp__loops_is_barrier_stmt(const amp__loops_ctx *k, int s)
{
    int c = amp__loops_strip(k, s);
    if (c < 0 || k->n[c].kind != AMP__CX_CallExpr) return false;
    if (!k->n[c].barrier) return false;
    /* No barrier among its arguments or object expression. */
    for (int a = k->n[c].first; a >= 0; a = k->n[a].next)
        if (k->n[a].barrier) return false;
    return true;
}
