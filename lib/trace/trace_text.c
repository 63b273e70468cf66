/* trace_text.c — the words and numbers the trace prints, shared by the JSON
 * writer, the summary and the vendor ranges: copy reasons and directions,
 * cache outcomes, extents as 999x666, and a build's label. */
#include "trace_internal.h"

#include <stdio.h>
#include <string.h>

static const char *const amp__why_names[AMP__WHY_COUNT] = {
    "-", "first use", "stale after refresh", "region list reset", "write-back before copy-in", "synchronize",
    "write-back on refresh/discard", "array init", "amp_array_copy_from_host", "amp_array_copy_to_host",
    "amp_copy", "amp_copy staged through host", "discard avoided"};

const char *amp__copy_why_name(int why) { return why >= 0 && why < AMP__WHY_COUNT ? amp__why_names[why] : "?"; }

const char *amp__dir_short(int dir)
{
    return dir == AMP__H2D ? "H2D" : dir == AMP__D2H ? "D2H" : dir == AMP__D2D ? "D2D" : dir == AMP__H2H ? "H2H" : "?";
}

const char *amp__dir_long(int dir)
{
    return dir == AMP__H2D   ? "host->device"
           : dir == AMP__D2H ? "device->host"
           : dir == AMP__D2D ? "device->device"
           : dir == AMP__H2H ? "host->host"
                             : "?";
}

const char *amp__cache_name(int c)
{
    return c == AMP__BUILD_MEMORY ? "memory" : c == AMP__BUILD_DISK ? "disk" : c == AMP__BUILD_PREBUILT ? "prebuilt" : "miss";
}

void amp__dims(char *out, size_t n, const int32_t *v, int rank)
{
    size_t at = 0;
    out[0] = '\0';
    for (int d = 0; d < rank && at < n; ++d) {
        int w = snprintf(out + at, n - at, d ? "x%d" : "%d", v[d]);
        if (w < 0) break;
        at += (size_t)w;
    }
}

void amp__build_label(const char *source_name, const char *source, size_t len, char *out, size_t n)
{
    const char *name = source_name ? source_name : AMP__SOURCE_NAME;
    const char *slash = strrchr(name, '/');
    if (slash && slash[1]) name = slash + 1;
    char first[96] = "";
    int count = 0;
    static const char *const marks[2] = {"AMP_KERNEL(", "AMP_TILED_KERNEL("};
    const char *s = source ? source : "", *end = s + (source ? len : 0);
    for (const char *p = s; p < end; ++p) {
        if (*p != 'A' || (p > s && amp__ident_char(p[-1]))) continue;
        for (int m = 0; m < 2; ++m) {
            size_t ml = strlen(marks[m]);
            if ((size_t)(end - p) < ml || memcmp(p, marks[m], ml)) continue;
            const char *q = p + ml;
            while (q < end && (*q == ' ' || *q == '\t' || *q == '\n')) ++q;
            const char *id = q;
            while (q < end && amp__ident_char(*q)) ++q;
            if (q > id && ++count == 1) snprintf(first, sizeof first, "%.*s", (int)(q - id), id);
            p = q - 1;
            break;
        }
    }
    if (count > 1) snprintf(out, n, "%s [%s +%d]", name, first, count - 1);
    else if (count == 1) snprintf(out, n, "%s [%s]", name, first);
    else snprintf(out, n, "%s", name);
}
