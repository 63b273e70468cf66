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
 * undef: NAME) stands for, appended to out (NULL: only measured); its
 * length, or 0 where the spec cannot be written as one line with the same
 * meaning (a value that ends in a backslash would join the next line, one
 * holding a comment's start would hide what follows): that option stays
 * the compiler's. */
static size_t macro_line(char *out, const char *spec, bool undef)
{
    const size_t len = strlen(spec);
    const size_t head = macro_head(spec, len);
    if (!head) return 0;
    const char *value = "1";
    size_t vlen = 1;
    if (head < len) {
        if (undef || spec[head] != '=') return 0;
        value = spec + head + 1;
        vlen = len - head - 1;
    }
    if (vlen && value[vlen - 1] == '\\') return 0;
    for (size_t i = 0; i + 1 < vlen; ++i)
        if (value[i] == '/' && (value[i + 1] == '*' || value[i + 1] == '/')) return 0;
    const char *directive = undef ? "#undef " : "#define ";
    const size_t n = strlen(directive) + head + (undef ? 0 : 1 + vlen) + 1;
    if (out) {
        if (undef) sprintf(out, "%s%.*s\n", directive, (int)head, spec);
        else sprintf(out, "%s%.*s %.*s\n", directive, (int)head, spec, (int)vlen, value);
    }
    return n;
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
    char **argv = NULL, *storage = NULL, *buf = NULL;
    size_t argc = 0;
    *out = *job;
    *owned = NULL;
    const size_t at = job->source ? amp__unit_library_end(job->source) : 0;
    if (!at || !job->options || !job->options[0]) return AMP_OK;
    if ((st = amp__split_options(job->options, 0, 0, &argv, &argc, &storage)) != AMP_OK) return st;
    /* Measured first: the unit, the lines, and the options left. */
    static const char head[] = "\n#line 1 \"<command line>\"\n";
    size_t lines = 0, kept = 0, moved = 0;
    for (size_t i = 0; i < argc; ++i) {
        const char *spec = NULL;
        bool undef = false;
        int words = 1;
        size_t n = 0;
        if (macro_option(argv[i], i + 1 < argc ? argv[i + 1] : NULL, &spec, &undef, &words) &&
            (n = macro_line(NULL, spec, undef)) != 0) {
            lines += n;
            moved++;
            i += (size_t)words - 1;
            continue;
        }
        kept += strlen(argv[i]) + 1;
    }
    if (!moved) goto done;
    const size_t src_len = strlen(job->source), total = src_len + sizeof head + lines + kept + 2;
    if (!(buf = malloc(total))) {
        st = amp__fail(AMP_ERROR_OUT_OF_MEMORY, "cannot allocate %zu bytes for the translation unit", total);
        goto done;
    }
    /* The unit: hipamp's text, the lines (named "<command line>", as the
     * compilers name their options' macros, which the compile log's
     * attribution of a macro knows), the user's source after its own
     * #line. */
    char *src = buf, *p = buf;
    memcpy(p, job->source, at);
    p += at;
    memcpy(p, head, sizeof head - 1);
    p += sizeof head - 1;
    char *opts = NULL;
    for (int pass = 0; pass < 2; ++pass) {
        if (pass == 1) {
            memcpy(p, job->source + at, src_len - at + 1);
            p += src_len - at + 1;
            opts = p;
            *p = '\0';
        }
        for (size_t i = 0; i < argc; ++i) {
            const char *spec = NULL;
            bool undef = false;
            int words = 1;
            if (macro_option(argv[i], i + 1 < argc ? argv[i + 1] : NULL, &spec, &undef, &words) &&
                macro_line(NULL, spec, undef) != 0) {
                if (pass == 0) p += macro_line(p, spec, undef);
                i += (size_t)words - 1;
                continue;
            }
            if (pass == 1) p += (size_t)sprintf(p, "%s%s", p > opts ? " " : "", argv[i]);
        }
    }
    out->source = src;
    out->options = opts;
    *owned = buf;
    buf = NULL;
done:
    free(buf);
    free(argv);
    free(storage);
    return st;
}
