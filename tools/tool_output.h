/* tool_output.h — what hipamp-embed and hipamp-compile share about their
 * files: an input read whole (a regular file without NUL bytes), and
 * outputs written whole or not at all, never through what is at their name
 * (a symbolic link is replaced, not followed; a device, FIFO or directory is
 * refused) and never over an input or another output of the same run. */
#ifndef HIPAMP_TOOL_OUTPUT_H
#define HIPAMP_TOOL_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* An output: standard output ("-"), or a temporary file beside dest,
 * renamed over it by tool_out_close. */
typedef struct tool_out {
    const char *prog; /* for messages */
    const char *dest; /* NULL: standard output */
    char *tmp;        /* malloc'ed temporary path, or NULL */
    FILE *f;
} tool_out;

/* Whether dest ("-": standard output, always fine) may be written by this
 * run: false, with a message on stderr, when something other than a regular
 * file or a symbolic link is there (a device such as /dev/full, a FIFO, a
 * directory), when it is one of the inputs (same device and inode, whatever
 * the names), or when it is the same place as one of the other outputs. */
bool tool_out_allowed(const char *prog, const char *dest, const char *const *inputs, size_t ninputs,
                      const char *const *others, size_t nothers);
/* Open an output (dest NULL or "-": standard output). false after a message. */
bool tool_out_open(tool_out *o, const char *prog, const char *dest);
/* ok: everything was written; flush, close and rename (failures are
 * reported). Not ok: the temporary file is removed. Returns whether the
 * output is now in place. */
bool tool_out_close(tool_out *o, bool ok);

/* The whole of the regular file at path, NUL-terminated (*size bytes before
 * the terminator), or NULL after a message: it cannot be read, is not a
 * regular file, or contains a NUL byte (a kernel source is text, and
 * amp_program_build would stop at it). */
char *tool_read_source(const char *prog, const char *path, size_t *size);

#endif
