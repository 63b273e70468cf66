/* prelude.c — assembles the one translation unit every compiler sees: the
 * backend's prefix (the CPU accelerator's host shims), the common AMP
 * prelude, the device library, then the user's source under a #line that
 * gives it its own name and line numbers; says whether a GPU build's
 * source names anything of the device library (else it is left out), where
 * in a unit the user's text starts and how many kernels it names. */
#include "core.h"

#include <ctype.h>
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
 * escapes (a file path may hold either) and control bytes written as
 * spaces (a line feed or a lone carriage return would end the directive:
 * g++ then read the rest of the name as code). Returns bytes written, or
 * the bytes needed when out is NULL. */
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
        if (out) out[n] = (unsigned char)*p < 0x20 || *p == 0x7f ? ' ' : *p;
        ++n;
    }
    for (const char *p = "\"\n"; *p; ++p, ++n)
        if (out) out[n] = *p;
    return n;
}

void amp__blank_bom(char *text)
{
    if ((unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB && (unsigned char)text[2] == 0xBF)
        memset(text, ' ', 3);
}

static char *assemble(const char *prefix, bool device_lib, const char *source, const char *source_name, size_t *len)
{
    /* The device library follows the common prelude on every accelerator;
     * amp_cpu_device.hpp is empty outside the CPU accelerator (#ifdef AMP_CPU). */
    const char *parts[5] = {prefix, amp__embedded_prelude, device_lib ? amp__embedded_cpu_device : NULL,
                            device_lib ? amp__embedded_device_lib : NULL, source};
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
        s[n + k] = '\0';
        if (i == nparts - 1) amp__blank_bom(s + n);
        n += k;
    }
    s[n++] = '\n';
    s[n] = '\0';
    if (len) *len = n;
    return s;
}

char *amp__prelude_assemble(const char *prefix, const char *source, const char *source_name, size_t *len)
{
    return assemble(prefix, true, source, source_name, len);
}

char *amp__prelude_assemble_lean(const char *source, const char *source_name, size_t *len)
{
    return assemble(NULL, false, source, source_name, len);
}

/* ------------------------------------------------- names in a kernel's text */

/* The next identifier token of text[*at, len): a run of identifier
 * characters after none, not starting with a digit (a number's letters are
 * not a name). Its start in *at, its length in *n; false at the end. */
static bool next_ident(const char *text, size_t len, size_t *at, size_t *n)
{
    for (size_t i = *at; i < len; ++i) {
        if (!amp__ident_char(text[i]) || (text[i] >= '0' && text[i] <= '9') || (i > 0 && amp__ident_char(text[i - 1])))
            continue;
        size_t k = 1;
        while (i + k < len && amp__ident_char(text[i + k])) ++k;
        *at = i;
        *n = k;
        return true;
    }
    return false;
}

/* A vendor vector name: [make_](u)char|short|int|long|longlong, float,
 * double, half, with 1-4 after it (float4, make_uint2, ulonglong3). The
 * device library makes them macros for amp::vec; without it NVRTC's and
 * hipRTC's own types of those names would compile with another layout, so
 * these must bring it in, never be left to the retry. */
static bool vendor_vector_name(const char *p, size_t n)
{
    static const char *const bases[] = {"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                                        "longlong", "ulonglong", "float", "double", "half", NULL};
    if (n > 5 && !strncmp(p, "make_", 5)) {
        p += 5;
        n -= 5;
    }
    if (n < 2 || p[n - 1] < '1' || p[n - 1] > '4') return false;
    for (size_t i = 0; bases[i]; ++i)
        if (strlen(bases[i]) == n - 1 && !strncmp(p, bases[i], n - 1)) return true;
    return false;
}

/* Names that only the device library declares (docs/device-language.md
 * lists them): C++ AMP's short vectors and their namespaces, its atomics,
 * math namespaces and classification macros. A name missing here costs a
 * failed compile and a retry with the library, not a wrong program. */
static bool device_lib_name(const char *p, size_t n)
{
    static const char *const names[] = {
        "vec", "norm", "unorm", "short_vector", "short_vector_traits", "graphics", "vendor", "uint",
        "precise_math", "fast_math", "direct3d", "FP_NAN", "FP_INFINITE", "FP_ZERO", "FP_SUBNORMAL", "FP_NORMAL",
        "AMP_DEVICE_LIB_INCLUDED", NULL};
    static const char *const prefixes[] = {"atomic_", "int_", "uint_", "float_", "double_", "norm_", "unorm_", NULL};
    for (size_t i = 0; names[i]; ++i)
        if (strlen(names[i]) == n && !strncmp(p, names[i], n)) return true;
    for (size_t i = 0; prefixes[i]; ++i) {
        size_t k = strlen(prefixes[i]);
        if (n > k && !strncmp(p, prefixes[i], k)) return true;
    }
    return vendor_vector_name(p, n);
}

bool amp__device_lib_wanted(const char *text, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; text && next_ident(text, len, &i, &n); i += n)
        if (device_lib_name(text + i, n)) return true;
    return false;
}

amp_status amp__compile_on_demand(bool lean, const char *prefix, const char *source, const char *source_name,
                                  amp__unit_compile_fn fn, void *ctx)
{
    for (;; lean = false) {
        size_t len = 0;
        char *unit = lean ? amp__prelude_assemble_lean(source, source_name, &len)
                          : amp__prelude_assemble(prefix, source, source_name, &len);
        if (!unit) return amp__fail(AMP_ERROR_OUT_OF_MEMORY, "cannot allocate the translation unit of %s",
                                    source_name ? source_name : AMP__SOURCE_NAME);
        amp_status st = fn(ctx, unit, len);
        free(unit);
        if (!(lean && st == AMP_ERROR_COMPILE)) return st;
    }
}

size_t amp__unit_library_end(const char *unit)
{
    const char *pre = strstr(unit, amp__embedded_prelude);
    if (!pre) return 0;
    const char *end = pre + strlen(amp__embedded_prelude);
    const char *lib = amp__embedded_device_lib[0] ? strstr(end, amp__embedded_device_lib) : NULL;
    if (lib) end = lib + strlen(amp__embedded_device_lib);
    return (size_t)(end - unit);
}

static bool kernel_macro(const char *p, size_t n)
{
    return (n == 10 && !memcmp(p, "AMP_KERNEL", 10)) || (n == 16 && !memcmp(p, "AMP_TILED_KERNEL", 16));
}

int amp__kernel_macro_count(const char *text, size_t len, int cap)
{
    int count = 0;
    size_t n = 0;
    for (size_t i = 0; count < cap && next_ident(text, len, &i, &n); i += n)
        if (kernel_macro(text + i, n)) ++count;
    return count;
}

bool amp__kernel_macro_defines(const char *text, size_t len, const char *name, size_t name_len)
{
    size_t n = 0;
    for (size_t i = 0; text && next_ident(text, len, &i, &n); i += n) {
        if (!kernel_macro(text + i, n)) continue;
        size_t j = i + n;
        while (j < len && isspace((unsigned char)text[j])) ++j;
        if (j >= len || text[j] != '(') continue;
        size_t start = j + 1, k = 0;
        while (start < len && isspace((unsigned char)text[start])) ++start;
        size_t at = start;
        if (!next_ident(text, len, &at, &k) || at != start || k != name_len ||
            memcmp(text + at, name, name_len))
            continue;
        for (at += k; at < len && isspace((unsigned char)text[at]);) ++at;
        if (at < len && text[at] == ',') return true;
    }
    return false;
}
