/* compile_log.c — reading a compiler's log: a kernel parameter type the
 * prelude refused (kernel_parameter<Position, T>), found in clang's or EDG's
 * wording and said on the error's first line. Used by every compile path
 * (lib/program.c, lib/gpu/amd_target.c), so it sits with the helpers. */
#include "core.h"

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

/* A prelude's refusal of a parameter type names its position inside a
 * template instantiation somewhere in the log; say it on the first line. */
void amp__compile_log_summarize(amp_status st)
{
    if (st != AMP_ERROR_COMPILE) return;
    const char *log = amp_last_error();
    long pos;
    const char *type;
    int type_len;
    if (!amp__log_param_refusal(log, &pos, &type, &type_len)) return;
    char *copy = amp__strdup(log);
    if (!copy) return;
    type = copy + (type - log);
    amp__fail(st, "kernel parameter %ld (counted from 0 after the index) has type '%.*s', which a hipamp kernel "
              "cannot take (see the compiler's message below)\n%s", pos, type_len, type, copy);
    free(copy);
}
