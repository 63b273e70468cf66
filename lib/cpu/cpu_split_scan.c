/* cpu_split_scan.c — decides from a kernel source's text whether cpu_split.c may compile it in parts: only a source whose every top-level declaration is of a kind that parts cannot each hold a copy of (kernels, templates, types, inline or static functions, constants of arithmetic type) is split; anything else, or anything it does not recognise, is compiled whole. */
#include "cpu_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Why a text, not the parts' objects: a variable of internal linkage that
 * one kernel writes and another reads would be one copy a part, and the
 * compiler removes it from the part that only writes it and folds it to
 * its initial value in the part that only reads it, so no object shows
 * it; and an object's constructor would run once a part. So the rule is a
 * list of what is allowed, and what is not recognised is refused (the
 * unit is then compiled whole, as before: slower, never different). The
 * text read is the user's part only, so every #include is refused but
 * those of standard headers, and the user's options must not add include
 * paths or files. */

static bool amp__scan_ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static bool amp__scan_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* The text without comments, string and character literals (a string
 * leaves its quotes, a character a space), digit separators dropped; NULL
 * (why set) for a raw string, which it does not read, or no memory. */
static char *amp__scan_strip(const char *user, char *why, size_t cap)
{
    size_t n = strlen(user);
    char *c = malloc(n + 2); /* an unterminated " at the very end leaves two */
    if (!c) {
        snprintf(why, cap, "no memory to read the source");
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        char ch = user[i];
        if (ch == '/' && user[i + 1] == '/') {
            while (i < n && user[i] != '\n') i += user[i] == '\\' && i + 1 < n ? 2 : 1;
            c[k++] = ' ';
        } else if (ch == '/' && user[i + 1] == '*') {
            i += 2;
            while (i < n && !(user[i] == '*' && user[i + 1] == '/')) ++i;
            i = i < n ? i + 2 : n;
            c[k++] = ' ';
        } else if (ch == '"') {
            if (i > 0 && user[i - 1] == 'R') {
                snprintf(why, cap, "it has a raw string literal");
                free(c);
                return NULL;
            }
            ++i;
            while (i < n && user[i] != '"' && user[i] != '\n') i += user[i] == '\\' && i + 1 < n ? 2 : 1;
            i = i < n ? i + 1 : n;
            c[k++] = '"';
            c[k++] = '"';
        } else if (ch == '\'') {
            /* a digit separator (1'000) between two digits or letters of a
             * number; else a character literal, which ends on its line */
            if (i > 0 && amp__scan_ident(user[i - 1]) && amp__scan_ident(user[i + 1])) {
                ++i;
                continue;
            }
            ++i;
            while (i < n && user[i] != '\'' && user[i] != '\n') i += user[i] == '\\' && i + 1 < n ? 2 : 1;
            i = i < n ? i + 1 : n;
            c[k++] = ' ';
        } else {
            c[k++] = ch;
            ++i;
        }
    }
    c[k] = 0;
    return c;
}

/* Whether the word at p (whole) is w. */
static bool amp__scan_word(const char *p, const char *w)
{
    size_t n = strlen(w);
    return !strncmp(p, w, n) && !amp__scan_ident(p[n]);
}

/* Whether [b, e) holds the word w (whole). */
static bool amp__scan_has(const char *b, const char *e, const char *w)
{
    for (const char *p = b; p < e; ++p)
        if ((p == b || !amp__scan_ident(p[-1])) && amp__scan_word(p, w) && p + strlen(w) <= e) return true;
    return false;
}

static const char *amp__scan_skip(const char *p, const char *e)
{
    while (p < e && amp__scan_space(*p)) ++p;
    return p;
}

/* Standard headers: their text is the compiler's (and holds nothing a
 * part's copy would change). <iostream>'s static initialiser is not among
 * them. */
static bool amp__scan_standard_header(const char *name, size_t n)
{
    static const char *const std_headers[] = {
        "algorithm", "array",   "atomic",   "bit",     "bitset",  "cassert",  "cfloat",   "cinttypes",
        "climits",   "cmath",   "complex",  "cstddef", "cstdint", "cstdio",   "cstdlib",  "cstring",
        "functional", "initializer_list", "iterator", "limits", "memory", "new", "numeric", "optional",
        "ratio",     "tuple",   "type_traits", "utility", "variant", "assert.h", "float.h", "inttypes.h",
        "limits.h",  "math.h",  "stdbool.h", "stddef.h", "stdint.h", "stdio.h", "stdlib.h", "string.h"};
    for (size_t i = 0; i < sizeof std_headers / sizeof std_headers[0]; ++i)
        if (strlen(std_headers[i]) == n && !strncmp(std_headers[i], name, n)) return true;
    return false;
}

/* Preprocessor lines: standard #includes, and #defines whose body cannot
 * declare anything; each line read is blanked for the declarations' scan.
 * false (why set): a line it refuses. */
static bool amp__scan_directives(char *c, char *why, size_t cap)
{
    for (char *p = c; *p;) {
        char *line = p, *q = p;
        while (*q == ' ' || *q == '\t') ++q;
        char *end = line;
        while (*end && *end != '\n') end += end[0] == '\\' && end[1] == '\n' ? 2 : 1; /* continued lines */
        if (*q == '#' || (q[0] == '%' && q[1] == ':')) {
            q += *q == '#' ? 1 : 2;
            while (*q == ' ' || *q == '\t') ++q;
            if (amp__scan_word(q, "include") || amp__scan_word(q, "include_next") || amp__scan_word(q, "import")) {
                while (amp__scan_ident(*q)) ++q;
                while (*q == ' ' || *q == '\t') ++q;
                char *close = *q == '<' ? memchr(q, '>', (size_t)(end - q)) : NULL;
                if (!close || !amp__scan_standard_header(q + 1, (size_t)(close - q - 1))) {
                    snprintf(why, cap, "it includes a header other than a standard one");
                    return false;
                }
            } else if (amp__scan_word(q, "define")) {
                static const char *const words[] = {"static", "mutable", "thread_local", "namespace", "extern",
                                                    "inline", "const",   "constexpr",    "struct",    "class"};
                bool declares = memchr(q, '{', (size_t)(end - q)) || memchr(q, ';', (size_t)(end - q));
                for (size_t i = 0; i < sizeof words / sizeof words[0] && !declares; ++i)
                    declares = amp__scan_has(q, end, words[i]);
                if (declares) {
                    snprintf(why, cap, "a #define's body declares something");
                    return false;
                }
            }
            for (char *b = line; b < end; ++b)
                if (*b != '\n') *b = ' ';
        }
        p = *end ? end + 1 : end;
    }
    return true;
}

/* One top-level declaration [b, e) (e after its ';' or its body's '}'):
 * whether a part's copy of it could differ from the one of a whole
 * compile. */
static bool amp__scan_declaration_ok(const char *b, const char *e)
{
    b = amp__scan_skip(b, e);
    /* A kernel's attributes (AMP_KERNEL_MAX_BLOCK(...), AMP_KERNEL_STREAMING_STORES(...))
     * end in no ';' of their own, so the scan's declaration runs on to the
     * next one's end: the attribute is skipped, and what follows it is
     * judged as a declaration of its own (a kernel, or a variable that
     * would otherwise hide behind the attribute's name). */
    static const char *const attributes[] = {"AMP_KERNEL_MAX_BLOCK", "AMP_KERNEL_STREAMING_STORES"};
    for (size_t i = 0; i < sizeof attributes / sizeof attributes[0] && b < e;) {
        if (!amp__scan_word(b, attributes[i])) {
            ++i;
            continue;
        }
        const char *p = amp__scan_skip(b + strlen(attributes[i]), e);
        if (p >= e || *p != '(') return false;
        int depth = 0;
        for (; p < e; ++p) {
            depth += *p == '(';
            depth -= *p == ')';
            if (depth == 0) break;
        }
        if (p >= e) return false;
        b = amp__scan_skip(p + 1, e);
        i = 0;
    }
    if (b >= e) return true;
    /* kernels (their bodies live in one part: local statics are fine),
     * templates (their instances are merged at the link), types, aliases,
     * static assertions, constexpr (constants; functions inline) */
    static const char *const allowed[] = {"AMP_KERNEL", "AMP_TILED_KERNEL", "template",  "typedef",
                                          "using",      "static_assert",    "constexpr"};
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; ++i)
        if (amp__scan_word(b, allowed[i])) return true;
    const char *brace = memchr(b, '{', (size_t)(e - b));
    const char *paren = memchr(b, '(', (size_t)(e - b));
    const char *last = e - 1;
    while (last > b && amp__scan_space(*last)) --last;
    /* a type's definition: nothing declared after its closing brace */
    if (amp__scan_word(b, "struct") || amp__scan_word(b, "class") || amp__scan_word(b, "union") ||
        amp__scan_word(b, "enum")) {
        if (!brace) return *last == ';'; /* a declaration of the type */
        const char *close = last;
        while (close > b && *close != '}') --close;
        return amp__scan_skip(close + 1, e) == last && *last == ';';
    }
    /* a function definition: a body after the parameters; static (each
     * part its own copy: no local statics) or inline with external
     * linkage (merged at the link, its local statics with it) */
    if (brace && paren && paren < brace && *last == '}') {
        if (memchr(b, '=', (size_t)(brace - b))) return false; /* an initialiser, not a function */
        if (amp__scan_has(b, paren, "static")) return !amp__scan_has(brace, e, "static");
        return amp__scan_has(b, paren, "inline") || amp__scan_has(b, paren, "AMP_FI") ||
               amp__scan_has(b, paren, "__forceinline__");
    }
    /* a constant of arithmetic type: const T name = value; or name[] */
    if (amp__scan_word(b, "const") && *last == ';' && !memchr(b, '*', (size_t)(e - b)) &&
        !memchr(b, '&', (size_t)(e - b)) && !memchr(b, '(', (size_t)(e - b))) {
        static const char *const types[] = {"unsigned", "signed", "int",      "long",     "short",    "char",
                                            "bool",     "float",  "double",   "size_t",   "int8_t",   "int16_t",
                                            "int32_t",  "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t"};
        const char *t = amp__scan_skip(b + 5, e);
        for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i)
            if (amp__scan_word(t, types[i])) return true;
        return false;
    }
    return false; /* a variable, a prototype, a macro's use, a namespace, extern: not read further */
}

char *amp__cpu_split_allowed(const char *user, char *const *options, size_t noptions, char *why, size_t cap)
{
    for (size_t i = 0; i < noptions; ++i) {
        static const char *const paths[] = {"-I", "-include", "-imacros", "-isystem", "-idirafter", "-iquote",
                                            "-iprefix", "-iwithprefix", "--include", "-isysroot", "--sysroot"};
        for (size_t k = 0; k < sizeof paths / sizeof paths[0]; ++k)
            if (!strncmp(options[i], paths[k], strlen(paths[k]))) {
                snprintf(why, cap, "the option %.100s adds headers the scan does not read", options[i]);
                return NULL;
            }
    }
    static const char *const env[] = {"CPATH", "CPLUS_INCLUDE_PATH", "C_INCLUDE_PATH"};
    for (size_t k = 0; k < sizeof env / sizeof env[0]; ++k)
        if (amp__env(env[k])) {
            snprintf(why, cap, "%s adds headers the scan does not read", env[k]);
            return NULL;
        }
    char *c = amp__scan_strip(user, why, cap);
    if (!c) return NULL;
    bool ok = amp__scan_directives(c, why, cap);
    /* the top-level declarations, each ended by ';' or by a function's or
     * kernel's body (a '}' back at depth 0 whose '{' followed a ')') */
    const char *start = c;
    int depth = 0, parens = 0;
    bool body = false;
    for (const char *p = c; ok && *p; ++p) {
        if (*p == '(') ++parens;
        else if (*p == ')') parens -= parens > 0;
        else if (*p == '{') {
            if (depth == 0 && parens == 0) {
                const char *q = p;
                while (q > start && amp__scan_space(q[-1])) --q;
                body = q > start && q[-1] == ')';
            }
            ++depth;
        } else if (*p == '}') {
            if (depth == 0) {
                snprintf(why, cap, "its braces do not match");
                ok = false;
                break;
            }
            if (--depth == 0 && parens == 0 && body) {
                if (!amp__scan_declaration_ok(start, p + 1)) {
                    snprintf(why, cap, "it has a top-level declaration other than kernels, templates, types, "
                                       "inline or static functions and constants");
                    ok = false;
                }
                start = p + 1;
                body = false;
            }
        } else if (*p == ';' && depth == 0 && parens == 0) {
            if (!amp__scan_declaration_ok(start, p + 1)) {
                snprintf(why, cap, "it has a top-level declaration other than kernels, templates, types, inline or "
                                   "static functions and constants");
                ok = false;
            }
            start = p + 1;
        }
    }
    if (ok && amp__scan_skip(start, start + strlen(start)) != start + strlen(start)) {
        snprintf(why, cap, "its text ends inside a declaration");
        ok = false;
    }
    if (!ok) {
        free(c);
        return NULL;
    }
    return c;
}

int amp__cpu_split_kernels(const char *code, amp__cpu_split_kernel *k, int max)
{
    static const char *const macros[] = {"AMP_TILED_KERNEL", "AMP_KERNEL"};
    int n = 0;
    for (const char *p = code; *p; ++p) {
        if (p > code && amp__scan_ident(p[-1])) continue;
        int m = 0;
        while (m < 2 && !amp__scan_word(p, macros[m])) ++m;
        if (m == 2) continue;
        const char *q = amp__scan_skip(p + strlen(macros[m]), p + strlen(p));
        if (*q != '(') continue;
        const char *name = amp__scan_skip(q + 1, q + strlen(q));
        for (q = name; amp__scan_ident(*q); ++q) {}
        size_t len = (size_t)(q - name);
        if (len == 0 || len > 200 || (*name >= '0' && *name <= '9')) continue;
        bool seen = false;
        for (int i = 0; i < n && !seen; ++i) seen = strlen(k[i].name) == len && !strncmp(k[i].name, name, len);
        if (seen) continue;
        if (n == max || !(k[n].name = strndup(name, len))) return -1;
        k[n++].weight = m == 0 ? 2 : 1;
        p = q - 1;
    }
    return n;
}
