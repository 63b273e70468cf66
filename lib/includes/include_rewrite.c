/* include_rewrite.c — rewrites the #include lines of a scanned source (include_scan.c) so that no compiler looks for a header anywhere the scan did not, and makes the unit a named-header compiler (NVRTC, hipRTC) is handed: every header under a flat name, the options it may take; and says whether the unit names anything of the device library. */
#include "include_scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a named-header compiler is given for an #include the scan found
 * nowhere and whose name could lead it out of its own directories (a ".."
 * or an absolute path): a path that cannot exist (/dev/null is no
 * directory), so the compiler reports the header missing, naming it. */
#define AMP__MISSING_PREFIX "/dev/null/hipamp-found-no-such-header/"

/* ------------------------------------------------------ the rewrite */

/* A name that could lead a compiler out of the directories it was given:
 * absolute, or with a ".." component. */
static bool amp__name_escapes(const char *name, size_t len)
{
    if (len && name[0] == '/') return true;
    for (size_t i = 0; i + 1 < len; ++i)
        if (name[i] == '.' && name[i + 1] == '.' && (i == 0 || name[i - 1] == '/') &&
            (i + 2 == len || name[i + 2] == '/'))
            return true;
    return false;
}

/* text (number t, len bytes) with its #include names replaced. named: for
 * a named-header compiler, every found header by its flat name, and every
 * name it would look for where the scan did not by one it cannot find.
 * Otherwise (the CPU compiler, the source only) a quoted name by the
 * absolute path the scan found (the compiler's own lookup would start
 * beside the temporary file it compiles); angled names stay. A quoted name
 * found nowhere (or in the compiler's own directories) becomes angled: the
 * compiler then searches only where the scan did. */
static char *amp__rewrite_text(const amp__scan *s, size_t t, const char *text, size_t len, bool named)
{
    amp__sb b = {0};
    size_t at = 0;
    amp__sb_put(&b, "", 0);
    for (size_t i = 0; i < s->nsites; ++i) {
        const amp__include_site *site = &s->sites[i];
        if (site->text != t) continue;
        const char *name = text + site->open + 1;
        size_t nl = site->close - site->open - 1;
        amp__sb_put(&b, text + at, site->open - at);
        if (site->header >= 0 && named) {
            amp__sb_printf(&b, "\"%s\"", s->headers[site->header].name);
        } else if (site->header >= 0 && !site->angled) {
            const char *path = s->headers[site->header].path;
            if (strpbrk(path, "\"\n\r")) {
                free(b.p);
                return NULL;
            }
            amp__sb_printf(&b, "\"%s\"", path);
        } else if (site->header < 0 && named && amp__name_escapes(name, nl)) {
            amp__sb_printf(&b, "\"" AMP__MISSING_PREFIX "%.*s\"", (int)nl, name);
        } else if (site->header < 0 && !site->angled) {
            if (memchr(name, '>', nl)) amp__sb_printf(&b, "\"" AMP__MISSING_PREFIX "%.*s\"", (int)nl, name);
            else amp__sb_printf(&b, "<%.*s>", (int)nl, name);
        } else {
            amp__sb_put(&b, text + site->open, site->close + 1 - site->open);
        }
        at = site->close + 1;
    }
    amp__sb_put(&b, text + at, len - at);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

amp_status amp__scan_rewrite(const amp__scan *s, const char *source, size_t len, bool named, char **out,
                             amp__header **headers)
{
    *out = NULL;
    if (headers) *headers = NULL;
    amp__header *h = NULL;
    char *src = amp__rewrite_text(s, 0, source, len, named);
    if (!src) {
        for (size_t i = 0; i < s->n; ++i)
            if (strpbrk(s->headers[i].path, "\"\n\r"))
                return amp__fail(AMP_ERROR_COMPILE, "header %s has a '\"' or a line break (\\n, \\r) in its path: "
                                 "it cannot be named in an #include", s->headers[i].path);
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory to rewrite the #include lines");
    }
    if (named && headers && s->n) {
        if (!(h = calloc(s->n, sizeof *h))) goto oom;
        for (size_t i = 0; i < s->n; ++i) {
            char *body = amp__rewrite_text(s, i + 1, s->headers[i].content, s->headers[i].size, true);
            char *marked = NULL;
            if (body) {
                size_t ml = amp__line_marker(NULL, s->headers[i].path), bl = strlen(body);
                if ((marked = malloc(ml + bl + 1))) {
                    amp__line_marker(marked, s->headers[i].path);
                    memcpy(marked + ml, body, bl + 1);
                    amp__blank_bom(marked + ml);
                }
            }
            free(body);
            if (!marked) goto oom;
            h[i] = (amp__header){s->headers[i].name, s->headers[i].path, marked, strlen(marked)};
        }
    }
    *out = src;
    if (headers) *headers = h;
    return AMP_OK;
oom:
    amp__scan_rewrite_free(h, s->n);
    free(src);
    return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory to rewrite the #include lines");
}

void amp__scan_rewrite_free(amp__header *headers, size_t n)
{
    for (size_t i = 0; headers && i < n; ++i) free((char *)headers[i].content);
    free(headers);
}

/* ---------------------------------------------- named-header compilers */

static const amp__sys_dir *amp__sys_dirs_given(void *ctx) { return ctx; }

amp_status amp__named_unit_make(const char *source, const char *source_name, const char *source_dir,
                                const char *options, const amp__sys_dir *sys, amp__named_unit *out)
{
    amp__scan scan;
    memset(out, 0, sizeof *out);
    amp__build_input in = {source, strlen(source), options, source_name, source_dir, NULL};
    amp__sys_dirs_query q = {amp__sys_dirs_given, (void *)sys};
    amp_status st = amp__scan_includes(&in, NULL, q, &scan);
    if (st != AMP_OK) return st;
    if ((st = amp__named_check(&scan)) == AMP_OK && (st = amp__named_options(options, &out->options)) == AMP_OK &&
        (st = amp__scan_rewrite(&scan, source, in.source_len, true, &out->source, &out->headers)) == AMP_OK) {
        /* The names and paths are the scan's: move them over. */
        for (size_t i = 0; i < scan.n; ++i) scan.headers[i].name = scan.headers[i].path = NULL;
        out->nheaders = scan.n;
    }
    amp__scan_free(&scan);
    return st;
}

amp_status amp__named_options(const char *options, char **out)
{
    *out = NULL;
    if (!options) return AMP_OK;
    char **argv = NULL, *words = NULL;
    size_t argc = 0;
    amp_status st = amp__split_options(options, 0, 0, &argv, &argc, &words);
    if (st != AMP_OK) return st;
    amp__sb b = {0};
    amp__sb_put(&b, "", 0);
    for (size_t i = 0; i < argc; ++i) {
        if (!strcmp(argv[i], "-iquote")) {
            ++i;
            continue;
        }
        if (!strncmp(argv[i], "-iquote", 7)) continue;
        amp__sb_printf(&b, "%s%s", b.n ? " " : "", argv[i]);
    }
    free(argv);
    free(words);
    if (b.oom) {
        free(b.p);
        return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "no memory for the compiler options");
    }
    *out = b.p;
    return AMP_OK;
}

void amp__named_unit_free(amp__named_unit *u)
{
    for (size_t i = 0; u->headers && i < u->nheaders; ++i) {
        free((char *)u->headers[i].name);
        free((char *)u->headers[i].path);
    }
    amp__scan_rewrite_free(u->headers, u->nheaders);
    free(u->source);
    free(u->options);
    memset(u, 0, sizeof *u);
}

amp_status amp__named_check(const amp__scan *s)
{
    if (!s->complete)
        return amp__fail(AMP_ERROR_COMPILE, "%s: this accelerator's compiler takes headers only by name, so hipamp "
                         "cannot see which file it would read for it; #include the header by its name", s->why);
    if (s->forced)
        return amp__fail(AMP_ERROR_COMPILE, "-include (--pre-include) is not supported by this accelerator's "
                         "compiler, which takes headers only by name: #include the header in the source");
    return AMP_OK;
}

bool amp__unit_wants_device_lib(const char *source, const amp__header *headers, size_t nheaders,
                                const char *options)
{
    if (amp__device_lib_wanted(source, strlen(source))) return true;
    for (size_t i = 0; i < nheaders; ++i)
        if (amp__device_lib_wanted(headers[i].content, headers[i].size)) return true;
    return options && amp__device_lib_wanted(options, strlen(options));
}
