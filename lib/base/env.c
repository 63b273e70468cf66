/* env.c — reading the environment: one rule for flags, seconds and sizes,
 * so every AMP_* variable is parsed the same way (empty counts as unset,
 * malformed values fall back to the default). */
#include "core.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *amp__env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

bool amp__env_flag(const char *name, bool dflt)
{
    const char *v = amp__env(name);
    if (!v) return dflt;
    if (!strcmp(v, "1") || !strcasecmp(v, "on") || !strcasecmp(v, "yes") || !strcasecmp(v, "true")) return true;
    if (!strcmp(v, "0") || !strcasecmp(v, "off") || !strcasecmp(v, "no") || !strcasecmp(v, "false")) return false;
    return dflt;
}

unsigned amp__env_uint(const char *name, unsigned dflt, unsigned lo, unsigned hi)
{
    const char *v = amp__env(name);
    if (!v) return dflt;
    char *end = NULL;
    errno = 0;
    unsigned long x = strtoul(v, &end, 10);
    if (errno || end == v || *end || v[0] == '-' || x < lo || x > hi) return dflt;
    return (unsigned)x;
}

unsigned amp__env_count(const char *name, unsigned dflt, unsigned max) { return amp__env_uint(name, dflt, 1, max); }

unsigned long long amp__env_size(const char *name, unsigned long long dflt, unsigned long long lo,
                                 unsigned long long hi)
{
    const char *s = amp__env(name);
    if (!s) return dflt;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || s[0] == '-') return dflt;
    unsigned long long mul = 1;
    if (*end == 'k' || *end == 'K') mul = 1ULL << 10;
    else if (*end == 'm' || *end == 'M') mul = 1ULL << 20;
    else if (*end == 'g' || *end == 'G') mul = 1ULL << 30;
    if (mul != 1) end++;
    if (*end == 'i' && mul != 1) end++; /* KiB, MiB */
    if ((*end == 'b' || *end == 'B') && mul != 1) end++;
    if (*end || v > hi / mul || v * mul < lo || v * mul > hi) return dflt;
    return v * mul;
}
