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

/* g++ takes $ and UTF-8 (bytes from 0x80) in identifiers too. */
static bool amp__scan_ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
           (unsigned char)c >= 0x80;
}

static bool amp__scan_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* The text with its lines spliced (a backslash, blanks the compiler
 * forgives, and a newline go, as in the compiler's second phase), then
 * without comments, string and character literals (a string leaves its
 * quotes, a character a space; an unterminated one ends before its line's
 * newline), digit separators dropped; NULL (why set) for a raw string,
 * which it does not read, or no memory. */
static char *amp__scan_strip(const char *source, char *why, size_t cap)
{
    size_t n = 0, len = strlen(source);
    char *user = malloc(len + 1), *c = malloc(len + 1); /* no longer than the text: see each case */
    if (!user || !c) {
        free(user);
        free(c);
        snprintf(why, cap, "no memory to read the source");
        return NULL;
    }
    for (size_t i = 0; i < len;) {
        size_t j = i + 1;
        if (source[i] == '\\') {
            while (source[j] == ' ' || source[j] == '\t' || source[j] == '\r' || source[j] == '\f' || source[j] == '\v') ++j;
            if (source[j] == '\n') {
                i = j + 1;
                continue;
            }
        }
        user[n++] = source[i++];
    }
    user[n] = 0;
    size_t k = 0;
    bool number = false; /* the token being copied started with a digit */
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
                free(user);
                free(c);
                return NULL;
            }
            ++i;
            while (i < n && user[i] != '"' && user[i] != '\n') i += user[i] == '\\' && i + 1 < n ? 2 : 1;
            c[k++] = '"';
            if (i < n && user[i] == '"') { /* its closing quote; an unterminated one leaves one quote */
                c[k++] = '"';
                ++i;
            }
        } else if (ch == '\'') {
            /* a digit separator (1'000, 0x1'f) between two digits or
             * letters of a number (a token that starts with a digit);
             * else a character literal (L'a', u8'a' too), which ends on
             * its line */
            if (number && amp__scan_ident(user[i - 1]) && amp__scan_ident(user[i + 1])) {
                ++i;
                continue;
            }
            ++i;
            while (i < n && user[i] != '\'' && user[i] != '\n') i += user[i] == '\\' && i + 1 < n ? 2 : 1;
            i = i < n && user[i] == '\'' ? i + 1 : i;
            c[k++] = ' ';
        } else {
            if (!amp__scan_ident(ch)) number = false;
            else if (k == 0 || !amp__scan_ident(c[k - 1])) number = ch >= '0' && ch <= '9';
            c[k++] = ch;
            ++i;
            continue;
        }
        number = false;
    }
    c[k] = 0;
    free(user);
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

/* The words whose meaning the declarations' scan relies on (a #define of
 * one could hide a variable behind it): the ones it reads, C++'s type and
 * storage words, and the names the prelude's kernel macros expand through
 * (AMP__, and the implementation's __). */
static bool amp__scan_trusted(const char *name)
{
    static const char *const words[] = {
        "template", "typedef",  "using",    "static_assert", "constexpr", "struct",   "class",    "union",
        "enum",     "static",   "inline",   "const",         "extern",    "mutable",  "thread_local", "final",
        "auto",     "unsigned", "signed",   "int",           "long",      "short",    "char",     "bool",
        "float",    "double",   "void",     "size_t",        "int8_t",    "int16_t",  "int32_t",  "int64_t",
        "uint8_t",  "uint16_t", "uint32_t", "uint64_t",      "tile_static", "volatile", "register", "namespace",
        "alignas",  "AMP_KERNEL", "AMP_TILED_KERNEL", "AMP_KERNEL_MAX_BLOCK", "AMP_KERNEL_STREAMING_STORES", "AMP_FI"};
    if (!strncmp(name, "AMP__", 5) || !strncmp(name, "__", 2) || amp__scan_word(name, "amp")) return true;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; ++i)
        if (amp__scan_word(name, words[i])) return true;
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
            } else if (amp__scan_word(q, "undef")) {
                /* what follows could give the word another meaning */
                const char *name = q + 5;
                while (*name == ' ' || *name == '\t') ++name;
                if (amp__scan_trusted(name)) {
                    snprintf(why, cap, "an #undef takes a word the scan reads");
                    return false;
                }
            } else if (amp__scan_word(q, "define")) {
                static const char *const words[] = {"static", "mutable", "thread_local", "__thread", "namespace",
                                                    "extern", "inline",  "const",        "constexpr", "struct",
                                                    "class"};
                bool declares = memchr(q, '{', (size_t)(end - q)) || memchr(q, ';', (size_t)(end - q));
                for (size_t i = 0; i < sizeof words / sizeof words[0] && !declares; ++i)
                    declares = amp__scan_has(q, end, words[i]);
                /* pasted tokens are words the scan never sees */
                for (const char *h = q; h + 1 < end && !declares; ++h)
                    declares = (h[0] == '#' && h[1] == '#') || (h[0] == '%' && h[1] == ':');
                if (declares) {
                    snprintf(why, cap, "a #define's body declares something");
                    return false;
                }
                const char *name = q + 6;
                while (*name == ' ' || *name == '\t') ++name;
                if (amp__scan_trusted(name)) {
                    snprintf(why, cap, "a #define gives a word the scan reads another meaning");
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

/* p past the word at p and the blanks after it. */
static const char *amp__scan_past_word(const char *p, const char *e)
{
    while (p < e && amp__scan_ident(*p)) ++p;
    return amp__scan_skip(p, e);
}

/* p (at a '(') past its matching ')' and the blanks after it; NULL where p
 * is not at a '(' or nothing closes it before e. */
static const char *amp__scan_past_parens(const char *p, const char *e)
{
    if (p >= e || *p != '(') return NULL;
    for (int depth = 0; p < e; ++p) {
        depth += (*p == '(') - (*p == ')');
        if (depth == 0) return amp__scan_skip(p + 1, e);
    }
    return NULL;
}

/* p (at a '<') past its template arguments' closing '>' (one outside
 * parentheses) and the blanks after it; NULL where none closes before e. */
static const char *amp__scan_past_angles(const char *p, const char *e)
{
    int angles = 0, parens = 0;
    for (; p < e; ++p) {
        parens += *p == '(';
        parens -= *p == ')';
        if (parens == 0) angles += (*p == '<') - (*p == '>');
        if (angles == 0) return amp__scan_skip(p + 1, e);
    }
    return NULL;
}

/* A type's declaration or definition [b, e) (b at struct, class, union or
 * enum; last its last character): kw [class|struct] [name [final]]
 * followed by ';', or by an optional base clause (enum base) and one body
 * whose '}' only ';' follows; nothing declared of the type beside it. */
static bool amp__scan_type_ok(const char *b, const char *e, const char *last)
{
    const bool is_enum = amp__scan_word(b, "enum");
    const char *p = amp__scan_past_word(b, e);
    if (is_enum && (amp__scan_word(p, "class") || amp__scan_word(p, "struct"))) p = amp__scan_past_word(p, e);
    /* attributes: alignas(...), __attribute__((...)), [[...]] */
    for (;;) {
        if (amp__scan_word(p, "alignas") || amp__scan_word(p, "__attribute__") || amp__scan_word(p, "__declspec")) {
            if (!(p = amp__scan_past_parens(amp__scan_past_word(p, e), e))) return false;
        } else if (p + 1 < e && p[0] == '[' && p[1] == '[') {
            const char *close = p + 2;
            while (close + 1 < e && !(close[0] == ']' && close[1] == ']')) ++close;
            if (close + 1 >= e) return false;
            p = amp__scan_skip(close + 2, e);
        } else {
            break;
        }
    }
    if (p < e && *p != '{') {
        if (!amp__scan_ident(*p) || (*p >= '0' && *p <= '9')) return false;
        p = amp__scan_past_word(p, e);
        if (p < e && *p == '<' && !(p = amp__scan_past_angles(p, e))) return false; /* a specialisation's */
        if (amp__scan_word(p, "final")) p = amp__scan_past_word(p, e);
    }
    if (p >= e) return false;
    if (*p == ';') return p == last;
    if (*p != '{' && *p != ':') return false; /* a declarator, an attribute: not read further */
    const char *open = memchr(p, '{', (size_t)(e - p));
    if (!open) return is_enum && *last == ';' && !memchr(p, '(', (size_t)(last - p)); /* enum E : int; */
    int depth = 0;
    const char *close = open;
    for (; close < e; ++close) {
        depth += *close == '{';
        depth -= *close == '}';
        if (depth == 0) break;
    }
    return close < e && amp__scan_skip(close + 1, e) == last && *last == ';';
}

/* Whether [b, e) holds a word that gives a variable its own copy in each
 * part, or one a thread. */
static bool amp__scan_has_storage(const char *b, const char *e)
{
    return amp__scan_has(b, e, "static") || amp__scan_has(b, e, "thread_local") || amp__scan_has(b, e, "__thread");
}

/* Whether [b, e) holds the word static (or thread_local, __thread)
 * outside every brace: a template of internal linkage. */
static bool amp__scan_has_storage_outside(const char *b, const char *e)
{
    if (amp__scan_has(b, e, "thread_local") || amp__scan_has(b, e, "__thread")) return true;
    int depth = 0;
    for (const char *p = b; p < e; ++p) {
        depth += *p == '{';
        depth -= *p == '}' && depth > 0;
        if (depth == 0 && (p == b || !amp__scan_ident(p[-1])) && amp__scan_word(p, "static") && p + 6 <= e)
            return true;
    }
    return false;
}

/* One top-level declaration [b, e) (e after its ';' or its body's '}'):
 * whether a part's copy of it could differ from the one of a whole
 * compile. */
static bool amp__scan_declaration_ok(const char *b, const char *e)
{
judge: /* again, for what follows an explicit specialisation's heads (a
        * loop, not a call: heads and attributes may alternate many times) */
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
        if (!(b = amp__scan_past_parens(amp__scan_skip(b + strlen(attributes[i]), e), e))) return false;
        i = 0;
    }
    if (b >= e) return true;
    const char *last = e - 1;
    while (last > b && amp__scan_space(*last)) --last;
    /* a type's definition: nothing declared after its closing brace */
    if (amp__scan_word(b, "struct") || amp__scan_word(b, "class") || amp__scan_word(b, "union") ||
        amp__scan_word(b, "enum"))
        return amp__scan_type_ok(b, e, last);
    /* templates: their instances are merged at the link (local statics
     * with them) unless the template is static; a class template is a
     * type. An explicit specialisation (a head of template <>) is no
     * template: its function or variable is defined once per part, as a
     * plain one is, so it is judged as one (a part each would define it,
     * and the link fail only after every part had compiled). */
    if (amp__scan_word(b, "template")) {
        const char *p = b;
        bool specialisation = false;
        while (amp__scan_word(p, "template")) {
            p = amp__scan_past_word(p, e);
            if (p >= e || *p != '<') return false;
            const char *inside = amp__scan_skip(p + 1, e);
            specialisation |= inside < e && *inside == '>';
            if (!(p = amp__scan_past_angles(p, e))) return false;
        }
        if (amp__scan_word(p, "struct") || amp__scan_word(p, "class") || amp__scan_word(p, "union"))
            return amp__scan_type_ok(p, e, last);
        if (specialisation) {
            b = p;
            goto judge;
        }
        return !amp__scan_has_storage_outside(p, e);
    }
    /* kernels (their bodies live in one part: local statics are fine),
     * aliases, static assertions, constexpr (constants; functions
     * inline; no lambda holding a static) */
    static const char *const allowed[] = {"AMP_KERNEL", "AMP_TILED_KERNEL", "typedef", "using", "static_assert"};
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; ++i)
        if (amp__scan_word(b, allowed[i])) return true;
    if (amp__scan_word(b, "constexpr")) return !amp__scan_has_storage(b, e) && !amp__scan_has(b, e, "mutable");
    const char *brace = memchr(b, '{', (size_t)(e - b));
    const char *paren = memchr(b, '(', (size_t)(e - b));
    /* a function definition: a body after the parameters; static (each
     * part its own copy: no local statics) or inline with external
     * linkage (merged at the link, its local statics with it) */
    if (brace && paren && paren < brace && *last == '}') {
        if (memchr(b, '=', (size_t)(brace - b))) return false; /* an initialiser, not a function */
        if (amp__scan_has(b, paren, "static")) return !amp__scan_has_storage(brace, e);
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
        /* and the ways to pass them through: to the preprocessor, in a
         * response file, or a specs file */
        static const char *const paths[] = {"-I",       "-include",  "-imacros",     "-isystem",  "-idirafter",
                                            "-iquote",  "-iprefix",  "-iwithprefix", "--include", "--imacros",
                                            "-isysroot", "--sysroot", "-Wp,",        "-Xpreprocessor", "@",
                                            "-specs",   "--specs"};
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
    /* digraphs (<% %> <: :> %:) would hide braces from the scan */
    for (const char *p = c; ok && *p; ++p)
        if ((p[0] == '<' && p[1] == '%') || (p[0] == '%' && (p[1] == '>' || p[1] == ':')) ||
            (p[0] == '<' && p[1] == ':' && p[2] != ':') || (p[0] == ':' && p[1] == '>')) {
            snprintf(why, cap, "it spells a brace, bracket or # as a digraph");
            ok = false;
        }
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
