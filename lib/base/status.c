/* status.c — status names and meanings (from AMP_STATUS_LIST), the library
 * version, and each thread's last error message. */
#include "core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

const char *amp_version(void) { return HIPAMP_VERSION_STRING; }

/* ------------------------------------------------------------ messages
 * A thread's message lives in a heap buffer made on its first failure, so a
 * thread that never fails costs two pointers of TLS. A new message is
 * written into the thread's other buffer (the spare, grown when too small),
 * never over the current one, which an argument may point into; the two
 * then swap, so a thread failing in a loop allocates nothing. Both are
 * freed when the thread exits (a key destructor). When a buffer cannot be
 * allocated, the message goes to a small static-size fallback, truncated. */

#define AMP__ERROR_MAX (1u << 20)
#define AMP__ERROR_FALLBACK 256

typedef struct amp__errbuf {
    size_t cap;
    char text[];
} amp__errbuf;

static _Thread_local amp__errbuf *amp__err;
static _Thread_local amp__errbuf *amp__err_spare;
static _Thread_local char amp__err_fallback[AMP__ERROR_FALLBACK];
static _Thread_local bool amp__err_in_fallback;
static pthread_key_t amp__err_key;
static pthread_once_t amp__err_once = PTHREAD_ONCE_INIT;

/* At the thread's exit. The pointer goes too: a key destructor of the
 * program's that runs after this one may still fail a call, which must
 * then start a new buffer, not write into this freed one. */
static void amp__err_free(void *p)
{
    if (amp__err == p) amp__err = NULL;
    free(p);
    free(amp__err_spare);
    amp__err_spare = NULL;
}
static void amp__err_init(void) { (void)pthread_key_create(&amp__err_key, amp__err_free); }

const char *amp_last_error(void)
{
    if (amp__err_in_fallback) return amp__err_fallback;
    return amp__err ? amp__err->text : "";
}

/* Make b (the spare, written) the thread's message; the one before
 * becomes the spare. */
static void amp__err_install(amp__errbuf *b)
{
    pthread_once(&amp__err_once, amp__err_init);
    (void)pthread_setspecific(amp__err_key, b);
    amp__err_spare = amp__err;
    amp__err = b;
    amp__err_in_fallback = false;
}

/* The new message is always formatted into the other buffer, never the
 * current one: an argument may be amp_last_error() itself (a message that
 * wraps the one before), which growing the buffer in place freed and
 * writing over it garbled. */
amp_status amp__failv(amp_status s, const char *fmt, va_list ap)
{
    static const char note[] = "\n[message truncated]";
    va_list again;
    va_copy(again, ap);
    char probe[1];
    int n = vsnprintf(probe, sizeof probe, fmt, ap);
    size_t need = n < 0 ? 1 : (size_t)n + 1;
    if (need > AMP__ERROR_MAX) need = AMP__ERROR_MAX;
    size_t cap = 512;
    while (cap < need) cap *= 2;
    amp__errbuf *b = amp__err_spare;
    if (!b || b->cap < cap) {
        amp__err_spare = NULL;
        free(b);
        if ((b = malloc(sizeof *b + cap))) b->cap = cap;
    }
    if (b) {
        vsnprintf(b->text, need, fmt, again);
        if (n >= 0 && (size_t)n + 1 > need) memcpy(b->text + need - sizeof note, note, sizeof note);
        amp__err_install(b);
    } else {
        char text[AMP__ERROR_FALLBACK]; /* the fallback may be an argument too */
        vsnprintf(text, sizeof text, fmt, again);
        memcpy(amp__err_fallback, text, sizeof text);
        amp__err_in_fallback = true;
    }
    va_end(again);
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

char *amp__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

void *amp__calloc_lines(size_t size)
{
    size_t n = (size + 63) / 64 * 64;
    void *p = aligned_alloc(64, n ? n : 64);
    if (p) memset(p, 0, n ? n : 64);
    return p;
}
