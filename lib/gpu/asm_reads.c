/* asm_reads.c — AMD builds: inline asm that would read a file (.incbin, .include), which hipRTC's integrated assembler reads without listing it for the checks and cache keys every header gets, refused before hipRTC runs. */
#include "gpu_driver.h"
#include "base/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The first directive of a file-reading kind in one string literal's text
 * (between its quotes, escapes as written), or NULL. Directives are case
 * blind to the assembler, so the match is too; one must start a statement
 * of the asm text (after its start, a newline or its escape, a ';' or
 * blanks) to be one. */
static const char *reading_directive(const char *s, size_t n, const char **which)
{
    static const char *const directives[] = {".incbin", ".include"};
    for (size_t i = 0; i < n; ++i) {
        if (s[i] != '.') continue;
        size_t j = i;
        while (j > 0 && (s[j - 1] == ' ' || s[j - 1] == '\t')) --j;
        bool starts = j == 0 || s[j - 1] == ';' || s[j - 1] == '\n' || (j >= 2 && s[j - 2] == '\\' && s[j - 1] == 'n') ||
                      (j >= 2 && s[j - 2] == '\\' && s[j - 1] == 't');
        if (!starts) continue;
        for (size_t d = 0; d < 2; ++d) {
            size_t k = strlen(directives[d]);
            if (i + k <= n && !strncasecmp(s + i, directives[d], k) && (i + k == n || !amp__ident_char(s[i + k]))) {
                *which = directives[d];
                return s + i;
            }
        }
    }
    return NULL;
}

/* The first file-reading directive in a string literal of text (comments
 * and character literals skipped; a raw string's text read as it is), its
 * line in *line and, where a #line directive named its file, that name in
 * *file (*file_len bytes; untouched otherwise); NULL where there is none. */
static const char *find_in_strings(const char *text, size_t len, const char **which, int *line, const char **file,
                                   size_t *file_len)
{
    int ln = 1;
    for (size_t i = 0; i < len; ++i) {
        char c = text[i];
        if ((i == 0 || text[i - 1] == '\n') && len - i > 7 && !strncmp(text + i, "#line ", 6)) {
            /* hipamp's own markers (#line N "name"): the line after is N */
            ln = atoi(text + i + 6) - 1;
            const char *q = memchr(text + i, '"', len - i), *nl = memchr(text + i, '\n', len - i);
            const char *e = q && (!nl || q < nl) ? memchr(q + 1, '"', (size_t)(text + len - q - 1)) : NULL;
            if (e && (!nl || e < nl)) {
                *file = q + 1;
                *file_len = (size_t)(e - q - 1);
            }
        }
        if (c == '\n') {
            ++ln;
        } else if (c == '/' && i + 1 < len && text[i + 1] == '/') {
            while (i < len && text[i] != '\n') ++i;
            --i;
        } else if (c == '/' && i + 1 < len && text[i + 1] == '*') {
            for (i += 2; i + 1 < len && !(text[i] == '*' && text[i + 1] == '/'); ++i)
                if (text[i] == '\n') ++ln;
            ++i;
        } else if (c == '\'' && !(i > 0 && amp__ident_char(text[i - 1]))) { /* (not a digit separator) */
            for (++i; i < len && text[i] != '\'' && text[i] != '\n'; ++i)
                if (text[i] == '\\') ++i;
        } else if (c == '"') {
            size_t start = ++i;
            for (; i < len && text[i] != '"'; ++i) {
                if (text[i] == '\\') ++i;
                else if (text[i] == '\n') ++ln; /* (a raw string's line) */
            }
            const char *at = reading_directive(text + start, (i < len ? i : len) - start, which);
            if (at) {
                *line = ln;
                return at;
            }
        }
    }
    return NULL;
}

amp_status amp__gpu_refuse_asm_reads(const amp__compile_job *job, const char *target)
{
    const char *which = NULL, *at = NULL, *file = NULL;
    size_t file_len = 0;
    int line = 0;
    const size_t from = job->source ? amp__unit_library_end(job->source) : 0;
    if (job->source)
        at = find_in_strings(job->source + from, strlen(job->source + from), &which, &line, &file, &file_len);
    for (size_t h = 0; !at && h < job->nheaders; ++h) {
        file = job->headers[h].path ? job->headers[h].path : job->headers[h].name;
        file_len = file ? strlen(file) : 0;
        at = find_in_strings(job->headers[h].content, job->headers[h].size, &which, &line, &file, &file_len);
    }
    if (!at) return AMP_OK;
    if (!file) {
        file = job->source_name ? job->source_name : AMP__SOURCE_NAME;
        file_len = strlen(file);
    }
    return amp__fail(AMP_ERROR_COMPILE,
                     "%.*s:%d: inline asm with a %s directive: the assembler of a build for %s (hipRTC) reads that "
                     "file without telling what it read, so it would go unchecked (whose it is, whether another "
                     "user could have written it) and out of the caches' keys; refused. Put the data in the "
                     "source or pass it as an argument",
                     (int)(file_len < 512 ? file_len : 512), file, line, which, target);
}
