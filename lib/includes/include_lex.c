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
 * open. Reading more than the compiler does is harmless (a header a false
 * #if skips is still keyed); reading less is not. */
#include "include_lex.h"

#include "base/core.h"

#include <string.h>

static bool amp__blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

static bool amp__digit(char c) { return c >= '0' && c <= '9'; }

/* Past the line splices at i (a backslash, the blanks g++ allows before the
 * line break, the break), counting their lines. */
static size_t amp__splices(const char *t, size_t n, size_t i, int *line)
{
    while (i < n && t[i] == '\\') {
        size_t j = i + 1;
        while (j < n && amp__blank(t[j])) ++j;
        if (j >= n || t[j] != '\n') break;
        i = j + 1;
        ++*line;
    }
    return i;
}

/* Past the block comment that opens at i, counting its lines (a splice may
 * part its closing star and slash). */
static size_t amp__comment_end(const char *t, size_t n, size_t i, int *line)
{
    for (i += 2; i < n; ++i) {
        if (t[i] == '\n') {
            ++*line;
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
    while (i < n && t[i] != '\n') {
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

/* The identifier at *i, splices within it skipped, into w (cap bytes, cut
 * short); its length. */
static size_t amp__word(const char *t, size_t n, size_t *i, int *line, char *w, size_t cap)
{
    size_t len = 0;
    for (;;) {
        *i = amp__splices(t, n, *i, line);
        if (*i >= n || !amp__ident_char(t[*i])) break;
        if (len + 1 < cap) w[len] = t[*i];
        ++len;
        ++*i;
    }
    w[len + 1 < cap ? len : cap - 1] = '\0';
    return len;
}

/* Past the string or character literal that opens at i: its closing quote,
 * or the end of its line (left open, as the compiler ends it). */
static size_t amp__literal_end(const char *t, size_t n, size_t i, int *line)
{
    char q = t[i++];
    while (i < n && t[i] != q && t[i] != '\n') {
        size_t j = t[i] == '\\' ? amp__splices(t, n, i, line) : i;
        i = j != i ? j : t[i] == '\\' ? i + 2 : i + 1;
    }
    if (i >= n) return n;
    return t[i] == q ? i + 1 : i;
}

/* Past the raw string literal whose quote is at i (R"d(...)d", with u8, u,
 * U or L before the R), counting its lines; 0 when the quote opens none. */
static size_t amp__raw_string_end(const char *t, size_t n, size_t i, int *line)
{
    if (i == 0 || t[i - 1] != 'R') return 0;
    size_t p = i - 1;
    if (p >= 2 && t[p - 2] == 'u' && t[p - 1] == '8') p -= 2;
    else if (p >= 1 && (t[p - 1] == 'u' || t[p - 1] == 'U' || t[p - 1] == 'L')) p -= 1;
    if (p > 0 && amp__ident_char(t[p - 1])) return 0;
    size_t d = i + 1, k = d;
    while (k < n && k - d < 16 && t[k] > ' ' && t[k] != '(' && t[k] != ')' && t[k] != '\\' && t[k] != 0x7f) ++k;
    if (k >= n || t[k] != '(') return 0;
    size_t dl = k - d;
    for (size_t e = k + 1; e < n; ++e) {
        if (t[e] == '\n') ++*line;
        else if (t[e] == ')' && n - e > dl + 1 && !memcmp(t + e + 1, t + d, dl) && t[e + 1 + dl] == '"')
            return e + dl + 2;
    }
    return n;
}

/* The header name at k ("x" or <x>, on this line) into out; where to go on. */
static size_t amp__header_name(const char *t, size_t n, size_t k, amp__directive *out)
{
    char open = k < n ? t[k] : 0, close = open == '<' ? '>' : '"';
    size_t e = k + 1;
    while (e < n && t[e] != close && t[e] != '\n') ++e;
    if ((open == '<' || open == '"') && e < n && t[e] == close) {
        out->name = t + k + 1;
        out->len = e - k - 1;
        out->angled = open == '<';
        return e + 1;
    }
    out->computed = true;
    return k;
}

bool amp__next_include(const char *t, size_t n, size_t *pos, int *line, amp__directive *out)
{
    size_t i = *pos;
    bool line_start = i == 0 || t[i - 1] == '\n';
    if (i == 0 && n >= 3 && !memcmp(t, "\xEF\xBB\xBF", 3)) i = 3;
    bool num = false; /* in a number, where ' separates digits */
    while (i < n) {
        char c = t[i];
        if (c == '\n' || amp__blank(c) || (c == '/' && i + 1 < n && (t[i + 1] == '*' || t[i + 1] == '/'))) {
            if (c == '\n') {
                ++*line;
                line_start = true;
            }
            i = c == '/' ? (t[i + 1] == '*' ? amp__comment_end(t, n, i, line) : amp__line_comment_end(t, n, i, line))
                         : i + 1;
            num = false;
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
            size_t wl = amp__word(t, n, &k, line, w, sizeof w);
            if (wl < sizeof w && (!strcmp(w, "include") || !strcmp(w, "include_next") || !strcmp(w, "import"))) {
                memset(out, 0, sizeof *out);
                out->line = at;
                out->next = !strcmp(w, "include_next");
                *pos = amp__header_name(t, n, amp__directive_blank(t, n, k, line), out);
                return true;
            }
            i = k;
            line_start = num = false;
            continue;
        }
        /* __has_include("x.h") / __has_include_next(<x.h>), in any #if or
         * #define: the header's presence changes the code without an
         * #include, so the name is looked up (and keyed) like one. Without
         * '(' it is `defined(__has_include)`; a macro inside is computed. */
        if (c == '_' && n - i >= 13 && !memcmp(t + i, "__has_include", 13) && (i == 0 || !amp__ident_char(t[i - 1]))) {
            size_t k = i + 13;
            bool next = n - k >= 5 && !memcmp(t + k, "_next", 5);
            if (next) k += 5;
            line_start = num = false;
            if (k < n && amp__ident_char(t[k])) {
                i = k;
                continue;
            }
            int at = *line;
            size_t open_at = amp__directive_blank(t, n, k, line);
            if (open_at < n && t[open_at] == '(') {
                memset(out, 0, sizeof *out);
                out->line = at;
                out->next = next;
                *pos = amp__header_name(t, n, amp__directive_blank(t, n, open_at + 1, line), out);
                return true;
            }
            i = open_at;
            continue;
        }
        line_start = false;
        if (c == '\'' && num && i + 1 < n && amp__ident_char(t[i + 1])) {
            ++i;
            continue;
        }
        size_t raw = c == '"' ? amp__raw_string_end(t, n, i, line) : 0;
        if (raw || c == '"' || c == '\'') {
            i = raw ? raw : amp__literal_end(t, n, i, line);
            num = false;
            continue;
        }
        bool starts = amp__digit(c) || (c == '.' && i + 1 < n && amp__digit(t[i + 1]));
        num = num ? amp__ident_char(c) || c == '.' : starts && !(i > 0 && amp__ident_char(t[i - 1]));
        ++i;
    }
    *pos = n;
    return false;
}
