/* compile_log.c — reading a compiler's log: a kernel parameter type the
 * prelude refused (kernel_parameter<Position, T>) or an argument pack over
 * its size (kernel_parameter_bytes<N>), found in gcc's, clang's or EDG's
 * wording and said on the error's first line. Used by every compile path
 * (lib/core/program.c, lib/gpu/amd_target.c), so it sits with the helpers. */
#include "core.h"
#include "signature.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The type text at t, up to its closing '>' (clang) or ']' (EDG) at depth 0. */
static int amp__type_len(const char *t)
{
    int depth = 0;
    const char *e = t;
    for (; *e && *e != '\n'; ++e) {
        if (*e == '<' || *e == '[' || *e == '(') depth++;
        else if ((*e == '>' || *e == ']' || *e == ')') && depth-- == 0) break;
    }
    while (e > t && e[-1] == ' ') --e;
    return (int)(e - t);
}

bool amp__log_param_refusal(const char *log, long *position, const char **type, int *type_len)
{
    static const char tag[] = "kernel_parameter<";
    for (const char *at = log ? strstr(log, tag) : NULL; at; at = strstr(at + 1, tag)) {
        const char *p = at + strlen(tag);
        char *end = NULL;
        if (*p >= '0' && *p <= '9') { /* clang: kernel_parameter<1, float *> */
            long pos = strtol(p, &end, 10);
            if (*end != ',') continue;
            const char *t = end + 1;
            while (*t == ' ') ++t;
            *position = pos;
            *type = t;
            *type_len = amp__type_len(t);
            return *type_len > 0;
        }
        /* EDG: kernel_parameter<Position, T> [with Position=1, T=float *];
         * the prelude's template parameters are __amp_Position and __amp_T
         * (reserved names, out of the way of a user's -D), older preludes'
         * Position and T. */
        const char *with = strstr(p, "[with "), *nl = strchr(p, '\n');
        if (!with || (nl && with > nl)) continue;
        const char *v = with + strlen("[with ");
        if (!strncmp(v, "__amp_", 6)) v += 6;
        if (strncmp(v, "Position=", 9)) continue;
        v += 9;
        long pos = strtol(v, &end, 10);
        if (end == v || strncmp(end, ", ", 2) != 0) continue;
        const char *t = end + 2;
        if (!strncmp(t, "__amp_", 6)) t += 6;
        if (strncmp(t, "T=", 2)) continue;
        *position = pos;
        *type = t + 2;
        *type_len = amp__type_len(*type);
        return *type_len > 0;
    }
    return false;
}

/* The prelude's refusal of an argument pack over AMP__MAX_PACK bytes: the
 * size, from kernel_parameter_bytes<N> (clang, gcc) or "[with Bytes=NUL]"
 * (EDG), and the kernel's name where the log shows it: the prelude's
 * static_assert that names it (gcc, EDG), the tag type name__amp_kernel in
 * the instantiation (every compiler, hipRTC builds that print no source
 * lines too), or the line with AMP_KERNEL (clang). */
static bool amp__log_pack_refusal(const char *log, long *bytes, char *name, size_t cap)
{
    static const char tag[] = "kernel_parameter_bytes<";
    const char *at = log ? strstr(log, tag) : NULL;
    if (!at) return false;
    const char *p = at + strlen(tag);
    if (*p < '0' || *p > '9') { /* EDG: [with __amp_Bytes=5032UL, ...] (older preludes: Bytes) */
        const char *with = strstr(p, "[with __amp_Bytes="), *old = strstr(p, "[with Bytes=");
        if (!with || (old && old < with)) with = old;
        if (!with) return false;
        p = strchr(with, '=') + 1;
    }
    char *end = NULL;
    *bytes = strtol(p, &end, 10);
    if (end == p) return false;
    name[0] = '\0';
    const char *named = strstr(log, "parameters of kernel '");
    if (named) {
        named += strlen("parameters of kernel '");
        size_t n = strcspn(named, "'\n");
        snprintf(name, cap, "%.*s", (int)(n < cap ? n : cap - 1), named);
        return true;
    }
    /* The prelude's tag type, name__amp_kernel, in the instantiation. */
    for (const char *tagged = strstr(at, "__amp_kernel"); tagged && !name[0]; tagged = strstr(tagged + 1, "__amp_kernel")) {
        const char *id = tagged;
        while (id > log && ((id[-1] >= 'a' && id[-1] <= 'z') || (id[-1] >= 'A' && id[-1] <= 'Z') ||
                            (id[-1] >= '0' && id[-1] <= '9') || id[-1] == '_'))
            --id;
        size_t n = (size_t)(tagged - id);
        if (n && !(n == 4 && !strncmp(id, "name", 4))) snprintf(name, cap, "%.*s", (int)(n < cap ? n : cap - 1), id);
    }
    static const char *const macros[] = {"AMP_KERNEL(", "AMP_TILED_KERNEL("};
    for (const char *q = at; *q && !name[0]; ++q)
        for (size_t m = 0; m < 2 && !name[0]; ++m) {
            size_t ml = strlen(macros[m]);
            if (strncmp(q, macros[m], ml) || (q > log && (q[-1] == '_' || q[-1] == ' '))) continue;
            const char *id = q + ml;
            while (*id == ' ') ++id;
            size_t n = 0;
            while ((id[n] >= 'a' && id[n] <= 'z') || (id[n] >= 'A' && id[n] <= 'Z') || (id[n] >= '0' && id[n] <= '9') ||
                   id[n] == '_')
                ++n;
            if (n && !(n == 4 && !strncmp(id, "name", 4))) snprintf(name, cap, "%.*s", (int)(n < cap ? n : cap - 1), id);
        }
    return true;
}

/* True when line starts with the name of a file that hipamp pastes ahead of
 * the user's source (lib/base/prelude.c's #line names) and a ':' or '('
 * after it: a diagnostic located in hipamp's own text. */
static bool amp__log_in_prelude(const char *line)
{
    static const char *const files[] = {"amp_prelude.hip", "amp_cpu_prelude.hpp", "amp_cpu_device.hpp",
                                        "amp_device_lib.hip", "amp_algorithms_lib.hip"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) {
        size_t n = strlen(files[i]);
        if (!strncmp(line, files[i], n) && (line[n] == ':' || line[n] == '(')) return true;
    }
    return false;
}

/* True when line is located in a header named by an absolute path ending
 * in .h (hipRTC's built-in HIP and clang wrapper headers, the host's system
 * headers, a user's header the CPU accelerator names by its path) or in
 * NVRTC's built-in header. */
static bool amp__log_in_compiler_header(const char *line, size_t len)
{
    if (!strncmp(line, "__nv_nvrtc_builtin_header.h", 27)) return true;
    if (line[0] != '/') return false;
    for (size_t i = 0; i + 2 < len; ++i)
        if (line[i] == '.' && line[i + 1] == 'h' && (line[i + 2] == ':' || line[i + 2] == '(')) return true;
    return false;
}

static bool amp__log_from_options(const char *line)
{
    return !strncmp(line, "<command-line>", 14) || !strncmp(line, "<command line>", 14);
}

static bool amp__log_ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* A macro from the build options (-DN=4) expanded inside text that is not
 * the user's, which then fails to compile. gcc says "<command-line>:
 * error: ..." then "amp_prelude.hip:150:25: note: in expansion of macro
 * 'N'"; clang (hipRTC) "amp_prelude.hip:150:25: error: ..." then
 * "<command line>:1:9: note: expanded from here" over the line "#define N
 * 4" (or "note: expanded from macro 'N'"); quotes are ASCII or, in a UTF-8
 * locale, U+2018/U+2019. Every later error (a static_assert on a pack made
 * huge by -DN=1024, a "refused" parameter type) follows from it, so it is
 * what the first line must say. The macro's name in macro, the location
 * (file:line:column) in where, *vendor when that is a header (mostly the
 * compiler's own) rather than hipamp's prelude. Expansions in the user's
 * source are the user's business and not looked at. EDG (NVRTC) prints no
 * macro notes: there nothing is found. */
static bool amp__log_option_macro(const char *log, char *macro, size_t cap, char *where, size_t wcap, bool *vendor)
{
    static const char *const notes[] = {"note: in expansion of macro ", "note: expanded from macro ",
                                        "note: expanded from here"};
    const char *prev = NULL; /* the previous diagnostic line (not an indented source or caret line) */
    size_t prev_len = 0;
    for (const char *line = log; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        const char *note = NULL;
        size_t which = 0;
        for (; which < 3 && !note; ++which) {
            const char *at = strstr(line, notes[which]);
            if (at && at < line + len) note = at + strlen(notes[which]);
        }
        if (note && prev) {
            const char *site = NULL; /* where the macro was expanded */
            size_t site_len = 0;
            bool in_vendor = false;
            if (amp__log_from_options(prev) &&
                (amp__log_in_prelude(line) || (in_vendor = amp__log_in_compiler_header(line, len)))) { /* gcc */
                site = line;
                site_len = len;
            } else if (amp__log_from_options(line) &&
                       (amp__log_in_prelude(prev) || (in_vendor = amp__log_in_compiler_header(prev, prev_len)))) {
                site = prev; /* clang */
                site_len = prev_len;
            }
            const char *q = note, *end = line + len;
            if (site && which == 3) { /* (one past "expanded from here") */
                /* clang shows the definition on the next line: "#define N 4" */
                q = nl ? strstr(nl + 1, "#define ") : NULL;
                const char *nl2 = q ? strchr(nl + 1, '\n') : NULL;
                if (q && nl2 && q > nl2) q = NULL;
                if (q) {
                    q += strlen("#define ");
                    end = nl2 ? nl2 : q + strlen(q);
                }
            } else if (q) {
                if (!strncmp(q, "\xe2\x80\x98", 3)) q += 3; /* U+2018 */
                else if (*q == '\'' || *q == '`') ++q;
            }
            size_t n = 0;
            while (site && q && q + n < end && amp__log_ident_char(q[n])) ++n;
            if (site && q && n) {
                size_t w = strcspn(site, " \n");
                if (w > site_len) w = site_len;
                if (w && site[w - 1] == ':') --w;
                snprintf(macro, cap, "%.*s", (int)(n < cap ? n : cap - 1), q);
                snprintf(where, wcap, "%.*s", (int)(w < wcap ? w : wcap - 1), site);
                *vendor = in_vendor;
                return true;
            }
        }
        if (len && line[0] != ' ' && line[0] != '\t' && line[0] != '#' && memchr(line, ':', len) &&
            strncmp(line, "In file included from", 21)) {
            prev = line;
            prev_len = len;
        }
        line = nl ? nl + 1 : NULL;
    }
    return false;
}

/* A prelude's refusal of a parameter type names its position inside a
 * template instantiation somewhere in the log, and its refusal of an
 * argument pack its size; say either on the first line. */
void amp__compile_log_summarize(amp_status st)
{
    if (st != AMP_ERROR_COMPILE) return;
    const char *log = amp_last_error();
    long pos, bytes;
    const char *type;
    int type_len;
    char name[128], where[256];
    bool vendor = false;
    if (log && amp__log_option_macro(log, name, sizeof name, where, sizeof where, &vendor)) {
        /* Before the pack and parameter checks: a -D that broke the
         * prelude can make a pack huge (-DN=1024 in an array bound) or a
         * type wrong, and the kernel is not to blame. */
        char *copy = amp__strdup(log);
        if (!copy) return;
        if (vendor)
            amp__fail(st, "the build option's macro '%s' is expanded inside a header (%s) that uses that name "
                      "itself (the GPU compilers' own headers do, for T, F, ...), and breaks it: rename the macro "
                      "(the compiler's message follows)\n%s", name, where, copy);
        else
            amp__fail(st, "the build option's macro '%s' is expanded inside hipamp's own source (%s) and breaks "
                      "it: a name there (of hipamp's device language, or a lowercase local or member) is spelt "
                      "the same; rename the macro (the compiler's message follows)\n%s", name, where, copy);
        free(copy);
        return;
    }
    if (amp__log_pack_refusal(log, &bytes, name, sizeof name)) {
        char *copy = amp__strdup(log);
        if (!copy) return;
        amp__fail(st, "kernel%s%s%s takes %ld bytes of parameters (after the index); hipamp passes at most %d bytes "
                  "to a kernel on every accelerator: pass large data in an array_view (the compiler's message "
                  "follows)\n%s", name[0] ? " '" : "", name, name[0] ? "'" : "", bytes, AMP__MAX_PACK, copy);
        free(copy);
        return;
    }
    if (!amp__log_param_refusal(log, &pos, &type, &type_len)) return;
    char *copy = amp__strdup(log);
    if (!copy) return;
    type = copy + (type - log);
    amp__fail(st, "kernel parameter %ld (counted from 0 after the index) has type '%.*s', which a hipamp kernel "
              "cannot take (see the compiler's message below)\n%s", pos, type_len, type, copy);
    free(copy);
}
