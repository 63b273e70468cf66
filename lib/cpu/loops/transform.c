/* transform.c — the loop transformation of a translation unit: parses it with libclang (the user's part tokenised, its macros recorded), finds its tiled kernels, runs the passes on each and wraps each loop version in the user's macros and #line; and splices the results into the source. */
#include "loops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A C string literal's contents. */
static void sb_cstring(amp__sb *s, const char *t)
{
    for (; *t; ++t) {
        if (*t == '"' || *t == '\\') amp__sb_printf(s, "\\%c", *t);
        else if ((unsigned char)*t < 32) amp__sb_printf(s, "\\%03o", (unsigned)(unsigned char)*t);
        else amp__sb_put(s, t, 1);
    }
}

/* ---------------------------------------------------------- user macros */

/* Names used by the generated code must not collide with macros the user's
 * regions expand later: user macros used in copied text are re-emitted
 * around it (#pragma push_macro/pop_macro), so a definition made inside the
 * body, or one #undef'd after it, expands the same. */
static void collect_macro_names(amp__loops_ctx *k, unsigned b, unsigned e, bool *want)
{
    amp__loops_tu *t = k->t;
    for (unsigned i = amp__loops_tok_find(t, b); i < t->ntoks && t->tb[i] < e; ++i) {
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
static void collect_macros(amp__loops_ctx *k, unsigned b, unsigned e, bool *want)
{
    amp__loops_tu *t = k->t;
    for (int x = 0; x < t->nmexps; ++x) {
        if (t->mexps[x].off < b || t->mexps[x].off >= e) continue;
        for (int m = 0; m < t->nmdefs; ++m)
            if (t->mdefs[m].b == t->mexps[x].def && !want[m]) {
                want[m] = true;
                collect_macro_names(k, t->mdefs[m].b, t->mdefs[m].e, want);
            }
    }
}

/* ------------------------------------------------------------ the unit */

typedef struct found {
    amp__cx_cursor fn;
    char name[256];
    unsigned end; /* offset after the body's closing brace */
} found;

typedef struct find_arg {
    amp__loops_tu *t;
    found *f;
    int n, cap;
} find_arg;

static int find_kernels(amp__cx_cursor c, amp__cx_cursor parent, void *data)
{
    find_arg *a = data;
    amp__loops_tu *t = a->t;
    const amp__clang *cx = t->cx;
    int kind = cx->clang_getCursorKind(c);
    if (kind == AMP__CX_Namespace || kind == AMP__CX_LinkageSpec) {
        cx->clang_visitChildren(c, find_kernels, a);
        return AMP__CXV_Continue;
    }
    if (kind == AMP__CX_MacroDefinition || kind == AMP__CX_MacroExpansion) {
        unsigned b, e;
        bool in_main;
        amp__loops_cursor_span(t, c, &b, &e, &in_main);
        if (!in_main || b < t->user_start) return AMP__CXV_Continue;
        if (kind == AMP__CX_MacroExpansion) {
            amp__cx_cursor d = cx->clang_getCursorReferenced(c);
            unsigned db, de;
            bool dmain;
            if (amp__loops_cursor_null(cx, d)) return AMP__CXV_Continue;
            amp__loops_cursor_span(t, d, &db, &de, &dmain);
            if (!dmain || db < t->user_start) return AMP__CXV_Continue;
            if (t->nmexps == t->cmexps && !amp__loops_grow(&t->mexps, &t->cmexps, sizeof *t->mexps, 64, &t->oom))
                return AMP__CXV_Break;
            t->mexps[t->nmexps++] = (struct amp__loops_mexp){b, db};
            return AMP__CXV_Continue;
        }
        if (t->nmdefs == t->cmdefs && !amp__loops_grow(&t->mdefs, &t->cmdefs, sizeof *t->mdefs, 32, &t->oom))
            return AMP__CXV_Break;
        struct amp__loops_mdef *m = &t->mdefs[t->nmdefs++];
        amp__loops_cursor_name(cx, c, m->name, sizeof m->name);
        m->b = b;
        m->e = e;
        return AMP__CXV_Continue;
    }
    if (kind != AMP__CX_FunctionDecl || !cx->clang_isCursorDefinition(c)) return AMP__CXV_Continue;
    char name[300];
    amp__loops_cursor_name(cx, c, name, sizeof name);
    size_t n = strlen(name);
    if (n <= 10 || strcmp(name + n - 10, "__amp_body")) return AMP__CXV_Continue;
    unsigned b, e;
    bool in_main;
    amp__loops_cursor_span(t, c, &b, &e, &in_main);
    if (!in_main || b < t->user_start) return AMP__CXV_Continue;
    amp__cx_type ft = cx->clang_getCursorType(c);
    if (cx->clang_getNumArgTypes(ft) < 1) return AMP__CXV_Continue;
    char first[256];
    amp__clang_text(cx, cx->clang_getTypeSpelling(cx->clang_getCanonicalType(cx->clang_getArgType(ft, 0))), first,
                    sizeof first);
    const char *ti = !strncmp(first, "const ", 6) ? first + 6 : first;
    if (strncmp(ti, "amp::tiled_index<", 17)) return AMP__CXV_Continue;
    if (a->n == a->cap && !amp__loops_grow(&a->f, &a->cap, sizeof *a->f, 16, &t->oom))
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

/* The loop version of one tiled kernel into rk (or why it has none), and
 * the #line that brings the rest of the source back to the user's
 * numbering; t->oom set when memory ran out. */
static void transform_kernel(amp__loops_tu *t, const found *f, amp__cpu_loops_kernel *rk)
{
    const amp__clang *cx = t->cx;
    amp__loops_ctx k;
    memset(&k, 0, sizeof k);
    k.t = t;
    k.cx = cx;
    k.fn = f->fn;
    snprintf(k.name, sizeof k.name, "%s", f->name);
    snprintf(rk->name, sizeof rk->name, "%s", f->name);
    rk->at = f->end;
    amp__loops_kernel(&k);
    if (k.why[0] && k.nmarked > 0 && !t->oom) {
        /* Something the lockstep loops brought (interchange.c) was refused:
         * the kernel as it would be without them. */
        amp__loops_kernel_free(&k);
        memset(&k, 0, sizeof k);
        k.t = t;
        k.cx = cx;
        k.fn = f->fn;
        k.no_interchange = true;
        snprintf(k.name, sizeof k.name, "%s", f->name);
        amp__loops_kernel(&k);
    }
    if (k.out.oom) t->oom = true;
    bool *want = NULL;
    if (!k.why[0] && k.out.p && t->nmdefs > 0) {
        if (!(want = calloc((size_t)t->nmdefs, sizeof *want))) t->oom = true;
        else collect_macros(&k, k.n[k.body].b, k.n[k.body].e, want);
        /* A macro redefined in the body: one definition holds around the
         * whole loop version, where the body's code expands both. */
        for (int m = 0; want && m < t->nmdefs && !k.why[0]; ++m)
            for (int m2 = m + 1; want[m] && m2 < t->nmdefs; ++m2)
                if (want[m2] && !strcmp(t->mdefs[m].name, t->mdefs[m2].name)) {
                    amp__loops_fallback(&k, "macro %s is defined again for the kernel's code", t->mdefs[m].name);
                    break;
                }
    }
    if (!k.why[0] && k.out.p) {
        amp__sb code = {0};
        for (int m = 0; want && m < t->nmdefs; ++m)
            if (want[m]) {
                amp__sb_printf(&code, "#pragma push_macro(\"%s\")\n#undef %s\n#define ", t->mdefs[m].name, t->mdefs[m].name);
                amp__sb_put(&code, t->src + t->mdefs[m].b, t->mdefs[m].e - t->mdefs[m].b);
                amp__sb_puts(&code, "\n");
            }
        amp__sb_printf(&code, "#line 1 \"hipamp loop version of %s\"\n", k.name);
        amp__sb_put(&code, k.out.p, k.out.n);
        for (int m = t->nmdefs - 1; want && m >= 0; --m)
            if (want[m]) amp__sb_printf(&code, "#pragma pop_macro(\"%s\")\n", t->mdefs[m].name);
        if (code.oom) t->oom = true;
        rk->loops = code.p;
    } else {
        snprintf(rk->why, sizeof rk->why, "%s", k.why[0] ? k.why : "no loop version");
    }
    free(want);
    /* back to the user's numbering for the rest of the line */
    amp__cx_loc el = cx->clang_getLocationForOffset(t->tu, t->file, f->end > 0 ? f->end - 1 : 0);
    amp__cx_string pf;
    unsigned line = 0, col = 0;
    cx->clang_getPresumedLocation(el, &pf, &line, &col);
    char fname[1024];
    amp__clang_text(cx, pf, fname, sizeof fname);
    amp__sb ld = {0};
    amp__sb_printf(&ld, "#line %u \"", line);
    sb_cstring(&ld, fname);
    amp__sb_puts(&ld, "\"\n");
    if (ld.oom) t->oom = true;
    rk->line = ld.p;
    amp__loops_kernel_free(&k);
}

/* libclang's arguments for the job: its own, then the built-in headers'
 * directory and what reads the precompiled library part (pch_path). */
static int parse_args(const amp__clang *cx, const amp__cpu_loops_job *job, const char *pch_path, const char **args)
{
    int na = 0;
    for (int i = 0; i < job->nargs && na < 74; ++i) args[na++] = job->args[i];
    if (cx->resource_dir[0]) {
        args[na++] = "-resource-dir";
        args[na++] = cx->resource_dir;
    }
    if (pch_path) {
        args[na++] = "-include-pch";
        args[na++] = pch_path;
    }
    return na;
}

/* Parses the unit: the whole text, or (pch) the text with the library's
 * part blanked out (spaces, its line breaks kept: every offset and line
 * of the user's part is the same) after the precompiled part, whose text
 * libclang is handed under its name (it would otherwise look for the file;
 * it does not compare the two: the part's key does, cpu_pch.c). */
static int parse_unit(const amp__clang *cx, amp__cx_index idx, const amp__cpu_loops_job *job, bool pch,
                      amp__cx_tu *tu)
{
    const char *args[80];
    int na = parse_args(cx, job, pch ? job->pch : NULL, args);
    char *blank = NULL;
    if (pch) {
        if (!(blank = malloc(job->len + 1))) return -1;
        memcpy(blank, job->source, job->len + 1);
        for (size_t i = 0; i < job->user_start && i < job->len; ++i)
            if (blank[i] != '\n') blank[i] = ' ';
    }
    amp__cx_unsaved uf[2] = {{job->path, pch ? blank : job->source, (unsigned long)job->len},
                             {AMP__LOOPS_LIBRARY_PART, job->source, (unsigned long)job->user_start}};
    int rc = cx->clang_parseTranslationUnit2(idx, job->path, args, na, uf, pch ? 2 : 1,
                                             AMP__CXTU_DetailedPreprocessingRecord, tu);
    free(blank);
    return rc;
}

/* Whether a parse reported an error (a precompiled part libclang refused
 * says so this way too); its text in msg (cap bytes; none when 0). */
static bool first_error(const amp__clang *cx, amp__cx_tu tu, char *msg, size_t cap)
{
    bool bad = false;
    unsigned nd = cx->clang_getNumDiagnostics(tu);
    for (unsigned i = 0; i < nd && !bad; ++i) {
        amp__cx_diag d = cx->clang_getDiagnostic(tu, i);
        bad = cx->clang_getDiagnosticSeverity(d) >= AMP__CXD_Error;
        if (bad && cap) amp__clang_text(cx, cx->clang_formatDiagnostic(d, 0x1 | 0x2), msg, cap);
        cx->clang_disposeDiagnostic(d);
    }
    return bad;
}

/* The files a parse read, one a line: absolute path, size, modification
 * time (seconds, nanoseconds), tab-separated; bad when one cannot be
 * listed so. */
typedef struct inputs_arg {
    const amp__clang *cx;
    amp__sb out;
    bool bad;
} inputs_arg;

static void list_input(amp__cx_file f, amp__cx_loc *stack, unsigned depth, void *data)
{
    (void)stack;
    (void)depth;
    inputs_arg *a = data;
    char name[4096];
    struct stat sb;
    amp__clang_text(a->cx, a->cx->clang_getFileName(f), name, sizeof name);
    if (!strcmp(name, AMP__LOOPS_LIBRARY_PART)) return; /* handed over, never read from the disk */
    if (name[0] != '/' || strlen(name) >= sizeof name - 1 || strpbrk(name, "\t\n") || stat(name, &sb) != 0 ||
        !S_ISREG(sb.st_mode)) {
        a->bad = true;
        return;
    }
    amp__sb_printf(&a->out, "%s\t%lld\t%lld\t%ld\n", name, (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
                   (long)sb.st_mtim.tv_nsec);
}

/* The files a parse of the unit read (amp__cpu_loops_result.read). */
typedef struct reads_arg {
    const amp__clang *cx;
    const char *unit;
    amp__sb out;
} reads_arg;

static void list_read(amp__cx_file f, amp__cx_loc *stack, unsigned depth, void *data)
{
    (void)stack;
    (void)depth;
    reads_arg *a = data;
    char name[4096];
    amp__clang_text(a->cx, a->cx->clang_getFileName(f), name, sizeof name);
    if (!strcmp(name, a->unit) || !strcmp(name, AMP__LOOPS_LIBRARY_PART)) return; /* handed over */
    size_t rl = strlen(a->cx->resource_dir);
    if (rl && !strncmp(name, a->cx->resource_dir, rl) && name[rl] == '/') return;
    if (name[0] && strlen(name) < sizeof name - 1 && !strchr(name, '\n')) {
        amp__sb_printf(&a->out, "%s\n", name);
        return;
    }
    name[strcspn(name, "\n")] = '\0';
    amp__sb_printf(&a->out, "?%.200s\n", name[0] ? name : "(a file with no name)");
}

bool amp__cpu_loops_save_pch(const amp__cpu_loops_job *job, const char *path, char **inputs, char *note, size_t cap)
{
    const char *why = NULL;
    const amp__clang *cx = amp__clang_get(&why);
    amp__cx_index idx = NULL;
    amp__cx_tu tu = NULL;
    bool ok = false;
    note[0] = 0;
    if (!cx) {
        snprintf(note, cap, "%s", why);
        return false;
    }
    if (!(idx = cx->clang_createIndex(0, 0))) {
        snprintf(note, cap, "libclang could not create an index");
        goto done;
    }
    cx->clang_toggleCrashRecovery(0);
    /* The job's arguments, the language a header's (they begin "-x c++"). */
    const char *args[80];
    int na = parse_args(cx, job, NULL, args);
    for (int i = 0; i + 1 < na; ++i)
        if (!strcmp(args[i], "-x")) args[++i] = "c++-header";
    amp__cx_unsaved uf = {AMP__LOOPS_LIBRARY_PART, job->source, (unsigned long)job->user_start};
    int rc = cx->clang_parseTranslationUnit2(idx, AMP__LOOPS_LIBRARY_PART, args, na, &uf, 1,
                                             AMP__CXTU_DetailedPreprocessingRecord | AMP__CXTU_ForSerialization,
                                             &tu);
    if (rc != 0 || !tu || first_error(cx, tu, NULL, 0)) {
        snprintf(note, cap, "libclang could not parse the library's part (error %d)", rc);
        goto done;
    }
    /* What it read: libclang checks none of the system headers when it
     * reads the part back, so the part is kept with their list (cpu_pch.c
     * compares it with the disk before use). */
    inputs_arg in = {cx, {0}, false};
    cx->clang_getInclusions(tu, list_input, &in);
    if (in.bad || in.out.oom || !in.out.p) {
        snprintf(note, cap, "libclang's part read a file that cannot be listed");
        free(in.out.p);
        goto done;
    }
    rc = cx->clang_saveTranslationUnit(tu, path, 0);
    if (rc != 0) {
        snprintf(note, cap, "libclang could not save the library's part (error %d)", rc);
        free(in.out.p);
        goto done;
    }
    *inputs = in.out.p;
    ok = true;
done:
    if (tu) cx->clang_disposeTranslationUnit(tu);
    if (idx) cx->clang_disposeIndex(idx);
    return ok;
}

bool amp__cpu_loops_transform(const amp__cpu_loops_job *job, amp__cpu_loops_result *res, char *note, size_t cap)
{
    const char *why = NULL;
    const amp__clang *cx = amp__clang_get(&why);
    bool ok = false;
    amp__cx_index idx = NULL;
    amp__loops_tu t;
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
    t.user_start = (unsigned)job->user_start;

    idx = cx->clang_createIndex(0, 0);
    if (!idx) {
        snprintf(note, cap, "fibers: libclang could not create an index");
        goto done;
    }
    /* libclang turns on LLVM's crash recovery (signal handlers) when an
     * index is created; the host application owns its signals. */
    cx->clang_toggleCrashRecovery(0);
    int rc = -1;
    if (job->pch) {
        /* Refused by libclang (errors), or a part whose positions cannot
         * be told from the main file's (libclang takes two files that are
         * not on the disk for one): the text is parsed whole. */
        rc = parse_unit(cx, idx, job, true, &t.tu);
        if (rc == 0) {
            t.file = cx->clang_getFile(t.tu, job->path);
            t.lib_file = cx->clang_getFile(t.tu, AMP__LOOPS_LIBRARY_PART);
        }
        if (rc == 0 && (first_error(cx, t.tu, NULL, 0) || !t.file || !t.lib_file ||
                        cx->clang_File_isEqual(t.file, t.lib_file))) {
            cx->clang_disposeTranslationUnit(t.tu);
            t.tu = NULL;
            t.file = t.lib_file = NULL;
            rc = -1;
        }
        res->pch_used = rc == 0;
    }
    if (rc != 0) {
        rc = parse_unit(cx, idx, job, false, &t.tu);
        if (rc != 0 || !t.tu) {
            snprintf(note, cap, "fibers: libclang could not parse the source (error %d)", rc);
            goto done;
        }
        char msg[300];
        if (first_error(cx, t.tu, msg, sizeof msg)) {
            snprintf(note, cap, "fibers: libclang %.60s could not parse the source: %.300s", cx->version, msg);
            goto done;
        }
        t.file = cx->clang_getFile(t.tu, job->path);
    }
    res->pch_refused = job->pch && !res->pch_used;
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
        amp__loops_loc_offset(&t, cx->clang_getRangeStart(r), &t.tb[i], NULL);
        amp__loops_loc_offset(&t, cx->clang_getRangeEnd(r), &t.te[i], NULL);
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
    for (int i = 0; i < fa.n && !t.oom; ++i) transform_kernel(&t, &fa.f[i], &res->k[i]);
    reads_arg ra = {cx, job->path, {0}};
    cx->clang_getInclusions(t.tu, list_read, &ra);
    res->read = ra.out.p;
    if (t.oom || ra.out.oom) {
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
    free(res->read);
    memset(res, 0, sizeof *res);
}

/* ------------------------------------------------------------ assembly */

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
        /* a build split across compiler processes defines each kernel's
         * records in one part only (the prelude's AMP__DEFINE_ENTRY) */
        amp__sb_printf(&out, "\n#if !defined(AMP__CPU_SKIP_%s)\n", rk->name);
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
        amp__sb_puts(&out, "#endif\n");
        if (rk->line) amp__sb_puts(&out, rk->line);
    }
    amp__sb_put(&out, source + at, len - at);
    if (out.oom) {
        free(out.p);
        return NULL;
    }
    return out.p;
}
