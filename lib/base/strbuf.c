/* strbuf.c — a growable, always NUL-terminated string (amp__sb): the trace's JSON writer, the CPU loop transformation and the backends' cache tags build their text with it; amp__fit_tag puts a tag into a fixed buffer without losing what tells it apart, amp__fit_text a message without losing its end. */
#include "core.h"

#include <stdio.h>
#include <stdlib.h>

void amp__sb_put(amp__sb *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (b->n + n + 1 > cap) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

void amp__sb_puts(amp__sb *b, const char *s) { amp__sb_put(b, s, strlen(s)); }

void amp__sb_printf(amp__sb *b, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof buf) {
        amp__sb_put(b, buf, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->oom = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    amp__sb_put(b, big, (size_t)n);
    free(big);
}

void amp__fit_tag(char *dst, size_t cap, const char *full)
{
    static const char mark[] = ";sha256=";
    size_t n = strlen(full), keep = cap - 1 - (sizeof mark - 1) - 64;
    if (n < cap) {
        memcpy(dst, full, n + 1);
        return;
    }
    uint8_t digest[32] = {0};
    char hex[65];
    amp__sha256 *h = amp__sha256_new();
    if (h) {
        amp__sha256_str(h, full);
        (void)amp__sha256_final(h, digest); /* zeros where it failed: the key built on the tag fails too */
    }
    amp__hex(digest, sizeof digest, hex);
    memcpy(dst, full, keep);
    memcpy(dst + keep, mark, sizeof mark - 1);
    memcpy(dst + keep + sizeof mark - 1, hex, sizeof hex);
}

void amp__fit_text(char *dst, size_t cap, const char *full)
{
    size_t n = strlen(full);
    if (n < cap) {
        memcpy(dst, full, n + 1);
        return;
    }
    char mark[48];
    /* A third of the room for the start, the rest for the end (where a
     * message says what went wrong); neither cut splits a UTF-8 sequence.
     * The mark's room is measured with n, which has as many digits as the
     * count of bytes cut or more. */
    size_t room = cap - 1 - (size_t)snprintf(mark, sizeof mark, " [... %zu bytes cut ...] ", n), head = room / 3,
           tail = room - head;
    while (head && ((unsigned char)full[head] & 0xC0) == 0x80) --head;
    while (tail && ((unsigned char)full[n - tail] & 0xC0) == 0x80) --tail;
    int m = snprintf(mark, sizeof mark, " [... %zu bytes cut ...] ", n - head - tail);
    memcpy(dst, full, head);
    memcpy(dst + head, mark, (size_t)m);
    memcpy(dst + head + (size_t)m, full + n - tail, tail + 1);
}
