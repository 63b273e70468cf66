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
        /* EDG: kernel_parameter<Position, T> [with Position=1, T=float *] */
        const char *with = strstr(p, "[with Position=");
        const char *nl = strchr(p, '\n');
        if (!with || (nl && with > nl)) continue;
        long pos = strtol(with + strlen("[with Position="), &end, 10);
        if (end == with + strlen("[with Position=") || strncmp(end, ", T=", 4) != 0) continue;
        *position = pos;
        *type = end + 4;
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
    const char *p = at + strlen(tag), *with = strstr(p, "[with Bytes=");
    if (*p < '0' || *p > '9') {
        if (!with) return false;
        p = with + strlen("[with Bytes=");
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
    char name[128];
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
