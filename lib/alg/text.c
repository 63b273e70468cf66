/* alg/text.c — the rule for the user's strings that the algorithms splice
 * into generated code (predicates, a reduction's expressions, preamble and
 * parameter lists): an exact lexical check that refuses whatever could
 * change the code around them (preprocessor directives, line splices,
 * _Pragma, the library's reserved names, brackets, comments or literals
 * left open), and parameter names the generated code cannot declare; and
 * how a string is quoted in a message. */
#include "alg.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* text quoted for a message: quotes, backslashes and line ends escaped,
 * other control bytes as \xNN, at most max bytes of it ("..." after a
 * cut). */
void amp__alg_quote(char *dst, size_t size, const char *text, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; text[i] && n + 8 < size; ++i) {
        if (i == max) {
            n += (size_t)snprintf(dst + n, size - n, "...");
            break;
        }
        char c = text[i];
        const char *esc = c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : c == '"' ? "\\\"" : c == '\\' ? "\\\\" : NULL;
        if (esc) n += (size_t)snprintf(dst + n, size - n, "%s", esc);
        else if ((unsigned char)c < 0x20 || c == 0x7f) /* no terminal control reaches a log */
            n += (size_t)snprintf(dst + n, size - n, "\\x%02x", (unsigned char)c);
        else dst[n++] = c;
    }
    dst[n < size ? n : size - 1] = '\0';
}

/* The characters compilers continue a number with, and the only ones a
 * digit separator ' may precede (else it opens a character literal). */
static bool amp__alg_number_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static bool amp__alg_ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
           (unsigned char)c >= 0x80;
}

/* The bytes of the character at s, in UTF-8 or as a universal character
 * name (\u00a0, \U000000A0), when clang reads it as white space (its
 * Unicode white space: U+0085, U+00A0, U+1680, U+180E, U+2000 to U+200A,
 * U+2028, U+2029, U+202F, U+205F, U+3000), else 0. */
static int amp__alg_unicode_space(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    unsigned long c = 0;
    int n;
    if (p[0] == '\\' && (p[1] == 'u' || p[1] == 'U')) {
        int end = p[1] == 'u' ? 6 : 10;
        for (n = 2; n < end && isxdigit(p[n]); ++n)
            c = c * 16 + (unsigned long)(isdigit(p[n]) ? p[n] - '0' : (p[n] | 0x20) - 'a' + 10);
        if (n < end) return 0;
    } else if ((p[0] & 0xe0) == 0xc0 && (p[1] & 0xc0) == 0x80) {
        c = (p[0] & 0x1fu) << 6 | (p[1] & 0x3fu);
        n = 2;
    } else if ((p[0] & 0xf0) == 0xe0 && (p[1] & 0xc0) == 0x80 && (p[2] & 0xc0) == 0x80) {
        c = (p[0] & 0x0fu) << 12 | (p[1] & 0x3fu) << 6 | (p[2] & 0x3fu);
        n = 3;
    } else {
        return 0;
    }
    bool space = c == 0x85 || c == 0xa0 || c == 0x1680 || c == 0x180e || (c >= 0x2000 && c <= 0x200a) ||
                 c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
    return space ? n : 0;
}

/* The end of the literal opened by the quote at p ('"' or '\''), past its
 * closing quote; NULL: it does not close on its line. */
static const char *amp__alg_literal_end(const char *p)
{
    char q = *p++;
    while (*p && *p != q && *p != '\n' && *p != '\r') p += *p == '\\' && p[1] ? 2 : 1;
    return *p == q ? p + 1 : NULL;
}

/* The bytes a raw string's delimiter may hold: C++'s basic source
 * characters but space, the brackets ( ), backslash, the quotes and the
 * controls. Any other byte there ('@', '$', a control or non-ASCII byte) is
 * an error to the compilers, which then read on from the next '"' as code:
 * a directive this check took for the literal's body ran. */
static const char amp__alg_raw_delimiter_chars[] =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_{}[]#<>%:;.?*+-/^&|~!=,";

/* What is wrong with the name s[0..n) in a user string, or NULL: the
 * library's own (amp__, AMP__; amp_alg_, the generated kernels' names: a
 * preamble's amp_alg_clear broke the scan program, built only at the
 * first scan, long after create) and _Pragma. */
static const char *amp__alg_name_flaw(const char *s, size_t n)
{
    if (n >= 5 && !strncmp(s, "amp__", 5)) return "a name beginning with amp__ (reserved for the library)";
    /* The preludes' own macros: AMP__CPU_CAT pastes tokens (a _Pragma, an
     * amp_alg_ name), others expand to _Pragma. */
    if (n >= 5 && !strncmp(s, "AMP__", 5)) return "a name beginning with AMP__ (the library's internal macros)";
    if (n >= 8 && !strncmp(s, "amp_alg_", 8)) return "a name beginning with amp_alg_ (the library's kernels' names)";
    if ((n == 7 && !strncmp(s, "_Pragma", 7)) || (n == 8 && !strncmp(s, "__pragma", 8)))
        return "a _Pragma (a pragma would change the code after it)";
    return NULL;
}

/* Why text, spliced into generated code, could change that code (NULL:
 * it cannot), and where (*at). The rule is lexical, by C++17's phases 1
 * to 3 as the compilers apply them (no trigraphs in C++17): no line
 * splice anywhere (comments and literals included); no '#' or '%:'
 * outside string and character literals and comments, so no directive and no stringizing; no _Pragma; no
 * identifier beginning with amp__ or amp_alg_ (the generated code's names); every
 * comment, literal and bracket ((), [], {} and the digraphs <: :> <% %>)
 * closed within text, no raw string right after a literal and no Unicode
 * space outside literals and comments (both read apart by the compilers),
 * so that an expression stays the one expression between the generated
 * parentheses and a preamble ends at file scope; an expression holds a
 * token. */
static const char *amp__alg_flaw(const char *text, bool expression, const char **at)
{
    enum { DEPTH = 256 };
    char open[DEPTH];
    const char *opened[DEPTH];
    int depth = 0;
    bool token = false;
    const char *literal_end = NULL; /* just past the last string or character literal */
    for (const char *p = text; *p; ++p)
        if (*p == '\\') {
            const char *q = p + 1;
            while (*q == ' ' || *q == '\t' || *q == '\v' || *q == '\f') ++q;
            if (!*q || *q == '\n' || *q == '\r') {
                *at = p;
                return "a backslash that ends a line (a line splice, which would join the generated line after it)";
            }
        }
    const char *p = text;
    while (*p) {
        const char *s = p;
        char c = *p;
        if (c == '/' && p[1] == '/') {
            while (*p && *p != '\n' && *p != '\r') ++p;
            continue;
        }
        if (c == '/' && p[1] == '*') {
            const char *e = strstr(p + 2, "*/");
            *at = s;
            if (!e) return "a comment that is not closed";
            p = e + 2;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
            ++p;
            continue;
        }
        token = true;
        *at = s;
        if (c == '"' || c == '\'') {
            if (!(p = amp__alg_literal_end(p)))
                return c == '"' ? "a string literal that is not closed on its line"
                                : "a character literal that is not closed on its line";
            literal_end = p;
            continue;
        }
        if ((c >= '0' && c <= '9') || (c == '.' && p[1] >= '0' && p[1] <= '9')) {
            /* A pp-number: its ' are digit separators where an ASCII
             * letter, digit or _ follows (g++, clang and NVRTC read
             * 1'\xc3\xa9 as 1 and a character literal: read as one number,
             * that literal could hide a directive from this check), e+ p-
             * its exponents. A '$' or a non-ASCII byte running on from a
             * number is refused: compilers disagree on whether the number
             * goes on. */
            ++p;
            for (;;) {
                if ((*p == 'e' || *p == 'E' || *p == 'p' || *p == 'P') && (p[1] == '+' || p[1] == '-')) p += 2;
                else if (*p == '\'' && amp__alg_number_char(p[1])) p += 2;
                else if (amp__alg_number_char(*p) || *p == '.') ++p;
                else if (*p == '$' || (unsigned char)*p >= 0x80)
                    return "a number followed by '$' or a non-ASCII character";
                else break;
            }
            continue;
        }
        if (amp__alg_ident_char(c) && !(c >= '0' && c <= '9')) {
            /* Read here as a name's, a Unicode space is white space to
             * clang, which then read what follows as a token of its own:
             * an amp__ name, a _Pragma, or a raw string hiding a directive
             * from this check. */
            for (; amp__alg_ident_char(*p); ++p)
                if (amp__alg_unicode_space(p)) {
                    *at = p;
                    return "a Unicode space outside a literal or comment (white space to clang, part of a name to "
                           "g++)";
                }
            size_t n = (size_t)(p - s);
            const char *why = amp__alg_name_flaw(s, n);
            if (why) return why;
            bool raw = *p == '"' && ((n == 1 && s[0] == 'R') || (n == 2 && s[1] == 'R' && strchr("LuU", s[0])) ||
                                     (n == 3 && !strncmp(s, "u8R", 3)));
            /* Right after a literal, the compilers part: g++ reads "a"R as
             * the literal with the suffix R, then "(" as a plain string;
             * clang as "a" then a raw string. Read as a raw string here, a
             * directive in it was compiled by g++. */
            if (raw && s == literal_end)
                return "a raw string literal's prefix right after a literal (which g++ reads as that literal's "
                       "suffix, and what follows as a plain string)";
            /* clang ends a name at a character that cannot be in one
             * (U+00D7): a raw string to clang, the end of a name here,
             * could hide a directive (its #include runs though the build
             * fails). */
            for (size_t k = 1; *p == '"' && k <= 3 && k < n; ++k) {
                const char *w = p - k;
                bool prefix =
                    k == 1 ? *w == 'R' : k == 2 ? w[1] == 'R' && strchr("LuU", w[0]) : !strncmp(w, "u8R", 3);
                if (prefix && ((unsigned char)w[-1] >= 0x80 || w[-1] == '$'))
                    return "a raw string literal's prefix right after a non-ASCII character or '$' (where compilers "
                           "may end the name before it)";
            }
            if (raw) {
                /* R"delim( ... )delim": the body may hold anything. */
                char close[20] = ")";
                const char *d = p + 1;
                size_t dn = strspn(d, amp__alg_raw_delimiter_chars);
                if (dn > 16 || d[dn] != '(')
                    return "a malformed raw string literal (its delimiter is up to 16 letters, digits, '_' or basic "
                           "punctuation before '('; compilers read past any other byte as code)";
                snprintf(close + 1, sizeof close - 1, "%.*s\"", (int)dn, d);
                const char *e = strstr(d + dn + 1, close);
                if (!e) return "a raw string literal that is not closed";
                p = e + strlen(close);
                literal_end = p;
            }
            continue;
        }
        if (c == '\\' && amp__alg_unicode_space(p))
            return "a Unicode space outside a literal or comment (white space to clang, part of a name to g++)";
        if (c == '#') return "a '#' (a preprocessor directive or operator)";
        if (c == '%' && p[1] == ':') return "a '%:' (the digraph of '#': a preprocessor directive or operator)";
        /* Brackets, as the tokenizer sees them (the longest token first:
         * "<<:" is "<<" then ':'; "<::" not followed by ':' or '>' is '<'
         * then "::"). */
        char b = 0;
        size_t len = 1;
        if ((c == '<' && (p[1] == '<' || p[1] == '=')) || (c == ':' && p[1] == ':') || (c == '%' && p[1] == '='))
            len = 2;
        else if (c == '(' || c == '[' || c == '{' || c == ')' || c == ']' || c == '}') b = c;
        else if (c == '<' && p[1] == ':' && !(p[2] == ':' && p[3] != ':' && p[3] != '>')) b = '[', len = 2;
        else if (c == '<' && p[1] == '%') b = '{', len = 2;
        else if (c == ':' && p[1] == '>') b = ']', len = 2;
        else if (c == '%' && p[1] == '>') b = '}', len = 2;
        p += len;
        if (b == '(' || b == '[' || b == '{') {
            if (depth == DEPTH) return "brackets nested more than 256 deep";
            opened[depth] = s;
            open[depth++] = b;
        } else if (b) {
            char want = b == ')' ? '(' : b == ']' ? '[' : '{';
            if (depth == 0) return "a closing bracket that closes nothing in the string";
            if (open[depth - 1] != want) return "a closing bracket that does not match the bracket it closes";
            --depth;
        }
    }
    if (depth) {
        *at = opened[depth - 1];
        return "a bracket that is not closed in the string";
    }
    *at = text;
    if (expression && !token) return "no expression (only white space and comments)";
    return NULL;
}

/* AMP_ERROR_INVALID_ARGUMENT from fn (the public call) when text (what:
 * "predicate", "the map expression of reduction 'r'", ...) could change
 * the code generated around it (amp__alg_flaw), naming the string, the
 * flaw, its line and column and the text from there. */
amp_status amp__alg_check_text(const char *fn, const char *what, const char *text, bool expression)
{
    const char *at = text;
    const char *why = amp__alg_flaw(text, expression, &at);
    if (!why) return AMP_OK;
    int line = 1, col = 1;
    for (const char *p = text; p < at; ++p) {
        if (*p == '\n') ++line, col = 1;
        else ++col;
    }
    /* From the flaw to the end of its line, at most 48 bytes. */
    char line_rest[52], quoted[300], there[220];
    size_t rest = strcspn(at, "\n\r");
    snprintf(line_rest, sizeof line_rest, "%.*s%s", (int)(rest < 48 ? rest : 48), at, rest > 48 ? "..." : "");
    amp__alg_quote(quoted, sizeof quoted, text, 200);
    amp__alg_quote(there, sizeof there, line_rest, sizeof line_rest);
    return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %s \"%s\" holds %s at line %d, column %d (\"%s\"). hipamp "
                     "compiles a user string within code it generates, which the string must not change: no "
                     "preprocessor directives or line splices, no _Pragma, no names beginning with amp__ or AMP__, "
                     "and every bracket, comment and literal closed within the string", fn, what, quoted, why, line,
                     col, there);
}

/* C++'s keywords and alternative tokens (C++20's included), which cannot
 * name a parameter. */
static bool amp__alg_keyword(const char *s)
{
    static const char *const words[] = {
        "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
        "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
        "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
        "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
        "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
        "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
        "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
        "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
        "typeof", "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; ++i)
        if (!strcmp(s, words[i])) return true;
    return false;
}

/* A user reduction's parameter names and strings, before anything is
 * generated from them (fn: the public call). */
amp_status amp__alg_check_user(const char *fn, const amp__alg_user *u)
{
    for (int i = 0; i < u->ninputs + u->nscalars; ++i) {
        bool in = i < u->ninputs;
        const char *name = in ? u->in_name[i] : u->sc_name[i - u->ninputs];
        const char *why = NULL;
        if (amp__alg_keyword(name)) why = "a C++ keyword";
        else if (strstr(name, "__") || (name[0] == '_' && name[1] >= 'A' && name[1] <= 'Z'))
            why = "reserved to the compiler: it holds \"__\" or begins with '_' and a capital";
        else if (!strncmp(name, "AMP_", 4) || !strncmp(name, "amp__", 5))
            why = "the library's: names beginning with AMP_ or amp__ are reserved";
        if (why)
            return amp__fail(AMP_ERROR_INVALID_ARGUMENT, "%s: %s of reduction '%s': '%s' cannot name a parameter (%s)",
                             fn, in ? "inputs" : "scalars", u->label, name, why);
    }
    static const char *const what[] = {"map expression", "reduce expression", "identity", "post expression",
                                       "preamble"};
    const char *const text[] = {u->map, u->reduce, u->identity, u->post, u->preamble};
    for (int i = 0; i < 5; ++i) {
        if (!text[i]) continue;
        char w[128];
        snprintf(w, sizeof w, "the %s of reduction '%s'", what[i], u->label);
        amp_status st = amp__alg_check_text(fn, w, text[i], i < 4);
        if (st != AMP_OK) return st;
    }
    return AMP_OK;
}

