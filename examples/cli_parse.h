/* cli_parse.h — whole-number command-line options, checked whole and in range, for the examples (cg, and the MPI examples through mpi_example.h). */
#ifndef CLI_PARSE_H
#define CLI_PARSE_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

/* s as a whole number in [lo, hi], all of it. */
static inline bool parse_long(const char *s, long lo, long hi, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return false;
    *out = v;
    return true;
}

#endif
