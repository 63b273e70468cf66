/* prelude.c — assembles the one translation unit every compiler sees: the
 * backend's prefix (the CPU accelerator's host shims), the common AMP
 * prelude, the device library, then the user's source under a #line that
 * gives it its own name and line numbers. */
#include "core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The GPU text: common prelude and device library, assembled once. */
static pthread_once_t amp__gpu_prelude_once = PTHREAD_ONCE_INIT;
static char *amp__gpu_prelude;

static void amp__gpu_prelude_init(void) { amp__gpu_prelude = amp__prelude_assemble(NULL, "", NULL, NULL); }

const char *amp_prelude_source(void)
{
    pthread_once(&amp__gpu_prelude_once, amp__gpu_prelude_init);
    return amp__gpu_prelude ? amp__gpu_prelude : amp__embedded_prelude;
}

/* A #line marker naming name, with '"' and '\' escaped as C string
 * escapes (a file path may hold either). Returns bytes written, or the
 * bytes needed when out is NULL. */
size_t amp__line_marker(char *out, const char *name)
{
    size_t n = 0;
    const char *head = "\n#line 1 \"";
    for (const char *p = head; *p; ++p, ++n)
        if (out) out[n] = *p;
    for (const char *p = name; *p; ++p) {
        if (*p == '"' || *p == '\\') {
            if (out) out[n] = '\\';
            ++n;
        }
        if (out) out[n] = *p == '\n' ? ' ' : *p;
        ++n;
    }
    for (const char *p = "\"\n"; *p; ++p, ++n)
        if (out) out[n] = *p;
    return n;
}

char *amp__prelude_assemble(const char *prefix, const char *source, const char *source_name, size_t *len)
{
    /* The device library follows the common prelude on every accelerator;
     * amp_cpu_device.hpp is empty outside the CPU accelerator (#ifdef AMP_CPU). */
    const char *parts[5] = {prefix, amp__embedded_prelude, amp__embedded_cpu_device, amp__embedded_device_lib, source};
    const char *names[5] = {"amp_cpu_prelude.hpp", "amp_prelude.hip", "amp_cpu_device.hpp", "amp_device_lib.hip",
                            source_name ? source_name : AMP__SOURCE_NAME};
    const int nparts = (int)(sizeof parts / sizeof parts[0]);
    size_t total = 2;
    for (int i = 0; i < nparts; ++i)
        if (parts[i]) total += amp__line_marker(NULL, names[i]) + strlen(parts[i]);
    char *s = malloc(total);
    if (!s) return NULL;
    size_t n = 0;
    for (int i = 0; i < nparts; ++i) {
        if (!parts[i]) continue;
        n += amp__line_marker(s + n, names[i]);
        size_t k = strlen(parts[i]);
        memcpy(s + n, parts[i], k);
        n += k;
    }
    s[n++] = '\n';
    s[n] = '\0';
    if (len) *len = n;
    return s;
}
