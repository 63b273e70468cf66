/* env.c — reading the environment: one rule for flags, seconds and sizes,
 * so every AMP_* variable is parsed the same way. Empty counts as unset. A
 * malformed or out-of-range value falls back to the default, and stderr
 * says so once for each variable and value: the variable, its value, what
 * is accepted and the default used ("hipamp: AMP_X="value" is not ...;
 * using the default ..."). In a set-uid, set-gid or file-capability
 * program every variable reads as unset (amp__env). */
#include "core.h"

#include <ctype.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/auxv.h>

static bool amp__env_first_time(const char *name, const char *value);

/* A set-uid, set-gid or file-capability program (the kernel's AT_SECURE)
 * runs with more rights than whoever started it, and its environment is
 * theirs: it must not choose what the library trusts or runs (AMP_CXX,
 * AMP_TRUSTED_USERS, AMP_CACHE_DIR, AMP_CACHE_SHARED, PATH, HOME, ...).
 * There every variable reads as unset, as secure_getenv has it: the
 * defaults. An AMP_ variable so ignored is said once. */
const char *amp__env(const char *name)
{
    const char *v = getenv(name);
    if (v && *v && getauxval(AT_SECURE)) {
        /* Keyed by the empty value, which is never a bad one (unset). */
        if (!strncmp(name, "AMP_", 4) && amp__env_first_time(name, ""))
            fprintf(stderr, "hipamp: %s is ignored: this is a set-uid, set-gid or file-capability program, which "
                    "takes no setting from the environment of whoever started it; using the default\n", name);
        return NULL;
    }
    return v && *v ? v : NULL;
}

/* ------------------------------------------------------ bad values, said */

/* NAME=VALUE pairs already said: a list only ever pushed to (lock-free, so a
 * forked child reading the environment never waits on a lock its parent's
 * other thread held), never freed; it holds one entry per bad value. */
typedef struct amp__env_said {
    struct amp__env_said *next;
    char kv[]; /* NAME '\0' VALUE '\0' */
} amp__env_said;
static _Atomic(amp__env_said *) amp__env_said_list;

/* Whether name=value is said for the first time (true: the caller says it). */
static bool amp__env_first_time(const char *name, const char *value)
{
    size_t nl = strlen(name) + 1, vl = strlen(value) + 1;
    amp__env_said *mine = NULL;
    amp__env_said *head = atomic_load_explicit(&amp__env_said_list, memory_order_acquire);
    for (;;) {
        for (amp__env_said *s = head; s; s = s->next)
            if (!strcmp(s->kv, name) && !strcmp(s->kv + strlen(s->kv) + 1, value)) {
                free(mine);
                return false;
            }
        if (!mine) {
            if (!(mine = malloc(sizeof *mine + nl + vl))) return true; /* said again, rather than never */
            memcpy(mine->kv, name, nl);
            memcpy(mine->kv + nl, value, vl);
        }
        mine->next = head;
        if (atomic_compare_exchange_weak_explicit(&amp__env_said_list, &head, mine, memory_order_acq_rel,
                                                  memory_order_acquire))
            return true;
    }
}

/* "hipamp: NAME="VALUE" is not ACCEPTED; using the default DFLT", once for
 * name=value. VALUE is shown with bytes that are not printable ASCII as
 * \xHH, at most 64 of them. dflt NULL: the caller has a default of its
 * own ("it is ignored"). */
static void amp__env_bad(const char *name, const char *value, const char *accepted, const char *dflt)
{
    if (!amp__env_first_time(name, value)) return;
    char shown[64 * 4 + 4];
    size_t at = 0, i = 0;
    for (; value[i] && i < 64; ++i) {
        unsigned char c = (unsigned char)value[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') shown[at++] = (char)c;
        else at += (size_t)snprintf(shown + at, sizeof shown - at, "\\x%02x", c);
    }
    if (value[i]) at += (size_t)snprintf(shown + at, sizeof shown - at, "...");
    shown[at] = '\0';
    if (dflt)
        fprintf(stderr, "hipamp: %s=\"%s\" is not %s; using the default, %s\n", name, shown, accepted, dflt);
    else
        fprintf(stderr, "hipamp: %s=\"%s\" is not %s; it is ignored, as if %s were unset\n", name, shown, accepted, name);
}

void amp__env_refused(const char *name, const char *where, const char *accepted, const char *dflt)
{
    const char *v = amp__env(name);
    char key[160];
    if (!v) return;
    snprintf(key, sizeof key, "%s %s", name, where);
    if (!amp__env_first_time(key, v)) return;
    fprintf(stderr, "hipamp: %s=\"%.64s%s\" is not %s %s; using the default there, %s\n", name, v,
            strlen(v) > 64 ? "..." : "", accepted, where, dflt);
}

/* A number as the sizes are written: 16K, 64M, 1G where it is a whole
 * number of those, else its digits. */
static const char *amp__env_size_text(char *out, size_t n, unsigned long long v)
{
    static const char units[] = "GMK";
    for (int i = 0; i < 3; ++i) {
        unsigned long long u = 1ULL << (10 * (3 - i));
        if (v && v % u == 0) {
            snprintf(out, n, "%llu%c", v / u, units[i]);
            return out;
        }
    }
    snprintf(out, n, "%llu", v);
    return out;
}

/* A '-' after the blanks strtoul and strtoull skip: they would read " -2"
 * as 2^64 - 2. */
static bool amp__env_negative(const char *v)
{
    while (isspace((unsigned char)*v)) ++v;
    return *v == '-';
}

/* ------------------------------------------------------------- readers */

bool amp__env_flag(const char *name, bool dflt)
{
    const char *v = amp__env(name);
    if (!v) return dflt;
    if (!strcmp(v, "1") || !strcasecmp(v, "on") || !strcasecmp(v, "yes") || !strcasecmp(v, "true")) return true;
    if (!strcmp(v, "0") || !strcasecmp(v, "off") || !strcasecmp(v, "no") || !strcasecmp(v, "false")) return false;
    amp__env_bad(name, v, "a flag (1, on, yes, true; 0, off, no, false)", dflt ? "on" : "off");
    return dflt;
}

int amp__env_word(const char *name, const char *const *words, int n, int dflt)
{
    const char *v = amp__env(name);
    if (!v) return dflt;
    char accepted[256] = "one of";
    for (int i = 0; i < n; ++i) {
        if (!strcasecmp(v, words[i])) return i;
        size_t at = strlen(accepted);
        snprintf(accepted + at, sizeof accepted - at, "%s %s", i ? "," : "", words[i]);
    }
    amp__env_bad(name, v, accepted, words[dflt]);
    return dflt;
}

int amp__env_flag_or_auto(const char *name)
{
    static const char *const words[] = {"auto", "1", "on", "yes", "true", "0", "off", "no", "false"};
    int w = amp__env_word(name, words, (int)(sizeof words / sizeof words[0]), 0);
    return w == 0 ? -1 : w <= 4;
}

unsigned amp__env_uint(const char *name, unsigned dflt, unsigned lo, unsigned hi)
{
    const char *v = amp__env(name);
    if (!v) return dflt;
    char *end = NULL;
    errno = 0;
    unsigned long x = strtoul(v, &end, 10);
    if (errno || end == v || *end || amp__env_negative(v) || x < lo || x > hi) {
        char accepted[96], d[24];
        snprintf(accepted, sizeof accepted, "a whole number in %u..%u", lo, hi);
        snprintf(d, sizeof d, "%u", dflt);
        amp__env_bad(name, v, accepted, dflt >= lo && dflt <= hi ? d : NULL);
        return dflt;
    }
    return (unsigned)x;
}

unsigned amp__env_count(const char *name, unsigned dflt, unsigned max) { return amp__env_uint(name, dflt, 1, max); }

unsigned amp__compile_timeout_s(void)
{
    return amp__env_count("AMP_COMPILE_TIMEOUT", 600u /* a cold compile of a large kernel */, 86400u);
}

unsigned long long amp__env_size(const char *name, unsigned long long dflt, unsigned long long lo,
                                 unsigned long long hi)
{
    const char *s = amp__env(name);
    if (!s) return dflt;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    bool ok = !errno && end != s && !amp__env_negative(s);
    unsigned long long mul = 1;
    if (ok) {
        if (*end == 'k' || *end == 'K') mul = 1ULL << 10;
        else if (*end == 'm' || *end == 'M') mul = 1ULL << 20;
        else if (*end == 'g' || *end == 'G') mul = 1ULL << 30;
        if (mul != 1) end++;
        if (*end == 'i' && mul != 1) end++; /* KiB, MiB */
        if ((*end == 'b' || *end == 'B') && mul != 1) end++;
        ok = !*end && v <= hi / mul && v * mul >= lo && v * mul <= hi;
    }
    if (!ok) {
        char accepted[160], l[32], h[32], d[32];
        snprintf(accepted, sizeof accepted,
                 "a whole number in %s..%s (a K, M or G suffix, also KiB, MiB, GiB, multiplies by 1024, 1024^2, 1024^3)",
                 amp__env_size_text(l, sizeof l, lo), amp__env_size_text(h, sizeof h, hi));
        amp__env_bad(name, s, accepted, dflt >= lo && dflt <= hi ? amp__env_size_text(d, sizeof d, dflt) : NULL);
        return dflt;
    }
    return v * mul;
}
