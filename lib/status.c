/* status.c — status names, the thread-local error message, and small shared
 * utilities (environment, hashing, clock) used across the library. */
#include "core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define AMP__ERROR_CAP 65536

static _Thread_local char amp__error_buf[AMP__ERROR_CAP];

const char *amp_status_name(amp_status s)
{
    switch (s) {
#define AMP__STATUS_NAME(name, value, text) \
    case name: return #name;
        AMP_STATUS_LIST(AMP__STATUS_NAME)
#undef AMP__STATUS_NAME
    }
    return "AMP_STATUS_UNKNOWN";
}

const char *amp_status_describe(amp_status s)
{
    switch (s) {
#define AMP__STATUS_TEXT(name, value, text) \
    case name: return text;
        AMP_STATUS_LIST(AMP__STATUS_TEXT)
#undef AMP__STATUS_TEXT
    }
    return "unknown status";
}

const char *amp_last_error(void) { return amp__error_buf; }

const char *amp_version(void) { return HIPAMP_VERSION_STRING; }

static void amp__mark_truncated(void)
{
    static const char note[] = "\n[message truncated]";
    memcpy(amp__error_buf + AMP__ERROR_CAP - sizeof note, note, sizeof note);
}

amp_status amp__failv(amp_status s, const char *fmt, va_list ap)
{
    int n = vsnprintf(amp__error_buf, AMP__ERROR_CAP, fmt, ap);
    if (n >= AMP__ERROR_CAP) amp__mark_truncated();
    return s;
}

amp_status amp__fail(amp_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    amp__failv(s, fmt, ap);
    va_end(ap);
    return s;
}

void amp__append_error(const char *fmt, ...)
{
    size_t len = strlen(amp__error_buf);
    if (len + 1 >= AMP__ERROR_CAP) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(amp__error_buf + len, AMP__ERROR_CAP - len, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n >= AMP__ERROR_CAP - len) amp__mark_truncated();
}

const char *amp__env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

bool amp__env_flag(const char *name)
{
    const char *v = amp__env(name);
    if (!v) return false;
    return !strcmp(v, "1") || !strcasecmp(v, "on") || !strcasecmp(v, "yes") || !strcasecmp(v, "true");
}

uint64_t amp__fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

uint64_t amp__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

char *amp__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}
