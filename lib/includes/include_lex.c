/* include_lex.c — finds the #include directives of a text as the compiler's
 * preprocessor reads them, for the include scan (include_scan.c), which
 * keys every header they name: a directive the preprocessor reads and this
 * misses is a header compiled unkeyed (and, for a named-header compiler,
 * looked for where the scan never looked). So it follows what g++ and the
 * C++ standard accept: line splices (a backslash, blanks, a line break)
 * anywhere in a directive, comments between its words, the digraph %: and
 * the trigraph ??= for '#', a UTF-8 byte-order mark before the first line,
 * string and character literals (raw strings across lines, digit
 * separators, which are no quotes) ending at the line's end when left
 * open. Identifiers and numbers are read whole, forwards, as tokens: a raw
 * string's prefix is a whole word (FOO\<newline>R"( is an identifier and an
 * ordinary string; 1e+R"( and 1'R"( a number and one), and a number takes
 * its digit separators and signs (1e+'a is one number, not a 1e+ and a
 * character literal). Where g++ and clang read a text differently it is
 * reported as unsure, and the scan cannot be complete. Reading more than
 * the compiler does is harmless (a header a false #if skips is still
 * keyed); reading less is not. */
#include "include_lex.h"

#include "base/core.h"

#include <string.h>

/* A NUL is a blank to g++ and clang (include_scan.c marks a text with one
 * unsure: before a line break clang does not take it into a splice). */
static bool amp__blank(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\0'; }

/* The length of the line break at i: \n, \r\n, or a \r alone, which g++
 * and clang end a line at too (a CR-only file); 0 for none. */
static size_t amp__eol(const char *t, size_t n, size_t i)
{
    if (i >= n) return 0;
    if (t[i] == '\n') return 1;
    if (t[i] != '\r') return 0;
    return i + 1 < n && t[i + 1] == '\n' ? 2 : 1;
}

static bool amp__digit(char c) { return c >= '0' && c <= '9'; }

/* Past the line splices at i (a backslash, the blanks g++ allows before the
 * line break, the break), counting their lines. */
static size_t amp__splices(const char *t, size_t n, size_t i, int *line)
{
    while (i < n && t[i] == '\\') {
        size_t j = i + 1;
        while (j < n && amp__blank(t[j])) ++j;
        size_t e = amp__eol(t, n, j);
        if (!e) break;
        i = j + e;
        ++*line;
    }
    return i;
}

/* Past the block comment that opens at i, counting its lines (a splice may
 * part its closing star and slash). */
static size_t amp__comment_end(const char *t, size_t n, size_t i, int *line)
{
    for (i += 2; i < n; ++i) {
        size_t e = amp__eol(t, n, i);
        if (e) {
            ++*line;
            i += e - 1;
        } else if (t[i] == '*') {
            size_t j = amp__splices(t, n, i + 1, line);
            if (j < n && t[j] == '/') return j + 1;
            i = j - 1;
        }
    }
    return n;
}

/* The line break that ends the // comment at i (a splice continues it), or n. */
static size_t amp__line_comment_end(const char *t, size_t n, size_t i, int *line)
{
    while (i < n && !amp__eol(t, n, i)) {
        size_t j = t[i] == '\\' ? amp__splices(t, n, i, line) : i;
        i = j != i ? j : i + 1;
    }
    return i;
}

/* Past the blanks, comments and splices at i, within one directive. */
static size_t amp__directive_blank(const char *t, size_t n, size_t i, int *line)
{
    for (;;) {
        i = amp__splices(t, n, i, line);
        if (i < n && amp__blank(t[i])) ++i;
        else if (i + 1 < n && t[i] == '/' && t[i + 1] == '*') i = amp__comment_end(t, n, i, line);
        else return i;
    }
}

/* Past the string or character literal that opens at i: its closing quote,
 * or the end of its line (left open, as the compiler ends it). */
static size_t amp__literal_end(const char *t, size_t n, size_t i, int *line, bool *closed)
{
    char q = t[i++];
    *closed = false;
    while (i < n && t[i] != q && !amp__eol(t, n, i)) {
        size_t j = t[i] == '\\' ? amp__splices(t, n, i, line) : i;
        i = j != i ? j : t[i] == '\\' ? i + 2 : i + 1;
    }
    if (i >= n) return n;
    *closed = t[i] == q;
    return *closed ? i + 1 : i;
}

/* Past the raw string literal whose quote is at i (its prefix, R, u8R,
 * uR, UR or LR, already read), counting its lines; 0 when the quote opens
 * none (no valid delimiter: the compilers then refuse the text). */
static size_t amp__raw_string_end(const char *t, size_t n, size_t i, int *line)
{
    size_t d = i + 1, k = d;
    while (k < n && k - d < 16 && t[k] > ' ' && t[k] != '(' && t[k] != ')' && t[k] != '\\' && t[k] != 0x7f) ++k;
    if (k >= n || t[k] != '(') return 0;
    size_t dl = k - d;
    for (size_t e = k + 1; e < n; ++e) {
        size_t el = amp__eol(t, n, e);
        if (el) {
            ++*line;
            e += el - 1;
        } else if (t[e] == ')' && n - e > dl + 1 && !memcmp(t + e + 1, t + d, dl) && t[e + 1 + dl] == '"')
            return e + dl + 2;
    }
    return n;
}

/* A byte of an identifier as g++ and clang read one: letters, digits, _,
 * $ and every byte of a UTF-8 character (a UCN's backslash ends the word
 * here, but its hex digits join what follows, so no raw-string prefix
 * can be made of it). */
static bool amp__id_byte(char c) { return amp__ident_char(c) || c == '$' || (unsigned char)c >= 0x80; }

/* Past the identifier at i, splices within it skipped (counted), its
 * first bytes in w (cap bytes, NUL-terminated, cut short); *len its
 * length. */
static size_t amp__identifier(const char *t, size_t n, size_t i, int *line, char *w, size_t cap, size_t *len)
{
    *len = 0;
    for (;;) {
        i = amp__splices(t, n, i, line);
        if (i >= n || !amp__id_byte(t[i])) break;
        if (*len + 1 < cap) w[*len] = t[i];
        ++*len;
        ++i;
    }
    w[*len + 1 < cap ? *len : cap - 1] = '\0';
    return i;
}

/* A word that makes the string literal after it raw. */
static bool amp__raw_prefix(const char *w, size_t len)
{
    return len <= 3 && (!strcmp(w, "R") || !strcmp(w, "u8R") || !strcmp(w, "uR") || !strcmp(w, "UR") || !strcmp(w, "LR"));
}

/* Past the preprocessing number at i (a digit, or '.' and a digit), read
 * as g++ and clang read one, splices and all: identifier bytes, '.', a
 * sign after e or E, ' between digits and letters (C++14). A sign after
 * p or P is part of it for g++ (C++17 and GNU modes) and, in a hex
 * number, for clang; where what follows could make the two read on
 * differently, *unsure says so. */
static size_t amp__number_end(const char *t, size_t n, size_t i, int *line, const char **unsure)
{
    char prev = 0;
    for (;;) {
        i = amp__splices(t, n, i, line);
        if (i >= n) return n;
        char c = t[i];
        if (c == '+' || c == '-') {
            if (prev == 'e' || prev == 'E') {
                prev = c;
                ++i;
                continue;
            }
            if (prev != 'p' && prev != 'P') return i;
            size_t j = amp__splices(t, n, i + 1, line);
            if (!(j < n && amp__digit(t[j])))
                *unsure = "a number with a sign after 'p' followed by no digit, which g++ and clang read differently";
            prev = c;
            i = j;
            continue;
        }
        if (c == '\'') {
            size_t j = amp__splices(t, n, i + 1, line);
            if (!(j < n && amp__ident_char(t[j]))) return i;
            prev = c;
            i = j;
            continue;
        }
        if (!amp__id_byte(c) && c != '.') return i;
        prev = c;
        ++i;
    }
}

/* The header name at k ("x" or <x>, on this line) into out; where to go on. */
static size_t amp__header_name(const char *t, size_t n, size_t k, amp__directive *out)
{
    char open = k < n ? t[k] : 0, close = open == '<' ? '>' : '"';
    size_t e = k + 1;
    while (e < n && t[e] != close && !amp__eol(t, n, e)) ++e;
    if ((open == '<' || open == '"') && e < n && t[e] == close) {
        out->name = t + k + 1;
        out->len = e - k - 1;
        out->angled = open == '<';
        return e + 1;
    }
    out->computed = true;
    return k;
}

/* A directive-like report for what the scan cannot follow: text that g++
 * and clang read differently (amp__directive.unsure). */
static bool amp__unsure(amp__directive *out, int line, const char *why)
{
    memset(out, 0, sizeof *out);
    out->computed = true;
    out->unsure = why;
    out->line = line;
    return true;
}

bool amp__next_include(const char *t, size_t n, size_t *pos, int *line, amp__directive *out)
{
    size_t i = *pos;
    bool line_start = i == 0 || t[i - 1] == '\n' || t[i - 1] == '\r';
    if (i == 0 && n >= 3 && !memcmp(t, "\xEF\xBB\xBF", 3)) i = 3;
    /* Just past a literal's closing quote, where g++ reads a word as its
     * suffix (C++11 user-defined literals) and clang a raw string's
     * prefix. */
    bool after_literal = false;
    while (i < n) {
        char c = t[i];
        if (c == '\\') {
            /* A splice joins two lines into one: what was on the first
             * still stands before what follows. */
            size_t j = amp__splices(t, n, i, line);
            if (j != i) {
                i = j;
                continue;
            }
        }
        size_t eol = amp__eol(t, n, i);
        if (eol) {
            ++*line;
            line_start = true;
            after_literal = false;
            i += eol;
            continue;
        }
        if (amp__blank(c) || (c == '/' && i + 1 < n && (t[i + 1] == '*' || t[i + 1] == '/'))) {
            i = c == '/' ? (t[i + 1] == '*' ? amp__comment_end(t, n, i, line) : amp__line_comment_end(t, n, i, line))
                         : i + 1;
            after_literal = false;
            continue;
        }
        size_t hash = 0;
        if (line_start && c == '#') hash = 1;
        else if (line_start && c == '%' && i + 1 < n && t[i + 1] == ':') hash = 2;
        else if (line_start && c == '?' && n - i >= 3 && t[i + 1] == '?' && t[i + 2] == '=') hash = 3;
        if (hash) {
            int at = *line;
            size_t k = amp__directive_blank(t, n, i + hash, line);
            char w[16];
            size_t wl;
            k = amp__identifier(t, n, k, line, w, sizeof w, &wl);
            if (wl < sizeof w && (!strcmp(w, "include") || !strcmp(w, "include_next") || !strcmp(w, "import"))) {
                memset(out, 0, sizeof *out);
                out->line = at;
                out->next = !strcmp(w, "include_next");
                *pos = amp__header_name(t, n, amp__directive_blank(t, n, k, line), out);
                return true;
            }
            i = k;
            line_start = after_literal = false;
            continue;
        }
        bool suffix = after_literal;
        line_start = after_literal = false;
        /* A whole identifier: a quote right after R, u8R, uR, UR or LR
         * (a splice between them is no gap) opens a raw string, after any
         * other word an ordinary one. */
        if (amp__id_byte(c) && !amp__digit(c)) {
            int at = *line;
            char w[24];
            size_t wl;
            size_t k = amp__identifier(t, n, i, line, w, sizeof w, &wl);
            /* __has_include("x.h") / __has_include_next(<x.h>), in any #if
             * or #define: the header's presence changes the code without
             * an #include, so the name is looked up (and keyed) like one.
             * Without '(' it is `defined(__has_include)`; a macro inside is
             * computed. */
            if (wl < sizeof w && (!strcmp(w, "__has_include") || !strcmp(w, "__has_include_next"))) {
                size_t open_at = amp__directive_blank(t, n, k, line);
                if (open_at < n && t[open_at] == '(') {
                    memset(out, 0, sizeof *out);
                    out->line = at;
                    out->next = wl > 13;
                    *pos = amp__header_name(t, n, amp__directive_blank(t, n, open_at + 1, line), out);
                    return true;
                }
                i = open_at;
                continue;
            }
            i = k;
            if (k < n && t[k] == '"' && amp__raw_prefix(w, wl)) {
                if (suffix) {
                    *pos = k;
                    return amp__unsure(out, at, "a literal with a suffix R (or u8R, uR, UR, LR) right before a "
                                       "quote, which g++ reads as a suffix and clang as a raw string");
                }
                size_t raw = amp__raw_string_end(t, n, k, line);
                if (raw) {
                    i = raw;
                    after_literal = true;
                }
            }
            continue;
        }
        int lines_past = 0; /* counted again as the number is read */
        size_t dot_then = c == '.' ? amp__splices(t, n, i + 1, &lines_past) : n;
        if (amp__digit(c) || (dot_then < n && amp__digit(t[dot_then]))) {
            int at = *line;
            const char *unsure = NULL;
            i = amp__number_end(t, n, i, line, &unsure);
            if (unsure) {
                *pos = i;
                return amp__unsure(out, at, unsure);
            }
            continue;
        }
        if (c == '"' || c == '\'') {
            i = amp__literal_end(t, n, i, line, &after_literal);
            continue;
        }
        ++i;
    }
    *pos = n;
    return false;
}
