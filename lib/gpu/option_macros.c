/* option_macros.c — a GPU build's -D and -U options written into its translation unit as #define and #undef lines, just before the user's source, instead of handed to hipRTC or NVRTC, whose own headers (read before the unit) use short names such as T and F themselves. */
#include "gpu_driver.h"
#include "base/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a macro option names: an identifier, optionally followed by a
 * parameter list "(a,b)"; its length, 0 where spec does not start with
 * one (the option is then left to the compiler, which says what is
 * wrong). */
static size_t macro_head(const char *spec, size_t len)
{
    size_t n = 0;
    while (n < len && amp__ident_char(spec[n])) ++n;
    if (n == 0 || (spec[0] >= '0' && spec[0] <= '9')) return 0;
    if (n < len && spec[n] == '(') {
        const char *close = memchr(spec + n, ')', len - n);
        if (!close) return 0;
        n = (size_t)(close - spec) + 1;
    }
    return n;
}

/* The line a macro option's spec (NAME, NAME=VALUE, NAME(params)=VALUE;
 * undef: NAME) stands for, appended to lines; false where the spec cannot
 * be written as one line with the same meaning (a value that ends in a
 * backslash would join the next line, one holding a comment's start would
 * hide what follows): that option stays the compiler's. */
static bool macro_line(amp__sb *lines, const char *spec, bool undef)
{
    const size_t len = strlen(spec);
    const size_t head = macro_head(spec, len);
    if (!head) return false;
    const char *value = "1";
    size_t vlen = 1;
    if (head < len) {
        if (undef || spec[head] != '=') return false;
        value = spec + head + 1;
        vlen = len - head - 1;
    }
    if (vlen && value[vlen - 1] == '\\') return false;
    for (size_t i = 0; i + 1 < vlen; ++i)
        if (value[i] == '/' && (value[i + 1] == '*' || value[i + 1] == '/')) return false;
    if (undef) amp__sb_printf(lines, "#undef %.*s\n", (int)head, spec);
    else amp__sb_printf(lines, "#define %.*s %.*s\n", (int)head, spec, (int)vlen, value);
    return true;
}

/* Whether word (and, for a split form, next) is a macro option: *spec its
 * NAME[=VALUE] part, *undef for -U, *words how many words it takes. */
static bool macro_option(const char *word, const char *next, const char **spec, bool *undef, int *words)
{
    static const struct {
        const char *prefix;
        bool undef;
    } forms[] = {{"--define-macro=", false}, {"--undefine-macro=", true}, {"--define-macro", false},
                 {"--undefine-macro", true}, {"-D", false},              {"-U", true}};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; ++i) {
        size_t k = strlen(forms[i].prefix);
        if (strncmp(word, forms[i].prefix, k)) continue;
        *undef = forms[i].undef;
        if (word[k]) {
            if (forms[i].prefix[1] == '-' && forms[i].prefix[k - 1] != '=') return false; /* --define-macroX */
            *spec = word + k;
            *words = 1;
            return true;
        }
        if (!next) return false;
        *spec = next;
        *words = 2;
        return true;
    }
    return false;
}

amp_status amp__gpu_option_macros(const amp__compile_job *job, amp__compile_job *out, char **owned)
{
    amp_status st;
    char **argv = NULL, *storage = NULL;
    size_t argc = 0;
    *out = *job;
    *owned = NULL;
    const size_t at = job->source ? amp__unit_library_end(job->source) : 0;
    if (!at || !job->options || !job->options[0]) return AMP_OK;
    if ((st = amp__split_options(job->options, 0, 0, &argv, &argc, &storage)) != AMP_OK) return st;
    /* The unit: hipamp's text, the lines (named "<command line>", as the
     * compilers name their options' macros, which the compile log's
     * attribution of a macro knows), the user's source after its own
     * #line; then, after its NUL, the options left. */
    amp__sb unit = {0}, kept = {0};
    amp__sb_put(&unit, job->source, at);
    amp__sb_puts(&unit, "\n#line 1 \"<command line>\"\n");
    const size_t no_lines = unit.n;
    for (size_t i = 0; i < argc; ++i) {
        const char *spec = NULL;
        bool undef = false;
        int words = 1;
        if (macro_option(argv[i], i + 1 < argc ? argv[i + 1] : NULL, &spec, &undef, &words) &&
            macro_line(&unit, spec, undef)) {
            i += (size_t)words - 1;
            continue;
        }
        amp__sb_printf(&kept, "%s%s", kept.n ? " " : "", argv[i]);
    }
    if (unit.n == no_lines) goto done; /* nothing moved */
    amp__sb_puts(&unit, job->source + at);
    const size_t opts_at = unit.n + 1;
    amp__sb_put(&unit, "", 1); /* the unit's NUL, kept */
    if (kept.n) amp__sb_put(&unit, kept.p, kept.n);
    if (unit.oom || kept.oom) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "cannot allocate the translation unit (%zu bytes)", unit.n);
        goto done;
    }
    out->source = unit.p;
    out->options = unit.p + opts_at;
    *owned = unit.p;
    unit.p = NULL;
done:
    free(unit.p);
    free(kept.p);
    free(argv);
    free(storage);
    return st;
}
