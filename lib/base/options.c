/* options.c — compiler option strings to argv arrays: one splitting rule
 * (whitespace, no quoting) for hipRTC, NVRTC and the CPU compiler. */
#include "core.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

amp_status amp__split_options(const char *options, size_t nfixed, size_t nextra, char ***argv, size_t *argc,
                              char **storage)
{
    amp_status st = AMP_OK;
    char *copy = NULL;
    char **v = NULL;
    *argv = NULL;
    *argc = 0;
    *storage = NULL;
    size_t len = options ? strlen(options) : 0;
    copy = malloc(len + 1);
    /* Words are separated by at least one byte, so len/2 + 1 bounds them. */
    v = malloc((nfixed + len / 2 + 2 + nextra) * sizeof *v);
    if (!copy || !v) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "cannot allocate %zu bytes for compiler options", len + 1);
        goto fail;
    }
    memcpy(copy, options ? options : "", len + 1);
    size_t n = nfixed;
    for (char *p = copy; *p;) {
        while (*p && isspace((unsigned char)*p)) *p++ = '\0';
        if (!*p) break;
        v[n++] = p;
        while (*p && !isspace((unsigned char)*p)) ++p;
    }
    v[n] = NULL;
    *argv = v;
    *argc = n;
    *storage = copy;
    return AMP_OK;
fail:
    free(copy);
    free(v);
    return st;
}

amp_status amp__options_refuse_inputs(const char *who, char *const *argv, size_t argc, const char *const *takes_next)
{
    for (size_t i = 0; i < argc; ++i) {
        const char *w = argv[i];
        if (w[0] == '-' && w[1]) {
            for (size_t k = 0; takes_next[k]; ++k)
                if (!strcmp(w, takes_next[k])) {
                    ++i;
                    break;
                }
            continue;
        }
        return amp__fail(AMP_ERROR_INVALID_ARGUMENT,
                         "%s: '%s' in the compiler options is not an option nor the value of one: the compiler "
                         "would take it as another input%s, which hipamp's caches and checks of what the compiler "
                         "read never see; options are split at whitespace, without quoting (a -D value holds no "
                         "space)",
                         who, w, strcmp(w, "-") ? " file" : " (the standard input)");
    }
    return AMP_OK;
}
