/* stderr_capture.h — what the code between stderr_capture_begin and stderr_capture_end writes to standard error (sent to a file of its own meanwhile), for the tests of the library's messages there (header-only: test_internal links no test support library). */
#ifndef HIPAMP_TEST_STDERR_CAPTURE_H
#define HIPAMP_TEST_STDERR_CAPTURE_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct stderr_capture {
    int fd;    /* the file stderr goes to */
    int saved; /* stderr as it was */
} stderr_capture;

static inline void stderr_capture_begin(stderr_capture *c)
{
    char path[] = "/tmp/hipamp-stderr-XXXXXX";
    c->fd = mkstemp(path);
    cr_assert_geq(c->fd, 0, "mkstemp for stderr");
    unlink(path);
    fflush(stderr);
    c->saved = dup(2);
    cr_assert_eq(dup2(c->fd, 2), 2);
}

/* stderr back as it was; what was written meanwhile in buf (n bytes, NUL
 * terminated, cut to fit), returned. */
static inline const char *stderr_capture_end(stderr_capture *c, char *buf, size_t n)
{
    fflush(stderr);
    cr_assert_eq(dup2(c->saved, 2), 2);
    close(c->saved);
    ssize_t k = pread(c->fd, buf, n - 1, 0);
    close(c->fd);
    buf[k > 0 ? k : 0] = '\0';
    return buf;
}

#endif
