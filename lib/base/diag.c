/* diag.c — the first error line of a compiler's log (diag.h). */
#include "diag.h"

#include <string.h>

/* Whether p[0, n) is where a diagnostic comes from: a location ending in
 * ":LINE" (":LINE:COL" too) or "(LINE)" / "(LINE,COL)", or a program's
 * name ("g++", "cc1plus", "/usr/bin/ld": letters, digits and ._-+/). */
static bool amp__diag_location(const char *p, size_t n)
{
    if (!n) return false;
    size_t i = n;
    if (p[n - 1] >= '0' && p[n - 1] <= '9') {
        while (i && p[i - 1] >= '0' && p[i - 1] <= '9') --i;
        return i > 0 && p[i - 1] == ':';
    }
    if (p[n - 1] == ')') {
        --i;
        bool digit = false;
        while (i && ((p[i - 1] >= '0' && p[i - 1] <= '9') || p[i - 1] == ',' || p[i - 1] == ' '))
            digit |= p[--i] != ',' && p[i] != ' ';
        return digit && i > 0 && p[i - 1] == '(';
    }
    /* a program's name: not the start of a marker's "<name: what>" */
    for (size_t k = 0; k < n; ++k)
        if (!((p[k] >= 'a' && p[k] <= 'z') || (p[k] >= 'A' && p[k] <= 'Z') || (p[k] >= '0' && p[k] <= '9') ||
              strchr("._-+/", p[k])))
            return false;
    return true;
}

/* The length of "error:" or "fatal error:" at s (followed by a space or
 * the line's end), or 0. */
static size_t amp__diag_kind(const char *s, size_t n)
{
    static const char *const kinds[] = {"error:", "fatal error:"};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
        size_t l = strlen(kinds[k]);
        if (n >= l && !memcmp(s, kinds[k], l) && (n == l || s[l] == ' ')) return l;
    }
    return 0;
}

bool amp__diag_error_line(const char *line, size_t len)
{
    size_t k = amp__diag_kind(line, len);
    if (k) {
        /* GCC's context line of a file named "error" ("error: In function
         * 'void k()':") is no diagnostic. */
        const char *rest = line + k + (len > k);
        size_t rl = len - (size_t)(rest - line);
        bool context = rl && line[len - 1] == ':' &&
                       ((rl >= 3 && !memcmp(rest, "In ", 3)) || (rl >= 15 && !memcmp(rest, "At global scope", 15)));
        if (!context) return true;
    }
    for (size_t i = 2; i < len; ++i) {
        if (line[i - 2] != ':' || line[i - 1] != ' ' || !amp__diag_location(line, i - 2)) continue;
        return amp__diag_kind(line + i, len - i) != 0;
    }
    return false;
}

const char *amp__diag_first_error(const char *log, size_t *len)
{
    for (const char *p = log; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t l = nl ? (size_t)(nl - p) : strlen(p);
        if (amp__diag_error_line(p, l)) {
            *len = l;
            return p;
        }
        p = nl ? nl + 1 : NULL;
    }
    *len = 0;
    return NULL;
}
